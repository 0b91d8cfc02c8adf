/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for libtracer/record/store.c: the on-disk layout (exact paths,
 * buckets, per-record day markers and the older per-job ones), ownership
 * and modes, idempotent re-delivery,
 * listing by job, by time window and in full, and refusal of unsafe ids,
 * planted symlinks and failed writes without leaving anything behind.
 * Runs as root (records are chowned to the job's user).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "libtracer/record/record.h"
#include "libtracer/record/store.h"
#include "plant.h"
#include "rmtree.h"

/* 2024-03-01T12:00:00Z and one day, in milliseconds. */
#define MAR01_NOON_MS 1709294400000LL
#define DAY_MS 86400000LL

struct fixture {
    char dir[64]; /* scratch: store at dir/store, outsiders beside */
    char root[96];
    tr_store_t *store;
};

/* Paths handed to a walk callback. */
struct seen {
    char *paths[64];
    int n;
    int stop_at; /* return 7 on this call (1-based); 0 = never */
};

static const struct tr_store_opts job_opts = {
    .file_mode = 0640,
    .dir_mode = 0755,
    .owner_is_job = true,
    .owner_uid = (uid_t)-1,
    .gid = 65534,
    .create = true,
};

static int setup (void **state)
{
    struct fixture *f = calloc (1, sizeof (*f));

    if (!f)
        return -1;
    snprintf (f->dir, sizeof (f->dir), "/tmp/tracer-store-XXXXXX");
    if (!mkdtemp (f->dir)) {
        free (f);
        return -1;
    }
    snprintf (f->root, sizeof (f->root), "%s/store", f->dir);
    /* The root does not exist yet: opts.create makes it. */
    f->store = tr_store_open (f->root, &job_opts, NULL);
    *state = f;
    return f->store ? 0 : -1;
}

static int teardown (void **state)
{
    struct fixture *f = *state;

    tr_store_destroy (f->store);
    rmtree (f->dir);
    free (f);
    return 0;
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

/* A minimal record: identity and time, which is all the store reads.
 * end_ms < 0 leaves the end out (a snapshot) and starts at MAR01 noon.
 */
static json_t *make_rec (const char *cluster,
                         const char *job,
                         const char *step,
                         const char *node,
                         json_int_t uid,
                         long long end_ms)
{
    json_t *rec =
        json_pack ("{s:{s:s?, s:s?, s:s?, s:s?, s:I}, "
                   "s:{s:I}}",
                   "identity", "cluster", cluster, "job_id", job, "step_id",
                   step, "node", node, "uid", uid, "time", "start_unix_ms",
                   (json_int_t)(end_ms >= 0 ? end_ms - 3600000
                                            : MAR01_NOON_MS));
    assert_non_null (rec);
    if (end_ms >= 0)
        assert_int_equal (json_object_set_new (json_object_get (rec, "time"),
                                               "end_unix_ms",
                                               json_integer (end_ms)),
                          0);
    return rec;
}

static void put_ok (tr_store_t *store, json_t *rec)
{
    tr_error_t e = { 0 };

    if (tr_store_put (store, rec, &e) != 0)
        fail_msg ("put: %s", e.text);
    json_decref (rec);
}

static int collect (const char *path, void *arg)
{
    struct seen *s = arg;

    assert_true (s->n < (int)(sizeof (s->paths) / sizeof (s->paths[0])));
    s->paths[s->n] = strdup (path);
    assert_non_null (s->paths[s->n]);
    s->n++;
    return s->stop_at == s->n ? 7 : 0;
}

static void seen_free (struct seen *s)
{
    for (int i = 0; i < s->n; i++)
        free (s->paths[i]);
    s->n = 0;
}

/* Assert the walk saw exactly these root-relative paths, in order. */
static void assert_seen (const struct fixture *f,
                         const struct seen *s,
                         const char *const *rel,
                         int n)
{
    char want[PATH_MAX];

    if (s->n != n)
        fail_msg ("walk saw %d records, expected %d", s->n, n);
    for (int i = 0; i < n; i++) {
        pathf (want, sizeof (want), "%s/%s", f->root, rel[i]);
        if (strcmp (s->paths[i], want) != 0)
            fail_msg ("record %d: %s, expected %s", i, s->paths[i], want);
    }
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

/* Number of non-directories anywhere under dir. */
static int file_count;
static int count_file (const char *path,
                       const struct stat *st,
                       int flag,
                       struct FTW *ftw)
{
    (void)path;
    (void)st;
    (void)ftw;
    if (flag != FTW_D && flag != FTW_DP)
        file_count++;
    return 0;
}

static int count_files (const char *dir)
{
    file_count = 0;
    assert_int_equal (nftw (dir, count_file, 16, FTW_PHYS), 0);
    return file_count;
}

static int entry_count;
static int count_entry (const char *path,
                        const struct stat *st,
                        int flag,
                        struct FTW *ftw)
{
    (void)path;
    (void)st;
    (void)flag;
    (void)ftw;
    entry_count++;
    return 0;
}

/* Number of entries (files and directories, the top one included). */
static int count_tree (const char *dir)
{
    entry_count = 0;
    assert_int_equal (nftw (dir, count_entry, 16, FTW_PHYS), 0);
    return entry_count;
}

static int count_tmp_in (const char *dir)
{
    DIR *d = opendir (dir);
    struct dirent *de;
    int n = 0;

    assert_non_null (d);
    while ((de = readdir (d)))
        if (strstr (de->d_name, ".tmp."))
            n++;
    closedir (d);
    return n;
}

static void test_relpath_layout (void **state)
{
    /* Buckets are FNV-1a 32 & 0xfff, computed independently. */
    const struct {
        const char *job;
        const char *expect;
    } cases[] = {
        { "12345", "c1/jobs/0d8/12345/batch.n001.json" },
        { "12345_7", "c1/jobs/436/12345_7/batch.n001.json" },
        { "a", "c1/jobs/92c/a/batch.n001.json" },
        { "42", "c1/jobs/583/42/batch.n001.json" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        json_t *rec =
            make_rec ("c1", cases[i].job, "batch", "n001", 1000, MAR01_NOON_MS);
        char *rel = tr_store_relpath (rec);
        char buf[PATH_MAX];
        assert_non_null (rel);
        assert_string_equal (rel, cases[i].expect);
        /* The same path from the ids, and the bucket from the hash. */
        assert_int_equal (tr_store_record_path (buf, sizeof (buf), "c1",
                                                cases[i].job, "batch", "n001"),
                          0);
        assert_string_equal (buf, cases[i].expect);
        snprintf (buf, sizeof (buf), "c1/jobs/%03x/",
                  (unsigned)(tr_store_job_hash (cases[i].job) & 0xfff));
        assert_int_equal (strncmp (rel, buf, strlen (buf)), 0);
        free (rel);
        json_decref (rec);
    }
    {
        char buf[64];
        assert_int_equal (tr_store_record_path (buf, sizeof (buf), "c1", "1@2",
                                                "0", "n1"),
                          -1);
        assert_int_equal (errno, EINVAL);
        assert_int_equal (tr_store_record_path (buf, 10, "c1", "12345", "0",
                                                "n1"),
                          -1);
        assert_int_equal (errno, ENAMETOOLONG);
    }
}

static void test_put_layout_owner_mode (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    struct stat st;
    json_t *rec;
    char *expect;
    char *got;

    assert_int_equal (stat (f->root, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0755);

    /* Started 2024-03-01T23:30Z, ended 2024-03-02T00:30Z: the day is
     * the end's UTC date.
     */
    rec = make_rec ("c1", "12345", "batch", "n001", 4321,
                    MAR01_NOON_MS + 12 * 3600000LL + 1800000LL);
    expect = tr_record_dumps (rec);
    assert_non_null (expect);
    put_ok (f->store, rec);

    pathf (p, sizeof (p), "%s/c1/jobs/0d8/12345/batch.n001.json", f->root);
    assert_int_equal (lstat (p, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_mode & 07777, 0440);
    assert_int_equal (st.st_uid, 4321);
    assert_int_equal (st.st_gid, 65534);
    got = slurp (p);
    assert_string_equal (got, expect);
    free (got);
    free (expect);

    pathf (p, sizeof (p), "%s/c1/jobs/0d8/12345", f->root);
    assert_int_equal (stat (p, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0755);

    pathf (p, sizeof (p), "%s/c1/days/2024-03-02/12345@batch@n001", f->root);
    assert_int_equal (lstat (p, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_size, 0);
    assert_int_equal (st.st_mode & 07777, 0640);
    assert_int_equal (st.st_uid, 4321);
    assert_int_equal (st.st_gid, 65534);

    /* Only the record and its marker were written. */
    assert_int_equal (count_files (f->root), 2);

    /* No end time yet (a snapshot): the start's day. */
    rec = make_rec ("c1", "777", "0", "n002", 4321, -1);
    put_ok (f->store, rec);
    pathf (p, sizeof (p), "%s/c1/days/2024-03-01/777@0@n002", f->root);
    assert_int_equal (lstat (p, &st), 0);

    /* A fixed owner instead of the job's. */
    struct tr_store_opts o = job_opts;
    o.owner_is_job = false;
    o.owner_uid = 65534;
    o.gid = (gid_t)-1;
    o.file_mode = 0600;
    tr_store_t *s2 = tr_store_open (f->root, &o, NULL);
    assert_non_null (s2);
    put_ok (s2, make_rec ("c1", "4242", "0", "n003", 4321, MAR01_NOON_MS));
    tr_store_destroy (s2);
    pathf (p, sizeof (p), "%s/c1/jobs/a65/4242/0.n003.json", f->root);
    assert_int_equal (lstat (p, &st), 0);
    assert_int_equal (st.st_uid, 65534);
    assert_int_equal (st.st_gid, 0);
    assert_int_equal (st.st_mode & 07777, 0600);
}

static void test_foreach_job (void **state)
{
    struct fixture *f = *state;
    const char *steps[] = { "0", "batch" };
    const char *nodes[] = { "n001", "n002" };
    const char *expect[] = {
        "c1/jobs/c57/1001/0.n001.json",
        "c1/jobs/c57/1001/0.n002.json",
        "c1/jobs/c57/1001/batch.n001.json",
        "c1/jobs/c57/1001/batch.n002.json",
    };
    struct seen s = { 0 };
    tr_error_t e = { 0 };

    /* Put in reverse so the sorted output is not just creation order. */
    for (int i = 1; i >= 0; i--)
        for (int j = 1; j >= 0; j--)
            put_ok (f->store, make_rec ("c1", "1001", steps[i], nodes[j], 1000,
                                        MAR01_NOON_MS));
    put_ok (f->store,
            make_rec ("c1", "1002", "0", "n001", 1000, MAR01_NOON_MS));
    put_ok (f->store,
            make_rec ("c2", "1001", "0", "n009", 1000, MAR01_NOON_MS));

    assert_int_equal (tr_store_foreach_job (f->store, "c1", "1001", collect, &s,
                                            &e),
                      4);
    assert_seen (f, &s, expect, 4);
    seen_free (&s);

    /* The callback can stop the walk; its value is returned. */
    s.stop_at = 2;
    assert_int_equal (tr_store_foreach_job (f->store, "c1", "1001", collect, &s,
                                            NULL),
                      7);
    assert_int_equal (s.n, 2);
    seen_free (&s);
    s.stop_at = 0;

    assert_int_equal (tr_store_foreach_job (f->store, "c1", "1003", collect, &s,
                                            &e),
                      -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (s.n, 0);
    assert_int_equal (tr_store_foreach_job (f->store, "c3", "1001", collect, &s,
                                            NULL),
                      -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (tr_store_foreach_job (f->store, "c1", "../c2", collect,
                                            &s, NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (s.n, 0);
}

static void test_reput_no_duplicate (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    struct seen s = { 0 };
    json_t *rec = make_rec ("c1", "1004", "0", "n001", 1000, MAR01_NOON_MS);
    char *v2;
    char *got;

    assert_int_equal (tr_store_put (f->store, rec, NULL), 0);
    assert_int_equal (tr_store_put (f->store, rec, NULL), 0);
    /* Re-delivered with new content: replaced, still one file. */
    json_object_set_new (rec, "extra", json_string ("second delivery"));
    assert_int_equal (tr_store_put (f->store, rec, NULL), 0);
    v2 = tr_record_dumps (rec);
    json_decref (rec);

    assert_int_equal (tr_store_foreach_job (f->store, "c1", "1004", collect, &s,
                                            NULL),
                      1);
    got = slurp (s.paths[0]);
    assert_string_equal (got, v2);
    free (got);
    free (v2);
    seen_free (&s);
    /* One record, one marker, no temporaries. */
    assert_int_equal (count_files (f->root), 2);
    assert_int_equal (count_tmp_in (pathf (p, sizeof (p), "%s/c1/jobs/478/1004",
                                           f->root)),
                      0);
}

static void test_foreach_window (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    struct seen s = { 0 };
    tr_error_t e = { 0 };
    /* Days relative to 2024-03-01 (day 0); window is days 1..3. */
    const struct {
        const char *job;
        const char *step;
        int day;
    } recs[] = {
        { "1000", "0", -1 }, /* 02-29: before */
        { "1001", "0", 0 },  /* 03-01: before */
        { "1002", "0", 1 },  /* 03-02: in */
        { "1003", "0", 3 },  /* 03-04: in (last day) */
        { "1004", "0", 4 },  /* 03-05: after */
        { "1005", "0", 1 },  /* steps on two days in the window */
        { "1005", "1", 2 },  { "1006", "0", 3 }, /* one step in, one after */
        { "1006", "1", 4 },  { "42", "0", 2 },
    };
    /* Days in order; within a day by job id; each job once. */
    const char *expect[] = {
        "c1/jobs/dea/1002/0.n001.json", "c1/jobs/60b/1005/0.n001.json",
        "c1/jobs/60b/1005/1.n001.json", "c1/jobs/583/42/0.n001.json",
        "c1/jobs/f7d/1003/0.n001.json", "c1/jobs/79e/1006/0.n001.json",
        "c1/jobs/79e/1006/1.n001.json",
    };
    time_t from = (time_t)((MAR01_NOON_MS + DAY_MS) / 1000); /* noon */
    time_t to = (time_t)((MAR01_NOON_MS + 3 * DAY_MS) / 1000 + 11 * 3600);

    for (size_t i = 0; i < sizeof (recs) / sizeof (recs[0]); i++)
        put_ok (f->store,
                make_rec ("c1", recs[i].job, recs[i].step, "n001", 1000,
                          MAR01_NOON_MS + recs[i].day * DAY_MS));
    /* Another cluster on the same days is not listed. */
    put_ok (f->store,
            make_rec ("c2", "1002", "0", "n001", 1000, MAR01_NOON_MS + DAY_MS));
    /* Things that are not markers or days are ignored: a hidden file, a
     * marker for a job with no records, a non-date directory.
     */
    pathf (p, sizeof (p), "%s/c1/days/2024-03-02/.1099", f->root);
    assert_int_equal (close (open (p, O_CREAT | O_WRONLY, 0600)), 0);
    pathf (p, sizeof (p), "%s/c1/days/2024-03-02/1098", f->root);
    assert_int_equal (close (open (p, O_CREAT | O_WRONLY, 0600)), 0);
    pathf (p, sizeof (p), "%s/c1/days/notaday", f->root);
    assert_int_equal (mkdir (p, 0755), 0);
    pathf (p, sizeof (p), "%s/c1/days/notaday/1000", f->root);
    assert_int_equal (close (open (p, O_CREAT | O_WRONLY, 0600)), 0);

    assert_int_equal (tr_store_foreach_window (f->store, "c1", from, to,
                                               collect, &s, &e),
                      7);
    assert_seen (f, &s, expect, 7);
    seen_free (&s);

    /* One day, given as its first and last second. */
    from = (time_t)((MAR01_NOON_MS - 12 * 3600000LL) / 1000);
    to = from + 86399;
    assert_int_equal (tr_store_foreach_window (f->store, "c1", from, to,
                                               collect, &s, NULL),
                      1);
    assert_non_null (strstr (s.paths[0], "/1001/"));
    seen_free (&s);

    /* An empty window, an unknown cluster, and a reversed window. */
    assert_int_equal (tr_store_foreach_window (f->store, "c1", 0, 86400,
                                               collect, &s, NULL),
                      0);
    assert_int_equal (tr_store_foreach_window (f->store, "c9", from, to,
                                               collect, &s, NULL),
                      0);
    assert_int_equal (tr_store_foreach_window (f->store, "c1", to, from,
                                               collect, &s, NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (s.n, 0);
}

/* Set a directory's mtime to a fixed past time, so that a change is
 * visible whatever the file system's timestamp granularity.
 */
static void set_old_mtime (const char *path)
{
    struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

    assert_int_equal (utimensat (AT_FDCWD, path, ts, 0), 0);
}

static long long mtime_ns (const char *path)
{
    struct stat st;

    assert_int_equal (stat (path, &st), 0);
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

static uint64_t fnv64 (const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void test_markers_per_record (void **state)
{
    struct fixture *f = *state;
    char day[PATH_MAX];
    char p[PATH_MAX];
    char id[3][129];
    char file[300];
    struct seen s = { 0 };
    struct stat st;
    const char *marker_names[] = { "1001@0@n001", "1001@0@n002",
                                   "1001@batch@n001" };

    pathf (day, sizeof (day), "%s/c1/days/2024-03-01", f->root);
    put_ok (f->store,
            make_rec ("c1", "1001", "0", "n001", 1000, MAR01_NOON_MS));
    /* Another node and another step of the same job, the same day: each
     * record gets its own marker, and each changes the day's mtime.
     */
    set_old_mtime (day);
    put_ok (f->store,
            make_rec ("c1", "1001", "0", "n002", 1000, MAR01_NOON_MS));
    assert_true (mtime_ns (day) != 1000000000LL * 1000000000LL);
    set_old_mtime (day);
    put_ok (f->store,
            make_rec ("c1", "1001", "batch", "n001", 1000, MAR01_NOON_MS));
    assert_true (mtime_ns (day) != 1000000000LL * 1000000000LL);
    for (size_t i = 0; i < 3; i++) {
        pathf (p, sizeof (p), "%s/%s", day, marker_names[i]);
        assert_int_equal (lstat (p, &st), 0);
        assert_true (S_ISREG (st.st_mode));
        assert_int_equal (st.st_size, 0);
    }
    /* A re-delivery adds nothing: the day is unchanged. */
    set_old_mtime (day);
    put_ok (f->store,
            make_rec ("c1", "1001", "0", "n002", 1000, MAR01_NOON_MS));
    assert_int_equal (mtime_ns (day), 1000000000LL * 1000000000LL);

    /* Ids too long for "<job>@<step>@<node>" within NAME_MAX: the marker
     * is the job id and a hash of the record's file name.
     */
    for (int i = 0; i < 3; i++) {
        memset (id[i], 'a' + i, 100);
        id[i][100] = '\0';
    }
    put_ok (f->store,
            make_rec ("c1", id[0], id[1], id[2], 1000, MAR01_NOON_MS));
    snprintf (file, sizeof (file), "%s.%s.json", id[1], id[2]);
    pathf (p, sizeof (p), "%s/%s@%016llx", day, id[0],
           (unsigned long long)fnv64 (file));
    assert_int_equal (lstat (p, &st), 0);
    assert_true (S_ISREG (st.st_mode));

    /* The window lists each job once, in job-id order, whatever its
     * markers: several per-record ones (1001), a hashed one, an old
     * per-job one (10050, made by renaming its new marker), and a job
     * whose id sorts differently from its markers ("10050@" < "1005@").
     */
    put_ok (f->store,
            make_rec ("c1", "10050", "0", "n001", 1000, MAR01_NOON_MS));
    put_ok (f->store,
            make_rec ("c1", "1005", "0", "n001", 1000, MAR01_NOON_MS));
    char from[PATH_MAX];
    pathf (from, sizeof (from), "%s/10050@0@n001", day);
    pathf (p, sizeof (p), "%s/10050", day);
    assert_int_equal (rename (from, p), 0);
    /* Names that are not markers: too many parts, an unsafe part. */
    pathf (p, sizeof (p), "%s/1005@0@n001@x", day);
    assert_int_equal (close (open (p, O_CREAT | O_WRONLY, 0600)), 0);
    pathf (p, sizeof (p), "%s/1099@@n001", day);
    assert_int_equal (close (open (p, O_CREAT | O_WRONLY, 0600)), 0);
    time_t t0 = (time_t)(MAR01_NOON_MS / 1000);
    assert_int_equal (tr_store_foreach_window (f->store, "c1", t0, t0, collect,
                                               &s, NULL),
                      6);
    assert_non_null (strstr (s.paths[0], "/1001/0.n001.json"));
    assert_non_null (strstr (s.paths[1], "/1001/0.n002.json"));
    assert_non_null (strstr (s.paths[2], "/1001/batch.n001.json"));
    assert_non_null (strstr (s.paths[3], "/1005/0.n001.json"));
    assert_non_null (strstr (s.paths[4], "/10050/0.n001.json"));
    assert_non_null (strstr (s.paths[5], id[0]));
    seen_free (&s);
}

static void test_unsafe_ids (void **state)
{
    struct fixture *f = *state;
    const char *bad[] = {
        "../../etc", "a/b", "", ".hidden", "..", "a b", NULL
    };
    const char *fields[] = { "cluster", "job_id", "step_id", "node" };
    int before = count_tree (f->dir);

    for (size_t i = 0; i < sizeof (fields) / sizeof (fields[0]); i++) {
        for (size_t j = 0; j < sizeof (bad) / sizeof (bad[0]); j++) {
            json_t *rec =
                make_rec ("c1", "1001", "0", "n001", 1000, MAR01_NOON_MS);
            json_t *id = json_object_get (rec, "identity");
            tr_error_t e = { 0 };
            if (bad[j])
                json_object_set_new (id, fields[i], json_string (bad[j]));
            else
                json_object_del (id, fields[i]);
            errno = 0;
            assert_int_equal (tr_store_put (f->store, rec, &e), -1);
            assert_int_equal (errno, EINVAL);
            assert_non_null (strstr (e.text, fields[i]));
            errno = 0;
            assert_null (tr_store_relpath (rec));
            assert_int_equal (errno, EINVAL);
            json_decref (rec);
        }
    }
    /* Bad times and uids are refused before anything is created too. */
    json_t *rec = make_rec ("c1", "1001", "0", "n001", -5, MAR01_NOON_MS);
    assert_int_equal (tr_store_put (f->store, rec, NULL), -1);
    assert_int_equal (errno, EINVAL);
    json_decref (rec);
    rec = make_rec ("c1", "1001", "0", "n001", 1000, MAR01_NOON_MS);
    json_object_set_new (json_object_get (rec, "time"), "end_unix_ms",
                         json_string ("yesterday"));
    assert_int_equal (tr_store_put (f->store, rec, NULL), -1);
    assert_int_equal (errno, EINVAL);
    json_decref (rec);

    /* Nothing at all was created, here or beside the store. */
    assert_int_equal (count_tree (f->dir), before);
    assert_int_equal (count_tree (f->root), 1);
}

static void test_planted_symlinks (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    char elsewhere[PATH_MAX];
    char victim[PATH_MAX];
    struct seen s = { 0 };
    tr_error_t e = { 0 };
    char *got;

    pathf (elsewhere, sizeof (elsewhere), "%s/elsewhere", f->dir);
    assert_int_equal (mkdir (elsewhere, 0755), 0);

    /* A job directory that is a symlink: the put fails, nothing lands
     * in the target.
     */
    assert_int_equal (mkdir (pathf (p, sizeof (p), "%s/c1", f->root), 0755), 0);
    assert_int_equal (mkdir (pathf (p, sizeof (p), "%s/c1/jobs", f->root),
                             0755),
                      0);
    assert_int_equal (mkdir (pathf (p, sizeof (p), "%s/c1/jobs/501", f->root),
                             0755),
                      0);
    assert_int_equal (symlink (elsewhere,
                               pathf (p, sizeof (p), "%s/c1/jobs/501/666",
                                      f->root)),
                      0);
    json_t *rec = make_rec ("c1", "666", "0", "n001", 1000, MAR01_NOON_MS);
    assert_int_equal (tr_store_put (f->store, rec, &e), -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);
    assert_non_null (strstr (e.text, "666"));
    json_decref (rec);
    assert_int_equal (count_tree (elsewhere), 1);
    /* Readers refuse it as well. */
    assert_int_equal (tr_store_foreach_job (f->store, "c1", "666", collect, &s,
                                            NULL),
                      -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);
    assert_int_equal (s.n, 0);

    /* A symlinked day directory: the record is written but the marker
     * is not, and the put reports failure so the caller retries.
     */
    assert_int_equal (mkdir (pathf (p, sizeof (p), "%s/c1/days", f->root),
                             0755),
                      0);
    assert_int_equal (symlink (elsewhere,
                               pathf (p, sizeof (p), "%s/c1/days/2024-03-01",
                                      f->root)),
                      0);
    rec = make_rec ("c1", "1001", "0", "n001", 1000, MAR01_NOON_MS);
    assert_int_equal (tr_store_put (f->store, rec, &e), -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);
    assert_non_null (strstr (e.text, "2024-03-01"));
    assert_int_equal (count_tree (elsewhere), 1);

    /* A symlink planted at the marker's name is not followed either. */
    assert_int_equal (unlink (pathf (p, sizeof (p), "%s/c1/days/2024-03-01",
                                     f->root)),
                      0);
    assert_int_equal (mkdir (p, 0755), 0);
    pathf (victim, sizeof (victim), "%s/victim", elsewhere);
    assert_int_equal (close (open (victim, O_CREAT | O_WRONLY, 0600)), 0);
    assert_int_equal (chmod (victim, 0600), 0);
    assert_int_equal (symlink (victim,
                               pathf (p, sizeof (p),
                                      "%s/c1/days/2024-03-01/1001@0@n001",
                                      f->root)),
                      0);
    assert_int_equal (tr_store_put (f->store, rec, &e), -1);
    assert_int_equal (errno, EEXIST);
    struct stat st;
    assert_int_equal (stat (victim, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0600);
    assert_int_equal (st.st_uid, 0);

    /* Once the plant is gone, a retry completes and still leaves a
     * single record.
     */
    assert_int_equal (unlink (p), 0);
    assert_int_equal (tr_store_put (f->store, rec, &e), 0);
    assert_int_equal (lstat (p, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (tr_store_foreach_job (f->store, "c1", "1001", collect, &s,
                                            NULL),
                      1);
    got = slurp (s.paths[0]);
    char *expect = tr_record_dumps (rec);
    assert_string_equal (got, expect);
    free (expect);
    free (got);
    seen_free (&s);
    json_decref (rec);
}

/* RLIMIT_FSIZE stands in for a full or over-quota shared file system. */
static int put_limited (tr_store_t *store, json_t *rec, tr_error_t *e)
{
    struct rlimit old;
    struct rlimit lim;
    void (*oldsig) (int);
    int rc;
    int saved;

    assert_int_equal (getrlimit (RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 64;
    oldsig = signal (SIGXFSZ, SIG_IGN);
    assert_int_equal (setrlimit (RLIMIT_FSIZE, &lim), 0);
    rc = tr_store_put (store, rec, e);
    saved = errno;
    assert_int_equal (setrlimit (RLIMIT_FSIZE, &old), 0);
    signal (SIGXFSZ, oldsig);
    errno = saved;
    return rc;
}

static void test_write_failure (void **state)
{
    struct fixture *f = *state;
    char dir[PATH_MAX];
    char p[PATH_MAX];
    tr_error_t e = { 0 };
    json_t *rec = make_rec ("c1", "1004", "0", "n001", 1000, MAR01_NOON_MS);
    char *v1;
    char *got;

    /* A new record: nothing is left in place. */
    assert_int_equal (put_limited (f->store, rec, &e), -1);
    assert_int_equal (errno, EFBIG);
    assert_non_null (strstr (e.text, "0.n001.json"));
    pathf (dir, sizeof (dir), "%s/c1/jobs/478/1004", f->root);
    assert_int_equal (count_files (dir), 0);

    /* An existing record keeps its old content. */
    assert_int_equal (tr_store_put (f->store, rec, NULL), 0);
    v1 = tr_record_dumps (rec);
    json_object_set_new (rec, "extra", json_string ("a longer second copy"));
    assert_int_equal (put_limited (f->store, rec, &e), -1);
    assert_int_equal (errno, EFBIG);
    got = slurp (pathf (p, sizeof (p), "%s/0.n001.json", dir));
    assert_string_equal (got, v1);
    free (got);
    free (v1);
    assert_int_equal (count_files (dir), 1);
    assert_int_equal (count_tmp_in (dir), 0);
    json_decref (rec);

    /* A store opened without options is read-only. */
    tr_store_t *ro = tr_store_open (f->root, NULL, NULL);
    assert_non_null (ro);
    rec = make_rec ("c1", "1005", "0", "n001", 1000, MAR01_NOON_MS);
    assert_int_equal (tr_store_put (ro, rec, NULL), -1);
    assert_int_equal (errno, EBADF);
    json_decref (rec);
    tr_store_destroy (ro);

    /* Opening a missing root without create fails. */
    assert_null (
        tr_store_open (pathf (p, sizeof (p), "%s/nope", f->dir), NULL, &e));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (e.text, "nope"));
}

static void test_foreach_skips_non_records (void **state)
{
    struct fixture *f = *state;
    char dir[PATH_MAX];
    char p[PATH_MAX];
    struct seen s = { 0 };
    const char *junk[] = { ".0.n009.json.tmp.123.abcdef", ".hidden.json",
                           "notes.txt", "json" };
    const char *expect_all[] = {
        "c1/jobs/478/1004/0.n001.json",
        "c1/jobs/478/1004/1.n001.json",
        "c1/jobs/60b/1005/0.n001.json",
        "c2/jobs/478/1004/0.n001.json",
    };

    put_ok (f->store,
            make_rec ("c1", "1004", "0", "n001", 1000, MAR01_NOON_MS));
    put_ok (f->store,
            make_rec ("c1", "1004", "1", "n001", 1000, MAR01_NOON_MS));
    put_ok (f->store,
            make_rec ("c1", "1005", "0", "n001", 1000, MAR01_NOON_MS));
    put_ok (f->store,
            make_rec ("c2", "1004", "0", "n001", 1000, MAR01_NOON_MS));
    pathf (dir, sizeof (dir), "%s/c1/jobs/478/1004", f->root);
    for (size_t i = 0; i < sizeof (junk) / sizeof (junk[0]); i++) {
        pathf (p, sizeof (p), "%s/%s", dir, junk[i]);
        assert_int_equal (close (open (p, O_CREAT | O_WRONLY, 0600)), 0);
    }
    /* A directory and a symlink named like records, and a FIFO. */
    assert_int_equal (mkdir (pathf (p, sizeof (p), "%s/d.json", dir), 0755), 0);
    assert_int_equal (symlink ("/etc/passwd",
                               pathf (p, sizeof (p), "%s/evil.json", dir)),
                      0);
    assert_int_equal (mkfifo (pathf (p, sizeof (p), "%s/fifo.json", dir), 0600),
                      0);
    /* Stray files and symlinks at every level of the walk. */
    assert_int_equal (close (open (pathf (p, sizeof (p), "%s/README", f->root),
                                   O_CREAT | O_WRONLY, 0600)),
                      0);
    assert_int_equal (symlink (dir, pathf (p, sizeof (p), "%s/c1/jobs/abc",
                                           f->root)),
                      0);
    assert_int_equal (symlink (f->root,
                               pathf (p, sizeof (p), "%s/c3", f->root)),
                      0);

    assert_int_equal (tr_store_foreach_job (f->store, "c1", "1004", collect, &s,
                                            NULL),
                      2);
    assert_seen (f, &s, expect_all, 2);
    seen_free (&s);

    assert_int_equal (tr_store_foreach_all (f->store, collect, &s, NULL), 4);
    assert_seen (f, &s, expect_all, 4);
    seen_free (&s);

    s.stop_at = 3;
    assert_int_equal (tr_store_foreach_all (f->store, collect, &s, NULL), 7);
    assert_int_equal (s.n, 3);
    seen_free (&s);
}

static void test_root_via_symlink (void **state)
{
    struct fixture *f = *state;
    char link[PATH_MAX];
    struct seen s = { 0 };

    /* Administrators may point the configured root at the real one. */
    pathf (link, sizeof (link), "%s/link", f->dir);
    assert_int_equal (symlink (f->root, link), 0);
    tr_store_t *st = tr_store_open (link, &job_opts, NULL);
    assert_non_null (st);
    assert_string_equal (tr_store_root (st), link);
    put_ok (st, make_rec ("c1", "42", "0", "n001", 1000, MAR01_NOON_MS));
    assert_int_equal (tr_store_foreach_all (st, collect, &s, NULL), 1);
    assert_int_equal (strncmp (s.paths[0], link, strlen (link)), 0);
    seen_free (&s);
    tr_store_destroy (st);
    assert_int_equal (tr_store_foreach_all (f->store, collect, &s, NULL), 1);
    seen_free (&s);
}

static void assert_victim (const char *path, nlink_t nlink)
{
    struct stat st;
    char *got;

    assert_int_equal (lstat (path, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_mode & 07777, 0600);
    assert_int_equal (st.st_uid, 0);
    assert_int_equal (st.st_gid, 0);
    assert_int_equal (st.st_nlink, nlink);
    got = slurp (path);
    assert_string_equal (got, "secret\n");
    free (got);
}

/* A store whose directories users may write (store.dir_mode 1777, an
 * administrator's choice): a user plants a symlink and a hard link to
 * root's file at the names of records to come, a hard link at a day
 * marker's name, and a symlink where a job directory will be made.
 * Every put replaces or refuses them: the victim keeps its content,
 * mode, owner, and gains no link; each record and marker is a file of
 * its own, owned by the job's user.
 */
static void test_user_plants (void **state)
{
    struct fixture *f = *state;
    char victim[PATH_MAX], secret[PATH_MAX], root[PATH_MAX];
    char rel[PATH_MAX], p[PATH_MAX], days[PATH_MAX];
    struct plant plants[] = {
        { false, victim, "", 0 }, /* job 1001, step 1's record */
        { true, victim, "", 0 },  /* step 2's record */
        { true, victim, "", 0 },  /* step 3's day marker */
        { false, secret, "", 0 }, /* job 1002's directory */
    };
    const size_t np = sizeof (plants) / sizeof (plants[0]);
    struct tr_store_opts o = job_opts;
    struct seen s = { 0 };
    struct stat vst, st;
    tr_error_t e = { 0 };
    tr_store_t *store;
    json_t *rec;
    char *dir;

    if (geteuid () != 0) {
        print_message ("# test_user_plants: not root, nothing planted\n");
        return;
    }
    assert_int_equal (chmod (f->dir, 0755), 0);
    pathf (victim, sizeof (victim), "%s/victim", f->dir);
    pathf (secret, sizeof (secret), "%s/secret", f->dir);
    pathf (root, sizeof (root), "%s/shared", f->dir);
    assert_int_equal (close (open (victim, O_CREAT | O_WRONLY, 0600)), 0);
    assert_int_equal (chmod (victim, 0600), 0);
    {
        FILE *fp = fopen (victim, "w");
        assert_non_null (fp);
        assert_true (fputs ("secret\n", fp) >= 0);
        assert_int_equal (fclose (fp), 0);
    }
    assert_int_equal (mkdir (secret, 0700), 0);
    o.dir_mode = 01777;
    o.gid = (gid_t)-1;
    assert_non_null (store = tr_store_open (root, &o, &e));

    /* step 0 makes the job's and the day's directories */
    put_ok (store, make_rec ("c1", "1001", "0", "n001", 1000, MAR01_NOON_MS));
    assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", "1001",
                                            "1", "n001"),
                      0);
    pathf (plants[0].name, PATH_MAX, "%s/%s", root, rel);
    assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", "1001",
                                            "2", "n001"),
                      0);
    pathf (plants[1].name, PATH_MAX, "%s/%s", root, rel);
    pathf (days, sizeof (days), "%s/c1/days/2024-03-01", root);
    pathf (plants[2].name, PATH_MAX, "%s/1001@3@n001", days);
    assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", "1002",
                                            "0", "n001"),
                      0);
    pathf (plants[3].name, PATH_MAX, "%s/%s", root, rel);
    dir = strrchr (plants[3].name, '/');
    *dir = '\0'; /* the job directory, not the record */
    /* its bucket, as another job of the bucket would have made it */
    pathf (p, sizeof (p), "%s", plants[3].name);
    *strrchr (p, '/') = '\0';
    assert_int_equal (mkdir (p, 0700), 0);
    assert_int_equal (chmod (p, 01777), 0);
    plant_as_nobody (plants, np);
    settle_hardlinks (plants, np);
    assert_int_equal (stat (victim, &vst), 0);
    assert_victim (victim, 3);

    /* each put succeeds and leaves a file of its own */
    for (int step = 1; step <= 3; step++) {
        char id[8];
        char *want, *got;

        snprintf (id, sizeof (id), "%d", step);
        rec = make_rec ("c1", "1001", id, "n001", 1000, MAR01_NOON_MS);
        assert_non_null (want = tr_record_dumps (rec));
        put_ok (store, rec);
        assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", "1001",
                                                id, "n001"),
                          0);
        pathf (p, sizeof (p), "%s/%s", root, rel);
        assert_int_equal (lstat (p, &st), 0);
        assert_true (S_ISREG (st.st_mode));
        assert_int_equal (st.st_nlink, 1);
        assert_true (st.st_ino != vst.st_ino);
        assert_int_equal (st.st_uid, 1000);
        assert_int_equal (st.st_mode & 07777, 0440);
        got = slurp (p);
        assert_string_equal (got, want);
        free (got);
        free (want);
        pathf (p, sizeof (p), "%s/1001@%d@n001", days, step);
        assert_int_equal (lstat (p, &st), 0);
        assert_true (S_ISREG (st.st_mode));
        assert_int_equal (st.st_nlink, 1);
        assert_true (st.st_ino != vst.st_ino);
        assert_int_equal (st.st_uid, 1000);
        assert_int_equal (st.st_size, 0);
    }
    /* the two hard links are gone, the victim otherwise untouched */
    assert_victim (victim, 1);

    /* a job directory that is the user's symlink: refused, nothing in
     * the target
     */
    rec = make_rec ("c1", "1002", "0", "n001", 1000, MAR01_NOON_MS);
    assert_int_equal (tr_store_put (store, rec, &e), -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);
    json_decref (rec);
    assert_int_equal (count_tree (secret), 1);
    assert_int_equal (stat (secret, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0700);
    assert_int_equal (tr_store_foreach_job (store, "c1", "1001", collect, &s,
                                            NULL),
                      4);
    seen_free (&s);
    tr_store_destroy (store);
    assert_victim (victim, 1);
}

/* As uid, can the file be opened with flags?  0 or the errno. */
static int open_as (uid_t uid, const char *path, int flags)
{
    pid_t pid = fork ();
    int status;

    assert_true (pid >= 0);
    if (pid == 0) {
        int fd;
        if (setgroups (0, NULL) < 0 || setgid (uid) < 0 || setuid (uid) < 0)
            _exit (100);
        fd = open (path, flags | O_NOFOLLOW);
        _exit (fd >= 0 ? 0 : errno > 99 ? 99 : errno);
    }
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    return WEXITSTATUS (status);
}

/* store.job_access: acl: the record stays its writer's, and the job's
 * user reads it through an ACL entry: they cannot write, chmod or
 * replace it, and nobody else reads it.
 */
static void test_put_acl_reader (void **state)
{
    struct fixture *f = *state;
    struct tr_store_opts o = job_opts;
    char p[PATH_MAX];
    char acl[64];
    struct stat st;
    tr_store_t *s2;
    ssize_t n;

    assert_int_equal (chmod (f->dir, 0755), 0); /* mkdtemp made it 0700 */
    o.job_access = TR_STORE_ACCESS_ACL;
    assert_non_null (s2 = tr_store_open (f->root, &o, NULL));
    put_ok (s2, make_rec ("c1", "12345", "batch", "n001", 4321,
                          MAR01_NOON_MS));
    pathf (p, sizeof (p), "%s/c1/jobs/0d8/12345/batch.n001.json", f->root);
    assert_int_equal (lstat (p, &st), 0);
    assert_int_equal (st.st_uid, 0);
    assert_int_equal (st.st_gid, 65534);
    assert_int_equal (st.st_mode & 07777, 0640);
    n = getxattr (p, "system.posix_acl_access", acl, sizeof (acl));
    if (n < 0 && (errno == EOPNOTSUPP || errno == ENOTSUP)) {
        /* no ACLs here: the user owns it, read-only */
        assert_int_equal (st.st_uid, 4321);
        assert_int_equal (st.st_mode & 0222, 0);
    }
    else {
        assert_int_equal (n, 44);
        assert_int_equal (open_as (4321, p, O_RDONLY), 0);
        assert_int_equal (open_as (4321, p, O_WRONLY), EACCES);
        assert_int_equal (open_as (4322, p, O_RDONLY), EACCES);
    }
    /* The marker is the writer's too. */
    pathf (p, sizeof (p), "%s/c1/days/2024-03-01/12345@batch@n001", f->root);
    assert_int_equal (lstat (p, &st), 0);
    assert_int_equal (st.st_uid, 0);
    /* A re-delivery keeps it so. */
    put_ok (s2, make_rec ("c1", "12345", "batch", "n001", 4321,
                          MAR01_NOON_MS));
    pathf (p, sizeof (p), "%s/c1/jobs/0d8/12345/batch.n001.json", f->root);
    assert_int_equal (open_as (4321, p, O_RDONLY), 0);
    tr_store_destroy (s2);

    /* none: only owner and group read it. */
    o.job_access = TR_STORE_ACCESS_NONE;
    assert_non_null (s2 = tr_store_open (f->root, &o, NULL));
    put_ok (s2, make_rec ("c1", "4242", "0", "n003", 4321, MAR01_NOON_MS));
    tr_store_destroy (s2);
    pathf (p, sizeof (p), "%s/c1/jobs/a65/4242/0.n003.json", f->root);
    assert_int_equal (lstat (p, &st), 0);
    assert_int_equal (st.st_uid, 0);
    assert_int_equal (getxattr (p, "system.posix_acl_access", acl,
                                sizeof (acl)),
                      -1);
    assert_int_equal (open_as (4321, p, O_RDONLY), EACCES);
}

/* tr_store_in_place: a record is in place only at its own path. */
static void test_in_place (void **state)
{
    json_t *rec = make_rec ("c1", "12345", "batch", "n001", 4321,
                            MAR01_NOON_MS);
    char why[256] = "";

    (void)state;
    assert_true (tr_store_in_place (rec, "c1/jobs/0d8/12345/batch.n001.json",
                                    why, sizeof (why)));
    assert_string_equal (why, "");
    assert_false (tr_store_in_place (rec, "c1/jobs/a65/4242/0.n003.json", why,
                                     sizeof (why)));
    assert_string_equal (why, "the record is job 12345's (step batch, node "
                              "n001, cluster c1), not in its place in the "
                              "store (copied or moved here)");
    assert_false (tr_store_in_place (rec, NULL, NULL, 0));
    json_decref (rec);
}

/* Remove one record as the forwarder does once it is in the store. */
static void unlink_rec (const struct fixture *f,
                        const char *job,
                        const char *step,
                        const char *node)
{
    char rel[PATH_MAX], p[PATH_MAX];

    assert_int_equal (tr_store_record_path (rel, sizeof (rel), "c1", job,
                                            step, node),
                      0);
    assert_int_equal (unlink (pathf (p, sizeof (p), "%s/%s", f->root, rel)),
                      0);
}

/* The directory of a job's records, root-relative, and its bucket's. */
static const char *job_dir (char *buf, size_t size, const char *job)
{
    char *slash;

    assert_int_equal (tr_store_record_path (buf, size, "c1", job, "0", "n"),
                      0);
    slash = strrchr (buf, '/');
    *slash = '\0';
    return buf;
}

static bool exists_rel (const struct fixture *f, const char *rel)
{
    char p[PATH_MAX];
    struct stat st;

    return lstat (pathf (p, sizeof (p), "%s/%s", f->root, rel), &st) == 0;
}

/* A spool after forwarding: markers of jobs with no record left and the
 * directories left empty go; what still holds a record, or a file moved
 * aside, stays.
 */
static void test_prune_spool (void **state)
{
    struct fixture *f = *state;
    char j1[PATH_MAX], j2[PATH_MAX], j3[PATH_MAX], j5[PATH_MAX];
    char b1[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
    struct seen s = { 0 };
    tr_error_t e = { 0 };
    int n;

    put_ok (f->store, make_rec ("c1", "1004", "0", "n001", 1000,
                                MAR01_NOON_MS));
    put_ok (f->store, make_rec ("c1", "1004", "1", "n001", 1000,
                                MAR01_NOON_MS));
    put_ok (f->store, make_rec ("c1", "2001", "0", "n001", 1000,
                                MAR01_NOON_MS + DAY_MS));
    put_ok (f->store, make_rec ("c1", "3001", "0", "n001", 1000,
                                MAR01_NOON_MS + DAY_MS));
    put_ok (f->store, make_rec ("c1", "5001", "0", "n001", 1000,
                                MAR01_NOON_MS + 2 * DAY_MS));
    job_dir (j1, sizeof (j1), "1004");
    job_dir (j2, sizeof (j2), "2001");
    job_dir (j3, sizeof (j3), "3001");
    job_dir (j5, sizeof (j5), "5001");
    snprintf (b1, sizeof (b1), "%s", j1);
    *strrchr (b1, '/') = '\0';
    /* 5001's record could not be parsed: moved aside, as tracerd does */
    pathf (p, sizeof (p), "%s/%s/0.n001.json", f->root, j5);
    pathf (q, sizeof (q), "%s/%s/0.n001.json.bad", f->root, j5);
    assert_int_equal (rename (p, q), 0);
    /* 1004 and 2001 forwarded as tracerd does: each record unlinked,
     * then its job's directory if that was its last; 3001 not yet
     */
    unlink_rec (f, "1004", "0", "n001");
    assert_int_equal (tr_store_prune_job (f->store, "c1", "1004", &e), 0);
    unlink_rec (f, "1004", "1", "n001");
    assert_int_equal (tr_store_prune_job (f->store, "c1", "1004", &e), 2);
    unlink_rec (f, "2001", "0", "n001");
    assert_int_equal (tr_store_prune_job (f->store, "c1", "2001", &e), 2);
    assert_false (exists_rel (f, j1));
    assert_false (exists_rel (f, b1));
    assert_false (exists_rel (f, j2));
    assert_true (exists_rel (f, "c1/days/2024-03-01/1004@0@n001"));
    /* 5001's directory keeps its moved-aside file */
    assert_int_equal (tr_store_prune_job (f->store, "c1", "5001", &e), 0);

    /* then the round's prune, with tracerd's grace: the markers of jobs
     * with no record left and the day directories that emptied go now
     */
    n = tr_store_prune (f->store, TR_STORE_PRUNE_GRACE, &e);
    if (n < 0)
        fail_msg ("prune: %s", e.text);
    /* 4 markers, days 03-01 and 03-03 */
    assert_int_equal (n, 6);
    assert_false (exists_rel (f, "c1/days/2024-03-01"));
    assert_false (exists_rel (f, "c1/days/2024-03-02/2001@0@n001"));
    assert_false (exists_rel (f, "c1/days/2024-03-03/5001@0@n001"));
    assert_false (exists_rel (f, "c1/days/2024-03-03"));
    assert_true (exists_rel (f, "c1/days/2024-03-02/3001@0@n001"));
    assert_true (exists_rel (f, j3));
    assert_true (exists_rel (f, j5));
    assert_true (exists_rel (f, "c1/jobs"));
    assert_true (exists_rel (f, "c1/days"));
    assert_int_equal (tr_store_prune (f->store, 0, &e), 0);
    /* left: 3001's record and marker, 5001's moved-aside file */
    assert_int_equal (count_files (f->root), 3);
    assert_int_equal (tr_store_foreach_all (f->store, collect, &s, NULL), 1);
    seen_free (&s);
    /* nothing more to do; a new put makes its directories again */
    assert_int_equal (tr_store_prune (f->store, 0, NULL), 0);
    put_ok (f->store, make_rec ("c1", "1004", "0", "n001", 1000,
                                MAR01_NOON_MS));
    assert_true (exists_rel (f, "c1/days/2024-03-01/1004@0@n001"));
    assert_int_equal (tr_store_foreach_job (f->store, "c1", "1004", collect,
                                            &s, NULL),
                      1);
    seen_free (&s);
    assert_int_equal (tr_store_prune (f->store, 0, NULL), 0);
}

/* Prune follows no link: a symlink planted as a job, bucket or day
 * directory is neither followed nor removed, nor what it points to.
 */
static void test_prune_no_follow (void **state)
{
    struct fixture *f = *state;
    char victim[PATH_MAX], p[PATH_MAX], q[PATH_MAX], j1[PATH_MAX];
    struct stat st;

    pathf (victim, sizeof (victim), "%s/victim", f->dir);
    assert_int_equal (mkdir (victim, 0755), 0);
    put_ok (f->store, make_rec ("c1", "1004", "0", "n001", 1000,
                                MAR01_NOON_MS));
    job_dir (j1, sizeof (j1), "1004");
    /* an empty directory and a marker-named file outside, linked in */
    assert_int_equal (mkdir (pathf (p, sizeof (p), "%s/empty", victim),
                             0755),
                      0);
    assert_int_equal (close (creat (pathf (p, sizeof (p), "%s/9999", victim),
                                    0600)),
                      0);
    assert_int_equal (symlink (pathf (p, sizeof (p), "%s/empty", victim),
                               pathf (q, sizeof (q), "%s/%s/../9999",
                                      f->root, j1)),
                      0);
    assert_int_equal (symlink (victim, pathf (q, sizeof (q),
                                              "%s/c1/days/2024-03-05",
                                              f->root)),
                      0);
    assert_int_equal (symlink (pathf (p, sizeof (p), "%s/empty", victim),
                               pathf (q, sizeof (q), "%s/c1/jobs/abc",
                                      f->root)),
                      0);
    assert_true (tr_store_prune (f->store, TR_STORE_PRUNE_GRACE, NULL) >= 0);
    assert_true (tr_store_prune (f->store, 0, NULL) >= 0);
    assert_int_equal (stat (pathf (p, sizeof (p), "%s/empty", victim), &st),
                      0);
    assert_int_equal (stat (pathf (p, sizeof (p), "%s/9999", victim), &st),
                      0);
    assert_int_equal (lstat (pathf (p, sizeof (p), "%s/c1/days/2024-03-05",
                                    f->root),
                             &st),
                      0);
    assert_true (S_ISLNK (st.st_mode));
    assert_int_equal (lstat (pathf (p, sizeof (p), "%s/c1/jobs/abc", f->root),
                             &st),
                      0);
    assert_true (S_ISLNK (st.st_mode));
    /* the record still in the spool keeps its directory and marker */
    assert_true (exists_rel (f, j1));
    assert_true (exists_rel (f, "c1/days/2024-03-01/1004@0@n001"));
}

/* Set a directory below the store's root an hour back, as one that a
 * forwarder emptied long ago.
 */
static void age_rel (const struct fixture *f, const char *rel)
{
    char p[PATH_MAX];
    struct timespec t[2] = { { 0, UTIME_OMIT }, { time (NULL) - 3600, 0 } };

    if (utimensat (AT_FDCWD, pathf (p, sizeof (p), "%s/%s", f->root, rel), t,
                   AT_SYMLINK_NOFOLLOW)
            < 0
        && errno != ENOENT)
        fail_msg ("utimensat %s: %s", p, strerror (errno));
}

/* The grace: a directory that changed within it stays, an older empty
 * one goes.
 */
static void test_prune_grace (void **state)
{
    struct fixture *f = *state;
    char j1[PATH_MAX], b1[PATH_MAX];

    put_ok (f->store, make_rec ("c1", "1004", "0", "n001", 1000,
                                MAR01_NOON_MS));
    unlink_rec (f, "1004", "0", "n001");
    job_dir (j1, sizeof (j1), "1004");
    snprintf (b1, sizeof (b1), "%s", j1);
    *strrchr (b1, '/') = '\0';
    /* the marker goes, and the day directory that emptied; the job's
     * directory, emptied by somebody else just now, stays
     */
    assert_int_equal (tr_store_prune (f->store, TR_STORE_PRUNE_GRACE, NULL),
                      2);
    assert_false (exists_rel (f, "c1/days/2024-03-01"));
    assert_true (exists_rel (f, j1));
    /* so does an empty day directory this pass did not empty */
    assert_int_equal (mkdir (pathf ((char[PATH_MAX]){ 0 }, PATH_MAX,
                                    "%s/c1/days/2024-03-09", f->root),
                             0755),
                      0);
    assert_int_equal (tr_store_prune (f->store, TR_STORE_PRUNE_GRACE, NULL),
                      0);
    assert_true (exists_rel (f, "c1/days/2024-03-09"));
    /* an hour old, they go; the job's going changes its bucket */
    age_rel (f, j1);
    age_rel (f, "c1/days/2024-03-09");
    assert_int_equal (tr_store_prune (f->store, TR_STORE_PRUNE_GRACE, NULL),
                      2);
    assert_false (exists_rel (f, j1));
    assert_false (exists_rel (f, "c1/days/2024-03-09"));
    assert_true (exists_rel (f, b1));
    age_rel (f, b1);
    assert_int_equal (tr_store_prune (f->store, TR_STORE_PRUNE_GRACE, NULL),
                      1);
    assert_false (exists_rel (f, b1));
    assert_int_equal (tr_store_prune (f->store, 0, NULL), 0);
}

/* The forwarder of test_prune_races_put: take each record out of the
 * spool, then its job's directory if that was its last.
 */
static int forward_cb (const char *path, void *arg)
{
    struct fwd_state {
        tr_store_t *store;
        long n;
    } *fs = arg;
    char job[NAME_MAX + 1];
    const char *end = strrchr (path, '/'), *start = end;

    if (unlink (path) < 0)
        return 0;
    fs->n++;
    while (start > path && start[-1] != '/')
        start--;
    snprintf (job, sizeof (job), "%.*s", (int)(end - start), start);
    (void)tr_store_prune_job (fs->store, "c1", job, NULL);
    return 0;
}

/* Puts in one process (tracerd) while another forwards and prunes as
 * tracerd's forwarder does, back to back: no put fails, every record is
 * forwarded once, and nothing is left behind.
 */
static void test_prune_races_put (void **state)
{
    struct fixture *f = *state;
    struct {
        tr_store_t *store;
        long n;
    } fs = { f->store, 0 };
    int stop[2], count[2];
    int status;
    long forwarded = -1;
    pid_t pid;

    assert_int_equal (pipe (stop), 0);
    assert_int_equal (pipe (count), 0);
    assert_true ((pid = fork ()) >= 0);
    if (pid == 0) {
        char c;
        bool last = false;

        /* never outlive the test, whatever stops it */
        (void)prctl (PR_SET_PDEATHSIG, SIGKILL);
        if (getppid () == 1)
            _exit (1);
        close (stop[1]);
        (void)fcntl (stop[0], F_SETFL, O_NONBLOCK);
        for (;;) {
            /* after the put of the last record: one more round */
            last = last || read (stop[0], &c, 1) == 0;
            (void)tr_store_foreach_all (f->store, forward_cb, &fs, NULL);
            (void)tr_store_prune (f->store, TR_STORE_PRUNE_GRACE, NULL);
            if (last)
                break;
        }
        _exit (write (count[1], &fs.n, sizeof (fs.n)) == sizeof (fs.n) ? 0
                                                                      : 1);
    }
    close (stop[0]);
    close (count[1]);
    for (int i = 0; i < 2000; i++) {
        char job[16], step[16];
        tr_error_t e = { 0 };
        json_t *rec;

        snprintf (job, sizeof (job), "%d", 7000 + i % 40);
        snprintf (step, sizeof (step), "%d", i);
        rec = make_rec ("c1", job, step, "n001", 1000, MAR01_NOON_MS);
        if (tr_store_put (f->store, rec, &e) != 0) {
            kill (pid, SIGKILL);
            waitpid (pid, &status, 0);
            fail_msg ("put %d while forwarding: %s", i, e.text);
        }
        json_decref (rec);
    }
    close (stop[1]);
    assert_int_equal (read (count[0], &forwarded, sizeof (forwarded)),
                      sizeof (forwarded));
    close (count[0]);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    assert_int_equal (forwarded, 2000);
    /* the last round left nothing below the cluster's directories, with
     * the grace; none would go without it
     */
    assert_int_equal (count_tree (pathf ((char[PATH_MAX]){ 0 }, PATH_MAX,
                                         "%s/c1", f->root)),
                      3);
    assert_int_equal (tr_store_prune (f->store, 0, NULL), 0);
}

/* tr_store_prune_job: only an empty directory, never through a link,
 * never on an unsafe id or a read-only store.
 */
static void test_prune_job (void **state)
{
    struct fixture *f = *state;
    tr_store_t *ro = tr_store_open (f->root, NULL, NULL);
    char j1[PATH_MAX], p[PATH_MAX];
    tr_error_t e = { 0 };

    assert_non_null (ro);
    put_ok (f->store, make_rec ("c1", "1004", "0", "n001", 1000,
                                MAR01_NOON_MS));
    job_dir (j1, sizeof (j1), "1004");
    assert_int_equal (tr_store_prune_job (f->store, "c1", "1004", &e), 0);
    assert_true (exists_rel (f, j1));
    assert_int_equal (tr_store_prune_job (f->store, "c1", "9999", &e), 0);
    assert_int_equal (tr_store_prune_job (f->store, "c1", "..", &e), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_store_prune_job (f->store, "../c1", "1004", &e), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_store_prune_job (ro, "c1", "1004", &e), -1);
    assert_int_equal (errno, EBADF);
    /* a job directory replaced by a link to an empty one: left alone */
    unlink_rec (f, "1004", "0", "n001");
    assert_int_equal (rmdir (pathf (p, sizeof (p), "%s/%s", f->root, j1)),
                      0);
    assert_int_equal (mkdir (pathf (p, sizeof (p), "%s/empty", f->dir),
                             0755),
                      0);
    assert_int_equal (symlink (p, pathf ((char[PATH_MAX]){ 0 }, PATH_MAX,
                                         "%s/%s", f->root, j1)),
                      0);
    assert_int_equal (tr_store_prune_job (f->store, "c1", "1004", &e), 0);
    assert_true (exists_rel (f, j1));
    assert_int_equal (access (p, F_OK), 0);
    tr_store_destroy (ro);
}

static void test_prune_read_only (void **state)
{
    struct fixture *f = *state;
    tr_store_t *ro = tr_store_open (f->root, NULL, NULL);

    assert_non_null (ro);
    assert_int_equal (tr_store_prune (ro, 0, NULL), -1);
    assert_int_equal (errno, EBADF);
    tr_store_destroy (ro);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_relpath_layout),
        cmocka_unit_test_setup_teardown (test_put_layout_owner_mode, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_put_acl_reader, setup,
                                         teardown),
        cmocka_unit_test (test_in_place),
        cmocka_unit_test_setup_teardown (test_foreach_job, setup, teardown),
        cmocka_unit_test_setup_teardown (test_reput_no_duplicate, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_foreach_window, setup, teardown),
        cmocka_unit_test_setup_teardown (test_markers_per_record, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_unsafe_ids, setup, teardown),
        cmocka_unit_test_setup_teardown (test_planted_symlinks, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_write_failure, setup, teardown),
        cmocka_unit_test_setup_teardown (test_foreach_skips_non_records, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_root_via_symlink, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_user_plants, setup, teardown),
        cmocka_unit_test_setup_teardown (test_prune_spool, setup, teardown),
        cmocka_unit_test_setup_teardown (test_prune_no_follow, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_prune_grace, setup, teardown),
        cmocka_unit_test_setup_teardown (test_prune_races_put, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_prune_job, setup, teardown),
        cmocka_unit_test_setup_teardown (test_prune_read_only, setup,
                                         teardown),
    };

    /* Records are chowned to the job's uid; that needs root. */
    if (geteuid () != 0) {
        printf ("1..0 # SKIP needs root (chown)\n");
        return 0;
    }
    return cmocka_run_group_tests (tests, NULL, NULL);
}
