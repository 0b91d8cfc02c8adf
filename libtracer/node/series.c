/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Bounded time series for step records.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "series.h"
#include "libtracer/util/strbuf.h"

/* Points allocated first; the array doubles up to TR_SERIES_MAX. */
#define SERIES_FIRST 16

void tr_series_init (struct tr_series *s)
{
    memset (s, 0, sizeof (*s));
    s->per = 1;
}

void tr_series_free (struct tr_series *s)
{
    free (s->p);
    tr_series_init (s);
}

static void series_compact (struct tr_series *s)
{
    struct tr_series_point *p = s->p;
    size_t j = 0;

    for (size_t i = 0; i + 1 < s->n; i += 2, j++) {
        p[j].t = p[i].t;
        p[j].min = p[i].min < p[i + 1].min ? p[i].min : p[i + 1].min;
        p[j].max = p[i].max > p[i + 1].max ? p[i].max : p[i + 1].max;
        p[j].mean = (float)(((double)p[i].mean + p[i + 1].mean) / 2);
    }
    if (s->n % 2)
        /* an odd last point stays on its own */
        p[j++] = p[s->n - 1];
    s->n = j;
    s->per *= 2;
}

/* Room for one more point: grow the array, or merge when it is at its
 * bound or cannot grow.  False only when there is no array at all.
 */
static int series_room (struct tr_series *s)
{
    size_t cap;
    struct tr_series_point *p;

    if (s->n < s->cap)
        return 1;
    cap = s->cap ? s->cap * 2 : SERIES_FIRST;
    if (cap > TR_SERIES_MAX)
        cap = TR_SERIES_MAX;
    if (cap > s->cap && (p = realloc (s->p, cap * sizeof (*p)))) {
        s->p = p;
        s->cap = cap;
        return 1;
    }
    if (s->n < 2)
        return 0;
    series_compact (s);
    return 1;
}

void tr_series_add (struct tr_series *s, double t, double v)
{
    if (s->acc_n == 0) {
        s->acc_t = t;
        s->acc_sum = 0;
        s->acc_min = v;
        s->acc_max = v;
    }
    s->acc_sum += v;
    if (v < s->acc_min)
        s->acc_min = v;
    if (v > s->acc_max)
        s->acc_max = v;
    if (++s->acc_n < s->per)
        return;
    if (!series_room (s))
        return; /* out of memory before the first points: keep the bucket */
    s->p[s->n].t = s->acc_t;
    s->p[s->n].min = (float)s->acc_min;
    s->p[s->n].max = (float)s->acc_max;
    s->p[s->n].mean = (float)(s->acc_sum / (double)s->acc_n);
    s->n++;
    s->acc_n = 0;
}

/* The powers of ten that are exact doubles. */
static const double exact_pow10[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};
#define EXACT_POW10_MAX 22

static double pow10i (int e)
{
    return e >= 0 && e <= EXACT_POW10_MAX ? exact_pow10[e] : pow (10, e);
}

/* |v| (finite, not 0) at TR_SERIES_DIGITS significant digits, as the
 * integer r times 10^e, scaled by an exact power of ten so that r times
 * the scale is the double nearest the rounded decimal.  False when e is
 * below -300, where the scale would leave the double range.
 */
static bool round_digits (double v, double *r, int *e)
{
    double a = fabs (v);

    *e = (int)floor (log10 (a)) - (TR_SERIES_DIGITS - 1);
    if (*e < -300)
        return false;
    *r = *e >= 0 ? round (a / pow10i (*e)) : round (a * pow10i (-*e));
    return true;
}

double tr_series_round (double v)
{
    double r, x;
    int e;

    if (v == 0 || !isfinite (v) || !round_digits (v, &r, &e))
        return v;
    x = e >= 0 ? r * pow10i (e) : r / pow10i (-e);
    if (!isfinite (x))
        return v; /* next to DBL_MAX */
    return v < 0 ? -x : x;
}

json_t *tr_series_json (const struct tr_series *s)
{
    json_t *o = json_object (), *mn = json_array (), *me = json_array ();
    json_t *mx = json_array ();

    if (!o || !mn || !me || !mx)
        goto nomem;
    for (size_t i = 0; i < s->n; i++)
        if (json_array_append_new (mn, json_real (tr_series_round (s->p[i].min)))
                < 0
            || json_array_append_new (me,
                                      json_real (tr_series_round (s->p[i].mean)))
                   < 0
            || json_array_append_new (mx, json_real (tr_series_round (s->p[i].max)))
                   < 0)
            goto nomem;
    if (json_object_set_new (o, "min", mn) < 0
        || json_object_set_new (o, "mean", me) < 0
        || json_object_set_new (o, "max", mx) < 0)
        goto nomem_o;
    return o;
nomem:
    json_decref (mn);
    json_decref (me);
    json_decref (mx);
nomem_o:
    json_decref (o);
    return NULL;
}

json_t *tr_series_times (const struct tr_series *s)
{
    json_t *a = json_array ();

    for (size_t i = 0; a && i < s->n; i++)
        if (json_array_append_new (a, json_real (round (s->p[i].t * 1000) / 1000))
            < 0) {
            json_decref (a);
            return NULL;
        }
    return a;
}

/* Writing series as text.  tr_series_json and tr_series_times build a
 * JSON tree, one allocated real per value, that jansson then prints with
 * "%.17g": about 5 ms for a series of 1,000 points of 7 metrics, for a
 * snapshot rewritten every 30 s.  Here each value is written from its
 * point: the decimal that tr_series_round rounds to is known as an
 * integer of at most TR_SERIES_DIGITS digits and a power of ten, and a
 * time as a whole number of milliseconds, so no digit needs printf.
 */

/* The decimal digits of u, most significant first; returns how many. */
static int utoa_digits (char *out, uint64_t u)
{
    char tmp[24];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* The decimal m * 10^e (m > 0, no trailing zero digit) as "%.17g"
 * shows it, with ".0" added to a whole number as jansson adds it: in
 * full from 1e-4 up to 1e17, with an exponent outside.
 */
static char *put_decimal (char *p, bool neg, uint64_t m, int e)
{
    char dig[24];
    int d = utoa_digits (dig, m);
    int x = e + d - 1; /* the exponent of the first digit */

    if (neg)
        *p++ = '-';
    if (x < -4 || x >= 17) {
        *p++ = dig[0];
        if (d > 1) {
            *p++ = '.';
            memcpy (p, dig + 1, (size_t)d - 1);
            p += d - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        if (x < 0)
            x = -x;
        if (x < 10)
            *p++ = '0';
        p += utoa_digits (p, (uint64_t)x);
    }
    else if (e >= 0) {
        memcpy (p, dig, (size_t)d);
        p += d;
        memset (p, '0', (size_t)e);
        p += e;
        memcpy (p, ".0", 2);
        p += 2;
    }
    else if (d + e > 0) {
        memcpy (p, dig, (size_t)(d + e));
        p += d + e;
        *p++ = '.';
        memcpy (p, dig + d + e, (size_t)-e);
        p += -e;
    }
    else {
        *p++ = '0';
        *p++ = '.';
        memset (p, '0', (size_t)(-(d + e)));
        p += -(d + e);
        memcpy (p, dig, (size_t)d);
        p += d;
    }
    return p;
}

int tr_series_real15 (char *buf, size_t size, double v)
{
    int n;

    if (!isfinite (v) || size < 32) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (buf, size, "%.15g", v);
    if (!strpbrk (buf, ".eE")) {
        memcpy (buf + n, ".0", 3);
        n += 2;
    }
    return n;
}

/* v as tr_series_round rounds it, written at p (room for 32 bytes);
 * NULL with errno = EINVAL when v is not finite.
 */
static char *put_value (char *p, double v)
{
    double r;
    int e, n;

    if (!isfinite (v)) {
        errno = EINVAL;
        return NULL;
    }
    if (v == 0) {
        memcpy (p, "0.0", 3);
        return p + 3;
    }
    /* tr_series_round's decimal, written from its integer */
    if (round_digits (v, &r, &e) && r >= 1 && r <= 1e5
        && isfinite (r * pow10i (e))) {
        uint64_t m = (uint64_t)r;
        while (m % 10 == 0) {
            m /= 10;
            e++;
        }
        return put_decimal (p, v < 0, m, e);
    }
    /* next to the ends of the double range: as tr_series_round leaves it */
    n = tr_series_real15 (p, 32, tr_series_round (v));
    return n < 0 ? NULL : p + n;
}

/* t rounded to milliseconds, as tr_series_times rounds it. */
static char *put_time (char *p, double t)
{
    double ms = round (t * 1000);
    uint64_t k;
    int n;

    if (!(fabs (ms) < 1e15)) {
        n = tr_series_real15 (p, 32, ms / 1000);
        return n < 0 ? NULL : p + n;
    }
    if (ms < 0) {
        *p++ = '-';
        ms = -ms;
    }
    k = (uint64_t)ms;
    p += utoa_digits (p, k / 1000);
    *p++ = '.';
    if (k % 1000 == 0)
        *p++ = '0';
    else {
        unsigned f = (unsigned)(k % 1000);
        *p++ = (char)('0' + f / 100);
        if (f % 100) {
            *p++ = (char)('0' + f / 10 % 10);
            if (f % 10)
                *p++ = (char)('0' + f % 10);
        }
    }
    return p;
}

/* Values are written through a small buffer, flushed when it fills. */
struct textout {
    tr_strbuf_t *sb;
    char buf[4096];
    size_t len;
};

static int out_flush (struct textout *o)
{
    if (o->len && tr_strbuf_append (o->sb, o->buf, o->len) < 0)
        return -1;
    o->len = 0;
    return 0;
}

/* Room for one value (32 bytes) and a separator. */
static char *out_room (struct textout *o)
{
    if (o->len + 40 > sizeof (o->buf) && out_flush (o) < 0)
        return NULL;
    return o->buf + o->len;
}

static int out_str (struct textout *o, const char *s)
{
    size_t n = strlen (s);

    if (o->len + n > sizeof (o->buf) && out_flush (o) < 0)
        return -1;
    if (n > sizeof (o->buf))
        return tr_strbuf_append (o->sb, s, n);
    memcpy (o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

enum which { W_MIN, W_MEAN, W_MAX, W_TIME };

static int out_array (struct textout *o,
                      const struct tr_series *s,
                      size_t n,
                      enum which w)
{
    if (out_str (o, "[") < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct tr_series_point *pt = &s->p[i];
        char *p = out_room (o), *end;

        if (!p)
            return -1;
        if (i)
            *p++ = ',';
        switch (w) {
        case W_MIN:
            end = put_value (p, pt->min);
            break;
        case W_MEAN:
            end = put_value (p, pt->mean);
            break;
        case W_MAX:
            end = put_value (p, pt->max);
            break;
        default:
            end = put_time (p, pt->t);
            break;
        }
        if (!end)
            return -1;
        o->len = (size_t)(end - o->buf);
    }
    return out_str (o, "]");
}

int tr_series_text (tr_strbuf_t *sb, const struct tr_series *s, size_t n)
{
    struct textout o = { .sb = sb, .len = 0 };

    if (n > s->n)
        n = s->n;
    if (out_str (&o, "{\"min\":") < 0 || out_array (&o, s, n, W_MIN) < 0
        || out_str (&o, ",\"mean\":") < 0 || out_array (&o, s, n, W_MEAN) < 0
        || out_str (&o, ",\"max\":") < 0 || out_array (&o, s, n, W_MAX) < 0
        || out_str (&o, "}") < 0)
        return -1;
    return out_flush (&o);
}

int tr_series_times_text (tr_strbuf_t *sb, const struct tr_series *s, size_t n)
{
    struct textout o = { .sb = sb, .len = 0 };

    if (n > s->n)
        n = s->n;
    if (out_array (&o, s, n, W_TIME) < 0)
        return -1;
    return out_flush (&o);
}
