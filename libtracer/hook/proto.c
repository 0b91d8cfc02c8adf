/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Hook -> tracerd messages.  SOCK_SEQPACKET keeps message boundaries, so a
 * message is one send and one recv; SO_SNDTIMEO/SO_RCVTIMEO bound every
 * call because a hook must never wait on a hung daemon.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

int tr_proto_connect (const char *path, int timeout_ms, tr_error_t *error)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct timeval tv;
    int fd;

    if (strlen (path) >= sizeof (sa.sun_path)) {
        errno = ENAMETOOLONG;
        return tr_errprintf (error, "%s: socket path too long", path);
    }
    memcpy (sa.sun_path, path, strlen (path) + 1);
    if ((fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
        return tr_errprintf (error, "socket: %s", strerror (errno));
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    if (setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof (tv)) < 0
        || setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv)) < 0)
        goto error;
    /* A unix-domain connect either succeeds at once or fails at once
     * (ENOENT, ECONNREFUSED), except when the backlog is full, where the
     * send timeout bounds it.
     */
    if (connect (fd, (struct sockaddr *)&sa, sizeof (sa)) < 0)
        goto error;
    return fd;
error:
    tr_errprintf (error, "connect %s: %s", path, strerror (errno));
    {
        int saved = errno;
        close (fd);
        errno = saved;
    }
    return -1;
}

int tr_proto_send (int fd, json_t *msg, tr_error_t *error)
{
    char *s;
    size_t len;
    ssize_t n;

    if (!(s = json_dumps (msg, JSON_COMPACT))) {
        errno = ENOMEM;
        return tr_errprintf (error, "encoding message: out of memory");
    }
    len = strlen (s);
    if (len > TR_PROTO_MAX_MSG) {
        free (s);
        errno = EMSGSIZE;
        return tr_errprintf (error, "message of %zu bytes is too large", len);
    }
    do {
        n = send (fd, s, len, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    free (s);
    if (n < 0)
        return tr_errprintf (error, "send: %s", strerror (errno));
    return 0;
}

json_t *tr_proto_recv (int fd, tr_error_t *error)
{
    char *buf;
    ssize_t n;
    json_t *msg;
    json_error_t jerr;

    if (!(buf = malloc (TR_PROTO_MAX_MSG + 1))) {
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    do {
        n = recv (fd, buf, TR_PROTO_MAX_MSG + 1, MSG_TRUNC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        tr_errprintf (error, "recv: %s", errno == EAGAIN
                      ? "timed out" : strerror (errno));
        goto fail;
    }
    if (n == 0) {
        errno = ECONNRESET;
        tr_errprintf (error, "connection closed by peer");
        goto fail;
    }
    if (n > TR_PROTO_MAX_MSG) {
        errno = EMSGSIZE;
        tr_errprintf (error, "message of %zd bytes is too large", n);
        goto fail;
    }
    if (!(msg = json_loadb (buf, (size_t)n, JSON_REJECT_DUPLICATES, &jerr))
        || !json_is_object (msg)) {
        json_decref (msg);
        errno = EPROTO;
        tr_errprintf (error, "malformed message: %s",
                      msg ? "not an object" : jerr.text);
        goto fail;
    }
    free (buf);
    return msg;
fail:
    {
        int saved = errno;
        free (buf);
        errno = saved;
    }
    return NULL;
}

double tr_proto_clock (void)
{
    struct timespec ts;

    if (clock_gettime (CLOCK_BOOTTIME, &ts) < 0)
        (void)clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool tr_proto_stale (json_t *msg, double now, double *late)
{
    json_t *sent = json_object_get (msg, "sent_s");
    json_t *tmo = json_object_get (msg, "timeout_ms");
    double age;

    if (late)
        *late = 0;
    if (!json_is_number (sent) || !json_is_integer (tmo)
        || json_integer_value (tmo) <= 0)
        return false;
    age = now - json_number_value (sent);
    if (late)
        *late = age;
    return age * 1e3 > (double)json_integer_value (tmo);
}

/* When msg is sent and how long its caller waits, unless it says. */
static int stamp (json_t *msg, int timeout_ms)
{
    if (!json_object_get (msg, "sent_s")
        && json_object_set_new (msg, "sent_s", json_real (tr_proto_clock ()))
               < 0)
        return -1;
    if (!json_object_get (msg, "timeout_ms")
        && json_object_set_new (msg, "timeout_ms", json_integer (timeout_ms))
               < 0)
        return -1;
    return 0;
}

int tr_proto_request (const char *path,
                      json_t *msg,
                      int timeout_ms,
                      json_t **reply,
                      tr_error_t *error)
{
    json_t *r;
    int fd, rc = -1;

    if ((fd = tr_proto_connect (path, timeout_ms, error)) < 0)
        return -1;
    /* stamped once connected: a connect to a full backlog sends nothing */
    if (json_is_object (msg) && stamp (msg, timeout_ms) < 0) {
        errno = ENOMEM;
        tr_errprintf (error, "encoding message: out of memory");
        goto out;
    }
    if (tr_proto_send (fd, msg, error) < 0)
        goto out;
    if (!(r = tr_proto_recv (fd, error)))
        goto out;
    if (json_is_true (json_object_get (r, "ok")))
        rc = 0;
    else {
        const char *e = json_string_value (json_object_get (r, "error"));
        errno = EPROTO;
        tr_errprintf (error, "daemon refused: %s", e ? e : "no reason given");
    }
    if (reply)
        *reply = r;
    else
        json_decref (r);
out:
    {
        int saved = errno;
        close (fd);
        errno = saved;
    }
    return rc;
}
