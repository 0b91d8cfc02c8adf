/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The metric sources: cgroup value files, PSI, block I/O, network and
 * topology parsers and
 * their JSON builders, against inline texts (table-driven), the fixture
 * trees under tests/fixtures/metrics and, where a test needs links or
 * odd files, trees built under a temporary fsroot.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "libtracer/node/cgroup.h"
#include "libtracer/util/fsroot.h"
#include "libtracer/node/iostat.h"
#include "libtracer/node/netstat.h"
#include "libtracer/node/psi.h"
#include "libtracer/record/record.h"
#include "libtracer/node/topology.h"
#include "rmtree.h"

#define FIXTURES TEST_SRCDIR "/fixtures/metrics"
#define FSROOT FIXTURES "/fsroot"

#define NELEM(a) (sizeof (a) / sizeof ((a)[0]))

static char tmproot[PATH_MAX];

/* helpers */

/* Write fsroot-relative path (creating parents) under tmproot. */
static void put (const char *path, const char *text)
{
    char full[PATH_MAX * 2], *p;
    FILE *f;

    snprintf (full, sizeof (full), "%s%s", tmproot, path);
    for (p = full + strlen (tmproot) + 1; (p = strchr (p, '/')); p++) {
        *p = '\0';
        mkdir (full, 0755);
        *p = '/';
    }
    assert_non_null (f = fopen (full, "w"));
    fputs (text, f);
    fclose (f);
}

static void tmp_path (char *buf, size_t size, const char *path)
{
    assert_true (snprintf (buf, size, "%s%s", tmproot, path) < (int)size);
}

static int setup_tmp (void **state)
{
    (void)state;
    snprintf (tmproot, sizeof (tmproot), "/tmp/tracer-metrics.XXXXXX");
    if (!mkdtemp (tmproot))
        return -1;
    tr_fsroot_set (tmproot);
    return 0;
}

static int teardown_tmp (void **state)
{
    (void)state;
    tr_fsroot_set (NULL);
    return rmtree (tmproot);
}

static int setup_fixture (void **state)
{
    (void)state;
    tr_fsroot_set (FSROOT);
    return 0;
}

static int teardown_fixture (void **state)
{
    (void)state;
    tr_fsroot_set (NULL);
    return 0;
}

static int teardown_topology (void **state)
{
    (void)state;
    tr_topology_reset ();
    unsetenv ("HWLOC_XMLFILE");
    tr_fsroot_set (NULL);
    return 0;
}

static json_int_t get_int (json_t *o, const char *key)
{
    json_t *v = json_object_get (o, key);

    if (!json_is_integer (v))
        fail_msg ("member '%s': not an integer", key);
    return json_integer_value (v);
}

static double get_real (json_t *o, const char *key)
{
    json_t *v = json_object_get (o, key);

    if (!json_is_real (v))
        fail_msg ("member '%s': not a real", key);
    return json_real_value (v);
}

static void assert_seconds (json_t *o, const char *key, double want)
{
    double got = get_real (o, key);

    if (got < want - 1e-9 || got > want + 1e-9)
        fail_msg ("%s: got %.9f, expected %.9f", key, got, want);
}

/* Put obj (borrowed) at section.member of a record skeleton whose other
 * required members are filled, and run the record validator's check of
 * that section on it.
 */
static void validate_in (const char *section, const char *member, json_t *obj)
{
    tr_error_t err;
    json_t *rec, *sec;

    assert_non_null (rec = tr_record_create ("final"));
    assert_non_null (sec = json_object_get (rec, section));
    if (!strcmp (section, "summary")) {
        json_object_set_new (sec, "cpu",
                             json_pack ("{s:f, s:f, s:f, s:s, s:b}", "user_s",
                                        1.0, "system_s", 0.5, "total_s", 1.5,
                                        "source", "cgroup2", "exact", 1));
        json_object_set_new (sec, "memory",
                             json_pack ("{s:i, s:s, s:b, s:s}", "peak_bytes",
                                        1024, "source", "cgroup2", "exact", 1,
                                        "definition", "memory.peak"));
    }
    else
        json_object_set_new (sec, "hostname", json_string ("node01"));
    /* The base must pass, so that a failure below is about obj. */
    if (tr_record_validate_section (section, sec, &err) < 0)
        fail_msg ("base %s refused: %s", section, err.text);
    json_object_set (sec, member, obj);
    if (tr_record_validate_section (section, sec, &err) < 0)
        fail_msg ("%s.%s refused: %s", section, member, err.text);
    json_decref (rec);
}

/* Failing allocator for the out-of-memory sweeps of the JSON builders. */
static int alloc_count, alloc_fail_at;

static void *chaos_malloc (size_t n)
{
    if (++alloc_count == alloc_fail_at)
        return NULL;
    return malloc (n);
}

typedef json_t *(*build_f) (void *arg);

/* Fail the Nth jansson allocation for N = 1, 2, ... until the builder
 * succeeds: every failure must be NULL with ENOMEM (and leak nothing,
 * which valgrind checks).
 */
static void oom_sweep (build_f build, void *arg)
{
    json_t *o = NULL;

    for (alloc_fail_at = 1; alloc_fail_at < 1000; alloc_fail_at++) {
        alloc_count = 0;
        json_set_alloc_funcs (chaos_malloc, free);
        errno = 0;
        o = build (arg);
        json_set_alloc_funcs (malloc, free);
        if (o)
            break;
        if (errno != ENOMEM)
            fail_msg ("allocation %d failed: errno %d, expected ENOMEM",
                      alloc_fail_at, errno);
    }
    assert_non_null (o);
    assert_true (alloc_fail_at > 1);
    json_decref (o);
}

/* psi */

/* Malformed input and the errno it must give. */
struct bad_case {
    const char *text;
    int err;
};

/* A cgroup file's single value and its "key value" files.  strtoull,
 * on which both rest, takes blanks and a sign ("-1" reads as 2^64 - 1)
 * and stops at junk: a value is digits alone, then at most a newline;
 * "max" alone is the only word.
 */
static void test_cgroup_parse (void **state)
{
    static const struct {
        const char *text;
        uint64_t value;
    } good[] = {
        { "0\n", 0 },
        { "123", 123 },
        { "8589934592\n", 8589934592ULL },
        { "max\n", UINT64_MAX },
        { "max", UINT64_MAX },
        { "18446744073709551615\n", UINT64_MAX },
    };
    static const char *const bad[] = {
        "maxfoo", "max\nx", "max \n", "maximum\n", "-1\n", "-0", "+1",
        " 1",     "\t1",    "1 \n",   "12a\n",    "0x10", "", "\n",
        "1\n\n",  "1\n2\n", "18446744073709551616\n",
    };
    static const char *const keys[] = {
        "user",           "system", "usage_usec", "nr_periods",
        "throttled_usec", "big",    "huge",       "anon",
    };
    /* user, nr_periods and huge are numbers; each other line is not */
    static const char stat[] = "user 10\n"
                               "system -5\n"
                               "usage_usec 7x\n"
                               "nr_periods 3\n"
                               "throttled_usec  4\n"
                               "big 9223372036854775808\n"
                               "huge 9223372036854775807\n"
                               "anon +1";
    int64_t v[NELEM (keys)];
    uint64_t u;
    size_t i;

    (void)state;
    for (i = 0; i < NELEM (good); i++) {
        u = 42;
        if (tr_cgroup_parse_u64 (good[i].text, &u) != 0)
            fail_msg ("good %zu: failed with errno %d", i, errno);
        if (u != good[i].value)
            fail_msg ("good %zu: got %ju", i, (uintmax_t)u);
    }
    for (i = 0; i < NELEM (bad); i++) {
        u = 42;
        errno = 0;
        if (tr_cgroup_parse_u64 (bad[i], &u) != -1 || errno != EINVAL)
            fail_msg ("bad %zu ('%s'): accepted, or errno %d", i, bad[i],
                      errno);
        if (u != 42)
            fail_msg ("bad %zu: output changed on failure", i);
    }
    for (i = 0; i < NELEM (keys); i++)
        v[i] = -1;
    assert_int_equal (tr_cgroup_parse_keys (stat, keys, v, NELEM (keys)), 3);
    assert_int_equal (v[0], 10);
    assert_int_equal (v[1], -1);
    assert_int_equal (v[2], -1);
    assert_int_equal (v[3], 3);
    assert_int_equal (v[4], -1);
    assert_int_equal (v[5], -1);
    assert_true (v[6] == INT64_MAX);
    assert_int_equal (v[7], -1);
    u = 42;
    assert_int_equal (tr_cgroup_parse_key ("oom_kill -1\n", "oom_kill", &u),
                      -1);
    assert_int_equal (errno, ENOENT);
    assert_true (u == 42);
    assert_int_equal (tr_cgroup_parse_key ("oom 1\noom_kill 2\n", "oom_kill",
                                           &u),
                      0);
    assert_true (u == 2);
}

static void test_psi_parse (void **state)
{
    static const struct {
        const char *text;
        uint64_t some, full;
        bool have_full;
    } good[] = {
        { "some avg10=5.93 avg60=4.31 avg300=2.61 total=52470245\n"
          "full avg10=0.00 avg60=0.00 avg300=0.00 total=1500\n",
          52470245, 1500, true },
        /* cpu before 5.13: no full line, no trailing newline */
        { "some avg10=0.12 avg60=0.05 avg300=0.01 total=4242", 4242, 0, false },
        /* unknown fields and lines, another order */
        { "some total=7 avg10=0.00 avg3600=1.00 flag\n"
          "note something new\n"
          "full avg10=0.00 total=3 avg60=0.00\n",
          7, 3, true },
        { "full avg10=0.00 total=3\nsome total=9\n", 9, 3, true },
        { "some total=0\nfull total=0\n", 0, 0, true },
        { "some total=18446744073709551615\n", UINT64_MAX, 0, false },
    };
    static const struct bad_case bad[] = {
        { "", EINVAL },
        { "\n", EINVAL },
        { "full avg10=0.00 total=3\n", EINVAL },
        { "some avg10=0.00 avg60=", EINVAL },
        { "some avg10=0.00 avg60=0.00 avg300=0.00\n", EINVAL },
        { "some total=\n", EINVAL },
        { "some total=-1\n", EINVAL },
        { "some total=+1\n", EINVAL },
        { "some total=12a\n", EINVAL },
        { "some total=0x10\n", EINVAL },
        { "some total=1 total=2\n", EINVAL },
        { "some total=1\nsome total=2\n", EINVAL },
        { "some total=1\nfull total=1\nfull total=2\n", EINVAL },
        { "some total=1\nfull avg10=0.00 avg60=\n", EINVAL },
        { "some total=18446744073709551616\n", ERANGE },
        { "some total=99999999999999999999999\n", ERANGE },
        { "some total=1\nfull total=184467440737095516150\n", ERANGE },
        { NULL, EINVAL },
    };
    size_t i;

    (void)state;
    for (i = 0; i < NELEM (good); i++) {
        struct tr_psi p;

        if (tr_psi_parse (good[i].text, &p) != 0)
            fail_msg ("good %zu: failed with errno %d", i, errno);
        if (p.some_us != good[i].some || p.full_us != good[i].full
            || p.have_full != good[i].have_full)
            fail_msg ("good %zu: got some=%ju full=%ju have_full=%d", i,
                      (uintmax_t)p.some_us, (uintmax_t)p.full_us, p.have_full);
    }
    for (i = 0; i < NELEM (bad); i++) {
        struct tr_psi p = { 111, 222, true };
        int rc;

        errno = 0;
        rc = tr_psi_parse (bad[i].text, &p);
        if (rc != -1 || errno != bad[i].err)
            fail_msg ("bad %zu: rc %d errno %d, expected errno %d", i, rc,
                      errno, bad[i].err);
        /* no side effects on failure */
        if (p.some_us != 111 || p.full_us != 222 || !p.have_full)
            fail_msg ("bad %zu: output changed on failure", i);
    }
}

static void test_psi_read (void **state)
{
    struct tr_psi p;

    (void)state;
    assert_int_equal (tr_psi_read ("/sys/fs/cgroup/unified/job_1",
                                   "cpu.pressure", &p),
                      0);
    assert_int_equal (p.some_us, 52470245);
    assert_int_equal (p.full_us, 1500000);
    assert_true (p.have_full);
    assert_int_equal (tr_psi_read ("/sys/fs/cgroup/unified/job_1",
                                   "io.pressure", &p),
                      0);
    assert_int_equal (p.some_us, 10462799);
    assert_int_equal (p.full_us, 9560178);
    assert_int_equal (tr_psi_read ("/sys/fs/cgroup/unified/job_old",
                                   "cpu.pressure", &p),
                      0);
    assert_int_equal (p.some_us, 4242);
    assert_false (p.have_full);
    errno = 0;
    assert_int_equal (tr_psi_read ("/sys/fs/cgroup/unified/job_old",
                                   "memory.pressure", &p),
                      -1);
    assert_int_equal (errno, ENOENT);
}

static void test_psi_read_oversized (void **state)
{
    char big[6000];
    struct tr_psi p;

    (void)state;
    memset (big, ' ', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    memcpy (big, "some total=1", 12);
    put ("/cg/cpu.pressure", big);
    errno = 0;
    assert_int_equal (tr_psi_read ("/cg", "cpu.pressure", &p), -1);
    assert_int_equal (errno, EFBIG);
}

static void test_psi_delta (void **state)
{
    static const struct {
        struct tr_psi start, end, want;
    } cases[] = {
        { { 100, 50, true }, { 350, 80, true }, { 250, 30, true } },
        /* re-created cgroup: counters went backwards */
        { { 500, 50, true }, { 100, 10, true }, { 0, 0, true } },
        { { 100, 0, false }, { 300, 0, false }, { 200, 0, false } },
        { { 100, 5, true }, { 300, 0, false }, { 200, 0, false } },
    };
    size_t i;

    (void)state;
    for (i = 0; i < NELEM (cases); i++) {
        struct tr_psi d;

        tr_psi_delta (&cases[i].start, &cases[i].end, &d);
        if (d.some_us != cases[i].want.some_us
            || d.full_us != cases[i].want.full_us
            || d.have_full != cases[i].want.have_full)
            fail_msg ("case %zu: got some=%ju full=%ju have_full=%d", i,
                      (uintmax_t)d.some_us, (uintmax_t)d.full_us, d.have_full);
    }
}

static const struct tr_psi psi_deltas[3] = {
    [TR_PSI_CPU] = { 2500000, 0, false },
    [TR_PSI_MEMORY] = { 1500, 250, true },
    [TR_PSI_IO] = { 0, 0, true },
};

static json_t *build_psi (void *arg)
{
    (void)arg;
    return tr_psi_json ("cgroup2-mirror", false, psi_deltas);
}

static const uint64_t delay_ns[3] = { 1500000000ULL, 2000, 0 };

static json_t *build_delay (void *arg)
{
    (void)arg;
    return tr_psi_delay_json (true, delay_ns);
}

static void test_psi_json (void **state)
{
    json_t *o, *cpu, *mem, *io;
    const char *key;
    json_t *v;
    int i = 0;

    (void)state;
    assert_non_null (o = build_psi (NULL));
    assert_string_equal (json_string_value (json_object_get (o, "source")),
                         "cgroup2-mirror");
    assert_true (json_is_false (json_object_get (o, "exact")));
    /* cpu, memory, io: in that order */
    json_object_foreach (o, key, v)
    {
        static const char *const order[] = { "source", "exact", "cpu", "memory",
                                             "io" };
        assert_true (i < 5);
        assert_string_equal (key, order[i++]);
    }
    assert_non_null (cpu = json_object_get (o, "cpu"));
    assert_non_null (mem = json_object_get (o, "memory"));
    assert_non_null (io = json_object_get (o, "io"));
    assert_seconds (cpu, "some_s", 2.5);
    assert_null (json_object_get (cpu, "full_s"));
    assert_seconds (mem, "some_s", 0.0015);
    assert_seconds (mem, "full_s", 0.00025);
    assert_seconds (io, "some_s", 0.0);
    assert_seconds (io, "full_s", 0.0);
    validate_in ("summary", "pressure", o);
    json_decref (o);

    assert_non_null (o = build_delay (NULL));
    assert_string_equal (json_string_value (json_object_get (o, "source")),
                         "delayacct");
    assert_true (json_is_true (json_object_get (o, "exact")));
    assert_seconds (json_object_get (o, "cpu"), "delay_s", 1.5);
    assert_seconds (json_object_get (o, "memory"), "delay_s", 2e-6);
    assert_seconds (json_object_get (o, "io"), "delay_s", 0.0);
    assert_null (json_object_get (json_object_get (o, "cpu"), "some_s"));
    validate_in ("summary", "pressure", o);
    json_decref (o);

    errno = 0;
    assert_null (tr_psi_json (NULL, true, psi_deltas));
    assert_int_equal (errno, EINVAL);
    oom_sweep (build_psi, NULL);
    oom_sweep (build_delay, NULL);
}

/* iostat */

struct io_want {
    unsigned major, minor;
    uint64_t rb, wb, ro, wo;
};

static void check_devices (const struct tr_iostat *io,
                           const struct io_want *want,
                           size_t n,
                           size_t case_no)
{
    size_t i;

    if (io->count != n)
        fail_msg ("case %zu: %zu devices, expected %zu", case_no, io->count, n);
    for (i = 0; i < n; i++) {
        const struct tr_iostat_dev *d = &io->dev[i];
        if (d->major != want[i].major || d->minor != want[i].minor
            || d->read_bytes != want[i].rb || d->write_bytes != want[i].wb
            || d->read_ops != want[i].ro || d->write_ops != want[i].wo)
            fail_msg ("case %zu: device %zu is %u:%u %ju %ju %ju %ju", case_no,
                      i, d->major, d->minor, (uintmax_t)d->read_bytes,
                      (uintmax_t)d->write_bytes, (uintmax_t)d->read_ops,
                      (uintmax_t)d->write_ops);
    }
}

static void test_iostat_parse_v2 (void **state)
{
    static const struct {
        const char *text;
        size_t n;
        struct io_want dev[2];
    } good[] = {
        { "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 "
          "dios=0\n"
          "254:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0 "
          "cost.vrate=100.00 cost.usage=1\n",
          2,
          { { 8, 16, 1459200, 314773504, 192, 353 }, { 254, 0, 1, 2, 3, 4 } } },
        /* any order, unknown keys, no final newline, blank line */
        { "\n259:1 dios=0 wios=4 use_delay=0 rios=3 wbytes=2 rbytes=1",
          1,
          { { 259, 1, 1, 2, 3, 4 } } },
        { "8:0 rbytes=18446744073709551615 wbytes=0 rios=0 wios=0\n",
          1,
          { { 8, 0, UINT64_MAX, 0, 0, 0 } } },
        /* a cgroup without I/O has an empty io.stat */
        { "", 0, { { 0, 0, 0, 0, 0, 0 } } },
    };
    static const struct bad_case bad[] = {
        { "8:16\n", EINVAL },
        { "8:16 rbytes=1 wbytes=2 rios=3\n", EINVAL },
        { "8:16 rbytes=1 wbytes=2 rios=3 wios=\n", EINVAL },
        { "8:16 rbytes=1 wbytes=2 rios=3 wi", EINVAL },
        { "8 rbytes=1 wbytes=2 rios=3 wios=4\n", EINVAL },
        { "8:x rbytes=1 wbytes=2 rios=3 wios=4\n", EINVAL },
        { ":1 rbytes=1 wbytes=2 rios=3 wios=4\n", EINVAL },
        { "8:16 rbytes=abc wbytes=2 rios=3 wios=4\n", EINVAL },
        { "8:16 rbytes=-1 wbytes=2 rios=3 wios=4\n", EINVAL },
        { "8:16 rbytes=1 rbytes=1 wbytes=2 rios=3 wios=4\n", EINVAL },
        { "8:16 rbytes=1 wbytes=2 rios=3 wios=4\n"
          "8:16 rbytes=1 wbytes=2 rios=3 wios=4\n",
          EINVAL },
        { "4294967296:0 rbytes=1 wbytes=2 rios=3 wios=4\n", EINVAL },
        { "8:16 rbytes=18446744073709551616 wbytes=2 rios=3 wios=4\n", ERANGE },
        { NULL, EINVAL },
    };
    struct tr_iostat *io;
    size_t i;

    (void)state;
    assert_non_null (io = calloc (1, sizeof (*io)));
    for (i = 0; i < NELEM (good); i++) {
        io->count = 77;
        io->truncated = true;
        if (tr_iostat_parse_v2 (good[i].text, io) != 0)
            fail_msg ("good %zu: failed with errno %d", i, errno);
        assert_false (io->truncated);
        check_devices (io, good[i].dev, good[i].n, i);
    }
    for (i = 0; i < NELEM (bad); i++) {
        int rc;

        io->count = 77;
        errno = 0;
        rc = tr_iostat_parse_v2 (bad[i].text, io);
        if (rc != -1 || errno != bad[i].err)
            fail_msg ("bad %zu: rc %d errno %d, expected errno %d", i, rc,
                      errno, bad[i].err);
        if (io->count != 77)
            fail_msg ("bad %zu: output changed on failure", i);
    }
    free (io);
}

static void test_iostat_truncated (void **state)
{
    char *text;
    size_t i, len = 0, cap = (TR_IOSTAT_MAX_DEVICES + 2) * 64;
    struct tr_iostat io;

    (void)state;
    assert_non_null (text = malloc (cap));
    for (i = 0; i < TR_IOSTAT_MAX_DEVICES + 2; i++)
        len += (size_t)snprintf (text + len, cap - len,
                                 "8:%zu rbytes=%zu wbytes=0 rios=1 wios=0\n", i,
                                 i);
    assert_int_equal (tr_iostat_parse_v2 (text, &io), 0);
    assert_int_equal (io.count, TR_IOSTAT_MAX_DEVICES);
    assert_true (io.truncated);
    assert_int_equal (io.dev[TR_IOSTAT_MAX_DEVICES - 1].read_bytes,
                      TR_IOSTAT_MAX_DEVICES - 1);
    free (text);
}

static void test_iostat_parse_v1 (void **state)
{
    static const struct {
        const char *bytes, *ops;
        size_t n;
        struct io_want dev[2];
    } good[] = {
        { "254:0 Read 16777216\n254:0 Write 8192\n254:0 Sync 0\n"
          "254:0 Async 16785408\n254:0 Discard 0\n254:0 Total 16785408\n"
          "Total 16785408\n",
          "254:0 Read 4096\n254:0 Write 2\n254:0 Sync 0\n254:0 Async 4098\n"
          "254:0 Discard 0\n254:0 Total 4098\nTotal 4098\n",
          1,
          { { 254, 0, 16777216, 8192, 4096, 2 } } },
        /* the usual v1 file without a throttle rule */
        { "Total 0\n", "Total 0\n", 0, { { 0, 0, 0, 0, 0, 0 } } },
        { "", "", 0, { { 0, 0, 0, 0, 0, 0 } } },
        /* no ops file */
        { "8:0 Read 10\n8:0 Write 20\nTotal 30",
          NULL,
          1,
          { { 8, 0, 10, 20, 0, 0 } } },
        /* a device only in the ops file */
        { "8:0 Read 10\nTotal 10\n",
          "8:0 Read 1\n8:16 Write 5\nTotal 6\n",
          2,
          { { 8, 0, 10, 0, 1, 0 }, { 8, 16, 0, 0, 0, 5 } } },
        /* an operation we do not know is checked and skipped */
        { "8:0 Read 1\n8:0 Frobnicate 7\n", NULL, 1, { { 8, 0, 1, 0, 0, 0 } } },
    };
    static const struct {
        const char *bytes, *ops;
        int err;
    } bad[] = {
        { "8:0 Read\n", NULL, EINVAL },
        { "8:0 Read x\n", NULL, EINVAL },
        { "8:0 Read 1 2\n", NULL, EINVAL },
        { "8:0\n", NULL, EINVAL },
        { "Total\n", NULL, EINVAL },
        { "Total 5 6\n", NULL, EINVAL },
        { "Total -5\n", NULL, EINVAL },
        { "8-0 Read 1\n", NULL, EINVAL },
        { "8:0 Read 1\n", "8:0 Write\n", EINVAL },
        { "8:0 Frobnicate x\n", NULL, EINVAL },
        { "8:0 Read 18446744073709551616\n", NULL, ERANGE },
        { NULL, NULL, EINVAL },
    };
    struct tr_iostat *io;
    size_t i;

    (void)state;
    assert_non_null (io = calloc (1, sizeof (*io)));
    for (i = 0; i < NELEM (good); i++) {
        io->count = 77;
        if (tr_iostat_parse_v1 (good[i].bytes, good[i].ops, io) != 0)
            fail_msg ("good %zu: failed with errno %d", i, errno);
        check_devices (io, good[i].dev, good[i].n, i);
    }
    for (i = 0; i < NELEM (bad); i++) {
        int rc;

        io->count = 77;
        errno = 0;
        rc = tr_iostat_parse_v1 (bad[i].bytes, bad[i].ops, io);
        if (rc != -1 || errno != bad[i].err)
            fail_msg ("bad %zu: rc %d errno %d, expected errno %d", i, rc,
                      errno, bad[i].err);
        if (io->count != 77)
            fail_msg ("bad %zu: output changed on failure", i);
    }
    free (io);
}

#define PROC_IO_TAIL                                                 \
    "wchar: 1\nsyscr: 10\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: " \
    "8192\n"

static void test_iostat_parse_proc (void **state)
{
    static const struct {
        const char *text;
        struct tr_proc_io want;
    } good[] = {
        { "rchar: 6976\n" PROC_IO_TAIL "cancelled_write_bytes: 3\n",
          { 6976, 1, 10, 2, 4096, 8192, 3 } },
        /* another order, an unknown field, no final newline */
        { "cancelled_write_bytes: 0\nsomething_new: 5\nwrite_bytes: 0\n"
          "read_bytes: 0\nsyscw: 0\nsyscr: 0\nwchar: 0\n"
          "rchar: 18446744073709551615",
          { UINT64_MAX, 0, 0, 0, 0, 0, 0 } },
    };
    static const struct bad_case bad[] = {
        { "", EINVAL },
        { "rchar: 6976\n" PROC_IO_TAIL, EINVAL },
        { "rchar: 6976\n" PROC_IO_TAIL "cancelled_write_bytes: ", EINVAL },
        { "rchar: 6976\n" PROC_IO_TAIL "cancelled_write_bytes", EINVAL },
        { "rchar: 1 2\n" PROC_IO_TAIL "cancelled_write_bytes: 3\n", EINVAL },
        { "rchar: 1\nrchar: 1\n" PROC_IO_TAIL "cancelled_write_bytes: 3\n",
          EINVAL },
        { "rchar: -1\n" PROC_IO_TAIL "cancelled_write_bytes: 3\n", EINVAL },
        { "rchar: 18446744073709551616\n" PROC_IO_TAIL "cancelled_write_bytes: "
          "3\n",
          ERANGE },
        { NULL, EINVAL },
    };
    size_t i;

    (void)state;
    for (i = 0; i < NELEM (good); i++) {
        struct tr_proc_io p;

        if (tr_iostat_parse_proc (good[i].text, &p) != 0)
            fail_msg ("good %zu: failed with errno %d", i, errno);
        if (memcmp (&p, &good[i].want, sizeof (p)) != 0)
            fail_msg ("good %zu: wrong values", i);
    }
    for (i = 0; i < NELEM (bad); i++) {
        struct tr_proc_io p = { 42, 42, 42, 42, 42, 42, 42 };
        int rc;

        errno = 0;
        rc = tr_iostat_parse_proc (bad[i].text, &p);
        if (rc != -1 || errno != bad[i].err)
            fail_msg ("bad %zu: rc %d errno %d, expected errno %d", i, rc,
                      errno, bad[i].err);
        if (p.rchar != 42 || p.cancelled_write_bytes != 42)
            fail_msg ("bad %zu: output changed on failure", i);
    }
}

static void test_iostat_read (void **state)
{
    static const struct io_want v2[] = {
        { 8, 16, 1459200, 314773504, 192, 353 },
        { 254, 0, 16777216, 16777216, 4096, 4096 },
    };
    static const struct io_want v1[] = {
        { 254, 0, 16777216, 16777216, 4096, 4096 },
        { 8, 0, 4096, 0, 1, 0 },
    };
    struct tr_iostat io;
    struct tr_proc_io p;
    uint64_t rb, wb;

    (void)state;
    assert_int_equal (tr_iostat_read_v2 ("/sys/fs/cgroup/unified/job_1", &io),
                      0);
    check_devices (&io, v2, NELEM (v2), 0);
    tr_iostat_totals (&io, &rb, &wb);
    assert_int_equal (rb, 1459200 + 16777216);
    assert_int_equal (wb, 314773504 + 16777216);
    assert_int_equal (tr_iostat_read_v1 ("/sys/fs/cgroup/blkio/job_1", &io), 0);
    check_devices (&io, v1, NELEM (v1), 1);
    assert_int_equal (tr_iostat_read_proc (100, &p), 0);
    assert_int_equal (p.rchar, 6976);
    assert_int_equal (p.wchar, 1048576);
    assert_int_equal (p.syscr, 10);
    assert_int_equal (p.syscw, 256);
    assert_int_equal (p.read_bytes, 4096);
    assert_int_equal (p.write_bytes, 1052672);
    assert_int_equal (p.cancelled_write_bytes, 8192);
    errno = 0;
    assert_int_equal (tr_iostat_read_proc (101, &p), -1);
    assert_int_equal (errno, ENOENT);
    errno = 0;
    assert_int_equal (tr_iostat_read_v2 ("/sys/fs/cgroup/unified/job_old", &io),
                      -1);
    assert_int_equal (errno, ENOENT);
}

static const struct tr_iostat io_start = {
    .count = 2,
    .dev = {
        { 8, 0, 1000, 2000, 10, 20 },
        { 8, 16, 5000, 5000, 50, 50 },
    },
};

static const struct tr_iostat io_end = {
    .count = 3,
    .dev = {
        { 8, 0, 1500, 2600, 15, 26 },
        { 254, 0, 100, 200, 1, 2 }, /* new: counts from 0 */
        { 8, 16, 4000, 5000, 40, 51 }, /* went backwards: clamps */
    },
};

static const struct tr_proc_io proc_io = { 10, 20, 3, 4, 4096, 8192, 0 };

static json_t *build_iostat (void *arg)
{
    (void)arg;
    return tr_iostat_json ("io.stat", &io_start, &io_end, &proc_io, "taskstats",
                           true);
}

static void check_row (json_t *row,
                       const char *dev,
                       json_int_t rb,
                       json_int_t wb,
                       json_int_t ro,
                       json_int_t wo)
{
    assert_non_null (row);
    if (dev)
        assert_string_equal (json_string_value (json_object_get (row, "devic"
                                                                      "e")),
                             dev);
    assert_int_equal (get_int (row, "read_bytes"), rb);
    assert_int_equal (get_int (row, "write_bytes"), wb);
    assert_int_equal (get_int (row, "read_ops"), ro);
    assert_int_equal (get_int (row, "write_ops"), wo);
}

static void test_iostat_json (void **state)
{
    json_t *o, *devs, *proc;

    (void)state;
    assert_non_null (o = build_iostat (NULL));
    assert_string_equal (json_string_value (json_object_get (o, "source")),
                         "io.stat");
    devs = json_object_get (o, "devices");
    assert_int_equal (json_array_size (devs), 3);
    check_row (json_array_get (devs, 0), "8:0", 500, 600, 5, 6);
    check_row (json_array_get (devs, 1), "254:0", 100, 200, 1, 2);
    check_row (json_array_get (devs, 2), "8:16", 0, 0, 0, 1);
    check_row (o, NULL, 600, 800, 6, 9);
    assert_non_null (proc = json_object_get (o, "proc"));
    assert_string_equal (json_string_value (json_object_get (proc, "source")),
                         "taskstats");
    assert_true (json_is_true (json_object_get (proc, "exact")));
    assert_int_equal (get_int (proc, "rchar"), 10);
    assert_int_equal (get_int (proc, "wchar"), 20);
    assert_int_equal (get_int (proc, "syscr"), 3);
    assert_int_equal (get_int (proc, "syscw"), 4);
    assert_int_equal (get_int (proc, "read_bytes"), 4096);
    assert_int_equal (get_int (proc, "write_bytes"), 8192);
    assert_int_equal (get_int (proc, "cancelled_write_bytes"), 0);
    validate_in ("summary", "io", o);
    json_decref (o);

    /* no cgroup counters at all, /proc only */
    assert_non_null (
        o = tr_iostat_json ("none", NULL, NULL, &proc_io, "proc", false));
    assert_int_equal (json_array_size (json_object_get (o, "devices")), 0);
    check_row (o, NULL, 0, 0, 0, 0);
    assert_true (
        json_is_false (json_object_get (json_object_get (o, "proc"), "exact")));
    validate_in ("summary", "io", o);
    json_decref (o);

    /* start missing: everything counts from 0; no proc member */
    assert_non_null (
        o = tr_iostat_json ("blkio", NULL, &io_end, NULL, NULL, false));
    check_row (o, NULL, 5600, 7800, 56, 79);
    assert_null (json_object_get (o, "proc"));
    json_decref (o);

    errno = 0;
    assert_null (tr_iostat_json ("io.stat", NULL, NULL, &proc_io, NULL, true));
    assert_int_equal (errno, EINVAL);
    oom_sweep (build_iostat, NULL);
}

/* netstat */

#define NET_HEADER                                                         \
    "Inter-|   Receive                                                |  " \
    "Transmit\n"                                                           \
    " face |bytes    packets errs drop fifo frame compressed "             \
    "multicast|bytes    packets errs drop fifo colls carrier compressed\n"

struct if_want {
    const char *name;
    uint64_t rxb, rxp, txb, txp;
};

static void test_netstat_parse_dev (void **state)
{
    static const struct {
        const char *text;
        size_t n;
        struct if_want ifc[2];
    } good[] = {
        { NET_HEADER "    lo: 24455541  214816    0    0    0     0          0 "
                     "        0 "
                     "24455541  214816    0    0    0     0       0          "
                     "0\n"
                     "  eth0: 33972675    1172    0    0    0     0          0 "
                     "        0 "
                     "   55167     625    0    0    0     0       0          "
                     "0\n",
          2,
          { { "lo", 24455541, 214816, 24455541, 214816 },
            { "eth0", 33972675, 1172, 55167, 625 } } },
        /* ':' inside a name: the last one ends it */
        { NET_HEADER "eth0:1: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n"
                     "a:b:c:5 6 0 0 0 0 0 0 7 8 0 0 0 0 0 0\n",
          2,
          { { "eth0:1", 1, 2, 3, 4 }, { "a:b:c", 5, 6, 7, 8 } } },
        /* old kernels: no blank after the colon; a 17th column */
        { NET_HEADER "eth0:10 20 0 0 0 0 0 0 30 40 0 0 0 0 0 0 99\n",
          1,
          { { "eth0", 10, 20, 30, 40 } } },
        /* '|' in a name is still an interface line */
        { NET_HEADER "a|b: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0",
          1,
          { { "a|b", 1, 2, 3, 4 } } },
        { NET_HEADER "x: 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
          1,
          { { "x", UINT64_MAX, 0, 0, 0 } } },
        /* a namespace with no interface at all */
        { NET_HEADER, 0, { { "", 0, 0, 0, 0 } } },
        { NET_HEADER "\n", 0, { { "", 0, 0, 0, 0 } } },
    };
    static const struct bad_case bad[] = {
        { "", EINVAL },
        { NET_HEADER "eth0 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n", EINVAL },
        { NET_HEADER ": 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n", EINVAL },
        { NET_HEADER "eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0\n", EINVAL },
        { NET_HEADER "eth0: 1 2 0 0 0 0 0 0 3\n", EINVAL },
        { NET_HEADER "eth0:\n", EINVAL },
        { NET_HEADER "eth0: 1 2 0 0 0 0 0 0 3 x 0 0 0 0 0 0\n", EINVAL },
        { NET_HEADER "eth0: 1 -2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n", EINVAL },
        { NET_HEADER "eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n"
                     "eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n",
          EINVAL },
        /* 64 bytes of name: one more than fits */
        { NET_HEADER "a234567890123456789012345678901234567890123456789012345"
                     "678901234: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n",
          EINVAL },
        { NET_HEADER "eth0: 18446744073709551616 2 0 0 0 0 0 0 3 4 0 0 0 0 0 "
                     "0\n",
          ERANGE },
        { NULL, EINVAL },
    };
    struct tr_netstat *s;
    size_t i, j;

    (void)state;
    assert_non_null (s = calloc (1, sizeof (*s)));
    for (i = 0; i < NELEM (good); i++) {
        s->niface = 77;
        s->nib = 5;
        if (tr_netstat_parse_dev (good[i].text, s) != 0)
            fail_msg ("good %zu: failed with errno %d", i, errno);
        if (s->niface != good[i].n)
            fail_msg ("good %zu: %zu interfaces", i, s->niface);
        /* the IB part is not the parser's to touch */
        assert_int_equal (s->nib, 5);
        for (j = 0; j < good[i].n; j++) {
            const struct tr_netstat_iface *f = &s->iface[j];
            const struct if_want *w = &good[i].ifc[j];
            if (strcmp (f->name, w->name) != 0 || f->rx_bytes != w->rxb
                || f->rx_packets != w->rxp || f->tx_bytes != w->txb
                || f->tx_packets != w->txp)
                fail_msg ("good %zu: interface %zu is '%s' %ju %ju %ju %ju", i,
                          j, f->name, (uintmax_t)f->rx_bytes,
                          (uintmax_t)f->rx_packets, (uintmax_t)f->tx_bytes,
                          (uintmax_t)f->tx_packets);
        }
    }
    for (i = 0; i < NELEM (bad); i++) {
        int rc;

        s->niface = 77;
        errno = 0;
        rc = tr_netstat_parse_dev (bad[i].text, s);
        if (rc != -1 || errno != bad[i].err)
            fail_msg ("bad %zu: rc %d errno %d, expected errno %d", i, rc,
                      errno, bad[i].err);
        if (s->niface != 77)
            fail_msg ("bad %zu: output changed on failure", i);
    }
    free (s);
}

static void test_netstat_fixture (void **state)
{
    struct tr_netstat *s;
    uint64_t rx, tx;

    (void)state;
    assert_non_null (s = calloc (1, sizeof (*s)));
    assert_int_equal (tr_netstat_snapshot (100, s), 0);
    assert_int_equal (s->niface, 4);
    assert_string_equal (s->iface[0].name, "lo");
    assert_string_equal (s->iface[3].name, "ib0");
    assert_int_equal (s->iface[3].tx_packets, 4000);
    /* two ports with counters, sorted; mlx5_0 port 2 has none */
    assert_int_equal (s->nib, 2);
    assert_string_equal (s->ib[0].device, "mlx5_0");
    assert_int_equal (s->ib[0].port, 1);
    assert_int_equal (s->ib[0].tx_bytes, 250000 * 4);
    assert_int_equal (s->ib[0].rx_bytes, 500000 * 4);
    assert_int_equal (s->ib[0].tx_packets, 1000);
    assert_int_equal (s->ib[0].rx_packets, 2000);
    assert_string_equal (s->ib[1].device, "mlx5_1");
    assert_int_equal (s->ib[1].tx_bytes, 4);
    assert_int_equal (s->ib[1].rx_bytes, 12000);
    /* totals leave lo out */
    tr_netstat_totals (s, false, &rx, &tx);
    assert_int_equal (rx, 33972675 + 1000000);
    assert_int_equal (tx, 55167 + 3000000);
    tr_netstat_totals (s, true, &rx, &tx);
    assert_int_equal (rx, 33972675 + 1000000 + 2000000 + 12000);
    assert_int_equal (tx, 55167 + 3000000 + 1000000 + 4);
    errno = 0;
    assert_int_equal (tr_netstat_snapshot (101, s), -1);
    assert_int_equal (errno, ENOENT);
    free (s);
}

static void test_netstat_ib_absent (void **state)
{
    struct tr_netstat *s;

    (void)state;
    assert_non_null (s = calloc (1, sizeof (*s)));
    s->nib = 3;
    tr_fsroot_set (FIXTURES "/fsroot-cpuinfo");
    assert_int_equal (tr_netstat_read_ib (s), 0);
    assert_int_equal (s->nib, 0);
    free (s);
}

static void test_netstat_ib_counters (void **state)
{
    /* port_xmit_data contents; err 0: tx_bytes expected */
    static const struct {
        const char *xmit_data;
        int err;
        uint64_t tx_bytes;
    } cases[] = {
        { "0\n", 0, 0 },
        { "4611686018427387903\n", 0, UINT64_MAX - 3 },
        { "4611686018427387904\n", ERANGE, 0 },
        { "18446744073709551616\n", ERANGE, 0 },
        { "abc\n", EINVAL, 0 },
        { "\n", EINVAL, 0 },
        { "", EINVAL, 0 },
        { "1 2\n", EINVAL, 0 },
        { "-4\n", EINVAL, 0 },
    };
    const char *dir = "/sys/class/infiniband/hfi1_0/ports/1/counters";
    char path[PATH_MAX];
    size_t i;

    (void)state;
    put ("/sys/class/infiniband/hfi1_0/ports/1/counters/port_rcv_data", "8\n");
    put ("/sys/class/infiniband/hfi1_0/ports/1/counters/port_xmit_packets",
         "1\n");
    put ("/sys/class/infiniband/hfi1_0/ports/1/counters/port_rcv_packets",
         "2\n");
    /* not port directories */
    put ("/sys/class/infiniband/hfi1_0/ports/README", "x\n");
    put ("/sys/class/infiniband/.hidden/ports/1/counters/port_xmit_data", "x"
                                                                          "\n");
    for (i = 0; i < NELEM (cases); i++) {
        struct tr_netstat *s;
        int rc;

        snprintf (path, sizeof (path), "%s/port_xmit_data", dir);
        put (path, cases[i].xmit_data);
        assert_non_null (s = calloc (1, sizeof (*s)));
        s->nib = 9;
        errno = 0;
        rc = tr_netstat_read_ib (s);
        if (cases[i].err) {
            if (rc != -1 || errno != cases[i].err)
                fail_msg ("case %zu: rc %d errno %d, expected errno %d", i, rc,
                          errno, cases[i].err);
            if (s->nib != 9)
                fail_msg ("case %zu: output changed on failure", i);
        }
        else {
            if (rc != 0 || s->nib != 1)
                fail_msg ("case %zu: rc %d errno %d nib %zu", i, rc, errno,
                          s->nib);
            assert_int_equal (s->ib[0].tx_bytes, cases[i].tx_bytes);
            assert_int_equal (s->ib[0].rx_bytes, 32);
            assert_int_equal (s->ib[0].tx_packets, 1);
            assert_int_equal (s->ib[0].rx_packets, 2);
        }
        free (s);
    }
}

static void test_netstat_scope (void **state)
{
    static const struct {
        pid_t pid;
        int err;
        enum tr_netstat_scope scope;
    } cases[] = {
        { 1, 0, TR_NETSTAT_SCOPE_NODE },
        { 2, 0, TR_NETSTAT_SCOPE_NODE },      /* same inode (hard link) */
        { 3, 0, TR_NETSTAT_SCOPE_NAMESPACE }, /* another inode */
        { 4, 0, TR_NETSTAT_SCOPE_NODE },      /* symlink, as in /proc */
        { 5, ENOENT, TR_NETSTAT_SCOPE_NODE }, /* process gone */
    };
    char a[PATH_MAX], b[PATH_MAX];
    size_t i;

    (void)state;
    put ("/proc/1/ns/net", "");
    put ("/proc/3/ns/net", "");
    put ("/proc/2/ns/x", "");
    put ("/proc/4/ns/x", "");
    tmp_path (a, sizeof (a), "/proc/1/ns/net");
    tmp_path (b, sizeof (b), "/proc/2/ns/net");
    assert_int_equal (link (a, b), 0);
    tmp_path (b, sizeof (b), "/proc/4/ns/net");
    assert_int_equal (symlink (a, b), 0);
    for (i = 0; i < NELEM (cases); i++) {
        enum tr_netstat_scope scope = (enum tr_netstat_scope)99;
        int rc;

        errno = 0;
        rc = tr_netstat_scope (cases[i].pid, &scope);
        if (cases[i].err) {
            if (rc != -1 || errno != cases[i].err)
                fail_msg ("pid %d: rc %d errno %d", (int)cases[i].pid, rc,
                          errno);
            continue;
        }
        if (rc != 0 || scope != cases[i].scope)
            fail_msg ("pid %d: rc %d scope %d", (int)cases[i].pid, rc,
                      (int)scope);
    }
    assert_string_equal (tr_netstat_scope_str (TR_NETSTAT_SCOPE_NODE), "node");
    assert_string_equal (tr_netstat_scope_str (TR_NETSTAT_SCOPE_NAMESPACE),
                         "namespace");
    assert_null (tr_netstat_scope_str ((enum tr_netstat_scope)7));
}

/* A hardened /proc (hidepid, or a container) hides pid 1: the caller's
 * own namespace stands in for the node's.
 */
static void test_netstat_scope_no_init (void **state)
{
    char a[PATH_MAX], b[PATH_MAX];
    enum tr_netstat_scope scope;

    (void)state;
    put ("/proc/self/ns/net", "");
    put ("/proc/3/ns/net", "");
    put ("/proc/2/ns/x", "");
    tmp_path (a, sizeof (a), "/proc/self/ns/net");
    tmp_path (b, sizeof (b), "/proc/2/ns/net");
    assert_int_equal (link (a, b), 0);
    assert_int_equal (tr_netstat_scope (2, &scope), 0);
    assert_int_equal (scope, TR_NETSTAT_SCOPE_NODE);
    assert_int_equal (tr_netstat_scope (3, &scope), 0);
    assert_int_equal (scope, TR_NETSTAT_SCOPE_NAMESPACE);
}

static struct tr_netstat *net_start, *net_end;

static json_t *build_netstat (void *arg)
{
    (void)arg;
    return tr_netstat_json (TR_NETSTAT_SCOPE_NAMESPACE, net_start, net_end);
}

static void set_iface (struct tr_netstat_iface *f,
                       const char *name,
                       uint64_t rxb,
                       uint64_t txb,
                       uint64_t rxp,
                       uint64_t txp)
{
    snprintf (f->name, sizeof (f->name), "%s", name);
    f->rx_bytes = rxb;
    f->tx_bytes = txb;
    f->rx_packets = rxp;
    f->tx_packets = txp;
}

static void check_net_row (json_t *row,
                           const char *key,
                           const char *name,
                           json_int_t rxb,
                           json_int_t txb,
                           json_int_t rxp,
                           json_int_t txp)
{
    assert_non_null (row);
    assert_string_equal (json_string_value (json_object_get (row, key)), name);
    assert_int_equal (get_int (row, "rx_bytes"), rxb);
    assert_int_equal (get_int (row, "tx_bytes"), txb);
    assert_int_equal (get_int (row, "rx_packets"), rxp);
    assert_int_equal (get_int (row, "tx_packets"), txp);
}

static void test_netstat_json (void **state)
{
    json_t *o, *ifs, *ib;

    (void)state;
    assert_non_null (net_start = calloc (1, sizeof (*net_start)));
    assert_non_null (net_end = calloc (1, sizeof (*net_end)));
    net_start->niface = 3;
    set_iface (&net_start->iface[0], "lo", 100, 100, 1, 1);
    set_iface (&net_start->iface[1], "eth0", 1000, 2000, 10, 20);
    set_iface (&net_start->iface[2], "veth1", 5000, 5000, 50, 50);
    net_end->niface = 4;
    set_iface (&net_end->iface[0], "lo", 900, 900, 9, 9);
    set_iface (&net_end->iface[1], "eth0", 1500, 2600, 15, 26);
    set_iface (&net_end->iface[2], "veth1", 10, 20, 1, 2); /* re-created */
    set_iface (&net_end->iface[3], "ib\xff", 7, 8, 1, 1);  /* new */
    net_start->nib = 1;
    snprintf (net_start->ib[0].device, TR_NETSTAT_NAME_MAX, "mlx5_0");
    net_start->ib[0].port = 1;
    net_start->ib[0].rx_bytes = 400;
    net_start->ib[0].tx_bytes = 800;
    net_end->nib = 2;
    net_end->ib[0] = net_start->ib[0];
    net_end->ib[0].rx_bytes = 4400;
    net_end->ib[0].tx_bytes = 808;
    net_end->ib[0].rx_packets = 3;
    snprintf (net_end->ib[1].device, TR_NETSTAT_NAME_MAX, "mlx5_0");
    net_end->ib[1].port = 2;
    net_end->ib[1].tx_packets = 6;

    assert_non_null (o = build_netstat (NULL));
    assert_string_equal (json_string_value (json_object_get (o, "scope")), "nam"
                                                                           "esp"
                                                                           "ac"
                                                                           "e");
    assert_string_equal (json_string_value (json_object_get (o, "source")),
                         "proc-net-dev");
    ifs = json_object_get (o, "interfaces");
    assert_int_equal (json_array_size (ifs), 3);
    check_net_row (json_array_get (ifs, 0), "name", "eth0", 500, 600, 5, 6);
    check_net_row (json_array_get (ifs, 1), "name", "veth1", 0, 0, 0, 0);
    check_net_row (json_array_get (ifs, 2), "name", "ib?", 7, 8, 1, 1);
    ib = json_object_get (o, "infiniband");
    assert_int_equal (json_array_size (ib), 2);
    check_net_row (json_array_get (ib, 0), "device", "mlx5_0", 4000, 8, 3, 0);
    assert_int_equal (get_int (json_array_get (ib, 0), "port"), 1);
    check_net_row (json_array_get (ib, 1), "device", "mlx5_0", 0, 0, 0, 6);
    assert_int_equal (get_int (json_array_get (ib, 1), "port"), 2);
    validate_in ("summary", "network", o);
    json_decref (o);

    /* no start snapshot: all from 0 */
    assert_non_null (
        o = tr_netstat_json (TR_NETSTAT_SCOPE_NODE, NULL, net_end));
    assert_string_equal (json_string_value (json_object_get (o, "scope")), "nod"
                                                                           "e");
    check_net_row (json_array_get (json_object_get (o, "interfaces"), 0),
                   "name", "eth0", 1500, 2600, 15, 26);
    validate_in ("summary", "network", o);
    json_decref (o);

    errno = 0;
    assert_null (tr_netstat_json (TR_NETSTAT_SCOPE_NODE, net_start, NULL));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (tr_netstat_json ((enum tr_netstat_scope)5, NULL, net_end));
    assert_int_equal (errno, EINVAL);
    oom_sweep (build_netstat, NULL);
    free (net_start);
    free (net_end);
}

/* topology */

static void test_cpulist_count (void **state)
{
    static const struct {
        const char *list;
        int count; /* -1: EINVAL */
    } cases[] = {
        { "0-3,8", 5 },       { "0", 1 },        { "", 0 },
        { "\n", 0 },          { "0-3\n", 4 },    { "0-3,2-5", 6 },
        { "1,1", 1 },         { "7,0-1", 3 },    { "5-5", 1 },
        { "0-65535", 65536 }, { "3-1", -1 },     { "1,,2", -1 },
        { ",1", -1 },         { "1,", -1 },      { "-1", -1 },
        { "1-", -1 },         { "1--2", -1 },    { "a", -1 },
        { "1 2", -1 },        { " 1", -1 },      { "+1", -1 },
        { "0-7:2", -1 },      { "1\n\n", -1 },   { "1\n2", -1 },
        { "65536", -1 },      { "0-65536", -1 }, { "99999999999999999999", -1 },
        { NULL, -1 },
    };
    size_t i;

    (void)state;
    for (i = 0; i < NELEM (cases); i++) {
        int n;

        errno = 0;
        n = tr_cpulist_count (cases[i].list);
        if (n != cases[i].count || (n < 0 && errno != EINVAL))
            fail_msg ("'%s': got %d (errno %d), expected %d",
                      cases[i].list ? cases[i].list : "(null)", n, errno,
                      cases[i].count);
    }
}

static void use_topology (const char *xml, const char *fsroot)
{
    tr_topology_reset ();
    assert_int_equal (setenv ("HWLOC_XMLFILE", xml, 1), 0);
    tr_fsroot_set (fsroot);
}

static json_t *topo_json (const char *cpulist)
{
    tr_error_t err;
    json_t *o = tr_topology_json (cpulist, &err);

    if (!o)
        fail_msg ("tr_topology_json: %s", err.text);
    return o;
}

static void test_topology_host (void **state)
{
    json_t *o, *bound;

    (void)state;
    use_topology (FIXTURES "/topology/host-1socket.xml", FSROOT);
    o = topo_json (NULL);
    assert_string_equal (json_string_value (json_object_get (o, "source")),
                         "hwloc");
    assert_int_equal (get_int (o, "sockets"), 1);
    assert_int_equal (get_int (o, "cores"), 2);
    assert_int_equal (get_int (o, "pus"), 2);
    assert_int_equal (get_int (o, "numa_nodes"), 1);
    assert_int_equal (get_int (o, "mem_bytes"), 4657995776);
    assert_int_equal (get_int (o, "cpu_mhz"), 3500);
    assert_null (json_object_get (o, "bound"));
    validate_in ("host", "topology", o);
    json_decref (o);

    o = topo_json ("1\n");
    assert_non_null (bound = json_object_get (o, "bound"));
    assert_int_equal (get_int (bound, "cores"), 1);
    assert_int_equal (get_int (bound, "pus"), 1);
    assert_int_equal (get_int (bound, "sockets"), 1);
    assert_int_equal (get_int (bound, "numa_nodes"), 1);
    validate_in ("host", "topology", o);
    json_decref (o);
}

static void test_topology_2socket (void **state)
{
    static const struct {
        const char *cpulist;
        int cores, pus, sockets, numa;
    } cases
        [] = {
            { "0,8", 1, 2, 1, 1 }, /* two hyperthreads of one core */
            { "0", 1, 1, 1, 1 },
            { "0-7", 8, 8, 2, 2 },      /* one thread of every core */
            { "0-3,8-11", 4, 8, 1, 1 }, /* all of socket 0 */
            { "3,4", 2, 2, 2, 2 },
            { "0-15", 8, 16, 2, 2 },
            { "", 0, 0, 0, 0 },
            { "100-200", 0, 0, 0, 0 }, /* not on this node */
        };
    tr_error_t err;
    json_t *o, *bound;
    size_t i;

    (void)state;
    use_topology (FIXTURES "/topology/2socket-ht.xml", FSROOT);
    o = topo_json (NULL);
    assert_int_equal (get_int (o, "sockets"), 2);
    assert_int_equal (get_int (o, "cores"), 8);
    assert_int_equal (get_int (o, "pus"), 16);
    assert_int_equal (get_int (o, "numa_nodes"), 2);
    assert_int_equal (get_int (o, "mem_bytes"), 68719476736);
    json_decref (o);
    for (i = 0; i < NELEM (cases); i++) {
        o = topo_json (cases[i].cpulist);
        assert_non_null (bound = json_object_get (o, "bound"));
        if (get_int (bound, "cores") != cases[i].cores
            || get_int (bound, "pus") != cases[i].pus
            || get_int (bound, "sockets") != cases[i].sockets
            || get_int (bound, "numa_nodes") != cases[i].numa)
            fail_msg ("'%s': bound %s", cases[i].cpulist,
                      json_dumps (bound, JSON_COMPACT));
        validate_in ("host", "topology", o);
        json_decref (o);
    }
    errno = 0;
    assert_null (tr_topology_json ("3-1", &err));
    assert_int_equal (errno, EINVAL);
    assert_string_equal (err.text, "invalid cpu list");
}

static void test_topology_cpu_mhz (void **state)
{
    static const struct {
        const char *fsroot;
        int mhz; /* 0: absent */
    } cases[] = {
        { FSROOT, 3500 },                     /* cpufreq wins over cpuinfo */
        { FIXTURES "/fsroot-cpuinfo", 2394 }, /* "cpu MHz: 2394.454" */
        { FIXTURES "/topology", 0 },          /* neither */
    };
    size_t i;

    (void)state;
    for (i = 0; i < NELEM (cases); i++) {
        json_t *o;

        use_topology (FIXTURES "/topology/host-1socket.xml", cases[i].fsroot);
        o = topo_json (NULL);
        if (cases[i].mhz)
            assert_int_equal (get_int (o, "cpu_mhz"), cases[i].mhz);
        else
            assert_null (json_object_get (o, "cpu_mhz"));
        json_decref (o);
    }
}

static json_t *build_topology (void *arg)
{
    return tr_topology_json (arg, NULL);
}

static void test_topology_oom (void **state)
{
    (void)state;
    use_topology (FIXTURES "/topology/2socket-ht.xml", FSROOT);
    /* load the topology outside the sweep: hwloc does not use jansson */
    json_decref (topo_json (NULL));
    static char cpulist[] = "0-3";

    oom_sweep (build_topology, cpulist);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_cgroup_parse),
        cmocka_unit_test (test_psi_parse),
        cmocka_unit_test_setup_teardown (test_psi_read, setup_fixture,
                                         teardown_fixture),
        cmocka_unit_test_setup_teardown (test_psi_read_oversized, setup_tmp,
                                         teardown_tmp),
        cmocka_unit_test (test_psi_delta),
        cmocka_unit_test (test_psi_json),
        cmocka_unit_test (test_iostat_parse_v2),
        cmocka_unit_test (test_iostat_truncated),
        cmocka_unit_test (test_iostat_parse_v1),
        cmocka_unit_test (test_iostat_parse_proc),
        cmocka_unit_test_setup_teardown (test_iostat_read, setup_fixture,
                                         teardown_fixture),
        cmocka_unit_test (test_iostat_json),
        cmocka_unit_test (test_netstat_parse_dev),
        cmocka_unit_test_setup_teardown (test_netstat_fixture, setup_fixture,
                                         teardown_fixture),
        cmocka_unit_test_setup_teardown (test_netstat_ib_absent, setup_fixture,
                                         teardown_fixture),
        cmocka_unit_test_setup_teardown (test_netstat_ib_counters, setup_tmp,
                                         teardown_tmp),
        cmocka_unit_test_setup_teardown (test_netstat_scope, setup_tmp,
                                         teardown_tmp),
        cmocka_unit_test_setup_teardown (test_netstat_scope_no_init, setup_tmp,
                                         teardown_tmp),
        cmocka_unit_test (test_netstat_json),
        cmocka_unit_test (test_cpulist_count),
        cmocka_unit_test_teardown (test_topology_host, teardown_topology),
        cmocka_unit_test_teardown (test_topology_2socket, teardown_topology),
        cmocka_unit_test_teardown (test_topology_cpu_mhz, teardown_topology),
        cmocka_unit_test_teardown (test_topology_oom, teardown_topology),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
