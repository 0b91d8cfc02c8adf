/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_IOSTAT_H
#define TRACER_IOSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

/* Per-process I/O counters as /proc/PID/io and taskstats report them
 * (bytes, and read/write system calls).
 */
struct tr_proc_io {
    uint64_t rchar, wchar;         /* bytes through read/write calls */
    uint64_t syscr, syscw;         /* read/write system calls */
    uint64_t read_bytes;           /* bytes fetched from storage */
    uint64_t write_bytes;          /* bytes sent to storage (at dirtying) */
    uint64_t cancelled_write_bytes;
};

/* Devices kept per snapshot; further devices are dropped (truncated). */
#define TR_IOSTAT_MAX_DEVICES 128

/* Block I/O counters of one device of a cgroup (cumulative). */
struct tr_iostat_dev {
    unsigned int major, minor;
    uint64_t read_bytes, write_bytes;
    uint64_t read_ops, write_ops;
};

/* A snapshot of a cgroup's block I/O counters, one entry per device in
 * the order the kernel lists them.
 */
struct tr_iostat {
    size_t count;   /* entries used in dev[] */
    bool truncated; /* the file listed more than TR_IOSTAT_MAX_DEVICES */
    struct tr_iostat_dev dev[TR_IOSTAT_MAX_DEVICES];
};

/* Parse cgroup v2 io.stat text, one line per device:
 *     8:16 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6
 * Keys may come in any order; unknown keys (dbytes, cost.*, ...) are
 * ignored; rbytes, wbytes, rios and wios are required.  Empty text is a
 * cgroup without I/O (count 0).  Returns 0, or -1 with errno = EINVAL
 * (malformed device, missing key, non-numeric or duplicate value) or
 * ERANGE (a value beyond 64 bits); out is untouched on failure.
 */
int tr_iostat_parse_v2 (const char *text, struct tr_iostat *out);

/* Parse cgroup v1 blkio.throttle.io_service_bytes (bytes_text) and
 * blkio.throttle.io_serviced (ops_text, may be NULL: ops stay 0):
 *     8:0 Read 16777216
 *     8:0 Write 0
 *     8:0 Sync 0 ... Async, Discard, Total
 *     Total 16777216
 * Read and Write are used, other operations and the final "Total N"
 * line are checked for a number and ignored.  Devices of both files
 * are merged.  Returns 0 or -1 with errno as tr_iostat_parse_v2.
 */
int tr_iostat_parse_v1 (const char *bytes_text,
                        const char *ops_text,
                        struct tr_iostat *out);

/* Read <dir>/io.stat (v2) or <dir>/blkio.throttle.io_service_bytes and
 * io_serviced (v1; dir is the blkio controller directory) through the
 * fsroot and parse them.  Returns 0, or -1 with errno from open/read,
 * EFBIG for an oversized file, or from the parser.
 */
int tr_iostat_read_v2 (const char *dir, struct tr_iostat *out);
int tr_iostat_read_v1 (const char *dir, struct tr_iostat *out);

/* Sum read and write bytes over the devices of a snapshot (saturating;
 * for rates in series).  Either output may be NULL.
 */
void tr_iostat_totals (const struct tr_iostat *io,
                       uint64_t *read_bytes,
                       uint64_t *write_bytes);

/* Parse /proc/PID/io text ("rchar: N" lines).  All seven fields of
 * struct tr_proc_io are required, unknown lines are ignored.  Returns 0,
 * or -1 with errno = EINVAL or ERANGE; out is untouched on failure.
 */
int tr_iostat_parse_proc (const char *text, struct tr_proc_io *out);

/* Read /proc/<pid>/io through the fsroot and parse it.  Returns 0 or -1
 * with errno (ENOENT: the process is gone; EACCES: no ptrace access).
 */
int tr_iostat_read_proc (pid_t pid, struct tr_proc_io *out);

/* Build summary.io:
 *     {"source": source, "read_bytes", "write_bytes", "read_ops",
 *      "write_ops", "devices": [{"device": "MAJ:MIN", "read_bytes",
 *      "write_bytes", "read_ops", "write_ops"}, ...],
 *      "proc": {"source": proc_source, "exact": proc_exact, "rchar",
 *      "wchar", "syscr", "syscw", "read_bytes", "write_bytes",
 *      "cancelled_write_bytes"}}
 * Every device of end is listed with end - start: a device only in end
 * counts from 0, a counter that went backwards gives 0.  Totals are the
 * sums of the device rows.  start and end may be NULL (no snapshot,
 * e.g. source "none": empty device list, zero totals).  proc holds the
 * step's process totals as the caller computed them; NULL leaves "proc"
 * out (proc_source is then ignored).  Returns a new reference, or NULL
 * with errno = EINVAL (NULL source, or proc without proc_source) or
 * ENOMEM.
 */
json_t *tr_iostat_json (const char *source,
                        const struct tr_iostat *start,
                        const struct tr_iostat *end,
                        const struct tr_proc_io *proc,
                        const char *proc_source,
                        bool proc_exact);

#endif /* !TRACER_IOSTAT_H */
