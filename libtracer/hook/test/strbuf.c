/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for tr_strbuf and the hook settings parsers (hookconf.c):
 * the two pieces of libtracer that run inside slurmstepd.
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

#include "libtracer/hook/hookconf.h"
#include "libtracer/util/strbuf.h"

static void test_strbuf_grows (void **state)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char *s;

    assert_string_equal (tr_strbuf_str (&sb), "");
    for (int i = 0; i < 1000; i++)
        assert_int_equal (tr_strbuf_printf (&sb, "%d,", i % 10), 0);
    assert_int_equal (sb.len, 2000);
    assert_int_equal (strncmp (tr_strbuf_str (&sb), "0,1,2,", 6), 0);
    assert_int_equal (tr_strbuf_append (&sb, "xyz", 2), 0);
    assert_int_equal (sb.len, 2002);
    assert_string_equal (tr_strbuf_str (&sb) + 2000, "xy");
    tr_strbuf_reset (&sb);
    assert_string_equal (tr_strbuf_str (&sb), "");
    assert_int_equal (tr_strbuf_puts (&sb, "abc"), 0);
    s = tr_strbuf_steal (&sb);
    assert_string_equal (s, "abc");
    assert_null (sb.buf);
    free (s);
    s = tr_strbuf_steal (&sb);
    assert_string_equal (s, "");
    free (s);
    tr_strbuf_free (&sb);
}

static void test_strbuf_refuses_absurd_size (void **state)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;

    assert_int_equal (tr_strbuf_puts (&sb, "keep"), 0);
    assert_int_equal (tr_strbuf_append (&sb, "x", (size_t)-1 / 2), -1);
    assert_int_equal (errno, ENOMEM);
    assert_string_equal (tr_strbuf_str (&sb), "keep");
    tr_strbuf_free (&sb);
}

struct spec_case {
    const char *spec;
    int rc;
    int state;
    double interval;
    const char *tags;     /* compact JSON of the tags, or an error text */
};

static const struct spec_case spec_cases[] = {
    { NULL, 0, 1, 0, "{}" },
    { "", 0, 1, 0, "{}" },
    { "on", 0, 1, 0, "{}" },
    { "off", 0, 0, 0, "{}" },
    { "interval=2.5", 0, 1, 2.5, "{}" },
    { "tag=pipeline:rnaseq,sample:S1,on", 0, 1, 0,
      "{\"pipeline\": \"rnaseq\", \"sample\": \"S1\"}" },
    { "off,tag=a:b", 0, 0, 0, "{\"a\": \"b\"}" },
    { "tag=step:align,interval=0.5", 0, 1, 0.5, "{\"step\": \"align\"}" },
    { "interval=0.01", -1, 0, 0,
      "interval: expected seconds in [0.1, 3600], got '0.01'" },
    { "interval=abc", -1, 0, 0,
      "interval: expected seconds in [0.1, 3600], got 'abc'" },
    { "bogus;rm -rf /", -1, 0, 0,
      "unknown item 'bogus;rm -rf /' (expected on, off, interval=SECONDS "
      "or tag=KEY:VALUE)" },
    { "tag=a:$(reboot)", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=bad key:v", -1, 0, 0,
      "tag key 'bad key': use 1-64 of A-Z a-z 0-9 _ . -" },
    { "tag=novalue", -1, 0, 0, "tag 'novalue': expected KEY:VALUE" },
    { "on\n\x1b[31mfake", -1, 0, 0,
      "unknown item 'on??[31mfake' (expected on, off, interval=SECONDS or "
      "tag=KEY:VALUE)" },
    { "a:b", -1, 0, 0,
      "unknown item 'a:b' (expected on, off, interval=SECONDS or "
      "tag=KEY:VALUE)" },
    /* bytes that are not UTF-8, and UTF-8 that is not ASCII: refused,
     * and never copied into the message
     */
    { "tag=a:\xff", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=a:Z\xc3\xbcrich", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=k\xc3\xa9:v", -1, 0, 0,
      "tag key 'k?\?': use 1-64 of A-Z a-z 0-9 _ . -" },
    { "tag=a:b,\xfe\xff:c", -1, 0, 0,
      "tag key '?\?': use 1-64 of A-Z a-z 0-9 _ . -" },
    { "\xff\xfe", -1, 0, 0,
      "unknown item '?\?' (expected on, off, interval=SECONDS or "
      "tag=KEY:VALUE)" },
    { "interval=1\xff", -1, 0, 0,
      "interval: expected seconds in [0.1, 3600], got '1?'" },
    /* more shell and markup specials, each alone */
    { "tag=a:`id`", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=a:x|sh", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=a:x&&y", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=a:<b>", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=a:'x'", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=a:x\\y", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    { "tag=a:x y", -1, 0, 0,
      "tag 'a': value must be 0-256 printable characters without quotes or "
      "shell specials" },
    /* huge and odd numbers */
    { "interval=1e999", -1, 0, 0,
      "interval: expected seconds in [0.1, 3600], got '1e999'" },
    { "interval=nan", -1, 0, 0,
      "interval: expected seconds in [0.1, 3600], got 'nan'" },
    { "interval=3600.0000001", -1, 0, 0,
      "interval: expected seconds in [0.1, 3600], got '3600.0000001'" },
    { "interval=3600", 0, 1, 3600, "{}" },
};

static void test_spec_table (void **state)
{
    for (size_t i = 0; i < sizeof (spec_cases) / sizeof (spec_cases[0]); i++) {
        const struct spec_case *c = &spec_cases[i];
        struct tr_spec s = { .state = 42 };
        tr_error_t error;
        int rc;

        tr_error_clear (&error);
        rc = tr_spec_parse (c->spec, &s, &error);
        print_message ("case %zu -> %d\n", i, rc);
        assert_int_equal (rc, c->rc);
        if (rc == 0) {
            char *tags = json_dumps (s.tags, JSON_SORT_KEYS);
            assert_int_equal (s.state, c->state);
            assert_true (s.interval_s == c->interval);
            assert_string_equal (tags, c->tags);
            free (tags);
            tr_spec_release (&s);
        }
        else {
            assert_int_equal (errno, EINVAL);
            assert_int_equal (s.state, 42);  /* untouched on failure */
            assert_string_equal (error.text, c->tags);
        }
    }
}

static void test_spec_too_long (void **state)
{
    char spec[TR_SPEC_MAX + 2];
    struct tr_spec s;
    tr_error_t error;

    memset (spec, 'a', sizeof (spec) - 1);
    spec[sizeof (spec) - 1] = '\0';
    assert_int_equal (tr_spec_parse (spec, &s, &error), -1);
    assert_string_equal (error.text, "specification longer than 1024 bytes");
}

/* Tag values up to 256 bytes and keys up to 64 are kept whole; one byte
 * more is refused, and a huge item is shown cut to 64 bytes.
 */
static void test_spec_bounds (void **state)
{
    char spec[TR_SPEC_MAX + 1], want[128];
    struct tr_spec s = { .state = 42 };
    tr_error_t error;
    const char *v;

    (void)state;
    snprintf (spec, sizeof (spec), "tag=k:%0256d", 7);
    assert_int_equal (tr_spec_parse (spec, &s, &error), 0);
    assert_non_null (v = json_string_value (json_object_get (s.tags, "k")));
    assert_int_equal (strlen (v), 256);
    tr_spec_release (&s);
    snprintf (spec, sizeof (spec), "tag=k:%0257d", 7);
    s.state = 42;
    assert_int_equal (tr_spec_parse (spec, &s, &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (s.state, 42);
    assert_string_equal (error.text,
                         "tag 'k': value must be 0-256 printable characters "
                         "without quotes or shell specials");
    snprintf (spec, sizeof (spec), "tag=%064d:v", 1);
    assert_int_equal (tr_spec_parse (spec, &s, &error), 0);
    tr_spec_release (&s);
    snprintf (spec, sizeof (spec), "tag=%065d:v", 1);
    assert_int_equal (tr_spec_parse (spec, &s, &error), -1);
    snprintf (want, sizeof (want),
              "tag key '%064d': use 1-64 of A-Z a-z 0-9 _ . -", 0);
    assert_string_equal (error.text, want);
    memset (spec, 'x', TR_SPEC_MAX);
    spec[TR_SPEC_MAX] = '\0';
    assert_int_equal (tr_spec_parse (spec, &s, &error), -1);
    snprintf (want, sizeof (want), "unknown item '%.64s' (expected", spec);
    assert_int_equal (strncmp (error.text, want, strlen (want)), 0);
}

static void test_too_many_tags (void **state)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    struct tr_spec s;
    tr_error_t error;

    tr_strbuf_puts (&sb, "tag=k0:v");
    for (int i = 1; i < 65; i++)
        tr_strbuf_printf (&sb, ",k%d:v", i);
    assert_int_equal (tr_spec_parse (tr_strbuf_str (&sb), &s, &error), -1);
    assert_string_equal (error.text, "too many tags (at most 64)");
    tr_strbuf_free (&sb);
}

static void test_enabled (void **state)
{
    struct tr_hookconf conf;
    struct tr_spec unset = { .state = -1 }, on = { .state = 1 };
    struct tr_spec off = { .state = 0 };

    tr_hookconf_init (&conf);
    assert_false (tr_spec_enabled (&conf, &unset));   /* opt-in default */
    assert_true (tr_spec_enabled (&conf, &on));
    conf.enable = TR_ENABLE_ALL;
    assert_true (tr_spec_enabled (&conf, &unset));
    assert_false (tr_spec_enabled (&conf, &off));     /* opt-out allowed */
    conf.allow_optout = false;
    assert_true (tr_spec_enabled (&conf, &off));
}

struct args_case {
    const char *args[3];
    const char *error;   /* NULL: accepted */
};

static const struct args_case args_cases[] = {
    { { "enable=all", "allow_optout=no", NULL }, NULL },
    { { "socket=/run/x.sock", "timeout=250", "interval=0.5" }, NULL },
    { { "enable=sometimes", NULL, NULL },
      "argument 'enable=sometimes': invalid value" },
    { { "socket=relative.sock", NULL, NULL },
      "argument 'socket=relative.sock': invalid value" },
    { { "timeout=0", NULL, NULL }, "argument 'timeout=0': invalid value" },
    { { "extern=no", NULL, NULL }, NULL },
    { { "extern=maybe", NULL, NULL },
      "argument 'extern=maybe': invalid value" },
    { { "conf=/etc/x", NULL, NULL }, "unknown argument 'conf'" },
    { { "verbose", NULL, NULL }, "argument 'verbose': expected key=value" },
};

static void test_args_table (void **state)
{
    for (size_t i = 0; i < sizeof (args_cases) / sizeof (args_cases[0]); i++) {
        const struct args_case *c = &args_cases[i];
        struct tr_hookconf conf;
        tr_error_t error;
        int ac = 0, rc;

        while (ac < 3 && c->args[ac])
            ac++;
        tr_hookconf_init (&conf);
        rc = tr_hookconf_parse_args (&conf, ac, (char **)c->args, &error);
        if (!c->error) {
            assert_int_equal (rc, 0);
            continue;
        }
        assert_int_equal (rc, -1);
        assert_string_equal (error.text, c->error);
        /* a failed parse leaves the defaults in place */
        assert_int_equal (conf.enable, TR_ENABLE_OPTIN);
        assert_int_equal (conf.timeout_ms, TR_HOOK_DEFAULT_TIMEOUT_MS);
    }
}

static void test_args_values (void **state)
{
    struct tr_hookconf conf;
    char *av[] = { "enable=all", "allow_optout=no", "socket=/run/t.sock",
                   "timeout=250", "interval=0.5" };

    char *ext[] = { "extern=no" };

    tr_hookconf_init (&conf);
    assert_true (conf.trace_extern);
    assert_int_equal (tr_hookconf_parse_args (&conf, 1, ext, NULL), 0);
    assert_false (conf.trace_extern);
    tr_hookconf_init (&conf);
    assert_int_equal (tr_hookconf_parse_args (&conf, 5, av, NULL), 0);
    assert_true (conf.trace_extern);
    assert_int_equal (conf.enable, TR_ENABLE_ALL);
    assert_false (conf.allow_optout);
    assert_string_equal (conf.socket, "/run/t.sock");
    assert_int_equal (conf.timeout_ms, 250);
    assert_true (conf.interval_s == 0.5);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_strbuf_grows),
        cmocka_unit_test (test_strbuf_refuses_absurd_size),
        cmocka_unit_test (test_spec_table),
        cmocka_unit_test (test_spec_too_long),
        cmocka_unit_test (test_spec_bounds),
        cmocka_unit_test (test_too_many_tags),
        cmocka_unit_test (test_enabled),
        cmocka_unit_test (test_args_table),
        cmocka_unit_test (test_args_values),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
