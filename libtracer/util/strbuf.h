/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_STRBUF_H
#define TRACER_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable string.  Appends return 0, or -1 with errno = ENOMEM; on
 * failure the buffer keeps its previous contents (never aborts).
 */
typedef struct tr_strbuf {
    char *buf;   /* always NUL-terminated once anything was appended */
    size_t len;
    size_t cap;
} tr_strbuf_t;

#define TR_STRBUF_INIT {NULL, 0, 0}

int tr_strbuf_append (tr_strbuf_t *sb, const char *s, size_t n);
int tr_strbuf_puts (tr_strbuf_t *sb, const char *s);
int tr_strbuf_printf (tr_strbuf_t *sb, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* The contents ("" when empty).  Owned by sb. */
const char *tr_strbuf_str (const tr_strbuf_t *sb);

/* Take ownership of the contents (caller must free() the result; never
 * NULL on success) and reset sb.  Returns NULL with errno = ENOMEM.
 */
char *tr_strbuf_steal (tr_strbuf_t *sb);

void tr_strbuf_reset (tr_strbuf_t *sb);
void tr_strbuf_free (tr_strbuf_t *sb);

/* The length of the well-formed UTF-8 character at p (left bytes there)
 * with its code point in *cp, or 0 when there is none: overlong forms,
 * surrogates and values above U+10FFFF are not well formed (the Unicode
 * standard's table of well-formed byte sequences).
 */
size_t tr_utf8_char (const unsigned char *p, size_t left, uint32_t *cp);

/* Text a user controls (job, step and tool names, command lines,
 * reasons) on its way to a terminal, a log or a mail: control characters
 * (C0, DEL, C1) and the Unicode line separators and bidirectional
 * overrides become visible escapes ("\\n", "\\t", "\\r", "\\xNN",
 * "\\uNNNN"), so that no name can start a fake line, move the cursor or
 * reorder what is shown.  Bytes that are not UTF-8 become "\\xNN" too.
 * tr_text_is_printable says whether s needs none of this;
 * tr_strbuf_printable appends s escaped.
 */
int tr_text_is_printable (const char *s);
int tr_strbuf_printable (tr_strbuf_t *sb, const char *s);

/* The one rule above, a character at a time, for renderers that write
 * their own markup (HTML): the length of the character at p (left > 0
 * bytes there, at least 1), and its visible escape into esc (size >= 8
 * bytes), or "" where it is shown as it is.
 */
size_t tr_text_escape_char (const unsigned char *p,
                            size_t left,
                            char *esc,
                            size_t size);

/* FNV-1a, 64 bit, of the first len bytes of s: for hash tables, and
 * for names on disk (store markers), so it must never change.
 */
uint64_t tr_str_hash64 (const char *s, size_t len);

/* The value of key in a tags string ("k=v" pairs joined by ';', ';'
 * and '\\' in values escaped with '\\'), unescaped into buf (size
 * bytes, cut); false when the key is not there.
 */
bool tr_tags_get (const char *tags, const char *key, char *buf, size_t size);

#endif /* !TRACER_STRBUF_H */
