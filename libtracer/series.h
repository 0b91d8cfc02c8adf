/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_SERIES_H
#define TRACER_SERIES_H

#include <stddef.h>
#include <jansson.h>

/* Maximum points kept per series metric (older points merge in pairs). */
#define TR_SERIES_MAX 1000

/* Significant digits a series value keeps in the record: the series are
 * for charts and idle detection; exact figures are in the summary.
 */
#define TR_SERIES_DIGITS 4

/* A point: its time in full, its values in single precision (7
 * significant digits, more than the record keeps), 20 bytes.
 */
struct tr_series_point {
    double t;
    float min, mean, max;
};

/* A bounded time series: when TR_SERIES_MAX points are full, neighbours
 * merge in pairs (min, mean and max kept) and later points cover twice
 * as many samples, so a 7-day step stays small.  Points are allocated
 * as they come (a series never written costs nothing); if memory runs
 * out, the points merge early instead.
 */
struct tr_series {
    size_t n;             /* points emitted */
    size_t cap;           /* points allocated */
    size_t per;           /* raw samples per point */
    size_t acc_n;         /* raw samples in the open bucket */
    double acc_t, acc_sum, acc_min, acc_max;
    struct tr_series_point *p;
};

void tr_series_init (struct tr_series *s);
void tr_series_free (struct tr_series *s);

/* Add a sample v taken at t seconds after the step started. */
void tr_series_add (struct tr_series *s, double t, double v);

/* v rounded to TR_SERIES_DIGITS significant digits (0, NaN and
 * infinities unchanged), as the nearest double to that decimal.
 */
double tr_series_round (double v);

/* {"min": [...], "mean": [...], "max": [...]} (values rounded by
 * tr_series_round) and the times array (rounded to milliseconds).
 */
json_t *tr_series_json (const struct tr_series *s);
json_t *tr_series_times (const struct tr_series *s);

#endif /* !TRACER_SERIES_H */
