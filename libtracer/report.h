/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_REPORT_H
#define TRACER_REPORT_H

#include <stdio.h>
#include <jansson.h>

/* Text views of records for tracer-report (and tracer-run --demo). */

/* Print the job view of recs (an array of validated records, any mix of
 * jobs, steps and nodes) to out: per job a header, then one block per
 * step and node with elapsed time, CPU against the allocated cores, exact
 * peak memory against the request (with the memory definition), tasks
 * and outcome.  notes (may be NULL) is an object mapping a record's
 * array index (as a decimal string) to a one-line note, e.g. its
 * signature status.  Returns 0, or -1 with errno.
 */
int tr_report_job_view (FILE *out, json_t *recs, json_t *notes);

/* "1.5 GiB"-style size into buf. */
const char *tr_report_bytes (char *buf, size_t size, double bytes);

/* "HH:MM:SS" (or "D-HH:MM:SS") into buf. */
const char *tr_report_duration (char *buf, size_t size, double seconds);

#endif /* !TRACER_REPORT_H */
