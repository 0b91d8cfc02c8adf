/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * job-impact: the workloads and the stopwatch of bench/run-job-impact,
 * which times each workload with and without tracer-run around it.  The
 * workloads do a fixed amount of work (not a fixed time), so that
 * anything tracing takes from them shows as a longer run:
 *   cpu N       N million rounds of an integer hash (no system calls)
 *   fork N      N times fork + execv of /bin/true, each waited for
 *   syscall N   N small read()s of /dev/zero
 * "calibrate" finds the N that takes a given time here, "time" runs a
 * command and prints its wall and CPU time, and "tally" reads a record
 * tracer-run wrote and prints what it counted, so that the benchmark can
 * show the traced runs really were traced.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/record/record.h"

enum {
    /* N may not exceed this for any workload: a guard against a typo
     * that would run for hours
     */
    MAX_N = 100000000,
};

static void usage (FILE *f)
{
    fprintf (f, "Usage: job-impact cpu|fork|syscall N\n"
                "       job-impact calibrate cpu|fork|syscall SECONDS\n"
                "       job-impact time COMMAND [ARG...]\n"
                "       job-impact tally RECORD\n"
                "\n"
                "  cpu N        N million rounds of an integer hash\n"
                "  fork N       N times fork and exec /bin/true, waiting for "
                "each\n"
                "  syscall N    N one-byte read()s of /dev/zero\n"
                "  calibrate    print the N that runs about SECONDS here\n"
                "  time         run COMMAND; print wall and CPU seconds, its\n"
                "               peak resident memory and exit status:\n"
                "               wall_s=W user_s=U sys_s=S maxrss_kb=K "
                "status=N\n"
                "  tally        print what a tracer-run record counted:\n"
                "               attach=A processes=N complete=B signature=S\n");
}

static double now_s (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_count (const char *s, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > MAX_N)
        return -1;
    *out = v;
    return 0;
}

/* A million rounds of xorshift64*: pure integer work on registers.  The
 * result is returned so that the compiler cannot drop the loop.
 */
static uint64_t cpu_work (long n)
{
    uint64_t x = 0x9e3779b97f4a7c15ULL;

    for (long i = 0; i < n; i++)
        for (int k = 0; k < 1000000; k++) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x *= 0x2545f4914f6cdd1dULL;
        }
    return x;
}

static int fork_work (long n)
{
    char *argv[] = { "true", NULL };

    for (long i = 0; i < n; i++) {
        int status;
        pid_t pid = fork ();

        if (pid < 0) {
            fprintf (stderr, "job-impact: fork: %s\n", strerror (errno));
            return -1;
        }
        if (pid == 0) {
            execv ("/bin/true", argv);
            _exit (127);
        }
        while (waitpid (pid, &status, 0) < 0)
            if (errno != EINTR) {
                fprintf (stderr, "job-impact: waitpid: %s\n", strerror (errno));
                return -1;
            }
        if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
            fprintf (stderr, "job-impact: /bin/true failed (status %d)\n",
                     status);
            return -1;
        }
    }
    return 0;
}

static int syscall_work (long n)
{
    char c;
    int fd = open ("/dev/zero", O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        fprintf (stderr, "job-impact: /dev/zero: %s\n", strerror (errno));
        return -1;
    }
    for (long i = 0; i < n; i++)
        if (read (fd, &c, 1) != 1) {
            fprintf (stderr, "job-impact: read: %s\n", strerror (errno));
            close (fd);
            return -1;
        }
    close (fd);
    return 0;
}

/* Run a workload; -1 on an unknown name or a failure. */
static int work (const char *name, long n)
{
    if (!strcmp (name, "cpu")) {
        volatile uint64_t sink = cpu_work (n);
        (void)sink;
        return 0;
    }
    if (!strcmp (name, "fork"))
        return fork_work (n);
    if (!strcmp (name, "syscall"))
        return syscall_work (n);
    fprintf (stderr, "job-impact: unknown workload '%s'\n", name);
    return -1;
}

/* The N that runs about target seconds: double N until a run takes a
 * tenth of the target (or more), then scale linearly.  Workloads scale
 * linearly with N, so one measured run is enough.
 */
static int calibrate (const char *name, const char *arg)
{
    char *end;
    double target, t0, el = 0;
    long n = 1;

    errno = 0;
    target = strtod (arg, &end);
    if (errno || end == arg || *end || !(target > 0) || target > 3600) {
        fprintf (stderr, "job-impact: bad SECONDS '%s'\n", arg);
        return 2;
    }
    for (;;) {
        t0 = now_s ();
        if (work (name, n) < 0)
            return 1;
        el = now_s () - t0;
        if (el >= target / 10 || n >= MAX_N / 2)
            break;
        n *= 2;
    }
    n = el > 0 ? (long)((double)n * target / el + 0.5) : n;
    printf ("%ld\n", n < 1 ? 1 : n > MAX_N ? MAX_N : n);
    return 0;
}

static double tv_s (const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Run argv, wait for it, print its wall and CPU time.  The status is
 * printed, not returned: a traced command's failure is the script's to
 * judge.
 */
static int time_command (char **argv)
{
    struct rusage ru;
    double t0, t1;
    int status;
    pid_t pid;

    t0 = now_s ();
    if ((pid = fork ()) < 0) {
        fprintf (stderr, "job-impact: fork: %s\n", strerror (errno));
        return 1;
    }
    if (pid == 0) {
        execvp (argv[0], argv);
        fprintf (stderr, "job-impact: %s: %s\n", argv[0], strerror (errno));
        _exit (127);
    }
    while (wait4 (pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            fprintf (stderr, "job-impact: wait4: %s\n", strerror (errno));
            return 1;
        }
    t1 = now_s ();
    printf ("wall_s=%.6f user_s=%.6f sys_s=%.6f maxrss_kb=%ld status=%d\n",
            t1 - t0, tv_s (&ru.ru_utime), tv_s (&ru.ru_stime), ru.ru_maxrss,
            WIFEXITED (status) ? WEXITSTATUS (status)
                               : 128 + WTERMSIG (status));
    return 0;
}

static int tally (const char *path)
{
    tr_error_t error = { 0 };
    json_t *rec = tr_record_load (path, &error), *row;
    json_int_t procs = 0;
    const char *attach, *scheme;
    size_t i;

    if (!rec) {
        fprintf (stderr, "job-impact: %s\n", tr_error_str (&error));
        return 1;
    }
    json_array_foreach (json_object_get (rec, "tools"), i, row) procs +=
        json_integer_value (json_object_get (row, "count"));
    attach = json_string_value (
        json_object_get (json_object_get (rec, "cgroup"), "attach"));
    scheme = json_string_value (
        json_object_get (json_object_get (rec, "signature"), "scheme"));
    printf ("attach=%s processes=%lld complete=%s signature=%s\n",
            attach ? attach : "-", (long long)procs,
            json_is_true (json_object_get (
                json_object_get (json_object_get (rec, "summary"), "processes"),
                "complete"))
                ? "true"
                : "false",
            scheme ? scheme : "-");
    json_decref (rec);
    return 0;
}

int main (int argc, char **argv)
{
    long n;

    if (argc >= 2 && (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help"))) {
        usage (stdout);
        return 0;
    }
    if (argc >= 3 && !strcmp (argv[1], "time"))
        return time_command (argv + 2);
    if (argc == 3 && !strcmp (argv[1], "tally"))
        return tally (argv[2]);
    if (argc == 4 && !strcmp (argv[1], "calibrate"))
        return calibrate (argv[2], argv[3]);
    if (argc == 3 && parse_count (argv[2], &n) == 0)
        return work (argv[1], n) < 0 ? 1 : 0;
    usage (stderr);
    return 2;
}
