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
    bool unified_is_mirror;   /* unified is tracer's own directory */
};

/* Where tracer keeps its own cgroup2 directories on hybrid hosts. */
#define TR_CGROUP_MIRROR_DIR "tracer"

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

/* Resolve an explicit cgroup, named as in /proc/PID/cgroup (relative to
 * each hierarchy: "/lsf/cl1/job.42", "/pbs_jobs.service/jobid/7.srv"),
 * in every mounted hierarchy where that directory exists.  "..", "." and
 * empty components are refused.  Fails with ENOENT when it exists in no
 * hierarchy.
 */
int tr_cgroup_resolve_path (const char *rel,
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

/* Several keys of one "key value" file in a single read: values[i] is
 * set for each keys[i] found and left untouched otherwise.  Returns the
 * number found, or -1 with errno when the file cannot be read.
 */
int tr_cgroup_read_keys (const char *dir,
                         const char *file,
                         const char *const *keys,
                         int64_t *values,
                         size_t n);

/* On a hybrid host (v1 controllers plus a controller-less cgroup2 tree),
 * give a step a cgroup2 directory of its own, <cgroup2>/tracer/<name>,
 * and move pid into it: the kernel then keeps per-step pressure (PSI)
 * and CPU time there.  Called before the task execs, so it counts from
 * the start; its children inherit the directory.  name must be a single
 * path component.  Sets paths->unified and unified_is_mirror.
 */
int tr_cgroup_mirror_attach (const char *name,
                             pid_t pid,
                             struct tr_cgroup_paths *paths,
                             tr_error_t *error);

/* Remove tracer's cgroup2 directories that no process uses any more,
 * except those named in keep (n directory names, not paths).  Returns
 * the number removed.
 */
int tr_cgroup_mirror_sweep (const char *const *keep, size_t n);

#endif /* !TRACER_CGROUP_H */
