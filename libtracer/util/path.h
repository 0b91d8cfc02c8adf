/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_PATH_H
#define TRACER_PATH_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Is 'path' secure for root to trust: every component from / down is
 * owned by root (or 'owner') and not writable by group or other unless
 * the sticky bit is set, with no symlink in the final component.
 * Returns 1 secure, 0 insecure (error says which component and why),
 * -1 on a lookup failure with errno set.  (After MUNGE path_is_secure.)
 */
int tr_path_is_secure (const char *path, uid_t owner, tr_error_t *error);

/* Create directory 'path' and missing parents with 'mode', never
 * following symlinks for any component that already exists (each is
 * opened with O_DIRECTORY|O_NOFOLLOW).  An existing directory is fine.
 * Returns an O_DIRECTORY fd for the final directory (caller closes), or
 * -1 with errno.
 * Directories created get exactly 'mode' (fchmod, whatever the umask);
 * existing ones keep theirs.  A component that is a symlink or not a
 * directory fails with ELOOP or ENOTDIR, and the message names it.  Note
 * that an absolute path is checked from "/", so a symlink anywhere in it
 * (such as /var/run -> /run) is refused.
 */
int tr_path_mkdir_p (const char *path, mode_t mode, tr_error_t *error);

/* Open a log file to append to: open (path, O_WRONLY | O_APPEND | O_CREAT
 * | O_NOFOLLOW | O_CLOEXEC, mode), and when its directory is missing,
 * make it and its missing parents (0755, as tr_path_mkdir_p) first: a
 * default such as /usr/local/var/log/tracer/... may have none of them.
 * Returns the fd, or -1 with errno and error naming what failed.
 */
int tr_path_open_log (const char *path, mode_t mode, tr_error_t *error);

/* As tr_path_mkdir_p, relative to dirfd (AT_FDCWD allowed).  A ".."
 * component is refused with EINVAL before anything is created.
 */
int tr_path_mkdirat_p (int dirfd,
                       const char *relpath,
                       mode_t mode,
                       tr_error_t *error);

/* Write len bytes to dirfd/name atomically: a temporary file in the same
 * directory (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), full write, fchown
 * to (uid, gid) unless -1, fchmod to mode, fsync, rename over name,
 * fsync of the directory.  On any failure the temporary is removed and
 * the previous content of name (if any) is untouched.
 * Returns 0 or -1 with errno (ENOSPC, EROFS, EDQUOT, ... preserved).
 * name must be one path component (else EINVAL).  The temporary is
 * ".<name>.tmp.<pid>.<random hex>": readers skip names starting with '.'.
 * A symlink already at name is replaced, never written through.  If only
 * the final fsync of the directory fails, -1 is returned although the
 * new content is in place; writing again is harmless.
 */
int tr_path_write_atomic (int dirfd,
                          const char *name,
                          const void *buf,
                          size_t len,
                          mode_t mode,
                          uid_t uid,
                          gid_t gid,
                          tr_error_t *error);

/* tr_path_write_atomic without the two fsyncs: readers still see the old
 * content or the new, never a part, but a power loss may leave the old.
 * For files rewritten every few seconds whose loss costs only freshness
 * (tracerd's step state and live snapshots), where two journal commits
 * per write would cost more than the write.
 */
int tr_path_replace (int dirfd,
                     const char *name,
                     const void *buf,
                     size_t len,
                     mode_t mode,
                     uid_t uid,
                     gid_t gid,
                     tr_error_t *error);

/* Read a whole regular file (opened O_NOFOLLOW) of at most max bytes.
 * Returns a NUL-terminated buffer the caller must free(), with *lenp set;
 * NULL with errno (EFBIG when larger than max, ELOOP for a symlink).
 * The open is non-blocking, so a FIFO fails at once: EINVAL for anything
 * not a regular file, EISDIR for a directory.  Only the final component
 * of path is protected by O_NOFOLLOW.
 */
char *tr_path_read_file (int dirfd,
                         const char *path,
                         size_t max,
                         size_t *lenp,
                         tr_error_t *error);

#endif /* !TRACER_PATH_H */
