/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * storeput: file record files into a store the way tracerd does
 * (tr_store_put), for tests that need a store of known records without
 * running the jobs.  Usage: storeput STORE RECORD...; exit 0, or 1 with
 * the reason for the first record that could not be filed.
 */
#include "config.h"

#include <stdio.h>

#include "libtracer/record/record.h"
#include "libtracer/record/store.h"

int main (int argc, char **argv)
{
    struct tr_store_opts opts = {
        .file_mode = 0644,
        .dir_mode = 0755,
        .owner_uid = (uid_t)-1,
        .gid = (gid_t)-1,
        .create = true,
    };
    tr_error_t error;
    tr_store_t *store;
    int rc = 0;

    if (argc < 3) {
        fprintf (stderr, "Usage: storeput STORE RECORD...\n");
        return 2;
    }
    if (!(store = tr_store_open (argv[1], &opts, &error))) {
        fprintf (stderr, "storeput: %s: %s\n", argv[1], tr_error_str (&error));
        return 1;
    }
    for (int i = 2; i < argc && rc == 0; i++) {
        json_t *rec = tr_record_load (argv[i], &error);

        if (!rec || tr_store_put (store, rec, &error) < 0) {
            fprintf (stderr, "storeput: %s: %s\n", argv[i],
                     tr_error_str (&error));
            rc = 1;
        }
        json_decref (rec);
    }
    tr_store_destroy (store);
    return rc;
}
