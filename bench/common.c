/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What the C benchmarks share (common.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/node/cgroup.h"
#include "common.h"

int bench_parse_long (const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

void bench_bad_value (const char *prog,
                      const struct option *longopts,
                      int c,
                      const char *arg)
{
    for (const struct option *lo = longopts; lo->name; lo++)
        if (lo->val == c)
            fprintf (stderr, "%s: bad value for --%s: '%s'\n", prog, lo->name,
                     arg);
}

int bench_install_handlers (void (*handler) (int))
{
    struct sigaction sa;
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

    memset (&sa, 0, sizeof (sa));
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset (&sa.sa_mask);
    for (size_t i = 0; i < sizeof (sigs) / sizeof (sigs[0]); i++)
        if (sigaction (sigs[i], &sa, NULL) < 0)
            return -1;
    return 0;
}

int bench_preflight (const char *prog, const char *needs)
{
    static const char *const ctrl[] = { "memory", "cpuacct", NULL };
    char mnt[PATH_MAX];
    const char *root = getenv ("TRACER_FSROOT");

    if (geteuid () != 0) {
        fprintf (stderr, "%s: skipped: needs root to %s\n", prog, needs);
        return BENCH_EXIT_SKIP;
    }
    if (root && root[0]) {
        fprintf (stderr,
                 "%s: TRACER_FSROOT is set; this benchmark measures "
                 "the live system\n",
                 prog);
        return 2;
    }
    for (size_t i = 0; i < sizeof (ctrl) / sizeof (ctrl[0]); i++)
        if (tr_cgroup_mountpoint (ctrl[i], mnt, sizeof (mnt)) == 0)
            return 0;
    fprintf (stderr,
             "%s: skipped: no cgroup v1 memory or cpuacct hierarchy "
             "and no cgroup2 mount\n",
             prog);
    return BENCH_EXIT_SKIP;
}

void bench_machine_describe (struct bench_machine *m)
{
    struct utsname u;
    char line[512];
    FILE *f;

    m->ncpu = sysconf (_SC_NPROCESSORS_ONLN);
    snprintf (m->model, sizeof (m->model), "unknown");
    if ((f = fopen ("/proc/cpuinfo", "re"))) {
        while (fgets (line, sizeof (line), f)) {
            char *colon = strchr (line, ':');
            if (strncmp (line, "model name", 10) != 0 || !colon)
                continue;
            colon += strspn (colon + 1, " \t") + 1;
            colon[strcspn (colon, "\n")] = '\0';
            snprintf (m->model, sizeof (m->model), "%s", colon);
            break;
        }
        fclose (f);
    }
    if (uname (&u) == 0)
        snprintf (m->kernel, sizeof (m->kernel), "%s %s %s", u.sysname,
                  u.release, u.machine);
    else
        snprintf (m->kernel, sizeof (m->kernel), "unknown");
}

int bench_cgroup_remove (const char *prog, const char *dir)
{
    int tries = 0;

    while (rmdir (dir) < 0) {
        if (errno == ENOENT)
            return 0;
        if (errno != EBUSY || ++tries > 200) {
            fprintf (stderr, "%s: cannot remove %s: %s\n", prog, dir,
                     strerror (errno));
            return -1;
        }
        nanosleep (&(struct timespec){ .tv_nsec = 10000000 }, NULL);
    }
    return 0;
}

bool bench_has_memory_controller (const char *dir)
{
    char path[PATH_MAX + 32], buf[512];
    ssize_t n;
    int fd;

    snprintf (path, sizeof (path), "%s/cgroup.controllers", dir);
    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read (fd, buf, sizeof (buf) - 1);
    close (fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    for (char *save = NULL, *w = strtok_r (buf, " \n", &save); w;
         w = strtok_r (NULL, " \n", &save))
        if (!strcmp (w, "memory"))
            return true;
    return false;
}
