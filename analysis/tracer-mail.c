/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-mail: a drop-in Slurm MailProg.  slurmctld runs it as
 * "MailProg -s SUBJECT USER" (as SlurmUser, no PATH, 120 s to live)
 * when a job's mail is due; the job's state is in SLURM_JOB_* (FACTS
 * §6).  Began and other mid-job mails pass through as they are.  For
 * the end of a job it waits, bounded, for the job's records (the mail
 * is queued before the nodes' epilogs run), then sends a summary: use
 * against request, diagnosis, what to ask for next time, the HTML report
 * attached.  Whatever goes wrong, Slurm's own notification still goes
 * out: a notification is never lost.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/judge/diagnose.h"
#include "libtracer/notify/mail.h"
#include "libtracer/view/mail_summary.h"
#include "libtracer/view/report.h"
#include "libtracer/record/merge.h"
#include "libtracer/record/record.h"
#include "libtracer/record/store.h"
#include "cli.h"
#include "libtracer/record/when.h"

extern char **environ;

/* Slurm kills MailProg after 120 s: everything ends well before */
#define LIFETIME_S 115.0
#define BODY_MAX (1024 * 1024)
#define POLL_S 0.5
/* below this much time left, skip the 30-day history */
#define HISTORY_MIN_LEFT_S 30.0

static double t0;

static double left (void)
{
    return LIFETIME_S - (tr_when_monotonic () - t0);
}

static void say (int prio, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* To syslog (facility mail) and to stderr, which slurmctld logs. */
static void say (int prio, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    syslog (prio, "%s", msg);
    fprintf (stderr, "tracer-mail: %s\n", msg);
}

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: tracer-mail [-c FILE] -s SUBJECT ADDRESS...\n"
             "Slurm's MailProg: send the notification slurmctld asks for, "
             "and for the end\nof a job a summary of what it used from "
             "tracer's records instead.\n\n"
             "  -s SUBJECT          the subject (Slurm's notification)\n"
             "  -c, --config=FILE   configuration file\n"
             "                      (default %s)\n"
             "  -h, --help          show this help and exit\n"
             "  -V, --version       show the version and exit\n\n"
             "The job is taken from SLURM_JOB_ID, SLURM_JOB_MAIL_TYPE, "
             "SLURM_JOB_STATE and\nthe other variables slurmctld sets; "
             "standard input, if any, is the body.\n"
             "Exit status: 0 the mail was handed to mail.sendmail, 1 it "
             "could not be,\n2 usage error.\n",
             tr_conf_default_path ());
}

/* Standard input, when it is not a terminal: Slurm gives none, a person
 * may pipe a body.  Bounded in size and in time.
 */
static char *read_body (void)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char buf[4096];

    if (isatty (STDIN_FILENO))
        return strdup ("");
    for (;;) {
        struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
        ssize_t n;

        if (poll (&pfd, 1, 2000) <= 0)
            break;
        if ((n = read (STDIN_FILENO, buf, sizeof (buf))) <= 0)
            break;
        if (sb.len + (size_t)n > BODY_MAX)
            break;
        if (tr_strbuf_append (&sb, buf, (size_t)n) < 0)
            break;
    }
    if (!tr_strbuf_str (&sb))
        return strdup ("");
    return tr_strbuf_steal (&sb);
}

struct mailer {
    tr_conf_t *conf;
    const char *subject;
    const char *const *to;
    size_t nto;
    char *body;
    struct tr_mail_event ev;
};

static int send_msg (struct mailer *m, const struct tr_mail_msg *msg)
{
    tr_error_t error;
    size_t len;
    char *text = tr_mail_compose (msg, time (NULL), &len, &error);
    double budget = left ();
    int rc;

    if (!text) {
        say (LOG_ERR, "cannot compose the mail: %s", tr_error_str (&error));
        return -1;
    }
    rc = tr_mail_send (m->conf->mail.sendmail, m->conf->mail.from, m->to,
                       m->nto, text, len, budget > 5 ? budget : 5, &error);
    free (text);
    if (rc < 0)
        say (LOG_ERR, "sending to %s: %s", m->to[0], tr_error_str (&error));
    return rc;
}

/* Slurm's notification as it came: the subject, the body from standard
 * input; note (NULL: none) says why there is no summary.
 */
static int pass_through (struct mailer *m, const char *note)
{
    struct tr_mail_msg msg = {
        .from = m->conf->mail.from,
        .to = m->to,
        .nto = m->nto,
        .subject = m->subject,
        .text = m->body,
        .job_id = *m->ev.job_id ? m->ev.job_id : NULL,
    };
    char *text = NULL;
    size_t len = 0;

    /* Slurm's body as it came, then the note wrapped to a mail reader's
     * 80 columns
     */
    if (note) {
        FILE *f = open_memstream (&text, &len);

        if (f) {
            fputs (m->body, f);
            if (*m->body && m->body[strlen (m->body) - 1] != '\n')
                fputc ('\n', f);
            (void)tr_report_wrap (f, note, strlen (note), 80);
            if (fclose (f) == 0)
                msg.text = text;
        }
    }
    if (send_msg (m, &msg) < 0) {
        free (text);
        return EXIT_RUNTIME;
    }
    free (text);
    return EXIT_OK;
}

static int count_one (const char *path, void *arg)
{
    (void)path;
    (*(size_t *)arg)++;
    return 0;
}

/* How many records the job has in the store now. */
static size_t count_records (struct rep *r, struct mailer *m)
{
    const char *root = r->conf->store_path;
    size_t n = 0;

    if (m->ev.array_summary) {
        tr_rowset_t *set = tr_rowset_create ();
        struct tr_query q = { .jobs = r->q.jobs,
                              .from = time (NULL) - 7 * 86400 };

        if (set && rep_collect (r, &q, false, set) == EXIT_OK)
            n = set->n;
        tr_rowset_destroy (set);
    }
    else {
        tr_store_t *store = tr_store_open (root, NULL, NULL);

        if (store)
            tr_store_foreach_job (store, r->cluster, m->ev.job_id,
                                  count_one, &n, NULL);
        tr_store_destroy (store);
    }
    return n;
}

/* Wait until the job's records stop arriving: some came and none for
 * mail.settle, or mail.wait is over.  Returns how many there are.
 */
static size_t wait_records (struct rep *r, struct mailer *m)
{
    const struct tr_conf_mail *c = &r->conf->mail;
    double start = tr_when_monotonic (), changed = start;
    size_t n = 0, last = 0;

    for (;;) {
        double now;

        n = count_records (r, m);
        now = tr_when_monotonic ();
        if (n != last) {
            last = n;
            changed = now;
        }
        if (n > 0 && now - changed >= c->settle_s)
            return n;
        if (now - start >= c->wait_s || left () < 20)
            return n;
        usleep ((useconds_t)(POLL_S * 1e6));
    }
}

static int step_cmp (const void *a, const void *b)
{
    return tr_stepsum_cmp_id (a, b);
}

/* Do the records belong to several jobs (the tasks of an array)? */
static bool array_of_jobs (json_t *recs)
{
    const char *first = NULL;
    json_t *rec;
    size_t i;

    json_array_foreach (recs, i, rec) {
        const char *id = json_string_value (json_object_get (
            json_object_get (rec, "identity"), "job_id"));

        if (!id)
            continue;
        if (first && strcmp (first, id))
            return true;
        first = id;
    }
    return false;
}

/* The job's HTML report, when it is to be attached and fits. */
static char *html_report (struct rep *r, struct rep_history *h, size_t *len,
                          const char **note)
{
    char *buf;

    *len = 0;
    if (!r->conf->mail.attach_report)
        return NULL;
    /* one report shows one job: an array's tasks each have their own */
    if (array_of_jobs (r->recs)) {
        *note = "Each task has its own HTML report: tracer-report -j "
                "JOB_TASK --html -o FILE.";
        return NULL;
    }
    if (!(buf = rep_html (r, h, len))) {
        *note = "The HTML report could not be made.";
        return NULL;
    }
    if ((double)*len > r->conf->mail.attach_max_bytes) {
        free (buf);
        *note = "The HTML report is larger than mail.attach_max and is "
                "not attached.";
        return NULL;
    }
    return buf;
}

static char *memprint (int (*fn) (FILE *, const struct tr_mail_job *),
                       const struct tr_mail_job *j)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    if (!f)
        return NULL;
    if (fn (f, j) < 0) {
        fclose (f);
        free (buf);
        return NULL;
    }
    if (fclose (f) != 0) {
        free (buf);
        return NULL;
    }
    return buf;
}

/* The report URL with %j replaced by the job id. */
static char *report_url (const char *tmpl, const char *job)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;

    if (!tmpl || !*tmpl)
        return NULL;
    for (const char *p = tmpl; *p; p++) {
        if (p[0] == '%' && p[1] == 'j') {
            tr_strbuf_puts (&sb, job);
            p++;
        }
        else
            tr_strbuf_append (&sb, p, 1);
    }
    return tr_strbuf_steal (&sb);
}

static int summarise (struct rep *r, struct mailer *m)
{
    struct rep_history h = { .r = r };
    tr_rowset_t *set = tr_rowset_create ();
    json_t **findings = NULL, **advice = NULL, *rec;
    struct tr_mail_job j = { .ev = &m->ev, .subject = m->subject };
    const char *note = NULL;
    char why[256], attach_name[128], *html_rep = NULL, *text = NULL;
    char *html = NULL, *url = NULL;
    size_t i, html_len = 0;
    int rc = EXIT_RUNTIME;

    if (!set)
        return pass_through (m, "tracer: out of memory; this is Slurm's "
                             "notification.");
    /* user-controlled names reach the mail with control characters
     * escaped
     */
    json_array_foreach (r->recs, i, rec)
        if (tr_record_printable (rec) < 0)
            goto nomem;
    json_array_foreach (r->recs, i, rec) {
        tr_stepsum_t row;

        if (tr_stepsum_from_record (&row, rec, TR_STEPSUM_SIG_VALID, "",
                                    set->pool) < 0
            || tr_rowset_add (set, &row) < 0)
            goto nomem;
    }
    if (tr_rowset_merge_steps (set, NULL) < 0)
        goto nomem;
    qsort (set->rows, set->n, sizeof (set->rows[0]), step_cmp);
    if (!(findings = calloc (set->n + 1, sizeof (*findings)))
        || !(advice = calloc (set->n + 1, sizeof (*advice))))
        goto nomem;
    /* the history behind "next time" is the slow part: only with time */
    if (left () < HISTORY_MIN_LEFT_S)
        h.tried = true;
    for (i = 0; i < set->n; i++) {
        advice[i] = rep_advice (&set->rows[i], &h);
        findings[i] = tr_diagnose_advised (&set->rows[i],
                                           &r->conf->diagnosis, advice[i]);
    }
    j.rows = set->rows;
    j.n = set->n;
    j.findings = findings;
    j.advice = advice;
    if (!tr_mail_worth (&j, &r->conf->mail, why, sizeof (why))) {
        say (LOG_INFO, "job %s: no summary (%s): Slurm's notification sent",
             m->ev.job_id, why);
        rc = pass_through (m, NULL);
        goto out;
    }
    html_rep = html_report (r, &h, &html_len, &note);
    snprintf (attach_name, sizeof (attach_name), "job-%s.html",
              m->ev.job_id);
    j.attachment = html_rep ? attach_name : NULL;
    j.report_note = note;
    j.report_url = url = report_url (r->conf->mail.report_url,
                                     m->ev.job_id);
    text = memprint (tr_mail_summary_text, &j);
    html = memprint (tr_mail_summary_html, &j);
    if (!text) {
        rc = pass_through (m, "tracer: the summary could not be written; "
                           "this is Slurm's notification.");
        goto out;
    }
    {
        struct tr_mail_msg msg = {
            .from = r->conf->mail.from,
            .to = m->to,
            .nto = m->nto,
            .subject = m->subject,
            .text = text,
            .html = html,
            .attach = html_rep,
            .attach_len = html_len,
            .attach_name = attach_name,
            .attach_type = "text/html",
            .job_id = m->ev.job_id,
        };

        if (send_msg (m, &msg) == 0) {
            say (LOG_INFO, "job %s: summary sent to %s (%s, %zu step%s)",
                 m->ev.job_id, m->to[0], why, set->n,
                 set->n == 1 ? "" : "s");
            rc = EXIT_OK;
        }
        else
            rc = pass_through (m, "tracer: the summary could not be "
                               "sent; this is Slurm's notification.");
    }
    goto out;
nomem:
    rc = pass_through (m, "tracer: out of memory; this is Slurm's "
                       "notification.");
out:
    for (i = 0; findings && i < set->n; i++) {
        json_decref (findings[i]);
        json_decref (advice ? advice[i] : NULL);
    }
    free (findings);
    free (advice);
    free (html_rep);
    free (text);
    free (html);
    free (url);
    rep_history_free (&h);
    tr_rowset_destroy (set);
    return rc;
}

static int run (struct mailer *m, bool conf_ok)
{
    struct rep r = { .conf = m->conf, .admin = true };
    tr_error_t error;
    char note[512];
    size_t n;
    int rc;

    if (!conf_ok)
        return pass_through (m, NULL);
    if (tr_mail_event_parse (&m->ev, m->subject, environ, &error) < 0) {
        say (LOG_NOTICE, "%s: passed on as it is", tr_error_str (&error));
        return pass_through (m, NULL);
    }
    if (!m->ev.end)
        return pass_through (m, NULL);
    if (m->conf->mail.summary == TR_MAIL_SUMMARY_NEVER)
        return pass_through (m, NULL);
    r.cluster = *m->ev.cluster ? m->ev.cluster : m->conf->cluster_name;
    r.jobs_arg = m->ev.select;
    if (!(r.recs = json_array ()) || !(r.notes = json_object ())
        || !(r.q.jobs = tr_when_jobsel_parse (m->ev.select, &error))) {
        rc = pass_through (m, NULL);
        goto out;
    }
    /* A job that did not ask to be traced has no records to wait for,
     * unless some already came (srun --tracer inside it)
     */
    if (m->conf->mail.tracing == TR_MAIL_TRACING_OPTIN && !m->ev.traced
        && count_records (&r, m) == 0) {
        rc = pass_through (m, NULL);
        goto out;
    }
    if ((n = wait_records (&r, m)) == 0) {
        say (LOG_WARNING, "job %s: no records within %.0f s: Slurm's "
             "notification sent", m->ev.job_id, m->conf->mail.wait_s);
        snprintf (note, sizeof (note),
                  "tracer: no usage records of job %s arrived within %.0f "
                  "s, so this is Slurm's notification unchanged.\n"
                  "(Later: tracer-report -j %s)", m->ev.select,
                  m->conf->mail.wait_s, m->ev.select);
        rc = pass_through (m, note);
        goto out;
    }
    if (rep_load_jobs (&r) != EXIT_OK || json_array_size (r.recs) == 0) {
        snprintf (note, sizeof (note),
                  "tracer: the records of job %s could not be used (see "
                  "tracer-report -j %s), so this is Slurm's notification "
                  "unchanged.", m->ev.select, m->ev.select);
        rc = pass_through (m, note);
        goto out;
    }
    rc = summarise (&r, m);
out:
    tr_when_jobsel_destroy (r.q.jobs);
    json_decref (r.recs);
    json_decref (r.notes);
    return rc;
}

static const struct option opts[] = {
    { "config", required_argument, NULL, 'c' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

int main (int argc, char **argv)
{
    struct mailer m = { 0 };
    const char *conf_path = tr_conf_default_path ();
    bool conf_explicit = getenv ("TRACER_CONF") && *getenv ("TRACER_CONF");
    bool conf_ok = true;
    tr_error_t error;
    int c, rc;

    t0 = tr_when_monotonic ();
    rep_prog = "tracer-mail";
    openlog ("tracer-mail", LOG_PID, LOG_MAIL);
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":s:c:hV", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            m.subject = optarg;
            break;
        case 'c':
            conf_path = optarg;
            conf_explicit = true;
            break;
        case 'h':
            usage (stdout);
            return EXIT_OK;
        case 'V':
            printf ("tracer-mail %s\n", TRACER_VERSION);
            return EXIT_OK;
        default: {
            char msg[256];

            fprintf (stderr, "%s\n",
                     tr_error_usage (msg, sizeof (msg), "tracer-mail", c,
                                     argv[optind - 1], optopt));
            return EXIT_USAGE;
        }
        }
    }
    if (!m.subject || optind >= argc) {
        fprintf (stderr, "tracer-mail: %s\n", !m.subject
                 ? "-s SUBJECT is required" : "no recipient");
        usage (stderr);
        return EXIT_USAGE;
    }
    m.to = (const char *const *)(argv + optind);
    m.nto = (size_t)(argc - optind);
    for (size_t i = 0; i < m.nto; i++)
        if (!tr_mail_address_ok (m.to[i])) {
            fprintf (stderr, "tracer-mail: '%s' is not a usable address\n",
                     m.to[i]);
            return EXIT_USAGE;
        }
    /* A job's name is in the subject, so it may hold anything, a line
     * break included: tr_mail_compose makes it one safe line, and the
     * notification goes out whatever it holds.
     */
    if (!(m.conf = tr_conf_create ()) || !(m.body = read_body ())) {
        fprintf (stderr, "tracer-mail: out of memory\n");
        return EXIT_RUNTIME;
    }
    /* a broken configuration costs the summary, never the mail: the
     * defaults (and their sendmail) still deliver Slurm's notification
     */
    if (tr_conf_load (m.conf, conf_path, &error) < 0
        && !(errno == ENOENT && !conf_explicit)) {
        say (LOG_ERR, "%s (sending Slurm's notification as it is)",
             tr_error_str (&error));
        tr_conf_destroy (m.conf);
        if (!(m.conf = tr_conf_create ())) {
            fprintf (stderr, "tracer-mail: out of memory\n");
            return EXIT_RUNTIME;
        }
        conf_ok = false;
    }
    rc = run (&m, conf_ok);
    free (m.body);
    tr_conf_destroy (m.conf);
    closelog ();
    return rc;
}
