/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for json.c: each getter on a present member, a missing one,
 * one of the wrong type and a NULL or non-object container.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "libtracer/util/json.h"

static json_t *sample (void)
{
    json_t *o = json_pack ("{s:s s:i s:f s:n s:s}", "s", "text", "i", 7, "r",
                           2.5, "null", "empty", "");

    assert_non_null (o);
    return o;
}

static void test_str (void **state)
{
    json_t *o = sample ();

    (void)state;
    assert_string_equal (tr_json_str (o, "s"), "text");
    assert_string_equal (tr_json_str (o, "empty"), "");
    assert_null (tr_json_str (o, "missing"));
    assert_null (tr_json_str (o, "i"));
    assert_null (tr_json_str (NULL, "s"));
    assert_string_equal (tr_json_str_or (o, "s", "?"), "text");
    assert_string_equal (tr_json_str_or (o, "empty", "?"), "");
    assert_string_equal (tr_json_str_or (o, "missing", "?"), "?");
    assert_string_equal (tr_json_str_or (o, "null", ""), "");
    assert_null (tr_json_str_or (o, "r", NULL));
    json_decref (o);
}

static void test_num (void **state)
{
    json_t *o = sample ();
    json_t *a = json_array ();

    (void)state;
    assert_true (tr_json_num (o, "i") == 7.0);
    assert_true (tr_json_num (o, "r") == 2.5);
    assert_true (isnan (tr_json_num (o, "s")));
    assert_true (isnan (tr_json_num (o, "missing")));
    assert_true (isnan (tr_json_num (NULL, "i")));
    assert_true (isnan (tr_json_num (a, "i")));
    assert_true (tr_json_num_or (o, "r", 0) == 2.5);
    assert_true (tr_json_num_or (o, "missing", 0) == 0.0);
    assert_true (tr_json_num_or (o, "null", -1) == -1.0);
    json_decref (a);
    json_decref (o);
}

static void test_int (void **state)
{
    json_t *o = sample ();
    json_int_t v = 99;

    (void)state;
    assert_true (tr_json_int (o, "i", &v));
    assert_int_equal (v, 7);
    v = 99;
    assert_false (tr_json_int (o, "r", &v));
    assert_false (tr_json_int (o, "missing", &v));
    assert_false (tr_json_int (NULL, "i", &v));
    assert_int_equal (v, 99);
    assert_true (tr_json_int (o, "i", NULL));
    assert_int_equal (tr_json_int_or (o, "i", -1), 7);
    assert_int_equal (tr_json_int_or (o, "r", -1), -1);
    assert_int_equal (tr_json_int_or (o, "missing", 0), 0);
    json_decref (o);
}

static void test_set_num (void **state)
{
    json_t *o = json_object ();

    (void)state;
    assert_int_equal (tr_json_set_num (o, "bytes", 4294967296.0), 0);
    assert_true (json_is_integer (json_object_get (o, "bytes")));
    assert_int_equal (json_integer_value (json_object_get (o, "bytes")),
                      4294967296LL);
    assert_int_equal (tr_json_set_num (o, "frac", 0.25), 0);
    assert_true (json_is_real (json_object_get (o, "frac")));
    /* unknown is left out, never 0 */
    assert_int_equal (tr_json_set_num (o, "nan", NAN), 0);
    assert_int_equal (tr_json_set_num (o, "inf", INFINITY), 0);
    assert_null (json_object_get (o, "nan"));
    assert_null (json_object_get (o, "inf"));
    /* beyond 2^53 a double is no exact integer: a real */
    assert_int_equal (tr_json_set_num (o, "big", 1e300), 0);
    assert_true (json_is_real (json_object_get (o, "big")));
    assert_int_equal (tr_json_set_num (NULL, "x", 1), -1);
    json_decref (o);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_str),
        cmocka_unit_test (test_num),
        cmocka_unit_test (test_int),
        cmocka_unit_test (test_set_num),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
