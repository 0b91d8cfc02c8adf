/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for evidence.c: a record's files, kernel events and stall
 * as label, text and lines, in the job view's order; a stalled process
 * in the views' form and in the stall notice's, hostile names escaped
 * in the notice.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/judge/evidence.h"

static json_t *load (const char *text)
{
    json_error_t err;
    json_t *o = json_loads (text, JSON_ALLOW_NUL, &err);

    if (!o)
        fail_msg ("fixture: %s", err.text);
    return o;
}

static const char *full =
    "{\"events\": [{\"kind\": \"oom_kill\", \"scope\": \"node\","
    "  \"t_unix_ms\": 1767225600000, \"tool\": \"python\", \"pid\": 42,"
    "  \"rss_bytes\": 1073741824, \"text\": \"Killed process 42\"}],"
    " \"progress\": {\"stalled\": true, \"stalled_s\": 300,"
    "  \"processes\": [{\"tool\": \"cat\", \"pid\": 7, \"state\": \"S\","
    "  \"wchan\": \"anon_pipe_read\"}, {\"tool\": \"dd\", \"pid\": 8,"
    "  \"state\": \"D\"}]},"
    " \"files\": {\"source\": \"ebpf\", \"read_bytes\": 200,"
    "  \"written_bytes\": 0,"
    "  \"failed_opens\": [{\"path\": \"/ref/hg38.fa\", \"errno\": \"ENOENT\","
    "  \"tool\": \"STAR\", \"count\": 3}, {\"errno\": \"EACCES\","
    "  \"tool\": \"STAR\", \"count\": 1}, {\"path\": \"/c\", \"errno\": \"E\","
    "  \"tool\": \"t\"}, {\"path\": \"/d\", \"errno\": \"E\", \"tool\": \"t\"},"
    "  {\"path\": \"/e\", \"errno\": \"E\", \"tool\": \"t\"}],"
    "  \"io_errors\": [{\"op\": \"read\", \"path\": \"/scratch/x\","
    "  \"errno\": \"EIO\", \"tool\": \"bwa\", \"count\": 2}],"
    "  \"top_read\": [{\"path\": \"/data/in.bam\", \"bytes\": 150},"
    "  {\"path\": \"/data/in.bai\", \"bytes\": 50}],"
    "  \"top_written\": []}}";

static json_t *entry (json_t *ev, size_t i, const char *label)
{
    json_t *e = json_array_get (ev, i);

    assert_non_null (e);
    assert_string_equal (json_string_value (json_object_get (e, "label")),
                         label);
    return e;
}

static const char *text_of (json_t *e)
{
    return json_string_value (json_object_get (e, "text"));
}

static const char *item (json_t *e, size_t i)
{
    return json_string_value (json_array_get (json_object_get (e, "items"), i));
}

static void test_record (void **state)
{
    json_t *rec = load (full), *ev, *e;

    (void)state;
    ev = tr_evidence_record (rec);
    assert_non_null (ev);
    assert_int_equal (json_array_size (ev), 5);
    e = entry (ev, 0, "Failed opens");
    assert_string_equal (text_of (e), "/ref/hg38.fa (ENOENT) by STAR x3; "
                                      "(unknown file) "
                                      "(EACCES) by STAR; /c (E) by t; /d (E) "
                                      "by t, and 1 "
                                      "more");
    assert_int_equal (json_array_size (json_object_get (e, "items")), 0);
    e = entry (ev, 1, "I/O errors");
    assert_string_equal (text_of (e), "read /scratch/x (EIO) by bwa x2");
    e = entry (ev, 2, "Most read");
    assert_string_equal (text_of (e), "/data/in.bam 150 B (75%), /data/in.bai "
                                      "50 B (25%)");
    e = entry (ev, 3, "Events");
    assert_string_equal (text_of (e), "1 from the kernel log");
    assert_non_null (strstr (item (e, 0), " oom_kill (node-wide) python[42] "
                                          "RSS 1.0 GiB: Killed process 42"));
    e = entry (ev, 4, "Progress");
    assert_string_equal (text_of (e), "STALLED for 00:05:00 (no CPU and no "
                                      "I/O)");
    assert_string_equal (item (e, 0), "cat[7] state S in anon_pipe_read");
    assert_string_equal (item (e, 1), "dd[8] state D in -");
    json_decref (ev);
    json_decref (rec);
}

static void test_record_quiet (void **state)
{
    json_t *rec = load ("{\"files\": {\"source\": \"fanotify\","
                        " \"top_read\": [{\"path\": \"/a\", \"bytes\": 1}]},"
                        " \"progress\": {\"stalled\": false,"
                        " \"stalled_s\": 90}}");
    json_t *ev, *e;

    (void)state;
    /* only eBPF file evidence counts; a stall that ended is one line */
    ev = tr_evidence_record (rec);
    assert_int_equal (json_array_size (ev), 1);
    e = entry (ev, 0, "Progress");
    assert_string_equal (text_of (e), "stalled for 00:01:30, then went on");
    assert_int_equal (json_array_size (json_object_get (e, "items")), 0);
    json_decref (ev);
    json_decref (rec);

    ev = tr_evidence_record (NULL);
    assert_non_null (ev);
    assert_int_equal (json_array_size (ev), 0);
    json_decref (ev);
}

static void test_stalled_forms (void **state)
{
    json_t *rec = load ("{\"progress\": {\"stalled\": true, \"processes\":"
                        " [{\"tool\": \"cat\", \"pid\": 42, \"state\": \"S\","
                        " \"wchan\": \"anon_pipe_read\"},"
                        " {\"tool\": \"ev\\u001b[2Jil\", \"pid\": 43,"
                        " \"state\": \"D\", \"wchan\": \"0\"},"
                        " {\"pid\": 44}]}}");
    json_t *lines;

    (void)state;
    lines = tr_evidence_stalled (rec, TR_EVIDENCE_NOTICE);
    assert_int_equal (json_array_size (lines), 3);
    assert_string_equal (json_string_value (json_array_get (lines, 0)),
                         "cat (pid 42)  S  anon_pipe_read");
    assert_string_equal (json_string_value (json_array_get (lines, 1)), "ev\\x1"
                                                                        "b["
                                                                        "2Jil "
                                                                        "(pid "
                                                                        "43)  "
                                                                        "D  -");
    assert_string_equal (json_string_value (json_array_get (lines, 2)), "? "
                                                                        "(pid "
                                                                        "44)  "
                                                                        "?  -");
    json_decref (lines);

    lines = tr_evidence_stalled (rec, TR_EVIDENCE_VIEW);
    assert_int_equal (json_array_size (lines), 3);
    assert_string_equal (json_string_value (json_array_get (lines, 0)),
                         "cat[42] state S in anon_pipe_read");
    assert_string_equal (json_string_value (json_array_get (lines, 1)), "ev\x1b"
                                                                        "[2Jil["
                                                                        "43] "
                                                                        "state "
                                                                        "D in "
                                                                        "0");
    assert_string_equal (json_string_value (json_array_get (lines, 2)), "[44] "
                                                                        "state "
                                                                        " in "
                                                                        "-");
    json_decref (lines);

    /* no processes: no lines */
    json_object_del (json_object_get (rec, "progress"), "processes");
    lines = tr_evidence_stalled (rec, TR_EVIDENCE_NOTICE);
    assert_int_equal (json_array_size (lines), 0);
    json_decref (lines);
    json_decref (rec);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_record),
        cmocka_unit_test (test_record_quiet),
        cmocka_unit_test (test_stalled_forms),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
