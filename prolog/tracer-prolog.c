/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

/* tracer-prolog: the PBS, Torque and LSF job-start and job-end module.
 *
 * The scheduler runs it as a prologue/epilogue, from a PBS hook or as an
 * LSF pre/post-execution command; it tells tracerd that a job started or
 * ended on this host, as the SPANK plugin does for Slurm.  It never fails
 * a job: every error is logged and the exit status is 0 (prolog.error_exit
 * says otherwise), and every step is bounded in time (prolog.timeout,
 * under OpenPBS's 30 s prologue alarm).  The parsing lives in
 * libtracer/node/batch.c.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/conf/conf.h"
#include "libtracer/hook/proto.h"
#include "libtracer/node/batch.h"
#include "libtracer/node/sampler.h"
#include "libtracer/util/path.h"
#include "libtracer/record/record.h"
#include "libtracer/record/when.h"

static struct {
    bool verbose;
    int logfd;          /* --log FILE, or -1 for syslog */
    double deadline;    /* CLOCK_MONOTONIC seconds */
    int error_exit;
    const char *mode;
    const char *job;    /* for log lines */
    pid_t exclude[2];   /* ours in the job's session (tr_batch_exclude) */
} g = { .logfd = -1 };

/* Milliseconds left before the deadline, at least 1. */
static int left_ms (void)
{
    double left = (g.deadline - tr_when_monotonic ()) * 1e3;

    return left < 1 ? 1 : left > 600000 ? 600000 : (int)left;
}

static void say (int pri, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void say (int pri, const char *fmt, ...)
{
    char msg[1024], line[1200];
    va_list ap;
    int n;

    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    /* job data may reach the log: no line breaks or escapes in it */
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    if (g.logfd >= 0) {
        time_t now = time (NULL);
        struct tm tm;
        char ts[32] = "";
        if (localtime_r (&now, &tm))
            strftime (ts, sizeof (ts), "%Y-%m-%dT%H:%M:%S", &tm);
        n = snprintf (line, sizeof (line), "%s tracer-prolog[%d]: %s%s%s\n",
                      ts, (int)getpid (), g.mode ? g.mode : "",
                      g.mode ? ": " : "", msg);
        if (n > 0)
            (void)!write (g.logfd, line,
                          (size_t)n < sizeof (line) ? (size_t)n
                                                    : sizeof (line) - 1);
    }
    else
        syslog (pri, "%s%s%s", g.mode ? g.mode : "", g.mode ? ": " : "", msg);
    if (g.verbose)
        fprintf (stderr, "tracer-prolog: %s%s%s\n", g.mode ? g.mode : "",
                 g.mode ? ": " : "", msg);
}

/* The last resort when something blocks past the deadline: log and leave
 * with the configured status (a job waits on us).
 */
static void on_alarm (int sig)
{
    static const char m[] = "tracer-prolog: out of time; giving up\n";

    (void)sig;
    if (g.logfd >= 0)
        (void)!write (g.logfd, m, sizeof (m) - 1);
    if (g.verbose)
        (void)!write (STDERR_FILENO, m, sizeof (m) - 1);
    _exit (g.error_exit);
}

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: tracer-prolog [OPTIONS] MODE [ARG...]\n"
             "Tell tracerd that a PBS, Torque or LSF job started or ended on "
             "this host.\n\n"
             "Modes (arguments as the scheduler passes them):\n"
             "  pbs-prologue JOBID USER GROUP\n"
             "  pbs-epilogue JOBID USER GROUP JOBNAME SESSION RESOURCE_LIST "
             "RESOURCES_USED\n"
             "               QUEUE ACCOUNT EXIT_STATUS\n"
             "  torque-prologue JOBID USER GROUP JOBNAME RESOURCE_LIMITS "
             "QUEUE ACCOUNT [...]\n"
             "  torque-epilogue JOBID USER GROUP JOBNAME SESSION "
             "RESOURCE_LIMITS\n"
             "               RESOURCES_USED QUEUE ACCOUNT EXIT_STATUS [...]\n"
             "  pbs-hook --event begin|launch|epilogue|end --job JOBID --user "
             "USER\n"
             "           --group GROUP [--job-name NAME] [--queue Q] "
             "[--account A]\n"
             "           [--resources LIST] [--exec-host HOSTS] "
             "[--exec-vnode VNODES]\n"
             "           [--node NAME] [--pid PID] [--exit-status N]\n"
             "  lsf-pre      (HOST_PRE_EXEC; reads the job's environment)\n"
             "  lsf-post     (HOST_POST_EXEC)\n"
             "  lsf-starter COMMAND [ARG...]\n"
             "               (JOB_STARTER, as the job's user; needs "
             "daemon.job_starters)\n"
             "Installed as prologue, epilogue, prologue.parallel or "
             "epilogue.parallel,\nthe mode follows from the name.\n\n"
             "Options:\n"
             "  -c, --config FILE     configuration file\n"
             "                        (default " SYSCONFDIR
             "/tracer/tracer.yaml;\n"
             "                        $TRACER_CONF only when not run as "
             "root)\n"
             "  -t, --timeout SECONDS bound on the whole run "
             "(default prolog.timeout)\n"
             "  -v, --verbose         log to standard error too\n"
             "      --log FILE        append log lines to FILE instead of "
             "syslog\n"
             "  -h, --help            show this help and exit\n"
             "  -V, --version         show the version and exit\n\n"
             "The exit status is 0, whatever happens, unless prolog.error_exit "
             "is set;\nlsf-starter exits with its command's status.\n");
}

static bool short_host (char *buf, size_t size)
{
    if (gethostname (buf, size) < 0)
        return false;
    buf[size - 1] = '\0';
    buf[strcspn (buf, ".")] = '\0';
    return buf[0] != '\0';
}

/* The node PBS runs the job on: PBS_MOM_NODE_NAME from pbs_mom's
 * environment or pbs.conf, which may differ from the host name (a
 * record's node must be the one qstat and exec_host name).  The host
 * name where neither says.
 */
static void pbs_node (char *node, size_t size)
{
    const char *pc = getenv ("PBS_CONF_FILE");
    char name[256];

    if (tr_batch_pbs_node (getenv ("PBS_MOM_NODE_NAME"),
                           pc && *pc ? pc : "/etc/pbs.conf", name,
                           sizeof (name))
            == 0
        && strlen (name) < size)
        snprintf (node, size, "%s", name);
}

/* The first fields of /proc/PID/stat after the command: parent and
 * session; the command itself in comm.
 */
static bool proc_stat (pid_t pid, char *comm, size_t size, long long *ppid,
                       long long *sid)
{
    char path[64], buf[512], *p, *open_paren;
    FILE *f;

    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen (path, "re")))
        return false;
    p = fgets (buf, sizeof (buf), f);
    fclose (f);
    if (!p || !(open_paren = strchr (buf, '(')) || !(p = strrchr (buf, ')'))
        || sscanf (p + 2, "%*c %lld %*d %lld", ppid, sid) != 2)
        return false;
    snprintf (comm, size, "%.*s", (int)(p - open_paren - 1), open_paren + 1);
    return true;
}

/* The session the job will have, from a PBS prologue.  pbs_mom forks a
 * child for the job that calls setsid() and then runs the prologue in a
 * session of its own; after it the child becomes the job's shell, so its
 * pid is the job's session id.  The parent is taken for that child only
 * when it is a fork of its own parent (the same program) and not in the
 * prologue's session: not a wrapper script that ran tracer-prolog
 * without exec, and not a mom that runs prologues itself.
 */
static long long future_session (void)
{
    pid_t ppid = getppid ();
    long long gp, psid, ggp, gsid;
    char comm[64], gcomm[64];

    if (ppid <= 1 || getsid (0) == ppid
        || !proc_stat (ppid, comm, sizeof (comm), &gp, &psid) || gp <= 1
        || !proc_stat ((pid_t)gp, gcomm, sizeof (gcomm), &ggp, &gsid)
        || strcmp (comm, gcomm))
        return -1;
    return ppid;
}

static void qstat (const tr_conf_t *conf,
                   struct tr_batch_job *job,
                   const char *node)
{
    char *argv[] = { conf->prolog.qstat, (char *)"-f", (char *)"-F",
                     (char *)"json", job->job_id, NULL };
    char pbsconf[4200], *envp[] = { (char *)"PATH=/bin:/usr/bin", NULL, NULL };
    const char *pc = getenv ("PBS_CONF_FILE");
    static char out[256 * 1024];
    tr_error_t error;
    int budget = left_ms () / 3;

    if (!conf->prolog.qstat || access (conf->prolog.qstat, X_OK) < 0)
        return;
    if (pc && *pc
        && (size_t)snprintf (pbsconf, sizeof (pbsconf), "PBS_CONF_FILE=%s", pc)
               < sizeof (pbsconf))
        envp[1] = pbsconf;
    if (budget > 5000)
        budget = 5000;
    if (tr_batch_run (argv, envp, budget, out, sizeof (out), &error) < 0
        || tr_batch_pbs_qstat (out, node, job, &error) < 0)
        say (LOG_NOTICE, "job %s: %s (going on without it)", job->job_id,
             tr_error_str (&error));
}

/* Send msg to tracerd within what is left of the time.  "unknown step"
 * at an end is normal for a PBS execjob_end after execjob_epilogue.
 */
/* 0 when tracerd took msg; 1 when it no longer knew the step and
 * quiet_unknown says that is expected; -1 (said) otherwise.
 */
static int notify (const tr_conf_t *conf, json_t *msg, bool quiet_unknown)
{
    /* a daemon that did not answer once is not waited for again: one
     * bounded wait per run, however many messages it has to send
     */
    static bool unanswered;
    tr_error_t error;
    json_t *reply = NULL;
    int rc;

    if (unanswered) {
        say (LOG_NOTICE, "job %s: tracerd did not answer before; not "
             "waiting for it again", g.job);
        return -1;
    }
    rc = tr_proto_request (conf->socket_path, msg, left_ms (), &reply,
                           &error);
    if (!reply)
        unanswered = true;
    if (rc < 0) {
        const char *why = reply ? json_string_value (json_object_get (reply,
                                                                      "error"))
                                : NULL;
        /* the end already said (a PBS execjob_end after its
         * execjob_epilogue): no second "ended" line
         */
        if (why && !strcmp (why, "unknown step") && quiet_unknown)
            rc = 1;
        else if (why && !strcmp (why, "unknown step"))
            say (LOG_NOTICE, "job %s: tracerd was not following it on this "
                 "host (its start never reached tracerd)", g.job);
        else
            say (LOG_WARNING, "job %s: tracerd at %s: %s", g.job,
                 conf->socket_path, why ? why : tr_error_str (&error));
    }
    json_decref (reply);
    return rc;
}

/* own_tree: follow pid's own process tree (and the job's cgroup once the
 * tree is seen in it), not the job's environment and session: what
 * tracerd hears from a job starter that runs as the user.
 */
/* The parent, when it is the shell LSF runs a pre- or post-exec with:
 * it carries the job's environment and is not the job's top process
 * (LS_JOBPID).  0 otherwise.
 */
static pid_t lsf_wrapper (const struct tr_batch_job *job)
{
    pid_t ppid = getppid ();
    const char *top = getenv ("LS_JOBPID");
    char env[300];

    if (ppid <= 1 || (top && atoll (top) == (long long)ppid)
        || tr_batch_env_match (job, env, sizeof (env)) < 0
        || !tr_step_environ_has (ppid, env))
        return 0;
    return ppid;
}

static int send_start (const tr_conf_t *conf,
                       const struct tr_batch_job *job,
                       const char *node,
                       pid_t pid,
                       bool own_tree)
{
    tr_error_t error;
    json_t *msg = tr_batch_start_msg (job, node, pid, &error), *attach;
    char cg[160];
    int rc;

    for (size_t i = 0; msg && i < 2; i++)
        if (g.exclude[i] > 1 && tr_batch_exclude (msg, g.exclude[i]) < 0) {
            json_decref (msg);
            msg = NULL;
            tr_errprintf (&error, "cannot build the notice");
        }
    if (msg && own_tree
        && (tr_batch_cgroup_name (job, cg, sizeof (cg)) < 0
            || !(attach = json_pack ("{s:b s:s}", "tree", 1, "cgroup_name",
                                     cg))
            || json_object_set_new (msg, "attach", attach) < 0)) {
        json_decref (msg);
        msg = NULL;
        tr_errprintf (&error, "cannot build the notice");
    }
    if (!msg) {
        say (LOG_ERR, "job %s: %s", job->job_id, tr_error_str (&error));
        return -1;
    }
    if ((rc = notify (conf, msg, false)) == 0)
        say (LOG_INFO, "job %s: tracerd follows it on %s", job->job_id, node);
    json_decref (msg);
    return rc;
}

static int send_end (const tr_conf_t *conf,
                     const struct tr_batch_job *job,
                     const char *node,
                     bool quiet_unknown)
{
    tr_error_t error;
    json_t *msg = tr_batch_end_msg (job, node, &error);
    int rc;

    for (size_t i = 0; msg && i < 2; i++)
        if (g.exclude[i] > 1 && tr_batch_exclude (msg, g.exclude[i]) < 0) {
            json_decref (msg);
            msg = NULL;
            tr_errprintf (&error, "cannot build the notice");
        }
    if (!msg) {
        say (LOG_ERR, "job %s: %s", job->job_id, tr_error_str (&error));
        return -1;
    }
    if ((rc = notify (conf, msg, quiet_unknown)) == 0)
        say (LOG_INFO, "job %s: ended on %s", job->job_id, node);
    json_decref (msg);
    return rc > 0 ? 0 : rc;
}

static bool set (char *dst, size_t size, const char *src)
{
    return (size_t)snprintf (dst, size, "%s", src ? src : "") < size;
}

static bool parse_ll (const char *s, long long *v)
{
    char *end;

    errno = 0;
    *v = strtoll (s, &end, 10);
    return s[0] && !*end && !errno;
}

/* Job id, user and group: the first three words of every PBS and Torque
 * prologue and epilogue.
 */
static int who (struct tr_batch_job *job, char **av)
{
    if (tr_batch_set_job_id (job, av[0]) < 0 || !set (job->user,
                                                      sizeof (job->user),
                                                      av[1])
        || !set (job->group, sizeof (job->group), av[2])) {
        say (LOG_ERR, "bad job id, user or group");
        return -1;
    }
    g.job = job->job_id;
    return 0;
}

/* The epilogue's words 4-10 (PBS and Torque agree on them). */
static int epilogue_args (struct tr_batch_job *job, char **av)
{
    long long v;

    if (who (job, av) < 0)
        return -1;
    set (job->job_name, sizeof (job->job_name), av[3]);
    if (parse_ll (av[4], &v) && v > 0)
        job->session = v;
    tr_batch_pbs_resources (av[5], job);
    set (job->queue, sizeof (job->queue), av[7]);
    set (job->account, sizeof (job->account), av[8]);
    if (!parse_ll (av[9], &v)) {
        say (LOG_WARNING, "job %s: exit status '%s' is not a number",
             job->job_id, av[9]);
        return 0;
    }
    job->have_exit = true;
    job->exit_status = v;
    return 0;
}

static const char *env_get (const char *name, void *arg)
{
    (void)arg;
    return getenv (name);
}

/* The LSF job whose environment this is; logged when there is none. */
static int lsf_job (const tr_conf_t *conf,
                    const char *node,
                    struct tr_batch_job *job)
{
    tr_error_t error;

    tr_batch_job_init (job, TR_BATCH_LSF);
    if (tr_batch_lsf_env (env_get, NULL, node,
                          1LL << (10 * conf->prolog.lsf_unit), job, &error)
        < 0) {
        say (LOG_ERR, "%s", tr_error_str (&error));
        return -1;
    }
    g.job = job->job_id;
    return 0;
}

/* LSF JOB_STARTER: run as the job's user, this process is the job's
 * top; tracerd (with daemon.job_starters) follows its process tree, or
 * the job's cgroup once it sees the tree in one.  The command runs
 * whatever happens to tracer; the exit status is the command's (128+N
 * when a signal N ended it, 127 when it cannot be run).
 */
static int lsf_starter (const tr_conf_t *conf, int ac, char **av)
{
    static const int fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM,
                               SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP };
    struct tr_batch_job job;
    char node[256];
    sigset_t set, old;
    bool traced = false;
    pid_t pid;
    int status = 0, sig;

    if (ac < 1) {
        say (LOG_ERR, "lsf-starter: no command");
        return 127;
    }
    if (!short_host (node, sizeof (node)))
        say (LOG_ERR, "cannot tell this host's name; running the job "
             "untraced");
    else if (lsf_job (conf, node, &job) == 0)
        traced = send_start (conf, &job, node, getpid (), true) == 0;
    /* the job may run for days: no alarm over it */
    alarm (0);
    sigemptyset (&set);
    for (size_t i = 0; i < sizeof (fwd) / sizeof (fwd[0]); i++)
        sigaddset (&set, fwd[i]);
    sigaddset (&set, SIGCHLD);
    sigprocmask (SIG_BLOCK, &set, &old);
    if ((pid = fork ()) < 0) {
        say (LOG_ERR, "fork: %s", strerror (errno));
        sigprocmask (SIG_SETMASK, &old, NULL);
        execvp (av[0], av);
        return 127;
    }
    if (pid == 0) {
        sigprocmask (SIG_SETMASK, &old, NULL);
        execvp (av[0], av);
        fprintf (stderr, "tracer-prolog: %s: %s\n", av[0], strerror (errno));
        _exit (errno == ENOENT ? 127 : 126);
    }
    for (;;) {
        if ((sig = sigwaitinfo (&set, NULL)) < 0)
            continue;
        if (sig != SIGCHLD) {
            (void)kill (pid, sig);
            continue;
        }
        if (waitpid (pid, &status, WNOHANG) == pid)
            break;
    }
    if (traced) {
        g.deadline = tr_when_monotonic () + conf->prolog.timeout_s;
        job.have_exit = true;
        job.exit_status = status;
        (void)send_end (conf, &job, node, false);
    }
    return WIFEXITED (status)     ? WEXITSTATUS (status)
           : WIFSIGNALED (status) ? 128 + WTERMSIG (status)
                                  : 1;
}

static const struct option hook_opts[] = {
    { "event", required_argument, NULL, 'e' },
    { "job", required_argument, NULL, 'j' },
    { "user", required_argument, NULL, 'u' },
    { "group", required_argument, NULL, 'g' },
    { "job-name", required_argument, NULL, 'n' },
    { "queue", required_argument, NULL, 'q' },
    { "account", required_argument, NULL, 'a' },
    { "resources", required_argument, NULL, 'r' },
    { "exec-host", required_argument, NULL, 'x' },
    { "exec-vnode", required_argument, NULL, 'X' },
    { "node", required_argument, NULL, 'N' },
    { "pid", required_argument, NULL, 'p' },
    { "exit-status", required_argument, NULL, 's' },
    { NULL, 0, NULL, 0 },
};

static int pbs_hook (const tr_conf_t *conf,
                     int ac,
                     char **av,
                     const char *host)
{
    struct tr_batch_job job;
    const char *event = NULL, *id = NULL, *exec_host = NULL;
    const char *exec_vnode = NULL, *node = host;
    long long pid = 0, v;
    int c;

    tr_batch_job_init (&job, TR_BATCH_PBS);
    optind = 0; /* GNU getopt: start afresh */
    while ((c = getopt_long (ac, av, "", hook_opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            event = optarg;
            break;
        case 'j':
            id = optarg;
            break;
        case 'u':
            set (job.user, sizeof (job.user), optarg);
            break;
        case 'g':
            set (job.group, sizeof (job.group), optarg);
            break;
        case 'n':
            set (job.job_name, sizeof (job.job_name), optarg);
            break;
        case 'q':
            set (job.queue, sizeof (job.queue), optarg);
            break;
        case 'a':
            set (job.account, sizeof (job.account), optarg);
            break;
        case 'r':
            tr_batch_pbs_resources (optarg, &job);
            break;
        case 'x':
            exec_host = optarg;
            break;
        case 'X':
            exec_vnode = optarg;
            break;
        case 'N':
            /* pbs.get_local_nodename(): the node's name in PBS */
            if (tr_record_id_is_safe (optarg))
                node = optarg;
            else
                say (LOG_WARNING, "pbs-hook: --node is not a node name; "
                     "using %s", host);
            break;
        case 'p':
            if (!parse_ll (optarg, &pid) || pid < 0 || pid > 4194304)
                pid = 0;
            break;
        case 's':
            if (parse_ll (optarg, &v)) {
                job.have_exit = true;
                job.exit_status = v;
            }
            break;
        default:
            say (LOG_ERR, "pbs-hook: bad arguments");
            return -1;
        }
    }
    if (!event || !id || tr_batch_set_job_id (&job, id) < 0) {
        say (LOG_ERR, "pbs-hook: --event and --job are required");
        return -1;
    }
    g.job = job.job_id;
    /* exec_host is not set yet at execjob_begin and execjob_launch:
     * exec_vnode says how many hosts and what this one holds
     */
    if (exec_vnode)
        tr_batch_pbs_exec_vnode (exec_vnode, node, &job);
    if (exec_host)
        tr_batch_pbs_exec_host (exec_host, node, &job);
    if (!strcmp (event, "begin"))
        return send_start (conf, &job, node, 0, false);
    if (!strcmp (event, "launch")) {
        /* the starter process becomes the job's session leader; this
         * hook's interpreter (our parent) runs below it, in its session
         */
        if (pid > 0)
            job.session = pid;
        if (getppid () != (pid_t)pid)
            g.exclude[0] = getppid ();
        g.exclude[1] = getpid ();
        return send_start (conf, &job, node, (pid_t)pid, false);
    }
    if (!strcmp (event, "epilogue"))
        return send_end (conf, &job, node, false);
    if (!strcmp (event, "end"))
        return send_end (conf, &job, node, true);
    say (LOG_ERR, "pbs-hook: unknown event '%s'", event);
    return -1;
}

static int run (const tr_conf_t *conf, const char *mode, int ac, char **av)
{
    struct tr_batch_job job;
    char node[256];

    if (!short_host (node, sizeof (node))) {
        say (LOG_ERR, "cannot tell this host's name");
        return -1;
    }
    if (!strncmp (mode, "pbs-", 4))
        pbs_node (node, sizeof (node));
    if (!strcmp (mode, "pbs-prologue") || !strcmp (mode, "torque-prologue")) {
        bool torque = mode[0] == 't';
        tr_batch_job_init (&job, torque ? TR_BATCH_TORQUE : TR_BATCH_PBS);
        if (ac < (torque ? 7 : 3)) {
            say (LOG_ERR, "expected %s arguments, got %d",
                 torque ? "7 or more" : "3", ac);
            return -1;
        }
        if (who (&job, av) < 0)
            return -1;
        if (torque) {
            set (job.job_name, sizeof (job.job_name), av[3]);
            tr_batch_pbs_resources (av[4], &job);
            set (job.queue, sizeof (job.queue), av[5]);
            set (job.account, sizeof (job.account), av[6]);
        }
        else {
            job.session = future_session ();
            qstat (conf, &job, node);
        }
        /* the prologue runs below the job's starter: not the job's */
        g.exclude[0] = getpid ();
        return send_start (conf, &job, node, 0, false);
    }
    if (!strcmp (mode, "pbs-epilogue") || !strcmp (mode, "torque-epilogue")) {
        tr_batch_job_init (&job, mode[0] == 't' ? TR_BATCH_TORQUE
                                                : TR_BATCH_PBS);
        if (ac < 10) {
            say (LOG_ERR, "expected 10 arguments or more, got %d", ac);
            return -1;
        }
        if (epilogue_args (&job, av) < 0)
            return -1;
        return send_end (conf, &job, node, false);
    }
    if (!strcmp (mode, "pbs-hook"))
        return pbs_hook (conf, ac + 1, av - 1, node);
    if (!strcmp (mode, "lsf-pre") || !strcmp (mode, "lsf-post")) {
        if (lsf_job (conf, node, &job) < 0)
            return -1;
        /* it carries the job's environment (and runs below the job's
         * top process under OpenLava): never the job's own, nor is the
         * shell LSF runs it with ("/bin/sh -c CMDLINE"), which carries
         * it too; the job's top process (LS_JOBPID) or sbatchd, the
         * parent when that shell is gone, carry no such environment
         */
        g.exclude[0] = getpid ();
        g.exclude[1] = lsf_wrapper (&job);
        if (!strcmp (mode, "lsf-pre"))
            return send_start (conf, &job, node, 0, false);
        return send_end (conf, &job, node, false);
    }
    /* a usage error an admin makes by hand or in the scheduler's
     * configuration: said on stderr too (never the job's doing), named
     * once; the exit status stays the documented one
     */
    g.mode = NULL;
    say (LOG_ERR, "unknown mode '%s' (tracer-prolog --help lists them)",
         mode);
    if (!g.verbose)
        fprintf (stderr,
                 "tracer-prolog: unknown mode '%s' (tracer-prolog --help "
                 "lists them)\n",
                 mode);
    return -1;
}

/* The mode implied by the name PBS or Torque runs the file under. */
static const char *implied_mode (const char *argv0, int nargs)
{
    const char *base = strrchr (argv0, '/');
    bool torque_env = getenv ("PBS_NODEFILE") || getenv ("PBS_MSHOST");

    base = base ? base + 1 : argv0;
    if (!strcmp (base, "prologue"))
        return nargs >= 6 ? "torque-prologue" : "pbs-prologue";
    if (!strcmp (base, "epilogue"))
        return torque_env || nargs >= 11 ? "torque-epilogue" : "pbs-epilogue";
    if (!strcmp (base, "prologue.parallel"))
        return "torque-prologue";
    if (!strcmp (base, "epilogue.parallel"))
        return "torque-epilogue";
    return NULL;
}

static const struct option opts[] = {
    { "config", required_argument, NULL, 'c' },
    { "timeout", required_argument, NULL, 't' },
    { "verbose", no_argument, NULL, 'v' },
    { "log", required_argument, NULL, 'L' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

int main (int argc, char **argv)
{
    const char *conf_path, *log_path = NULL, *mode;
    const char *env_conf = getenv ("TRACER_CONF");
    /* as root the configuration is the admin's: --config or the compiled
     * default.  The environment may be the job's (LSF hands the job's to
     * HOST_PRE_EXEC), and a file it names must not be read as root.
     */
    bool privileged = geteuid () == 0 || getuid () == 0;
    bool env_refused = privileged && env_conf && *env_conf;
    bool conf_explicit = !privileged && env_conf && *env_conf;
    bool bad_usage = false;
    double timeout = 0;
    tr_conf_t *conf;
    tr_error_t error;
    int c, first, rc;

    if (env_refused)
        unsetenv ("TRACER_CONF");
    conf_path = tr_conf_default_path ();
    g.deadline = tr_when_monotonic () + 25;
    signal (SIGPIPE, SIG_IGN);
    signal (SIGALRM, on_alarm);
    alarm (27);
    if ((mode = implied_mode (argv[0], argc - 1)))
        first = 1;
    else {
        while ((c = getopt_long (argc, argv, "+c:t:vhV", opts, NULL)) != -1) {
            switch (c) {
            case 'c':
                conf_path = optarg;
                conf_explicit = true;
                break;
            case 't': {
                char *end;
                timeout = strtod (optarg, &end);
                if (*end || !(timeout >= 0.1 && timeout <= 300))
                    bad_usage = true;
                break;
            }
            case 'v':
                g.verbose = true;
                break;
            case 'L':
                log_path = optarg;
                break;
            case 'h':
                usage (stdout);
                return 0;
            case 'V':
                printf ("tracer-prolog %s\n", TRACER_VERSION);
                return 0;
            default:
                bad_usage = true;
                break;
            }
        }
        first = optind + 1;
        mode = optind < argc ? argv[optind] : NULL;
    }
    /* --log FILE: appended to, its directory and parents made when
     * missing (a hook's default may have none); where it cannot be, the
     * messages go to syslog, which says so once
     */
    if (log_path
        && (g.logfd = tr_path_open_log (log_path, 0600, &error)) < 0)
        fprintf (stderr, "tracer-prolog: %s\n", tr_error_str (&error));
    openlog ("tracer-prolog", LOG_PID, LOG_DAEMON);
    if (log_path && g.logfd < 0)
        syslog (LOG_WARNING, "--log %s: %s; logging to syslog instead",
                log_path, tr_error_str (&error));
    g.mode = mode;
    if (!(conf = tr_conf_create ())) {
        say (LOG_ERR, "out of memory");
        return 0;
    }
    if (env_refused)
        say (LOG_WARNING, "TRACER_CONF ignored: run as root, tracer-prolog "
             "reads its configuration from --config or %s", conf_path);
    /* a broken configuration: the defaults still reach tracerd.  As
     * root, only a file that root alone can change is read at all (its
     * errors quote it)
     */
    if (privileged && tr_batch_conf_trusted (conf_path, geteuid (), &error) < 0)
        say (LOG_ERR, "%s (going on with the defaults)", tr_error_str (&error));
    else if (tr_conf_load (conf, conf_path, &error) < 0
             && !(errno == ENOENT && !conf_explicit))
        say (LOG_ERR, "%s (going on with the defaults)", tr_error_str (&error));
    g.error_exit = conf->prolog.error_exit;
    g.deadline = tr_when_monotonic () + (timeout > 0 ? timeout : conf->prolog.timeout_s);
    alarm ((unsigned)(g.deadline - tr_when_monotonic ()) + 2);
    if (!bad_usage && mode && !strcmp (mode, "lsf-starter")) {
        rc = lsf_starter (conf, argc - first, argv + first);
        tr_conf_destroy (conf);
        closelog ();
        return rc;
    }
    if (bad_usage || !mode) {
        say (LOG_ERR, "bad usage (see tracer-prolog --help)");
        rc = -1;
    }
    else
        rc = run (conf, mode, argc - first, argv + first);
    tr_conf_destroy (conf);
    closelog ();
    return rc < 0 ? g.error_exit : 0;
}
