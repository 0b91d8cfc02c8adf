/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_REPORT_H
#define TRACER_REPORT_H

#include <stdio.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/util/units.h"

/* Text views of records for tracer-report (and tracer-run --demo). */

/* Print the job view of recs (an array of validated records, any mix of
 * jobs, steps and nodes) to out: per job a header, then one block per
 * step (batch, extern, interactive, then numbered steps in numeric
 * order).  A step with one record shows elapsed time, CPU against the
 * allocated cores, exact peak memory against the request, tasks and
 * outcome.  A step with records from
 * several nodes is merged (tr_merge_steps in merge.h): the totals first
 * (longest elapsed, CPU summed against the cores of every node, the
 * largest node's memory peak against the per-node request and the peaks
 * added up, I/O, the step's own network traffic, tools, the worst state),
 * how many of the nodes the step ran on reported, then one line per node
 * in natural order (node2 before node10).  notes (may be NULL) is an
 * object mapping a record's array index (as a decimal string) to a
 * one-line note, e.g. its signature status, printed with that record
 * (on its "Record:" line, or below its node's line).  What applies to
 * many steps (the memory definitions, node-wide network counters) is
 * said once, in a notes block at the end.  Lines are wrapped to 80
 * columns (tr_report_wrap).  Returns 0, or -1 with errno.
 */
int tr_report_job_view (FILE *out, json_t *recs, json_t *notes);

/* What the job view adds to each step besides the records' own figures:
 * the stall fractions, GPUs and idle time of the step's summary
 * (stepsum.h), its diagnosis under diag (NULL: the default thresholds)
 * and, from next_time when set, what to request next time.
 */
struct tr_diag_thresholds;
struct tr_stepsum;
struct tr_report_view_opts {
    const struct tr_diag_thresholds *diag;
    /* The step group's advice (a group of tr_recommend_groups, a new
     * reference or NULL): the diagnosis names its sizes, and next_time
     * shows it, so the two never disagree.
     */
    json_t *(*advice) (const struct tr_stepsum *step, void *arg);
    void (*next_time) (FILE *out, const struct tr_stepsum *step, void *arg);
    void *arg;
    /* Columns to wrap the view's lines to (tr_report_width); 0: 80. */
    int width;
    /* Said once, in the notes block at the end of the view: pairs of
     * label and text, ending with NULL; NULL for none.
     */
    const char *const *footnotes;
};

int tr_report_job_view_ex (FILE *out,
                           json_t *recs,
                           json_t *notes,
                           const struct tr_report_view_opts *opts);

/* The summary of a step of tr_merge_steps (merge.h): the records of
 * recs its counted rows name (a second record of a node is not counted),
 * added up into sum with tr_stepsum_from_record and tr_stepsum_merge,
 * strings in pool.  Returns 0, or -1 with errno (ENOMEM; EINVAL when no
 * row is counted).
 */
struct tr_strpool;
int tr_report_step_summary (json_t *recs,
                            json_t *step,
                            struct tr_strpool *pool,
                            struct tr_stepsum *sum);

/* The job view's width: TIOCGWINSZ of fd when fd is a terminal, else
 * $COLUMNS when it is a number of TR_REPORT_MIN_WIDTH to
 * TR_REPORT_MAX_WIDTH, else TR_REPORT_DEFAULT_WIDTH.
 */
#define TR_REPORT_DEFAULT_WIDTH 80
#define TR_REPORT_MIN_WIDTH 20
#define TR_REPORT_MAX_WIDTH 1000
int tr_report_width (int fd);

/* Write the len bytes of text to out, each line wrapped at blanks to
 * width columns (at least TR_REPORT_MIN_WIDTH; a UTF-8 character is one
 * column), the blanks at a break dropped.  Continuation lines hang under
 * the line's value: the first non-blank after its "label:" when that is
 * at most half the width in, else four columns in from the line's
 * indentation.  A word longer than the room left is cut.  Returns 0, or
 * -1 when out has an error.
 */
int tr_report_wrap (FILE *out, const char *text, size_t len, int width);

/* One line (up to its first newline) to out as tr_report_wrap writes
 * it, its continuation lines hanging hang columns in (at most half the
 * width).  Returns 0, or -1 when out has an error.
 */
int tr_report_wrap_hang (FILE *out, const char *line, int width, int hang);

/* The len bytes of text to out, each line as tr_report_wrap_hang writes
 * it with hang (a list of names and their help: the help's column), or
 * as tr_report_wrap does when hang is negative.  Returns 0, or -1 when
 * out has an error.
 */
int tr_report_wrap_lines (FILE *out,
                          const char *text,
                          size_t len,
                          int width,
                          int hang);



/* Live snapshots: what tracerd writes of each running step under
 * <daemon.state_dir>/live/ (see doc/record-format.md).
 */

/* Whether the tracerd behind a socket runs. */
typedef enum {
    TR_REPORT_DAEMON_UNKNOWN = 0, /* could not tell */
    TR_REPORT_DAEMON_RUNNING,     /* it answered */
    TR_REPORT_DAEMON_STOPPED,     /* nothing listens on the socket */
} tr_report_daemon_t;

/* Ask the daemon at socket_path whether it runs ("ping", bounded by
 * timeout_ms).  Any answer, a refusal included, means RUNNING; no socket
 * (ENOENT) or a socket nobody listens on (ECONNREFUSED: what a killed
 * daemon leaves) means STOPPED; anything else (EACCES, a timeout) is
 * UNKNOWN.  A daemon logs connections it does not admit, so callers it
 * would refuse should not ask.
 */
tr_report_daemon_t tr_report_daemon_state (const char *socket_path,
                                           int timeout_ms);

struct tr_report_live_opts {
    double now;                 /* Unix seconds; 0: the current time */
    double snapshot_interval_s; /* sampling.snapshot_interval (0: off) */
    tr_report_daemon_t daemon;  /* from tr_report_daemon_state() */
};

/* Read every snapshot ("*.json", not starting with '.') in the live
 * directory dir.  Returns a new reference to an array of entries, sorted
 * by cluster, job, step and node:
 *   {"file": PATH, "written_unix_ms": N, "age_s": S, "stale": B,
 *    "stale_reason": "..." (only when stale), "record": {...}}
 * A snapshot is stale when the daemon is STOPPED, when snapshots are off,
 * or when it is older than 3 times the interval at which it should be
 * rewritten (the larger of snapshot_interval_s and the step's sampling
 * interval).  The record gets time.elapsed_s (start to the snapshot's
 * modification time) when it has none.
 * A file that cannot be used is an entry {"file": PATH, "error": TEXT},
 * TEXT naming the file: unreadable, not a valid record, not a snapshot,
 * a name that does not match its identity, or an owner other than root
 * and the step's user.  Files that vanish while being read (the step
 * ended) are left out, and so are files of another user that the caller
 * may not read (EACCES): they are not the caller's.
 * Returns NULL with errno when dir cannot be read (ENOENT when it does
 * not exist, EACCES, ENOMEM), with error text.
 */
json_t *tr_report_live_scan (const char *dir,
                             const struct tr_report_live_opts *opts,
                             tr_error_t *error);

/* Print the entries of tr_report_live_scan that have a record as a
 * table, one line per step and node: job, step, name, user, node, start,
 * elapsed, CPU cores in use (mean of the last few series points, against
 * the cores requested where known), memory now and at its peak, processes
 * and the snapshot's age, with a STALE or STALLED note where it applies.
 * The table fits width columns (0: no limit) where it can: the start
 * column is left out when the table is wider (elapsed says the same),
 * then the node column (every snapshot is of this node), and a note that does not fit on its row goes on the next line,
 * indented and wrapped (tr_report_wrap_hang).  Entries without a record
 * are skipped.  Returns 0, or -1 with errno.
 */
int tr_report_live_view (FILE *out, json_t *entries, int width);

#endif /* !TRACER_REPORT_H */
