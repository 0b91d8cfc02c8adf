/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_STEPSUM_H
#define TRACER_STEPSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/util/strbuf.h"
#include "states.h"

/* Step summaries: the few dozen numbers and names of a record that
 * listings, recommendations, regressions and waste reports work on.  A
 * record is a few kilobytes of JSON and must be verified before it is
 * believed; a summary is a flat row that is cheap to keep a million of,
 * to write to the index and to read back.  One summary describes one
 * record (one step on one node); tr_stepsum_merge adds the rows of a
 * step's nodes into one row for the step.
 *
 * Unknown numbers are NAN, never 0: "no memory request" and "0 bytes
 * requested" are different facts.  Strings are never NULL ("" when
 * unknown) and belong to a tr_strpool_t, which interns them so that a
 * million rows share one copy of each user, account and partition name.
 */

/* A set of interned strings.  Interning the same text twice gives the
 * same pointer.  Strings live until the pool is destroyed.
 */
typedef struct tr_strpool tr_strpool_t;

tr_strpool_t *tr_strpool_create (void);
void tr_strpool_destroy (tr_strpool_t *pool);

/* The pool's copy of s (NULL is taken as "").  NULL with errno = ENOMEM. */
const char *tr_strpool_intern (tr_strpool_t *pool, const char *s);

/* Same, for the first len bytes of s (which need not be terminated). */
const char *tr_strpool_intern_n (tr_strpool_t *pool,
                                 const char *s,
                                 size_t len);

/* Signature status of the record a row came from. */
#define TR_STEPSUM_SIG_VALID "valid"
#define TR_STEPSUM_SIG_UNSIGNED "unsigned"
#define TR_STEPSUM_SIG_LIVE "live"       /* a live summary (livesum.h) */

/* The time limit Slurm gives a job that asked for no limit in a
 * partition without one (365 days): the listing shows it as UNLIMITED.
 * TR_JOBSTATE_YEAR_S (libtracer/node/jobstate.h) is the same.
 */
#define TR_STEPSUM_SLURM_YEAR_S 31536000L

/* Series buckets count as idle when the step used less than this many
 * cores and moved less than TR_STEPSUM_IDLE_IO_BPS bytes per second of
 * storage I/O in them.  These define idle_s and idle_longest_s, which
 * the index keeps, so they are fixed; the diagnosis thresholds that judge
 * those two are configurable.
 */
#define TR_STEPSUM_IDLE_CORES 0.05

/* How every view writes the time limit of a job that has none. */
#define TR_STEPSUM_UNLIMITED "UNLIMITED"
#define TR_STEPSUM_IDLE_IO_BPS 65536.0

typedef struct tr_stepsum {
    /* Identity (strings from the pool) */
    const char *scheduler;
    const char *cluster;
    const char *job_id;
    const char *array_job_id;   /* "" when not an array task */
    const char *het_job_id;     /* "" when not a heterogeneous job */
    const char *step_id;
    const char *step_name;
    const char *job_name;
    const char *node;           /* a merged row: the nodes, "n1,n2,..." */
    const char *user;
    const char *unix_group;     /* identity.group, the user's group name */
    const char *account;
    const char *partition;
    const char *qos;
    const char *work_dir;       /* identity.work_dir, the controller's */
    const char *tags;           /* "k=v" pairs, sorted by key, joined by
                                 * ';' (';' and '\\' in values escaped with
                                 * '\\') */
    const char *group;          /* the step group (tr_stepsum_group) */
    const char *run_id;         /* the pipeline run (tr_run_identify),
                                 * "" when in none */
    const char *pipeline;       /* the run's pipeline, "" when unknown */
    const char *process;        /* the rule or process in the run */
    const char *state;          /* outcome.state (a merged row: the worst) */
    const char *reason;         /* outcome.reason, "" if none */
    const char *cause;          /* cause class (cause.h), "" if none; a
                                 * merged row: the earliest class of its
                                 * nodes' */
    const char *cause_text;     /* its evidence, one line */
    const char *culprit;        /* outcome.culprit.tool, "" if none */
    const char *gpus;           /* request.gpus */
    const char *tools;          /* up to 5 busiest tools, "name=cpu_s"
                                 * joined by ';', busiest first */
    const char *sig;            /* TR_STEPSUM_SIG_* */
    const char *path;           /* the record's path relative to the
                                 * store root; a merged row: the first */
    double array_task_id;       /* NAN when not an array task */
    double het_component;
    double uid;
    double gid;

    /* Request */
    double nodes;               /* nodes this row covers (1 for a record) */
    double nodes_expected;      /* request.nodes */
    double tasks;               /* tasks observed (outcome.tasks) */
    double req_cpus_per_task;
    double req_cores;           /* cores granted, summed over the nodes */
    double req_mem_bytes;       /* per node */
    double time_limit_s;        /* NAN when unknown or unlimited */
    double time_unlimited;      /* 1 when the job had no time limit
                                 * (request.time_limit "UNLIMITED", or a
                                 * Slurm limit of exactly 365 days) */

    /* Time (ms since the epoch) */
    double start_ms;
    double end_ms;              /* NAN while running */
    double submit_ms;           /* the job's submit time (controller), the
                                 * earliest node's; NAN when unknown */
    double queue_wait_s;        /* the job's start minus its submit time,
                                 * NAN when unknown */
    double elapsed_s;           /* the longest node */

    /* Outcome */
    double exit_code;
    double signal;
    double complete;            /* 1 or 0 */
    double exact;               /* 1 when CPU and memory are exact */

    /* CPU */
    double cpu_s;               /* summed over nodes */
    double user_s;
    double system_s;
    double cpu_peak_cores;      /* highest series bucket maximum, the
                                 * most cores busy at once on one node */
    double throttled_s;
    double runq_wait_s;
    double node_cpu_max_s;      /* the busiest node's CPU seconds and */
    double node_cpu_min_s;      /* the idlest's (for imbalance) */

    /* Memory */
    double mem_peak_bytes;      /* the largest node's peak */
    double mem_peak_sum_bytes;
    double mem_limit_bytes;
    double swap_bytes;
    /* how long the step made no progress (record "progress"): now for a
     * running step's live row, at its end for a record; NAN when it was
     * not stalled or not measured
     */
    double stalled_s;
    double oom_kills;
    double mem_rise_Bps;        /* how fast memory still rose when it
                                 * reached its peak, bytes per second
                                 * (series); an OOM-killed step: at the
                                 * kill */

    /* Pressure: seconds stalled (PSI some/full total, or delay
     * accounting's delay where that was the source: then the full
     * figures are unknown, while PSI's io and memory always have them)
     */
    double psi_cpu_some_s;
    double psi_mem_some_s;
    double psi_mem_full_s;
    double psi_io_some_s;
    double psi_io_full_s;

    /* I/O and network */
    double read_bytes;          /* storage, device counters else the
                                 * processes' read_bytes */
    double write_bytes;
    double rchar;
    double wchar;
    double net_rx_bytes;        /* only the step's own namespace */
    double net_tx_bytes;

    /* GPU */
    double gpus_used;           /* devices in summary.gpu */
    double gpu_util_mean_pct;
    double gpu_mem_peak_bytes;

    /* Processes and idleness, from the series */
    double nprocs;
    double idle_s;              /* series time that was idle */
    double idle_longest_s;      /* the longest idle stretch */

    /* A job row (tr_stepsum_job_add; step_id ""): whether its state and
     * exit code are the batch step's (else the worst step's)
     */
    bool job_outcome_batch;
    bool job_outcome_extern;    /* so far only the extern step's */

    /* 1 when the CPU figures are exact (summary.cpu.exact), 0 when
     * sampled: a process tree's CPU may be exact while its memory is
     * not.  NAN where unknown (an index row).  Not an index field.
     */
    double cpu_exact;

    /* A running step's live summary (livesum.h): when its figures were
     * read, ms since the epoch (NAN for a record; a merged or job row:
     * the oldest), and whether they are stale.  Not index fields.
     */
    double live_ms;
    bool live_stale;
} tr_stepsum_t;

/* A row with every number NAN and every string "" (not from a pool). */
void tr_stepsum_init (tr_stepsum_t *row);

/* Fill row from a record (one that passed tr_record_validate).
 * sig is TR_STEPSUM_SIG_* and path the record's path relative to the
 * store root (or any name); both are interned.  Returns 0, or -1 with
 * errno = ENOMEM.
 */
int tr_stepsum_from_record (tr_stepsum_t *row,
                            json_t *rec,
                            const char *sig,
                            const char *path,
                            tr_strpool_t *pool);

/* Add src (another node of the same step) into dst: sums for CPU, I/O,
 * network, cores and tasks; maxima for elapsed, peaks and limits; the
 * earliest start and latest end; the worst state (tr_states_rank);
 * node names joined.  Returns 0, or -1 with errno = ENOMEM.
 */
int tr_stepsum_merge (tr_stepsum_t *dst,
                      const tr_stepsum_t *src,
                      tr_strpool_t *pool);

/* Job rows, as sacct prints a line for the job above its steps.  A job
 * row is a row whose step_id is "" (tr_stepsum_is_job).  Fold step (a
 * step's row, its nodes merged) into job, a row that is either fresh
 * from tr_stepsum_init or has had this job's other steps folded in:
 * identity from the first step; start the earliest, end the latest
 * (unknown while a step runs), elapsed the span between them; CPU, I/O
 * and network summed over the steps; cores, nodes, memory request and
 * peak the largest step's (seff's "memory utilized" is the largest
 * step's peak too); state, exit code and signal the batch step's, else
 * (jobs of srun alone) the worst step's but for the extern step's.
 * Pressure, idleness, tools and the step group are a step's business
 * and stay unknown.  0, or -1 with errno = ENOMEM.
 */
int tr_stepsum_job_add (tr_stepsum_t *job,
                        const tr_stepsum_t *step,
                        tr_strpool_t *pool);

/* Whether row is a job row. */
bool tr_stepsum_is_job (const tr_stepsum_t *row);

/* A step's state ("completed", "oom", "NODE_FAIL", ...) in Slurm's
 * words, as sacct and squeue write them (tr_states_sacct): COMPLETED,
 * FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, RUNNING, NODE_FAIL,
 * BOOT_FAIL, UNKNOWN; tracer's own "incomplete" (the collector lost
 * track of the step) is INCOMPLETE.  oom_kills > 0 makes a failed step
 * OUT_OF_MEMORY.  "" for "".
 */
const char *tr_stepsum_state_name (const char *state, double oom_kills);

/* A row's exit code as sacct writes it, "CODE:SIGNAL", the one text
 * every view shows: "0:0", "3:0"; "0:9" for a task killed by SIGKILL; a
 * code of 128 or more without a signal less 128, as sacct prints it
 * ("9:0" for a shell's 137); "0:125" for a row whose state is
 * OUT_OF_MEMORY (tr_stepsum_state_name of its state and oom_kills),
 * whatever its tasks' status: Slurm gives such a step the status
 * SIG_OOM (253), which sacct prints as signal 125.  "" when unknown.
 * Writes into buf; returns buf.
 */
const char *tr_stepsum_exit_text (const tr_stepsum_t *row,
                                  char *buf,
                                  size_t size);

/* A user's or group's name (identity member name_key), else its number
 * (id_key) into buf: a name the node could not resolve is not unknown;
 * "?" only when neither is known.  What every view writes for the user
 * and group of a record's identity id.
 */
const char *tr_stepsum_name_or_id (json_t *id,
                                   const char *name_key,
                                   const char *id_key,
                                   char *buf,
                                   size_t size);

/* The same for a step or node object o of tr_merge_steps, or a record's
 * outcome, whose state is state: its exit_code, signal and (opt.)
 * oom_kills.
 */
const char *tr_stepsum_exit_of (json_t *o,
                                const char *state,
                                char *buf,
                                size_t size);

/* The tools a view shows of a record's or a merged step's tools array:
 * all but the scheduler's own processes (tr_tools_scheduler_own:
 * slurmstepd, slurmstepd-wlm, pbs_mom, ...), in their order.  Every view
 * (the job view, its HTML, the listing's tools field, tracer-mail) asks
 * this one function.  Returns a new reference to a new array (empty for
 * a NULL or non-array tools), NULL on ENOMEM.
 */
json_t *tr_stepsum_tools_shown (json_t *tools);

/* The step group a record belongs to, for recommendations and
 * regressions: the tag "group" when set; else the job name, normalised
 * for the workflow managers that name one job per task: Nextflow's
 * "nf-NAME_(tag)" gives NAME (the process name, with ':' written as '_'
 * as Nextflow does), Snakemake's "snakejob.RULE.N.sh" gives RULE.  Then
 * "/" and the step: its name for a numbered step that has one (srun
 * steps are named after their command), else the step id ("batch",
 * "extern", "0").  tags is a row's tags string.  Writes into buf (size
 * bytes, truncated); returns buf.
 */
const char *tr_stepsum_group (char *buf,
                              size_t size,
                              const char *job_name,
                              const char *step_id,
                              const char *step_name,
                              const char *tags);

/* The value of tag key in a row's tags string, unescaped into buf (size
 * bytes, truncated).  false when the row has no such tag.
 */
bool tr_stepsum_tag (const char *tags,
                     const char *key,
                     char *buf,
                     size_t size);

/* Derived values */
double tr_stepsum_cpu_eff (const tr_stepsum_t *row);   /* 0..1, or NAN */
double tr_stepsum_mem_eff (const tr_stepsum_t *row);   /* peak/request */
double tr_stepsum_frac (double stalled_s, const tr_stepsum_t *row);
/* The step's own demand for CPUs: how many of its threads wanted one on
 * average (running or runnable, waiting in the run queue), summed over
 * its nodes: (cpu_s + runq_wait_s) / elapsed_s.  Unlike the cores it
 * got, this does not fall when other work on the node takes the CPUs.
 * NAN when the run-queue wait or the elapsed time is unknown.
 */
double tr_stepsum_cpu_demand (const tr_stepsum_t *row);

/* The stall line of a step for the views: "CPU 3.1%, memory unknown,
 * I/O 42.0%" (the fraction of the time some task waited, each resource
 * known or "unknown", never 0 for unknown), or "unknown" when none was
 * measured.  Written into buf (size bytes, cut to fit).  Returns the
 * number of resources measured (0 to 3).
 */
int tr_stepsum_stall_text (const tr_stepsum_t *row, char *buf, size_t size);

/* Fields, for --format, --helpformat, sorting and JSON.  A field is a
 * number (a member of tr_stepsum_t or a derived value) or a string.
 */
typedef enum {
    TR_FIELD_STR,
    TR_FIELD_COUNT,     /* integer */
    TR_FIELD_NUM,       /* plain number */
    TR_FIELD_BYTES,
    TR_FIELD_SECONDS,   /* a duration */
    TR_FIELD_TIME,      /* ms since the epoch */
    TR_FIELD_FRACTION,  /* 0..1, shown as a percentage */
} tr_field_kind_t;

typedef struct tr_field {
    const char *name;           /* as given to --format, lower case */
    tr_field_kind_t kind;
    int width;                  /* default column width */
    const char *help;           /* one line for --helpformat */
    size_t offset;              /* of the member, or (size_t)-1 */
    double (*num) (const tr_stepsum_t *row); /* derived, else NULL */
    const char *(*str) (const tr_stepsum_t *row, char *buf, size_t size);
} tr_field_t;

/* Every field, in --helpformat order, terminated by { NULL }.  These
 * are tracer's own names, also the members of tr_stepsum_to_json and
 * the index.
 */
extern const tr_field_t tr_stepsum_fields[];

/* sacct's and reportseff's names for the same figures, as sacct spells,
 * sizes and aligns them (a negative width is left-aligned): JobID,
 * JobName, User, Group, State, ExitCode, Elapsed, MaxRSS, CPUEff, ...
 * Where sacct means something else than tracer's field of the same
 * name, sacct's meaning wins: JobID is "13" on a job row and
 * "13.batch" on a step's, JobName a step's name on a step row, Group
 * the user's Unix group (tracer's step group is StepGroup), State in
 * Slurm's words, ExitCode CODE:SIGNAL.  Terminated by { NULL }.
 */
extern const tr_field_t tr_stepsum_sacct_fields[];

/* The field named name (case-insensitive): sacct's names first, then
 * tracer's own; NULL if neither has it.
 */
const tr_field_t *tr_stepsum_field (const char *name);

/* A field's value: a number (NAN when unknown) or, for TR_FIELD_STR, a
 * string (never NULL; a derived one is written into buf).
 */
double tr_stepsum_num (const tr_stepsum_t *row, const tr_field_t *f);
const char *tr_stepsum_str (const tr_stepsum_t *row,
                            const tr_field_t *f,
                            char *buf,
                            size_t size);

/* A field's value as text: human form (bytes as "1.5G", durations as
 * [D-]HH:MM:SS, times as YYYY-MM-DDTHH:MM:SS local, fractions as
 * "12.5%") or, with raw, the exact form for machines (plain numbers,
 * seconds, ms).  Unknown values are "".  The time limit of a job with
 * none is "UNLIMITED" (also in tr_stepsum_to_json).  Appends to sb; -1 on ENOMEM.
 */
int tr_stepsum_format (tr_strbuf_t *sb,
                       const tr_stepsum_t *row,
                       const tr_field_t *f,
                       bool raw);

/* How a listing writes values (sacct's --parsable2, --units,
 * --noconvert): with parsable, bytes as whole bytes and percentages as
 * plain numbers ("81.25"), durations and times as in the aligned form;
 * units ('K', 'M', 'G', 'T', 'P', or 0) writes every byte value in that
 * unit with two decimals ("1536.00M"); noconvert writes them as whole
 * bytes.
 */
typedef struct tr_stepsum_style {
    bool parsable;
    char units;
    bool noconvert;
} tr_stepsum_style_t;

int tr_stepsum_format_styled (tr_strbuf_t *sb,
                              const tr_stepsum_t *row,
                              const tr_field_t *f,
                              const tr_stepsum_style_t *style);

/* Compare two rows by a field: numbers numerically (unknown last),
 * strings naturally (tr_merge_natcmp).
 */
int tr_stepsum_cmp (const tr_stepsum_t *a,
                    const tr_stepsum_t *b,
                    const tr_field_t *f);

/* The order of rows by what they are, which every listing and view
 * gives jobs and steps: cluster (strcmp), the job id as sacct writes it
 * (the JobID field, natural, tr_merge_natcmp: an array's tasks by index,
 * 5_9 before 5_10, whatever their own job ids; a heterogeneous job's
 * components by number), the job's own id, then step id
 * (tr_merge_stepcmp: "batch", "extern", then numbered steps).
 * tr_stepsum_cmp_id_ptr is the same order as a qsort(3) comparator over
 * an array of const tr_stepsum_t *.
 */
int tr_stepsum_cmp_id (const tr_stepsum_t *a, const tr_stepsum_t *b);
int tr_stepsum_cmp_id_ptr (const void *pa, const void *pb);

/* A row as a JSON object, every known field by name (numbers as JSON
 * numbers in raw units, unknown left out).  NULL on ENOMEM.
 */
json_t *tr_stepsum_to_json (const tr_stepsum_t *row);

/* Index lines: one row per line, fields in tr_stepsum_fields order
 * (members only, not derived values), separated by tabs; strings with
 * '\\', tab and newline escaped as \\\\, \\t, \\n; numbers with %.17g,
 * unknown empty.  tr_stepsum_tsv_header is the first line of a file:
 * "#tracer-stepsum 4\t" then the field names, so a reader can refuse a
 * file of another layout.
 */
int tr_stepsum_tsv_header (tr_strbuf_t *sb);
int tr_stepsum_to_tsv (tr_strbuf_t *sb, const tr_stepsum_t *row);

/* Parse one line (without its newline) into row, interning strings.
 * Returns 0, or -1 with errno = EINVAL (and error text naming the field)
 * or ENOMEM.  hdr is the file's header line, checked with
 * tr_stepsum_tsv_check_header first.
 */
int tr_stepsum_tsv_check_header (const char *hdr, tr_error_t *error);
int tr_stepsum_from_tsv (tr_stepsum_t *row,
                         char *line,
                         tr_strpool_t *pool,
                         tr_error_t *error);

#endif /* !TRACER_STEPSUM_H */
