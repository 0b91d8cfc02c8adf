/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_SIGN_H
#define TRACER_SIGN_H

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/util/error.h"

/* Record signing with MUNGE.  The signature member of a record is
 *   {"scheme": "munge-sha256", "digest": "<hex sha256 of canonical>",
 *    "credential": "MUNGE:..."}
 * where the credential's payload is "tracer-record-v1:<hex digest>".
 * An unsigned record carries {"scheme": "none", "reason": "..."}.
 * Any local user can mint a MUNGE credential, so a verifier also requires
 * the credential's uid to be one of the trusted signers (root by default).
 */

typedef enum {
    TR_SIG_VALID = 0,      /* authentic, credential current */
    TR_SIG_VALID_OLD,      /* authentic; credential expired or replayed */
    TR_SIG_UNSIGNED,       /* no signature (scheme "none" or absent) */
    TR_SIG_TAMPERED,       /* credential authentic, body does not match */
    TR_SIG_FORGED,         /* credential invalid, or signed by an untrusted uid */
    TR_SIG_ERROR,          /* could not verify (munged unreachable, ...) */
} tr_sig_status_t;

/* Hex SHA-256 of the record's canonical serialization into out
 * (65 bytes with NUL).  Returns 0 or -1 with errno.
 */
int tr_sign_digest (json_t *rec, char out[65]);

/* Sign rec in place: round its reals (tr_record_round_reals), compute
 * the digest, encode a MUNGE credential
 * (socket NULL = libmunge default; EMUNGE_SOCKET is retried a bounded
 * number of times) and set rec.signature.  On failure rec gets an
 * unsigned signature member with the reason and -1 is returned with the
 * same reason in error.
 */
int tr_sign_record (json_t *rec, const char *munge_socket, tr_error_t *error);

/* Options for tr_sign_record_opts.  Zero-initialize for defaults. */
struct tr_sign_opts {
    const char *munge_socket; /* NULL: the libmunge default socket */
    int ttl_s;                /* credential time-to-live in seconds;
                                 0: munged's default (300 s) */
};

/* tr_sign_record with options (opts NULL = defaults).  tr_sign_record
 * (rec, sock, error) is this with {sock, 0}.  A short ttl_s lets tests
 * make credentials that expire; verification of an expired credential
 * yields TR_SIG_VALID_OLD, never a failure.  On failure errno is EIO
 * (munge refused or was unreachable), ENOMEM or EINVAL (rec not an
 * object).
 */
int tr_sign_record_opts (json_t *rec,
                         const struct tr_sign_opts *opts,
                         tr_error_t *error);

/* Mark rec unsigned with a reason (replaces any signature); its reals
 * are rounded as for signing.  A reason
 * longer than 1024 bytes is cut at a UTF-8 character boundary.  Returns
 * 0, or -1 with errno = EINVAL (rec not an object, reason not UTF-8) or
 * ENOMEM.
 */
int tr_sign_mark_unsigned (json_t *rec, const char *reason);

/* An unsigned record's reason (signature.reason, or the error of a
 * failed tr_sign_record) in the words a user should read: munged not
 * running becomes "munged was not running (no answer on SOCKET): start
 * munged to have records signed", written into buf; any other reason is
 * returned as it is.  Returns buf or reason (never NULL: a NULL reason
 * gives a constant text).
 */
const char *tr_sign_reason_str (const char *reason, char *buf, size_t size);

/* Verify rec's signature.  trusted_uids/n_trusted list who may sign
 * (n_trusted 0 means root only).  On return *signer_uid (if not NULL)
 * holds the credential's uid when one was decoded.  error says why for
 * every status but TR_SIG_VALID, with munge's own text as "munge: TEXT"
 * where munge had a word.
 */
tr_sig_status_t tr_sign_verify (json_t *rec,
                                const char *munge_socket,
                                const uid_t *trusted_uids,
                                size_t n_trusted,
                                uid_t *signer_uid,
                                tr_error_t *error);

/* Sign a text (a live summary, livesum.h): a MUNGE credential whose
 * payload is "tracer-live-v1:" and the hex SHA-256 of the len bytes at
 * text, into *cred (free() it).  Returns 0, or -1 with errno (EIO: munge
 * refused or was unreachable; ENOMEM; EINVAL) and error.
 */
int tr_sign_text (const char *text,
                  size_t len,
                  const char *munge_socket,
                  char **cred,
                  tr_error_t *error);

/* Verify a credential made by tr_sign_text against the len bytes at
 * text, as tr_sign_verify does a record's: TR_SIG_UNSIGNED when cred is
 * NULL or empty, TR_SIG_FORGED when its signer is not trusted or it
 * carries no live summary digest, TR_SIG_TAMPERED when the text is not
 * the one signed.
 */
tr_sig_status_t tr_sign_verify_text (const char *text,
                                     size_t len,
                                     const char *cred,
                                     const char *munge_socket,
                                     const uid_t *trusted_uids,
                                     size_t n_trusted,
                                     uid_t *signer_uid,
                                     tr_error_t *error);

/* A short name for a status ("valid", "valid-old", "unsigned",
 * "tampered", "forged", "error").
 */
const char *tr_sign_status_str (tr_sig_status_t st);

#endif /* !TRACER_SIGN_H */
