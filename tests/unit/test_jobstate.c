/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for the scheduler queries (jobstate.c): Slurm time limits,
 * squeue's output, the state mapping, and a real child process standing
 * in for squeue (a shell script that prints what squeue would).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "libtracer/jobstate.h"

static const struct {
    const char *text;
    long seconds;
} limits[] = {
    { "5", 300 },              { "1:00", 60 },
    { "2:30", 150 },           { "1:00:00", 3600 },
    { "10:00:01", 36001 },     { "1-00:00:00", 86400 },
    { "2-03", 183600 },        { "1-01:02", 90120 },
    { "UNLIMITED", -1 },       { "INFINITE", -1 },
    { "NOT_SET", -1 },         { "INVALID", -1 },
    { "", -1 },                { "1:2:3:4", -1 },
    { "-5", -1 },              { "1-", -1 },
    { "12x", -1 },             { "1:-1", -1 },
};

static void test_limits (void **state)
{
    for (size_t i = 0; i < sizeof (limits) / sizeof (limits[0]); i++) {
        long got = tr_jobstate_parse_limit (limits[i].text);
        if (got != limits[i].seconds)
            fail_msg ("'%s': %ld, expected %ld", limits[i].text, got,
                      limits[i].seconds);
    }
}

static void test_lines (void **state)
{
    struct tr_jobstate j;
    tr_error_t error;

    assert_int_equal (tr_jobstate_parse_line ("TIMEOUT|1:00\n", &j, &error),
                      0);
    assert_string_equal (j.state, "TIMEOUT");
    assert_int_equal (j.time_limit_s, 60);
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|UNLIMITED", &j, NULL),
                      0);
    assert_int_equal (j.time_limit_s, -1);
    assert_int_equal (tr_jobstate_parse_line ("RUNNING 1:00", &j, &error),
                      -1);
    assert_string_equal (error.text, "squeue output has no '|'");
    assert_int_equal (tr_jobstate_parse_line ("run;ning|1:00", &j, &error),
                      -1);
    assert_string_equal (error.text, "squeue output: bad state");
    assert_int_equal (tr_jobstate_parse_line ("|1:00", &j, &error), -1);
}

static void test_outcome (void **state)
{
    assert_string_equal (tr_jobstate_outcome ("TIMEOUT"), "timeout");
    assert_string_equal (tr_jobstate_outcome ("DEADLINE"), "timeout");
    assert_string_equal (tr_jobstate_outcome ("CANCELLED"), "cancelled");
    assert_string_equal (tr_jobstate_outcome ("PREEMPTED"), "cancelled");
    assert_string_equal (tr_jobstate_outcome ("NODE_FAIL"), "cancelled");
    assert_null (tr_jobstate_outcome ("RUNNING"));
    assert_null (tr_jobstate_outcome ("COMPLETING"));
    assert_null (tr_jobstate_outcome ("OUT_OF_MEMORY"));
    assert_null (tr_jobstate_outcome (NULL));
}

/* A stand-in squeue: prints its arguments' job id and SLURM_CONF. */
static char dir[64];
static char prog[128];

static int setup (void **state)
{
    FILE *f;

    snprintf (dir, sizeof (dir), "/tmp/test_jobstate.XXXXXX");
    if (!mkdtemp (dir))
        return -1;
    snprintf (prog, sizeof (prog), "%s/squeue", dir);
    if (!(f = fopen (prog, "w")))
        return -1;
    fprintf (f, "#!/bin/sh\n"
                "case \"$3\" in\n"
                "--jobs=42) echo \"TIMEOUT|1-00:00:00\" ;;\n"
                "--jobs=43) echo \"CANCELLED|$SLURM_CONF\" ;;\n"
                "--jobs=44) exit 1 ;;\n"
                "--jobs=45) : ;;\n"
                "--jobs=46) sleep 30 ;;\n"
                "esac\n");
    fclose (f);
    return chmod (prog, 0755);
}

static int teardown (void **state)
{
    unlink (prog);
    rmdir (dir);
    return 0;
}

/* Run a query to its end, as tracerd's poll loop does. */
static int run (const char *job, struct tr_jobstate *out, tr_error_t *error)
{
    tr_jobstate_query_t *q = tr_jobstate_query_start (prog, job, error);
    int rc = 0;

    if (!q)
        return -2;
    while (rc == 0) {
        struct pollfd p = { .fd = tr_jobstate_query_fd (q), .events = POLLIN };
        assert_true (poll (&p, 1, 10000) > 0);
        rc = tr_jobstate_query_read (q);
    }
    rc = rc == 1 ? tr_jobstate_query_result (q, out, error) : -3;
    tr_jobstate_query_destroy (q);
    return rc;
}

static void test_query (void **state)
{
    struct tr_jobstate j;
    tr_error_t error;

    assert_int_equal (run ("42", &j, &error), 0);
    assert_string_equal (j.state, "TIMEOUT");
    assert_int_equal (j.time_limit_s, 86400);

    /* SLURM_CONF is passed on, nothing else of ours */
    setenv ("SLURM_CONF", "7:00", 1);
    if (run ("43", &j, &error) != 0)
        fail_msg ("43: %s", error.text);
    assert_string_equal (j.state, "CANCELLED");
    assert_int_equal (j.time_limit_s, 420);
    unsetenv ("SLURM_CONF");

    assert_int_equal (run ("44", &j, &error), -1);
    assert_string_equal (error.text, "squeue failed (wait status 256)");
    assert_int_equal (run ("45", &j, &error), -1);
    assert_string_equal (error.text, "squeue does not know the job");
}

static void test_refused (void **state)
{
    tr_error_t error;
    const char *bad[] = { "", "12;rm", "1_2", "$(id)", "123456789012345678901" };

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        assert_null (tr_jobstate_query_start (prog, bad[i], &error));
        assert_int_equal (errno, EINVAL);
        assert_string_equal (error.text, "job id is not a number");
    }
}

/* A missing program fails at the start (glibc reports the exec error)
 * or, where the exec error is not reported (valgrind), as a failed run.
 */
static void test_missing (void **state)
{
    tr_error_t error;
    tr_jobstate_query_t *q;
    struct tr_jobstate j;

    q = tr_jobstate_query_start ("/nonexistent/squeue", "1", &error);
    if (!q) {
        assert_non_null (strstr (error.text, "/nonexistent/squeue"));
        return;
    }
    while (tr_jobstate_query_read (q) == 0)
        usleep (10000);
    assert_int_equal (tr_jobstate_query_result (q, &j, &error), -1);
    assert_non_null (strstr (error.text, "squeue failed"));
    tr_jobstate_query_destroy (q);
}

/* A hung squeue is killed and reaped by destroy, whatever it was doing. */
static void test_destroy_hung (void **state)
{
    tr_jobstate_query_t *q = tr_jobstate_query_start (prog, "46", NULL);

    assert_non_null (q);
    assert_int_equal (tr_jobstate_query_read (q), 0);
    tr_jobstate_query_destroy (q);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_limits),
        cmocka_unit_test (test_lines),
        cmocka_unit_test (test_outcome),
        cmocka_unit_test (test_query),
        cmocka_unit_test (test_refused),
        cmocka_unit_test (test_missing),
        cmocka_unit_test (test_destroy_hung),
    };

    return cmocka_run_group_tests (tests, setup, teardown);
}
