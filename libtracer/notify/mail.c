/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Mail plumbing: what a MailProg notification is about, addresses, a
 * MIME message, the stall notice tracerd sends, and a sendmail-compatible
 * program run without a shell.  Everything that came from a record or
 * from the job's environment is data, never markup or a command:
 * recipients go after "--", and a job's name (it reaches us in Slurm's
 * subject too) is never a reason to send nothing: the subject is made
 * one line and every control character, bidirectional override or
 * line separator becomes a visible escape (tr_strbuf_printable's "\n",
 * "\x1b", "\u202e").  The summaries themselves are rendered in
 * libtracer/view/mail_summary.c.
 */
#include "config.h"


#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mail.h"
#include "libtracer/judge/evidence.h"
#include "libtracer/record/when.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/units.h"

/* ---------------------------------------------------------------------
 * What the notification is about
 */

static const char *env_get (char *const *env, const char *key)
{
    size_t n = strlen (key);

    for (size_t i = 0; env && env[i]; i++)
        if (!strncmp (env[i], key, n) && env[i][n] == '=')
            return env[i] + n + 1;
    return NULL;
}

/* Copy s into buf when it fits and is free of control characters. */
static void set_field (char *buf, size_t size, const char *s)
{
    size_t n;

    if (!s)
        return;
    n = strlen (s);
    if (n >= size)
        return;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return;
    memcpy (buf, s, n + 1);
}

/* The word after "key" in the subject, up to a space or comma. */
static void subject_word (const char *subject, const char *key, char *buf,
                          size_t size)
{
    const char *p = strstr (subject, key);
    size_t n;

    if (!p)
        return;
    p += strlen (key);
    n = strcspn (p, " ,");
    if (n == 0 || n >= size)
        return;
    memcpy (buf, p, n);
    buf[n] = '\0';
}

/* Slurm's mail types (agent.c _mail_type_str, 22.05); Ended and Failed
 * are the ends of a job, the rest pass through.
 */
static const char *const mail_types[] = {
    "Began", "Ended", "Failed", "Requeued", "Reached time limit",
    "Reached 90% of time limit", "Reached 80% of time limit",
    "Reached 50% of time limit", "Invalid dependency", "StageOut",
    NULL,
};

static bool id_ok (const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || *s == '_' || *s == '+'))
            return false;
    return true;
}

int tr_mail_event_parse (struct tr_mail_event *ev,
                         const char *subject,
                         char *const *env,
                         tr_error_t *error)
{
    const char *v;
    char word[64] = "";

    memset (ev, 0, sizeof (*ev));
    ev->exit_code = -1;
    if (!subject)
        subject = "";

    set_field (ev->job_id, sizeof (ev->job_id), env_get (env, "SLURM_JOB_ID"));
    set_field (ev->type, sizeof (ev->type),
               env_get (env, "SLURM_JOB_MAIL_TYPE"));
    set_field (ev->state, sizeof (ev->state),
               env_get (env, "SLURM_JOB_STATE"));
    set_field (ev->name, sizeof (ev->name), env_get (env, "SLURM_JOB_NAME"));
    set_field (ev->run_time, sizeof (ev->run_time),
               env_get (env, "SLURM_JOB_RUN_TIME"));
    set_field (ev->cluster, sizeof (ev->cluster),
               env_get (env, "SLURM_CLUSTER_NAME"));
    if ((v = env_get (env, "SLURM_JOB_EXIT_CODE_MAX"))) {
        char *end;
        long x;

        errno = 0;
        x = strtol (v, &end, 10);
        if (!errno && end != v && !*end && x >= 0 && x < 256)
            ev->exit_code = x;
    }

    /* The subject: "Slurm [Array Task |Array Summary ]Job_id=ID [(RAW) ]
     * Name=NAME TYPE, ..., STATE, ExitCode N"
     */
    if (!*ev->job_id) {
        const char *raw = strstr (subject, "Job_id=");

        subject_word (subject, "Job_id=", word, sizeof (word));
        /* an array task's raw id follows the id directly: "5_2 (7)" */
        if (raw)
            raw += strlen ("Job_id=") + strlen (word);
        if (raw && *word && !strncmp (raw, " (", 2) && raw[2] >= '0'
            && raw[2] <= '9') {
            char id[64] = "";

            subject_word (raw, " (", id, sizeof (id));
            id[strcspn (id, ")")] = '\0';
            set_field (ev->job_id, sizeof (ev->job_id), id);
        }
        else if (id_ok (word))
            set_field (ev->job_id, sizeof (ev->job_id), word);
    }
    if (!*ev->type)
        for (const char *const *t = mail_types; *t; t++) {
            char key[64];

            snprintf (key, sizeof (key), " %s", *t);
            if ((v = strstr (subject, key))
                && (v[strlen (key)] == ',' || v[strlen (key)] == '\0')) {
                set_field (ev->type, sizeof (ev->type), *t);
                break;
            }
        }
    if (!*ev->state) {
        /* ", STATE, ExitCode N" */
        const char *ec = strstr (subject, ", ExitCode ");

        if (ec) {
            const char *p = ec;
            char st[32];

            while (p > subject && p[-1] != ',' && p[-1] != ' ')
                p--;
            if ((size_t)(ec - p) < sizeof (st)) {
                memcpy (st, p, (size_t)(ec - p));
                st[ec - p] = '\0';
                set_field (ev->state, sizeof (ev->state), st);
            }
            if (ev->exit_code < 0) {
                char *end;
                long x;

                errno = 0;
                x = strtol (ec + 11, &end, 10);
                if (!errno && end != ec + 11 && x >= 0 && x < 256)
                    ev->exit_code = x;
            }
        }
    }
    if (!*ev->run_time)
        subject_word (subject, "Run time ", ev->run_time,
                      sizeof (ev->run_time));

    ev->array_summary = strstr (subject, "Slurm Array Summary ") != NULL;
    if (ev->array_summary) {
        const char *a = env_get (env, "SLURM_ARRAY_JOB_ID");
        char id[64] = "";

        if (a)
            set_field (id, sizeof (id), a);
        else {
            subject_word (subject, "Job_id=", id, sizeof (id));
            id[strcspn (id, "_")] = '\0';
        }
        if (!*id || !id_ok (id))
            ev->array_summary = false;
        else
            snprintf (ev->select, sizeof (ev->select), "%s_*", id);
    }
    if (!*ev->job_id || !id_ok (ev->job_id)) {
        *ev->job_id = '\0';
        errno = EINVAL;
        return tr_errprintf (error, "the notification names no job");
    }
    if (!ev->array_summary)
        snprintf (ev->select, sizeof (ev->select), "%s", ev->job_id);
    ev->end = !strcmp (ev->type, "Ended") || !strcmp (ev->type, "Failed");

    /* sbatch --tracer[=SPEC] reaches MailProg as the SPANK job-control
     * environment; an explicit "off" is an opt-out
     */
    v = env_get (env, "SPANK__SLURM_SPANK_OPTION_tracer_tracer");
    ev->traced = v && strcmp (v, "off") && strcmp (v, "no")
                 && strcmp (v, "0") && strcmp (v, "false");
    return 0;
}

bool tr_mail_address_ok (const char *addr)
{
    size_t n;

    if (!addr || addr[0] == '-' || (n = strlen (addr)) == 0 || n > 256)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)addr[i] <= 0x20 || (unsigned char)addr[i] >= 0x7f)
            return false;
    return true;
}

/* ---------------------------------------------------------------------
 * MIME
 */

int tr_mail_base64 (struct tr_strbuf *out, const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
                              "wxyz0123456789+/";
    const unsigned char *p = data;
    char line[80];
    size_t col = 0;

    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        size_t n = len - i < 3 ? len - i : 3;

        if (n > 1)
            v |= (uint32_t)p[i + 1] << 8;
        if (n > 2)
            v |= p[i + 2];
        line[col++] = tab[(v >> 18) & 63];
        line[col++] = tab[(v >> 12) & 63];
        line[col++] = n > 1 ? tab[(v >> 6) & 63] : '=';
        line[col++] = n > 2 ? tab[v & 63] : '=';
        if (col == 76) {
            line[col++] = '\n';
            if (tr_strbuf_append (out, line, col) < 0)
                return -1;
            col = 0;
        }
    }
    if (col) {
        line[col++] = '\n';
        if (tr_strbuf_append (out, line, col) < 0)
            return -1;
    }
    return 0;
}

static bool single_line (const char *s)
{
    return s && !strpbrk (s, "\r\n");
}

static bool ascii (const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x7f)
            return false;
    return true;
}

/* s with what tr_strbuf_printable escapes made visible; with
 * keep_lines, a text part's own line ends (LF, or CR LF) and tabs stay
 * as they are.  A new string, or NULL with errno = ENOMEM.
 */
static char *safe_text (const char *s, bool keep_lines)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;

    while (*s) {
        size_t n = keep_lines ? strcspn (s, "\n\t") : strlen (s);
        size_t seg = n;

        /* CR LF is a line end too */
        if (keep_lines && s[n] == '\n' && n > 0 && s[n - 1] == '\r')
            seg--;
        if (seg > 0) {
            char *part = strndup (s, seg);
            int rc = part ? tr_strbuf_printable (&sb, part) : -1;

            free (part);
            if (rc < 0)
                goto nomem;
        }
        s += n;
        if (*s) {
            if (tr_strbuf_append (&sb, s, 1) < 0)
                goto nomem;
            s++;
        }
    }
    if (!tr_strbuf_str (&sb) && tr_strbuf_puts (&sb, "") < 0)
        goto nomem;
    return tr_strbuf_steal (&sb);
nomem:
    tr_strbuf_free (&sb);
    errno = ENOMEM;
    return NULL;
}

/* Subject: as it is when ASCII and short, else RFC 2047 encoded words of
 * at most 39 bytes (52 characters of base64: every line, the first with
 * "Subject:", stays within RFC 2047's 76), cut between UTF-8 characters.
 * s is one line already (safe_text).  A subject that holds "=?" is
 * encoded too, so that a job named like an encoded word is shown as it
 * was typed, never decoded by the reader's mail program.
 */
static int put_subject (tr_strbuf_t *sb, const char *s)
{
    size_t len = strlen (s), i = 0;

    if (ascii (s) && len <= 900 && !strstr (s, "=?"))
        return tr_strbuf_printf (sb, "Subject: %s\n", s);
    if (tr_strbuf_puts (sb, "Subject:") < 0)
        return -1;
    while (i < len) {
        size_t n = len - i > 39 ? 39 : len - i;
        tr_strbuf_t enc = { 0 };
        char *e;

        while (i + n < len && n > 1
               && ((unsigned char)s[i + n] & 0xc0) == 0x80)
            n--;
        if (tr_mail_base64 (&enc, s + i, n) < 0)
            return tr_strbuf_free (&enc), -1;
        e = tr_strbuf_steal (&enc);
        if (!e)
            return -1;
        e[strcspn (e, "\n")] = '\0';
        if (tr_strbuf_printf (sb, " =?UTF-8?B?%s?=\n", e) < 0)
            return free (e), -1;
        free (e);
        i += n;
    }
    return 0;
}

char *tr_mail_compose (const struct tr_mail_msg *m,
                       time_t now,
                       size_t *len,
                       tr_error_t *error)
{
    tr_strbuf_t sb = { 0 };
    char date[64], outer[64], inner[64];
    char *subject = NULL, *text = NULL, *html = NULL;
    struct tm tm;
    uint64_t h;
    bool mixed = m->attach != NULL, alt = m->html != NULL;
    int e = 0; /* -1 once an append failed (out of memory) */

    /* The subject, the text and the HTML hold what a job controls (its
     * name, in Slurm's subject too): made safe here rather than refused,
     * so that Slurm's notification always goes out.
     */
    if (!m->text || !m->subject
        || (m->from && *m->from && !tr_mail_address_ok (m->from))
        || (m->attach_name && (!single_line (m->attach_name)
                               || strpbrk (m->attach_name, "\"\\")))
        || (m->attach && (!m->attach_name || !m->attach_type))
        || m->nto == 0) {
        errno = EINVAL;
        tr_errprintf (error, "a mail header would not be a single line, or "
                      "a part is missing");
        return NULL;
    }
    for (size_t i = 0; i < m->nto; i++)
        if (!tr_mail_address_ok (m->to[i])) {
            errno = EINVAL;
            tr_errprintf (error, "'%s' is not a usable address", m->to[i]);
            return NULL;
        }
    if (!(subject = safe_text (m->subject, false))
        || !(text = safe_text (m->text, true))
        || (m->html && !(html = safe_text (m->html, true)))) {
        free (subject);
        free (text);
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    localtime_r (&now, &tm);
    strftime (date, sizeof (date), "%a, %d %b %Y %H:%M:%S %z", &tm);
    /* Boundaries start "=_": never in base64, and checked against the
     * 8-bit text
     */
    h = tr_str_hash64 (text, strlen (text)) ^ (uint64_t)now
        ^ ((uint64_t)getpid () << 32);
    for (int k = 0;; k++) {
        snprintf (outer, sizeof (outer), "=_tracer_m%016llx%d",
                  (unsigned long long)h, k);
        snprintf (inner, sizeof (inner), "=_tracer_a%016llx%d",
                  (unsigned long long)h, k);
        if (!strstr (text, outer) && !strstr (text, inner))
            break;
    }

    if (m->from && *m->from)
        e |= tr_strbuf_printf (&sb, "From: %s\n", m->from);
    e |= tr_strbuf_puts (&sb, "To: ");
    for (size_t i = 0; i < m->nto; i++)
        e |= tr_strbuf_printf (&sb, "%s%s", i ? ", " : "", m->to[i]);
    e |= tr_strbuf_puts (&sb, "\n");
    e |= put_subject (&sb, subject);
    e |= tr_strbuf_printf (&sb, "Date: %s\nMIME-Version: 1.0\n"
                      "Auto-Submitted: auto-generated\n", date);
    if (m->job_id && single_line (m->job_id) && ascii (m->job_id)
        && tr_text_is_printable (m->job_id))
        e |= tr_strbuf_printf (&sb, "X-Tracer-Job: %s\n", m->job_id);
    if (mixed)
        e |= tr_strbuf_printf (&sb, "Content-Type: multipart/mixed; "
                          "boundary=\"%s\"\n\nThis is a MIME message.\n\n"
                          "--%s\n", outer, outer);
    if (alt)
        e |= tr_strbuf_printf (&sb, "Content-Type: multipart/alternative; "
                          "boundary=\"%s\"\n\n%s--%s\n", inner,
                          mixed ? "" : "This is a MIME message.\n\n", inner);
    e |= tr_strbuf_puts (&sb, "Content-Type: text/plain; charset=utf-8\n"
                    "Content-Transfer-Encoding: 8bit\n\n");
    /* 8-bit lines must stay under 998 bytes: cut longer ones */
    for (const char *p = text; *p;) {
        size_t n = strcspn (p, "\n");
        size_t take = n > 900 ? 900 : n;

        /* never inside a UTF-8 character */
        while (take < n && take > 1 && ((unsigned char)p[take] & 0xc0) == 0x80)
            take--;

        e |= tr_strbuf_append (&sb, p, take);
        e |= tr_strbuf_puts (&sb, "\n");
        p += take;
        if (take == n && *p == '\n')
            p++;
    }
    if (alt) {
        e |= tr_strbuf_printf (&sb, "\n--%s\nContent-Type: text/html; "
                          "charset=utf-8\nContent-Transfer-Encoding: "
                          "base64\n\n", inner);
        e |= tr_mail_base64 (&sb, html, strlen (html));
        e |= tr_strbuf_printf (&sb, "\n--%s--\n", inner);
    }
    if (mixed) {
        e |= tr_strbuf_printf (&sb, "\n--%s\nContent-Type: %s; charset=utf-8; "
                          "name=\"%s\"\nContent-Disposition: attachment; "
                          "filename=\"%s\"\nContent-Transfer-Encoding: "
                          "base64\n\n", outer, m->attach_type,
                          m->attach_name, m->attach_name);
        e |= tr_mail_base64 (&sb, m->attach, m->attach_len);
        e |= tr_strbuf_printf (&sb, "\n--%s--\n", outer);
    }
    free (subject);
    free (text);
    free (html);
    if (e < 0 || !tr_strbuf_str (&sb)) {
        tr_strbuf_free (&sb);
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    *len = sb.len;
    return tr_strbuf_steal (&sb);
}

/* ---------------------------------------------------------------------
 * The notice of a stalled step
 */

int tr_mail_user_address (char *buf, size_t size, const char *user,
                          const char *domain)
{
    bool at = !domain || !*domain || strchr (user, '@');
    int n = snprintf (buf, size, "%s%s%s", user, at ? "" : "@",
                      at ? "" : domain);

    if (n < 0 || (size_t)n >= size) {
        errno = ERANGE;
        return -1;
    }
    if (!tr_mail_address_ok (buf)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* How each scheduler's user cancels a job. */
static const char *cancel_command (const char *scheduler)
{
    if (!strcmp (scheduler, "slurm"))
        return "scancel";
    if (!strcmp (scheduler, "pbs") || !strcmp (scheduler, "torque"))
        return "qdel";
    if (!strcmp (scheduler, "lsf"))
        return "bkill";
    return NULL;
}

char *tr_mail_stall_text (const json_t *rec, char *subject, size_t size)
{
    json_t *id = json_object_get (rec, "identity");
    json_t *pg = json_object_get (rec, "progress");
    json_t *lines, *line;
    const char *job = json_string_value (json_object_get (id, "job_id"));
    const char *stepid = json_string_value (json_object_get (id, "step_id"));
    const char *node = json_string_value (json_object_get (id, "node"));
    const char *name = json_string_value (json_object_get (id, "job_name"));
    const char *sched = json_string_value (json_object_get (id, "scheduler"));
    const char *cancel = cancel_command (sched ? sched : "");
    json_t *since = json_object_get (pg, "since_unix_ms");
    double idle = json_number_value (json_object_get (pg, "stalled_s"));
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char dur[32], when[64] = "";
    size_t i;
    bool bad = false;
    int n;

    if (!json_is_true (json_object_get (pg, "stalled")) || !job || !stepid
        || !node) {
        errno = EINVAL;
        return NULL;
    }
    tr_units_duration (dur, sizeof (dur), idle);
    if (json_is_integer (since)) {
        time_t t = (time_t)(json_integer_value (since) / 1000);
        struct tm tm;

        if (localtime_r (&t, &tm))
            strftime (when, sizeof (when), "%Y-%m-%d %H:%M:%S %Z", &tm);
    }
    n = snprintf (subject, size,
                  "tracer: job %s step %s on %s has made no progress for %s",
                  job, stepid, node, dur);
    if (n < 0 || (size_t)n >= size) {
        errno = ERANGE;
        return NULL;
    }
    bad |= tr_strbuf_printf (&sb, "Job %s", job) < 0;
    if (name && *name)
        bad |= tr_strbuf_puts (&sb, " (") < 0
               || tr_strbuf_printable (&sb, name) < 0
               || tr_strbuf_puts (&sb, ")") < 0;
    bad |= tr_strbuf_printf (&sb, ", step %s on node %s, has made no "
                             "progress for %s:\nits processes used no CPU "
                             "and read or wrote nothing%s%s.\n",
                             stepid, node, dur, *when ? " since " : "",
                             when) < 0;
    /* the processes as the evidence engine writes them for a notice */
    if (!(lines = tr_evidence_stalled (rec, TR_EVIDENCE_NOTICE)))
        bad = true;
    if (json_array_size (lines) > 0)
        bad |= tr_strbuf_puts (&sb, "\nWhat they are blocked in (state, "
                               "wait channel):\n") < 0;
    json_array_foreach (lines, i, line)
        bad |= tr_strbuf_printf (&sb, "  %s\n", json_string_value (line)) < 0;
    json_decref (lines);
    bad |= tr_strbuf_puts (&sb, "\nNothing is done to the job: it goes on "
                           "until it ends or reaches its time limit.\n") < 0;
    if (cancel)
        bad |= tr_strbuf_printf (&sb, "If it is stuck, cancel it: %s %s\n",
                                 cancel, job) < 0;
    bad |= tr_strbuf_puts (&sb, "\nThis notice comes once per step "
                           "(mail.on_stall in tracer.yaml).\n") < 0;
    if (bad) {
        tr_strbuf_free (&sb);
        errno = ENOMEM;
        return NULL;
    }
    return tr_strbuf_steal (&sb);
}

/* ---------------------------------------------------------------------
 * Sending
 */

int tr_mail_send (const char *path,
                  const char *from,
                  const char *const *to,
                  size_t nto,
                  const char *msg,
                  size_t len,
                  double timeout_s,
                  tr_error_t *error)
{
    const char **argv;
    char *const envp[] = { (char *)"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                           NULL };
    int sv[2], status = 0, saved;
    size_t ac = 0, off = 0;
    double deadline = tr_when_monotonic () + timeout_s;
    pid_t pid, w = 0;

    if (!path || path[0] != '/' || nto == 0) {
        errno = EINVAL;
        return tr_errprintf (error, "no sendmail program or no recipient");
    }
    for (size_t i = 0; i < nto; i++)
        if (!tr_mail_address_ok (to[i])) {
            errno = EINVAL;
            return tr_errprintf (error, "'%s' is not a usable address",
                                 to[i]);
        }
    if (from && *from && !tr_mail_address_ok (from)) {
        errno = EINVAL;
        return tr_errprintf (error, "'%s' is not a usable sender", from);
    }
    /* what exec would say, said before anything is started */
    if (access (path, X_OK) < 0)
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    if (!(argv = calloc (nto + 7, sizeof (*argv)))) {
        errno = ENOMEM;
        return tr_errprintf (error, "out of memory");
    }
    argv[ac++] = path;
    argv[ac++] = "-i";
    if (from && *from) {
        argv[ac++] = "-f";
        argv[ac++] = from;
    }
    argv[ac++] = "--";
    for (size_t i = 0; i < nto; i++)
        argv[ac++] = to[i];
    argv[ac] = NULL;

    /* A socket, not a pipe: send (MSG_NOSIGNAL) gets EPIPE rather than a
     * SIGPIPE when the program exits early, and the library leaves the
     * caller's signal dispositions alone
     */
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        saved = errno;
        free (argv);
        errno = saved;
        return tr_errprintf (error, "socketpair: %s", strerror (errno));
    }
    if ((pid = fork ()) < 0) {
        saved = errno;
        close (sv[0]);
        close (sv[1]);
        free (argv);
        errno = saved;
        return tr_errprintf (error, "fork: %s", strerror (errno));
    }
    if (pid == 0) {
        shutdown (sv[1], SHUT_WR);
        /* its output ends up next to ours (slurmctld logs MailProg's) */
        if (dup2 (sv[1], STDIN_FILENO) < 0
            || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
            _exit (127);
        closefrom (STDERR_FILENO + 1);
        /* its own group, so that a timeout stops whatever it started */
        setpgid (0, 0);
        execve (path, (char *const *)argv, envp);
        free (argv);
        _exit (127);
    }
    close (sv[1]);
    free (argv);
    shutdown (sv[0], SHUT_RD);
    while (off < len) {
        struct pollfd pfd = { .fd = sv[0], .events = POLLOUT };
        double left = deadline - tr_when_monotonic ();
        ssize_t n;

        if (left <= 0 || poll (&pfd, 1, (int)(left * 1000) + 1) == 0) {
            errno = ETIMEDOUT;
            break;
        }
        n = send (sv[0], msg + off, len - off,
                  MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            break;
        }
        off += (size_t)n;
    }
    saved = off < len ? errno : 0;
    close (sv[0]);
    while ((w = waitpid (pid, &status, WNOHANG)) == 0 && tr_when_monotonic () < deadline)
        usleep (20000);
    if (w == 0) {
        kill (-pid, SIGKILL);
        kill (pid, SIGKILL);
        waitpid (pid, &status, 0);
        errno = ETIMEDOUT;
        return tr_errprintf (error, "%s did not finish within %.0f s (killed)",
                             path, timeout_s);
    }
    if (w < 0) {
        saved = errno;
        errno = saved;
        return tr_errprintf (error, "waitpid: %s", strerror (errno));
    }
    if (WIFEXITED (status) && WEXITSTATUS (status) == 127 && saved) {
        errno = saved;
        return tr_errprintf (error, "%s could not be run", path);
    }
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        errno = EIO;
        if (WIFSIGNALED (status))
            return tr_errprintf (error, "%s was killed by signal %d", path,
                                 WTERMSIG (status));
        return tr_errprintf (error, "%s exited with %d%s", path,
                             WEXITSTATUS (status),
                             WEXITSTATUS (status) == 127
                                 ? " (could it be run?)" : "");
    }
    if (saved) {
        errno = saved;
        return tr_errprintf (error, "writing to %s: %s", path,
                             strerror (saved));
    }
    return 0;
}
