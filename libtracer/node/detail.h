/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_DETAIL_H
#define TRACER_DETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "cgroup.h"
#include "libtracer/util/error.h"
#include "gpu.h"
#include "procs.h"
#include "taskstats.h"

/* The detail of a step beyond CPU and memory totals: pressure stalls,
 * storage and network I/O, GPUs, CPU placement and throttling, and every
 * process that ran, grouped into the tool table.  One context per step,
 * owned by the sampling engine.
 */
typedef struct tr_detail tr_detail_t;

struct tr_detail_opts {
    bool taskstats;             /* exits arrive through tr_detail_exit */
    size_t cmdline_max;         /* bytes of a command line kept */
    char *const *redact;        /* NULL-terminated patterns, or NULL */
    /* the site's tool naming rules (tools.h), NULL-terminated or NULL */
    char *const *tool_subcommands;
    char *const *tool_interpreters;
    tr_gpu_t *gpu;              /* NULL: no GPUs read */
    const char *gpu_devices;    /* the step's GPUs; NULL: all */
    /* Known processes whose /proc files are reread per sample, in turn;
     * new ones are always read.  0, or taskstats false: all of them.
     */
    size_t proc_reads;
    /* exits no step explains yet, held once for all of a daemon's
     * steps (procs.h); NULL: the step's own
     */
    tr_exit_window_t *exit_window;
    /* what processes were at their exec (execs.h), or NULL */
    const struct tr_execs *exit_names;
};

tr_detail_t *tr_detail_create (const struct tr_detail_opts *opts,
                               tr_error_t *error);
void tr_detail_destroy (tr_detail_t *d);

/* Where the step lives.  cg is NULL in process-tree mode; it is kept,
 * not copied, and must stay until the detail is destroyed or given
 * another (a daemon follows thousands of steps, each of whose paths
 * would cost it 12 KiB again).  per_step_v2
 * tells whether cg->unified belongs to the step alone (a v2 step cgroup
 * or tracer's own mirror directory), so that its pressure and cpu.stat
 * describe the step and not a whole daemon's subtree.
 */
void tr_detail_set_cgroup (tr_detail_t *d,
                           const struct tr_cgroup_paths *cg,
                           bool per_step_v2);

/* A task pid of the step (the first one): its cpu list, network
 * namespace and counters at the start are read once.
 */
void tr_detail_set_task (tr_detail_t *d, pid_t pid);

/* One reading: pids are the step's processes (same: the list left by
 * the previous reading, not read again), t the seconds since the step
 * started, dt the seconds since the previous reading (0 on the first).
 * The pids found gone are removed from pids[] (*npids updated).
 */
void tr_detail_sample (tr_detail_t *d,
                       pid_t *pids,
                       size_t *npids,
                       bool same,
                       double t,
                       double dt);

/* Processes that are not the step's although they run below it
 * (tr_procs_exclude), and the CPU they left in its processes' cutime.
 */
int tr_detail_exclude (tr_detail_t *d, pid_t pid);
uint64_t tr_detail_excluded_us (tr_detail_t *d);

/* The next reading reads every process of the step, whatever the
 * sampling.proc_reads budget: the final reading of a step.
 */
void tr_detail_read_all (tr_detail_t *d);

/* The next reading also reads the processes that reaped one of the
 * step's since they were last read (tr_procs_read_reapers), whatever
 * the budget: the final reading of a step, so that the tool table has
 * the ends of their children's runs.
 */
void tr_detail_read_reapers (tr_detail_t *d);

/* The tracing process reaped pids itself; their whole CPU with their
 * descendants' (tr_procs_set_reaped).  Returns 0 or -1 with errno.
 */
int tr_detail_set_reaped (tr_detail_t *d,
                          const pid_t *pids,
                          size_t n,
                          uint64_t cpu_us,
                          uint64_t user_us);

/* The step's CPU time summed over its processes (tr_procs_cpu): exit
 * records for the ended ones, the last reading for the live.  True when
 * exact (exit events on, none lost, every ended process's figure
 * exact).
 */
bool tr_detail_cpu (tr_detail_t *d, uint64_t *total_us, uint64_t *user_us);

/* Close the files kept open for readings (the step has ended, or its
 * cgroup is no longer followed); the next reading reopens them.
 */
void tr_detail_close (tr_detail_t *d);

/* Resident memory of the step's running processes at their last
 * readings, in bytes.
 */
uint64_t tr_detail_rss (tr_detail_t *d);

/* The I/O counters of the step's processes, summed (ended ones with
 * their last counters): zero when nothing was read.
 */
void tr_detail_proc_io (tr_detail_t *d, struct tr_proc_io *out);

/* Whether pid is a process of the step, live or ended lately. */
bool tr_detail_has_pid (tr_detail_t *d, pid_t pid);

/* A process exit from taskstats: returns 1 when it belongs to the step. */
int tr_detail_exit (tr_detail_t *d, const struct tr_exit *ev);

/* The step's culprit process (tr_procs_culprit_json), or NULL. */
json_t *tr_detail_culprit (tr_detail_t *d, int64_t step_end_ms);

/* The exit listener lost n events (a receive-buffer overrun) while the
 * step ran: its process table cannot claim to be complete.
 */
void tr_detail_exits_lost (tr_detail_t *d, uint64_t n);

/* Fill the record: summary members (pressure, io, network, gpu,
 * processes, and extra cpu members into summary.cpu), host.topology and
 * the tools array.  Returns 0 or -1 (ENOMEM).
 */
int tr_detail_record (tr_detail_t *d, json_t *rec);

/* Add the detail's series to a record's series.metrics object. */
int tr_detail_record_series (tr_detail_t *d, json_t *metrics);

/* The same as text (series.h, tr_series_text): for each series in use,
 * ,"name":{...} with its first n points appended to sb.  Returns 0 or
 * -1 with errno.  tr_detail_series_points: the fewest points of any
 * series in use, SIZE_MAX when none is.
 */
struct tr_strbuf;
int tr_detail_series_text (tr_detail_t *d, struct tr_strbuf *sb, size_t n);
size_t tr_detail_series_points (const tr_detail_t *d);

/* What a restarted daemon needs to carry on: readings taken at the
 * step's start (network counters) and the pids known to belong to it.
 */
json_t *tr_detail_save (tr_detail_t *d);
int tr_detail_restore (tr_detail_t *d, json_t *state);

#endif /* !TRACER_DETAIL_H */
