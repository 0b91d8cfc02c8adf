/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * collector-overhead: the CPU cost of one tr_step_sample() on a step of N
 * idle processes, against a "minimal reader" that opens, reads and closes
 * the same kernel files with no parsing, measured in the same run.  The
 * two alternate in blocks (A/B/A/B) so that drift (frequency scaling, a
 * busy neighbour) hits both sides alike; each side reports the median of
 * its blocks.  Only the public sampler API is used, so the number follows
 * whatever tr_step_sample() reads at the time.  Needs root: it makes
 * cgroups named tracer-bench.<pid> and removes them, with its processes,
 * on every exit path (SIGINT/SIGTERM/SIGHUP included).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cgroup.h"
#include "error.h"
#include "sampler.h"

enum {
    EXIT_SKIP = 77, /* automake's "skipped": not root, no cgroups */
    MAX_CASES = 16,
    MAX_PROCS = 20000,
    MAX_BLOCKS = 50,
};

enum cg_index { CG_MEMORY, CG_CPUACCT, CG_UNIFIED, CG_COUNT };

static const char *cg_ctrl[CG_COUNT] = { "memory", "cpuacct", NULL };

/* The step's cgroup counter files the minimal reader opens: what a
 * complete collector reads per sample, whether or not tr_step_sample()
 * reads it yet.
 */
static const struct {
    enum cg_index cg;
    const char *file;
} cg_files[] = {
    { CG_CPUACCT, "cpuacct.usage" },
    { CG_CPUACCT, "cpuacct.usage_user" },
    { CG_CPUACCT, "cpuacct.usage_sys" },
    { CG_MEMORY, "memory.usage_in_bytes" },
    { CG_MEMORY, "memory.max_usage_in_bytes" },
    { CG_MEMORY, "memory.stat" },
    { CG_MEMORY, "memory.failcnt" },
    { CG_MEMORY, "memory.limit_in_bytes" },
    { CG_UNIFIED, "cpu.stat" },
    { CG_UNIFIED, "cpu.pressure" },
    { CG_UNIFIED, "memory.pressure" },
    { CG_UNIFIED, "io.pressure" },
};

/* And, for each pid listed in the step's cgroup.procs: */
static const char *pid_files[] = { "stat", "status", "io", "schedstat" };

struct options {
    int n[MAX_CASES];
    int ncases;
    long iters;      /* samples per block and side; 0 = calibrate */
    int pairs;       /* A/B block pairs */
    double target_s; /* wall time per case when calibrating */
    bool json;
};

/* Everything a case creates, so that one cleanup undoes any prefix. */
struct fixture {
    char dir[CG_COUNT][PATH_MAX]; /* "" when that hierarchy is absent */
    bool made[CG_COUNT];
    pid_t *kids;
    int nkids;
    tr_step_t *step;
};

/* The minimal reader's work list. */
struct reader {
    char (*path)[PATH_MAX];
    int npath;
    char procs[PATH_MAX]; /* cgroup.procs giving the pids */
    long files;           /* files read by the last sample */
    long bytes;           /* bytes read by the last sample */
};

struct side {
    double cpu_us[MAX_BLOCKS]; /* per sample, one value per block */
    double wall_us[MAX_BLOCKS];
    double cpu_med, wall_med;
};

struct result {
    int n;
    long iters;
    struct side tracer, base;
    double ratio;       /* median tracer CPU / median baseline CPU */
    double ratio_pairs; /* median over pairs of per-pair ratios */
    long base_files, base_bytes;
};

static volatile sig_atomic_t stop_signal;

static void on_signal (int sig)
{
    stop_signal = sig;
}

static void usage (FILE *f)
{
    fprintf (f, "Usage: collector-overhead [OPTIONS]\n"
                "CPU time of tr_step_sample() per sample on a step of N idle\n"
                "processes, against a minimal reader of the same files.\n"
                "\n"
                "  -n, --procs LIST     process counts (default "
                "1,10,100,1000)\n"
                "  -i, --iterations N   samples per block and side (default:\n"
                "                       calibrated to the target time)\n"
                "  -b, --blocks N       blocks per side, alternating A/B "
                "(default 5)\n"
                "  -t, --target SEC     wall time per case when calibrating\n"
                "                       (default 2)\n"
                "  -j, --json           print JSON instead of the table\n"
                "  -h, --help           this text\n"
                "\n"
                "Needs root (it creates cgroups); exits 77 otherwise.\n");
}

static int parse_long (const char *s, long min, long max, long *out)
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

static int parse_list (const char *s, struct options *o)
{
    char buf[256];
    char *p, *comma;
    long v;

    if (snprintf (buf, sizeof (buf), "%s", s) >= (int)sizeof (buf))
        return -1;
    o->ncases = 0;
    for (p = buf; p; p = comma ? comma + 1 : NULL) {
        if ((comma = strchr (p, ',')))
            *comma = '\0';
        if (o->ncases == MAX_CASES || parse_long (p, 1, MAX_PROCS, &v) < 0)
            return -1;
        o->n[o->ncases++] = (int)v;
    }
    return 0;
}

static int parse_options (int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "procs", required_argument, NULL, 'n' },
        { "iterations", required_argument, NULL, 'i' },
        { "blocks", required_argument, NULL, 'b' },
        { "target", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    long v;
    char *end;

    *o = (struct options){
        .n = { 1, 10, 100, 1000 }, .ncases = 4, .pairs = 5, .target_s = 2.0
    };
    while ((c = getopt_long (argc, argv, "n:i:b:t:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_list (optarg, o) < 0)
                goto bad;
            break;
        case 'i':
            if (parse_long (optarg, 1, 100000000, &o->iters) < 0)
                goto bad;
            break;
        case 'b':
            if (parse_long (optarg, 1, MAX_BLOCKS, &v) < 0)
                goto bad;
            o->pairs = (int)v;
            break;
        case 't':
            errno = 0;
            o->target_s = strtod (optarg, &end);
            if (errno || end == optarg || *end || !(o->target_s > 0)
                || o->target_s > 3600)
                goto bad;
            break;
        case 'j':
            o->json = true;
            break;
        case 'h':
            usage (stdout);
            exit (0);
        default:
            usage (stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "collector-overhead: unexpected argument '%s'\n",
                 argv[optind]);
        return -1;
    }
    return 0;
bad:
    fprintf (stderr, "collector-overhead: bad value for -%c: '%s'\n", c,
             optarg);
    return -1;
}

static double ts_us (const struct timespec *ts)
{
    return (double)ts->tv_sec * 1e6 + (double)ts->tv_nsec / 1e3;
}

static void now (double *cpu_us, double *wall_us)
{
    struct timespec ts;

    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    *cpu_us = ts_us (&ts);
    clock_gettime (CLOCK_MONOTONIC, &ts);
    *wall_us = ts_us (&ts);
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median (const double *v, int n)
{
    double s[MAX_BLOCKS];

    memcpy (s, v, (size_t)n * sizeof (*v));
    qsort (s, (size_t)n, sizeof (*s), cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Read a whole file into a stack buffer and drop it: the least any
 * collector must do for a file.  Returns the byte count or -1.
 */
static long slurp (const char *path)
{
    char buf[4096];
    long total = 0;
    ssize_t n;
    int fd;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    while ((n = read (fd, buf, sizeof (buf))) > 0)
        total += n;
    close (fd);
    return n < 0 ? -1 : total;
}

static void read_pid_files (struct reader *r, long pid)
{
    char path[64];

    for (size_t i = 0; i < sizeof (pid_files) / sizeof (pid_files[0]); i++) {
        long n;
        snprintf (path, sizeof (path), "/proc/%ld/%s", pid, pid_files[i]);
        /* a pid may exit between the list and the read: a real
         * collector skips it too
         */
        if ((n = slurp (path)) >= 0) {
            r->files++;
            r->bytes += n;
        }
    }
}

/* One minimal-reader sample.  cgroup.procs is walked as it is read, so
 * that the only parsing is the pid digits the paths need.
 */
static int reader_sample (struct reader *r)
{
    char buf[4096];
    long pid = 0;
    bool digits = false;
    ssize_t n;
    int fd;

    r->files = r->bytes = 0;
    for (int i = 0; i < r->npath; i++) {
        long b = slurp (r->path[i]);
        if (b >= 0) {
            r->files++;
            r->bytes += b;
        }
    }
    if ((fd = open (r->procs, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    r->files++;
    while ((n = read (fd, buf, sizeof (buf))) > 0) {
        r->bytes += n;
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
                digits = true;
            }
            else if (digits) {
                read_pid_files (r, pid);
                pid = 0;
                digits = false;
            }
        }
    }
    if (digits)
        read_pid_files (r, pid);
    close (fd);
    return n < 0 ? -1 : 0;
}

static int reader_init (struct reader *r, const struct fixture *fx)
{
    size_t nfiles = sizeof (cg_files) / sizeof (cg_files[0]);
    int procs_cg = fx->dir[CG_UNIFIED][0]   ? CG_UNIFIED
                   : fx->dir[CG_CPUACCT][0] ? CG_CPUACCT
                                            : CG_MEMORY;

    memset (r, 0, sizeof (*r));
    if (!(r->path = calloc (nfiles, sizeof (*r->path))))
        return -1;
    for (size_t i = 0; i < nfiles; i++) {
        const char *dir = fx->dir[cg_files[i].cg];
        char *p = r->path[r->npath];
        /* files this kernel lacks are left out on both sides alike */
        if (!dir[0]
            || snprintf (p, PATH_MAX, "%s/%s", dir, cg_files[i].file)
                   >= PATH_MAX
            || access (p, R_OK) < 0)
            continue;
        r->npath++;
    }
    if (snprintf (r->procs, sizeof (r->procs), "%s/cgroup.procs",
                  fx->dir[procs_cg])
        >= (int)sizeof (r->procs)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static void reader_fini (struct reader *r)
{
    free (r->path);
    r->path = NULL;
}

/* Remove everything a case made: processes first (a cgroup with members
 * cannot be removed), then the directories.  Returns -1 if something is
 * left behind.
 */
static int fixture_cleanup (struct fixture *fx)
{
    int rc = 0;

    tr_step_destroy (fx->step);
    fx->step = NULL;
    for (int i = 0; i < fx->nkids; i++)
        kill (fx->kids[i], SIGKILL);
    for (int i = 0; i < fx->nkids; i++)
        while (waitpid (fx->kids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    free (fx->kids);
    fx->kids = NULL;
    fx->nkids = 0;
    for (int i = CG_COUNT - 1; i >= 0; i--) {
        int tries = 0;
        if (!fx->made[i])
            continue;
        /* a reaped task can linger in cgroup2 for a moment (EBUSY) */
        while (rmdir (fx->dir[i]) < 0) {
            if (errno == ENOENT)
                break;
            if (errno != EBUSY || ++tries > 200) {
                fprintf (stderr, "collector-overhead: cannot remove %s: %s\n",
                         fx->dir[i], strerror (errno));
                rc = -1;
                break;
            }
            nanosleep (&(struct timespec){ .tv_nsec = 10000000 }, NULL);
        }
        fx->made[i] = false;
    }
    return rc;
}

static int make_dirs (struct fixture *fx)
{
    int found = 0;

    for (int i = 0; i < CG_COUNT; i++) {
        char mnt[PATH_MAX];
        fx->dir[i][0] = '\0';
        if (tr_cgroup_mountpoint (cg_ctrl[i], mnt, sizeof (mnt)) < 0)
            continue;
        if (snprintf (fx->dir[i], PATH_MAX, "%.4000s/tracer-bench.%d", mnt,
                      (int)getpid ())
            >= PATH_MAX) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (mkdir (fx->dir[i], 0755) < 0 && errno != EEXIST) {
            fprintf (stderr, "collector-overhead: mkdir %s: %s\n", fx->dir[i],
                     strerror (errno));
            return -1;
        }
        fx->made[i] = true;
        found++;
    }
    if (!found) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

/* An idle task: it dies with the benchmark even if the benchmark is
 * killed with SIGKILL and cannot clean up.
 */
static void idle_child (pid_t parent)
{
    signal (SIGINT, SIG_DFL);
    signal (SIGTERM, SIG_DFL);
    signal (SIGHUP, SIG_DFL);
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () != parent)
        _exit (0);
    for (;;)
        pause ();
}

static int start_kids (struct fixture *fx, int n)
{
    int fds[CG_COUNT];
    pid_t self = getpid ();
    int rc = -1;

    for (int i = 0; i < CG_COUNT; i++)
        fds[i] = -1;
    if (!(fx->kids = calloc ((size_t)n, sizeof (*fx->kids))))
        return -1;
    for (int i = 0; i < CG_COUNT; i++) {
        char path[PATH_MAX + 16];
        if (!fx->made[i])
            continue;
        snprintf (path, sizeof (path), "%s/cgroup.procs", fx->dir[i]);
        if ((fds[i] = open (path, O_WRONLY | O_CLOEXEC)) < 0) {
            fprintf (stderr, "collector-overhead: %s: %s\n", path,
                     strerror (errno));
            goto out;
        }
    }
    for (int k = 0; k < n && !stop_signal; k++) {
        char buf[32];
        int len;
        pid_t pid = fork ();
        if (pid < 0) {
            fprintf (stderr, "collector-overhead: fork: %s\n",
                     strerror (errno));
            goto out;
        }
        if (pid == 0)
            idle_child (self);
        fx->kids[fx->nkids++] = pid;
        len = snprintf (buf, sizeof (buf), "%d\n", (int)pid);
        /* cgroup.procs takes one pid per write */
        for (int i = 0; i < CG_COUNT; i++)
            if (fds[i] >= 0 && write (fds[i], buf, (size_t)len) != len) {
                fprintf (stderr, "collector-overhead: moving %d to %s: %s\n",
                         (int)pid, fx->dir[i], strerror (errno));
                goto out;
            }
    }
    rc = 0;
out:
    for (int i = 0; i < CG_COUNT; i++)
        if (fds[i] >= 0)
            close (fds[i]);
    return rc;
}

static bool has_memory_controller (const char *dir)
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

static int attach_step (struct fixture *fx)
{
    struct tr_cgroup_paths p;
    tr_error_t err = { 0 };
    json_t *id;

    memset (&p, 0, sizeof (p));
    snprintf (p.memory, sizeof (p.memory), "%s", fx->dir[CG_MEMORY]);
    snprintf (p.cpuacct, sizeof (p.cpuacct), "%s", fx->dir[CG_CPUACCT]);
    snprintf (p.unified, sizeof (p.unified), "%s", fx->dir[CG_UNIFIED]);
    if (p.unified[0])
        p.unified_has_memory = has_memory_controller (p.unified);
    if (!(id = json_pack ("{s:s s:s s:s}", "job_id", "bench", "step_id", "0",
                          "cluster", "bench")))
        goto nomem;
    fx->step = tr_step_create (id, NULL, NULL, "collector-overhead", 1.0);
    json_decref (id);
    if (!fx->step)
        goto nomem;
    if (tr_step_attach_paths (fx->step, &p, &err) < 0) {
        fprintf (stderr, "collector-overhead: attach: %s\n",
                 tr_error_str (&err));
        return -1;
    }
    if (fx->nkids > 0 && tr_step_add_task (fx->step, 0, fx->kids[0]) < 0)
        goto nomem;
    return 0;
nomem:
    fprintf (stderr, "collector-overhead: step: %s\n", strerror (errno));
    return -1;
}

static int tracer_sample (tr_step_t *step)
{
    tr_error_t err = { 0 };

    if (tr_step_sample (step, &err) < 0) {
        fprintf (stderr, "collector-overhead: tr_step_sample: %s\n",
                 tr_error_str (&err));
        return -1;
    }
    return 0;
}

/* Run iters samples of one side; per-sample CPU and wall microseconds. */
static int run_block (struct fixture *fx,
                      struct reader *r,
                      bool tracer,
                      long iters,
                      double *cpu_us,
                      double *wall_us)
{
    double c0, w0, c1, w1;

    now (&c0, &w0);
    for (long k = 0; k < iters && !stop_signal; k++) {
        int rc = tracer ? tracer_sample (fx->step) : reader_sample (r);
        if (rc < 0) {
            if (!tracer)
                fprintf (stderr, "collector-overhead: %s: %s\n", r->procs,
                         strerror (errno));
            return -1;
        }
    }
    now (&c1, &w1);
    *cpu_us = (c1 - c0) / (double)iters;
    *wall_us = (w1 - w0) / (double)iters;
    return 0;
}

/* Warm both sides (page cache, dentries, allocator) for about a tenth
 * of the target, then size the blocks so that the case takes about the
 * target: big N gets fewer samples on its own.
 */
static long calibrate (struct fixture *fx,
                       struct reader *r,
                       const struct options *o)
{
    double warm_s = o->target_s / 10, spent_us = 0;
    double cpu, wall_t = 0, wall_b = 0;
    long rounds = 0, iters;

    do {
        if (run_block (fx, r, true, 1, &cpu, &wall_t) < 0
            || run_block (fx, r, false, 1, &cpu, &wall_b) < 0)
            return -1;
        spent_us += wall_t + wall_b;
        rounds++;
    } while ((rounds < 3 || spent_us < warm_s * 1e6) && !stop_signal);
    if (o->iters)
        return o->iters;
    /* a pair of blocks costs iters rounds (one sample of each side) */
    iters = (long)(o->target_s * 1e6 / o->pairs / (spent_us / (double)rounds));
    return iters < 3 ? 3 : iters;
}

static int run_case (int n, const struct options *o, struct result *res)
{
    struct fixture fx = { 0 };
    struct reader r = { 0 };
    double ratios[MAX_BLOCKS];
    int rc = -1;

    memset (res, 0, sizeof (*res));
    res->n = n;
    if (make_dirs (&fx) < 0 || start_kids (&fx, n) < 0 || stop_signal
        || attach_step (&fx) < 0 || reader_init (&r, &fx) < 0)
        goto out;
    if ((res->iters = calibrate (&fx, &r, o)) < 0)
        goto out;
    for (int b = 0; b < o->pairs && !stop_signal; b++) {
        if (run_block (&fx, &r, true, res->iters, &res->tracer.cpu_us[b],
                       &res->tracer.wall_us[b])
                < 0
            || run_block (&fx, &r, false, res->iters, &res->base.cpu_us[b],
                          &res->base.wall_us[b])
                   < 0)
            goto out;
        ratios[b] = res->tracer.cpu_us[b] / res->base.cpu_us[b];
    }
    if (stop_signal)
        goto out;
    res->tracer.cpu_med = median (res->tracer.cpu_us, o->pairs);
    res->tracer.wall_med = median (res->tracer.wall_us, o->pairs);
    res->base.cpu_med = median (res->base.cpu_us, o->pairs);
    res->base.wall_med = median (res->base.wall_us, o->pairs);
    res->ratio = res->tracer.cpu_med / res->base.cpu_med;
    res->ratio_pairs = median (ratios, o->pairs);
    res->base_files = r.files;
    res->base_bytes = r.bytes;
    rc = 0;
out:
    reader_fini (&r);
    if (fixture_cleanup (&fx) < 0)
        rc = -1;
    return rc;
}

struct machine {
    long ncpu;
    char model[128];
    char kernel[256];
};

static void machine_describe (struct machine *m)
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

/* Share of one core used by sampling once a second. */
static double share_pct (double us_per_sample)
{
    return us_per_sample / 1e6 * 100.0;
}

static void print_table (const struct machine *m,
                         const struct options *o,
                         const struct result *res,
                         int nres)
{
    printf ("tracer %s collector overhead: CPU time per sample\n",
            PACKAGE_VERSION);
    printf ("machine: %ld CPUs, %s, %s\n", m->ncpu, m->model, m->kernel);
    printf ("tracer: tr_step_sample(); baseline: minimal reader "
            "(open/read/close of\n"
            "the same cgroup and /proc/PID files, no parsing); median of "
            "%d blocks each\n\n",
            o->pairs);
    /* wall times of both sides and every block are in the JSON */
    printf ("%6s %8s %10s %10s %7s %10s %7s %10s\n", "N", "samples", "tracer",
            "baseline", "ratio", "tracer", "files", "tracer");
    printf ("%6s %8s %10s %10s %7s %10s %7s %10s\n", "procs", "/block",
            "CPU us", "CPU us", "", "wall us", "/sample", "CPU at 1s");
    for (int i = 0; i < nres; i++) {
        const struct result *r = &res[i];
        printf ("%6d %8ld %10.1f %10.1f %7.3f %10.1f %7ld %9.4f%%\n", r->n,
                r->iters, r->tracer.cpu_med, r->base.cpu_med, r->ratio,
                r->tracer.wall_med, r->base_files,
                share_pct (r->tracer.cpu_med));
    }
}

static json_t *blocks_json (const double *v, int n)
{
    json_t *a = json_array ();

    for (int i = 0; a && i < n; i++)
        if (json_array_append_new (a, json_real (v[i])) < 0) {
            json_decref (a);
            return NULL;
        }
    return a;
}

static json_t *side_json (const struct side *s, int n)
{
    return json_pack ("{s:f s:f s:o s:o s:f}", "cpu_us", s->cpu_med, "wall_us",
                      s->wall_med, "cpu_us_blocks", blocks_json (s->cpu_us, n),
                      "wall_us_blocks", blocks_json (s->wall_us, n),
                      "cpu_share_pct_at_1s", share_pct (s->cpu_med));
}

static int print_json (const struct machine *m,
                       const struct options *o,
                       const struct result *res,
                       int nres)
{
    json_t *cases = json_array (), *top;
    char *s;

    for (int i = 0; cases && i < nres; i++) {
        const struct result *r = &res[i];
        json_t *c = json_pack ("{s:i s:I s:o s:o s:f s:f s:I s:I}", "procs",
                               r->n, "samples_per_block", (json_int_t)r->iters,
                               "tracer", side_json (&r->tracer, o->pairs),
                               "baseline", side_json (&r->base, o->pairs),
                               "ratio", r->ratio, "ratio_pairs", r->ratio_pairs,
                               "baseline_files", (json_int_t)r->base_files,
                               "baseline_bytes", (json_int_t)r->base_bytes);
        if (!c || json_array_append_new (cases, c) < 0) {
            json_decref (cases);
            cases = NULL;
        }
    }
    if (!cases)
        return -1;
    top =
        json_pack ("{s:s s:s s:{s:I s:s s:s} s:i s:o}", "benchmark",
                   "collector-overhead", "version", PACKAGE_VERSION, "machine",
                   "cpus", (json_int_t)m->ncpu, "model", m->model, "kernel",
                   m->kernel, "blocks_per_side", o->pairs, "cases", cases);
    if (!top || !(s = json_dumps (top, JSON_INDENT (2))))
        goto nomem;
    printf ("%s\n", s);
    free (s);
    json_decref (top);
    return 0;
nomem:
    json_decref (top);
    return -1;
}

static int install_handlers (void)
{
    struct sigaction sa;
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

    memset (&sa, 0, sizeof (sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset (&sa.sa_mask);
    for (size_t i = 0; i < sizeof (sigs) / sizeof (sigs[0]); i++)
        if (sigaction (sigs[i], &sa, NULL) < 0)
            return -1;
    return 0;
}

static int preflight (void)
{
    char mnt[PATH_MAX];
    const char *root = getenv ("TRACER_FSROOT");

    if (geteuid () != 0) {
        fprintf (stderr, "collector-overhead: skipped: needs root to create "
                         "cgroups and move processes into them\n");
        return EXIT_SKIP;
    }
    if (root && root[0]) {
        fprintf (stderr, "collector-overhead: TRACER_FSROOT is set; this "
                         "benchmark measures the live system\n");
        return 2;
    }
    for (int i = 0; i < CG_COUNT; i++)
        if (tr_cgroup_mountpoint (cg_ctrl[i], mnt, sizeof (mnt)) == 0)
            return 0;
    fprintf (stderr, "collector-overhead: skipped: no cgroup v1 memory or "
                     "cpuacct hierarchy and no cgroup2 mount\n");
    return EXIT_SKIP;
}

int main (int argc, char **argv)
{
    struct options o;
    struct machine m;
    struct result res[MAX_CASES];
    int nres = 0, rc;

    if (parse_options (argc, argv, &o) < 0)
        return 2;
    if ((rc = preflight ()) != 0)
        return rc;
    if (install_handlers () < 0) {
        fprintf (stderr, "collector-overhead: sigaction: %s\n",
                 strerror (errno));
        return 1;
    }
    machine_describe (&m);
    for (int i = 0; i < o.ncases; i++) {
        if (run_case (o.n[i], &o, &res[nres]) < 0 || stop_signal)
            break;
        nres++;
    }
    if (stop_signal) {
        /* everything is cleaned up: die of the signal as asked */
        fflush (stdout);
        signal (stop_signal, SIG_DFL);
        raise (stop_signal);
        return 128 + stop_signal;
    }
    if (nres < o.ncases)
        return 1;
    if (o.json)
        rc = print_json (&m, &o, res, nres);
    else
        print_table (&m, &o, res, nres);
    if (rc < 0) {
        fprintf (stderr, "collector-overhead: JSON output: %s\n",
                 strerror (errno));
        return 1;
    }
    return 0;
}
