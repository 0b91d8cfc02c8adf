/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for series.c: points allocated as they come, merging in
 * pairs at the bound with min, mean and max kept exact, values rounded
 * to TR_SERIES_DIGITS significant digits (and printed short), times to
 * milliseconds.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "series.h"

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

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_grows_as_needed),
        cmocka_unit_test (test_merges_at_bound),
        cmocka_unit_test (test_round),
        cmocka_unit_test (test_json),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
