/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Step summaries: what a record becomes, merging the nodes of a step,
 * step groups, the field table and the index line round trip.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/record/query.h"
#include "libtracer/record/stepsum.h"

static json_t *load_fixture (const char *name)
{
    char path[512];
    json_error_t jerr;
    json_t *rec;

    snprintf (path, sizeof (path), "%s/fixtures/records/%s", TEST_SRCDIR,
              name);
    rec = json_load_file (path, 0, &jerr);
    if (!rec)
        fail_msg ("%s: %s", path, jerr.text);
    return rec;
}

static void test_from_record (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    json_t *rec = load_fixture ("basic.json");
    tr_stepsum_t row;

    (void)state;
    assert_int_equal (tr_stepsum_from_record (&row, rec, "unsigned",
                                              "vm/x.json", pool), 0);
    assert_string_equal (row.job_id, "24");
    assert_string_equal (row.step_id, "0");
    assert_string_equal (row.user, "testuser");
    assert_string_equal (row.state, "oom");
    assert_string_equal (row.tags, "project=p-17;stage=train");
    assert_string_equal (row.tools, "python3=0.100");
    assert_string_equal (row.group, "r\xc3\xa9sum\xc3\xa9-train/python3");
    assert_true (row.req_cores == 2);
    assert_true (row.req_mem_bytes == 52428800);
    assert_true (row.mem_peak_bytes == 52428800);
    assert_true (row.oom_kills == 1);
    assert_true (row.elapsed_s == 4.25);
    assert_true (row.time_limit_s == 600);
    assert_true (isnan (row.psi_io_some_s));
    assert_true (row.cpu_peak_cores == 0.5);
    /* buckets 0, 3, 4 are below 0.05 cores; 4 ends at 4.25 s */
    assert_true (fabs (row.idle_s - 2.25) < 1e-9);
    assert_true (fabs (row.idle_longest_s - 1.25) < 1e-9);
    /* memory peaks in bucket 2 (freed after the kill): 30M to 50M in 1 s */
    assert_true (fabs (row.mem_rise_Bps - 20971520) < 1e-6);
    assert_true (fabs (tr_stepsum_cpu_eff (&row) - 0.1000001 / 8.5) < 1e-9);
    assert_true (tr_stepsum_mem_eff (&row) == 1.0);
    /* the fixture has no submit time: unknown, never 0 */
    assert_true (isnan (row.submit_ms) && isnan (row.queue_wait_s));
    /* the controller's submit and job start: the queue wait */
    {
        json_t *t = json_object_get (rec, "time");
        tr_stepsum_t r2;

        json_object_set_new (t, "submit_unix_ms",
                             json_integer (1767225500000LL));
        json_object_set_new (t, "job_start_unix_ms",
                             json_integer (1767225590000LL));
        assert_int_equal (tr_stepsum_from_record (&r2, rec, "unsigned",
                                                  "vm/x.json", pool), 0);
        assert_true (r2.submit_ms == 1767225500000.0);
        assert_true (r2.queue_wait_s == 90);
        assert_true (tr_stepsum_num (&r2, tr_stepsum_field ("queuewait"))
                     == 90);
        /* a start before the submit is no wait */
        json_object_set_new (t, "job_start_unix_ms",
                             json_integer (1767225400000LL));
        assert_int_equal (tr_stepsum_from_record (&r2, rec, "unsigned",
                                                  "vm/x.json", pool), 0);
        assert_true (isnan (r2.queue_wait_s));
    }
    /* the same text is the same pointer */
    assert_ptr_equal (tr_strpool_intern (pool, "testuser"), row.user);
    json_decref (rec);
    tr_strpool_destroy (pool);
}

static void test_group (void **state)
{
    static const struct {
        const char *job, *step, *name, *tags, *want;
    } cases[] = {
        { "nf-FASTQC_(sample1)", "batch", "", "", "FASTQC/batch" },
        { "nf-NFCORE_RNASEQ_ALIGN_(s_(2))", "batch", "", "",
          "NFCORE_RNASEQ_ALIGN/batch" },
        { "nf-PLAIN", "batch", "", "", "PLAIN/batch" },
        { "snakejob.align.17.sh", "batch", "", "", "align/batch" },
        { "snakejob.", "batch", "", "", "snakejob./batch" },
        { "train", "0", "python3", "", "train/python3" },
        { "train", "0", "", "", "train/0" },
        { "train", "extern", "extern", "", "train/extern" },
        { "train", "1", "x", "group=fit;stage=a", "fit/x" },
        { "train", "1", "x", "a=1;group=f\\;g", "f;g/x" },
        { "train", "1", "x", "xgroup=no", "train/x" },
    };
    char buf[256];

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
        assert_string_equal (tr_stepsum_group (buf, sizeof (buf),
                                               cases[i].job, cases[i].step,
                                               cases[i].name, cases[i].tags),
                             cases[i].want);
}

/* A failed step's row gets the cause engine's class and evidence; the
 * index line keeps them; a merged row keeps the earliest class; a
 * version 2 index header is refused (so old indexes are rebuilt).
 */
static void test_cause (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    json_t *rec = load_fixture ("basic.json");
    json_t *oc = json_object_get (rec, "outcome");
    tr_stepsum_t row, other, back;
    tr_strbuf_t sb = { 0 };
    tr_error_t error;
    char *line, *tab;

    (void)state;
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p", pool),
                      0);
    assert_string_equal (row.cause, "oom");
    assert_string_equal (row.cause_text,
                         "the OOM killer killed 1 process of the step; "
                         "memory peak 50.0 MiB of a 50.0 MiB limit");
    json_object_set_new (oc, "state", json_string ("completed"));
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p", pool),
                      0);
    assert_string_equal (row.cause, "");
    assert_string_equal (row.cause_text, "");
    json_object_del (json_array_get (json_object_get (oc, "tasks"), 0),
                     "oom_killed");
    json_object_del (json_object_get (rec, "summary"), "x_oom_kill_events");
    json_object_set_new (oc, "state", json_string ("failed"));
    json_object_set_new (oc, "exit_code", json_integer (1));
    json_object_set_new (oc, "culprit",
                         json_pack ("{s:s s:i s:i s:b s:f s:[{s:s s:i}] s:i}",
                                    "tool", "samtools", "pid", 4242,
                                    "signal", 11, "core_dumped", 0, "at_s",
                                    0.5, "chain", "tool", "bash", "pid",
                                    4240, "collateral", 1));
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p", pool),
                      0);
    assert_string_equal (row.cause, "tool-crash");
    assert_string_equal (row.cause_text,
                         "samtools (pid 4242) killed by SIGSEGV, 0.5 s "
                         "before the end, under bash 4240; 1 collateral "
                         "failure after it");
    assert_int_equal (tr_stepsum_to_tsv (&sb, &row), 0);
    line = tr_strbuf_steal (&sb);
    assert_int_equal (tr_stepsum_from_tsv (&back, line, pool, &error), 0);
    free (line);
    assert_string_equal (back.cause, "tool-crash");
    assert_string_equal (back.culprit, "samtools");
    assert_string_equal (back.cause_text, row.cause_text);
    /* a time limit's kill blames no tool: the record keeps its culprit,
     * the row names none, nor does an index line that did
     */
    {
        tr_stepsum_t t;
        char *l;
        json_object_set_new (oc, "state", json_string ("timeout"));
        assert_int_equal (
            tr_stepsum_from_record (&t, rec, "valid", "p", pool), 0);
        assert_string_equal (t.cause, "timeout");
        assert_string_equal (t.culprit, "");
        t.culprit = "samtools";
        assert_int_equal (tr_stepsum_to_tsv (&sb, &t), 0);
        l = tr_strbuf_steal (&sb);
        assert_int_equal (tr_stepsum_from_tsv (&t, l, pool, &error), 0);
        free (l);
        assert_string_equal (t.culprit, "");
        json_object_set_new (oc, "state", json_string ("failed"));
    }
    /* another node's OOM kill is decided earlier: it wins */
    json_object_set_new (oc, "state", json_string ("oom"));
    assert_int_equal (tr_stepsum_from_record (&other, rec, "valid", "p",
                                              pool), 0);
    assert_string_equal (other.cause, "oom");
    assert_int_equal (tr_stepsum_merge (&row, &other, pool), 0);
    assert_string_equal (row.cause, "oom");
    assert_int_equal (tr_stepsum_merge (&other, &back, pool), 0);
    assert_string_equal (other.cause, "oom");
    /* the old layout */
    assert_int_equal (tr_stepsum_tsv_header (&sb), 0);
    line = tr_strbuf_steal (&sb);
    assert_int_equal (strncmp (line, "#tracer-stepsum 4\t", 18), 0);
    line[16] = '2';
    assert_int_equal (tr_stepsum_tsv_check_header (line, &error), -1);
    assert_non_null (strstr (error.text, "not a version 4"));
    tab = strchr (line, '\t');
    assert_non_null (tab);
    free (line);
    json_decref (rec);
    tr_strpool_destroy (pool);
}

/* No progress: a record's progress.stalled_s when it was stalled at its
 * end, absent (NAN) otherwise; kept through the index line; the worst
 * node's in a merged row.
 */
static void test_stalled (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    json_t *rec = load_fixture ("basic.json");
    tr_stepsum_t row, other, back;
    tr_strbuf_t sb = { 0 };
    tr_error_t error;
    char *line;

    (void)state;
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p", pool),
                      0);
    assert_true (isnan (row.stalled_s));
    json_object_set_new (rec, "progress",
                         json_pack ("{s:b s:f}", "stalled", 0, "stalled_s",
                                    400.0));
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p", pool),
                      0);
    assert_true (isnan (row.stalled_s));
    json_object_set_new (rec, "progress",
                         json_pack ("{s:b s:f}", "stalled", 1, "stalled_s",
                                    725.5));
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p", pool),
                      0);
    assert_true (row.stalled_s == 725.5);
    assert_int_equal (tr_stepsum_to_tsv (&sb, &row), 0);
    line = tr_strbuf_steal (&sb);
    assert_int_equal (tr_stepsum_from_tsv (&back, line, pool, &error), 0);
    free (line);
    assert_true (back.stalled_s == 725.5);
    json_object_set_new (rec, "progress",
                         json_pack ("{s:b s:f}", "stalled", 1, "stalled_s",
                                    900.0));
    assert_int_equal (tr_stepsum_from_record (&other, rec, "valid", "p",
                                              pool), 0);
    assert_int_equal (tr_stepsum_merge (&row, &other, pool), 0);
    assert_true (row.stalled_s == 900);
    json_decref (rec);
    tr_strpool_destroy (pool);
}

static void test_merge (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    tr_stepsum_t a, b;

    (void)state;
    tr_stepsum_init (&a);
    tr_stepsum_init (&b);
    a.node = "n1";
    b.node = "n2";
    a.state = "completed";
    b.state = "failed";
    a.sig = b.sig = "valid";
    a.nodes = b.nodes = 1;
    a.cpu_s = 10;
    b.cpu_s = 2;
    a.req_cores = 4;
    b.req_cores = 4;
    a.mem_peak_bytes = a.mem_peak_sum_bytes = 100;
    b.mem_peak_bytes = b.mem_peak_sum_bytes = 300;
    a.elapsed_s = 10;
    b.elapsed_s = 12;
    a.node_cpu_max_s = a.node_cpu_min_s = 10;
    b.node_cpu_max_s = b.node_cpu_min_s = 2;
    a.start_ms = 1000;
    b.start_ms = 900;
    a.end_ms = 11000;
    b.end_ms = 12900;
    assert_int_equal (tr_stepsum_merge (&a, &b, pool), 0);
    assert_string_equal (a.node, "n1,n2");
    assert_string_equal (a.state, "failed");
    assert_true (a.nodes == 2 && a.cpu_s == 12 && a.req_cores == 8);
    assert_true (a.mem_peak_bytes == 300 && a.mem_peak_sum_bytes == 400);
    assert_true (a.elapsed_s == 12 && a.start_ms == 900 && a.end_ms == 12900);
    assert_true (fabs (tr_stepsum_cpu_eff (&a) - 12.0 / 96) < 1e-12);
    assert_true (tr_stepsum_num (&a, tr_stepsum_field ("nodebalance")) == 0.2);
    /* a node with no request makes the step's cores unknown */
    b.req_cores = NAN;
    assert_int_equal (tr_stepsum_merge (&a, &b, pool), 0);
    assert_true (isnan (a.req_cores));
    /* a node without the controller's answer changes nothing */
    a.submit_ms = 500;
    a.queue_wait_s = 0.4;
    assert_int_equal (tr_stepsum_merge (&a, &b, pool), 0);
    assert_true (a.submit_ms == 500 && a.queue_wait_s == 0.4);
    b.submit_ms = 400;
    b.queue_wait_s = 0.4;
    assert_int_equal (tr_stepsum_merge (&b, &a, pool), 0);
    assert_true (b.submit_ms == 400 && b.queue_wait_s == 0.4);
    tr_strpool_destroy (pool);
}

static void test_fields (void **state)
{
    tr_stepsum_t row;
    tr_strbuf_t sb = { 0 };
    char buf[64];
    static const struct {
        const char *field;
        double value;
        bool raw;
        const char *want;
    } cases[] = {
        { "mempeak", 1536.0 * 1048576, false, "1.50G" },
        { "mempeak", 300, false, "300" },
        { "mempeak", 1536.0 * 1048576, true, "1610612736" },
        { "elapsed", 93784, false, "1-02:03:04" },
        { "elapsed", 61.4, false, "00:01:01" },
        { "elapsed", 61.5, true, "61.5" },
        { "signal", 9, false, "9" },
        { "reqcpus", 2, false, "2" },
        { "peakcpus", 2, false, "2.00" },
        { "mempeak", NAN, false, "" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const tr_field_t *f = tr_stepsum_field (cases[i].field);
        double *m;

        tr_stepsum_init (&row);
        assert_non_null (f);
        m = (double *)(void *)((char *)&row + f->offset);
        *m = cases[i].value;
        tr_strbuf_reset (&sb);
        assert_int_equal (tr_stepsum_format (&sb, &row, f, cases[i].raw), 0);
        assert_string_equal (tr_strbuf_str (&sb), cases[i].want);
    }
    tr_strbuf_free (&sb);
    assert_non_null (tr_stepsum_field ("JobID"));
    /* sacct's names in any case; its meaning wins over tracer's own */
    assert_ptr_equal (tr_stepsum_field ("maxrss"),
                      tr_stepsum_field ("MaxRSS"));
    assert_string_equal (tr_stepsum_field ("group")->name, "Group");
    assert_string_equal (tr_stepsum_field ("stepgroup")->name, "StepGroup");
    assert_int_equal (tr_stepsum_field ("JobID")->width, -12);
    assert_int_equal (tr_stepsum_field ("jobname")->width, 10);
    assert_null (tr_stepsum_field ("nosuchfield"));
    tr_stepsum_init (&row);
    row.job_id = "125";
    row.array_job_id = "123";
    row.array_task_id = 2;
    row.step_id = "batch";
    /* sacct's JobID: the step's on a step row */
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("jobid"),
                                         buf, sizeof (buf)), "123_2.batch");
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("jobstep"),
                                         buf, sizeof (buf)), "123_2.batch");
    /* sorting: numbers numerically, unknown last; names naturally */
    {
        tr_stepsum_t a, b;
        const tr_field_t *el = tr_stepsum_field ("elapsed");
        const tr_field_t *nl = tr_stepsum_field ("nodelist");

        tr_stepsum_init (&a);
        tr_stepsum_init (&b);
        a.elapsed_s = 9;
        b.elapsed_s = 10;
        assert_true (tr_stepsum_cmp (&a, &b, el) < 0);
        b.elapsed_s = NAN;
        assert_true (tr_stepsum_cmp (&a, &b, el) < 0);
        assert_true (tr_stepsum_cmp (&b, &a, el) > 0);
        a.node = "node9";
        b.node = "node10";
        assert_true (tr_stepsum_cmp (&a, &b, nl) < 0);
    }
}

static void test_tsv (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    json_t *rec = load_fixture ("collector-slurm-v2.json");
    tr_stepsum_t row, back;
    tr_strbuf_t sb = { 0 }, sb2 = { 0 };
    tr_error_t error;
    char *line;

    (void)state;
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid",
                                              "c/jobs/x\ty\\z.json", pool), 0);
    row.reason = "two\nlines";
    assert_int_equal (tr_stepsum_tsv_header (&sb), 0);
    assert_int_equal (tr_stepsum_tsv_check_header (tr_strbuf_str (&sb),
                                                   &error), 0);
    assert_int_equal (tr_stepsum_tsv_check_header ("#tracer-stepsum 3",
                                                   &error), -1);
    tr_strbuf_reset (&sb);
    assert_int_equal (tr_stepsum_to_tsv (&sb, &row), 0);
    assert_null (strchr (tr_strbuf_str (&sb), '\n'));
    line = tr_strbuf_steal (&sb);
    assert_int_equal (tr_stepsum_from_tsv (&back, line, pool, &error), 0);
    free (line);
    assert_string_equal (back.path, "c/jobs/x\ty\\z.json");
    assert_string_equal (back.reason, "two\nlines");
    /* every field the same, numbers bit for bit */
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++) {
        tr_strbuf_reset (&sb);
        tr_strbuf_reset (&sb2);
        assert_int_equal (tr_stepsum_format (&sb, &row, f, true), 0);
        assert_int_equal (tr_stepsum_format (&sb2, &back, f, true), 0);
        assert_string_equal (tr_strbuf_str (&sb), tr_strbuf_str (&sb2));
    }
    {
        char bad1[] = "a\tb";
        char bad2[] = "";

        assert_int_equal (tr_stepsum_from_tsv (&back, bad1, pool, &error),
                          -1);
        assert_int_equal (tr_stepsum_from_tsv (&back, bad2, pool, &error),
                          -1);
    }
    /* a number field holding text */
    tr_strbuf_reset (&sb);
    assert_int_equal (tr_stepsum_to_tsv (&sb, &row), 0);
    line = tr_strbuf_steal (&sb);
    {
        /* the first numeric column is arraytaskid, the fourth */
        char *p = line;
        for (int i = 0; i < 3; i++)
            p = strchr (p, '\t') + 1;
        memmove (p + 1, p, strlen (p) + 1);
        *p = 'x';
        assert_int_equal (tr_stepsum_from_tsv (&back, line, pool, &error),
                          -1);
        assert_non_null (strstr (error.text, "arraytaskid"));
    }
    free (line);
    {
        json_t *o = tr_stepsum_to_json (&row);
        assert_non_null (o);
        assert_string_equal (json_string_value (json_object_get (o, "jobid")),
                             row.job_id);
        assert_null (json_object_get (o, "arraytaskid"));
        json_decref (o);
    }
    tr_strbuf_free (&sb);
    tr_strbuf_free (&sb2);
    json_decref (rec);
    tr_strpool_destroy (pool);
}

static void test_pool (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    const char *first[5000];
    char buf[32];

    (void)state;
    for (int i = 0; i < 5000; i++) {
        snprintf (buf, sizeof (buf), "user%d", i);
        first[i] = tr_strpool_intern (pool, buf);
        assert_non_null (first[i]);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf (buf, sizeof (buf), "user%d", i);
        assert_ptr_equal (tr_strpool_intern (pool, buf), first[i]);
        assert_string_equal (first[i], buf);
    }
    assert_string_equal (tr_strpool_intern (pool, NULL), "");
    assert_string_equal (tr_strpool_intern_n (pool, "abcdef", 3), "abc");
    tr_strpool_destroy (pool);
}

/* A job with no time limit: request.time_limit "UNLIMITED", or Slurm's
 * 365 days, is UNLIMITED in the listing and its JSON, never 365-00:00:00.
 */
static void test_unlimited (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    const tr_field_t *f = tr_stepsum_field ("timelimit");
    json_t *rec = load_fixture ("basic.json"), *req, *o;
    tr_stepsum_t row;

    (void)state;
    req = json_object_get (rec, "request");
    for (int c = 0; c < 3; c++) {
        tr_strbuf_t sb = { 0 };

        json_object_del (req, "time_limit_s");
        json_object_del (req, "time_limit");
        if (c == 0)
            json_object_set_new (req, "time_limit", json_string ("UNLIMITED"));
        else
            json_object_set_new (req, "time_limit_s",
                                 json_integer (c == 1 ? 31536000 : 31535940));
        assert_int_equal (tr_stepsum_from_record (&row, rec, "unsigned",
                                                  "x.json", pool), 0);
        assert_int_equal (tr_stepsum_format (&sb, &row, f, false), 0);
        o = tr_stepsum_to_json (&row);
        if (c < 2) {
            assert_true (row.time_unlimited == 1);
            assert_true (isnan (row.time_limit_s));
            assert_string_equal (tr_strbuf_str (&sb), "UNLIMITED");
            assert_string_equal (
                json_string_value (json_object_get (o, "timelimit")),
                "UNLIMITED");
        }
        else {
            assert_true (isnan (row.time_unlimited));
            assert_string_equal (tr_strbuf_str (&sb), "364-23:59:00");
        }
        json_decref (o);
        tr_strbuf_free (&sb);
    }
    json_decref (rec);
    tr_strpool_destroy (pool);
}

/* sacct's words: states, CODE:SIGNAL, hostlists, job and step ids */
static void test_sacct (void **state)
{
    tr_stepsum_t row;
    char buf[256];
    static const struct {
        const char *nodes, *want;
    } lists[] = {
        { "n1", "n1" },
        { "n1,n2,n3", "n[1-3]" },
        { "n1,n2,n3,n5,n7,n8", "n[1-3,5,7-8]" },
        { "gpu01,gpu02,n1,login", "gpu[01-02],n1,login" },
        { "a9,a10", "a9,a10" },     /* widths differ: not one run */
        { "", "" },
    };
    static const struct {
        double code, sig;
        const char *state;
        double oom_kills;
        const char *want;
    } exits[] = {
        { 0, 0, "completed", 0, "0:0" },
        { 3, 0, "failed", 0, "3:0" },
        { 137, 9, "failed", 0, "0:9" },
        { NAN, 15, "cancelled", NAN, "0:15" },
        { 1, NAN, "failed", NAN, "1:0" },
        { NAN, NAN, "completed", NAN, "" },
        /* sacct takes 128 off a code without a signal */
        { 137, NAN, "failed", 0, "9:0" },
        { 255, 0, "failed", 0, "127:0" },
        /* an exit beats a signal of another task, as in Slurm's
         * largest raw wait status: one task exits 1, one is killed
         */
        { 1, 15, "failed", 0, "1:0" },
        { 140, 15, "failed", 0, "12:0" },
        { 0, 15, "cancelled", 0, "0:15" },
        /* Slurm's SIG_OOM, whatever the task's own status */
        { 137, 9, "oom", NAN, "0:125" },
        { 0, 9, "failed", 2, "0:125" },
        { 137, NAN, "failed", 1, "0:125" },
        { NAN, NAN, "oom", NAN, "0:125" },
        /* Slurm's own word, as tracer-mail has it */
        { 0, NAN, "OUT_OF_MEMORY", NAN, "0:125" },
    };

    (void)state;
    assert_string_equal (tr_stepsum_state_name ("completed", 0), "COMPLETED");
    assert_string_equal (tr_stepsum_state_name ("oom", 0), "OUT_OF_MEMORY");
    assert_string_equal (tr_stepsum_state_name ("failed", 2),
                         "OUT_OF_MEMORY");
    assert_string_equal (tr_stepsum_state_name ("timeout", 0), "TIMEOUT");
    assert_string_equal (tr_stepsum_state_name ("cancelled", NAN),
                         "CANCELLED");
    assert_string_equal (tr_stepsum_state_name ("incomplete", 0),
                         "INCOMPLETE");
    assert_string_equal (tr_stepsum_state_name ("", 0), "");
    for (size_t i = 0; i < sizeof (exits) / sizeof (exits[0]); i++) {
        tr_stepsum_init (&row);
        row.exit_code = exits[i].code;
        row.signal = exits[i].sig;
        row.state = exits[i].state;
        row.oom_kills = exits[i].oom_kills;
        assert_string_equal (tr_stepsum_exit_text (&row, buf, sizeof (buf)),
                             exits[i].want);
    }
    for (size_t i = 0; i < sizeof (lists) / sizeof (lists[0]); i++) {
        tr_stepsum_init (&row);
        row.node = lists[i].nodes;
        assert_string_equal (tr_stepsum_str (&row,
                                             tr_stepsum_field ("NodeList"),
                                             buf, sizeof (buf)),
                             lists[i].want);
    }
    tr_stepsum_init (&row);
    row.job_id = "14";
    row.array_job_id = "13";
    row.array_task_id = 1;
    row.step_id = "batch";
    row.step_name = "";
    row.job_name = "align";
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("JobID"),
                                         buf, sizeof (buf)),
                         "13_1.batch");
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("JobIDRaw"),
                                         buf, sizeof (buf)),
                         "14.batch");
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("JobName"),
                                         buf, sizeof (buf)),
                         "batch");
    row.step_id = "";
    assert_true (tr_stepsum_is_job (&row));
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("JobID"),
                                         buf, sizeof (buf)),
                         "13_1");
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("JobName"),
                                         buf, sizeof (buf)),
                         "align");
}

/* A job whose node failed: the record says "incomplete" (an older
 * collector's said "cancelled"), the reason the scheduler's NODE_FAIL.
 * The row, its job row, the listing's State and state (text and JSON)
 * say NODE_FAIL, never CANCELLED; -s NF selects it; the cause stays
 * node-failure.
 */
static void test_node_fail (void **state)
{
    static const char *const states[] = { "incomplete", "cancelled" };
    tr_strpool_t *pool = tr_strpool_create ();

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        json_t *rec = load_fixture ("basic.json");
        json_t *oc = json_object_get (rec, "outcome");
        tr_stepsum_t row, job;
        struct tr_query q = { 0 };
        char st[] = "NF", ca[] = "CA,IN", buf[64];
        tr_error_t error;

        json_t *t;
        size_t k;

        /* no OOM kill: that cause would come first */
        json_object_set_new (json_object_get (json_object_get (rec, "summary"),
                                              "memory"),
                             "oom_kill_events", json_integer (0));
        json_array_foreach (json_object_get (oc, "tasks"), k, t)
            json_object_del (t, "oom_killed");
        json_object_del (rec, "events");
        json_object_set_new (oc, "state", json_string (states[i]));
        json_object_set_new (oc, "reason",
                             json_string ("the scheduler reports the job "
                                          "NODE_FAIL"));
        assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p",
                                                  pool), 0);
        assert_string_equal (row.state, "NODE_FAIL");
        assert_string_equal (row.cause, "node-failure");
        assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("State"),
                                             buf, sizeof (buf)),
                             "NODE_FAIL");
        assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("state"),
                                             buf, sizeof (buf)),
                             "NODE_FAIL");
        tr_stepsum_init (&job);
        assert_int_equal (tr_stepsum_job_add (&job, &row, pool), 0);
        assert_string_equal (tr_stepsum_state_name (job.state, job.oom_kills),
                             "NODE_FAIL");
        assert_int_equal (tr_query_add_states (&q, st, &error), 0);
        assert_true (tr_query_match_step (&q, &row));
        assert_true (tr_query_match_step (&q, &job));
        q.nstates = 0;
        assert_int_equal (tr_query_add_states (&q, ca, &error), 0);
        assert_false (tr_query_match_step (&q, &row));
        json_decref (rec);
    }
    tr_strpool_destroy (pool);
}

/* Rows by cluster, job (naturally) and step, whatever order they come in. */
static void test_cmp_id (void **state)
{
    static const char *const want[][3] = {
        { "alpha", "9", "batch" }, { "alpha", "9", "0" },
        { "alpha", "9", "2" },     { "alpha", "9", "10" },
        { "alpha", "10", "0" },    { "beta", "1", "extern" },
        { "beta", "1", "0" },
    };
    enum { N = sizeof (want) / sizeof (want[0]) };
    static const int shuffle[N] = { 4, 6, 0, 3, 5, 1, 2 };
    tr_stepsum_t rows[N];
    const tr_stepsum_t *v[N];

    (void)state;
    for (size_t i = 0; i < N; i++) {
        tr_stepsum_init (&rows[i]);
        rows[i].cluster = want[shuffle[i]][0];
        rows[i].job_id = want[shuffle[i]][1];
        rows[i].step_id = want[shuffle[i]][2];
        v[i] = &rows[i];
    }
    qsort (v, N, sizeof (v[0]), tr_stepsum_cmp_id_ptr);
    for (size_t i = 0; i < N; i++) {
        assert_string_equal (v[i]->cluster, want[i][0]);
        assert_string_equal (v[i]->job_id, want[i][1]);
        assert_string_equal (v[i]->step_id, want[i][2]);
    }
    assert_int_equal (tr_stepsum_cmp_id (v[1], v[1]), 0);
    assert_true (tr_stepsum_cmp_id (v[0], v[1]) < 0);
    assert_true (tr_stepsum_cmp_id (v[6], v[0]) > 0);
}

/* sacct's TRES lists: what was allocated, names in sacct's order, the
 * memory of every node in the largest exact unit; none without cores
 */
static void test_tres (void **state)
{
    const tr_field_t *alloc = tr_stepsum_field ("alloctres");
    const tr_field_t *req = tr_stepsum_field ("ReqTRES");
    tr_stepsum_t r;
    char buf[128];

    (void)state;
    assert_non_null (alloc);
    assert_non_null (req);
    tr_stepsum_init (&r);
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)), "");
    r.req_mem_bytes = 200.0 * 1048576;
    r.nodes = 1;
    /* an extern step: its job's row holds the allocation */
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)), "");
    r.req_cores = 2;
    r.req_mem_bytes = 400.0 * 1048576;
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)),
                         "cpu=2,mem=400M,node=1");
    assert_string_equal (tr_stepsum_str (&r, req, buf, sizeof (buf)),
                         "cpu=2,mem=400M,node=1");
    r.gpus = "0,1";
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)),
                         "cpu=2,gres/gpu=2,mem=400M,node=1");
    r.nodes = 2;
    r.req_cores = 8;
    r.req_mem_bytes = 4096.0 * 1048576;
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)),
                         "cpu=8,mem=8G,node=2");
    r.req_mem_bytes = 1536.0 * 1048576;
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)),
                         "cpu=8,mem=3G,node=2");
    r.nodes = 1;
    r.gpus = "";
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)),
                         "cpu=8,mem=1536M,node=1");
    r.req_mem_bytes = 1000000;
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)),
                         "cpu=8,mem=977K,node=1");
    /* a node of the allocation sent no record: its part is not known */
    r.nodes_expected = 2;
    assert_string_equal (tr_stepsum_str (&r, alloc, buf, sizeof (buf)), "");
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_from_record), cmocka_unit_test (test_group),
        cmocka_unit_test (test_merge),       cmocka_unit_test (test_fields),
        cmocka_unit_test (test_cause),
        cmocka_unit_test (test_stalled),
        cmocka_unit_test (test_tsv),         cmocka_unit_test (test_pool),
        cmocka_unit_test (test_unlimited),  cmocka_unit_test (test_sacct),
        cmocka_unit_test (test_node_fail),
        cmocka_unit_test (test_cmp_id),
        cmocka_unit_test (test_tres),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
