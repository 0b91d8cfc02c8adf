/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * index-query: the queries of the report-scale benchmark, run through the
 * summary index (tr_index_scan) the way tracer-report runs them: every
 * record it loads is parsed, validated and its signature checked
 * (unsigned ones are allowed, as with --allow-unsigned), then summarised;
 * rows are filtered by user or by name, or fed to a recommendation (the
 * 95th percentile of peak memory, busy cores and run time of the
 * completed steps of a group, with headroom).  With --no-index it walks
 * the records by day instead (tr_store_foreach_window), which is what a
 * query costs without the index.  It prints what it found and the scan's
 * counters on one line, key=value, for bench/run-report-scale.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/record/index.h"
#include "libtracer/record/record.h"
#include "libtracer/record/sign.h"
#include "libtracer/util/stats.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/record/store.h"

struct sample {
    double mem;
    double cores;
    double elapsed;
};

struct query {
    const char *store;
    const char *cluster;
    time_t from;
    time_t to;
    const char *user;
    const char *name;
    bool recommend;
    bool write;
    bool no_index;
    unsigned shard_i;
    unsigned shard_n;
    tr_strpool_t *pool;
    size_t rows;
    size_t matched;
    size_t bad;
    struct sample *samples; /* recommendation inputs */
    size_t nrec;
    size_t caprec;
};

static double now_s (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Load, validate and check the signature of a record, then summarise. */
static int load (const char *abspath,
                 const char *relpath,
                 tr_stepsum_t *row,
                 void *arg)
{
    struct query *q = arg;
    tr_error_t e = { 0 };
    tr_sig_status_t st;
    json_t *rec;
    int rc;

    if (!(rec = tr_record_load (abspath, &e))) {
        if (errno == EACCES || errno == EPERM || errno == ENOENT
            || errno == ENOMEM)
            return -1;
        row->reason = tr_strpool_intern (q->pool, e.text);
        return 1;
    }
    st = tr_sign_verify (rec, NULL, NULL, 0, NULL, &e);
    if (st != TR_SIG_VALID && st != TR_SIG_VALID_OLD && st != TR_SIG_UNSIGNED) {
        json_decref (rec);
        row->reason = tr_strpool_intern (q->pool, e.text);
        return 1;
    }
    rc = tr_stepsum_from_record (row, rec,
                                 st == TR_SIG_UNSIGNED ? TR_STEPSUM_SIG_UNSIGNED
                                                       : TR_STEPSUM_SIG_VALID,
                                 relpath, q->pool);
    json_decref (rec);
    return rc;
}

static int row (const tr_stepsum_t *r, void *arg)
{
    struct query *q = arg;

    q->rows++;
    if (q->user && strcmp (r->user, q->user) != 0)
        return 0;
    if (q->name && !strstr (r->group, q->name)
        && !strstr (r->job_name, q->name))
        return 0;
    q->matched++;
    if (q->recommend && strcmp (r->state, "completed") == 0) {
        if (q->nrec == q->caprec) {
            size_t ncap = q->caprec ? q->caprec * 2 : 1024;
            struct sample *ns = realloc (q->samples, ncap * sizeof (*ns));
            if (!ns)
                return -1;
            q->samples = ns;
            q->caprec = ncap;
        }
        q->samples[q->nrec].mem = r->mem_peak_bytes;
        q->samples[q->nrec].cores = r->cpu_peak_cores;
        q->samples[q->nrec].elapsed = r->elapsed_s;
        q->nrec++;
    }
    return 0;
}

/* The 95th percentile of one member of the samples (NAN if none). */
static double p95 (const struct query *q, size_t offset)
{
    double *v = malloc ((q->nrec + 1) * sizeof (*v));
    double x;
    size_t n;

    if (!v)
        return NAN;
    for (size_t i = 0; i < q->nrec; i++)
        v[i] = *(const double *)((const char *)&q->samples[i] + offset);
    n = tr_stats_drop_nan (v, q->nrec);
    x = n ? tr_stats_quantile (v, n, 0.95) : NAN;
    free (v);
    return x;
}

/* The no-index path: a record at a time, through the same load. */
static int each_record (const char *path, void *arg)
{
    struct query *q = arg;
    tr_stepsum_t r;
    const char *rel = path + strlen (q->store) + 1;
    int rc;

    tr_stepsum_init (&r);
    rc = load (path, rel, &r, q);
    if (rc < 0)
        return errno == EACCES || errno == ENOENT ? 0 : -1;
    if (rc == 1) {
        q->bad++;
        return 0;
    }
    return row (&r, q);
}

static void usage (FILE *f)
{
    fprintf (f, "Usage: index-query --store DIR -M CLUSTER [-S DAY] [-E "
                "DAY|now] "
                "[OPTIONS]\n"
                "  -u, --user USER        only USER's steps\n"
                "      --name TEXT        only steps whose group or job name "
                "contains TEXT\n"
                "      --recommend        a request recommendation for the "
                "matching steps\n"
                "      --write            write the index (delta segments, "
                "compaction)\n"
                "      --shard I/N        only shard I of N\n"
                "      --no-index         read every record instead of the "
                "index\n"
                "      --allow-unsigned   accepted (unsigned records are "
                "always "
                "allowed)\n");
}

static int parse_day (const char *s, time_t *t, bool end)
{
    struct tm tm;
    char *p;

    if (strcmp (s, "now") == 0) {
        *t = time (NULL);
        return 0;
    }
    memset (&tm, 0, sizeof (tm));
    if (!(p = strptime (s, "%Y-%m-%d", &tm)) || *p)
        return -1;
    *t = timegm (&tm) + (end ? 86399 : 0);
    return 0;
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "store", required_argument, NULL, 's' },
        { "cluster", required_argument, NULL, 'M' },
        { "starttime", required_argument, NULL, 'S' },
        { "endtime", required_argument, NULL, 'E' },
        { "user", required_argument, NULL, 'u' },
        { "name", required_argument, NULL, 'n' },
        { "recommend", no_argument, NULL, 'r' },
        { "write", no_argument, NULL, 'w' },
        { "shard", required_argument, NULL, 'k' },
        { "no-index", no_argument, NULL, 'x' },
        { "allow-unsigned", no_argument, NULL, 'a' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct query q = { 0 };
    struct tr_index_stats st = { 0 };
    tr_error_t e = { 0 };
    tr_store_t *store;
    double t0;
    int rc;
    int c;

    q.from = 0;
    q.to = time (NULL);
    while ((c = getopt_long (argc, argv, "s:M:S:E:u:h", longopts, NULL))
           != -1) {
        switch (c) {
        case 's':
            q.store = optarg;
            break;
        case 'M':
            q.cluster = optarg;
            break;
        case 'S':
            if (parse_day (optarg, &q.from, false) < 0)
                goto usage;
            break;
        case 'E':
            if (parse_day (optarg, &q.to, true) < 0)
                goto usage;
            break;
        case 'u':
            q.user = optarg;
            break;
        case 'n':
            q.name = optarg;
            break;
        case 'r':
            q.recommend = true;
            break;
        case 'w':
            q.write = true;
            break;
        case 'k':
            if (sscanf (optarg, "%u/%u", &q.shard_i, &q.shard_n) != 2)
                goto usage;
            break;
        case 'x':
            q.no_index = true;
            break;
        case 'a':
            break;
        case 'h':
            usage (stdout);
            return 0;
        default:
            goto usage;
        }
    }
    if (!q.store || !q.cluster || optind != argc)
        goto usage;
    if (!(store = tr_store_open (q.store, NULL, &e))
        || !(q.pool = tr_strpool_create ())) {
        fprintf (stderr, "index-query: %s\n", e.text);
        return 1;
    }
    q.store = tr_store_root (store);
    t0 = now_s ();
    if (q.no_index)
        rc = tr_store_foreach_window (store, q.cluster, q.from, q.to,
                                      each_record, &q, &e);
    else {
        struct tr_index_opts o = {
            .write = q.write,
            .file_mode = 0640,
            .dir_mode = 0755,
            .gid = (gid_t)-1,
            .shard_i = q.shard_i,
            .shard_n = q.shard_n,
        };
        rc = tr_index_scan (store, q.cluster, q.from, q.to, &o, load, &q, row,
                            &q, q.pool, &st, &e);
    }
    if (rc < 0) {
        fprintf (stderr, "index-query: %s\n", e.text);
        return 1;
    }
    printf ("rows=%zu matched=%zu seconds=%.3f days=%zu fresh=%zu "
            "segments_read=%zu rows_indexed=%zu loaded=%zu bad=%zu "
            "segments_written=%zu compactions=%zu ignored=%zu retries=%zu",
            q.rows, q.matched, now_s () - t0, st.days, st.days_fresh,
            st.segments_read, st.rows_indexed, st.records_loaded,
            st.bad + q.bad, st.segments_written, st.compactions,
            st.segments_ignored, st.retries);
    if (q.recommend)
        printf (" steps=%zu mem_gib=%.1f cores=%.0f time_min=%.0f", q.nrec,
                p95 (&q, offsetof (struct sample, mem)) * 1.2 / 1073741824.0,
                ceil (p95 (&q, offsetof (struct sample, cores))),
                ceil (p95 (&q, offsetof (struct sample, elapsed)) * 1.5 / 60));
    printf ("\n");
    free (q.samples);
    tr_strpool_destroy (q.pool);
    tr_store_destroy (store);
    return 0;
usage:
    usage (stderr);
    return 2;
}
