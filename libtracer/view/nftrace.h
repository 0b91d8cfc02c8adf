/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_NFTRACE_H
#define TRACER_NFTRACE_H

#include <stddef.h>

#include "libtracer/util/error.h"
#include "libtracer/record/stepsum.h"

/* Nextflow trace files (doc/export.md, "Nextflow trace"): the tasks of a
 * run as Nextflow's trace.txt lists them, so that tools reading
 * Nextflow traces read tracer's.  A task is a job (its steps folded
 * with tr_stepsum_job_add; an array task is a task).  The columns are
 * Nextflow's default fields in its order, then more of its fields:
 *
 *   task_id hash native_id name status exit submit duration realtime
 *   %cpu peak_rss peak_vmem rchar wchar process tag start complete
 *   queue cpus memory time read_bytes write_bytes
 *
 * in Nextflow's default (not raw) formats: times "yyyy-MM-dd
 * HH:mm:ss.SSS" in local time, durations as tr_nftrace_duration, sizes
 * as tr_nftrace_memory, %cpu "12.3%"; "-" where unknown, as Nextflow
 * writes a missing value.
 */

/* A duration of ms milliseconds as Nextflow writes one: "450ms" under a
 * second, "5.2s" (tenths, ".0" left out) under a minute, else whole
 * seconds as "1d 2h 3m 4s" without the parts that are 0.  "-" when ms
 * is not finite or negative.  Returns buf.
 */
const char *tr_nftrace_duration (char *buf, size_t size, double ms);

/* A size as Nextflow writes one: "0", or in 1024 steps "512 B",
 * "29.8 KB", "354 MB", "1.2 GB" (one decimal, ".0" left out).  "-" when
 * not finite or negative.  Returns buf.
 */
const char *tr_nftrace_memory (char *buf, size_t size, double bytes);

/* The trace of rows (merged steps, any order): a header and a line per
 * task, tab-separated, tasks in order of submission (else start), then
 * job id; task_id counts them from 1 and name is "PROCESS (N)", the
 * N-th task of its process (the job name where a task has no process).
 * Returns a new string of *len bytes (free it), or NULL with errno =
 * EINVAL (rows NULL with n > 0) or ENOMEM.
 */
char *tr_nftrace_text (const tr_stepsum_t *const *rows,
                       size_t n,
                       size_t *len,
                       tr_error_t *error);

#endif /* !TRACER_NFTRACE_H */
