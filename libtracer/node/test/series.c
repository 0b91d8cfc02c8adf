/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for series.c: points allocated as they come, merging in
 * pairs at the bound with min, mean and max kept exact, values rounded
 * to TR_SERIES_DIGITS significant digits (and printed short), times to
 * milliseconds.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/node/series.h"
#include "libtracer/util/strbuf.h"

static void test_grows_as_needed (void **state)
{
    struct tr_series s;

    (void)state;
    tr_series_init (&s);
    assert_null (s.p);
    assert_int_equal (s.n, 0);
    tr_series_add (&s, 0, 1);
    assert_non_null (s.p);
    assert_int_equal (s.n, 1);
    assert_true (s.cap >= 1 && s.cap < TR_SERIES_MAX);
    for (int i = 1; i < TR_SERIES_MAX; i++)
        tr_series_add (&s, i, i);
    assert_int_equal (s.n, TR_SERIES_MAX);
    assert_int_equal (s.cap, TR_SERIES_MAX);
    assert_int_equal (s.per, 1);
    tr_series_free (&s);
    assert_null (s.p);
    assert_int_equal (s.n, 0);
    tr_series_free (&s); /* twice is harmless */
}

/* 5,000 samples of a sawtooth: bounded, in time order, with the
 * extremes of everything that went in still there.
 */
static void test_merges_at_bound (void **state)
{
    struct tr_series s;
    double lo = INFINITY, hi = -INFINITY;
    const int n = 5000;

    (void)state;
    tr_series_init (&s);
    for (int i = 0; i < n; i++) {
        double v = (i % 97) - 40.5;
        tr_series_add (&s, i * 2.0, v);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    assert_true (s.n <= TR_SERIES_MAX);
    assert_true (s.n > TR_SERIES_MAX / 4);
    assert_int_equal (s.per, 8);
    assert_true (s.p[0].t == 0);
    for (size_t i = 1; i < s.n; i++)
        assert_true (s.p[i].t > s.p[i - 1].t);
    {
        double mn = INFINITY, mx = -INFINITY;
        for (size_t i = 0; i < s.n; i++) {
            mn = s.p[i].min < mn ? s.p[i].min : mn;
            mx = s.p[i].max > mx ? s.p[i].max : mx;
            assert_true (s.p[i].min <= s.p[i].mean);
            assert_true (s.p[i].mean <= s.p[i].max);
        }
        assert_true (mn == lo);
        assert_true (mx == hi);
    }
    tr_series_free (&s);
}

struct round_case {
    double in;
    const char *printed; /* %.15g of the result, as the record prints it */
};

static void test_round (void **state)
{
    static const struct round_case cases[] = {
        { 0.0, "0" },
        { 0.123456, "0.1235" },
        { 1.3470000000000002, "1.347" },
        { 524288000.0, "524300000" },
        { 2202419.2000000002, "2202000" },
        { -2.718281828, "-2.718" },
        { 9.99961, "10" },
        { 12345.5, "12350" },
        { 0.00012344, "0.0001234" },
        { 4.0, "4" },
        { 1e-299, "1e-299" },
        { 1.7e308, "1.7e+308" },
    };
    char buf[40];

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        double r = tr_series_round (cases[i].in);
        snprintf (buf, sizeof (buf), "%.15g", r);
        if (strcmp (buf, cases[i].printed))
            fail_msg ("round(%.17g) printed %s, expected %s", cases[i].in,
                      buf, cases[i].printed);
        /* and reads back as the same double */
        assert_true (strtod (buf, NULL) == r);
    }
    /* subnormals, and what would round past DBL_MAX, are left alone */
    assert_true (tr_series_round (1.7976931348623157e308)
                 == 1.7976931348623157e308);
    assert_true (tr_series_round (1e-320) == 1e-320);
    assert_true (isnan (tr_series_round (NAN)));
    assert_true (isinf (tr_series_round (INFINITY)));
}

static void test_json (void **state)
{
    struct tr_series s;
    json_t *o, *t;
    char *text;

    (void)state;
    tr_series_init (&s);
    tr_series_add (&s, 0.0005700070032617077, 1.0 / 3);
    tr_series_add (&s, 1.2344999, 2.0 / 3);
    assert_non_null (o = tr_series_json (&s));
    assert_non_null (t = tr_series_times (&s));
    assert_non_null (text = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS
                                               | JSON_REAL_PRECISION (15)));
    assert_string_equal (text, "{\"max\":[0.3333,0.6667],\"mean\":[0.3333,"
                               "0.6667],\"min\":[0.3333,0.6667]}");
    free (text);
    assert_non_null (text = json_dumps (t, JSON_COMPACT
                                               | JSON_REAL_PRECISION (15)));
    assert_string_equal (text, "[0.001,1.234]");
    free (text);
    json_decref (o);
    json_decref (t);
    tr_series_free (&s);

    /* an empty series */
    tr_series_init (&s);
    assert_non_null (o = tr_series_json (&s));
    assert_int_equal (json_array_size (json_object_get (o, "mean")), 0);
    json_decref (o);
}

/* The text of one array of n points, or of the times, as a JSON tree. */
static json_t *text_tree (const struct tr_series *s, size_t n, bool times)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    json_error_t jerr;
    json_t *v;

    if ((times ? tr_series_times_text (&sb, s, n) : tr_series_text (&sb, s, n))
        < 0)
        fail_msg ("text: %s", strerror (errno));
    if (!(v = json_loads (tr_strbuf_str (&sb), JSON_REJECT_DUPLICATES, &jerr)))
        fail_msg ("not JSON (%s): %.200s", jerr.text, tr_strbuf_str (&sb));
    tr_strbuf_free (&sb);
    return v;
}

/* Every number of the text reads back as the very double of the tree. */
static void assert_same_doubles (json_t *tree, json_t *text)
{
    assert_int_equal (json_array_size (tree), json_array_size (text));
    for (size_t i = 0; i < json_array_size (tree); i++) {
        double a = json_real_value (json_array_get (tree, i));
        double b = json_real_value (json_array_get (text, i));
        assert_true (json_is_real (json_array_get (text, i)));
        if (a != b)
            fail_msg ("point %zu: tree %.17g, text %.17g", i, a, b);
    }
}

static void compare_with_tree (const struct tr_series *s)
{
    json_t *tree = tr_series_json (s), *text = text_tree (s, s->n, false);
    json_t *tt = tr_series_times (s), *xt = text_tree (s, s->n, true);
    const char *k;

    assert_non_null (tree);
    assert_non_null (tt);
    assert_same_doubles (tt, xt);
    assert_int_equal (json_object_size (text), 3);
    for (int i = 0; i < 3; i++) {
        k = i == 0 ? "min" : i == 1 ? "mean" : "max";
        assert_same_doubles (json_object_get (tree, k), json_object_get (text, k));
    }
    json_decref (tree);
    json_decref (text);
    json_decref (tt);
    json_decref (xt);
}

/* tr_series_text against tr_series_json: 50,000 values log-uniform from
 * 1e-15 to 1e20 of both signs, zeros, and times over a week.
 */
static void test_text_reads_back (void **state)
{
    struct tr_series s;
    unsigned seed = 12345;

    (void)state;
    for (int round = 0; round < 50; round++) {
        tr_series_init (&s);
        for (int i = 0; i < TR_SERIES_MAX; i++) {
            double u = rand_r (&seed) / (double)RAND_MAX;
            double v = pow (10, -15 + 35 * u);
            double t = round * 12096.0 + i * 12.096
                       + rand_r (&seed) / (double)RAND_MAX;
            if (rand_r (&seed) % 2)
                v = -v;
            if (i % 17 == 0)
                v = 0;
            tr_series_add (&s, t, v);
        }
        assert_int_equal (s.n, TR_SERIES_MAX);
        compare_with_tree (&s);
        tr_series_free (&s);
    }
}

static void test_text (void **state)
{
    static const double values[] = {
        0, 741376, 0.00012344, 1.5e-05, -2.5, 1e20, 123456789, 16.5, 9.99961,
    };
    static const double times[] = {
        0, 0.98700001, 11, 12.0021, 0.05, 0.0004, 0.0005, 604800.25, 3.1,
    };
    struct tr_series s;
    tr_strbuf_t sb = TR_STRBUF_INIT;

    (void)state;
    tr_series_init (&s);
    for (size_t i = 0; i < sizeof (values) / sizeof (values[0]); i++)
        tr_series_add (&s, times[i], values[i]);
    assert_int_equal (tr_series_text (&sb, &s, s.n), 0);
    assert_string_equal (tr_strbuf_str (&sb),
                         "{\"min\":[0.0,741400.0,0.0001234,1.5e-05,-2.5,1e+20,"
                         "123500000.0,16.5,10.0],\"mean\":[0.0,741400.0,"
                         "0.0001234,1.5e-05,-2.5,1e+20,123500000.0,16.5,10.0],"
                         "\"max\":[0.0,741400.0,0.0001234,1.5e-05,-2.5,1e+20,"
                         "123500000.0,16.5,10.0]}");
    tr_strbuf_reset (&sb);
    assert_int_equal (tr_series_times_text (&sb, &s, s.n), 0);
    assert_string_equal (tr_strbuf_str (&sb),
                         "[0.0,0.987,11.0,12.002,0.05,0.0,0.001,604800.25,3.1]");
    compare_with_tree (&s);

    /* the first n points only; n past the end is the whole series */
    tr_strbuf_reset (&sb);
    assert_int_equal (tr_series_times_text (&sb, &s, 2), 0);
    assert_string_equal (tr_strbuf_str (&sb), "[0.0,0.987]");
    tr_strbuf_reset (&sb);
    assert_int_equal (tr_series_text (&sb, &s, 0), 0);
    assert_string_equal (tr_strbuf_str (&sb),
                         "{\"min\":[],\"mean\":[],\"max\":[]}");
    tr_strbuf_reset (&sb);
    assert_int_equal (tr_series_times_text (&sb, &s, 1000), 0);
    assert_non_null (strstr (tr_strbuf_str (&sb), "604800.25,3.1]"));
    tr_series_free (&s);

    /* JSON has no NaN nor infinity: refused, not written */
    tr_series_init (&s);
    tr_series_add (&s, 0, 1);
    tr_series_add (&s, 1, INFINITY);
    tr_strbuf_reset (&sb);
    errno = 0;
    assert_int_equal (tr_series_text (&sb, &s, s.n), -1);
    assert_int_equal (errno, EINVAL);
    tr_series_free (&s);
    tr_strbuf_free (&sb);
}

static void test_real15 (void **state)
{
    char buf[32];

    (void)state;
    assert_int_equal (tr_series_real15 (buf, sizeof (buf), 1), 3);
    assert_string_equal (buf, "1.0");
    assert_true (tr_series_real15 (buf, sizeof (buf), 0.1 + 0.2) > 0);
    assert_string_equal (buf, "0.3");
    assert_true (tr_series_real15 (buf, sizeof (buf), 1e300) > 0);
    assert_string_equal (buf, "1e+300");
    assert_int_equal (tr_series_real15 (buf, sizeof (buf), NAN), -1);
    assert_int_equal (tr_series_real15 (buf, 8, 1), -1);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_grows_as_needed),
        cmocka_unit_test (test_merges_at_bound),
        cmocka_unit_test (test_round),
        cmocka_unit_test (test_json),
        cmocka_unit_test (test_text),
        cmocka_unit_test (test_text_reads_back),
        cmocka_unit_test (test_real15),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
