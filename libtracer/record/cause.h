/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_CAUSE_H
#define TRACER_CAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/* Why a step failed: one cause class per step that did not complete,
 * decided from its record alone, with one line of evidence.  Every view
 * (listing, job view, JSON, mail, run view, tracer-report --failures)
 * asks this one function.  The classes, in the order they are decided
 * (doc/diagnosis.md, "Causes"):
 *
 *   oom, stalled, timeout, cancelled, node-failure, io-error,
 *   input-missing, tool-crash, tool-error, unknown
 *
 * A completed or running step has none.
 */
typedef enum {
    TR_CAUSE_NONE = 0,
    TR_CAUSE_OOM,
    TR_CAUSE_STALLED,
    TR_CAUSE_TIMEOUT,
    TR_CAUSE_CANCELLED,
    TR_CAUSE_NODE_FAILURE,
    TR_CAUSE_IO_ERROR,
    TR_CAUSE_INPUT_MISSING,
    TR_CAUSE_TOOL_CRASH,
    TR_CAUSE_TOOL_ERROR,
    TR_CAUSE_UNKNOWN,
} tr_cause_t;

/* Room for a cause's evidence text, terminator included. */
#define TR_CAUSE_TEXT_MAX 320

/* The class's name ("oom", "tool-crash", ...; "" for TR_CAUSE_NONE). */
const char *tr_cause_name (tr_cause_t cause);

/* The class named name, TR_CAUSE_NONE for "" or an unknown name. */
tr_cause_t tr_cause_from_name (const char *name);

/* Decide the cause of the step whose record is rec (a validated record,
 * or one with the optional members events, progress and files in the
 * forms of doc/record-format.md; members of other forms are ignored).
 * text (size bytes, may be NULL) gets the evidence in one line: what
 * decided the class, with the culprit process and its chain where known
 * ("samtools (pid 4242) killed by SIGSEGV (core dumped) 0.8 s before the
 * end, under sh 4241 < bash 4240; 2 collateral failures").  Text taken
 * from the record (tool names, paths, kernel lines) has its control
 * characters blanked.  Returns the class (TR_CAUSE_NONE and "" for a
 * completed, running or NULL record).
 */
tr_cause_t tr_cause_of (json_t *rec, char *text, size_t size);

/* The cause as JSON: {"class": "tool-crash", "text": "..."}, or NULL
 * when the record has none (errno 0) or on ENOMEM.
 */
json_t *tr_cause_json (json_t *rec);

/* Whether a failed step of this cause is blamed on a tool: its culprit
 * process (outcome.culprit) failed of its own doing.  Not when the
 * scheduler ended the step (timeout, cancelled, node-failure) or it
 * was stalled (blocked until something else ended it): the process the
 * scheduler's signal killed first is its victim, not its culprit, and
 * no listing, sum by tool or advice names it.
 */
bool tr_cause_blames_tool (tr_cause_t cause);

/* The signal's name ("SIGSEGV"), NULL when it has none. */
const char *tr_cause_signal_name (int sig);

#endif /* !TRACER_CAUSE_H */
