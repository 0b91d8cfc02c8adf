/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Growable strings that report ENOMEM instead of aborting: this code may
 * run inside slurmstepd, where aborting would take down someone's job.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static int reserve (tr_strbuf_t *sb, size_t extra)
{
    size_t need, cap;
    char *p;

    if (extra > ((size_t)-1) / 2 - sb->len - 1) {
        errno = ENOMEM;
        return -1;
    }
    need = sb->len + extra + 1;
    if (need <= sb->cap)
        return 0;
    cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap *= 2;
    if (!(p = realloc (sb->buf, cap)))
        return -1;
    sb->buf = p;
    sb->cap = cap;
    return 0;
}

int tr_strbuf_append (tr_strbuf_t *sb, const char *s, size_t n)
{
    if (reserve (sb, n) < 0)
        return -1;
    if (n)
        memcpy (sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
    return 0;
}

int tr_strbuf_puts (tr_strbuf_t *sb, const char *s)
{
    return tr_strbuf_append (sb, s, strlen (s));
}

int tr_strbuf_printf (tr_strbuf_t *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (NULL, 0, fmt, ap);
    va_end (ap);
    if (n < 0)
        return -1;
    if (reserve (sb, (size_t)n) < 0)
        return -1;
    va_start (ap, fmt);
    vsnprintf (sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end (ap);
    sb->len += (size_t)n;
    return 0;
}

const char *tr_strbuf_str (const tr_strbuf_t *sb)
{
    return sb->buf ? sb->buf : "";
}

char *tr_strbuf_steal (tr_strbuf_t *sb)
{
    char *s = sb->buf;

    if (!s && !(s = strdup ("")))
        return NULL;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return s;
}

void tr_strbuf_reset (tr_strbuf_t *sb)
{
    sb->len = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
}

void tr_strbuf_free (tr_strbuf_t *sb)
{
    int saved = errno;
    free (sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    errno = saved;
}

uint64_t tr_str_hash64 (const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
