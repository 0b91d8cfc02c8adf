/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Units: how a byte count or a duration is written, decided once.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "units.h"

static const char *const iec[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
static const char letters[] = "KMGTPE";

/* Divide *v by 1024 while it is 1024 or more, at most max times; how
 * many times. */
static int scale (double *v, int max)
{
    int u = 0;

    while (*v >= 1024 && u < max) {
        *v /= 1024;
        u++;
    }
    return u;
}

const char *tr_units_bytes (char *buf, size_t size, double bytes)
{
    int u = scale (&bytes, 5);

    if (u == 0)
        snprintf (buf, size, "%.0f B", bytes);
    else
        snprintf (buf, size, "%.1f %s", bytes, iec[u]);
    return buf;
}

const char *tr_units_bytes_short (char *buf, size_t size, double v)
{
    int u;

    if (v < 1024) {
        snprintf (buf, size, "%.0fB", v);
        return buf;
    }
    u = scale (&v, 6) - 1;
    snprintf (buf, size, v < 9.95 ? "%.1f%c" : "%.0f%c", v, letters[u]);
    return buf;
}

const char *tr_units_bytes_exact (char *buf, size_t size, double bytes)
{
    double v = ceil (bytes / 1024);
    int u = 0;

    while (u < 4 && v >= 1024 && fmod (v, 1024) == 0) {
        v /= 1024;
        u++;
    }
    snprintf (buf, size, "%.0f%c", v, letters[u]);
    return buf;
}

const char *tr_units_bytes_sacct (char *buf, size_t size, double v)
{
    int u;

    if (v < 1024) {
        snprintf (buf, size, "%.0f", v);
        return buf;
    }
    u = scale (&v, 6) - 1;
    snprintf (buf, size,
              v < 10    ? "%.2f%c"
              : v < 100 ? "%.1f%c"
                        : "%.0f%c",
              v, letters[u]);
    return buf;
}

const char *tr_units_duration (char *buf, size_t size, double seconds)
{
    long s = (long)llround (seconds < 0 ? 0 : seconds);
    long days = s / 86400;

    if (days)
        snprintf (buf, size, "%ld-%02ld:%02ld:%02ld", days, (s / 3600) % 24,
                  (s / 60) % 60, s % 60);
    else
        snprintf (buf, size, "%02ld:%02ld:%02ld", s / 3600, (s / 60) % 60,
                  s % 60);
    return buf;
}

const char *tr_units_duration_words (char *buf, size_t size, double s)
{
    if (s >= 3600)
        snprintf (buf, size, "%.0f h %02.0f min", floor (s / 3600),
                  floor (fmod (s, 3600) / 60));
    else if (s >= 60)
        snprintf (buf, size, "%.0f min %02.0f s", floor (s / 60),
                  floor (fmod (s, 60)));
    else
        snprintf (buf, size, "%.1f s", s);
    return buf;
}
