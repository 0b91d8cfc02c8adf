/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * record-size: how large a step's record grows with the step's length.
 * A step on a real cgroup set, configured as tracerd configures one,
 * with a few idle processes and a set of distinct tools whose processes
 * come and go, is read with tr_step_sample_at() at simulated times one
 * sampling interval apart: a minute, an hour and seven days of step time
 * take seconds.  Each case ends like a step (processes killed, exits
 * from taskstats, final reading) and the record is serialised as the
 * store writes it (tr_record_dumps).  Sizes are compared with the same
 * set-up's record after one reading (the baseline, measured in the same
 * run) and with the 256 KiB target for a seven-day step.  Needs root: it
 * makes cgroups named tracer-recsize.<pid> and removes them, with its
 * processes and tool copies, on every exit path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
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

#include "libtracer/node/cgroup.h"
#include "common.h"
#include "libtracer/conf/conf.h"
#include "libtracer/node/detail.h"
#include "libtracer/util/error.h"
#include "libtracer/record/livesum.h"
#include "libtracer/record/record.h"
#include "libtracer/node/sampler.h"
#include "libtracer/node/series.h"
#include "libtracer/record/sign.h"
#include "libtracer/node/taskstats.h"
#include "libtracer/record/when.h"

enum {
    EXIT_SKIP = 77, /* automake's "skipped": not root, no cgroups */
    MAX_CASES = 16,
    MAX_TOOLS = 200,
    MAX_IDLE = 100,
    TARGET_BYTES = 256 * 1024, /* a seven-day step's record */
    TARGET_SECONDS = 7 * 86400,
};

enum cg_index { CG_MEMORY, CG_CPUACCT, CG_UNIFIED, CG_COUNT };

static const char *cg_ctrl[CG_COUNT] = { "memory", "cpuacct", NULL };

/* Executable names of the tool copies, as a pipeline's steps name them;
 * past the list, names get a number.
 */
static const char *tool_names[] = {
    "samtools", "bwa-mem2", "STAR",     "fastqc",     "gatk",
    "java",     "Rscript",  "salmon",   "multiqc",    "bowtie2",
    "picard",   "cutadapt", "pigz",     "bcftools",   "bedtools",
    "hisat2",   "kallisto", "minimap2", "python3.11", "trimmomatic",
};

struct options {
    long seconds[MAX_CASES]; /* step time of each case */
    int ncases;
    double interval; /* seconds between readings; 0: the configuration's */
    int tools;       /* distinct executables */
    int idle;        /* processes that live through the step */
    long churn;      /* readings between process replacements */
    bool json;
    bool smoke;
};

struct result {
    long seconds; /* 0: the one-reading baseline */
    long readings;
    long bytes;     /* tr_record_dumps: as the store writes it */
    long canonical; /* tr_record_canonical: what a signature covers */
    long dense;     /* bytes with every series value busy (dense_bytes) */
    long points;    /* series points (t_s) */
    long tool_rows;
    long processes;    /* counted in the tool table */
    long started;      /* processes the case started */
    bool complete;     /* summary.processes.complete */
    bool valid;        /* tr_record_validate */
    char invalid[160]; /* why not */
    double cpu_us;     /* per reading, tr_step_sample_at() only */
    double wall_s;     /* the whole case */
    long live_bytes;   /* the step's row in a live summary (livesum.h) */
    double snap_us;    /* CPU of its local live snapshot (the baseline) */
    double live_us;    /* CPU of its live summary row and text */
};

/* Everything the benchmark creates, so that one cleanup undoes any
 * prefix of it.
 */
struct fixture {
    char dir[CG_COUNT][PATH_MAX]; /* "" when that hierarchy is absent */
    bool made[CG_COUNT];
    int procs_fd[CG_COUNT];
    char tooldir[PATH_MAX]; /* the tool copies; "" until made */
    int ncopies;
    pid_t idle[MAX_IDLE];
    int nidle;
    pid_t tool_pid[MAX_TOOLS]; /* 0: none running */
    tr_taskstats_t *ts;
    tr_step_t *step;
    long mine; /* process exits the step took */
    long started;
    char **tool_argv; /* the padded argument list (argv[0] set per tool) */
};

static volatile sig_atomic_t stop_signal;
static struct fixture fx;
static tr_conf_t *conf;

static void on_signal (int sig)
{
    stop_signal = sig;
}

static void usage (FILE *f)
{
    fprintf (f, "Usage: record-size [OPTIONS]\n"
                "Bytes of a step's record after 1 reading and after steps of\n"
                "the given lengths, read at simulated times, against the\n"
                "256 KiB target for seven days.\n"
                "\n"
                "  -d, --durations LIST  step times, comma separated, with s, "
                "m,\n"
                "                        h or d (default 1m,1h,7d)\n"
                "  -i, --interval SEC    seconds between readings (default:\n"
                "                        sampling.interval, 1)\n"
                "  -k, --tools K         distinct executables (default 70; "
                "the\n"
                "                        tool table keeps 64 and \"(other)\")\n"
                "  -p, --procs N         idle processes (default 4)\n"
                "  -c, --churn R         readings between one tool process\n"
                "                        ending and another starting "
                "(default 60)\n"
                "  -j, --json            print JSON instead of the table\n"
                "      --smoke           quick check: 1m,10m, 8 tools, churn "
                "10\n"
                "  -h, --help            this text\n"
                "\n"
                "Needs root (it creates cgroups); exits 77 otherwise.\n");
}

/* "90", "90s", "5m", "1h", "7d": seconds, at most a year. */
static int parse_duration (const char *s, long *out)
{
    char num[32];
    size_t len = strlen (s);
    long mult = 1, v;

    if (len == 0 || len >= sizeof (num))
        return -1;
    memcpy (num, s, len + 1);
    switch (num[len - 1]) {
    case 's':
        mult = 1;
        break;
    case 'm':
        mult = 60;
        break;
    case 'h':
        mult = 3600;
        break;
    case 'd':
        mult = 86400;
        break;
    default:
        len++;
        break;
    }
    num[len - 1] = '\0';
    if (bench_parse_long (num, 1, 366L * 86400 / mult, &v) < 0)
        return -1;
    *out = v * mult;
    return 0;
}

static int parse_durations (const char *s, struct options *o)
{
    char buf[256];
    char *p, *comma;

    if (snprintf (buf, sizeof (buf), "%s", s) >= (int)sizeof (buf))
        return -1;
    o->ncases = 0;
    for (p = buf; p; p = comma ? comma + 1 : NULL) {
        if ((comma = strchr (p, ',')))
            *comma = '\0';
        if (o->ncases == MAX_CASES
            || parse_duration (p, &o->seconds[o->ncases]) < 0)
            return -1;
        o->ncases++;
    }
    return 0;
}

static int parse_options (int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "durations", required_argument, NULL, 'd' },
        { "interval", required_argument, NULL, 'i' },
        { "tools", required_argument, NULL, 'k' },
        { "procs", required_argument, NULL, 'p' },
        { "churn", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "smoke", no_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    /* what was given explicitly wins over --smoke, in any order */
    bool set_d = false, set_k = false, set_c = false, set_p = false;
    char *end;
    long v;
    int c;

    *o = (struct options){ .seconds = { 60, 3600, TARGET_SECONDS },
                           .ncases = 3,
                           .tools = 70,
                           .idle = 4,
                           .churn = 60 };
    while ((c = getopt_long (argc, argv, "d:i:k:p:c:jh", longopts, NULL))
           != -1) {
        switch (c) {
        case 'd':
            if (parse_durations (optarg, o) < 0)
                goto bad;
            set_d = true;
            break;
        case 'i':
            errno = 0;
            o->interval = strtod (optarg, &end);
            if (errno || end == optarg || *end || !(o->interval >= 0.1)
                || o->interval > 3600)
                goto bad;
            break;
        case 'k':
            if (bench_parse_long (optarg, 1, MAX_TOOLS, &v) < 0)
                goto bad;
            o->tools = (int)v;
            set_k = true;
            break;
        case 'p':
            if (bench_parse_long (optarg, 1, MAX_IDLE, &v) < 0)
                goto bad;
            o->idle = (int)v;
            set_p = true;
            break;
        case 'c':
            if (bench_parse_long (optarg, 1, 1000000000, &o->churn) < 0)
                goto bad;
            set_c = true;
            break;
        case 'j':
            o->json = true;
            break;
        case 'S':
            o->smoke = true;
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
        fprintf (stderr, "record-size: unexpected argument '%s'\n",
                 argv[optind]);
        return -1;
    }
    if (o->smoke) {
        /* a few seconds: proves every part still runs */
        if (!set_d) {
            o->seconds[0] = 60;
            o->seconds[1] = 600;
            o->ncases = 2;
        }
        if (!set_k)
            o->tools = 8;
        if (!set_c)
            o->churn = 10;
        if (!set_p)
            o->idle = 2;
    }
    return 0;
bad:
    bench_bad_value ("record-size", longopts, c, optarg);
    return -1;
}

static double cpu_us_now (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void tool_name (int i, char *buf, size_t size)
{
    size_t n = sizeof (tool_names) / sizeof (tool_names[0]);

    if ((size_t)i < n)
        snprintf (buf, size, "%s", tool_names[i]);
    else
        snprintf (buf, size, "%s-%zu", tool_names[(size_t)i % n],
                  (size_t)i / n);
}

static const char *sleep_path (void)
{
    return access ("/bin/sleep", X_OK) == 0 ? "/bin/sleep" : "/usr/bin/sleep";
}

/* Copy src to dst, executable. */
static int copy_file (const char *src, const char *dst)
{
    char buf[65536];
    ssize_t n;
    int in, out, rc = -1;

    if ((in = open (src, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    if ((out = open (dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755)) < 0)
        goto out_in;
    while ((n = read (in, buf, sizeof (buf))) > 0)
        if (write (out, buf, (size_t)n) != n)
            goto out_out;
    rc = n < 0 ? -1 : 0;
out_out:
    if (close (out) < 0)
        rc = -1;
out_in:
    close (in);
    return rc;
}

/* One copy of sleep(1) per tool, so that every tool is an executable of
 * its own (the tool table groups by executable), and the argument list
 * they run with: "1000000" padded with "0" (sleep sums its arguments) to
 * the configured command-line length, as a real tool's long command line
 * would fill it.
 */
static int make_tools (int ntools)
{
    char path[PATH_MAX + 64], name[64];
    size_t len = 0, n = 2;

    snprintf (fx.tooldir, sizeof (fx.tooldir), "/tmp/tracer-recsize.XXXXXX");
    if (!mkdtemp (fx.tooldir)) {
        fprintf (stderr, "record-size: mkdtemp: %s\n", strerror (errno));
        fx.tooldir[0] = '\0';
        return -1;
    }
    for (int i = 0; i < ntools; i++) {
        tool_name (i, name, sizeof (name));
        snprintf (path, sizeof (path), "%s/%s", fx.tooldir, name);
        if (copy_file (sleep_path (), path) < 0) {
            fprintf (stderr, "record-size: copying %s to %s: %s\n",
                     sleep_path (), path, strerror (errno));
            return -1;
        }
        fx.ncopies++;
    }
    len = strlen ("python3.11 1000000");
    while (len + 2 <= (size_t)conf->cmdline_max)
        len += 2, n++;
    if (!(fx.tool_argv = calloc (n + 1, sizeof (*fx.tool_argv))))
        return -1;
    fx.tool_argv[1] = "1000000";
    for (size_t i = 2; i < n; i++)
        fx.tool_argv[i] = "0";
    return 0;
}

static int make_dirs (void)
{
    int found = 0;

    for (int i = 0; i < CG_COUNT; i++) {
        char mnt[PATH_MAX], path[PATH_MAX + 32];

        fx.dir[i][0] = '\0';
        fx.procs_fd[i] = -1;
        if (tr_cgroup_mountpoint (cg_ctrl[i], mnt, sizeof (mnt)) < 0)
            continue;
        if (snprintf (fx.dir[i], PATH_MAX, "%.4000s/tracer-recsize.%d", mnt,
                      (int)getpid ())
            >= PATH_MAX) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (mkdir (fx.dir[i], 0755) < 0 && errno != EEXIST) {
            fprintf (stderr, "record-size: mkdir %s: %s\n", fx.dir[i],
                     strerror (errno));
            return -1;
        }
        fx.made[i] = true;
        snprintf (path, sizeof (path), "%s/cgroup.procs", fx.dir[i]);
        if ((fx.procs_fd[i] = open (path, O_WRONLY | O_CLOEXEC)) < 0) {
            fprintf (stderr, "record-size: %s: %s\n", path, strerror (errno));
            return -1;
        }
        found++;
    }
    if (!found) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

/* Start a process in the step's cgroups: it moves itself there and
 * executes before spawn() returns (the close-on-exec pipe reads as EOF
 * then), so that the next reading finds it running its program.  It dies
 * with the benchmark even if the benchmark is killed with SIGKILL.  exe
 * NULL: an idle process (pause).
 */
static pid_t spawn (const char *exe, char **argv)
{
    pid_t parent = getpid ();
    int sync[2], err = 0;
    ssize_t n;
    pid_t pid;

    if (pipe2 (sync, O_CLOEXEC) < 0)
        return -1;
    if ((pid = fork ()) < 0) {
        close (sync[0]);
        close (sync[1]);
        return -1;
    }
    if (pid == 0) {
        close (sync[0]);
        signal (SIGINT, SIG_DFL);
        signal (SIGTERM, SIG_DFL);
        signal (SIGHUP, SIG_DFL);
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        if (getppid () != parent)
            _exit (0);
        for (int i = 0; i < CG_COUNT; i++)
            if (fx.procs_fd[i] >= 0 && write (fx.procs_fd[i], "0\n", 2) != 2) {
                err = errno;
                goto failed;
            }
        if (!exe) {
            close (sync[1]);
            for (;;)
                pause ();
        }
        execv (exe, argv);
        err = errno;
failed:
        if (write (sync[1], &err, sizeof (err)) < 0)
            _exit (127);
        _exit (127);
    }
    close (sync[1]);
    while ((n = read (sync[0], &err, sizeof (err))) < 0 && errno == EINTR)
        ;
    close (sync[0]);
    fx.started++;
    if (n > 0) {
        fprintf (stderr, "record-size: starting %s: %s\n",
                 exe ? exe : "an idle process", strerror (err));
        waitpid (pid, NULL, 0);
        errno = err;
        return -1;
    }
    return pid;
}

static pid_t spawn_tool (int i)
{
    char name[64], path[PATH_MAX + 64];

    tool_name (i, name, sizeof (name));
    snprintf (path, sizeof (path), "%s/%s", fx.tooldir, name);
    fx.tool_argv[0] = name;
    return spawn (path, fx.tool_argv);
}

static void reap (pid_t pid)
{
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

static void on_exit_event (const struct tr_exit *ev, void *arg)
{
    (void)arg;
    if (fx.step && tr_step_exit_event (fx.step, ev) == 1
        && ev->aggr == TR_EXIT_PID && ev->pid == ev->tgid)
        fx.mine++;
}

static void drain_exits (void)
{
    (void)tr_taskstats_read (fx.ts, on_exit_event, NULL);
}

/* Kill every process of the case and reap it. */
static void kill_all (void)
{
    for (int i = 0; i < MAX_TOOLS; i++)
        if (fx.tool_pid[i] > 0)
            kill (fx.tool_pid[i], SIGKILL);
    for (int i = 0; i < fx.nidle; i++)
        kill (fx.idle[i], SIGKILL);
    for (int i = 0; i < MAX_TOOLS; i++)
        if (fx.tool_pid[i] > 0) {
            reap (fx.tool_pid[i]);
            fx.tool_pid[i] = 0;
        }
    for (int i = 0; i < fx.nidle; i++)
        reap (fx.idle[i]);
    fx.nidle = 0;
}

/* Undo everything; -1 when something is left behind. */
static int cleanup (void)
{
    char path[PATH_MAX + 64], name[64];
    int rc = 0;

    tr_step_destroy (fx.step);
    fx.step = NULL;
    kill_all ();
    tr_taskstats_close (fx.ts);
    fx.ts = NULL;
    for (int i = CG_COUNT - 1; i >= 0; i--) {
        if (fx.procs_fd[i] >= 0)
            close (fx.procs_fd[i]);
        fx.procs_fd[i] = -1;
        if (!fx.made[i])
            continue;
        if (bench_cgroup_remove ("record-size", fx.dir[i]) < 0)
            rc = -1;
        fx.made[i] = false;
    }
    for (int i = 0; i < fx.ncopies; i++) {
        tool_name (i, name, sizeof (name));
        snprintf (path, sizeof (path), "%s/%s", fx.tooldir, name);
        unlink (path);
    }
    fx.ncopies = 0;
    if (fx.tooldir[0] && rmdir (fx.tooldir) < 0) {
        fprintf (stderr, "record-size: cannot remove %s: %s\n", fx.tooldir,
                 strerror (errno));
        rc = -1;
    }
    fx.tooldir[0] = '\0';
    free (fx.tool_argv);
    fx.tool_argv = NULL;
    return rc;
}

/* A Slurm step as the plugin describes one, configured as tracerd
 * configures a step from the configuration (taskstats on).
 */
static int make_step (double interval)
{
    struct tr_cgroup_paths p;
    struct tr_detail_opts opts = {
        .taskstats = true,
        .cmdline_max = (size_t)conf->cmdline_max,
        .proc_reads = (size_t)conf->proc_reads,
        .redact = conf->redact,
    };
    tr_error_t err = { 0 };
    json_t *id, *req, *tags;

    memset (&p, 0, sizeof (p));
    snprintf (p.memory, sizeof (p.memory), "%s", fx.dir[CG_MEMORY]);
    snprintf (p.cpuacct, sizeof (p.cpuacct), "%s", fx.dir[CG_CPUACCT]);
    snprintf (p.unified, sizeof (p.unified), "%s", fx.dir[CG_UNIFIED]);
    if (p.unified[0]) {
        p.unified_has_memory = bench_has_memory_controller (p.unified);
        /* the directory is the step's alone, as tracer's mirror is, so
         * its pressure files describe the step
         */
        p.unified_is_mirror = true;
    }
    id = json_pack ("{s:s s:s s:s s:s s:s s:i s:s s:s s:s s:s s:i}",
                    "scheduler", "slurm", "cluster", "bench", "job_id",
                    "4242424", "step_id", "0", "user", "alice", "uid", 1000,
                    "account", "proj1", "partition", "compute", "job_name",
                    "nf-NFCORE_RNASEQ_STAR_ALIGN_(sample3)", "node", "n001",
                    "node_index", 0);
    req = json_pack ("{s:s s:i s:I s:i s:i s:i s:i}", "cores", "0-1",
                     "cpus_per_task", 2, "mem_bytes", (json_int_t)8589934592LL,
                     "nodes", 1, "tasks", 1, "tasks_on_node", 1, "time_limit_s",
                     8 * 86400);
    tags = json_pack ("{s:s}", "project", "bench");
    if (id && req && tags)
        fx.step = tr_step_create (id, req, tags, "tracerd", interval);
    json_decref (id);
    json_decref (req);
    json_decref (tags);
    if (!fx.step) {
        fprintf (stderr, "record-size: step: %s\n", strerror (errno));
        return -1;
    }
    if (tr_step_configure (fx.step, &opts, &err) < 0
        || tr_step_attach_paths (fx.step, &p, &err) < 0) {
        fprintf (stderr, "record-size: step: %s\n", tr_error_str (&err));
        return -1;
    }
    return 0;
}

/* End the case as a step ends: kill its processes, feed their exits
 * from taskstats to the step (allowing three seconds for the events),
 * take the final reading.
 */
static int end_case (void)
{
    tr_error_t err = { 0 };
    double deadline;
    pid_t task0 = fx.idle[0];

    kill_all ();
    (void)tr_step_task_exit (fx.step, 0, task0, SIGKILL);
    deadline = tr_when_monotonic () + 3.0;
    while (fx.mine < fx.started && tr_when_monotonic () < deadline
           && !stop_signal) {
        struct pollfd pfd = { tr_taskstats_fd (fx.ts), POLLIN, 0 };
        if (tr_taskstats_read (fx.ts, on_exit_event, NULL) < 0
            || (poll (&pfd, 1, 100) < 0 && errno != EINTR))
            break;
    }
    tr_step_exits_lost (fx.step, tr_taskstats_lost (fx.ts));
    /* the final reading is on the real clock, as tracerd takes it; its
     * point joins the last simulated one
     */
    if (tr_step_finish (fx.step, &err) < 0) {
        fprintf (stderr, "record-size: final reading: %s\n",
                 tr_error_str (&err));
        return -1;
    }
    return 0;
}

/* A value of the size a busy step's metric has, spread evenly over the
 * decades (log-uniform), as tr_series_json rounds it.
 */
static double busy_value (const char *metric, unsigned long *seed)
{
    static const struct {
        const char *prefix;
        double lo, hi;
    } range[] = {
        { "cpu_cores", 0.01, 64 },  { "mem_bytes", 1e8, 1e11 },
        { "nprocs", 1, 1000 },      { "io_", 1e3, 1e9 },
        { "net_", 1e3, 1e9 },       { "psi_", 0.01, 100 },
    };
    double lo = 0.01, hi = 100, u;

    for (size_t i = 0; i < sizeof (range) / sizeof (range[0]); i++)
        if (!strncmp (metric, range[i].prefix, strlen (range[i].prefix))) {
            lo = range[i].lo;
            hi = range[i].hi;
            break;
        }
    *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
    u = (double)(*seed >> 11) / 9007199254740992.0;
    if (!strcmp (metric, "nprocs"))
        return round (lo * pow (hi / lo, u));
    return tr_series_round (lo * pow (hi / lo, u));
}

/* The record's bytes when every series value is a busy step's (the
 * simulated clock makes most rates zero, and zeros print short): the
 * same record with each value replaced.  An upper bound for real steps
 * of that length.
 */
static long dense_bytes (json_t *rec)
{
    json_t *copy = json_deep_copy (rec), *metrics, *stats, *arr, *el;
    unsigned long seed = 42;
    const char *metric, *stat;
    char *text;
    size_t i;
    long n;

    metrics = json_object_get (json_object_get (copy, "series"), "metrics");
    json_object_foreach (metrics, metric, stats)
    {
        json_object_foreach (stats, stat, arr)
        {
            json_array_foreach (arr, i, el)
            {
                json_real_set (el, busy_value (metric, &seed));
            }
        }
    }
    text = copy ? tr_record_dumps (copy) : NULL;
    n = text ? (long)strlen (text) : -1;
    free (text);
    json_decref (copy);
    return n;
}

/* The CPU a step costs tracerd each store.live_interval for its live
 * summary in the store (tr_step_live_record, its row, the text), against
 * what it costs each sampling.snapshot_interval already for the node's
 * own live snapshot (tr_step_snapshot_text), alternately, LIVE_ROUNDS
 * times each.
 */
#define LIVE_ROUNDS 20

static int measure_live (struct result *res)
{
    double snap = 0, lv = 0, c0;

    for (int k = 0; k < LIVE_ROUNDS; k++) {
        tr_strpool_t *pool = tr_strpool_create ();
        const tr_stepsum_t *v[1];
        tr_stepsum_t row;
        json_t *rec;
        char *text;

        c0 = cpu_us_now ();
        text = tr_step_snapshot_text (fx.step);
        snap += cpu_us_now () - c0;
        free (text);
        if (!text || !pool)
            goto nomem;
        c0 = cpu_us_now ();
        rec = tr_step_live_record (fx.step);
        if (!rec
            || tr_livesum_row (&row, rec, 1000.0 * (double)time (NULL), pool)
                   < 0) {
            json_decref (rec);
            tr_strpool_destroy (pool);
            goto nomem;
        }
        json_decref (rec);
        row.uid = 1000;
        v[0] = &row;
        text = tr_livesum_text (v, 1, row.cluster, row.node, 1000, row.live_ms,
                                30);
        lv += cpu_us_now () - c0;
        if (text && k == 0) {
            /* the row alone: the two header lines and #end are paid once
             * per file
             */
            const char *p = strchr (text, '\n');

            p = p ? strchr (p + 1, '\n') : NULL;
            res->live_bytes =
                p ? (long)(strlen (p + 1) - strlen ("#end\t1\n")) : -1;
        }
        free (text);
        tr_strpool_destroy (pool);
    }
    res->snap_us = snap / LIVE_ROUNDS;
    res->live_us = lv / LIVE_ROUNDS;
    return 0;
nomem:
    fprintf (stderr, "record-size: live summary: %s\n", strerror (errno));
    return -1;
}

static int measure (struct result *res)
{
    json_t *rec = tr_step_record (fx.step, "final"), *row, *procs;
    tr_error_t err = { 0 };
    char *text = NULL, *canon = NULL;
    size_t i;
    int rc = -1;

    if (!rec || tr_sign_mark_unsigned (rec, "synthetic benchmark record") < 0
        || !(text = tr_record_dumps (rec))
        || !(canon = tr_record_canonical (rec))) {
        fprintf (stderr, "record-size: building the record: %s\n",
                 strerror (errno));
        goto out;
    }
    res->bytes = (long)strlen (text);
    res->canonical = (long)strlen (canon);
    if ((res->dense = dense_bytes (rec)) < 0) {
        fprintf (stderr, "record-size: the busy record: %s\n",
                 strerror (errno));
        goto out;
    }
    res->points = (long)json_array_size (
        json_object_get (json_object_get (rec, "series"), "t_s"));
    res->tool_rows = (long)json_array_size (json_object_get (rec, "tools"));
    res->processes = 0;
    json_array_foreach (json_object_get (rec, "tools"), i, row)
    {
        json_t *count = json_object_get (row, "count");
        res->processes += (long)json_integer_value (count);
    }
    procs = json_object_get (json_object_get (rec, "summary"), "processes");
    res->complete = json_is_true (json_object_get (procs, "complete"));
    if (measure_live (res) < 0)
        goto out;
    res->valid = tr_record_validate (rec, &err) == 0;
    snprintf (res->invalid, sizeof (res->invalid), "%s",
              res->valid ? "" : tr_error_str (&err));
    rc = 0;
out:
    free (text);
    free (canon);
    json_decref (rec);
    return rc;
}

/* One case: a fresh step over readings readings, one interval apart on
 * the simulated clock, with a tool process replaced every churn
 * readings.
 */
static int run_case (const struct options *o,
                     double interval,
                     long seconds,
                     struct result *res)
{
    tr_error_t err = { 0 };
    double t0, wall0 = tr_when_monotonic (), cpu = 0, c0;
    long readings = seconds > 0 ? (long)((double)seconds / interval + 0.5) : 1;
    int next = 0;

    memset (res, 0, sizeof (*res));
    res->seconds = seconds;
    res->readings = readings < 1 ? 1 : readings;
    fx.mine = fx.started = 0;
    for (int i = 0; i < o->idle; i++) {
        if ((fx.idle[i] = spawn (NULL, NULL)) < 0)
            return -1;
        fx.nidle++;
    }
    for (int i = 0; i < o->tools; i++)
        if ((fx.tool_pid[i] = spawn_tool (i)) < 0)
            return -1;
    if (make_step (interval) < 0
        || tr_step_add_task (fx.step, 0, fx.idle[0]) < 0)
        return -1;
    t0 = tr_when_monotonic ();
    for (long r = 0; r < res->readings && !stop_signal; r++) {
        if (r > 0 && r % o->churn == 0) {
            /* one process ends, another of the same tool starts */
            kill (fx.tool_pid[next], SIGKILL);
            reap (fx.tool_pid[next]);
            if ((fx.tool_pid[next] = spawn_tool (next)) < 0)
                return -1;
            next = (next + 1) % o->tools;
            drain_exits ();
        }
        c0 = cpu_us_now ();
        if (tr_step_sample_at (fx.step, t0 + (double)r * interval, &err) < 0) {
            fprintf (stderr, "record-size: reading %ld: %s\n", r,
                     tr_error_str (&err));
            return -1;
        }
        cpu += cpu_us_now () - c0;
    }
    if (stop_signal)
        return -1;
    res->cpu_us = cpu / (double)res->readings;
    res->started = fx.started;
    if (end_case () < 0 || measure (res) < 0)
        return -1;
    tr_step_destroy (fx.step);
    fx.step = NULL;
    res->wall_s = tr_when_monotonic () - wall0;
    return 0;
}

static void label (long seconds, char *buf, size_t size)
{
    if (seconds == 0)
        snprintf (buf, size, "1 reading");
    else if (seconds % 86400 == 0)
        snprintf (buf, size, "%ld d", seconds / 86400);
    else if (seconds % 3600 == 0)
        snprintf (buf, size, "%ld h", seconds / 3600);
    else if (seconds % 60 == 0)
        snprintf (buf, size, "%ld min", seconds / 60);
    else
        snprintf (buf, size, "%ld s", seconds);
}

static void print_table (const struct bench_machine *m,
                         const struct options *o,
                         double interval,
                         const struct result *res,
                         int nres)
{
    char l[32];

    printf ("tracer %s record size: bytes of a step's record by step "
            "length\n",
            PACKAGE_VERSION);
    printf ("machine: %ld CPUs, %s, %s\n", m->ncpu, m->model, m->kernel);
    printf ("step: %d idle processes and %d tools (copies of sleep), one "
            "tool process\n"
            "replaced every %ld readings; readings %g s apart on a "
            "simulated clock;\n"
            "taskstats on, sampling.proc_reads %g, cmdline_max %g; record "
            "as the store\n"
            "writes it (tr_record_dumps), unsigned; target %d KiB at 7 "
            "days\n\n",
            o->idle, o->tools, o->churn, interval, conf->proc_reads,
            conf->cmdline_max, TARGET_BYTES / 1024);
    printf ("%-10s %8s %7s %6s %6s %9s %8s %7s %7s %9s %7s %9s %6s\n",
            "step", "readings", "series", "tool", "procs", "bytes", "KiB",
            "/1 read", "/target", "busy", "/target", "canonical", "CPU us");
    printf ("%-10s %8s %7s %6s %6s %9s %8s %7s %7s %9s %7s %9s %6s\n",
            "time", "", "points", "rows", "", "", "", "", "", "bytes", "",
            "bytes", "/read");
    for (int i = 0; i < nres; i++) {
        const struct result *r = &res[i];
        label (r->seconds, l, sizeof (l));
        printf ("%-10s %8ld %7ld %6ld %6ld %9ld %8.1f %7.2f %7.3f %9ld "
                "%7.3f %9ld %6.1f%s\n",
                l, r->readings, r->points, r->tool_rows, r->processes, r->bytes,
                (double)r->bytes / 1024.0,
                (double)r->bytes / (double)res[0].bytes,
                (double)r->bytes / TARGET_BYTES, r->dense,
                (double)r->dense / TARGET_BYTES, r->canonical, r->cpu_us,
                r->valid ? "" : "  INVALID");
    }
    printf ("\nlive summary in the store (store.live_interval), per running "
            "step,\nagainst the node's own live snapshot "
            "(sampling.snapshot_interval):\n");
    printf ("%-10s %9s %9s %9s %7s\n", "step", "row", "summary", "snapshot",
            "ratio");
    printf ("%-10s %9s %9s %9s %7s\n", "time", "bytes", "CPU us", "CPU us", "");
    for (int i = 0; i < nres; i++) {
        const struct result *r = &res[i];

        label (r->seconds, l, sizeof (l));
        printf ("%-10s %9ld %9.1f %9.1f %7.3f\n", l, r->live_bytes, r->live_us,
                r->snap_us, r->snap_us > 0 ? r->live_us / r->snap_us : NAN);
    }
    for (int i = 0; i < nres; i++)
        if (!res[i].valid) {
            label (res[i].seconds, l, sizeof (l));
            printf ("%s: the record does not validate: %s\n", l,
                    res[i].invalid);
        }
}

static int print_json (const struct bench_machine *m,
                       const struct options *o,
                       double interval,
                       const struct result *res,
                       int nres)
{
    json_t *cases = json_array (), *top;
    char *s, l[32];

    for (int i = 0; cases && i < nres; i++) {
        const struct result *r = &res[i];
        json_t *c;
        label (r->seconds, l, sizeof (l));
        c = json_pack ("{s:s s:I s:I s:I s:I s:I s:f s:f s:f s:I s:I s:I s:I "
                       "s:b s:b s:f s:f}",
                       "step", l, "step_s", (json_int_t)r->seconds, "readings",
                       (json_int_t)r->readings, "bytes", (json_int_t)r->bytes,
                       "canonical_bytes", (json_int_t)r->canonical,
                       "busy_bytes", (json_int_t)r->dense, "ratio_busy_target",
                       (double)r->dense / TARGET_BYTES,
                       "ratio_baseline",
                       (double)r->bytes / (double)res[0].bytes, "ratio_target",
                       (double)r->bytes / TARGET_BYTES, "series_points",
                       (json_int_t)r->points, "tool_rows",
                       (json_int_t)r->tool_rows, "processes",
                       (json_int_t)r->processes, "processes_started",
                       (json_int_t)r->started, "processes_complete",
                       r->complete, "valid", r->valid, "cpu_us_per_reading",
                       r->cpu_us, "wall_s", r->wall_s);
        if (c
            && (json_object_set_new (c, "live_row_bytes",
                                     json_integer (r->live_bytes))
                    < 0
                || json_object_set_new (c, "live_summary_cpu_us",
                                        json_real (r->live_us))
                       < 0
                || json_object_set_new (c, "live_snapshot_cpu_us",
                                        json_real (r->snap_us))
                       < 0)) {
            json_decref (c);
            c = NULL;
        }
        if (!c || json_array_append_new (cases, c) < 0) {
            json_decref (cases);
            cases = NULL;
        }
    }
    if (!cases)
        return -1;
    top = json_pack ("{s:s s:s s:{s:I s:s s:s} s:i s:f s:i s:i s:I s:b s:o}",
                     "benchmark", "record-size", "version", PACKAGE_VERSION,
                     "machine", "cpus", (json_int_t)m->ncpu, "model", m->model,
                     "kernel", m->kernel, "target_bytes", TARGET_BYTES,
                     "interval_s", interval, "tools", o->tools,
                     "idle_processes", o->idle, "churn_readings",
                     (json_int_t)o->churn, "smoke", o->smoke, "cases", cases);
    if (!top || !(s = json_dumps (top, JSON_INDENT (2)))) {
        json_decref (top);
        return -1;
    }
    printf ("%s\n", s);
    free (s);
    json_decref (top);
    return 0;
}

int main (int argc, char **argv)
{
    struct options o;
    struct bench_machine m;
    struct result res[MAX_CASES + 1];
    tr_error_t err = { 0 };
    double interval;
    int nres = 0, rc = 1;

    if (parse_options (argc, argv, &o) < 0)
        return 2;
    if ((rc = bench_preflight ("record-size", "create cgroups and read "
                                              "taskstats"))
        != 0)
        return rc;
    rc = 1;
    for (int i = 0; i < CG_COUNT; i++)
        fx.procs_fd[i] = -1;
    if (bench_install_handlers (on_signal) < 0 || !(conf = tr_conf_create ())) {
        fprintf (stderr, "record-size: %s\n", strerror (errno));
        return 1;
    }
    interval = o.interval > 0 ? o.interval : conf->interval_s;
    bench_machine_describe (&m);
    if (!(fx.ts = tr_taskstats_open (&err))) {
        fprintf (stderr, "record-size: taskstats: %s\n", tr_error_str (&err));
        goto out;
    }
    if (make_tools (o.tools) < 0 || make_dirs () < 0)
        goto out;
    /* the baseline first: the same set-up after one reading */
    if (run_case (&o, interval, 0, &res[nres]) < 0)
        goto out;
    nres++;
    for (int i = 0; i < o.ncases; i++) {
        if (run_case (&o, interval, o.seconds[i], &res[nres]) < 0)
            goto out;
        nres++;
    }
    if (!o.json)
        print_table (&m, &o, interval, res, nres);
    else if (print_json (&m, &o, interval, res, nres) < 0) {
        fprintf (stderr, "record-size: JSON output: %s\n", strerror (errno));
        goto out;
    }
    rc = 0;
out:
    if (cleanup () < 0 && rc == 0)
        rc = 1;
    tr_conf_destroy (conf);
    if (stop_signal) {
        /* everything is cleaned up: die of the signal as asked */
        fflush (stdout);
        signal (stop_signal, SIG_DFL);
        raise (stop_signal);
        return 128 + stop_signal;
    }
    return rc;
}
