/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_EXECS_H
#define TRACER_EXECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libtracer/util/error.h"
#include "libtracer/util/tools.h"

/* What each process of the steps was when it exec'd, from the kernel's
 * process connector (exec and comm-change events, root only): its
 * executable, and its tool as the rule table names it from its
 * arguments, read from /proc at the exec.  A process that lives less
 * than a sampling interval is never read by a scan; its exit record
 * carries only its comm, which it chooses itself (prctl PR_SET_NAME)
 * and which holds no argument.  With this, such a process is named as a
 * scan would have named it, and one that renamed itself after its exec
 * is named from its executable and arguments, with the name it gave
 * itself beside.
 *
 * Bounded: the newest TR_EXECS_MAX processes a "wanted" callback
 * accepts (a daemon: those in its steps' cgroups); the oldest go first.
 */
typedef struct tr_execs tr_execs_t;

#define TR_EXECS_MAX 4096

struct tr_exec_id {
    pid_t pid;                /* the process (thread group) */
    int64_t start_ms;         /* its start, wall clock (/proc starttime) */
    uint64_t exe_dev, exe_ino; /* its executable (st_dev, st_ino), or 0 */
    char tool[256];           /* its tool, by the rule table (tools.h) */
    char renamed[16];         /* the comm it gave itself after its exec,
                               * or "": as the process chose it (escape
                               * before showing it) */
};

/* Is pid a process to keep?  1 yes, 0 no, -1 cannot tell (not kept). */
typedef int (*tr_execs_wanted_f) (pid_t pid, void *arg);

struct tr_execs_opts {
    /* the site's tool naming rules (tools.h), NULL-terminated, copied */
    const char *const *tool_subcommands;
    const char *const *tool_interpreters;
    tr_execs_wanted_f wanted; /* NULL: every process */
    void *wanted_arg;
};

/* A cache that only learns what it is told (tr_execs_note_*).  NULL
 * with errno ENOMEM.
 */
tr_execs_t *tr_execs_create (const struct tr_execs_opts *opts);

/* The same, listening to the kernel's process connector: needs
 * CAP_NET_ADMIN and a kernel built with CONFIG_PROC_EVENTS.  NULL with
 * errno and error text (EPERM, EPROTONOSUPPORT, ENOMEM...).
 */
tr_execs_t *tr_execs_open (const struct tr_execs_opts *opts,
                           tr_error_t *error);

void tr_execs_close (tr_execs_t *e);

/* The listener's descriptor (poll for POLLIN), or -1. */
int tr_execs_fd (const tr_execs_t *e);

/* The descriptor to poll at now (a tr_when_monotonic() time), or -1
 * while reads are held; then *wake is lowered to when the hold ends.
 * After a read that took events the socket is held for
 * TR_EXECS_HOLD_S: a lone exec is read at once, while its process still
 * runs, but a burst (a fork-heavy job, thousands a second) wakes the
 * reader at most 1/TR_EXECS_HOLD_S times a second, not once per exec on
 * the CPUs the job needs.  A process of the burst that ends within the
 * hold is then named from its exit record alone.
 */
#define TR_EXECS_HOLD_S 0.01
int tr_execs_poll_fd (tr_execs_t *e, double now, double *wake);

/* Take every event waiting (never blocks).  Returns the events read, or
 * -1 with errno (a receive error other than an overrun).
 */
int tr_execs_read (tr_execs_t *e);

/* Events the kernel dropped because the listener fell behind. */
uint64_t tr_execs_lost (const tr_execs_t *e);

/* Learn pid, which has just exec'd: read /proc/PID (tr_fsroot applied)
 * for its start, executable, comm and, for a program the rule table
 * names from its arguments, its command line.  Returns 1 kept, 0 not
 * wanted or already gone, -1 with errno (ENOMEM).
 */
int tr_execs_note_exec (tr_execs_t *e, pid_t pid);

/* pid's thread tid set its comm to comm (a comm-change event): a thread
 * group leader that renames itself after its exec is marked renamed.
 * Other threads naming themselves ("worker-3") change nothing.
 */
void tr_execs_note_comm (tr_execs_t *e, pid_t tid, pid_t pid,
                         const char *comm);

/* The process pid that started at start_ms (within 2 s: the kernel's
 * exit records date a start to the second), or NULL.  Valid until the
 * next call that changes e.
 */
const struct tr_exec_id *tr_execs_find (const tr_execs_t *e, pid_t pid,
                                        int64_t start_ms);

#endif
