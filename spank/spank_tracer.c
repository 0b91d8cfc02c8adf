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

#include "libtracer/hook/hookconf.h"
#include "libtracer/hook/proto.h"

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
/* One slurmstepd hosts every task of the step on this node, and its
 * callbacks run one after the other: a daemon that did not answer once
 * is not waited for again in the same phase, so a hung tracerd costs
 * the step one timeout at its start and at most two at its end (one
 * task_exit, then the last one's final reading), not one per task.
 */
static bool start_unanswered;
static bool end_unanswered;
static bool extern_step;

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

/* tracer-run --pipeline names its run in the job environment too
 * (TRACER_RUN_ID, TRACER_PIPELINE): tags of the user's own, so that a
 * job submitted with a --tracer option of its own, which TRACER_OPTS
 * does not reach, is still in the run.  Tags the option sets win; a
 * value a tag may not hold is ignored.
 */
static void run_from_env (spank_t sp)
{
    static const char *const vars[][2] = {
        { "TRACER_RUN_ID", "run" },
        { "TRACER_PIPELINE", "pipeline" },
    };
    char val[300], item[320];

    for (size_t i = 0; i < sizeof (vars) / sizeof (vars[0]); i++) {
        struct tr_spec s;
        tr_error_t error;

        if (spank_getenv (sp, vars[i][0], val, sizeof (val)) != ESPANK_SUCCESS
            || !val[0] || (spec.tags && json_object_get (spec.tags,
                                                         vars[i][1])))
            continue;
        if ((size_t)snprintf (item, sizeof (item), "tag=%s:%s", vars[i][1],
                              val) >= sizeof (item)
            || strchr (val, ',')
            || tr_spec_parse (item, &s, &error) < 0)
            continue;
        if (!spec.tags)
            spec.tags = json_object ();
        if (spec.tags)
            (void)json_object_update_missing (spec.tags, s.tags);
        tr_spec_release (&s);
    }
}

int slurm_spank_user_init (spank_t sp, int ac, char **av)
{
    if (spank_remote (sp))
        spec_from_env (sp);
    return 0;
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

/* A heterogeneous job's components are jobs of their own (S_JOB_ID is
 * the component's id); the job environment names the leader and the
 * component ids: SLURM_JOB_ID and SLURM_JOB_ID_HET_GROUP_<k>.
 */
static void set_het (spank_t sp, uint32_t jobid)
{
    char buf[32], name[64], want[32];
    char *end;
    long size;

    if (spank_getenv (sp, "SLURM_HET_SIZE", buf, sizeof (buf))
        != ESPANK_SUCCESS)
        return;
    errno = 0;
    size = strtol (buf, &end, 10);
    if (errno || end == buf || *end || size < 1 || size > 128)
        return;
    snprintf (want, sizeof (want), "%u", jobid);
    for (long k = 0; k < size; k++) {
        snprintf (name, sizeof (name), "SLURM_JOB_ID_HET_GROUP_%ld", k);
        if (spank_getenv (sp, name, buf, sizeof (buf)) != ESPANK_SUCCESS
            || strcmp (buf, want))
            continue;
        if (spank_getenv (sp, "SLURM_JOB_ID", buf, sizeof (buf))
                == ESPANK_SUCCESS
            && buf[0]) {
            json_object_set_new (identity, "het_job_id", json_string (buf));
            json_object_set_new (identity, "het_component",
                                 json_integer (k));
        }
        return;
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
    /* an srun step's name as sacct shows it: its command's (srun
     * --job-name is the controller's to say; tracerd may cut it)
     */
    if (stepid < STEP_INTERACTIVE) {
        int argc = 0;
        char **argv = NULL;

        if (spank_get_item (sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS
            && argc > 0 && argv && argv[0] && argv[0][0]) {
            const char *base = strrchr (argv[0], '/');

            base = base && base[1] ? base + 1 : argv[0];
            json_object_set_new (identity, "step_name",
                                 json_string (base));
        }
    }
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
    /* Nothing from the job's environment, which the job script can
     * change before srun: tracerd takes the cluster from its own
     * configuration, user and group names from uid and gid, and the
     * account, partition, QOS, job name, time limit and GPUs from the
     * controller (doc/record-format.md, "Where each field comes from").
     */
    /* slurmstepd inherits SLURMD_NODENAME from slurmd; on multiple-slurmd
     * nodes it differs from the hostname, so the hostname is the last
     * resort.  Never the job's environment: an srun inside a batch job
     * carries the batch node's SLURMD_NODENAME to every node, and the
     * user can set it to anything.
     */
    {
        const char *env = getenv ("SLURMD_NODENAME");
        if (env && *env)
            snprintf (host, sizeof (host), "%s", env);
        else if (gethostname (host, sizeof (host)) < 0)
            snprintf (host, sizeof (host), "unknown");
        host[sizeof (host) - 1] = '\0';
    }
    json_object_set_new (identity, "node", json_string (host));
    set_het (sp, jobid);

    if (spank_get_item (sp, S_JOB_NNODES, &u32) == ESPANK_SUCCESS && u32)
        json_object_set_new (request, "nodes", json_integer (u32));
    if (spank_get_item (sp, S_JOB_TOTAL_TASK_COUNT, &u32) == ESPANK_SUCCESS
        && u32)
        json_object_set_new (request, "tasks", json_integer (u32));
    if (spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &u32) == ESPANK_SUCCESS)
        json_object_set_new (request, "tasks_on_node", json_integer (u32));
    /* uint32_t, unlike S_JOB_NCPUS (spank.h): a uint16_t here lets
     * Slurm write past it into this frame.
     */
    if (spank_get_item (sp, S_STEP_CPUS_PER_TASK, &u32) == ESPANK_SUCCESS)
        json_object_set_new (request, "cpus_per_task", json_integer (u32));
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

/* Returns 0 when the daemon accepted msg, -1 otherwise; *unanswered
 * is set when it did not answer at all (hung, stopped, not running).
 */
static int send_msg (json_t *msg, const char *what, bool *unanswered)
{
    tr_error_t error;
    json_t *reply = NULL;
    int rc;

    rc = tr_proto_request (conf.socket, msg, conf.timeout_ms, &reply,
                           &error);
    if (!reply)
        *unanswered = true;
    json_decref (reply);
    if (rc < 0) {
        /* log once per step, then stay quiet */
        if (!warned)
            slurm_error ("tracer: %s: %s; the job runs untraced", what,
                         error.text);
        warned = true;
        return -1;
    }
    if (!strcmp (what, "step_start"))
        notified = true;
    return 0;
}

/* The extern step's cgroup, named as in /proc/self/cgroup: slurmstepd
 * is charged to it (v1 memory, v2 "<step>/slurm").  A procfs read, no
 * shared storage.
 */
static int extern_cgroup (char *buf, size_t size)
{
    FILE *f = fopen ("/proc/self/cgroup", "re");
    char line[1024];
    int rc = -1;

    if (!f)
        return -1;
    while (rc < 0 && fgets (line, sizeof (line), f)) {
        char *ctrl = strchr (line, ':');
        char *path = ctrl ? strchr (ctrl + 1, ':') : NULL;
        size_t n;
        if (!path)
            continue;
        *path++ = '\0';
        ctrl++;
        path[strcspn (path, "\n")] = '\0';
        n = strlen (path);
        if (!strcmp (ctrl, "") && n > 6 && !strcmp (path + n - 6, "/slurm"))
            path[n - 6] = '\0';
        else if (strcmp (ctrl, "memory"))
            continue;
        if (strstr (path, "/step_extern")
            && (size_t)snprintf (buf, size, "%s", path) < size)
            rc = 0;
    }
    fclose (f);
    return rc;
}

int slurm_spank_task_post_fork (spank_t sp, int ac, char **av)
{
    pid_t pid = 0;
    uint32_t taskid = 0, stepid = 0;
    char cg[512];
    json_t *msg;

    if (disabled || !spank_remote (sp) || start_unanswered)
        return 0;
    if (spank_get_item (sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
        return 0;
    spec_from_env (sp);
    run_from_env (sp);
    if (stepid == STEP_EXTERN) {
        /* No task pid here (taskid -1), and no user option either: the
         * daemon follows the step's cgroup and keeps the record only if
         * another step of the job is traced on the node.
         */
        if (!conf.trace_extern || spec.state == 0)
            return 0;
        extern_step = true;
        if (extern_cgroup (cg, sizeof (cg)) < 0) {
            slurm_debug ("tracer: extern step: no cgroup found");
            return 0;
        }
    }
    else if (!tr_spec_enabled (&conf, &spec)
             || spank_get_item (sp, S_TASK_PID, &pid) != ESPANK_SUCCESS
             || pid <= 0
             || spank_get_item (sp, S_TASK_ID, &taskid) != ESPANK_SUCCESS)
        return 0;
    if (!identity && build_context (sp) < 0) {
        slurm_error ("tracer: cannot read the job context; the job runs "
                     "untraced");
        json_decref (identity);
        json_decref (request);
        identity = request = NULL;
        return 0;
    }
    msg = json_pack ("{s:s s:O s:O s:o s:I s:I s:f}", "op", "step_start",
                     "identity", identity, "request", request, "tags",
                     spec.tags ? json_incref (spec.tags) : json_object (),
                     "task_id", (json_int_t)taskid, "pid", (json_int_t)pid,
                     "interval_s",
                     spec.interval_s > 0 ? spec.interval_s : conf.interval_s);
    if (msg && json_object_get (request, "gpus"))
        json_object_set (msg, "gpus", json_object_get (request, "gpus"));
    if (msg && stepid == STEP_EXTERN
        && (json_object_set_new (msg, "attach",
                                 json_pack ("{s:s}", "cgroup", cg)) < 0
            || json_object_set_new (msg, "conditional", json_true ()) < 0)) {
        json_decref (msg);
        msg = NULL;
    }
    if (msg)
        (void)send_msg (msg, "step_start", &start_unanswered);
    json_decref (msg);
    return 0;
}

int slurm_spank_task_exit (spank_t sp, int ac, char **av)
{
    uint32_t taskid = 0, local = 0;
    pid_t pid = 0;
    int status = 0;
    bool last;
    json_t *msg;

    if (disabled || !spank_remote (sp) || !notified || !identity)
        return 0;
    spank_get_item (sp, S_TASK_ID, &taskid);
    spank_get_item (sp, S_TASK_PID, &pid);
    spank_get_item (sp, S_TASK_EXIT_STATUS, &status);
    spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &local);
    exits_seen++;
    last = (uint32_t)exits_seen >= local;
    /* after a task_exit that went unanswered only the last one, which
     * asks for the final reading, is tried again
     */
    if (end_unanswered && !last)
        return 0;
    msg = json_pack ("{s:s s:O s:I s:I s:i s:b}", "op", "task_exit",
                     "identity", identity, "task_id", (json_int_t)taskid,
                     "pid", (json_int_t)pid, "wait_status", status, "last",
                     last);
    if (msg)
        (void)send_msg (msg, "task_exit", &end_unanswered);
    json_decref (msg);
    return 0;
}

/* A step whose tasks did not all report an exit (the extern step has
 * none; a launch that failed part way) ends here: slurmstepd is about
 * to go, and the daemon takes what it last read.
 */
int slurm_spank_exit (spank_t sp, int ac, char **av)
{
    uint32_t local = 0;

    if (!disabled && spank_remote (sp) && notified && identity
        && !end_unanswered
        && (spank_get_item (sp, S_JOB_LOCAL_TASK_COUNT, &local)
                != ESPANK_SUCCESS
            || (uint32_t)exits_seen < local || extern_step)) {
        json_t *msg = json_pack ("{s:s s:O}", "op", "step_end", "identity",
                                 identity);
        if (msg)
            (void)send_msg (msg, "step_end", &end_unanswered);
        json_decref (msg);
    }
    json_decref (identity);
    json_decref (request);
    identity = request = NULL;
    tr_spec_release (&spec);
    return 0;
}
