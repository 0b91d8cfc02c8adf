/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for nss.c: lookups of root and nobody, which every system
 * has, and of a uid, gid and names that no system has.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/util/nss.h"

/* Ids and names that no passwd or group file holds. */
#define NO_ID ((uid_t)4294967290u)
#define NO_NAME "tracer-no-such-name-x9"

static void test_user (void **state)
{
    uid_t uid = 99;
    gid_t gid = 99;
    char *name = NULL;

    (void)state;
    assert_int_equal (tr_nss_user_by_name ("root", &uid, &gid), 0);
    assert_int_equal (uid, 0);
    assert_int_equal (gid, 0);
    assert_int_equal (tr_nss_user_by_uid (0, &name, NULL), 0);
    assert_string_equal (name, "root");
    free (name);

    assert_int_equal (tr_nss_user_by_name ("nobody", &uid, NULL), 0);
    assert_int_not_equal (uid, 0);
    assert_int_equal (tr_nss_user_by_uid (uid, &name, &gid), 0);
    assert_string_equal (name, "nobody");
    free (name);
    /* outputs may be NULL */
    assert_int_equal (tr_nss_user_by_name ("nobody", NULL, NULL), 0);
    assert_int_equal (tr_nss_user_by_uid (0, NULL, NULL), 0);
}

static void test_user_unknown (void **state)
{
    uid_t uid = 42;
    gid_t gid = 43;
    char *name = (char *)"untouched";

    (void)state;
    errno = 0;
    assert_int_equal (tr_nss_user_by_uid (NO_ID, &name, &gid), -1);
    assert_int_equal (errno, ENOENT);
    assert_string_equal (name, "untouched");
    assert_int_equal (gid, 43);
    errno = 0;
    assert_int_equal (tr_nss_user_by_name (NO_NAME, &uid, &gid), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (uid, 42);
    errno = 0;
    assert_int_equal (tr_nss_user_by_name (NULL, &uid, NULL), -1);
    assert_int_equal (errno, EINVAL);
}

static void test_group (void **state)
{
    gid_t gid = 99;
    char *name = NULL;

    (void)state;
    assert_int_equal (tr_nss_group_by_name ("root", &gid), 0);
    assert_int_equal (gid, 0);
    assert_int_equal (tr_nss_group_by_gid (0, &name), 0);
    assert_string_equal (name, "root");
    free (name);

    errno = 0;
    assert_int_equal (tr_nss_group_by_gid ((gid_t)NO_ID, &name), -1);
    assert_int_equal (errno, ENOENT);
    errno = 0;
    gid = 7;
    assert_int_equal (tr_nss_group_by_name (NO_NAME, &gid), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (gid, 7);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_user),
        cmocka_unit_test (test_user_unknown),
        cmocka_unit_test (test_group),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
