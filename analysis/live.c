/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report --live: the steps running on this node, from the
 * snapshots tracerd keeps of them.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libtracer/view/report.h"
#include "cli.h"

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
    struct tr_report_view_opts vo = {
        .width = tr_report_width (STDOUT_FILENO),
    };
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
        rc = tr_report_job_view_ex (stdout, recs, notes, &vo);
    json_decref (recs);
    json_decref (notes);
    return rc;
}

/* Print the live entries that were asked for: as JSON, as a line that
 * there are none, in the detailed view when one job was asked for and
 * one step matched, else as the table.
 */
static void print_live (struct rep *r,
                        json_t *shown,
                        bool filtered,
                        bool by_job,
                        const char *dir)
{
    if (r->json) {
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
        tr_report_live_view (stdout, shown, tr_report_width (STDOUT_FILENO));
}

/* --live: the snapshots in <daemon.state_dir>/live, filtered. */
int rep_live (struct rep *r)
{
    const char *jobs = r->jobs_arg, *cluster = r->cluster;
    struct tr_report_live_opts lo = {
        .snapshot_interval_s = r->conf->snapshot_interval_s,
    };
    char dir[4096];
    tr_error_t error;
    json_t *all, *shown, *e;
    size_t i;
    int rc = EXIT_OK;

    if (jobs && !rep_ids_safe (jobs, true))
        return EXIT_USAGE;
    if (snprintf (dir, sizeof (dir), "%s/live", r->conf->state_dir)
        >= (int)sizeof (dir)) {
        rep_err ("daemon.state_dir is too long\n");
        return EXIT_USAGE;
    }
    /* Only root asks tracerd whether it runs: it refuses, and logs, the
     * users it does not admit.  For them the age of a snapshot decides.
     */
    if (geteuid () == 0)
        lo.daemon = tr_report_daemon_state (r->conf->socket_path, 1000);
    if (!(all = tr_report_live_scan (dir, &lo, &error))) {
        if (errno != ENOENT) {
            rep_err ("%s\n", tr_error_str (&error));
            return EXIT_RUNTIME;
        }
        /* No daemon made it: nothing runs under tracer here. */
        all = json_array ();
    }
    if (!all || !(shown = json_array ())) {
        json_decref (all);
        rep_err ("out of memory\n");
        return EXIT_RUNTIME;
    }
    json_array_foreach (all, i, e) {
        if (!live_wanted (e, jobs, cluster))
            continue;
        if (json_object_get (e, "error")) {
            rep_err ("%s\n",
                     json_string_value (json_object_get (e, "error")));
            rc = EXIT_RUNTIME;
        }
        else if (json_array_append (shown, e) < 0) {
            rep_err ("out of memory\n");
            rc = EXIT_RUNTIME;
        }
    }
    print_live (r, shown, jobs || cluster, jobs != NULL, dir);
    json_decref (shown);
    json_decref (all);
    return rc;
}

