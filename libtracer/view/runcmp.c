/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Pipeline runs compared: two runs side by side per process, with the
 * regressions' drift test (recommend.c) flagging what changed; and one
 * row per run, for regressions over a pipeline's runs.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/record/merge.h"
#include "report.h"
#include "runcmp.h"
#include "libtracer/util/stats.h"
#include "libtracer/record/when.h"
#include "libtracer/util/units.h"
#include "libtracer/util/json.h"
#include "libtracer/record/states.h"

/* Fold rows v[0..n-1] (one run, sorted by job and step) into job rows
 * jobs[0..*nj-1].  0, or -1 on ENOMEM.
 */
static int fold_jobs (const tr_stepsum_t **v, size_t n, tr_stepsum_t *jobs,
                      size_t *nj, tr_strpool_t *pool)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp (v[i]->cluster, v[i - 1]->cluster)
            || strcmp (v[i]->job_id, v[i - 1]->job_id))
            tr_stepsum_init (&jobs[k++]);
        if (tr_stepsum_job_add (&jobs[k - 1], v[i], pool) < 0)
            return -1;
    }
    *nj = k;
    return 0;
}

static int cmp_job_process (const void *pa, const void *pb)
{
    const tr_stepsum_t *x = pa, *y = pb;

    return strcmp (x->process, y->process);
}

struct side {
    const char *id;
    const tr_stepsum_t **v;     /* its rows */
    size_t n;
    tr_stepsum_t *jobs;         /* its tasks, by process */
    size_t njobs;
};

static int put (json_t *o, const char *k, json_t *v)
{
    return json_object_set_new (o, k, v) ? -1 : 0;
}

static int put_num (json_t *o, const char *k, double v)
{
    return isfinite (v) ? put (o, k, json_real (v)) : 0;
}

/* The rows of run id: checks it is one user's. */
static int pick (const tr_stepsum_t **v, size_t nv, struct side *s,
                 tr_error_t *error)
{
    size_t i = 0;

    while (i < nv && strcmp (v[i]->run_id, s->id))
        i++;
    if (i == nv) {
        errno = ENOENT;
        tr_errprintf (error, "no run %s among the selected steps "
                      "(tracer-report --runs lists them)", s->id);
        return -1;
    }
    s->v = v + i;
    for (s->n = 0; i + s->n < nv && !strcmp (v[i + s->n]->run_id, s->id);
         s->n++)
        if (tr_runs_cmp_user (s->v[0], s->v[s->n])) {
            errno = EINVAL;
            tr_errprintf (error, "run %s is the run of several users: "
                          "choose one with -u", s->id);
            return -1;
        }
    return 0;
}

/* The users sort first: rows of run id may be in several places when
 * another user's rows sort between them; pick checks the first stretch
 * and this the rest.
 */
static int one_user (const tr_stepsum_t **v, size_t nv, const struct side *s,
                     tr_error_t *error)
{
    for (size_t i = 0; i < nv; i++)
        if (!strcmp (v[i]->run_id, s->id)
            && tr_runs_cmp_user (v[i], s->v[0])) {
            errno = EINVAL;
            tr_errprintf (error, "run %s is the run of several users: "
                          "choose one with -u", s->id);
            return -1;
        }
    return 0;
}

static json_t *run_info (const struct side *s)
{
    double start = NAN, end = NAN;
    bool running = false;
    size_t failed = 0;
    json_t *o;

    for (size_t i = 0; i < s->n; i++) {
        const tr_stepsum_t *r = s->v[i];

        if (!isnan (r->start_ms) && (isnan (start) || r->start_ms < start))
            start = r->start_ms;
        if (isnan (r->end_ms))
            running = true;
        else if (isnan (end) || r->end_ms > end)
            end = r->end_ms;
    }
    for (size_t i = 0; i < s->njobs; i++)
        failed += tr_states_failed (s->jobs[i].state);
    if (!(o = json_pack ("{s:s s:s s:s s:I s:I s:b}", "run", s->id,
                         "pipeline", s->v[0]->pipeline, "user",
                         s->v[0]->user, "tasks", (json_int_t)s->njobs,
                         "failed", (json_int_t)failed, "running", running)))
        return NULL;
    if ((!isnan (s->v[0]->uid)
         && put (o, "uid", json_integer ((json_int_t)s->v[0]->uid)) < 0)
        || (!isnan (start)
            && put (o, "start_unix_ms", json_integer ((json_int_t)start)) < 0)
        || (!running && !isnan (end) && !isnan (start)
            && put (o, "elapsed_s", json_real ((end - start) / 1000.0)) < 0)) {
        json_decref (o);
        return NULL;
    }
    return o;
}

/* Sum of the known values, NAN when none is. */
static double add (double sum, double v)
{
    return isnan (v) ? sum : isnan (sum) ? v : sum + v;
}

/* The figures of tasks j[0..k-1] of one process in one run. */
static json_t *process_side (const tr_stepsum_t *j, size_t k, double *buf)
{
    double total = NAN, cpu = NAN, mem = NAN, io = NAN, med;
    size_t failed = 0, nb = 0;
    json_t *o;

    for (size_t i = 0; i < k; i++) {
        double e = j[i].elapsed_s;

        failed += tr_states_failed (j[i].state);
        if (isfinite (e))
            buf[nb++] = e;
        total = add (total, e);
        cpu = add (cpu, j[i].cpu_s);
        io = add (io, tr_recommend_metric (&j[i], 3));
        if (!isnan (j[i].mem_peak_bytes)
            && (isnan (mem) || j[i].mem_peak_bytes > mem))
            mem = j[i].mem_peak_bytes;
    }
    med = nb ? tr_stats_median (buf, nb) : NAN;
    if (!(o = json_pack ("{s:I s:I}", "tasks", (json_int_t)k, "failed",
                         (json_int_t)failed))
        || put_num (o, "elapsed_median_s", med) < 0
        || put_num (o, "elapsed_total_s", total) < 0
        || put_num (o, "cpu_s", cpu) < 0
        || put_num (o, "mem_peak_bytes", mem) < 0
        || put_num (o, "io_bytes", io) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

/* The least change of a metric (tr_recommend_metric order) per task
 * that is flagged at all: a second of elapsed or CPU time, 16 MiB of
 * memory or I/O.  Below that, any ratio is noise (a short task that
 * read 1.3 MiB and then 208 KiB, its interpreter's files cached the
 * second time, did not change in any sense that matters).
 */
#define MIN_BYTES (16.0 * 1048576)
static const double min_change[TR_RECOMMEND_METRICS] = { 1, MIN_BYTES, 1,
                                                         MIN_BYTES };

/* Fewer tasks than this in run A cannot show their own spread (one
 * short task runs 1.7 s, then 2.7 s on a busy node): their spread is
 * taken as at least this fraction of their median, so that only a
 * change well beyond such noise is flagged (a task twice as slow is).
 */
#define FEW_TASKS 3
#define FEW_TASKS_SPREAD 0.2

/* The changes from tasks ja[0..ka-1] to jb[0..kb-1]. */
static json_t *changes (const tr_stepsum_t *ja, size_t ka,
                        const tr_stepsum_t *jb, size_t kb,
                        const struct tr_recommend_regress_opts *o,
                        double *bufa, double *bufb)
{
    json_t *arr = json_array ();
    struct tr_recommend_regress_opts few = *o;

    if (few.mad_floor < FEW_TASKS_SPREAD)
        few.mad_floor = FEW_TASKS_SPREAD;
    for (int m = 0; arr && m < TR_RECOMMEND_METRICS; m++) {
        size_t na = 0, nb = 0;
        struct tr_drift d;
        double x;
        int v;

        for (size_t i = 0; i < ka; i++)
            if (isfinite (bufa[na] = tr_recommend_metric (&ja[i], m)))
                na++;
        for (size_t i = 0; i < kb; i++)
            if (isfinite (bufb[nb] = tr_recommend_metric (&jb[i], m)))
                nb++;
        if (nb == 0)
            continue;
        x = tr_stats_median (bufb, nb);
        if ((v = tr_recommend_drift (x, bufa, na, na < FEW_TASKS ? &few : o,
                                     &d))
            < 0)
            goto fail;
        if ((v != TR_DRIFT_UP && v != TR_DRIFT_DOWN)
            || fabs (x - d.median) < min_change[m])
            continue;
        if (json_array_append_new (
                arr, json_pack ("{s:s s:s s:f s:f s:f s:f s:f s:I s:I}",
                                "metric", tr_recommend_metric_name (m),
                                "direction", v == TR_DRIFT_UP ? "up" : "down",
                                "value", x, "median", d.median, "mad", d.mad,
                                "z", d.z, "ratio", d.ratio, "tasks_a",
                                (json_int_t)na, "tasks_b", (json_int_t)nb)))
            goto fail;
    }
    return arr;
fail:
    json_decref (arr);
    return NULL;
}

/* The tasks of process p in side s: *k of them from *at. */
static const tr_stepsum_t *tasks_of (const struct side *s, const char *p,
                                     size_t *k)
{
    size_t i = 0;

    *k = 0;
    while (i < s->njobs && strcmp (s->jobs[i].process, p))
        i++;
    while (i + *k < s->njobs && !strcmp (s->jobs[i + *k].process, p))
        (*k)++;
    return *k ? &s->jobs[i] : NULL;
}

static json_t *processes (const struct side *a, const struct side *b,
                          const struct tr_recommend_regress_opts *o)
{
    size_t ia = 0, ib = 0, most = a->njobs > b->njobs ? a->njobs : b->njobs;
    double *bufa = malloc ((most ? most : 1) * sizeof (double));
    double *bufb = malloc ((most ? most : 1) * sizeof (double));
    json_t *arr = bufa && bufb ? json_array () : NULL;

    while (arr && (ia < a->njobs || ib < b->njobs)) {
        const char *p;
        const tr_stepsum_t *ja, *jb;
        size_t ka, kb;
        json_t *po, *ch = NULL;
        int c;

        if (ia == a->njobs)
            c = 1;
        else if (ib == b->njobs)
            c = -1;
        else
            c = strcmp (a->jobs[ia].process, b->jobs[ib].process);
        p = c <= 0 ? a->jobs[ia].process : b->jobs[ib].process;
        ja = c <= 0 ? tasks_of (a, p, &ka) : NULL;
        jb = c >= 0 ? tasks_of (b, p, &kb) : NULL;
        if (!ja)
            ka = 0;
        if (!jb)
            kb = 0;
        ia += ka;
        ib += kb;
        if (!(po = json_pack ("{s:s s:s}", "process", p, "in",
                              ja && jb ? "both" : ja ? "a" : "b"))
            || json_array_append_new (arr, po)
            || (ja && put (po, "a", process_side (ja, ka, bufa)) < 0)
            || (jb && put (po, "b", process_side (jb, kb, bufa)) < 0)
            || (ja && jb
                && (!(ch = changes (ja, ka, jb, kb, o, bufa, bufb))
                    || put (po, "changes", ch) < 0))) {
            json_decref (arr);
            arr = NULL;
        }
    }
    free (bufa);
    free (bufb);
    return arr;
}

json_t *tr_run_compare (const tr_stepsum_t *const *rows,
                        size_t n,
                        const char *a,
                        const char *b,
                        const struct tr_recommend_regress_opts *o,
                        tr_error_t *error)
{
    struct side s[2] = { { .id = a }, { .id = b } };
    const tr_stepsum_t **v = NULL;
    tr_strpool_t *pool = NULL;
    json_t *res = NULL, *procs;
    size_t nv = 0;

    if ((!rows && n > 0) || !a || !b || !*a || !*b || !strcmp (a, b) || !o
        || !(o->threshold >= 0) || !(o->min_ratio >= 1)
        || !(o->mad_floor > 0)) {
        errno = EINVAL;
        tr_errprintf (error, "compare: two different runs are needed");
        return NULL;
    }
    if (!(v = malloc ((n ? n : 1) * sizeof (*v)))
        || !(pool = tr_strpool_create ()))
        goto nomem;
    for (size_t i = 0; i < n; i++)
        if (!strcmp (rows[i]->run_id, a) || !strcmp (rows[i]->run_id, b))
            v[nv++] = rows[i];
    if (nv)
        qsort (v, nv, sizeof (*v), tr_runs_cmp_rows);
    for (int k = 0; k < 2; k++) {
        if (pick (v, nv, &s[k], error) < 0 || one_user (v, nv, &s[k], error))
            goto out;
        if (!(s[k].jobs = calloc (s[k].n, sizeof (*s[k].jobs)))
            || fold_jobs (s[k].v, s[k].n, s[k].jobs, &s[k].njobs, pool) < 0)
            goto nomem;
        qsort (s[k].jobs, s[k].njobs, sizeof (*s[k].jobs), cmp_job_process);
    }
    if (!(res = json_pack ("{s:i s:{s:I s:f s:f s:f} s:b}", "version", 1,
                           "options", "min_tasks", (json_int_t)o->min_history,
                           "threshold", o->threshold, "min_ratio",
                           o->min_ratio, "mad_floor", o->mad_floor,
                           "same_pipeline",
                           !strcmp (s[0].v[0]->pipeline, s[1].v[0]->pipeline)))
        || put (res, "a", run_info (&s[0])) < 0
        || put (res, "b", run_info (&s[1])) < 0
        || !(procs = processes (&s[0], &s[1], o))
        || put (res, "processes", procs) < 0)
        goto nomem;
    goto out;
nomem:
    json_decref (res);
    res = NULL;
    errno = ENOMEM;
    tr_errprintf (error, "compare: out of memory");
out:
    for (int k = 0; k < 2; k++)
        free (s[k].jobs);
    free (v);
    tr_strpool_destroy (pool);
    return res;
}

/* --- Printing --------------------------------------------------------- */

static void dur (char *buf, size_t size, double s)
{
    buf[0] = '\0';
    if (isfinite (s))
        tr_units_duration (buf, size, s);
}

static void bytes (char *buf, size_t size, double b, bool parsable)
{
    buf[0] = '\0';
    if (isfinite (b) && parsable)
        snprintf (buf, size, "%.0f", b);
    else if (isfinite (b))
        tr_units_bytes (buf, size, b);
}

static void print_run (FILE *out, const char *label, json_t *run)
{
    char when[32] = "";
    double t = tr_json_num (run, "start_unix_ms");

    if (isfinite (t)) {
        time_t s = (time_t)(t / 1000.0);
        struct tm tm;

        if (localtime_r (&s, &tm))
            strftime (when, sizeof (when), "%Y-%m-%dT%H:%M:%S", &tm);
    }
    fprintf (out,
             "%s %s: pipeline %s, user %s, start %s, %lld tasks, "
             "%lld failed\n",
             label, tr_json_str_or (run, "run", ""),
             *tr_json_str_or (run, "pipeline", "")
                 ? tr_json_str_or (run, "pipeline", "")
                 : "unknown",
             tr_json_str_or (run, "user", ""), *when ? when : "unknown",
             (long long)tr_json_num (run, "tasks"),
             (long long)tr_json_num (run, "failed"));
}

/* The metrics that changed, "elapsed_s+,cpu_s-". */
static void change_list (char *buf, size_t size, json_t *ch)
{
    size_t i, len = 0;
    json_t *c;

    buf[0] = '\0';
    json_array_foreach (ch, i, c) {
        int w =
            snprintf (buf + len, size - len, "%s%s%c", i ? "," : "",
                      tr_json_str_or (c, "metric", ""),
                      strcmp (tr_json_str_or (c, "direction", ""), "up") ? '-'
                                                                         : '+');

        if (w < 0 || (size_t)w >= size - len)
            break;
        len += (size_t)w;
    }
}

static void print_side (FILE *out, const char *name, const char *label,
                        json_t *side, json_t *ch, bool parsable)
{
    char med[32], tot[32], cpu[32], mem[32], io[32], chs[256], pname[20];

    if (!side) {
        if (parsable)
            fprintf (out, "%s|%s||||||||\n", name, label);
        else
            fprintf (out, "%-16s %-3s (not in this run)\n", name, label);
        return;
    }
    dur (med, sizeof (med), tr_json_num (side, "elapsed_median_s"));
    dur (tot, sizeof (tot), tr_json_num (side, "elapsed_total_s"));
    dur (cpu, sizeof (cpu), tr_json_num (side, "cpu_s"));
    bytes (mem, sizeof (mem), tr_json_num (side, "mem_peak_bytes"), parsable);
    bytes (io, sizeof (io), tr_json_num (side, "io_bytes"), parsable);
    change_list (chs, sizeof (chs), ch);
    if (parsable) {
        fprintf (out, "%s|%s|%lld|%lld|%s|%s|%s|%s|%s|%s\n", name, label,
                 (long long)tr_json_num (side, "tasks"),
                 (long long)tr_json_num (side, "failed"), med, tot, cpu, mem,
                 io, chs);
        return;
    }
    if (strlen (name) > 16)
        snprintf (pname, sizeof (pname), "%.15s+", name);
    else
        snprintf (pname, sizeof (pname), "%s", name);
    fprintf (out, "%-16s %-3s %5lld %4lld %8s %8s %8s %9s %9s\n", pname,
             json_array_size (ch) ? "B*" : label,
             (long long)tr_json_num (side, "tasks"),
             (long long)tr_json_num (side, "failed"), med, tot, cpu, mem, io);
}

static const char *metric_label (const char *m)
{
    return !strcmp (m, "elapsed_s") ? "elapsed"
           : !strcmp (m, "mem_peak_bytes") ? "peak memory"
           : !strcmp (m, "cpu_s") ? "CPU time" : "I/O";
}

static void print_change (FILE *out, const char *process, json_t *c)
{
    const char *m = tr_json_str_or (c, "metric", "");
    char was[32], now[32];
    bool b = !strcmp (m, "mem_peak_bytes") || !strcmp (m, "io_bytes");

    if (b) {
        bytes (was, sizeof (was), tr_json_num (c, "median"), false);
        bytes (now, sizeof (now), tr_json_num (c, "value"), false);
    }
    else {
        snprintf (was, sizeof (was), "%.1f s", tr_json_num (c, "median"));
        snprintf (now, sizeof (now), "%.1f s", tr_json_num (c, "value"));
    }
    fprintf (out, "  %s: %s %s x%.2f per task, median %s (A %s), z %.1f\n",
             *process ? process : "(none)", metric_label (m),
             strcmp (tr_json_str_or (c, "direction", ""), "up") ? "down" : "up",
             tr_json_num (c, "ratio"), now, was, tr_json_num (c, "z"));
}

int tr_run_compare_print (FILE *out, json_t *cmp, bool parsable)
{
    json_t *procs = json_object_get (cmp, "processes"), *p;
    json_t *opts = json_object_get (cmp, "options");
    size_t i, nchanged = 0;

    if (!json_is_array (procs) || !json_is_object (json_object_get (cmp, "a"))
        || !json_is_object (json_object_get (cmp, "b"))) {
        errno = EINVAL;
        return -1;
    }
    if (parsable)
        fprintf (out, "Process|Run|Tasks|Failed|ElapsedMedian|ElapsedTotal|"
                 "CPUTime|PeakMem|IO|Changes\n");
    else {
        print_run (out, "A", json_object_get (cmp, "a"));
        print_run (out, "B", json_object_get (cmp, "b"));
        fprintf (out, "\n%-16s %-3s %5s %4s %8s %8s %8s %9s %9s\n",
                 "Process", "Run", "Tasks", "Fail", "Median", "Total", "CPU",
                 "PeakMem", "I/O");
        fprintf (out, "---------------- --- ----- ---- -------- -------- "
                 "-------- --------- ---------\n");
    }
    json_array_foreach (procs, i, p) {
        const char *name = tr_json_str_or (p, "process", "");
        json_t *ch = json_object_get (p, "changes");

        print_side (out, parsable ? name : *name ? name : "(none)", "A",
                    json_object_get (p, "a"), NULL, parsable);
        print_side (out, parsable ? name : "", "B", json_object_get (p, "b"),
                    ch, parsable);
        nchanged += json_array_size (ch);
    }
    if (!parsable && !nchanged)
        fprintf (out,
                 "\nNo change beyond noise (robust z over %.1f and a "
                 "ratio over %.2f).\n",
                 tr_json_num (opts, "threshold"),
                 tr_json_num (opts, "min_ratio"));
    else if (!parsable) {
        fprintf (out,
                 "\nChanges from A to B, per task (robust z over %.1f "
                 "and a ratio over %.2f):\n",
                 tr_json_num (opts, "threshold"),
                 tr_json_num (opts, "min_ratio"));
        json_array_foreach (procs, i, p) {
            size_t k;
            json_t *c;

            json_array_foreach (json_object_get (p, "changes"), k, c)
                print_change (out, tr_json_str_or (p, "process", ""), c);
        }
    }
    fflush (out);
    return ferror (out) ? -1 : 0;
}

/* --- One row per run -------------------------------------------------- */

/* Fold run rows v[0..n-1] (sorted by job and step) into one row. */
static int run_row (const tr_stepsum_t **v, size_t n, tr_rowset_t *out)
{
    tr_stepsum_t row;
    bool failed = false;

    tr_stepsum_init (&row);
    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = v[i];

        if (isnan (r->end_ms))
            return 0;           /* still running */
        if (!isnan (r->start_ms)
            && (isnan (row.start_ms) || r->start_ms < row.start_ms))
            row.start_ms = r->start_ms;
        if (isnan (row.end_ms) || r->end_ms > row.end_ms)
            row.end_ms = r->end_ms;
        row.cpu_s = add (row.cpu_s, r->cpu_s);
        row.read_bytes = add (row.read_bytes, r->read_bytes);
        row.write_bytes = add (row.write_bytes, r->write_bytes);
        if (!isnan (r->mem_peak_bytes)
            && (isnan (row.mem_peak_bytes)
                || r->mem_peak_bytes > row.mem_peak_bytes))
            row.mem_peak_bytes = r->mem_peak_bytes;
        failed |= tr_states_failed (r->state);
    }
    if (n == 0 || !*v[0]->pipeline)
        return 0;
    if (!isnan (row.start_ms))
        row.elapsed_s = (row.end_ms - row.start_ms) / 1000.0;
    row.uid = v[0]->uid;
    row.gid = v[0]->gid;
    if (!(row.group = tr_strpool_intern (out->pool, v[0]->pipeline))
        || !(row.pipeline = row.group)
        || !(row.job_id = tr_strpool_intern (out->pool, v[0]->run_id))
        || !(row.run_id = row.job_id)
        || !(row.cluster = tr_strpool_intern (out->pool, v[0]->cluster))
        || !(row.user = tr_strpool_intern (out->pool, v[0]->user))
        || !(row.state = tr_strpool_intern (out->pool,
                                            failed ? "failed" : "completed")))
        return -1;
    return tr_rowset_add (out, &row);
}

int tr_run_rows (const tr_stepsum_t *const *rows,
                 size_t n,
                 tr_rowset_t *out,
                 tr_error_t *error)
{
    const tr_stepsum_t **v;
    size_t nv = 0;
    int rc = 0;

    if (!(v = malloc ((n ? n : 1) * sizeof (*v)))) {
        errno = ENOMEM;
        tr_errprintf (error, "runs: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (*rows[i]->run_id)
            v[nv++] = rows[i];
    if (nv)
        qsort (v, nv, sizeof (*v), tr_runs_cmp_rows);
    for (size_t i = 0, j; rc == 0 && i < nv; i = j) {
        for (j = i + 1; j < nv && !tr_runs_cmp_user (v[i], v[j])
                        && !strcmp (v[i]->run_id, v[j]->run_id);
             j++)
            ;
        rc = run_row (v + i, j - i, out);
    }
    free (v);
    if (rc < 0) {
        errno = ENOMEM;
        tr_errprintf (error, "runs: out of memory");
    }
    return rc;
}
