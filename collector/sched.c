/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's scheduler queries: what Slurm's controller says of a job
 * (squeue and scontrol through libtracer/node/jobstate.h, one child per
 * job, never waited for), cached for the job's later steps, and the
 * final records that wait for the answer.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libtracer/node/jobstate.h"
#include "libtracer/node/sampler.h"
#include "libtracer/record/states.h"
#include "libtracer/record/when.h"

#include "tracerd.h"

/* squeue queries in flight, one per job, and the records that wait for
 * their answer (a step killed by a signal: cancelled or timed out?),
 * at most MAX_QUERIES (tracerd.h).
 */
#define QUERY_TIMEOUT_S 10.0
/* A job whose tasks were just killed is COMPLETING until its epilogs
 * are done, and squeue shows that instead of TIMEOUT or CANCELLED: ask
 * again every QUERY_RETRY_S, for at most QUERY_GIVE_UP_S.
 */
#define QUERY_RETRY_S 2.0
#define QUERY_GIVE_UP_S 90.0

struct query {
    tr_jobstate_query_t *q; /* NULL between two tries */
    char job[32];
    double deadline; /* of the try in flight, or when to try again */
    double give_up;
    json_t *held;    /* records to write once the job state is known */
    bool need_state; /* a held record waits for the final job state */
    bool lsf;        /* bjobs, for an LSF job a starter spoke for */
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

/* LSF jobs whose owner bjobs named, running on this host: the job is
 * that uid's (daemon.job_starters).  Only such answers are kept: a job
 * not known yet may be submitted later, by anyone.
 */
#define OWNER_CACHE 256
static struct {
    char job[OWNER_CACHE][32];
    uid_t uid[OWNER_CACHE];
    bool set[OWNER_CACHE];
    int next;
} owners;

/* A Slurm step's cluster: cluster.name, or where that is left at its
 * default, slurm.conf's ClusterName (tracerd's own SLURM_CONF, else
 * /etc/slurm/slurm.conf), read again for each configuration.
 */
const char *tracerd_sched_cluster (void)
{
    static const tr_conf_t *read_for;
    static char name[128];
    const char *sc = getenv ("SLURM_CONF");

    if (strcmp (d.conf->cluster_name, "default"))
        return d.conf->cluster_name;
    if (read_for != d.conf) {
        read_for = d.conf;
        if (tr_jobstate_slurm_cluster (sc && *sc ? sc : "/etc/slurm/slurm.conf",
                                       name, sizeof (name))
            < 0)
            name[0] = '\0';
    }
    return name[0] ? name : d.conf->cluster_name;
}

/* A hook may leave the cluster name to the daemon's configuration.  A
 * Slurm step's is always the daemon's (tracerd_sched_cluster): the plugin could
 * take one only from the job's environment, which the job controls.
 */
void tracerd_sched_default_cluster (json_t *id)
{
    const char *s = json_string_value (json_object_get (id, "scheduler"));

    if (json_is_object (id) && s && !strcmp (s, "slurm"))
        (void)json_object_set_new (id, "cluster",
                                   json_string (tracerd_sched_cluster ()));
    else if (json_is_object (id) && !json_object_get (id, "cluster"))
        (void)json_object_set_new (id, "cluster",
                                   json_string (d.conf->cluster_name));
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

static struct query *find_query (const char *job, bool lsf)
{
    for (int i = 0; i < nqueries; i++)
        if (!strcmp (queries[i].job, job) && queries[i].lsf == lsf)
            return &queries[i];
    return NULL;
}

/* A query just started, in flight: squeue's may be asked again until
 * QUERY_GIVE_UP_S (a held record of a killed step), bjobs' is not.
 */
static struct query *add_query (tr_jobstate_query_t *q,
                                const char *job,
                                bool lsf)
{
    struct query *qy = &queries[nqueries++];

    memset (qy, 0, sizeof (*qy));
    qy->q = q;
    qy->lsf = lsf;
    snprintf (qy->job, sizeof (qy->job), "%s", job);
    qy->deadline = tr_when_monotonic () + QUERY_TIMEOUT_S;
    qy->give_up = lsf ? qy->deadline : tr_when_monotonic () + QUERY_GIVE_UP_S;
    return qy;
}

/* Ask squeue about job (unless a question is already out).  NULL when
 * queries are off or failed, with why in error (unless NULL): the caller
 * goes on without the answer.
 */
static struct query *ask_scheduler (const char *job, tr_error_t *error)
{
    struct query *qy = find_query (job, false);
    tr_jobstate_query_t *q;
    tr_error_t mine;
    char sc[4096];

    if (qy)
        return qy;
    if (!error)
        error = &mine;
    if (nqueries == MAX_QUERIES) {
        tr_errprintf (error, "too many squeue questions in flight");
        return NULL;
    }
    if (!d.conf->squeue_path || access (d.conf->squeue_path, X_OK) < 0) {
        tr_errprintf (error, "squeue (daemon.squeue) cannot be run");
        return NULL;
    }
    if (!(q = tr_jobstate_query_start_detail (d.conf->squeue_path,
                                              scontrol_path (sc, sizeof (sc)),
                                              job, error))) {
        tracerd_log (LOG_WARNING, "job %s: %s", job, tr_error_str (error));
        return NULL;
    }
    return add_query (q, job, false);
}

/* The controller's fields of job, or NULL when not asked yet. */
static json_t *cached_fields (const char *job)
{
    for (int i = 0; i < LIMIT_CACHE; i++)
        if (limits.fields[i] && !strcmp (limits.job[i], job))
            return limits.fields[i];
    return NULL;
}

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
        tracerd_log (LOG_WARNING, "step %s: %s", key, strerror (errno));
    if (!json_object_get (req, "gpus") && node
        && tr_jobstate_node_gpus (json_object_get (fields, "gres_nodes"), node,
                                  gpus, sizeof (gpus))
               == 1
        && json_object_set_new (req, "gpus", json_string (gpus)) == 0)
        tracerd_steps_configure (step, key, json_object_get (req, "gpus"));
}

/* A step killed by a signal: the job's scheduler state says whether it
 * was cancelled or ran out of time.
 */
static void apply_state (json_t *rec, const struct tr_jobstate *job)
{
    json_t *oc = json_object_get (rec, "outcome");
    const char *now = json_string_value (json_object_get (oc, "state"));
    const char *state = tr_states_outcome (job->state);
    char why[96];

    if (!state || !now || strcmp (now, "failed"))
        return;
    snprintf (why, sizeof (why), "the scheduler reports the job %s",
              job->state);
    json_object_set_new (oc, "state", json_string (state));
    json_object_set_new (oc, "reason", json_string (why));
}

/* Drop the try in flight and ask again QUERY_RETRY_S after now. */
static void ask_again (struct query *qy, double now)
{
    tr_jobstate_query_destroy (qy->q);
    qy->q = NULL;
    qy->deadline = now + QUERY_RETRY_S;
}

/* The answer is in (why NULL) or never came (why says so): give the
 * job's steps the controller's account, partition, QOS, name and time
 * limit, and write the records that waited for it.  Without an answer
 * those stay unknown, and each record names them with the reason
 * (identity.unknown).
 */
static void finish_query (struct query *qy, const char *why)
{
    static struct tr_jobstate job;
    tr_error_t error;
    size_t i;
    json_t *rec, *fields = NULL;
    bool ok = !why;
    char because[256];

    memset (&job, 0, sizeof (job));
    job.time_limit_s = -1;
    if (ok && tr_jobstate_query_result (qy->q, &job, &error) < 0) {
        tracerd_log (LOG_WARNING,
                     "job %s: %s; its records name what is "
                     "not known",
                     qy->job, tr_error_str (&error));
        snprintf (because, sizeof (because), "%s", tr_error_str (&error));
        why = because;
        ok = false;
    }
    if (ok && qy->held && qy->need_state && !strcmp (job.state, "COMPLETING")
        && tr_when_monotonic () < qy->give_up) {
        ask_again (qy, tr_when_monotonic ());
        return;
    }
    if (ok && !(fields = tr_jobstate_fields (&job))) {
        why = "out of memory";
        ok = false;
    }
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
                tracerd_steps_save (
                    &d.steps[k]); /* the GPUs survive a restart */
            }
        }
    }
    json_array_foreach (qy->held, i, rec)
    {
        json_t *id = json_object_get (rec, "identity");
        char key[600];
        if (ok) {
            (void)tr_jobstate_apply_fields (fields, id,
                                            json_object_get (rec, "request"));
            (void)tr_jobstate_apply_time (fields, json_object_get (rec, "tim"
                                                                        "e"));
            apply_state (rec, &job);
        }
        else
            (void)tr_jobstate_mark_unknown (id,
                                            json_object_get (rec, "request"),
                                            why);
        if (tracerd_steps_key (id, key, sizeof (key)) < 0)
            snprintf (key, sizeof (key), "%s", qy->job);
        tracerd_forward_record (key, json_incref (rec));
    }
    json_decref (qy->held);
    tr_jobstate_query_destroy (qy->q);
    *qy = queries[--nqueries];
}

/* The uid bjobs named as the owner of LSF job, running on this host,
 * or -1 when it has not (or not yet) said so.
 */
static long long lsf_owner (const char *job)
{
    for (int i = 0; i < OWNER_CACHE; i++)
        if (owners.set[i] && !strcmp (owners.job[i], job))
            return (long long)owners.uid[i];
    return -1;
}

static bool lsf_job (json_t *id, const char **job)
{
    const char *s = json_string_value (json_object_get (id, "scheduler"));

    *job = json_string_value (json_object_get (id, "job_id"));
    return s && !strcmp (s, "lsf") && *job && **job
           && strlen (*job) < sizeof (queries[0].job);
}

/* Ask bjobs who owns LSF job (unless a question is out already). */
static struct query *ask_lsf (const char *job, tr_error_t *error)
{
    struct query *qy = find_query (job, true);
    tr_jobstate_query_t *q;

    if (qy)
        return qy;
    if (nqueries == MAX_QUERIES) {
        tr_errprintf (error, "too many bjobs and squeue questions in flight");
        return NULL;
    }
    if (!d.conf->bjobs_path || access (d.conf->bjobs_path, X_OK) < 0) {
        tr_errprintf (error, "bjobs (daemon.bjobs) cannot be run");
        return NULL;
    }
    if (!(q = tr_jobstate_query_start_lsf (d.conf->bjobs_path, job, error)))
        return NULL;
    return add_query (q, job, true);
}

/* Whether the record (of a starter's step) is its uid's to keep: LSF
 * says the job is that uid's, running here.  why says why not.
 */
static bool lsf_vouches (const char *job, json_t *rec, char *why, size_t size)
{
    json_t *uid = json_object_get (json_object_get (rec, "identity"), "uid");
    long long owner = lsf_owner (job);

    if (owner < 0) {
        snprintf (why, size, "LSF does not show job %s running here", job);
        return false;
    }
    if (!json_is_integer (uid) || json_integer_value (uid) != owner) {
        snprintf (why, size, "LSF says job %s is uid %lld's", job, owner);
        return false;
    }
    return true;
}

/* A held starter's record: kept, or dropped with why in the log (asked:
 * why bjobs gave no answer, if it did not).
 */
static void lsf_settle (json_t *rec, const char *job, const char *asked)
{
    json_t *id = json_object_get (rec, "identity");
    json_t *juid = json_object_get (id, "uid");
    uid_t uid = json_is_integer (juid) ? (uid_t)json_integer_value (juid) : 0;
    char key[600], why[300];

    if (tracerd_steps_key_as (id, &uid, key, sizeof (key)) < 0)
        snprintf (key, sizeof (key), "%s", job);
    if (lsf_vouches (job, rec, why, sizeof (why))) {
        tracerd_forward_record (key, json_incref (rec));
        return;
    }
    tracerd_log (LOG_WARNING,
                 "step %s: record not kept: %s%s (a job starter may speak "
                 "only for its own job)",
                 key, asked && lsf_owner (job) < 0 ? asked : why,
                 asked && lsf_owner (job) < 0 ? ": its owner is not known"
                                              : "");
}

/* bjobs answered (why NULL) or not: remember an owner it named, running
 * here, and keep or drop the records that waited.
 */
static void finish_lsf (struct query *qy, const char *why)
{
    struct tr_lsfjob job;
    tr_error_t error;
    char host[256], because[300];
    size_t i;
    json_t *rec;

    if (!why && tr_jobstate_query_lsf (qy->q, &job, &error) < 0) {
        snprintf (because, sizeof (because), "%s", tr_error_str (&error));
        why = because;
    }
    if (gethostname (host, sizeof (host)) < 0)
        host[0] = '\0';
    host[sizeof (host) - 1] = '\0';
    if (!why) {
        struct passwd *pw = getpwnam (job.user);

        if (!tr_jobstate_lsf_runs_on (&job, host))
            tracerd_log (LOG_WARNING,
                         "job %s: LSF says it is %s's, %s on %s, not here",
                         qy->job, job.user, job.stat,
                         job.hosts[0] ? job.hosts : "no host");
        else if (!pw)
            tracerd_log (LOG_WARNING,
                         "job %s: LSF says it is %s's, a user "
                         "this host does not know",
                         qy->job, job.user);
        else {
            snprintf (owners.job[owners.next], sizeof (owners.job[0]), "%s",
                      qy->job);
            owners.uid[owners.next] = pw->pw_uid;
            owners.set[owners.next] = true;
            owners.next = (owners.next + 1) % OWNER_CACHE;
        }
    }
    else
        tracerd_log (LOG_WARNING, "job %s: %s", qy->job, why);
    json_array_foreach (qy->held, i, rec) lsf_settle (rec, qy->job, why);
    json_decref (qy->held);
    tr_jobstate_query_destroy (qy->q);
    *qy = queries[--nqueries];
}

bool tracerd_sched_lsf_other_owner (const char *job, uid_t uid)
{
    long long owner = lsf_owner (job);

    return owner >= 0 && owner != (long long)uid;
}

bool tracerd_sched_vouched (const struct active *a)
{
    const char *job;

    return !a->by_starter
           || (lsf_job (tr_step_identity (a->step), &job)
               && lsf_owner (job) == (long long)a->starter_uid);
}

void tracerd_sched_ask_owner (const struct active *a)
{
    const char *job;
    tr_error_t error = { 0 };

    if (a->by_starter && lsf_job (tr_step_identity (a->step), &job)
        && lsf_owner (job) < 0 && !ask_lsf (job, &error))
        tracerd_log (LOG_WARNING,
                     "job %s: %s; its job starters' steps "
                     "will not be recorded",
                     job, tr_error_str (&error));
}

int tracerd_sched_vouch (struct active *a, json_t *rec)
{
    const char *job;
    struct query *qy;
    tr_error_t error = { 0 };
    char why[300];

    if (!a->by_starter)
        return 0;
    if (!lsf_job (tr_step_identity (a->step), &job)) {
        tracerd_log (LOG_WARNING,
                     "step %s: record not kept: a job starter "
                     "may speak only for an LSF job",
                     a->key);
        json_decref (rec);
        return 1;
    }
    if (lsf_owner (job) >= 0) {
        if (lsf_vouches (job, rec, why, sizeof (why)))
            return 0;
        tracerd_log (LOG_WARNING,
                     "step %s: record not kept: %s (a job "
                     "starter may speak only for its own job)",
                     a->key, why);
        json_decref (rec);
        return 1;
    }
    /* not known yet: ask (again), and the record waits for the answer */
    if ((qy = ask_lsf (job, &error))) {
        if (!qy->held)
            qy->held = json_array ();
        if (qy->held && json_array_append_new (qy->held, rec) == 0)
            return 1;
    }
    tracerd_log (LOG_WARNING,
                 "step %s: record not kept: %s: its owner is "
                 "not known (a job starter may speak only for its own job)",
                 a->key, tr_error_str (&error));
    json_decref (rec);
    return 1;
}

void tracerd_sched_poll (struct pollfd *pfd, double now)
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
                tracerd_log (LOG_WARNING, "job %s: %s", qy->job,
                             tr_error_str (&error));
                finish_query (qy, tr_error_str (&error));
            }
            else
                qy->deadline = now + QUERY_TIMEOUT_S;
            continue;
        }
        if (pfd[i].revents)
            rc = tr_jobstate_query_read (qy->q);
        if (qy->lsf) {
            if (rc == 1)
                finish_lsf (qy, NULL);
            else if (rc < 0 || now >= qy->deadline)
                finish_lsf (qy, rc < 0 ? "bjobs failed"
                                       : "bjobs did not answer in time");
            continue;
        }
        if (rc == 1)
            finish_query (qy, NULL);
        else if ((rc < 0 || now >= qy->deadline) && qy->need_state
                 && now < qy->give_up) {
            /* a busy controller (it is killing the job) may answer late
             * or not at all: a held record asks again until give_up
             */
            tracerd_log (LOG_DEBUG, "job %s: squeue %s; asking again", qy->job,
                         rc < 0 ? "failed" : "did not answer in time");
            ask_again (qy, now);
        }
        else if (rc < 0 || now >= qy->deadline) {
            tracerd_log (LOG_WARNING,
                         "job %s: squeue %s; records keep the "
                         "state their tasks show",
                         qy->job, rc < 0 ? "failed" : "did not answer in time");
            finish_query (qy, rc < 0 ? "squeue failed"
                                     : "squeue did not answer in time");
        }
    }
}

/* A new step of a Slurm job: what the controller said of its job, or a
 * question to it.
 */
void tracerd_sched_describe (tr_step_t *step, const char *key, json_t *id)
{
    const char *job;
    json_t *fields;

    if (slurm_job (id, &job)) {
        if ((fields = cached_fields (job)))
            apply_job (step, key, fields);
        else
            (void)ask_scheduler (job, NULL);
    }
}

bool tracerd_sched_hold (tr_step_t *step, json_t *rec, bool signalled)
{
    struct query *qy;
    const char *job;
    tr_error_t error = { 0 };

    /* Also a record whose job the controller has not described yet (its
     * answer is due within QUERY_TIMEOUT_S, or never comes): it waits
     * for the account, partition, QOS, name and time limit.
     */
    /* the controller's submit and job start times, when it has said */
    if (slurm_job (tr_step_identity (step), &job) && cached_fields (job))
        (void)tr_jobstate_apply_time (cached_fields (job),
                                      json_object_get (rec, "time"));
    if (slurm_job (tr_step_identity (step), &job)
        && (signalled || !cached_fields (job))
        && (qy = ask_scheduler (job, &error))) {
        if (!qy->held)
            qy->held = json_array ();
        qy->need_state = qy->need_state || signalled;
        if (qy->held && json_array_append_new (qy->held, rec) == 0)
            return true;
    }
    /* not asked: what the controller would have said is not known */
    if (slurm_job (tr_step_identity (step), &job) && !cached_fields (job))
        (void)tr_jobstate_mark_unknown (json_object_get (rec, "identity"),
                                        json_object_get (rec, "request"),
                                        tr_error_str (&error));
    return false;
}

int tracerd_sched_fds (struct pollfd *pfd, double *next)
{
    for (int i = 0; i < nqueries; i++) {
        pfd[i].fd = queries[i].q ? tr_jobstate_query_fd (queries[i].q) : -1;
        pfd[i].events = POLLIN;
        if (queries[i].deadline < *next)
            *next = queries[i].deadline;
    }
    return nqueries;
}

void tracerd_sched_stop (void)
{
    while (nqueries > 0) {
        if (queries[0].lsf)
            finish_lsf (&queries[0], "tracerd stopped before bjobs answered");
        else
            finish_query (&queries[0], "tracerd stopped before squeue "
                                       "answered");
    }
}
