/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_PARQUET_H
#define TRACER_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libtracer/util/error.h"

/* A small Apache Parquet writer: flat tables (no nesting, no repeated
 * fields) of the physical types INT32, INT64, DOUBLE, BOOLEAN and
 * BYTE_ARRAY, required or optional, PLAIN encoded, uncompressed, in
 * version 1 data pages, with the file metadata in Thrift's compact
 * protocol.  That is what tracer's exports need and what every Parquet
 * reader reads; no Parquet library for C is packaged in Debian.
 *
 * Rows are added one at a time and kept in memory, column by column;
 * tr_parquet_finish lays out the whole file in one buffer, which the
 * caller writes (atomically) where it wants.  Each column chunk's
 * statistics hold its null count only (no min/max).
 */

typedef enum {
    TR_PARQUET_INT32,
    TR_PARQUET_INT64,
    TR_PARQUET_DOUBLE,
    TR_PARQUET_BOOLEAN,
    /* BYTE_ARRAY, logical type STRING (UTF-8) */
    TR_PARQUET_STRING,
    /* INT64, logical type TIMESTAMP(MILLIS, adjusted to UTC): ms since
     * the epoch */
    TR_PARQUET_TIMESTAMP_MS,
} tr_parquet_type_t;

struct tr_parquet_column {
    const char *name; /* copied */
    tr_parquet_type_t type;
    bool optional; /* may be null */
};

/* A value of a row: the member that matches the column's type, or
 * null (optional columns only).  Strings need not be NUL-terminated (len
 * bytes) and are copied; they must be valid UTF-8.
 */
struct tr_parquet_value {
    bool null;
    union {
        int32_t i32;
        int64_t i64; /* INT64 and TIMESTAMP_MS */
        double d;
        bool b;
        struct {
            const char *s;
            size_t len;
        } str;
    } v;
};

typedef struct tr_parquet tr_parquet_t;

/* A table of ncols columns (1 to 1024) whose schema root is named root
 * ("schema" if NULL).  Column names are unique, non-empty UTF-8 without
 * '.' (which tools read as a path separator) or ASCII control
 * characters.  created_by goes into the file's metadata (NULL: none);
 * root and created_by must be UTF-8.  NULL with errno (EINVAL, ENOMEM),
 * said in error.
 */
tr_parquet_t *tr_parquet_create (const char *root,
                                 const struct tr_parquet_column *cols,
                                 size_t ncols,
                                 const char *created_by,
                                 tr_error_t *error);
void tr_parquet_destroy (tr_parquet_t *pq);

/* Add a row: values[ncols], in column order.  0, or -1 with errno
 * (EINVAL: a null in a required column, a string that is not UTF-8 or
 * longer than INT32_MAX; ENOMEM), said in error; the table is unchanged
 * by a row that fails.
 */
int tr_parquet_add_row (tr_parquet_t *pq,
                        const struct tr_parquet_value *values,
                        tr_error_t *error);

/* Rows added so far. */
size_t tr_parquet_rows (const tr_parquet_t *pq);

/* Start a new row group every rows rows (default 1,048,576), and a new
 * data page when a page's values reach bytes bytes (default 1 MiB;
 * booleans: bytes full bytes of bits); for large tables, and so that
 * tests can exercise both.  0 leaves a limit unchanged.  A page also ends
 * before a row that could take it past the INT32_MAX bytes or values its
 * header can state.
 */
void tr_parquet_set_limits (tr_parquet_t *pq, size_t rows, size_t bytes);

/* Key/value metadata for the file footer (both copied; a key set twice
 * keeps the last value).  Both UTF-8, the key non-empty.  0, or -1 with
 * errno (EINVAL, ENOMEM).
 */
int tr_parquet_set_meta (tr_parquet_t *pq,
                         const char *key,
                         const char *value,
                         tr_error_t *error);

/* The whole file ("PAR1", row groups, footer, length, "PAR1") in a new
 * buffer of *len bytes, which the caller frees; the table can still be
 * added to and finished again.  A table with no rows gives a valid file
 * with no row groups.  NULL with errno (ENOMEM; EOVERFLOW: a single
 * value too large for a page, or a footer over INT32_MAX bytes).
 */
void *tr_parquet_finish (tr_parquet_t *pq, size_t *len, tr_error_t *error);

/* Replace the allocator of this module (NULL: realloc again), so that
 * tests can make any allocation fail; fn must behave as realloc and its
 * memory must be released by free().  Process-wide: set it while no
 * table is in use.
 */
void tr_parquet_set_realloc (void *(*fn) (void *, size_t));

#endif /* !TRACER_PARQUET_H */
