/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_HTML_H
#define TRACER_HTML_H

#include <stdio.h>
#include <jansson.h>

/* The self-contained HTML report of one job (tracer-report --html): one
 * HTML5 file with inline CSS and inline SVG charts, no scripts and no
 * external resources, readable in a desktop browser and on a phone.
 * doc/html-report.md describes what it shows and the element ids and
 * classes that are a stable contract for tests and post-processing.
 */

struct tr_diag_thresholds;
struct tr_stepsum;

struct tr_html_opts {
    /* Diagnosis thresholds; NULL: tr_diag_defaults (diagnose.h). */
    const struct tr_diag_thresholds *diag;
    /* What to request next time for a step: one element of the "groups"
     * array of tr_recommend_groups() (recommend.h; members cpus, mem and
     * time each with "text", "request", "basis"; "runs", "confidence",
     * "notes"), as a new reference, or NULL when there is none.  Called
     * once per step, with the step's summary merged over its nodes.  May
     * be NULL: no step has a recommendation.
     */
    json_t *(*recommend) (const struct tr_stepsum *step, void *arg);
    void *arg;
    /* "Generated at" in the footer, Unix seconds; 0: time (NULL). */
    double now;
};

/* Write the report of recs (an array of validated records of ONE job:
 * one cluster and job id, any number of steps and nodes) to out.  notes
 * (may be NULL) is an object mapping a record's index in recs (as a
 * decimal string) to a one-line note, as for tr_report_job_view
 * (report.h), e.g. its signature status; the notes are listed in the
 * footer.  o may be NULL (the defaults).  Everything is computed before
 * the first byte is written, so a failure other than a write error
 * writes nothing.  Returns 0, or -1 with errno = EINVAL (out NULL, recs
 * not an array of objects, empty, or of several jobs), ENOMEM, or EIO
 * (a write to out failed).
 */
int tr_html_job_report (FILE *out,
                        json_t *recs,
                        json_t *notes,
                        const struct tr_html_opts *o);

/* Write s to out escaped for HTML text and for attribute values in
 * either kind of quotes: & < > " ' become entities; what the text views
 * show as escapes (tr_strbuf_printable's rule: control characters, the
 * line separators, bidirectional overrides and isolates, bytes that are
 * not valid UTF-8) become the same visible escapes ("\\x1b",
 * "\\u202e", "\\xff"), but newline and tab, white space in HTML.
 * Returns 0, or -1 with errno = EINVAL (out or s NULL) or EIO (a write
 * failed).
 */
int tr_html_escape (FILE *out, const char *s);

/* Write the run page of view (a tr_run_view result, runview.h) to out:
 * the same self-contained HTML5 file as the job's (inline CSS and SVG,
 * no scripts, no external resources) with the run's figures, a Gantt
 * chart of every task with a known start (one <rect> per task in
 * svg.gantt, a row per node and more where its tasks overlap, coloured
 * by state, its figures in a <title>), a chart of each process's CPU
 * and memory efficiency, the processes' table and the slowest tasks.  o
 * may be NULL (only o->now is used).  Returns 0, or -1 with errno =
 * EINVAL (not a run view), ENOMEM or EIO (a write failed).
 */
int tr_html_run_report (FILE *out, json_t *view, const struct tr_html_opts *o);

#endif /* !TRACER_HTML_H */
