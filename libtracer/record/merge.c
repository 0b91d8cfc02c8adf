/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Merged views of multi-node steps.  tracerd on each node writes its own
 * record of a step, measured against what that node was granted; a
 * reader wants the step as a whole too: the longest node's wall time,
 * the CPU of every node against every node's cores, the biggest node's
 * memory against the per-node request.  Totals are built only from
 * values the records have, so "not measured" never turns into zero, and
 * a node without a record stays visible (request.nodes against the
 * records present) instead of being merged away.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "states.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/json.h"

/* Node indices beyond this are not listed one by one (a corrupt
 * request.nodes must not make us allocate gigabytes).
 */
#define MAX_LISTED_NODES 65536

static json_int_t inum (json_t *o, const char *k)
{
    json_t *v = json_object_get (o, k);

    if (json_is_integer (v))
        return json_integer_value (v);
    return (json_int_t)json_number_value (v);
}

static bool has (json_t *o, const char *k)
{
    return json_object_get (o, k) != NULL;
}

static const char *ident (json_t *rec, const char *k)
{
    return tr_json_str_or (json_object_get (rec, "identity"), k, "");
}

/* Set o[k] = v, stealing v.  -1 when v is NULL (a failed constructor) or
 * the set fails, so constructors can be chained with ||.
 */
static int put (json_t *o, const char *k, json_t *v)
{
    if (!v)
        return -1;
    return json_object_set_new (o, k, v);
}

static bool is_digit (char c)
{
    return c >= '0' && c <= '9';
}

int tr_merge_natcmp (const char *a, const char *b)
{
    const char *sa, *sb;
    int tie = 0;

    a = a ? a : "";
    b = b ? b : "";
    sa = a;
    sb = b;
    while (*a && *b) {
        if (is_digit (*a) && is_digit (*b)) {
            const char *za = a, *zb = b, *da, *db;
            size_t la, lb;
            int c;

            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            for (da = a; is_digit (*a); a++)
                ;
            for (db = b; is_digit (*b); b++)
                ;
            /* Without leading zeros the longer run is the larger number,
             * and runs of equal length compare digit by digit; no
             * conversion, so no overflow on long ids.
             */
            la = (size_t)(a - da);
            lb = (size_t)(b - db);
            if (la != lb)
                return la < lb ? -1 : 1;
            if ((c = memcmp (da, db, la)))
                return c < 0 ? -1 : 1;
            if (!tie && da - za != db - zb)
                tie = da - za < db - zb ? -1 : 1;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    if (*a || *b)
        return *a ? 1 : -1;
    if (tie)
        return tie;
    return strcmp (sa, sb);
}

/* Slurm's special steps first, in the order they start, then the
 * numbered ones.
 */
static int step_rank (const char *s)
{
    if (!strcmp (s, "batch"))
        return 0;
    if (!strcmp (s, "extern"))
        return 1;
    if (!strcmp (s, "interactive"))
        return 2;
    if (is_digit (*s))
        return 3;
    return 4;
}

int tr_merge_stepcmp (const char *a, const char *b)
{
    int ra, rb;

    a = a ? a : "";
    b = b ? b : "";
    ra = step_rank (a);
    rb = step_rank (b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return tr_merge_natcmp (a, b);
}

const char *tr_merge_jobid (char *buf,
                            size_t size,
                            const char *scheduler,
                            const char *job_id,
                            const char *array_job_id,
                            double array_task_id,
                            const char *het_job_id,
                            double het_component)
{
    scheduler = scheduler ? scheduler : "";
    array_job_id = array_job_id ? array_job_id : "";
    het_job_id = het_job_id ? het_job_id : "";
    /* PBS, Torque and LSF name the element in its own id, which is what
     * -j takes; Slurm's task has a job id of its own that says nothing
     * of the array
     */
    if (*array_job_id && !isnan (array_task_id) && strcmp (scheduler, "lsf")
        && strspn (array_job_id, "0123456789") == strlen (array_job_id))
        snprintf (buf, size, "%s_%.0f", array_job_id, array_task_id);
    else if (*het_job_id && !isnan (het_component))
        snprintf (buf, size, "%s+%.0f", het_job_id, het_component);
    else
        snprintf (buf, size, "%s", job_id ? job_id : "");
    return buf;
}

/* A record's job id as shown (tr_merge_jobid). */
static const char *shown_jobid (json_t *rec, char *buf, size_t size)
{
    json_t *id = json_object_get (rec, "identity");
    json_t *task = json_object_get (id, "array_task_id");
    json_t *comp = json_object_get (id, "het_component");

    return tr_merge_jobid (buf, size, ident (rec, "scheduler"),
                           ident (rec, "job_id"), ident (rec, "array_job_id"),
                           json_is_number (task) ? json_number_value (task)
                                                 : NAN,
                           ident (rec, "het_job_id"),
                           json_is_number (comp) ? json_number_value (comp)
                                                 : NAN);
}

int tr_merge_cmp_identity (json_t *ra, json_t *rb)
{
    char ia[300], ib[300];
    int c;

    if ((c = strcmp (ident (ra, "cluster"), ident (rb, "cluster"))))
        return c;
    if ((c = tr_merge_natcmp (shown_jobid (ra, ia, sizeof (ia)),
                              shown_jobid (rb, ib, sizeof (ib)))))
        return c;
    if ((c = tr_merge_natcmp (ident (ra, "job_id"), ident (rb, "job_id"))))
        return c;
    if ((c = tr_merge_stepcmp (ident (ra, "step_id"), ident (rb, "step_id"))))
        return c;
    return tr_merge_natcmp (ident (ra, "node"), ident (rb, "node"));
}

double tr_merge_request_cores (json_t *request)
{
    if (has (request, "cpus_on_node"))
        return tr_json_num_or (request, "cpus_on_node", 0);
    if (has (request, "cpus_per_task") && has (request, "tasks_on_node"))
        return tr_json_num_or (request, "cpus_per_task", 0)
               * tr_json_num_or (request, "tasks_on_node", 0);
    return 0;
}

struct entry {
    json_t *rec;
    size_t idx; /* position in the caller's array */
};

/* Which of two records of the same node stands for it: the final one
 * (a snapshot is superseded by it), then the complete one, then the one
 * that ended last.
 */
static int cmp_preference (json_t *ra, json_t *rb)
{
    bool fa = !strcmp (tr_json_str_or (ra, "kind", ""), "final");
    bool fb = !strcmp (tr_json_str_or (rb, "kind", ""), "final");
    json_t *oa = json_object_get (ra, "outcome");
    json_t *ob = json_object_get (rb, "outcome");
    bool ca = json_is_true (json_object_get (oa, "complete"));
    bool cb = json_is_true (json_object_get (ob, "complete"));
    json_int_t ea = inum (json_object_get (ra, "time"), "end_unix_ms");
    json_int_t eb = inum (json_object_get (rb, "time"), "end_unix_ms");

    if (fa != fb)
        return fa ? -1 : 1;
    if (ca != cb)
        return ca ? -1 : 1;
    if (ea != eb)
        return ea > eb ? -1 : 1;
    return 0;
}

/* Records of one step side by side: by its job's own id, so that nodes
 * whose records disagree on the array still merge.
 */
static int cmp_entries (const void *a, const void *b)
{
    const struct entry *ea = a, *eb = b;
    json_t *ra = ea->rec, *rb = eb->rec;
    int c;

    if ((c = strcmp (ident (ra, "cluster"), ident (rb, "cluster")))
        || (c = tr_merge_natcmp (ident (ra, "job_id"), ident (rb, "job_id")))
        || (c = tr_merge_stepcmp (ident (ra, "step_id"), ident (rb, "step_id")))
        || (c = tr_merge_natcmp (ident (ra, "node"), ident (rb, "node"))))
        return c;
    if ((c = cmp_preference (ea->rec, eb->rec)))
        return c;
    return ea->idx < eb->idx ? -1 : ea->idx > eb->idx;
}

static bool same_step (json_t *ra, json_t *rb)
{
    return !strcmp (ident (ra, "cluster"), ident (rb, "cluster"))
           && !strcmp (ident (ra, "job_id"), ident (rb, "job_id"))
           && !strcmp (ident (ra, "step_id"), ident (rb, "step_id"));
}

/* A node's elapsed time: its own, else from start to end, else 0. */
static double rec_elapsed (json_t *t)
{
    if (has (t, "elapsed_s"))
        return tr_json_num_or (t, "elapsed_s", 0);
    if (has (t, "end_unix_ms")) {
        double d = (double)(inum (t, "end_unix_ms") - inum (t, "start_unix_ms"))
                   / 1000.0;
        return d > 0 ? d : 0;
    }
    return 0;
}

/* Accumulators over the members of dst.  Each creates its member on
 * first use, and does nothing when src lacks k, so a counter no node
 * reported stays absent.  Return 0, or -1 on ENOMEM.
 */
static int add_int (json_t *dst, json_t *src, const char *k)
{
    json_t *d = json_object_get (dst, k);

    if (!has (src, k))
        return 0;
    if (d)
        return json_integer_set (d, json_integer_value (d) + inum (src, k));
    return put (dst, k, json_integer (inum (src, k)));
}

static int add_real (json_t *dst, json_t *src, const char *k)
{
    json_t *d = json_object_get (dst, k);

    if (!has (src, k))
        return 0;
    if (d)
        return json_real_set (d,
                              json_real_value (d) + tr_json_num_or (src, k, 0));
    return put (dst, k, json_real (tr_json_num_or (src, k, 0)));
}

/* dst[k] = min (or max) of itself and src[k]. */
static int extreme_int (json_t *dst, json_t *src, const char *k, bool max)
{
    json_t *d = json_object_get (dst, k);
    json_int_t v = inum (src, k);

    if (!has (src, k))
        return 0;
    if (!d)
        return put (dst, k, json_integer (v));
    if (max ? v > json_integer_value (d) : v < json_integer_value (d))
        return json_integer_set (d, v);
    return 0;
}

/* dst[k][key] += src[k][key] for every key of the map src[k]. */
static int add_map (json_t *dst, json_t *src, const char *k)
{
    json_t *map = json_object_get (src, k), *d, *v;
    const char *key;

    if (!json_is_object (map))
        return 0;
    if (!(d = json_object_get (dst, k))
        && (put (dst, k, json_object ()) < 0
            || !(d = json_object_get (dst, k))))
        return -1;
    json_object_foreach (map, key, v)
    {
        if (add_int (d, map, key) < 0)
            return -1;
    }
    return 0;
}

/* dst[k] &&= src[k], for flags where one false one makes the whole
 * false; first says whether dst has seen no row yet.
 */
static int and_flag (json_t *dst, json_t *src, const char *k, bool first)
{
    bool v = json_is_true (json_object_get (src, k));

    if (!first && !json_is_true (json_object_get (dst, k)))
        v = false;
    return put (dst, k, json_boolean (v));
}

/* Add s to the array of distinct strings dst[k]; join_distinct() joins
 * it.
 */
static int add_distinct (json_t *dst, const char *k, const char *s)
{
    json_t *a = json_object_get (dst, k), *v;
    size_t i;

    if (!*s)
        return 0;
    if (!a
        && (put (dst, k, json_array ()) < 0 || !(a = json_object_get (dst, k))))
        return -1;
    json_array_foreach (a, i, v)
    {
        if (!strcmp (json_string_value (v), s))
            return 0;
    }
    return json_array_append_new (a, json_string (s));
}

/* Replace the array dst[k] of distinct strings by their "; "-join. */
static int join_distinct (json_t *dst, const char *k)
{
    json_t *a = json_object_get (dst, k), *v;
    tr_strbuf_t sb = TR_STRBUF_INIT;
    size_t i;
    int rc;

    if (!json_is_array (a))
        return 0;
    json_array_foreach (a, i, v)
    {
        if (tr_strbuf_printf (&sb, "%s%s", i ? "; " : "", json_string_value (v))
            < 0) {
            tr_strbuf_free (&sb);
            return -1;
        }
    }
    rc = put (dst, k, json_string (tr_strbuf_str (&sb)));
    tr_strbuf_free (&sb);
    return rc;
}

/* One more node's count of something (dst[k] += 1). */
static int bump (json_t *dst, const char *k)
{
    json_t *d = json_object_get (dst, k);

    if (d)
        return json_integer_set (d, json_integer_value (d) + 1);
    return put (dst, k, json_integer (1));
}

/* One node's summary.io into *io.  Device counters stay per node. */
static int merge_io (json_t **io, json_t *src)
{
    static const char *counters[] = { "read_bytes", "write_bytes", "read_ops",
                                      "write_ops" };
    static const char *proc_counters[] = {
        "rchar",
        "wchar",
        "syscr",
        "syscw",
        "read_bytes",
        "write_bytes",
        "cancelled_write_bytes",
    };
    json_t *proc = json_object_get (src, "proc");

    if (!*io && !(*io = json_object ()))
        return -1;
    /* source "none": the node had no device counters, and its zeros
     * mean "not measured"
     */
    if (strcmp (tr_json_str_or (src, "source", ""), "none")) {
        if (bump (*io, "nodes") < 0
            || add_distinct (*io, "source", tr_json_str_or (src, "source", ""))
                   < 0)
            return -1;
        for (size_t i = 0; i < sizeof (counters) / sizeof (counters[0]); i++)
            if (add_int (*io, src, counters[i]) < 0)
                return -1;
    }
    if (json_is_object (proc)) {
        json_t *p = json_object_get (*io, "proc");
        bool first = !p;

        if (!p
            && (put (*io, "proc", json_object ()) < 0
                || !(p = json_object_get (*io, "proc"))))
            return -1;
        if (bump (p, "nodes") < 0
            || add_distinct (p, "source", tr_json_str_or (proc, "source", ""))
                   < 0
            || and_flag (p, proc, "exact", first) < 0)
            return -1;
        for (size_t i = 0;
             i < sizeof (proc_counters) / sizeof (proc_counters[0]); i++)
            if (add_int (p, proc, proc_counters[i]) < 0)
                return -1;
    }
    return 0;
}

/* One node's summary.network into *net.  Only a step's own namespace
 * counts its own traffic; node-scoped and InfiniBand counters are the
 * node's, shared with whatever else ran there, so they are counted as
 * present but never added up.
 */
static int merge_network (json_t **net, json_t *src)
{
    static const char *counters[] = { "rx_bytes", "tx_bytes", "rx_packets",
                                      "tx_packets" };
    const char *scope = tr_json_str_or (src, "scope", "");
    bool own = !strcmp (scope, "namespace");
    json_t *iface;
    size_t i;

    if (!*net
        && (!(*net = json_object ())
            || put (*net, "scope", json_string (scope)) < 0
            || put (*net, "namespace_nodes", json_integer (0)) < 0
            || put (*net, "node_scope_nodes", json_integer (0)) < 0))
        return -1;
    if (strcmp (tr_json_str_or (*net, "scope", ""), scope)
        && put (*net, "scope", json_string ("mixed")) < 0)
        return -1;
    if (bump (*net, "nodes") < 0
        || bump (*net, own ? "namespace_nodes" : "node_scope_nodes") < 0
        || add_distinct (*net, "source", tr_json_str_or (src, "source", ""))
               < 0)
        return -1;
    if (!own)
        return 0;
    json_array_foreach (json_object_get (src, "interfaces"), i, iface)
    {
        for (size_t j = 0; j < sizeof (counters) / sizeof (counters[0]); j++)
            if (add_int (*net, iface, counters[j]) < 0)
                return -1;
    }
    return 0;
}

/* One tools[] entry into the object name -> merged entry. */
static int merge_tool (json_t *acc, json_t *t)
{
    static const char *sums[] = { "count", "read_bytes", "write_bytes" };
    static const char *rsums[] = { "cpu_s", "runq_wait_s" };
    const char *name = tr_json_str_or (t, "name", "");
    json_t *m = json_object_get (acc, name);
    bool first = !m;

    if (!m
        && (put (acc, name, json_object ()) < 0
            || !(m = json_object_get (acc, name))
            || put (m, "name", json_string (name)) < 0))
        return -1;
    for (size_t i = 0; i < sizeof (sums) / sizeof (sums[0]); i++)
        if (add_int (m, t, sums[i]) < 0)
            return -1;
    for (size_t i = 0; i < sizeof (rsums) / sizeof (rsums[0]); i++)
        if (add_real (m, t, rsums[i]) < 0)
            return -1;
    if (extreme_int (m, t, "peak_rss_bytes", true) < 0
        || extreme_int (m, t, "first_start_unix_ms", false) < 0
        || extreme_int (m, t, "last_end_unix_ms", true) < 0
        || add_map (m, t, "exit_codes") < 0 || add_map (m, t, "signals") < 0)
        return -1;
    /* exact only when every row says so; absent when no row says */
    if ((has (t, "exact") || has (m, "exact"))
        && and_flag (m, t, "exact", first) < 0)
        return -1;
    return bump (m, "nodes");
}

static int cmp_tools (const void *a, const void *b)
{
    json_t *ta = *(json_t *const *)a, *tb = *(json_t *const *)b;
    double ca = tr_json_num_or (ta, "cpu_s", 0),
           cb = tr_json_num_or (tb, "cpu_s", 0);

    if (ca != cb)
        return ca > cb ? -1 : 1;
    return strcmp (tr_json_str_or (ta, "name", ""),
                   tr_json_str_or (tb, "name", ""));
}

/* The merged tools object as an array, largest CPU first.  Returns a
 * new reference, or NULL on ENOMEM.
 */
static json_t *tools_array (json_t *acc)
{
    size_t n = json_object_size (acc), i = 0;
    json_t **v, *out, *t;
    const char *key;

    if (!(out = json_array ()))
        return NULL;
    if (n == 0)
        return out;
    if (!(v = malloc (n * sizeof (*v)))) {
        json_decref (out);
        return NULL;
    }
    json_object_foreach (acc, key, t)
    {
        (void)key;
        v[i++] = t;
    }
    qsort (v, n, sizeof (*v), cmp_tools);
    for (i = 0; i < n; i++) {
        if (json_array_append (out, v[i]) < 0) {
            json_decref (out);
            out = NULL;
            break;
        }
    }
    free (v);
    return out;
}

/* o.efficiency = cpu_s / (elapsed * cores), a fraction; left out when
 * the cores or the elapsed time are unknown.
 */
static int put_efficiency (json_t *o,
                           double cpu_s,
                           double elapsed,
                           double cores)
{
    if (cores <= 0 || elapsed <= 0)
        return 0;
    return put (o, "efficiency", json_real (cpu_s / (elapsed * cores)));
}

/* Copy src[k] to dst[k] when present. */
static int copy_opt (json_t *dst, json_t *src, const char *k)
{
    json_t *v = json_object_get (src, k);

    return v ? json_object_set (dst, k, v) : 0;
}

/* The row of one record.  Returns a new reference, or NULL on ENOMEM. */
static json_t *make_row (json_t *rec, size_t idx, bool counted)
{
    json_t *id = json_object_get (rec, "identity");
    json_t *req = json_object_get (rec, "request");
    json_t *sum = json_object_get (rec, "summary");
    json_t *cpu = json_object_get (sum, "cpu");
    json_t *mem = json_object_get (sum, "memory");
    json_t *oc = json_object_get (rec, "outcome");
    double el = rec_elapsed (json_object_get (rec, "time"));
    double cores = tr_merge_request_cores (req);
    json_t *tasks = json_object_get (oc, "tasks");
    json_int_t ntasks = (json_int_t)json_array_size (tasks);
    /* a record that followed no process measured nothing (states.h) */
    bool measured = !tr_states_unfollowed (rec);
    json_t *row;

    row =
        json_pack ("{s:I s:s s:b s:s s:b s:f s:I}", "index", (json_int_t)idx,
                   "node", tr_json_str_or (id, "node", ""), "counted", counted,
                   "state", tr_states_of (rec), "complete",
                   measured && json_is_true (json_object_get (oc, "complete")),
                   "elapsed_s", el, "tasks", ntasks);
    if (!row)
        return NULL;
    if ((measured
         && (put (row, "cpu_total_s",
                  json_real (tr_json_num_or (cpu, "total_s", 0)))
                 < 0
             || put (row, "mem_peak_bytes",
                     json_integer (inum (mem, "peak_bytes")))
                    < 0
             || put_efficiency (row, tr_json_num_or (cpu, "total_s", 0), el,
                                cores)
                    < 0))
        || (!measured
            && put (row, "reason", json_string (TR_STATES_UNFOLLOWED)) < 0)
        || copy_opt (row, id, "node_index") < 0
        || copy_opt (row, oc, "exit_code") < 0
        || copy_opt (row, oc, "signal") < 0
        || (cores > 0 && put (row, "cores", json_real (cores)) < 0)
        || (has (req, "mem_bytes")
            && put (row, "mem_request_bytes",
                    json_integer (inum (req, "mem_bytes")))
                   < 0)) {
        json_decref (row);
        return NULL;
    }
    return row;
}

/* Running totals of one step. */
struct totals {
    double user_s, system_s, total_s, cores, elapsed;
    bool cores_known, cpu_exact, mem_exact, complete, all_end, all_index;
    json_int_t start, end, peak_max, peak_sum, tasks, expected, exit_code,
        signal;
    bool have_start, have_peak, have_exit;
    json_int_t measured; /* records that followed a process */
    json_t *peak_rec;    /* the record of the biggest node */
    int worst;
    const char *state;
};

/* Add one counted record to the totals and to the step's members. */
static int add_record (json_t *step,
                       struct totals *t,
                       json_t *rec,
                       json_t **io,
                       json_t **net,
                       json_t **tools)
{
    json_t *req = json_object_get (rec, "request");
    json_t *tm = json_object_get (rec, "time");
    json_t *sum = json_object_get (rec, "summary");
    json_t *cpu = json_object_get (sum, "cpu");
    json_t *mem = json_object_get (sum, "memory");
    json_t *oc = json_object_get (rec, "outcome");
    double cores = tr_merge_request_cores (req), el = rec_elapsed (tm);
    json_int_t peak = inum (mem, "peak_bytes");
    int rank = tr_states_rank (tr_states_of (rec));
    json_t *v;
    size_t i;

    if (tr_states_unfollowed (rec)) {
        /* nothing measured: no figure, and the step is not whole */
        t->cpu_exact = t->mem_exact = t->complete = false;
        cpu = mem = NULL;
        peak = 0;
    }
    else
        t->measured++;
    t->user_s += tr_json_num_or (cpu, "user_s", 0);
    t->system_s += tr_json_num_or (cpu, "system_s", 0);
    t->total_s += tr_json_num_or (cpu, "total_s", 0);
    if (cores > 0)
        t->cores += cores;
    else
        t->cores_known = false;
    if (el > t->elapsed)
        t->elapsed = el;
    t->cpu_exact =
        t->cpu_exact && json_is_true (json_object_get (cpu, "exact"));
    t->mem_exact =
        t->mem_exact && json_is_true (json_object_get (mem, "exact"));
    t->complete =
        t->complete && json_is_true (json_object_get (oc, "complete"));
    if (has (tm, "start_unix_ms")
        && (!t->have_start || inum (tm, "start_unix_ms") < t->start)) {
        t->start = inum (tm, "start_unix_ms");
        t->have_start = true;
    }
    if (!has (tm, "end_unix_ms"))
        t->all_end = false;
    else if (inum (tm, "end_unix_ms") > t->end)
        t->end = inum (tm, "end_unix_ms");
    if (!has (json_object_get (rec, "identity"), "node_index"))
        t->all_index = false;
    if (has (req, "nodes") && inum (req, "nodes") > t->expected)
        t->expected = inum (req, "nodes");
    if (cpu && (!t->have_peak || peak > t->peak_max)) {
        t->peak_max = peak;
        t->peak_rec = rec;
        t->have_peak = true;
    }
    t->peak_sum += peak;
    t->tasks += (json_int_t)json_array_size (json_object_get (oc, "tasks"));
    if (rank > t->worst) {
        t->worst = rank;
        t->state = tr_states_of (rec);
    }
    if (has (oc, "exit_code")
        && (!t->have_exit || inum (oc, "exit_code") > t->exit_code)) {
        t->exit_code = inum (oc, "exit_code");
        t->have_exit = true;
    }
    if (!t->signal && inum (oc, "signal") > 0)
        t->signal = inum (oc, "signal");

    if (!has (step, "step_name")
        && has (json_object_get (rec, "identity"), "step_name")
        && copy_opt (step, json_object_get (rec, "identity"), "step_name") < 0)
        return -1;
    if (!cpu)
        ; /* an unfollowed record names no source */
    else if (add_distinct (step, "cpu_source",
                           tr_json_str_or (cpu, "source", ""))
                 < 0
             || add_distinct (step, "mem_source",
                              tr_json_str_or (mem, "source", ""))
                    < 0
             || add_distinct (step, "mem_definition",
                              tr_json_str_or (mem, "definition", ""))
                    < 0)
        return -1;
    json_array_foreach (json_object_get (oc, "tasks"), i, v)
    {
        if (json_array_append (json_object_get (step, "task_list"), v) < 0)
            return -1;
    }
    if (json_is_object (json_object_get (sum, "io"))
        && merge_io (io, json_object_get (sum, "io")) < 0)
        return -1;
    if (json_is_object (json_object_get (sum, "network"))
        && merge_network (net, json_object_get (sum, "network")) < 0)
        return -1;
    if (json_is_array (json_object_get (rec, "tools"))) {
        if (!*tools && !(*tools = json_object ()))
            return -1;
        json_array_foreach (json_object_get (rec, "tools"), i, v)
        {
            if (merge_tool (*tools, v) < 0)
                return -1;
        }
    }
    return 0;
}

/* missing_node_indices: the indices below expected that no counted row
 * has.  Returns a new reference, or NULL on ENOMEM.
 */
static json_t *missing_indices (json_t *rows, json_int_t expected)
{
    bool *seen = calloc ((size_t)expected, sizeof (*seen));
    json_t *out = json_array (), *row;
    size_t i;

    if (!seen || !out)
        goto nomem;
    json_array_foreach (rows, i, row)
    {
        json_int_t ni = inum (row, "node_index");
        if (json_is_true (json_object_get (row, "counted")) && ni >= 0
            && ni < expected)
            seen[ni] = true;
    }
    for (json_int_t k = 0; k < expected; k++)
        if (!seen[k] && json_array_append_new (out, json_integer (k)) < 0)
            goto nomem;
    free (seen);
    return out;
nomem:
    free (seen);
    json_decref (out);
    return NULL;
}

/* The members that summarise the totals. */
static int put_totals (json_t *step, struct totals *t, json_t *rows)
{
    json_int_t reported =
        (json_int_t)json_array_size (json_object_get (step, "nodes"));
    json_t *cpu, *mem;
    json_t *peak_req = json_object_get (t->peak_rec, "request");

    if (put (step, "nodes_reported", json_integer (reported)) < 0
        || (t->expected > 0
            && put (step, "nodes_expected", json_integer (t->expected)) < 0)
        || (t->expected > reported
            && put (step, "nodes_missing",
                    json_integer (t->expected - reported))
                   < 0))
        return -1;
    if (t->expected > reported && t->all_index
        && t->expected <= MAX_LISTED_NODES
        && put (step, "missing_node_indices",
                missing_indices (rows, t->expected))
               < 0)
        return -1;
    if (put (step, "start_unix_ms", json_integer (t->have_start ? t->start : 0))
            < 0
        || (t->all_end && put (step, "end_unix_ms", json_integer (t->end)) < 0)
        || put (step, "elapsed_s", json_real (t->elapsed)) < 0)
        return -1;

    /* no record measured anything: the figures are unknown, not 0 */
    cpu = t->measured ? json_pack ("{s:f s:f s:f s:b}", "user_s", t->user_s,
                                   "system_s", t->system_s, "total_s",
                                   t->total_s, "exact", t->cpu_exact)
                      : json_pack ("{s:b}", "exact", 0);
    if (put (step, "cpu", cpu) < 0
        || put (cpu, "source",
                json_incref (json_object_get (step, "cpu_source")))
               < 0
        || join_distinct (cpu, "source") < 0
        || (t->cores_known && t->cores > 0
            && put (cpu, "cores", json_real (t->cores)) < 0)
        || (t->cores_known && t->measured
            && put_efficiency (cpu, t->total_s, t->elapsed, t->cores) < 0))
        return -1;

    mem = t->measured
              ? json_pack ("{s:I s:s s:I s:b}", "peak_max_bytes", t->peak_max,
                           "peak_max_node", ident (t->peak_rec, "node"),
                           "peak_sum_bytes", t->peak_sum, "exact", t->mem_exact)
              : json_pack ("{s:b}", "exact", 0);
    if (put (step, "memory", mem) < 0
        || (has (peak_req, "mem_bytes")
            && put (mem, "request_bytes",
                    json_integer (inum (peak_req, "mem_bytes")))
                   < 0)
        || put (mem, "source",
                json_incref (json_object_get (step, "mem_source")))
               < 0
        || join_distinct (mem, "source") < 0
        || put (mem, "definition",
                json_incref (json_object_get (step, "mem_definition")))
               < 0
        || join_distinct (mem, "definition") < 0)
        return -1;
    /* the working arrays were only for the joins above */
    json_object_del (step, "cpu_source");
    json_object_del (step, "mem_source");
    json_object_del (step, "mem_definition");

    if (put (step, "tasks", json_integer (t->tasks)) < 0
        || put (step, "state", json_string (t->state)) < 0
        || (t->have_exit
            && put (step, "exit_code", json_integer (t->exit_code)) < 0)
        || (t->signal && put (step, "signal", json_integer (t->signal)) < 0)
        || put (step, "complete", json_boolean (t->complete)) < 0
        || put (step, "exact", json_boolean (t->cpu_exact && t->mem_exact)) < 0)
        return -1;
    return 0;
}

/* The step object of the n records v (one step, sorted by node, the
 * record that stands for a node first).  Returns a new reference, or
 * NULL on ENOMEM.
 */
static json_t *merge_step (struct entry *v, size_t n)
{
    struct totals t = {
        .cores_known = true,
        .cpu_exact = true,
        .mem_exact = true,
        .complete = true,
        .all_end = true,
        .all_index = true,
        .worst = -1,
        .state = "",
    };
    json_t *io = NULL, *net = NULL, *tools = NULL, *rows, *nodes;
    json_t *step =
        json_pack ("{s:s s:s s:s s:[] s:[] s:[] s:[] s:[] s:[]}", "cluster",
                   ident (v[0].rec, "cluster"), "job_id",
                   ident (v[0].rec, "job_id"), "step_id",
                   ident (v[0].rec, "step_id"), "nodes", "rows", "task_list",
                   "cpu_source", "mem_source", "mem_definition");

    if (!step)
        return NULL;
    rows = json_object_get (step, "rows");
    nodes = json_object_get (step, "nodes");
    for (size_t i = 0; i < n; i++) {
        const char *node = ident (v[i].rec, "node");
        bool counted = i == 0 || strcmp (node, ident (v[i - 1].rec, "node"));

        if (json_array_append_new (rows, make_row (v[i].rec, v[i].idx, counted))
            < 0)
            goto nomem;
        if (!counted)
            continue;
        if (json_array_append_new (nodes, json_string (node)) < 0
            || add_record (step, &t, v[i].rec, &io, &net, &tools) < 0)
            goto nomem;
    }
    if (put_totals (step, &t, rows) < 0)
        goto nomem;
    /* a step whose nodes measured no I/O at all has no io member */
    if (io && !has (io, "nodes") && !has (io, "proc")) {
        json_decref (io);
        io = NULL;
    }
    if (io
        && (join_distinct (io, "source") < 0
            || join_distinct (json_object_get (io, "proc"), "source") < 0
            || json_object_set (step, "io", io) < 0))
        goto nomem;
    if (net
        && (join_distinct (net, "source") < 0
            || json_object_set (step, "network", net) < 0))
        goto nomem;
    if (tools && put (step, "tools", tools_array (tools)) < 0)
        goto nomem;
    json_decref (io);
    json_decref (net);
    json_decref (tools);
    return step;
nomem:
    json_decref (io);
    json_decref (net);
    json_decref (tools);
    json_decref (step);
    return NULL;
}

/* A step's records: entries [lo, hi) of the sorted array; shown, its
 * job's id as shown (tr_merge_jobid) by any record of the job that knows
 * its array: a step whose record lacks it (an extern step's, when the
 * controller did not answer) goes with its job's other steps.
 */
struct group {
    const struct entry *first;
    size_t lo, hi;
    char shown[128];
};

static int cmp_groups (const void *a, const void *b)
{
    const struct group *ga = a, *gb = b;
    json_t *ra = ga->first->rec, *rb = gb->first->rec;
    int c;

    if ((c = strcmp (ident (ra, "cluster"), ident (rb, "cluster")))
        || (c = tr_merge_natcmp (ga->shown, gb->shown))
        || (c = tr_merge_natcmp (ident (ra, "job_id"), ident (rb, "job_id")))
        || (c = tr_merge_stepcmp (ident (ra, "step_id"), ident (rb, "step_"
                                                                    "id"))))
        return c;
    return (ga->lo > gb->lo) - (ga->lo < gb->lo);
}

/* Each group's shown id: of groups [i, j) of one job (adjacent, sorted
 * by cmp_entries), the first record's that names an array or a
 * heterogeneous job, else the first record's.
 */
static void share_shown (const struct entry *v, struct group *g, size_t ng)
{
    for (size_t i = 0, j; i < ng; i = j) {
        json_t *known = NULL;

        for (j = i; j < ng
                    && !strcmp (ident (g[j].first->rec, "cluster"),
                                ident (g[i].first->rec, "cluster"))
                    && !strcmp (ident (g[j].first->rec, "job_id"),
                                ident (g[i].first->rec, "job_id"));
             j++)
            for (size_t k = g[j].lo; !known && k < g[j].hi; k++)
                if (*ident (v[k].rec, "array_job_id")
                    || *ident (v[k].rec, "het_job_id"))
                    known = v[k].rec;
        for (size_t k = i; k < j; k++)
            shown_jobid (known ? known : g[i].first->rec, g[k].shown,
                         sizeof (g[k].shown));
    }
}

json_t *tr_merge_steps (json_t *recs)
{
    size_t n = json_array_size (recs), lo, hi, ng = 0;
    struct entry *v = NULL;
    struct group *g = NULL;
    json_t *out;

    if (!json_is_array (recs))
        goto inval;
    for (size_t i = 0; i < n; i++)
        if (!json_is_object (json_array_get (recs, i)))
            goto inval;
    if (!(out = json_array ()))
        goto nomem;
    if (n == 0)
        return out;
    if (!(v = malloc (n * sizeof (*v))) || !(g = malloc (n * sizeof (*g)))) {
        json_decref (out);
        goto nomem;
    }
    for (size_t i = 0; i < n; i++) {
        v[i].rec = json_array_get (recs, i);
        v[i].idx = i;
    }
    qsort (v, n, sizeof (*v), cmp_entries);
    for (lo = 0; lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && same_step (v[lo].rec, v[hi].rec); hi++)
            ;
        g[ng++] = (struct group){ .first = &v[lo], .lo = lo, .hi = hi };
    }
    /* steps in the order they are shown in: an array's tasks by index */
    share_shown (v, g, ng);
    qsort (g, ng, sizeof (*g), cmp_groups);
    for (size_t k = 0; k < ng; k++) {
        if (json_array_append_new (out,
                                   merge_step (v + g[k].lo, g[k].hi - g[k].lo))
            < 0) {
            json_decref (out);
            goto nomem;
        }
    }
    free (g);
    free (v);
    return out;
inval:
    errno = EINVAL;
    return NULL;
nomem:
    free (g);
    free (v);
    errno = ENOMEM;
    return NULL;
}
