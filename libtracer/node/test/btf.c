/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The BTF reader (libtracer/node/btf.c) on a blob built here, laid out as the
 * kernel's: members found through typedefs and nested anonymous unions
 * and structs, array sizes and counts, signed, unsigned and 64-bit
 * enumerators; bit fields, missing names and damaged blobs refused with
 * the errno the header promises, never read past.  Then, where the
 * running kernel publishes its BTF, the members the exit filter walks.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>
#include <cmocka.h>

#include "libtracer/node/btf.h"

struct blob {
    unsigned char types[1024];
    size_t tlen;
    char strs[512];
    size_t slen;
};

static uint32_t str (struct blob *b, const char *s)
{
    uint32_t off = (uint32_t)b->slen;

    if (!*s)
        return 0;
    memcpy (b->strs + b->slen, s, strlen (s) + 1);
    b->slen += strlen (s) + 1;
    return off;
}

static void put (struct blob *b, const void *p, size_t n)
{
    memcpy (b->types + b->tlen, p, n);
    b->tlen += n;
}

static void type (struct blob *b,
                  const char *name,
                  uint32_t kind,
                  uint32_t vlen,
                  int kflag,
                  uint32_t size_or_type)
{
    struct btf_type t = {
        .name_off = str (b, name),
        .info = (kind << 24) | vlen | ((uint32_t)kflag << 31),
        .size = size_or_type,
    };
    put (b, &t, sizeof (t));
}

static void member (struct blob *b, const char *name, uint32_t t, uint32_t off)
{
    struct btf_member m = { .name_off = str (b, name),
                            .type = t,
                            .offset = off };
    put (b, &m, sizeof (m));
}

/* 1 int; 2 int *; 3 struct inner {int a; int *b;}; 4 union {int c;
 * struct inner;}; 5 int *[4]; 6 struct outer {int x; union ...; int
 * *arr[4];}; 7 typedef outer_t; 8 enum colour {RED = 0, BLUE = -5}
 * (signed); 9 struct bits {int f:3;}; 10 enum64 big {HUGE = 1 << 40};
 * 11 struct holder {outer_t o; const-less typedef'd member}
 */
static unsigned char *build (size_t *size)
{
    struct blob b = { .slen = 1 };
    struct btf_header h = { .magic = BTF_MAGIC,
                            .version = BTF_VERSION,
                            .hdr_len = sizeof (h) };
    unsigned char *out;
    uint32_t enc = 32; /* BTF_INT_BITS 32 */

    type (&b, "int", BTF_KIND_INT, 0, 0, 4);
    put (&b, &enc, 4);
    type (&b, "", BTF_KIND_PTR, 0, 0, 1);
    type (&b, "inner", BTF_KIND_STRUCT, 2, 0, 16);
    member (&b, "a", 1, 0);
    member (&b, "b", 2, 64);
    type (&b, "", BTF_KIND_UNION, 2, 0, 16);
    member (&b, "c", 1, 0);
    member (&b, "", 3, 0);
    type (&b, "", BTF_KIND_ARRAY, 0, 0, 0);
    {
        struct btf_array a = { .type = 2, .index_type = 1, .nelems = 4 };
        put (&b, &a, sizeof (a));
    }
    type (&b, "outer", BTF_KIND_STRUCT, 3, 0, 56);
    member (&b, "x", 1, 0);
    member (&b, "", 4, 64);
    member (&b, "arr", 5, 192);
    type (&b, "outer_t", BTF_KIND_TYPEDEF, 0, 0, 6);
    type (&b, "colour", BTF_KIND_ENUM, 2, 1, 4);
    {
        struct btf_enum e[2] = { { str (&b, "RED"), 0 },
                                 { str (&b, "BLUE"), -5 } };
        put (&b, e, sizeof (e));
    }
    type (&b, "bits", BTF_KIND_STRUCT, 1, 1, 4);
    member (&b, "f", 1, (3u << 24) | 0);
    type (&b, "big", BTF_KIND_ENUM64, 1, 0, 8);
    {
        struct btf_enum64 e = { str (&b, "HUGE"), 0, 1u << 8 };
        put (&b, &e, sizeof (e));
    }
    type (&b, "holder", BTF_KIND_STRUCT, 1, 0, 56);
    member (&b, "o", 7, 0);

    h.type_off = 0;
    h.type_len = (uint32_t)b.tlen;
    h.str_off = (uint32_t)b.tlen;
    h.str_len = (uint32_t)b.slen;
    *size = sizeof (h) + b.tlen + b.slen;
    out = malloc (*size);
    assert_non_null (out);
    memcpy (out, &h, sizeof (h));
    memcpy (out + sizeof (h), b.types, b.tlen);
    memcpy (out + sizeof (h) + b.tlen, b.strs, b.slen);
    return out;
}

static void test_members (void **state)
{
    size_t size, off, msize;
    uint32_t ne;
    unsigned char *data = build (&size);
    tr_error_t err;
    tr_btf_t *btf = tr_btf_parse (data, size, &err);

    (void)state;
    assert_non_null (btf);
    assert_int_equal (tr_btf_member (btf, "outer", "x", &off, &msize, &ne), 0);
    assert_int_equal (off, 0);
    assert_int_equal (msize, 4);
    /* through the anonymous union */
    assert_int_equal (tr_btf_member (btf, "outer", "c", &off, &msize, NULL), 0);
    assert_int_equal (off, 8);
    assert_int_equal (msize, 4);
    /* and the anonymous struct inside it */
    assert_int_equal (tr_btf_member (btf, "outer", "b", &off, &msize, &ne), 0);
    assert_int_equal (off, 16);
    assert_int_equal (msize, 8);
    assert_int_equal (ne, 0);
    assert_int_equal (tr_btf_member (btf, "outer", "arr", &off, &msize, &ne),
                      0);
    assert_int_equal (off, 24);
    assert_int_equal (msize, 32);
    assert_int_equal (ne, 4);
    /* a typedef'd member resolves to its struct's size */
    assert_int_equal (tr_btf_member (btf, "holder", "o", &off, &msize, NULL),
                      0);
    assert_int_equal (msize, 56);
    /* what is not there */
    errno = 0;
    assert_int_equal (tr_btf_member (btf, "outer", "nope", &off, NULL, NULL),
                      -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (tr_btf_member (btf, "outer_t", "x", &off, NULL, NULL),
                      -1); /* a typedef's name is not a struct's */
    assert_int_equal (errno, ENOENT);
    assert_int_equal (tr_btf_member (btf, "bits", "f", &off, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    tr_btf_free (btf);
    free (data);
}

static void test_enums (void **state)
{
    size_t size;
    int64_t v;
    unsigned char *data = build (&size);
    tr_error_t err;
    tr_btf_t *btf = tr_btf_parse (data, size, &err);

    (void)state;
    assert_non_null (btf);
    assert_int_equal (tr_btf_enum_value (btf, "colour", "RED", &v), 0);
    assert_int_equal (v, 0);
    assert_int_equal (tr_btf_enum_value (btf, "colour", "BLUE", &v), 0);
    assert_int_equal (v, -5);
    assert_int_equal (tr_btf_enum_value (btf, "big", "HUGE", &v), 0);
    assert_true (v == (int64_t)1 << 40);
    assert_int_equal (tr_btf_enum_value (btf, "colour", "GREEN", &v), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (tr_btf_enum_value (btf, "outer", "x", &v), -1);
    assert_int_equal (errno, ENOENT);
    tr_btf_free (btf);
    free (data);
}

/* Every cut of the blob, a wrong magic, a section past the end and an
 * unknown kind: refused (EINVAL), nothing read past the data (ASan and
 * valgrind runs of this test say so).
 */
static void test_damaged (void **state)
{
    size_t size;
    unsigned char *data = build (&size);
    struct btf_header h;
    tr_error_t err;
    tr_btf_t *btf;

    (void)state;
    for (size_t cut = 0; cut < size; cut++) {
        unsigned char *part = malloc (cut ? cut : 1);
        assert_non_null (part);
        memcpy (part, data, cut);
        btf = tr_btf_parse (part, cut, &err);
        if (btf) {
            /* a cut in the string section leaves valid types */
            size_t off;
            (void)tr_btf_member (btf, "outer", "arr", &off, NULL, NULL);
            tr_btf_free (btf);
        }
        else
            assert_int_equal (errno, EINVAL);
        free (part);
    }
    memcpy (&h, data, sizeof (h));
    data[0] ^= 0xff;
    assert_null (tr_btf_parse (data, size, &err));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (err.text, "not BTF"));
    data[0] ^= 0xff;
    h.str_len += 1000;
    memcpy (data, &h, sizeof (h));
    assert_null (tr_btf_parse (data, size, &err));
    assert_int_equal (errno, EINVAL);
    h.str_len -= 1000;
    memcpy (data, &h, sizeof (h));
    /* the first type's kind set to 31 */
    data[sizeof (h) + 7] = 31;
    assert_null (tr_btf_parse (data, size, &err));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (err.text, "unknown kind"));
    free (data);
    assert_null (tr_btf_load ("/nonexistent/btf", &err));
    assert_int_equal (errno, ENOENT);
}

/* The running kernel's, where it publishes it: what the exit filter's
 * v1 walk reads.
 */
static void test_kernel (void **state)
{
    tr_error_t err;
    tr_btf_t *btf;
    size_t off, size;
    uint32_t ne;
    int64_t v;

    (void)state;
    if (access ("/sys/kernel/btf/vmlinux", R_OK) < 0) {
        print_message ("# no /sys/kernel/btf/vmlinux\n");
        skip ();
    }
    btf = tr_btf_load ("/sys/kernel/btf/vmlinux", &err);
    if (!btf)
        fail_msg ("%s", err.text);
    assert_int_equal (tr_btf_member (btf, "task_struct", "cgroups", &off, &size,
                                     NULL),
                      0);
    assert_int_equal (size, 8);
    assert_true (off > 0);
    assert_int_equal (tr_btf_member (btf, "css_set", "subsys", &off, &size,
                                     &ne),
                      0);
    assert_true (ne > 0);
    assert_int_equal (size, (size_t)ne * 8);
    assert_int_equal (tr_btf_member (btf, "cgroup", "ancestors", &off, &size,
                                     NULL),
                      0);
    assert_int_equal (tr_btf_member (btf, "kernfs_node", "id", &off, &size,
                                     NULL),
                      0);
    assert_int_equal (size, 8);
    assert_int_equal (tr_btf_enum_value (btf, "cgroup_subsys_id",
                                         "memory_cgrp_id", &v),
                      0);
    assert_true (v >= 0 && v < (int64_t)ne);
    tr_btf_free (btf);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_members),
        cmocka_unit_test (test_enums),
        cmocka_unit_test (test_damaged),
        cmocka_unit_test (test_kernel),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
