/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Recommendations in the words of the tools they are pasted into, checked
 * against those tools' own rules: Nextflow's job names and withName
 * matching (nextflow AbstractGridExecutor.getJobNameFor: "nf-" and the
 * task name with ' ', '/', ':', '@', '*', '?', '=' and line breaks as
 * '_'; ProcessConfig.matchesSelector: a regular expression matched
 * against the whole simple and fully qualified process name), Snakemake
 * 7's RULE:RESOURCE=VALUE entries (snakemake/__init__.py
 * parse_set_resources), PBS resource lists as tracer's PBS prologue
 * parses them (tr_batch_pbs_resources), LSF's -n/-R/-W.
 */
#include "config.h"

#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/node/batch.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"
#include "libtracer/view/mail_summary.h"
#include "libtracer/view/recommend_print.h"
#include "libtracer/record/stepsum.h"

#define MiB 1048576.0
#define GiB 1073741824.0
#define MAXROWS 64

struct runs {
    tr_stepsum_t row[MAXROWS];
    const tr_stepsum_t *ptr[MAXROWS];
    char id[MAXROWS][16];
    char job[MAXROWS][300];
    char group[MAXROWS][300];
    size_t n;
};

/* A completed batch step of a job named job_name, grouped as tracer
 * groups it: asks 2 CPUs, 4G, 2 h; uses 1 core, 300M, 100 s.
 */
static void add (struct runs *r, const char *job_name)
{
    tr_stepsum_t *row;

    assert_true (r->n < MAXROWS);
    row = &r->row[r->n];
    tr_stepsum_init (row);
    snprintf (r->id[r->n], sizeof (r->id[0]), "%zu", 1000 + r->n);
    snprintf (r->job[r->n], sizeof (r->job[0]), "%s", job_name);
    row->job_id = r->id[r->n];
    row->job_name = r->job[r->n];
    row->step_id = "batch";
    row->group = tr_stepsum_group (r->group[r->n], sizeof (r->group[0]),
                                   job_name, "batch", NULL, NULL);
    row->state = "completed";
    row->nodes = 1;
    row->tasks = 1;
    row->start_ms = 1.7e12 + 60000.0 * (double)r->n;
    row->end_ms = row->start_ms + 100000;
    row->req_cpus_per_task = 2;
    row->req_cores = 2;
    row->req_mem_bytes = 4 * GiB;
    row->time_limit_s = 7200;
    row->cpu_s = 100;
    row->mem_peak_bytes = 300e6;
    row->elapsed_s = 100;
    r->ptr[r->n] = row;
    r->n++;
}

static json_t *recommend (struct runs *r)
{
    struct tr_recommend_opts o;
    tr_error_t err;
    json_t *recs;

    tr_recommend_opts_default (&o);
    recs = tr_recommend_groups (r->ptr, r->n, &o, &err);
    if (!recs)
        fail_msg ("tr_recommend_groups: %s", err.text);
    return recs;
}

/* The request options of scheduler s, joined (tr_sizing_args). */
static int args_of (char *buf,
                    size_t size,
                    const char *s,
                    double cpus,
                    double mem,
                    double time)
{
    struct tr_sizing_args a;

    if (tr_sizing_args (&a, s, cpus, mem, time) < 0)
        return -1;
    return tr_sizing_join (buf, size, &a);
}

typedef int (*print_f) (FILE *out, json_t *recs);

static char *print_to_string (print_f print, json_t *recs)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);

    assert_non_null (f);
    assert_int_equal (print (f, recs), 0);
    assert_int_equal (fclose (f), 0);
    return buf;
}

/* Nextflow's job name for a task (AbstractGridExecutor.getJobNameFor). */
static void nf_job_name (char *buf, size_t size, const char *task)
{
    size_t n = 0;

    n = (size_t)snprintf (buf, size, "nf-");
    for (; *task && n + 1 < size && n < 256; task++)
        buf[n++] = strchr (" /:@*?\n\t\r=", *task) ? '_' : *task;
    buf[n] = '\0';
}

/* The withName selectors of a Nextflow config, in order. */
static size_t selectors (const char *config, char sel[][300], size_t max)
{
    size_t n = 0;
    const char *p = config;

    while (n < max && (p = strstr (p, "withName: '"))) {
        const char *end = strchr (p + 11, '\'');

        assert_non_null (end);
        snprintf (sel[n++], 300, "%.*s", (int)(end - p - 11), p + 11);
        p = end;
    }
    return n;
}

/* Whether Nextflow applies selector sel to a process: the whole simple
 * or fully qualified name matches it (these selectors use only the
 * regular expression syntax that Java and POSIX ERE share).
 */
static bool nf_matches (const char *sel, const char *fqn)
{
    const char *simple = strrchr (fqn, ':');
    char re[400];
    regex_t rx;
    bool m;

    snprintf (re, sizeof (re), "^(%s)$", sel);
    assert_int_equal (regcomp (&rx, re, REG_EXTENDED | REG_NOSUB), 0);
    m = !regexec (&rx, fqn, 0, NULL, 0)
        || !regexec (&rx, simple ? simple + 1 : fqn, 0, NULL, 0);
    regfree (&rx);
    return m;
}

/* Processes inside nested subworkflows: each selector matches its own
 * process and no other (the job name's process part alone,
 * NFCORE_RNASEQ_RNASEQ_STAR_ALIGN, would match none of them).
 */
static void test_nextflow_subworkflows (void **state)
{
    static const char *fqn[] = {
        "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN",
        "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:BAM_SORT_STATS_SAMTOOLS:"
        "SAMTOOLS_SORT",
        "NFCORE_RNASEQ:RNASEQ:FASTQ_FASTQC_UMITOOLS_TRIMGALORE:FASTQC",
        "MULTIQC",
        "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN_IGENOMES",
    };
    static const char *tag[] = { " (WT_REP1)", " (sample 2)", " (1)" };
    size_t nproc = sizeof (fqn) / sizeof (fqn[0]);
    struct runs *r = calloc (1, sizeof (*r));
    char sel[8][300], job[300], task[300];
    json_t *recs;
    char *out;

    (void)state;
    assert_non_null (r);
    for (size_t p = 0; p < nproc; p++)
        for (size_t t = 0; t < 3; t++) {
            snprintf (task, sizeof (task), "%s%s", fqn[p], tag[t]);
            nf_job_name (job, sizeof (job), task);
            add (r, job);
        }
    assert_string_equal (r->job[0],
                         "nf-NFCORE_RNASEQ_RNASEQ_ALIGN_STAR_STAR_ALIGN_"
                         "(WT_REP1)");
    recs = recommend (r);
    out = print_to_string (tr_recommend_print_nextflow, recs);
    assert_int_equal (selectors (out, sel, 8), nproc);
    /* groups come sorted by name; match each selector to its process */
    for (size_t p = 0; p < nproc; p++) {
        size_t hits = 0, which = 0;

        for (size_t s = 0; s < nproc; s++)
            if (nf_matches (sel[s], fqn[p])) {
                hits++;
                which = s;
            }
        if (hits != 1)
            fail_msg ("%s: matched by %zu selectors\n%s", fqn[p], hits, out);
        for (size_t q = 0; q < nproc; q++)
            if (q != p && nf_matches (sel[which], fqn[q]))
                fail_msg ("selector '%s' of %s also matches %s", sel[which],
                          fqn[p], fqn[q]);
    }
    assert_non_null (strstr (out, "    withName: 'NFCORE[_:]RNASEQ[_:]RNASEQ"
                                  "[_:]ALIGN[_:]STAR[_:]STAR[_:]ALIGN' {\n"
                                  "        cpus = 1\n"));
    assert_non_null (strstr (out, "    withName: 'MULTIQC' {\n"));
    /* the job name's process part, as a selector, matches nothing */
    assert_false (nf_matches ("NFCORE_RNASEQ_RNASEQ_ALIGN_STAR_STAR_ALIGN",
                              fqn[0]));
    free (out);
    json_decref (recs);
    free (r);
}

/* Snakemake 7's parse_set_resources: each entry "RULE:RESOURCE=VALUE",
 * the key splits on ':' into exactly two, the value a non-negative
 * integer (or a string); checked entry by entry, and the three entries of
 * each rule are there.
 */
static void test_snakemake7 (void **state)
{
    struct runs *r = calloc (1, sizeof (*r));
    json_t *recs;
    char *out, *line, *save = NULL;
    size_t entries = 0;

    (void)state;
    assert_non_null (r);
    for (int i = 0; i < 3; i++) {
        add (r, "snakejob.count_words.3.sh");
        add (r, "snakejob.sort_words.7.sh");
        add (r, "plain_sbatch_job");
    }
    recs = recommend (r);
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (json_object_get (recs, "groups"),
                                             0),
                             "workflow")),
                         "snakemake");
    out = print_to_string (tr_recommend_print_snakemake, recs);
    assert_non_null (strstr (out, "set-resources:\n"));
    assert_null (strstr (out, "set-resources: {")); /* no mapping */
    assert_non_null (strstr (out, "# left out: group plain_sbatch_job/batch "
                                  "(not a Snakemake rule)\n"));
    for (line = strtok_r (out, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        char key[128], rule[64], res[64];
        long long v;
        int n = 0;

        if (line[0] == '#' || !strcmp (line, "set-resources:")
            || !strncmp (line, "  #", 3))
            continue;
        /* a YAML list item of one double-quoted string */
        if (sscanf (line, "  - \"%127[^\"]\"%n", key, &n) != 1
            || line[n] != '\0')
            fail_msg ("not a Snakemake 7 set-resources entry: %s", line);
        assert_int_equal (sscanf (key, "%63[^:=]:%63[^:=]=%lld%n", rule, res,
                                  &v, &n), 3);
        assert_int_equal (key[n], '\0');
        assert_true (v >= 0);
        assert_true (!strcmp (rule, "count_words")
                     || !strcmp (rule, "sort_words"));
        assert_true (!strcmp (res, "cpus_per_task") || !strcmp (res, "mem_mb")
                     || !strcmp (res, "runtime"));
        entries++;
    }
    assert_int_equal (entries, 6);
    free (out);
    out = print_to_string (tr_recommend_print_snakemake, recs);
    assert_non_null (strstr (out, "  - \"count_words:cpus_per_task=1\"\n"
                                  "  - \"count_words:mem_mb=512\"\n"
                                  "  - \"count_words:runtime=5\"\n"));
    free (out);
    out = print_to_string (tr_recommend_print_snakemake8, recs);
    assert_non_null (strstr (out, "set-resources:\n"
                                  "  # group count_words/batch (3 runs, "
                                  "medium confidence)\n"
                                  "  count_words:\n"
                                  "    cpus_per_task: 1\n"
                                  "    mem_mb: 512\n"
                                  "    runtime: 5\n"));
    free (out);
    json_decref (recs);
    free (r);
}

/* A recommendation's "#PBS -l" lines, joined as a Resource_List, parse
 * with tr_batch_pbs_resources (what tracer's PBS prologue and hook read
 * the job's resources with) to the recommended values.
 */
static void test_pbs (void **state)
{
    static const struct {
        double cpus, mem, time;
        const char *want;
    } cases[] = {
        { 1, 512 * MiB, 300, "-l select=1:ncpus=1:mem=512mb "
                             "-l walltime=00:05:00" },
        { 4, 2 * GiB, 93600, "-l select=1:ncpus=4:mem=2gb "
                             "-l walltime=26:00:00" },
        { 2, 1280 * MiB, 61, "-l select=1:ncpus=2:mem=1280mb "
                             "-l walltime=00:01:01" },
    };

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        char args[256], list[256] = "";
        struct tr_batch_job job;
        const char *p = args;

        assert_int_equal (args_of (args, sizeof (args), "pbs", cases[c].cpus,
                                   cases[c].mem, cases[c].time),
                          0);
        assert_string_equal (args, cases[c].want);
        /* "-l A -l B" as a Resource_List "A,B" */
        while ((p = strstr (p, "-l "))) {
            const char *end = strchr (p + 3, ' ');
            size_t len = end ? (size_t)(end - p - 3) : strlen (p + 3);

            snprintf (list + strlen (list), sizeof (list) - strlen (list),
                      "%s%.*s", *list ? "," : "", (int)len, p + 3);
            p += 3;
        }
        tr_batch_job_init (&job, TR_BATCH_PBS);
        tr_batch_pbs_resources (list, &job);
        assert_int_equal (job.cpus_on_node, (long long)cases[c].cpus);
        assert_int_equal (job.mem_bytes, (long long)cases[c].mem);
        assert_int_equal (job.time_limit_s, (long long)cases[c].time);
    }
}

/* The #PBS and #BSUB outputs, and the options for each scheduler. */
static void test_pbs_lsf_output (void **state)
{
    struct runs *r = calloc (1, sizeof (*r));
    char buf[256];
    json_t *recs;
    char *out;

    (void)state;
    assert_non_null (r);
    for (int i = 0; i < 3; i++)
        add (r, "align");
    recs = recommend (r);
    out = print_to_string (tr_recommend_print_pbs, recs);
    assert_string_equal (out, "# group align/batch (3 runs, medium "
                              "confidence)\n"
                              "#PBS -l select=1:ncpus=1:mem=512mb\n"
                              "#PBS -l walltime=00:05:00\n");
    free (out);
    out = print_to_string (tr_recommend_print_lsf, recs);
    assert_string_equal (out, "# group align/batch (3 runs, medium "
                              "confidence)\n"
                              "#BSUB -n 1\n"
                              "#BSUB -R \"rusage[mem=512MB]\"\n"
                              "#BSUB -W 0:05\n");
    free (out);
    json_decref (recs);
    free (r);

    assert_int_equal (args_of (buf, sizeof (buf), "slurm", 1,
                                         512 * MiB, 300), 0);
    assert_string_equal (buf, "--cpus-per-task=1 --mem=512M --time=00:05:00");
    assert_int_equal (args_of (buf, sizeof (buf), "lsf", 2, 2 * GiB,
                                         3601), 0);
    assert_string_equal (buf, "-n 2 -R \"rusage[mem=2048MB]\" -W 1:01");
    assert_int_equal (args_of (buf, sizeof (buf), "torque", NAN,
                                         NAN, 600), 0);
    assert_string_equal (buf, "-l walltime=00:10:00");
    assert_int_equal (args_of (buf, sizeof (buf), "pbs", NAN,
                                         GiB, NAN), 0);
    assert_string_equal (buf, "-l select=1:mem=1gb");
    assert_int_equal (args_of (buf, 10, "slurm", 1, GiB, 60), -1);
}

/* The options of a printer's output: its lines after prefix, joined. */
static void directives_of (char *buf, size_t size, const char *out,
                           const char *prefix)
{
    size_t plen = strlen (prefix), len = 0;
    const char *p = out;

    buf[0] = '\0';
    while (p && *p) {
        const char *end = strchr (p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen (p);

        if (n > plen && !strncmp (p, prefix, plen)) {
            int w = snprintf (buf + len, size - len, "%s%.*s",
                              len ? " " : "", (int)(n - plen), p + plen);

            assert_true (w > 0 && (size_t)w < size - len);
            len += (size_t)w;
        }
        p = end ? end + 1 : NULL;
    }
}

/* Under a site whose sizing keys differ from the defaults, the job
 * script lines of --recommend (sbatch, pbs, lsf), the mail summary's
 * "Next time" and the diagnosis's --mem are the same options for one
 * step group, in the words of the scheduler that ran it.
 */
static void test_views_agree (void **state)
{
    static const struct {
        const char *sched, *prefix;
        print_f print;
    } forms[] = {
        { "slurm", "#SBATCH ", tr_recommend_print_sbatch },
        { "pbs", "#PBS ", tr_recommend_print_pbs },
        { "lsf", "#BSUB ", tr_recommend_print_lsf },
    };
    struct runs *r = calloc (1, sizeof (*r));
    tr_conf_t *conf = tr_conf_create ();
    struct tr_recommend_opts o, def;
    json_t *recs, *g, *findings;
    char printed[512];

    (void)state;
    assert_non_null (r);
    assert_non_null (conf);
    conf->recommend.mem_headroom = 2.5;
    conf->recommend.mem_min = 3 * GiB;
    conf->recommend.time_margin = 4;
    tr_sizing_opts (&o, conf);
    tr_sizing_opts (&def, NULL);
    for (int i = 0; i < 3; i++)
        add (r, "align");
    assert_non_null (recs = tr_recommend_groups (r->ptr, r->n, &o, NULL));
    g = json_array_get (json_object_get (recs, "groups"), 0);
    assert_non_null (g);
    for (size_t f = 0; f < sizeof (forms) / sizeof (forms[0]); f++) {
        struct tr_mail_event ev = { .job_id = "1002", .exit_code = 0,
                                    .end = true };
        tr_stepsum_t row = r->row[2];
        json_t *advice[] = { g };
        char *out, *text = NULL;
        size_t tlen = 0;
        FILE *fp;
        struct tr_mail_job j = { .ev = &ev, .rows = &row, .n = 1,
                                 .findings = &findings, .advice = advice };

        print_message ("# %s\n", forms[f].sched);
        row.scheduler = forms[f].sched;
        snprintf (ev.type, sizeof (ev.type), "Ended");
        snprintf (ev.state, sizeof (ev.state), "COMPLETED");
        out = print_to_string (forms[f].print, recs);
        directives_of (printed, sizeof (printed), out, forms[f].prefix);
        print_message ("#   --recommend: %s\n", printed);
        assert_true (*printed);
        findings = tr_diagnose_advised (&row, &conf->diagnosis, g);
        assert_non_null (findings);
        assert_non_null (fp = open_memstream (&text, &tlen));
        assert_int_equal (tr_mail_summary_text (fp, &j), 0);
        assert_int_equal (fclose (fp), 0);
        print_message ("#   mail: %s\n", strstr (text, "Next time"));
        assert_non_null (strstr (text, printed));
        if (!strcmp (forms[f].sched, "slurm")) {
            const char *mem = strstr (printed, "--mem=");
            char want[64];
            const char *d;

            /* the diagnosis names the same --mem */
            assert_non_null (mem);
            snprintf (want, sizeof (want), "%.*s", (int)strcspn (mem, " "),
                      mem);
            d = json_string_value (
                json_object_get (json_array_get (findings, 0), "text"));
            print_message ("#   diagnosis: %s\n", d);
            assert_non_null (strstr (text, want));
            assert_non_null (d);
            assert_non_null (strstr (d, want));
        }
        json_decref (findings);
        free (text);
        free (out);
    }
    /* and the site's options are not the defaults' */
    json_decref (recs);
    assert_non_null (recs = tr_recommend_groups (r->ptr, r->n, &def, NULL));
    assert_false (
        json_number_value (json_object_get (
            json_object_get (json_array_get (json_object_get (recs, "groups"),
                                             0),
                             "mem"),
            "recommend"))
        == json_number_value (
            json_object_get (json_object_get (g, "mem"), "recommend")));
    json_decref (recs);
    tr_conf_destroy (conf);
    free (r);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_nextflow_subworkflows),
        cmocka_unit_test (test_snakemake7),
        cmocka_unit_test (test_pbs),
        cmocka_unit_test (test_pbs_lsf_output),
        cmocka_unit_test (test_views_agree),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
