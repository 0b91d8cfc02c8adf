/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The Slurm SPANK plugin: a thin notifier.  At task_post_fork (root, in
 * slurmstepd, the task already in its step cgroups and not yet exec'd) it
 * tells tracerd which step started and the task pid; at each task_exit it
 * reports the wait status, and the last one asks for the final reading
 * while the step cgroups still exist.  Every callback returns 0: tracer
 * must never fail, drain or delay a job.  Install it as "optional".
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "libtracer/hookconf.h"
#include "libtracer/proto.h"

SPANK_PLUGIN (tracer, 1);

#define STEP_BATCH 0xfffffffbU
#define STEP_EXTERN 0xfffffffcU
#define STEP_INTERACTIVE 0xfffffffaU
#define NO_VAL32 0xfffffffeU
#define OPT_ENV "SLURM_SPANK__SLURM_SPANK_OPTION_tracer_tracer"

static struct tr_hookconf conf;
static bool disabled;          /* bad plugstack arguments: do nothing */
static struct tr_spec spec = { .state = -1 };
static bool spec_seen;
static char spec_text[TR_SPEC_MAX + 1];  /* the accepted SPEC as given */
static json_t *identity;       /* built at the first task_post_fork */
static json_t *request;
static int exits_seen;
static bool notified;          /* the daemon accepted a step_start */
static bool warned;

static int opt_cb (int val, const char *optarg, int remote);

static struct spank_option options[] = {
    { "tracer", "[SPEC]",
      "Trace this job with tracer. SPEC: on|off, interval=SECONDS, "
      "tag=KEY:VALUE[,KEY:VALUE...]",
      2, 0, opt_cb },
    SPANK_OPTIONS_TABLE_END
};

static int opt_cb (int val, const char *optarg, int remote)
{
    struct tr_spec s;
    tr_error_t error;

    /* A plain --tracer given to sbatch/salloc reaches the job's own
     * sruns through SLURM_SPANK__SLURM_SPANK_OPTION_tracer_tracer as the
     * text "(null)": that is the empty SPEC, not a bad one.
     */
    if (optarg && !strcmp (optarg, "(null)"))
        optarg = NULL;
    /* Called twice per srun step on 22.05: replace, never accumulate. */
    if (tr_spec_parse (optarg, &s, &error) < 0) {
        slurm_error ("tracer: --tracer: %s", error.text);
        /* Locally this stops srun/sbatch before anything is submitted;
         * remotely a bad spec must not fail the job.
         */
        return remote ? 0 : -1;
    }
    tr_spec_release (&spec);
    spec = s;
    spec_seen = true;
    snprintf (spec_text, sizeof (spec_text), "%s", optarg ? optarg : "");
    return 0;
}

int slurm_spank_init (spank_t sp, int ac, char **av)
{
    tr_error_t error;

    tr_hookconf_init (&conf);
    if (tr_hookconf_parse_args (&conf, ac, av, &error) < 0) {
        slurm_error ("tracer: plugstack.conf: %s; tracer is disabled, jobs "
                     "run untraced", error.text);
        disabled = true;
    }
    for (struct spank_option *o = options; o->name; o++)
        if (spank_option_register (sp, o) != ESPANK_SUCCESS)
            slurm_error ("tracer: cannot register --%s", o->name);
    return 0;
}

/* In srun, sbatch and salloc: hand the job's tracer settings to the
 * Prolog, Epilog and MailProg (tracer-mail) as SPANK_TRACER (on|off)
 * and SPANK_TRACER_SPEC.  Only the scheduler's own job-control
 * environment is touched; a failure costs the mail its settings only.
 */
int slurm_spank_init_post_opt (spank_t sp, int ac, char **av)
{
    if (disabled || spank_remote (sp))
        return 0;
    if (spank_context () != S_CTX_LOCAL && spank_context () != S_CTX_ALLOCATOR)
        return 0;
    if (!spec_seen && !getenv ("TRACER_OPTS"))
        return 0;
    if (!spec_seen)
        (void)opt_cb (0, getenv ("TRACER_OPTS"), 1);
    if (!spec_seen)
        return 0;
    if (spank_job_control_setenv (sp, "TRACER",
                                  tr_spec_enabled (&conf, &spec) ? "on"
                                                                 : "off",
                                  1) != ESPANK_SUCCESS
        || spank_job_control_setenv (sp, "TRACER_SPEC", spec_text, 1)
               != ESPANK_SUCCESS)
        slurm_debug ("tracer: cannot pass settings to the job's mail");
    return 0;
}

/* Remote steps started by sbatch --export=NONE get no option callback on
 * 22.05: the option still reaches the job environment.  TRACER_OPTS
 * serves workflow engines that cannot pass srun options.
 */
static void spec_from_env (spank_t sp)
{
    char buf[TR_SPEC_MAX + 1];
    const char *names[] = { OPT_ENV, "TRACER_OPTS" };

    if (spec_seen)
        return;
    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++) {
        if (spank_getenv (sp, names[i], buf, sizeof (buf)) == ESPANK_SUCCESS)
            (void)opt_cb (0, buf, 1);
        if (spec_seen)
            return;
    }
}

int slurm_spank_user_init (spank_t sp, int ac, char **av)
{
    if (spank_remote (sp))
        spec_from_env (sp);
    return 0;
}

static int set_env_str (spank_t sp, json_t *o, const char *key,
                        const char *var)
{
    char buf[512];

    if (spank_getenv (sp, var, buf, sizeof (buf)) != ESPANK_SUCCESS
        || !buf[0] || !strcmp (buf, "(null)"))
        return 0;
    return json_object_set_new (o, key, json_string (buf));
}

static const char *step_name (uint32_t stepid, char *buf, size_t size)
{
    switch (stepid) {
    case STEP_BATCH:
        return "batch";
    case STEP_EXTERN:
        return "extern";
    case STEP_INTERACTIVE:
        return "interactive";
    default:
        snprintf (buf, size, "%u", stepid);
        return buf;
    }
}

static int build_context (spank_t sp)
{
    uint32_t jobid = 0, stepid = 0, u32 = 0, arr = 0, arrtask = NO_VAL32;
    uint32_t nodeid = 0;
    uint16_t u16 = 0;
    uint64_t mem = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    char sbuf[32], host[256];
    char *cores = NULL;

    if (spank_get_item (sp, S_JOB_ID, &jobid) != ESPANK_SUCCESS
        || spank_get_item (sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS
        || spank_get_item (sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        return -1;
    spank_get_item (sp, S_JOB_GID, &gid);
    identity = json_pack ("{s:s s:s s:s s:I s:I}", "scheduler", "slurm",
                          "job_id", "", "step_id",
                          step_name (stepid, sbuf, sizeof (sbuf)), "uid",
                          (json_int_t)uid, "gid", (json_int_t)gid);
    request = json_object ();
    if (!identity || !request)
        return -1;
    snprintf (sbuf, sizeof (sbuf), "%u", jobid);
    json_object_set_new (identity, "job_id", json_string (sbuf));
    if (spank_get_item (sp, S_JOB_ARRAY_ID, &arr) == ESPANK_SUCCESS
        && spank_get_item (sp, S_JOB_ARRAY_TASK_ID, &arrtask)
               == ESPANK_SUCCESS
        && arrtask != NO_VAL32 && arr != 0) {
        snprintf (sbuf, sizeof (sbuf), "%u", arr);
        json_object_set_new (identity, "array_job_id", json_string (sbuf));
        json_object_set_new (identity, "array_task_id",
                             json_integer (arrtask));
    }
    if (spank_get_item (sp, S_JOB_NODEID, &nodeid) == ESPANK_SUCCESS)
        json_object_set_new (identity, "node_index", json_integer (nodeid));
    set_env_str (sp, identity, "cluster", "SLURM_CLUSTER_NAME");
    set_env_str (sp, identity, "job_name", "SLURM_JOB_NAME");
    set_env_str (sp, identity, "user", "SLURM_JOB_USER");
    set_env_str (sp, identity, "account", "SLURM_JOB_ACCOUNT");
    set_env_str (sp, identity, "partition", "SLURM_JOB_PARTITION");
    set_env_str (sp, identity, "qos", "SLURM_JOB_QOS");
    /* The job env gets SLURMD_NODENAME only at exec; slurmstepd inherits
     * it from slurmd.  On multiple-slurmd nodes it differs from the
     * hostname, so the hostname is the last resort.
     */
    if (spank_getenv (sp, "SLURMD_NODENAME", host, sizeof (host))
            != ESPANK_SUCCESS
        || !host[0]) {
        const char *env = getenv ("SLURMD_NODENAME");
        if (env && *env)
            snprintf (host, sizeof (host), "%s", env);
        else if (gethostname (host, sizeof (host)) < 0)
            snprintf (host, sizeof (host), "unknown");
        host[sizeof (host) - 1] = '\0';
    }
    json_object_set_new (identity, "node", json_string (host));

    if (spank_get_item (sp, S_JOB_NNODES, &u32) == ESPANK_SUCCESS && u32)
        json_object_set_new (request, "nodes", json_integer (u32));
    if (spank_get_item (sp, S_JOB_TOTAL_TASK_COUNT, &u32) == ESPANK_SUCCESS
        && u32)
        json_object_set_new (request, "tasks", json_integer (u32));
    if (spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &u32) == ESPANK_SUCCESS)
        json_object_set_new (request, "tasks_on_node", json_integer (u32));
    if (spank_get_item (sp, S_STEP_CPUS_PER_TASK, &u16) == ESPANK_SUCCESS)
        json_object_set_new (request, "cpus_per_task", json_integer (u16));
    if (spank_get_item (sp, S_JOB_NCPUS, &u16) == ESPANK_SUCCESS)
        json_object_set_new (request, "cpus_on_node", json_integer (u16));
    if (spank_get_item (sp, S_STEP_ALLOC_CORES, &cores) == ESPANK_SUCCESS
        && cores && strlen (cores) < 256)
        json_object_set_new (request, "cores", json_string (cores));
    if (spank_get_item (sp, S_STEP_ALLOC_MEM, &mem) == ESPANK_SUCCESS && mem)
        json_object_set_new (request, "mem_bytes",
                             json_integer ((json_int_t)(mem << 20)));
    return 0;
}

static void send_msg (json_t *msg, const char *what)
{
    tr_error_t error;

    if (tr_proto_request (conf.socket, msg, conf.timeout_ms, NULL, &error)
        < 0) {
        /* log once per step, then stay quiet */
        if (!warned)
            slurm_error ("tracer: %s: %s; the job runs untraced", what,
                         error.text);
        warned = true;
        return;
    }
    if (!strcmp (what, "step_start"))
        notified = true;
}

int slurm_spank_task_post_fork (spank_t sp, int ac, char **av)
{
    pid_t pid = 0;
    uint32_t taskid = 0, stepid = 0;
    json_t *msg;

    if (disabled || !spank_remote (sp))
        return 0;
    spec_from_env (sp);
    if (!tr_spec_enabled (&conf, &spec))
        return 0;
    /* The extern step holds no work of the user's. */
    if (spank_get_item (sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS
        || stepid == STEP_EXTERN)
        return 0;
    if (spank_get_item (sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0
        || spank_get_item (sp, S_TASK_ID, &taskid) != ESPANK_SUCCESS)
        return 0;
    if (!identity && build_context (sp) < 0) {
        slurm_error ("tracer: cannot read the job context; the job runs "
                     "untraced");
        json_decref (identity);
        identity = NULL;
        return 0;
    }
    msg = json_pack ("{s:s s:O s:O s:O s:I s:I s:f}", "op", "step_start",
                     "identity", identity, "request", request, "tags",
                     spec.tags ? spec.tags : json_object (), "task_id",
                     (json_int_t)taskid, "pid", (json_int_t)pid, "interval_s",
                     spec.interval_s > 0 ? spec.interval_s : conf.interval_s);
    if (msg)
        send_msg (msg, "step_start");
    json_decref (msg);
    return 0;
}

int slurm_spank_task_exit (spank_t sp, int ac, char **av)
{
    uint32_t taskid = 0, local = 0;
    pid_t pid = 0;
    int status = 0;
    json_t *msg;

    if (disabled || !spank_remote (sp) || !notified || !identity)
        return 0;
    spank_get_item (sp, S_TASK_ID, &taskid);
    spank_get_item (sp, S_TASK_PID, &pid);
    spank_get_item (sp, S_TASK_EXIT_STATUS, &status);
    spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &local);
    exits_seen++;
    msg = json_pack ("{s:s s:O s:I s:I s:i s:b}", "op", "task_exit",
                     "identity", identity, "task_id", (json_int_t)taskid,
                     "pid", (json_int_t)pid, "wait_status", status, "last",
                     (uint32_t)exits_seen >= local);
    if (msg)
        send_msg (msg, "task_exit");
    json_decref (msg);
    return 0;
}

int slurm_spank_exit (spank_t sp, int ac, char **av)
{
    json_decref (identity);
    json_decref (request);
    identity = request = NULL;
    tr_spec_release (&spec);
    return 0;
}
