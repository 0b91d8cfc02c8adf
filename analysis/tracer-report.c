/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report: read records from the store (by job id) or from files,
 * verify every signature, and print the job view.  A record that fails
 * verification is never shown as if it were authentic: tampered, forged
 * and unsigned records each get their own message and exit status.
 * With --live it lists the steps running on this node instead, from the
 * snapshots tracerd keeps of them.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libtracer/conf.h"
#include "libtracer/record.h"
#include "libtracer/report.h"
#include "libtracer/sign.h"
#include "libtracer/store.h"

enum {
    EXIT_OK = 0,
    EXIT_RUNTIME = 1,
    EXIT_USAGE = 2,
    EXIT_TAMPERED = 3,
    EXIT_UNSIGNED = 4,
    EXIT_FORGED = 5,
};

static struct {
    tr_conf_t *conf;
    bool allow_unsigned;
    bool json;
    bool live;
    json_t *recs;
    json_t *notes;
    int worst;          /* exit status from verification */
    int errors;
} r;

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: tracer-report [OPTIONS] -j JOBID[,JOBID...]\n"
             "       tracer-report [OPTIONS] RECORD-FILE...\n"
             "       tracer-report --live [-j JOBID[,JOBID...]] [OPTIONS]\n"
             "Show what job steps used, from tracer records.\n\n"
             "  -j, --jobs=LIST       job ids to show (comma-separated)\n"
             "      --live            list the steps running on this node\n"
             "  -M, --cluster=NAME    cluster (default: cluster.name from "
             "the config)\n"
             "      --store=DIR       read the store at DIR\n"
             "  -c, --config=FILE     configuration file (default %s)\n"
             "      --allow-unsigned  show unsigned records (marked as such)\n"
             "      --json            print the verified records as JSON\n"
             "  -h, --help            show this help and exit\n"
             "  -V, --version         show the version and exit\n\n"
             "Exit status: 0 ok, 1 runtime error or no records, 2 usage or "
             "configuration error,\n3 a record was modified after signing, "
             "4 a record is unsigned, 5 a signature is forged.\n"
             "With --live: 0 also when no step runs, 1 a snapshot could not "
             "be read.\n",
             tr_conf_default_path ());
}

static void set_worst (int code)
{
    /* forged > tampered > unsigned: report the most serious */
    static const int rank[] = { [EXIT_OK] = 0, [EXIT_RUNTIME] = 1,
                                [EXIT_USAGE] = 1, [EXIT_UNSIGNED] = 2,
                                [EXIT_TAMPERED] = 3, [EXIT_FORGED] = 4 };
    if (rank[code] > rank[r.worst])
        r.worst = code;
}

static int add_record (const char *path, void *arg)
{
    tr_error_t error;
    json_t *rec;
    uid_t signer = (uid_t)-1;
    tr_sig_status_t st;
    char note[300];

    if (!(rec = tr_record_load (path, &error))) {
        fprintf (stderr, "tracer-report: %s\n", tr_error_str (&error));
        r.errors++;
        return 0;
    }
    st = tr_sign_verify (rec, r.conf->munge_socket, r.conf->signer_uids,
                         r.conf->n_signer_uids, &signer, &error);
    switch (st) {
    case TR_SIG_VALID:
        snprintf (note, sizeof (note), "signature valid (uid %d)",
                  (int)signer);
        break;
    case TR_SIG_VALID_OLD:
        snprintf (note, sizeof (note),
                  "signature valid (uid %d; credential expired or replayed, "
                  "as expected for an older record)", (int)signer);
        break;
    case TR_SIG_UNSIGNED:
        if (r.allow_unsigned) {
            snprintf (note, sizeof (note), "UNSIGNED: %s", error.text);
            break;
        }
        fprintf (stderr, "tracer-report: %s: %s (use --allow-unsigned to "
                 "show it anyway)\n", path, error.text);
        set_worst (EXIT_UNSIGNED);
        json_decref (rec);
        return 0;
    case TR_SIG_TAMPERED:
        fprintf (stderr, "tracer-report: %s: REJECTED: %s\n", path,
                 error.text);
        set_worst (EXIT_TAMPERED);
        json_decref (rec);
        return 0;
    case TR_SIG_FORGED:
        fprintf (stderr, "tracer-report: %s: REJECTED: %s\n", path,
                 error.text);
        set_worst (EXIT_FORGED);
        json_decref (rec);
        return 0;
    case TR_SIG_ERROR:
    default:
        fprintf (stderr, "tracer-report: %s: cannot verify signature: %s\n",
                 path, error.text);
        r.errors++;
        json_decref (rec);
        return 0;
    }
    {
        char key[32];
        snprintf (key, sizeof (key), "%zu", json_array_size (r.recs));
        json_object_set_new (r.notes, key, json_string (note));
    }
    json_array_append_new (r.recs, rec);
    return 0;
}

static int show_jobs (const char *list, const char *cluster,
                      const char *store_path)
{
    tr_store_t *store;
    tr_error_t error;
    char buf[4096], *tok, *save = NULL;

    if (snprintf (buf, sizeof (buf), "%s", list) >= (int)sizeof (buf)) {
        fprintf (stderr, "tracer-report: job list too long\n");
        return EXIT_USAGE;
    }
    if (!(store = tr_store_open (store_path, NULL, &error))) {
        fprintf (stderr, "tracer-report: store %s: %s\n", store_path,
                 tr_error_str (&error));
        return EXIT_RUNTIME;
    }
    for (tok = strtok_r (buf, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        if (!tr_record_id_is_safe (tok)) {
            fprintf (stderr, "tracer-report: '%s' is not a valid job id\n",
                     tok);
            tr_store_destroy (store);
            return EXIT_USAGE;
        }
        if (tr_store_foreach_job (store, cluster, tok, add_record, NULL,
                                  &error) < 0) {
            if (errno == ENOENT)
                fprintf (stderr, "tracer-report: job %s: no records in %s "
                         "(cluster %s)\n", tok, store_path, cluster);
            else
                fprintf (stderr, "tracer-report: job %s: %s\n", tok,
                         tr_error_str (&error));
            r.errors++;
        }
    }
    tr_store_destroy (store);
    return EXIT_OK;
}

/* Does the comma-separated list name item? */
static bool list_has (const char *list, const char *item)
{
    size_t len = strlen (item);

    for (const char *p = list; p; p = strchr (p, ',')) {
        if (*p == ',')
            p++;
        if (!strncmp (p, item, len) && (p[len] == ',' || p[len] == '\0'))
            return true;
    }
    return false;
}

/* Every job id in the list is path-safe (the store's rule, kept for
 * --live so the same list means the same in both).
 */
static bool jobs_valid (const char *list)
{
    char id[256];
    const char *p = list, *end;

    do {
        end = strchr (p, ',');
        if (snprintf (id, sizeof (id), "%.*s",
                      (int)(end ? (size_t)(end - p) : strlen (p)), p)
                >= (int)sizeof (id)
            || (*id && !tr_record_id_is_safe (id))) {
            fprintf (stderr, "tracer-report: '%s' is not a valid job id\n",
                     id);
            return false;
        }
        p = end + 1;
    } while (end);
    return true;
}

/* Is a live entry one of the jobs (and cluster) asked for?  An entry
 * that could not be read is judged by its file name,
 * <cluster>@<job>@<step>@<node>.json.
 */
static bool live_wanted (json_t *e, const char *jobs, const char *cluster)
{
    json_t *id = json_object_get (json_object_get (e, "record"), "identity");
    const char *file = json_string_value (json_object_get (e, "file"));
    const char *base = file ? strrchr (file, '/') : NULL;
    char c[256] = "", j[256] = "";

    if (id) {
        snprintf (c, sizeof (c), "%s",
                  json_string_value (json_object_get (id, "cluster")));
        snprintf (j, sizeof (j), "%s",
                  json_string_value (json_object_get (id, "job_id")));
    }
    else if (base && sscanf (base + 1, "%255[^@]@%255[^@]@", c, j) != 2)
        return !jobs && !cluster;
    return (!jobs || list_has (jobs, j)) && (!cluster || !strcmp (c, cluster));
}

/* The detailed view of one live snapshot, with its age on the Record:
 * line.
 */
static int show_live_one (json_t *e)
{
    json_t *recs = json_array (), *notes = json_object ();
    char note[300];
    int rc = -1;

    if (json_is_true (json_object_get (e, "stale")))
        snprintf (note, sizeof (note), "live snapshot, %.0f s old; STALE: %s",
                  json_number_value (json_object_get (e, "age_s")),
                  json_string_value (json_object_get (e, "stale_reason")));
    else
        snprintf (note, sizeof (note), "live snapshot, %.0f s old (not "
                  "signed; the final record will be)",
                  json_number_value (json_object_get (e, "age_s")));
    if (recs && notes
        && json_array_append (recs, json_object_get (e, "record")) == 0
        && json_object_set_new (notes, "0", json_string (note)) == 0)
        rc = tr_report_job_view (stdout, recs, notes);
    json_decref (recs);
    json_decref (notes);
    return rc;
}

/* Print the live entries that were asked for: as JSON, as a line that
 * there are none, in the detailed view when one job was asked for and
 * one step matched, else as the table.
 */
static void print_live (json_t *shown,
                        bool filtered,
                        bool by_job,
                        const char *dir)
{
    if (r.json) {
        char *s = json_dumps (shown, JSON_INDENT (2) | JSON_SORT_KEYS);
        if (s)
            printf ("%s\n", s);
        free (s);
    }
    else if (json_array_size (shown) == 0)
        printf ("No %ssteps running on this node (%s).\n",
                filtered ? "matching " : "", dir);
    else if (by_job && json_array_size (shown) == 1)
        show_live_one (json_array_get (shown, 0));
    else
        tr_report_live_view (stdout, shown);
}

/* --live: the snapshots in <daemon.state_dir>/live, filtered. */
static int show_live (const char *jobs, const char *cluster)
{
    struct tr_report_live_opts lo = {
        .snapshot_interval_s = r.conf->snapshot_interval_s,
    };
    char dir[4096];
    tr_error_t error;
    json_t *all, *shown, *e;
    size_t i;
    int rc = EXIT_OK;

    if (jobs && !jobs_valid (jobs))
        return EXIT_USAGE;
    if (snprintf (dir, sizeof (dir), "%s/live", r.conf->state_dir)
        >= (int)sizeof (dir)) {
        fprintf (stderr, "tracer-report: daemon.state_dir is too long\n");
        return EXIT_USAGE;
    }
    /* Only root asks tracerd whether it runs: it refuses, and logs, the
     * users it does not admit.  For them the age of a snapshot decides.
     */
    if (geteuid () == 0)
        lo.daemon = tr_report_daemon_state (r.conf->socket_path, 1000);
    if (!(all = tr_report_live_scan (dir, &lo, &error))) {
        if (errno != ENOENT) {
            fprintf (stderr, "tracer-report: %s\n", tr_error_str (&error));
            return EXIT_RUNTIME;
        }
        /* No daemon made it: nothing runs under tracer here. */
        all = json_array ();
    }
    if (!all || !(shown = json_array ())) {
        json_decref (all);
        fprintf (stderr, "tracer-report: out of memory\n");
        return EXIT_RUNTIME;
    }
    json_array_foreach (all, i, e) {
        if (!live_wanted (e, jobs, cluster))
            continue;
        if (json_object_get (e, "error")) {
            fprintf (stderr, "tracer-report: %s\n",
                     json_string_value (json_object_get (e, "error")));
            rc = EXIT_RUNTIME;
        }
        else if (json_array_append (shown, e) < 0) {
            fprintf (stderr, "tracer-report: out of memory\n");
            rc = EXIT_RUNTIME;
        }
    }
    print_live (shown, jobs || cluster, jobs != NULL, dir);
    json_decref (shown);
    json_decref (all);
    return rc;
}

int main (int argc, char **argv)
{
    static const struct option opts[] = {
        { "jobs", required_argument, NULL, 'j' },
        { "cluster", required_argument, NULL, 'M' },
        { "store", required_argument, NULL, 'S' },
        { "config", required_argument, NULL, 'c' },
        { "allow-unsigned", no_argument, NULL, 'U' },
        { "json", no_argument, NULL, 'J' },
        { "live", no_argument, NULL, 'L' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *jobs = NULL, *cluster = NULL, *store_path = NULL;
    const char *conf_path = tr_conf_default_path ();
    bool conf_explicit = getenv ("TRACER_CONF") && *getenv ("TRACER_CONF");
    tr_error_t error;
    int c, rc = EXIT_OK;

    while ((c = getopt_long (argc, argv, "j:M:c:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            jobs = optarg;
            break;
        case 'M':
            cluster = optarg;
            break;
        case 'S':
            store_path = optarg;
            break;
        case 'c':
            conf_path = optarg;
            conf_explicit = true;
            break;
        case 'U':
            r.allow_unsigned = true;
            break;
        case 'J':
            r.json = true;
            break;
        case 'L':
            r.live = true;
            break;
        case 'h':
            usage (stdout);
            return EXIT_OK;
        case 'V':
            printf ("tracer-report %s\n", TRACER_VERSION);
            return EXIT_OK;
        default:
            usage (stderr);
            return EXIT_USAGE;
        }
    }
    if (r.live && (optind < argc || store_path)) {
        fprintf (stderr, "tracer-report: --live reads this node's snapshots, "
                 "not %s\n", store_path ? "a store" : "record files");
        usage (stderr);
        return EXIT_USAGE;
    }
    if (!r.live && !jobs && optind >= argc) {
        fprintf (stderr, "tracer-report: give -j JOBID or record files\n");
        usage (stderr);
        return EXIT_USAGE;
    }
    if (!(r.conf = tr_conf_create ()) || !(r.recs = json_array ())
        || !(r.notes = json_object ())) {
        fprintf (stderr, "tracer-report: out of memory\n");
        return EXIT_RUNTIME;
    }
    if (tr_conf_load (r.conf, conf_path, &error) < 0
        && !(errno == ENOENT && !conf_explicit)) {
        fprintf (stderr, "tracer-report: %s\n", tr_error_str (&error));
        rc = EXIT_USAGE;
        goto out;
    }
    if (r.live) {
        rc = show_live (jobs, cluster);
        goto out;
    }
    if (jobs) {
        rc = show_jobs (jobs, cluster ? cluster : r.conf->cluster_name,
                        store_path ? store_path : r.conf->store_path);
        if (rc != EXIT_OK)
            goto out;
    }
    for (int i = optind; i < argc; i++)
        add_record (argv[i], NULL);
    if (r.json) {
        char *s = json_dumps (r.recs, JSON_INDENT (2) | JSON_SORT_KEYS);
        if (s)
            printf ("%s\n", s);
        free (s);
    }
    else
        tr_report_job_view (stdout, r.recs, r.notes);
    if (r.worst != EXIT_OK)
        rc = r.worst;
    else if (r.errors || json_array_size (r.recs) == 0)
        rc = EXIT_RUNTIME;
out:
    json_decref (r.recs);
    json_decref (r.notes);
    tr_conf_destroy (r.conf);
    return rc;
}
