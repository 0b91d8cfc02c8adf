/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Waste, cost and group summaries over step summaries, for
 * tracer-report --waste and --summary.  Rows are grouped by sorting
 * rather than hashing: one sort is cheap next to reading the records,
 * and it leaves the groups in a stable order with no seed in it.  The
 * JSON built here is the contract (doc/report-json.md); the printers
 * only read it back, so the tables can never say something --json does
 * not.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <jansson.h>

#include "aggregate.h"
#include "libtracer/record/merge.h"
#include "libtracer/util/stats.h"
#include "libtracer/record/when.h"
#include "libtracer/util/units.h"
#include "libtracer/util/json.h"
#include "libtracer/record/states.h"

#define GIB 1073741824.0

/* A key of "tool" mode for CPU time that no listed tool accounts for:
 * the tools beyond the five busiest, and whatever the per-process
 * counters missed.
 */
#define OTHER_TOOL "(other)"

/* Set o[k] = v, stealing v; -1 (ENOMEM) when v could not be made. */
static int put (json_t *o, const char *k, json_t *v)
{
    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    if (json_object_set_new (o, k, v) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static int push (json_t *a, json_t *v)
{
    if (!v || json_array_append_new (a, v) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static void decref_keep_errno (json_t *o)
{
    int saved = errno;

    json_decref (o);
    errno = saved;
}

/* Order of rows by job: cluster, then job id. */
static int cmp_job (const void *a, const void *b)
{
    const tr_stepsum_t *x = *(const tr_stepsum_t *const *)a;
    const tr_stepsum_t *y = *(const tr_stepsum_t *const *)b;
    int c = strcmp (x->cluster, y->cluster);

    return c ? c : strcmp (x->job_id, y->job_id);
}

/* How many distinct (cluster, job_id) the n rows of v have (v is
 * reordered).
 */
static size_t count_jobs (const tr_stepsum_t **v, size_t n)
{
    size_t jobs = 0;

    qsort (v, n, sizeof (*v), cmp_job);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || cmp_job (&v[i - 1], &v[i]) != 0)
            jobs++;
    return jobs;
}

/* --- Waste ------------------------------------------------------------ */

enum waste_key {
    KEY_USER,
    KEY_ACCOUNT,
    KEY_PARTITION,
    KEY_GROUP,
    KEY_PIPELINE,
    KEY_TOOL,
};

static const struct waste_by {
    const char *name;
    enum waste_key key;
    const char *header; /* of the key column */
} waste_bys[] = {
    { "user", KEY_USER, "User" },
    { "account", KEY_ACCOUNT, "Account" },
    { "partition", KEY_PARTITION, "Partition" },
    { "step", KEY_GROUP, "Step" },
    { "group", KEY_GROUP, "Group" },
    { "pipeline", KEY_PIPELINE, "Pipeline" },
    { "tool", KEY_TOOL, "Tool" },
    { NULL, 0, NULL },
};

static const struct waste_by *waste_by_lookup (const char *name)
{
    for (const struct waste_by *b = waste_bys; name && b->name; b++)
        if (strcmp (b->name, name) == 0)
            return b;
    return NULL;
}

struct prices {
    double core;
    double gb;
    double gpu;
};

/* An override price applies unless it is NAN or negative ("not given"). */
static double override (double dflt, double part)
{
    return isnan (part) || part < 0 ? dflt : part;
}

static struct prices row_prices (const struct tr_cost *cost,
                                 const char *partition)
{
    struct prices p = { 0, 0, 0 };

    if (!cost)
        return p;
    p.core = cost->core_hour;
    p.gb = cost->gb_hour;
    p.gpu = cost->gpu_hour;
    for (size_t i = 0; i < cost->npart; i++) {
        const struct tr_cost_part *o = &cost->part[i];

        if (strcmp (o->partition, partition) == 0) {
            p.core = override (p.core, o->core_hour);
            p.gb = override (p.gb, o->gb_hour);
            p.gpu = override (p.gpu, o->gpu_hour);
            break;
        }
    }
    return p;
}

static int check_price (const char *what, double v, tr_error_t *error)
{
    if (isfinite (v) && v >= 0)
        return 0;
    errno = EINVAL;
    return tr_errprintf (error, "cost: the %s price must be a number >= 0",
                         what);
}

/* Validate cost; *priced tells whether any resource has a price. */
static int check_cost (const struct tr_cost *cost,
                       bool *priced,
                       tr_error_t *error)
{
    *priced = false;
    if (!cost)
        return 0;
    if (check_price ("core_hour", cost->core_hour, error) < 0
        || check_price ("gb_hour", cost->gb_hour, error) < 0
        || check_price ("gpu_hour", cost->gpu_hour, error) < 0)
        return -1;
    if (cost->npart > 0 && !cost->part) {
        errno = EINVAL;
        return tr_errprintf (error, "cost: %zu partition prices missing",
                             cost->npart);
    }
    *priced = cost->core_hour > 0 || cost->gb_hour > 0 || cost->gpu_hour > 0;
    for (size_t i = 0; i < cost->npart; i++) {
        const struct tr_cost_part *o = &cost->part[i];

        if (!o->partition) {
            errno = EINVAL;
            return tr_errprintf (error,
                                 "cost: partition price %zu names no"
                                 " partition",
                                 i);
        }
        if (isinf (o->core_hour) || isinf (o->gb_hour) || isinf (o->gpu_hour)) {
            errno = EINVAL;
            return tr_errprintf (error, "cost: partition %s: infinite price",
                                 o->partition);
        }
        if (o->core_hour > 0 || o->gb_hour > 0 || o->gpu_hour > 0)
            *priced = true;
    }
    return 0;
}

/* What one row allocated and used.  [0] allocated, [1] used, [2] wasted,
 * in resource-hours.  Waste is clamped at 0 per row: a step that used
 * more than it was granted (cores not fenced by a cpuset) does not
 * make up for another step's idle cores.
 */
struct use {
    bool no_alloc; /* req_cores or elapsed_s unknown: not summed */
    bool no_usage; /* cpu_s unknown: not summed */
    bool mem_unknown;
    bool gpu_unknown;
    double core[3];
    double mem[3];
    double gpu[3];
    struct prices p;
};

static bool known (double v)
{
    return isfinite (v) && v >= 0;
}

static void fill3 (double v[3], double alloc, double used)
{
    v[0] = alloc;
    v[1] = used;
    v[2] = alloc > used ? alloc - used : 0;
}

static void row_use (const tr_stepsum_t *r,
                     const struct tr_cost *cost,
                     struct use *u)
{
    double h;

    memset (u, 0, sizeof (*u));
    if (!known (r->req_cores) || r->req_cores == 0 || !known (r->elapsed_s)) {
        u->no_alloc = true;
        return;
    }
    if (!known (r->cpu_s)) {
        u->no_usage = true;
        return;
    }
    h = r->elapsed_s / 3600;
    fill3 (u->core, r->req_cores * h, r->cpu_s / 3600);

    /* A memory request is per node; the peaks are summed over the nodes,
     * and a peak held for the whole runtime is the most that can have
     * been used, so this waste is a lower bound.
     */
    if (known (r->req_mem_bytes) && r->req_mem_bytes > 0 && known (r->nodes)
        && r->nodes > 0 && known (r->mem_peak_sum_bytes))
        fill3 (u->mem, r->req_mem_bytes * r->nodes * h / GIB,
               r->mem_peak_sum_bytes * h / GIB);
    else
        u->mem_unknown = true;

    /* The devices a step saw are the ones it was granted. */
    if (known (r->gpus_used) && r->gpus_used > 0) {
        if (known (r->gpu_util_mean_pct)) {
            double util = fmin (r->gpu_util_mean_pct, 100) / 100;

            fill3 (u->gpu, r->gpus_used * h, r->gpus_used * h * util);
        }
        else
            u->gpu_unknown = true;
    }
    u->p = row_prices (cost, r->partition);
}

struct acc {
    char *key;
    size_t steps;
    size_t jobs;
    size_t no_alloc;
    size_t no_usage;
    size_t mem_unknown;
    size_t gpu_unknown;
    double core[3];
    double mem[3];
    double gpu[3];
    double money[3];
};

/* Add share of u to a.  first is true for the first share of a row in
 * this key, so that its counts are taken once.  cpu_only leaves memory
 * and GPUs out (tool mode: tools are given CPU time, nothing else).
 */
static void acc_add (struct acc *a,
                     const struct use *u,
                     double share,
                     bool first,
                     bool cpu_only)
{
    if (u->no_alloc || u->no_usage) {
        if (first) {
            a->no_alloc += u->no_alloc;
            a->no_usage += u->no_usage;
        }
        return;
    }
    for (int i = 0; i < 3; i++) {
        a->core[i] += share * u->core[i];
        a->money[i] += share * u->core[i] * u->p.core;
    }
    if (cpu_only)
        return;
    if (u->mem_unknown)
        a->mem_unknown += first;
    else
        for (int i = 0; i < 3; i++) {
            a->mem[i] += u->mem[i];
            a->money[i] += u->mem[i] * u->p.gb;
        }
    if (u->gpu_unknown)
        a->gpu_unknown += first;
    else
        for (int i = 0; i < 3; i++) {
            a->gpu[i] += u->gpu[i];
            a->money[i] += u->gpu[i] * u->p.gpu;
        }
}

void tr_waste_row (const tr_stepsum_t *row,
                   const struct tr_cost *cost,
                   struct tr_waste_row *w)
{
    struct acc a;
    struct use u;
    bool priced = false;

    memset (&a, 0, sizeof (a));
    row_use (row, cost, &u);
    acc_add (&a, &u, 1, true, false);
    /* money as tr_waste has it: for every row once any price is set */
    if (check_cost (cost, &priced, NULL) < 0)
        priced = false;
    for (int i = 0; i < 3; i++) {
        bool summed = !u.no_alloc && !u.no_usage;

        w->core[i] = summed ? a.core[i] : NAN;
        w->mem[i] = summed && !u.mem_unknown ? a.mem[i] : NAN;
        w->gpu[i] = summed && !u.gpu_unknown ? a.gpu[i] : NAN;
        w->money[i] = summed && priced ? a.money[i] : NAN;
    }
}

/* One (key, row) pair; key is not terminated (a tool name is a piece
 * of a buffer of names).  While the items are built, a tool name's key
 * is NULL and off its place in that buffer, which may still move.
 */
struct item {
    const char *key;
    size_t len;
    size_t off;
    const tr_stepsum_t *row;
    double share;
};

struct items {
    struct item *v;
    size_t n;
    size_t cap;
    tr_strbuf_t names; /* unescaped tool names, back to back */
};

static int items_add (struct items *it,
                      const char *key,
                      size_t len,
                      size_t off,
                      const tr_stepsum_t *row,
                      double share)
{
    if (it->n == it->cap) {
        size_t cap = it->cap ? 2 * it->cap : 64;
        struct item *v = realloc (it->v, cap * sizeof (*v));

        if (!v)
            return -1;
        it->v = v;
        it->cap = cap;
    }
    it->v[it->n++] = (struct item){ key, len, off, row, share };
    return 0;
}

static int other_item (struct items *it, const tr_stepsum_t *r, double share)
{
    return items_add (it, OTHER_TOOL, strlen (OTHER_TOOL), 0, r, share);
}

/* Parse one "name=cpu_s" of a tools string at *pp (names escape '\\',
 * ';' and '=' with '\\'), appending the name to names.  Advances *pp
 * past the entry and its ';'.  Returns 0 with *ok true and *cpu set
 * for a well-formed entry, *ok false (names as it was) for a malformed
 * one; -1 with errno = ENOMEM.
 */
static int parse_tool (const char **pp,
                       tr_strbuf_t *names,
                       double *cpu,
                       bool *ok)
{
    const char *p = *pp, *val, *end;
    size_t off = names->len;
    bool eq = false;
    char *val_end;

    *ok = false;
    while (*p && *p != ';') {
        if (*p == '=') {
            eq = true;
            p++;
            break;
        }
        if (*p == '\\' && p[1])
            p++;
        if (tr_strbuf_append (names, p, 1) < 0)
            return -1;
        p++;
    }
    for (val = p; *p && *p != ';'; p++)
        ;
    end = p;
    *pp = *p ? p + 1 : p;
    if (eq && names->len > off && end > val) {
        errno = 0;
        *cpu = strtod (val, &val_end);
        *ok = errno == 0 && val_end == end && known (*cpu);
    }
    if (!*ok && names->buf) {
        names->len = off;
        names->buf[off] = '\0';
    }
    return 0;
}

/* The items of r in tool mode: one per "name=cpu_s" of r->tools, with
 * its share of the row's CPU time, and "(other)" for the rest.  When the
 * tools add up to more than the row's CPU time (per-process counters
 * and the cgroup's disagree a little) they are scaled to add up to it,
 * so a row's shares always sum to 1.  A malformed entry is left to
 * "(other)".
 */
static int tool_items (struct items *it, const tr_stepsum_t *r)
{
    size_t start = it->n;
    double sum = 0, denom, rest = 1;
    const char *p = r->tools;

    while (*p) {
        size_t off = it->names.len;
        double cpu;
        bool ok;

        if (parse_tool (&p, &it->names, &cpu, &ok) < 0)
            return -1;
        if (!ok)
            continue;
        if (items_add (it, NULL, it->names.len - off, off, r, cpu) < 0)
            return -1;
        sum += cpu;
    }
    denom = known (r->cpu_s) && r->cpu_s > sum ? r->cpu_s : sum;
    if (!(denom > 0)) {
        it->n = start;
        return other_item (it, r, 1);
    }
    for (size_t i = start; i < it->n; i++) {
        it->v[i].share /= denom;
        rest -= it->v[i].share;
    }
    /* Rounding leaves crumbs of the order of 1e-16; they are no tool. */
    if (rest > 1e-9)
        return other_item (it, r, rest);
    return 0;
}

static int waste_items (struct items *it,
                        const tr_stepsum_t *const *rows,
                        size_t n,
                        enum waste_key key)
{
    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = rows[i];
        const char *k;

        switch (key) {
        case KEY_USER:
            k = r->user;
            break;
        case KEY_ACCOUNT:
            k = r->account;
            break;
        case KEY_PARTITION:
            k = r->partition;
            break;
        case KEY_GROUP:
            k = r->group;
            break;
        case KEY_PIPELINE:
            k = r->pipeline;
            break;
        default:
            if (tool_items (it, r) < 0)
                return -1;
            continue;
        }
        if (items_add (it, k, strlen (k), 0, r, 1) < 0)
            return -1;
    }
    /* The names are all in now: their buffer will not move again. */
    for (size_t i = 0; i < it->n; i++)
        if (!it->v[i].key)
            it->v[i].key = it->names.buf + it->v[i].off;
    return 0;
}

static int cmp_key (const struct item *a, const struct item *b)
{
    int c = memcmp (a->key, b->key, a->len < b->len ? a->len : b->len);

    if (c)
        return c;
    return (a->len > b->len) - (a->len < b->len);
}

/* Items by key, then by row, so a row's items in one key are adjacent. */
static int cmp_item (const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    int c = cmp_key (a, b);
    uintptr_t x = (uintptr_t)a->row, y = (uintptr_t)b->row;

    return c ? c : (x > y) - (x < y);
}

static int cmp_acc_natural (const struct acc *a, const struct acc *b)
{
    return tr_merge_natcmp (a->key, b->key);
}

static int cmp_acc_core (const void *pa, const void *pb)
{
    const struct acc *a = pa, *b = pb;

    if (a->core[2] != b->core[2])
        return a->core[2] < b->core[2] ? 1 : -1;
    return cmp_acc_natural (a, b);
}

static int cmp_acc_money (const void *pa, const void *pb)
{
    const struct acc *a = pa, *b = pb;

    if (a->money[2] != b->money[2])
        return a->money[2] < b->money[2] ? 1 : -1;
    return cmp_acc_core (pa, pb);
}

/* {allocated, used, wasted, wasted_pct (when anything was allocated)} */
static json_t *hours_json (const double v[3])
{
    json_t *o = json_pack ("{s:f, s:f, s:f}", "allocated", v[0], "used", v[1],
                           "wasted", v[2]);

    if (!o) {
        errno = ENOMEM;
        return NULL;
    }
    if (v[0] > 0 && put (o, "wasted_pct", json_real (100 * v[2] / v[0])) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

static json_t *hours_unknown_json (const double v[3], size_t unknown)
{
    json_t *o = hours_json (v);

    if (o && put (o, "unknown", json_integer ((json_int_t)unknown)) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

static json_t *acc_json (const struct acc *a,
                         bool with_key,
                         bool cpu_only,
                         bool priced)
{
    json_t *o = json_object ();

    if (!o)
        goto nomem;
    if (with_key && put (o, "key", json_string (a->key)) < 0)
        goto nomem;
    if (put (o, "steps", json_integer ((json_int_t)a->steps)) < 0
        || put (o, "jobs", json_integer ((json_int_t)a->jobs)) < 0
        || put (o, "unknown_allocation", json_integer ((json_int_t)a->no_alloc))
               < 0
        || put (o, "unknown_usage", json_integer ((json_int_t)a->no_usage)) < 0
        || put (o, "core_hours", hours_json (a->core)) < 0)
        goto nomem;
    if (!cpu_only) {
        json_t *mem = hours_unknown_json (a->mem, a->mem_unknown);
        json_t *gpu = hours_unknown_json (a->gpu, a->gpu_unknown);

        /* put steals even on failure, so both are always handed over */
        int rc = put (o, "gib_hours", mem);

        if (put (o, "gpu_hours", gpu) < 0 || rc < 0)
            goto nomem;
    }
    if (priced && put (o, "money", hours_json (a->money)) < 0)
        goto nomem;
    return o;
nomem:
    decref_keep_errno (o);
    errno = ENOMEM;
    return NULL;
}

/* Sum the items of each key into accs (sorted by key): *naccs of them. */
static struct acc *waste_accs (struct items *it,
                               const struct tr_cost *cost,
                               bool cpu_only,
                               size_t *naccs)
{
    struct acc *accs = NULL;
    const tr_stepsum_t **scratch = NULL;
    size_t nkeys = 0, k = 0;

    if (it->n > 0) /* it->v is NULL then, which qsort may not be given */
        qsort (it->v, it->n, sizeof (*it->v), cmp_item);
    for (size_t i = 0; i < it->n; i++)
        if (i == 0 || cmp_key (&it->v[i - 1], &it->v[i]) != 0)
            nkeys++;
    if (!(accs = calloc (nkeys ? nkeys : 1, sizeof (*accs)))
        || !(scratch = malloc ((it->n ? it->n : 1) * sizeof (*scratch))))
        goto nomem;
    for (size_t i = 0, j; i < it->n; i = j, k++) {
        struct acc *a = &accs[k];
        size_t nrows = 0;

        if (!(a->key = strndup (it->v[i].key, it->v[i].len)))
            goto nomem;
        for (j = i; j < it->n && cmp_key (&it->v[i], &it->v[j]) == 0; j++) {
            const struct item *t = &it->v[j];
            bool first = j == i || t->row != it->v[j - 1].row;
            struct use u;

            if (first)
                scratch[nrows++] = t->row;
            row_use (t->row, cost, &u);
            acc_add (a, &u, t->share, first, cpu_only);
        }
        a->steps = nrows;
        a->jobs = count_jobs (scratch, nrows);
    }
    free (scratch);
    *naccs = nkeys;
    return accs;
nomem:
    for (size_t i = 0; accs && i < k; i++)
        free (accs[i].key);
    free (accs);
    free (scratch);
    errno = ENOMEM;
    return NULL;
}

json_t *tr_waste (const tr_stepsum_t *const *rows,
                  size_t n,
                  const char *by,
                  const struct tr_cost *cost,
                  tr_error_t *error)
{
    const struct waste_by *b = waste_by_lookup (by);
    struct items it = { NULL, 0, 0, TR_STRBUF_INIT };
    struct acc *accs = NULL, total;
    const tr_stepsum_t **all = NULL;
    size_t naccs = 0;
    bool priced, cpu_only;
    json_t *res = NULL, *list;

    memset (&total, 0, sizeof (total));
    if (!b) {
        errno = EINVAL;
        tr_errprintf (error,
                      "waste: cannot group by '%s' (user, account,"
                      " partition, step, group, pipeline or tool)",
                      by ? by : "");
        return NULL;
    }
    if (!rows && n > 0) {
        errno = EINVAL;
        tr_errprintf (error, "waste: no rows");
        return NULL;
    }
    if (check_cost (cost, &priced, error) < 0)
        return NULL;
    cpu_only = b->key == KEY_TOOL;

    if (waste_items (&it, rows, n, b->key) < 0
        || !(accs = waste_accs (&it, cost, cpu_only, &naccs)))
        goto nomem;
    qsort (accs, naccs, sizeof (*accs), priced ? cmp_acc_money : cmp_acc_core);

    /* The total is taken from the rows, not the keys: in tool mode a row
     * is in several keys, and its steps and jobs count once.
     */
    if (!(all = malloc ((n ? n : 1) * sizeof (*all))))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        struct use u;

        row_use (rows[i], cost, &u);
        acc_add (&total, &u, 1, true, cpu_only);
        all[i] = rows[i];
    }
    total.steps = n;
    total.jobs = count_jobs (all, n);

    if (!(res = json_object ()) || put (res, "by", json_string (b->name)) < 0
        || (priced
            && put (res, "currency",
                    json_string (cost->currency ? cost->currency : ""))
                   < 0)
        || put (res, "rows", (list = json_array ())) < 0)
        goto nomem;
    for (size_t i = 0; i < naccs; i++)
        if (push (list, acc_json (&accs[i], true, cpu_only, priced)) < 0)
            goto nomem;
    if (put (res, "total", acc_json (&total, false, cpu_only, priced)) < 0)
        goto nomem;
    goto out;
nomem:
    json_decref (res);
    res = NULL;
    errno = ENOMEM;
    tr_errprintf (error, "waste: out of memory");
out:
    for (size_t i = 0; i < naccs; i++)
        free (accs[i].key);
    free (accs);
    free (all);
    free (it.v);
    tr_strbuf_free (&it.names);
    return res;
}

/* --- Waste table ------------------------------------------------------ */

enum col_kind {
    COL_COUNT,   /* integer member */
    COL_UNKNOWN, /* unknown_allocation + unknown_usage */
    COL_HOURS,   /* two decimals */
    COL_PCT,     /* one decimal */
};

enum col_need {
    NEED_NONE,
    NEED_MEM,
    NEED_GPU,
    NEED_MONEY,
};

static const struct waste_col {
    const char *header;
    const char *obj; /* member of the row holding mem, or NULL */
    const char *mem;
    enum col_kind kind;
    enum col_need need;
    int panel; /* columns of a panel stay together (tr_waste_print) */
} waste_cols[] = {
    { "Steps", NULL, "steps", COL_COUNT, NEED_NONE, 0 },
    { "Jobs", NULL, "jobs", COL_COUNT, NEED_NONE, 0 },
    { "Unknown", NULL, NULL, COL_UNKNOWN, NEED_NONE, 0 },
    { "CoreH", "core_hours", "allocated", COL_HOURS, NEED_NONE, 1 },
    { "CoreHUsed", "core_hours", "used", COL_HOURS, NEED_NONE, 1 },
    { "CoreHWaste", "core_hours", "wasted", COL_HOURS, NEED_NONE, 1 },
    { "CoreWaste%", "core_hours", "wasted_pct", COL_PCT, NEED_NONE, 1 },
    { "GiBH", "gib_hours", "allocated", COL_HOURS, NEED_MEM, 2 },
    { "GiBHUsed", "gib_hours", "used", COL_HOURS, NEED_MEM, 2 },
    { "GiBHWaste", "gib_hours", "wasted", COL_HOURS, NEED_MEM, 2 },
    { "GiBWaste%", "gib_hours", "wasted_pct", COL_PCT, NEED_MEM, 2 },
    { "GPUH", "gpu_hours", "allocated", COL_HOURS, NEED_GPU, 3 },
    { "GPUHUsed", "gpu_hours", "used", COL_HOURS, NEED_GPU, 3 },
    { "GPUHWaste", "gpu_hours", "wasted", COL_HOURS, NEED_GPU, 3 },
    { "GPUWaste%", "gpu_hours", "wasted_pct", COL_PCT, NEED_GPU, 3 },
    { "Cost", "money", "allocated", COL_HOURS, NEED_MONEY, 4 },
    { "CostUsed", "money", "used", COL_HOURS, NEED_MONEY, 4 },
    { "CostWaste", "money", "wasted", COL_HOURS, NEED_MONEY, 4 },
    { "CostWaste%", "money", "wasted_pct", COL_PCT, NEED_MONEY, 4 },
};

#define NCOLS (sizeof (waste_cols) / sizeof (waste_cols[0]))
#define CELL 48

struct line {
    const char *key;
    char cell[NCOLS][CELL];
};

static void cell_text (char *buf, const struct waste_col *c, json_t *row)
{
    json_t *v;

    buf[0] = '\0';
    if (c->kind == COL_UNKNOWN) {
        json_t *a = json_object_get (row, "unknown_allocation");
        json_t *u = json_object_get (row, "unknown_usage");

        snprintf (buf, CELL, "%" JSON_INTEGER_FORMAT,
                  json_integer_value (a) + json_integer_value (u));
        return;
    }
    v = c->obj ? json_object_get (json_object_get (row, c->obj), c->mem)
               : json_object_get (row, c->mem);
    if (!json_is_number (v))
        return;
    if (c->kind == COL_COUNT)
        snprintf (buf, CELL, "%.0f", json_number_value (v));
    else if (c->kind == COL_PCT)
        snprintf (buf, CELL, "%.1f", json_number_value (v));
    else
        snprintf (buf, CELL, "%.2f", json_number_value (v));
}

/* Whether the columns of need are shown for w's total. */
static bool col_shown (enum col_need need, json_t *total)
{
    json_t *g;

    switch (need) {
    case NEED_MEM:
        return json_object_get (total, "gib_hours") != NULL;
    case NEED_GPU:
        g = json_object_get (total, "gpu_hours");
        return json_number_value (json_object_get (g, "allocated")) > 0
               || json_integer_value (json_object_get (g, "unknown")) > 0;
    case NEED_MONEY:
        return json_object_get (total, "money") != NULL;
    default:
        return true;
    }
}

static void print_rule (FILE *out, const int *width, const bool *shown)
{
    for (int k = 0; k < width[0]; k++)
        fputc ('-', out);
    for (size_t c = 0; c < NCOLS; c++) {
        if (!shown[c])
            continue;
        fputc (' ', out);
        for (int k = 0; k < width[c + 1]; k++)
            fputc ('-', out);
    }
    fputc ('\n', out);
}

static void print_line (FILE *out,
                        const struct line *l,
                        const int *width,
                        const bool *shown,
                        bool parsable)
{
    if (parsable)
        fputs (l->key, out);
    else
        fprintf (out, "%-*s", width[0], l->key);
    for (size_t c = 0; c < NCOLS; c++) {
        if (!shown[c])
            continue;
        if (parsable)
            fprintf (out, "|%s", l->cell[c]);
        else
            fprintf (out, " %*s", width[c + 1], l->cell[c]);
    }
    fputc ('\n', out);
}

/* Print lines[0..nlines) with the columns on[]: header, rule, rows, a
 * rule and the total (the rules left out when parsable).
 */
static void print_table (FILE *out,
                         const struct line *lines,
                         size_t nlines,
                         const int *width,
                         const bool *on,
                         bool parsable)
{
    for (size_t i = 0; i < nlines; i++) {
        /* The total is set off by a rule in the table; in parsable
         * output it is just the last line.
         */
        if (!parsable && i == nlines - 1)
            print_rule (out, width, on);
        print_line (out, &lines[i], width, on, parsable);
        if (!parsable && i == 0)
            print_rule (out, width, on);
    }
}

/* The columns from c0 that the next panel of a table maxw wide holds:
 * whole panels (waste_cols[].panel) while they fit, at least one.
 * Returns the end of its range.
 */
static size_t panel_end (size_t c0,
                         const int *width,
                         const bool *shown,
                         int maxw)
{
    int used = width[0];
    size_t c1 = c0;

    while (c1 < NCOLS) {
        size_t g = c1;
        int gw = 0;

        while (g < NCOLS && waste_cols[g].panel == waste_cols[c1].panel) {
            if (shown[g])
                gw += 1 + width[g + 1];
            g++;
        }
        if (maxw > 0 && used > width[0] && used + gw > maxw)
            break;
        used += gw;
        c1 = g;
    }
    return c1;
}

int tr_waste_print (FILE *out, json_t *w, bool parsable, int maxw)
{
    const struct waste_by *b;
    json_t *rows = json_object_get (w, "rows");
    json_t *total = json_object_get (w, "total");
    const char *currency = json_string_value (json_object_get (w, "currency"));
    bool shown[NCOLS];
    int width[NCOLS + 1];
    struct line *lines;
    size_t nrows, nlines;

    b = waste_by_lookup (json_string_value (json_object_get (w, "by")));
    if (!b || !json_is_array (rows) || !json_is_object (total)) {
        errno = EINVAL;
        return -1;
    }
    nrows = json_array_size (rows);
    nlines = nrows + 2; /* the header, the rows, the total */
    if (!(lines = calloc (nlines, sizeof (*lines))))
        return -1;

    lines[0].key = b->header;
    for (size_t c = 0; c < NCOLS; c++) {
        const struct waste_col *col = &waste_cols[c];

        shown[c] = col_shown (col->need, total);
        char *h = lines[0].cell[c];
        int len = -1;

        /* The currency goes with the amounts, not the percentage; one
         * too long for a header is left out.
         */
        if (col->need == NEED_MONEY && col->kind != COL_PCT && currency
            && *currency)
            len = snprintf (h, CELL, "%s(%s)", col->header, currency);
        if (len < 0 || len >= CELL)
            snprintf (h, CELL, "%s", col->header);
    }
    for (size_t i = 0; i <= nrows; i++) {
        json_t *row = i < nrows ? json_array_get (rows, i) : total;
        struct line *l = &lines[i + 1];
        const char *key = json_string_value (json_object_get (row, "key"));

        if (i == nrows)
            l->key = "TOTAL";
        else
            l->key = key && *key ? key : "(none)";
        for (size_t c = 0; c < NCOLS; c++)
            if (shown[c])
                cell_text (l->cell[c], &waste_cols[c], row);
    }

    memset (width, 0, sizeof (width));
    for (size_t i = 0; i < nlines; i++) {
        int kw = (int)strlen (lines[i].key);

        if (kw > width[0])
            width[0] = kw;
        for (size_t c = 0; c < NCOLS; c++) {
            int cw = (int)strlen (lines[i].cell[c]);

            if (shown[c] && cw > width[c + 1])
                width[c + 1] = cw;
        }
    }

    /* A table wider than maxw is printed as panels one under the other,
     * each with the key column: counts and core-hours, then GiB-hours,
     * GPU-hours and cost, as many whole panels each time as fit.
     */
    for (size_t c0 = 0, c1; c0 < NCOLS; c0 = c1) {
        bool on[NCOLS];

        c1 = parsable ? NCOLS : panel_end (c0, width, shown, maxw);
        for (size_t c = 0; c < NCOLS; c++)
            on[c] = shown[c] && c >= c0 && c < c1;
        if (c0 > 0)
            fputc ('\n', out);
        print_table (out, lines, nlines, width, on, parsable);
        while (c1 < NCOLS && !shown[c1])
            c1++;
    }
    free (lines);
    if (ferror (out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* --- Group summaries -------------------------------------------------- */

enum group_by {
    BY_ARRAY,
    BY_GROUP,
    BY_NAME,
};

struct gitem {
    const char *key;
    const char *cluster; /* "" unless by array */
    const tr_stepsum_t *row;
    size_t index; /* in rows, to keep the sort stable */
};

static int cmp_gitem (const void *pa, const void *pb)
{
    const struct gitem *a = pa, *b = pb;
    int c = tr_merge_natcmp (a->key, b->key);

    if (!c)
        c = tr_merge_natcmp (a->cluster, b->cluster);
    if (!c)
        c = (a->index > b->index) - (a->index < b->index);
    return c;
}

static const char *state_name (const char *s)
{
    return *s ? s : "unknown";
}

static int cmp_state (const void *pa, const void *pb)
{
    const char *a = state_name (*(const char *const *)pa);
    const char *b = state_name (*(const char *const *)pb);
    int ra = tr_states_rank (a), rb = tr_states_rank (b);

    if (ra != rb)
        return ra < rb ? -1 : 1;
    return strcmp (a, b);
}

static int cmp_double (const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;

    return (a > b) - (a < b);
}

/* Round histogram edges, seconds: steps one reads off a clock (1, 2, 5,
 * 10, 15, 20, 30, 45 s; 1, 1.5, 2, 3, 5, 10 ... 45 m; 1, 1.5, 2, 3, 4, 6,
 * 8, 12 h; days), close enough together that a narrow range still gets
 * several bins, and roughly logarithmic, so that a wide one thinned to
 * HIST_BINS stays readable.
 */
static const double hist_ladder[] = {
    0,     1,      2,      5,      10,     15,      20,      30,    45,
    60,    90,     120,    180,    300,    600,     900,     1200,  1800,
    2700,  3600,   5400,   7200,   10800,  14400,   21600,   28800, 43200,
    86400, 172800, 259200, 345600, 604800, 1209600, 2592000,
};

#define NLADDER (sizeof (hist_ladder) / sizeof (hist_ladder[0]))
#define HIST_BINS 8
#define HIST_BAR 40

/* 30 s is (30, "s"), 90 s (1.5, "m"), 4 h (4, "h"), a week (7, "d"). */
static void dur_unit (double s, double *num, const char **unit)
{
    if (s == 0) {
        *num = 0;
        *unit = "";
    }
    else if (s < 60) {
        *num = s;
        *unit = "s";
    }
    else if (s < 3600) {
        *num = s / 60;
        *unit = "m";
    }
    else if (s < 86400) {
        *num = s / 3600;
        *unit = "h";
    }
    else {
        *num = s / 86400;
        *unit = "d";
    }
}

/* "0-30s", "30s-1m", "1-2m": the lower unit is dropped when it is the
 * upper one's.
 */
static void bin_label (char *buf, size_t size, double lo, double hi)
{
    double nl, nh;
    const char *ul, *uh;

    dur_unit (lo, &nl, &ul);
    dur_unit (hi, &nh, &uh);
    if (lo == 0 || strcmp (ul, uh) == 0)
        snprintf (buf, size, "%g-%g%s", nl, nh, uh);
    else
        snprintf (buf, size, "%g%s-%g%s", nl, ul, nh, uh);
}

/* The histogram of v (n > 0 values, sorted): the ladder from the last
 * edge at or below the minimum to the first at or above the maximum,
 * thinned to HIST_BINS bins by taking evenly spaced ladder steps (the
 * ladder is roughly logarithmic, so the bins are too).  Bins are
 * [lo, hi) but the last holds its upper edge (and anything beyond the
 * ladder's end).
 */
static json_t *histogram (const double *v, size_t n)
{
    double edges[HIST_BINS + 1];
    size_t lo = 0, hi = NLADDER - 1, nb, nedges;
    size_t counts[HIST_BINS] = { 0 };
    json_t *a;

    for (size_t i = 0; i < NLADDER; i++)
        if (hist_ladder[i] <= v[0])
            lo = i;
    for (size_t i = NLADDER; i-- > 0;)
        if (hist_ladder[i] >= v[n - 1])
            hi = i;
    if (hi <= lo) {
        if (lo + 1 < NLADDER)
            hi = lo + 1;
        else
            lo = hi - 1;
    }
    nb = hi - lo;
    if (nb > HIST_BINS) {
        for (size_t k = 0; k <= HIST_BINS; k++)
            edges[k] = hist_ladder[lo + (k * nb + HIST_BINS / 2) / HIST_BINS];
        nedges = HIST_BINS + 1;
    }
    else {
        for (size_t k = 0; k <= nb; k++)
            edges[k] = hist_ladder[lo + k];
        nedges = nb + 1;
    }
    for (size_t i = 0, b = 0; i < n; i++) {
        while (b + 2 < nedges && v[i] >= edges[b + 1])
            b++;
        counts[b]++;
    }
    if (!(a = json_array ()))
        return NULL;
    for (size_t k = 0; k + 1 < nedges; k++) {
        char label[32];

        bin_label (label, sizeof (label), edges[k], edges[k + 1]);
        if (push (a, json_pack ("{s:f, s:f, s:s, s:I}", "lo_s", edges[k],
                                "hi_s", edges[k + 1], "label", label, "count",
                                (json_int_t)counts[k]))
            < 0) {
            json_decref (a);
            return NULL;
        }
    }
    return a;
}

/* {n, min, mean, max} of the known values among v[0..n-1] (v is
 * reordered); with quantiles, p50 and p90 too.  Only n when none is
 * known.
 */
static json_t *spread (double *v, size_t n, bool quantiles)
{
    json_t *o;

    n = tr_stats_drop_nan (v, n);
    if (!(o = json_pack ("{s:I}", "n", (json_int_t)n)))
        return NULL;
    if (n == 0)
        return o;
    if (put (o, "min", json_real (tr_stats_min (v, n))) < 0
        || put (o, "mean", json_real (tr_stats_mean (v, n))) < 0
        || put (o, "max", json_real (tr_stats_max (v, n))) < 0
        || (quantiles
            && (put (o, "p50", json_real (tr_stats_quantile (v, n, 0.5))) < 0
                || put (o, "p90", json_real (tr_stats_quantile (v, n, 0.9)))
                       < 0))) {
        json_decref (o);
        return NULL;
    }
    return o;
}

/* The member that has the largest value (ties: the job id first in
 * natural order), or NULL when no member's value is known.
 */
static const tr_stepsum_t *extreme (const struct gitem *g,
                                    size_t n,
                                    double (*val) (const tr_stepsum_t *))
{
    const tr_stepsum_t *best = NULL;

    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = g[i].row;
        double x = val (r);

        if (isnan (x))
            continue;
        if (!best || x > val (best)
            || (x == val (best)
                && tr_merge_natcmp (r->job_id, best->job_id) < 0))
            best = r;
    }
    return best;
}

/* o[name] = {job_id, step_id, array_job_id?, array_task_id?, vname} for
 * the member with the largest val; nothing when there is none.
 */
static int put_extreme (json_t *o,
                        const char *name,
                        const struct gitem *g,
                        size_t n,
                        double (*val) (const tr_stepsum_t *),
                        const char *vname)
{
    const tr_stepsum_t *best = extreme (g, n, val);
    json_t *e;

    if (!best)
        return 0;
    if (!(e = json_pack ("{s:s, s:s}", "job_id", best->job_id, "step_id",
                         best->step_id)))
        goto nomem;
    if ((*best->array_job_id
         && put (e, "array_job_id", json_string (best->array_job_id)) < 0)
        || (known (best->array_task_id)
            && put (e, "array_task_id",
                    json_integer ((json_int_t)best->array_task_id))
                   < 0)
        || put (e, vname, json_real (val (best))) < 0)
        goto nomem;
    return put (o, name, e);
nomem:
    json_decref (e);
    errno = ENOMEM;
    return -1;
}

static double val_elapsed (const tr_stepsum_t *r)
{
    return known (r->elapsed_s) ? r->elapsed_s : NAN;
}

static double val_mem (const tr_stepsum_t *r)
{
    return known (r->mem_peak_bytes) ? r->mem_peak_bytes : NAN;
}

/* Distinct known array task ids among g (vals is scratch). */
static size_t count_tasks (const struct gitem *g, size_t n, double *vals)
{
    size_t m = 0, tasks = 0;

    for (size_t i = 0; i < n; i++)
        if (known (g[i].row->array_task_id))
            vals[m++] = g[i].row->array_task_id;
    qsort (vals, m, sizeof (*vals), cmp_double);
    for (size_t i = 0; i < m; i++)
        if (i == 0 || vals[i] != vals[i - 1])
            tasks++;
    return tasks;
}

/* Rows of g by state, best state first. */
static json_t *count_states (const struct gitem *g, size_t n, const char **s)
{
    json_t *o = json_object ();

    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++)
        s[i] = g[i].row->state;
    qsort (s, n, sizeof (*s), cmp_state);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && cmp_state (&s[i], &s[j]) == 0; j++)
            ;
        if (put (o, state_name (s[i]), json_integer ((json_int_t)(j - i)))
            < 0) {
            json_decref (o);
            return NULL;
        }
    }
    return o;
}

/* Scratch space for group_json, n entries each. */
struct scratch {
    double *vals;
    const tr_stepsum_t **rows;
    const char **strs;
};

/* One group's summary. */
static json_t *group_json (const struct gitem *g,
                           size_t n,
                           enum group_by by,
                           struct scratch *sc)
{
    double *vals = sc->vals;
    json_t *o = json_object (), *el;
    size_t m;

    if (!o || put (o, "key", json_string (g[0].key)) < 0)
        goto nomem;
    if (by == BY_ARRAY && put (o, "cluster", json_string (g[0].cluster)) < 0)
        goto nomem;
    if (put (o, "count", json_integer ((json_int_t)n)) < 0)
        goto nomem;
    for (size_t i = 0; i < n; i++)
        sc->rows[i] = g[i].row;
    if (put (o, "jobs", json_integer ((json_int_t)count_jobs (sc->rows, n)))
        < 0)
        goto nomem;
    if (by == BY_ARRAY
        && put (o, "tasks",
                json_integer ((json_int_t)count_tasks (g, n, sc->vals)))
               < 0)
        goto nomem;
    if (put (o, "states", count_states (g, n, sc->strs)) < 0)
        goto nomem;

    for (size_t i = 0; i < n; i++)
        vals[i] = val_elapsed (g[i].row);
    if (put (o, "elapsed_s", (el = spread (vals, n, true))) < 0)
        goto nomem;
    /* spread left the known values at the front, and the quantiles
     * sorted them.
     */
    m = (size_t)json_integer_value (json_object_get (el, "n"));
    if (m > 0) {
        qsort (vals, m, sizeof (*vals), cmp_double);
        if (put (o, "histogram", histogram (vals, m)) < 0)
            goto nomem;
    }

    for (size_t i = 0; i < n; i++)
        vals[i] = tr_stepsum_cpu_eff (g[i].row);
    if (put (o, "cpu_eff", spread (vals, n, false)) < 0)
        goto nomem;
    for (size_t i = 0; i < n; i++)
        vals[i] = val_mem (g[i].row);
    if (put (o, "mem_peak_bytes", spread (vals, n, false)) < 0)
        goto nomem;
    if (put_extreme (o, "slowest", g, n, val_elapsed, "elapsed_s") < 0
        || put_extreme (o, "most_memory", g, n, val_mem, "mem_peak_bytes") < 0)
        goto nomem;
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}

static const char *const group_bys[] = { "array", "group", "name" };

json_t *tr_group_summary (const tr_stepsum_t *const *rows,
                          size_t n,
                          const char *by,
                          tr_error_t *error)
{
    enum group_by mode;
    struct gitem *g = NULL;
    struct scratch sc = { NULL, NULL, NULL };
    size_t m = 0;
    json_t *res = NULL, *list;

    for (mode = BY_ARRAY; mode <= BY_NAME; mode++)
        if (by && strcmp (by, group_bys[mode]) == 0)
            break;
    if (mode > BY_NAME) {
        errno = EINVAL;
        tr_errprintf (error,
                      "summary: cannot group by '%s' (array, group or"
                      " name)",
                      by ? by : "");
        return NULL;
    }
    if (!rows && n > 0) {
        errno = EINVAL;
        tr_errprintf (error, "summary: no rows");
        return NULL;
    }
    if (!(g = malloc ((n ? n : 1) * sizeof (*g)))
        || !(sc.vals = malloc ((n ? n : 1) * sizeof (*sc.vals)))
        || !(sc.rows = malloc ((n ? n : 1) * sizeof (*sc.rows)))
        || !(sc.strs = malloc ((n ? n : 1) * sizeof (*sc.strs))))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = rows[i];
        struct gitem *t = &g[m];

        t->row = r;
        t->index = i;
        t->cluster = "";
        if (mode == BY_ARRAY) {
            if (!*r->array_job_id)
                continue;
            t->key = r->array_job_id;
            t->cluster = r->cluster;
        }
        else
            t->key = mode == BY_GROUP ? r->group : r->job_name;
        m++;
    }
    qsort (g, m, sizeof (*g), cmp_gitem);

    if (!(res = json_object ()) || put (res, "by", json_string (by)) < 0
        || put (res, "groups", (list = json_array ())) < 0)
        goto nomem;
    if (mode == BY_ARRAY
        && put (res, "skipped", json_integer ((json_int_t)(n - m))) < 0)
        goto nomem;
    for (size_t i = 0, j; i < m; i = j) {
        for (j = i; j < m && tr_merge_natcmp (g[i].key, g[j].key) == 0
                    && tr_merge_natcmp (g[i].cluster, g[j].cluster) == 0;
             j++)
            ;
        if (push (list, group_json (&g[i], j - i, mode, &sc)) < 0)
            goto nomem;
    }
    goto out;
nomem:
    json_decref (res);
    res = NULL;
    errno = ENOMEM;
    tr_errprintf (error, "summary: out of memory");
out:
    free (g);
    free (sc.vals);
    free (sc.rows);
    free (sc.strs);
    return res;
}

/* --- Group summary text ----------------------------------------------- */

typedef const char *(*fmt_f) (char *buf, size_t size, double v);

static const char *fmt_pct (char *buf, size_t size, double v)
{
    snprintf (buf, size, "%.1f%%", 100 * v);
    return buf;
}

/* "  Label:  min X, mean Y, max Z[, p50 P, p90 Q]" when any is known. */
static void print_spread (FILE *out, const char *label, json_t *sp, fmt_f fmt)
{
    static const char *const keys[] = { "min", "mean", "max", "p50", "p90" };
    char buf[64];

    if (!json_object_get (sp, "min"))
        return;
    fprintf (out, "  %-13s", label);
    for (size_t k = 0; k < sizeof (keys) / sizeof (keys[0]); k++) {
        if (!json_object_get (sp, keys[k]))
            continue;
        fprintf (out, "%s%s %s", k ? ", " : "", keys[k],
                 fmt (buf, sizeof (buf), tr_json_num_or (sp, keys[k], 0)));
    }
    fputc ('\n', out);
}

/* "  Slowest:     job 1238 (1234_4), step batch: 00:05:00" */
static void print_extreme (FILE *out,
                           const char *label,
                           json_t *e,
                           const char *name,
                           fmt_f fmt)
{
    char buf[64];

    if (!json_is_object (e))
        return;
    fprintf (out, "  %-13sjob %s", label, tr_json_str_or (e, "job_id", ""));
    if (json_object_get (e, "array_task_id"))
        fprintf (out, " (%s_%" JSON_INTEGER_FORMAT ")",
                 tr_json_str_or (e, "array_job_id", ""),
                 json_integer_value (json_object_get (e, "array_task_id")));
    fprintf (out, ", step %s: %s\n", tr_json_str_or (e, "step_id", ""),
             fmt (buf, sizeof (buf), tr_json_num_or (e, name, 0)));
}

static void print_histogram (FILE *out, json_t *h)
{
    size_t i, maxc = 0;
    int lw = 0;
    json_t *bin;

    json_array_foreach (h, i, bin)
    {
        int w = (int)strlen (tr_json_str_or (bin, "label", ""));
        size_t c = (size_t)json_integer_value (json_object_get (bin, "count"));

        lw = w > lw ? w : lw;
        maxc = c > maxc ? c : maxc;
    }
    fprintf (out, "  Runtime:\n");
    json_array_foreach (h, i, bin)
    {
        size_t c = (size_t)json_integer_value (json_object_get (bin, "count"));
        /* Round to the nearest character, but never hide a non-empty bin. */
        size_t len = maxc ? (c * HIST_BAR + maxc / 2) / maxc : 0;

        if (c > 0 && len == 0)
            len = 1;
        fprintf (out, "    %-*s |", lw, tr_json_str_or (bin, "label", ""));
        for (size_t k = 0; k < HIST_BAR; k++)
            fputc (k < len ? '#' : ' ', out);
        fprintf (out, " %zu\n", c);
    }
}

static const char *plural (json_int_t n)
{
    return n == 1 ? "" : "s";
}

static void print_group (FILE *out, const char *by, json_t *grp)
{
    json_t *states = json_object_get (grp, "states"), *v;
    const char *k, *sep = "";
    json_int_t count = json_integer_value (json_object_get (grp, "count"));
    json_int_t tasks = json_integer_value (json_object_get (grp, "tasks"));
    json_int_t jobs = json_integer_value (json_object_get (grp, "jobs"));

    if (strcmp (by, "array") == 0) {
        fprintf (out, "Array job %s", tr_json_str_or (grp, "key", ""));
        if (*tr_json_str_or (grp, "cluster", ""))
            fprintf (out, " on %s", tr_json_str_or (grp, "cluster", ""));
        fprintf (out,
                 ": %" JSON_INTEGER_FORMAT " row%s, %" JSON_INTEGER_FORMAT " ta"
                 "sk%"
                 "s"
                 "\n",
                 count, plural (count), tasks, plural (tasks));
    }
    else {
        fprintf (out,
                 "%s %s: %" JSON_INTEGER_FORMAT " row%s, %" JSON_INTEGER_FORMAT
                 " job%s\n",
                 strcmp (by, "group") == 0 ? "Step group" : "Job name",
                 *tr_json_str_or (grp, "key", "")
                     ? tr_json_str_or (grp, "key", "")
                     : "(none)",
                 count, plural (count), jobs, plural (jobs));
    }
    fprintf (out, "  %-13s", "States:");
    json_object_foreach (states, k, v)
    {
        fprintf (out, "%s%s %" JSON_INTEGER_FORMAT, sep,
                 tr_states_name (k, NAN), json_integer_value (v));
        sep = ", ";
    }
    fputc ('\n', out);
    print_spread (out, "Elapsed:", json_object_get (grp, "elapsed_s"),
                  tr_units_duration);
    print_spread (out, "CPU eff.:", json_object_get (grp, "cpu_eff"), fmt_pct);
    print_spread (out, "Memory peak:", json_object_get (grp, "mem_peak_bytes"),
                  tr_units_bytes);
    print_extreme (out, "Slowest:", json_object_get (grp, "slowest"),
                   "elapsed_s", tr_units_duration);
    print_extreme (out, "Most memory:", json_object_get (grp, "most_memory"),
                   "mem_peak_bytes", tr_units_bytes);
    if (json_array_size (json_object_get (grp, "histogram")) > 0)
        print_histogram (out, json_object_get (grp, "histogram"));
}

int tr_group_summary_print (FILE *out, json_t *s)
{
    const char *by = json_string_value (json_object_get (s, "by"));
    json_t *groups = json_object_get (s, "groups"), *grp;
    json_int_t skipped = json_integer_value (json_object_get (s, "skipped"));
    size_t i;

    if (!by || !json_is_array (groups)) {
        errno = EINVAL;
        return -1;
    }
    json_array_foreach (groups, i, grp)
    {
        if (i > 0)
            fputc ('\n', out);
        print_group (out, by, grp);
    }
    if (skipped > 0)
        fprintf (out,
                 "%sSkipped: %" JSON_INTEGER_FORMAT " row%s not of an"
                 " array job\n",
                 json_array_size (groups) ? "\n" : "", skipped,
                 plural (skipped));
    if (ferror (out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* --- Runs ------------------------------------------------------------- */

/* A run is one user's: uid (the user name where the uid is unknown) and
 * run id; then its rows by job and step, so that a job's steps are
 * adjacent.
 */
int tr_runs_cmp_user (const tr_stepsum_t *x, const tr_stepsum_t *y)
{
    int c = tr_stats_cmp (x->uid, y->uid);

    if (!c && isnan (x->uid))
        c = strcmp (x->user, y->user);
    return c;
}

static int cmp_run_key (const tr_stepsum_t *x, const tr_stepsum_t *y)
{
    int c = tr_runs_cmp_user (x, y);

    return c ? c : strcmp (x->run_id, y->run_id);
}

int tr_runs_cmp_rows (const void *pa, const void *pb)
{
    const tr_stepsum_t *x = *(const tr_stepsum_t *const *)pa;
    const tr_stepsum_t *y = *(const tr_stepsum_t *const *)pb;
    int c = cmp_run_key (x, y);

    return c ? c : tr_stepsum_cmp_id (x, y);
}


struct run_out {
    double start;
    json_t *o;
};

static int cmp_run_out (const void *pa, const void *pb)
{
    const struct run_out *a = pa, *b = pb;
    int c = tr_stats_cmp (a->start, b->start);

    return c ? c : strcmp (json_string_value (json_object_get (a->o, "run")),
                           json_string_value (json_object_get (b->o, "run")));
}

/* One run: rows v[0..n-1], sorted by job and step. */
static json_t *run_json (const tr_stepsum_t **v, size_t n,
                         const struct tr_cost *cost, bool priced,
                         tr_strpool_t *pool, double *start_out)
{
    struct acc a;
    tr_stepsum_t job;
    const char *user = "";
    double start = NAN, end = NAN;
    bool running = false;
    size_t failed_steps = 0, failed_jobs = 0, jobs = 0;
    json_t *o;

    const tr_stepsum_t *prev = NULL, *driver = NULL;
    size_t steps = 0;

    memset (&a, 0, sizeof (a));
    tr_stepsum_init (&job);
    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = v[i];
        struct use u;

        /* a node without a name for the uid leaves the user out */
        if (!*user)
            user = r->user;
        if (!isnan (r->start_ms) && (isnan (start) || r->start_ms < start))
            start = r->start_ms;
        if (isnan (r->end_ms))
            running = true;
        else if (isnan (end) || r->end_ms > end)
            end = r->end_ms;
        /* the driver (tracer-run, no scheduler) spans the run but is no
         * job of it: the run's jobs are the scheduler's, as sacct lists
         * them
         */
        if (!strcmp (r->scheduler, "none")) {
            driver = r;
            continue;
        }
        row_use (r, cost, &u);
        acc_add (&a, &u, 1, true, false);
        steps++;
        failed_steps += tr_states_failed (r->state);
        /* a job's state as sacct gives it: the batch step's */
        if (!prev || strcmp (r->cluster, prev->cluster)
            || strcmp (r->job_id, prev->job_id)) {
            if (prev)
                failed_jobs += tr_states_failed (job.state);
            tr_stepsum_init (&job);
            jobs++;
        }
        prev = r;
        if (tr_stepsum_job_add (&job, r, pool) < 0)
            return NULL;
    }
    if (prev)
        failed_jobs += tr_states_failed (job.state);
    a.steps = steps;
    a.jobs = jobs;
    if (!(o = acc_json (&a, false, false, priced)))
        return NULL;
    if (put (o, "run", json_string (v[0]->run_id)) < 0
        || put (o, "pipeline", json_string (v[0]->pipeline)) < 0
        || put (o, "user", json_string (user)) < 0
        || (!isnan (v[0]->uid)
            && put (o, "uid", json_integer ((json_int_t)v[0]->uid)) < 0)
        || (!isnan (start)
            && put (o, "start_unix_ms", json_integer ((json_int_t)start)) < 0)
        || (!running && !isnan (end)
            && put (o, "end_unix_ms", json_integer ((json_int_t)end)) < 0)
        || (!running && !isnan (end) && !isnan (start)
            && put (o, "elapsed_s", json_real ((end - start) / 1000.0)) < 0)
        || put (o, "running", json_boolean (running)) < 0
        || put (o, "failed_jobs", json_integer ((json_int_t)failed_jobs)) < 0
        || put (o, "failed_steps", json_integer ((json_int_t)failed_steps))
               < 0
        || (driver
            && put (o, "driver",
                    json_pack ("{s:s s:s}", "job_id", driver->job_id,
                               "state",
                               tr_stepsum_state_name (driver->state,
                                                      driver->oom_kills)))
                   < 0)) {
        decref_keep_errno (o);
        return NULL;
    }
    *start_out = start;
    return o;
}

json_t *tr_runs (const tr_stepsum_t *const *rows,
                 size_t n,
                 const struct tr_cost *cost,
                 tr_error_t *error)
{
    const tr_stepsum_t **v = NULL;
    struct run_out *out = NULL;
    tr_strpool_t *pool = NULL;
    size_t nv = 0, nout = 0;
    bool priced;
    json_t *res = NULL, *list;

    if (!rows && n > 0) {
        errno = EINVAL;
        tr_errprintf (error, "runs: no rows");
        return NULL;
    }
    if (check_cost (cost, &priced, error) < 0)
        return NULL;
    if (!(v = malloc ((n ? n : 1) * sizeof (*v)))
        || !(out = calloc (n ? n : 1, sizeof (*out)))
        || !(pool = tr_strpool_create ()))
        goto nomem;
    for (size_t i = 0; i < n; i++)
        if (*rows[i]->run_id)
            v[nv++] = rows[i];
    if (nv > 0)
        qsort (v, nv, sizeof (*v), tr_runs_cmp_rows);
    for (size_t i = 0, j; i < nv; i = j) {
        for (j = i + 1; j < nv && cmp_run_key (v[i], v[j]) == 0; j++)
            ;
        if (!(out[nout].o = run_json (v + i, j - i, cost, priced, pool,
                                      &out[nout].start)))
            goto nomem;
        nout++;
    }
    if (nout > 0)
        qsort (out, nout, sizeof (*out), cmp_run_out);
    if (!(res = json_object ())
        || (priced
            && put (res, "currency",
                    json_string (cost->currency ? cost->currency : "")) < 0)
        || put (res, "outside_steps", json_integer ((json_int_t)(n - nv))) < 0
        || put (res, "runs", (list = json_array ())) < 0)
        goto nomem;
    for (size_t i = 0; i < nout; i++) {
        int rc = push (list, out[i].o);

        out[i].o = NULL;
        if (rc < 0)
            goto nomem;
    }
    goto done;
nomem:
    json_decref (res);
    res = NULL;
    errno = ENOMEM;
    tr_errprintf (error, "runs: out of memory");
done:
    for (size_t i = 0; out && i < nout; i++)
        json_decref (out[i].o);
    free (out);
    free (v);
    tr_strpool_destroy (pool);
    return res;
}

/* --- Runs table ------------------------------------------------------- */

enum run_kind {
    RK_STR,
    RK_COUNT,
    RK_TIME,    /* ms since the epoch, local time */
    RK_END,     /* the same; "Unknown" while the run runs */
    RK_SECONDS,
    RK_HOURS,   /* obj.sub, two decimals; unknown when no row had it */
    RK_MONEY,
    RK_WASTE,   /* money's wasted_pct when priced, else core-hours' */
};

static const struct run_field {
    const char *name;
    int width;          /* < 0: left-aligned */
    enum run_kind kind;
    const char *member;
    const char *sub;
    const char *help;
} run_fields[] = {
    { "Run", -25, RK_STR, "run", NULL, "the run id" },
    { "Pipeline", -12, RK_STR, "pipeline", NULL, "the pipeline's name" },
    { "User", -9, RK_STR, "user", NULL, "user name" },
    { "UID", 6, RK_COUNT, "uid", NULL, "numeric user id" },
    { "Start", 19, RK_TIME, "start_unix_ms", NULL, "the first step's start" },
    { "End", 19, RK_END, "end_unix_ms", NULL,
      "the last step's end (Unknown while a step runs)" },
    { "Elapsed", 10, RK_SECONDS, "elapsed_s", NULL, "from start to end" },
    { "Jobs", 5, RK_COUNT, "jobs", NULL, "jobs (each array task one)" },
    { "Steps", 6, RK_COUNT, "steps", NULL, "job steps" },
    { "Failed", 6, RK_COUNT, "failed_jobs", NULL,
      "jobs failed, cancelled, timed out or out of memory" },
    { "FailedSteps", 11, RK_COUNT, "failed_steps", NULL,
      "steps failed, cancelled, timed out or out of memory" },
    { "AllocCPUh", 10, RK_HOURS, "core_hours", "allocated",
      "core-hours allocated (cores x elapsed)" },
    { "UsedCPUh", 10, RK_HOURS, "core_hours", "used", "core-hours used (CPU "
      "time)" },
    { "AllocMemh", 10, RK_HOURS, "gib_hours", "allocated",
      "GiB-hours allocated (memory requested x elapsed)" },
    { "UsedMemh", 10, RK_HOURS, "gib_hours", "used",
      "GiB-hours used (peak memory x elapsed)" },
    { "Cost", 10, RK_MONEY, "money", "allocated",
      "the cost of what was allocated (cost prices)" },
    { "Waste%", 6, RK_WASTE, NULL, NULL, "share of the cost (without "
      "prices: of the core-hours) allocated and not used" },
    { NULL, 0, 0, NULL, NULL, NULL },
};

#define RUNS_DEFAULT_FORMAT "Run,Start,Elapsed,Jobs,Failed,Waste%"
#define RUNS_MAX_COLS 32

/* Hours of obj: "" when every row's were unknown */
static bool run_hours (json_t *run, const char *obj, const char *sub,
                       double *v)
{
    json_t *h = json_object_get (run, obj);
    json_int_t steps = json_integer_value (json_object_get (run, "steps"));
    json_int_t unknown =
        json_integer_value (json_object_get (run, "unknown_allocation"))
        + json_integer_value (json_object_get (run, "unknown_usage"));

    if (!h || !json_is_number (json_object_get (h, sub)))
        return false;
    if (json_object_get (h, "unknown"))
        unknown += json_integer_value (json_object_get (h, "unknown"));
    if (unknown >= steps)
        return false;
    *v = json_number_value (json_object_get (h, sub));
    return true;
}

static void run_cell (char *buf, size_t size, const struct run_field *f,
                      json_t *run)
{
    json_t *m = f->member ? json_object_get (run, f->member) : NULL;
    double v;

    buf[0] = '\0';
    switch (f->kind) {
    case RK_STR:
        snprintf (buf, size, "%s", json_string_value (m) ? json_string_value (m)
                                                         : "");
        break;
    case RK_COUNT:
        if (json_is_integer (m))
            snprintf (buf, size, "%lld", (long long)json_integer_value (m));
        break;
    case RK_END:
        if (json_is_true (json_object_get (run, "running"))) {
            snprintf (buf, size, "Unknown");
            break;
        }
        /* fall through */
    case RK_TIME:
        if (json_is_number (m)) {
            time_t t = (time_t)(json_number_value (m) / 1000.0);
            struct tm tm;

            if (localtime_r (&t, &tm))
                strftime (buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
        }
        break;
    case RK_SECONDS:
        if (json_is_number (m))
            tr_units_duration (buf, size, json_number_value (m));
        break;
    case RK_HOURS:
        if (run_hours (run, f->member, f->sub, &v))
            snprintf (buf, size, "%.2f", v);
        break;
    case RK_MONEY:
        if (json_is_number (json_object_get (m, f->sub)))
            snprintf (buf, size, "%.2f",
                      json_number_value (json_object_get (m, f->sub)));
        break;
    case RK_WASTE:
        m = json_object_get (run, "money");
        if (!m && !run_hours (run, "core_hours", "allocated", &v))
            break;
        if (!m)
            m = json_object_get (run, "core_hours");
        if (json_is_number (json_object_get (m, "wasted_pct")))
            snprintf (buf, size, "%.1f",
                      json_number_value (json_object_get (m, "wasted_pct")));
        break;
    }
}

int tr_runs_print (FILE *out,
                   json_t *runs,
                   const char *format,
                   bool parsable,
                   bool noheader,
                   tr_error_t *error)
{
    const struct run_field *cols[RUNS_MAX_COLS];
    int width[RUNS_MAX_COLS];
    size_t ncols = 0;
    const char *p = format && *format ? format : RUNS_DEFAULT_FORMAT;
    json_t *list = json_object_get (runs, "runs"), *run;
    char buf[512];
    size_t i;

    if (!json_is_array (list)) {
        errno = EINVAL;
        return tr_errprintf (error, "runs: not a tr_runs result");
    }
    while (*p) {
        size_t n = strcspn (p, ",");
        const struct run_field *f = NULL;
        const char *pct = NULL;
        long w = 0;

        /* NAME or NAME%WIDTH; a name may end in '%' itself, and then
         * the width follows it at once or after another (Waste%8,
         * Waste%%8)
         */
        for (const struct run_field *g = run_fields; g->name; g++) {
            size_t len = strlen (g->name);

            if (len > n || strncasecmp (g->name, p, len)
                || (f && len <= strlen (f->name)))
                continue;
            if (len == n || p[len] == '%') {
                f = g;
                pct = len == n ? NULL : p + len;
            }
            else if (g->name[len - 1] == '%') {
                f = g;
                pct = p + len - 1;
            }
        }
        if (f && pct) {
            char *end = NULL;

            w = strtol (pct + 1, &end, 10);
            if (end != p + n || w == 0 || w < -200 || w > 200)
                f = NULL;
        }
        if (!f || ncols == RUNS_MAX_COLS) {
            errno = EINVAL;
            return tr_errprintf (error, "--format: '%.*s' is not a field of "
                                 "--runs (%s)", (int)(n > 64 ? 64 : n), p,
                                 "--helpformat --runs lists them");
        }
        cols[ncols] = f;
        width[ncols++] = pct ? (int)w : f->width;
        p += n;
        if (*p == ',')
            p++;
    }
    if (!noheader) {
        for (size_t c = 0; c < ncols; c++) {
            if (parsable)
                fprintf (out, "%s%s", c ? "|" : "", cols[c]->name);
            else
                fprintf (out, "%s%*s", c ? " " : "", width[c], cols[c]->name);
        }
        fputc ('\n', out);
        for (size_t c = 0; !parsable && c < ncols; c++) {
            int w = abs (width[c]);

            fprintf (out, "%s", c ? " " : "");
            for (int k = 0; k < w; k++)
                fputc ('-', out);
        }
        if (!parsable)
            fputc ('\n', out);
    }
    json_array_foreach (list, i, run) {
        for (size_t c = 0; c < ncols; c++) {
            int w = abs (width[c]);

            run_cell (buf, sizeof (buf), cols[c], run);
            if (parsable)
                fprintf (out, "%s%s", c ? "|" : "", buf);
            else {
                /* too long: cut, '+' at the end, as sacct does */
                if ((int)strlen (buf) > w && w > 0) {
                    buf[w - 1] = '+';
                    buf[w] = '\0';
                }
                fprintf (out, "%s%*s", c ? " " : "", width[c], buf);
            }
        }
        fputc ('\n', out);
    }
    if (ferror (out)) {
        tr_errprintf (error, "writing: %s", strerror (errno));
        return -1;
    }
    return 0;
}

void tr_runs_print_fields (FILE *out)
{
    for (const struct run_field *f = run_fields; f->name; f++)
        fprintf (out, "%-15s %s\n", f->name, f->help);
}

int tr_runs_cell (char *buf, size_t size, json_t *run, const char *field)
{
    for (const struct run_field *f = run_fields; f->name; f++)
        if (!strcasecmp (f->name, field)) {
            run_cell (buf, size, f, run);
            return 0;
        }
    if (size)
        buf[0] = '\0';
    errno = EINVAL;
    return -1;
}
