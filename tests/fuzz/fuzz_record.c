/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Record decoding (record.h): tracer-report reads records that any job
 * owner can write into the store, so the parser sees hostile text.  An
 * accepted record must also survive what the report and the signer do
 * with it: validation again, the canonical form the signature covers,
 * and the file form, which must parse back to the same canonical text
 * (else a signed record would fail its own check once written out).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/record/record.h"
#include "fuzz.h"

/* A failure must say why, in a terminated string. */
static void check_error_text (const tr_error_t *err)
{
    if (!memchr (err->text, '\0', sizeof (err->text)) || err->text[0] == '\0')
        abort ();
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    tr_error_t err;
    json_t *rec, *back;
    char *canon = NULL, *file = NULL, *canon2 = NULL, *file2 = NULL;

    if (size > FUZZ_MAX_LEN)
        return 0;
    memset (&err, 0, sizeof (err));
    if (!(rec = tr_record_parse ((const char *)data, size, &err))) {
        check_error_text (&err);
        return 0;
    }
    /* parse validated it: validating again must agree */
    if (tr_record_validate (rec, &err) < 0)
        abort ();
    (void)tr_record_get_str (rec, "identity", "job_id");
    (void)tr_record_get_str (rec, NULL, "kind");
    if (!(canon = tr_record_canonical (rec)) || !(file = tr_record_dumps (rec)))
        abort ();
    memset (&err, 0, sizeof (err));
    if (!(back = tr_record_parse (file, strlen (file), &err)))
        abort ();
    if (!(canon2 = tr_record_canonical (back))
        || !(file2 = tr_record_dumps (back)))
        abort ();
    /* the file form reads back as the record it was made from, and is a
     * fixed point: writing the read-back record gives the same bytes
     */
    if (strcmp (canon, canon2) != 0 || strcmp (file, file2) != 0)
        abort ();
    free (file2);
    free (canon2);
    json_decref (back);
    free (file);
    free (canon);
    json_decref (rec);
    return 0;
}
