/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd: the node daemon.  Scheduler hooks notify it over a unix socket
 * (SO_PEERCRED-checked) when a step's task starts and ends; one loop
 * samples every active step; at the step's end the record is signed,
 * written to the node-local spool, and forwarded to the shared store by a
 * child process, with retries, so a hung or full store never holds a job
 * or the daemon, and loses nothing.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/node/bpffiles.h"
#include "libtracer/node/cgroup.h"
#include "libtracer/conf/conf.h"
#include "libtracer/util/fsroot.h"
#include "libtracer/node/gpu.h"
#include "libtracer/util/path.h"
#include "libtracer/hook/proto.h"
#include "libtracer/node/psi.h"
#include "libtracer/record/record.h"
#include "libtracer/node/sampler.h"
#include "libtracer/node/jobstate.h"
#include "libtracer/node/kmsg.h"
#include "libtracer/record/livesum.h"
#include "libtracer/notify/mail.h"
#include "libtracer/record/sign.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/record/store.h"
#include "libtracer/node/taskstats.h"
#include "libtracer/record/when.h"

#define MAX_STEPS 4096
/* A step keeps up to this many cgroup files open (libtracer/util/fsroot.h);
 * the daemon keeps FD_RESERVE descriptors for clients, state and records
 * whatever the steps hold (raise_fd_limit).
 */
#define FDS_PER_STEP 16
#define FD_RESERVE 512

struct active {
    char key[600];
    tr_step_t *step;
    double next;         /* monotonic time of its next sample */
    double saved;        /* monotonic time its state was last saved */
    double snapped;      /* monotonic time of its last live snapshot */
    double created;      /* monotonic time it was created or resumed */
    bool seen;           /* its cgroup or a process was found alive */
    bool conditional;    /* recorded only if its job has another step */
    int gone;            /* consecutive checks that found neither */
    bool by_starter;     /* registered by an unprivileged job starter */
    uid_t starter_uid;   /* ... running as this user */
    bool unfiltered;     /* a task of it is outside its cgroup2 directory */
    uint64_t exits_before; /* exit events received before it started */
    bool stall_mailed;   /* its user was told it stalled (mail.on_stall) */
};

/* Unprivileged job starters (LSF JOB_STARTER, daemon.job_starters): how
 * many steps one user may have registered at a time.
 */
#define STARTER_MAX_STEPS 8

/* How often steps are checked for an end nobody notified, and how long
 * a step attached by environment or session may wait for its first
 * process.
 */
#define REAP_CHECK_S 10.0
#define REAP_NEVER_S 600.0

/* How often a running step's readings are saved to the state dir. */
#define STATE_SAVE_S 5.0

/* A step due within this share of its interval is sampled with the ones
 * due now: each sample carries its own time, so nothing is skewed, and
 * the daemon wakes once per interval for all its steps instead of once
 * per step.
 */
#define SAMPLE_SLACK 0.05

static struct {
    tr_conf_t *conf;
    const char *conf_path;
    bool conf_explicit;
    FILE *logf;
    bool use_syslog;
    int level;
    int listen_fd;
    int state_fd;
    tr_store_t *spool;
    tr_store_t *store;
    struct active steps[MAX_STEPS];
    int nsteps;
    int spare_fd;            /* given up to refuse a client at EMFILE */
    double next_forward;
    double forward_backoff;
    bool forward_failing;
    int live_fd;             /* <state_dir>/live: snapshots */
    tr_taskstats_t *taskstats;
    uint64_t exits_lost;     /* tr_taskstats_lost already passed on */
    tr_gpu_t *gpu;
    double next_sweep;
    bool trim_due;           /* a step was dropped since the last trim */
    double next_trim;
} d = { .listen_fd = -1, .state_fd = -1, .live_fd = -1, .level = LOG_INFO,
        .spare_fd = -1 };

/* squeue queries in flight, one per job, and the records that wait for
 * their answer (a step killed by a signal: cancelled or timed out?).
 */
#define MAX_QUERIES 32
#define QUERY_TIMEOUT_S 10.0
/* A job whose tasks were just killed is COMPLETING until its epilogs
 * are done, and squeue shows that instead of TIMEOUT or CANCELLED: ask
 * again every QUERY_RETRY_S, for at most QUERY_GIVE_UP_S.
 */
#define QUERY_RETRY_S 2.0
#define QUERY_GIVE_UP_S 90.0

struct query {
    tr_jobstate_query_t *q;  /* NULL between two tries */
    char job[32];
    double deadline;     /* of the try in flight, or when to try again */
    double give_up;
    json_t *held;        /* records to write once the job state is known */
    bool need_state;     /* a held record waits for the final job state */
};

static struct query queries[MAX_QUERIES];
static int nqueries;

/* What the controller said of a job (tr_jobstate_fields: account,
 * partition, QOS, name, time limit), newest overwriting the oldest.
 */
#define LIMIT_CACHE 256
static struct {
    char job[LIMIT_CACHE][32];
    json_t *fields[LIMIT_CACHE];
    int next;
} limits;

static volatile sig_atomic_t got_term, got_hup;

static void logmsg (int pri, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void logmsg (int pri, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (pri > d.level)
        return;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (d.use_syslog) {
        syslog (pri, "%s", buf);
        return;
    }
    {
        static const char *names[] = { "emerg", "alert", "crit", "error",
                                       "warning", "notice", "info",
                                       "debug" };
        char ts[32];
        struct timespec now;
        struct tm tm;
        FILE *f = d.logf ? d.logf : stderr;
        clock_gettime (CLOCK_REALTIME, &now);
        localtime_r (&now.tv_sec, &tm);
        strftime (ts, sizeof (ts), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf (f, "%s.%03ld tracerd[%d]: %s: %s\n", ts,
                 now.tv_nsec / 1000000, (int)getpid (),
                 names[pri & 7], buf);
        fflush (f);
    }
}

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: tracerd [OPTIONS]\n"
             "Node daemon of tracer: samples job steps and writes their "
             "records.\n\n"
             "  -c, --config=FILE   configuration file (default %s)\n"
             "  -f, --foreground    stay in the foreground\n"
             "      --check-config  validate the configuration and exit\n"
             "  -h, --help          show this help and exit\n"
             "  -V, --version       show the version and exit\n",
             tr_conf_default_path ());
}

static int open_log (void)
{
    const char *t = d.conf->log_target;

    if (d.logf) {
        fclose (d.logf);
        d.logf = NULL;
    }
    d.use_syslog = false;
    d.level = d.conf->log_level;
    if (!t || !strcmp (t, "syslog")) {
        openlog ("tracerd", LOG_PID, LOG_DAEMON);
        d.use_syslog = true;
    }
    else if (strcmp (t, "stderr") != 0) {
        if (!(d.logf = fopen (t, "ae"))) {
            fprintf (stderr, "tracerd: %s: %s\n", t, strerror (errno));
            return -1;
        }
    }
    return 0;
}

static int load_conf (tr_conf_t **out)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;

    if (!conf) {
        fprintf (stderr, "tracerd: out of memory\n");
        return -1;
    }
    if (tr_conf_load (conf, d.conf_path, &error) < 0) {
        if (!(errno == ENOENT && !d.conf_explicit)) {
            if (d.listen_fd >= 0)
                logmsg (LOG_ERR, "%s", tr_error_str (&error));
            else
                fprintf (stderr, "tracerd: %s\n", tr_error_str (&error));
            tr_conf_destroy (conf);
            return -1;
        }
    }
    /* Root trusts this file: refuse one that others could have written. */
    if (access (d.conf_path, F_OK) == 0) {
        int secure = tr_path_is_secure (d.conf_path, 0, &error);
        if (secure != 1) {
            const char *why = secure == 0 ? error.text : strerror (errno);
            if (d.listen_fd >= 0)
                logmsg (LOG_ERR, "%s: insecure: %s", d.conf_path, why);
            else
                fprintf (stderr, "tracerd: %s: insecure: %s\n", d.conf_path,
                         why);
            tr_conf_destroy (conf);
            return -1;
        }
    }
    *out = conf;
    return 0;
}

static int open_spool (void)
{
    struct tr_store_opts sp = { .file_mode = 0600, .dir_mode = 0700,
                                .owner_is_job = false,
                                .owner_uid = (uid_t)-1, .gid = (gid_t)-1,
                                .create = true };
    tr_error_t error;

    if (!(d.spool = tr_store_open (d.conf->spool_path, &sp, &error))) {
        logmsg (LOG_ERR, "spool %s: %s", d.conf->spool_path,
                tr_error_str (&error));
        return -1;
    }
    return 0;
}

/* Open a directory named by root's own configuration.  Existing parts
 * are used as they are (they may be links, e.g. /var/run -> /run: root
 * chose them); missing ones are created with mode, and a component that
 * is created is never reached through a link.
 */
static int open_conf_dir (const char *dir, mode_t mode, tr_error_t *error)
{
    char parent[PATH_MAX];
    const char *base;
    struct stat st;
    int pfd, fd;

    if (stat (dir, &st) == 0 && S_ISDIR (st.st_mode)) {
        if ((fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            tr_errprintf (error, "%s: %s", dir, strerror (errno));
        return fd;
    }
    base = strrchr (dir, '/');
    if (!base || base == dir || !base[1]
        || snprintf (parent, sizeof (parent), "%.*s", (int)(base - dir), dir)
               >= (int)sizeof (parent)) {
        errno = EINVAL;
        return tr_errprintf (error, "%s: not an absolute directory path",
                             dir);
    }
    base++;
    if ((pfd = open_conf_dir (parent, 0755, error)) < 0)
        return -1;
    if (mkdirat (pfd, base, mode) < 0 && errno != EEXIST) {
        tr_errprintf (error, "mkdir %s: %s", dir, strerror (errno));
        close (pfd);
        return -1;
    }
    fd = openat (pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        tr_errprintf (error, "%s: %s", dir, strerror (errno));
    else
        (void)fchmod (fd, mode);
    close (pfd);
    return fd;
}

static int open_socket (void)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const char *path = d.conf->socket_path;
    char dir[sizeof (sa.sun_path)];
    char *slash;
    tr_error_t error;
    int fd;

    if (strlen (path) >= sizeof (sa.sun_path)) {
        logmsg (LOG_ERR, "%s: socket path too long", path);
        return -1;
    }
    snprintf (dir, sizeof (dir), "%s", path);
    if ((slash = strrchr (dir, '/')) && slash != dir) {
        *slash = '\0';
        fd = open_conf_dir (dir, 0755, &error);
        if (fd < 0) {
            logmsg (LOG_ERR, "%s: %s", dir, tr_error_str (&error));
            return -1;
        }
        close (fd);
    }
    memcpy (sa.sun_path, path, strlen (path) + 1);
    /* non-blocking: the loop accepts until there is no one left */
    if ((fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
                      0)) < 0) {
        logmsg (LOG_ERR, "socket: %s", strerror (errno));
        return -1;
    }
    /* A stale socket from a previous run would make bind fail. */
    if (unlink (path) < 0 && errno != ENOENT)
        logmsg (LOG_WARNING, "unlink %s: %s", path, strerror (errno));
    {
        mode_t old = umask (0177);
        int rc = bind (fd, (struct sockaddr *)&sa, sizeof (sa));
        umask (old);
        /* Root-only unless other users may notify; SO_PEERCRED decides
         * who is heard either way.
         */
        mode_t mode = d.conf->n_notify_uids > 1 || d.conf->job_starters ? 0666
                                                                     : 0600;
        if (rc < 0 || chmod (path, mode) < 0 || listen (fd, 128) < 0) {
            logmsg (LOG_ERR, "%s: %s", path, strerror (errno));
            close (fd);
            return -1;
        }
    }
    d.listen_fd = fd;
    return 0;
}

static bool peer_allowed (int fd, uid_t *uidp, pid_t *pidp)
{
    struct ucred cred;
    socklen_t len = sizeof (cred);

    if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return false;
    *uidp = cred.uid;
    *pidp = cred.pid;
    if (cred.uid == 0)
        return true;
    for (size_t i = 0; i < d.conf->n_notify_uids; i++)
        if (d.conf->notify_uids[i] == cred.uid)
            return true;
    return false;
}

static int step_key (json_t *id, char *buf, size_t size)
{
    const char *c = json_string_value (json_object_get (id, "cluster"));
    const char *j = json_string_value (json_object_get (id, "job_id"));
    const char *s = json_string_value (json_object_get (id, "step_id"));
    const char *n = json_string_value (json_object_get (id, "node"));
    int len;

    if (!c || !j || !s || !n)
        return -1;
    len = snprintf (buf, size, "%s/%s/%s/%s", c, j, s, n);
    return len < 0 || (size_t)len >= size ? -1 : 0;
}

/* A Slurm step's cluster: cluster.name, or where that is left at its
 * default, slurm.conf's ClusterName (tracerd's own SLURM_CONF, else
 * /etc/slurm/slurm.conf), read again for each configuration.
 */
static const char *slurm_cluster (void)
{
    static const tr_conf_t *read_for;
    static char name[128];
    const char *sc = getenv ("SLURM_CONF");

    if (strcmp (d.conf->cluster_name, "default"))
        return d.conf->cluster_name;
    if (read_for != d.conf) {
        read_for = d.conf;
        if (tr_jobstate_slurm_cluster (sc && *sc ? sc
                                                 : "/etc/slurm/slurm.conf",
                                       name, sizeof (name)) < 0)
            name[0] = '\0';
    }
    return name[0] ? name : d.conf->cluster_name;
}

/* A hook may leave the cluster name to the daemon's configuration.  A
 * Slurm step's is always the daemon's (slurm_cluster): the plugin could
 * take one only from the job's environment, which the job controls.
 */
static void default_cluster (json_t *id)
{
    const char *s = json_string_value (json_object_get (id, "scheduler"));

    if (json_is_object (id) && s && !strcmp (s, "slurm"))
        (void)json_object_set_new (id, "cluster",
                                   json_string (slurm_cluster ()));
    else if (json_is_object (id) && !json_object_get (id, "cluster"))
        (void)json_object_set_new (id, "cluster",
                                   json_string (d.conf->cluster_name));
}

/* Active steps by key: open addressing with linear probing over
 * d.steps' indices (+1; 0 is a free slot), at most half full.  Every
 * request names its step, and a linear search with string compares took
 * milliseconds at thousands of steps.
 */
#define STEP_SLOTS (2 * MAX_STEPS)

static int step_slot[STEP_SLOTS];

static size_t key_slot (const char *key)
{
    uint64_t h = 14695981039346656037ULL;  /* FNV-1a */

    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (size_t)(h & (STEP_SLOTS - 1));
}

/* The slot that holds key, or the free slot where it would go. */
static size_t find_slot (const char *key)
{
    size_t i = key_slot (key);

    while (step_slot[i] && strcmp (d.steps[step_slot[i] - 1].key, key))
        i = (i + 1) & (STEP_SLOTS - 1);
    return i;
}

static struct active *find_step (const char *key)
{
    size_t i = find_slot (key);

    return step_slot[i] ? &d.steps[step_slot[i] - 1] : NULL;
}

/* Index a step whose key was just set (d.steps[] holds it). */
static void index_step (struct active *a)
{
    size_t i = find_slot (a->key);

    if (!step_slot[i])
        step_slot[i] = (int)(a - d.steps) + 1;
}

/* Remove key's slot, moving later ones of the same run back into it so
 * that no lookup stops short (Knuth's algorithm R).
 */
static void unindex_key (const char *key, int index)
{
    size_t i = find_slot (key), j = i;

    if (!step_slot[i] || step_slot[i] != index + 1)
        return;
    for (;;) {
        size_t h;
        j = (j + 1) & (STEP_SLOTS - 1);
        if (!step_slot[j])
            break;
        h = key_slot (d.steps[step_slot[j] - 1].key);
        if ((i <= j) ? (i < h && h <= j) : (i < h || h <= j))
            continue;
        step_slot[i] = step_slot[j];
        i = j;
    }
    step_slot[i] = 0;
}

static void drop_step (struct active *a)
{
    int idx = (int)(a - d.steps), last = d.nsteps - 1;

    unindex_key (a->key, idx);
    if (idx != last) {
        size_t i = find_slot (d.steps[last].key);
        if (step_slot[i] == last + 1)
            step_slot[i] = idx + 1;
    }
    tr_step_destroy (a->step);
    *a = d.steps[--d.nsteps];
    d.trim_due = true;
}

/* Hand the heap of dropped steps back to the system.  glibc keeps freed
 * memory that lies below memory still in use, so without this a node
 * that once followed 128 steps holds their 25 MiB until tracerd exits.
 * At most once per TRIM_S: a trim walks every free chunk.
 */
#define TRIM_S 10.0

static void trim_memory (double now)
{
    if (!d.trim_due || now < d.next_trim)
        return;
    d.trim_due = false;
    d.next_trim = now + TRIM_S;
#ifdef HAVE_MALLOC_TRIM
    (void)malloc_trim (0);
#endif
}

/* The state file of a step: its key with '@' for '/'.  No path-safe
 * identifier contains either, so names cannot collide.
 */
static int state_name (struct active *a, char *buf, size_t size)
{
    int n = snprintf (buf, size, "%s.json", a->key);

    if (n < 0 || (size_t)n >= size)
        return -1;
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '@';
    return 0;
}

/* What the daemon itself knows of a step, beside the step's own state:
 * a restarted daemon that forgot the step was seen alive would record a
 * resumed step as "never found".
 */
static int save_daemon_state (struct active *a, json_t *st)
{
    return json_object_set_new (
        st, "daemon",
        json_pack ("{s:b s:i s:b s:b s:I s:b}", "seen", a->seen, "gone",
                   a->gone, "conditional", a->conditional, "by_starter",
                   a->by_starter, "starter_uid", (json_int_t)a->starter_uid,
                   "stall_mailed", a->stall_mailed));
}

static void restore_daemon_state (struct active *a, json_t *st)
{
    int seen = 0, gone = 0, cond = 0, starter = 0, mailed = 0;
    json_int_t uid = 0;

    if (json_unpack (json_object_get (st, "daemon"),
                     "{s?b s?i s?b s?b s?I s?b}", "seen", &seen, "gone", &gone,
                     "conditional", &cond, "by_starter", &starter,
                     "starter_uid", &uid, "stall_mailed", &mailed) < 0)
        return;
    a->stall_mailed = mailed;
    a->seen = seen;
    a->gone = gone >= 0 && gone < 2 ? gone : 0;
    a->conditional = cond;
    a->by_starter = starter;
    a->starter_uid = uid > 0 && uid < (json_int_t)(uid_t)-1 ? (uid_t)uid : 0;
}

static void save_state (struct active *a)
{
    char name[600];
    json_t *st;
    char *text = NULL;
    tr_error_t error;

    if (d.state_fd < 0 || state_name (a, name, sizeof (name)) < 0)
        return;
    if (!(st = tr_step_save (a->step)) || save_daemon_state (a, st) < 0
        || !(text = json_dumps (st, JSON_COMPACT))
        || tr_path_replace (d.state_fd, name, text, strlen (text), 0600,
                            (uid_t)-1, (gid_t)-1, &error) < 0)
        logmsg (LOG_WARNING, "step %s: cannot save state: %s", a->key,
                text ? tr_error_str (&error) : strerror (errno));
    a->saved = tr_when_monotonic ();
    free (text);
    json_decref (st);
}

static void drop_state (struct active *a)
{
    char name[600];

    if (d.state_fd >= 0 && state_name (a, name, sizeof (name)) == 0
        && unlinkat (d.state_fd, name, 0) < 0 && errno != ENOENT)
        logmsg (LOG_WARNING, "step %s: removing state: %s", a->key,
                strerror (errno));
}

static void reply (int fd, bool ok, const char *err)
{
    json_t *r = ok ? json_pack ("{s:b}", "ok", 1)
                   : json_pack ("{s:b s:s}", "ok", 0, "error", err);
    if (r)
        (void)tr_proto_send (fd, r, NULL);
    json_decref (r);
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
    long long since;        /* unix time of the first drop counted */
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
        logmsg (LOG_ERR, "spool: %s; kept as %s", tr_error_str (&error), bad);
        if (rename (path, bad) < 0)
            logmsg (LOG_ERR, "rename %s: %s", path, strerror (errno));
        else
            fwd_moved++;
        return 0;
    }
    if (tr_store_put (d.store, rec, &error) < 0) {
        if (!d.forward_failing)
            logmsg (LOG_ERR, "store: %s: %s; will retry",
                    tr_store_root (d.store), tr_error_str (&error));
        (*failed)++;
        json_decref (rec);
        return 1;  /* stop: the store is failing, back off */
    }
    if (unlink (path) < 0 && errno != ENOENT)
        logmsg (LOG_WARNING, "unlink %s: %s", path, strerror (errno));
    else {
        logmsg (LOG_DEBUG, "forwarded %s", path);
        /* its job's directory goes now if that was its last record;
         * tr_store_prune's grace leaves one that has just changed
         */
        if (tr_store_prune_job (
                d.spool, tr_record_get_str (rec, "identity", "cluster"),
                tr_record_get_str (rec, "identity", "job_id"), &error)
            < 0)
            logmsg (LOG_WARNING, "spool: cleaning: %s", tr_error_str (&error));
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
                    "updated",
                    (json_int_t)time (NULL));
    if (!st
        || tr_store_put_node_status (d.store, d.conf->cluster_name, node, st,
                                     &error) < 0)
        logmsg (LOG_WARNING, "store: node status: %s",
                st ? tr_error_str (&error) : "out of memory");
    json_decref (st);
}

/* Live summaries of the running steps for the store (livesum.h): made
 * by tracerd every store.live_interval (live_pass), written by the
 * forwarder, which has them from the fork, after the round's records.
 * The places (cluster and node) that had files are remembered, so that
 * a user's file goes when their last step there ends.
 */
#define LIVE_PLACES_MAX 256
#define LIVE_PLACE_KEEP 3       /* passes a place is pruned after its last file */

static struct {
    double next;                /* monotonic time of the next pass */
    struct tr_livesum_file *files;
    size_t nfiles;
    struct {
        char cluster[256];
        char node[256];
        int empty;              /* passes since it last had a file */
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

        if (tr_store_put_live (d.store, f->cluster, f->node, f->uid, f->text,
                               &error) < 0)
            logmsg (LOG_WARNING, "store: live summary of uid %u on %s: %s",
                    (unsigned)f->uid, f->node, tr_error_str (&error));
    }
    for (size_t p = 0; p < live.nplaces; p++) {
        size_t n = 0;

        for (size_t i = 0; i < live.nfiles && n < LIVE_PLACES_MAX; i++)
            if (!strcmp (live.files[i].cluster, live.places[p].cluster)
                && !strcmp (live.files[i].node, live.places[p].node))
                keep[n++] = live.files[i].uid;
        if (tr_store_prune_live (d.store, live.places[p].cluster,
                                 live.places[p].node, keep, n, &error) < 0)
            logmsg (LOG_WARNING, "store: live summaries: %s",
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
    if (!(d.store = tr_store_open (d.conf->store_path, &so, &error))) {
        if (!d.forward_failing)
            logmsg (LOG_ERR, "store %s unavailable: %s; records stay in "
                    "the spool, will retry", d.conf->store_path,
                    tr_error_str (&error));
        return 1;
    }
    if (tr_store_foreach_all (d.spool, forward_one, &failed, &error) < 0
        && errno != ENOENT) {
        logmsg (LOG_ERR, "spool: %s", tr_error_str (&error));
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
        logmsg (LOG_WARNING, "spool: cleaning: %s", tr_error_str (&error));
    if (drops.lost + drops.moved_aside + fwd_moved > 0)
        forward_status ();
    tr_store_destroy (d.store);
    d.store = NULL;
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
    pid_t pid;       /* the forwarder, or -1 */
    int fd;          /* read end of its pipe, or -1 */
    double started;
    bool slow;       /* said that it has not finished */
    bool pending;    /* records may wait in the spool */
} fwd = { .pid = -1, .fd = -1, .pending = true };

static void forward_start (double now)
{
    int p[2];
    pid_t pid;

    if (pipe2 (p, O_CLOEXEC) < 0) {
        logmsg (LOG_ERR, "forwarding: pipe: %s; will retry", strerror (errno));
        d.next_forward = now + d.conf->spool_retry_s;
        return;
    }
    fflush (NULL);
    if ((pid = fork ()) < 0) {
        logmsg (LOG_ERR, "forwarding: fork: %s; will retry", strerror (errno));
        close (p[0]);
        close (p[1]);
        d.next_forward = now + d.conf->spool_retry_s;
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
static void forward_reap (double now)
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
        logmsg (LOG_ERR, "forwarder ended by signal %d; will retry",
                WIFSIGNALED (status) ? WTERMSIG (status) : 0);
    if (fwd.slow)
        logmsg (LOG_NOTICE, "store %s answered again after %.0f s",
                d.conf->store_path, now - fwd.started);
    if (failed) {
        d.forward_backoff = d.forward_backoff > 0
                                ? fmin (d.forward_backoff * 2,
                                        d.conf->spool_retry_max_s)
                                : d.conf->spool_retry_s;
        d.next_forward = now + d.forward_backoff;
        d.forward_failing = true;
        fwd.pending = true;
    }
    else {
        if (d.forward_failing)
            logmsg (LOG_NOTICE, "store %s is writable again; spool drained",
                    d.conf->store_path);
        d.forward_failing = false;
        d.forward_backoff = 0;
        d.next_forward = now + d.conf->spool_retry_s;
    }
}

static void forward_spool (double now)
{
    if (fwd.pid > 0) {
        if (!fwd.slow && now - fwd.started >= FORWARD_SLOW_S) {
            logmsg (LOG_WARNING, "store %s: forwarding has not finished in "
                    "%.0f s (the store hangs?); records stay in the spool, "
                    "sampling goes on", d.conf->store_path,
                    now - fwd.started);
            fwd.slow = true;
        }
        return;
    }
    if (fwd.pending && now >= d.next_forward)
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
    char name[600];      /* its file in the pending dir */
    json_t *rec;
    bool saved;          /* its file is written */
};

static struct {
    struct pending *v;
    size_t n, cap;
    double next;         /* monotonic time of the next try */
    double backoff;
    int dirfd;           /* <state_dir>/pending, or -1 */
    int reservefd;       /* its "reserve" file, or -1 */
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
    if (tr_path_replace (pend.dirfd, "drops", text, (size_t)n, 0600,
                         (uid_t)-1, (gid_t)-1, &error) < 0)
        logmsg (LOG_WARNING, "state: drop counters: %s",
                tr_error_str (&error));
}

static void load_drops (void)
{
    tr_error_t error;
    size_t n;
    char *text;
    json_t *o;

    if (pend.dirfd < 0
        || !(text = tr_path_read_file (pend.dirfd, "drops", 4096, &n,
                                       &error)))
        return;
    o = json_loadb (text, n, 0, NULL);
    free (text);
    drops.lost = (uint64_t)json_integer_value (
        json_object_get (o, "records_lost"));
    drops.moved_aside = (uint64_t)json_integer_value (
        json_object_get (o, "spool_moved_aside"));
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
    logmsg (LOG_ERR, "step %s: record lost: %s (%llu lost since %lld)", key,
            why, (unsigned long long)drops.lost, drops.since);
    save_drops ();
    fwd.pending = true;
    d.next_forward = 0;
}

/* The reserve: room kept in the state dir for pending records. */
static void make_reserve (void)
{
    if (pend.dirfd < 0)
        return;
    if (pend.reservefd < 0)
        pend.reservefd = openat (pend.dirfd, "reserve",
                                 O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                                 0600);
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
    if (rc < 0 && (errno == ENOSPC || errno == EDQUOT)
        && pend.reservefd >= 0 && !pend.reserve_used
        && ftruncate (pend.reservefd, 0) == 0) {
        pend.reserve_used = true;
        logmsg (LOG_WARNING, "state dir %s full: its reserve is given to "
                "records waiting for the spool", d.conf->state_dir);
        rc = tr_path_replace (pend.dirfd, p->name, text, strlen (text), 0600,
                              (uid_t)-1, (gid_t)-1, &error);
    }
    free (text);
    if (rc < 0) {
        logmsg (LOG_WARNING, "step %s: record kept in memory only (a "
                "restart now would lose it): %s", p->key,
                tr_error_str (&error));
        return -1;
    }
    p->saved = true;
    return 0;
}

/* Keep a record the spool refused; takes the reference.  saved: it is
 * in the pending dir already (found there at start).
 */
static void pending_add (const char *key, json_t *rec, const char *name,
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
        snprintf (why, sizeof (why), "%zu records already wait for the "
                  "spool (spool.pending_max)", pend.n);
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
static void pending_retry (double now)
{
    size_t done = 0;
    tr_error_t error;

    if (pend.n == 0 || now < pend.next)
        return;
    for (; done < pend.n; done++) {
        struct pending *p = &pend.v[done];
        if (tr_store_put (d.spool, p->rec, &error) < 0) {
            logmsg (LOG_DEBUG, "spool still refuses records: %s",
                    tr_error_str (&error));
            break;
        }
        logmsg (LOG_INFO, "step %s: record written (it waited for the "
                "spool)", p->key);
        if (pend.dirfd >= 0 && unlinkat (pend.dirfd, p->name, 0) < 0
            && errno != ENOENT)
            logmsg (LOG_WARNING, "state: removing pending %s: %s", p->name,
                    strerror (errno));
        json_decref (p->rec);
        fwd.pending = true;
        d.next_forward = 0;
    }
    memmove (pend.v, pend.v + done, (pend.n - done) * sizeof (*pend.v));
    pend.n -= done;
    /* what could not be saved before may be now */
    for (size_t i = 0; i < pend.n; i++)
        if (!pend.v[i].saved)
            (void)pending_save (&pend.v[i]);
    if (pend.n == 0) {
        logmsg (LOG_NOTICE, "spool %s is writable again; no record waits",
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
        logmsg (LOG_ERR, "state: pending records: %s", strerror (errno));
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

        text = tr_path_read_file (pend.dirfd, names[i], 64 << 20, &size,
                                  &error);
        rec = text ? json_loadb (text, size, 0, NULL) : NULL;
        free (text);
        if (!rec || step_key (json_object_get (rec, "identity"), key,
                              sizeof (key))
                        < 0) {
            char bad[700];
            snprintf (bad, sizeof (bad), "%s.bad", names[i]);
            logmsg (LOG_ERR, "state: pending record %s unreadable; kept as "
                    "%s", names[i], bad);
            (void)renameat (pend.dirfd, names[i], pend.dirfd, bad);
            json_decref (rec);
            drops.moved_aside++;
            if (drops.since == 0)
                drops.since = (long long)time (NULL);
            save_drops ();
            continue;
        }
        if (tr_store_put (d.spool, rec, &error) == 0) {
            logmsg (LOG_NOTICE, "step %s: record written (it waited for the "
                    "spool across a restart)", key);
            (void)unlinkat (pend.dirfd, names[i], 0);
            json_decref (rec);
            continue;
        }
        if (pend.n == 0)
            logmsg (LOG_ERR, "spool %s: %s; records wait in %s/pending",
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
                        "only (the spool and the state dir refused it)");
        json_decref (pend.v[i].rec);
    }
    free (pend.v);
    pend.v = NULL;
    pend.n = pend.cap = 0;
}

/* Sign, check and spool a final record; takes the reference.  A record
 * the spool refuses waits (pending_add) and is tried again.
 */
static void write_record (const char *key, json_t *rec)
{
    tr_error_t error;

    if (!d.conf->sign_enabled)
        tr_sign_mark_unsigned (rec, "signing disabled by configuration");
    else if (tr_sign_record (rec, d.conf->munge_socket, &error) < 0)
        logmsg (LOG_WARNING, "step %s: record left unsigned: %s", key,
                tr_error_str (&error));
    if (tr_record_validate (rec, &error) < 0)
        logmsg (LOG_ERR, "step %s: record does not validate: %s (writing it "
                "anyway)", key, tr_error_str (&error));
    /* behind others that wait: they keep their order */
    if (pend.n > 0 || tr_store_put (d.spool, rec, &error) < 0) {
        if (pend.n == 0)
            logmsg (LOG_ERR, "step %s: spool write failed: %s; the record "
                    "waits in memory and in %s/pending, will retry", key,
                    tr_error_str (&error), d.conf->state_dir);
        else
            logmsg (LOG_WARNING, "step %s: record waits for the spool (%zu "
                    "before it)", key, pend.n);
        pending_add (key, rec, NULL, false);
        return;
    }
    logmsg (LOG_INFO, "step %s: record written", key);
    json_decref (rec);
    fwd.pending = true;
    d.next_forward = 0;  /* forward now */
}

static bool slurm_job (json_t *id, const char **job)
{
    const char *s = json_string_value (json_object_get (id, "scheduler"));

    *job = json_string_value (json_object_get (id, "job_id"));
    return s && !strcmp (s, "slurm") && *job && **job
           && strspn (*job, "0123456789") == strlen (*job)
           && strlen (*job) < sizeof (queries[0].job);
}

/* scontrol, beside the configured squeue. */
static const char *scontrol_path (char *buf, size_t size)
{
    const char *slash = strrchr (d.conf->squeue_path, '/');
    int n;

    if (!slash)
        return NULL;
    n = snprintf (buf, size, "%.*s/scontrol",
                  (int)(slash - d.conf->squeue_path), d.conf->squeue_path);
    return n < 0 || (size_t)n >= size || access (buf, X_OK) < 0 ? NULL : buf;
}

static struct query *find_query (const char *job)
{
    for (int i = 0; i < nqueries; i++)
        if (!strcmp (queries[i].job, job))
            return &queries[i];
    return NULL;
}

/* Ask squeue about job (unless a question is already out).  NULL when
 * queries are off or failed: the caller goes on without the answer.
 */
static struct query *ask_scheduler (const char *job)
{
    struct query *qy = find_query (job);
    tr_error_t error;
    tr_jobstate_query_t *q;
    char sc[4096];

    if (qy)
        return qy;
    if (nqueries == MAX_QUERIES || !d.conf->squeue_path
        || access (d.conf->squeue_path, X_OK) < 0)
        return NULL;
    if (!(q = tr_jobstate_query_start_detail (
              d.conf->squeue_path, scontrol_path (sc, sizeof (sc)), job,
              &error))) {
        logmsg (LOG_WARNING, "job %s: %s", job, tr_error_str (&error));
        return NULL;
    }
    qy = &queries[nqueries++];
    memset (qy, 0, sizeof (*qy));
    qy->q = q;
    snprintf (qy->job, sizeof (qy->job), "%s", job);
    qy->deadline = tr_when_monotonic () + QUERY_TIMEOUT_S;
    qy->give_up = tr_when_monotonic () + QUERY_GIVE_UP_S;
    return qy;
}

/* The controller's fields of job, or NULL when not asked yet. */
static json_t *cached_fields (const char *job)
{
    for (int i = 0; i < LIMIT_CACHE; i++)
        if (limits.fields[i] && !strcmp (limits.job[i], job))
            return limits.fields[i];
    return NULL;
}

static void configure_step (tr_step_t *step, const char *key, json_t *gpus);

/* Give a step what the controller said of its job: identity and time
 * limit, and the GPUs the job holds on the step's node (its scontrol
 * line), which the step then follows.
 */
static void apply_job (tr_step_t *step, const char *key, json_t *fields)
{
    json_t *id = tr_step_identity (step), *req = tr_step_request (step);
    const char *node = json_string_value (json_object_get (id, "node"));
    char gpus[1024];

    if (tr_jobstate_apply_fields (fields, id, req) < 0)
        logmsg (LOG_WARNING, "step %s: %s", key, strerror (errno));
    if (!json_object_get (req, "gpus") && node
        && tr_jobstate_node_gpus (json_object_get (fields, "gres_nodes"),
                                  node, gpus, sizeof (gpus)) == 1
        && json_object_set_new (req, "gpus", json_string (gpus)) == 0)
        configure_step (step, key, json_object_get (req, "gpus"));
}


/* A step killed by a signal: the job's scheduler state says whether it
 * was cancelled or ran out of time.
 */
static void apply_state (json_t *rec, const struct tr_jobstate *job)
{
    json_t *oc = json_object_get (rec, "outcome");
    const char *now = json_string_value (json_object_get (oc, "state"));
    const char *state = tr_jobstate_outcome (job->state);
    char why[96];

    if (!state || !now || strcmp (now, "failed"))
        return;
    snprintf (why, sizeof (why), "the scheduler reports the job %s",
              job->state);
    json_object_set_new (oc, "state", json_string (state));
    json_object_set_new (oc, "reason", json_string (why));
}

/* The answer is in (or never came: ok false): give the job's steps the
 * controller's account, partition, QOS, name and time limit, and write
 * the records that waited for it.  Without an answer those stay unknown.
 */
static void finish_query (struct query *qy, bool ok)
{
    static struct tr_jobstate job;
    tr_error_t error;
    size_t i;
    json_t *rec, *fields = NULL;

    memset (&job, 0, sizeof (job));
    job.time_limit_s = -1;
    if (ok && tr_jobstate_query_result (qy->q, &job, &error) < 0) {
        logmsg (LOG_DEBUG, "job %s: %s", qy->job, tr_error_str (&error));
        ok = false;
    }
    if (ok && qy->held && qy->need_state && !strcmp (job.state, "COMPLETING")
        && tr_when_monotonic () < qy->give_up) {
        tr_jobstate_query_destroy (qy->q);
        qy->q = NULL;
        qy->deadline = tr_when_monotonic () + QUERY_RETRY_S;
        return;
    }
    if (ok && !(fields = tr_jobstate_fields (&job)))
        ok = false;
    if (ok)
        (void)json_object_set_new (fields, "gres_nodes",
                                   tr_jobstate_query_nodes (qy->q));
    if (ok) {
        /* the job script and working directory name its run */
        json_t *paths = tr_jobstate_query_paths (qy->q);

        (void)json_object_update (fields, paths);
        json_decref (paths);
    }
    if (!ok)
        job.state[0] = '\0';
    else {
        snprintf (limits.job[limits.next], sizeof (limits.job[0]), "%s",
                  qy->job);
        json_decref (limits.fields[limits.next]);
        limits.fields[limits.next] = fields;
        limits.next = (limits.next + 1) % LIMIT_CACHE;
        for (int k = 0; k < d.nsteps; k++) {
            const char *j;
            if (slurm_job (tr_step_identity (d.steps[k].step), &j)
                && !strcmp (j, qy->job)) {
                apply_job (d.steps[k].step, d.steps[k].key, fields);
                save_state (&d.steps[k]);   /* the GPUs survive a restart */
            }
        }
    }
    json_array_foreach (qy->held, i, rec) {
        json_t *id = json_object_get (rec, "identity");
        char key[600];
        if (ok) {
            (void)tr_jobstate_apply_fields (fields, id,
                                            json_object_get (rec, "request"));
            (void)tr_jobstate_apply_time (fields,
                                          json_object_get (rec, "time"));
            apply_state (rec, &job);
        }
        if (step_key (id, key, sizeof (key)) < 0)
            snprintf (key, sizeof (key), "%s", qy->job);
        write_record (key, json_incref (rec));
    }
    json_decref (qy->held);
    tr_jobstate_query_destroy (qy->q);
    *qy = queries[--nqueries];
}

static void poll_queries (struct pollfd *pfd, double now)
{
    for (int i = nqueries - 1; i >= 0; i--) {
        struct query *qy = &queries[i];
        int rc = 0;
        if (!qy->q) {
            tr_error_t error;
            char sc[4096];
            if (now < qy->deadline)
                continue;
            if (!(qy->q = tr_jobstate_query_start_detail (
                      d.conf->squeue_path, scontrol_path (sc, sizeof (sc)),
                      qy->job, &error))) {
                logmsg (LOG_WARNING, "job %s: %s", qy->job,
                        tr_error_str (&error));
                finish_query (qy, false);
            }
            else
                qy->deadline = now + QUERY_TIMEOUT_S;
            continue;
        }
        if (pfd[i].revents)
            rc = tr_jobstate_query_read (qy->q);
        if (rc == 1)
            finish_query (qy, true);
        else if (rc < 0 || now >= qy->deadline) {
            logmsg (LOG_WARNING, "job %s: squeue %s; records keep the "
                    "state their tasks show", qy->job,
                    rc < 0 ? "failed" : "did not answer in time");
            finish_query (qy, false);
        }
    }
}

/* File evidence from eBPF (sampling.ebpf, libtracer/node/bpffiles.h): each
 * step with a cgroup directory of its own is followed from before its
 * task is released (files_sync, with the exit filter) to its record.
 */
static struct {
    tr_files_t *files;   /* NULL: none, for the reason in why */
    char why[300];
} fe;

static void files_open (void)
{
    tr_error_t error = { 0 };

    if (d.conf->ebpf == TR_EBPF_OFF) {
        snprintf (fe.why, sizeof (fe.why),
                  "turned off (sampling.ebpf: false)");
        logmsg (LOG_INFO, "file evidence: %s", fe.why);
        return;
    }
    if (!(fe.files = tr_files_open (d.conf->ebpf == TR_EBPF_ON, &error))) {
        snprintf (fe.why, sizeof (fe.why), "%s", error.text);
        logmsg (d.conf->ebpf == TR_EBPF_ON ? LOG_WARNING : LOG_INFO,
                "file evidence: none in records (%s)", fe.why);
        return;
    }
    logmsg (LOG_INFO, "file evidence: eBPF program loaded (%s: failed "
            "opens, I/O errors, bytes per file of the steps' cgroups)",
            tr_files_how (fe.files));
}

/* Follow each active step's cgroup directories; forget the others. */
static void files_sync (void)
{
    const char *keys[MAX_STEPS];
    size_t n = 0;

    if (!fe.files)
        return;
    for (int i = 0; i < d.nsteps; i++) {
        struct active *a = &d.steps[i];
        const char *dirs[] = { tr_step_cgroup2_dir (a->step),
                               tr_step_cgroup1_dir (a->step) };
        tr_error_t error = { 0 };

        keys[n++] = a->key;
        if (tr_files_watching (fe.files, a->key))
            continue;
        if (tr_files_watch (fe.files, a->key, dirs, 2, &error) < 0)
            logmsg (LOG_DEBUG, "step %s: no file evidence: %s", a->key,
                    error.text);
    }
    tr_files_retain (fe.files, keys, n);
}

/* The record's files member of step a. */
static void files_attach (struct active *a, json_t *rec)
{
    tr_error_t error = { 0 };
    json_t *m = NULL;

    if (fe.files && !(m = tr_files_step (fe.files, a->key, &error))
        && errno == ENOENT)
        m = tr_files_none ("the step has no cgroup directory of its own");
    else if (!fe.files)
        m = tr_files_none (fe.why);
    if (m)
        (void)json_object_set_new (rec, "files", m);
}

static void finish_step (struct active *a)
{
    json_t *rec, *oc;
    struct query *qy;
    const char *job;
    bool signalled;

    if (!(rec = tr_step_record (a->step, "final"))) {
        logmsg (LOG_ERR, "step %s: building record: %s", a->key,
                strerror (errno));
        return;
    }
    files_attach (a, rec);
    /* A task killed by a signal that is not the OOM killer's: the
     * scheduler knows whether it was a cancel or the time limit.
     */
    oc = json_object_get (rec, "outcome");
    signalled = json_object_get (oc, "signal")
                && !strcmp (json_string_value (json_object_get (oc, "state")),
                            "failed");
    /* Also a record whose job the controller has not described yet (its
     * answer is due within QUERY_TIMEOUT_S, or never comes): it waits
     * for the account, partition, QOS, name and time limit.
     */
    /* the controller's submit and job start times, when it has said */
    if (slurm_job (tr_step_identity (a->step), &job) && cached_fields (job))
        (void)tr_jobstate_apply_time (cached_fields (job),
                                      json_object_get (rec, "time"));
    if (slurm_job (tr_step_identity (a->step), &job)
        && (signalled || !cached_fields (job))
        && (qy = ask_scheduler (job))) {
        if (!qy->held)
            qy->held = json_array ();
        qy->need_state = qy->need_state || signalled;
        if (qy->held && json_array_append_new (qy->held, rec) == 0)
            return;
    }
    write_record (a->key, rec);
}

/* sampling.psi_mirror: true tries everywhere (and logs where there is
 * no hybrid tree); auto only where the host is hybrid.
 */
static bool mirror_wanted (void)
{
    return d.conf->psi_mirror == TR_PSI_MIRROR_ON
           || (d.conf->psi_mirror == TR_PSI_MIRROR_AUTO
               && tr_cgroup_host_layout () == TR_CGROUP_HYBRID);
}

/* A step's cgroup2 mirror directory name: its key, '/' made '@'. */
static void mirror_name (const char *key, char *buf, size_t size)
{
    snprintf (buf, size, "%s", key);
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '@';
}

/* The step's detail options from the configuration.  gpus is the
 * step's request.gpus, which tracerd set from a trusted source or a
 * root hook gave; without it the step follows no GPU (never every GPU
 * of the node: those are other jobs').
 */
static void configure_step (tr_step_t *step, const char *key, json_t *gpus)
{
    struct tr_detail_opts opts = {
        .taskstats = d.taskstats != NULL,
        .cmdline_max = (size_t)d.conf->cmdline_max,
        .proc_reads = (size_t)d.conf->proc_reads,
        .redact = d.conf->redact,
        .tool_subcommands = d.conf->tool_subcommands,
        .tool_interpreters = d.conf->tool_interpreters,
        .gpu = json_is_string (gpus) && *json_string_value (gpus) ? d.gpu
                                                                   : NULL,
        .gpu_devices = json_string_value (gpus),
    };
    tr_error_t error;

    if (tr_step_configure (step, &opts, &error) < 0)
        logmsg (LOG_WARNING, "step %s: detail not configured: %s", key,
                tr_error_str (&error));
    tr_step_set_stall_after (step, d.conf->stall_after_s);
}

/* A live snapshot of a running step for "tracer-report --live":
 * <state_dir>/live/<key>.json, replaced atomically.  It belongs to the
 * step's user, mode 0600, in a directory anyone may list: each user can
 * read their own running steps and no one else's.  Root reads them all.
 */
static void write_snapshot (struct active *a)
{
    char name[600];
    char *text = NULL;
    json_int_t uid;
    uid_t owner = (uid_t)-1;
    tr_error_t error;

    a->snapped = tr_when_monotonic ();
    if (d.live_fd < 0 || state_name (a, name, sizeof (name)) < 0)
        return;
    uid = json_integer_value (
        json_object_get (tr_step_identity (a->step), "uid"));
    if (uid > 0 && uid < (json_int_t)(uid_t)-1)
        owner = (uid_t)uid;
    if (!(text = tr_step_snapshot_text (a->step))
        || tr_path_replace (d.live_fd, name, text, strlen (text), 0600,
                            owner, (gid_t)-1, &error) < 0)
        logmsg (LOG_WARNING, "step %s: cannot write a live snapshot: %s",
                a->key, text ? tr_error_str (&error) : strerror (errno));
    free (text);
}

static void drop_snapshot (struct active *a)
{
    char name[600];

    if (d.live_fd >= 0 && state_name (a, name, sizeof (name)) == 0)
        (void)unlinkat (d.live_fd, name, 0);
}

/* A step's end: its final record, then nothing of it is kept. */
/* Jobs that had an unconditional step on this node since tracerd
 * started, oldest overwritten first.  A conditional step (Slurm's extern
 * step, which cannot see the user's --tracer) keeps its record only if
 * its job is here: opted-in jobs get it, opted-out jobs do not.
 */
#define TRACED_JOBS 1024

static struct {
    char key[TRACED_JOBS][300];
    int next;
} traced;

static int job_key (json_t *id, char *buf, size_t size)
{
    const char *c = json_string_value (json_object_get (id, "cluster"));
    const char *j = json_string_value (json_object_get (id, "job_id"));
    int n;

    if (!c || !j)
        return -1;
    n = snprintf (buf, size, "%s/%s", c, j);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static bool job_traced (json_t *id)
{
    char key[300];

    if (job_key (id, key, sizeof (key)) < 0)
        return false;
    for (int i = 0; i < TRACED_JOBS; i++)
        if (!strcmp (traced.key[i], key))
            return true;
    return false;
}

static void note_traced_job (json_t *id)
{
    if (job_traced (id)
        || job_key (id, traced.key[traced.next], sizeof (traced.key[0])) < 0)
        return;
    traced.next = (traced.next + 1) % TRACED_JOBS;
}

static void update_exit_filter (void);
static uint64_t exits_received (void);

static void kmsg_settle (void);

static void retire_step (struct active *a)
{
    /* the kernel's lines about its last processes, before its record */
    kmsg_settle ();
    logmsg (LOG_DEBUG, "step %s: %llu process exit events received while "
            "it ran", a->key,
            (unsigned long long)(exits_received () - a->exits_before));
    if (a->conditional && !job_traced (tr_step_identity (a->step)))
        logmsg (LOG_DEBUG, "step %s: no other step of its job is traced "
                "here; no record", a->key);
    else
        finish_step (a);
    drop_state (a);
    drop_snapshot (a);
    drop_step (a);
    update_exit_filter ();
}

/* Remove mirror directories no active step uses (their processes are
 * gone; a step that ended while tracerd was down leaves one too).
 */
static void sweep_mirrors (double now)
{
    const char **keep;
    char (*names)[600];
    size_t n = 0;

    if (now < d.next_sweep)
        return;
    d.next_sweep = now + 10;
    keep = calloc ((size_t)d.nsteps + 1, sizeof (*keep));
    names = calloc ((size_t)d.nsteps + 1, sizeof (*names));
    if (keep && names) {
        for (int i = 0; i < d.nsteps; i++) {
            mirror_name (d.steps[i].key, names[n], sizeof (names[n]));
            keep[n] = names[n];
            n++;
        }
        (void)tr_cgroup_mirror_sweep (keep, n);
    }
    free (keep);
    free (names);
}

/* The kernel filter on process exits (tr_taskstats_filter_cgroups):
 * while every active step has a cgroup directory that holds all its
 * processes (filter_dir: its cgroup2 directory, else its v1 cpuacct or
 * memory one), the kernel drops every other exit before it is queued,
 * so other jobs' exits cost tracerd nothing.  A step without one (a
 * process tree or set), more than TR_TASKSTATS_FILTER_MAX directories,
 * or a refusal (no BPF, no kernel BTF for the v1 walk): no filter, every
 * exit delivered.  Widened before a new step's task is released (the
 * step_start reply), narrowed once a retired step's exits were drained;
 * with no step left the last filter stays (the next step sets its own
 * before its reply).
 */
static struct {
    bool on;             /* a filter is attached */
    bool said_off;       /* "every exit delivered" logged since */
    char *dirs[TR_TASKSTATS_FILTER_MAX]; /* its directories, sorted */
    size_t n;
    bool refused;        /* the kernel refused it: said once */
    bool held;           /* resume_steps: not all steps are back yet */
    uint64_t received;   /* exit events delivered so far */
} xf;

static uint64_t exits_received (void)
{
    return xf.received;
}

static int cmp_dir (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

static void exit_filter_clear (void)
{
    for (size_t i = 0; i < xf.n; i++)
        free (xf.dirs[i]);
    xf.n = 0;
}

/* Remove the filter: every exit delivered again. */
static void exit_filter_off (const char *why)
{
    tr_error_t error;

    if (!xf.on) {
        if (!xf.said_off)
            logmsg (LOG_INFO, "process exits: every exit on the node "
                    "delivered (%s)", why);
        xf.said_off = true;
        return;
    }
    if (tr_taskstats_filter_cgroups (d.taskstats, NULL, 0, &error) < 0) {
        logmsg (LOG_ERR, "process exits: %s; the filter stays, exits "
                "outside the steps' directories are dropped",
                tr_error_str (&error));
        return;
    }
    exit_filter_clear ();
    xf.on = false;
    xf.said_off = true;
    logmsg (LOG_INFO, "process exits: every exit on the node delivered "
            "(%s)", why);
}

/* Whether a step is followed through its mirror directory. */
static bool mirrored (struct active *a)
{
    const char *dir = tr_step_cgroup2_dir (a->step);
    char name[600], tail[700];
    size_t dl, tl;

    if (!dir)
        return false;
    mirror_name (a->key, name, sizeof (name));
    snprintf (tail, sizeof (tail), "/%s/%s", TR_CGROUP_MIRROR_DIR, name);
    dl = strlen (dir);
    tl = strlen (tail);
    return dl >= tl && !strcmp (dir + dl - tl, tail);
}

/* The directory whose exits a step needs: its cgroup2 one while every
 * task of it is known to be there, else the v1 one the scheduler put
 * every task in; NULL with why set when it has none.
 */
static const char *filter_dir (struct active *a, char *why, size_t size)
{
    const char *dir = tr_step_cgroup2_dir (a->step);

    if (dir && !a->unfiltered)
        return dir;
    if ((dir = tr_step_cgroup1_dir (a->step)))
        return dir;
    if (a->unfiltered)
        snprintf (why, size, "step %s may have processes outside its "
                  "cgroup2 directory", a->key);
    else
        snprintf (why, size, "step %s has no cgroup directory of its own",
                  a->key);
    return NULL;
}

static void update_exit_filter (void)
{
    const char *dirs[TR_TASKSTATS_FILTER_MAX];
    char why[700];
    size_t n = 0, k = 0;
    tr_error_t error;

    files_sync ();
    if (!d.taskstats || xf.held || d.nsteps == 0)
        return;
    why[0] = '\0';
    for (int i = 0; i < d.nsteps && !why[0]; i++) {
        const char *dir = filter_dir (&d.steps[i], why, sizeof (why));
        if (!dir)
            break;
        else if (access (dir, F_OK) < 0 && errno == ENOENT)
            continue; /* removed, so empty: no exit of it is to come */
        else if (n == TR_TASKSTATS_FILTER_MAX)
            snprintf (why, sizeof (why), "more than %d step cgroup "
                      "directories", TR_TASKSTATS_FILTER_MAX);
        else
            dirs[n++] = dir;
    }
    if (why[0]) {
        exit_filter_off (why);
        return;
    }
    if (n == 0)
        return; /* as with no step */
    qsort (dirs, n, sizeof (dirs[0]), cmp_dir);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp (dirs[k - 1], dirs[i]))
            dirs[k++] = dirs[i];
    n = k;
    if (xf.on && n == xf.n) {
        size_t i = 0;
        while (i < n && !strcmp (dirs[i], xf.dirs[i]))
            i++;
        if (i == n)
            return;
    }
    if (tr_taskstats_filter_cgroups (d.taskstats, dirs, n, &error) < 0) {
        /* the old filter is still attached: it may not cover this step */
        logmsg (xf.refused ? LOG_DEBUG : LOG_WARNING, "process exits: "
                "kernel filter refused (%s); every exit on the node is "
                "delivered", tr_error_str (&error));
        xf.refused = true;
        exit_filter_off ("the kernel refused the filter");
        return;
    }
    logmsg (xf.on ? LOG_DEBUG : LOG_INFO, "process exits: only those in "
            "the steps' %zu cgroup directories delivered (kernel "
            "filter)", n);
    xf.on = true;
    xf.said_off = false;
    exit_filter_clear ();
    for (size_t i = 0; i < n; i++) {
        if (!(xf.dirs[i] = strdup (dirs[i]))) {
            /* not remembered: the next update loads it again */
            exit_filter_clear ();
            break;
        }
        xf.n = i + 1;
    }
}

/* Offer each process exit to the active steps; the first that knows
 * the process (or its parent) takes it.
 */
static void offer_exit (const struct tr_exit *ev)
{
    xf.received++;
    for (int i = 0; i < d.nsteps; i++)
        if (tr_step_exit_event (d.steps[i].step, ev) == 1)
            return;
}

/* Exits read from the kernel wait here, in their order, until they are
 * offered: reading a batch is cheap, offering it to thousands of steps
 * is not, so the poll loop offers them in slices of at most
 * EXIT_SLICE_S and serves clients between slices.  The socket is read
 * again once fewer than EXIT_QUEUE_READ wait; beyond that the kernel
 * holds them (its overruns are counted as lost, as before).
 */
#define EXIT_SLICE_S 0.02
#define EXIT_QUEUE_READ 8192
#define EXIT_QUEUE_KEEP 1024 /* entries kept allocated once empty */

static struct {
    struct tr_exit *ev;
    size_t head, n, cap; /* waiting: ev[head .. n-1] */
} xq;

static void offer_queued (double budget);

static void on_exit_event (const struct tr_exit *ev, void *arg)
{
    (void)arg;
    if (xq.n == xq.cap && xq.head > 0) {
        memmove (xq.ev, xq.ev + xq.head, (xq.n - xq.head) * sizeof (*xq.ev));
        xq.n -= xq.head;
        xq.head = 0;
    }
    if (xq.n == xq.cap) {
        size_t cap = xq.cap ? xq.cap * 2 : 256;
        struct tr_exit *n = realloc (xq.ev, cap * sizeof (*n));
        if (!n) {
            /* no room: the waiting ones first, in order, then this one */
            offer_queued (-1);
            offer_exit (ev);
            return;
        }
        xq.ev = n;
        xq.cap = cap;
    }
    xq.ev[xq.n++] = *ev;
}

/* Offer waiting exits for at most budget seconds (all of them when
 * budget < 0).
 */
static void offer_queued (double budget)
{
    double t0 = budget >= 0 ? tr_when_monotonic () : 0;

    while (xq.head < xq.n) {
        if (budget >= 0 && tr_when_monotonic () - t0 >= budget)
            return;
        offer_exit (&xq.ev[xq.head++]);
    }
    xq.head = xq.n = 0;
    if (xq.cap > EXIT_QUEUE_KEEP) {
        free (xq.ev);
        xq.ev = NULL;
        xq.cap = 0;
    }
}

static bool exits_waiting (void)
{
    return xq.head < xq.n;
}

/* Read what the kernel reported into the queue.  Events lost to an
 * overrun could have been any step's: every running step is told.
 */
static void read_exits (void)
{
    uint64_t lost;

    (void)tr_taskstats_read (d.taskstats, on_exit_event, NULL);
    if ((lost = tr_taskstats_lost (d.taskstats)) > d.exits_lost) {
        logmsg (LOG_WARNING, "%llu process exit events lost (receive "
                "buffer overrun); the running steps' process tables are "
                "marked incomplete",
                (unsigned long long)(lost - d.exits_lost));
        for (int i = 0; i < d.nsteps; i++)
            tr_step_exits_lost (d.steps[i].step, lost - d.exits_lost);
        d.exits_lost = lost;
    }
}

/* Take every process exit the kernel reported so far: before a step's
 * final reading, all its exits must have been offered.
 */
static void drain_exits (void)
{
    if (!d.taskstats)
        return;
    read_exits ();
    offer_queued (-1);
}

/* The poll loop's share: read when the queue is short, then offer for
 * at most EXIT_SLICE_S.
 */
static void drain_exits_slice (bool readable)
{
    if (!d.taskstats)
        return;
    if (readable && xq.n - xq.head < EXIT_QUEUE_READ)
        read_exits ();
    offer_queued (EXIT_SLICE_S);
}

/* An explicit attach (LSF, PBS, other schedulers' prologues):
 *   {"cgroup":"/lsf/cl/job.42"}   a cgroup named as in /proc/PID/cgroup
 *   {"tree":true}                 pid and its descendants
 *   {"session":S, "env":"PBS_JOBID=7.srv"}  a process set, with pid (if
 *                                 any) as a further root
 *   "cgroup_name":"7.srv"         with a process set: the name of the
 *                                 job's own cgroup, followed instead
 *                                 once a member turns up in it
 *   "exclude":[PID,...]           the sender's own processes in the
 *                                 job's session or tree (a prologue, a
 *                                 hook's interpreter): never the job's;
 *                                 taken from root only (exclude_own)
 * The first message fixes how the step is followed; later ones (more
 * tasks, more hosts' shells) add task roots, and a cgroup named later
 * replaces a process set (a PBS execjob_launch after execjob_begin).
 */
static int attach_explicit (tr_step_t *step,
                            json_t *attach,
                            pid_t pid,
                            int task,
                            tr_error_t *error)
{
    const char *cg = NULL, *env = NULL, *cgname = NULL;
    json_int_t sid = 0;
    json_t *excl = NULL;
    int tree = 0;
    json_error_t jerr;

    if (json_unpack_ex (attach, &jerr, JSON_STRICT,
                        "{s?s s?b s?I s?s s?s s?o}", "cgroup", &cg, "tree",
                        &tree, "session", &sid, "env", &env, "cgroup_name",
                        &cgname, "exclude", &excl) < 0) {
        errno = EINVAL;
        return tr_errprintf (error, "bad attach: %s", jerr.text);
    }
    if (!tr_step_attached (step) || (cg && !tr_step_in_cgroup (step))) {
        if (cg) {
            struct tr_cgroup_paths p;
            if (tr_cgroup_resolve_path (cg, &p, error) < 0
                || tr_step_attach_paths (step, &p, error) < 0)
                return -1;
        }
        else if (sid > 0 || env) {
            struct tr_proc_match m;
            memset (&m, 0, sizeof (m));
            m.session = sid > 0 && sid <= INT_MAX ? (pid_t)sid : 0;
            if (env && snprintf (m.env, sizeof (m.env), "%s", env)
                           >= (int)sizeof (m.env)) {
                errno = EINVAL;
                return tr_errprintf (error, "attach env too long");
            }
            if (cgname && (strchr (cgname, '/')
                           || snprintf (m.cgroup_name, sizeof (m.cgroup_name),
                                        "%s", cgname)
                                  >= (int)sizeof (m.cgroup_name))) {
                errno = EINVAL;
                return tr_errprintf (error, "bad attach cgroup_name");
            }
            if (tr_step_attach_match (step, &m, error) < 0)
                return -1;
        }
        else if (tree && pid > 0) {
            if (tr_step_attach_tree (step, pid) < 0
                || (cgname && tr_step_watch_cgroup (step, cgname) < 0))
                return tr_errprintf (error, "%s", strerror (errno));
            return 0;
        }
        else {
            errno = EINVAL;
            return tr_errprintf (error, "attach names no cgroup, session, "
                                 "environment or tree root");
        }
    }
    if (pid > 0 && tr_step_add_task (step, task, pid) < 0)
        return tr_errprintf (error, "adding task: %s", strerror (errno));
    return 0;
}

/* A Slurm step's request as tracerd holds it: the time limit and the
 * GPUs come from the controller (apply_job), never from what the plugin
 * read in the job's environment.
 * Other schedulers' hooks run as root from the server's own job
 * attributes; their "gpus" (message or request) is kept.
 */
static json_t *trusted_request (json_t *id, json_t *req, json_t *msg)
{
    const char *s = json_string_value (json_object_get (id, "scheduler"));
    json_t *gpus = json_object_get (msg, "gpus");

    if (!req && (req = json_object ())
        && json_object_set_new (msg, "request", req) < 0)
        req = NULL;
    if (!json_is_object (req))
        return req;
    if (!s || strcmp (s, "slurm")) {
        if (json_is_string (gpus) && !json_object_get (req, "gpus"))
            (void)json_object_set (req, "gpus", gpus);
        return req;
    }
    (void)json_object_del (req, "gpus");
    (void)json_object_del (req, "time_limit_s");
    (void)json_object_del (req, "time_limit");
    return req;
}

/* attach.exclude: processes of a root prologue or hook (tracer-prolog,
 * its qstat, pbs_python) that run in the job's session or below its
 * starter.  Only root's word counts: a job starter could otherwise hide
 * its own job's processes.
 */
static void exclude_own (struct active *a, json_t *excl, const uid_t *starter)
{
    size_t i;
    json_t *v;

    if (!json_is_array (excl))
        return;
    if (starter) {
        logmsg (LOG_WARNING, "step %s: uid %u may not exclude processes; "
                "ignored", a->key, (unsigned)*starter);
        return;
    }
    json_array_foreach (excl, i, v)
    {
        json_int_t pid = json_integer_value (v);
        if (json_is_integer (v) && pid > 1 && pid <= INT_MAX)
            (void)tr_step_exclude (a->step, (pid_t)pid);
    }
}

static void handle_step_start (int fd, json_t *msg, const uid_t *starter)
{
    json_t *id = json_object_get (msg, "identity");
    json_t *req = json_object_get (msg, "request");
    json_t *tags = json_object_get (msg, "tags");
    json_int_t pid = json_integer_value (json_object_get (msg, "pid"));
    json_int_t task = json_integer_value (json_object_get (msg, "task_id"));
    double interval = json_number_value (json_object_get (msg, "interval_s"));
    json_t *attach = json_object_get (msg, "attach");
    char key[600];
    struct active *a;
    tr_error_t error;

    default_cluster (id);
    if (!json_is_object (id)) {
        reply (fd, false, "identity missing");
        return;
    }
    /* Names from the node's own user database, the rest of a Slurm
     * step's identity from the controller (below); oversized text is
     * cut and flagged, never a reason to leave a step untraced.
     */
    if (tr_jobstate_trust_identity (id, slurm_cluster ()) < 0) {
        reply (fd, false, "out of memory");
        return;
    }
    req = trusted_request (id, req, msg);
    /* an unprivileged job starter naming GPUs could show other jobs' */
    if (starter && json_is_object (req))
        (void)json_object_del (req, "gpus");
    if (tr_record_validate_section ("identity", id, &error) < 0
        || (req && tr_record_validate_section ("request", req, &error) < 0)
        || (tags && tr_record_validate_section ("tags", tags, &error) < 0)) {
        logmsg (LOG_ERR, "step_start refused: %s", tr_error_str (&error));
        reply (fd, false, error.text);
        return;
    }
    if (attach && !json_is_object (attach)) {
        reply (fd, false, "attach is not an object");
        return;
    }
    /* with an explicit attach the job may have no process yet (PBS and
     * LSF prologues run before the job starts)
     */
    if ((pid <= 0 && !attach) || pid < 0 || task < 0
        || step_key (id, key, sizeof (key)) < 0) {
        reply (fd, false, "bad pid, task_id or identity");
        return;
    }
    if ((a = find_step (key)) && starter
        && (!a->by_starter || a->starter_uid != *starter)) {
        logmsg (LOG_WARNING, "step %s: uid %u may not add to it", key,
                (unsigned)*starter);
        reply (fd, false, "permission denied");
        return;
    }
    if (!a) {
        tr_step_t *step;
        if (d.nsteps == MAX_STEPS) {
            logmsg (LOG_ERR, "step %s refused: %d steps active", key,
                    MAX_STEPS);
            reply (fd, false, "too many active steps");
            return;
        }
        if (!(step = tr_step_create (id, req, tags, "tracerd",
                                     tr_conf_step_interval (d.conf,
                                                            interval)))) {
            reply (fd, false, "out of memory");
            return;
        }
        configure_step (step, key,
                        json_object_get (tr_step_request (step), "gpus"));
        a = &d.steps[d.nsteps++];
        memset (a, 0, sizeof (*a));
        snprintf (a->key, sizeof (a->key), "%s", key);
        index_step (a);
        a->step = step;
        a->by_starter = starter != NULL;
        a->starter_uid = starter ? *starter : 0;
        a->conditional = json_is_true (json_object_get (msg, "conditional"));
        a->next = tr_when_monotonic () + tr_step_interval (step);
        a->snapped = 0;  /* first snapshot at the first reading */
        a->created = tr_when_monotonic ();
        a->exits_before = xf.received;
        logmsg (LOG_INFO, "step %s started", key);
        {
            const char *job;
            json_t *fields;
            if (slurm_job (id, &job)) {
                if ((fields = cached_fields (job)))
                    apply_job (step, key, fields);
                else
                    (void)ask_scheduler (job);
            }
        }
    }
    if (!json_is_true (json_object_get (msg, "conditional")))
        note_traced_job (id);
    /* Before the reply: the task waits for it before it execs, so the
     * move into the mirror directory covers all it will do.
     */
    if (attach) {
        exclude_own (a, json_object_get (attach, "exclude"), starter);
        if (attach_explicit (a->step, attach, (pid_t)pid, (int)task,
                             &error) < 0) {
            logmsg (LOG_ERR, "step %s: %s", key, tr_error_str (&error));
            update_exit_filter ();
            reply (fd, false, error.text);
            if (tr_step_ntasks (a->step) == 0 && !tr_step_attached (a->step))
                drop_step (a);
            return;
        }
    }
    else if (mirror_wanted ()) {
        struct tr_cgroup_paths mp;
        char name[600];
        memset (&mp, 0, sizeof (mp));
        mirror_name (key, name, sizeof (name));
        if (tr_cgroup_mirror_attach (name, (pid_t)pid, &mp, &error) < 0) {
            int err = errno;
            /* ENOTSUP: no hybrid host, the task is in its step's own */
            a->unfiltered = a->unfiltered || err != ENOTSUP;
            if (err != ENOTSUP || d.conf->psi_mirror == TR_PSI_MIRROR_ON)
                logmsg (LOG_WARNING, "step %s: no per-step cgroup2 "
                        "directory: %s", key, tr_error_str (&error));
        }
    }
    if (!attach
        && tr_step_attach_pid (a->step, (pid_t)pid, (int)task, &error) < 0) {
        logmsg (LOG_ERR, "step %s task %d: %s", key, (int)task,
                tr_error_str (&error));
        update_exit_filter ();
        reply (fd, false, error.text);
        /* refused: the hook runs it untraced, so no record of it */
        if (tr_step_ntasks (a->step) == 0 && !tr_step_attached (a->step))
            drop_step (a);
        return;
    }
    (void)tr_step_sample (a->step, NULL);
    /* A prologue that names no process (PBS, LSF pre-exec) runs before
     * the job: what it finds now may be only the prologue itself, so
     * only the periodic checks count the job as seen.
     */
    if (pid > 0)
        a->seen = a->seen || tr_step_alive (a->step);
    save_state (a);
    /* the kernel must deliver this step's exits before its task runs */
    update_exit_filter ();
    reply (fd, true, NULL);
}

/* The active step a task_exit or step_end message names, or NULL after
 * answering the hook why not.
 */
static struct active *msg_step (int fd, json_t *msg, int level)
{
    json_t *id = json_object_get (msg, "identity");
    const char *op = json_string_value (json_object_get (msg, "op"));
    char key[600];
    struct active *a;

    default_cluster (id);
    if (!json_is_object (id) || step_key (id, key, sizeof (key)) < 0) {
        reply (fd, false, "bad identity");
        return NULL;
    }
    if (!(a = find_step (key))) {
        logmsg (level, "%s for unknown step %s", op, key);
        reply (fd, false, "unknown step");
    }
    return a;
}

/* The late request being served: how long ago it was sent (seconds),
 * 0 for a fresh one.
 */
static double request_late;

/* An end that reached tracerd after its hook had given up (the daemon
 * was stopped or stuck): the step's cgroup may be gone by now, and its
 * last reading is then older than its end.  Only a final reading from a
 * step cgroup still there is exact; otherwise the record says so.
 */
static void late_end (struct active *a, int rc)
{
    char why[200];

    if (request_late <= 0 || (rc == 0 && tr_step_in_cgroup (a->step)
                              && tr_step_alive (a->step)))
        return;
    snprintf (why, sizeof (why), "the step's end reached tracerd %.0f s "
              "late, after its hook had given up; figures are from the "
              "last reading before it", request_late);
    logmsg (LOG_WARNING, "step %s: %s", a->key, why);
    tr_step_mark_incomplete (a->step, why);
}

static void handle_task_exit (int fd, json_t *msg)
{
    json_int_t task = json_integer_value (json_object_get (msg, "task_id"));
    json_int_t pid = json_integer_value (json_object_get (msg, "pid"));
    json_int_t st = json_integer_value (json_object_get (msg, "wait_status"));
    bool last = json_is_true (json_object_get (msg, "last"));
    struct active *a;
    tr_error_t error;

    if (!(a = msg_step (fd, msg, LOG_WARNING)))
        return;
    tr_step_task_exit (a->step, (int)task, (pid_t)pid, (int)st);
    if (last || tr_step_nexited (a->step) >= tr_step_ntasks (a->step)) {
        /* The final reading must happen before the hook returns: the
         * step cgroup disappears right after the last task_exit.
         */
        int rc = tr_step_finish (a->step, &error);
        if (rc < 0)
            logmsg (LOG_WARNING, "step %s: final reading: %s", a->key,
                    tr_error_str (&error));
        late_end (a, rc);
        reply (fd, true, NULL);
        drain_exits ();
        retire_step (a);
        return;
    }
    save_state (a);
    reply (fd, true, NULL);
}

/* What an epilogue knows better than its prologue did (PBS's prologue
 * gets three words, its epilogue ten): identity and request members not
 * yet set, and the outcome from the job's exit status.
 */
static int end_details (struct active *a, json_t *msg, tr_error_t *error)
{
    json_t *id = json_object_get (msg, "identity");
    json_t *req = json_object_get (msg, "request");
    json_t *oc = json_object_get (msg, "outcome");
    json_t *mine[2] = { tr_step_identity (a->step),
                        tr_step_request (a->step) };
    json_t *given[2] = { id, req };
    const char *key;
    json_t *v;

    if ((json_object_size (id) > 0
         && tr_record_validate_section ("identity", id, error) < 0)
        || (req && tr_record_validate_section ("request", req, error) < 0))
        return -1;
    for (int i = 0; i < 2; i++) {
        if (!mine[i])
            continue;
        json_object_foreach (given[i], key, v)
        {
            if (!json_object_get (mine[i], key)
                && json_object_set (mine[i], key, v) < 0) {
                errno = ENOMEM;
                return tr_errprintf (error, "out of memory");
            }
        }
    }
    if (oc && tr_step_set_outcome (a->step, oc) < 0)
        return tr_errprintf (error, "bad outcome: %s", strerror (errno));
    return 0;
}

/* The end of a step with no task exits to wait for (the extern step), or
 * of one whose tasks did not all report: the hook's last word.
 */
static void handle_step_end (int fd, json_t *msg, const uid_t *starter)
{
    struct active *a;
    tr_error_t error;

    if (!(a = msg_step (fd, msg, LOG_DEBUG)))
        return;
    if (starter && (!a->by_starter || a->starter_uid != *starter)) {
        logmsg (LOG_WARNING, "step_end for %s refused: uid %u did not start "
                "it", a->key, (unsigned)*starter);
        reply (fd, false, "permission denied");
        return;
    }
    if (end_details (a, msg, &error) < 0) {
        logmsg (LOG_WARNING, "step %s: %s", a->key, tr_error_str (&error));
        reply (fd, false, error.text);
        return;
    }
    /* The extern step's cgroup is usually gone by now: the last
     * periodic reading stands.
     */
    {
        int rc = tr_step_end (a->step, &error);
        if (rc < 0)
            logmsg (LOG_DEBUG, "step %s: final reading: %s", a->key,
                    tr_error_str (&error));
        late_end (a, rc);
    }
    reply (fd, true, NULL);
    drain_exits ();
    retire_step (a);
}

/* A job starter running as the job's user (LSF JOB_STARTER), allowed by
 * daemon.job_starters: it may register only itself, as its own uid, for
 * an LSF job of this daemon's cluster on this node, followed as its own
 * process tree (and the job's cgroup when it sits in one that names the
 * job), and end only what it registered; never a job another user has
 * steps or spooled records of here.  Nothing else from an unprivileged
 * peer is heard.
 */
static void handle_starter (int fd, json_t *msg, const char *op, uid_t uid,
                            pid_t pid)
{
    json_t *id = json_object_get (msg, "identity");
    json_t *attach = json_object_get (msg, "attach");
    const char *sched = json_string_value (json_object_get (id, "scheduler"));
    struct passwd *pw = getpwuid (uid);
    char host[256];
    const char *job;
    bool other = false;
    tr_error_t error;
    int mine = 0;

    if (!strcmp (op, "ping")) {
        reply (fd, true, NULL);
        return;
    }
    if (strcmp (op, "step_start") && strcmp (op, "step_end")) {
        reply (fd, false, "permission denied");
        return;
    }
    if (!json_is_object (id) || !sched || strcmp (sched, "lsf")) {
        logmsg (LOG_WARNING, "uid %u: a job starter may only speak for an "
                "LSF job", (unsigned)uid);
        reply (fd, false, "permission denied");
        return;
    }
    /* who the job belongs to is the kernel's word, not the message's */
    json_object_set_new (id, "uid", json_integer (uid));
    json_object_del (id, "user");
    json_object_del (id, "gid");
    if (pw) {
        json_object_set_new (id, "user", json_string (pw->pw_name));
        json_object_set_new (id, "gid", json_integer (pw->pw_gid));
    }
    /* and where its records go is this daemon's: its cluster and its
     * node, so that a starter can name no other place in the store
     */
    if (gethostname (host, sizeof (host)) < 0)
        host[0] = '\0';
    host[sizeof (host) - 1] = '\0';
    host[strcspn (host, ".")] = '\0';
    json_object_set_new (id, "cluster", json_string (d.conf->cluster_name));
    json_object_set_new (id, "node", json_string (host));
    if (!strcmp (op, "step_end")) {
        handle_step_end (fd, msg, &uid);
        return;
    }
    /* A job whose steps here or whose records spooled here are another
     * user's is not this starter's to speak for: its record would take
     * the other's place.  (The store never lets a record of one uid
     * replace another's either: tr_store_put sets it aside.)
     */
    job = json_string_value (json_object_get (id, "job_id"));
    for (int i = 0; job && i < d.nsteps && !other; i++) {
        json_t *sid = tr_step_identity (d.steps[i].step);
        json_t *suid = json_object_get (sid, "uid");
        const char *c = json_string_value (json_object_get (sid, "cluster"));
        const char *j = json_string_value (json_object_get (sid, "job_id"));

        other = c && j && !strcmp (c, d.conf->cluster_name)
                && !strcmp (j, job)
                && (!json_is_integer (suid)
                    || json_integer_value (suid) != (json_int_t)uid);
    }
    if (job && !other
        && tr_store_job_has_other_uid (d.spool, d.conf->cluster_name, job, uid,
                                       &error)
               != 0)
        other = true;
    if (!host[0] || !job || other) {
        logmsg (LOG_WARNING, "uid %u: job starter refused (%s)",
                (unsigned)uid, !host[0] ? "no host name"
                               : !job   ? "no job id"
                                        : "the job is another user's");
        reply (fd, false, "permission denied");
        return;
    }
    for (int i = 0; i < d.nsteps; i++)
        mine += d.steps[i].by_starter && d.steps[i].starter_uid == uid;
    if (json_integer_value (json_object_get (msg, "pid")) != pid
        || !json_is_object (attach)
        || !json_is_true (json_object_get (attach, "tree"))
        || json_object_size (attach)
               != 1 + (json_object_get (attach, "cgroup_name") != NULL)
        || mine >= STARTER_MAX_STEPS) {
        logmsg (LOG_WARNING, "uid %u: job starter refused (%s)",
                (unsigned)uid, mine >= STARTER_MAX_STEPS
                                   ? "too many steps of this user"
                                   : "it may follow only its own process");
        reply (fd, false, "permission denied");
        return;
    }
    handle_step_start (fd, msg, &uid);
}

/* Clients are served from the loop, never waited for: a connection is
 * accepted at once (non-blocking), its one message read when poll says
 * it is there, and the connection closed unanswered at its deadline.
 * Users other than root (job starters, notify_uids) get at most
 * CONNS_PER_UID connections each and CONNS_UNPRIVILEGED together, so
 * idle connections cannot hold the loop or crowd out root's hooks.
 */
#define MAX_CONNS 128
#define CONNS_PER_UID 8
#define CONNS_UNPRIVILEGED (MAX_CONNS / 2)
#define CONN_DEADLINE_S 1.0
/* at most this many accepted per wakeup, so that a flood of connects
 * does not keep the loop from sampling
 */
#define ACCEPT_BURST 64

static struct conn {
    int fd;
    uid_t uid;
    pid_t pid;
    bool starter;
    double deadline;
} conns[MAX_CONNS];
static int nconns;
static unsigned long conns_refused;  /* over a limit, since the last log */

static void close_conn (int i)
{
    close (conns[i].fd);
    conns[i] = conns[--nconns];
}


static void dispatch (struct conn *c, json_t *msg)
{
    const char *op = json_string_value (json_object_get (msg, "op"));
    int fd = c->fd;
    double late = 0;

    request_late = 0;
    if (op && tr_proto_stale (msg, tr_proto_clock (), &late)) {
        /* its caller gave up and went on untraced: a start acted upon
         * now would record a step the hook called untraced
         */
        if (!strcmp (op, "step_start")) {
            char key[600];
            json_t *id = json_object_get (msg, "identity");
            default_cluster (id);
            logmsg (LOG_WARNING, "step_start for %s refused: sent %.1f s "
                    "ago, after its caller's timeout of %lld ms",
                    step_key (id, key, sizeof (key)) == 0 ? key : "?", late,
                    (long long)json_integer_value (
                        json_object_get (msg, "timeout_ms")));
            reply (fd, false, "stale request");
            return;
        }
        request_late = late;
    }
    if (!op)
        reply (fd, false, "missing op");
    else if (c->starter)
        handle_starter (fd, msg, op, c->uid, c->pid);
    else if (!strcmp (op, "step_start"))
        handle_step_start (fd, msg, NULL);
    else if (!strcmp (op, "task_exit"))
        handle_task_exit (fd, msg);
    else if (!strcmp (op, "step_end"))
        handle_step_end (fd, msg, NULL);
    else if (!strcmp (op, "ping"))
        reply (fd, true, NULL);
    else
        reply (fd, false, "unknown op");
    request_late = 0;
}

/* Serve connection i if its message has arrived. */
static void serve_conn (int i)
{
    tr_error_t error;
    json_t *msg;

    if (!(msg = tr_proto_recv (conns[i].fd, &error))) {
        if (errno == EAGAIN)
            return;
        if (errno != ECONNRESET)
            logmsg (LOG_WARNING, "bad message: %s (uid %u)", error.text,
                    (unsigned)conns[i].uid);
        close_conn (i);
        return;
    }
    dispatch (&conns[i], msg);
    json_decref (msg);
    /* dispatch adds no connection: i is still this one */
    close_conn (i);
}

/* Take every waiting connection (up to ACCEPT_BURST). */
static void accept_clients (double now)
{
    for (int n = 0; n < ACCEPT_BURST; n++) {
        int fd = accept4 (d.listen_fd, NULL, NULL,
                          SOCK_CLOEXEC | SOCK_NONBLOCK);
        uid_t uid = (uid_t)-1;
        pid_t pid = 0;
        bool starter = false;
        int mine = 0, unpriv = 0;

        if (fd < 0 && (errno == EMFILE || errno == ENFILE)
            && d.spare_fd >= 0) {
            /* out of descriptors: a connection left in the backlog
             * would wake the loop at once, forever; refuse it instead
             */
            close (d.spare_fd);
            if ((fd = accept4 (d.listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                reply (fd, false, "busy");
                close (fd);
            }
            d.spare_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
            if (conns_refused++ == 0)
                logmsg (LOG_ERR, "out of file descriptors: connection "
                        "refused");
            continue;
        }
        if (fd < 0)
            return;
        if (!peer_allowed (fd, &uid, &pid)) {
            if (!d.conf->job_starters) {
                logmsg (LOG_WARNING, "refused connection from uid %d",
                        (int)uid);
                reply (fd, false, "permission denied");
                close (fd);
                continue;
            }
            starter = true;
        }
        for (int i = 0; i < nconns; i++) {
            mine += conns[i].uid == uid;
            unpriv += conns[i].uid != 0;
        }
        if (nconns == MAX_CONNS
            || (uid != 0
                && (mine >= CONNS_PER_UID || unpriv >= CONNS_UNPRIVILEGED))) {
            if (conns_refused++ == 0)
                logmsg (LOG_WARNING, "connection from uid %u refused: %s",
                        (unsigned)uid, nconns == MAX_CONNS
                                           ? "too many connections"
                                           : "too many connections of "
                                             "unprivileged users");
            reply (fd, false, "busy");
            close (fd);
            continue;
        }
        conns[nconns++] = (struct conn){ .fd = fd, .uid = uid, .pid = pid,
                                         .starter = starter,
                                         .deadline = now + CONN_DEADLINE_S };
        /* the message is often there already */
        serve_conn (nconns - 1);
    }
}

/* Close the connections whose message did not come in time; return
 * the earliest deadline left (or later).
 */
static double expire_conns (double now, double later)
{
    static double next_log;

    for (int i = nconns - 1; i >= 0; i--) {
        if (now >= conns[i].deadline) {
            logmsg (LOG_DEBUG, "uid %u sent nothing within %.0f s; closed",
                    (unsigned)conns[i].uid, CONN_DEADLINE_S);
            close_conn (i);
        }
        else if (conns[i].deadline < later)
            later = conns[i].deadline;
    }
    /* one line per minute at most, however long a flood lasts */
    if (conns_refused > 0 && now >= next_log) {
        if (conns_refused > 1)
            logmsg (LOG_WARNING, "%lu more connections refused over the "
                    "limits", conns_refused - 1);
        conns_refused = 0;
        next_log = now + 60;
    }
    return later;
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
 * now, for the forwarder to write.  A step that is recorded only if its
 * job has another step here (the extern step) is left out until then.
 */
static void live_pass (double now)
{
    double interval = d.conf->store_live_interval_s;
    tr_strpool_t *pool = NULL;
    tr_stepsum_t *rows = NULL;
    const tr_stepsum_t **v = NULL;
    struct tr_livesum_file *files = NULL;
    struct timespec ts;
    double now_ms;
    size_t n = 0;
    ssize_t nf;

    if (!(interval > 0) || now < live.next)
        return;
    clock_gettime (CLOCK_REALTIME, &ts);
    now_ms = 1000.0 * (double)ts.tv_sec + (double)ts.tv_nsec / 1e6;
    live.next = now + interval;
    if (d.nsteps == 0 && live.nfiles == 0 && live.nplaces == 0)
        return;
    if (d.nsteps > 0
        && (!(pool = tr_strpool_create ())
            || !(rows = calloc ((size_t)d.nsteps, sizeof (*rows)))
            || !(v = calloc ((size_t)d.nsteps, sizeof (*v)))))
        goto nomem;
    for (int i = 0; i < d.nsteps; i++) {
        struct active *a = &d.steps[i];
        json_t *rec;

        if (a->conditional && !job_traced (tr_step_identity (a->step)))
            continue;
        if (!(rec = tr_step_live_record (a->step)))
            goto nomem;
        if (tr_livesum_row (&rows[n], rec, now_ms, pool) < 0) {
            json_decref (rec);
            goto nomem;
        }
        json_decref (rec);
        v[n] = &rows[n];
        n++;
    }
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
    if (!d.forward_failing)
        d.next_forward = 0;
    goto out;
nomem:
    logmsg (LOG_WARNING, "live summaries: out of memory");
out:
    free (v);
    free (rows);
    tr_strpool_destroy (pool);
}

/* mail.on_stall: the notices to users whose step stalled.  tracerd
 * composes each (tr_mail_stall_text, tr_mail_compose) and queues it; a
 * mailer child hands the queue to mail.sendmail (tr_mail_send, no
 * shell, at most MAIL_TIMEOUT_S each) and exits, so a slow or hung MTA
 * holds the mailer, never tracerd.  At most MAIL_QUEUE_MAX wait; more
 * are dropped and counted in the log.  The recipient is the name of the
 * step's uid on this node (identity.user, with mail.domain), never an
 * address the job gives.
 */
#define MAIL_QUEUE_MAX 64
#define MAIL_TIMEOUT_S 30.0

static struct {
    char *msg[MAIL_QUEUE_MAX];
    size_t len[MAIL_QUEUE_MAX];
    char to[MAIL_QUEUE_MAX][336]; /* user (64) @ mail.domain (256) */
    char step[MAIL_QUEUE_MAX][64];
    int n;
    pid_t pid;           /* the mailer, or -1 */
    unsigned long dropped;
} mq = { .pid = -1 };

/* The job a step belongs to, for telling its steps on this node: the
 * leader of a heterogeneous job, else its own job, with its cluster.
 */
static bool same_job (json_t *a, json_t *b)
{
    const char *ja = json_string_value (json_object_get (a, "het_job_id"));
    const char *jb = json_string_value (json_object_get (b, "het_job_id"));
    const char *ca = json_string_value (json_object_get (a, "cluster"));
    const char *cb = json_string_value (json_object_get (b, "cluster"));

    if (!ja)
        ja = json_string_value (json_object_get (a, "job_id"));
    if (!jb)
        jb = json_string_value (json_object_get (b, "job_id"));
    return ja && jb && ca && cb && !strcmp (ja, jb) && !strcmp (ca, cb);
}

/* A step of a job whose other steps here moved is not stalled: a batch
 * script waiting for its srun steps is as busy as they are.  Looked at
 * only once the step's own processes have made no progress for
 * sampling.stall_after.
 */
static void job_progress (struct active *a)
{
    json_t *id;
    double t;
    int64_t ms;

    if (!tr_step_stalled (a->step, NULL))
        return;
    id = tr_step_identity (a->step);
    for (int i = 0; i < d.nsteps; i++) {
        struct active *b = &d.steps[i];

        if (b != a && same_job (id, tr_step_identity (b->step))
            && tr_step_last_progress (b->step, &t, &ms))
            tr_step_progress_touch (a->step, t, ms);
    }
}

static void stall_notice (struct active *a)
{
    const char *to[1];
    json_t *rec = NULL, *id;
    const char *user;
    char subject[256], *text = NULL, *msg = NULL;
    size_t len = 0;
    tr_error_t error;

    if (!d.conf->mail.on_stall || a->stall_mailed
        || !tr_step_stalled (a->step, NULL)
        || (a->conditional && !job_traced (tr_step_identity (a->step))))
        return;
    a->stall_mailed = true;
    if (mq.n == MAIL_QUEUE_MAX) {
        mq.dropped++;
        logmsg (LOG_WARNING, "step %s stalled: its notice is dropped (%d "
                "wait for the mailer; %lu dropped)", a->key, MAIL_QUEUE_MAX,
                mq.dropped);
        return;
    }
    id = tr_step_identity (a->step);
    user = json_string_value (json_object_get (id, "user"));
    if (!user || tr_mail_user_address (mq.to[mq.n], sizeof (mq.to[mq.n]),
                                       user, d.conf->mail.domain) < 0) {
        logmsg (LOG_WARNING, "step %s stalled: no notice, uid %lld has no "
                "usable mail address on this node", a->key,
                (long long)json_integer_value (json_object_get (id, "uid")));
        return;
    }
    to[0] = mq.to[mq.n];
    if (!(rec = tr_step_live_record (a->step))
        || !(text = tr_mail_stall_text (rec, subject, sizeof (subject)))) {
        logmsg (LOG_WARNING, "step %s stalled: no notice: %s", a->key,
                strerror (errno));
        goto out;
    }
    {
        struct tr_mail_msg m = {
            .from = d.conf->mail.from,
            .to = to,
            .nto = 1,
            .subject = subject,
            .text = text,
            .job_id = json_string_value (json_object_get (id, "job_id")),
        };

        if (!(msg = tr_mail_compose (&m, time (NULL), &len, &error))) {
            logmsg (LOG_WARNING, "step %s stalled: no notice: %s", a->key,
                    tr_error_str (&error));
            goto out;
        }
    }
    mq.msg[mq.n] = msg;
    mq.len[mq.n] = len;
    snprintf (mq.step[mq.n], sizeof (mq.step[mq.n]), "%s", a->key);
    mq.n++;
    logmsg (LOG_INFO, "step %s stalled: its user is told (%s)", a->key,
            to[0]);
out:
    free (text);
    json_decref (rec);
}

static void mailer_start (void)
{
    pid_t pid;

    if (mq.n == 0 || mq.pid > 0)
        return;
    fflush (NULL);
    if ((pid = fork ()) < 0) {
        logmsg (LOG_ERR, "mail: fork: %s; will retry", strerror (errno));
        return;
    }
    if (pid == 0) {
        int failed = 0;

        close (d.listen_fd);
        if (d.taskstats)
            close (tr_taskstats_fd (d.taskstats));
        for (int i = 0; i < mq.n; i++) {
            const char *to[1] = { mq.to[i] };
            tr_error_t error;

            if (tr_mail_send (d.conf->mail.sendmail, d.conf->mail.from, to, 1,
                              mq.msg[i], mq.len[i], MAIL_TIMEOUT_S, &error)
                < 0) {
                logmsg (LOG_WARNING, "step %s: the stall notice to %s was "
                        "not sent: %s", mq.step[i], mq.to[i],
                        tr_error_str (&error));
                failed = 1;
            }
        }
        _exit (failed);
    }
    mq.pid = pid;
    for (int i = 0; i < mq.n; i++)
        free (mq.msg[i]);
    mq.n = 0;
}

static void mailer_reap (void)
{
    int status;

    if (mq.pid > 0 && waitpid (mq.pid, &status, WNOHANG) == mq.pid) {
        if (!WIFEXITED (status))
            logmsg (LOG_WARNING, "mail: the mailer ended by signal %d",
                    WIFSIGNALED (status) ? WTERMSIG (status) : 0);
        mq.pid = -1;
    }
    mailer_start ();
}

/* Sample the steps that are due; return the time of the next one due
 * (at most one daemon interval away, for spool forwarding).  At most
 * SAMPLE_SLICE_S of sampling at a time: with thousands of steps due
 * together, a whole round takes seconds, and clients are served between
 * slices.  A slice cut short returns now, and the next call goes on
 * from the step where it stopped.
 */
#define SAMPLE_SLICE_S 0.02

static double sample_due (double now)
{
    static int cursor;
    double next = now + d.conf->interval_s;
    double t0 = tr_when_monotonic ();

    if (cursor >= d.nsteps)
        cursor = 0;
    for (int k = 0; k < d.nsteps; k++) {
        int i = (cursor + k) % d.nsteps;
        struct active *a = &d.steps[i];
        tr_error_t error;
        if (now >= a->next - SAMPLE_SLACK * tr_step_interval (a->step)) {
            if (tr_when_monotonic () - t0 >= SAMPLE_SLICE_S) {
                cursor = i;
                return now;
            }
            if (tr_step_sample (a->step, &error) < 0)
                logmsg (LOG_DEBUG, "step %s: %s", a->key, error.text);
            /* a job shorter than the reaper's period is seen here */
            else {
                if (!a->seen && tr_step_npids (a->step) > 0)
                    a->seen = true;
                job_progress (a);
                stall_notice (a);
            }
            a->next = now + tr_step_interval (a->step);
            if (now - a->saved >= STATE_SAVE_S)
                save_state (a);
            if (d.conf->snapshot_interval_s > 0
                && now - a->snapped >= d.conf->snapshot_interval_s)
                write_snapshot (a);
        }
        if (a->next < next)
            next = a->next;
    }
    return next;
}

/* A step whose end was never notified (a hook that could not reach
 * tracerd, an epilogue that never ran) must not be followed forever:
 * once its cgroup and processes are gone for two checks in a row, it
 * gets a record marked incomplete with its last readings.
 */
static void reap_ended (double now)
{
    static double next_check;

    if (now < next_check)
        return;
    next_check = now + REAP_CHECK_S;
    for (int i = d.nsteps - 1; i >= 0; i--) {
        struct active *a = &d.steps[i];
        const char *why = NULL;
        if (tr_step_alive (a->step)) {
            a->seen = true;
            a->gone = 0;
            continue;
        }
        if (a->seen && ++a->gone >= 2)
            why = "the step ended without an end notification; figures "
                  "are from its last reading";
        else if (!a->seen && now - a->created >= REAP_NEVER_S)
            why = "no cgroup or process of the step was ever found";
        if (!why)
            continue;
        logmsg (LOG_WARNING, "step %s: %s", a->key, why);
        tr_step_mark_incomplete (a->step, why);
        retire_step (a);
    }
}

/* Resume the steps a previous tracerd left in the state dir.  A step
 * whose cgroup still exists carries on (its counters are cumulative, so
 * nothing is lost); one that ended while no daemon ran gets a record
 * marked incomplete, with its last saved readings.
 */
static void resume_steps (void)
{
    DIR *dir;
    struct dirent *de;
    int fd;

    if (d.state_fd < 0 || (fd = dup (d.state_fd)) < 0)
        return;
    if (!(dir = fdopendir (fd))) {
        close (fd);
        return;
    }
    xf.held = true; /* every resumed step first */
    while ((de = readdir (dir))) {
        size_t len = strlen (de->d_name), n;
        tr_error_t error;
        json_t *st;
        tr_step_t *step;
        char *text, key[600];
        struct active *a;

        if (de->d_name[0] == '.' || len < 6
            || strcmp (de->d_name + len - 5, ".json") != 0)
            continue;
        text = tr_path_read_file (d.state_fd, de->d_name, 1 << 20, &n, &error);
        st = text ? json_loadb (text, n, 0, NULL) : NULL;
        free (text);
        step = st ? tr_step_restore (st, &error) : NULL;
        if (!step) {
            json_decref (st);
            logmsg (LOG_ERR, "state %s unreadable; removed", de->d_name);
            unlinkat (d.state_fd, de->d_name, 0);
            continue;
        }
        if (d.nsteps == MAX_STEPS) {
            json_decref (st);
            tr_step_destroy (step);
            break;
        }
        a = &d.steps[d.nsteps++];
        memset (a, 0, sizeof (*a));
        a->step = step;
        if (step_key (tr_step_identity (step), key, sizeof (key)) < 0) {
            json_decref (st);
            logmsg (LOG_ERR, "state %s: bad identity; removed", de->d_name);
            unlinkat (d.state_fd, de->d_name, 0);
            drop_step (a);
            continue;
        }
        snprintf (a->key, sizeof (a->key), "%s", key);
        if (find_step (key)) {
            logmsg (LOG_ERR, "state %s: step %s already resumed; removed",
                    de->d_name, key);
            unlinkat (d.state_fd, de->d_name, 0);
            a->key[0] = '\0';
            json_decref (st);
            drop_step (a);
            continue;
        }
        index_step (a);
        restore_daemon_state (a, st);
        json_decref (st);
        a->next = tr_when_monotonic ();
        a->saved = tr_when_monotonic ();
        a->snapped = tr_when_monotonic ();
        a->created = tr_when_monotonic ();
        configure_step (step, key,
                        json_object_get (tr_step_request (step), "gpus"));
        a->unfiltered = mirrored (a); /* were all its tasks moved? */
        if (tr_step_alive (step)) {
            logmsg (LOG_NOTICE, "step %s resumed", a->key);
            continue;
        }
        tr_step_mark_incomplete (step, "the step ended while tracerd was "
                                 "not running; figures are from its last "
                                 "saved reading");
        logmsg (LOG_WARNING, "step %s ended while tracerd was down; "
                "recording it as incomplete", a->key);
        retire_step (a);
    }
    closedir (dir);
    xf.held = false;
    update_exit_filter ();
}

/* Process exits (taskstats) and GPUs (NVML), where the node has them. */
/* Kernel evidence: the kernel log (/dev/kmsg), read without blocking
 * from the poll loop, from its end at the start (only new lines), at
 * most KMSG_PER_WAKE records per wake.  A line about a process that is
 * no step's yet (its exit not offered yet) waits KMSG_HOLD_S for it.
 */
#define KMSG_PER_WAKE 64
#define KMSG_HOLD_S 3.0
#define KMSG_HELD_MAX 16
#define KMSG_RECENT_S 30.0
#define KMSG_RETRY_S 0.25

static struct {
    int fd;
    tr_kmsg_parser_t parser;
    uint64_t overwritten;    /* records lost before tracerd read them */
    uint64_t attached, foreign;
    struct {
        struct tr_kmsg_event ev;
        int64_t t_unix_ms;
        double until;
    } held[KMSG_HELD_MAX];
    int nheld;
    double next_retry;       /* held lines are offered again from then */
} kmsg = { .fd = -1 };

static void kmsg_open (void)
{
    if (kmsg.fd >= 0 || !d.conf->kernel_log)
        return;
    tr_kmsg_parser_init (&kmsg.parser);
    kmsg.fd = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (kmsg.fd < 0 || lseek (kmsg.fd, 0, SEEK_END) < 0) {
        logmsg (LOG_WARNING, "kernel log /dev/kmsg unavailable (%s): no "
                "kernel evidence (OOM kills, segfaults, I/O errors) in "
                "records", strerror (errno));
        if (kmsg.fd >= 0)
            close (kmsg.fd);
        kmsg.fd = -1;
        return;
    }
    logmsg (LOG_INFO, "reading kernel evidence from /dev/kmsg");
}

static void kmsg_close (void)
{
    if (kmsg.fd >= 0)
        close (kmsg.fd);
    kmsg.fd = -1;
    kmsg.nheld = 0;
}

/* Give ev to the steps it concerns (scope "step"); a node-wide kind that
 * concerns none goes to every running step (scope "node").  Returns
 * false when it concerns no step.
 */
static bool kmsg_offer (const struct tr_kmsg_event *ev, int64_t t_unix_ms)
{
    bool any = false;

    for (int i = 0; i < d.nsteps; i++) {
        tr_step_t *step = d.steps[i].step;
        /* also a step whose final reading is taken: its record is
         * built next (retire_step)
         */
        if (!tr_step_kmsg_concerns (step, ev, KMSG_RECENT_S))
            continue;
        any = true;
        if (tr_step_kmsg_add (step, ev, tr_kmsg_scope (ev, true, true),
                              t_unix_ms) > 0)
            logmsg (LOG_INFO, "step %s: kernel: %s", d.steps[i].key,
                    ev->text);
    }
    if (any || !tr_kmsg_scope (ev, false, false))
        return any;
    for (int i = 0; i < d.nsteps; i++)
        if (!tr_step_finished (d.steps[i].step))
            (void)tr_step_kmsg_add (d.steps[i].step, ev,
                                    tr_kmsg_scope (ev, false, false),
                                    t_unix_ms);
    return true;
}

/* Lines that waited for their process's exit: offered again, dropped
 * once their time is up (a process of no step: never attached).
 */
static void kmsg_retry (double now)
{
    int k = 0;

    for (int i = 0; i < kmsg.nheld; i++) {
        if (kmsg_offer (&kmsg.held[i].ev, kmsg.held[i].t_unix_ms))
            kmsg.attached++;
        else if (now < kmsg.held[i].until)
            kmsg.held[k++] = kmsg.held[i];
        else {
            kmsg.foreign++;
            logmsg (LOG_DEBUG, "kernel: of no step: %s",
                    kmsg.held[i].ev.text);
        }
    }
    kmsg.nheld = k;
}

static void kmsg_read (void)
{
    char buf[TR_KMSG_LINE_MAX];
    struct tr_kmsg_event ev;
    struct timespec rt, mono;

    for (int n = 0; kmsg.fd >= 0 && n < KMSG_PER_WAKE; n++) {
        ssize_t len = read (kmsg.fd, buf, sizeof (buf));
        int64_t t;
        if (len < 0 && errno == EPIPE) {
            /* overwritten before we read them: count and go on */
            if (kmsg.overwritten++ % 100 == 0)
                logmsg (LOG_NOTICE, "kernel log: lines overwritten before "
                        "tracerd read them (%llu times so far)",
                        (unsigned long long)kmsg.overwritten);
            continue;
        }
        if (len < 0 && errno == EINTR)
            continue;
        if (len < 0 && errno == EINVAL) {
            /* a record longer than the buffer (older kernels do not
             * move past it): skip to the end rather than spin
             */
            kmsg.overwritten++;
            (void)lseek (kmsg.fd, 0, SEEK_END);
            return;
        }
        if (len < 0) {
            if (errno != EAGAIN)
                logmsg (LOG_WARNING, "kernel log: %s", strerror (errno));
            return;
        }
        if (len == 0 || tr_kmsg_parse (&kmsg.parser, buf, (size_t)len,
                                       &ev) <= 0)
            continue;
        clock_gettime (CLOCK_REALTIME, &rt);
        clock_gettime (CLOCK_MONOTONIC, &mono);
        t = tr_kmsg_unix_ms (ev.ts_usec,
                             (int64_t)rt.tv_sec * 1000 + rt.tv_nsec / 1000000,
                             (uint64_t)mono.tv_sec * 1000000
                                 + (uint64_t)mono.tv_nsec / 1000);
        if (kmsg_offer (&ev, t))
            kmsg.attached++;
        else if (ev.pid > 0 && kmsg.nheld < KMSG_HELD_MAX) {
            kmsg.held[kmsg.nheld].ev = ev;
            kmsg.held[kmsg.nheld].t_unix_ms = t;
            kmsg.held[kmsg.nheld].until = tr_when_monotonic () + KMSG_HOLD_S;
            kmsg.nheld++;
            logmsg (LOG_DEBUG, "kernel: waiting for its process: %s",
                    ev.text);
        }
        else
            kmsg.foreign++;
    }
}

/* Before a step's record: the kernel's lines logged so far are read,
 * and those that waited for their process's exit (offered by now) are
 * offered again.
 */
static void kmsg_settle (void)
{
    if (kmsg.fd >= 0)
        kmsg_read ();
    if (kmsg.nheld > 0)
        kmsg_retry (tr_when_monotonic ());
}

static void open_sources (void)
{
    tr_error_t error;

    files_open ();
    kmsg_open ();

    if (d.conf->taskstats) {
        if (!(d.taskstats = tr_taskstats_open (&error)))
            logmsg (LOG_WARNING, "taskstats unavailable (%s): processes "
                    "shorter than an interval may be missed",
                    tr_error_str (&error));
    }
    if (d.conf->gpu) {
        if ((d.gpu = tr_gpu_open (d.conf->nvml_library, &error)))
            logmsg (LOG_INFO, "NVML: %d GPUs, driver %s",
                    tr_gpu_count (d.gpu), tr_gpu_driver (d.gpu));
        else if (errno != ENOENT && errno != ENODEV)
            /* ENOENT: no library; ENODEV: library but no driver loaded */
            logmsg (LOG_WARNING, "NVML: %s; GPUs not recorded",
                    tr_error_str (&error));
    }
}

static void on_signal (int sig)
{
    if (sig == SIGHUP)
        got_hup = 1;
    else
        got_term = 1;
}

/* sampling.delayacct: per-task delay accounting gives the I/O and
 * memory stall of steps without a cgroup2 directory of their own.
 * tracerd turns it on where that is asked for, says so, and never turns
 * it off (other tools may rely on it).  Then the log says what this
 * host measures of a step's stall.
 */
static void apply_delayacct (void)
{
    int layout = tr_cgroup_host_layout ();
    tr_strbuf_t sb = TR_STRBUF_INIT;
    tr_error_t error;
    const char *line, *nl;
    int rc, lost;

    if (d.conf->taskstats
        && tr_delayacct_wanted (d.conf->delayacct, layout,
                                d.conf->psi_mirror)) {
        rc = tr_delayacct_enable (&error);
        if (rc > 0)
            logmsg (LOG_NOTICE, "turned on per-task delay accounting "
                    "(kernel.task_delayacct = 1) for the I/O and memory "
                    "stall of steps on this %s host (sampling.delayacct: "
                    "%s)", tr_cgroup_layout_name (layout),
                    d.conf->delayacct == TR_DELAYACCT_ON ? "on" : "auto");
        else if (rc < 0)
            logmsg (LOG_WARNING, "%s: the I/O and memory stall of steps "
                    "will be unknown", tr_error_str (&error));
    }
    if ((lost = tr_stall_describe (d.conf->delayacct, d.conf->psi_mirror,
                                   d.conf->taskstats, &sb)) < 0) {
        tr_strbuf_free (&sb);
        return;
    }
    for (line = tr_strbuf_str (&sb); *line; line = nl + 1) {
        if (!(nl = strchr (line, '\n')))
            break;
        logmsg (lost > 0 && !strncmp (line, "stall:", 6) ? LOG_WARNING
                                                          : LOG_INFO,
                "%.*s", (int)(nl - line), line);
    }
    tr_strbuf_free (&sb);
}

static void reload (void)
{
    tr_conf_t *conf;

    if (load_conf (&conf) < 0) {
        logmsg (LOG_ERR, "reload failed; keeping the current configuration");
        return;
    }
    tr_conf_destroy (d.conf);
    d.conf = conf;
    open_log ();
    logmsg (LOG_NOTICE, "configuration reloaded from %s", d.conf_path);
    apply_delayacct ();
    if (!d.conf->kernel_log)
        kmsg_close ();
    else
        kmsg_open ();
}

/* Every step keeps its cgroup files open: 2,000 steps need more than
 * the usual 1,024 descriptors.  Root raises its limit to what MAX_STEPS
 * needs; where it cannot, steps beyond what fits open their files for
 * each reading, and FD_RESERVE descriptors stay free for the rest.
 */
static void raise_fd_limit (void)
{
    rlim_t want = (rlim_t)MAX_STEPS * FDS_PER_STEP + FD_RESERVE;
    struct rlimit rl;

    if (getrlimit (RLIMIT_NOFILE, &rl) < 0)
        return;
    if (rl.rlim_cur < want) {
        struct rlimit up = { .rlim_cur = want,
                             .rlim_max = rl.rlim_max > want ? rl.rlim_max
                                                            : want };
        if (setrlimit (RLIMIT_NOFILE, &up) == 0)
            rl = up;
        else if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
            (void)setrlimit (RLIMIT_NOFILE, &rl);
            (void)getrlimit (RLIMIT_NOFILE, &rl);
        }
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        long keep = (long)rl.rlim_cur - FD_RESERVE;
        tr_kept_limit (keep > 0 ? keep : 0);
        logmsg (LOG_NOTICE, "%llu file descriptors allowed: beyond about "
                "%ld steps, cgroup files are opened for each reading",
                (unsigned long long)rl.rlim_cur,
                (keep > 0 ? keep : 0) / FDS_PER_STEP);
    }
    d.spare_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
}

int main (int argc, char **argv)
{
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'c' },
        { "foreground", no_argument, NULL, 'f' },
        { "check-config", no_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    bool foreground = false, check = false;
    tr_error_t dir_error;
    double next_sample;
    int c;

    d.conf_path = tr_conf_default_path ();
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":c:fhV", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            d.conf_path = optarg;
            d.conf_explicit = true;
            break;
        case 'f':
            foreground = true;
            break;
        case 'C':
            check = true;
            break;
        case 'h':
            usage (stdout);
            return 0;
        case 'V':
            printf ("tracerd %s\n", TRACER_VERSION);
            return 0;
        default: {
            char msg[256];

            fprintf (stderr, "%s\n",
                     tr_error_usage (msg, sizeof (msg), "tracerd", c,
                                     argv[optind - 1], optopt));
            return 2;
        }
        }
    }
    if (optind < argc) {
        fprintf (stderr, "tracerd: unexpected argument '%s'\n", argv[optind]);
        usage (stderr);
        return 2;
    }
    if (getenv ("TRACER_CONF") && *getenv ("TRACER_CONF"))
        d.conf_explicit = true;
    if (load_conf (&d.conf) < 0)
        return 2;
    /* root writes there: no other user may own or write a directory on
     * the way (they could swap what is below for a link)
     */
    if (tr_conf_check_dirs (d.conf, &dir_error) < 0) {
        fprintf (stderr, "tracerd: %s: %s\n", d.conf_path,
                 tr_error_str (&dir_error));
        return 2;
    }
    if (check) {
        tr_strbuf_t sb = TR_STRBUF_INIT;
        printf ("%s: OK\n", d.conf_path);
        /* what this host measures with it, and what it cannot */
        if (tr_stall_describe (d.conf->delayacct, d.conf->psi_mirror,
                               d.conf->taskstats, &sb) >= 0)
            fputs (tr_strbuf_str (&sb), stdout);
        tr_strbuf_free (&sb);
        return 0;
    }
    if (open_log () < 0)
        return 1;
    if (!foreground && daemon (0, 0) < 0) {
        fprintf (stderr, "tracerd: daemon: %s\n", strerror (errno));
        return 1;
    }
    {
        struct sigaction sa = { .sa_handler = on_signal };
        sigemptyset (&sa.sa_mask);
        sigaction (SIGTERM, &sa, NULL);
        sigaction (SIGINT, &sa, NULL);
        sigaction (SIGHUP, &sa, NULL);
        signal (SIGPIPE, SIG_IGN);
    }
    raise_fd_limit ();
    apply_delayacct ();
    if (open_spool () < 0 || open_socket () < 0)
        return 1;
    {
        char path[PATH_MAX];
        tr_error_t error;
        int n = snprintf (path, sizeof (path), "%s/steps",
                          d.conf->state_dir);
        /* 0755: users reach live/ through it; steps/ stays root's. */
        int base = open_conf_dir (d.conf->state_dir, 0755, &error);
        if (base >= 0) {
            close (base);
            if (n > 0 && (size_t)n < sizeof (path))
                d.state_fd = open_conf_dir (path, 0700, &error);
        }
        if (d.state_fd < 0)
            logmsg (LOG_ERR, "state dir %s: %s; steps will not survive a "
                    "restart", d.conf->state_dir, tr_error_str (&error));
        n = snprintf (path, sizeof (path), "%s/live", d.conf->state_dir);
        if (d.state_fd >= 0 && n > 0 && (size_t)n < sizeof (path)
            && (d.live_fd = open_conf_dir (path, 0755, &error)) < 0)
            logmsg (LOG_WARNING, "live snapshots disabled: %s",
                    tr_error_str (&error));
        /* An older tracerd made it 0700: users must be able to list it */
        if (d.live_fd >= 0)
            (void)fchmod (d.live_fd, 0755);
        n = snprintf (path, sizeof (path), "%s/pending", d.conf->state_dir);
        if (d.state_fd >= 0 && n > 0 && (size_t)n < sizeof (path)
            && (pend.dirfd = open_conf_dir (path, 0700, &error)) < 0)
            logmsg (LOG_ERR, "state dir %s: %s; records the spool refuses "
                    "will wait in memory only", d.conf->state_dir,
                    tr_error_str (&error));
        load_drops ();
        make_reserve ();
        respool_pending ();
        open_sources ();
        resume_steps ();
    }
    logmsg (LOG_NOTICE, "tracerd %s started: socket %s, spool %s, store %s",
            TRACER_VERSION, d.conf->socket_path, d.conf->spool_path,
            d.conf->store_path);
    next_sample = tr_when_monotonic ();
    while (!got_term) {
        struct pollfd pfd[4 + MAX_QUERIES + MAX_CONNS] = {
            { .fd = d.listen_fd, .events = POLLIN },
            { .fd = -1, .events = POLLIN },
        };
        double now = tr_when_monotonic ();
        double wake;
        int timeout;
        int nq = nqueries, nc, ready;

        for (int i = 0; i < nq; i++) {
            pfd[2 + i].fd = queries[i].q ? tr_jobstate_query_fd (queries[i].q)
                                         : -1;
            pfd[2 + i].events = POLLIN;
            if (queries[i].deadline < next_sample)
                next_sample = queries[i].deadline;
        }
        /* the forwarder's pipe: it hangs up when the forwarder exits */
        pfd[2 + nq].fd = fwd.fd;
        pfd[2 + nq].events = POLLIN;
        if (fwd.pid > 0 && !fwd.slow
            && fwd.started + FORWARD_SLOW_S < next_sample)
            next_sample = fwd.started + FORWARD_SLOW_S;
        /* clients' connections, each until its deadline */
        wake = expire_conns (now, next_sample);
        nc = nconns;
        for (int i = 0; i < nc; i++) {
            pfd[3 + nq + i].fd = conns[i].fd;
            pfd[3 + nq + i].events = POLLIN;
        }
        /* the kernel log, after the connections */
        pfd[3 + nq + nc].fd = kmsg.fd;
        pfd[3 + nq + nc].events = POLLIN;
        if (kmsg.nheld > 0 && wake > kmsg.next_retry)
            wake = kmsg.next_retry;
        /* exits are read in batches (tr_taskstats_poll_fd) */
        pfd[1].fd = tr_taskstats_poll_fd (d.taskstats, now, &wake);
        if (exits_waiting ()) {
            /* offered in slices: clients are served in between */
            wake = now;
            if (xq.n - xq.head >= EXIT_QUEUE_READ)
                pfd[1].fd = -1;
        }
        timeout = tr_when_poll_ms (wake, now);
        ready = poll (pfd, (nfds_t)(4 + nq + nc), timeout);
        /* exits first: a task_exit may finish the step they belong to */
        if (exits_waiting () || (ready > 0 && (pfd[1].revents & POLLIN)))
            drain_exits_slice (ready > 0 && (pfd[1].revents & POLLIN));
        /* the kernel's lines before the ends of steps they may concern */
        if (ready > 0 && (pfd[3 + nq + nc].revents & POLLIN))
            kmsg_read ();
        /* lines that wait for their process: its exit may be queued
         * (at most every KMSG_RETRY_S, and before a step's end is heard)
         */
        if (kmsg.nheld > 0
            && (tr_when_monotonic () >= kmsg.next_retry
                || (ready > 0 && nc > 0))) {
            drain_exits ();
            kmsg_retry (tr_when_monotonic ());
            kmsg.next_retry = tr_when_monotonic () + KMSG_RETRY_S;
        }
        if (ready > 0) {
            /* newest last: serving one moves the last into its place */
            for (int i = nc - 1; i >= 0; i--)
                if (pfd[3 + nq + i].revents)
                    serve_conn (i);
            if (pfd[0].revents & POLLIN)
                accept_clients (tr_when_monotonic ());
            if (pfd[2 + nq].revents)
                forward_reap (tr_when_monotonic ());
        }
        if (got_hup) {
            got_hup = 0;
            reload ();
        }
        now = tr_when_monotonic ();
        if (nq > 0)
            poll_queries (pfd + 2, now);
        if (now >= next_sample)
            next_sample = sample_due (now);
        pending_retry (now);
        live_pass (now);
        mailer_reap ();
        forward_spool (now);
        reap_ended (now);
        trim_memory (now);
        if (mirror_wanted ())
            sweep_mirrors (now);
        if (fwd.pending && fwd.pid < 0 && d.next_forward < next_sample
            && d.next_forward > now)
            next_sample = d.next_forward;
        if (pend.n > 0 && pend.next < next_sample)
            next_sample = pend.next;
        if (d.conf->store_live_interval_s > 0 && live.next > now
            && live.next < next_sample)
            next_sample = live.next;
    }
    /* Active steps keep their state files: the next tracerd resumes
     * them.  Save the latest readings first.
     */
    for (int i = 0; i < d.nsteps; i++)
        save_state (&d.steps[i]);
    /* Records waiting for squeue are written as their tasks show them */
    while (nqueries > 0)
        finish_query (&queries[0], false);
    pending_stop ();
    if (pend.reservefd >= 0)
        close (pend.reservefd);
    if (pend.dirfd >= 0)
        close (pend.dirfd);
    if (mq.n > 0)
        logmsg (LOG_WARNING, "%d stall notice%s not sent: tracerd is "
                "stopping", mq.n, mq.n == 1 ? "" : "s");
    for (int i = 0; i < mq.n; i++)
        free (mq.msg[i]);
    if (fwd.pid > 0) {
        logmsg (LOG_NOTICE, "the forwarder (pid %d) is still writing to the "
                "store; it finishes on its own", (int)fwd.pid);
        close (fwd.fd);
    }
    logmsg (LOG_NOTICE, "tracerd stopping (%d active steps kept for the "
            "next start)", d.nsteps);
    if (d.state_fd >= 0)
        close (d.state_fd);
    if (d.live_fd >= 0)
        close (d.live_fd);
    tr_livesum_files_free (live.files, live.nfiles);
    tr_taskstats_close (d.taskstats);
    tr_files_close (fe.files);
    tr_gpu_close (d.gpu);
    kmsg_close ();
    unlink (d.conf->socket_path);
    close (d.listen_fd);
    while (nconns > 0)
        close_conn (0);
    if (d.spare_fd >= 0)
        close (d.spare_fd);
    while (d.nsteps > 0)
        drop_step (&d.steps[0]);
    tr_store_destroy (d.spool);
    tr_conf_destroy (d.conf);
    if (d.logf)
        fclose (d.logf);
    return 0;
}
