/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_AGGREGATE_H
#define TRACER_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#include "cost.h"
#include "libtracer/util/error.h"
#include "libtracer/record/stepsum.h"

/* Aggregates over many step summaries for tracer-report: what was
 * allocated against what was used, and its cost, per user, account,
 * partition, step group or tool (--waste); and the spread of runtimes,
 * efficiency and memory over the tasks of an array job or the runs of a
 * step group (--summary).  Both take rows (tr_stepsum_t, one job step
 * merged over its nodes) and return JSON, which doc/report-json.md
 * describes member by member; the printers render that JSON, so
 * --json and the tables always agree.
 */

/* Waste and cost of rows[0..n-1] by key; by is one of
 *   "user", "account", "partition"  the row's member of that name
 *   "step" or "group"               the step group (row->group)
 *   "pipeline"                      the row's pipeline (row->pipeline,
 *                                   "" for rows in no pipeline run)
 *   "tool"                          the tools a row ran (row->tools),
 *                                   each given its share of the row's
 *                                   CPU time; the rest goes to
 *                                   "(other)"
 * For each key: steps, distinct jobs, and allocated, used and wasted
 * core-hours, GiB-hours and GPU-hours (and money when cost has a
 * price).  Memory used is the per-node peaks held for the whole
 * runtime, an upper bound, so memory waste is a lower bound.  Rows
 * whose allocation (req_cores, elapsed_s) or CPU use is unknown are
 * counted, not summed.  Keys are sorted by wasted money when there are
 * prices, else by wasted core-hours, largest first.  cost may be NULL.
 *
 * Returns a new reference (layout in doc/report-json.md, "Waste"), or
 * NULL with errno = EINVAL (an unknown by, rows NULL with n > 0, a
 * price that is negative or not finite, an override without a
 * partition; error says which) or ENOMEM.
 */
json_t *tr_waste (const tr_stepsum_t *const *rows,
                  size_t n,
                  const char *by,
                  const struct tr_cost *cost,
                  tr_error_t *error);

/* What tr_waste adds up for one row, in resource-hours and money:
 * [0] allocated, [1] used, [2] wasted.  Every view that shows a row's
 * waste or cost (the Parquet export) takes it from here, so that its
 * sums are tr_waste's.  A figure tr_waste does not sum for the row is
 * NAN: core, memory and GPU figures when the allocation or CPU use is
 * unknown; memory or GPU figures when those are unknown (GPU figures are
 * 0 for a row without GPUs, as tr_waste counts them); money when no
 * price is set (cost NULL, invalid, or every price 0), as tr_waste
 * then has no money.
 */
struct tr_waste_row {
    double core[3];
    double mem[3]; /* GiB-hours */
    double gpu[3];
    double money[3];
};

void tr_waste_row (const tr_stepsum_t *row,
                   const struct tr_cost *cost,
                   struct tr_waste_row *w);

/* Print w (from tr_waste) as a table: one line per key, then the
 * total.  Without parsable, columns are aligned under a header and a
 * dashed rule, as sacct prints them; with parsable, fields are
 * separated by '|' with none after the last (sacct --parsable2) and
 * there are no rules.  The GiB-hour and GPU-hour columns are left out
 * when w has none (by tool; no GPU allocated), the cost columns when w
 * has no money.  A table wider than maxw columns (0: no limit; ignored
 * when parsable) is printed as panels one under the other, a blank line
 * between them, each with the key column and as many whole groups of
 * columns (counts, core-hours, GiB-hours, GPU-hours, cost) as fit.
 * Returns 0, or -1 with errno = EINVAL (w is not a tr_waste result) or
 * the error of a failed write.
 */
int tr_waste_print (FILE *out, json_t *w, bool parsable, int maxw);

/* Summaries of groups of rows; by is one of
 *   "array"  the tasks of each array job (rows with an array_job_id,
 *            grouped by cluster and array_job_id; other rows are
 *            skipped and counted)
 *   "group"  each step group (row->group)
 *   "name"   each job name (row->job_name)
 * Every row is one member of its group, so for per-task figures of an
 * array pass one row per task (its batch step, say).  For each group:
 * rows by state, elapsed time (min, mean, max, median, 90th
 * percentile) and a histogram of it, CPU efficiency and memory peak
 * (min, mean, max) and the slowest and the most memory-hungry member.
 * Groups are in natural order of their key.
 *
 * Returns a new reference (layout in doc/report-json.md, "Group
 * summaries"), or NULL with errno = EINVAL (an unknown by, rows NULL
 * with n > 0) or ENOMEM.
 */
json_t *tr_group_summary (const tr_stepsum_t *const *rows,
                          size_t n,
                          const char *by,
                          tr_error_t *error);

/* Print s (from tr_group_summary) for people: a paragraph per group
 * with the histogram drawn as bars of '#', the longest 40 characters.
 * Returns 0, or -1 with errno = EINVAL (s is not a tr_group_summary
 * result) or the error of a failed write.
 */
int tr_group_summary_print (FILE *out, json_t *s);

/* Pipeline runs (runid.h, doc/runs.md): the rows that are in a run
 * (row->run_id not ""), grouped by user (the uid; the name where the
 * uid is unknown) and run id, so
 * that nobody joins another user's run by choosing its id.  For each
 * run: its id, pipeline and user; start (the first step's), end and
 * elapsed (unless a step still runs: then "running" is true and end and
 * elapsed are left out); jobs (distinct cluster and job id: each array
 * task is a job, as sacct lists them) and steps, and how many of each
 * failed (failed, cancelled, timed out, out of memory; a job by its
 * state as tr_stepsum_job_add gives it, the batch step's); and the
 * allocated, used and wasted core-hours, GiB-hours, GPU-hours and
 * money, computed as tr_waste computes them.  Rows are merged steps.
 * Runs are sorted by start, then id; rows in no run are counted
 * ("outside_steps").  cost may be NULL.
 *
 * Returns a new reference (layout in doc/report-json.md, "Runs"), or
 * NULL with errno = EINVAL (rows NULL with n > 0, a bad price) or
 * ENOMEM.
 */
json_t *tr_runs (const tr_stepsum_t *const *rows,
                 size_t n,
                 const struct tr_cost *cost,
                 tr_error_t *error);

/* Print runs (from tr_runs) as sacct prints a listing: the fields of
 * format (NULL: "Run,Start,Elapsed,Jobs,Failed,Waste%"), FIELD[%WIDTH]
 * separated by ',' (names in any case; tr_runs_print_fields lists
 * them), aligned under a header and a dashed rule (a value too long is
 * cut with '+'), or with parsable '|' between whole values; no header
 * with noheader.  Unknown values are empty.  Returns 0, or -1 with
 * errno = EINVAL (runs is not a tr_runs result, an unknown field) or
 * the error of a failed write.
 */
int tr_runs_print (FILE *out,
                   json_t *runs,
                   const char *format,
                   bool parsable,
                   bool noheader,
                   tr_error_t *error);

/* The fields of tr_runs_print, a line each with what they mean. */
void tr_runs_print_fields (FILE *out);

/* One field of tr_runs_print (its name, in any case) of one run of a
 * tr_runs result, as the listing writes it ("" when unknown), into buf.
 * 0, or -1 with errno = EINVAL (no such field).
 */
int tr_runs_cell (char *buf, size_t size, json_t *run, const char *field);

/* The order tr_runs keeps: tr_runs_cmp_user is a run's user (the uid,
 * else the name where the uid is unknown); tr_runs_cmp_rows, a qsort
 * comparator of const tr_stepsum_t pointers, orders by that user, the
 * run id, then job and step.
 */
int tr_runs_cmp_user (const tr_stepsum_t *x, const tr_stepsum_t *y);
int tr_runs_cmp_rows (const void *pa, const void *pb);

#endif /* !TRACER_AGGREGATE_H */
