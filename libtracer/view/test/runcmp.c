/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for runcmp.c and the drift test it shares with regressions
 * (recommend.c): two runs with the same work and noise show no change;
 * a process slowed 2x (or made 2x faster) is flagged on that process
 * only; a process in one run only; several steps of a job make one
 * task; the errors (unknown run, the same run twice, a run of two
 * users, different pipelines); the exact text and parsable output; one
 * row per run and regressions over a pipeline's runs; the Nextflow
 * trace (nftrace.c): Nextflow's duration and size formats, the header
 * and a row exactly.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/view/nftrace.h"
#include "libtracer/record/query.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/view/runcmp.h"
#include "libtracer/record/stepsum.h"

#define MAXROWS 512

struct rows {
    tr_stepsum_t row[MAXROWS];
    const tr_stepsum_t *ptr[MAXROWS];
    char id[MAXROWS][16];
    size_t n;
};

/* A completed batch step of a new job of run in process, started at
 * start_s, running elapsed seconds using cpu seconds.
 */
static tr_stepsum_t *task (struct rows *r, const char *run, const char *proc,
                           double start_s, double elapsed, double cpu)
{
    tr_stepsum_t *row;

    assert_true (r->n < MAXROWS);
    row = &r->row[r->n];
    tr_stepsum_init (row);
    snprintf (r->id[r->n], sizeof (r->id[0]), "%zu", 100 + r->n);
    row->cluster = "c";
    row->job_id = r->id[r->n];
    row->step_id = "batch";
    row->user = "alice";
    row->uid = 1000;
    row->run_id = run;
    row->pipeline = "proj";
    row->process = proc;
    row->group = proc;
    row->state = "completed";
    row->start_ms = 1.7e12 + start_s * 1000;
    row->end_ms = row->start_ms + elapsed * 1000;
    row->elapsed_s = elapsed;
    row->cpu_s = cpu;
    row->mem_peak_bytes = 1e8;
    row->read_bytes = 1e6;
    row->write_bytes = 2e6;
    r->ptr[r->n] = row;
    r->n++;
    return row;
}

/* Deterministic noise in [-amp, amp]. */
static double noise (unsigned *seed, double amp)
{
    *seed = *seed * 1103515245u + 12345u;
    return amp * (((*seed >> 16) & 0x7fff) / 16383.5 - 1.0);
}

/* Run id with 8 tasks each of align (60 s), sort (20 s) and call
 * (5 s, times slow), every figure with 10 % noise.
 */
static void pipeline_run (struct rows *r, const char *id, double t0,
                          double slow, unsigned seed)
{
    static const char *procs[] = { "align", "sort", "call" };
    static const double base[] = { 60, 20, 5 };

    for (int p = 0; p < 3; p++)
        for (int i = 0; i < 8; i++) {
            double k = (p == 2 ? slow : 1) * (1 + noise (&seed, 0.1));
            tr_stepsum_t *row = task (r, id, procs[p], t0 + 100 * p,
                                      base[p] * k, base[p] * k * 0.9);

            row->mem_peak_bytes = 1e8 * (1 + noise (&seed, 0.1));
        }
}

static void opts (struct tr_recommend_regress_opts *o)
{
    tr_recommend_regress_opts_default (o);
    o->min_history = 1;
}

static json_t *proc (json_t *cmp, const char *name)
{
    size_t i;
    json_t *p;

    json_array_foreach (json_object_get (cmp, "processes"), i, p)
        if (!strcmp (json_string_value (json_object_get (p, "process")), name))
            return p;
    return NULL;
}

static size_t nchanges (json_t *cmp, const char *name)
{
    return json_array_size (json_object_get (proc (cmp, name), "changes"));
}

static void test_drift (void **state)
{
    struct tr_recommend_regress_opts o;
    struct tr_drift d;
    double same[] = { 10, 10, 10, 10, 10 };
    double noisy[] = { 9, 10, 11, 10, 10.5 };
    double zero[] = { 0, 0, 0 };

    (void)state;
    tr_recommend_regress_opts_default (&o);
    /* a constant history: the floor (5 % of the median) keeps z sane */
    assert_int_equal (tr_recommend_drift (10.4, same, 5, &o, &d),
                      TR_DRIFT_NONE);
    assert_true (fabs (d.z - 0.8) < 1e-9);
    assert_int_equal (tr_recommend_drift (20, noisy, 5, &o, &d), TR_DRIFT_UP);
    assert_true (fabs (d.ratio - 2) < 1e-9);
    assert_true (fabs (d.median - 10) < 1e-9);
    assert_int_equal (tr_recommend_drift (5, noisy, 5, &o, &d),
                      TR_DRIFT_DOWN);
    /* far in z but not in ratio: not a change worth a look */
    assert_int_equal (tr_recommend_drift (14, same, 5, &o, &d),
                      TR_DRIFT_NONE);
    assert_int_equal (tr_recommend_drift (20, noisy, 4, &o, &d),
                      TR_DRIFT_NOT);
    assert_true (isnan (d.z));
    assert_int_equal (tr_recommend_drift (20, zero, 3, &o, &d), TR_DRIFT_NOT);
    assert_int_equal (tr_recommend_drift (NAN, noisy, 5, &o, &d),
                      TR_DRIFT_NOT);
}

static void test_noise (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    tr_stepsum_t *t;
    json_t *cmp;

    (void)state;
    r.n = 0;
    pipeline_run (&r, "R1", 0, 1, 1);
    pipeline_run (&r, "R2", 3600, 1, 2);
    /* three times as long and as much I/O, but 0.4 s and 8 KiB: noise */
    t = task (&r, "R1", "tiny", 0, 0.2, 0.1);
    t->read_bytes = 4096;
    t->write_bytes = 0;
    t = task (&r, "R2", "tiny", 3600, 0.6, 0.3);
    t->read_bytes = 12288;
    t->write_bytes = 0;
    opts (&o);
    cmp = tr_run_compare (r.ptr, r.n, "R1", "R2", &o, &error);
    assert_non_null (cmp);
    assert_true (json_is_true (json_object_get (cmp, "same_pipeline")));
    assert_int_equal (json_array_size (json_object_get (cmp, "processes")), 4);
    assert_int_equal (nchanges (cmp, "tiny"), 0);
    assert_int_equal (nchanges (cmp, "align"), 0);
    assert_int_equal (nchanges (cmp, "sort"), 0);
    assert_int_equal (nchanges (cmp, "call"), 0);
    assert_int_equal (json_integer_value (json_object_get (
                          json_object_get (proc (cmp, "align"), "b"), "tasks")),
                      8);
    json_decref (cmp);
}

/* One task per process in each run shows no spread of its own: a short
 * task 1.7 s, then 2.7 s (a busy node), is noise; 2 s, then 6.5 s, is
 * not.
 */
static void test_one_task_each (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    json_t *cmp;

    (void)state;
    r.n = 0;
    task (&r, "S1", "sort", 0, 1.7, 1.7);
    task (&r, "S2", "sort", 3600, 2.7, 2.7);
    task (&r, "S3", "sort", 7200, 6.5, 6.5);
    task (&r, "S0", "sort", 10800, 2.0, 2.0);
    opts (&o);
    assert_non_null (cmp = tr_run_compare (r.ptr, r.n, "S1", "S2", &o,
                                           &error));
    assert_int_equal (nchanges (cmp, "sort"), 0);
    json_decref (cmp);
    assert_non_null (cmp = tr_run_compare (r.ptr, r.n, "S0", "S3", &o,
                                           &error));
    assert_int_equal (nchanges (cmp, "sort"), 2);
    json_decref (cmp);
}

static void test_slowed (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    json_t *cmp, *ch;

    (void)state;
    r.n = 0;
    pipeline_run (&r, "R1", 0, 1, 1);
    pipeline_run (&r, "R2", 3600, 2, 2);
    pipeline_run (&r, "R3", 7200, 0.5, 3);
    opts (&o);
    cmp = tr_run_compare (r.ptr, r.n, "R1", "R2", &o, &error);
    assert_non_null (cmp);
    assert_int_equal (nchanges (cmp, "align"), 0);
    assert_int_equal (nchanges (cmp, "sort"), 0);
    /* elapsed and CPU per task doubled; memory and I/O did not move */
    ch = json_object_get (proc (cmp, "call"), "changes");
    assert_int_equal (json_array_size (ch), 2);
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (ch, 0), "metric")),
                         "elapsed_s");
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (ch, 0), "direction")),
                         "up");
    assert_true (json_real_value (json_object_get (json_array_get (ch, 0),
                                                   "ratio"))
                 > 1.7);
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (ch, 1), "metric")),
                         "cpu_s");
    json_decref (cmp);
    /* twice as fast: a change too, downwards */
    cmp = tr_run_compare (r.ptr, r.n, "R1", "R3", &o, &error);
    assert_non_null (cmp);
    ch = json_object_get (proc (cmp, "call"), "changes");
    assert_int_equal (json_array_size (ch), 2);
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (ch, 0), "direction")),
                         "down");
    assert_int_equal (nchanges (cmp, "align"), 0);
    json_decref (cmp);
}

static void test_one_side (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    json_t *cmp, *p;

    (void)state;
    r.n = 0;
    task (&r, "R1", "align", 0, 10, 9);
    task (&r, "R1", "old", 0, 10, 9);
    task (&r, "R2", "align", 100, 10, 9);
    task (&r, "R2", "new", 100, 10, 9);
    task (&r, "R2", "new", 100, 12, 9)->state = "failed";
    opts (&o);
    cmp = tr_run_compare (r.ptr, r.n, "R1", "R2", &o, &error);
    assert_non_null (cmp);
    p = proc (cmp, "old");
    assert_string_equal (json_string_value (json_object_get (p, "in")), "a");
    assert_non_null (json_object_get (p, "a"));
    assert_null (json_object_get (p, "b"));
    assert_null (json_object_get (p, "changes"));
    p = proc (cmp, "new");
    assert_string_equal (json_string_value (json_object_get (p, "in")), "b");
    assert_null (json_object_get (p, "a"));
    assert_int_equal (json_integer_value (json_object_get (
                          json_object_get (p, "b"), "failed")),
                      1);
    assert_true (fabs (json_real_value (json_object_get (
                           json_object_get (p, "b"), "elapsed_total_s"))
                       - 22)
                 < 1e-9);
    assert_true (fabs (json_real_value (json_object_get (
                           json_object_get (p, "b"), "elapsed_median_s"))
                       - 11)
                 < 1e-9);
    assert_true (fabs (json_real_value (json_object_get (
                           json_object_get (p, "b"), "io_bytes"))
                       - 6e6)
                 < 1e-3);
    assert_int_equal (json_integer_value (json_object_get (
                          json_object_get (cmp, "b"), "failed")),
                      1);
    json_decref (cmp);
}

/* A job's steps are one task: CPU summed, elapsed the job's span. */
static void test_steps_one_task (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    tr_stepsum_t *s;
    json_t *cmp, *a;

    (void)state;
    r.n = 0;
    task (&r, "R1", "align", 0, 10, 4);
    s = task (&r, "R1", "align", 0, 10, 5);
    s->job_id = r.id[0];
    s->step_id = "0";
    s->read_bytes = s->write_bytes = NAN;
    task (&r, "R2", "align", 100, 10, 9);
    opts (&o);
    cmp = tr_run_compare (r.ptr, r.n, "R1", "R2", &o, &error);
    assert_non_null (cmp);
    a = json_object_get (proc (cmp, "align"), "a");
    assert_int_equal (json_integer_value (json_object_get (a, "tasks")), 1);
    assert_true (fabs (json_real_value (json_object_get (a, "cpu_s")) - 9)
                 < 1e-9);
    assert_int_equal (nchanges (cmp, "align"), 0);
    json_decref (cmp);
}

static void test_errors (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    json_t *cmp;

    (void)state;
    r.n = 0;
    task (&r, "R1", "align", 0, 10, 9);
    task (&r, "R2", "align", 100, 10, 9)->pipeline = "other";
    opts (&o);
    errno = 0;
    assert_null (tr_run_compare (r.ptr, r.n, "R1", "R9", &o, &error));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (tr_error_str (&error), "no run R9"));
    assert_null (tr_run_compare (r.ptr, r.n, "R1", "R1", &o, &error));
    assert_int_equal (errno, EINVAL);
    assert_null (tr_run_compare (r.ptr, r.n, "R1", "", &o, &error));
    assert_int_equal (errno, EINVAL);
    /* different pipelines: compared, and said */
    cmp = tr_run_compare (r.ptr, r.n, "R1", "R2", &o, &error);
    assert_non_null (cmp);
    assert_true (json_is_false (json_object_get (cmp, "same_pipeline")));
    json_decref (cmp);
    /* another user's run of the same id: not one run */
    task (&r, "R1", "align", 50, 10, 9)->uid = 1001;
    assert_null (tr_run_compare (r.ptr, r.n, "R1", "R2", &o, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (tr_error_str (&error), "several users"));
}

static char *print (json_t *cmp, bool parsable)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    assert_non_null (f);
    assert_int_equal (tr_run_compare_print (f, cmp, parsable), 0);
    fclose (f);
    return buf;
}

static void test_print (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    json_t *cmp;
    char *out;

    (void)state;
    r.n = 0;
    task (&r, "R1", "align", 0, 10, 9);
    task (&r, "R1", "a-very-long-process-name", 0, 10, 9);
    task (&r, "R2", "align", 100, 20, 18);
    opts (&o);
    cmp = tr_run_compare (r.ptr, r.n, "R1", "R2", &o, &error);
    assert_non_null (cmp);
    out = print (cmp, true);
    assert_string_equal (
        out,
        "Process|Run|Tasks|Failed|ElapsedMedian|ElapsedTotal|CPUTime|PeakMem|"
        "IO|Changes\n"
        "a-very-long-process-name|A|1|0|00:00:10|00:00:10|00:00:09|100000000|"
        "3000000|\n"
        "a-very-long-process-name|B||||||||\n"
        "align|A|1|0|00:00:10|00:00:10|00:00:09|100000000|3000000|\n"
        "align|B|1|0|00:00:20|00:00:20|00:00:18|100000000|3000000|"
        "elapsed_s+,cpu_s+\n");
    free (out);
    out = print (cmp, false);
    assert_non_null (strstr (out,
                             "\nProcess          Run Tasks Fail   Median    "
                             "Total      CPU   PeakMem       I/O\n"));
    assert_non_null (strstr (out, "\na-very-long-pro+ A       1    0 "
                                  "00:00:10 00:00:10 00:00:09  95.4 MiB   "
                                  "2.9 MiB\n                 B   (not in "
                                  "this run)\n"));
    assert_non_null (strstr (out, "\n                 B*      1    0 00:00:20"));
    assert_non_null (strstr (out, "  align: elapsed up x2.00 per task, median "
                                  "20.0 s (A 10.0 s), z 5.0\n"));
    for (char *l = out; *l; l = strchr (l, '\n') + 1)
        assert_true (strchr (l, '\n') - l <= 80);
    free (out);
    json_decref (cmp);
}

static void test_run_rows (void **state)
{
    static struct rows r;
    struct tr_recommend_regress_opts o;
    const tr_stepsum_t *v[16];
    static const char *ids[] = { "R1", "R2", "R3", "R4", "R5", "R6", "R7" };
    tr_rowset_t *set = tr_rowset_create ();
    tr_error_t error;
    json_t *regs, *reg;

    (void)state;
    r.n = 0;
    for (int k = 0; k < 7; k++)
        pipeline_run (&r, ids[k], 3600.0 * k, k == 6 ? 40 : 1,
                      (unsigned)k + 1);
    task (&r, "X1", "x", 0, 10, 9)->pipeline = ""; /* no pipeline: no row */
    assert_non_null (set);
    assert_int_equal (tr_run_rows (r.ptr, r.n, set, &error), 0);
    assert_int_equal (set->n, 7);
    assert_string_equal (set->rows[0].job_id, "R1");
    assert_string_equal (set->rows[0].group, "proj");
    assert_string_equal (set->rows[0].state, "completed");
    /* the run's span: the last process starts at 200 s */
    assert_true (set->rows[0].elapsed_s > 200 && set->rows[0].elapsed_s < 206);
    for (size_t i = 0; i < set->n; i++)
        v[i] = &set->rows[i];
    tr_recommend_regress_opts_default (&o);
    regs = tr_recommend_regressions (v, set->n, &o, &error);
    assert_non_null (regs);
    assert_int_equal (json_integer_value (json_object_get (regs,
                                                           "runs_checked")),
                      2);
    /* only the run whose call process took 40 times as long: twice the
     * span
     */
    assert_true (json_array_size (json_object_get (regs, "regressions")) >= 1);
    reg = json_array_get (json_object_get (regs, "regressions"), 0);
    assert_string_equal (json_string_value (json_object_get (reg, "job_id")),
                         "R7");
    assert_string_equal (json_string_value (json_object_get (reg, "metric")),
                         "elapsed_s");
    for (size_t i = 0;
         i < json_array_size (json_object_get (regs, "regressions")); i++)
        assert_string_equal (json_string_value (json_object_get (
                                 json_array_get (json_object_get (
                                                     regs, "regressions"),
                                                 i),
                                 "job_id")),
                             "R7");
    json_decref (regs);
    tr_rowset_destroy (set);
}

static void test_nf_formats (void **state)
{
    char b[64];

    (void)state;
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), 450), "450ms");
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), 0), "0ms");
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), 5240), "5.2s");
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), 30000), "30s");
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), 65000), "1m 5s");
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), 3600000), "1h");
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), 90061000),
                         "1d 1h 1m 1s");
    assert_string_equal (tr_nftrace_duration (b, sizeof (b), NAN), "-");
    assert_string_equal (tr_nftrace_memory (b, sizeof (b), 0), "0");
    assert_string_equal (tr_nftrace_memory (b, sizeof (b), 512), "512 B");
    assert_string_equal (tr_nftrace_memory (b, sizeof (b), 121 * 1024.0),
                         "121 KB");
    assert_string_equal (tr_nftrace_memory (b, sizeof (b), 29.8 * 1048576),
                         "29.8 MB");
    assert_string_equal (tr_nftrace_memory (b, sizeof (b), 1073741824.0 * 1.25),
                         "1.2 GB");
    assert_string_equal (tr_nftrace_memory (b, sizeof (b), -1), "-");
}

static void test_nf_trace (void **state)
{
    static struct rows r;
    tr_error_t error;
    tr_stepsum_t *t, *s;
    size_t len;
    char *text;

    (void)state;
    setenv ("TZ", "UTC", 1);
    tzset ();
    r.n = 0;
    /* submitted second, listed second; two steps make one task */
    t = task (&r, "R1", "align", 120, 65, 32.5);
    t->submit_ms = t->start_ms - 5000;
    t->exit_code = 0;
    t->partition = "debug";
    t->req_cores = 2;
    t->req_mem_bytes = 4294967296.0;
    t->time_limit_s = 3600;
    t->rchar = 1048576;
    t->wchar = 0;
    t->job_name = "align\tx";
    s = task (&r, "R1", "align", 125, 60, 30);
    s->job_id = t->job_id;
    s->step_id = "0";
    s->read_bytes = s->write_bytes = NAN;
    t = task (&r, "R1", "align", 0, 10.25, 9);
    t->state = "failed";
    t->exit_code = 3;
    text = tr_nftrace_text (r.ptr, r.n, &len, &error);
    assert_non_null (text);
    assert_int_equal (strlen (text), len);
    assert_string_equal (
        text,
        "task_id\thash\tnative_id\tname\tstatus\texit\tsubmit\tduration\t"
        "realtime\t%cpu\tpeak_rss\tpeak_vmem\trchar\twchar\tprocess\ttag\t"
        "start\tcomplete\tqueue\tcpus\tmemory\ttime\tread_bytes\t"
        "write_bytes\n"
        "1\t-\t102\talign (1)\tFAILED\t3\t2023-11-14 22:13:20.000\t10.3s\t"
        "10.3s\t87.8%\t95.4 MB\t-\t-\t-\talign\t-\t"
        "2023-11-14 22:13:20.000\t2023-11-14 22:13:30.250\t-\t-\t-\t-\t"
        "976.6 KB\t1.9 MB\n"
        "2\t-\t100\talign (2)\tCOMPLETED\t0\t2023-11-14 22:15:15.000\t"
        "1m 10s\t1m 5s\t96.2%\t95.4 MB\t-\t1 MB\t0\talign\t-\t"
        "2023-11-14 22:15:20.000\t2023-11-14 22:16:25.000\tdebug\t2\t4 GB\t"
        "1h\t976.6 KB\t1.9 MB\n");
    free (text);
    /* a job's name is its own text: a tab or newline in it cannot make
     * a column or a line
     */
    r.n = 0;
    t = task (&r, "R1", "", 0, 1, 1);
    t->job_name = "x\ty\nz\r";
    text = tr_nftrace_text (r.ptr, r.n, &len, &error);
    assert_non_null (text);
    assert_non_null (strstr (text, "\n1\t-\t100\tx y z \tCOMPLETED\t"));
    assert_non_null (strstr (text, "\t-\tx y z \t-\t2023-"));
    assert_int_equal (strchr (strchr (text, '\n') + 1, '\n')
                          - strchr (text, '\n'),
                      strlen (strchr (text, '\n')) - 1);
    free (text);
    /* nothing selected: the header alone */
    text = tr_nftrace_text (NULL, 0, &len, &error);
    assert_non_null (text);
    assert_int_equal (len, strlen (text));
    assert_non_null (strstr (text, "write_bytes\n"));
    free (text);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_drift),
        cmocka_unit_test (test_noise),
        cmocka_unit_test (test_slowed),
        cmocka_unit_test (test_one_task_each),
        cmocka_unit_test (test_one_side),
        cmocka_unit_test (test_steps_one_task),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_print),
        cmocka_unit_test (test_run_rows),
        cmocka_unit_test (test_nf_formats),
        cmocka_unit_test (test_nf_trace),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
