/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
/* Failures over a period, summed by cause, tool, group, node and user
 * (failures.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "failures.h"
#include "libtracer/record/cause.h"
#include "libtracer/util/json.h"

#define TEXT_ROWS 10

/* map[name] = {"failed": f, "steps": s} */
static int bump (json_t *map, const char *name, bool failed)
{
    json_t *e = json_object_get (map, name);

    if (!e) {
        if (!(e = json_pack ("{s:I s:I}", "failed", (json_int_t)0, "steps",
                             (json_int_t)0))
            || json_object_set_new (map, name, e) < 0)
            return -1;
    }
    if (failed)
        json_object_set_new (e, "failed",
                             json_integer (
                                 json_integer_value (json_object_get (e, "faile"
                                                                         "d"))
                                 + 1));
    return json_object_set_new (
        e, "steps",
        json_integer (json_integer_value (json_object_get (e, "steps")) + 1));
}

static int cmp_entry (const void *pa, const void *pb)
{
    json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    json_int_t fa = tr_json_int_or (a, "failed", 0),
               fb = tr_json_int_or (b, "failed", 0);
    int c;

    if (fa != fb)
        return fa > fb ? -1 : 1;
    if ((c = strcmp (tr_json_str_or (a, "name", ""),
                     tr_json_str_or (b, "name", ""))))
        return c;
    return strcmp (tr_json_str_or (a, "node", ""),
                   tr_json_str_or (b, "node", ""));
}

/* The entries of arr sorted in place. */
static int sort_array (json_t *arr)
{
    size_t n = json_array_size (arr);
    json_t **v;

    if (n < 2)
        return 0;
    if (!(v = calloc (n, sizeof (*v))))
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref (json_array_get (arr, i));
    qsort (v, n, sizeof (*v), cmp_entry);
    json_array_clear (arr);
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new (arr, v[i]) < 0) {
            for (size_t k = i + 1; k < n; k++)
                json_decref (v[k]);
            free (v);
            return -1;
        }
    free (v);
    return 0;
}

/* map → sorted [{"name", "failed"[, "steps"]}] of the keys that failed. */
static json_t *list_of (json_t *map, bool steps)
{
    json_t *arr = json_array (), *e;
    const char *k;

    if (!arr)
        return NULL;
    json_object_foreach (map, k, e)
    {
        json_t *o;
        if (tr_json_int_or (e, "failed", 0) == 0)
            continue;
        o = steps ? json_pack ("{s:s s:I s:I}", "name", k, "failed",
                               tr_json_int_or (e, "failed", 0), "steps",
                               tr_json_int_or (e, "steps", 0))
                  : json_pack ("{s:s s:I}", "name", k, "failed",
                               tr_json_int_or (e, "failed", 0));
        if (!o || json_array_append_new (arr, o) < 0) {
            json_decref (arr);
            return NULL;
        }
    }
    if (sort_array (arr) < 0) {
        json_decref (arr);
        return NULL;
    }
    return arr;
}

/* Each node of a row's list ("n1,n2"), as cb (node, arg). */
static int each_node (const char *list, json_t *map, bool failed)
{
    char buf[256];
    const char *p = *list ? list : "unknown";

    while (*p) {
        size_t len = strcspn (p, ",");
        snprintf (buf, sizeof (buf), "%.*s", (int)(len < 255 ? len : 255), p);
        if (bump (map, buf, failed) < 0)
            return -1;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

json_t *tr_failures (const tr_stepsum_t *const *rows,
                     size_t n,
                     tr_error_t *error)
{
    json_t *cause = json_object (), *tool = json_object ();
    json_t *group = json_object (), *node = json_object ();
    json_t *user = json_object ();
    json_t *gn = json_object (); /* group -> node -> {failed, steps} */
    json_t *out = NULL, *suspects = NULL;
    json_int_t steps = 0, failed = 0;

    if (!rows && n > 0) {
        errno = EINVAL;
        tr_errprintf (error, "no rows");
        goto done;
    }
    if (!cause || !tool || !group || !node || !user || !gn)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const tr_stepsum_t *r = rows[i];
        bool f = *r->cause != '\0';
        json_t *g;

        if (!strcmp (r->step_id, "extern") || !strcmp (r->state, "running")
            || !*r->state)
            continue;
        steps++;
        if (f) {
            failed++;
            /* a scheduler's kill blames no tool (cause.h) */
            if (bump (cause, r->cause, true) < 0
                || (*r->culprit
                    && tr_cause_blames_tool (tr_cause_from_name (r->cause))
                    && bump (tool, r->culprit, true) < 0))
                goto nomem;
        }
        if (bump (group, *r->group ? r->group : "(none)", f) < 0
            || bump (user, *r->user ? r->user : "unknown", f) < 0
            || each_node (r->node, node, f) < 0)
            goto nomem;
        if (!(g = json_object_get (gn, *r->group ? r->group : "(none)"))) {
            if (!(g = json_object ())
                || json_object_set_new (gn, *r->group ? r->group : "(none)", g)
                       < 0)
                goto nomem;
        }
        if (each_node (r->node, g, f) < 0)
            goto nomem;
    }
    if (!(suspects = json_array ()))
        goto nomem;
    {
        const char *gk, *nk;
        json_t *g, *e;

        json_object_foreach (gn, gk, g)
        {
            json_object_foreach (g, nk, e)
            {
                json_int_t ok_else = 0, nodes_ok = 0;
                const char *ok;
                json_t *o;

                if (tr_json_int_or (e, "failed", 0) < TR_FAILURES_SUSPECT_MIN)
                    continue;
                json_object_foreach (g, ok, o)
                {
                    json_int_t good = tr_json_int_or (o, "steps", 0)
                                      - tr_json_int_or (o, "failed", 0);
                    if (!strcmp (ok, nk) || good <= 0)
                        continue;
                    ok_else += good;
                    nodes_ok++;
                }
                if (!ok_else)
                    continue;
                if (json_array_append_new (
                        suspects,
                        json_pack ("{s:s s:s s:I s:I s:I s:I}", "name", gk,
                                   "node", nk, "failed",
                                   tr_json_int_or (e, "failed", 0), "steps",
                                   tr_json_int_or (e, "steps", 0),
                                   "ok_elsewhere", ok_else, "nodes_ok",
                                   nodes_ok))
                    < 0)
                    goto nomem;
            }
        }
        if (sort_array (suspects) < 0)
            goto nomem;
        /* "group" reads better than "name" in a suspect */
        {
            size_t i;
            json_t *s;
            json_array_foreach (suspects, i, s)
            {
                if (json_object_set (s, "group", json_object_get (s, "name"))
                    < 0)
                    goto nomem;
                json_object_del (s, "name");
            }
        }
    }
    if (!(out = json_pack ("{s:I s:I s:o s:o s:o s:o s:o s:O}", "steps", steps,
                           "failed", failed, "by_cause", list_of (cause, false),
                           "by_tool", list_of (tool, false), "by_group",
                           list_of (group, true), "by_node",
                           list_of (node, true), "by_user",
                           list_of (user, true), "suspects", suspects)))
        goto nomem;
    goto done;
nomem:
    errno = ENOMEM;
    tr_errprintf (error, "out of memory");
    json_decref (out);
    out = NULL;
done:
    json_decref (cause);
    json_decref (tool);
    json_decref (group);
    json_decref (node);
    json_decref (user);
    json_decref (gn);
    json_decref (suspects);
    return out;
}

/* Printing */

static void cut (char *buf, size_t size, const char *s, size_t width)
{
    size_t len = strlen (s);

    if (len <= width)
        snprintf (buf, size, "%s", s);
    else
        snprintf (buf, size, "%.*s~", (int)(width - 1), s);
}

static int print_list (FILE *out,
                       json_t *f,
                       const char *key,
                       const char *title,
                       bool steps)
{
    json_t *arr = json_object_get (f, key), *e;
    size_t i;
    char name[64];

    if (!json_array_size (arr))
        return 0;
    fprintf (out, "\n%s:\n", title);
    if (steps)
        fprintf (out, "  %-40s %8s %8s %7s\n", "", "Failed", "Steps", "Rate");
    json_array_foreach (arr, i, e)
    {
        if (i == TEXT_ROWS) {
            fprintf (out, "  ... and %zu more (--json lists them all)\n",
                     json_array_size (arr) - TEXT_ROWS);
            break;
        }
        cut (name, sizeof (name), tr_json_str_or (e, "name", ""), 40);
        if (steps)
            fprintf (out, "  %-40s %8lld %8lld %6.1f%%\n", name,
                     (long long)tr_json_int_or (e, "failed", 0),
                     (long long)tr_json_int_or (e, "steps", 0),
                     tr_json_int_or (e, "steps", 0)
                         ? 100.0 * (double)tr_json_int_or (e, "failed", 0)
                               / (double)tr_json_int_or (e, "steps", 0)
                         : 0.0);
        else
            fprintf (out, "  %-40s %8lld\n", name,
                     (long long)tr_json_int_or (e, "failed", 0));
    }
    return 0;
}

static void print_parsable (FILE *out, json_t *f)
{
    static const char *const keys[] = { "by_cause", "by_tool", "by_group",
                                        "by_node", "by_user" };
    static const char *const sect[] = { "cause", "tool", "group", "node",
                                        "user" };
    json_t *e;
    size_t i;

    fprintf (out, "Section|Name|Node|Failed|Steps|OkElsewhere\n");
    fprintf (out, "total|||%lld|%lld|\n",
             (long long)tr_json_int_or (f, "failed", 0),
             (long long)tr_json_int_or (f, "steps", 0));
    for (size_t k = 0; k < sizeof (keys) / sizeof (keys[0]); k++)
        json_array_foreach (json_object_get (f, keys[k]), i, e)
        {
            fprintf (out, "%s|%s||%lld|", sect[k],
                     tr_json_str_or (e, "name", ""),
                     (long long)tr_json_int_or (e, "failed", 0));
            if (json_object_get (e, "steps"))
                fprintf (out, "%lld",
                         (long long)tr_json_int_or (e, "steps", 0));
            fprintf (out, "|\n");
        }
    json_array_foreach (json_object_get (f, "suspects"), i, e)
    {
        fprintf (out, "suspect|%s|%s|%lld|%lld|%lld\n",
                 tr_json_str_or (e, "group", ""),
                 tr_json_str_or (e, "node", ""),
                 (long long)tr_json_int_or (e, "failed", 0),
                 (long long)tr_json_int_or (e, "steps", 0),
                 (long long)tr_json_int_or (e, "ok_elsewhere", 0));
    }
}

int tr_failures_print (FILE *out, json_t *f, bool parsable)
{
    json_t *e;
    size_t i;

    if (!out || !json_is_object (f)
        || !json_is_array (json_object_get (f, "by_cause"))) {
        errno = EINVAL;
        return -1;
    }
    if (parsable) {
        print_parsable (out, f);
        return ferror (out) ? -1 : 0;
    }
    fprintf (out, "Failures: %lld of %lld step%s",
             (long long)tr_json_int_or (f, "failed", 0),
             (long long)tr_json_int_or (f, "steps", 0),
             tr_json_int_or (f, "steps", 0) == 1 ? "" : "s");
    if (tr_json_int_or (f, "steps", 0))
        fprintf (out, " (%.1f%%)",
                 100.0 * (double)tr_json_int_or (f, "failed", 0)
                     / (double)tr_json_int_or (f, "steps", 0));
    fprintf (out, "\n");
    print_list (out, f, "by_cause", "By cause (doc/diagnosis.md)", false);
    print_list (out, f, "by_tool",
                "By culprit tool (the process that failed "
                "first)",
                false);
    print_list (out, f, "by_group", "By step group", true);
    print_list (out, f, "by_node", "By node", true);
    print_list (out, f, "by_user", "By user", true);
    if (json_array_size (json_object_get (f, "suspects"))) {
        char g[64], n[64];

        fprintf (out, "\nNodes where a step group fails while it succeeds "
                      "elsewhere:\n");
        fprintf (out, "  %-32s %-16s %6s %6s %11s\n", "Group", "Node", "Failed",
                 "Steps", "OK on other");
        json_array_foreach (json_object_get (f, "suspects"), i, e)
        {
            if (i == TEXT_ROWS) {
                fprintf (out, "  ... and %zu more\n",
                         json_array_size (json_object_get (f, "suspects"))
                             - TEXT_ROWS);
                break;
            }
            cut (g, sizeof (g), tr_json_str_or (e, "group", ""), 32);
            cut (n, sizeof (n), tr_json_str_or (e, "node", ""), 16);
            fprintf (out, "  %-32s %-16s %6lld %6lld %5lld on %lld\n", g, n,
                     (long long)tr_json_int_or (e, "failed", 0),
                     (long long)tr_json_int_or (e, "steps", 0),
                     (long long)tr_json_int_or (e, "ok_elsewhere", 0),
                     (long long)tr_json_int_or (e, "nodes_ok", 0));
        }
    }
    return ferror (out) ? -1 : 0;
}
