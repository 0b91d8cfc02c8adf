/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Time and job-id arguments of tracer-report, parsed as Slurm's sacct
 * parses -S/-E (src/common/parse_time.c, called with past=1) and -j, so
 * that people can reuse what they type for sacct.  Times are local
 * (localtime_r/mktime honour TZ), as in Slurm.  Where Slurm accepts
 * nonsense silently (February 30, tokens run together, empty input) we
 * refuse it with a message instead; when.h lists the differences.  Job
 * lists are bounded in length, element count and range size, and task
 * ranges are stored as ranges, so a hostile -j cannot make us allocate
 * without limit.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "record.h"
#include "when.h"
#include "libtracer/util/units.h"

/* 9999-12-31T23:59:59Z: four-digit years are all a date can spell. */
#define MAX_TIME ((int64_t)253402300799LL)

/* The smallest "uts" value Slurm accepts. */
#define MIN_UTS 1000000

/* Input quoted in a message is cut to this many bytes (tr_error_t text
 * is 256 bytes and the message must still say what is accepted).
 */
#define QUOTE_MAX 40

#define ACCEPTED                                                           \
    "expected YYYY-MM-DD[THH:MM[:SS]], MMDD[YY], MM/DD[/YY], MM.DD[.YY], " \
    "HH:MM[:SS], today, tomorrow, midnight, noon, elevenses, fika, "       \
    "teatime, now[{+|-}N[UNIT]] or uts<N>"

#define UNITS "seconds, minutes, hours, days or weeks"

#define JOBSEL_FORMS "expected N, N_T, N_[T1-T2,...], N_* or N+C"

/* Copy at most QUOTE_MAX bytes of s (n of them at most) into buf, with
 * "..." when cut, so messages stay short whatever the input.
 */
static const char *quote (char *buf, size_t size, const char *s, size_t n)
{
    size_t len = strnlen (s, n);

    if (len > QUOTE_MAX)
        snprintf (buf, size, "%.*s...", QUOTE_MAX, s);
    else
        snprintf (buf, size, "%.*s", (int)len, s);
    return buf;
}

/* ---------------------------------------------------------------------
 * Times
 */

/* What the tokens seen so far have set. */
struct spec {
    const char *input;
    tr_error_t *error;
    struct tm now_tm; /* 'now', broken down in local time */
    bool any;         /* some token was seen */
    bool have_date;
    bool have_year;
    bool have_time;
    int year; /* e.g. 2024 */
    int mon;  /* 1-12 */
    int mday; /* 1-31 */
    int hour;
    int min;
    int sec;
    /* "now[+-N]" gives an exact instant; going through a broken-down
     * local time and back would move it by an hour in the repeated hour
     * of a DST change.  A later token that sets a date or time clears it.
     */
    bool exact;
    time_t exact_value;
};

static int fail (struct spec *sp, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int fail (struct spec *sp, const char *fmt, ...)
{
    char reason[sizeof (sp->error->text)];
    char q[QUOTE_MAX + 4];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (reason, sizeof (reason), fmt, ap);
    va_end (ap);
    errno = EINVAL;
    return tr_errprintf (sp->error, "invalid time '%s': %s",
                         quote (q, sizeof (q), sp->input, SIZE_MAX), reason);
}

static bool is_digit (char c)
{
    return c >= '0' && c <= '9';
}

static bool is_blank (char c)
{
    return c == ' ' || c == '\t';
}

/* Tokens are separated by these, as in Slurm's parse_time(). */
static bool is_sep (char c)
{
    return is_blank (c) || c == '-' || c == 'T';
}

/* n digits at p (stops at the NUL, which is not a digit). */
static bool digits (const char *p, int n)
{
    for (int i = 0; i < n; i++) {
        if (!is_digit (p[i]))
            return false;
    }
    return true;
}

/* Read 1 or 2 digits (greedy) at *p; the first must be a digit. */
static int take_1or2 (const char **p)
{
    int v = **p - '0';

    (*p)++;
    if (is_digit (**p)) {
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

static int take_n (const char **p, int n)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

static bool is_leap (int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month (int year, int mon)
{
    static const int days[12] = {
        31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
    };

    if (mon == 2 && is_leap (year))
        return 29;
    return days[mon - 1];
}

/* A token must end at the end of input or at a separator: Slurm reads
 * "01022024" as 01/02/20 followed by a second date 2/4 that replaces
 * the first, which nobody means.
 */
static int end_of_token (struct spec *sp, const char *start, const char *p)
{
    char q[QUOTE_MAX + 4];

    if (*p == '\0' || is_sep (*p))
        return 0;
    return fail (sp,
                 "'%s' is followed by '%c' instead of a blank, '-' or "
                 "'T'",
                 quote (q, sizeof (q), start, (size_t)(p - start)), *p);
}

static void set_date (struct spec *sp, int year, int mon, int mday)
{
    sp->have_date = true;
    sp->have_year = year > 0;
    sp->year = year;
    sp->mon = mon;
    sp->mday = mday;
    sp->exact = false;
}

static void set_time (struct spec *sp, int hour, int min, int sec)
{
    sp->have_time = true;
    sp->hour = hour;
    sp->min = min;
    sp->sec = sec;
    sp->exact = false;
}

/* HH:MM[:SS] [AM|PM]: one- or two-digit hour, two-digit minute and
 * second (Slurm _get_time()).
 */
static int parse_clock (struct spec *sp, const char **pp)
{
    const char *start = *pp;
    const char *p = start;
    const char *q;
    int hour, min, sec = 0;

    hour = take_1or2 (&p);
    if (*p != ':' || !digits (p + 1, 2))
        return fail (sp, "expected HH:MM[:SS] at '%.8s'", start);
    p++;
    min = take_n (&p, 2);
    if (*p == ':') {
        if (!digits (p + 1, 2))
            return fail (sp, "expected two digits of seconds at '%.8s'", start);
        p++;
        sec = take_n (&p, 2);
    }
    if (hour > 23)
        return fail (sp, "hour %d out of range 0-23", hour);
    if (min > 59)
        return fail (sp, "minute %d out of range 0-59", min);
    if (sec > 59)
        return fail (sp, "second %d out of range 0-59", sec);

    /* A 12-hour clock, Slurm's way: 12 AM is 00, 12 PM is 12, and an
     * hour above 12 with AM or PM is an error.
     */
    q = p;
    while (is_blank (*q))
        q++;
    if (strncasecmp (q, "pm", 2) == 0 || strncasecmp (q, "am", 2) == 0) {
        bool pm = (q[0] == 'p' || q[0] == 'P');

        if (hour > 12)
            return fail (sp, "hour %d with %s", hour, pm ? "PM" : "AM");
        if (pm && hour < 12)
            hour += 12;
        else if (!pm && hour == 12)
            hour = 0;
        p = q + 2;
    }
    if (end_of_token (sp, start, p) < 0)
        return -1;
    set_time (sp, hour, min, sec);
    *pp = p;
    return 0;
}

/* H:MM or HH:MM at p, the test Slurm uses to tell a time from a date. */
static bool looks_like_clock (const char *p)
{
    return is_digit (p[0]) && (p[1] == ':' || (p[1] != '\0' && p[2] == ':'));
}

/* YYYY-MM-DD, else MM[/.]DD[[/.]YY] with one- or two-digit month and
 * day, read greedily as Slurm's _get_date() does ("112" is November 2).
 * Slurm takes the ISO form when characters 4 and 7 are '-'; four digits
 * and a '-' not followed by a time (MMDD-HH:MM) are taken for a
 * malformed ISO date too, for a better message than "month 20".
 */
static int parse_date (struct spec *sp, const char **pp)
{
    const char *start = *pp;
    const char *p = start;
    int year = 0, mon, mday;

    if ((p[1] && p[2] && p[3] && p[4] == '-' && p[5] && p[6] && p[7] == '-')
        || (digits (p, 4) && p[4] == '-' && !looks_like_clock (p + 5))) {
        if (!digits (p, 4) || p[4] != '-' || !digits (p + 5, 2) || p[7] != '-'
            || !is_digit (p[8]))
            return fail (sp, "expected YYYY-MM-DD at '%.10s'", start);
        year = take_n (&p, 4);
        p++;
        mon = take_n (&p, 2);
        p++;
        mday = take_1or2 (&p);
        if (year < 1970)
            return fail (sp, "year %d before 1970", year);
        if (mon < 1 || mon > 12)
            return fail (sp, "month %d out of range 1-12", mon);
        if (mday < 1 || mday > 31)
            return fail (sp, "day %d out of range 1-31", mday);
    }
    else {
        mon = take_1or2 (&p);
        if (mon < 1 || mon > 12)
            return fail (sp, "month %d out of range 1-12", mon);
        if (*p == '/' || *p == '.')
            p++;
        if (!is_digit (*p))
            return fail (sp,
                         "expected MMDD[YY], MM/DD[/YY] or MM.DD[.YY] "
                         "at '%.10s'",
                         start);
        mday = take_1or2 (&p);
        if (mday < 1 || mday > 31)
            return fail (sp, "day %d out of range 1-31", mday);
        if (*p == '/' || *p == '.')
            p++;
        if (is_digit (*p)) {
            if (!is_digit (p[1]))
                return fail (sp, "expected a two-digit year at '%.10s'", start);
            year = 2000 + take_n (&p, 2);
        }
    }
    /* Without a year the month's length is checked once the year is
     * known (tr_when_parse()).
     */
    if (year && mday > days_in_month (year, mon))
        return fail (sp, "%04d-%02d has no day %d", year, mon, mday);
    if (end_of_token (sp, start, p) < 0)
        return -1;
    set_date (sp, year, mon, mday);
    *pp = p;
    return 0;
}

static const struct unit {
    const char *name;
    int64_t seconds;
} units[] = {
    /* Longest first: "days" must not be read as "day" + "s". */
    { "seconds", 1 },   { "second", 1 },   { "minutes", 60 },
    { "minute", 60 },   { "hours", 3600 }, { "hour", 3600 },
    { "days", 86400 },  { "day", 86400 },  { "weeks", 604800 },
    { "week", 604800 },
};

/* now[{+|-}N[UNIT]], blanks allowed around the sign and before UNIT
 * (Slurm: "now + 2 hours").  p is just after "now".
 */
static int parse_now (struct spec *sp, time_t now, const char **pp)
{
    const char *start = *pp - 3;
    const char *p = *pp;
    int64_t n = 0, mult = 1, t;
    struct tm tm;
    char sign;

    while (is_blank (*p))
        p++;
    if (*p == '\0') {
        t = now;
        goto done;
    }
    if (*p != '+' && *p != '-')
        return fail (sp, "'now' may only be followed by +N or -N");
    sign = *p++;
    while (is_blank (*p))
        p++;
    if (!is_digit (*p))
        return fail (sp, "expected a number after 'now%c'", sign);
    while (is_digit (*p)) {
        /* 12 digits are more seconds than years 1970-9999 span. */
        if (n >= 100000000000LL)
            return fail (sp, "offset after 'now%c' too large", sign);
        n = n * 10 + (*p++ - '0');
    }
    while (is_blank (*p))
        p++;
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
        size_t i, len = 0;

        for (i = 0; i < sizeof (units) / sizeof (units[0]); i++) {
            len = strlen (units[i].name);
            if (strncasecmp (p, units[i].name, len) == 0)
                break;
        }
        if (i == sizeof (units) / sizeof (units[0])) {
            char q[QUOTE_MAX + 4];
            size_t w = 0;

            while ((p[w] >= 'a' && p[w] <= 'z') || (p[w] >= 'A' && p[w] <= 'Z'))
                w++;
            return fail (sp, "unknown unit '%s' (%s)",
                         quote (q, sizeof (q), p, w), UNITS);
        }
        mult = units[i].seconds;
        p += len;
    }
    else {
        /* "now+5 noon": the blanks separate the next token. */
        while (is_blank (p[-1]))
            p--;
    }
    n *= mult;
    t = (int64_t)now + (sign == '+' ? n : -n);
done:
    if (t < 0 || t > MAX_TIME)
        return fail (sp, "'%.*s' is before 1970 or after 9999",
                     (int)(p - start), start);
    if (end_of_token (sp, start, p) < 0)
        return -1;
    if (!localtime_r (&(time_t){ (time_t)t }, &tm))
        return fail (sp, "cannot convert 'now' to local time");
    set_date (sp, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    set_time (sp, tm.tm_hour, tm.tm_min, tm.tm_sec);
    sp->exact = true;
    sp->exact_value = (time_t)t;
    *pp = p;
    return 0;
}

/* The keywords: a day, or an hour of the day. */
enum keyword_kind {
    KW_HOUR,
    KW_TODAY,
    KW_TOMORROW,
};

static const struct keyword {
    const char *name;
    enum keyword_kind kind;
    int hour;
} keywords[] = {
    { "today", KW_TODAY, 0 },     { "tomorrow", KW_TOMORROW, 0 },
    { "midnight", KW_HOUR, 0 },   { "noon", KW_HOUR, 12 },
    { "elevenses", KW_HOUR, 11 }, { "fika", KW_HOUR, 15 },
    { "teatime", KW_HOUR, 16 },
};

/* The calendar day after tm's.  Slurm takes the day of now + 24 hours,
 * which is the same but for DST changes near midnight.
 */
static void next_day (struct tm *tm)
{
    if (++tm->tm_mday > days_in_month (tm->tm_year + 1900, tm->tm_mon + 1)) {
        tm->tm_mday = 1;
        if (++tm->tm_mon == 12) {
            tm->tm_mon = 0;
            tm->tm_year++;
        }
    }
}

/* Match a keyword at *pp; 1 when one was taken, 0 when none is there. */
static int parse_keyword (struct spec *sp, const char **pp)
{
    const char *p = *pp;

    for (size_t i = 0; i < sizeof (keywords) / sizeof (keywords[0]); i++) {
        const struct keyword *k = &keywords[i];
        size_t len = strlen (k->name);
        struct tm tm = sp->now_tm;

        if (strncasecmp (p, k->name, len) != 0)
            continue;
        if (end_of_token (sp, p, p + len) < 0)
            return -1;
        if (k->kind == KW_HOUR)
            set_time (sp, k->hour, 0, 0);
        else {
            if (k->kind == KW_TOMORROW)
                next_day (&tm);
            set_date (sp, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
        }
        *pp = p + len;
        return 1;
    }
    return 0;
}

static int parse_uts (struct spec *sp, const char *s, time_t *out)
{
    const char *p = s + 3;
    int64_t v = 0;

    if (!is_digit (*p))
        return fail (sp, "expected digits after 'uts'");
    /* Stop adding once past the limit: no overflow, still an error. */
    for (; is_digit (*p); p++) {
        if (v <= MAX_TIME)
            v = v * 10 + (*p - '0');
    }
    if (*p != '\0')
        return fail (sp, "expected only digits after 'uts'");
    if (v < MIN_UTS || v > MAX_TIME)
        return fail (sp, "uts value out of range %d-%lld", MIN_UTS,
                     (long long)MAX_TIME);
    *out = (time_t)v;
    return 0;
}

int tr_when_parse (const char *s,
                   time_t now,
                   bool end,
                   time_t *out,
                   tr_error_t *error)
{
    struct spec sp = { .input = s ? s : "", .error = error };
    const char *p;
    struct tm tm;
    time_t t;

    /* sacct reads -S and -E alike (see when.h). */
    (void)end;
    if (!s || !out) {
        errno = EINVAL;
        return tr_errprintf (error, "invalid argument");
    }
    if (strncasecmp (s, "uts", 3) == 0)
        return parse_uts (&sp, s, out);
    if (!localtime_r (&now, &sp.now_tm))
        return fail (&sp, "cannot convert the current time to local time");

    for (p = s; *p != '\0';) {
        int rc;

        if (is_blank (*p) || *p == '-') {
            p++;
            continue;
        }
        /* Before 'T' is taken for a separator: "Today", "Teatime". */
        if ((rc = parse_keyword (&sp, &p)) < 0)
            return -1;
        if (rc > 0) {
            sp.any = true;
            continue;
        }
        if (*p == 'T') {
            p++;
            continue;
        }
        if (strncasecmp (p, "now", 3) == 0) {
            p += 3;
            if (parse_now (&sp, now, &p) < 0)
                return -1;
        }
        else if (is_digit (*p)) {
            if ((looks_like_clock (p) ? parse_clock (&sp, &p)
                                      : parse_date (&sp, &p))
                < 0)
                return -1;
        }
        else {
            /* The whole input is quoted already: a few characters show
             * where, and leave room for the list of accepted forms.
             */
            return fail (&sp, "unexpected '%.12s'; " ACCEPTED, p);
        }
        sp.any = true;
    }
    if (!sp.any)
        return fail (&sp, "no date or time given; " ACCEPTED);
    if (sp.exact) {
        *out = sp.exact_value;
        return 0;
    }

    if (!sp.have_time)
        set_time (&sp, 0, 0, 0);
    if (!sp.have_date)
        set_date (&sp, sp.now_tm.tm_year + 1900, sp.now_tm.tm_mon + 1,
                  sp.now_tm.tm_mday);
    if (!sp.have_year) {
        /* sacct looks back: a month later than this one is last year's
         * (only the month counts, as in Slurm).
         */
        sp.year = sp.now_tm.tm_year + 1900;
        if (sp.mon > sp.now_tm.tm_mon + 1)
            sp.year--;
        if (sp.mday > days_in_month (sp.year, sp.mon))
            return fail (&sp, "%04d-%02d has no day %d", sp.year, sp.mon,
                         sp.mday);
    }
    if (sp.year < 1970 || sp.year > 9999)
        return fail (&sp, "year %d out of range 1970-9999", sp.year);

    memset (&tm, 0, sizeof (tm));
    tm.tm_year = sp.year - 1900;
    tm.tm_mon = sp.mon - 1;
    tm.tm_mday = sp.mday;
    tm.tm_hour = sp.hour;
    tm.tm_min = sp.min;
    tm.tm_sec = sp.sec;
    tm.tm_isdst = -1; /* let the zone rules decide, as slurm_mktime() */
    t = mktime (&tm);
    /* -1 is also a valid time (1969-12-31T23:59:59Z), but before 1970. */
    if (t < 0 || (int64_t)t > MAX_TIME)
        return fail (&sp, "before 1970-01-01 00:00:00 UTC or not "
                          "representable");
    *out = t;
    return 0;
}

/* ---------------------------------------------------------------------
 * Job id lists
 */

enum elem_kind {
    ELEM_PLAIN,     /* N */
    ELEM_TASKS,     /* N_T, N_[...]: ranges */
    ELEM_ALL_TASKS, /* N_* */
    ELEM_HET,       /* N+C */
    ELEM_NAMED,     /* another batch system's id: 7.srv, 7[3].srv, 42[3] */
};

struct range {
    uint32_t lo;
    uint32_t hi;
};

struct elem {
    enum elem_kind kind;
    uint32_t job;
    uint32_t het_component;
    size_t first;   /* ELEM_TASKS: ranges[first .. first + n), sorted, */
    size_t n;       /* disjoint and not adjacent */
    char plain[129]; /* ELEM_PLAIN: N in decimal; ELEM_NAMED: the id */
};

struct tr_when_jobsel {
    struct elem *elems;
    size_t nelems;
    size_t elems_cap;
    struct range *ranges;
    size_t nranges;
    size_t ranges_cap;
};

struct jparse {
    const char *elem; /* the element being parsed, for messages */
    size_t elem_len;
    size_t items; /* bracket items and N_T tasks so far */
    tr_error_t *error;
};

/* Whether the element is another batch system's job id (PBS "7.srv",
 * "7[3].srv", LSF "42[3]") rather than Slurm's syntax: it starts with a
 * digit, has no '_', '+' or '*', and has a letter, a '.' or a '['.
 */
static bool named_id (const struct jparse *jp)
{
    /* ids start with the number; '_', '+' and '*' are Slurm's alone */
    if (!jp->elem_len || !is_digit (jp->elem[0])
        || memchr (jp->elem, '_', jp->elem_len)
        || memchr (jp->elem, '+', jp->elem_len)
        || memchr (jp->elem, '*', jp->elem_len))
        return false;
    for (size_t i = 0; i < jp->elem_len; i++) {
        char c = jp->elem[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.'
            || (c == '[' && i > 0 && jp->elem[i - 1] != '_'))
            return true;
    }
    return false;
}


static int jfail (struct jparse *jp, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int jfail (struct jparse *jp, const char *fmt, ...)
{
    char reason[sizeof (jp->error->text)];
    char q[QUOTE_MAX + 4];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (reason, sizeof (reason), fmt, ap);
    va_end (ap);
    errno = EINVAL;
    return tr_errprintf (jp->error, "invalid job id '%s': %s",
                         quote (q, sizeof (q), jp->elem, jp->elem_len), reason);
}

/* Decimal digits at *p (at least one, no sign or blank) into *v; -1 when
 * there is none or the value exceeds max.
 */
static int take_uint (const char **p, uint64_t max, uint64_t *v)
{
    uint64_t x = 0;

    if (!is_digit (**p))
        return -1;
    for (; is_digit (**p); (*p)++) {
        x = x * 10 + (uint64_t)(**p - '0');
        if (x > max) {
            while (is_digit (**p))
                (*p)++;
            *v = x;
            return -1;
        }
    }
    *v = x;
    return 0;
}

static int range_cmp (const void *a, const void *b)
{
    const struct range *x = a, *y = b;

    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

/* Sort and merge an element's ranges so matching can bisect them. */
static size_t normalize_ranges (struct range *r, size_t n)
{
    size_t out = 0;

    if (n < 2)
        return n;
    qsort (r, n, sizeof (*r), range_cmp);
    for (size_t i = 0; i < n; i++) {
        if (out > 0 && r[i].lo <= (uint64_t)r[out - 1].hi + 1) {
            if (r[i].hi > r[out - 1].hi)
                r[out - 1].hi = r[i].hi;
        }
        else
            r[out++] = r[i];
    }
    return out;
}

/* One task id or range inside brackets, or the task after '_'. */
static int parse_task_range (struct jparse *jp, const char **p, struct range *r)
{
    uint64_t lo, hi;

    if (take_uint (p, TR_WHEN_MAX_TASK_ID, &lo) < 0) {
        if (is_digit ((*p)[-1]))
            return jfail (jp, "task id out of range 0-%d", TR_WHEN_MAX_TASK_ID);
        return jfail (jp, "expected a task id at '%.10s'", *p);
    }
    hi = lo;
    if (**p == '-') {
        (*p)++;
        if (take_uint (p, TR_WHEN_MAX_TASK_ID, &hi) < 0) {
            if (is_digit ((*p)[-1]))
                return jfail (jp, "task id out of range 0-%d",
                              TR_WHEN_MAX_TASK_ID);
            return jfail (jp, "expected a task id at '%.10s'", *p);
        }
        if (hi < lo)
            return jfail (jp, "range %llu-%llu runs backwards",
                          (unsigned long long)lo, (unsigned long long)hi);
        if (hi - lo + 1 > TR_WHEN_MAX_RANGE)
            return jfail (jp, "range %llu-%llu spans more than %d tasks",
                          (unsigned long long)lo, (unsigned long long)hi,
                          TR_WHEN_MAX_RANGE);
    }
    r->lo = (uint32_t)lo;
    r->hi = (uint32_t)hi;
    return 0;
}

static int add_range (struct tr_when_jobsel *sel,
                      struct jparse *jp,
                      struct range r)
{
    if (++jp->items > TR_WHEN_JOBSEL_MAX_RANGES)
        return jfail (jp, "more than %d task ids or ranges in the list",
                      TR_WHEN_JOBSEL_MAX_RANGES);
    if (sel->nranges == sel->ranges_cap) {
        size_t ncap = sel->ranges_cap ? sel->ranges_cap * 2 : 8;
        struct range *nr = realloc (sel->ranges, ncap * sizeof (*nr));

        if (!nr)
            return -1;
        sel->ranges = nr;
        sel->ranges_cap = ncap;
    }
    sel->ranges[sel->nranges++] = r;
    return 0;
}

/* Parse the element at *p (up to the next top-level ',' or the end) and
 * append it to sel.
 */
static int parse_elem (struct tr_when_jobsel *sel,
                       struct jparse *jp,
                       const char **pp)
{
    const char *p = *pp;
    struct elem *e = &sel->elems[sel->nelems];
    uint64_t v;

    memset (e, 0, sizeof (*e));
    if (named_id (jp)) {
        if (jp->elem_len >= sizeof (e->plain))
            return jfail (jp, "job id longer than %zu bytes",
                          sizeof (e->plain) - 1);
        memcpy (e->plain, p, jp->elem_len);
        e->plain[jp->elem_len] = '\0';
        if (!tr_record_id_is_safe (e->plain))
            return jfail (jp, "not a job id");
        e->kind = ELEM_NAMED;
        sel->nelems++;
        *pp = p + jp->elem_len;
        return 0;
    }
    if (take_uint (&p, TR_WHEN_MAX_JOB_ID, &v) < 0) {
        if (p > *pp)
            return jfail (jp, "job id out of range 1-%lu", TR_WHEN_MAX_JOB_ID);
        return jfail (jp, JOBSEL_FORMS);
    }
    if (v == 0)
        return jfail (jp, "job id out of range 1-%lu", TR_WHEN_MAX_JOB_ID);
    e->job = (uint32_t)v;

    if (*p == '\0' || *p == ',') {
        e->kind = ELEM_PLAIN;
        snprintf (e->plain, sizeof (e->plain), "%lu", (unsigned long)e->job);
    }
    else if (*p == '+') {
        p++;
        if (take_uint (&p, TR_WHEN_MAX_HET_COMPONENT, &v) < 0) {
            if (p > jp->elem && is_digit (p[-1]))
                return jfail (jp, "het component out of range 0-%d",
                              TR_WHEN_MAX_HET_COMPONENT);
            return jfail (jp, "expected a component number after '+'");
        }
        e->kind = ELEM_HET;
        e->het_component = (uint32_t)v;
    }
    else if (*p == '_' && p[1] == '*') {
        e->kind = ELEM_ALL_TASKS;
        p += 2;
    }
    else if (*p == '_' && p[1] == '[') {
        e->kind = ELEM_TASKS;
        e->first = sel->nranges;
        p += 2;
        for (;;) {
            struct range r = { 0, 0 };

            if (parse_task_range (jp, &p, &r) < 0 || add_range (sel, jp, r) < 0)
                return -1;
            if (*p == ']')
                break;
            if (*p == '\0')
                return jfail (jp, "missing ']'");
            if (*p != ',')
                return jfail (jp,
                              "expected ',' or ']' in the task list, "
                              "not '%c'",
                              *p);
            p++;
        }
        p++;
        e->n =
            normalize_ranges (sel->ranges + e->first, sel->nranges - e->first);
        sel->nranges = e->first + e->n;
    }
    else if (*p == '_') {
        struct range r = { 0, 0 };

        p++;
        if (parse_task_range (jp, &p, &r) < 0)
            return -1;
        if (r.lo != r.hi)
            return jfail (jp, "a task range needs brackets: N_[T1-T2]");
        e->kind = ELEM_TASKS;
        e->first = sel->nranges;
        e->n = 1;
        if (add_range (sel, jp, r) < 0)
            return -1;
    }
    else
        return jfail (jp, "unexpected '%c'; " JOBSEL_FORMS, *p);

    if (*p != '\0' && *p != ',')
        return jfail (jp, "unexpected '%c' after the selector", *p);
    sel->nelems++;
    *pp = p;
    return 0;
}

/* The end of the element starting at p: the next ',' outside brackets. */
static size_t elem_len (const char *p)
{
    size_t n = 0;
    int depth = 0;

    for (; p[n] != '\0'; n++) {
        if (p[n] == '[')
            depth++;
        else if (p[n] == ']' && depth > 0)
            depth--;
        else if (p[n] == ',' && depth == 0)
            break;
    }
    return n;
}

tr_when_jobsel_t *tr_when_jobsel_parse (const char *list, tr_error_t *error)
{
    struct tr_when_jobsel *sel = NULL;
    struct jparse jp = { .error = error };
    size_t len;
    const char *p;

    if (!list) {
        errno = EINVAL;
        tr_errprintf (error, "invalid argument");
        return NULL;
    }
    len = strnlen (list, TR_WHEN_JOBSEL_MAX_LEN + 1);
    if (len > TR_WHEN_JOBSEL_MAX_LEN) {
        errno = EINVAL;
        tr_errprintf (error, "job id list longer than %d bytes",
                      TR_WHEN_JOBSEL_MAX_LEN);
        return NULL;
    }
    if (len == 0) {
        errno = EINVAL;
        tr_errprintf (error, "empty job id list; " JOBSEL_FORMS);
        return NULL;
    }
    if (!(sel = calloc (1, sizeof (*sel)))) {
        tr_errprintf (error, "out of memory");
        return NULL;
    }

    for (p = list;;) {
        jp.elem = p;
        jp.elem_len = elem_len (p);
        if (jp.elem_len == 0) {
            jfail (&jp, "empty element in '%.*s'", QUOTE_MAX, list);
            goto error;
        }
        if (sel->nelems >= TR_WHEN_JOBSEL_MAX_ELEMENTS) {
            jfail (&jp, "more than %d elements in the list",
                   TR_WHEN_JOBSEL_MAX_ELEMENTS);
            goto error;
        }
        if (sel->nelems == sel->elems_cap) {
            size_t ncap = sel->elems_cap ? sel->elems_cap * 2 : 4;
            struct elem *ne = realloc (sel->elems, ncap * sizeof (*ne));

            if (!ne)
                goto error;
            sel->elems = ne;
            sel->elems_cap = ncap;
        }
        if (parse_elem (sel, &jp, &p) < 0)
            goto error;
        if (*p == '\0')
            break;
        p++; /* the ',' */
    }
    return sel;
error:
    if (errno == ENOMEM)
        tr_errprintf (error, "out of memory");
    tr_when_jobsel_destroy (sel);
    return NULL;
}

void tr_when_jobsel_destroy (tr_when_jobsel_t *sel)
{
    int saved = errno;

    if (sel) {
        free (sel->elems);
        free (sel->ranges);
        free (sel);
    }
    errno = saved;
}

size_t tr_when_jobsel_count (const tr_when_jobsel_t *sel)
{
    return sel ? sel->nelems : 0;
}

const char *tr_when_jobsel_plain (const tr_when_jobsel_t *sel, size_t i)
{
    if (!sel || i >= sel->nelems) {
        errno = EINVAL;
        return NULL;
    }
    if (sel->elems[i].kind != ELEM_PLAIN && sel->elems[i].kind != ELEM_NAMED)
        return NULL;
    /* a whole PBS array ("7[]", "7[].srv") and a subjob without its
     * server ("7[3]" for "7[3].srv") name records keyed otherwise
     */
    if (sel->elems[i].kind == ELEM_NAMED
        && (strstr (sel->elems[i].plain, "[]")
            || (strchr (sel->elems[i].plain, '[')
                && !strchr (sel->elems[i].plain, '.'))))
        return NULL;
    return sel->elems[i].plain;
}

/* A record's id: true and *v when s is a decimal number that fits a
 * Slurm job id; "", NULL and anything else are no id at all.
 */
static bool record_id (const char *s, uint32_t *v)
{
    uint64_t x;

    if (!s || take_uint (&s, UINT32_MAX, &x) < 0 || *s != '\0')
        return false;
    *v = (uint32_t)x;
    return true;
}

/* A record's PBS, Torque or LSF id is want, or want with the server
 * name after it: "7[3]" names "7[3].srv", "7[]" names "7[].srv.example"
 * (qstat takes either).
 */
static bool named_is (const char *id, const char *want)
{
    size_t n = strlen (want);

    return id && !strncmp (id, want, n) && (id[n] == '\0' || id[n] == '.');
}

static bool in_ranges (const struct range *r, size_t n, long task)
{
    size_t lo = 0, hi = n;

    if (task < 0 || task > TR_WHEN_MAX_TASK_ID)
        return false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if ((uint32_t)task < r[mid].lo)
            hi = mid;
        else if ((uint32_t)task > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

bool tr_when_jobsel_match (const tr_when_jobsel_t *sel,
                           const char *job_id,
                           const char *array_job_id,
                           long array_task_id,
                           const char *het_job_id,
                           long het_component)
{
    uint32_t job = 0, array = 0, het = 0;
    bool have_job, have_array, have_het;

    if (!sel)
        return false;
    have_job = record_id (job_id, &job);
    have_array = record_id (array_job_id, &array);
    have_het = record_id (het_job_id, &het);

    for (size_t i = 0; i < sel->nelems; i++) {
        const struct elem *e = &sel->elems[i];

        switch (e->kind) {
        case ELEM_PLAIN:
            /* sacct -j N shows job N, all of array N, all of het job N */
            if ((have_job && job == e->job) || (have_array && array == e->job)
                || (have_het && het == e->job))
                return true;
            break;
        case ELEM_TASKS:
            if (have_array && array == e->job
                && in_ranges (sel->ranges + e->first, e->n, array_task_id))
                return true;
            break;
        case ELEM_ALL_TASKS:
            if (have_array && array == e->job)
                return true;
            break;
        case ELEM_HET:
            if (have_het && het == e->job && het_component >= 0
                && (uint64_t)het_component == e->het_component)
                return true;
            break;
        case ELEM_NAMED:
            /* the job, or every subjob of a PBS array "7[].srv", with
             * or without the server's name
             */
            if (named_is (job_id, e->plain)
                || named_is (array_job_id, e->plain))
                return true;
            break;
        }
    }
    return false;
}

double tr_when_monotonic (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int tr_when_poll_ms (double due, double now)
{
    return due > now ? (int)ceil ((due - now) * 1000) : 0;
}

