/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report's job view: a job's records, found, placed and verified
 * (verify.c), shown as text or HTML with their history and advice.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/record/cause.h"
#include "libtracer/view/html.h"
#include "libtracer/util/path.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"
#include "libtracer/view/recommend_print.h"
#include "libtracer/record/record.h"
#include "libtracer/view/report.h"
#include "libtracer/record/store.h"
#include "cli.h"

static void keep_record (struct rep *r, json_t *rec, const char *note)
{
    char key[32];

    snprintf (key, sizeof (key), "%zu", json_array_size (r->recs));
    json_object_set_new (r->notes, key, json_string (note));
    json_array_append_new (r->recs, rec);
}

static int add_record (const char *path, void *arg)
{
    struct rep *r = arg;
    char note[300];
    const char *sig;
    json_t *rec = rep_load_verified (r, path, note, sizeof (note), &sig);

    if (rec)
        keep_record (r, rec, note);
    return 0;
}

/* A walk of one job's directory in the store. */
struct job_walk {
    struct rep *r;
    const char *root; /* the store's, as its walk names paths */
    size_t hidden;    /* records of other users passed over */
};

/* Whether a user who is not an admin is kept from the record at path:
 * the file is not theirs to read, or the record is another user's.
 * Such records are passed over without a word, whether or not they
 * could be read (as sacct does with PrivateData=jobs), so that nobody
 * learns of other users' jobs.
 */
static bool not_the_callers (const struct rep *r, const char *path)
{
    if (!r->q.only_uid)
        return false;
    return faccessat (AT_FDCWD, path, R_OK, AT_EACCESS) < 0
           && (errno == EACCES || errno == EPERM);
}

static bool others_record (const struct rep *r, json_t *rec)
{
    json_t *uid = json_object_get (json_object_get (rec, "identity"), "uid");

    return r->q.only_uid
           && (!json_is_integer (uid)
               || json_integer_value (uid) != (json_int_t)r->q.uid);
}

/* Whether rec lies where its identity puts it in the store
 * (tr_store_in_place), what it claims into why when not.
 */
static bool in_place (json_t *rec, const char *path, const char *root,
                      char *why, size_t size)
{
    size_t n = strlen (root);

    if (!strcmp (root, "/"))
        n = 0;
    if (strncmp (path, root, n) || path[n] != '/')
        return tr_store_in_place (rec, NULL, why, size);
    return tr_store_in_place (rec, path + n + 1, why, size);
}

/* A record found in the store for a job.  The signature covers the
 * record, not the place it lies in: a valid record of one job copied or
 * moved under another job's id (by someone who may write the store)
 * would pass for that job's.  Such a record is refused, as tampered
 * with, with a message of its own.
 */
static int add_stored (const char *path, void *arg)
{
    struct job_walk *w = arg;
    struct rep *r = w->r;
    char note[300];
    char why[1024];
    const char *sig;
    json_t *rec;

    if (not_the_callers (r, path)) {
        w->hidden++;
        return 0;
    }
    if (!(rec = rep_load_verified (r, path, note, sizeof (note), &sig)))
        return 0;
    if (others_record (r, rec)) {
        w->hidden++;
        json_decref (rec);
        return 0;
    }
    if (!in_place (rec, path, w->root, why, sizeof (why))) {
        rep_err ("%s: REJECTED: %s\n", path, why);
        rep_set_worst (r, EXIT_TAMPERED);
        json_decref (rec);
        return 0;
    }
    keep_record (r, rec, note);
    return 0;
}

/* The other clusters the store holds, as a hint for -M (", it holds
 * cluster a: -M a"), or "".
 */
static void other_clusters (tr_store_t *store, const char *cluster,
                            char *buf, size_t size)
{
    DIR *dir = opendir (tr_store_root (store));
    struct dirent *de;
    size_t len = 0, n = 0;
    char first[NAME_MAX + 1] = "";

    buf[0] = '\0';
    if (!dir)
        return;
    while ((de = readdir (dir)) && len + 64 < size) {
        struct stat st;
        char jobs[PATH_MAX];
        if (de->d_name[0] == '.' || !strcmp (de->d_name, cluster)
            || !tr_record_id_is_safe (de->d_name)
            || snprintf (jobs, sizeof (jobs), "%s/%s/jobs",
                         tr_store_root (store), de->d_name)
                   >= (int)sizeof (jobs)
            || stat (jobs, &st) < 0 || !S_ISDIR (st.st_mode))
            continue;
        if (n++ == 0)
            snprintf (first, sizeof (first), "%s", de->d_name);
        len += (size_t)snprintf (buf + len, size - len, "%s%s",
                                 n == 1 ? "; it holds cluster " : ", ",
                                 de->d_name);
        if (len >= size)
            len = size - 1;
    }
    closedir (dir);
    if (n > 0 && len + 16 + strlen (first) < size)
        snprintf (buf + len, size - len, ": -M %s", first);
}

/* The records of one job id, straight from the store. */
static void add_job (struct rep *r, tr_store_t *store, const char *cluster,
                     const char *job)
{
    struct job_walk w = { r, tr_store_root (store), 0 };
    size_t before = json_array_size (r->recs);
    tr_error_t error;
    int rc = tr_store_foreach_job (store, cluster, job, add_stored, &w, &error);

    /* only other users' records: the same words as for no records */
    if (rc >= 0 && !(w.hidden && json_array_size (r->recs) == before))
        return;
    if (rc >= 0 || errno == ENOENT) {
        char others[256];
        other_clusters (store, cluster, others, sizeof (others));
        if (rep_none (REP_NONE_NAMED, "job %s: no records in %s (cluster "
                      "%s%s)\n", job, tr_store_root (store), cluster,
                      others)
            != EXIT_OK)
            r->errors++;
        return;
    }
    rep_err ("job %s: %s\n", job, tr_error_str (&error));
    r->errors++;
}

/* The jobs of the list, found through the summaries: array tasks and
 * heterogeneous components are keyed by ids of their own (-j 13 of an
 * array is every task, as with sacct).  Then a plain id the summaries
 * did not know is looked up as it is (its records may not be indexed
 * yet), which also says when it has none.
 */
static void add_selected (struct rep *r, tr_store_t *store,
                          const char *cluster, size_t nplain)
{
    tr_rowset_t *set = tr_rowset_create ();
    const char *last = "";
    int worst = r->worst, errors = r->errors, rc;
    unsigned long rejected = r->rejected;

    if (!set) {
        rep_err ("out of memory\n");
        r->errors++;
        return;
    }
    /* plain ids: the store's other records are not this view's business
     * (each of the job's own is loaded, and judged, again below, and
     * named there once)
     */
    r->quiet_bad = nplain > 0;
    rc = rep_collect (r, &r->q, true, set);
    r->quiet_bad = false;
    if (nplain) {
        r->worst = worst;
        r->errors = errors;
        r->rejected = rejected;
    }
    else if (rc != EXIT_OK) {
        r->errors++;
        tr_rowset_destroy (set);
        return;
    }
    if (rc != EXIT_OK)
        set->n = 0;
    /* in id order: an array's tasks by index, not by their own ids */
    tr_rowset_sort (set, "jobid", NULL);
    for (size_t i = 0; i < set->n; i++) {
        if (!strcmp (set->rows[i].job_id, last))
            continue;
        last = set->rows[i].job_id;
        add_job (r, store, cluster, last);
    }
    for (size_t k = 0; k < nplain; k++) {
        const char *id = tr_when_jobsel_plain (r->q.jobs, k);
        bool found = false;

        for (size_t i = 0; id && !found && i < set->n; i++)
            found = !strcmp (set->rows[i].job_id, id)
                    || !strcmp (set->rows[i].array_job_id, id)
                    || !strcmp (set->rows[i].het_job_id, id);
        if (id && !found)
            add_job (r, store, cluster, id);
    }
    if (set->n == 0 && nplain == 0) {
        char others[256];
        other_clusters (store, cluster, others, sizeof (others));
        if (rep_none (REP_NONE_NAMED, "no records of %s in %s (cluster "
                      "%s%s)\n", r->jobs_arg, tr_store_root (store), cluster,
                      others)
            != EXIT_OK)
            r->errors++;
    }
    tr_rowset_destroy (set);
}

int rep_load_jobs (struct rep *r)
{
    const char *cluster = r->cluster ? r->cluster : r->conf->cluster_name;
    const char *root = r->store_path ? r->store_path : r->conf->store_path;
    size_t n = tr_when_jobsel_count (r->q.jobs);
    bool plain = true, numeric = true;
    tr_store_t *store;
    tr_error_t error;

    if (!(store = tr_store_open (root, NULL, &error))) {
        /* the error names the store already */
        rep_err ("%s\n", tr_error_str (&error));
        return EXIT_RUNTIME;
    }
    if (!r->q.jobs) {
        /* ids of no scheduler, checked path-safe: as they are */
        char buf[4096], *save = NULL, *tok;

        snprintf (buf, sizeof (buf), "%s", r->jobs_arg);
        for (tok = strtok_r (buf, ",", &save); tok;
             tok = strtok_r (NULL, ",", &save))
            add_job (r, store, cluster, tok);
        tr_store_destroy (store);
        return EXIT_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (!tr_when_jobsel_plain (r->q.jobs, i))
            plain = false;
    /* a plain number may be an array's or a heterogeneous job's: found
     * through the summaries, as N_T and the other forms are; other
     * schedulers' plain ids are their records' own
     */
    for (size_t i = 0; plain && i < n; i++) {
        const char *id = tr_when_jobsel_plain (r->q.jobs, i);

        numeric = numeric && strspn (id, "0123456789") == strlen (id);
    }
    if (!plain || numeric)
        add_selected (r, store, cluster, plain ? n : 0);
    else
        for (size_t i = 0; i < n; i++)
            add_job (r, store, cluster, tr_when_jobsel_plain (r->q.jobs, i));
    tr_store_destroy (store);
    return EXIT_OK;
}

/* History for "Next time": the viewed step's user's steps of the last
 * 30 days, collected once, on the first step that asks.
 */
#define HISTORY_DAYS 30

static tr_rowset_t *history_of (struct rep_history *h,
                                const tr_stepsum_t *step)
{
    struct tr_query q = {
        .from = time (NULL) - HISTORY_DAYS * 86400,
        .only_uid = true,
        .uid = (uid_t)step->uid,
    };

    int worst = h->r->worst, errors = h->r->errors;
    unsigned long rejected = h->r->rejected;

    if (h->tried)
        return h->set;
    h->tried = true;
    /* A record file read where no store was ever made (a laptop, a
     * copied record), or where the caller may not read it: the view of
     * a file needs no store, so no history and nothing to say about it.
     * A store named with --store, or the store of a -j view that cannot
     * be read, is named on stderr below.
     */
    if (!h->r->store_path
        && faccessat (AT_FDCWD, h->r->conf->store_path, R_OK | X_OK,
                      AT_EACCESS) < 0
        && (errno == ENOENT || (!h->r->jobs_arg
                                && (errno == EACCES || errno == ENOTDIR))))
        return NULL;
    if (!(h->set = tr_rowset_create ()))
        return NULL;
    /* The exit status speaks of the records asked for.  A bad record
     * among the user's others is left out of the advice, and counted in
     * one line (a listing names each); it does not make a valid record's
     * view fail.
     */
    h->r->quiet_bad = true;
    if (rep_collect (h->r, &q, true, h->set) != EXIT_OK) {
        tr_rowset_destroy (h->set);
        h->set = NULL;
    }
    h->r->quiet_bad = false;
    if (h->r->rejected > rejected)
        rep_err ("%lu other record%s of this user could not be used for "
                 "the advice (tracer-report -u USER names %s)\n",
                 h->r->rejected - rejected,
                 h->r->rejected - rejected == 1 ? "" : "s",
                 h->r->rejected - rejected == 1 ? "it" : "them");
    h->r->worst = worst;
    h->r->errors = errors;
    h->r->rejected = rejected;
    return h->set;
}

void rep_history_free (struct rep_history *h)
{
    tr_rowset_destroy (h->set);
    h->set = NULL;
    h->tried = false;
}

json_t *rep_advice (const struct tr_stepsum *step, void *arg)
{
    struct rep_history *h = arg;
    tr_rowset_t *set = history_of (h, step);
    const tr_stepsum_t **rows;
    struct tr_recommend_opts o;
    json_t *recs, *g;
    size_t n = 0;
    bool self = false;

    if (!(rows = calloc ((set ? set->n : 0) + 1, sizeof (*rows))))
        return NULL;
    for (size_t i = 0; set && i < set->n; i++) {
        const tr_stepsum_t *x = &set->rows[i];

        if (strcmp (x->group, step->group) || strcmp (x->cluster,
                                                      step->cluster))
            continue;
        if (!strcmp (x->job_id, step->job_id)
            && !strcmp (x->step_id, step->step_id))
            self = true;
        rows[n++] = x;
    }
    if (!self)
        rows[n++] = step;
    rep_recommend_opts (h->r, &o);
    recs = tr_recommend_groups (rows, n, &o, NULL);
    free (rows);
    g = json_incref (json_array_get (json_object_get (recs, "groups"), 0));
    json_decref (recs);
    return g;
}

/* "Next time:" from the runs of the step's group, this one included. */
static void next_time (FILE *out, const struct tr_stepsum *step, void *arg)
{
    json_t *g = rep_advice (step, arg);
    const char *cpus, *mem, *t, *conf;
    json_int_t runs;

    cpus = json_string_value (json_object_get (json_object_get (g, "cpus"),
                                               "text"));
    mem = json_string_value (json_object_get (json_object_get (g, "mem"),
                                              "text"));
    t = json_string_value (json_object_get (json_object_get (g, "time"),
                                            "text"));
    conf = json_string_value (json_object_get (g, "confidence"));
    runs = json_integer_value (json_object_get (json_object_get (g, "runs"),
                                                "total"));
    if (g && (cpus || mem || t)) {
        struct tr_sizing_args a;
        char args[256];

        /* the label in the view's label column (report.c) */
        fprintf (out, "    %-16s", "Next time:");
        /* in the words of the scheduler that ran the step */
        if (tr_sizing_args_advice (&a, step->scheduler, g) < 0
            || tr_sizing_join (args, sizeof (args), &a) < 0)
            args[0] = '\0';
        fprintf (out, "%s", args);
        fprintf (out, " (%lld run%s of %s, %s confidence)\n",
                 (long long)runs, runs == 1 ? "" : "s", step->group,
                 conf ? conf : "low");
    }
    json_decref (g);
}

char *rep_html (struct rep *r, struct rep_history *h, size_t *len)
{
    struct tr_html_opts o = {
        .diag = &r->conf->diagnosis,
        .recommend = rep_advice,
        .arg = h,
    };
    char *buf = NULL;
    FILE *f;
    int saved;

    *len = 0;
    if (!(f = open_memstream (&buf, len)))
        return NULL;
    if (tr_html_job_report (f, r->recs, r->notes, &o) < 0) {
        saved = errno;
        fclose (f);
        free (buf);
        errno = saved;
        return NULL;
    }
    if (fclose (f) != 0) {
        free (buf);
        return NULL;
    }
    return buf;
}

/* The HTML report into r->html_out, whole or not at all (the store's
 * atomic write: a temporary beside it, renamed over it), or stdout.
 */
static int write_html (struct rep *r, struct rep_history *h)
{
    size_t len;
    char *buf;

    if (json_array_size (r->recs) == 0)
        return EXIT_RUNTIME;
    if (!(buf = rep_html (r, h, &len))) {
        if (errno == EINVAL)
            rep_err ("--html shows one job; name one with -j\n");
        else
            rep_err ("writing the report: %s\n", strerror (errno));
        return EXIT_RUNTIME;
    }
    return rep_write_file (r, buf, len);
}

/* Said once at the end of the view when some record's credential had
 * expired or been decoded before.
 */
static const char *const old_cred_note[] = {
    "Signatures",
    "munge: Expired credential means munged's time to live (300 s unless "
    "set otherwise) has passed since the record was signed; munge: "
    "Replayed credential, that this munged has decoded the credential "
    "before (the record was read before).  Both are expected of an older "
    "record, and the signature was checked all the same",
    NULL,
};

int rep_view (struct rep *r)
{
    struct rep_history h = { .r = r };
    struct tr_report_view_opts vo = {
        .diag = &r->conf->diagnosis,
        .advice = rep_advice,
        .next_time = next_time,
        .arg = &h,
        .width = tr_report_width (STDOUT_FILENO),
    };
    int rc = EXIT_OK;

    if (r->jobs_arg && (rc = rep_load_jobs (r)) != EXIT_OK)
        return rc;
    for (int i = 0; i < r->nfiles; i++)
        add_record (r->files[i], r);
    /* names, command lines and reasons come from users: the text and
     * HTML views show their control characters escaped (JSON escapes
     * them itself)
     */
    if (!r->json) {
        size_t i;
        json_t *rec;

        json_array_foreach (r->recs, i, rec)
            if (tr_record_printable (rec) < 0) {
                rep_err ("out of memory\n");
                return EXIT_RUNTIME;
            }
    }
    if (r->html) {
        int hrc = write_html (r, &h);

        rep_history_free (&h);
        if (hrc != EXIT_OK)
            return hrc;
        if (r->worst != EXIT_OK)
            return r->worst;
        return r->errors ? EXIT_RUNTIME : EXIT_OK;
    }
    if (r->json) {
        size_t i;
        json_t *rec;
        char *s;

        /* each failed step's cause and its evidence (doc/diagnosis.md) */
        json_array_foreach (r->recs, i, rec)
        {
            json_t *cause = tr_cause_json (rec);
            if (cause)
                json_object_set_new (rec, "cause", cause);
        }
        s = json_dumps (r->recs, JSON_INDENT (2) | JSON_SORT_KEYS);
        if (s)
            printf ("%s\n", s);
        free (s);
    }
    else {
        if (r->old_creds)
            vo.footnotes = old_cred_note;
        tr_report_job_view_ex (stdout, r->recs, r->notes, &vo);
    }
    rep_history_free (&h);
    if (r->worst != EXIT_OK)
        return r->worst;
    if (r->errors || json_array_size (r->recs) == 0)
        return EXIT_RUNTIME;
    return EXIT_OK;
}
