/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for no progress (progress.c): stall detection on synthetic
 * readings (CPU and I/O that do not move, within the tolerance, for the
 * threshold; progress that ends a stall; the last stall kept), the
 * record's "progress" member, and the state and wait channel of a
 * process read from a fixture /proc.
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
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/node/progress.h"

#include "rmtree.h"

static void test_stall (void **state)
{
    struct tr_progress p = { 0 };
    json_t *o;

    (void)state;
    /* a step that computes for 60 s: never stalled */
    for (int t = 0; t <= 60; t += 10)
        assert_false (tr_progress_feed (&p, t, 1000000 + t * 1000,
                                        t * 0.9, 0, 30));
    assert_false (tr_progress_stalled (&p, 30));
    /* then blocked: CPU that creeps within the tolerance is no progress */
    for (int t = 70; t <= 120; t += 10)
        assert_true (tr_progress_feed (&p, t, 1000000 + t * 1000,
                                       54.0 + (t - 60) * 0.0005, 1 << 20, 30)
                     || t == 70);
    /* the I/O counters moved at 70 s: the stretch starts there */
    assert_true (tr_progress_stalled (&p, 30));
    assert_true (tr_progress_idle_s (&p) == 50);
    assert_false (tr_progress_stalled (&p, 60));
    assert_false (tr_progress_stalled (&p, 0));
    o = tr_progress_json (&p, 30, NULL);
    assert_non_null (o);
    assert_true (json_is_true (json_object_get (o, "stalled")));
    assert_true (json_real_value (json_object_get (o, "stalled_s")) == 50);
    assert_int_equal (json_integer_value (json_object_get (o,
                                                           "since_unix_ms")),
                      1070000);
    json_decref (o);
    assert_null (tr_progress_json (&p, 0, NULL));
    /* one byte written ends it; the stall is kept as the last one */
    assert_false (tr_progress_feed (&p, 130, 1130000, 54.03, (1 << 20) + 1,
                                    30));
    assert_false (tr_progress_stalled (&p, 30));
    o = tr_progress_json (&p, 30, NULL);
    assert_true (json_is_false (json_object_get (o, "stalled")));
    assert_true (json_real_value (json_object_get (o, "stalled_s")) == 60);
    assert_int_equal (json_integer_value (json_object_get (o,
                                                           "since_unix_ms")),
                      1070000);
    assert_null (json_object_get (o, "processes"));
    json_decref (o);
    /* CPU beyond the tolerance is progress: 0.1 s in 10 s */
    assert_true (tr_progress_feed (&p, 140, 1140000, 54.03, (1 << 20) + 1,
                                   30));
    assert_false (tr_progress_feed (&p, 150, 1150000, 54.13, (1 << 20) + 1,
                                    30));
    assert_true (tr_progress_idle_s (&p) == 0);
}

/* A step that never progressed: nothing to compare with at the first
 * reading, then stalled from its start.
 */
static void test_never (void **state)
{
    struct tr_progress p = { 0 };
    json_t *o, *procs = json_pack ("[{s:s, s:i, s:s, s:s}]", "tool", "cat",
                                   "pid", 77, "state", "S", "wchan",
                                   "pipe_read");

    (void)state;
    assert_null (tr_progress_json (&p, 10, NULL));
    assert_false (tr_progress_feed (&p, 5, 5000, 0.01, 0, 10));
    assert_true (tr_progress_feed (&p, 10, 10000, 0.01, 0, 10));
    assert_false (tr_progress_stalled (&p, 10));
    assert_true (tr_progress_feed (&p, 15, 15000, 0.01, 0, 10));
    assert_true (tr_progress_stalled (&p, 10));
    o = tr_progress_json (&p, 10, procs);
    assert_string_equal (json_string_value (json_object_get (
        json_array_get (json_object_get (o, "processes"), 0), "wchan")),
        "pipe_read");
    json_decref (o);
    /* counters that go back are no progress */
    assert_true (tr_progress_feed (&p, 20, 20000, 0.0, 0, 10));
    assert_true (tr_progress_stalled (&p, 10));
    json_decref (procs);
}

/* Progress seen elsewhere (another step of the job, work a launcher
 * waits for) starts the stretch again; never before it, never after
 * the last reading, and it records no stall.
 */
static void test_touch (void **state)
{
    struct tr_progress p = { 0 };
    json_t *o;

    (void)state;
    tr_progress_touch (&p, 50, 50000); /* nothing read yet: nothing */
    assert_false (p.have);
    assert_false (tr_progress_feed (&p, 0, 0, 0, 0, 30));
    for (int t = 10; t <= 40; t += 10)
        assert_true (tr_progress_feed (&p, t, t * 1000, 0, 0, 30));
    assert_true (tr_progress_stalled (&p, 30));
    tr_progress_touch (&p, 35, 35000);
    assert_true (tr_progress_idle_s (&p) == 5);
    assert_false (tr_progress_stalled (&p, 30));
    /* earlier than the stretch's start: nothing */
    tr_progress_touch (&p, 20, 20000);
    assert_true (tr_progress_idle_s (&p) == 5);
    /* later than the last reading: the last reading */
    tr_progress_touch (&p, 99, 99000);
    assert_true (tr_progress_idle_s (&p) == 0);
    o = tr_progress_json (&p, 30, NULL);
    assert_true (json_is_false (json_object_get (o, "stalled")));
    assert_null (json_object_get (o, "stalled_s"));
    json_decref (o);
    /* what the step's own processes did last is left as it was */
    assert_true (p.moved_mono == 0);
    assert_int_equal (p.moved_unix_ms, 0);
    /* from there on, 30 s without progress is a stall again */
    assert_true (tr_progress_feed (&p, 70, 70000, 0, 0, 30));
    assert_true (tr_progress_stalled (&p, 30));
    assert_int_equal (p.since_unix_ms, 40000);
}

static void test_launcher_applies (void **state)
{
    (void)state;
    assert_true (tr_progress_launcher ("srun"));
    assert_true (tr_progress_launcher ("mpirun"));
    assert_true (tr_progress_launcher ("mpiexec.hydra"));
    assert_false (tr_progress_launcher ("cat"));
    assert_false (tr_progress_launcher ("srunx"));
    assert_false (tr_progress_launcher (""));
    assert_false (tr_progress_launcher (NULL));
    assert_false (tr_progress_applies ("extern"));
    assert_false (tr_progress_applies ("interactive"));
    assert_true (tr_progress_applies ("batch"));
    assert_true (tr_progress_applies ("0"));
    assert_true (tr_progress_applies (NULL));
}

static void test_parse_stat (void **state)
{
    char st[2], comm[16];

    (void)state;
    assert_int_equal (tr_progress_parse_stat (
        "77 (cat) S 1 77 77 0 -1 4194560 100", st, comm, sizeof (comm)), 0);
    assert_string_equal (st, "S");
    assert_string_equal (comm, "cat");
    assert_int_equal (tr_progress_parse_stat (
        "78 (a) b (c)) D 1 2", st, comm, sizeof (comm)), 0);
    assert_string_equal (st, "D");
    assert_string_equal (comm, "a) b (c)");
    assert_int_equal (tr_progress_parse_stat (
        "79 (a very long name indeed) R 1", st, comm, 8), 0);
    assert_string_equal (comm, "a very ");
    errno = 0;
    assert_int_equal (tr_progress_parse_stat ("79 (x)", st, comm, 8), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_progress_parse_stat ("garbage", st, comm, 8), -1);
}

static void put (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");

    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

static void test_procs (void **state)
{
    char dir[] = "/tmp/test_progress.XXXXXX", path[256];
    pid_t pids[20];
    json_t *a, *o;

    (void)state;
    assert_non_null (mkdtemp (dir));
    for (int i = 0; i < 20; i++) {
        pids[i] = 100 + i;
        snprintf (path, sizeof (path), "%s/%d", dir, 100 + i);
        assert_int_equal (mkdir (path, 0755), 0);
        snprintf (path, sizeof (path), "%s/%d/stat", dir, 100 + i);
        put (path, i == 1 ? "101 (ev\x1bil) D 1 1 1" : "100 (cat) S 1 1 1");
        snprintf (path, sizeof (path), "%s/%d/wchan", dir, 100 + i);
        put (path, i == 0 ? "pipe_read" : i == 1 ? "bad wchan\n" : "0");
    }
    o = tr_progress_proc_json (dir, 100);
    assert_string_equal (json_string_value (json_object_get (o, "tool")),
                         "cat");
    assert_string_equal (json_string_value (json_object_get (o, "state")),
                         "S");
    assert_string_equal (json_string_value (json_object_get (o, "wchan")),
                         "pipe_read");
    json_decref (o);
    o = tr_progress_proc_json (dir, 101);
    assert_string_equal (json_string_value (json_object_get (o, "tool")),
                         "ev?il");
    assert_null (json_object_get (o, "wchan"));
    json_decref (o);
    assert_null (tr_progress_proc_json (dir, 999));
    pids[2] = 999; /* gone: left out */
    a = tr_progress_procs (dir, pids, 20);
    assert_int_equal (json_array_size (a), TR_PROGRESS_PROCS_MAX);
    assert_int_equal (json_integer_value (json_object_get (
                          json_array_get (a, 2), "pid")), 103);
    json_decref (a);
    rmtree (dir);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_stall),
        cmocka_unit_test (test_never),
        cmocka_unit_test (test_touch),
        cmocka_unit_test (test_launcher_applies),
        cmocka_unit_test (test_parse_stat),
        cmocka_unit_test (test_procs),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
