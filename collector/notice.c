/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's notices: mail to users whose step stalled (mail.on_stall),
 * composed by tracerd and sent by a mailer child (libtracer/notify/mail.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/notify/mail.h"
#include "libtracer/node/sampler.h"

#include "tracerd.h"

/* mail.on_stall: the notices to users whose step stalled.  tracerd
 * composes each (tr_mail_stall_text, tr_mail_compose) and queues it; a
 * mailer child hands the queue to mail.sendmail (tr_mail_send, no
 * shell, at most MAIL_TIMEOUT_S each) and exits, so a slow or hung MTA
 * holds the mailer, never tracerd.  At most MAIL_QUEUE_MAX wait; more
 * are dropped and counted in the log.  The recipient is the name of the
 * step's uid on this node (identity.user, with mail.domain), never an
 * address the job gives.
 */
#define MAIL_QUEUE_MAX 64
#define MAIL_TIMEOUT_S 30.0

static struct {
    char *msg[MAIL_QUEUE_MAX];
    size_t len[MAIL_QUEUE_MAX];
    char to[MAIL_QUEUE_MAX][336]; /* user (64) @ mail.domain (256) */
    char step[MAIL_QUEUE_MAX][64];
    int n;
    pid_t pid; /* the mailer, or -1 */
    unsigned long dropped;
} mq = { .pid = -1 };

void tracerd_notice_stall (struct active *a)
{
    const char *to[1];
    json_t *rec = NULL, *id;
    const char *user;
    char subject[256], *text = NULL, *msg = NULL;
    size_t len = 0;
    tr_error_t error;

    if (!d.conf->mail.on_stall || a->stall_mailed
        || !tr_step_stalled (a->step, NULL)
        || (a->conditional
            && !tracerd_steps_traced (tr_step_identity (a->step))))
        return;
    a->stall_mailed = true;
    if (mq.n == MAIL_QUEUE_MAX) {
        mq.dropped++;
        tracerd_log (LOG_WARNING,
                     "step %s stalled: its notice is dropped (%d "
                     "wait for the mailer; %lu dropped)",
                     a->key, MAIL_QUEUE_MAX, mq.dropped);
        return;
    }
    id = tr_step_identity (a->step);
    user = json_string_value (json_object_get (id, "user"));
    if (!user
        || tr_mail_user_address (mq.to[mq.n], sizeof (mq.to[mq.n]), user,
                                 d.conf->mail.domain)
               < 0) {
        tracerd_log (LOG_WARNING,
                     "step %s stalled: no notice, uid %lld has no "
                     "usable mail address on this node",
                     a->key,
                     (long long)json_integer_value (json_object_get (id, "ui"
                                                                         "d")));
        return;
    }
    to[0] = mq.to[mq.n];
    if (!(rec = tr_step_live_record (a->step))
        || !(text = tr_mail_stall_text (rec, subject, sizeof (subject)))) {
        tracerd_log (LOG_WARNING, "step %s stalled: no notice: %s", a->key,
                     strerror (errno));
        goto out;
    }
    {
        struct tr_mail_msg m = {
            .from = d.conf->mail.from,
            .to = to,
            .nto = 1,
            .subject = subject,
            .text = text,
            .job_id = json_string_value (json_object_get (id, "job_id")),
        };

        if (!(msg = tr_mail_compose (&m, time (NULL), &len, &error))) {
            tracerd_log (LOG_WARNING, "step %s stalled: no notice: %s", a->key,
                         tr_error_str (&error));
            goto out;
        }
    }
    mq.msg[mq.n] = msg;
    mq.len[mq.n] = len;
    /* the log's name for it: a long key is cut */
    snprintf (mq.step[mq.n], sizeof (mq.step[mq.n]), "%.*s",
              (int)sizeof (mq.step[mq.n]) - 1, a->key);
    mq.n++;
    tracerd_log (LOG_INFO, "step %s stalled: its user is told (%s)", a->key,
                 to[0]);
out:
    free (text);
    json_decref (rec);
}

static void mailer_start (void)
{
    pid_t pid;

    if (mq.n == 0 || mq.pid > 0)
        return;
    fflush (NULL);
    if ((pid = fork ()) < 0) {
        tracerd_log (LOG_ERR, "mail: fork: %s; will retry", strerror (errno));
        return;
    }
    if (pid == 0) {
        int failed = 0;

        close (d.listen_fd);
        if (d.taskstats)
            close (tr_taskstats_fd (d.taskstats));
        for (int i = 0; i < mq.n; i++) {
            const char *to[1] = { mq.to[i] };
            tr_error_t error;

            if (tr_mail_send (d.conf->mail.sendmail, d.conf->mail.from, to, 1,
                              mq.msg[i], mq.len[i], MAIL_TIMEOUT_S, &error)
                < 0) {
                tracerd_log (LOG_WARNING,
                             "step %s: the stall notice to %s was "
                             "not sent: %s",
                             mq.step[i], mq.to[i], tr_error_str (&error));
                failed = 1;
            }
        }
        _exit (failed);
    }
    mq.pid = pid;
    for (int i = 0; i < mq.n; i++)
        free (mq.msg[i]);
    mq.n = 0;
}

void tracerd_notice_reap (void)
{
    int status;

    if (mq.pid > 0 && waitpid (mq.pid, &status, WNOHANG) == mq.pid) {
        if (!WIFEXITED (status))
            tracerd_log (LOG_WARNING, "mail: the mailer ended by signal %d",
                         WIFSIGNALED (status) ? WTERMSIG (status) : 0);
        mq.pid = -1;
    }
    mailer_start ();
}

/* At stop: the notices still queued are not sent. */
void tracerd_notice_stop (void)
{
    if (mq.n > 0)
        tracerd_log (LOG_WARNING,
                     "%d stall notice%s not sent: tracerd is "
                     "stopping",
                     mq.n, mq.n == 1 ? "" : "s");
    for (int i = 0; i < mq.n; i++)
        free (mq.msg[i]);
}
