/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The per-process /proc readers of the process table (procs.c: stat,
 * status, io, schedstat and cmdline of every process of a step).  Any
 * job can name its processes and choose their command lines, and tracerd
 * reads them as root.  The readers are static, so they are reached the
 * way the unit tests reach them: through a fixture root (fsroot.h) that
 * holds one fake process, /proc/4242, whose files are the input cut at
 * each 0x1e byte (ASCII record separator), in the order stat, status,
 * io, cmdline, schedstat; a missing part is a missing file.  The root is
 * made once per process under $TMPDIR and removed at exit.  Each input
 * is scanned twice by two tables (default options, and a tiny
 * cmdline_max that cuts inside any multibyte character), and the tool
 * rows they build must pass the record schema: the collector writes
 * them into records that the report refuses otherwise.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/util/fsroot.h"
#include "libtracer/node/procs.h"
#include "libtracer/record/record.h"
#include "fuzz.h"

#define PID 4242
#define SEP 0x1e

/* The fixture clock: booted at 1700000000 (the stat file below) */
#define BOOT_MS 1700000000000LL
#define T1 (BOOT_MS + 100000)
#define T2 (BOOT_MS + 200000)

static const char *const parts[] = {
    "stat", "status", "io", "cmdline", "schedstat",
};
#define NPARTS (sizeof (parts) / sizeof (parts[0]))

static char root[512];
static char piddir[600];

static int path_of (char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf (buf, size, "%s/%s", dir, name);

    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int write_file (const char *path, const void *data, size_t len)
{
    const char *p = data;
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd < 0)
        return -1;
    while (len > 0) {
        ssize_t n = write (fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            close (fd);
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return close (fd);
}

static void cleanup (void)
{
    char path[700];

    for (size_t i = 0; i < NPARTS; i++)
        if (path_of (path, sizeof (path), piddir, parts[i]) == 0)
            (void)unlink (path);
    (void)rmdir (piddir);
    if (path_of (path, sizeof (path), root, "proc/stat") == 0)
        (void)unlink (path);
    if (path_of (path, sizeof (path), root, "proc") == 0)
        (void)rmdir (path);
    (void)rmdir (root);
}

/* The fixture root, made on first use.  Failing to make it is the
 * test machine's problem, not an input's: abort so it is seen.
 */
static void setup (void)
{
    static bool done;
    static const char proc_stat[] = "cpu  10 0 10 100 0 0 0 0 0 0\n"
                                    "btime 1700000000\n"
                                    "processes 1000\n";
    const char *tmp = getenv ("TMPDIR");
    char path[700];
    int n;

    if (done)
        return;
    n = snprintf (root, sizeof (root), "%s/tracer-fuzz-proc.XXXXXX",
                  tmp && *tmp ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof (root) || !mkdtemp (root))
        abort ();
    if (path_of (path, sizeof (path), root, "proc") < 0
        || mkdir (path, 0700) < 0
        || path_of (piddir, sizeof (piddir), path, "4242") < 0
        || mkdir (piddir, 0700) < 0
        || path_of (path, sizeof (path), root, "proc/stat") < 0
        || write_file (path, proc_stat, sizeof (proc_stat) - 1) < 0)
        abort ();
    atexit (cleanup);
    tr_fsroot_set (root);
    done = true;
}

static void write_parts (const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char path[700];

    for (size_t i = 0; i < NPARTS; i++) {
        const uint8_t *sep;
        size_t len;

        if (path_of (path, sizeof (path), piddir, parts[i]) < 0)
            abort ();
        if (!p) {
            if (unlink (path) < 0 && errno != ENOENT)
                abort ();
            continue;
        }
        sep = memchr (p, SEP, (size_t)(end - p));
        len = sep ? (size_t)(sep - p) : (size_t)(end - p);
        if (write_file (path, p, len) < 0)
            abort ();
        p = sep ? sep + 1 : NULL;
    }
}

static void check_tools (json_t *tools)
{
    tr_error_t err;
    json_t *rec;

    if (!tools)
        abort ();
    /* validated where it sits in a record, as the report sees it */
    if (!(rec = tr_record_create ("final"))
        || json_object_set (rec, "tools", tools) < 0)
        abort ();
    memset (&err, 0, sizeof (err));
    if (tr_record_validate_section ("tools", json_object_get (rec, "tools"),
                                    &err)
        < 0) {
        fprintf (stderr, "tools rejected: %s\n", err.text);
        abort ();
    }
    json_decref (rec);
}

static void scan (const struct tr_procs_opts *opts)
{
    const pid_t pids[] = { PID };
    struct tr_proc_io io;
    tr_procs_t *procs;
    json_t *j;

    if (!(procs = tr_procs_create (opts, NULL)))
        abort ();
    for (int round = 0; round < 2; round++) {
        if (tr_procs_scan (procs, pids, 1, round ? T2 : T1) < 0)
            abort ();
        check_tools (j = tr_procs_tools_json (procs));
        json_decref (j);
    }
    if (!(j = tr_procs_json (procs, "proc")))
        abort ();
    json_decref (j);
    tr_procs_io (procs, &io);
    (void)tr_procs_rss (procs);
    (void)tr_procs_runq_wait_s (procs);
    tr_procs_destroy (procs);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    const struct tr_procs_opts tiny = { .cmdline_max = 5, .tools_max = 1 };

    if (size > FUZZ_MAX_LEN)
        return 0;
    setup ();
    write_parts (data, size);
    scan (NULL);
    scan (&tiny);
    return 0;
}
