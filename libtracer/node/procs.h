/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_PROCS_H
#define TRACER_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "iostat.h"
#include "taskstats.h"

/* Every process of a step, grouped by executable into the tool table.
 * Processes are seen two ways: by scanning /proc for the step's current
 * pids at each sample (sampled readings), and by taskstats exit events
 * (exact final counters, also for processes that lived between two
 * samples).  Memory stays bounded however many processes a step runs:
 * per-tool aggregates, entries for live processes, and a bounded window
 * of recently ended ones.
 */
typedef struct tr_procs tr_procs_t;

/* Defaults and bounds. */
#define TR_PROCS_CMDLINE_DEFAULT 256
#define TR_PROCS_CMDLINE_MAX 1024 /* the record schema's bound */
#define TR_PROCS_TOOLS_DEFAULT 64
#define TR_PROCS_TOOLS_MAX 64     /* rows besides "(other)" */

/* Exit events that no table could attribute yet: in "sh -c 'a | b'"
 * both children exit before the shell whose parent makes them a step's.
 * A bounded window (the newest 128 events, none older than 30 s); a
 * table that learns of a new process takes from it the held exits that
 * process explains.
 */
typedef struct tr_exit_window tr_exit_window_t;

tr_exit_window_t *tr_exit_window_create (void);  /* NULL: ENOMEM */
void tr_exit_window_destroy (tr_exit_window_t *w);

/* Hold ev (a process's, TR_EXIT_PID), as the kernel dated it, after the
 * oldest beyond the window's bounds are let go.  For a shared window:
 * call it for an exit that every table was offered (tr_procs_exit) and
 * none took.  Returns 0, or -1 with errno (EINVAL; ENOMEM: not held).
 */
int tr_exit_window_add (tr_exit_window_t *w, const struct tr_exit *ev);

/* Events held now. */
size_t tr_exit_window_count (const tr_exit_window_t *w);

struct tr_procs_opts {
    /* Bytes of a command line kept (after redaction), 1..1024;
     * 0 = TR_PROCS_CMDLINE_DEFAULT.
     */
    size_t cmdline_max;
    /* POSIX extended regular expressions, NULL-terminated, matched
     * case-insensitively against the command line (arguments joined by
     * spaces); every match is replaced by "***".  NULL selects
     * tr_conf_redact_default; an empty list ({NULL}) redacts nothing.
     */
    const char *const *redact;
    /* Tool rows kept, 1..64; the rest are summed into one row named
     * "(other)".  0 = TR_PROCS_TOOLS_DEFAULT.
     */
    size_t tools_max;
    /* A site's tool naming rules (tools.h, tracer.yaml tools.subcommands
     * and tools.interpreters): NULL-terminated lists of patterns, copied;
     * NULL: none, the built-in rules only.
     */
    const char *const *tool_subcommands;
    const char *const *tool_interpreters;
    /* Where exits that no process of the table explains yet are held
     * (see tr_exit_window_add): NULL, a window of the table's own; or
     * one shared by every table of a daemon, which then holds each such
     * exit once, not once per step.  Outlives the table.
     */
    tr_exit_window_t *exit_window;
    /* What each process was at its exec (execs.h), shared by a daemon's
     * tables, or NULL: a process known only from its exit is named from
     * it (its executable and arguments, not the comm it may have given
     * itself), and one that renamed itself is said to (the culprit's
     * "calls_itself").  Outlives the table.
     */
    const struct tr_execs *exit_names;
};

/* The default redaction patterns: values given to password, secret,
 * token and key options or variables ("--password=x", "--token x",
 * "DB_PASSWORD=x"), credentials in URLs ("https://user:pw@host"),
 * "Bearer" tokens, AWS access key ids (AKIA/ASIA...), GitHub (ghp_,
 * gho_, ghs_, ghu_, ghr_, github_pat_), GitLab (glpat-) and Slack (xox?-)
 * tokens, and JSON web tokens.  NULL-terminated.
 */

/* A new table.  opts may be NULL (all defaults).  Returns NULL with errno
 * = EINVAL and error text naming the bad option or pattern, or ENOMEM.
 */
tr_procs_t *tr_procs_create (const struct tr_procs_opts *opts,
                             tr_error_t *error);

/* Free the table.  NULL is a no-op; errno is kept. */
void tr_procs_destroy (tr_procs_t *procs);

/* A pid known to belong to the step (a task): its exit, and the exits of
 * its children, are the step's even if no scan saw them.
 */
void tr_procs_add_root (tr_procs_t *procs, pid_t pid);

/* Read the step's current processes (from cgroup.procs or a process-tree
 * walk) under the fsroot: /proc/PID/stat, status (VmHWM), io, schedstat
 * (of each thread when there are several), and for a process not seen
 * before its cmdline and exe.  A process is identified by (pid, start
 * time), so a reused pid is a new process.  A pid that vanished before
 * it could be read is skipped.  A process seen before and absent now has
 * ended: its last readings are kept, flagged sampled, unless an exit
 * event makes them exact.  now_ms is the wall-clock time of the reading.
 * Returns the number of processes read, or -1 with errno = ENOMEM.
 */
int tr_procs_scan (tr_procs_t *procs,
                   const pid_t *pids,
                   size_t n,
                   int64_t now_ms);

/* tr_procs_scan() at a bounded cost: besides the processes not seen
 * before, which are always read, at most `budget` known ones are read
 * (in turn, so each is read every n/budget scans); the others count as
 * still running.  For callers that learn of exits from events (an exit
 * record makes a process's counters exact however old its last
 * reading).  The pids found gone are removed from pids[] and *n is
 * updated.  budget 0 reads them all.  same tells that pids[] is the
 * list this function left last time (not read again from the kernel):
 * then only this turn's pids are looked at, so the call costs the same
 * however long the list is.  Returns as tr_procs_scan().
 */
int tr_procs_scan_some (tr_procs_t *procs,
                        pid_t *pids,
                        size_t *n,
                        size_t budget,
                        bool same,
                        int64_t now_ms);

/* Read again, whatever the budget, every live process that reaped one
 * of the table's processes since its last reading: its cutime + cstime
 * then hold those children's whole run, which their exit records do
 * not (see tr_procs_tools_json).  For the final reading of a step: a
 * handful of reads.  Returns the number read, or -1 with errno (EINVAL,
 * ENOMEM).
 */
int tr_procs_read_reapers (tr_procs_t *procs, int64_t now_ms);

/* The caller reaped pids[0..n-1] itself (it is their parent and not in
 * the table: tracer-run and its command), and getrusage(RUSAGE_CHILDREN)
 * told it their whole CPU with their descendants', cpu_us, user_us of
 * it: the ends of those runs that the exit records miss are then the
 * table's too.  Replaces an earlier call.  Returns 0, or -1 with errno
 * (EINVAL, ENOMEM).
 */
int tr_procs_set_reaped (tr_procs_t *procs,
                         const pid_t *pids,
                         size_t n,
                         uint64_t cpu_us,
                         uint64_t user_us);

/* Resident memory of the running processes at their last readings, in
 * bytes.
 */
uint64_t tr_procs_rss (tr_procs_t *procs);

/* Offer an exit event (every event of the node may be offered to every
 * step).  Returns 1 when it belongs to this step: its process is known,
 * or its parent is a process or root of the step; the process's final
 * counters are then exact, and its pid is remembered so that the exits
 * of its own children are attributed too.  Returns 0 otherwise; such an
 * event is held for a short while (bounded), since a child usually exits
 * before the short-lived parent that would attribute it.  A TR_EXIT_TGID
 * event is only attributed (its counters are the sum of the thread
 * events already counted).
 */
int tr_procs_exit (tr_procs_t *procs, const struct tr_exit *ev);

/* Whether the table holds a process pid, live or ended lately (its
 * entry not yet folded into its tool): one of the step's.
 */
bool tr_procs_has_pid (tr_procs_t *procs, pid_t pid);

/* The culprit: of the failing exits offered (non-zero status or a
 * signal; the first 16 are kept, each with the chain of its parents up
 * to the task as the table knew them at the exit), the earliest that is
 * not a parent of a failure that ended no later; a signal death wins a
 * tie.  Returns its index (>= 0) and in *collateral (may be NULL) the
 * failing exits of its parents at or after it; -1 when none failed.
 */
int tr_procs_culprit (tr_procs_t *procs, size_t *collateral);

/* The culprit as the record's outcome.culprit (doc/record-format.md):
 * tool, pid, exit_code or signal, core_dumped, at_s (seconds before
 * step_end_ms, >= 0), chain, collateral.  NULL when none failed (or
 * ENOMEM).
 */
json_t *tr_procs_culprit_json (tr_procs_t *procs, int64_t step_end_ms);

/* Events lost by the exit listener while the step ran (see
 * tr_taskstats_lost); reported as summary.processes.lost.
 */
void tr_procs_set_lost (tr_procs_t *procs, uint64_t lost);

/* Whether the live process pid belongs to the step: 1 yes, 0 no, -1
 * cannot tell.  Asked, through /proc and the fsroot, for the parent of
 * exits the table cannot attribute yet, once several are held (see
 * procs.c, adopt_parent); a parent found to be the step's is read at
 * once.  NULL (the default) asks nothing.
 */
typedef int (*tr_procs_member_f) (pid_t pid, void *arg);
void tr_procs_set_member (tr_procs_t *procs, tr_procs_member_f fn, void *arg);

/* What names a process, read from /proc at once (at its exec, before a
 * short process is gone): its start (wall clock), its executable and
 * its tool as the table's rules name it from its executable and
 * arguments.
 */
struct tr_procs_ident {
    int64_t start_ms;
    uint64_t exe_dev, exe_ino; /* 0: unknown */
    char tool[256];
};

/* Read pid into *id.  Returns 1, 0 when it is gone (or was replaced
 * while it was read), -1 with errno (EINVAL).  The table is not changed.
 */
int tr_procs_identify (tr_procs_t *procs, pid_t pid,
                       struct tr_procs_ident *id);

/* The tools[] array of the record: one row per tool name (tools.h: the
 * executable's base name, or the subcommand or script it runs),
 * sorted by cpu_s descending (then count, then name), at most tools_max
 * rows plus one "(other)" row summing the rest.  Live processes count
 * with their latest readings.  A row's CPU is its processes' own (exit
 * record or last reading) and their share of the ends of runs that the
 * exit records miss: what each reaper's cutime + cstime holds beyond
 * the children credited to it (or the caller's, tr_procs_set_reaped),
 * shared equally among the processes that ended below it.  The rows
 * add up to tr_procs_cpu().  Returns a new reference, or NULL with
 * errno = ENOMEM.
 */
json_t *tr_procs_tools_json (tr_procs_t *procs);

/* summary.processes: {"count", "source", "complete", "lost"}; source is
 * "taskstats" or "proc" (NULL: "proc"), and complete is true only with
 * source "taskstats" and tr_procs_complete().  Returns a new reference,
 * or NULL with errno = ENOMEM.
 */
json_t *tr_procs_json (tr_procs_t *procs, const char *source);

/* True when every process of the step ended with its exit observed (exact
 * counters), none is still running, and no event was lost.
 */
bool tr_procs_complete (tr_procs_t *procs);

/* The step's CPU time summed over its processes, each one's own CPU
 * counted once (utime + stime of the process; cutime/cstime only for
 * what they hold beyond the children's own figures, the ends of their
 * runs): ended processes from their exit records (the scheduler's run
 * time, ns), live ones from their last reading.  The tool table's rows
 * add up to it.  *total_us and *user_us get the total and its user
 * part.  Returns true when the sum is exact:
 * every ended process has an exit record with an exact CPU figure and
 * no exit event was lost.  A live process counts with its last reading,
 * as exact as when that reading was taken.
 */
bool tr_procs_cpu (tr_procs_t *procs, uint64_t *total_us, uint64_t *user_us);

/* Take pid, a live process, and the processes it starts out of the step
 * (a prologue, a hook's interpreter running in the job's session): their
 * exits are never attributed to it.  Their CPU is credited to the step's
 * process that reaps them (its cutime holds it; tr_procs_excluded_us
 * says how much).  At most 64 such processes.  Returns 0, or -1 with
 * errno (ESRCH: no such process, ENOSPC).
 */
int tr_procs_exclude (tr_procs_t *procs, pid_t pid);
uint64_t tr_procs_excluded_us (tr_procs_t *procs);

/* I/O summed over every process of the step, exited ones included, each
 * process's own I/O counted once (see procs.c on reaped children).
 */
void tr_procs_io (tr_procs_t *procs, struct tr_proc_io *out);

/* Consistency check for tests: the step-wide sums kept as entries change
 * against the same sums taken over every entry.  Returns 0 when they
 * agree, -1 with errno EDOM when not (EINVAL: no procs).
 */
int tr_procs_check (tr_procs_t *procs);

/* Run-queue wait summed over every process of the step, in seconds:
 * taskstats cpu_delay_total when delay accounting is on, else the
 * sampled /proc/PID/schedstat.
 */
double tr_procs_runq_wait_s (tr_procs_t *procs);

/* Per-task delay accounting summed over the step, in ns, indexed by enum
 * tr_psi_resource (psi.h): [0] cpu = run-queue wait, [1] memory = swapin
 * + freepages + thrashing, [2] io = block I/O.  Memory and io need exit
 * events with delay accounting on; they are 0 otherwise.
 */
void tr_procs_delays (tr_procs_t *procs, uint64_t delay_ns[3]);

/* Processes running as of the last scan or event. */
size_t tr_procs_count_live (tr_procs_t *procs);

/* Processes seen in all (running and ended). */
uint64_t tr_procs_count (tr_procs_t *procs);

#endif /* !TRACER_PROCS_H */
