/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * signrec: sign a record file with the caller's own MUNGE credential
 * (tr_sign_record), as a user who wants a record of theirs to pass for
 * tracer's would: tests check that such a signature is refused as
 * forged.  tracer-run signs only as root.  Usage: signrec SOCKET IN
 * OUT; exit 0, or 1 with the reason.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtracer/record/record.h"
#include "libtracer/record/sign.h"

int main (int argc, char **argv)
{
    tr_error_t error;
    json_t *rec;
    char *text = NULL;
    FILE *f = NULL;
    int rc = 1;

    if (argc != 4) {
        fprintf (stderr, "Usage: signrec SOCKET IN OUT\n");
        return 2;
    }
    if (!(rec = tr_record_load (argv[2], &error))
        || tr_sign_record (rec, argv[1], &error) < 0) {
        fprintf (stderr, "signrec: %s: %s\n", argv[2], tr_error_str (&error));
        goto out;
    }
    if (!(text = tr_record_dumps (rec)) || !(f = fopen (argv[3], "w"))
        || fputs (text, f) < 0) {
        fprintf (stderr, "signrec: %s: cannot write it\n", argv[3]);
        goto out;
    }
    rc = 0;
out:
    if (f && fclose (f) != 0)
        rc = 1;
    free (text);
    json_decref (rec);
    return rc;
}
