/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The run view: one pipeline run by process, its timeline and its
 * slowest tasks (runview.h, doc/runs.md).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/sizing.h"
#include "libtracer/record/merge.h"
#include "libtracer/record/runid.h"
#include "libtracer/record/states.h"
#include "report.h"
#include "recommend_print.h"
#include "runview.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/tools.h"
#include "libtracer/record/when.h"
#include "libtracer/util/units.h"
#include "libtracer/util/json.h"
#include "libtracer/util/stats.h"

#define SLOWEST_MAX 5
#define TOOLS_MAX 5
#define GANTT_TASK_LINES 20 /* a line per task up to this many */
#define GANTT_LABEL_MAX 20
#define FAILED_MAX 10 /* failed tasks the text names */

static int put (json_t *o, const char *k, json_t *v)
{
    if (!v || json_object_set_new (o, k, v) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* o[k] = v unless v is unknown */
static int put_num (json_t *o, const char *k, double v)
{
    return isnan (v) ? 0 : put (o, k, json_real (v));
}

static int push (json_t *a, json_t *v)
{
    if (!v || json_array_append_new (a, v) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* The user key of tr_runs: uid, else the name where the uid is unknown. */
static bool same_user (const tr_stepsum_t *x, const tr_stepsum_t *y)
{
    if (isnan (x->uid) || isnan (y->uid))
        return isnan (x->uid) && isnan (y->uid) && !strcmp (x->user, y->user);
    return x->uid == y->uid;
}

static bool is_extern (const tr_stepsum_t *r)
{
    return !strcmp (r->step_id, "extern");
}

struct task {
    size_t first, n;          /* its rows in the sorted array */
    tr_stepsum_t job;         /* tr_stepsum_job_add of them */
    const tr_stepsum_t *main; /* the step diagnosed, or NULL */
    const char *process;
    json_t *findings;
    size_t order;
};

static int cmp_task_process (const void *pa, const void *pb)
{
    const struct task *a = *(const struct task *const *)pa;
    const struct task *b = *(const struct task *const *)pb;
    int c = strcmp (a->process, b->process);

    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int cmp_task_start (const void *pa, const void *pb)
{
    const struct task *a = *(const struct task *const *)pa;
    const struct task *b = *(const struct task *const *)pb;
    int c = tr_stats_cmp (a->job.start_ms, b->job.start_ms);

    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int cmp_task_slow (const void *pa, const void *pb)
{
    const struct task *a = *(const struct task *const *)pa;
    const struct task *b = *(const struct task *const *)pb;
    int c = tr_stats_cmp (b->job.elapsed_s, a->job.elapsed_s);

    /* unknown elapsed last */
    if (isnan (a->job.elapsed_s) != isnan (b->job.elapsed_s))
        return isnan (a->job.elapsed_s) ? 1 : -1;
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* A failed task's cause: its state, and the exit code or signal. */
static void task_cause (const struct task *t, char *buf, size_t size)
{
    const char *name = tr_stepsum_state_name (t->job.state, t->job.oom_kills);

    if (!strcmp (name, "FAILED") && t->job.signal > 0)
        snprintf (buf, size, "FAILED (signal %.0f)", t->job.signal);
    else if (!strcmp (name, "FAILED") && !isnan (t->job.exit_code))
        snprintf (buf, size, "FAILED (exit %.0f)", t->job.exit_code);
    else
        snprintf (buf, size, "%s", name);
}

static double time_eff (const tr_stepsum_t *r)
{
    const tr_field_t *f = tr_stepsum_field ("timeeff");

    return f ? tr_stepsum_num (r, f) : NAN;
}

/* A running task's live figures: when read, how old, whether stale. */
static int task_live (json_t *o, const tr_stepsum_t *j, double now_ms)
{
    json_t *l;

    if (isnan (j->live_ms))
        return 0;
    if (put (o, "live", (l = json_object ())) < 0
        || put (l, "figures_unix_ms", json_integer ((json_int_t)j->live_ms)) < 0
        || put (l, "age_s",
                json_real (fmax (0, (now_ms - j->live_ms) / 1000.0)))
               < 0
        || put (l, "stale", json_boolean (j->live_stale)) < 0)
        return -1;
    return 0;
}

static json_t *task_json (const struct task *t, double now_ms)
{
    const tr_stepsum_t *j = &t->job;
    json_t *o = json_object ();
    char buf[512], exitbuf[64];

    if (!o || put (o, "job_id", json_string (j->job_id)) < 0
        || put (o, "cluster", json_string (j->cluster)) < 0
        || put (o, "process", json_string (t->process)) < 0
        || put (o, "job_name", json_string (j->job_name)) < 0
        || put (o, "node", json_string (j->node)) < 0
        || put (o, "state",
                json_string (tr_stepsum_state_name (j->state, j->oom_kills)))
               < 0
        || (*tr_stepsum_exit_text (j, exitbuf, sizeof (exitbuf))
            && put (o, "exit_code", json_string (exitbuf)) < 0)
        || (!isnan (j->start_ms)
            && put (o, "start_unix_ms", json_integer ((json_int_t)j->start_ms))
                   < 0)
        || (!isnan (j->end_ms)
            && put (o, "end_unix_ms", json_integer ((json_int_t)j->end_ms)) < 0)
        || put_num (o, "elapsed_s", j->elapsed_s) < 0
        || put_num (o, "cores", j->req_cores) < 0
        || put_num (o, "cpu_s", j->cpu_s) < 0
        || put_num (o, "cpu_eff", tr_stepsum_cpu_eff (j)) < 0
        || put_num (o, "mem_peak_bytes", j->mem_peak_bytes) < 0
        || put_num (o, "req_mem_bytes", j->req_mem_bytes) < 0
        || put_num (o, "mem_eff", tr_stepsum_mem_eff (j)) < 0
        || put_num (o, "time_limit_s", j->time_limit_s) < 0
        || put_num (o, "time_eff", time_eff (j)) < 0
        || put_num (o, "read_bytes", j->read_bytes) < 0
        || put_num (o, "write_bytes", j->write_bytes) < 0
        || put_num (o, "stalled_s", j->stalled_s) < 0
        || task_live (o, j, now_ms) < 0
        || (*j->cause && put (o, "cause", json_string (j->cause)) < 0)
        || (*j->cause_text
            && put (o, "cause_text", json_string (j->cause_text)) < 0))
        goto nomem;
    /* the outcome as sacct words it; the cause class is cause.h's */
    if (tr_states_failed (j->state)) {
        task_cause (t, buf, sizeof (buf));
        if (put (o, "outcome", json_string (buf)) < 0)
            goto nomem;
    }
    if (t->main
        && put (o, "diagnosed_step", json_string (t->main->step_id)) < 0)
        goto nomem;
    if (t->findings) {
        json_t *codes = json_array ();
        json_t *f;
        size_t i;

        if (put (o, "diagnosis", codes) < 0)
            goto nomem;
        json_array_foreach (t->findings, i,
                            f) if (push (codes,
                                         json_incref (json_object_get (f, "cod"
                                                                          "e")))
                                   < 0) goto nomem;
        if (tr_diag_line (t->findings, buf, sizeof (buf))
            && put (o, "diagnosis_text", json_string (buf)) < 0)
            goto nomem;
    }
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}

/* Tools of a steps' "name=cpu_s;..." strings, summed. */
struct tool {
    char name[128];
    double cpu_s;
};

static int cmp_tool (const void *pa, const void *pb)
{
    const struct tool *a = pa, *b = pb;
    int c = tr_stats_cmp (b->cpu_s, a->cpu_s);

    return c ? c : strcmp (a->name, b->name);
}

static int tools_add (struct tool **v, size_t *n, size_t *cap, const char *s)
{
    while (s && *s) {
        size_t len = strcspn (s, ";");
        const char *eq = memchr (s, '=', len);
        size_t nlen = eq ? (size_t)(eq - s) : len;
        double cpu = eq ? strtod (eq + 1, NULL) : NAN;
        size_t i;

        if (nlen >= sizeof ((*v)->name))
            nlen = sizeof ((*v)->name) - 1;
        {
            /* the scheduler's own processes are no tool of the task */
            char name[sizeof ((*v)->name)];

            memcpy (name, s, nlen);
            name[nlen] = '\0';
            if (tr_tools_scheduler_own (name)) {
                s += len;
                if (*s == ';')
                    s++;
                continue;
            }
        }
        for (i = 0; i < *n; i++)
            if (strlen ((*v)[i].name) == nlen
                && !strncmp ((*v)[i].name, s, nlen))
                break;
        if (i == *n) {
            if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 16;
                struct tool *nv = realloc (*v, c * sizeof (**v));

                if (!nv)
                    return -1;
                *v = nv;
                *cap = c;
            }
            memcpy ((*v)[i].name, s, nlen);
            (*v)[i].name[nlen] = '\0';
            (*v)[i].cpu_s = 0;
            (*n)++;
        }
        if (!isnan (cpu))
            (*v)[i].cpu_s += cpu;
        s += len;
        if (*s == ';')
            s++;
    }
    return 0;
}

/* The findings' codes that name a bottleneck: all but the outcome's own
 * (a failure is counted as such) and "ok".
 */
static bool bottleneck_code (const char *code)
{
    return strcmp (code, TR_DIAG_FAILED) && strcmp (code, TR_DIAG_OK)
           && strcmp (code, TR_DIAG_INCOMPLETE) && strcmp (code, TR_DIAG_SHORT);
}

/* One process: tasks t[0..nt-1]; rows the sorted rows of the run. */
static json_t *process_json (struct task **t,
                             size_t nt,
                             const tr_stepsum_t **rows,
                             json_t *recs,
                             const struct tr_cost *cost,
                             tr_error_t *error)
{
    static const char *const order[] = {
        TR_DIAG_OOM,      TR_DIAG_MEM_PRESSURE, TR_DIAG_IO_BOUND,
        TR_DIAG_STALLED,  TR_DIAG_OVER_CPU,     TR_DIAG_OVER_MEM,
        TR_DIAG_IDLE,     TR_DIAG_THROTTLED,    TR_DIAG_IMBALANCED,
        TR_DIAG_GPU_IDLE, TR_DIAG_CPU_BOUND,
    };
    size_t counts[sizeof (order) / sizeof (order[0])] = { 0 };
    const tr_stepsum_t **prow = NULL;
    struct tool *tools = NULL;
    size_t nprow = 0, ntools = 0, captools = 0, failed = 0, steps = 0;
    size_t diagnosed = 0, nmem = 0, ntime = 0;
    double cpu = 0, alloc = 0, mem_sum = 0, time_sum = 0, peak = NAN;
    bool cpu_known = false;
    json_t *o = NULL, *causes, *codes, *next, *tl, *runs = NULL, *run;
    char buf[256];

    for (size_t i = 0; i < nt; i++)
        nprow += t[i]->n;
    if (!(prow = malloc ((nprow ? nprow : 1) * sizeof (*prow))))
        goto nomem;
    nprow = 0;
    if (!(o = json_object ())
        || put (o, "process", json_string (t[0]->process)) < 0
        || put (o, "tasks", json_integer ((json_int_t)nt)) < 0
        || put (o, "causes", (causes = json_object ())) < 0
        || put (o, "diagnosis", (codes = json_object ())) < 0
        || put (o, "next_time", (next = json_array ())) < 0
        || put (o, "tools", (tl = json_array ())) < 0)
        goto nomem;
    for (size_t i = 0; i < nt; i++) {
        const tr_stepsum_t *j = &t[i]->job;
        double e;

        for (size_t k = 0; k < t[i]->n; k++) {
            const tr_stepsum_t *r = rows[t[i]->first + k];

            prow[nprow++] = r;
            if (is_extern (r))
                continue;
            steps++;
            if (tools_add (&tools, &ntools, &captools, r->tools) < 0)
                goto nomem;
            /* the step groups of the process, as recommendations have
             * them
             */
            if (recs && *r->group) {
                json_t *g, *have;
                size_t gi, hi;
                bool seen = false;

                json_array_foreach (next, hi, have) if (
                    !strcmp (json_string_value (json_object_get (have, "grou"
                                                                       "p")),
                             r->group)) seen = true;
                if (seen)
                    continue;
                json_array_foreach (
                    json_object_get (recs, "groups"), gi,
                    g) if (!strcmp (json_string_value (json_object_get (g,
                                                                        "grou"
                                                                        "p")),
                                    r->group))
                {
                    struct tr_sizing_args sa;
                    json_t *a = json_object ();

                    if (tr_sizing_args_advice (&sa, r->scheduler, g) < 0
                        || tr_sizing_join (buf, sizeof (buf), &sa) < 0)
                        buf[0] = '\0';
                    if (push (next, a) < 0
                        || put (a, "group", json_string (r->group)) < 0
                        || put (a, "request", json_string (buf)) < 0
                        || put (a, "confidence",
                                json_incref (json_object_get (g, "confidence")))
                               < 0
                        || put (a, "runs",
                                json_incref (json_object_get (
                                    json_object_get (g, "runs"), "total")))
                               < 0)
                        goto nomem;
                    break;
                }
            }
        }
        if (tr_states_failed (j->state)) {
            json_t *c;

            failed++;
            task_cause (t[i], buf, sizeof (buf));
            c = json_object_get (causes, buf);
            if (put (causes, buf,
                     json_integer (c ? json_integer_value (c) + 1 : 1))
                < 0)
                goto nomem;
        }
        if (!isnan (j->cpu_s) && j->req_cores > 0 && j->elapsed_s > 0) {
            cpu += j->cpu_s;
            alloc += j->req_cores * j->elapsed_s;
            cpu_known = true;
        }
        if (!isnan (e = tr_stepsum_mem_eff (j))) {
            mem_sum += e;
            nmem++;
        }
        if (!isnan (e = time_eff (j))) {
            time_sum += e;
            ntime++;
        }
        if (!isnan (j->mem_peak_bytes)
            && (isnan (peak) || j->mem_peak_bytes > peak))
            peak = j->mem_peak_bytes;
        if (t[i]->findings) {
            json_t *f;
            size_t fi;

            diagnosed++;
            json_array_foreach (t[i]->findings, fi, f)
            {
                const char *code = json_string_value (json_object_get (f, "cod"
                                                                          "e"));
                json_t *c;

                if (!code || !bottleneck_code (code))
                    continue;
                c = json_object_get (codes, code);
                if (put (codes, code,
                         json_integer (c ? json_integer_value (c) + 1 : 1))
                    < 0)
                    goto nomem;
                for (size_t k = 0; k < sizeof (order) / sizeof (order[0]); k++)
                    if (!strcmp (order[k], code))
                        counts[k]++;
            }
        }
    }
    if (put (o, "steps", json_integer ((json_int_t)steps)) < 0
        || put (o, "failed", json_integer ((json_int_t)failed)) < 0
        || (cpu_known && put_num (o, "cpu_eff", cpu / alloc) < 0)
        || (nmem && put_num (o, "mem_eff", mem_sum / (double)nmem) < 0)
        || (ntime && put_num (o, "time_eff", time_sum / (double)ntime) < 0)
        || put_num (o, "mem_peak_bytes", peak) < 0)
        goto nomem;
    /* the bottleneck: the code the most tasks have, the more severe
     * first on a tie; "ok" when the diagnosed tasks have none
     */
    if (diagnosed) {
        size_t best = 0;

        for (size_t k = 1; k < sizeof (order) / sizeof (order[0]); k++)
            if (counts[k] > counts[best])
                best = k;
        if (put (o, "bottleneck",
                 json_string (counts[best] ? order[best] : TR_DIAG_OK))
                < 0
            || put (o, "bottleneck_tasks",
                    json_integer (
                        (json_int_t)(counts[best] ? counts[best] : diagnosed)))
                   < 0)
            goto nomem;
    }
    if (ntools)
        qsort (tools, ntools, sizeof (*tools), cmp_tool);
    for (size_t i = 0; i < ntools && i < TOOLS_MAX; i++) {
        json_t *a = json_object ();

        if (push (tl, a) < 0 || put (a, "name", json_string (tools[i].name)) < 0
            || put (a, "cpu_s", json_real (tools[i].cpu_s)) < 0)
            goto nomem;
    }
    /* the figures of --runs, over this process's steps */
    if (!(runs = tr_runs (prow, nprow, cost, error)))
        goto fail;
    run = json_array_get (json_object_get (runs, "runs"), 0);
    if (run) {
        const char *keep[] = { "core_hours",
                               "gib_hours",
                               "gpu_hours",
                               "money",
                               "unknown_allocation",
                               "unknown_usage",
                               "failed_steps",
                               "jobs",
                               "steps" };

        if (put (o, "figures", json_object ()) < 0)
            goto nomem;
        for (size_t k = 0; k < sizeof (keep) / sizeof (keep[0]); k++) {
            json_t *v = json_object_get (run, keep[k]);

            if (v
                && put (json_object_get (o, "figures"), keep[k],
                        json_incref (v))
                       < 0)
                goto nomem;
        }
    }
    json_decref (runs);
    free (prow);
    free (tools);
    return o;
nomem:
    errno = ENOMEM;
    tr_errprintf (error, "run view: out of memory");
fail:
    json_decref (runs);
    json_decref (o);
    free (prow);
    free (tools);
    return NULL;
}

/* The recommendation group of name in recs, or NULL */
static json_t *group_of (json_t *recs, const char *name)
{
    json_t *g;
    size_t i;

    json_array_foreach (
        json_object_get (recs, "groups"), i,
        g) if (!strcmp (json_string_value (json_object_get (g, "group")),
                        name)) return g;
    return NULL;
}

/* share_pct of each process: its part of the sum over the processes */
static int shares (json_t *procs,
                   const char *obj,
                   const char *sub,
                   const char *key)
{
    double total = 0;
    json_t *p;
    size_t i;
    bool any = false;

    json_array_foreach (procs, i, p)
    {
        json_t *v = json_object_get (json_object_get (json_object_get (p, "figu"
                                                                          "re"
                                                                          "s"),
                                                      obj),
                                     sub);

        if (json_is_number (v)) {
            total += json_number_value (v);
            any = true;
        }
    }
    if (!any || !(total > 0))
        return 0;
    json_array_foreach (procs, i, p)
    {
        json_t *v = json_object_get (json_object_get (json_object_get (p, "figu"
                                                                          "re"
                                                                          "s"),
                                                      obj),
                                     sub);

        if (json_is_number (v)
            && put (p, key, json_real (100.0 * json_number_value (v) / total))
                   < 0)
            return -1;
    }
    return 0;
}

json_t *tr_run_view (const tr_stepsum_t *const *rows,
                     size_t n,
                     const char *id,
                     const struct tr_run_view_opts *o,
                     tr_error_t *error)
{
    struct tr_run_view_opts none = { NULL, NULL, NULL, 0 };
    struct tr_recommend_opts ropts;
    const tr_stepsum_t **v = NULL, **nx = NULL;
    struct task *tasks = NULL;
    struct task **tv = NULL;
    tr_strpool_t *pool = NULL;
    size_t nv = 0, nt = 0, nnx = 0;
    json_t *res = NULL, *runs = NULL, *recs = NULL, *procs, *tl, *slow, *live;
    double now_ms;
    struct timespec ts;

    if ((!rows && n > 0) || !id) {
        errno = EINVAL;
        tr_errprintf (error, "run view: no rows");
        return NULL;
    }
    if (!o)
        o = &none;
    now_ms = o->now_ms;
    if (!(now_ms > 0)) {
        clock_gettime (CLOCK_REALTIME, &ts);
        now_ms = 1000.0 * (double)ts.tv_sec + (double)ts.tv_nsec / 1e6;
    }
    if (!(v = malloc ((n ? n : 1) * sizeof (*v)))
        || !(nx = malloc ((n ? n : 1) * sizeof (*nx)))
        || !(pool = tr_strpool_create ()))
        goto nomem;
    for (size_t i = 0; i < n; i++)
        if (rows[i] && tr_run_id_matches (rows[i]->run_id, id, true))
            v[nv++] = rows[i];
    /* no run of that name: the id as --runs cut it, if it names one */
    for (size_t i = 0; i < n && nv == 0; i++)
        if (rows[i] && tr_run_id_matches (rows[i]->run_id, id, false)) {
            for (size_t j = i; j < n; j++)
                if (rows[j] && tr_run_id_matches (rows[j]->run_id, id, false)
                    && strcmp (rows[j]->run_id, rows[i]->run_id)) {
                    errno = EINVAL;
                    tr_errprintf (error,
                                  "'%s' is the start of several runs (%s, "
                                  "%s): give the whole id",
                                  id, rows[i]->run_id, rows[j]->run_id);
                    goto fail;
                }
            for (size_t j = i; j < n; j++)
                if (rows[j] && !strcmp (rows[j]->run_id, rows[i]->run_id))
                    v[nv++] = rows[j];
        }
    if (nv == 0) {
        errno = ENOENT;
        tr_errprintf (error, "no run '%s'", id);
        goto fail;
    }
    for (size_t i = 1; i < nv; i++)
        if (!same_user (v[0], v[i])) {
            errno = EINVAL;
            tr_errprintf (error,
                          "run '%s' is the run of several users (%s, "
                          "%s): choose one with -u",
                          id, v[0]->user, v[i]->user);
            goto fail;
        }
    qsort (v, nv, sizeof (*v), tr_stepsum_cmp_id_ptr);
    if (!(runs = tr_runs (v, nv, o->cost, error)))
        goto fail;
    /* advice from the steps that ended, not from running ones' figures */
    for (size_t i = 0; i < nv; i++)
        if (!is_extern (v[i]) && strcmp (v[i]->state, "running"))
            nx[nnx++] = v[i];
    if (o->recommend)
        ropts = *o->recommend;
    else
        tr_sizing_opts (&ropts, NULL);
    ropts.cost = o->cost;
    if (!(recs = tr_recommend_groups (nx, nnx, &ropts, error)))
        goto fail;
    /* the tasks: each job */
    if (!(tasks = calloc (nv, sizeof (*tasks)))
        || !(tv = malloc (nv * sizeof (*tv))))
        goto nomem;
    for (size_t i = 0, j; i < nv; i = j) {
        struct task *t = &tasks[nt];

        for (j = i + 1; j < nv && !strcmp (v[i]->cluster, v[j]->cluster)
                        && !strcmp (v[i]->job_id, v[j]->job_id);
             j++)
            ;
        t->first = i;
        t->n = j - i;
        t->order = nt;
        tr_stepsum_init (&t->job);
        t->process = NULL;
        for (size_t k = i; k < j; k++) {
            if (tr_stepsum_job_add (&t->job, v[k], pool) < 0)
                goto nomem;
            if (is_extern (v[k]))
                continue;
            if (!t->process)
                t->process = v[k]->process;
            if (!t->main
                || tr_stats_cmp (isnan (v[k]->cpu_s) ? -1 : v[k]->cpu_s,
                                 isnan (t->main->cpu_s) ? -1 : t->main->cpu_s)
                       > 0)
                t->main = v[k];
        }
        if (!t->process)
            t->process = v[i]->process;
        if (t->main
            && !(t->findings =
                     tr_diagnose_advised (t->main, o->diagnosis,
                                          group_of (recs, t->main->group))))
            goto nomem;
        tv[nt++] = t;
    }
    if (!(res = json_object ())
        || put (res, "run",
                json_incref (
                    json_array_get (json_object_get (runs, "runs"), 0)))
               < 0
        || (json_object_get (runs, "currency")
            && put (res, "currency",
                    json_incref (json_object_get (runs, "currency")))
                   < 0)
        || put (res, "processes", (procs = json_array ())) < 0
        || put (res, "tasks", (tl = json_array ())) < 0
        || put (res, "slowest", (slow = json_array ())) < 0
        || put (res, "running", (live = json_array ())) < 0)
        goto nomem;
    qsort (tv, nt, sizeof (*tv), cmp_task_process);
    for (size_t i = 0, j; i < nt; i = j) {
        json_t *p;

        for (j = i + 1; j < nt && !strcmp (tv[i]->process, tv[j]->process); j++)
            ;
        if (!(p = process_json (tv + i, j - i, v, recs, o->cost, error)))
            goto fail;
        if (push (procs, p) < 0)
            goto nomem;
    }
    if (shares (procs, "core_hours", "used", "cpu_share_pct") < 0
        || shares (procs, "money", "allocated", "cost_share_pct") < 0)
        goto nomem;
    qsort (tv, nt, sizeof (*tv), cmp_task_start);
    for (size_t i = 0; i < nt; i++)
        if (push (tl, task_json (tv[i], now_ms)) < 0
            || (!strcmp (tr_stepsum_state_name (tv[i]->job.state,
                                                tv[i]->job.oom_kills),
                         "RUNNING")
                && push (live, json_string (tv[i]->job.job_id)) < 0))
            goto nomem;
    qsort (tv, nt, sizeof (*tv), cmp_task_slow);
    for (size_t i = 0, k = 0; i < nt && k < SLOWEST_MAX; i++) {
        /* a running task's time is not its time yet */
        if (isnan (tv[i]->job.elapsed_s)
            || !strcmp (tr_stepsum_state_name (tv[i]->job.state,
                                               tv[i]->job.oom_kills),
                        "RUNNING"))
            continue;
        if (push (slow, json_string (tv[i]->job.job_id)) < 0)
            goto nomem;
        k++;
    }
    goto done;
nomem:
    errno = ENOMEM;
    tr_errprintf (error, "run view: out of memory");
fail:
    json_decref (res);
    res = NULL;
done:
    for (size_t i = 0; i < nt; i++)
        json_decref (tasks[i].findings);
    json_decref (runs);
    json_decref (recs);
    free (tasks);
    free (tv);
    free (v);
    free (nx);
    tr_strpool_destroy (pool);
    return res;
}

/* --- Text ------------------------------------------------------------- */

int tr_run_gantt_cols (double t0,
                       double t1,
                       int cols,
                       double start,
                       double end,
                       int *c0,
                       int *c1)
{
    double span = t1 - t0;
    double a, b;

    if (cols < 1 || isnan (start) || isnan (t0)) {
        errno = EINVAL;
        return -1;
    }
    if (isnan (end) || end > t1)
        end = t1;
    if (!(span > 0)) {
        *c0 = *c1 = 0;
        return 0;
    }
    a = floor ((start - t0) / span * cols);
    b = ceil ((end - t0) / span * cols) - 1;
    if (a < 0)
        a = 0;
    if (a > cols - 1)
        a = cols - 1;
    if (b < a)
        b = a;
    if (b > cols - 1)
        b = cols - 1;
    *c0 = (int)a;
    *c1 = (int)b;
    return 0;
}

char tr_run_gantt_mark (const char *s)
{
    return tr_states_mark (s);
}

/* How bad a mark is, so that the worst task of a cell shows */
static int mark_rank (char m)
{
    const char *order = "=>?FCTMN";
    const char *p = strchr (order, m);

    return p ? (int)(p - order) : 2;
}

static const char *pct (char *buf, size_t size, double frac)
{
    if (isnan (frac))
        snprintf (buf, size, "unknown");
    else if (frac > 0 && frac < 0.0005)
        snprintf (buf, size, "<0.1%%");
    else
        snprintf (buf, size, "%.1f%%", 100.0 * frac);
    return buf;
}

static const char *clock_text (char *buf, size_t size, double ms)
{
    time_t t = (time_t)(ms / 1000.0);
    struct tm tm;

    buf[0] = '\0';
    if (!isnan (ms) && localtime_r (&t, &tm))
        strftime (buf, size, "%H:%M:%S", &tm);
    return buf;
}

static const char *cell (char *buf, size_t size, json_t *run, const char *f)
{
    if (tr_runs_cell (buf, size, run, f) < 0 || !*buf)
        snprintf (buf, size, "unknown");
    return buf;
}

static int print_header (tr_strbuf_t *sb, json_t *view)
{
    json_t *run = json_object_get (view, "run");
    char a[64], b[64], c[64], d[64];
    int rc = 0;

    rc |= tr_strbuf_printf (sb, "Run: %s\n", tr_json_str_or (run, "run", ""));
    rc |= tr_strbuf_printf (sb, "Pipeline: %s\n",
                            *tr_json_str_or (run, "pipeline", "")
                                ? tr_json_str_or (run, "pipeline", "")
                                : "unknown");
    rc |= tr_strbuf_printf (sb, "User: %s\n",
                            *tr_json_str_or (run, "user", "")
                                ? tr_json_str_or (run, "user", "")
                                : "unknown");
    rc |= tr_strbuf_printf (sb, "Start: %s\n",
                            cell (a, sizeof (a), run, "Start"));
    rc |= tr_strbuf_printf (sb, "End: %s\n", cell (a, sizeof (a), run, "End"));
    if (json_is_true (json_object_get (run, "running")))
        rc |= tr_strbuf_printf (sb, "Elapsed: unknown (still running)\n");
    else
        rc |= tr_strbuf_printf (sb, "Elapsed: %s\n",
                                cell (a, sizeof (a), run, "Elapsed"));
    rc |= tr_strbuf_printf (sb, "Jobs: %s (steps: %s), failed: %s\n",
                            cell (a, sizeof (a), run, "Jobs"),
                            cell (b, sizeof (b), run, "Steps"),
                            cell (c, sizeof (c), run, "Failed"));
    rc |= tr_strbuf_printf (sb, "Core-hours: %s used of %s allocated\n",
                            cell (a, sizeof (a), run, "UsedCPUh"),
                            cell (b, sizeof (b), run, "AllocCPUh"));
    if (json_object_get (run, "money"))
        rc |= tr_strbuf_printf (sb, "Cost: %s %s, waste %s%%\n",
                                cell (a, sizeof (a), run, "Cost"),
                                tr_json_str_or (view, "currency", ""),
                                cell (d, sizeof (d), run, "Waste%"));
    else
        rc |= tr_strbuf_printf (sb,
                                "Cost: unknown (no prices), waste %s%% "
                                "of the core-hours\n",
                                cell (d, sizeof (d), run, "Waste%"));
    return rc;
}

static int print_process (tr_strbuf_t *sb, json_t *p, json_t *view)
{
    json_t *fig = json_object_get (p, "figures");
    json_t *v, *it;
    const char *key;
    char a[64], b[64], c[64], d[64];
    size_t i;
    int rc = 0;
    bool first = true;

    rc |= tr_strbuf_printf (sb, "\n%s: %lld task%s, %lld failed",
                            *tr_json_str_or (p, "process", "")
                                ? tr_json_str_or (p, "process", "")
                                : "(no process)",
                            (long long)tr_json_num (p, "tasks"),
                            tr_json_num (p, "tasks") == 1 ? "" : "s",
                            (long long)tr_json_num (p, "failed"));
    json_object_foreach (json_object_get (p, "causes"), key, v)
    {
        rc |= tr_strbuf_printf (sb, "%s%s x%lld", first ? ": " : ", ", key,
                                (long long)json_integer_value (v));
        first = false;
    }
    rc |= tr_strbuf_printf (sb, "\n  Efficiency: CPU %s, memory %s, time %s\n",
                            pct (a, sizeof (a), tr_json_num (p, "cpu_eff")),
                            pct (b, sizeof (b), tr_json_num (p, "mem_eff")),
                            pct (c, sizeof (c), tr_json_num (p, "time_eff")));
    rc |= tr_strbuf_printf (sb,
                            "  Core-hours: %s used of %s allocated (%s "
                            "of the run's used)\n",
                            cell (a, sizeof (a), fig, "UsedCPUh"),
                            cell (b, sizeof (b), fig, "AllocCPUh"),
                            isnan (tr_json_num (p, "cpu_share_pct"))
                                ? "unknown share"
                                : (snprintf (d, sizeof (d), "%.1f%%",
                                             tr_json_num (p, "cpu_share_pct")),
                                   d));
    if (json_object_get (fig, "money"))
        rc |= tr_strbuf_printf (sb, "  Cost: %s %s (%s of the run's)\n",
                                cell (a, sizeof (a), fig, "Cost"),
                                tr_json_str_or (view, "currency", ""),
                                isnan (tr_json_num (p, "cost_share_pct"))
                                    ? "unknown share"
                                    : (snprintf (d, sizeof (d), "%.1f%%",
                                                 tr_json_num (p, "cost_share_"
                                                                 "pct")),
                                       d));
    if (json_object_get (p, "bottleneck"))
        rc |= tr_strbuf_printf (sb, "  Bottleneck: %s (%lld of %lld tasks)\n",
                                tr_json_str_or (p, "bottleneck", ""),
                                (long long)tr_json_num (p, "bottleneck_tasks"),
                                (long long)tr_json_num (p, "tasks"));
    else
        rc |= tr_strbuf_printf (sb, "  Bottleneck: unknown\n");
    json_array_foreach (json_object_get (p, "next_time"), i, it)
    {
        const char *req = tr_json_str_or (it, "request", "");

        rc |= tr_strbuf_printf (sb,
                                "  Next time: %s: %s (%s confidence, "
                                "from %lld runs)\n",
                                tr_json_str_or (it, "group", ""),
                                *req ? req : "as requested",
                                tr_json_str_or (it, "confidence", ""),
                                (long long)tr_json_num (it, "runs"));
    }
    first = true;
    json_array_foreach (json_object_get (p, "tools"), i, it)
    {
        rc |= tr_strbuf_printf (sb, "%s%s (%s CPU)", first ? "  Tools: " : ", ",
                                tr_json_str_or (it, "name", ""),
                                tr_units_duration (a, sizeof (a),
                                                   tr_json_num (it, "cpu_s")));
        first = false;
    }
    if (!first)
        rc |= tr_strbuf_puts (sb, "\n");
    return rc;
}

static int print_gantt (tr_strbuf_t *sb, json_t *view, int width)
{
    json_t *tasks = json_object_get (view, "tasks");
    json_t *procs = json_object_get (view, "processes");
    size_t nt = json_array_size (tasks), nlines, i;
    bool per_task = nt <= GANTT_TASK_LINES;
    double t0 = NAN, t1 = NAN;
    int labelw = 0, cols;
    char *bar = NULL, a[64], b[64], c[64];
    json_t *t;
    int rc = 0;

    json_array_foreach (tasks, i, t)
    {
        double s = tr_json_num (t, "start_unix_ms"), e = tr_json_num (t, "end_"
                                                                         "unix_"
                                                                         "ms");

        if (!isnan (s) && (isnan (t0) || s < t0))
            t0 = s;
        /* a running task: as far as its figures go */
        if (isnan (e) && !isnan (tr_json_num (t, "elapsed_s")))
            e = s + 1000.0 * tr_json_num (t, "elapsed_s");
        if (isnan (e))
            e = s;
        if (!isnan (e) && (isnan (t1) || e > t1))
            t1 = e;
    }
    if (isnan (t0))
        return tr_strbuf_puts (sb, "\nTimeline: unknown (no start times)\n");
    nlines = per_task ? nt : json_array_size (procs);
    for (i = 0; i < nlines; i++) {
        json_t *o = json_array_get (per_task ? tasks : procs, i);
        char label[256];
        int len;

        if (per_task)
            len = snprintf (label, sizeof (label), "%s %s",
                            tr_json_str_or (o, "job_id", ""),
                            tr_json_str_or (o, "process", ""));
        else
            len = *tr_json_str_or (o, "process", "")
                      ? (int)strlen (tr_json_str_or (o, "process", ""))
                      : 12;
        if (len > labelw)
            labelw = len;
    }
    if (labelw > GANTT_LABEL_MAX)
        labelw = GANTT_LABEL_MAX;
    if (labelw < 4)
        labelw = 4;
    cols = width - labelw - 3;
    if (cols < 10)
        cols = 10;
    if (!(bar = malloc ((size_t)cols + 1)))
        return -1;
    rc |= tr_strbuf_printf (sb,
                            "\nTimeline, %s to %s (%s):\n"
                            "= completed  > running  F failed  C cancelled  "
                            "T timeout  M out of memory  N node failed\n",
                            clock_text (a, sizeof (a), t0),
                            clock_text (b, sizeof (b), t1),
                            tr_units_duration (c, sizeof (c),
                                               (t1 - t0) / 1000.0));
    for (i = 0; i < nlines; i++) {
        json_t *o = json_array_get (per_task ? tasks : procs, i);
        char label[256];
        size_t k;

        memset (bar, ' ', (size_t)cols);
        bar[cols] = '\0';
        json_array_foreach (tasks, k, t)
        {
            int c0, c1;
            char m;

            if (!per_task ? strcmp (tr_json_str_or (t, "process", ""),
                                    tr_json_str_or (o, "process", ""))
                          : t != o)
                continue;
            if (tr_run_gantt_cols (t0, t1, cols,
                                   tr_json_num (t, "start_unix_ms"),
                                   tr_json_num (t, "end_unix_ms"), &c0, &c1)
                < 0)
                continue;
            m = tr_run_gantt_mark (tr_json_str_or (t, "state", ""));
            for (int x = c0; x <= c1; x++)
                if (bar[x] == ' ' || mark_rank (m) > mark_rank (bar[x]))
                    bar[x] = m;
        }
        if (per_task)
            snprintf (label, sizeof (label), "%s %s",
                      tr_json_str_or (o, "job_id", ""),
                      tr_json_str_or (o, "process", ""));
        else
            snprintf (label, sizeof (label), "%s",
                      *tr_json_str_or (o, "process", "")
                          ? tr_json_str_or (o, "process", "")
                          : "(no process)");
        rc |=
            tr_strbuf_printf (sb, "%-*.*s |%s|\n", labelw, labelw, label, bar);
    }
    free (bar);
    return rc;
}

static json_t *task_by_id (json_t *tasks, const char *id)
{
    json_t *t;
    size_t i;

    json_array_foreach (tasks, i,
                        t) if (!strcmp (tr_json_str_or (t, "job_id", ""),
                                        id)) return t;
    return NULL;
}

static int print_slowest (tr_strbuf_t *sb, json_t *view)
{
    json_t *id, *tasks = json_object_get (view, "tasks");
    size_t i;
    int rc = 0;

    if (json_array_size (json_object_get (view, "slowest")) == 0)
        return 0;
    rc |= tr_strbuf_puts (sb, "\nSlowest tasks:\n");
    json_array_foreach (json_object_get (view, "slowest"), i, id)
    {
        json_t *t = task_by_id (tasks, json_string_value (id));
        char a[64];

        if (!t)
            continue;
        rc |= tr_strbuf_printf (
            sb, "  %s (%s) %s %s on %s: %s\n", tr_json_str_or (t, "job_id", ""),
            tr_json_str_or (t, "process", ""),
            tr_units_duration (a, sizeof (a), tr_json_num (t, "elapsed_s")),
            tr_json_str_or (t, "state", ""),
            *tr_json_str_or (t, "node", "") ? tr_json_str_or (t, "node", "")
                                            : "unknown",
            *tr_json_str_or (t, "diagnosis_text", "") ? tr_json_str_or (t,
                                                                        "diagno"
                                                                        "sis"
                                                                        "_text",
                                                                        "")
                                                      : "no diagnosis");
    }
    return rc;
}

/* The tasks running now, with their live figures and how old they are. */
static int print_running (tr_strbuf_t *sb, json_t *view)
{
    json_t *id, *tasks = json_object_get (view, "tasks");
    json_t *ids = json_object_get (view, "running");
    double oldest = NAN;
    size_t i;
    int rc = 0;

    if (json_array_size (ids) == 0)
        return 0;
    json_array_foreach (ids, i, id)
    {
        json_t *l =
            json_object_get (task_by_id (tasks, json_string_value (id)), "liv"
                                                                         "e");
        double age = tr_json_num (l, "age_s");

        /* the stale say their own age */
        if (!isnan (age) && !json_is_true (json_object_get (l, "stale"))
            && !(age <= oldest))
            oldest = age;
    }
    if (isnan (oldest))
        rc |= tr_strbuf_printf (sb, "\nRunning now: %zu task%s\n",
                                json_array_size (ids),
                                json_array_size (ids) == 1 ? "" : "s");
    else {
        char a[64];

        rc |= tr_strbuf_printf (sb,
                                "\nRunning now: %zu task%s (figures at "
                                "most %s old)\n",
                                json_array_size (ids),
                                json_array_size (ids) == 1 ? "" : "s",
                                tr_units_duration (a, sizeof (a), oldest));
    }
    json_array_foreach (ids, i, id)
    {
        json_t *t = task_by_id (tasks, json_string_value (id));
        json_t *l = json_object_get (t, "live");
        char a[64], b[64], c[64], d[64], e[64], f[64];

        if (!t)
            continue;
        rc |= tr_strbuf_printf (sb, "  %s (%s) on %s: ",
                                tr_json_str_or (t, "job_id", ""),
                                tr_json_str_or (t, "process", ""),
                                *tr_json_str_or (t, "node", "")
                                    ? tr_json_str_or (t, "node", "")
                                    : "unknown");
        if (!l)
            rc |= tr_strbuf_puts (sb, "no live figures (its node writes "
                                      "none); ");
        else if (json_is_true (json_object_get (l, "stale")))
            rc |= tr_strbuf_printf (sb,
                                    "STALE: figures %s old (its node "
                                    "stopped writing them); ",
                                    tr_units_duration (a, sizeof (a),
                                                       tr_json_num (l, "age_"
                                                                       "s")));
        if (!isnan (tr_json_num (t, "stalled_s")))
            rc |= tr_strbuf_printf (sb,
                                    "STALLED for %s (no CPU or I/O "
                                    "progress); ",
                                    tr_units_duration (a, sizeof (a),
                                                       tr_json_num (t, "stalled"
                                                                       "_s")));
        rc |= tr_strbuf_printf (
            sb, "%s so far, CPU %s, memory %s of %s, I/O %s read, %s written\n",
            tr_units_duration (a, sizeof (a), tr_json_num (t, "elapsed_s")),
            pct (b, sizeof (b), tr_json_num (t, "cpu_eff")),
            isnan (tr_json_num (t, "mem_peak_bytes"))
                ? "unknown"
                : tr_units_bytes (c, sizeof (c),
                                  tr_json_num (t, "mem_peak_bytes")),
            isnan (tr_json_num (t, "req_mem_bytes"))
                ? "unknown"
                : tr_units_bytes (d, sizeof (d),
                                  tr_json_num (t, "req_mem_bytes")),
            isnan (tr_json_num (t, "read_bytes"))
                ? "unknown"
                : tr_units_bytes (e, sizeof (e), tr_json_num (t, "read_bytes")),
            isnan (tr_json_num (t, "write_bytes"))
                ? "unknown"
                : tr_units_bytes (f, sizeof (f),
                                  tr_json_num (t, "write_bytes")));
    }
    return rc;
}

/* The failed tasks by name: job id, process, job name, cause, node and
 * diagnosis; the first FAILED_MAX of them in the order of the tasks.
 */
static int print_failed (tr_strbuf_t *sb, json_t *view)
{
    json_t *t;
    size_t i, n = 0;
    int rc = 0;

    json_array_foreach (json_object_get (view, "tasks"), i, t)
    {
        if (!*tr_json_str_or (t, "outcome", "")
            && !*tr_json_str_or (t, "cause", ""))
            continue;
        if (n++ == 0)
            rc |= tr_strbuf_puts (sb, "\nFailed tasks:\n");
        if (n > FAILED_MAX)
            continue;
        /* the outcome in sacct's words, then the cause and its evidence
         * (cause.h), else the diagnosis
         */
        rc |= tr_strbuf_printf (sb, "  %s (%s) %s: %s on %s: %s%s%s\n",
                                tr_json_str_or (t, "job_id", ""),
                                *tr_json_str_or (t, "process", "")
                                    ? tr_json_str_or (t, "process", "")
                                    : "no process",
                                *tr_json_str_or (t, "job_name", "")
                                    ? tr_json_str_or (t, "job_name", "")
                                    : "no name",
                                *tr_json_str_or (t, "outcome", "")
                                    ? tr_json_str_or (t, "outcome", "")
                                    : tr_json_str_or (t, "state", ""),
                                *tr_json_str_or (t, "node", "")
                                    ? tr_json_str_or (t, "node", "")
                                    : "unknown",
                                *tr_json_str_or (t, "cause", "")
                                    ? tr_json_str_or (t, "cause", "")
                                    : "",
                                *tr_json_str_or (t, "cause", "") ? ": " : "",
                                *tr_json_str_or (t, "cause_text", "")
                                    ? tr_json_str_or (t, "cause_text", "")
                                : *tr_json_str_or (t, "diagnosis_text", "")
                                    ? tr_json_str_or (t, "diagnosis_text", "")
                                    : "no diagnosis");
    }
    if (n > FAILED_MAX)
        rc |= tr_strbuf_printf (sb,
                                "  and %zu more (--json lists every "
                                "task)\n",
                                n - FAILED_MAX);
    return rc;
}

/* A copy of v whose strings a terminal shows as they are: what a job
 * controls (its names, tags, node and tool names) with control
 * characters and the like made visible escapes (tr_strbuf_printable).
 * NULL when out of memory.
 */
static json_t *printable_copy (json_t *v)
{
    json_t *c, *m;
    const char *k;
    size_t i;

    if (json_is_string (v)) {
        tr_strbuf_t sb = TR_STRBUF_INIT;

        if (tr_text_is_printable (json_string_value (v)))
            return json_incref (v);
        if (tr_strbuf_printable (&sb, json_string_value (v)) < 0
            || !tr_strbuf_str (&sb)) {
            tr_strbuf_free (&sb);
            return NULL;
        }
        c = json_string (tr_strbuf_str (&sb));
        tr_strbuf_free (&sb);
        return c;
    }
    if (json_is_array (v)) {
        if (!(c = json_array ()))
            return NULL;
        json_array_foreach (v, i, m) if (push (c, printable_copy (m)) < 0)
        {
            json_decref (c);
            return NULL;
        }
        return c;
    }
    if (json_is_object (v)) {
        if (!(c = json_object ()))
            return NULL;
        json_object_foreach (v, k, m)
        {
            tr_strbuf_t sb = TR_STRBUF_INIT;
            bool plain = tr_text_is_printable (k);
            int rc;

            if (!plain
                && (tr_strbuf_printable (&sb, k) < 0 || !tr_strbuf_str (&sb))) {
                tr_strbuf_free (&sb);
                json_decref (c);
                return NULL;
            }
            rc = put (c, plain ? k : tr_strbuf_str (&sb), printable_copy (m));
            tr_strbuf_free (&sb);
            if (rc < 0) {
                json_decref (c);
                return NULL;
            }
        }
        return c;
    }
    return json_incref (v);
}

int tr_run_view_print (FILE *out, json_t *view, int width, tr_error_t *error)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    json_t *p;
    size_t i;
    int rc = 0;

    if (!json_is_object (json_object_get (view, "run"))
        || !json_is_array (json_object_get (view, "processes"))) {
        errno = EINVAL;
        return tr_errprintf (error, "run view: not a tr_run_view result");
    }
    /* names as a terminal shows them, never an escape sequence */
    if (!(view = printable_copy (view))) {
        errno = ENOMEM;
        return tr_errprintf (error, "run view: out of memory");
    }
    if (width <= 0)
        width = TR_REPORT_DEFAULT_WIDTH;
    if (width < TR_REPORT_MIN_WIDTH)
        width = TR_REPORT_MIN_WIDTH;
    rc |= print_header (&sb, view);
    rc |= print_running (&sb, view);
    json_array_foreach (json_object_get (view, "processes"), i, p)
    {
        rc |= print_process (&sb, p, view);
    }
    rc |= print_gantt (&sb, view, width);
    rc |= print_failed (&sb, view);
    rc |= print_slowest (&sb, view);
    json_decref (view);
    if (rc < 0) {
        tr_strbuf_free (&sb);
        errno = ENOMEM;
        return tr_errprintf (error, "run view: out of memory");
    }
    rc = tr_report_wrap (out, tr_strbuf_str (&sb), strlen (tr_strbuf_str (&sb)),
                         width);
    tr_strbuf_free (&sb);
    if (rc < 0 || ferror (out))
        return tr_errprintf (error, "writing: %s", strerror (errno));
    return 0;
}
