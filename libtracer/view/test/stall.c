/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for stall figures a node could not measure: the record's
 * summary.pressure leaves them out and names them in "unknown" (never a
 * 0 that looks measured), the record checker holds that, every view
 * (the text view, the JSON row, the HTML report, the mail summary in
 * text and HTML) shows them as unknown, and the diagnosis neither fires
 * on them nor claims 0 %.  The collector side: delay accounting off
 * (kernel.task_delayacct = 0, through a fixture fsroot) makes the exit
 * records' I/O and memory delay unknown; tracerd's description of what
 * a host can measure names what it cannot.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/conf/conf.h"
#include "libtracer/node/detail.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/util/fsroot.h"
#include "libtracer/view/html.h"
#include "libtracer/notify/mail.h"
#include "libtracer/view/mail_summary.h"
#include "libtracer/node/psi.h"
#include "libtracer/record/record.h"
#include "libtracer/view/report.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/util/strbuf.h"

#include "record-fixture.h"
#include "rmtree.h"

/* A step of 20 s on one core that used 29 % of it (a synchronous
 * writer), with its stall as overlay says.
 */
#define STEP_20S                                                          \
    "{'request': {'cpus_on_node': 1, 'mem_bytes': 268435456},"                    \
    " 'time': {'start_unix_ms': 1000000, 'end_unix_ms': 1020000,"         \
    "  'elapsed_s': 20},"                                                 \
    " 'summary': {'cpu': {'user_s': 1.8, 'system_s': 4.0, 'total_s': 5.8,"\
    "  'source': 'cgroup-v1:cpuacct.usage', 'exact': true},"              \
    "  'memory': {'peak_bytes': 104857600}%s}}"

/* The delayacct source while delay accounting was off: CPU run-queue
 * delay measured, memory and I/O not.
 */
#define PRESSURE_OFF                                                      \
    ", 'pressure': {'source': 'delayacct', 'exact': true,"                \
    "  'cpu': {'delay_s': 0.6}},"                                         \
    "  'x_pressure_unknown': ['memory', 'io'],"                           \
    "  'x_pressure_reason': 'no per-step cgroup2 directory and delay"     \
    " accounting off (kernel.task_delayacct = 0)'"

#define PRESSURE_NONE                                                     \
    ", 'x_pressure_unknown': ['cpu', 'memory', 'io'],"                    \
    "  'x_pressure_reason': 'no exit records'"

/* Delay accounting on: the writer's processes waited 14 s on block I/O */
#define PRESSURE_DELAY                                                    \
    ", 'pressure': {'source': 'delayacct', 'exact': true,"                \
    "  'cpu': {'delay_s': 0.6}, 'memory': {'delay_s': 0},"                \
    "  'io': {'delay_s': 14}}"

static json_t *step_rec (const char *pressure)
{
    char overlay[2048];

    snprintf (overlay, sizeof (overlay), STEP_20S, pressure);
    return rec_with (overlay, true);
}

static void row_of (json_t *rec, tr_stepsum_t *row, tr_strpool_t *pool)
{
    tr_stepsum_init (row);
    assert_int_equal (tr_stepsum_from_record (row, rec, "none", "r.json",
                                              pool),
                      0);
}

typedef int (*render_f) (FILE *out, void *arg);

static char *render (render_f fn, void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    assert_non_null (f);
    assert_int_equal (fn (f, arg), 0);
    assert_int_equal (fclose (f), 0);
    return buf;
}

/* unwrapped, so that a line reads whole */
static int text_view (FILE *out, void *arg)
{
    struct tr_report_view_opts o = { .width = TR_REPORT_MAX_WIDTH };

    return tr_report_job_view_ex (out, arg, NULL, &o);
}

static int html_view (FILE *out, void *arg)
{
    return tr_html_job_report (out, arg, NULL, NULL);
}

static int mail_text (FILE *out, void *arg)
{
    return tr_mail_summary_text (out, arg);
}

static int mail_html (FILE *out, void *arg)
{
    return tr_mail_summary_html (out, arg);
}

/* No view shows a stall of 0 % that was not measured. */
static void assert_no_zero_stall (const char *text)
{
    if (strstr (text, "memory 0.0%") || strstr (text, "I/O 0.0%")
        || strstr (text, "memory 0%") || strstr (text, "I/O 0%"))
        fail_msg ("an unknown stall shown as 0 %%:\n%s", text);
}

static void test_record_leaves_unknown_out (void **state)
{
    tr_error_t err;
    json_t *rec;

    (void)state;
    rec = step_rec (PRESSURE_OFF);
    json_decref (rec);
    rec = step_rec (PRESSURE_NONE);
    json_decref (rec);

    /* a resource is measured or unknown, never both */
    rec = rec_with ("{'summary': {'pressure': {'source': 'delayacct',"
                    " 'exact': true, 'io': {'delay_s': 0}},"
                    " 'x_pressure_unknown': ['io']}}",
                    false);
    assert_int_equal (tr_record_validate (rec, &err), -1);
    assert_non_null (strstr (err.text, "both measured and unknown"));
    json_decref (rec);
    rec = rec_with ("{'summary': {'x_pressure_unknown': ['disk']}}", false);
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_decref (rec);
    rec = rec_with ("{'summary': {'x_pressure_unknown': ['io', 'io']}}",
                    false);
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_decref (rec);
}

static void test_views_show_unknown (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    json_t *recs = json_array (), *row_json, *findings = NULL;
    struct tr_mail_event ev = { .job_id = "77", .exit_code = 0 };
    tr_stepsum_t row;
    char line[160], *s;

    (void)state;
    assert_non_null (pool);
    assert_int_equal (json_array_append_new (recs, step_rec (PRESSURE_OFF)),
                      0);
    row_of (json_array_get (recs, 0), &row, pool);
    assert_true (isnan (row.psi_mem_some_s));
    assert_true (isnan (row.psi_io_some_s));
    assert_true (row.psi_cpu_some_s > 0.59 && row.psi_cpu_some_s < 0.61);

    assert_int_equal (tr_stepsum_stall_text (&row, line, sizeof (line)), 1);
    assert_string_equal (line, "CPU 3.0%, memory unknown, I/O unknown");

    /* text view */
    s = render (text_view, recs);
    assert_non_null (strstr (s, "Stalled:        CPU 3.0%, memory unknown, "
                                "I/O unknown of the time (delay accounting: "
                                "the processes' delays summed)"));
    assert_no_zero_stall (s);
    free (s);

    /* JSON row: null, not 0 */
    assert_non_null (row_json = tr_stepsum_to_json (&row));
    assert_true (json_is_null (json_object_get (row_json, "psiio"))
                 || !json_object_get (row_json, "psiio"));
    assert_true (json_is_null (json_object_get (row_json, "psimem"))
                 || !json_object_get (row_json, "psimem"));
    assert_true (json_is_number (json_object_get (row_json, "psicpu")));
    json_decref (row_json);

    /* HTML report, with the reason */
    s = render (html_view, recs);
    assert_non_null (strstr (s, "<tr class=\"stall\"><th>Stalled</th>"));
    assert_non_null (strstr (s, "CPU 3.0%, memory unknown, I/O unknown"));
    assert_non_null (strstr (s, "title=\"no per-step cgroup2 directory and "
                                "delay accounting off"));
    assert_no_zero_stall (s);
    free (s);

    /* mail, text and HTML */
    {
        struct tr_mail_job j = { .ev = &ev, .rows = &row, .n = 1,
                                 .findings = &findings };
        snprintf (ev.state, sizeof (ev.state), "COMPLETED");
        assert_non_null (findings = tr_diagnose (&row, NULL));
        s = render (mail_text, &j);
        assert_non_null (strstr (s, "Stalled (some task waiting):"));
        assert_non_null (strstr (s, "CPU 3.0%, memory unknown, I/O "
                                    "unknown"));
        assert_no_zero_stall (s);
        free (s);
        s = render (mail_html, &j);
        assert_non_null (strstr (s, "CPU 3.0%, memory unknown, I/O "
                                    "unknown"));
        assert_no_zero_stall (s);
        free (s);
        json_decref (findings);
    }
    json_decref (recs);

    /* nothing measured at all */
    recs = json_array ();
    assert_int_equal (json_array_append_new (recs, step_rec (PRESSURE_NONE)),
                      0);
    row_of (json_array_get (recs, 0), &row, pool);
    assert_int_equal (tr_stepsum_stall_text (&row, line, sizeof (line)), 0);
    assert_string_equal (line, "unknown");
    s = render (text_view, recs);
    assert_non_null (strstr (s, "Stalled:        unknown"));
    free (s);
    json_decref (recs);
    tr_strpool_destroy (pool);
}

/* The text of the finding with code, or NULL. */
static const char *finding_text (json_t *findings, const char *code)
{
    size_t i;
    json_t *f;

    json_array_foreach (findings, i, f)
    {
        if (!strcmp (json_string_value (json_object_get (f, "code")), code))
            return json_string_value (json_object_get (f, "text"));
    }
    return NULL;
}

static void test_diagnosis_with_unknown_stall (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    json_t *rec, *findings, *f;
    tr_stepsum_t row;
    size_t i;

    (void)state;
    assert_non_null (pool);
    rec = step_rec (PRESSURE_OFF);
    row_of (rec, &row, pool);
    assert_non_null (findings = tr_diagnose (&row, NULL));
    /* no rule fires on an unknown stall, none says 0 %, none asks for
     * more cores, and the evidence leaves the stall out
     */
    assert_null (finding_text (findings, TR_DIAG_IO_BOUND));
    assert_null (finding_text (findings, TR_DIAG_CPU_BOUND));
    assert_null (finding_text (findings, TR_DIAG_MEM_PRESSURE));
    json_array_foreach (findings, i, f)
    {
        json_t *ev = json_object_get (f, "evidence");
        const char *text = json_string_value (json_object_get (f, "text"));
        assert_null (json_object_get (ev, "psiio"));
        assert_null (json_object_get (ev, "psimem"));
        assert_null (strstr (text, " 0%"));
        assert_null (strstr (text, "more cores"));
    }
    /* idle CPUs and no I/O figure: the ok finding says it is unknown */
    assert_non_null (finding_text (findings, TR_DIAG_OK));
    assert_non_null (strstr (finding_text (findings, TR_DIAG_OK),
                             "I/O and memory stall unknown"));
    json_decref (findings);
    json_decref (rec);

    /* with delay accounting on, the block I/O delay is the evidence */
    rec = step_rec (PRESSURE_DELAY);
    row_of (rec, &row, pool);
    assert_true (isnan (row.psi_io_full_s));
    assert_non_null (findings = tr_diagnose (&row, NULL));
    assert_non_null (finding_text (findings, TR_DIAG_IO_BOUND));
    assert_non_null (strstr (finding_text (findings, TR_DIAG_IO_BOUND),
                             "waited for block I/O 70% of the run time in "
                             "total (delay accounting)"));
    assert_non_null (strstr (finding_text (findings, TR_DIAG_IO_BOUND),
                             "more cores will not help"));
    assert_null (finding_text (findings, TR_DIAG_CPU_BOUND));
    json_decref (findings);
    json_decref (rec);

    tr_strpool_destroy (pool);
}

/* A fixture fsroot with kernel.task_delayacct = value ("" for none) and
 * a mountinfo of the given layout.
 */
static void make_root (char *root, const char *value, const char *mounts)
{
    char path[PATH_MAX];
    FILE *f;

    static const char *const dirs[] = { "/proc", "/proc/self", "/proc/sys",
                                        "/proc/sys/kernel" };

    for (size_t i = 0; i < sizeof (dirs) / sizeof (dirs[0]); i++) {
        snprintf (path, sizeof (path), "%s%s", root, dirs[i]);
        assert_true (mkdir (path, 0755) == 0 || errno == EEXIST);
    }
    snprintf (path, sizeof (path), "%s%s", root, TR_DELAYACCT_SYSCTL);
    if (*value) {
        assert_non_null (f = fopen (path, "w"));
        fputs (value, f);
        assert_int_equal (fclose (f), 0);
    }
    else
        (void)unlink (path);
    snprintf (path, sizeof (path), "%s/proc/self/mountinfo", root);
    assert_non_null (f = fopen (path, "w"));
    fputs (mounts, f);
    assert_int_equal (fclose (f), 0);
}

#define MOUNTS_V1                                                         \
    "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup "  \
    "cgroup rw,memory\n"                                                  \
    "31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:11 - "    \
    "cgroup cgroup rw,cpu,cpuacct\n"

static void test_delayacct_off_is_unknown (void **state)
{
    char root[] = "/tmp/test_stall.XXXXXX";
    struct tr_detail_opts opts = { .taskstats = true, .cmdline_max = 256 };
    tr_detail_t *d;
    tr_error_t err;
    json_t *rec, *p, *u;
    pid_t none[1];
    size_t n = 0;

    (void)state;
    assert_non_null (mkdtemp (root));
    make_root (root, "0\n", MOUNTS_V1);
    tr_fsroot_set (root);
    assert_int_equal (tr_delayacct_state (), 0);

    assert_non_null (d = tr_detail_create (&opts, &err));
    tr_detail_sample (d, none, &n, false, 0, 0);
    rec = json_pack ("{s:{s:{}}, s:{}}", "summary", "cpu", "host");
    assert_non_null (rec);
    assert_int_equal (tr_detail_record (d, rec), 0);
    p = json_object_get (json_object_get (rec, "summary"), "pressure");
    assert_string_equal (json_string_value (json_object_get (p, "source")),
                         "delayacct");
    assert_non_null (json_object_get (p, "cpu"));
    assert_null (json_object_get (p, "memory"));
    assert_null (json_object_get (p, "io"));
    u = json_object_get (json_object_get (rec, "summary"),
                         "x_pressure_unknown");
    assert_int_equal (json_array_size (u), 2);
    assert_string_equal (json_string_value (json_array_get (u, 0)), "memory");
    assert_string_equal (json_string_value (json_array_get (u, 1)), "io");
    assert_non_null (strstr (json_string_value (json_object_get (
                                 json_object_get (rec, "summary"),
                                 "x_pressure_reason")),
                             "kernel.task_delayacct = 0"));
    json_decref (rec);
    tr_detail_destroy (d);

    /* on: the delays are measured, a 0 is a real 0 */
    make_root (root, "1\n", MOUNTS_V1);
    assert_non_null (d = tr_detail_create (&opts, &err));
    tr_detail_sample (d, none, &n, false, 0, 0);
    rec = json_pack ("{s:{s:{}}, s:{}}", "summary", "cpu", "host");
    assert_int_equal (tr_detail_record (d, rec), 0);
    p = json_object_get (json_object_get (rec, "summary"), "pressure");
    assert_non_null (json_object_get (p, "io"));
    assert_non_null (json_object_get (p, "memory"));
    assert_null (json_object_get (json_object_get (rec, "summary"),
                                  "x_pressure_unknown"));
    json_decref (rec);
    tr_detail_destroy (d);

    /* turning it on writes the sysctl */
    make_root (root, "0\n", MOUNTS_V1);
    assert_int_equal (tr_delayacct_enable (&err), 1);
    assert_int_equal (tr_delayacct_state (), 1);
    assert_int_equal (tr_delayacct_enable (&err), 0);

    /* no such sysctl (before Linux 5.14) */
    make_root (root, "", MOUNTS_V1);
    errno = 0;
    assert_int_equal (tr_delayacct_state (), -1);
    assert_int_equal (errno, ENOENT);

    tr_fsroot_set (NULL);
    assert_int_equal (rmtree (root), 0);
}

static void test_describe (void **state)
{
    char root[] = "/tmp/test_stall.XXXXXX";
    tr_strbuf_t sb = TR_STRBUF_INIT;

    (void)state;
    assert_non_null (mkdtemp (root));
    tr_fsroot_set (root);

    /* v1 host, delay accounting off and left off: memory and I/O unknown */
    make_root (root, "0\n", MOUNTS_V1);
    assert_int_equal (tr_stall_describe (TR_DELAYACCT_OFF,
                                         TR_PSI_MIRROR_AUTO, true, &sb),
                      2);
    assert_non_null (strstr (tr_strbuf_str (&sb), "cgroups: cgroup v1\n"));
    assert_non_null (strstr (tr_strbuf_str (&sb),
                             "stall: memory and I/O stall unknown: no "
                             "per-step pressure (a cgroup v1 host) and "
                             "delay accounting is off"));
    tr_strbuf_reset (&sb);

    /* auto: tracerd turns it on */
    assert_true (tr_delayacct_wanted (TR_DELAYACCT_AUTO, 1, 2));
    assert_int_equal (tr_stall_describe (TR_DELAYACCT_AUTO,
                                         TR_PSI_MIRROR_AUTO, true, &sb),
                      0);
    assert_non_null (strstr (tr_strbuf_str (&sb), "tracerd turns it on"));
    tr_strbuf_reset (&sb);

    /* no exit records either: nothing */
    assert_int_equal (tr_stall_describe (TR_DELAYACCT_AUTO,
                                         TR_PSI_MIRROR_AUTO, false, &sb),
                      3);
    tr_strbuf_reset (&sb);

    /* on: measured */
    make_root (root, "1\n", MOUNTS_V1);
    assert_int_equal (tr_stall_describe (TR_DELAYACCT_OFF,
                                         TR_PSI_MIRROR_AUTO, true, &sb),
                      0);
    assert_non_null (strstr (tr_strbuf_str (&sb),
                             "kernel.task_delayacct = 1"));
    tr_strbuf_free (&sb);

    tr_fsroot_set (NULL);
    assert_int_equal (rmtree (root), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_record_leaves_unknown_out),
        cmocka_unit_test (test_views_show_unknown),
        cmocka_unit_test (test_diagnosis_with_unknown_stall),
        cmocka_unit_test (test_delayacct_off_is_unknown),
        cmocka_unit_test (test_describe),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
