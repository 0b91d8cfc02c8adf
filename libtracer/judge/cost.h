/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_COST_H
#define TRACER_COST_H

#include <stddef.h>

/* Prices of one resource-hour, in cost->currency.  A price of 0 means
 * the resource is not charged; with every price 0 (or no tr_cost at
 * all) no money is computed.  gb_hour is the price of one GiB-hour
 * (2^30 bytes for an hour: the "G" of Slurm's --mem).
 *
 * part[] overrides the prices of the rows whose partition it names
 * (exact match, the first entry wins).  In an override, a price that is
 * NAN or negative is not overridden (the default applies) and 0 makes
 * that resource free in the partition, so a parser should set the
 * prices an entry does not give to NAN.
 */
struct tr_cost_part {
    const char *partition;
    double core_hour;
    double gb_hour;
    double gpu_hour;
};

typedef struct tr_cost {
    double core_hour;
    double gb_hour;
    double gpu_hour;
    const char *currency; /* e.g. "EUR"; NULL taken as "" */
    size_t npart;
    struct tr_cost_part *part;
} tr_cost_t;

#endif /* !TRACER_COST_H */
