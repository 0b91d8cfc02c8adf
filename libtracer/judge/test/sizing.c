/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for sizing.c: the engine's options from the site
 * configuration and the built-in defaults (the same as the schema's),
 * the one-run advice under a site's options, the request options of
 * Slurm, PBS and LSF, and one --mem with one reason after an OOM kill.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)
#define HOUR 3600.0

static void assert_opts_equal (const struct tr_recommend_opts *a,
                               const struct tr_recommend_opts *b)
{
    assert_true (a->mem_quantile == b->mem_quantile);
    assert_true (a->mem_headroom == b->mem_headroom);
    assert_true (a->time_quantile == b->time_quantile);
    assert_true (a->time_margin == b->time_margin);
    assert_true (a->cpu_quantile == b->cpu_quantile);
    assert_true (a->cpu_pressure_max == b->cpu_pressure_max);
    assert_int_equal (a->min_runs, b->min_runs);
    assert_int_equal (a->last_n, b->last_n);
    assert_true (a->mem_min_bytes == b->mem_min_bytes);
    assert_true (a->time_min_s == b->time_min_s);
    assert_null (a->cost);
    assert_null (b->cost);
}

/* One place for the defaults: without a configuration the options are
 * those of a configuration that sets nothing (the schema's defaults,
 * tracer.yaml(5)), and the engine's own defaults are the same.
 */
static void test_defaults (void **state)
{
    struct tr_recommend_opts none, site, engine;
    tr_conf_t *conf = tr_conf_create ();

    (void)state;
    assert_non_null (conf);
    tr_sizing_opts (&none, NULL);
    tr_sizing_opts (&site, conf);
    tr_recommend_opts_default (&engine);
    assert_opts_equal (&none, &site);
    assert_opts_equal (&none, &engine);
    assert_true (none.cpu_pressure_max == conf->diagnosis.cpu_pressure_starved);
    tr_conf_destroy (conf);
}

/* Every sizing key of the configuration reaches the options. */
static void test_from_conf (void **state)
{
    struct tr_recommend_opts o;
    tr_conf_t *conf = tr_conf_create ();

    (void)state;
    assert_non_null (conf);
    conf->recommend.mem_quantile = 0.5;
    conf->recommend.mem_headroom = 1.5;
    conf->recommend.time_quantile = 0.6;
    conf->recommend.time_margin = 2;
    conf->recommend.cpu_quantile = 0.7;
    conf->recommend.min_runs = 7;
    conf->recommend.last_runs = 4;
    conf->recommend.mem_min = 8 * GIB;
    conf->recommend.time_min = 2 * HOUR;
    conf->diagnosis.cpu_pressure_starved = 0.3;
    tr_sizing_opts (&o, conf);
    assert_true (o.mem_quantile == 0.5);
    assert_true (o.mem_headroom == 1.5);
    assert_true (o.time_quantile == 0.6);
    assert_true (o.time_margin == 2);
    assert_true (o.cpu_quantile == 0.7);
    assert_true (o.cpu_pressure_max == 0.3);
    assert_int_equal (o.min_runs, 7);
    assert_int_equal (o.last_n, 4);
    assert_true (o.mem_min_bytes == 8 * GIB);
    assert_true (o.time_min_s == 2 * HOUR);
    assert_null (o.cost);
    tr_conf_destroy (conf);
}

/* A step killed for memory: every rule that names a size names one. */
static void oom_row (tr_stepsum_t *r)
{
    tr_stepsum_init (r);
    r->state = "oom";
    r->group = "align";
    r->scheduler = "slurm";
    r->complete = 1;
    r->exact = 1;
    r->nodes = 1;
    r->tasks = 1;
    r->elapsed_s = HOUR;
    r->start_ms = 1.7e12;
    r->end_ms = 1.7e12 + HOUR * 1000;
    r->time_limit_s = 2 * HOUR;
    r->req_cores = 2;
    r->req_cpus_per_task = 2;
    r->cpu_s = 1.5 * HOUR;
    r->req_mem_bytes = 4 * GIB;
    r->mem_limit_bytes = 4 * GIB;
    r->mem_peak_bytes = 4 * GIB;
    r->oom_kills = 1;
}

static double recommended (json_t *g, const char *res)
{
    json_t *v = json_object_get (json_object_get (g, res), "recommend");

    return json_is_number (v) ? json_number_value (v) : NAN;
}

static double suggested_mem (json_t *findings)
{
    size_t i;
    json_t *f;

    json_array_foreach (findings, i, f)
    {
        json_t *v = json_object_get (json_object_get (f, "evidence"), "suggeste"
                                                                      "dmem");

        if (json_is_number (v))
            return json_number_value (v);
    }
    return NAN;
}

/* Under a site whose sizing keys differ from the defaults, the one-run
 * advice (the listing's, --json's) is the site's, and the diagnosis
 * given it names the same --mem as the advice (the job view's "Next
 * time" over this one run).
 */
static void test_one_run_site (void **state)
{
    struct tr_recommend_opts site;
    tr_conf_t *conf = tr_conf_create ();
    tr_stepsum_t row;
    json_t *adv_site, *adv_none, *findings;
    double m;

    (void)state;
    assert_non_null (conf);
    conf->recommend.mem_headroom = 3;
    conf->recommend.mem_min = 48 * GIB;
    tr_sizing_opts (&site, conf);
    oom_row (&row);
    assert_non_null (adv_site = tr_sizing_one_run (&row, &site));
    assert_non_null (adv_none = tr_sizing_one_run (&row, NULL));
    assert_int_equal (json_integer_value (
                          json_object_get (json_object_get (adv_site, "runs"),
                                           "total")),
                      1);
    m = recommended (adv_site, "mem");
    assert_true (m >= 48 * GIB);
    assert_true (m != recommended (adv_none, "mem"));

    findings = tr_diagnose_advised (&row, &conf->diagnosis, adv_site);
    assert_non_null (findings);
    assert_true (suggested_mem (findings) == m);
    json_decref (findings);
    /* no advice given: the built-in options */
    findings = tr_diagnose (&row, &conf->diagnosis);
    assert_non_null (findings);
    assert_true (suggested_mem (findings) == recommended (adv_none, "mem"));
    json_decref (findings);

    /* a row without a group is "this step"; a running one is left out */
    row.group = "";
    json_decref (adv_none);
    assert_non_null (adv_none = tr_sizing_one_run (&row, NULL));
    assert_string_equal (json_string_value (json_object_get (adv_none, "grou"
                                                                       "p")),
                         "this step");
    row.end_ms = NAN;
    errno = 0;
    assert_null (tr_sizing_one_run (&row, NULL));
    assert_int_equal (errno, ENOENT);
    errno = 0;
    assert_null (tr_sizing_one_run (NULL, NULL));
    assert_int_equal (errno, EINVAL);
    json_decref (adv_none);
    json_decref (adv_site);
    tr_conf_destroy (conf);
}

/* The note of g that starts with prefix, or NULL; fails when two do. */
static const char *note_with (json_t *g, const char *prefix)
{
    const char *found = NULL;
    size_t i;
    json_t *n;

    json_array_foreach (json_object_get (g, "notes"), i, n)
    {
        const char *t = json_string_value (n);

        if (t && !strncmp (t, prefix, strlen (prefix))) {
            assert_null (found);
            found = t;
        }
    }
    return found;
}

/* The text of the oom finding of findings, or NULL. */
static const char *oom_text (json_t *findings)
{
    size_t i;
    json_t *f;

    json_array_foreach (findings, i, f) if (
        !strcmp (json_string_value (json_object_get (f, "code")),
                 "oom")) return json_string_value (json_object_get (f, "text"));
    return NULL;
}

/* After an OOM kill, one number with one reason: the engine's --mem
 * (mem.recommend, written as mem.text), the one note that names a --mem
 * ("after OOM: --mem=TEXT: REASON", REASON being mem.reason) and the
 * diagnosis ("--mem=TEXT (a one-run estimate): REASON") agree, and the
 * reason says that the size at the kill is a lower bound.  The size is
 * sane for the evidence: a step still growing slowly at the kill is
 * given its projection, not twice the limit (1600M growing 2 MB/s with
 * 40 s left: 2G, where doubling said 3584M); one growing fast is given
 * at most 16x the limit, also after rounding (200M: 3G, not 3584M);
 * with no growth rate it doubles per OOM in a row; a site's headroom or
 * minimum that asks for more wins, and the reason says so.
 */
static void test_oom_one_number (void **state)
{
    static const struct {
        const char *name;
        double limit, rate, at_s, time_limit_s, headroom, mem_min;
        int streak;
        double want;
        const char *why; /* the start of mem.reason */
    } cases[] = {
        { "slow growth: the projection", 1600 * MIB, 2e6, 20, 60, NAN, NAN, 1,
          2 * GIB,
          "the 1600M it was killed at, a lower bound of its need, plus its "
          "rise at the kill (2.0 MB/s over the 40 s it had left of 60 s, "
          "time limit), +20%, rounded up" },
        { "fast growth: at most 16x", 200 * MIB, 128e6, 2, 60, NAN, NAN, 1,
          3 * GIB,
          "at most 16x the 200M it was killed at, a lower bound of its need; "
          "its rise at the kill (128.0 MB/s over the 58 s it had left of 60 "
          "s, time limit) would need more" },
        { "no growth rate: doubled", 1600 * MIB, NAN, 20, 60, NAN, NAN, 1,
          3584 * MIB,
          "2x the 1600M it was killed at, a lower bound of its need (no "
          "growth rate known; 1 OOM in a row), rounded up" },
        { "flat at the kill: doubled", 2 * GIB, 0, 20, 60, NAN, NAN, 1, 4 * GIB,
          "2x the 2G it was killed at, a lower bound of its need (its memory "
          "no longer rose at the kill; 1 OOM in a row)" },
        { "second OOM in a row: at least 2x", 2 * GIB, 1e6, 20, 60, NAN, NAN, 2,
          4 * GIB,
          "2x the 2G it was killed at, a lower bound of its need, for 2 OOMs "
          "in a row (its rise at the kill (1.0 MB/s over the 40 s it had "
          "left of 60 s, time limit) projects less)" },
        { "the site's headroom asks more", 2 * GIB, NAN, 20, 60, 3, NAN, 1,
          8 * GIB,
          "the 2G it was killed at, a lower bound of its need, +300%" },
        { "the site's minimum asks more", 2 * GIB, NAN, 20, 60, NAN, 24 * GIB,
          1, 24 * GIB,
          "the site's minimum, above the 2G it was killed at, a lower bound "
          "of its need" },
    };
    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct tr_recommend_opts o;
        tr_stepsum_t rows[4];
        const tr_stepsum_t *p[4];
        json_t *recs, *g, *findings;
        const char *text, *why, *n, *d;
        char want_text[32], line[1024];

        print_message ("# %s\n", cases[c].name);
        tr_sizing_opts (&o, NULL);
        if (!isnan (cases[c].headroom))
            o.mem_headroom = cases[c].headroom;
        if (!isnan (cases[c].mem_min))
            o.mem_min_bytes = cases[c].mem_min;
        for (int i = 0; i < cases[c].streak; i++) {
            oom_row (&rows[i]);
            rows[i].req_mem_bytes = rows[i].mem_limit_bytes =
                rows[i].mem_peak_bytes =
                    cases[c].limit / (1u << (cases[c].streak - 1 - i));
            rows[i].elapsed_s = cases[c].at_s;
            rows[i].time_limit_s = cases[c].time_limit_s;
            rows[i].mem_rise_Bps = cases[c].rate;
            rows[i].end_ms = rows[i].start_ms + 1000.0 * (i + 1);
            p[i] = &rows[i];
        }
        recs = tr_recommend_groups (p, (size_t)cases[c].streak, &o, NULL);
        assert_non_null (recs);
        g = json_array_get (json_object_get (recs, "groups"), 0);
        assert_non_null (g);
        /* the number */
        assert_true (recommended (g, "mem") == cases[c].want);
        assert_int_equal (tr_recommend_mem_text (want_text, sizeof (want_text),
                                                 cases[c].want),
                          0);
        text = json_string_value (
            json_object_get (json_object_get (g, "mem"), "text"));
        assert_string_equal (text, want_text);
        assert_true (recommended (g, "mem") > cases[c].limit);
        /* the reason, in mem.reason and in the one note */
        why = json_string_value (
            json_object_get (json_object_get (g, "mem"), "reason"));
        assert_non_null (why);
        assert_string_equal (why, cases[c].why);
        assert_non_null (strstr (why, "a lower bound of its need"));
        snprintf (line, sizeof (line), "after OOM: --mem=%s: %s", text, why);
        assert_non_null (n = note_with (g, "after OOM"));
        assert_string_equal (n, line);
        assert_null (note_with (g, "1 run OOM-killed"));
        /* the diagnosis of the newest run, given this advice */
        findings = tr_diagnose_advised (&rows[cases[c].streak - 1], NULL, g);
        assert_non_null (findings);
        assert_true (suggested_mem (findings) == cases[c].want);
        snprintf (line, sizeof (line), "--mem=%s (a one-run estimate): %s",
                  text, why);
        assert_non_null (d = oom_text (findings));
        if (cases[c].streak == 1)
            assert_non_null (strstr (d, line));
        json_decref (findings);
        json_decref (recs);
    }
}

static const char *joined (const struct tr_sizing_args *a)
{
    static char buf[512];

    assert_int_equal (tr_sizing_join (buf, sizeof (buf), a), 0);
    return buf;
}

static void test_args (void **state)
{
    struct tr_sizing_args a;
    char small[8];

    (void)state;
    assert_int_equal (tr_sizing_form (NULL), TR_SIZING_SLURM);
    assert_int_equal (tr_sizing_form ("slurm"), TR_SIZING_SLURM);
    assert_int_equal (tr_sizing_form ("pbs"), TR_SIZING_PBS);
    assert_int_equal (tr_sizing_form ("torque"), TR_SIZING_PBS);
    assert_int_equal (tr_sizing_form ("lsf"), TR_SIZING_LSF);

    assert_int_equal (tr_sizing_args_slurm (&a, 2, 1.5 * GIB, 4500), 0);
    assert_int_equal (a.n, 3);
    assert_string_equal (joined (&a), "--cpus-per-task=2 --mem=1536M "
                                      "--time=01:15:00");
    assert_int_equal (tr_sizing_args_pbs (&a, 2, 2 * GIB, 4500), 0);
    assert_string_equal (joined (&a), "-l select=1:ncpus=2:mem=2gb -l "
                                      "walltime=01:15:00");
    assert_int_equal (tr_sizing_args_lsf (&a, 2, 1.5 * GIB, 4530), 0);
    assert_string_equal (joined (&a), "-n 2 -R \"rusage[mem=1536MB]\" -W 1:16");
    /* unknown values are left out */
    assert_int_equal (tr_sizing_args_slurm (&a, NAN, GIB, NAN), 0);
    assert_string_equal (joined (&a), "--mem=1G");
    assert_int_equal (tr_sizing_args_pbs (&a, NAN, 512 * MIB, NAN), 0);
    assert_string_equal (joined (&a), "-l select=1:mem=512mb");
    assert_int_equal (tr_sizing_args_pbs (&a, NAN, NAN, 60), 0);
    assert_string_equal (joined (&a), "-l walltime=00:01:00");
    assert_int_equal (tr_sizing_args_lsf (&a, NAN, NAN, NAN), 0);
    assert_int_equal (a.n, 0);
    assert_string_equal (joined (&a), "");
    /* the dispatch by scheduler name */
    assert_int_equal (tr_sizing_args (&a, "torque", 1, GIB, 60), 0);
    assert_string_equal (joined (&a), "-l select=1:ncpus=1:mem=1gb -l "
                                      "walltime=00:01:00");
    assert_int_equal (tr_sizing_args (&a, NULL, 1, GIB, 60), 0);
    assert_string_equal (joined (&a), "--cpus-per-task=1 --mem=1G "
                                      "--time=00:01:00");
    /* errors */
    assert_int_equal (tr_sizing_args (&a, "lsf", 1, GIB, 60), 0);
    errno = 0;
    assert_int_equal (tr_sizing_join (small, sizeof (small), &a), -1);
    assert_int_equal (errno, ERANGE);
    assert_string_equal (small, "");
    errno = 0;
    assert_int_equal (tr_sizing_args_slurm (NULL, 1, 1, 1), -1);
    assert_int_equal (errno, EINVAL);
}

/* From an engine's group: the "recommend" values, in each form. */
static void test_args_advice (void **state)
{
    tr_stepsum_t row;
    struct tr_sizing_args a, b;
    json_t *g;

    (void)state;
    oom_row (&row);
    assert_non_null (g = tr_sizing_one_run (&row, NULL));
    for (int f = 0; f < 3; f++) {
        const char *s = f == 0 ? "slurm" : f == 1 ? "pbs" : "lsf";

        assert_int_equal (tr_sizing_args_advice (&a, s, g), 0);
        assert_int_equal (tr_sizing_args (&b, s, recommended (g, "cpus"),
                                          recommended (g, "mem"),
                                          recommended (g, "time")),
                          0);
        assert_true (a.n > 0);
        assert_int_equal (a.n, b.n);
        for (size_t i = 0; i < a.n; i++)
            assert_string_equal (a.arg[i], b.arg[i]);
    }
    /* Slurm's options are the engine's own texts */
    assert_int_equal (tr_sizing_args_advice (&a, NULL, g), 0);
    for (size_t i = 0; i < a.n; i++)
        if (!strncmp (a.arg[i], "--mem=", 6))
            assert_string_equal (a.arg[i] + 6,
                                 json_string_value (json_object_get (
                                     json_object_get (g, "mem"), "text")));
    assert_int_equal (tr_sizing_args_advice (&a, "slurm", NULL), 0);
    assert_int_equal (a.n, 0);
    json_decref (g);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_defaults),
        cmocka_unit_test (test_from_conf),
        cmocka_unit_test (test_one_run_site),
        cmocka_unit_test (test_args),
        cmocka_unit_test (test_args_advice),
        cmocka_unit_test (test_oom_one_number),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
