/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Pressure stall information (kernel Documentation/accounting/psi.rst).
 * Only the cumulative total= counters are used: the avg10/60/300 values
 * are decaying averages that cannot be summed over a step.  A cgroup2
 * directory has cpu/memory/io.pressure even without controllers, which is
 * how a v1-hybrid node gets per-job PSI (the unified mirror); kernels
 * before 5.13 print no "full" line for cpu.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "fsroot.h"
#include "psi.h"

/* A PSI file is two short lines; anything near this size is not one. */
#define PSI_MAX_BYTES 4096

static const char *const resource_names[TR_PSI_NRES] = {
    "cpu",
    "memory",
    "io",
};


/* Find total=N among the blank-separated fields of one line (without
 * its newline).  The other fields are whatever the kernel adds.
 */
static int parse_line_total (const char *p, const char *end, uint64_t *total)
{
    bool found = false;

    while (p < end) {
        const char *tok;

        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        tok = p;
        while (p < end && *p != ' ' && *p != '\t')
            p++;
        if (p - tok >= 6 && !strncmp (tok, "total=", 6)) {
            if (found) {
                errno = EINVAL;
                return -1;
            }
            if (tr_parse_u64 (tok + 6, (size_t)(p - tok - 6), total) < 0)
                return -1;
            found = true;
        }
    }
    if (!found) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int tr_psi_parse (const char *text, struct tr_psi *out)
{
    struct tr_psi r = { 0 };
    bool have_some = false;
    const char *p = text;

    if (!text || !out) {
        errno = EINVAL;
        return -1;
    }
    while (*p) {
        const char *nl = strchr (p, '\n');
        const char *end = nl ? nl : p + strlen (p);

        if (end - p >= 5 && !strncmp (p, "some ", 5)) {
            if (have_some)
                goto invalid;
            if (parse_line_total (p + 5, end, &r.some_us) < 0)
                return -1;
            have_some = true;
        }
        else if (end - p >= 5 && !strncmp (p, "full ", 5)) {
            if (r.have_full)
                goto invalid;
            if (parse_line_total (p + 5, end, &r.full_us) < 0)
                return -1;
            r.have_full = true;
        }
        p = nl ? nl + 1 : end;
    }
    if (!have_some)
        goto invalid;
    *out = r;
    return 0;
invalid:
    errno = EINVAL;
    return -1;
}

int tr_psi_read (const char *dir, const char *file, struct tr_psi *out)
{
    char path[PATH_MAX];
    char *text;
    int rc, n, saved;

    if (!dir || !file || !out) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (path, sizeof (path), "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof (path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!(text = tr_fsroot_read_text (path, PSI_MAX_BYTES)))
        return -1;
    rc = tr_psi_parse (text, out);
    saved = errno;
    free (text);
    errno = saved;
    return rc;
}

static uint64_t sub_clamped (uint64_t end, uint64_t start)
{
    return end > start ? end - start : 0;
}

void tr_psi_delta (const struct tr_psi *start,
                   const struct tr_psi *end,
                   struct tr_psi *delta)
{
    struct tr_psi d;

    d.some_us = sub_clamped (end->some_us, start->some_us);
    d.have_full = start->have_full && end->have_full;
    d.full_us = d.have_full ? sub_clamped (end->full_us, start->full_us) : 0;
    *delta = d;
}

/* Add key: seconds (a JSON real even when whole) to obj. */
static int set_seconds (json_t *obj, const char *key, uint64_t us, double div)
{
    return json_object_set_new (obj, key, json_real ((double)us / div));
}

/* The common frame: {"source": ..., "exact": ...}. */
static json_t *frame (const char *source, bool exact)
{
    json_t *o;

    if (!(o = json_object ()))
        return NULL;
    if (json_object_set_new (o, "source", json_string (source)) < 0
        || json_object_set_new (o, "exact", json_boolean (exact)) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

json_t *tr_psi_json (const char *source,
                     bool exact,
                     const struct tr_psi delta[3])
{
    json_t *o, *res;
    int i;

    if (!source || !delta) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = frame (source, exact)))
        goto nomem;
    for (i = 0; i < TR_PSI_NRES; i++) {
        if (!(res = json_object ())
            || json_object_set_new (o, resource_names[i], res) < 0)
            goto nomem;
        if (set_seconds (res, "some_s", delta[i].some_us, 1e6) < 0)
            goto nomem;
        if (delta[i].have_full
            && set_seconds (res, "full_s", delta[i].full_us, 1e6) < 0)
            goto nomem;
    }
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}

json_t *tr_psi_delay_json (bool exact, const uint64_t delay_ns[3])
{
    json_t *o, *res;
    int i;

    if (!delay_ns) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = frame ("delayacct", exact)))
        goto nomem;
    for (i = 0; i < TR_PSI_NRES; i++) {
        if (!(res = json_object ())
            || json_object_set_new (o, resource_names[i], res) < 0
            || set_seconds (res, "delay_s", delay_ns[i], 1e9) < 0)
            goto nomem;
    }
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}
