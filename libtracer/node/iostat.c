/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Block I/O counters of a step: cgroup v2 io.stat (needs the io
 * controller in the parent's subtree_control), cgroup v1
 * blkio.throttle.* (which on recent kernels stay at "Total 0" unless the
 * cgroup has a throttle rule), and the per-process /proc/PID/io, which
 * covers the thread group plus its reaped children.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "libtracer/util/fsroot.h"
#include "iostat.h"

/* io.stat lines are about 80 bytes, blkio files 6 lines per device: a
 * megabyte is far beyond any real file, and bounds what we hold.
 */
#define IOSTAT_MAX_BYTES (1024 * 1024)
#define PROC_IO_MAX_BYTES 4096


/* Next blank-separated token in [*p, end): sets *tok and *len, advances
 * *p.  Returns false at the end of the line.
 */
static bool next_token (const char **p,
                        const char *end,
                        const char **tok,
                        size_t *len)
{
    const char *s = *p;

    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    *tok = s;
    while (s < end && *s != ' ' && *s != '\t')
        s++;
    *len = (size_t)(s - *tok);
    *p = s;
    return *len > 0;
}

/* Parse "MAJ:MIN" into its numbers (each within 32 bits). */
static int parse_devno (const char *s,
                        size_t len,
                        unsigned *major,
                        unsigned *minor)
{
    const char *colon = memchr (s, ':', len);
    uint64_t a, b;

    if (!colon || tr_parse_u64 (s, (size_t)(colon - s), &a) < 0
        || tr_parse_u64 (colon + 1, len - (size_t)(colon - s) - 1, &b) < 0
        || a > UINT32_MAX || b > UINT32_MAX) {
        errno = EINVAL;
        return -1;
    }
    *major = (unsigned)a;
    *minor = (unsigned)b;
    return 0;
}

/* The entry for major:minor, added (zeroed) if new.  NULL when the
 * snapshot is full: the device is then dropped and counted as truncated.
 */
static struct tr_iostat_dev *get_dev (struct tr_iostat *io,
                                      unsigned major,
                                      unsigned minor)
{
    size_t i;

    for (i = 0; i < io->count; i++)
        if (io->dev[i].major == major && io->dev[i].minor == minor)
            return &io->dev[i];
    if (io->count == TR_IOSTAT_MAX_DEVICES) {
        io->truncated = true;
        return NULL;
    }
    memset (&io->dev[io->count], 0, sizeof (io->dev[0]));
    io->dev[io->count].major = major;
    io->dev[io->count].minor = minor;
    return &io->dev[io->count++];
}

/* The v2 keys we keep, with their place in struct tr_iostat_dev. */
static const struct {
    const char *key;
    size_t offset;
} v2_keys[] = {
    { "rbytes", offsetof (struct tr_iostat_dev, read_bytes) },
    { "wbytes", offsetof (struct tr_iostat_dev, write_bytes) },
    { "rios", offsetof (struct tr_iostat_dev, read_ops) },
    { "wios", offsetof (struct tr_iostat_dev, write_ops) },
};
#define V2_NKEYS (sizeof (v2_keys) / sizeof (v2_keys[0]))

static int parse_v2_line (const char *p, const char *end, struct tr_iostat *io)
{
    struct tr_iostat_dev d = { 0 }, *dst;
    unsigned seen = 0;
    const char *tok;
    size_t len, k;

    if (!next_token (&p, end, &tok, &len))
        return 0; /* blank line */
    if (parse_devno (tok, len, &d.major, &d.minor) < 0)
        return -1;
    while (next_token (&p, end, &tok, &len)) {
        const char *eq = memchr (tok, '=', len);
        size_t klen;

        /* Not a key: nothing the kernel prints today, ignored so that a
         * future format does not lose the counters we know.
         */
        if (!eq)
            continue;
        klen = (size_t)(eq - tok);
        for (k = 0; k < V2_NKEYS; k++) {
            if (strlen (v2_keys[k].key) != klen
                || strncmp (tok, v2_keys[k].key, klen) != 0)
                continue;
            if (seen & (1u << k))
                goto invalid;
            if (tr_parse_u64 (eq + 1, len - klen - 1,
                           (uint64_t *)((char *)&d + v2_keys[k].offset))
                < 0)
                return -1;
            seen |= 1u << k;
        }
    }
    if (seen != (1u << V2_NKEYS) - 1)
        goto invalid;
    /* The kernel lists a device once; a repeat means a garbled file. */
    for (k = 0; k < io->count; k++)
        if (io->dev[k].major == d.major && io->dev[k].minor == d.minor)
            goto invalid;
    if ((dst = get_dev (io, d.major, d.minor)))
        *dst = d;
    return 0;
invalid:
    errno = EINVAL;
    return -1;
}

int tr_iostat_parse_v2 (const char *text, struct tr_iostat *out)
{
    struct tr_iostat *r;
    const char *p = text;

    if (!text || !out) {
        errno = EINVAL;
        return -1;
    }
    /* A snapshot is several kilobytes: keep it off the stack. */
    if (!(r = calloc (1, sizeof (*r)))) {
        errno = ENOMEM;
        return -1;
    }
    while (*p) {
        const char *nl = strchr (p, '\n');
        const char *end = nl ? nl : p + strlen (p);

        if (parse_v2_line (p, end, r) < 0) {
            int saved = errno;
            free (r);
            errno = saved;
            return -1;
        }
        p = nl ? nl + 1 : end;
    }
    *out = *r;
    free (r);
    return 0;
}

/* One blkio.throttle line, "MAJ:MIN Op N" or the final "Total N". */
static int parse_v1_line (const char *p,
                          const char *end,
                          bool ops,
                          struct tr_iostat *io)
{
    const char *tok, *op;
    size_t len, oplen;
    unsigned major, minor;
    struct tr_iostat_dev *d;
    uint64_t v;

    if (!next_token (&p, end, &tok, &len))
        return 0;
    if (len == 5 && !strncmp (tok, "Total", 5)) {
        if (!next_token (&p, end, &tok, &len) || tr_parse_u64 (tok, len, &v) < 0)
            goto invalid;
        goto done;
    }
    if (parse_devno (tok, len, &major, &minor) < 0
        || !next_token (&p, end, &op, &oplen)
        || !next_token (&p, end, &tok, &len))
        goto invalid;
    if (tr_parse_u64 (tok, len, &v) < 0)
        return -1;
    if (!(d = get_dev (io, major, minor)))
        goto done;
    if (oplen == 4 && !strncmp (op, "Read", 4)) {
        if (ops)
            d->read_ops = v;
        else
            d->read_bytes = v;
    }
    else if (oplen == 5 && !strncmp (op, "Write", 5)) {
        if (ops)
            d->write_ops = v;
        else
            d->write_bytes = v;
    }
done:
    if (next_token (&p, end, &tok, &len))
        goto invalid;
    return 0;
invalid:
    errno = EINVAL;
    return -1;
}

static int parse_v1_text (const char *text, bool ops, struct tr_iostat *io)
{
    const char *p = text;

    while (*p) {
        const char *nl = strchr (p, '\n');
        const char *end = nl ? nl : p + strlen (p);

        if (parse_v1_line (p, end, ops, io) < 0)
            return -1;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

int tr_iostat_parse_v1 (const char *bytes_text,
                        const char *ops_text,
                        struct tr_iostat *out)
{
    struct tr_iostat *r;
    int saved;

    if (!bytes_text || !out) {
        errno = EINVAL;
        return -1;
    }
    if (!(r = calloc (1, sizeof (*r)))) {
        errno = ENOMEM;
        return -1;
    }
    if (parse_v1_text (bytes_text, false, r) < 0
        || (ops_text && parse_v1_text (ops_text, true, r) < 0)) {
        saved = errno;
        free (r);
        errno = saved;
        return -1;
    }
    *out = *r;
    free (r);
    return 0;
}

/* Read <dir>/<file> through the fsroot. */
static char *read_cgfile (const char *dir, const char *file, size_t max)
{
    char path[PATH_MAX];
    int n;

    if (!dir) {
        errno = EINVAL;
        return NULL;
    }
    n = snprintf (path, sizeof (path), "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof (path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return tr_fsroot_read_text (path, max);
}

int tr_iostat_read_v2 (const char *dir, struct tr_iostat *out)
{
    char *text;
    int rc, saved;

    if (!(text = read_cgfile (dir, "io.stat", IOSTAT_MAX_BYTES)))
        return -1;
    rc = tr_iostat_parse_v2 (text, out);
    saved = errno;
    free (text);
    errno = saved;
    return rc;
}

int tr_iostat_read_v1 (const char *dir, struct tr_iostat *out)
{
    char *bytes = NULL, *ops = NULL;
    int rc = -1, saved;

    if (!(bytes = read_cgfile (dir, "blkio.throttle.io_service_bytes",
                               IOSTAT_MAX_BYTES))
        || !(ops = read_cgfile (dir, "blkio.throttle.io_serviced",
                                IOSTAT_MAX_BYTES)))
        goto out;
    rc = tr_iostat_parse_v1 (bytes, ops, out);
out:
    saved = errno;
    free (bytes);
    free (ops);
    errno = saved;
    return rc;
}

static uint64_t add_sat (uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void tr_iostat_totals (const struct tr_iostat *io,
                       uint64_t *read_bytes,
                       uint64_t *write_bytes)
{
    uint64_t r = 0, w = 0;
    size_t i;

    for (i = 0; io && i < io->count; i++) {
        r = add_sat (r, io->dev[i].read_bytes);
        w = add_sat (w, io->dev[i].write_bytes);
    }
    if (read_bytes)
        *read_bytes = r;
    if (write_bytes)
        *write_bytes = w;
}

/* The /proc/PID/io fields, with their place in struct tr_proc_io. */
static const struct {
    const char *key;
    size_t offset;
} proc_keys[] = {
    { "rchar", offsetof (struct tr_proc_io, rchar) },
    { "wchar", offsetof (struct tr_proc_io, wchar) },
    { "syscr", offsetof (struct tr_proc_io, syscr) },
    { "syscw", offsetof (struct tr_proc_io, syscw) },
    { "read_bytes", offsetof (struct tr_proc_io, read_bytes) },
    { "write_bytes", offsetof (struct tr_proc_io, write_bytes) },
    { "cancelled_write_bytes",
      offsetof (struct tr_proc_io, cancelled_write_bytes) },
};
#define PROC_NKEYS (sizeof (proc_keys) / sizeof (proc_keys[0]))

int tr_iostat_parse_proc (const char *text, struct tr_proc_io *out)
{
    struct tr_proc_io r = { 0 };
    unsigned seen = 0;
    const char *p = text;
    size_t k;

    if (!text || !out)
        goto invalid;
    while (*p) {
        const char *nl = strchr (p, '\n');
        const char *end = nl ? nl : p + strlen (p);
        const char *colon = memchr (p, ':', (size_t)(end - p));
        const char *tok;
        size_t len;

        if (colon) {
            size_t klen = (size_t)(colon - p);

            for (k = 0; k < PROC_NKEYS; k++) {
                const char *q = colon + 1;

                if (strlen (proc_keys[k].key) != klen
                    || strncmp (p, proc_keys[k].key, klen) != 0)
                    continue;
                if (seen & (1u << k) || !next_token (&q, end, &tok, &len))
                    goto invalid;
                if (tr_parse_u64 (tok, len,
                               (uint64_t *)((char *)&r + proc_keys[k].offset))
                    < 0)
                    return -1;
                if (next_token (&q, end, &tok, &len))
                    goto invalid;
                seen |= 1u << k;
            }
        }
        p = nl ? nl + 1 : end;
    }
    if (seen != (1u << PROC_NKEYS) - 1)
        goto invalid;
    *out = r;
    return 0;
invalid:
    errno = EINVAL;
    return -1;
}

int tr_iostat_read_proc (pid_t pid, struct tr_proc_io *out)
{
    char path[64];
    char *text;
    int rc, saved;

    snprintf (path, sizeof (path), "/proc/%d/io", (int)pid);
    if (!(text = tr_fsroot_read_text (path, PROC_IO_MAX_BYTES)))
        return -1;
    rc = tr_iostat_parse_proc (text, out);
    saved = errno;
    free (text);
    errno = saved;
    return rc;
}

/* JSON integers are signed 64-bit; no real counter gets near the top. */
static json_t *json_u64 (uint64_t v)
{
    return json_integer (v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static uint64_t sub_clamped (uint64_t end, uint64_t start)
{
    return end > start ? end - start : 0;
}

static const struct tr_iostat_dev *find_dev (const struct tr_iostat *io,
                                             unsigned major,
                                             unsigned minor)
{
    size_t i;

    for (i = 0; io && i < io->count; i++)
        if (io->dev[i].major == major && io->dev[i].minor == minor)
            return &io->dev[i];
    return NULL;
}

/* Set the four counters of a device row or of the totals. */
static int set_counters (json_t *o, const struct tr_iostat_dev *d)
{
    if (json_object_set_new (o, "read_bytes", json_u64 (d->read_bytes)) < 0
        || json_object_set_new (o, "write_bytes", json_u64 (d->write_bytes)) < 0
        || json_object_set_new (o, "read_ops", json_u64 (d->read_ops)) < 0
        || json_object_set_new (o, "write_ops", json_u64 (d->write_ops)) < 0)
        return -1;
    return 0;
}

static json_t *proc_json (const struct tr_proc_io *proc,
                          const char *source,
                          bool exact)
{
    json_t *o;
    size_t k;

    if (!(o = json_object ()))
        return NULL;
    if (json_object_set_new (o, "source", json_string (source)) < 0
        || json_object_set_new (o, "exact", json_boolean (exact)) < 0)
        goto error;
    for (k = 0; k < PROC_NKEYS; k++) {
        uint64_t v =
            *(const uint64_t *)((const char *)proc + proc_keys[k].offset);
        if (json_object_set_new (o, proc_keys[k].key, json_u64 (v)) < 0)
            goto error;
    }
    return o;
error:
    json_decref (o);
    return NULL;
}

json_t *tr_iostat_json (const char *source,
                        const struct tr_iostat *start,
                        const struct tr_iostat *end,
                        const struct tr_proc_io *proc,
                        const char *proc_source,
                        bool proc_exact)
{
    struct tr_iostat_dev total = { 0 };
    json_t *o, *devices, *row;
    size_t i;
    char name[32];

    if (!source || (proc && !proc_source)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = json_object ())
        || json_object_set_new (o, "source", json_string (source)) < 0
        || !(devices = json_array ())
        || json_object_set_new (o, "devices", devices) < 0)
        goto nomem;
    for (i = 0; end && i < end->count; i++) {
        const struct tr_iostat_dev *e = &end->dev[i];
        const struct tr_iostat_dev *s = find_dev (start, e->major, e->minor);
        struct tr_iostat_dev d = { 0 };

        d.read_bytes = sub_clamped (e->read_bytes, s ? s->read_bytes : 0);
        d.write_bytes = sub_clamped (e->write_bytes, s ? s->write_bytes : 0);
        d.read_ops = sub_clamped (e->read_ops, s ? s->read_ops : 0);
        d.write_ops = sub_clamped (e->write_ops, s ? s->write_ops : 0);
        total.read_bytes = add_sat (total.read_bytes, d.read_bytes);
        total.write_bytes = add_sat (total.write_bytes, d.write_bytes);
        total.read_ops = add_sat (total.read_ops, d.read_ops);
        total.write_ops = add_sat (total.write_ops, d.write_ops);
        snprintf (name, sizeof (name), "%u:%u", e->major, e->minor);
        if (!(row = json_object ()) || json_array_append_new (devices, row) < 0
            || json_object_set_new (row, "device", json_string (name)) < 0
            || set_counters (row, &d) < 0)
            goto nomem;
    }
    if (set_counters (o, &total) < 0)
        goto nomem;
    if (proc) {
        json_t *p = proc_json (proc, proc_source, proc_exact);
        if (!p || json_object_set_new (o, "proc", p) < 0)
            goto nomem;
    }
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}
