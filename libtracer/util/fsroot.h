/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_FSROOT_H
#define TRACER_FSROOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* All kernel file access (/proc, /sys) goes through this layer so that
 * fixture trees can stand in for the real ones: with TRACER_FSROOT=/dir,
 * "/proc/1/cgroup" is read from "/dir/proc/1/cgroup" (like HWLOC_FSROOT).
 */

/* The prefix ("" for the real system): the override, else
 * $TRACER_FSROOT as it was at the first call.  Borrowed.
 */
const char *tr_fsroot (void);

/* Override the prefix (tests); NULL restores $TRACER_FSROOT. */
void tr_fsroot_set (const char *root);

/* Build fsroot + path into buf.  Returns 0, or -1 with errno =
 * ENAMETOOLONG.
 */
int tr_fsroot_path (char *buf, size_t size, const char *path);

/* Read fsroot + path into a new NUL-terminated buffer, refusing (EFBIG)
 * more than max bytes.  Returns NULL with errno.
 */
char *tr_fsroot_read_text (const char *path, size_t max);

/* Parse exactly len decimal digits of s: no sign, no blanks; EINVAL on
 * anything else, ERANGE past UINT64_MAX.  Returns 0 or -1 with errno.
 */
int tr_parse_u64 (const char *s, size_t len, uint64_t *value);

/* Read a kernel file from its start into buf as NUL-terminated text: at
 * most size - 1 bytes, ending at the short read that ends a /proc,
 * cgroup or sysfs file.  Returns the length, or -1 with errno.
 */
ssize_t tr_fsroot_read_fd (int fd, char *buf, size_t size);

/* A kernel file kept open and reread with pread at offset 0.  cgroup and
 * /proc files regenerate their text on every read, so a kept descriptor
 * sees current values at a third of the cost of open, read and close.
 * A file that the kernel has taken away (its cgroup removed: ENODEV; its
 * process gone: ESRCH) or that does not exist stays failed with that
 * errno until tr_kept_close(); any other failure is retried next time.
 * A descriptor pins a removed cgroup in the kernel: close kept files of
 * a directory as soon as it is no longer followed.  Under a fixture root
 * (tr_fsroot_set, TRACER_FSROOT) every read opens the file afresh, since
 * tests replace fixture files where the kernel would regenerate them.
 */
struct tr_kept {
    int fd;   /* -1: not open */
    int err;  /* the remembered failure, or 0 */
};

#define TR_KEPT_INIT { -1, 0 }

/* Read fsroot + dir + "/" + file (dir may be NULL: file is the whole
 * path) into buf as NUL-terminated text, opening it on first use
 * (O_NOFOLLOW).  Returns the length, or -1 with errno.
 */
ssize_t tr_kept_read (struct tr_kept *k,
                      const char *dir,
                      const char *file,
                      char *buf,
                      size_t size);

/* Close the file and forget any remembered failure. */
void tr_kept_close (struct tr_kept *k);

/* At most max descriptors kept open by all tr_kept together (-1, the
 * default: no limit); beyond it a file is opened for each read.  A
 * daemon following thousands of steps stays within its descriptor
 * limit this way, and its other files (sockets, records) still open.
 */
void tr_kept_limit (long max);

#endif /* !TRACER_FSROOT_H */
