/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Recommendations and regressions (recommend.c) written for people and
 * for the tools they paste them into: an aligned table, #SBATCH lines, a
 * Nextflow config block, a Snakemake profile's set-resources mapping and
 * JSON.  Everything here reads the documented JSON, so these formatters
 * see exactly what --json users see.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "recommend.h"
#include "report.h"
#include "when.h"

#define MIB 1048576.0

/* Table cells: columns, and bytes for each (a longer group name is cut). */
#define NCOLS 9
#define CELL 160

static const char *jstr (json_t *o, const char *k)
{
    const char *s = json_string_value (json_object_get (o, k));
    return s ? s : "";
}

static double jnum (json_t *o, const char *k)
{
    json_t *j = json_object_get (o, k);
    return json_is_number (j) ? json_number_value (j) : NAN;
}

/* The array o->member, or NULL with errno = EINVAL. */
static json_t *array_of (json_t *recs, const char *member)
{
    json_t *g = json_object_get (recs, member);

    if (!json_is_array (g))
        errno = EINVAL;
    return json_is_array (g) ? g : NULL;
}

static int finish (FILE *out)
{
    if (fflush (out) || ferror (out)) {
        errno = EIO;
        return -1;
    }
    return 0;
}

/* The name a workflow knows group i by (the part before the last '/')
 * into name; false when group i is not the one to print for that name:
 * "extern" steps are not the user's code, and of several steps of one
 * name the batch step (the one that holds the job's allocation) is
 * printed, else the first.
 */
static bool wf_pick (json_t *groups, size_t i, char *name, size_t size)
{
    const char *g = jstr (json_array_get (groups, i), "group");
    const char *slash = strrchr (g, '/');
    size_t len = slash ? (size_t)(slash - g) : strlen (g);
    bool batch = slash && !strcmp (slash, "/batch");

    if (len == 0 || len >= size || (slash && !strcmp (slash, "/extern")))
        return false;
    memcpy (name, g, len);
    name[len] = '\0';
    for (size_t j = 0; j < json_array_size (groups) && !batch; j++) {
        const char *o = jstr (json_array_get (groups, j), "group");
        const char *os = o + len;

        if (j == i || strncmp (o, g, len) || *os != '/' || strchr (os + 1, '/'))
            continue;
        if (!strcmp (os, "/batch") || (j < i && strcmp (os, "/extern")))
            return false;
    }
    return true;
}

/* s in quotes q, with q and \ escaped (Groovy and YAML). */
static void put_quoted (FILE *out, const char *s, char q)
{
    fputc (q, out);
    for (; *s; s++) {
        if (*s == q || *s == '\\')
            fputc ('\\', out);
        fputc (*s, out);
    }
    fputc (q, out);
}

/* The recommended values of a group (NAN when unknown). */
struct wf_rec {
    double cpus, mem, time;
};

static void sbatch_group (FILE *out, const struct wf_rec *r)
{
    char buf[32];

    if (!isnan (r->cpus))
        fprintf (out, "#SBATCH --cpus-per-task=%.0f\n", r->cpus);
    if (!tr_recommend_mem_text (buf, sizeof (buf), r->mem))
        fprintf (out, "#SBATCH --mem=%s\n", buf);
    if (!tr_recommend_time_text (buf, sizeof (buf), r->time))
        fprintf (out, "#SBATCH --time=%s\n", buf);
}

/* Nextflow's memory ("512 MB", "2 GB": its units are powers of 1024)
 * and duration ("5m", "1h 15m", "1d 2h", as its Duration prints them).
 */
static void nextflow_group (FILE *out, const struct wf_rec *r, const char *name)
{
    double mib = ceil (r->mem / MIB);

    fputs ("    withName: ", out);
    put_quoted (out, name, '\'');
    fputs (" {\n", out);
    if (!isnan (r->cpus))
        fprintf (out, "        cpus = %.0f\n", r->cpus);
    if (!isnan (mib) && fmod (mib, 1024) == 0)
        fprintf (out, "        memory = '%.0f GB'\n", mib / 1024);
    else if (!isnan (mib))
        fprintf (out, "        memory = '%.0f MB'\n", mib);
    if (!isnan (r->time)) {
        long long m = (long long)ceil (r->time / 60);
        long long part[] = { m / 1440, m / 60 % 24, m % 60 };
        const char *unit = "dhm";
        const char *sep = "";

        fputs ("        time = '", out);
        for (int i = 0; i < 3; i++)
            if (part[i] || (i == 2 && m == 0)) {
                fprintf (out, "%s%lld%c", sep, part[i], unit[i]);
                sep = " ";
            }
        fputs ("'\n", out);
    }
    fputs ("    }\n", out);
}

/* Snakemake's SLURM executor resources: mem_mb (MiB, as Slurm's --mem),
 * runtime (minutes), cpus_per_task.  Rule names are identifiers; any
 * other name is quoted.
 */
static void snakemake_group (FILE *out,
                             const struct wf_rec *r,
                             const char *name)
{
    static const char *plain = "abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

    fputs ("  ", out);
    if (strspn (name, plain) == strlen (name))
        fputs (name, out);
    else
        put_quoted (out, name, '"');
    fputs (":\n", out);
    if (!isnan (r->cpus))
        fprintf (out, "    cpus_per_task: %.0f\n", r->cpus);
    if (!isnan (r->mem))
        fprintf (out, "    mem_mb: %.0f\n", ceil (r->mem / MIB));
    if (!isnan (r->time))
        fprintf (out, "    runtime: %.0f\n", ceil (r->time / 60));
}

enum wf { WF_SBATCH, WF_NEXTFLOW, WF_SNAKEMAKE };

static int print_wf (FILE *out, json_t *recs, enum wf wf)
{
    static const char *head[] = { "", "process {\n", "set-resources:\n" };
    static const char *comment[] = { "# ", "    // ", "  # " };
    json_t *groups = array_of (recs, "groups"), *g;
    char name[256];
    size_t i, n = 0;

    if (!groups)
        return -1;
    json_array_foreach (groups, i, g)
    {
        json_t *runs = json_object_get (g, "runs");
        double used = jnum (runs, "used"), total = jnum (runs, "total");
        struct wf_rec r = { jnum (json_object_get (g, "cpus"), "recommend"),
                            jnum (json_object_get (g, "mem"), "recommend"),
                            jnum (json_object_get (g, "time"), "recommend") };

        if (!wf_pick (groups, i, name, sizeof (name)))
            continue;
        if (n++ == 0)
            fputs (head[wf], out);
        else if (wf == WF_SBATCH)
            fputc ('\n', out);
        fprintf (out, "%sgroup %s (%.0f", comment[wf], jstr (g, "group"), used);
        if (used != total)
            fprintf (out, " of %.0f runs used", total);
        else
            fputs (used == 1 ? " run" : " runs", out);
        fprintf (out, ", %s confidence)\n", jstr (g, "confidence"));
        if (wf == WF_SBATCH)
            sbatch_group (out, &r);
        else if (wf == WF_NEXTFLOW)
            nextflow_group (out, &r, name);
        else
            snakemake_group (out, &r, name);
    }
    if (wf == WF_NEXTFLOW)
        fputs (n ? "}\n" : "process {\n}\n", out);
    if (wf == WF_SNAKEMAKE && !n)
        fputs ("set-resources: {}\n", out);
    return finish (out);
}

int tr_recommend_print_sbatch (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_SBATCH);
}

int tr_recommend_print_nextflow (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_NEXTFLOW);
}

int tr_recommend_print_snakemake (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_SNAKEMAKE);
}

int tr_recommend_print_json (FILE *out, json_t *recs)
{
    if (!array_of (recs, "groups"))
        return -1;
    if (json_dumpf (recs, out,
                    JSON_INDENT (2) | JSON_SORT_KEYS | JSON_REAL_PRECISION (15))
        || fputc ('\n', out) == EOF) {
        errno = EIO;
        return -1;
    }
    return finish (out);
}

enum cell { C_NUM, C_MEM, C_TIME, C_DURATION, C_BYTES };

/* A table cell: v written as kind says (C_NUM with prec digits, or %g
 * for prec < 0), "-" when unknown.
 */
static void cell (char *buf, double v, enum cell kind, int prec)
{
    snprintf (buf, CELL, "-");
    if (isnan (v))
        return;
    if (kind == C_NUM && prec < 0)
        snprintf (buf, CELL, "%g", v);
    else if (kind == C_NUM)
        snprintf (buf, CELL, "%.*f", prec, v);
    else if (kind == C_MEM)
        (void)tr_recommend_mem_text (buf, CELL, v);
    else if (kind == C_TIME)
        (void)tr_recommend_time_text (buf, CELL, v);
    else if (kind == C_DURATION)
        tr_when_duration (buf, CELL, v);
    else
        tr_report_bytes (buf, CELL, v);
}

typedef void (*fill_f) (json_t *item, char (*c)[CELL]);

/* The items of arr as rows of NCOLS cells (written by fill) under head,
 * every column but the last padded to its widest cell: one pass for the
 * widths, one to print, so nothing is allocated.
 */
static void print_cells (FILE *out,
                         json_t *arr,
                         const char *const *head,
                         fill_f fill)
{
    char c[NCOLS][CELL];
    int w[NCOLS] = { 0 };

    for (int pass = 0; pass < 2; pass++) {
        for (size_t r = 0; r <= json_array_size (arr); r++) {
            if (r > 0)
                fill (json_array_get (arr, r - 1), c);
            for (int k = 0; k < NCOLS && r == 0; k++)
                snprintf (c[k], CELL, "%s", head[k]);
            for (int k = 0; k < NCOLS; k++) {
                int len = (int)strlen (c[k]);

                if (pass == 0)
                    w[k] = len > w[k] ? len : w[k];
                else if (k + 1 < NCOLS)
                    fprintf (out, "%-*s  ", w[k], c[k]);
                else
                    fprintf (out, "%s\n", c[k]);
            }
        }
    }
}

static void fill_rec (json_t *g, char (*c)[CELL])
{
    static const char *res[] = { "cpus", "mem", "time" };
    static const char *sav[] = { "core_hours", "gib_hours", "money" };
    json_t *runs = json_object_get (g, "runs");
    char a[32], b[32];

    snprintf (c[0], CELL, "%s", jstr (g, "group"));
    snprintf (c[1], CELL, "%.0f/%.0f", jnum (runs, "used"),
              jnum (runs, "total"));
    snprintf (c[2], CELL, "%s", jstr (g, "confidence"));
    for (int r = 0; r < 3; r++) {
        json_t *o = json_object_get (g, res[r]);

        cell (a, jnum (o, "request"), (enum cell)r, -1);
        if (json_is_true (json_object_get (o, "unlimited")))
            snprintf (a, sizeof (a), "%s", TR_STEPSUM_UNLIMITED);
        cell (b, jnum (o, "recommend"), (enum cell)r, -1);
        snprintf (c[3 + r], CELL, "%s -> %s", a, b);
        cell (c[6 + r], jnum (json_object_get (g, "savings"), sav[r]), C_NUM,
              2);
    }
}

int tr_recommend_print_table (FILE *out, json_t *recs)
{
    const char *head[] = { "GROUP", "RUNS",   "CONF",  "CPUS", "MEM",
                           "TIME",  "CORE-H", "GIB-H", "MONEY" };
    json_t *groups = array_of (recs, "groups"), *g, *n;
    char money[64] = "";
    size_t i, k;

    if (!groups)
        return -1;
    /* the currency of the first group with money, as "MONEY(EUR)" */
    json_array_foreach (groups, i, g)
    {
        const char *cur = jstr (json_object_get (g, "savings"), "currency");

        if (*cur && !*money)
            snprintf (money, sizeof (money), "MONEY(%s)", cur);
    }
    if (*money)
        head[8] = money;
    print_cells (out, groups, head, fill_rec);
    json_array_foreach (groups, i, g)
    {
        json_array_foreach (json_object_get (g, "notes"), k, n)
        {
            fprintf (out, "%s: %s\n", jstr (g, "group"), json_string_value (n));
        }
    }
    return finish (out);
}

static void fill_reg (json_t *f, char (*c)[CELL])
{
    const char *m = jstr (f, "metric");
    size_t len = strlen (m);
    enum cell kind =
        len > 2 && !strcmp (m + len - 2, "_s") ? C_DURATION : C_BYTES;

    snprintf (c[0], CELL, "%s", jstr (f, "group"));
    snprintf (c[1], CELL, "%s", jstr (f, "job_id"));
    snprintf (c[2], CELL, "%s", jstr (f, "step_id"));
    snprintf (c[3], CELL, "%s", m);
    cell (c[4], jnum (f, "value"), kind, 0);
    cell (c[5], jnum (f, "median"), kind, 0);
    cell (c[6], jnum (f, "ratio"), C_NUM, 2);
    cell (c[7], jnum (f, "z"), C_NUM, 1);
    cell (c[8], jnum (f, "history"), C_NUM, 0);
}

int tr_recommend_print_regressions (FILE *out, json_t *regs)
{
    static const char *const head[] = { "GROUP",  "JOB",   "STEP",
                                        "METRIC", "VALUE", "MEDIAN",
                                        "RATIO",  "Z",     "HISTORY" };
    json_t *arr = array_of (regs, "regressions");

    if (!arr)
        return -1;
    if (json_array_size (arr))
        print_cells (out, arr, head, fill_reg);
    return finish (out);
}
