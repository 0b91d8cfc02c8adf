/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_CGROUP_H
#define TRACER_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* Where a step's counters live.  Paths are absolute host paths (without
 * the fsroot prefix) of cgroup directories; "" when absent.
 */
struct tr_cgroup_paths {
    char memory[PATH_MAX];    /* v1 memory controller directory */
    char cpuacct[PATH_MAX];   /* v1 cpuacct controller directory */
    char unified[PATH_MAX];   /* cgroup2 directory (v2 or hybrid tree) */
    bool unified_has_memory;  /* cgroup2 memory controller enabled there */
};

/* Find the mount point of a v1 controller ("memory", "cpuacct") or of
 * the cgroup2 hierarchy (controller NULL) from /proc/self/mountinfo.
 * Returns 0 with the path in buf, or -1 with errno = ENOENT.
 */
int tr_cgroup_mountpoint (const char *controller, char *buf, size_t size);

/* Parse /proc/PID/cgroup text into step directories.  With strip_task,
 * a trailing Slurm task component is removed to reach the step: v1
 * ".../task_N" and v2 ".../user/task_N" (also task_special).  Paths are
 * never built from job ids: whatever the scheduler named its directories
 * (job_<id>, a Slurm 26 SLUID, lsf/<cluster>/job.<id>...) is kept.
 */
int tr_cgroup_parse (const char *text,
                     bool strip_task,
                     struct tr_cgroup_paths *out,
                     tr_error_t *error);

/* Read /proc/PID/cgroup (through the fsroot) and tr_cgroup_parse it. */
int tr_cgroup_resolve_pid (pid_t pid,
                           bool strip_task,
                           struct tr_cgroup_paths *out,
                           tr_error_t *error);

/* Read a single unsigned number from a cgroup file (fsroot applied).
 * "max" reads as UINT64_MAX.  Returns 0 or -1 with errno.
 */
int tr_cgroup_read_u64 (const char *dir, const char *file, uint64_t *value);

/* Read "key value" lines (cpu.stat, memory.stat, cpuacct.stat) and
 * return the value of key.  Returns 0, or -1 with errno = ENOENT when
 * the key is absent.
 */
int tr_cgroup_read_key (const char *dir,
                        const char *file,
                        const char *key,
                        uint64_t *value);

#endif /* !TRACER_CGROUP_H */
