/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Bounded time series for step records.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "series.h"

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

double tr_series_round (double v)
{
    double scale, r;
    int e;

    if (v == 0 || !isfinite (v))
        return v;
    e = (int)floor (log10 (fabs (v))) - (TR_SERIES_DIGITS - 1);
    /* scale by an exact power of ten so that the result is the double
     * nearest the rounded decimal
     */
    if (e >= 0) {
        scale = pow (10, e);
        r = round (v / scale) * scale;
        return isfinite (r) ? r : v; /* next to DBL_MAX */
    }
    if (e < -300)
        return v;
    scale = pow (10, -e);
    return round (v * scale) / scale;
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
