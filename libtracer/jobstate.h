/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Asking the scheduler what the node-side hooks cannot see: a job's time
 * limit, and why its tasks were killed (cancelled, time limit).  Slurm
 * gives neither to SPANK plugins, so tracerd runs squeue for the job,
 * without a shell, asynchronously and bounded, and never for every step:
 * once per job when it starts on the node and once when a step of it
 * ends by a signal.
 */
#ifndef TRACER_JOBSTATE_H
#define TRACER_JOBSTATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

struct tr_jobstate {
    char state[32];       /* squeue's state: RUNNING, TIMEOUT, CANCELLED... */
    long time_limit_s;    /* -1 unknown or unlimited */
};

/* Parse one line of `squeue --format=%T|%l` output. */
int tr_jobstate_parse_line (const char *line,
                         struct tr_jobstate *out,
                         tr_error_t *error);

/* Parse a Slurm time limit: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM,
 * D-HH:MM:SS.  UNLIMITED, INFINITE, NOT_SET, INVALID and bad text give -1.
 */
long tr_jobstate_parse_limit (const char *text);

/* The record outcome state a job's scheduler state means for a step
 * whose tasks were killed by a signal ("timeout", "cancelled"), or NULL
 * when it says nothing more than the signal does.
 */
const char *tr_jobstate_outcome (const char *sched_state);

typedef struct tr_jobstate_query tr_jobstate_query_t;

/* Start `squeue --noheader --states=all --jobs=JOB --format=%T|%l` with
 * stdout on a pipe (O_NONBLOCK), stdin and stderr on /dev/null and an
 * environment of PATH and, if set in ours, SLURM_CONF.  job must be
 * digits (a Slurm job id); anything else is refused.
 */
tr_jobstate_query_t *tr_jobstate_query_start (const char *squeue,
                                        const char *job,
                                        tr_error_t *error);

/* The pipe to poll for POLLIN. */
int tr_jobstate_query_fd (tr_jobstate_query_t *q);

/* Read what is there: 1 at end of output, 0 if more may come, -1 on
 * error (output too long).
 */
int tr_jobstate_query_read (tr_jobstate_query_t *q);

/* After tr_jobstate_query_read returned 1: reap the child and parse.  0 with
 * *out filled, -1 with error (squeue failed, no such job, bad output).
 */
int tr_jobstate_query_result (tr_jobstate_query_t *q,
                           struct tr_jobstate *out,
                           tr_error_t *error);

/* Kill the child if still running, reap it and free. */
void tr_jobstate_query_destroy (tr_jobstate_query_t *q);

#endif /* !TRACER_JOBSTATE_H */
