/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report --compare: two pipeline runs side by side.  The
 * arithmetic is in libtracer (runcmp.c); this file turns the
 * configuration into its options and prints what it returns.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtracer/view/runcmp.h"
#include "cli.h"

int rep_compare (struct rep *r, tr_rowset_t *set)
{
    const struct tr_conf_regression *c = &r->conf->regression;
    const tr_stepsum_t **rows = NULL;
    struct tr_recommend_regress_opts o;
    tr_error_t error;
    json_t *cmp = NULL;
    int rc = EXIT_RUNTIME;

    error.text[0] = '\0';
    if (set->n && !(rows = calloc (set->n, sizeof (*rows)))) {
        rep_err ("out of memory\n");
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < set->n; i++)
        rows[i] = &set->rows[i];
    tr_recommend_regress_opts_default (&o);
    /* a process of one task is compared too: the ratio guards it */
    o.min_history = 1;
    o.threshold = c->z;
    o.min_ratio = c->ratio;
    if (!(cmp = tr_run_compare (rows, set->n, r->compare_a, r->compare_b, &o,
                                &error))) {
        if (errno == ENOENT)
            rc = rep_none (REP_NONE_NAMED, "--compare: %s\n",
                           tr_error_str (&error));
        else {
            rep_err ("--compare: %s\n", tr_error_str (&error));
            rc = errno == ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
        }
        goto out;
    }
    if (!json_is_true (json_object_get (cmp, "same_pipeline")))
        rep_err ("warning: %s and %s are runs of different pipelines (%s, "
                 "%s); compared all the same\n", r->compare_a, r->compare_b,
                 json_string_value (json_object_get (
                     json_object_get (cmp, "a"), "pipeline")),
                 json_string_value (json_object_get (
                     json_object_get (cmp, "b"), "pipeline")));
    if (r->json) {
        char *s = json_dumps (cmp, JSON_INDENT (2) | JSON_SORT_KEYS);

        rc = s && printf ("%s\n", s) >= 0 && fflush (stdout) == 0
                 ? EXIT_OK : EXIT_RUNTIME;
        free (s);
    }
    else
        rc = tr_run_compare_print (stdout, cmp, r->parsable) < 0
                 ? EXIT_RUNTIME : EXIT_OK;
out:
    json_decref (cmp);
    free (rows);
    return rc;
}
