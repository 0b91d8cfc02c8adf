/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * How fast tracerd answers while it follows many steps: the latency of
 * a ping and of a step start (connect, send, answer, as a hook sees it)
 * at each number of active steps in LEVELS, measured in the same run
 * and given as a ratio against the first level.  Run by
 * bench/run-daemon-load, which starts the private tracerd.
 *
 *   daemon-latency --socket PATH --cgroup DIR [--cgroup DIR]
 *                  [--levels 1,1000,2000] [--window SEC] [--settle SEC]
 *                  [--json]
 *
 * Each step is a Slurm step of this host with its own cgroup
 * directories DIR/stepK (one per --cgroup: v1 memory and cpuacct, or
 * one cgroup2 directory), announced with this process as its task: it
 * moves itself into them, sends the step_start, and moves on.  The
 * directories stay (empty), so tracerd samples every step as it would
 * a running one.  During each window (default 31 s, after SETTLE
 * seconds: a round of state saves, every 5 s, and of live snapshots,
 * every 30 s, fall in it) a ping every 20 ms and a step start of a new
 * step every 100 ms are timed; the new
 * steps are ended after the window.  At the end every step is ended and
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

/* One window: pings every 20 ms, a new step's start every 100 ms. */
static int measure (double window, struct stat3 *pst, struct stat3 *sst)
{
    int cap = (int)(window / 0.02) + 8, np = 0, ns = 0;
    double *pv = calloc ((size_t)cap, sizeof (double));
    double *sv = calloc ((size_t)cap, sizeof (double));
    double end = tr_when_monotonic () + window, t;
    long first = extra_base;
    int rc = -1;

    if (!pv || !sv)
        goto out;
    for (int i = 0; tr_when_monotonic () < end && !stop && np < cap; i++) {
        if ((t = ping ()) < 0)
            goto out;
        pv[np++] = t;
        if (i % 5 == 0) {
            if (move_to (nsteps + 1 + ns) < 0 || (t = step_start (
                                                      extra_base++)) < 0)
                goto out;
            sv[ns++] = t;
            if (move_to (-1) < 0)
                goto out;
        }
        nap (0.02);
    }
    rc = 0;
out:
    /* the new steps go again: each level starts from its own count */
    for (long j = first; j < extra_base; j++)
        (void)step_end (j);
    for (long j = 0; j < extra_base - first; j++) {
        char dir[PATH_MAX];
        for (int i = 0; i < ncg; i++) {
            snprintf (dir, sizeof (dir), "%s/step%ld", cg[i], nsteps + 1 + j);
            (void)rmdir (dir);
        }
    }
    *pst = stats (pv, np);
    *sst = stats (sv, ns);
    free (pv);
    free (sv);
    return rc;
}

static void usage (FILE *f)
{
    fprintf (f, "Usage: %s --socket PATH --cgroup DIR [--cgroup DIR] "
                "[--levels 1,1000,2000]\n"
                "       [--window SEC] [--settle SEC] [--json]\n",
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
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long levels[MAX_LEVELS] = { 1, 1000, 2000 }, window = 31, settle = 2;
    int nlevels = 3, c, rc = 0;
    bool json = false;
    struct stat3 ps[MAX_LEVELS], ss[MAX_LEVELS];
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
        if (measure ((double)window, &ps[i], &ss[i]) < 0) {
            rc = 1;
            break;
        }
        if (!json)
            fprintf (stderr, "%s: %ld steps measured\n", PROG, levels[i]);
    }
    if (rc == 0 && !stop) {
        if (json) {
            printf ("{\"cpus\":%ld,\"window_s\":%ld,\"levels\":[", m.ncpu,
                    window);
            for (int i = 0; i < nlevels; i++)
                printf ("%s{\"steps\":%ld,\"ping_ms\":{\"p50\":%.2f,"
                        "\"p99\":%.2f,\"max\":%.2f,\"n\":%d},"
                        "\"start_ms\":{\"p50\":%.2f,\"p99\":%.2f,"
                        "\"max\":%.2f,\"n\":%d},\"ratio_ping_p99\":%.2f,"
                        "\"ratio_start_p99\":%.2f}",
                        i ? "," : "", levels[i], ps[i].p50 * 1e3,
                        ps[i].p99 * 1e3, ps[i].max * 1e3, ps[i].n,
                        ss[i].p50 * 1e3, ss[i].p99 * 1e3, ss[i].max * 1e3,
                        ss[i].n, ps[i].p99 / ps[0].p99,
                        ss[i].p99 / ss[0].p99);
            printf ("]}\n");
        }
        else {
            printf ("tracerd latency as a hook sees it (%ld CPUs, %s)\n",
                    m.ncpu, m.model);
            printf ("%7s  %27s  %27s  %s\n", "steps", "ping ms p50/p99/max",
                    "step start ms p50/p99/max", "p99 ratio ping/start");
            for (int i = 0; i < nlevels; i++)
                printf ("%7ld  %8.2f %8.2f %9.2f  %8.2f %8.2f %9.2f  "
                        "%5.2f / %5.2f\n",
                        levels[i], ps[i].p50 * 1e3, ps[i].p99 * 1e3,
                        ps[i].max * 1e3, ss[i].p50 * 1e3, ss[i].p99 * 1e3,
                        ss[i].max * 1e3, ps[i].p99 / ps[0].p99,
                        ss[i].p99 / ss[0].p99);
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
