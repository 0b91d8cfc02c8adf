/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_TASKSTATS_H
#define TRACER_TASKSTATS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "libtracer/util/error.h"
#include "iostat.h"

/* Exit notifications from Linux netlink taskstats: one record per exiting
 * thread, sent by the kernel before the task's memory is released, so
 * that processes much shorter than any sampling interval are still seen
 * with their final counters.  Registering needs CAP_NET_ADMIN in the
 * initial user and pid namespaces (root on the host).
 */
typedef struct tr_taskstats tr_taskstats_t;

/* Which aggregate of a netlink record an event carries. */
enum tr_exit_aggr {
    TR_EXIT_PID = 1,  /* TASKSTATS_TYPE_AGGR_PID: one thread */
    TR_EXIT_TGID = 2, /* TASKSTATS_TYPE_AGGR_TGID: a whole thread group */
};

/* One exit.
 *
 * Every exiting thread produces a TR_EXIT_PID event with that thread's own
 * counters (CPU, I/O, delays: never those of reaped children).  The last
 * thread of a process has group_exit set.  When a process had more than
 * one thread, its last exit also carries a TR_EXIT_TGID event, but the
 * kernel fills only the delay totals of that aggregate (summed over all
 * its threads); for it this module copies pid, identity, times and exit
 * status from the accompanying last-thread record and leaves the CPU,
 * memory and I/O counters at zero.  A process's own usage is therefore the
 * sum of its TR_EXIT_PID events.
 *
 * Kernels before taskstats version 12 (2022) send neither the thread
 * group id nor the last-thread flag: there tgid = pid and group_exit is
 * set on every record, so a thread's exit reads as a process exit.
 */
struct tr_exit {
    enum tr_exit_aggr aggr;
    unsigned version;  /* struct taskstats version of the record */
    pid_t pid;         /* thread id (PID) or thread group id (TGID) */
    pid_t tgid;        /* thread group (process) id */
    pid_t ppid;        /* parent process at exit (a reaper if orphaned) */
    uint32_t uid, gid;
    char comm[32];     /* task name, NUL-terminated (at most 15 bytes) */
    bool group_exit;   /* last thread: the process ended */
    bool signaled;     /* killed by a signal (AXSIG) */
    bool core_dumped;  /* dumped core (ACORE) */
    int exit_status;   /* as from waitpid(): WIFEXITED, WTERMSIG work */
    int64_t start_unix_ms;       /* the thread's start */
    int64_t group_start_unix_ms; /* the process's start (leader's) */
    int64_t end_unix_ms;         /* the exit */
    uint64_t utime_us, stime_us; /* own CPU time */
    uint64_t hiwater_rss_bytes;  /* peak RSS of the address space */
    struct tr_proc_io io;        /* own I/O, rounded down to 1 KiB */
    uint64_t minflt, majflt;
    uint64_t nvcsw, nivcsw;      /* voluntary, involuntary switches */
    /* Delay accounting (ns).  Filled only while the kernel keeps it
     * (delayacct boot option or sysctl kernel.task_delayacct=1); then
     * delays is true.  cpu_delay_ns is time spent runnable but waiting
     * for a CPU (run-queue wait).
     */
    bool delays;
    uint64_t cpu_delay_ns;
    uint64_t blkio_delay_ns;
    uint64_t swapin_delay_ns;
    uint64_t freepages_delay_ns;
    uint64_t thrashing_delay_ns;
    /* The executable (st_dev encoding, inode); 0 when unknown. */
    uint64_t exe_dev, exe_ino;
    /* utime_us + stime_us is the scheduler's exact run time of the
     * thread (cpu_run_virtual_total, split as the ticks fell); false
     * when the kernel sent only the tick-sampled split.
     */
    bool cpu_exact;
};

/* Callback for each event; the event is valid during the call only. */
typedef void (*tr_exit_f) (const struct tr_exit *ev, void *arg);

/* Open a taskstats listener: a generic-netlink socket (non-blocking,
 * close-on-exec, receive buffer enlarged with SO_RCVBUFFORCE when
 * permitted, else SO_RCVBUF), the TASKSTATS family resolved, and exit
 * notifications registered for every possible CPU (the list in
 * /sys/devices/system/cpu/possible; read from the real /sys, not the
 * fsroot, because the registration talks to the running kernel).
 * Returns NULL with errno and error text when taskstats is unavailable:
 * ENOENT (kernel without CONFIG_TASKSTATS), EPERM (not root), EINVAL
 * (inside a user or pid namespace), or a socket error.
 */
tr_taskstats_t *tr_taskstats_open (tr_error_t *error);

/* Deregister and close.  NULL is a no-op; errno is kept. */
void tr_taskstats_close (tr_taskstats_t *ts);

/* The socket (for poll(), see also tr_taskstats_poll_fd). */
int tr_taskstats_fd (tr_taskstats_t *ts);

/* Read every record available now, without blocking, and call cb for each
 * event (a record gives one or two).  A receive-buffer overrun (ENOBUFS:
 * the kernel dropped records) is counted, not an error.  At most a few
 * thousand records are read per call so that a flood cannot starve the
 * caller; poll again.  Returns the number of events delivered, or -1 with
 * errno on a socket error.
 */
int tr_taskstats_read (tr_taskstats_t *ts, tr_exit_f cb, void *arg);

/* Keep only the exits of processes in the given cgroup directories (or
 * below them), dropping the others in the kernel, before they are queued:
 * a socket filter (eBPF, BPF_PROG_TYPE_SOCKET_FILTER) that runs when the
 * exiting task sends its record.  For a cgroup2 directory it compares
 * that task's cgroup2 id, and its ancestor at the directory's depth, with
 * the directory's (with the cgroup-id helpers; where socket filters lack
 * them, as Debian 12's 6.1 does, by walking the task's default cgroup as
 * for v1, which needs the kernel's BTF); for a v1 directory (cpuacct, memory, pids, cpuset,
 * freezer or devices hierarchy) it reads the task's cgroup in that
 * hierarchy and its ancestor at the directory's depth from the kernel's
 * own structures, laid out as the running kernel's BTF
 * (/sys/kernel/btf/vmlinux) says, and compares its kernfs id, which is
 * the directory's inode number.  Every other job's exit then costs this
 * listener nothing.  Use it only where every process that may belong to
 * the listener's steps is in one of the directories (a command placed in
 * its own directory before it execs, a scheduler's step directory).
 * n = 0 removes the filter.  A replacement takes effect at once; records
 * already queued are delivered.  Returns 0, or -1 with errno and error
 * text, the listener then unchanged (every exit delivered): a directory
 * on no cgroup file system or of a v1 hierarchy not handled (EINVAL), or
 * with no id (what stat() or name_to_handle_at() said), more than
 * TR_TASKSTATS_FILTER_MAX directories (E2BIG), a v1 directory where the
 * kernel publishes no BTF or lacks a member the walk reads (ENOENT), or a
 * kernel that refuses the program (no BPF; EPERM without CAP_BPF or
 * CAP_SYS_ADMIN, or without CAP_PERFMON for a v1 directory; EINVAL where
 * socket filters may not call the cgroup or kernel-read helpers).
 * NULL ts: -1, EINVAL.
 */
#define TR_TASKSTATS_FILTER_MAX 64
/* true: cgroup2 directories are matched by the walk even where the
 * helpers are there (for tests: the way a 6.1 kernel takes)
 */
extern bool tr_taskstats_v2_walk;
int tr_taskstats_filter_cgroups (tr_taskstats_t *ts,
                                 const char *const *dirs,
                                 size_t n,
                                 tr_error_t *error);

/* Number of receive-buffer overruns so far (each lost one or more
 * records).
 */
uint64_t tr_taskstats_lost (tr_taskstats_t *ts);

/* The socket to poll (POLLIN) at now, a tr_when_monotonic() time, or -1
 * while reads are held; then *wake is lowered to when the hold ends.
 * After a read the socket is held for TR_TASKSTATS_HOLD_S, unless the
 * read stopped at its limit with records left.  Polling it at once would
 * wake the caller for every exit on the node (thousands a second under a
 * fork-heavy job, each a wakeup competing with the job for its CPUs);
 * held, the exits of a tenth of a second are read in one go.  The
 * receive buffer holds about 13,000 records (16 MiB at about 1.3 KiB
 * each, measured), so a hold of 0.1 s loses none below about 100,000
 * exits a second.  NULL ts: -1, *wake unchanged.
 */
#define TR_TASKSTATS_HOLD_S 0.1
int tr_taskstats_poll_fd (tr_taskstats_t *ts, double now, double *wake);

#endif /* !TRACER_TASKSTATS_H */
