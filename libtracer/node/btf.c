/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * BTF (Documentation/bpf/btf.rst, include/uapi/linux/btf.h): a header,
 * then a type section of variable-length records whose ids count from 1
 * in order, then a string section that names refer to by offset.  Only
 * what tr_btf_member and tr_btf_enum_value need is indexed: the start of
 * every type record.  Every offset and length is checked against the blob,
 * so a damaged file gives an error, never a read out of bounds.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/btf.h>

#include "btf.h"

#define BTF_MAX_FILE (64u << 20)
#define BTF_MAX_DEPTH 8 /* anonymous members inside anonymous members */

struct tr_btf {
    unsigned char *data;
    size_t size;
    const unsigned char *types; /* type section */
    size_t types_len;
    const char *strs; /* string section */
    size_t strs_len;
    const struct btf_type **type; /* type[id], id 1 .. ntypes */
    uint32_t ntypes;
};

static uint32_t kind_of (const struct btf_type *t)
{
    return BTF_INFO_KIND (t->info);
}

static uint32_t vlen_of (const struct btf_type *t)
{
    return BTF_INFO_VLEN (t->info);
}

/* Bytes that follow a type record's header, or -1 for an unknown kind. */
static long extra_of (const struct btf_type *t)
{
    uint32_t v = vlen_of (t);

    switch (kind_of (t)) {
    case BTF_KIND_INT:
    case BTF_KIND_VAR:
    case BTF_KIND_DECL_TAG:
        return 4;
    case BTF_KIND_PTR:
    case BTF_KIND_FWD:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_CONST:
    case BTF_KIND_RESTRICT:
    case BTF_KIND_FUNC:
    case BTF_KIND_FLOAT:
    case BTF_KIND_TYPE_TAG:
        return 0;
    case BTF_KIND_ARRAY:
        return (long)sizeof (struct btf_array);
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION:
        return (long)v * (long)sizeof (struct btf_member);
    case BTF_KIND_ENUM:
        return (long)v * (long)sizeof (struct btf_enum);
    case BTF_KIND_FUNC_PROTO:
        return (long)v * (long)sizeof (struct btf_param);
    case BTF_KIND_DATASEC:
        return (long)v * (long)sizeof (struct btf_var_secinfo);
    case BTF_KIND_ENUM64:
        return (long)v * (long)sizeof (struct btf_enum64);
    default:
        return -1;
    }
}

static const char *name_at (const tr_btf_t *btf, uint32_t off)
{
    if (off >= btf->strs_len)
        return NULL;
    if (!memchr (btf->strs + off, '\0', btf->strs_len - off))
        return NULL;
    return btf->strs + off;
}

static int bad (tr_error_t *error, const char *what)
{
    errno = EINVAL;
    tr_errprintf (error, "BTF: %s", what);
    return -1;
}

tr_btf_t *tr_btf_parse (const void *data, size_t size, tr_error_t *error)
{
    struct btf_header h;
    tr_btf_t *btf;
    size_t pos, cap = 0;

    if (!data || size < sizeof (h)) {
        bad (error, "shorter than its header");
        return NULL;
    }
    memcpy (&h, data, sizeof (h));
    if (h.magic != BTF_MAGIC || h.version != BTF_VERSION) {
        bad (error, "not BTF (magic or version)");
        return NULL;
    }
    if (h.hdr_len < sizeof (h) || h.hdr_len > size
        || (uint64_t)h.type_off + h.type_len > size - h.hdr_len
        || (uint64_t)h.str_off + h.str_len > size - h.hdr_len
        || h.type_off % 4 != 0) {
        bad (error, "sections outside the data");
        return NULL;
    }
    if (!(btf = calloc (1, sizeof (*btf))) || !(btf->data = malloc (size))) {
        free (btf);
        errno = ENOMEM;
        tr_errprintf (error, "BTF: out of memory");
        return NULL;
    }
    memcpy (btf->data, data, size);
    btf->size = size;
    btf->types = btf->data + h.hdr_len + h.type_off;
    btf->types_len = h.type_len;
    btf->strs = (const char *)btf->data + h.hdr_len + h.str_off;
    btf->strs_len = h.str_len;
    /* type[0] is void */
    for (pos = 0; pos < btf->types_len;) {
        const struct btf_type *t;
        long extra;

        if (btf->types_len - pos < sizeof (*t)) {
            bad (error, "a type record cut short");
            goto fail;
        }
        t = (const struct btf_type *)(const void *)(btf->types + pos);
        if ((extra = extra_of (t)) < 0) {
            bad (error, "a type of unknown kind");
            goto fail;
        }
        if (btf->types_len - pos - sizeof (*t) < (size_t)extra) {
            bad (error, "a type record cut short");
            goto fail;
        }
        if (btf->ntypes + 2 > cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            const struct btf_type **n = realloc (btf->type, ncap * sizeof (*n));
            if (!n) {
                errno = ENOMEM;
                tr_errprintf (error, "BTF: out of memory");
                goto fail;
            }
            btf->type = n;
            cap = ncap;
        }
        btf->type[++btf->ntypes] = t;
        pos += sizeof (*t) + (size_t)extra;
    }
    if (btf->ntypes == 0) {
        bad (error, "no types");
        goto fail;
    }
    btf->type[0] = NULL;
    return btf;
fail:
    tr_btf_free (btf);
    return NULL;
}

tr_btf_t *tr_btf_load (const char *path, tr_error_t *error)
{
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    tr_btf_t *btf;
    int fd, saved;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
        saved = errno;
        tr_errprintf (error, "%s: %s", path, strerror (errno));
        errno = saved;
        return NULL;
    }
    for (;;) {
        ssize_t n;
        if (len == cap) {
            unsigned char *nb;
            if (cap >= BTF_MAX_FILE) {
                close (fd);
                errno = EFBIG;
                tr_errprintf (error, "%s: larger than %u MiB", path,
                              BTF_MAX_FILE >> 20);
                free (buf);
                return NULL;
            }
            cap = cap ? cap * 2 : (1u << 20);
            if (!(nb = realloc (buf, cap))) {
                close (fd);
                free (buf);
                errno = ENOMEM;
                tr_errprintf (error, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        n = read (fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            saved = errno;
            close (fd);
            free (buf);
            tr_errprintf (error, "%s: %s", path, strerror (saved));
            errno = saved;
            return NULL;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close (fd);
    btf = tr_btf_parse (buf, len, error);
    saved = errno;
    free (buf);
    errno = saved;
    return btf;
}

void tr_btf_free (tr_btf_t *btf)
{
    if (!btf)
        return;
    free (btf->type);
    free (btf->data);
    free (btf);
}

static const struct btf_type *type_at (const tr_btf_t *btf, uint32_t id)
{
    return id >= 1 && id <= btf->ntypes ? btf->type[id] : NULL;
}

/* Through typedefs and qualifiers to the type itself. */
static const struct btf_type *resolve (const tr_btf_t *btf, uint32_t id)
{
    const struct btf_type *t;

    for (int i = 0; i < 32 && (t = type_at (btf, id)); i++) {
        switch (kind_of (t)) {
        case BTF_KIND_TYPEDEF:
        case BTF_KIND_VOLATILE:
        case BTF_KIND_CONST:
        case BTF_KIND_RESTRICT:
        case BTF_KIND_TYPE_TAG:
            id = t->type;
            continue;
        default:
            return t;
        }
    }
    return NULL;
}

/* The size of a resolved type, and its element count for an array. */
static size_t size_of (const tr_btf_t *btf,
                       const struct btf_type *t,
                       uint32_t *nelems)
{
    *nelems = 0;
    if (!t)
        return 0;
    switch (kind_of (t)) {
    case BTF_KIND_INT:
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION:
    case BTF_KIND_FLOAT:
        return t->size;
    case BTF_KIND_PTR:
        return 8;
    case BTF_KIND_ARRAY: {
        const struct btf_array *a = (const void *)(t + 1);
        uint32_t unused;
        size_t each = size_of (btf, resolve (btf, a->type), &unused);
        *nelems = a->nelems;
        return each * a->nelems;
    }
    default:
        return 0;
    }
}

static int find_member (const tr_btf_t *btf,
                        const struct btf_type *t,
                        const char *member,
                        size_t base,
                        int depth,
                        size_t *offset,
                        size_t *size,
                        uint32_t *nelems)
{
    const struct btf_member *m = (const void *)(t + 1);
    bool kflag = BTF_INFO_KFLAG (t->info);

    for (uint32_t i = 0; i < vlen_of (t); i++) {
        uint32_t bits =
            kflag ? BTF_MEMBER_BIT_OFFSET (m[i].offset) : m[i].offset;
        const char *name = name_at (btf, m[i].name_off);
        const struct btf_type *mt = resolve (btf, m[i].type);

        if (name && *name && !strcmp (name, member)) {
            if (bits % 8 != 0
                || (kflag && BTF_MEMBER_BITFIELD_SIZE (m[i].offset))) {
                errno = EINVAL;
                return -1;
            }
            *offset = base + bits / 8;
            *size = size_of (btf, mt, nelems);
            return 0;
        }
        if ((!name || !*name) && mt && depth < BTF_MAX_DEPTH
            && (kind_of (mt) == BTF_KIND_STRUCT
                || kind_of (mt) == BTF_KIND_UNION)
            && bits % 8 == 0
            && find_member (btf, mt, member, base + bits / 8, depth + 1, offset,
                            size, nelems)
                   == 0)
            return 0;
    }
    errno = ENOENT;
    return -1;
}

int tr_btf_member (const tr_btf_t *btf,
                   const char *type,
                   const char *member,
                   size_t *offset,
                   size_t *size,
                   uint32_t *nelems)
{
    size_t sz;
    uint32_t ne;

    if (!btf || !type || !member || !offset) {
        errno = EINVAL;
        return -1;
    }
    for (uint32_t id = 1; id <= btf->ntypes; id++) {
        const struct btf_type *t = btf->type[id];
        const char *name;

        if ((kind_of (t) != BTF_KIND_STRUCT && kind_of (t) != BTF_KIND_UNION)
            || !(name = name_at (btf, t->name_off)) || strcmp (name, type))
            continue;
        if (find_member (btf, t, member, 0, 0, offset, &sz, &ne) < 0) {
            if (errno == EINVAL)
                return -1;
            continue; /* another type of that name may have it */
        }
        if (size)
            *size = sz;
        if (nelems)
            *nelems = ne;
        return 0;
    }
    errno = ENOENT;
    return -1;
}

int tr_btf_enum_value (const tr_btf_t *btf,
                       const char *type,
                       const char *name,
                       int64_t *value)
{
    if (!btf || !type || !name || !value) {
        errno = EINVAL;
        return -1;
    }
    for (uint32_t id = 1; id <= btf->ntypes; id++) {
        const struct btf_type *t = btf->type[id];
        const char *tn;

        if ((kind_of (t) != BTF_KIND_ENUM && kind_of (t) != BTF_KIND_ENUM64)
            || !(tn = name_at (btf, t->name_off)) || strcmp (tn, type))
            continue;
        for (uint32_t i = 0; i < vlen_of (t); i++) {
            const char *en;
            if (kind_of (t) == BTF_KIND_ENUM) {
                const struct btf_enum *e = (const struct btf_enum *)(t + 1) + i;
                if ((en = name_at (btf, e->name_off)) && !strcmp (en, name)) {
                    *value = BTF_INFO_KFLAG (t->info)
                                 ? (int64_t)e->val
                                 : (int64_t)(uint32_t)e->val;
                    return 0;
                }
            }
            else {
                const struct btf_enum64 *e =
                    (const struct btf_enum64 *)(t + 1) + i;
                if ((en = name_at (btf, e->name_off)) && !strcmp (en, name)) {
                    *value =
                        (int64_t)(((uint64_t)e->val_hi32 << 32) | e->val_lo32);
                    return 0;
                }
            }
        }
    }
    errno = ENOENT;
    return -1;
}
