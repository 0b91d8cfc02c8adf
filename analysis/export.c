/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report --export: the selected steps as workload traces for a
 * simulator (libtracer/view/opendc.h), written into a directory.  The rows
 * the filters select come from the index like a listing's; a step is
 * selected or not as a whole (its state and time window are judged over
 * all its nodes), and then every record of it, one per node, is loaded,
 * verified and converted.  --export=parquet needs no record: the rows
 * themselves, one per step and node, go into a lake (lake.h) with their
 * step's diagnosis and cost as the listing and --waste give them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/view/lake.h"
#include "libtracer/view/nftrace.h"
#include "libtracer/view/opendc.h"
#include "libtracer/util/path.h"
#include "libtracer/record/record.h"
#include "cli.h"

static int cmp_step (const tr_stepsum_t *x, const tr_stepsum_t *y)
{
    int c;

    if ((c = strcmp (x->cluster, y->cluster)))
        return c;
    if ((c = strcmp (x->job_id, y->job_id)))
        return c;
    return strcmp (x->step_id, y->step_id);
}

static int cmp_node (const void *a, const void *b)
{
    const tr_stepsum_t *x = a, *y = b;
    int c = cmp_step (x, y);

    return c ? c : strcmp (x->node, y->node);
}

static int cmp_key (const void *key, const void *elem)
{
    return cmp_step (key, elem);
}

/* The steps of set that pass the step filters (state, time window), as
 * merged rows sorted by step; NULL on ENOMEM.
 */
static tr_rowset_t *kept_steps (struct rep *r, const tr_rowset_t *set)
{
    tr_rowset_t *steps = tr_rowset_create ();

    if (!steps)
        return NULL;
    for (size_t i = 0; i < set->n; i++)
        if (tr_rowset_add (steps, &set->rows[i]) < 0)
            goto fail;
    if (tr_rowset_merge_steps (steps, &r->q) < 0)
        goto fail;
    if (steps->n > 1)
        qsort (steps->rows, steps->n, sizeof (*steps->rows), cmp_node);
    return steps;
fail:
    tr_rowset_destroy (steps);
    return NULL;
}

/* The output directory, created if need be; -1 said on stderr. */
static int open_dir (const char *path)
{
    int fd;

    if (mkdir (path, 0777) < 0 && errno != EEXIST) {
        rep_err ("%s: %s\n", path, strerror (errno));
        return -1;
    }
    if ((fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rep_err ("%s: %s\n", path,
                 errno == ENOTDIR ? "not a directory" : strerror (errno));
    return fd;
}

/* Convert the record of row; EXIT_OK, or EXIT_RUNTIME on ENOMEM. */
static int add_row (struct rep *r,
                    const char *root,
                    const tr_stepsum_t *row,
                    tr_opendc_t *x,
                    size_t *skipped)
{
    char path[4096], note[300];
    const char *sig;
    tr_error_t error;
    json_t *rec;
    int rc;

    if (snprintf (path, sizeof (path), "%s/%s", root, row->path)
        >= (int)sizeof (path)) {
        rep_err ("%s/%s: path too long\n", root, row->path);
        r->errors++;
        return EXIT_OK;
    }
    if (!(rec = rep_load_verified (r, path, note, sizeof (note), &sig)))
        return EXIT_OK;
    rc = tr_opendc_add (x, rec, &error);
    json_decref (rec);
    if (rc < 0) {
        rep_err ("%s\n", errno == ENOMEM ? "out of memory"
                                         : tr_error_str (&error));
        return EXIT_RUNTIME;
    }
    if (rc == 1) {
        rep_err ("%s: step %s.%s on %s left out: %s\n", path, row->job_id,
                 row->step_id, row->node, tr_error_str (&error));
        (*skipped)++;
    }
    return EXIT_OK;
}

/* --export=nextflow-trace: DIR/trace.txt from the run's merged steps. */
static int export_nftrace (struct rep *r, tr_rowset_t *set)
{
    const tr_stepsum_t **rows = NULL;
    tr_rowset_t *steps = kept_steps (r, set);
    tr_error_t error;
    char *text = NULL;
    size_t len = 0;
    mode_t mask;
    int rc = EXIT_RUNTIME, fd = -1;

    if (!steps || (steps->n && !(rows = calloc (steps->n, sizeof (*rows))))) {
        rep_err ("out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < steps->n; i++)
        rows[i] = &steps->rows[i];
    if (steps->n == 0) {
        rep_err ("no steps of run %s to export; nothing written\n",
                 r->q.run_id);
        goto done;
    }
    if (!(text = tr_nftrace_text (rows, steps->n, &len, &error))) {
        rep_err ("%s\n", tr_error_str (&error));
        goto done;
    }
    if ((fd = open_dir (r->export_dir)) < 0)
        goto done;
    mask = umask (0);
    umask (mask);
    if (tr_path_write_atomic (fd, "trace.txt", text, len, 0666 & ~mask,
                              (uid_t)-1, (gid_t)-1, &error) < 0) {
        rep_err ("%s/trace.txt: %s\n", r->export_dir, tr_error_str (&error));
        goto done;
    }
    fprintf (stderr, "tracer-report: run %s written to %s/trace.txt\n",
             r->q.run_id, r->export_dir);
    rc = EXIT_OK;
done:
    if (fd >= 0)
        close (fd);
    free (text);
    free (rows);
    tr_rowset_destroy (steps);
    return rc;
}

/* A node row of the Parquet export: its step (in kept_steps) and day. */
struct pq_row {
    const tr_stepsum_t *row;
    size_t step;
    char day[16];
};

static int cmp_pq_row (const void *a, const void *b)
{
    const struct pq_row *x = a, *y = b;
    int c = strcmp (x->day, y->day);

    return c ? c : cmp_node (x->row, y->row);
}

/* What each step gives its node rows: the diagnosis the listing shows
 * for it, its --waste figures, and how many node rows share them.
 */
struct pq_step {
    char *diagnosis;
    struct tr_waste_row cost;
    size_t nodes;
};

/* The selected node rows (one per record, in steps kept), by day. */
static struct pq_row *pq_rows (tr_rowset_t *set, tr_rowset_t *steps,
                               struct pq_step *ps, size_t *np,
                               size_t *undated)
{
    struct pq_row *v = calloc (set->n ? set->n : 1, sizeof (*v));
    size_t n = 0;

    if (!v)
        return NULL;
    if (set->n > 1)
        qsort (set->rows, set->n, sizeof (*set->rows), cmp_node);
    for (size_t i = 0; i < set->n; i++) {
        const tr_stepsum_t *row = &set->rows[i], *st;

        /* the same node's record twice (read twice): the first stands */
        if (i > 0 && !cmp_node (row, &set->rows[i - 1]))
            continue;
        if (!(st = bsearch (row, steps->rows, steps->n, sizeof (*steps->rows),
                            cmp_key)))
            continue;
        if (tr_lake_day (row, v[n].day, sizeof (v[n].day)) < 0) {
            (*undated)++;
            continue;
        }
        v[n].row = row;
        v[n].step = (size_t)(st - steps->rows);
        ps[v[n].step].nodes++;
        n++;
    }
    if (n > 1)
        qsort (v, n, sizeof (*v), cmp_pq_row);
    *np = n;
    return v;
}

static double share (double v, size_t k)
{
    return isnan (v) ? v : v / (double)k;
}

/* Write the rows day by day; EXIT_OK or EXIT_RUNTIME (said). */
static int pq_write (struct rep *r, tr_lake_t *lake, const struct pq_row *v,
                     size_t n, const struct pq_step *ps, const char *currency,
                     size_t *already)
{
    tr_error_t error;

    for (size_t i = 0, j; i < n; i = j) {
        if (tr_lake_begin_day (lake, v[i].day, &error) < 0)
            goto fail;
        for (j = i; j < n && !strcmp (v[j].day, v[i].day); j++) {
            const struct pq_step *s = &ps[v[j].step];
            struct tr_lake_row lr = { .row = v[j].row,
                                      .diagnosis = s->diagnosis };

            if (tr_lake_exported (lake, v[j].row->path)) {
                (*already)++;
                continue;
            }
            for (int k = 0; k < 3; k++) {
                lr.cost.core[k] = share (s->cost.core[k], s->nodes);
                lr.cost.mem[k] = share (s->cost.mem[k], s->nodes);
                lr.cost.gpu[k] = share (s->cost.gpu[k], s->nodes);
                lr.cost.money[k] = share (s->cost.money[k], s->nodes);
            }
            /* on failure the day's rows so far are dropped with the
             * lake, never written
             */
            if (tr_lake_add (lake, &lr, &error) < 0)
                goto fail;
        }
        if (tr_lake_end_day (lake, currency, &error) < 0)
            goto fail;
    }
    return EXIT_OK;
fail:
    rep_err ("%s: %s\n", r->export_dir, tr_error_str (&error));
    return EXIT_RUNTIME;
}

/* --export=parquet: the selected steps' node rows into the lake at
 * r->export_dir (lake.h).
 */
static int export_parquet (struct rep *r, tr_rowset_t *set)
{
    time_t started = time (NULL);
    tr_rowset_t *steps = kept_steps (r, set);
    struct pq_step *ps = NULL;
    struct pq_row *v = NULL;
    struct tr_cost_part *parts = NULL;
    struct tr_cost cost;
    tr_lake_t *lake = NULL;
    tr_error_t error;
    char created_by[64];
    size_t n = 0, undated = 0, already = 0;
    mode_t mask;
    int rc = EXIT_RUNTIME;

    if (!steps || rep_cost (r, &cost, &parts) < 0
        || !(ps = calloc (steps->n ? steps->n : 1, sizeof (*ps)))) {
        rep_err ("out of memory\n");
        goto done;
    }
    if (steps->n == 0) {
        rc = rep_none (r->jobs_arg ? REP_NONE_NAMED : REP_NONE_SELECTED,
                       "no steps to export; nothing written\n");
        goto done;
    }
    for (size_t i = 0; i < steps->n; i++) {
        tr_waste_row (&steps->rows[i], &cost, &ps[i].cost);
        if (!(ps[i].diagnosis = strdup (rep_diag_codes (&steps->rows[i], r)))) {
            rep_err ("out of memory\n");
            goto done;
        }
    }
    if (!(v = pq_rows (set, steps, ps, &n, &undated))) {
        rep_err ("out of memory\n");
        goto done;
    }
    if (undated)
        rep_err ("%zu record%s without a start or end time left out\n",
                 undated, undated == 1 ? "" : "s");
    snprintf (created_by, sizeof (created_by), "tracer-report %s",
              TRACER_VERSION);
    mask = umask (0);
    umask (mask);
    if (!(lake = tr_lake_open (r->export_dir, r->since_last, created_by,
                               0666 & ~mask, 0777 & ~mask, &error))) {
        rep_err ("%s\n", tr_error_str (&error));
        goto done;
    }
    if (pq_write (r, lake, v, n, ps, cost.currency, &already) != EXIT_OK)
        goto done;
    if (tr_lake_finish (lake, started, &error) < 0) {
        rep_err ("%s: %s\n", r->export_dir, tr_error_str (&error));
        goto done;
    }
    fprintf (stderr, "tracer-report: %zu row%s (steps on nodes) in %zu "
             "file%s written to %s", tr_lake_rows_written (lake),
             tr_lake_rows_written (lake) == 1 ? "" : "s",
             tr_lake_files_written (lake),
             tr_lake_files_written (lake) == 1 ? "" : "s", r->export_dir);
    if (r->since_last)
        fprintf (stderr, "; %zu there already", already);
    fprintf (stderr, "\n");
    rc = EXIT_OK;
done:
    tr_lake_destroy (lake);
    for (size_t i = 0; ps && i < steps->n; i++)
        free (ps[i].diagnosis);
    free (ps);
    free (v);
    free (parts);
    tr_rowset_destroy (steps);
    if (rc == EXIT_OK && r->errors)
        rc = EXIT_RUNTIME;
    return rc;
}

int rep_export (struct rep *r, tr_rowset_t *set)
{
    const char *root = r->store_path ? r->store_path : r->conf->store_path;
    bool csv = !strcmp (r->export_format, "opendc-csv");
    tr_rowset_t *steps = NULL;
    tr_opendc_t *x = tr_opendc_create ();
    size_t skipped = 0;
    tr_error_t error;
    char created_by[64];
    mode_t mask;
    int rc = EXIT_OK, fd = -1;

    if (!strcmp (r->export_format, "parquet")) {
        tr_opendc_destroy (x);
        return export_parquet (r, set);
    }
    if (!strcmp (r->export_format, "nextflow-trace")) {
        tr_opendc_destroy (x);
        return export_nftrace (r, set);
    }
    if (!x || !(steps = kept_steps (r, set))) {
        rep_err ("out of memory\n");
        rc = EXIT_RUNTIME;
        goto done;
    }
    if (set->n > 1)
        qsort (set->rows, set->n, sizeof (*set->rows), cmp_node);
    for (size_t i = 0; i < set->n && rc == EXIT_OK; i++) {
        const tr_stepsum_t *row = &set->rows[i];

        /* the same node's record twice (read twice): the first stands */
        if (i > 0 && !cmp_node (row, &set->rows[i - 1]))
            continue;
        if (bsearch (row, steps->rows, steps->n, sizeof (*steps->rows),
                     cmp_key))
            rc = add_row (r, root, row, x, &skipped);
    }
    if (rc != EXIT_OK)
        goto done;
    if (tr_opendc_tasks (x) == 0) {
        /* steps were there but none could be exported: an error */
        rc = rep_none (skipped || r->jobs_arg ? REP_NONE_NAMED
                                              : REP_NONE_SELECTED,
                       "no steps to export%s; nothing written\n",
                       skipped ? " (every selected step was left out)" : "");
        goto done;
    }
    if ((fd = open_dir (r->export_dir)) < 0) {
        rc = EXIT_RUNTIME;
        goto done;
    }
    snprintf (created_by, sizeof (created_by), "tracer-report %s",
              TRACER_VERSION);
    mask = umask (0);
    umask (mask);
    if (tr_opendc_write (x, fd, csv ? TR_OPENDC_CSV : TR_OPENDC_PARQUET,
                         0666 & ~mask, created_by, &error) < 0) {
        rep_err ("%s: %s\n", r->export_dir, tr_error_str (&error));
        rc = EXIT_RUNTIME;
        goto done;
    }
    fprintf (stderr, "tracer-report: %zu task%s, %zu fragment%s written to "
             "%s\n", tr_opendc_tasks (x), tr_opendc_tasks (x) == 1 ? "" : "s",
             tr_opendc_fragments (x), tr_opendc_fragments (x) == 1 ? "" : "s",
             r->export_dir);
    if (skipped)
        fprintf (stderr, "tracer-report: %zu step%s left out (said above)\n",
                 skipped, skipped == 1 ? "" : "s");
done:
    if (fd >= 0)
        close (fd);
    tr_rowset_destroy (steps);
    tr_opendc_destroy (x);
    if (rc == EXIT_OK && r->errors)
        rc = EXIT_RUNTIME;
    return rc;
}
