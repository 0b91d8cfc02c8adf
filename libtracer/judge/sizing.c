/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
/* sizing.c - the engine's options from the site configuration, and the
 * request options of each scheduler (sizing.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "sizing.h"
#include "diagnose.h"
#include "recommend.h"

#define MIB 1048576.0

void tr_sizing_opts (struct tr_recommend_opts *o, const tr_conf_t *conf)
{
    struct tr_diag_thresholds t;

    memset (o, 0, sizeof (*o));
    if (conf) {
        const struct tr_conf_recommend *c = &conf->recommend;

        o->mem_quantile = c->mem_quantile;
        o->mem_headroom = c->mem_headroom;
        o->time_quantile = c->time_quantile;
        o->time_margin = c->time_margin;
        o->cpu_quantile = c->cpu_quantile;
        o->cpu_pressure_max = conf->diagnosis.cpu_pressure_starved;
        o->min_runs = c->min_runs > 0 ? (unsigned)c->min_runs : 0;
        o->last_n = c->last_runs > 0 ? (unsigned)c->last_runs : 0;
        o->mem_min_bytes = c->mem_min;
        o->time_min_s = c->time_min;
        return;
    }
    /* Kept equal to the schema defaults in conf.c (a unit test checks);
     * the pressure is the diagnosis's own default.
     */
    tr_diag_defaults (&t);
    o->mem_quantile = 0.95;
    o->mem_headroom = 0.2;
    o->time_quantile = 0.95;
    o->time_margin = 0.25;
    o->cpu_quantile = 0.9;
    o->cpu_pressure_max = t.cpu_pressure_starved;
    o->min_runs = 3;
    o->last_n = 0;
    o->mem_min_bytes = 256 * MIB;
    o->time_min_s = 300;
}

json_t *tr_sizing_one_run (const tr_stepsum_t *row,
                           const struct tr_recommend_opts *o)
{
    struct tr_recommend_opts def;
    tr_stepsum_t one;
    const tr_stepsum_t *rows[] = { &one };
    json_t *recs, *g;

    if (!row) {
        errno = EINVAL;
        return NULL;
    }
    if (!o) {
        tr_sizing_opts (&def, NULL);
        o = &def;
    }
    one = *row;
    if (!one.group || !*one.group)
        one.group = "this step";
    if (!(recs = tr_recommend_groups (rows, 1, o, NULL)))
        return NULL;
    g = json_incref (json_array_get (json_object_get (recs, "groups"), 0));
    json_decref (recs);
    if (!g)
        errno = ENOENT; /* left out: still running */
    return g;
}

/* Appends one option to a (printf-style); an option that does not fit
 * TR_SIZING_ARG_MAX cannot occur with the checked values below.
 */
static void put (struct tr_sizing_args *a, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void put (struct tr_sizing_args *a, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (a->n >= TR_SIZING_ARGS)
        return;
    va_start (ap, fmt);
    n = vsnprintf (a->arg[a->n], sizeof (a->arg[a->n]), fmt, ap);
    va_end (ap);
    if (n >= 0 && (size_t)n < sizeof (a->arg[a->n]))
        a->n++;
}

static int start (struct tr_sizing_args *a)
{
    if (!a) {
        errno = EINVAL;
        return -1;
    }
    memset (a, 0, sizeof (*a));
    return 0;
}

int tr_sizing_args_slurm (struct tr_sizing_args *a,
                          double cpus,
                          double mem,
                          double time)
{
    char t[32];

    if (start (a) < 0)
        return -1;
    if (!isnan (cpus))
        put (a, "--cpus-per-task=%.0f", cpus);
    if (!tr_recommend_mem_text (t, sizeof (t), mem))
        put (a, "--mem=%s", t);
    if (!tr_recommend_time_text (t, sizeof (t), time))
        put (a, "--time=%s", t);
    return 0;
}

/* PBS sizes: whole MiB rounded up, "Ngb" when a whole number of GiB,
 * else "Nmb" (PBS counts them in powers of 1024).
 */
static int pbs_mem (char *buf, size_t size, double bytes)
{
    char m[32];
    size_t len;

    if (tr_recommend_mem_text (m, sizeof (m), bytes) < 0)
        return -1;
    len = strlen (m);
    if ((size_t)snprintf (buf, size, "%.*s%s", (int)(len - 1), m,
                          m[len - 1] == 'G' ? "gb" : "mb")
        >= size) {
        errno = ERANGE;
        return -1;
    }
    return 0;
}

/* PBS walltime "HH:MM:SS" (hours past 24 as they are) and LSF's -W
 * "H:MM" (minutes rounded up), or -1 when unknown.
 */
static int hms_text (char *buf, size_t size, double seconds, bool lsf)
{
    long long s;

    if (isnan (seconds) || seconds < 0 || seconds > 1e12) {
        errno = EINVAL;
        return -1;
    }
    s = (long long)ceil (seconds);
    if (lsf)
        s = (s + 59) / 60 * 60;
    if ((size_t)(lsf ? snprintf (buf, size, "%lld:%02lld", s / 3600,
                                 s / 60 % 60)
                     : snprintf (buf, size, "%02lld:%02lld:%02lld", s / 3600,
                                 s / 60 % 60, s % 60))
        >= size) {
        errno = ERANGE;
        return -1;
    }
    return 0;
}

int tr_sizing_args_pbs (struct tr_sizing_args *a,
                        double cpus,
                        double mem,
                        double time)
{
    char m[32], c[32] = "", t[32];
    bool has_mem;

    if (start (a) < 0)
        return -1;
    /* one chunk: the job's steps run on one node */
    has_mem = !pbs_mem (m, sizeof (m), mem);
    if (!isnan (cpus))
        snprintf (c, sizeof (c), ":ncpus=%.0f", cpus);
    if (*c || has_mem)
        put (a, "-l select=1%s%s%s", c, has_mem ? ":mem=" : "",
             has_mem ? m : "");
    if (!hms_text (t, sizeof (t), time, false))
        put (a, "-l walltime=%s", t);
    return 0;
}

int tr_sizing_args_lsf (struct tr_sizing_args *a,
                        double cpus,
                        double mem,
                        double time)
{
    char t[32];

    if (start (a) < 0)
        return -1;
    if (!isnan (cpus))
        put (a, "-n %.0f", cpus);
    /* units stated, so that LSF_UNIT_FOR_LIMITS does not matter */
    if (!isnan (mem) && mem >= 0 && mem <= 1e18)
        put (a, "-R \"rusage[mem=%.0fMB]\"", ceil (mem / MIB));
    if (!hms_text (t, sizeof (t), time, true))
        put (a, "-W %s", t);
    return 0;
}

enum tr_sizing_form tr_sizing_form (const char *scheduler)
{
    if (scheduler
        && (!strcmp (scheduler, "pbs") || !strcmp (scheduler, "torque")))
        return TR_SIZING_PBS;
    if (scheduler && !strcmp (scheduler, "lsf"))
        return TR_SIZING_LSF;
    return TR_SIZING_SLURM;
}

int tr_sizing_args (struct tr_sizing_args *a,
                    const char *scheduler,
                    double cpus,
                    double mem,
                    double time)
{
    switch (tr_sizing_form (scheduler)) {
    case TR_SIZING_PBS:
        return tr_sizing_args_pbs (a, cpus, mem, time);
    case TR_SIZING_LSF:
        return tr_sizing_args_lsf (a, cpus, mem, time);
    default:
        return tr_sizing_args_slurm (a, cpus, mem, time);
    }
}

/* The "recommend" value of member res of group g, NAN if none. */
static double advised (json_t *g, const char *res)
{
    json_t *v = json_object_get (json_object_get (g, res), "recommend");

    return json_is_number (v) ? json_number_value (v) : NAN;
}

int tr_sizing_args_advice (struct tr_sizing_args *a,
                           const char *scheduler,
                           json_t *g)
{
    return tr_sizing_args (a, scheduler, advised (g, "cpus"),
                           advised (g, "mem"), advised (g, "time"));
}

int tr_sizing_join (char *buf, size_t size, const struct tr_sizing_args *a)
{
    size_t len = 0;

    if (!buf || !size || !a) {
        errno = EINVAL;
        return -1;
    }
    buf[0] = '\0';
    for (size_t i = 0; i < a->n && i < TR_SIZING_ARGS; i++) {
        int n =
            snprintf (buf + len, size - len, "%s%s", len ? " " : "", a->arg[i]);

        if (n < 0 || (size_t)n >= size - len) {
            buf[0] = '\0';
            errno = ERANGE;
            return -1;
        }
        len += (size_t)n;
    }
    return 0;
}
