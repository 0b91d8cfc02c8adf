/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Bounded time series for step records.
 */
#include "config.h"

#include <string.h>

#include "series.h"

void tr_series_init (struct tr_series *s)
{
    memset (s, 0, sizeof (*s));
    s->per = 1;
}

static void series_compact (struct tr_series *s)
{
    size_t j = 0;

    for (size_t i = 0; i + 1 < s->n; i += 2, j++) {
        s->t[j] = s->t[i];
        s->min[j] = s->min[i] < s->min[i + 1] ? s->min[i] : s->min[i + 1];
        s->max[j] = s->max[i] > s->max[i + 1] ? s->max[i] : s->max[i + 1];
        s->mean[j] = (s->mean[i] + s->mean[i + 1]) / 2;
    }
    if (s->n % 2) {
        /* an odd last point stays on its own */
        s->t[j] = s->t[s->n - 1];
        s->min[j] = s->min[s->n - 1];
        s->max[j] = s->max[s->n - 1];
        s->mean[j] = s->mean[s->n - 1];
        j++;
    }
    s->n = j;
    s->per *= 2;
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
    if (s->n == TR_SERIES_MAX)
        series_compact (s);
    s->t[s->n] = s->acc_t;
    s->min[s->n] = s->acc_min;
    s->max[s->n] = s->acc_max;
    s->mean[s->n] = s->acc_sum / (double)s->acc_n;
    s->n++;
    s->acc_n = 0;
}

json_t *tr_series_json (const struct tr_series *s)
{
    json_t *o = json_object (), *mn = json_array (), *me = json_array ();
    json_t *mx = json_array ();

    if (!o || !mn || !me || !mx)
        goto nomem;
    for (size_t i = 0; i < s->n; i++)
        if (json_array_append_new (mn, json_real (s->min[i])) < 0
            || json_array_append_new (me, json_real (s->mean[i])) < 0
            || json_array_append_new (mx, json_real (s->max[i])) < 0)
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
        if (json_array_append_new (a, json_real (s->t[i])) < 0) {
            json_decref (a);
            return NULL;
        }
    return a;
}

