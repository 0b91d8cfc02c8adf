/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A synthetic workload with known ground truth.  It reports its own
 * getrusage view (self + reaped children), which is what the collector's
 * cgroup totals are checked against.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static int parse_size (const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull (s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'K': case 'k': v <<= 10; end++; break;
    case 'M': case 'm': v <<= 20; end++; break;
    case 'G': case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (*end || v > (1ULL << 40))
        return -1;
    *out = v;
    return 0;
}

/* A whole decimal number from lo to hi, nothing after it. */
static int parse_count (const char *s, long lo, long hi, int *out)
{
    char *end;
    long n;

    errno = 0;
    n = strtol (s, &end, 10);
    if (errno || end == s || *end || n < lo || n > hi)
        return -1;
    *out = (int)n;
    return 0;
}

static int parse_secs (const char *s, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod (s, &end);
    if (errno || end == s || *end || !isfinite (d) || d < 0 || d > 86400)
        return -1;
    *out = d;
    return 0;
}

int tr_workload_parse (const char *spec,
                       struct tr_workload *w,
                       tr_error_t *error)
{
    struct tr_workload r = { 0 };
    char buf[256], *item, *save = NULL;

    if (snprintf (buf, sizeof (buf), "%s", spec) >= (int)sizeof (buf)) {
        errno = EINVAL;
        return tr_errprintf (error, "workload spec too long");
    }
    for (item = strtok_r (buf, ",", &save); item;
         item = strtok_r (NULL, ",", &save)) {
        char *eq = strchr (item, '=');
        int rc = -1;
        if (eq) {
            *eq = '\0';
            if (!strcmp (item, "cpu"))
                rc = parse_secs (eq + 1, &r.cpu_s);
            else if (!strcmp (item, "child_cpu"))
                rc = parse_secs (eq + 1, &r.child_cpu_s);
            else if (!strcmp (item, "mem"))
                rc = parse_size (eq + 1, &r.mem_bytes);
            else if (!strcmp (item, "grow"))
                rc = parse_size (eq + 1, &r.grow_bps);
            else if (!strcmp (item, "hold"))
                rc = parse_secs (eq + 1, &r.hold_s);
            else if (!strcmp (item, "write"))
                rc = parse_size (eq + 1, &r.write_bytes);
            else if (!strcmp (item, "alive"))
                rc = parse_count (eq + 1, 0, 100000, &r.alive);
            else if (!strcmp (item, "children"))
                rc = parse_count (eq + 1, 0, 10000, &r.children);
            else if (!strcmp (item, "threads"))
                rc = parse_count (eq + 1, 1, 256, &r.threads);
        }
        if (rc < 0) {
            errno = EINVAL;
            return tr_errprintf (error, "workload: bad item '%s'", item);
        }
    }
    *w = r;
    return 0;
}

static double self_cpu (int who)
{
    struct rusage ru;

    getrusage (who, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
           + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* CPU time of the calling thread. */
static double thread_cpu (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn (double seconds)
{
    double start = thread_cpu ();
    volatile uint64_t x = 1;

    while (thread_cpu () - start < seconds)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
}

static void *burn_thread (void *arg)
{
    burn (*(const double *)arg);
    return NULL;
}

/* The cpu burn in n threads at once (the caller is one of them). */
static void burn_threads (double seconds, int n)
{
    pthread_t tid[256];
    int started = 0;

    for (int i = 1; i < n && i < 256; i++)
        if (pthread_create (&tid[started], NULL, burn_thread, &seconds) == 0)
            started++;
    burn (seconds);
    for (int i = 0; i < started; i++)
        pthread_join (tid[i], NULL);
}

static int write_file (uint64_t bytes)
{
    char path[] = "/tmp/tracer-workload.XXXXXX";
    char block[65536];
    int fd = mkstemp (path);

    if (fd < 0)
        return -1;
    unlink (path);
    memset (block, 'x', sizeof (block));
    while (bytes > 0) {
        size_t n = bytes < sizeof (block) ? (size_t)bytes : sizeof (block);
        ssize_t w = write (fd, block, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        bytes -= (uint64_t)w;
    }
    fsync (fd);
    close (fd);
    return 0;
}

/* n idle children, each blocked reading the pipe p until the parent
 * closes its end; returns how many were forked.
 */
static int hold_children (int n, int p[2])
{
    int made = 0;

    for (; made < n; made++) {
        pid_t pid = fork ();
        char c;

        if (pid < 0)
            break;
        if (pid == 0) {
            close (p[1]);
            while (read (p[0], &c, 1) < 0 && errno == EINTR)
                ;
            _exit (0);
        }
    }
    return made;
}

/* Release the held children (EOF on their pipe) and reap them all. */
static void release_children (int made, int wfd)
{
    close (wfd);
    while (made > 0)
        if (wait (NULL) > 0)
            made--;
        else if (errno != EINTR)
            break;
}

int tr_workload_run (const struct tr_workload *w, FILE *out)
{
    char *mem = NULL;
    struct rusage self, kids;
    long page = sysconf (_SC_PAGESIZE);
    int p[2], held = 0;

    if (w->mem_bytes) {
        if (!(mem = malloc (w->mem_bytes)))
            return -1;
        /* touch every page so it is really charged; with grow, at that
         * many bytes per second: a slice, then 50 ms of sleep
         */
        uint64_t slice = w->grow_bps / 20 / (uint64_t)page;

        for (uint64_t i = 0; i < w->mem_bytes; i += (uint64_t)page) {
            mem[i] = (char)i;
            if (w->grow_bps && (i / (uint64_t)page + 1) % (slice ? slice : 1)
                                   == 0)
                nanosleep (&(struct timespec){ 0, 50000000 }, NULL);
        }
        if (w->hold_s > 0) {
            double s = w->hold_s;
            struct timespec ts = { (time_t)s, (long)((s - floor (s)) * 1e9) };

            while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
                ;
        }
    }
    for (int i = 0; i < w->children; i++) {
        pid_t pid = fork ();
        if (pid == 0) {
            burn (w->child_cpu_s);
            _exit (0);
        }
        if (pid > 0)
            while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
                ;
    }
    if (w->write_bytes)
        write_file (w->write_bytes);
    if (w->alive > 0) {
        if (pipe (p) < 0) {
            free (mem);
            return -1;
        }
        held = hold_children (w->alive, p);
        close (p[0]);
        if (held < w->alive) {
            int saved = errno;
            release_children (held, p[1]);
            free (mem);
            errno = saved;
            return -1;
        }
    }
    burn_threads (w->cpu_s, w->threads > 0 ? w->threads : 1);
    if (w->alive > 0)
        release_children (held, p[1]);
    getrusage (RUSAGE_SELF, &self);
    getrusage (RUSAGE_CHILDREN, &kids);
    fprintf (out,
             "{\"cpu_s\": %.6f, \"maxrss_bytes\": %lld, "
             "\"touched_bytes\": %llu}\n",
             self_cpu (RUSAGE_SELF) + self_cpu (RUSAGE_CHILDREN),
             (long long)(self.ru_maxrss > kids.ru_maxrss ? self.ru_maxrss
                                                         : kids.ru_maxrss)
                 * 1024,
             (unsigned long long)w->mem_bytes);
    fflush (out);
    free (mem);
    return 0;
}
