/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Safe file-system primitives for code that runs as root and writes to
 * directories other users can reach (the node spool, a shared NFS or
 * Lustre store).  Every lookup below a trusted directory fd goes through
 * *at() calls with O_NOFOLLOW, so a symlink planted by a user is refused
 * rather than followed.  Files are written to a temporary name and renamed
 * into place, so readers never see a partial file; errors that NFS only
 * reports at close() are checked.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "path.h"

/* Attempts at a fresh temporary name before giving up; a clash needs a
 * stale file with the same pid and 64 random bits, so this is generous.
 */
enum { TMPNAME_TRIES = 8 };

/* Cleanup that keeps errno, for error paths. */
static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

static void free_keep_errno (void *p)
{
    int saved = errno;
    free (p);
    errno = saved;
}

/* Name of the directory behind dirfd, for error messages only: the
 * answer is never used to open anything.  Keeps errno, since it is
 * called while reporting one.
 */
static const char *dir_name (int dirfd, char *buf, size_t size)
{
    char link[64];
    ssize_t n;
    int saved = errno;

    if (dirfd == AT_FDCWD)
        return ".";
    snprintf (link, sizeof (link), "/proc/self/fd/%d", dirfd);
    n = readlink (link, buf, size - 1);
    errno = saved;
    if (n < 0)
        return "?";
    buf[n] = '\0';
    return buf;
}

/* Check one already-resolved path component.  Returns 1 or 0. */
static int check_component (const char *path,
                            const struct stat *st,
                            uid_t owner,
                            tr_error_t *error)
{
    if (S_ISLNK (st->st_mode)) {
        tr_errprintf (error, "%s: is a symbolic link", path);
        return 0;
    }
    if (st->st_uid != 0 && st->st_uid != owner) {
        if (owner == 0 || owner == (uid_t)-1)
            tr_errprintf (error, "%s: owned by uid %lu, not root", path,
                          (unsigned long)st->st_uid);
        else
            tr_errprintf (error, "%s: owned by uid %lu, not root or %lu", path,
                          (unsigned long)st->st_uid, (unsigned long)owner);
        return 0;
    }
    /* The sticky bit makes a shared directory (/tmp) safe: others may
     * create entries but not rename or remove ours.  It means nothing on
     * a regular file.
     */
    if ((st->st_mode & (S_IWGRP | S_IWOTH))
        && !(S_ISDIR (st->st_mode) && (st->st_mode & S_ISVTX))) {
        tr_errprintf (error, "%s: writable by %s", path,
                      (st->st_mode & S_IWOTH) ? "others" : "group");
        return 0;
    }
    return 1;
}

static int check_one (const char *path, uid_t owner, tr_error_t *error)
{
    struct stat st;

    if (lstat (path, &st) < 0)
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    return check_component (path, &st, owner, error);
}

int tr_path_is_secure (const char *path, uid_t owner, tr_error_t *error)
{
    char *real;
    struct stat st;
    int rc;

    if (!path || *path == '\0') {
        errno = EINVAL;
        return tr_errprintf (error, "empty path");
    }
    /* realpath() below would silently follow a symlinked final
     * component; report it against the name the caller gave.
     */
    if (lstat (path, &st) < 0)
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    if (S_ISLNK (st.st_mode)) {
        tr_errprintf (error, "%s: is a symbolic link", path);
        return 0;
    }
    if (!(real = realpath (path, NULL)))
        return tr_errprintf (error, "%s: %s", path, strerror (errno));

    /* Check "/", then each prefix ending before a '/', then the whole
     * path, by cutting the string in place.  realpath() leaves no "." or
     * ".." and no trailing '/'.
     */
    rc = check_one ("/", owner, error);
    for (char *p = real + 1; rc == 1 && *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        rc = check_one (real, owner, error);
        *p = '/';
    }
    if (rc == 1 && real[1] != '\0')
        rc = check_one (real, owner, error);
    free_keep_errno (real);
    return rc;
}

/* Open one directory component without following a symlink, creating
 * it with 'mode' if missing.  An existing directory keeps its mode.
 */
static int open_or_create (int dirfd, const char *name, mode_t mode)
{
    const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

    for (int tries = 0; tries < 16; tries++) {
        int fd = openat (dirfd, name, flags);
        if (fd >= 0)
            return fd;
        if (errno != ENOENT)
            return -1;
        /* Created private first and opened again with O_NOFOLLOW: the
         * final mode comes from fchmod() on the fd we hold, so the umask
         * cannot widen or narrow it.
         */
        if (mkdirat (dirfd, name, 0700) == 0) {
            fd = openat (dirfd, name, flags);
            if (fd < 0)
                return -1;
            if (fchmod (fd, mode) < 0) {
                close_keep_errno (fd);
                return -1;
            }
            return fd;
        }
        /* EEXIST: another writer won the race; open theirs. */
        if (errno != EEXIST)
            return -1;
    }
    errno = ELOOP;
    return -1;
}

static const char *mkdir_why (int errnum)
{
    if (errnum == ELOOP || errnum == ENOTDIR)
        return "is a symbolic link or not a directory";
    return strerror (errnum);
}

int tr_path_mkdirat_p (int dirfd,
                       const char *relpath,
                       mode_t mode,
                       tr_error_t *error)
{
    char comp[NAME_MAX + 1];
    char dbuf[PATH_MAX];
    const char *p = relpath;
    int cur;

    if (!relpath) {
        errno = EINVAL;
        return tr_errprintf (error, "mkdir: no path");
    }
    /* Refuse a bad path before creating anything, so a failure has no
     * side effect: ".." would climb out of the directory the caller
     * trusts.
     */
    for (const char *q = relpath; *q;) {
        size_t n = strcspn (q, "/");
        if (n >= sizeof (comp)) {
            errno = ENAMETOOLONG;
            return tr_errprintf (error, "mkdir %s: %s", relpath,
                                 strerror (errno));
        }
        if (n == 2 && q[0] == '.' && q[1] == '.') {
            errno = EINVAL;
            return tr_errprintf (error, "mkdir %s: '..' not allowed", relpath);
        }
        q += n + (q[n] == '/');
    }
    cur = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return tr_errprintf (error, "mkdir %s: %s",
                             dir_name (dirfd, dbuf, sizeof (dbuf)),
                             strerror (errno));
    while (*p) {
        size_t n = strcspn (p, "/");
        int next;

        if (n == 0 || (n == 1 && p[0] == '.')) {
            p += n + (p[n] == '/');
            continue;
        }
        memcpy (comp, p, n);
        comp[n] = '\0';
        next = open_or_create (cur, comp, mode);
        close_keep_errno (cur);
        if (next < 0) {
            /* Name the path up to and including the failing component. */
            int upto = (int)(p - relpath + n);
            const char *dname = dir_name (dirfd, dbuf, sizeof (dbuf));
            return tr_errprintf (error, "mkdir %s%s%.*s: %s", dname,
                                 strcmp (dname, "/") == 0 ? "" : "/", upto,
                                 relpath, mkdir_why (errno));
        }
        cur = next;
        p += n + (p[n] == '/');
    }
    return cur;
}

int tr_path_open_log (const char *path, mode_t mode, tr_error_t *error)
{
    int flags = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
    const char *slash;
    char dir[PATH_MAX];
    int fd, dfd;

    if (!path || !*path) {
        errno = EINVAL;
        return tr_errprintf (error, "empty log path");
    }
    if ((fd = open (path, flags, mode)) >= 0)
        return fd;
    if (errno != ENOENT || !(slash = strrchr (path, '/')) || slash == path
        || (size_t)(slash - path) >= sizeof (dir))
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    snprintf (dir, sizeof (dir), "%.*s", (int)(slash - path), path);
    /* the last directory alone first: its parents may be reached through
     * a symlink (/var/run) that tr_path_mkdir_p would refuse
     */
    if (mkdir (dir, 0755) < 0 && errno != EEXIST) {
        if (errno != ENOENT || (dfd = tr_path_mkdir_p (dir, 0755, error)) < 0)
            return tr_errprintf (error, "cannot make %s: %s", dir,
                                 strerror (errno));
        close (dfd);
    }
    if ((fd = open (path, flags, mode)) < 0)
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    return fd;
}

int tr_path_mkdir_p (const char *path, mode_t mode, tr_error_t *error)
{
    int base;
    int fd;

    if (!path || *path == '\0') {
        errno = EINVAL;
        return tr_errprintf (error, "mkdir: empty path");
    }
    if (path[0] != '/')
        return tr_path_mkdirat_p (AT_FDCWD, path, mode, error);
    if ((base = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return tr_errprintf (error, "open /: %s", strerror (errno));
    fd = tr_path_mkdirat_p (base, path + 1, mode, error);
    close_keep_errno (base);
    return fd;
}

static void unlink_keep_errno (int dirfd, const char *name)
{
    int saved = errno;
    unlinkat (dirfd, name, 0);
    errno = saved;
}

/* A single path component that may be created in a directory. */
static bool name_is_plain (const char *name)
{
    return name && *name && !strchr (name, '/') && strcmp (name, ".") != 0
           && strcmp (name, "..") != 0;
}

static int write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write (fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Create and open a fresh temporary file next to 'name'. */
static int open_temp (int dirfd, const char *name, char *tmp, size_t size)
{
    for (int tries = 0; tries < TMPNAME_TRIES; tries++) {
        uint64_t r;
        int n;
        int fd;

        /* getrandom() cannot block for 8 bytes once the pool is up; if it
         * fails anyway the pid and clock still make the name unique
         * enough, since O_EXCL refuses any clash.
         */
        if (getrandom (&r, sizeof (r), GRND_NONBLOCK) != (ssize_t)sizeof (r)) {
            struct timespec ts;
            clock_gettime (CLOCK_MONOTONIC, &ts);
            r = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec
                ^ (uint64_t)tries;
        }
        n = snprintf (tmp, size, ".%s.tmp.%ld.%016llx", name, (long)getpid (),
                      (unsigned long long)r);
        if (n < 0 || (size_t)n >= size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fd =
            openat (dirfd, tmp,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

static int write_replace (int dirfd,
                          const char *name,
                          const void *buf,
                          size_t len,
                          mode_t mode,
                          uid_t uid,
                          gid_t gid,
                          bool durable,
                          tr_error_t *error)
{
    char tmp[NAME_MAX + 1];
    char dbuf[PATH_MAX];
    const char *step;
    int fd;
    int dfd;

    if (!name_is_plain (name) || (!buf && len > 0)) {
        errno = EINVAL;
        return tr_errprintf (error, "write %s/%s: invalid file name",
                             dir_name (dirfd, dbuf, sizeof (dbuf)),
                             name ? name : "(null)");
    }
    if ((fd = open_temp (dirfd, name, tmp, sizeof (tmp))) < 0) {
        return tr_errprintf (error, "create temporary for %s/%s: %s",
                             dir_name (dirfd, dbuf, sizeof (dbuf)), name,
                             strerror (errno));
    }
    step = "write";
    if (write_all (fd, buf, len) < 0)
        goto error_close;
    /* chown before chmod: chown clears set-id bits, and the mode we
     * apply must be the last word.
     */
    step = "chown";
    if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown (fd, uid, gid) < 0)
        goto error_close;
    step = "chmod";
    if (fchmod (fd, mode) < 0)
        goto error_close;
    step = "fsync";
    if (durable && fsync (fd) < 0)
        goto error_close;
    /* NFS may report a failed write-back (ENOSPC, EDQUOT) only here.  The
     * fd is gone either way, so no retry on EINTR.
     */
    step = "close";
    if (close (fd) < 0)
        goto error_unlink;
    step = "rename";
    if (renameat (dirfd, tmp, dirfd, name) < 0)
        goto error_unlink;
    if (!durable)
        return 0;

    /* The rename is durable only once the directory itself is synced. */
    dfd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || (fsync (dfd) < 0 && errno != EINVAL)) {
        close_keep_errno (dfd);
        return tr_errprintf (error, "fsync %s: %s",
                             dir_name (dirfd, dbuf, sizeof (dbuf)),
                             strerror (errno));
    }
    close (dfd);
    return 0;

error_close:
    close_keep_errno (fd);
error_unlink:
    unlink_keep_errno (dirfd, tmp);
    return tr_errprintf (error, "%s %s/%s: %s", step,
                         dir_name (dirfd, dbuf, sizeof (dbuf)), name,
                         strerror (errno));
}

int tr_path_write_atomic (int dirfd,
                          const char *name,
                          const void *buf,
                          size_t len,
                          mode_t mode,
                          uid_t uid,
                          gid_t gid,
                          tr_error_t *error)
{
    return write_replace (dirfd, name, buf, len, mode, uid, gid, true, error);
}

int tr_path_replace (int dirfd,
                     const char *name,
                     const void *buf,
                     size_t len,
                     mode_t mode,
                     uid_t uid,
                     gid_t gid,
                     tr_error_t *error)
{
    return write_replace (dirfd, name, buf, len, mode, uid, gid, false, error);
}

char *tr_path_read_file (int dirfd,
                         const char *path,
                         size_t max,
                         size_t *lenp,
                         tr_error_t *error)
{
    struct stat st;
    char *buf = NULL;
    size_t cap;
    size_t len = 0;
    int fd;

    if (!path || *path == '\0' || max >= SIZE_MAX - 1) {
        errno = EINVAL;
        tr_errprintf (error, "read: invalid argument");
        return NULL;
    }
    /* O_NONBLOCK so that a FIFO planted at the path cannot hang us in
     * open(); the S_ISREG check below then refuses it.
     */
    fd = openat (dirfd, path,
                 O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        tr_errprintf (error, "open %s: %s", path, strerror (errno));
        return NULL;
    }
    if (fstat (fd, &st) < 0) {
        tr_errprintf (error, "stat %s: %s", path, strerror (errno));
        goto error;
    }
    if (!S_ISREG (st.st_mode)) {
        errno = S_ISDIR (st.st_mode) ? EISDIR : EINVAL;
        tr_errprintf (error, "%s: not a regular file", path);
        goto error;
    }
    if (st.st_size < 0 || (uintmax_t)st.st_size > max) {
        errno = EFBIG;
        tr_errprintf (error, "%s: larger than %zu bytes", path, max);
        goto error;
    }
    /* st_size is only a hint (the file may grow, /proc reports 0): read
     * until EOF, but never past max.
     */
    cap = (size_t)st.st_size + 1;
    if (cap < 4096)
        cap = max + 1 < 4096 ? max + 1 : 4096;
    if (!(buf = malloc (cap + 1))) {
        tr_errprintf (error, "%s: out of memory", path);
        goto error;
    }
    for (;;) {
        ssize_t n;

        if (len == cap) {
            size_t ncap;
            char *nbuf;
            if (len > max) {
                errno = EFBIG;
                tr_errprintf (error, "%s: larger than %zu bytes", path, max);
                goto error;
            }
            ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            if (!(nbuf = realloc (buf, ncap + 1))) {
                tr_errprintf (error, "%s: out of memory", path);
                goto error;
            }
            buf = nbuf;
            cap = ncap;
        }
        n = read (fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            tr_errprintf (error, "read %s: %s", path, strerror (errno));
            goto error;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close (fd);
    buf[len] = '\0';
    if (lenp)
        *lenp = len;
    return buf;
error:
    free_keep_errno (buf);
    close_keep_errno (fd);
    return NULL;
}
