/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Scheduler queries (see jobstate.h).  squeue is asked only for the state
 * and the time limit, so no user-chosen text (job names, comments) is
 * ever parsed, and its argv holds nothing but a checked job id.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobstate.h"

extern char **environ;

#define OUT_MAX 4096

struct tr_jobstate_query {
    pid_t pid;
    int fd;
    char out[OUT_MAX];
    size_t len;
};

static int parse_num (const char **p, long *out)
{
    char *end;
    long v;

    if (**p < '0' || **p > '9')
        return -1;
    errno = 0;
    v = strtol (*p, &end, 10);
    if (errno || v < 0 || v > 1000000)
        return -1;
    *p = end;
    *out = v;
    return 0;
}

long tr_jobstate_parse_limit (const char *text)
{
    const char *p = text;
    long days = 0, f[3];
    int n = 0;

    if (!text || !*text)
        return -1;
    if (strchr (text, '-')) {
        if (parse_num (&p, &days) < 0 || *p++ != '-')
            return -1;
    }
    while (n < 3) {
        if (parse_num (&p, &f[n]) < 0)
            return -1;
        n++;
        if (*p != ':')
            break;
        p++;
    }
    if (*p)
        return -1;
    if (text != p && strchr (text, '-')) {
        /* D-HH, D-HH:MM, D-HH:MM:SS */
        long h = f[0], m = n > 1 ? f[1] : 0, s = n > 2 ? f[2] : 0;
        return ((days * 24 + h) * 60 + m) * 60 + s;
    }
    switch (n) {
    case 1:
        return f[0] * 60;                           /* MM */
    case 2:
        return f[0] * 60 + f[1];                    /* MM:SS */
    default:
        return (f[0] * 60 + f[1]) * 60 + f[2];      /* HH:MM:SS */
    }
}

int tr_jobstate_parse_line (const char *line,
                         struct tr_jobstate *out,
                         tr_error_t *error)
{
    const char *bar = strchr (line, '|');
    size_t n;
    char limit[64];

    if (!bar)
        return tr_errprintf (error, "squeue output has no '|'");
    n = (size_t)(bar - line);
    if (n == 0 || n >= sizeof (out->state))
        return tr_errprintf (error, "squeue output: bad state");
    for (size_t i = 0; i < n; i++)
        if (!((line[i] >= 'A' && line[i] <= 'Z') || line[i] == '_'))
            return tr_errprintf (error, "squeue output: bad state");
    memcpy (out->state, line, n);
    out->state[n] = '\0';
    n = strcspn (bar + 1, "\n");
    if (n >= sizeof (limit))
        return tr_errprintf (error, "squeue output: bad time limit");
    memcpy (limit, bar + 1, n);
    limit[n] = '\0';
    out->time_limit_s = tr_jobstate_parse_limit (limit);
    return 0;
}

const char *tr_jobstate_outcome (const char *state)
{
    static const struct {
        const char *sched, *outcome;
    } map[] = {
        { "TIMEOUT", "timeout" },      { "DEADLINE", "timeout" },
        { "CANCELLED", "cancelled" },  { "PREEMPTED", "cancelled" },
        { "NODE_FAIL", "cancelled" },  { "BOOT_FAIL", "cancelled" },
        { "REVOKED", "cancelled" },
    };

    for (size_t i = 0; state && i < sizeof (map) / sizeof (map[0]); i++)
        if (!strcmp (state, map[i].sched))
            return map[i].outcome;
    return NULL;
}

tr_jobstate_query_t *tr_jobstate_query_start (const char *squeue,
                                        const char *job,
                                        tr_error_t *error)
{
    char jobs[64], conf[4096];
    char *argv[] = { (char *)squeue, (char *)"--noheader",
                     (char *)"--states=all", jobs, (char *)"--format=%T|%l",
                     NULL };
    char *envp[] = { (char *)"PATH=/usr/bin:/bin", NULL, NULL };
    const char *sc = getenv ("SLURM_CONF");
    posix_spawn_file_actions_t fa;
    tr_jobstate_query_t *q;
    int p[2], rc;
    size_t n = job ? strlen (job) : 0;

    if (n == 0 || n > 20 || strspn (job, "0123456789") != n) {
        errno = EINVAL;
        tr_errprintf (error, "job id is not a number");
        return NULL;
    }
    snprintf (jobs, sizeof (jobs), "--jobs=%s", job);
    if (sc && *sc
        && (size_t)snprintf (conf, sizeof (conf), "SLURM_CONF=%s", sc)
               < sizeof (conf))
        envp[1] = conf;
    if (!(q = calloc (1, sizeof (*q)))) {
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    if (pipe2 (p, O_CLOEXEC | O_NONBLOCK) < 0) {
        tr_errprintf (error, "pipe: %s", strerror (errno));
        free (q);
        return NULL;
    }
    if ((rc = posix_spawn_file_actions_init (&fa)) != 0)
        goto fail;
    /* dup2 clears FD_CLOEXEC on the copy; the child's stdout blocks */
    if ((rc = posix_spawn_file_actions_addopen (&fa, 0, "/dev/null",
                                                O_RDONLY, 0)) != 0
        || (rc = posix_spawn_file_actions_adddup2 (&fa, p[1], 1)) != 0
        || (rc = posix_spawn_file_actions_addopen (&fa, 2, "/dev/null",
                                                   O_WRONLY, 0)) != 0) {
        posix_spawn_file_actions_destroy (&fa);
        goto fail;
    }
    rc = posix_spawn (&q->pid, squeue, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy (&fa);
    if (rc != 0)
        goto fail;
    close (p[1]);
    q->fd = p[0];
    return q;
fail:
    close (p[0]);
    close (p[1]);
    free (q);
    errno = rc;
    tr_errprintf (error, "%s: %s", squeue, strerror (rc));
    return NULL;
}

int tr_jobstate_query_fd (tr_jobstate_query_t *q)
{
    return q->fd;
}

int tr_jobstate_query_read (tr_jobstate_query_t *q)
{
    for (;;) {
        ssize_t n;
        if (q->len >= sizeof (q->out) - 1) {
            errno = EOVERFLOW;
            return -1;
        }
        n = read (q->fd, q->out + q->len, sizeof (q->out) - 1 - q->len);
        if (n > 0) {
            q->len += (size_t)n;
            continue;
        }
        if (n == 0)
            return 1;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN ? 0 : -1;
    }
}

static void reap (tr_jobstate_query_t *q, int *status)
{
    if (q->pid > 0) {
        while (waitpid (q->pid, status, 0) < 0 && errno == EINTR)
            ;
        q->pid = 0;
    }
}

int tr_jobstate_query_result (tr_jobstate_query_t *q,
                           struct tr_jobstate *out,
                           tr_error_t *error)
{
    int status = -1;

    reap (q, &status);
    q->out[q->len] = '\0';
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        errno = EIO;
        return tr_errprintf (error, "squeue failed (wait status %d)",
                             status);
    }
    if (q->len == 0) {
        errno = ENOENT;
        return tr_errprintf (error, "squeue does not know the job");
    }
    /* a job id gives one line; het job ids give one per component, the
     * first being the leader
     */
    return tr_jobstate_parse_line (q->out, out, error);
}

void tr_jobstate_query_destroy (tr_jobstate_query_t *q)
{
    int status;

    if (!q)
        return;
    if (q->pid > 0)
        (void)kill (q->pid, SIGKILL);
    reap (q, &status);
    if (q->fd >= 0)
        close (q->fd);
    free (q);
}
