/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * textfile-scale: what node_exporter's textfile (daemon.textfile_dir)
 * costs a node, and what a centre of such nodes sends Prometheus.  K
 * steps run on this node, each in cgroup directories of its own with P
 * processes of a few distinct tools, read with tr_step_sample_at() one
 * sampling.interval apart on a simulated clock.  Per store.live_interval
 * the benchmark makes, in alternate rounds, what tracerd makes
 * (collector/forward.c and textfile.c): each step's live record, its
 * live row and its textfile entry, the text (tr_openmetrics_text) and
 * the file (tr_openmetrics_write into a directory of its own), against
 * the baseline of the same run: sampling the same steps for one
 * store.live_interval, which the daemon does whether the file is
 * written or not.  Needs root: it makes cgroups named
 * tracer-textfile.<pid> and removes them, with its processes and tool
 * copies, on every exit path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common.h"
#include "libtracer/conf/conf.h"
#include "libtracer/node/cgroup.h"
#include "libtracer/node/detail.h"
#include "libtracer/node/sampler.h"
#include "libtracer/record/livesum.h"
#include "libtracer/record/openmetrics.h"
#include "libtracer/util/error.h"
#include "libtracer/util/strbuf.h"

enum {
    MAX_CASES = 8,
    MAX_STEPS = 256,
    MAX_PROCS = 32,
    NTOOLS = 6,
};

enum cg_index { CG_MEMORY, CG_CPUACCT, CG_UNIFIED, CG_COUNT };

static const char *cg_ctrl[CG_COUNT] = { "memory", "cpuacct", NULL };

/* the tools of a busy node's steps, one copy of sleep(1) each */
static const char *const tool_names[NTOOLS] = {
    "STAR", "samtools", "python3.11", "java", "bwa-mem2", "gmx_mpi",
};

/* job names as the workflow managers and people make them */
static const char *const job_names[] = {
    "nf-NFCORE_RNASEQ_STAR_ALIGN_(sample3)",
    "snakejob.call_variants.117.sh",
    "train_model_4",
    "nf-FASTQC_(sample12)",
    "cp2k_relax",
    "run.sh",
};

struct options {
    long steps[MAX_CASES]; /* running steps on the node, per case */
    int ncases;
    int procs;        /* processes per step */
    int rounds;       /* alternate rounds of baseline and textfile */
    long nodes;       /* the centre, for the projection */
    double scrape;    /* Prometheus' scrape interval; 0: store.live_interval */
    const char *file; /* --file: the last case's text written here */
    bool smoke;
};

struct result {
    long steps;
    long procs;       /* running in all */
    long bytes;       /* of the file */
    long series;      /* sample lines */
    long families;    /* metric names with a sample */
    double sample_us; /* baseline: sampling every step for an interval */
    double rows_us;   /* live records, rows, textfile entries */
    double text_us;   /* tr_openmetrics_text */
    double write_us;  /* tr_openmetrics_write */
    double write_wall_us;
};

struct fixture {
    char parent[CG_COUNT][PATH_MAX]; /* "" when that hierarchy is absent */
    bool parent_made[CG_COUNT];
    char dir[MAX_STEPS][CG_COUNT][PATH_MAX + 32];
    bool made[MAX_STEPS][CG_COUNT];
    char tooldir[PATH_MAX];
    int ncopies;
    char textdir[PATH_MAX + 32]; /* the textfile directory, "" until made */
    pid_t *pids;
    long npids;
    tr_step_t *step[MAX_STEPS];
    int nsteps;
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
    fprintf (f, "Usage: textfile-scale [OPTIONS]\n"
                "The CPU and bytes of node_exporter's textfile "
                "(daemon.textfile_dir)\nper node and store.live_interval, "
                "against sampling the same steps\nfor that interval, and what "
                "a centre of such nodes sends Prometheus.\n"
                "\n"
                "  -s, --steps LIST      running steps on the node, comma "
                "separated\n"
                "                        (default 1,8,64)\n"
                "  -p, --procs N         processes per step (default 4)\n"
                "  -r, --rounds N        alternate rounds (default 5)\n"
                "  -n, --nodes N         nodes of the centre (default 1000)\n"
                "      --scrape SEC      Prometheus' scrape interval "
                "(default:\n"
                "                        store.live_interval, 30)\n"
                "      --file PATH       copy the last case's file to PATH\n"
                "      --smoke           quick check: -s 1,4 -p 2 -r 2\n"
                "  -h, --help            this text\n"
                "\n"
                "Needs root (it creates cgroups); exits 77 otherwise.\n");
}

static int parse_steps (const char *s, struct options *o)
{
    char buf[256], *save = NULL, *tok;

    if (snprintf (buf, sizeof (buf), "%s", s) >= (int)sizeof (buf))
        return -1;
    o->ncases = 0;
    for (tok = strtok_r (buf, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        if (o->ncases == MAX_CASES
            || bench_parse_long (tok, 1, MAX_STEPS, &o->steps[o->ncases]) < 0)
            return -1;
        o->ncases++;
    }
    return o->ncases > 0 ? 0 : -1;
}

static int parse_options (int argc, char **argv, struct options *o)
{
    enum { OPT_SMOKE = 256, OPT_SCRAPE, OPT_FILE };
    static const struct option longopts[] = {
        { "steps", required_argument, NULL, 's' },
        { "procs", required_argument, NULL, 'p' },
        { "rounds", required_argument, NULL, 'r' },
        { "nodes", required_argument, NULL, 'n' },
        { "scrape", required_argument, NULL, OPT_SCRAPE },
        { "file", required_argument, NULL, OPT_FILE },
        { "smoke", no_argument, NULL, OPT_SMOKE },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool set_s = false, set_p = false, set_r = false;
    char *end;
    long v;
    int c;

    *o = (struct options){ .steps = { 1, 8, 64 },
                           .ncases = 3,
                           .procs = 4,
                           .rounds = 5,
                           .nodes = 1000 };
    while ((c = getopt_long (argc, argv, "s:p:r:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_steps (optarg, o) < 0)
                goto bad;
            set_s = true;
            break;
        case 'p':
            if (bench_parse_long (optarg, 1, MAX_PROCS, &v) < 0)
                goto bad;
            o->procs = (int)v;
            set_p = true;
            break;
        case 'r':
            if (bench_parse_long (optarg, 1, 1000, &v) < 0)
                goto bad;
            o->rounds = (int)v;
            set_r = true;
            break;
        case 'n':
            if (bench_parse_long (optarg, 1, 10000000, &o->nodes) < 0)
                goto bad;
            break;
        case OPT_SCRAPE:
            errno = 0;
            o->scrape = strtod (optarg, &end);
            if (errno || end == optarg || *end || !(o->scrape >= 1)
                || o->scrape > 86400)
                goto bad;
            break;
        case OPT_FILE:
            o->file = optarg;
            break;
        case OPT_SMOKE:
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
        fprintf (stderr, "textfile-scale: unexpected argument '%s'\n",
                 argv[optind]);
        return -1;
    }
    if (o->smoke) {
        if (!set_s) {
            o->steps[0] = 1;
            o->steps[1] = 4;
            o->ncases = 2;
        }
        if (!set_p)
            o->procs = 2;
        if (!set_r)
            o->rounds = 2;
    }
    return 0;
bad:
    bench_bad_value ("textfile-scale", longopts, c, optarg);
    return -1;
}

static double cpu_us_now (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double wall_us_now (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static const char *sleep_path (void)
{
    return access ("/bin/sleep", X_OK) == 0 ? "/bin/sleep" : "/usr/bin/sleep";
}

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

/* The tool copies and the textfile directory, under one temporary
 * directory.
 */
static int make_files (void)
{
    char path[PATH_MAX + 64];

    snprintf (fx.tooldir, sizeof (fx.tooldir), "/tmp/tracer-textfile.XXXXXX");
    if (!mkdtemp (fx.tooldir)) {
        fprintf (stderr, "textfile-scale: mkdtemp: %s\n", strerror (errno));
        fx.tooldir[0] = '\0';
        return -1;
    }
    for (int i = 0; i < NTOOLS; i++) {
        snprintf (path, sizeof (path), "%s/%s", fx.tooldir, tool_names[i]);
        if (copy_file (sleep_path (), path) < 0) {
            fprintf (stderr, "textfile-scale: copying %s to %s: %s\n",
                     sleep_path (), path, strerror (errno));
            return -1;
        }
        fx.ncopies++;
    }
    snprintf (fx.textdir, sizeof (fx.textdir), "%s/textfile", fx.tooldir);
    if (mkdir (fx.textdir, 0755) < 0) {
        fprintf (stderr, "textfile-scale: mkdir %s: %s\n", fx.textdir,
                 strerror (errno));
        fx.textdir[0] = '\0';
        return -1;
    }
    return 0;
}

static int make_parents (void)
{
    int found = 0;

    for (int i = 0; i < CG_COUNT; i++) {
        char mnt[PATH_MAX];

        fx.parent[i][0] = '\0';
        if (tr_cgroup_mountpoint (cg_ctrl[i], mnt, sizeof (mnt)) < 0)
            continue;
        if (snprintf (fx.parent[i], PATH_MAX, "%.4000s/tracer-textfile.%d", mnt,
                      (int)getpid ())
            >= PATH_MAX) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (mkdir (fx.parent[i], 0755) < 0) {
            fprintf (stderr, "textfile-scale: mkdir %s: %s\n", fx.parent[i],
                     strerror (errno));
            fx.parent[i][0] = '\0';
            return -1;
        }
        fx.parent_made[i] = true;
        found++;
    }
    if (!found) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

/* A process of step s running tool t (sleep), or idle (t < 0), moved
 * into the step's directories before it executes.  It dies with the
 * benchmark even when the benchmark is killed with SIGKILL.
 */
static pid_t spawn (int s, int t)
{
    pid_t parent = getpid ();
    int sync[2], err = 0;
    char exe[PATH_MAX + 64];
    char *argv[] = { NULL, "1000000", NULL };
    ssize_t n;
    pid_t pid;

    if (t >= 0) {
        snprintf (exe, sizeof (exe), "%s/%s", fx.tooldir, tool_names[t]);
        argv[0] = (char *)tool_names[t];
    }
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
        for (int i = 0; i < CG_COUNT; i++) {
            char path[PATH_MAX + 64];
            int fd;

            if (!fx.made[s][i])
                continue;
            snprintf (path, sizeof (path), "%s/cgroup.procs", fx.dir[s][i]);
            if ((fd = open (path, O_WRONLY | O_CLOEXEC)) < 0
                || write (fd, "0\n", 2) != 2) {
                err = errno;
                goto failed;
            }
            close (fd);
        }
        if (t < 0) {
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
    if (n > 0) {
        fprintf (stderr, "textfile-scale: starting a process: %s\n",
                 strerror (err));
        waitpid (pid, NULL, 0);
        errno = err;
        return -1;
    }
    return pid;
}

/* Step s as the plugin describes one, configured as tracerd configures
 * a step (taskstats on, sampling.stall_after), attached to its own
 * directories.
 */
static int make_step (int s, double interval)
{
    struct tr_cgroup_paths p;
    struct tr_detail_opts opts = {
        .taskstats = true,
        .cmdline_max = (size_t)conf->cmdline_max,
        .proc_reads = (size_t)conf->proc_reads,
        .redact = conf->redact,
    };
    static const char *const parts[] = { "cpu", "cpu", "short", "bigmem" };
    tr_error_t err = { 0 };
    char job[32], user[32], account[32];
    json_t *id, *req, *tags;

    for (int i = 0; i < CG_COUNT; i++) {
        if (!fx.parent[i][0])
            continue;
        snprintf (fx.dir[s][i], sizeof (fx.dir[s][i]), "%s/step%d",
                  fx.parent[i], s);
        if (mkdir (fx.dir[s][i], 0755) < 0) {
            fprintf (stderr, "textfile-scale: mkdir %s: %s\n", fx.dir[s][i],
                     strerror (errno));
            return -1;
        }
        fx.made[s][i] = true;
    }
    memset (&p, 0, sizeof (p));
    snprintf (p.memory, sizeof (p.memory), "%s", fx.dir[s][CG_MEMORY]);
    snprintf (p.cpuacct, sizeof (p.cpuacct), "%s", fx.dir[s][CG_CPUACCT]);
    snprintf (p.unified, sizeof (p.unified), "%s", fx.dir[s][CG_UNIFIED]);
    if (p.unified[0]) {
        p.unified_has_memory = bench_has_memory_controller (p.unified);
        /* the step's own directory, as tracer's mirror is */
        p.unified_is_mirror = true;
    }
    snprintf (job, sizeof (job), "%d", 4242000 + s);
    snprintf (user, sizeof (user), "user%03d", s % 5);
    snprintf (account, sizeof (account), "proj%02d", s % 3);
    id = json_pack (
        "{s:s s:s s:s s:s s:s s:i s:s s:s s:s s:s s:i}", "scheduler", "slurm",
        "cluster", "centre", "job_id", job, "step_id", s % 2 ? "batch" : "0",
        "user", user, "uid", 10000 + s % 5, "account", account, "partition",
        parts[s % 4], "job_name",
        job_names[(size_t)s % (sizeof (job_names) / sizeof (job_names[0]))],
        "node", "cn0421", "node_index", 0);
    req = json_pack ("{s:s s:i s:I s:i s:i s:i s:i}", "cores", "0-3",
                     "cpus_per_task", 4, "mem_bytes", (json_int_t)17179869184LL,
                     "nodes", 1, "tasks", 1, "tasks_on_node", 1, "time_limit_s",
                     86400);
    tags = json_object ();
    if (id && req && tags)
        fx.step[s] = tr_step_create (id, req, tags, "tracerd", interval);
    json_decref (id);
    json_decref (req);
    json_decref (tags);
    if (!fx.step[s]) {
        fprintf (stderr, "textfile-scale: step: %s\n", strerror (errno));
        return -1;
    }
    fx.nsteps = s + 1;
    if (tr_step_configure (fx.step[s], &opts, &err) < 0
        || tr_step_attach_paths (fx.step[s], &p, &err) < 0) {
        fprintf (stderr, "textfile-scale: step: %s\n", tr_error_str (&err));
        return -1;
    }
    /* watched for stalls, as tracerd watches every step by default */
    tr_step_set_stall_after (fx.step[s], conf->stall_after_s);
    return 0;
}

static void reap (pid_t pid)
{
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* The case's steps, processes and directories gone; -1 when something
 * is left behind.
 */
static int end_case (void)
{
    int rc = 0;

    for (int s = 0; s < fx.nsteps; s++) {
        tr_step_destroy (fx.step[s]);
        fx.step[s] = NULL;
    }
    for (long i = 0; i < fx.npids; i++)
        kill (fx.pids[i], SIGKILL);
    for (long i = 0; i < fx.npids; i++)
        reap (fx.pids[i]);
    fx.npids = 0;
    for (int s = 0; s < MAX_STEPS; s++)
        for (int i = CG_COUNT - 1; i >= 0; i--) {
            if (!fx.made[s][i])
                continue;
            if (bench_cgroup_remove ("textfile-scale", fx.dir[s][i]) < 0)
                rc = -1;
            fx.made[s][i] = false;
        }
    fx.nsteps = 0;
    return rc;
}

static int cleanup (void)
{
    char path[PATH_MAX + 64];
    int rc = end_case ();

    for (int i = CG_COUNT - 1; i >= 0; i--) {
        if (!fx.parent_made[i])
            continue;
        if (bench_cgroup_remove ("textfile-scale", fx.parent[i]) < 0)
            rc = -1;
        fx.parent_made[i] = false;
    }
    if (fx.textdir[0]) {
        snprintf (path, sizeof (path), "%s/%s", fx.textdir,
                  TR_OPENMETRICS_FILE);
        unlink (path);
        if (rmdir (fx.textdir) < 0) {
            fprintf (stderr, "textfile-scale: cannot remove %s: %s\n",
                     fx.textdir, strerror (errno));
            rc = -1;
        }
        fx.textdir[0] = '\0';
    }
    for (int i = 0; i < fx.ncopies; i++) {
        snprintf (path, sizeof (path), "%s/%s", fx.tooldir, tool_names[i]);
        unlink (path);
    }
    fx.ncopies = 0;
    if (fx.tooldir[0] && rmdir (fx.tooldir) < 0) {
        fprintf (stderr, "textfile-scale: cannot remove %s: %s\n", fx.tooldir,
                 strerror (errno));
        rc = -1;
    }
    fx.tooldir[0] = '\0';
    free (fx.pids);
    fx.pids = NULL;
    return rc;
}

/* One sampling pass over every step at simulated time t. */
static int sample_all (double t)
{
    tr_error_t err = { 0 };

    for (int s = 0; s < fx.nsteps; s++)
        if (tr_step_sample_at (fx.step[s], t, &err) < 0) {
            fprintf (stderr, "textfile-scale: reading: %s\n",
                     tr_error_str (&err));
            return -1;
        }
    return 0;
}

/* What tracerd does for the textfile each store.live_interval
 * (tracerd_forward_live_pass, tracerd_textfile_write), timed in three
 * parts.  The text is left in sb.
 */
static int textfile_pass (tr_strbuf_t *sb, struct result *acc)
{
    struct tr_openmetrics_step om[MAX_STEPS];
    tr_stepsum_t rows[MAX_STEPS];
    tr_strpool_t *pool = tr_strpool_create ();
    struct timespec ts;
    double now_ms, c0, w0;
    tr_error_t err = { 0 };
    int rc = -1;

    if (!pool)
        goto out;
    c0 = cpu_us_now ();
    clock_gettime (CLOCK_REALTIME, &ts);
    now_ms = 1000.0 * (double)ts.tv_sec + (double)ts.tv_nsec / 1e6;
    for (int s = 0; s < fx.nsteps; s++) {
        json_t *rec = tr_step_live_record (fx.step[s]);

        if (!rec || tr_livesum_row (&rows[s], rec, now_ms, pool) < 0) {
            json_decref (rec);
            goto out;
        }
        tr_openmetrics_step (&om[s], &rows[s], rec);
        json_decref (rec);
    }
    acc->rows_us += cpu_us_now () - c0;
    c0 = cpu_us_now ();
    sb->len = 0;
    if (tr_openmetrics_text (sb, om, (size_t)fx.nsteps) < 0)
        goto out;
    acc->text_us += cpu_us_now () - c0;
    c0 = cpu_us_now ();
    w0 = wall_us_now ();
    if (tr_openmetrics_write (fx.textdir, sb->buf, sb->len, &err) < 0) {
        fprintf (stderr, "textfile-scale: %s\n", tr_error_str (&err));
        goto out;
    }
    acc->write_us += cpu_us_now () - c0;
    acc->write_wall_us += wall_us_now () - w0;
    rc = 0;
out:
    if (rc < 0 && errno == ENOMEM)
        fprintf (stderr, "textfile-scale: %s\n", strerror (errno));
    tr_strpool_destroy (pool);
    return rc;
}

/* Sample lines and families of the text. */
static void count_text (const char *text, struct result *res)
{
    const char *p = text;

    res->series = res->families = 0;
    while (*p) {
        const char *nl = strchr (p, '\n');

        if (!strncmp (p, "# TYPE ", 7))
            res->families++;
        else if (*p != '#')
            res->series++;
        p = nl ? nl + 1 : p + strlen (p);
    }
}

static int save_text (const char *path, const char *text, size_t len)
{
    FILE *f = fopen (path, "w");

    if (!f || fwrite (text, 1, len, f) != len || fclose (f) != 0) {
        fprintf (stderr, "textfile-scale: %s: %s\n", path, strerror (errno));
        if (f)
            fclose (f);
        return -1;
    }
    return 0;
}

static int run_case (const struct options *o,
                     long nsteps,
                     double interval,
                     double live,
                     struct result *res)
{
    long per_interval = (long)(live / interval + 0.5);
    tr_strbuf_t sb = TR_STRBUF_INIT;
    double t = 0, c0;
    int rc = -1;

    memset (res, 0, sizeof (*res));
    res->steps = nsteps;
    if (!(fx.pids = realloc (fx.pids,
                             (size_t)(nsteps * o->procs) * sizeof (*fx.pids))))
        return -1;
    for (int s = 0; s < nsteps; s++) {
        if (make_step (s, interval) < 0)
            return -1;
        /* task 0 idles, the others run tools, as a pipeline step's do */
        for (int i = 0; i < o->procs; i++) {
            pid_t pid = spawn (s, i == 0 ? -1 : (s + i) % NTOOLS);

            if (pid < 0)
                return -1;
            fx.pids[fx.npids++] = pid;
            if (i == 0 && tr_step_add_task (fx.step[s], 0, pid) < 0)
                return -1;
        }
    }
    res->procs = fx.npids;
    /* a live interval of readings first: the steps have a series, rows
     * and rates, as steps that have run a while have
     */
    for (long r = 0; r < per_interval; r++, t += interval)
        if (sample_all (t) < 0)
            goto out;
    /* and one untimed pass, so that no first-use cost is counted */
    if (textfile_pass (&sb, &(struct result){ 0 }) < 0)
        goto out;
    for (int k = 0; k < o->rounds && !stop_signal; k++) {
        c0 = cpu_us_now ();
        for (long r = 0; r < per_interval; r++, t += interval)
            if (sample_all (t) < 0)
                goto out;
        res->sample_us += cpu_us_now () - c0;
        if (textfile_pass (&sb, res) < 0)
            goto out;
    }
    if (stop_signal)
        goto out;
    res->sample_us /= o->rounds;
    res->rows_us /= o->rounds;
    res->text_us /= o->rounds;
    res->write_us /= o->rounds;
    res->write_wall_us /= o->rounds;
    res->bytes = (long)sb.len;
    if (sb.buf)
        count_text (sb.buf, res);
    if (o->file && sb.buf && save_text (o->file, sb.buf, sb.len) < 0)
        goto out;
    rc = 0;
out:
    tr_strbuf_free (&sb);
    if (end_case () < 0)
        rc = -1;
    return rc;
}

static void print_table (const struct bench_machine *m,
                         const struct options *o,
                         double interval,
                         double live,
                         const struct result *res,
                         int n)
{
    double scrape = o->scrape > 0 ? o->scrape : live;

    printf ("tracer textfile scale: node_exporter's textfile "
            "(daemon.textfile_dir)\n");
    printf ("machine: %ld CPUs, %s, %s\n", m->ncpu, m->model, m->kernel);
    printf ("sampling.interval %g s, store.live_interval %g s; %d "
            "processes a step (%d of them tools), %d rounds\n",
            interval, live, o->procs, o->procs - 1, o->rounds);
    printf ("\nper node and store.live_interval (CPU us; baseline: "
            "sampling the same steps for the interval):\n");
    printf ("%5s %5s %7s %6s %8s %8s %7s %7s %7s %7s %7s %8s\n", "steps",
            "procs", "bytes", "series", "sampling", "rows", "text", "write",
            "file", "x_file", "x_all", "%core");
    for (int i = 0; i < n; i++) {
        const struct result *r = &res[i];
        double file = r->text_us + r->write_us;
        double all = r->rows_us + file;

        printf ("%5ld %5ld %7ld %6ld %8.0f %8.1f %7.1f %7.1f %7.1f %7.4f "
                "%7.4f %8.5f\n",
                r->steps, r->procs, r->bytes, r->series, r->sample_us,
                r->rows_us, r->text_us, r->write_us, file,
                r->sample_us > 0 ? file / r->sample_us : 0.0,
                r->sample_us > 0 ? all / r->sample_us : 0.0,
                100.0 * all / (live * 1e6));
    }
    printf ("\nrows: each step's live record, live row and textfile entry "
            "(the live\nsummaries in the store make the same rows); text: "
            "tr_openmetrics_text;\nwrite: tr_openmetrics_write (%.0f us "
            "wall in the last case); file: text +\nwrite; x_file: file / "
            "sampling; x_all: (rows + file) / sampling; %%core:\nrows + "
            "file over the interval, in per cent of one core\n",
            n > 0 ? res[n - 1].write_wall_us : 0.0);
    printf ("\n%ld nodes, every node with the same steps, files rewritten "
            "every %g s,\nscraped every %g s:\n",
            o->nodes, live, scrape);
    printf ("%6s %12s %14s %14s %14s %12s\n", "steps", "series", "written B/s",
            "scraped B/s", "samples/s", "B/scrape");
    for (int i = 0; i < n; i++) {
        const struct result *r = &res[i];
        double series = (double)r->series * (double)o->nodes;
        double bytes = (double)r->bytes * (double)o->nodes;

        printf ("%6ld %12.0f %14.0f %14.0f %14.0f %12.0f\n", r->steps, series,
                bytes / live, bytes / scrape, series / scrape, bytes);
    }
}

int main (int argc, char **argv)
{
    struct result res[MAX_CASES];
    struct bench_machine m;
    struct options o;
    double interval, live;
    int nres = 0, rc;

    if (parse_options (argc, argv, &o) < 0)
        return 2;
    if ((rc = bench_preflight ("textfile-scale", "create cgroups")) != 0)
        return rc;
    rc = 1;
    if (bench_install_handlers (on_signal) < 0 || !(conf = tr_conf_create ())) {
        fprintf (stderr, "textfile-scale: %s\n", strerror (errno));
        return 1;
    }
    interval = conf->interval_s;
    live = conf->store_live_interval_s;
    bench_machine_describe (&m);
    if (make_files () < 0 || make_parents () < 0)
        goto out;
    for (int i = 0; i < o.ncases && !stop_signal; i++) {
        if (run_case (&o, o.steps[i], interval, live, &res[nres]) < 0)
            goto out;
        nres++;
    }
    if (stop_signal)
        goto out;
    print_table (&m, &o, interval, live, res, nres);
    rc = 0;
out:
    if (cleanup () < 0 && rc == 0)
        rc = 1;
    tr_conf_destroy (conf);
    if (stop_signal) {
        fflush (stdout);
        signal (stop_signal, SIG_DFL);
        raise (stop_signal);
        return 128 + stop_signal;
    }
    return rc;
}
