/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The maps the file-evidence BPF program (files.bpf.c) shares with
 * libtracer/node/bpffiles.c: their keys and values.  Included by both, so
 * only fixed-size kernel types (__u32, __u64, ...).
 */
#ifndef TRACER_BPF_FILES_H
#define TRACER_BPF_FILES_H

#define TR_FILES_SLOTS 64    /* steps followed at once */
#define TR_FILES_PATH 256    /* a path an open named (cut there) */
#define TR_FILES_COMM 16     /* the task's command name (comm) */
#define TR_FILES_NCOMP 16    /* components of a file's path kept */
#define TR_FILES_NAME 48     /* ... each cut there */
#define TR_FILES_DEPTH 16    /* cgroup levels looked up from a task's */

/* Hierarchies (the bits of hier_mask and the 'hier' of a cgroup key) */
#define TR_FILES_HIER_V2 0      /* the cgroup2 (default) hierarchy */
#define TR_FILES_HIER_CPUACCT 1 /* v1 cpuacct */
#define TR_FILES_HIER_MEMORY 2  /* v1 memory */
#define TR_FILES_NHIER 3

#define TR_FILES_OP_READ 1
#define TR_FILES_OP_WRITE 2

/* The call of a failed lookup (the 'call' of its key) */
#define TR_FILES_CALL_OPEN 1   /* open, openat, creat, openat2 */
#define TR_FILES_CALL_STAT 2   /* stat, lstat, newfstatat, statx */
#define TR_FILES_CALL_ACCESS 3 /* access, faccessat, faccessat2 */

/* A process acted on its last failed lookup when at most this many
 * successful lookups by name followed it before it ended (the error
 * report's own reads); one that carried on past it did not.
 */
#define TR_FILES_ACTED_AFTER 16

/* cgroups: a step's cgroup directory (its kernfs id, the directory's
 * inode number) -> its slot
 */
struct tr_fcg_key {
    __u32 hier;
    __u32 pad;
    __u64 id;
};

/* failed_opens: -> a count */
struct tr_fopen_key {
    __u32 slot;
    __s16 err;                  /* positive errno */
    __u16 call;                 /* TR_FILES_CALL_* */
    char comm[TR_FILES_COMM];
    char path[TR_FILES_PATH];
};

/* acted: (slot, tr_files_key_hash of a failed_opens key) -> how many
 * processes ended on that failed lookup: their last one (or the one
 * before a last that a search of another name made), which no
 * successful lookup of the same last component followed, and after
 * which at most TR_FILES_ACTED_AFTER successful lookups of anything
 */
struct tr_facted_key {
    __u32 slot;
    __u32 pad;
    __u64 hash;
};

/* FNV-1a over the bytes of a failed_opens key (the kernel part and
 * userspace hash the same zero-filled struct)
 */
#define TR_FILES_FNV_BASIS 14695981039346656037ULL
#define TR_FILES_FNV_PRIME 1099511628211ULL

/* io_errors: -> a count */
struct tr_fio_key {
    __u32 slot;
    __u16 op;
    __s16 err;
    char comm[TR_FILES_COMM];
    __u64 dev;
    __u64 ino;
};

/* bytes: (slot, file) -> bytes read and written (regular files) */
struct tr_fbytes_key {
    __u32 slot;
    __u32 pad;
    __u64 dev;
    __u64 ino;
};

struct tr_fbytes_val {
    __u64 rbytes;
    __u64 wbytes;
};

/* names: file -> its path, leaf first; complete when it reached the
 * root (else the leading components are missing)
 */
struct tr_fname_key {
    __u64 dev;
    __u64 ino;
};

struct tr_fname_val {
    __u32 n;
    __u32 complete;
    char comp[TR_FILES_NCOMP][TR_FILES_NAME];
};

#endif /* !TRACER_BPF_FILES_H */
