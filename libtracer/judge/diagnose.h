/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_DIAGNOSE_H
#define TRACER_DIAGNOSE_H

#include <stddef.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/record/stepsum.h"

/* Per-step diagnosis: what held a step back and what to change, from
 * one summary row (a step merged over its nodes).  Each rule looks at a
 * few numbers of the row against a threshold of struct
 * tr_diag_thresholds (conf.h, set from report.diagnosis in tracer.yaml)
 * and, when it fires, adds a finding: a code, a severity, one line of
 * text that says what happened and what would help, and the numbers it
 * was judged on.  Unknown numbers (NAN) never fire a rule.  Every rule
 * and threshold is described in doc/diagnosis.md.
 */

/* Finding codes, in the order the rules run (the order of findings of
 * the same severity).
 */
#define TR_DIAG_FAILED "failed"
#define TR_DIAG_OOM "oom"
#define TR_DIAG_MEM_PRESSURE "mem-pressure"
#define TR_DIAG_IO_BOUND "io-bound"
#define TR_DIAG_STALLED "stalled"
#define TR_DIAG_OVER_CPU "over-cpu"
#define TR_DIAG_OVER_MEM "over-mem"
#define TR_DIAG_IDLE "idle"
#define TR_DIAG_THROTTLED "throttled"
#define TR_DIAG_IMBALANCED "imbalanced"
#define TR_DIAG_GPU_IDLE "gpu-idle"
#define TR_DIAG_CPU_BOUND "cpu-bound"
#define TR_DIAG_SHORT "short"
#define TR_DIAG_OK "ok"
#define TR_DIAG_INCOMPLETE "incomplete"

/* Severities, least severe first; in JSON "info", "warning",
 * "critical".
 */
typedef enum {
    TR_DIAG_INFO = 0,
    TR_DIAG_WARNING = 1,
    TR_DIAG_CRITICAL = 2,
} tr_diag_severity_t;

/* The built-in thresholds, the same as tr_conf_create() sets in
 * conf->diagnosis.
 */
void tr_diag_defaults (struct tr_diag_thresholds *t);

/* Diagnose one row with thresholds t (NULL: the defaults).  Returns a
 * new reference to an array of findings, most severe first (rule order
 * within a severity), never empty ("ok" when nothing else is found):
 *   {"code": "io-bound", "severity": "warning", "text": "I/O-bound: ...",
 *    "evidence": {"psiio": 0.41, "cpueff": 0.22, ...}}
 * Evidence members are named like the tracer-report --format fields
 * (stepsum.h) where one exists, in raw units (fractions 0..1, bytes,
 * seconds); unknown values are left out.  Returns NULL with errno =
 * EINVAL (row NULL) or ENOMEM.
 */
json_t *tr_diagnose (const tr_stepsum_t *row,
                     const struct tr_diag_thresholds *t);

/* tr_diagnose, with every size its texts name (--mem, --cpus-per-task)
 * taken from advice: the step group's object of tr_recommend_groups, as
 * the view shows it under "Next time" (labelled "from N runs"), so that
 * a diagnosis and its view's advice never disagree.  advice NULL: the
 * same engine over this row alone with the built-in options
 * (tr_sizing_one_run (row, NULL), sizing.h); a caller with a site
 * configuration passes tr_sizing_one_run (row, opts) with
 * tr_sizing_opts (opts, conf), so that its sizes are the site's.
 * Advice of one run is labelled "a one-run estimate".  A size is named only where the engine's moves
 * the way the finding says (less for an over-allocation, more after an
 * OOM kill or under memory pressure); the finding's evidence then holds
 * it (suggestedmem, suggestedcpus).
 */
json_t *tr_diagnose_advised (const tr_stepsum_t *row,
                             const struct tr_diag_thresholds *t,
                             json_t *advice);

/* The summary line of a step: the texts of its most important findings
 * (the critical and warning ones, else the informational ones; at most
 * three, then "(+N more: code,...)"), joined by "; ".  Written into buf
 * (size bytes), cut with "..." when it does not fit.  Returns buf, or
 * NULL with errno = EINVAL (no buf, size 0 or findings not an array).
 */
const char *tr_diag_line (json_t *findings, char *buf, size_t size);

/* The codes of findings joined by ',' ("io-bound,over-mem"), for a
 * listing column.  Returns the number of codes written, or -1 with
 * errno = EINVAL (as tr_diag_line) or ERANGE (buf too small; it holds
 * the codes that fit).
 */
int tr_diag_codes (json_t *findings, char *buf, size_t size);

/* The most severe finding's severity, or -1 with errno = EINVAL when
 * findings is not a non-empty array of findings.
 */
int tr_diag_worst (json_t *findings);

#endif /* !TRACER_DIAGNOSE_H */
