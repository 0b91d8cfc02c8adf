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
    __uint (max_entries, 4096);
    __type (key, struct tr_facted_key);
    __type (value, __u64);
} acted SEC (".maps");

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

/* A failed lookup as its task remembers it (the last two) until the
 * task ends: whether a successful lookup of the same last component
 * followed (a probe: found elsewhere) or a failed one elsewhere (a
 * search), and the task's successful lookups when it failed.
 */
#define FAIL_NONE 0
#define FAIL_PENDING 1
#define FAIL_FOUND 2 /* or carried on past it: not acted on */
#define FAIL_SEARCH 3

struct pending {
    __u64 hash; /* of its failed_opens key */
    __u64 ok;   /* the task's ok when it failed */
    __u32 base; /* hash of its last component */
    __u32 state;
    __u32 slot;
    __u32 pad;
};

struct tcache {
    __u64 generation;
    __u64 css_set;
    __s32 slot;
    __u32 pad;
    __u64 ok; /* lookups by name that succeeded */
    struct pending last, prev;
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

/* The current task's cache entry (NULL when none could be made) and its
 * step slot, or -1: from the entry while that is valid, else looked up
 * (step_of) and cached.
 */
static __always_inline struct tcache *current_cache (int *slot)
{
    struct task_struct *t = bpf_get_current_task_btf ();
    __u64 cs = (__u64)t->cgroups;
    struct tcache *c;

    c = bpf_task_storage_get (&tasks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (c && c->generation == generation && c->css_set == cs) {
        *slot = c->slot;
        return c;
    }
    *slot = step_of ();
    if (c) {
        c->generation = generation;
        c->css_set = cs;
        c->slot = *slot;
    }
    return c;
}

static __always_inline int current_slot (void)
{
    int slot;

    current_cache (&slot);
    return slot;
}

/* FNV-1a of the last component of the path in buf (n bytes read). */
static __always_inline __u32 last_component (const char *buf, long n)
{
    __u32 h = 2166136261u;

    for (int i = 0; i < TR_FILES_PATH; i++) {
        char ch;

        if (i >= n)
            break;
        ch = buf[i];
        if (ch == '\0')
            break;
        if (ch == '/')
            h = 2166136261u;
        else {
            h ^= (__u8)ch;
            h *= 16777619u;
        }
    }
    return h;
}

/* FNV-1a of a failed_opens key, a word at a time (userspace does the
 * same: key_hash in bpffiles.c).
 */
static __always_inline __u64 key_hash (const struct tr_fopen_key *k)
{
    const __u64 *w = (const __u64 *)k;
    __u64 h = TR_FILES_FNV_BASIS;

    for (int i = 0; i < (int)(sizeof (*k) / 8); i++) {
        h ^= w[i];
        h *= TR_FILES_FNV_PRIME;
    }
    return h;
}

/* Read the path a call named into buf: from the process's memory, or
 * (kernel) from the kernel's copy.  Its length with the NUL, or < 0.
 */
static __always_inline long read_path (char *buf, const char *p, bool kernel)
{
    if (kernel)
        return bpf_probe_read_kernel_str (buf, TR_FILES_PATH, p);
    return bpf_probe_read_user_str (buf, TR_FILES_PATH, p);
}

/* A lookup (call) of path p by the current task in step slot that failed
 * with -ret: counted, and remembered as the task's last failure; the
 * last, when still pending, becomes prev.  One that names the same last
 * component as the last is a search (message catalogues in one locale
 * directory after another): the last is marked so, and prev is kept.
 */
static __always_inline int on_fail (struct tcache *c, __u32 slot,
                                    const char *p, bool kernel, long ret,
                                    __u16 call)
{
    struct tr_fopen_key *k;
    __u32 zero = 0, base;
    __u64 one = 1, *n;
    long len;

    if (!(k = bpf_map_lookup_elem (&open_scratch, &zero)))
        return 0;
    __builtin_memset (k, 0, sizeof (*k));
    k->slot = slot;
    k->err = (__s16)-ret;
    k->call = call;
    bpf_get_current_comm (k->comm, sizeof (k->comm));
    if ((len = read_path (k->path, p, kernel)) < 0)
        return 0;
    if ((n = bpf_map_lookup_elem (&failed_opens, k)))
        __sync_fetch_and_add (n, 1);
    else
        bpf_map_update_elem (&failed_opens, k, &one, BPF_NOEXIST);
    /* access() asks whether a file could be used, and a "no" is what
     * its callers (the dynamic loader's /etc/ld.so.preload, a search)
     * expect: counted, not remembered
     */
    if (!c || call == TR_FILES_CALL_ACCESS)
        return 0;
    /* nor a name in angle brackets: no file a process was given, but the
     * name an interpreter gives code that has none (Python's <string>,
     * <stdin>), which its error report looks up for the source line
     */
    if (k->path[0] == '<')
        return 0;
    base = last_component (k->path, len);
    if (c->last.state != FAIL_NONE && c->last.base == base) {
        if (c->last.state == FAIL_PENDING)
            c->last.state = FAIL_SEARCH;
    } else {
        if (c->last.state == FAIL_PENDING)
            c->prev = c->last;
        c->last.state = FAIL_PENDING;
    }
    c->last.hash = key_hash (k);
    c->last.ok = c->ok;
    c->last.base = base;
    c->last.slot = slot;
    return 0;
}

/* A lookup by name that succeeded: counted; a failure of the same last
 * component that the task remembers was a probe.
 */
static __always_inline int on_found (struct tcache *c, const char *p,
                                     bool kernel)
{
    struct tr_fopen_key *k;
    __u32 zero = 0, base;
    long len;
    char ch = 0;

    if (!c)
        return 0;
    if (kernel ? bpf_probe_read_kernel (&ch, 1, p)
               : bpf_probe_read_user (&ch, 1, p))
        return 0;
    if (ch == '\0') /* a descriptor's own (AT_EMPTY_PATH): no lookup */
        return 0;
    c->ok++;
    if (c->last.state != FAIL_PENDING && c->prev.state != FAIL_PENDING)
        return 0;
    if (!(k = bpf_map_lookup_elem (&open_scratch, &zero))
        || (len = read_path (k->path, p, kernel)) < 0)
        return 0;
    base = last_component (k->path, len);
    if (c->last.state == FAIL_PENDING && c->last.base == base)
        c->last.state = FAIL_FOUND;
    if (c->prev.state == FAIL_PENDING && c->prev.base == base)
        c->prev.state = FAIL_FOUND;
    return 0;
}

/* A lookup by name (call) of path p by the current task that returned
 * ret.
 */
static __always_inline int on_lookup (const char *p, bool kernel, long ret,
                                      __u16 call)
{
    struct tcache *c;
    int slot;

    if (!hier_mask || !p)
        return 0;
    c = current_cache (&slot);
    if (slot < 0)
        return 0;
    if (ret < 0)
        return on_fail (c, (__u32)slot, p, kernel, ret, call);
    return on_found (c, p, kernel);
}

/* The failed lookup f of a task that ends with ok successful lookups:
 * counted in acted when no more than TR_FILES_ACTED_AFTER followed it.
 */
static __always_inline void credit (const struct pending *f, __u64 ok)
{
    struct tr_facted_key k = { .slot = f->slot, .hash = f->hash };
    __u64 one = 1, *n;

    if (ok - f->ok > TR_FILES_ACTED_AFTER)
        return;
    if ((n = bpf_map_lookup_elem (&acted, &k)))
        __sync_fetch_and_add (n, 1);
    else
        bpf_map_update_elem (&acted, &k, &one, BPF_NOEXIST);
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
    __u16 call = 0;
    int op = 0, slot;

    switch (nr) {
    case 2:   /* open */
    case 85:  /* creat */
        call = TR_FILES_CALL_OPEN;
        return on_lookup ((const char *)regs->di, false, ret, call);
    case 257: /* openat */
    case 437: /* openat2 */
        call = TR_FILES_CALL_OPEN;
        return on_lookup ((const char *)regs->si, false, ret, call);
    case 4: /* stat */
    case 6: /* lstat */
        call = TR_FILES_CALL_STAT;
        return on_lookup ((const char *)regs->di, false, ret, call);
    case 262: /* newfstatat */
    case 332: /* statx */
        call = TR_FILES_CALL_STAT;
        return on_lookup ((const char *)regs->si, false, ret, call);
    case 21: /* access */
        call = TR_FILES_CALL_ACCESS;
        return on_lookup ((const char *)regs->di, false, ret, call);
    case 269: /* faccessat */
    case 439: /* faccessat2 */
        call = TR_FILES_CALL_ACCESS;
        return on_lookup ((const char *)regs->si, false, ret, call);
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
    return on_rw (bpf_get_current_task_btf (), (__u32)slot, regs->di, op,
                  ret);
}

/* A task that ends (each thread): the failed lookup it acted on, if it
 * remembers one, counts in acted: its last, or the one before when the
 * last was part of a search of another name.  Both ways load it.
 */
SEC ("tp_btf/sched_process_exit")
int BPF_PROG (tr_files_exit, struct task_struct *p)
{
    struct tcache *c;

    if (!hier_mask || !p)
        return 0;
    if (!(c = bpf_task_storage_get (&tasks, p, 0, 0)))
        return 0;
    if (c->last.state == FAIL_PENDING)
        credit (&c->last, c->ok);
    else if (c->last.state == FAIL_SEARCH && c->prev.state == FAIL_PENDING)
        credit (&c->prev, c->ok);
    c->last.state = FAIL_NONE;
    c->prev.state = FAIL_NONE;
    return 0;
}

/* A task that forks (a process or a thread) carried on past its failed
 * lookups: a shell or a driver that runs the next program did not act on
 * them.  Both ways load it.
 */
SEC ("tp_btf/sched_process_fork")
int BPF_PROG (tr_files_fork, struct task_struct *parent,
              struct task_struct *child)
{
    struct tcache *c;

    if (!hier_mask || !parent)
        return 0;
    if (!(c = bpf_task_storage_get (&tasks, parent, 0, 0)))
        return 0;
    if (c->last.state == FAIL_PENDING)
        c->last.state = FAIL_FOUND;
    if (c->prev.state == FAIL_PENDING)
        c->prev.state = FAIL_FOUND;
    return 0;
}

/* fexit programs, tried first (BTF trampolines: no tracefs, and only
 * these functions pay for them, not every system call): read, pread64,
 * readv, preadv and their writes; open, openat, creat and openat2
 * (do_sys_openat2); stat, lstat and newfstatat (vfs_fstatat), statx
 * (do_statx) and the access calls (do_faccessat), each where the
 * running kernel has the function (tr_files_open looks).
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
    return on_lookup (filename, false, ret, TR_FILES_CALL_OPEN);
}

SEC ("fexit/vfs_fstatat")
int BPF_PROG (tr_files_fstatat, int dfd, const char *filename,
              struct kstat *stat, int flags, int ret)
{
    return on_lookup (filename, false, ret, TR_FILES_CALL_STAT);
}

SEC ("fexit/do_statx")
int BPF_PROG (tr_files_statx, int dfd, struct filename *filename,
              unsigned int flags, unsigned int mask, void *buffer, int ret)
{
    const char *name = filename ? BPF_CORE_READ (filename, name) : NULL;

    return on_lookup (name, true, ret, TR_FILES_CALL_STAT);
}

SEC ("fexit/do_faccessat")
int BPF_PROG (tr_files_faccessat, int dfd, const char *filename, int mode,
              int flags, long ret)
{
    return on_lookup (filename, false, ret, TR_FILES_CALL_ACCESS);
}
