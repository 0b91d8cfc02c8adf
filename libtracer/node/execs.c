/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What each process was at its exec, from the kernel's process
 * connector (see execs.h).  The connector delivers every exec and comm
 * change on the node to every listener, in order; each exec of a
 * wanted process costs one read of its /proc files (stat, exe, and the
 * command line of a program named from its arguments) while it still
 * runs, each other event a lookup.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "execs.h"
#include "libtracer/record/when.h"
#include "procs.h"

#define START_TOL_MS 2000 /* exit records date a start to the second */

struct tr_execs {
    int fd;
    tr_procs_t *namer; /* the rule table and the /proc reader */
    tr_execs_wanted_f wanted;
    void *wanted_arg;
    struct tr_exec_id *ring; /* TR_EXECS_MAX, the newest at head - 1 */
    size_t head, n;
    uint64_t lost;
    double due; /* reads are held until then (tr_execs_poll_fd) */
};

tr_execs_t *tr_execs_create (const struct tr_execs_opts *opts)
{
    static const char *const no_redaction[] = { NULL };
    struct tr_procs_opts po = { .redact = no_redaction };
    tr_execs_t *e;

    if (!(e = calloc (1, sizeof (*e))))
        return NULL;
    e->fd = -1;
    if (opts) {
        po.tool_subcommands = opts->tool_subcommands;
        po.tool_interpreters = opts->tool_interpreters;
        e->wanted = opts->wanted;
        e->wanted_arg = opts->wanted_arg;
    }
    if (!(e->namer = tr_procs_create (&po, NULL))
        || !(e->ring = calloc (TR_EXECS_MAX, sizeof (*e->ring)))) {
        tr_execs_close (e);
        errno = ENOMEM;
        return NULL;
    }
    return e;
}

/* Whether the running kernel takes a listener's choice of events
 * (struct proc_input, Linux 6.6).  An older one ignores a request of
 * that size altogether, and a newer one takes the plain request as one
 * for every event.
 */
static bool kernel_filters_events (void)
{
    struct utsname u;
    unsigned major = 0, minor = 0;

    return uname (&u) == 0 && sscanf (u.release, "%u.%u", &major, &minor) == 2
           && (major > 6 || (major == 6 && minor >= 6));
}

/* Ask the connector for the node's process events (PROC_CN_MCAST_LISTEN):
 * where the kernel can, execs and comm changes only.  Every listener is
 * woken for every event it takes, and a node forks and exits far more
 * often than it execs.
 */
static int listen_events (int fd)
{
    struct {
        struct nlmsghdr nl;
        struct cn_msg cn;
        struct {
            uint32_t mcast_op;   /* enum proc_cn_mcast_op */
            uint32_t event_type; /* enum proc_cn_event, a mask */
        } in;
    } __attribute__ ((packed)) msg;
    size_t len = sizeof (msg);

    memset (&msg, 0, sizeof (msg));
    msg.nl.nlmsg_type = NLMSG_DONE;
    msg.nl.nlmsg_pid = 0;
    msg.cn.id.idx = CN_IDX_PROC;
    msg.cn.id.val = CN_VAL_PROC;
    msg.in.mcast_op = PROC_CN_MCAST_LISTEN;
    if (kernel_filters_events ()) {
        msg.in.event_type = PROC_EVENT_EXEC | PROC_EVENT_COMM;
        msg.cn.len = sizeof (msg.in);
    }
    else {
        msg.cn.len = sizeof (msg.in.mcast_op);
        len -= sizeof (msg.in.event_type);
    }
    msg.nl.nlmsg_len = (uint32_t)len;
    return send (fd, &msg, len, 0) == (ssize_t)len ? 0 : -1;
}

tr_execs_t *tr_execs_open (const struct tr_execs_opts *opts,
                           tr_error_t *error)
{
    struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
                              .nl_groups = CN_IDX_PROC };
    int rcvbuf = 4 << 20;
    tr_execs_t *e;

    if (!(e = tr_execs_create (opts))) {
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    if ((e->fd = socket (AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                         NETLINK_CONNECTOR))
            < 0
        || bind (e->fd, (struct sockaddr *)&sa, sizeof (sa)) < 0
        || listen_events (e->fd) < 0) {
        int saved = errno;
        tr_errprintf (error, "process connector: %s", strerror (saved));
        tr_execs_close (e);
        errno = saved;
        return NULL;
    }
    /* a burst of execs (a build, a workflow's fan-out) waits here; past
     * it the kernel drops events and says so (ENOBUFS)
     */
    (void)setsockopt (e->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
                      sizeof (rcvbuf));
    return e;
}

void tr_execs_close (tr_execs_t *e)
{
    if (!e)
        return;
    if (e->fd >= 0)
        close (e->fd);
    tr_procs_destroy (e->namer);
    free (e->ring);
    free (e);
}

int tr_execs_fd (const tr_execs_t *e)
{
    return e ? e->fd : -1;
}

int tr_execs_poll_fd (tr_execs_t *e, double now, double *wake)
{
    if (!e || e->fd < 0)
        return -1;
    if (now >= e->due)
        return e->fd;
    if (e->due < *wake)
        *wake = e->due;
    return -1;
}

uint64_t tr_execs_lost (const tr_execs_t *e)
{
    return e ? e->lost : 0;
}

/* The entry of pid (the newest first), or NULL. */
static struct tr_exec_id *find_pid (const tr_execs_t *e, pid_t pid)
{
    for (size_t i = 1; i <= e->n; i++) {
        struct tr_exec_id *x =
            &e->ring[(e->head + TR_EXECS_MAX - i) % TR_EXECS_MAX];
        if (x->pid == pid)
            return x;
    }
    return NULL;
}

int tr_execs_note_exec (tr_execs_t *e, pid_t pid)
{
    struct tr_procs_ident id;
    struct tr_exec_id *x;
    int rc;

    if (!e || pid <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (e->wanted && e->wanted (pid, e->wanted_arg) != 1)
        return 0;
    if ((rc = tr_procs_identify (e->namer, pid, &id)) <= 0)
        return rc;
    /* a process that execs again is what it became: one entry each */
    if (!(x = find_pid (e, pid)) || x->start_ms != id.start_ms) {
        x = &e->ring[e->head];
        e->head = (e->head + 1) % TR_EXECS_MAX;
        if (e->n < TR_EXECS_MAX)
            e->n++;
    }
    memset (x, 0, sizeof (*x));
    x->pid = pid;
    x->start_ms = id.start_ms;
    x->exe_dev = id.exe_dev;
    x->exe_ino = id.exe_ino;
    snprintf (x->tool, sizeof (x->tool), "%s", id.tool);
    return 1;
}

void tr_execs_note_comm (tr_execs_t *e, pid_t tid, pid_t pid,
                         const char *comm)
{
    struct tr_exec_id *x;

    /* a thread naming itself is not the process renaming itself */
    if (!e || !comm || tid != pid || !(x = find_pid (e, pid)))
        return;
    snprintf (x->renamed, sizeof (x->renamed), "%s", comm);
}

const struct tr_exec_id *tr_execs_find (const tr_execs_t *e, pid_t pid,
                                        int64_t start_ms)
{
    const struct tr_exec_id *x;

    if (!e || !(x = find_pid (e, pid)))
        return NULL;
    if (x->start_ms > start_ms + START_TOL_MS
        || start_ms > x->start_ms + START_TOL_MS)
        return NULL;
    return x;
}

/* One connector message of len bytes at buf. */
static void take (tr_execs_t *e, const char *buf, size_t len)
{
    const struct nlmsghdr *nl = (const struct nlmsghdr *)buf;

    for (; NLMSG_OK (nl, len); nl = NLMSG_NEXT (nl, len)) {
        const struct cn_msg *cn = NLMSG_DATA (nl);
        struct proc_event ev;
        if (nl->nlmsg_type == NLMSG_ERROR || nl->nlmsg_type == NLMSG_NOOP)
            continue;
        if (nl->nlmsg_len < NLMSG_LENGTH (sizeof (*cn) + sizeof (ev))
            || cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC
            || cn->len < sizeof (ev))
            continue;
        /* the event lies 4-aligned after its header; it holds 8-byte
         * members: read a copy
         */
        memcpy (&ev, cn->data, sizeof (ev));
        if (ev.what == PROC_EVENT_EXEC)
            (void)tr_execs_note_exec (e, ev.event_data.exec.process_tgid);
        else if (ev.what == PROC_EVENT_COMM) {
            char comm[sizeof (ev.event_data.comm.comm) + 1];
            memcpy (comm, ev.event_data.comm.comm, sizeof (comm) - 1);
            comm[sizeof (comm) - 1] = '\0';
            tr_execs_note_comm (e, ev.event_data.comm.process_pid,
                                ev.event_data.comm.process_tgid, comm);
        }
    }
}

int tr_execs_read (tr_execs_t *e)
{
    char buf[8192] __attribute__ ((aligned (NLMSG_ALIGNTO)));
    int count = 0;

    if (!e || e->fd < 0) {
        errno = EINVAL;
        return -1;
    }
    for (;;) {
        struct sockaddr_nl from;
        socklen_t fromlen = sizeof (from);
        ssize_t n = recvfrom (e->fd, buf, sizeof (buf), 0,
                              (struct sockaddr *)&from, &fromlen);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS) {
                e->lost++; /* some were dropped; the rest still come */
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        if (n == 0)
            break;
        /* any process may send to this socket: only the kernel (port 0)
         * is heard, or a user could mark another's process renamed
         */
        if (fromlen != sizeof (from) || from.nl_family != AF_NETLINK
            || from.nl_pid != 0)
            continue;
        take (e, buf, (size_t)n);
        count++;
    }
    if (count > 0)
        e->due = tr_when_monotonic () + TR_EXECS_HOLD_S;
    return count;
}
