/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Record signatures with MUNGE.  The credential carries the SHA-256 of
 * the record's canonical serialization, so munged authenticates who
 * wrote the record (the credential's uid) and the digest binds the body.
 * MUNGE credentials expire (munged's default TTL is 300 s) and decode
 * only once per munged (replay cache), while records are read days later
 * and many times; libmunge still returns the payload and uid for expired
 * and replayed credentials, which is what TR_SIG_VALID_OLD reports.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <munge.h>
#include <openssl/evp.h>

#include "record.h"
#include "sign.h"

#define PAYLOAD_PREFIX "tracer-record-v1:"
#define PAYLOAD_PREFIX_LEN (sizeof (PAYLOAD_PREFIX) - 1)
#define PAYLOAD_LEN (PAYLOAD_PREFIX_LEN + 64)

/* munged restarts (logrotate, package upgrade) show up as EMUNGE_SOCKET;
 * retry a few times, but briefly: a step's end must not wait on it.
 * libmunge already retries a refused connection itself for about 2 s, so
 * only failures that came back fast (socket missing while munged
 * restarts) are retried, within SOCKET_RETRY_BUDGET_MS overall.
 */
#define SOCKET_RETRIES 3
#define SOCKET_RETRY_MS 25
#define SOCKET_RETRY_BUDGET_MS 100

/* Same bound as the validator puts on signature.reason. */
#define REASON_MAX 1024

/* The hex SHA-256 of len bytes into out (65 bytes with NUL): 0, or -1
 * with errno ENOMEM (libcrypto could not allocate its context).
 */
static int hex_sha256 (const void *data, size_t len, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    if (!EVP_Digest (data, len, md, &mdlen, EVP_sha256 (), NULL)
        || mdlen != 32) {
        errno = ENOMEM;
        return -1;
    }
    for (unsigned int i = 0; i < mdlen; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 0xf];
    }
    out[64] = '\0';
    return 0;
}

int tr_sign_digest (json_t *rec, char out[65])
{
    char *canon;
    int rc;

    if (!out) {
        errno = EINVAL;
        return -1;
    }
    if (!(canon = tr_record_canonical (rec)))
        return -1;
    rc = hex_sha256 (canon, strlen (canon), out);
    free (canon);
    return rc;
}

int tr_sign_mark_unsigned (json_t *rec, const char *reason)
{
    char buf[REASON_MAX + 1];
    size_t len;
    json_t *sig, *str;

    if (!json_is_object (rec)) {
        errno = EINVAL;
        return -1;
    }
    (void)tr_record_round_reals (rec);
    if (!reason)
        reason = "unspecified";
    len = strlen (reason);
    if (len > REASON_MAX) {
        len = REASON_MAX;
        /* Back off to a character boundary: jansson refuses bad UTF-8. */
        while (len > 0 && ((unsigned char)reason[len] & 0xc0) == 0x80)
            len--;
    }
    memcpy (buf, reason, len);
    buf[len] = '\0';
    if (!(sig = json_object ())
        || json_object_set_new (sig, "scheme", json_string ("none")) < 0) {
        json_decref (sig);
        errno = ENOMEM;
        return -1;
    }
    if (!(str = json_string (buf))) {
        /* json_string fails on invalid UTF-8 as well as on ENOMEM; the
         * unchecked variant tells the two apart.
         */
        json_t *probe = json_string_nocheck (buf);
        errno = probe ? EINVAL : ENOMEM;
        json_decref (probe);
        json_decref (sig);
        return -1;
    }
    if (json_object_set_new (sig, "reason", str) < 0) {
        json_decref (sig);
        errno = ENOMEM;
        return -1;
    }
    if (json_object_set_new (rec, "signature", sig) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* Record why signing failed in both rec and error, and return -1 with
 * errno.  If even marking fails (ENOMEM) the record keeps whatever
 * signature member it had, which the caller learns from the -1.
 */
static int fail_unsigned (json_t *rec,
                          int errnum,
                          tr_error_t *error,
                          const char *reason)
{
    (void)tr_sign_mark_unsigned (rec, reason);
    errno = errnum;
    return tr_errprintf (error, "%s", reason);
}

/* "munge: <generic text>: <detail>" (the context's text names the socket
 * and the OS error, which is what an admin needs to fix it).
 */
static void munge_reason (char *buf,
                          size_t size,
                          munge_err_t e,
                          munge_ctx_t ctx)
{
    const char *detail = ctx ? munge_ctx_strerror (ctx) : NULL;
    const char *generic = munge_strerror (e);

    if (detail && strcmp (detail, generic) != 0)
        (void)snprintf (buf, size, "munge: %s: %s", generic, detail);
    else
        (void)snprintf (buf, size, "munge: %s", generic);
}

/* The reason as a user reads it.  munged not running (its socket absent,
 * or refusing) is the one reason
 * a user meets first (tracer-run on a laptop), and munge's own words for
 * it ("Socket communication error: Failed to access ...: No such file or
 * directory (Did you start munged?)") say neither that the record is
 * fine nor what to do: this says both, with the socket that was tried.
 */
const char *tr_sign_reason_str (const char *reason, char *buf, size_t size)
{
    char prefix[128];
    const char *detail, *q, *end;
    int n;

    if (!reason)
        return "no reason given";
    n = snprintf (prefix, sizeof (prefix), "munge: %s",
                  munge_strerror (EMUNGE_SOCKET));
    if (n < 0 || (size_t)n >= sizeof (prefix)
        || strncmp (reason, prefix, (size_t)n) != 0 || !buf || size == 0)
        return reason;
    detail = reason + n;
    /* only a socket that is not there, or that nobody answers on: a
     * socket munged serves but the user may not reach (permissions), or
     * a reply that never came, keeps munge's own words, which name it
     */
    if (!strstr (detail, "No such file or directory")
        && !strstr (detail, "Connection refused"))
        return reason;
    if ((q = strchr (detail, '"')) && (end = strchr (q + 1, '"')))
        n = snprintf (buf, size,
                      "munged was not running (no answer on %.*s): start "
                      "munged to have records signed",
                      (int)(end - q - 1), q + 1);
    else
        n = snprintf (buf, size, "munged was not running: start munged to "
                                 "have records signed");
    if (n < 0 || (size_t)n >= size)
        return reason;
    return buf;
}

static void sleep_ms (long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
}

static long elapsed_ms (const struct timespec *t0)
{
    struct timespec t1;

    if (clock_gettime (CLOCK_MONOTONIC, &t1) < 0)
        return SOCKET_RETRY_BUDGET_MS;
    return (t1.tv_sec - t0->tv_sec) * 1000L
           + (t1.tv_nsec - t0->tv_nsec) / 1000000L;
}

static munge_ctx_t ctx_create (const char *munge_socket,
                               int ttl_s,
                               munge_err_t *ep)
{
    munge_ctx_t ctx;

    if (!(ctx = munge_ctx_create ())) {
        *ep = EMUNGE_NO_MEMORY;
        return NULL;
    }
    if (munge_socket
        && (*ep = munge_ctx_set (ctx, MUNGE_OPT_SOCKET, munge_socket))
               != EMUNGE_SUCCESS)
        goto error;
    if (ttl_s > 0
        && (*ep = munge_ctx_set (ctx, MUNGE_OPT_TTL, ttl_s)) != EMUNGE_SUCCESS)
        goto error;
    return ctx;
error:
    munge_ctx_destroy (ctx);
    return NULL;
}

/* A credential for payload into *cred: munged's answer, retried briefly
 * while its socket is missing (a restart); reason says why on failure.
 */
static munge_err_t encode (const char *munge_socket,
                           int ttl_s,
                           const char *payload,
                           char **cred,
                           char *reason,
                           size_t size)
{
    munge_ctx_t ctx;
    munge_err_t e = EMUNGE_SUCCESS;
    struct timespec t0;

    *cred = NULL;
    if (!(ctx = ctx_create (munge_socket, ttl_s, &e))) {
        munge_reason (reason, size, e, NULL);
        return e;
    }
    if (clock_gettime (CLOCK_MONOTONIC, &t0) < 0)
        memset (&t0, 0, sizeof (t0));
    for (int i = 0;; i++) {
        e = munge_encode (cred, ctx, payload, (int)strlen (payload));
        if (e != EMUNGE_SOCKET || i == SOCKET_RETRIES
            || elapsed_ms (&t0) + SOCKET_RETRY_MS > SOCKET_RETRY_BUDGET_MS)
            break;
        sleep_ms (SOCKET_RETRY_MS);
    }
    if (e != EMUNGE_SUCCESS) {
        munge_reason (reason, size, e, ctx);
        free (*cred);
        *cred = NULL;
    }
    munge_ctx_destroy (ctx);
    return e;
}

int tr_sign_record_opts (json_t *rec,
                         const struct tr_sign_opts *opts,
                         tr_error_t *error)
{
    static const struct tr_sign_opts defaults = { NULL, 0 };
    char digest[65];
    char payload[PAYLOAD_LEN + 1];
    char reason[REASON_MAX];
    munge_err_t e;
    char *cred = NULL;
    json_t *sig;

    if (!opts)
        opts = &defaults;
    if (!json_is_object (rec)) {
        errno = EINVAL;
        return tr_errprintf (error, "record is not an object");
    }
    /* signed as the file will print it (a record nested too deeply to
     * round is still signed, and printed in full)
     */
    (void)tr_record_round_reals (rec);
    if (tr_sign_digest (rec, digest) < 0) {
        int saved = errno;
        (void)snprintf (reason, sizeof (reason), "cannot compute digest: %s",
                        strerror (saved));
        return fail_unsigned (rec, saved, error, reason);
    }
    (void)snprintf (payload, sizeof (payload), "%s%s", PAYLOAD_PREFIX, digest);
    if ((e = encode (opts->munge_socket, opts->ttl_s, payload, &cred, reason,
                     sizeof (reason)))
        != EMUNGE_SUCCESS)
        return fail_unsigned (rec, e == EMUNGE_NO_MEMORY ? ENOMEM : EIO, error,
                              reason);
    sig = json_pack ("{s:s, s:s, s:s}", "scheme", "munge-sha256", "digest",
                     digest, "credential", cred);
    free (cred);
    if (!sig || json_object_set_new (rec, "signature", sig) < 0)
        return fail_unsigned (rec, ENOMEM, error, "out of memory");
    return 0;
}

int tr_sign_record (json_t *rec, const char *munge_socket, tr_error_t *error)
{
    struct tr_sign_opts opts = { munge_socket, 0 };

    return tr_sign_record_opts (rec, &opts, error);
}

static bool uid_is_trusted (uid_t uid, const uid_t *trusted, size_t n)
{
    size_t i;

    if (!trusted || n == 0)
        return uid == 0;
    for (i = 0; i < n; i++) {
        if (trusted[i] == uid)
            return true;
    }
    return false;
}

/* Errors that mean "this credential was not made by a munged sharing our
 * key for us", as opposed to "we could not ask munged".
 */
static bool munge_err_is_forgery (munge_err_t e)
{
    switch (e) {
    case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION:
    case EMUNGE_BAD_CIPHER:
    case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP:
    case EMUNGE_BAD_REALM:
    case EMUNGE_CRED_INVALID:
    case EMUNGE_CRED_REWOUND:
    case EMUNGE_CRED_UNAUTHORIZED:
        return true;
    default:
        return false;
    }
}

/* Decide the status of a credential that munged decoded (possibly
 * expired or replayed): who signed it, and does it cover this body.
 */
static tr_sig_status_t check_decoded (munge_err_t e,
                                      const char *payload,
                                      int plen,
                                      uid_t uid,
                                      const char *prefix,
                                      const char *digest,
                                      const char *digest_member,
                                      const uid_t *trusted_uids,
                                      size_t n_trusted,
                                      tr_error_t *error)
{
    size_t prefix_len = strlen (prefix);

    if (!uid_is_trusted (uid, trusted_uids, n_trusted)) {
        tr_errprintf (error,
                      "signature is forged: signed by uid %lu,"
                      " which is not a trusted signer",
                      (unsigned long)uid);
        return TR_SIG_FORGED;
    }
    /* A trusted signer's credential minted for something else (a Slurm
     * auth credential, say) must not pass for a record signature.
     */
    if (!payload || plen != (int)(prefix_len + 64)
        || strncmp (payload, prefix, prefix_len) != 0) {
        tr_errprintf (error, "signature is forged: credential does not carry"
                             " a %s digest",
                      strcmp (prefix, PAYLOAD_PREFIX) ? "live summary"
                                                      : "record");
        return TR_SIG_FORGED;
    }
    if (strncmp (payload + prefix_len, digest, 64) != 0
        || (digest_member && strcmp (digest_member, digest) != 0)) {
        tr_errprintf (error, "%s has been modified after signing"
                             " (digest mismatch)",
                      strcmp (prefix, PAYLOAD_PREFIX) ? "live summary"
                                                      : "record");
        return TR_SIG_TAMPERED;
    }
    if (e == EMUNGE_CRED_EXPIRED) {
        tr_errprintf (error, "signature is authentic; its credential has "
                             "expired (munge: %s; normal for a record read "
                             "after munged's TTL)", munge_strerror (e));
        return TR_SIG_VALID_OLD;
    }
    if (e == EMUNGE_CRED_REPLAYED) {
        tr_errprintf (error, "signature is authentic; its credential was "
                             "decoded before by this munged (munge: %s)",
                      munge_strerror (e));
        return TR_SIG_VALID_OLD;
    }
    tr_error_clear (error);
    return TR_SIG_VALID;
}

/* Decode cred and decide its status against digest (of a payload that
 * starts with prefix; digest_member, if not NULL, must match too).
 */
static tr_sig_status_t decode (const char *cred,
                               const char *munge_socket,
                               const char *prefix,
                               const char *digest,
                               const char *digest_member,
                               const uid_t *trusted_uids,
                               size_t n_trusted,
                               uid_t *signer_uid,
                               tr_error_t *error)
{
    char reason[REASON_MAX];
    munge_ctx_t ctx;
    munge_err_t e = EMUNGE_SUCCESS;
    void *payload = NULL;
    int plen = 0;
    uid_t uid = (uid_t)-1;
    gid_t gid = (gid_t)-1;
    tr_sig_status_t st;

    if (!(ctx = ctx_create (munge_socket, 0, &e))) {
        munge_reason (reason, sizeof (reason), e, NULL);
        tr_errprintf (error, "cannot verify signature: %s", reason);
        return TR_SIG_ERROR;
    }
    e = munge_decode (cred, ctx, &payload, &plen, &uid, &gid);
    if (e == EMUNGE_SUCCESS || e == EMUNGE_CRED_EXPIRED
        || e == EMUNGE_CRED_REPLAYED) {
        if (signer_uid)
            *signer_uid = uid;
        st = check_decoded (e, payload, plen, uid, prefix, digest,
                            digest_member, trusted_uids, n_trusted, error);
    }
    else if (munge_err_is_forgery (e)) {
        const char *detail = munge_ctx_strerror (ctx);
        tr_errprintf (error, "signature is forged: credential invalid (%s)",
                      detail ? detail : munge_strerror (e));
        st = TR_SIG_FORGED;
    }
    else {
        munge_reason (reason, sizeof (reason), e, ctx);
        tr_errprintf (error, "cannot verify signature: %s", reason);
        st = TR_SIG_ERROR;
    }
    free (payload);
    munge_ctx_destroy (ctx);
    return st;
}

tr_sig_status_t tr_sign_verify (json_t *rec,
                                const char *munge_socket,
                                const uid_t *trusted_uids,
                                size_t n_trusted,
                                uid_t *signer_uid,
                                tr_error_t *error)
{
    char digest[65];
    tr_error_t verr;
    json_t *sig;

    if (!json_is_object (rec)) {
        errno = EINVAL;
        tr_errprintf (error, "cannot verify signature: not a record");
        return TR_SIG_ERROR;
    }
    if (!(sig = json_object_get (rec, "signature"))) {
        tr_errprintf (error, "record is unsigned (no signature member)");
        return TR_SIG_UNSIGNED;
    }
    if (tr_record_validate_section ("signature", sig, &verr) < 0) {
        tr_errprintf (error, "signature is malformed: %s", verr.text);
        return TR_SIG_FORGED;
    }
    if (!strcmp (json_string_value (json_object_get (sig, "scheme")), "none")) {
        char words[256];
        const char *reason = json_string_value (json_object_get (sig,
                                                                 "reason"));
        const char *said = tr_sign_reason_str (reason, words, sizeof (words));

        if (said == reason)
            tr_errprintf (error, "record is unsigned (reason: %s)", reason);
        else
            tr_errprintf (error, "record is unsigned: %s", said);
        return TR_SIG_UNSIGNED;
    }
    if (tr_sign_digest (rec, digest) < 0) {
        tr_errprintf (error, "cannot verify signature: %s", strerror (errno));
        return TR_SIG_ERROR;
    }
    return decode (json_string_value (json_object_get (sig, "credential")),
                   munge_socket, PAYLOAD_PREFIX, digest,
                   json_string_value (json_object_get (sig, "digest")),
                   trusted_uids, n_trusted, signer_uid, error);
}

/* Live summaries: the credential's payload is LIVE_PREFIX and the hex
 * SHA-256 of the text it covers.
 */
#define LIVE_PREFIX "tracer-live-v1:"

int tr_sign_text (const char *text,
                  size_t len,
                  const char *munge_socket,
                  char **cred,
                  tr_error_t *error)
{
    char digest[65], payload[sizeof (LIVE_PREFIX) + 64];
    char reason[REASON_MAX];
    munge_err_t e;

    if (!text || !cred) {
        errno = EINVAL;
        return tr_errprintf (error, "nothing to sign");
    }
    *cred = NULL;
    if (hex_sha256 (text, len, digest) < 0)
        return tr_errprintf (error, "cannot compute digest: out of memory");
    (void)snprintf (payload, sizeof (payload), "%s%s", LIVE_PREFIX, digest);
    if ((e = encode (munge_socket, 0, payload, cred, reason, sizeof (reason)))
        != EMUNGE_SUCCESS) {
        errno = e == EMUNGE_NO_MEMORY ? ENOMEM : EIO;
        return tr_errprintf (error, "%s", reason);
    }
    return 0;
}

tr_sig_status_t tr_sign_verify_text (const char *text,
                                     size_t len,
                                     const char *cred,
                                     const char *munge_socket,
                                     const uid_t *trusted_uids,
                                     size_t n_trusted,
                                     uid_t *signer_uid,
                                     tr_error_t *error)
{
    char digest[65];

    if (!text) {
        errno = EINVAL;
        tr_errprintf (error, "cannot verify signature: no text");
        return TR_SIG_ERROR;
    }
    if (!cred || !*cred) {
        tr_errprintf (error, "live summary is unsigned");
        return TR_SIG_UNSIGNED;
    }
    if (hex_sha256 (text, len, digest) < 0) {
        tr_errprintf (error, "cannot verify signature: out of memory");
        return TR_SIG_ERROR;
    }
    return decode (cred, munge_socket, LIVE_PREFIX, digest, NULL, trusted_uids,
                   n_trusted, signer_uid, error);
}

const char *tr_sign_status_str (tr_sig_status_t st)
{
    switch (st) {
    case TR_SIG_VALID:
        return "valid";
    case TR_SIG_VALID_OLD:
        return "valid-old";
    case TR_SIG_UNSIGNED:
        return "unsigned";
    case TR_SIG_TAMPERED:
        return "tampered";
    case TR_SIG_FORGED:
        return "forged";
    case TR_SIG_ERROR:
        return "error";
    }
    return "unknown";
}
