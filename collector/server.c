/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's socket server: the hooks' requests (step_start, task_exit,
 * step_end, ping) over a unix SOCK_SEQPACKET socket, one message a
 * connection, from peers SO_PEERCRED says may speak, served from the
 * loop without ever waiting for a client.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "libtracer/hook/proto.h"
#include "libtracer/node/cgroup.h"
#include "libtracer/node/jobstate.h"
#include "libtracer/node/sampler.h"
#include "libtracer/record/record.h"
#include "libtracer/record/store.h"
#include "libtracer/record/when.h"
#include "libtracer/util/nss.h"

#include "tracerd.h"

/* Unprivileged job starters (LSF JOB_STARTER, daemon.job_starters): how
 * many steps one user may have registered at a time.
 */
#define STARTER_MAX_STEPS 8

static int spare_fd = -1; /* given up to refuse a client at EMFILE */

int tracerd_server_open (void)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const char *path = d.conf->socket_path;
    char dir[sizeof (sa.sun_path)];
    char *slash;
    tr_error_t error;
    int fd;

    spare_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
    if (strlen (path) >= sizeof (sa.sun_path)) {
        tracerd_log (LOG_ERR, "%s: socket path too long", path);
        return -1;
    }
    snprintf (dir, sizeof (dir), "%s", path);
    if ((slash = strrchr (dir, '/')) && slash != dir) {
        *slash = '\0';
        fd = tracerd_open_dir (dir, 0755, &error);
        if (fd < 0) {
            tracerd_log (LOG_ERR, "%s: %s", dir, tr_error_str (&error));
            return -1;
        }
        close (fd);
    }
    memcpy (sa.sun_path, path, strlen (path) + 1);
    /* non-blocking: the loop accepts until there is no one left */
    if ((fd =
             socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0))
        < 0) {
        tracerd_log (LOG_ERR, "socket: %s", strerror (errno));
        return -1;
    }
    /* A stale socket from a previous run would make bind fail. */
    if (unlink (path) < 0 && errno != ENOENT)
        tracerd_log (LOG_WARNING, "unlink %s: %s", path, strerror (errno));
    {
        mode_t old = umask (0177);
        int rc = bind (fd, (struct sockaddr *)&sa, sizeof (sa));
        umask (old);
        /* Root-only unless other users may notify; SO_PEERCRED decides
         * who is heard either way.
         */
        mode_t mode =
            d.conf->n_notify_uids > 1 || d.conf->job_starters ? 0666 : 0600;
        if (rc < 0 || chmod (path, mode) < 0 || listen (fd, 128) < 0) {
            tracerd_log (LOG_ERR, "%s: %s", path, strerror (errno));
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

static void reply (int fd, bool ok, const char *err)
{
    json_t *r = ok ? json_pack ("{s:b}", "ok", 1)
                   : json_pack ("{s:b s:s}", "ok", 0, "error", err);
    if (r)
        (void)tr_proto_send (fd, r, NULL);
    json_decref (r);
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

    if (json_unpack_ex (attach, &jerr, JSON_STRICT, "{s?s s?b s?I s?s s?s s?o}",
                        "cgroup", &cg, "tree", &tree, "session", &sid, "env",
                        &env, "cgroup_name", &cgname, "exclude", &excl)
        < 0) {
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
            if (env
                && snprintf (m.env, sizeof (m.env), "%s", env)
                       >= (int)sizeof (m.env)) {
                errno = EINVAL;
                return tr_errprintf (error, "attach env too long");
            }
            if (cgname
                && (strchr (cgname, '/')
                    || snprintf (m.cgroup_name, sizeof (m.cgroup_name), "%s",
                                 cgname)
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
        tracerd_log (LOG_WARNING,
                     "step %s: uid %u may not exclude processes; "
                     "ignored",
                     a->key, (unsigned)*starter);
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

    tracerd_sched_default_cluster (id);
    if (!json_is_object (id)) {
        reply (fd, false, "identity missing");
        return;
    }
    /* Names from the node's own user database, the rest of a Slurm
     * step's identity from the controller (below); oversized text is
     * cut and flagged, never a reason to leave a step untraced.
     */
    if (tr_jobstate_trust_identity (id, tracerd_sched_cluster ()) < 0) {
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
        tracerd_log (LOG_ERR, "step_start refused: %s", tr_error_str (&error));
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
        || tracerd_steps_key_as (id, starter, key, sizeof (key)) < 0) {
        reply (fd, false, "bad pid, task_id or identity");
        return;
    }
    if ((a = tracerd_steps_find (key)) && starter
        && (!a->by_starter || a->starter_uid != *starter)) {
        tracerd_log (LOG_WARNING, "step %s: uid %u may not add to it", key,
                     (unsigned)*starter);
        reply (fd, false, "permission denied");
        return;
    }
    if (!a) {
        tr_step_t *step;
        if (d.nsteps == MAX_STEPS) {
            tracerd_log (LOG_ERR, "step %s refused: %d steps active", key,
                         MAX_STEPS);
            reply (fd, false, "too many active steps");
            return;
        }
        if (!(step =
                  tr_step_create (id, req, tags, "tracerd",
                                  tr_conf_step_interval (d.conf, interval)))) {
            reply (fd, false, "out of memory");
            return;
        }
        tracerd_steps_configure (step, key,
                                 json_object_get (tr_step_request (step), "gpu"
                                                                          "s"));
        a = &d.steps[d.nsteps++];
        memset (a, 0, sizeof (*a));
        snprintf (a->key, sizeof (a->key), "%s", key);
        tracerd_steps_index (a);
        a->step = step;
        a->by_starter = starter != NULL;
        a->starter_uid = starter ? *starter : 0;
        a->conditional = json_is_true (json_object_get (msg, "conditional"));
        a->next = tr_when_monotonic () + tr_step_interval (step);
        a->snapped = 0; /* first snapshot at the first reading */
        a->created = tr_when_monotonic ();
        a->exits_before = tracerd_exits_received ();
        tracerd_log (LOG_INFO, "step %s started", key);
        tracerd_sched_describe (step, key, id);
        tracerd_sched_ask_owner (a);
    }
    if (!json_is_true (json_object_get (msg, "conditional")))
        tracerd_steps_note_traced (id);
    /* Before the reply: the task waits for it before it execs, so the
     * move into the mirror directory covers all it will do.
     */
    if (attach) {
        exclude_own (a, json_object_get (attach, "exclude"), starter);
        if (attach_explicit (a->step, attach, (pid_t)pid, (int)task, &error)
            < 0) {
            tracerd_log (LOG_ERR, "step %s: %s", key, tr_error_str (&error));
            tracerd_exits_filter ();
            reply (fd, false, error.text);
            if (tr_step_ntasks (a->step) == 0 && !tr_step_attached (a->step))
                tracerd_steps_drop (a);
            return;
        }
    }
    else if (tracerd_steps_mirror_wanted ()) {
        struct tr_cgroup_paths mp;
        char name[600];
        memset (&mp, 0, sizeof (mp));
        tracerd_steps_mirror_name (key, name, sizeof (name));
        if (tr_cgroup_mirror_attach (name, (pid_t)pid, &mp, &error) < 0) {
            int err = errno;
            /* ENOTSUP: no hybrid host, the task is in its step's own */
            a->unfiltered = a->unfiltered || err != ENOTSUP;
            if (err != ENOTSUP || d.conf->psi_mirror == TR_PSI_MIRROR_ON)
                tracerd_log (LOG_WARNING,
                             "step %s: no per-step cgroup2 "
                             "directory: %s",
                             key, tr_error_str (&error));
        }
    }
    if (!attach
        && tr_step_attach_pid (a->step, (pid_t)pid, (int)task, &error) < 0) {
        tracerd_log (LOG_ERR, "step %s task %d: %s", key, (int)task,
                     tr_error_str (&error));
        tracerd_exits_filter ();
        reply (fd, false, error.text);
        /* refused: the hook runs it untraced, so no record of it */
        if (tr_step_ntasks (a->step) == 0 && !tr_step_attached (a->step))
            tracerd_steps_drop (a);
        return;
    }
    (void)tr_step_sample (a->step, NULL);
    /* A prologue that names no process (PBS, LSF pre-exec) runs before
     * the job: what it finds now may be only the prologue itself, so
     * only the periodic checks count the job as seen.
     */
    if (pid > 0)
        a->seen = a->seen || tr_step_alive (a->step);
    tracerd_steps_save (a);
    /* the kernel must deliver this step's exits before its task runs */
    tracerd_exits_filter ();
    reply (fd, true, NULL);
}

/* The active step a task_exit or step_end message names, or NULL after
 * answering the hook why not.
 */
static struct active *msg_step (int fd,
                                json_t *msg,
                                const uid_t *starter,
                                int level)
{
    json_t *id = json_object_get (msg, "identity");
    const char *op = json_string_value (json_object_get (msg, "op"));
    char key[600];
    struct active *a;

    tracerd_sched_default_cluster (id);
    if (!json_is_object (id)
        || tracerd_steps_key_as (id, starter, key, sizeof (key)) < 0) {
        reply (fd, false, "bad identity");
        return NULL;
    }
    if (!(a = tracerd_steps_find (key))) {
        tracerd_log (level, "%s for unknown step %s", op, key);
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

    if (request_late <= 0
        || (rc == 0 && tr_step_in_cgroup (a->step) && tr_step_alive (a->step)))
        return;
    snprintf (why, sizeof (why),
              "the step's end reached tracerd %.0f s "
              "late, after its hook had given up; figures are from the "
              "last reading before it",
              request_late);
    tracerd_log (LOG_WARNING, "step %s: %s", a->key, why);
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

    if (!(a = msg_step (fd, msg, NULL, LOG_WARNING)))
        return;
    tr_step_task_exit (a->step, (int)task, (pid_t)pid, (int)st);
    if (last || tr_step_nexited (a->step) >= tr_step_ntasks (a->step)) {
        /* The final reading must happen before the hook returns: the
         * step cgroup disappears right after the last task_exit.
         */
        int rc = tr_step_finish (a->step, &error);
        if (rc < 0)
            tracerd_log (LOG_WARNING, "step %s: final reading: %s", a->key,
                         tr_error_str (&error));
        late_end (a, rc);
        reply (fd, true, NULL);
        tracerd_exits_drain ();
        tracerd_steps_retire (a);
        return;
    }
    tracerd_steps_save (a);
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
    json_t *mine[2] = { tr_step_identity (a->step), tr_step_request (a->step) };
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

    if (!(a = msg_step (fd, msg, starter, LOG_DEBUG)))
        return;
    if (starter && (!a->by_starter || a->starter_uid != *starter)) {
        tracerd_log (LOG_WARNING,
                     "step_end for %s refused: uid %u did not start "
                     "it",
                     a->key, (unsigned)*starter);
        reply (fd, false, "permission denied");
        return;
    }
    if (end_details (a, msg, &error) < 0) {
        tracerd_log (LOG_WARNING, "step %s: %s", a->key, tr_error_str (&error));
        reply (fd, false, error.text);
        return;
    }
    /* the hook that says so (an LSF post-exec carries the job's
     * environment) is not the job's: not in the final reading
     */
    if (!starter)
        exclude_own (a, json_object_get (msg, "exclude"), NULL);
    /* The extern step's cgroup is usually gone by now: the last
     * periodic reading stands.
     */
    {
        int rc = tr_step_end (a->step, &error);
        if (rc < 0)
            tracerd_log (LOG_DEBUG, "step %s: final reading: %s", a->key,
                         tr_error_str (&error));
        late_end (a, rc);
    }
    reply (fd, true, NULL);
    tracerd_exits_drain ();
    tracerd_steps_retire (a);
}

/* A job starter running as the job's user (LSF JOB_STARTER), allowed by
 * daemon.job_starters: it may register only itself, as its own uid, for
 * an LSF job of this daemon's cluster on this node, followed as its own
 * process tree (and the job's cgroup when it sits in one that names the
 * job), and end only what it registered; never a job another user has
 * steps or spooled records of here.  Nothing else from an unprivileged
 * peer is heard.
 */
static void handle_starter (int fd,
                            json_t *msg,
                            const char *op,
                            uid_t uid,
                            pid_t pid)
{
    json_t *id = json_object_get (msg, "identity");
    json_t *attach = json_object_get (msg, "attach");
    const char *sched = json_string_value (json_object_get (id, "scheduler"));
    char *user = NULL;
    gid_t gid;
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
        tracerd_log (LOG_WARNING,
                     "uid %u: a job starter may only speak for an "
                     "LSF job",
                     (unsigned)uid);
        reply (fd, false, "permission denied");
        return;
    }
    /* who the job belongs to is the kernel's word, not the message's */
    json_object_set_new (id, "uid", json_integer (uid));
    json_object_del (id, "user");
    json_object_del (id, "gid");
    if (tr_nss_user_by_uid (uid, &user, &gid) == 0) {
        json_object_set_new (id, "user", json_string (user));
        json_object_set_new (id, "gid", json_integer (gid));
        free (user);
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
    /* A job that LSF says is another user's, whose steps here root's
     * hooks registered for another user, or whose records spooled here
     * are another user's is not this starter's to speak for.  Another
     * starter's step of it is no proof: the first to claim a job id is
     * not its owner (a starter may name a job before it exists), and
     * each starter's record is kept only where LSF says the job is its
     * user's (tracerd_sched_vouch).
     */
    job = json_string_value (json_object_get (id, "job_id"));
    other = job && tracerd_sched_lsf_other_owner (job, uid);
    for (int i = 0; job && i < d.nsteps && !other; i++) {
        json_t *sid = tr_step_identity (d.steps[i].step);
        json_t *suid = json_object_get (sid, "uid");
        const char *c = json_string_value (json_object_get (sid, "cluster"));
        const char *j = json_string_value (json_object_get (sid, "job_id"));

        other = c && j && !strcmp (c, d.conf->cluster_name) && !strcmp (j, job)
                && tracerd_sched_vouched (&d.steps[i])
                && (!json_is_integer (suid)
                    || json_integer_value (suid) != (json_int_t)uid);
    }
    if (job && !other
        && tr_store_job_has_other_uid (d.spool, d.conf->cluster_name, job, uid,
                                       &error)
               != 0)
        other = true;
    if (!host[0] || !job || other) {
        tracerd_log (LOG_WARNING, "uid %u: job starter refused (%s)",
                     (unsigned)uid,
                     !host[0] ? "no host name"
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
        tracerd_log (LOG_WARNING, "uid %u: job starter refused (%s)",
                     (unsigned)uid,
                     mine >= STARTER_MAX_STEPS ? "too many steps of this user"
                                               : "it may follow only its own "
                                                 "process");
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
 * At most MAX_CONNS (tracerd.h) are open.
 */
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
static unsigned long conns_refused; /* over a limit, since the last log */

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
            tracerd_sched_default_cluster (id);
            tracerd_log (LOG_WARNING,
                         "step_start for %s refused: sent %.1f s "
                         "ago, after its caller's timeout of %lld ms",
                         tracerd_steps_key (id, key, sizeof (key)) == 0 ? key
                                                                        : "?",
                         late,
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
void tracerd_server_serve (int i)
{
    tr_error_t error;
    json_t *msg;

    if (!(msg = tr_proto_recv (conns[i].fd, &error))) {
        if (errno == EAGAIN)
            return;
        if (errno != ECONNRESET)
            tracerd_log (LOG_WARNING, "bad message: %s (uid %u)", error.text,
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
void tracerd_server_accept (double now)
{
    for (int n = 0; n < ACCEPT_BURST; n++) {
        int fd =
            accept4 (d.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        uid_t uid = (uid_t)-1;
        pid_t pid = 0;
        bool starter = false;
        int mine = 0, unpriv = 0;

        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && spare_fd >= 0) {
            /* out of descriptors: a connection left in the backlog
             * would wake the loop at once, forever; refuse it instead
             */
            close (spare_fd);
            if ((fd = accept4 (d.listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                reply (fd, false, "busy");
                close (fd);
            }
            spare_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
            if (conns_refused++ == 0)
                tracerd_log (LOG_ERR, "out of file descriptors: connection "
                                      "refused");
            continue;
        }
        if (fd < 0)
            return;
        if (!peer_allowed (fd, &uid, &pid)) {
            if (!d.conf->job_starters) {
                tracerd_log (LOG_WARNING, "refused connection from uid %d",
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
                tracerd_log (LOG_WARNING, "connection from uid %u refused: %s",
                             (unsigned)uid,
                             nconns == MAX_CONNS ? "too many connections"
                                                 : "too many connections of "
                                                   "unprivileged users");
            reply (fd, false, "busy");
            close (fd);
            continue;
        }
        conns[nconns++] = (struct conn){ .fd = fd,
                                         .uid = uid,
                                         .pid = pid,
                                         .starter = starter,
                                         .deadline = now + CONN_DEADLINE_S };
        /* the message is often there already */
        tracerd_server_serve (nconns - 1);
    }
}

/* Close the connections whose message did not come in time; return
 * the earliest deadline left (or later).
 */
double tracerd_server_expire (double now, double later)
{
    static double next_log;

    for (int i = nconns - 1; i >= 0; i--) {
        if (now >= conns[i].deadline) {
            tracerd_log (LOG_DEBUG, "uid %u sent nothing within %.0f s; closed",
                         (unsigned)conns[i].uid, CONN_DEADLINE_S);
            close_conn (i);
        }
        else if (conns[i].deadline < later)
            later = conns[i].deadline;
    }
    /* one line per minute at most, however long a flood lasts */
    if (conns_refused > 0 && now >= next_log) {
        if (conns_refused > 1)
            tracerd_log (LOG_WARNING,
                         "%lu more connections refused over the "
                         "limits",
                         conns_refused - 1);
        conns_refused = 0;
        next_log = now + 60;
    }
    return later;
}

int tracerd_server_fds (struct pollfd *pfd)
{
    for (int i = 0; i < nconns; i++) {
        pfd[i].fd = conns[i].fd;
        pfd[i].events = POLLIN;
    }
    return nconns;
}

void tracerd_server_close (void)
{
    unlink (d.conf->socket_path);
    close (d.listen_fd);
    while (nconns > 0)
        close_conn (0);
    if (spare_fd >= 0)
        close (spare_fd);
}
