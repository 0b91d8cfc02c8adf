/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_RUNCMP_H
#define TRACER_RUNCMP_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/record/query.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/record/stepsum.h"

/* Two pipeline runs side by side (doc/runs.md, "Comparing runs").
 *
 * The rows (merged steps) of run a and of run b (row->run_id) are folded
 * into tasks, one per job (tr_stepsum_job_add: an array task is a
 * task), and the tasks grouped by process (row->process; "" for a task
 * in no process, such as the driver's own record).  For each process
 * and run: tasks, failed tasks (failed, cancelled, timed out, out of
 * memory), elapsed median and total, CPU time, the largest peak memory
 * and I/O (read + write bytes), each total over the tasks that have it.
 *
 * A change is the drift test of regressions (tr_recommend_drift) with
 * run a's tasks as the history and the median of run b's tasks as the
 * value, per metric (tr_recommend_metric: elapsed, peak memory, CPU,
 * I/O per task), in both directions: o's threshold, min_ratio and
 * mad_floor; o->min_history is the fewest tasks run a needs for a
 * metric to be compared.  A change under a second (elapsed, CPU) or a
 * MiB (memory, I/O) per task is never flagged: noise at any ratio.
 *
 * A run id names one user's run: a and b must each be the run of one
 * user among the rows (an admin names the user with -u).
 *
 * Returns a new reference to the object documented in
 * doc/report-json.md ("Run comparison"), whose "same_pipeline" is false
 * when the runs' pipelines differ; or NULL with errno = ENOENT (a run
 * not among the rows), EINVAL (a or b empty or the same, a run of
 * several users, bad options) or ENOMEM, said in error.
 */
json_t *tr_run_compare (const tr_stepsum_t *const *rows,
                        size_t n,
                        const char *a,
                        const char *b,
                        const struct tr_recommend_regress_opts *o,
                        tr_error_t *error);

/* Print cmp (from tr_run_compare) in 80 columns: the two runs, a line
 * per process and run, and the changes; with parsable, a header and one
 * line per process and run with '|' between whole values.  Unknown
 * values are empty.  0, or -1 with errno = EINVAL (not a comparison) or
 * the error of a failed write.
 */
int tr_run_compare_print (FILE *out, json_t *cmp, bool parsable);

/* One row per run of the rows (keyed by user and run id, as tr_runs
 * keys them) into out, for regressions over a pipeline's runs: group
 * the pipeline (runs without one are left out), job_id the run id,
 * step_id "", start and end the run's, elapsed_s the span between
 * them, cpu_s, read_bytes and write_bytes summed over the steps,
 * mem_peak_bytes the largest step's, state "completed" or, when a job
 * failed, "failed"; runs still running are left out.  0, or -1 with
 * errno = ENOMEM.
 */
int tr_run_rows (const tr_stepsum_t *const *rows,
                 size_t n,
                 tr_rowset_t *out,
                 tr_error_t *error);

#endif /* !TRACER_RUNCMP_H */
