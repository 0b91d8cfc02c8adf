/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for parquet.c, the Parquet writer.  The files it makes are
 * read back by a small reader written here from the format's spec and
 * independent of the writer: a generic Thrift compact-protocol decoder
 * for the footer and the page headers, an RLE/bit-packed hybrid decoder
 * for definition levels and a PLAIN decoder for values.  Checked: the
 * magic bytes and footer length, the schema (types, repetition, converted
 * and logical types), key/value metadata, every value of every type
 * (extremes, NaN bits, -0, multibyte and empty strings), the layout of
 * row groups and pages under small limits, definition levels and bit
 * packing, bad input that leaves the table unchanged, and a sweep of
 * failed allocations.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/view/parquet.h"

/* --- A Thrift compact-protocol reader ----------------------------------- */

enum {
    T_BOOL = 1, /* field types 1 (true) and 2 (false) both read as this */
    T_BYTE = 3,
    T_I16 = 4,
    T_I32 = 5,
    T_I64 = 6,
    T_DOUBLE = 7,
    T_BINARY = 8,
    T_LIST = 9,
    T_SET = 10,
    T_STRUCT = 12,
};

struct tnode {
    int type;
    int64_t i;          /* integers, bools */
    const uint8_t *p;   /* binary */
    size_t len;         /* binary bytes; list elements; struct fields */
    int etype;          /* list element type */
    int *ids;           /* struct field ids */
    struct tnode *kids; /* struct fields or list elements */
};

struct rd {
    const uint8_t *p;
    size_t n;
    size_t off;
};

static uint8_t rd_byte (struct rd *r)
{
    assert_true (r->off < r->n);
    return r->p[r->off++];
}

static uint64_t rd_varint (struct rd *r)
{
    uint64_t v = 0;

    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b = rd_byte (r);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    fail_msg ("varint longer than 10 bytes at %zu", r->off);
    return 0;
}

static int64_t unzigzag (uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void rd_struct (struct rd *r, struct tnode *s, int depth);

static void rd_value (struct rd *r, int type, struct tnode *v, int depth)
{
    size_t n;
    uint8_t b;

    memset (v, 0, sizeof (*v));
    v->type = type;
    switch (type) {
    case T_BYTE:
        v->i = (int8_t)rd_byte (r);
        break;
    case T_I16:
    case T_I32:
    case T_I64:
        v->i = unzigzag (rd_varint (r));
        break;
    case T_DOUBLE:
        for (int k = 0; k < 8; k++)
            v->i |= (int64_t)((uint64_t)rd_byte (r) << (8 * k));
        break;
    case T_BINARY:
        n = rd_varint (r);
        assert_true (n <= r->n - r->off);
        v->p = r->p + r->off;
        v->len = n;
        r->off += n;
        break;
    case T_LIST:
    case T_SET:
        b = rd_byte (r);
        v->etype = b & 0x0f;
        n = b >> 4;
        if (n == 15) {
            n = rd_varint (r);
            /* the long form only when the short one cannot say it */
            assert_true (n >= 15);
        }
        assert_true (n <= r->n - r->off);
        v->len = n;
        v->kids = calloc (n ? n : 1, sizeof (*v->kids));
        assert_non_null (v->kids);
        for (size_t k = 0; k < n; k++) {
            if (v->etype == T_BOOL || v->etype == 2) {
                v->kids[k].type = T_BOOL;
                v->kids[k].i = rd_byte (r) == 1;
            }
            else
                rd_value (r, v->etype, &v->kids[k], depth + 1);
        }
        break;
    case T_STRUCT:
        rd_struct (r, v, depth + 1);
        break;
    default:
        fail_msg ("unexpected compact type %d at %zu", type, r->off);
    }
}

static void rd_struct (struct rd *r, struct tnode *s, int depth)
{
    size_t cap = 0;
    int last = 0;

    assert_true (depth < 32);
    memset (s, 0, sizeof (*s));
    s->type = T_STRUCT;
    for (;;) {
        uint8_t b = rd_byte (r);
        int type = b & 0x0f, delta = b >> 4, id;

        if (b == 0)
            break;
        id = delta ? last + delta : (int)unzigzag (rd_varint (r));
        /* field ids ascend in every struct the writer makes */
        assert_true (id > last);
        last = id;
        if (s->len == cap) {
            cap = cap ? 2 * cap : 8;
            s->kids = realloc (s->kids, cap * sizeof (*s->kids));
            s->ids = realloc (s->ids, cap * sizeof (*s->ids));
            assert_true (s->kids && s->ids);
        }
        s->ids[s->len] = id;
        if (type == 1 || type == 2) {
            memset (&s->kids[s->len], 0, sizeof (*s->kids));
            s->kids[s->len].type = T_BOOL;
            s->kids[s->len].i = type == 1;
        }
        else
            rd_value (r, type, &s->kids[s->len], depth);
        s->len++;
    }
}

static void tnode_free (struct tnode *v)
{
    if (v->type == T_STRUCT || v->type == T_LIST || v->type == T_SET) {
        for (size_t k = 0; k < v->len; k++)
            tnode_free (&v->kids[k]);
        free (v->kids);
        free (v->ids);
    }
}

/* Field id of struct s, or NULL. */
static const struct tnode *fld (const struct tnode *s, int id)
{
    assert_int_equal (s->type, T_STRUCT);
    for (size_t k = 0; k < s->len; k++) {
        if (s->ids[k] == id)
            return &s->kids[k];
    }
    return NULL;
}

static const struct tnode *fld_of (const struct tnode *s, int id, int type)
{
    const struct tnode *v = fld (s, id);

    if (!v)
        fail_msg ("field %d missing", id);
    assert_int_equal (v->type, type);
    return v;
}

static int64_t fint (const struct tnode *s, int id, int type)
{
    return fld_of (s, id, type)->i;
}

static void assert_fstr (const struct tnode *s, int id, const char *want)
{
    const struct tnode *v = fld_of (s, id, T_BINARY);

    assert_int_equal (v->len, strlen (want));
    assert_memory_equal (v->p, want, v->len);
}

/* --- Reading a whole file ----------------------------------------------- */

struct pqfile {
    uint8_t *buf;
    size_t len;
    struct tnode md; /* FileMetaData */
};

static uint32_t le32_at (const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

static uint64_t le64_at (const uint8_t *p)
{
    return (uint64_t)le32_at (p) | (uint64_t)le32_at (p + 4) << 32;
}

/* Check the frame (magic, footer length) and decode the footer. */
static void pqfile_open (struct pqfile *f, uint8_t *buf, size_t len)
{
    struct rd r;
    uint32_t flen;

    memset (f, 0, sizeof (*f));
    f->buf = buf;
    f->len = len;
    assert_true (len >= 12);
    assert_memory_equal (buf, "PAR1", 4);
    assert_memory_equal (buf + len - 4, "PAR1", 4);
    flen = le32_at (buf + len - 8);
    assert_true (flen > 0 && flen <= len - 12);
    r.p = buf;
    r.n = len - 8;
    r.off = len - 8 - flen;
    rd_struct (&r, &f->md, 0);
    /* the footer is exactly one FileMetaData */
    assert_int_equal (r.off, len - 8);
}

static void pqfile_close (struct pqfile *f)
{
    tnode_free (&f->md);
    free (f->buf);
}

static struct pqfile finish (tr_parquet_t *pq)
{
    struct pqfile f;
    tr_error_t error;
    size_t len = 0;
    void *buf = tr_parquet_finish (pq, &len, &error);

    if (!buf)
        fail_msg ("finish: %s", error.text);
    pqfile_open (&f, buf, len);
    return f;
}

/* One page as read back. */
struct page {
    size_t values; /* rows, nulls included */
    size_t defined;
    size_t vbytes;    /* PLAIN bytes of its values */
    size_t lastbytes; /* of its last non-null value */
    size_t lbytes;    /* of its definition levels with their length */
};

/* A column read back: values (strings point into the file), per page. */
struct column_read {
    struct tr_parquet_value *vals;
    size_t n;
    struct page pages[4096];
    size_t npages;
    size_t page_of_group[64]; /* pages in each row group */
};

/* Decode count definition levels (bit width 1) of the RLE/bit-packed
 * hybrid encoding in p[0..len) into lv; every byte must be used.
 */
static void decode_levels (const uint8_t *p,
                           size_t len,
                           size_t count,
                           uint8_t *lv)
{
    struct rd r = { p, len, 0 };
    size_t got = 0;

    while (got < count) {
        uint64_t h = rd_varint (&r);
        if (h & 1) {
            size_t groups = h >> 1;
            assert_true (groups > 0);
            /* no group entirely past the end */
            assert_true (got + 8 * (groups - 1) < count);
            for (size_t g = 0; g < groups; g++) {
                uint8_t b = rd_byte (&r);
                for (int k = 0; k < 8; k++) {
                    if (got < count)
                        lv[got++] = (b >> k) & 1;
                    else
                        assert_int_equal ((b >> k) & 1, 0);
                }
            }
        }
        else {
            size_t run = h >> 1;
            uint8_t v = rd_byte (&r);
            assert_true (run > 0 && run <= count - got);
            assert_true (v <= 1);
            for (size_t k = 0; k < run; k++)
                lv[got++] = v;
        }
    }
    assert_int_equal (r.off, len);
}

static int physical (tr_parquet_type_t t)
{
    static const int phys[] = {
        [TR_PARQUET_INT32] = 1,  [TR_PARQUET_INT64] = 2,
        [TR_PARQUET_DOUBLE] = 5, [TR_PARQUET_BOOLEAN] = 0,
        [TR_PARQUET_STRING] = 6, [TR_PARQUET_TIMESTAMP_MS] = 2,
    };
    return phys[t];
}

/* Read one data page at *off of column type t into cr; checks the header
 * against the page and returns the page's rows.
 */
static size_t read_page (const struct pqfile *f,
                         size_t *off,
                         tr_parquet_type_t t,
                         bool optional,
                         struct column_read *cr)
{
    struct rd r = { f->buf, f->len, *off };
    struct tnode h;
    const struct tnode *dph;
    struct page *pg = &cr->pages[cr->npages];
    uint8_t *lv;
    size_t size, rows, p, end, nn = 0;

    rd_struct (&r, &h, 0);
    assert_int_equal (fint (&h, 1, T_I32), 0); /* DATA_PAGE */
    size = (size_t)fint (&h, 2, T_I32);
    assert_int_equal (fint (&h, 3, T_I32), (int64_t)size);
    assert_null (fld (&h, 4)); /* no crc */
    dph = fld_of (&h, 5, T_STRUCT);
    rows = (size_t)fint (dph, 1, T_I32);
    assert_int_equal (fint (dph, 2, T_I32), 0); /* PLAIN */
    assert_int_equal (fint (dph, 3, T_I32), 3); /* RLE */
    assert_int_equal (fint (dph, 4, T_I32), 3);
    tnode_free (&h);
    assert_true (rows > 0);
    assert_true (size <= f->len - r.off);
    p = r.off;
    end = r.off + size;

    memset (pg, 0, sizeof (*pg));
    pg->values = rows;
    lv = malloc (rows);
    assert_non_null (lv);
    memset (lv, 1, rows);
    if (optional) {
        uint32_t llen;
        assert_true (end - p >= 4);
        llen = le32_at (f->buf + p);
        assert_true (llen <= end - p - 4);
        decode_levels (f->buf + p + 4, llen, rows, lv);
        pg->lbytes = 4 + llen;
        p += 4 + llen;
    }
    cr->vals = realloc (cr->vals, (cr->n + rows) * sizeof (*cr->vals));
    assert_non_null (cr->vals);
    for (size_t k = 0; k < rows; k++) {
        struct tr_parquet_value *v = &cr->vals[cr->n + k];
        size_t vb = 0;

        memset (v, 0, sizeof (*v));
        if (!lv[k]) {
            v->null = true;
            continue;
        }
        switch (t) {
        case TR_PARQUET_INT32:
            vb = 4;
            assert_true (end - p >= vb);
            v->v.i32 = (int32_t)le32_at (f->buf + p);
            break;
        case TR_PARQUET_INT64:
        case TR_PARQUET_TIMESTAMP_MS:
            vb = 8;
            assert_true (end - p >= vb);
            v->v.i64 = (int64_t)le64_at (f->buf + p);
            break;
        case TR_PARQUET_DOUBLE: {
            uint64_t bits;
            vb = 8;
            assert_true (end - p >= vb);
            bits = le64_at (f->buf + p);
            memcpy (&v->v.d, &bits, 8);
            break;
        }
        case TR_PARQUET_BOOLEAN:
            /* bit nn of the packed values, LSB first */
            assert_true (p + nn / 8 < end);
            v->v.b = (f->buf[p + nn / 8] >> (nn % 8)) & 1;
            break;
        case TR_PARQUET_STRING:
            assert_true (end - p >= 4);
            vb = le32_at (f->buf + p);
            assert_true (end - p - 4 >= vb);
            v->v.str.s = (const char *)f->buf + p + 4;
            v->v.str.len = vb;
            vb += 4;
            break;
        }
        p += vb;
        pg->vbytes += vb;
        if (vb)
            pg->lastbytes = vb;
        nn++;
    }
    if (t == TR_PARQUET_BOOLEAN) {
        pg->vbytes = (nn + 7) / 8;
        pg->lastbytes = 1;
        /* the padding bits of the last byte are zero */
        if (nn % 8)
            assert_int_equal (f->buf[p + nn / 8] >> (nn % 8), 0);
        p += pg->vbytes;
    }
    free (lv);
    /* the page is exactly its levels and values */
    assert_int_equal (p, end);
    pg->defined = nn;
    cr->n += rows;
    cr->npages++;
    *off = end;
    return rows;
}

/* Read column col of f: checks every ColumnChunk and RowGroup field
 * against the pages found, and that chunks follow each other from byte
 * 4 to the footer.
 */
static void read_column (const struct pqfile *f,
                         size_t col,
                         tr_parquet_type_t t,
                         bool optional,
                         struct column_read *cr)
{
    const struct tnode *rgs = fld_of (&f->md, 4, T_LIST);
    const struct tnode *schema = fld_of (&f->md, 2, T_LIST);
    size_t rows_total = 0, next = 4;

    memset (cr, 0, sizeof (*cr));
    assert_int_equal (rgs->etype, T_STRUCT);
    assert_true (rgs->len <= 64);
    for (size_t g = 0; g < rgs->len; g++) {
        const struct tnode *rg = &rgs->kids[g];
        const struct tnode *chunks = fld_of (rg, 1, T_LIST);
        int64_t group_rows = fint (rg, 3, T_I64), sum = 0;

        assert_int_equal (chunks->len, schema->len - 1);
        for (size_t c = 0; c < chunks->len; c++) {
            const struct tnode *cc = &chunks->kids[c];
            const struct tnode *cm = fld_of (cc, 3, T_STRUCT);
            const struct tnode *enc = fld_of (cm, 2, T_LIST);
            const struct tnode *path = fld_of (cm, 3, T_LIST);
            const struct tnode *stats = fld_of (cm, 12, T_STRUCT);
            const struct tnode *cname =
                fld_of (&schema->kids[c + 1], 4, T_BINARY);
            size_t off = (size_t)fint (cm, 9, T_I64);
            size_t size = (size_t)fint (cm, 7, T_I64);
            bool opt = fint (&schema->kids[c + 1], 3, T_I32) == 1;
            size_t values = 0, nulls = 0, first = cr->npages;

            /* contiguous chunks; file_offset is the chunk's start */
            assert_int_equal (off, next);
            assert_int_equal (fint (cc, 2, T_I64), (int64_t)off);
            assert_int_equal (fint (cm, 1, T_I32),
                              fint (&schema->kids[c + 1], 1, T_I32));
            assert_int_equal (enc->etype, T_I32);
            assert_int_equal (enc->len, opt ? 2 : 1);
            assert_int_equal (enc->kids[0].i, 0);
            if (opt)
                assert_int_equal (enc->kids[1].i, 3);
            assert_int_equal (path->etype, T_BINARY);
            assert_int_equal (path->len, 1);
            assert_int_equal (path->kids[0].len, cname->len);
            assert_memory_equal (path->kids[0].p, cname->p, cname->len);
            assert_int_equal (fint (cm, 4, T_I32), 0);
            assert_int_equal (fint (cm, 6, T_I64), (int64_t)size);
            assert_int_equal (fint (rg, 3, T_I64), fint (cm, 5, T_I64));
            next = off + size;
            sum += (int64_t)size;
            if (c != col)
                continue;
            assert_true (!opt == !optional);
            assert_int_equal (fint (cm, 1, T_I32), physical (t));
            while (off < next) {
                size_t before = cr->n;
                values += read_page (f, &off, t, optional, cr);
                for (size_t k = before; k < cr->n; k++)
                    nulls += cr->vals[k].null;
            }
            assert_int_equal (off, next);
            assert_int_equal (values, (size_t)group_rows);
            assert_int_equal (fint (stats, 3, T_I64), (int64_t)nulls);
            cr->page_of_group[g] = cr->npages - first;
        }
        assert_int_equal (fint (rg, 2, T_I64), sum);
        assert_int_equal (fint (rg, 6, T_I64), sum);
        assert_int_equal (fint (rg, 5, T_I64),
                          fint (&chunks->kids[0], 2, T_I64));
        rows_total += (size_t)group_rows;
    }
    /* the footer follows the last chunk */
    assert_int_equal (next, f->len - 8 - le32_at (f->buf + f->len - 8));
    assert_int_equal (fint (&f->md, 3, T_I64), (int64_t)rows_total);
    assert_int_equal (cr->n, rows_total);
}

static void column_read_free (struct column_read *cr)
{
    free (cr->vals);
}

static bool value_equal (tr_parquet_type_t t,
                         const struct tr_parquet_value *a,
                         const struct tr_parquet_value *b)
{
    if (a->null || b->null)
        return a->null == b->null;
    switch (t) {
    case TR_PARQUET_INT32:
        return a->v.i32 == b->v.i32;
    case TR_PARQUET_INT64:
    case TR_PARQUET_TIMESTAMP_MS:
        return a->v.i64 == b->v.i64;
    case TR_PARQUET_DOUBLE:
        /* bit for bit: NaN payloads and -0 included */
        return memcmp (&a->v.d, &b->v.d, sizeof (double)) == 0;
    case TR_PARQUET_BOOLEAN:
        return a->v.b == b->v.b;
    case TR_PARQUET_STRING:
        return a->v.str.len == b->v.str.len
               && (a->v.str.len == 0
                   || memcmp (a->v.str.s, b->v.str.s, a->v.str.len) == 0);
    }
    return false;
}

/* --- Building tables ----------------------------------------------------- */

static tr_parquet_t *create1 (tr_parquet_type_t t, bool optional)
{
    struct tr_parquet_column col = { "c", t, optional };
    tr_error_t error;
    tr_parquet_t *pq = tr_parquet_create (NULL, &col, 1, NULL, &error);

    if (!pq)
        fail_msg ("create: %s", error.text);
    return pq;
}

static void add1 (tr_parquet_t *pq, const struct tr_parquet_value *v)
{
    tr_error_t error;

    if (tr_parquet_add_row (pq, v, &error) < 0)
        fail_msg ("add_row: %s", error.text);
}

static struct tr_parquet_value null_value (void)
{
    struct tr_parquet_value v = { .null = true };
    return v;
}

static struct tr_parquet_value i32v (int32_t x)
{
    struct tr_parquet_value v = { .v.i32 = x };
    return v;
}

static struct tr_parquet_value i64v (int64_t x)
{
    struct tr_parquet_value v = { .v.i64 = x };
    return v;
}

static struct tr_parquet_value dv (double x)
{
    struct tr_parquet_value v = { .v.d = x };
    return v;
}

static struct tr_parquet_value bv (bool x)
{
    struct tr_parquet_value v = { .v.b = x };
    return v;
}

static struct tr_parquet_value sv (const char *s, size_t len)
{
    struct tr_parquet_value v = { .v.str = { s, len } };
    return v;
}

static struct tr_parquet_value strv (const char *s)
{
    return sv (s, strlen (s));
}

/* Write vals[n] to a one-column table and read them back unchanged. */
static void roundtrip (tr_parquet_type_t t,
                       bool optional,
                       const struct tr_parquet_value *vals,
                       size_t n)
{
    tr_parquet_t *pq = create1 (t, optional);
    struct column_read cr;
    struct pqfile f;

    for (size_t i = 0; i < n; i++)
        add1 (pq, &vals[i]);
    assert_int_equal (tr_parquet_rows (pq), n);
    f = finish (pq);
    read_column (&f, 0, t, optional, &cr);
    assert_int_equal (cr.n, n);
    for (size_t i = 0; i < n; i++) {
        if (!value_equal (t, &vals[i], &cr.vals[i]))
            fail_msg ("type %d optional %d: value %zu differs", (int)t,
                      optional, i);
    }
    column_read_free (&cr);
    pqfile_close (&f);
    tr_parquet_destroy (pq);
}

/* --- Tests ---------------------------------------------------------------- */

static void test_empty_table (void **state)
{
    struct tr_parquet_column cols[] = {
        { "a", TR_PARQUET_INT64, false },
        { "b", TR_PARQUET_STRING, true },
    };
    tr_parquet_t *pq = tr_parquet_create ("empty", cols, 2, "tracer x", NULL);
    const struct tnode *schema;
    struct pqfile f;

    (void)state;
    assert_non_null (pq);
    assert_int_equal (tr_parquet_rows (pq), 0);
    f = finish (pq);
    assert_int_equal (fint (&f.md, 1, T_I32), 1);
    assert_int_equal (fint (&f.md, 3, T_I64), 0);
    assert_int_equal (fld_of (&f.md, 4, T_LIST)->len, 0);
    assert_null (fld (&f.md, 5));
    assert_fstr (&f.md, 6, "tracer x");
    schema = fld_of (&f.md, 2, T_LIST);
    assert_int_equal (schema->len, 3);
    assert_fstr (&schema->kids[0], 4, "empty");
    assert_int_equal (fint (&schema->kids[0], 5, T_I32), 2);
    assert_null (fld (&schema->kids[0], 1));
    /* nothing between the magic and the footer */
    assert_int_equal (f.len - 12, le32_at (f.buf + f.len - 8));
    pqfile_close (&f);
    tr_parquet_destroy (pq);
}

/* The schema element each column type becomes. */
static void test_schema (void **state)
{
    /* clang-format off */
    static const struct {
        tr_parquet_type_t type;
        int physical;
        int converted;  /* -1: none */
        int logical;    /* LogicalType field, 0: none */
    } cases[] = {
        { TR_PARQUET_INT32, 1, -1, 0 },
        { TR_PARQUET_INT64, 2, -1, 0 },
        { TR_PARQUET_DOUBLE, 5, -1, 0 },
        { TR_PARQUET_BOOLEAN, 0, -1, 0 },
        { TR_PARQUET_STRING, 6, 0, 1 },
        { TR_PARQUET_TIMESTAMP_MS, 2, 9, 8 },
    };
    /* clang-format on */
    struct tr_parquet_column cols[2 * 6];
    char names[2 * 6][16];
    const struct tnode *schema;
    tr_parquet_t *pq;
    struct pqfile f;

    (void)state;
    for (size_t i = 0; i < 12; i++) {
        snprintf (names[i], sizeof (names[i]), "col_%zu", i);
        cols[i].name = names[i];
        cols[i].type = cases[i % 6].type;
        cols[i].optional = i >= 6;
    }
    pq = tr_parquet_create (NULL, cols, 12, NULL, NULL);
    assert_non_null (pq);
    f = finish (pq);
    schema = fld_of (&f.md, 2, T_LIST);
    assert_int_equal (schema->etype, T_STRUCT);
    assert_int_equal (schema->len, 13);
    assert_fstr (&schema->kids[0], 4, "schema");
    assert_int_equal (fint (&schema->kids[0], 5, T_I32), 12);
    assert_null (fld (&f.md, 6)); /* no created_by */
    for (size_t i = 0; i < 12; i++) {
        const struct tnode *e = &schema->kids[i + 1], *lt;

        assert_int_equal (fint (e, 1, T_I32), cases[i % 6].physical);
        assert_int_equal (fint (e, 3, T_I32), i >= 6 ? 1 : 0);
        assert_fstr (e, 4, names[i]);
        assert_null (fld (e, 5));
        if (cases[i % 6].converted < 0) {
            assert_null (fld (e, 6));
            assert_null (fld (e, 10));
            continue;
        }
        assert_int_equal (fint (e, 6, T_I32), cases[i % 6].converted);
        lt = fld_of (e, 10, T_STRUCT);
        assert_int_equal (lt->len, 1); /* a union: one member */
        if (cases[i % 6].logical == 1)
            assert_int_equal (fld_of (lt, 1, T_STRUCT)->len, 0);
        else {
            const struct tnode *ts = fld_of (lt, 8, T_STRUCT);
            const struct tnode *unit = fld_of (ts, 2, T_STRUCT);
            assert_int_equal (fint (ts, 1, T_BOOL), 1); /* UTC */
            assert_int_equal (unit->len, 1);
            assert_int_equal (fld_of (unit, 1, T_STRUCT)->len, 0); /* MILLIS */
        }
    }
    pqfile_close (&f);
    tr_parquet_destroy (pq);
}

/* Key/value metadata, and lists around the 15 elements where the
 * compact list header changes form (the schema has a column more, and
 * the row group's column chunks one less), with strings of 128 bytes or
 * more (two-byte varint lengths).
 */
static void test_metadata_and_long_lists (void **state)
{
    static const size_t sizes[] = { 13, 14, 15, 16, 300 };
    struct tr_parquet_column cols[300];
    struct tr_parquet_value row[300];
    char names[300][12], longval[300];

    (void)state;
    for (size_t i = 0; i < 300; i++) {
        snprintf (names[i], sizeof (names[i]), "c%zu", i);
        cols[i].name = names[i];
        cols[i].type = TR_PARQUET_INT32;
        cols[i].optional = false;
        row[i] = i32v ((int32_t)i);
    }
    memset (longval, 'v', sizeof (longval) - 1);
    longval[sizeof (longval) - 1] = '\0';
    for (size_t k = 0; k < sizeof (sizes) / sizeof (sizes[0]); k++) {
        size_t n = sizes[k];
        tr_parquet_t *pq = tr_parquet_create ("r", cols, n, "by", NULL);
        const struct tnode *kv, *schema, *rgs;
        struct column_read cr;
        struct pqfile f;

        assert_non_null (pq);
        assert_int_equal (tr_parquet_set_meta (pq, "a", "1", NULL), 0);
        assert_int_equal (tr_parquet_set_meta (pq, "b", longval, NULL), 0);
        assert_int_equal (tr_parquet_set_meta (pq, "a", "2", NULL), 0);
        assert_int_equal (tr_parquet_set_meta (pq, "ключ", "значение", NULL),
                          0);
        add1 (pq, row);
        f = finish (pq);
        kv = fld_of (&f.md, 5, T_LIST);
        assert_int_equal (kv->etype, T_STRUCT);
        assert_int_equal (kv->len, 3);
        assert_fstr (&kv->kids[0], 1, "a");
        assert_fstr (&kv->kids[0], 2, "2");
        assert_fstr (&kv->kids[1], 1, "b");
        assert_fstr (&kv->kids[1], 2, longval);
        assert_fstr (&kv->kids[2], 1, "ключ");
        assert_fstr (&kv->kids[2], 2, "значение");
        assert_fstr (&f.md, 6, "by");
        schema = fld_of (&f.md, 2, T_LIST);
        assert_int_equal (schema->len, n + 1);
        assert_fstr (&schema->kids[n], 4, names[n - 1]);
        rgs = fld_of (&f.md, 4, T_LIST);
        assert_int_equal (rgs->len, 1);
        assert_int_equal (fld_of (&rgs->kids[0], 1, T_LIST)->len, n);
        read_column (&f, n - 1, TR_PARQUET_INT32, false, &cr);
        assert_int_equal (cr.vals[0].v.i32, (int32_t)(n - 1));
        column_read_free (&cr);
        pqfile_close (&f);
        tr_parquet_destroy (pq);
    }
}

/* The exact bytes of a small file, worked out by hand from the spec:
 * pins the compact protocol's short forms, the field order and every
 * value the writer chooses.
 */
static void test_golden_bytes (void **state)
{
    /* clang-format off */
    static const uint8_t want[] = {
        'P', 'A', 'R', '1',
        /* PageHeader */
        0x15, 0x00,             /* 1: type DATA_PAGE */
        0x15, 0x08,             /* 2: uncompressed_page_size 4 */
        0x15, 0x08,             /* 3: compressed_page_size 4 */
        0x2c,                   /* 5: data_page_header */
        0x15, 0x02,             /*   1: num_values 1 */
        0x15, 0x00,             /*   2: encoding PLAIN */
        0x15, 0x06,             /*   3: definition_level_encoding RLE */
        0x15, 0x06,             /*   4: repetition_level_encoding RLE */
        0x00, 0x00,
        0xfe, 0xff, 0xff, 0xff, /* the value -2 */
        /* FileMetaData, from 25 to 87 */
        0x15, 0x02,             /* 1: version 1 */
        0x19, 0x2c,             /* 2: schema, 2 structs */
        0x48, 0x01, 's',        /*   4: name "s" */
        0x15, 0x02,             /*   5: num_children 1 */
        0x00,
        0x15, 0x02,             /*   1: type INT32 */
        0x25, 0x00,             /*   3: repetition_type REQUIRED */
        0x18, 0x01, 'a',        /*   4: name "a" */
        0x00,
        0x16, 0x02,             /* 3: num_rows 1 */
        0x19, 0x1c,             /* 4: row_groups, 1 struct */
        0x19, 0x1c,             /*   1: columns, 1 struct */
        0x26, 0x08,             /*     2: file_offset 4 */
        0x1c,                   /*     3: meta_data */
        0x15, 0x02,             /*       1: type INT32 */
        0x19, 0x15, 0x00,       /*       2: encodings [PLAIN] */
        0x19, 0x18, 0x01, 'a',  /*       3: path_in_schema ["a"] */
        0x15, 0x00,             /*       4: codec UNCOMPRESSED */
        0x16, 0x02,             /*       5: num_values 1 */
        0x16, 0x2a,             /*       6: total_uncompressed_size 21 */
        0x16, 0x2a,             /*       7: total_compressed_size 21 */
        0x26, 0x08,             /*       9: data_page_offset 4 */
        0x3c,                   /*       12: statistics */
        0x36, 0x00,             /*         3: null_count 0 */
        0x00,
        0x00,
        0x00,
        0x16, 0x2a,             /*   2: total_byte_size 21 */
        0x16, 0x02,             /*   3: num_rows 1 */
        0x26, 0x08,             /*   5: file_offset 4 */
        0x16, 0x2a,             /*   6: total_compressed_size 21 */
        0x00,
        0x00,
        62, 0, 0, 0,            /* footer length: 87 - 25 */
        'P', 'A', 'R', '1',
    };
    /* clang-format on */
    struct tr_parquet_column col = { "a", TR_PARQUET_INT32, false };
    tr_parquet_t *pq = tr_parquet_create ("s", &col, 1, NULL, NULL);
    struct tr_parquet_value v = i32v (-2);
    uint8_t *buf;
    size_t len;

    (void)state;
    assert_non_null (pq);
    add1 (pq, &v);
    buf = tr_parquet_finish (pq, &len, NULL);
    assert_non_null (buf);
    assert_int_equal (len, sizeof (want));
    assert_memory_equal (buf, want, len);
    free (buf);
    tr_parquet_destroy (pq);
}

static void test_values_int (void **state)
{
    const struct tr_parquet_value i32s[] = {
        i32v (0),         i32v (1),      i32v (-1),         i32v (INT32_MIN),
        i32v (INT32_MAX), null_value (), i32v (0x01020304), i32v (-123456789),
    };
    const struct tr_parquet_value i64s[] = {
        i64v (0),
        i64v (INT64_MIN),
        i64v (INT64_MAX),
        null_value (),
        i64v ((1LL << 53) + 1),
        i64v (-1),
        i64v (0x0102030405060708LL),
    };

    (void)state;
    roundtrip (TR_PARQUET_INT32, true, i32s, 8);
    roundtrip (TR_PARQUET_INT32, false, i32s, 5);
    roundtrip (TR_PARQUET_INT64, true, i64s, 7);
    roundtrip (TR_PARQUET_INT64, false, i64s, 3);
    roundtrip (TR_PARQUET_TIMESTAMP_MS, true, i64s, 7);
    roundtrip (TR_PARQUET_TIMESTAMP_MS, false, i64s, 3);
    /* only nulls: a page of levels and no values */
    roundtrip (TR_PARQUET_INT64, true, &i64s[3], 1);
}

static void test_values_double (void **state)
{
    struct tr_parquet_value d[] = {
        dv (0.1),       dv (-0.0),    dv (0.0),      dv (DBL_MAX),
        dv (-DBL_MAX),  dv (DBL_MIN), dv (4.9e-324), dv (INFINITY),
        dv (-INFINITY), dv (NAN),     dv (1e300),    null_value (),
        dv (-2.5),
    };
    uint64_t payload = 0x7ff8000000000123ULL;

    (void)state;
    /* a NaN with a payload survives bit for bit */
    memcpy (&d[12].v.d, &payload, sizeof (payload));
    roundtrip (TR_PARQUET_DOUBLE, true, d, 13);
    roundtrip (TR_PARQUET_DOUBLE, false, d, 11);
}

static void test_values_string (void **state)
{
    static const char nul[] = { 'a', '\0', 'b' };
    char *big = malloc (100000);
    struct tr_parquet_value s[8];

    (void)state;
    assert_non_null (big);
    for (size_t i = 0; i < 100000; i++)
        big[i] = (char)('a' + i % 26);
    s[0] = strv ("hello");
    s[1] = strv ("");
    s[2] = strv ("h\xc3\xa9llo \xe2\x82\xac \xf0\x9d\x84\x9e");
    s[3] = null_value ();
    s[4] = sv (nul, 3);
    s[5] = sv (big, 100000);
    s[6] = strv ("\xef\xbb\xbf"
                 "bom");
    s[7] = sv (NULL, 0);
    roundtrip (TR_PARQUET_STRING, true, s, 8);
    s[3] = strv ("x");
    roundtrip (TR_PARQUET_STRING, false, s, 8);
    free (big);
}

/* Booleans are bit-packed, least significant bit first, the non-null
 * ones only; the exact bytes of the page's values are checked.
 */
static void test_booleans (void **state)
{
    static const struct {
        const char *pattern; /* 1, 0, or - for null */
        uint8_t bytes[3];
        size_t nbytes;
    } cases[] = {
        { "1", { 0x01 }, 1 },
        { "0", { 0x00 }, 1 },
        { "10110000", { 0x0d }, 1 },
        { "101100001", { 0x0d, 0x01 }, 2 },
        { "1-1-1-1-1", { 0x1f }, 1 },
        { "11111111111111111", { 0xff, 0xff, 0x01 }, 3 },
        { "--------", { 0 }, 0 },
    };

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        size_t n = strlen (cases[c].pattern);
        bool optional = strchr (cases[c].pattern, '-') != NULL;
        struct tr_parquet_value v[32];
        tr_parquet_t *pq = create1 (TR_PARQUET_BOOLEAN, optional);
        struct column_read cr;
        struct pqfile f;
        size_t vstart;

        for (size_t i = 0; i < n; i++) {
            v[i] = cases[c].pattern[i] == '-' ? null_value ()
                                              : bv (cases[c].pattern[i] == '1');
            add1 (pq, &v[i]);
        }
        f = finish (pq);
        read_column (&f, 0, TR_PARQUET_BOOLEAN, optional, &cr);
        assert_int_equal (cr.npages, 1);
        assert_int_equal (cr.pages[0].vbytes, cases[c].nbytes);
        for (size_t i = 0; i < n; i++)
            assert_true (value_equal (TR_PARQUET_BOOLEAN, &v[i], &cr.vals[i]));
        /* the values are the last bytes of the page before the footer */
        vstart = f.len - 8 - le32_at (f.buf + f.len - 8) - cases[c].nbytes;
        assert_memory_equal (f.buf + vstart, cases[c].bytes, cases[c].nbytes);
        column_read_free (&cr);
        pqfile_close (&f);
        tr_parquet_destroy (pq);
    }
}

/* Definition levels: null patterns decode back, and long runs are run
 * length encoded (a page of a million nulls has a few bytes of levels).
 */
static void test_definition_levels (void **state)
{
    static const struct {
        size_t n;
        size_t period;     /* row i is null when (i / period) % 2 */
        size_t max_lbytes; /* levels with their 4-byte length */
    } cases[] = {
        { 1, 1, 6 },
        { 7, 1, 6 },
        { 8, 1, 6 },
        { 9, 1, 7 },
        { 17, 3, 8 },
        { 100, 1000, 7 },
        { 100, 1, 4 + 1 + 13 },
        { 1000, 20, 4 + 50 * 2 },
        { 1000000, 2000000, 10 },
        { 1000000, 250000, 4 + 4 * 4 },
        { 33, 16, 4 + 6 },
    };

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        tr_parquet_t *pq = create1 (TR_PARQUET_INT32, true);
        struct column_read cr;
        struct pqfile f;
        size_t nulls = 0;

        /* one page per row group whatever the rows */
        tr_parquet_set_limits (pq, 0, SIZE_MAX);
        for (size_t i = 0; i < cases[c].n; i++) {
            struct tr_parquet_value v =
                (i / cases[c].period) % 2 ? null_value () : i32v ((int32_t)i);
            nulls += v.null;
            add1 (pq, &v);
        }
        f = finish (pq);
        read_column (&f, 0, TR_PARQUET_INT32, true, &cr);
        assert_int_equal (cr.n, cases[c].n);
        assert_int_equal (cr.npages, 1);
        assert_int_equal (cr.pages[0].defined, cases[c].n - nulls);
        for (size_t i = 0; i < cases[c].n; i++) {
            bool null = (i / cases[c].period) % 2;
            assert_int_equal (cr.vals[i].null, null);
            if (!null)
                assert_int_equal (cr.vals[i].v.i32, (int32_t)i);
        }
        for (size_t p = 0; p < cr.npages; p++) {
            if (cr.pages[p].lbytes > cases[c].max_lbytes)
                fail_msg ("case %zu: %zu bytes of levels, expected at most "
                          "%zu",
                          c, cr.pages[p].lbytes, cases[c].max_lbytes);
        }
        column_read_free (&cr);
        pqfile_close (&f);
        tr_parquet_destroy (pq);
    }
}

/* Row groups every N rows; a page ends at the first value that brings
 * its values to the page limit.
 */
static void test_groups_and_pages (void **state)
{
    static const struct {
        tr_parquet_type_t type;
        bool optional;
        size_t rows, group_rows, page_bytes;
        size_t null_every; /* 0: no nulls */
        size_t groups;
        size_t pages[8]; /* in each row group */
    } cases[] = {
        /* 4-byte values, a page of 3 (12 >= 10) */
        { TR_PARQUET_INT32, false, 10, 5, 10, 0, 2, { 2, 2 } },
        { TR_PARQUET_INT32, false, 10, 3, 1, 0, 4, { 3, 3, 3, 1 } },
        { TR_PARQUET_INT32, false, 10, 100, 40, 0, 1, { 1 } },
        { TR_PARQUET_INT32, false, 11, 100, 40, 0, 1, { 2 } },
        /* nulls take no value bytes: 4 values a page, 7 or 8 rows */
        { TR_PARQUET_INT64, true, 20, 100, 32, 2, 1, { 3 } },
        { TR_PARQUET_INT64, true, 20, 7, 16, 2, 3, { 2, 2, 2 } },
        /* 1 bit each: a page is full at 8 booleans a byte */
        { TR_PARQUET_BOOLEAN, false, 40, 100, 2, 0, 1, { 3 } },
        { TR_PARQUET_BOOLEAN, true, 40, 20, 1, 4, 2, { 2, 2 } },
        /* "abc": 7 bytes each with the length, 2 a page */
        { TR_PARQUET_STRING, true, 9, 4, 14, 0, 3, { 2, 2, 1 } },
        { TR_PARQUET_DOUBLE, false, 1000, 256, 64, 0, 4, { 32, 32, 32, 29 } },
    };

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        tr_parquet_t *pq = create1 (cases[c].type, cases[c].optional);
        struct column_read cr;
        struct pqfile f;
        size_t p = 0;

        tr_parquet_set_limits (pq, cases[c].group_rows, cases[c].page_bytes);
        /* 0 leaves a limit as it is */
        tr_parquet_set_limits (pq, 0, 0);
        for (size_t i = 0; i < cases[c].rows; i++) {
            struct tr_parquet_value v = { 0 };
            if (cases[c].null_every && i % cases[c].null_every == 1)
                v.null = true;
            else if (cases[c].type == TR_PARQUET_STRING)
                v = strv ("abc");
            else if (cases[c].type == TR_PARQUET_BOOLEAN)
                v.v.b = i % 3 == 0;
            else
                v.v.i64 = (int64_t)i; /* any bits will do */
            add1 (pq, &v);
        }
        f = finish (pq);
        read_column (&f, 0, cases[c].type, cases[c].optional, &cr);
        assert_int_equal (fld_of (&f.md, 4, T_LIST)->len, cases[c].groups);
        for (size_t g = 0; g < cases[c].groups; g++) {
            const struct tnode *rg = &fld_of (&f.md, 4, T_LIST)->kids[g];
            size_t want = cases[c].rows - g * cases[c].group_rows;

            if (want > cases[c].group_rows)
                want = cases[c].group_rows;
            assert_int_equal (fint (rg, 3, T_I64), (int64_t)want);
            if (cr.page_of_group[g] != cases[c].pages[g])
                fail_msg ("case %zu group %zu: %zu pages, expected %zu", c, g,
                          cr.page_of_group[g], cases[c].pages[g]);
            /* every page but a group's last reached the limit, and
             * would not have without its last value
             */
            for (size_t k = 0; k + 1 < cr.page_of_group[g]; k++, p++) {
                const struct page *pg = &cr.pages[p];
                bool bits = cases[c].type == TR_PARQUET_BOOLEAN;
                size_t full = bits ? pg->defined / 8 : pg->vbytes;
                size_t without =
                    bits ? (pg->defined - 1) / 8 : pg->vbytes - pg->lastbytes;
                assert_true (full >= cases[c].page_bytes);
                assert_true (without < cases[c].page_bytes);
            }
            p++;
        }
        column_read_free (&cr);
        pqfile_close (&f);
        tr_parquet_destroy (pq);
    }
}

/* Several columns of every type in several row groups: each reads back. */
static void test_many_columns_rows (void **state)
{
    static const struct tr_parquet_column cols[] = {
        { "i32", TR_PARQUET_INT32, false },
        { "i64", TR_PARQUET_INT64, true },
        { "d", TR_PARQUET_DOUBLE, true },
        { "b", TR_PARQUET_BOOLEAN, false },
        { "s", TR_PARQUET_STRING, true },
        { "ts", TR_PARQUET_TIMESTAMP_MS, false },
    };
    enum { NC = 6, NR = 5000 };
    static char text[NR][24];
    struct tr_parquet_value *rows = calloc (NR * NC, sizeof (*rows));
    tr_parquet_t *pq;
    struct pqfile f;

    (void)state;
    assert_non_null (rows);
    pq = tr_parquet_create (NULL, cols, NC, NULL, NULL);
    assert_non_null (pq);
    tr_parquet_set_limits (pq, 1234, 64);
    for (size_t r = 0; r < NR; r++) {
        struct tr_parquet_value *v = &rows[r * NC];
        snprintf (text[r], sizeof (text[r]), "row %zu \xc3\xa9", r);
        v[0] = i32v ((int32_t)(r * 2654435761u));
        v[1] = r % 7 == 0 ? null_value () : i64v ((int64_t)r * -1000003);
        v[2] = r % 5 == 0 ? null_value () : dv ((double)r / 7.0);
        v[3] = bv (r % 3 == 0);
        v[4] = r % 11 < 3 ? null_value () : strv (text[r]);
        v[5] = i64v (1700000000000LL + (int64_t)r);
        add1 (pq, v);
    }
    f = finish (pq);
    assert_int_equal (fld_of (&f.md, 4, T_LIST)->len, (NR + 1233) / 1234);
    for (size_t c = 0; c < NC; c++) {
        struct column_read cr;
        read_column (&f, c, cols[c].type, cols[c].optional, &cr);
        assert_true (cr.npages > 5);
        for (size_t r = 0; r < NR; r++) {
            if (!value_equal (cols[c].type, &rows[r * NC + c], &cr.vals[r]))
                fail_msg ("column %s row %zu differs", cols[c].name, r);
        }
        column_read_free (&cr);
    }
    pqfile_close (&f);
    tr_parquet_destroy (pq);
    free (rows);
}

/* finish can be called again, after more rows or not. */
static void test_finish_again (void **state)
{
    tr_parquet_t *pq = create1 (TR_PARQUET_INT32, false);
    struct tr_parquet_value v = i32v (7);
    void *a, *b, *c;
    size_t la, lb, lc;

    (void)state;
    add1 (pq, &v);
    a = tr_parquet_finish (pq, &la, NULL);
    b = tr_parquet_finish (pq, &lb, NULL);
    assert_true (a && b);
    assert_int_equal (la, lb);
    assert_memory_equal (a, b, la);
    add1 (pq, &v);
    c = tr_parquet_finish (pq, &lc, NULL);
    assert_non_null (c);
    assert_true (lc > la);
    free (a);
    free (b);
    free (c);
    assert_null (tr_parquet_finish (pq, NULL, NULL));
    assert_int_equal (errno, EINVAL);
    tr_parquet_destroy (pq);
}

static void test_bad_create (void **state)
{
    static const struct {
        const char *root;
        struct tr_parquet_column cols[3];
        size_t ncols;
        const char *created_by;
        const char *message;
    } cases[] = {
        { NULL, { { "a", TR_PARQUET_INT32, false } }, 0, NULL, "1 to 1024" },
        { NULL,
          { { "a", TR_PARQUET_INT32, false },
            { "b", TR_PARQUET_INT64, true },
            { "a", TR_PARQUET_STRING, false } },
          3,
          NULL,
          "column 'a' is defined twice" },
        { NULL, { { "", TR_PARQUET_INT32, false } }, 1, NULL, "no name" },
        { NULL, { { NULL, TR_PARQUET_INT32, false } }, 1, NULL, "no name" },
        { NULL, { { "a.b", TR_PARQUET_INT32, false } }, 1, NULL, "'.'" },
        { NULL, { { "a\tb", TR_PARQUET_INT32, false } }, 1, NULL, "control" },
        { NULL, { { "a\xff", TR_PARQUET_INT32, false } }, 1, NULL, "UTF-8" },
        { NULL,
          { { "a", (tr_parquet_type_t)17, false } },
          1,
          NULL,
          "unknown type" },
        { "", { { "a", TR_PARQUET_INT32, false } }, 1, NULL, "root" },
        { "\xc0\xaf", { { "a", TR_PARQUET_INT32, false } }, 1, NULL, "UTF-8" },
        { NULL,
          { { "a", TR_PARQUET_INT32, false } },
          1,
          "\xed\xa0\x80",
          "created_by" },
    };
    struct tr_parquet_column many[1025];
    tr_error_t error;

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        errno = 0;
        memset (&error, 0, sizeof (error));
        assert_null (tr_parquet_create (cases[c].root, cases[c].cols,
                                        cases[c].ncols, cases[c].created_by,
                                        &error));
        assert_int_equal (errno, EINVAL);
        if (!strstr (error.text, cases[c].message))
            fail_msg ("case %zu: '%s' does not say '%s'", c, error.text,
                      cases[c].message);
    }
    for (size_t i = 0; i < 1025; i++)
        many[i] = (struct tr_parquet_column){ "x", TR_PARQUET_INT32, false };
    assert_null (tr_parquet_create (NULL, many, 1025, NULL, &error));
    assert_int_equal (errno, EINVAL);
    assert_null (tr_parquet_create (NULL, NULL, 1, NULL, NULL));
    assert_int_equal (errno, EINVAL);
}

/* A row that fails leaves the table as it was: with a good row added
 * after the failures, the file is the same as a table's that never saw
 * them.
 */
static void test_bad_rows (void **state)
{
    static const struct {
        const char *s;
        size_t len;
        bool null_required;
        const char *message;
    } cases[] = {
        { NULL, 0, true, "column 'req': null in a required column" },
        { "\xff", 1, false, "column 's': string is not valid UTF-8 (byte 0)" },
        { "ab\xc3", 3, false, "(byte 2)" },                  /* truncated */
        { "\xc0\x80", 2, false, "not valid UTF-8" },         /* overlong NUL */
        { "\xe0\x80\xaf", 3, false, "not valid UTF-8" },     /* overlong */
        { "\xed\xa0\x80", 3, false, "not valid UTF-8" },     /* surrogate */
        { "\xf4\x90\x80\x80", 4, false, "not valid UTF-8" }, /* > U+10FFFF */
        { "a\x80", 2, false, "(byte 1)" },                   /* continuation */
        { "\xf8\x88\x80\x80\x80", 5, false, "not valid UTF-8" },
        { "\xe2\x82", 2, false, "not valid UTF-8" },
        { "\xe2(\xa1", 3, false, "not valid UTF-8" },
        { "ok", (size_t)INT32_MAX + 1, false, "longer than" },
    };
    static const struct tr_parquet_column cols[] = {
        { "n", TR_PARQUET_INT64, true },
        { "s", TR_PARQUET_STRING, true },
        { "req", TR_PARQUET_INT32, false },
        { "b", TR_PARQUET_BOOLEAN, true },
    };
    tr_parquet_t *pq = tr_parquet_create (NULL, cols, 4, NULL, NULL);
    tr_parquet_t *ref = tr_parquet_create (NULL, cols, 4, NULL, NULL);
    struct tr_parquet_value good[2][4] = {
        { i64v (5), strv ("fine"), i32v (1), bv (true) },
        { i64v (-7), strv ("\xc3\xa9"), i32v (3), null_value () },
    };
    void *want, *got;
    size_t lw, lg;
    tr_error_t error;

    (void)state;
    assert_true (pq && ref);
    add1 (ref, good[0]);
    add1 (ref, good[1]);
    add1 (pq, good[0]);
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        /* the columns before the bad one are fine and must not grow */
        struct tr_parquet_value v[4] = { i64v (99), strv ("x"), i32v (2),
                                         bv (false) };
        if (cases[c].null_required)
            v[2] = null_value ();
        else
            v[1] = sv (cases[c].s, cases[c].len);
        errno = 0;
        memset (&error, 0, sizeof (error));
        assert_int_equal (tr_parquet_add_row (pq, v, &error), -1);
        assert_int_equal (errno, EINVAL);
        if (!strstr (error.text, cases[c].message))
            fail_msg ("case %zu: '%s' does not say '%s'", c, error.text,
                      cases[c].message);
        assert_int_equal (tr_parquet_rows (pq), 1);
    }
    assert_int_equal (tr_parquet_add_row (pq, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    add1 (pq, good[1]);
    want = tr_parquet_finish (ref, &lw, NULL);
    got = tr_parquet_finish (pq, &lg, NULL);
    assert_true (want && got);
    assert_int_equal (lg, lw);
    assert_memory_equal (got, want, lw);
    free (want);
    free (got);

    /* metadata must be UTF-8 with a key */
    assert_int_equal (tr_parquet_set_meta (pq, "", "v", &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_parquet_set_meta (pq, "k", "\xff", &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_parquet_set_meta (pq, "k", NULL, &error), -1);
    assert_int_equal (errno, EINVAL);
    tr_parquet_destroy (pq);
    tr_parquet_destroy (ref);
    tr_parquet_destroy (NULL);
}

/* Allocation failures: the Nth allocation fails, for every N until a run
 * has none.  Each failure is -1/NULL with ENOMEM and leaves the table as
 * it was: the operation is repeated without failures and the file must
 * come out the same as one made without any (and valgrind sees no leak).
 */
static long allocs_left = -1;

static void *failing_realloc (void *p, size_t n)
{
    if (allocs_left == 0) {
        allocs_left = -1;
        return NULL;
    }
    if (allocs_left > 0)
        allocs_left--;
    return realloc (p, n);
}

static bool injected;

/* Did the last operation fail (it must be by ENOMEM)?  Then stop
 * injecting so that it can be repeated.
 */
static bool failed (bool bad)
{
    if (!bad)
        return false;
    assert_int_equal (errno, ENOMEM);
    injected = true;
    allocs_left = -1;
    return true;
}

static void *build_sample (size_t *len)
{
    static const struct tr_parquet_column cols[] = {
        { "id", TR_PARQUET_INT32, false },
        { "name", TR_PARQUET_STRING, true },
        { "ok", TR_PARQUET_BOOLEAN, true },
    };
    tr_parquet_t *pq;
    void *buf;

    while (failed (!(pq = tr_parquet_create ("t", cols, 3, "me", NULL))))
        ;
    tr_parquet_set_limits (pq, 40, 64);
    while (failed (tr_parquet_set_meta (pq, "a", "b", NULL) < 0))
        ;
    while (failed (tr_parquet_set_meta (pq, "a", "c", NULL) < 0))
        ;
    for (int r = 0; r < 100; r++) {
        struct tr_parquet_value v[3] = {
            i32v (r),
            r % 4 ? strv ("a string of some length") : null_value (),
            r % 3 ? bv (r % 2) : null_value (),
        };
        while (failed (tr_parquet_add_row (pq, v, NULL) < 0))
            ;
        assert_int_equal (tr_parquet_rows (pq), (size_t)r + 1);
    }
    while (failed (!(buf = tr_parquet_finish (pq, len, NULL))))
        ;
    tr_parquet_destroy (pq);
    return buf;
}

static void test_alloc_failures (void **state)
{
    void *ref, *buf;
    size_t rlen, len;
    long n;

    (void)state;
    ref = build_sample (&rlen);
    tr_parquet_set_realloc (failing_realloc);
    for (n = 0; n < 100000; n++) {
        injected = false;
        allocs_left = n;
        buf = build_sample (&len);
        assert_int_equal (len, rlen);
        assert_memory_equal (buf, ref, len);
        free (buf);
        if (!injected)
            break;
    }
    tr_parquet_set_realloc (NULL);
    allocs_left = -1;
    /* some allocations failed, and then one run went through */
    assert_true (n > 10);
    assert_false (injected);
    free (ref);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_empty_table),
        cmocka_unit_test (test_schema),
        cmocka_unit_test (test_metadata_and_long_lists),
        cmocka_unit_test (test_golden_bytes),
        cmocka_unit_test (test_values_int),
        cmocka_unit_test (test_values_double),
        cmocka_unit_test (test_values_string),
        cmocka_unit_test (test_booleans),
        cmocka_unit_test (test_definition_levels),
        cmocka_unit_test (test_groups_and_pages),
        cmocka_unit_test (test_many_columns_rows),
        cmocka_unit_test (test_finish_again),
        cmocka_unit_test (test_bad_create),
        cmocka_unit_test (test_bad_rows),
        cmocka_unit_test (test_alloc_failures),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
