/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * sacct-style selection and listing: filters, merging the nodes of a
 * step, sorting, --format and the aligned and parsable output.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/record/query.h"

static tr_stepsum_t mkrow (const char *job, const char *step,
                           const char *node, const char *user,
                           const char *state, double start_s, double end_s)
{
    tr_stepsum_t r;

    tr_stepsum_init (&r);
    r.cluster = "c";
    r.job_id = job;
    r.step_id = step;
    r.node = node;
    r.user = user;
    r.uid = 1000;
    r.state = state;
    r.sig = "valid";
    r.nodes = 1;
    r.start_ms = start_s * 1000;
    r.end_ms = end_s * 1000;
    r.elapsed_s = end_s - start_s;
    r.account = "acct";
    r.partition = "debug";
    r.job_name = "nf-ALIGN_(s1)";
    r.group = "ALIGN/batch";
    r.tags = "project=p\\;1;stage=fit";
    r.cpu_s = 10;
    r.req_cores = 2;
    return r;
}

static void test_filters (void **state)
{
    struct tr_query q = { 0 };
    tr_stepsum_t r = mkrow ("10", "batch", "n1", "alice", "completed", 100,
                            200);
    char users[] = "bob,alice", accts[] = "other", st[] = "CD,oom";
    char bad_state[] = "XX", tag[] = "project=p;1", tag2[] = "stage=fit";
    char notag[] = "novalue", name[] = "ALIGN";
    tr_error_t error;

    (void)state;
    assert_true (tr_query_match_record (&q, &r));
    assert_int_equal (tr_query_add_list (q.users, &q.nusers, users, "-u",
                                         &error), 0);
    assert_true (tr_query_match_record (&q, &r));
    r.user = "carol";
    assert_false (tr_query_match_record (&q, &r));
    r.user = "alice";
    assert_int_equal (tr_query_add_list (q.accounts, &q.naccounts, accts,
                                         "-A", &error), 0);
    assert_false (tr_query_match_record (&q, &r));
    q.naccounts = 0;
    assert_int_equal (tr_query_add_states (&q, st, &error), 0);
    assert_string_equal (q.states[0], "completed");
    assert_string_equal (q.states[1], "oom");
    assert_true (tr_query_match_step (&q, &r));
    r.state = "failed";
    assert_false (tr_query_match_step (&q, &r));
    assert_int_equal (tr_query_add_states (&q, bad_state, &error), -1);
    assert_non_null (strstr (error.text, "XX"));
    q.nstates = 0;
    /* tags: escaped ';' in a value */
    assert_int_equal (tr_query_add_tag (&q, tag, &error), 0);
    assert_true (tr_query_match_record (&q, &r));
    assert_int_equal (tr_query_add_tag (&q, tag2, &error), 0);
    assert_true (tr_query_match_record (&q, &r));
    r.tags = "project=p;stage=fit";
    assert_false (tr_query_match_record (&q, &r));
    assert_int_equal (tr_query_add_tag (&q, notag, &error), -1);
    q.ntags = 0;
    /* --name: the group's name */
    assert_int_equal (tr_query_add_list (q.names, &q.nnames, name, "--name",
                                         &error), 0);
    assert_true (tr_query_match_record (&q, &r));
    r.group = "SORT/batch";
    r.job_name = "sort";
    assert_false (tr_query_match_record (&q, &r));
    q.nnames = 0;
    /* visibility */
    q.only_uid = true;
    q.uid = 1001;
    assert_false (tr_query_match_record (&q, &r));
    q.uid = 1000;
    assert_true (tr_query_match_record (&q, &r));
    /* window: steps that ran in it */
    q.from = 150;
    q.to = 160;
    assert_true (tr_query_match_step (&q, &r));
    q.from = 201;
    q.to = 0;
    assert_false (tr_query_match_step (&q, &r));
    q.from = 0;
    q.to = 99;
    assert_false (tr_query_match_step (&q, &r));
}

/* -s selects what the listing's State shows: NF the steps whose node
 * failed (NODE_FAIL), OOM also a failed step with OOM kills, IN only
 * the other incomplete ones.
 */
static void test_states (void **state)
{
    struct tr_query q = { 0 };
    tr_stepsum_t r = mkrow ("10", "batch", "n1", "a", "NODE_FAIL", 1, 2);
    char nf[] = "nf", in[] = "IN", oom[] = "OUT_OF_MEMORY", bf[] = "BF,CD";
    char bad[] = "PD";
    tr_error_t error;

    (void)state;
    assert_int_equal (tr_query_add_states (&q, nf, &error), 0);
    assert_string_equal (q.states[0], "NODE_FAIL");
    assert_true (tr_query_match_step (&q, &r));
    r.state = "incomplete";
    assert_false (tr_query_match_step (&q, &r));
    q.nstates = 0;
    assert_int_equal (tr_query_add_states (&q, in, &error), 0);
    assert_true (tr_query_match_step (&q, &r));
    r.state = "NODE_FAIL";
    assert_false (tr_query_match_step (&q, &r));
    q.nstates = 0;
    assert_int_equal (tr_query_add_states (&q, oom, &error), 0);
    assert_false (tr_query_match_step (&q, &r));
    r.state = "failed";
    r.oom_kills = 1;
    assert_true (tr_query_match_step (&q, &r));
    q.nstates = 0;
    assert_int_equal (tr_query_add_states (&q, bf, &error), 0);
    assert_string_equal (q.states[0], "BOOT_FAIL");
    assert_string_equal (q.states[1], "completed");
    assert_int_equal (tr_query_add_states (&q, bad, &error), -1);
    assert_non_null (strstr (error.text, "NF"));
}

static void test_jobs (void **state)
{
    struct tr_query q = { 0 };
    tr_stepsum_t r = mkrow ("125", "0", "n1", "a", "completed", 1, 2);
    tr_error_t error;

    (void)state;
    r.array_job_id = "123";
    r.array_task_id = 2;
    q.jobs = tr_when_jobsel_parse ("123_[1-3]", &error);
    assert_non_null (q.jobs);
    assert_true (tr_query_match_record (&q, &r));
    r.array_task_id = 4;
    assert_false (tr_query_match_record (&q, &r));
    tr_when_jobsel_destroy (q.jobs);
}

static void test_merge_sort (void **state)
{
    tr_rowset_t *set = tr_rowset_create ();
    struct tr_query q = { 0 };
    tr_stepsum_t r;
    tr_error_t error;

    (void)state;
    r = mkrow ("10", "0", "n10", "a", "completed", 100, 150);
    assert_int_equal (tr_rowset_add (set, &r), 0);
    r = mkrow ("10", "0", "n2", "a", "failed", 100, 160);
    assert_int_equal (tr_rowset_add (set, &r), 0);
    /* the same node's record twice: counted once */
    assert_int_equal (tr_rowset_add (set, &r), 0);
    r = mkrow ("9", "batch", "n1", "a", "completed", 10, 20);
    assert_int_equal (tr_rowset_add (set, &r), 0);
    r = mkrow ("11", "batch", "n1", "a", "timeout", 10, 300);
    assert_int_equal (tr_rowset_add (set, &r), 0);
    assert_int_equal (tr_rowset_merge_steps (set, &q), 0);
    assert_int_equal (set->n, 3);
    /* identity order: job 9, 10, 11 (natural) */
    assert_string_equal (set->rows[0].job_id, "9");
    assert_string_equal (set->rows[1].job_id, "10");
    assert_string_equal (set->rows[1].node, "n2,n10");
    assert_string_equal (set->rows[1].state, "failed");
    assert_true (set->rows[1].cpu_s == 20 && set->rows[1].nodes == 2);
    assert_true (set->rows[1].elapsed_s == 60);
    assert_int_equal (tr_rowset_sort (set, "-elapsed", &error), 0);
    assert_string_equal (set->rows[0].job_id, "11");
    assert_string_equal (set->rows[2].job_id, "9");
    assert_int_equal (tr_rowset_sort (set, "state,jobidraw", &error), 0);
    assert_string_equal (set->rows[0].state, "completed");
    assert_int_equal (tr_rowset_sort (set, "nosuch", &error), -1);
    assert_non_null (strstr (error.text, "nosuch"));
    tr_rowset_destroy (set);

    /* a state filter applies to the merged step */
    set = tr_rowset_create ();
    r = mkrow ("10", "0", "n1", "a", "completed", 100, 150);
    tr_rowset_add (set, &r);
    r = mkrow ("10", "0", "n2", "a", "oom", 100, 150);
    tr_rowset_add (set, &r);
    {
        char st[] = "CD";
        assert_int_equal (tr_query_add_states (&q, st, &error), 0);
    }
    assert_int_equal (tr_rowset_merge_steps (set, &q), 0);
    assert_int_equal (set->n, 0);
    tr_rowset_destroy (set);
}

/* A step whose record lacks its job's array (an extern step the
 * controller did not describe) is shown, and sorted, as its job's other
 * steps are: 7_3, next to them, not as job 10 after every task.
 */
static void test_shared_array (void **state)
{
    tr_rowset_t *set = tr_rowset_create ();
    tr_stepsum_t r;
    tr_error_t error;
    const tr_field_t *jobid = tr_stepsum_field ("jobid");
    char buf[64];

    (void)state;
    r = mkrow ("10", "extern", "n1", "a", "completed", 100, 150);
    assert_int_equal (tr_rowset_add (set, &r), 0);
    r = mkrow ("10", "batch", "n1", "a", "completed", 100, 150);
    r.array_job_id = "7";
    r.array_task_id = 3;
    assert_int_equal (tr_rowset_add (set, &r), 0);
    r = mkrow ("12", "batch", "n1", "a", "completed", 90, 150);
    r.array_job_id = "7";
    r.array_task_id = 5;
    assert_int_equal (tr_rowset_add (set, &r), 0);
    assert_int_equal (tr_rowset_merge_steps (set, NULL), 0);
    assert_int_equal (tr_rowset_sort (set, "jobid", &error), 0);
    assert_int_equal (set->n, 3);
    assert_string_equal (tr_stepsum_str (&set->rows[0], jobid, buf,
                                         sizeof (buf)),
                         "7_3.batch");
    assert_string_equal (tr_stepsum_str (&set->rows[1], jobid, buf,
                                         sizeof (buf)),
                         "7_3.extern");
    assert_string_equal (tr_stepsum_str (&set->rows[2], jobid, buf,
                                         sizeof (buf)),
                         "7_5.batch");
    tr_rowset_destroy (set);
}

static const char *extra (const tr_stepsum_t *row, void *arg)
{
    (void)arg;
    return row->cpu_s > 5 ? "busy" : "ok";
}

static void test_print (void **state)
{
    tr_rowset_t *set = tr_rowset_create ();
    struct tr_query_format fmt = {
        .extra_name = "diagnosis", .extra_width = -6, .extra = extra,
    };
    tr_stepsum_t r = mkrow ("4242424242", "batch", "n1", "alice",
                            "completed", 0, 3723);
    tr_error_t error;
    char *buf = NULL;
    size_t size = 0;
    FILE *f;

    (void)state;
    r.mem_peak_bytes = 512.0 * 1048576;
    tr_rowset_add (set, &r);
    assert_int_equal (tr_query_format_parse (&fmt, "jobidraw%6,user%-7,"
                                             "elapsed,mempeak%6,diagnosis",
                                             &error), 0);
    f = open_memstream (&buf, &size);
    assert_int_equal (tr_query_print (f, set, &fmt, false, false), 0);
    fclose (f);
    assert_string_equal (buf,
                         "JobIDR User       Elapsed Mempea Diagno\n"
                         "------ ------- ---------- ------ ------\n"
                         "42424+ alice     01:02:03   512M busy  \n");
    free (buf);
    f = open_memstream (&buf, &size);
    assert_int_equal (tr_query_print (f, set, &fmt, true, true), 0);
    fclose (f);
    assert_string_equal (buf,
                         "4242424242.batch|alice|01:02:03|536870912|busy\n");
    free (buf);
    assert_int_equal (tr_query_format_parse (&fmt, "user%x", &error), -1);
    assert_int_equal (tr_query_format_parse (&fmt, "user%0", &error), -1);
    assert_int_equal (tr_query_format_parse (&fmt, "bogus", &error), -1);
    assert_non_null (strstr (error.text, "bogus"));
    assert_int_equal (tr_query_format_parse (&fmt, "", &error), -1);
    /* every field can be listed */
    f = open_memstream (&buf, &size);
    tr_query_print_fields (f, &fmt);
    fclose (f);
    for (const tr_field_t *fl = tr_stepsum_sacct_fields; fl->name; fl++)
        assert_non_null (strstr (buf, fl->name));
    /* tracer's own, but for those a sacct name of any case shadows */
    for (const tr_field_t *fl = tr_stepsum_fields; fl->name; fl++)
        if (tr_stepsum_field (fl->name) == fl)
            assert_non_null (strstr (buf, fl->name));
    assert_non_null (strstr (buf, "diagnosis"));
    free (buf);
    tr_rowset_destroy (set);
}

/* sacct's layout: a job row above its steps, steps in Slurm's order,
 * jobs where their first step was; -X keeps the job rows alone.
 */
static void test_job_rows (void **state)
{
    tr_rowset_t *set = tr_rowset_create ();
    tr_stepsum_t r[5];
    struct tr_query_format fmt = { 0 };
    tr_error_t error;
    char *buf = NULL;
    size_t size = 0;
    FILE *f;

    (void)state;
    r[0] = mkrow ("7", "0", "n1", "alice", "oom", 110, 150);
    r[1] = mkrow ("7", "batch", "n1", "alice", "failed", 100, 160);
    r[2] = mkrow ("7", "extern", "n1", "alice", "completed", 100, 161);
    r[3] = mkrow ("9", "0", "n2", "bob", "completed", 50, 80);
    r[4] = mkrow ("9", "extern", "n2", "bob", "cancelled", 50, 81);
    r[1].exit_code = 3;
    r[1].signal = 0;
    r[0].mem_peak_bytes = 900;
    r[1].mem_peak_bytes = 100;
    r[3].req_cores = 4;
    /* the controller's submit time and queue wait: every node and step
     * has the same; one without them (r[0]) leaves them be
     */
    r[1].submit_ms = r[2].submit_ms = 40000;
    r[1].queue_wait_s = r[2].queue_wait_s = 60;
    for (int i = 0; i < 5; i++)
        tr_rowset_add (set, &r[i]);
    assert_int_equal (tr_rowset_sort (set, "start", &error), 0);
    assert_int_equal (tr_rowset_add_jobs (set, false), 0);
    assert_int_equal (set->n, 7);
    assert_int_equal (tr_query_format_parse (&fmt, "JobID,State,ExitCode,"
                                             "Elapsed,TotalCPU,MaxRSS,"
                                             "AllocCPUS,CPUTime",
                                             &error), 0);
    f = open_memstream (&buf, &size);
    assert_int_equal (tr_query_print (f, set, &fmt, true, false), 0);
    fclose (f);
    /* job 9 first (its first step started first); a job's outcome is
     * its batch step's, else the worst but the extern step's; its peak
     * the largest step's, CPU time summed, span first start to last end
     */
    assert_string_equal (buf,
                         "JobID|State|ExitCode|Elapsed|TotalCPU|MaxRSS|"
                         "AllocCPUS|CPUTime\n"
                         "9|COMPLETED||00:00:31|00:20.000||4|00:02:04\n"
                         "9.extern|CANCELLED||00:00:31|00:10.000||2|"
                         "00:01:02\n"
                         "9.0|COMPLETED||00:00:30|00:10.000||4|00:02:00\n"
                         "7|FAILED|3:0|00:01:01|00:30.000|900|2|00:02:02\n"
                         "7.batch|FAILED|3:0|00:01:00|00:10.000|100|2|"
                         "00:02:00\n"
                         "7.extern|COMPLETED||00:01:01|00:10.000||2|"
                         "00:02:02\n"
                         "7.0|OUT_OF_MEMORY|0:125|00:00:40|00:10.000|900|2|"
                         "00:01:20\n");
    free (buf);
    /* the job row has them too (sacct's Submit and Reserved) */
    assert_true (tr_stepsum_is_job (&set->rows[3]));
    assert_string_equal (set->rows[3].job_id, "7");
    assert_true (set->rows[3].submit_ms == 40000);
    assert_true (set->rows[3].queue_wait_s == 60);
    assert_true (isnan (set->rows[0].submit_ms));
    assert_true (isnan (set->rows[0].queue_wait_s));
    assert_int_equal (tr_rowset_add_jobs (set, true), 0);
    /* job rows of job rows are the same rows again */
    assert_int_equal (set->n, 2);
    tr_rowset_destroy (set);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_filters),
        cmocka_unit_test (test_states),
        cmocka_unit_test (test_jobs),
        cmocka_unit_test (test_merge_sort),
        cmocka_unit_test (test_shared_array),
        cmocka_unit_test (test_print),
        cmocka_unit_test (test_job_rows),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
