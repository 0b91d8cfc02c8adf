/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Growable strings that report ENOMEM instead of aborting: this code may
 * run inside slurmstepd, where aborting would take down someone's job.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
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

size_t tr_utf8_char (const unsigned char *p, size_t left, uint32_t *cp)
{
    uint32_t v, min;
    size_t n;

    if (left == 0)
        return 0;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
        v = p[0] & 0x1f;
        min = 0x80;
    }
    else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        v = p[0] & 0x0f;
        min = 0x800;
    }
    else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        v = p[0] & 0x07;
        min = 0x10000;
    }
    else
        return 0;
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* The character at p (left bytes there): its length in *n, and whether
 * it must be escaped: C0 controls, DEL, C1 controls, the line and
 * paragraph separators, bidirectional embeddings, overrides and
 * isolates, and a byte that starts no well-formed character (*n 1,
 * *cp -1).
 */
static bool unsafe_char (const unsigned char *p,
                         size_t left,
                         size_t *n,
                         long *cp)
{
    uint32_t v;

    if (!(*n = tr_utf8_char (p, left, &v))) {
        *n = 1;
        *cp = -1;
        return true;
    }
    *cp = (long)v;
    return v < 0x20 || (v >= 0x7f && v <= 0x9f)
           || (v >= 0x2028 && v <= 0x202e) || (v >= 0x2066 && v <= 0x2069);
}

int tr_text_is_printable (const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen (s), n;
    long cp;

    for (; left; p += n, left -= n)
        if (unsafe_char (p, left, &n, &cp))
            return 0;
    return 1;
}

size_t tr_text_escape_char (const unsigned char *p,
                            size_t left,
                            char *esc,
                            size_t size)
{
    size_t n;
    long cp;

    esc[0] = '\0';
    if (!unsafe_char (p, left, &n, &cp))
        return n;
    if (cp == '\n' || cp == '\t' || cp == '\r')
        snprintf (esc, size, "%s", cp == '\n'   ? "\\n"
                                   : cp == '\t' ? "\\t"
                                                 : "\\r");
    else if (cp < 0x80)
        snprintf (esc, size, "\\x%02x", *p);
    else
        snprintf (esc, size, "\\u%04lx", cp);
    return n;
}

int tr_strbuf_printable (tr_strbuf_t *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    size_t left = strlen (s), n;
    char esc[16];

    for (; left; p += n, left -= n) {
        n = tr_text_escape_char (p, left, esc, sizeof (esc));
        if (!esc[0])
            continue;
        /* the printable run before it, then it escaped */
        if ((p > run
             && tr_strbuf_append (sb, (const char *)run, (size_t)(p - run))
                    < 0)
            || tr_strbuf_puts (sb, esc) < 0)
            return -1;
        run = p + n;
    }
    if (p > run
        && tr_strbuf_append (sb, (const char *)run, (size_t)(p - run)) < 0)
        return -1;
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

bool tr_tags_get (const char *tags, const char *key, char *buf, size_t size)
{
    size_t klen = strlen (key);
    const char *p = tags;

    while (p && *p) {
        if (!strncmp (p, key, klen) && p[klen] == '=') {
            size_t n = 0;

            for (p += klen + 1; *p && *p != ';'; p++) {
                if (*p == '\\' && p[1])
                    p++;
                if (n + 1 < size)
                    buf[n++] = *p;
            }
            if (size)
                buf[n] = '\0';
            return true;
        }
        /* to the next unescaped ';' */
        while (*p && *p != ';') {
            if (*p == '\\' && p[1])
                p++;
            p++;
        }
        if (*p == ';')
            p++;
    }
    return false;
}
