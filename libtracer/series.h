/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_SERIES_H
#define TRACER_SERIES_H

#include <stddef.h>
#include <jansson.h>

/* Maximum points kept per series metric (older points merge in pairs). */
#define TR_SERIES_MAX 1000

/* A bounded time series: when TR_SERIES_MAX points are full, neighbours
 * merge in pairs (min, mean and max kept) and later points cover twice
 * as many samples, so a 7-day step stays small.
 */
struct tr_series {
    size_t n;             /* points emitted */
    size_t per;           /* raw samples per point */
    size_t acc_n;         /* raw samples in the open bucket */
    double acc_t, acc_sum, acc_min, acc_max;
    double t[TR_SERIES_MAX], min[TR_SERIES_MAX];
    double mean[TR_SERIES_MAX], max[TR_SERIES_MAX];
};

void tr_series_init (struct tr_series *s);

/* Add a sample v taken at t seconds after the step started. */
void tr_series_add (struct tr_series *s, double t, double v);

/* {"min": [...], "mean": [...], "max": [...]} and the times array. */
json_t *tr_series_json (const struct tr_series *s);
json_t *tr_series_times (const struct tr_series *s);

#endif /* !TRACER_SERIES_H */
