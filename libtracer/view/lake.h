/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_LAKE_H
#define TRACER_LAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/util/error.h"

/* Step summaries as a Parquet "lake": one row per step and node, in
 * files partitioned by day the way Hive, Spark, Trino and DuckDB read a
 * directory (hive_partitioning):
 *
 *   DIR/day=YYYY-MM-DD/part-NNNN.parquet
 *   DIR/_tracer-export/days/YYYY-MM-DD   what each part of the day holds
 *   DIR/_tracer-export/last              when the last export ran
 *   DIR/_tracer-export/lock              held while an export runs
 *
 * A row's day is the store's day of its record: the UTC day of its end,
 * or of its start while it has none.  The columns are tracer's own
 * fields (tr_stepsum_fields, the listing's --format names, without the
 * per-node allocch and usedch that the cost columns replace), the
 * step's diagnosis codes as the listing shows them, and the step's
 * waste and cost as tracer-report --waste counts them (tr_waste_row),
 * divided evenly among the step's node rows so that any sum over rows is
 * --waste's.  doc/export.md lists every column.  Unknown values are
 * null, never 0.
 *
 * Exports add files, never rewrite one: each day's new rows go into a
 * new part, written atomically (a temporary name, then rename), and only
 * then is the day's state file replaced (again atomically) to name the
 * part and the records it holds.  A part that no state file names (an
 * export stopped between the two renames) is removed by the next export
 * of its day, whose rows it will export again: so a record is in the
 * lake once, whatever stops an export where.
 */

typedef struct tr_lake tr_lake_t;

/* A row to export: one step on one node. */
struct tr_lake_row {
    const tr_stepsum_t *row;  /* the node's summary (from the index) */
    const char *diagnosis;    /* the step's codes ("" for none) */
    struct tr_waste_row cost; /* this row's share of the step's */
};

/* The day of row into buf ("YYYY-MM-DD", UTC); 0, or -1 with errno =
 * EINVAL when it has no time.
 */
int tr_lake_day (const tr_stepsum_t *row, char *buf, size_t size);

/* When the last export into dir ran (*t, seconds since the epoch).  0;
 * 1 when dir holds no export (or none that finished); -1 with errno,
 * said in error.
 */
int tr_lake_last (const char *dir, time_t *t, tr_error_t *error);

/* Open dir for an export, creating it (one level, dir_mode) if need be,
 * and take its lock.  With add, dir may hold an earlier export, and
 * records it holds are not exported again (tr_lake_exported); without,
 * a dir that holds one is refused (EEXIST), so that two exports never
 * mix.  created_by goes into every part's metadata (NULL: none).
 * file_mode and dir_mode are what files and directories are
 * created with.  NULL with errno: EEXIST, EWOULDBLOCK (another export
 * into dir is running), ENOTDIR, the error of creating or opening it,
 * ENOMEM; said in error.
 */
tr_lake_t *tr_lake_open (const char *dir,
                         bool add,
                         const char *created_by,
                         mode_t file_mode,
                         mode_t dir_mode,
                         tr_error_t *error);

/* Release the lock and free l (the rows of a day not ended are
 * dropped: nothing of them was written).  NULL is a no-op.
 */
void tr_lake_destroy (tr_lake_t *l);

/* Start collecting the rows of day ("YYYY-MM-DD"), after ending the
 * previous day's.  Removes the day's parts that its state file does not
 * name.  0, or -1 with errno (EINVAL: not a day; the error of reading
 * the state), said in error.
 */
int tr_lake_begin_day (tr_lake_t *l, const char *day, tr_error_t *error);

/* Whether the record at path (a row's path) is in the lake already, in
 * the day begun.
 */
bool tr_lake_exported (const tr_lake_t *l, const char *path);

/* Add a row to the day begun (its day must be that day).  0, or -1 with
 * errno (EINVAL: no day begun, another day, a path that is empty or
 * holds a tab or newline; ENOMEM), said in error.
 */
int tr_lake_add (tr_lake_t *l, const struct tr_lake_row *r, tr_error_t *error);

/* Write the rows added to the day begun as its next part, then its
 * state file; nothing when no row was added.  currency (NULL: none)
 * goes into the part's metadata, naming the unit of the cost columns.
 * 0, or -1 with errno (the write's; nothing of the day is then in the
 * lake), said in error.
 */
int tr_lake_end_day (tr_lake_t *l, const char *currency, tr_error_t *error);

/* Note that the export that started at t has finished (for
 * tr_lake_last).  0, or -1 with errno, said in error.
 */
int tr_lake_finish (tr_lake_t *l, time_t t, tr_error_t *error);

/* Rows and part files written so far. */
size_t tr_lake_rows_written (const tr_lake_t *l);
size_t tr_lake_files_written (const tr_lake_t *l);

#endif /* !TRACER_LAKE_H */
