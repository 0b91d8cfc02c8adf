/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for recommend.c: the rounding tables, the closed loop (a
 * padded request comes back down to what the step uses), OOM and
 * timeout runs as lower bounds, a CPU-starved step that must not shrink,
 * confidence, last_n, savings arithmetic, the exact output of every
 * formatter, regressions against noisy and constant histories, option
 * errors and an allocation failure sweep.  Rows are built with
 * tr_stepsum_init and a few members set, oldest first.
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
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/judge/recommend.h"
#include "libtracer/view/recommend_print.h"
#include "libtracer/record/stepsum.h"

#define MiB 1048576.0
#define GiB 1073741824.0
#define MAXROWS 128

/* A set of rows, oldest first (end times one minute apart). */
struct runs {
    tr_stepsum_t row[MAXROWS];
    const tr_stepsum_t *ptr[MAXROWS];
    char id[MAXROWS][16];
    size_t n;
};

static tr_stepsum_t *add (struct runs *r, const char *group, const char *state)
{
    tr_stepsum_t *row;

    assert_true (r->n < MAXROWS);
    row = &r->row[r->n];
    tr_stepsum_init (row);
    snprintf (r->id[r->n], sizeof (r->id[0]), "%zu", 1000 + r->n);
    row->job_id = r->id[r->n];
    row->step_id = "batch";
    row->group = group;
    row->state = state;
    row->nodes = 1;
    row->tasks = 1;
    row->start_ms = 1.7e12 + 60000.0 * (double)r->n;
    row->end_ms = row->start_ms + 30000;
    r->ptr[r->n] = row;
    r->n++;
    return row;
}

/* A completed run asking cpus/mem/time and using cpu_s, peak, elapsed. */
static tr_stepsum_t *run (struct runs *r,
                          const char *group,
                          double req_cpus,
                          double req_mem,
                          double limit_s,
                          double cpu_s,
                          double peak,
                          double elapsed)
{
    tr_stepsum_t *row = add (r, group, "completed");

    row->req_cpus_per_task = req_cpus;
    row->req_cores = req_cpus;
    row->req_mem_bytes = req_mem;
    row->time_limit_s = limit_s;
    row->cpu_s = cpu_s;
    row->mem_peak_bytes = peak;
    row->elapsed_s = elapsed;
    return row;
}

static json_t *recommend (struct runs *r, const struct tr_recommend_opts *o)
{
    struct tr_recommend_opts def;
    tr_error_t err;
    json_t *recs;

    if (!o) {
        tr_recommend_opts_default (&def);
        o = &def;
    }
    recs = tr_recommend_groups (r->ptr, r->n, o, &err);
    if (!recs)
        fail_msg ("tr_recommend_groups: %s", err.text);
    return recs;
}

/* The member at a dotted path ("groups.0.mem.recommend"). */
static json_t *at (json_t *o, const char *path)
{
    char buf[256], *save = NULL, *part;

    assert_true (strlen (path) < sizeof (buf));
    memcpy (buf, path, strlen (path) + 1);
    for (part = strtok_r (buf, ".", &save); part && o;
         part = strtok_r (NULL, ".", &save)) {
        if (json_is_array (o)) {
            char *end;
            long i = strtol (part, &end, 10);
            assert_true (*end == '\0' && i >= 0);
            o = json_array_get (o, (size_t)i);
        }
        else
            o = json_object_get (o, part);
    }
    return o;
}

static double dv (json_t *o, const char *path)
{
    json_t *v = at (o, path);

    if (!json_is_number (v))
        fail_msg ("%s: not a number", path);
    return json_number_value (v);
}

static const char *sv (json_t *o, const char *path)
{
    json_t *v = at (o, path);

    if (!json_is_string (v))
        fail_msg ("%s: not a string", path);
    return json_string_value (v);
}

/* True when one of the group's notes contains text. */
static bool has_note (json_t *g, const char *text)
{
    json_t *n;
    size_t i;

    json_array_foreach (json_object_get (g, "notes"), i,
                        n) if (strstr (json_string_value (n),
                                       text)) return true;
    return false;
}

typedef int (*print_f) (FILE *out, json_t *recs);

static char *print_to_string (print_f print, json_t *recs)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);

    assert_non_null (f);
    assert_int_equal (print (f, recs), 0);
    assert_int_equal (fclose (f), 0);
    return buf;
}

static void test_rounding (void **state)
{
    static const struct {
        double in, mem;
    } mem[] = {
        { 1, 256 * MiB },
        { 240e6, 256 * MiB },
        { 256 * MiB, 256 * MiB },
        { 256 * MiB + 1, 512 * MiB },
        { 1900 * MiB, 2 * GiB },
        { 2 * GiB, 2 * GiB },
        { 2 * GiB + 1, 2560 * MiB },
        { 7.9 * GiB, 8 * GiB },
        { 8 * GiB + 1, 9 * GiB },
        { 63.5 * GiB, 64 * GiB },
        { 64 * GiB + 1, 68 * GiB },
        { 0, 0 },
        { -5, 0 },
    };
    static const struct {
        double in, t;
    } tim[] = {
        { 1, 300 },       { 300, 300 },   { 301, 600 },     { 3599, 3600 },
        { 3600, 3600 },   { 3601, 4500 }, { 21599, 21600 }, { 21601, 25200 },
        { 90000, 90000 }, { 0, 0 },
    };
    static const struct {
        double bytes;
        const char *text;
    } mtext[] = {
        { 256 * MiB, "256M" },
        { 1 * GiB, "1G" },
        { 1536 * MiB, "1536M" },
        { 2560 * MiB, "2560M" },
        { 64 * GiB, "64G" },
        { 1, "1M" },
        { 0, "0M" },
    };
    static const struct {
        double s;
        const char *text;
    } ttext[] = {
        { 300, "00:05:00" },     { 4500, "01:15:00" },    { 59.2, "00:01:00" },
        { 86400, "1-00:00:00" }, { 93600, "1-02:00:00" }, { 0, "00:00:00" },
    };
    char buf[32];

    (void)state;
    for (size_t i = 0; i < sizeof (mem) / sizeof (mem[0]); i++)
        if (tr_recommend_mem_round (mem[i].in) != mem[i].mem)
            fail_msg ("mem_round (%.17g) = %.17g, want %.17g", mem[i].in,
                      tr_recommend_mem_round (mem[i].in), mem[i].mem);
    for (size_t i = 0; i < sizeof (tim) / sizeof (tim[0]); i++)
        if (tr_recommend_time_round (tim[i].in) != tim[i].t)
            fail_msg ("time_round (%g) = %g, want %g", tim[i].in,
                      tr_recommend_time_round (tim[i].in), tim[i].t);
    for (size_t i = 0; i < sizeof (mtext) / sizeof (mtext[0]); i++) {
        assert_int_equal (tr_recommend_mem_text (buf, sizeof (buf),
                                                 mtext[i].bytes),
                          0);
        assert_string_equal (buf, mtext[i].text);
    }
    for (size_t i = 0; i < sizeof (ttext) / sizeof (ttext[0]); i++) {
        assert_int_equal (tr_recommend_time_text (buf, sizeof (buf),
                                                  ttext[i].s),
                          0);
        assert_string_equal (buf, ttext[i].text);
    }
    assert_true (isnan (tr_recommend_mem_round (NAN)));
    assert_true (isnan (tr_recommend_time_round (NAN)));
    errno = 0;
    assert_int_equal (tr_recommend_mem_text (buf, sizeof (buf), NAN), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_recommend_time_text (buf, sizeof (buf), -1), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_recommend_time_text (buf, 5, 300), -1);
    assert_int_equal (errno, ERANGE);
    errno = 0;
    assert_int_equal (tr_recommend_mem_text (buf, 3, 1536 * MiB), -1);
    assert_int_equal (errno, ERANGE);
}

/* Five runs asking 2 CPUs, 2 GB and an hour, using one CPU, about
 * 200 MB and 15 s, come back as 1 CPU, the 256M floor and 5 minutes.
 */
static void test_closed_loop (void **state)
{
    static const double peak[] = { 190e6, 200e6, 205e6, 198e6, 210e6 };
    static const double ela[] = { 14, 15, 16, 15, 15.5 };
    struct runs r = { .n = 0 };
    json_t *recs, *g;

    (void)state;
    for (int i = 0; i < 5; i++)
        run (&r, "align/batch", 2, 2 * GiB, 3600, ela[i] * 0.98, peak[i],
             ela[i]);
    recs = recommend (&r, NULL);
    g = at (recs, "groups.0");
    assert_int_equal (json_array_size (json_object_get (recs, "groups")), 1);
    assert_string_equal (sv (g, "group"), "align/batch");
    assert_string_equal (sv (g, "confidence"), "medium");
    assert_int_equal (dv (g, "runs.total"), 5);
    assert_int_equal (dv (g, "runs.used"), 5);
    assert_int_equal (dv (g, "cpus.request"), 2);
    assert_int_equal (dv (g, "cpus.recommend"), 1);
    assert_string_equal (sv (g, "cpus.text"), "1");
    assert_string_equal (sv (g, "cpus.basis"), "quantile");
    assert_true (dv (g, "mem.recommend") <= 512 * MiB);
    assert_int_equal (dv (g, "mem.recommend"), 256 * MiB);
    assert_string_equal (sv (g, "mem.text"), "256M");
    assert_string_equal (sv (g, "mem.basis"), "floor");
    assert_int_equal (dv (g, "mem.request"), 2 * GiB);
    assert_int_equal (dv (g, "mem.min"), 190e6);
    assert_int_equal (dv (g, "mem.max"), 210e6);
    assert_int_equal (dv (g, "mem.median"), 200e6);
    assert_true (fabs (dv (g, "mem.at_quantile") - 209e6) < 1);
    assert_int_equal (dv (g, "time.recommend"), 300);
    assert_string_equal (sv (g, "time.text"), "00:05:00");
    assert_int_equal (dv (g, "time.request"), 3600);
    assert_float_equal (dv (g, "cpus.median"), 0.98, 1e-9);
    assert_false (json_is_true (at (g, "cpus.starved")));
    assert_null (at (g, "mem.lower_bound"));
    assert_int_equal (json_array_size (json_object_get (g, "notes")), 0);
    assert_float_equal (dv (recs, "options.mem_quantile"), 0.95, 1e-12);
    json_decref (recs);
}

/* Memory grows run after run and the last run is OOM-killed at its 2G
 * limit: the recommendation must be above 2G, also with no headroom, and
 * after an OOM kill at least twice the limit (the series says nothing
 * about growth here).
 */
/* A step that used far less than it asked is never told to ask for
 * more: the site's minimum (256M, 5 min) applies only below the
 * request; a request under it is kept, and said as the request.
 */
static void test_never_above_request (void **state)
{
    struct runs r = { .n = 0 };
    json_t *recs, *g;

    (void)state;
    for (int i = 0; i < 5; i++)
        run (&r, "tiny/batch", 1, 200 * MiB, 120, 1, 1.2 * MiB, 10);
    for (int i = 0; i < 5; i++)
        run (&r, "small/batch", 1, 1 * GiB, 3600, 1, 1.2 * MiB, 10);
    recs = recommend (&r, NULL);
    for (int k = 0; k < 2; k++) {
        g = at (recs, k == 0 ? "groups.0" : "groups.1");
        if (!strcmp (sv (g, "group"), "tiny/batch")) {
            assert_int_equal (dv (g, "mem.recommend"), 200 * MiB);
            assert_string_equal (sv (g, "mem.basis"), "request");
            assert_int_equal (dv (g, "time.recommend"), 120);
            assert_string_equal (sv (g, "time.basis"), "request");
        }
        else {
            assert_string_equal (sv (g, "group"), "small/batch");
            assert_int_equal (dv (g, "mem.recommend"), 256 * MiB);
            assert_string_equal (sv (g, "mem.basis"), "floor");
            assert_int_equal (dv (g, "time.recommend"), 300);
            assert_string_equal (sv (g, "time.basis"), "floor");
        }
    }
    json_decref (recs);
}

static void test_oom_bound (void **state)
{
    static const struct {
        double headroom, want;
        const char *note;
    } cases[] = {
        /* 2G * 1.2 = 2.4G, but one OOM with no growth rate: 2x */
        { 0.20, 4 * GiB,
          "after OOM: --mem=4G: 2x the 2G it was killed at, a lower bound of "
          "its need (no growth rate known; 1 OOM in a row)" },
        /* exactly 2G would die again */
        { 0.0, 4 * GiB,
          "after OOM: --mem=4G: 2x the 2G it was killed at, a lower bound of "
          "its need (no growth rate known; 1 OOM in a row)" },
        /* 2G * 4 */
        { 3.0, 8 * GiB,
          "after OOM: --mem=8G: the 2G it was killed at, a lower bound of "
          "its need, +300%" },
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct tr_recommend_opts o;
        struct runs r = { .n = 0 };
        tr_stepsum_t *oom;
        json_t *recs, *g;

        for (int i = 0; i < 4; i++)
            run (&r, "grow/batch", 1, 2 * GiB, 3600, 60, (1 + 0.2 * i) * GiB,
                 60);
        oom = add (&r, "grow/batch", "oom");
        oom->req_mem_bytes = 2 * GiB;
        oom->mem_limit_bytes = 2 * GiB;
        oom->mem_peak_bytes = 2 * GiB;
        oom->elapsed_s = 50;
        oom->oom_kills = 1;
        tr_recommend_opts_default (&o);
        o.mem_headroom = cases[c].headroom;
        recs = recommend (&r, &o);
        g = at (recs, "groups.0");
        assert_true (dv (g, "mem.recommend") > 2 * GiB);
        assert_int_equal (dv (g, "mem.recommend"), cases[c].want);
        assert_string_equal (sv (g, "mem.basis"), "oom");
        assert_int_equal (dv (g, "mem.lower_bound"), 2 * GiB);
        assert_int_equal (dv (g, "runs.oom"), 1);
        assert_int_equal (dv (g, "runs.used"), 4);
        assert_int_equal (dv (g, "runs.total"), 5);
        /* one note, with the one --mem and why */
        assert_false (has_note (g, "1 run OOM-killed at up to 2G"));
        assert_true (has_note (g, cases[c].note));
        assert_int_equal (dv (g, "mem.oom_factor"), 2);
        json_decref (recs);
    }
}

/* A step whose memory grows at rate bps until it holds need bytes, then
 * runs to the end of its work (end_s in all), is run with limit bytes
 * and rerun with what tracer-report recommends until it completes.  The
 * number of reruns that took; the first recommendation in *first.
 */
static int reruns_to_complete (double limit,
                               double need,
                               double bps,
                               double end_s,
                               double time_limit_s,
                               bool series,
                               double *first)
{
    struct runs r = { .n = 0 };
    double mem = limit;

    for (int rerun = 0; rerun <= 6; rerun++) {
        tr_stepsum_t *row;
        json_t *recs;

        if (mem > need) {
            row = add (&r, "grow/0", "completed");
            row->mem_peak_bytes = need;
            row->elapsed_s = end_s;
            row->cpu_s = end_s;
        }
        else {
            row = add (&r, "grow/0", "oom");
            row->mem_peak_bytes = mem;
            row->mem_limit_bytes = mem;
            row->oom_kills = 1;
            row->elapsed_s = mem / bps;
            row->cpu_s = row->elapsed_s;
            if (series)
                row->mem_rise_Bps = bps;
        }
        row->req_mem_bytes = mem;
        row->req_cpus_per_task = row->req_cores = 1;
        row->time_limit_s = time_limit_s;
        if (mem > need)
            return rerun;
        recs = recommend (&r, NULL);
        mem = dv (recs, "groups.0.mem.recommend");
        assert_string_equal (sv (recs, "groups.0.mem.basis"), "oom");
        json_decref (recs);
        if (rerun == 0)
            *first = mem;
    }
    return 99;
}

/* OOM recovery converges: a step that keeps growing until killed needs
 * 1.5x, 3x and 8x the limit that killed it; with the memory series'
 * growth rate at the kill and a time limit (or earlier completed runs)
 * tracer's advice gets it to complete in at most two reruns, never by
 * +20% a step.  Without a growth rate it still at least doubles per OOM.
 */
static void test_oom_growth (void **state)
{
    static const double factor[] = { 1.5, 3, 8 };
    static const struct {
        double limit, bps, time_limit_s;
        bool series;
        int max_reruns_8x;
    } cases[] = {
        /* 2G limit, 50 MB/s, 10 minutes allowed */
        { 2 * GiB, 50e6, 600, true, 2 },
        /* the test cluster's case: 64M limit, 16 MB/s, 1 minute */
        { 64 * MiB, 16 * MiB, 60, true, 2 },
        /* no time limit known: as long again as it ran */
        { 2 * GiB, 50e6, NAN, true, 3 },
        /* no series: doubling only */
        { 2 * GiB, 50e6, 600, false, 3 },
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++)
        for (size_t f = 0; f < 3; f++) {
            double limit = cases[c].limit, need = factor[f] * limit, first;
            int n = reruns_to_complete (limit, need, cases[c].bps,
                                        need / cases[c].bps + 5,
                                        cases[c].time_limit_s,
                                        cases[c].series, &first);

            if (n > (f == 2 ? cases[c].max_reruns_8x : 2))
                fail_msg ("case %zu, need %.1fx: %d reruns (first %.0fM)", c,
                          factor[f], n, first / MiB);
            /* growing fast, or no series: never less than doubling, never
             * the old +20% */
            assert_true (first >= 2 * limit);
            assert_true (first <= 16 * limit || first <= 256 * MiB);
        }
}

/* The basis is stated: the rate, how far in, the expectation and its
 * source; a completed run's elapsed time is preferred to the limit.
 */
static void test_oom_growth_note (void **state)
{
    struct runs r = { .n = 0 };
    tr_stepsum_t *row;
    json_t *recs, *g;

    (void)state;
    run (&r, "grow/0", 1, 4 * GiB, 3600, 100, 3 * GiB, 100);
    row = add (&r, "grow/0", "oom");
    row->req_mem_bytes = row->mem_limit_bytes = row->mem_peak_bytes = 2 * GiB;
    row->time_limit_s = 3600;
    row->elapsed_s = 50;
    row->mem_rise_Bps = 40e6;
    row->oom_kills = 1;
    recs = recommend (&r, NULL);
    g = at (recs, "groups.0");
    /* (2G + 40 MB/s * 50 s) * 1.2 = 4.98 GB, rounded to 5G */
    assert_int_equal (dv (g, "mem.recommend"), 5 * GiB);
    assert_float_equal (dv (g, "mem.oom_growth_Bps"), 40e6, 1e-6);
    assert_int_equal (dv (g, "mem.oom_expected_s"), 100);
    assert_int_equal (dv (g, "mem.oom_streak"), 1);
    assert_true (has_note (g, "after OOM: --mem=5G: the 2G it was killed at, "
                              "a lower bound of its need, plus its rise at "
                              "the kill (40.0 MB/s over the 50 s it had left "
                              "of 100 s, completed runs), +20%, rounded up"));
    assert_string_equal (sv (g, "mem.text"), "5G");
    json_decref (recs);

    /* a second OOM in a row, memory flat at the kill: 4x */
    row = add (&r, "grow/0", "oom");
    row->req_mem_bytes = row->mem_limit_bytes = row->mem_peak_bytes = 5 * GiB;
    row->elapsed_s = 90;
    row->mem_rise_Bps = 0;
    row->oom_kills = 1;
    recs = recommend (&r, NULL);
    g = at (recs, "groups.0");
    assert_int_equal (dv (g, "mem.recommend"), 20 * GiB);
    assert_true (has_note (g, "after OOM: --mem=20G: 4x the 5G it was killed "
                              "at, a lower bound of its need (its memory no "
                              "longer rose at the kill; 2 OOMs in a row)"));
    json_decref (recs);

    /* a completed run after them: sized from it again, above the bound */
    run (&r, "grow/0", 1, 20 * GiB, 3600, 100, 6 * GiB, 100);
    recs = recommend (&r, NULL);
    g = at (recs, "groups.0");
    assert_null (json_object_get (at (g, "mem"), "oom_factor"));
    assert_true (dv (g, "mem.recommend") > 6 * GiB);
    assert_true (dv (g, "mem.recommend") <= 8 * GiB);
    json_decref (recs);
}

/* Unlimited time is never recommended: a group whose runs asked for no
 * limit is sized from the time its completed runs used, and one with no
 * completed run gets no time at all (not 365 days); the table says
 * UNLIMITED, the sbatch output leaves --time out.
 */
static void test_unlimited (void **state)
{
    struct runs r = { .n = 0 };
    json_t *recs, *g;
    char *out;

    (void)state;
    for (int i = 0; i < 3; i++)
        add (&r, "a/batch", "failed")->time_unlimited = 1;
    for (int i = 0; i < 3; i++)
        run (&r, "b/batch", 1, GiB, NAN, 100, 100 * MiB, 600 + 60 * i)
            ->time_unlimited = 1;
    recs = recommend (&r, NULL);
    g = at (recs, "groups.0");
    assert_string_equal (sv (g, "group"), "a/batch");
    assert_true (json_is_true (at (g, "time.unlimited")));
    assert_null (json_object_get (at (g, "time"), "recommend"));
    assert_null (json_object_get (at (g, "time"), "request"));
    assert_true (has_note (g, "time: no limit asked (UNLIMITED) and no "
                              "completed run: no time to recommend"));
    g = at (recs, "groups.1");
    /* p95 of 600, 660, 720 s is 714 s; +25% = 892.5 s: 15 minutes */
    assert_int_equal (dv (g, "time.recommend"), 900);
    assert_string_equal (sv (g, "time.basis"), "quantile");
    assert_true (has_note (g, "time: no limit asked (UNLIMITED); sized from "
                              "the time used"));
    out = print_to_string (tr_recommend_print_sbatch, recs);
    assert_null (strstr (out, "365"));
    assert_non_null (strstr (out, "#SBATCH --time=00:15:00\n"));
    /* only group b has a time line */
    assert_null (strstr (strstr (out, "--time=") + 1, "--time="));
    free (out);
    out = print_to_string (tr_recommend_print_table, recs);
    assert_non_null (strstr (out, "UNLIMITED -> -"));
    assert_non_null (strstr (out, "UNLIMITED -> 00:15:00"));
    free (out);
    json_decref (recs);
}

/* A step that kept 2 of its 4 CPUs busy is shrunk to 2, unless it was
 * CPU-starved (pressure or throttling above 10% of its run time).
 */
static void test_cpu_starved (void **state)
{
    /* Four cores asked, two used on average.  Waiting for a CPU makes a
     * step starved only where it kept (nearly) all four busy at once;
     * at most 2.2 at once, it waited for others' work on the node.  Its
     * own limit's throttling starves it whatever it ran at once.
     */
    /* Where a run tells its demand (running plus run-queue wait, per
     * task), that decides instead of the peak: 2,000 s of CPU and 1,900 s
     * of waiting in 1,000 s wanted 3.9 of the four cores although at most
     * 2.2 were busy at once (others took them); 2,000 + 300 s wanted 2.3.
     */
    static const struct {
        double psi, throttled, peak, runq, want;
        const char *basis;
        bool starved;
    } cases[] = {
        { 0.01, NAN, 2.2, NAN, 2, "quantile", false },
        { 0.30, NAN, 3.9, NAN, 4, "starved", true },
        { 0.30, NAN, 2.2, NAN, 2, "quantile", false },
        { NAN, 0.25, 2.2, NAN, 4, "starved", true },
        { 0.05, 0.05, 3.9, NAN, 2, "quantile", false },
        { 0.30, NAN, 2.2, 1900, 4, "starved", true },
        { 0.30, NAN, 3.9, 300, 2, "quantile", false },
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct runs r = { .n = 0 };
        json_t *recs, *g;

        for (int i = 0; i < 4; i++) {
            tr_stepsum_t *row =
                run (&r, "sim/0", 4, 8 * GiB, 7200, 2000, 1 * GiB, 1000);
            row->psi_cpu_some_s = cases[c].psi * 1000;
            row->throttled_s = cases[c].throttled * 1000;
            row->cpu_peak_cores = cases[c].peak;
            row->runq_wait_s = cases[c].runq;
        }
        recs = recommend (&r, NULL);
        g = at (recs, "groups.0");
        assert_int_equal (dv (g, "cpus.recommend"), cases[c].want);
        assert_string_equal (sv (g, "cpus.basis"), cases[c].basis);
        assert_int_equal (json_is_true (at (g, "cpus.starved")),
                          cases[c].starved);
        assert_int_equal (has_note (g, "CPU-starved"), cases[c].starved);
        assert_float_equal (dv (g, "cpus.at_quantile"), 2, 1e-9);
        json_decref (recs);
    }
}

/* Parallelism at the quantile, rounded up to whole CPUs, with 0.05 core
 * forgiven for clock skew between CPU time and elapsed time.
 */
static void test_cpu_rounding (void **state)
{
    static const struct {
        double par, want;
    } cases[] = {
        { 0, 1 },    { 0.3, 1 },  { 1.0, 1 }, { 1.04, 1 },
        { 1.06, 2 }, { 2.03, 2 }, { 3.5, 4 }, { 15.2, 16 },
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct runs r = { .n = 0 };
        json_t *recs;

        for (int i = 0; i < 3; i++)
            run (&r, "p/0", 16, GiB, 3600, cases[c].par * 1000, 1e8, 1000);
        recs = recommend (&r, NULL);
        if (dv (recs, "groups.0.cpus.recommend") != cases[c].want)
            fail_msg ("parallelism %g: %g cpus, want %g", cases[c].par,
                      dv (recs, "groups.0.cpus.recommend"), cases[c].want);
        json_decref (recs);
    }
}

/* Multi-task steps: parallelism is per task. */
static void test_cpu_per_task (void **state)
{
    struct runs r = { .n = 0 };
    json_t *recs, *g;

    (void)state;
    for (int i = 0; i < 3; i++) {
        /* 4 tasks on 2 nodes, 8 cores each task asked for, 3 used */
        tr_stepsum_t *row =
            run (&r, "mpi/0", 8, 16 * GiB, 7200, 12 * 1000, 2 * GiB, 1000);
        row->tasks = 4;
        row->nodes = 2;
        row->req_cores = 32;
        row->cpu_peak_cores = 8;
    }
    recs = recommend (&r, NULL);
    g = at (recs, "groups.0");
    assert_int_equal (dv (g, "cpus.recommend"), 3);
    assert_int_equal (dv (g, "cpus.request"), 8);
    assert_int_equal (dv (g, "cpus.peak_cores"), 8);
    assert_true (has_note (g, "bursts to 8.0 cores"));
    /* (32 - 3 * 4) cores over 1000 s; (16G - 2.5G) per node on 2 nodes */
    assert_float_equal (dv (g, "savings.core_hours_per_run"),
                        20.0 * 1000 / 3600, 1e-9);
    assert_float_equal (dv (g, "savings.gib_hours_per_run"),
                        13.5 * 2 * 1000 / 3600, 1e-9);
    json_decref (recs);
}

/* A run that hit its time limit is a lower bound for time. */
static void test_timeout_bound (void **state)
{
    static const struct {
        double margin, want;
        const char *text;
    } cases[] = {
        { 0.25, 4500, "01:15:00" },
        { 0.0, 4500, "01:15:00" }, /* exactly 1 h would time out again */
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct tr_recommend_opts o;
        struct runs r = { .n = 0 };
        tr_stepsum_t *t;
        json_t *recs, *g;

        for (int i = 0; i < 3; i++)
            run (&r, "call/batch", 1, GiB, 3600, 1000, 100e6, 1000);
        t = add (&r, "call/batch", "timeout");
        t->time_limit_s = 3600;
        t->elapsed_s = 3600;
        t->req_mem_bytes = GiB;
        tr_recommend_opts_default (&o);
        o.time_margin = cases[c].margin;
        recs = recommend (&r, &o);
        g = at (recs, "groups.0");
        assert_int_equal (dv (g, "time.recommend"), cases[c].want);
        assert_string_equal (sv (g, "time.text"), cases[c].text);
        assert_string_equal (sv (g, "time.basis"), "timeout");
        assert_int_equal (dv (g, "time.lower_bound"), 3600);
        assert_int_equal (dv (g, "runs.timeout"), 1);
        assert_true (has_note (g, "1 run timed out at up to 01:00:00"));
        json_decref (recs);
    }
}

/* Confidence from the number of completed runs; failed and cancelled
 * runs are counted, not used; with no completed run the request stays.
 */
static void test_confidence (void **state)
{
    static const struct {
        int completed, failed;
        const char *conf;
    } cases[] = {
        { 1, 0, "low" },    { 2, 5, "low" },   { 3, 0, "medium" },
        { 9, 1, "medium" }, { 10, 0, "high" }, { 0, 2, "low" },
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct runs r = { .n = 0 };
        json_t *recs, *g;

        for (int i = 0; i < cases[c].failed; i++) {
            tr_stepsum_t *f = run (&r, "qc/batch", 2, GiB, 600, 1, 1e6, 1);
            f->state = i % 2 ? "cancelled" : "failed";
        }
        for (int i = 0; i < cases[c].completed; i++)
            run (&r, "qc/batch", 2, GiB, 600, 100, 600e6, 100);
        recs = recommend (&r, NULL);
        g = at (recs, "groups.0");
        assert_string_equal (sv (g, "confidence"), cases[c].conf);
        assert_int_equal (dv (g, "runs.used"), cases[c].completed);
        assert_int_equal (dv (g, "runs.failed") + dv (g, "runs.cancelled"),
                          cases[c].failed);
        if (cases[c].completed == 0) {
            assert_string_equal (sv (g, "cpus.basis"), "request");
            assert_string_equal (sv (g, "mem.basis"), "request");
            assert_string_equal (sv (g, "time.basis"), "request");
            assert_int_equal (dv (g, "mem.recommend"), GiB);
            assert_int_equal (dv (g, "cpus.recommend"), 2);
            assert_true (has_note (g, "no completed run"));
        }
        else {
            /* 600 MB * 1.2 = 720 MB, rounded to 768M */
            assert_int_equal (dv (g, "mem.recommend"), 768 * MiB);
            assert_int_equal (has_note (g, "completed run"),
                              cases[c].completed < 3);
        }
        json_decref (recs);
    }
}

/* last_n keeps only the newest runs of each group. */
static void test_last_n (void **state)
{
    struct tr_recommend_opts o;
    struct runs r = { .n = 0 };
    json_t *recs;

    (void)state;
    for (int i = 0; i < 5; i++)
        run (&r, "x/0", 4, GiB, 600, 400, 100e6, 100); /* old: 4 cores */
    for (int i = 0; i < 5; i++)
        run (&r, "x/0", 4, GiB, 600, 100, 100e6, 100); /* new: 1 core */
    add (&r, "x/0", "running")->end_ms = NAN;          /* left out */
    add (&r, "", "completed");                         /* no group */
    tr_recommend_opts_default (&o);
    recs = recommend (&r, &o);
    assert_int_equal (dv (recs, "groups.0.runs.total"), 10);
    assert_int_equal (dv (recs, "groups.0.cpus.recommend"), 4);
    json_decref (recs);
    o.last_n = 5;
    recs = recommend (&r, &o);
    assert_int_equal (json_array_size (json_object_get (recs, "groups")), 1);
    assert_int_equal (dv (recs, "groups.0.runs.total"), 5);
    assert_int_equal (dv (recs, "groups.0.cpus.recommend"), 1);
    assert_int_equal (dv (recs, "options.last_n"), 5);
    json_decref (recs);
}

/* Savings: 4 runs of an hour asking 4 cores and 8G, using 1 core and
 * 1G, on a partition with its own core-hour price.
 */
static void test_savings (void **state)
{
    struct tr_cost_part parts[] = {
        { "cpu", 0.02, 0.002, NAN },
        { "gpu", 0.5, NAN, NAN }, /* no GiB-hour price: the default */
    };
    struct tr_cost cost = { 0.05, 0.01, 0, "EUR", 2, parts };
    struct tr_recommend_opts o;
    struct runs r = { .n = 0 };
    json_t *recs, *g;
    char *out;

    (void)state;
    for (int i = 0; i < 4; i++)
        run (&r, "big/batch", 4, 8 * GiB, 7200, 3600, GiB, 3600)->partition =
            i < 3 ? "cpu" : "gpu"; /* the newest run's partition counts */
    tr_recommend_opts_default (&o);
    o.cost = &cost;
    recs = recommend (&r, &o);
    g = at (recs, "groups.0");
    assert_string_equal (sv (g, "partition"), "gpu");
    assert_int_equal (dv (g, "cpus.recommend"), 1);
    assert_int_equal (dv (g, "mem.recommend"), 1280 * MiB); /* 1.2G */
    assert_int_equal (dv (g, "time.recommend"), 4500);
    assert_int_equal (dv (g, "savings.runs"), 4);
    assert_int_equal (dv (g, "savings.elapsed_median_s"), 3600);
    assert_float_equal (dv (g, "savings.core_hours_per_run"), 3, 1e-12);
    assert_float_equal (dv (g, "savings.gib_hours_per_run"), 6.75, 1e-12);
    assert_float_equal (dv (g, "savings.core_hours"), 12, 1e-12);
    assert_float_equal (dv (g, "savings.gib_hours"), 27, 1e-12);
    assert_float_equal (dv (g, "savings.price_core_hour"), 0.5, 1e-12);
    assert_float_equal (dv (g, "savings.price_gb_hour"), 0.01, 1e-12);
    assert_float_equal (dv (g, "savings.money_per_run"), 1.5675, 1e-12);
    assert_float_equal (dv (g, "savings.money"), 6.27, 1e-12);
    assert_string_equal (sv (g, "savings.currency"), "EUR");
    out = print_to_string (tr_recommend_print_table, recs);
    assert_string_equal (out, "GROUP      RUNS  CONF    CPUS    MEM          "
                              "TIME                  CORE-H  GIB-H  "
                              "MONEY(EUR)\n"
                              "big/batch  4/4   medium  4 -> 1  8G -> 1280M  "
                              "02:00:00 -> 01:15:00  12.00   27.00  6.27\n");
    free (out);
    json_decref (recs);

    /* A price of 0 is free; no price above 0: no money */
    cost.core_hour = 0;
    cost.gb_hour = 0;
    parts[0].core_hour = parts[1].core_hour = 0;
    parts[0].gb_hour = 0;
    recs = recommend (&r, &o);
    assert_null (at (recs, "groups.0.savings.money"));
    assert_null (at (recs, "groups.0.savings.price_core_hour"));
    assert_float_equal (dv (recs, "groups.0.savings.core_hours"), 12, 1e-12);
    json_decref (recs);
    o.cost = NULL;
    recs = recommend (&r, &o);
    assert_null (at (recs, "groups.0.savings.money"));
    json_decref (recs);

    /* Prices that cannot be */
    cost.gb_hour = -1;
    o.cost = &cost;
    errno = 0;
    assert_null (tr_recommend_groups (r.ptr, r.n, &o, NULL));
    assert_int_equal (errno, EINVAL);
    cost.gb_hour = 0;
    parts[1].partition = NULL;
    errno = 0;
    assert_null (tr_recommend_groups (r.ptr, r.n, &o, NULL));
    assert_int_equal (errno, EINVAL);
}

/* Three groups: a padded one, the extern step of the same jobs and a
 * group with one run.
 */
static json_t *small_case (void)
{
    static struct runs r;

    r.n = 0;
    for (int i = 0; i < 5; i++) {
        run (&r, "ALIGN/batch", 2, 2 * GiB, 3600, 15, 200e6, 15);
        run (&r, "ALIGN/extern", NAN, NAN, NAN, 0, 1e6, 15);
    }
    run (&r, "QC/batch", 1, GiB, 600, 100, 600e6, 100);
    return recommend (&r, NULL);
}

static void test_formats (void **state)
{
    static const struct {
        const char *name;
        print_f print;
        const char *want;
    } cases[] = {
        { "sbatch", tr_recommend_print_sbatch,
          "# group ALIGN/batch (5 runs, medium confidence)\n"
          "#SBATCH --cpus-per-task=1\n"
          "#SBATCH --mem=256M\n"
          "#SBATCH --time=00:05:00\n"
          "\n"
          "# group QC/batch (1 run, low confidence)\n"
          "#SBATCH --cpus-per-task=1\n"
          "#SBATCH --mem=768M\n"
          "#SBATCH --time=00:05:00\n" },
        /* jobs no workflow manager named: left out of its config */
        { "nextflow", tr_recommend_print_nextflow,
          "// left out: group ALIGN/batch (not a Nextflow process)\n"
          "// left out: group QC/batch (not a Nextflow process)\n"
          "process {\n"
          "}\n" },
        { "snakemake", tr_recommend_print_snakemake,
          "# Snakemake 7 and 8 profile (config.yaml)\n"
          "# left out: group ALIGN/batch (not a Snakemake rule)\n"
          "# left out: group QC/batch (not a Snakemake rule)\n"
          "set-resources: []\n" },
        { "table", tr_recommend_print_table,
          "GROUP         RUNS  CONF    CPUS    MEM         "
          "TIME                  CORE-H  GIB-H  MONEY\n"
          "ALIGN/batch   5/5   medium  2 -> 1  2G -> 256M  "
          "01:00:00 -> 00:05:00  0.02    0.04   -\n"
          "ALIGN/extern  5/5   medium  - -> 1  - -> 256M   "
          "- -> 00:05:00         -       -      -\n"
          "QC/batch      1/1   low     1 -> 1  1G -> 768M  "
          "00:10:00 -> 00:05:00  0.00    0.01   -\n"
          "QC/batch: only 1 completed run (3 wanted)\n" },
    };
    json_t *recs = small_case ();

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        char *out = print_to_string (cases[c].print, recs);

        if (strcmp (out, cases[c].want))
            fail_msg ("%s output:\n%s\nwanted:\n%s", cases[c].name, out,
                      cases[c].want);
        free (out);
    }
    json_decref (recs);
}

/* a and b are equal, numbers to 12 significant digits. */
static bool near_equal (json_t *a, json_t *b)
{
    const char *k;
    json_t *v;
    size_t i;

    if (json_is_number (a) && json_is_number (b))
        return fabs (json_number_value (a) - json_number_value (b))
               <= 1e-12 * fabs (json_number_value (a));
    if (json_typeof (a) != json_typeof (b))
        return false;
    if (json_is_object (a)) {
        if (json_object_size (a) != json_object_size (b))
            return false;
        json_object_foreach (
            a, k, v) if (!near_equal (v, json_object_get (b, k))) return false;
        return true;
    }
    if (json_is_array (a)) {
        if (json_array_size (a) != json_array_size (b))
            return false;
        json_array_foreach (
            a, i, v) if (!near_equal (v, json_array_get (b, i))) return false;
        return true;
    }
    return json_equal (a, b);
}

/* JSON output reads back as the same object (reals are written with 15
 * significant digits, so that 0.95 reads as 0.95).
 */
static void test_format_json (void **state)
{
    json_t *recs = small_case (), *back;
    char *out = print_to_string (tr_recommend_print_json, recs);
    json_error_t jerr;

    (void)state;
    back = json_loads (out, 0, &jerr);
    if (!back)
        fail_msg ("JSON output does not parse: %s", jerr.text);
    assert_true (near_equal (back, recs));
    json_object_set_new (back, "version", json_integer (2));
    assert_false (near_equal (back, recs));
    assert_non_null (strstr (out, "\n  \"version\": 1\n"));
    assert_non_null (strstr (out, "\"mem_quantile\": 0.95,\n"));
    json_decref (back);
    free (out);
    json_decref (recs);
}

/* Workflow names: a numbered step gives way to the batch step of the
 * same name; a name that is not a rule's or process's name is left out
 * with a note; no group gives an empty list or mapping.
 */
static void test_format_names (void **state)
{
    struct runs r = { .n = 0 };
    json_t *recs;
    char *out;

    (void)state;
    run (&r, "a b/0", 2, 4 * GiB, 600, 100, 600e6, 100)->job_name =
        "snakejob.a b.1.sh";
    run (&r, "a b/batch", 1, GiB, 600, 100, 300e6, 100)->job_name =
        "snakejob.a b.1.sh";
    run (&r, "map/0", 2, 4 * GiB, 600, 100, 600e6, 100)->job_name =
        "snakejob.map.2.sh";
    run (&r, "map/batch", 1, GiB, 600, 100, 300e6, 100)->job_name =
        "snakejob.map.2.sh";
    run (&r, "it's/2", 1, GiB, 600, 100, 300e6, 100)->job_name = "nf-it's_(1)";
    recs = recommend (&r, NULL);
    out = print_to_string (tr_recommend_print_snakemake, recs);
    assert_non_null (strstr (out, "# left out: group a b/batch "
                                  "(not a Snakemake rule)\n"));
    assert_non_null (strstr (out, "  - \"map:cpus_per_task=1\"\n"
                                  "  - \"map:mem_mb=512\"\n"));
    assert_null (strstr (out, "/0"));
    assert_non_null (strstr (out, "# left out: group it's/2 "
                                  "(not a Snakemake rule)\n"));
    free (out);
    out = print_to_string (tr_recommend_print_nextflow, recs);
    assert_non_null (strstr (out, "// left out: group it's/2 "
                                  "(not a Nextflow process)\n"));
    assert_null (strstr (out, "withName"));
    free (out);
    json_decref (recs);

    r.n = 0;
    recs = recommend (&r, NULL);
    out = print_to_string (tr_recommend_print_snakemake, recs);
    assert_string_equal (out, "# Snakemake 7 and 8 profile (config.yaml)\n"
                              "set-resources: []\n");
    free (out);
    out = print_to_string (tr_recommend_print_snakemake8, recs);
    assert_string_equal (out, "# Snakemake 8 profile (config.v8+.yaml); "
                              "Snakemake 7 refuses it\n"
                              "set-resources: {}\n");
    free (out);
    out = print_to_string (tr_recommend_print_nextflow, recs);
    assert_string_equal (out, "process {\n}\n");
    free (out);
    json_decref (recs);
}

/* Deterministic noise in [-1, 1] (a 32-bit LCG). */
static double noise (uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (double)(*seed >> 8) / (double)(1u << 23) - 1;
}

static json_t *regressions (struct runs *r)
{
    struct tr_recommend_regress_opts o;
    tr_error_t err;
    json_t *regs;

    tr_recommend_regress_opts_default (&o);
    regs = tr_recommend_regressions (r->ptr, r->n, &o, &err);
    if (!regs)
        fail_msg ("tr_recommend_regressions: %s", err.text);
    return regs;
}

/* 30 runs of about 10 minutes with noise, then one more run: flagged
 * when its runtime doubled, not for ordinary noise.
 */
static void test_regressions (void **state)
{
    static const struct {
        double amplitude, last;
        bool flagged;
    } cases[] = {
        { 0.10, 1200, true }, /* doubled against +-10% */
        { 0.20, 1200, true }, /* doubled against +-20% */
        { 0.20, 720, false }, /* +20%: noise */
        { 0.10, 700, false }, /* +17%: noise */
        { 0.0, 640, false },  /* constant history, +7% */
        { 0.0, 1000, true },  /* constant history, +67% */
        { 0.0, 880, false },  /* constant history, +47%: under 1.5 */
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct runs r = { .n = 0 };
        uint32_t seed = 42;
        json_t *regs, *f;

        for (int i = 0; i < 30; i++) {
            double e = 600 * (1 + cases[c].amplitude * noise (&seed));
            tr_stepsum_t *row = run (&r, "align/batch", 1, GiB, 3600, e,
                                     500e6 * (1 + 0.1 * noise (&seed)), e);
            row->read_bytes = 1e9 * (1 + 0.15 * noise (&seed));
            row->write_bytes = 1e8;
        }
        run (&r, "align/batch", 1, GiB, 3600, cases[c].last, 500e6,
             cases[c].last)
            ->read_bytes = 1e9;
        r.row[r.n - 1].write_bytes = 1e8;
        regs = regressions (&r);
        /* runs 6..31 had five earlier runs or more */
        assert_int_equal (dv (regs, "runs_checked"), 26);
        assert_int_equal (dv (regs, "groups"), 1);
        if (!cases[c].flagged) {
            assert_int_equal (json_array_size (at (regs, "regressions")), 0);
            json_decref (regs);
            continue;
        }
        /* elapsed and cpu_s both doubled; memory and I/O did not */
        assert_int_equal (json_array_size (at (regs, "regressions")), 2);
        f = at (regs, "regressions.0");
        assert_string_equal (sv (f, "metric"), "elapsed_s");
        assert_string_equal (sv (regs, "regressions.1.metric"), "cpu_s");
        assert_string_equal (sv (f, "job_id"), "1030");
        assert_true (json_is_integer (at (f, "end_unix_ms")));
        assert_int_equal (dv (f, "end_unix_ms"), r.row[30].end_ms);
        assert_string_equal (sv (f, "group"), "align/batch");
        assert_float_equal (dv (f, "value"), cases[c].last, 1e-9);
        assert_int_equal (dv (f, "history"), 30);
        assert_float_equal (dv (f, "ratio"), cases[c].last / dv (f, "median"),
                            1e-9);
        assert_true (dv (f, "z") > 4);
        assert_true (dv (f, "ratio") > 1.5);
        if (cases[c].amplitude == 0) {
            assert_int_equal (dv (f, "mad"), 0);
            assert_float_equal (dv (f, "z"), (cases[c].last - 600) / 30, 1e-9);
        }
        json_decref (regs);
    }
}

/* Only the previous completed runs are history; a timed-out run is a
 * candidate; memory and I/O regressions; too little history.
 */
static void test_regressions_history (void **state)
{
    struct runs r = { .n = 0 };
    tr_stepsum_t *t;
    json_t *regs;

    (void)state;
    for (int i = 0; i < 4; i++)
        run (&r, "g/0", 1, GiB, 3600, 100, 100e6, 100);
    run (&r, "g/0", 1, GiB, 3600, 100, 400e6, 100); /* 4 earlier: no check */
    add (&r, "g/0", "failed")->elapsed_s = 5;       /* not history */
    t = add (&r, "g/0", "timeout");
    t->elapsed_s = 3600;
    t->mem_peak_bytes = 300e6;
    t->read_bytes = 50e9;
    regs = regressions (&r);
    assert_int_equal (dv (regs, "runs_checked"), 1);
    assert_int_equal (json_array_size (at (regs, "regressions")), 2);
    assert_string_equal (sv (regs, "regressions.0.metric"), "elapsed_s");
    assert_string_equal (sv (regs, "regressions.0.state"), "timeout");
    assert_int_equal (dv (regs, "regressions.0.history"), 5);
    assert_string_equal (sv (regs, "regressions.1.metric"), "mem_peak_bytes");
    /* the history has no I/O: not compared */
    json_decref (regs);
}

static void test_print_regressions (void **state)
{
    struct runs r = { .n = 0 };
    json_t *regs;
    char *out;

    (void)state;
    for (int i = 0; i < 5; i++)
        run (&r, "g/0", 1, GiB, 3600, 100, GiB, 100);
    run (&r, "g/0", 1, GiB, 3600, 100, 2 * GiB, 100);
    regs = regressions (&r);
    out = print_to_string (tr_recommend_print_regressions, regs);
    assert_string_equal (out, "GROUP  JOB   STEP   METRIC          VALUE    "
                              "MEDIAN   RATIO  Z     HISTORY\n"
                              "g/0    1005  batch  mem_peak_bytes  2.0 GiB  "
                              "1.0 GiB  2.00   20.0  5\n");
    free (out);
    json_decref (regs);
}

static void test_errors (void **state)
{
    struct tr_recommend_opts o;
    struct tr_recommend_regress_opts ro;
    json_t *bad = json_object ();
    tr_error_t err;

    (void)state;
    tr_recommend_opts_default (&o);
    o.mem_quantile = 1.5;
    errno = 0;
    assert_null (tr_recommend_groups (NULL, 0, &o, &err));
    assert_int_equal (errno, EINVAL);
    tr_recommend_opts_default (&o);
    o.time_margin = NAN;
    assert_null (tr_recommend_groups (NULL, 0, &o, NULL));
    tr_recommend_opts_default (&o);
    errno = 0;
    assert_null (tr_recommend_groups (NULL, 3, &o, &err));
    assert_int_equal (errno, EINVAL);
    tr_recommend_regress_opts_default (&ro);
    ro.mad_floor = 0;
    errno = 0;
    assert_null (tr_recommend_regressions (NULL, 0, &ro, &err));
    assert_int_equal (errno, EINVAL);
    tr_recommend_regress_opts_default (&ro);
    ro.max_history = 3;
    assert_null (tr_recommend_regressions (NULL, 0, &ro, NULL));
    errno = 0;
    assert_int_equal (tr_recommend_print_table (stdout, bad), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_recommend_print_regressions (stdout, bad), -1);
    assert_int_equal (errno, EINVAL);
    json_decref (bad);
}

/* Allocation failure sweep (jansson test_chaos.c): fail the Nth jansson
 * allocation for every N until the call succeeds; every failure must be
 * a clean NULL with errno = ENOMEM and leak nothing (valgrind, ASan).
 */
static int chaos_countdown = -1;

static void *chaos_malloc (size_t size)
{
    if (chaos_countdown == 0)
        return NULL;
    if (chaos_countdown > 0)
        chaos_countdown--;
    return malloc (size);
}

static void chaos_free (void *p)
{
    free (p);
}

static void test_oom_sweep (void **state)
{
    struct tr_recommend_opts o;
    struct tr_recommend_regress_opts ro;
    struct tr_cost cost = { 0.1, 0, 0, "EUR", 0, NULL };
    struct runs r = { .n = 0 };

    (void)state;
    tr_recommend_opts_default (&o);
    o.cost = &cost;
    tr_recommend_regress_opts_default (&ro);
    for (int i = 0; i < 6; i++) {
        run (&r, "a/batch", 2, GiB, 3600, 100, 1e8, 100);
        run (&r, "b/0", 2, GiB, 3600, 100, 1e8, 100 + 100 * (i == 5));
    }
    add (&r, "a/batch", "oom")->mem_limit_bytes = GiB;
    add (&r, "a/batch", "timeout")->time_limit_s = 3600;
    json_set_alloc_funcs (chaos_malloc, chaos_free);
    for (int which = 0; which < 2; which++) {
        int failures = 0;
        bool done = false;

        for (int n = 0; !done && n < 100000; n++) {
            json_t *out;

            chaos_countdown = n;
            errno = 0;
            out = which ? tr_recommend_regressions (r.ptr, r.n, &ro, NULL)
                        : tr_recommend_groups (r.ptr, r.n, &o, NULL);
            chaos_countdown = -1;
            if (out) {
                done = true;
                json_decref (out);
            }
            else {
                assert_int_equal (errno, ENOMEM);
                failures++;
            }
        }
        assert_true (done);
        assert_true (failures > (which ? 10 : 50));
    }
    json_set_alloc_funcs (malloc, free);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_rounding),
        cmocka_unit_test (test_closed_loop),
        cmocka_unit_test (test_oom_bound),
        cmocka_unit_test (test_oom_growth),
        cmocka_unit_test (test_oom_growth_note),
        cmocka_unit_test (test_unlimited),
        cmocka_unit_test (test_cpu_starved),
        cmocka_unit_test (test_cpu_rounding),
        cmocka_unit_test (test_cpu_per_task),
        cmocka_unit_test (test_timeout_bound),
        cmocka_unit_test (test_confidence),
        cmocka_unit_test (test_last_n),
        cmocka_unit_test (test_savings),
        cmocka_unit_test (test_formats),
        cmocka_unit_test (test_format_json),
        cmocka_unit_test (test_format_names),
        cmocka_unit_test (test_regressions),
        cmocka_unit_test (test_regressions_history),
        cmocka_unit_test (test_print_regressions),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_oom_sweep),
        cmocka_unit_test (test_never_above_request),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
