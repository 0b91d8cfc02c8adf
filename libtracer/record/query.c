/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * sacct-style selection and listing of step summaries.  Filters that
 * hold for every node of a step are applied to each record's row before
 * rows are kept (a million rows of other users need not be held), the
 * ones that depend on the whole step (its worst state, its time span)
 * after the nodes are merged.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "merge.h"
#include "query.h"
#include "runid.h"
#include "states.h"

int tr_query_add_list (const char **list,
                       size_t *n,
                       char *arg,
                       const char *what,
                       tr_error_t *error)
{
    char *save = NULL, *tok;

    if (!*arg) {
        tr_errprintf (error, "%s: empty list", what);
        errno = EINVAL;
        return -1;
    }
    for (tok = strtok_r (arg, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        if (*n >= TR_QUERY_MAX_LIST) {
            tr_errprintf (error, "%s: more than %d names", what,
                          TR_QUERY_MAX_LIST);
            errno = EINVAL;
            return -1;
        }
        list[(*n)++] = tok;
    }
    return 0;
}

int tr_query_add_states (struct tr_query *q, char *arg, tr_error_t *error)
{
    size_t first = q->nstates;

    if (tr_query_add_list (q->states, &q->nstates, arg, "--state", error)
        < 0)
        return -1;
    for (size_t i = first; i < q->nstates; i++) {
        const char *state = tr_states_parse (q->states[i]);

        if (!state) {
            tr_errprintf (error, "--state: '%s' is not a state (CD, F, CA, "
                          "TO, OOM, R, NF, BF, IN, UN or their long names)",
                          q->states[i]);
            errno = EINVAL;
            return -1;
        }
        q->states[i] = state;
    }
    return 0;
}

int tr_query_add_tag (struct tr_query *q, char *arg, tr_error_t *error)
{
    char *eq = strchr (arg, '=');

    if (!eq || eq == arg) {
        tr_errprintf (error, "--tag: '%s' is not KEY=VALUE", arg);
        errno = EINVAL;
        return -1;
    }
    if (q->ntags >= TR_QUERY_MAX_TAGS) {
        tr_errprintf (error, "--tag: more than %d tags", TR_QUERY_MAX_TAGS);
        errno = EINVAL;
        return -1;
    }
    *eq = '\0';
    q->tag_keys[q->ntags] = arg;
    q->tag_values[q->ntags++] = eq + 1;
    return 0;
}

static bool in_list (const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp (list[i], s))
            return true;
    return false;
}

static bool user_matches (const struct tr_query *q, const tr_stepsum_t *row)
{
    char uid[32];

    if (q->nusers == 0)
        return true;
    snprintf (uid, sizeof (uid), "%.0f", row->uid);
    return in_list (q->users, q->nusers, row->user)
           || (!isnan (row->uid) && in_list (q->users, q->nusers, uid));
}

/* --name: the job name, the group, or the group's name before "/". */
static bool name_matches (const struct tr_query *q, const tr_stepsum_t *row)
{
    const char *slash = strrchr (row->group, '/');
    size_t len = slash ? (size_t)(slash - row->group) : strlen (row->group);

    if (q->nnames == 0)
        return true;
    for (size_t i = 0; i < q->nnames; i++)
        if (!strcmp (q->names[i], row->job_name)
            || !strcmp (q->names[i], row->group)
            || (strlen (q->names[i]) == len
                && !strncmp (q->names[i], row->group, len)))
            return true;
    return false;
}

/* Does the tags string hold key=value?  Tag values are at most 256
 * bytes (record-format.md), so a longer one asked for matches nothing.
 */
static bool has_tag (const char *tags, const char *key, const char *value)
{
    char v[1024];

    return strlen (value) < sizeof (v) - 1
           && tr_stepsum_tag (tags, key, v, sizeof (v)) && !strcmp (v, value);
}

bool tr_query_match_record (const struct tr_query *q,
                            const tr_stepsum_t *row)
{
    if (q->only_uid && (isnan (row->uid) || row->uid != (double)q->uid))
        return false;
    if (!user_matches (q, row))
        return false;
    if (q->naccounts && !in_list (q->accounts, q->naccounts, row->account))
        return false;
    if (q->npartitions
        && !in_list (q->partitions, q->npartitions, row->partition))
        return false;
    if (!name_matches (q, row))
        return false;
    for (size_t i = 0; i < q->ntags; i++)
        if (!has_tag (row->tags, q->tag_keys[i], q->tag_values[i]))
            return false;
    if (q->jobs
        && !tr_when_jobsel_match (
            q->jobs, row->job_id, row->array_job_id,
            isnan (row->array_task_id) ? -1 : (long)row->array_task_id,
            row->het_job_id,
            isnan (row->het_component) ? -1 : (long)row->het_component))
        return false;
    if (q->run_id && !tr_run_id_matches (row->run_id, q->run_id, false))
        return false;
    return true;
}

bool tr_query_match_step (const struct tr_query *q, const tr_stepsum_t *row)
{
    double from = (double)q->from * 1000, to = (double)q->to * 1000;

    /* the state as the listing shows it (a failed step with OOM kills
     * is OUT_OF_MEMORY there, so "oom" here)
     */
    const char *shown = tr_states_parse (tr_states_sacct (row->state,
                                                          row->oom_kills));

    if (q->nstates && (!shown || !in_list (q->states, q->nstates, shown)))
        return false;
    /* ran in the window: started before its end, ended after its start
     * (a step still running has no end and counts as running now)
     */
    if (q->to && !isnan (row->start_ms) && row->start_ms > to)
        return false;
    if (q->from && !isnan (row->end_ms) && row->end_ms < from)
        return false;
    return true;
}

tr_rowset_t *tr_rowset_create (void)
{
    tr_rowset_t *set = calloc (1, sizeof (*set));

    if (!set || !(set->pool = tr_strpool_create ())) {
        free (set);
        errno = ENOMEM;
        return NULL;
    }
    return set;
}

void tr_rowset_destroy (tr_rowset_t *set)
{
    if (!set)
        return;
    tr_strpool_destroy (set->pool);
    free (set->rows);
    free (set);
}

int tr_rowset_add (tr_rowset_t *set, const tr_stepsum_t *row)
{
    if (set->n == set->alloc) {
        size_t alloc = set->alloc ? set->alloc * 2 : 256;
        tr_stepsum_t *rows = realloc (set->rows, alloc * sizeof (*rows));

        if (!rows) {
            errno = ENOMEM;
            return -1;
        }
        set->rows = rows;
        set->alloc = alloc;
    }
    set->rows[set->n++] = *row;
    return 0;
}

static int cmp_identity (const void *a, const void *b)
{
    const tr_stepsum_t *x = a, *y = b;
    int c = tr_stepsum_cmp_id (x, y);

    return c ? c : tr_merge_natcmp (x->node, y->node);
}

/* The rows of one step side by side, nodes in order: by the job's own
 * id, so that nodes whose records disagree on the array still merge.
 */
static int cmp_same_step (const void *a, const void *b)
{
    const tr_stepsum_t *x = a, *y = b;
    int c = strcmp (x->cluster, y->cluster);

    if (!c)
        c = tr_merge_natcmp (x->job_id, y->job_id);
    if (!c)
        c = tr_merge_stepcmp (x->step_id, y->step_id);
    return c ? c : tr_merge_natcmp (x->node, y->node);
}

static bool same_step (const tr_stepsum_t *x, const tr_stepsum_t *y)
{
    return !strcmp (x->cluster, y->cluster) && !strcmp (x->job_id, y->job_id)
           && !strcmp (x->step_id, y->step_id);
}

/* An empty set may have no array at all, which qsort must not see. */
static void sort_rows (tr_rowset_t *set,
                       int (*cmp) (const void *, const void *))
{
    if (set->n > 0)
        qsort (set->rows, set->n, sizeof (*set->rows), cmp);
}

/* The rows of one job (adjacent, sorted by cmp_same_step) all know the
 * job's array (or heterogeneous job) as any of them does: a step whose
 * record lacks it (an extern step's, when the controller did not
 * answer) is shown, and sorted, under the same id as its job's others.
 */
static void share_job_ids (tr_rowset_t *set)
{
    for (size_t i = 0, j; i < set->n; i = j) {
        const tr_stepsum_t *known_arr = NULL, *known_het = NULL;

        for (j = i; j < set->n && !strcmp (set->rows[j].cluster,
                                           set->rows[i].cluster)
                    && !strcmp (set->rows[j].job_id, set->rows[i].job_id);
             j++) {
            if (!known_arr && *set->rows[j].array_job_id
                && !isnan (set->rows[j].array_task_id))
                known_arr = &set->rows[j];
            if (!known_het && *set->rows[j].het_job_id
                && !isnan (set->rows[j].het_component))
                known_het = &set->rows[j];
        }
        for (size_t k = i; k < j; k++) {
            tr_stepsum_t *r = &set->rows[k];

            if (known_arr && !*r->array_job_id) {
                r->array_job_id = known_arr->array_job_id;
                r->array_task_id = known_arr->array_task_id;
            }
            if (known_het && !*r->het_job_id) {
                r->het_job_id = known_het->het_job_id;
                r->het_component = known_het->het_component;
            }
        }
    }
}

int tr_rowset_merge_steps (tr_rowset_t *set, const struct tr_query *q)
{
    size_t w = 0;

    sort_rows (set, cmp_same_step);
    share_job_ids (set);
    for (size_t i = 0; i < set->n;) {
        tr_stepsum_t step = set->rows[i];
        size_t j = i + 1;

        for (; j < set->n && same_step (&step, &set->rows[j]); j++) {
            /* the same node twice: the row already taken stands */
            if (!strcmp (set->rows[j - 1].node, set->rows[j].node))
                continue;
            if (tr_stepsum_merge (&step, &set->rows[j], set->pool) < 0)
                return -1;
        }
        if (!q || tr_query_match_step (q, &step))
            set->rows[w++] = step;
        i = j;
    }
    set->n = w;
    return 0;
}

/* The default order.  An array's tasks (a heterogeneous job's
 * components) are one family: each row goes where its family's first
 * row is in the set sorted by start, and a family's rows in id order.
 */
struct family_place {
    size_t row;         /* index in the set */
    size_t at;          /* the family's first index */
};

static const tr_stepsum_t *family_rows;

static const char *family (const tr_stepsum_t *r)
{
    return *r->array_job_id ? r->array_job_id
           : *r->het_job_id ? r->het_job_id
                            : r->job_id;
}

static int cmp_family (const void *a, const void *b)
{
    const struct family_place *x = a, *y = b;
    const tr_stepsum_t *r = &family_rows[x->row], *s = &family_rows[y->row];
    int c;

    if ((c = strcmp (r->cluster, s->cluster))
        || (c = strcmp (family (r), family (s))))
        return c;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_family_place (const void *a, const void *b)
{
    const struct family_place *x = a, *y = b;
    int c;

    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if ((c = cmp_identity (&family_rows[x->row], &family_rows[y->row])))
        return c;
    return (x->row > y->row) - (x->row < y->row);
}

int tr_rowset_sort_default (tr_rowset_t *set)
{
    struct family_place *p;
    tr_stepsum_t *rows;

    if (tr_rowset_sort (set, "start", NULL) < 0)
        return -1;
    if (set->n < 2)
        return 0;
    if (!(p = calloc (set->n, sizeof (*p)))
        || !(rows = malloc (set->n * sizeof (*rows)))) {
        free (p);
        errno = ENOMEM;
        return -1;
    }
    memcpy (rows, set->rows, set->n * sizeof (*rows));
    for (size_t i = 0; i < set->n; i++)
        p[i].row = i;
    family_rows = rows;
    /* each family's rows in their order in the set: the first is its place */
    qsort (p, set->n, sizeof (*p), cmp_family);
    for (size_t i = 0, j; i < set->n; i = j) {
        const tr_stepsum_t *first = &rows[p[i].row];

        for (j = i + 1; j < set->n
                        && !strcmp (rows[p[j].row].cluster, first->cluster)
                        && !strcmp (family (&rows[p[j].row]), family (first));
             j++)
            ;
        for (size_t k = i; k < j; k++)
            p[k].at = p[i].row;
    }
    qsort (p, set->n, sizeof (*p), cmp_family_place);
    for (size_t i = 0; i < set->n; i++)
        set->rows[i] = rows[p[i].row];
    free (p);
    free (rows);
    return 0;
}

/* Job rows.  Each row's place: its job's first place in the sorted set,
 * then the job row, then its steps in Slurm's order.
 */
struct placed {
    size_t row;         /* index in the set (the job row: set->n + k) */
    size_t job_at;      /* the first index of any step of the job */
};

static const tr_stepsum_t *placed_rows;

static int cmp_job_of (const void *a, const void *b)
{
    const struct placed *x = a, *y = b;
    const tr_stepsum_t *r = &placed_rows[x->row], *s = &placed_rows[y->row];
    int c;

    if ((c = strcmp (r->cluster, s->cluster))
        || (c = strcmp (r->job_id, s->job_id)))
        return c;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_placed (const void *a, const void *b)
{
    const struct placed *x = a, *y = b;
    const tr_stepsum_t *r = &placed_rows[x->row], *s = &placed_rows[y->row];
    bool jr = tr_stepsum_is_job (r), js = tr_stepsum_is_job (s);
    int c;

    if (x->job_at != y->job_at)
        return x->job_at < y->job_at ? -1 : 1;
    if (jr != js)
        return jr ? -1 : 1;
    if ((c = tr_merge_stepcmp (r->step_id, s->step_id)))
        return c;
    return (x->row > y->row) - (x->row < y->row);
}

int tr_rowset_add_jobs (tr_rowset_t *set, bool only_jobs)
{
    size_t n = set->n, njobs = 0, w = 0;
    struct placed *p = NULL;
    tr_stepsum_t *rows = NULL;

    /* job rows of an earlier call are made again */
    for (size_t i = 0; i < set->n; i++)
        if (!tr_stepsum_is_job (&set->rows[i]))
            set->rows[w++] = set->rows[i];
    n = set->n = w;
    w = 0;
    if (n == 0)
        return 0;
    if (!(p = calloc (2 * n, sizeof (*p)))
        || !(rows = calloc (2 * n, sizeof (*rows)))) {
        free (p);
        errno = ENOMEM;
        return -1;
    }
    memcpy (rows, set->rows, n * sizeof (*rows));
    for (size_t i = 0; i < n; i++)
        p[i].row = i;
    placed_rows = rows;
    qsort (p, n, sizeof (*p), cmp_job_of);
    /* one job row per run of a job's steps, placed where its first
     * step was
     */
    for (size_t i = 0, j; i < n; i = j) {
        tr_stepsum_t *job = &rows[n + njobs];
        size_t first = p[i].row;

        tr_stepsum_init (job);
        for (j = i; j < n && !strcmp (rows[p[j].row].cluster,
                                      rows[p[i].row].cluster)
                    && !strcmp (rows[p[j].row].job_id, rows[p[i].row].job_id);
             j++) {
            if (tr_stepsum_job_add (job, &rows[p[j].row], set->pool) < 0)
                goto nomem;
            if (p[j].row < first)
                first = p[j].row;
        }
        for (size_t k = i; k < j; k++)
            p[k].job_at = first;
        p[n + njobs].row = n + njobs;
        p[n + njobs].job_at = first;
        njobs++;
    }
    qsort (p, n + njobs, sizeof (*p), cmp_placed);
    for (size_t i = 0; i < n + njobs; i++)
        if (!only_jobs || tr_stepsum_is_job (&rows[p[i].row]))
            p[w++] = p[i];
    if (w > set->alloc) {
        tr_stepsum_t *bigger = realloc (set->rows, w * sizeof (*bigger));

        if (!bigger)
            goto nomem;
        set->rows = bigger;
        set->alloc = w;
    }
    for (size_t i = 0; i < w; i++)
        set->rows[i] = rows[p[i].row];
    set->n = w;
    free (p);
    free (rows);
    return 0;
nomem:
    free (p);
    free (rows);
    errno = ENOMEM;
    return -1;
}

/* Sorting: qsort is not stable, so equal keys fall back to identity. */
struct sort_key {
    const tr_field_t *f;
    bool desc;
};

static struct sort_key sort_keys[16];
static size_t nsort_keys;

static int cmp_sort (const void *a, const void *b)
{
    for (size_t i = 0; i < nsort_keys; i++) {
        int c = tr_stepsum_cmp (a, b, sort_keys[i].f);

        if (c)
            return sort_keys[i].desc ? -c : c;
    }
    return cmp_identity (a, b);
}

int tr_rowset_sort (tr_rowset_t *set, const char *spec, tr_error_t *error)
{
    char buf[1024], *save = NULL, *tok;

    if (snprintf (buf, sizeof (buf), "%s", spec) >= (int)sizeof (buf)) {
        tr_errprintf (error, "--sort: list too long");
        errno = EINVAL;
        return -1;
    }
    nsort_keys = 0;
    for (tok = strtok_r (buf, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        bool desc = *tok == '-';
        const tr_field_t *f = tr_stepsum_field (desc ? tok + 1 : tok);

        if (!f || nsort_keys >= sizeof (sort_keys) / sizeof (sort_keys[0])) {
            tr_errprintf (error, f ? "--sort: more than 16 fields"
                                   : "--sort: '%s' is not a field (see "
                                     "--helpformat)", tok);
            errno = EINVAL;
            return -1;
        }
        sort_keys[nsort_keys].f = f;
        sort_keys[nsort_keys++].desc = desc;
    }
    sort_rows (set, cmp_sort);
    return 0;
}

int tr_query_format_parse (struct tr_query_format *fmt,
                           const char *spec,
                           tr_error_t *error)
{
    char buf[4096], *save = NULL, *tok;

    if (snprintf (buf, sizeof (buf), "%s", spec) >= (int)sizeof (buf)) {
        tr_errprintf (error, "--format: list too long");
        errno = EINVAL;
        return -1;
    }
    fmt->ncols = 0;
    for (tok = strtok_r (buf, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        struct tr_query_column *c = &fmt->cols[fmt->ncols];
        char *pct = strchr (tok, '%');
        long width = 0;

        if (fmt->ncols >= TR_QUERY_MAX_COLUMNS) {
            tr_errprintf (error, "--format: more than %d fields",
                          TR_QUERY_MAX_COLUMNS);
            errno = EINVAL;
            return -1;
        }
        if (pct) {
            char *end;

            *pct = '\0';
            errno = 0;
            width = strtol (pct + 1, &end, 10);
            if (errno || end == pct + 1 || *end || width == 0 || width > 1000
                || width < -1000) {
                tr_errprintf (error, "--format: '%s' is not a width (a "
                              "number, negative to left-justify)", pct + 1);
                errno = EINVAL;
                return -1;
            }
        }
        c->field = tr_stepsum_field (tok);
        if (c->field) {
            c->title = c->field->name;
            c->width = width ? (int)width : c->field->width;
        }
        else if (fmt->extra_name && !strcasecmp (tok, fmt->extra_name)) {
            c->title = fmt->extra_name;
            c->width = width ? (int)width : fmt->extra_width;
        }
        else {
            tr_errprintf (error, "--format: '%s' is not a field (see "
                          "--helpformat)", tok);
            errno = EINVAL;
            return -1;
        }
        fmt->ncols++;
    }
    if (fmt->ncols == 0) {
        tr_errprintf (error, "--format: no fields");
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* One cell, padded or cut to width; a cut value ends in '+' (titles are
 * cut plainly).
 */
static void put_cell (FILE *out, const char *s, int width, bool parsable,
                      bool mark)
{
    size_t len = strlen (s), w = (size_t)abs (width);

    if (parsable) {
        fputs (s, out);
        return;
    }
    if (len > w && !mark) {
        fprintf (out, "%.*s", (int)w, s);
        return;
    }
    if (len > w) {
        fprintf (out, "%.*s+", (int)(w - 1), s);
        return;
    }
    fprintf (out, width < 0 ? "%-*s" : "%*s", (int)w, s);
}

static const char *title_of (const struct tr_query_column *c, char *buf,
                             size_t size)
{
    size_t i;

    for (i = 0; c->title[i] && i + 1 < size; i++)
        buf[i] = c->title[i];
    buf[i] = '\0';
    /* sacct capitalises its titles; ours follow the field names */
    if (*buf)
        buf[0] = (char)toupper ((unsigned char)buf[0]);
    return buf;
}

int tr_query_print (FILE *out,
                    const tr_rowset_t *set,
                    const struct tr_query_format *fmt,
                    bool parsable,
                    bool noheader)
{
    tr_strbuf_t sb = { 0 };
    char buf[256];

    if (!noheader) {
        for (size_t c = 0; c < fmt->ncols; c++) {
            if (c)
                fputs (parsable ? "|" : " ", out);
            put_cell (out, title_of (&fmt->cols[c], buf, sizeof (buf)),
                      fmt->cols[c].width, parsable, false);
        }
        fputc ('\n', out);
        if (!parsable) {
            for (size_t c = 0; c < fmt->ncols; c++) {
                int w = abs (fmt->cols[c].width);

                fprintf (out, "%s%.*s", c ? " " : "", w,
                         "-------------------------------------------------"
                         "-------------------------------------------------");
                for (int k = 98; k < w; k++)
                    fputc ('-', out);
            }
            fputc ('\n', out);
        }
    }
    for (size_t r = 0; r < set->n; r++) {
        const tr_stepsum_t *row = &set->rows[r];

        for (size_t c = 0; c < fmt->ncols; c++) {
            const struct tr_query_column *col = &fmt->cols[c];
            const char *s;

            tr_strbuf_reset (&sb);
            if (col->field) {
                tr_stepsum_style_t st = { parsable, fmt->units,
                                          fmt->noconvert };

                if (tr_stepsum_format_styled (&sb, row, col->field, &st)
                    < 0) {
                    tr_strbuf_free (&sb);
                    errno = ENOMEM;
                    return -1;
                }
                s = tr_strbuf_str (&sb);
            }
            else
                s = fmt->extra ? fmt->extra (row, fmt->extra_arg) : "";
            /* a name with a newline must not make a row of its own */
            if (s && !tr_text_is_printable (s)) {
                tr_strbuf_t esc = TR_STRBUF_INIT;

                if (tr_strbuf_printable (&esc, s) < 0) {
                    tr_strbuf_free (&sb);
                    errno = ENOMEM;
                    return -1;
                }
                tr_strbuf_free (&sb);
                sb = esc;
                s = tr_strbuf_str (&sb);
            }
            if (c)
                fputs (parsable ? "|" : " ", out);
            put_cell (out, s ? s : "", col->width, parsable, true);
        }
        fputc ('\n', out);
    }
    tr_strbuf_free (&sb);
    return ferror (out) ? -1 : 0;
}

void tr_query_print_fields (FILE *out, const struct tr_query_format *fmt)
{
    static const char *kinds[] = {
        [TR_FIELD_STR] = "text",       [TR_FIELD_COUNT] = "count",
        [TR_FIELD_NUM] = "number",     [TR_FIELD_BYTES] = "bytes",
        [TR_FIELD_SECONDS] = "duration", [TR_FIELD_TIME] = "time",
        [TR_FIELD_FRACTION] = "percent",
    };

    fputs ("sacct's and reportseff's names (any case):\n", out);
    for (const tr_field_t *f = tr_stepsum_sacct_fields; f->name; f++)
        fprintf (out, "%-15s %-9s %s\n", f->name, kinds[f->kind], f->help);
    fputs ("\ntracer's own:\n", out);
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++)
        if (!tr_stepsum_field (f->name) || tr_stepsum_field (f->name) == f)
            fprintf (out, "%-15s %-9s %s\n", f->name, kinds[f->kind],
                     f->help);
    if (fmt && fmt->extra_name)
        fprintf (out, "%-15s %-9s %s\n", fmt->extra_name, "text",
                 "diagnosis codes (see tracer-report(1))");
}
