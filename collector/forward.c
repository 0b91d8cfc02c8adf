/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's spool forwarder: final records are signed and written to
 * the node-local spool (or wait in memory and <state_dir>/pending while
 * it refuses them), and a child process copies the spool, the live
 * summaries and the drop counters to the shared store, with back-off.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/record/livesum.h"
#include "libtracer/record/openmetrics.h"
#include "libtracer/record/record.h"
#include "libtracer/record/sign.h"
#include "libtracer/record/store.h"
#include "libtracer/record/when.h"
#include "libtracer/util/path.h"

#include "tracerd.h"

/* The forwarding rounds: when the next is due, and how they back off
 * while the store fails.
 */
static tr_store_t *store; /* the forwarder's, during its round */
static double next_forward;
static double forward_backoff;
static bool forward_failing;

int tracerd_forward_open (void)
{
    struct tr_store_opts sp = { .file_mode = 0600,
                                .dir_mode = 0700,
                                .owner_is_job = false,
                                .owner_uid = (uid_t)-1,
                                .gid = (gid_t)-1,
                                .create = true };
    tr_error_t error;

    if (!(d.spool = tr_store_open (d.conf->spool_path, &sp, &error))) {
        tracerd_log (LOG_ERR, "spool %s: %s", d.conf->spool_path,
                     tr_error_str (&error));
        return -1;
    }
    return 0;
}

/* Records that could not be delivered at all, since counting began on
 * this node (kept in <state_dir>/pending/drops, so across restarts but
 * not reboots): lost, dropped past spool.pending_max (or left unsaved
 * when tracerd stopped); moved_aside, spool files that were not a
 * readable record, kept as "*.bad" beside where they were.  The
 * forwarder copies them to the store (tr_store_put_node_status), where
 * tracer-report's listing shows them.
 */
static struct {
    uint64_t lost;
    uint64_t moved_aside;
    long long since; /* unix time of the first drop counted */
} drops;

/* Spool files the forwarder moved aside this round, told to tracerd
 * through its pipe when it ends.
 */
static uint64_t fwd_moved;

static void save_drops (void);

/* Forward every spooled record to the store.  A record that cannot be
 * parsed is moved aside (never deleted), reported and counted.
 */
static int forward_one (const char *path, void *arg)
{
    tr_error_t error;
    json_t *rec;
    int *failed = arg;

    if (!(rec = tr_record_load (path, &error))) {
        char bad[4200];

        /* forwarded meanwhile by a forwarder of an earlier tracerd */
        if (errno == ENOENT)
            return 0;
        snprintf (bad, sizeof (bad), "%s.bad", path);
        tracerd_log (LOG_ERR, "spool: %s; kept as %s", tr_error_str (&error),
                     bad);
        if (rename (path, bad) < 0)
            tracerd_log (LOG_ERR, "rename %s: %s", path, strerror (errno));
        else
            fwd_moved++;
        return 0;
    }
    if (tr_store_put (store, rec, &error) < 0) {
        if (!forward_failing)
            tracerd_log (LOG_ERR, "store: %s: %s; will retry",
                         tr_store_root (store), tr_error_str (&error));
        (*failed)++;
        json_decref (rec);
        return 1; /* stop: the store is failing, back off */
    }
    if (unlink (path) < 0 && errno != ENOENT)
        tracerd_log (LOG_WARNING, "unlink %s: %s", path, strerror (errno));
    else {
        tracerd_log (LOG_DEBUG, "forwarded %s", path);
        /* its job's directory goes now if that was its last record;
         * tr_store_prune's grace leaves one that has just changed
         */
        if (tr_store_prune_job (d.spool,
                                tr_record_get_str (rec, "identity", "cluster"),
                                tr_record_get_str (rec, "identity", "job_id"),
                                &error)
            < 0)
            tracerd_log (LOG_WARNING, "spool: cleaning: %s",
                         tr_error_str (&error));
    }
    json_decref (rec);
    return 0;
}

/* This node's name in the store's status files: the host name up to
 * its first '.'.
 */
static int status_node (char *buf, size_t size)
{
    if (gethostname (buf, size) < 0)
        return -1;
    buf[size - 1] = '\0';
    buf[strcspn (buf, ".")] = '\0';
    return tr_record_id_is_safe (buf) ? 0 : -1;
}

/* In the forwarder: the drop counters to the store, for tracer-report. */
static void forward_status (void)
{
    char node[256];
    tr_error_t error;
    json_t *st;

    if (status_node (node, sizeof (node)) < 0)
        return;
    st = json_pack ("{s:I s:I s:I s:I}", "records_lost", (json_int_t)drops.lost,
                    "spool_moved_aside",
                    (json_int_t)(drops.moved_aside + fwd_moved), "since",
                    (json_int_t)(drops.since ? drops.since : time (NULL)),
                    "updated", (json_int_t)time (NULL));
    if (!st
        || tr_store_put_node_status (store, d.conf->cluster_name, node, st,
                                     &error)
               < 0)
        tracerd_log (LOG_WARNING, "store: node status: %s",
                     st ? tr_error_str (&error) : "out of memory");
    json_decref (st);
}

/* Live summaries of the running steps for the store (livesum.h): made
 * by tracerd every store.live_interval (tracerd_forward_live_pass),
 * written by the forwarder, which has them from the fork, after the
 * round's records.
 * The places (cluster and node) that had files are remembered, so that
 * a user's file goes when their last step there ends.
 */
#define LIVE_PLACES_MAX 256
#define LIVE_PLACE_KEEP 3 /* passes a place is pruned after its last file */

static struct {
    double next; /* monotonic time of the next pass */
    struct tr_livesum_file *files;
    size_t nfiles;
    struct {
        char cluster[256];
        char node[256];
        int empty; /* passes since it last had a file */
    } places[LIVE_PLACES_MAX];
    size_t nplaces;
} live;

/* In the forwarder: the last pass's files into the store, and the files
 * of users with nothing running any more out of it.
 */
static void forward_live (void)
{
    uid_t keep[LIVE_PLACES_MAX];
    tr_error_t error;

    for (size_t i = 0; i < live.nfiles; i++) {
        struct tr_livesum_file *f = &live.files[i];

        /* signed as records are: on a store without ACLs its user owns
         * the file, and only the signature says tracerd wrote it
         */
        if (d.conf->sign_enabled
            && tr_livesum_sign (&f->text, d.conf->munge_socket, &error) < 0)
            tracerd_log (LOG_WARNING,
                         "store: live summary of uid %u on %s left "
                         "unsigned: %s",
                         (unsigned)f->uid, f->node, tr_error_str (&error));
        if (tr_store_put_live (store, f->cluster, f->node, f->uid, f->text,
                               &error)
            < 0)
            tracerd_log (LOG_WARNING, "store: live summary of uid %u on %s: %s",
                         (unsigned)f->uid, f->node, tr_error_str (&error));
    }
    for (size_t p = 0; p < live.nplaces; p++) {
        size_t n = 0;

        for (size_t i = 0; i < live.nfiles && n < LIVE_PLACES_MAX; i++)
            if (!strcmp (live.files[i].cluster, live.places[p].cluster)
                && !strcmp (live.files[i].node, live.places[p].node))
                keep[n++] = live.files[i].uid;
        if (tr_store_prune_live (store, live.places[p].cluster,
                                 live.places[p].node, keep, n, &error)
            < 0)
            tracerd_log (LOG_WARNING, "store: live summaries: %s",
                         tr_error_str (&error));
    }
}

/* One forwarding round, in the forwarder: 0 when the spool was drained,
 * 1 when the store failed.
 */
static int forward_all (void)
{
    struct tr_store_opts so = tr_store_opts_from_conf (d.conf);
    tr_error_t error;
    int failed = 0;

    /* Open the store afresh each time: it may have been remounted,
     * replaced or repaired since the last attempt.
     */
    if (!(store = tr_store_open (d.conf->store_path, &so, &error))) {
        if (!forward_failing)
            tracerd_log (LOG_ERR,
                         "store %s unavailable: %s; records stay in "
                         "the spool, will retry",
                         d.conf->store_path, tr_error_str (&error));
        return 1;
    }
    if (tr_store_foreach_all (d.spool, forward_one, &failed, &error) < 0
        && errno != ENOENT) {
        tracerd_log (LOG_ERR, "spool: %s", tr_error_str (&error));
        failed = 1;
    }
    /* after the records, so that a step's record is in the store
     * before its live summary goes
     */
    forward_live ();
    /* Forwarded records leave their job directories and day markers
     * behind: without this the spool grows by the day and every round
     * walks all of it.
     */
    if (tr_store_prune (d.spool, TR_STORE_PRUNE_GRACE, &error) < 0)
        tracerd_log (LOG_WARNING, "spool: cleaning: %s", tr_error_str (&error));
    if (drops.lost + drops.moved_aside + fwd_moved > 0)
        forward_status ();
    tr_store_destroy (store);
    store = NULL;
    return failed ? 1 : 0;
}

/* Forwarding runs in a child process.  A store that hangs (a hard NFS
 * mount whose server is gone, a frozen filesystem) holds its writer in
 * the kernel, where no timeout reaches: the forwarder waits there, and
 * tracerd goes on answering, sampling and spooling.  The child holds
 * the write end of a pipe, which hangs up when it exits.
 */
#define FORWARD_SLOW_S 10.0

static struct {
    pid_t pid; /* the forwarder, or -1 */
    int fd;    /* read end of its pipe, or -1 */
    double started;
    bool slow;    /* said that it has not finished */
    bool pending; /* records may wait in the spool */
} fwd = { .pid = -1, .fd = -1, .pending = true };

static void forward_start (double now)
{
    int p[2];
    pid_t pid;

    if (pipe2 (p, O_CLOEXEC) < 0) {
        tracerd_log (LOG_ERR, "forwarding: pipe: %s; will retry",
                     strerror (errno));
        next_forward = now + d.conf->spool_retry_s;
        return;
    }
    fflush (NULL);
    if ((pid = fork ()) < 0) {
        tracerd_log (LOG_ERR, "forwarding: fork: %s; will retry",
                     strerror (errno));
        close (p[0]);
        close (p[1]);
        next_forward = now + d.conf->spool_retry_s;
        return;
    }
    if (pid == 0) {
        int rc;

        /* a forwarder left hanging must not keep the socket or the
         * taskstats listener of a stopped tracerd
         */
        close (p[0]);
        close (d.listen_fd);
        if (d.taskstats)
            close (tr_taskstats_fd (d.taskstats));
        fwd_moved = 0;
        rc = forward_all ();
        /* what tracerd counts: the pipe holds it until tracerd reaps */
        if (fwd_moved > 0)
            (void)!write (p[1], &fwd_moved, sizeof (fwd_moved));
        _exit (rc);
    }
    close (p[1]);
    fwd.pid = pid;
    fwd.fd = p[0];
    fwd.started = now;
    fwd.slow = false;
    fwd.pending = false;
}

/* The forwarder has exited (its pipe hung up): its outcome sets when
 * to try next.
 */
void tracerd_forward_reap (double now)
{
    int status = 0;
    uint64_t moved = 0;
    bool failed;

    if (read (fwd.fd, &moved, sizeof (moved)) == (ssize_t)sizeof (moved)
        && moved > 0) {
        drops.moved_aside += moved;
        if (drops.since == 0)
            drops.since = (long long)time (NULL);
        save_drops ();
    }
    close (fwd.fd);
    fwd.fd = -1;
    while (waitpid (fwd.pid, &status, 0) < 0 && errno == EINTR)
        ;
    fwd.pid = -1;
    failed = !WIFEXITED (status) || WEXITSTATUS (status) != 0;
    if (!WIFEXITED (status))
        tracerd_log (LOG_ERR, "forwarder ended by signal %d; will retry",
                     WIFSIGNALED (status) ? WTERMSIG (status) : 0);
    if (fwd.slow)
        tracerd_log (LOG_NOTICE, "store %s answered again after %.0f s",
                     d.conf->store_path, now - fwd.started);
    if (failed) {
        forward_backoff = forward_backoff > 0 ? fmin (forward_backoff * 2,
                                                      d.conf->spool_retry_max_s)
                                              : d.conf->spool_retry_s;
        next_forward = now + forward_backoff;
        forward_failing = true;
        fwd.pending = true;
    }
    else {
        if (forward_failing)
            tracerd_log (LOG_NOTICE,
                         "store %s is writable again; spool drained",
                         d.conf->store_path);
        forward_failing = false;
        forward_backoff = 0;
        next_forward = now + d.conf->spool_retry_s;
    }
}

void tracerd_forward_spool (double now)
{
    if (fwd.pid > 0) {
        if (!fwd.slow && now - fwd.started >= FORWARD_SLOW_S) {
            tracerd_log (LOG_WARNING,
                         "store %s: forwarding has not finished in "
                         "%.0f s (the store hangs?); records stay in the "
                         "spool, "
                         "sampling goes on",
                         d.conf->store_path, now - fwd.started);
            fwd.slow = true;
        }
        return;
    }
    if (fwd.pending && now >= next_forward)
        forward_start (now);
}

/* Records the spool refused (full, read-only, ...).  Each is kept in
 * memory and, where the state dir allows, in <state_dir>/pending as
 * "<its spool path, '/' made '@'>" (a re-delivery replaces its file), is
 * retried with the forwarder's back-off, and is removed from both once
 * spooled.  A tracerd that starts spools the files it finds there
 * (respool_pending), so a restart loses none.  When the state dir is
 * full too, a reserve file there (PENDING_RESERVE bytes, made while
 * there is room) is given up to make room for them, and made again once
 * nothing waits.  At most spool.pending_max wait: past that a record is
 * dropped and counted (drops.lost).
 */
#define PENDING_RESERVE (1 << 20)

struct pending {
    char key[600];
    char name[600]; /* its file in the pending dir */
    json_t *rec;
    bool saved; /* its file is written */
};

static struct {
    struct pending *v;
    size_t n, cap;
    double next; /* monotonic time of the next try */
    double backoff;
    int dirfd;     /* <state_dir>/pending, or -1 */
    int reservefd; /* its "reserve" file, or -1 */
    bool reserve_used;
} pend = { .dirfd = -1, .reservefd = -1 };

static void save_drops (void)
{
    char text[160];
    tr_error_t error;
    int n;

    if (pend.dirfd < 0)
        return;
    n = snprintf (text, sizeof (text),
                  "{\"records_lost\":%llu,\"spool_moved_aside\":%llu,"
                  "\"since\":%lld}\n",
                  (unsigned long long)drops.lost,
                  (unsigned long long)drops.moved_aside, drops.since);
    if (tr_path_replace (pend.dirfd, "drops", text, (size_t)n, 0600, (uid_t)-1,
                         (gid_t)-1, &error)
        < 0)
        tracerd_log (LOG_WARNING, "state: drop counters: %s",
                     tr_error_str (&error));
}

static void load_drops (void)
{
    tr_error_t error;
    size_t n;
    char *text;
    json_t *o;

    if (pend.dirfd < 0
        || !(text = tr_path_read_file (pend.dirfd, "drops", 4096, &n, &error)))
        return;
    o = json_loadb (text, n, 0, NULL);
    free (text);
    drops.lost = (uint64_t)json_integer_value (json_object_get (o, "records_"
                                                                   "lost"));
    drops.moved_aside =
        (uint64_t)json_integer_value (json_object_get (o, "spool_moved_aside"));
    drops.since = (long long)json_integer_value (json_object_get (o, "since"));
    json_decref (o);
}

/* A record dropped for good: counted, kept for the next start, and
 * passed to the store by the next forwarding round.
 */
static void count_lost (const char *key, const char *why)
{
    drops.lost++;
    if (drops.since == 0)
        drops.since = (long long)time (NULL);
    tracerd_log (LOG_ERR, "step %s: record lost: %s (%llu lost since %lld)",
                 key, why, (unsigned long long)drops.lost, drops.since);
    save_drops ();
    fwd.pending = true;
    next_forward = 0;
}

/* The reserve: room kept in the state dir for pending records. */
static void make_reserve (void)
{
    if (pend.dirfd < 0)
        return;
    if (pend.reservefd < 0)
        pend.reservefd =
            openat (pend.dirfd, "reserve",
                    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (pend.reservefd >= 0
        && posix_fallocate (pend.reservefd, 0, PENDING_RESERVE) == 0)
        pend.reserve_used = false;
}

static int pending_save (struct pending *p)
{
    tr_error_t error;
    char *text;
    int rc;

    if (pend.dirfd < 0)
        return -1;
    if (!(text = tr_record_dumps (p->rec)))
        return -1;
    rc = tr_path_replace (pend.dirfd, p->name, text, strlen (text), 0600,
                          (uid_t)-1, (gid_t)-1, &error);
    if (rc < 0 && (errno == ENOSPC || errno == EDQUOT) && pend.reservefd >= 0
        && !pend.reserve_used && ftruncate (pend.reservefd, 0) == 0) {
        pend.reserve_used = true;
        tracerd_log (LOG_WARNING,
                     "state dir %s full: its reserve is given to "
                     "records waiting for the spool",
                     d.conf->state_dir);
        rc = tr_path_replace (pend.dirfd, p->name, text, strlen (text), 0600,
                              (uid_t)-1, (gid_t)-1, &error);
    }
    free (text);
    if (rc < 0) {
        tracerd_log (LOG_WARNING,
                     "step %s: record kept in memory only (a "
                     "restart now would lose it): %s",
                     p->key, tr_error_str (&error));
        return -1;
    }
    p->saved = true;
    return 0;
}

/* Keep a record the spool refused; takes the reference.  saved: it is
 * in the pending dir already (found there at start).
 */
static void pending_add (const char *key,
                         json_t *rec,
                         const char *name,
                         bool saved)
{
    struct pending *p = NULL;
    char *rel = NULL;

    if (!name) {
        if (!(rel = tr_store_relpath (rec))) {
            count_lost (key, "its identity is not path-safe");
            json_decref (rec);
            return;
        }
        for (char *c = rel; *c; c++)
            if (*c == '/')
                *c = '@';
        name = rel;
    }
    for (size_t i = 0; i < pend.n; i++)
        if (!strcmp (pend.v[i].name, name))
            p = &pend.v[i]; /* a re-delivery replaces it */
    if (!p && pend.n >= (size_t)d.conf->spool_pending_max) {
        char why[160];
        snprintf (why, sizeof (why),
                  "%zu records already wait for the "
                  "spool (spool.pending_max)",
                  pend.n);
        count_lost (key, why);
        json_decref (rec);
        free (rel);
        return;
    }
    if (!p && pend.n == pend.cap) {
        size_t cap = pend.cap ? pend.cap * 2 : 16;
        struct pending *v = realloc (pend.v, cap * sizeof (*v));
        if (!v) {
            count_lost (key, "out of memory");
            json_decref (rec);
            free (rel);
            return;
        }
        pend.v = v;
        pend.cap = cap;
    }
    if (!p) {
        p = &pend.v[pend.n++];
        memset (p, 0, sizeof (*p));
    }
    else
        json_decref (p->rec);
    snprintf (p->key, sizeof (p->key), "%s", key);
    snprintf (p->name, sizeof (p->name), "%s", name);
    p->rec = rec;
    p->saved = saved;
    free (rel);
    if (!p->saved)
        (void)pending_save (p);
    if (pend.backoff == 0) {
        pend.backoff = d.conf->spool_retry_s;
        pend.next = tr_when_monotonic () + pend.backoff;
    }
}

/* Try the waiting records again, oldest first, while the spool takes
 * them.
 */
void tracerd_forward_retry (double now)
{
    size_t done = 0;
    tr_error_t error;

    if (pend.n == 0 || now < pend.next)
        return;
    for (; done < pend.n; done++) {
        struct pending *p = &pend.v[done];
        if (tr_store_put (d.spool, p->rec, &error) < 0) {
            tracerd_log (LOG_DEBUG, "spool still refuses records: %s",
                         tr_error_str (&error));
            break;
        }
        tracerd_log (LOG_INFO,
                     "step %s: record written (it waited for the "
                     "spool)",
                     p->key);
        if (pend.dirfd >= 0 && unlinkat (pend.dirfd, p->name, 0) < 0
            && errno != ENOENT)
            tracerd_log (LOG_WARNING, "state: removing pending %s: %s", p->name,
                         strerror (errno));
        json_decref (p->rec);
        fwd.pending = true;
        next_forward = 0;
    }
    memmove (pend.v, pend.v + done, (pend.n - done) * sizeof (*pend.v));
    pend.n -= done;
    /* what could not be saved before may be now */
    for (size_t i = 0; i < pend.n; i++)
        if (!pend.v[i].saved)
            (void)pending_save (&pend.v[i]);
    if (pend.n == 0) {
        tracerd_log (LOG_NOTICE, "spool %s is writable again; no record waits",
                     d.conf->spool_path);
        pend.backoff = 0;
        if (pend.reserve_used)
            make_reserve ();
        return;
    }
    pend.backoff = fmin (pend.backoff * 2, d.conf->spool_retry_max_s);
    pend.next = now + pend.backoff;
}

static bool pending_file (const char *name, void *arg)
{
    size_t len = strlen (name);

    (void)arg;
    return name[0] != '.' && len > 5 && !strcmp (name + len - 5, ".json");
}

/* At start: the records a previous tracerd could not spool. */
static void respool_pending (void)
{
    char **names;
    size_t n;
    int fd;

    if (pend.dirfd < 0 || (fd = dup (pend.dirfd)) < 0)
        return;
    if (tr_store_list (fd, pending_file, NULL, DT_REG, &names, &n) < 0) {
        tracerd_log (LOG_ERR, "state: pending records: %s", strerror (errno));
        close (fd);
        return;
    }
    close (fd);
    for (size_t i = 0; i < n; i++) {
        size_t size;
        tr_error_t error;
        char key[600];
        char *text;
        json_t *rec;

        text =
            tr_path_read_file (pend.dirfd, names[i], 64 << 20, &size, &error);
        rec = text ? json_loadb (text, size, 0, NULL) : NULL;
        free (text);
        if (!rec
            || tracerd_steps_key (json_object_get (rec, "identity"), key,
                                  sizeof (key))
                   < 0) {
            char bad[700];
            snprintf (bad, sizeof (bad), "%s.bad", names[i]);
            tracerd_log (LOG_ERR,
                         "state: pending record %s unreadable; kept as "
                         "%s",
                         names[i], bad);
            (void)renameat (pend.dirfd, names[i], pend.dirfd, bad);
            json_decref (rec);
            drops.moved_aside++;
            if (drops.since == 0)
                drops.since = (long long)time (NULL);
            save_drops ();
            continue;
        }
        if (tr_store_put (d.spool, rec, &error) == 0) {
            tracerd_log (LOG_NOTICE,
                         "step %s: record written (it waited for the "
                         "spool across a restart)",
                         key);
            (void)unlinkat (pend.dirfd, names[i], 0);
            json_decref (rec);
            continue;
        }
        if (pend.n == 0)
            tracerd_log (LOG_ERR, "spool %s: %s; records wait in %s/pending",
                         d.conf->spool_path, tr_error_str (&error),
                         d.conf->state_dir);
        pend.backoff = 0;
        pending_add (key, rec, names[i], true);
    }
    tr_store_free_names (names, n);
    fwd.pending = true;
}

/* At stop: what could not be saved is lost. */
static void pending_stop (void)
{
    for (size_t i = 0; i < pend.n; i++) {
        if (!pend.v[i].saved && pending_save (&pend.v[i]) < 0)
            count_lost (pend.v[i].key, "tracerd stopped with it in memory "
                                       "only (the spool and the state dir "
                                       "refused it)");
        json_decref (pend.v[i].rec);
    }
    free (pend.v);
    pend.v = NULL;
    pend.n = pend.cap = 0;
}

/* Sign, check and spool a final record; takes the reference.  A record
 * the spool refuses waits (pending_add) and is tried again.
 */
void tracerd_forward_record (const char *key, json_t *rec)
{
    tr_error_t error;

    if (!d.conf->sign_enabled)
        tr_sign_mark_unsigned (rec, "signing disabled by configuration");
    else if (tr_sign_record (rec, d.conf->munge_socket, &error) < 0)
        tracerd_log (LOG_WARNING, "step %s: record left unsigned: %s", key,
                     tr_error_str (&error));
    if (tr_record_validate (rec, &error) < 0)
        tracerd_log (LOG_ERR,
                     "step %s: record does not validate: %s (writing it "
                     "anyway)",
                     key, tr_error_str (&error));
    /* behind others that wait: they keep their order */
    if (pend.n > 0 || tr_store_put (d.spool, rec, &error) < 0) {
        if (pend.n == 0)
            tracerd_log (LOG_ERR,
                         "step %s: spool write failed: %s; the record "
                         "waits in memory and in %s/pending, will retry",
                         key, tr_error_str (&error), d.conf->state_dir);
        else
            tracerd_log (LOG_WARNING,
                         "step %s: record waits for the spool (%zu "
                         "before it)",
                         key, pend.n);
        pending_add (key, rec, NULL, false);
        return;
    }
    tracerd_log (LOG_INFO, "step %s: record written", key);
    json_decref (rec);
    fwd.pending = true;
    next_forward = 0; /* forward now */
}

/* A place (cluster and node) with live summaries, remembered. */
static void live_place (const char *cluster, const char *node)
{
    size_t i;

    for (i = 0; i < live.nplaces; i++)
        if (!strcmp (live.places[i].cluster, cluster)
            && !strcmp (live.places[i].node, node)) {
            live.places[i].empty = 0;
            return;
        }
    if (live.nplaces == LIVE_PLACES_MAX)
        return;
    snprintf (live.places[i].cluster, sizeof (live.places[i].cluster), "%s",
              cluster);
    snprintf (live.places[i].node, sizeof (live.places[i].node), "%s", node);
    live.places[i].empty = 0;
    live.nplaces++;
}

/* Every store.live_interval: the live summaries of the steps running
 * now, for the forwarder to write, and node_exporter's textfile of the
 * same rows (textfile.c).  A step that is recorded only if its
 * job has another step here (the extern step) is left out until then.
 */
void tracerd_forward_live_pass (double now)
{
    double interval = d.conf->store_live_interval_s;
    tr_strpool_t *pool = NULL;
    tr_stepsum_t *rows = NULL;
    const tr_stepsum_t **v = NULL;
    struct tr_livesum_file *files = NULL;
    struct tr_openmetrics_step *om = NULL;
    struct timespec ts;
    double now_ms;
    size_t n = 0;
    ssize_t nf;
    bool store_due;

    if (!(interval > 0) || now < live.next)
        return;
    clock_gettime (CLOCK_REALTIME, &ts);
    now_ms = 1000.0 * (double)ts.tv_sec + (double)ts.tv_nsec / 1e6;
    live.next = now + interval;
    store_due = d.nsteps > 0 || live.nfiles > 0 || live.nplaces > 0;
    if (!store_due && !tracerd_textfile_due ())
        return;
    if (d.nsteps > 0
        && (!(pool = tr_strpool_create ())
            || !(rows = calloc ((size_t)d.nsteps, sizeof (*rows)))
            || !(v = calloc ((size_t)d.nsteps, sizeof (*v)))
            || !(om = calloc ((size_t)d.nsteps, sizeof (*om)))))
        goto nomem;
    for (int i = 0; i < d.nsteps; i++) {
        struct active *a = &d.steps[i];
        json_t *rec;

        if (a->conditional
            && !tracerd_steps_traced (tr_step_identity (a->step)))
            continue;
        /* a job starter's step, until LSF says the job is its user's */
        if (!tracerd_sched_vouched (a))
            continue;
        if (!(rec = tr_step_live_record (a->step)))
            goto nomem;
        if (tr_livesum_row (&rows[n], rec, now_ms, pool) < 0) {
            json_decref (rec);
            goto nomem;
        }
        tr_openmetrics_step (&om[n], &rows[n], rec);
        json_decref (rec);
        v[n] = &rows[n];
        n++;
    }
    /* node_exporter's file first: the rows are the same */
    tracerd_textfile_write (om, n);
    if (!store_due)
        goto out;
    if ((nf = tr_livesum_files (v, n, now_ms, interval, &files)) < 0)
        goto nomem;
    tr_livesum_files_free (live.files, live.nfiles);
    live.files = files;
    live.nfiles = (size_t)nf;
    for (size_t p = 0; p < live.nplaces; p++)
        live.places[p].empty++;
    for (size_t i = 0; i < live.nfiles; i++)
        live_place (live.files[i].cluster, live.files[i].node);
    /* forget places pruned a few times over */
    for (size_t p = live.nplaces; p-- > 0;)
        if (live.places[p].empty > LIVE_PLACE_KEEP)
            live.places[p] = live.places[--live.nplaces];
    fwd.pending = true;
    if (!forward_failing)
        next_forward = 0;
    goto out;
nomem:
    tracerd_log (LOG_WARNING, "live summaries: out of memory");
out:
    free (om);
    free (v);
    free (rows);
    tr_strpool_destroy (pool);
}

void tracerd_forward_resume (void)
{
    char path[PATH_MAX];
    tr_error_t error;
    int n = snprintf (path, sizeof (path), "%s/pending", d.conf->state_dir);

    if (d.state_fd >= 0 && n > 0 && (size_t)n < sizeof (path)
        && (pend.dirfd = tracerd_open_dir (path, 0700, &error)) < 0)
        tracerd_log (LOG_ERR,
                     "state dir %s: %s; records the spool refuses "
                     "will wait in memory only",
                     d.conf->state_dir, tr_error_str (&error));
    load_drops ();
    make_reserve ();
    respool_pending ();
}

int tracerd_forward_fd (double *next)
{
    if (fwd.pid > 0 && !fwd.slow && fwd.started + FORWARD_SLOW_S < *next)
        *next = fwd.started + FORWARD_SLOW_S;
    return fwd.fd;
}

void tracerd_forward_next (double now, double *next)
{
    if (fwd.pending && fwd.pid < 0 && next_forward < *next
        && next_forward > now)
        *next = next_forward;
    if (pend.n > 0 && pend.next < *next)
        *next = pend.next;
    if (d.conf->store_live_interval_s > 0 && live.next > now
        && live.next < *next)
        *next = live.next;
}

void tracerd_forward_stop (void)
{
    pending_stop ();
    if (pend.reservefd >= 0)
        close (pend.reservefd);
    if (pend.dirfd >= 0)
        close (pend.dirfd);
    if (fwd.pid > 0) {
        tracerd_log (LOG_NOTICE,
                     "the forwarder (pid %d) is still writing to "
                     "the store; it finishes on its own",
                     (int)fwd.pid);
        close (fwd.fd);
    }
    tr_livesum_files_free (live.files, live.nfiles);
}
