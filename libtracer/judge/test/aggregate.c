/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for aggregate.c: waste and cost (core-, GiB- and GPU-hours
 * worked out by hand per row, every key, tools given their CPU share
 * with the rest to "(other)", rows whose allocation is unknown,
 * per-partition prices, the sort order, the table and parsable text)
 * and group summaries (array tasks by state, elapsed spread and its
 * histogram, the slowest and hungriest task, the printed text), and a
 * sweep of failed allocations.  Rows are built with tr_stepsum_init and
 * literal strings.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/record/stepsum.h"

#define GiB 1073741824.0
#define EPS 1e-9

/* A row of job job_id in partition "cpu" that ran cores cores for
 * elapsed seconds and used cpu_s of CPU time; the rest unknown.
 */
static tr_stepsum_t mkrow (const char *job_id,
                           double cores,
                           double elapsed,
                           double cpu_s)
{
    tr_stepsum_t r;

    tr_stepsum_init (&r);
    r.cluster = "c1";
    r.job_id = job_id;
    r.step_id = "0";
    r.user = "alice";
    r.account = "lab";
    r.partition = "cpu";
    r.group = "align/0";
    r.state = "completed";
    r.nodes = 1;
    r.req_cores = cores;
    r.elapsed_s = elapsed;
    r.cpu_s = cpu_s;
    return r;
}

static double member (json_t *o, const char *obj, const char *k)
{
    json_t *v = json_object_get (json_object_get (o, obj), k);

    if (!json_is_number (v))
        fail_msg ("%s.%s missing", obj, k);
    return json_number_value (v);
}

static json_int_t count (json_t *o, const char *k)
{
    json_t *v = json_object_get (o, k);

    if (!json_is_integer (v))
        fail_msg ("%s missing", k);
    return json_integer_value (v);
}

static void assert_near (double got, double want)
{
    if (fabs (got - want) > EPS * (1 + fabs (want)))
        fail_msg ("got %.12g, want %.12g", got, want);
}

/* o[k] as a string ("" when absent). */
static const char *sval (json_t *o, const char *k)
{
    const char *s = json_string_value (json_object_get (o, k));

    return s ? s : "";
}

/* The key of the i-th waste row of w. */
static const char *key_at (json_t *w, size_t i)
{
    return sval (json_array_get (json_object_get (w, "rows"), i), "key");
}

/* The waste entry of key in w (fails when absent). */
static json_t *entry (json_t *w, const char *key)
{
    size_t i;
    json_t *e;

    json_array_foreach (json_object_get (w, "rows"), i, e)
    {
        if (strcmp (sval (e, "key"), key) == 0)
            return e;
    }
    fail_msg ("no waste row '%s'", key);
    return NULL;
}

/* What out printed at most width columns wide (0: no limit), as a new
 * string.
 */
static char *capture_waste_width (json_t *w, bool parsable, int width)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);

    assert_non_null (out);
    assert_int_equal (tr_waste_print (out, w, parsable, width), 0);
    fclose (out);
    return text;
}

static char *capture_waste (json_t *w, bool parsable)
{
    return capture_waste_width (w, parsable, 0);
}

static char *capture_summary (json_t *s)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);

    assert_non_null (out);
    assert_int_equal (tr_group_summary_print (out, s), 0);
    fclose (out);
    return text;
}

static void assert_text (const char *got, const char *want)
{
    if (strcmp (got, want) != 0)
        fail_msg ("text differs; got:\n%s\nwant:\n%s", got, want);
}

/* --- Waste arithmetic, one row at a time ------------------------------ */

/* clang-format off */
static const struct {
    const char *name;
    double cores, elapsed, cpu_s;
    double mem_req, nodes, mem_peak_sum;
    double gpus, util;
    double core[3], mem[3], gpu[3];
    int mem_unknown, gpu_unknown;
} arith[] = {
    /* 4 cores for an hour, 2 h of CPU: half wasted; 8 GiB for an hour,
     * peak 2 GiB.
     */
    { "half busy", 4, 3600, 7200, 8 * GiB, 1, 2 * GiB, NAN, NAN,
      { 4, 2, 2 }, { 8, 2, 6 }, { 0, 0, 0 }, 0, 0 },
    /* two nodes, 16 cores in all, half an hour, 4 h of CPU; 4 GiB per
     * node (8 GiB for 0.5 h) against peaks adding up to 6 GiB.
     */
    { "two nodes", 16, 1800, 14400, 4 * GiB, 2, 6 * GiB, 0, NAN,
      { 8, 4, 4 }, { 4, 3, 1 }, { 0, 0, 0 }, 0, 0 },
    /* more CPU than granted: no waste, and no credit either */
    { "over", 1, 7200, 9000, 1 * GiB, 1, 3 * GiB, NAN, NAN,
      { 2, 2.5, 0 }, { 2, 6, 0 }, { 0, 0, 0 }, 0, 0 },
    /* 2 GPUs at 25% for a quarter hour; no memory request */
    { "gpus", 8, 900, 3600, NAN, 1, 1 * GiB, 2, 25,
      { 2, 1, 1 }, { 0, 0, 0 }, { 0.5, 0.125, 0.375 }, 1, 0 },
    /* GPUs whose utilisation is unknown are counted, not summed */
    { "gpu util unknown", 2, 3600, 3600, 2 * GiB, 1, NAN, 1, NAN,
      { 2, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 1, 1 },
    /* a request of 0 cores is no allocation either */
    { "zero cores", 0, 3600, 10, NAN, 1, NAN, NAN, NAN,
      { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0 },
};
/* clang-format on */

static void test_waste_arithmetic (void **state)
{
    static const char *const part[3] = { "allocated", "used", "wasted" };

    (void)state;
    for (size_t i = 0; i < sizeof (arith) / sizeof (arith[0]); i++) {
        tr_stepsum_t r = mkrow ("1", arith[i].cores, arith[i].elapsed,
                                arith[i].cpu_s);
        const tr_stepsum_t *rows[] = { &r };
        json_t *w, *t;

        print_message ("case %s\n", arith[i].name);
        r.req_mem_bytes = arith[i].mem_req;
        r.nodes = arith[i].nodes;
        r.mem_peak_sum_bytes = arith[i].mem_peak_sum;
        r.gpus_used = arith[i].gpus;
        r.gpu_util_mean_pct = arith[i].util;
        assert_non_null (w = tr_waste (rows, 1, "user", NULL, NULL));
        t = json_object_get (w, "total");
        for (int k = 0; k < 3; k++) {
            assert_near (member (t, "core_hours", part[k]), arith[i].core[k]);
            assert_near (member (t, "gib_hours", part[k]), arith[i].mem[k]);
            assert_near (member (t, "gpu_hours", part[k]), arith[i].gpu[k]);
        }
        if (arith[i].core[0] > 0)
            assert_near (member (t, "core_hours", "wasted_pct"),
                         100 * arith[i].core[2] / arith[i].core[0]);
        else
            assert_null (json_object_get (json_object_get (t, "core_hours"),
                                          "wasted_pct"));
        assert_int_equal (member (t, "gib_hours", "unknown"),
                          arith[i].mem_unknown);
        assert_int_equal (member (t, "gpu_hours", "unknown"),
                          arith[i].gpu_unknown);
        assert_int_equal (count (t, "unknown_allocation"),
                          arith[i].cores > 0 ? 0 : 1);
        assert_null (json_object_get (w, "currency"));
        assert_null (json_object_get (t, "money"));
        /* one row: the key's entry is the total */
        assert_int_equal (json_array_size (json_object_get (w, "rows")), 1);
        assert_near (member (entry (w, "alice"), "core_hours", "wasted"),
                     arith[i].core[2]);
        json_decref (w);
    }
}

/* --- Every key --------------------------------------------------------- */

/* Four rows of three jobs: job 1 has two steps. */
static void four_rows (tr_stepsum_t r[4])
{
    r[0] = mkrow ("1", 4, 3600, 3600);   /* wastes 3 core-hours */
    r[1] = mkrow ("1", 2, 3600, 3600);   /* wastes 1 */
    r[2] = mkrow ("2", 8, 1800, 0);      /* wastes 4 */
    r[3] = mkrow ("3", 1, 3600, 1800);   /* wastes 0.5 */
    r[1].step_id = "1";
    r[1].group = "align/1";
    r[1].partition = "big";
    r[2].user = "bob";
    r[2].account = "physics";
    r[2].group = "sort/0";
    r[3].user = "carol";
    r[3].account = "physics";
    r[3].group = "sort/0";
    r[3].partition = "big";
}

/* clang-format off */
static const struct {
    const char *by;
    size_t nkeys;
    const char *keys[4];    /* in output order */
    int steps[4];
    int jobs[4];
    double wasted[4];
} bys[] = {
    /* alice and bob tie: natural order */
    { "user", 3, { "alice", "bob", "carol" }, { 2, 1, 1 }, { 1, 1, 1 },
      { 4, 4, 0.5 } },
    { "account", 2, { "physics", "lab" }, { 2, 2 }, { 2, 1 }, { 4.5, 4 } },
    { "partition", 2, { "cpu", "big" }, { 2, 2 }, { 2, 2 }, { 7, 1.5 } },
    { "step", 3, { "sort/0", "align/0", "align/1" }, { 2, 1, 1 },
      { 2, 1, 1 }, { 4.5, 3, 1 } },
    { "group", 3, { "sort/0", "align/0", "align/1" }, { 2, 1, 1 },
      { 2, 1, 1 }, { 4.5, 3, 1 } },
};
/* clang-format on */

static void test_waste_by_key (void **state)
{
    tr_stepsum_t r[4];
    const tr_stepsum_t *rows[4] = { &r[0], &r[1], &r[2], &r[3] };

    (void)state;
    four_rows (r);
    for (size_t i = 0; i < sizeof (bys) / sizeof (bys[0]); i++) {
        json_t *w = tr_waste (rows, 4, bys[i].by, NULL, NULL);
        json_t *list, *t;

        print_message ("by %s\n", bys[i].by);
        assert_non_null (w);
        assert_string_equal (sval (w, "by"), bys[i].by);
        list = json_object_get (w, "rows");
        assert_int_equal (json_array_size (list), bys[i].nkeys);
        for (size_t k = 0; k < bys[i].nkeys; k++) {
            json_t *e = json_array_get (list, k);

            assert_string_equal (sval (e, "key"), bys[i].keys[k]);
            assert_int_equal (count (e, "steps"), bys[i].steps[k]);
            assert_int_equal (count (e, "jobs"), bys[i].jobs[k]);
            assert_near (member (e, "core_hours", "wasted"), bys[i].wasted[k]);
        }
        t = json_object_get (w, "total");
        assert_null (json_object_get (t, "key"));
        assert_int_equal (count (t, "steps"), 4);
        assert_int_equal (count (t, "jobs"), 3);
        assert_near (member (t, "core_hours", "allocated"), 4 + 2 + 4 + 1);
        assert_near (member (t, "core_hours", "used"), 1 + 1 + 0 + 0.5);
        assert_near (member (t, "core_hours", "wasted"), 8.5);
        json_decref (w);
    }
}

/* --- Tools ------------------------------------------------------------ */

static void test_waste_by_tool (void **state)
{
    tr_stepsum_t r[5];
    const tr_stepsum_t *rows[5] = { &r[0], &r[1], &r[2], &r[3], &r[4] };
    json_t *w, *e, *t;

    (void)state;
    /* 4 core-hours, 1 h of CPU: bwa half of it, samtools a quarter, the
     * last quarter no listed tool's (alloc 2/1/1, used .5/.25/.25).
     */
    r[0] = mkrow ("1", 4, 3600, 3600);
    r[0].tools = "bwa=1800.000;samtools=900.000";
    /* 1 core-hour all bwa's: alloc 1, used 1/6 */
    r[1] = mkrow ("2", 1, 3600, 600);
    r[1].tools = "bwa=600.000";
    /* tools adding up to more than the row (600 > 400) are scaled: half
     * each of 2 core-hours; the malformed entry is left out; an escaped
     * '=' is part of a name.
     */
    r[2] = mkrow ("3", 2, 3600, 400);
    r[2].tools = "x\\=y=300;junk;z=;gzip=300";
    /* no tools, or no CPU at all: everything to "(other)" */
    r[3] = mkrow ("4", 1, 3600, 360);
    r[4] = mkrow ("5", 1, 3600, 0);
    r[4].tools = "bwa=0.000";

    assert_non_null (w = tr_waste (rows, 5, "tool", NULL, NULL));
    assert_int_equal (json_array_size (json_object_get (w, "rows")), 5);

    e = entry (w, "bwa");
    assert_int_equal (count (e, "steps"), 2);
    assert_int_equal (count (e, "jobs"), 2);
    assert_near (member (e, "core_hours", "allocated"), 2 + 1);
    assert_near (member (e, "core_hours", "used"), 0.5 + 1.0 / 6);
    assert_near (member (e, "core_hours", "wasted"), 1.5 + 5.0 / 6);
    /* tools are given CPU time only */
    assert_null (json_object_get (e, "gib_hours"));
    assert_null (json_object_get (e, "gpu_hours"));

    e = entry (w, "samtools");
    assert_int_equal (count (e, "steps"), 1);
    assert_near (member (e, "core_hours", "allocated"), 1);
    assert_near (member (e, "core_hours", "used"), 0.25);

    e = entry (w, "x=y");
    assert_near (member (e, "core_hours", "allocated"), 1);
    assert_near (member (e, "core_hours", "used"), 400.0 / 3600 / 2);
    e = entry (w, "gzip");
    assert_near (member (e, "core_hours", "allocated"), 1);

    /* (other): a quarter of row 0, all of rows 3 and 4 */
    e = entry (w, "(other)");
    assert_int_equal (count (e, "steps"), 3);
    assert_near (member (e, "core_hours", "allocated"), 1 + 1 + 1);
    assert_near (member (e, "core_hours", "used"), 0.25 + 0.1 + 0);
    assert_near (member (e, "core_hours", "wasted"), 0.75 + 0.9 + 1);

    /* the total counts each row once and is the sum of the keys */
    t = json_object_get (w, "total");
    assert_int_equal (count (t, "steps"), 5);
    assert_int_equal (count (t, "jobs"), 5);
    assert_near (member (t, "core_hours", "allocated"), 4 + 1 + 2 + 1 + 1);
    assert_near (member (t, "core_hours", "used"),
                 (3600 + 600 + 400 + 360 + 0) / 3600.0);
    assert_null (json_object_get (t, "gib_hours"));

    /* sorted by wasted core-hours: (other) 2.65, bwa 2.33, x=y and gzip
     * 0.944 (natural order), samtools 0.75
     */
    assert_string_equal (key_at (w, 0), "(other)");
    assert_string_equal (key_at (w, 2), "gzip");
    assert_string_equal (key_at (w, 4), "samtools");
    json_decref (w);
}

/* --- Unknown allocation ----------------------------------------------- */

static void test_waste_unknown (void **state)
{
    tr_stepsum_t r[4];
    const tr_stepsum_t *rows[4] = { &r[0], &r[1], &r[2], &r[3] };
    json_t *w, *t, *e;

    (void)state;
    r[0] = mkrow ("1", 2, 3600, 3600);
    r[1] = mkrow ("2", NAN, 3600, 3600);  /* cores unknown */
    r[2] = mkrow ("3", 4, NAN, 3600);     /* elapsed unknown */
    r[3] = mkrow ("4", 4, 3600, NAN);     /* CPU time unknown */
    r[0].req_mem_bytes = r[1].req_mem_bytes = 2 * GiB;
    r[0].mem_peak_sum_bytes = r[1].mem_peak_sum_bytes = GiB;
    assert_non_null (w = tr_waste (rows, 4, "user", NULL, NULL));
    t = json_object_get (w, "total");
    assert_int_equal (count (t, "steps"), 4);
    assert_int_equal (count (t, "jobs"), 4);
    assert_int_equal (count (t, "unknown_allocation"), 2);
    assert_int_equal (count (t, "unknown_usage"), 1);
    /* only row 0 is in the sums, its memory included */
    assert_near (member (t, "core_hours", "allocated"), 2);
    assert_near (member (t, "core_hours", "wasted"), 1);
    assert_near (member (t, "gib_hours", "allocated"), 2);
    assert_near (member (t, "gib_hours", "wasted"), 1);
    assert_int_equal (member (t, "gib_hours", "unknown"), 0);
    e = entry (w, "alice");
    assert_int_equal (count (e, "unknown_allocation"), 2);
    assert_int_equal (count (e, "unknown_usage"), 1);
    json_decref (w);
}

/* --- Prices ------------------------------------------------------------ */

static void test_waste_prices (void **state)
{
    struct tr_cost_part part[] = {
        /* GPUs cheaper, memory free, cores at the default price */
        { "gpu", NAN, 0, 1.5 },
        { "unused", 9, 9, 9 },
    };
    struct tr_cost cost = { 0.05, 0.01, 2.0, "EUR", 2, part };
    tr_stepsum_t r[3];
    const tr_stepsum_t *rows[3] = { &r[0], &r[1], &r[2] };
    json_t *w, *e, *t;

    (void)state;
    /* cpu: core 4/2/2, GiB 8/2/6 -> 0.28 / 0.12 / 0.16 */
    r[0] = mkrow ("1", 4, 3600, 7200);
    r[0].req_mem_bytes = 8 * GiB;
    r[0].mem_peak_sum_bytes = 2 * GiB;
    /* gpu: core 2/1/1 at 0.05, GiB 4/1/3 free, GPU 0.5/0.125/0.375 at
     * 1.5 -> 0.85 / 0.2375 / 0.6125: less core waste than cpu, more
     * money, so it comes first.
     */
    r[1] = mkrow ("2", 8, 900, 3600);
    r[1].partition = "gpu";
    r[1].req_mem_bytes = 16 * GiB;
    r[1].mem_peak_sum_bytes = 4 * GiB;
    r[1].gpus_used = 2;
    r[1].gpu_util_mean_pct = 25;
    /* a GPU at the default price: 1 h at 50%, 2 / 1 / 1; no CPU waste */
    r[2] = mkrow ("3", 1, 3600, 3600);
    r[2].partition = "other";
    r[2].gpus_used = 1;
    r[2].gpu_util_mean_pct = 50;

    assert_non_null (w = tr_waste (rows, 3, "partition", &cost, NULL));
    assert_string_equal (sval (w, "currency"), "EUR");
    e = entry (w, "cpu");
    assert_near (member (e, "money", "allocated"), 0.28);
    assert_near (member (e, "money", "used"), 0.12);
    assert_near (member (e, "money", "wasted"), 0.16);
    assert_near (member (e, "money", "wasted_pct"), 100 * 0.16 / 0.28);
    e = entry (w, "gpu");
    assert_near (member (e, "money", "allocated"), 0.85);
    assert_near (member (e, "money", "used"), 0.2375);
    assert_near (member (e, "money", "wasted"), 0.6125);
    e = entry (w, "other");
    assert_near (member (e, "money", "allocated"), 0.05 + 2);
    assert_near (member (e, "money", "wasted"), 1);
    t = json_object_get (w, "total");
    assert_near (member (t, "money", "wasted"), 0.16 + 0.6125 + 1);
    /* by money: other 1, gpu 0.6125, cpu 0.16 (core waste 0, 1, 2) */
    assert_string_equal (key_at (w, 0), "other");
    assert_string_equal (key_at (w, 1), "gpu");
    json_decref (w);

    /* all prices 0: no money at all */
    cost.core_hour = cost.gb_hour = cost.gpu_hour = 0;
    cost.npart = 0;
    assert_non_null (w = tr_waste (rows, 3, "partition", &cost, NULL));
    assert_null (json_object_get (w, "currency"));
    assert_null (json_object_get (json_object_get (w, "total"), "money"));
    /* back to core waste: cpu 2, gpu 1, other 0 */
    assert_string_equal (key_at (w, 0), "cpu");
    json_decref (w);

    /* only a partition's price: money, currency "" when none given */
    part[0].core_hour = 1;
    cost.npart = 1;
    cost.currency = NULL;
    assert_non_null (w = tr_waste (rows, 3, "partition", &cost, NULL));
    assert_string_equal (sval (w, "currency"), "");
    assert_near (member (entry (w, "gpu"), "money", "wasted"), 1 + 0.5625);
    assert_near (member (entry (w, "cpu"), "money", "wasted"), 0);
    json_decref (w);
}

/* --- Sort order -------------------------------------------------------- */

static void test_waste_sort (void **state)
{
    static const char *const users[] = { "u10", "u2", "u1", "big", "none" };
    static const double cores[] = { 2, 2, 2, 5, 1 };
    static const char *const want[] = { "big", "u1", "u2", "u10", "none" };
    tr_stepsum_t r[5];
    const tr_stepsum_t *rows[5];
    json_t *w;

    (void)state;
    for (int i = 0; i < 5; i++) {
        r[i] = mkrow ("1", cores[i], 3600, 3600);
        r[i].user = users[i];
        rows[i] = &r[i];
    }
    assert_non_null (w = tr_waste (rows, 5, "user", NULL, NULL));
    for (int i = 0; i < 5; i++)
        assert_string_equal (key_at (w, (size_t)i), want[i]);
    json_decref (w);
}

/* --- Errors ------------------------------------------------------------ */

static void test_waste_errors (void **state)
{
    tr_stepsum_t r = mkrow ("1", 1, 1, 1);
    const tr_stepsum_t *rows[] = { &r };
    struct tr_cost cost = { -1, 0, 0, "EUR", 0, NULL };
    struct tr_cost_part part = { NULL, 1, 1, 1 };
    tr_error_t error;
    json_t *empty;

    (void)state;
    errno = 0;
    assert_null (tr_waste (rows, 1, "qos", NULL, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "'qos'"));
    errno = 0;
    assert_null (tr_waste (rows, 1, NULL, NULL, NULL));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (tr_waste (NULL, 1, "user", NULL, NULL));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (tr_waste (rows, 1, "user", &cost, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "core_hour"));
    cost.core_hour = NAN;
    assert_null (tr_waste (rows, 1, "user", &cost, NULL));
    cost.core_hour = 1;
    cost.npart = 1;
    cost.part = &part;
    errno = 0;
    assert_null (tr_waste (rows, 1, "user", &cost, NULL));
    assert_int_equal (errno, EINVAL);

    /* no rows is an empty report, not an error */
    assert_non_null (empty = tr_waste (NULL, 0, "account", NULL, NULL));
    assert_int_equal (json_array_size (json_object_get (empty, "rows")), 0);
    assert_int_equal (count (json_object_get (empty, "total"), "steps"), 0);
    json_decref (empty);

    errno = 0;
    assert_int_equal (tr_waste_print (stdout, NULL, false, 0), -1);
    assert_int_equal (errno, EINVAL);
    assert_null (tr_group_summary (rows, 1, "user", &error));
    assert_int_equal (errno, EINVAL);
    assert_null (tr_group_summary (NULL, 2, "array", NULL));
    errno = 0;
    assert_int_equal (tr_group_summary_print (stdout, NULL), -1);
    assert_int_equal (errno, EINVAL);
}

/* --- Printed tables ---------------------------------------------------- */

static void test_waste_print (void **state)
{
    struct tr_cost cost = { 0.05, 0.01, 0, "EUR", 0, NULL };
    tr_stepsum_t r[3];
    const tr_stepsum_t *rows[3] = { &r[0], &r[1], &r[2] };
    json_t *w;
    char *text;

    (void)state;
    r[0] = mkrow ("1", 4, 3600, 7200);
    r[0].req_mem_bytes = 8 * GiB;
    r[0].mem_peak_sum_bytes = 2 * GiB;
    r[1] = mkrow ("2", 16, 1800, 14400);
    r[1].account = "";
    r[1].req_mem_bytes = 4 * GiB;
    r[1].nodes = 2;
    r[1].mem_peak_sum_bytes = 6 * GiB;
    r[2] = mkrow ("3", NAN, 60, 60);

    /* no GPU anywhere: no GPU columns; the empty account is "(none)" */
    assert_non_null (w = tr_waste (rows, 3, "account", NULL, NULL));
    text = capture_waste (w, true);
    assert_text (text,
                 "Account|Steps|Jobs|Unknown|CoreH|CoreHUsed|CoreHWaste"
                 "|CoreWaste%|GiBH|GiBHUsed|GiBHWaste|GiBWaste%\n"
                 "(none)|1|1|0|8.00|4.00|4.00|50.0|4.00|3.00|1.00|25.0\n"
                 "lab|2|2|1|4.00|2.00|2.00|50.0|8.00|2.00|6.00|75.0\n"
                 "TOTAL|3|3|1|12.00|6.00|6.00|50.0|12.00|5.00|7.00|58.3\n");
    free (text);
    text = capture_waste (w, false);
    assert_text (text,
                 "Account Steps Jobs Unknown CoreH CoreHUsed CoreHWaste"
                 " CoreWaste%  GiBH GiBHUsed GiBHWaste GiBWaste%\n"
                 "------- ----- ---- ------- ----- --------- ----------"
                 " ---------- ----- -------- --------- ---------\n"
                 "(none)      1    1       0  8.00      4.00       4.00"
                 "       50.0  4.00     3.00      1.00      25.0\n"
                 "lab         2    2       1  4.00      2.00       2.00"
                 "       50.0  8.00     2.00      6.00      75.0\n"
                 "------- ----- ---- ------- ----- --------- ----------"
                 " ---------- ----- -------- --------- ---------\n"
                 "TOTAL       3    3       1 12.00      6.00       6.00"
                 "       50.0 12.00     5.00      7.00      58.3\n");
    free (text);
    /* at 80 columns: the GiB-hours under the core-hours, each panel
     * with the key column; parsable output is never cut
     */
    text = capture_waste_width (w, false, 80);
    assert_text (text,
                 "Account Steps Jobs Unknown CoreH CoreHUsed CoreHWaste"
                 " CoreWaste%\n"
                 "------- ----- ---- ------- ----- --------- ----------"
                 " ----------\n"
                 "(none)      1    1       0  8.00      4.00       4.00"
                 "       50.0\n"
                 "lab         2    2       1  4.00      2.00       2.00"
                 "       50.0\n"
                 "------- ----- ---- ------- ----- --------- ----------"
                 " ----------\n"
                 "TOTAL       3    3       1 12.00      6.00       6.00"
                 "       50.0\n"
                 "\n"
                 "Account  GiBH GiBHUsed GiBHWaste GiBWaste%\n"
                 "------- ----- -------- --------- ---------\n"
                 "(none)   4.00     3.00      1.00      25.0\n"
                 "lab      8.00     2.00      6.00      75.0\n"
                 "------- ----- -------- --------- ---------\n"
                 "TOTAL   12.00     5.00      7.00      58.3\n");
    free (text);
    text = capture_waste_width (w, true, 80);
    assert_text (text,
                 "Account|Steps|Jobs|Unknown|CoreH|CoreHUsed|CoreHWaste"
                 "|CoreWaste%|GiBH|GiBHUsed|GiBHWaste|GiBWaste%\n"
                 "(none)|1|1|0|8.00|4.00|4.00|50.0|4.00|3.00|1.00|25.0\n"
                 "lab|2|2|1|4.00|2.00|2.00|50.0|8.00|2.00|6.00|75.0\n"
                 "TOTAL|3|3|1|12.00|6.00|6.00|50.0|12.00|5.00|7.00|58.3\n");
    free (text);
    json_decref (w);

    /* money, with the currency on the amounts; ties on money go by core
     * waste, then by key
     */
    assert_non_null (w = tr_waste (rows, 3, "user", &cost, NULL));
    text = capture_waste (w, true);
    assert_text (text,
                 "User|Steps|Jobs|Unknown|CoreH|CoreHUsed|CoreHWaste"
                 "|CoreWaste%|GiBH|GiBHUsed|GiBHWaste|GiBWaste%"
                 "|Cost(EUR)|CostUsed(EUR)|CostWaste(EUR)|CostWaste%\n"
                 "alice|3|3|1|12.00|6.00|6.00|50.0|12.00|5.00|7.00|58.3"
                 "|0.72|0.35|0.37|51.4\n"
                 "TOTAL|3|3|1|12.00|6.00|6.00|50.0|12.00|5.00|7.00|58.3"
                 "|0.72|0.35|0.37|51.4\n");
    free (text);
    json_decref (w);

    /* by tool: CPU columns only */
    r[0].tools = "bwa=3600";
    assert_non_null (w = tr_waste (rows, 1, "tool", NULL, NULL));
    text = capture_waste (w, true);
    assert_text (text,
                 "Tool|Steps|Jobs|Unknown|CoreH|CoreHUsed|CoreHWaste"
                 "|CoreWaste%\n"
                 "(other)|1|1|0|2.00|1.00|1.00|50.0\n"
                 "bwa|1|1|0|2.00|1.00|1.00|50.0\n"
                 "TOTAL|1|1|0|4.00|2.00|2.00|50.0\n");
    free (text);
    json_decref (w);

    /* GPUs bring their columns */
    r[0].gpus_used = 1;
    r[0].gpu_util_mean_pct = 10;
    assert_non_null (w = tr_waste (rows, 1, "partition", NULL, NULL));
    text = capture_waste (w, true);
    assert_text (text,
                 "Partition|Steps|Jobs|Unknown|CoreH|CoreHUsed|CoreHWaste"
                 "|CoreWaste%|GiBH|GiBHUsed|GiBHWaste|GiBWaste%"
                 "|GPUH|GPUHUsed|GPUHWaste|GPUWaste%\n"
                 "cpu|1|1|0|4.00|2.00|2.00|50.0|8.00|2.00|6.00|75.0"
                 "|1.00|0.10|0.90|90.0\n"
                 "TOTAL|1|1|0|4.00|2.00|2.00|50.0|8.00|2.00|6.00|75.0"
                 "|1.00|0.10|0.90|90.0\n");
    free (text);
    json_decref (w);
}

/* --- Group summaries --------------------------------------------------- */

/* Six tasks of array job 100 (jobs 101..106, tasks 0..5) and one row
 * that is no array task.
 */
static void array_rows (tr_stepsum_t r[7])
{
    static const char *const jobs[] = { "101", "102", "103",
                                        "104", "105", "106" };
    static const double elapsed[] = { 10, 12, 20, 45, 90, 300 };
    static const char *const states[] = { "completed", "failed",
                                          "completed", "oom",
                                          "completed", "timeout" };
    static const double mem[] = { 1, 2, 3, 8, 2, 1 };

    for (int i = 0; i < 6; i++) {
        /* 2 cores; CPU time for an efficiency of 10%, 20%, ... 60% */
        r[i] = mkrow (jobs[i], 2, elapsed[i], 2 * elapsed[i] * (i + 1) / 10);
        r[i].array_job_id = "100";
        r[i].array_task_id = i;
        r[i].step_id = "batch";
        r[i].state = states[i];
        r[i].mem_peak_bytes = mem[i] * GiB;
    }
    r[6] = mkrow ("200", 1, 5, 1);
}

static void test_summary_array (void **state)
{
    tr_stepsum_t r[7];
    const tr_stepsum_t *rows[7];
    json_t *s, *g, *st, *h, *el;
    /* 10 to 300 s is 9 ladder steps, thinned to 8 (45 s goes) */
    static const char *const labels[] = { "10-15s", "15-20s", "20-30s",
                                          "30s-1m", "1-1.5m", "1.5-2m",
                                          "2-3m",   "3-5m" };
    static const int counts[] = { 2, 0, 1, 1, 0, 1, 0, 1 };
    const char *k;
    json_t *v;
    int i = 0;
    char *text;

    (void)state;
    array_rows (r);
    for (int j = 0; j < 7; j++)
        rows[j] = &r[6 - j]; /* reversed: the output order is the sort's */
    assert_non_null (s = tr_group_summary (rows, 7, "array", NULL));
    assert_int_equal (count (s, "skipped"), 1);
    assert_int_equal (json_array_size (json_object_get (s, "groups")), 1);
    g = json_array_get (json_object_get (s, "groups"), 0);
    assert_string_equal (sval (g, "key"), "100");
    assert_string_equal (sval (g, "cluster"), "c1");
    assert_int_equal (count (g, "count"), 6);
    assert_int_equal (count (g, "tasks"), 6);
    assert_int_equal (count (g, "jobs"), 6);

    /* states, best first */
    st = json_object_get (g, "states");
    assert_int_equal (json_object_size (st), 4);
    json_object_foreach (st, k, v) {
        static const char *const order[] = { "completed", "failed",
                                             "timeout", "oom" };
        static const int n[] = { 3, 1, 1, 1 };

        assert_string_equal (k, order[i]);
        assert_int_equal (json_integer_value (v), n[i]);
        i++;
    }

    /* 10 12 20 45 90 300: mean 79.5, median (20 + 45) / 2, p90 at
     * 4.5: 90 + 0.5 * 210
     */
    el = json_object_get (g, "elapsed_s");
    assert_int_equal (count (el, "n"), 6);
    assert_near (member (g, "elapsed_s", "min"), 10);
    assert_near (member (g, "elapsed_s", "mean"), 79.5);
    assert_near (member (g, "elapsed_s", "max"), 300);
    assert_near (member (g, "elapsed_s", "p50"), 32.5);
    assert_near (member (g, "elapsed_s", "p90"), 195);
    assert_near (member (g, "cpu_eff", "min"), 0.1);
    assert_near (member (g, "cpu_eff", "mean"), 0.35);
    assert_near (member (g, "cpu_eff", "max"), 0.6);
    assert_null (json_object_get (json_object_get (g, "cpu_eff"), "p50"));
    assert_near (member (g, "mem_peak_bytes", "min"), GiB);
    assert_near (member (g, "mem_peak_bytes", "mean"), 17 * GiB / 6);
    assert_near (member (g, "mem_peak_bytes", "max"), 8 * GiB);

    h = json_object_get (g, "histogram");
    assert_int_equal (json_array_size (h), 8);
    for (size_t b = 0; b < 8; b++) {
        json_t *bin = json_array_get (h, b);

        assert_string_equal (sval (bin, "label"), labels[b]);
        assert_int_equal (count (bin, "count"), counts[b]);
    }
    assert_near (json_number_value (json_object_get (json_array_get (h, 0),
                                                     "lo_s")),
                 10);
    assert_near (json_number_value (json_object_get (json_array_get (h, 7),
                                                     "hi_s")),
                 300);

    assert_string_equal (sval (json_object_get (g, "slowest"), "job_id"),
                         "106");
    assert_int_equal (count (json_object_get (g, "slowest"), "array_task_id"),
                      5);
    assert_string_equal (sval (json_object_get (g, "most_memory"), "job_id"),
                         "104");

    text = capture_summary (s);
    assert_text (text,
                 "Array job 100 on c1: 6 rows, 6 tasks\n"
                 "  States:      completed 3, failed 1, timeout 1, OUT_OF_MEMORY 1\n"
                 "  Elapsed:     min 00:00:10, mean 00:01:20, max 00:05:00,"
                 " p50 00:00:33, p90 00:03:15\n"
                 "  CPU eff.:    min 10.0%, mean 35.0%, max 60.0%\n"
                 "  Memory peak: min 1.0 GiB, mean 2.8 GiB, max 8.0 GiB\n"
                 "  Slowest:     job 106 (100_5), step batch: 00:05:00\n"
                 "  Most memory: job 104 (100_3), step batch: 8.0 GiB\n"
                 "  Runtime:\n"
                 "    10-15s |######################################## 2\n"
                 "    15-20s |                                         0\n"
                 "    20-30s |####################                     1\n"
                 "    30s-1m |####################                     1\n"
                 "    1-1.5m |                                         0\n"
                 "    1.5-2m |####################                     1\n"
                 "    2-3m   |                                         0\n"
                 "    3-5m   |####################                     1\n"
                 "\n"
                 "Skipped: 1 row not of an array job\n");
    free (text);
    json_decref (s);
}

/* Histogram bins from the data range: thinned to 8 over a wide range,
 * one bin for a single value, the last bin holding its upper edge.
 */
/* clang-format off */
static const struct {
    const char *name;
    size_t n;
    double v[4];
    size_t nbins;
    const char *labels[8];
    int counts[8];
} hists[] = {
    /* 26 ladder steps from 1 s to 1 d, every 3rd or 4th taken */
    { "wide", 4, { 1, 59, 60, 86400 }, 8,
      { "1-10s", "10-45s", "45s-2m", "2-10m", "10-30m", "30m-2h", "2-6h",
        "6h-1d" },
      { 1, 0, 2, 0, 0, 0, 0, 1 } },
    { "one value", 2, { 60, 60 }, 1, { "1-1.5m" }, { 2 } },
    { "from zero", 3, { 0, 29, 30 }, 7,
      { "0-1s", "1-2s", "2-5s", "5-10s", "10-15s", "15-20s", "20-30s" },
      { 1, 0, 0, 0, 0, 0, 2 } },
    /* a narrow range still gets several bins */
    { "narrow", 2, { 600, 7200 }, 7,
      { "10-15m", "15-20m", "20-30m", "30-45m", "45m-1h", "1-1.5h",
        "1.5-2h" },
      { 1, 0, 0, 0, 0, 0, 1 } },
    { "beyond the ladder", 2, { 2592000, 5000000 }, 1, { "14-30d" },
      { 2 } },
};
/* clang-format on */

static void test_summary_histogram (void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof (hists) / sizeof (hists[0]); i++) {
        tr_stepsum_t r[4];
        const tr_stepsum_t *rows[4];
        json_t *s, *h;

        print_message ("case %s\n", hists[i].name);
        for (size_t j = 0; j < hists[i].n; j++) {
            r[j] = mkrow ("1", 1, hists[i].v[j], 1);
            r[j].job_name = "sort";
            rows[j] = &r[j];
        }
        assert_non_null (s = tr_group_summary (rows, hists[i].n, "name", NULL));
        assert_null (json_object_get (s, "skipped"));
        h = json_object_get (json_array_get (json_object_get (s, "groups"), 0),
                             "histogram");
        assert_int_equal (json_array_size (h), hists[i].nbins);
        for (size_t b = 0; b < hists[i].nbins; b++) {
            json_t *bin = json_array_get (h, b);

            assert_string_equal (sval (bin, "label"), hists[i].labels[b]);
            assert_int_equal (count (bin, "count"), hists[i].counts[b]);
        }
        json_decref (s);
    }
}

/* Groups by step group and by name; unknown values leave the members
 * out instead of making them up.
 */
static void test_summary_groups (void **state)
{
    tr_stepsum_t r[4];
    const tr_stepsum_t *rows[4] = { &r[0], &r[1], &r[2], &r[3] };
    json_t *s, *g;
    char *text;

    (void)state;
    four_rows (r);
    r[0].job_name = r[1].job_name = "align";
    r[2].job_name = r[3].job_name = "sort";
    r[3].state = "";
    r[3].elapsed_s = NAN;
    assert_non_null (s = tr_group_summary (rows, 4, "group", NULL));
    assert_int_equal (json_array_size (json_object_get (s, "groups")), 3);
    g = json_array_get (json_object_get (s, "groups"), 2);
    assert_string_equal (sval (g, "key"), "sort/0");
    assert_null (json_object_get (g, "cluster"));
    assert_null (json_object_get (g, "tasks"));
    assert_int_equal (count (g, "count"), 2);
    assert_int_equal (count (g, "jobs"), 2);
    assert_int_equal (count (json_object_get (g, "states"), "unknown"), 1);
    assert_int_equal (count (json_object_get (g, "elapsed_s"), "n"), 1);
    assert_null (json_object_get (json_object_get (g, "slowest"),
                                  "array_task_id"));
    assert_null (json_object_get (g, "most_memory"));
    json_decref (s);

    /* nothing known about elapsed time: no histogram, no slowest */
    r[2].elapsed_s = NAN;
    assert_non_null (s = tr_group_summary (rows, 4, "name", NULL));
    g = json_array_get (json_object_get (s, "groups"), 1);
    assert_string_equal (sval (g, "key"), "sort");
    assert_int_equal (count (json_object_get (g, "elapsed_s"), "n"), 0);
    assert_null (json_object_get (json_object_get (g, "elapsed_s"), "min"));
    assert_null (json_object_get (g, "histogram"));
    assert_null (json_object_get (g, "slowest"));
    text = capture_summary (s);
    assert_non_null (strstr (text, "Job name align: 2 rows, 1 job\n"
                                   "  States:      completed 2\n"));
    /* the last group: nothing known but its states */
    assert_non_null (strstr (text, "\n\nJob name sort: 2 rows, 2 jobs\n"
                                   "  States:      completed 1, unknown 1\n"));
    assert_string_equal (strstr (text, "\n\nJob name sort:"),
                         "\n\nJob name sort: 2 rows, 2 jobs\n"
                         "  States:      completed 1, unknown 1\n");
    free (text);
    json_decref (s);

    /* no rows: no groups */
    assert_non_null (s = tr_group_summary (NULL, 0, "array", NULL));
    assert_int_equal (json_array_size (json_object_get (s, "groups")), 0);
    text = capture_summary (s);
    assert_string_equal (text, "");
    free (text);
    json_decref (s);
}

/* --- Out of memory ------------------------------------------------------ */

/* jansson allocations left before one fails (-1: never) */
static long allocs_left = -1;

static void *failing_malloc (size_t size)
{
    if (allocs_left == 0)
        return NULL;
    if (allocs_left > 0)
        allocs_left--;
    return malloc (size);
}

/* Fail the Nth JSON allocation of each builder, for every N until one
 * succeeds: each failure is NULL with ENOMEM and leaks nothing (valgrind
 * and ASan check the last part).
 */
/* Runs: grouped per user and run id, jobs and failures counted as sacct
 * counts them, hours and cost as --waste computes them
 */
static tr_stepsum_t mkrun (const char *run, const char *user, double uid,
                           const char *job, const char *step, double start_s,
                           double elapsed)
{
    tr_stepsum_t r = mkrow (job, 2, elapsed, elapsed);

    r.run_id = run;
    r.pipeline = "demo";
    r.user = user;
    r.uid = uid;
    r.step_id = step;
    r.start_ms = start_s * 1000;
    r.end_ms = (start_s + elapsed) * 1000;
    return r;
}

static void test_runs (void **state)
{
    tr_stepsum_t rows[9];
    const tr_stepsum_t *p[9];
    struct tr_cost cost = { .core_hour = 0.5, .currency = "EUR" };
    json_t *runs, *list, *r1, *w;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    tr_error_t error;

    (void)state;
    rows[0] = mkrun ("r1", "alice", 1000, "10", "batch", 1000, 3600);
    rows[1] = mkrun ("r1", "alice", 1000, "10", "extern", 1000, 3600);
    rows[2] = mkrun ("r1", "alice", 1000, "11", "batch", 2000, 1800);
    rows[2].state = "failed";
    rows[3] = mkrun ("r1", "alice", 1000, "13", "batch", 2500, 600);
    rows[3].array_job_id = "12";
    rows[4] = mkrun ("r1", "alice", 1000, "14", "batch", 2500, 900);
    rows[4].array_job_id = "12";
    rows[4].state = "timeout";
    rows[5] = mkrun ("r1", "alice", 1000, "14", "0", 2600, 100);
    /* bob chose alice's run id: a run of his own */
    rows[6] = mkrun ("r1", "bob", 1001, "20", "batch", 1500, 60);
    /* a node that had no name for alice's uid: still her run */
    rows[5].user = "";
    /* in no run */
    rows[7] = mkrun ("", "alice", 1000, "30", "batch", 100, 60);
    /* still running, the earliest */
    rows[8] = mkrun ("r0", "alice", 1000, "5", "batch", 500, 60);
    rows[8].end_ms = NAN;
    for (int i = 0; i < 9; i++)
        p[i] = &rows[i];

    assert_non_null (runs = tr_runs (p, 9, &cost, &error));
    assert_int_equal (count (runs, "outside_steps"), 1);
    assert_string_equal (json_string_value (json_object_get (runs,
                                                             "currency")),
                         "EUR");
    list = json_object_get (runs, "runs");
    assert_int_equal (json_array_size (list), 3);
    /* by start: r0 (500 s), alice's r1 (1000 s), bob's r1 (1500 s) */
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (list, 0), "run")), "r0");
    assert_true (json_is_true (json_object_get (json_array_get (list, 0),
                                                "running")));
    assert_null (json_object_get (json_array_get (list, 0), "end_unix_ms"));
    assert_null (json_object_get (json_array_get (list, 0), "elapsed_s"));
    r1 = json_array_get (list, 1);
    assert_string_equal (json_string_value (json_object_get (r1, "user")),
                         "alice");
    assert_int_equal (count (r1, "uid"), 1000);
    assert_string_equal (json_string_value (json_object_get (r1,
                                                             "pipeline")),
                         "demo");
    assert_int_equal (count (r1, "jobs"), 4);      /* 10, 11, 13, 14 */
    assert_int_equal (count (r1, "steps"), 6);
    assert_int_equal (count (r1, "failed_jobs"), 2);   /* 11, 14 */
    assert_int_equal (count (r1, "failed_steps"), 2);
    assert_int_equal (count (r1, "start_unix_ms"), 1000000);
    assert_int_equal (count (r1, "end_unix_ms"), 4600000);
    assert_near (member (r1, "core_hours", "allocated"),
                 2.0 * (3600 + 3600 + 1800 + 600 + 900 + 100) / 3600);
    /* the same figures as --waste gives for the same steps */
    assert_non_null (w = tr_waste (p, 6, "user", &cost, &error));
    assert_near (member (r1, "core_hours", "allocated"),
                 member (json_object_get (w, "total"), "core_hours",
                         "allocated"));
    assert_near (member (r1, "money", "allocated"),
                 member (json_object_get (w, "total"), "money",
                         "allocated"));
    json_decref (w);
    assert_null (json_object_get (r1, "driver"));
    /* its driver (tracer-run, no scheduler), failed as its job did: it
     * spans the run but is none of its jobs
     */
    {
        tr_stepsum_t d = mkrun ("r1", "alice", 1000, "run.77", "0", 900, 4000);
        const tr_stepsum_t *q[7] = { p[0], p[1], p[2], p[3], p[4], p[5], &d };
        json_t *dr, *r;

        d.scheduler = "none";
        d.state = "failed";
        assert_non_null (dr = tr_runs (q, 7, &cost, &error));
        r = json_array_get (json_object_get (dr, "runs"), 0);
        assert_int_equal (count (r, "jobs"), 4);
        assert_int_equal (count (r, "steps"), 6);
        assert_int_equal (count (r, "failed_jobs"), 2);
        assert_int_equal (count (r, "start_unix_ms"), 900000);
        assert_int_equal (count (r, "end_unix_ms"), 4900000);
        assert_near (member (r, "core_hours", "allocated"),
                     member (r1, "core_hours", "allocated"));
        assert_string_equal (json_string_value (json_object_get (
                                 json_object_get (r, "driver"), "state")),
                             "FAILED");
        json_decref (dr);
    }
    assert_string_equal (json_string_value (json_object_get (
                             json_array_get (list, 2), "user")), "bob");
    assert_int_equal (count (json_array_get (list, 2), "jobs"), 1);

    /* the table: parsable, chosen fields, names in any case */
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_runs_print (f, runs, "run,user,JOBS,steps,failed,"
                                     "elapsed,cost", true, false, &error),
                      0);
    fclose (f);
    assert_string_equal (text,
                         "Run|User|Jobs|Steps|Failed|Elapsed|Cost\n"
                         "r0|alice|1|1|0||0.02\n"
                         "r1|alice|4|6|2|01:00:00|2.94\n"
                         "r1|bob|1|1|0|00:01:00|0.02\n");
    free (text);
    /* aligned: a header, a rule, End Unknown while running */
    text = NULL;
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_runs_print (f, runs, "Run%-4,End%8,Jobs",
                                     false, false, &error), 0);
    fclose (f);
    assert_string_equal (text,
                         "Run       End  Jobs\n"
                         "---- -------- -----\n"
                         "r0    Unknown     1\n"
                         "r1   1970-01+     4\n"
                         "r1   1970-01+     1\n");
    free (text);
    /* the default fields, 76 columns; a name ending in '%' takes a width */
    text = NULL;
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_runs_print (f, runs, NULL, false, false, &error), 0);
    fclose (f);
    assert_memory_equal (text, "Run                       ", 26);
    assert_non_null (strstr (text, " Elapsed  Jobs Failed Waste%\n"));
    assert_int_equal (strchr (text, '\n') - text, 76);
    /* r0 runs: no waste known yet... it has one: 2 cores, 60 s, 60 s CPU */
    assert_non_null (strstr (text, "   1      0   50.0\n"));
    free (text);
    text = NULL;
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_runs_print (f, runs, "waste%8,Run%3", true, true,
                                     &error), 0);
    fclose (f);
    assert_string_equal (text, "50.0|r0\n50.0|r1\n50.0|r1\n");
    free (text);
    text = NULL;
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_runs_print (f, runs, "Waste%%7,run%-3", false, true,
                                     &error), 0);
    fclose (f);
    assert_string_equal (text, "   50.0 r0 \n   50.0 r1 \n   50.0 r1 \n");
    free (text);
    /* an unknown field */
    assert_non_null (f = open_memstream (&text, &len));
    assert_int_equal (tr_runs_print (f, runs, "run,nope", false, false,
                                     &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "nope"));
    fclose (f);
    free (text);
    json_decref (runs);
}

static void test_out_of_memory (void **state)
{
    tr_stepsum_t r[7];
    const tr_stepsum_t *rows[7];
    struct tr_cost cost = { 0.05, 0.01, 2, "EUR", 0, NULL };
    static const char *const modes[] = { "user", "tool", "array", "group" };

    (void)state;
    array_rows (r);
    r[0].tools = "bwa=1;gzip=1";
    for (int j = 0; j < 7; j++)
        rows[j] = &r[j];
    json_set_alloc_funcs (failing_malloc, free);
    for (size_t b = 0; b < sizeof (modes) / sizeof (modes[0]); b++) {
        bool waste = b < 2;
        long n;

        for (n = 0; n < 10000; n++) {
            json_t *o;

            allocs_left = n;
            errno = 0;
            o = waste ? tr_waste (rows, 7, modes[b], &cost, NULL)
                      : tr_group_summary (rows, 7, modes[b], NULL);
            allocs_left = -1;
            if (o) {
                json_decref (o);
                break;
            }
            assert_int_equal (errno, ENOMEM);
        }
        print_message ("%s: %ld allocations\n", modes[b], n);
        assert_true (n > 10 && n < 10000);
    }
    json_set_alloc_funcs (malloc, free);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_waste_arithmetic),
        cmocka_unit_test (test_waste_by_key),
        cmocka_unit_test (test_waste_by_tool),
        cmocka_unit_test (test_waste_unknown),
        cmocka_unit_test (test_waste_prices),
        cmocka_unit_test (test_waste_sort),
        cmocka_unit_test (test_waste_errors),
        cmocka_unit_test (test_waste_print),
        cmocka_unit_test (test_summary_array),
        cmocka_unit_test (test_summary_histogram),
        cmocka_unit_test (test_summary_groups),
        cmocka_unit_test (test_runs),
        cmocka_unit_test (test_out_of_memory),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
