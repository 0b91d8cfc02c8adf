/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_WHEN_H
#define TRACER_WHEN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "libtracer/util/error.h"
#include "libtracer/util/units.h"

/* Which jobs and which time window: the arguments of tracer-report's
 * sacct-like options -S/--starttime, -E/--endtime and -j/--jobs, parsed
 * the way Slurm's sacct parses them so that a command line that works
 * with one works with the other.
 */

/* Parse a time as sacct's -S and -E do (Slurm parse_time (s, past=1)),
 * in the local time zone (TZ, mktime), relative to 'now':
 *
 *   YYYY-MM-DD[THH:MM[:SS]]     ISO date, optionally with a time
 *   MMDD[YY], MM/DD[/YY], MM.DD[.YY]
 *                               optionally followed by -HH:MM[:SS];
 *                               YY is 2000 + YY; without YY the year is
 *                               this year, or last year when the month
 *                               is later than the current month
 *   HH:MM[:SS] [AM|PM]          that time today (even if it is later
 *                               than now: sacct looks into the past)
 *   today, tomorrow             that day at 00:00:00
 *   midnight, noon, elevenses, fika, teatime
 *                               today at 00:00, 12:00, 11:00, 15:00 and
 *                               16:00
 *   now[{+|-}N[UNIT]]           now plus or minus N UNITs, UNIT one of
 *                               second(s), minute(s), hour(s), day(s),
 *                               week(s); without a UNIT, seconds
 *   uts<N>                      the Unix time N (N >= 1000000)
 *
 * Date, time and keyword tokens combine, separated by blanks, '-' or
 * 'T' ("01/02-10:20", "tomorrow noon", "now+1day noon"); a later token
 * replaces what an earlier one set.  Keywords and units are matched
 * without regard to case.  A date without a time is 00:00:00 of that
 * day.  This parser is stricter than Slurm's where Slurm silently
 * accepts nonsense: a day that the month does not have ("02/30", which
 * Slurm turns into March 2), years before 1970 or after 9999, empty
 * input (which Slurm reads as "not given"), and tokens run together
 * without a separator ("01022024") are errors.  Slurm's "@N" form does
 * not exist (it is "uts<N>"), and neither do abbreviated units.
 *
 * 'end' says that s is the end of the window (-E) rather than its start
 * (-S).  sacct parses both alike, so -E 2024-01-02 means 2024-01-02
 * 00:00:00, not the end of that day; 'end' does not change the result,
 * so that a window copied from an sacct command line selects the same
 * time span.
 *
 * On success stores the time in *out and returns 0.  On failure returns
 * -1 with errno = EINVAL, leaves *out untouched, and puts a message in
 * error that quotes s and says what is accepted.
 */
int tr_when_parse (const char *s,
                   time_t now,
                   bool end,
                   time_t *out,
                   tr_error_t *error);

/* Limits of a job id list (tr_when_jobsel_parse). */
enum {
    TR_WHEN_JOBSEL_MAX_LEN = 65536,      /* bytes in the list */
    TR_WHEN_JOBSEL_MAX_ELEMENTS = 10000, /* comma-separated elements */
    TR_WHEN_JOBSEL_MAX_RANGES = 10000,   /* task ids and ranges, in total */
    TR_WHEN_MAX_TASK_ID = 4000000,       /* Slurm's MaxArraySize - 1 */
    TR_WHEN_MAX_RANGE = 1000000,         /* tasks in one bracket range */
    TR_WHEN_MAX_HET_COMPONENT = 127,     /* MAX_HET_JOB_COMPONENTS - 1 */
};

/* The largest job id accepted: one below Slurm's NO_VAL (0xfffffffe). */
#define TR_WHEN_MAX_JOB_ID 4294967293UL

/* A parsed -j list. */
typedef struct tr_when_jobsel tr_when_jobsel_t;

/* Parse a comma-separated list of job selectors, as sacct's -j takes
 * them (without steps):
 *
 *   N            job N, every task of job array N, and every component
 *                of heterogeneous job N
 *   N_T          task T of job array N
 *   N_[LIST]     the tasks of array N in LIST, a comma-separated list of
 *                T and T1-T2 (T1 <= T2), e.g. 123_[1-5,7,10-12]
 *   N_*          every task of job array N
 *   N+C          component C of heterogeneous job N
 *
 * N is 1 to TR_WHEN_MAX_JOB_ID, T 0 to TR_WHEN_MAX_TASK_ID, C 0 to
 * TR_WHEN_MAX_HET_COMPONENT; a range spans at most TR_WHEN_MAX_RANGE
 * tasks and is kept as a range, never expanded.  No blanks, no empty
 * elements.  Returns a new selector that the caller must free with
 * tr_when_jobsel_destroy(), or NULL with errno = EINVAL (bad syntax, a
 * value out of range, a limit exceeded; error quotes the element) or
 * ENOMEM.
 */
tr_when_jobsel_t *tr_when_jobsel_parse (const char *list, tr_error_t *error);

/* Free sel.  NULL is a no-op; errno is kept. */
void tr_when_jobsel_destroy (tr_when_jobsel_t *sel);

/* The number of elements of the list (0 for NULL). */
size_t tr_when_jobsel_count (const tr_when_jobsel_t *sel);

/* The job id to look up directly in the store for element i, in
 * canonical decimal form ("0123" gives "123"), when element i is a plain
 * job id N, or the id itself when it is another batch system's ("7.srv",
 * "42[3]"); NULL for the array and heterogeneous forms, whose records
 * are keyed by each task's or component's own job id.  Even for a plain
 * N, the tasks of array N and the components of het job N have ids of
 * their own: a caller that wants all that N matches must also scan with
 * tr_when_jobsel_match().  The string is owned by sel and valid until
 * tr_when_jobsel_destroy().  Returns NULL with errno = EINVAL when sel
 * is NULL or i >= tr_when_jobsel_count (sel); errno is untouched for a
 * non-plain element.
 */
const char *tr_when_jobsel_plain (const tr_when_jobsel_t *sel, size_t i);

/* Whether a job matches any element of sel.  job_id, array_job_id and
 * het_job_id are the job's ids as records carry them (NULL or ""
 * when the job has none; a Slurm form matches decimal ids only, another
 * batch system's id ("7.srv") matches job_id or array_job_id exactly);
 * array_task_id and het_component are -1 when the job is not
 * an array task or het component.  A NULL sel matches nothing.
 */
bool tr_when_jobsel_match (const tr_when_jobsel_t *sel,
                           const char *job_id,
                           const char *array_job_id,
                           long array_task_id,
                           const char *het_job_id,
                           long het_component);

/* Seconds on CLOCK_MONOTONIC: for deadlines and intervals, which the
 * wall clock's steps must not move.
 */
double tr_when_monotonic (void);

/* A poll() timeout in ms from now until due (tr_when_monotonic() times):
 * rounded up, since waking a little early would spin until due; 0 when
 * due has passed.
 */
int tr_when_poll_ms (double due, double now);


#endif /* !TRACER_WHEN_H */
