/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Test helper: write the table a JSON spec describes as a Parquet file
 * with libtracer's writer, so that an independent reader can check it
 * (t/0402).
 *
 *   pqwrite SPEC.json OUT.parquet
 *
 * SPEC: {"root": "...", "created_by": "...", "columns": [{"name": "...",
 * "type": "int32|int64|double|boolean|string|timestamp_ms", "optional":
 * true|false}, ...], "rows": [[v, ...], ...], "row_group_rows": N,
 * "page_bytes": N, "meta": {"k": "v", ...}}; only "columns" is required.
 * null is a null value.  int64 and timestamp_ms values are JSON integers
 * or decimal strings (which survive tools that read numbers as doubles);
 * doubles are numbers or "NaN", "Infinity", "-Infinity", "-0".
 *
 * Exit status: 0 written; 1 the file could not be made or written; 2 a
 * usage error or a bad spec, including one the writer refuses (EINVAL:
 * a null in a required column, a duplicate column name, ...).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "libtracer/view/parquet.h"
#include "libtracer/util/path.h"

static const char *const type_names[] = {
    [TR_PARQUET_INT32] = "int32",   [TR_PARQUET_INT64] = "int64",
    [TR_PARQUET_DOUBLE] = "double", [TR_PARQUET_BOOLEAN] = "boolean",
    [TR_PARQUET_STRING] = "string", [TR_PARQUET_TIMESTAMP_MS] = "timestamp_ms",
};

/* Print "pqwrite: bad spec: ..." and return 2, the exit status. */
static int bad_spec (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));

static int bad_spec (const char *fmt, ...)
{
    va_list ap;

    fputs ("pqwrite: bad spec: ", stderr);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    return 2;
}

/* Are all of o's keys in the NULL-terminated list? */
static const char *unknown_key (json_t *o, const char *const *known)
{
    const char *key;
    json_t *v;

    json_object_foreach (o, key, v)
    {
        size_t i;
        for (i = 0; known[i]; i++) {
            if (strcmp (key, known[i]) == 0)
                break;
        }
        if (!known[i])
            return key;
    }
    return NULL;
}

/* A non-negative integer member (0 when absent); -1 when not one. */
static long long count_member (json_t *spec, const char *key)
{
    json_t *v = json_object_get (spec, key);

    if (!v)
        return 0;
    if (!json_is_integer (v) || json_integer_value (v) < 0)
        return -1;
    return json_integer_value (v);
}

static int parse_columns (json_t *spec,
                          struct tr_parquet_column **colsp,
                          size_t *ncolsp)
{
    static const char *const known[] = { "name", "type", "optional", NULL };
    json_t *jcols = json_object_get (spec, "columns");
    struct tr_parquet_column *cols;
    size_t i, n;
    json_t *jc;

    if (!json_is_array (jcols))
        return bad_spec ("\"columns\" must be an array");
    n = json_array_size (jcols);
    if (!(cols = calloc (n ? n : 1, sizeof (*cols)))) {
        fprintf (stderr, "pqwrite: out of memory\n");
        return 1;
    }
    json_array_foreach (jcols, i, jc)
    {
        json_t *name = json_object_get (jc, "name");
        json_t *type = json_object_get (jc, "type");
        json_t *opt = json_object_get (jc, "optional");
        const char *bad;
        size_t t;

        if (!json_is_object (jc)) {
            free (cols);
            return bad_spec ("column %zu is not an object", i + 1);
        }
        if ((bad = unknown_key (jc, known))) {
            free (cols);
            return bad_spec ("column %zu: unknown key \"%s\"", i + 1, bad);
        }
        if (!json_is_string (name) || !json_is_string (type)
            || (opt && !json_is_boolean (opt))) {
            free (cols);
            return bad_spec ("column %zu needs a string \"name\" and "
                             "\"type\" (and a boolean \"optional\")",
                             i + 1);
        }
        for (t = 0; t < sizeof (type_names) / sizeof (type_names[0]); t++) {
            if (strcmp (json_string_value (type), type_names[t]) == 0)
                break;
        }
        if (t == sizeof (type_names) / sizeof (type_names[0])) {
            free (cols);
            return bad_spec ("column %zu: unknown type \"%s\"", i + 1,
                             json_string_value (type));
        }
        cols[i].name = json_string_value (name);
        cols[i].type = (tr_parquet_type_t)t;
        cols[i].optional = json_is_true (opt);
    }
    *colsp = cols;
    *ncolsp = n;
    return 0;
}

/* A 64-bit integer from a JSON integer or a decimal string. */
static bool int64_of (json_t *j, int64_t *out)
{
    const char *s, *p;
    char *end;
    long long v;

    if (json_is_integer (j)) {
        *out = json_integer_value (j);
        return true;
    }
    if (!json_is_string (j))
        return false;
    s = json_string_value (j);
    p = *s == '-' ? s + 1 : s;
    if (*p < '0' || *p > '9' || strlen (s) != json_string_length (j))
        return false;
    errno = 0;
    v = strtoll (s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

static bool double_of (json_t *j, double *out)
{
    const char *s = json_string_value (j);

    if (json_is_number (j)) {
        *out = json_number_value (j);
        return true;
    }
    if (!s)
        return false;
    if (strcmp (s, "NaN") == 0)
        *out = NAN;
    else if (strcmp (s, "Infinity") == 0)
        *out = INFINITY;
    else if (strcmp (s, "-Infinity") == 0)
        *out = -INFINITY;
    else if (strcmp (s, "-0") == 0)
        *out = -0.0;
    else
        return false;
    return true;
}

/* values[i] from row r's cell j, a value of column c; 2 on a bad cell. */
static int value_of (json_t *cell,
                     const struct tr_parquet_column *c,
                     size_t r,
                     struct tr_parquet_value *v)
{
    int64_t i64;

    memset (v, 0, sizeof (*v));
    if (json_is_null (cell)) {
        v->null = true;
        return 0;
    }
    switch (c->type) {
    case TR_PARQUET_INT32:
        if (!int64_of (cell, &i64) || i64 < INT32_MIN || i64 > INT32_MAX)
            break;
        v->v.i32 = (int32_t)i64;
        return 0;
    case TR_PARQUET_INT64:
    case TR_PARQUET_TIMESTAMP_MS:
        if (!int64_of (cell, &v->v.i64))
            break;
        return 0;
    case TR_PARQUET_DOUBLE:
        if (!double_of (cell, &v->v.d))
            break;
        return 0;
    case TR_PARQUET_BOOLEAN:
        if (!json_is_boolean (cell))
            break;
        v->v.b = json_is_true (cell);
        return 0;
    case TR_PARQUET_STRING:
        if (!json_is_string (cell))
            break;
        v->v.str.s = json_string_value (cell);
        v->v.str.len = json_string_length (cell);
        return 0;
    }
    return bad_spec ("row %zu: column '%s': not a %s value", r + 1, c->name,
                     type_names[c->type]);
}

static int add_rows (tr_parquet_t *pq,
                     json_t *spec,
                     const struct tr_parquet_column *cols,
                     size_t ncols)
{
    json_t *rows = json_object_get (spec, "rows"), *row;
    struct tr_parquet_value *vals;
    tr_error_t error;
    size_t r;
    int rc = 0;

    if (!rows)
        return 0;
    if (!json_is_array (rows))
        return bad_spec ("\"rows\" must be an array");
    if (!(vals = calloc (ncols, sizeof (*vals)))) {
        fprintf (stderr, "pqwrite: out of memory\n");
        return 1;
    }
    json_array_foreach (rows, r, row)
    {
        if (!json_is_array (row) || json_array_size (row) != ncols) {
            rc = bad_spec ("row %zu is not an array of %zu values", r + 1,
                           ncols);
            break;
        }
        for (size_t j = 0; j < ncols && rc == 0; j++)
            rc = value_of (json_array_get (row, j), &cols[j], r, &vals[j]);
        if (rc != 0)
            break;
        if (tr_parquet_add_row (pq, vals, &error) < 0) {
            fprintf (stderr, "pqwrite: row %zu: %s\n", r + 1, error.text);
            rc = errno == EINVAL ? 2 : 1;
            break;
        }
    }
    free (vals);
    return rc;
}

static int set_meta (tr_parquet_t *pq, json_t *spec)
{
    json_t *meta = json_object_get (spec, "meta"), *v;
    tr_error_t error;
    const char *key;

    if (!meta)
        return 0;
    if (!json_is_object (meta))
        return bad_spec ("\"meta\" must be an object");
    json_object_foreach (meta, key, v)
    {
        if (!json_is_string (v))
            return bad_spec ("meta \"%s\" is not a string", key);
        if (tr_parquet_set_meta (pq, key, json_string_value (v), &error) < 0) {
            fprintf (stderr, "pqwrite: meta: %s\n", error.text);
            return errno == EINVAL ? 2 : 1;
        }
    }
    return 0;
}

/* Write buf to path through a temporary beside it. */
static int write_file (const char *path, const void *buf, size_t len)
{
    char dir[PATH_MAX];
    const char *slash = strrchr (path, '/'), *name = path;
    tr_error_t error;
    int dfd, rc;

    if (slash) {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        if (n >= sizeof (dir)) {
            fprintf (stderr, "pqwrite: %s: path too long\n", path);
            return 1;
        }
        memcpy (dir, path, n);
        dir[n] = '\0';
        name = slash + 1;
    }
    else
        (void)snprintf (dir, sizeof (dir), ".");
    if ((dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        fprintf (stderr, "pqwrite: %s: %s\n", dir, strerror (errno));
        return 1;
    }
    rc = tr_path_write_atomic (dfd, name, buf, len, 0644, (uid_t)-1, (gid_t)-1,
                               &error);
    close (dfd);
    if (rc < 0) {
        fprintf (stderr, "pqwrite: %s: %s\n", path, error.text);
        return 1;
    }
    return 0;
}

static int run (json_t *spec, const char *out)
{
    static const char *const known[] = { "root",           "created_by",
                                         "columns",        "rows",
                                         "row_group_rows", "page_bytes",
                                         "meta",           NULL };
    json_t *root = json_object_get (spec, "root");
    json_t *by = json_object_get (spec, "created_by");
    struct tr_parquet_column *cols = NULL;
    long long group_rows, page_bytes;
    tr_parquet_t *pq = NULL;
    tr_error_t error;
    const char *bad;
    void *buf = NULL;
    size_t ncols = 0, len;
    int rc;

    if (!json_is_object (spec))
        return bad_spec ("not a JSON object");
    if ((bad = unknown_key (spec, known)))
        return bad_spec ("unknown key \"%s\"", bad);
    if ((root && !json_is_string (root)) || (by && !json_is_string (by)))
        return bad_spec ("\"root\" and \"created_by\" must be strings");
    group_rows = count_member (spec, "row_group_rows");
    page_bytes = count_member (spec, "page_bytes");
    if (group_rows < 0 || page_bytes < 0)
        return bad_spec ("\"row_group_rows\" and \"page_bytes\" must be "
                         "non-negative integers");
    if ((rc = parse_columns (spec, &cols, &ncols)) != 0)
        return rc;
    if (!(pq = tr_parquet_create (json_string_value (root), cols, ncols,
                                  json_string_value (by), &error))) {
        fprintf (stderr, "pqwrite: %s\n", error.text);
        rc = errno == EINVAL ? 2 : 1;
        goto out;
    }
    tr_parquet_set_limits (pq, (size_t)group_rows, (size_t)page_bytes);
    if ((rc = set_meta (pq, spec)) != 0
        || (rc = add_rows (pq, spec, cols, ncols)) != 0)
        goto out;
    if (!(buf = tr_parquet_finish (pq, &len, &error))) {
        fprintf (stderr, "pqwrite: %s\n", error.text);
        rc = 1;
        goto out;
    }
    rc = write_file (out, buf, len);
out:
    free (buf);
    tr_parquet_destroy (pq);
    free (cols);
    return rc;
}

int main (int argc, char **argv)
{
    json_error_t jerr;
    json_t *spec;
    int rc;

    if (argc != 3) {
        fprintf (stderr, "Usage: pqwrite SPEC.json OUT.parquet\n");
        return 2;
    }
    /* \u0000 inside strings is allowed: Parquet strings may hold it */
    if (!(spec =
              json_load_file (argv[1], JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES,
                              &jerr))) {
        fprintf (stderr, "pqwrite: %s:%d:%d: %s\n", argv[1], jerr.line,
                 jerr.column, jerr.text);
        return 2;
    }
    rc = run (spec, argv[2]);
    json_decref (spec);
    return rc;
}
