/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The fsroot layer: every read of /proc and /sys goes through a prefix so
 * that fixture trees of cgroup v1, v2 and hybrid hosts can be tested on a
 * machine that shows only one layout (after hwloc's HWLOC_FSROOT).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fsroot.h"

static const char *override;
static int overridden;

/* $TRACER_FSROOT, read once: every kept read asks for the prefix, and
 * getenv walks the whole environment each time.
 */
static const char *env_root;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env_root (void)
{
    env_root = getenv ("TRACER_FSROOT");
}

const char *tr_fsroot (void)
{
    if (overridden)
        return override ? override : "";
    pthread_once (&env_once, read_env_root);
    return env_root ? env_root : "";
}

void tr_fsroot_set (const char *root)
{
    override = root;
    overridden = root != NULL;
}

int tr_fsroot_path (char *buf, size_t size, const char *path)
{
    int n = snprintf (buf, size, "%s%s", tr_fsroot (), path);

    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Parse exactly len decimal digits: no sign, no blanks, no wraparound. */
int tr_parse_u64 (const char *s, size_t len, uint64_t *value)
{
    uint64_t v = 0;
    size_t i;

    if (len == 0) {
        errno = EINVAL;
        return -1;
    }
    for (i = 0; i < len; i++) {
        unsigned d;

        if (s[i] < '0' || s[i] > '9') {
            errno = EINVAL;
            return -1;
        }
        d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            errno = ERANGE;
            return -1;
        }
        v = v * 10 + d;
    }
    *value = v;
    return 0;
}

/* /proc and sysfs report a size of 0: read until EOF. */
char *tr_fsroot_read_text (const char *path, size_t max)
{
    char full[PATH_MAX];
    size_t off = 0, cap = 4096;
    ssize_t n = 0;
    char *text, *tmp;
    int fd, saved;

    if (tr_fsroot_path (full, sizeof (full), path) < 0)
        return NULL;
    if ((fd = open (full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return NULL;
    if (!(text = malloc (cap)))
        goto nomem;
    for (;;) {
        if (off + 1 == cap) {
            if (cap > max) {
                errno = EFBIG;
                goto error;
            }
            if (!(tmp = realloc (text, cap * 2)))
                goto nomem;
            text = tmp;
            cap *= 2;
        }
        n = read (fd, text + off, cap - 1 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto error;
        if (n == 0)
            break;
        off += (size_t)n;
    }
    if (off > max) {
        errno = EFBIG;
        goto error;
    }
    close (fd);
    text[off] = '\0';
    return text;
nomem:
    errno = ENOMEM;
error:
    saved = errno;
    free (text);
    close (fd);
    errno = saved;
    return NULL;
}

ssize_t tr_fsroot_read_fd (int fd, char *buf, size_t size)
{
    size_t off = 0;
    ssize_t n = 0;

    if (size == 0) {
        errno = EINVAL;
        return -1;
    }
    while (off < size - 1) {
        size_t want = size - 1 - off;
        n = pread (fd, buf + off, want, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
        /* The kernel's seq_file fills a read until it is full or the
         * file's records end, and sysfs returns an attribute whole: a
         * short read is the end, and a second call would only say so.
         */
        if ((size_t)n < want)
            break;
    }
    if (n < 0)
        return -1;
    buf[off] = '\0';
    return (ssize_t)off;
}

/* Descriptors held open by every tr_kept, and how many may be. */
static long kept_open;
static long kept_max = -1;

void tr_kept_limit (long max)
{
    kept_max = max;
}

ssize_t tr_kept_read (struct tr_kept *k,
                      const char *dir,
                      const char *file,
                      char *buf,
                      size_t size)
{
    ssize_t n;
    /* A fixture tree's files are rewritten, not regenerated: there a
     * kept descriptor would read a replaced file, so open every time.
     */
    bool keep = !tr_fsroot ()[0];

    if (size == 0) {
        errno = EINVAL;
        return -1;
    }
    if (!keep)
        tr_kept_close (k);
    if (k->fd < 0) {
        char rel[PATH_MAX], full[PATH_MAX];
        if (k->err) {
            errno = k->err;
            return -1;
        }
        if ((dir ? snprintf (rel, sizeof (rel), "%s/%s", dir, file)
                 : snprintf (rel, sizeof (rel), "%s", file))
                >= (int)sizeof (rel)
            || tr_fsroot_path (full, sizeof (full), rel) < 0) {
            k->err = errno = ENAMETOOLONG;
            return -1;
        }
        if (kept_max >= 0 && kept_open >= kept_max)
            keep = false;
        if ((k->fd = open (full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
            if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP
                || errno == ESRCH)
                k->err = errno;
            return -1;
        }
        kept_open++;
    }
    if ((n = tr_fsroot_read_fd (k->fd, buf, size)) < 0) {
        int saved = errno;
        close (k->fd);
        k->fd = -1;
        kept_open--;
        if (saved == ENODEV || saved == ESRCH || saved == ENOENT)
            k->err = saved;
        errno = saved;
        return -1;
    }
    if (!keep)
        tr_kept_close (k);
    return n;
}

void tr_kept_close (struct tr_kept *k)
{
    if (k->fd >= 0) {
        int saved = errno;
        close (k->fd);
        errno = saved;
        kept_open--;
    }
    k->fd = -1;
    k->err = 0;
}
