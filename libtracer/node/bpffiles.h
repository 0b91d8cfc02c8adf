/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * File evidence from eBPF: per step, the files its processes failed to
 * open, the reads and writes that failed with EIO, ENOSPC or EDQUOT and
 * the files it read and wrote most (the record's "files" member,
 * doc/record-format.md).  The kernel part (libtracer/bpf/files.bpf.c,
 * built in when configure found clang, bpftool and libbpf) counts in BPF
 * maps, only for tasks in a followed step's cgroup; tr_files_step merges
 * a step's counts into the member.
 */
#ifndef TRACER_BPFFILES_H
#define TRACER_BPFFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "libtracer/util/error.h"

#define TR_FILES_TOP_ERRORS 16 /* failed_opens, io_errors */
#define TR_FILES_TOP_BYTES 5   /* top_read, top_written */

/* Merging (no kernel needed): entries with the same path, errno and
 * tool (and op) add up; the member keeps the top ones by count or bytes.
 */
typedef struct tr_files_agg tr_files_agg_t;

tr_files_agg_t *tr_files_agg_new (void);
void tr_files_agg_free (tr_files_agg_t *agg);

/* The call of a failed lookup by name (the values of bpf/files.h) */
typedef enum {
    TR_FILES_OPEN = 1,   /* open, openat, creat, openat2 */
    TR_FILES_STAT = 2,   /* stat, lstat, newfstatat, statx */
    TR_FILES_ACCESS = 3, /* access, faccessat, faccessat2 */
} tr_files_call_t;

/* A failed lookup (call) of path with positive errno err by tool, count
 * times, acted of them the last the process made before it ended (see
 * doc/record-format.md, "acted"); the C library's own probes are left out
 * as for tr_files_agg_open.  0, or -1 with errno EINVAL or ENOMEM.
 */
int tr_files_agg_lookup (tr_files_agg_t *agg, tr_files_call_t call,
                         const char *path, int err, const char *tool,
                         uint64_t count, uint64_t acted);

/* A failed open of path with positive errno err by tool, count times
 * (left out: the C library's own probes of locale files, gconv modules
 * and glibc-hwcaps library directories, which fail in every program).
 * 0, or -1 with errno EINVAL (NULL path or tool, err <= 0) or ENOMEM.
 */
int tr_files_agg_open (tr_files_agg_t *agg, const char *path, int err,
                       const char *tool, uint64_t count);

/* A failed read (write false) or write with positive errno err; path
 * NULL where not known.  0, or -1 with errno EINVAL or ENOMEM.
 */
int tr_files_agg_ioerr (tr_files_agg_t *agg, bool write, int err,
                        const char *tool, const char *path, uint64_t count);

/* Bytes read and written from a file.  0, or -1 with errno EINVAL or
 * ENOMEM.
 */
int tr_files_agg_bytes (tr_files_agg_t *agg, const char *path,
                        uint64_t rbytes, uint64_t wbytes);

/* The member: {"source": "ebpf", "read_bytes": R, "written_bytes": W,
 * "failed_opens": [...], "io_errors": [...], "top_read": [...],
 * "top_written": [...]}, each sorted by count (bytes), then path;
 * read_bytes and written_bytes are the totals over every regular file;
 * top_read and top_written leave out files with 0 bytes.  NULL with errno ENOMEM.
 */
json_t *tr_files_agg_json (const tr_files_agg_t *agg);

/* {"source": "none", "reason": reason}; NULL with errno ENOMEM. */
json_t *tr_files_none (const char *reason);

/* "ENOENT" for ENOENT and the like, else "E<number>" in buf. */
const char *tr_files_errno_name (int err, char *buf, size_t size);

/* The kernel part. */
typedef struct tr_files tr_files_t;

/* Load and attach the BPF programs: fexit programs on the kernel's open,
 * read and write functions, else, only with costly (sampling.ebpf:
 * true), the raw syscall-exit tracepoint, which every system call of the
 * node pays for (a kernel in lockdown refuses fexit).  NULL with errno
 * and the reason in error: ENOTSUP when built without eBPF support, else
 * as the kernel refused (EPERM not root or lockdown, ENOENT no BTF, ...).
 */
tr_files_t *tr_files_open (bool costly, tr_error_t *error);
void tr_files_close (tr_files_t *f);

/* Which programs were loaded: "fexit" or "tp_btf/sys_exit". */
const char *tr_files_how (const tr_files_t *f);

/* Follow step key: the tasks in dirs (cgroup directories, cgroup2 or v1
 * cpuacct or memory; any other is skipped) and below them count for it.
 * Calling it again for a followed step replaces its directories.  0, or
 * -1 with errno ENOSPC (TR_FILES_SLOTS steps followed) or as the kernel
 * refused, and error set; none of dirs usable: -1 with errno ENOENT.
 */
int tr_files_watch (tr_files_t *f, const char *key,
                    const char *const *dirs, size_t n, tr_error_t *error);

/* Whether step key is followed. */
bool tr_files_watching (const tr_files_t *f, const char *key);

/* The member for step key, from what the kernel counted so far.  NULL
 * with errno ENOENT (not followed) or ENOMEM.
 */
json_t *tr_files_step (tr_files_t *f, const char *key, tr_error_t *error);

/* Stop following step key and drop its counts. */
void tr_files_unwatch (tr_files_t *f, const char *key);

/* Stop following every step whose key is not among keys[0..n-1]. */
void tr_files_retain (tr_files_t *f, const char *const *keys, size_t n);

#endif /* !TRACER_BPFFILES_H */
