/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * File evidence of the followed steps (libtracer/node/bpffiles.c loads it):
 * the opens that failed, the reads and writes that failed with EIO,
 * ENOSPC or EDQUOT, and the bytes read and written per regular file, of
 * the tasks in a followed step's cgroup (any of its ancestors in the
 * cgroup2, v1 cpuacct or v1 memory hierarchy is in the cgroups map).
 * Every other task's event is dropped here.  Two ways in, neither needing
 * tracefs: fexit programs on the kernel's open, read and write functions
 * (only those calls pay), else, where the kernel refuses them (lockdown),
 * the raw syscall-exit tracepoint (every system call pays its dispatch).
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "files.h"

char LICENSE[] SEC ("license") = "GPL";

#define EIO_ 5
#define ENOSPC_ 28
#define EDQUOT_ 122
#define S_IFMT_ 0170000
#define S_IFREG_ 0100000

/* The hierarchies that have a step directory (bit 1 << TR_FILES_HIER_*),
 * set by userspace: none, nothing is looked up.
 */
__u32 hier_mask = 0;

struct {
    __uint (type, BPF_MAP_TYPE_HASH);
    __uint (max_entries, TR_FILES_SLOTS * 4);
    __type (key, struct tr_fcg_key);
    __type (value, __u32);
} cgroups SEC (".maps");

struct {
    __uint (type, BPF_MAP_TYPE_HASH);
    __uint (max_entries, 4096);
    __type (key, struct tr_fopen_key);
    __type (value, __u64);
} failed_opens SEC (".maps");

struct {
    __uint (type, BPF_MAP_TYPE_HASH);
    __uint (max_entries, 1024);
    __type (key, struct tr_fio_key);
    __type (value, __u64);
} io_errors SEC (".maps");

struct {
    __uint (type, BPF_MAP_TYPE_HASH);
    __uint (max_entries, 16384);
    __type (key, struct tr_fbytes_key);
    __type (value, struct tr_fbytes_val);
} bytes SEC (".maps");

struct {
    __uint (type, BPF_MAP_TYPE_LRU_HASH);
    __uint (max_entries, 8192);
    __type (key, struct tr_fname_key);
    __type (value, struct tr_fname_val);
} names SEC (".maps");

/* Each task's step as last looked up: valid while the generation (bumped
 * by userspace at every change of the cgroups map) and the task's
 * css_set (which changes when it moves to another cgroup) are the same.
 * A lookup walks up to TR_FILES_DEPTH cgroups in three hierarchies; this
 * makes it once per task and move, not once per system call.
 */
__u64 generation = 0;

struct tcache {
    __u64 generation;
    __u64 css_set;
    __s32 slot;
    __u32 pad;
};

struct {
    __uint (type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint (map_flags, BPF_F_NO_PREALLOC);
    __type (key, int);
    __type (value, struct tcache);
} tasks SEC (".maps");

/* scratch space (too large for the stack) */
struct {
    __uint (type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint (max_entries, 1);
    __type (key, __u32);
    __type (value, struct tr_fopen_key);
} open_scratch SEC (".maps");

struct {
    __uint (type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint (max_entries, 1);
    __type (key, __u32);
    __type (value, struct tr_fname_val);
} name_scratch SEC (".maps");

/* The slot of the step whose directory in hierarchy hier is cg or one
 * of its ancestors (the root left out), or -1.  Global functions are
 * verified once, not at every call.
 */
__noinline int in_step (__u64 cgp, __u32 hier)
{
    struct cgroup *cg = (struct cgroup *)cgp;
    struct tr_fcg_key k = { .hier = hier };
    int level;

    if (!cg)
        return -1;
    level = BPF_CORE_READ (cg, level);
    for (int i = 0; i < TR_FILES_DEPTH; i++) {
        struct cgroup *a = NULL;
        __u32 *s;
        int l = level - i;

        if (l < 1 || l > 255)
            break;
        if (bpf_core_read (&a, sizeof (a), &cg->ancestors[l]) || !a)
            break;
        k.id = BPF_CORE_READ (a, kn, id);
        if ((s = bpf_map_lookup_elem (&cgroups, &k)))
            return (int)*s;
    }
    return -1;
}

static __always_inline struct cgroup *v1_cgroup (struct css_set *cs, int id)
{
    struct cgroup_subsys_state *css = NULL;

    if (id < 0 || id >= 16)
        return NULL;
    if (bpf_core_read (&css, sizeof (css), &cs->subsys[id]) || !css)
        return NULL;
    return BPF_CORE_READ (css, cgroup);
}

/* The slot of the current task's step, or -1. */
__noinline int step_of (void)
{
    struct task_struct *t = (struct task_struct *)bpf_get_current_task ();
    struct css_set *cs = BPF_CORE_READ (t, cgroups);
    __u32 mask = hier_mask;
    int s;

    if (!cs)
        return -1;
    if ((mask & (1u << TR_FILES_HIER_V2))
        && (s = in_step ((__u64)BPF_CORE_READ (cs, dfl_cgrp),
                         TR_FILES_HIER_V2)) >= 0)
        return s;
    if ((mask & (1u << TR_FILES_HIER_CPUACCT))
        && bpf_core_enum_value_exists (enum cgroup_subsys_id, cpuacct_cgrp_id)
        && (s = in_step ((__u64)v1_cgroup (cs, bpf_core_enum_value (
                             enum cgroup_subsys_id, cpuacct_cgrp_id)),
                         TR_FILES_HIER_CPUACCT)) >= 0)
        return s;
    if ((mask & (1u << TR_FILES_HIER_MEMORY))
        && bpf_core_enum_value_exists (enum cgroup_subsys_id, memory_cgrp_id)
        && (s = in_step ((__u64)v1_cgroup (cs, bpf_core_enum_value (
                             enum cgroup_subsys_id, memory_cgrp_id)),
                         TR_FILES_HIER_MEMORY)) >= 0)
        return s;
    return -1;
}

/* The path of the file's dentry, leaf first, into names (once per file):
 * up its dentries, across mounts to the root, a step per bpf_loop round
 * (verified once, not per round).
 */
struct walk {
    struct dentry *d;
    struct mount *m;
    __u32 n;
};

static long walk_step (__u32 i, void *ctx)
{
    struct walk *w = ctx;
    struct dentry *d = w->d, *root, *parent;
    struct mount *m = w->m;
    struct tr_fname_val *v;
    __u32 zero = 0, n = w->n;

    (void)i;
    if (!(v = bpf_map_lookup_elem (&name_scratch, &zero)))
        return 1;
    root = BPF_CORE_READ (m, mnt.mnt_root);
    parent = BPF_CORE_READ (d, d_parent);
    if (d == root || d == parent) {
        struct mount *mp = BPF_CORE_READ (m, mnt_parent);
        if (mp == m || !mp) {
            v->complete = 1;
            return 1;
        }
        w->d = BPF_CORE_READ (m, mnt_mountpoint);
        w->m = mp;
        return 0;
    }
    if (n >= TR_FILES_NCOMP)
        return 1;
    bpf_probe_read_kernel_str (v->comp[n & (TR_FILES_NCOMP - 1)],
                               TR_FILES_NAME, BPF_CORE_READ (d, d_name.name));
    w->n = n + 1;
    w->d = parent;
    return 0;
}

static __noinline int name_file (__u64 fp, __u64 dev, __u64 ino)
{
    struct file *f = (struct file *)fp;
    struct tr_fname_key fk = { .dev = dev, .ino = ino };
    struct tr_fname_val *v;
    struct vfsmount *vm;
    struct walk w = { 0 };
    __u32 zero = 0;

    if (!f || bpf_map_lookup_elem (&names, &fk))
        return 0;
    if (!(v = bpf_map_lookup_elem (&name_scratch, &zero)))
        return 0;
    v->complete = 0;
    w.d = BPF_CORE_READ (f, f_path.dentry);
    vm = BPF_CORE_READ (f, f_path.mnt);
    w.m = (struct mount *)((char *)vm
                           - bpf_core_field_offset (struct mount, mnt));
    bpf_loop (TR_FILES_NCOMP + 8, walk_step, &w, 0);
    v->n = w.n;
    bpf_map_update_elem (&names, &fk, v, BPF_NOEXIST);
    return 0;
}

static __always_inline int on_open (__u32 slot, const char *upath, long ret)
{
    struct tr_fopen_key *k;
    __u32 zero = 0;
    __u64 one = 1, *c;

    if (!(k = bpf_map_lookup_elem (&open_scratch, &zero)))
        return 0;
    __builtin_memset (k, 0, sizeof (*k));
    k->slot = slot;
    k->err = (__s32)-ret;
    bpf_get_current_comm (k->comm, sizeof (k->comm));
    if (bpf_probe_read_user_str (k->path, sizeof (k->path), upath) < 0)
        return 0;
    if ((c = bpf_map_lookup_elem (&failed_opens, k)))
        __sync_fetch_and_add (c, 1);
    else
        bpf_map_update_elem (&failed_opens, k, &one, BPF_NOEXIST);
    return 0;
}

/* A read or write of f that moved ret bytes or failed with -ret.  f is
 * read with CO-RE loads: it is a BTF pointer in fexit programs, a plain
 * one read from the descriptor table in the system-call way.
 */
static __always_inline int on_file_rw (__u32 slot, struct file *f, int op,
                                       long ret)
{
    struct tr_fname_key fk;
    struct inode *ino;

    if (!f || !(ino = BPF_CORE_READ (f, f_inode)))
        return 0;
    if (ret > 0 && (BPF_CORE_READ (ino, i_mode) & S_IFMT_) != S_IFREG_)
        return 0;
    fk.dev = BPF_CORE_READ (ino, i_sb, s_dev);
    fk.ino = BPF_CORE_READ (ino, i_ino);
    if (ret > 0) {
        struct tr_fbytes_key bk = { .slot = slot, .dev = fk.dev,
                                    .ino = fk.ino };
        struct tr_fbytes_val *bv, nv = { 0, 0 };

        if ((bv = bpf_map_lookup_elem (&bytes, &bk))) {
            if (op == TR_FILES_OP_READ)
                __sync_fetch_and_add (&bv->rbytes, ret);
            else
                __sync_fetch_and_add (&bv->wbytes, ret);
            return 0;
        }
        if (op == TR_FILES_OP_READ)
            nv.rbytes = ret;
        else
            nv.wbytes = ret;
        if (bpf_map_update_elem (&bytes, &bk, &nv, BPF_NOEXIST) == 0)
            name_file ((__u64)f, fk.dev, fk.ino);
        else if ((bv = bpf_map_lookup_elem (&bytes, &bk))) {
            __sync_fetch_and_add (&bv->rbytes, nv.rbytes);
            __sync_fetch_and_add (&bv->wbytes, nv.wbytes);
        }
        return 0;
    }
    {
        struct tr_fio_key k;
        __u64 one = 1, *c;

        __builtin_memset (&k, 0, sizeof (k));
        k.slot = slot;
        k.op = op;
        k.err = (__s16)-ret;
        k.dev = fk.dev;
        k.ino = fk.ino;
        bpf_get_current_comm (k.comm, sizeof (k.comm));
        if ((c = bpf_map_lookup_elem (&io_errors, &k)))
            __sync_fetch_and_add (c, 1);
        else
            bpf_map_update_elem (&io_errors, &k, &one, BPF_NOEXIST);
        name_file ((__u64)f, fk.dev, fk.ino);
    }
    return 0;
}

/* A read or write of descriptor fd of task t that moved ret bytes or
 * failed with -ret (the system-call way): its file, then on_file_rw.
 */
static __always_inline int on_rw (struct task_struct *t, __u32 slot,
                                  unsigned long fd, int op, long ret)
{
    struct files_struct *files;
    struct file **arr = NULL;
    struct file *f = NULL;
    struct fdtable *fdt;

    /* direct (fault-safe) loads through the task's BTF-typed pointers */
    if (!(files = t->files) || !(fdt = files->fdt) || fd >= fdt->max_fds
        || !(arr = fdt->fd))
        return 0;
    if (bpf_probe_read_kernel (&f, sizeof (f), &arr[fd]) || !f)
        return 0;
    return on_file_rw (slot, f, op, ret);
}

/* The current task's step slot, or -1: from its cache entry while that
 * is valid, else looked up (step_of) and cached.
 */
static __always_inline int current_slot (void)
{
    struct task_struct *t = bpf_get_current_task_btf ();
    __u64 cs = (__u64)t->cgroups;
    struct tcache *c;
    int slot;

    c = bpf_task_storage_get (&tasks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (c && c->generation == generation && c->css_set == cs)
        return c->slot;
    slot = step_of ();
    if (c) {
        c->generation = generation;
        c->css_set = cs;
        c->slot = slot;
    }
    return slot;
}

static __always_inline int rw_exit (struct file *f, int op, long ret)
{
    int slot;

    if (ret == 0 || !hier_mask)
        return 0;
    if (ret < 0 && ret != -EIO_
        && (op == TR_FILES_OP_READ || (ret != -ENOSPC_ && ret != -EDQUOT_)))
        return 0;
    /* bytes are counted for regular files only: a read of a pipe, a
     * socket or /dev/zero costs two loads (f is a trusted BTF pointer
     * here), not the task's step lookup
     */
    if (ret > 0) {
        struct inode *ino = f ? f->f_inode : NULL;

        if (!ino || (ino->i_mode & S_IFMT_) != S_IFREG_)
            return 0;
    }
    if ((slot = current_slot ()) < 0)
        return 0;
    return on_file_rw ((__u32)slot, f, op, ret);
}

/* The raw syscall-exit tracepoint (BTF-typed: no tracefs), where the
 * kernel refuses fexit programs (lockdown): every system call of the node
 * runs it, so it filters on the call number first.  x86-64 numbers.
 */
SEC ("tp_btf/sys_exit")
int BPF_PROG (tr_files_sys_exit, struct pt_regs *regs, long ret)
{
    long nr = regs->orig_ax;
    int op, slot;

    switch (nr) {
    case 2:   /* open */
    case 85:  /* creat */
    case 257: /* openat */
    case 437: /* openat2 */
        if (ret >= 0)
            return 0;
        op = 0;
        break;
    case 0:   /* read */
    case 17:  /* pread64 */
    case 19:  /* readv */
    case 295: /* preadv */
    case 327: /* preadv2 */
        if (ret == 0 || (ret < 0 && ret != -EIO_))
            return 0;
        op = TR_FILES_OP_READ;
        break;
    case 1:   /* write */
    case 18:  /* pwrite64 */
    case 20:  /* writev */
    case 296: /* pwritev */
    case 328: /* pwritev2 */
        if (ret == 0
            || (ret < 0 && ret != -EIO_ && ret != -ENOSPC_ && ret != -EDQUOT_))
            return 0;
        op = TR_FILES_OP_WRITE;
        break;
    default:
        return 0;
    }
    if (!hier_mask || (slot = current_slot ()) < 0)
        return 0;
    if (op == 0)
        return on_open ((__u32)slot,
                        (const char *)(nr == 2 || nr == 85 ? regs->di
                                                           : regs->si),
                        ret);
    return on_rw (bpf_get_current_task_btf (), (__u32)slot, regs->di, op,
                  ret);
}

/* fexit programs, tried first (BTF trampolines: no tracefs, and only
 * these functions pay for them, not every system call): read, pread64, readv, preadv
 * and their writes; open, openat, creat and openat2 (do_sys_openat2).
 */
SEC ("fexit/vfs_read")
int BPF_PROG (tr_files_read, struct file *file, char *buf, size_t count,
              loff_t *pos, ssize_t ret)
{
    return rw_exit (file, TR_FILES_OP_READ, ret);
}

SEC ("fexit/vfs_write")
int BPF_PROG (tr_files_write, struct file *file, const char *buf,
              size_t count, loff_t *pos, ssize_t ret)
{
    return rw_exit (file, TR_FILES_OP_WRITE, ret);
}

SEC ("fexit/vfs_readv")
int BPF_PROG (tr_files_readv, struct file *file, const struct iovec *vec,
              unsigned long vlen, loff_t *pos, rwf_t flags, ssize_t ret)
{
    return rw_exit (file, TR_FILES_OP_READ, ret);
}

SEC ("fexit/vfs_writev")
int BPF_PROG (tr_files_writev, struct file *file, const struct iovec *vec,
              unsigned long vlen, loff_t *pos, rwf_t flags, ssize_t ret)
{
    return rw_exit (file, TR_FILES_OP_WRITE, ret);
}

SEC ("fexit/do_sys_openat2")
int BPF_PROG (tr_files_open, int dfd, const char *filename,
              struct open_how *how, long ret)
{
    int slot;

    if (ret >= 0 || !hier_mask || (slot = current_slot ()) < 0)
        return 0;
    return on_open ((__u32)slot, filename, ret);
}
