/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Text views of records.  Records are grouped by job, then listed per
 * step and node: a multi-node step has one record per node and each is
 * shown against what that node was granted, the bug class that makes
 * seff wrong for multi-task and multi-node jobs.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *tr_report_bytes (char *buf, size_t size, double bytes)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int u = 0;

    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf (buf, size, "%.0f B", bytes);
    else
        snprintf (buf, size, "%.1f %s", bytes, units[u]);
    return buf;
}

const char *tr_report_duration (char *buf, size_t size, double seconds)
{
    long s = (long)llround (seconds < 0 ? 0 : seconds);
    long days = s / 86400;

    if (days)
        snprintf (buf, size, "%ld-%02ld:%02ld:%02ld", days, (s / 3600) % 24,
                  (s / 60) % 60, s % 60);
    else
        snprintf (buf, size, "%02ld:%02ld:%02ld", s / 3600, (s / 60) % 60,
                  s % 60);
    return buf;
}

static const char *str (json_t *o, const char *k)
{
    const char *s = json_string_value (json_object_get (o, k));
    return s ? s : "";
}

static double num (json_t *o, const char *k)
{
    return json_number_value (json_object_get (o, k));
}

static bool has (json_t *o, const char *k)
{
    return json_object_get (o, k) != NULL;
}

struct entry {
    json_t *rec;
    size_t idx;   /* position in the caller's array, for the notes */
};

static int cmp_records (const void *a, const void *b)
{
    json_t *ra = ((const struct entry *)a)->rec;
    json_t *rb = ((const struct entry *)b)->rec;
    json_t *ia = json_object_get (ra, "identity");
    json_t *ib = json_object_get (rb, "identity");
    int c;

    if ((c = strcmp (str (ia, "cluster"), str (ib, "cluster"))))
        return c;
    {
        /* numeric job ids in numeric order */
        const char *ja = str (ia, "job_id"), *jb = str (ib, "job_id");
        size_t la = strlen (ja), lb = strlen (jb);
        if (la != lb)
            return la < lb ? -1 : 1;
        if ((c = strcmp (ja, jb)))
            return c;
    }
    if ((c = strcmp (str (ia, "step_id"), str (ib, "step_id"))))
        return c;
    return strcmp (str (ia, "node"), str (ib, "node"));
}

static void print_step (FILE *out, json_t *rec, const char *note)
{
    json_t *id = json_object_get (rec, "identity");
    json_t *req = json_object_get (rec, "request");
    json_t *sum = json_object_get (rec, "summary");
    json_t *cpu = json_object_get (sum, "cpu");
    json_t *mem = json_object_get (sum, "memory");
    json_t *t = json_object_get (rec, "time");
    json_t *oc = json_object_get (rec, "outcome");
    double elapsed = num (t, "elapsed_s");
    double cores = 0;
    char b1[32], b2[32];
    size_t ntasks = json_array_size (json_object_get (oc, "tasks"));

    fprintf (out, "  Step %s on %s", str (id, "step_id"), str (id, "node"));
    if (has (id, "step_name"))
        fprintf (out, " (%s)", str (id, "step_name"));
    fprintf (out, ": %s", str (oc, "state"));
    if (has (oc, "exit_code"))
        fprintf (out, ", exit code %d",
                 (int)json_integer_value (json_object_get (oc, "exit_code")));
    if (has (oc, "signal"))
        fprintf (out, ", signal %d",
                 (int)json_integer_value (json_object_get (oc, "signal")));
    fprintf (out, "\n");
    fprintf (out, "    Elapsed:       %s\n",
             tr_report_duration (b1, sizeof (b1), elapsed));

    if (has (req, "cpus_on_node"))
        cores = num (req, "cpus_on_node");
    else if (has (req, "cpus_per_task") && has (req, "tasks_on_node"))
        cores = num (req, "cpus_per_task") * num (req, "tasks_on_node");
    fprintf (out, "    CPU time:      %.2f s (user %.2f s, system %.2f s)",
             num (cpu, "total_s"), num (cpu, "user_s"),
             num (cpu, "system_s"));
    fprintf (out, " [%s%s]\n", str (cpu, "source"),
             json_is_true (json_object_get (cpu, "exact")) ? ", exact"
                                                           : ", sampled");
    if (cores > 0 && elapsed > 0)
        fprintf (out, "    CPU efficiency: %.1f%% of %g allocated core%s\n",
                 100.0 * num (cpu, "total_s") / (elapsed * cores), cores,
                 cores == 1 ? "" : "s");
    else if (elapsed > 0)
        fprintf (out, "    CPU usage:     %.2f cores on average\n",
                 num (cpu, "total_s") / elapsed);

    fprintf (out, "    Memory peak:   %s",
             tr_report_bytes (b1, sizeof (b1), num (mem, "peak_bytes")));
    if (has (req, "mem_bytes") && num (req, "mem_bytes") > 0)
        fprintf (out, " of %s requested (%.1f%%)",
                 tr_report_bytes (b2, sizeof (b2), num (req, "mem_bytes")),
                 100.0 * num (mem, "peak_bytes") / num (req, "mem_bytes"));
    fprintf (out, " [%s%s]\n", str (mem, "source"),
             json_is_true (json_object_get (mem, "exact")) ? ", exact"
                                                           : ", sampled");
    fprintf (out, "    Memory means:  %s\n", str (mem, "definition"));
    if (ntasks)
        fprintf (out, "    Tasks:         %zu\n", ntasks);
    if (note && *note)
        fprintf (out, "    Record:        %s\n", note);
}

int tr_report_job_view (FILE *out, json_t *recs, json_t *notes)
{
    size_t n = json_array_size (recs);
    struct entry *v;
    const char *last_job = NULL, *last_cluster = NULL;

    if (n == 0)
        return 0;
    if (!(v = malloc (n * sizeof (*v))))
        return -1;
    for (size_t i = 0; i < n; i++) {
        v[i].rec = json_array_get (recs, i);
        v[i].idx = i;
    }
    qsort (v, n, sizeof (*v), cmp_records);
    for (size_t i = 0; i < n; i++) {
        json_t *id = json_object_get (v[i].rec, "identity");
        char key[32];
        const char *note;

        if (!last_job || strcmp (last_job, str (id, "job_id"))
            || strcmp (last_cluster, str (id, "cluster"))) {
            fprintf (out, "%sJob %s", i ? "\n" : "", str (id, "job_id"));
            if (has (id, "array_job_id"))
                fprintf (out, " (array %s_%d)", str (id, "array_job_id"),
                         (int)json_integer_value (
                             json_object_get (id, "array_task_id")));
            if (has (id, "job_name"))
                fprintf (out, " \"%s\"", str (id, "job_name"));
            fprintf (out, "\n  Cluster %s, scheduler %s, user %s (uid %d)",
                     str (id, "cluster"), str (id, "scheduler"),
                     has (id, "user") ? str (id, "user") : "?",
                     (int)json_integer_value (json_object_get (id, "uid")));
            if (has (id, "account"))
                fprintf (out, ", account %s", str (id, "account"));
            if (has (id, "partition"))
                fprintf (out, ", partition %s", str (id, "partition"));
            fprintf (out, "\n");
            last_job = str (id, "job_id");
            last_cluster = str (id, "cluster");
        }
        snprintf (key, sizeof (key), "%zu", v[i].idx);
        note = notes ? json_string_value (json_object_get (notes, key))
                     : NULL;
        print_step (out, v[i].rec, note);
    }
    free (v);
    return 0;
}
