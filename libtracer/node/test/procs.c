/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The per-step process table against fixture /proc trees
 * (tests/fixtures/proc: two readings of one step, and command lines) and
 * synthetic exit events, then the taskstats listener and the table
 * against the running kernel (root only; the test machine runs as root,
 * so a listener that cannot open is a failure, not a skip).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "libtracer/conf/conf.h"
#include "libtracer/util/fsroot.h"
#include "libtracer/node/procs.h"
#include "libtracer/record/record.h"
#include "libtracer/node/taskstats.h"
#include "rmtree.h"

/* built by tests/Makefile.am from fixtures/proc (tar cannot carry the
 * exe links, so they are made at build time from exe.link files)
 */
#define FIXTURES TEST_BUILDDIR "/proc-fixtures"

/* Fixture clock: btime 1700000000 and USER_HZ 100 */
#define BOOT_MS 1700000000000LL
#define T1 (BOOT_MS + 100000)
#define T2 (BOOT_MS + 200000)
#define START_MS(ticks) (BOOT_MS + (ticks) * 10LL)

static const pid_t scan1_pids[] = { 100, 101, 102, 103, 104 };
static const pid_t scan2_pids[] = { 100, 101, 105 };

/* Every test's procs end here: the step sums kept as entries change must
 * equal those summed over the entries.
 */
static void checked_destroy (tr_procs_t *p)
{
    if (p)
        assert_int_equal (tr_procs_check (p), 0);
    tr_procs_destroy (p);
}

static int64_t now_ms (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int reset_fsroot (void **state)
{
    (void)state;
    tr_fsroot_set (NULL);
    return 0;
}

static int scan_fixture (tr_procs_t *p, const char *name, const pid_t *pids,
                         size_t n, int64_t when)
{
    static char root[512];

    snprintf (root, sizeof (root), "%s/%s", FIXTURES, name);
    tr_fsroot_set (root);
    return tr_procs_scan (p, pids, n, when);
}

/* The row named name in a tools array, or NULL. */
static json_t *row (json_t *tools, const char *name)
{
    size_t i;
    json_t *r;

    json_array_foreach (tools, i, r)
    {
        if (!strcmp (json_string_value (json_object_get (r, "name")), name))
            return r;
    }
    return NULL;
}

static json_int_t ival (json_t *r, const char *key)
{
    json_t *v = json_object_get (r, key);

    assert_true (json_is_integer (v));
    return json_integer_value (v);
}

static double rval (json_t *r, const char *key)
{
    json_t *v = json_object_get (r, key);

    assert_true (json_is_real (v));
    return json_real_value (v);
}

static void assert_tools_valid (json_t *tools)
{
    tr_error_t err;
    json_t *rec = tr_record_create ("final");
    int rc;

    assert_non_null (rec);
    assert_int_equal (json_object_set (rec, "tools", tools), 0);
    rc = tr_record_validate_section ("tools", json_object_get (rec, "tools"),
                                     &err);
    if (rc != 0)
        print_error ("tools rejected: %s\n", err.text);
    assert_int_equal (rc, 0);
    json_decref (rec);
}

/* A thread's exit record. */
static struct tr_exit mkexit (pid_t pid, pid_t tgid, pid_t ppid,
                              const char *comm, bool group_exit,
                              int64_t start_ms, int64_t end_ms)
{
    struct tr_exit ev;

    memset (&ev, 0, sizeof (ev));
    ev.aggr = TR_EXIT_PID;
    ev.version = 13;
    ev.pid = pid;
    ev.tgid = tgid;
    ev.ppid = ppid;
    snprintf (ev.comm, sizeof (ev.comm), "%s", comm);
    ev.group_exit = group_exit;
    ev.start_unix_ms = start_ms;
    ev.group_start_unix_ms = start_ms;
    ev.end_unix_ms = end_ms;
    ev.cpu_exact = true;
    return ev;
}

/* Two fixture readings of a step, no exit events:
 * (the rows of bash and python3 are named by the scripts they run, job.sh
 * and train.py: tools.c)
 * scan1: bash 100 (task), python3 101 (3 threads), dd 102, 103 listed but
 *        gone, 104 "my (weird) prog" with an empty io file and no exe.
 * scan2: bash has reaped dd 102 and python3 (its io now includes their
 *        io), 101 is a new process (sleep), 102 and 104 ended, dd 105 is
 *        new.
 */
static void test_scan_sampled (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    struct tr_proc_io io;
    json_t *tools, *r, *procs;

    (void)state;
    assert_non_null (p);
    assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1), 4);
    assert_int_equal (tr_procs_count_live (p), 4);
    assert_int_equal (scan_fixture (p, "scan2", scan2_pids, 3, T2), 3);
    assert_int_equal (tr_procs_count_live (p), 3);
    /* 100, 101 (python), 102, 104, 101 (sleep), 105 */
    assert_int_equal (tr_procs_count (p), 6);

    /* Each byte once: bash's /proc io (9392 read) includes dd 102's 5000,
     * so bash's own is 4392; the step read 9392 + 300 (dd 105).
     */
    tr_procs_io (p, &io);
    assert_int_equal (tr_procs_check (p), 0);
    assert_int_equal (io.read_bytes, 9692);
    assert_int_equal (io.write_bytes, 4096);
    assert_int_equal (io.rchar, 20000 + 300);
    assert_false (tr_procs_complete (p));

    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (json_array_size (tools), 5);
    /* sorted by CPU, then count, then name */
    {
        static const char *const order[] = {
            "train.py", "dd", "job.sh", "my (weird) prog", "sleep",
        };
        for (size_t i = 0; i < 5; i++)
            assert_string_equal (
                json_string_value (
                    json_object_get (json_array_get (tools, i), "name")),
                order[i]);
    }
    /* pid 101 was reused: two processes, two rows */
    assert_non_null (r = row (tools, "train.py"));
    assert_int_equal (ival (r, "count"), 1);
    assert_true (rval (r, "cpu_s") > 3.099 && rval (r, "cpu_s") < 3.101);
    assert_int_equal (ival (r, "peak_rss_bytes"), 100000 * 1024);
    /* three threads' schedstat: 1 + 2 + 3 ms */
    assert_true (rval (r, "runq_wait_s") > 0.00599
                 && rval (r, "runq_wait_s") < 0.00601);
    assert_int_equal (ival (r, "first_start_unix_ms"), START_MS (1100));
    assert_int_equal (ival (r, "last_end_unix_ms"), T2);
    assert_string_equal (json_string_value (json_object_get (r, "cmdline")),
                         "python3 train.py --token=*** --epochs 3");
    assert_false (json_is_true (json_object_get (r, "exact")));
    assert_int_equal (json_object_size (json_object_get (r, "exit_codes")),
                      0);
    assert_non_null (r = row (tools, "sleep"));
    assert_int_equal (ival (r, "first_start_unix_ms"), START_MS (5000));
    assert_null (json_object_get (r, "last_end_unix_ms"));

    /* two dd processes in one row; bash's cutime is not its CPU */
    assert_non_null (r = row (tools, "dd"));
    assert_int_equal (ival (r, "count"), 2);
    assert_true (rval (r, "cpu_s") > 1.549 && rval (r, "cpu_s") < 1.551);
    assert_int_equal (ival (r, "read_bytes"), 5300);
    assert_int_equal (ival (r, "write_bytes"), 4096);
    assert_int_equal (ival (r, "peak_rss_bytes"), 2500 * 1024);
    assert_int_equal (ival (r, "first_start_unix_ms"), START_MS (1200));
    assert_string_equal (json_string_value (json_object_get (r, "cmdline")),
                         "dd if=/dev/zero of=out bs=1M count=5");
    assert_non_null (r = row (tools, "job.sh"));
    assert_true (rval (r, "cpu_s") > 1.299 && rval (r, "cpu_s") < 1.301);
    assert_int_equal (ival (r, "read_bytes"), 4392);
    assert_int_equal (ival (r, "write_bytes"), 0);

    /* no exe link: the name is comm, parsed past its ')' and spaces;
     * an empty io file reads as nothing
     */
    assert_non_null (r = row (tools, "my (weird) prog"));
    assert_int_equal (ival (r, "count"), 1);
    assert_int_equal (ival (r, "read_bytes"), 0);
    assert_string_equal (json_string_value (json_object_get (r, "cmdline")),
                         "./my prog");
    assert_tools_valid (tools);
    json_decref (tools);

    assert_non_null (procs = tr_procs_json (p, "proc"));
    assert_int_equal (ival (procs, "count"), 6);
    assert_string_equal (json_string_value (json_object_get (procs,
                                                             "source")),
                         "proc");
    assert_true (json_is_false (json_object_get (procs, "complete")));
    assert_int_equal (ival (procs, "lost"), 0);
    json_decref (procs);
    checked_destroy (p);
}

/* dd 102's exit record: more CPU and I/O than its last sample. */
static struct tr_exit dd_exit (void)
{
    struct tr_exit ev = mkexit (102, 102, 100, "dd", true, START_MS (1200),
                                BOOT_MS + 150000);

    ev.utime_us = 100000;
    ev.stime_us = 500000;
    ev.io.rchar = 8192;
    ev.io.read_bytes = 8192;
    ev.io.wchar = 4096;
    ev.io.write_bytes = 4096;
    ev.hiwater_rss_bytes = 3000 * 1024;
    ev.exit_status = 0;
    return ev;
}

/* The exit record makes dd 102 exact, whether it arrives while the
 * process is live or after a scan found it gone; either way bash's own
 * I/O is what its /proc reading holds beyond dd's final I/O.
 */
static void test_scan_with_exit (void **state)
{
    for (int late = 0; late <= 1; late++) {
        tr_procs_t *p = tr_procs_create (NULL, NULL);
        struct tr_exit ev = dd_exit (), tg;
        struct tr_proc_io io;
        json_t *tools, *r;

        (void)state;
        assert_non_null (p);
        assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1), 4);
        if (!late)
            assert_int_equal (tr_procs_exit (p, &ev), 1);
        assert_int_equal (scan_fixture (p, "scan2", scan2_pids, 3, T2), 3);
        if (late)
            assert_int_equal (tr_procs_exit (p, &ev), 1);
        /* the thread-group part is attributed, not added again */
        tg = ev;
        tg.aggr = TR_EXIT_TGID;
        tg.utime_us = 999999999;
        assert_int_equal (tr_procs_exit (p, &tg), 1);
        assert_int_equal (tr_procs_count (p), 6);

        tr_procs_io (p, &io);
        assert_int_equal (tr_procs_check (p), 0);
        assert_int_equal (io.read_bytes, 9692);
        assert_int_equal (io.rchar, 20300);
        assert_non_null (tools = tr_procs_tools_json (p));
        assert_non_null (r = row (tools, "dd"));
        assert_int_equal (ival (r, "count"), 2);
        assert_true (rval (r, "cpu_s") > 1.599 && rval (r, "cpu_s") < 1.601);
        assert_int_equal (ival (r, "read_bytes"), 8492);
        assert_int_equal (ival (r, "peak_rss_bytes"), 3000 * 1024);
        assert_int_equal (ival (json_object_get (r, "exit_codes"), "0"), 1);
        /* dd 105 still runs */
        assert_false (json_is_true (json_object_get (r, "exact")));
        assert_int_equal (ival (r, "last_end_unix_ms"), BOOT_MS + 150000);
        assert_non_null (r = row (tools, "job.sh"));
        assert_int_equal (ival (r, "read_bytes"), 1200);
        assert_tools_valid (tools);
        json_decref (tools);
        checked_destroy (p);
    }
}

/* A member callback for test_adopt_parent: pid 101 is the step's. */
static int member_calls;
static int member_101 (pid_t pid, void *arg)
{
    (void)arg;
    member_calls++;
    return pid == 101;
}

/* A parent born after the last scan (python3 101, left out of the first
 * reading) whose short children all end before the next: far more than
 * the pending window holds.  Once a few are held, the step is asked
 * about the parent, which is read at once; every child counts.  A
 * parent that is not the step's is asked about once a second, and its
 * children stay out.
 */
static void test_adopt_parent (void **state)
{
    static const pid_t task_only[] = { 100 };
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t s = START_MS (1100) + 1000;
    json_t *tools, *r;
    int n = 0;

    (void)state;
    assert_non_null (p);
    tr_procs_set_member (p, member_101, NULL);
    assert_int_equal (scan_fixture (p, "scan1", task_only, 1, T1), 1);
    member_calls = 0;
    for (int i = 0; i < 1000; i++) {
        struct tr_exit ev = mkexit (2000 + i, 2000 + i, 101, "true", true,
                                    s + i, s + i + 1);
        assert_true (tr_procs_exit (p, &ev) >= 0);
    }
    /* asked once: then 101 is known */
    assert_int_equal (member_calls, 1);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_non_null (r = row (tools, "true"));
    assert_int_equal (ival (r, "count"), 1000);
    assert_int_equal (tr_procs_count (p), 1002); /* with 100 and 101 */
    json_decref (tools);

    /* 102 (dd, alive in the fixture) is another job's: asked once in a
     * second of exits, not once per exit, and none of them count
     */
    member_calls = 0;
    for (int i = 0; i < 1000; i++) {
        struct tr_exit ev = mkexit (4000 + i, 4000 + i, 102, "other", true,
                                    s + i, s + i + 1);
        n += tr_procs_exit (p, &ev);
    }
    assert_int_equal (n, 0);
    assert_int_equal (member_calls, 1);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_null (row (tools, "other"));
    json_decref (tools);
    checked_destroy (p);
}

/* An exit record of a child never seen alive, with a hostile name that
 * fills the kernel's field with no NUL: the row's name is cut and its
 * control characters replaced, as a name read from /proc is.
 */
static void test_exit_hostile_comm (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    struct tr_exit ev = mkexit (300, 300, 100, "", true, START_MS (2000),
                                T1 + 100);
    json_t *tools;

    (void)state;
    assert_non_null (p);
    assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1), 4);
    memset (ev.comm, 'A', sizeof (ev.comm));
    memcpy (ev.comm, "ev\nil\x1b[31m", 10);
    assert_int_equal (tr_procs_exit (p, &ev), 1);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_non_null (row (tools, "ev?il?[31mAAAAAAAAAAAAAAAAAAAAA"));
    json_decref (tools);
    checked_destroy (p);
}

/* scan3: dd 105 has ended but is not reaped yet (a zombie, as an orphan
 * is until init waits for it).  Listed again, it is neither revived nor
 * counted a second time, whether or not its exit record came first.
 */
static void test_zombie (void **state)
{
    static const pid_t scan3_pids[] = { 100, 105 };

    for (int with_exit = 0; with_exit <= 1; with_exit++) {
        tr_procs_t *p = tr_procs_create (NULL, NULL);
        struct tr_exit ev = mkexit (105, 105, 100, "dd", true,
                                    START_MS (5100), T2 + 100);
        json_t *tools, *r;

        (void)state;
        assert_non_null (p);
        assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1), 4);
        assert_int_equal (scan_fixture (p, "scan2", scan2_pids, 3, T2), 3);
        if (with_exit)
            assert_int_equal (tr_procs_exit (p, &ev), 1);
        assert_int_equal (scan_fixture (p, "scan3", scan3_pids, 2, T2 + 500),
                          1);
        assert_int_equal (scan_fixture (p, "scan3", scan3_pids, 2, T2 + 900),
                          1);
        assert_int_equal (tr_procs_count (p), 6);
        assert_int_equal (tr_procs_count_live (p), 1);
        assert_non_null (tools = tr_procs_tools_json (p));
        assert_non_null (r = row (tools, "dd"));
        assert_int_equal (ival (r, "count"), 2);
        assert_int_equal (json_is_true (json_object_get (r, "exact")) ? 1 : 0,
                          0);
        json_decref (tools);
        checked_destroy (p);
    }
}

/* dd 105's exit record has come and been counted, but the task is still
 * listed: in do_exit and not a zombie yet (scan4: running, PF_EXITING),
 * or a leader whose other threads are still being released (scan5: no
 * flag, two threads).  It is not counted a second time; without its
 * record, the exiting task ends at the scan, and the record that comes
 * next finds it.
 */
static void test_exiting (void **state)
{
    static const pid_t pids[] = { 100, 105 };
    static const char *const roots[] = { "scan4", "scan5" };

    (void)state;
    for (int r = 0; r < 2; r++)
        for (int with_exit = 0; with_exit <= 1; with_exit++) {
            tr_procs_t *p = tr_procs_create (NULL, NULL);
            struct tr_exit ev = mkexit (105, 105, 100, "dd", true,
                                        START_MS (5100), T2 + 100);
            json_t *tools, *row_dd;
            int seen = r == 1 && !with_exit ? 2 : 1;

            assert_non_null (p);
            assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1),
                              4);
            assert_int_equal (scan_fixture (p, "scan2", scan2_pids, 3, T2),
                              3);
            if (with_exit)
                assert_int_equal (tr_procs_exit (p, &ev), 1);
            assert_int_equal (scan_fixture (p, roots[r], pids, 2, T2 + 500),
                              seen);
            assert_int_equal (tr_procs_count (p), 6);
            assert_int_equal (tr_procs_count_live (p), seen);
            assert_non_null (tools = tr_procs_tools_json (p));
            assert_non_null (row_dd = row (tools, "dd"));
            /* 102 of scan1 and 105 */
            assert_int_equal (ival (row_dd, "count"), 2);
            json_decref (tools);
            /* its record, first or again, finds the one entry */
            assert_int_equal (tr_procs_exit (p, &ev), 1);
            assert_int_equal (tr_procs_count (p), 6);
            assert_int_equal (tr_procs_count_live (p), 1);
            checked_destroy (p);
        }
}

/* An exit record for pid 101 of an earlier process (started long before
 * the python3 now under that pid) is neither python3's nor the step's;
 * the record of python3 itself finalizes it.
 */
static void test_exit_pid_reuse (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    struct tr_exit old = mkexit (101, 101, 100, "old", true,
                                 BOOT_MS - 50000, BOOT_MS + 1000);
    struct tr_exit py = mkexit (101, 101, 100, "python3", true,
                                START_MS (1100), T1 + 500);
    json_t *tools, *r;

    (void)state;
    assert_non_null (p);
    assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1), 4);
    assert_int_equal (tr_procs_exit (p, &old), 0);
    assert_int_equal (tr_procs_count_live (p), 4);
    py.exit_status = 2 << 8;
    py.utime_us = 1000000; /* less than sampled: the sample stands */
    assert_int_equal (tr_procs_exit (p, &py), 1);
    assert_int_equal (tr_procs_count_live (p), 3);
    assert_int_equal (tr_procs_count (p), 4);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_null (row (tools, "old"));
    assert_non_null (r = row (tools, "train.py"));
    assert_true (json_is_true (json_object_get (r, "exact")));
    assert_true (rval (r, "cpu_s") > 3.099 && rval (r, "cpu_s") < 3.101);
    assert_int_equal (ival (json_object_get (r, "exit_codes"), "2"), 1);
    assert_int_equal (ival (r, "last_end_unix_ms"), T1 + 500);
    json_decref (tools);
    checked_destroy (p);
}

/* An exit whose start, rebuilt from taskstats' whole-second btime and
 * the time it was received, misses the scanned entry's by more than the
 * tolerance: the live entry of its pid, started before it ended, is the
 * process all the same, and is not counted twice.
 */
static void test_exit_start_skew (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    struct tr_exit py = mkexit (101, 101, 100, "python3", true,
                                START_MS (1100) - 2600, T1 + 500);
    json_t *tools, *r;

    (void)state;
    assert_non_null (p);
    assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1), 4);
    assert_int_equal (tr_procs_exit (p, &py), 1);
    assert_int_equal (tr_procs_count_live (p), 3);
    assert_int_equal (tr_procs_count (p), 4);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_non_null (r = row (tools, "train.py"));
    assert_true (json_is_true (json_object_get (r, "exact")));
    assert_int_equal (ival (r, "count"), 1);
    json_decref (tools);
    checked_destroy (p);
}

/* Command lines: joined, sanitized, redacted by the default patterns. */
static void test_cmdline_redaction (void **state)
{
    static const pid_t pids[] = { 200, 201, 202, 203, 204, 205 };
    static const struct {
        const char *name, *cmdline;
    } cases[] = {
        { "mysql", "mysql --password=*** -h db --user root" },
        { "curl", "curl https://alice:***@example.org/x -H Authorization: "
                  "Bearer *** --token ***" },
        { "aws", "aws s3 cp --key *** x y" },
        { "echo", "echo caf\xc3\xa9 \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                  "\xc3\xa9\xc3\xa9" },
        { "run", "env DB_PASSWORD=*** run ??" },
        /* the binary was deleted: " (deleted)" is not part of the name */
        { "app", "app" },
    };
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    json_t *tools, *r;

    (void)state;
    assert_non_null (p);
    assert_int_equal (scan_fixture (p, "cmd", pids, 6, T1), 6);
    assert_non_null (tools = tr_procs_tools_json (p));
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        r = row (tools, cases[i].name);
        if (!r)
            fail_msg ("no row %s", cases[i].name);
        assert_string_equal (
            json_string_value (json_object_get (r, "cmdline")),
            cases[i].cmdline);
    }
    assert_tools_valid (tools);
    json_decref (tools);
    checked_destroy (p);
}

/* Truncation keeps whole UTF-8 characters and marks the cut; a custom
 * pattern list replaces the defaults.
 */
static void test_cmdline_truncation (void **state)
{
    static const pid_t pids[] = { 200, 203 };
    static const char *const mine[] = { "h[a-z]+2", NULL };
    struct tr_procs_opts o = { .cmdline_max = 17, .redact = mine };
    tr_procs_t *p = tr_procs_create (&o, NULL);
    json_t *tools, *r;
    size_t i;

    (void)state;
    assert_non_null (p);
    assert_int_equal (scan_fixture (p, "cmd", pids, 2, T1), 2);
    assert_non_null (tools = tr_procs_tools_json (p));
    /* byte 14 is inside an e-acute: the cut moves back to 13 */
    assert_non_null (r = row (tools, "echo"));
    assert_string_equal (json_string_value (json_object_get (r, "cmdline")),
                         "echo caf\xc3\xa9 \xc3\xa9...");
    assert_non_null (r = row (tools, "mysql"));
    assert_string_equal (json_string_value (json_object_get (r, "cmdline")),
                         "mysql --passwo...");
    json_array_foreach (tools, i, r)
    {
        assert_true (strlen (json_string_value (json_object_get (r,
                                                                "cmdline")))
                     <= 17);
    }
    json_decref (tools);
    checked_destroy (p);

    /* the same pattern with room: only the match goes */
    o.cmdline_max = 0;
    assert_non_null (p = tr_procs_create (&o, NULL));
    assert_int_equal (scan_fixture (p, "cmd", pids, 1, T1), 1);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_string_equal (json_string_value (
                             json_object_get (row (tools, "mysql"),
                                              "cmdline")),
                         "mysql --password=*** -h db --user root");
    json_decref (tools);
    checked_destroy (p);
}

/* Tables with the same patterns share one compiled copy; it lives as
 * long as one of them, and a different or longer list is its own.
 */
static void test_redact_shared (void **state)
{
    static const pid_t pids[] = { 200 };
    static const char *const mine[] = { "h[a-z]+2", NULL };
    const char *copy[64], *more[65];
    struct tr_procs_opts o = { 0 };
    tr_procs_t *p[4];
    json_t *tools;
    size_t n = 0;
    static const char *const want[4] = {
        NULL, "mysql --password=*** -h db --user root",
        "mysql --password=*** -h db --user root",
        "mysql --password=*** -h db --user ***"
    };

    (void)state;
    /* the default list again, in other memory */
    for (; tr_conf_redact_default[n] && n < 63; n++) {
        assert_non_null (copy[n] = strdup (tr_conf_redact_default[n]));
        more[n] = tr_conf_redact_default[n];
    }
    copy[n] = NULL;
    /* the default list and one more */
    more[n] = "root";
    more[n + 1] = NULL;
    assert_non_null (p[0] = tr_procs_create (NULL, NULL));
    o.redact = copy;
    assert_non_null (p[1] = tr_procs_create (&o, NULL));
    for (size_t i = 0; i < n; i++)
        free ((char *)copy[i]);
    o.redact = mine;
    assert_non_null (p[2] = tr_procs_create (&o, NULL));
    o.redact = more;
    assert_non_null (p[3] = tr_procs_create (&o, NULL));
    checked_destroy (p[0]);
    for (int i = 1; i < 4; i++) {
        const char *got;
        assert_int_equal (scan_fixture (p[i], "cmd", pids, 1, T1), 1);
        assert_non_null (tools = tr_procs_tools_json (p[i]));
        got = json_string_value (
            json_object_get (row (tools, "mysql"), "cmdline"));
        assert_non_null (got);
        assert_string_equal (got, want[i]);
        json_decref (tools);
    }
    for (int i = 1; i < 4; i++)
        checked_destroy (p[i]);
}

/* Options that cannot be used are errors that say which. */
static void test_create_errors (void **state)
{
    static const char *const bad_re[] = { "ok", "a(b", NULL };
    static const struct {
        struct tr_procs_opts opts;
        const char *text;
    } cases[] = {
        { { .cmdline_max = 2000 }, "cmdline_max" },
        { { .tools_max = 65 }, "tools_max" },
        { { .redact = bad_re }, "a(b" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        tr_error_t err;
        errno = 0;
        assert_null (tr_procs_create (&cases[i].opts, &err));
        assert_int_equal (errno, EINVAL);
        assert_non_null (strstr (err.text, cases[i].text));
    }
    /* every default pattern compiles */
    {
        tr_procs_t *p = tr_procs_create (NULL, NULL);
        assert_non_null (p);
        checked_destroy (p);
    }
    tr_procs_destroy (NULL);
}

static struct tr_exit failexit (pid_t pid, pid_t ppid, const char *comm,
                                 int status, int64_t start_ms, int64_t end_ms)
{
    struct tr_exit ev = mkexit (pid, pid, ppid, comm, true, start_ms, end_ms);

    ev.exit_status = status;
    ev.signaled = WIFSIGNALED (status);
    ev.core_dumped = WIFSIGNALED (status) && WCOREDUMP (status);
    return ev;
}

/* The culprit: a tool killed by SIGSEGV under a shell wrapper under the
 * task; the shell and the task exit 1 after it (collateral).
 */
static void test_culprit (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t s = now_ms () - 60000;
    /* samtools' exit arrives before its parent is known (held) */
    struct tr_exit tool = failexit (802, 801, "samtools", 11 | 0x80, s + 10,
                                    s + 500);
    struct tr_exit ok = failexit (803, 801, "cat", 0, s + 10, s + 400);
    struct tr_exit sh = failexit (801, 800, "sh", 1 << 8, s + 5, s + 510);
    struct tr_exit task = failexit (800, 1, "bash", 1 << 8, s, s + 520);
    json_t *c, *chain;

    (void)state;
    assert_non_null (p);
    tr_procs_add_root (p, 800);
    assert_null (tr_procs_culprit_json (p, s + 1000));
    assert_int_equal (tr_procs_exit (p, &tool), 0);
    assert_int_equal (tr_procs_exit (p, &ok), 0);
    assert_int_equal (tr_procs_exit (p, &sh), 1);
    assert_int_equal (tr_procs_exit (p, &task), 1);
    assert_non_null (c = tr_procs_culprit_json (p, s + 1500));
    assert_string_equal (json_string_value (json_object_get (c, "tool")),
                         "samtools");
    assert_int_equal (ival (c, "pid"), 802);
    assert_int_equal (ival (c, "signal"), 11);
    assert_null (json_object_get (c, "exit_code"));
    assert_true (json_is_true (json_object_get (c, "core_dumped")));
    assert_true (json_real_value (json_object_get (c, "at_s")) == 1.0);
    assert_int_equal (ival (c, "collateral"), 2);
    chain = json_object_get (c, "chain");
    assert_int_equal (json_array_size (chain), 2);
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (chain, 0), "tool")),
                         "sh");
    assert_int_equal (ival (json_array_get (chain, 0), "pid"), 801);
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (chain, 1), "tool")),
                         "bash");
    assert_int_equal (ival (json_array_get (chain, 1), "pid"), 800);
    json_decref (c);
    tr_procs_destroy (p);
}

/* Culprit ties: a parent that fails in the same millisecond as its child
 * is collateral; between unrelated failures at once, the signal death;
 * a step whose exits all succeeded has none.
 */
static void test_culprit_ties (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t s = now_ms () - 60000;
    /* the parent's exit arrives first, both end at s + 100 */
    struct tr_exit task = failexit (900, 1, "bash", 2 << 8, s, s + 200);
    struct tr_exit parent = failexit (901, 900, "make", 2 << 8, s + 1,
                                      s + 100);
    struct tr_exit child = failexit (902, 901, "gcc", 1 << 8, s + 2, s + 100);
    struct tr_exit other = failexit (903, 900, "perl", 6, s + 2, s + 100);
    size_t coll = 99;
    json_t *c;

    (void)state;
    tr_procs_add_root (p, 900);
    assert_int_equal (tr_procs_exit (p, &parent), 1);
    assert_int_equal (tr_procs_exit (p, &child), 1);
    /* gcc, not make: make is its parent */
    assert_non_null (c = tr_procs_culprit_json (p, s + 100));
    assert_string_equal (json_string_value (json_object_get (c, "tool")),
                         "gcc");
    assert_int_equal (ival (c, "exit_code"), 1);
    assert_true (json_is_false (json_object_get (c, "core_dumped")));
    assert_true (json_real_value (json_object_get (c, "at_s")) == 0.0);
    assert_int_equal (ival (c, "collateral"), 1);
    json_decref (c);
    /* perl killed by SIGABRT at the same time wins the tie */
    assert_int_equal (tr_procs_exit (p, &other), 1);
    assert_int_equal (tr_procs_exit (p, &task), 1);
    assert_non_null (c = tr_procs_culprit_json (p, s + 300));
    assert_string_equal (json_string_value (json_object_get (c, "tool")),
                         "perl");
    assert_int_equal (ival (c, "signal"), 6);
    assert_int_equal (ival (c, "collateral"), 1); /* the task */
    json_decref (c);
    assert_int_equal (tr_procs_culprit (p, &coll), 2);
    assert_int_equal (coll, 1);
    tr_procs_destroy (p);

    /* "producer | consumer": the consumer exits 2, then the producer
     * dies of SIGPIPE (at the same millisecond, too): the consumer is
     * the culprit, the producer collateral
     */
    p = tr_procs_create (NULL, NULL);
    tr_procs_add_root (p, 900);
    {
        struct tr_exit consumer = failexit (905, 900, "sort", 2 << 8, s + 2,
                                            s + 100);
        struct tr_exit producer = failexit (904, 900, "zcat", SIGPIPE, s + 1,
                                            s + 100);
        assert_int_equal (tr_procs_exit (p, &producer), 1);
        assert_int_equal (tr_procs_exit (p, &consumer), 1);
        assert_non_null (c = tr_procs_culprit_json (p, s + 300));
        assert_string_equal (json_string_value (json_object_get (c, "tool")),
                             "sort");
        assert_int_equal (ival (c, "exit_code"), 2);
        assert_int_equal (ival (c, "collateral"), 1);
        json_decref (c);
    }
    tr_procs_destroy (p);
    /* a SIGPIPE death alone (pipefail, the reader exited 0) is it */
    p = tr_procs_create (NULL, NULL);
    tr_procs_add_root (p, 900);
    {
        struct tr_exit producer = failexit (904, 900, "yes", SIGPIPE, s + 1,
                                            s + 100);
        assert_int_equal (tr_procs_exit (p, &producer), 1);
        assert_non_null (c = tr_procs_culprit_json (p, s + 300));
        assert_string_equal (json_string_value (json_object_get (c, "tool")),
                             "yes");
        assert_int_equal (ival (c, "signal"), SIGPIPE);
        json_decref (c);
    }
    tr_procs_destroy (p);

    /* exits all 0: no culprit */
    p = tr_procs_create (NULL, NULL);
    tr_procs_add_root (p, 900);
    task.exit_status = 0;
    assert_int_equal (tr_procs_exit (p, &task), 1);
    assert_int_equal (tr_procs_culprit (p, NULL), -1);
    assert_null (tr_procs_culprit_json (p, s + 300));
    tr_procs_destroy (p);
}

/* Exit records only: attribution through roots and parents, held events
 * resolved when the parent shows up, a pid that outlived its process.
 */
static void test_exit_attribution (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t s = now_ms () - 60000;
    struct tr_exit cat = mkexit (601, 601, 600, "cat", true, s + 10, s + 20);
    struct tr_exit sh = mkexit (600, 600, 500, "sh", true, s + 5, s + 30);
    struct tr_exit stray = mkexit (700, 700, 999, "stray", true, s, s + 40);
    struct tr_exit task = mkexit (500, 500, 1, "task", true, s, s + 1000);
    struct tr_exit late = mkexit (650, 650, 500, "late", true, s + 30000,
                                  s + 30010);
    json_t *tools, *procs;

    (void)state;
    assert_non_null (p);
    tr_procs_add_root (p, 500);
    /* cat's parent (sh) is not known yet: held */
    assert_int_equal (tr_procs_exit (p, &cat), 0);
    assert_int_equal (tr_procs_count (p), 0);
    /* sh's parent is the task: sh counts, and so does cat now */
    assert_int_equal (tr_procs_exit (p, &sh), 1);
    assert_int_equal (tr_procs_count (p), 2);
    assert_int_equal (tr_procs_exit (p, &stray), 0);
    assert_int_equal (tr_procs_exit (p, &task), 1);
    assert_int_equal (tr_procs_count (p), 3);
    /* pid 500 ended long before this process started: not its parent */
    assert_int_equal (tr_procs_exit (p, &late), 0);
    assert_int_equal (tr_procs_count (p), 3);
    assert_int_equal (tr_procs_count_live (p), 0);

    assert_true (tr_procs_complete (p));
    assert_non_null (procs = tr_procs_json (p, "taskstats"));
    assert_int_equal (ival (procs, "count"), 3);
    assert_true (json_is_true (json_object_get (procs, "complete")));
    json_decref (procs);
    assert_non_null (procs = tr_procs_json (p, NULL));
    assert_true (json_is_false (json_object_get (procs, "complete")));
    json_decref (procs);

    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (json_array_size (tools), 3);
    assert_non_null (row (tools, "cat"));
    assert_null (row (tools, "stray"));
    assert_true (json_is_true (json_object_get (row (tools, "sh"), "exact")));
    assert_int_equal (ival (row (tools, "task"), "last_end_unix_ms"),
                      s + 1000);
    json_decref (tools);

    tr_procs_set_lost (p, 2);
    assert_false (tr_procs_complete (p));
    assert_non_null (procs = tr_procs_json (p, "taskstats"));
    assert_int_equal (ival (procs, "lost"), 2);
    assert_true (json_is_false (json_object_get (procs, "complete")));
    json_decref (procs);
    checked_destroy (p);
}

/* Two steps of a daemon share one window: an exit neither explains is
 * held once (by the daemon, after both were offered it), and the step
 * that learns its parent takes it out of the window; the other never
 * counts it.
 */
static void test_shared_window (void **state)
{
    tr_exit_window_t *w = tr_exit_window_create ();
    struct tr_procs_opts o = { .exit_window = w };
    tr_procs_t *a, *b;
    int64_t s = now_ms () - 60000;
    struct tr_exit cat = mkexit (601, 601, 600, "cat", true, s + 10, s + 20);
    struct tr_exit sh = mkexit (600, 600, 500, "sh", true, s + 5, s + 30);
    struct tr_exit stray = mkexit (701, 701, 700, "stray", true, s, s + 40);

    (void)state;
    assert_non_null (w);
    assert_non_null (a = tr_procs_create (&o, NULL));
    assert_non_null (b = tr_procs_create (&o, NULL));
    tr_procs_add_root (a, 400);
    tr_procs_add_root (b, 500);
    /* offered to both, taken by neither: a shared window is not filled
     * by its tables
     */
    assert_int_equal (tr_procs_exit (a, &cat), 0);
    assert_int_equal (tr_procs_exit (b, &cat), 0);
    assert_int_equal (tr_exit_window_count (w), 0);
    assert_int_equal (tr_exit_window_add (w, &cat), 0);
    assert_int_equal (tr_procs_exit (a, &stray), 0);
    assert_int_equal (tr_procs_exit (b, &stray), 0);
    assert_int_equal (tr_exit_window_add (w, &stray), 0);
    assert_int_equal (tr_exit_window_count (w), 2);
    /* sh is b's (its parent is b's task): cat, sh's child, goes to b */
    assert_int_equal (tr_procs_exit (a, &sh), 0);
    assert_int_equal (tr_procs_exit (b, &sh), 1);
    assert_int_equal (tr_procs_count (b), 2);
    assert_int_equal (tr_procs_count (a), 0);
    assert_int_equal (tr_exit_window_count (w), 1);
    /* a learns nothing from the window that is not its own */
    tr_procs_add_root (a, 800);
    assert_int_equal (tr_procs_count (a), 0);
    assert_int_equal (tr_exit_window_count (w), 1);
    /* and the window outlives its tables */
    checked_destroy (a);
    checked_destroy (b);
    assert_int_equal (tr_exit_window_count (w), 1);
    assert_int_equal (tr_exit_window_add (w, NULL), -1);
    tr_exit_window_destroy (w);
}

/* A multithreaded process: its CPU, I/O and run-queue wait are the sum
 * of its threads' records; the group record adds nothing.  Exit codes
 * and signals are counted per tool.
 */
static void test_exit_threads (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t s = now_ms () - 10000;
    struct tr_exit t1 = mkexit (801, 800, 500, "app", false, s + 1, s + 100);
    struct tr_exit t2 = mkexit (802, 800, 500, "app", false, s + 2, s + 200);
    struct tr_exit lead = mkexit (800, 800, 500, "app", true, s, s + 300);
    struct tr_exit group, kill9 = mkexit (900, 900, 500, "victim", true, s,
                                          s + 50);
    uint64_t delay[3];
    json_t *tools, *r;

    (void)state;
    assert_non_null (p);
    tr_procs_add_root (p, 500);
    t1.group_start_unix_ms = t2.group_start_unix_ms = s;
    t1.utime_us = 100000;
    t1.io.read_bytes = 1024;
    t1.delays = true;
    t1.cpu_delay_ns = 1000000;
    t1.blkio_delay_ns = 7;
    t1.swapin_delay_ns = 3;
    t2.stime_us = 50000;
    t2.delays = true;
    t2.cpu_delay_ns = 2000000;
    lead.utime_us = 200000;
    lead.exit_status = 3 << 8;
    lead.hiwater_rss_bytes = 1 << 20;
    lead.delays = true;
    lead.cpu_delay_ns = 3000000;
    group = lead;
    group.aggr = TR_EXIT_TGID;
    group.cpu_delay_ns = 6000000;
    kill9.exit_status = SIGKILL;
    kill9.signaled = true;

    assert_int_equal (tr_procs_exit (p, &t1), 1);
    assert_int_equal (tr_procs_count_live (p), 1);
    assert_int_equal (tr_procs_exit (p, &t2), 1);
    assert_int_equal (tr_procs_exit (p, &lead), 1);
    assert_int_equal (tr_procs_exit (p, &group), 1);
    assert_int_equal (tr_procs_exit (p, &lead), 1); /* duplicate */
    assert_int_equal (tr_procs_exit (p, &kill9), 1);
    assert_int_equal (tr_procs_count (p), 2);
    assert_int_equal (tr_procs_count_live (p), 0);

    assert_non_null (tools = tr_procs_tools_json (p));
    assert_non_null (r = row (tools, "app"));
    assert_int_equal (ival (r, "count"), 1);
    assert_true (rval (r, "cpu_s") > 0.3499 && rval (r, "cpu_s") < 0.3501);
    assert_true (rval (r, "runq_wait_s") > 0.00599
                 && rval (r, "runq_wait_s") < 0.00601);
    assert_int_equal (ival (r, "read_bytes"), 1024);
    assert_int_equal (ival (r, "peak_rss_bytes"), 1 << 20);
    assert_int_equal (ival (json_object_get (r, "exit_codes"), "3"), 1);
    assert_true (json_is_true (json_object_get (r, "exact")));
    assert_non_null (r = row (tools, "victim"));
    assert_int_equal (ival (json_object_get (r, "signals"), "9"), 1);
    assert_int_equal (json_object_size (json_object_get (r, "exit_codes")),
                      0);
    assert_tools_valid (tools);
    json_decref (tools);

    tr_procs_delays (p, delay);
    assert_int_equal (delay[0], 6000000);
    assert_int_equal (delay[1], 3);
    assert_int_equal (delay[2], 7);
    assert_true (tr_procs_runq_wait_s (p) > 0.00599
                 && tr_procs_runq_wait_s (p) < 0.00601);
    checked_destroy (p);
}

/* The step's CPU from the table: every process's own CPU once, the
 * ended ones folded out of the table included, with its user part; exact
 * only while every exit record carried the scheduler's run time and no
 * event was lost.  A record with only the tick split makes its row and
 * the sum inexact.
 */
static void test_step_cpu (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t s = now_ms () - 10000;
    struct tr_exit t1 = mkexit (801, 800, 500, "app", false, s + 1, s + 100);
    struct tr_exit lead = mkexit (800, 800, 500, "app", true, s, s + 300);
    struct tr_exit tick = mkexit (900, 900, 500, "ticked", true, s, s + 50);
    uint64_t total, user;
    json_t *tools;

    (void)state;
    assert_non_null (p);
    tr_procs_add_root (p, 500);
    t1.group_start_unix_ms = s;
    t1.utime_us = 100000;
    t1.stime_us = 50000;
    lead.utime_us = 200000;
    assert_int_equal (tr_procs_exit (p, &t1), 1);
    assert_int_equal (tr_procs_exit (p, &lead), 1);
    /* more short children than the table keeps: most are folded */
    for (int i = 0; i < 700; i++) {
        struct tr_exit c = mkexit (2000 + i, 2000 + i, 500, "short", true,
                                   s + 400 + i, s + 401 + i);
        c.utime_us = 700;
        c.stime_us = 300;
        assert_int_equal (tr_procs_exit (p, &c), 1);
    }
    assert_true (tr_procs_cpu (p, &total, &user));
    assert_int_equal (total, 350000 + 700 * 1000);
    assert_int_equal (user, 300000 + 700 * 700);

    tick.utime_us = 40000;
    tick.cpu_exact = false;
    assert_int_equal (tr_procs_exit (p, &tick), 1);
    assert_false (tr_procs_cpu (p, &total, &user));
    assert_int_equal (total, 350000 + 700 * 1000 + 40000);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_false (json_is_true (json_object_get (row (tools, "ticked"),
                                                 "exact")));
    assert_true (json_is_true (json_object_get (row (tools, "app"),
                                                "exact")));
    assert_true (json_is_true (json_object_get (row (tools, "short"),
                                                "exact")));
    json_decref (tools);
    /* the tick-split process folded out of the table stays inexact */
    for (int i = 0; i < 600; i++) {
        struct tr_exit c = mkexit (4000 + i, 4000 + i, 500, "short", true,
                                   s + 2000 + i, s + 2001 + i);
        assert_int_equal (tr_procs_exit (p, &c), 1);
    }
    assert_false (tr_procs_cpu (p, &total, &user));
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_false (json_is_true (json_object_get (row (tools, "ticked"),
                                                 "exact")));
    json_decref (tools);
    checked_destroy (p);

    /* an exit event lost: the sum cannot be exact */
    assert_non_null (p = tr_procs_create (NULL, NULL));
    tr_procs_add_root (p, 500);
    assert_int_equal (tr_procs_exit (p, &lead), 1);
    assert_true (tr_procs_cpu (p, &total, &user));
    tr_procs_set_lost (p, 1);
    assert_false (tr_procs_cpu (p, &total, &user));
    checked_destroy (p);
}

/* Write file path under dir with text. */
static void put_file (const char *dir, const char *path, const char *text)
{
    char full[1024];
    FILE *f;

    snprintf (full, sizeof (full), "%s/%s", dir, path);
    assert_non_null (f = fopen (full, "w"));
    fputs (text, f);
    fclose (f);
}

/* Processes first read with children already reaped (cutime + cstime
 * 0.5 s each).  Job 200's child left its exit record in the window of
 * held events, pushed out by other processes' exits before 200 was
 * known (a busy node); job 300's child's record was still held and is
 * attributed once 300 is read.  The step's CPU has both from the
 * readings, without counting 301 twice.
 */
static void test_unseen_children (void **state)
{
    char root[] = "/tmp/tracer-procs.XXXXXX", dir[600];
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    struct tr_exit kid1 = mkexit (201, 201, 200, "kid", true, START_MS (1100),
                                  START_MS (1200));
    struct tr_exit kid2 = mkexit (301, 301, 300, "kid", true, START_MS (1100),
                                  START_MS (1200));
    const pid_t pids[] = { 200, 300 };
    uint64_t total, user;

    (void)state;
    assert_non_null (p);
    assert_non_null (mkdtemp (root));
    snprintf (dir, sizeof (dir), "%s/proc", root);
    assert_int_equal (mkdir (dir, 0755), 0);
    put_file (root, "proc/stat", "cpu  10 0 10 100 0 0 0 0 0 0\n"
                                 "btime 1700000000\n");
    for (int i = 0; i < 2; i++) {
        char path[64], text[256];
        int pid = i ? 300 : 200;
        snprintf (dir, sizeof (dir), "%s/proc/%d", root, pid);
        assert_int_equal (mkdir (dir, 0755), 0);
        /* utime 50, stime 10, cutime 30, cstime 20 ticks; started at 1000 */
        snprintf (path, sizeof (path), "proc/%d/stat", pid);
        snprintf (text, sizeof (text),
                  "%d (job) S 1 %d %d 0 -1 4194304 0 0 0 0 50 10 30 20 20 0 1 "
                  "0 1000 10000000 100 18446744073709551615\n", pid, pid, pid);
        put_file (root, path, text);
        snprintf (path, sizeof (path), "proc/%d/status", pid);
        put_file (root, path, "Name:\tjob\nVmHWM:\t  100 kB\n");
    }
    kid1.utime_us = kid2.utime_us = 150000;
    kid1.stime_us = kid2.stime_us = 50000;
    /* the parents are not known yet: the records are held, and 201's is
     * pushed out by 128 exits of another parent
     */
    assert_int_equal (tr_procs_exit (p, &kid1), 0);
    for (int i = 0; i < 128; i++) {
        struct tr_exit o = mkexit (5000 + i, 5000 + i, 999, "other", true,
                                   START_MS (1100), START_MS (1150));
        assert_int_equal (tr_procs_exit (p, &o), 0);
    }
    assert_int_equal (tr_procs_exit (p, &kid2), 0);
    tr_fsroot_set (root);
    assert_int_equal (tr_procs_scan (p, pids, 2, T1), 2);
    /* each job 0.6 s of its own; 201 unseen, 0.5 s from 200's reading;
     * 301's 0.2 s and 0.3 s more from 300's; user in the ratio 30:50
     */
    assert_true (tr_procs_cpu (p, &total, &user));
    assert_int_equal (total, 600000 + 500000 + 600000 + 200000 + 300000);
    assert_int_equal (user, 500000 + 300000 + 500000 + 150000 + 180000);
    assert_int_equal (tr_procs_count (p), 3);
    /* the jobs end: their exit records do not count the children again */
    for (int i = 0; i < 2; i++) {
        struct tr_exit job = mkexit (i ? 300 : 200, i ? 300 : 200, 1, "job",
                                     true, START_MS (1000), T1 + 1000);
        job.utime_us = 500000;
        job.stime_us = 100000;
        assert_int_equal (tr_procs_exit (p, &job), 1);
    }
    assert_int_equal (tr_procs_count_live (p), 0);
    assert_true (tr_procs_cpu (p, &total, &user));
    assert_int_equal (total, 2200000);
    tr_fsroot_set (NULL);
    checked_destroy (p);
    assert_int_equal (rmtree (root), 0);
}

/* Write proc/PID/stat under root for a process "job" started at tick
 * 1000 with utime 50 and stime 10 ticks and the given reaped children's
 * cutime and cstime.
 */
static void put_job_stat (const char *root, int pid, int cutime, int cstime)
{
    char path[64], text[256];

    snprintf (path, sizeof (path), "proc/%d/stat", pid);
    snprintf (text, sizeof (text),
              "%d (job) S 1 %d %d 0 -1 4194304 0 0 0 0 50 10 %d %d 20 0 1 "
              "0 1000 10000000 100 18446744073709551615\n",
              pid, pid, pid, cutime, cstime);
    put_file (root, path, text);
}

/* The sum of the rows' cpu_s, in microseconds. */
static uint64_t rows_cpu_us (json_t *tools)
{
    double sum = 0;
    size_t i;
    json_t *r;

    json_array_foreach (tools, i, r)
        sum += rval (r, "cpu_s");
    return (uint64_t)(sum * 1e6 + 0.5);
}

/* The ends of runs that exit records miss.  The kernel sends a process's
 * exit record with its run time as the scheduler last updated it (up to
 * a tick old) and before do_exit() frees its memory; its parent's cutime
 * + cstime holds the whole run.  Job 200 reaps ten short children (1 ms
 * each by their records) and one long one (0.5 s); its cutime + cstime
 * then say 0.6 s: 90 ms more, one share per child, in the children's
 * rows.  The rows add up to the step's CPU as the table sums it.  Then
 * the job ends, and its own parent, the caller (tracer-run), says that
 * it reaped 1.25 s: 50 ms more than the job's 1.2 s, shared by the job
 * and the eleven below it.
 */
static void test_reaped_ends (void **state)
{
    char root[] = "/tmp/tracer-procs.XXXXXX", dir[600];
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    const pid_t pids[] = { 200 };
    struct tr_exit job = mkexit (200, 200, 1, "job", true, START_MS (1000),
                                 T1 + 2000);
    uint64_t total, user;
    json_t *tools;

    (void)state;
    assert_non_null (p);
    assert_non_null (mkdtemp (root));
    snprintf (dir, sizeof (dir), "%s/proc", root);
    assert_int_equal (mkdir (dir, 0755), 0);
    put_file (root, "proc/stat", "cpu  10 0 10 100 0 0 0 0 0 0\n"
                                 "btime 1700000000\n");
    snprintf (dir, sizeof (dir), "%s/proc/200", root);
    assert_int_equal (mkdir (dir, 0755), 0);
    put_file (root, "proc/200/status", "Name:\tjob\nVmHWM:\t  100 kB\n");
    put_job_stat (root, 200, 0, 0);
    tr_fsroot_set (root);
    tr_procs_add_root (p, 200);
    assert_int_equal (tr_procs_scan (p, pids, 1, T1), 1);
    for (int i = 0; i < 11; i++) {
        struct tr_exit c = mkexit (300 + i, 300 + i, 200, i < 10 ? "short"
                                                                 : "long",
                                   true, START_MS (1100 + i),
                                   START_MS (1101 + i));
        c.utime_us = i < 10 ? 800 : 400000;
        c.stime_us = i < 10 ? 200 : 100000;
        assert_int_equal (tr_procs_exit (p, &c), 1);
    }
    /* the job reaped them: read again, whatever the budget */
    put_job_stat (root, 200, 40, 20);
    assert_int_equal (tr_procs_read_reapers (p, T1 + 1000), 1);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (ival (row (tools, "short"), "count"), 10);
    assert_true (rval (row (tools, "short"), "cpu_s") > 0.0918
                 && rval (row (tools, "short"), "cpu_s") < 0.0919);
    assert_true (rval (row (tools, "long"), "cpu_s") > 0.5081
                 && rval (row (tools, "long"), "cpu_s") < 0.5082);
    assert_true (rval (row (tools, "job"), "cpu_s") == 0.6);
    tr_procs_cpu (p, &total, &user);
    assert_int_equal (total, 600000 + 600000);
    assert_int_equal (rows_cpu_us (tools), total);
    json_decref (tools);

    /* the job ends; its reaper is the caller */
    job.utime_us = 500000;
    job.stime_us = 100000;
    assert_int_equal (tr_procs_exit (p, &job), 1);
    assert_int_equal (tr_procs_set_reaped (p, pids, 1, 1250000, 1000000), 0);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_true (tr_procs_cpu (p, &total, &user));
    assert_int_equal (total, 1250000);
    assert_int_equal (rows_cpu_us (tools), total);
    /* 50 ms in twelve shares: the job's one */
    assert_true (rval (row (tools, "job"), "cpu_s") > 0.6041
                 && rval (row (tools, "job"), "cpu_s") < 0.6042);
    json_decref (tools);
    /* a caller that reaped nothing the table knows adds nothing */
    {
        const pid_t other[] = { 999 };
        assert_int_equal (tr_procs_set_reaped (p, other, 1, 5000000, 0), 0);
        assert_true (tr_procs_cpu (p, &total, &user));
        assert_int_equal (total, 1200000);
    }
    assert_int_equal (tr_procs_set_reaped (p, pids, 1, 1, 2), -1);
    assert_int_equal (errno, EINVAL);
    tr_fsroot_set (NULL);
    checked_destroy (p);
    assert_int_equal (rmtree (root), 0);
}

/* A prologue (210) below the job's process (200), and the qstat it runs
 * (211), excluded: their exits are not the step's, neither as tools nor
 * in its CPU, and once 200 has reaped them its cutime does not read as
 * children the table missed.
 */
static void test_excluded (void **state)
{
    char root[] = "/tmp/tracer-procs.XXXXXX", dir[600];
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    struct tr_exit qstat = mkexit (211, 211, 210, "qstat", true,
                                   START_MS (1060), START_MS (1070));
    struct tr_exit prologue = mkexit (210, 210, 200, "tracer-prolog", true,
                                      START_MS (1050), START_MS (1080));
    const pid_t pids[] = { 200 };
    uint64_t total, user;
    json_t *tools;

    (void)state;
    assert_non_null (p);
    assert_non_null (mkdtemp (root));
    snprintf (dir, sizeof (dir), "%s/proc", root);
    assert_int_equal (mkdir (dir, 0755), 0);
    snprintf (dir, sizeof (dir), "%s/proc/200", root);
    assert_int_equal (mkdir (dir, 0755), 0);
    snprintf (dir, sizeof (dir), "%s/proc/210", root);
    assert_int_equal (mkdir (dir, 0755), 0);
    put_file (root, "proc/stat", "cpu  10 0 10 100 0 0 0 0 0 0\n"
                                 "btime 1700000000\n");
    put_file (root, "proc/200/stat",
              "200 (job) S 1 200 200 0 -1 4194304 0 0 0 0 50 10 0 0 20 0 1 "
              "0 1000 10000000 100 18446744073709551615\n");
    put_file (root, "proc/210/stat",
              "210 (tracer-prolog) S 200 200 200 0 -1 4194304 0 0 0 0 0 0 0 "
              "0 20 0 1 0 1050 10000000 100 18446744073709551615\n");
    tr_fsroot_set (root);
    assert_int_equal (tr_procs_scan (p, pids, 1, T1), 1);
    assert_int_equal (tr_procs_exclude (p, 210), 0);
    assert_int_equal (tr_procs_exclude (p, 210), 0); /* once */
    assert_int_equal (tr_procs_exclude (p, 999), -1);
    assert_int_equal (errno, ESRCH);
    qstat.utime_us = 15000;
    prologue.stime_us = 5000;
    assert_int_equal (tr_procs_exit (p, &qstat), 1);
    assert_int_equal (tr_procs_exit (p, &prologue), 1);
    assert_int_equal (tr_procs_count (p), 1);
    assert_int_equal (tr_procs_excluded_us (p), 20000);
    /* 200 reaped the prologue: 2 ticks of cutime, all of them excluded */
    put_file (root, "proc/200/stat",
              "200 (job) S 1 200 200 0 -1 4194304 0 0 0 0 50 10 1 1 20 0 1 "
              "0 1000 10000000 100 18446744073709551615\n");
    assert_int_equal (tr_procs_scan (p, pids, 1, T2), 1);
    assert_true (tr_procs_cpu (p, &total, &user));
    assert_int_equal (total, 600000);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (json_array_size (tools), 1);
    assert_null (row (tools, "qstat"));
    json_decref (tools);
    tr_fsroot_set (NULL);
    checked_destroy (p);
    assert_int_equal (rmtree (root), 0);
}

/* Thousands of processes: ended ones fold into per-tool sums without
 * changing the totals; names past the tracked limit and rows past
 * tools_max land in "(other)".
 */
static pid_t idle_child (void)
{
    pid_t pid = fork ();

    assert_true (pid >= 0);
    if (pid == 0) {
        pause ();
        _exit (0);
    }
    return pid;
}

static void end_child (pid_t pid)
{
    assert_int_equal (kill (pid, SIGKILL), 0);
    assert_int_equal (waitpid (pid, NULL, 0), pid);
}

/* The budgeted scan against real processes: new ones are always read,
 * known ones only in their turn (a gone one stays listed until then),
 * and budget 0 reads every one.
 */
static void test_scan_some (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    pid_t pids[8], kids[7];
    size_t n = 6;

    (void)state;
    assert_non_null (p);
    for (int i = 0; i < 7; i++)
        kids[i] = idle_child ();
    memcpy (pids, kids, 6 * sizeof (pid_t));
    /* all six are new: all read */
    assert_int_equal (tr_procs_scan_some (p, pids, &n, 2, false, now_ms ()), 6);
    assert_int_equal (n, 6);
    assert_int_equal (tr_procs_count_live (p), 6);
    assert_true (tr_procs_rss (p) > 0);
    /* the last one ends; the turn is at [2, 3]; a seventh is new */
    end_child (kids[5]);
    pids[n++] = kids[6];
    assert_int_equal (tr_procs_scan_some (p, pids, &n, 2, false, now_ms ()), 3);
    assert_int_equal (n, 7);
    assert_int_equal (tr_procs_count_live (p), 7);
    /* [4, 5]: kids[5] is read, found gone and dropped */
    assert_int_equal (tr_procs_scan_some (p, pids, &n, 2, false, now_ms ()), 1);
    assert_int_equal (n, 6);
    assert_int_equal (tr_procs_count_live (p), 6);
    for (size_t i = 0; i < n; i++)
        assert_int_not_equal (pids[i], kids[5]);
    assert_int_equal (tr_procs_count (p), 7);
    /* budget 0: everything, at once */
    end_child (kids[0]);
    assert_int_equal (tr_procs_scan_some (p, pids, &n, 0, false, now_ms ()), 5);
    assert_int_equal (n, 5);
    assert_int_equal (tr_procs_count_live (p), 5);
    /* the same list again: only the turn [0, 1] is looked at, kids[1]
     * is found gone there, and nothing else changes
     */
    end_child (kids[1]);
    assert_int_equal (tr_procs_scan_some (p, pids, &n, 2, true, now_ms ()),
                      1);
    assert_int_equal (n, 4);
    assert_int_equal (tr_procs_count_live (p), 4);
    assert_int_equal (pids[0], kids[2]);
    assert_int_equal (tr_procs_scan_some (p, pids, &n, 2, true, now_ms ()),
                      2);
    assert_int_equal (n, 4);
    for (int i = 2; i < 7; i++)
        if (i != 5)
            end_child (kids[i]);
    checked_destroy (p);
}

/* A kept /proc file: reread with the kernel's current text, then gone
 * (ESRCH) once its process has ended, and remembered so; a missing file
 * is ENOENT; closing forgets.
 */
static void test_kept_file (void **state)
{
    struct tr_kept k = TR_KEPT_INIT, none = TR_KEPT_INIT;
    char path[64], buf[1024], first[1024];
    pid_t kid = idle_child ();

    (void)state;
    snprintf (path, sizeof (path), "/proc/%d", (int)kid);
    assert_true (tr_kept_read (&k, path, "stat", buf, sizeof (buf)) > 0);
    assert_true (k.fd >= 0);
    memcpy (first, buf, sizeof (buf));
    assert_true (tr_kept_read (&k, path, "stat", buf, sizeof (buf)) > 0);
    assert_int_equal (strncmp (buf, first, strlen (path) - 6), 0);
    /* a buffer too small for the text gets what fits, terminated */
    assert_int_equal (tr_kept_read (&k, path, "stat", buf, 8), 7);
    assert_int_equal (strlen (buf), 7);
    end_child (kid);
    errno = 0;
    assert_int_equal (tr_kept_read (&k, path, "stat", buf, sizeof (buf)), -1);
    assert_int_equal (errno, ESRCH);
    assert_int_equal (k.fd, -1);
    errno = 0;
    assert_int_equal (tr_kept_read (&k, path, "stat", buf, sizeof (buf)), -1);
    assert_int_equal (errno, ESRCH);
    tr_kept_close (&k);
    assert_int_equal (tr_kept_read (&k, path, "stat", buf, sizeof (buf)), -1);
    assert_int_equal (errno, ENOENT);
    tr_kept_close (&k);
    assert_int_equal (tr_kept_read (&none, "/proc/self", "no-such-file", buf,
                                    sizeof (buf)), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (none.err, ENOENT);
    tr_kept_close (&none);
    assert_int_equal (none.err, 0);
}

static void test_many (void **state)
{
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t s = now_ms () - 100000;
    struct tr_proc_io io;
    json_t *tools, *r;
    json_int_t count = 0;
    size_t i;

    (void)state;
    assert_non_null (p);
    tr_procs_add_root (p, 500);
    for (int k = 0; k < 3000; k++) {
        struct tr_exit ev = mkexit (10000 + k, 10000 + k, 500, "true", true,
                                    s + k, s + k + 5);
        ev.utime_us = 1000;
        ev.io.read_bytes = 1024;
        ev.exit_status = (k % 2) << 8;
        assert_int_equal (tr_procs_exit (p, &ev), 1);
    }
    assert_int_equal (tr_procs_count (p), 3000);
    tr_procs_io (p, &io);
    assert_int_equal (tr_procs_check (p), 0);
    assert_int_equal (io.read_bytes, 3000 * 1024);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (json_array_size (tools), 1);
    r = row (tools, "true");
    assert_int_equal (ival (r, "count"), 3000);
    assert_true (rval (r, "cpu_s") > 2.999 && rval (r, "cpu_s") < 3.001);
    assert_int_equal (ival (json_object_get (r, "exit_codes"), "0"), 1500);
    assert_int_equal (ival (json_object_get (r, "exit_codes"), "1"), 1500);
    assert_true (json_is_true (json_object_get (r, "exact")));
    assert_int_equal (ival (r, "first_start_unix_ms"), s);
    assert_int_equal (ival (r, "last_end_unix_ms"), s + 2999 + 5);
    json_decref (tools);

    /* 1100 distinct names, name k with k ms of CPU */
    for (int k = 1; k <= 1100; k++) {
        char name[16];
        struct tr_exit ev;
        snprintf (name, sizeof (name), "t%d", k);
        ev = mkexit (20000 + k, 20000 + k, 500, name, true, s + k, s + k + 1);
        ev.utime_us = (uint64_t)k * 1000;
        ev.exit_status = SIGTERM;
        assert_int_equal (tr_procs_exit (p, &ev), 1);
    }
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (json_array_size (tools), TR_PROCS_TOOLS_DEFAULT + 1);
    /* "true" has 3 s; names past the 1024th (t1024 on) are "(other)"
     * from the start, so the next row is t1023
     */
    assert_string_equal (
        json_string_value (json_object_get (json_array_get (tools, 0),
                                            "name")),
        "true");
    assert_string_equal (
        json_string_value (json_object_get (json_array_get (tools, 1),
                                            "name")),
        "t1023");
    json_array_foreach (tools, i, r)
    {
        count += ival (r, "count");
    }
    assert_int_equal (count, 4100);
    assert_non_null (r = row (tools, "(other)"));
    assert_int_equal (ival (r, "count"), 1100 - 63);
    assert_int_equal (ival (json_object_get (r, "signals"), "15"),
                      1100 - 63);
    assert_null (json_object_get (r, "cmdline"));
    assert_tools_valid (tools);
    json_decref (tools);
    checked_destroy (p);
}

/* tools_max folds the tail of the table into "(other)". */
static void test_tools_max (void **state)
{
    struct tr_procs_opts o = { .tools_max = 2 };
    tr_procs_t *p = tr_procs_create (&o, NULL);
    json_t *tools, *r;

    (void)state;
    assert_non_null (p);
    assert_int_equal (scan_fixture (p, "scan1", scan1_pids, 5, T1), 4);
    assert_int_equal (scan_fixture (p, "scan2", scan2_pids, 3, T2), 3);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (json_array_size (tools), 3);
    assert_string_equal (
        json_string_value (json_object_get (json_array_get (tools, 0),
                                            "name")),
        "train.py");
    assert_string_equal (
        json_string_value (json_object_get (json_array_get (tools, 1),
                                            "name")),
        "dd");
    r = json_array_get (tools, 2);
    assert_string_equal (json_string_value (json_object_get (r, "name")),
                         "(other)");
    /* bash, my (weird) prog, sleep */
    assert_int_equal (ival (r, "count"), 3);
    assert_true (rval (r, "cpu_s") > 1.299 && rval (r, "cpu_s") < 1.301);
    assert_int_equal (ival (r, "read_bytes"), 4392);
    assert_int_equal (ival (r, "first_start_unix_ms"), START_MS (1000));
    assert_tools_valid (tools);
    json_decref (tools);
    checked_destroy (p);
}

/* A /proc of the test's making, under a temporary fsroot. */
static char fake_root[64];

static void fake_put (const char *rel, const char *text)
{
    char path[PATH_MAX], *slash;
    FILE *f;

    snprintf (path, sizeof (path), "%s%s", fake_root, rel);
    for (slash = path + strlen (fake_root) + 1; (slash = strchr (slash, '/'));
         slash++) {
        *slash = '\0';
        if (mkdir (path, 0755) < 0 && errno != EEXIST)
            fail_msg ("mkdir %s: %s", path, strerror (errno));
        *slash = '/';
    }
    assert_non_null (f = fopen (path, "w"));
    assert_true (fputs (text, f) >= 0);
    assert_int_equal (fclose (f), 0);
}

/* A stat line: utime, stime and rss as given (text, so that a sign can
 * be planted); tpgid -1 and nice -5 as the kernel writes them.
 */
static void fake_stat (int pid,
                       const char *comm,
                       const char *utime,
                       const char *threads,
                       const char *start,
                       const char *rss)
{
    char rel[64], text[512];

    snprintf (rel, sizeof (rel), "/proc/%d/stat", pid);
    snprintf (text, sizeof (text),
              "%d (%s) S 1 %d %d 0 -1 4194560 50 0 0 0 %s 10 0 0 25 -5 %s 0 "
              "%s 1000000 %s 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 0 "
              "0 17 0 0 0 0 0 0\n",
              pid, comm, pid, pid, utime, threads, start, rss);
    fake_put (rel, text);
}

static void fake_files (int pid,
                        const char *hwm,
                        const char *read_bytes,
                        const char *schedstat)
{
    char rel[64], text[512];

    snprintf (rel, sizeof (rel), "/proc/%d/status", pid);
    snprintf (text, sizeof (text),
              "Name:\tx\nState:\tS (sleeping)\nVmHWM:\t%s kB\n"
              "VmRSS:\t 100 kB\nThreads:\t1\n", hwm);
    fake_put (rel, text);
    snprintf (rel, sizeof (rel), "/proc/%d/io", pid);
    snprintf (text, sizeof (text),
              "rchar: 100\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: %s\n"
              "write_bytes: 0\ncancelled_write_bytes: 0\n", read_bytes);
    fake_put (rel, text);
    snprintf (rel, sizeof (rel), "/proc/%d/schedstat", pid);
    fake_put (rel, schedstat);
    snprintf (rel, sizeof (rel), "/proc/%d/cmdline", pid);
    fake_put (rel, "x");
}

/* A process of the fake /proc running the program fake_root/bin/prog
 * (an exe link to a file there, made once) with the NUL-separated
 * arguments args (len bytes).  Returns the program's inode.
 */
static struct stat fake_proc (int pid, const char *comm, const char *prog,
                              const char *args, size_t len)
{
    char rel[64], path[PATH_MAX], target[PATH_MAX];
    struct stat sb;
    FILE *f;

    snprintf (rel, sizeof (rel), "/bin/%s", prog);
    snprintf (target, sizeof (target), "%s%s", fake_root, rel);
    if (stat (target, &sb) < 0)
        fake_put (rel, "#!/bin/false\n");
    assert_int_equal (stat (target, &sb), 0);
    fake_stat (pid, comm, "100", "1", "500", "25");
    fake_files (pid, "2048", "0", "1000 3000000 5\n");
    snprintf (path, sizeof (path), "%s/proc/%d/exe", fake_root, pid);
    assert_int_equal (symlink (target, path), 0);
    snprintf (path, sizeof (path), "%s/proc/%d/cmdline", fake_root, pid);
    assert_non_null (f = fopen (path, "w"));
    assert_int_equal (fwrite (args, 1, len, f), len);
    assert_int_equal (fclose (f), 0);
    return sb;
}

#define ARGS(s) s, sizeof (s) - 1

/* Tools named by the rule table from the command line (tools.c): two
 * samtools subcommands, the gatk launcher (a python script), picard by
 * java -jar, a script through env; a hostile command line names the
 * program only.  A process of such a program seen only by its exit event
 * is named from the program and its comm, never by another process's
 * arguments: the executable does not say which subcommand ran.
 */
static void test_tool_names (void **state)
{
    static const pid_t pids[] = { 400, 401, 402, 403, 404, 405 };
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    int64_t t = now_ms ();
    struct stat sam, py;
    struct tr_exit ev;
    json_t *tools, *r;
    char *hostile = malloc (10300);

    (void)state;
    assert_non_null (p);
    assert_non_null (hostile);
    snprintf (fake_root, sizeof (fake_root), "/tmp/tracer-procs.XXXXXX");
    assert_non_null (mkdtemp (fake_root));
    fake_put ("/proc/stat", "cpu  1 2 3 4\nbtime 1000\nprocesses 9\n");
    sam = fake_proc (400, "samtools", "samtools",
                     ARGS ("samtools\0sort\0-o\0x.bam\0in.bam\0"));
    fake_proc (401, "samtools", "samtools",
               ARGS ("samtools\0index\0x.bam\0"));
    py = fake_proc (402, "python3", "python3.11",
                    ARGS ("python3\0/opt/gatk/gatk\0HaplotypeCaller\0-R\0"
                          "r.fa\0"));
    fake_proc (403, "java", "java",
               ARGS ("java\0-Xmx1g\0-jar\0/opt/picard.jar\0"
                     "MarkDuplicates\0I=x.bam\0"));
    fake_proc (404, "python3", "python3.11",
               ARGS ("/usr/bin/env\0python3\0./qc.py\0"));
    /* a 10 kB first argument with control characters */
    memcpy (hostile, "samtools", 9);
    memset (hostile + 9, 'a', 10240);
    hostile[100] = '\x1b';
    hostile[9 + 10240] = '\0';
    fake_proc (405, "samtools", "samtools", hostile, 9 + 10241);
    tr_fsroot_set (fake_root);
    assert_int_equal (tr_procs_scan (p, pids, 6, t), 6);
    tr_fsroot_set (NULL);
    tr_procs_add_root (p, 400);
    /* children of 400 seen only at their exit */
    ev = mkexit (410, 410, 400, "samtools", true, t - 50, t);
    ev.exe_dev = (uint64_t)sam.st_dev;
    ev.exe_ino = (uint64_t)sam.st_ino;
    assert_int_equal (tr_procs_exit (p, &ev), 1);
    ev = mkexit (411, 411, 400, "myscript.py", true, t - 50, t);
    ev.exe_dev = (uint64_t)py.st_dev;
    ev.exe_ino = (uint64_t)py.st_ino;
    assert_int_equal (tr_procs_exit (p, &ev), 1);
    ev = mkexit (412, 412, 400, "python3", true, t - 50, t);
    ev.exe_dev = (uint64_t)py.st_dev;
    ev.exe_ino = (uint64_t)py.st_ino;
    assert_int_equal (tr_procs_exit (p, &ev), 1);

    assert_non_null (tools = tr_procs_tools_json (p));
    assert_non_null (r = row (tools, "samtools sort"));
    assert_int_equal (ival (r, "count"), 1);
    assert_int_equal (ival (r, "peak_rss_bytes"), 2048 * 1024);
    assert_string_equal (json_string_value (json_object_get (r, "cmdline")),
                         "samtools sort -o x.bam in.bam");
    assert_non_null (r = row (tools, "samtools index"));
    assert_int_equal (ival (r, "count"), 1);
    assert_non_null (r = row (tools, "gatk HaplotypeCaller"));
    assert_int_equal (ival (r, "count"), 1);
    assert_non_null (r = row (tools, "picard MarkDuplicates"));
    assert_non_null (r = row (tools, "qc.py"));
    /* the hostile one and the exit-only samtools: the program */
    assert_non_null (r = row (tools, "samtools"));
    assert_int_equal (ival (r, "count"), 2);
    assert_true (json_string_length (json_object_get (r, "cmdline"))
                 <= TR_PROCS_CMDLINE_DEFAULT);
    assert_non_null (r = row (tools, "myscript.py"));
    assert_int_equal (ival (r, "count"), 1);
    assert_non_null (r = row (tools, "python3.11"));
    assert_int_equal (ival (r, "count"), 1);
    assert_null (row (tools, "python3"));
    assert_null (row (tools, "java"));
    assert_null (row (tools, "env"));
    assert_int_equal (json_array_size (tools), 8);
    assert_tools_valid (tools);
    json_decref (tools);
    free (hostile);
    checked_destroy (p);
}

/* Counters that cannot be negative, written negative (a corrupt or
 * hostile /proc, a fuzzer's input): strtoull would take "-1" as 2^64 - 1
 * and strtoll's -5 would wrap the same way once stored unsigned.  Each
 * is refused: a stat line with a negative utime, thread count, start or
 * rss is not read at all; a negative VmHWM, I/O or run-queue figure is
 * not taken (the last readings stand); a negative btime is not the boot
 * time.  The control process, with tpgid -1 and nice -5 (negative by
 * right), is read whole.
 */
static void test_negative_counters (void **state)
{
    static const pid_t pids[] = { 300, 301, 302, 303, 304, 305 };
    tr_procs_t *p = tr_procs_create (NULL, NULL);
    json_t *tools, *r;
    struct tr_proc_io io;
    int64_t t = now_ms ();

    (void)state;
    assert_non_null (p);
    snprintf (fake_root, sizeof (fake_root), "/tmp/tracer-procs.XXXXXX");
    assert_non_null (mkdtemp (fake_root));
    fake_put ("/proc/stat", "cpu  1 2 3 4\nbtime -1\nprocesses 9\n");
    fake_stat (300, "ctl", "200", "1", "500", "25");
    fake_files (300, "2048", "4096", "1000 3000000 5\n");
    fake_stat (301, "negutime", "-5", "1", "500", "25");
    fake_stat (302, "negthreads", "1", "-1", "500", "25");
    fake_stat (303, "negstart", "1", "1", "-500", "25");
    fake_stat (304, "negrss", "1", "1", "500", "-25");
    fake_stat (305, "negfiles", "100", "1", "500", "0");
    fake_files (305, "-1", "-4096", "-1 -2 3\n");
    tr_fsroot_set (fake_root);
    assert_int_equal (tr_procs_scan (p, pids, 6, t), 2);
    tr_fsroot_set (NULL);
    assert_int_equal (tr_procs_count_live (p), 2);
    assert_non_null (tools = tr_procs_tools_json (p));
    assert_int_equal (json_array_size (tools), 2);
    assert_null (row (tools, "negutime"));
    assert_null (row (tools, "negthreads"));
    assert_null (row (tools, "negstart"));
    assert_null (row (tools, "negrss"));

    assert_non_null (r = row (tools, "ctl"));
    assert_true (rval (r, "cpu_s") > 2.099 && rval (r, "cpu_s") < 2.101);
    assert_int_equal (ival (r, "peak_rss_bytes"), 2048 * 1024);
    assert_int_equal (ival (r, "read_bytes"), 4096);
    assert_true (rval (r, "runq_wait_s") > 0.00299
                 && rval (r, "runq_wait_s") < 0.00301);
    /* btime refused: the boot time comes from the clocks, so the start
     * (5 s after boot) lies in the past, not near 2^64 ms
     */
    assert_true (ival (r, "first_start_unix_ms") > 1500000000000LL);
    assert_true (ival (r, "first_start_unix_ms") <= t);

    assert_non_null (r = row (tools, "negfiles"));
    assert_true (rval (r, "cpu_s") > 1.099 && rval (r, "cpu_s") < 1.101);
    assert_int_equal (ival (r, "peak_rss_bytes"), 0);
    assert_int_equal (ival (r, "read_bytes"), 0);
    assert_true (rval (r, "runq_wait_s") == 0.0);
    assert_tools_valid (tools);
    json_decref (tools);
    tr_procs_io (p, &io);
    assert_int_equal (tr_procs_check (p), 0);
    assert_int_equal (io.read_bytes, 4096);
    assert_int_equal (io.rchar, 100);
    checked_destroy (p);
}

static int fake_teardown (void **state)
{
    (void)state;
    tr_fsroot_set (NULL);
    if (fake_root[0] && rmtree (fake_root) < 0)
        return -1;
    fake_root[0] = '\0';
    return 0;
}

/* Root: the kernel's records. */

#define NKIDS 4

struct seen {
    pid_t kids[NKIDS];
    struct tr_exit ev[256];
    size_t n;
};

static void collect (const struct tr_exit *ev, void *arg)
{
    struct seen *s = arg;

    for (int i = 0; i < NKIDS; i++)
        if (ev->tgid == s->kids[i] && s->n < 256)
            s->ev[s->n++] = *ev;
}

static void *spin (void *arg)
{
    struct timespec t0, t;

    (void)arg;
    clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t0);
    do
        clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec
           < 40000000L);
    return NULL;
}

static void kid (int which)
{
    switch (which) {
    case 0:
        _exit (3);
    case 1:
        raise (SIGKILL);
        _exit (1);
    case 2: {
        pthread_t th[3];
        for (int i = 0; i < 3; i++)
            if (pthread_create (&th[i], NULL, spin, NULL) != 0)
                _exit (100);
        for (int i = 0; i < 3; i++)
            pthread_join (th[i], NULL);
        _exit (0);
    }
    default: {
        size_t big = 64 << 20;
        char *m = malloc (big), buf[4096], tmp[] = "/tmp/tracer-ts.XXXXXX";
        int fd;
        if (!m)
            _exit (101);
        memset (m, 1, big);
        if ((fd = mkstemp (tmp)) < 0)
            _exit (102);
        unlink (tmp);
        memset (buf, 'x', sizeof (buf));
        for (int i = 0; i < 64; i++)
            if (write (fd, buf, sizeof (buf)) != (ssize_t)sizeof (buf))
                _exit (103);
        close (fd);
        _exit (m[big - 1] == 1 ? 0 : 104);
    }
    }
}

static const struct tr_exit *last_of (struct seen *s, pid_t pid, int *nthr,
                                      const struct tr_exit **group)
{
    const struct tr_exit *last = NULL;

    *nthr = 0;
    *group = NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].tgid != pid)
            continue;
        if (s->ev[i].aggr == TR_EXIT_TGID) {
            *group = &s->ev[i];
            continue;
        }
        (*nthr)++;
        if (s->ev[i].group_exit)
            last = &s->ev[i];
    }
    return last;
}

static void test_taskstats_exits (void **state)
{
    tr_error_t err;
    tr_taskstats_t *ts;
    struct seen *s = calloc (1, sizeof (*s));
    int64_t t0 = now_ms (), deadline;
    const struct tr_exit *e, *g;
    uint64_t cpu = 0;
    int done = 0, nthr, status;

    (void)state;
    assert_non_null (s);
    ts = tr_taskstats_open (&err);
    if (!ts)
        fail_msg ("tr_taskstats_open: %s", err.text);
    assert_true (tr_taskstats_fd (ts) >= 0);
    for (int i = 0; i < NKIDS; i++) {
        pid_t pid = fork ();
        assert_true (pid >= 0);
        if (pid == 0)
            kid (i);
        s->kids[i] = pid;
    }
    for (int i = 0; i < NKIDS; i++)
        assert_int_equal (waitpid (s->kids[i], &status, 0), s->kids[i]);
    deadline = now_ms () + 10000;
    while (done < NKIDS && now_ms () < deadline) {
        struct pollfd pfd = { .fd = tr_taskstats_fd (ts), .events = POLLIN };
        (void)poll (&pfd, 1, 100);
        assert_true (tr_taskstats_read (ts, collect, s) >= 0);
        done = 0;
        for (int i = 0; i < NKIDS; i++)
            if (last_of (s, s->kids[i], &nthr, &g))
                done++;
    }
    assert_int_equal (done, NKIDS);
    assert_int_equal (tr_taskstats_lost (ts), 0);

    for (int i = 0; i < NKIDS; i++) {
        assert_non_null (e = last_of (s, s->kids[i], &nthr, &g));
        assert_int_equal (e->pid, s->kids[i]);
        assert_int_equal (e->ppid, getpid ());
        assert_int_equal (e->uid, getuid ());
        assert_true (e->version >= 1);
        assert_true (e->start_unix_ms >= t0 - 2000);
        assert_true (e->start_unix_ms <= e->end_unix_ms);
        assert_true (e->end_unix_ms <= now_ms () + 1000);
        assert_true (e->group_start_unix_ms <= e->start_unix_ms);
        assert_true (e->comm[0] != '\0');
    }
    e = last_of (s, s->kids[0], &nthr, &g);
    assert_true (WIFEXITED (e->exit_status));
    assert_int_equal (WEXITSTATUS (e->exit_status), 3);
    assert_int_equal (nthr, 1);
    assert_null (g); /* single-threaded: no group aggregate */

    e = last_of (s, s->kids[1], &nthr, &g);
    assert_true (WIFSIGNALED (e->exit_status));
    assert_int_equal (WTERMSIG (e->exit_status), SIGKILL);
    assert_true (e->signaled);

    e = last_of (s, s->kids[2], &nthr, &g);
    assert_true (WIFEXITED (e->exit_status));
    assert_int_equal (WEXITSTATUS (e->exit_status), 0);
    if (e->version >= 12) {
        /* three workers and the main thread, one of them last */
        assert_int_equal (nthr, 4);
        assert_non_null (g);
        assert_int_equal (g->pid, s->kids[2]);
        assert_int_equal (g->utime_us + g->stime_us, 0);
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].tgid == s->kids[2] && s->ev[i].aggr == TR_EXIT_PID)
            cpu += s->ev[i].utime_us + s->ev[i].stime_us;
    /* 3 x 40 ms, charged by ticks: allow for a few ticks missed */
    assert_true (cpu >= 3 * 20000);

    e = last_of (s, s->kids[3], &nthr, &g);
    assert_int_equal (WEXITSTATUS (e->exit_status), 0);
    assert_true (e->hiwater_rss_bytes >= 64u << 20);
    assert_true (e->io.wchar >= 64 * 4096);

    tr_taskstats_close (ts);
    free (s);
}

struct run {
    tr_procs_t *procs;
    pid_t task;
    bool task_done;
};

static void feed (const struct tr_exit *ev, void *arg)
{
    struct run *r = arg;

    assert_true (tr_procs_exit (r->procs, ev) >= 0);
    if (ev->tgid == r->task && ev->group_exit)
        r->task_done = true;
}

/* The use case: a task that runs 200 processes far shorter than the
 * sampling interval.  Every one is in the table, grouped by program,
 * with its exit code, and the record says the list is complete.
 */
static void test_short_children (void **state)
{
    tr_error_t err;
    tr_taskstats_t *ts = tr_taskstats_open (&err);
    struct run r = { 0 };
    int64_t deadline, next_scan = 0;
    bool reaped = false;
    json_t *tools, *row_t, *row_f;
    int status;

    (void)state;
    if (!ts)
        fail_msg ("tr_taskstats_open: %s", err.text);
    assert_non_null (r.procs = tr_procs_create (NULL, NULL));
    r.task = fork ();
    assert_true (r.task >= 0);
    if (r.task == 0) {
        for (int i = 0; i < 200; i++) {
            pid_t c = fork ();
            if (c < 0)
                _exit (1);
            if (c == 0) {
                if (i % 2)
                    execl ("/bin/false", "false", (char *)NULL);
                else
                    execl ("/bin/true", "true", (char *)NULL);
                _exit (127);
            }
            if (waitpid (c, NULL, 0) != c)
                _exit (2);
        }
        _exit (0);
    }
    tr_procs_add_root (r.procs, r.task);
    deadline = now_ms () + 30000;
    while (!(reaped && r.task_done) && now_ms () < deadline) {
        struct pollfd pfd = { .fd = tr_taskstats_fd (ts), .events = POLLIN };
        (void)poll (&pfd, 1, 20);
        assert_true (tr_taskstats_read (ts, feed, &r) >= 0);
        if (!reaped && waitpid (r.task, &status, WNOHANG) == r.task)
            reaped = true;
        if (now_ms () >= next_scan) {
            /* a dead task is gone from the step's pid list */
            assert_true (tr_procs_scan (r.procs, &r.task, reaped ? 0 : 1,
                                        now_ms ())
                         >= 0);
            next_scan = now_ms () + 100;
        }
    }
    assert_true (reaped);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    assert_true (r.task_done);
    assert_true (tr_procs_scan (r.procs, NULL, 0, now_ms ()) >= 0);
    tr_procs_set_lost (r.procs, tr_taskstats_lost (ts));

    assert_int_equal (tr_procs_count (r.procs), 201);
    assert_int_equal (tr_procs_count_live (r.procs), 0);
    assert_true (tr_procs_complete (r.procs));
    assert_non_null (tools = tr_procs_tools_json (r.procs));
    assert_non_null (row_t = row (tools, "true"));
    assert_non_null (row_f = row (tools, "false"));
    assert_int_equal (ival (row_t, "count"), 100);
    assert_int_equal (ival (row_f, "count"), 100);
    assert_int_equal (ival (json_object_get (row_t, "exit_codes"), "0"),
                      100);
    assert_int_equal (ival (json_object_get (row_f, "exit_codes"), "1"),
                      100);
    assert_true (json_is_true (json_object_get (row_t, "exact")));
    assert_true (ival (row_t, "peak_rss_bytes") > 0);
    assert_true (ival (row_t, "first_start_unix_ms")
                 <= ival (row_t, "last_end_unix_ms"));
    assert_int_equal (json_array_size (tools), 3);
    assert_tools_valid (tools);
    json_decref (tools);
    checked_destroy (r.procs);
    tr_taskstats_close (ts);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_scan_sampled, reset_fsroot),
        cmocka_unit_test_teardown (test_scan_with_exit, reset_fsroot),
        cmocka_unit_test_teardown (test_exit_pid_reuse, reset_fsroot),
        cmocka_unit_test_teardown (test_exit_start_skew, reset_fsroot),
        cmocka_unit_test_teardown (test_zombie, reset_fsroot),
        cmocka_unit_test_teardown (test_exiting, reset_fsroot),
        cmocka_unit_test_teardown (test_cmdline_redaction, reset_fsroot),
        cmocka_unit_test_teardown (test_redact_shared, reset_fsroot),
        cmocka_unit_test_teardown (test_exit_hostile_comm, reset_fsroot),
        cmocka_unit_test_teardown (test_cmdline_truncation, reset_fsroot),
        cmocka_unit_test (test_create_errors),
        cmocka_unit_test (test_exit_attribution),
        cmocka_unit_test (test_shared_window),
        cmocka_unit_test (test_exit_threads),
        cmocka_unit_test (test_step_cpu),
        cmocka_unit_test_teardown (test_unseen_children, reset_fsroot),
        cmocka_unit_test_teardown (test_reaped_ends, reset_fsroot),
        cmocka_unit_test_teardown (test_excluded, reset_fsroot),
        cmocka_unit_test (test_many),
        cmocka_unit_test_teardown (test_tools_max, reset_fsroot),
        cmocka_unit_test_teardown (test_negative_counters, fake_teardown),
        cmocka_unit_test_teardown (test_tool_names, fake_teardown),
        cmocka_unit_test (test_taskstats_exits),
        cmocka_unit_test (test_short_children),
        cmocka_unit_test_teardown (test_adopt_parent, reset_fsroot),
        cmocka_unit_test (test_scan_some),
        cmocka_unit_test (test_culprit),
        cmocka_unit_test (test_culprit_ties),
        cmocka_unit_test (test_kept_file),
    };

    tr_fsroot_set (NULL);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
