/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Order statistics for recommendations and regression checks.  Samples
 * are the runs of one step group, tens to thousands of values, so a
 * sort per call is cheaper than anything cleverer and keeps the results
 * exact.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "stats.h"

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double tr_stats_quantile (double *v, size_t n, double q)
{
    double h, lo;
    size_t i;

    if (n == 0 || isnan (q))
        return NAN;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    qsort (v, n, sizeof (*v), cmp_double);
    h = (double)(n - 1) * q;
    lo = floor (h);
    i = (size_t)lo;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (h - lo) * (v[i + 1] - v[i]);
}

double tr_stats_median (double *v, size_t n)
{
    return tr_stats_quantile (v, n, 0.5);
}

double tr_stats_mad (double *v, size_t n)
{
    double med, mad;
    double *dev;

    if (n == 0)
        return NAN;
    med = tr_stats_median (v, n);
    if (!(dev = malloc (n * sizeof (*dev))))
        return NAN;
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs (v[i] - med);
    mad = 1.4826 * tr_stats_median (dev, n);
    free (dev);
    return mad;
}

double tr_stats_mean (const double *v, size_t n)
{
    double sum = 0;

    if (n == 0)
        return NAN;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum / (double)n;
}

double tr_stats_min (const double *v, size_t n)
{
    double m = NAN;

    for (size_t i = 0; i < n; i++)
        if (isnan (m) || v[i] < m)
            m = v[i];
    return m;
}

double tr_stats_max (const double *v, size_t n)
{
    double m = NAN;

    for (size_t i = 0; i < n; i++)
        if (isnan (m) || v[i] > m)
            m = v[i];
    return m;
}

size_t tr_stats_drop_nan (double *v, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (!isnan (v[i]))
            v[k++] = v[i];
    return k;
}

int tr_stats_cmp (double a, double b)
{
    if (isnan (a) || isnan (b))
        return isnan (a) - isnan (b);
    return (a > b) - (a < b);
}
