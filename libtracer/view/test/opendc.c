/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * OpenDC export (libtracer/view/opendc.c): how a record becomes a task and
 * fragments, checked through the CSV tables, whose text shows every
 * value; the Parquet tables carry the same values and are read back by
 * an independent reader in t/0402 and t/0403.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "libtracer/view/opendc.h"
#include "libtracer/util/path.h"
#include "libtracer/record/record.h"
#include "record-fixture.h"

/* A node at 2600 MHz, 4 CPUs granted, a 30 s step with two 10 s buckets
 * (overlays change what a case is about).
 */
static const char *node_rec =
    "{'identity': {'job_id': '42', 'step_id': 'batch', 'node': 'n1'},"
    " 'host': {'topology': {'cpu_mhz': 2600, 'cores': 8, 'pus': 16,"
    "  'sockets': 1, 'numa_nodes': 1, 'mem_bytes': 68719476736,"
    "  'source': 'hwloc'}},"
    " 'request': {'cpus_on_node': 4},"
    " 'time': {'start_unix_ms': 1767225600000, 'end_unix_ms': 1767225630000,"
    "  'elapsed_s': 30},"
    " 'summary': {'cpu': {'total_s': 27}, 'memory': {'peak_bytes': 52428801}},"
    " 'series': {'interval_s': 10, 't_s': [10, 20],"
    "  'metrics': {'cpu_cores': {'min': [1, 0], 'mean': [1.35, 0.1],"
    "   'max': [2, 0.2]}}}}";

/* node_rec with overlay merged in. */
static json_t *node_with (const char *overlay)
{
    json_t *rec = rec_with (node_rec, true);
    json_t *over = parse (overlay);

    assert_int_equal (json_object_update_recursive (rec, over), 0);
    json_decref (over);
    return rec;
}

static char dir[64];

static int setup (void **state)
{
    (void)state;
    snprintf (dir, sizeof (dir), "/tmp/test_opendc.XXXXXX");
    return mkdtemp (dir) ? 0 : -1;
}

static int teardown (void **state)
{
    char path[128];

    (void)state;
    for (const char *const *n = (const char *const[]){ "tasks.csv",
                                                       "fragments.csv",
                                                       "tasks.parquet",
                                                       "fragments.parquet",
                                                       NULL };
         *n; n++) {
        snprintf (path, sizeof (path), "%s/%s", dir, *n);
        unlink (path);
    }
    return rmdir (dir);
}

/* The text of dir/name. */
static char *slurp (const char *name)
{
    int fd = open (dir, O_RDONLY | O_DIRECTORY);
    size_t len;
    char *s;

    assert_true (fd >= 0);
    s = tr_path_read_file (fd, name, 1 << 20, &len, NULL);
    close (fd);
    assert_non_null (s);
    return s;
}

/* Export the records (overlays of node_rec, NULL-terminated) as CSV and
 * compare both tables with the expected text.
 */
static void check_csv (const char *const *overlays,
                       const char *tasks,
                       const char *frags)
{
    tr_opendc_t *x = tr_opendc_create ();
    tr_error_t error;
    char *t, *f;
    int fd;

    assert_non_null (x);
    for (; *overlays; overlays++) {
        json_t *rec = node_with (*overlays);

        assert_int_equal (tr_opendc_add (x, rec, &error), 0);
        json_decref (rec);
    }
    fd = open (dir, O_RDONLY | O_DIRECTORY);
    assert_true (fd >= 0);
    assert_int_equal (tr_opendc_write (x, fd, TR_OPENDC_CSV, 0600, NULL,
                                       &error),
                      0);
    close (fd);
    t = slurp ("tasks.csv");
    f = slurp ("fragments.csv");
    assert_string_equal (t, tasks);
    assert_string_equal (f, frags);
    free (t);
    free (f);
    tr_opendc_destroy (x);
}

#define TASK_HEAD \
    "id,name,submission_time,duration,cpu_count,cpu_capacity,mem_capacity\r\n"
#define FRAG_HEAD "id,duration,cpu_count,cpu_usage\r\n"

/* One step: 4 CPUs x 2600 MHz; peak 50 MiB + 1 byte rounds up to 51;
 * bucket 0 covers 0-20 s (from the step's start to the next bucket),
 * bucket 1 20-30 s (to the step's end).
 */
static void test_one_step (void **state)
{
    (void)state;
    check_csv ((const char *const[]){ "{}", NULL },
               TASK_HEAD "1,42.batch@n1,1767225600000,30000,4,10400,51\r\n",
               FRAG_HEAD "1,20000,4,3510.0000000000005\r\n1,10000,4,260\r\n");
}

/* Tasks are numbered by start time, then name; each task's fragments
 * follow in its order, whatever the order records came in.
 */
static void test_order (void **state)
{
    (void)state;
    check_csv ((const char *const[]){
                   "{'identity': {'node': 'n2'}}",
                   "{'identity': {'job_id': '41'},"
                   " 'time': {'start_unix_ms': 1767225590000},"
                   " 'series': {'t_s': [], 'metrics': {}}}",
                   "{}",
                   NULL },
               TASK_HEAD "1,41.batch@n1,1767225590000,40000,4,10400,51\r\n"
                         "2,42.batch@n1,1767225600000,30000,4,10400,51\r\n"
                         "3,42.batch@n2,1767225600000,30000,4,10400,51\r\n",
               FRAG_HEAD "1,40000,4,1755.0000000000002\r\n"
                         "2,20000,4,3510.0000000000005\r\n2,10000,4,260\r\n"
                         "3,20000,4,3510.0000000000005\r\n3,10000,4,260\r\n");
}

/* Where the CPUs and memory come from when the record lacks the first
 * choice, and reals that need 17 digits.
 */
static void test_fallbacks (void **state)
{
    (void)state;
    /* no grant: the CPUs it was bound to */
    check_csv ((const char *const[]){
                   "{'request': {'cpus_on_node': 0},"
                   " 'host': {'topology': {'bound': {'pus': 3, 'cores': 3,"
                   "  'sockets': 1, 'numa_nodes': 1}}}}",
                   NULL },
               TASK_HEAD "1,42.batch@n1,1767225600000,30000,3,7800,51\r\n",
               FRAG_HEAD "1,20000,3,3510.0000000000005\r\n1,10000,3,260\r\n");
    /* nor that: the node's online CPUs */
    check_csv ((const char *const[]){
                   "{'request': {'cpus_on_node': 0}, 'host': {'cpus_online':"
                   " 6}}",
                   NULL },
               TASK_HEAD "1,42.batch@n1,1767225600000,30000,6,15600,51\r\n",
               FRAG_HEAD "1,20000,6,3510.0000000000005\r\n1,10000,6,260\r\n");
    /* nothing: the most it used, rounded up; no peak: the series' */
    check_csv ((const char *const[]){
                   "{'request': {'cpus_on_node': 0},"
                   " 'summary': {'memory': {'peak_bytes': null}},"
                   " 'series': {'metrics': {'mem_bytes': {'min': [1, 1],"
                   "  'mean': [1, 1], 'max': [3145728, 1048577]}}},"
                   " 'host': {'topology': {'cpu_mhz': 2601}}}",
                   NULL },
               TASK_HEAD "1,42.batch@n1,1767225600000,30000,2,5202,3\r\n",
               FRAG_HEAD "1,20000,2,3511.3500000000004\r\n"
                         "1,10000,2,260.1\r\n");
}

/* Buckets past the end are cut at it, and an empty span is left out; a
 * step without an end time lasts its elapsed time; names that need CSV
 * quoting are quoted.
 */
static void test_edges (void **state)
{
    (void)state;
    check_csv ((const char *const[]){
                   "{'series': {'t_s': [0, 0.0004, 29.9996, 31],"
                   " 'metrics': {'cpu_cores': {'min': [1, 2, 3, 4],"
                   "  'mean': [1, 2, 3, 4], 'max': [1, 2, 3, 4]}}}}",
                   NULL },
               TASK_HEAD "1,42.batch@n1,1767225600000,30000,4,10400,51\r\n",
               FRAG_HEAD "1,30000,4,5200\r\n");
    check_csv ((const char *const[]){
                   "{'identity': {'job_id': 'a,\\\"b'},"
                   " 'time': {'end_unix_ms': null, 'elapsed_s': 12.3456}}",
                   NULL },
               TASK_HEAD "1,\"a,\"\"b.batch@n1\",1767225600000,12346,4,10400,"
                         "51\r\n",
               FRAG_HEAD "1,12346,4,3510.0000000000005\r\n");
}

/* Steps that cannot be tasks are refused with the reason. */
static void test_refused (void **state)
{
    static const struct {
        const char *overlay;
        const char *why;
    } cases[] = {
        { "{'host': {'topology': {'cpu_mhz': 0}}}", "no CPU frequency" },
        { "{'host': {'topology': {'cpu_mhz': null}}}", "no CPU frequency" },
        { "{'time': {'end_unix_ms': null, 'elapsed_s': null}}",
          "no end time" },
        { "{'time': {'end_unix_ms': 1767225600000}}",
          "less than a millisecond" },
        { "{'time': {'start_unix_ms': -5}}", "no start time" },
    };
    tr_opendc_t *x = tr_opendc_create ();

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        json_t *rec = node_with (cases[i].overlay);
        tr_error_t error;

        assert_int_equal (tr_opendc_add (x, rec, &error), 1);
        if (!strstr (error.text, cases[i].why))
            fail_msg ("case %zu: '%s' does not say '%s'", i, error.text,
                      cases[i].why);
        json_decref (rec);
    }
    assert_int_equal (tr_opendc_tasks (x), 0);
    assert_int_equal (tr_opendc_fragments (x), 0);
    tr_opendc_destroy (x);
}

/* The Parquet tables are written whole, with Parquet's magic at both
 * ends, replacing what was there.
 */
static void test_parquet_files (void **state)
{
    tr_opendc_t *x = tr_opendc_create ();
    json_t *rec = node_with ("{}");
    tr_error_t error;
    int fd = open (dir, O_RDONLY | O_DIRECTORY);

    (void)state;
    assert_true (fd >= 0);
    assert_int_equal (tr_opendc_add (x, rec, &error), 0);
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal (tr_opendc_write (x, fd, TR_OPENDC_PARQUET, 0640,
                                           "test", &error),
                          0);
        for (const char *const *n = (const char *const[]){
                 "tasks.parquet", "fragments.parquet", NULL };
             *n; n++) {
            char path[128];
            struct stat st;
            size_t len;
            char *s = tr_path_read_file (fd, *n, 1 << 20, &len, NULL);

            assert_non_null (s);
            assert_true (len > 12);
            assert_memory_equal (s, "PAR1", 4);
            assert_memory_equal (s + len - 4, "PAR1", 4);
            free (s);
            snprintf (path, sizeof (path), "%s/%s", dir, *n);
            assert_int_equal (lstat (path, &st), 0);
            assert_int_equal (st.st_mode & 07777, 0640);
        }
    }
    close (fd);
    json_decref (rec);
    tr_opendc_destroy (x);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_one_step, setup, teardown),
        cmocka_unit_test_setup_teardown (test_order, setup, teardown),
        cmocka_unit_test_setup_teardown (test_fallbacks, setup, teardown),
        cmocka_unit_test_setup_teardown (test_edges, setup, teardown),
        cmocka_unit_test (test_refused),
        cmocka_unit_test_setup_teardown (test_parquet_files, setup,
                                         teardown),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
