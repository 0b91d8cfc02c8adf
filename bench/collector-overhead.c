/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * collector-overhead: the CPU cost of one tr_step_sample() on a step of N
 * idle processes, against a "minimal reader" that opens, reads and closes
 * the same kernel files with no parsing, measured in the same run.  The
 * two alternate in blocks (A/B/A/B) so that drift (frequency scaling, a
 * busy neighbour) hits both sides alike; each side reports the median of
 * its blocks.  Only the public sampler API is used, so the number follows
 * whatever tr_step_sample() reads at the time.
 *
 * Two peers are measured on the same processes, between the same blocks:
 * bench/psutil-sampler.py, a psutil-based job monitor run once per block
 * that reports its own CPU time per sample, and sysstat's pidstat, whose
 * per-sample cost is the CPU difference (wait4 rusage) between a run of
 * 1 + k intervals and a run of one, over k.  Needs root: it makes cgroups
 * named tracer-bench.<pid> and removes them, with its processes, on every
 * exit path (SIGINT/SIGTERM/SIGHUP included).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libtracer/node/cgroup.h"
#include "common.h"
#include "libtracer/conf/conf.h"
#include "libtracer/node/detail.h"
#include "libtracer/util/error.h"
#include "libtracer/node/sampler.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/node/taskstats.h"
#include "libtracer/record/when.h"

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
    bool smoke;
    bool psutil;         /* run the psutil sampler peer */
    bool pidstat;        /* run the pidstat peer */
    long psutil_samples; /* per psutil block; 0 = calibrate */
    long pidstat_extra;  /* k: intervals the long pidstat run adds */
    int pidstat_runs;    /* short/long pidstat pairs per case */
    const char *python;  /* interpreter for the psutil sampler */
    char psutil_script[PATH_MAX];
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

/* One peer's figures for a case.  For psutil a "block" is one run of
 * the sampler; for pidstat it is one short/long pair of runs.
 */
struct peer {
    bool on;
    int nblocks;
    long samples;              /* per psutil block; pidstat's k */
    double cpu_us[MAX_BLOCKS]; /* per sample */
    double wall_us[MAX_BLOCKS];
    double user_us[MAX_BLOCKS];  /* psutil: the user part of cpu_us */
    double short_us[MAX_BLOCKS]; /* pidstat: CPU of the COUNT=1 run */
    double long_us[MAX_BLOCKS];  /* pidstat: CPU of the COUNT=1+k run */
    double cpu_med, wall_med, user_med;
    double ratio;       /* median peer CPU / median tracer CPU */
    double ratio_pairs; /* psutil: median of per-pair ratios */
};

struct result {
    int n;
    long iters;
    struct side tracer, base;
    double ratio;       /* median tracer CPU / median baseline CPU */
    double ratio_pairs; /* median over pairs of per-pair ratios */
    long base_files, base_bytes;
    struct peer psutil, pidstat;
    /* the step's record after its processes ended: processes counted in
     * the tool table, and whether every exit was seen
     */
    long tools_procs;
    bool tools_complete;
};

/* What the peers say about themselves, for the header. */
struct peer_info {
    char psutil[32];  /* psutil version */
    char python[32];  /* its interpreter's version */
    char pidstat[64]; /* sysstat version line */
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
                "processes, against a minimal reader of the same files, a\n"
                "psutil-based sampler and pidstat.\n"
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
                "      --smoke          quick check: N 1,10, 2 blocks, 0.3 s,\n"
                "                       5 psutil samples, no pidstat\n"
                "      --no-psutil      skip the psutil sampler\n"
                "      --psutil-samples K  samples per psutil block "
                "(default:\n"
                "                       calibrated like a tracer block)\n"
                "      --psutil-script PATH  the sampler (default: "
                "psutil-sampler.py\n"
                "                       beside this program)\n"
                "      --python PROG    its interpreter (default "
                "/usr/bin/python3\n"
                "                       if there, else python3 from PATH)\n"
                "      --no-pidstat     skip pidstat\n"
                "      --pidstat        run pidstat in --smoke too\n"
                "      --pidstat-extra K  seconds the long pidstat run adds "
                "(default 3)\n"
                "      --pidstat-runs R  short/long pidstat pairs per case "
                "(default 2)\n"
                "  -h, --help           this text\n"
                "\n"
                "Needs root (it creates cgroups); exits 77 otherwise.\n");
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
        if (o->ncases == MAX_CASES
            || bench_parse_long (p, 1, MAX_PROCS, &v) < 0)
            return -1;
        o->n[o->ncases++] = (int)v;
    }
    return 0;
}

/* The sampler script beside the program, for a build in the source tree
 * (run-collector-overhead passes the source tree's otherwise).
 */
static void default_script (char *path, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof (exe) - 1);
    char *slash;

    if (n <= 0) {
        snprintf (path, size, "psutil-sampler.py");
        return;
    }
    exe[n] = '\0';
    if ((slash = strrchr (exe, '/')))
        *slash = '\0';
    if (snprintf (path, size, "%s/psutil-sampler.py", exe) >= (int)size)
        snprintf (path, size, "psutil-sampler.py");
}

enum {
    OPT_SMOKE = 256,
    OPT_NO_PSUTIL,
    OPT_PSUTIL_SAMPLES,
    OPT_PSUTIL_SCRIPT,
    OPT_PYTHON,
    OPT_NO_PIDSTAT,
    OPT_PIDSTAT,
    OPT_PIDSTAT_EXTRA,
    OPT_PIDSTAT_RUNS,
};

static int parse_options (int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "procs", required_argument, NULL, 'n' },
        { "iterations", required_argument, NULL, 'i' },
        { "blocks", required_argument, NULL, 'b' },
        { "target", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "smoke", no_argument, NULL, OPT_SMOKE },
        { "no-psutil", no_argument, NULL, OPT_NO_PSUTIL },
        { "psutil-samples", required_argument, NULL, OPT_PSUTIL_SAMPLES },
        { "psutil-script", required_argument, NULL, OPT_PSUTIL_SCRIPT },
        { "python", required_argument, NULL, OPT_PYTHON },
        { "no-pidstat", no_argument, NULL, OPT_NO_PIDSTAT },
        { "pidstat", no_argument, NULL, OPT_PIDSTAT },
        { "pidstat-extra", required_argument, NULL, OPT_PIDSTAT_EXTRA },
        { "pidstat-runs", required_argument, NULL, OPT_PIDSTAT_RUNS },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    /* what was given explicitly wins over --smoke, in any order */
    bool set_n = false, set_b = false, set_t = false, set_ps = false;
    bool set_pe = false, set_pr = false, no_pidstat = false;
    bool want_pidstat = false;
    int c;
    long v;
    char *end;

    *o = (struct options){ .n = { 1, 10, 100, 1000 },
                           .ncases = 4,
                           .pairs = 5,
                           .target_s = 2.0,
                           .psutil = true,
                           .pidstat_extra = 3,
                           .pidstat_runs = 2,
                           .python = access ("/usr/bin/python3", X_OK) == 0
                                         ? "/usr/bin/python3"
                                         : "python3" };
    default_script (o->psutil_script, sizeof (o->psutil_script));
    while ((c = getopt_long (argc, argv, "n:i:b:t:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_list (optarg, o) < 0)
                goto bad;
            set_n = true;
            break;
        case 'i':
            if (bench_parse_long (optarg, 1, 100000000, &o->iters) < 0)
                goto bad;
            break;
        case 'b':
            if (bench_parse_long (optarg, 1, MAX_BLOCKS, &v) < 0)
                goto bad;
            o->pairs = (int)v;
            set_b = true;
            break;
        case 't':
            errno = 0;
            o->target_s = strtod (optarg, &end);
            if (errno || end == optarg || *end || !(o->target_s > 0)
                || o->target_s > 3600)
                goto bad;
            set_t = true;
            break;
        case 'j':
            o->json = true;
            break;
        case OPT_SMOKE:
            o->smoke = true;
            break;
        case OPT_NO_PSUTIL:
            o->psutil = false;
            break;
        case OPT_PSUTIL_SAMPLES:
            if (bench_parse_long (optarg, 1, 10000000, &o->psutil_samples) < 0)
                goto bad;
            set_ps = true;
            break;
        case OPT_PSUTIL_SCRIPT:
            if (snprintf (o->psutil_script, sizeof (o->psutil_script), "%s",
                          optarg)
                >= (int)sizeof (o->psutil_script))
                goto bad;
            break;
        case OPT_PYTHON:
            o->python = optarg;
            break;
        case OPT_NO_PIDSTAT:
            no_pidstat = true;
            break;
        case OPT_PIDSTAT:
            want_pidstat = true;
            break;
        case OPT_PIDSTAT_EXTRA:
            if (bench_parse_long (optarg, 1, 60, &o->pidstat_extra) < 0)
                goto bad;
            set_pe = true;
            break;
        case OPT_PIDSTAT_RUNS:
            if (bench_parse_long (optarg, 1, MAX_BLOCKS, &v) < 0)
                goto bad;
            o->pidstat_runs = (int)v;
            set_pr = true;
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
    o->pidstat = !no_pidstat && (want_pidstat || !o->smoke);
    if (o->smoke) {
        /* a few seconds in all: proves every side still runs */
        if (!set_n) {
            o->n[0] = 1;
            o->n[1] = 10;
            o->ncases = 2;
        }
        if (!set_b)
            o->pairs = 2;
        if (!set_t)
            o->target_s = 0.3;
        if (!set_ps)
            o->psutil_samples = 5;
        if (!set_pe)
            o->pidstat_extra = 1;
        if (!set_pr)
            o->pidstat_runs = 1;
    }
    return 0;
bad:
    bench_bad_value ("collector-overhead", longopts, c, optarg);
    return -1;
}

static double ts_us (const struct timespec *ts)
{
    return (double)ts->tv_sec * 1e6 + (double)ts->tv_nsec / 1e3;
}

static double tv_us (const struct timeval *tv)
{
    return (double)tv->tv_sec * 1e6 + (double)tv->tv_usec;
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
        if (!fx->made[i])
            continue;
        if (bench_cgroup_remove ("collector-overhead", fx->dir[i]) < 0)
            rc = -1;
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

/* The step's detail options as tracerd sets them from the default
 * configuration: exits from taskstats, sampling.proc_reads processes
 * reread per sample.
 */
static size_t proc_reads = 0;

static int configure_step (tr_step_t *step)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t err = { 0 };
    int rc;

    if (!conf) {
        fprintf (stderr, "collector-overhead: config: %s\n", strerror (errno));
        return -1;
    }
    proc_reads = (size_t)conf->proc_reads;
    {
        struct tr_detail_opts opts = {
            .taskstats = true,
            .cmdline_max = (size_t)conf->cmdline_max,
            .proc_reads = proc_reads,
            .redact = conf->redact,
        };
        rc = tr_step_configure (step, &opts, &err);
    }
    tr_conf_destroy (conf);
    if (rc < 0)
        fprintf (stderr, "collector-overhead: configure: %s\n",
                 tr_error_str (&err));
    return rc;
}

struct exits {
    tr_step_t *step;
    long mine; /* process (not thread) exits that were the step's */
};

static void on_exit_event (const struct tr_exit *ev, void *arg)
{
    struct exits *x = arg;

    if (tr_step_exit_event (x->step, ev) == 1 && ev->aggr == TR_EXIT_PID
        && ev->pid == ev->tgid)
        x->mine++;
}

/* End the case's processes the way a step ends, with a taskstats
 * listener feeding their exits to the step, take the final reading and
 * count the processes of the record's tool table: every process must be
 * there, with its exit seen, although most were never reread while they
 * ran.  Returns -1 when the table is short or the listener fails.
 */
static int check_tools (struct fixture *fx, struct result *res)
{
    tr_error_t err = { 0 };
    tr_taskstats_t *ts = tr_taskstats_open (&err);
    json_t *rec = NULL, *tools, *row, *procs;
    struct exits x = { fx->step, 0 };
    double deadline;
    size_t i;
    int rc = -1;

    if (!ts) {
        fprintf (stderr, "collector-overhead: taskstats: %s\n",
                 tr_error_str (&err));
        return -1;
    }
    for (int k = 0; k < fx->nkids; k++)
        kill (fx->kids[k], SIGKILL);
    for (int k = 0; k < fx->nkids; k++)
        while (waitpid (fx->kids[k], NULL, 0) < 0 && errno == EINTR)
            ;
    (void)tr_step_task_exit (fx->step, 0, fx->kids[0], SIGKILL);
    /* the events follow the reaping closely; allow three seconds */
    deadline = tr_when_monotonic () + 3.0;
    while (x.mine < fx->nkids && tr_when_monotonic () < deadline) {
        struct pollfd pfd = { tr_taskstats_fd (ts), POLLIN, 0 };
        if (tr_taskstats_read (ts, on_exit_event, &x) < 0
            || (poll (&pfd, 1, 100) < 0 && errno != EINTR))
            break;
    }
    tr_step_exits_lost (fx->step, tr_taskstats_lost (ts));
    tr_taskstats_close (ts);
    free (fx->kids);
    fx->kids = NULL;
    fx->nkids = 0;
    if (tr_step_finish (fx->step, &err) < 0
        || !(rec = tr_step_record (fx->step, "final"))) {
        fprintf (stderr, "collector-overhead: final reading: %s\n",
                 err.text[0] ? tr_error_str (&err) : strerror (errno));
        goto out;
    }
    tools = json_object_get (rec, "tools");
    res->tools_procs = 0;
    json_array_foreach (tools, i, row)
    {
        res->tools_procs +=
            (long)json_integer_value (json_object_get (row, "count"));
    }
    procs = json_object_get (json_object_get (rec, "summary"), "processes");
    res->tools_complete = json_is_true (json_object_get (procs, "complete"));
    if (res->tools_procs != res->n)
        fprintf (stderr,
                 "collector-overhead: the tool table counts %ld "
                 "processes of %d\n",
                 res->tools_procs, res->n);
    else
        rc = 0;
out:
    json_decref (rec);
    return rc;
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
        p.unified_has_memory = bench_has_memory_controller (p.unified);
    if (!(id = json_pack ("{s:s s:s s:s}", "job_id", "bench", "step_id", "0",
                          "cluster", "bench")))
        goto nomem;
    fx->step = tr_step_create (id, NULL, NULL, "collector-overhead", 1.0);
    json_decref (id);
    if (!fx->step)
        goto nomem;
    if (configure_step (fx->step) < 0)
        return -1;
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

/* Run argv (found in PATH) as a child with its stdout in a pipe, keep
 * that output in out, and take the child's own CPU time from wait4().
 * It dies with the benchmark (PR_SET_PDEATHSIG), and is killed when a
 * stop signal arrives.  Returns 0 only when it exits 0.
 */
static int run_child (char *const argv[],
                      tr_strbuf_t *out,
                      double *cpu_us,
                      double *wall_us)
{
    struct rusage ru;
    double c0, w0, c1, w1;
    pid_t self = getpid (), pid;
    int fds[2], status;
    ssize_t n;

    tr_strbuf_reset (out);
    if (pipe2 (fds, O_CLOEXEC) < 0)
        goto syserr;
    now (&c0, &w0);
    if ((pid = fork ()) < 0) {
        close (fds[0]);
        close (fds[1]);
        goto syserr;
    }
    if (pid == 0) {
        signal (SIGINT, SIG_DFL);
        signal (SIGTERM, SIG_DFL);
        signal (SIGHUP, SIG_DFL);
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        if (getppid () != self || dup2 (fds[1], STDOUT_FILENO) < 0)
            _exit (127);
        execvp (argv[0], argv);
        fprintf (stderr, "collector-overhead: cannot run %s: %s\n", argv[0],
                 strerror (errno));
        _exit (127);
    }
    close (fds[1]);
    for (;;) {
        char buf[8192];
        struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
        /* poll is not restarted by SA_RESTART: a stop signal ends it */
        if (stop_signal) {
            kill (pid, SIGKILL);
            break;
        }
        if (poll (&pfd, 1, 1000) < 0 && errno != EINTR)
            break;
        if (!pfd.revents)
            continue;
        if ((n = read (fds[0], buf, sizeof (buf))) <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        if (tr_strbuf_append (out, buf, (size_t)n) < 0) {
            kill (pid, SIGKILL);
            break;
        }
    }
    close (fds[0]);
    while (wait4 (pid, &status, 0, &ru) < 0)
        if (errno != EINTR)
            goto syserr;
    now (&c1, &w1);
    *cpu_us = tv_us (&ru.ru_utime) + tv_us (&ru.ru_stime);
    *wall_us = w1 - w0;
    if (stop_signal)
        return -1;
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        fprintf (stderr, "collector-overhead: %s %s\n", argv[0],
                 WIFEXITED (status) ? "failed" : "was killed");
        return -1;
    }
    return 0;
syserr:
    fprintf (stderr, "collector-overhead: running %s: %s\n", argv[0],
             strerror (errno));
    return -1;
}

/* One psutil block: a run of the sampler over K samples (after its one
 * untimed sample), with CPU (and its user part) and wall per sample as it
 * reports them.
 */
static int psutil_block (const struct fixture *fx,
                         const struct options *o,
                         long samples,
                         int n,
                         double *cpu_us,
                         double *wall_us,
                         double *user_us,
                         struct peer_info *info)
{
    char count[32];
    char *argv[10];
    int argc = 0;
    tr_strbuf_t out = TR_STRBUF_INIT;
    json_error_t jerr;
    json_t *j = NULL;
    json_int_t procs;
    const char *psv = NULL, *pyv = NULL;
    double child_cpu, child_wall;
    int rc = -1;

    snprintf (count, sizeof (count), "%ld", samples);
    argv[argc++] = (char *)o->python;
    argv[argc++] = (char *)o->psutil_script;
    /* the v1 pair when there is one: cgroup2 here may have no controllers */
    if (fx->made[CG_MEMORY]) {
        argv[argc++] = "--memory";
        argv[argc++] = (char *)fx->dir[CG_MEMORY];
        if (fx->made[CG_CPUACCT]) {
            argv[argc++] = "--cpuacct";
            argv[argc++] = (char *)fx->dir[CG_CPUACCT];
        }
    }
    else {
        argv[argc++] = "--unified";
        argv[argc++] = (char *)fx->dir[CG_UNIFIED];
    }
    argv[argc++] = count;
    argv[argc] = NULL;
    if (run_child (argv, &out, &child_cpu, &child_wall) < 0) {
        if (!stop_signal)
            fprintf (stderr, "collector-overhead: the psutil sampler needs "
                             "python3-psutil (--python PROG for another "
                             "interpreter), or --no-psutil\n");
        goto out;
    }
    if (!(j = json_loads (tr_strbuf_str (&out), 0, &jerr))
        || json_unpack_ex (j, &jerr, 0, "{s:I s:F s:F s:F s:s s:s}", "procs",
                           &procs, "cpu_us", cpu_us, "wall_us", wall_us,
                           "user_us", user_us, "psutil", &psv, "python", &pyv)
               < 0) {
        fprintf (stderr, "collector-overhead: psutil sampler output: %s\n",
                 jerr.text);
        goto out;
    }
    /* a figure for other processes than the step's is no comparison */
    if (procs != n) {
        fprintf (stderr,
                 "collector-overhead: psutil sampler saw %lld processes, "
                 "not %d\n",
                 (long long)procs, n);
        goto out;
    }
    snprintf (info->psutil, sizeof (info->psutil), "%s", psv);
    snprintf (info->python, sizeof (info->python), "%s", pyv);
    rc = 0;
out:
    json_decref (j);
    tr_strbuf_free (&out);
    return rc;
}

/* Lines of pidstat output that report a process: the others are its
 * banner, "#" headers and blank lines.  With -h each line starts with
 * the time, so with a digit.
 */
static long pidstat_lines (const char *s)
{
    long lines = 0;

    for (const char *p = s; *p;
         p = strchr (p, '\n') ? strchr (p, '\n') + 1 : p + strlen (p))
        if (*p >= '0' && *p <= '9')
            lines++;
    return lines;
}

/* One pidstat run over the step's processes, COUNT intervals of 1 s;
 * its CPU time (wait4) in *cpu_us.
 */
static int pidstat_run (const struct fixture *fx, long count, double *cpu_us)
{
    char cnt[32];
    char *argv[] = { "pidstat", "-h", "-u", "-r", "-d",
                     "-p",      NULL, "1",  cnt,  NULL };
    tr_strbuf_t pids = TR_STRBUF_INIT, out = TR_STRBUF_INIT;
    double wall;
    long lines;
    int rc = -1;

    snprintf (cnt, sizeof (cnt), "%ld", count);
    /* the pids themselves, as a monitor given the step's pids would */
    for (int i = 0; i < fx->nkids; i++)
        if (tr_strbuf_printf (&pids, "%s%d", i ? "," : "", (int)fx->kids[i])
            < 0) {
            fprintf (stderr, "collector-overhead: %s\n", strerror (errno));
            goto out;
        }
    argv[6] = (char *)tr_strbuf_str (&pids);
    if (run_child (argv, &out, cpu_us, &wall) < 0)
        goto out;
    /* one line per process and interval, or it measured something else */
    if ((lines = pidstat_lines (tr_strbuf_str (&out)))
        != (long)fx->nkids * count) {
        fprintf (stderr,
                 "collector-overhead: pidstat reported %ld lines, "
                 "expected %ld\n",
                 lines, (long)fx->nkids * count);
        goto out;
    }
    rc = 0;
out:
    tr_strbuf_free (&pids);
    tr_strbuf_free (&out);
    return rc;
}

/* One pidstat measure: a run of 1 interval and a run of 1 + k, in the
 * given order; their difference is k readings and reports, without the
 * start-up, the first reading and the exit that both runs share.
 */
static int pidstat_pair (const struct fixture *fx,
                         const struct options *o,
                         bool long_first,
                         struct peer *p)
{
    int b = p->nblocks;
    double *s = &p->short_us[b], *l = &p->long_us[b];

    if (long_first ? pidstat_run (fx, 1 + o->pidstat_extra, l) < 0
                         || pidstat_run (fx, 1, s) < 0
                   : pidstat_run (fx, 1, s) < 0
                         || pidstat_run (fx, 1 + o->pidstat_extra, l) < 0)
        return -1;
    p->cpu_us[b] = (*l - *s) / (double)o->pidstat_extra;
    p->nblocks++;
    return 0;
}

/* Warm both sides (page cache, dentries, allocator) for about a tenth
 * of the target, then size the blocks so that the case takes about the
 * target: big N gets fewer samples on its own.  A psutil block is sized
 * to last about as long as a tracer block, from a short warm-up run of
 * the sampler (which also brings Python and psutil into the page cache).
 */
static long calibrate (struct fixture *fx,
                       struct reader *r,
                       const struct options *o,
                       struct result *res,
                       struct peer_info *info)
{
    double warm_s = o->target_s / 10, spent_us = 0;
    double cpu, wall_t = 0, wall_b = 0, tracer_wall = 0;
    long rounds = 0, iters;

    do {
        if (run_block (fx, r, true, 1, &cpu, &wall_t) < 0
            || run_block (fx, r, false, 1, &cpu, &wall_b) < 0)
            return -1;
        spent_us += wall_t + wall_b;
        tracer_wall += wall_t;
        rounds++;
    } while ((rounds < 3 || spent_us < warm_s * 1e6) && !stop_signal);
    if (o->iters)
        iters = o->iters;
    else {
        /* a pair of blocks costs iters rounds (one sample of each side) */
        iters =
            (long)(o->target_s * 1e6 / o->pairs / (spent_us / (double)rounds));
        if (iters < 3)
            iters = 3;
    }
    if (o->psutil) {
        double ps_wall, ps_user, block_us = tracer_wall / rounds * iters;
        if (psutil_block (fx, o, 3, res->n, &cpu, &ps_wall, &ps_user, info) < 0)
            return -1;
        res->psutil.samples = o->psutil_samples;
        if (!o->psutil_samples) {
            double k = ps_wall > 0 ? block_us / ps_wall : 3;
            res->psutil.samples = k < 3 ? 3 : k > 1e6 ? 1000000 : (long)k;
        }
    }
    return iters;
}

static void peer_finish (struct peer *p, double tracer_med)
{
    p->cpu_med = median (p->cpu_us, p->nblocks);
    p->wall_med = median (p->wall_us, p->nblocks);
    p->user_med = median (p->user_us, p->nblocks);
    p->ratio = p->cpu_med / tracer_med;
}

static int run_case (int n,
                     const struct options *o,
                     struct result *res,
                     struct peer_info *info)
{
    struct fixture fx = { 0 };
    struct reader r = { 0 };
    double ratios[MAX_BLOCKS], ps_ratios[MAX_BLOCKS];
    int rounds = o->pairs, rc = -1;

    memset (res, 0, sizeof (*res));
    res->n = n;
    res->psutil.on = o->psutil;
    res->pidstat.on = o->pidstat;
    res->pidstat.samples = o->pidstat_extra;
    if (o->pidstat && o->pidstat_runs > rounds)
        rounds = o->pidstat_runs;
    if (make_dirs (&fx) < 0 || start_kids (&fx, n) < 0 || stop_signal
        || attach_step (&fx) < 0 || reader_init (&r, &fx) < 0)
        goto out;
    if ((res->iters = calibrate (&fx, &r, o, res, info)) < 0)
        goto out;
    /* tracer, baseline, psutil, then a pidstat pair: every peer sits
     * between tracer blocks, so drift reaches all of them alike
     */
    for (int b = 0; b < rounds && !stop_signal; b++) {
        if (b < o->pairs) {
            if (run_block (&fx, &r, true, res->iters, &res->tracer.cpu_us[b],
                           &res->tracer.wall_us[b])
                    < 0
                || run_block (&fx, &r, false, res->iters, &res->base.cpu_us[b],
                              &res->base.wall_us[b])
                       < 0)
                goto out;
            ratios[b] = res->tracer.cpu_us[b] / res->base.cpu_us[b];
        }
        if (b < o->pairs && o->psutil) {
            struct peer *p = &res->psutil;
            if (psutil_block (&fx, o, p->samples, n, &p->cpu_us[b],
                              &p->wall_us[b], &p->user_us[b], info)
                < 0)
                goto out;
            p->nblocks++;
            ps_ratios[b] = p->cpu_us[b] / res->tracer.cpu_us[b];
        }
        /* alternate which run goes first, so neither always follows a
         * tracer block
         */
        if (b < o->pidstat_runs && o->pidstat
            && pidstat_pair (&fx, o, b % 2 == 1, &res->pidstat) < 0)
            goto out;
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
    if (o->psutil) {
        peer_finish (&res->psutil, res->tracer.cpu_med);
        res->psutil.ratio_pairs = median (ps_ratios, res->psutil.nblocks);
    }
    if (o->pidstat)
        peer_finish (&res->pidstat, res->tracer.cpu_med);
    if (check_tools (&fx, res) < 0)
        goto out;
    rc = 0;
out:
    reader_fini (&r);
    if (fixture_cleanup (&fx) < 0)
        rc = -1;
    return rc;
}

/* Share of one core used by sampling once a second. */
static double share_pct (double us_per_sample)
{
    return us_per_sample / 1e6 * 100.0;
}

static void print_table (const struct bench_machine *m,
                         const struct options *o,
                         const struct peer_info *info,
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
    printf ("step configured as tracerd does by default: taskstats on, "
            "sampling.proc_reads %zu\n\n",
            proc_reads);
    printf ("%6s %8s %10s %10s %7s %10s %7s %10s %9s\n", "N", "samples",
            "tracer", "baseline", "ratio", "tracer", "files", "tracer",
            "tools");
    printf ("%6s %8s %10s %10s %7s %10s %7s %10s %9s\n", "procs", "/block",
            "CPU us", "CPU us", "", "wall us", "/sample", "CPU at 1s", "procs");
    for (int i = 0; i < nres; i++) {
        const struct result *r = &res[i];
        printf ("%6d %8ld %10.1f %10.1f %7.3f %10.1f %7ld %9.4f%% %5ld%s\n",
                r->n, r->iters, r->tracer.cpu_med, r->base.cpu_med, r->ratio,
                r->tracer.wall_med, r->base_files,
                share_pct (r->tracer.cpu_med), r->tools_procs,
                r->tools_complete ? " all" : " some");
    }
    if (!o->psutil && !o->pidstat)
        return;
    printf ("\nother collectors on the same processes, interleaved with the "
            "tracer blocks\n");
    if (o->psutil)
        printf ("psutil: bench/psutil-sampler.py, psutil %s on Python %s, "
                "its own\n"
                "  getrusage over the samples of a run; median of %d runs\n",
                info->psutil, info->python, o->pairs);
    if (o->pidstat)
        printf ("pidstat: %s, pidstat -h -u -r -d -p PIDS 1 COUNT;\n"
                "  wait4 CPU at COUNT=%ld minus at COUNT=1, over %ld; median "
                "of %d pairs\n",
                info->pidstat, 1 + o->pidstat_extra, o->pidstat_extra,
                o->pidstat_runs);
    printf ("\n%6s %10s %10s %7s %8s %10s %7s\n", "N", "tracer", "psutil",
            "psutil", "psutil", "pidstat", "pidstat");
    printf ("%6s %10s %10s %7s %8s %10s %7s\n", "procs", "CPU us", "CPU us",
            "/tracer", "samples", "CPU us", "/tracer");
    for (int i = 0; i < nres; i++) {
        const struct result *r = &res[i];
        printf ("%6d %10.1f", r->n, r->tracer.cpu_med);
        if (r->psutil.on)
            printf (" %10.1f %7.2f %8ld", r->psutil.cpu_med, r->psutil.ratio,
                    r->psutil.samples);
        else
            printf (" %10s %7s %8s", "-", "-", "-");
        if (r->pidstat.on)
            printf (" %10.1f %7.2f", r->pidstat.cpu_med, r->pidstat.ratio);
        else
            printf (" %10s %7s", "-", "-");
        printf ("\n");
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

/* NULL (JSON null) when the peer was skipped. */
static json_t *psutil_json (const struct peer *p)
{
    if (!p->on)
        return NULL;
    return json_pack ("{s:f s:f s:f s:o s:o s:o s:I s:f s:f s:f}", "cpu_us",
                      p->cpu_med, "user_us", p->user_med, "wall_us",
                      p->wall_med, "cpu_us_blocks",
                      blocks_json (p->cpu_us, p->nblocks), "user_us_blocks",
                      blocks_json (p->user_us, p->nblocks), "wall_us_blocks",
                      blocks_json (p->wall_us, p->nblocks), "samples_per_block",
                      (json_int_t)p->samples, "ratio_to_tracer", p->ratio,
                      "ratio_to_tracer_pairs", p->ratio_pairs,
                      "cpu_share_pct_at_1s", share_pct (p->cpu_med));
}

static json_t *pidstat_json (const struct peer *p)
{
    if (!p->on)
        return NULL;
    return json_pack ("{s:f s:o s:o s:o s:I s:f s:f}", "cpu_us", p->cpu_med,
                      "cpu_us_runs", blocks_json (p->cpu_us, p->nblocks),
                      "short_run_cpu_us", blocks_json (p->short_us, p->nblocks),
                      "long_run_cpu_us", blocks_json (p->long_us, p->nblocks),
                      "extra_samples", (json_int_t)p->samples,
                      "ratio_to_tracer", p->ratio, "cpu_share_pct_at_1s",
                      share_pct (p->cpu_med));
}

static int print_json (const struct bench_machine *m,
                       const struct options *o,
                       const struct peer_info *info,
                       const struct result *res,
                       int nres)
{
    json_t *cases = json_array (), *top = NULL, *peers;
    char *s;

    for (int i = 0; cases && i < nres; i++) {
        const struct result *r = &res[i];
        json_t *c =
            json_pack ("{s:i s:I s:o s:o s:f s:f s:I s:I s:o? s:o? s:I s:b}",
                       "procs", r->n, "samples_per_block", (json_int_t)r->iters,
                       "tracer", side_json (&r->tracer, o->pairs), "baseline",
                       side_json (&r->base, o->pairs), "ratio", r->ratio,
                       "ratio_pairs", r->ratio_pairs, "baseline_files",
                       (json_int_t)r->base_files, "baseline_bytes",
                       (json_int_t)r->base_bytes, "psutil",
                       psutil_json (&r->psutil), "pidstat",
                       pidstat_json (&r->pidstat), "tools_processes",
                       (json_int_t)r->tools_procs, "tools_complete",
                       r->tools_complete);
        if (!c || json_array_append_new (cases, c) < 0) {
            json_decref (cases);
            cases = NULL;
        }
    }
    if (!cases)
        return -1;
    peers = json_pack ("{s:o? s:o?}", "psutil",
                       o->psutil ? json_pack ("{s:s s:s s:s s:s}", "script",
                                              o->psutil_script, "interpreter",
                                              o->python, "psutil", info->psutil,
                                              "python", info->python)
                                 : NULL,
                       "pidstat",
                       o->pidstat ? json_pack ("{s:s s:I s:i}", "version",
                                               info->pidstat, "extra_samples",
                                               (json_int_t)o->pidstat_extra,
                                               "runs", o->pidstat_runs)
                                  : NULL);
    if (!peers) {
        json_decref (cases);
        goto nomem;
    }
    top = json_pack ("{s:s s:s s:{s:I s:s s:s} s:i s:b s:o s:o}", "benchmark",
                     "collector-overhead", "version", PACKAGE_VERSION,
                     "machine", "cpus", (json_int_t)m->ncpu, "model", m->model,
                     "kernel", m->kernel, "blocks_per_side", o->pairs, "smoke",
                     o->smoke, "peers", peers, "cases", cases);
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

/* Fail early, before any case, when a peer that is to run cannot: the
 * sampler script is missing, or pidstat is (its version line is kept for
 * the header).  psutil itself is checked by the first case's warm-up run.
 */
static int peers_preflight (const struct options *o, struct peer_info *info)
{
    char *argv[] = { "pidstat", "-V", NULL };
    tr_strbuf_t out = TR_STRBUF_INIT;
    double cpu, wall;
    const char *s;

    if (o->psutil && access (o->psutil_script, R_OK) < 0) {
        fprintf (stderr,
                 "collector-overhead: %s: %s (--psutil-script PATH, or "
                 "--no-psutil)\n",
                 o->psutil_script, strerror (errno));
        return -1;
    }
    if (!o->pidstat)
        return 0;
    if (run_child (argv, &out, &cpu, &wall) < 0) {
        fprintf (stderr, "collector-overhead: pidstat is needed (Debian "
                         "package sysstat), or --no-pidstat\n");
        tr_strbuf_free (&out);
        return -1;
    }
    s = tr_strbuf_str (&out);
    snprintf (info->pidstat, sizeof (info->pidstat), "%.*s",
              (int)strcspn (s, "\n"), s);
    tr_strbuf_free (&out);
    return 0;
}

int main (int argc, char **argv)
{
    struct options o;
    struct bench_machine m;
    struct peer_info info = { .psutil = "?", .python = "?", .pidstat = "?" };
    struct result res[MAX_CASES];
    int nres = 0, rc;

    if (parse_options (argc, argv, &o) < 0)
        return 2;
    if ((rc = bench_preflight ("collector-overhead", "create cgroups and move "
                                                     "processes into them"))
        != 0)
        return rc;
    if (bench_install_handlers (on_signal) < 0) {
        fprintf (stderr, "collector-overhead: sigaction: %s\n",
                 strerror (errno));
        return 1;
    }
    if (peers_preflight (&o, &info) < 0)
        return 1;
    bench_machine_describe (&m);
    for (int i = 0; i < o.ncases; i++) {
        if (run_case (o.n[i], &o, &res[nres], &info) < 0 || stop_signal)
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
        rc = print_json (&m, &o, &info, res, nres);
    else
        print_table (&m, &o, &info, res, nres);
    if (rc < 0) {
        fprintf (stderr, "collector-overhead: JSON output: %s\n",
                 strerror (errno));
        return 1;
    }
    return 0;
}
