/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Step summaries: one flat row per record, the unit every listing,
 * recommendation, regression check and waste report works on, and the
 * line format of the summary index.  The field table below is the one
 * list of what a row holds: --format, --helpformat, sorting, JSON and
 * the index lines are all driven by it, so a field added here is
 * everywhere at once.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cause.h"
#include "merge.h"
#include "runid.h"
#include "states.h"
#include "stepsum.h"
#include "when.h"
#include "libtracer/util/tools.h"
#include "libtracer/util/units.h"
#include "libtracer/util/json.h"

/* String pool: open addressing over interned copies, which live in
 * large chunks so that a million rows do not mean a million mallocs.
 */
#define POOL_CHUNK (64 * 1024)

struct pool_chunk {
    struct pool_chunk *next;
    size_t used, size;
    char data[];
};

struct tr_strpool {
    const char **slots;
    size_t nslots, count;
    struct pool_chunk *chunks;
};

tr_strpool_t *tr_strpool_create (void)
{
    tr_strpool_t *pool = calloc (1, sizeof (*pool));

    if (!pool)
        return NULL;
    pool->nslots = 1024;
    if (!(pool->slots = calloc (pool->nslots, sizeof (*pool->slots)))) {
        free (pool);
        return NULL;
    }
    return pool;
}

void tr_strpool_destroy (tr_strpool_t *pool)
{
    struct pool_chunk *c, *next;

    if (!pool)
        return;
    for (c = pool->chunks; c; c = next) {
        next = c->next;
        free (c);
    }
    free (pool->slots);
    free (pool);
}

static int pool_grow (tr_strpool_t *pool)
{
    size_t n = pool->nslots * 2;
    const char **slots = calloc (n, sizeof (*slots));

    if (!slots)
        return -1;
    for (size_t i = 0; i < pool->nslots; i++) {
        const char *s = pool->slots[i];
        size_t j;

        if (!s)
            continue;
        j = tr_str_hash64 (s, strlen (s)) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = s;
    }
    free (pool->slots);
    pool->slots = slots;
    pool->nslots = n;
    return 0;
}

static char *pool_store (tr_strpool_t *pool, const char *s, size_t len)
{
    struct pool_chunk *c = pool->chunks;
    char *p;

    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > POOL_CHUNK ? len + 1 : POOL_CHUNK;

        if (!(c = malloc (sizeof (*c) + size)))
            return NULL;
        c->size = size;
        c->used = 0;
        c->next = pool->chunks;
        pool->chunks = c;
    }
    p = c->data + c->used;
    memcpy (p, s, len);
    p[len] = '\0';
    c->used += len + 1;
    return p;
}

const char *tr_strpool_intern_n (tr_strpool_t *pool, const char *s, size_t len)
{
    size_t j;
    char *copy;

    if (!s) {
        s = "";
        len = 0;
    }
    j = tr_str_hash64 (s, len) & (pool->nslots - 1);
    while (pool->slots[j]) {
        const char *t = pool->slots[j];

        if (!strncmp (t, s, len) && t[len] == '\0')
            return t;
        j = (j + 1) & (pool->nslots - 1);
    }
    if (!(copy = pool_store (pool, s, len))) {
        errno = ENOMEM;
        return NULL;
    }
    pool->slots[j] = copy;
    if (++pool->count * 2 > pool->nslots && pool_grow (pool) < 0) {
        /* still interned, the table is only fuller than it likes */
        return copy;
    }
    return copy;
}

const char *tr_strpool_intern (tr_strpool_t *pool, const char *s)
{
    return tr_strpool_intern_n (pool, s, s ? strlen (s) : 0);
}

/* The field table names every member, strings and numbers; init and
 * the index walk it rather than repeat the member list.
 */
#define M(m) offsetof (tr_stepsum_t, m), NULL, NULL
#define D(fn) (size_t)-1, fn, NULL
#define DS(fn) (size_t)-1, NULL, fn

static double f_cpu_eff (const tr_stepsum_t *r)
{
    return tr_stepsum_cpu_eff (r);
}

static double f_mem_eff (const tr_stepsum_t *r)
{
    return tr_stepsum_mem_eff (r);
}

static double f_avg_cores (const tr_stepsum_t *r)
{
    return r->elapsed_s > 0 ? r->cpu_s / r->elapsed_s : NAN;
}

static double f_psi_cpu (const tr_stepsum_t *r)
{
    return tr_stepsum_frac (r->psi_cpu_some_s, r);
}

static double f_psi_mem (const tr_stepsum_t *r)
{
    return tr_stepsum_frac (r->psi_mem_some_s, r);
}

static double f_psi_mem_full (const tr_stepsum_t *r)
{
    return tr_stepsum_frac (r->psi_mem_full_s, r);
}

static double f_psi_io (const tr_stepsum_t *r)
{
    return tr_stepsum_frac (r->psi_io_some_s, r);
}

static double f_psi_io_full (const tr_stepsum_t *r)
{
    return tr_stepsum_frac (r->psi_io_full_s, r);
}

static double f_idle_frac (const tr_stepsum_t *r)
{
    return tr_stepsum_frac (r->idle_s, r);
}

static double f_balance (const tr_stepsum_t *r)
{
    if (!(r->nodes > 1) || !(r->node_cpu_max_s > 0))
        return NAN;
    return r->node_cpu_min_s / r->node_cpu_max_s;
}

static double f_alloc_ch (const tr_stepsum_t *r)
{
    return r->req_cores * r->elapsed_s / 3600.0;
}

static double f_used_ch (const tr_stepsum_t *r)
{
    return r->cpu_s / 3600.0;
}

static const char *f_jobid (const tr_stepsum_t *r, char *buf, size_t size)
{
    return tr_merge_jobid (buf, size, r->scheduler, r->job_id,
                           r->array_job_id, r->array_task_id, r->het_job_id,
                           r->het_component);
}

static const char *f_jobstep (const tr_stepsum_t *r, char *buf, size_t size)
{
    char id[300];

    if (!*r->step_id)
        return f_jobid (r, buf, size);
    snprintf (buf, size, "%s.%s", f_jobid (r, id, sizeof (id)), r->step_id);
    return buf;
}

/* "n[1-3],gpu7" from "n1,n2,n3,gpu7" (defined below) */
static const char *tr_stepsum_hostlist (const char *nodes, char *buf,
                                        size_t size);

const tr_field_t tr_stepsum_fields[] = {
    { "jobid", TR_FIELD_STR, 14, "job id; array tasks as ARRAY_TASK, "
      "heterogeneous components as LEADER+N", DS (f_jobid) },
    { "jobstep", TR_FIELD_STR, 18, "job id and step, JOBID.STEP",
      DS (f_jobstep) },
    { "jobidraw", TR_FIELD_STR, 12, "the job's own id", M (job_id) },
    { "stepid", TR_FIELD_STR, 8, "step id: batch, extern, 0, 1, ...",
      M (step_id) },
    { "arrayjobid", TR_FIELD_STR, 10, "array master job id",
      M (array_job_id) },
    { "arraytaskid", TR_FIELD_COUNT, 6, "index within the array",
      M (array_task_id) },
    { "hetjobid", TR_FIELD_STR, 10, "heterogeneous job leader's id",
      M (het_job_id) },
    { "hetcomponent", TR_FIELD_COUNT, 6, "heterogeneous job component",
      M (het_component) },
    { "jobname", TR_FIELD_STR, 16, "job name", M (job_name) },
    { "stepname", TR_FIELD_STR, 12, "step name", M (step_name) },
    { "group", TR_FIELD_STR, 24, "step group used for recommendations "
      "and regressions", M (group) },
    { "run", TR_FIELD_STR, 24, "the pipeline run, by tag or as recognised "
      "(doc/runs.md)", M (run_id) },
    { "pipeline", TR_FIELD_STR, 12, "the run's pipeline", M (pipeline) },
    { "process", TR_FIELD_STR, 16, "the rule or process within the run",
      M (process) },
    { "cluster", TR_FIELD_STR, 10, "cluster name", M (cluster) },
    { "scheduler", TR_FIELD_STR, 9, "slurm, pbs, torque, lsf, none",
      M (scheduler) },
    { "user", TR_FIELD_STR, 10, "user name", M (user) },
    { "uid", TR_FIELD_COUNT, 6, "numeric user id", M (uid) },
    { "unixgroup", TR_FIELD_STR, 9, "the user's group (sacct's Group)",
      M (unix_group) },
    { "gid", TR_FIELD_COUNT, 6, "numeric group id", M (gid) },
    { "account", TR_FIELD_STR, 10, "charge account", M (account) },
    { "partition", TR_FIELD_STR, 10, "partition or queue", M (partition) },
    { "qos", TR_FIELD_STR, 8, "quality of service", M (qos) },
    { "workdir", TR_FIELD_STR, 20, "the job's working directory, as the "
      "controller gave it", M (work_dir) },
    { "nodelist", TR_FIELD_STR, 16, "nodes that sent a record", M (node) },
    { "nnodes", TR_FIELD_COUNT, 6, "nodes that sent a record", M (nodes) },
    { "nodesexpected", TR_FIELD_COUNT, 6, "nodes the scheduler gave the "
      "job", M (nodes_expected) },
    { "ntasks", TR_FIELD_COUNT, 6, "tasks seen", M (tasks) },
    { "state", TR_FIELD_STR, 13, "completed, failed, cancelled, timeout, "
      "OUT_OF_MEMORY, incomplete, running, unknown (the worst node)",
      M (state) },
    { "exitcode", TR_FIELD_COUNT, 4, "exit code (the largest node's)",
      M (exit_code) },
    { "signal", TR_FIELD_COUNT, 4, "signal that ended the step",
      M (signal) },
    { "reason", TR_FIELD_STR, 30, "how it ended, in words", M (reason) },
    { "cause", TR_FIELD_STR, 13, "why it failed: oom, stalled, timeout, "
      "cancelled, node-failure, io-error, input-missing, tool-crash, "
      "tool-error, unknown (doc/diagnosis.md)", M (cause) },
    { "causetext", TR_FIELD_STR, 40, "the evidence for the cause, one line",
      M (cause_text) },
    { "culprit", TR_FIELD_STR, 12, "the tool of the process that failed "
      "first", M (culprit) },
    { "stalled", TR_FIELD_SECONDS, 10, "how long the step made no CPU or "
      "I/O progress: now when running, at its end when ended "
      "(sampling.stall_after)", M (stalled_s) },
    { "start", TR_FIELD_TIME, 19, "start (local time)", M (start_ms) },
    { "end", TR_FIELD_TIME, 19, "end (local time)", M (end_ms) },
    { "submit", TR_FIELD_TIME, 19, "when the job was submitted (local time)",
      M (submit_ms) },
    { "queuewait", TR_FIELD_SECONDS, 10, "time the job waited in the queue "
      "(job start minus submit)", M (queue_wait_s) },
    { "elapsed", TR_FIELD_SECONDS, 10, "wall-clock time, the longest node",
      M (elapsed_s) },
    { "timelimit", TR_FIELD_SECONDS, 10, "the job's time limit",
      M (time_limit_s) },
    { "timeunlimited", TR_FIELD_COUNT, 4, "1 when the job had no time "
      "limit", M (time_unlimited) },
    { "reqcpus", TR_FIELD_COUNT, 7, "cores allocated, all nodes",
      M (req_cores) },
    { "cpuspertask", TR_FIELD_COUNT, 5, "--cpus-per-task",
      M (req_cpus_per_task) },
    { "reqmem", TR_FIELD_BYTES, 8, "memory requested per node",
      M (req_mem_bytes) },
    { "reqgpus", TR_FIELD_STR, 8, "GPUs requested or bound", M (gpus) },
    { "totalcpu", TR_FIELD_SECONDS, 10, "CPU time, all nodes", M (cpu_s) },
    { "usercpu", TR_FIELD_SECONDS, 10, "user CPU time", M (user_s) },
    { "systemcpu", TR_FIELD_SECONDS, 10, "system CPU time", M (system_s) },
    { "cpueff", TR_FIELD_FRACTION, 7, "CPU time over allocated core time",
      D (f_cpu_eff) },
    { "avgcpus", TR_FIELD_NUM, 7, "cores busy on average, all nodes",
      D (f_avg_cores) },
    { "peakcpus", TR_FIELD_NUM, 7, "most cores busy at once on one node "
      "(series)", M (cpu_peak_cores) },
    { "throttled", TR_FIELD_SECONDS, 10, "time throttled by a CPU quota",
      M (throttled_s) },
    { "runqwait", TR_FIELD_SECONDS, 10, "time runnable but waiting for a "
      "CPU, summed over processes", M (runq_wait_s) },
    { "nodecpumax", TR_FIELD_SECONDS, 10, "CPU time of the busiest node",
      M (node_cpu_max_s) },
    { "nodecpumin", TR_FIELD_SECONDS, 10, "CPU time of the idlest node",
      M (node_cpu_min_s) },
    { "nodebalance", TR_FIELD_FRACTION, 7, "idlest node's CPU time over "
      "the busiest's (multi-node steps)", D (f_balance) },
    { "mempeak", TR_FIELD_BYTES, 8, "exact peak memory of the largest "
      "node", M (mem_peak_bytes) },
    { "mempeaksum", TR_FIELD_BYTES, 8, "nodes' peaks added up",
      M (mem_peak_sum_bytes) },
    { "memlimit", TR_FIELD_BYTES, 8, "memory limit enforced",
      M (mem_limit_bytes) },
    { "memeff", TR_FIELD_FRACTION, 7, "peak memory over the request",
      D (f_mem_eff) },
    { "swap", TR_FIELD_BYTES, 8, "swap in use at the end", M (swap_bytes) },
    { "oomkills", TR_FIELD_COUNT, 4, "processes killed by the OOM killer",
      M (oom_kills) },
    { "memrise", TR_FIELD_BYTES, 8, "how fast memory rose to its peak, "
      "per second", M (mem_rise_Bps) },
    { "psicpu", TR_FIELD_FRACTION, 7, "fraction of time some task waited "
      "for a CPU", D (f_psi_cpu) },
    { "psimem", TR_FIELD_FRACTION, 7, "fraction of time some task waited "
      "for memory", D (f_psi_mem) },
    { "psimemfull", TR_FIELD_FRACTION, 7, "fraction of time all tasks "
      "waited for memory", D (f_psi_mem_full) },
    { "psiio", TR_FIELD_FRACTION, 7, "fraction of time some task waited "
      "for I/O", D (f_psi_io) },
    { "psiiofull", TR_FIELD_FRACTION, 7, "fraction of time all tasks "
      "waited for I/O", D (f_psi_io_full) },
    { "psicputime", TR_FIELD_SECONDS, 10, "time some task waited for a "
      "CPU", M (psi_cpu_some_s) },
    { "psimemtime", TR_FIELD_SECONDS, 10, "time some task waited for "
      "memory", M (psi_mem_some_s) },
    { "psimemfulltime", TR_FIELD_SECONDS, 10, "time all tasks waited for "
      "memory", M (psi_mem_full_s) },
    { "psiiotime", TR_FIELD_SECONDS, 10, "time some task waited for I/O",
      M (psi_io_some_s) },
    { "psiiofulltime", TR_FIELD_SECONDS, 10, "time all tasks waited for "
      "I/O", M (psi_io_full_s) },
    { "readbytes", TR_FIELD_BYTES, 8, "bytes read from storage",
      M (read_bytes) },
    { "writebytes", TR_FIELD_BYTES, 8, "bytes written to storage",
      M (write_bytes) },
    { "rchar", TR_FIELD_BYTES, 8, "bytes read by calls (cache hits too)",
      M (rchar) },
    { "wchar", TR_FIELD_BYTES, 8, "bytes written by calls", M (wchar) },
    { "netrx", TR_FIELD_BYTES, 8, "bytes received (own network namespace "
      "only)", M (net_rx_bytes) },
    { "nettx", TR_FIELD_BYTES, 8, "bytes sent (own network namespace "
      "only)", M (net_tx_bytes) },
    { "ngpus", TR_FIELD_COUNT, 5, "GPUs measured", M (gpus_used) },
    { "gpuutil", TR_FIELD_NUM, 7, "mean GPU utilisation, percent",
      M (gpu_util_mean_pct) },
    { "gpumem", TR_FIELD_BYTES, 8, "peak GPU memory", M (gpu_mem_peak_bytes) },
    { "nprocs", TR_FIELD_COUNT, 6, "processes seen", M (nprocs) },
    { "idle", TR_FIELD_FRACTION, 7, "fraction of time idle (no CPU, no "
      "I/O)", D (f_idle_frac) },
    { "idletime", TR_FIELD_SECONDS, 10, "time idle", M (idle_s) },
    { "idlelongest", TR_FIELD_SECONDS, 10, "longest idle stretch",
      M (idle_longest_s) },
    { "allocch", TR_FIELD_NUM, 9, "core-hours allocated", D (f_alloc_ch) },
    { "usedch", TR_FIELD_NUM, 9, "core-hours used", D (f_used_ch) },
    { "complete", TR_FIELD_COUNT, 3, "1: every task's end was seen",
      M (complete) },
    { "exact", TR_FIELD_COUNT, 3, "1: CPU and memory are kernel totals",
      M (exact) },
    { "tools", TR_FIELD_STR, 30, "busiest programs, NAME=CPU-SECONDS",
      M (tools) },
    { "tags", TR_FIELD_STR, 20, "tags, KEY=VALUE;...", M (tags) },
    { "signature", TR_FIELD_STR, 9, "valid or unsigned", M (sig) },
    { "path", TR_FIELD_STR, 40, "the record, relative to the store",
      M (path) },
    { NULL, 0, 0, NULL, 0, NULL, NULL },
};


/* sacct's names.  Its widths and alignment: sacct's own field table. */

bool tr_stepsum_is_job (const tr_stepsum_t *row)
{
    return !*row->step_id;
}

static const char *f_sacct_jobid (const tr_stepsum_t *r, char *buf,
                                  size_t size)
{
    return tr_stepsum_is_job (r) ? f_jobid (r, buf, size)
                                 : f_jobstep (r, buf, size);
}

static const char *f_sacct_jobidraw (const tr_stepsum_t *r, char *buf,
                                     size_t size)
{
    if (tr_stepsum_is_job (r))
        snprintf (buf, size, "%s", r->job_id);
    else
        snprintf (buf, size, "%s.%s", r->job_id, r->step_id);
    return buf;
}

/* sacct names a step by its own name: batch, extern, the command srun ran */
static const char *f_sacct_jobname (const tr_stepsum_t *r, char *buf,
                                    size_t size)
{
    if (tr_stepsum_is_job (r))
        snprintf (buf, size, "%s", r->job_name);
    else
        snprintf (buf, size, "%s", *r->step_name ? r->step_name
                                                  : r->step_id);
    return buf;
}

static const char *f_sacct_state (const tr_stepsum_t *r, char *buf,
                                  size_t size)
{
    snprintf (buf, size, "%s", tr_stepsum_state_name (r->state,
                                                      r->oom_kills));
    return buf;
}

static const char *f_sacct_exit (const tr_stepsum_t *r, char *buf,
                                 size_t size)
{
    return tr_stepsum_exit_text (r, buf, size);
}

static const char *f_sacct_nodelist (const tr_stepsum_t *r, char *buf,
                                     size_t size)
{
    return tr_stepsum_hostlist (r->node, buf, size);
}

static double f_cputime (const tr_stepsum_t *r)
{
    return r->req_cores * r->elapsed_s;
}

static double f_time_eff (const tr_stepsum_t *r)
{
    if (!(r->time_limit_s > 0) || isnan (r->elapsed_s))
        return NAN;
    return r->elapsed_s / r->time_limit_s;
}

static double f_whole (double v)
{
    return isnan (v) ? NAN : floor (v + 0.5);
}

static double f_elapsed_raw (const tr_stepsum_t *r)
{
    return f_whole (r->elapsed_s);
}

static double f_cputime_raw (const tr_stepsum_t *r)
{
    return f_whole (f_cputime (r));
}

/* sacct's TRES list, "cpu=2,mem=400M,node=1", names in its order
 * (alphabetical): what was allocated, as far as the record holds it.
 * The memory is the job's on all its nodes, in the largest unit that
 * divides it exactly (4096M is 4G), as sacct writes it; GPUs only for
 * one node, whose bound GPUs the record lists.  "" when nothing is
 * known, or not every node's part.
 */
static const char *f_sacct_tres (const tr_stepsum_t *r, char *buf,
                                 size_t size)
{
    char *p = buf, *end = buf + size;
    double nodes = r->nodes > 0 ? r->nodes : 1;

    /* a row that holds no allocation (an extern step: its job's row
     * holds it) has none; nor one whose nodes did not all send a record
     * (their share is not known)
     */
    buf[0] = '\0';
    if (!(r->req_cores > 0) || r->nodes_expected > r->nodes)
        return buf;
    p += snprintf (p, (size_t)(end - p), "cpu=%.0f", r->req_cores);
    if (p < end && *r->gpus && r->nodes == 1) {
        unsigned n = 1;

        for (const char *c = r->gpus; *c; c++)
            n += *c == ',';
        p += snprintf (p, (size_t)(end - p), "%sgres/gpu=%u",
                       p > buf ? "," : "", n);
    }
    if (p < end && r->req_mem_bytes > 0) {
        char mem[32];

        p += snprintf (p, (size_t)(end - p), "%smem=%s", p > buf ? "," : "",
                       tr_units_bytes_exact (mem, sizeof (mem),
                                             r->req_mem_bytes * nodes));
    }
    if (p < end && r->nodes > 0)
        snprintf (p, (size_t)(end - p), "%snode=%.0f", p > buf ? "," : "",
                  r->nodes);
    return buf;
}

const tr_field_t tr_stepsum_sacct_fields[] = {
    { "JobID", TR_FIELD_STR, -12, "the job (JOBID, ARRAY_TASK) on a job "
      "row, JOBID.STEP on a step row", DS (f_sacct_jobid) },
    { "JobIDRaw", TR_FIELD_STR, -12, "the same with the job's own id",
      DS (f_sacct_jobidraw) },
    { "JobName", TR_FIELD_STR, 10, "the job's name on a job row, the "
      "step's (batch, extern, the command) on a step row",
      DS (f_sacct_jobname) },
    { "User", TR_FIELD_STR, 9, "user name", M (user) },
    { "UID", TR_FIELD_COUNT, 6, "numeric user id", M (uid) },
    { "Group", TR_FIELD_STR, 9, "the user's group", M (unix_group) },
    { "GID", TR_FIELD_COUNT, 6, "numeric group id", M (gid) },
    { "Account", TR_FIELD_STR, 10, "charge account", M (account) },
    { "Partition", TR_FIELD_STR, 10, "partition or queue", M (partition) },
    { "QOS", TR_FIELD_STR, 10, "quality of service", M (qos) },
    { "Cluster", TR_FIELD_STR, 10, "cluster name", M (cluster) },
    { "State", TR_FIELD_STR, 10, "COMPLETED, FAILED, CANCELLED, TIMEOUT, "
      "OUT_OF_MEMORY, RUNNING, INCOMPLETE, UNKNOWN", DS (f_sacct_state) },
    { "ExitCode", TR_FIELD_STR, 8, "exit code and signal, CODE:SIGNAL",
      DS (f_sacct_exit) },
    { "Reason", TR_FIELD_STR, 22, "how it ended, in words", M (reason) },
    { "Cause", TR_FIELD_STR, 13, "why it failed: oom, stalled, timeout, "
      "cancelled, node-failure, io-error, input-missing, tool-crash, "
      "tool-error, unknown", M (cause) },
    { "CauseText", TR_FIELD_STR, 40, "the evidence for the cause",
      M (cause_text) },
    { "Culprit", TR_FIELD_STR, 12, "the tool of the process that failed "
      "first", M (culprit) },
    { "Start", TR_FIELD_TIME, 19, "start (local time)", M (start_ms) },
    { "End", TR_FIELD_TIME, 19, "end (local time)", M (end_ms) },
    { "Submit", TR_FIELD_TIME, 19, "when the job was submitted (local time)",
      M (submit_ms) },
    { "Reserved", TR_FIELD_SECONDS, 10, "time the job waited in the queue: "
      "its start minus its submit time (sacct counts from the time it "
      "became eligible)", M (queue_wait_s) },
    { "Elapsed", TR_FIELD_SECONDS, 10, "wall-clock time", M (elapsed_s) },
    { "ElapsedRaw", TR_FIELD_COUNT, 10, "wall-clock time, whole seconds",
      D (f_elapsed_raw) },
    { "Timelimit", TR_FIELD_SECONDS, 10, "the job's time limit",
      M (time_limit_s) },
    { "TotalCPU", TR_FIELD_SECONDS, 10, "CPU time, all nodes", M (cpu_s) },
    { "UserCPU", TR_FIELD_SECONDS, 10, "user CPU time", M (user_s) },
    { "SystemCPU", TR_FIELD_SECONDS, 10, "system CPU time", M (system_s) },
    { "CPUTime", TR_FIELD_SECONDS, 10, "elapsed time times allocated "
      "cores", D (f_cputime) },
    { "CPUTimeRAW", TR_FIELD_COUNT, 10, "the same in whole seconds",
      D (f_cputime_raw) },
    { "AllocCPUS", TR_FIELD_COUNT, 10, "cores allocated, all nodes",
      M (req_cores) },
    { "NCPUS", TR_FIELD_COUNT, 10, "the same", M (req_cores) },
    { "ReqCPUS", TR_FIELD_COUNT, 8, "cores allocated, all nodes (tracer "
      "sees the grant, not the request)", M (req_cores) },
    { "ReqMem", TR_FIELD_BYTES, 10, "memory requested per node",
      M (req_mem_bytes) },
    { "MaxRSS", TR_FIELD_BYTES, 10, "exact peak memory of the largest "
      "node (the cgroup's; sacct samples the largest task's)",
      M (mem_peak_bytes) },
    { "NodeList", TR_FIELD_STR, 15, "nodes, as a Slurm hostlist",
      DS (f_sacct_nodelist) },
    { "NNodes", TR_FIELD_COUNT, 8, "nodes", M (nodes) },
    { "NTasks", TR_FIELD_COUNT, 8, "tasks seen", M (tasks) },
    { "ReqGRES", TR_FIELD_STR, 12, "GPUs requested or bound", M (gpus) },
    { "ReqTRES", TR_FIELD_STR, 30, "cpu=N,mem=X,node=N (tracer sees the "
      "grant, not the request: as AllocTRES)", DS (f_sacct_tres) },
    { "AllocTRES", TR_FIELD_STR, 30, "cpu=N,gres/gpu=N,mem=X,node=N: "
      "cores, GPUs (one node), memory of all nodes, nodes",
      DS (f_sacct_tres) },
    { "WorkDir", TR_FIELD_STR, 20, "the job's working directory",
      M (work_dir) },
    { "MaxDiskRead", TR_FIELD_BYTES, 11, "bytes read from storage on the "
      "node (sacct: one task)", M (read_bytes) },
    { "MaxDiskWrite", TR_FIELD_BYTES, 12, "bytes written to storage on the "
      "node (sacct: one task)", M (write_bytes) },
    { "CPUEff", TR_FIELD_FRACTION, 7, "CPU time over allocated core time",
      D (f_cpu_eff) },
    { "MemEff", TR_FIELD_FRACTION, 7, "peak memory over the request",
      D (f_mem_eff) },
    { "TimeEff", TR_FIELD_FRACTION, 7, "elapsed time over the time limit",
      D (f_time_eff) },
    { "StepGroup", TR_FIELD_STR, 24, "step group used for "
      "recommendations and regressions", M (group) },
    { NULL, 0, 0, NULL, 0, NULL, NULL },
};

#undef M
#undef D
#undef DS

static const char **str_member (tr_stepsum_t *row, const tr_field_t *f)
{
    return (const char **)(void *)((char *)row + f->offset);
}

static double *num_member (tr_stepsum_t *row, const tr_field_t *f)
{
    return (double *)(void *)((char *)row + f->offset);
}

void tr_stepsum_init (tr_stepsum_t *row)
{
    memset (row, 0, sizeof (*row));
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++) {
        if (f->offset == (size_t)-1)
            continue;
        if (f->kind == TR_FIELD_STR)
            *str_member (row, f) = "";
        else
            *num_member (row, f) = NAN;
    }
    row->live_ms = NAN;
    row->cpu_exact = NAN;
}

const tr_field_t *tr_stepsum_field (const char *name)
{
    for (const tr_field_t *f = tr_stepsum_sacct_fields; f->name; f++)
        if (!strcasecmp (f->name, name))
            return f;
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++)
        if (!strcasecmp (f->name, name))
            return f;
    return NULL;
}

double tr_stepsum_num (const tr_stepsum_t *row, const tr_field_t *f)
{
    if (f->kind == TR_FIELD_STR)
        return NAN;
    if (f->num)
        return f->num (row);
    return *num_member ((tr_stepsum_t *)row, f);
}

const char *tr_stepsum_str (const tr_stepsum_t *row,
                            const tr_field_t *f,
                            char *buf,
                            size_t size)
{
    if (f->kind != TR_FIELD_STR)
        return "";
    if (f->str)
        return f->str (row, buf, size);
    if (f->offset == offsetof (tr_stepsum_t, state))
        return tr_states_name (row->state, row->oom_kills);
    return *str_member ((tr_stepsum_t *)row, f);
}

/* Derived values */

double tr_stepsum_cpu_eff (const tr_stepsum_t *row)
{
    if (!(row->elapsed_s > 0) || !(row->req_cores > 0) || isnan (row->cpu_s))
        return NAN;
    return row->cpu_s / (row->elapsed_s * row->req_cores);
}

double tr_stepsum_cpu_demand (const tr_stepsum_t *row)
{
    if (!(row->elapsed_s > 0) || isnan (row->cpu_s)
        || isnan (row->runq_wait_s))
        return NAN;
    return (row->cpu_s + row->runq_wait_s) / row->elapsed_s;
}

double tr_stepsum_mem_eff (const tr_stepsum_t *row)
{
    if (!(row->req_mem_bytes > 0) || isnan (row->mem_peak_bytes))
        return NAN;
    return row->mem_peak_bytes / row->req_mem_bytes;
}

double tr_stepsum_frac (double stalled_s, const tr_stepsum_t *row)
{
    double f;

    if (isnan (stalled_s) || !(row->elapsed_s > 0))
        return NAN;
    f = stalled_s / row->elapsed_s;
    return f > 1 ? 1 : f;
}

/* From a record */

static json_t *get (json_t *o, const char *k)
{
    return json_object_get (o, k);
}

/* Append s to sb with '\\', ';' and '=' escaped by '\\'. */
static int append_escaped (tr_strbuf_t *sb, const char *s)
{
    for (; *s; s++) {
        if ((*s == '\\' || *s == ';' || *s == '=')
            && tr_strbuf_append (sb, "\\", 1) < 0)
            return -1;
        if (tr_strbuf_append (sb, s, 1) < 0)
            return -1;
    }
    return 0;
}

static int cmp_keys (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

static const char *tags_string (json_t *tags, tr_strpool_t *pool)
{
    const char *keys[64], *key, *s = NULL;
    size_t n = 0;
    json_t *v;
    tr_strbuf_t sb = { 0 };
    int rc = 0;

    json_object_foreach (tags, key, v) {
        if (n < 64)
            keys[n++] = key;
    }
    if (n == 0)
        return tr_strpool_intern (pool, "");
    qsort (keys, n, sizeof (keys[0]), cmp_keys);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *val = json_string_value (json_object_get (tags, keys[i]));

        rc = (i && tr_strbuf_puts (&sb, ";") < 0)
             || append_escaped (&sb, keys[i]) < 0
             || tr_strbuf_puts (&sb, "=") < 0
             || append_escaped (&sb, val ? val : "") < 0 ? -1 : 0;
    }
    if (rc == 0)
        s = tr_strpool_intern (pool, tr_strbuf_str (&sb));
    tr_strbuf_free (&sb);
    return s;
}

json_t *tr_stepsum_tools_shown (json_t *tools)
{
    json_t *out = json_array (), *t;
    size_t i;

    if (!out)
        goto nomem;
    json_array_foreach (tools, i, t) {
        /* their CPU and memory are in the step's totals all the same */
        if (tr_tools_scheduler_own (tr_json_str_or (t, "name", "")))
            continue;
        if (json_array_append (out, t) < 0) {
            json_decref (out);
            goto nomem;
        }
    }
    return out;
nomem:
    errno = ENOMEM;
    return NULL;
}

static const char *tools_string (json_t *all, tr_strpool_t *pool)
{
    tr_strbuf_t sb = { 0 };
    json_t *t, *tools = tr_stepsum_tools_shown (all);
    size_t i;
    const char *s = NULL;
    int rc = tools ? 0 : -1;

    /* the collectors write tools busiest first */
    json_array_foreach (tools, i, t) {
        if (i >= 5 || rc < 0)
            break;
        rc = (i && tr_strbuf_puts (&sb, ";") < 0)
                     || append_escaped (&sb, tr_json_str_or (t, "name", "")) < 0
                     || tr_strbuf_printf (&sb, "=%.3f",
                                          json_number_value (get (t, "cpu_s")))
                            < 0
                 ? -1
                 : 0;
    }
    if (rc == 0)
        s = tr_strpool_intern (pool, tr_strbuf_str (&sb));
    tr_strbuf_free (&sb);
    json_decref (tools);
    return s;
}

bool tr_stepsum_tag (const char *tags, const char *key, char *buf,
                     size_t size)
{
    return tr_tags_get (tags, key, buf, size);
}

const char *tr_stepsum_group (char *buf,
                              size_t size,
                              const char *job_name,
                              const char *step_id,
                              const char *step_name,
                              const char *tags)
{
    char base[512];
    const char *step = step_id ? step_id : "";

    if (!tags || !tr_stepsum_tag (tags, "group", base, sizeof (base)) || !*base)
        tr_run_process_name (base, sizeof (base), job_name);
    if (step_name && *step_name && (*step >= '0' && *step <= '9'))
        step = step_name;
    snprintf (buf, size, "%s/%s", base, step);
    return buf;
}

/* Idle time and the longest idle stretch from the series: a bucket is
 * idle when its mean CPU and storage I/O are both below the fixed
 * thresholds.  Buckets end at the next bucket's start (the last one at
 * the interval, or the end of the step).
 */
static void series_idle (json_t *series, double elapsed, tr_stepsum_t *row)
{
    json_t *t = get (series, "t_s"), *m = get (series, "metrics");
    json_t *cpu = get (get (m, "cpu_cores"), "mean");
    json_t *rd = get (get (m, "io_read_Bps"), "mean");
    json_t *wr = get (get (m, "io_write_Bps"), "mean");
    json_t *cmax = get (get (m, "cpu_cores"), "max");
    double interval = tr_json_num (series, "interval_s");
    double idle = 0, run = 0, longest = 0, peak = NAN;
    size_t n = json_array_size (t);

    for (size_t i = 0; i < json_array_size (cmax); i++) {
        double v = json_number_value (json_array_get (cmax, i));
        if (isnan (peak) || v > peak)
            peak = v;
    }
    row->cpu_peak_cores = peak;
    if (n == 0 || json_array_size (cpu) != n || !(interval > 0))
        return;
    for (size_t i = 0; i < n; i++) {
        double start = json_number_value (json_array_get (t, i));
        double end = i + 1 < n ? json_number_value (json_array_get (t, i + 1))
                               : start + interval;
        double io = 0;

        if (elapsed > 0 && end > elapsed)
            end = elapsed > start ? elapsed : start;
        if (json_array_size (rd) == n)
            io += json_number_value (json_array_get (rd, i));
        if (json_array_size (wr) == n)
            io += json_number_value (json_array_get (wr, i));
        if (json_number_value (json_array_get (cpu, i)) < TR_STEPSUM_IDLE_CORES
            && io < TR_STEPSUM_IDLE_IO_BPS) {
            idle += end - start;
            run += end - start;
            if (run > longest)
                longest = run;
        }
        else
            run = 0;
    }
    row->idle_s = idle;
    row->idle_longest_s = longest;
}

/* How fast memory was still rising when it reached its peak: the slope
 * of the series' mem_bytes maxima over the last quarter (at least one
 * bucket) of the buckets up to the first that holds the peak, in bytes
 * per second.  A step killed by the OOM killer while growing peaks at
 * the kill (its memory is freed after), so this is the rate it was
 * growing at when it was killed.  NAN when the peak is in the first
 * bucket or there is no memory series.
 */
static void series_mem_rise (json_t *series, tr_stepsum_t *row)
{
    json_t *t = get (series, "t_s");
    json_t *mx = get (get (get (series, "metrics"), "mem_bytes"), "max");
    size_t n = json_array_size (t), peak = 0, first;
    double t0, t1;

    row->mem_rise_Bps = NAN;
    if (n < 2 || json_array_size (mx) != n)
        return;
    for (size_t i = 1; i < n; i++)
        if (json_number_value (json_array_get (mx, i))
            > json_number_value (json_array_get (mx, peak)))
            peak = i;
    if (peak == 0)
        return;
    first = peak - ((peak + 1) / 4 > 1 ? (peak + 1) / 4 : 1);
    t0 = json_number_value (json_array_get (t, first));
    t1 = json_number_value (json_array_get (t, peak));
    if (!(t1 > t0))
        return;
    row->mem_rise_Bps = (json_number_value (json_array_get (mx, peak))
                         - json_number_value (json_array_get (mx, first)))
                        / (t1 - t0);
}

static void from_pressure (json_t *p, tr_stepsum_t *row)
{
    bool delay = !strcmp (tr_json_str_or (p, "source", ""), "delayacct");
    const char *some = delay ? "delay_s" : "some_s";

    if (!p)
        return;
    row->psi_cpu_some_s = tr_json_num (get (p, "cpu"), some);
    row->psi_mem_some_s = tr_json_num (get (p, "memory"), some);
    row->psi_io_some_s = tr_json_num (get (p, "io"), some);
    if (!delay) {
        row->psi_mem_full_s = tr_json_num (get (p, "memory"), "full_s");
        row->psi_io_full_s = tr_json_num (get (p, "io"), "full_s");
    }
}

int tr_stepsum_stall_text (const tr_stepsum_t *row, char *buf, size_t size)
{
    const struct {
        const char *name;
        double frac;
    } res[] = {
        { "CPU", tr_stepsum_frac (row->psi_cpu_some_s, row) },
        { "memory", tr_stepsum_frac (row->psi_mem_some_s, row) },
        { "I/O", tr_stepsum_frac (row->psi_io_some_s, row) },
    };
    size_t len = 0;
    int known = 0;

    if (!buf || size == 0)
        return 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof (res) / sizeof (res[0]); i++)
        if (!isnan (res[i].frac))
            known++;
    if (known == 0) {
        snprintf (buf, size, "unknown");
        return 0;
    }
    for (size_t i = 0; i < sizeof (res) / sizeof (res[0]) && len < size;
         i++) {
        int n;
        if (isnan (res[i].frac))
            n = snprintf (buf + len, size - len, "%s%s unknown",
                          i ? ", " : "", res[i].name);
        else
            n = snprintf (buf + len, size - len, "%s%s %.1f%%",
                          i ? ", " : "", res[i].name, 100 * res[i].frac);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return known;
}

static void from_io_net_gpu (json_t *sum, tr_stepsum_t *row)
{
    json_t *io = get (sum, "io"), *proc = get (io, "proc");
    json_t *net = get (sum, "network"), *gpu = get (sum, "gpu"), *v;
    size_t i;

    if (io && strcmp (tr_json_str_or (io, "source", ""), "none")
        && get (io, "read_bytes")) {
        row->read_bytes = tr_json_num (io, "read_bytes");
        row->write_bytes = tr_json_num (io, "write_bytes");
    }
    else if (proc) {
        row->read_bytes = tr_json_num (proc, "read_bytes");
        row->write_bytes = tr_json_num (proc, "write_bytes");
    }
    row->rchar = tr_json_num (proc, "rchar");
    row->wchar = tr_json_num (proc, "wchar");
    if (net && !strcmp (tr_json_str_or (net, "scope", ""), "namespace")) {
        row->net_rx_bytes = row->net_tx_bytes = 0;
        json_array_foreach (get (net, "interfaces"), i, v) {
            row->net_rx_bytes += json_number_value (get (v, "rx_bytes"));
            row->net_tx_bytes += json_number_value (get (v, "tx_bytes"));
        }
    }
    if (gpu) {
        double util = 0, peak = NAN;
        size_t n = json_array_size (get (gpu, "devices"));

        json_array_foreach (get (gpu, "devices"), i, v) {
            double m = tr_json_num (v, "step_mem_peak_bytes");

            if (isnan (m))
                m = tr_json_num (v, "mem_used_peak_bytes");
            if (!isnan (m) && (isnan (peak) || m > peak))
                peak = m;
            util += json_number_value (get (v, "util_mean_pct"));
        }
        row->gpus_used = (double)n;
        row->gpu_util_mean_pct = n ? util / (double)n : NAN;
        row->gpu_mem_peak_bytes = peak;
    }
}

#define INTERN(member, value)                                              \
    do {                                                                   \
        if (!(row->member = tr_strpool_intern (pool, (value))))            \
            return -1;                                                     \
    } while (0)

/* A record that followed no process (tr_states_unfollowed): what it
 * holds is no measurement, so every figure is unknown, and the row is
 * incomplete.
 */
static void unmeasured (tr_stepsum_t *row)
{
    double *figures[] = {
        &row->cpu_s,          &row->user_s,          &row->system_s,
        &row->cpu_peak_cores, &row->throttled_s,     &row->runq_wait_s,
        &row->node_cpu_max_s, &row->node_cpu_min_s,  &row->mem_peak_bytes,
        &row->mem_peak_sum_bytes, &row->swap_bytes,  &row->stalled_s,
        &row->mem_rise_Bps,   &row->psi_cpu_some_s,  &row->psi_mem_some_s,
        &row->psi_mem_full_s, &row->psi_io_some_s,   &row->psi_io_full_s,
        &row->read_bytes,     &row->write_bytes,     &row->rchar,
        &row->wchar,          &row->net_rx_bytes,    &row->net_tx_bytes,
        &row->gpus_used,      &row->gpu_util_mean_pct,
        &row->gpu_mem_peak_bytes, &row->nprocs,      &row->idle_s,
        &row->idle_longest_s,
    };

    for (size_t i = 0; i < sizeof (figures) / sizeof (figures[0]); i++)
        *figures[i] = NAN;
    row->complete = 0;
    row->exact = 0;
    row->cpu_exact = 0;
}

int tr_stepsum_from_record (tr_stepsum_t *row,
                            json_t *rec,
                            const char *sig,
                            const char *path,
                            tr_strpool_t *pool)
{
    json_t *id = get (rec, "identity"), *req = get (rec, "request");
    json_t *t = get (rec, "time"), *sum = get (rec, "summary");
    json_t *cpu = get (sum, "cpu"), *mem = get (sum, "memory");
    json_t *oc = get (rec, "outcome");
    char group[600];

    tr_stepsum_init (row);
    INTERN (scheduler, tr_json_str_or (id, "scheduler", ""));
    INTERN (cluster, tr_json_str_or (id, "cluster", ""));
    INTERN (job_id, tr_json_str_or (id, "job_id", ""));
    INTERN (array_job_id, tr_json_str_or (id, "array_job_id", ""));
    INTERN (het_job_id, tr_json_str_or (id, "het_job_id", ""));
    INTERN (step_id, tr_json_str_or (id, "step_id", ""));
    INTERN (step_name, tr_json_str_or (id, "step_name", ""));
    INTERN (job_name, tr_json_str_or (id, "job_name", ""));
    INTERN (node, tr_json_str_or (id, "node", ""));
    INTERN (user, tr_json_str_or (id, "user", ""));
    INTERN (unix_group, tr_json_str_or (id, "group", ""));
    INTERN (account, tr_json_str_or (id, "account", ""));
    INTERN (partition, tr_json_str_or (id, "partition", ""));
    INTERN (qos, tr_json_str_or (id, "qos", ""));
    INTERN (work_dir, tr_json_str_or (id, "work_dir", ""));
    if (!(row->tags = tags_string (get (rec, "tags"), pool)))
        return -1;
    tr_stepsum_group (group, sizeof (group), row->job_name, row->step_id,
                      row->step_name, row->tags);
    INTERN (group, group);
    {
        struct tr_run_input in = {
            .tags = row->tags,
            .cluster = row->cluster,
            .job_name = row->job_name,
            .array_job_id = row->array_job_id,
            .command = json_string_value (get (id, "command")),
            .work_dir = json_string_value (get (id, "work_dir")),
            .task_name = json_string_value (get (id, "task_name")),
        };
        struct tr_run run;

        tr_run_identify (&in, &run);
        INTERN (run_id, run.id);
        INTERN (pipeline, run.pipeline);
        INTERN (process, run.process);
    }
    INTERN (state, tr_states_of (rec));
    INTERN (reason, tr_states_unfollowed (rec)
                        ? TR_STATES_UNFOLLOWED
                        : tr_json_str_or (oc, "reason", ""));
    {
        char text[TR_CAUSE_TEXT_MAX];
        tr_cause_t cause = tr_cause_of (rec, text, sizeof (text));
        INTERN (cause, tr_cause_name (cause));
        INTERN (cause_text, text);
        /* the scheduler's kill blames no tool (cause.h) */
        INTERN (culprit, tr_cause_blames_tool (cause)
                             ? tr_json_str_or (get (oc, "culprit"), "tool", "")
                             : "");
    }
    INTERN (gpus, tr_json_str_or (req, "gpus", ""));
    if (!(row->tools = tools_string (get (rec, "tools"), pool)))
        return -1;
    INTERN (sig, sig);
    INTERN (path, path);
    row->array_task_id = tr_json_num (id, "array_task_id");
    row->het_component = tr_json_num (id, "het_component");
    row->uid = tr_json_num (id, "uid");
    row->gid = tr_json_num (id, "gid");

    row->nodes = 1;
    row->nodes_expected = tr_json_num (req, "nodes");
    row->tasks = (double)json_array_size (get (oc, "tasks"));
    row->req_cpus_per_task = tr_json_num (req, "cpus_per_task");
    row->req_cores = tr_merge_request_cores (req);
    if (!(row->req_cores > 0))
        row->req_cores = NAN;
    row->req_mem_bytes = tr_json_num (req, "mem_bytes");
    if (!(row->req_mem_bytes > 0))
        row->req_mem_bytes = NAN;
    row->time_limit_s = tr_json_num (req, "time_limit_s");
    /* Slurm gives a job that asked for no limit, in a partition without
     * one, 365 days: that is no limit either
     */
    if (!strcmp (tr_json_str_or (req, "time_limit", ""), "UNLIMITED")
        || (!strcmp (row->scheduler, "slurm")
            && row->time_limit_s == TR_STEPSUM_SLURM_YEAR_S)) {
        row->time_limit_s = NAN;
        row->time_unlimited = 1;
    }

    row->start_ms = tr_json_num (t, "start_unix_ms");
    row->end_ms = tr_json_num (t, "end_unix_ms");
    row->submit_ms = tr_json_num (t, "submit_unix_ms");
    row->queue_wait_s =
        (tr_json_num (t, "job_start_unix_ms") - row->submit_ms) / 1000.0;
    if (row->queue_wait_s < 0)
        row->queue_wait_s = NAN;
    row->elapsed_s = tr_json_num (t, "elapsed_s");
    if (isnan (row->elapsed_s) && !isnan (row->end_ms))
        row->elapsed_s = (row->end_ms - row->start_ms) / 1000.0;
    row->exit_code = tr_json_num (oc, "exit_code");
    row->signal = tr_json_num (oc, "signal");
    row->complete = json_is_true (get (oc, "complete")) ? 1 : 0;
    row->exact = json_is_true (get (cpu, "exact"))
                 && json_is_true (get (mem, "exact")) ? 1 : 0;
    row->cpu_exact = json_is_true (get (cpu, "exact")) ? 1 : 0;

    row->cpu_s = tr_json_num (cpu, "total_s");
    row->user_s = tr_json_num (cpu, "user_s");
    row->system_s = tr_json_num (cpu, "system_s");
    row->throttled_s = tr_json_num (cpu, "throttled_s");
    row->runq_wait_s = tr_json_num (cpu, "runq_wait_s");
    row->node_cpu_max_s = row->node_cpu_min_s = row->cpu_s;

    row->mem_peak_bytes = row->mem_peak_sum_bytes = tr_json_num (mem, "peak_"
                                                                      "bytes");
    row->mem_limit_bytes = tr_json_num (mem, "limit_bytes");
    row->swap_bytes = tr_json_num (mem, "swap_bytes");
    {
        json_t *pg = get (rec, "progress");
        row->stalled_s = json_is_true (get (pg, "stalled"))
                             ? tr_json_num (pg, "stalled_s")
                             : NAN;
    }
    row->oom_kills = tr_states_oom_kills (rec);
    from_pressure (get (sum, "pressure"), row);
    from_io_net_gpu (sum, row);
    row->nprocs = tr_json_num (get (sum, "processes"), "count");
    series_idle (get (rec, "series"), row->elapsed_s, row);
    series_mem_rise (get (rec, "series"), row);
    if (tr_states_unfollowed (rec))
        unmeasured (row);
    return 0;
}

#undef INTERN

/* Merging the nodes of a step */

static double add (double a, double b)
{
    if (isnan (a))
        return b;
    if (isnan (b))
        return a;
    return a + b;
}

static double max2 (double a, double b)
{
    return isnan (a) || b > a ? b : a;
}

static double min2 (double a, double b)
{
    return isnan (a) || b < a ? b : a;
}

/* A sum that is only meaningful when every node has it. */
static double add_all (double a, double b)
{
    return isnan (a) || isnan (b) ? NAN : a + b;
}

#define NODE_LIST_MAX 4096

int tr_stepsum_merge (tr_stepsum_t *dst,
                      const tr_stepsum_t *src,
                      tr_strpool_t *pool)
{
    if (strlen (dst->node) < NODE_LIST_MAX) {
        tr_strbuf_t sb = { 0 };
        const char *s = NULL;

        if (tr_strbuf_printf (&sb, "%s,%s", dst->node, src->node) == 0)
            s = tr_strpool_intern (pool, tr_strbuf_str (&sb));
        tr_strbuf_free (&sb);
        if (!s)
            return -1;
        dst->node = s;
    }
    if (tr_states_rank (src->state) > tr_states_rank (dst->state)) {
        dst->state = src->state;
        dst->reason = src->reason;
    }
    if (!*dst->reason)
        dst->reason = src->reason;
    /* the earliest class in the order of decision (cause.h) */
    if (*src->cause
        && (!*dst->cause
            || tr_cause_from_name (src->cause)
                   < tr_cause_from_name (dst->cause))) {
        dst->cause = src->cause;
        dst->cause_text = src->cause_text;
        dst->culprit = src->culprit;
    }
    dst->nodes = add (dst->nodes, src->nodes);
    dst->nodes_expected = max2 (dst->nodes_expected, src->nodes_expected);
    dst->tasks = add (dst->tasks, src->tasks);
    dst->req_cores = add_all (dst->req_cores, src->req_cores);
    dst->req_mem_bytes = max2 (dst->req_mem_bytes, src->req_mem_bytes);
    dst->time_limit_s = max2 (dst->time_limit_s, src->time_limit_s);
    dst->time_unlimited = max2 (dst->time_unlimited, src->time_unlimited);
    dst->start_ms = min2 (dst->start_ms, src->start_ms);
    dst->end_ms = isnan (dst->end_ms) || isnan (src->end_ms)
                      ? NAN : max2 (dst->end_ms, src->end_ms);
    dst->submit_ms = min2 (dst->submit_ms, src->submit_ms);
    dst->queue_wait_s = max2 (dst->queue_wait_s, src->queue_wait_s);
    dst->elapsed_s = max2 (dst->elapsed_s, src->elapsed_s);
    dst->exit_code = max2 (dst->exit_code, src->exit_code);
    dst->live_ms = min2 (dst->live_ms, src->live_ms);
    dst->cpu_exact = isnan (dst->cpu_exact) || isnan (src->cpu_exact)
                         ? NAN
                         : fmin (dst->cpu_exact, src->cpu_exact);
    dst->live_stale = dst->live_stale || src->live_stale;
    if (isnan (dst->signal) || dst->signal == 0)
        dst->signal = src->signal;
    dst->complete = dst->complete && src->complete ? 1 : 0;
    dst->exact = dst->exact && src->exact ? 1 : 0;
    dst->cpu_s = add (dst->cpu_s, src->cpu_s);
    dst->user_s = add (dst->user_s, src->user_s);
    dst->system_s = add (dst->system_s, src->system_s);
    dst->cpu_peak_cores = max2 (dst->cpu_peak_cores, src->cpu_peak_cores);
    dst->throttled_s = add (dst->throttled_s, src->throttled_s);
    dst->runq_wait_s = add (dst->runq_wait_s, src->runq_wait_s);
    dst->node_cpu_max_s = max2 (dst->node_cpu_max_s, src->node_cpu_max_s);
    dst->node_cpu_min_s = min2 (dst->node_cpu_min_s, src->node_cpu_min_s);
    dst->mem_peak_bytes = max2 (dst->mem_peak_bytes, src->mem_peak_bytes);
    dst->mem_peak_sum_bytes =
        add (dst->mem_peak_sum_bytes, src->mem_peak_sum_bytes);
    dst->mem_limit_bytes = max2 (dst->mem_limit_bytes, src->mem_limit_bytes);
    dst->swap_bytes = add (dst->swap_bytes, src->swap_bytes);
    dst->stalled_s = max2 (dst->stalled_s, src->stalled_s);
    dst->oom_kills = add (dst->oom_kills, src->oom_kills);
    dst->mem_rise_Bps = max2 (dst->mem_rise_Bps, src->mem_rise_Bps);
    /* stall time: the worst node, as a fraction of the step's time */
    dst->psi_cpu_some_s = max2 (dst->psi_cpu_some_s, src->psi_cpu_some_s);
    dst->psi_mem_some_s = max2 (dst->psi_mem_some_s, src->psi_mem_some_s);
    dst->psi_mem_full_s = max2 (dst->psi_mem_full_s, src->psi_mem_full_s);
    dst->psi_io_some_s = max2 (dst->psi_io_some_s, src->psi_io_some_s);
    dst->psi_io_full_s = max2 (dst->psi_io_full_s, src->psi_io_full_s);
    dst->read_bytes = add (dst->read_bytes, src->read_bytes);
    dst->write_bytes = add (dst->write_bytes, src->write_bytes);
    dst->rchar = add (dst->rchar, src->rchar);
    dst->wchar = add (dst->wchar, src->wchar);
    dst->net_rx_bytes = add (dst->net_rx_bytes, src->net_rx_bytes);
    dst->net_tx_bytes = add (dst->net_tx_bytes, src->net_tx_bytes);
    if (src->gpus_used > 0) {
        double n = dst->gpus_used > 0 ? dst->gpus_used : 0;

        dst->gpu_util_mean_pct =
            n > 0 ? (dst->gpu_util_mean_pct * n
                     + src->gpu_util_mean_pct * src->gpus_used)
                        / (n + src->gpus_used)
                  : src->gpu_util_mean_pct;
        dst->gpus_used = n + src->gpus_used;
    }
    dst->gpu_mem_peak_bytes =
        max2 (dst->gpu_mem_peak_bytes, src->gpu_mem_peak_bytes);
    dst->nprocs = add (dst->nprocs, src->nprocs);
    /* idle only where every node was: the least idle node */
    dst->idle_s = min2 (dst->idle_s, src->idle_s);
    dst->idle_longest_s = min2 (dst->idle_longest_s, src->idle_longest_s);
    if (strcmp (dst->sig, src->sig))
        dst->sig = tr_strpool_intern (pool, TR_STEPSUM_SIG_UNSIGNED);
    return 0;
}


/* Jobs */

const char *tr_stepsum_state_name (const char *state, double oom_kills)
{
    return tr_states_sacct (state, oom_kills);
}

const char *tr_stepsum_exit_text (const tr_stepsum_t *row,
                                  char *buf,
                                  size_t size)
{
    double code = row->exit_code, sig = row->signal;

    /* Slurm's SIG_OOM (253) as a wait status: WTERMSIG 125 */
    if (!strcmp (tr_stepsum_state_name (row->state, row->oom_kills),
                 TR_STATES_OOM)) {
        snprintf (buf, size, "0:125");
        return buf;
    }
    if (isnan (code) && isnan (sig)) {
        snprintf (buf, size, "%s", "");
        return buf;
    }
    /* Slurm keeps a step's largest raw wait status, and any exit code
     * but 0 is larger than a signal: a signal is the second half only
     * where no task exited otherwise (a code of 128+N is the same
     * signal N, as a shell reports it)
     */
    if (sig > 0 && (isnan (code) || code == 0 || code == 128 + sig)) {
        snprintf (buf, size, "0:%.0f", sig);
        return buf;
    }
    /* sacct takes 128 off a code of 128 or more (a shell's 128+N) */
    if (code >= 128)
        code -= 128;
    snprintf (buf, size, "%.0f:0", isnan (code) ? 0 : code);
    return buf;
}

const char *tr_stepsum_name_or_id (json_t *id,
                                   const char *name_key,
                                   const char *id_key,
                                   char *buf,
                                   size_t size)
{
    json_t *name = json_object_get (id, name_key);
    json_t *num = json_object_get (id, id_key);

    if (json_is_string (name) && *json_string_value (name))
        return json_string_value (name);
    if (json_is_integer (num)) {
        snprintf (buf, size, "%lld", (long long)json_integer_value (num));
        return buf;
    }
    return "?";
}

const char *tr_stepsum_exit_of (json_t *o,
                                const char *state,
                                char *buf,
                                size_t size)
{
    tr_stepsum_t row;

    tr_stepsum_init (&row);
    row.state = state ? state : "";
    row.exit_code = tr_json_num (o, "exit_code");
    row.signal = tr_json_num (o, "signal");
    row.oom_kills = tr_json_num (o, "oom_kills");
    return tr_stepsum_exit_text (&row, buf, size);
}

/* One name of a node list: its prefix and numeric suffix (width digits,
 * 0 when it has none).
 */
struct hostname {
    const char *name;
    size_t len, prefix, width;
    long num;
};

static const char *next_host (const char *p, struct hostname *h)
{
    const char *e = strchr (p, ',');
    size_t i;

    h->name = p;
    h->len = e ? (size_t)(e - p) : strlen (p);
    for (i = h->len; i > 0 && isdigit ((unsigned char)p[i - 1]); i--)
        ;
    h->prefix = i;
    h->width = h->len - i;
    if (h->width == 0 || h->width > 9) {
        h->prefix = h->len;
        h->width = 0;
    }
    h->num = h->width ? strtol (p + i, NULL, 10) : 0;
    return e ? e + 1 : p + h->len;
}

static bool same_run (const struct hostname *a, const struct hostname *b)
{
    return a->width && b->width == a->width && b->prefix == a->prefix
           && !memcmp (a->name, b->name, a->prefix);
}

/* "n[1-3,5],gpu7" from "n1,n2,n3,n5,gpu7": names of one prefix and
 * number width (leading zeros kept) together, as Slurm writes a
 * hostlist; a merged row's list is in natural order already.
 */
static const char *tr_stepsum_hostlist (const char *nodes, char *buf,
                                        size_t size)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    struct hostname *h = NULL, *bigger;
    size_t n = 0, alloc = 0;

    for (const char *p = nodes; *p; n++) {
        if (n == alloc) {
            alloc = alloc ? 2 * alloc : 16;
            if (!(bigger = realloc (h, alloc * sizeof (*h))))
                goto plain;
            h = bigger;
        }
        p = next_host (p, &h[n]);
    }
    for (size_t i = 0, j; i < n; i = j) {
        if (sb.len)
            tr_strbuf_puts (&sb, ",");
        tr_strbuf_printf (&sb, "%.*s", (int)h[i].prefix, h[i].name);
        for (j = i + 1; j < n && same_run (&h[i], &h[j]); j++)
            ;
        if (!h[i].width)
            continue;
        if (j - i == 1) {
            tr_strbuf_printf (&sb, "%0*ld", (int)h[i].width, h[i].num);
            continue;
        }
        tr_strbuf_puts (&sb, "[");
        for (size_t k = i, m; k < j; k = m + 1) {
            for (m = k; m + 1 < j && h[m + 1].num == h[m].num + 1; m++)
                ;
            tr_strbuf_printf (&sb, "%s%0*ld", k > i ? "," : "",
                              (int)h[k].width, h[k].num);
            if (m > k)
                tr_strbuf_printf (&sb, "-%0*ld", (int)h[m].width, h[m].num);
        }
        tr_strbuf_puts (&sb, "]");
    }
    if (sb.len && tr_strbuf_str (&sb)) {
        snprintf (buf, size, "%s", tr_strbuf_str (&sb));
        tr_strbuf_free (&sb);
        free (h);
        return buf;
    }
plain:
    tr_strbuf_free (&sb);
    free (h);
    snprintf (buf, size, "%s", nodes);
    return buf;
}

/* The job's outcome: the batch step's; else the worst of its steps but
 * the extern step (which only holds the allocation).
 */
static void job_outcome (tr_stepsum_t *job, const tr_stepsum_t *step,
                         bool first)
{
    bool batch = !strcmp (step->step_id, "batch");

    bool ext = !strcmp (step->step_id, "extern");

    if (job->job_outcome_batch && !batch)
        return;
    if (!batch && !first && !job->job_outcome_extern
        && (ext || tr_states_rank (step->state)
                       <= tr_states_rank (job->state)))
        return;
    if (ext && !first && !job->job_outcome_extern)
        return;
    job->state = step->state;
    job->reason = step->reason;
    job->cause = step->cause;
    job->cause_text = step->cause_text;
    job->culprit = step->culprit;
    job->exit_code = step->exit_code;
    job->signal = step->signal;
    /* Slurm gives a job it ended (cancelled, out of time) no exit code
     * of its own: 0:0, the signal is its steps' to say
     */
    if (!strcmp (step->state, "cancelled") || !strcmp (step->state, "timeout")) {
        job->exit_code = 0;
        job->signal = 0;
    }
    job->oom_kills = step->oom_kills;
    job->job_outcome_batch = batch;
    job->job_outcome_extern = ext;
}

int tr_stepsum_job_add (tr_stepsum_t *job,
                        const tr_stepsum_t *step,
                        tr_strpool_t *pool)
{
    bool first = !*job->job_id;

    if (first) {
        tr_stepsum_t fresh;

        tr_stepsum_init (&fresh);
        fresh.scheduler = step->scheduler;
        fresh.cluster = step->cluster;
        fresh.job_id = step->job_id;
        fresh.array_job_id = step->array_job_id;
        fresh.het_job_id = step->het_job_id;
        fresh.job_name = step->job_name;
        fresh.user = step->user;
        fresh.unix_group = step->unix_group;
        fresh.account = step->account;
        fresh.partition = step->partition;
        fresh.qos = step->qos;
        fresh.work_dir = step->work_dir;
        fresh.tags = step->tags;
        fresh.run_id = step->run_id;
        fresh.pipeline = step->pipeline;
        fresh.process = step->process;
        fresh.gpus = step->gpus;
        fresh.sig = step->sig;
        fresh.path = step->path;
        fresh.node = step->node;
        fresh.array_task_id = step->array_task_id;
        fresh.het_component = step->het_component;
        fresh.uid = step->uid;
        fresh.gid = step->gid;
        fresh.complete = step->complete;
        fresh.exact = step->exact;
        *job = fresh;
    }
    else if (strcmp (job->sig, step->sig))
        job->sig = tr_strpool_intern (pool, TR_STEPSUM_SIG_UNSIGNED);
    /* a step that knows the job's array (not every step's record does) */
    if (!*job->array_job_id && *step->array_job_id) {
        job->array_job_id = step->array_job_id;
        job->array_task_id = step->array_task_id;
    }
    if (!*job->work_dir)
        job->work_dir = step->work_dir;
    if (!job->sig)
        return -1;
    job_outcome (job, step, first);
    /* the largest step holds the allocation's nodes and cores */
    if (!(job->nodes >= step->nodes)) {
        job->nodes = step->nodes;
        job->node = step->node;
    }
    job->nodes_expected = max2 (job->nodes_expected, step->nodes_expected);
    job->req_cores = max2 (job->req_cores, step->req_cores);
    job->req_cpus_per_task =
        max2 (job->req_cpus_per_task, step->req_cpus_per_task);
    job->req_mem_bytes = max2 (job->req_mem_bytes, step->req_mem_bytes);
    job->time_limit_s = max2 (job->time_limit_s, step->time_limit_s);
    job->time_unlimited = max2 (job->time_unlimited, step->time_unlimited);
    job->start_ms = min2 (job->start_ms, step->start_ms);
    job->end_ms = (!first && isnan (job->end_ms)) || isnan (step->end_ms)
                      ? NAN : max2 (job->end_ms, step->end_ms);
    if (!isnan (job->end_ms) && !isnan (job->start_ms))
        job->elapsed_s = (job->end_ms - job->start_ms) / 1000.0;
    else
        job->elapsed_s = max2 (job->elapsed_s, step->elapsed_s);
    job->submit_ms = min2 (job->submit_ms, step->submit_ms);
    job->queue_wait_s = max2 (job->queue_wait_s, step->queue_wait_s);
    job->complete = job->complete && step->complete ? 1 : 0;
    job->exact = job->exact && step->exact ? 1 : 0;
    job->cpu_s = add (job->cpu_s, step->cpu_s);
    job->user_s = add (job->user_s, step->user_s);
    job->system_s = add (job->system_s, step->system_s);
    job->throttled_s = add (job->throttled_s, step->throttled_s);
    job->runq_wait_s = add (job->runq_wait_s, step->runq_wait_s);
    job->mem_peak_bytes = max2 (job->mem_peak_bytes, step->mem_peak_bytes);
    job->mem_limit_bytes = max2 (job->mem_limit_bytes, step->mem_limit_bytes);
    job->swap_bytes = max2 (job->swap_bytes, step->swap_bytes);
    job->stalled_s = max2 (job->stalled_s, step->stalled_s);
    job->read_bytes = add (job->read_bytes, step->read_bytes);
    job->write_bytes = add (job->write_bytes, step->write_bytes);
    job->rchar = add (job->rchar, step->rchar);
    job->wchar = add (job->wchar, step->wchar);
    job->net_rx_bytes = add (job->net_rx_bytes, step->net_rx_bytes);
    job->net_tx_bytes = add (job->net_tx_bytes, step->net_tx_bytes);
    job->gpus_used = max2 (job->gpus_used, step->gpus_used);
    job->gpu_mem_peak_bytes =
        max2 (job->gpu_mem_peak_bytes, step->gpu_mem_peak_bytes);
    job->nprocs = add (job->nprocs, step->nprocs);
    job->live_ms = min2 (job->live_ms, step->live_ms);
    job->cpu_exact = isnan (job->cpu_exact) || isnan (step->cpu_exact)
                         ? NAN
                         : fmin (job->cpu_exact, step->cpu_exact);
    job->live_stale = job->live_stale || step->live_stale;
    return 0;
}

/* Text */

static int fmt_bytes (tr_strbuf_t *sb, double v)
{
    char buf[32];

    return tr_strbuf_puts (sb, tr_units_bytes_sacct (buf, sizeof (buf), v));
}

static int fmt_seconds (tr_strbuf_t *sb, double v)
{
    char buf[64];

    return tr_strbuf_puts (sb, tr_units_duration (buf, sizeof (buf), v));
}

static int fmt_time (tr_strbuf_t *sb, double ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    char buf[64];

    if (!localtime_r (&t, &tm) || !strftime (buf, sizeof (buf),
                                             "%Y-%m-%dT%H:%M:%S", &tm))
        return tr_strbuf_printf (sb, "%.0f", ms);
    return tr_strbuf_puts (sb, buf);
}

int tr_stepsum_format (tr_strbuf_t *sb,
                       const tr_stepsum_t *row,
                       const tr_field_t *f,
                       bool raw)
{
    char buf[600];
    double v;

    if (f->kind == TR_FIELD_STR)
        return tr_strbuf_puts (sb, tr_stepsum_str (row, f, buf,
                                                   sizeof (buf)));
    if (row->time_unlimited == 1
        && f->offset == offsetof (tr_stepsum_t, time_limit_s))
        return tr_strbuf_puts (sb, TR_STEPSUM_UNLIMITED);
    v = tr_stepsum_num (row, f);
    if (isnan (v) || isinf (v))
        return 0;
    if (raw)
        return tr_strbuf_printf (sb, f->kind == TR_FIELD_COUNT
                                         || f->kind == TR_FIELD_TIME
                                     ? "%.0f" : "%.17g", v);
    switch (f->kind) {
    case TR_FIELD_BYTES:
        return fmt_bytes (sb, v);
    case TR_FIELD_SECONDS:
        return fmt_seconds (sb, v);
    case TR_FIELD_TIME:
        return fmt_time (sb, v);
    case TR_FIELD_FRACTION:
        return tr_strbuf_printf (sb, "%.1f%%", 100 * v);
    case TR_FIELD_COUNT:
        return tr_strbuf_printf (sb, "%.0f", v);
    default:
        return tr_strbuf_printf (sb, "%.2f", v);
    }
}

/* sacct's CPU times: MM:SS.mmm under an hour, else [D-]HH:MM:SS */
static bool sacct_cpu_time (const tr_field_t *f)
{
    return !strcmp (f->name, "TotalCPU") || !strcmp (f->name, "UserCPU")
           || !strcmp (f->name, "SystemCPU");
}

static int fmt_cpu_time (tr_strbuf_t *sb, double v)
{
    long long ms = llround (v * 1000);

    if (ms >= 3600000)
        return fmt_seconds (sb, (double)(ms / 1000));
    return tr_strbuf_printf (sb, "%02lld:%02lld.%03lld", ms / 60000,
                             ms / 1000 % 60, ms % 1000);
}

int tr_stepsum_format_styled (tr_strbuf_t *sb,
                              const tr_stepsum_t *row,
                              const tr_field_t *f,
                              const tr_stepsum_style_t *style)
{
    static const char units[] = "KMGTP";
    double v = tr_stepsum_num (row, f);
    const char *u;

    if (!isnan (v) && !isinf (v) && v >= 0 && sacct_cpu_time (f))
        return fmt_cpu_time (sb, v);
    if (isnan (v) || isinf (v) || f->kind == TR_FIELD_STR
        || (row->time_unlimited == 1
            && f->offset == offsetof (tr_stepsum_t, time_limit_s)))
        return tr_stepsum_format (sb, row, f, false);
    if (f->kind == TR_FIELD_BYTES && style->units
        && (u = strchr (units, style->units)))
        return tr_strbuf_printf (sb, "%.2f%c",
                                 v / pow (1024, (double)(u - units + 1)),
                                 style->units);
    if (f->kind == TR_FIELD_BYTES && (style->parsable || style->noconvert))
        return tr_strbuf_printf (sb, "%.0f", v);
    if (f->kind == TR_FIELD_FRACTION && style->parsable)
        return tr_strbuf_printf (sb, "%.2f", 100 * v);
    return tr_stepsum_format (sb, row, f, false);
}

int tr_stepsum_cmp (const tr_stepsum_t *a,
                    const tr_stepsum_t *b,
                    const tr_field_t *f)
{
    double x, y;

    if (f->kind == TR_FIELD_STR) {
        char ba[600], bb[600];

        return tr_merge_natcmp (tr_stepsum_str (a, f, ba, sizeof (ba)),
                                tr_stepsum_str (b, f, bb, sizeof (bb)));
    }
    x = tr_stepsum_num (a, f);
    y = tr_stepsum_num (b, f);
    if (isnan (x) || isnan (y))
        return isnan (x) - isnan (y);
    return (x > y) - (x < y);
}

int tr_stepsum_cmp_id (const tr_stepsum_t *a, const tr_stepsum_t *b)
{
    int c = strcmp (a->cluster, b->cluster);
    char ia[300], ib[300];

    /* by the id a person reads: an array's tasks run (and their own ids
     * are given) in no particular order
     */
    if (!c)
        c = tr_merge_natcmp (f_jobid (a, ia, sizeof (ia)),
                             f_jobid (b, ib, sizeof (ib)));
    if (!c)
        c = tr_merge_natcmp (a->job_id, b->job_id);
    return c ? c : tr_merge_stepcmp (a->step_id, b->step_id);
}

int tr_stepsum_cmp_id_ptr (const void *pa, const void *pb)
{
    return tr_stepsum_cmp_id (*(const tr_stepsum_t *const *)pa,
                              *(const tr_stepsum_t *const *)pb);
}

json_t *tr_stepsum_to_json (const tr_stepsum_t *row)
{
    json_t *o = json_object ();
    char buf[600];

    if (!o)
        return NULL;
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++) {
        json_t *v;

        if (f->kind == TR_FIELD_STR) {
            const char *s = tr_stepsum_str (row, f, buf, sizeof (buf));

            if (!*s)
                continue;
            v = json_string_nocheck (s);
        }
        else if (row->time_unlimited == 1
                 && f->offset == offsetof (tr_stepsum_t, time_limit_s))
            v = json_string (TR_STEPSUM_UNLIMITED);
        else {
            double d = tr_stepsum_num (row, f);

            if (isnan (d) || isinf (d))
                continue;
            if ((f->kind == TR_FIELD_COUNT || f->kind == TR_FIELD_TIME)
                && d == floor (d) && fabs (d) < 9e15)
                v = json_integer ((json_int_t)d);
            else
                v = json_real (d);
        }
        if (!v || json_object_set_new_nocheck (o, f->name, v) < 0) {
            json_decref (o);
            return NULL;
        }
    }
    return o;
}

/* Index lines */

#define TSV_MAGIC "#tracer-stepsum 4"

int tr_stepsum_tsv_header (tr_strbuf_t *sb)
{
    if (tr_strbuf_puts (sb, TSV_MAGIC) < 0)
        return -1;
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++)
        if (f->offset != (size_t)-1
            && tr_strbuf_printf (sb, "\t%s", f->name) < 0)
            return -1;
    return 0;
}

int tr_stepsum_tsv_check_header (const char *hdr, tr_error_t *error)
{
    tr_strbuf_t sb = { 0 };
    int rc = -1;

    if (tr_stepsum_tsv_header (&sb) < 0) {
        tr_errprintf (error, "out of memory");
        errno = ENOMEM;
    }
    else if (strcmp (hdr, tr_strbuf_str (&sb))) {
        tr_errprintf (error, "not a version 4 step summary file (header "
                      "\"%.40s\")", hdr);
        errno = EINVAL;
    }
    else
        rc = 0;
    tr_strbuf_free (&sb);
    return rc;
}

int tr_stepsum_to_tsv (tr_strbuf_t *sb, const tr_stepsum_t *row)
{
    bool first = true;

    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++) {
        if (f->offset == (size_t)-1)
            continue;
        if (!first && tr_strbuf_append (sb, "\t", 1) < 0)
            return -1;
        first = false;
        if (f->kind == TR_FIELD_STR) {
            for (const char *s = *str_member ((tr_stepsum_t *)row, f); *s;
                 s++) {
                const char *esc = *s == '\\' ? "\\\\" : *s == '\t' ? "\\t"
                                  : *s == '\n'               ? "\\n"
                                                             : NULL;
                if (esc ? tr_strbuf_puts (sb, esc) < 0
                        : tr_strbuf_append (sb, s, 1) < 0)
                    return -1;
            }
        }
        else {
            double v = *num_member ((tr_stepsum_t *)row, f);

            if (!isnan (v) && !isinf (v)
                && tr_strbuf_printf (sb, "%.17g", v) < 0)
                return -1;
        }
    }
    return 0;
}

/* Unescape a field in place. */
static int unescape (char *s)
{
    char *w = s;

    for (; *s; s++) {
        if (*s == '\\') {
            s++;
            if (*s == '\\')
                *w++ = '\\';
            else if (*s == 't')
                *w++ = '\t';
            else if (*s == 'n')
                *w++ = '\n';
            else
                return -1;
        }
        else
            *w++ = *s;
    }
    *w = '\0';
    return 0;
}

int tr_stepsum_from_tsv (tr_stepsum_t *row,
                         char *line,
                         tr_strpool_t *pool,
                         tr_error_t *error)
{
    char *p = line;

    tr_stepsum_init (row);
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++) {
        char *tab, *end;

        if (f->offset == (size_t)-1)
            continue;
        if (!p) {
            tr_errprintf (error, "field %s: missing", f->name);
            errno = EINVAL;
            return -1;
        }
        if ((tab = strchr (p, '\t')))
            *tab = '\0';
        if (f->kind == TR_FIELD_STR) {
            const char *s;

            if (unescape (p) < 0) {
                tr_errprintf (error, "field %s: bad escape", f->name);
                errno = EINVAL;
                return -1;
            }
            if (!(s = tr_strpool_intern (pool, p))) {
                tr_errprintf (error, "out of memory");
                return -1;
            }
            *str_member (row, f) = s;
        }
        else if (*p) {
            double v;

            errno = 0;
            v = strtod (p, &end);
            if (errno || *end || isnan (v) || isinf (v)) {
                tr_errprintf (error, "field %s: \"%.30s\" is not a number",
                              f->name, p);
                errno = EINVAL;
                return -1;
            }
            *num_member (row, f) = v;
        }
        p = tab ? tab + 1 : NULL;
    }
    if (p) {
        tr_errprintf (error, "more fields than the header names");
        errno = EINVAL;
        return -1;
    }
    /* an index line written before the scheduler's kill blamed no tool */
    if (!tr_cause_blames_tool (tr_cause_from_name (row->cause)))
        row->culprit = "";
    return 0;
}
