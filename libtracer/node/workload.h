/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_WORKLOAD_H
#define TRACER_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

#include "libtracer/util/error.h"

/* A small synthetic workload with known ground truth: the built-in demo
 * of tracer-run and the measuring stick of the integration tests.
 * SPEC: comma-separated cpu=SECONDS, mem=SIZE (K/M/G suffixes),
 * write=SIZE, children=N (each burns child_cpu=SECONDS), threads=N (the
 * cpu burn runs in N threads at once, each for cpu=SECONDS), alive=N
 * (N idle children, all alive during the cpu burn, then released),
 * grow=SIZE (mem is touched at SIZE bytes per second, as a step whose
 * memory keeps growing, instead of at once), hold=SECONDS (then sleep
 * that long holding it).
 */
struct tr_workload {
    double cpu_s;
    uint64_t mem_bytes;
    uint64_t write_bytes;
    int children;
    double child_cpu_s;
    int threads;
    int alive;
    uint64_t grow_bps;
    double hold_s;
};

#define TR_WORKLOAD_DEMO "cpu=1,mem=64M,write=16M,children=4,child_cpu=0.1"

int tr_workload_parse (const char *spec,
                       struct tr_workload *w,
                       tr_error_t *error);

/* Run the workload in the calling process (children are forked and
 * reaped), then print one JSON line to out with its own view of what it
 * used: {"cpu_s":..,"maxrss_bytes":..,"touched_bytes":..}.
 * Returns 0 or -1 with errno.
 */
int tr_workload_run (const struct tr_workload *w, FILE *out);

#endif /* !TRACER_WORKLOAD_H */
