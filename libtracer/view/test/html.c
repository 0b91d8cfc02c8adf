/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for html.c, the self-contained HTML job report: the section
 * ids and chart figures that doc/html-report.md promises, the points of
 * a known series, reference lines, metrics a record does not have, a
 * step on two nodes, hostile strings from records, numbers that must
 * never print as NaN, invalid input, the recommendation callback, notes,
 * the tools timeline, the bound on step sections, write errors, and the
 * escaping table.  Records are the fixture basic.json or built from JSON
 * text here.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/judge/evidence.h"
#include "libtracer/view/html.h"
#include "libtracer/record/record.h"
#include "libtracer/view/report.h"
#include "libtracer/record/stepsum.h"

#define BASIC TEST_SRCDIR "/fixtures/records/basic.json"

#include "record-fixture.h"

/* An array of valid records from NULL-terminated overlays. */
static json_t *recs_of (const char *first, ...)
{
    json_t *a = json_array ();
    va_list ap;

    assert_non_null (a);
    va_start (ap, first);
    for (const char *o = first; o; o = va_arg (ap, const char *))
        assert_int_equal (json_array_append_new (a, rec_with (o, true)), 0);
    va_end (ap);
    return a;
}

static json_t *basic_recs (void)
{
    json_error_t jerr;
    json_t *a = json_array ();
    json_t *rec = json_load_file (BASIC, 0, &jerr);

    if (!rec)
        fail_msg ("%s: %s", BASIC, jerr.text);
    assert_int_equal (json_array_append_new (a, rec), 0);
    return a;
}

/* The report as a string; the caller frees it. */
static char *render (json_t *recs, json_t *notes, const struct tr_html_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    assert_non_null (f);
    if (tr_html_job_report (f, recs, notes, o) < 0)
        fail_msg ("tr_html_job_report: %s", strerror (errno));
    assert_int_equal (fclose (f), 0);
    assert_int_equal (strlen (buf), len);
    return buf;
}

static size_t count (const char *hay, const char *needle)
{
    size_t n = 0, len = strlen (needle);

    for (const char *p = hay; (p = strstr (p, needle)); p += len)
        n++;
    return n;
}

/* A copy of the text from the first from in s up to (not including) the
 * next to after it; the caller frees it.  Fails when either is missing.
 */
static char *slice (const char *s, const char *from, const char *to)
{
    const char *a = strstr (s, from), *b;
    char *r;

    if (!a)
        fail_msg ("'%s' not found", from);
    if (!(b = strstr (a + strlen (from), to)))
        fail_msg ("'%s' not found after '%s'", to, from);
    r = strndup (a, (size_t)(b - a));
    assert_non_null (r);
    return r;
}

/* The figure of a chart within a step section. */
static char *figure (const char *html, const char *step, const char *metric)
{
    char from[128], sect[64];
    char *sec, *fig;

    snprintf (sect, sizeof (sect), "<section class=\"step\" id=\"step-%s\"",
              step);
    sec = slice (html, sect, "</section>");
    snprintf (from, sizeof (from), "<figure class=\"chart\" data-metric=\"%s\"",
              metric);
    fig = slice (sec, from, "</figure>");
    free (sec);
    return fig;
}

/* Points in the points attribute of the first element of fig that has
 * attrs, or -1 when there is none.
 */
static int points_of (const char *fig, const char *attrs)
{
    const char *p = strstr (fig, attrs), *end;
    int n = 0;

    if (!p || !(p = strstr (p, "points=\"")))
        return -1;
    p += strlen ("points=\"");
    end = strchr (p, '"');
    assert_non_null (end);
    for (; p < end; p++)
        if (*p == ',')
            n++;
    return n;
}

/* What every report must be: one document, no script, balanced elements
 * that hold other elements, and no NaN or infinity anywhere.
 */
static void assert_well_formed (const char *html)
{
    static const char *const pairs[][2] = {
        { "<svg", "</svg>" },         { "<figure", "</figure>" },
        { "<section", "</section>" }, { "<table", "</table>" },
        { "<ul", "</ul>" },           { "<g ", "</g>" },
    };

    assert_true (!strncmp (html, "<!DOCTYPE html>\n", 16));
    assert_non_null (strstr (html, "<meta name=\"viewport\" content=\"width="
                                   "device-width,initial-scale=1\">"));
    assert_null (strcasestr (html, "<script"));
    assert_null (strcasestr (html, "<link"));
    assert_null (strcasestr (html, "src="));
    assert_null (strcasestr (html, "http://"));
    assert_null (strcasestr (html, "https://"));
    for (size_t i = 0; i < sizeof (pairs) / sizeof (pairs[0]); i++)
        if (count (html, pairs[i][0]) != count (html, pairs[i][1]))
            fail_msg ("%zu %s but %zu %s", count (html, pairs[i][0]),
                      pairs[i][0], count (html, pairs[i][1]), pairs[i][1]);
    /* "nan" or "inf" as a word of its own (not "info", "finance") */
    for (const char *w = "nan\0inf\0"; *w; w += 4)
        for (const char *p = html; (p = strcasestr (p, w)); p += 3) {
            bool before = p > html
                          && ((p[-1] >= 'a' && p[-1] <= 'z')
                              || (p[-1] >= 'A' && p[-1] <= 'Z'));
            bool after =
                (p[3] >= 'a' && p[3] <= 'z') || (p[3] >= 'A' && p[3] <= 'Z');
            if (!before && !after)
                fail_msg ("'%.3s' in the output: ...%.40s", w,
                          p - html > 20 ? p - 20 : html);
        }
    assert_true (!strcmp (html + strlen (html) - 8, "</html>\n"));
}

static const struct tr_html_opts fixed_time = { .now = 1767225700 };

static void test_sections (void **state)
{
    static const char *const ids[] = {
        "<header id=\"job\"",
        "<section id=\"summary\"",
        "<section id=\"diagnosis\"",
        "<section id=\"recommendations\"",
        "<section class=\"step\" id=\"step-0\"",
        "<footer id=\"footer\"",
        "<figure class=\"timeline\"",
    };
    static const char *const metrics[] = { "cpu", "memory", "psi",
                                           "io",  "net",    "gpu" };
    json_t *recs = basic_recs ();
    char *html = render (recs, NULL, &fixed_time);
    char *fig;

    (void)state;
    assert_well_formed (html);
    for (size_t i = 0; i < sizeof (ids) / sizeof (ids[0]); i++)
        if (count (html, ids[i]) != 1)
            fail_msg ("%s: %zu times", ids[i], count (html, ids[i]));
    assert_int_equal (count (html, "<figure class=\"chart\" data-metric=\""),
                      6);
    for (size_t i = 0; i < 6; i++) {
        fig = figure (html, "0", metrics[i]);
        assert_non_null (strstr (fig, "<figcaption>"));
        free (fig);
    }
    /* the header and the summary of the fixture's job */
    assert_non_null (strstr (html, "<h1>Job 24 <span class=\"jobname\">"
                                   "r\xc3\xa9sum\xc3\xa9-train</span></h1>"));
    assert_non_null (strstr (html, ">OUT_OF_MEMORY</span>"));
    assert_non_null (strstr (html, "<dt>User</dt><dd>testuser</dd>"));
    assert_non_null (strstr (html, "<dt>Nodes</dt><dd>node1</dd>"));
    assert_non_null (strstr (html, "2 cores</td>"));
    assert_non_null (strstr (html, "50.0 MiB peak"));
    assert_non_null (strstr (html, "<time datetime=\"2026-01-01T00:01:40Z\">"));
    assert_non_null (strstr (html, "Generated by tracer " PACKAGE_VERSION));
    /* the diagnosis of an OOM kill, severity in words */
    assert_non_null (strstr (html, "data-code=\"oom\"><span class=\"sev\">"
                                   "critical</span>"));
    /* and its cause with the evidence */
    assert_non_null (strstr (html, "<p class=\"cause\" data-cause=\"oom\">"
                                   "<strong>Cause:</strong> oom: the OOM "
                                   "killer killed 1 process of the step; "
                                   "memory peak 50.0 MiB of a 50.0 MiB "
                                   "limit</p>"));
    assert_non_null (strstr (html, "Not enough history"));
    free (html);
    json_decref (recs);
}

static void test_points (void **state)
{
    json_t *recs = basic_recs ();
    char *html = render (recs, NULL, &fixed_time);
    char *cpu = figure (html, "0", "cpu");
    char *mem = figure (html, "0", "memory");

    (void)state;
    /* five buckets: five points; t = 0 at the plot's left edge (36) and
     * 0.02 of the 2-core axis (156 down to 18) at y = 154.6
     */
    assert_int_equal (points_of (cpu, "<polyline class=\"ln c0 ls0\" "
                                      "data-series=\"cpu_cores\""),
                      5);
    assert_non_null (strstr (cpu, "data-node=\"node1\" points=\"36.0,154.6 "));
    assert_int_equal (count (cpu, "<polyline"), 1);
    /* the band: max forward and min back */
    assert_int_equal (points_of (cpu, "<polygon class=\"band"), 10);
    assert_int_equal (points_of (mem, "data-series=\"mem_bytes\""), 5);
    /* reference lines: 2 cores allocated, the 50 MiB limit */
    assert_int_equal (count (cpu, "<line class=\"ref\" "
                                  "data-ref=\"allocation\""),
                      1);
    assert_non_null (strstr (cpu, ">allocated 2 cores</text>"));
    assert_int_equal (count (mem, "<line class=\"ref\" data-ref=\"limit\""), 1);
    assert_non_null (strstr (mem, ">limit 50.0 MiB</text>"));
    /* the limit is the top of the axis, whose unit is MiB */
    assert_non_null (strstr (mem, "y1=\"18.0\" x2=\"312.0\" y2=\"18.0\"/>"
                                  "<text class=\"reft\""));
    assert_non_null (strstr (mem, ">memory, MiB</text>"));
    assert_non_null (strstr (mem, "Memory means: cgroup-charged: anonymous + "
                                  "page cache"));
    free (cpu);
    free (mem);
    free (html);
    json_decref (recs);
}

static void test_missing_metrics (void **state)
{
    static const char *const empty[] = { "psi", "io", "net", "gpu" };
    json_t *recs = basic_recs ();
    char *html = render (recs, NULL, &fixed_time);

    (void)state;
    for (size_t i = 0; i < 4; i++) {
        char *fig = figure (html, "0", empty[i]);

        assert_non_null (strstr (fig, "data-empty=\"true\""));
        assert_non_null (strstr (fig, "not recorded for this step"));
        assert_null (strstr (fig, "<svg"));
        free (fig);
    }
    for (size_t i = 0; i < 2; i++) {
        char *fig = figure (html, "0", i ? "memory" : "cpu");

        assert_null (strstr (fig, "data-empty"));
        assert_non_null (strstr (fig, "<svg"));
        free (fig);
    }
    free (html);
    json_decref (recs);
}

/* One point is a dot; a value that is not a number breaks the line. */
static void test_dots_and_gaps (void **state)
{
    json_t *one = recs_of ("{'series': {'t_s': [5], 'metrics': {'cpu_cores':"
                           " {'min': [1], 'mean': [1], 'max': [1]}}}}",
                           NULL);
    json_t *gap = json_array ();
    char *html, *fig;

    (void)state;
    html = render (one, NULL, &fixed_time);
    fig = figure (html, "0", "cpu");
    assert_int_equal (count (fig, "<circle class=\"dot c0\" data-series="
                                  "\"cpu_cores\""),
                      1);
    assert_null (strstr (fig, "<polyline"));
    assert_null (strstr (fig, "<polygon"));
    free (fig);
    free (html);

    /* not a valid record: a reader handed one anyway draws what it can */
    assert_int_equal (json_array_append_new (gap, rec_with ("{'series': "
                                                            "{'t_s': [0, 1, 2, "
                                                            "3], 'metrics':"
                                                            " {'cpu_cores': "
                                                            "{'min': [1, 1, 1, "
                                                            "1],"
                                                            " 'mean': [1, "
                                                            "null, 2, 3], "
                                                            "'max': [1, 1, 1, "
                                                            "1]}}}}",
                                                            false)),
                      0);
    html = render (gap, NULL, &fixed_time);
    assert_well_formed (html);
    fig = figure (html, "0", "cpu");
    assert_int_equal (count (fig, "<circle class=\"dot"), 1);
    assert_int_equal (count (fig, "<polyline"), 1);
    assert_int_equal (points_of (fig, "<polyline"), 2);
    free (fig);
    free (html);
    json_decref (one);
    json_decref (gap);
}

static const char *node_a =
    "{'identity': {'node': 'node1', 'node_index': 0},"
    " 'request': {'nodes': 2, 'cpus_on_node': 4, 'mem_bytes': 1073741824},"
    " 'time': {'elapsed_s': 100},"
    " 'summary': {'cpu': {'total_s': 300},"
    "  'memory': {'peak_bytes': 536870912},"
    "  'io': {'source': 'io.stat', 'read_bytes': 1000, 'write_bytes': 5}},"
    " 'series': {'t_s': [0, 50], 'metrics': {'cpu_cores':"
    "  {'min': [2, 3], 'mean': [3, 3], 'max': [4, 3]}}}}";
static const char *node_b =
    "{'identity': {'node': 'node2', 'node_index': 1},"
    " 'request': {'nodes': 2, 'cpus_on_node': 4, 'mem_bytes': 1073741824},"
    " 'time': {'start_unix_ms': 1010000, 'elapsed_s': 90},"
    " 'summary': {'cpu': {'total_s': 90},"
    "  'memory': {'peak_bytes': 268435456},"
    "  'io': {'source': 'io.stat', 'read_bytes': 10, 'write_bytes': 5}},"
    " 'series': {'t_s': [0, 40, 80], 'metrics': {'cpu_cores':"
    "  {'min': [1, 1, 1], 'mean': [1, 1, 1], 'max': [1, 1, 1]}}}}";

static void test_two_nodes (void **state)
{
    json_t *recs = recs_of (node_b, node_a, NULL);
    char *html = render (recs, NULL, &fixed_time);
    char *sec =
        slice (html, "<section class=\"step\" id=\"step-0\"", "</section>");
    char *table = slice (sec, "<table class=\"nodes\">", "</table>");
    char *cpu = figure (html, "0", "cpu");
    char *row1 = slice (table, "<tr><th>node1</th>", "</tr>");
    char *row2 = slice (table, "<tr><th>node2</th>", "</tr>");

    (void)state;
    assert_well_formed (html);
    /* node1 first (natural order), highest CPU; equal writes unmarked */
    assert_true (strstr (table, "node1") < strstr (table, "node2"));
    assert_non_null (strstr (row1, "<td class=\"num max\">300 s \xe2\x96\xb2"));
    assert_non_null (strstr (row2, "<td class=\"num min\">90.00 s "
                                   "\xe2\x96\xbc"));
    assert_non_null (strstr (row1, "<td class=\"num max\">1000 B"));
    assert_int_equal (count (table, "<td class=\"num\">5 B</td>"), 2);
    /* one line per node, offset by node2's later start, no band */
    assert_int_equal (count (cpu, "<polyline"), 2);
    assert_int_equal (points_of (cpu, "data-node=\"node1\""), 2);
    assert_int_equal (points_of (cpu, "data-node=\"node2\""), 3);
    assert_non_null (strstr (cpu, "data-node=\"node2\" points=\"63.6,"));
    assert_null (strstr (cpu, "<polygon"));
    assert_non_null (strstr (cpu, "class=\"ln c0\" x1=\"1\" y1=\"4\" x2=\"23\""
                                  " y2=\"4\"/></svg>node1</li>"));
    assert_non_null (strstr (cpu, "class=\"ln c1\" x1=\"1\" y1=\"4\" x2=\"23\""
                                  " y2=\"4\"/></svg>node2</li>"));
    assert_non_null (strstr (cpu, "One line per node."));
    /* the summary holds the request of both nodes */
    assert_non_null (strstr (html, "8 cores</td>"));
    assert_non_null (strstr (html, "512.0 MiB peak on the largest node"));
    free (row1);
    free (row2);
    free (cpu);
    free (table);
    free (sec);
    free (html);
    json_decref (recs);

    /* one node: no per-node table */
    recs = basic_recs ();
    html = render (recs, NULL, &fixed_time);
    assert_null (strstr (html, "<table class=\"nodes\">"));
    free (html);
    json_decref (recs);
}

/* What a record says beyond its figures (files, kernel events, no
 * progress) is on the page as the text view says it, under its node
 * when the step ran on two, hostile names escaped.
 */
static const char *evidence_b =
    "{'identity': {'node': 'node2', 'node_index': 1},"
    " 'events': [{'kind': 'segfault', 'scope': 'step', 't_unix_ms':"
    "  1767225600000, 'tool': '<img onerror=x>', 'pid': 42,"
    "  'text': 'segfault at 8 ip 1 sp 2 error 4'}],"
    " 'progress': {'stalled': true, 'stalled_s': 300,"
    "  'since_unix_ms': 1767225300000, 'processes': [{'tool': 'cat',"
    "  'pid': 7, 'state': 'S', 'wchan': 'anon_pipe_read'}]},"
    " 'files': {'source': 'ebpf', 'read_bytes': 100, 'written_bytes': 0,"
    "  'failed_opens': [{'path': '/ref/hg38.fa', 'errno': 'ENOENT',"
    "  'tool': 'STAR', 'count': 3}], 'io_errors': [],"
    "  'top_read': [{'path': '/data/in.bam', 'bytes': 100}],"
    "  'top_written': []}}";

static void test_record_evidence (void **state)
{
    json_t *recs = recs_of (node_a, NULL), *b, *ev, *e;
    char *html, *div, *text = NULL;
    size_t len = 0, i;
    FILE *f;

    (void)state;
    b = rec_with (node_b, true);
    e = rec_with (evidence_b, true);
    for (const char *k = "events\0progress\0files\0"; *k; k += strlen (k) + 1)
        assert_int_equal (json_object_set (b, k, json_object_get (e, k)), 0);
    json_decref (e);
    assert_int_equal (json_array_append_new (recs, b), 0);
    html = render (recs, NULL, &fixed_time);
    assert_well_formed (html);
    /* none for node1, which has nothing to say */
    assert_null (strstr (html, "class=\"record-evidence\" data-node=\"node1\""));
    div = slice (html, "<div class=\"record-evidence\" data-node=\"node2\">",
                 "</div>");
    assert_non_null (strstr (div, "<h4>On node2</h4>"));
    assert_non_null (strstr (div, "<dt>Failed opens</dt><dd>/ref/hg38.fa "
                                  "(ENOENT) by STAR x3</dd>"));
    assert_non_null (strstr (div, "<dt>Most read</dt><dd>/data/in.bam "
                                  "100 B (100%)</dd>"));
    assert_non_null (strstr (div, "<dt>Events</dt><dd>1 from the kernel "
                                  "log<ul><li>"));
    assert_non_null (strstr (div, " segfault &lt;img onerror=x&gt;[42]: "
                                  "segfault at 8 ip 1 sp 2 error 4</li>"));
    assert_non_null (strstr (div, "<dt>Progress</dt><dd>STALLED for "
                                  "00:05:00 (no CPU and no I/O)<ul><li>"
                                  "cat[7] state S in anon_pipe_read</li>"));
    assert_null (strstr (html, "<img"));

    /* the text view says the same, entry for entry */
    ev = tr_evidence_record (b);
    assert_int_equal (json_array_size (ev), 4);
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_report_job_view (f, recs, NULL), 0);
    assert_int_equal (fclose (f), 0);
    json_array_foreach (ev, i, e) {
        const char *t = json_string_value (json_object_get (e, "text"));
        assert_non_null (strstr (text, t));
        assert_non_null (strstr (div, t) ? strstr (div, t)
                                         : strstr (html, t));
    }
    assert_non_null (strstr (text, "    On node2:\n"));
    json_decref (ev);
    free (text);
    free (div);
    free (html);
    json_decref (recs);
}

static void test_hostile (void **state)
{
    json_t *recs = recs_of ("{'identity': {'job_name': "
                            "'<script>alert(1)</script>',"
                            "  'step_name': 'q\\u0027\\\"&', 'user': "
                            "'<u>x</u>',"
                            "  'account': 'a\\u001b[31mred\\u0007'},"
                            " 'tools': [{'name': '<img onerror=x>', 'count': "
                            "1, 'cpu_s': 1,"
                            "  'cmdline': '</title><script>x</script>\\nrm',"
                            "  'first_start_unix_ms': 1000000, "
                            "'last_end_unix_ms': 1050000}],"
                            " 'outcome': {'reason': '<b>'}}",
                            NULL);
    json_t *id = json_object_get (json_array_get (recs, 0), "identity");
    char *html;

    (void)state;
    /* bytes that are not UTF-8, as a record built in memory may hold */
    assert_int_equal (json_object_set_new (id, "partition",
                                           json_string_nocheck ("p\xff"
                                                                "q\xc3")),
                      0);
    html = render (recs, NULL, &fixed_time);
    assert_well_formed (html);
    assert_non_null (strstr (html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null (strstr (html, "q&#39;&quot;&amp;"));
    assert_non_null (strstr (html, "&lt;u&gt;x&lt;/u&gt;"));
    assert_non_null (strstr (html, "&lt;img onerror=x&gt;"));
    assert_non_null (strstr (html, "<title>&lt;/title&gt;&lt;script&gt;x&lt;"
                                   "/script&gt;\nrm</title>"));
    assert_non_null (strstr (html, "<dd>a\\x1b[31mred\\x07</dd>"));
    assert_non_null (strstr (html, "<dd>p\\xffq\\xc3</dd>"));
    assert_null (strstr (html, "<u>"));
    assert_null (strstr (html, "<img"));
    assert_null (strchr (html, '\xff'));
    assert_null (strchr (html, '\x1b'));
    assert_null (strchr (html, '\x07'));
    free (html);
    json_decref (recs);
}

/* An array task as its scheduler names it: Slurm's 7_3, PBS's subjob
 * of array 7[].srv as "index 3", never the 7[].srv_3 no tool accepts.
 */
static void test_array_ids (void **state)
{
    json_t *slurm = recs_of ("{'identity': {'job_id': '9', "
                             "'array_job_id': '7', 'array_task_id': 3}}",
                             NULL);
    json_t *pbs = recs_of ("{'identity': {'scheduler': 'pbs', "
                           "'job_id': '7[3].srv', 'array_job_id': "
                           "'7[].srv', 'array_task_id': 3}}",
                           NULL);
    char *html;

    (void)state;
    html = render (slurm, NULL, &fixed_time);
    assert_non_null (strstr (html, "<dt>Array</dt><dd>7_3</dd>"));
    free (html);
    html = render (pbs, NULL, &fixed_time);
    assert_non_null (strstr (html, "<dt>Array</dt><dd>7[].srv, index 3</dd>"));
    assert_null (strstr (html, "srv_3"));
    free (html);
    json_decref (slurm);
    json_decref (pbs);
}

/* Nothing measured and nothing known: dashes, never NaN. */
static void test_no_nan (void **state)
{
    json_t *recs = recs_of ("{'time': {'end_unix_ms': 1000000, "
                            "'elapsed_s': 0}, 'summary': {'samples': 0},"
                            " 'tools': [{'name': 'x', 'count': 1}],"
                            " 'series': {'interval_s': 1, 't_s': [],"
                            "  'metrics': {'cpu_cores': {'min': [],"
                            "   'mean': [], 'max': []}}}}",
                            NULL);
    char *html = render (recs, NULL, NULL), *fig;

    (void)state;
    assert_well_formed (html);
    assert_int_equal (count (html, "data-empty=\"true\""), 6);
    assert_non_null (strstr (html, "time not recorded"));
    assert_non_null (strstr (html, "<td class=\"num\">\xe2\x80\x93</td>"));
    free (html);
    json_decref (recs);

    /* values that overflow once scaled (PSI fractions to percent) are
     * left out, and huge ones do not round an axis up to infinity
     */
    recs = recs_of ("{'series': {'t_s': [0, 1, 1e300], 'metrics':"
                    " {'psi_cpu_some': {'min': [0, 0, 0],"
                    "   'mean': [1e308, 0.5, 0.5], 'max': [0, 0, 0]},"
                    "  'cpu_cores': {'min': [0, 0, 0],"
                    "   'mean': [1.7e308, 1, 1], 'max': [0, 0, 1.7e308]}}}}",
                    NULL);
    html = render (recs, NULL, &fixed_time);
    assert_well_formed (html);
    fig = figure (html, "0", "psi");
    assert_int_equal (points_of (fig, "data-series=\"psi_cpu_some\""), 2);
    free (fig);
    free (html);
    json_decref (recs);
}

static void test_einval (void **state)
{
    json_t *two = recs_of ("{}", "{'identity': {'job_id': '78'}}", NULL);
    json_t *clusters = recs_of ("{}", "{'identity': {'cluster': 'c2'}}", NULL);
    json_t *notobj = json_pack ("[i]", 1);
    json_t *empty = json_array ();
    json_t *obj = json_object ();
    json_t *one = recs_of ("{}", NULL);
    json_t *bad[] = { two, clusters, notobj, empty, obj, NULL };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    (void)state;
    assert_non_null (f);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        assert_int_equal (tr_html_job_report (f, bad[i], NULL, NULL), -1);
        assert_int_equal (errno, EINVAL);
    }
    errno = 0;
    assert_int_equal (tr_html_job_report (NULL, one, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    /* nothing written on failure */
    assert_int_equal (fflush (f), 0);
    assert_int_equal (len, 0);
    fclose (f);
    free (buf);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        json_decref (bad[i]);
    json_decref (one);
}

/* A write that fails is EIO. */
static void test_write_error (void **state)
{
    json_t *recs = basic_recs ();
    FILE *f = fopen ("/dev/full", "w");

    (void)state;
    assert_non_null (f);
    errno = 0;
    assert_int_equal (tr_html_job_report (f, recs, NULL, NULL), -1);
    assert_int_equal (errno, EIO);
    fclose (f);
    json_decref (recs);
}

struct calls {
    int n;
    char steps[8][16];
};

/* A group as tr_recommend_groups makes them, for step "0" only. */
static json_t *recommend (const struct tr_stepsum *step, void *arg)
{
    struct calls *c = arg;

    if (c->n < 8)
        snprintf (c->steps[c->n], sizeof (c->steps[0]), "%s", step->step_id);
    c->n++;
    if (strcmp (step->step_id, "0"))
        return NULL;
    return parse ("{'group': 'train/<0>', 'confidence': 'medium',"
                  " 'runs': {'total': 7, 'used': 5},"
                  " 'cpus': {'text': '2', 'recommend': 2, 'request': 4,"
                  "  'basis': 'quantile'},"
                  " 'mem': {'text': '1536M', 'recommend': 1610612736,"
                  "  'request': 8589934592, 'basis': 'oom'},"
                  " 'time': {'text': '00:10:00', 'recommend': 600,"
                  "  'request': 3600, 'basis': 'quantile'},"
                  " 'notes': ['peak <5> cores']}");
}

/* Advice for step "0" with the recommended values themselves. */
static json_t *recommend_values (const struct tr_stepsum *step, void *arg)
{
    (void)arg;
    if (strcmp (step->step_id, "0"))
        return NULL;
    return parse ("{'group': 'train/0', 'confidence': 'low',"
                  " 'runs': {'total': 1, 'used': 1},"
                  " 'cpus': {'text': '1', 'recommend': 1, 'request': 2,"
                  "  'basis': 'quantile'},"
                  " 'mem': {'text': '512M', 'recommend': 536870912,"
                  "  'request': 2147483648, 'basis': 'quantile'},"
                  " 'time': {'text': '00:05:00', 'recommend': 300,"
                  "  'request': 3600, 'basis': 'quantile'},"
                  " 'notes': []}");
}

/* A PBS or LSF job is advised in its own scheduler's words. */
static void test_recommend_scheduler (void **state)
{
    static const struct {
        const char *sched, *opt, *line;
    } cases[] = {
        { "pbs", "<code>ncpus</code></th>",
          "<pre class=\"pbs\"><code>#PBS -l select=1:ncpus=1:mem=512mb "
          "-l walltime=00:05:00\n</code></pre>" },
        { "lsf", "<code>-n</code></th>",
          "<pre class=\"lsf\"><code>#BSUB -n 1 -R "
          "&quot;rusage[mem=512MB]&quot; -W 0:05\n</code></pre>" },
    };
    struct tr_html_opts o = { .recommend = recommend_values };

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        char rec[128];
        json_t *recs;
        char *html;

        snprintf (rec, sizeof (rec), "{'identity': {'scheduler': '%s'}}",
                  cases[c].sched);
        recs = recs_of (rec, NULL);
        html = render (recs, NULL, &o);
        if (!strstr (html, cases[c].opt) || !strstr (html, cases[c].line))
            fail_msg ("%s: no %s or %s in\n%s", cases[c].sched, cases[c].opt,
                      cases[c].line, html);
        assert_null (strstr (html, "#SBATCH"));
        assert_null (strstr (html, "--cpus-per-task"));
        free (html);
        json_decref (recs);
    }
}

static void test_recommend (void **state)
{
    /* "Now" is this job's own request (3 cores, 2G, 1:30:00), not the
     * group's, which pools other jobs' (4, 8G, 1:00:00)
     */
    json_t *recs = recs_of ("{'request': {'cpus_per_task': 3, 'mem_bytes': "
                            "2147483648, 'time_limit_s': 5400}}",
                            "{'identity': {'step_id': 'batch'}}", NULL);
    struct calls calls = { 0 };
    struct tr_html_opts o = { .recommend = recommend, .arg = &calls };
    char *html = render (recs, NULL, &o);
    char *sec = slice (html, "<section id=\"recommendations\"", "</section>");
    char *batch =
        slice (sec, "<div class=\"rec\" data-step=\"batch\"", "</div>");
    char *zero = slice (sec, "<div class=\"rec\" data-step=\"0\"", "</pre>");

    (void)state;
    assert_int_equal (calls.n, 2);
    assert_string_equal (calls.steps[0], "batch");
    assert_string_equal (calls.steps[1], "0");
    assert_non_null (strstr (batch, "Not enough history"));
    assert_non_null (strstr (zero, "<code>--cpus-per-task</code></th>"
                                   "<td class=\"num\">3</td><td class=\"num\">"
                                   "<b>2</b></td><td>quantile</td>"));
    assert_non_null (strstr (zero, "<td class=\"num\">2G</td>"
                                   "<td class=\"num\"><b>1536M</b></td>"
                                   "<td>oom</td>"));
    assert_non_null (strstr (zero, "<td class=\"num\">01:30:00</td>"
                                   "<td class=\"num\"><b>00:10:00</b>"));
    assert_non_null (strstr (zero, "7 runs</span> (5 completed)"));
    assert_non_null (strstr (zero, "train/&lt;0&gt;"));
    assert_non_null (strstr (zero, ">medium</span>"));
    assert_non_null (strstr (zero, "#SBATCH --cpus-per-task=2\n"
                                   "#SBATCH --mem=1536M\n"
                                   "#SBATCH --time=00:10:00\n"));
    assert_non_null (strstr (html, "<li>peak &lt;5&gt; cores</li>"));
    free (zero);
    free (batch);
    free (sec);
    free (html);
    json_decref (recs);
}

static void test_notes (void **state)
{
    json_t *recs = recs_of (node_a, node_b, NULL);
    json_t *notes = parse ("{'1': 'signature <valid-old>', '0': 'unsigned'}");
    char *html = render (recs, notes, &fixed_time);
    char *foot = slice (html, "<footer id=\"footer\">", "</footer>");

    (void)state;
    assert_non_null (strstr (foot, "<li>Record of step 0 on node1: unsigned"
                                   "</li>\n<li>Record of step 0 on node2: "
                                   "signature &lt;valid-old&gt;</li>"));
    free (foot);
    free (html);
    json_decref (notes);
    json_decref (recs);
}

static void test_timeline (void **state)
{
    json_t *recs = recs_of ("{}", NULL);
    json_t *tools = json_array ();
    char *html, *tl;
    char name[32];

    (void)state;
    for (int i = 0; i < 25; i++) {
        snprintf (name, sizeof (name), "tool-%02d", i);
        assert_int_equal (
            json_array_append_new (
                tools,
                json_pack ("{s:s s:i s:f s:I s:I s:I s:{s:i s:i}}", "name",
                           name, "count", 1, "cpu_s", (double)i,
                           "peak_rss_bytes", (json_int_t)1048576,
                           "first_start_unix_ms", (json_int_t)1010000,
                           "last_end_unix_ms", (json_int_t)1060000,
                           "exit_codes", "0", 1, i == 24 ? "137" : "0", 2)),
            0);
    }
    assert_int_equal (json_object_set_new (json_array_get (recs, 0), "tools",
                                           tools),
                      0);
    html = render (recs, NULL, &fixed_time);
    tl = slice (html, "<figure class=\"timeline\"", "</figure>");
    assert_int_equal (count (tl, "<g class=\"tool\""), 20);
    assert_int_equal (count (tl, "<rect class=\"tb"), 20);
    /* the busiest first; the five least busy are left out */
    assert_non_null (strstr (tl, ">tool-24 \xc3\x97"
                                 "1 \xc2\xb7 exit 137"
                                 "\xc3\x97"
                                 "2</text><text class=\"st\" "
                                 "x=\"4\" y=\"27.0\">24.00 s CPU \xc2\xb7 "
                                 "peak 1.0 MiB</text>"));
    assert_null (strstr (tl, ">tool-04 "));
    assert_non_null (strstr (tl, ">tool-05 "));
    assert_int_equal (count (tl, "data-exit=\"nonzero\""), 1);
    assert_int_equal (count (tl, "<rect class=\"tb bad\""), 1);
    /* 10 s to 60 s of a 100 s step: from 10% of the width, half of it */
    assert_non_null (strstr (tl, "x=\"35.2\" y=\"31.0\" width=\"156.0\""));
    free (tl);
    free (html);
    json_decref (recs);
}

/* Steps in the job view's order; charts only for the first 50. */
static void test_steps (void **state)
{
    json_t *recs = json_array ();
    char ov[128];
    char *html;
    const char *a, *b, *c;

    (void)state;
    for (int i = 0; i < 52; i++) {
        snprintf (ov, sizeof (ov), "{'identity': {'step_id': '%d'}}", 51 - i);
        assert_int_equal (json_array_append_new (recs, rec_with (ov, true)), 0);
    }
    assert_int_equal (json_array_append_new (recs, rec_with ("{'identity': "
                                                             "{'step_id': "
                                                             "'batch'}, "
                                                             "'outcome': "
                                                             "{'state': "
                                                             "'failed', "
                                                             "'exit_code': 3}}",
                                                             true)),
                      0);
    html = render (recs, NULL, &fixed_time);
    assert_well_formed (html);
    a = strstr (html, "id=\"step-batch\"");
    b = strstr (html, "id=\"step-0\"");
    c = strstr (html, "id=\"step-10\"");
    assert_true (a && b && c && a < b && b < c);
    assert_int_equal (count (html, "<section class=\"step\""), 50);
    assert_int_equal (count (html, "<table class=\"usage\""), 53);
    assert_null (strstr (html, "id=\"step-49\""));
    assert_non_null (strstr (html, "the first 50 of 53 steps"));
    /* the job's state is its worst step's */
    assert_non_null (strstr (html, "<dt>State</dt><dd><span class=\"state "
                                   "state-bad\">FAILED</span>"));
    assert_non_null (strstr (html, ">FAILED</span>, exit code 3:0</caption>"));
    free (html);
    json_decref (recs);
}

/* A user the node could not name is shown by number, as the text view
 * shows it; a name wins.
 */
static void test_user_by_number (void **state)
{
    json_t *recs = basic_recs ();
    json_t *id = json_object_get (json_array_get (recs, 0), "identity");
    char *html;

    (void)state;
    html = render (recs, NULL, &fixed_time);
    assert_non_null (strstr (html, "<dt>User</dt><dd>"));
    assert_null (strstr (html, "<dt>User</dt><dd>54321</dd>"));
    free (html);
    json_object_del (id, "user");
    json_object_set_new (id, "uid", json_integer (54321));
    html = render (recs, NULL, &fixed_time);
    assert_non_null (strstr (html, "<dt>User</dt><dd>54321</dd>"));
    free (html);
    json_decref (recs);
}

static void test_escape (void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        { "", "" },
        { "plain text", "plain text" },
        { "<a href='x'>", "&lt;a href=&#39;x&#39;&gt;" },
        { "a&b \"q\"", "a&amp;b &quot;q&quot;" },
        { "&amp;", "&amp;amp;" },
        { "tab\tnewline\n", "tab\tnewline\n" },
        /* what the text views show as escapes, the same escapes */
        { "cr\r bell\x07 esc\x1b[0m del\x7f",
          "cr\\r bell\\x07 esc\\x1b[0m del\\x7f" },
        { "c1 \xc2\x85\xc2\x9f end", "c1 \\u0085\\u009f end" },
        { "rlo \xe2\x80\xae" "cba", "rlo \\u202e" "cba" },
        { "isolate \xe2\x81\xa6x\xe2\x81\xa9", "isolate \\u2066x\\u2069" },
        { "ls \xe2\x80\xa8ps \xe2\x80\xa9", "ls \\u2028ps \\u2029" },
        { "\xc2\xa0nbsp", "\xc2\xa0nbsp" },
        { "r\xc3\xa9sum\xc3\xa9", "r\xc3\xa9sum\xc3\xa9" },
        { "emoji \xf0\x9f\x98\x80", "emoji \xf0\x9f\x98\x80" },
        { "\xff", "\\xff" },
        { "cut \xc3", "cut \\xc3" },
        { "\xe2\x82<", "\\xe2\\x82&lt;" },
        { "overlong \xc0\xaf", "overlong \\xc0\\xaf" },
        { "overlong3 \xe0\x80\xaf", "overlong3 \\xe0\\x80\\xaf" },
        { "surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80" },
        { "big \xf4\x90\x80\x80", "big \\xf4\\x90\\x80\\x80" },
        { "max \xf4\x8f\xbf\xbf", "max \xf4\x8f\xbf\xbf" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream (&buf, &len);

        assert_non_null (f);
        assert_int_equal (tr_html_escape (f, cases[i].in), 0);
        assert_int_equal (fclose (f), 0);
        if (strcmp (buf, cases[i].out))
            fail_msg ("case %zu: got '%s', expected '%s'", i, buf,
                      cases[i].out);
        free (buf);
    }
    errno = 0;
    assert_int_equal (tr_html_escape (stdout, NULL), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_html_escape (NULL, "x"), -1);
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_sections),
        cmocka_unit_test (test_user_by_number),
        cmocka_unit_test (test_points),
        cmocka_unit_test (test_missing_metrics),
        cmocka_unit_test (test_dots_and_gaps),
        cmocka_unit_test (test_two_nodes),
        cmocka_unit_test (test_record_evidence),
        cmocka_unit_test (test_hostile),
        cmocka_unit_test (test_array_ids),
        cmocka_unit_test (test_no_nan),
        cmocka_unit_test (test_einval),
        cmocka_unit_test (test_write_error),
        cmocka_unit_test (test_recommend),
        cmocka_unit_test (test_recommend_scheduler),
        cmocka_unit_test (test_notes),
        cmocka_unit_test (test_timeline),
        cmocka_unit_test (test_steps),
        cmocka_unit_test (test_escape),
    };

    /* report times in the header and footer in a known zone */
    setenv ("TZ", "UTC", 1);
    tzset ();
    return cmocka_run_group_tests (tests, NULL, NULL);
}
