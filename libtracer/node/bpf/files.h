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
    __s32 err;                  /* positive errno */
    char comm[TR_FILES_COMM];
    char path[TR_FILES_PATH];
};

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
