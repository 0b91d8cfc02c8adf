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

/* The same as JSON text, appended to sb, for the first n points (at most
 * s->n): tr_series_text writes {"min":[...],"mean":[...],"max":[...]},
 * tr_series_times_text [...].  Each number reads back (strtod, any JSON
 * parser) as the very double that tr_series_json and tr_series_times
 * hold for it, for values from 1e-19 to 1e25 (elsewhere within one unit
 * in the last place), but is written from the point without a JSON tree
 * or printf: a snapshot of a long step has some 20,000 of them.  Returns
 * 0, or -1 with errno (ENOMEM; EINVAL for a value that is not finite,
 * which JSON cannot hold).
 */
struct tr_strbuf;
int tr_series_text (struct tr_strbuf *sb, const struct tr_series *s, size_t n);
int tr_series_times_text (struct tr_strbuf *sb,
                          const struct tr_series *s,
                          size_t n);

/* A double as JSON text the way the record writer prints it (15
 * significant digits, ".0" on a whole number) into buf (at least 32
 * bytes); returns the length, or -1 with errno = EINVAL when v is not
 * finite.
 */
int tr_series_real15 (char *buf, size_t size, double v);

#endif /* !TRACER_SERIES_H */
