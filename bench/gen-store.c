/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * gen-store: fill a record store with N synthetic but valid records, for
 * the report-scale benchmark (bench/run-report-scale).  Jobs of U users
 * spread over D days, a few accounts and partitions, job names as
 * Nextflow ("nf-FASTQC_(sample12)"), Snakemake ("snakejob.align.17.sh")
 * and people ("train_model_3") make them, 1-3 steps on 1-4 nodes, array
 * jobs, mostly completed with some failed, oom, timeout and cancelled.
 * Every record passes tr_record_validate and carries the unsigned
 * signature {"scheme": "none", "reason": "synthetic benchmark record"}.
 * Files go straight into the store layout (tr_store_relpath and the
 * per-record day markers) without the store's per-file fsync, which would
 * make a million records take hours.  The same seed gives the same store.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common.h"
#include "libtracer/util/error.h"
#include "libtracer/util/path.h"
#include "libtracer/record/record.h"
#include "libtracer/record/runid.h"
#include "libtracer/record/store.h"

#define GIB 1073741824.0

struct options {
    long records;
    long days;
    long users;
    uint64_t seed;
    const char *cluster;
    time_t start; /* midnight UTC of the first day */
    long first_job;
    const char *run; /* --run: every record in this run, or NULL */
    const char *root;
};

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t rng_state;

static uint64_t rng (void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double urand (void) /* [0, 1) */
{
    return (double)(rng () >> 11) / 9007199254740992.0;
}

static long irand (long n) /* [0, n) */
{
    return (long)(urand () * (double)n);
}

static const char *pick (const char *const *v, size_t n)
{
    return v[irand ((long)n)];
}

#define PICK(v) pick ((v), sizeof (v) / sizeof ((v)[0]))

static const char *const nf_procs[] = {
    "FASTQC",        "TRIMGALORE", "STAR_ALIGN", "SALMON_QUANT",
    "SAMTOOLS_SORT", "BWA_MEM",    "MULTIQC",    "GATK_HAPLOTYPECALLER",
};
static const char *const smk_rules[] = {
    "align", "sort", "call_variants", "fastqc", "trim", "index", "merge_vcf",
};
static const char *const plain_names[] = {
    "train_model", "run.sh",     "simulate", "assemble_genome",
    "postprocess", "jupyter",    "bash",     "analysis.py",
    "md_run",      "cp2k_relax", "wrf",      "blast_search",
};
static const char *const commands[] = {
    "python3", "star", "bwa", "gmx_mpi", "Rscript", "java", "cp2k.psmp",
};

struct job {
    char id[32];
    char array_id[32];
    long array_task; /* -1: not an array task */
    char name[96];
    char user[16];
    long uid;
    char account[16];
    const char *partition;
    const char *state;
    int steps;
    int nodes;
    long node0;
    long cpus_per_task;
    double mem_bytes;
    double end_s;     /* the job's end, seconds since the epoch */
    double elapsed_s; /* of the batch step */
    double limit_s;
    double cpu_eff;
    double mem_frac;
    int tag; /* project tag, or -1 */
};

/* A name as the workflow managers and people make them. */
static void job_name (char *buf, size_t size)
{
    double r = urand ();

    if (r < 0.2)
        snprintf (buf, size, "nf-%s_(sample%ld)", PICK (nf_procs),
                  irand (96) + 1);
    else if (r < 0.3)
        snprintf (buf, size, "nf-NFCORE_RNASEQ_%s_(sample%ld)", PICK (nf_procs),
                  irand (96) + 1);
    else if (r < 0.55)
        snprintf (buf, size, "snakejob.%s.%ld.sh", PICK (smk_rules),
                  irand (500) + 1);
    else if (r < 0.75)
        snprintf (buf, size, "%s_%ld", PICK (plain_names), irand (20) + 1);
    else
        snprintf (buf, size, "%s", PICK (plain_names));
}

static void new_job (const struct options *o, struct job *j, long *next_id)
{
    static const char *const parts[] = { "cpu",    "cpu",   "cpu",
                                         "cpu",    "short", "short",
                                         "bigmem", "gpu",   "debug" };
    static const long cpt[] = { 1, 1, 2, 4, 4, 8, 16, 32 };
    double r;
    long u;
    long day;

    snprintf (j->id, sizeof (j->id), "%ld", (*next_id)++);
    /* A few users run most of the jobs. */
    r = urand ();
    u = (long)((double)o->users * r * r);
    snprintf (j->user, sizeof (j->user), "user%ld", u);
    j->uid = 10000 + u;
    snprintf (j->account, sizeof (j->account), "acct%ld",
              (u % 6 + (urand () < 0.1)) % 6);
    j->partition = PICK (parts);
    job_name (j->name, sizeof (j->name));
    r = urand ();
    j->steps = r < 0.5 ? 1 : r < 0.85 ? 2 : 3;
    r = urand ();
    j->nodes = r < 0.7 ? 1 : r < 0.85 ? 2 : r < 0.95 ? 3 : 4;
    j->node0 = irand (1024 - 4);
    j->cpus_per_task = cpt[irand (8)];
    j->mem_bytes = GIB * (double)(1L << irand (8));
    r = urand ();
    j->state = r < 0.85   ? "completed"
               : r < 0.92 ? "failed"
               : r < 0.96 ? "oom"
               : r < 0.99 ? "timeout"
                          : "cancelled";
    /* Runs from 30 s to a day, log-uniform. */
    j->elapsed_s = floor (exp (log (30.0) + urand () * log (86400.0 / 30.0)));
    j->limit_s = strcmp (j->state, "timeout") == 0
                     ? j->elapsed_s
                     : ceil (j->elapsed_s * (1.2 + 3 * urand ()) / 60) * 60;
    day = irand (o->days);
    j->end_s = (double)o->start + (double)day * 86400 + urand () * 86399;
    j->cpu_eff = 0.05 + 0.95 * sqrt (urand ());
    j->mem_frac = strcmp (j->state, "oom") == 0 ? 1.0 : 0.02 + urand ();
    if (j->mem_frac > 1)
        j->mem_frac = 0.98;
    j->tag = urand () < 0.3 ? (int)irand (40) : -1;
    j->array_id[0] = '\0';
    j->array_task = -1;
}

/* The record of step si ("batch", "0", "1": si = 0, 1, 2) of j on its
 * k-th node.
 */
static json_t *make_record (const struct options *o,
                            const struct job *j,
                            int si,
                            int k)
{
    static const char *const steps[] = { "batch", "0", "1" };
    bool last = si == j->steps - 1;
    bool fails = last && strcmp (j->state, "completed") != 0;
    bool oom = fails && strcmp (j->state, "oom") == 0;
    int nnodes = si == 0 ? 1 : j->nodes;
    double elapsed =
        si == 0 ? j->elapsed_s : floor (j->elapsed_s * (0.3 + 0.65 * urand ()));
    double end = si == 0 ? j->end_s : j->end_s - 5.0 * (j->steps - si);
    double start = end - elapsed;
    double cores = (double)j->cpus_per_task;
    double cpu = elapsed * cores * j->cpu_eff * (0.9 + 0.2 * urand ());
    double peak = floor (j->mem_bytes * j->mem_frac);
    double interval = elapsed >= 5 ? ceil (elapsed / 5) : 1;
    long long start_ms = (long long)(start * 1000);
    long long end_ms = (long long)(end * 1000);
    char node[16];
    char cores_str[32];
    char step_name[32];
    char exitkey[8];
    json_t *rec;
    json_t *cpu_s;
    json_t *mem_s;
    json_t *t_s;
    json_t *v;
    int exit_code = fails && !oom ? 1 : 0;
    int sig = oom ? 9 : strcmp (j->state, "timeout") == 0 && last ? 15 : 0;

    snprintf (node, sizeof (node), "n%04ld", j->node0 + k);
    snprintf (cores_str, sizeof (cores_str), "0-%ld", j->cpus_per_task - 1);
    snprintf (step_name, sizeof (step_name), "%s",
              si == 0 ? "batch" : commands[(j->uid + si) % 7]);
    if (sig == 15)
        exit_code = 0;
    snprintf (exitkey, sizeof (exitkey), "%d", exit_code);
    t_s = json_array ();
    cpu_s = json_pack ("{s:[], s:[], s:[]}", "min", "mean", "max");
    mem_s = json_pack ("{s:[], s:[], s:[]}", "min", "mean", "max");
    if (!t_s || !cpu_s || !mem_s)
        return NULL;
    for (int i = 0; i < 5; i++) {
        double c = cores * j->cpu_eff * (0.5 + urand ());
        double m = peak * (0.2 + 0.2 * i);
        json_array_append_new (t_s, json_real (interval * i));
        json_array_append_new (json_object_get (cpu_s, "min"),
                               json_real (c * 0.8));
        json_array_append_new (json_object_get (cpu_s, "mean"), json_real (c));
        json_array_append_new (json_object_get (cpu_s, "max"),
                               json_real (c * 1.1 > cores ? cores : c * 1.1));
        json_array_append_new (json_object_get (mem_s, "min"),
                               json_integer ((json_int_t)(m * 0.9)));
        json_array_append_new (json_object_get (mem_s, "mean"),
                               json_integer ((json_int_t)m));
        json_array_append_new (json_object_get (mem_s, "max"),
                               json_integer ((json_int_t)m));
    }
    /* One member group a line, as in the record. */
    /* clang-format off */
    rec = json_pack (
        "{s:s, s:i, s:s,"
        " s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:I, s:I,"
        "    s:s, s:s, s:s},"
        " s:{s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:I},"
        " s:{s:s, s:s, s:I, s:I, s:s},"
        " s:{s:s, s:s, s:{s:s, s:s}},"
        " s:{s:I, s:I, s:f},"
        " s:{s:I, s:{s:f, s:f, s:f, s:s, s:b},"
        "    s:{s:I, s:I, s:I, s:s, s:b, s:s}},"
        " s:[{s:s, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:{s:I}}],"
        " s:{s:f, s:o, s:{s:o, s:o}},"
        " s:{s:s, s:b, s:i, s:i, s:s, s:[{s:i, s:I, s:i, s:i}]},"
        " s:{s:s, s:s, s:i},"
        " s:{s:s, s:s}}",
        "format", "tracer-record", "version", 1, "kind", "final",
        "identity", "scheduler", "slurm", "cluster", o->cluster, "job_id",
        j->id, "step_id", steps[si], "step_name", step_name, "job_name",
        j->name, "node", node, "node_index", (json_int_t)k, "user", j->user,
        "uid", (json_int_t)j->uid, "gid", (json_int_t)j->uid, "account",
        j->account, "partition", j->partition, "qos", "normal",
        "request", "nodes", (json_int_t)j->nodes, "tasks", (json_int_t)nnodes,
        "tasks_on_node", (json_int_t)1, "cpus_per_task",
        (json_int_t)j->cpus_per_task, "cpus_on_node",
        (json_int_t)j->cpus_per_task, "cores", cores_str, "mem_bytes",
        (json_int_t)j->mem_bytes, "time_limit_s", (json_int_t)j->limit_s,
        "host", "hostname", node, "kernel", "6.1.0-18-amd64",
        "cpus_online", (json_int_t)64, "mem_total_bytes",
        (json_int_t)(256 * GIB), "cgroup_mode", "v2",
        "cgroup", "attach", "cgroup", "version", "v1", "paths", "memory",
        "/slurm/job", "cpuacct", "/slurm/job",
        "time", "start_unix_ms", (json_int_t)start_ms, "end_unix_ms",
        (json_int_t)end_ms, "elapsed_s", (end_ms - start_ms) / 1000.0,
        "summary", "samples", (json_int_t)5, "cpu", "user_s", cpu * 0.9,
        "system_s", cpu * 0.1, "total_s", cpu, "source",
        "cgroup-v1:cpuacct.usage", "exact", 1, "memory", "peak_bytes",
        (json_int_t)peak, "current_bytes", (json_int_t)0, "limit_bytes",
        (json_int_t)j->mem_bytes, "source",
        "cgroup-v1:memory.max_usage_in_bytes", "exact", 1, "definition",
        "cgroup-charged: anonymous + page cache + kernel memory charged to "
        "the step cgroup",
        "tools", "name", step_name, "count", (json_int_t)1, "cpu_s", cpu,
        "peak_rss_bytes", (json_int_t)(peak * 0.95), "read_bytes",
        (json_int_t)irand (1L << 34), "write_bytes",
        (json_int_t)irand (1L << 32), "first_start_unix_ms",
        (json_int_t)start_ms + 50, "last_end_unix_ms", (json_int_t)end_ms - 50,
        "exit_codes", exitkey, (json_int_t)1,
        "series", "interval_s", interval, "t_s", t_s, "metrics", "cpu_cores",
        cpu_s, "mem_bytes", mem_s,
        "outcome", "state", last ? j->state : "completed", "complete", 1,
        "exit_code", last ? exit_code : 0, "signal", last ? sig : 0, "reason",
        oom ? "task 0 killed by the OOM killer"
            : fails ? "a task exited non-zero or was killed"
                    : "",
        "tasks", "task_id", k, "pid", (json_int_t)(10000 + irand (4000000)),
        "wait_status", last ? (sig ? sig : exit_code << 8) : 0, "exit_code",
        last ? exit_code : 0,
        "collector", "name", "tracerd", "version", "0.1.0", "interval_s", 1,
        "signature", "scheme", "none", "reason", "synthetic benchmark record");
    /* clang-format on */
    if (!rec)
        return NULL;
    if (j->array_task >= 0) {
        v = json_object_get (rec, "identity");
        json_object_set_new (v, "array_job_id", json_string (j->array_id));
        json_object_set_new (v, "array_task_id",
                             json_integer ((json_int_t)j->array_task));
    }
    if (oom)
        json_object_set_new (
            json_array_get (json_object_get (json_object_get (rec, "outcome"),
                                             "tasks"),
                            0),
            "oom_killed", json_true ());
    if (strcmp (j->partition, "gpu") == 0)
        json_object_set_new (json_object_get (rec, "request"), "gpus",
                             json_string ("gpu:a100:1"));
    if (o->run)
        json_object_set_new (rec, "tags",
                             json_pack ("{s:s s:s}", "run", o->run, "pipeline",
                                        "bench"));
    else if (j->tag >= 0) {
        char tag[16];
        snprintf (tag, sizeof (tag), "p-%d", j->tag);
        json_object_set_new (rec, "tags", json_pack ("{s:s}", "project", tag));
    }
    else
        json_object_set_new (rec, "tags", json_object ());
    return rec;
}

/* Make dir (and count it); an existing one is fine. */
static int mkdir_ok (const char *path)
{
    if (mkdir (path, 0755) < 0 && errno != EEXIST) {
        fprintf (stderr, "gen-store: mkdir %s: %s\n", path, strerror (errno));
        return -1;
    }
    return 0;
}

static int write_file (const char *path, const char *data, size_t len)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                   0640);

    if (fd < 0)
        goto error;
    while (len > 0) {
        ssize_t n = write (fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            close (fd);
            goto error;
        }
        data += n;
        len -= (size_t)n;
    }
    if (close (fd) < 0)
        goto error;
    return 0;
error:
    fprintf (stderr, "gen-store: %s: %s\n", path, strerror (errno));
    return -1;
}

/* Write one record and its day marker into the layout. */
static int put (const struct options *o, json_t *rec, size_t *bytes)
{
    json_t *id = json_object_get (rec, "identity");
    long long end_ms = json_integer_value (
        json_object_get (json_object_get (rec, "time"), "end_unix_ms"));
    time_t end = (time_t)(end_ms / 1000);
    char path[PATH_MAX];
    char day[16];
    struct tm tm;
    tr_error_t e;
    char *rel;
    char *data;
    char *slash;
    int rc;

    if (tr_record_validate (rec, &e) < 0) {
        fprintf (stderr, "gen-store: invalid record: %s\n", e.text);
        return -1;
    }
    if (!(rel = tr_store_relpath (rec)) || !(data = tr_record_dumps (rec))) {
        free (rel);
        fprintf (stderr, "gen-store: %s\n", strerror (errno));
        return -1;
    }
    /* <cluster>/jobs/<bucket>/<job>/: the bucket may be new, the job
     * directory is new for the job's first record.
     */
    snprintf (path, sizeof (path), "%s/%s", o->root, rel);
    slash = strrchr (path, '/');
    *slash = '\0';
    rc = 0;
    if (access (path, F_OK) < 0) {
        char *b = strrchr (path, '/');
        *b = '\0';
        rc = mkdir_ok (path);
        *b = '/';
        if (rc == 0)
            rc = mkdir_ok (path);
    }
    *slash = '/';
    if (rc == 0)
        rc = write_file (path, data, strlen (data));
    *bytes += strlen (data);
    free (data);
    free (rel);
    if (rc < 0)
        return -1;
    gmtime_r (&end, &tm);
    strftime (day, sizeof (day), "%Y-%m-%d", &tm);
    snprintf (path, sizeof (path), "%s/%s/days/%s", o->root, o->cluster, day);
    if (mkdir_ok (path) < 0)
        return -1;
    snprintf (path, sizeof (path), "%s/%s/days/%s/%s@%s@%s", o->root,
              o->cluster, day,
              json_string_value (json_object_get (id, "job_id")),
              json_string_value (json_object_get (id, "step_id")),
              json_string_value (json_object_get (id, "node")));
    return write_file (path, "", 0);
}

static void usage (FILE *f)
{
    fprintf (f, "Usage: gen-store [OPTIONS] STORE\n"
                "Write N synthetic, valid, unsigned records into the store at "
                "STORE.\n\n"
                "  -n, --records N     records to write (default 1000)\n"
                "  -d, --days D        spread over D days (default 30)\n"
                "  -u, --users U       users (default 200)\n"
                "  -s, --seed S        random seed (default 1)\n"
                "  -M, --cluster NAME  cluster (default bench)\n"
                "  -S, --start DAY     first day, YYYY-MM-DD (default "
                "2026-01-01)\n"
                "  -j, --first-job ID  first job id (default 1000000)\n"
                "  -r, --run ID        tag every record run:ID, pipeline:bench "
                "(a pipeline run)\n"
                "  -h, --help          show this help\n\n"
                "Prints the records, jobs and bytes written and the seconds it "
                "took.\nExit status: 0 done, 1 a failure, 2 a usage error.\n");
}

static int parse_day (const char *s, time_t *t)
{
    struct tm tm;
    char *end;

    memset (&tm, 0, sizeof (tm));
    end = strptime (s, "%Y-%m-%d", &tm);
    if (!end || *end)
        return -1;
    *t = timegm (&tm);
    return 0;
}

static int parse_args (int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "records", required_argument, NULL, 'n' },
        { "days", required_argument, NULL, 'd' },
        { "users", required_argument, NULL, 'u' },
        { "seed", required_argument, NULL, 's' },
        { "cluster", required_argument, NULL, 'M' },
        { "start", required_argument, NULL, 'S' },
        { "first-job", required_argument, NULL, 'j' },
        { "run", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long seed;
    int c;

    *o = (struct options){ .records = 1000,
                           .days = 30,
                           .users = 200,
                           .seed = 1,
                           .cluster = "bench",
                           .first_job = 1000000 };
    parse_day ("2026-01-01", &o->start);
    while ((c = getopt_long (argc, argv, "n:d:u:s:M:S:j:r:h", longopts, NULL))
           != -1) {
        switch (c) {
        case 'n':
            if (bench_parse_long (optarg, 1, 100000000, &o->records) < 0)
                goto bad;
            break;
        case 'd':
            if (bench_parse_long (optarg, 1, 3650, &o->days) < 0)
                goto bad;
            break;
        case 'u':
            if (bench_parse_long (optarg, 1, 1000000, &o->users) < 0)
                goto bad;
            break;
        case 's':
            if (bench_parse_long (optarg, 0, LONG_MAX, &seed) < 0)
                goto bad;
            o->seed = (uint64_t)seed;
            break;
        case 'M':
            if (!tr_record_id_is_safe (optarg))
                goto bad;
            o->cluster = optarg;
            break;
        case 'S':
            if (parse_day (optarg, &o->start) < 0)
                goto bad;
            break;
        case 'j':
            if (bench_parse_long (optarg, 1, 1000000000000L, &o->first_job) < 0)
                goto bad;
            break;
        case 'r':
            if (!tr_run_name_ok (optarg))
                goto bad;
            o->run = optarg;
            break;
        case 'h':
            usage (stdout);
            exit (0);
        default:
            goto bad;
        }
    }
    if (optind != argc - 1)
        goto bad;
    o->root = argv[optind];
    return 0;
bad:
    if (c != '?')
        fprintf (stderr, "gen-store: bad value for -%c\n", c);
    usage (stderr);
    return -1;
}

int main (int argc, char **argv)
{
    struct options o;
    struct timespec t0;
    struct timespec t1;
    char path[PATH_MAX];
    long next_id;
    long written = 0;
    long jobs = 0;
    size_t bytes = 0;
    struct job j;
    long array_left = 0;

    if (parse_args (argc, argv, &o) < 0)
        return 2;
    rng_state = o.seed;
    next_id = o.first_job;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    {
        tr_error_t e;
        int fd = tr_path_mkdir_p (o.root, 0755, &e);
        if (fd < 0) {
            fprintf (stderr, "gen-store: %s\n", e.text);
            return 1;
        }
        close (fd);
    }
    snprintf (path, sizeof (path), "%s/%s", o.root, o.cluster);
    if (mkdir_ok (path) < 0)
        return 1;
    snprintf (path, sizeof (path), "%s/%s/jobs", o.root, o.cluster);
    if (mkdir_ok (path) < 0)
        return 1;
    snprintf (path, sizeof (path), "%s/%s/days", o.root, o.cluster);
    if (mkdir_ok (path) < 0)
        return 1;
    while (written < o.records) {
        if (array_left > 0) {
            /* The next task of the array: same user, name and shape,
             * its own job id and a nearby end.
             */
            snprintf (j.id, sizeof (j.id), "%ld", next_id++);
            j.array_task++;
            j.end_s += urand () * 600;
            array_left--;
        }
        else {
            new_job (&o, &j, &next_id);
            if (urand () < 0.08) {
                snprintf (j.array_id, sizeof (j.array_id), "%s", j.id);
                j.array_task = 0;
                array_left = 1 + irand (49);
            }
        }
        jobs++;
        for (int si = 0; si < j.steps && written < o.records; si++) {
            int nn = si == 0 ? 1 : j.nodes;
            for (int k = 0; k < nn && written < o.records; k++) {
                json_t *rec = make_record (&o, &j, si, k);
                int rc;

                if (!rec) {
                    fprintf (stderr, "gen-store: cannot build a record\n");
                    return 1;
                }
                rc = put (&o, rec, &bytes);
                json_decref (rec);
                if (rc < 0)
                    return 1;
                written++;
            }
        }
    }
    clock_gettime (CLOCK_MONOTONIC, &t1);
    printf ("records %ld jobs %ld bytes %zu last_job %ld seconds %.2f\n",
            written, jobs, bytes, next_id - 1,
            (double)(t1.tv_sec - t0.tv_sec)
                + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
