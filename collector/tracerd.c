/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd: the node daemon.  Scheduler hooks notify it over a unix socket
 * (SO_PEERCRED-checked) when a step's task starts and ends; one loop
 * samples every active step; at the step's end the record is signed,
 * written to the node-local spool, and forwarded to the shared store by a
 * child process, with retries, so a hung or full store never holds a job
 * or the daemon, and loses nothing.
 *
 * This file is the outline: options, configuration, logging, the
 * sources, and the poll loop that hands each wakeup to the rooms
 * (tracerd.h): steps.c, server.c, exits.c, evidence.c, sched.c,
 * forward.c and notice.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/conf/conf.h"
#include "libtracer/node/cgroup.h"
#include "libtracer/node/gpu.h"
#include "libtracer/node/psi.h"
#include "libtracer/node/sources.h"
#include "libtracer/node/taskstats.h"
#include "libtracer/record/when.h"
#include "libtracer/util/error.h"
#include "libtracer/util/fsroot.h"
#include "libtracer/util/path.h"
#include "libtracer/util/strbuf.h"

#include "tracerd.h"

/* A step keeps up to this many cgroup files open (libtracer/util/fsroot.h);
 * the daemon keeps FD_RESERVE descriptors for clients, state and records
 * whatever the steps hold (raise_fd_limit).
 */
#define FDS_PER_STEP 16
#define FD_RESERVE 512

struct tracerd d = { .listen_fd = -1, .state_fd = -1, .live_fd = -1 };

static const char *conf_path;
static bool conf_explicit;

/* where tracerd_log writes (log.target) and from which level */
static struct {
    FILE *f;
    bool syslog;
    int level;
} lg = { .level = LOG_INFO };

static volatile sig_atomic_t got_term, got_hup;

void tracerd_log (int pri, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (pri > lg.level)
        return;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (lg.syslog) {
        syslog (pri, "%s", buf);
        return;
    }
    {
        static const char *names[] = { "emerg",   "alert",  "crit", "error",
                                       "warning", "notice", "info", "debug" };
        char ts[32];
        struct timespec now;
        struct tm tm;
        FILE *f = lg.f ? lg.f : stderr;
        clock_gettime (CLOCK_REALTIME, &now);
        localtime_r (&now.tv_sec, &tm);
        strftime (ts, sizeof (ts), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf (f, "%s.%03ld tracerd[%d]: %s: %s\n", ts, now.tv_nsec / 1000000,
                 (int)getpid (), names[pri & 7], buf);
        fflush (f);
    }
}

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: tracerd [OPTIONS]\n"
             "Node daemon of tracer: samples job steps and writes their "
             "records.\n\n"
             "  -c, --config=FILE   configuration file\n"
             "                      (default %s)\n"
             "  -f, --foreground    stay in the foreground\n"
             "      --check-config  validate the configuration and exit\n"
             "  -h, --help          show this help and exit\n"
             "  -V, --version       show the version and exit\n",
             tr_conf_default_path ());
}

static int open_log (void)
{
    const char *t = d.conf->log_target;

    if (lg.f) {
        fclose (lg.f);
        lg.f = NULL;
    }
    lg.syslog = false;
    lg.level = d.conf->log_level;
    if (!t || !strcmp (t, "syslog")) {
        openlog ("tracerd", LOG_PID, LOG_DAEMON);
        lg.syslog = true;
    }
    else if (strcmp (t, "stderr") != 0) {
        /* its directory (and parents) made when missing */
        tr_error_t error;
        int fd = tr_path_open_log (t, 0640, &error);
        if (fd < 0) {
            fprintf (stderr, "tracerd: %s\n", tr_error_str (&error));
            return -1;
        }
        if (!(lg.f = fdopen (fd, "a"))) {
            fprintf (stderr, "tracerd: %s: %s\n", t, strerror (errno));
            close (fd);
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
    if (tr_conf_load (conf, conf_path, &error) < 0) {
        if (!(errno == ENOENT && !conf_explicit)) {
            if (d.listen_fd >= 0)
                tracerd_log (LOG_ERR, "%s", tr_error_str (&error));
            else
                fprintf (stderr, "tracerd: %s\n", tr_error_str (&error));
            tr_conf_destroy (conf);
            return -1;
        }
    }
    /* Root trusts this file: refuse one that others could have written. */
    if (access (conf_path, F_OK) == 0) {
        int secure = tr_path_is_secure (conf_path, 0, &error);
        if (secure != 1) {
            const char *why = secure == 0 ? error.text : strerror (errno);
            if (d.listen_fd >= 0)
                tracerd_log (LOG_ERR, "%s: insecure: %s", conf_path, why);
            else
                fprintf (stderr, "tracerd: %s: insecure: %s\n", conf_path, why);
            tr_conf_destroy (conf);
            return -1;
        }
    }
    *out = conf;
    return 0;
}

/* Open a directory named by root's own configuration.  Existing parts
 * are used as they are (they may be links, e.g. /var/run -> /run: root
 * chose them); missing ones are created with mode, and a component that
 * is created is never reached through a link.
 */
int tracerd_open_dir (const char *dir, mode_t mode, tr_error_t *error)
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
        return tr_errprintf (error, "%s: not an absolute directory path", dir);
    }
    base++;
    if ((pfd = tracerd_open_dir (parent, 0755, error)) < 0)
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

/* The kernel's evidence (evidence.c), then process exits (taskstats)
 * and GPUs (NVML), where the node has them.
 */
static void open_sources (void)
{
    tr_error_t error;

    tracerd_evidence_open ();

    if (d.conf->taskstats) {
        if (!(d.taskstats = tr_taskstats_open (&error)))
            tracerd_log (LOG_WARNING,
                         "taskstats unavailable (%s): processes "
                         "shorter than an interval may be missed",
                         tr_error_str (&error));
        /* without it each step holds its own (procs.h) */
        else if (!(d.exit_window = tr_exit_window_create ()))
            tracerd_log (LOG_WARNING, "exit window: out of memory; "
                                      "each step holds its own");
        tracerd_execs_open ();
    }
    if (d.conf->gpu) {
        if ((d.gpu = tr_gpu_open (d.conf->nvml_library, &error)))
            tracerd_log (LOG_INFO, "NVML: %d GPUs, driver %s",
                         tr_gpu_count (d.gpu), tr_gpu_driver (d.gpu));
        else if (errno != ENOENT && errno != ENODEV)
            /* ENOENT: no library; ENODEV: library but no driver loaded */
            tracerd_log (LOG_WARNING, "NVML: %s; GPUs not recorded",
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
            tracerd_log (LOG_NOTICE,
                         "turned on per-task delay accounting "
                         "(kernel.task_delayacct = 1) for the I/O and memory "
                         "stall of steps on this %s host (sampling.delayacct: "
                         "%s)",
                         tr_cgroup_layout_name (layout),
                         d.conf->delayacct == TR_DELAYACCT_ON ? "on" : "auto");
        else if (rc < 0)
            tracerd_log (LOG_WARNING,
                         "%s: the I/O and memory stall of steps "
                         "will be unknown",
                         tr_error_str (&error));
    }
    if ((lost = tr_stall_describe (d.conf->delayacct, d.conf->psi_mirror,
                                   d.conf->taskstats, &sb))
        < 0) {
        tr_strbuf_free (&sb);
        return;
    }
    for (line = tr_strbuf_str (&sb); *line; line = nl + 1) {
        if (!(nl = strchr (line, '\n')))
            break;
        tracerd_log (lost > 0 && !strncmp (line, "stall:", 6) ? LOG_WARNING
                                                              : LOG_INFO,
                     "%.*s", (int)(nl - line), line);
    }
    tr_strbuf_free (&sb);
}

static void reload (void)
{
    tr_conf_t *conf;

    if (load_conf (&conf) < 0) {
        tracerd_log (LOG_ERR, "reload failed; keeping the current "
                              "configuration");
        return;
    }
    tr_conf_destroy (d.conf);
    d.conf = conf;
    open_log ();
    tracerd_log (LOG_NOTICE, "configuration reloaded from %s", conf_path);
    apply_delayacct ();
    tracerd_evidence_reload ();
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
                             .rlim_max =
                                 rl.rlim_max > want ? rl.rlim_max : want };
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
        tracerd_log (LOG_NOTICE,
                     "%llu file descriptors allowed: beyond about "
                     "%ld steps, cgroup files are opened for each reading",
                     (unsigned long long)rl.rlim_cur,
                     (keep > 0 ? keep : 0) / FDS_PER_STEP);
    }
}

/* The poll loop, until SIGTERM: each wakeup takes process exits first,
 * then the kernel log, the clients, the forwarder and the scheduler's
 * answers, then samples the steps that are due and does what else is
 * due (pending records, live summaries, mail, forwarding, reaping).
 */
static void loop (void)
{
    double next_sample = tr_when_monotonic ();

    while (!got_term) {
        struct pollfd pfd[5 + MAX_QUERIES + MAX_CONNS] = {
            { .fd = d.listen_fd, .events = POLLIN },
            { .fd = -1, .events = POLLIN },
        };
        double now = tr_when_monotonic ();
        double wake;
        int timeout;
        int nq, nc, ready;

        nq = tracerd_sched_fds (pfd + 2, &next_sample);
        /* the forwarder's pipe: it hangs up when the forwarder exits */
        pfd[2 + nq].fd = tracerd_forward_fd (&next_sample);
        pfd[2 + nq].events = POLLIN;
        /* clients' connections, each until its deadline */
        wake = tracerd_server_expire (now, next_sample);
        nc = tracerd_server_fds (pfd + 3 + nq);
        /* the kernel log, after the connections */
        pfd[3 + nq + nc].fd = tracerd_evidence_fd (&wake);
        pfd[3 + nq + nc].events = POLLIN;
        /* processes' execs, read before the exits they precede */
        pfd[4 + nq + nc].fd = tracerd_execs_fd (now, &wake);
        pfd[4 + nq + nc].events = POLLIN;
        /* process exits, read in batches and offered in slices */
        pfd[1].fd = tracerd_exits_poll_fd (now, &wake);
        timeout = tr_when_poll_ms (wake, now);
        ready = poll (pfd, (nfds_t)(5 + nq + nc), timeout);
        if (ready > 0 && (pfd[4 + nq + nc].revents & POLLIN))
            tracerd_execs_read ();
        /* exits first: a task_exit may finish the step they belong to */
        if (tracerd_exits_waiting ()
            || (ready > 0 && (pfd[1].revents & POLLIN)))
            tracerd_exits_slice (ready > 0 && (pfd[1].revents & POLLIN));
        /* the kernel's lines before the ends of steps they may concern */
        if (ready > 0 && (pfd[3 + nq + nc].revents & POLLIN))
            tracerd_evidence_read ();
        tracerd_evidence_retry (ready > 0 && nc > 0);
        if (ready > 0) {
            /* newest last: serving one moves the last into its place */
            for (int i = nc - 1; i >= 0; i--)
                if (pfd[3 + nq + i].revents)
                    tracerd_server_serve (i);
            if (pfd[0].revents & POLLIN)
                tracerd_server_accept (tr_when_monotonic ());
            if (pfd[2 + nq].revents)
                tracerd_forward_reap (tr_when_monotonic ());
        }
        if (got_hup) {
            got_hup = 0;
            reload ();
        }
        now = tr_when_monotonic ();
        if (nq > 0)
            tracerd_sched_poll (pfd + 2, now);
        if (now >= next_sample)
            next_sample = tracerd_steps_sample (now);
        tracerd_forward_retry (now);
        tracerd_forward_live_pass (now);
        tracerd_notice_reap ();
        tracerd_forward_spool (now);
        tracerd_steps_reap (now);
        tracerd_steps_trim (now);
        if (tracerd_steps_mirror_wanted ())
            tracerd_steps_sweep (now);
        tracerd_forward_next (now, &next_sample);
    }
}

/* At SIGTERM or SIGINT: what the next tracerd needs is saved, the rest
 * let go.
 */
static void stop (void)
{
    /* Active steps keep their state files: the next tracerd resumes
     * them.  Save the latest readings first.
     */
    for (int i = 0; i < d.nsteps; i++)
        tracerd_steps_save (&d.steps[i]);
    /* Records waiting for squeue are written as their tasks show them */
    tracerd_sched_stop ();
    tracerd_forward_stop ();
    tracerd_textfile_stop ();
    tracerd_notice_stop ();
    tracerd_log (LOG_NOTICE,
                 "tracerd stopping (%d active steps kept for the "
                 "next start)",
                 d.nsteps);
    if (d.state_fd >= 0)
        close (d.state_fd);
    if (d.live_fd >= 0)
        close (d.live_fd);
    tr_taskstats_close (d.taskstats);
    tracerd_evidence_close ();
    tr_gpu_close (d.gpu);
    tracerd_server_close ();
    while (d.nsteps > 0)
        tracerd_steps_drop (&d.steps[0]);
    tr_exit_window_destroy (d.exit_window);
    tracerd_execs_close ();
    tr_store_destroy (d.spool);
    tr_conf_destroy (d.conf);
}

/* Every evidence source, available or not and why; one the service's
 * own sandbox hides is a warning, since the kernel offers it. */
static void log_sources (void)
{
    struct tr_source src[TR_SOURCES_MAX];
    int n = tr_sources_probe (d.conf, src);

    for (int i = 0; i < n; i++)
        tracerd_log (src[i].state == TR_SOURCE_SANDBOXED ? LOG_WARNING
                                                         : LOG_INFO,
                     "evidence: %s: %s (%s)", src[i].name,
                     tr_sources_word (src[i].state), src[i].why);
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
    int c;

    conf_path = tr_conf_default_path ();
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":c:fhV", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            conf_path = optarg;
            conf_explicit = true;
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
        conf_explicit = true;
    if (load_conf (&d.conf) < 0)
        return 2;
    /* root writes there: no other user may own or write a directory on
     * the way (they could swap what is below for a link)
     */
    if (tr_conf_check_dirs (d.conf, &dir_error) < 0) {
        fprintf (stderr, "tracerd: %s: %s\n", conf_path,
                 tr_error_str (&dir_error));
        return 2;
    }
    if (check) {
        tr_strbuf_t sb = TR_STRBUF_INIT;
        /* a missing store is made at the first record: said, since on
         * a node it is most often a file system not mounted
         */
        bool no_store =
            tr_store_check_root (d.conf->store_path, &dir_error) < 0;
        if (no_store && errno != ENOENT) {
            fprintf (stderr, "tracerd: %s: %s\n", conf_path,
                     tr_error_str (&dir_error));
            return 2;
        }
        printf ("%s: OK\n", conf_path);
        if (no_store)
            printf ("warning: %s: tracerd would make it at the first "
                    "record, on whatever is mounted there (create it on "
                    "the shared file system first)\n",
                    tr_error_str (&dir_error));
        /* what this host measures with it, and what it cannot */
        struct tr_source src[TR_SOURCES_MAX];
        int nsrc = tr_sources_probe (d.conf, src);

        if (tr_stall_describe (d.conf->delayacct, d.conf->psi_mirror,
                               d.conf->taskstats, &sb)
                >= 0
            && tr_sources_describe (src, nsrc, &sb) >= 0)
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
    /* the state dirs first: a client that finds the socket finds them */
    tracerd_steps_open_state ();
    if (tracerd_forward_open () < 0 || tracerd_server_open () < 0)
        return 1;
    tracerd_forward_resume ();
    log_sources ();
    open_sources ();
    tracerd_steps_resume ();
    tracerd_log (LOG_NOTICE,
                 "tracerd %s started: socket %s, spool %s, store %s",
                 TRACER_VERSION, d.conf->socket_path, d.conf->spool_path,
                 d.conf->store_path);
    loop ();
    stop ();
    if (lg.f)
        fclose (lg.f);
    return 0;
}
