/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A run's tasks as a Nextflow trace file (nftrace.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libtracer/record/merge.h"
#include "libtracer/record/states.h"
#include "nftrace.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/stats.h"

const char *tr_nftrace_duration (char *buf, size_t size, double ms)
{
    long long t, d, h, m, s;
    size_t len = 0;

    if (!isfinite (ms) || ms < 0) {
        snprintf (buf, size, "-");
        return buf;
    }
    t = llround (ms);
    if (t < 1000) {
        snprintf (buf, size, "%lldms", t);
        return buf;
    }
    if (t < 60000) {
        long long tenths = llround (ms / 100.0);

        if (tenths % 10)
            snprintf (buf, size, "%lld.%llds", tenths / 10, tenths % 10);
        else
            snprintf (buf, size, "%llds", tenths / 10);
        return buf;
    }
    s = llround (ms / 1000.0);
    d = s / 86400;
    h = s / 3600 % 24;
    m = s / 60 % 60;
    s %= 60;
    buf[0] = '\0';
    long long part[] = { d, h, m, s };
    const char unit[] = { 'd', 'h', 'm', 's' };

    for (int i = 0; i < 4; i++) {
        int w;

        if (!part[i] || len >= size)
            continue;
        w = snprintf (buf + len, size - len, "%s%lld%c", len ? " " : "",
                      part[i], unit[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

const char *tr_nftrace_memory (char *buf, size_t size, double bytes)
{
    static const char *const units[] = { "B",  "KB", "MB", "GB",
                                         "TB", "PB", "EB" };
    double v = bytes;
    int u = 0;

    if (!isfinite (bytes) || bytes < 0) {
        snprintf (buf, size, "-");
        return buf;
    }
    if (bytes < 1) {
        snprintf (buf, size, "0");
        return buf;
    }
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf (buf, size, "%.1f", v);
    if (strlen (buf) > 2 && !strcmp (buf + strlen (buf) - 2, ".0"))
        buf[strlen (buf) - 2] = '\0';
    snprintf (buf + strlen (buf), size - strlen (buf), " %s", units[u]);
    return buf;
}

static double submitted (const tr_stepsum_t *j)
{
    return isnan (j->submit_ms) ? j->start_ms : j->submit_ms;
}

static int cmp_task (const void *pa, const void *pb)
{
    const tr_stepsum_t *x = pa, *y = pb;
    double a = submitted (x), b = submitted (y);
    int c = tr_stats_cmp (a, b);

    return c ? c : tr_merge_natcmp (x->job_id, y->job_id);
}

/* A cell: s with control characters (a tab, a newline of a job name)
 * written as spaces, "-" when empty.
 */
static int cell (tr_strbuf_t *sb, const char *s, bool last)
{
    char c[2] = { 0, 0 };

    if (!s || !*s)
        s = "-";
    for (; *s; s++) {
        c[0] = (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s;
        if (tr_strbuf_append (sb, c, 1) < 0)
            return -1;
    }
    return tr_strbuf_puts (sb, last ? "\n" : "\t");
}

static const char *when (char *buf, size_t size, double ms)
{
    time_t t;
    struct tm tm;
    char s[32];

    if (!isfinite (ms))
        return "-";
    t = (time_t)floor (ms / 1000.0);
    if (!localtime_r (&t, &tm) || !strftime (s, sizeof (s), "%Y-%m-%d %H:%M:%S",
                                              &tm))
        return "-";
    snprintf (buf, size, "%s.%03d", s, (int)(ms - (double)t * 1000.0));
    return buf;
}

/* A job's state as Nextflow names a task's. */
static const char *status (const char *state)
{
    return tr_states_nextflow (state);
}

static const char *whole (char *buf, size_t size, double v)
{
    if (!isfinite (v))
        return "-";
    snprintf (buf, size, "%.0f", v);
    return buf;
}

static const char *pct (char *buf, size_t size, double v)
{
    if (!isfinite (v))
        return "-";
    snprintf (buf, size, "%.1f%%", v);
    return buf;
}

static const char *const header[] = {
    "task_id",  "hash",       "native_id", "name",      "status",
    "exit",     "submit",     "duration",  "realtime",  "%cpu",
    "peak_rss", "peak_vmem",  "rchar",     "wchar",     "process",
    "tag",      "start",      "complete",  "queue",     "cpus",
    "memory",   "time",       "read_bytes", "write_bytes",
};
#define NCOLS (sizeof (header) / sizeof (header[0]))

static int task_line (tr_strbuf_t *sb, const tr_stepsum_t *j, size_t id,
                      size_t nth)
{
    char b[NCOLS][64], name[300];
    const char *col[NCOLS];
    double sub = submitted (j), real = NAN;

    if (isfinite (j->end_ms) && isfinite (j->start_ms))
        real = j->end_ms - j->start_ms;
    if (*j->process)
        snprintf (name, sizeof (name), "%s (%zu)", j->process, nth);
    else
        snprintf (name, sizeof (name), "%s", j->job_name);
    snprintf (b[0], sizeof (b[0]), "%zu", id);
    col[0] = b[0];
    col[1] = "-";
    col[2] = j->job_id;
    col[3] = name;
    col[4] = status (j->state);
    col[5] = whole (b[5], sizeof (b[5]), j->exit_code);
    col[6] = when (b[6], sizeof (b[6]), sub);
    col[7] = tr_nftrace_duration (b[7], sizeof (b[7]),
                                  isfinite (sub) ? j->end_ms - sub : NAN);
    col[8] = tr_nftrace_duration (b[8], sizeof (b[8]), real);
    col[9] = pct (b[9], sizeof (b[9]),
                 real > 0 ? j->cpu_s * 1000.0 / real * 100.0 : NAN);
    col[10] = tr_nftrace_memory (b[10], sizeof (b[10]), j->mem_peak_bytes);
    col[11] = "-";
    col[12] = tr_nftrace_memory (b[12], sizeof (b[12]), j->rchar);
    col[13] = tr_nftrace_memory (b[13], sizeof (b[13]), j->wchar);
    col[14] = *j->process ? j->process : j->job_name;
    col[15] = "-";
    col[16] = when (b[16], sizeof (b[16]), j->start_ms);
    col[17] = when (b[17], sizeof (b[17]), j->end_ms);
    col[18] = j->partition;
    col[19] = whole (b[19], sizeof (b[19]), j->req_cores);
    col[20] = tr_nftrace_memory (b[20], sizeof (b[20]), j->req_mem_bytes);
    col[21] = tr_nftrace_duration (b[21], sizeof (b[21]),
                                   j->time_limit_s * 1000.0);
    col[22] = tr_nftrace_memory (b[22], sizeof (b[22]), j->read_bytes);
    col[23] = tr_nftrace_memory (b[23], sizeof (b[23]), j->write_bytes);
    for (size_t c = 0; c < NCOLS; c++)
        if (cell (sb, col[c], c + 1 == NCOLS) < 0)
            return -1;
    return 0;
}

char *tr_nftrace_text (const tr_stepsum_t *const *rows,
                       size_t n,
                       size_t *len,
                       tr_error_t *error)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    const tr_stepsum_t **v = NULL;
    tr_stepsum_t *jobs = NULL;
    tr_strpool_t *pool = NULL;
    size_t nj = 0;
    char *out = NULL;

    if (!rows && n > 0) {
        errno = EINVAL;
        tr_errprintf (error, "nextflow trace: no rows");
        return NULL;
    }
    if (!(v = malloc ((n ? n : 1) * sizeof (*v)))
        || !(jobs = calloc (n ? n : 1, sizeof (*jobs)))
        || !(pool = tr_strpool_create ()))
        goto done;
    if (n) {
        memcpy (v, rows, n * sizeof (*v));
        qsort (v, n, sizeof (*v), tr_stepsum_cmp_id_ptr);
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp (v[i]->cluster, v[i - 1]->cluster)
            || strcmp (v[i]->job_id, v[i - 1]->job_id))
            tr_stepsum_init (&jobs[nj++]);
        if (tr_stepsum_job_add (&jobs[nj - 1], v[i], pool) < 0)
            goto done;
    }
    if (nj)
        qsort (jobs, nj, sizeof (*jobs), cmp_task);
    for (size_t c = 0; c < NCOLS; c++)
        if (cell (&sb, header[c], c + 1 == NCOLS) < 0)
            goto done;
    for (size_t i = 0; i < nj; i++) {
        size_t nth = 1;

        for (size_t k = 0; k < i; k++)
            nth += !strcmp (jobs[k].process, jobs[i].process);
        if (task_line (&sb, &jobs[i], i + 1, nth) < 0)
            goto done;
    }
    *len = sb.len;
    out = tr_strbuf_steal (&sb);
done:
    if (!out) {
        errno = ENOMEM;
        tr_errprintf (error, "nextflow trace: out of memory");
    }
    tr_strbuf_free (&sb);
    tr_strpool_destroy (pool);
    free (jobs);
    free (v);
    return out;
}
