/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_FSROOT_H
#define TRACER_FSROOT_H

#include <stddef.h>
#include <stdint.h>

/* All kernel file access (/proc, /sys) goes through this layer so that
 * fixture trees can stand in for the real ones: with TRACER_FSROOT=/dir,
 * "/proc/1/cgroup" is read from "/dir/proc/1/cgroup" (like HWLOC_FSROOT).
 */

/* The prefix ("" for the real system).  Borrowed. */
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

#endif /* !TRACER_FSROOT_H */
