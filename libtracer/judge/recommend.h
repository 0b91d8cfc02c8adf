/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_RECOMMEND_H
#define TRACER_RECOMMEND_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#include "cost.h"
#include "libtracer/util/error.h"
#include "libtracer/record/stepsum.h"

/* Resource recommendations and regressions from many runs of a step.
 *
 * Rows (tr_stepsum_t, one step of one job, merged over its nodes) are
 * grouped by row->group.  Rows with an empty group and rows without an
 * end time (still running) are left out.  Within a group, each run
 * counts by its state:
 *
 *   completed   the distribution: CPU, memory and time quantiles come
 *               from these runs only ("used" runs)
 *   oom         a lower bound for memory: the recommendation is above
 *               the limit the run died at (mem_limit_bytes, else
 *               req_mem_bytes, or mem_peak_bytes when that is larger);
 *               a run of any state with oom_kills > 0 is a bound too
 *   timeout     a lower bound for time: the recommendation is above
 *               max (time_limit_s, elapsed_s)
 *   failed, cancelled, anything else
 *               counted, not used: such a run stopped for reasons that
 *               say nothing about what the step needs
 *
 * CPUs (--cpus-per-task): a run's parallelism is cpu_s / elapsed_s per
 * task (tasks, else nodes, else 1); the cpu_quantile of it over the used
 * runs is rounded up (0.05 core of tolerance for timer skew) to at least
 * 1.  A step is CPU-starved when, at the same quantile, the larger of
 * psi_cpu_some_s / elapsed_s and throttled_s / elapsed_s is above
 * cpu_pressure_max and the step's own threads made it: its throttled
 * fraction is above cpu_pressure_max, or its demand per task
 * (tr_stepsum_cpu_demand: CPU time plus run-queue wait over elapsed, at
 * the quantile; where a run lacks it, cpu_peak_cores) is at least the
 * request - 0.5.  Its parallelism is then what the step got, not what it
 * wanted, so it is never given fewer CPUs than it asked for; a step that
 * waited for others' work on the node is sized by what it used.
 * cpu_peak_cores is not a floor (a burst of one series bucket would pin
 * every request to its maximum); it is reported, with a note when the
 * recommendation is well below it.
 *
 * Memory (--mem, per node) is the mem_quantile of mem_peak_bytes times
 * (1 + mem_headroom), at least an OOM bound times (1 + mem_headroom) and
 * mem_min_bytes, rounded up with tr_recommend_mem_round and strictly
 * above any OOM bound.  After OOM kills with no completed run since (a
 * "streak" of them), memory is at least the bound times 2 per OOM in a
 * row (2, 4, 8, at most 16), and where the newest OOM run's memory was
 * still rising at the kill (mem_rise_Bps), at least the bound plus that
 * rate over the time it had left (the median elapsed of completed runs,
 * else its time limit, else as long again as it ran), times
 * (1 + mem_headroom), at most 16 times the bound: a step that grows
 * steadily is sized for its whole run at once.  Time (--time) is the same with elapsed_s,
 * time_margin, timeouts, time_min_s and tr_recommend_time_round.  A
 * resource with no used run and no bound keeps the current request.
 *
 * The current request is the median over all runs of the group of
 * req_cpus_per_task (else req_cores / tasks), req_mem_bytes and
 * time_limit_s.  Confidence is "low" below min_runs used runs, "medium"
 * below 10, else "high".
 *
 * Savings per run compare the current request with the recommendation
 * over the median elapsed time of the used runs: core-hours
 * (req_cores - cpus * tasks) * elapsed, GiB-hours (req_mem - mem) *
 * nodes * elapsed (2^30 bytes, the "G" of Slurm's --mem); over the runs
 * seen they are the per-run figures times the group's run count.
 * Negative savings mean the recommendation costs more (it is above the
 * request).  Money uses the prices (struct tr_cost, as tr_waste does) of
 * the partition of the group's newest run, and is computed only when
 * some price is above 0.
 */

struct tr_recommend_opts {
    double mem_quantile;  /* 0.95 */
    double mem_headroom;  /* 0.20: +20% */
    double time_quantile; /* 0.95 */
    double time_margin;   /* 0.25: +25% */
    double cpu_quantile;  /* 0.90, of the parallelism per task */
    /* 0.05: the stalled fraction of run time above which a step is
     * CPU-starved */
    double cpu_pressure_max;
    unsigned min_runs; /* 3: fewer used runs = low confidence */
    /* 0 = every run; else only the newest N runs (by end time) of each
     * group */
    unsigned last_n;
    double mem_min_bytes;       /* 256 MiB */
    double time_min_s;          /* 300 */
    const struct tr_cost *cost; /* prices (cost.h), or NULL */
};

/* Fill o with the defaults above: tr_sizing_opts (o, NULL) (sizing.h),
 * the same as the site configuration's.  Options for a site come from
 * tr_sizing_opts (o, conf).
 */
void tr_recommend_opts_default (struct tr_recommend_opts *o);

/* Recommendations for every group of rows[0..n-1] (NULL entries are
 * skipped).  Returns a new reference to the object described below, or
 * NULL with errno = EINVAL (bad options or prices, rows NULL with n > 0)
 * or ENOMEM, and text in error.
 *
 * Schema (doc/report-json.md, "Recommendations").  Numbers are in raw
 * units (cores, bytes, seconds); a member whose value is unknown is left
 * out, never written as 0 or null.
 *
 *   version     1
 *   options     {mem_quantile, mem_headroom, time_quantile, time_margin,
 *                cpu_quantile, cpu_pressure_max, min_runs, last_n,
 *                mem_min_bytes, time_min_s}: what was used
 *   groups      array, groups in natural order of their names, each:
 *     group       string, the step group
 *     partition   string, the partition of the newest run
 *     confidence  "low", "medium" or "high"
 *     runs        {total, used, completed, failed, cancelled, timeout,
 *                  oom, other}: counts; used = completed
 *     cpus, mem, time
 *                 objects, one per resource:
 *       request      the current request (median over the runs)
 *       recommend    the recommendation (cores per task, bytes per
 *                    node, seconds)
 *       text         the recommendation as the scheduler writes it:
 *                    "2", "1536M"/"2G", "01:15:00"/"1-02:00:00"
 *       basis        what decided it: "quantile" (the used runs),
 *                    "oom" (raised above an OOM bound), "timeout"
 *                    (raised above a timeout bound), "floor" (the
 *                    minimum), "starved" (kept at the request: CPU
 *                    pressure), "request" (no evidence: unchanged)
 *       quantile     the quantile used (0..1)
 *       at_quantile  the measured value at that quantile: parallelism
 *                    per task, peak bytes, elapsed seconds
 *       min, median, max   the same measure over the used runs
 *       lower_bound  mem: the largest OOM limit; time: the largest
 *                    timeout (no headroom added)
 *     mem also has, after OOM kills with no completed run since
 *       oom_streak       OOM runs in a row
 *       oom_factor       the least growth over the bound (2^streak)
 *       oom_growth_Bps   how fast the newest one's memory still rose
 *       oom_elapsed_s    when it was killed
 *       oom_expected_s   how long it was expected to run
 *       oom_projected    bound + rate * time left, with the headroom
 *                        (at most 16x the bound)
 *     cpus also has
 *       peak_cores   the largest cpu_peak_cores of the used runs
 *       pressure     the stalled fraction at cpu_quantile
 *       starved      true or false
 *     savings     what the recommendation saves against the request:
 *       runs                the runs of the group (all states)
 *       elapsed_median_s    median elapsed time of the used runs
 *       core_hours_per_run, gib_hours_per_run
 *       core_hours, gib_hours   the same times runs
 *       price_core_hour, price_gb_hour, money_per_run, money, currency
 *                           only when some price is above 0
 *     notes       array of one-line explanations (may be empty)
 */
json_t *tr_recommend_groups (const tr_stepsum_t *const *rows,
                             size_t n,
                             const struct tr_recommend_opts *o,
                             tr_error_t *error);

/* The smallest value at or above bytes that people write for --mem:
 * multiples of 256 MiB below 2 GiB, 512 MiB below 8 GiB, 1 GiB below
 * 64 GiB, 4 GiB above.  NAN for NAN, 0 for bytes <= 0.
 */
double tr_recommend_mem_round (double bytes);

/* The smallest value at or above seconds in steps of 5 minutes below
 * 1 hour, 15 minutes below 6 hours, 1 hour above.  NAN for NAN, 0 for
 * seconds <= 0.
 */
double tr_recommend_time_round (double seconds);

/* Slurm's --mem text: whole MiB rounded up, written "NG" when a whole
 * number of GiB, else "NM".  Slurm's --time text: "HH:MM:SS", or
 * "D-HH:MM:SS" from one day, whole seconds rounded up.  Both write into
 * buf and return 0, or -1 with errno = EINVAL (NAN, negative, or
 * beyond 10^18 bytes or 10^12 s) or ERANGE (buf too small).
 */
int tr_recommend_mem_text (char *buf, size_t size, double bytes);
int tr_recommend_time_text (char *buf, size_t size, double seconds);


/* Regressions: each run is compared with the runs of its group that
 * ended before it.  A candidate is a completed, timeout or oom run with
 * at least min_history earlier completed runs; its history is the last
 * max_history of those.  For each metric (elapsed_s, mem_peak_bytes,
 * cpu_s, io_bytes = read_bytes + write_bytes):
 *
 *   z     = (value - median) / max (MAD, mad_floor * median)
 *   ratio = value / median
 *
 * with MAD scaled to a standard deviation (tr_stats_mad).  The floor
 * keeps a constant history from turning any small change into a huge z.
 * A metric is flagged when z > threshold and ratio > min_ratio: both a
 * surprise for this step and a change worth a look.  Only increases are
 * flagged: a run that got faster or smaller is an improvement, and one
 * that stopped early shows in its state.  A metric with a history median
 * of 0 or fewer than min_history known values is not compared.
 */
struct tr_recommend_regress_opts {
    unsigned min_history; /* 5 */
    unsigned max_history; /* 30 */
    double threshold;     /* 4: robust z */
    double min_ratio;     /* 1.5 */
    double mad_floor;     /* 0.05: 5% of the median */
};

void tr_recommend_regress_opts_default (struct tr_recommend_regress_opts *o);

/* The drift test behind regressions, over any samples: compare value x
 * with the samples hist[0..n-1] (reordered; NAN values first dropped by
 * the caller) as above: z = (x - median) / max (MAD, mad_floor *
 * median), ratio = x / median.  Fills d (median, mad, z, ratio; NAN
 * where not compared) and returns TR_DRIFT_UP when z > threshold and
 * ratio > min_ratio, TR_DRIFT_DOWN when z < -threshold and ratio <
 * 1 / min_ratio, TR_DRIFT_NONE when compared and neither, TR_DRIFT_NOT
 * when not compared (x not finite, fewer than min_history samples, a
 * median of 0 or less); -1 with errno = ENOMEM.
 */
enum tr_drift_verdict {
    TR_DRIFT_NOT,
    TR_DRIFT_NONE,
    TR_DRIFT_UP,
    TR_DRIFT_DOWN,
};

struct tr_drift {
    double median, mad, z, ratio;
};

int tr_recommend_drift (double x,
                        double *hist,
                        size_t n,
                        const struct tr_recommend_regress_opts *o,
                        struct tr_drift *d);

/* A row's value of a regression metric: 0 elapsed_s, 1 mem_peak_bytes,
 * 2 cpu_s, 3 io_bytes (read_bytes + write_bytes, NAN when both are
 * unknown); NAN for another m.  tr_recommend_metric_name names them.
 */
#define TR_RECOMMEND_METRICS 4
double tr_recommend_metric (const tr_stepsum_t *r, int m);
const char *tr_recommend_metric_name (int m);

/* Returns a new reference to the object below, or NULL with errno =
 * EINVAL (bad options, rows NULL with n > 0) or ENOMEM.
 *
 *   version       1
 *   options       {min_history, max_history, threshold, min_ratio,
 *                  mad_floor}
 *   groups        groups seen
 *   runs_checked  candidates that had enough history
 *   regressions   array, by group (natural order), then end time, then
 *                 metric in the order above; each:
 *     group, cluster, job_id, step_id, state, path   strings of the run
 *     end_unix_ms   the run's end (integer, ms since the epoch)
 *     metric        "elapsed_s", "mem_peak_bytes", "cpu_s", "io_bytes"
 *     value         the run's value
 *     median, mad   of the history (mad scaled, before the floor)
 *     z, ratio      as above
 *     history       history values compared against
 */
json_t *tr_recommend_regressions (const tr_stepsum_t *const *rows,
                                  size_t n,
                                  const struct tr_recommend_regress_opts *o,
                                  tr_error_t *error);


#endif /* !TRACER_RECOMMEND_H */
