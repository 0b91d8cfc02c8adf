/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The parsers of kernel text: /proc/PID/cgroup, cgroup "key value" and
 * single-number files, PSI, io.stat and blkio, /proc/PID/io and
 * /proc/PID/net/dev.  The kernel writes them, but a process can name
 * itself (comm, cgroup names made by delegated users) and formats change
 * between kernel versions, so they get hostile text here.  The first
 * input byte picks the parser; the rest, NUL-terminated, is the text
 * (for blkio, the text up to its first NUL is io_service_bytes and the
 * rest io_serviced).  Beyond the sanitizers: a parser that fails leaves
 * its output as it was, and a result stays within its documented
 * bounds.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "libtracer/node/cgroup.h"
#include "libtracer/util/error.h"
#include "libtracer/node/iostat.h"
#include "libtracer/node/netstat.h"
#include "libtracer/node/psi.h"
#include "fuzz.h"

enum parser {
    P_CGROUP,
    P_U64,
    P_KEY,
    P_KEYS,
    P_PSI,
    P_IOSTAT_V2,
    P_IOSTAT_V1,
    P_IOSTAT_PROC,
    P_NETSTAT_DEV,
    P_COUNT,
};

/* What a failed parse must leave in its output. */
#define POISON 0x5a

static void *poisoned (size_t size)
{
    void *p = malloc (size);

    if (p)
        memset (p, POISON, size);
    return p;
}

static bool is_poisoned (const void *p, size_t size)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < size; i++)
        if (b[i] != POISON)
            return false;
    return true;
}

static bool terminated (const char *s, size_t size)
{
    return memchr (s, '\0', size) != NULL;
}

static void fuzz_cgroup (const char *text)
{
    struct tr_cgroup_paths *out;
    tr_error_t err;

    if (!(out = malloc (sizeof (*out))))
        return;
    for (int strip = 0; strip < 2; strip++) {
        memset (&err, 0, sizeof (err));
        if (tr_cgroup_parse (text, strip, out, &err) < 0) {
            if (err.text[0] == '\0')
                abort ();
            continue;
        }
        if (!terminated (out->memory, sizeof (out->memory))
            || !terminated (out->cpuacct, sizeof (out->cpuacct))
            || !terminated (out->unified, sizeof (out->unified)))
            abort ();
    }
    free (out);
}

static void fuzz_keys (const char *text)
{
    static const char *const keys[] = {
        "usage_usec",
        "user_usec",
        "system_usec",
        "nr_periods",
        "nr_throttled",
        "throttled_usec",
        "anon",
        "file",
        "pgmajfault",
        "total_rss",
        "",
    };
    const size_t n = sizeof (keys) / sizeof (keys[0]);
    int64_t values[sizeof (keys) / sizeof (keys[0])];
    int found;

    for (size_t i = 0; i < n; i++)
        values[i] = -1;
    if ((found = tr_cgroup_parse_keys (text, keys, values, n)) < 0)
        abort ();
    for (size_t i = 0; i < n; i++)
        if (values[i] < -1)
            abort ();
}

static void fuzz_key (const char *text)
{
    static const char *const keys[] = { "usage_usec", "total_rss", "" };
    uint64_t v;

    for (size_t i = 0; i < sizeof (keys) / sizeof (keys[0]); i++)
        (void)tr_cgroup_parse_key (text, keys[i], &v);
}

static void fuzz_psi (const char *text)
{
    struct tr_psi *out, delta[3];
    json_t *j;

    if (!(out = poisoned (sizeof (*out))))
        return;
    if (tr_psi_parse (text, out) < 0) {
        if (!is_poisoned (out, sizeof (*out)))
            abort ();
        free (out);
        return;
    }
    memset (delta, 0, sizeof (delta));
    tr_psi_delta (&delta[1], out, &delta[0]);
    tr_psi_delta (out, &delta[1], &delta[2]);
    if (!(j = tr_psi_json ("cgroup2", true, delta)))
        abort ();
    json_decref (j);
    free (out);
}

static void iostat_use (const struct tr_iostat *io)
{
    uint64_t r, w;
    json_t *j;

    if (io->count > TR_IOSTAT_MAX_DEVICES)
        abort ();
    tr_iostat_totals (io, &r, &w);
    if (!(j = tr_iostat_json ("cgroup2", NULL, io, NULL, NULL, false)))
        abort ();
    json_decref (j);
}

static void fuzz_iostat_v2 (const char *text)
{
    struct tr_iostat *out;

    if (!(out = poisoned (sizeof (*out))))
        return;
    if (tr_iostat_parse_v2 (text, out) < 0) {
        if (!is_poisoned (out, sizeof (*out)))
            abort ();
    }
    else
        iostat_use (out);
    free (out);
}

static void fuzz_iostat_v1 (const char *text, size_t len)
{
    const char *nul = memchr (text, '\0', len);
    const char *ops = nul && nul < text + len ? nul + 1 : NULL;
    struct tr_iostat *out;

    if (!(out = poisoned (sizeof (*out))))
        return;
    if (tr_iostat_parse_v1 (text, ops, out) < 0) {
        if (!is_poisoned (out, sizeof (*out)))
            abort ();
    }
    else
        iostat_use (out);
    free (out);
}

static void fuzz_iostat_proc (const char *text)
{
    struct tr_proc_io *out;
    json_t *j;

    if (!(out = poisoned (sizeof (*out))))
        return;
    if (tr_iostat_parse_proc (text, out) < 0) {
        if (!is_poisoned (out, sizeof (*out)))
            abort ();
        free (out);
        return;
    }
    if (!(j = tr_iostat_json ("none", NULL, NULL, out, "proc", false)))
        abort ();
    json_decref (j);
    free (out);
}

static void fuzz_netstat (const char *text)
{
    struct tr_netstat *out, *before;
    uint64_t rx, tx;
    json_t *j;

    if (!(out = poisoned (sizeof (*out)))
        || !(before = malloc (sizeof (*out)))) {
        free (out);
        return;
    }
    out->nib = 0; /* the IB part is not the parser's */
    memcpy (before, out, sizeof (*out));
    if (tr_netstat_parse_dev (text, out) < 0) {
        if (memcmp (out, before, sizeof (*out)) != 0)
            abort ();
        goto done;
    }
    if (out->nib != 0 || memcmp (out->ib, before->ib, sizeof (out->ib)) != 0
        || out->niface > TR_NETSTAT_MAX_IFACES)
        abort ();
    for (size_t i = 0; i < out->niface; i++)
        if (!terminated (out->iface[i].name, sizeof (out->iface[i].name))
            || out->iface[i].name[0] == '\0')
            abort ();
    tr_netstat_totals (out, true, &rx, &tx);
    if (!(j = tr_netstat_json (TR_NETSTAT_SCOPE_NODE, NULL, out)))
        abort ();
    json_decref (j);
done:
    free (before);
    free (out);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    enum parser which;
    size_t len;
    uint64_t v;
    char *text;

    if (size < 1 || size > FUZZ_MAX_LEN)
        return 0;
    which = (enum parser) (data[0] % P_COUNT);
    len = size - 1;
    if (!(text = malloc (len + 1)))
        return 0;
    memcpy (text, data + 1, len);
    text[len] = '\0';
    switch (which) {
    case P_CGROUP:
        fuzz_cgroup (text);
        break;
    case P_U64:
        (void)tr_cgroup_parse_u64 (text, &v);
        break;
    case P_KEY:
        fuzz_key (text);
        break;
    case P_KEYS:
        fuzz_keys (text);
        break;
    case P_PSI:
        fuzz_psi (text);
        break;
    case P_IOSTAT_V2:
        fuzz_iostat_v2 (text);
        break;
    case P_IOSTAT_V1:
        fuzz_iostat_v1 (text, len);
        break;
    case P_IOSTAT_PROC:
        fuzz_iostat_proc (text);
        break;
    case P_NETSTAT_DEV:
        fuzz_netstat (text);
        break;
    case P_COUNT:
        break;
    }
    free (text);
    return 0;
}
