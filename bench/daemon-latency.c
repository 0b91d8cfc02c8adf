/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * How fast tracerd answers while it follows many steps: the latency of
 * a ping, a step start and a step's last task_exit (connect, send,
 * answer, as a hook sees it) at each number of active steps in LEVELS,
 * measured in the same run and given as a ratio against the first
 * level, and the daemon's resident memory (VmRSS of --pid) after each
 * level, with what each step beyond the first level adds.  Run by
 * bench/run-daemon-load, which starts the private tracerd.
 *
 *   daemon-latency --socket PATH --cgroup DIR [--cgroup DIR]
 *                  [--levels 1,1000,2000] [--window SEC] [--settle SEC]
 *                  [--pid PID] [--json]
 *
 * Each step is a Slurm step of this host with its own cgroup
 * directories DIR/stepK (one per --cgroup: v1 memory and cpuacct, or
 * one cgroup2 directory), announced with this process as its task: it
 * moves itself into them, sends the step_start, and moves on.  The
 * directories stay (empty), so tracerd samples every step as it would
 * a running one.  During each window (default 31 s, after SETTLE
 * seconds: a round of state saves, every 5 s, and of live snapshots,
 * every 30 s, fall in it) a ping every 20 ms, a step start of a new
 * step every 100 ms and the task_exit of that step's task 40 ms later
 * are timed.  At the end every step is ended and
 * its directories removed.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common.h"
#include "libtracer/hook/proto.h"
#include "libtracer/record/when.h"

#define PROG "daemon-latency"
#define MAX_LEVELS 8
#define MAX_CG 2
#define REQUEST_TIMEOUT_MS 10000

static const char *sock;
static const char *cg[MAX_CG];
static int ncg;
static long nsteps;           /* steps announced (job ids 1..nsteps) */
static long extra_base = 1000000;  /* job ids of the timed starts */
static long daemon_pid;       /* --pid: whose memory to read */
static char host[256];
static volatile sig_atomic_t stop;

static void on_signal (int sig)
{
    (void)sig;
    stop = 1;
}

static int write_pid (const char *dir)
{
    char path[PATH_MAX + 32], buf[32];
    FILE *f;
    int rc;

    snprintf (path, sizeof (path), "%s/cgroup.procs", dir);
    if (!(f = fopen (path, "we")))
        return -1;
    snprintf (buf, sizeof (buf), "%d\n", (int)getpid ());
    rc = fputs (buf, f) < 0 ? -1 : 0;
    if (fclose (f) != 0)
        rc = -1;
    return rc;
}

/* Into DIR/stepK of every hierarchy (k < 0: back to DIR). */
static int move_to (long k)
{
    char dir[PATH_MAX - 32];

    for (int i = 0; i < ncg; i++) {
        if (k < 0)
            snprintf (dir, sizeof (dir), "%s", cg[i]);
        else {
            snprintf (dir, sizeof (dir), "%s/step%ld", cg[i], k);
            if (mkdir (dir, 0755) < 0 && errno != EEXIST)
                return -1;
        }
        if (write_pid (dir) < 0)
            return -1;
    }
    return 0;
}

static json_t *identity (long job)
{
    char id[32];

    snprintf (id, sizeof (id), "%ld", job);
    return json_pack ("{s:s s:s s:s s:s s:i s:i s:s s:s}", "scheduler",
                      "slurm", "job_id", id, "step_id", "0", "node", host,
                      "uid", 0, "gid", 0, "user", "root", "job_name",
                      "bench-load");
}

/* One request; its latency in seconds, or -1 when it was refused. */
static double request (json_t *msg)
{
    tr_error_t error;
    double t0 = tr_when_monotonic (), t;
    int rc = tr_proto_request (sock, msg, REQUEST_TIMEOUT_MS, NULL, &error);

    t = tr_when_monotonic () - t0;
    json_decref (msg);
    if (rc < 0) {
        fprintf (stderr, "%s: %s\n", PROG, error.text);
        return -1;
    }
    return t;
}

static double step_start (long job)
{
    return request (json_pack (
        "{s:s s:o s:{s:i s:i s:i s:i} s:{} s:i s:i}", "op", "step_start",
        "identity", identity (job), "request", "nodes", 1, "tasks", 1,
        "tasks_on_node", 1, "cpus_per_task", 1, "tags", "task_id", 0, "pid",
        (int)getpid ()));
}

/* The hook's task_exit for the step's only task: the last one, so the
 * daemon takes the final reading and writes the record before it
 * answers, as slurm_spank_task_exit waits for it.
 */
static double task_exit (long job)
{
    return request (json_pack ("{s:s s:o s:i s:i s:i s:b}", "op", "task_exit",
                               "identity", identity (job), "task_id", 0,
                               "pid", (int)getpid (), "wait_status", 0,
                               "last", 1));
}

static double step_end (long job)
{
    return request (json_pack ("{s:s s:o}", "op", "step_end", "identity",
                               identity (job)));
}

static double ping (void)
{
    return request (json_pack ("{s:s}", "op", "ping"));
}

/* Announce steps nsteps+1 .. n. */
static int grow (long n)
{
    for (long k = nsteps + 1; k <= n && !stop; k++) {
        if (move_to (k) < 0) {
            fprintf (stderr, "%s: cgroup step%ld: %s\n", PROG, k,
                     strerror (errno));
            return -1;
        }
        if (step_start (k) < 0)
            return -1;
        nsteps = k;
    }
    return move_to (-1);
}

static void remove_step_dirs (long k)
{
    char dir[PATH_MAX];

    for (int i = 0; i < ncg; i++) {
        snprintf (dir, sizeof (dir), "%s/step%ld", cg[i], k);
        (void)rmdir (dir);
    }
}

static void nap (double s)
{
    struct timespec ts = { .tv_sec = (time_t)s,
                           .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

    while (!stop && nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

struct stat3 {
    double p50, p99, max;
    int n;
};

static struct stat3 stats (double *v, int n)
{
    struct stat3 s = { 0, 0, 0, n };

    if (n == 0)
        return s;
    qsort (v, (size_t)n, sizeof (*v), cmp_double);
    s.p50 = v[n / 2];
    s.p99 = v[(int)(0.99 * (n - 1) + 0.5)];
    s.max = v[n - 1];
    return s;
}

/* One window: pings every 20 ms; every 100 ms a new step's start, and
 * 40 ms later the task_exit of its only task (its cgroup left empty, as
 * a task that ended leaves it), so the level stays where it is.
 */
static int measure (double window,
                    struct stat3 *pst,
                    struct stat3 *sst,
                    struct stat3 *est)
{
    int cap = (int)(window / 0.02) + 8, np = 0, ns = 0, ne = 0;
    double *pv = calloc ((size_t)cap, sizeof (double));
    double *sv = calloc ((size_t)cap, sizeof (double));
    double *ev = calloc ((size_t)cap, sizeof (double));
    double end = tr_when_monotonic () + window, t;
    long open_job = 0;
    int rc = -1;

    if (!pv || !sv || !ev)
        goto out;
    for (int i = 0; tr_when_monotonic () < end && !stop && np < cap; i++) {
        if ((t = ping ()) < 0)
            goto out;
        pv[np++] = t;
        if (i % 5 == 0) {
            if (move_to (nsteps + 1) < 0 || (t = step_start (extra_base)) < 0)
                goto out;
            open_job = extra_base++;
            sv[ns++] = t;
            if (move_to (-1) < 0)
                goto out;
        }
        else if (i % 5 == 2 && open_job) {
            if ((t = task_exit (open_job)) < 0)
                goto out;
            open_job = 0;
            ev[ne++] = t;
            remove_step_dirs (nsteps + 1);
        }
        nap (0.02);
    }
    rc = 0;
out:
    if (open_job)
        (void)step_end (open_job);
    remove_step_dirs (nsteps + 1);
    *pst = stats (pv, np);
    *sst = stats (sv, ns);
    *est = stats (ev, ne);
    free (pv);
    free (sv);
    free (ev);
    return rc;
}

/* The daemon's resident memory in KiB (VmRSS), or -1. */
static long daemon_rss_kib (void)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;

    if (daemon_pid <= 0)
        return -1;
    snprintf (path, sizeof (path), "/proc/%ld/status", daemon_pid);
    if (!(f = fopen (path, "re")))
        return -1;
    while (fgets (line, sizeof (line), f))
        if (sscanf (line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose (f);
    return kib;
}

static void print_stat3_json (const char *name, const struct stat3 *s)
{
    printf ("\"%s\":{\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f,\"n\":%d},",
            name, s->p50 * 1e3, s->p99 * 1e3, s->max * 1e3, s->n);
}

static void usage (FILE *f)
{
    fprintf (f, "Usage: %s --socket PATH --cgroup DIR [--cgroup DIR] "
                "[--levels 1,1000,2000]\n"
                "       [--window SEC] [--settle SEC] [--pid PID] [--json]\n",
             PROG);
}

int main (int argc, char **argv)
{
    static const struct option opts[] = {
        { "socket", required_argument, NULL, 's' },
        { "cgroup", required_argument, NULL, 'c' },
        { "levels", required_argument, NULL, 'l' },
        { "window", required_argument, NULL, 'w' },
        { "settle", required_argument, NULL, 'S' },
        { "pid", required_argument, NULL, 'p' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long levels[MAX_LEVELS] = { 1, 1000, 2000 }, window = 31, settle = 2;
    int nlevels = 3, c, rc = 0;
    bool json = false;
    struct stat3 ps[MAX_LEVELS], ss[MAX_LEVELS], es[MAX_LEVELS];
    long rss[MAX_LEVELS];
    struct bench_machine m;

    while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            sock = optarg;
            break;
        case 'c':
            if (ncg == MAX_CG) {
                usage (stderr);
                return 2;
            }
            cg[ncg++] = optarg;
            break;
        case 'l': {
            char *save = NULL, *w, *copy = strdup (optarg);
            nlevels = 0;
            for (w = copy ? strtok_r (copy, ",", &save) : NULL; w;
                 w = strtok_r (NULL, ",", &save)) {
                if (nlevels == MAX_LEVELS
                    || bench_parse_long (w, 1, 4000, &levels[nlevels]) < 0
                    || (nlevels > 0 && levels[nlevels] <= levels[nlevels - 1])) {
                    bench_bad_value (PROG, opts, c, optarg);
                    free (copy);
                    return 2;
                }
                nlevels++;
            }
            free (copy);
            if (nlevels == 0) {
                bench_bad_value (PROG, opts, c, optarg);
                return 2;
            }
            break;
        }
        case 'w':
        case 'S':
            if (bench_parse_long (optarg, 1, 3600, c == 'w' ? &window
                                                             : &settle)
                < 0) {
                bench_bad_value (PROG, opts, c, optarg);
                return 2;
            }
            break;
        case 'p':
            if (bench_parse_long (optarg, 1, INT_MAX, &daemon_pid) < 0) {
                bench_bad_value (PROG, opts, c, optarg);
                return 2;
            }
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            usage (stdout);
            return 0;
        default:
            usage (stderr);
            return 2;
        }
    }
    if (!sock || ncg == 0 || optind < argc) {
        usage (stderr);
        return 2;
    }
    if (gethostname (host, sizeof (host)) < 0)
        snprintf (host, sizeof (host), "bench");
    host[sizeof (host) - 1] = '\0';
    if (bench_install_handlers (on_signal) < 0)
        return 2;
    bench_machine_describe (&m);
    for (int i = 0; i < nlevels && !stop; i++) {
        if (grow (levels[i]) < 0) {
            rc = 1;
            break;
        }
        nap ((double)settle);
        if (measure ((double)window, &ps[i], &ss[i], &es[i]) < 0) {
            rc = 1;
            break;
        }
        rss[i] = daemon_rss_kib ();
        if (!json)
            fprintf (stderr, "%s: %ld steps measured\n", PROG, levels[i]);
    }
    if (rc == 0 && !stop) {
        if (json) {
            printf ("{\"cpus\":%ld,\"window_s\":%ld,\"levels\":[", m.ncpu,
                    window);
            for (int i = 0; i < nlevels; i++) {
                printf ("%s{\"steps\":%ld,", i ? "," : "", levels[i]);
                print_stat3_json ("ping_ms", &ps[i]);
                print_stat3_json ("start_ms", &ss[i]);
                print_stat3_json ("end_ms", &es[i]);
                printf ("\"ratio_ping_p99\":%.2f,\"ratio_start_p99\":%.2f,"
                        "\"ratio_end_p99\":%.2f,\"rss_kib\":%ld",
                        ps[i].p99 / ps[0].p99, ss[i].p99 / ss[0].p99,
                        es[i].p99 / es[0].p99, rss[i]);
                if (i > 0 && rss[i] >= 0 && rss[0] >= 0)
                    printf (",\"kib_per_step\":%.1f",
                            (double)(rss[i] - rss[0])
                                / (double)(levels[i] - levels[0]));
                printf ("}");
            }
            printf ("]}\n");
        }
        else {
            printf ("tracerd latency as a hook sees it (%ld CPUs, %s)\n",
                    m.ncpu, m.model);
            printf ("%6s  %22s  %22s  %22s  %17s  %s\n", "steps",
                    "ping ms p50/p99/max", "start ms p50/p99/max",
                    "end ms p50/p99/max", "p99 ratio p/s/e", "RSS MiB, KiB/step");
            for (int i = 0; i < nlevels; i++) {
                printf ("%6ld  %6.2f %6.1f %8.1f  %6.2f %6.1f %8.1f  "
                        "%6.2f %6.1f %8.1f  %5.1f/%5.1f/%5.1f  ",
                        levels[i], ps[i].p50 * 1e3, ps[i].p99 * 1e3,
                        ps[i].max * 1e3, ss[i].p50 * 1e3, ss[i].p99 * 1e3,
                        ss[i].max * 1e3, es[i].p50 * 1e3, es[i].p99 * 1e3,
                        es[i].max * 1e3, ps[i].p99 / ps[0].p99,
                        ss[i].p99 / ss[0].p99, es[i].p99 / es[0].p99);
                if (rss[i] < 0)
                    printf ("unknown\n");
                else if (i == 0)
                    printf ("%.1f\n", (double)rss[i] / 1024.0);
                else
                    printf ("%.1f, %.1f\n", (double)rss[i] / 1024.0,
                            (double)(rss[i] - rss[0])
                                / (double)(levels[i] - levels[0]));
            }
        }
    }
    /* every step ends; the directories go */
    (void)move_to (-1);
    for (long k = 1; k <= nsteps; k++) {
        char dir[PATH_MAX];
        (void)step_end (k);
        for (int i = 0; i < ncg; i++) {
            snprintf (dir, sizeof (dir), "%s/step%ld", cg[i], k);
            (void)rmdir (dir);
        }
    }
    return stop ? 130 : rc;
}
