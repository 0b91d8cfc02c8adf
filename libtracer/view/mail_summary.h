/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_MAIL_SUMMARY_H
#define TRACER_MAIL_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/notify/mail.h"
#include "libtracer/record/stepsum.h"

/* What one summary is built from: the merged steps of the job (rows,
 * in step order), each step's diagnosis findings (tr_diagnose) and
 * recommendation group (recommend.h; NULL entries when none), and how
 * the full report reaches the reader.
 */
struct tr_mail_job {
    const struct tr_mail_event *ev;
    const tr_stepsum_t *rows;
    size_t n;
    json_t *const *findings;
    json_t *const *advice;
    const char *attachment;  /* attached report's file name, or NULL */
    const char *report_url;  /* link to the report, or NULL */
    const char *report_note; /* why the report is not attached, or NULL */
    const char *subject;     /* Slurm's subject, quoted at the end */
};

/* Whether a summary is worth sending under the mail section m: never,
 * always, or when actionable: a step did not complete, or (a job that
 * ran at least m->min_elapsed_s) a finding is at least m->severity.
 * The reason into why (size bytes).
 */
bool tr_mail_worth (const struct tr_mail_job *j,
                    const struct tr_conf_mail *m,
                    char *why,
                    size_t size);

/* The summary as plain text and as HTML (a fragment-free document with
 * inline styles only, for mail clients).  0, or -1 with errno.
 */
int tr_mail_summary_text (FILE *out, const struct tr_mail_job *j);
int tr_mail_summary_html (FILE *out, const struct tr_mail_job *j);

/* A user's digest over [from, to]: jobs and their outcomes, core- and
 * GiB-hours allocated against used, the steps that failed, then waste
 * (tr_waste by group, may be NULL) and recommendations
 * (tr_recommend_groups, may be NULL) as tracer-report prints them.
 * rows are that user's merged steps.  0, or -1 with errno.
 */
int tr_mail_digest (FILE *out,
                    const char *user,
                    const tr_stepsum_t *const *rows,
                    size_t n,
                    json_t *waste,
                    json_t *recs,
                    time_t from,
                    time_t to);

#endif /* !TRACER_MAIL_SUMMARY_H */
