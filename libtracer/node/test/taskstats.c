/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The taskstats listener's kernel filter (tr_taskstats_filter_cgroups)
 * against the running kernel: with a filter on a cgroup2 directory, the
 * exits of processes in it and below it arrive and those of a process
 * outside do not; the same with v1 directories (cpuacct, memory, at
 * different depths, beside a cgroup2 one), where the program walks the
 * exiting task's v1 cgroups as the kernel's BTF lays them out; without
 * the filter every exit arrives again; and the filter refuses what it
 * cannot compare (a directory on no cgroup file system, a missing one,
 * too many), leaving the listener as it was (every exit arrives).  Root
 * only, on a host with a cgroup2 mount (skipped otherwise; the v1 case
 * where there are no v1 cpuacct and memory hierarchies); a kernel that
 * refuses the program skips the filtering cases and says why.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "libtracer/node/cgroup.h"
#include "libtracer/node/taskstats.h"

#define MAXEV 65536

struct seen {
    pid_t pid[MAXEV];
    int status[MAXEV];
    size_t n;
};

static char dir[PATH_MAX], sub[PATH_MAX];
/* v1: cpuacct/tracer-test-ts.PID{,/sub}, memory/tracer-test-ts.PID{,/sub} */
static char cdir[PATH_MAX], csub[PATH_MAX], mdir[PATH_MAX], msub[PATH_MAX];
static bool have_v1;

static void collect (const struct tr_exit *ev, void *arg)
{
    struct seen *s = arg;

    if (ev->aggr == TR_EXIT_PID && ev->group_exit && s->n < MAXEV) {
        s->pid[s->n] = ev->tgid;
        s->status[s->n] = ev->exit_status;
        s->n++;
    }
}

static int64_t now_ms (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool has (const struct seen *s, pid_t pid)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->pid[i] == pid)
            return true;
    return false;
}

/* A process that ends with code, after joining cgroup (NULL: where it
 * is).  Returns its pid, reaped.
 */
static pid_t run_in2 (const char *cgroup, const char *cgroup2, int code)
{
    int status;
    pid_t pid = fork ();

    assert_true (pid >= 0);
    if (pid == 0) {
        const char *join[] = { cgroup, cgroup2 };
        for (int i = 0; i < 2; i++) {
            char path[PATH_MAX + 16];
            int fd;
            if (!join[i])
                continue;
            snprintf (path, sizeof (path), "%s/cgroup.procs", join[i]);
            if ((fd = open (path, O_WRONLY | O_CLOEXEC)) < 0
                || write (fd, "0\n", 2) != 2)
                _exit (100);
            close (fd);
        }
        _exit (code);
    }
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    assert_int_equal (WEXITSTATUS (status), code);
    return pid;
}

static pid_t run_in (const char *cgroup, int code)
{
    return run_in2 (cgroup, NULL, code);
}

/* Read until every pid of want is seen or 5 s pass, then 0.3 s more
 * (time for records that should not come).
 */
static void read_for (tr_taskstats_t *ts, struct seen *s, const pid_t *want,
                      size_t nwant)
{
    int64_t deadline = now_ms () + 5000, quiet = -1;

    while (now_ms () < deadline) {
        struct pollfd pfd = { .fd = tr_taskstats_fd (ts), .events = POLLIN };
        size_t got = 0;

        (void)poll (&pfd, 1, 50);
        assert_true (tr_taskstats_read (ts, collect, s) >= 0);
        for (size_t i = 0; i < nwant; i++)
            got += has (s, want[i]);
        if (got == nwant && quiet < 0)
            quiet = now_ms () + 300;
        if (quiet >= 0 && now_ms () >= quiet)
            break;
    }
}

static int setup (void **state)
{
    char mnt[PATH_MAX];

    (void)state;
    if (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) < 0)
        return -1;
    snprintf (dir, sizeof (dir), "%.4000s/tracer-test-ts.%d", mnt,
              (int)getpid ());
    snprintf (sub, sizeof (sub), "%.4000s/sub", dir);
    if (mkdir (dir, 0755) < 0 || mkdir (sub, 0755) < 0)
        return -1;
    have_v1 = false;
    if (tr_cgroup_mountpoint ("cpuacct", mnt, sizeof (mnt)) == 0) {
        snprintf (cdir, sizeof (cdir), "%.4000s/tracer-test-ts.%d", mnt,
                  (int)getpid ());
        snprintf (csub, sizeof (csub), "%.4000s/sub", cdir);
        if (tr_cgroup_mountpoint ("memory", mnt, sizeof (mnt)) == 0) {
            snprintf (mdir, sizeof (mdir), "%.4000s/tracer-test-ts.%d", mnt,
                      (int)getpid ());
            snprintf (msub, sizeof (msub), "%.4000s/sub", mdir);
            if (mkdir (cdir, 0755) < 0 || mkdir (csub, 0755) < 0
                || mkdir (mdir, 0755) < 0 || mkdir (msub, 0755) < 0)
                return -1;
            have_v1 = true;
        }
    }
    return 0;
}

static int teardown (void **state)
{
    (void)state;
    if (have_v1) {
        const char *v1[] = { csub, cdir, msub, mdir };
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 200 && (rmdir (v1[k]) < 0 && errno == EBUSY);
                 i++)
                usleep (10000);
    }
    /* a reaped task can linger in cgroup2 for a moment */
    for (int i = 0; i < 200 && (rmdir (sub) < 0 && errno == EBUSY); i++)
        usleep (10000);
    for (int i = 0; i < 200 && (rmdir (dir) < 0 && errno == EBUSY); i++)
        usleep (10000);
    return 0;
}

static void test_filter_cgroup (void **state)
{
    tr_error_t err;
    tr_taskstats_t *ts;
    struct seen *s = calloc (1, sizeof (*s));
    const char *dirs[] = { dir };
    pid_t in, below, out, again;

    (void)state;
    assert_non_null (s);
    if (!(ts = tr_taskstats_open (&err)))
        fail_msg ("tr_taskstats_open: %s", err.text);
    if (tr_taskstats_filter_cgroups (ts, dirs, 1, &err) < 0) {
        tr_taskstats_close (ts);
        free (s);
        print_message ("# the kernel refused the filter: %s\n", err.text);
        skip ();
    }
    in = run_in (dir, 7);
    below = run_in (sub, 8);
    out = run_in (NULL, 9);
    {
        pid_t want[] = { in, below };
        read_for (ts, s, want, 2);
    }
    assert_true (has (s, in));
    assert_true (has (s, below));
    assert_false (has (s, out));
    for (size_t i = 0; i < s->n; i++)
        if (s->pid[i] == in)
            assert_int_equal (WEXITSTATUS (s->status[i]), 7);
    assert_int_equal (tr_taskstats_lost (ts), 0);

    /* no filter: every exit again */
    assert_int_equal (tr_taskstats_filter_cgroups (ts, NULL, 0, &err), 0);
    again = run_in (NULL, 10);
    {
        pid_t want[] = { again };
        read_for (ts, s, want, 1);
    }
    assert_true (has (s, again));
    tr_taskstats_close (ts);
    free (s);
}

/* The same, with the cgroup2 directory matched by walking the exiting
 * task's default cgroup (the kernel's BTF layout), as on kernels whose
 * socket filters have no cgroup-id helpers (Debian 12's 6.1).
 */
static void test_filter_cgroup_walk (void **state)
{
    tr_taskstats_v2_walk = true;
    test_filter_cgroup (state);
    tr_taskstats_v2_walk = false;
}

/* v1 directories of two hierarchies at two depths, beside a cgroup2
 * one: a process is kept when its cgroup in either hierarchy is one of
 * the directories or below one, dropped otherwise.
 */
static void test_filter_v1 (void **state)
{
    tr_error_t err;
    tr_taskstats_t *ts;
    struct seen *s = calloc (1, sizeof (*s));
    const char *dirs[] = { cdir, msub, sub };
    pid_t cin, cbelow, mtop, mbelow, both, v2, out, again;

    (void)state;
    assert_non_null (s);
    if (!have_v1) {
        free (s);
        print_message ("# no v1 cpuacct and memory hierarchies\n");
        skip ();
    }
    if (!(ts = tr_taskstats_open (&err)))
        fail_msg ("tr_taskstats_open: %s", err.text);
    if (tr_taskstats_filter_cgroups (ts, dirs, 3, &err) < 0) {
        tr_taskstats_close (ts);
        free (s);
        print_message ("# the kernel refused the filter: %s\n", err.text);
        skip ();
    }
    cin = run_in (cdir, 21);       /* the cpuacct directory itself */
    cbelow = run_in (csub, 22);    /* below it */
    mtop = run_in (mdir, 23);      /* above the memory directory: out */
    mbelow = run_in (msub, 24);    /* the memory directory */
    both = run_in2 (csub, mdir, 25);
    v2 = run_in (sub, 26);         /* the cgroup2 directory */
    out = run_in (NULL, 27);
    {
        pid_t want[] = { cin, cbelow, mbelow, both, v2 };
        read_for (ts, s, want, 5);
    }
    assert_true (has (s, cin));
    assert_true (has (s, cbelow));
    assert_false (has (s, mtop));
    assert_true (has (s, mbelow));
    assert_true (has (s, both));
    assert_true (has (s, v2));
    assert_false (has (s, out));
    for (size_t i = 0; i < s->n; i++)
        if (s->pid[i] == cbelow)
            assert_int_equal (WEXITSTATUS (s->status[i]), 22);

    /* only the memory one, at depth 2 */
    {
        const char *one[] = { msub };
        pid_t c2, m2;
        assert_int_equal (tr_taskstats_filter_cgroups (ts, one, 1, &err), 0);
        c2 = run_in (cdir, 28);
        m2 = run_in (msub, 29);
        read_for (ts, s, &m2, 1);
        assert_true (has (s, m2));
        assert_false (has (s, c2));
    }
    assert_int_equal (tr_taskstats_lost (ts), 0);
    assert_int_equal (tr_taskstats_filter_cgroups (ts, NULL, 0, &err), 0);
    again = run_in (NULL, 30);
    read_for (ts, s, &again, 1);
    assert_true (has (s, again));
    tr_taskstats_close (ts);
    free (s);
}

static void test_filter_refused (void **state)
{
    tr_error_t err;
    tr_taskstats_t *ts;
    char v1[PATH_MAX], name[PATH_MAX + 16];
    const char *many[TR_TASKSTATS_FILTER_MAX + 1];
    const char *missing[] = { name };
    const char *none[] = { NULL };

    (void)state;
    if (!(ts = tr_taskstats_open (&err)))
        fail_msg ("tr_taskstats_open: %s", err.text);
    /* a directory on no cgroup file system has no cgroup id */
    snprintf (v1, sizeof (v1), "/tmp");
    {
        const char *dirs[] = { v1 };
        errno = 0;
        assert_int_equal (tr_taskstats_filter_cgroups (ts, dirs, 1, &err),
                          -1);
        assert_int_equal (errno, EINVAL);
        assert_non_null (strstr (err.text, v1));
    }
    snprintf (name, sizeof (name), "%.4000s/no-such", dir);
    assert_int_equal (tr_taskstats_filter_cgroups (ts, missing, 1, &err), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (tr_taskstats_filter_cgroups (ts, none, 1, &err), -1);
    assert_int_equal (errno, EINVAL);
    for (size_t i = 0; i < TR_TASKSTATS_FILTER_MAX + 1; i++)
        many[i] = dir;
    assert_int_equal (tr_taskstats_filter_cgroups (
                          ts, many, TR_TASKSTATS_FILTER_MAX + 1, &err),
                      -1);
    assert_int_equal (errno, E2BIG);
    assert_int_equal (tr_taskstats_filter_cgroups (NULL, many, 1, &err), -1);
    assert_int_equal (errno, EINVAL);

    /* refused, the listener is unchanged: every exit still arrives */
    {
        struct seen *s = calloc (1, sizeof (*s));
        pid_t out;

        assert_non_null (s);
        out = run_in (NULL, 11);
        read_for (ts, s, &out, 1);
        assert_true (has (s, out));
        free (s);
    }
    tr_taskstats_close (ts);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_filter_cgroup, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_filter_cgroup_walk, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_filter_v1, setup, teardown),
        cmocka_unit_test_setup_teardown (test_filter_refused, setup,
                                         teardown),
    };
    char mnt[PATH_MAX];

    if (geteuid () != 0) {
        printf ("1..0 # SKIP needs root (taskstats, cgroups)\n");
        return 0;
    }
    if (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) < 0) {
        printf ("1..0 # SKIP no cgroup2 mount\n");
        return 0;
    }
    return cmocka_run_group_tests (tests, NULL, NULL);
}
