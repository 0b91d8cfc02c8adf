/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for tools.c: tool names as users name them, from fixture
 * sets of a process's program (its executable's base name), comm and
 * arguments, one or more per rule, and hostile arguments.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/util/tools.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct fixture {
    const char *program, *comm;
    const char *const *argv; /* NULL-terminated; NULL: unknown */
    const char *want;
};

static size_t argc_of (const char *const *argv)
{
    size_t n = 0;

    while (argv && argv[n])
        n++;
    return n;
}

static void check (const struct tr_tools_site *site,
                   const struct fixture *f,
                   size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char out[TR_TOOLS_NAME_MAX + 1];
        tr_tools_name (site, f[i].program, f[i].comm, f[i].argv,
                       argc_of (f[i].argv), out, sizeof (out));
        if (strcmp (out, f[i].want))
            fail_msg ("case %zu (%s): \"%s\", want \"%s\"", i, f[i].program,
                      out, f[i].want);
    }
}

static void test_subcommands (void **state)
{
    const struct fixture f[] = {
        { "samtools", "samtools",
          ARGS ("samtools", "sort", "-@", "4", "-o", "out.bam", "in.bam"),
          "samtools sort" },
        { "samtools", "samtools", ARGS ("samtools", "index", "out.bam"),
          "samtools index" },
        { "samtools", "samtools", ARGS ("/opt/bin/samtools", "flagstat", "x"),
          "samtools flagstat" },
        { "samtools", "samtools", ARGS ("samtools", "--version"), "samtools" },
        { "samtools", "samtools", ARGS ("samtools"), "samtools" },
        /* a path or a file name is not a subcommand */
        { "samtools", "samtools", ARGS ("samtools", "/data/a.bam"),
          "samtools" },
        { "bcftools", "bcftools", ARGS ("bcftools", "mpileup", "-f", "r.fa"),
          "bcftools mpileup" },
        { "bwa", "bwa", ARGS ("bwa", "mem", "-t", "8", "ref.fa", "r1.fq"),
          "bwa mem" },
        { "bedtools", "bedtools", ARGS ("bedtools", "intersect", "-a", "x"),
          "bedtools intersect" },
        { "git", "git", ARGS ("git", "-C", "/src", "--no-pager", "log"),
          "git log" },
        { "git", "git", ARGS ("git", "status"), "git status" },
        /* without arguments (an exit seen only as an event) */
        { "samtools", "samtools", NULL, "samtools" },
        /* no rule: the program, whatever its arguments */
        { "true", "true", ARGS ("true", "sort"), "true" },
        { "burn", "burn", ARGS ("burn", "cpu=3"), "burn" },
        { "dd", "dd", ARGS ("dd", "if=/dev/zero", "of=x"), "dd" },
        { "STAR", "STAR", ARGS ("STAR", "--runMode", "alignReads"), "STAR" },
    };

    (void)state;
    check (NULL, f, sizeof (f) / sizeof (f[0]));
}

static void test_java (void **state)
{
    const struct fixture f[] = {
        /* the gatk wrapper's java */
        { "java", "java",
          ARGS ("java", "-Dsamjdk.compression_level=2", "-Xmx4g", "-jar",
                "/gatk/gatk-package-4.5.0.0-local.jar", "HaplotypeCaller", "-R",
                "ref.fa"),
          "gatk HaplotypeCaller" },
        /* GATK's main class on a class path */
        { "java", "java",
          ARGS ("java", "-Xmx8g", "-cp", "/opt/gatk/gatk.jar:/opt/lib/x.jar",
                "org.broadinstitute.hellbender.Main", "MarkDuplicatesSpark",
                "-I", "in.bam"),
          "gatk MarkDuplicatesSpark" },
        { "java", "java",
          ARGS ("java", "-Xmx2g", "-jar", "/opt/picard/picard.jar",
                "MarkDuplicates", "I=in.bam", "O=out.bam"),
          "picard MarkDuplicates" },
        { "java", "java",
          ARGS ("java", "-classpath", "/x/picard-3.1.jar",
                "picard.cmdline.PicardCommandLine", "SortSam"),
          "picard SortSam" },
        { "java", "java",
          ARGS ("java", "-XX:+UseG1GC", "-cp", "/nf/nextflow-23.10.jar",
                "nextflow.cli.Launcher", "run", "main.nf"),
          "nextflow run" },
        /* a plain jar and a plain main class */
        { "java", "java",
          ARGS ("java", "-jar", "/opt/snpEff/snpEff.jar", "eff", "GRCh38"),
          "snpEff.jar" },
        { "java", "java",
          ARGS ("java", "-cp", "app.jar", "com.example.Tool", "--in", "x"),
          "com.example.Tool" },
        { "java", "java", ARGS ("java", "-version"), "java" },
        { "java", "java", ARGS ("java", "@argfile"), "java" },
    };

    (void)state;
    check (NULL, f, sizeof (f) / sizeof (f[0]));
}

static void test_interpreters (void **state)
{
    const struct fixture f[] = {
        { "python3.11", "python3",
          ARGS ("python3", "-u", "/home/u/bin/align.py", "--threads", "4"),
          "align.py" },
        /* "#!/usr/bin/env python3" run as ./script.py: env, then python */
        { "env", "script.py",
          ARGS ("/usr/bin/env", "python3", "./script.py", "in.txt"),
          "script.py" },
        { "python3.11", "python3", ARGS ("python3", "./script.py", "in.txt"),
          "script.py" },
        { "env", "env",
          ARGS ("env", "-i", "PATH=/bin", "FOO=bar", "python3", "-W", "ignore",
                "job.py"),
          "job.py" },
        { "env", "env", ARGS ("env", "-S", "python3 -u", "x.py"), "env" },
        /* the gatk launcher is a python script: its subcommand */
        { "python3.11", "python3",
          ARGS ("python3", "/opt/gatk/gatk", "HaplotypeCaller", "-R", "r.fa"),
          "gatk HaplotypeCaller" },
        { "python3.11", "gatk",
          ARGS ("/usr/bin/python3", "/opt/gatk/gatk", "--java-options",
                "-Xmx4g", "HaplotypeCaller"),
          "gatk HaplotypeCaller" },
        { "python3.11", "python3", ARGS ("python3", "-m", "multiqc", "."),
          "multiqc" },
        { "python3.11", "python3", ARGS ("python3", "-mpip", "install", "x"),
          "pip install" },
        { "python3.11", "python3", ARGS ("python3", "-c", "print(1)"),
          "python3.11" },
        { "python3.11", "python3", ARGS ("python3"), "python3.11" },
        /* a pyenv shim (bash running the shim "python3"): the script */
        { "bash", "python3",
          ARGS ("bash", "/home/u/.pyenv/shims/python3", "train.py"),
          "train.py" },
        { "Rscript", "Rscript", ARGS ("Rscript", "--vanilla", "de.R", "x"),
          "de.R" },
        /* Rscript execs R so */
        { "R", "R",
          ARGS ("/usr/lib/R/bin/exec/R", "--no-echo", "--no-restore",
                "--file=/home/u/de.R", "--args", "x"),
          "de.R" },
        { "R", "R", ARGS ("R", "--vanilla"), "R" },
        { "Rscript", "Rscript", ARGS ("Rscript", "-e", "1+1"), "Rscript" },
        { "perl", "perl", ARGS ("perl", "-w", "-I", "/lib", "fix.pl", "a"),
          "fix.pl" },
        { "perl", "perl", ARGS ("perl", "-ne", "print", "x"), "perl" },
        { "bash", "bash", ARGS ("/bin/bash", "/home/u/run_all.sh"),
          "run_all.sh" },
        { "bash", "bash", ARGS ("bash", "-c", "samtools sort x"), "bash" },
        { "bash", "bash", ARGS ("bash", "-lc", "x"), "bash" },
        { "bash", "bash", ARGS ("bash", "-x", "--", "go.sh"), "go.sh" },
        /* a sh script named samtools, called as "samtools sort" */
        { "dash", "samtools", ARGS ("/bin/sh", "/tmp/bin/samtools", "sort"),
          "samtools sort" },
        /* without arguments: a "#!" script's comm is the script */
        { "python3.11", "myscript.py", NULL, "myscript.py" },
        { "python3.11", "python3", NULL, "python3.11" },
        { "bash", "sh", NULL, "bash" },
        { "dash", "samtools", NULL, "samtools" },
    };

    (void)state;
    check (NULL, f, sizeof (f) / sizeof (f[0]));
}

/* The job's arguments are its own data: words with control characters,
 * of 10 kB, or that are paths or options name nothing but the program;
 * the name stays within its bounds; a chain of interpreters ends.
 */
static void test_hostile (void **state)
{
    char *big = malloc (10241), out[64], small[8];
    const char *argv[4];
    const struct fixture f[] = {
        { "samtools", "samtools", ARGS ("samtools", "so\x1b[2Jrt"),
          "samtools" },
        { "samtools", "samtools", ARGS ("samtools", "sort\n"), "samtools" },
        { "samtools", "samtools", ARGS ("samtools", ""), "samtools" },
        { "python3.11", "python3", ARGS ("python3", "a\tb.py"), "python3.11" },
        { "python3.11", "python3", ARGS ("python3", "../x/.hidden"),
          "python3.11" },
        { "python3.11", "python3", ARGS ("python3", "x$(id).py"),
          "python3.11" },
        { "java", "java", ARGS ("java", "-jar"), "java" },
        { "java", "java", ARGS ("java", "-cp"), "java" },
        { "env", "env", ARGS ("env", "-u"), "env" },
        { "python3.11", "python3", ARGS ("python3", "-m"), "python3.11" },
        /* an interpreter running "itself" over and over ends */
        { "bash", "bash",
          ARGS ("bash", "bash", "bash", "bash", "bash", "bash", "bash", "bash",
                "bash", "x.sh"),
          "bash" },
        { "", "", ARGS ("x"), "?" },
    };

    (void)state;
    check (NULL, f, sizeof (f) / sizeof (f[0]));
    assert_non_null (big);
    memset (big, 'a', 10240);
    big[10240] = '\0';
    argv[0] = "samtools";
    argv[1] = big;
    tr_tools_name (NULL, "samtools", "samtools", argv, 2, out, sizeof (out));
    assert_string_equal (out, "samtools");
    argv[0] = "python3";
    tr_tools_name (NULL, "python3.11", "python3", argv, 2, out, sizeof (out));
    assert_string_equal (out, "python3.11");
    /* 40 bytes is a word, 41 is not */
    big[40] = '\0';
    argv[0] = "samtools";
    tr_tools_name (NULL, "samtools", "samtools", argv, 2, out, sizeof (out));
    assert_int_equal (strlen (out), strlen ("samtools ") + 40);
    big[40] = 'a';
    big[41] = '\0';
    tr_tools_name (NULL, "samtools", "samtools", argv, 2, out, sizeof (out));
    assert_string_equal (out, "samtools");
    /* a name that does not fit is cut, never overflows */
    argv[1] = "sort";
    tr_tools_name (NULL, "samtools", "samtools", argv, 2, small,
                   sizeof (small));
    assert_string_equal (small, "samtool");
    free (big);
}

static void test_site_rules (void **state)
{
    static const char *const sub[] = { "mytool", "kraken*", NULL };
    static const char *const interp[] = { "myscheme", NULL };
    const struct tr_tools_site site = { .subcommands = sub,
                                        .interpreters = interp };
    const struct fixture f[] = {
        { "mytool", "mytool", ARGS ("mytool", "build", "x"), "mytool build" },
        { "kraken-tools", "kraken-tools", ARGS ("kraken-tools", "classify"),
          "kraken-tools classify" },
        { "myscheme", "myscheme", ARGS ("myscheme", "run.scm"), "run.scm" },
        { "myscheme", "myscheme", ARGS ("myscheme", "-e", "(x)"), "myscheme" },
        /* the built-in rules still apply */
        { "samtools", "samtools", ARGS ("samtools", "view"), "samtools view" },
        /* a script run by a site interpreter may be a site tool */
        { "myscheme", "myscheme", ARGS ("myscheme", "/x/mytool", "go"),
          "mytool go" },
    };

    (void)state;
    check (&site, f, sizeof (f) / sizeof (f[0]));
    /* without the site's rules these are plain programs */
    assert_false (tr_tools_ruled (NULL, "mytool"));
    assert_true (tr_tools_ruled (&site, "mytool"));
    assert_true (tr_tools_ruled (NULL, "python3.12"));
    assert_false (tr_tools_ruled (NULL, "true"));
}

static void test_pattern_ok (void **state)
{
    (void)state;
    assert_true (tr_tools_pattern_ok ("mytool"));
    assert_true (tr_tools_pattern_ok ("my-tool_2.1+x"));
    assert_true (tr_tools_pattern_ok ("python[23]*"));
    assert_false (tr_tools_pattern_ok (""));
    assert_false (tr_tools_pattern_ok (NULL));
    assert_false (tr_tools_pattern_ok ("a b"));
    assert_false (tr_tools_pattern_ok ("/usr/bin/x"));
    assert_false (tr_tools_pattern_ok ("x\n"));
    assert_false (tr_tools_pattern_ok ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                       "aaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

/* The scheduler's own processes, as their records name them (Debian's
 * Slurm runs slurmstepd as slurmstepd-wlm); the user's programs and
 * Slurm's name for the batch script are not among them.
 */
static void test_scheduler_own (void **state)
{
    (void)state;
    assert_true (tr_tools_scheduler_own ("slurmstepd"));
    assert_true (tr_tools_scheduler_own ("slurmstepd-wlm"));
    assert_true (tr_tools_scheduler_own ("pbs_mom"));
    assert_true (tr_tools_scheduler_own ("pbs_attach"));
    assert_true (tr_tools_scheduler_own ("pbs_demux"));
    assert_true (tr_tools_scheduler_own ("tracer-prolog"));
    assert_false (tr_tools_scheduler_own ("slurm_script"));
    assert_false (tr_tools_scheduler_own ("srun"));
    assert_false (tr_tools_scheduler_own ("my-slurmstepd"));
    assert_false (tr_tools_scheduler_own ("train.py"));
    assert_false (tr_tools_scheduler_own (""));
    assert_false (tr_tools_scheduler_own (NULL));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_subcommands),
        cmocka_unit_test (test_java),
        cmocka_unit_test (test_interpreters),
        cmocka_unit_test (test_hostile),
        cmocka_unit_test (test_site_rules),
        cmocka_unit_test (test_pattern_ok),
        cmocka_unit_test (test_scheduler_own),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
