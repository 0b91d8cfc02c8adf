/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Error detail for the library.  The library never logs or exits; it
 * returns -1/NULL with errno set and, at boundaries, text in a tr_error_t
 * that the front-end prints once in its own idiom.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static void vset (tr_error_t *error, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 2, 0)));

static void vset (tr_error_t *error, const char *fmt, va_list ap)
{
    int n = vsnprintf (error->text, sizeof (error->text), fmt, ap);
    /* Mark truncation visibly rather than silently cutting a message. */
    if (n >= (int)sizeof (error->text) && sizeof (error->text) > 4)
        memcpy (error->text + sizeof (error->text) - 4, "...", 4);
}

int tr_errprintf (tr_error_t *error, const char *fmt, ...)
{
    int saved = errno;
    if (error) {
        va_list ap;
        error->file[0] = '\0';
        error->line = 0;
        error->column = 0;
        va_start (ap, fmt);
        vset (error, fmt, ap);
        va_end (ap);
    }
    errno = saved;
    return -1;
}

int tr_errprintf_at (tr_error_t *error,
                     const char *file,
                     int line,
                     int column,
                     const char *fmt,
                     ...)
{
    int saved = errno;
    if (error) {
        va_list ap;
        snprintf (error->file, sizeof (error->file), "%s", file ? file : "");
        error->line = line;
        error->column = column;
        va_start (ap, fmt);
        vset (error, fmt, ap);
        va_end (ap);
    }
    errno = saved;
    return -1;
}

void tr_error_clear (tr_error_t *error)
{
    if (error)
        memset (error, 0, sizeof (*error));
}

const char *tr_error_str (const tr_error_t *error)
{
    static __thread char buf[sizeof (error->file) + sizeof (error->text) + 32];

    if (!error)
        return "";
    if (error->file[0] && error->line > 0)
        snprintf (buf, sizeof (buf), "%s:%d:%d: %s", error->file, error->line,
                  error->column, error->text);
    else if (error->file[0])
        snprintf (buf, sizeof (buf), "%s: %s", error->file, error->text);
    else
        snprintf (buf, sizeof (buf), "%s", error->text);
    return buf;
}

const char *tr_error_usage (char *buf,
                            size_t size,
                            const char *prog,
                            int c,
                            const char *opt,
                            int short_opt)
{
    char word[64];

    /* "-xyz": getopt stopped at one letter of the group */
    if (short_opt && opt && strncmp (opt, "--", 2))
        snprintf (word, sizeof (word), "-%c", short_opt);
    else
        snprintf (word, sizeof (word), "%.*s", (int)strcspn (opt ? opt : "",
                                                             "="),
                  opt ? opt : "");
    snprintf (buf, size, c == ':' ? "%s: option '%s' needs a value (see "
                                    "%s --help)"
                                  : "%s: unknown option '%s' (see %s "
                                    "--help)",
              prog, word, prog);
    return buf;
}
