/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_ERROR_H
#define TRACER_ERROR_H

#include <stddef.h>

/* Error detail returned by functions at a boundary (parsers, decoders,
 * signing, discovery).  Every such function takes an optional
 * 'tr_error_t *error' as its last argument; NULL means "no detail wanted".
 * For parsers, file/line/column locate the problem (1-based; 0 = unknown).
 */
typedef struct tr_error {
    char text[256];
    char file[256];
    int line;
    int column;
} tr_error_t;

/* Set error->text from a printf-style format (if error is not NULL) and
 * return -1, so a failure is one line:
 *     return tr_errprintf (error, "unknown key '%s'", key);
 * errno is preserved.
 */
int tr_errprintf (tr_error_t *error, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Like tr_errprintf, but also records file, line and column.  The text
 * is the bare message; tr_error_str() renders "file:line:column: text".
 */
int tr_errprintf_at (tr_error_t *error,
                     const char *file,
                     int line,
                     int column,
                     const char *fmt,
                     ...) __attribute__ ((format (printf, 5, 6)));

/* Clear an error (all fields empty).  NULL is a no-op. */
void tr_error_clear (tr_error_t *error);

/* Render the error as "file:line:column: text" when a location is set,
 * else just the text.  Returns a pointer to a static per-thread buffer
 * that is valid until the next call in the same thread.
 */
const char *tr_error_str (const tr_error_t *error);

/* getopt_long's complaint as one line for a program's stderr, with the
 * hint where help is: "PROG: unknown option '--x' (see PROG --help)".
 * For getopt_long run with opterr = 0 and ':' leading the short
 * options: c is what it returned ('?' or ':'), opt the argument it
 * stopped at (argv[optind - 1]), short_opt getopt's optopt.  Writes
 * into buf; returns buf.
 */
const char *tr_error_usage (char *buf,
                            size_t size,
                            const char *prog,
                            int c,
                            const char *opt,
                            int short_opt);

#endif /* !TRACER_ERROR_H */
