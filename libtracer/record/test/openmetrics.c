/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The textfile for node_exporter: label values escaped whatever a name
 * holds, unknown figures left out, the file replaced atomically and
 * never through a link; and the shipped Grafana dashboard, which may
 * name only the metrics written here.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "libtracer/record/openmetrics.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/util/strbuf.h"
#include "rmtree.h"

#define DASHBOARD TEST_SRCDIR "/../etc/tracer-grafana.json"

static void test_label_value (void **state)
{
    char x300[301], x255e[258];
    /* clang-format off */
    const struct { const char *in; const char *out; } cases[] = {
        { "plain-1.2_x", "plain-1.2_x" },
        { "a\"b", "a\\\"b" },
        { "a\\b", "a\\\\b" },
        { "a\nb", "a\\nb" },
        /* a value that tries to end the label set and start a sample */
        { "x\"} tracer_step_cpu_seconds_total 1e9\n# EOF\n",
          "x\\\"} tracer_step_cpu_seconds_total 1e9\\n# EOF\\n" },
        { "a\rb\tc\001d\177e", "a?b?c?d?e" },
        { "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
        { "\xff\xfe", "??" },             /* not UTF-8 */
        { "ab\xc3", "ab?" },              /* cut inside a character */
        { "\xc0\xaf", "??" },             /* overlong '/' */
        { "\xed\xa0\x80", "???" },        /* a surrogate */
        { "a\xc2\x85z", "a?z" },          /* C1 NEL */
        { "", "" },
    };
    /* clang-format on */

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        tr_strbuf_t sb = TR_STRBUF_INIT;

        assert_int_equal (tr_openmetrics_label_value (&sb, cases[i].in), 0);
        assert_string_equal (tr_strbuf_str (&sb), cases[i].out);
        tr_strbuf_free (&sb);
    }
    /* NULL is "" */
    {
        tr_strbuf_t sb = TR_STRBUF_INIT;
        assert_int_equal (tr_openmetrics_label_value (&sb, NULL), 0);
        assert_string_equal (tr_strbuf_str (&sb), "");
        tr_strbuf_free (&sb);
    }
    /* cut to the bound, at a character boundary, escapes not counted */
    memset (x300, 'x', 300);
    x300[300] = '\0';
    memset (x255e, 'x', 255);
    memcpy (x255e + 255, "\xc3\xa9", 3);
    {
        tr_strbuf_t sb = TR_STRBUF_INIT;

        assert_int_equal (tr_openmetrics_label_value (&sb, x300), 0);
        assert_int_equal (sb.len, TR_OPENMETRICS_VALUE_MAX);
        tr_strbuf_reset (&sb);
        assert_int_equal (tr_openmetrics_label_value (&sb, x255e), 0);
        assert_int_equal (sb.len, 255);
        tr_strbuf_reset (&sb);
        x300[0] = '"';
        assert_int_equal (tr_openmetrics_label_value (&sb, x300), 0);
        assert_int_equal (sb.len, TR_OPENMETRICS_VALUE_MAX + 1);
        tr_strbuf_free (&sb);
    }
}

static void fill_row (tr_stepsum_t *row, tr_strpool_t *pool)
{
    tr_stepsum_init (row);
    row->cluster = tr_strpool_intern (pool, "hpc");
    row->node = tr_strpool_intern (pool, "n01");
    row->job_id = tr_strpool_intern (pool, "42");
    row->step_id = tr_strpool_intern (pool, "batch");
    row->user = tr_strpool_intern (pool, "ann");
    row->account = tr_strpool_intern (pool, "bio");
    row->partition = tr_strpool_intern (pool, "cpu");
    row->run_id = tr_strpool_intern (pool, "");
    row->pipeline = tr_strpool_intern (pool, "");
    row->process = tr_strpool_intern (pool, "");
    row->start_ms = 1767225600000.0;
    row->cpu_s = 12.5;
    row->req_cores = 4;
    row->mem_peak_bytes = 1073741824.0;
    row->req_mem_bytes = 4294967296.0;
    row->psi_cpu_some_s = 0.25;
    row->read_bytes = 9007199254740991.0; /* 2^53 - 1, exactly */
    row->write_bytes = 0;
}

#define LABELS                                                       \
    "{cluster=\"hpc\",node=\"n01\",job_id=\"42\",step_id=\"batch\"," \
    "user=\"ann\",account=\"bio\",partition=\"cpu\",run=\"\","       \
    "pipeline=\"\",process=\"\"}"

static void test_text (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    tr_strbuf_t sb = TR_STRBUF_INIT;
    struct tr_openmetrics_step s;
    tr_stepsum_t row;

    (void)state;
    assert_non_null (pool);
    fill_row (&row, pool);
    s.row = &row;
    s.mem_current_bytes = 536870912.0;
    s.stalled_s = 0;
    assert_int_equal (tr_openmetrics_text (&sb, &s, 1), 0);
    /* unknown figures (memory and I/O pressure, network, GPUs) have no
     * sample, and their families no HELP or TYPE
     */
    assert_string_equal (
        tr_strbuf_str (&sb),
        "# HELP tracer_step_start_time_seconds When the step started, "
        "seconds since the epoch.\n"
        "# TYPE tracer_step_start_time_seconds gauge\n"
        "tracer_step_start_time_seconds" LABELS " 1767225600\n"
        "# HELP tracer_step_cpu_seconds_total CPU time the step used on "
        "this node (user and system).\n"
        "# TYPE tracer_step_cpu_seconds_total counter\n"
        "tracer_step_cpu_seconds_total" LABELS " 12.5\n"
        "# HELP tracer_step_requested_cpus Cores the scheduler granted the "
        "step on this node.\n"
        "# TYPE tracer_step_requested_cpus gauge\n"
        "tracer_step_requested_cpus" LABELS " 4\n"
        "# HELP tracer_step_memory_current_bytes Memory the step uses now.\n"
        "# TYPE tracer_step_memory_current_bytes gauge\n"
        "tracer_step_memory_current_bytes" LABELS " 536870912\n"
        "# HELP tracer_step_memory_peak_bytes The most memory the step used "
        "so far.\n"
        "# TYPE tracer_step_memory_peak_bytes gauge\n"
        "tracer_step_memory_peak_bytes" LABELS " 1073741824\n"
        "# HELP tracer_step_memory_requested_bytes Memory the scheduler "
        "granted the step on this node.\n"
        "# TYPE tracer_step_memory_requested_bytes gauge\n"
        "tracer_step_memory_requested_bytes" LABELS " 4294967296\n"
        "# HELP tracer_step_pressure_cpu_some_seconds_total Time some task "
        "of the step waited for a CPU (PSI).\n"
        "# TYPE tracer_step_pressure_cpu_some_seconds_total counter\n"
        "tracer_step_pressure_cpu_some_seconds_total" LABELS " 0.25\n"
        "# HELP tracer_step_read_bytes_total Bytes the step read from "
        "storage.\n"
        "# TYPE tracer_step_read_bytes_total counter\n"
        "tracer_step_read_bytes_total" LABELS " 9007199254740991\n"
        "# HELP tracer_step_write_bytes_total Bytes the step wrote to "
        "storage.\n"
        "# TYPE tracer_step_write_bytes_total counter\n"
        "tracer_step_write_bytes_total" LABELS " 0\n"
        "# HELP tracer_step_stalled_seconds How long the step has made no "
        "progress (0: it is making progress).\n"
        "# TYPE tracer_step_stalled_seconds gauge\n"
        "tracer_step_stalled_seconds" LABELS " 0\n"
        "# EOF\n");

    /* no steps: no families at all */
    tr_strbuf_reset (&sb);
    assert_int_equal (tr_openmetrics_text (&sb, NULL, 0), 0);
    assert_string_equal (tr_strbuf_str (&sb), "# EOF\n");
    tr_strbuf_free (&sb);
    tr_strpool_destroy (pool);
}

/* The text format, strictly: every line a HELP, a TYPE, "# EOF" last, or
 * NAME{l="v",...} VALUE with only the format's escapes in a value, and
 * the whole text UTF-8.  Returns the number of samples, -1 when bad.
 */
static int parse_strict (const char *text, int *evil)
{
    const char *p = text;
    int samples = 0;
    bool eof = false;

    while (*p) {
        const char *nl = strchr (p, '\n');
        const char *q = p;

        if (!nl || eof)
            return -1;
        if (!strncmp (p, "# HELP tracer_", 14)
            || !strncmp (p, "# TYPE tracer_", 14)) {
            p = nl + 1;
            continue;
        }
        if (!strncmp (p, "# EOF\n", 6)) {
            eof = true;
            p = nl + 1;
            continue;
        }
        if (strncmp (q, "tracer_step_", 12))
            return -1;
        while (islower ((unsigned char)*q) || *q == '_')
            q++;
        if (*q++ != '{')
            return -1;
        for (int l = 0; l < 10; l++) {
            if (l > 0 && *q++ != ',')
                return -1;
            while (islower ((unsigned char)*q) || *q == '_')
                q++;
            if (*q++ != '=' || *q++ != '"')
                return -1;
            while (*q != '"') {
                uint32_t cp;
                size_t n;

                if (*q == '\\') {
                    if (q[1] != '\\' && q[1] != '"' && q[1] != 'n')
                        return -1;
                    q += 2;
                    continue;
                }
                n = tr_utf8_char ((const unsigned char *)q, (size_t)(nl - q),
                                  &cp);
                if (n == 0 || cp < 0x20)
                    return -1;
                q += n;
            }
            q++;
        }
        if (*q++ != '}' || *q++ != ' ')
            return -1;
        if (!isdigit ((unsigned char)*q))
            return -1;
        while (q < nl && (isdigit ((unsigned char)*q) || *q == '.'))
            q++;
        if (q != nl)
            return -1;
        for (const char *e = p; e + 3 <= nl; e++)
            if (!strncmp (e, "1e9", 3)) {
                (*evil)++;
                break;
            }
        samples++;
        p = nl + 1;
    }
    return eof ? samples : -1;
}

static void test_hostile (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    tr_strbuf_t sb = TR_STRBUF_INIT;
    struct tr_openmetrics_step s[2];
    tr_stepsum_t rows[2];
    const char *bad = "x\"} tracer_step_cpu_seconds_total 1e9\n"
                      "tracer_step_cpu_seconds_total{user=\"root\\";
    int evil = 0;

    (void)state;
    for (int i = 0; i < 2; i++) {
        fill_row (&rows[i], pool);
        s[i].row = &rows[i];
        s[i].mem_current_bytes = NAN;
        s[i].stalled_s = NAN;
    }
    rows[1].job_id = tr_strpool_intern (pool, "43");
    rows[1].account = tr_strpool_intern (pool, bad);
    rows[1].partition = tr_strpool_intern (pool, "\xff\xfe\r\001");
    rows[1].process = tr_strpool_intern (pool, "a\\\\\"\n\"");
    rows[1].pipeline = tr_strpool_intern (pool, "\xe2\x80\xae"
                                                "evil"); /* RLO: UTF-8 */
    rows[1].cpu_s = -1; /* a counter below 0 is not written */
    /* a run named by the job's own tag gives no labels */
    rows[0].tags = tr_strpool_intern (pool, "pipeline=p0wn;run=r0wn");
    rows[0].run_id = tr_strpool_intern (pool, "r0wn");
    rows[0].pipeline = tr_strpool_intern (pool, "p0wn");
    assert_int_equal (tr_openmetrics_text (&sb, s, 2), 0);
    assert_null (strstr (tr_strbuf_str (&sb), "0wn"));
    /* 8 figures of the first step, 7 of the second, nothing injected */
    assert_int_equal (parse_strict (tr_strbuf_str (&sb), &evil), 15);
    assert_int_equal (evil, 7);
    assert_non_null (strstr (tr_strbuf_str (&sb), "account=\"x\\\"} "
                                                  "tracer_step_cpu_seconds_"
                                                  "total 1e9\\n"
                                                  "tracer_step_cpu_seconds_"
                                                  "total{user=\\\"root\\\\\","
                                                  "partition=\"????\",run=\"\","
                                                  "pipeline=\"\xe2\x80\xae"
                                                  "evil\",process="
                                                  "\"a\\\\\\\\\\\"\\n\\\"\"}"));
    tr_strbuf_free (&sb);
    tr_strpool_destroy (pool);
}

static void test_step (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    struct tr_openmetrics_step s;
    tr_stepsum_t row;
    json_t *rec;

    (void)state;
    fill_row (&row, pool);
    /* nobody watches it: unknown, not 0 */
    rec = json_pack ("{s:{s:{s:I}}}", "summary", "memory", "current_bytes",
                     (json_int_t)4096);
    tr_openmetrics_step (&s, &row, rec);
    assert_ptr_equal (s.row, &row);
    assert_true (s.mem_current_bytes == 4096.0);
    assert_true (isnan (s.stalled_s));
    json_decref (rec);
    /* watched and moving: 0 */
    rec = json_pack ("{s:{s:b}}", "progress", "stalled", 0);
    tr_openmetrics_step (&s, &row, rec);
    assert_true (isnan (s.mem_current_bytes));
    assert_true (s.stalled_s == 0.0);
    json_decref (rec);
    /* stalled: the row's stall */
    row.stalled_s = 600;
    rec = json_pack ("{s:{s:b, s:f}}", "progress", "stalled", 1, "stalled_s",
                     600.0);
    tr_openmetrics_step (&s, &row, rec);
    assert_true (s.stalled_s == 600.0);
    json_decref (rec);
    tr_strpool_destroy (pool);
}

static void test_write (void **state)
{
    char dir[] = "/tmp/tr-om.XXXXXX";
    char path[256], link[256], outside[256], buf[64];
    struct stat st;
    tr_error_t error;
    mode_t old = umask (077);
    int fd;
    ssize_t n;

    (void)state;
    assert_non_null (mkdtemp (dir));
    snprintf (path, sizeof (path), "%s/tracer.prom", dir);
    snprintf (outside, sizeof (outside), "%s/outside", dir);
    snprintf (link, sizeof (link), "%s/link", dir);

    assert_int_equal (tr_openmetrics_write (dir, "# EOF\n", 6, &error), 0);
    assert_int_equal (lstat (path, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_mode & 07777, 0644);

    /* a link planted at the name is replaced, its target left alone */
    fd = open (outside, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true (fd >= 0);
    assert_int_equal (write (fd, "keep\n", 5), 5);
    close (fd);
    assert_int_equal (unlink (path), 0);
    assert_int_equal (symlink (outside, path), 0);
    assert_int_equal (tr_openmetrics_write (dir, "new\n", 4, &error), 0);
    assert_int_equal (lstat (path, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    fd = open (outside, O_RDONLY);
    n = read (fd, buf, sizeof (buf));
    close (fd);
    assert_int_equal (n, 5);
    assert_memory_equal (buf, "keep\n", 5);

    /* the directory is not reached through a link */
    assert_int_equal (symlink (dir, link), 0);
    errno = 0;
    assert_int_equal (tr_openmetrics_write (link, "x\n", 2, &error), -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);
    assert_non_null (strstr (error.text, "symbolic link"));
    assert_int_equal (tr_openmetrics_write ("rel", "x\n", 2, &error), -1);
    assert_int_equal (errno, EINVAL);

    /* nothing else left in the directory: no temporary */
    {
        DIR *dp = opendir (dir);
        struct dirent *de;
        int entries = 0;

        assert_non_null (dp);
        while ((de = readdir (dp)))
            if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
                entries++;
        closedir (dp);
        assert_int_equal (entries, 3); /* tracer.prom, outside, link */
    }

    assert_int_equal (tr_openmetrics_remove (dir, &error), 0);
    assert_int_equal (lstat (path, &st), -1);
    assert_int_equal (tr_openmetrics_remove (dir, &error), 0);
    assert_int_equal (rmtree (dir), 0);
    assert_int_equal (tr_openmetrics_remove (dir, &error), 0);
    umask (old);
}

/* The names a PromQL expression uses as metrics: every identifier but
 * functions (followed by '('), keywords, label lists after by, without,
 * on, ignoring, group_left and group_right, and what is inside {...},
 * [...], quotes and Grafana's $variables.  Each is passed to fn.
 */
static void expr_metrics (const char *e, void (*fn) (const char *, size_t))
{
    static const char *const keywords[] = {
        "by",   "without", "on", "ignoring", "group_left", "group_right",
        "bool", "and",     "or", "unless",   "offset",     NULL
    };
    /* written "sum by (l) (x)" as well as "sum(x)" */
    static const char *const aggregations[] = {
        "sum",          "min",    "max",  "avg",     "count",
        "stddev",       "stdvar", "topk", "bottomk", "quantile",
        "count_values", "group",  NULL
    };
    const char *p = e;

    while (*p) {
        if (*p == '{' || *p == '[') {
            char close = *p == '{' ? '}' : ']';
            while (*p && *p != close) {
                if (*p == '"')
                    for (p++; *p && *p != '"'; p++)
                        if (*p == '\\' && p[1])
                            p++;
                p++;
            }
            if (*p)
                p++;
        }
        else if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (*p && *p != q)
                p += *p == '\\' && p[1] ? 2 : 1;
            if (*p)
                p++;
        }
        else if (*p == '$') {
            p++;
            if (*p == '{')
                while (*p && *p++ != '}')
                    ;
            else
                while (isalnum ((unsigned char)*p) || *p == '_')
                    p++;
        }
        else if (isdigit ((unsigned char)*p)) {
            while (isalnum ((unsigned char)*p) || *p == '.')
                p++;
        }
        else if (isalpha ((unsigned char)*p) || *p == '_' || *p == ':') {
            const char *s = p;
            const char *r;
            bool kw = false;

            while (isalnum ((unsigned char)*p) || *p == '_' || *p == ':')
                p++;
            for (r = p; *r == ' '; r++)
                ;
            bool agg = false;

            for (int k = 0; keywords[k]; k++)
                if ((size_t)(p - s) == strlen (keywords[k])
                    && !strncmp (s, keywords[k], (size_t)(p - s)))
                    kw = true;
            for (int k = 0; aggregations[k]; k++)
                if ((size_t)(p - s) == strlen (aggregations[k])
                    && !strncmp (s, aggregations[k], (size_t)(p - s)))
                    agg = true;
            if (agg)
                continue;
            if (kw && *r == '(') {
                /* a label list */
                while (*r && *r != ')')
                    r++;
                p = *r ? r + 1 : r;
            }
            else if (!kw && *r != '(')
                fn (s, (size_t)(p - s));
        }
        else
            p++;
    }
}

static int dash_used[64];
static int dash_unknown;

static void check_metric (const char *s, size_t n)
{
    for (size_t i = 0; tr_openmetrics_metric (i); i++) {
        const char *m = tr_openmetrics_metric (i);
        if (strlen (m) == n && !strncmp (m, s, n)) {
            dash_used[i]++;
            return;
        }
    }
    print_message ("# the dashboard names '%.*s', which tracerd does not "
                   "write\n",
                   (int)n, s);
    dash_unknown++;
}

static void check_panels (json_t *panels, int *ids, int *nids, int *ntargets)
{
    size_t i;
    json_t *panel;

    assert_true (json_is_array (panels));
    json_array_foreach (panels, i, panel)
    {
        json_t *grid = json_object_get (panel, "gridPos");
        json_t *targets = json_object_get (panel, "targets");
        json_t *ds = json_object_get (panel, "datasource");
        const char *type = json_string_value (json_object_get (panel, "type"));
        json_int_t id = json_integer_value (json_object_get (panel, "id"));
        size_t j;
        json_t *t;

        assert_non_null (type);
        assert_true (id > 0);
        for (int k = 0; k < *nids; k++)
            assert_true (ids[k] != id); /* ids are unique */
        assert_true (*nids < 256);
        ids[(*nids)++] = (int)id;
        assert_true (json_is_string (json_object_get (panel, "title")));
        assert_true (json_is_integer (json_object_get (grid, "h")));
        assert_true (json_is_integer (json_object_get (grid, "w")));
        assert_true (json_is_integer (json_object_get (grid, "x")));
        assert_true (json_is_integer (json_object_get (grid, "y")));
        assert_true (json_integer_value (json_object_get (grid, "x"))
                         + json_integer_value (json_object_get (grid, "w"))
                     <= 24);
        if (!strcmp (type, "row")) {
            check_panels (json_object_get (panel, "panels"), ids, nids,
                          ntargets);
            continue;
        }
        /* every query goes to the datasource the user picked */
        assert_string_equal (json_string_value (json_object_get (ds, "uid")),
                             "${datasource}");
        assert_true (json_is_array (targets) && json_array_size (targets) > 0);
        json_array_foreach (targets, j, t)
        {
            const char *expr = json_string_value (json_object_get (t, "expr"));

            assert_non_null (expr);
            assert_true (json_is_string (json_object_get (t, "refId")));
            expr_metrics (expr, check_metric);
            (*ntargets)++;
        }
    }
}

/* A query variable: Grafana's label_values(SELECTOR, LABEL), where
 * LABEL is one of the file's labels.
 */
static void check_variable (const char *text)
{
    static const char *const labels[] = { TR_OPENMETRICS_LABELS };
    char buf[1024], *comma, *label, *end;
    bool known = false;

    assert_true (strlen (text) < sizeof (buf));
    assert_int_equal (strncmp (text, "label_values(", 13), 0);
    snprintf (buf, sizeof (buf), "%s", text + 13);
    assert_non_null (comma = strrchr (buf, ','));
    assert_non_null (end = strrchr (buf, ')'));
    *comma = *end = '\0';
    for (label = comma + 1; *label == ' '; label++)
        ;
    for (size_t i = 0; i < sizeof (labels) / sizeof (labels[0]); i++)
        known = known || !strcmp (label, labels[i]);
    assert_true (known);
    expr_metrics (buf, check_metric);
}

static void test_dashboard (void **state)
{
    json_error_t jerr;
    json_t *dash = json_load_file (DASHBOARD, 0, &jerr);
    json_t *list, *var;
    int ids[256], nids = 0, ntargets = 0;
    bool ds_var = false;
    size_t i;

    (void)state;
    if (!dash)
        print_message ("# %s:%d: %s\n", DASHBOARD, jerr.line, jerr.text);
    assert_non_null (dash);
    assert_true (json_is_string (json_object_get (dash, "title")));
    assert_true (json_is_string (json_object_get (dash, "uid")));
    /* Grafana 9 and later migrate a dashboard of this schema on import */
    assert_true (json_integer_value (json_object_get (dash, "schemaVersion"))
                 >= 36);
    list = json_object_get (json_object_get (dash, "templating"), "list");
    assert_true (json_is_array (list));
    json_array_foreach (list, i, var)
    {
        const char *name = json_string_value (json_object_get (var, "name"));
        const char *type = json_string_value (json_object_get (var, "type"));

        assert_non_null (name);
        assert_non_null (type);
        if (!strcmp (type, "datasource")) {
            assert_string_equal (name, "datasource");
            assert_string_equal (json_string_value (json_object_get (var, "quer"
                                                                          "y")),
                                 "prometheus");
            ds_var = true;
        }
        else if (!strcmp (type, "query")) {
            json_t *ds = json_object_get (var, "datasource");
            json_t *q = json_object_get (var, "query");
            const char *text =
                json_is_string (q)
                    ? json_string_value (q)
                    : json_string_value (json_object_get (q, "query"));

            assert_string_equal (json_string_value (json_object_get (ds, "ui"
                                                                         "d")),
                                 "${datasource}");
            assert_non_null (text);
            check_variable (text);
        }
    }
    assert_true (ds_var);
    memset (dash_used, 0, sizeof (dash_used));
    check_panels (json_object_get (dash, "panels"), ids, &nids, &ntargets);
    assert_true (ntargets > 0);
    assert_int_equal (dash_unknown, 0);
    /* and every metric has a panel */
    for (i = 0; tr_openmetrics_metric (i); i++) {
        if (!dash_used[i])
            print_message ("# no panel shows %s\n", tr_openmetrics_metric (i));
        assert_true (dash_used[i] > 0);
    }
    json_decref (dash);
}

static void test_expr_metrics (void **state)
{
    (void)state;
    dash_unknown = 0;
    memset (dash_used, 0, sizeof (dash_used));
    expr_metrics ("sum by (user, job_id) (rate(tracer_step_cpu_seconds_total"
                  "{cluster=~\"$cluster\", user=\"a b\"}[$__rate_interval]))"
                  " / on (job_id) group_left (node) "
                  "tracer_step_requested_cpus offset 5m > bool 0.5",
                  check_metric);
    assert_int_equal (dash_unknown, 0);
    assert_int_equal (dash_used[1], 1);
    assert_int_equal (dash_used[2], 1);
    expr_metrics ("node_load1 + up", check_metric);
    assert_int_equal (dash_unknown, 2);
    dash_unknown = 0;
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_label_value),
        cmocka_unit_test (test_text),
        cmocka_unit_test (test_hostile),
        cmocka_unit_test (test_step),
        cmocka_unit_test (test_write),
        cmocka_unit_test (test_expr_metrics),
        cmocka_unit_test (test_dashboard),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
