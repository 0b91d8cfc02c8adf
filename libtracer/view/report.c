/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Text views of records.  Records are grouped by job, then by step: a
 * multi-node step has one record per node, merged (merge.c) into totals
 * that hold every node against what that node was granted, the bug class
 * that makes seff wrong for multi-task and multi-node jobs, and each node
 * still gets its own line.  The live view lists the snapshots tracerd
 * keeps of the steps running on this node.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/record/cause.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/evidence.h"
#include "libtracer/record/merge.h"
#include "libtracer/hook/proto.h"
#include "libtracer/record/record.h"
#include "report.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/json.h"
#include "libtracer/util/tools.h"
#include "libtracer/record/when.h"
#include "libtracer/util/units.h"
#include "libtracer/record/states.h"

static bool has (json_t *o, const char *k)
{
    return json_object_get (o, k) != NULL;
}

/* The job view's lines are "LABEL:  value", every label in a field of
 * VIEW_LABEL columns after its indentation, so that the values of a
 * block line up (and wrapped lines hang under them).
 */
#define VIEW_LABEL 16

static void label (FILE *out, int indent, const char *name)
{
    int n = (int)strlen (name) + 1;

    fprintf (out, "%*s%s:%*s", indent, "", name,
             n < VIEW_LABEL ? VIEW_LABEL - n : 1, "");
}

/* What the view says once, at its end, rather than on every step: the
 * memory definitions its steps used and whether any step had only
 * node-wide network counters.
 */
struct view_notes {
    json_t *mem_defs; /* array of the distinct definitions, in order */
    bool net_shared;
};

static void note_mem_def (struct view_notes *vn, const char *def)
{
    json_t *v;
    size_t i;

    if (!vn || !def || !*def)
        return;
    json_array_foreach (vn->mem_defs, i, v)
        if (!strcmp (json_string_value (v), def))
            return;
    (void)json_array_append_new (vn->mem_defs, json_string (def));
}

/* "Nodes:" line of a step: its nodes, and how many of those the
 * scheduler gave it sent a record.  Printed for a single-node step only
 * when nodes are missing, so that one stays as it always read; nothing
 * when step is NULL.
 */
static void print_nodes (FILE *out, json_t *step)
{
    json_t *nodes = json_object_get (step, "nodes"), *v;
    json_t *missing = json_object_get (step, "missing_node_indices");
    size_t i;

    if (!step
        || (tr_json_int_or (step, "nodes_reported", 0) == 1
            && !has (step, "nodes_missing")))
        return;
    label (out, 4, "Nodes");
    json_array_foreach (nodes, i, v)
    {
        fprintf (out, "%s%s", i ? ", " : "", json_string_value (v));
    }
    if (has (step, "nodes_missing")) {
        fprintf (out, "; %lld of %lld nodes reported, NO RECORD from %lld",
                 tr_json_int_or (step, "nodes_reported", 0),
                 tr_json_int_or (step, "nodes_expected", 0),
                 tr_json_int_or (step, "nodes_missing", 0));
        json_array_foreach (missing, i, v)
        {
            fprintf (out, "%s%lld", i ? ", " : " (node index ",
                     (long long)json_integer_value (v));
        }
        if (json_array_size (missing))
            fprintf (out, ")");
    }
    else if (has (step, "nodes_expected"))
        fprintf (out, "; %lld of %lld nodes reported",
                 tr_json_int_or (step, "nodes_reported", 0),
                 tr_json_int_or (step, "nodes_expected", 0));
    fprintf (out, "\n");
}

static void print_io (FILE *out, json_t *io, long long nodes);
static void print_network (FILE *out, json_t *net, struct view_notes *vn);
static void print_tools (FILE *out, json_t *tools);
static void print_evidence (FILE *out, json_t *rec);

/* The lines every step gets from its summary: stalls, GPUs, the
 * diagnosis and what to request next time.
 */
static void print_summary_lines (FILE *out,
                                 const tr_stepsum_t *sum,
                                 const struct tr_report_view_opts *opts)
{
    struct tr_diag_thresholds defaults;
    const struct tr_diag_thresholds *t = opts ? opts->diag : NULL;
    char b1[32], b2[32], line[1024];
    json_t *findings, *advice;

    /* every resource, "unknown" where the node could not measure it */
    if (tr_stepsum_stall_text (sum, line, sizeof (line)) > 0) {
        /* delay accounting has no "full" figure: its delays are the
         * processes' summed, capped at the run time
         */
        label (out, 4, "Stalled");
        fprintf (out, "%s of the time (%s%s)\n", line,
                 isnan (sum->psi_io_full_s) && !isnan (sum->psi_cpu_some_s)
                     ? "delay accounting: the processes' delays summed"
                     : "some task waiting",
                 sum->nodes > 1 ? ", the worst node" : "");
    }
    else {
        label (out, 4, "Stalled");
        fprintf (out, "unknown (not measured on this node)\n");
    }
    if (sum->gpus_used > 0) {
        label (out, 4, "GPUs");
        fprintf (out, "%.0f, utilisation %.0f%% on average", sum->gpus_used,
                 sum->gpu_util_mean_pct);
        if (!isnan (sum->gpu_mem_peak_bytes))
            fprintf (out, ", memory peak %s",
                     tr_units_bytes (b1, sizeof (b1),
                                      sum->gpu_mem_peak_bytes));
        fprintf (out, "\n");
    }
    else if (*sum->gpus) {
        label (out, 4, "GPUs");
        fprintf (out, "%s requested, none measured\n", sum->gpus);
    }
    if (sum->idle_s > 0 && sum->elapsed_s > 0) {
        label (out, 4, "Idle");
        fprintf (out, "%s of %s (longest stretch %s)\n",
                 tr_units_duration (b1, sizeof (b1), sum->idle_s),
                 tr_units_duration (b2, sizeof (b2), sum->elapsed_s),
                 tr_units_duration (line, sizeof (line),
                                     sum->idle_longest_s));
    }
    if (!t) {
        tr_diag_defaults (&defaults);
        t = &defaults;
    }
    advice = opts && opts->advice ? opts->advice (sum, opts->arg) : NULL;
    if ((findings = tr_diagnose_advised (sum, t, advice))) {
        label (out, 4, "Diagnosis");
        fprintf (out, "%s\n", tr_diag_line (findings, line, sizeof (line)));
        json_decref (findings);
    }
    json_decref (advice);
    if (opts && opts->next_time)
        opts->next_time (out, sum, opts->arg);
}

/* ": STATE, exit code N:S" of a step, a node's row or a record's
 * outcome o whose state is state: Slurm's words, as the header and the
 * listing write them (tr_stepsum_state_name, tr_stepsum_exit_text).
 */
static void print_outcome (FILE *out, const char *state, json_t *o)
{
    char b[64];

    fprintf (out, ": %s", tr_stepsum_state_name (state, NAN));
    if (*tr_stepsum_exit_of (o, state, b, sizeof (b)))
        fprintf (out, ", exit code %s", b);
}

/* "Cause: CLASS: evidence" of a step that did not complete. */
static void print_cause (FILE *out, const char *cause, const char *text)
{
    if (!cause || !*cause)
        return;
    label (out, 4, "Cause");
    fprintf (out, "%s%s%s\n", cause, text && *text ? ": " : "",
             text ? text : "");
}

static void print_step (FILE *out,
                        json_t *rec,
                        json_t *step,
                        const char *note,
                        const tr_stepsum_t *stepsum,
                        const struct tr_report_view_opts *opts,
                        struct view_notes *vn)
{
    json_t *id = json_object_get (rec, "identity");
    json_t *req = json_object_get (rec, "request");
    json_t *sum = json_object_get (rec, "summary");
    json_t *cpu = json_object_get (sum, "cpu");
    json_t *mem = json_object_get (sum, "memory");
    json_t *t = json_object_get (rec, "time");
    json_t *oc = json_object_get (rec, "outcome");
    double elapsed = tr_json_num_or (t, "elapsed_s", 0);
    double cores = tr_merge_request_cores (req);
    char b1[32], b2[32];
    size_t ntasks = json_array_size (json_object_get (oc, "tasks"));

    fprintf (out, "  Step %s on %s", tr_json_str_or (id, "step_id", ""),
             tr_json_str_or (id, "node", ""));
    if (has (id, "step_name"))
        fprintf (out, " (%s)", tr_json_str_or (id, "step_name", ""));
    print_outcome (out, tr_states_of (rec), oc);
    fprintf (out, "\n");
    {
        char text[TR_CAUSE_TEXT_MAX];
        tr_cause_t cause = tr_cause_of (rec, text, sizeof (text));
        print_cause (out, tr_cause_name (cause), text);
    }
    label (out, 4, "Elapsed");
    fprintf (out, "%s\n", tr_units_duration (b1, sizeof (b1), elapsed));

    if (tr_states_unfollowed (rec)) {
        /* nothing was measured: no figure is shown as 0 */
        label (out, 4, "CPU time");
        fprintf (out, "unknown\n");
        label (out, 4, "Memory peak");
        fprintf (out, "unknown (%s)\n", TR_STATES_UNFOLLOWED);
        goto figures_done;
    }
    label (out, 4, "CPU time");
    fprintf (out, "%.2f s (user %.2f s, system %.2f s)",
             tr_json_num_or (cpu, "total_s", 0),
             tr_json_num_or (cpu, "user_s", 0),
             tr_json_num_or (cpu, "system_s", 0));
    fprintf (out, " [%s%s]\n", tr_json_str_or (cpu, "source", ""),
             json_is_true (json_object_get (cpu, "exact")) ? ", exact"
                                                           : ", sampled");
    if (cores > 0 && elapsed > 0) {
        label (out, 4, "CPU efficiency");
        fprintf (out, "%.1f%% of %g allocated core%s\n",
                 100.0 * tr_json_num_or (cpu, "total_s", 0) / (elapsed * cores),
                 cores, cores == 1 ? "" : "s");
    }
    else if (elapsed > 0) {
        label (out, 4, "CPU usage");
        fprintf (out, "%.2f cores on average\n",
                 tr_json_num_or (cpu, "total_s", 0) / elapsed);
    }

    label (out, 4, "Memory peak");
    fprintf (out, "%s",
             tr_units_bytes (b1, sizeof (b1),
                             tr_json_num_or (mem, "peak_bytes", 0)));
    if (has (req, "mem_bytes") && tr_json_num_or (req, "mem_bytes", 0) > 0)
        fprintf (out, " of %s requested (%.1f%%)",
                 tr_units_bytes (b2, sizeof (b2),
                                 tr_json_num_or (req, "mem_bytes", 0)),
                 100.0 * tr_json_num_or (mem, "peak_bytes", 0)
                     / tr_json_num_or (req, "mem_bytes", 0));
    fprintf (out, " [%s%s]\n", tr_json_str_or (mem, "source", ""),
             json_is_true (json_object_get (mem, "exact")) ? ", exact"
                                                           : ", sampled");
    note_mem_def (vn, tr_json_str_or (mem, "definition", ""));
figures_done:
    if (ntasks) {
        label (out, 4, "Tasks");
        fprintf (out, "%zu\n", ntasks);
    }
    print_nodes (out, step);
    if (step) {
        print_io (out, json_object_get (step, "io"), 1);
        print_network (out, json_object_get (step, "network"), vn);
        print_tools (out, json_object_get (step, "tools"));
    }
    print_evidence (out, rec);
    if (stepsum)
        print_summary_lines (out, stepsum, opts);
    if (note && *note) {
        label (out, 4, "Record");
        fprintf (out, "%s\n", note);
    }
}

/* The record's evidence as the job view writes it: "Label: text", then
 * an item per line below it.
 */
static void print_evidence (FILE *out, json_t *rec)
{
    json_t *arr = tr_evidence_record (rec), *e, *it;
    size_t i, j;

    json_array_foreach (arr, i, e) {
        label (out, 4, tr_json_str_or (e, "label", ""));
        fprintf (out, "%s\n", tr_json_str_or (e, "text", ""));
        json_array_foreach (json_object_get (e, "items"), j, it)
            fprintf (out, "      %s\n", json_string_value (it));
    }
    json_decref (arr);
}

/* The note of the record at index idx of the caller's array, or NULL. */
static const char *note_of (json_t *notes, long long idx)
{
    char key[32];

    if (!notes)
        return NULL;
    snprintf (key, sizeof (key), "%lld", idx);
    return json_string_value (json_object_get (notes, key));
}


/* "[source, exact]" or "[source, sampled]". */
static const char *exactness (json_t *o)
{
    return json_is_true (json_object_get (o, "exact")) ? "exact" : "sampled";
}

/* One compact line per record of a multi-node step, with its note. */
static void print_node_row (FILE *out, json_t *step, json_t *row, json_t *notes)
{
    double el = tr_json_num_or (row, "elapsed_s", 0),
           cpu = tr_json_num_or (row, "cpu_total_s", 0);
    const char *note = note_of (notes, tr_json_int_or (row, "index", 0));
    char b1[32], b2[32];

    /* "Step S on NODE: STATE" as for a single-node step, so the line
     * reads (and greps) the same
     */
    fprintf (out, "      Step %s on %s", tr_json_str_or (step, "step_id", ""),
             tr_json_str_or (row, "node", ""));
    print_outcome (out, tr_json_str_or (row, "state", ""), row);
    fprintf (out, "; %s, CPU %.2f s", tr_units_duration (b1, sizeof (b1), el),
             cpu);
    if (has (row, "efficiency"))
        fprintf (out, " (%.1f%% of %g core%s)",
                 100.0 * tr_json_num_or (row, "efficiency", 0),
                 tr_json_num_or (row, "cores", 0),
                 tr_json_num_or (row, "cores", 0) == 1 ? "" : "s");
    else if (el > 0)
        fprintf (out, " (%.2f cores on average)", cpu / el);
    fprintf (out, ", memory peak %s",
             tr_units_bytes (b1, sizeof (b1),
                             tr_json_num_or (row, "mem_peak_bytes", 0)));
    if (tr_json_num_or (row, "mem_request_bytes", 0) > 0)
        fprintf (out, " of %s (%.1f%%)",
                 tr_units_bytes (b2, sizeof (b2),
                                 tr_json_num_or (row, "mem_request_bytes", 0)),
                 100.0 * tr_json_num_or (row, "mem_peak_bytes", 0)
                     / tr_json_num_or (row, "mem_request_bytes", 0));
    if (!json_is_true (json_object_get (row, "complete")))
        fprintf (out, ", incomplete");
    if (!json_is_true (json_object_get (row, "counted")))
        fprintf (out, " [another record of this node; not counted]");
    fprintf (out, "\n");
    if (note && *note) {
        label (out, 8, "Record");
        fprintf (out, "%s\n", note);
    }
}

/* "Storage I/O" and "Process I/O" lines of a merged step. */
static void print_io (FILE *out, json_t *io, long long nodes)
{
    json_t *proc = json_object_get (io, "proc");
    char b1[32], b2[32], b3[32], b4[32];

    if (!io)
        return;
    if (has (io, "nodes")
        && (has (io, "read_bytes") || has (io, "write_bytes"))) {
        label (out, 4, "Storage I/O");
        if (has (io, "read_bytes"))
            fprintf (out, "read %s%s",
                     tr_units_bytes (b1, sizeof (b1),
                                     tr_json_num_or (io, "read_bytes", 0)),
                     has (io, "write_bytes") ? ", " : "");
        if (has (io, "write_bytes"))
            fprintf (out, "written %s",
                     tr_units_bytes (b2, sizeof (b2),
                                     tr_json_num_or (io, "write_bytes", 0)));
        fprintf (out, " [%s] on %lld of %lld nodes\n",
                 tr_json_str_or (io, "source", ""),
                 tr_json_int_or (io, "nodes", 0), nodes);
    }
    if (proc) {
        label (out, 4, "Process I/O");
        fprintf (out,
                 "%s read and %s written by calls, %s read "
                 "from and %s written to storage [%s, %s] on %lld of %lld "
                 "nodes\n",
                 tr_units_bytes (b1, sizeof (b1),
                                 tr_json_num_or (proc, "rchar", 0)),
                 tr_units_bytes (b2, sizeof (b2),
                                 tr_json_num_or (proc, "wchar", 0)),
                 tr_units_bytes (b3, sizeof (b3),
                                 tr_json_num_or (proc, "read_bytes", 0)),
                 tr_units_bytes (b4, sizeof (b4),
                                 tr_json_num_or (proc, "write_bytes", 0)),
                 tr_json_str_or (proc, "source", ""), exactness (proc),
                 tr_json_int_or (proc, "nodes", 0), nodes);
    }
}

/* "Network" line of a merged step: the step's own traffic where it had
 * its own namespace.  Node-wide counters are not added up: the view's
 * notes say so once.
 */
static void print_network (FILE *out, json_t *net, struct view_notes *vn)
{
    long long own = tr_json_int_or (net, "namespace_nodes", 0);
    long long shared = tr_json_int_or (net, "node_scope_nodes", 0);
    char b1[32], b2[32];

    if (!net)
        return;
    if (own > 0 && (has (net, "rx_bytes") || has (net, "tx_bytes"))) {
        label (out, 4, "Network");
        fprintf (out,
                 "received %s, sent %s in the step's own namespace on %lld "
                 "node%s\n",
                 tr_units_bytes (b1, sizeof (b1),
                                 tr_json_num_or (net, "rx_bytes", 0)),
                 tr_units_bytes (b2, sizeof (b2),
                                 tr_json_num_or (net, "tx_bytes", 0)),
                 own, own == 1 ? "" : "s");
    }
    else if (own > 0) {
        label (out, 4, "Network");
        fprintf (out,
                 "no interface counters in the step's namespace on %lld "
                 "node%s\n",
                 own, own == 1 ? "" : "s");
    }
    if (shared > 0 && vn)
        vn->net_shared = true;
}

/* The few busiest programs of a merged step. */
#define VIEW_TOOLS 5

static void print_tools (FILE *out, json_t *all)
{
    /* the scheduler's own processes are not the user's tools; out of
     * memory, the view goes on without the line
     */
    json_t *tools = tr_stepsum_tools_shown (all);
    size_t n = json_array_size (tools), shown = 0, more = 0;
    char b[32];
    json_t *t;

    for (size_t i = 0; i < n; i++) {
        t = json_array_get (tools, i);
        if (shown == VIEW_TOOLS) {
            more++;
            continue;
        }
        if (shown++ == 0)
            label (out, 4, "Tools");
        fprintf (out, "%s%s x%lld", shown > 1 ? ", " : "",
                 tr_json_str_or (t, "name", ""),
                 tr_json_int_or (t, "count", 0));
        if (has (t, "cpu_s") && has (t, "peak_rss_bytes"))
            fprintf (out, " (%.2f s CPU, peak %s)",
                     tr_json_num_or (t, "cpu_s", 0),
                     tr_units_bytes (b, sizeof (b),
                                     tr_json_num_or (t, "peak_rss_bytes", 0)));
        else if (has (t, "cpu_s"))
            fprintf (out, " (%.2f s CPU)", tr_json_num_or (t, "cpu_s", 0));
        else if (has (t, "peak_rss_bytes"))
            fprintf (out, " (peak %s)",
                     tr_units_bytes (b, sizeof (b),
                                     tr_json_num_or (t, "peak_rss_bytes", 0)));
    }
    if (more)
        fprintf (out, ", and %zu more", more);
    if (shown)
        fprintf (out, "\n");
    json_decref (tools);
}

/* A step with records from several nodes: the totals, then one line per
 * node.
 */
static void print_merged (FILE *out,
                          json_t *recs,
                          json_t *step,
                          json_t *notes,
                          const tr_stepsum_t *sum,
                          const struct tr_report_view_opts *opts,
                          struct view_notes *vn)
{
    json_t *cpu = json_object_get (step, "cpu");
    json_t *mem = json_object_get (step, "memory");
    json_t *rows = json_object_get (step, "rows"), *row;
    long long reported = tr_json_int_or (step, "nodes_reported", 0);
    double elapsed = tr_json_num_or (step, "elapsed_s", 0);
    char b1[32], b2[32];
    bool complete, exact;
    size_t i;

    fprintf (out, "  Step %s on ", tr_json_str_or (step, "step_id", ""));
    if (has (step, "nodes_missing"))
        fprintf (out, "%lld of %lld nodes", reported,
                 tr_json_int_or (step, "nodes_expected", 0));
    else
        fprintf (out, "%lld node%s", reported, reported == 1 ? "" : "s");
    if (has (step, "step_name"))
        fprintf (out, " (%s)", tr_json_str_or (step, "step_name", ""));
    print_outcome (out, tr_json_str_or (step, "state", ""), step);
    fprintf (out, "\n");
    if (sum)
        print_cause (out, sum->cause, sum->cause_text);
    print_nodes (out, step);
    label (out, 4, "Elapsed");
    fprintf (out, "%s (the longest node)\n",
             tr_units_duration (b1, sizeof (b1), elapsed));
    if (!has (cpu, "total_s")) {
        /* no node measured anything (states.h: unfollowed records) */
        label (out, 4, "CPU time");
        fprintf (out, "unknown\n");
        label (out, 4, "Memory peak");
        fprintf (out, "unknown (%s)\n", TR_STATES_UNFOLLOWED);
        goto step_figures_done;
    }
    label (out, 4, "CPU time");
    fprintf (out, "%.2f s (user %.2f s, system %.2f s), all nodes [%s, %s]\n",
             tr_json_num_or (cpu, "total_s", 0),
             tr_json_num_or (cpu, "user_s", 0),
             tr_json_num_or (cpu, "system_s", 0),
             tr_json_str_or (cpu, "source", ""), exactness (cpu));
    if (has (cpu, "efficiency")) {
        label (out, 4, "CPU efficiency");
        fprintf (out, "%.1f%% of %g allocated core%s on all nodes\n",
                 100.0 * tr_json_num_or (cpu, "efficiency", 0),
                 tr_json_num_or (cpu, "cores", 0),
                 tr_json_num_or (cpu, "cores", 0) == 1 ? "" : "s");
    }
    else if (elapsed > 0) {
        label (out, 4, "CPU usage");
        fprintf (out, "%.2f cores on average\n",
                 tr_json_num_or (cpu, "total_s", 0) / elapsed);
    }

    /* A memory request holds per node: the biggest node is the one to
     * hold against it.
     */
    label (out, 4, "Memory peak");
    fprintf (out, "%s on %s, the largest node",
             tr_units_bytes (b1, sizeof (b1),
                             tr_json_num_or (mem, "peak_max_bytes", 0)),
             tr_json_str_or (mem, "peak_max_node", ""));
    if (tr_json_num_or (mem, "request_bytes", 0) > 0)
        fprintf (out, ", of %s requested per node (%.1f%%)",
                 tr_units_bytes (b2, sizeof (b2),
                                 tr_json_num_or (mem, "request_bytes", 0)),
                 100.0 * tr_json_num_or (mem, "peak_max_bytes", 0)
                     / tr_json_num_or (mem, "request_bytes", 0));
    fprintf (out, " [%s, %s]\n", tr_json_str_or (mem, "source", ""),
             exactness (mem));
    label (out, 4, "Memory summed");
    fprintf (out,
             "%s, the nodes' peaks added up (an upper bound: they need not "
             "coincide)\n",
             tr_units_bytes (b1, sizeof (b1),
                             tr_json_num_or (mem, "peak_sum_bytes", 0)));
    note_mem_def (vn, tr_json_str_or (mem, "definition", ""));
step_figures_done:
    if (tr_json_int_or (step, "tasks", 0)) {
        label (out, 4, "Tasks");
        fprintf (out, "%lld\n", tr_json_int_or (step, "tasks", 0));
    }
    print_io (out, json_object_get (step, "io"), reported);
    print_network (out, json_object_get (step, "network"), vn);
    print_tools (out, json_object_get (step, "tools"));
    if (sum)
        print_summary_lines (out, sum, opts);
    complete = json_is_true (json_object_get (step, "complete"));
    exact = json_is_true (json_object_get (step, "exact"));
    label (out, 4, "Records");
    fprintf (out, "%s; %s\n",
             complete ? "complete on every node" : "NOT complete on every node",
             exact ? "CPU and memory exact on every node"
                   : "some figures sampled");
    fprintf (out, "    Per node:\n");
    json_array_foreach (rows, i, row)
    {
        print_node_row (out, step, row, notes);
    }
    /* what each node's record says beyond its figures: its files, the
     * kernel's lines and whether it stalled, as a one-node step shows
     * them
     */
    json_array_foreach (rows, i, row)
    {
        json_t *rec =
            json_array_get (recs, (size_t)tr_json_int_or (row, "index", 0));
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (!rec || !(f = open_memstream (&text, &len)))
            continue;
        print_evidence (f, rec);
        if (fclose (f) == 0 && len > 0)
            fprintf (out, "    On %s:\n%s",
                     tr_json_str_or (json_object_get (rec, "identity"), "node",
                                     ""),
                     text);
        free (text);
    }
}

/* Job header: id, array, name, cluster and scheduler, then who ran it
 * and where it was charged.
 */
static void print_job (FILE *out, json_t *rec, bool first)
{
    json_t *id = json_object_get (rec, "identity");
    char u[32], g[32];

    fprintf (out, "%sJob %s", first ? "" : "\n",
             tr_json_str_or (id, "job_id", ""));
    /* each scheduler's own spelling: Slurm 7_3; PBS, Torque and LSF
     * name the element in the job id itself (7[3].srv, 42[3])
     */
    if (has (id, "array_job_id")
        && !strcmp (tr_json_str_or (id, "scheduler", ""), "slurm"))
        fprintf (out, " (array %s_%d)", tr_json_str_or (id, "array_job_id", ""),
                 (int)tr_json_int_or (id, "array_task_id", 0));
    else if (has (id, "array_job_id"))
        fprintf (out, " (element %d of array %s)",
                 (int)tr_json_int_or (id, "array_task_id", 0),
                 tr_json_str_or (id, "array_job_id", ""));
    if (has (id, "job_name"))
        fprintf (out, " \"%s\"", tr_json_str_or (id, "job_name", ""));
    fprintf (out, " on cluster %s (%s)\n", tr_json_str_or (id, "cluster", ""),
             tr_json_str_or (id, "scheduler", ""));
    label (out, 2, "User/Group");
    fprintf (out, "%s/%s (uid %lld",
             tr_stepsum_name_or_id (id, "user", "uid", u, sizeof (u)),
             tr_stepsum_name_or_id (id, "group", "gid", g, sizeof (g)),
             tr_json_int_or (id, "uid", 0));
    if (has (id, "gid"))
        fprintf (out, ", gid %lld", tr_json_int_or (id, "gid", 0));
    fprintf (out, ")");
    if (has (id, "account"))
        fprintf (out, ", account %s", tr_json_str_or (id, "account", ""));
    if (has (id, "partition"))
        fprintf (out, ", partition %s", tr_json_str_or (id, "partition", ""));
    fprintf (out, "\n");
}

/* The text of the listing's field name for row, as the listing writes
 * it (tr_stepsum_format), into buf; false when there is no such field
 * or its value is unknown.
 */
static bool field_text (const tr_stepsum_t *row,
                        const char *name,
                        char *buf,
                        size_t size)
{
    const tr_field_t *f = tr_stepsum_field (name);
    tr_strbuf_t sb = TR_STRBUF_INIT;
    const char *t;
    bool ok;

    if (!f || tr_stepsum_format (&sb, row, f, false) < 0)
        return false;
    t = tr_strbuf_str (&sb);
    ok = t && *t;
    snprintf (buf, size, "%s", ok ? t : "");
    tr_strbuf_free (&sb);
    return ok;
}

/* A duration as the header writes it: HH:MM:SS, or seconds under a
 * minute, where HH:MM:SS would round a short job's figures to nothing.
 */
static const char *duration (char *buf, size_t size, double s)
{
    if (s < 60) {
        snprintf (buf, size, "%.1f s", s);
        return buf;
    }
    return tr_units_duration (buf, size, s);
}

/* The job's figures, seff's: its state and exit code, cores, CPU,
 * memory and time against what it was granted, and how long it queued
 * (where the scheduler said when it was submitted),
 * from its job row (tr_stepsum_job_add), the row the listing prints for
 * the job.  A figure that is not known is left out, never shown as 0.
 */
static void print_job_figures (FILE *out, const tr_stepsum_t *job)
{
    char b1[64], b2[64], b3[64];
    double core_s = job->req_cores * job->elapsed_s;

    if (field_text (job, "state", b1, sizeof (b1))) {
        label (out, 2, "State");
        fprintf (out, "%s", b1);
        if (field_text (job, "exitcode", b2, sizeof (b2)))
            fprintf (out, " (exit code %s)", b2);
        fprintf (out, "\n");
    }
    if (job->req_cores > 0) {
        label (out, 2, "Cores");
        fprintf (out, "%g", job->req_cores);
        if (job->nodes > 0)
            fprintf (out, " on %g node%s", job->nodes,
                     job->nodes == 1 ? "" : "s");
        fprintf (out, "\n");
    }
    if (field_text (job, "cpueff", b1, sizeof (b1)) && core_s > 0) {
        label (out, 2, "CPU efficiency");
        fprintf (out, "%s of %s core-walltime (%s CPU)\n", b1,
                 duration (b2, sizeof (b2), core_s),
                 duration (b3, sizeof (b3), job->cpu_s));
    }
    else if (!isnan (job->cpu_s)) {
        label (out, 2, "CPU time");
        fprintf (out, "%s\n", duration (b1, sizeof (b1), job->cpu_s));
    }
    if (!isnan (job->mem_peak_bytes)) {
        label (out, 2, "Memory");
        fprintf (out, "%s peak",
                 tr_units_bytes (b1, sizeof (b1), job->mem_peak_bytes));
        if (job->req_mem_bytes > 0) {
            fprintf (out, " of %s requested",
                     tr_units_bytes (b2, sizeof (b2), job->req_mem_bytes));
            if (job->nodes > 1)
                fprintf (out, " per node");
            if (field_text (job, "memeff", b3, sizeof (b3)))
                fprintf (out, " (%s)", b3);
        }
        fprintf (out, "\n");
    }
    if (!isnan (job->elapsed_s)) {
        label (out, 2, "Time");
        fprintf (out, "%s", tr_units_duration (b1, sizeof (b1),
                                              job->elapsed_s));
        if (job->time_limit_s > 0) {
            fprintf (out, " of %s limit",
                     tr_units_duration (b2, sizeof (b2), job->time_limit_s));
            if (field_text (job, "timeeff", b3, sizeof (b3)))
                fprintf (out, " (%s)", b3);
        }
        else if (job->time_unlimited == 1)
            fprintf (out, ", no time limit");
        fprintf (out, "\n");
    }
    /* only when the scheduler said when the job was submitted */
    if (!isnan (job->queue_wait_s)
        && field_text (job, "queuewait", b1, sizeof (b1))) {
        label (out, 2, "Queue wait");
        fprintf (out, "%s\n", b1);
    }
}

/* The job row of the steps of steps that belong to the job of the step
 * at index first, into job.  Returns 0, or -1 with errno.
 */
static int job_row (json_t *recs,
                    json_t *steps,
                    size_t first,
                    tr_strpool_t *pool,
                    tr_stepsum_t *job)
{
    json_t *head = json_array_get (steps, first), *step;

    tr_stepsum_init (job);
    for (size_t i = first; (step = json_array_get (steps, i)); i++) {
        tr_stepsum_t sum;

        if (strcmp (tr_json_str_or (head, "job_id", ""),
                    tr_json_str_or (step, "job_id", ""))
            || strcmp (tr_json_str_or (head, "cluster", ""),
                       tr_json_str_or (step, "cluster", "")))
            break;
        if (tr_report_step_summary (recs, step, pool, &sum) < 0
            || tr_stepsum_job_add (job, &sum, pool) < 0)
            return -1;
    }
    return 0;
}

int tr_report_step_summary (json_t *recs,
                            json_t *step,
                            tr_strpool_t *pool,
                            tr_stepsum_t *sum)
{
    json_t *row;
    size_t i;
    bool first = true;

    json_array_foreach (json_object_get (step, "rows"), i, row)
    {
        json_t *rec =
            json_array_get (recs, (size_t)tr_json_int_or (row, "index", 0));
        tr_stepsum_t one;

        if (!json_is_true (json_object_get (row, "counted")))
            continue;
        if (tr_stepsum_from_record (first ? sum : &one, rec, "", "", pool)
                < 0
            || (!first && tr_stepsum_merge (sum, &one, pool) < 0))
            return -1;
        first = false;
    }
    if (first) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* Display columns of the UTF-8 text s[0..n): every character one. */
static size_t columns (const char *s, size_t n)
{
    size_t c = 0;

    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            c++;
    return c;
}

/* The byte length of the longest prefix of s[0..n) that fits in cols
 * columns, ending on a character boundary (at least one character).
 */
static size_t fit_bytes (const char *s, size_t n, size_t cols)
{
    size_t i = 0, c = 0;

    while (i < n) {
        size_t j = i + 1;

        while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80)
            j++;
        if (c + 1 > cols && i > 0)
            break;
        c++;
        i = j;
    }
    return i;
}

/* Where a line's continuation lines hang: under its value, the first
 * non-blank after its "label:", when that is no further than half the
 * width in; else four columns in from the line's own indentation.
 */
static size_t hang_of (const char *line, size_t len, size_t width)
{
    size_t indent = 0, i;

    while (indent < len && line[indent] == ' ')
        indent++;
    for (i = indent; i < len && line[i] != ':'; i++)
        ;
    if (i + 1 < len && line[i + 1] == ' ') {
        size_t v = i + 1;

        while (v < len && line[v] == ' ')
            v++;
        if (v < len && columns (line, v) <= width / 2)
            return columns (line, v);
    }
    return indent + 4 <= width / 2 ? indent + 4 : width / 2;
}

/* One line (without its newline) to out, wrapped at blanks to width
 * columns; a word longer than a line is cut.
 */
static void wrap_line_at (FILE *out,
                          const char *line,
                          size_t len,
                          size_t width,
                          size_t hang)
{
    size_t lead = 0, avail = width;
    const char *p = line;

    for (;;) {
        size_t take, rest = len - (size_t)(p - line);

        if (columns (p, rest) <= avail) {
            fprintf (out, "%*s%.*s\n", (int)lead, "", (int)rest, p);
            return;
        }
        /* break at the last blank within avail, the blanks dropped;
         * a word longer than the line (no blank but indentation before
         * it) is cut
         */
        take = fit_bytes (p, rest, avail);
        if (p[take] != ' ') {
            size_t b = take;

            while (b > 0 && p[b - 1] != ' ')
                b--;
            while (b > 0 && p[b - 1] == ' ')
                b--;
            if (b > 0)
                take = b;
        }
        else
            while (take > 0 && p[take - 1] == ' ')
                take--;
        if (take == 0)
            take = fit_bytes (p, rest, avail);
        fprintf (out, "%*s%.*s\n", (int)lead, "", (int)take, p);
        p += take;
        while ((size_t)(p - line) < len && *p == ' ')
            p++;
        if ((size_t)(p - line) >= len)
            return;
        lead = hang;
        avail = width > hang ? width - hang : 1;
    }
}

static void wrap_line (FILE *out, const char *line, size_t len, size_t width)
{
    wrap_line_at (out, line, len, width, hang_of (line, len, width));
}

int tr_report_wrap_hang (FILE *out, const char *line, int width, int hang)
{
    if (width < TR_REPORT_MIN_WIDTH)
        width = TR_REPORT_MIN_WIDTH;
    if (hang < 0 || hang > width / 2)
        hang = width / 2;
    wrap_line_at (out, line, strcspn (line, "\n"), (size_t)width,
                  (size_t)hang);
    return ferror (out) ? -1 : 0;
}

int tr_report_wrap (FILE *out, const char *text, size_t len, int width)
{
    const char *p = text, *end = text + len;

    if (width < TR_REPORT_MIN_WIDTH)
        width = TR_REPORT_MIN_WIDTH;
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

        wrap_line (out, p, n, (size_t)width);
        p += n + (nl ? 1 : 0);
    }
    return ferror (out) ? -1 : 0;
}

int tr_report_wrap_lines (FILE *out,
                          const char *text,
                          size_t len,
                          int width,
                          int hang)
{
    const char *p = text, *end = text + len;

    if (hang < 0)
        return tr_report_wrap (out, text, len, width);
    if (width < TR_REPORT_MIN_WIDTH)
        width = TR_REPORT_MIN_WIDTH;
    if (hang > width / 2)
        hang = width / 2;
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

        wrap_line_at (out, p, n, (size_t)width, (size_t)hang);
        p += n + (nl ? 1 : 0);
    }
    return ferror (out) ? -1 : 0;
}

int tr_report_width (int fd)
{
    struct winsize ws;
    const char *env = getenv ("COLUMNS");
    char *end;
    long c;

    if (isatty (fd) && ioctl (fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col < TR_REPORT_MIN_WIDTH ? TR_REPORT_MIN_WIDTH
                                               : ws.ws_col;
    if (env && *env) {
        errno = 0;
        c = strtol (env, &end, 10);
        if (!errno && !*end && c >= TR_REPORT_MIN_WIDTH
            && c <= TR_REPORT_MAX_WIDTH)
            return (int)c;
    }
    return TR_REPORT_DEFAULT_WIDTH;
}

/* The notes block at the end of the view: what applies to many steps,
 * said once.
 */
static void print_notes (FILE *out,
                         const struct view_notes *vn,
                         const struct tr_report_view_opts *opts)
{
    const char *const *fn = opts ? opts->footnotes : NULL;
    size_t n = json_array_size (vn->mem_defs);
    json_t *v;
    size_t i;

    if (!n && !vn->net_shared && !(fn && fn[0]))
        return;
    fprintf (out, "\nNotes\n");
    json_array_foreach (vn->mem_defs, i, v)
    {
        label (out, 2, "Memory means");
        fprintf (out, "%s\n", json_string_value (v));
    }
    if (vn->net_shared) {
        label (out, 2, "Network");
        fprintf (out, "where a step had no network namespace of its own, "
                      "its node's counters are node-wide: they are not "
                      "added up into the step (see each node's record)\n");
    }
    for (i = 0; fn && fn[i] && fn[i + 1]; i += 2) {
        label (out, 2, fn[i]);
        fprintf (out, "%s\n", fn[i + 1]);
    }
}

static int job_view (FILE *out,
                     json_t *recs,
                     json_t *notes,
                     const struct tr_report_view_opts *opts)
{
    json_t *steps, *step, *prev = NULL;
    struct view_notes vnotes = { .mem_defs = json_array () };
    struct view_notes *vn = &vnotes;
    tr_strpool_t *pool;
    size_t i;

    if (!vnotes.mem_defs)
        return -1;
    if (!(pool = tr_strpool_create ())) {
        json_decref (vnotes.mem_defs);
        return -1;
    }
    if (!(steps = tr_merge_steps (recs))) {
        json_decref (vnotes.mem_defs);
        tr_strpool_destroy (pool);
        return -1;
    }
    json_array_foreach (steps, i, step)
    {
        json_t *rows = json_object_get (step, "rows");
        long long idx = tr_json_int_or (json_array_get (rows, 0), "index", 0);
        json_t *rec = json_array_get (recs, (size_t)idx);
        tr_stepsum_t sum;
        /* without it (out of memory) the view goes on without the
         * summary lines
         */
        bool have = tr_report_step_summary (recs, step, pool, &sum) == 0;

        if (!prev
            || strcmp (tr_json_str_or (prev, "job_id", ""),
                       tr_json_str_or (step, "job_id", ""))
            || strcmp (tr_json_str_or (prev, "cluster", ""),
                       tr_json_str_or (step, "cluster", ""))) {
            tr_stepsum_t job;

            print_job (out, rec, !prev);
            /* without it (out of memory) the job's figures are left
             * out
             */
            if (job_row (recs, steps, i, pool, &job) == 0)
                print_job_figures (out, &job);
        }
        /* One node reads as it always did, every record in full when
         * the same node's record was given more than once: there is
         * nothing to add up.
         */
        if (tr_json_int_or (step, "nodes_reported", 0) == 1) {
            size_t n = json_array_size (rows);

            for (size_t r = 0; r < n; r++) {
                idx = tr_json_int_or (json_array_get (rows, r), "index", 0);
                print_step (out, json_array_get (recs, (size_t)idx),
                            r + 1 == n ? step : NULL, note_of (notes, idx),
                            r + 1 == n && have ? &sum : NULL, opts, vn);
            }
        }
        else
            print_merged (out, recs, step, notes, have ? &sum : NULL, opts,
                          vn);
        prev = step;
    }
    print_notes (out, vn, opts);
    json_decref (steps);
    json_decref (vnotes.mem_defs);
    tr_strpool_destroy (pool);
    return 0;
}

/* The view is rendered whole, then wrapped: the lines that callbacks
 * (next_time) print wrap as the view's own.
 */
int tr_report_job_view_ex (FILE *out,
                           json_t *recs,
                           json_t *notes,
                           const struct tr_report_view_opts *opts)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem;
    int rc, saved;

    if (json_array_size (recs) == 0)
        return 0;
    if (!(mem = open_memstream (&buf, &len)))
        return -1;
    rc = job_view (mem, recs, notes, opts);
    saved = errno;
    if (fclose (mem) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc == 0)
        rc = tr_report_wrap (out, buf, len,
                             opts && opts->width > 0
                                 ? opts->width
                                 : TR_REPORT_DEFAULT_WIDTH);
    else
        errno = saved;
    free (buf);
    return rc;
}

int tr_report_job_view (FILE *out, json_t *recs, json_t *notes)
{
    return tr_report_job_view_ex (out, recs, notes, NULL);
}

/* Live snapshots.  tracerd rewrites each running step's snapshot every
 * sampling.snapshot_interval seconds (at its next sample, so never more
 * often than the step's sampling interval), which makes the file's
 * modification time the moment its figures describe; a file that stops
 * changing means the daemon stopped updating it.  Snapshots are not
 * signed and each belongs to its step's user, so they are a convenience
 * view: the signed final record is the authority.
 */

/* How many of the last series points make "CPU now". */
#define LIVE_CPU_POINTS 5

/* Rewrites a snapshot may miss before it is stale. */
#define LIVE_STALE_FACTOR 3

tr_report_daemon_t tr_report_daemon_state (const char *socket_path,
                                           int timeout_ms)
{
    json_t *msg, *reply = NULL;
    tr_report_daemon_t st = TR_REPORT_DAEMON_UNKNOWN;

    if (!socket_path || !(msg = json_pack ("{s:s}", "op", "ping")))
        return TR_REPORT_DAEMON_UNKNOWN;
    if (tr_proto_request (socket_path, msg, timeout_ms, &reply, NULL) == 0
        || reply)
        st = TR_REPORT_DAEMON_RUNNING;
    else if (errno == ENOENT || errno == ECONNREFUSED)
        st = TR_REPORT_DAEMON_STOPPED;
    json_decref (reply);
    json_decref (msg);
    return st;
}

static json_t *live_error (const char *path, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* An entry for a file that cannot be used: {"file", "error"}.  Both are
 * for messages, and a file name need not be UTF-8: no check.
 */
static json_t *live_error (const char *path, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    json_t *e = json_object ();

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (!e
        || json_object_set_new (e, "file", json_string_nocheck (path)) < 0
        || json_object_set_new (e, "error", json_string_nocheck (text)) < 0) {
        json_decref (e);
        return NULL;
    }
    return e;
}

/* The file name tracerd gives a step's snapshot: its key with '@' for
 * '/' (no path-safe identifier contains either).
 */
static bool live_name_matches (json_t *rec, const char *name)
{
    json_t *id = json_object_get (rec, "identity");
    char want[600];
    int n = snprintf (want, sizeof (want), "%s@%s@%s@%s.json",
                      tr_json_str_or (id, "cluster", ""),
                      tr_json_str_or (id, "job_id", ""),
                      tr_json_str_or (id, "step_id", ""),
                      tr_json_str_or (id, "node", ""));

    return n > 0 && (size_t)n < sizeof (want) && !strcmp (want, name);
}

/* Why a snapshot age seconds old is stale, or NULL if it is not. */
static const char *live_stale (json_t *rec,
                               double age,
                               const struct tr_report_live_opts *opts,
                               char *buf,
                               size_t size)
{
    double every = opts->snapshot_interval_s;
    double interval =
        tr_json_num_or (json_object_get (rec, "collector"), "interval_s", 0);

    if (opts->daemon == TR_REPORT_DAEMON_STOPPED)
        return "tracerd is not running";
    if (every <= 0)
        return "snapshots are off (sampling.snapshot_interval is 0)";
    if (interval > every)
        every = interval;
    if (age <= LIVE_STALE_FACTOR * every)
        return NULL;
    snprintf (buf, size,
              "daemon not updating: written %.0f s ago, "
              "expected every %g s",
              age, every);
    return buf;
}

/* Is rec, read from dir/name owned by owner, a snapshot that may be
 * shown?  Returns 0, or -1 with the reason in why.
 */
static int live_check (json_t *rec,
                       const char *name,
                       uid_t owner,
                       char *why,
                       size_t size)
{
    json_int_t uid = json_integer_value (
        json_object_get (json_object_get (rec, "identity"), "uid"));

    if (strcmp (tr_json_str_or (rec, "kind", ""), "snapshot") != 0)
        snprintf (why, size, "a %s record, not a snapshot",
                  tr_json_str_or (rec, "kind", ""));
    else if (!live_name_matches (rec, name))
        snprintf (why, size,
                  "the file name does not match the record's "
                  "identity");
    /* Its user may edit their own snapshot, but cannot make one that
     * speaks for someone else.
     */
    else if (owner != 0 && (json_int_t)owner != uid)
        snprintf (why, size,
                  "owned by uid %d, not by root or the step's "
                  "user (uid %d)",
                  (int)owner, (int)uid);
    else
        return 0;
    return -1;
}

/* The entry of a usable snapshot written at 'written' (Unix seconds).
 * Steals rec.  Returns NULL with errno = ENOMEM.
 */
static json_t *live_ok (const char *path,
                        json_t *rec,
                        double written,
                        const struct tr_report_live_opts *opts)
{
    json_t *t = json_object_get (rec, "time");
    double age = opts->now > written ? opts->now - written : 0;
    char why[160];
    const char *stale;
    json_t *e;

    if (!has (t, "elapsed_s")) {
        double el = written - tr_json_num_or (t, "start_unix_ms", 0) / 1000.0;
        if (json_object_set_new (t, "elapsed_s", json_real (el > 0 ? el : 0))
            < 0) {
            json_decref (rec);
            errno = ENOMEM;
            return NULL;
        }
    }
    stale = live_stale (rec, age, opts, why, sizeof (why));
    e = json_pack ("{s:s s:I s:f s:b s:o}", "file", path, "written_unix_ms",
                   (json_int_t)llround (written * 1000), "age_s", age, "stale",
                   stale != NULL, "record", rec);
    if (e && stale
        && json_object_set_new (e, "stale_reason", json_string (stale)) < 0) {
        json_decref (e);
        e = NULL;
    }
    if (!e)
        errno = ENOMEM;
    return e;
}

/* One file of the live directory as an entry.  Returns NULL with errno 0
 * when the file is left out, NULL with errno ENOMEM on failure.
 */
static json_t *live_entry (int dfd,
                           const char *dir,
                           const char *name,
                           const struct tr_report_live_opts *opts)
{
    char path[4096], why[200];
    struct stat st;
    tr_error_t error;
    json_t *rec, *e;
    int n = snprintf (path, sizeof (path), "%s/%s", dir, name);

    if (n < 0 || (size_t)n >= sizeof (path))
        e = live_error (name, "%s/%s: path too long", dir, name);
    else if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) /* the step ended meanwhile */
            goto skip;
        e = live_error (path, "%s: %s", path, strerror (errno));
    }
    else if (!(rec = tr_record_load (path, &error))) {
        if (errno == ENOENT || (errno == EACCES && st.st_uid != geteuid ()))
            goto skip;
        e = live_error (path, "%s", tr_error_str (&error));
    }
    else if (live_check (rec, name, st.st_uid, why, sizeof (why)) < 0) {
        json_decref (rec);
        e = live_error (path, "%s: %s", path, why);
    }
    else
        return live_ok (path, rec,
                        (double)st.st_mtim.tv_sec
                            + (double)st.st_mtim.tv_nsec / 1e9,
                        opts);
    if (!e)
        errno = ENOMEM;
    return e;
skip:
    errno = 0;
    return NULL;
}

static int cmp_live (const void *a, const void *b)
{
    json_t *ea = *(json_t *const *)a, *eb = *(json_t *const *)b;
    json_t *ra = json_object_get (ea, "record");
    json_t *rb = json_object_get (eb, "record");

    if (ra && rb)
        return tr_merge_cmp_identity (ra, rb);
    if (!ra != !rb)
        return ra ? 1 : -1;
    return strcmp (tr_json_str_or (ea, "file", ""),
                   tr_json_str_or (eb, "file", ""));
}

/* Sort the array's entries in place with cmp_live. */
static int sort_entries (json_t *arr)
{
    size_t n = json_array_size (arr);
    json_t **v;

    if (n < 2)
        return 0;
    if (!(v = malloc (n * sizeof (*v))))
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref (json_array_get (arr, i));
    qsort (v, n, sizeof (*v), cmp_live);
    json_array_clear (arr);
    for (size_t i = 0; i < n; i++) {
        if (json_array_append_new (arr, v[i]) < 0) {
            while (++i < n)
                json_decref (v[i]);
            free (v);
            errno = ENOMEM;
            return -1;
        }
    }
    free (v);
    return 0;
}

json_t *tr_report_live_scan (const char *dir,
                             const struct tr_report_live_opts *opts,
                             tr_error_t *error)
{
    struct tr_report_live_opts o = *opts;
    json_t *out = NULL;
    struct dirent *de;
    DIR *d;
    int saved;

    if (o.now <= 0) {
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        o.now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    }
    if (!(d = opendir (dir))) {
        tr_errprintf (error, "%s: %s", dir, strerror (errno));
        return NULL;
    }
    if (!(out = json_array ()))
        goto nomem;
    while ((errno = 0, de = readdir (d))) {
        size_t len = strlen (de->d_name);
        json_t *e;

        /* temporaries of the atomic writes start with '.' */
        if (de->d_name[0] == '.' || len < 6
            || strcmp (de->d_name + len - 5, ".json") != 0)
            continue;
        if (!(e = live_entry (dirfd (d), dir, de->d_name, &o))) {
            if (errno == 0)
                continue;
            goto nomem;
        }
        if (json_array_append_new (out, e) < 0)
            goto nomem;
    }
    if (errno) {
        tr_errprintf (error, "%s: %s", dir, strerror (errno));
        goto fail;
    }
    if (sort_entries (out) < 0)
        goto nomem;
    closedir (d);
    return out;
nomem:
    errno = ENOMEM;
    tr_errprintf (error, "%s: out of memory", dir);
fail:
    saved = errno;
    closedir (d);
    json_decref (out);
    errno = saved;
    return NULL;
}

/* A borrowed reference to series.metrics.<metric>.<stat> (an array of
 * numbers), or NULL.
 */
static json_t *series_metric (json_t *rec, const char *metric, const char *stat)
{
    json_t *m = json_object_get (json_object_get (rec, "series"), "metrics");

    return json_object_get (json_object_get (m, metric), stat);
}

/* CPU cores in use: the mean of the last few series points, else the
 * average since the start; -1 when neither is known.
 */
static double live_cores (json_t *rec)
{
    json_t *mean = series_metric (rec, "cpu_cores", "mean");
    size_t n = json_array_size (mean), k = 0;
    double sum = 0, el;

    for (size_t i = n > LIVE_CPU_POINTS ? n - LIVE_CPU_POINTS : 0; i < n;
         i++, k++)
        sum += json_number_value (json_array_get (mean, i));
    if (k)
        return sum / (double)k;
    el = tr_json_num_or (json_object_get (rec, "time"), "elapsed_s", 0);
    if (el > 0)
        return tr_json_num_or (json_object_get (json_object_get (rec, "summar"
                                                                      "y"),
                                                "cpu"),
                               "total_s", 0)
               / el;
    return -1;
}

enum {
    COL_JOB,
    COL_STEP,
    COL_NAME,
    COL_USER,
    COL_NODE,
    COL_START,
    COL_ELAPSED,
    COL_CPU,
    COL_MEM,
    COL_PEAK,
    COL_PROCS,
    COL_AGE,
    NCOLS
};

static const char *live_head[NCOLS] = {
    "JOB",     "STEP", "NAME", "USER", "NODE",  "START",
    "ELAPSED", "CPU",  "MEM",  "PEAK", "PROCS", "AGE",
};

typedef char live_row_t[NCOLS][64];

static void live_cells (json_t *e, live_row_t row)
{
    json_t *rec = json_object_get (e, "record");
    json_t *id = json_object_get (rec, "identity");
    json_t *mem = json_object_get (json_object_get (rec, "summary"), "memory");
    json_t *np = series_metric (rec, "nprocs", "max");
    double cores = live_cores (rec);
    double req = tr_merge_request_cores (json_object_get (rec, "request"));
    double age = tr_json_num_or (e, "age_s", 0);
    time_t start = (time_t)(tr_json_num_or (json_object_get (rec, "time"),
                                            "start_unix_ms", 0)
                            / 1000);
    const char *name = has (id, "step_name")
                           ? tr_json_str_or (id, "step_name", "")
                           : tr_json_str_or (id, "job_name", "");
    struct tm tm;

    snprintf (row[COL_JOB], 64, "%s", tr_json_str_or (id, "job_id", ""));
    snprintf (row[COL_STEP], 64, "%s", tr_json_str_or (id, "step_id", ""));
    snprintf (row[COL_NAME], 64, "%s", *name ? name : "-");
    if (has (id, "user"))
        snprintf (row[COL_USER], 64, "%s", tr_json_str_or (id, "user", ""));
    else
        snprintf (row[COL_USER], 64, "%d",
                  (int)json_integer_value (json_object_get (id, "uid")));
    snprintf (row[COL_NODE], 64, "%s", tr_json_str_or (id, "node", ""));
    if (localtime_r (&start, &tm))
        strftime (row[COL_START], 64, "%Y-%m-%dT%H:%M:%S", &tm);
    else
        snprintf (row[COL_START], 64, "-");
    /* a running step's elapsed time is now less its start, whatever
     * its last reading said (a snapshot's elapsed_s is as old as the
     * snapshot, and the sampler's may lag its first samples)
     */
    {
        double start_ms = tr_json_num_or (json_object_get (rec, "time"),
                                          "start_unix_ms", 0);
        double el = tr_json_num_or (json_object_get (rec, "time"),
                                    "elapsed_s", 0) + age;
        struct timespec ts;

        if (start_ms > 0 && clock_gettime (CLOCK_REALTIME, &ts) == 0
            && ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 > start_ms)
            el = (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 - start_ms) / 1e3;
        tr_units_duration (row[COL_ELAPSED], 64, el);
    }
    if (cores < 0)
        snprintf (row[COL_CPU], 64, "-");
    else if (req > 0)
        snprintf (row[COL_CPU], 64, "%.2f/%g", cores, req);
    else
        snprintf (row[COL_CPU], 64, "%.2f", cores);
    if (has (mem, "current_bytes"))
        tr_units_bytes (row[COL_MEM], 64,
                        tr_json_num_or (mem, "current_bytes", 0));
    else
        snprintf (row[COL_MEM], 64, "-");
    tr_units_bytes (row[COL_PEAK], 64, tr_json_num_or (mem, "peak_bytes", 0));
    if (json_array_size (np))
        snprintf (row[COL_PROCS], 64, "%.0f",
                  json_number_value (
                      json_array_get (np, json_array_size (np) - 1)));
    else
        snprintf (row[COL_PROCS], 64, "-");
    if (age < 100)
        snprintf (row[COL_AGE], 64, "%.0fs", age);
    else
        tr_units_duration (row[COL_AGE], 64, age);
}

/* The notes of live entry e ("STALE: ...", "STALLED for ...") into buf,
 * each after two blanks; "" when none.
 */
static void live_flags (json_t *e, char *buf, size_t size)
{
    json_t *pg = json_object_get (json_object_get (e, "record"), "progress");
    char b[32];
    int n = 0;

    buf[0] = '\0';
    if (json_is_true (json_object_get (e, "stale")))
        n = snprintf (buf, size, "  STALE: %s",
                      tr_json_str_or (e, "stale_reason", ""));
    if (n < 0 || (size_t)n >= size)
        return;
    if (json_is_true (json_object_get (pg, "stalled")))
        snprintf (buf + n, size - (size_t)n, "  STALLED for %s",
                  tr_units_duration (b, sizeof (b),
                                     tr_json_num_or (pg, "stalled_s", 0)));
}

int tr_report_live_view (FILE *out, json_t *entries, int width)
{
    size_t n = json_array_size (entries), nrows = 0;
    live_row_t *rows;
    int w[NCOLS], total = 0;
    bool show[NCOLS];
    json_t **recs;

    if (!(rows = calloc (n + 1, sizeof (*rows)))
        || !(recs = calloc (n + 1, sizeof (*recs)))) {
        free (rows);
        errno = ENOMEM;
        return -1;
    }
    for (int c = 0; c < NCOLS; c++) {
        w[c] = (int)strlen (live_head[c]);
        show[c] = true;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get (entries, i);
        if (!json_object_get (e, "record"))
            continue;
        live_cells (e, rows[nrows]);
        recs[nrows] = e;
        for (int c = 0; c < NCOLS; c++)
            if ((int)strlen (rows[nrows][c]) > w[c])
                w[c] = (int)strlen (rows[nrows][c]);
        nrows++;
    }
    for (int c = 0; c < NCOLS; c++)
        total += w[c] + (c ? 2 : 0);
    /* ELAPSED says what START does, in less room; then every row is of
     * this node (the live directory is the node's own)
     */
    if (width > 0 && total > width) {
        show[COL_START] = false;
        total -= w[COL_START] + 2;
    }
    if (width > 0 && total > width)
        show[COL_NODE] = false;
    for (size_t i = 0; i <= nrows; i++) {
        char line[NCOLS * 66 + 8], flags[320] = "";
        size_t len = 0;
        const char *sep = "";

        for (int c = 0; c < NCOLS; c++) {
            const char *cell = i ? rows[i - 1][c] : live_head[c];
            int k;

            if (!show[c])
                continue;
            k = snprintf (line + len, sizeof (line) - len, "%s%-*s", sep,
                          c == NCOLS - 1 ? 0 : w[c], cell);
            if (k > 0 && (size_t)k < sizeof (line) - len)
                len += (size_t)k;
            sep = "  ";
        }
        if (i)
            live_flags (recs[i - 1], flags, sizeof (flags));
        if (!*flags || width <= 0
            || (int)(len + strlen (flags)) <= width)
            fprintf (out, "%s%s\n", line, flags);
        else {
            /* the note on a line of its own, under the row */
            fprintf (out, "%s\n", line);
            (void)tr_report_wrap_hang (out, flags, width, 4);
        }
    }
    free (rows);
    free (recs);
    return 0;
}
