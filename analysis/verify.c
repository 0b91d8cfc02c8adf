/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What every reader of records shares, below the views that use it:
 * the program's messages, the exit status of the worst thing seen, job
 * id checks and signature verification.  A record that fails
 * verification is never shown as if it were authentic: tampered, forged
 * and unsigned records each get their own message and exit status.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libtracer/record/record.h"
#include "libtracer/record/sign.h"
#include "cli.h"

const char *rep_prog = "tracer-report";

int rep_err (const char *fmt, ...)
{
    va_list ap;
    int n;

    fprintf (stderr, "%s: ", rep_prog);
    va_start (ap, fmt);
    n = vfprintf (stderr, fmt, ap);
    va_end (ap);
    return n;
}

int rep_none (enum rep_none_kind kind, const char *fmt, ...)
{
    va_list ap;

    fprintf (stderr, "%s: ", rep_prog);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    /* a name that matches nothing is an error, as squeue -j and
     * scontrol show job take an unknown job; a selection that matches
     * nothing is an empty answer, as sacct's empty listing
     */
    return kind == REP_NONE_NAMED ? EXIT_RUNTIME : EXIT_OK;
}

void rep_set_worst (struct rep *r, int code)
{
    /* forged > tampered > unsigned: report the most serious */
    static const int rank[] = { [EXIT_OK] = 0, [EXIT_RUNTIME] = 1,
                                [EXIT_USAGE] = 1, [EXIT_UNSIGNED] = 2,
                                [EXIT_TAMPERED] = 3, [EXIT_FORGED] = 4 };
    if (rank[code] > rank[r->worst])
        r->worst = code;
}

bool rep_ids_safe (const char *list, bool allow_empty)
{
    char id[256];
    const char *p = list, *end;

    do {
        end = strchr (p, ',');
        if (snprintf (id, sizeof (id), "%.*s",
                      (int)(end ? (size_t)(end - p) : strlen (p)), p)
                >= (int)sizeof (id)
            || ((*id || !allow_empty) && !tr_record_id_is_safe (id))) {
            rep_err ("'%s' is not a valid job id\n",
                     id);
            return false;
        }
        p = end + 1;
    } while (end);
    return true;
}

int rep_verify (struct rep *r,
                json_t *rec,
                const char *path,
                bool keep_unsigned,
                char *note,
                size_t size,
                const char **sig)
{
    tr_error_t error;
    uid_t signer = (uid_t)-1;
    tr_sig_status_t st;

    st = tr_sign_verify (rec, r->conf->munge_socket, r->conf->signer_uids,
                         r->conf->n_signer_uids, &signer, &error);
    *sig = TR_STEPSUM_SIG_VALID;
    switch (st) {
    case TR_SIG_VALID:
        snprintf (note, size, "signature valid (uid %d)", (int)signer);
        return 0;
    case TR_SIG_VALID_OLD: {
        /* An expired credential is what every record read after munged's
         * TTL has, a replayed one what a record read twice has: the view
         * explains them once (rep_view); each record's line names which,
         * in munge's words ("munge: TEXT" in the error, sign.h).
         */
        const char *m = strstr (error.text, "munge: ");

        /* decoded before: by this very run (a listing that indexes it,
         * then the view) or an earlier one, which is no news of the
         * record: valid, as a fresh one reads
         */
        if (m && strstr (m, "Replayed credential")) {
            snprintf (note, size, "signature valid (uid %d)", (int)signer);
            return 0;
        }
        if (m)
            snprintf (note, size, "signature valid (uid %d; %.*s)",
                      (int)signer, (int)strcspn (m, ");"), m);
        else
            snprintf (note, size, "signature valid (uid %d; %s)",
                      (int)signer, error.text);
        r->old_creds++;
        return 0;
    }
    case TR_SIG_UNSIGNED:
        if (keep_unsigned) {
            /* "record is unsigned: WHY" (sign.h) says UNSIGNED twice */
            static const char said[] = "record is unsigned: ";
            const char *why = error.text;

            if (!strncmp (why, said, sizeof (said) - 1))
                why += sizeof (said) - 1;
            snprintf (note, size, "UNSIGNED: %s", why);
            *sig = TR_STEPSUM_SIG_UNSIGNED;
            return 0;
        }
        rep_err ("%s: %s (use --allow-unsigned to "
                 "show it anyway)\n", path, error.text);
        rep_set_worst (r, EXIT_UNSIGNED);
        break;
    case TR_SIG_TAMPERED:
    case TR_SIG_FORGED:
        if (!r->quiet_bad)
            rep_err ("%s: REJECTED: %s\n", path, error.text);
        rep_set_worst (r, st == TR_SIG_FORGED ? EXIT_FORGED : EXIT_TAMPERED);
        break;
    case TR_SIG_ERROR:
    default:
        /* tr_sign_verify's errors say what could not be done */
        rep_err ("%s: %s%s\n", path,
                 strncmp (error.text, "cannot verify signature", 23)
                     ? "cannot verify signature: "
                     : "",
                 error.text);
        snprintf (note, size, "%s", error.text);
        return -1;
    }
    snprintf (note, size, "%s", error.text);
    return 1;
}

json_t *rep_load_verified (struct rep *r,
                           const char *path,
                           char *note,
                           size_t size,
                           const char **sig)
{
    tr_error_t error;
    json_t *rec;
    int rc;

    if (!(rec = tr_record_load (path, &error))) {
        rep_err ("%s\n", tr_error_str (&error));
        r->errors++;
        return NULL;
    }
    if ((rc = rep_verify (r, rec, path, r->allow_unsigned, note, size, sig))
        == 0)
        return rec;
    if (rc < 0)
        r->errors++;
    json_decref (rec);
    return NULL;
}
