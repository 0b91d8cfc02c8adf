/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A small Apache Parquet writer (parquet-format 2.x): flat schemas, PLAIN
 * values in uncompressed version 1 data pages, definition levels in the
 * RLE/bit-packed hybrid encoding, and the footer in Thrift's compact
 * protocol, hand-encoded here for the few structs a file needs.  Rows are
 * kept per column as their PLAIN bytes, so tr_parquet_finish only cuts
 * them into row groups and pages and adds the headers.  Every multi-byte
 * number is written byte by byte, least significant first, as the format
 * requires, whatever the host's byte order.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet.h"
#include "libtracer/util/strbuf.h"

#define MAX_COLUMNS 1024
#define DEFAULT_GROUP_ROWS 1048576
#define DEFAULT_PAGE_BYTES 1048576

/* parquet.thrift enums */
enum {
    PQ_BOOLEAN = 0,
    PQ_INT32 = 1,
    PQ_INT64 = 2,
    PQ_DOUBLE = 5,
    PQ_BYTE_ARRAY = 6,
};
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1 };
enum { PQ_CONV_UTF8 = 0, PQ_CONV_TIMESTAMP_MILLIS = 9 };
enum { PQ_PLAIN = 0, PQ_RLE = 3 };
enum { PQ_DATA_PAGE = 0 };
enum { PQ_UNCOMPRESSED = 0 };

/* Thrift compact protocol type codes */
enum {
    CT_TRUE = 1,
    CT_FALSE = 2,
    CT_I32 = 5,
    CT_I64 = 6,
    CT_BINARY = 8,
    CT_LIST = 9,
    CT_STRUCT = 12,
};

/* Nesting of the deepest struct written (FileMetaData > SchemaElement >
 * LogicalType > TimestampType > TimeUnit > MilliSeconds is 6).
 */
#define TW_DEPTH 8

struct column {
    char *name;
    tr_parquet_type_t type;
    bool optional;
    /* The PLAIN bytes of the non-null values in row order (strings with
     * their 4-byte length; booleans one byte each, packed at finish).
     */
    uint8_t *vals;
    size_t vlen, vcap;
    /* Optional columns: one byte per row, 1 defined, 0 null. */
    uint8_t *defs;
    size_t dcap;
};

struct keyval {
    char *key;
    char *value;
};

struct tr_parquet {
    char *root;
    char *created_by;
    struct column *cols;
    size_t ncols;
    size_t nrows;
    size_t group_rows;
    size_t page_bytes;
    struct keyval *meta;
    size_t nmeta;
};

/* A growing output buffer whose first failure sticks (err), so that the
 * long runs of writes that lay out a file check once at the end.
 */
struct out {
    uint8_t *p;
    size_t len;
    size_t cap;
    int err;
};

/* Thrift compact writer: the last field id of each open struct, because
 * field headers carry the difference to it.
 */
struct tw {
    struct out *o;
    int last[TW_DEPTH];
    int depth;
};

/* Where a column chunk landed, for its ColumnMetaData. */
struct chunk {
    size_t offset; /* first page header */
    size_t size;   /* headers and pages */
    size_t values; /* rows, nulls included */
    size_t nulls;
};

static void *(*pq_realloc) (void *, size_t) = realloc;

void tr_parquet_set_realloc (void *(*fn) (void *, size_t))
{
    pq_realloc = fn ? fn : realloc;
}

static void *pq_alloc (size_t n)
{
    return pq_realloc (NULL, n ? n : 1);
}

static char *pq_strdup (const char *s)
{
    size_t n = strlen (s) + 1;
    char *p = pq_alloc (n);

    if (p)
        memcpy (p, s, n);
    return p;
}

/* Grow *p (of *cap bytes) to hold at least need bytes, doubling so that
 * appends stay linear.  0, or -1 with errno (ENOMEM); *p is unchanged on
 * failure.
 */
static int grow (uint8_t **p, size_t *cap, size_t need)
{
    size_t ncap = *cap ? *cap : 64;
    uint8_t *np;

    if (need <= *cap)
        return 0;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    if (!(np = pq_realloc (*p, ncap))) {
        errno = ENOMEM;
        return -1;
    }
    *p = np;
    *cap = ncap;
    return 0;
}

/* --- Little-endian and output primitives ------------------------------ */

static void le32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void le64 (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32 (const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

/* Room for n more bytes at o->p + o->len, or NULL once anything failed. */
static uint8_t *out_room (struct out *o, size_t n)
{
    if (o->err)
        return NULL;
    if (n > SIZE_MAX - o->len) {
        o->err = EOVERFLOW;
        return NULL;
    }
    if (grow (&o->p, &o->cap, o->len + n) < 0) {
        o->err = errno;
        return NULL;
    }
    return o->p + o->len;
}

static void out_put (struct out *o, const void *src, size_t n)
{
    uint8_t *p = out_room (o, n);

    if (p && n > 0) {
        memcpy (p, src, n);
        o->len += n;
    }
}

static void out_byte (struct out *o, uint8_t b)
{
    out_put (o, &b, 1);
}

static void out_le32 (struct out *o, uint32_t v)
{
    uint8_t b[4];

    le32 (b, v);
    out_put (o, b, 4);
}

/* ULEB128, as Thrift compact varints and RLE run headers are. */
static void out_varint (struct out *o, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;

    do {
        b[n] = v & 0x7f;
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    out_put (o, b, n);
}

/* --- Thrift compact protocol ------------------------------------------ */

/* Zigzag without shifting negative numbers (undefined behaviour in C). */
static uint64_t zigzag (int64_t v)
{
    return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

static void tw_begin (struct tw *t)
{
    if (t->depth >= TW_DEPTH) {
        if (!t->o->err)
            t->o->err = EINVAL;
        return;
    }
    t->last[t->depth++] = 0;
}

static void tw_end (struct tw *t)
{
    out_byte (t->o, 0);
    if (t->depth > 0)
        t->depth--;
}

static void tw_field (struct tw *t, int id, uint8_t type)
{
    int *last = &t->last[t->depth > 0 ? t->depth - 1 : 0];
    int delta = id - *last;

    if (delta >= 1 && delta <= 15)
        out_byte (t->o, (uint8_t)(delta << 4 | type));
    else {
        out_byte (t->o, type);
        out_varint (t->o, zigzag (id));
    }
    *last = id;
}

static void tw_i32 (struct tw *t, int id, int32_t v)
{
    tw_field (t, id, CT_I32);
    out_varint (t->o, zigzag (v));
}

static void tw_i64 (struct tw *t, int id, int64_t v)
{
    tw_field (t, id, CT_I64);
    out_varint (t->o, zigzag (v));
}

static void tw_bool (struct tw *t, int id, bool v)
{
    tw_field (t, id, v ? CT_TRUE : CT_FALSE);
}

static void tw_binary (struct tw *t, const char *s)
{
    size_t n = strlen (s);

    out_varint (t->o, n);
    out_put (t->o, s, n);
}

static void tw_string (struct tw *t, int id, const char *s)
{
    tw_field (t, id, CT_BINARY);
    tw_binary (t, s);
}

static void tw_struct (struct tw *t, int id)
{
    tw_field (t, id, CT_STRUCT);
    tw_begin (t);
}

/* A list field's header; its n elements follow (structs each opened with
 * tw_begin, strings with tw_binary, i32s with tw_elem_i32).
 */
static void tw_list (struct tw *t, int id, uint8_t elem, size_t n)
{
    tw_field (t, id, CT_LIST);
    if (n < 15)
        out_byte (t->o, (uint8_t)(n << 4 | elem));
    else {
        out_byte (t->o, 0xf0 | elem);
        out_varint (t->o, n);
    }
}

static void tw_elem_i32 (struct tw *t, int32_t v)
{
    out_varint (t->o, zigzag (v));
}

/* --- Validation -------------------------------------------------------- */

/* Is s[0..n) UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF)?  When not, *bad is the offset of the first bad sequence.
 */
static bool utf8_valid (const uint8_t *s, size_t n, size_t *bad)
{
    uint32_t cp;
    size_t k;

    for (size_t i = 0; i < n; i += k)
        if (!(k = tr_utf8_char (s + i, n - i, &cp))) {
            if (bad)
                *bad = i;
            return false;
        }
    return true;
}

/* A string for the footer: UTF-8 and short enough for a Thrift binary. */
static int check_text (const char *what, const char *s, tr_error_t *error)
{
    size_t n = strlen (s), bad;

    if (n > INT32_MAX) {
        errno = EINVAL;
        return tr_errprintf (error, "%s is longer than %d bytes", what,
                             INT32_MAX);
    }
    if (!utf8_valid ((const uint8_t *)s, n, &bad)) {
        errno = EINVAL;
        return tr_errprintf (error, "%s is not valid UTF-8 (byte %zu)", what,
                             bad);
    }
    return 0;
}

/* Column names are paths of one element in Parquet; many tools join
 * paths with '.', so a dot would make a flat name read as a nested one.
 */
static int check_name (size_t i, const char *name, tr_error_t *error)
{
    char what[64];

    if (!name || !*name) {
        errno = EINVAL;
        return tr_errprintf (error, "column %zu has no name", i + 1);
    }
    (void)snprintf (what, sizeof (what), "name of column %zu", i + 1);
    if (check_text (what, name, error) < 0)
        return -1;
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '.' || c < 0x20 || c == 0x7f) {
            errno = EINVAL;
            return tr_errprintf (error,
                                 "column '%s': a name may not contain '.' "
                                 "or control characters",
                                 name);
        }
    }
    return 0;
}

/* --- Table ------------------------------------------------------------- */

static void free_columns (struct column *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free (cols[i].name);
        free (cols[i].vals);
        free (cols[i].defs);
    }
    free (cols);
}

void tr_parquet_destroy (tr_parquet_t *pq)
{
    int saved = errno;

    if (!pq)
        return;
    free_columns (pq->cols, pq->ncols);
    for (size_t i = 0; i < pq->nmeta; i++) {
        free (pq->meta[i].key);
        free (pq->meta[i].value);
    }
    free (pq->meta);
    free (pq->root);
    free (pq->created_by);
    free (pq);
    errno = saved;
}

tr_parquet_t *tr_parquet_create (const char *root,
                                 const struct tr_parquet_column *cols,
                                 size_t ncols,
                                 const char *created_by,
                                 tr_error_t *error)
{
    tr_parquet_t *pq;

    if (!root)
        root = "schema";
    if (!cols || ncols == 0 || ncols > MAX_COLUMNS) {
        errno = EINVAL;
        tr_errprintf (error, "a table needs 1 to %d columns, not %zu",
                      MAX_COLUMNS, cols ? ncols : 0);
        return NULL;
    }
    if (!*root) {
        errno = EINVAL;
        tr_errprintf (error, "the schema root has no name");
        return NULL;
    }
    if (check_text ("schema root name", root, error) < 0
        || (created_by && check_text ("created_by", created_by, error) < 0))
        return NULL;
    for (size_t i = 0; i < ncols; i++) {
        if (check_name (i, cols[i].name, error) < 0)
            return NULL;
        if ((int)cols[i].type < TR_PARQUET_INT32
            || cols[i].type > TR_PARQUET_TIMESTAMP_MS) {
            errno = EINVAL;
            tr_errprintf (error, "column '%s': unknown type %d", cols[i].name,
                          (int)cols[i].type);
            return NULL;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp (cols[i].name, cols[j].name) == 0) {
                errno = EINVAL;
                tr_errprintf (error, "column '%s' is defined twice",
                              cols[i].name);
                return NULL;
            }
        }
    }

    if (!(pq = pq_alloc (sizeof (*pq))))
        goto nomem;
    memset (pq, 0, sizeof (*pq));
    pq->group_rows = DEFAULT_GROUP_ROWS;
    pq->page_bytes = DEFAULT_PAGE_BYTES;
    if (!(pq->root = pq_strdup (root))
        || (created_by && !(pq->created_by = pq_strdup (created_by)))
        || !(pq->cols = pq_alloc (ncols * sizeof (*pq->cols))))
        goto nomem;
    memset (pq->cols, 0, ncols * sizeof (*pq->cols));
    for (size_t i = 0; i < ncols; i++) {
        /* counted as they are filled, so that destroy frees the names */
        pq->ncols = i + 1;
        pq->cols[i].type = cols[i].type;
        pq->cols[i].optional = cols[i].optional;
        if (!(pq->cols[i].name = pq_strdup (cols[i].name)))
            goto nomem;
    }
    return pq;
nomem:
    tr_parquet_destroy (pq);
    errno = ENOMEM;
    tr_errprintf (error, "out of memory");
    return NULL;
}

size_t tr_parquet_rows (const tr_parquet_t *pq)
{
    return pq ? pq->nrows : 0;
}

void tr_parquet_set_limits (tr_parquet_t *pq, size_t rows, size_t bytes)
{
    if (!pq)
        return;
    if (rows)
        pq->group_rows = rows;
    if (bytes)
        pq->page_bytes = bytes;
}

int tr_parquet_set_meta (tr_parquet_t *pq,
                         const char *key,
                         const char *value,
                         tr_error_t *error)
{
    struct keyval *kv;
    char *k, *v;

    if (!pq || !key || !value) {
        errno = EINVAL;
        return tr_errprintf (error, "metadata needs a key and a value");
    }
    if (!*key) {
        errno = EINVAL;
        return tr_errprintf (error, "metadata key is empty");
    }
    if (check_text ("metadata key", key, error) < 0
        || check_text ("metadata value", value, error) < 0)
        return -1;
    if (!(v = pq_strdup (value)))
        goto nomem;
    for (size_t i = 0; i < pq->nmeta; i++) {
        if (strcmp (pq->meta[i].key, key) == 0) {
            free (pq->meta[i].value);
            pq->meta[i].value = v;
            return 0;
        }
    }
    if (pq->nmeta >= SIZE_MAX / sizeof (*kv) - 1
        || !(kv = pq_realloc (pq->meta, (pq->nmeta + 1) * sizeof (*kv)))) {
        free (v);
        goto nomem;
    }
    pq->meta = kv;
    if (!(k = pq_strdup (key))) {
        free (v);
        goto nomem;
    }
    pq->meta[pq->nmeta].key = k;
    pq->meta[pq->nmeta].value = v;
    pq->nmeta++;
    return 0;
nomem:
    errno = ENOMEM;
    return tr_errprintf (error, "out of memory");
}

/* Bytes a non-null value takes in a column's vals. */
static size_t value_size (const struct column *c,
                          const struct tr_parquet_value *v)
{
    switch (c->type) {
    case TR_PARQUET_INT32:
        return 4;
    case TR_PARQUET_INT64:
    case TR_PARQUET_TIMESTAMP_MS:
    case TR_PARQUET_DOUBLE:
        return 8;
    case TR_PARQUET_BOOLEAN:
        return 1;
    case TR_PARQUET_STRING:
        return 4 + v->v.str.len;
    }
    return 0;
}

static int check_value (const struct column *c,
                        const struct tr_parquet_value *v,
                        tr_error_t *error)
{
    size_t bad;

    if (v->null) {
        if (c->optional)
            return 0;
        errno = EINVAL;
        return tr_errprintf (error, "column '%s': null in a required column",
                             c->name);
    }
    if (c->type != TR_PARQUET_STRING)
        return 0;
    if (v->v.str.len > INT32_MAX) {
        errno = EINVAL;
        return tr_errprintf (error,
                             "column '%s': string of %zu bytes is longer "
                             "than %d",
                             c->name, v->v.str.len, INT32_MAX);
    }
    if (v->v.str.len > 0 && !v->v.str.s) {
        errno = EINVAL;
        return tr_errprintf (error, "column '%s': string of %zu bytes is NULL",
                             c->name, v->v.str.len);
    }
    if (!utf8_valid ((const uint8_t *)v->v.str.s, v->v.str.len, &bad)) {
        errno = EINVAL;
        return tr_errprintf (error,
                             "column '%s': string is not valid UTF-8 "
                             "(byte %zu)",
                             c->name, bad);
    }
    return 0;
}

/* Append a validated value whose room was reserved. */
static void put_value (struct column *c, const struct tr_parquet_value *v)
{
    uint8_t *p = c->vals + c->vlen;
    uint64_t bits;

    switch (c->type) {
    case TR_PARQUET_INT32:
        le32 (p, (uint32_t)v->v.i32);
        break;
    case TR_PARQUET_INT64:
    case TR_PARQUET_TIMESTAMP_MS:
        le64 (p, (uint64_t)v->v.i64);
        break;
    case TR_PARQUET_DOUBLE:
        /* the IEEE 754 bit pattern, then written little-endian */
        memcpy (&bits, &v->v.d, sizeof (bits));
        le64 (p, bits);
        break;
    case TR_PARQUET_BOOLEAN:
        p[0] = v->v.b ? 1 : 0;
        break;
    case TR_PARQUET_STRING:
        le32 (p, (uint32_t)v->v.str.len);
        if (v->v.str.len > 0)
            memcpy (p + 4, v->v.str.s, v->v.str.len);
        break;
    }
    c->vlen += value_size (c, v);
}

int tr_parquet_add_row (tr_parquet_t *pq,
                        const struct tr_parquet_value *values,
                        tr_error_t *error)
{
    if (!pq || !values) {
        errno = EINVAL;
        return tr_errprintf (error, "no table or no values");
    }
    if (pq->nrows == SIZE_MAX) {
        errno = EOVERFLOW;
        return tr_errprintf (error, "too many rows");
    }
    for (size_t i = 0; i < pq->ncols; i++) {
        if (check_value (&pq->cols[i], &values[i], error) < 0)
            return -1;
    }
    /* Make room everywhere before changing anything, so that a failure
     * leaves every column as it was (only with more capacity).
     */
    for (size_t i = 0; i < pq->ncols; i++) {
        struct column *c = &pq->cols[i];
        size_t n = values[i].null ? 0 : value_size (c, &values[i]);

        if (n > SIZE_MAX - c->vlen) {
            errno = EOVERFLOW;
            return tr_errprintf (error, "column '%s': too much data", c->name);
        }
        if (grow (&c->vals, &c->vcap, c->vlen + n) < 0
            || (c->optional && grow (&c->defs, &c->dcap, pq->nrows + 1) < 0))
            return tr_errprintf (error, "out of memory");
    }
    for (size_t i = 0; i < pq->ncols; i++) {
        struct column *c = &pq->cols[i];

        if (c->optional)
            c->defs[pq->nrows] = values[i].null ? 0 : 1;
        if (!values[i].null)
            put_value (c, &values[i]);
    }
    pq->nrows++;
    return 0;
}

/* --- Layout ------------------------------------------------------------ */

static bool defined (const struct column *c, size_t row)
{
    return !c->optional || c->defs[row];
}

/* Length of the run of equal definition levels at row i, up to row n,
 * counting at most max.
 */
static size_t run_length (const uint8_t *defs, size_t i, size_t n, size_t max)
{
    size_t r = 1;

    while (i + r < n && r < max && defs[i + r] == defs[i])
        r++;
    return r;
}

/* Runs shorter than this are bit-packed: an RLE run costs a header and a
 * byte, eight bit-packed levels cost one byte.
 */
#define MIN_RLE_RUN 16

/* The definition levels of rows [a, b) (bit width 1) in the RLE/bit-packed
 * hybrid encoding: long runs as RLE runs, the rest bit-packed in groups of
 * eight, the last group padded with zeros (readers stop at num_values).
 */
static void encode_levels (struct out *o,
                           const uint8_t *defs,
                           size_t a,
                           size_t b)
{
    size_t i = a;

    while (i < b) {
        size_t r = run_length (defs, i, b, SIZE_MAX);
        size_t j = i, groups = 0;

        if (r >= MIN_RLE_RUN) {
            out_varint (o, (uint64_t)r << 1);
            out_byte (o, defs[i]);
            i += r;
            continue;
        }
        do {
            groups++;
            j += 8;
        } while (j < b && run_length (defs, j, b, MIN_RLE_RUN) < MIN_RLE_RUN);
        out_varint (o, (uint64_t)groups << 1 | 1);
        for (size_t g = 0; g < groups; g++) {
            uint8_t byte = 0;
            for (size_t k = 0; k < 8; k++) {
                size_t row = i + 8 * g + k;
                if (row < b && defs[row])
                    byte |= (uint8_t)(1u << k);
            }
            out_byte (o, byte);
        }
        i = j;
    }
}

/* An upper bound of encode_levels' output for n rows: every run covers at
 * least eight rows but the last, and costs at most a 5-byte header plus
 * one byte per eight rows or one value byte.
 */
static size_t levels_bound (size_t n)
{
    return 4 + 7 * (n / 8 + 1);
}

/* Where the next page of a column starts: row and offset into vals. */
struct cursor {
    size_t row;
    size_t voff;
};

/* Write one data page of rows [cur->row, end) holding nn non-null values
 * in vals[cur->voff, voff_end), and account for it in ch.
 */
static void write_page (struct out *o,
                        struct out *scratch,
                        const struct column *c,
                        struct cursor *cur,
                        size_t end,
                        size_t nn,
                        size_t voff_end,
                        struct chunk *ch)
{
    struct tw t = { .o = o };
    size_t rows = end - cur->row;
    size_t vbytes, size, start = o->len;

    scratch->len = 0;
    if (c->optional)
        encode_levels (scratch, c->defs, cur->row, end);
    if (scratch->err) {
        if (!o->err)
            o->err = scratch->err;
        return;
    }
    if (c->type == TR_PARQUET_BOOLEAN)
        vbytes = (nn + 7) / 8;
    else
        vbytes = voff_end - cur->voff;
    size = (c->optional ? 4 + scratch->len : 0) + vbytes;
    if (size > INT32_MAX || rows > INT32_MAX) {
        if (!o->err)
            o->err = EOVERFLOW;
        return;
    }

    tw_begin (&t);
    tw_i32 (&t, 1, PQ_DATA_PAGE);
    tw_i32 (&t, 2, (int32_t)size);
    tw_i32 (&t, 3, (int32_t)size);
    tw_struct (&t, 5);
    tw_i32 (&t, 1, (int32_t)rows);
    tw_i32 (&t, 2, PQ_PLAIN);
    tw_i32 (&t, 3, PQ_RLE);
    tw_i32 (&t, 4, PQ_RLE);
    tw_end (&t);
    tw_end (&t);

    if (c->optional) {
        out_le32 (o, (uint32_t)scratch->len);
        out_put (o, scratch->p, scratch->len);
    }
    if (c->type == TR_PARQUET_BOOLEAN) {
        /* PLAIN booleans: one bit each, least significant bit first */
        uint8_t *p = out_room (o, vbytes);
        if (p) {
            memset (p, 0, vbytes);
            for (size_t k = 0; k < nn; k++) {
                if (c->vals[cur->voff + k])
                    p[k / 8] |= (uint8_t)(1u << (k % 8));
            }
            o->len += vbytes;
        }
    }
    else if (vbytes > 0) /* vals is NULL while a column holds only nulls */
        out_put (o, c->vals + cur->voff, vbytes);

    ch->size += o->len - start;
    ch->values += rows;
    ch->nulls += rows - nn;
    cur->row = end;
    cur->voff = voff_end;
}

/* Encoded bytes of nn PLAIN values that take vbytes in vals. */
static size_t encoded_size (const struct column *c, size_t nn, size_t vbytes)
{
    return c->type == TR_PARQUET_BOOLEAN ? (nn + 7) / 8 : vbytes;
}

/* Could a page of rows rows with venc bytes of values be too large for
 * the int32 sizes and counts of its header?
 */
static bool page_too_large (const struct column *c, size_t rows, size_t venc)
{
    size_t levels = c->optional ? levels_bound (rows) : 0;

    return rows > INT32_MAX || venc > INT32_MAX || levels > INT32_MAX - venc;
}

/* Write the pages of column c for rows [cur->row, end): a page ends once
 * its values reach the page limit, and before a row that could take it
 * past what a page header can state.
 */
static void write_chunk (struct out *o,
                         struct out *scratch,
                         const struct column *c,
                         size_t page_bytes,
                         struct cursor *cur,
                         size_t end,
                         struct chunk *ch)
{
    size_t voff = cur->voff, nn = 0;

    ch->offset = o->len;
    for (size_t r = cur->row; r < end && !o->err; r++) {
        size_t vsize = 0, one = 0;

        if (defined (c, r)) {
            one = 1;
            if (c->type == TR_PARQUET_STRING)
                vsize = 4 + (size_t)get_le32 (c->vals + voff);
            else if (c->type == TR_PARQUET_BOOLEAN)
                vsize = 1;
            else
                vsize = c->type == TR_PARQUET_INT32 ? 4 : 8;
        }
        if (r > cur->row
            && page_too_large (c, r - cur->row + 1,
                               encoded_size (c, nn + one,
                                             voff + vsize - cur->voff))) {
            write_page (o, scratch, c, cur, r, nn, voff, ch);
            nn = 0;
        }
        voff += vsize;
        nn += one;
        /* booleans fill a byte every eight values */
        if ((c->type == TR_PARQUET_BOOLEAN ? nn / 8 : voff - cur->voff)
            >= page_bytes) {
            write_page (o, scratch, c, cur, r + 1, nn, voff, ch);
            nn = 0;
        }
    }
    if (cur->row < end && !o->err)
        write_page (o, scratch, c, cur, end, nn, voff, ch);
}

static int32_t physical_type (tr_parquet_type_t t)
{
    switch (t) {
    case TR_PARQUET_INT32:
        return PQ_INT32;
    case TR_PARQUET_INT64:
    case TR_PARQUET_TIMESTAMP_MS:
        return PQ_INT64;
    case TR_PARQUET_DOUBLE:
        return PQ_DOUBLE;
    case TR_PARQUET_BOOLEAN:
        return PQ_BOOLEAN;
    case TR_PARQUET_STRING:
        return PQ_BYTE_ARRAY;
    }
    return PQ_BYTE_ARRAY;
}

static void write_schema (struct tw *t, const tr_parquet_t *pq)
{
    tw_list (t, 2, CT_STRUCT, pq->ncols + 1);
    tw_begin (t);
    tw_string (t, 4, pq->root);
    tw_i32 (t, 5, (int32_t)pq->ncols);
    tw_end (t);
    for (size_t i = 0; i < pq->ncols; i++) {
        const struct column *c = &pq->cols[i];

        tw_begin (t);
        tw_i32 (t, 1, physical_type (c->type));
        tw_i32 (t, 3, c->optional ? PQ_OPTIONAL : PQ_REQUIRED);
        tw_string (t, 4, c->name);
        if (c->type == TR_PARQUET_STRING) {
            tw_i32 (t, 6, PQ_CONV_UTF8);
            tw_struct (t, 10); /* LogicalType */
            tw_struct (t, 1);  /* STRING: StringType {} */
            tw_end (t);
            tw_end (t);
        }
        else if (c->type == TR_PARQUET_TIMESTAMP_MS) {
            tw_i32 (t, 6, PQ_CONV_TIMESTAMP_MILLIS);
            tw_struct (t, 10);    /* LogicalType */
            tw_struct (t, 8);     /* TIMESTAMP: TimestampType */
            tw_bool (t, 1, true); /* isAdjustedToUTC */
            tw_struct (t, 2);     /* unit: TimeUnit */
            tw_struct (t, 1);     /* MILLIS: MilliSeconds {} */
            tw_end (t);
            tw_end (t);
            tw_end (t);
            tw_end (t);
        }
        tw_end (t);
    }
}

static void write_column_chunk (struct tw *t,
                                const struct column *c,
                                const struct chunk *ch)
{
    tw_begin (t);
    /* file_offset is deprecated and read inconsistently; the chunk's
     * start is what most writers put there and what readers that still
     * use it expect.
     */
    tw_i64 (t, 2, (int64_t)ch->offset);
    tw_struct (t, 3); /* ColumnMetaData */
    tw_i32 (t, 1, physical_type (c->type));
    tw_list (t, 2, CT_I32, c->optional ? 2 : 1);
    tw_elem_i32 (t, PQ_PLAIN);
    if (c->optional)
        tw_elem_i32 (t, PQ_RLE);
    tw_list (t, 3, CT_BINARY, 1);
    tw_binary (t, c->name);
    tw_i32 (t, 4, PQ_UNCOMPRESSED);
    tw_i64 (t, 5, (int64_t)ch->values);
    tw_i64 (t, 6, (int64_t)ch->size);
    tw_i64 (t, 7, (int64_t)ch->size);
    tw_i64 (t, 9, (int64_t)ch->offset);
    /* Only the null count: min and max would need the column orders, and
     * wrong bounds would make readers skip data.
     */
    tw_struct (t, 12); /* Statistics */
    tw_i64 (t, 3, (int64_t)ch->nulls);
    tw_end (t);
    tw_end (t);
    tw_end (t);
}

static void write_footer (struct out *o,
                          const tr_parquet_t *pq,
                          const struct chunk *chunks,
                          size_t ngroups)
{
    struct tw t = { .o = o };

    tw_begin (&t);
    tw_i32 (&t, 1, 1);
    write_schema (&t, pq);
    tw_i64 (&t, 3, (int64_t)pq->nrows);
    tw_list (&t, 4, CT_STRUCT, ngroups);
    for (size_t g = 0; g < ngroups; g++) {
        const struct chunk *ch = &chunks[g * pq->ncols];
        size_t bytes = 0;

        tw_begin (&t);
        tw_list (&t, 1, CT_STRUCT, pq->ncols);
        for (size_t i = 0; i < pq->ncols; i++) {
            write_column_chunk (&t, &pq->cols[i], &ch[i]);
            bytes += ch[i].size;
        }
        tw_i64 (&t, 2, (int64_t)bytes);
        tw_i64 (&t, 3, (int64_t)ch[0].values);
        tw_i64 (&t, 5, (int64_t)ch[0].offset);
        tw_i64 (&t, 6, (int64_t)bytes);
        tw_end (&t);
    }
    if (pq->nmeta > 0) {
        tw_list (&t, 5, CT_STRUCT, pq->nmeta);
        for (size_t i = 0; i < pq->nmeta; i++) {
            tw_begin (&t);
            tw_string (&t, 1, pq->meta[i].key);
            tw_string (&t, 2, pq->meta[i].value);
            tw_end (&t);
        }
    }
    if (pq->created_by)
        tw_string (&t, 6, pq->created_by);
    tw_end (&t);
}

void *tr_parquet_finish (tr_parquet_t *pq, size_t *len, tr_error_t *error)
{
    struct out o = { 0 }, scratch = { 0 };
    struct cursor *cur = NULL;
    struct chunk *chunks = NULL;
    size_t ngroups, footer;

    if (!pq || !len) {
        errno = EINVAL;
        tr_errprintf (error, "no table or no length");
        return NULL;
    }
    ngroups = pq->nrows / pq->group_rows + (pq->nrows % pq->group_rows != 0);
    if (ngroups > SIZE_MAX / sizeof (*chunks) / pq->ncols) {
        o.err = EOVERFLOW;
        goto out;
    }
    if (!(cur = pq_alloc (pq->ncols * sizeof (*cur)))
        || !(chunks = pq_alloc ((ngroups ? ngroups : 1) * pq->ncols
                                * sizeof (*chunks)))) {
        o.err = ENOMEM;
        goto out;
    }
    memset (cur, 0, pq->ncols * sizeof (*cur));
    memset (chunks, 0, (ngroups ? ngroups : 1) * pq->ncols * sizeof (*chunks));

    out_put (&o, "PAR1", 4);
    for (size_t g = 0; g < ngroups && !o.err; g++) {
        size_t end = pq->nrows - cur[0].row > pq->group_rows
                         ? cur[0].row + pq->group_rows
                         : pq->nrows;
        for (size_t i = 0; i < pq->ncols && !o.err; i++)
            write_chunk (&o, &scratch, &pq->cols[i], pq->page_bytes, &cur[i],
                         end, &chunks[g * pq->ncols + i]);
    }
    footer = o.len;
    write_footer (&o, pq, chunks, ngroups);
    if (!o.err && o.len - footer > INT32_MAX)
        o.err = EOVERFLOW;
    out_le32 (&o, (uint32_t)(o.len - footer));
    out_put (&o, "PAR1", 4);
out:
    free (cur);
    free (chunks);
    free (scratch.p);
    if (o.err) {
        free (o.p);
        errno = o.err;
        if (o.err == ENOMEM)
            tr_errprintf (error, "out of memory");
        else
            tr_errprintf (error, "table too large for a Parquet page or "
                                 "footer");
        return NULL;
    }
    *len = o.len;
    return o.p;
}
