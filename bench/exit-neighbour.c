/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * exit-neighbour: the neighbour of bench/run-exit-overhead.  It starts
 * and ends RATE processes a second (vfork + _exit, each reaped at once),
 * outside every traced step, for WARMUP + WINDOW seconds, and measures
 * the CPU time that the processes PID... (tracer-run, tracerd) spend
 * during the WINDOW: the sum over their threads of the first field of
 * /proc/PID/task/TID/schedstat (ns on a CPU), read at the window's start
 * and end.  It also reads the node's fork counter (/proc/stat
 * "processes") at both ends, so that exits made elsewhere on the node
 * during the window are seen too.  Doing the reading here, not in the
 * script, keeps the shell from forking (an exit event of its own) inside
 * a window.
 *
 *   exit-neighbour -r RATE -w WINDOW [-u WARMUP] PID...
 *   exit-neighbour --listen
 *
 * Prints one line on stdout:
 *   rate=R exits=N wall_s=W node_forks=F cpu_ns=C1,C2,...
 * exits: the processes this program ended during the window; node_forks:
 * the node's forks (threads included) during it; cpu_ns: each PID's CPU
 * time during it, in the order given.  Exit status 0; 1 when a PID went
 * away or a fork failed; 2 a usage error.
 *
 * --listen is the baseline the benchmark compares tracer with: the least
 * a taskstats listener can do.  It registers for every exit of the node
 * as tracer does (tr_taskstats_open), then, every 0.1 s (tracer's hold,
 * TR_TASKSTATS_HOLD_S), takes every record queued with recvmmsg() into
 * 128-byte slots, 64 to a call, parsing and keeping nothing: the kernel's
 * receive path and the system calls alone.  It runs until killed; exit
 * status 77 when taskstats cannot be opened (not root), 1 on a socket
 * error.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "libtracer/node/taskstats.h"

#define MAX_PIDS 8

static const char *prog = "exit-neighbour";

static void usage (FILE *f)
{
    fprintf (f, "Usage: %s -r RATE -w WINDOW [-u WARMUP] PID...\n"
                "       %s --listen\n"
                "  -r RATE    processes started and ended a second (0 to "
                "100000)\n"
                "  -w WINDOW  measured seconds (1 to 3600)\n"
                "  -u WARMUP  seconds before the window (default 1)\n"
                "  --listen   the minimal taskstats listener, until "
                "killed\n",
             prog, prog);
}

/* The CPU ns of every thread of pid, or -1 when it is gone. */
static int64_t cpu_ns (pid_t pid)
{
    char path[64];
    DIR *dir;
    struct dirent *de;
    int64_t sum = 0;

    snprintf (path, sizeof (path), "/proc/%d/task", (int)pid);
    if (!(dir = opendir (path)))
        return -1;
    while ((de = readdir (dir))) {
        char file[128];
        unsigned long long ns;
        FILE *f;

        if (de->d_name[0] == '.')
            continue;
        snprintf (file, sizeof (file), "/proc/%d/task/%.20s/schedstat",
                  (int)pid, de->d_name);
        if (!(f = fopen (file, "re")))
            continue; /* a thread that just ended */
        if (fscanf (f, "%llu", &ns) == 1)
            sum += (int64_t)ns;
        fclose (f);
    }
    closedir (dir);
    return sum;
}

/* The node's forks since boot (/proc/stat "processes"), or -1. */
static long long node_forks (void)
{
    char line[256];
    long long n = -1;
    FILE *f = fopen ("/proc/stat", "re");

    if (!f)
        return -1;
    while (fgets (line, sizeof (line), f))
        if (sscanf (line, "processes %lld", &n) == 1)
            break;
    fclose (f);
    return n;
}

static double now_s (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One process started and ended (vfork: the child only calls _exit).
 * Kept out of line so that vfork clobbers nothing of the caller's.
 */
static __attribute__ ((noinline)) pid_t spawn_one (void)
{
    pid_t pid = vfork ();

    if (pid == 0)
        _exit (0);
    return pid;
}

static void reap (void)
{
    while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
}

/* Start and end processes at rate a second until the monotonic clock
 * reads end.  Returns the number ended, or -1 when a fork failed.
 */
static long run_until (long rate, double end)
{
    struct timespec next;
    long n = 0, step_ns;

    if (rate == 0) {
        double left;
        while ((left = end - now_s ()) > 0) {
            struct timespec d = { (time_t)left,
                                  (long)((left - (double)(time_t)left)
                                         * 1e9) };
            nanosleep (&d, NULL);
        }
        return 0;
    }
    step_ns = 1000000000L / rate;
    clock_gettime (CLOCK_MONOTONIC, &next);
    for (;;) {
        pid_t pid;

        next.tv_nsec += step_ns;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        if ((double)next.tv_sec + (double)next.tv_nsec / 1e9 > end)
            break;
        while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)
               == EINTR)
            ;
        if ((pid = spawn_one ()) < 0) {
            fprintf (stderr, "%s: vfork: %s\n", prog, strerror (errno));
            return -1;
        }
        n++;
        reap ();
    }
    /* the last ones ended within the window */
    while (waitpid (-1, NULL, 0) > 0)
        ;
    return n;
}

/* The minimal listener of --listen. */
static int listen_only (void)
{
    enum { NMSG = 64, SLOT = 128 };
    static char buf[NMSG][SLOT];
    struct mmsghdr msgs[NMSG];
    struct iovec iov[NMSG];
    tr_error_t error;
    tr_taskstats_t *ts;
    int fd;

    if (!(ts = tr_taskstats_open (&error))) {
        fprintf (stderr, "%s: %s\n", prog, error.text);
        return errno == EPERM ? BENCH_EXIT_SKIP : 1;
    }
    fd = tr_taskstats_fd (ts);
    for (;;) {
        struct timespec hold = { 0, 100000000L };
        int n;

        nanosleep (&hold, NULL);
        do {
            memset (msgs, 0, sizeof (msgs));
            for (int i = 0; i < NMSG; i++) {
                iov[i].iov_base = buf[i];
                iov[i].iov_len = SLOT;
                msgs[i].msg_hdr.msg_iov = &iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
            }
            n = recvmmsg (fd, msgs, NMSG, MSG_DONTWAIT, NULL);
            if (n < 0 && errno != EAGAIN && errno != EINTR
                && errno != ENOBUFS) {
                fprintf (stderr, "%s: recvmmsg: %s\n", prog,
                         strerror (errno));
                tr_taskstats_close (ts);
                return 1;
            }
        } while (n == NMSG || (n < 0 && errno != EAGAIN));
    }
}

int main (int argc, char **argv)
{
    long rate = -1, window = -1, warmup = 1;
    pid_t pids[MAX_PIDS];
    int64_t c0[MAX_PIDS], c1;
    long long f0, f1;
    double t0, t1;
    long exits;
    int npids = 0, c;

    if (argc == 2 && !strcmp (argv[1], "--listen"))
        return listen_only ();
    while ((c = getopt (argc, argv, "r:w:u:h")) != -1) {
        switch (c) {
        case 'r':
            if (bench_parse_long (optarg, 0, 100000, &rate) < 0) {
                usage (stderr);
                return 2;
            }
            break;
        case 'w':
            if (bench_parse_long (optarg, 1, 3600, &window) < 0) {
                usage (stderr);
                return 2;
            }
            break;
        case 'u':
            if (bench_parse_long (optarg, 0, 3600, &warmup) < 0) {
                usage (stderr);
                return 2;
            }
            break;
        case 'h':
            usage (stdout);
            return 0;
        default:
            usage (stderr);
            return 2;
        }
    }
    if (rate < 0 || window < 0 || optind >= argc
        || argc - optind > MAX_PIDS) {
        usage (stderr);
        return 2;
    }
    for (int i = optind; i < argc; i++) {
        long v;
        if (bench_parse_long (argv[i], 1, 1L << 30, &v) < 0) {
            fprintf (stderr, "%s: not a pid: '%s'\n", prog, argv[i]);
            return 2;
        }
        pids[npids++] = (pid_t)v;
    }
    signal (SIGCHLD, SIG_DFL);

    if (run_until (rate, now_s () + (double)warmup) < 0)
        return 1;
    f0 = node_forks ();
    t0 = now_s ();
    for (int i = 0; i < npids; i++)
        if ((c0[i] = cpu_ns (pids[i])) < 0) {
            fprintf (stderr, "%s: pid %d is gone\n", prog, (int)pids[i]);
            return 1;
        }
    if ((exits = run_until (rate, t0 + (double)window)) < 0)
        return 1;
    printf ("rate=%ld exits=%ld", rate, exits);
    t1 = now_s ();
    f1 = node_forks ();
    printf (" wall_s=%.3f node_forks=%lld cpu_ns=", t1 - t0,
            f0 >= 0 && f1 >= 0 ? f1 - f0 : -1LL);
    for (int i = 0; i < npids; i++) {
        if ((c1 = cpu_ns (pids[i])) < 0) {
            fprintf (stderr, "\n%s: pid %d is gone\n", prog, (int)pids[i]);
            return 1;
        }
        printf ("%s%lld", i ? "," : "", (long long)(c1 - c0[i]));
    }
    printf ("\n");
    return fflush (stdout) == 0 ? 0 : 1;
}
