/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_STATES_H
#define TRACER_STATES_H

#include <stdbool.h>
#include <jansson.h>

/* Every job and step state word, in one place: the record's outcome
 * states (doc/record-format.md), the words the views show (sacct's),
 * sacct's -s abbreviations, how bad each is, and the scheduler's words
 * that decide a record's outcome.
 *
 * A step's *state* is the word rows, steps and filters work on
 * (tr_states_of): the record's outcome.state, except
 *   - "oom" for a "failed" record the OOM killer killed a process of
 *     (a shell whose child it took);
 *   - "incomplete" for a final record that followed no process
 *     (tr_states_unfollowed), whatever its outcome says;
 *   - "NODE_FAIL" (or "BOOT_FAIL") for an "incomplete" record whose
 *     reason names the scheduler's NODE_FAIL (BOOT_FAIL), and for a
 *     "cancelled" one of an older collector that recorded it so.
 * A record never holds those two upper-case words; only the views do.
 *
 * The words, best first, with their rank (tr_states_rank), sacct's
 * word and its abbreviation:
 *
 *   0 completed   COMPLETED      CD
 *   1 running     RUNNING        R
 *   2 unknown     UNKNOWN        UN
 *   3 failed      FAILED         F
 *   4 cancelled   CANCELLED      CA
 *   5 timeout     TIMEOUT        TO
 *   6 oom         OUT_OF_MEMORY  OOM
 *   7 incomplete  INCOMPLETE     IN
 *   7 NODE_FAIL   NODE_FAIL      NF
 *   7 BOOT_FAIL   BOOT_FAIL      BF
 */

/* The outcome.state words a record may hold (doc/record-format.md),
 * NULL-terminated: running, completed, failed, cancelled, timeout, oom,
 * incomplete, unknown.  The record validator checks against it.
 */
extern const char *const tr_states_record[];

/* How bad a state is, 0 (best) to 7: a state or its sacct word (either
 * "oom" or "OUT_OF_MEMORY").  A word this module does not know ranks as
 * "unknown" (2).  "incomplete" is worst because the totals of such a
 * record are not the whole story.
 */
int tr_states_rank (const char *word);

/* Whether a state (or its sacct word) is a failure: failed, cancelled,
 * timeout, oom, NODE_FAIL, BOOT_FAIL; not running, unknown or incomplete
 * (tracer lost track of those).
 */
bool tr_states_failed (const char *word);

/* The one answer to "did the OOM killer end this step?": its state is
 * "oom" (or OUT_OF_MEMORY), or the OOM killer killed one of its
 * processes (oom_kills > 0; NAN is unknown).  Asked for records (with
 * tr_states_oom_kills), rows and runs alike.
 */
bool tr_states_oom (const char *state, double oom_kills);

/* How many processes of a record's step the OOM killer killed: the
 * larger of summary.memory.oom_kill_events (an older record's
 * summary.x_oom_kill_events), the number of outcome.tasks marked
 * oom_killed and the number of the step's "oom-kill" events.  0 when
 * none says so.
 */
double tr_states_oom_kills (json_t *rec);

/* Whether a final record followed no process of its step: the
 * collector found none (a batch job found by an environment variable
 * its processes do not carry, a session that was gone), so its figures
 * are no measurement.  True when summary.cpu.source is "none", or, for
 * a record of an older collector, when it followed a process tree
 * (cgroup.attach "process-tree") and summary.processes.count is 0.
 * Such a record is "incomplete" (tr_states_of) whatever its outcome
 * says, and its figures are unknown: never 0, never in advice or waste.
 */
bool tr_states_unfollowed (json_t *rec);
/* The reason an unfollowed record gives (tr_states_unfollowed). */
#define TR_STATES_UNFOLLOWED \
    "no process of the job was found on this node: nothing was measured"
/* A record's state (see above): the word rows, steps and filters work
 * on; "incomplete" for a record that followed no process
 * (tr_states_unfollowed).  "" for a record without one.
 */
const char *tr_states_of (json_t *rec);

/* The name every view shows for a state: "OUT_OF_MEMORY" for a step the
 * OOM killer ended ("oom", or "failed" with oom_kills > 0), NODE_FAIL
 * and BOOT_FAIL as they are, else the state itself ("" for NULL).
 */
#define TR_STATES_OOM "OUT_OF_MEMORY"
const char *tr_states_name (const char *state, double oom_kills);

/* The state as sacct spells it (the listing's State column): COMPLETED,
 * FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY (as tr_states_name),
 * RUNNING, NODE_FAIL, BOOT_FAIL, INCOMPLETE, UNKNOWN (also for a word
 * not known); "" for "" or NULL.
 */
const char *tr_states_sacct (const char *state, double oom_kills);

/* sacct's -s word: an abbreviation (CD, F, CA, TO, OOM, R, NF, BF, IN,
 * UN), a sacct word or a state, in any case, as the state it selects
 * ("NF" → "NODE_FAIL", "oom" → "oom").  NULL for another word.
 */
const char *tr_states_parse (const char *word);

/* The record outcome state a job's scheduler state (Slurm's upper-case
 * word) means for a step whose tasks were killed by a signal: "timeout"
 * (TIMEOUT, DEADLINE), "cancelled" (CANCELLED, PREEMPTED, REVOKED) or
 * "incomplete" (NODE_FAIL, BOOT_FAIL: the node went away, cause
 * node-failure), or NULL when it says nothing more than the signal does
 * (RUNNING, COMPLETING, PENDING, REQUEUED, OUT_OF_MEMORY, ... or NULL).
 */
const char *tr_states_outcome (const char *sched_state);

/* The record outcome state an LSF job's end means: "timeout", "oom" or
 * "cancelled" when exit_info (LSB_JOBEXIT_INFO, IBM LSF) names the run
 * limit, the memory or swap limit, or a user's or an administrator's
 * kill (SIG_TERM_USER, ..._FORCE, requeue); else, as OpenLava and older
 * LSF pass no LSB_JOBEXIT_INFO, "cancelled" when the job ended from the
 * signals bkill sends first (SIGINT, then SIGTERM: a batch job has no
 * terminal, so nothing else sends them), by the signal (wait_status
 * signalled) or by its shell's exit code for it (130, 143); else
 * "completed" for exit 0 and "failed" otherwise.  *why (when not NULL)
 * is set to a static phrase saying how it was decided, or NULL.
 */
const char *tr_states_lsf (int wait_status,
                           const char *exit_info,
                           const char **why);
/* The scheduler's node-failure word (NODE_FAIL, BOOT_FAIL) a reason
 * names ("the scheduler reports the job NODE_FAIL"), or NULL.
 */
const char *tr_states_node_failure (const char *reason);

/* The run view's Gantt mark for a state or its sacct word: '=' completed,
 * '>' running, 'F' failed, 'C' cancelled, 'T' timeout, 'M' oom, 'N'
 * NODE_FAIL or BOOT_FAIL, '?' otherwise.
 */
char tr_states_mark (const char *word);

/* A state (or its sacct word) as Nextflow names a task's: COMPLETED,
 * RUNNING, ABORTED (cancelled), FAILED (failed, timeout, oom, NODE_FAIL,
 * BOOT_FAIL), "-" otherwise.
 */
const char *tr_states_nextflow (const char *word);

/* How a state (or its sacct word) ends a sentence about a step: "failed",
 * "timed out", "killed for lack of memory", ...; NULL for a word that is
 * no state.
 */
const char *tr_states_phrase (const char *word);

#endif /* !TRACER_STATES_H */
