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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "libtracer/node/jobstate.h"
#include "libtracer/record/record.h"
#include "libtracer/record/states.h"

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
    assert_int_equal (j.time_limit_s, TR_JOBSTATE_UNLIMITED);
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|INFINITE", &j, NULL),
                      0);
    assert_int_equal (j.time_limit_s, TR_JOBSTATE_UNLIMITED);
    /* Slurm 22.05's limit for a job that asked for none */
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|365-00:00:00", &j,
                                              NULL),
                      0);
    assert_int_equal (j.time_limit_s, TR_JOBSTATE_UNLIMITED);
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|364-23:59:59", &j,
                                              NULL),
                      0);
    assert_int_equal (j.time_limit_s, 31535999);
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|NOT_SET", &j, NULL),
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

/* The controller's account, partition, QOS and name; the job name is the
 * rest of the line, '|' and all, and "(null)" is no value.
 */
static void test_fields (void **state)
{
    struct tr_jobstate j;
    tr_error_t error;
    char name[2048];
    json_t *f;

    assert_int_equal (tr_jobstate_parse_line (
                          "RUNNING|10:00|physics|gpu|(null)|N/A|N/A|10|N/A|10|a|b c\nX|Y\n",
                          &j, &error),
                      0);
    assert_string_equal (j.state, "RUNNING");
    assert_int_equal (j.time_limit_s, 600);
    assert_string_equal (j.account, "physics");
    assert_string_equal (j.partition, "gpu");
    assert_string_equal (j.qos, "");
    assert_string_equal (j.job_name, "a|b c");
    assert_non_null (f = tr_jobstate_fields (&j));
    assert_string_equal (json_string_value (json_object_get (f, "account")),
                         "physics");
    assert_null (json_object_get (f, "qos"));
    assert_int_equal (json_integer_value (json_object_get (f, "time_limit_s")),
                      600);
    assert_null (json_object_get (f, "time_limit"));
    json_decref (f);

    /* no limit: "time_limit": "UNLIMITED", never a number */
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|UNLIMITED|a|p|q|N/A|N/A|9|N/A|9|n",
                                              &j, &error),
                      0);
    assert_non_null (f = tr_jobstate_fields (&j));
    assert_null (json_object_get (f, "time_limit_s"));
    assert_string_equal (json_string_value (json_object_get (f, "time_limit")),
                         "UNLIMITED");
    {
        json_t *id = json_object (), *req = json_object ();

        assert_int_equal (tr_jobstate_apply_fields (f, id, req), 0);
        assert_string_equal (
            json_string_value (json_object_get (req, "time_limit")),
            "UNLIMITED");
        assert_null (json_object_get (id, "time_limit"));
        json_decref (id);
        json_decref (req);
    }
    json_decref (f);

    /* a name with a newline goes on, up to the next answer's line */
    assert_int_equal (tr_jobstate_parse_line (
                          "RUNNING|1|a|p|q|N/A|N/A|1|N/A|1|two\nlines|x\nRUNNING|1|a|p|q|n\n",
                          &j, &error),
                      0);
    assert_string_equal (j.job_name, "two\nlines|x");

    /* the old two-field answer leaves them empty */
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|5", &j, &error), 0);
    assert_string_equal (j.account, "");
    assert_string_equal (j.job_name, "");

    /* a huge name is cut, never refused */
    memset (name, 'n', sizeof (name));
    memcpy (name, "RUNNING|5|a|p|q|N/A|N/A|5|N/A|5|", 32);
    name[sizeof (name) - 1] = '\0';
    assert_int_equal (tr_jobstate_parse_line (name, &j, &error), 0);
    assert_int_equal (strlen (j.job_name), TR_JOBSTATE_TEXT - 1);
    assert_true (j.array_task == -1);

    /* an array task: its array and index, from the controller, into
     * the identity (an extern step's SPANK items do not say them)
     */
    assert_int_equal (tr_jobstate_parse_line (
                          "RUNNING|5|a|p|q|N/A|N/A|26|3|27|arr", &j, &error),
                      0);
    assert_string_equal (j.array_job, "26");
    assert_true (j.array_task == 3);
    assert_string_equal (j.job_name, "arr");
    assert_non_null (f = tr_jobstate_fields (&j));
    {
        json_t *id = json_object (), *req = json_object ();

        assert_int_equal (tr_jobstate_apply_fields (f, id, req), 0);
        assert_string_equal (
            json_string_value (json_object_get (id, "array_job_id")), "26");
        assert_int_equal (
            json_integer_value (json_object_get (id, "array_task_id")), 3);
        json_decref (id);
        json_decref (req);
    }
    json_decref (f);
    /* not an array task, or nonsense: nothing */
    assert_int_equal (tr_jobstate_parse_line (
                          "RUNNING|5|a|p|q|N/A|N/A|26|x3|27|arr", &j, &error),
                      0);
    assert_true (j.array_task == -1);
    assert_string_equal (j.array_job, "");

    /* squeue --jobs=26 of an array: a line per task; job 26 is task 3 */
    {
        const char *answer =
            "COMPLETED|5|a|p|q|N/A|N/A|26|1|27|arr\n"
            "RUNNING|5|a|p|q|N/A|N/A|26|3|26|arr\n"
            "PENDING|5|a|p|q|N/A|N/A|26|2|28|arr\n";
        const char *forged =
            "RUNNING|5|a|p|q|N/A|N/A|26|1|27|x\n"
            "COMPLETED|9|evil|p|q|N/A|N/A|26|3|26|y\n"
            "RUNNING|5|a|p|q|N/A|N/A|26|3|26|arr\n";

        assert_int_equal (tr_jobstate_parse_answer (answer, "26", &j, &error),
                          0);
        assert_string_equal (j.state, "RUNNING");
        assert_true (j.array_task == 3);
        assert_int_equal (tr_jobstate_parse_answer (answer, "28", &j, &error),
                          0);
        assert_string_equal (j.state, "PENDING");
        /* a name that makes a line of its own for the job: believed
         * neither
         */
        assert_int_equal (tr_jobstate_parse_answer (forged, "26", &j,
                                                    &error),
                          -1);
        assert_int_equal (errno, EPROTO);
        assert_int_equal (tr_jobstate_parse_answer (answer, "99", &j,
                                                    &error),
                          -1);
        assert_int_equal (errno, ENOENT);
        /* an older answer that names no job: its first line */
        assert_int_equal (tr_jobstate_parse_answer ("TIMEOUT|1:00\n", "5",
                                                    &j, &error),
                          0);
        assert_string_equal (j.state, "TIMEOUT");
    }
}

/* Tagged answers (SQUEUE_FORMAT with a tag the job cannot know): an
 * answer runs to the next line starting with the tag, so no name makes
 * or breaks one; an answer not in that form is refused.
 */
static void test_tagged (void **state)
{
    struct tr_jobstate j;
    tr_error_t error;
    const char *t = "0123456789abcdef";
    const char *arr = "0123456789abcdef|COMPLETED|5|a|p|q|N/A|N/A|26|1|27|arr\n"
                      "0123456789abcdef|RUNNING|5|a|p|q|N/A|N/A|26|3|26|x\n"
                      "COMPLETED|9|evil|p|q|N/A|N/A|26|3|26|y\n"
                      "0123456789abcdef|PENDING|5|a|p|q|N/A|N/A|26|2|28|arr\n";

    (void)state;
    assert_int_equal (tr_jobstate_parse_tagged (arr, t, "26", &j, &error), 0);
    assert_string_equal (j.state, "RUNNING");
    assert_true (j.array_task == 3);
    assert_string_equal (j.job_name,
                         "x\nCOMPLETED|9|evil|p|q|N/A|N/A|26|3|26|y");
    assert_int_equal (tr_jobstate_parse_tagged (arr, t, "28", &j, &error), 0);
    assert_string_equal (j.job_name, "arr");
    assert_int_equal (tr_jobstate_parse_tagged (arr, t, "99", &j, &error), -1);
    assert_int_equal (errno, ENOENT);
    /* two answers for one job (no name can make them): not believed */
    assert_int_equal (tr_jobstate_parse_tagged (
                          "0123456789abcdef|RUNNING|5|a|p|q|N/A|N/A|N/A|N/A|7|a\n"
                          "0123456789abcdef|RUNNING|5|b|p|q|N/A|N/A|N/A|N/A|7|b\n",
                          t, "7", &j, &error),
                      -1);
    assert_int_equal (errno, EPROTO);
    /* untagged (a stand-in that ignores SQUEUE_FORMAT), another tag */
    assert_int_equal (tr_jobstate_parse_tagged ("RUNNING|5\n", t, "7", &j,
                                                &error),
                      -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (tr_jobstate_parse_tagged (
                          "fedcba9876543210|RUNNING|5|a|p|q|N/A|N/A|N/A|N/A|7|a\n",
                          t, "7", &j, &error),
                      -1);
}

/* What the scheduler could not be asked is named, with the reason;
 * what is there is not; the hook cannot say it.
 */
static void test_unknown (void **state)
{
    json_t *id = json_pack ("{s:s, s:s, s:s, s:s, s:s, s:i, s:{s:s}}",
                            "scheduler", "slurm", "cluster", "c", "job_id",
                            "5", "step_id", "0", "node", "n", "uid", 0,
                            "unknown", "account", "forged");
    json_t *req = json_object ();
    char why[400];

    (void)state;
    assert_int_equal (tr_jobstate_trust_identity (id, "c"), 0);
    assert_null (json_object_get (id, "unknown"));
    assert_int_equal (json_object_set_new (id, "qos", json_string ("normal")),
                      0);
    assert_int_equal (tr_jobstate_mark_unknown (id, req,
                                                "squeue did not answer in "
                                                "time"),
                      0);
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (id, "unknown"), "job_name")),
                         "squeue did not answer in time");
    assert_non_null (json_object_get (json_object_get (id, "unknown"),
                                      "time_limit_s"));
    assert_non_null (json_object_get (json_object_get (id, "unknown"),
                                      "account"));
    assert_null (json_object_get (json_object_get (id, "unknown"), "qos"));
    assert_int_equal (json_object_size (json_object_get (id, "unknown")), 4);
    /* a long reason is cut to the record's bound, at a character */
    memset (why, 'x', sizeof (why));
    memcpy (why + 255, "\xc3\xa9", 2);
    why[sizeof (why) - 1] = '\0';
    assert_int_equal (tr_jobstate_mark_unknown (id, NULL, why), 0);
    assert_true (strlen (json_string_value (json_object_get (
                     json_object_get (id, "unknown"), "account")))
                 == 255);
    /* the record's schema takes it, and only the scheduler's members */
    {
        tr_error_t error;
        assert_int_equal (tr_record_validate_section ("identity", id, &error),
                          0);
        json_object_set_new (json_object_get (id, "unknown"), "node",
                             json_string ("x"));
        assert_int_equal (tr_record_validate_section ("identity", id, &error),
                          -1);
        assert_non_null (strstr (error.text, "identity.unknown.node"));
    }
    json_decref (id);
    json_decref (req);
}

/* The submit and start times (%V, %S) come before the name, in local
 * time; "N/A" and "Unknown" are no time, and the name after them keeps
 * its '|'.
 */
static void test_times (void **state)
{
    struct tr_jobstate j;
    tr_error_t error;
    json_t *f, *t;
    char *tz = getenv ("TZ") ? strdup (getenv ("TZ")) : NULL;

    setenv ("TZ", "UTC", 1);
    tzset ();
    assert_int_equal (tr_jobstate_parse_line (
                          "RUNNING|5|a|p|q|2026-01-01T00:00:00|"
                          "2026-01-01T00:01:30|5|N/A|5|x|y|z\n",
                          &j, &error),
                      0);
    assert_true (j.submit_ms == 1767225600000LL);
    assert_true (j.start_ms == 1767225690000LL);
    assert_string_equal (j.job_name, "x|y|z");
    assert_string_equal (j.qos, "q");
    assert_non_null (f = tr_jobstate_fields (&j));
    assert_true (json_integer_value (json_object_get (f, "submit_unix_ms"))
                 == 1767225600000LL);
    assert_true (json_integer_value (json_object_get (f, "job_start_unix_ms"))
                 == 1767225690000LL);
    {
        json_t *id = json_object (), *req = json_object ();

        /* never into the identity or the request: into "time" */
        assert_int_equal (tr_jobstate_apply_fields (f, id, req), 0);
        assert_null (json_object_get (id, "submit_unix_ms"));
        assert_null (json_object_get (req, "job_start_unix_ms"));
        t = json_pack ("{s:I}", "start_unix_ms", (json_int_t)1767225700000LL);
        assert_int_equal (tr_jobstate_apply_time (f, t), 0);
        assert_true (json_integer_value (json_object_get (t, "submit_unix_ms"))
                     == 1767225600000LL);
        if (tr_record_validate_section ("time", t, &error) < 0)
            fail_msg ("%s", error.text);
        json_decref (t);
        json_decref (id);
        json_decref (req);
    }
    json_decref (f);

    /* a pending job's start, a time squeue does not know */
    assert_int_equal (tr_jobstate_parse_line (
                          "PENDING|5|a|p|q|2026-01-01T00:00:00|N/A|5|N/A|5|n|m", &j,
                          &error),
                      0);
    assert_true (j.submit_ms == 1767225600000LL);
    assert_true (j.start_ms == -1);
    assert_string_equal (j.job_name, "n|m");
    assert_non_null (f = tr_jobstate_fields (&j));
    assert_null (json_object_get (f, "job_start_unix_ms"));
    json_decref (f);
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|5|a|p|q|Unknown|N/A|5|N/A|5|n",
                                              &j, &error),
                      0);
    assert_true (j.submit_ms == -1);
    assert_true (j.start_ms == -1);
    /* the older answer has none */
    assert_int_equal (tr_jobstate_parse_line ("RUNNING|5", &j, &error), 0);
    assert_true (j.submit_ms == -1 && j.start_ms == -1);
    /* not a time: no time, never a guess */
    for (const char *const *s = (const char *const[]){
             "2026-01-01 00:00:00", "2026-01-01T00:00", "2026-13-01T00:00:00",
             "2026-01-01T00:00:00x", "1969-12-31T00:00:00", "", NULL };
         *s; s++)
        assert_true (tr_jobstate_parse_time (*s) == -1);
    if (tz)
        setenv ("TZ", tz, 1);
    else
        unsetenv ("TZ");
    free (tz);
    tzset ();
}

/* Applying the controller's fields: the record's bounds hold, and what
 * was cut is named in identity.truncated.
 */
static void test_apply (void **state)
{
    json_t *fields = json_object ();
    json_t *id = json_pack ("{s:s s:s s:s s:s s:s s:i}", "scheduler", "slurm",
                            "cluster", "c", "job_id", "1", "step_id", "0",
                            "node", "n1", "uid", 0);
    json_t *req = json_object ();
    char account[201];
    tr_error_t error;

    memset (account, 'a', 200);
    account[200] = '\0';
    json_object_set_new (fields, "account", json_string (account));
    json_object_set_new (fields, "job_name", json_string ("x\ty\033[2J"));
    json_object_set_new (fields, "qos", json_string ("normal"));
    json_object_set_new (fields, "time_limit_s", json_integer (60));
    json_object_set_new (fields, "gres_nodes", json_array ());
    assert_int_equal (tr_jobstate_apply_fields (fields, id, req), 0);
    assert_int_equal (strlen (json_string_value (json_object_get (id,
                                                                  "account"))),
                      128);
    assert_string_equal (json_string_value (json_object_get (id, "job_name")),
                         "x?y?[2J");
    assert_string_equal (json_string_value (json_object_get (id, "qos")),
                         "normal");
    assert_int_equal (json_integer_value (json_object_get (req,
                                                           "time_limit_s")),
                      60);
    assert_null (json_object_get (id, "gres_nodes"));
    assert_null (json_object_get (req, "gres_nodes"));
    assert_int_equal (json_array_size (json_object_get (id, "truncated")), 2);
    assert_string_equal (json_string_value (json_array_get (
                             json_object_get (id, "truncated"), 0)),
                         "account");
    assert_string_equal (json_string_value (json_array_get (
                             json_object_get (id, "truncated"), 1)),
                         "job_name");
    if (tr_record_validate_section ("identity", id, &error) < 0)
        fail_msg ("%s", error.text);
    /* again: nothing more to cut, nothing listed twice */
    assert_int_equal (tr_record_clip_identity (id), 0);
    assert_int_equal (json_array_size (json_object_get (id, "truncated")), 2);
    json_decref (fields);
    json_decref (id);
    json_decref (req);
}

/* A multi-byte character at the bound is dropped whole. */
static void test_clip_utf8 (void **state)
{
    char user[80];
    json_t *id;

    memset (user, 'u', sizeof (user));
    memcpy (user + 63, "\xc3\xa9", 2);   /* bytes 63 and 64: 'é' */
    user[70] = '\0';
    id = json_pack ("{s:s}", "user", user);
    assert_int_equal (tr_record_clip_identity (id), 1);
    assert_int_equal (strlen (json_string_value (json_object_get (id, "user"))),
                      63);
    json_decref (id);
}

/* What the plugin may have read in the job environment is dropped for
 * Slurm; names come from the node's user database.
 */
static void test_trust (void **state)
{
    json_t *id = json_pack ("{s:s s:s s:s s:s s:s s:s s:s s:s s:s s:i s:i "
                            "s:[s]}",
                            "scheduler", "slurm", "cluster", "other",
                            "user", "forged", "account", "forged",
                            "partition", "forged", "qos", "forged",
                            "job_name", "forged", "job_id", "7", "group",
                            "forged", "uid", 0, "gid", 0, "truncated", "user");
    json_t *pbs;

    /* the run's paths come from the controller only */
    json_object_set_new (id, "command", json_string ("/x/.snakemake/tmp.a/"
                                                     "snakejob.r.1.sh"));
    json_object_set_new (id, "work_dir", json_string ("/x"));

    assert_int_equal (tr_jobstate_trust_identity (id, "mine"), 0);
    assert_string_equal (json_string_value (json_object_get (id, "cluster")),
                         "mine");
    assert_string_equal (json_string_value (json_object_get (id, "user")),
                         "root");
    assert_string_equal (json_string_value (json_object_get (id, "group")),
                         "root");
    assert_null (json_object_get (id, "account"));
    assert_null (json_object_get (id, "partition"));
    assert_null (json_object_get (id, "qos"));
    assert_null (json_object_get (id, "job_name"));
    assert_null (json_object_get (id, "command"));
    assert_null (json_object_get (id, "work_dir"));
    assert_null (json_object_get (id, "truncated"));
    assert_string_equal (json_string_value (json_object_get (id, "job_id")),
                         "7");
    json_decref (id);

    /* a uid without a name: no user, never a made-up one */
    id = json_pack ("{s:s s:i s:i}", "scheduler", "slurm", "uid", 4000000000,
                    "gid", 4000000000);
    assert_int_equal (tr_jobstate_trust_identity (id, "mine"), 0);
    assert_null (json_object_get (id, "user"));
    assert_null (json_object_get (id, "group"));
    json_decref (id);

    /* other schedulers' hooks run as root from the server's own data */
    pbs = json_pack ("{s:s s:s s:s s:s s:i}", "scheduler", "pbs", "cluster",
                     "pbs1", "user", "alice", "account", "acct", "uid", 0);
    assert_int_equal (tr_jobstate_trust_identity (pbs, "mine"), 0);
    assert_string_equal (json_string_value (json_object_get (pbs, "cluster")),
                         "pbs1");
    assert_string_equal (json_string_value (json_object_get (pbs, "user")),
                         "alice");
    assert_string_equal (json_string_value (json_object_get (pbs, "account")),
                         "acct");
    json_decref (pbs);
}

/* tracerd's fallback for cluster.name: slurm.conf's ClusterName */
static void test_slurm_cluster (void **state)
{
    char path[] = "/tmp/test_jobstate_conf.XXXXXX";
    char buf[65];
    int fd = mkstemp (path);
    FILE *f;

    assert_true (fd >= 0);
    assert_non_null (f = fdopen (fd, "w"));
    fputs ("# ClusterName=commented\nSlurmctldHost=x\n"
           "  clustername = MyCluster  # trailing\n", f);
    fclose (f);
    assert_int_equal (tr_jobstate_slurm_cluster (path, buf, sizeof (buf)), 0);
    assert_string_equal (buf, "mycluster");
    assert_non_null (f = fopen (path, "w"));
    fputs ("ClusterName=../x\n", f);
    fclose (f);
    assert_int_equal (tr_jobstate_slurm_cluster (path, buf, sizeof (buf)), -1);
    assert_int_equal (errno, EINVAL);
    assert_non_null (f = fopen (path, "w"));
    fputs ("SlurmctldHost=x\n", f);
    fclose (f);
    assert_int_equal (tr_jobstate_slurm_cluster (path, buf, sizeof (buf)), -1);
    assert_int_equal (errno, ENOENT);
    unlink (path);
    assert_int_equal (tr_jobstate_slurm_cluster (path, buf, sizeof (buf)), -1);
    assert_int_equal (errno, ENOENT);
}

static void test_hostlist (void **state)
{
    static const struct {
        const char *list, *node;
        bool in;
    } h[] = {
        { "n1", "n1", true },           { "n1", "n10", false },
        { "n[1-3]", "n2", true },       { "n[1-3]", "n4", false },
        { "n[01-04]", "n03", true },    { "n[01-04]", "n3", false },
        { "n[1-10]", "n10", true },     { "n[1-10]", "n01", false },
        { "a1,n[5,7-8]", "n7", true },  { "a1,n[5,7-8]", "n6", false },
        { "a1,n[5,7-8]", "a1", true },  { "gpu[1-2]-x", "gpu2-x", true },
        { "n[1-2]", "n", false },       { "n[1-2", "n1", false },
        { "", "n1", false },            { "r[1-2]n[1-2]", "r1n1", false },
    };

    for (size_t i = 0; i < sizeof (h) / sizeof (h[0]); i++)
        if (tr_jobstate_hostlist_has (h[i].list, h[i].node) != h[i].in)
            fail_msg ("'%s' has '%s': expected %d", h[i].list, h[i].node,
                      h[i].in);
}

/* scontrol --details show job: the per-node GRES lines, and a job whose
 * name (any text) holds a line of its own.
 */
static void test_detail (void **state)
{
    const char *out =
        "JobId=5 JobName=t\n"
        "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
        "   JOB_GRES=gpu:3\n"
        "     Nodes=n[1-2] CPU_IDs=0-1 Mem=100 GRES=gpu:2(IDX:0-1)\n"
        "     Nodes=n3 CPU_IDs=0 Mem=100 GRES=gpu:a100:1(IDX:3),mps:50(0)\n"
        "     Nodes=n4 CPU_IDs=0 Mem=100 GRES=\n"
        "     Nodes=n5 CPU_IDs=0 Mem=100 GRES=gpu:1(IDX:N/A)\n"
        "   Command=/bin/true\n";
    const char *forged =
        "JobId=6 JobName=x\n"
        "     Nodes=n1 CPU_IDs=0 Mem=1 GRES=gpu:4(IDX:0-3)\n"
        "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
        "   JOB_GRES=(null)\n"
        "     Nodes=n1 CPU_IDs=0 Mem=100 GRES=\n";
    json_t *pairs;
    char buf[64];

    assert_non_null (pairs = tr_jobstate_parse_detail (out));
    assert_int_equal (json_array_size (pairs), 4);
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n2", buf, sizeof (buf)),
                      1);
    assert_string_equal (buf, "0,1");
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n3", buf, sizeof (buf)),
                      1);
    assert_string_equal (buf, "3");
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n4", buf, sizeof (buf)),
                      0);
    assert_string_equal (buf, "");
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n5", buf, sizeof (buf)),
                      -1);
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n9", buf, sizeof (buf)),
                      -1);
    json_decref (pairs);

    /* two lines for n1 that disagree: the GPUs are unknown */
    assert_non_null (pairs = tr_jobstate_parse_detail (forged));
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n1", buf, sizeof (buf)),
                      -1);
    json_decref (pairs);
}

/* The job script and working directory: one line each, or unknown */
static void test_paths (void **state)
{
    const char *out =
        "JobId=5 JobName=snakejob.a.1.sh\n"
        "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
        "   Command=/home/alice/my proj/.snakemake/tmp.ab/snakejob.a.1.sh\n"
        "   WorkDir=/home/alice/my proj\n"
        "   StdErr=/home/alice/slurm-5.out\n";
    /* a job name with a newline and a Command= of its own */
    const char *forged =
        "JobId=6 JobName=x\n"
        "   Command=/home/bob/.snakemake/tmp.q/snakejob.r.1.sh\n"
        "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
        "   Command=/home/alice/job.sh\n"
        "   WorkDir=(null)\n";
    json_t *o;

    (void)state;
    assert_non_null (o = tr_jobstate_parse_paths (out));
    assert_string_equal (json_string_value (json_object_get (o, "command")),
                         "/home/alice/my proj/.snakemake/tmp.ab/"
                         "snakejob.a.1.sh");
    assert_string_equal (json_string_value (json_object_get (o, "work_dir")),
                         "/home/alice/my proj");
    json_decref (o);
    assert_non_null (o = tr_jobstate_parse_paths (forged));
    assert_int_equal (json_object_size (o), 0);
    json_decref (o);
    assert_non_null (o = tr_jobstate_parse_paths (""));
    assert_int_equal (json_object_size (o), 0);
    json_decref (o);
}

/* Nextflow's task name from its job script, only where the job name is
 * the one Nextflow makes of it.
 */
static void test_nextflow_task (void **state)
{
    const char *script = "#!/bin/bash\n"
                         "#SBATCH -J nf-NFCORE_RNASEQ_RNASEQ_ALIGN_STAR_STAR_"
                         "ALIGN_(KO_REP1)\n"
                         "#SBATCH --tracer\n"
                         "### ---\n"
                         "### name: 'NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN "
                         "(KO REP1)'\n"
                         "### outputs:\n";
    char buf[1100], longname[400], longjob[400];

    (void)state;
    assert_true (tr_jobstate_nextflow_task (
        script, "nf-NFCORE_RNASEQ_RNASEQ_ALIGN_STAR_STAR_ALIGN_(KO_REP1)", buf,
        sizeof (buf)));
    assert_string_equal (buf, "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN "
                              "(KO REP1)");
    /* a script that names another task than the job name says */
    assert_false (tr_jobstate_nextflow_task (script, "nf-OTHER_(KO_REP1)", buf,
                                             sizeof (buf)));
    assert_false (tr_jobstate_nextflow_task (script, NULL, buf, sizeof (buf)));
    /* no name line, or one that does not close */
    assert_false (tr_jobstate_nextflow_task ("#!/bin/bash\n### name: 'A\n",
                                             "nf-A", buf, sizeof (buf)));
    assert_true (tr_jobstate_nextflow_task ("### name: 'A:B'\n", "nf-A_B",
                                            buf, sizeof (buf)));
    assert_string_equal (buf, "A:B");
    /* too small a buffer: nothing */
    assert_false (tr_jobstate_nextflow_task ("### name: 'A:B'\n", "nf-A_B",
                                             buf, 3));
    /* Nextflow cuts a job name at 256 characters */
    memset (longname, 'x', 300);
    longname[300] = '\0';
    snprintf (longjob, sizeof (longjob), "nf-%.253s", longname);
    {
        char s2[420];

        snprintf (s2, sizeof (s2), "### name: '%s'\n", longname);
        assert_true (tr_jobstate_nextflow_task (s2, longjob, buf,
                                                sizeof (buf)));
        assert_int_equal (strlen (buf), 300);
    }
}

static void test_outcome (void **state)
{
    assert_string_equal (tr_states_outcome ("TIMEOUT"), "timeout");
    assert_string_equal (tr_states_outcome ("DEADLINE"), "timeout");
    assert_string_equal (tr_states_outcome ("CANCELLED"), "cancelled");
    assert_string_equal (tr_states_outcome ("PREEMPTED"), "cancelled");
    assert_string_equal (tr_states_outcome ("NODE_FAIL"), "incomplete");
    assert_null (tr_states_outcome ("RUNNING"));
    assert_null (tr_states_outcome ("COMPLETING"));
    assert_null (tr_states_outcome ("OUT_OF_MEMORY"));
    assert_null (tr_states_outcome (NULL));
}

/* A stand-in squeue: prints its arguments' job id and SLURM_CONF. */
static char dir[64];
static char prog[128];
static char sprog[128];   /* a stand-in scontrol */

static int setup (void **state)
{
    FILE *f;

    snprintf (dir, sizeof (dir), "/tmp/test_jobstate.XXXXXX");
    if (!mkdtemp (dir))
        return -1;
    snprintf (prog, sizeof (prog), "%s/squeue", dir);
    if (!(f = fopen (prog, "w")))
        return -1;
    /* as squeue does, it answers in SQUEUE_FORMAT, whose tag (the text
     * before its first '|') starts every answer; 48's name holds a line
     * that would be an answer but for the tag, 49's a byte that is not
     * UTF-8
     */
    fprintf (f, "#!/bin/sh\n"
                "test $# = 3 || exit 3\n"
                "case \"$SQUEUE_FORMAT\" in\n"
                "*\"|%%T|%%l|%%a|%%P|%%q|%%V|%%S|%%F|%%K|%%A|%%j\") ;;\n"
                "*) exit 4 ;;\n"
                "esac\n"
                "t=${SQUEUE_FORMAT%%%%|*}\n"
                "test ${#t} = 16 || exit 5\n"
                "n='|N/A|N/A|N/A|N/A'\n"
                "case \"$3\" in\n"
                "--jobs=42) echo \"$t|TIMEOUT|1-00:00:00|a|p|q$n|42|j\" ;;\n"
                "--jobs=43) echo \"$t|CANCELLED|$SLURM_CONF|a|p|q$n|43|j\" ;;\n"
                "--jobs=44) exit 1 ;;\n"
                "--jobs=45) : ;;\n"
                "--jobs=46) sleep 30 ;;\n"
                "--jobs=47) echo \"$t|RUNNING|1:00|acct|part|normal|"
                "2026-01-01T00:00:00|2026-01-01T00:01:30|47|N/A|47|my job\" ;;\n"
                "--jobs=48) echo \"$t|RUNNING|5|acct|part|normal$n|48|x\n"
                "RUNNING|9|evil|p|q$n|48|y\"\n"
                "  echo \"$t|RUNNING|5|acct|part|normal$n|50|z\" ;;\n"
                "--jobs=51) echo \"$t|RUNNING|5|acct|part|normal|N/A|N/A|"
                "47|3|51|my job\" ;;\n"
                "--jobs=49) printf '%%s|RUNNING|5|acct|part|normal%%s|49|a\\377b\\n' "
                "\"$t\" \"$n\" ;;\n"
                "esac\n");
    fclose (f);
    if (chmod (prog, 0755) < 0)
        return -1;
    snprintf (sprog, sizeof (sprog), "%s/scontrol", dir);
    if (!(f = fopen (sprog, "w")))
        return -1;
    fprintf (f, "#!/bin/sh\n"
                "case \"$1 $2 $3 $4\" in\n"
                "'--details show job 47')\n"
                "  echo \"JobId=47 JobName=my job\"\n"
                "  echo \"     Nodes=n1 CPU_IDs=0 Mem=1 GRES=gpu:2(IDX:1-2)\" ;;\n"
                "'--details show job 47_3')\n"
                "  echo \"JobId=47 ArrayJobId=47 ArrayTaskId=3 JobName=my job\"\n"
                "  echo \"   WorkDir=/w/element\"\n"
                "  echo \"     Nodes=n1 CPU_IDs=0 Mem=1 GRES=gpu:1(IDX:0)\" ;;\n"
                "*) exit 1 ;;\n"
                "esac\n");
    fclose (f);
    return chmod (sprog, 0755);
}

static int teardown (void **state)
{
    unlink (prog);
    unlink (sprog);
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

    /* a name with a line of its own making: one answer still, the
     * name whole (the record's clipping makes its newline '?')
     */
    if (run ("48", &j, &error) != 0)
        fail_msg ("48: %s", error.text);
    assert_string_equal (j.account, "acct");
    assert_int_equal (j.time_limit_s, 300);
    assert_string_equal (j.job_name, "x\nRUNNING|9|evil|p|q|N/A|N/A|N/A|N/A|48|y");

    /* a byte that is not UTF-8: every member stays, the name is cut
     * nowhere, and the record names it as changed
     */
    {
        json_t *f, *id = json_object (), *req = json_object ();
        if (run ("49", &j, &error) != 0)
            fail_msg ("49: %s", error.text);
        assert_non_null (f = tr_jobstate_fields (&j));
        assert_int_equal (tr_jobstate_apply_fields (f, id, req), 0);
        assert_string_equal (json_string_value (json_object_get (id, "account")),
                             "acct");
        assert_string_equal (json_string_value (json_object_get (id, "qos")),
                             "normal");
        assert_string_equal (json_string_value (json_object_get (id, "job_name")),
                             "a?b");
        assert_string_equal (json_string_value (json_array_get (
                                 json_object_get (id, "truncated"), 0)),
                             "job_name");
        assert_int_equal (json_integer_value (json_object_get (req, "time_limit_s")),
                          300);
        json_decref (f);
        json_decref (id);
        json_decref (req);
    }

    assert_int_equal (run ("44", &j, &error), -1);
    assert_string_equal (error.text, "squeue failed (wait status 256)");
    assert_int_equal (run ("45", &j, &error), -1);
    assert_string_equal (error.text, "squeue does not know the job");
}

/* squeue, then scontrol for the GPUs of each node */
static void test_query_detail (void **state)
{
    struct tr_jobstate j;
    tr_error_t error;
    tr_jobstate_query_t *q;
    json_t *pairs;
    char buf[64];
    int rc = 0;

    assert_non_null (q = tr_jobstate_query_start_detail (prog, sprog, "47",
                                                         &error));
    while (rc == 0) {
        struct pollfd p = { .fd = tr_jobstate_query_fd (q), .events = POLLIN };
        assert_true (poll (&p, 1, 10000) > 0);
        rc = tr_jobstate_query_read (q);
    }
    assert_int_equal (rc, 1);
    assert_int_equal (tr_jobstate_query_result (q, &j, &error), 0);
    assert_string_equal (j.account, "acct");
    assert_string_equal (j.partition, "part");
    assert_string_equal (j.qos, "normal");
    assert_string_equal (j.job_name, "my job");
    assert_non_null (pairs = tr_jobstate_query_nodes (q));
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n1", buf, sizeof (buf)),
                      1);
    assert_string_equal (buf, "1,2");
    json_decref (pairs);
    tr_jobstate_query_destroy (q);

    /* scontrol failing leaves the GPUs unknown, the rest stands */
    assert_non_null (q = tr_jobstate_query_start_detail (prog, sprog, "42",
                                                         &error));
    rc = 0;
    while (rc == 0) {
        struct pollfd p = { .fd = tr_jobstate_query_fd (q), .events = POLLIN };
        assert_true (poll (&p, 1, 10000) > 0);
        rc = tr_jobstate_query_read (q);
    }
    assert_int_equal (tr_jobstate_query_result (q, &j, &error), 0);
    assert_string_equal (j.state, "TIMEOUT");
    assert_null (tr_jobstate_query_nodes (q));
    tr_jobstate_query_destroy (q);
}

/* an array task is asked of scontrol as ARRAY_TASK, as squeue named it:
 * asked by its own id, scontrol would answer for the whole array
 */
static void test_query_array_task (void **state)
{
    struct tr_jobstate j;
    tr_error_t error;
    tr_jobstate_query_t *q;
    json_t *pairs, *paths;
    char buf[64];
    int rc = 0;

    (void)state;
    assert_non_null (q = tr_jobstate_query_start_detail (prog, sprog, "51",
                                                         &error));
    while (rc == 0) {
        struct pollfd p = { .fd = tr_jobstate_query_fd (q), .events = POLLIN };
        assert_true (poll (&p, 1, 10000) > 0);
        rc = tr_jobstate_query_read (q);
    }
    assert_int_equal (tr_jobstate_query_result (q, &j, &error), 0);
    assert_string_equal (j.array_job, "47");
    assert_non_null (paths = tr_jobstate_query_paths (q));
    assert_string_equal (json_string_value (json_object_get (paths,
                                                             "work_dir")),
                         "/w/element");
    json_decref (paths);
    assert_non_null (pairs = tr_jobstate_query_nodes (q));
    assert_int_equal (tr_jobstate_node_gpus (pairs, "n1", buf, sizeof (buf)),
                      1);
    assert_string_equal (buf, "0");
    json_decref (pairs);
    tr_jobstate_query_destroy (q);
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

/* bjobs -w: the owner, status and hosts of the job asked about; the
 * job name (its user's words) is never read as a column.
 */
static void test_bjobs (void **state)
{
    struct tr_lsfjob j;
    tr_error_t error;
    const char *hdr = "JOBID   USER    STAT  QUEUE      FROM_HOST   "
                      "EXEC_HOST   JOB_NAME   SUBMIT_TIME\n";
    char text[1024];

    (void)state;
    snprintf (text, sizeof (text), "%s%s", hdr,
              "720     alice   RUN   normal     login1      4*node1:2*node2 "
              "align  Nov 28 10:00\n");
    assert_int_equal (tr_jobstate_parse_bjobs (text, "720", &j, &error), 0);
    assert_string_equal (j.user, "alice");
    assert_string_equal (j.stat, "RUN");
    assert_true (j.started);
    assert_true (tr_jobstate_lsf_runs_on (&j, "node1"));
    assert_true (tr_jobstate_lsf_runs_on (&j, "node2.cluster.example"));
    assert_false (tr_jobstate_lsf_runs_on (&j, "node"));
    assert_false (tr_jobstate_lsf_runs_on (&j, "node12"));
    /* an array element: bjobs shows the array's id */
    assert_int_equal (tr_jobstate_parse_bjobs (text, "720[3]", &j, &error),
                      0);
    /* another job's line, a pending job (no hosts: its name comes
     * there), a job bjobs does not know
     */
    assert_int_equal (tr_jobstate_parse_bjobs (text, "721", &j, &error), -1);
    assert_int_equal (errno, ENOENT);
    snprintf (text, sizeof (text), "%s%s", hdr,
              "722     bob     PEND  normal     login1      node1 Nov 28\n");
    assert_int_equal (tr_jobstate_parse_bjobs (text, "722", &j, &error), 0);
    assert_false (j.started);
    assert_false (tr_jobstate_lsf_runs_on (&j, "node1"));
    assert_int_equal (tr_jobstate_parse_bjobs ("", "722", &j, &error), -1);
    /* a name with a newline and a line of its own comes after the job's
     * line: never read
     */
    snprintf (text, sizeof (text), "%s%s", hdr,
              "723     bob     RUN   normal     login1      node9       x\n"
              "723 mallory RUN normal login1 node1 y Nov 28\n");
    assert_int_equal (tr_jobstate_parse_bjobs (text, "723", &j, &error), 0);
    assert_string_equal (j.user, "bob");
    assert_false (tr_jobstate_lsf_runs_on (&j, "node1"));
    /* a job id that is not one reaches no bjobs */
    assert_null (tr_jobstate_query_start_lsf ("/bin/true", "7;rm", &error));
    assert_null (tr_jobstate_query_start_lsf ("/bin/true", "7[x]", &error));
    assert_null (tr_jobstate_query_start_lsf ("/bin/true", "[3]", &error));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_limits),
        cmocka_unit_test (test_lines),
        cmocka_unit_test (test_fields),
        cmocka_unit_test (test_times),
        cmocka_unit_test (test_tagged),
        cmocka_unit_test (test_unknown),
        cmocka_unit_test (test_apply),
        cmocka_unit_test (test_clip_utf8),
        cmocka_unit_test (test_trust),
        cmocka_unit_test (test_slurm_cluster),
        cmocka_unit_test (test_hostlist),
        cmocka_unit_test (test_detail),
        cmocka_unit_test (test_paths),
        cmocka_unit_test (test_nextflow_task),
        cmocka_unit_test (test_outcome),
        cmocka_unit_test (test_query),
        cmocka_unit_test (test_query_detail),
        cmocka_unit_test (test_query_array_task),
        cmocka_unit_test (test_refused),
        cmocka_unit_test (test_missing),
        cmocka_unit_test (test_destroy_hung),
        cmocka_unit_test (test_bjobs),
    };

    return cmocka_run_group_tests (tests, setup, teardown);
}
