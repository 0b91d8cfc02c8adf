/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_STATS_H
#define TRACER_STATS_H

#include <stddef.h>

/* Robust statistics over small samples of runs: quantiles, the median
 * and the median absolute deviation.  Every function sorts v in place
 * (NAN values first removed by the caller) and returns NAN for n = 0.
 */

/* The q-quantile (0 <= q <= 1) by linear interpolation between order
 * statistics (Hyndman and Fan type 7, what R and NumPy use by default):
 * q = 0 is the minimum, q = 1 the maximum.
 */
double tr_stats_quantile (double *v, size_t n, double q);

double tr_stats_median (double *v, size_t n);

/* Median absolute deviation from the median, scaled by 1.4826 so that it
 * estimates the standard deviation of normally distributed data.
 */
double tr_stats_mad (double *v, size_t n);

/* Mean, minimum and maximum (v not reordered). */
double tr_stats_mean (const double *v, size_t n);
double tr_stats_min (const double *v, size_t n);
double tr_stats_max (const double *v, size_t n);

/* Move the values of v that are not NAN to its front, in order, and
 * return how many there are.
 */
size_t tr_stats_drop_nan (double *v, size_t n);

/* The order of two numbers for sorting: -1, 0 or 1, with an unknown one
 * (NaN) after every known one. */
int tr_stats_cmp (double a, double b);

#endif /* !TRACER_STATS_H */
