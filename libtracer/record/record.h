/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_RECORD_H
#define TRACER_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "libtracer/util/error.h"

/* Record format v1: one JSON object per (job, step, node), documented
 * field by field in doc/record-format.md.  Records are handled as jansson
 * objects; this module creates the skeleton, validates strictly, and
 * produces the canonical serialization that signatures cover.
 */
#define TR_RECORD_FORMAT "tracer-record"
#define TR_RECORD_VERSION 1

/* Upper bound on a record file; larger input is refused unread. */
#define TR_RECORD_MAX_BYTES (4 * 1024 * 1024)

/* Maximum nesting depth accepted by the parser. */
#define TR_RECORD_MAX_DEPTH 16

/* A new record skeleton: format, version, kind ("final" or "snapshot"),
 * and empty identity, request, host, cgroup, time, summary, tools,
 * series, tags, outcome and collector members.  Returns a new reference,
 * or NULL with errno = ENOMEM (or EINVAL for an unknown kind).
 * The skeleton has the right shape but is not yet valid: the caller
 * fills identity, host, cgroup.attach, time.start_unix_ms (and
 * end_unix_ms for a final record), summary.cpu, summary.memory,
 * series.interval_s and collector before tr_record_validate accepts it.
 * summary.samples starts at 0, outcome at {"state": "unknown",
 * "complete": false, "tasks": []}.
 */
json_t *tr_record_create (const char *kind);

/* Validate a whole record against the v1 schema: required members, types,
 * ranges, path-safe identity strings (job_id, step_id, node: see
 * tr_record_id_is_safe), bounded string lengths and array sizes, no
 * unknown members.  Returns 0, or -1 with errno = EINVAL and a message
 * naming the member ("identity.job_id: expected a string").
 */
int tr_record_validate (json_t *rec, tr_error_t *error);

/* Validate one section ("identity", "request", "tags", ...) on its own,
 * as received from a hook before the record exists.
 */
int tr_record_validate_section (const char *section,
                                json_t *obj,
                                tr_error_t *error);

/* Parse and validate a record from text.  Input longer than
 * TR_RECORD_MAX_BYTES, invalid UTF-8, trailing garbage, nesting deeper
 * than TR_RECORD_MAX_DEPTH and schema violations are errors (EINVAL,
 * or EFBIG for size).  Returns a new reference.
 */
json_t *tr_record_parse (const char *buf, size_t len, tr_error_t *error);

/* Read and parse a record file.  The file is opened with O_NOFOLLOW
 * (a symlink is refused with ELOOP), must be a regular file, and is
 * bounded by TR_RECORD_MAX_BYTES.  error->file is set to 'path'.
 * Returns a new reference.
 */
json_t *tr_record_load (const char *path, tr_error_t *error);

/* The canonical serialization: the record without its "signature"
 * member, compact, keys sorted, non-ASCII escaped.  This is what the
 * signature's digest covers.  Caller must free() the result.
 */
char *tr_record_canonical (json_t *rec);

/* The file serialization (canonical body plus signature, sorted keys,
 * indented, trailing newline; the "series" member on one line).  Reals
 * are printed in 15 significant digits when every real in the record
 * reads back as the same double from 15 digits (see
 * tr_record_round_reals), else in 17, so that parsing the file always
 * gives back the record the signature was made for.  Caller must free()
 * the result.
 */
char *tr_record_dumps (json_t *rec);

/* Round every real in rec, in place, to 15 significant digits (DBL_DIG:
 * such a decimal reads back as the same double), so that
 * tr_record_dumps can print the short form.  Done before signing; a
 * record parsed from a file must not be rounded again before its
 * signature is checked.  Returns -1 with errno ELOOP when rec nests too
 * deeply.
 */
int tr_record_round_reals (json_t *rec);

/* Make every string of rec (values, not keys) safe to print on a
 * terminal, in a log or a mail: control characters and the like become
 * visible escapes (tr_strbuf_printable).  For the text a reader shows,
 * after the signature was checked: the record no longer verifies.
 * 0, or -1 with errno = ENOMEM.
 */
int tr_record_printable (json_t *rec);

/* Bring an identity received from a hook or the scheduler within the
 * record's bounds instead of refusing it: every bounded text member
 * (user, group, account, partition, qos, job_name, step_name,
 * array_job_id, het_job_id) that is longer than the record allows is cut
 * at a UTF-8 character boundary, and control characters (below 0x20,
 * 0x7f) become '?'.  Each member so changed is named in the identity's
 * "truncated" array (sorted, once).  Path-safe members (cluster, job_id,
 * step_id, node) are left to validation.  Returns the number of members
 * changed, or -1 with errno (EINVAL: not an object; ENOMEM).
 */
int tr_record_clip_identity (json_t *identity);

/* True if s is usable as one path component of the store: 1..128 bytes
 * of [A-Za-z0-9._+\[\]-], not starting with '.', not "." or "..".
 */
bool tr_record_id_is_safe (const char *s);

/* Borrowed accessors for common identity members (NULL when absent).
 * A NULL section looks the key up at the top level ("kind").
 */
const char *tr_record_get_str (json_t *rec, const char *section,
                               const char *key);

#endif /* !TRACER_RECORD_H */
