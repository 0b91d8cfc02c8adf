/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_PROGRESS_H
#define TRACER_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

/* No progress: a running step whose processes used no CPU and moved no
 * I/O (their rchar, wchar, read_bytes and write_bytes) between readings,
 * within a tiny tolerance, for at least the configured time
 * (sampling.stall_after) is stalled.  The tracker is fed the step's
 * cumulative readings; it keeps the start of the current stretch without
 * progress and the last stretch that reached the threshold.
 */

/* CPU a stretch may use and still be no progress: TR_PROGRESS_CPU_RATE
 * of one core plus TR_PROGRESS_CPU_SLACK_S per reading (a process that
 * sleeps in the kernel uses none; these absorb the counters' rounding).
 * I/O: none at all.
 */
#define TR_PROGRESS_CPU_RATE 0.001
#define TR_PROGRESS_CPU_SLACK_S 0.002

/* Processes described at the last reading of a stall, at most. */
#define TR_PROGRESS_PROCS_MAX 16

struct tr_progress {
    bool have;                /* a reading was fed */
    double cpu_s;             /* readings at the last progress */
    uint64_t io_bytes;
    double last_mono;         /* the last reading */
    double since_mono;        /* the start of the current stretch */
    int64_t since_unix_ms;
    /* the last reading that saw the step's own processes move (a touch
     * from elsewhere leaves it): what other steps of its job are told
     */
    double moved_mono;
    int64_t moved_unix_ms;
    /* the last stretch that reached the threshold, 0 if none */
    double stall_s;
    int64_t stall_since_unix_ms;
};

/* Feed a reading taken at t_mono (CLOCK_MONOTONIC seconds) and
 * t_unix_ms: the step's CPU seconds and the sum of its processes' I/O
 * bytes.  after_s is the threshold (0 = off).  Returns true when the
 * reading showed no progress since the previous one.
 */
bool tr_progress_feed (struct tr_progress *p, double t_mono, int64_t t_unix_ms,
                       double cpu_s, uint64_t io_bytes, double after_s);

/* Progress seen elsewhere at t_mono (t_unix_ms): another step of the
 * same job on this node moved, or the step's processes wait on a
 * launcher (tr_progress_launcher) whose work runs elsewhere.  The
 * current stretch without progress starts again there when that is
 * later than its start (never later than the last reading); the
 * stretch is no stall.
 */
void tr_progress_touch (struct tr_progress *p, double t_mono,
                        int64_t t_unix_ms);

/* Whether a process named tool (its comm) launches work that runs in
 * another step or on other nodes and waits for it: Slurm's srun client
 * and the MPI launchers (mpirun, mpiexec, mpiexec.hydra, orterun,
 * prterun).  A step that holds one waits on that work: its own
 * processes being idle is no stall.
 */
bool tr_progress_launcher (const char *tool);

/* Whether the step step_id ever stalls: not Slurm's extern step (it
 * only holds the job's allocation, idle by design) nor its interactive
 * step (a shell waiting for its user).
 */
bool tr_progress_applies (const char *step_id);

/* Seconds the step has made no progress as of its last reading. */
double tr_progress_idle_s (const struct tr_progress *p);

/* Whether it is stalled now: idle for at least after_s (> 0). */
bool tr_progress_stalled (const struct tr_progress *p, double after_s);

/* The record's "progress" member (record-format.md): stalled, stalled_s
 * and since_unix_ms of the current stall or else of the last one, and
 * procs (an array of {"tool", "pid", "state", "wchan"}, borrowed) while
 * stalled.  NULL when nothing was read or after_s is 0 (off).
 */
json_t *tr_progress_json (const struct tr_progress *p, double after_s,
                          json_t *procs);

/* A process's state letter from /proc/PID/stat text and its comm, into
 * state (2 bytes) and comm (size bytes).  Returns 0, or -1 with errno =
 * EINVAL when the text is not a stat line.
 */
int tr_progress_parse_stat (const char *text, char *state, char *comm,
                            size_t size);

/* What the process pid is blocked in now, read from procdir ("/proc")
 * into a {"tool", "pid", "state", "wchan"} object ("wchan" absent when
 * the kernel does not say; "0" means running).  NULL when the process is
 * gone.
 */
json_t *tr_progress_proc_json (const char *procdir, pid_t pid);

/* The state and wait channel of at most TR_PROGRESS_PROCS_MAX of pids
 * (n), as an array; NULL on allocation failure.
 */
json_t *tr_progress_procs (const char *procdir, const pid_t *pids, size_t n);

#endif /* !TRACER_PROGRESS_H */
