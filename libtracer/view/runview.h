/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_RUNVIEW_H
#define TRACER_RUNVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/conf/conf.h"
#include "libtracer/util/error.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/record/stepsum.h"

/* The run view (tracer-report --run=ID, doc/runs.md): one pipeline run
 * (runid.h) in full.  Its rows are the rows whose run_id is id, which
 * must all be one user's (runs are keyed by user and run id, as tr_runs
 * keys them: the caller selects the user).
 *
 *   run        the run's object of tr_runs over these rows: the same
 *              figures --runs lists for it
 *   processes  one per process (row->process; "" for none), by name:
 *              tasks (jobs: each array task is one), failed and
 *              causes ({"OUT_OF_MEMORY": 2, "FAILED (exit 1)": 1}),
 *              efficiencies, the process's own tr_runs figures (every
 *              step of its jobs, the extern step's too, so that the
 *              shares of the run add up to 100 %), bottleneck, next
 *              time (tr_recommend_groups over the run's steps but the
 *              extern ones, the groups of this process) and tools
 *   tasks      one per job, by start: its state, figures and the
 *              diagnosis (tr_diagnose) of its main step (the step that
 *              used the most CPU, the extern step left out: for a
 *              batch script that runs srun, the srun step)
 *   slowest    up to 5 job ids of tasks, the longest elapsed first
 *
 * Layout in doc/report-json.md ("Run view"); unknown values are left
 * out.  o may hold NULL members (defaults, no prices).  Returns a new
 * reference, or NULL with errno = ENOENT (no row of the run), EINVAL
 * (the rows are several users': error names them; bad prices or
 * options) or ENOMEM.
 */
struct tr_run_view_opts {
    const struct tr_cost *cost;
    const struct tr_recommend_opts *recommend;
    const struct tr_diag_thresholds *diagnosis;
    double now_ms; /* the time live figures are aged against, ms
                         * since the epoch; 0: now */
};

json_t *tr_run_view (const tr_stepsum_t *const *rows,
                     size_t n,
                     const char *id,
                     const struct tr_run_view_opts *o,
                     tr_error_t *error);

/* The columns [*c0, *c1] (0 <= c0 <= c1 < cols) that a bar from start to
 * end takes on an axis from t0 to t1 drawn in cols columns: the column
 * of a time is its share of the axis times cols, the last column
 * included; a bar is at least one column.  An unknown end is t1.
 * -1 with errno = EINVAL when cols < 1 or start is unknown.
 */
int tr_run_gantt_cols (double t0,
                       double t1,
                       int cols,
                       double start,
                       double end,
                       int *c0,
                       int *c1);

/* The mark of a state on the text Gantt (tr_states_mark): '='
 * completed, '>' running, 'F' failed, 'C' cancelled, 'T' timeout, 'M'
 * out of memory, 'N' node failed (NODE_FAIL, BOOT_FAIL), '?' any other.
 */
char tr_run_gantt_mark (const char *state_name);

/* Print a tr_run_view result as the text view, lines at most width
 * columns (0: 80; see tr_report_width).  0, or -1 with errno (EINVAL:
 * not a run view) and error.
 */
int tr_run_view_print (FILE *out, json_t *view, int width, tr_error_t *error);

#endif /* !TRACER_RUNVIEW_H */
