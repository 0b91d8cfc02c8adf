/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Per-group resource recommendations and regression checks over many
 * runs of a step.  A single run says little (Slurm's seff and jobstats
 * size from one job); the runs of a step group give a distribution, and
 * the runs that failed for lack of a resource (OOM, timeout) give lower
 * bounds that the recommendation must clear.  Every figure comes back
 * with the evidence it was made from, so a user can see why.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "aggregate.h"
#include "libtracer/record/merge.h"
#include "libtracer/record/states.h"
#include "recommend.h"
#include "sizing.h"
#include "libtracer/util/stats.h"
#include "libtracer/util/json.h"

#define MIB 1048576.0
#define GIB 1073741824.0

/* Parallelism is cpu_s / elapsed_s; the two come from different clocks
 * (cgroup CPU time, record timestamps), so a step that kept 2 cores busy
 * can read 2.01.  This much is forgiven before rounding up.
 */
#define CPU_TOLERANCE 0.05

/* After an OOM kill with no completed run since, the limit the run died
 * at is a lower bound of what the step needs, not a measure of it.  Where
 * the memory series says how fast the step still grew at the kill, the
 * bound plus that growth over the time it had left sizes it (at most
 * OOM_PROJECT_MAX times the bound); where it does not, the bound times 2
 * per OOM kill in a row (2, 4, 8, then 16 at most).  From the second OOM
 * in a row each kill at least doubles, projected or not.
 */
#define OOM_STREAK_MAX 4
#define OOM_PROJECT_MAX 16.0

enum kind { K_COMPLETED, K_FAILED, K_CANCELLED, K_TIMEOUT, K_OOM, K_OTHER };

void tr_recommend_opts_default (struct tr_recommend_opts *o)
{
    /* the defaults live in sizing.c, with the site configuration's */
    tr_sizing_opts (o, NULL);
}

void tr_recommend_regress_opts_default (struct tr_recommend_regress_opts *o)
{
    o->min_history = 5;
    o->max_history = 30;
    o->threshold = 4;
    o->min_ratio = 1.5;
    o->mad_floor = 0.05;
}

/* x rounded up to the step of the first tier {limit, step} that x is
 * below (the last tier has no limit).
 */
static double round_tiers (double x, const double (*t)[2], size_t n)
{
    size_t i = 0;

    if (!(x > 0))
        return isnan (x) ? NAN : 0;
    while (i + 1 < n && x >= t[i][0])
        i++;
    return ceil (x / t[i][1]) * t[i][1];
}

double tr_recommend_mem_round (double bytes)
{
    static const double t[][2] = { { 2 * GIB, 256 * MIB },
                                   { 8 * GIB, 512 * MIB },
                                   { 64 * GIB, GIB },
                                   { 0, 4 * GIB } };

    return round_tiers (bytes, t, 4);
}

double tr_recommend_time_round (double seconds)
{
    static const double t[][2] = { { 3600, 300 },
                                   { 6 * 3600, 900 },
                                   { 0, 3600 } };

    return round_tiers (seconds, t, 3);
}

static int checked (int n, size_t size)
{
    if (n < 0 || (size_t)n >= size) {
        errno = ERANGE;
        return -1;
    }
    return 0;
}

int tr_recommend_mem_text (char *buf, size_t size, double bytes)
{
    double mib;

    if (isnan (bytes) || bytes < 0 || bytes > 1e18) {
        errno = EINVAL;
        return -1;
    }
    mib = ceil (bytes / MIB);
    if (fmod (mib, 1024) == 0 && mib > 0)
        return checked (snprintf (buf, size, "%.0fG", mib / 1024), size);
    return checked (snprintf (buf, size, "%.0fM", mib), size);
}

int tr_recommend_time_text (char *buf, size_t size, double seconds)
{
    long long s;

    if (isnan (seconds) || seconds < 0 || seconds > 1e12) {
        errno = EINVAL;
        return -1;
    }
    s = (long long)ceil (seconds);
    if (s >= 86400)
        return checked (snprintf (buf, size, "%lld-%02lld:%02lld:%02lld",
                                  s / 86400, s / 3600 % 24, s / 60 % 60,
                                  s % 60),
                        size);
    return checked (snprintf (buf, size, "%02lld:%02lld:%02lld", s / 3600,
                              s / 60 % 60, s % 60),
                    size);
}

/* Rows */

/* Run states, in enum kind order (outcome.state, doc/record-format.md). */
static const char *kind_names[] = { "completed", "failed", "cancelled",
                                    "timeout",   "oom",    "other" };

static enum kind run_kind (const tr_stepsum_t *r)
{
    for (int k = 0; k < K_OTHER; k++)
        if (!strcmp (r->state, kind_names[k]))
            return (enum kind)k;
    return K_OTHER;
}

static int cmp_rows (const void *a, const void *b)
{
    const tr_stepsum_t *x = *(const tr_stepsum_t *const *)a;
    const tr_stepsum_t *y = *(const tr_stepsum_t *const *)b;
    int c;

    if ((c = tr_merge_natcmp (x->group, y->group)))
        return c;
    if (x->end_ms != y->end_ms)
        return x->end_ms < y->end_ms ? -1 : 1;
    if ((c = tr_merge_natcmp (x->job_id, y->job_id)))
        return c;
    return tr_merge_stepcmp (x->step_id, y->step_id);
}

/* The rows that take part (a group, an end), by group then end time.
 * Caller must free the result with free().
 */
static const tr_stepsum_t **sorted_rows (const tr_stepsum_t *const *rows,
                                         size_t n,
                                         size_t *np,
                                         tr_error_t *error)
{
    const tr_stepsum_t **v;
    size_t k = 0;

    if (!rows && n > 0) {
        errno = EINVAL;
        tr_errprintf (error, "no rows");
        return NULL;
    }
    if (!(v = malloc ((n ? n : 1) * sizeof (*v)))) {
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i] && rows[i]->group[0] && isfinite (rows[i]->end_ms))
            v[k++] = rows[i];
    qsort (v, k, sizeof (*v), cmp_rows);
    *np = k;
    return v;
}

/* End of the group that starts at i. */
static size_t group_end (const tr_stepsum_t **v, size_t n, size_t i)
{
    size_t j = i + 1;

    while (j < n && !strcmp (v[j]->group, v[i]->group))
        j++;
    return j;
}

static double known (double a, double b)
{
    return isnan (a) ? b : a;
}

/* Tasks a run's CPU is shared over: tasks, else nodes, else 1. */
static double task_count (const tr_stepsum_t *r)
{
    if (r->tasks >= 1)
        return r->tasks;
    return r->nodes >= 1 ? r->nodes : 1;
}

static int set_str (json_t *o, const char *k, const char *s)
{
    return s && *s ? json_object_set_new (o, k, json_string (s)) : 0;
}

static int __attribute__ ((format (printf, 2, 3)))
note (json_t *notes, const char *fmt, ...)
{
    char buf[448];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap); /* a long note may be cut */
    va_end (ap);
    return json_array_append_new (notes, json_string (buf));
}

/* Recommendations */

struct vec {
    double *v;
    size_t n;
};

static void push (struct vec *a, double x)
{
    if (!isnan (x))
        a->v[a->n++] = x;
}

static double median (struct vec *a)
{
    return tr_stats_median (a->v, a->n);
}

/* Name and value pairs for JSON objects of numbers. */
struct kv {
    const char *k;
    double v;
};

#define NUMS(kv) num_object (kv, sizeof (kv) / sizeof (kv[0]))

/* A new object of the known values of kv[0..n-1]; NULL on ENOMEM. */
static json_t *num_object (const struct kv *kv, size_t n)
{
    json_t *o = json_object ();

    for (size_t i = 0; o && i < n; i++)
        if (tr_json_set_num (o, kv[i].k, kv[i].v)) {
            json_decref (o);
            return NULL;
        }
    return o;
}

/* One resource of one group. */
struct res {
    double request, recommend, q, at_q, min, median, max, bound;
    double peak, pressure, demand; /* cpus only, else NAN */
    int starved;           /* cpus only: 0 or 1; else -1 */
    const char *basis;
};

/* The quantile, minimum, median and maximum of v (sorted here). */
static void describe (struct res *r, struct vec *v)
{
    r->recommend = r->at_q = r->min = r->median = r->max = NAN;
    r->basis = NULL;
    if (!v->n)
        return;
    r->at_q = tr_stats_quantile (v->v, v->n, r->q);
    r->min = v->v[0];
    r->max = v->v[v->n - 1];
    r->median = tr_stats_median (v->v, v->n);
}

/* Size memory or time from the used runs' values, the lower bound, a
 * padding factor and a floor, then round it.
 */
static void size_res (struct res *r,
                      struct vec *v,
                      double pad,
                      double floor_value,
                      const char *bound_basis,
                      double (*round) (double))
{
    describe (r, v);
    if (v->n) {
        r->recommend = r->at_q * (1 + pad);
        r->basis = "quantile";
    }
    if (!isnan (r->bound)
        && (isnan (r->recommend) || r->bound * (1 + pad) > r->recommend)) {
        r->recommend = r->bound * (1 + pad);
        r->basis = bound_basis;
    }
    if (isnan (r->recommend)) {
        r->recommend = r->request;
        r->basis = isnan (r->request) ? NULL : "request";
        return;
    }
    if (r->recommend < floor_value) {
        /* the site's minimum, but never more than was asked: a step
         * that used far less than its request keeps the request
         */
        if (!isnan (r->request) && r->request < floor_value
            && (isnan (r->bound) || r->request > r->bound)) {
            r->recommend = r->request;
            r->basis = "request";
            return;
        }
        r->recommend = floor_value;
        r->basis = "floor";
    }
    r->recommend = round (r->recommend);
    /* Strictly above: a run died at exactly the bound. */
    if (!isnan (r->bound) && r->recommend <= r->bound)
        r->recommend = round (r->bound + 1);
}

static json_t *res_json (const struct res *r, const char *text)
{
    struct kv kv[] = { { "request", r->request }, { "recommend", r->recommend },
                       { "quantile", r->q },      { "at_quantile", r->at_q },
                       { "min", r->min },         { "median", r->median },
                       { "max", r->max },         { "lower_bound", r->bound },
                       { "peak_cores", r->peak }, { "pressure", r->pressure },
                       { "demand", r->demand } };
    json_t *o = NUMS (kv);

    if (o
        && (set_str (o, "text", text) || set_str (o, "basis", r->basis)
            || (r->starved >= 0
                && json_object_set_new (o, "starved",
                                        json_boolean (r->starved))))) {
        json_decref (o);
        return NULL;
    }
    return o;
}

/* Everything gathered from the runs of one group. */
struct group {
    size_t count[K_OTHER + 1];
    size_t total;
    size_t oom_bounds; /* runs that gave an OOM bound */
    size_t oom_streak; /* OOM runs since the last completed run */
    size_t unlimited;  /* runs with no time limit */
    const tr_stepsum_t *last_oom; /* the newest of those */
    /* the OOM sizing's evidence (NAN when unknown) */
    double oom_rate, oom_at_s, oom_expect_s, oom_factor, oom_project;
    const char *oom_expect_from; /* "completed runs", "time limit" */
    /* why memory is what it is after OOM kills: mem.reason, the one
     * reason every view gives with the one --mem ("" when none)
     */
    char mem_why[384];
    struct vec par, stall, thr, mem, time, dem;
    struct vec rcpt, rmem, rtime, rcores, rtasks, rnodes;
    const char *partition;
    struct res cpus, mem_r, time_r;
};

#define NVECS 12

static void gather (struct group *g,
                    const tr_stepsum_t **v,
                    size_t k,
                    double *buf)
{
    struct vec *vecs[NVECS] = { &g->par,    &g->stall, &g->thr,   &g->mem,
                                &g->time,   &g->rcpt,  &g->rmem,  &g->rtime,
                                &g->rcores, &g->rtasks, &g->rnodes,
                                &g->dem };

    for (size_t i = 0; i < NVECS; i++)
        *vecs[i] = (struct vec){ buf + i * k, 0 };
    g->cpus.peak = g->mem_r.bound = g->time_r.bound = NAN;
    for (size_t i = 0; i < k; i++) {
        const tr_stepsum_t *r = v[i];
        enum kind kind = run_kind (r);
        double tasks = task_count (r), e = r->elapsed_s;

        g->count[kind]++;
        g->total++;
        g->partition = r->partition; /* rows are oldest first */
        push (&g->rcpt, known (r->req_cpus_per_task, r->req_cores / tasks));
        push (&g->rmem, r->req_mem_bytes);
        push (&g->rtime, r->time_limit_s);
        if (r->time_unlimited == 1)
            g->unlimited++;
        push (&g->rcores, known (r->req_cores, r->req_cpus_per_task * tasks));
        push (&g->rtasks, tasks);
        push (&g->rnodes, r->nodes >= 1 ? r->nodes : 1);
        if (kind == K_COMPLETED) {
            if (e > 0) {
                push (&g->par, r->cpu_s / e / tasks);
                push (&g->stall,
                      fmax (r->psi_cpu_some_s / e, r->throttled_s / e));
                push (&g->thr, r->throttled_s / e);
                if (!isnan (tr_stepsum_cpu_demand (r)))
                    push (&g->dem, tr_stepsum_cpu_demand (r) / tasks);
            }
            push (&g->mem, r->mem_peak_bytes);
            push (&g->time, e);
            g->cpus.peak = fmax (g->cpus.peak, r->cpu_peak_cores);
        }
        if (tr_states_oom (r->state, r->oom_kills)) {
            double b = known (r->mem_limit_bytes, r->req_mem_bytes);

            g->mem_r.bound = fmax (g->mem_r.bound, fmax (b, r->mem_peak_bytes));
            g->oom_bounds++;
            if (kind != K_COMPLETED) {
                g->oom_streak++;
                g->last_oom = r;
            }
        }
        if (kind == K_COMPLETED) {
            g->oom_streak = 0;
            g->last_oom = NULL;
        }
        if (kind == K_TIMEOUT)
            g->time_r.bound = fmax (g->time_r.bound, fmax (r->time_limit_s, e));
    }
}

/* The largest value at or below bytes that tr_recommend_mem_round
 * gives (its steps at bytes); 0 when there is none.
 */
static double mem_round_down (double bytes)
{
    double up = tr_recommend_mem_round (bytes), step;

    if (!(bytes > 0) || up <= bytes)
        return bytes > 0 ? up : 0;
    step = bytes < 2 * GIB ? 256 * MIB
           : bytes < 8 * GIB ? 512 * MIB
           : bytes < 64 * GIB ? GIB
                              : 4 * GIB;
    return floor (bytes / step) * step;
}

/* Why the newest OOM run's growth says what it says, into buf: "its
 * rise at the kill (2.0 MB/s over the 40 s it had left of 60 s, time
 * limit)".
 */
static void oom_rise_text (char *buf, size_t size, const struct group *g)
{
    if (!isnan (g->oom_expect_s))
        snprintf (buf, size,
                  "its rise at the kill (%.1f MB/s over the %.0f s it had "
                  "left of %.0f s, %s)",
                  g->oom_rate / 1e6, g->oom_expect_s - g->oom_at_s,
                  g->oom_expect_s, g->oom_expect_from);
    else
        snprintf (buf, size,
                  "its rise at the kill (%.1f MB/s over as long again as it "
                  "ran, %.0f s: no expected run time)",
                  g->oom_rate / 1e6, g->oom_at_s);
}

/* Memory after OOM kills with no completed run since.  The bound b (the
 * limit the newest kill stopped the step at) is a lower bound: the step
 * needed more, how much more the kill does not say.  Where the newest
 * OOM run's memory was still rising at the kill, that rate over the time
 * the step had left (the median elapsed of completed runs, else its time
 * limit, else as long again as it ran) says it: b plus that, with the
 * headroom.  Where it does not, b times 2 per OOM in a row.  From the
 * second OOM in a row at least b times 2^(streak - 1) either way (the
 * projection fell short once).  At most OOM_PROJECT_MAX times b, also
 * after rounding.  The reason, with the figures a reader can check
 * against the one --mem, goes into g->mem_why.
 */
static void size_oom (struct group *g,
                      const struct tr_recommend_opts *o,
                      double (*round) (double))
{
    struct res *m = &g->mem_r;
    const tr_stepsum_t *r = g->last_oom;
    double b = m->bound, want, raw, cap, expect = median (&g->time);
    size_t k = g->oom_streak < OOM_STREAK_MAX ? g->oom_streak : OOM_STREAK_MAX;
    char bt[32], rise[160], tail[32] = "";
    bool capped = false, floored = false;

    g->oom_rate = g->oom_at_s = g->oom_expect_s = NAN;
    g->oom_factor = g->oom_project = NAN;
    g->oom_expect_from = NULL;
    g->mem_why[0] = '\0';
    if (!r || !(b > 0))
        return;
    g->oom_rate = r->mem_rise_Bps;
    g->oom_at_s = r->elapsed_s;
    if (expect > g->oom_at_s)
        g->oom_expect_from = "completed runs";
    else if (isfinite (r->time_limit_s) && r->time_limit_s > g->oom_at_s) {
        expect = r->time_limit_s;
        g->oom_expect_from = "time limit";
    }
    else
        expect = NAN;
    g->oom_expect_s = expect;
    cap = b * OOM_PROJECT_MAX;
    if (g->oom_rate > 0 && g->oom_at_s > 0) {
        double left = isnan (expect) ? g->oom_at_s : expect - g->oom_at_s;

        g->oom_factor = (double)(1u << (k - 1));
        g->oom_project = fmin ((b + g->oom_rate * left) * (1 + o->mem_headroom),
                               cap);
        capped = g->oom_project >= cap;
        want = g->oom_project;
        if (b * g->oom_factor > want) {
            want = b * g->oom_factor;
            floored = true;
        }
    }
    else {
        g->oom_factor = (double)(1u << k);
        want = b * g->oom_factor;
    }
    raw = want;
    want = round (want);
    if (want > cap && mem_round_down (cap) > b)
        want = mem_round_down (cap);
    if (!(want > b))
        want = round (b + 1);
    (void)tr_recommend_mem_text (bt, sizeof (bt), b);
    if (m->recommend > want) {
        /* the completed runs before the kills, the headroom over the
         * bound or the site's minimum ask for more (size_res)
         */
        if (m->basis && !strcmp (m->basis, "quantile"))
            snprintf (g->mem_why, sizeof (g->mem_why),
                      "the completed runs' p%.0f +%.0f%%, above the %s it "
                      "was killed at, a lower bound of its need",
                      100 * o->mem_quantile, 100 * o->mem_headroom, bt);
        else if (m->basis && !strcmp (m->basis, "floor"))
            snprintf (g->mem_why, sizeof (g->mem_why),
                      "the site's minimum, above the %s it was killed at, a "
                      "lower bound of its need", bt);
        else
            snprintf (g->mem_why, sizeof (g->mem_why),
                      "the %s it was killed at, a lower bound of its need, "
                      "+%.0f%%", bt, 100 * o->mem_headroom);
        return;
    }
    m->recommend = want;
    m->basis = "oom";
    if (want > raw + MIB)
        snprintf (tail, sizeof (tail), ", rounded up");
    if (g->oom_rate > 0 && g->oom_at_s > 0)
        oom_rise_text (rise, sizeof (rise), g);
    else
        snprintf (rise, sizeof (rise), "%s",
                  isnan (g->oom_rate) ? "no growth rate known"
                                      : "its memory no longer rose at the "
                                        "kill");
    if (capped)
        snprintf (g->mem_why, sizeof (g->mem_why),
                  "at most %.0fx the %s it was killed at, a lower bound of "
                  "its need; %s would need more",
                  OOM_PROJECT_MAX, bt, rise);
    else if (g->oom_rate > 0 && g->oom_at_s > 0 && !floored)
        snprintf (g->mem_why, sizeof (g->mem_why),
                  "the %s it was killed at, a lower bound of its need, plus "
                  "%s, +%.0f%%%s",
                  bt, rise, 100 * o->mem_headroom, tail);
    else if (g->oom_rate > 0 && g->oom_at_s > 0)
        snprintf (g->mem_why, sizeof (g->mem_why),
                  "%.0fx the %s it was killed at, a lower bound of its "
                  "need, for %zu OOMs in a row (%s projects less)%s",
                  g->oom_factor, bt, g->oom_streak, rise, tail);
    else
        snprintf (g->mem_why, sizeof (g->mem_why),
                  "%.0fx the %s it was killed at, a lower bound of its "
                  "need (%s; %zu OOM%s in a row)%s",
                  g->oom_factor, bt, rise, g->oom_streak,
                  g->oom_streak == 1 ? "" : "s", tail);
}

static void size_cpus (struct group *g, const struct tr_recommend_opts *o)
{
    struct res *c = &g->cpus;
    double req;

    c->q = o->cpu_quantile;
    c->request = median (&g->rcpt);
    c->bound = NAN;
    describe (c, &g->par);
    c->pressure = tr_stats_quantile (g->stall.v, g->stall.n, c->q);
    /* Throttling is the step's own CPU limit.  Waiting for a CPU (PSI)
     * is starvation only for a step whose own threads wanted all the
     * cores it asked for (its demand per task, running plus waiting in
     * the run queue, tr_stepsum_cpu_demand; where a run does not tell
     * it, the most cores busy at once): one that never had more than
     * one thread wanting a CPU on two cores waited for the work of
     * others on the node, and more cores would not have helped it.
     */
    c->demand = g->dem.n ? tr_stats_quantile (g->dem.v, g->dem.n, c->q) : NAN;
    c->starved = c->pressure > o->cpu_pressure_max
                 && (tr_stats_quantile (g->thr.v, g->thr.n, c->q)
                         > o->cpu_pressure_max
                     || (g->dem.n == g->par.n && g->dem.n
                             ? c->demand >= c->request - 0.5
                             : !(c->peak < c->request - 0.5)));
    if (g->par.n) {
        c->recommend = fmax (1, ceil (c->at_q - CPU_TOLERANCE));
        c->basis = "quantile";
    }
    if (isnan (c->request))
        return;
    req = fmax (1, ceil (c->request - 1e-9));
    if (isnan (c->recommend))
        c->basis = "request";
    else if (c->starved && c->recommend < req)
        c->basis = "starved";
    else
        return;
    c->recommend = req;
}

static int group_notes (json_t *notes,
                        const struct group *g,
                        const struct tr_recommend_opts *o)
{
    size_t used = g->count[K_COMPLETED];
    char b1[32], b2[32];

    if (g->cpus.starved
        && note (notes,
                 "CPU-starved: stalled %.0f%% of run time at the p%.0f; "
                 "not given fewer CPUs than requested",
                 100 * g->cpus.pressure, 100 * o->cpu_quantile))
        return -1;
    if (g->cpus.peak > g->cpus.recommend + 0.5
        && note (notes,
                 "bursts to %.1f cores; sized for the sustained parallelism",
                 g->cpus.peak))
        return -1;
    /* one reason with the one number: after OOM kills with no completed
     * run since, the --mem and why (mem.reason); else the bound
     */
    if (*g->mem_why
        && !tr_recommend_mem_text (b1, sizeof (b1), g->mem_r.recommend)
        && note (notes, "after OOM: --mem=%s: %s", b1, g->mem_why))
        return -1;
    if (!*g->mem_why
        && !tr_recommend_mem_text (b1, sizeof (b1), g->mem_r.bound)
        && note (notes,
                 "%zu run%s OOM-killed at up to %s (a lower bound of its "
                 "need): memory set above",
                 g->oom_bounds, g->oom_bounds == 1 ? "" : "s", b1))
        return -1;
    if (!tr_recommend_time_text (b2, sizeof (b2), g->time_r.bound)
        && note (notes, "%zu run%s timed out at up to %s: time set above",
                 g->count[K_TIMEOUT], g->count[K_TIMEOUT] == 1 ? "" : "s", b2))
        return -1;
    if (g->unlimited * 2 > g->total && !isnan (g->time_r.recommend)
        && note (notes, "time: no limit asked (" TR_STEPSUM_UNLIMITED
                        "); sized from the time used"))
        return -1;
    if (g->unlimited * 2 > g->total && isnan (g->time_r.recommend)
        && note (notes, "time: no limit asked (" TR_STEPSUM_UNLIMITED
                        ") and no completed run: no time to recommend"))
        return -1;
    if (used == 0)
        return note (notes, "no completed run: resources with no other "
                            "evidence keep the request");
    if (used < o->min_runs)
        return note (notes, "only %zu completed run%s (%u wanted)", used,
                     used == 1 ? "" : "s", o->min_runs);
    return 0;
}

/* A partition's price: its override unless that is NAN or negative (not
 * given), as tr_waste prices rows.
 */
static double price (double dflt, double part)
{
    return isnan (part) || part < 0 ? dflt : part;
}

static json_t *savings_json (struct group *g,
                             const struct tr_recommend_opts *o,
                             bool priced)
{
    const struct tr_cost *cost = o->cost;
    double ela = median (&g->time), runs = (double)g->total;
    double ch = NAN, gh = NAN, pc = NAN, pg = NAN, money = NAN;

    if (ela > 0) {
        ch = (median (&g->rcores) - g->cpus.recommend * median (&g->rtasks))
             * ela / 3600;
        gh = (g->mem_r.request - g->mem_r.recommend) * median (&g->rnodes) / GIB
             * ela / 3600;
    }
    if (priced) {
        pc = cost->core_hour;
        pg = cost->gb_hour;
        for (size_t i = 0; i < cost->npart; i++)
            if (!strcmp (cost->part[i].partition, g->partition)) {
                pc = price (pc, cost->part[i].core_hour);
                pg = price (pg, cost->part[i].gb_hour);
                break;
            }
        if (!isnan (ch) || !isnan (gh))
            money = known (ch * pc, 0) + known (gh * pg, 0);
    }
    struct kv kv[] = { { "runs", runs },
                       { "elapsed_median_s", ela },
                       { "core_hours_per_run", ch },
                       { "gib_hours_per_run", gh },
                       { "core_hours", ch * runs },
                       { "gib_hours", gh * runs },
                       { "price_core_hour", pc },
                       { "price_gb_hour", pg },
                       { "money_per_run", money },
                       { "money", money * runs } };
    json_t *s = NUMS (kv);

    if (s && !isnan (money) && set_str (s, "currency", cost->currency)) {
        json_decref (s);
        return NULL;
    }
    return s;
}

/* Whether cost is valid (prices finite and >= 0 where given, as tr_waste
 * wants them) and has a price.
 */
static int check_cost (const struct tr_cost *cost,
                       bool *priced,
                       tr_error_t *error)
{
    bool bad = false;

    *priced = false;
    if (!cost)
        return 0;
    bad = !(cost->core_hour >= 0 && cost->gb_hour >= 0)
          || !isfinite (cost->core_hour + cost->gb_hour)
          || (cost->npart && !cost->part);
    *priced = cost->core_hour > 0 || cost->gb_hour > 0;
    for (size_t i = 0; !bad && i < cost->npart; i++) {
        bad = !cost->part[i].partition || isinf (cost->part[i].core_hour)
              || isinf (cost->part[i].gb_hour);
        *priced |= cost->part[i].core_hour > 0 || cost->part[i].gb_hour > 0;
    }
    if (bad) {
        errno = EINVAL;
        return tr_errprintf (error, "cost: a price is missing, negative or "
                                    "infinite");
    }
    return 0;
}

static json_t *group_json (struct group *g,
                           const char *name,
                           const struct tr_recommend_opts *o,
                           bool priced)
{
    static const char *conf[] = { "low", "medium", "high" };
    size_t used = g->count[K_COMPLETED];
    int level = used < o->min_runs ? 0 : used < 10 ? 1 : 2;
    char ctext[32] = "", mtext[32] = "", ttext[32] = "";
    struct kv runs[] = { { "total", (double)g->total },
                         { "used", (double)used },
                         { "completed", (double)used },
                         { "failed", (double)g->count[K_FAILED] },
                         { "cancelled", (double)g->count[K_CANCELLED] },
                         { "timeout", (double)g->count[K_TIMEOUT] },
                         { "oom", (double)g->count[K_OOM] },
                         { "other", (double)g->count[K_OTHER] } };
    json_t *notes = json_array (), *mem, *tobj;

    if (!isnan (g->cpus.recommend))
        snprintf (ctext, sizeof (ctext), "%.0f", g->cpus.recommend);
    (void)tr_recommend_mem_text (mtext, sizeof (mtext), g->mem_r.recommend);
    (void)tr_recommend_time_text (ttext, sizeof (ttext), g->time_r.recommend);
    if (!notes || group_notes (notes, g, o)) {
        json_decref (notes);
        return NULL;
    }
    mem = res_json (&g->mem_r, mtext);
    tobj = res_json (&g->time_r, ttext);
    if (tobj && g->unlimited * 2 > g->total
        && json_object_set_new (tobj, "unlimited", json_true ())) {
        json_decref (tobj);
        tobj = NULL;
    }
    if (mem && g->last_oom) {
        struct kv kv[] = { { "oom_streak", (double)g->oom_streak },
                           { "oom_factor", g->oom_factor },
                           { "oom_growth_Bps", g->oom_rate },
                           { "oom_elapsed_s", g->oom_at_s },
                           { "oom_expected_s", g->oom_expect_s },
                           { "oom_projected", g->oom_project } };

        for (size_t i = 0; i < sizeof (kv) / sizeof (kv[0]); i++)
            if (tr_json_set_num (mem, kv[i].k, kv[i].v)) {
                json_decref (mem);
                mem = NULL;
                break;
            }
    }
    if (mem && *g->mem_why && set_str (mem, "reason", g->mem_why)) {
        json_decref (mem);
        mem = NULL;
    }
    /* "o" references are stolen, even when json_pack fails */
    return json_pack ("{s:s s:s* s:s s:o s:o s:o s:o s:o s:o}", "group", name,
                      "partition", *g->partition ? g->partition : NULL,
                      "confidence", conf[level], "runs", NUMS (runs), "cpus",
                      res_json (&g->cpus, ctext), "mem", mem, "time", tobj,
                      "savings",
                      savings_json (g, o, priced), "notes", notes);
}

/* The workflow manager that named a row's job, from the job name its
 * cluster mode gives it: Nextflow's grid executors "nf-NAME_(TAG)",
 * Snakemake's cluster mode the job script "snakejob.RULE.N.sh"
 * (tr_stepsum_group takes the group from the same names); NULL for any
 * other job, and for a group set by a "group" tag.
 */
static const char *workflow_of (const tr_stepsum_t *r)
{
    const char *name = r->job_name ? r->job_name : "";
    const char *dot;
    char tag[8];

    if (r->tags && tr_stepsum_tag (r->tags, "group", tag, sizeof (tag))
        && *tag)
        return NULL;
    if (!strncmp (name, "nf-", 3) && name[3])
        return "nextflow";
    if (!strncmp (name, "snakejob.", 9) && (dot = strchr (name + 9, '.'))
        && dot > name + 9)
        return "snakemake";
    return NULL;
}

static json_t *recommend_group (const tr_stepsum_t **v,
                                size_t k,
                                const struct tr_recommend_opts *o,
                                bool priced)
{
    struct group g;
    double *buf;
    json_t *obj;

    memset (&g, 0, sizeof (g));
    if (!(buf = malloc (NVECS * k * sizeof (*buf))))
        return NULL;
    gather (&g, v, k, buf);
    size_cpus (&g, o);
    g.mem_r.peak = g.mem_r.pressure = g.time_r.peak = g.time_r.pressure = NAN;
    g.mem_r.demand = g.time_r.demand = NAN;
    g.mem_r.starved = g.time_r.starved = -1;
    g.mem_r.q = o->mem_quantile;
    g.mem_r.request = median (&g.rmem);
    size_res (&g.mem_r, &g.mem, o->mem_headroom, o->mem_min_bytes, "oom",
              tr_recommend_mem_round);
    size_oom (&g, o, tr_recommend_mem_round);
    g.time_r.q = o->time_quantile;
    /* most runs had no limit: the request is UNLIMITED, never sized */
    g.time_r.request = g.unlimited * 2 > g.total ? NAN : median (&g.rtime);
    size_res (&g.time_r, &g.time, o->time_margin, o->time_min_s, "timeout",
              tr_recommend_time_round);
    obj = group_json (&g, v[0]->group, o, priced);
    if (obj && workflow_of (v[0])
        && json_object_set_new (obj, "workflow",
                                json_string (workflow_of (v[0])))) {
        json_decref (obj);
        obj = NULL;
    }
    free (buf);
    return obj;
}

static bool bad_fraction (double q)
{
    return !(q >= 0 && q <= 1);
}

json_t *tr_recommend_groups (const tr_stepsum_t *const *rows,
                             size_t n,
                             const struct tr_recommend_opts *o,
                             tr_error_t *error)
{
    const tr_stepsum_t **v;
    json_t *out, *groups;
    bool priced;
    size_t nv;

    if (!o || bad_fraction (o->mem_quantile) || bad_fraction (o->time_quantile)
        || bad_fraction (o->cpu_quantile) || !(o->mem_headroom >= 0)
        || !(o->time_margin >= 0) || !(o->cpu_pressure_max >= 0)
        || !(o->mem_min_bytes >= 0) || !(o->time_min_s >= 0)) {
        errno = EINVAL;
        tr_errprintf (error, "recommendation options out of range");
        return NULL;
    }
    if (check_cost (o->cost, &priced, error) < 0
        || !(v = sorted_rows (rows, n, &nv, error)))
        return NULL;
    struct kv opts[] = { { "mem_quantile", o->mem_quantile },
                         { "mem_headroom", o->mem_headroom },
                         { "time_quantile", o->time_quantile },
                         { "time_margin", o->time_margin },
                         { "cpu_quantile", o->cpu_quantile },
                         { "cpu_pressure_max", o->cpu_pressure_max },
                         { "min_runs", o->min_runs },
                         { "last_n", o->last_n },
                         { "mem_min_bytes", o->mem_min_bytes },
                         { "time_min_s", o->time_min_s } };
    out = json_pack ("{s:i s:o s:[]}", "version", 1, "options", NUMS (opts),
                     "groups");
    groups = json_object_get (out, "groups");
    for (size_t i = 0, j; out && i < nv; i = j) {
        size_t first;

        j = group_end (v, nv, i);
        first = o->last_n && j - i > o->last_n ? j - o->last_n : i;
        if (json_array_append_new (groups,
                                   recommend_group (v + first, j - first, o,
                                                    priced))) {
            json_decref (out);
            out = NULL;
        }
    }
    free (v);
    if (!out) {
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
    }
    return out;
}

/* Regressions */

static const char *metric_names[] = { "elapsed_s", "mem_peak_bytes", "cpu_s",
                                      "io_bytes" };

double tr_recommend_metric (const tr_stepsum_t *r, int m)
{
    bool io = !isnan (r->read_bytes) || !isnan (r->write_bytes);
    double v[] = { r->elapsed_s, r->mem_peak_bytes, r->cpu_s,
                   io ? known (r->read_bytes, 0) + known (r->write_bytes, 0)
                      : NAN };
    return m >= 0 && m < TR_RECOMMEND_METRICS ? v[m] : NAN;
}

const char *tr_recommend_metric_name (int m)
{
    return m >= 0 && m < TR_RECOMMEND_METRICS ? metric_names[m] : "";
}

int tr_recommend_drift (double x,
                        double *hist,
                        size_t n,
                        const struct tr_recommend_regress_opts *o,
                        struct tr_drift *d)
{
    d->median = d->mad = d->z = d->ratio = NAN;
    if (!isfinite (x) || n == 0 || n < o->min_history)
        return TR_DRIFT_NOT;
    d->median = tr_stats_median (hist, n);
    if (isnan (d->mad = tr_stats_mad (hist, n))) {
        errno = ENOMEM;
        return -1;
    }
    if (!(d->median > 0))
        return TR_DRIFT_NOT;
    d->z = (x - d->median) / fmax (d->mad, o->mad_floor * d->median);
    d->ratio = x / d->median;
    if (d->z > o->threshold && d->ratio > o->min_ratio)
        return TR_DRIFT_UP;
    if (d->z < -o->threshold && d->ratio * o->min_ratio < 1)
        return TR_DRIFT_DOWN;
    return TR_DRIFT_NONE;
}

/* Compare run r with the history rows hist[0..nh-1] on every metric and
 * append the flags to out (increases only).  Returns 0, or -1 on ENOMEM.
 */
static int check_run (json_t *out,
                      const tr_stepsum_t *r,
                      const tr_stepsum_t **hist,
                      size_t nh,
                      double *vals,
                      const struct tr_recommend_regress_opts *o)
{
    for (int m = 0; m < TR_RECOMMEND_METRICS; m++) {
        double x = tr_recommend_metric (r, m);
        struct tr_drift d;
        size_t nv = 0;
        json_t *flag;
        int v;

        if (!isfinite (x))
            continue;
        for (size_t i = 0; i < nh; i++)
            if (isfinite (vals[nv] = tr_recommend_metric (hist[i], m)))
                nv++;
        if ((v = tr_recommend_drift (x, vals, nv, o, &d)) < 0)
            return -1;
        if (v != TR_DRIFT_UP)
            continue;
        flag = json_pack ("{s:s s:s s:s s:s s:s s:s s:I s:s s:f s:f s:f s:f "
                          "s:f s:I}",
                          "group", r->group, "cluster", r->cluster, "job_id",
                          r->job_id, "step_id", r->step_id, "state", r->state,
                          "path", r->path, "end_unix_ms", (json_int_t)r->end_ms,
                          "metric", metric_names[m], "value", x, "median",
                          d.median, "mad", d.mad, "z", d.z, "ratio", d.ratio,
                          "history", (json_int_t)nv);
        if (json_array_append_new (out, flag))
            return -1;
    }
    return 0;
}

json_t *tr_recommend_regressions (const tr_stepsum_t *const *rows,
                                  size_t n,
                                  const struct tr_recommend_regress_opts *o,
                                  tr_error_t *error)
{
    const tr_stepsum_t **v, **hist = NULL;
    double *vals = NULL;
    json_t *out = NULL, *regs;
    size_t nv, ngroups = 0, nruns = 0;

    if (!o || o->max_history < o->min_history || o->max_history == 0
        || !(o->threshold >= 0) || !(o->min_ratio >= 0)
        || !(o->mad_floor > 0)) {
        errno = EINVAL;
        tr_errprintf (error, "regression options out of range");
        return NULL;
    }
    if (!(v = sorted_rows (rows, n, &nv, error)))
        return NULL;
    if (!(regs = json_array ())
        || !(hist = malloc (o->max_history * sizeof (*hist)))
        || !(vals = malloc (o->max_history * sizeof (*vals))))
        goto done;
    for (size_t i = 0, j; i < nv; i = j) {
        j = group_end (v, nv, i);
        ngroups++;
        for (size_t t = i; t < j; t++) {
            enum kind kind = run_kind (v[t]);
            size_t nh = 0;

            if (kind != K_COMPLETED && kind != K_TIMEOUT && kind != K_OOM)
                continue;
            /* The newest completed runs before t, newest first. */
            for (size_t h = t; h > i && nh < o->max_history; h--)
                if (run_kind (v[h - 1]) == K_COMPLETED)
                    hist[nh++] = v[h - 1];
            if (nh < o->min_history || nh == 0)
                continue;
            nruns++;
            if (check_run (regs, v[t], hist, nh, vals, o))
                goto done;
        }
    }
    out = json_pack ("{s:i s:{s:I s:I s:f s:f s:f} s:I s:I s:O}", "version", 1,
                     "options", "min_history", (json_int_t)o->min_history,
                     "max_history", (json_int_t)o->max_history, "threshold",
                     o->threshold, "min_ratio", o->min_ratio, "mad_floor",
                     o->mad_floor, "groups", (json_int_t)ngroups,
                     "runs_checked", (json_int_t)nruns, "regressions", regs);
done:
    json_decref (regs);
    free (vals);
    free (hist);
    free (v);
    if (!out) {
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
    }
    return out;
}
