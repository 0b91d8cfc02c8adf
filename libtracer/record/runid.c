/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Which pipeline run a step belongs to (runid.h, doc/runs.md).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "runid.h"
#include "libtracer/util/strbuf.h"

bool tr_run_id_matches (const char *id, const char *given, bool exact)
{
    size_t n;

    if (!id || !given)
        return false;
    if (!strcmp (id, given))
        return true;
    n = strlen (given);
    return !exact && n > 1 && given[n - 1] == '+' && strlen (id) >= n
           && !strncmp (id, given, n - 1);
}

bool tr_run_name_ok (const char *s)
{
    size_t n = s ? strlen (s) : 0;

    if (n < 1 || n >= TR_RUN_ID_MAX || s[0] == '.' || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'
              || c == '+' || c == '@'))
            return false;
    }
    return true;
}

/* len bytes of s into buf as a name: characters a name may not hold
 * become '_'.
 */
static void set_name (char *buf, size_t size, const char *s, size_t len)
{
    size_t n = 0;

    for (size_t i = 0; i < len && n + 1 < size; i++) {
        char c = s[i];

        buf[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                           || (c >= '0' && c <= '9') || c == '.' || c == '_'
                           || c == '-' || c == '+' || c == '@'
                       ? c : '_';
    }
    buf[n] = '\0';
}

/* s into buf, cut to fit */
static void copy (char *buf, size_t size, const char *s)
{
    size_t n = strlen (s);

    if (n >= size)
        n = size - 1;
    memcpy (buf, s, n);
    buf[n] = '\0';
}

/* The last component of the first len bytes of path. */
static const char *base_of (const char *path, size_t len, size_t *blen)
{
    const char *b = path;

    while (len > 0 && path[len - 1] == '/')
        len--;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            b = path + i + 1;
    *blen = (size_t)(path + len - b);
    return b;
}

static void hash_id (char *buf, size_t size, const char *prefix,
                     const char *s, size_t len)
{
    snprintf (buf, size, "%s-%08" PRIx32, prefix,
              (uint32_t)(tr_str_hash64 (s, len) >> 32));
}

static bool all_hex (const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* DIR/.snakemake/tmp.XXXXXXXX/snakejob.RULE.N.sh */
static bool snakemake_path (const char *cmd, struct tr_run *out)
{
    const char *mark = cmd ? strstr (cmd, "/.snakemake/tmp.") : NULL;
    const char *tmp, *slash, *script, *dot;
    size_t blen;
    const char *b;

    if (!mark || mark == cmd)
        return false;
    tmp = mark + strlen ("/.snakemake/");
    if (!(slash = strchr (tmp, '/')) || slash == tmp + 4
        || strchr (slash + 1, '/'))
        return false;
    script = slash + 1;
    if (strncmp (script, "snakejob.", 9)
        || !(dot = strchr (script + 9, '.')) || dot == script + 9)
        return false;
    hash_id (out->id, sizeof (out->id), "snakemake", cmd,
             (size_t)(slash - cmd));
    b = base_of (cmd, (size_t)(mark - cmd), &blen);
    set_name (out->pipeline, sizeof (out->pipeline), b, blen);
    set_name (out->process, sizeof (out->process), script + 9,
              (size_t)(dot - script - 9));
    return true;
}

/* The same, or .snakemake/tmp.XXXXXXXX/snakejob.RULE.N.sh relative to
 * the job's working directory
 */
static bool snakemake (const char *cmd, const char *dir, struct tr_run *out)
{
    char full[4096];

    if (!cmd)
        return false;
    if (!strncmp (cmd, ".snakemake/tmp.", 15) && dir && dir[0] == '/') {
        int n = snprintf (full, sizeof (full), "%s%s%s", dir,
                          dir[strlen (dir) - 1] == '/' ? "" : "/", cmd);

        return n > 0 && (size_t)n < sizeof (full)
               && snakemake_path (full, out);
    }
    return snakemake_path (cmd, out);
}

/* A process name as Nextflow writes it, from its task name "NAME (TAG)":
 * NAME, whose ':' separate the workflows it is nested in; other
 * characters as set_name keeps them.
 */
static void nextflow_process (char *buf, size_t size, const char *task)
{
    const char *tag = strstr (task, " (");
    size_t len = tag ? (size_t)(tag - task) : strlen (task), n = 0;

    for (size_t i = 0; i < len && n + 1 < size; i++) {
        char c = task[i];
        char keep[2] = { c, '\0' };

        if (c == ':')
            buf[n++] = c;
        else {
            set_name (buf + n, size - n, keep, 1);
            n++;
        }
    }
    buf[n] = '\0';
}

/* nf-PROCESS_(TAG) in WORK/xx/HASH; the process as Nextflow names it
 * when the job script's task name is known (task, NULL: not)
 */
static bool nextflow (const char *name,
                      const char *dir,
                      const char *task,
                      struct tr_run *out)
{
    char proc[600];
    size_t len, wlen, blen;
    const char *b, *hash, *xx;

    if (!name || strncmp (name, "nf-", 3) || !name[3] || !dir)
        return false;
    len = strlen (dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    /* the last two components: 2 and 30 hex digits */
    if (len < 34 + 2 || dir[len - 31] != '/' || dir[len - 34] != '/'
        || !all_hex (dir + len - 30, 30) || !all_hex (dir + len - 33, 2))
        return false;
    hash = dir + len - 30;
    xx = hash - 3;
    wlen = (size_t)(xx - 1 - dir);
    if (wlen == 0)
        return false;
    hash_id (out->id, sizeof (out->id), "nextflow", dir, wlen);
    b = base_of (dir, wlen, &blen);
    if (blen == 4 && !strncmp (b, "work", 4) && b > dir + 1)
        b = base_of (dir, (size_t)(b - 1 - dir), &blen);
    set_name (out->pipeline, sizeof (out->pipeline), b, blen);
    if (task && *task)
        nextflow_process (out->process, sizeof (out->process), task);
    else {
        tr_run_process_name (proc, sizeof (proc), name);
        set_name (out->process, sizeof (out->process), proc, strlen (proc));
    }
    return true;
}

const char *tr_run_process_name (char *buf, size_t size,
                                 const char *job_name)
{
    const char *name = job_name ? job_name : "";
    const char *end;
    size_t len = strlen (name);

    if (!strncmp (name, "nf-", 3) && len > 3) {
        /* nf-NAME_(tag): a process name has no '(', the tag may; the
         * ')' is gone where Nextflow cut a long name at 256 characters
         */
        const char *tag = strstr (name + 3, "_(");

        name += 3;
        len = tag ? (size_t)(tag - name) : strlen (name);
    }
    else if (!strncmp (name, "snakejob.", 9)
             && (end = strchr (name + 9, '.')) && end > name + 9) {
        name += 9;
        len = (size_t)(end - name);
    }
    snprintf (buf, size, "%.*s", (int)len, name);
    return buf;
}

bool tr_run_identify (const struct tr_run_input *in, struct tr_run *out)
{
    char v[300];

    out->id[0] = out->pipeline[0] = out->process[0] = '\0';
    if (in->tags && tr_tags_get (in->tags, "run", v, sizeof (v)) && *v) {
        char proc[600];

        copy (out->id, sizeof (out->id), v);
        if (tr_tags_get (in->tags, "pipeline", v, sizeof (v)))
            copy (out->pipeline, sizeof (out->pipeline), v);
        if (tr_tags_get (in->tags, "process", v, sizeof (v)) && *v)
            copy (out->process, sizeof (out->process), v);
        else {
            /* the job name as the step group has it (a rule, a
             * Nextflow process), without the tag "group"
             */
            tr_run_process_name (proc, sizeof (proc), in->job_name);
            copy (out->process, sizeof (out->process), proc);
        }
        return true;
    }
    if (snakemake (in->command, in->work_dir, out)
        || nextflow (in->job_name, in->work_dir, in->task_name, out))
        return true;
    out->id[0] = out->pipeline[0] = out->process[0] = '\0';
    if (in->array_job_id && *in->array_job_id) {
        char id[300];

        if (in->cluster && *in->cluster)
            snprintf (id, sizeof (id), "array-%s-%s", in->cluster,
                      in->array_job_id);
        else
            snprintf (id, sizeof (id), "array-%s", in->array_job_id);
        set_name (out->id, sizeof (out->id), id, strlen (id));
        set_name (out->process, sizeof (out->process),
                  in->job_name ? in->job_name : "",
                  in->job_name ? strlen (in->job_name) : 0);
        return true;
    }
    return false;
}
