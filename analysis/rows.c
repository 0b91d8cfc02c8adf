/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report's rows: the step summaries a listing or an analysis
 * works on, from the store through the summary index (libtracer/record/index.c)
 * or from the --rows files of a sharded run, filtered as sacct filters.
 * Then the listing itself, and --rows and --reindex.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"
#include "libtracer/record/index.h"
#include "libtracer/record/livesum.h"
#include "libtracer/record/record.h"
#include "libtracer/record/store.h"
#include "cli.h"

struct collect {
    struct rep *r;
    const struct tr_query *q;
    tr_rowset_t *set;
    size_t unsigned_dropped;
    const char *root; /* the store's, absolute, while it is scanned */
    size_t nrecords;  /* rows from records, before the live ones */
};

/* The index's loader: a verified record's summary.  Tampered and forged
 * records are "bad" (indexed as such, said once here); unsigned ones
 * are rows marked unsigned, which this reader drops unless told not to.
 */
static int load_row (const char *abspath,
                     const char *relpath,
                     tr_stepsum_t *row,
                     void *arg)
{
    struct collect *c = arg;
    tr_error_t error;
    json_t *rec;
    const char *sig;
    char why[1024];
    int rc;

    if (!(rec = tr_record_load (abspath, &error))) {
        if (errno == EACCES || errno == EPERM || errno == ENOENT)
            return -1;
        if (!c->r->quiet_bad)
            rep_err ("%s\n", tr_error_str (&error));
        row->reason = tr_strpool_intern (c->set->pool, tr_error_str (&error));
        c->r->rejected++;
        return 1;
    }
    /* unsigned records are indexed, marked: whether to show them is each
     * reader's choice (keep_row)
     */
    rc = rep_verify (c->r, rec, abspath, true, why, sizeof (why), &sig);
    /* A record lying in another's place (copied, moved or rewritten
     * there: its signature holds) is not the record of that place.
     */
    if (rc == 0 && !tr_store_in_place (rec, relpath, why, sizeof (why))) {
        if (!c->r->quiet_bad)
            rep_err ("%s: REJECTED: %s\n", abspath, why);
        rep_set_worst (c->r, EXIT_TAMPERED);
        rc = 1;
    }
    if (rc == 1) {
        row->reason = tr_strpool_intern (c->set->pool, why);
        c->r->rejected++;
    }
    else if (rc < 0)
        errno = EIO;
    else if (tr_stepsum_from_record (row, rec, sig, relpath, c->set->pool)
             < 0)
        rc = -1;
    json_decref (rec);
    return rc;
}

/* A bad record the summary index knew of (indexed as such by an earlier
 * listing, which said why): named again, every time, so that a record
 * replaced or hidden never goes unsaid.  Those loaded now were named by
 * load_row.
 */
static void index_bad (const char *relpath,
                       const char *reason,
                       bool loaded,
                       void *arg)
{
    struct collect *c = arg;
    const char *root = c->root;

    /* A user's listing is not told of others' records: the count says
     * there were some.
     */
    if (loaded || c->q->only_uid || c->r->quiet_bad)
        return;
    rep_err ("%s%s%s: REJECTED: %s\n", root,
             strcmp (root, "/") == 0 ? "" : "/", relpath, reason);
    c->r->rejected++;
    rep_set_worst (c->r, EXIT_TAMPERED);
}

static int keep_row (const tr_stepsum_t *row, void *arg)
{
    struct collect *c = arg;

    if (!tr_query_match_record (c->q, row)) {
        return 0;
    }
    if (!strcmp (row->sig, TR_STEPSUM_SIG_UNSIGNED) && !c->r->allow_unsigned) {
        c->unsigned_dropped++;
        return 0;
    }
    return tr_rowset_add (c->set, row) < 0 ? -1 : 0;
}

/* --no-index: every record of the window, loaded and verified. */
struct direct {
    struct collect *c;
    size_t rootlen;
};

static int direct_one (const char *path, void *arg)
{
    struct direct *d = arg;
    tr_stepsum_t row;
    int rc;

    tr_stepsum_init (&row);
    rc = load_row (path, path + d->rootlen, &row, d->c);
    if (rc < 0)
        return errno == EACCES || errno == EPERM || errno == ENOENT ? 0 : -1;
    if (rc == 1)
        return 0;
    return keep_row (&row, d->c);
}

static int collect_direct (struct collect *c, tr_store_t *store,
                           const char *cluster, time_t from, time_t to)
{
    struct direct d = { .c = c, .rootlen = strlen (tr_store_root (store)) + 1 };
    tr_error_t error;

    if (tr_store_foreach_window (store, cluster, from, to, direct_one, &d,
                                 &error) < 0 && errno != ENOENT) {
        rep_err ("%s\n", tr_error_str (&error));
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* A live summary that cannot be believed is named, as a bad record is
 * (a user is not told of others' files).
 */
static void live_bad (const char *relpath, const char *why, void *arg)
{
    struct collect *c = arg;

    if (c->q->only_uid || c->r->quiet_bad)
        return;
    rep_err ("%s/%s: REJECTED: live summary: %s\n", c->root, relpath, why);
    c->r->rejected++;
    rep_set_worst (c->r, EXIT_TAMPERED);
}

/* A running step's live row, unless the step's record is in the set
 * already (it ended since: the record wins).
 */
static int keep_live (const tr_stepsum_t *row, void *arg)
{
    struct collect *c = arg;

    if (!tr_query_match_record (c->q, row))
        return 0;
    for (size_t i = 0; i < c->nrecords; i++) {
        const tr_stepsum_t *x = &c->set->rows[i];

        if (!strcmp (x->job_id, row->job_id)
            && !strcmp (x->step_id, row->step_id)
            && !strcmp (x->node, row->node)
            && !strcmp (x->cluster, row->cluster))
            return 0;
    }
    return tr_rowset_add (c->set, row);
}

/* The steps running now, from the store's live summaries (--run,
 * --runs): a run in progress on every node.
 */
static int collect_live (struct collect *c, tr_store_t *store,
                         const char *cluster)
{
    struct tr_livesum_stats st;
    struct timespec ts;
    tr_error_t error;
    uid_t writer = c->r->conf->store_owner_is_job ? 0
                                                  : c->r->conf->store_owner_uid;
    struct tr_livesum_trust trust = {
        .munge_socket = c->r->conf->munge_socket,
        .signers = c->r->conf->signer_uids,
        .n_signers = c->r->conf->n_signer_uids,
        .allow_unsigned = c->r->allow_unsigned,
    };

    clock_gettime (CLOCK_REALTIME, &ts);
    c->nrecords = c->set->n;
    c->root = tr_store_root (store);
    if (tr_livesum_scan (store, cluster, writer, &trust,
                         1000.0 * (double)ts.tv_sec + (double)ts.tv_nsec / 1e6,
                         c->set->pool, keep_live, live_bad, c, &st, &error)
        < 0) {
        rep_err ("%s\n", tr_error_str (&error));
        return EXIT_RUNTIME;
    }
    c->root = NULL;
    return EXIT_OK;
}

static int collect_store (struct collect *c)
{
    struct rep *r = c->r;
    const char *cluster = r->cluster ? r->cluster : r->conf->cluster_name;
    const char *root = r->store_path ? r->store_path : r->conf->store_path;
    struct tr_index_opts io = {
        .write = r->admin && !r->no_index,
        .file_mode = 0640,
        .gid = r->conf->admin_group_set ? r->conf->admin_gid : (gid_t)-1,
        .shard_i = r->shard_i,
        .shard_n = r->shard_n,
        .bad = index_bad,
        .bad_arg = c,
    };
    struct tr_index_stats st;
    tr_error_t error;
    tr_store_t *store;
    time_t from = c->q->from, to = time (NULL) + 86400;
    int rc;

    if (!(store = tr_store_open (root, NULL, &error))) {
        /* the error names the store already */
        rep_err ("%s\n", tr_error_str (&error));
        return EXIT_RUNTIME;
    }
    /* Records are filed by the day they ended, and a step that ended
     * after -E may have run before it: the days up to now are read, and
     * the window applied to each step exactly.
     */
    if (r->no_index) {
        rc = collect_direct (c, store, cluster, from, to);
        if (rc == EXIT_OK && r->live_rows)
            rc = collect_live (c, store, cluster);
        rep_node_drops (store, cluster);
        tr_store_destroy (store);
        return rc;
    }
    c->root = tr_store_root (store);
    rc = tr_index_scan (store, cluster, from, to, &io, load_row, c, keep_row,
                        c, c->set->pool, &st, &error);
    c->root = NULL;
    if (rc < 0) {
        rep_node_drops (store, cluster);
        tr_store_destroy (store);
        rep_err ("%s\n", tr_error_str (&error));
        return EXIT_RUNTIME;
    }
    if (r->live_rows && collect_live (c, store, cluster) != EXIT_OK) {
        tr_store_destroy (store);
        return EXIT_RUNTIME;
    }
    rep_node_drops (store, cluster);
    tr_store_destroy (store);
    if (st.bad > 0 && !r->quiet_bad)
        rep_err ("%zu record%s of this period could "
                 "not be used (tampered, forged, misplaced or corrupt: "
                 "named above)\n",
                 st.bad, st.bad == 1 ? "" : "s");
    if (r->mode == MODE_REINDEX)
        printf ("%zu days, %zu fresh; %zu rows from %zu segments, %zu "
                "records loaded, %zu bad, %zu not readable; %zu segments "
                "written, %zu compactions, %zu write errors\n",
                st.days, st.days_fresh, st.rows_indexed, st.segments_read,
                st.records_loaded, st.bad, st.skipped, st.segments_written,
                st.compactions, st.write_errors);
    return EXIT_OK;
}

/* Rows from --rows files.  They are the output of this program run by
 * whoever runs the merge, so they are believed as they are; the caller's
 * visibility still applies.
 */
static int collect_files (struct collect *c)
{
    tr_error_t error;

    for (int i = 0; i < c->r->nmerge; i++) {
        const char *path = c->r->merge_files[i];
        FILE *f = fopen (path, "re");
        char *line = NULL;
        size_t size = 0;
        ssize_t len;
        long lineno = 0;
        int rc = EXIT_OK;

        if (!f) {
            rep_err ("%s: %s\n", path,
                     strerror (errno));
            return EXIT_RUNTIME;
        }
        while (rc == EXIT_OK && (len = getline (&line, &size, f)) >= 0) {
            tr_stepsum_t row;

            if (len && line[len - 1] == '\n')
                line[--len] = '\0';
            if (++lineno == 1) {
                if (tr_stepsum_tsv_check_header (line, &error) < 0)
                    rc = EXIT_RUNTIME;
                continue;
            }
            if (tr_stepsum_from_tsv (&row, line, c->set->pool, &error) < 0)
                rc = EXIT_RUNTIME;
            else if (keep_row (&row, c) < 0) {
                tr_errprintf (&error, "out of memory");
                rc = EXIT_RUNTIME;
            }
        }
        if (rc == EXIT_OK && lineno == 0) {
            tr_errprintf (&error, "empty file");
            rc = EXIT_RUNTIME;
        }
        free (line);
        fclose (f);
        if (rc != EXIT_OK) {
            rep_err ("%s:%ld: %s\n", path, lineno,
                     tr_error_str (&error));
            return rc;
        }
    }
    return EXIT_OK;
}

int rep_collect (struct rep *r,
                 const struct tr_query *q,
                 bool merge,
                 tr_rowset_t *set)
{
    struct collect c = { .r = r, .q = q, .set = set };
    int rc = r->nmerge > 0 ? collect_files (&c) : collect_store (&c);

    if (rc != EXIT_OK)
        return rc;
    if (c.unsigned_dropped)
        rep_err ("%zu unsigned record%s left out "
                 "(--allow-unsigned shows them)\n", c.unsigned_dropped,
                 c.unsigned_dropped == 1 ? "" : "s");
    if (!merge)
        return EXIT_OK;
    if (tr_rowset_merge_steps (set, q) < 0) {
        rep_err ("out of memory\n");
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* A row's diagnosis under the site's thresholds, the sizes it names
 * from the engine over this run with the site's options (sizing.h), as
 * the job view advises them.
 */
static json_t *diagnose_row (struct rep *r, const tr_stepsum_t *row)
{
    struct tr_recommend_opts o;
    json_t *advice, *f;

    rep_recommend_opts (r, &o);
    advice = tr_sizing_one_run (row, &o);
    f = tr_diagnose_advised (row, &r->conf->diagnosis, advice);
    json_decref (advice);
    return f;
}

/* The listing's diagnosis column. */
const char *rep_diag_codes (const tr_stepsum_t *row, void *arg)
{
    static char buf[256];
    struct rep *r = arg;
    json_t *f;

    buf[0] = '\0';
    /* a diagnosis is of a step */
    if (tr_stepsum_is_job (row))
        return buf;
    f = diagnose_row (r, row);
    if (f)
        tr_diag_codes (f, buf, sizeof (buf));
    json_decref (f);
    return buf;
}

/* sacct's JobID, JobName, State and Elapsed, then what tracer adds, in
 * 80 columns
 */
#define DEFAULT_FORMAT                                                     \
    "JobID,JobName,State,Elapsed,CPUEff%6,MemEff%6,diagnosis"

static int list_json (struct rep *r, tr_rowset_t *set)
{
    json_t *arr = json_array (), *o, *f;
    char *s = NULL;

    for (size_t i = 0; arr && i < set->n; i++) {
        if (!(o = tr_stepsum_to_json (&set->rows[i]))
            || !(f = diagnose_row (r, &set->rows[i]))
            || json_object_set_new (o, "diagnosis", f) < 0
            || json_array_append_new (arr, o) < 0) {
            json_decref (arr);
            arr = NULL;
        }
    }
    if (arr)
        s = json_dumps (arr, JSON_INDENT (2));
    json_decref (arr);
    if (!s) {
        rep_err ("out of memory\n");
        return EXIT_RUNTIME;
    }
    printf ("{\"format\": \"tracer-report-steps\", \"version\": 1, "
            "\"steps\": %s}\n", s);
    free (s);
    return EXIT_OK;
}

int rep_list (struct rep *r, tr_rowset_t *set)
{
    struct tr_query_format fmt = {
        .extra_name = "diagnosis",
        .extra_width = -20,
        .extra = rep_diag_codes,
        .extra_arg = r,
        .units = r->units,
        .noconvert = r->noconvert,
    };
    tr_error_t error;

    if (!r->sort && tr_rowset_sort_default (set) < 0) {
        rep_err ("out of memory\n");
        return EXIT_RUNTIME;
    }
    if (r->sort && tr_rowset_sort (set, r->sort, &error) < 0)
        return rep_err ("%s\n", tr_error_str (&error)),
               EXIT_USAGE;
    if (r->json)
        return list_json (r, set);
    /* sacct's layout: each job's row, then its steps' */
    if (tr_rowset_add_jobs (set, r->allocations) < 0) {
        rep_err ("out of memory\n");
        return EXIT_RUNTIME;
    }
    if (tr_query_format_parse (&fmt, r->format ? r->format : DEFAULT_FORMAT,
                               &error) < 0) {
        rep_err ("%s\n", tr_error_str (&error));
        return EXIT_USAGE;
    }
    if (tr_query_print (stdout, set, &fmt, r->parsable, r->noheader) < 0) {
        rep_err ("writing: %s\n", strerror (errno));
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

int rep_rows (struct rep *r, tr_rowset_t *set)
{
    tr_strbuf_t sb = { 0 };
    int rc = EXIT_OK;

    if (r->mode == MODE_REINDEX)
        return EXIT_OK;
    if (tr_stepsum_tsv_header (&sb) < 0)
        rc = EXIT_RUNTIME;
    else
        printf ("%s\n", tr_strbuf_str (&sb));
    for (size_t i = 0; rc == EXIT_OK && i < set->n; i++) {
        tr_strbuf_reset (&sb);
        if (tr_stepsum_to_tsv (&sb, &set->rows[i]) < 0)
            rc = EXIT_RUNTIME;
        else
            printf ("%s\n", tr_strbuf_str (&sb));
    }
    tr_strbuf_free (&sb);
    if (rc != EXIT_OK)
        rep_err ("out of memory\n");
    return rc;
}
