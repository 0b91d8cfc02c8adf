/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Exit notifications from netlink taskstats (kernel/taskstats.c,
 * kernel/tsacct.c, include/uapi/linux/taskstats.h).  do_exit() calls
 * taskstats_exit() after setting exit_code and before exit_mm(), so every
 * record holds the thread's final counters and its address space's RSS
 * high-water mark.  What the kernel sends, and what this module relies on:
 *
 * - One netlink message per exiting thread, to listeners registered for
 *   the CPU the thread exits on (hence registration on all possible CPUs).
 *   It holds TASKSTATS_TYPE_AGGR_PID {PID, STATS} filled by fill_stats()
 *   from that thread alone: task_cputime() (own utime/stime, not cutime),
 *   the thread's own ioac (read/write bytes and calls, rounded down to
 *   1 KiB by xacct_add_tsk's KB_MASK, even the call counts), hiwater_rss
 *   in KiB of the shared mm, and delay totals when delay accounting is on.
 * - When the thread group ever had more than one thread (signal->stats was
 *   allocated on the first exit while others lived), the last thread's
 *   message also holds TASKSTATS_TYPE_AGGR_TGID {TGID, STATS}.  That
 *   aggregate is accumulated by fill_tgid_exit(), which adds only delay
 *   accounting: its CPU, memory and I/O fields stay zero and even its
 *   version field is 0.  A single-threaded process sends no TGID part.
 * - Since version 12 the PID record carries ac_tgid, ac_tgetime (wall time
 *   since the group leader started), ac_exe_dev/ac_exe_inode and the
 *   AGROUP flag on the last thread of the group; before, a listener cannot
 *   group threads into processes.
 * - ac_exitcode is tsk->exit_code: (status << 8) for exit(), the signal
 *   number (| 0x80 for a core dump) for a fatal signal, i.e. a wait status.
 * - ac_btime is ktime_get_real_seconds() minus the elapsed whole seconds,
 *   so btime + etime/1e6 is the exit second; ac_btime64 (v10) avoids the
 *   2106 overflow.
 * - Records grow by appending fields; older kernels send shorter structs,
 *   newer ones longer.  Only min(received, sizeof) bytes are copied and
 *   fields are used only when the version says they exist.
 * - Delay fields (cpu_count, cpu_delay_total, ...) are filled only when
 *   delay accounting is enabled (delayacct_on / the delayacct static key,
 *   default off since 5.14); cpu_delay_total is sched_info.run_delay, the
 *   run-queue wait, and cpu_count its pcount.
 * - Registration requires GENL_ADMIN_PERM (CAP_NET_ADMIN) and the initial
 *   user and pid namespaces (add_del_listener returns EINVAL otherwise).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/genetlink.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "btf.h"
#include "cgroup.h"
#include "taskstats.h"
#include "libtracer/record/when.h"

/* ac_flag bits from <linux/acct.h>, which clashes with <sys/acct.h>. */
#define ACCT_ACORE 0x08
#define ACCT_AXSIG 0x10
#define ACCT_AGROUP 0x20

/* Receive buffer asked of the kernel: a burst of thousands of exits (a
 * make -j or a job array on a busy node) must fit while the daemon is
 * busy elsewhere.  One record is under 1 KiB of payload.
 */
#define RCVBUF_BYTES (8 * 1024 * 1024)

/* The replies read while opening: 64 KiB holds any of them. */
#define MSG_BUF_BYTES 65536

/* Exit records are read BATCH at a time with recvmmsg(), one datagram
 * (one record) a slot.  A record is about 600 bytes (struct taskstats
 * version 16 with its headers), 1,200 when it carries both aggregates;
 * the slot leaves room for growth, and a record that would not fit is
 * counted as lost (MSG_TRUNC), as an overrun is.
 */
#define BATCH 32
#define SLOT_BYTES 4096

/* Upper bound on records read per tr_taskstats_read() call. */
#define READ_MAX 4096

/* How long open() waits for the kernel's replies. */
#define REPLY_TIMEOUT_S 5

/* Longest cpu list accepted ("0-1023" style lists are short; a sparse
 * list of many single CPUs is what needs room).
 */
#define CPUMASK_MAX 8192

struct tr_taskstats {
    int fd;
    uint16_t family;
    uint32_t portid;
    uint32_t seq;
    uint64_t lost;
    double due; /* tr_when_monotonic() when reads are no longer held */
    char *cpumask;
    char *buf; /* BATCH slots of SLOT_BYTES (at least MSG_BUF_BYTES) */
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
};

/* A request: netlink header, generic-netlink header, attributes. */
union request {
    struct nlmsghdr n;
    char buf[NLMSG_SPACE (GENL_HDRLEN) + NLA_HDRLEN + CPUMASK_MAX + 8];
};

static int64_t now_unix_ms (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void req_init (union request *r, uint16_t type, uint8_t cmd,
                      uint16_t flags, uint32_t seq)
{
    struct genlmsghdr *g;

    memset (r, 0, sizeof (*r));
    r->n.nlmsg_len = NLMSG_LENGTH (GENL_HDRLEN);
    r->n.nlmsg_type = type;
    r->n.nlmsg_flags = flags;
    r->n.nlmsg_seq = seq;
    g = NLMSG_DATA (&r->n);
    g->cmd = cmd;
    g->version = 1;
}

static int req_put (union request *r, uint16_t type, const void *data,
                    size_t len)
{
    size_t off = NLMSG_ALIGN (r->n.nlmsg_len);
    struct nlattr *na;

    if (off + NLA_HDRLEN + NLA_ALIGN (len) > sizeof (r->buf)) {
        errno = EMSGSIZE;
        return -1;
    }
    na = (struct nlattr *)(r->buf + off);
    na->nla_type = type;
    na->nla_len = (uint16_t)(NLA_HDRLEN + len);
    memcpy (r->buf + off + NLA_HDRLEN, data, len);
    r->n.nlmsg_len = (uint32_t)(off + NLA_ALIGN (na->nla_len));
    return 0;
}

static int req_send (tr_taskstats_t *ts, union request *r)
{
    struct sockaddr_nl kernel;
    ssize_t n;

    memset (&kernel, 0, sizeof (kernel));
    kernel.nl_family = AF_NETLINK;
    do {
        n = sendto (ts->fd, r->buf, r->n.nlmsg_len, 0,
                    (struct sockaddr *)&kernel, sizeof (kernel));
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if ((size_t)n != r->n.nlmsg_len) {
        errno = EIO;
        return -1;
    }
    return 0;
}

/* Find attribute 'type' among those in [p, p + len).  Returns its payload
 * and length, or NULL.
 */
static const char *attr_find (const char *p, size_t len, uint16_t type,
                              size_t *plen)
{
    size_t off = 0;

    while (off + NLA_HDRLEN <= len) {
        struct nlattr na;

        memcpy (&na, p + off, sizeof (na));
        if (na.nla_len < NLA_HDRLEN || off + na.nla_len > len)
            break;
        if ((na.nla_type & NLA_TYPE_MASK) == type) {
            *plen = na.nla_len - NLA_HDRLEN;
            return p + off + NLA_HDRLEN;
        }
        off += NLA_ALIGN (na.nla_len);
    }
    return NULL;
}

/* Wait for the reply to request 'seq' during open (the socket is still
 * blocking, with a receive timeout).  For want_family, the reply is the
 * controller's NEWFAMILY message and the family id is stored; otherwise
 * the reply is the ACK (an NLMSG_ERROR with error 0).  Exit records that
 * arrive meanwhile are dropped: the caller has not been given the
 * listener yet.
 */
static int wait_reply (tr_taskstats_t *ts, uint32_t seq, bool want_family)
{
    for (;;) {
        ssize_t n = recv (ts->fd, ts->buf, MSG_BUF_BYTES, 0);
        struct nlmsghdr *h;
        size_t len;

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                errno = ETIMEDOUT;
            if (errno == ENOBUFS)
                continue;
            return -1;
        }
        len = (size_t)n;
        for (h = (struct nlmsghdr *)ts->buf; NLMSG_OK (h, len);
             h = NLMSG_NEXT (h, len)) {
            if (h->nlmsg_seq != seq)
                continue;
            if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr e;

                if (h->nlmsg_len < NLMSG_LENGTH (sizeof (e))) {
                    errno = EPROTO;
                    return -1;
                }
                memcpy (&e, NLMSG_DATA (h), sizeof (e));
                if (e.error != 0) {
                    errno = -e.error;
                    return -1;
                }
                if (!want_family)
                    return 0;
                continue;
            }
            if (want_family && h->nlmsg_type == GENL_ID_CTRL) {
                const char *a = (const char *)NLMSG_DATA (h) + GENL_HDRLEN;
                size_t alen, plen;
                const char *id;
                uint16_t family;

                if (h->nlmsg_len < NLMSG_LENGTH (GENL_HDRLEN)) {
                    errno = EPROTO;
                    return -1;
                }
                alen = h->nlmsg_len - NLMSG_LENGTH (GENL_HDRLEN);
                id = attr_find (a, alen, CTRL_ATTR_FAMILY_ID, &plen);
                if (!id || plen < sizeof (family)) {
                    errno = EPROTO;
                    return -1;
                }
                memcpy (&family, id, sizeof (family));
                ts->family = family;
                return 0;
            }
        }
    }
}

/* The possible CPUs as the kernel prints them ("0-63"). */
static char *possible_cpus (void)
{
    char buf[CPUMASK_MAX];
    ssize_t n;
    size_t off = 0;
    int fd = open ("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return NULL;
    while (off < sizeof (buf) - 1) {
        n = read (fd, buf + off, sizeof (buf) - 1 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close (fd);
    while (off > 0 && (buf[off - 1] == '\n' || buf[off - 1] == ' '))
        off--;
    if (off == 0 || off >= sizeof (buf) - 1) {
        errno = EINVAL;
        return NULL;
    }
    buf[off] = '\0';
    return strdup (buf);
}

static int send_cpumask (tr_taskstats_t *ts, uint16_t attr, uint16_t flags)
{
    union request r;

    req_init (&r, ts->family, TASKSTATS_CMD_GET, flags, ++ts->seq);
    if (req_put (&r, attr, ts->cpumask, strlen (ts->cpumask) + 1) < 0)
        return -1;
    return req_send (ts, &r);
}

static void set_rcvbuf (int fd)
{
    int size = RCVBUF_BYTES;

    /* FORCE passes net.core.rmem_max but needs CAP_NET_ADMIN. */
    if (setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof (size))
        < 0)
        (void)setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof (size));
}

tr_taskstats_t *tr_taskstats_open (tr_error_t *error)
{
    tr_taskstats_t *ts;
    struct sockaddr_nl local;
    socklen_t alen = sizeof (local);
    struct timeval tv = { REPLY_TIMEOUT_S, 0 };
    union request r;
    int flags;

    if (!(ts = calloc (1, sizeof (*ts)))) {
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    ts->fd = -1;
    if (!(ts->buf = malloc (BATCH * SLOT_BYTES > MSG_BUF_BYTES
                                ? BATCH * SLOT_BYTES
                                : MSG_BUF_BYTES))) {
        tr_errprintf (error, "out of memory");
        goto error;
    }
    ts->fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (ts->fd < 0) {
        tr_errprintf (error, "netlink socket: %s", strerror (errno));
        goto error;
    }
    set_rcvbuf (ts->fd);
    memset (&local, 0, sizeof (local));
    local.nl_family = AF_NETLINK;
    if (bind (ts->fd, (struct sockaddr *)&local, sizeof (local)) < 0
        || getsockname (ts->fd, (struct sockaddr *)&local, &alen) < 0) {
        tr_errprintf (error, "netlink bind: %s", strerror (errno));
        goto error;
    }
    ts->portid = local.nl_pid;
    if (setsockopt (ts->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv)) < 0) {
        tr_errprintf (error, "netlink timeout: %s", strerror (errno));
        goto error;
    }

    req_init (&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_REQUEST,
              ++ts->seq);
    if (req_put (&r, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
                 sizeof (TASKSTATS_GENL_NAME))
            < 0
        || req_send (ts, &r) < 0 || wait_reply (ts, ts->seq, true) < 0) {
        if (errno == ENOENT)
            tr_errprintf (error, "taskstats: not available in this kernel");
        else
            tr_errprintf (error, "taskstats: family lookup: %s",
                          strerror (errno));
        goto error;
    }

    if (!(ts->cpumask = possible_cpus ())) {
        tr_errprintf (error, "/sys/devices/system/cpu/possible: %s",
                      strerror (errno));
        goto error;
    }
    if (send_cpumask (ts, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
                      NLM_F_REQUEST | NLM_F_ACK)
            < 0
        || wait_reply (ts, ts->seq, false) < 0) {
        if (errno == EPERM)
            tr_errprintf (error, "taskstats: registering for exits needs "
                                 "CAP_NET_ADMIN (root)");
        else if (errno == EINVAL)
            tr_errprintf (error, "taskstats: registration refused (not in "
                                 "the initial user and pid namespaces?)");
        else
            tr_errprintf (error, "taskstats: register cpus %s: %s",
                          ts->cpumask, strerror (errno));
        goto error;
    }

    /* From here on the socket is polled: never block. */
    if ((flags = fcntl (ts->fd, F_GETFL)) < 0
        || fcntl (ts->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        tr_errprintf (error, "taskstats: fcntl: %s", strerror (errno));
        goto error;
    }
    return ts;
error:
    tr_taskstats_close (ts);
    return NULL;
}

void tr_taskstats_close (tr_taskstats_t *ts)
{
    int saved = errno;

    if (!ts)
        return;
    /* The kernel also drops a listener whose socket is gone, but only
     * when the next exit on each CPU fails to reach it.
     */
    if (ts->fd >= 0 && ts->cpumask && ts->family)
        (void)send_cpumask (ts, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK,
                            NLM_F_REQUEST);
    if (ts->fd >= 0)
        close (ts->fd);
    free (ts->cpumask);
    free (ts->buf);
    free (ts);
    errno = saved;
}

int tr_taskstats_fd (tr_taskstats_t *ts)
{
    return ts ? ts->fd : -1;
}

uint64_t tr_taskstats_lost (tr_taskstats_t *ts)
{
    return ts ? ts->lost : 0;
}

int tr_taskstats_poll_fd (tr_taskstats_t *ts, double now, double *wake)
{
    if (!ts)
        return -1;
    if (now >= ts->due)
        return ts->fd;
    if (ts->due < *wake)
        *wake = ts->due;
    return -1;
}

/* The kernel filter (tr_taskstats_filter_cgroups) */

/* The cgroup2 id of dir (the kernfs node id, which is what
 * bpf_get_current_cgroup_id() returns and what name_to_handle_at() puts
 * in a cgroup2 file handle) and its depth below the cgroup2 mount, or -1
 * when that cannot be told (the ancestor test is then left out).
 */
static int cgroup2_id (const char *dir, uint64_t *id, int *level)
{
    union {
        struct file_handle fh;
        char buf[sizeof (struct file_handle) + 64];
    } h;
    char mnt[4096];
    struct statfs sf;
    size_t mlen;
    int mount_id;

    if (statfs (dir, &sf) < 0)
        return -1;
    if (sf.f_type != CGROUP2_SUPER_MAGIC) {
        errno = EINVAL; /* a v1 directory's id is not comparable */
        return -1;
    }
    h.fh.handle_bytes = sizeof (h.buf) - sizeof (struct file_handle);
    if (name_to_handle_at (AT_FDCWD, dir, &h.fh, &mount_id, 0) < 0)
        return -1;
    if (h.fh.handle_bytes != sizeof (*id)) {
        errno = EINVAL;
        return -1;
    }
    memcpy (id, h.fh.f_handle, sizeof (*id));
    *level = -1;
    if (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0
        && (mlen = strlen (mnt)) > 0 && !strncmp (dir, mnt, mlen)
        && (dir[mlen] == '/' || dir[mlen] == '\0')) {
        int n = 0;
        for (const char *p = dir + mlen; *p; p++)
            if (*p != '/' && (p[-1] == '/'))
                n++;
        *level = n;
    }
    return 0;
}

bool tr_taskstats_v2_walk = false;

static void bpf_put (struct bpf_insn *prog, size_t *n, uint8_t code,
                     uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    memset (&prog[*n], 0, sizeof (prog[*n]));
    prog[*n].code = code;
    prog[*n].dst_reg = dst & 0xf;
    prog[*n].src_reg = src & 0xf;
    prog[*n].off = off;
    prog[*n].imm = imm;
    (*n)++;
}

/* r1 = v (two instructions) */
static void bpf_ld64 (struct bpf_insn *prog, size_t *n, uint8_t dst,
                      uint64_t v)
{
    bpf_put (prog, n, BPF_LD | BPF_DW | BPF_IMM, dst, 0, 0,
             (int32_t)(uint32_t)v);
    bpf_put (prog, n, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
}

/* Where the running kernel keeps what the v1 part of the filter reads
 * (from its BTF, once): task_struct.cgroups -> css_set.subsys[id] ->
 * cgroup_subsys_state.cgroup -> cgroup.{level, ancestors[], kn} ->
 * kernfs_node.id, the id that is also the directory's inode number on a
 * 64-bit kernel (kernfs_id_ino).
 */
#define TR_KERNEL_BTF "/sys/kernel/btf/vmlinux"

static const struct {
    const char *name; /* the controller */
    const char *file; /* a file only its directories have */
} v1_controllers[] = {
    { "cpuacct", "cpuacct.usage" },
    { "memory", "memory.usage_in_bytes" },
    { "pids", "pids.current" },
    { "cpuset", "cpuset.cpus" },
    { "freezer", "freezer.state" },
    { "devices", "devices.list" },
};
#define NV1 (sizeof (v1_controllers) / sizeof (v1_controllers[0]))

static struct {
    bool tried;
    int err;         /* 0 when known */
    char why[200];
    size_t task_cgroups, set_subsys, set_dfl, css_cgroup, cg_level,
        cg_ancestors, cg_kn, kn_id;
    uint32_t nsubsys;
    int64_t subsys_id[NV1]; /* -1: not in this kernel */
} klay;

static int layout_member (tr_btf_t *btf, const char *type, const char *m,
                          size_t *off, size_t want)
{
    size_t size;
    uint32_t ne;

    if (tr_btf_member (btf, type, m, off, &size, &ne) < 0) {
        snprintf (klay.why, sizeof (klay.why), "kernel BTF: no %s.%s", type,
                  m);
        return -1;
    }
    if (want && size != want) {
        snprintf (klay.why, sizeof (klay.why), "kernel BTF: %s.%s is %zu "
                  "bytes, not %zu", type, m, size, want);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int kernel_layout (tr_error_t *error)
{
    if (!klay.tried) {
        tr_error_t e;
        tr_btf_t *btf;
        size_t size;
        uint32_t ne = 0;

        klay.tried = true;
        if (!(btf = tr_btf_load (TR_KERNEL_BTF, &e))) {
            klay.err = errno;
            snprintf (klay.why, sizeof (klay.why), "%s", tr_error_str (&e));
        }
        else {
            if (layout_member (btf, "task_struct", "cgroups",
                               &klay.task_cgroups, 8) < 0
                || layout_member (btf, "cgroup_subsys_state", "cgroup",
                                  &klay.css_cgroup, 8) < 0
                || layout_member (btf, "cgroup", "level", &klay.cg_level, 4)
                       < 0
                || layout_member (btf, "cgroup", "kn", &klay.cg_kn, 8) < 0
                || layout_member (btf, "cgroup", "ancestors",
                                  &klay.cg_ancestors, 0) < 0
                || layout_member (btf, "kernfs_node", "id", &klay.kn_id, 8)
                       < 0
                || layout_member (btf, "css_set", "dfl_cgrp", &klay.set_dfl, 8)
                       < 0)
                klay.err = errno ? errno : ENOENT;
            else if (tr_btf_member (btf, "css_set", "subsys",
                                    &klay.set_subsys, &size, &ne) < 0
                     || ne == 0 || size != (size_t)ne * 8) {
                klay.err = ENOENT;
                snprintf (klay.why, sizeof (klay.why),
                          "kernel BTF: no css_set.subsys array");
            }
            klay.nsubsys = ne;
            for (size_t i = 0; i < NV1; i++) {
                char en[64];
                snprintf (en, sizeof (en), "%s_cgrp_id",
                          v1_controllers[i].name);
                if (tr_btf_enum_value (btf, "cgroup_subsys_id", en,
                                       &klay.subsys_id[i]) < 0
                    || klay.subsys_id[i] < 0
                    || klay.subsys_id[i] >= (int64_t)ne)
                    klay.subsys_id[i] = -1;
            }
            tr_btf_free (btf);
        }
    }
    if (klay.err) {
        errno = klay.err;
        tr_errprintf (error, "%s", klay.why);
        return -1;
    }
    return 0;
}

/* A v1 directory: its id (inode number), its controller (index into
 * v1_controllers) and its depth below that hierarchy's mount.
 */
static int cgroup1_id (const char *dir, uint64_t *id, int *ctrl, int *level)
{
    char mnt[4096], file[4096];
    struct stat st;
    size_t mlen;
    int n = 0;

    if (stat (dir, &st) < 0)
        return -1;
    if (!S_ISDIR (st.st_mode) || sizeof (st.st_ino) < sizeof (uint64_t)) {
        errno = EINVAL;
        return -1;
    }
    *id = (uint64_t)st.st_ino;
    *ctrl = -1;
    for (size_t i = 0; i < NV1 && *ctrl < 0; i++) {
        snprintf (file, sizeof (file), "%s/%s", dir, v1_controllers[i].file);
        if (access (file, F_OK) == 0)
            *ctrl = (int)i;
    }
    if (*ctrl < 0) {
        errno = EINVAL; /* a named hierarchy, or one not handled */
        return -1;
    }
    if (tr_cgroup_mountpoint (v1_controllers[*ctrl].name, mnt, sizeof (mnt))
            < 0
        || (mlen = strlen (mnt)) == 0 || strncmp (dir, mnt, mlen)
        || (dir[mlen] != '/' && dir[mlen] != '\0')) {
        errno = EINVAL; /* not below the controller's own mount */
        return -1;
    }
    for (const char *p = dir + mlen; *p; p++)
        if (*p != '/' && p[-1] == '/')
            n++;
    *level = n;
    return 0;
}

/* The program under construction, with forward jumps to labels. */
struct prog {
    struct bpf_insn *insn;
    size_t len, cap;
    struct {
        size_t at;
        int label;
    } fix[TR_TASKSTATS_FILTER_MAX * 16 + 64];
    size_t nfix;
    long label[TR_TASKSTATS_FILTER_MAX * 4 + 8];
    int nlabel;
};

static int new_label (struct prog *p)
{
    p->label[p->nlabel] = -1;
    return p->nlabel++;
}

static void set_label (struct prog *p, int l)
{
    p->label[l] = (long)p->len;
}

/* if (dst op imm) goto label; a register compare when x */
static void jump (struct prog *p, uint8_t op, uint8_t dst, uint8_t src,
                  int32_t imm, int label)
{
    p->fix[p->nfix].at = p->len;
    p->fix[p->nfix++].label = label;
    bpf_put (p->insn, &p->len, BPF_JMP | op | (src ? BPF_X : BPF_K), dst,
             src, 0, imm);
}

/* *(fp - 8) = the size bytes at r3 + off; on a fault goto fail; then
 * dst = what was read (0 ends in fail too, for pointers).
 */
static void read_kernel (struct prog *p, int32_t off, int size, uint8_t dst,
                         int fail)
{
    if (off)
        bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, off);
    bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);
    bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -8);
    bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, size);
    bpf_put (p->insn, &p->len, BPF_JMP | BPF_CALL, 0, 0, 0,
             BPF_FUNC_probe_read_kernel);
    jump (p, BPF_JNE, 0, 0, 0, fail);
    bpf_put (p->insn, &p->len,
             BPF_LDX | BPF_MEM | (size == 8 ? BPF_DW : BPF_W), dst, 10, -8,
             0);
    if (size == 8)
        jump (p, BPF_JEQ, dst, 0, 0, fail);
}

/* The filter's program into p: keep an exit record when the exiting
 * task is in one of the n directories (ids, levels, ctrl as
 * tr_taskstats_filter_cgroups found them) or below one; with v2_walk
 * cgroup2 directories are matched by walking the task's default cgroup
 * (kernel BTF's layout) instead of the cgroup-id helpers.
 */
static void build_filter (struct prog *p, size_t n, const uint64_t *ids,
                          const int *levels, const int *ctrl, bool v2_walk)
{
    bool v2 = false;

    int accept = new_label (p);

    /* cgroup2: r6 = the exiting task's cgroup2 id; accept it if it is one
     * of the directories, or if its ancestor at a directory's depth is
     * that directory
     */
    for (size_t i = 0; i < n && !v2; i++)
        v2 = ctrl[i] < 0;
    if (v2 && !v2_walk) {
        bpf_put (p->insn, &p->len, BPF_JMP | BPF_CALL, 0, 0, 0,
                 BPF_FUNC_get_current_cgroup_id);
        bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0);
        for (size_t i = 0; i < n; i++)
            if (ctrl[i] < 0) {
                bpf_ld64 (p->insn, &p->len, 1, ids[i]);
                jump (p, BPF_JEQ, 6, 1, 0, accept);
            }
        for (size_t i = 0; i < n; i++) {
            if (ctrl[i] >= 0 || levels[i] < 0)
                continue;
            bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0,
                     levels[i]);
            bpf_put (p->insn, &p->len, BPF_JMP | BPF_CALL, 0, 0, 0,
                     BPF_FUNC_get_current_ancestor_cgroup_id);
            bpf_ld64 (p->insn, &p->len, 1, ids[i]);
            jump (p, BPF_JEQ, 0, 1, 0, accept);
        }
    }

    /* cgroup v1, per controller: r7 = the exiting task's cgroup in that
     * hierarchy, r8 its level; per depth of a directory, r9 = the id of
     * its ancestor at that depth, compared with the directories there
     */
    for (size_t c = 0; c <= NV1; c++) {
        /* c == NV1: cgroup2 walked (v2_walk), as the task's dfl_cgrp */
        int want = c == NV1 ? -1 : (int)c;
        bool any = false;
        int next_c;

        if (c == NV1 && !v2_walk)
            break;
        for (size_t i = 0; i < n; i++)
            any = any || ctrl[i] == want;
        if (!any)
            continue;
        next_c = new_label (p);
        bpf_put (p->insn, &p->len, BPF_JMP | BPF_CALL, 0, 0, 0,
                 BPF_FUNC_get_current_task);
        bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_X, 3, 0, 0, 0);
        read_kernel (p, (int32_t)klay.task_cgroups, 8, 3, next_c);
        if (c == NV1)
            read_kernel (p, (int32_t)klay.set_dfl, 8, 7, next_c);
        else {
            read_kernel (p, (int32_t)(klay.set_subsys
                                      + 8 * (size_t)klay.subsys_id[c]),
                         8, 3, next_c);
            read_kernel (p, (int32_t)klay.css_cgroup, 8, 7, next_c);
        }
        if (c == NV1) {
            /* a directory of unknown depth: the task's own cgroup only */
            bool exact = false;

            for (size_t i = 0; i < n; i++)
                exact = exact || (ctrl[i] < 0 && levels[i] < 0);
            if (exact) {
                int past = new_label (p);

                bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_X, 3, 7,
                         0, 0);
                read_kernel (p, (int32_t)klay.cg_kn, 8, 3, past);
                read_kernel (p, (int32_t)klay.kn_id, 8, 9, past);
                for (size_t i = 0; i < n; i++)
                    if (ctrl[i] < 0 && levels[i] < 0) {
                        bpf_ld64 (p->insn, &p->len, 1, ids[i]);
                        jump (p, BPF_JEQ, 9, 1, 0, accept);
                    }
                set_label (p, past);
            }
        }
        bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_X, 3, 7, 0, 0);
        read_kernel (p, (int32_t)klay.cg_level, 4, 8, next_c);
        for (size_t i = 0; i < n; i++) {
            bool first = true;
            int next_l;

            if (ctrl[i] != want || levels[i] < 0)
                continue;
            for (size_t j = 0; j < i; j++)
                if (ctrl[j] == want && levels[j] == levels[i])
                    first = false;
            if (!first)
                continue; /* that depth is done */
            next_l = new_label (p);
            jump (p, BPF_JLT, 8, 0, levels[i], next_l); /* above it */
            bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_X, 3, 7, 0, 0);
            read_kernel (p, (int32_t)(klay.cg_ancestors
                                      + 8 * (size_t)levels[i]),
                         8, 3, next_l);
            read_kernel (p, (int32_t)klay.cg_kn, 8, 3, next_l);
            read_kernel (p, (int32_t)klay.kn_id, 8, 9, next_l);
            for (size_t j = i; j < n; j++)
                if (ctrl[j] == want && levels[j] == levels[i]) {
                    bpf_ld64 (p->insn, &p->len, 1, ids[j]);
                    jump (p, BPF_JEQ, 9, 1, 0, accept);
                }
            set_label (p, next_l);
        }
        set_label (p, next_c);
    }
    /* nothing matched: drop the record (0 bytes kept) */
    bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
    bpf_put (p->insn, &p->len, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    /* keep the whole record */
    set_label (p, accept);
    bpf_put (p->insn, &p->len, BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0x7fffffff);
    bpf_put (p->insn, &p->len, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    for (size_t i = 0; i < p->nfix; i++)
        p->insn[p->fix[i].at].off = (int16_t)(p->label[p->fix[i].label]
                                              - (long)p->fix[i].at - 1);
}

/* Load a socket filter: its descriptor, or -1 with errno. */
static int load_filter (const struct bpf_insn *insn, size_t len)
{
    union bpf_attr attr;

    memset (&attr, 0, sizeof (attr));
    attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    attr.insns = (uint64_t)(uintptr_t)insn;
    attr.insn_cnt = (uint32_t)len;
    attr.license = (uint64_t)(uintptr_t) "GPL";
    return (int)syscall (SYS_bpf, BPF_PROG_LOAD, &attr, sizeof (attr));
}

int tr_taskstats_filter_cgroups (tr_taskstats_t *ts,
                                 const char *const *dirs,
                                 size_t n,
                                 tr_error_t *error)
{
    struct bpf_insn insn[TR_TASKSTATS_FILTER_MAX * 40 + 64];
    struct prog *p = NULL;
    uint64_t ids[TR_TASKSTATS_FILTER_MAX];
    int levels[TR_TASKSTATS_FILTER_MAX], ctrl[TR_TASKSTATS_FILTER_MAX];
    bool v1 = false, v2 = false;
    int pfd;

    if (!ts || (n > 0 && !dirs)) {
        errno = EINVAL;
        tr_errprintf (error, "taskstats filter: invalid arguments");
        return -1;
    }
    if (n == 0) {
        int unused = 0; /* the option takes no value, but an int's room */
        if (setsockopt (ts->fd, SOL_SOCKET, SO_DETACH_BPF, &unused,
                        sizeof (unused))
                < 0
            && errno != ENOENT) {
            tr_errprintf (error, "taskstats filter: detach: %s",
                          strerror (errno));
            return -1;
        }
        return 0;
    }
    if (n > TR_TASKSTATS_FILTER_MAX) {
        errno = E2BIG;
        tr_errprintf (error, "taskstats filter: more than %d directories",
                      TR_TASKSTATS_FILTER_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct statfs sf;
        int rc;

        if (!dirs[i]) {
            errno = EINVAL;
            rc = -1;
        }
        else if ((rc = statfs (dirs[i], &sf)) == 0) {
            ctrl[i] = -1;
            if (sf.f_type == CGROUP2_SUPER_MAGIC)
                rc = cgroup2_id (dirs[i], &ids[i], &levels[i]);
            else if (sf.f_type == CGROUP_SUPER_MAGIC)
                rc = cgroup1_id (dirs[i], &ids[i], &ctrl[i], &levels[i]);
            else {
                errno = EINVAL;
                rc = -1;
            }
        }
        if (rc < 0) {
            tr_errprintf (error, "taskstats filter: %s: no cgroup id (%s)",
                          dirs[i] ? dirs[i] : "(null)", strerror (errno));
            return -1;
        }
        if (ctrl[i] >= 0)
            v1 = true;
        else
            v2 = true;
    }
    if (v1 && kernel_layout (error) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (ctrl[i] >= 0 && klay.subsys_id[ctrl[i]] < 0) {
            errno = ENOENT;
            tr_errprintf (error, "taskstats filter: %s: the kernel has no "
                          "%s controller", dirs[i],
                          v1_controllers[ctrl[i]].name);
            return -1;
        }
    if (!(p = calloc (1, sizeof (*p)))) {
        errno = ENOMEM;
        tr_errprintf (error, "taskstats filter: out of memory");
        return -1;
    }
    /* cgroup2 by the cgroup-id helpers where socket filters have them,
     * else (Debian 12's 6.1 answers EINVAL, "unknown func") by the
     * exiting task's default cgroup, read as v1's are
     */
    p->insn = insn;
    build_filter (p, n, ids, levels, ctrl,
                  v2 && tr_taskstats_v2_walk && kernel_layout (NULL) == 0);
    if ((pfd = load_filter (insn, p->len)) < 0 && errno == EINVAL && v2
        && kernel_layout (NULL) == 0) {
        memset (p, 0, sizeof (*p));
        p->insn = insn;
        build_filter (p, n, ids, levels, ctrl, true);
        pfd = load_filter (insn, p->len);
    }
    free (p);
    if (pfd < 0) {
        tr_errprintf (error, "taskstats filter: loading the program: %s",
                      strerror (errno));
        return -1;
    }
    if (setsockopt (ts->fd, SOL_SOCKET, SO_ATTACH_BPF, &pfd, sizeof (pfd))
        < 0) {
        int saved = errno;
        close (pfd);
        errno = saved;
        tr_errprintf (error, "taskstats filter: attaching: %s",
                      strerror (errno));
        return -1;
    }
    close (pfd); /* the socket holds the program */
    return 0;
}

/* True if the received part of the struct (len bytes) holds 'field'. */
#define HAS(len, field)                                                   \
    ((len) >= offsetof (struct taskstats, field)                          \
                  + sizeof (((struct taskstats *)0)->field))

/* Fill ev from a thread's record. */
static void fill_pid (struct tr_exit *ev,
                      const struct taskstats *s,
                      size_t len,
                      pid_t pid,
                      int64_t now_ms)
{
    uint64_t btime = s->ac_btime;
    int64_t lo;

    memset (ev, 0, sizeof (*ev));
    ev->aggr = TR_EXIT_PID;
    ev->version = s->version;
    ev->pid = pid;
    ev->ppid = (pid_t)s->ac_ppid;
    ev->uid = s->ac_uid;
    ev->gid = s->ac_gid;
    memcpy (ev->comm, s->ac_comm, sizeof (ev->comm) - 1);
    ev->exit_status = (int)s->ac_exitcode;
    ev->signaled = (s->ac_flag & ACCT_AXSIG) != 0;
    ev->core_dumped = (s->ac_flag & ACCT_ACORE) != 0;
    if (s->version >= 12 && HAS (len, ac_tgid) && s->ac_tgid != 0) {
        ev->tgid = (pid_t)s->ac_tgid;
        ev->group_exit = (s->ac_flag & ACCT_AGROUP) != 0;
    }
    else {
        /* No way to tell threads from processes: see taskstats.h. */
        ev->tgid = pid;
        ev->group_exit = true;
    }
    if (s->version >= 10 && HAS (len, ac_btime64) && s->ac_btime64 != 0)
        btime = s->ac_btime64;
    /* btime + whole elapsed seconds is the exit second (tsacct.c); the
     * receive time refines it unless the record waited in the queue.
     */
    lo = ((int64_t)btime + (int64_t)(s->ac_etime / 1000000)) * 1000;
    ev->end_unix_ms = now_ms < lo ? lo : now_ms > lo + 999 ? lo + 999
                                                           : now_ms;
    ev->start_unix_ms = ev->end_unix_ms - (int64_t)(s->ac_etime / 1000);
    ev->group_start_unix_ms = ev->start_unix_ms;
    if (s->version >= 12 && HAS (len, ac_tgetime) && s->ac_tgetime != 0)
        ev->group_start_unix_ms =
            ev->end_unix_ms - (int64_t)(s->ac_tgetime / 1000);
    ev->utime_us = s->ac_utime;
    ev->stime_us = s->ac_stime;
    ev->minflt = s->ac_minflt;
    ev->majflt = s->ac_majflt;
    ev->hiwater_rss_bytes = s->hiwater_rss * 1024;
    ev->io.rchar = s->read_char;
    ev->io.wchar = s->write_char;
    ev->io.syscr = s->read_syscalls;
    ev->io.syscw = s->write_syscalls;
    ev->io.read_bytes = s->read_bytes;
    ev->io.write_bytes = s->write_bytes;
    ev->io.cancelled_write_bytes = s->cancelled_write_bytes;
    if (HAS (len, nivcsw)) {
        ev->nvcsw = s->nvcsw;
        ev->nivcsw = s->nivcsw;
    }
    if (s->version >= 12 && HAS (len, ac_exe_inode)) {
        ev->exe_dev = s->ac_exe_dev;
        ev->exe_ino = s->ac_exe_inode;
    }
}

/* ac_utime and ac_stime are the split the scheduler tick sampled (with
 * tick-based accounting, the kernel default), off by a tick or more per
 * thread and by several percent for a thread that shares its CPU; so is
 * cpu_run_real_total, which delayacct_add_tsk() fills from the same
 * task_cputime().  cpu_run_virtual_total is the thread's exact run time
 * (se.sum_exec_runtime, ns), sent whenever the kernel has delay
 * accounting built in (CONFIG_TASK_DELAY_ACCT), switched on or not: the
 * CPU part of delayacct_add_tsk() runs before it looks at tsk->delays.
 * Scale the split to that total, as the kernel does for /proc/PID/stat
 * and getrusage() (cputime_adjust), so that a process's CPU time is what
 * its parent's getrusage(RUSAGE_CHILDREN) will say.  A thread that ran
 * has a non-zero pcount (cpu_count); without it, the tick split is all
 * there is and the event says it is not exact.
 */
static void precise_cpu (struct tr_exit *ev, const struct taskstats *s)
{
    uint64_t total, raw = ev->utime_us + ev->stime_us;

    ev->cpu_exact = false;
    if (s->cpu_count == 0 && s->cpu_run_virtual_total == 0)
        return;
    ev->cpu_exact = true;
    total = s->cpu_run_virtual_total / 1000;
    if (raw == 0) {
        ev->utime_us = total;
        ev->stime_us = 0;
        return;
    }
    ev->utime_us = (uint64_t)((long double)total * ev->utime_us / raw);
    ev->stime_us = total - ev->utime_us;
}

/* Delay totals, present in both aggregates.  A task that ran at all has
 * a non-zero pcount, so cpu_count == 0 means "not accounted".
 */
static void fill_delays (struct tr_exit *ev,
                         const struct taskstats *s,
                         size_t len)
{
    ev->delays = s->cpu_count > 0;
    ev->cpu_delay_ns = s->cpu_delay_total;
    ev->blkio_delay_ns = s->blkio_delay_total;
    ev->swapin_delay_ns = s->swapin_delay_total;
    if (HAS (len, freepages_delay_total))
        ev->freepages_delay_ns = s->freepages_delay_total;
    if (HAS (len, thrashing_delay_total))
        ev->thrashing_delay_ns = s->thrashing_delay_total;
}

/* Extract {PID|TGID, STATS} from an aggregate attribute. */
static int parse_aggr (const char *p,
                       size_t len,
                       uint16_t idtype,
                       pid_t *id,
                       struct taskstats *s,
                       size_t *slen)
{
    const char *a;
    size_t alen;
    uint32_t v;

    if (!(a = attr_find (p, len, idtype, &alen)) || alen < sizeof (v))
        return -1;
    memcpy (&v, a, sizeof (v));
    *id = (pid_t)v;
    if (!(a = attr_find (p, len, TASKSTATS_TYPE_STATS, &alen))
        || alen < offsetof (struct taskstats, ac_comm))
        return -1;
    *slen = alen < sizeof (*s) ? alen : sizeof (*s);
    if (*slen < sizeof (*s)) /* an older kernel's shorter record */
        memset (s, 0, sizeof (*s));
    memcpy (s, a, *slen);
    return 0;
}

/* Deliver the events of one TASKSTATS_CMD_NEW message.  Returns the
 * number delivered.
 */
static int deliver (const struct nlmsghdr *h, tr_exit_f cb, void *arg,
                    int64_t now_ms)
{
    const char *attrs = (const char *)NLMSG_DATA (h) + GENL_HDRLEN;
    size_t alen, plen, slen;
    const char *nest;
    struct taskstats s;
    struct tr_exit ev;
    pid_t id;
    int n = 0;

    if (h->nlmsg_len < NLMSG_LENGTH (GENL_HDRLEN))
        return 0;
    alen = h->nlmsg_len - NLMSG_LENGTH (GENL_HDRLEN);
    nest = attr_find (attrs, alen, TASKSTATS_TYPE_AGGR_PID, &plen);
    if (!nest || parse_aggr (nest, plen, TASKSTATS_TYPE_PID, &id, &s, &slen)
                     < 0
        || s.version == 0)
        return 0;
    fill_pid (&ev, &s, slen, id, now_ms);
    fill_delays (&ev, &s, slen);
    precise_cpu (&ev, &s);
    cb (&ev, arg);
    n++;

    nest = attr_find (attrs, alen, TASKSTATS_TYPE_AGGR_TGID, &plen);
    if (nest
        && parse_aggr (nest, plen, TASKSTATS_TYPE_TGID, &id, &s, &slen) == 0) {
        /* Identity and times from the last thread's record (ev); the
         * aggregate itself holds only delay totals (its version is 0).
         */
        struct tr_exit g;

        memset (&g, 0, sizeof (g));
        g.aggr = TR_EXIT_TGID;
        g.version = ev.version;
        g.pid = id;
        g.tgid = id;
        g.ppid = ev.ppid;
        g.uid = ev.uid;
        g.gid = ev.gid;
        memcpy (g.comm, ev.comm, sizeof (g.comm));
        g.group_exit = true;
        g.signaled = ev.signaled;
        g.core_dumped = ev.core_dumped;
        g.exit_status = ev.exit_status;
        g.start_unix_ms = ev.group_start_unix_ms;
        g.group_start_unix_ms = ev.group_start_unix_ms;
        g.end_unix_ms = ev.end_unix_ms;
        g.exe_dev = ev.exe_dev;
        g.exe_ino = ev.exe_ino;
        fill_delays (&g, &s, slen);
        cb (&g, arg);
        n++;
    }
    return n;
}

/* Deliver the events of one datagram (len bytes at buf). */
static int deliver_all (tr_taskstats_t *ts, const char *buf, size_t len,
                        tr_exit_f cb, void *arg, int64_t now_ms)
{
    const struct nlmsghdr *h;
    int count = 0;

    for (h = (const struct nlmsghdr *)buf; NLMSG_OK (h, len);
         h = NLMSG_NEXT (h, len)) {
        if (h->nlmsg_type != ts->family)
            continue; /* ACKs, NLMSG_DONE, NOOP */
        if (h->nlmsg_len >= NLMSG_LENGTH (GENL_HDRLEN)
            && ((const struct genlmsghdr *)NLMSG_DATA (h))->cmd
                   == TASKSTATS_CMD_NEW)
            count += deliver (h, cb, arg, now_ms);
    }
    return count;
}

/* Records are read BATCH to a system call: on a node where other jobs
 * start and end thousands of processes a second, the receive path, not
 * what is done with a record, is most of the listener's cost.
 */
int tr_taskstats_read (tr_taskstats_t *ts, tr_exit_f cb, void *arg)
{
    int count = 0, records = 0;

    if (!ts || !cb) {
        errno = EINVAL;
        return -1;
    }
    while (records < READ_MAX) {
        unsigned want = READ_MAX - records < BATCH
                            ? (unsigned)(READ_MAX - records)
                            : BATCH;
        int64_t now_ms;
        int n;

        for (unsigned i = 0; i < want; i++) {
            ts->iov[i].iov_base = ts->buf + (size_t)i * SLOT_BYTES;
            ts->iov[i].iov_len = SLOT_BYTES;
            memset (&ts->msgs[i], 0, sizeof (ts->msgs[i]));
            ts->msgs[i].msg_hdr.msg_iov = &ts->iov[i];
            ts->msgs[i].msg_hdr.msg_iovlen = 1;
        }
        n = recvmmsg (ts->fd, ts->msgs, want, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == ENOBUFS) {
                /* The kernel dropped records; the socket stays usable. */
                ts->lost++;
                continue;
            }
            return -1;
        }
        /* one clock reading a batch: the records waited in the queue
         * anyway, and fill_pid keeps each end within its exit second
         */
        now_ms = now_unix_ms ();
        for (int i = 0; i < n; i++) {
            records++;
            if (ts->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
                ts->lost++;
                continue;
            }
            count += deliver_all (ts, (const char *)ts->iov[i].iov_base,
                                  ts->msgs[i].msg_len, cb, arg, now_ms);
        }
        /* fewer than asked: the queue is empty (or an overrun is
         * pending, which the next read counts)
         */
        if ((unsigned)n < want)
            break;
    }
    /* records left: poll again at once */
    ts->due = records == READ_MAX ? 0
                                  : tr_when_monotonic () + TR_TASKSTATS_HOLD_S;
    return count;
}
