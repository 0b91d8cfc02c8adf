/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Recommendations and regressions (recommend.c) written for people and
 * for the tools they paste them into: an aligned table, #SBATCH, #PBS and
 * #BSUB lines, a Nextflow config block, a Snakemake 7 or 8 profile's
 * set-resources and JSON.  Everything here reads the documented JSON, so these formatters
 * see exactly what --json users see.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"
#include "recommend_print.h"
#include "report.h"
#include "libtracer/record/when.h"
#include "libtracer/util/units.h"
#include "libtracer/util/json.h"

#define MIB 1048576.0

/* Table cells: columns, and bytes for each (a longer group name is cut). */
#define NCOLS 9
#define CELL 160

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
    const char *g = tr_json_str_or (json_array_get (groups, i), "group", "");
    const char *slash = strrchr (g, '/');
    size_t len = slash ? (size_t)(slash - g) : strlen (g);
    bool batch = slash && !strcmp (slash, "/batch");

    if (len == 0 || len >= size || (slash && !strcmp (slash, "/extern")))
        return false;
    memcpy (name, g, len);
    name[len] = '\0';
    for (size_t j = 0; j < json_array_size (groups) && !batch; j++) {
        const char *o =
            tr_json_str_or (json_array_get (groups, j), "group", "");
        const char *os = o + len;

        if (j == i || strncmp (o, g, len) || *os != '/' || strchr (os + 1, '/'))
            continue;
        if (!strcmp (os, "/batch") || (j < i && strcmp (os, "/extern")))
            return false;
    }
    return true;
}

/* A group name in a comment line: a line break (which would end the
 * comment and let a job's name write configuration) as '?'.
 */
static void put_comment (FILE *out, const char *s)
{
    for (; *s; s++)
        fputc (*s == '\n' || *s == '\r' ? '?' : *s, out);
}

/* The recommended values of a group (NAN when unknown). */
struct wf_rec {
    double cpus, mem, time;
};

/* The options of scheduler form f, each a job script line after
 * prefix ("#SBATCH", "#PBS", "#BSUB").
 */
static void directives (FILE *out,
                        enum tr_sizing_form f,
                        const char *prefix,
                        const struct wf_rec *r)
{
    struct tr_sizing_args a;
    int rc;

    if (f == TR_SIZING_PBS)
        rc = tr_sizing_args_pbs (&a, r->cpus, r->mem, r->time);
    else if (f == TR_SIZING_LSF)
        rc = tr_sizing_args_lsf (&a, r->cpus, r->mem, r->time);
    else
        rc = tr_sizing_args_slurm (&a, r->cpus, r->mem, r->time);
    for (size_t i = 0; rc == 0 && i < a.n; i++)
        fprintf (out, "%s %s\n", prefix, a.arg[i]);
}

/* Nextflow's memory ("512 MB", "2 GB": its units are powers of 1024)
 * and duration ("5m", "1h 15m", "1d 2h", as its Duration prints them).
 */
static void nextflow_group (FILE *out, const struct wf_rec *r, const char *name)
{
    double mib = ceil (r->mem / MIB);

    /* The group is the job name's process part: Nextflow's grid
     * executors write the task name with ':' (and ' ', '/', ...) as '_',
     * so NFCORE_RNASEQ:RNASEQ:STAR_ALIGN ran as
     * nf-NFCORE_RNASEQ_RNASEQ_STAR_ALIGN_(tag).  Which '_' was a ':' is
     * lost; "[_:]" in place of each matches the fully qualified name,
     * which withName (a regular expression matched against the whole
     * simple and fully qualified name) is tried on.
     */
    fputs ("    withName: '", out);
    for (const char *p = name; *p; p++)
        if (*p == '_')
            fputs ("[_:]", out);
        else
            fputc (*p, out);
    fputs ("' {\n", out);
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

/* Snakemake resources, as its SLURM executor (7's --slurm, 8's plugin)
 * and a cluster command ("sbatch -c {resources.cpus_per_task} ...")
 * read them: cpus_per_task, mem_mb (MiB, as Slurm's --mem), runtime
 * (minutes).  Snakemake 7 takes a profile's set-resources as a list of
 * RULE:RESOURCE=VALUE, as on its command line (a mapping there is
 * "Unparseable"); Snakemake 8 takes that list as it is, or a mapping of
 * rules to resources, which it turns into that list.
 */
static void snakemake_group (FILE *out,
                             const struct wf_rec *r,
                             const char *name,
                             bool v8)
{
    const char *res[] = { "cpus_per_task", "mem_mb", "runtime" };
    double v[] = { r->cpus, ceil (r->mem / MIB), ceil (r->time / 60) };

    if (v8)
        fprintf (out, "  %s:\n", name);
    for (int i = 0; i < 3; i++) {
        if (isnan (v[i]))
            continue;
        if (v8)
            fprintf (out, "    %s: %.0f\n", res[i], v[i]);
        else
            fprintf (out, "  - \"%s:%s=%.0f\"\n", name, res[i], v[i]);
    }
}

enum wf { WF_SBATCH, WF_NEXTFLOW, WF_SNAKEMAKE, WF_SNAKEMAKE8, WF_PBS,
          WF_LSF };

/* A process or rule name: an identifier (what Nextflow and Snakemake
 * accept, and what needs no quoting in their configurations).
 */
static bool identifier (const char *s)
{
    static const char *word = "abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

    return *s && !(*s >= '0' && *s <= '9') && strspn (s, word) == strlen (s);
}

/* Whether group g goes into a workflow manager's configuration: only a
 * group that ran as one of its processes or rules.
 */
static bool wf_fits (enum wf wf, json_t *g, const char *name)
{
    const char *w = tr_json_str_or (g, "workflow", "");

    if (wf == WF_NEXTFLOW)
        return !strcmp (w, "nextflow") && identifier (name);
    if (wf == WF_SNAKEMAKE || wf == WF_SNAKEMAKE8)
        return !strcmp (w, "snakemake") && identifier (name);
    return true;
}

static int print_wf (FILE *out, json_t *recs, enum wf wf)
{
    static const char *head[] = { "", "process {\n", "set-resources:\n",
                                  "set-resources:\n", "", "" };
    static const char *comment[] = { "# ", "    // ", "  # ", "  # ", "# ",
                                     "# " };
    static const char *what[] = { "", "a Nextflow process",
                                  "a Snakemake rule", "a Snakemake rule",
                                  "", "" };
    json_t *groups = array_of (recs, "groups"), *g;
    char name[256];
    size_t i, n = 0;

    if (!groups)
        return -1;
    if (wf == WF_SNAKEMAKE)
        fputs ("# Snakemake 7 and 8 profile (config.yaml)\n", out);
    else if (wf == WF_SNAKEMAKE8)
        fputs ("# Snakemake 8 profile (config.v8+.yaml); "
               "Snakemake 7 refuses it\n", out);
    json_array_foreach (groups, i, g)
    {
        json_t *runs = json_object_get (g, "runs");
        double used = tr_json_num (runs, "used"),
               total = tr_json_num (runs, "total");
        struct wf_rec r = { tr_json_num (json_object_get (g, "cpus"), "recommen"
                                                                      "d"),
                            tr_json_num (json_object_get (g, "mem"), "recommen"
                                                                     "d"),
                            tr_json_num (json_object_get (g, "time"), "recommen"
                                                                      "d") };

        if (!wf_pick (groups, i, name, sizeof (name)))
            continue;
        if (!wf_fits (wf, g, name)) {
            fprintf (out, "%sleft out: group ", wf == WF_NEXTFLOW ? "// "
                                                                   : "# ");
            put_comment (out, tr_json_str_or (g, "group", ""));
            fprintf (out, " (not %s)\n", what[wf]);
            continue;
        }
        if (n++ == 0)
            fputs (head[wf], out);
        else if (wf == WF_SBATCH || wf == WF_PBS || wf == WF_LSF)
            fputc ('\n', out);
        fprintf (out, "%sgroup ", comment[wf]);
        put_comment (out, tr_json_str_or (g, "group", ""));
        fprintf (out, " (%.0f", used);
        if (used != total)
            fprintf (out, " of %.0f runs used", total);
        else
            fputs (used == 1 ? " run" : " runs", out);
        fprintf (out, ", %s confidence)\n",
                 tr_json_str_or (g, "confidence", ""));
        if (wf == WF_SBATCH)
            directives (out, TR_SIZING_SLURM, "#SBATCH", &r);
        else if (wf == WF_PBS)
            directives (out, TR_SIZING_PBS, "#PBS", &r);
        else if (wf == WF_LSF)
            directives (out, TR_SIZING_LSF, "#BSUB", &r);
        else if (wf == WF_NEXTFLOW)
            nextflow_group (out, &r, name);
        else
            snakemake_group (out, &r, name, wf == WF_SNAKEMAKE8);
    }
    if (wf == WF_NEXTFLOW)
        fputs (n ? "}\n" : "process {\n}\n", out);
    if (wf == WF_SNAKEMAKE && !n)
        fputs ("set-resources: []\n", out);
    if (wf == WF_SNAKEMAKE8 && !n)
        fputs ("set-resources: {}\n", out);
    return finish (out);
}

int tr_recommend_print_sbatch (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_SBATCH);
}

int tr_recommend_print_pbs (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_PBS);
}

int tr_recommend_print_lsf (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_LSF);
}

int tr_recommend_print_nextflow (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_NEXTFLOW);
}

int tr_recommend_print_snakemake (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_SNAKEMAKE);
}

int tr_recommend_print_snakemake8 (FILE *out, json_t *recs)
{
    return print_wf (out, recs, WF_SNAKEMAKE8);
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
        tr_units_duration (buf, CELL, v);
    else
        tr_units_bytes (buf, CELL, v);
}

typedef void (*fill_f) (json_t *item, char (*c)[CELL]);

/* The items of arr as rows of the first ncols of NCOLS cells (written by
 * fill) under head, every column but the last padded to its widest
 * cell: one pass for the widths, one to print (none when out is NULL),
 * so nothing is allocated.  Returns the table's width in columns.
 */
static int print_cells (FILE *out,
                        json_t *arr,
                        const char *const *head,
                        fill_f fill,
                        int ncols)
{
    char c[NCOLS][CELL];
    int w[NCOLS] = { 0 }, total = 0;

    for (int pass = 0; pass < (out ? 2 : 1); pass++) {
        for (size_t r = 0; r <= json_array_size (arr); r++) {
            if (r > 0)
                fill (json_array_get (arr, r - 1), c);
            for (int k = 0; k < ncols && r == 0; k++)
                snprintf (c[k], CELL, "%s", head[k]);
            for (int k = 0; k < ncols; k++) {
                int len = (int)strlen (c[k]);

                if (pass == 0)
                    w[k] = len > w[k] ? len : w[k];
                else if (k + 1 < ncols)
                    fprintf (out, "%-*s  ", w[k], c[k]);
                else
                    fprintf (out, "%s\n", c[k]);
            }
        }
    }
    for (int k = 0; k < ncols; k++)
        total += w[k] + (k ? 2 : 0);
    return total;
}

static void fill_rec (json_t *g, char (*c)[CELL])
{
    static const char *res[] = { "cpus", "mem", "time" };
    static const char *sav[] = { "core_hours", "gib_hours", "money" };
    json_t *runs = json_object_get (g, "runs");
    char a[32], b[32];

    snprintf (c[0], CELL, "%s", tr_json_str_or (g, "group", ""));
    snprintf (c[1], CELL, "%.0f/%.0f", tr_json_num (runs, "used"),
              tr_json_num (runs, "total"));
    snprintf (c[2], CELL, "%s", tr_json_str_or (g, "confidence", ""));
    for (int r = 0; r < 3; r++) {
        json_t *o = json_object_get (g, res[r]);

        cell (a, tr_json_num (o, "request"), (enum cell)r, -1);
        if (json_is_true (json_object_get (o, "unlimited")))
            snprintf (a, sizeof (a), "%s", TR_STEPSUM_UNLIMITED);
        cell (b, tr_json_num (o, "recommend"), (enum cell)r, -1);
        snprintf (c[3 + r], CELL, "%s -> %s", a, b);
        cell (c[6 + r], tr_json_num (json_object_get (g, "savings"), sav[r]),
              C_NUM, 2);
    }
}

/* "GROUP: TEXT" to out, wrapped to width (0: as it is) under TEXT. */
static void group_line (FILE *out,
                        const char *group,
                        const char *text,
                        int width)
{
    char line[1024];

    snprintf (line, sizeof (line), "%s: %s", group, text);
    if (width <= 0)
        fprintf (out, "%s\n", line);
    else
        (void)tr_report_wrap_hang (out, line, width, (int)strlen (group) + 2);
}

/* A saving as the table's cell writes it ("12.00", "-"). */
static const char *saving (char *buf, json_t *s, const char *member)
{
    cell (buf, tr_json_num (s, member), C_NUM, 2);
    return buf;
}

/* What group g saves over its runs, as the table's savings columns say
 * it: "saves 12.00 core-hours, 27.00 GiB-hours, 6.27 EUR over the runs
 * seen"; "" when none is known.
 */
static void savings_text (json_t *g, char *buf, size_t size)
{
    json_t *s = json_object_get (g, "savings");
    char ch[CELL], gh[CELL], m[CELL], money[CELL + 64] = "";

    buf[0] = '\0';
    if (isnan (tr_json_num (s, "core_hours"))
        && isnan (tr_json_num (s, "gib_hours"))
        && isnan (tr_json_num (s, "money")))
        return;
    if (!isnan (tr_json_num (s, "money")))
        snprintf (money, sizeof (money), ", %s %s", saving (m, s, "money"),
                  tr_json_str_or (s, "currency", ""));
    snprintf (buf, size,
              "saves %s core-hours, %s GiB-hours%s over the runs seen",
              saving (ch, s, "core_hours"), saving (gh, s, "gib_hours"),
              money);
}

int tr_recommend_print_table_width (FILE *out, json_t *recs, int width)
{
    const char *head[] = { "GROUP", "RUNS",   "CONF",  "CPUS", "MEM",
                           "TIME",  "CORE-H", "GIB-H", "MONEY" };
    json_t *groups = array_of (recs, "groups"), *g, *n;
    char money[64] = "", sav[CELL * 4 + 128];
    int ncols = NCOLS;
    size_t i, k;

    if (!groups)
        return -1;
    /* the currency of the first group with money, as "MONEY(EUR)" */
    json_array_foreach (groups, i, g)
    {
        const char *cur =
            tr_json_str_or (json_object_get (g, "savings"), "currency", "");

        if (*cur && !*money)
            snprintf (money, sizeof (money), "MONEY(%s)", cur);
    }
    if (*money)
        head[8] = money;
    /* too wide: each group's savings go on a line of their own, with
     * its notes
     */
    if (width > 0
        && print_cells (NULL, groups, head, fill_rec, NCOLS) > width)
        ncols = NCOLS - 3;
    print_cells (out, groups, head, fill_rec, ncols);
    json_array_foreach (groups, i, g)
    {
        const char *name = tr_json_str_or (g, "group", "");

        if (ncols < NCOLS) {
            savings_text (g, sav, sizeof (sav));
            if (*sav)
                group_line (out, name, sav, width);
        }
        json_array_foreach (json_object_get (g, "notes"), k, n)
            group_line (out, name, json_string_value (n), width);
    }
    return finish (out);
}

int tr_recommend_print_table (FILE *out, json_t *recs)
{
    return tr_recommend_print_table_width (out, recs, 0);
}

static void fill_reg (json_t *f, char (*c)[CELL])
{
    const char *m = tr_json_str_or (f, "metric", "");
    size_t len = strlen (m);
    enum cell kind =
        len > 2 && !strcmp (m + len - 2, "_s") ? C_DURATION : C_BYTES;

    snprintf (c[0], CELL, "%s", tr_json_str_or (f, "group", ""));
    snprintf (c[1], CELL, "%s", tr_json_str_or (f, "job_id", ""));
    snprintf (c[2], CELL, "%s", tr_json_str_or (f, "step_id", ""));
    snprintf (c[3], CELL, "%s", m);
    cell (c[4], tr_json_num (f, "value"), kind, 0);
    cell (c[5], tr_json_num (f, "median"), kind, 0);
    cell (c[6], tr_json_num (f, "ratio"), C_NUM, 2);
    cell (c[7], tr_json_num (f, "z"), C_NUM, 1);
    cell (c[8], tr_json_num (f, "history"), C_NUM, 0);
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
        print_cells (out, arr, head, fill_reg, NCOLS);
    return finish (out);
}
