/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What the nodes could not deliver: tracerd counts the records it had to
 * drop (more waiting for a full spool than spool.pending_max, or left
 * unsaved when it stopped) and the spool files it had to move aside
 * (not a readable record), and its forwarder keeps the counts in the
 * store (<cluster>/nodes/<node>.json, tr_store_node_status).  A listing
 * says so, one line per node with anything to say, on stderr, and
 * counts the records the store set aside (tr_store_refused_count).
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "libtracer/record/store.h"

void rep_node_drops (tr_store_t *store, const char *cluster)
{
    tr_error_t error;
    json_t *nodes = tr_store_node_status (store, cluster, &error);
    json_t *o;
    size_t i;

    long refused = tr_store_refused_count (store, cluster);

    if (refused > 0)
        rep_err ("%ld record%s set aside under %s/%s/ (a node wrote a "
                 "record of a job whose place holds another user's "
                 "record; tracer-report does not read them)\n",
                 refused, refused == 1 ? "" : "s", cluster,
                 TR_STORE_REFUSED);
    if (!nodes)
        return; /* the listing itself is what matters */
    json_array_foreach (nodes, i, o) {
        json_int_t lost = json_integer_value (json_object_get (o,
                                                               "records_lost"));
        json_int_t bad = json_integer_value (
            json_object_get (o, "spool_moved_aside"));
        time_t since = (time_t)json_integer_value (json_object_get (o,
                                                                    "since"));
        char when[32] = "?";
        struct tm tm;

        if (lost <= 0 && bad <= 0)
            continue;
        if (since > 0 && gmtime_r (&since, &tm))
            strftime (when, sizeof (when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        if (lost > 0)
            rep_err ("node %s: %lld record%s lost since %s (tracerd's log "
                     "there says which)\n",
                     json_string_value (json_object_get (o, "node")),
                     (long long)lost, lost == 1 ? "" : "s", when);
        if (bad > 0)
            rep_err ("node %s: %lld spool file%s not readable as a record "
                     "since %s, kept there as *.bad\n",
                     json_string_value (json_object_get (o, "node")),
                     (long long)bad, bad == 1 ? "" : "s", when);
    }
    json_decref (nodes);
}
