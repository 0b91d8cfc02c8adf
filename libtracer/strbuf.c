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

/* The length of the character at s that must be escaped, or 0 when it is
 * printable (*cp gets its code point).  Invalid UTF-8 escapes byte by
 * byte (length 1, code point -1).
 */
static size_t unsafe_char (const unsigned char *s, long *cp)
{
    unsigned c = s[0];

    *cp = c;
    if (c < 0x20 || c == 0x7f)
        return 1;
    if (c < 0x80)
        return 0;
    if (c >= 0xc2 && c <= 0xdf && (s[1] & 0xc0) == 0x80) {
        *cp = ((long)(c & 0x1f) << 6) | (s[1] & 0x3f);
        return *cp >= 0x80 && *cp <= 0x9f ? 2 : 0;
    }
    if (c >= 0xe0 && c <= 0xef && (s[1] & 0xc0) == 0x80
        && (s[2] & 0xc0) == 0x80) {
        *cp = ((long)(c & 0x0f) << 12) | ((long)(s[1] & 0x3f) << 6)
              | (s[2] & 0x3f);
        if (*cp < 0x800 || (*cp >= 0xd800 && *cp <= 0xdfff)) {
            *cp = -1;
            return 1;
        }
        /* line and paragraph separators, bidirectional embeddings,
         * overrides and isolates
         */
        return (*cp >= 0x2028 && *cp <= 0x202e)
                       || (*cp >= 0x2066 && *cp <= 0x2069)
                   ? 3
                   : 0;
    }
    if (c >= 0xf0 && c <= 0xf4 && (s[1] & 0xc0) == 0x80
        && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80) {
        *cp = ((long)(c & 0x07) << 18) | ((long)(s[1] & 0x3f) << 12)
              | ((long)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
        if (*cp >= 0x10000 && *cp <= 0x10ffff)
            return 0;
    }
    *cp = -1;
    return 1;
}

static size_t char_len (const unsigned char *s)
{
    return s[0] < 0x80 ? 1 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
}

int tr_text_is_printable (const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    long cp;

    while (*p) {
        if (unsafe_char (p, &cp))
            return 0;
        p += char_len (p);
    }
    return 1;
}

int tr_strbuf_printable (tr_strbuf_t *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        const unsigned char *start = p;
        long cp;
        size_t n;

        /* the printable run, then the character that is not */
        while (*p && !(n = unsafe_char (p, &cp)))
            p += char_len (p);
        if (p > start
            && tr_strbuf_append (sb, (const char *)start,
                                 (size_t)(p - start)) < 0)
            return -1;
        if (!*p)
            break;
        if (cp == '\n' || cp == '\t' || cp == '\r') {
            if (tr_strbuf_puts (sb, cp == '\n'   ? "\\n"
                                    : cp == '\t' ? "\\t"
                                                 : "\\r") < 0)
                return -1;
        }
        else if (cp < 0 || cp < 0x80) {
            if (tr_strbuf_printf (sb, "\\x%02x", *p) < 0)
                return -1;
        }
        else if (tr_strbuf_printf (sb, "\\u%04lx", cp) < 0)
            return -1;
        p += n;
    }
    return 0;
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
