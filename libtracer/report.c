/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Text views of records.  Records are grouped by job, then listed per
 * step and node: a multi-node step has one record per node and each is
 * shown against what that node was granted, the bug class that makes
 * seff wrong for multi-task and multi-node jobs.  The live view lists the
 * snapshots tracerd keeps of the steps running on this node.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "record.h"
#include "report.h"

const char *tr_report_bytes (char *buf, size_t size, double bytes)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int u = 0;

    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf (buf, size, "%.0f B", bytes);
    else
        snprintf (buf, size, "%.1f %s", bytes, units[u]);
    return buf;
}

const char *tr_report_duration (char *buf, size_t size, double seconds)
{
    long s = (long)llround (seconds < 0 ? 0 : seconds);
    long days = s / 86400;

    if (days)
        snprintf (buf, size, "%ld-%02ld:%02ld:%02ld", days, (s / 3600) % 24,
                  (s / 60) % 60, s % 60);
    else
        snprintf (buf, size, "%02ld:%02ld:%02ld", s / 3600, (s / 60) % 60,
                  s % 60);
    return buf;
}

static const char *str (json_t *o, const char *k)
{
    const char *s = json_string_value (json_object_get (o, k));
    return s ? s : "";
}

static double num (json_t *o, const char *k)
{
    return json_number_value (json_object_get (o, k));
}

static bool has (json_t *o, const char *k)
{
    return json_object_get (o, k) != NULL;
}

struct entry {
    json_t *rec;
    size_t idx;   /* position in the caller's array, for the notes */
};

static int cmp_identity (json_t *ra, json_t *rb)
{
    json_t *ia = json_object_get (ra, "identity");
    json_t *ib = json_object_get (rb, "identity");
    int c;

    if ((c = strcmp (str (ia, "cluster"), str (ib, "cluster"))))
        return c;
    {
        /* numeric job ids in numeric order */
        const char *ja = str (ia, "job_id"), *jb = str (ib, "job_id");
        size_t la = strlen (ja), lb = strlen (jb);
        if (la != lb)
            return la < lb ? -1 : 1;
        if ((c = strcmp (ja, jb)))
            return c;
    }
    if ((c = strcmp (str (ia, "step_id"), str (ib, "step_id"))))
        return c;
    return strcmp (str (ia, "node"), str (ib, "node"));
}

static int cmp_records (const void *a, const void *b)
{
    return cmp_identity (((const struct entry *)a)->rec,
                         ((const struct entry *)b)->rec);
}

/* Cores the scheduler granted on this node, or 0 when unknown. */
static double requested_cores (json_t *req)
{
    if (has (req, "cpus_on_node"))
        return num (req, "cpus_on_node");
    if (has (req, "cpus_per_task") && has (req, "tasks_on_node"))
        return num (req, "cpus_per_task") * num (req, "tasks_on_node");
    return 0;
}

static void print_step (FILE *out, json_t *rec, const char *note)
{
    json_t *id = json_object_get (rec, "identity");
    json_t *req = json_object_get (rec, "request");
    json_t *sum = json_object_get (rec, "summary");
    json_t *cpu = json_object_get (sum, "cpu");
    json_t *mem = json_object_get (sum, "memory");
    json_t *t = json_object_get (rec, "time");
    json_t *oc = json_object_get (rec, "outcome");
    double elapsed = num (t, "elapsed_s");
    double cores = requested_cores (req);
    char b1[32], b2[32];
    size_t ntasks = json_array_size (json_object_get (oc, "tasks"));

    fprintf (out, "  Step %s on %s", str (id, "step_id"), str (id, "node"));
    if (has (id, "step_name"))
        fprintf (out, " (%s)", str (id, "step_name"));
    fprintf (out, ": %s", str (oc, "state"));
    if (has (oc, "exit_code"))
        fprintf (out, ", exit code %d",
                 (int)json_integer_value (json_object_get (oc, "exit_code")));
    if (has (oc, "signal"))
        fprintf (out, ", signal %d",
                 (int)json_integer_value (json_object_get (oc, "signal")));
    fprintf (out, "\n");
    fprintf (out, "    Elapsed:       %s\n",
             tr_report_duration (b1, sizeof (b1), elapsed));

    fprintf (out, "    CPU time:      %.2f s (user %.2f s, system %.2f s)",
             num (cpu, "total_s"), num (cpu, "user_s"),
             num (cpu, "system_s"));
    fprintf (out, " [%s%s]\n", str (cpu, "source"),
             json_is_true (json_object_get (cpu, "exact")) ? ", exact"
                                                           : ", sampled");
    if (cores > 0 && elapsed > 0)
        fprintf (out, "    CPU efficiency: %.1f%% of %g allocated core%s\n",
                 100.0 * num (cpu, "total_s") / (elapsed * cores), cores,
                 cores == 1 ? "" : "s");
    else if (elapsed > 0)
        fprintf (out, "    CPU usage:     %.2f cores on average\n",
                 num (cpu, "total_s") / elapsed);

    fprintf (out, "    Memory peak:   %s",
             tr_report_bytes (b1, sizeof (b1), num (mem, "peak_bytes")));
    if (has (req, "mem_bytes") && num (req, "mem_bytes") > 0)
        fprintf (out, " of %s requested (%.1f%%)",
                 tr_report_bytes (b2, sizeof (b2), num (req, "mem_bytes")),
                 100.0 * num (mem, "peak_bytes") / num (req, "mem_bytes"));
    fprintf (out, " [%s%s]\n", str (mem, "source"),
             json_is_true (json_object_get (mem, "exact")) ? ", exact"
                                                           : ", sampled");
    fprintf (out, "    Memory means:  %s\n", str (mem, "definition"));
    if (ntasks)
        fprintf (out, "    Tasks:         %zu\n", ntasks);
    if (note && *note)
        fprintf (out, "    Record:        %s\n", note);
}

int tr_report_job_view (FILE *out, json_t *recs, json_t *notes)
{
    size_t n = json_array_size (recs);
    struct entry *v;
    const char *last_job = NULL, *last_cluster = NULL;

    if (n == 0)
        return 0;
    if (!(v = malloc (n * sizeof (*v))))
        return -1;
    for (size_t i = 0; i < n; i++) {
        v[i].rec = json_array_get (recs, i);
        v[i].idx = i;
    }
    qsort (v, n, sizeof (*v), cmp_records);
    for (size_t i = 0; i < n; i++) {
        json_t *id = json_object_get (v[i].rec, "identity");
        char key[32];
        const char *note;

        if (!last_job || strcmp (last_job, str (id, "job_id"))
            || strcmp (last_cluster, str (id, "cluster"))) {
            fprintf (out, "%sJob %s", i ? "\n" : "", str (id, "job_id"));
            if (has (id, "array_job_id"))
                fprintf (out, " (array %s_%d)", str (id, "array_job_id"),
                         (int)json_integer_value (
                             json_object_get (id, "array_task_id")));
            if (has (id, "job_name"))
                fprintf (out, " \"%s\"", str (id, "job_name"));
            fprintf (out, "\n  Cluster %s, scheduler %s, user %s (uid %d)",
                     str (id, "cluster"), str (id, "scheduler"),
                     has (id, "user") ? str (id, "user") : "?",
                     (int)json_integer_value (json_object_get (id, "uid")));
            if (has (id, "account"))
                fprintf (out, ", account %s", str (id, "account"));
            if (has (id, "partition"))
                fprintf (out, ", partition %s", str (id, "partition"));
            fprintf (out, "\n");
            last_job = str (id, "job_id");
            last_cluster = str (id, "cluster");
        }
        snprintf (key, sizeof (key), "%zu", v[i].idx);
        note = notes ? json_string_value (json_object_get (notes, key))
                     : NULL;
        print_step (out, v[i].rec, note);
    }
    free (v);
    return 0;
}

/* Live snapshots.  tracerd rewrites each running step's snapshot every
 * sampling.snapshot_interval seconds (at its next sample, so never more
 * often than the step's sampling interval), which makes the file's
 * modification time the moment its figures describe; a file that stops
 * changing means the daemon stopped updating it.  Snapshots are not
 * signed and each belongs to its step's user, so they are a convenience
 * view: the signed final record is the authority.
 */

/* How many of the last series points make "CPU now". */
#define LIVE_CPU_POINTS 5

/* Rewrites a snapshot may miss before it is stale. */
#define LIVE_STALE_FACTOR 3

tr_report_daemon_t tr_report_daemon_state (const char *socket_path,
                                           int timeout_ms)
{
    json_t *msg, *reply = NULL;
    tr_report_daemon_t st = TR_REPORT_DAEMON_UNKNOWN;

    if (!socket_path || !(msg = json_pack ("{s:s}", "op", "ping")))
        return TR_REPORT_DAEMON_UNKNOWN;
    if (tr_proto_request (socket_path, msg, timeout_ms, &reply, NULL) == 0
        || reply)
        st = TR_REPORT_DAEMON_RUNNING;
    else if (errno == ENOENT || errno == ECONNREFUSED)
        st = TR_REPORT_DAEMON_STOPPED;
    json_decref (reply);
    json_decref (msg);
    return st;
}

static json_t *live_error (const char *path, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* An entry for a file that cannot be used: {"file", "error"}.  Both are
 * for messages, and a file name need not be UTF-8: no check.
 */
static json_t *live_error (const char *path, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    json_t *e = json_object ();

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (!e
        || json_object_set_new (e, "file", json_string_nocheck (path)) < 0
        || json_object_set_new (e, "error", json_string_nocheck (text)) < 0) {
        json_decref (e);
        return NULL;
    }
    return e;
}

/* The file name tracerd gives a step's snapshot: its key with '@' for
 * '/' (no path-safe identifier contains either).
 */
static bool live_name_matches (json_t *rec, const char *name)
{
    json_t *id = json_object_get (rec, "identity");
    char want[600];
    int n =
        snprintf (want, sizeof (want), "%s@%s@%s@%s.json", str (id, "cluster"),
                  str (id, "job_id"), str (id, "step_id"), str (id, "node"));

    return n > 0 && (size_t)n < sizeof (want) && !strcmp (want, name);
}

/* Why a snapshot age seconds old is stale, or NULL if it is not. */
static const char *live_stale (json_t *rec,
                               double age,
                               const struct tr_report_live_opts *opts,
                               char *buf,
                               size_t size)
{
    double every = opts->snapshot_interval_s;
    double interval = num (json_object_get (rec, "collector"), "interval_s");

    if (opts->daemon == TR_REPORT_DAEMON_STOPPED)
        return "tracerd is not running";
    if (every <= 0)
        return "snapshots are off (sampling.snapshot_interval is 0)";
    if (interval > every)
        every = interval;
    if (age <= LIVE_STALE_FACTOR * every)
        return NULL;
    snprintf (buf, size,
              "daemon not updating: written %.0f s ago, "
              "expected every %g s",
              age, every);
    return buf;
}

/* Is rec, read from dir/name owned by owner, a snapshot that may be
 * shown?  Returns 0, or -1 with the reason in why.
 */
static int live_check (json_t *rec,
                       const char *name,
                       uid_t owner,
                       char *why,
                       size_t size)
{
    json_int_t uid = json_integer_value (
        json_object_get (json_object_get (rec, "identity"), "uid"));

    if (strcmp (str (rec, "kind"), "snapshot") != 0)
        snprintf (why, size, "a %s record, not a snapshot", str (rec, "kind"));
    else if (!live_name_matches (rec, name))
        snprintf (why, size,
                  "the file name does not match the record's "
                  "identity");
    /* Its user may edit their own snapshot, but cannot make one that
     * speaks for someone else.
     */
    else if (owner != 0 && (json_int_t)owner != uid)
        snprintf (why, size,
                  "owned by uid %d, not by root or the step's "
                  "user (uid %d)",
                  (int)owner, (int)uid);
    else
        return 0;
    return -1;
}

/* The entry of a usable snapshot written at 'written' (Unix seconds).
 * Steals rec.  Returns NULL with errno = ENOMEM.
 */
static json_t *live_ok (const char *path,
                        json_t *rec,
                        double written,
                        const struct tr_report_live_opts *opts)
{
    json_t *t = json_object_get (rec, "time");
    double age = opts->now > written ? opts->now - written : 0;
    char why[160];
    const char *stale;
    json_t *e;

    if (!has (t, "elapsed_s")) {
        double el = written - num (t, "start_unix_ms") / 1000.0;
        if (json_object_set_new (t, "elapsed_s", json_real (el > 0 ? el : 0))
            < 0) {
            json_decref (rec);
            errno = ENOMEM;
            return NULL;
        }
    }
    stale = live_stale (rec, age, opts, why, sizeof (why));
    e = json_pack ("{s:s s:I s:f s:b s:o}", "file", path, "written_unix_ms",
                   (json_int_t)llround (written * 1000), "age_s", age, "stale",
                   stale != NULL, "record", rec);
    if (e && stale
        && json_object_set_new (e, "stale_reason", json_string (stale)) < 0) {
        json_decref (e);
        e = NULL;
    }
    if (!e)
        errno = ENOMEM;
    return e;
}

/* One file of the live directory as an entry.  Returns NULL with errno 0
 * when the file is left out, NULL with errno ENOMEM on failure.
 */
static json_t *live_entry (int dfd,
                           const char *dir,
                           const char *name,
                           const struct tr_report_live_opts *opts)
{
    char path[4096], why[200];
    struct stat st;
    tr_error_t error;
    json_t *rec, *e;
    int n = snprintf (path, sizeof (path), "%s/%s", dir, name);

    if (n < 0 || (size_t)n >= sizeof (path))
        e = live_error (name, "%s/%s: path too long", dir, name);
    else if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) /* the step ended meanwhile */
            goto skip;
        e = live_error (path, "%s: %s", path, strerror (errno));
    }
    else if (!(rec = tr_record_load (path, &error))) {
        if (errno == ENOENT || (errno == EACCES && st.st_uid != geteuid ()))
            goto skip;
        e = live_error (path, "%s", tr_error_str (&error));
    }
    else if (live_check (rec, name, st.st_uid, why, sizeof (why)) < 0) {
        json_decref (rec);
        e = live_error (path, "%s: %s", path, why);
    }
    else
        return live_ok (path, rec,
                        (double)st.st_mtim.tv_sec
                            + (double)st.st_mtim.tv_nsec / 1e9,
                        opts);
    if (!e)
        errno = ENOMEM;
    return e;
skip:
    errno = 0;
    return NULL;
}

static int cmp_live (const void *a, const void *b)
{
    json_t *ea = *(json_t *const *)a, *eb = *(json_t *const *)b;
    json_t *ra = json_object_get (ea, "record");
    json_t *rb = json_object_get (eb, "record");

    if (ra && rb)
        return cmp_identity (ra, rb);
    if (!ra != !rb)
        return ra ? 1 : -1;
    return strcmp (str (ea, "file"), str (eb, "file"));
}

/* Sort the array's entries in place with cmp_live. */
static int sort_entries (json_t *arr)
{
    size_t n = json_array_size (arr);
    json_t **v;

    if (n < 2)
        return 0;
    if (!(v = malloc (n * sizeof (*v))))
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref (json_array_get (arr, i));
    qsort (v, n, sizeof (*v), cmp_live);
    json_array_clear (arr);
    for (size_t i = 0; i < n; i++) {
        if (json_array_append_new (arr, v[i]) < 0) {
            while (++i < n)
                json_decref (v[i]);
            free (v);
            errno = ENOMEM;
            return -1;
        }
    }
    free (v);
    return 0;
}

json_t *tr_report_live_scan (const char *dir,
                             const struct tr_report_live_opts *opts,
                             tr_error_t *error)
{
    struct tr_report_live_opts o = *opts;
    json_t *out = NULL;
    struct dirent *de;
    DIR *d;
    int saved;

    if (o.now <= 0) {
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        o.now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    }
    if (!(d = opendir (dir))) {
        tr_errprintf (error, "%s: %s", dir, strerror (errno));
        return NULL;
    }
    if (!(out = json_array ()))
        goto nomem;
    while ((errno = 0, de = readdir (d))) {
        size_t len = strlen (de->d_name);
        json_t *e;

        /* temporaries of the atomic writes start with '.' */
        if (de->d_name[0] == '.' || len < 6
            || strcmp (de->d_name + len - 5, ".json") != 0)
            continue;
        if (!(e = live_entry (dirfd (d), dir, de->d_name, &o))) {
            if (errno == 0)
                continue;
            goto nomem;
        }
        if (json_array_append_new (out, e) < 0)
            goto nomem;
    }
    if (errno) {
        tr_errprintf (error, "%s: %s", dir, strerror (errno));
        goto fail;
    }
    if (sort_entries (out) < 0)
        goto nomem;
    closedir (d);
    return out;
nomem:
    errno = ENOMEM;
    tr_errprintf (error, "%s: out of memory", dir);
fail:
    saved = errno;
    closedir (d);
    json_decref (out);
    errno = saved;
    return NULL;
}

/* A borrowed reference to series.metrics.<metric>.<stat> (an array of
 * numbers), or NULL.
 */
static json_t *series_metric (json_t *rec, const char *metric, const char *stat)
{
    json_t *m = json_object_get (json_object_get (rec, "series"), "metrics");

    return json_object_get (json_object_get (m, metric), stat);
}

/* CPU cores in use: the mean of the last few series points, else the
 * average since the start; -1 when neither is known.
 */
static double live_cores (json_t *rec)
{
    json_t *mean = series_metric (rec, "cpu_cores", "mean");
    size_t n = json_array_size (mean), k = 0;
    double sum = 0, el;

    for (size_t i = n > LIVE_CPU_POINTS ? n - LIVE_CPU_POINTS : 0; i < n;
         i++, k++)
        sum += json_number_value (json_array_get (mean, i));
    if (k)
        return sum / (double)k;
    el = num (json_object_get (rec, "time"), "elapsed_s");
    if (el > 0)
        return num (json_object_get (json_object_get (rec, "summary"), "cpu"),
                    "total_s")
               / el;
    return -1;
}

enum {
    COL_JOB,
    COL_STEP,
    COL_NAME,
    COL_USER,
    COL_NODE,
    COL_START,
    COL_ELAPSED,
    COL_CPU,
    COL_MEM,
    COL_PEAK,
    COL_PROCS,
    COL_AGE,
    NCOLS
};

static const char *live_head[NCOLS] = {
    "JOB",     "STEP", "NAME", "USER", "NODE",  "START",
    "ELAPSED", "CPU",  "MEM",  "PEAK", "PROCS", "AGE",
};

typedef char live_row_t[NCOLS][64];

static void live_cells (json_t *e, live_row_t row)
{
    json_t *rec = json_object_get (e, "record");
    json_t *id = json_object_get (rec, "identity");
    json_t *mem = json_object_get (json_object_get (rec, "summary"), "memory");
    json_t *np = series_metric (rec, "nprocs", "max");
    double cores = live_cores (rec);
    double req = requested_cores (json_object_get (rec, "request"));
    double age = num (e, "age_s");
    time_t start =
        (time_t)(num (json_object_get (rec, "time"), "start_unix_ms") / 1000);
    const char *name =
        has (id, "step_name") ? str (id, "step_name") : str (id, "job_name");
    struct tm tm;

    snprintf (row[COL_JOB], 64, "%s", str (id, "job_id"));
    snprintf (row[COL_STEP], 64, "%s", str (id, "step_id"));
    snprintf (row[COL_NAME], 64, "%s", *name ? name : "-");
    if (has (id, "user"))
        snprintf (row[COL_USER], 64, "%s", str (id, "user"));
    else
        snprintf (row[COL_USER], 64, "%d",
                  (int)json_integer_value (json_object_get (id, "uid")));
    snprintf (row[COL_NODE], 64, "%s", str (id, "node"));
    if (localtime_r (&start, &tm))
        strftime (row[COL_START], 64, "%Y-%m-%dT%H:%M:%S", &tm);
    else
        snprintf (row[COL_START], 64, "-");
    tr_report_duration (row[COL_ELAPSED], 64,
                        num (json_object_get (rec, "time"), "elapsed_s"));
    if (cores < 0)
        snprintf (row[COL_CPU], 64, "-");
    else if (req > 0)
        snprintf (row[COL_CPU], 64, "%.2f/%g", cores, req);
    else
        snprintf (row[COL_CPU], 64, "%.2f", cores);
    if (has (mem, "current_bytes"))
        tr_report_bytes (row[COL_MEM], 64, num (mem, "current_bytes"));
    else
        snprintf (row[COL_MEM], 64, "-");
    tr_report_bytes (row[COL_PEAK], 64, num (mem, "peak_bytes"));
    if (json_array_size (np))
        snprintf (row[COL_PROCS], 64, "%.0f",
                  json_number_value (
                      json_array_get (np, json_array_size (np) - 1)));
    else
        snprintf (row[COL_PROCS], 64, "-");
    if (age < 100)
        snprintf (row[COL_AGE], 64, "%.0fs", age);
    else
        tr_report_duration (row[COL_AGE], 64, age);
}

int tr_report_live_view (FILE *out, json_t *entries)
{
    size_t n = json_array_size (entries), nrows = 0;
    live_row_t *rows;
    int width[NCOLS];
    json_t **recs;

    if (!(rows = calloc (n + 1, sizeof (*rows)))
        || !(recs = calloc (n + 1, sizeof (*recs)))) {
        free (rows);
        errno = ENOMEM;
        return -1;
    }
    for (int c = 0; c < NCOLS; c++)
        width[c] = (int)strlen (live_head[c]);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get (entries, i);
        if (!json_object_get (e, "record"))
            continue;
        live_cells (e, rows[nrows]);
        recs[nrows] = e;
        for (int c = 0; c < NCOLS; c++)
            if ((int)strlen (rows[nrows][c]) > width[c])
                width[c] = (int)strlen (rows[nrows][c]);
        nrows++;
    }
    for (int c = 0; c < NCOLS; c++)
        fprintf (out, "%-*s%s", c == NCOLS - 1 ? 0 : width[c], live_head[c],
                 c == NCOLS - 1 ? "\n" : "  ");
    for (size_t i = 0; i < nrows; i++) {
        for (int c = 0; c < NCOLS; c++)
            fprintf (out, "%-*s%s", c == NCOLS - 1 ? 0 : width[c], rows[i][c],
                     c == NCOLS - 1 ? "" : "  ");
        if (json_is_true (json_object_get (recs[i], "stale")))
            fprintf (out, "  STALE: %s", str (recs[i], "stale_reason"));
        fprintf (out, "\n");
    }
    free (rows);
    free (recs);
    return 0;
}
