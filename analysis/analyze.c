/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report's analyses over many runs: --summary, --recommend,
 * --regressions and --waste.  The arithmetic is in libtracer
 * (aggregate.c, recommend.c); this file turns the configuration into
 * their options and prints what they return.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/judge/failures.h"
#include "libtracer/notify/mail.h"
#include "libtracer/view/mail_summary.h"
#include "libtracer/record/merge.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"
#include "libtracer/view/recommend_print.h"
#include "libtracer/view/report.h"
#include "libtracer/view/runview.h"
#include "libtracer/view/html.h"
#include "libtracer/util/nss.h"
#include "libtracer/util/path.h"
#include "libtracer/view/runcmp.h"
#include "cli.h"

static int print_json (json_t *o)
{
    char *s = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);

    if (!s)
        return EXIT_RUNTIME;
    printf ("%s\n", s);
    free (s);
    return EXIT_OK;
}

/* The configured prices, as tr_waste and tr_recommend_groups take them;
 * *parts is the caller's to free.  -1 on ENOMEM.
 */
int rep_cost (struct rep *r, struct tr_cost *cost,
              struct tr_cost_part **parts)
{
    const struct tr_conf_cost *c = &r->conf->cost;

    *parts = NULL;
    cost->core_hour = c->core_hour;
    cost->gb_hour = c->gb_hour;
    cost->gpu_hour = c->gpu_hour;
    cost->currency = c->currency;
    cost->npart = c->n_partitions;
    if (c->n_partitions
        && !(*parts = calloc (c->n_partitions, sizeof (**parts))))
        return -1;
    for (size_t i = 0; i < c->n_partitions; i++) {
        (*parts)[i].partition = c->partitions[i].name;
        (*parts)[i].core_hour = c->partitions[i].core_hour;
        (*parts)[i].gb_hour = c->partitions[i].gb_hour;
        (*parts)[i].gpu_hour = c->partitions[i].gpu_hour;
    }
    cost->part = *parts;
    return 0;
}

/* Pointers to the set's rows (*rows, the caller's to free) and the
 * configured prices (rep_cost), as the analyses over a whole set take
 * them.  -1 on ENOMEM, said on standard error.
 */
static int rows_and_cost (struct rep *r, tr_rowset_t *set,
                          const tr_stepsum_t ***rows, struct tr_cost *cost,
                          struct tr_cost_part **parts)
{
    *rows = NULL;
    *parts = NULL;
    if ((set->n && !(*rows = calloc (set->n, sizeof (**rows))))
        || rep_cost (r, cost, parts) < 0) {
        rep_err ("out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < set->n; i++)
        (*rows)[i] = &set->rows[i];
    return 0;
}

void rep_recommend_opts (struct rep *r, struct tr_recommend_opts *o)
{
    tr_sizing_opts (o, r->conf);
    if (r->last_n)
        o->last_n = r->last_n;
}

static int recommend (struct rep *r, const tr_stepsum_t *const *rows,
                      size_t n, tr_error_t *error)
{
    struct tr_cost_part *parts;
    struct tr_cost cost;
    struct tr_recommend_opts o;
    const char *out = r->json ? "json" : r->output ? r->output : "table";
    json_t *recs;
    int rc;

    if (rep_cost (r, &cost, &parts) < 0) {
        tr_errprintf (error, "out of memory");
        return EXIT_RUNTIME;
    }
    rep_recommend_opts (r, &o);
    o.cost = &cost;
    recs = tr_recommend_groups (rows, n, &o, error);
    free (parts);
    if (!recs)
        return EXIT_RUNTIME;
    if (!strcmp (out, "table"))
        rc = tr_recommend_print_table_width (stdout, recs,
                                             tr_report_width (STDOUT_FILENO));
    else if (!strcmp (out, "sbatch"))
        rc = tr_recommend_print_sbatch (stdout, recs);
    else if (!strcmp (out, "nextflow"))
        rc = tr_recommend_print_nextflow (stdout, recs);
    else if (!strcmp (out, "pbs"))
        rc = tr_recommend_print_pbs (stdout, recs);
    else if (!strcmp (out, "lsf"))
        rc = tr_recommend_print_lsf (stdout, recs);
    else if (!strcmp (out, "snakemake"))
        rc = tr_recommend_print_snakemake (stdout, recs);
    else if (!strcmp (out, "snakemake8"))
        rc = tr_recommend_print_snakemake8 (stdout, recs);
    else
        rc = tr_recommend_print_json (stdout, recs);
    json_decref (recs);
    if (rc < 0) {
        tr_errprintf (error, "writing: %s", strerror (errno));
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* --regressions --by=run: each run of a pipeline against the pipeline's
 * earlier runs (runcmp.h), through the same regressions.
 */
static int run_regressions (struct rep *r, const tr_stepsum_t *const *rows,
                            size_t n, const struct tr_recommend_regress_opts *o,
                            tr_error_t *error)
{
    tr_rowset_t *runs = tr_rowset_create ();
    const tr_stepsum_t **v = NULL;
    json_t *regs = NULL;
    int rc = EXIT_RUNTIME;

    if (!runs || tr_run_rows (rows, n, runs, error) < 0
        || (runs->n && !(v = calloc (runs->n, sizeof (*v))))) {
        tr_errprintf (error, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < runs->n; i++)
        v[i] = &runs->rows[i];
    if (!(regs = tr_recommend_regressions (v, runs->n, o, error)))
        goto out;
    rc = r->json ? print_json (regs)
                 : tr_recommend_print_regressions (stdout, regs) < 0
                       ? EXIT_RUNTIME : EXIT_OK;
out:
    json_decref (regs);
    free (v);
    tr_rowset_destroy (runs);
    return rc;
}

static int regressions (struct rep *r, const tr_stepsum_t *const *rows,
                        size_t n, tr_error_t *error)
{
    const struct tr_conf_regression *c = &r->conf->regression;
    struct tr_recommend_regress_opts o;
    json_t *regs;
    int rc;

    tr_recommend_regress_opts_default (&o);
    o.min_history = (unsigned)c->min_history;
    o.max_history = (unsigned)c->max_history;
    o.threshold = c->z;
    o.min_ratio = c->ratio;
    if (r->by && !strcmp (r->by, "run"))
        return run_regressions (r, rows, n, &o, error);
    if (!(regs = tr_recommend_regressions (rows, n, &o, error)))
        return EXIT_RUNTIME;
    rc = r->json ? print_json (regs)
                 : tr_recommend_print_regressions (stdout, regs) < 0
                       ? EXIT_RUNTIME : EXIT_OK;
    json_decref (regs);
    return rc;
}

static int waste (struct rep *r, const tr_stepsum_t *const *rows, size_t n,
                  tr_error_t *error)
{
    struct tr_cost_part *parts;
    struct tr_cost cost;
    json_t *w;
    int rc;

    if (rep_cost (r, &cost, &parts) < 0) {
        tr_errprintf (error, "out of memory");
        return EXIT_RUNTIME;
    }
    w = tr_waste (rows, n, r->by ? r->by : "user", &cost, error);
    free (parts);
    if (!w)
        return errno == EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
    rc = r->json ? print_json (w)
                 : tr_waste_print (stdout, w, r->parsable,
                                   tr_report_width (STDOUT_FILENO)) < 0 ? EXIT_RUNTIME
                                                              : EXIT_OK;
    json_decref (w);
    return rc;
}

static int failures (struct rep *r, const tr_stepsum_t *const *rows,
                     size_t n, tr_error_t *error)
{
    json_t *f = tr_failures (rows, n, error);
    int rc;

    if (!f)
        return errno == EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
    rc = r->json ? print_json (f)
                 : tr_failures_print (stdout, f, r->parsable) < 0 ? EXIT_RUNTIME
                                                                 : EXIT_OK;
    json_decref (f);
    return rc;
}

/* The group summaries as text, each "Label: value" line wrapped to the
 * terminal under its value.
 */
static int print_summary (json_t *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    int rc = EXIT_RUNTIME;

    if (f) {
        int prc = tr_group_summary_print (f, s);

        if (fclose (f) == 0 && prc == 0
            && tr_report_wrap (stdout, buf, len,
                               tr_report_width (STDOUT_FILENO)) == 0)
            rc = EXIT_OK;
    }
    free (buf);
    return rc;
}

static int summary (struct rep *r, const tr_stepsum_t *const *rows,
                    size_t n, tr_error_t *error)
{
    json_t *s = tr_group_summary (rows, n, r->by, error);
    int rc;

    if (!s)
        return errno == EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
    rc = r->json ? print_json (s) : print_summary (s);
    json_decref (s);
    return rc;
}

int rep_analyze (struct rep *r, tr_rowset_t *set)
{
    const tr_stepsum_t **rows = NULL;
    tr_error_t error;
    size_t n = 0;
    int rc;

    if (set->n && !(rows = calloc (set->n, sizeof (*rows)))) {
        rep_err ("out of memory\n");
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < set->n; i++) {
        /* an array summary counts tasks: one row per job, its batch
         * step where it has one (rows are in identity order, which puts
         * batch first)
         */
        if (r->mode == MODE_SUMMARY && !strcmp (r->by, "array") && n
            && !strcmp (rows[n - 1]->job_id, set->rows[i].job_id)
            && !strcmp (rows[n - 1]->cluster, set->rows[i].cluster))
            continue;
        rows[n++] = &set->rows[i];
    }
    error.text[0] = '\0';
    if (r->mode == MODE_SUMMARY)
        rc = summary (r, rows, n, &error);
    else if (r->mode == MODE_RECOMMEND && n == 0) {
        /* an empty table would read as "nothing to change": said, and
         * nothing printed
         */
        enum rep_none_kind k =
            r->jobs_arg ? REP_NONE_NAMED : REP_NONE_SELECTED;

        if (r->admin && r->q.only_uid)
            rc = rep_none (k, "no runs to recommend from: only your own "
                           "(uid %u) jobs are read; -a for every user's, -u "
                           "USER for one user's\n", (unsigned)r->q.uid);
        else
            rc = rep_none (k, "no runs to recommend from in this period and "
                           "selection\n");
        free (rows);
        return rc;
    }
    else if (r->mode == MODE_RECOMMEND)
        rc = recommend (r, rows, n, &error);
    else if (r->mode == MODE_REGRESS)
        rc = regressions (r, rows, n, &error);
    else if (r->mode == MODE_FAILURES)
        rc = failures (r, rows, n, &error);
    else
        rc = waste (r, rows, n, &error);
    free (rows);
    if (rc != EXIT_OK)
        rep_err ("%s\n",
                 error.text[0] ? tr_error_str (&error) : "out of memory");
    return rc;
}

int rep_runs (struct rep *r, tr_rowset_t *set)
{
    const tr_stepsum_t **rows = NULL;
    struct tr_cost_part *parts = NULL;
    struct tr_cost cost;
    tr_error_t error;
    json_t *runs = NULL;
    int rc = EXIT_RUNTIME;

    error.text[0] = '\0';
    if (rows_and_cost (r, set, &rows, &cost, &parts) < 0)
        goto out;
    if (!(runs = tr_runs (rows, set->n, &cost, &error))) {
        rep_err ("%s\n", tr_error_str (&error));
        rc = errno == EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
        goto out;
    }
    if (r->json)
        rc = print_json (runs);
    else if (tr_runs_print (stdout, runs, r->format, r->parsable,
                            r->noheader, &error) < 0) {
        rep_err ("%s\n", tr_error_str (&error));
        rc = errno == EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
    }
    else
        rc = EXIT_OK;
out:
    json_decref (runs);
    free (rows);
    free (parts);
    return rc;
}

/* The run page into r->html_out, whole or not at all (a temporary beside
 * it, renamed over it), or stdout.
 */
static int write_run_html (struct rep *r, json_t *view)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    if (!(f = open_memstream (&buf, &len))
        || tr_html_run_report (f, view, NULL) < 0 || fclose (f) != 0) {
        rep_err ("writing the run page: %s\n", strerror (errno));
        free (buf);
        return EXIT_RUNTIME;
    }
    return rep_write_file (r, buf, len);
}

int rep_run (struct rep *r, tr_rowset_t *set)
{
    const tr_stepsum_t **rows = NULL;
    struct tr_cost_part *parts = NULL;
    struct tr_recommend_opts ro;
    struct tr_run_view_opts o;
    struct tr_cost cost;
    tr_error_t error;
    json_t *view = NULL;
    int rc = EXIT_RUNTIME;

    error.text[0] = '\0';
    if (rows_and_cost (r, set, &rows, &cost, &parts) < 0)
        goto out;
    rep_recommend_opts (r, &ro);
    o.cost = &cost;
    o.recommend = &ro;
    o.diagnosis = &r->conf->diagnosis;
    o.now_ms = 0;
    if (!(view = tr_run_view (rows, set->n, r->run_id, &o, &error))) {
        if (errno == ENOENT)
            rc = rep_none (REP_NONE_NAMED,
                           "%s%s (tracer-report --runs lists the runs)\n",
                           tr_error_str (&error),
                           r->q.only_uid ? " of yours" : "");
        else
            rep_err ("%s\n", tr_error_str (&error));
        goto out;
    }
    if (r->html)
        rc = write_run_html (r, view);
    else if (r->json)
        rc = print_json (view);
    else if (tr_run_view_print (stdout, view, tr_report_width (STDOUT_FILENO),
                                &error)
             < 0)
        rep_err ("%s\n", tr_error_str (&error));
    else
        rc = EXIT_OK;
out:
    json_decref (view);
    free (rows);
    free (parts);
    return rc;
}

/* Users, then jobs, then steps in their natural order. */
static int digest_cmp (const void *a, const void *b)
{
    const tr_stepsum_t *x = *(const tr_stepsum_t *const *)a;
    const tr_stepsum_t *y = *(const tr_stepsum_t *const *)b;
    int c = x->uid < y->uid ? -1 : x->uid > y->uid ? 1
                                                   : strcmp (x->user, y->user);

    return c ? c : tr_stepsum_cmp_id (x, y);
}

/* One user's digest, mailed or printed; 0 or -1. */
static int digest_one (struct rep *r, const tr_stepsum_t *const *rows,
                       size_t n, const struct tr_cost *cost)
{
    struct tr_recommend_opts o;
    tr_error_t error;
    const char *user = rows[0]->user;
    char *pw_name = NULL;
    char addr[512], subject[256], *text = NULL, *msg = NULL;
    const char *to[1] = { addr };
    size_t tlen = 0, mlen = 0;
    json_t *w, *recs;
    FILE *f;
    int rc = -1;

    /* records may carry only the uid */
    if (!*user && !isnan (rows[0]->uid)
        && tr_nss_user_by_uid ((uid_t)rows[0]->uid, &pw_name, NULL) == 0)
        user = pw_name;
    if (!*user) {
        rep_err ("digest: uid %.0f has no user name; skipped\n",
                 rows[0]->uid);
        free (pw_name);
        return -1;
    }
    rep_recommend_opts (r, &o);
    o.cost = cost;
    w = tr_waste (rows, n, "group", cost, NULL);
    recs = tr_recommend_groups (rows, n, &o, NULL);
    if ((f = open_memstream (&text, &tlen))) {
        if (tr_mail_digest (f, user, rows, n, w, recs, r->q.from,
                            r->to_given ? r->q.to : time (NULL)) < 0) {
            fclose (f);
            goto out;
        }
        if (fclose (f) != 0)
            goto out;
    }
    if (!text)
        goto out;
    if (tr_mail_user_address (addr, sizeof (addr), user,
                              r->conf->mail.domain) < 0) {
        rep_err ("digest for %s: not a usable address with mail.domain "
                 "'%s'\n", user, r->conf->mail.domain);
        goto out;
    }
    snprintf (subject, sizeof (subject), "tracer digest for %s", user);
    {
        struct tr_mail_msg m = {
            .from = r->conf->mail.from,
            .to = to,
            .nto = 1,
            .subject = subject,
            .text = text,
        };

        if (!(msg = tr_mail_compose (&m, time (NULL), &mlen, &error))) {
            rep_err ("digest for %s: %s\n", user, tr_error_str (&error));
            goto out;
        }
    }
    if (r->digest_print) {
        printf ("From tracer %ld\n", (long)time (NULL));
        fwrite (msg, 1, mlen, stdout);
        printf ("\n");
        rc = ferror (stdout) ? -1 : 0;
    }
    else if (tr_mail_send (r->conf->mail.sendmail, r->conf->mail.from, to,
                           1, msg, mlen, 60, &error) < 0)
        rep_err ("digest for %s: %s\n", user, tr_error_str (&error));
    else
        rc = 0;
out:
    json_decref (w);
    json_decref (recs);
    free (text);
    free (msg);
    free (pw_name);
    return rc;
}

int rep_digest (struct rep *r, tr_rowset_t *set)
{
    const tr_stepsum_t **rows = NULL;
    struct tr_cost_part *parts = NULL;
    struct tr_cost cost;
    int rc = EXIT_OK;
    size_t start = 0, sent = 0;

    if (rows_and_cost (r, set, &rows, &cost, &parts) < 0) {
        free (rows);
        return EXIT_RUNTIME;
    }
    qsort (rows, set->n, sizeof (*rows), digest_cmp);
    for (size_t i = 1; i <= set->n; i++) {
        if (i < set->n && !strcmp (rows[i]->user, rows[start]->user)
            && rows[i]->uid == rows[start]->uid)
            continue;
        if (digest_one (r, rows + start, i - start, &cost) < 0)
            rc = EXIT_RUNTIME;
        else
            sent++;
        start = i;
    }
    if (!r->digest_print)
        fprintf (stderr, "%s: %zu digest%s sent\n", rep_prog, sent,
                 sent == 1 ? "" : "s");
    free (rows);
    free (parts);
    return rc;
}
