/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for when.c: every time format sacct's -S/-E take, with the
 * expected instant written out (computed independently, in UTC), every
 * error with its message, a zone with daylight saving time, and the -j
 * job selectors: every form, matching, the limits at and one past their
 * bound, and an allocation failure sweep.  Times are parsed against a
 * fixed 'now' in a fixed zone so that the results do not depend on the
 * host or the day.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "libtracer/record/when.h"

/* 2024-03-15T12:34:56Z, a Friday: the 'now' of most cases. */
#define NOW ((time_t)1710506096)

/* Europe/Berlin's rules as a POSIX TZ string, so that the test needs no
 * tzdata: CET (UTC+1), CEST (UTC+2) from the last Sunday of March 02:00
 * to the last Sunday of October 03:00.
 */
#define BERLIN "CET-1CEST,M3.5.0,M10.5.0/3"

static void set_tz (const char *tz)
{
    assert_int_equal (setenv ("TZ", tz, 1), 0);
    tzset ();
}

/* ---------------------------------------------------------------------
 * Times
 */

struct time_case {
    const char *in;
    time_t now;      /* 0: NOW */
    time_t expected; /* in UTC */
};

static const struct time_case utc_cases[] = {
    /* YYYY-MM-DD[THH:MM[:SS]] */
    { "2024-01-02", 0, 1704153600 },
    { "2024-01-02T10:20", 0, 1704190800 },
    { "2024-01-02T10:20:30", 0, 1704190830 },
    { "2024-01-2", 0, 1704153600 },
    { "2024-01-02 10:20", 0, 1704190800 },
    { "2024-01-02-10:20", 0, 1704190800 },
    { "2024-02-29", 0, 1709164800 },
    { "2024-12-31T23:59:59", 0, 1735689599 },
    { "1970-01-01", 0, 0 },
    { "1970-01-01T00:00:00", 0, 0 },
    { "9999-12-31T23:59:59", 0, (time_t)253402300799LL },
    /* MMDD[YY], MM/DD[/YY], MM.DD[.YY]; without a year, a month later
     * than March is last year's (sacct looks into the past), and only
     * the month counts: 03/20 is five days ahead, this year.
     */
    { "0102", 0, 1704153600 },
    { "010224", 0, 1704153600 },
    { "01/02", 0, 1704153600 },
    { "01/02/24", 0, 1704153600 },
    { "01.02", 0, 1704153600 },
    { "01.02.24", 0, 1704153600 },
    { "1/2", 0, 1704153600 },
    { "1.2", 0, 1704153600 },
    { "01/0224", 0, 1704153600 },
    { "01/02/00", 0, 946771200 },
    { "9/9/99", 0, 4092595200 },
    { "1225", 0, 1703462400 },
    { "12/25", 0, 1703462400 },
    { "0315", 0, 1710460800 },
    { "0320", 0, 1710892800 },
    { "123", 0, 1701561600 }, /* greedy month: December 3 */
    { "112", 0, 1698883200 }, /* November 2 */
    { "1231", 0, 1703980800 },
    { "01/02-10:20", 0, 1704190800 },
    { "0102-10:20:30", 0, 1704190830 },
    { "0229", 0, 1709164800 }, /* 2024 is a leap year */
    /* HH:MM[:SS] [AM|PM]: today, even when later than now */
    { "10:20", 0, 1710498000 },
    { "23:59:59", 0, 1710547199 },
    { "1:05", 0, 1710464700 },
    { "00:00", 0, 1710460800 },
    { "10:20pm", 0, 1710541200 },
    { "10:20 PM", 0, 1710541200 },
    { "10:20 am", 0, 1710498000 },
    { "12:00am", 0, 1710460800 },
    { "12:00pm", 0, 1710504000 },
    { "12:30AM", 0, 1710462600 },
    { "0:30pm", 0, 1710505800 },
    { "11:59pm", 0, 1710547140 },
    { "11:59 am", 0, 1710503940 },
    { "T10:20", 0, 1710498000 },
    { " 10:20 ", 0, 1710498000 },
    /* keywords, any case */
    { "today", 0, 1710460800 },
    { "Today", 0, 1710460800 },
    { "TOMORROW", 0, 1710547200 },
    { "tomorrow", 0, 1710547200 },
    { "midnight", 0, 1710460800 },
    { "noon", 0, 1710504000 },
    { "elevenses", 0, 1710500400 },
    { "fika", 0, 1710514800 },
    { "teatime", 0, 1710518400 },
    { "Teatime", 0, 1710518400 },
    { "tomorrow noon", 0, 1710590400 },
    { "noon tomorrow", 0, 1710590400 },
    { "today 10:20", 0, 1710498000 },
    { "tomorrow-10:00", 0, 1710583200 },
    { "2024-01-02 noon", 0, 1704196800 },
    /* tomorrow across the end of a month, a leap February and a year */
    { "tomorrow", 1735646400, 1735689600 },
    { "tomorrow", 1709121600, 1709164800 },
    { "tomorrow", 1677585600, 1677628800 },
    /* a later token replaces what an earlier one set */
    { "noon 10:20", 0, 1710498000 },
    { "0101 0102", 0, 1704153600 },
    /* now[{+|-}N[UNIT]] */
    { "now", 0, NOW },
    { "NOW", 0, NOW },
    { "now+5", 0, NOW + 5 },
    { "now-5", 0, NOW - 5 },
    { "now+0", 0, NOW },
    { "now+1second", 0, NOW + 1 },
    { "now+5seconds", 0, NOW + 5 },
    { "now+1minute", 0, NOW + 60 },
    { "now+2minutes", 0, NOW + 120 },
    { "now+1hour", 0, NOW + 3600 },
    { "now-3hours", 0, NOW - 10800 },
    { "now+1day", 0, NOW + 86400 },
    { "now-2days", 0, NOW - 172800 },
    { "now+1week", 0, NOW + 604800 },
    { "now-2weeks", 0, NOW - 1209600 },
    { "now + 2 hours", 0, NOW + 7200 },
    { "now+5 minutes", 0, NOW + 300 },
    { "NOW+3DAYS", 0, NOW + 259200 },
    { "now+1Week", 0, NOW + 604800 },
    { "now-1710506096", 0, 0 },
    { "now+1day noon", 0, 1710590400 },
    { "noon now", 0, NOW },
    { "-now", 0, NOW },
    /* uts<N> */
    { "uts1700000000", 0, 1700000000 },
    { "UTS1000000", 0, 1000000 },
    { "uts253402300799", 0, (time_t)253402300799LL },
};

static void check_time_cases (const struct time_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tr_error_t error = { .text = "" };
        time_t out = -42;
        int rc;

        rc = tr_when_parse (c[i].in, c[i].now ? c[i].now : NOW, false, &out,
                            &error);
        if (rc != 0 || out != c[i].expected)
            fail_msg ("'%s': rc %d, got %lld, expected %lld (%s)", c[i].in, rc,
                      (long long)out, (long long)c[i].expected, error.text);
    }
}

static void test_time_formats (void **state)
{
    (void)state;
    set_tz ("UTC");
    check_time_cases (utc_cases, sizeof (utc_cases) / sizeof (utc_cases[0]));
}

/* sacct reads -E like -S: a bare date is 00:00:00 of that day. */
static void test_time_end (void **state)
{
    static const char *inputs[] = { "2024-01-02", "01/02", "today",
                                    "tomorrow",   "10:20", "now+1day" };

    (void)state;
    set_tz ("UTC");
    for (size_t i = 0; i < sizeof (inputs) / sizeof (inputs[0]); i++) {
        time_t start = -1, end = -2;

        assert_int_equal (tr_when_parse (inputs[i], NOW, false, &start, NULL),
                          0);
        assert_int_equal (tr_when_parse (inputs[i], NOW, true, &end, NULL), 0);
        assert_true (start == end);
    }
    {
        time_t end = -1;

        assert_int_equal (tr_when_parse ("2024-01-02", NOW, true, &end, NULL),
                          0);
        assert_true (end == 1704153600);
    }
}

struct time_error {
    const char *in;
    time_t now;          /* 0: NOW */
    const char *message; /* a substring of the message */
};

static const struct time_error time_errors[] = {
    /* nothing */
    { "", 0, "no date or time given; expected YYYY-MM-DD" },
    { "   ", 0, "no date or time given" },
    { "-", 0, "no date or time given" },
    { "T", 0, "no date or time given" },
    /* out of range */
    { "13/01", 0, "month 13 out of range 1-12" },
    { "00/10", 0, "month 0 out of range 1-12" },
    { "1301", 0, "month 13 out of range 1-12" },
    { "2024-13-01", 0, "month 13 out of range 1-12" },
    { "2024-00-10", 0, "month 0 out of range 1-12" },
    { "01/32", 0, "day 32 out of range 1-31" },
    { "01/00", 0, "day 0 out of range 1-31" },
    { "2024-01-32", 0, "day 32 out of range 1-31" },
    { "2024-01-00", 0, "day 0 out of range 1-31" },
    { "12345", 0, "day 34 out of range 1-31" },
    { "02/30", 0, "2024-02 has no day 30" },
    { "04/31/24", 0, "2024-04 has no day 31" },
    { "2023-02-29", 0, "2023-02 has no day 29" },
    { "0229", 1677585600, "2023-02 has no day 29" },
    { "25:00", 0, "hour 25 out of range 0-23" },
    { "24:00", 0, "hour 24 out of range 0-23" },
    { "10:60", 0, "minute 60 out of range 0-59" },
    { "10:00:60", 0, "second 60 out of range 0-59" },
    { "2024-01-02T25:00", 0, "hour 25 out of range 0-23" },
    { "13:00pm", 0, "hour 13 with PM" },
    { "13:00am", 0, "hour 13 with AM" },
    { "1969-12-31", 0, "year 1969 before 1970" },
    { "0000-01-01", 0, "year 0 before 1970" },
    /* malformed */
    { "10:5", 0, "expected HH:MM[:SS]" },
    { "10:", 0, "expected HH:MM[:SS]" },
    { "10:00:5", 0, "expected two digits of seconds" },
    { "2024-1-2", 0, "expected YYYY-MM-DD at '2024-1-2'" },
    { "2024-0x-02", 0, "expected YYYY-MM-DD" },
    { "1", 0, "expected MMDD[YY], MM/DD[/YY] or MM.DD[.YY]" },
    { "1/2/3", 0, "expected a two-digit year" },
    { "01022024", 0, "'010220' is followed by '2'" },
    { "10:20pmx", 0, "'10:20pm' is followed by 'x'" },
    { "todayx", 0, "'today' is followed by 'x'" },
    { "yesterday", 0, "unexpected 'yesterday'; expected" },
    { "@1700000000", 0, "unexpected '@1700000000'" },
    { "2024/01/02", 0, "month 20 out of range 1-12" },
    { "10h", 0, "expected MMDD[YY], MM/DD[/YY] or MM.DD[.YY] at '10h'" },
    /* now */
    { "now+", 0, "expected a number after 'now+'" },
    { "now-x", 0, "expected a number after 'now-'" },
    { "now+5x", 0, "unknown unit 'x' (seconds, minutes" },
    { "now+5min", 0, "unknown unit 'min'" },
    { "now+5s", 0, "unknown unit 's'" },
    { "now+5sec", 0, "unknown unit 'sec'" },
    { "now+1h", 0, "unknown unit 'h'" },
    { "now+1weekx", 0, "is followed by 'x'" },
    { "nowx", 0, "'now' may only be followed by +N or -N" },
    { "now noon", 0, "'now' may only be followed by +N or -N" },
    { "now+9999999999999", 0, "offset after 'now+' too large" },
    { "now+999999999999", 0, "before 1970 or after 9999" },
    { "now-1710506097", 0, "before 1970 or after 9999" },
    { "now+251691794704", 0, "before 1970 or after 9999" },
    /* uts */
    { "uts", 0, "expected digits after 'uts'" },
    { "uts 1700000000", 0, "expected digits after 'uts'" },
    { "uts999999", 0, "uts value out of range 1000000-253402300799" },
    { "uts253402300800", 0, "uts value out of range" },
    { "uts99999999999999999999999", 0, "uts value out of range" },
    { "uts1700000000x", 0, "expected only digits after 'uts'" },
};

static void test_time_errors (void **state)
{
    (void)state;
    set_tz ("UTC");
    for (size_t i = 0; i < sizeof (time_errors) / sizeof (time_errors[0]);
         i++) {
        const struct time_error *c = &time_errors[i];
        tr_error_t error = { .text = "" };
        char prefix[128];
        time_t out = -42;
        int rc;

        errno = 0;
        rc = tr_when_parse (c->in, c->now ? c->now : NOW, false, &out, &error);
        if (rc != -1 || errno != EINVAL || out != -42)
            fail_msg ("'%s': rc %d errno %d out %lld (expected an error)",
                      c->in, rc, errno, (long long)out);
        snprintf (prefix, sizeof (prefix), "invalid time '%s': ", c->in);
        if (strncmp (error.text, prefix, strlen (prefix)) != 0
            || !strstr (error.text, c->message))
            fail_msg ("'%s': message '%s', expected '%s' in it", c->in,
                      error.text, c->message);
    }
}

static void test_time_bad_args (void **state)
{
    tr_error_t error = { .text = "" };
    char longer[500];
    time_t out = -42;

    (void)state;
    set_tz ("UTC");
    errno = 0;
    assert_int_equal (tr_when_parse (NULL, NOW, false, &out, &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_true (out == -42);
    errno = 0;
    assert_int_equal (tr_when_parse ("now", NOW, false, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);

    /* A long input is cut in the message, which still lists every form. */
    memset (longer, 'x', sizeof (longer) - 1);
    longer[sizeof (longer) - 1] = '\0';
    assert_int_equal (tr_when_parse (longer, NOW, false, &out, &error), -1);
    assert_non_null (strstr (error.text, "xxx...': unexpected 'xxx"));
    assert_non_null (strstr (error.text, "teatime, now[{+|-}N[UNIT]] or "
                                         "uts<N>"));
    assert_true (out == -42);
}

/* Local time: the same text is a different instant in another zone, and
 * daylight saving time is the zone's business (mktime).
 */
static const struct time_case berlin_cases[] = {
    { "2024-01-15T12:00", 0, 1705316400 }, /* CET: 11:00Z */
    { "2024-07-01T12:00", 0, 1719828000 }, /* CEST: 10:00Z */
    { "0102", 0, 1704150000 },             /* 2024-01-01T23:00Z */
    { "today", 0, 1710457200 },            /* 2024-03-14T23:00Z */
    { "midnight", 0, 1710457200 },
    { "10:00", 0, 1710493200 }, /* 09:00Z */
    { "noon", 0, 1710500400 },  /* 11:00Z */
    /* now plus an offset is exact, across the change to CEST too */
    { "now", 0, NOW },
    { "now+3weeks", 0, NOW + 1814400 },
    /* 02:30 does not exist on 2024-03-31; mktime reads it as 03:30 CEST,
     * as Slurm (which also calls mktime) does.
     */
    { "2024-03-31T02:30", 0, 1711848600 },
    /* at 00:30 CET on the day of the change, tomorrow is April 1 00:00
     * CEST
     */
    { "tomorrow", 1711841400, 1711922400 },
    { "today", 1711841400, 1711839600 },
};

static void test_time_local_zone (void **state)
{
    tr_error_t error = { .text = "" };
    time_t out = -42;

    (void)state;
    set_tz (BERLIN);
    check_time_cases (berlin_cases,
                      sizeof (berlin_cases) / sizeof (berlin_cases[0]));
    /* 1970-01-01T00:00 CET is 1969-12-31T23:00Z */
    assert_int_equal (tr_when_parse ("1970-01-01", NOW, false, &out, &error),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "before 1970-01-01 00:00:00 UTC"));
    assert_true (out == -42);
    assert_int_equal (tr_when_parse ("1970-01-01T01:00", NOW, false, &out,
                                     &error),
                      0);
    assert_true (out == 0);
    set_tz ("UTC");
}

/* ---------------------------------------------------------------------
 * Job selectors
 */

struct match_case {
    const char *job_id;
    const char *array_job_id;
    long task;
    const char *het_job_id;
    long component;
    bool expected;
};

struct sel_case {
    const char *list;
    struct match_case m[16];
    size_t n;
};

#define JOB(id) id, NULL, -1, NULL, -1
#define TASK(id, array, task) id, array, task, NULL, -1
#define HET(id, het, comp) id, NULL, -1, het, comp

static const struct sel_case sel_cases[] = {
    { "123",
      { { JOB ("123"), true },
        { JOB ("124"), false },
        { JOB ("12"), false },
        { JOB ("0123"), true },
        { TASK ("130", "123", 5), true }, /* all of array 123 */
        { TASK ("123", "123", 0), true },
        { TASK ("130", "122", 5), false },
        { HET ("124", "123", 1), true }, /* all of het job 123 */
        { HET ("124", "122", 1), false },
        { JOB ("123.0"), false },
        { JOB (""), false },
        { JOB (NULL), false },
        { "", "", -1, "", -1, false } },
      13 },
    { "123_4",
      { { TASK ("127", "123", 4), true },
        { TASK ("128", "123", 5), false },
        { TASK ("127", "124", 4), false },
        { TASK ("123", "123", -1), false },
        { JOB ("123"), false },
        { HET ("4", "123", 4), false } },
      6 },
    { "123_[1-5,7,10-12]",
      { { TASK ("1", "123", 0), false },
        { TASK ("1", "123", 1), true },
        { TASK ("1", "123", 3), true },
        { TASK ("1", "123", 5), true },
        { TASK ("1", "123", 6), false },
        { TASK ("1", "123", 7), true },
        { TASK ("1", "123", 8), false },
        { TASK ("1", "123", 9), false },
        { TASK ("1", "123", 10), true },
        { TASK ("1", "123", 12), true },
        { TASK ("1", "123", 13), false },
        { TASK ("1", "124", 3), false },
        { TASK ("1", "123", -1), false },
        { JOB ("123"), false } },
      14 },
    { "123_*",
      { { TASK ("123", "123", 0), true },
        { TASK ("9", "123", 4000000), true },
        { TASK ("9", "124", 1), false },
        { JOB ("123"), false },
        { HET ("9", "123", 0), false } },
      5 },
    { "123+1",
      { { HET ("124", "123", 1), true },
        { HET ("123", "123", 0), false },
        { HET ("124", "123", -1), false },
        { HET ("125", "124", 1), false },
        { JOB ("123"), false },
        { TASK ("124", "123", 1), false } },
      6 },
    { "123+0", { { HET ("123", "123", 0), true } }, 1 },
    /* sorted and merged: 1-3 and 4 touch, 10-20 and 15-25 overlap */
    { "5_[10-20,1-3,15-25,4,4]",
      { { TASK ("1", "5", 0), false },
        { TASK ("1", "5", 1), true },
        { TASK ("1", "5", 4), true },
        { TASK ("1", "5", 5), false },
        { TASK ("1", "5", 9), false },
        { TASK ("1", "5", 10), true },
        { TASK ("1", "5", 17), true },
        { TASK ("1", "5", 25), true },
        { TASK ("1", "5", 26), false } },
      9 },
    { "1,2_3,4_[5-6],7_*,8+2",
      { { JOB ("1"), true },
        { TASK ("9", "2", 3), true },
        { TASK ("9", "2", 4), false },
        { TASK ("9", "4", 6), true },
        { TASK ("9", "4", 7), false },
        { TASK ("9", "7", 99), true },
        { HET ("9", "8", 2), true },
        { HET ("9", "8", 1), false },
        { JOB ("3"), false } },
      9 },
    /* bounds */
    { "4294967293",
      { { JOB ("4294967293"), true },
        { JOB ("4294967294"), false },
        { JOB ("99999999999"), false } },
      3 },
    { "0001", { { JOB ("1"), true }, { JOB ("10"), false } }, 2 },
    { "1_4000000,1_0",
      { { TASK ("2", "1", 4000000), true },
        { TASK ("2", "1", 0), true },
        { TASK ("2", "1", 4000001), false },
        { TASK ("2", "1", 1), false } },
      4 },
    { "1_[0-999999]",
      { { TASK ("2", "1", 0), true },
        { TASK ("2", "1", 999999), true },
        { TASK ("2", "1", 1000000), false } },
      3 },
    { "1_[3000001-4000000]",
      { { TASK ("2", "1", 3000000), false },
        { TASK ("2", "1", 3000001), true },
        { TASK ("2", "1", 4000000), true } },
      3 },
    { "1+127", { { HET ("2", "1", 127), true } }, 1 },
    /* PBS and LSF ids */
    { "7.srv",
      { { JOB ("7.srv"), true },
        { JOB ("7.srv2"), false },
        { JOB ("7"), false },
        { TASK ("7[3].srv", "7[].srv", 3), false } },
      4 },
    { "7[].srv",
      { { TASK ("7[3].srv", "7[].srv", 3), true },
        { JOB ("7.srv"), false } },
      2 },
    { "42[3],42",
      { { TASK ("42[3]", "42", 3), true },
        { TASK ("42[4]", "42", 4), true }, /* 42 is all of array 42 */
        { JOB ("42"), true },
        { JOB ("43[3]"), false } },
      4 },
    /* a PBS subjob or array as listings show it and qstat takes it:
     * with or without the server's name
     */
    { "7[3]",
      { { TASK ("7[3].srv", "7[].srv", 3), true },
        { TASK ("7[4].srv", "7[].srv", 4), false },
        { TASK ("17[3].srv", "17[].srv", 3), false },
        { TASK ("7[3]", "7", 3), true } },
      4 },
    { "7[]",
      { { TASK ("7[3].srv", "7[].srv", 3), true },
        { TASK ("7[3].srv.example.org", "7[].srv.example.org", 3), true },
        { TASK ("7[3]x.srv", "7[]x.srv", 3), false },
        { JOB ("7.srv"), false } },
      4 },
    { "7[3].srv",
      { { TASK ("7[3].srv", "7[].srv", 3), true },
        { TASK ("7[3].srv.example.org", "7[].srv.example.org", 3), true },
        { TASK ("7[3].srv2", "7[].srv2", 3), false } },
      3 },
};

static void test_jobsel_match (void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof (sel_cases) / sizeof (sel_cases[0]); i++) {
        const struct sel_case *c = &sel_cases[i];
        tr_error_t error = { .text = "" };
        tr_when_jobsel_t *sel = tr_when_jobsel_parse (c->list, &error);

        if (!sel)
            fail_msg ("'%s': %s", c->list, error.text);
        for (size_t j = 0; j < c->n; j++) {
            const struct match_case *m = &c->m[j];

            if (tr_when_jobsel_match (sel, m->job_id, m->array_job_id, m->task,
                                      m->het_job_id, m->component)
                != m->expected)
                fail_msg ("'%s' against job %s array %s_%ld het %s+%ld: "
                          "expected %s",
                          c->list, m->job_id ? m->job_id : "(null)",
                          m->array_job_id ? m->array_job_id : "(null)", m->task,
                          m->het_job_id ? m->het_job_id : "(null)",
                          m->component, m->expected ? "a match" : "none");
        }
        tr_when_jobsel_destroy (sel);
    }
}

static void test_jobsel_plain (void **state)
{
    static const char *expected[] = { "7",  NULL, NULL,        NULL,
                                      NULL, "12", "4294967293" };
    tr_when_jobsel_t *sel;

    (void)state;
    sel =
        tr_when_jobsel_parse ("7,08_1,9_[1-2],10_*,11+1,0012,4294967293", NULL);
    assert_non_null (sel);
    assert_int_equal (tr_when_jobsel_count (sel), 7);
    for (size_t i = 0; i < 7; i++) {
        const char *plain = tr_when_jobsel_plain (sel, i);

        if (expected[i])
            assert_string_equal (plain, expected[i]);
        else
            assert_null (plain);
    }
    errno = 0;
    assert_null (tr_when_jobsel_plain (sel, 7));
    assert_int_equal (errno, EINVAL);
    tr_when_jobsel_destroy (sel);

    errno = 0;
    assert_null (tr_when_jobsel_plain (NULL, 0));
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_when_jobsel_count (NULL), 0);
    assert_false (tr_when_jobsel_match (NULL, "1", NULL, -1, NULL, -1));
    errno = EPERM;
    tr_when_jobsel_destroy (NULL);
    assert_int_equal (errno, EPERM);

    /* PBS: a whole array, or a subjob without its server, is found
     * through the summaries; a full id directly
     */
    sel = tr_when_jobsel_parse ("7[],7[].srv,7[3],7[3].srv,7.srv", NULL);
    assert_non_null (sel);
    assert_null (tr_when_jobsel_plain (sel, 0));
    assert_null (tr_when_jobsel_plain (sel, 1));
    assert_null (tr_when_jobsel_plain (sel, 2));
    assert_string_equal (tr_when_jobsel_plain (sel, 3), "7[3].srv");
    assert_string_equal (tr_when_jobsel_plain (sel, 4), "7.srv");
    tr_when_jobsel_destroy (sel);
}

struct sel_error {
    const char *list;
    const char *message; /* a substring of the message */
};

static const struct sel_error sel_errors[] = {
    { "", "empty job id list; expected N, N_T" },
    { ",", "invalid job id '': empty element" },
    { "1,,2", "invalid job id '': empty element" },
    { "1,", "empty element" },
    { ",1", "empty element" },
    { "abc", "invalid job id 'abc': expected N, N_T, N_[T1-T2,...], N_* or "
             "N+C" },
    { "1,2,x,4", "invalid job id 'x': expected N" },
    { "-1", "invalid job id '-1'" },
    { "+1", "invalid job id '+1'" },
    { " 1", "invalid job id ' 1'" },
    { "1 ", "invalid job id '1 ': unexpected ' '" },
    { "1, 2", "invalid job id ' 2'" },
    { "0", "invalid job id '0': job id out of range 1-4294967293" },
    { "00", "job id out of range" },
    { "4294967294", "job id out of range 1-4294967293" },
    { "99999999999999999999999", "job id out of range" },
    { "1_", "expected a task id" },
    { "1_x", "expected a task id at 'x'" },
    { "1_-1", "expected a task id" },
    { "1_4000001", "task id out of range 0-4000000" },
    { "1_1-3", "a task range needs brackets" },
    { "1_[", "expected a task id" },
    { "1_[1", "invalid job id '1_[1': missing ']'" },
    { "1_[1,2", "missing ']'" },
    { "1_[1-]", "expected a task id at ']'" },
    { "1_[-1]", "expected a task id at '-1]'" },
    { "1_[5-3]", "range 5-3 runs backwards" },
    { "1_[0-1000000]", "range 0-1000000 spans more than 1000000 tasks" },
    { "1_[0-4000001]", "task id out of range 0-4000000" },
    { "1_[1;2]", "expected ',' or ']' in the task list, not ';'" },
    { "1_[1%2]", "expected ',' or ']' in the task list, not '%'" },
    { "1_[1:2]", "not ':'" },
    { "1_[1]x", "unexpected 'x' after the selector" },
    { "1_[1]_[2]", "unexpected '_' after the selector" },
    { "1_[]", "expected a task id at ']'" },
    { "1_[1,]", "expected a task id at ']'" },
    { "1_[[1]]", "expected a task id at '[1]]'" },
    { "1_**", "unexpected '*' after the selector" },
    { "1+", "expected a component number after '+'" },
    { "1+x", "expected a component number" },
    { "1+128", "het component out of range 0-127" },
    { "1+1+1", "unexpected '+' after the selector" },
    { "1+1_2", "unexpected '_' after the selector" },
    /* another batch system's id must be a safe one */
    { "7.srv/../x", "not a job id" },
    { "7.srv_1", "unexpected '.'" },
};

static void check_sel_error (const char *list, const char *message)
{
    tr_error_t error = { .text = "" };
    tr_when_jobsel_t *sel;

    errno = 0;
    sel = tr_when_jobsel_parse (list, &error);
    if (sel || errno != EINVAL)
        fail_msg ("'%.40s': errno %d (expected EINVAL)", list, errno);
    if (!strstr (error.text, message))
        fail_msg ("'%.40s': message '%s', expected '%s' in it", list,
                  error.text, message);
}

static void test_jobsel_errors (void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof (sel_errors) / sizeof (sel_errors[0]); i++)
        check_sel_error (sel_errors[i].list, sel_errors[i].message);

    errno = 0;
    assert_null (tr_when_jobsel_parse (NULL, NULL));
    assert_int_equal (errno, EINVAL);
}

/* A list of n copies of elem (without its trailing comma), or NULL. */
static char *repeat (const char *elem, size_t n)
{
    size_t len = strlen (elem);
    char *s = malloc (n * (len + 1) + 1);

    assert_non_null (s);
    for (size_t i = 0; i < n; i++) {
        memcpy (s + i * (len + 1), elem, len);
        s[i * (len + 1) + len] = ',';
    }
    s[n * (len + 1) - 1] = '\0';
    return s;
}

static void test_jobsel_limits (void **state)
{
    tr_when_jobsel_t *sel;
    char *s;

    (void)state;
    /* TR_WHEN_JOBSEL_MAX_LEN bytes: one job id with leading zeros */
    s = malloc (TR_WHEN_JOBSEL_MAX_LEN + 2);
    assert_non_null (s);
    memset (s, '0', TR_WHEN_JOBSEL_MAX_LEN);
    s[TR_WHEN_JOBSEL_MAX_LEN - 1] = '7';
    s[TR_WHEN_JOBSEL_MAX_LEN] = '\0';
    sel = tr_when_jobsel_parse (s, NULL);
    assert_non_null (sel);
    assert_string_equal (tr_when_jobsel_plain (sel, 0), "7");
    tr_when_jobsel_destroy (sel);
    s[TR_WHEN_JOBSEL_MAX_LEN - 1] = '0';
    s[TR_WHEN_JOBSEL_MAX_LEN] = '7';
    s[TR_WHEN_JOBSEL_MAX_LEN + 1] = '\0';
    check_sel_error (s, "job id list longer than 65536 bytes");
    free (s);

    /* TR_WHEN_JOBSEL_MAX_ELEMENTS elements */
    s = repeat ("12", TR_WHEN_JOBSEL_MAX_ELEMENTS);
    sel = tr_when_jobsel_parse (s, NULL);
    assert_non_null (sel);
    assert_int_equal (tr_when_jobsel_count (sel), TR_WHEN_JOBSEL_MAX_ELEMENTS);
    assert_true (tr_when_jobsel_match (sel, "12", NULL, -1, NULL, -1));
    tr_when_jobsel_destroy (sel);
    free (s);
    s = repeat ("12", TR_WHEN_JOBSEL_MAX_ELEMENTS + 1);
    check_sel_error (s, "more than 10000 elements in the list");
    free (s);

    /* TR_WHEN_JOBSEL_MAX_RANGES task ids, counted before merging */
    s = repeat ("3", TR_WHEN_JOBSEL_MAX_RANGES);
    {
        size_t size = strlen (s) + 8;
        char *list = malloc (size);

        assert_non_null (list);
        snprintf (list, size, "1_[%s]", s);
        sel = tr_when_jobsel_parse (list, NULL);
        assert_non_null (sel);
        assert_true (tr_when_jobsel_match (sel, "2", "1", 3, NULL, -1));
        assert_false (tr_when_jobsel_match (sel, "2", "1", 2, NULL, -1));
        tr_when_jobsel_destroy (sel);
        snprintf (list, size, "1_[%s,4]", s);
        check_sel_error (list, "more than 10000 task ids or ranges");
        free (list);
    }
    free (s);
    /* ... over the whole list */
    s = repeat ("1_[3,5]", TR_WHEN_JOBSEL_MAX_RANGES / 2);
    sel = tr_when_jobsel_parse (s, NULL);
    assert_non_null (sel);
    tr_when_jobsel_destroy (sel);
    free (s);
    s = repeat ("1_[3,5]", TR_WHEN_JOBSEL_MAX_RANGES / 2 + 1);
    check_sel_error (s, "more than 10000 task ids or ranges in the list");
    free (s);
}

/* Allocation failure sweep (jansson test_chaos.c): the test binary is
 * linked with --wrap=calloc,realloc; fail the Nth allocation for every N
 * until the parse succeeds.  Every failure must be a clean NULL with
 * errno = ENOMEM and leak nothing (valgrind, ASan).
 */
static int chaos_countdown = -1;

void *__real_calloc (size_t n, size_t size);
void *__real_realloc (void *p, size_t size);
void *__wrap_calloc (size_t n, size_t size);
void *__wrap_realloc (void *p, size_t size);

static bool chaos_fail (void)
{
    if (chaos_countdown == 0)
        return true;
    if (chaos_countdown > 0)
        chaos_countdown--;
    return false;
}

/* A failing allocator sets errno = ENOMEM, as POSIX asks of malloc. */
void *__wrap_calloc (size_t n, size_t size)
{
    if (chaos_fail ()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc (n, size);
}

void *__wrap_realloc (void *p, size_t size)
{
    if (chaos_fail ()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc (p, size);
}

static void test_jobsel_oom_sweep (void **state)
{
    const char *list = "1,2_[1-3],3_*,4+1,5,6,7,8,"
                       "9_[1,3,5,7,9,11,13,15,17,19],10";
    int failures = 0;
    bool done = false;

    (void)state;
    for (int n = 0; !done && n < 1000; n++) {
        tr_error_t error = { .text = "" };
        tr_when_jobsel_t *sel;

        chaos_countdown = n;
        errno = 0;
        sel = tr_when_jobsel_parse (list, &error);
        chaos_countdown = -1;
        if (sel) {
            assert_int_equal (tr_when_jobsel_count (sel), 10);
            assert_true (tr_when_jobsel_match (sel, "2", "9", 19, NULL, -1));
            tr_when_jobsel_destroy (sel);
            done = true;
        }
        else {
            assert_int_equal (errno, ENOMEM);
            assert_string_equal (error.text, "out of memory");
            failures++;
        }
    }
    assert_true (done);
    assert_true (failures >= 4);
}

/* poll() timeouts: rounded up to the next ms, never negative */
static void test_poll_ms (void **state)
{
    (void)state;
    assert_int_equal (tr_when_poll_ms (100.0, 100.0), 0);
    assert_int_equal (tr_when_poll_ms (99.0, 100.0), 0);
    assert_int_equal (tr_when_poll_ms (100.0001, 100.0), 1);
    assert_int_equal (tr_when_poll_ms (100.1, 100.0), 100);
    assert_int_equal (tr_when_poll_ms (103.0, 100.0), 3000);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_time_formats),
        cmocka_unit_test (test_time_end),
        cmocka_unit_test (test_time_errors),
        cmocka_unit_test (test_time_bad_args),
        cmocka_unit_test (test_time_local_zone),
        cmocka_unit_test (test_jobsel_match),
        cmocka_unit_test (test_jobsel_plain),
        cmocka_unit_test (test_jobsel_errors),
        cmocka_unit_test (test_jobsel_limits),
        cmocka_unit_test (test_jobsel_oom_sweep),
        cmocka_unit_test (test_poll_ms),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
