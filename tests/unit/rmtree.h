/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Removal of a test's scratch tree (fixture roots, temporary stores).
 */
#ifndef TRACER_TEST_RMTREE_H
#define TRACER_TEST_RMTREE_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int rmtree_entry (const char *path,
                         const struct stat *st,
                         int flag,
                         struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove (path);
}

/* Remove dir and everything below it, depth first, following no link;
 * nftw's result.
 */
static inline int rmtree (const char *dir)
{
    return nftw (dir, rmtree_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* !TRACER_TEST_RMTREE_H */
