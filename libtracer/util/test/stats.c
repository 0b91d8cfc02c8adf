/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for stats.c: quantiles, medians and the order of numbers
 * with unknowns (NaN) last.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "libtracer/util/stats.h"

static int cmp (const void *a, const void *b)
{
    return tr_stats_cmp (*(const double *)a, *(const double *)b);
}

static void test_cmp (void **state)
{
    double v[] = { 3, NAN, -1, 2, NAN, 0 };

    (void)state;
    assert_int_equal (tr_stats_cmp (1, 2), -1);
    assert_int_equal (tr_stats_cmp (2, 1), 1);
    assert_int_equal (tr_stats_cmp (2, 2), 0);
    assert_int_equal (tr_stats_cmp (NAN, 1), 1);
    assert_int_equal (tr_stats_cmp (1, NAN), -1);
    assert_int_equal (tr_stats_cmp (NAN, NAN), 0);
    qsort (v, 6, sizeof (v[0]), cmp);
    assert_true (v[0] == -1 && v[1] == 0 && v[2] == 2 && v[3] == 3);
    assert_true (isnan (v[4]) && isnan (v[5]));
}

static void test_quantile (void **state)
{
    double v[] = { 5, 1, 4, 2, 3 };
    double w[] = { 1, NAN, 3 };

    (void)state;
    assert_true (tr_stats_median (v, 5) == 3);
    assert_true (tr_stats_min (v, 5) == 1);
    assert_true (tr_stats_max (v, 5) == 5);
    assert_int_equal (tr_stats_drop_nan (w, 3), 2);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_cmp),
        cmocka_unit_test (test_quantile),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
