/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_RUNID_H
#define TRACER_RUNID_H

#include <stdbool.h>
#include <stddef.h>

/* Pipeline runs: which run a step belongs to.  A researcher launches a
 * run (a Snakemake or Nextflow invocation, a driver script); it submits
 * many jobs.  This is the one place that decides, from what a record
 * shows, whether a step is part of a run, and of which (doc/runs.md):
 *
 *   1. the tags "run" (and "pipeline", "process") the user set, with
 *      --tracer=tag=run:ID, TRACER_OPTS or tracer-run --pipeline: they
 *      win over anything guessed;
 *   2. Snakemake: the job script the scheduler ran is
 *      DIR/.snakemake/tmp.XXXXXXXX/snakejob.RULE.N.sh (one tmp
 *      directory per invocation): run "snakemake-" and a hash of that
 *      tmp directory's path, pipeline the name of DIR, process RULE;
 *   3. Nextflow: a job named nf-PROCESS_(TAG) or nf-PROCESS whose
 *      working directory is a task directory WORK/xx/HASH (2 and 30 hex
 *      digits): run "nextflow-" and a hash of WORK, pipeline the name
 *      of the launch directory (WORK's parent when WORK is named
 *      "work", else WORK's own name), process PROCESS (':' written '_'
 *      as in the job name).  Runs that share one work directory are
 *      one run here: only Nextflow's session id tells them apart;
 *   4. the tasks of one job array: run "array-" and the cluster and the
 *      array job id, process the job name.
 *
 * Everything else is in no run.  The job name alone never puts a step
 * into a run: a job named snakejob.x.1.sh is nothing without the
 * Snakemake directory.  A run id names a run of one user only: whoever
 * groups steps into runs keys them by user and run id together, so that
 * nobody joins another user's run by choosing its id.
 */

#define TR_RUN_ID_MAX 128
#define TR_RUN_NAME_MAX 128

struct tr_run {
    char id[TR_RUN_ID_MAX];             /* "" when in no run */
    char pipeline[TR_RUN_NAME_MAX];     /* "" when unknown */
    char process[TR_RUN_NAME_MAX];      /* the rule or process, or "" */
};

/* What identifies a step; strings may be NULL (unknown).  tags is a step
 * summary's tags string (tr_tags_get reads it).  command is the path
 * of the script the scheduler ran (identity.command), work_dir the job's
 * working directory (identity.work_dir): the controller's, never the
 * job environment's.
 */
struct tr_run_input {
    const char *tags;
    const char *cluster;
    const char *job_name;
    const char *array_job_id;
    const char *command;
    const char *work_dir;
    const char *task_name;      /* identity.task_name: Nextflow's own name */
};

/* The process a workflow manager's job name names: Nextflow's
 * "nf-NAME_(tag)" gives NAME (':' written '_', as Nextflow does),
 * Snakemake's "snakejob.RULE.N.sh" gives RULE, any other name itself.
 * The step group (tr_stepsum_group) starts from it.  Writes into buf;
 * returns buf.
 */
const char *tr_run_process_name (char *buf, size_t size,
                                 const char *job_name);

/* Fill out; returns true when the step is in a run (out->id not ""). */
bool tr_run_identify (const struct tr_run_input *in, struct tr_run *out);

/* Whether s is a valid run id or pipeline name: 1 to TR_RUN_ID_MAX - 1
 * characters of A-Z a-z 0-9 . _ - + @, not starting with '.' or '-'
 * (path-safe, and a value a tag may hold).
 */
bool tr_run_name_ok (const char *s);

/* Whether given names run id: the id itself, or, where no run is named
 * so, the id as a listing cut it (its start and a '+', as --runs and
 * sacct-style columns end a cut value), with exact false.  A cut form
 * may name several runs: a caller that needs one says so.
 */
bool tr_run_id_matches (const char *id, const char *given, bool exact);

#endif /* !TRACER_RUNID_H */
