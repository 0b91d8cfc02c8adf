/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The fsroot layer: every read of /proc and /sys goes through a prefix so
 * that fixture trees of cgroup v1, v2 and hybrid hosts can be tested on a
 * machine that shows only one layout (after hwloc's HWLOC_FSROOT).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fsroot.h"

static const char *override;
static int overridden;

const char *tr_fsroot (void)
{
    const char *s;

    if (overridden)
        return override ? override : "";
    s = getenv ("TRACER_FSROOT");
    return s ? s : "";
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
