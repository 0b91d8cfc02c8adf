/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "bpffiles.h"
#include "libtracer/util/strbuf.h"

#ifdef HAVE_EBPF
#include <linux/magic.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/files.h"
#include "bpf/files.skel.h"
#endif

/* Merging */

struct fent {
    char *path;     /* NULL: not known (io_errors) */
    char *tool;
    int err;
    int op;         /* 1 read, 2 write (io_errors); the call (opens) */
    uint64_t count; /* failed_opens, io_errors */
    uint64_t acted; /* failed_opens: processes that ended on it */
    uint64_t rbytes, wbytes;
};

struct flist {
    struct fent *v;
    size_t n, cap;
};

struct tr_files_agg {
    struct flist opens, ioerrs, bytes;
};

tr_files_agg_t *tr_files_agg_new (void)
{
    return calloc (1, sizeof (tr_files_agg_t));
}

static void flist_free (struct flist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free (l->v[i].path);
        free (l->v[i].tool);
    }
    free (l->v);
}

void tr_files_agg_free (tr_files_agg_t *agg)
{
    if (!agg)
        return;
    flist_free (&agg->opens);
    flist_free (&agg->ioerrs);
    flist_free (&agg->bytes);
    free (agg);
}

/* Text the job controls (a path, a command name) as a record may hold
 * it: control characters and bytes that are not UTF-8 escaped (so that
 * no name breaks the record or a terminal), cut to TR_FILES_TEXT_MAX
 * bytes at a character boundary.  NULL for NULL; NULL with errno ENOMEM.
 */
#define TR_FILES_TEXT_MAX 1024

static char *record_text (const char *s)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char *t;
    size_t len;

    if (!s)
        return NULL;
    if (tr_text_is_printable (s) && strlen (s) <= TR_FILES_TEXT_MAX)
        return strdup (s);
    if (tr_strbuf_printable (&sb, s) < 0 || !(t = tr_strbuf_steal (&sb))) {
        tr_strbuf_free (&sb);
        errno = ENOMEM;
        return NULL;
    }
    if ((len = strlen (t)) > TR_FILES_TEXT_MAX) {
        len = TR_FILES_TEXT_MAX;
        while (len > 0 && ((unsigned char)t[len] & 0xc0) == 0x80)
            len--;
        t[len] = '\0';
    }
    return t;
}

static int flist_add (struct flist *l, const struct fent *e)
{
    struct fent n = *e;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        struct fent *v = realloc (l->v, cap * sizeof (*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    n.path = record_text (e->path);
    n.tool = record_text (e->tool);
    if ((e->path && !n.path) || (e->tool && !n.tool)) {
        free (n.path);
        free (n.tool);
        errno = ENOMEM;
        return -1;
    }
    l->v[l->n++] = n;
    return 0;
}

/* The C library's own probes, which fail in every program and say
 * nothing of its inputs: locale and message catalogues, gconv modules,
 * the dynamic loader's optimised library directories.
 */
static bool libc_probe (const char *path)
{
    static const char *const prefixes[] = {
        "/usr/lib/locale/", "/usr/share/locale/",
        "/usr/share/locale-langpack/", "/usr/lib/x86_64-linux-gnu/gconv/",
        "/usr/lib64/gconv/",
    };

    for (size_t i = 0; i < sizeof (prefixes) / sizeof (prefixes[0]); i++)
        if (!strncmp (path, prefixes[i], strlen (prefixes[i])))
            return true;
    return strstr (path, "/glibc-hwcaps/") != NULL;
}

int tr_files_agg_lookup (tr_files_agg_t *agg, tr_files_call_t call,
                         const char *path, int err, const char *tool,
                         uint64_t count, uint64_t acted)
{
    struct fent e = { .path = (char *)path, .tool = (char *)tool,
                      .err = err, .op = (int)call, .count = count,
                      .acted = acted };

    if (!agg || !path || !tool || err <= 0 || call < TR_FILES_OPEN
        || call > TR_FILES_ACCESS) {
        errno = EINVAL;
        return -1;
    }
    if (libc_probe (path))
        return 0;
    return flist_add (&agg->opens, &e);
}

int tr_files_agg_open (tr_files_agg_t *agg, const char *path, int err,
                       const char *tool, uint64_t count)
{
    return tr_files_agg_lookup (agg, TR_FILES_OPEN, path, err, tool, count,
                                0);
}

int tr_files_agg_ioerr (tr_files_agg_t *agg, bool write, int err,
                        const char *tool, const char *path, uint64_t count)
{
    struct fent e = { .path = (char *)path, .tool = (char *)tool,
                      .err = err, .op = write ? 2 : 1, .count = count };

    if (!agg || !tool || err <= 0) {
        errno = EINVAL;
        return -1;
    }
    return flist_add (&agg->ioerrs, &e);
}

int tr_files_agg_bytes (tr_files_agg_t *agg, const char *path,
                        uint64_t rbytes, uint64_t wbytes)
{
    struct fent e = { .path = (char *)path, .rbytes = rbytes,
                      .wbytes = wbytes };

    if (!agg || !path) {
        errno = EINVAL;
        return -1;
    }
    return flist_add (&agg->bytes, &e);
}

static int strcmp_null (const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp (a, b);
}

/* identity: op, err, tool, path */
static int cmp_ident (const void *pa, const void *pb)
{
    const struct fent *a = pa, *b = pb;
    int c;

    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->err != b->err)
        return a->err < b->err ? -1 : 1;
    if ((c = strcmp_null (a->tool, b->tool)))
        return c;
    return strcmp_null (a->path, b->path);
}

static int cmp_u64_desc (uint64_t a, uint64_t b)
{
    return a > b ? -1 : a < b ? 1 : 0;
}

/* those a process acted on first, then the most frequent */
static int cmp_count (const void *pa, const void *pb)
{
    const struct fent *a = pa, *b = pb;
    int c = cmp_u64_desc (a->acted, b->acted);

    if (!c)
        c = cmp_u64_desc (a->count, b->count);
    if (c || (c = strcmp_null (a->path, b->path)))
        return c;
    return cmp_ident (pa, pb);
}

static int cmp_read (const void *pa, const void *pb)
{
    const struct fent *a = pa, *b = pb;
    int c = cmp_u64_desc (a->rbytes, b->rbytes);

    return c ? c : strcmp_null (a->path, b->path);
}

static int cmp_written (const void *pa, const void *pb)
{
    const struct fent *a = pa, *b = pb;
    int c = cmp_u64_desc (a->wbytes, b->wbytes);

    return c ? c : strcmp_null (a->path, b->path);
}

static uint64_t add_sat (uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Sort by identity and add up the entries that share one. */
static void flist_merge (struct flist *l)
{
    size_t k = 0;

    if (l->n == 0)
        return;
    qsort (l->v, l->n, sizeof (l->v[0]), cmp_ident);
    for (size_t i = 1; i < l->n; i++) {
        struct fent *t = &l->v[k], *e = &l->v[i];
        if (!cmp_ident (t, e)) {
            t->count = add_sat (t->count, e->count);
            t->acted = add_sat (t->acted, e->acted);
            t->rbytes = add_sat (t->rbytes, e->rbytes);
            t->wbytes = add_sat (t->wbytes, e->wbytes);
            free (e->path);
            free (e->tool);
        } else
            l->v[++k] = *e;
    }
    l->n = k + 1;
}

const char *tr_files_errno_name (int err, char *buf, size_t size)
{
    static const struct {
        int err;
        const char *name;
    } names[] = {
        { EPERM, "EPERM" },     { ENOENT, "ENOENT" },
        { EIO, "EIO" },         { ENXIO, "ENXIO" },
        { EBADF, "EBADF" },     { ENOMEM, "ENOMEM" },
        { EACCES, "EACCES" },   { EFAULT, "EFAULT" },
        { EBUSY, "EBUSY" },     { EEXIST, "EEXIST" },
        { ENODEV, "ENODEV" },   { ENOTDIR, "ENOTDIR" },
        { EISDIR, "EISDIR" },   { EINVAL, "EINVAL" },
        { ENFILE, "ENFILE" },   { EMFILE, "EMFILE" },
        { ETXTBSY, "ETXTBSY" }, { EFBIG, "EFBIG" },
        { ENOSPC, "ENOSPC" },   { EROFS, "EROFS" },
        { ELOOP, "ELOOP" },     { ENAMETOOLONG, "ENAMETOOLONG" },
        { EDQUOT, "EDQUOT" },   { ESTALE, "ESTALE" },
        { EAGAIN, "EAGAIN" },   { EINTR, "EINTR" },
        { EOVERFLOW, "EOVERFLOW" }, { ETIMEDOUT, "ETIMEDOUT" },
        { ENOTCONN, "ENOTCONN" }, { EOPNOTSUPP, "EOPNOTSUPP" },
    };

    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
        if (names[i].err == err)
            return names[i].name;
    snprintf (buf, size, "E%d", err);
    return buf;
}

static int set_new (json_t *o, const char *k, json_t *v)
{
    return v ? json_object_set_new (o, k, v) : -1;
}

static const char *call_name (int call)
{
    return call == TR_FILES_STAT     ? "stat"
           : call == TR_FILES_ACCESS ? "access"
                                     : "open";
}

static json_t *errors_json (struct flist *l, bool io)
{
    json_t *a = json_array ();
    char eb[32];

    if (!a)
        return NULL;
    for (size_t i = 0; i < l->n && i < TR_FILES_TOP_ERRORS; i++) {
        struct fent *e = &l->v[i];
        json_t *o = json_object ();
        if (!o || json_array_append_new (a, o) < 0
            || (io && set_new (o, "op", json_string (e->op == 2 ? "write"
                                                               : "read")) < 0)
            || (!io && set_new (o, "path", json_string (e->path)) < 0)
            || (!io && set_new (o, "call", json_string (call_name (e->op))) < 0)
            || set_new (o, "errno",
                        json_string (tr_files_errno_name (e->err, eb,
                                                          sizeof (eb)))) < 0
            || set_new (o, "tool", json_string (e->tool)) < 0
            || set_new (o, "count",
                        json_integer ((json_int_t)(e->count > INT64_MAX
                                                       ? INT64_MAX
                                                       : e->count))) < 0
            || (!io
                && set_new (o, "acted",
                            json_integer ((json_int_t)(e->acted > INT64_MAX
                                                           ? INT64_MAX
                                                           : e->acted))) < 0)
            || (io && e->path
                && set_new (o, "path", json_string (e->path)) < 0)) {
            json_decref (a);
            return NULL;
        }
    }
    return a;
}

static json_t *bytes_json (struct flist *l, bool written)
{
    json_t *a = json_array ();

    if (!a)
        return NULL;
    if (l->n > 1)
        qsort (l->v, l->n, sizeof (l->v[0]), written ? cmp_written : cmp_read);
    for (size_t i = 0, k = 0; i < l->n && k < TR_FILES_TOP_BYTES; i++) {
        struct fent *e = &l->v[i];
        uint64_t b = written ? e->wbytes : e->rbytes;
        json_t *o;
        if (b == 0)
            break;
        if (!(o = json_object ()) || json_array_append_new (a, o) < 0
            || set_new (o, "path", json_string (e->path)) < 0
            || set_new (o, "bytes",
                        json_integer ((json_int_t)(b > INT64_MAX ? INT64_MAX
                                                                 : b))) < 0) {
            json_decref (a);
            return NULL;
        }
        k++;
    }
    return a;
}

json_t *tr_files_agg_json (const tr_files_agg_t *agg)
{
    tr_files_agg_t *m = (tr_files_agg_t *)agg; /* sorted in place */
    uint64_t rsum = 0, wsum = 0;
    json_t *o;

    if (!agg) {
        errno = EINVAL;
        return NULL;
    }
    flist_merge (&m->opens);
    flist_merge (&m->ioerrs);
    for (size_t i = 0; i < m->bytes.n; i++)
        m->bytes.v[i].op = 0;
    flist_merge (&m->bytes);
    if (m->opens.n)
        qsort (m->opens.v, m->opens.n, sizeof (m->opens.v[0]), cmp_count);
    if (m->ioerrs.n)
        qsort (m->ioerrs.v, m->ioerrs.n, sizeof (m->ioerrs.v[0]), cmp_count);
    for (size_t i = 0; i < m->bytes.n; i++) {
        rsum = add_sat (rsum, m->bytes.v[i].rbytes);
        wsum = add_sat (wsum, m->bytes.v[i].wbytes);
    }
    if (!(o = json_object ())
        || set_new (o, "source", json_string ("ebpf")) < 0
        || set_new (o, "read_bytes", json_integer ((json_int_t)(
                        rsum > INT64_MAX ? INT64_MAX : rsum))) < 0
        || set_new (o, "written_bytes", json_integer ((json_int_t)(
                        wsum > INT64_MAX ? INT64_MAX : wsum))) < 0
        || set_new (o, "failed_opens", errors_json (&m->opens, false)) < 0
        || set_new (o, "io_errors", errors_json (&m->ioerrs, true)) < 0
        || set_new (o, "top_read", bytes_json (&m->bytes, false)) < 0
        || set_new (o, "top_written", bytes_json (&m->bytes, true)) < 0) {
        json_decref (o);
        errno = ENOMEM;
        return NULL;
    }
    return o;
}

json_t *tr_files_none (const char *reason)
{
    json_t *o = json_pack ("{s:s, s:s}", "source", "none", "reason",
                           reason ? reason : "unknown");

    if (!o)
        errno = ENOMEM;
    return o;
}

/* The kernel part */

#ifndef HAVE_EBPF

tr_files_t *tr_files_open (bool costly, tr_error_t *error)
{
    (void)costly;
    tr_errprintf (error, "built without eBPF support");
    errno = ENOTSUP;
    return NULL;
}

void tr_files_close (tr_files_t *f)
{
    (void)f;
}

const char *tr_files_how (const tr_files_t *f)
{
    (void)f;
    return "";
}

int tr_files_watch (tr_files_t *f, const char *key,
                    const char *const *dirs, size_t n, tr_error_t *error)
{
    (void)f;
    (void)key;
    (void)dirs;
    (void)n;
    tr_errprintf (error, "built without eBPF support");
    errno = ENOTSUP;
    return -1;
}

bool tr_files_watching (const tr_files_t *f, const char *key)
{
    (void)f;
    (void)key;
    return false;
}

json_t *tr_files_step (tr_files_t *f, const char *key, tr_error_t *error)
{
    (void)f;
    (void)key;
    tr_errprintf (error, "built without eBPF support");
    errno = ENOENT;
    return NULL;
}

void tr_files_unwatch (tr_files_t *f, const char *key)
{
    (void)f;
    (void)key;
}

void tr_files_retain (tr_files_t *f, const char *const *keys, size_t n)
{
    (void)f;
    (void)keys;
    (void)n;
}

#else /* HAVE_EBPF */

#define MAX_DIRS 4

struct slot {
    char *key;                      /* NULL: free */
    struct tr_fcg_key cg[MAX_DIRS]; /* its entries in the cgroups map */
    size_t ncg;
};

struct tr_files {
    struct tr_files_bpf *skel;
    const char *how;                /* which programs: tr_files_how */
    struct slot slots[TR_FILES_SLOTS];
};

static int silent_print (enum libbpf_print_level level, const char *fmt,
                         va_list ap)
{
    (void)level;
    (void)fmt;
    (void)ap;
    return 0;
}

/* Open, load and attach the skeleton with the fexit programs (fexit
 * true) or the raw tracepoint one; 0, or a negative errno.
 */
static int load_way (tr_files_t *f, bool fexit)
{
    struct bpf_program *fx[] = {
        NULL, NULL, NULL, NULL, NULL,
    };
    /* the lookups by name other than opens: each where the running
     * kernel has its function (they are not in every version)
     */
    struct {
        struct bpf_program *prog;
        const char *fn;
    } fopt[3];
    struct btf *vmlinux = NULL;
    int rc;

    if (!(f->skel = tr_files_bpf__open ()))
        return errno ? -errno : -EINVAL;
    fx[0] = f->skel->progs.tr_files_read;
    fx[1] = f->skel->progs.tr_files_write;
    fx[2] = f->skel->progs.tr_files_readv;
    fx[3] = f->skel->progs.tr_files_writev;
    fx[4] = f->skel->progs.tr_files_open;
    for (size_t i = 0; i < sizeof (fx) / sizeof (fx[0]); i++)
        (void)bpf_program__set_autoload (fx[i], fexit);
    fopt[0].prog = f->skel->progs.tr_files_fstatat;
    fopt[0].fn = "vfs_fstatat";
    fopt[1].prog = f->skel->progs.tr_files_statx;
    fopt[1].fn = "do_statx";
    fopt[2].prog = f->skel->progs.tr_files_faccessat;
    fopt[2].fn = "do_faccessat";
    if (fexit)
        vmlinux = btf__load_vmlinux_btf ();
    for (size_t i = 0; i < sizeof (fopt) / sizeof (fopt[0]); i++)
        (void)bpf_program__set_autoload (
            fopt[i].prog, fexit && vmlinux
                              && btf__find_by_name_kind (vmlinux, fopt[i].fn,
                                                         BTF_KIND_FUNC)
                                     > 0);
    btf__free (vmlinux);
    (void)bpf_program__set_autoload (f->skel->progs.tr_files_sys_exit,
                                     !fexit);
    if ((rc = tr_files_bpf__load (f->skel)) < 0
        || (rc = tr_files_bpf__attach (f->skel)) < 0) {
        tr_files_bpf__destroy (f->skel);
        f->skel = NULL;
        return rc < 0 ? rc : -EINVAL;
    }
    f->how = fexit ? "fexit" : "tp_btf/sys_exit";
    return 0;
}

tr_files_t *tr_files_open (bool costly, tr_error_t *error)
{
    tr_files_t *f;
    int rc;

    if (access ("/sys/kernel/btf/vmlinux", R_OK) < 0) {
        int e = errno;
        tr_errprintf (error, "eBPF not available: no kernel BTF "
                      "(/sys/kernel/btf/vmlinux: %s)", strerror (e));
        errno = e;
        return NULL;
    }
    if (!(f = calloc (1, sizeof (*f))))
        return NULL;
    (void)libbpf_set_print (silent_print);
    /* fexit first: only the traced functions pay; where the kernel
     * refuses trampolines (lockdown), the syscall-exit tracepoint
     */
    if ((rc = load_way (f, true)) < 0 && !costly) {
        tr_errprintf (error, "eBPF not used: the kernel refused its fexit "
                      "programs (%s%s), and the system-call tracepoint "
                      "instead slows system-call-heavy jobs about 2 times "
                      "(doc/performance.md); sampling.ebpf: true uses it "
                      "anyway", strerror (-rc),
                      rc == -EPERM && geteuid () != 0 ? ", not root"
                      : rc == -EPERM                  ? ", trampolines refused"
                                                      : "");
        free (f);
        errno = -rc;
        return NULL;
    }
    if (!f->skel && (rc = load_way (f, false)) < 0) {
        tr_errprintf (error, "eBPF not available: the kernel refused the "
                      "program: %s%s", strerror (-rc),
                      rc == -EPERM && geteuid () != 0 ? " (not root)" : "");
        free (f);
        errno = -rc;
        return NULL;
    }
    return f;
}

const char *tr_files_how (const tr_files_t *f)
{
    return f ? f->how : "";
}

static void update_mask (tr_files_t *f)
{
    __u32 mask = 0;

    for (size_t i = 0; i < TR_FILES_SLOTS; i++)
        for (size_t j = 0; f->slots[i].key && j < f->slots[i].ncg; j++)
            mask |= 1u << f->slots[i].cg[j].hier;
    f->skel->bss->hier_mask = mask;
    f->skel->bss->generation++; /* every task looks its step up again */
}

static struct slot *find_slot (const tr_files_t *f, const char *key)
{
    for (size_t i = 0; i < TR_FILES_SLOTS; i++)
        if (f->slots[i].key && !strcmp (f->slots[i].key, key))
            return (struct slot *)&f->slots[i];
    return NULL;
}

bool tr_files_watching (const tr_files_t *f, const char *key)
{
    return f && key && find_slot (f, key);
}

/* A cgroup directory's hierarchy and id; -1 when it is none we follow. */
static int dir_key (const char *dir, struct tr_fcg_key *k)
{
    struct statfs sf;
    struct stat st;
    char file[4200];

    if (statfs (dir, &sf) < 0 || stat (dir, &st) < 0)
        return -1;
    memset (k, 0, sizeof (*k));
    k->id = (__u64)st.st_ino;
    if (sf.f_type == CGROUP2_SUPER_MAGIC) {
        k->hier = TR_FILES_HIER_V2;
        return 0;
    }
    if (sf.f_type != CGROUP_SUPER_MAGIC)
        return -1;
    snprintf (file, sizeof (file), "%s/cpuacct.usage", dir);
    if (access (file, F_OK) == 0) {
        k->hier = TR_FILES_HIER_CPUACCT;
        return 0;
    }
    snprintf (file, sizeof (file), "%s/memory.usage_in_bytes", dir);
    if (access (file, F_OK) == 0) {
        k->hier = TR_FILES_HIER_MEMORY;
        return 0;
    }
    return -1;
}

static void slot_cgroups_del (tr_files_t *f, struct slot *s)
{
    int fd = bpf_map__fd (f->skel->maps.cgroups);

    for (size_t j = 0; j < s->ncg; j++)
        (void)bpf_map_delete_elem (fd, &s->cg[j]);
    s->ncg = 0;
}

int tr_files_watch (tr_files_t *f, const char *key,
                    const char *const *dirs, size_t n, tr_error_t *error)
{
    struct slot *s;
    struct tr_fcg_key cg[MAX_DIRS];
    size_t ncg = 0;
    int fd;

    if (!f || !key || (n && !dirs)) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < n && ncg < MAX_DIRS; i++)
        if (dirs[i] && dir_key (dirs[i], &cg[ncg]) == 0)
            ncg++;
    if (ncg == 0) {
        tr_errprintf (error, "no cgroup directory of its own");
        errno = ENOENT;
        return -1;
    }
    if (!(s = find_slot (f, key))) {
        for (size_t i = 0; i < TR_FILES_SLOTS && !s; i++)
            if (!f->slots[i].key)
                s = &f->slots[i];
        if (!s) {
            tr_errprintf (error, "more than %d steps followed",
                          TR_FILES_SLOTS);
            errno = ENOSPC;
            return -1;
        }
        if (!(s->key = strdup (key)))
            return -1;
    } else
        slot_cgroups_del (f, s);
    fd = bpf_map__fd (f->skel->maps.cgroups);
    for (size_t j = 0; j < ncg; j++) {
        __u32 v = (__u32)(s - f->slots);
        if (bpf_map_update_elem (fd, &cg[j], &v, BPF_ANY) < 0) {
            int e = errno;
            tr_errprintf (error, "adding its cgroup: %s", strerror (e));
            slot_cgroups_del (f, s);
            update_mask (f);
            errno = e;
            return -1;
        }
        s->cg[s->ncg++] = cg[j];
    }
    update_mask (f);
    return 0;
}

/* The path of a file from the names map ("?" parts where not known). */
static void file_path (tr_files_t *f, __u64 dev, __u64 ino, char *buf,
                       size_t size)
{
    struct tr_fname_key k = { .dev = dev, .ino = ino };
    struct tr_fname_val v;
    size_t len = 0;

    if (bpf_map_lookup_elem (bpf_map__fd (f->skel->maps.names), &k, &v) < 0
        || v.n == 0 || v.n > TR_FILES_NCOMP) {
        snprintf (buf, size, "(device %u:%u inode %llu)",
                  (unsigned)(dev >> 20), (unsigned)(dev & 0xfffff),
                  (unsigned long long)ino);
        return;
    }
    buf[0] = '\0';
    if (!v.complete)
        len = (size_t)snprintf (buf, size, "...");
    for (__u32 i = v.n; i-- > 0 && len < size;) {
        v.comp[i][TR_FILES_NAME - 1] = '\0';
        len += (size_t)snprintf (buf + len, size - len, "/%s", v.comp[i]);
    }
}

/* Each key of map (of key size ksize) whose leading __u32 is slot: call
 * fn (when not NULL), then delete them all when del.
 */
static int each_of_slot (tr_files_t *f, struct bpf_map *map, size_t ksize,
                         __u32 slot, bool del,
                         int (*fn) (tr_files_t *, void *, const void *,
                                    const void *),
                         void *arg)
{
    int fd = bpf_map__fd (map);
    size_t vsize = bpf_map__value_size (map), ndel = 0, cap = 0;
    char *prev = calloc (1, ksize), *key = calloc (1, ksize),
         *val = calloc (1, vsize), *gone = NULL;
    bool first = true;
    int rc = 0;

    if (!prev || !key || !val) {
        rc = -1;
        goto out;
    }
    while (bpf_map_get_next_key (fd, first ? NULL : prev, key) == 0) {
        __u32 ks;
        memcpy (&ks, key, sizeof (ks));
        if (ks == slot && bpf_map_lookup_elem (fd, key, val) == 0) {
            if (fn && fn (f, arg, key, val) < 0) {
                rc = -1;
                break;
            }
            if (del) {
                if (ndel == cap) {
                    size_t nc = cap ? cap * 2 : 64;
                    char *g = realloc (gone, nc * ksize);
                    if (!g) {
                        rc = -1;
                        break;
                    }
                    gone = g;
                    cap = nc;
                }
                memcpy (gone + ndel++ * ksize, key, ksize);
            }
        }
        memcpy (prev, key, ksize);
        first = false;
    }
    for (size_t i = 0; i < ndel; i++)
        (void)bpf_map_delete_elem (fd, gone + i * ksize);
out:
    free (gone);
    free (prev);
    free (key);
    free (val);
    return rc;
}

/* FNV-1a of a failed_opens key a word at a time, as the kernel part
 * hashes it (files.bpf.c key_hash).
 */
static __u64 key_hash (const struct tr_fopen_key *k)
{
    __u64 h = TR_FILES_FNV_BASIS, w;

    _Static_assert (sizeof (*k) % 8 == 0, "whole words");
    for (size_t i = 0; i < sizeof (*k) / 8; i++) {
        memcpy (&w, (const char *)k + i * 8, 8);
        h ^= w;
        h *= TR_FILES_FNV_PRIME;
    }
    return h;
}

static int add_open (tr_files_t *f, void *arg, const void *k, const void *v)
{
    struct tr_fopen_key key;
    __u64 count;
    char comm[TR_FILES_COMM + 1];
    struct tr_facted_key ak = { 0 };
    __u64 acted = 0;

    memcpy (&key, k, sizeof (key));
    memcpy (&count, v, sizeof (count));
    ak.slot = key.slot;
    ak.hash = key_hash (&key);
    if (bpf_map_lookup_elem (bpf_map__fd (f->skel->maps.acted), &ak, &acted)
        < 0)
        acted = 0;
    key.path[TR_FILES_PATH - 1] = '\0';
    memcpy (comm, key.comm, TR_FILES_COMM);
    comm[TR_FILES_COMM] = '\0';
    return tr_files_agg_lookup (arg, (tr_files_call_t)key.call, key.path,
                                key.err, comm, count, acted);
}

static int add_ioerr (tr_files_t *f, void *arg, const void *k, const void *v)
{
    struct tr_fio_key key;
    __u64 count;
    char comm[TR_FILES_COMM + 1], path[1024];

    memcpy (&key, k, sizeof (key));
    memcpy (&count, v, sizeof (count));
    memcpy (comm, key.comm, TR_FILES_COMM);
    comm[TR_FILES_COMM] = '\0';
    file_path (f, key.dev, key.ino, path, sizeof (path));
    return tr_files_agg_ioerr (arg, key.op == TR_FILES_OP_WRITE, key.err,
                               comm, path, count);
}

static int add_bytes (tr_files_t *f, void *arg, const void *k, const void *v)
{
    struct tr_fbytes_key key;
    struct tr_fbytes_val val;
    char path[1024];

    memcpy (&key, k, sizeof (key));
    memcpy (&val, v, sizeof (val));
    file_path (f, key.dev, key.ino, path, sizeof (path));
    return tr_files_agg_bytes (arg, path, val.rbytes, val.wbytes);
}

json_t *tr_files_step (tr_files_t *f, const char *key, tr_error_t *error)
{
    tr_files_agg_t *agg;
    struct slot *s;
    __u32 slot;
    json_t *o = NULL;

    if (!f || !key || !(s = find_slot (f, key))) {
        tr_errprintf (error, "step not followed");
        errno = ENOENT;
        return NULL;
    }
    slot = (__u32)(s - f->slots);
    if (!(agg = tr_files_agg_new ()))
        return NULL;
    if (each_of_slot (f, f->skel->maps.failed_opens,
                      sizeof (struct tr_fopen_key), slot, false, add_open,
                      agg) == 0
        && each_of_slot (f, f->skel->maps.io_errors,
                         sizeof (struct tr_fio_key), slot, false, add_ioerr,
                         agg) == 0
        && each_of_slot (f, f->skel->maps.bytes,
                         sizeof (struct tr_fbytes_key), slot, false,
                         add_bytes, agg) == 0)
        o = tr_files_agg_json (agg);
    if (!o)
        tr_errprintf (error, "out of memory");
    tr_files_agg_free (agg);
    return o;
}

void tr_files_unwatch (tr_files_t *f, const char *key)
{
    struct slot *s;
    __u32 slot;

    if (!f || !key || !(s = find_slot (f, key)))
        return;
    slot = (__u32)(s - f->slots);
    slot_cgroups_del (f, s);
    update_mask (f);
    (void)each_of_slot (f, f->skel->maps.failed_opens,
                        sizeof (struct tr_fopen_key), slot, true, NULL, NULL);
    (void)each_of_slot (f, f->skel->maps.acted,
                        sizeof (struct tr_facted_key), slot, true, NULL,
                        NULL);
    (void)each_of_slot (f, f->skel->maps.io_errors,
                        sizeof (struct tr_fio_key), slot, true, NULL, NULL);
    (void)each_of_slot (f, f->skel->maps.bytes,
                        sizeof (struct tr_fbytes_key), slot, true, NULL,
                        NULL);
    free (s->key);
    s->key = NULL;
}

void tr_files_retain (tr_files_t *f, const char *const *keys, size_t n)
{
    if (!f)
        return;
    for (size_t i = 0; i < TR_FILES_SLOTS; i++) {
        const char *k = f->slots[i].key;
        size_t j = 0;
        while (k && j < n && strcmp (keys[j], k))
            j++;
        if (k && j == n)
            tr_files_unwatch (f, k);
    }
}

void tr_files_close (tr_files_t *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < TR_FILES_SLOTS; i++)
        free (f->slots[i].key);
    tr_files_bpf__destroy (f->skel);
    free (f);
}

#endif /* HAVE_EBPF */
