/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The merging of the eBPF file evidence (libtracer/node/bpffiles.c) without
 * the kernel: entries that share path, errno and tool add up, the top 16
 * errors and top 5 files come out sorted by count (bytes) then path, the
 * C library's probes are left out, totals saturate instead of wrapping,
 * the member validates in a record, and "none" carries its reason.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/node/bpffiles.h"
#include "libtracer/record/record.h"
#include "record-fixture.h"

static const char *sget (json_t *o, const char *k)
{
    return json_string_value (json_object_get (o, k));
}

static long long iget (json_t *o, const char *k)
{
    return (long long)json_integer_value (json_object_get (o, k));
}

static void test_merge_and_order (void **state)
{
    tr_files_agg_t *agg = tr_files_agg_new ();
    json_t *m, *fo, *io, *tr, *tw;

    (void)state;
    assert_non_null (agg);
    /* the same failure seen on two CPUs' map entries adds up */
    assert_int_equal (tr_files_agg_open (agg, "/ref/hg38.fa", ENOENT, "STAR",
                                         2), 0);
    assert_int_equal (tr_files_agg_open (agg, "/ref/hg38.fa", ENOENT, "STAR",
                                         1), 0);
    assert_int_equal (tr_files_agg_open (agg, "/ref/a.fa", EACCES, "bwa", 3),
                      0);
    assert_int_equal (tr_files_agg_open (agg, "/ref/b.fa", ENOENT, "bwa", 1),
                      0);
    /* the C library's probes say nothing of the inputs */
    assert_int_equal (tr_files_agg_open (agg,
                                         "/usr/lib/locale/C.UTF-8/LC_CTYPE",
                                         ENOENT, "cat", 9), 0);
    assert_int_equal (tr_files_agg_open (
                          agg, "/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/"
                               "libz.so.1", ENOENT, "cat", 9), 0);
    assert_int_equal (tr_files_agg_ioerr (agg, false, EIO, "cat", "/mnt/f/bad",
                                          1), 0);
    assert_int_equal (tr_files_agg_ioerr (agg, true, ENOSPC, "dd", NULL, 4),
                      0);
    assert_int_equal (tr_files_agg_bytes (agg, "/nfs/proj/a.bam", 900, 0), 0);
    assert_int_equal (tr_files_agg_bytes (agg, "/tmp/out", 0, 50), 0);
    assert_int_equal (tr_files_agg_bytes (agg, "/etc/x", 100, 0), 0);
    assert_non_null (m = tr_files_agg_json (agg));
    assert_string_equal (sget (m, "source"), "ebpf");
    assert_int_equal (iget (m, "read_bytes"), 1000);
    assert_int_equal (iget (m, "written_bytes"), 50);
    fo = json_object_get (m, "failed_opens");
    assert_int_equal (json_array_size (fo), 3);
    /* by count, then path */
    assert_string_equal (sget (json_array_get (fo, 0), "path"), "/ref/a.fa");
    assert_string_equal (sget (json_array_get (fo, 0), "errno"), "EACCES");
    assert_int_equal (iget (json_array_get (fo, 0), "count"), 3);
    assert_string_equal (sget (json_array_get (fo, 1), "path"),
                         "/ref/hg38.fa");
    assert_string_equal (sget (json_array_get (fo, 1), "tool"), "STAR");
    assert_int_equal (iget (json_array_get (fo, 1), "count"), 3);
    assert_string_equal (sget (json_array_get (fo, 2), "path"), "/ref/b.fa");
    io = json_object_get (m, "io_errors");
    assert_int_equal (json_array_size (io), 2);
    assert_string_equal (sget (json_array_get (io, 0), "op"), "write");
    assert_string_equal (sget (json_array_get (io, 0), "errno"), "ENOSPC");
    assert_null (json_object_get (json_array_get (io, 0), "path"));
    assert_string_equal (sget (json_array_get (io, 1), "op"), "read");
    assert_string_equal (sget (json_array_get (io, 1), "errno"), "EIO");
    assert_string_equal (sget (json_array_get (io, 1), "path"), "/mnt/f/bad");
    tr = json_object_get (m, "top_read");
    assert_int_equal (json_array_size (tr), 2); /* /tmp/out read 0 bytes */
    assert_string_equal (sget (json_array_get (tr, 0), "path"),
                         "/nfs/proj/a.bam");
    assert_int_equal (iget (json_array_get (tr, 0), "bytes"), 900);
    tw = json_object_get (m, "top_written");
    assert_int_equal (json_array_size (tw), 1);
    assert_string_equal (sget (json_array_get (tw, 0), "path"), "/tmp/out");
    json_decref (m);
    tr_files_agg_free (agg);
}

static void test_top_n (void **state)
{
    tr_files_agg_t *agg = tr_files_agg_new ();
    json_t *m, *fo, *tr;
    char p[64];

    (void)state;
    for (int i = 0; i < 40; i++) {
        snprintf (p, sizeof (p), "/in/%02d", i);
        assert_int_equal (tr_files_agg_open (agg, p, ENOENT, "t",
                                             (uint64_t)i + 1), 0);
        assert_int_equal (tr_files_agg_bytes (agg, p, (uint64_t)i + 1, 0), 0);
    }
    /* the same file under two inodes' entries (renamed over): one path */
    assert_int_equal (tr_files_agg_bytes (agg, "/in/00", 100, 0), 0);
    assert_non_null (m = tr_files_agg_json (agg));
    fo = json_object_get (m, "failed_opens");
    assert_int_equal (json_array_size (fo), TR_FILES_TOP_ERRORS);
    assert_string_equal (sget (json_array_get (fo, 0), "path"), "/in/39");
    assert_string_equal (sget (json_array_get (fo, 15), "path"), "/in/24");
    tr = json_object_get (m, "top_read");
    assert_int_equal (json_array_size (tr), TR_FILES_TOP_BYTES);
    assert_string_equal (sget (json_array_get (tr, 0), "path"), "/in/00");
    assert_int_equal (iget (json_array_get (tr, 0), "bytes"), 101);
    assert_string_equal (sget (json_array_get (tr, 1), "path"), "/in/39");
    json_decref (m);
    tr_files_agg_free (agg);
}

/* What a process acted on goes first, however many probes there were,
 * so that the top 16 keep it; each says its call and count of acts.
 */
static void test_acted_first (void **state)
{
    tr_files_agg_t *agg = tr_files_agg_new ();
    json_t *m, *fo, *e;
    char p[64];

    (void)state;
    for (int i = 0; i < 40; i++) {
        snprintf (p, sizeof (p), "/usr/lib/python3.11/m%02d/__init__.so", i);
        assert_int_equal (tr_files_agg_lookup (agg, TR_FILES_STAT, p, ENOENT,
                                               "python3", 5, 0), 0);
    }
    assert_int_equal (tr_files_agg_lookup (agg, TR_FILES_STAT, "/in/r1.fq",
                                           ENOENT, "python3", 1, 1), 0);
    /* two processes of one tool that ended on one file add up */
    assert_int_equal (tr_files_agg_lookup (agg, TR_FILES_OPEN, "/in/r2.fq",
                                           ENOENT, "cat", 1, 1), 0);
    assert_int_equal (tr_files_agg_lookup (agg, TR_FILES_OPEN, "/in/r2.fq",
                                           ENOENT, "cat", 1, 1), 0);
    assert_int_equal (tr_files_agg_lookup (agg, TR_FILES_ACCESS,
                                           "/etc/ld.so.preload", ENOENT,
                                           "cat", 2, 0), 0);
    /* a call not among the three */
    assert_int_equal (tr_files_agg_lookup (agg, (tr_files_call_t)4, "/x",
                                           ENOENT, "cat", 1, 0), -1);
    assert_int_equal (errno, EINVAL);
    assert_non_null (m = tr_files_agg_json (agg));
    fo = json_object_get (m, "failed_opens");
    assert_int_equal (json_array_size (fo), TR_FILES_TOP_ERRORS);
    e = json_array_get (fo, 0);
    assert_string_equal (sget (e, "path"), "/in/r2.fq");
    assert_string_equal (sget (e, "call"), "open");
    assert_int_equal (iget (e, "acted"), 2);
    assert_int_equal (iget (e, "count"), 2);
    e = json_array_get (fo, 1);
    assert_string_equal (sget (e, "path"), "/in/r1.fq");
    assert_string_equal (sget (e, "call"), "stat");
    assert_int_equal (iget (e, "acted"), 1);
    e = json_array_get (fo, 2);
    assert_int_equal (iget (e, "acted"), 0);
    assert_int_equal (iget (e, "count"), 5);
    {
        json_t *rec = rec_with ("{}", true);
        tr_error_t error;

        json_object_set (rec, "files", m);
        if (tr_record_validate (rec, &error) < 0)
            fail_msg ("%s", tr_error_str (&error));
        /* a call the record does not know is refused */
        json_object_set_new (json_array_get (fo, 0), "call",
                             json_string ("exec"));
        assert_int_equal (tr_record_validate (rec, &error), -1);
        json_decref (rec);
    }
    json_decref (m);
    tr_files_agg_free (agg);
}

static void test_saturate_and_errors (void **state)
{
    tr_files_agg_t *agg = tr_files_agg_new ();
    json_t *m;
    char b[16];

    (void)state;
    assert_int_equal (tr_files_agg_bytes (agg, "/x", UINT64_MAX - 1, 0), 0);
    assert_int_equal (tr_files_agg_bytes (agg, "/x", 5, 0), 0);
    assert_non_null (m = tr_files_agg_json (agg));
    assert_int_equal (iget (json_array_get (json_object_get (m, "top_read"),
                                            0), "bytes"), INT64_MAX);
    json_decref (m);
    errno = 0;
    assert_int_equal (tr_files_agg_open (agg, NULL, ENOENT, "t", 1), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_files_agg_open (agg, "/x", 0, "t", 1), -1);
    assert_int_equal (tr_files_agg_ioerr (agg, false, EIO, NULL, "/x", 1), -1);
    assert_int_equal (tr_files_agg_bytes (agg, NULL, 1, 1), -1);
    assert_string_equal (tr_files_errno_name (EDQUOT, b, sizeof (b)),
                         "EDQUOT");
    assert_string_equal (tr_files_errno_name (4095, b, sizeof (b)), "E4095");
    tr_files_agg_free (agg);
    tr_files_agg_free (NULL);
}

/* Names the job controls: a path with a newline and bytes that are not
 * UTF-8, a very long one, a tool with an escape character: escaped, cut,
 * and the member still built and valid.
 */
static void test_hostile_names (void **state)
{
    tr_files_agg_t *agg = tr_files_agg_new ();
    json_t *rec, *m, *fo;
    tr_error_t error;
    char longp[4000];

    (void)state;
    memset (longp, 'a', sizeof (longp) - 1);
    longp[0] = '/';
    longp[sizeof (longp) - 1] = '\0';
    assert_int_equal (tr_files_agg_open (agg, "/in/x\ny\xff.fa", ENOENT,
                                         "to\x1b[2Jol", 2), 0);
    assert_int_equal (tr_files_agg_open (agg, longp, ENOENT, "t", 1), 0);
    assert_non_null (m = tr_files_agg_json (agg));
    fo = json_object_get (m, "failed_opens");
    assert_int_equal (json_array_size (fo), 2);
    assert_string_equal (sget (json_array_get (fo, 0), "path"),
                         "/in/x\\ny\\xff.fa");
    assert_string_equal (sget (json_array_get (fo, 0), "tool"),
                         "to\\x1b[2Jol");
    assert_int_equal (strlen (sget (json_array_get (fo, 1), "path")), 1024);
    rec = rec_with ("{}", true);
    json_object_set_new (rec, "files", m);
    if (tr_record_validate (rec, &error) < 0)
        fail_msg ("%s", tr_error_str (&error));
    json_decref (rec);
    tr_files_agg_free (agg);
}

/* The member in a record passes tr_record_validate; a damaged one not. */
static void test_validates (void **state)
{
    tr_files_agg_t *agg = tr_files_agg_new ();
    json_t *rec, *m;
    tr_error_t error;

    (void)state;
    assert_int_equal (tr_files_agg_open (agg, "/ref/hg38.fa", ENOENT, "STAR",
                                         1), 0);
    assert_int_equal (tr_files_agg_ioerr (agg, false, EIO, "cat", "/m/bad",
                                          1), 0);
    assert_int_equal (tr_files_agg_bytes (agg, "/m/good", 10, 0), 0);
    rec = rec_with ("{}", true);
    assert_non_null (m = tr_files_agg_json (agg));
    json_object_set_new (rec, "files", m);
    if (tr_record_validate (rec, &error) < 0)
        fail_msg ("%s", tr_error_str (&error));
    json_object_set_new (rec, "files", tr_files_none ("built without eBPF "
                                                      "support"));
    assert_int_equal (tr_record_validate (rec, &error), 0);
    assert_string_equal (sget (json_object_get (rec, "files"), "reason"),
                         "built without eBPF support");
    /* closed schema: an unknown member or source is refused */
    json_object_set_new (json_object_get (rec, "files"), "extra",
                         json_integer (1));
    assert_int_equal (tr_record_validate (rec, &error), -1);
    json_object_set_new (rec, "files", json_pack ("{s:s}", "source", "x"));
    assert_int_equal (tr_record_validate (rec, &error), -1);
    json_decref (rec);
    tr_files_agg_free (agg);
}

/* The kernel part on this machine: it loads (root, BTF, built with eBPF)
 * or says why not; never an error without a reason.
 */
static void test_open_says_why (void **state)
{
    tr_error_t error = { 0 };
    tr_files_t *f;

    (void)state;
    if ((f = tr_files_open (true, &error))) {
        const char *bad[] = { "/nonexistent" };
        assert_false (tr_files_watching (f, "a"));
        assert_int_equal (tr_files_watch (f, "a", bad, 1, &error), -1);
        assert_int_equal (errno, ENOENT);
        tr_files_close (f);
        return;
    }
    assert_true (error.text[0] != '\0');
#ifndef HAVE_EBPF
    assert_int_equal (errno, ENOTSUP);
    assert_string_equal (error.text, "built without eBPF support");
#endif
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_merge_and_order),
        cmocka_unit_test (test_top_n),
        cmocka_unit_test (test_acted_first),
        cmocka_unit_test (test_saturate_and_errors),
        cmocka_unit_test (test_hostile_names),
        cmocka_unit_test (test_validates),
        cmocka_unit_test (test_open_says_why),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
