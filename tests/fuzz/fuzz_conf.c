/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The site configuration parser (conf.h) on arbitrary YAML.  The file is
 * root's, but a typo or a truncated copy must give an error, never a
 * crash in tracerd or in the SPANK plugin inside slurmstepd.  Checked
 * beyond the sanitizers: a failure comes with a message, and leaves the
 * configuration as it was (conf.h: "On failure conf is unchanged").
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "libtracer/conf/conf.h"
#include "libtracer/util/error.h"
#include "fuzz.h"

/* A few members of every kind, to tell whether a failed load changed
 * the configuration it was applied to.
 */
struct snapshot {
    char *cluster_name;
    char *store_path;
    double interval_s;
    size_t n_notify_uids;
    size_t n_partitions;
    bool sign_enabled;
};

static bool same_str (const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp (a, b) == 0;
}

static void take (struct snapshot *s, const tr_conf_t *c)
{
    s->cluster_name = c->cluster_name ? strdup (c->cluster_name) : NULL;
    s->store_path = c->store_path ? strdup (c->store_path) : NULL;
    s->interval_s = c->interval_s;
    s->n_notify_uids = c->n_notify_uids;
    s->n_partitions = c->cost.n_partitions;
    s->sign_enabled = c->sign_enabled;
}

static bool unchanged (const struct snapshot *s, const tr_conf_t *c)
{
    return same_str (s->cluster_name, c->cluster_name)
           && same_str (s->store_path, c->store_path)
           && (s->interval_s == c->interval_s
               || (isnan (s->interval_s) && isnan (c->interval_s)))
           && s->n_notify_uids == c->n_notify_uids
           && s->n_partitions == c->cost.n_partitions
           && s->sign_enabled == c->sign_enabled;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct snapshot snap;
    tr_error_t err;
    tr_conf_t *conf;
    char *text;
    int rc;

    if (!(text = fuzz_text (data, size)))
        return 0;
    if (!(conf = tr_conf_create ())) {
        free (text);
        return 0;
    }
    /* Twice: the first load starts from the defaults, the second
     * applies the same text on top of its result (or of the defaults
     * again when it failed).
     */
    for (int pass = 0; pass < 2; pass++) {
        memset (&err, 0, sizeof (err));
        take (&snap, conf);
        rc = tr_conf_load_string (conf, "fuzz.yaml", text, &err);
        if (rc < 0) {
            if (!memchr (err.text, '\0', sizeof (err.text))
                || err.text[0] == '\0' || !unchanged (&snap, conf))
                abort ();
            (void)tr_error_str (&err);
        }
        else if (rc != 0)
            abort ();
        else {
            double core, gb, gpu;
            tr_conf_cost_rates (conf, "batch", &core, &gb, &gpu);
        }
        free (snap.cluster_name);
        free (snap.store_path);
    }
    tr_conf_destroy (conf);
    free (text);
    return 0;
}
