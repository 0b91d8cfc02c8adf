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

#include "cgroup.h"
#include "libtracer/conf/conf.h"
#include "libtracer/util/fsroot.h"
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

json_t *tr_psi_delay_json_known (bool exact,
                                 const uint64_t delay_ns[3],
                                 unsigned known)
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
        if (!(known & (1u << i)))
            continue;
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

json_t *tr_psi_delay_json (bool exact, const uint64_t delay_ns[3])
{
    return tr_psi_delay_json_known (exact, delay_ns, 7u);
}

int tr_psi_set_unknown (json_t *summary, unsigned known, const char *reason)
{
    json_t *list;
    int i;

    if (!json_is_object (summary)) {
        errno = EINVAL;
        return -1;
    }
    if ((known & 7u) == 7u)
        return 0;
    if (!(list = json_array ())
        || json_object_set_new (summary, "x_pressure_unknown", list) < 0)
        goto nomem;
    for (i = 0; i < TR_PSI_NRES; i++)
        if (!(known & (1u << i))
            && json_array_append_new (list, json_string (resource_names[i]))
                   < 0)
            goto nomem;
    if (reason
        && json_object_set_new (summary, "x_pressure_reason",
                                json_string (reason))
               < 0)
        goto nomem;
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

int tr_delayacct_state (void)
{
    char *text = tr_fsroot_read_text (TR_DELAYACCT_SYSCTL, 64);
    int on;

    if (!text)
        return -1;
    if (text[0] == '0' || text[0] == '1')
        on = text[0] == '1';
    else {
        errno = EINVAL;
        on = -1;
    }
    free (text);
    return on;
}

int tr_delayacct_enable (tr_error_t *error)
{
    char path[PATH_MAX];
    int state = tr_delayacct_state ();
    int fd;

    if (state == 1)
        return 0;
    if (state < 0)
        return tr_errprintf (error, "kernel.task_delayacct: %s",
                             strerror (errno));
    if (tr_fsroot_path (path, sizeof (path), TR_DELAYACCT_SYSCTL) < 0)
        return tr_errprintf (error, "kernel.task_delayacct: %s",
                             strerror (errno));
    if ((fd = open (path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return tr_errprintf (error, "cannot set kernel.task_delayacct: %s",
                             strerror (errno));
    if (write (fd, "1\n", 2) != 2) {
        int err = errno;
        close (fd);
        errno = err;
        return tr_errprintf (error, "cannot set kernel.task_delayacct: %s",
                             strerror (errno));
    }
    if (close (fd) < 0)
        return tr_errprintf (error, "cannot set kernel.task_delayacct: %s",
                             strerror (errno));
    return 1;
}

bool tr_delayacct_wanted (int delayacct, int layout, int psi_mirror)
{
    if (delayacct == TR_DELAYACCT_ON)
        return true;
    if (delayacct != TR_DELAYACCT_AUTO)
        return false;
    return layout == TR_CGROUP_V1
           || (layout == TR_CGROUP_HYBRID && psi_mirror == TR_PSI_MIRROR_OFF);
}

int tr_stall_describe (int delayacct, int psi_mirror, bool taskstats,
                       tr_strbuf_t *out)
{
    enum tr_cgroup_layout layout = tr_cgroup_host_layout ();
    int state = tr_delayacct_state ();
    int err = errno;
    const char *why;
    int rc;

    if (tr_strbuf_printf (out, "cgroups: %s\n", tr_cgroup_layout_name (layout))
        < 0)
        return -1;
    if (layout == TR_CGROUP_V2)
        rc = tr_strbuf_puts (out, "stall: CPU, memory and I/O pressure (PSI) "
                                  "of each step's own cgroup2 directory\n");
    else if (layout == TR_CGROUP_HYBRID && psi_mirror != TR_PSI_MIRROR_OFF)
        rc = tr_strbuf_puts (out, "stall: CPU, memory and I/O pressure (PSI) "
                                  "of a cgroup2 directory tracer makes for "
                                  "each step (sampling.psi_mirror)\n");
    else
        rc = 1;
    if (rc < 0)
        return -1;
    if (rc == 0)
        return 0;

    /* No per-step PSI: the stall is per-task delay accounting or nothing */
    why = layout == TR_CGROUP_V1     ? "a cgroup v1 host"
          : layout == TR_CGROUP_NONE ? "no cgroup hierarchy mounted"
                                     : "a hybrid host with "
                                       "sampling.psi_mirror: false";
    if (!taskstats) {
        if (tr_strbuf_printf (out,
                              "stall: unknown: no per-step pressure (%s) "
                              "and no exit records (sampling.taskstats: "
                              "false): CPU, memory and I/O stall cannot be "
                              "measured\n",
                              why)
            < 0)
            return -1;
        return 3;
    }
    if (state == 1 || (state < 0 && err == ENOENT)) {
        if (tr_strbuf_printf (out,
                              "stall: CPU run-queue, memory and I/O delay "
                              "of the step's processes from per-task delay "
                              "accounting (%s); no per-step pressure (%s)\n",
                              state == 1 ? "kernel.task_delayacct = 1"
                                         : "a kernel before 5.14, where it "
                                           "is on unless booted with "
                                           "nodelayacct",
                              why)
            < 0)
            return -1;
        return 0;
    }
    if (state == 0 && tr_delayacct_wanted (delayacct, layout, psi_mirror)) {
        if (tr_strbuf_printf (out,
                              "stall: delay accounting is off "
                              "(kernel.task_delayacct = 0): tracerd turns "
                              "it on at start (sampling.delayacct: %s) for "
                              "the memory and I/O delay of the step's "
                              "processes; no per-step pressure (%s)\n",
                              delayacct == TR_DELAYACCT_ON ? "on" : "auto",
                              why)
            < 0)
            return -1;
        return 0;
    }
    if (tr_strbuf_printf (out,
                          "stall: memory and I/O stall unknown: no per-step "
                          "pressure (%s) and %s; CPU run-queue delay from "
                          "taskstats only\n",
                          why,
                          state == 0 ? "delay accounting is off "
                                       "(kernel.task_delayacct = 0, "
                                       "sampling.delayacct: off)"
                                     : "the state of delay accounting "
                                       "cannot be read")
        < 0)
        return -1;
    return 2;
}
