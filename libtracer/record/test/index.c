/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for libtracer/record/index.c, the summary index: a first scan loads
 * every record and writes segments, a second one reads only segments, a
 * new record makes a delta, a bad record is indexed once, compaction
 * merges, untrusted segments are ignored, shards split exactly, a
 * segment that vanishes under a reader is found again, per-job markers
 * of older stores still work, and a user who cannot read the index or
 * others' records sees exactly their own.  Runs as root (records are
 * chowned to the job's user; segments are chowned in the tests).
 * openat is wrapped (-Wl,--wrap=openat) to make a segment vanish between
 * the listing and the open, as a concurrent compaction would.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "libtracer/record/index.h"
#include "libtracer/record/record.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/record/store.h"
#include "rmtree.h"

#define DAY_A "2024-03-01"
#define DAY_B "2024-03-02"
/* 2024-03-01T12:00:00Z in ms, one day in ms. */
#define A_NOON_MS 1709294400000LL
#define DAY_MS 86400000LL
#define NJOBS_B 20 /* single-record jobs on day B, for the shards */

struct fixture {
    char dir[64];
    char root[96];
    tr_store_t *store;
    json_t *proto; /* tests/fixtures/records/basic.json */
    tr_strpool_t *pool;
    int nrecs;
};

/* What the load callback and the row callback saw. */
struct seen {
    char *paths[256];
    char users[256][16];
    int n;
    int loads;
    int stop_at;      /* return 9 on this row (1-based); 0: never */
    const char *deny; /* load fails with EACCES for paths containing it */
    tr_strpool_t *pool;
};

static const struct tr_store_opts store_opts = {
    .file_mode = 0640,
    .dir_mode = 0755,
    .owner_is_job = true,
    .owner_uid = (uid_t)-1,
    .gid = 0,
    .create = true,
};

/* openat wrap: 0 off; 1 rename the next segment opened to a newer name
 * (once); 2 do that for every segment opened.
 */
static int race_mode;
static int race_count;

int __real_openat (int dirfd, const char *path, int flags, ...);
int __wrap_openat (int dirfd, const char *path, int flags, ...);
int __wrap_openat (int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;

    if (flags & O_CREAT) {
        va_list ap;
        va_start (ap, flags);
        mode = (mode_t)va_arg (ap, int);
        va_end (ap);
    }
    if (race_mode && strncmp (path, "seg-", 4) == 0) {
        char newer[128];
        /* Names sort by time: "seg-9..." is newer than any real one. */
        snprintf (newer, sizeof (newer), "seg-9%018d-race-1-0.tsv",
                  ++race_count);
        if (renameat (dirfd, path, dirfd, newer) == 0 && race_mode == 1)
            race_mode = 0;
    }
    return __real_openat (dirfd, path, flags, mode);
}

static const char *pathf (char *buf, size_t size, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static const char *pathf (char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (buf, size, fmt, ap);
    va_end (ap);
    assert_true (n >= 0 && (size_t)n < size);
    return buf;
}

/* A valid record from the fixture, with this identity and end time. */
static void put (struct fixture *f,
                 const char *job,
                 const char *step,
                 const char *node,
                 int uid,
                 long long end_ms)
{
    json_t *rec = json_deep_copy (f->proto);
    json_t *id = json_object_get (rec, "identity");
    json_t *t = json_object_get (rec, "time");
    char user[16];
    tr_error_t e = { 0 };

    assert_non_null (rec);
    snprintf (user, sizeof (user), "user%d", uid);
    assert_int_equal (json_object_set_new (id, "cluster", json_string ("c1")),
                      0);
    json_object_set_new (id, "job_id", json_string (job));
    json_object_set_new (id, "step_id", json_string (step));
    json_object_set_new (id, "node", json_string (node));
    json_object_set_new (id, "user", json_string (user));
    json_object_set_new (id, "uid", json_integer (uid));
    json_object_set_new (t, "start_unix_ms", json_integer (end_ms - 4250));
    json_object_set_new (t, "end_unix_ms", json_integer (end_ms));
    if (tr_record_validate (rec, &e) < 0)
        fail_msg ("fixture record: %s", e.text);
    if (tr_store_put (f->store, rec, &e) < 0)
        fail_msg ("put: %s", e.text);
    json_decref (rec);
    f->nrecs++;
}

/* Move a day directory's mtime to a distinct time in the past: the day
 * has changed, and not within the racy window of a claim.
 */
static void age_day (struct fixture *f, const char *day)
{
    static time_t tick = 1700000000;
    struct timespec ts[2];
    char p[PATH_MAX];

    ts[0].tv_sec = ts[1].tv_sec = ++tick;
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    assert_int_equal (
        utimensat (AT_FDCWD,
                   pathf (p, sizeof (p), "%s/c1/days/%s", f->root, day), ts, 0),
        0);
}

static void age_days (struct fixture *f)
{
    age_day (f, DAY_A);
    age_day (f, DAY_B);
}

static int setup (void **state)
{
    struct fixture *f = calloc (1, sizeof (*f));
    tr_error_t e = { 0 };
    char job[16];

    if (!f)
        return -1;
    snprintf (f->dir, sizeof (f->dir), "/tmp/tracer-index-XXXXXX");
    if (!mkdtemp (f->dir) || chmod (f->dir, 0755) < 0)
        return -1;
    snprintf (f->root, sizeof (f->root), "%s/store", f->dir);
    f->store = tr_store_open (f->root, &store_opts, &e);
    f->proto = tr_record_load (TEST_SRCDIR "/fixtures/records/basic.json", &e);
    f->pool = tr_strpool_create ();
    if (!f->store || !f->proto || !f->pool) {
        fprintf (stderr, "setup: %s\n", e.text);
        return -1;
    }
    *state = f;
    /* Day A: a job of two steps on two nodes and a job of one record;
     * day B: a job on two nodes and NJOBS_B jobs of one record.
     */
    put (f, "1001", "0", "n1", 1000, A_NOON_MS);
    put (f, "1001", "0", "n2", 1000, A_NOON_MS);
    put (f, "1001", "batch", "n1", 1000, A_NOON_MS + 1000);
    put (f, "1001", "batch", "n2", 1000, A_NOON_MS + 1000);
    put (f, "1002", "0", "n1", 1001, A_NOON_MS);
    put (f, "1003", "0", "n1", 1001, A_NOON_MS + DAY_MS);
    put (f, "1003", "0", "n2", 1001, A_NOON_MS + DAY_MS);
    for (int i = 0; i < NJOBS_B; i++) {
        snprintf (job, sizeof (job), "%d", 2000 + i);
        put (f, job, "0", "n3", 1000 + i % 2, A_NOON_MS + DAY_MS);
    }
    age_days (f);
    return 0;
}

static int teardown (void **state)
{
    struct fixture *f = *state;

    race_mode = 0;
    tr_store_destroy (f->store);
    json_decref (f->proto);
    tr_strpool_destroy (f->pool);
    rmtree (f->dir);
    free (f);
    return 0;
}

/* The load callback of a report: parse, validate, summarise.  A file
 * that does not parse is a bad record; EACCES and ENOENT pass through.
 */
static int load_cb (const char *abspath,
                    const char *relpath,
                    tr_stepsum_t *row,
                    void *arg)
{
    struct seen *s = arg;
    tr_error_t e = { 0 };
    json_t *rec;
    int rc;

    s->loads++;
    if (s->deny && strstr (relpath, s->deny)) {
        errno = EACCES;
        return -1;
    }
    if (!(rec = tr_record_load (abspath, &e))) {
        if (errno == EACCES || errno == ENOENT)
            return -1;
        row->reason = tr_strpool_intern (s->pool, e.text);
        return 1;
    }
    rc = tr_stepsum_from_record (row, rec, TR_STEPSUM_SIG_UNSIGNED, relpath,
                                 s->pool);
    json_decref (rec);
    return rc;
}

static int row_cb (const tr_stepsum_t *row, void *arg)
{
    struct seen *s = arg;

    assert_true (s->n < 256);
    /* No row twice in one scan. */
    for (int i = 0; i < s->n; i++)
        if (strcmp (s->paths[i], row->path) == 0)
            fail_msg ("row %s passed twice", row->path);
    s->paths[s->n] = strdup (row->path);
    assert_non_null (s->paths[s->n]);
    snprintf (s->users[s->n], sizeof (s->users[0]), "%s", row->user);
    assert_string_equal (row->cluster, "c1");
    assert_false (isnan (row->cpu_s));
    s->n++;
    return s->stop_at == s->n ? 9 : 0;
}

static void seen_free (struct seen *s)
{
    for (int i = 0; i < s->n; i++)
        free (s->paths[i]);
    s->n = 0;
    s->loads = 0;
}

static bool seen_has (const struct seen *s, const char *suffix)
{
    size_t m = strlen (suffix);

    for (int i = 0; i < s->n; i++) {
        size_t n = strlen (s->paths[i]);
        if (n >= m && strcmp (s->paths[i] + n - m, suffix) == 0)
            return true;
    }
    return false;
}

static const struct tr_index_opts wopts = {
    .write = true,
    .file_mode = 0640,
    .dir_mode = 0755,
    .gid = 65534,
};

/* Scan both days (the window is given in seconds, partial days). */
static int scan (struct fixture *f,
                 const struct tr_index_opts *o,
                 struct seen *s,
                 struct tr_index_stats *st)
{
    tr_error_t e = { 0 };
    time_t from = (time_t)(A_NOON_MS / 1000) - 3600;
    time_t to = (time_t)((A_NOON_MS + DAY_MS) / 1000) + 3600;
    int rc;

    s->pool = f->pool;
    rc = tr_index_scan (f->store, "c1", from, to, o, load_cb, s, row_cb, s,
                        f->pool, st, &e);
    if (rc < 0)
        fail_msg ("scan: %s", e.text);
    return rc;
}

/* Names of the segments of a day, sorted; returns the count. */
static int segments (struct fixture *f, const char *day, char names[][256])
{
    char p[PATH_MAX];
    DIR *d = opendir (pathf (p, sizeof (p), "%s/c1/index/%s", f->root, day));
    struct dirent *de;
    int n = 0;

    if (!d)
        return 0;
    while ((de = readdir (d)))
        if (de->d_name[0] != '.') {
            assert_true (n < 32);
            if (names)
                snprintf (names[n], 256, "%s", de->d_name);
            n++;
        }
    closedir (d);
    if (names)
        qsort (names, (size_t)n, 256,
               (int (*) (const void *, const void *))strcmp);
    return n;
}

static char *slurp (const char *path)
{
    FILE *fp = fopen (path, "r");
    char *buf;
    long n;

    assert_non_null (fp);
    assert_int_equal (fseek (fp, 0, SEEK_END), 0);
    n = ftell (fp);
    rewind (fp);
    buf = calloc (1, (size_t)n + 1);
    assert_non_null (buf);
    assert_int_equal (fread (buf, 1, (size_t)n, fp), (size_t)n);
    fclose (fp);
    return buf;
}

static void copy_file (const char *from, const char *to)
{
    char *text = slurp (from);
    FILE *fp = fopen (to, "w");

    assert_non_null (fp);
    assert_int_equal (fputs (text, fp) >= 0, 1);
    assert_int_equal (fclose (fp), 0);
    free (text);
}

static void test_build_then_fresh (void **state)
{
    struct fixture *f = *state;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char names[32][256];
    char p[PATH_MAX];
    struct stat sb;

    /* First scan: everything is loaded, one segment per day written. */
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.n, f->nrecs);
    assert_int_equal (s.loads, f->nrecs);
    assert_int_equal (st.days, 2);
    assert_int_equal (st.days_fresh, 0);
    assert_int_equal (st.records_loaded, f->nrecs);
    assert_int_equal (st.rows_indexed, 0);
    assert_int_equal (st.segments_written, 2);
    assert_int_equal (st.write_errors, 0);
    assert_true (seen_has (&s, "c1/jobs/c57/1001/batch.n2.json"));
    seen_free (&s);

    assert_int_equal (segments (f, DAY_A, names), 1);
    pathf (p, sizeof (p), "%s/c1/index/%s/%s", f->root, DAY_A, names[0]);
    assert_int_equal (lstat (p, &sb), 0);
    assert_true (S_ISREG (sb.st_mode));
    assert_int_equal (sb.st_mode & 07777, 0640);
    assert_int_equal (sb.st_uid, 0);
    assert_int_equal (sb.st_gid, 65534);
    char *text = slurp (p);
    assert_int_equal (strncmp (text, "#tracer-stepsum 4\t", 18), 0);
    assert_non_null (strstr (text, "\n#mtime\t"));
    assert_non_null (strstr (text, "\n#end\t5\t0\t0\t1\n"));
    free (text);

    /* Second scan: one stat per day and the segments; nothing loaded. */
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.records_loaded, 0);
    assert_int_equal (st.rows_indexed, f->nrecs);
    assert_int_equal (st.days_fresh, 2);
    assert_int_equal (st.segments_read, 2);
    assert_int_equal (st.segments_written, 0);
    assert_true (seen_has (&s, "c1/jobs/c57/1001/batch.n2.json"));
    assert_true (seen_has (&s, "/2019/0.n3.json"));
    seen_free (&s);

    /* Two writers that loaded the same records made two segments: each
     * row is passed once, from the newest segment (here a copy with
     * another user name in every row).
     */
    char copy[PATH_MAX];
    text = slurp (p);
    for (char *u = text; (u = strstr (u, "\tuser1000\t")); u += 10)
        memcpy (u + 1, "userXXXX", 8);
    pathf (copy, sizeof (copy), "%s/c1/index/%s/seg-9%018d-copy-1-0.tsv",
           f->root, DAY_A, 1);
    FILE *fp = fopen (copy, "w");
    assert_non_null (fp);
    fputs (text, fp);
    assert_int_equal (fclose (fp), 0);
    assert_int_equal (chmod (copy, 0640), 0);
    free (text);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.segments_read, 3);
    assert_int_equal (st.days_fresh, 2);
    for (int i = 0; i < s.n; i++)
        if (strstr (s.paths[i], "/1001/"))
            assert_string_equal (s.users[i], "userXXXX");
    seen_free (&s);
    assert_int_equal (unlink (copy), 0);

    /* A read-only scan of one day, from the index. */
    tr_error_t e = { 0 };
    time_t t = (time_t)(A_NOON_MS / 1000);
    s.pool = f->pool;
    assert_int_equal (tr_index_scan (f->store, "c1", t, t, NULL, load_cb, &s,
                                     row_cb, &s, f->pool, &st, &e),
                      5);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.days, 1);
    seen_free (&s);

    /* The row callback stops the scan; its value comes back, and a
     * stopped scan writes nothing.
     */
    age_day (f, DAY_A);
    s.stop_at = 2;
    assert_int_equal (scan (f, &wopts, &s, &st), 9);
    assert_int_equal (s.n, 2);
    assert_int_equal (st.segments_written, 0);
    seen_free (&s);
    s.stop_at = 0;
}

static void test_delta_and_racy (void **state)
{
    struct fixture *f = *state;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char names[32][256];

    scan (f, &wopts, &s, &st);
    seen_free (&s);

    /* A new record on day A: its day changes; only it is loaded, and a
     * delta segment is written beside the first.
     */
    put (f, "1004", "0", "n1", 1000, A_NOON_MS);
    age_day (f, DAY_A);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 1);
    assert_int_equal (st.records_loaded, 1);
    assert_int_equal (st.rows_indexed, f->nrecs - 1);
    assert_int_equal (st.days_fresh, 1);
    assert_int_equal (st.segments_written, 1);
    assert_true (seen_has (&s, "/1004/0.n1.json"));
    seen_free (&s);
    assert_int_equal (segments (f, DAY_A, names), 2);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);

    /* A record that lands just now: the day's mtime is too recent for
     * a claim (a marker in the same tick could go unseen), so the delta
     * has rows but no claim and the day is listed again next time.
     */
    put (f, "1005", "0", "n1", 1000, A_NOON_MS);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 1);
    assert_int_equal (st.segments_written, 1);
    seen_free (&s);
    assert_int_equal (segments (f, DAY_A, names), 3);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (st.days_fresh, 1);
    assert_int_equal (s.loads, 0);
    /* Nothing new and still racy: nothing worth a segment. */
    assert_int_equal (st.segments_written, 0);
    seen_free (&s);
    /* Once the day has settled, a claim alone is written. */
    age_day (f, DAY_A);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (st.segments_written, 1);
    assert_int_equal (s.loads, 0);
    seen_free (&s);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);

    /* A writer that could not read a record writes what it loaded but
     * claims nothing, so the record is tried again next time.
     */
    put (f, "1007", "0", "n1", 1000, A_NOON_MS);
    age_day (f, DAY_A);
    s.deny = "/1007/";
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs - 1);
    assert_int_equal (st.skipped, 1);
    assert_int_equal (st.segments_written, 0);
    seen_free (&s);
    put (f, "1008", "0", "n1", 1000, A_NOON_MS);
    age_day (f, DAY_A);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs - 1);
    assert_int_equal (st.segments_written, 1); /* 1008, no claim */
    seen_free (&s);
    s.deny = NULL;
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 1);
    assert_true (seen_has (&s, "/1007/0.n1.json"));
    seen_free (&s);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);

    /* A read-only scan does not write, and reports the new record all
     * the same.
     */
    put (f, "1006", "0", "n1", 1000, A_NOON_MS);
    age_day (f, DAY_A);
    assert_int_equal (scan (f, NULL, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 1);
    assert_int_equal (st.segments_written, 0);
    seen_free (&s);
}

static void test_bad_record (void **state)
{
    struct fixture *f = *state;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char names[32][256];
    char p[PATH_MAX];
    char rel[256];
    FILE *fp;

    /* A corrupt record with its marker, as a broken writer left it. */
    assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", "1001",
                                            "7", "n9"),
                      0);
    fp = fopen (pathf (p, sizeof (p), "%s/%s", f->root, rel), "w");
    assert_non_null (fp);
    fputs ("{\"format\": \"tracer-record\", \"trunc", fp);
    fclose (fp);
    fp =
        fopen (pathf (p, sizeof (p), "%s/c1/days/%s/1001@7@n9", f->root, DAY_A),
               "w");
    assert_non_null (fp);
    fclose (fp);
    age_day (f, DAY_A);

    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, f->nrecs + 1);
    assert_int_equal (st.bad, 1);
    seen_free (&s);
    /* Indexed as bad, with its reason: not loaded again. */
    assert_int_equal (segments (f, DAY_A, names), 1);
    char *text = slurp (
        pathf (p, sizeof (p), "%s/c1/index/%s/%s", f->root, DAY_A, names[0]));
    char want[300];
    snprintf (want, sizeof (want), "\n#bad\t%s\t", rel);
    char *bad = strstr (text, want);
    assert_non_null (bad);
    bad += strlen (want);
    assert_true (strchr (bad, '\n') - bad > 5); /* a reason, one line */
    free (text);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.bad, 1);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);

    /* Another new record: the delta does not retry the bad one. */
    put (f, "1004", "0", "n1", 1000, A_NOON_MS);
    age_day (f, DAY_A);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 1);
    assert_int_equal (st.bad, 1);
    seen_free (&s);
}

static void test_compaction (void **state)
{
    struct fixture *f = *state;
    struct tr_index_opts o = wopts;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char names[32][256];
    char p[PATH_MAX];
    char job[16];

    o.max_segments = 3;
    scan (f, &o, &s, &st);
    seen_free (&s);
    /* Deltas 2 and 3 stay; the fourth segment compacts all four. */
    for (int i = 0; i < 3; i++) {
        snprintf (job, sizeof (job), "%d", 3000 + i);
        put (f, job, "0", "n1", 1000, A_NOON_MS);
        age_day (f, DAY_A);
        assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
        assert_int_equal (s.loads, 1);
        seen_free (&s);
        assert_int_equal (st.compactions, i == 2 ? 1 : 0);
        assert_int_equal (segments (f, DAY_A, NULL), i == 2 ? 1 : i + 2);
    }
    /* A temporary left by a writer that died long ago goes with it;
     * a recent one (being written) stays.
     */
    pathf (p, sizeof (p), "%s/c1/index/%s/.seg-1-dead-1-0.tsv.tmp", f->root,
           DAY_A);
    assert_int_equal (close (open (p, O_CREAT | O_WRONLY, 0600)), 0);
    struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
    assert_int_equal (utimensat (AT_FDCWD, p, old, 0), 0);
    char fresh_tmp[PATH_MAX];
    pathf (fresh_tmp, sizeof (fresh_tmp),
           "%s/c1/index/%s/.seg-2-busy-1-0.tsv.tmp", f->root, DAY_A);
    assert_int_equal (close (open (fresh_tmp, O_CREAT | O_WRONLY, 0600)), 0);

    /* The merged segment holds everything, once, and proves the day. */
    assert_int_equal (segments (f, DAY_A, names), 1);
    char *text = slurp (
        pathf (p, sizeof (p), "%s/c1/index/%s/%s", f->root, DAY_A, names[0]));
    assert_non_null (strstr (text, "\n#end\t8\t0\t0\t1\n"));
    free (text);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.days_fresh, 2);
    assert_int_equal (st.segments_read, 2);
    seen_free (&s);

    /* Compaction of a fresh day: more segments than allowed. */
    o.max_segments = 1;
    for (int i = 0; i < 2; i++) {
        put (f, i ? "3101" : "3100", "0", "n1", 1000, A_NOON_MS);
        age_day (f, DAY_A);
        scan (f, &wopts, &s, &st);
        seen_free (&s);
    }
    assert_int_equal (segments (f, DAY_A, NULL), 3);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (st.days_fresh, 2);
    assert_int_equal (st.compactions, 1);
    assert_int_equal (s.loads, 0);
    seen_free (&s);
    assert_int_equal (segments (f, DAY_A, NULL), 1);
    assert_int_equal (access (fresh_tmp, F_OK), 0);
    pathf (p, sizeof (p), "%s/c1/index/%s/.seg-1-dead-1-0.tsv.tmp", f->root,
           DAY_A);
    assert_int_equal (access (p, F_OK), -1);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (st.days_fresh, 2);
    assert_int_equal (s.loads, 0);
    seen_free (&s);
}

/* A segment of ours that breaks in the middle (a row that does not
 * parse): its rows before the break are used, the day is not trusted
 * fresh, and a compaction that merges it drops the older claims, which
 * counted on rows it lost.
 */
static void test_broken_segment (void **state)
{
    struct fixture *f = *state;
    struct tr_index_opts o = wopts;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char names[32][256];
    char p[PATH_MAX];
    FILE *fp;

    scan (f, &wopts, &s, &st);
    seen_free (&s);
    put (f, "1004", "0", "n1", 1000, A_NOON_MS);
    age_day (f, DAY_A);
    scan (f, &wopts, &s, &st); /* a delta with a claim for the day */
    seen_free (&s);
    assert_int_equal (segments (f, DAY_A, names), 2);

    /* The older segment's last row gets a number that is not one. */
    pathf (p, sizeof (p), "%s/c1/index/%s/%s", f->root, DAY_A, names[0]);
    char *text = slurp (p);
    char *last = strstr (text, "\n#mtime");
    assert_non_null (last);
    while (last[-1] != '\n')
        last--;
    char *tab = strchr (strchr (last, '\t') + 1, '\t'); /* after 2 fields */
    assert_non_null (tab);
    char *cut = strchr (tab + 1, '\t');
    *cut = '\0';
    char *end = strchr (cut + 1, '\n');
    char job[32];
    snprintf (job, sizeof (job), "/%.*s/", (int)strcspn (last, "\t"), last);
    fp = fopen (p, "w");
    assert_non_null (fp);
    fprintf (fp, "%s\tx%s", text, end);
    assert_int_equal (fclose (fp), 0);
    free (text);

    /* Read only: the rows before the break and the delta's, the rest
     * loaded; not fresh while the broken segment is there.
     */
    assert_int_equal (scan (f, NULL, &s, &st), f->nrecs);
    assert_int_equal (st.segments_ignored, 1);
    assert_int_equal (st.days_fresh, 1);
    assert_int_equal (s.loads, 1);
    seen_free (&s);

    /* A compaction by a writer that cannot read the lost record: the
     * merged segment lacks it, and must not claim the day.
     */
    o.max_segments = 1;
    s.deny = job;
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs - 1);
    assert_int_equal (st.compactions, 1);
    assert_int_equal (st.skipped, 1);
    seen_free (&s);
    s.deny = NULL;
    assert_int_equal (segments (f, DAY_A, NULL), 1);
    assert_int_equal (scan (f, NULL, &s, &st), f->nrecs);
    assert_int_equal (st.days_fresh, 1);
    assert_int_equal (s.loads, 1);
    seen_free (&s);
}

static void test_untrusted_segments (void **state)
{
    struct fixture *f = *state;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char names[32][256];
    char p[PATH_MAX];
    char q[PATH_MAX];
    const struct {
        const char *what;
        uid_t uid;
        mode_t mode;
        bool symlink;
        bool truncate;
    } cases[] = {
        { "another user's", 4321, 0640, false, false },
        { "group-writable", 0, 0660, false, false },
        { "world-writable", 0, 0646, false, false },
        { "a symlink to a good one", 0, 0640, true, false },
        { "cut short", 0, 0640, false, true },
    };

    scan (f, &wopts, &s, &st);
    seen_free (&s);
    assert_int_equal (segments (f, DAY_A, names), 1);
    pathf (p, sizeof (p), "%s/c1/index/%s/%s", f->root, DAY_A, names[0]);
    pathf (q, sizeof (q), "%s/good", f->dir);
    assert_int_equal (rename (p, q), 0);

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        unlink (p);
        if (cases[i].symlink)
            assert_int_equal (symlink (q, p), 0);
        else {
            copy_file (q, p);
            assert_int_equal (chown (p, cases[i].uid, 0), 0);
            assert_int_equal (chmod (p, cases[i].mode), 0);
            if (cases[i].truncate)
                assert_int_equal (truncate (p, 2000), 0);
        }
        /* Read only: the rows come from the records instead. */
        assert_int_equal (scan (f, NULL, &s, &st), f->nrecs);
        if (st.segments_ignored != 1 || s.loads != 5)
            fail_msg ("%s segment: %zu ignored, %d loads", cases[i].what,
                      st.segments_ignored, s.loads);
        assert_int_equal (st.days_fresh, 1);
        assert_int_equal (st.records_loaded, 5);
        seen_free (&s);
    }
    /* A writer leaves a foreign segment alone, writes its own, and the
     * day is listed (not trusted fresh) while the foreign one is there.
     */
    unlink (p);
    assert_int_equal (rename (q, p), 0);
    assert_int_equal (chown (p, 4321, 0), 0);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (st.segments_ignored, 1);
    assert_int_equal (st.segments_written, 1);
    seen_free (&s);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (st.segments_ignored, 1);
    assert_int_equal (st.segments_read, 2);
    assert_int_equal (s.loads, 0); /* all covered by ours */
    assert_int_equal (st.days_fresh, 1);
    seen_free (&s);
    assert_int_equal (access (p, F_OK), 0);
}

static void test_shards (void **state)
{
    struct fixture *f = *state;
    struct tr_index_opts o = wopts;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char *all[256];
    int nall = 0;
    const unsigned n = 3;

    /* Three shards, writing: together exactly all rows, none twice. */
    for (unsigned i = 0; i < n; i++) {
        o.shard_i = i;
        o.shard_n = n;
        int got = scan (f, &o, &s, &st);
        assert_true (got > 0 && got < f->nrecs);
        assert_int_equal (s.loads, got);
        for (int k = 0; k < s.n; k++) {
            for (int j = 0; j < nall; j++)
                if (strcmp (all[j], s.paths[k]) == 0)
                    fail_msg ("%s in two shards", s.paths[k]);
            all[nall++] = strdup (s.paths[k]);
        }
        seen_free (&s);
    }
    assert_int_equal (nall, f->nrecs);
    for (int j = 0; j < nall; j++)
        free (all[j]);

    /* Each shard is fresh on its own, from the index. */
    o.shard_i = 1;
    scan (f, &o, &s, &st);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);
    /* The claims of all three prove the whole day to an unsharded
     * scan, which reads the rows of every shard.
     */
    assert_int_equal (scan (f, NULL, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);
    /* A shard of another split is not proven by these. */
    o.shard_i = 0;
    o.shard_n = 2;
    o.write = false;
    scan (f, &o, &s, &st);
    assert_int_equal (st.days_fresh, 2); /* complete set of 3 covers it */
    assert_int_equal (s.loads, 0);
    seen_free (&s);

    /* Bad arguments. */
    tr_error_t e = { 0 };
    o.shard_i = 2;
    assert_int_equal (tr_index_scan (f->store, "c1", 0, 1, &o, load_cb, &s,
                                     row_cb, &s, f->pool, &st, &e),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_index_scan (f->store, "c1", 2, 1, NULL, load_cb, &s,
                                     row_cb, &s, f->pool, &st, &e),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_index_scan (f->store, "../c1", 0, 1, NULL, load_cb, &s,
                                     row_cb, &s, f->pool, &st, &e),
                      -1);
    assert_int_equal (errno, EINVAL);
    /* An unknown cluster has nothing. */
    assert_int_equal (tr_index_scan (f->store, "c9", 0, 2000000000, NULL,
                                     load_cb, &s, row_cb, &s, f->pool, &st, &e),
                      0);
}

static void test_vanishing_segment (void **state)
{
    struct fixture *f = *state;
    struct seen s = { 0 };
    struct tr_index_stats st;

    scan (f, &wopts, &s, &st);
    seen_free (&s);

    /* A segment renamed between the listing and the open (a compaction
     * replaced it): the reader lists again and finds it under its new
     * name; nothing is loaded and nothing passed twice.
     */
    race_mode = 1;
    race_count = 0;
    assert_int_equal (scan (f, NULL, &s, &st), f->nrecs);
    assert_int_equal (race_count, 1);
    assert_int_equal (st.retries, 1);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);

    /* Always gone: after 5 listings the day's records are loaded. */
    race_mode = 2;
    assert_int_equal (scan (f, NULL, &s, &st), f->nrecs);
    race_mode = 0;
    assert_int_equal (st.retries, 10); /* 5 per day */
    assert_int_equal (s.loads, f->nrecs);
    assert_int_equal (st.days_fresh, 0);
    seen_free (&s);
}

static void test_old_job_markers (void **state)
{
    struct fixture *f = *state;
    struct seen s = { 0 };
    struct tr_index_stats st;
    char p[PATH_MAX];
    char q[PATH_MAX];
    char names[32][256];

    /* Job 1001 as an older store has it: one marker per job and day,
     * with a step ending on each of the two days.
     */
    put (f, "1001", "1", "n1", 1000, A_NOON_MS + DAY_MS);
    const char *markers[] = { DAY_A "/1001@0@n1", DAY_A "/1001@0@n2",
                              DAY_A "/1001@batch@n1", DAY_A "/1001@batch@n2",
                              DAY_B "/1001@1@n1" };
    for (size_t i = 0; i < 5; i++)
        unlink (pathf (p, sizeof (p), "%s/c1/days/%s", f->root, markers[i]));
    assert_int_equal (close (open (pathf (p, sizeof (p),
                                          "%s/c1/days/" DAY_A "/1001", f->root),
                                   O_CREAT | O_WRONLY, 0600)),
                      0);
    assert_int_equal (close (open (pathf (q, sizeof (q),
                                          "%s/c1/days/" DAY_B "/1001", f->root),
                                   O_CREAT | O_WRONLY, 0600)),
                      0);
    age_days (f);

    /* Each record once, on its own day. */
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_true (seen_has (&s, "/1001/1.n1.json"));
    assert_true (seen_has (&s, "/1001/batch.n2.json"));
    seen_free (&s);
    assert_int_equal (segments (f, DAY_B, names), 1);
    char *text = slurp (
        pathf (p, sizeof (p), "%s/c1/index/%s/%s", f->root, DAY_B, names[0]));
    assert_non_null (strstr (text, "\n#marker\t1001\n"));
    assert_non_null (strstr (text, "/1001/1.n1.json"));
    assert_null (strstr (text, "/1001/0.n1.json"));
    free (text);
    assert_int_equal (scan (f, &wopts, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);
}

/* As a user: the index is unreadable (0640 root:65534) and so are the
 * other user's records.  Runs in a child that takes the user's ids; its
 * exit status is what it saw, checked by the parent.
 */
static void test_user_fallback (void **state)
{
    struct fixture *f = *state;
    struct seen s = { 0 };
    struct tr_index_stats st;
    int fds[2];
    pid_t pid;
    int status;
    size_t got[4];

    scan (f, &wopts, &s, &st);
    seen_free (&s);
    assert_int_equal (pipe (fds), 0);
    if ((pid = fork ()) == 0) {
        tr_strpool_t *pool = tr_strpool_create ();
        size_t out[4] = { 0, 0, 0, 0 };
        time_t from = (time_t)(A_NOON_MS / 1000) - 3600;
        time_t to = (time_t)((A_NOON_MS + DAY_MS) / 1000) + 3600;
        bool only_mine = true;

        close (fds[0]);
        if (setgroups (0, NULL) < 0 || setgid (1000) < 0 || setuid (1000) < 0)
            _exit (2);
        s.pool = pool;
        int rc = tr_index_scan (f->store, "c1", from, to, &wopts, load_cb, &s,
                                row_cb, &s, pool, &st, NULL);
        for (int i = 0; i < s.n; i++)
            if (strcmp (s.users[i], "user1000") != 0)
                only_mine = false;
        out[0] = rc < 0 ? (size_t)-1 : (size_t)rc;
        out[1] = only_mine ? st.skipped : (size_t)-1;
        out[2] = st.segments_ignored;
        out[3] = st.segments_written + st.days_fresh;
        if (write (fds[1], out, sizeof (out)) != sizeof (out))
            _exit (3);
        _exit (0);
    }
    assert_true (pid > 0);
    close (fds[1]);
    assert_int_equal (read (fds[0], got, sizeof (got)), sizeof (got));
    close (fds[0]);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    /* user1000: 4 records of 1001 and half of the single jobs. */
    assert_int_equal (got[0], 4 + NJOBS_B / 2);
    assert_int_equal (got[1], 3 + NJOBS_B / 2); /* skipped, silently */
    assert_int_equal (got[2], 2);               /* both days' segments */
    assert_int_equal (got[3], 0);               /* wrote nothing */
}

/* The bad-record callback: what it was told. */
struct bads {
    char path[8][256];
    char reason[8][256];
    bool loaded[8];
    int n;
};

static void bad_cb (const char *relpath,
                    const char *reason,
                    bool loaded,
                    void *arg)
{
    struct bads *b = arg;

    assert_true (b->n < 8);
    snprintf (b->path[b->n], sizeof (b->path[0]), "%s", relpath);
    snprintf (b->reason[b->n], sizeof (b->reason[0]), "%s", reason);
    b->loaded[b->n] = loaded;
    b->n++;
}

/* A record file replaced after it was indexed (the day directory does
 * not change: no new marker): by another valid record of its user (in
 * place, as an owner who may write it would, and by rename), or rewritten
 * with other content.  The index's row of it is not served: the file is
 * loaded and verified again, a record lying in another's place is bad,
 * and the caller is told, from the load and from the segments after.
 */
static void test_replaced_record (void **state)
{
    struct fixture *f = *state;
    struct tr_index_opts o = wopts;
    struct seen s = { 0 };
    struct tr_index_stats st;
    struct bads b = { 0 };
    char victim[PATH_MAX];
    char other[PATH_MAX];
    char rel[256];
    char tmp[PATH_MAX];

    o.bad = bad_cb;
    o.bad_arg = &b;
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    seen_free (&s);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (st.days_fresh, 2);
    assert_int_equal (s.loads, 0);
    seen_free (&s);

    /* Job 1002's record overwritten in place with job 1001's (the same
     * user's, validly made): same inode, new content.
     */
    assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", "1002",
                                            "0", "n1"),
                      0);
    pathf (victim, sizeof (victim), "%s/%s", f->root, rel);
    assert_int_equal (tr_store_record_path (other, sizeof (other), "c1",
                                            "1001", "0", "n1"),
                      0);
    pathf (tmp, sizeof (tmp), "%s/%s", f->root, other);
    copy_file (tmp, victim);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs - 1);
    assert_int_equal (st.rows_stale, 1);
    assert_int_equal (s.loads, 1);
    assert_int_equal (st.bad, 1);
    assert_int_equal (st.days_fresh, 1);
    assert_false (seen_has (&s, "/1002/0.n1.json"));
    assert_int_equal (b.n, 1);
    assert_string_equal (b.path[0], rel);
    assert_true (b.loaded[0]);
    assert_string_equal (b.reason[0], "the record is job 1001's (step 0, "
                                      "node n1, cluster c1), not in its "
                                      "place in the store (copied or moved "
                                      "here)");
    seen_free (&s);
    /* From the index now: still bad, still said, nothing loaded. */
    b.n = 0;
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs - 1);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.bad, 1);
    assert_int_equal (b.n, 1);
    assert_false (b.loaded[0]);
    assert_string_equal (b.path[0], rel);
    seen_free (&s);
    /* A read-only scan (a user's) too. */
    b.n = 0;
    assert_int_equal (scan (f, NULL, &s, &st), f->nrecs - 1);
    assert_int_equal (b.n, 0); /* no opts, no callback */
    assert_int_equal (st.bad, 1);
    seen_free (&s);

    /* Repaired (the job's own record put again): read again, a row. */
    b.n = 0;
    put (f, "1002", "0", "n1", 1001, A_NOON_MS);
    f->nrecs--;
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (st.rows_stale, 1);
    assert_int_equal (st.bad, 0);
    assert_int_equal (b.n, 0);
    assert_true (seen_has (&s, "/1002/0.n1.json"));
    seen_free (&s);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.bad, 0);
    seen_free (&s);

    /* Job 2001's record replaced by rename with a copy of itself made
     * with another user name: another inode, so it is read again and
     * what is served is what the file now says.
     */
    b.n = 0;
    assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", "2001",
                                            "0", "n3"),
                      0);
    pathf (victim, sizeof (victim), "%s/%s", f->root, rel);
    pathf (tmp, sizeof (tmp), "%s.new", victim);
    char *text = slurp (victim);
    char *u = strstr (text, "\"user1001\"");
    assert_non_null (u);
    memcpy (u + 1, "userZZZZ", 8);
    FILE *fp = fopen (tmp, "w");
    assert_non_null (fp);
    fputs (text, fp);
    assert_int_equal (fclose (fp), 0);
    free (text);
    assert_int_equal (rename (tmp, victim), 0);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (st.rows_stale, 1);
    assert_int_equal (s.loads, 1);
    for (int i = 0; i < s.n; i++)
        if (strstr (s.paths[i], "/2001/"))
            assert_string_equal (s.users[i], "userZZZZ");
    seen_free (&s);
    /* Indexed afresh: served from the segments, nothing loaded. */
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.rows_stale, 0);
    assert_int_equal (st.days_fresh, 2);
    seen_free (&s);

    /* A compaction keeps the file identities: still nothing loaded. */
    o.max_segments = 1;
    age_days (f);
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    seen_free (&s);
    o.max_segments = 0;
    assert_int_equal (scan (f, &o, &s, &st), f->nrecs);
    assert_int_equal (s.loads, 0);
    assert_int_equal (st.rows_stale, 0);
    seen_free (&s);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_build_then_fresh, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_delta_and_racy, setup, teardown),
        cmocka_unit_test_setup_teardown (test_bad_record, setup, teardown),
        cmocka_unit_test_setup_teardown (test_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown (test_broken_segment, setup, teardown),
        cmocka_unit_test_setup_teardown (test_untrusted_segments, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_shards, setup, teardown),
        cmocka_unit_test_setup_teardown (test_vanishing_segment, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_old_job_markers, setup, teardown),
        cmocka_unit_test_setup_teardown (test_user_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown (test_replaced_record, setup,
                                         teardown),
    };

    /* Records are chowned to their users, segments in the tests. */
    if (geteuid () != 0) {
        printf ("1..0 # SKIP needs root (chown)\n");
        return 0;
    }
    return cmocka_run_group_tests (tests, NULL, NULL);
}
