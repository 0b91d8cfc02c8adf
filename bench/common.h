/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What the C benchmarks share: option numbers, signal handlers, the
 * checks before a benchmark of the live system may run, the machine
 * description for their headers, and the step cgroup details.
 */
#ifndef TRACER_BENCH_COMMON_H
#define TRACER_BENCH_COMMON_H

#include <getopt.h>
#include <stdbool.h>

#define BENCH_EXIT_SKIP 77 /* automake's "skipped" */

struct bench_machine {
    long ncpu;
    char model[128];  /* /proc/cpuinfo's model name */
    char kernel[256]; /* uname: system, release, machine */
};

/* A decimal long in [min, max], the whole string.  Returns 0 or -1. */
int bench_parse_long (const char *s, long min, long max, long *out);

/* "PROG: bad value for --NAME: 'ARG'" on stderr, NAME being the long
 * option whose short code getopt_long returned as c.
 */
void bench_bad_value (const char *prog,
                      const struct option *longopts,
                      int c,
                      const char *arg);

/* handler for SIGINT, SIGTERM and SIGHUP (SA_RESTART).  Returns 0 or -1
 * with errno.
 */
int bench_install_handlers (void (*handler) (int));

/* Whether prog may run: as root (else BENCH_EXIT_SKIP, saying that root
 * is needed for what `needs` says), on the live system (TRACER_FSROOT
 * set: 2), with a v1 memory or cpuacct hierarchy or a cgroup2 mount
 * (else BENCH_EXIT_SKIP).  Returns 0 when it may, with the reason on
 * stderr otherwise.
 */
int bench_preflight (const char *prog, const char *needs);

void bench_machine_describe (struct bench_machine *m);

/* Remove a cgroup directory the benchmark made, once its processes are
 * reaped; a reaped task can linger in cgroup2 for a moment (EBUSY), so
 * retry for up to two seconds.  Returns 0 (also when already gone) or
 * -1, with prog's message on stderr.
 */
int bench_cgroup_remove (const char *prog, const char *dir);

/* Whether a cgroup2 directory has the memory controller. */
bool bench_has_memory_controller (const char *dir);

#endif /* !TRACER_BENCH_COMMON_H */
