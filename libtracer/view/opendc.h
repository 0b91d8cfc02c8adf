/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_OPENDC_H
#define TRACER_OPENDC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/util/error.h"

/* Workload traces for the OpenDC datacenter simulator, from records.
 *
 * OpenDC's "workload" trace format (its WorkloadTraceFormat) is two
 * tables in one directory: tasks.parquet, one row per task, and
 * fragments.parquet, each task's demand over time as consecutive
 * fragments.  A task runs on one host in the simulator, so each record
 * (one step on one node) becomes one task; a job of several steps or
 * nodes becomes several tasks, named "JOB.STEP@NODE".
 *
 * tasks:     id INT32, name STRING (optional), submission_time
 *            TIMESTAMP(ms, UTC), duration INT64 ms, cpu_count INT32,
 *            cpu_capacity DOUBLE MHz, mem_capacity INT64 MiB
 * fragments: id INT32 (the task), duration INT64 ms, cpu_count INT32,
 *            cpu_usage DOUBLE MHz
 *
 * doc/export.md says how each value comes from the record.
 */

/* The file names OpenDC's reader opens. */
#define TR_OPENDC_TASKS "tasks"
#define TR_OPENDC_FRAGMENTS "fragments"

typedef enum {
    TR_OPENDC_PARQUET,          /* tasks.parquet, fragments.parquet */
    TR_OPENDC_CSV,              /* tasks.csv, fragments.csv */
} tr_opendc_format_t;

typedef struct tr_opendc tr_opendc_t;

tr_opendc_t *tr_opendc_create (void);
void tr_opendc_destroy (tr_opendc_t *x);

/* Add the step of rec (a validated record) as a task with its
 * fragments.  0; 1 when the step cannot be a task (no CPU frequency in
 * its topology, no end time, shorter than a millisecond), why in error;
 * -1 with errno = ENOMEM.
 */
int tr_opendc_add (tr_opendc_t *x, json_t *rec, tr_error_t *error);

/* Tasks and fragments added so far. */
size_t tr_opendc_tasks (const tr_opendc_t *x);
size_t tr_opendc_fragments (const tr_opendc_t *x);

/* Write both tables into the directory dirfd with the given mode, each
 * atomically (a reader sees the old file or the new, never a part).
 * Tasks are numbered from 1 in order of start time, then name, and
 * their fragments follow in the same order.  created_by goes into the
 * Parquet metadata.  0, or -1 with errno, said in error.
 */
int tr_opendc_write (tr_opendc_t *x,
                     int dirfd,
                     tr_opendc_format_t format,
                     mode_t mode,
                     const char *created_by,
                     tr_error_t *error);

#endif /* !TRACER_OPENDC_H */
