/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_KMSG_H
#define TRACER_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

/* Kernel evidence from the kernel log (/dev/kmsg).  A record read from
 * /dev/kmsg is "PRI,SEQ,TS_USEC,FLAGS;MESSAGE\n" followed by optional
 * continuation lines " KEY=VALUE\n".  Only records of facility 0 (the
 * kernel's own) are believed: a line a user process wrote to /dev/kmsg
 * carries its own facility (LOG_USER by default) and is ignored, whatever
 * it says.
 */

enum tr_kmsg_kind {
    TR_KMSG_NONE = 0,
    TR_KMSG_OOM_KILL,
    TR_KMSG_SEGFAULT,
    TR_KMSG_TRAP,
    TR_KMSG_HUNG_TASK,
    TR_KMSG_IO_ERROR,
    TR_KMSG_NFS,
    TR_KMSG_GPU_XID,
};

/* Bounds of what is kept. */
#define TR_KMSG_TEXT_MAX 256       /* escaped text, bytes (without NUL) */
#define TR_KMSG_LINE_MAX 8192      /* a record read: the kernel's most */
#define TR_KMSG_STEP_EVENTS 32     /* events kept per step, all kinds */
#define TR_KMSG_STEP_NODE_EVENTS 8 /* ... of which node-wide */

struct tr_kmsg_event {
    enum tr_kmsg_kind kind;
    uint64_t seq;
    uint64_t ts_usec;           /* kernel time of the line (since boot) */
    pid_t pid;                  /* the process it names, or 0 */
    char tool[64];              /* its name as the kernel says, or "" */
    int64_t rss_bytes;          /* oom-kill: anon+file+shmem, or -1 */
    char device[64];            /* io-error disk, nfs server, Xid PCI id */
    char memcg[256];            /* oom-kill: task_memcg, or "" */
    char oom_memcg[256];        /* oom-kill: oom_memcg, or "" */
    char text[TR_KMSG_TEXT_MAX + 1]; /* the message, escaped */
};

/* The kind's name in records ("oom-kill", "segfault", ...), or NULL. */
const char *tr_kmsg_kind_name (enum tr_kmsg_kind kind);

/* Whether events of this kind that name no process of a step concern
 * the whole node (io-error, nfs, gpu-xid).
 */
bool tr_kmsg_kind_nodewide (enum tr_kmsg_kind kind);

/* A parser: the OOM killer writes its victim's cgroups ("oom-kill:")
 * and its RSS ("Killed process") on two lines; the parser joins them.
 */
typedef struct tr_kmsg_parser {
    bool have_oom;
    uint64_t oom_seq;
    pid_t oom_pid;
    char oom_task[64];
    char oom_memcg[256];
    char oom_task_memcg[256];
} tr_kmsg_parser_t;

void tr_kmsg_parser_init (tr_kmsg_parser_t *p);

/* Parse one record (len bytes, not necessarily NUL-terminated, as one
 * read(2) of /dev/kmsg returns it).  Returns 1 with *ev filled when it is
 * a kernel event tracer keeps, 0 when it is not (another facility, a
 * line of no interest, the first half of an OOM report), -1 with errno =
 * EINVAL when the record is malformed.
 */
int tr_kmsg_parse (tr_kmsg_parser_t *p, const char *buf, size_t len,
                   struct tr_kmsg_event *ev);

/* The kernel time ts_usec as Unix milliseconds, given the clocks read
 * together now: now_unix_ms (CLOCK_REALTIME) and now_mono_usec
 * (CLOCK_MONOTONIC, which the kernel log's time follows).
 */
int64_t tr_kmsg_unix_ms (uint64_t ts_usec, int64_t now_unix_ms,
                         uint64_t now_mono_usec);

/* Whether the cgroup path memcg ("/slurm/uid_1/job_5/step_0/task_0", as
 * the kernel names it, relative to its hierarchy's root) is dir_rel or
 * below it.  dir_rel "" or "/" (the root) never matches.
 */
bool tr_kmsg_cgroup_within (const char *memcg, const char *dir_rel);

/* What a step is, for deciding whether an event concerns it: its cgroup
 * directories relative to their hierarchies' roots (as the kernel names
 * them; NULL when it has none), its processes at the last reading, and
 * those that ended lately.
 */
struct tr_kmsg_step {
    const char *memory_rel;     /* v1 memory controller directory */
    const char *unified_rel;    /* cgroup2 directory (not a mirror) */
    const pid_t *pids;
    size_t npids;
    const pid_t *gone;
    size_t ngone;
};

/* Whether ev concerns the step: the OOM victim's cgroup (task_memcg, or
 * the cgroup whose limit was hit, oom_memcg) is the step's or below it,
 * or the pid the line names is one of the step's processes.
 */
bool tr_kmsg_concerns (const struct tr_kmsg_event *ev,
                       const struct tr_kmsg_step *st);

/* The scope ev gets in a running step's record: "step" when it concerns
 * the step, "node" when it concerns no step at all and its kind is a
 * node-wide one (io-error, nfs, gpu-xid), else NULL (never attached).
 */
const char *tr_kmsg_scope (const struct tr_kmsg_event *ev, bool concerns,
                           bool concerns_any);

/* The event as a record's "events" element (scope "step" or "node"),
 * with t_unix_ms.  NULL with errno on allocation failure.
 */
json_t *tr_kmsg_event_json (const struct tr_kmsg_event *ev, const char *scope,
                            int64_t t_unix_ms);

/* Append ev to a record's events array (created when NULL): at most
 * TR_KMSG_STEP_EVENTS in all and TR_KMSG_STEP_NODE_EVENTS node-wide;
 * further events are counted in *dropped.  Returns 1 when kept, 0 when
 * dropped, -1 on allocation failure.
 */
int tr_kmsg_events_add (json_t **events, const struct tr_kmsg_event *ev,
                        const char *scope, int64_t t_unix_ms,
                        unsigned *dropped);

#endif /* !TRACER_KMSG_H */
