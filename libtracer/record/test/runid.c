/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Pipeline runs: which run a step belongs to, from tags, Snakemake's job
 * script directory, Nextflow's job names and task directories, and job
 * arrays; and what is in no run.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/record/runid.h"
#include "libtracer/record/stepsum.h"

#define SMK "/home/ann/proj/.snakemake/tmp.k2j4x9ab/"
#define NFW "/scratch/ann/rnaseq/work/"
#define HASH "3f/0123456789abcdef0123456789abcd"

static void test_tags_win (void **state)
{
    struct tr_run_input in = {
        .tags = "pipeline=demo;run=demo-20260101-000000-ab12",
        .job_name = "snakejob.align.3.sh",
        .command = SMK "snakejob.align.3.sh",
    };
    struct tr_run r;

    (void)state;
    assert_true (tr_run_identify (&in, &r));
    assert_string_equal (r.id, "demo-20260101-000000-ab12");
    assert_string_equal (r.pipeline, "demo");
    /* the process from the job name, as the step group has it */
    assert_string_equal (r.process, "align");

    in.tags = "process=p1;run=x";
    assert_true (tr_run_identify (&in, &r));
    assert_string_equal (r.id, "x");
    assert_string_equal (r.pipeline, "");
    assert_string_equal (r.process, "p1");

    /* an empty run tag is no run tag */
    in.tags = "run=";
    assert_true (tr_run_identify (&in, &r));
    assert_memory_equal (r.id, "snakemake-", 10);
}

static void test_snakemake (void **state)
{
    struct tr_run_input in = {
        .job_name = "snakejob.align.3.sh",
        .command = SMK "snakejob.align.3.sh",
        .work_dir = "/home/ann/proj",
    };
    struct tr_run a, b, c;

    (void)state;
    assert_true (tr_run_identify (&in, &a));
    assert_memory_equal (a.id, "snakemake-", 10);
    assert_int_equal (strlen (a.id), 18);
    assert_true (tr_run_name_ok (a.id));
    assert_string_equal (a.pipeline, "proj");
    assert_string_equal (a.process, "align");

    /* another rule of the same invocation: the same run */
    in.command = SMK "snakejob.count_reads.12.sh";
    in.job_name = "anything";
    assert_true (tr_run_identify (&in, &b));
    assert_string_equal (b.id, a.id);
    assert_string_equal (b.process, "count_reads");

    /* the script given relative to the working directory */
    in.command = ".snakemake/tmp.k2j4x9ab/snakejob.align.4.sh";
    assert_true (tr_run_identify (&in, &b));
    assert_string_equal (b.id, a.id);
    assert_string_equal (b.pipeline, "proj");

    /* the next invocation has its own tmp directory */
    in.command = "/home/ann/proj/.snakemake/tmp.zz99yy11/snakejob.align.3.sh";
    assert_true (tr_run_identify (&in, &c));
    assert_string_not_equal (c.id, a.id);
    assert_string_equal (c.pipeline, "proj");

    /* not Snakemake's layout */
    in.command = "/home/ann/proj/.snakemake/tmp.k2j4x9ab/sub/snakejob.a.1.sh";
    assert_false (tr_run_identify (&in, &c));
    in.command = "/home/ann/proj/.snakemake/tmp.k2j4x9ab/other.sh";
    assert_false (tr_run_identify (&in, &c));
    in.command = "/home/ann/proj/.snakemake/tmp./snakejob.a.1.sh";
    assert_false (tr_run_identify (&in, &c));
    assert_string_equal (c.id, "");
}

static void test_nextflow (void **state)
{
    struct tr_run_input in = {
        .job_name = "nf-NFCORE_RNASEQ_RNASEQ_FASTQC_(SAMPLE_1)",
        .command = NFW HASH "/.command.run",
        .work_dir = NFW HASH,
    };
    struct tr_run a, b;

    (void)state;
    assert_true (tr_run_identify (&in, &a));
    assert_memory_equal (a.id, "nextflow-", 9);
    assert_true (tr_run_name_ok (a.id));
    assert_string_equal (a.pipeline, "rnaseq");
    assert_string_equal (a.process, "NFCORE_RNASEQ_RNASEQ_FASTQC");

    /* another task of the same work directory, no tag, trailing '/' */
    in.job_name = "nf-MULTIQC";
    in.work_dir = NFW "a0/fedcba9876543210fedcba98765432/";
    assert_true (tr_run_identify (&in, &b));
    assert_string_equal (b.id, a.id);
    assert_string_equal (b.process, "MULTIQC");

    /* a tag with "(" and ")" of its own; a name Nextflow cut at 256
     * characters, its tag without the ")"
     */
    in.job_name = "nf-WF_ALIGN_(s1_(rep_2))";
    assert_true (tr_run_identify (&in, &b));
    assert_string_equal (b.process, "WF_ALIGN");
    in.job_name = "nf-WF_ALIGN_(a_tag_of_some_250_characters_cut_wher";
    assert_true (tr_run_identify (&in, &b));
    assert_string_equal (b.process, "WF_ALIGN");

    /* the task name of its job script: the process as Nextflow names it,
     * its nested workflows joined by ':'
     */
    in.job_name = "nf-NFCORE_RNASEQ_RNASEQ_ALIGN_STAR_STAR_ALIGN_(KO_REP1)";
    in.task_name = "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN (KO REP1)";
    assert_true (tr_run_identify (&in, &b));
    assert_string_equal (b.process, "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN");
    assert_string_equal (b.id, a.id);
    in.task_name = "MULTIQC";
    assert_true (tr_run_identify (&in, &b));
    assert_string_equal (b.process, "MULTIQC");
    /* only with the task directory: a task name alone is no run */
    in.task_name = NULL;

    /* a work directory not named "work": its own name is the pipeline */
    in.work_dir = "/scratch/ann/nfrun/" HASH;
    assert_true (tr_run_identify (&in, &b));
    assert_string_not_equal (b.id, a.id);
    assert_string_equal (b.pipeline, "nfrun");

    /* an nf- name in a directory that is no task directory */
    in.work_dir = "/scratch/ann/rnaseq/work/3f/0123";
    assert_false (tr_run_identify (&in, &b));
    in.work_dir = NFW "3F/0123456789ABCDEF0123456789ABCD";
    assert_false (tr_run_identify (&in, &b));
    /* a task directory without an nf- name */
    in.job_name = "align";
    in.work_dir = NFW HASH;
    assert_false (tr_run_identify (&in, &b));
}

static void test_array (void **state)
{
    struct tr_run_input in = {
        .cluster = "c1",
        .job_name = "sweep",
        .array_job_id = "4711",
    };
    struct tr_run r;

    (void)state;
    assert_true (tr_run_identify (&in, &r));
    assert_string_equal (r.id, "array-c1-4711");
    assert_string_equal (r.pipeline, "");
    assert_string_equal (r.process, "sweep");
    assert_true (tr_run_name_ok (r.id));
    /* an array task of a Snakemake run is in the Snakemake run */
    in.command = SMK "snakejob.align.3.sh";
    assert_true (tr_run_identify (&in, &r));
    assert_memory_equal (r.id, "snakemake-", 10);
}

/* What a job controls alone (its name) makes no run */
static void test_hostile_name (void **state)
{
    struct tr_run_input in = { .job_name = "snakejob.x.1.sh",
                               .tags = "group=g" };
    struct tr_run r;

    (void)state;
    assert_false (tr_run_identify (&in, &r));
    assert_string_equal (r.id, "");
    in.job_name = "nf-FOO_(1)";
    assert_false (tr_run_identify (&in, &r));
    /* a command with the marker but in no directory of its own */
    in.command = "/.snakemake/tmp.abc/snakejob.x.1.sh";
    assert_false (tr_run_identify (&in, &r));
}

static void test_name_ok (void **state)
{
    (void)state;
    assert_true (tr_run_name_ok ("demo-20260101-101010-ab12"));
    assert_true (tr_run_name_ok ("a.b_c+d@e"));
    assert_false (tr_run_name_ok (""));
    assert_false (tr_run_name_ok (NULL));
    assert_false (tr_run_name_ok (".hidden"));
    assert_false (tr_run_name_ok ("-x"));
    assert_false (tr_run_name_ok ("a/b"));
    assert_false (tr_run_name_ok ("a,b"));
    assert_false (tr_run_name_ok ("a:b"));
    assert_false (tr_run_name_ok ("a b"));
}

/* A record becomes a row with its run */
static void test_stepsum (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    json_t *rec = json_pack (
        "{s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:{}}",
        "identity", "scheduler", "slurm", "job_id", "12", "step_id", "batch",
        "job_name", "snakejob.align.3.sh", "command",
        SMK "snakejob.align.3.sh", "work_dir", "/home/ann/proj", "tags");
    tr_stepsum_t row;
    char buf[64];
    tr_strbuf_t sb = TR_STRBUF_INIT;

    (void)state;
    assert_non_null (rec);
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p",
                                              pool), 0);
    assert_memory_equal (row.run_id, "snakemake-", 10);
    assert_string_equal (row.pipeline, "proj");
    assert_string_equal (row.process, "align");
    assert_string_equal (tr_stepsum_str (&row, tr_stepsum_field ("run"), buf,
                                         sizeof (buf)), row.run_id);
    /* the index line keeps them */
    {
        tr_stepsum_t back;
        char *line;
        tr_error_t error;

        assert_int_equal (tr_stepsum_to_tsv (&sb, &row), 0);
        line = strdup (tr_strbuf_str (&sb));
        assert_int_equal (tr_stepsum_from_tsv (&back, line, pool, &error), 0);
        assert_string_equal (back.run_id, row.run_id);
        assert_string_equal (back.pipeline, "proj");
        assert_string_equal (back.process, "align");
        free (line);
    }
    /* tags set by hand win */
    json_object_set_new (json_object_get (rec, "tags"), "run",
                         json_string ("mine"));
    assert_int_equal (tr_stepsum_from_record (&row, rec, "valid", "p",
                                              pool), 0);
    assert_string_equal (row.run_id, "mine");
    assert_string_equal (row.pipeline, "");
    tr_strbuf_free (&sb);
    json_decref (rec);
    tr_strpool_destroy (pool);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_tags_win),
        cmocka_unit_test (test_snakemake),
        cmocka_unit_test (test_nextflow),
        cmocka_unit_test (test_array),
        cmocka_unit_test (test_hostile_name),
        cmocka_unit_test (test_name_ok),
        cmocka_unit_test (test_stepsum),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
