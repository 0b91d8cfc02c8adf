/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_OPENMETRICS_H
#define TRACER_OPENMETRICS_H

#include <stddef.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/util/strbuf.h"
#include "stepsum.h"

/* The running steps of a node as metrics for Prometheus, without a
 * listener of tracer's own: tracerd writes them every
 * store.live_interval into a file in the directory that node_exporter's
 * textfile collector reads (daemon.textfile_dir; doc/prometheus.md).
 *
 *     <daemon.textfile_dir>/tracer.prom
 *
 * The text is the exposition format node_exporter's textfile collector
 * parses (Prometheus text format 0.0.4, whose samples, HELP and TYPE
 * lines and label escaping OpenMetrics shares): one family per figure,
 * one sample per running step, and "# EOF" at the end.  Every sample
 * carries the labels of TR_OPENMETRICS_LABELS, taken from the step's
 * live row (tr_livesum_row): the identity the scheduler and the node
 * gave the record, and the run as record/runid names it; nothing of the
 * job's environment.  A figure that is unknown has no sample, never a 0.
 * A step has samples while it runs and none once it ended: the file
 * holds only the steps running at its writing.
 */

/* The file's name in the directory (node_exporter reads *.prom). */
#define TR_OPENMETRICS_FILE "tracer.prom"

/* The labels of every sample, in the order written. */
#define TR_OPENMETRICS_LABELS                                               \
    "cluster", "node", "job_id", "step_id", "user", "account", "partition", \
        "run", "pipeline", "process"

/* A label value is cut to at most this many bytes (at a character
 * boundary), so that no name makes the file or a series large.
 */
#define TR_OPENMETRICS_VALUE_MAX 256

/* A running step as the file shows it: its live row and the two figures
 * the row does not keep.
 */
struct tr_openmetrics_step {
    const tr_stepsum_t *row;  /* tr_livesum_row of its live record */
    double mem_current_bytes; /* summary.memory.current_bytes, or NAN */
    double stalled_s;         /* the current stall, 0 when watched and
                               * not stalled, NAN when not watched */
};

/* Fill step from row and the live record rec it was made from.  Never
 * fails.
 */
void tr_openmetrics_step (struct tr_openmetrics_step *step,
                          const tr_stepsum_t *row,
                          json_t *rec);

/* Append the label value s to sb as the format quotes it: '\\', '"' and
 * newline escaped ("\\\\", "\\\"", "\\n"), every other control character
 * and every byte that is not UTF-8 written '?' (as the record's identity
 * writes them), cut to TR_OPENMETRICS_VALUE_MAX bytes.  The quotes are
 * not written.  Returns 0, or -1 with errno = ENOMEM.
 */
int tr_openmetrics_label_value (tr_strbuf_t *sb, const char *s);

/* The whole file for n running steps (n may be 0: a file without
 * samples).  Returns 0, or -1 with errno = ENOMEM (sb then holds a part).
 */
int tr_openmetrics_text (tr_strbuf_t *sb,
                         const struct tr_openmetrics_step *steps,
                         size_t n);

/* The name of the i-th metric the file may hold (a counter's ends in
 * "_total"), in the file's order, or NULL past the last: for the docs
 * and the dashboard's check (the unit test).
 */
const char *tr_openmetrics_metric (size_t i);

/* Replace dir/TR_OPENMETRICS_FILE with len bytes of text, atomically: a
 * temporary file in dir (a name that does not end in ".prom", so the
 * collector never reads it half written), mode 0644, renamed over the
 * file.  dir itself is opened without following a symbolic link, and a
 * link at the file's name is replaced, never written through.  Returns
 * 0, or -1 with errno and error.
 */
int tr_openmetrics_write (const char *dir,
                          const char *text,
                          size_t len,
                          tr_error_t *error);

/* Remove dir/TR_OPENMETRICS_FILE (a missing one is fine).  Returns 0,
 * or -1 with errno and error.
 */
int tr_openmetrics_remove (const char *dir, tr_error_t *error);

#endif /* !TRACER_OPENMETRICS_H */
