/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_SAMPLER_H
#define TRACER_SAMPLER_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <jansson.h>

#include "cgroup.h"
#include "detail.h"
#include "series.h"
#include "libtracer/util/error.h"

/* The sampling engine: one context per step, used by tracerd for many
 * steps at once and by tracer-run for one.  Exact totals come from
 * cumulative kernel counters (the step cgroup), so they never depend on
 * the sampling interval; samples only feed the bounded time series and
 * the sampled maxima.
 */
typedef struct tr_step tr_step_t;


/* A new step context.  identity, request and tags are copied (borrowed
 * references; request and tags may be NULL).  collector names the
 * program writing the record.  Returns NULL with errno.
 */
tr_step_t *tr_step_create (json_t *identity,
                           json_t *request,
                           json_t *tags,
                           const char *collector,
                           double interval_s);
void tr_step_destroy (tr_step_t *step);

/* Options for the step's detail (taskstats, command lines, GPUs); call
 * before attaching.  Without it: no taskstats, no GPUs, no redaction.
 */
int tr_step_configure (tr_step_t *step,
                       const struct tr_detail_opts *opts,
                       tr_error_t *error);

/* Offer a process exit reported by taskstats: returns 1 when it belongs
 * to the step (and is now counted), 0 otherwise.
 */
int tr_step_exit_event (tr_step_t *step, const struct tr_exit *ev);

/* Exit events were lost node-wide (tr_taskstats_lost grew by n); any
 * running step may have lost some, so each is told.
 */
void tr_step_exits_lost (tr_step_t *step, uint64_t n);

/* Attach by a task pid: its /proc/PID/cgroup gives the step directories
 * (Slurm task components stripped).  The first successful attach fixes
 * the step's cgroups; later tasks only add to the task list.  Fails with
 * ENOENT when the task sits in no usable (non-root) cgroup.
 */
int tr_step_attach_pid (tr_step_t *step,
                        pid_t pid,
                        int task_id,
                        tr_error_t *error);

/* Attach to explicit cgroup directories (LSF, PBS, tracer-run). */
int tr_step_attach_paths (tr_step_t *step,
                          const struct tr_cgroup_paths *paths,
                          tr_error_t *error);

/* Register a task of an already attached step (no cgroup lookup). */
int tr_step_add_task (tr_step_t *step, int task_id, pid_t pid);

/* Track a process tree instead (no cgroup): root and its descendants.
 * Later tasks (tr_step_add_task) are further roots.
 */
int tr_step_attach_tree (tr_step_t *step, pid_t root);

/* Track a process set with no cgroup (PBS without pbs_cgroups, LSF
 * without cgroups): every process of the session, or whose environment
 * holds env ("NAME=VALUE", e.g. "PBS_JOBID=12.server"; several entries
 * separated by newlines, "LSB_JOBID=209\nLSB_JOBINDEX=1", must all be
 * there), with all their
 * descendants, plus the task roots.  Processes may appear later: the set
 * is re-evaluated at every reading.
 */
#define TR_MATCH_CG_MAX 160
#define TR_MATCH_ENV_MAX 256
struct tr_proc_match {
    pid_t session;               /* session id, or 0 */
    char env[TR_MATCH_ENV_MAX];  /* NAME=VALUE[\nNAME=VALUE...], or "" */
    /* The job's cgroup directory name ("7.srv", "job.42"), or "": once a
     * member is seen in a cgroup of that name (tr_cgroup_job_paths), the
     * step is followed by that cgroup's counters instead.
     */
    char cgroup_name[TR_MATCH_CG_MAX];
};
/* Whether process pid's environment (as /proc/PID/environ shows it: as
 * it was at exec) holds every entry of env, a process-set match's
 * NAME=VALUE lines: the test tr_step_attach_match applies.
 */
bool tr_step_environ_has (pid_t pid, const char *env);
int tr_step_attach_match (tr_step_t *step,
                          const struct tr_proc_match *match,
                          tr_error_t *error);

/* A process of the scheduler's or of tracer's own that runs in the job's
 * session or below one of its processes (a prologue and the qstat it
 * runs, a PBS hook's interpreter): it and what it starts are never the
 * step's.  Process-set and tree steps only; a process that is gone (or
 * whose pid was reused since) is no longer excluded.  -1 with errno
 * when pid is not a process, or TR_STEP_EXCLUDE_MAX are excluded.
 */
#define TR_STEP_EXCLUDE_MAX 8
int tr_step_exclude (tr_step_t *step, pid_t pid);

/* The scheduler's word on how the step ended (an epilogue's exit
 * status): {"state":S, "exit_code":N, "signal":N, "reason":R}, used in
 * the final record where the collector itself saw no task end.  The
 * collector's own "oom" and "incomplete" still win.  Copies hint.
 */
int tr_step_set_outcome (tr_step_t *step, json_t *hint);

/* Take one reading now.  Returns 0, or -1 with error text when no
 * counter could be read (e.g. the cgroup vanished).
 */
int tr_step_sample (tr_step_t *step, tr_error_t *error);

/* tr_step_sample() with the reading's time given: t is seconds on
 * tr_when_monotonic()'s clock, never less than the previous reading's.
 * For replaying or simulating a long step (the benchmarks do).
 */
int tr_step_sample_at (tr_step_t *step, double t, tr_error_t *error);

/* Record a task's end (wait_status as from waitpid). */
int tr_step_task_exit (tr_step_t *step,
                       int task_id,
                       pid_t pid,
                       int wait_status);

/* Number of tasks attached, and of tasks that ended. */
/* Whether the step follows a cgroup or a process set yet. */
/* With a followed process tree: switch to the job's own cgroup once a
 * member turns up in one named name (as tr_proc_match.cgroup_name).
 */
int tr_step_watch_cgroup (tr_step_t *step, const char *name);

/* Processes found in the step at the last reading. */
size_t tr_step_npids (const tr_step_t *step);

/* Whether the step is followed through a cgroup's own counters. */
bool tr_step_in_cgroup (const tr_step_t *step);

/* The cgroup2 directory the step is followed through, which holds every
 * process of it: a cgroup2 host's step directory, or on a hybrid host
 * tracer's own directory (the mirror, tracer-run's delegated one).  NULL
 * for a step followed as a process tree or set, or through v1 only.
 */
const char *tr_step_cgroup2_dir (const tr_step_t *step);

/* A v1 directory the step is followed through, which holds every
 * process of it (the scheduler put them there): its cpuacct directory,
 * else its memory one.  NULL for a step not followed through a cgroup or
 * with no v1 directory.
 */
const char *tr_step_cgroup1_dir (const tr_step_t *step);

/* The cgroups of a live process as its kernel file names them (0, or -1
 * when it is gone or unreadable), and whether they lie in the step's
 * (its v1 memory or its own cgroup2 directory).  A daemon asks once per
 * process and then each step.
 */
int tr_step_pid_cgroups (pid_t pid, struct tr_cgroup_paths *pc);
bool tr_step_cgroup_holds (const tr_step_t *step,
                           const struct tr_cgroup_paths *pc);

bool tr_step_attached (const tr_step_t *step);

int tr_step_ntasks (tr_step_t *step);
int tr_step_nexited (tr_step_t *step);

/* Take the final reading and mark the end time.  Idempotent. */
int tr_step_finish (tr_step_t *step, tr_error_t *error);

/* The exact totals of reaped descendants (getrusage RUSAGE_CHILDREN of
 * the tracing process, which reaped the exited tasks): the CPU time in
 * process-tree mode, the ends of the tasks' runs in the tool table
 * (tr_procs_set_reaped), and the largest single process's peak RSS
 * wherever memory is not counted by a memory cgroup and that peak
 * exceeds the sampled one.
 */
void tr_step_set_children_rusage (tr_step_t *step, const struct rusage *ru);

/* The step's record ("final" or "snapshot").  Returns a new reference,
 * or NULL with errno.  The record is not signed.
 */
json_t *tr_step_record (tr_step_t *step, const char *kind);

/* The step's live snapshot, the record of kind "snapshot", as compact
 * JSON text (malloc'ed, caller frees).  The same record as
 * tr_step_record (step, "snapshot") with its reals to 15 significant
 * digits, but its series are written straight from their points
 * (tr_series_text) rather than through a JSON tree: about ten times
 * cheaper for a long step, whose series hold 20,000 numbers.  Returns
 * NULL with errno.
 */
char *tr_step_snapshot_text (tr_step_t *step);

/* The step's snapshot without its series: what a live summary
 * (livesum.h) needs, at a small part of the cost.  A new reference, or
 * NULL with errno.
 */
json_t *tr_step_live_record (tr_step_t *step);

/* The step's resumable state: identity, request, tags, where it is
 * attached, its tasks and its latest readings (not the series).  tracerd
 * keeps it under daemon.state_dir so that a restarted daemon resumes the
 * step: the cgroup counters are cumulative, so no total is lost.
 * Returns a new reference, or NULL with errno.
 */
json_t *tr_step_save (tr_step_t *step);

/* A step context from tr_step_save() output.  Returns NULL with errno =
 * EINVAL and error text when the state is malformed.
 */
tr_step_t *tr_step_restore (json_t *state, tr_error_t *error);

/* Whether the step's cgroup still exists (false in process-tree mode
 * when the root process is gone).
 */
bool tr_step_alive (tr_step_t *step);

/* The hook reported the end of a step that has no task exits to wait
 * for (Slurm's extern step): take the final reading, as far as the
 * cgroup still exists.  A step with no tasks then ends "completed".
 */
int tr_step_end (tr_step_t *step, tr_error_t *error);

/* Mark a step whose end was not observed (the daemon was down): the
 * record says "incomplete" with this reason and the last readings.
 */
void tr_step_mark_incomplete (tr_step_t *step, const char *reason);

/* The step's identity object (a borrowed reference). */
json_t *tr_step_identity (tr_step_t *step);

/* The step's request object (borrowed; the daemon adds what it learns
 * from the scheduler, e.g. time_limit_s).
 */
json_t *tr_step_request (tr_step_t *step);

/* The step's sampling interval in seconds. */
double tr_step_interval (tr_step_t *step);

/* Borrowed identity member (NULL if absent). */
const char *tr_step_id_str (tr_step_t *step, const char *key);

bool tr_step_finished (tr_step_t *step);

/* No progress: the threshold (sampling.stall_after, 0 = off; an extern
 * or interactive step is never watched, tr_progress_applies), and
 * whether the step is stalled as of its last reading (with the seconds
 * it has made no progress in *idle_s).
 */
void tr_step_set_stall_after (tr_step_t *step, double seconds);
bool tr_step_stalled (tr_step_t *step, double *idle_s);

/* When the step's own processes last made progress (CLOCK_MONOTONIC
 * seconds and Unix ms; not progress it was told of, so that two steps
 * never keep each other going): false when it is not watched
 * (sampling.stall_after 0, an extern or interactive step) or has no
 * reading yet.
 */
bool tr_step_last_progress (tr_step_t *step, double *t_mono,
                            int64_t *t_unix_ms);

/* Another step of the same job on this node made progress at t_mono
 * (tr_step_last_progress): this step's stretch without progress starts
 * again there (tr_progress_touch).
 */
void tr_step_progress_touch (tr_step_t *step, double t_mono,
                             int64_t t_unix_ms);

/* Kernel evidence (kmsg.h).  Whether ev concerns the step: the cgroup
 * the kernel named for an OOM victim is the step's or below it, or the
 * pid it names is a process of the step (at the last reading, one that
 * ended within recent_s, or a live process in the step's cgroup).
 */
struct tr_kmsg_event;
bool tr_step_kmsg_concerns (tr_step_t *step, const struct tr_kmsg_event *ev,
                            double recent_s);

/* Keep ev in the step's record (scope "step" or "node"): 1 kept, 0 not
 * (a duplicate, or the bounds reached), -1 on allocation failure.
 */
int tr_step_kmsg_add (tr_step_t *step, const struct tr_kmsg_event *ev,
                      const char *scope, int64_t t_unix_ms);

#endif /* !TRACER_SAMPLER_H */
