/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_MAIL_H
#define TRACER_MAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/util/error.h"
#include "libtracer/record/stepsum.h"

/* Mail for tracer-mail (Slurm's MailProg) and tracer-report --digest:
 * what a Slurm notification is about, whether a summary is worth
 * sending, the summary itself in text and HTML, a MIME message, and
 * handing it to a sendmail-compatible program without a shell.
 */

/* What slurmctld's notification is about, from the environment it
 * gives MailProg (SLURM_JOB_*, SPANK_*; FACTS: agent.c _mail_proc) and,
 * where that is missing (run by hand), from the subject.
 */
struct tr_mail_event {
    char job_id[64];     /* the job the records are filed under */
    char select[80];     /* what to look up: job_id, or "A_*" for an
                            array summary */
    char type[64];       /* "Began", "Ended", "Failed", ... */
    char state[32];      /* "COMPLETED", "OUT_OF_MEMORY", ... or "" */
    char name[256];      /* job name, or "" */
    char run_time[32];   /* "HH:MM:SS" as Slurm says it, or "" */
    char cluster[64];    /* SLURM_CLUSTER_NAME, or "" */
    long exit_code;      /* -1: unknown */
    bool end;            /* an end-of-job notification (Ended, Failed) */
    bool array_summary;
    bool traced;         /* the job asked for tracing (--tracer given) */
};

/* Fill ev from subject and the environment env (NULL-terminated
 * "KEY=VALUE" strings; NULL: none).  Returns 0, or -1 with EINVAL when
 * neither names a job (the notification is then passed on as it is).
 */
int tr_mail_event_parse (struct tr_mail_event *ev,
                         const char *subject,
                         char *const *env,
                         tr_error_t *error);

/* Is addr usable as a recipient (or sender) on a sendmail command
 * line: 1 to 256 printable ASCII bytes, no white space, not starting
 * with '-'?
 */
bool tr_mail_address_ok (const char *addr);

/* A MIME message.  text is required; html (an alternative) and the
 * attachment may be NULL.  The subject, text and html may hold anything
 * a job controls: control characters (but the text's and html's line
 * ends and tabs), line separators, bidirectional overrides and bytes
 * that are not UTF-8 become visible escapes (tr_strbuf_printable), the
 * subject one line.  The other header values must be single lines
 * (checked).
 */
struct tr_mail_msg {
    const char *from;       /* NULL or "": no From: (the MTA sets it) */
    const char *const *to;  /* recipients, each tr_mail_address_ok */
    size_t nto;
    const char *subject;    /* UTF-8; encoded (RFC 2047) when not ASCII */
    const char *text;
    const char *html;
    const char *attach;     /* attachment bytes, attach_len long */
    size_t attach_len;
    const char *attach_name;
    const char *attach_type; /* e.g. "text/html" */
    const char *job_id;     /* X-Tracer-Job:, or NULL */
};

/* Compose m into a new string (LF line ends, as sendmail reads it on
 * standard input), *len its length.  now is the Date:.  NULL with
 * errno (EINVAL: no subject or text, an attachment name with a line
 * break, or a bad address; ENOMEM).  What the subject holds is never a
 * reason to fail.
 */
char *tr_mail_compose (const struct tr_mail_msg *m,
                       time_t now,
                       size_t *len,
                       tr_error_t *error);

/* Hand msg to the sendmail-compatible program at path: argv is
 * {path, "-i", ["-f", from,] "--", to...}, never a shell; its
 * environment only PATH; its output goes to our stderr.  Waits at most
 * timeout_s for it, then kills it.  Returns 0 when it exited 0, else -1
 * with errno (ETIMEDOUT, EIO for a non-zero exit, or what exec said).
 */
int tr_mail_send (const char *path,
                  const char *from,
                  const char *const *to,
                  size_t nto,
                  const char *msg,
                  size_t len,
                  double timeout_s,
                  tr_error_t *error);

/* The address of user: user@domain when domain is not empty and user
 * has no '@' of its own, else user; into buf (size bytes).  Returns 0,
 * or -1 with errno (ERANGE: too long; EINVAL: not usable on a sendmail
 * command line, tr_mail_address_ok).
 */
int tr_mail_user_address (char *buf, size_t size, const char *user,
                          const char *domain);

/* The notice a step's user gets when the step stalls (mail.on_stall),
 * from the step's live record rec (tr_step_live_record: identity and a
 * "progress" member that says stalled): its subject into subject (size
 * bytes) and its text, a new string.  Names the job, step, node, since
 * when nothing moved and what each process is blocked in, and says that
 * nothing is done to the job and how to cancel it.  NULL with errno
 * (EINVAL: rec is not a stalled step's; ENOMEM).
 */
char *tr_mail_stall_text (const json_t *rec, char *subject, size_t size);

/* Base64 of data (RFC 2045: lines of 76 characters) appended to out.
 * 0, or -1 with errno = ENOMEM.
 */
struct tr_strbuf;
int tr_mail_base64 (struct tr_strbuf *out, const void *data, size_t len);

#endif /* !TRACER_MAIL_H */
