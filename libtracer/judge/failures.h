/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_FAILURES_H
#define TRACER_FAILURES_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/record/stepsum.h"

/* tracer-report --failures: the failed steps of a selection summed by
 * cause class (cause.h), by culprit tool, by step group, by node and by
 * user, and the nodes where a step group fails while it succeeds on
 * others.  A step counts when it ended (running rows are left out) and
 * is not an extern step (which only holds the allocation); it failed when
 * it has a cause.  A step of several nodes counts once for each of its
 * nodes in the by-node sums.
 *
 * A suspect node: a step group with at least TR_FAILURES_SUSPECT_MIN
 * failures on the node and at least one success on other nodes.
 *
 * Returns a new reference (layout in doc/report-json.md, "Failures"):
 *   {"steps": N, "failed": F,
 *    "by_cause": [{"name", "failed"}], "by_tool": [{"name", "failed"}],
 *    "by_group" | "by_node" | "by_user": [{"name", "failed", "steps"}],
 *    "suspects": [{"group", "node", "failed", "steps", "ok_elsewhere",
 *                  "nodes_ok"}]}
 * each list sorted by failures, most first, then by name; keys with no
 * failure are left out.  NULL with errno = EINVAL (rows NULL with n > 0)
 * or ENOMEM.
 */
#define TR_FAILURES_SUSPECT_MIN 2
json_t *tr_failures (const tr_stepsum_t *const *rows,
                     size_t n,
                     tr_error_t *error);

/* Print a tr_failures result: text in 80 columns (the first 10 of each
 * list), or with parsable every row as "Section|Name|Node|Failed|Steps|
 * OkElsewhere" (sacct --parsable2).  Returns 0, or -1 with errno =
 * EINVAL (not a tr_failures result) or a write's error.
 */
int tr_failures_print (FILE *out, json_t *f, bool parsable);

#endif /* !TRACER_FAILURES_H */
