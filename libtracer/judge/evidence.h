/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_EVIDENCE_H
#define TRACER_EVIDENCE_H

#include <jansson.h>

/* What a record says beyond its figures, as every renderer shows it
 * (the text and HTML views of a step, the stall notice): its eBPF file
 * evidence (failed opens, I/O errors, the files most read and written),
 * its kernel log events and whether it stalled.  The renderers only lay
 * out what these functions say.
 */

/* How a stalled process is written: the views' "cat[42] state S in
 * anon_pipe_read", or the stall notice's "cat (pid 42)  S  anon_pipe_read"
 * (control characters escaped, "?" for what is missing and "-" for no
 * wait channel).
 */
typedef enum {
    TR_EVIDENCE_VIEW,
    TR_EVIDENCE_NOTICE,
} tr_evidence_form_t;

/* The record's evidence: an array of {"label", "text", "items":
 * [line...]} in the job view's order (empty when there is nothing).
 * Returns a new reference; NULL with errno = ENOMEM.
 */
json_t *tr_evidence_record (json_t *rec);

/* The processes of the record's progress member, one line each in form
 * (empty when it lists none).  Returns a new reference; NULL with
 * errno = ENOMEM.
 */
json_t *tr_evidence_stalled (const json_t *rec, tr_evidence_form_t form);

#endif /* !TRACER_EVIDENCE_H */
