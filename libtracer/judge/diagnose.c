/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Per-step diagnosis.  A step's row says how much CPU, memory, I/O and
 * time it used and how long its tasks waited for each (pressure stall
 * information); the rules here turn those numbers into findings a user
 * can act on.  The distinction that matters most is why a step's CPUs
 * were idle: waiting on storage (more cores will not help), on nothing
 * (cores were over-allocated) or on a CPU quota (throttled).  PSI is
 * what tells these apart; where a step has no cgroup2 directory (cgroup
 * v1 hosts, hybrid ones with sampling.psi_mirror false) per-task delay
 * accounting's block I/O delay stands in for it.  An unmeasured stall
 * is NAN, never 0: the rules that need it do not fire, and no text
 * claims it was 0.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libtracer/record/cause.h"
#include "libtracer/conf/conf.h"
#include "diagnose.h"
#include "libtracer/util/units.h"
#include "recommend.h"
#include "sizing.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/record/states.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/json.h"

enum {
    DIAG_MAX = 16,          /* findings of one step (one per rule) */
    DIAG_LINE_FINDINGS = 3, /* findings in a summary line */
    DIAG_REASON_MAX = 120,  /* bytes of a record's reason quoted */
};

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024.0 * 1024.0)

/* Sizes in the texts come from the recommendation engine
 * (tr_recommend_groups), the one that "Next time" and --recommend show:
 * the view's advice for the step's group, else the engine over this one
 * run (tr_diagnose_advised).
 */

void tr_diag_defaults (struct tr_diag_thresholds *t)
{
    /* Kept equal to the schema defaults in conf.c (a unit test checks). */
    t->cpu_bound_efficiency = 0.9;
    t->cpu_pressure = 0.2;
    t->cpu_pressure_starved = 0.05;
    t->low_efficiency = 0.5;
    t->io_pressure = 0.2;
    t->mem_pressure = 0.1;
    t->mem_near_limit = 0.95;
    t->swap_min = 0;
    t->mem_low_fraction = 0.5;
    t->mem_min_request = GIB;
    t->idle_fraction = 0.5;
    t->idle_min_elapsed = 60;
    t->stalled_after = 600;
    t->throttled_fraction = 0.05;
    t->imbalance = 0.5;
    t->short_step = 10;
    t->gpu_idle_pct = 10;
}

static const char *const severity_names[] = { "info", "warning", "critical" };

/* Formatting for the texts: short, the way a user would write them. */

/* [D-]H:MM:SS, as Slurm writes time limits; seconds under a minute. */
static const char *fmt_time (char *buf, size_t size, double v)
{
    long long s = llround (v < 0 ? 0 : v);

    if (s < 60)
        snprintf (buf, size, "%llds", s);
    else if (s >= 86400)
        snprintf (buf, size, "%lld-%02lld:%02lld:%02lld", s / 86400,
                  (s / 3600) % 24, (s / 60) % 60, s % 60);
    else
        snprintf (buf, size, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60,
                  s % 60);
    return buf;
}

/* A percentage; below 1% but not 0 says so instead of "0%". */
static const char *fmt_pct (char *buf, size_t size, double frac)
{
    if (frac > 0 && frac < 0.005)
        snprintf (buf, size, "<1%%");
    else
        snprintf (buf, size, "%.0f%%", frac * 100);
    return buf;
}

/* Append a record's reason text: it is the user's or the scheduler's
 * words, so it is bounded and control characters are blanked (the line
 * ends up in a terminal or an email), cut on a UTF-8 character boundary.
 */
static int put_reason (tr_strbuf_t *sb, const char *reason)
{
    char buf[DIAG_REASON_MAX + 4];
    size_t len = strlen (reason), n = len;

    if (n > DIAG_REASON_MAX) {
        n = DIAG_REASON_MAX;
        while (n > 0 && ((unsigned char)reason[n] & 0xc0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)reason[i];
        buf[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    buf[n] = '\0';
    if (n < len)
        memcpy (buf + n, "...", 4);
    return tr_strbuf_puts (sb, buf);
}

/* Findings */

struct found {
    int severity;
    json_t *obj;
};

struct diag {
    const tr_stepsum_t *row;
    const struct tr_diag_thresholds *t;
    struct found found[DIAG_MAX];
    size_t n;
    bool nomem;
    tr_strbuf_t sb; /* the text of the finding being built */

    /* Derived values, NAN when unknown. */
    double elapsed;
    double eff;       /* CPU efficiency */
    double avg_cores; /* cores busy on average, all nodes */
    double psi_cpu, psi_mem, psi_io;
    double idle;      /* idle fraction */
    double throttled; /* throttled fraction */
    double demand;    /* threads wanting a CPU on average, per node */
    double limit;     /* memory limit, else the request */
    bool oom;
    bool is_short;

    /* The sizes the texts name: the engine's advice for the step, the
     * caller's, else the one-run estimate made the first time a rule
     * asks (most steps name no size)
     */
    json_t *advice;      /* a group of tr_recommend_groups, or NULL */
    bool advice_asked;   /* advice is final (given, or estimated) */
    char advice_from[48]; /* "from 6 runs", "a one-run estimate" */
};

static json_t *one_run_advice (const tr_stepsum_t *row);

/* The advice's recommendation for res ("cpus", "mem"): its value, and
 * its text in text (size bytes); NAN when there is none.
 */
static double advised (struct diag *d, const char *res, char *text,
                       size_t size)
{
    json_t *o, *v;
    const char *t;

    if (!d->advice_asked) {
        d->advice = one_run_advice (d->row);
        d->advice_asked = true;
    }
    o = json_object_get (d->advice, res);
    v = json_object_get (o, "recommend");
    t = json_string_value (json_object_get (o, "text"));

    if (!json_is_number (v) || !t || !*t)
        return NAN;
    snprintf (text, size, "%s", t);
    return json_number_value (v);
}

/* Why the advice for res is what it is (its "reason": after OOM kills,
 * the same words --recommend gives with the same number), or NULL.
 */
static const char *advised_why (struct diag *d, const char *res)
{
    const char *why = json_string_value (
        json_object_get (json_object_get (d->advice, res), "reason"));

    return why && *why ? why : NULL;
}

/* Text of the finding being built; a failed append sets d->nomem, and
 * the finding is then dropped by add().
 */
static void say (struct diag *d, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void say (struct diag *d, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (n < 0 || tr_strbuf_puts (&d->sb, buf) < 0)
        d->nomem = true;
}

/* Finish the finding whose text is in d->sb, with evidence given as
 * name, value pairs ending with NULL.
 */
static void add (struct diag *d, const char *code, int severity, ...)
{
    json_t *obj = NULL, *evidence = NULL;
    const char *name;
    va_list ap;

    if (d->nomem || d->n >= DIAG_MAX)
        goto fail;
    if (!(evidence = json_object ()))
        goto fail;
    va_start (ap, severity);
    while ((name = va_arg (ap, const char *))) {
        double v = va_arg (ap, double);
        if (tr_json_set_num (evidence, name, v) < 0) {
            va_end (ap);
            goto fail;
        }
    }
    va_end (ap);
    obj = json_pack ("{s:s s:s s:s s:o}", "code", code, "severity",
                     severity_names[severity], "text", tr_strbuf_str (&d->sb),
                     "evidence", evidence);
    evidence = NULL; /* json_pack's "o" took it, even on failure */
    if (!obj)
        goto fail;
    d->found[d->n].severity = severity;
    d->found[d->n].obj = obj;
    d->n++;
    tr_strbuf_reset (&d->sb);
    return;
fail:
    json_decref (evidence);
    d->nomem = true;
    tr_strbuf_reset (&d->sb);
}

/* The rules, in the order their findings are listed within a severity. */

static void rule_failed (struct diag *d)
{
    /* the ends this rule explains; their words are states.c's */
    static const char *const ends[] = { "failed", "cancelled", "timeout",
                                        "oom" };
    const tr_stepsum_t *r = d->row;
    const char *phrase = NULL;
    const char *sep = ": ";
    char b1[32];
    size_t i;

    for (i = 0; i < sizeof (ends) / sizeof (ends[0]); i++) {
        if (!strcmp (r->state, ends[i]))
            phrase = tr_states_phrase (ends[i]);
    }
    if (!phrase)
        return;
    say (d, "%s", phrase);
    if (!strcmp (r->state, "timeout")) {
        if (r->time_limit_s > 0)
            say (d, "%sreached its %s time limit", sep,
                 fmt_time (b1, sizeof (b1), r->time_limit_s));
        else
            say (d, "%sran out of time", sep);
        sep = ", ";
    }
    else if (r->time_limit_s > 0 && d->elapsed >= r->time_limit_s) {
        say (d, "%sran for its whole %s time limit", sep,
             fmt_time (b1, sizeof (b1), r->time_limit_s));
        sep = ", ";
    }
    if (r->exit_code > 0 && r->exit_code < 256) {
        int sig = (int)r->exit_code - 128;
        say (d, "%sexit code %.0f", sep, r->exit_code);
        /* Shells report a child killed by signal N as 128+N. */
        if (tr_cause_signal_name (sig))
            say (d, " (128+%d: a process was killed by %s)", sig,
                 tr_cause_signal_name (sig));
        sep = ", ";
    }
    if (r->signal > 0) {
        const char *name = tr_cause_signal_name ((int)r->signal);
        if (name)
            say (d, "%skilled by %s", sep, name);
        else
            say (d, "%skilled by signal %.0f", sep, r->signal);
        sep = ", ";
    }
    /* The "oom" state says this already, and the oom finding the rest. */
    if (r->oom_kills > 0 && strcmp (r->state, "oom")) {
        say (d, "%s%.0f process%s killed by the OOM killer", sep, r->oom_kills,
             r->oom_kills == 1 ? "" : "es");
        sep = ", ";
    }
    if (r->reason[0]) {
        say (d, "%s", !strcmp (sep, ": ") ? ": " : " (");
        if (put_reason (&d->sb, r->reason) < 0)
            d->nomem = true;
        if (strcmp (sep, ": "))
            say (d, ")");
    }
    add (d, TR_DIAG_FAILED, TR_DIAG_CRITICAL, "exitcode", r->exit_code,
         "signal", r->signal, "oomkills", r->oom_kills, "timelimit",
         r->time_limit_s, "elapsed", d->elapsed, NULL);
}

/* "the peak of 3.9G reached 98% of the 4.0G limit" */
static void say_peak (struct diag *d)
{
    char b1[32], b2[32], b3[32];
    const char *what = d->row->mem_limit_bytes > 0 ? "limit" : "request";

    say (d, "the peak of %s reached %s of the %s %s",
         tr_units_bytes_short (b1, sizeof (b1), d->row->mem_peak_bytes),
         fmt_pct (b2, sizeof (b2), d->row->mem_peak_bytes / d->limit),
         tr_units_bytes_short (b3, sizeof (b3), d->limit), what);
}

static void rule_oom (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    bool survived = !strcmp (r->state, "completed");
    double base, suggest = NAN;
    char b1[32];

    if (!d->oom)
        return;
    if (survived)
        say (d,
             "out of memory: the OOM killer ended %.0f process%s but "
             "the step completed",
             r->oom_kills, r->oom_kills == 1 ? "" : "es");
    else if (r->oom_kills > 0)
        say (d, "out of memory: the OOM killer ended %.0f process%s",
             r->oom_kills, r->oom_kills == 1 ? "" : "es");
    else
        say (d, "out of memory");
    if (r->mem_peak_bytes > 0 && d->limit > 0) {
        say (d, "; ");
        say_peak (d);
    }
    else if (r->mem_peak_bytes > 0)
        say (d, " at a peak of %s",
             tr_units_bytes_short (b1, sizeof (b1), r->mem_peak_bytes));
    base = fmax (d->limit > 0 ? d->limit : 0,
                 r->mem_peak_bytes > 0 ? r->mem_peak_bytes : 0);
    suggest = advised (d, "mem", b1, sizeof (b1));
    if (!(suggest > base))
        suggest = NAN;
    if (!isnan (suggest) && advised_why (d, "mem"))
        say (d, "; request more memory: --mem=%s (%s): %s", b1,
             d->advice_from, advised_why (d, "mem"));
    else if (!isnan (suggest))
        say (d, "; request more memory: --mem=%s (%s)", b1, d->advice_from);
    else
        say (d, "; request more memory");
    add (d, TR_DIAG_OOM, survived ? TR_DIAG_WARNING : TR_DIAG_CRITICAL,
         "oomkills", r->oom_kills, "mempeak", r->mem_peak_bytes, "memlimit",
         r->mem_limit_bytes, "reqmem", r->req_mem_bytes, "suggestedmem",
         suggest, NULL);
}

static void rule_mem_pressure (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    const struct tr_diag_thresholds *t = d->t;
    bool psi = d->psi_mem > t->mem_pressure;
    bool swap = r->swap_bytes > t->swap_min;
    bool near =
        d->limit > 0 && r->mem_peak_bytes >= t->mem_near_limit * d->limit;
    const char *sep = ": ";
    double suggest = NAN;
    char b1[32];

    /* An OOM kill says it louder; a short step's pressure is noise. */
    if (d->oom || d->is_short || !(psi || swap || near))
        return;
    say (d, "memory pressure");
    if (psi) {
        say (d, "%stasks waited for memory %s of the time", sep,
             fmt_pct (b1, sizeof (b1), d->psi_mem));
        sep = ", ";
    }
    if (swap) {
        say (d, "%s%s swapped out", sep,
             tr_units_bytes_short (b1, sizeof (b1), r->swap_bytes));
        sep = ", ";
    }
    if (near) {
        say (d, "%s", sep);
        say_peak (d);
    }
    say (d, "; the step is slowed by reclaim and close to an OOM kill");
    suggest = advised (d, "mem", b1, sizeof (b1));
    if (d->limit > 0 && suggest > d->limit)
        say (d, ": request more memory: --mem=%s (%s)", b1, d->advice_from);
    else
        suggest = NAN;
    add (d, TR_DIAG_MEM_PRESSURE, TR_DIAG_WARNING, "psimem", d->psi_mem, "swap",
         r->swap_bytes, "mempeak", r->mem_peak_bytes, "memlimit",
         r->mem_limit_bytes, "reqmem", r->req_mem_bytes, "suggestedmem",
         suggest, NULL);
}

static bool io_bound (const struct diag *d)
{
    return !d->is_short && d->psi_io >= d->t->io_pressure
           && d->eff < d->t->low_efficiency;
}

static void rule_io_bound (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    char b1[32], b2[32];

    if (!io_bound (d))
        return;
    /* delay accounting (no "full" figure, which PSI's io.pressure
     * always has) sums the waits of every process: no share of the
     * time but a total, capped at the run time
     */
    if (isnan (r->psi_io_full_s))
        say (d,
             "I/O-bound: its processes waited for block I/O %s of the "
             "run time in total (delay accounting) while the CPUs were %s "
             "busy",
             fmt_pct (b1, sizeof (b1), d->psi_io),
             fmt_pct (b2, sizeof (b2), d->eff));
    else
        say (d,
             "I/O-bound: tasks waited for I/O %s of the time while the "
             "CPUs were %s busy",
             fmt_pct (b1, sizeof (b1), d->psi_io),
             fmt_pct (b2, sizeof (b2), d->eff));
    if (r->read_bytes >= 0 && r->write_bytes >= 0)
        say (d, " (read %s, wrote %s)",
             tr_units_bytes_short (b1, sizeof (b1), r->read_bytes),
             tr_units_bytes_short (b2, sizeof (b2), r->write_bytes));
    else if (r->read_bytes >= 0)
        say (d, " (read %s)", tr_units_bytes_short (b1, sizeof (b1), r->read_bytes));
    else if (r->write_bytes >= 0)
        say (d, " (wrote %s)", tr_units_bytes_short (b1, sizeof (b1), r->write_bytes));
    say (d, "; more cores will not help: work in node-local scratch "
            "($TMPDIR), stage the input there first, or use another file "
            "system or node type");
    add (d, TR_DIAG_IO_BOUND, TR_DIAG_WARNING, "psiio", d->psi_io, "cpueff",
         d->eff, "readbytes", r->read_bytes, "writebytes", r->write_bytes,
         "rchar", r->rchar, "wchar", r->wchar, NULL);
}

static void rule_stalled (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    char b1[32];

    if (d->is_short || !(r->idle_longest_s >= d->t->stalled_after))
        return;
    say (d,
         "stalled for %s at a stretch without CPU use or storage I/O: "
         "look for a hang, a lock or a wait on a remote service",
         fmt_time (b1, sizeof (b1), r->idle_longest_s));
    add (d, TR_DIAG_STALLED, TR_DIAG_WARNING, "idlelongest", r->idle_longest_s,
         "elapsed", d->elapsed, NULL);
}

/* Whether the step's own threads wanted more cores than it had, or all
 * of them: its CPU quota throttled it, or, on two or more cores a node,
 * as many of its threads wanted a CPU as it had cores (its demand:
 * running plus waiting in the run queue, tr_stepsum_cpu_demand; where
 * that is unknown, the most cores busy at once, else the efficiency).
 * Waiting for a CPU otherwise was for other work on the node: more
 * cores would not help.  On one core the two cannot be told apart, and
 * a one-core step is never told to add cores.
 */
static bool own_demand (const struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    double per_node = r->req_cores / (r->nodes > 1 ? r->nodes : 1);

    if (d->throttled > d->t->throttled_fraction)
        return true;
    if (!(per_node >= 2))
        return false;
    if (!isnan (d->demand))
        return d->demand >= per_node - 0.5;
    if (isnan (r->cpu_peak_cores))
        return d->eff >= d->t->cpu_bound_efficiency;
    return r->cpu_peak_cores >= per_node - 0.5;
}

static void rule_over_cpu (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    double nodes = r->nodes > 1 ? r->nodes : 1;
    double per_task, suggest = NAN;
    char b1[32];

    /* Waiting for a CPU is not having too many of them when the step's
     * own threads wanted more (own_demand); waiting for others' work on
     * the node is (a one-thread step on two cores).  Nor is waiting on
     * I/O.  One core cannot be cut further.
     */
    if (d->is_short || !(d->eff < d->t->low_efficiency)
        || (d->psi_cpu >= d->t->cpu_pressure_starved && own_demand (d))
        || io_bound (d) || !(r->req_cores > 1))
        return;
    say (d,
         "over-allocated CPU: %s efficiency, %.1f of %.0f cores busy on "
         "average",
         fmt_pct (b1, sizeof (b1), d->eff), d->avg_cores, r->req_cores);
    if (r->cpu_peak_cores >= 0)
        say (d, ", at most %.1f at once%s", r->cpu_peak_cores,
             nodes > 1 ? " on a node" : "");
    if (d->demand >= 0)
        say (d, ", %.1f thread%s wanting one on average%s", d->demand,
             d->demand == 1 ? "" : "s", nodes > 1 ? " a node" : "");
    /* The engine's size, in the request's own terms (cores per task). */
    per_task = r->req_cpus_per_task > 0 ? r->req_cpus_per_task
               : r->tasks > 0           ? r->req_cores / r->tasks
                                        : r->req_cores / nodes;
    suggest = advised (d, "cpus", b1, sizeof (b1));
    if (suggest < per_task)
        say (d, "; --cpus-per-task=%s would do (%s)", b1, d->advice_from);
    else {
        suggest = NAN;
        say (d, "; the cores were busy together only in bursts");
    }
    add (d, TR_DIAG_OVER_CPU, TR_DIAG_WARNING, "cpueff", d->eff, "avgcpus",
         d->avg_cores, "peakcpus", r->cpu_peak_cores, "cpudemand", d->demand,
         "reqcpus", r->req_cores, "psicpu", d->psi_cpu, "suggestedcpus",
         suggest, NULL);
}

static void rule_over_mem (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    double suggest = NAN;
    char b1[32], b2[32], b3[32];

    /* Only a whole run's peak tells what a run needs: not one that
     * failed, was cancelled or is still going.
     */
    if (strcmp (r->state, "completed") && strcmp (r->state, "timeout"))
        return;
    if (d->is_short || d->oom || !(r->req_mem_bytes > d->t->mem_min_request)
        || !(r->mem_peak_bytes < d->t->mem_low_fraction * r->req_mem_bytes))
        return;
    say (d,
         "over-allocated memory: the peak of %s is %s of the %s "
         "requested",
         tr_units_bytes_short (b1, sizeof (b1), r->mem_peak_bytes),
         fmt_pct (b2, sizeof (b2), r->mem_peak_bytes / r->req_mem_bytes),
         tr_units_bytes_short (b3, sizeof (b3), r->req_mem_bytes));
    suggest = advised (d, "mem", b1, sizeof (b1));
    if (suggest < r->req_mem_bytes)
        say (d, "; --mem=%s would do (%s)", b1, d->advice_from);
    else
        suggest = NAN;
    add (d, TR_DIAG_OVER_MEM, TR_DIAG_WARNING, "mempeak", r->mem_peak_bytes,
         "reqmem", r->req_mem_bytes, "memeff",
         r->mem_peak_bytes / r->req_mem_bytes, "suggestedmem", suggest, NULL);
}

static void rule_idle (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    char b1[32], b2[32], b3[32];

    if (d->is_short || !(d->elapsed >= d->t->idle_min_elapsed)
        || !(d->idle > d->t->idle_fraction))
        return;
    say (d,
         "idle %s of the time (%s of %s without CPU use or storage "
         "I/O): check what it waits for (input from elsewhere, other jobs, "
         "the network, an interactive session left open)",
         fmt_pct (b1, sizeof (b1), d->idle),
         fmt_time (b2, sizeof (b2), r->idle_s),
         fmt_time (b3, sizeof (b3), d->elapsed));
    add (d, TR_DIAG_IDLE, TR_DIAG_WARNING, "idle", d->idle, "idletime",
         r->idle_s, "elapsed", d->elapsed, NULL);
}

static void rule_throttled (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    char b1[32];

    if (d->is_short || !(d->throttled > d->t->throttled_fraction))
        return;
    say (d,
         "throttled %s of the time by its CPU quota: it ran more busy "
         "threads than its cores; match the thread count (OMP_NUM_THREADS, "
         "a tool's --threads) to --cpus-per-task, or request more cores",
         fmt_pct (b1, sizeof (b1), d->throttled));
    add (d, TR_DIAG_THROTTLED, TR_DIAG_WARNING, "throttledfrac", d->throttled,
         "throttled", r->throttled_s, "reqcpus", r->req_cores, NULL);
}

static void rule_imbalanced (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    double ratio;
    char b1[32], b2[32], b3[32];

    if (d->is_short || !(r->nodes > 1) || !(r->node_cpu_max_s > 0)
        || !(r->node_cpu_min_s >= 0))
        return;
    ratio = r->node_cpu_min_s / r->node_cpu_max_s;
    if (!(ratio < d->t->imbalance))
        return;
    say (d,
         "imbalanced across %.0f nodes: the idlest node used %s of the "
         "busiest node's CPU time (%s vs %s); spread the work evenly or use "
         "fewer nodes",
         r->nodes, fmt_pct (b1, sizeof (b1), ratio),
         fmt_time (b2, sizeof (b2), r->node_cpu_min_s),
         fmt_time (b3, sizeof (b3), r->node_cpu_max_s));
    add (d, TR_DIAG_IMBALANCED, TR_DIAG_WARNING, "nodebalance", ratio, "nnodes",
         r->nodes, "nodecpumin", r->node_cpu_min_s, "nodecpumax",
         r->node_cpu_max_s, NULL);
}

static void rule_gpu_idle (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    char b1[32];

    if (d->is_short || !(r->gpus_used > 0)
        || !(r->gpu_util_mean_pct < d->t->gpu_idle_pct))
        return;
    snprintf (b1, sizeof (b1), "%.0f%%", r->gpu_util_mean_pct);
    say (d,
         "GPU idle: %.0f GPU%s averaged %s utilisation; check that the "
         "program uses %s (a GPU build, CUDA_VISIBLE_DEVICES) or run it "
         "without GPUs",
         r->gpus_used, r->gpus_used == 1 ? "" : "s", b1,
         r->gpus_used == 1 ? "it" : "them");
    add (d, TR_DIAG_GPU_IDLE, TR_DIAG_WARNING, "ngpus", r->gpus_used, "gpuutil",
         r->gpu_util_mean_pct, "gpumem", r->gpu_mem_peak_bytes, NULL);
}

static void rule_cpu_bound (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    bool busy = d->eff >= d->t->cpu_bound_efficiency;
    bool own = own_demand (d);
    /* Waiting for a CPU while the step's own cores sit mostly idle is
     * someone else's load or the kernel's (an I/O-bound step shows it),
     * not a step short of cores, unless its own threads wanted them
     * (measured: its demand, not a burst of the series).
     */
    double per_node = r->req_cores / (r->nodes > 1 ? r->nodes : 1);
    double demand = d->demand;
    bool waiting = d->psi_cpu >= d->t->cpu_pressure
                   && (!(d->eff < d->t->low_efficiency)
                       || (own && demand >= per_node - 0.5));
    char b1[32], b2[32];

    if (d->is_short || io_bound (d) || !(busy || waiting))
        return;
    if (busy && waiting)
        say (d,
             "CPU-bound: the CPUs were %s busy and tasks waited for one "
             "%s of the time",
             fmt_pct (b1, sizeof (b1), d->eff),
             fmt_pct (b2, sizeof (b2), d->psi_cpu));
    else if (busy)
        say (d, "CPU-bound: the CPUs were %s busy",
             fmt_pct (b1, sizeof (b1), d->eff));
    else
        say (d, "CPU-bound: tasks waited for a CPU %s of the time",
             fmt_pct (b1, sizeof (b1), d->psi_cpu));
    if (r->cpu_peak_cores >= 0)
        say (d, ", at most %.1f core%s busy at once", r->cpu_peak_cores,
             r->cpu_peak_cores == 1 ? "" : "s");
    if (demand >= 0)
        say (d, ", %.1f thread%s wanting one on average", demand,
             demand == 1 ? "" : "s");
    if (d->throttled > d->t->throttled_fraction)
        say (d, "; its own threads outran its CPU quota: more cores may "
                "help");
    else if (own && busy)
        say (d, "; its own threads kept all %.0f cores busy: more cores "
                "may help", per_node);
    else if (own)
        say (d, "; its own threads wanted all %.0f cores but other work on "
                "the node took them: keep %.0f cores, a less loaded node "
                "would help", per_node, per_node);
    else if (demand < 1.5
             || (isnan (demand) && r->cpu_peak_cores >= 0
                 && r->cpu_peak_cores < 1.5))
        say (d, "; one thread at a time: more cores will not help");
    else if (waiting)
        say (d, "; the wait was for other work on the node, not for the "
                "step's own threads: more cores will not help");
    add (d, TR_DIAG_CPU_BOUND, TR_DIAG_INFO, "cpueff", d->eff, "psicpu",
         d->psi_cpu, "peakcpus", r->cpu_peak_cores, "cpudemand", demand,
         "reqcpus", d->row->req_cores, "throttledfrac", d->throttled, NULL);
}

static void rule_short (struct diag *d)
{
    char b1[32];

    if (!d->is_short)
        return;
    say (d,
         "short step (%s): its efficiency figures are not reliable at "
         "this length",
         fmt_time (b1, sizeof (b1), d->elapsed));
    add (d, TR_DIAG_SHORT, TR_DIAG_INFO, "elapsed", d->elapsed, NULL);
}

static void rule_ok (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    const char *sep = ": ";
    char b1[32], b2[32];

    if (d->n > 0)
        return;
    say (d, "no problem found");
    if (d->eff >= 0) {
        say (d, "%sCPU efficiency %s", sep, fmt_pct (b1, sizeof (b1), d->eff));
        sep = ", ";
    }
    if (r->mem_peak_bytes >= 0 && r->req_mem_bytes > 0)
        say (d, "%speak memory %s of %s requested", sep,
             tr_units_bytes_short (b1, sizeof (b1), r->mem_peak_bytes),
             tr_units_bytes_short (b2, sizeof (b2), r->req_mem_bytes));
    else if (r->mem_peak_bytes >= 0)
        say (d, "%speak memory %s", sep,
             tr_units_bytes_short (b1, sizeof (b1), r->mem_peak_bytes));
    /* idle CPUs with an unmeasured stall: no evidence of none */
    if (!(d->eff < d->t->low_efficiency))
        ;
    else if (isnan (d->psi_io) && isnan (d->psi_mem))
        say (d, " (I/O and memory stall unknown: not measured on this "
                "node)");
    else if (isnan (d->psi_io))
        say (d, " (I/O stall unknown: not measured on this node)");
    add (d, TR_DIAG_OK, TR_DIAG_INFO, "cpueff", d->eff, "mempeak",
         r->mem_peak_bytes, "reqmem", r->req_mem_bytes, NULL);
}

static void rule_incomplete (struct diag *d)
{
    const tr_stepsum_t *r = d->row;
    bool incomplete = r->complete == 0;
    bool sampled = r->exact == 0;

    if (!incomplete && !sampled)
        return;
    if (incomplete && !strcmp (r->state, "running"))
        say (d, "still running: the figures so far");
    else if (incomplete) {
        say (d, "incomplete record");
        if (r->reason[0]) {
            say (d, " (");
            if (put_reason (&d->sb, r->reason) < 0)
                d->nomem = true;
            say (d, ")");
        }
        say (d, ": totals may be short");
    }
    /* a record that measured nothing has no figure to call sampled */
    if (sampled && !strcmp (r->reason, TR_STATES_UNFOLLOWED))
        ;
    else if (sampled && r->cpu_exact == 1)
        /* a process tree: CPU exact from the exit records, memory the
         * largest sampled resident set
         */
        say (d,
             "%smemory was sampled, not exact (CPU is exact): brief "
             "memory peaks may be missed",
             incomplete ? "; " : "");
    else if (sampled)
        say (d,
             "%sCPU and memory were sampled, not exact: brief peaks may "
             "be missed",
             incomplete ? "; " : "");
    add (d, TR_DIAG_INCOMPLETE, TR_DIAG_INFO, "complete", r->complete, "exact",
         r->exact, NULL);
}

json_t *tr_diagnose (const tr_stepsum_t *row,
                     const struct tr_diag_thresholds *t)
{
    return tr_diagnose_advised (row, t, NULL);
}

/* The engine over this one run, with the built-in options (sizing.c). */
static json_t *one_run_advice (const tr_stepsum_t *row)
{
    return tr_sizing_one_run (row, NULL);
}

json_t *tr_diagnose_advised (const tr_stepsum_t *row,
                             const struct tr_diag_thresholds *t,
                             json_t *advice)
{
    struct tr_diag_thresholds defaults;
    struct diag d;
    json_t *out = NULL;
    const tr_stepsum_t *r = row;

    if (!row) {
        errno = EINVAL;
        return NULL;
    }
    if (!t) {
        tr_diag_defaults (&defaults);
        t = &defaults;
    }
    memset (&d, 0, sizeof (d));
    d.row = row;
    d.t = t;
    d.elapsed = r->elapsed_s;
    d.eff = tr_stepsum_cpu_eff (r);
    d.avg_cores = r->elapsed_s > 0 ? r->cpu_s / r->elapsed_s : NAN;
    d.psi_cpu = tr_stepsum_frac (r->psi_cpu_some_s, r);
    d.psi_mem = tr_stepsum_frac (r->psi_mem_some_s, r);
    d.psi_io = tr_stepsum_frac (r->psi_io_some_s, r);
    d.idle = tr_stepsum_frac (r->idle_s, r);
    /* throttled_s is summed over nodes, elapsed_s is the longest node. */
    d.throttled =
        tr_stepsum_frac (r->throttled_s / (r->nodes > 1 ? r->nodes : 1), r);
    d.limit = r->mem_limit_bytes > 0 ? r->mem_limit_bytes
              : r->req_mem_bytes > 0 ? r->req_mem_bytes
                                     : NAN;
    d.demand = tr_stepsum_cpu_demand (r) / (r->nodes > 1 ? r->nodes : 1);
    d.oom = tr_states_oom (r->state, r->oom_kills);
    d.is_short = d.elapsed < t->short_step;
    snprintf (d.advice_from, sizeof (d.advice_from), "a one-run estimate");
    if (advice) {
        json_int_t runs = json_integer_value (
            json_object_get (json_object_get (advice, "runs"), "total"));
        d.advice = json_incref (advice);
        d.advice_asked = true;
        if (runs > 1)
            snprintf (d.advice_from, sizeof (d.advice_from),
                      "from %lld runs", (long long)runs);
    }

    rule_failed (&d);
    rule_oom (&d);
    rule_mem_pressure (&d);
    rule_io_bound (&d);
    rule_stalled (&d);
    rule_over_cpu (&d);
    rule_over_mem (&d);
    rule_idle (&d);
    rule_throttled (&d);
    rule_imbalanced (&d);
    rule_gpu_idle (&d);
    rule_cpu_bound (&d);
    rule_short (&d);
    rule_ok (&d);
    rule_incomplete (&d);
    if (d.nomem)
        goto out;

    /* Most severe first; a stable insertion sort keeps rule order. */
    for (size_t i = 1; i < d.n; i++) {
        struct found f = d.found[i];
        size_t j = i;
        while (j > 0 && d.found[j - 1].severity < f.severity) {
            d.found[j] = d.found[j - 1];
            j--;
        }
        d.found[j] = f;
    }
    if (!(out = json_array ()))
        goto out;
    for (size_t i = 0; i < d.n; i++) {
        if (json_array_append (out, d.found[i].obj) < 0) {
            json_decref (out);
            out = NULL;
            goto out;
        }
    }
out:
    for (size_t i = 0; i < d.n; i++)
        json_decref (d.found[i].obj);
    json_decref (d.advice);
    tr_strbuf_free (&d.sb);
    if (!out)
        errno = ENOMEM;
    return out;
}

static int severity_of (json_t *f)
{
    const char *s = json_string_value (json_object_get (f, "severity"));

    for (int i = TR_DIAG_CRITICAL; s && i >= TR_DIAG_INFO; i--) {
        if (!strcmp (s, severity_names[i]))
            return i;
    }
    return -1;
}

int tr_diag_worst (json_t *findings)
{
    size_t i;
    json_t *f;
    int worst = -1;

    json_array_foreach (findings, i, f)
    {
        int s = severity_of (f);
        if (s > worst)
            worst = s;
    }
    if (worst < 0)
        errno = EINVAL;
    return worst;
}

/* End buf (size bytes, full of the start of a longer text) in "..." on
 * a UTF-8 character boundary.
 */
static void ellipsis (char *buf, size_t size)
{
    size_t n;

    if (size < 4) {
        buf[0] = '\0';
        return;
    }
    n = size - 4;
    while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80)
        n--;
    memcpy (buf + n, "...", 4);
}

const char *tr_diag_line (json_t *findings, char *buf, size_t size)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    int floor_sev, shown = 0, more = 0;
    const char *text;
    size_t i, len;
    json_t *f;

    if (!buf || size == 0 || !json_is_array (findings)) {
        errno = EINVAL;
        return NULL;
    }
    /* Information only when nothing is wrong. */
    floor_sev = tr_diag_worst (findings) > TR_DIAG_INFO ? TR_DIAG_WARNING
                                                        : TR_DIAG_INFO;
    json_array_foreach (findings, i, f)
    {
        const char *t = json_string_value (json_object_get (f, "text"));
        if (severity_of (f) < floor_sev || !t)
            continue;
        if (shown == DIAG_LINE_FINDINGS) {
            more++;
            continue;
        }
        if ((shown && tr_strbuf_puts (&sb, "; ") < 0)
            || tr_strbuf_puts (&sb, t) < 0)
            goto nomem;
        shown++;
    }
    if (more) {
        const char *sep = ": ";
        if (tr_strbuf_printf (&sb, " (+%d more", more) < 0)
            goto nomem;
        shown = 0;
        json_array_foreach (findings, i, f)
        {
            const char *c = json_string_value (json_object_get (f, "code"));
            if (severity_of (f) < floor_sev || !c)
                continue;
            if (shown++ < DIAG_LINE_FINDINGS)
                continue;
            if (tr_strbuf_printf (&sb, "%s%s", sep, c) < 0)
                goto nomem;
            sep = ",";
        }
        if (tr_strbuf_puts (&sb, ")") < 0)
            goto nomem;
    }
    text = tr_strbuf_str (&sb);
    len = strlen (text);
    if (len < size)
        memcpy (buf, text, len + 1);
    else {
        memcpy (buf, text, size - 1);
        buf[size - 1] = '\0';
        ellipsis (buf, size);
    }
    tr_strbuf_free (&sb);
    return buf;
nomem:
    /* Out of memory: the first finding's text still fits in buf. */
    tr_strbuf_free (&sb);
    text =
        json_string_value (json_object_get (json_array_get (findings, 0), "tex"
                                                                          "t"));
    snprintf (buf, size, "%s", text ? text : "");
    if (text && strlen (text) >= size)
        ellipsis (buf, size);
    return buf;
}

int tr_diag_codes (json_t *findings, char *buf, size_t size)
{
    size_t i, len = 0;
    json_t *f;
    int n = 0;

    if (!buf || size == 0 || !json_is_array (findings)) {
        errno = EINVAL;
        return -1;
    }
    buf[0] = '\0';
    json_array_foreach (findings, i, f)
    {
        const char *c = json_string_value (json_object_get (f, "code"));
        size_t cl;
        if (!c)
            continue;
        cl = strlen (c) + (n ? 1 : 0);
        if (len + cl >= size) {
            errno = ERANGE;
            return -1;
        }
        snprintf (buf + len, size - len, "%s%s", n ? "," : "", c);
        len += cl;
        n++;
    }
    return n;
}
