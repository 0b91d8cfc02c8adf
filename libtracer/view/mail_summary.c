/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The per-job summary tracer-mail sends in place of Slurm's end-of-job
 * notification, and a user's digest, as text and HTML.  Everything in a
 * summary that came from a record or from the job's environment is
 * data, never markup: HTML is escaped, and every control character,
 * bidirectional override or line separator becomes a visible escape
 * (tr_strbuf_printable).  Composing and sending: libtracer/notify/mail.c.
 */
#include "config.h"


#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mail_summary.h"
#include "html.h"
#include "report.h"
#include "libtracer/judge/aggregate.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"
#include "recommend_print.h"
#include "libtracer/record/merge.h"
#include "libtracer/record/states.h"
#include "libtracer/record/when.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/units.h"

/* ---------------------------------------------------------------------
 * Whether to summarise, and the summary
 */

/* The job as a whole: the span of its steps, the CPU of all steps but
 * the extern one (it holds no work) against the largest allocation,
 * the largest per-node peak against the request.
 */
struct job_totals {
    double start_ms, end_ms, elapsed_s;
    double cpu_s, cores, mem_peak, mem_req, time_limit_s, time_unlimited;
    const char *state;
    const char *nodes;
};

static double nmax (double a, double b)
{
    if (isnan (a))
        return b;
    if (isnan (b))
        return a;
    return a > b ? a : b;
}

static void job_totals (const struct tr_mail_job *j, struct job_totals *t)
{
    size_t widest = 0;

    t->start_ms = t->end_ms = t->elapsed_s = NAN;
    t->cpu_s = t->cores = t->mem_peak = t->mem_req = t->time_limit_s = NAN;
    t->time_unlimited = NAN;
    t->state = "";
    t->nodes = "";
    for (size_t i = 0; i < j->n; i++) {
        const tr_stepsum_t *r = &j->rows[i];

        if (isnan (t->start_ms) || r->start_ms < t->start_ms)
            t->start_ms = r->start_ms;
        t->end_ms = nmax (t->end_ms, r->end_ms);
        t->elapsed_s = nmax (t->elapsed_s, r->elapsed_s);
        if (strcmp (r->step_id, "extern") && !isnan (r->cpu_s))
            t->cpu_s = isnan (t->cpu_s) ? r->cpu_s : t->cpu_s + r->cpu_s;
        t->cores = nmax (t->cores, r->req_cores);
        t->mem_peak = nmax (t->mem_peak, r->mem_peak_bytes);
        t->mem_req = nmax (t->mem_req, nmax (r->req_mem_bytes,
                                             r->mem_limit_bytes));
        t->time_limit_s = nmax (t->time_limit_s, r->time_limit_s);
        t->time_unlimited = nmax (t->time_unlimited, r->time_unlimited);
        if (!*t->state
            || tr_states_rank (r->state) > tr_states_rank (t->state))
            t->state = r->state;
        if (strlen (r->node) > strlen (j->rows[widest].node))
            widest = i;
    }
    if (!isnan (t->start_ms) && !isnan (t->end_ms))
        t->elapsed_s = nmax (t->elapsed_s, (t->end_ms - t->start_ms) / 1e3);
    if (j->n)
        t->nodes = j->rows[widest].node;
}

static bool completed (const char *state)
{
    return !*state || !strcmp (state, "completed");
}

bool tr_mail_worth (const struct tr_mail_job *j,
                    const struct tr_conf_mail *m,
                    char *why,
                    size_t size)
{
    struct job_totals t;

    if (m->summary == TR_MAIL_SUMMARY_NEVER) {
        snprintf (why, size, "mail.summary is never");
        return false;
    }
    if (j->n == 0) {
        snprintf (why, size, "no records");
        return false;
    }
    if (m->summary == TR_MAIL_SUMMARY_ALWAYS) {
        snprintf (why, size, "mail.summary is always");
        return true;
    }
    for (size_t i = 0; i < j->n; i++)
        if (!completed (j->rows[i].state)) {
            snprintf (why, size, "step %s ended %s", j->rows[i].step_id,
                      j->rows[i].state);
            return true;
        }
    if (j->ev && *j->ev->state && strcmp (j->ev->state, "COMPLETED")
        && strcmp (j->ev->state, "CANCELLED")) {
        snprintf (why, size, "the job ended %s", j->ev->state);
        return true;
    }
    job_totals (j, &t);
    if (!isnan (t.elapsed_s) && t.elapsed_s < m->min_elapsed_s) {
        snprintf (why, size, "ran %.0f s, under mail.min_elapsed",
                  t.elapsed_s);
        return false;
    }
    for (size_t i = 0; i < j->n; i++) {
        json_t *f;
        size_t k;

        json_array_foreach (j->findings ? j->findings[i] : NULL, k, f) {
            const char *sev = json_string_value (json_object_get (f,
                                                                  "severity"));
            const char *code = json_string_value (json_object_get (f,
                                                                   "code"));
            int level = !sev ? 0 : !strcmp (sev, "critical") ? 2
                        : !strcmp (sev, "warning")           ? 1 : 0;

            if (code && strcmp (code, TR_DIAG_OK) && level >= m->severity) {
                snprintf (why, size, "step %s: %s", j->rows[i].step_id,
                          code);
                return true;
            }
        }
    }
    snprintf (why, size, "nothing to act on");
    return false;
}

static const char *pct (char *buf, size_t size, double used, double asked)
{
    if (isnan (used) || isnan (asked) || asked <= 0)
        snprintf (buf, size, "-");
    else
        snprintf (buf, size, "%.0f%%", 100.0 * used / asked);
    return buf;
}

/* v with the given decimals, or "-" when unknown. */
static const char *num_or_dash (char *buf, size_t size, int decimals,
                                double v)
{
    if (isnan (v))
        snprintf (buf, size, "-");
    else
        snprintf (buf, size, "%.*f", decimals, v);
    return buf;
}

static const char *bytes_or_dash (char *buf, size_t size, double v)
{
    if (isnan (v))
        return snprintf (buf, size, "-"), buf;
    return tr_units_bytes (buf, size, v);
}

static const char *dur_or_dash (char *buf, size_t size, double v)
{
    if (isnan (v))
        return snprintf (buf, size, "-"), buf;
    return tr_units_duration (buf, size, v);
}

/* A job's time limit: UNLIMITED where it had none. */
static const char *limit_or_dash (char *buf,
                                  size_t size,
                                  const struct job_totals *t)
{
    if (t->time_unlimited == 1)
        return snprintf (buf, size, TR_STEPSUM_UNLIMITED), buf;
    return dur_or_dash (buf, size, t->time_limit_s);
}

/* The user's name, else "uid N" (records may carry only the uid). */
static const char *user_of (const tr_stepsum_t *r, char *buf, size_t size)
{
    if (*r->user)
        return r->user;
    if (isnan (r->uid))
        return "?";
    snprintf (buf, size, "uid %.0f", r->uid);
    return buf;
}

/* A step as the summary names it: "batch", or "7.batch" when the
 * summary covers several jobs (an array).
 */
static const char *step_label (const struct tr_mail_job *j, size_t i,
                               char *buf, size_t size)
{
    const tr_stepsum_t *r = &j->rows[i];

    for (size_t k = 0; k < j->n; k++)
        if (strcmp (j->rows[k].job_id, r->job_id)) {
            snprintf (buf, size, "%s.%s", r->job_id, r->step_id);
            return buf;
        }
    return r->step_id;
}

/* The headline: "Job 22 (name) failed: OUT_OF_MEMORY" (states as
 * tr_states_name names them, or Slurm's own).
 */
static void headline (const struct tr_mail_job *j, const struct job_totals *t,
                      char *buf, size_t size)
{
    const struct tr_mail_event *ev = j->ev;
    const char *name = ev && *ev->name ? ev->name
                       : j->n             ? j->rows[0].job_name : "";
    const char *state =
        ev && *ev->state ? ev->state : tr_states_sacct (t->state, NAN);
    char ec[32] = "";

    /* Slurm's number, written as every view writes an exit code: its
     * "OUT_OF_MEMORY, ExitCode 0" is sacct's 0:125
     */
    if (ev && ev->exit_code >= 0) {
        tr_stepsum_t row;
        char b[32];

        tr_stepsum_init (&row);
        row.state = state;
        row.exit_code = (double)ev->exit_code;
        snprintf (ec, sizeof (ec), ", exit code %s",
                  tr_stepsum_exit_text (&row, b, sizeof (b)));
    }
    snprintf (buf, size, "%s %s%s%s%s %s %s%s",
              ev && ev->array_summary ? "Array job" : "Job",
              ev && ev->array_summary ? ev->select
              : ev                    ? ev->job_id
              : j->n                  ? j->rows[0].job_id : "?",
              *name ? " (" : "", name, *name ? ")" : "",
              ev && !strcmp (ev->type, "Failed") ? "failed:" : "ended:",
              state, ec);
}

static json_t *finding_list (json_t *findings)
{
    json_t *out = json_array (), *f;
    size_t k;
    bool serious = false;

    if (!out)
        return NULL;
    json_array_foreach (findings, k, f) {
        const char *sev = json_string_value (json_object_get (f, "severity"));
        if (sev && strcmp (sev, "info"))
            serious = true;
    }
    json_array_foreach (findings, k, f) {
        const char *sev = json_string_value (json_object_get (f, "severity"));
        const char *code = json_string_value (json_object_get (f, "code"));
        if (!code || (serious && sev && !strcmp (sev, "info")))
            continue;
        json_array_append (out, f);
    }
    return out;
}

static const char *str_or (json_t *s)
{
    return json_is_string (s) ? json_string_value (s) : "";
}

static const char *advice_text (json_t *g, const char *what)
{
    return json_string_value (json_object_get (json_object_get (g, what),
                                               "text"));
}

/* Advice g as request options of the scheduler that ran row r into
 * buf (tr_sizing_args, as every view writes them); "" when they do not
 * fit.
 */
static const char *advice_args (char *buf, size_t size, json_t *g,
                                const tr_stepsum_t *r)
{
    struct tr_sizing_args a;

    buf[0] = '\0';
    if (tr_sizing_args_advice (&a, r->scheduler, g) < 0
        || tr_sizing_join (buf, size, &a) < 0)
        buf[0] = '\0';
    return buf;
}

/* One-line copies of what a job controls (names, states, reasons, the
 * subject) for the text of a summary or a digest: a line break in a job
 * name must not start a line of its own (tr_strbuf_printable escapes).
 * Each copy lives until PR_RING more are made or the ring is freed.
 */
#define PR_RING 8

/* The plain text's width: a mail reader's 80 columns.  A line that names
 * a step (why it failed, a diagnosis, next time's request) is wrapped to
 * it, its continuation lines under its text.
 */
#define MAIL_WIDTH 80

struct pr_ring {
    tr_strbuf_t sb[PR_RING];
    unsigned next;
};

static const char *pr (struct pr_ring *r, const char *s)
{
    tr_strbuf_t *b;

    if (!s)
        return "";
    if (tr_text_is_printable (s))
        return s;
    b = &r->sb[r->next++ % PR_RING];
    tr_strbuf_free (b);
    if (tr_strbuf_printable (b, s) < 0 || !tr_strbuf_str (b))
        return "?";
    return tr_strbuf_str (b);
}

/* One line of a step to out at MAIL_WIDTH, its continuation lines hang
 * columns in (under the text after the step's label).
 */
static void wrap (FILE *out, const char *line, int hang)
{
    (void)tr_report_wrap_hang (out, line, MAIL_WIDTH, hang);
}

static void pr_free (struct pr_ring *r)
{
    for (unsigned i = 0; i < PR_RING; i++)
        tr_strbuf_free (&r->sb[i]);
}

static int summary_text (FILE *out, const struct tr_mail_job *j)
{
    struct pr_ring rg = { 0 };
    struct job_totals t;
    char line[512], a[64], b[64], c[64], lab[160], args[256], wl[2048];
    bool any;

    job_totals (j, &t);
    headline (j, &t, line, sizeof (line));
    fprintf (out, "%s\n", pr (&rg, line));
    if (j->n)
        fprintf (out, "User %s, account %s, partition %s, cluster %s, "
                 "node%s %s\n",
                 pr (&rg, user_of (&j->rows[0], a, sizeof (a))),
                 pr (&rg, *j->rows[0].account ? j->rows[0].account : "-"),
                 pr (&rg, *j->rows[0].partition ? j->rows[0].partition
                                                : "-"),
                 pr (&rg, j->rows[0].cluster), strchr (t.nodes, ',') ? "s" : "",
                 pr (&rg, t.nodes));

    fprintf (out, "\nWhat the job used against what it asked for:\n");
    fprintf (out, "  %-8s %14s %14s %11s\n", "", "Asked", "Used",
             "Efficiency");
    fprintf (out, "  %-8s %14s %14s %11s\n", "Cores",
             num_or_dash (a, sizeof (a), 0, t.cores),
             num_or_dash (b, sizeof (b), 2,
                          isnan (t.elapsed_s) || t.elapsed_s <= 0
                              ? NAN : t.cpu_s / t.elapsed_s),
             pct (c, sizeof (c), t.cpu_s,
                  t.cores * t.elapsed_s));
    fprintf (out, "  %-8s %14s %14s %11s\n", "Memory",
             bytes_or_dash (a, sizeof (a), t.mem_req),
             bytes_or_dash (b, sizeof (b), t.mem_peak),
             pct (c, sizeof (c), t.mem_peak, t.mem_req));
    fprintf (out, "  %-8s %14s %14s %11s\n", "Time",
             limit_or_dash (a, sizeof (a), &t),
             dur_or_dash (b, sizeof (b), t.elapsed_s),
             pct (c, sizeof (c), t.elapsed_s, t.time_limit_s));
    fprintf (out, "  (cores used: CPU time over run time;\n   memory: the "
             "exact peak of the largest node)\n");

    fprintf (out, "\nSteps:\n  %-12s %-13s %10s %6s %11s %6s\n", "Step",
             "State", "Elapsed", "CPU", "Mem peak", "Mem");
    for (size_t i = 0; i < j->n; i++) {
        const tr_stepsum_t *r = &j->rows[i];
        char d[32], e[32];

        fprintf (out, "  %-12s %-13s %10s %6s %11s %6s\n",
                 pr (&rg, step_label (j, i, lab, sizeof (lab))),
                 pr (&rg, tr_states_sacct (r->state, r->oom_kills)),
                 dur_or_dash (a, sizeof (a), r->elapsed_s),
                 pct (d, sizeof (d), r->cpu_s,
                      r->req_cores * r->elapsed_s),
                 bytes_or_dash (b, sizeof (b), r->mem_peak_bytes),
                 pct (e, sizeof (e), r->mem_peak_bytes,
                      nmax (r->req_mem_bytes, r->mem_limit_bytes)));
    }

    /* why each step that did not complete ended so (doc/diagnosis.md) */
    for (size_t i = 0, shown = 0; i < j->n; i++) {
        const tr_stepsum_t *r = &j->rows[i];

        if (!*r->cause)
            continue;
        if (!shown++)
            fprintf (out, "\nWhy it failed:\n");
        snprintf (wl, sizeof (wl), "  %-12s %s%s%s",
                  pr (&rg, step_label (j, i, lab, sizeof (lab))),
                  pr (&rg, r->cause), *r->cause_text ? ": " : "",
                  pr (&rg, r->cause_text));
        wrap (out, wl, 15);
    }

    /* Stall as measured; "unknown" where the node could not, never 0 % */
    fprintf (out, "\nStalled (some task waiting):\n");
    for (size_t i = 0; i < j->n; i++) {
        char st[160];
        tr_stepsum_stall_text (&j->rows[i], st, sizeof (st));
        fprintf (out, "  %-12s %s\n",
                 pr (&rg, step_label (j, i, lab, sizeof (lab))), st);
    }

    fprintf (out, "\nDiagnosis:\n");
    for (size_t i = 0; i < j->n; i++) {
        json_t *list, *f;
        size_t k;

        list = finding_list (j->findings ? j->findings[i] : NULL);
        json_array_foreach (list, k, f)
        {
            snprintf (wl, sizeof (wl), "  %-12s [%s] %s",
                      k ? "" : pr (&rg, step_label (j, i, lab, sizeof (lab))),
                      pr (&rg, str_or (json_object_get (f, "severity"))),
                      pr (&rg, str_or (json_object_get (f, "text"))));
            /* under the text, after "[severity] " */
            wrap (out, wl,
                  15 + 3
                      + (int)strlen (pr (&rg, str_or (json_object_get (
                                                 f, "severity")))));
        }
        json_decref (list);
    }

    any = false;
    for (size_t i = 0; i < j->n; i++) {
        json_t *g = j->advice ? j->advice[i] : NULL;
        const char *cpus = advice_text (g, "cpus");
        const char *mem = advice_text (g, "mem");
        const char *tm = advice_text (g, "time");
        json_int_t runs = json_integer_value (
            json_object_get (json_object_get (g, "runs"), "total"));
        const char *conf = json_string_value (json_object_get (g,
                                                              "confidence"));

        if (!g || !(cpus || mem || tm) || !strcmp (j->rows[i].step_id,
                                                   "extern"))
            continue;
        if (!any)
            fprintf (out, "\nNext time, request (from this job and the "
                     "earlier runs of its steps):\n");
        any = true;
        snprintf (wl, sizeof (wl), "  %-12s %s   (%lld run%s, %s confidence)",
                  pr (&rg, step_label (j, i, lab, sizeof (lab))),
                  advice_args (args, sizeof (args), g, &j->rows[i]),
                  (long long)runs, runs == 1 ? "" : "s",
                  conf ? conf : "low");
        wrap (out, wl, 15);
    }

    fprintf (out, "\n");
    if (j->attachment)
        fprintf (out, "The full report with charts is attached (%s): open "
                 "it in a web browser.\n", j->attachment);
    if (j->report_url)
        fprintf (out, "The full report: %s\n", j->report_url);
    if (j->report_note)
        fprintf (out, "%s\n", pr (&rg, j->report_note));
    fprintf (out, "On the cluster: tracer-report -j %s   (and --html -o "
             "FILE for the charts)\n",
             pr (&rg, j->ev && j->ev->array_summary ? j->ev->select
                      : j->ev                       ? j->ev->job_id
                      : j->n                        ? j->rows[0].job_id
                                                    : "?"));
    if (j->subject)
        fprintf (out, "\n-- \nSlurm's notification: %s\nSummary by tracer "
                 "%s.\n", pr (&rg, j->subject), TRACER_VERSION);
    pr_free (&rg);
    return ferror (out) ? (errno = EIO, -1) : 0;
}

/* ---------------------------------------------------------------------
 * The digest
 */

static double hours (double a, double b)
{
    return isnan (a) || isnan (b) ? 0 : a * b / 3600.0;
}

static int digest_text (FILE *out,
                        const char *user,
                        const tr_stepsum_t *const *rows,
                        size_t n,
                        json_t *waste,
                        json_t *recs,
                        time_t from,
                        time_t to)
{
    static const char *const states[] = { "completed", "failed", "oom",
                                          "timeout", "cancelled", NULL };
    size_t count[6] = { 0 }, jobs = 0, shown = 0;
    double core_alloc = 0, core_used = 0, mem_alloc = 0, mem_used = 0;
    char f[32], t[32], line[256];
    struct pr_ring rg = { 0 };
    struct tm tm;

    localtime_r (&from, &tm);
    strftime (f, sizeof (f), "%Y-%m-%d %H:%M", &tm);
    localtime_r (&to, &tm);
    strftime (t, sizeof (t), "%Y-%m-%d %H:%M", &tm);
    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = rows[i];
        size_t k;

        if (i == 0 || strcmp (r->job_id, rows[i - 1]->job_id))
            jobs++;
        for (k = 0; states[k] && strcmp (states[k], r->state); k++)
            ;
        /* a shell whose child the OOM killer took ends "failed" */
        if (k == 1 && tr_states_oom (r->state, r->oom_kills))
            k = 2;
        count[k]++;
        if (!strcmp (r->step_id, "extern"))
            continue;
        core_alloc += hours (r->req_cores, r->elapsed_s);
        core_used += isnan (r->cpu_s) ? 0 : r->cpu_s / 3600.0;
        mem_alloc += hours (r->req_mem_bytes * (isnan (r->nodes) ? 1
                                                                 : r->nodes),
                            r->elapsed_s) / 1073741824.0;
        mem_used += hours (r->mem_peak_sum_bytes, r->elapsed_s)
                    / 1073741824.0;
    }
    fprintf (out, "Your jobs from %s to %s, as tracer recorded them%s%s.\n\n",
             f, t, n ? " on cluster " : "", n ? pr (&rg, rows[0]->cluster) : "");
    fprintf (out, "User %s: %zu job%s, %zu step%s: %zu completed, %zu failed, "
             "%zu " TR_STATES_OOM ", %zu timed out, %zu cancelled, "
             "%zu other.\n",
             pr (&rg, user), jobs, jobs == 1 ? "" : "s", n, n == 1 ? "" : "s",
             count[0], count[1], count[2], count[3], count[4], count[5]);
    fprintf (out, "CPU: %.1f core-hours allocated, %.1f used (%s).\n",
             core_alloc, core_used,
             pct (line, sizeof (line), core_used, core_alloc));
    fprintf (out, "Memory: %.1f GiB-hours requested, peaks held %.1f (%s; "
             "a peak is an upper bound of use).\n", mem_alloc, mem_used,
             pct (line, sizeof (line), mem_used, mem_alloc));

    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = rows[i];

        if (completed (r->state) || !strcmp (r->state, "cancelled"))
            continue;
        if (shown == 0)
            fprintf (out, "\nSteps that did not complete:\n");
        if (++shown > 10) {
            fprintf (out, "  ... and more: tracer-report -u %s -s F,OOM,TO "
                     "-S '%s'\n", pr (&rg, user), f);
            break;
        }
        fprintf (out, "  %s.%s  %-10s %s  %s\n", pr (&rg, r->job_id),
                 pr (&rg, r->step_id),
                 pr (&rg, tr_states_sacct (r->state, r->oom_kills)),
                 pr (&rg, r->job_name), pr (&rg, r->reason));
        if (*r->cause)
            fprintf (out, "      cause %s%s%s\n", pr (&rg, r->cause),
                     *r->cause_text ? ": " : "", pr (&rg, r->cause_text));
    }
    if (waste) {
        fprintf (out, "\nWhere the allocation went unused, by step group:\n");
        tr_waste_print (out, waste, false, MAIL_WIDTH);
    }
    if (recs && json_array_size (json_object_get (recs, "groups"))) {
        fprintf (out, "\nWhat to request next time, by step group:\n");
        tr_recommend_print_table_width (out, recs, MAIL_WIDTH);
    }
    fprintf (out, "\nMore: tracer-report -S '%s' --waste --by=group, "
             "tracer-report --recommend --output=sbatch\n"
             "-- \nDigest by tracer %s.\n", f, TRACER_VERSION);
    pr_free (&rg);
    return ferror (out) ? (errno = EIO, -1) : 0;
}

/* ---------------------------------------------------------------------
 * The HTML alternative: tables and inline styles only (mail clients
 * drop <style> blocks, scripts and SVG)
 */

/* s as HTML text: its control characters, line separators and
 * bidirectional overrides first made visible escapes (tr_html_escape
 * would drop control characters but keep the overrides, which reorder
 * what a reader sees), then markup escaped.
 */
static void esc (FILE *out, const char *s)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;

    if (!s)
        return;
    if (tr_text_is_printable (s)) {
        tr_html_escape (out, s);
        return;
    }
    if (tr_strbuf_printable (&sb, s) < 0 || !tr_strbuf_str (&sb)) {
        /* out of memory: leave it out rather than show it raw */
        tr_strbuf_free (&sb);
        fputs ("?", out);
        return;
    }
    tr_html_escape (out, tr_strbuf_str (&sb));
    tr_strbuf_free (&sb);
}

static void td (FILE *out, const char *s, bool right)
{
    fprintf (out, "<td style=\"padding:2px 8px;border-bottom:1px solid "
             "#ddd;%s\">", right ? "text-align:right" : "");
    esc (out, s);
    fputs ("</td>", out);
}

static void bar_row (FILE *out, const char *what, const char *asked,
                     const char *used, double frac)
{
    char p[32];
    int w = isnan (frac) ? 0 : (int)lround (fmin (frac, 1.0) * 100);
    const char *colour = isnan (frac) ? "#999"
                         : frac > 1.0 ? "#c0392b"
                         : frac < 0.5 ? "#e67e22" : "#27ae60";

    fputs ("<tr>", out);
    td (out, what, false);
    td (out, asked, true);
    td (out, used, true);
    fprintf (out, "<td style=\"padding:2px 8px;border-bottom:1px solid "
             "#ddd;min-width:90px\"><div style=\"background:#eee;width:100%%;"
             "height:10px\"><div style=\"background:%s;width:%d%%;height:"
             "10px\"></div></div></td>", colour, w);
    td (out, isnan (frac) ? "-" : (snprintf (p, sizeof (p), "%.0f%%",
                                             frac * 100), p), true);
    fputs ("</tr>\n", out);
}

/* The text of a summary to out with every line wrapped to
 * MAIL_WIDTH (tr_report_wrap: a "label: value" line under its value).
 */
static int wrapped (FILE *out, char *buf, size_t len, int rc)
{
    if (rc == 0 && tr_report_wrap (out, buf, len, MAIL_WIDTH) < 0) {
        errno = EIO;
        rc = -1;
    }
    free (buf);
    return rc;
}

int tr_mail_summary_text (FILE *out, const struct tr_mail_job *j)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream (&buf, &len);
    int rc;

    if (!mem)
        return -1;
    rc = summary_text (mem, j);
    if (fclose (mem) != 0 && rc == 0)
        rc = -1;
    return wrapped (out, buf, len, rc);
}

/* The digest, its lines wrapped to MAIL_WIDTH as the summary's are: the
 * tables fit (tr_waste_print, tr_recommend_print_table_width), a
 * sentence goes on under its label.
 */
int tr_mail_digest (FILE *out,
                    const char *user,
                    const tr_stepsum_t *const *rows,
                    size_t n,
                    json_t *waste,
                    json_t *recs,
                    time_t from,
                    time_t to)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream (&buf, &len);
    int rc;

    if (!mem)
        return -1;
    rc = digest_text (mem, user, rows, n, waste, recs, from, to);
    if (fclose (mem) != 0 && rc == 0)
        rc = -1;
    return wrapped (out, buf, len, rc);
}

int tr_mail_summary_html (FILE *out, const struct tr_mail_job *j)
{
    struct job_totals t;
    char line[512], a[64], b[64], lab[160], args[256];
    const char *th = "<th style=\"text-align:left;padding:2px 8px;"
                     "border-bottom:2px solid #999\">";

    job_totals (j, &t);
    headline (j, &t, line, sizeof (line));
    fputs ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width,"
           "initial-scale=1\"><title>", out);
    esc (out, line);
    fputs ("</title></head>\n<body style=\"font-family:sans-serif;"
           "font-size:14px;color:#222;max-width:720px;margin:0 auto;"
           "padding:8px\">\n<h2 style=\"font-size:18px\">", out);
    esc (out, line);
    fputs ("</h2>\n", out);
    if (j->n) {
        fputs ("<p>User ", out);
        esc (out, user_of (&j->rows[0], a, sizeof (a)));
        fputs (", partition ", out);
        esc (out, *j->rows[0].partition ? j->rows[0].partition
                                                   : "-");
        fputs (", cluster ", out);
        esc (out, j->rows[0].cluster);
        fputs (", nodes ", out);
        esc (out, t.nodes);
        fputs ("</p>\n", out);
    }

    fprintf (out, "<h3 style=\"font-size:15px\">What the job used against "
             "what it asked for</h3>\n<div style=\"overflow-x:auto\">"
             "<table id=\"usage\" style=\"border-collapse:collapse\">"
             "<tr>%s</th>%sAsked</th>%sUsed</th>%s</th>%sEfficiency</th>"
             "</tr>\n", th, th, th, th, th);
    bar_row (out, "Cores", num_or_dash (a, sizeof (a), 0, t.cores),
             num_or_dash (b, sizeof (b), 2,
                          t.elapsed_s > 0 ? t.cpu_s / t.elapsed_s : NAN),
             t.cores > 0 && t.elapsed_s > 0
                 ? t.cpu_s / (t.cores * t.elapsed_s) : NAN);
    bar_row (out, "Memory", bytes_or_dash (a, sizeof (a), t.mem_req),
             bytes_or_dash (b, sizeof (b), t.mem_peak),
             t.mem_req > 0 ? t.mem_peak / t.mem_req : NAN);
    bar_row (out, "Time", limit_or_dash (a, sizeof (a), &t),
             dur_or_dash (b, sizeof (b), t.elapsed_s),
             t.time_limit_s > 0 ? t.elapsed_s / t.time_limit_s : NAN);
    fputs ("</table></div>\n", out);

    /* Stall as measured; "unknown" where the node could not, never 0 % */
    fputs ("<p id=\"stall\">Stalled (some task waiting):", out);
    for (size_t i = 0; i < j->n; i++) {
        char st[160];
        tr_stepsum_stall_text (&j->rows[i], st, sizeof (st));
        fputs (i ? "; " : " ", out);
        esc (out, step_label (j, i, lab, sizeof (lab)));
        fputs (": ", out);
        esc (out, st);
    }
    fputs ("</p>\n", out);

    {
        size_t shown = 0;

        for (size_t i = 0; i < j->n; i++) {
            const tr_stepsum_t *r = &j->rows[i];

            if (!*r->cause)
                continue;
            if (!shown++)
                fputs ("<h3 style=\"font-size:15px\">Why it failed</h3>\n"
                       "<ul id=\"cause\">\n", out);
            fputs ("<li>", out);
            esc (out, step_label (j, i, lab, sizeof (lab)));
            fputs (": <strong>", out);
            esc (out, r->cause);
            fputs ("</strong>", out);
            if (*r->cause_text) {
                fputs (": ", out);
                esc (out, r->cause_text);
            }
            fputs ("</li>\n", out);
        }
        if (shown)
            fputs ("</ul>\n", out);
    }

    fputs ("<h3 style=\"font-size:15px\">Diagnosis</h3>\n<ul id=\"diagnosis"
           "\">\n", out);
    for (size_t i = 0; i < j->n; i++) {
        json_t *list, *f;
        size_t k;

        list = finding_list (j->findings ? j->findings[i] : NULL);
        json_array_foreach (list, k, f) {
            const char *sev = json_string_value (json_object_get (f,
                                                                  "severity"));
            fprintf (out, "<li><span style=\"color:%s\">[",
                     sev && !strcmp (sev, "critical") ? "#c0392b"
                         : sev && !strcmp (sev, "warning") ? "#d35400"
                                                           : "#555");
            esc (out, sev ? sev : "");
            fputs ("]</span> ", out);
            esc (out, step_label (j, i, lab, sizeof (lab)));
            fputs (": ", out);
            esc (out, str_or (json_object_get (f, "text")));
            fputs ("</li>\n", out);
        }
        json_decref (list);
    }
    fputs ("</ul>\n", out);

    fputs ("<h3 style=\"font-size:15px\">Next time</h3>\n<ul id=\"next\">\n",
           out);
    for (size_t i = 0; i < j->n; i++) {
        json_t *g = j->advice ? j->advice[i] : NULL;
        const char *cpus = advice_text (g, "cpus");
        const char *mem = advice_text (g, "mem");
        const char *tm = advice_text (g, "time");

        if (!g || !(cpus || mem || tm) || !strcmp (j->rows[i].step_id,
                                                   "extern"))
            continue;
        fputs ("<li>", out);
        esc (out, step_label (j, i, lab, sizeof (lab)));
        fputs (": <code> ", out);
        esc (out, advice_args (args, sizeof (args), g, &j->rows[i]));
        fputs ("</code></li>\n", out);
    }
    fputs ("</ul>\n<p>", out);
    if (j->attachment) {
        fputs ("The full report with charts is attached (", out);
        esc (out, j->attachment);
        fputs (").<br>\n", out);
    }
    if (j->report_url) {
        fputs ("<a href=\"", out);
        esc (out, j->report_url);
        fputs ("\">The full report</a><br>\n", out);
    }
    if (j->report_note) {
        esc (out, j->report_note);
        fputs ("<br>\n", out);
    }
    fputs ("</p>\n", out);
    if (j->subject) {
        fputs ("<p style=\"color:#777;font-size:12px\">Slurm's notification: ",
               out);
        esc (out, j->subject);
        fprintf (out, "<br>Summary by tracer %s.</p>\n", TRACER_VERSION);
    }
    fputs ("</body></html>\n", out);
    return ferror (out) ? (errno = EIO, -1) : 0;
}

