/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_PSI_H
#define TRACER_PSI_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/util/strbuf.h"

/* Pressure stall information: the cumulative "total=" stall times of a
 * PSI file (cpu.pressure, memory.pressure, io.pressure of a cgroup2
 * directory, or /proc/pressure/<resource>), in microseconds.
 */
struct tr_psi {
    uint64_t some_us; /* time some runnable task was stalled */
    uint64_t full_us; /* time all non-idle tasks were stalled */
    bool have_full;   /* the file had a "full" line */
};

/* Index of each resource in the arrays taken by the JSON builders, in
 * the order summary.pressure lists them.
 */
enum tr_psi_resource {
    TR_PSI_CPU = 0,
    TR_PSI_MEMORY = 1,
    TR_PSI_IO = 2,
    TR_PSI_NRES = 3,
};

/* Parse the text of a PSI file:
 *     some avg10=0.00 avg60=0.00 avg300=0.00 total=2820749
 *     full avg10=0.00 avg60=0.00 avg300=0.00 total=1234
 * The "some" line is required; "full" may be absent (cpu on kernels
 * before 5.13).  Unknown fields and unknown lines are ignored.  Returns
 * 0, or -1 with errno = EINVAL (no or duplicate "some" line, a line
 * without total=, a total that is not a decimal number) or ERANGE (a
 * total beyond 64 bits); out is untouched on failure.
 */
int tr_psi_parse (const char *text, struct tr_psi *out);

/* Read and parse <dir>/<file> (e.g. dir = a cgroup2 directory, file =
 * "cpu.pressure"; or "/proc/pressure", "io") through the fsroot.
 * Returns 0, or -1 with errno from open/read (ENOENT when PSI is not
 * there, EOPNOTSUPP when cgroup.pressure switched it off), EFBIG for a
 * file too large to be PSI, or the errno of tr_psi_parse.
 */
int tr_psi_read (const char *dir, const char *file, struct tr_psi *out);

/* delta = end - start for each counter, clamped at 0 when a counter went
 * backwards (the cgroup was re-created).  delta->have_full is set only
 * when both have a "full" line.
 */
void tr_psi_delta (const struct tr_psi *start,
                   const struct tr_psi *end,
                   struct tr_psi *delta);

/* Build summary.pressure from per-resource deltas over the step, indexed
 * by enum tr_psi_resource:
 *     {"source": source, "exact": exact,
 *      "cpu": {"some_s": s, "full_s": s}, "memory": {...}, "io": {...}}
 * "full_s" is left out for a resource whose delta has no "full" line.
 * source is "cgroup2" or "cgroup2-mirror".  Returns a new reference, or
 * NULL with errno = EINVAL (NULL argument) or ENOMEM.
 */
json_t *tr_psi_json (const char *source,
                     bool exact,
                     const struct tr_psi delta[3]);

/* Build summary.pressure for the fallback where no PSI file covers the
 * step, from per-task delay accounting (taskstats or schedstat) summed
 * over the step's processes, in nanoseconds, indexed by enum
 * tr_psi_resource: cpu = run-queue delay, memory = swapin + freepages +
 * thrashing delay, io = block I/O delay.
 *     {"source": "delayacct", "exact": exact,
 *      "cpu": {"delay_s": s}, "memory": {"delay_s": s}, "io": {...}}
 * Returns a new reference, or NULL with errno = EINVAL or ENOMEM.
 */
json_t *tr_psi_delay_json (bool exact, const uint64_t delay_ns[3]);

/* The same where some resources were not measured: only those with
 * their bit (1 << enum tr_psi_resource) in known get a member; the
 * others are left out, never written as 0 (tr_psi_set_unknown names
 * them).
 */
json_t *tr_psi_delay_json_known (bool exact,
                                 const uint64_t delay_ns[3],
                                 unsigned known);

/* Name in the record's summary the stalls that were not measured (those
 * without their bit in known), as the v1 extension members
 *     "x_pressure_unknown": ["memory", "io"],
 *     "x_pressure_reason": reason (NULL: left out)
 * which readers that do not know them ignore.  Nothing is set when
 * every bit is in known.  Returns 0, or -1 with errno = EINVAL (summary
 * not an object) or ENOMEM.
 */
int tr_psi_set_unknown (json_t *summary, unsigned known, const char *reason);

/* Per-task delay accounting, the kernel.task_delayacct sysctl (Linux
 * 5.14 and later; off by default).  Without it the block I/O and memory
 * delays of taskstats exit records are 0 whatever happened; the CPU
 * run-queue delay is kept either way.
 */
#define TR_DELAYACCT_SYSCTL "/proc/sys/kernel/task_delayacct"

/* Whether delay accounting is on, through the fsroot: 1 on, 0 off, or
 * -1 with errno (ENOENT: no such sysctl, a kernel before 5.14, where it
 * is on unless booted with nodelayacct).
 */
int tr_delayacct_state (void);

/* Turn delay accounting on (root).  Returns 1 when it was off and is now
 * on, 0 when it was on already, or -1 with errno and error set.
 */
int tr_delayacct_enable (tr_error_t *error);

/* Whether sampling.delayacct (conf.h TR_DELAYACCT_*) asks tracerd to
 * turn delay accounting on, on a host of this cgroup layout (cgroup.h)
 * with sampling.psi_mirror psi_mirror: on, always; auto, where steps get
 * no cgroup2 directory of their own (v1, or hybrid without the mirror).
 */
bool tr_delayacct_wanted (int delayacct, int layout, int psi_mirror);

/* What this host can measure of a step's stall (pressure) with conf's
 * settings, and what it cannot and why, as lines of text ending in
 * '\n' for tracerd --check-config, appended to out.  Returns the number
 * of kinds of stall that cannot be measured on some steps (0: all of
 * them can), or -1 with errno = ENOMEM.
 */
int tr_stall_describe (int delayacct, int psi_mirror, bool taskstats,
                       tr_strbuf_t *out);

#endif /* !TRACER_PSI_H */
