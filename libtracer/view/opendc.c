/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * OpenDC workload traces from records (opendc.h).  Each record's step
 * becomes a task: when it started, how long it ran, the CPUs it was
 * granted on its node at the node's nominal frequency, and its exact
 * memory peak.  Its CPU series becomes the fragments: one per series
 * bucket, the mean CPUs busy in the bucket times the frequency.  The
 * conversion is plain arithmetic on the record's numbers, so anyone can
 * check an exported value against the record it came from.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtracer/record/merge.h"
#include "opendc.h"
#include "parquet.h"
#include "libtracer/util/path.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/json.h"

#define MIB 1048576.0

struct frag {
    int64_t dur_ms;
    double usage_mhz;
};

struct task {
    char *name;                 /* "JOB.STEP@NODE" */
    int64_t start_ms;
    int64_t dur_ms;
    int64_t mem_mib;
    int32_t cpus;
    double capacity_mhz;
    size_t frag0, nfrag;        /* its fragments in tr_opendc.frags */
};

struct tr_opendc {
    struct task *tasks;
    size_t ntasks, task_cap;
    struct frag *frags;
    size_t nfrags, frag_cap;
};

tr_opendc_t *tr_opendc_create (void)
{
    return calloc (1, sizeof (tr_opendc_t));
}

void tr_opendc_destroy (tr_opendc_t *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->ntasks; i++)
        free (x->tasks[i].name);
    free (x->tasks);
    free (x->frags);
    free (x);
}

size_t tr_opendc_tasks (const tr_opendc_t *x)
{
    return x->ntasks;
}

size_t tr_opendc_fragments (const tr_opendc_t *x)
{
    return x->nfrags;
}

static json_t *get (json_t *o, const char *k)
{
    return json_is_object (o) ? json_object_get (o, k) : NULL;
}

/* The highest point of a series metric's maxima (0 when none). */
static double series_max (json_t *rec, const char *metric)
{
    json_t *max = get (get (get (get (rec, "series"), "metrics"), metric),
                       "max");
    double v = 0;
    size_t i;
    json_t *e;

    json_array_foreach (max, i, e)
        if (json_number_value (e) > v)
            v = json_number_value (e);
    return v;
}

/* The CPUs the step had on its node: what the scheduler granted, else
 * the CPUs it was bound to, else the node's, else the most it used.
 */
static int32_t task_cpus (json_t *rec)
{
    json_t *host = get (rec, "host");
    double v = tr_merge_request_cores (get (rec, "request"));

    if (!(v > 0))
        v = tr_json_num (get (get (host, "topology"), "bound"), "pus");
    if (!(v > 0))
        v = tr_json_num (host, "cpus_online");
    if (!(v > 0))
        v = ceil (series_max (rec, "cpu_cores"));
    if (!(v >= 1))
        return 1;
    return v >= INT32_MAX ? INT32_MAX : (int32_t)llround (v);
}

/* The exact memory peak in MiB, rounded up so that the task fits; else
 * the highest series point; else 0.
 */
static int64_t task_mem_mib (json_t *rec)
{
    double peak = tr_json_num (get (get (rec, "summary"), "memory"), "peak_"
                                                                     "bytes");

    if (!(peak >= 0))
        peak = series_max (rec, "mem_bytes");
    if (!(peak < 9.0e18))
        return INT64_MAX / (int64_t)MIB;
    return (int64_t)ceil (peak / MIB);
}

static int add_frag (tr_opendc_t *x, int64_t dur_ms, double usage)
{
    if (x->nfrags == x->frag_cap) {
        size_t cap = x->frag_cap ? x->frag_cap * 2 : 1024;
        struct frag *f = realloc (x->frags, cap * sizeof (*f));

        if (!f)
            return -1;
        x->frags = f;
        x->frag_cap = cap;
    }
    x->frags[x->nfrags].dur_ms = dur_ms;
    x->frags[x->nfrags].usage_mhz = usage;
    x->nfrags++;
    return 0;
}

/* The fragments of a task of dur_ms: series bucket k covers its start to
 * the next bucket's start (the first from the step's start, the last to
 * its end); empty spans are left out.  A record without a CPU series
 * gives one fragment at the step's average.
 */
static int add_frags (tr_opendc_t *x,
                      json_t *rec,
                      int64_t dur_ms,
                      double mhz)
{
    json_t *series = get (rec, "series");
    json_t *t = get (series, "t_s");
    json_t *mean = get (get (get (series, "metrics"), "cpu_cores"), "mean");
    size_t n = json_array_size (t);
    int64_t from = 0;

    if (n == 0 || json_array_size (mean) != n) {
        double cpu_s = tr_json_num (get (get (rec, "summary"), "cpu"), "total_"
                                                                       "s");
        double cores = cpu_s >= 0 ? cpu_s / (dur_ms / 1000.0) : 0;

        return add_frag (x, dur_ms, cores * mhz);
    }
    for (size_t k = 0; k < n; k++) {
        int64_t to = dur_ms;

        if (k + 1 < n) {
            double next = json_number_value (json_array_get (t, k + 1));

            to = next * 1000.0 < (double)dur_ms
                     ? (int64_t)llround (next * 1000.0) : dur_ms;
        }
        if (to <= from)
            continue;
        if (add_frag (x, to - from,
                      json_number_value (json_array_get (mean, k)) * mhz)
            < 0)
            return -1;
        from = to;
    }
    return 0;
}

int tr_opendc_add (tr_opendc_t *x, json_t *rec, tr_error_t *error)
{
    json_t *id = get (rec, "identity"), *tm = get (rec, "time");
    double mhz = tr_json_num (get (get (rec, "host"), "topology"), "cpu_mhz");
    double start = tr_json_num (tm, "start_unix_ms"),
           end = tr_json_num (tm, "end_unix_ms");
    double elapsed = tr_json_num (tm, "elapsed_s");
    struct task *task;
    int64_t dur_ms;
    size_t frag0 = x->nfrags;
    char *name;

    if (!(mhz > 0)) {
        tr_errprintf (error, "no CPU frequency in the record "
                      "(host.topology.cpu_mhz)");
        return 1;
    }
    if (!(start >= 0) || start > 9.0e15) {
        tr_errprintf (error, "no start time in the record");
        return 1;
    }
    if (end >= start && end <= 9.0e15)
        dur_ms = (int64_t)llround (end) - (int64_t)llround (start);
    else if (elapsed >= 0 && elapsed < 9.0e12)
        dur_ms = (int64_t)llround (elapsed * 1000.0);
    else {
        tr_errprintf (error, "no end time in the record");
        return 1;
    }
    if (dur_ms <= 0) {
        tr_errprintf (error, "ran for less than a millisecond");
        return 1;
    }
    if (x->ntasks >= INT32_MAX) {
        tr_errprintf (error, "more than %d tasks", INT32_MAX);
        errno = EOVERFLOW;
        return -1;
    }
    if (x->ntasks == x->task_cap) {
        size_t cap = x->task_cap ? x->task_cap * 2 : 64;
        struct task *tt = realloc (x->tasks, cap * sizeof (*tt));

        if (!tt)
            return -1;
        x->tasks = tt;
        x->task_cap = cap;
    }
    if (asprintf (&name, "%s.%s@%s", tr_json_str_or (id, "job_id", ""),
                  tr_json_str_or (id, "step_id", ""),
                  tr_json_str_or (id, "node", ""))
        < 0) {
        errno = ENOMEM;
        return -1;
    }
    if (add_frags (x, rec, dur_ms, mhz) < 0) {
        x->nfrags = frag0;
        free (name);
        return -1;
    }
    task = &x->tasks[x->ntasks++];
    task->name = name;
    task->start_ms = (int64_t)llround (start);
    task->dur_ms = dur_ms;
    task->cpus = task_cpus (rec);
    task->capacity_mhz = task->cpus * mhz;
    task->mem_mib = task_mem_mib (rec);
    task->frag0 = frag0;
    task->nfrag = x->nfrags - frag0;
    return 0;
}

static int task_cmp (const void *a, const void *b)
{
    const struct task *ta = *(const struct task *const *)a;
    const struct task *tb = *(const struct task *const *)b;

    if (ta->start_ms != tb->start_ms)
        return ta->start_ms < tb->start_ms ? -1 : 1;
    return strcmp (ta->name, tb->name);
}

/* The tasks in export order (NULL with errno when there are some and no
 * memory).
 */
static const struct task **sorted (const tr_opendc_t *x)
{
    const struct task **v = malloc ((x->ntasks ? x->ntasks : 1)
                                    * sizeof (*v));

    if (!v)
        return NULL;
    for (size_t i = 0; i < x->ntasks; i++)
        v[i] = &x->tasks[i];
    if (x->ntasks > 1)
        qsort (v, x->ntasks, sizeof (*v), task_cmp);
    return v;
}

/* Parquet */

static const struct tr_parquet_column task_cols[] = {
    { "id", TR_PARQUET_INT32, false },
    { "name", TR_PARQUET_STRING, true },
    { "submission_time", TR_PARQUET_TIMESTAMP_MS, false },
    { "duration", TR_PARQUET_INT64, false },
    { "cpu_count", TR_PARQUET_INT32, false },
    { "cpu_capacity", TR_PARQUET_DOUBLE, false },
    { "mem_capacity", TR_PARQUET_INT64, false },
};

static const struct tr_parquet_column frag_cols[] = {
    { "id", TR_PARQUET_INT32, false },
    { "duration", TR_PARQUET_INT64, false },
    { "cpu_count", TR_PARQUET_INT32, false },
    { "cpu_usage", TR_PARQUET_DOUBLE, false },
};

#define NCOLS(a) (sizeof (a) / sizeof ((a)[0]))

static const char units[] =
    "submission_time: ms since the epoch (UTC); duration: ms; "
    "cpu_capacity, cpu_usage: MHz; mem_capacity: MiB";

static tr_parquet_t *pq_table (const char *root,
                               const struct tr_parquet_column *cols,
                               size_t ncols,
                               const char *created_by,
                               tr_error_t *error)
{
    tr_parquet_t *pq = tr_parquet_create (root, cols, ncols, created_by,
                                          error);

    if (pq && (tr_parquet_set_meta (pq, "tracer.export", "opendc", error) < 0
               || tr_parquet_set_meta (pq, "tracer.units", units, error)
                      < 0)) {
        tr_parquet_destroy (pq);
        return NULL;
    }
    return pq;
}

static int pq_fill (const tr_opendc_t *x,
                    const struct task **v,
                    tr_parquet_t *tasks,
                    tr_parquet_t *frags,
                    tr_error_t *error)
{
    for (size_t i = 0; i < x->ntasks; i++) {
        const struct task *t = v[i];
        int32_t id = (int32_t)(i + 1);
        struct tr_parquet_value row[NCOLS (task_cols)] = {
            { .v.i32 = id },
            { .v.str = { t->name, strlen (t->name) } },
            { .v.i64 = t->start_ms },
            { .v.i64 = t->dur_ms },
            { .v.i32 = t->cpus },
            { .v.d = t->capacity_mhz },
            { .v.i64 = t->mem_mib },
        };

        if (tr_parquet_add_row (tasks, row, error) < 0)
            return -1;
        for (size_t k = t->frag0; k < t->frag0 + t->nfrag; k++) {
            struct tr_parquet_value frow[NCOLS (frag_cols)] = {
                { .v.i32 = id },
                { .v.i64 = x->frags[k].dur_ms },
                { .v.i32 = t->cpus },
                { .v.d = x->frags[k].usage_mhz },
            };

            if (tr_parquet_add_row (frags, frow, error) < 0)
                return -1;
        }
    }
    return 0;
}

static int write_file (int dirfd,
                       const char *name,
                       const void *buf,
                       size_t len,
                       mode_t mode,
                       tr_error_t *error)
{
    tr_error_t e;

    if (tr_path_write_atomic (dirfd, name, buf, len, mode, (uid_t)-1,
                              (gid_t)-1, &e) < 0) {
        int saved = errno;

        tr_errprintf (error, "%s: %s", name, tr_error_str (&e));
        errno = saved;
        return -1;
    }
    return 0;
}

static int write_parquet (const tr_opendc_t *x,
                          const struct task **v,
                          int dirfd,
                          mode_t mode,
                          const char *created_by,
                          tr_error_t *error)
{
    tr_parquet_t *tasks = pq_table ("resource", task_cols, NCOLS (task_cols),
                                    created_by, error);
    tr_parquet_t *frags = tasks ? pq_table ("resource_state", frag_cols,
                                            NCOLS (frag_cols), created_by,
                                            error)
                                : NULL;
    void *tbuf = NULL, *fbuf = NULL;
    size_t tlen, flen;
    int rc = -1, saved;

    if (frags && pq_fill (x, v, tasks, frags, error) == 0
        && (tbuf = tr_parquet_finish (tasks, &tlen, error))
        && (fbuf = tr_parquet_finish (frags, &flen, error))
        && write_file (dirfd, TR_OPENDC_TASKS ".parquet", tbuf, tlen, mode,
                       error) == 0
        && write_file (dirfd, TR_OPENDC_FRAGMENTS ".parquet", fbuf, flen,
                       mode, error) == 0)
        rc = 0;
    saved = errno;
    free (tbuf);
    free (fbuf);
    tr_parquet_destroy (tasks);
    tr_parquet_destroy (frags);
    errno = saved;
    return rc;
}

/* CSV (RFC 4180): the same columns and values; submission_time as
 * milliseconds since the epoch, reals in the fewest digits that read
 * back as the same double.
 */

static int csv_real (tr_strbuf_t *sb, double v)
{
    char buf[64];

    for (int digits = 15; digits <= 17; digits++) {
        snprintf (buf, sizeof (buf), "%.*g", digits, v);
        if (strtod (buf, NULL) == v)
            break;
    }
    return tr_strbuf_puts (sb, buf);
}

static int csv_text (tr_strbuf_t *sb, const char *s)
{
    if (!strpbrk (s, ",\"\r\n"))
        return tr_strbuf_puts (sb, s);
    if (tr_strbuf_puts (sb, "\"") < 0)
        return -1;
    for (const char *p = s; *p; p++)
        if ((*p == '"' && tr_strbuf_puts (sb, "\"") < 0)
            || tr_strbuf_append (sb, p, 1) < 0)
            return -1;
    return tr_strbuf_puts (sb, "\"");
}

static int csv_fill (const tr_opendc_t *x,
                     const struct task **v,
                     tr_strbuf_t *tasks,
                     tr_strbuf_t *frags)
{
    if (tr_strbuf_puts (tasks, "id,name,submission_time,duration,cpu_count,"
                               "cpu_capacity,mem_capacity\r\n") < 0
        || tr_strbuf_puts (frags, "id,duration,cpu_count,cpu_usage\r\n") < 0)
        return -1;
    for (size_t i = 0; i < x->ntasks; i++) {
        const struct task *t = v[i];

        if (tr_strbuf_printf (tasks, "%zu,", i + 1) < 0
            || csv_text (tasks, t->name) < 0
            || tr_strbuf_printf (tasks, ",%" PRId64 ",%" PRId64 ",%" PRId32
                                 ",", t->start_ms, t->dur_ms, t->cpus) < 0
            || csv_real (tasks, t->capacity_mhz) < 0
            || tr_strbuf_printf (tasks, ",%" PRId64 "\r\n", t->mem_mib) < 0)
            return -1;
        for (size_t k = t->frag0; k < t->frag0 + t->nfrag; k++)
            if (tr_strbuf_printf (frags, "%zu,%" PRId64 ",%" PRId32 ",", i + 1,
                                  x->frags[k].dur_ms, t->cpus) < 0
                || csv_real (frags, x->frags[k].usage_mhz) < 0
                || tr_strbuf_puts (frags, "\r\n") < 0)
                return -1;
    }
    return 0;
}

static int write_csv (const tr_opendc_t *x,
                      const struct task **v,
                      int dirfd,
                      mode_t mode,
                      tr_error_t *error)
{
    tr_strbuf_t tasks = TR_STRBUF_INIT, frags = TR_STRBUF_INIT;
    int rc = -1, saved;

    if (csv_fill (x, v, &tasks, &frags) < 0)
        tr_errprintf (error, "out of memory");
    else if (write_file (dirfd, TR_OPENDC_TASKS ".csv", tasks.buf, tasks.len,
                         mode, error) == 0
             && write_file (dirfd, TR_OPENDC_FRAGMENTS ".csv", frags.buf,
                            frags.len, mode, error) == 0)
        rc = 0;
    saved = errno;
    tr_strbuf_free (&tasks);
    tr_strbuf_free (&frags);
    errno = saved;
    return rc;
}

int tr_opendc_write (tr_opendc_t *x,
                     int dirfd,
                     tr_opendc_format_t format,
                     mode_t mode,
                     const char *created_by,
                     tr_error_t *error)
{
    const struct task **v = sorted (x);
    int rc, saved;

    if (!v) {
        tr_errprintf (error, "out of memory");
        return -1;
    }
    if (format == TR_OPENDC_CSV)
        rc = write_csv (x, v, dirfd, mode, error);
    else
        rc = write_parquet (x, v, dirfd, mode, created_by, error);
    saved = errno;
    free (v);
    errno = saved;
    return rc;
}
