/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for units.c: every form a byte count or a duration takes in
 * any view, at the edges of each unit.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "libtracer/util/units.h"

static void test_bytes (void **state)
{
    char b[32];
    (void)state;
    assert_string_equal (tr_units_bytes (b, sizeof (b), 0), "0 B");
    assert_string_equal (tr_units_bytes (b, sizeof (b), 1023), "1023 B");
    assert_string_equal (tr_units_bytes (b, sizeof (b), 1024), "1.0 KiB");
    assert_string_equal (tr_units_bytes (b, sizeof (b), 4187593113.0), "3.9 "
                                                                       "GiB");
    assert_string_equal (tr_units_bytes (b, sizeof (b), 1099511627776.0 * 2),
                         "2.0 TiB");
}

static void test_bytes_short (void **state)
{
    char b[32];
    (void)state;
    assert_string_equal (tr_units_bytes_short (b, sizeof (b), 512), "512B");
    assert_string_equal (tr_units_bytes_short (b, sizeof (b), 4187593113.0),
                         "3.9G");
    assert_string_equal (tr_units_bytes_short (b, sizeof (b), 12884901888.0),
                         "12G");
    assert_string_equal (tr_units_bytes_short (b, sizeof (b), 1048576), "1.0M");
}

static void test_bytes_sacct (void **state)
{
    char b[32];
    (void)state;
    assert_string_equal (tr_units_bytes_exact (b, sizeof (b), 1000000), "977K");
    assert_string_equal (tr_units_bytes_exact (b, sizeof (b), 1536.0 * 1048576),
                         "1536M");
    assert_string_equal (tr_units_bytes_exact (b, sizeof (b), 8192.0 * 1048576),
                         "8G");
    assert_string_equal (tr_units_bytes_sacct (b, sizeof (b), 1000), "1000");
    assert_string_equal (tr_units_bytes_sacct (b, sizeof (b), 4187593113.0),
                         "3.90G");
    assert_string_equal (tr_units_bytes_sacct (b, sizeof (b), 41875931136.0),
                         "39.0G");
    assert_string_equal (tr_units_bytes_sacct (b, sizeof (b), 418759311360.0),
                         "390G");
}

static void test_duration (void **state)
{
    char b[48];
    (void)state;
    assert_string_equal (tr_units_duration (b, sizeof (b), -3), "00:00:00");
    assert_string_equal (tr_units_duration (b, sizeof (b), 59.6), "00:01:00");
    assert_string_equal (tr_units_duration (b, sizeof (b), 86399), "23:59:59");
    assert_string_equal (tr_units_duration (b, sizeof (b), 90061), "1-01:01:"
                                                                   "01");
    assert_string_equal (tr_units_duration_words (b, sizeof (b), 12.5), "12.5 "
                                                                        "s");
    assert_string_equal (tr_units_duration_words (b, sizeof (b), 187), "3 min "
                                                                       "07 s");
    assert_string_equal (tr_units_duration_words (b, sizeof (b), 7500), "2 h "
                                                                        "05 "
                                                                        "min");
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_bytes),
        cmocka_unit_test (test_bytes_short),
        cmocka_unit_test (test_bytes_sacct),
        cmocka_unit_test (test_duration),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
