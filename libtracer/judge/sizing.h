/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_SIZING_H
#define TRACER_SIZING_H

#include <stddef.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/record/stepsum.h"
#include "recommend.h"

/* What to request for a step, the same in every view of it: the
 * listing and its --json, the job and run views, --recommend, the HTML
 * report and the mail summaries all take the options of the
 * recommendation engine from tr_sizing_opts and write the scheduler's
 * request options with tr_sizing_args, so that none advises a --mem
 * another does not.
 */

/* The engine's options from the site configuration conf: section
 * report.recommend, and report.diagnosis.cpu_pressure_starved as
 * cpu_pressure_max (the CPU pressure at which a step is short of CPU,
 * not over-allocated, in the diagnosis and in the advice alike); cost
 * NULL.  conf NULL: the built-in defaults, which are those of
 * tr_conf_create() and of tracer.yaml(5) (a unit test checks):
 *
 *   mem_quantile 0.95, mem_headroom 0.2, time_quantile 0.95,
 *   time_margin 0.25, cpu_quantile 0.9, cpu_pressure_max 0.05,
 *   min_runs 3, last_n 0 (every run), mem_min_bytes 256 MiB,
 *   time_min_s 300
 */
void tr_sizing_opts (struct tr_recommend_opts *o, const tr_conf_t *conf);

/* The engine over row alone with options o (NULL: the built-in
 * defaults): its group object (tr_recommend_groups), a new reference,
 * with "runs" {"total": 1}; a row without a step group is named "this
 * step".  This is the advice of a step seen without its history (the
 * listing, --json).  NULL with errno = EINVAL (row NULL), ENOENT (the
 * engine leaves the row out: it has no end time) or ENOMEM.
 */
json_t *tr_sizing_one_run (const tr_stepsum_t *row,
                           const struct tr_recommend_opts *o);

/* The request options of a job script for cpus (per task), mem (bytes
 * per node) and time (seconds), each option one string of a, in the
 * order below; a NAN value leaves its option out:
 *
 *   Slurm  "--cpus-per-task=N", "--mem=M" (tr_recommend_mem_text),
 *          "--time=T" (tr_recommend_time_text)
 *   PBS    "-l select=1:ncpus=N:mem=M" (M whole MiB rounded up, "Ngb"
 *          when a whole number of GiB, else "Nmb"), "-l walltime=HH:MM:SS"
 *   LSF    "-n N", "-R \"rusage[mem=MMB]\"" (whole MiB rounded up),
 *          "-W H:MM" (minutes rounded up)
 *
 * sbatch, qsub and bsub take them on the command line, or each after
 * "#SBATCH ", "#PBS " or "#BSUB " in the script.  Return 0 (a->n
 * options), or -1 with errno = EINVAL (a NULL).
 */
#define TR_SIZING_ARGS 3
#define TR_SIZING_ARG_MAX 96

struct tr_sizing_args {
    size_t n;
    char arg[TR_SIZING_ARGS][TR_SIZING_ARG_MAX];
};

int tr_sizing_args_slurm (struct tr_sizing_args *a,
                          double cpus,
                          double mem,
                          double time);
int tr_sizing_args_pbs (struct tr_sizing_args *a,
                        double cpus,
                        double mem,
                        double time);
int tr_sizing_args_lsf (struct tr_sizing_args *a,
                        double cpus,
                        double mem,
                        double time);

/* The form of scheduler (a record's identity.scheduler): "pbs" and
 * "torque" PBS's, "lsf" LSF's, anything else (NULL too) Slurm's.
 */
enum tr_sizing_form {
    TR_SIZING_SLURM = 0,
    TR_SIZING_PBS,
    TR_SIZING_LSF,
};

enum tr_sizing_form tr_sizing_form (const char *scheduler);

/* The options of scheduler's form for cpus, mem and time, or for the
 * "recommend" values of the "cpus", "mem" and "time" members of an
 * engine's group g (NULL or a missing value: left out).  As above.
 */
int tr_sizing_args (struct tr_sizing_args *a,
                    const char *scheduler,
                    double cpus,
                    double mem,
                    double time);
int tr_sizing_args_advice (struct tr_sizing_args *a,
                           const char *scheduler,
                           json_t *g);

/* The options of a joined by ' ' into buf (size bytes).  0, or -1 with
 * errno = EINVAL (a or buf NULL, size 0) or ERANGE (buf too small; it
 * then holds "").
 */
int tr_sizing_join (char *buf, size_t size, const struct tr_sizing_args *a);

#endif /* !TRACER_SIZING_H */
