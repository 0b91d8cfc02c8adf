/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_CGROUP_H
#define TRACER_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "libtracer/util/error.h"

/* Where a step's counters live.  Paths are absolute host paths (without
 * the fsroot prefix) of cgroup directories; "" when absent.
 */
struct tr_cgroup_paths {
    char memory[PATH_MAX];    /* v1 memory controller directory */
    char cpuacct[PATH_MAX];   /* v1 cpuacct controller directory */
    char unified[PATH_MAX];   /* cgroup2 directory (v2 or hybrid tree) */
    bool unified_has_memory;  /* cgroup2 memory controller enabled there */
    bool unified_is_mirror;   /* unified is tracer's own directory */
    bool unified_delegated;   /* unified is a directory tracer-run made in
                               * a cgroup2 subtree delegated to the user */
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

/* The cgroup of a job that a batch system made (PBS pbs_cgroups
 * .../pbs_jobs.service/jobid/<jobid>, Torque .../torque/<jobid>/R0.t0,
 * LSF .../lsf/<cluster>/job.<id>.<n>.<epoch>[/leaf]), found from pid's
 * /proc/PID/cgroup, never built: each hierarchy's path is cut after its
 * first component equal to name or starting with name + ".", and a
 * hierarchy without one is left out.  1 when found, 0 when pid is in no
 * such cgroup, -1 on error.
 */
int tr_cgroup_job_paths (pid_t pid,
                         const char *name,
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

/* The same, on text already read (a tr_kept_read() buffer). */
int tr_cgroup_parse_u64 (const char *text, uint64_t *value);
int tr_cgroup_parse_key (const char *text, const char *key, uint64_t *value);
int tr_cgroup_parse_keys (const char *text,
                          const char *const *keys,
                          int64_t *values,
                          size_t n);

/* How the host's cgroups are laid out (tr_cgroup_host_layout). */
enum tr_cgroup_layout {
    TR_CGROUP_NONE = 0,   /* no cgroup hierarchy mounted */
    TR_CGROUP_V1 = 1,     /* v1 controllers only */
    TR_CGROUP_V2 = 2,     /* the unified hierarchy only */
    TR_CGROUP_HYBRID = 3, /* v1 controllers plus a cgroup2 tree */
};

/* The layout of this host's cgroups, from /proc/self/mountinfo: a v1
 * memory or cpuacct controller and/or a cgroup2 mount.  Never fails
 * (TR_CGROUP_NONE when mountinfo cannot be read).
 */
enum tr_cgroup_layout tr_cgroup_host_layout (void);

/* Its name: "none", "cgroup v1", "cgroup v2" or "hybrid". */
const char *tr_cgroup_layout_name (enum tr_cgroup_layout layout);

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

/* Whether the cgroup2 directory of pid (from /proc/PID/cgroup, at the
 * cgroup2 mount) is delegated to uid: the directory and its cgroup.procs
 * belong to uid and are writable by their owner, as systemd's
 * Delegate=yes or a site's setup leaves them (the kernel's delegation
 * model: a user may then make child directories there and move their
 * own processes between them).  On success the directory is left in
 * dir.  Returns 1 when delegated, 0 when not (error says why), or -1
 * with errno when there is no cgroup2 tree or the files cannot be
 * examined (ENOENT: no cgroup2 mount or no "0::" line).
 */
int tr_cgroup_delegation (pid_t pid,
                          uid_t uid,
                          char *dir,
                          size_t size,
                          tr_error_t *error);

/* Make <own>/<name>, where own is the caller's cgroup2 directory, when
 * that is delegated to uid (tr_cgroup_delegation).  A stale directory of
 * the same name is removed first, so counters start from zero.  The
 * caller moves its command in by writing its pid to cgroup.procs before
 * it execs, and removes the directory when the command is gone.  Sets
 * paths (cleared first) to the new directory: unified, unified_delegated,
 * and unified_has_memory when the parent's cgroup.subtree_control already
 * enables memory (controllers are never enabled here: the caller's own
 * directory holds processes, and cgroup2 refuses controllers to such a
 * directory's children with EBUSY).  name must be a single path
 * component.  Returns 0, or -1 with errno (EACCES when not delegated)
 * and error text.
 */
int tr_cgroup_delegate_create (const char *name,
                               uid_t uid,
                               struct tr_cgroup_paths *paths,
                               tr_error_t *error);

#endif /* !TRACER_CGROUP_H */
