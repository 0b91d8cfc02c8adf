/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The run view (runview.h): a run's steps by process, shares, the
 * bottleneck, the Gantt's scale and the text at 80 columns.
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <cmocka.h>
#include "libtracer/judge/aggregate.h"
#include "libtracer/view/html.h"
#include "libtracer/view/nftrace.h"
#include "libtracer/record/runid.h"
#include "libtracer/view/runview.h"
#include "libtracer/record/stepsum.h"

static tr_stepsum_t mk (const char *job,
                        const char *step,
                        const char *process,
                        double start_s,
                        double elapsed,
                        double cpu_s)
{
    tr_stepsum_t r;
    static char groups[64][64];
    static int ngroups;
    char *g = groups[ngroups++ % 64];

    tr_stepsum_init (&r);
    r.scheduler = "slurm";
    r.cluster = "c1";
    r.job_id = job;
    r.step_id = step;
    r.job_name = process;
    r.user = "alice";
    r.uid = 1000;
    r.account = "lab";
    r.partition = "cpu";
    snprintf (g, 64, "%s/%s", process, step);
    r.group = g;
    r.run_id = "r1";
    r.pipeline = "demo";
    r.process = process;
    r.state = "completed";
    r.node = "n1";
    r.nodes = 1;
    r.req_cores = 2;
    r.start_ms = start_s * 1000;
    r.end_ms = (start_s + elapsed) * 1000;
    r.elapsed_s = elapsed;
    r.cpu_s = cpu_s;
    r.exit_code = 0;
    return r;
}

static double num (json_t *o, const char *k)
{
    json_t *v = json_object_get (o, k);

    if (!json_is_number (v))
        fail_msg ("%s missing", k);
    return json_number_value (v);
}

static json_t *process (json_t *view, const char *name)
{
    json_t *p;
    size_t i;

    json_array_foreach (
        json_object_get (view, "processes"), i,
        p) if (!strcmp (json_string_value (json_object_get (p, "process")),
                        name)) return p;
    fail_msg ("no process %s", name);
    return NULL;
}

static json_t *task (json_t *view, const char *id)
{
    json_t *t;
    size_t i;

    json_array_foreach (
        json_object_get (view, "tasks"), i,
        t) if (!strcmp (json_string_value (json_object_get (t, "job_id")),
                        id)) return t;
    fail_msg ("no task %s", id);
    return NULL;
}

#define NROWS 9

/* rows: align 10 (batch and extern), align 11 (failed, exit 2), sort 12
 * (OOM), sort 13 (a batch script and its srun step), and a step of
 * another run
 */
static void fill (tr_stepsum_t *rows, const tr_stepsum_t **p)
{
    rows[0] = mk ("10", "batch", "align", 1000, 3600, 7000);
    rows[0].tools = "bwa=6000;samtools=1000;slurmstepd=2";
    rows[1] = mk ("10", "extern", "align", 1000, 3600, 1);
    rows[1].tools = "sleep=1";
    rows[2] = mk ("11", "batch", "align", 1200, 1800, 3500);
    rows[2].state = "failed";
    rows[2].exit_code = 2;
    rows[2].cause = "tool-error";
    rows[2].cause_text = "bwa (pid 7) exited 2, 0.0 s before the end";
    rows[2].tools = "bwa=3500";
    rows[3] = mk ("12", "batch", "sort", 4000, 600, 60);
    rows[3].state = "oom";
    rows[3].oom_kills = 1;
    rows[3].cause = "oom";
    rows[4] = mk ("13", "batch", "sort", 4000, 900, 2);
    rows[5] = mk ("13", "0", "sort", 4010, 880, 90);
    rows[5].step_name = "sort";
    rows[5].tools = "sort=90";
    rows[6] = mk ("13", "extern", "sort", 4000, 900, 0);
    rows[7] = mk ("30", "batch", "align", 100, 60, 100);
    rows[7].run_id = "r2";
    rows[8] = mk ("14", "batch", "plot", 5000, 60, NAN);
    for (int i = 0; i < NROWS; i++)
        p[i] = &rows[i];
}

static void test_processes (void **state)
{
    tr_stepsum_t rows[NROWS];
    const tr_stepsum_t *p[NROWS];
    struct tr_cost cost = { .core_hour = 0.5, .currency = "EUR" };
    struct tr_run_view_opts o = { &cost, NULL, NULL, 0 };
    json_t *view, *runs, *al, *so, *pl, *t, *pr;
    double cpu = 0, money = 0;
    tr_error_t error;
    size_t i;

    (void)state;
    fill (rows, p);
    assert_non_null (view = tr_run_view (p, NROWS, "r1", &o, &error));
    /* the header is --runs's object for the same steps */
    {
        const tr_stepsum_t *q[NROWS - 1];
        size_t n = 0;

        for (i = 0; i < NROWS; i++)
            if (i != 7)
                q[n++] = p[i];
        assert_non_null (runs = tr_runs (q, n, &cost, &error));
        assert_true (
            json_equal (json_object_get (view, "run"),
                        json_array_get (json_object_get (runs, "runs"), 0)));
        json_decref (runs);
    }
    assert_int_equal (json_array_size (json_object_get (view, "processes")), 3);
    al = process (view, "align");
    assert_int_equal (num (al, "tasks"), 2);
    assert_int_equal (num (al, "steps"), 2); /* extern left out */
    assert_int_equal (num (al, "failed"), 1);
    assert_int_equal (json_integer_value (
                          json_object_get (json_object_get (al, "causes"),
                                           "FAILED (exit 2)")),
                      1);
    /* each task's cause class, none for one that completed */
    assert_string_equal (json_string_value (
                             json_object_get (task (view, "11"), "cause")),
                         "tool-error");
    assert_string_equal (json_string_value (
                             json_object_get (task (view, "11"), "cause_text")),
                         "bwa (pid 7) exited 2, 0.0 s before the end");
    assert_null (json_object_get (task (view, "10"), "cause"));
    /* CPU efficiency over the jobs: CPU time over cores x elapsed */
    assert_true (
        fabs (num (al, "cpu_eff") - (7001.0 + 3500) / (2 * 3600.0 + 2 * 1800))
        < 1e-9);
    /* both align tasks used their 2 cores: CPU-bound */
    assert_string_equal (json_string_value (json_object_get (al, "bottleneck")),
                         "cpu-bound");
    assert_int_equal (num (al, "bottleneck_tasks"), 2);
    /* tools of its steps, summed, the busiest first, extern's left out */
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (json_object_get (al, "tools"), 0),
                             "name")),
                         "bwa");
    assert_true (num (json_array_get (json_object_get (al, "tools"), 0), "cpu_"
                                                                         "s")
                 == 9500);
    /* the scheduler's own slurmstepd is no tool of the task */
    assert_int_equal (json_array_size (json_object_get (al, "tools")), 2);
    so = process (view, "sort");
    assert_int_equal (num (so, "tasks"), 2);
    assert_int_equal (num (so, "steps"), 3);
    assert_int_equal (json_integer_value (
                          json_object_get (json_object_get (so, "causes"),
                                           "OUT_OF_MEMORY")),
                      1);
    /* a batch script that runs srun: its srun step is the one diagnosed,
     * and next time names both step groups, as recommendations do
     */
    /* a failed task's outcome in sacct's words, none for the others */
    assert_string_equal (json_string_value (
                             json_object_get (task (view, "11"), "outcome")),
                         "FAILED (exit 2)");
    assert_string_equal (json_string_value (
                             json_object_get (task (view, "12"), "outcome")),
                         "OUT_OF_MEMORY");
    assert_string_equal (json_string_value (
                             json_object_get (task (view, "12"), "cause")),
                         "oom");
    assert_null (json_object_get (task (view, "13"), "outcome"));
    assert_null (json_object_get (task (view, "13"), "cause"));
    t = task (view, "13");
    assert_string_equal (json_string_value (json_object_get (t, "diagnosed_"
                                                                "step")),
                         "0");
    assert_string_equal (json_string_value (json_object_get (t, "state")), "COM"
                                                                           "PLE"
                                                                           "TE"
                                                                           "D");
    assert_int_equal (json_array_size (json_object_get (so, "next_time")), 2);
    json_array_foreach (json_object_get (so, "next_time"), i, pr) assert_true (
        !strcmp (json_string_value (json_object_get (pr, "group")), "sort/"
                                                                    "batch")
        || !strcmp (json_string_value (json_object_get (pr, "group")), "sort/"
                                                                       "0"));
    /* unknown stays unknown: plot's CPU time was not measured */
    pl = process (view, "plot");
    assert_null (json_object_get (pl, "cpu_eff"));
    assert_null (json_object_get (task (view, "14"), "cpu_eff"));
    /* shares add up to 100 %, and the processes' figures to the run's */
    json_array_foreach (json_object_get (view, "processes"), i, pr)
    {
        cpu += num (pr, "cpu_share_pct");
        money += num (pr, "cost_share_pct");
    }
    assert_true (fabs (cpu - 100) < 1e-9);
    assert_true (fabs (money - 100) < 1e-9);
    assert_true (
        fabs (num (json_object_get (json_object_get (al, "figures"), "money"),
                   "allocated")
              + num (json_object_get (json_object_get (so, "figures"), "money"),
                     "allocated")
              + num (json_object_get (json_object_get (pl, "figures"), "money"),
                     "allocated")
              - num (json_object_get (json_object_get (view, "run"), "money"),
                     "allocated"))
        < 1e-9);
    /* the slowest first */
    assert_int_equal (json_array_size (json_object_get (view, "slowest")), 5);
    assert_string_equal (json_string_value (
                             json_array_get (json_object_get (view, "slowest"),
                                             0)),
                         "10");
    assert_string_equal (json_string_value (
                             json_array_get (json_object_get (view, "slowest"),
                                             4)),
                         "14");
    json_decref (view);
}

static void test_errors (void **state)
{
    tr_stepsum_t rows[NROWS];
    const tr_stepsum_t *p[NROWS];
    tr_error_t error;

    (void)state;
    fill (rows, p);
    errno = 0;
    assert_null (tr_run_view (p, NROWS, "nope", NULL, &error));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (error.text, "no run 'nope'"));
    /* one id, two users: two runs, never one view */
    rows[8].uid = 1001;
    rows[8].user = "bob";
    errno = 0;
    assert_null (tr_run_view (p, NROWS, "r1", NULL, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "several users"));
    assert_null (tr_run_view (NULL, 1, "r1", NULL, &error));
    assert_int_equal (errno, EINVAL);
}

/* The id as --runs cuts it ("align-20261128-13+") names its run when it
 * names one; when it is the start of several, it says so.
 */
static void test_cut_id (void **state)
{
    tr_stepsum_t rows[NROWS];
    const tr_stepsum_t *p[NROWS];
    tr_error_t error;
    json_t *view;

    (void)state;
    fill (rows, p);
    for (int i = 0; i < NROWS; i++)
        if (!strcmp (rows[i].run_id, "r1"))
            rows[i].run_id = "align-20261128-135424-7b3f";
    rows[7].run_id = "align-20261129-101010-aa00";
    assert_non_null (
        view = tr_run_view (p, NROWS, "align-20261128-13+", NULL, &error));
    json_decref (view);
    errno = 0;
    assert_null (tr_run_view (p, NROWS, "align-2026112+", NULL, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "is the start of several runs"));
    /* a whole id that ends in '+' is itself first */
    rows[7].run_id = "align-2026112+";
    assert_non_null (
        view = tr_run_view (p, NROWS, "align-2026112+", NULL, &error));
    json_decref (view);
    assert_true (tr_run_id_matches ("abc", "abc", true));
    assert_false (tr_run_id_matches ("abcd", "abc+", true));
    assert_true (tr_run_id_matches ("abcd", "abc+", false));
    assert_false (tr_run_id_matches ("ab", "abc+", false));
    assert_false (tr_run_id_matches ("abc", "+", false));
}

static void test_gantt_cols (void **state)
{
    int c0, c1;

    (void)state;
    assert_int_equal (tr_run_gantt_cols (0, 100, 10, 0, 100, &c0, &c1), 0);
    assert_int_equal (c0, 0);
    assert_int_equal (c1, 9);
    assert_int_equal (tr_run_gantt_cols (0, 100, 10, 50, 60, &c0, &c1), 0);
    assert_int_equal (c0, 5);
    assert_int_equal (c1, 5);
    assert_int_equal (tr_run_gantt_cols (0, 100, 10, 45, 61, &c0, &c1), 0);
    assert_int_equal (c0, 4);
    assert_int_equal (c1, 6);
    /* a moment is one column, the last one included */
    assert_int_equal (tr_run_gantt_cols (0, 100, 10, 100, 100, &c0, &c1), 0);
    assert_int_equal (c0, 9);
    assert_int_equal (c1, 9);
    assert_int_equal (tr_run_gantt_cols (0, 100, 57, 0, 1, &c0, &c1), 0);
    assert_int_equal (c0, 0);
    assert_int_equal (c1, 0);
    /* still running: to the end of the axis */
    assert_int_equal (tr_run_gantt_cols (0, 100, 10, 20, NAN, &c0, &c1), 0);
    assert_int_equal (c0, 2);
    assert_int_equal (c1, 9);
    /* an axis of no length */
    assert_int_equal (tr_run_gantt_cols (5, 5, 10, 5, 5, &c0, &c1), 0);
    assert_int_equal (c0, 0);
    assert_int_equal (c1, 0);
    errno = 0;
    assert_int_equal (tr_run_gantt_cols (0, 100, 0, 0, 1, &c0, &c1), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_run_gantt_cols (0, 100, 10, NAN, 1, &c0, &c1), -1);
    assert_int_equal (tr_run_gantt_mark ("OUT_OF_MEMORY"), 'M');
    assert_int_equal (tr_run_gantt_mark ("COMPLETED"), '=');
    assert_int_equal (tr_run_gantt_mark ("NODE_FAIL"), 'N');
    assert_int_equal (tr_run_gantt_mark ("INCOMPLETE"), '?');
}

static void test_text (void **state)
{
    tr_stepsum_t rows[NROWS];
    const tr_stepsum_t *p[NROWS];
    json_t *view;
    tr_error_t error;
    char *text = NULL, *line, *save = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    fill (rows, p);
    rows[8].process = "a_process_name_much_longer_than_twenty_columns";
    /* what a job names reaches the terminal as visible escapes */
    rows[2].node = "n\x1b]0;owned\x07\nFake: line";
    assert_non_null (view = tr_run_view (p, NROWS, "r1", NULL, &error));
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_run_view_print (f, view, 80, &error), 0);
    fclose (f);
    assert_non_null (strstr (text, "Run: r1\n"));
    assert_non_null (strstr (text, "Jobs: 5 (steps: 8), failed: 2\n"));
    assert_non_null (strstr (text, "align: 2 tasks, 1 failed: FAILED (exit "
                                   "2) x1\n"));
    /* each failed task with its cause class and evidence */
    assert_non_null (strstr (text, "\nFailed tasks:\n  11 (align) align: "
                                   "FAILED (exit 2) on "));
    assert_non_null (strstr (text, "tool-error: bwa (pid 7) exited 2"));
    assert_non_null (strstr (text, "\n  12 (sort) sort: OUT_OF_MEMORY on "
                                   "n1: oom: "));
    assert_non_null (strstr (text, "  Bottleneck: cpu-bound (2 of 2 tasks)\n"));
    /* no prices: the cost is unknown, never 0 */
    assert_non_null (strstr (text, "Cost: unknown (no prices)"));
    /* the unmeasured CPU */
    assert_non_null (strstr (text, "Efficiency: CPU unknown"));
    /* a line per task, the OOM-killed one marked M */
    assert_non_null (strstr (text, "12 sort"));
    assert_non_null (strstr (text, "MMM"));
    assert_non_null (strstr (text, "Slowest tasks:\n  10 (align) 01:00:00"));
    /* each failed task named: job id, process, job name and cause */
    assert_non_null (strstr (text, "\nFailed tasks:\n  11 (align) align: "
                                   "FAILED (exit 2) on n\\x1b]0;owned"));
    assert_non_null (strstr (text, "\n  12 (sort) sort: OUT_OF_MEMORY on "
                                   "n1: "));
    assert_null (strchr (text, '\x1b'));
    assert_null (strchr (text, '\x07'));
    assert_null (strstr (text, "\nFake: line"));
    assert_non_null (strstr (text, "on n\\x1b]0;owned\\x07\\nFake: line:"));
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save))
        if (strlen (line) > 80)
            fail_msg ("longer than 80 columns: %s", line);
    free (text);
    /* a wider terminal: a wider timeline */
    text = NULL;
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_run_view_print (f, view, 120, &error), 0);
    fclose (f);
    save = NULL;
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save))
        if (!strncmp (line, "10 align", 8))
            assert_int_equal (strlen (line), 120);
    free (text);
    json_decref (view);
    assert_non_null (view = json_object ());
    assert_int_equal (tr_run_view_print (stdout, view, 80, &error), -1);
    json_decref (view);
}

/* More than 20 tasks: a timeline line per process, as wide as the view */
static void test_gantt_processes (void **state)
{
    tr_stepsum_t rows[25];
    const tr_stepsum_t *p[25];
    static char ids[25][8];
    json_t *view;
    tr_error_t error;
    char *text = NULL, *line, *save = NULL;
    size_t len = 0;
    int lines = 0;
    FILE *f;

    (void)state;
    for (int i = 0; i < 25; i++) {
        snprintf (ids[i], sizeof (ids[i]), "%d", 100 + i);
        /* "a" in the first half of the run, "b" in the second */
        rows[i] = mk (ids[i], "batch", i < 12 ? "a" : "b", i < 12 ? 0 : 1000,
                      1000, 1500);
        p[i] = &rows[i];
    }
    rows[24].state = "timeout";
    assert_non_null (view = tr_run_view (p, 25, "r1", NULL, &error));
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_run_view_print (f, view, 60, &error), 0);
    fclose (f);
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        assert_true (strlen (line) <= 60);
        if (!strncmp (line, "a    |", 6)) {
            lines++;
            assert_int_equal (strlen (line), 60);
            /* the first half marked, the second blank */
            assert_int_equal (line[6], '=');
            assert_int_equal (line[6 + 26], '=');
            assert_int_equal (line[6 + 27], ' ');
            assert_int_equal (line[58], ' ');
        }
        if (!strncmp (line, "b    |", 6)) {
            lines++;
            assert_int_equal (line[6], ' ');
            /* the worst state of a column shows: one task timed out */
            assert_int_equal (line[58], 'T');
        }
        assert_true (strncmp (line, "100 ", 4));
    }
    assert_int_equal (lines, 2);
    free (text);
    json_decref (view);
}

/* The page: a bar per task, and what a job names escaped */
static void test_html (void **state)
{
    tr_stepsum_t rows[NROWS];
    const tr_stepsum_t *p[NROWS];
    struct tr_html_opts ho = { .now = 1e9 };
    json_t *view;
    tr_error_t error;
    char *text = NULL;
    const char *at;
    size_t len = 0, bars = 0;
    FILE *f;

    (void)state;
    fill (rows, p);
    rows[8].process = "<script>alert(1)</script>";
    rows[8].node = "n\"2";
    assert_non_null (view = tr_run_view (p, NROWS, "r1", NULL, &error));
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_html_run_report (f, view, &ho), 0);
    fclose (f);
    assert_null (strstr (text, "<script"));
    assert_non_null (strstr (text, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_null (strstr (text, "n\"2"));
    for (at = text; (at = strstr (at, "\" data-job=\"")); at++)
        bars++;
    assert_int_equal (bars, 5);
    /* two nodes: n1 and n"2, both labelled */
    assert_non_null (strstr (text, ">n&quot;2</text>"));
    free (text);
    json_decref (view);
    assert_non_null (view = json_array ());
    assert_int_equal (tr_html_run_report (stdout, view, NULL), -1);
    json_decref (view);
}

/* A task whose node failed (the record "incomplete", the reason the
 * scheduler's NODE_FAIL: state NODE_FAIL, tr_states_of) is NODE_FAIL in
 * the view's JSON, its text, the Gantt, the page and the Nextflow trace;
 * the page colours each state by its rank.
 */
static void test_node_fail (void **state)
{
    tr_stepsum_t rows[NROWS];
    const tr_stepsum_t *p[NROWS];
    struct tr_html_opts ho = { .now = 1e9 };
    json_t *view;
    tr_error_t error;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    fill (rows, p);
    rows[8].state = "NODE_FAIL";
    rows[8].reason = "the scheduler reports the job NODE_FAIL";
    rows[8].cause = "node-failure";
    assert_non_null (view = tr_run_view (p, NROWS, "r1", NULL, &error));
    assert_string_equal (json_string_value (
                             json_object_get (task (view, "14"), "state")),
                         "NODE_FAIL");
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_run_view_print (f, view, 100, &error), 0);
    fclose (f);
    assert_non_null (strstr (text, "NODE_FAIL"));
    assert_null (strstr (text, "CANCELLED"));
    assert_non_null (strstr (text, "N node failed"));
    free (text);
    text = NULL;
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_html_run_report (f, view, &ho), 0);
    fclose (f);
    /* COMPLETED good, FAILED, OUT_OF_MEMORY and NODE_FAIL bad */
    assert_non_null (strstr (text, "class=\"gb\" data-job=\"10\""));
    assert_non_null (strstr (text, "class=\"gb bad\" data-job=\"11\""));
    assert_non_null (strstr (text, "class=\"gb bad\" data-job=\"12\""));
    assert_non_null (strstr (text, "class=\"gb bad\" data-job=\"14\""));
    free (text);
    json_decref (view);
    assert_non_null (text = tr_nftrace_text (p, NROWS, &len, &error));
    assert_non_null (strstr (text, "\t14\tplot (1)\tFAILED\t"));
    free (text);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_processes),       cmocka_unit_test (test_errors),
        cmocka_unit_test (test_gantt_cols),      cmocka_unit_test (test_text),
        cmocka_unit_test (test_gantt_processes), cmocka_unit_test (test_html),
        cmocka_unit_test (test_node_fail),       cmocka_unit_test (test_cut_id),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
