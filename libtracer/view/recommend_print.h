/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_RECOMMEND_PRINT_H
#define TRACER_RECOMMEND_PRINT_H

#include <stdio.h>

#include <jansson.h>

#include "libtracer/judge/recommend.h"

/* Print recommendations (what tr_recommend_groups returned; these live
 * in recommend_print.c and read only the documented JSON):
 *   table      aligned columns, request -> recommendation, savings
 *              over the runs seen (core-hours, GiB-hours, money), then
 *              one line per note
 *   sbatch     "#SBATCH --cpus-per-task=", "--mem=", "--time=" lines
 *              under a "# group NAME (N runs, C confidence)" comment
 *   nextflow   a process { withName: 'NAME' { cpus, memory, time } }
 *              config block (memory in MB/GB, which Nextflow counts in
 *              powers of 1024; time as "1h 15m")
 *   pbs        "#PBS -l select=1:ncpus=N:mem=Mmb" and
 *              "#PBS -l walltime=HH:MM:SS" lines
 *   lsf        "#BSUB -n N", "#BSUB -R \"rusage[mem=MMB]\"" and
 *              "#BSUB -W H:MM" lines
 *              (sbatch, pbs and lsf: one line per option of
 *              tr_sizing_args, libtracer/judge/sizing.h)
 *   nextflow   (above) with withName: a regular expression that matches
 *              the process's fully qualified name: each '_' of the job
 *              name's process part as "[_:]" (Nextflow writes ':' as '_'
 *              in job names)
 *   snakemake  a profile's "set-resources:" list of
 *              "RULE:RESOURCE=VALUE" (cpus_per_task, mem_mb, runtime in
 *              minutes), which Snakemake 7 and 8 read
 *   snakemake8 the same as Snakemake 8's mapping of rules to resources
 *              (Snakemake 7 refuses it)
 *   json       the object itself, indented, keys sorted
 * The workflow formats (sbatch, pbs, lsf, nextflow, snakemake) name a
 * group by the part before its last '/' (the process or rule), leave out
 * "extern" steps (not the user's code) and, when several steps share a
 * name, keep the "batch" step (the one that holds the job's allocation),
 * else the first.  nextflow and snakemake keep only groups whose
 * "workflow" is theirs and whose name is an identifier; each other group
 * is named in a "left out" comment.  Unknown values leave their line
 * out.  Return 0, or -1 with errno = EINVAL (recs is not such an object)
 * or EIO (a write failed).
 */
int tr_recommend_print_table (FILE *out, json_t *recs);
/* The table fitted to width columns (0: no limit, as
 * tr_recommend_print_table): where it is wider, the savings columns
 * (CORE-H, GIB-H, MONEY) are left out and each group's savings said on
 * a line of their own, "GROUP: saves 12.00 core-hours, 27.00 GiB-hours,
 * 6.27 EUR over the runs seen" ("-" for an unknown one); every note
 * line is wrapped to width under its text (tr_report_wrap_hang).
 */
int tr_recommend_print_table_width (FILE *out, json_t *recs, int width);
int tr_recommend_print_sbatch (FILE *out, json_t *recs);
int tr_recommend_print_nextflow (FILE *out, json_t *recs);
int tr_recommend_print_snakemake (FILE *out, json_t *recs);
int tr_recommend_print_snakemake8 (FILE *out, json_t *recs);
int tr_recommend_print_pbs (FILE *out, json_t *recs);
int tr_recommend_print_lsf (FILE *out, json_t *recs);

int tr_recommend_print_json (FILE *out, json_t *recs);

/* One line per flagged metric: group, job, step, metric, value, median,
 * ratio, z, history size.  Returns 0, or -1 with errno = EINVAL or EIO.
 */
int tr_recommend_print_regressions (FILE *out, json_t *regs);

#endif /* !TRACER_RECOMMEND_PRINT_H */
