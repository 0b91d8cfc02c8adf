/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Scheduler queries (see jobstate.h).  squeue is asked for the state,
 * the time limit, the account, partition and QOS (names the site
 * chose), the submit and start times, and last the job name, the only user-chosen text: it takes the
 * rest of the line and is never parsed.  The argv holds nothing but a
 * checked job id.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jobstate.h"
#include "libtracer/record/record.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/util/nss.h"
#include "libtracer/util/strbuf.h"

extern char **environ;

#define OUT_MAX 4096
#define DETAIL_MAX 65536
#define SCRIPT_MAX 16384 /* the head of a job script: its header lines */

/* Stage 0 runs squeue into out; stage 1 scontrol into detail; stage 2,
 * for a Nextflow job, "scontrol write batch_script" into script.
 */
struct tr_jobstate_query {
    pid_t pid;
    int fd;
    int stage;
    int status;          /* squeue's wait status, once reaped */
    int dstatus;         /* scontrol's */
    char out[OUT_MAX];
    size_t len;
    char *detail;
    size_t dlen;
    char *script;
    size_t slen;
    int sstatus;         /* scontrol write batch_script's */
    char *scontrol;
    char job[24];
    char djob[72]; /* scontrol's name of the job ("": job) */
    char tag[17]; /* what every answer in squeue's output starts with */
};

static int parse_num (const char **p, long *out)
{
    char *end;
    long v;

    if (**p < '0' || **p > '9')
        return -1;
    errno = 0;
    v = strtol (*p, &end, 10);
    if (errno || v < 0 || v > 1000000)
        return -1;
    *p = end;
    *out = v;
    return 0;
}

long tr_jobstate_parse_limit (const char *text)
{
    const char *p = text;
    long days = 0, f[3];
    int n = 0;

    if (!text || !*text)
        return -1;
    if (strchr (text, '-')) {
        if (parse_num (&p, &days) < 0 || *p++ != '-')
            return -1;
    }
    while (n < 3) {
        if (parse_num (&p, &f[n]) < 0)
            return -1;
        n++;
        if (*p != ':')
            break;
        p++;
    }
    if (*p)
        return -1;
    if (text != p && strchr (text, '-')) {
        /* D-HH, D-HH:MM, D-HH:MM:SS */
        long h = f[0], m = n > 1 ? f[1] : 0, s = n > 2 ? f[2] : 0;
        return ((days * 24 + h) * 60 + m) * 60 + s;
    }
    switch (n) {
    case 1:
        return f[0] * 60;                           /* MM */
    case 2:
        return f[0] * 60 + f[1];                    /* MM:SS */
    default:
        return (f[0] * 60 + f[1]) * 60 + f[2];      /* HH:MM:SS */
    }
}

/* Copy the field at *p up to the next '|' (or the end of the line when
 * last) into buf, "(null)" as "", and step past it.
 */
/* Does line start as a line of squeue's answer does ("RUNNING|")? */
static bool state_line (const char *line)
{
    size_t n = strspn (line, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");

    return n > 0 && line[n] == '|';
}

/* The job name: the rest of the line, and of every further line that
 * is not another answer's (a name may hold newlines; the record cuts and
 * flags them).
 */
static size_t name_len (const char *p)
{
    size_t n = strcspn (p, "\n");

    while (p[n] == '\n' && p[n + 1] && !state_line (p + n + 1))
        n += 1 + strcspn (p + n + 1, "\n");
    return n;
}

/* last: the name, up to name_len; whole: the name is all that is left
 * of one tagged answer (its one trailing newline aside).
 */
static void take_field (const char **p, char *buf, size_t size, bool last,
                        bool whole)
{
    size_t n = !last   ? strcspn (*p, "|\n")
               : whole ? strlen (*p) - (**p && (*p)[strlen (*p) - 1] == '\n')
                       : name_len (*p);
    size_t keep = n < size ? n : size - 1;

    memcpy (buf, *p, keep);
    buf[keep] = '\0';
    if (!strcmp (buf, "(null)"))
        buf[0] = '\0';
    *p += n;
    if (**p == '|')
        (*p)++;
}

/* squeue's %V or %S, local time "YYYY-MM-DDTHH:MM:SS", as Unix ms, or
 * -1 for "N/A", "Unknown", "None" or anything else that is not a time.
 */
long long tr_jobstate_parse_time (const char *text)
{
    struct tm tm;
    const char *end;
    time_t t;

    memset (&tm, 0, sizeof (tm));
    if (strlen (text) != 19 || !(end = strptime (text, "%Y-%m-%dT%H:%M:%S",
                                                  &tm))
        || *end)
        return -1;
    tm.tm_isdst = -1;
    if ((t = mktime (&tm)) == (time_t)-1 || t < 0)
        return -1;
    return (long long)t * 1000;
}

static int parse_fields (const char *line, struct tr_jobstate *out,
                         bool whole, tr_error_t *error)
{
    char when[64];
    const char *bar = strchr (line, '|');
    const char *p;
    size_t n;
    char limit[64];

    out->account[0] = out->partition[0] = out->qos[0] = '\0';
    out->job_name[0] = out->array_job[0] = out->job_id[0] = '\0';
    out->submit_ms = out->start_ms = -1;
    out->array_task = -1;

    if (!bar)
        return tr_errprintf (error, "squeue output has no '|'");
    n = (size_t)(bar - line);
    if (n == 0 || n >= sizeof (out->state))
        return tr_errprintf (error, "squeue output: bad state");
    for (size_t i = 0; i < n; i++)
        if (!((line[i] >= 'A' && line[i] <= 'Z') || line[i] == '_'))
            return tr_errprintf (error, "squeue output: bad state");
    memcpy (out->state, line, n);
    out->state[n] = '\0';
    n = strcspn (bar + 1, "|\n");
    if (n >= sizeof (limit))
        return tr_errprintf (error, "squeue output: bad time limit");
    memcpy (limit, bar + 1, n);
    limit[n] = '\0';
    out->time_limit_s = tr_jobstate_parse_limit (limit);
    if (!strcmp (limit, "UNLIMITED") || !strcmp (limit, "INFINITE")
        || out->time_limit_s == TR_JOBSTATE_YEAR_S)
        out->time_limit_s = TR_JOBSTATE_UNLIMITED;
    /* older two-field output ends here */
    p = bar + 1 + strcspn (bar + 1, "|\n");
    if (*p != '|')
        return 0;
    p++;
    take_field (&p, out->account, sizeof (out->account), false, false);
    take_field (&p, out->partition, sizeof (out->partition), false, false);
    take_field (&p, out->qos, sizeof (out->qos), false, false);
    take_field (&p, when, sizeof (when), false, false);
    out->submit_ms = tr_jobstate_parse_time (when);
    take_field (&p, when, sizeof (when), false, false);
    out->start_ms = tr_jobstate_parse_time (when);
    /* an array task's array (%F) and index (%K, "N/A" for other jobs) */
    take_field (&p, out->array_job, sizeof (out->array_job), false, false);
    take_field (&p, when, sizeof (when), false, false);
    if (*when && strspn (when, "0123456789") == strlen (when)
        && strlen (when) < 10 && *out->array_job
        && strspn (out->array_job, "0123456789") == strlen (out->array_job))
        out->array_task = strtol (when, NULL, 10);
    else
        out->array_job[0] = '\0';
    take_field (&p, out->job_id, sizeof (out->job_id), false, false);
    if (strspn (out->job_id, "0123456789") != strlen (out->job_id))
        out->job_id[0] = '\0';
    take_field (&p, out->job_name, sizeof (out->job_name), true, whole);
    return 0;
}

int tr_jobstate_parse_line (const char *line,
                         struct tr_jobstate *out,
                         tr_error_t *error)
{
    return parse_fields (line, out, false, error);
}

int tr_jobstate_parse_tagged (const char *text,
                              const char *tag,
                              const char *job,
                              struct tr_jobstate *out,
                              tr_error_t *error)
{
    size_t tl = strlen (tag), claims = 0;
    const char *p = text;

    if (tl == 0 || strncmp (text, tag, tl) || text[tl] != '|') {
        errno = EPROTO;
        return tr_errprintf (error, "squeue's answer is not in the form "
                             "asked for");
    }
    /* an answer runs from its tag to the next line that starts with it:
     * a name cannot make one, since it cannot know the tag
     */
    while (p) {
        const char *body = p + tl + 1, *end;
        struct tr_jobstate one;
        char *rec;

        for (end = strchr (body, '\n'); end; end = strchr (end + 1, '\n'))
            if (!strncmp (end + 1, tag, tl) && end[1 + tl] == '|')
                break;
        if (!(rec = strndup (body, end ? (size_t)(end + 1 - body)
                                       : strlen (body)))) {
            errno = ENOMEM;
            return tr_errprintf (error, "out of memory");
        }
        if (parse_fields (rec, &one, true, NULL) == 0
            && !strcmp (one.job_id, job) && claims++ == 0)
            *out = one;
        free (rec);
        p = end ? end + 1 : NULL;
    }
    if (claims == 1)
        return 0;
    if (claims) {
        errno = EPROTO;
        return tr_errprintf (error, "squeue's answer has %zu answers for "
                             "job %s", claims, job);
    }
    errno = ENOENT;
    return tr_errprintf (error, "squeue's answer has no line for job %s",
                         job);
}

int tr_jobstate_parse_answer (const char *text,
                              const char *job,
                              struct tr_jobstate *out,
                              tr_error_t *error)
{
    struct tr_jobstate line;
    const char *p = text, *mine = NULL;
    size_t claims = 0, named = 0;

    /* each answer line starts as one does; a name's further lines not */
    while (p && *p) {
        if (tr_jobstate_parse_line (p, &line, NULL) == 0 && *line.job_id) {
            named++;
            if (!strcmp (line.job_id, job)) {
                claims++;
                mine = p;
            }
        }
        p = strchr (p, '\n');
        while (p && p[1] && !state_line (p + 1))
            p = strchr (p + 1, '\n');
        p = p ? p + 1 : NULL;
    }
    if (named == 0)
        return tr_jobstate_parse_line (text, out, error);
    if (claims > 1) {
        errno = EPROTO;
        return tr_errprintf (error, "squeue's answer has %zu lines for job "
                             "%s (a job name made one)", claims, job);
    }
    if (!mine) {
        errno = ENOENT;
        return tr_errprintf (error, "squeue's answer has no line for job %s",
                             job);
    }
    return tr_jobstate_parse_line (mine, out, error);
}

/* text as a JSON string: each byte that is not part of well-formed UTF-8
 * becomes SUB (0x1a), a control character, which the record's clipping
 * turns into '?' and names in identity.truncated (the other members of
 * the answer stay)
 */
static json_t *utf8_string (const char *text)
{
    size_t n = strlen (text), i = 0;
    char *copy;
    json_t *v;

    if (!(copy = strdup (text)))
        return NULL;
    while (i < n) {
        uint32_t cp;
        size_t len = tr_utf8_char ((const unsigned char *)copy + i, n - i,
                                   &cp);
        if (len == 0)
            copy[i++] = 0x1a;
        else
            i += len;
    }
    v = json_string (copy);
    free (copy);
    return v;
}

json_t *tr_jobstate_fields (const struct tr_jobstate *job)
{
    const struct {
        const char *key, *value;
    } f[] = {
        { "account", job->account },
        { "partition", job->partition },
        { "qos", job->qos },
        { "job_name", job->job_name },
    };
    json_t *o = json_object ();

    for (size_t i = 0; o && i < sizeof (f) / sizeof (f[0]); i++)
        if (f[i].value[0]
            && json_object_set_new (o, f[i].key, utf8_string (f[i].value))
                   < 0) {
            json_decref (o);
            o = NULL;
        }
    if (o && job->time_limit_s >= 0
        && json_object_set_new (o, "time_limit_s",
                                json_integer (job->time_limit_s)) < 0) {
        json_decref (o);
        o = NULL;
    }
    if (o && job->time_limit_s == TR_JOBSTATE_UNLIMITED
        && json_object_set_new (o, "time_limit", json_string ("UNLIMITED"))
               < 0) {
        json_decref (o);
        o = NULL;
    }
    if (o && job->array_task >= 0
        && (json_object_set_new (o, "array_job_id",
                                 json_string (job->array_job)) < 0
            || json_object_set_new (o, "array_task_id",
                                    json_integer (job->array_task)) < 0)) {
        json_decref (o);
        o = NULL;
    }
    if (o && job->submit_ms >= 0
        && json_object_set_new (o, "submit_unix_ms",
                                json_integer (job->submit_ms)) < 0) {
        json_decref (o);
        o = NULL;
    }
    if (o && job->start_ms >= 0
        && json_object_set_new (o, "job_start_unix_ms",
                                json_integer (job->start_ms)) < 0) {
        json_decref (o);
        o = NULL;
    }
    if (!o)
        errno = ENOMEM;
    return o;
}

int tr_jobstate_mark_unknown (json_t *identity, json_t *request,
                              const char *why)
{
    static const char *const from_identity[] = { "account", "partition",
                                                 "qos", "job_name" };
    json_t *unknown = json_object ();
    char text[257];
    int rc = 0;

    if (!unknown) {
        errno = ENOMEM;
        return -1;
    }
    /* at most the record's bound, cut where well-formed UTF-8 ends */
    snprintf (text, sizeof (text), "%s", why && *why ? why : "not known");
    for (size_t i = 0, n = strlen (text), len; i < n; i += len) {
        uint32_t cp;
        if ((len = tr_utf8_char ((const unsigned char *)text + i, n - i,
                                 &cp)) == 0) {
            text[i] = '\0';
            break;
        }
    }
    for (size_t i = 0; i < sizeof (from_identity) / sizeof (*from_identity);
         i++)
        if (!json_object_get (identity, from_identity[i])
            && json_object_set_new (unknown, from_identity[i],
                                    json_string (text)) < 0)
            rc = -1;
    if (request && !json_object_get (request, "time_limit_s")
        && !json_object_get (request, "time_limit")
        && json_object_set_new (unknown, "time_limit_s", json_string (text))
               < 0)
        rc = -1;
    if (rc == 0 && json_object_size (unknown)
        && json_object_set (identity, "unknown", unknown) < 0)
        rc = -1;
    json_decref (unknown);
    if (rc < 0)
        errno = ENOMEM;
    return rc;
}

int tr_jobstate_apply_fields (json_t *fields, json_t *identity,
                              json_t *request)
{
    const char *key;
    json_t *v;

    json_object_foreach (fields, key, v)
    {
        json_t *to = strcmp (key, "time_limit_s") && strcmp (key, "time_limit")
                         ? identity : request;
        if (!strcmp (key, "gres_nodes") || !strcmp (key, "submit_unix_ms")
            || !strcmp (key, "job_start_unix_ms"))
            continue;
        if (to && json_object_set (to, key, v) < 0) {
            errno = ENOMEM;
            return -1;
        }
    }
    if (identity && tr_record_clip_identity (identity) < 0)
        return -1;
    return 0;
}

int tr_jobstate_apply_time (json_t *fields, json_t *time)
{
    static const char *const keys[] = { "submit_unix_ms",
                                        "job_start_unix_ms" };

    for (size_t i = 0; i < sizeof (keys) / sizeof (keys[0]); i++) {
        json_t *v = json_object_get (fields, keys[i]);
        if (json_is_integer (v) && json_integer_value (v) >= 0 && time
            && json_object_set (time, keys[i], v) < 0) {
            errno = ENOMEM;
            return -1;
        }
    }
    return 0;
}

int tr_jobstate_slurm_cluster (const char *slurm_conf, char *buf,
                               size_t size)
{
    FILE *f = slurm_conf ? fopen (slurm_conf, "re") : NULL;
    char line[1024];
    int rc = -1;

    if (!f) {
        errno = ENOENT;
        return -1;
    }
    errno = ENOENT;
    while (fgets (line, sizeof (line), f)) {
        char *p = line, *v;
        size_t n;
        line[strcspn (line, "#\n")] = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncasecmp (p, "ClusterName", 11) != 0)
            continue;
        p += 11;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p++ != '=')
            continue;
        while (*p == ' ' || *p == '\t')
            p++;
        v = p;
        n = strcspn (v, " \t");
        v[n] = '\0';
        for (char *c = v; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        if (n >= size || !tr_record_id_is_safe (v)) {
            errno = EINVAL;
            rc = -1;
            break;
        }
        memcpy (buf, v, n + 1);
        rc = 0;    /* the last one counts, as in Slurm */
    }
    fclose (f);
    if (rc == 0)
        errno = 0;
    return rc;
}

/* identity[key] = the name of user (or group) id on this node, when it
 * has one; -1 with errno ENOMEM only.
 */
static int set_name (json_t *identity, const char *key, json_int_t id,
                     bool user)
{
    char *name = NULL;
    int rc;

    if (id < 0 || id > (json_int_t)UINT32_MAX - 1)
        return 0;
    rc = user ? tr_nss_user_by_uid ((uid_t)id, &name, NULL)
              : tr_nss_group_by_gid ((gid_t)id, &name);
    if (rc < 0)
        return errno == ENOMEM ? -1 : 0;
    if (*name && json_object_set_new (identity, key, json_string (name)) < 0) {
        free (name);
        errno = ENOMEM;
        return -1;
    }
    free (name);
    return 0;
}

int tr_jobstate_trust_identity (json_t *identity, const char *cluster)
{
    static const char *const from_env[] = {
        "cluster", "user", "group", "account", "partition", "qos", "job_name",
        "command", "work_dir", "task_name",
    };
    const char *sched;

    if (!json_is_object (identity)) {
        errno = EINVAL;
        return -1;
    }
    sched = json_string_value (json_object_get (identity, "scheduler"));
    /* only this daemon says what it cut or could not have */
    (void)json_object_del (identity, "truncated");
    (void)json_object_del (identity, "unknown");
    if (sched && !strcmp (sched, "slurm")) {
        for (size_t i = 0; i < sizeof (from_env) / sizeof (from_env[0]); i++)
            (void)json_object_del (identity, from_env[i]);
        if (cluster
            && json_object_set_new (identity, "cluster", json_string (cluster))
                   < 0) {
            errno = ENOMEM;
            return -1;
        }
    }
    if ((!json_object_get (identity, "user")
         && json_is_integer (json_object_get (identity, "uid"))
         && set_name (identity, "user",
                      json_integer_value (json_object_get (identity, "uid")),
                      true) < 0)
        || (!json_object_get (identity, "group")
            && json_is_integer (json_object_get (identity, "gid"))
            && set_name (identity, "group",
                         json_integer_value (json_object_get (identity, "gid")),
                         false) < 0))
        return -1;
    return tr_record_clip_identity (identity) < 0 ? -1 : 0;
}

_Static_assert (TR_JOBSTATE_YEAR_S == TR_STEPSUM_SLURM_YEAR_S,
                "the listing's 365 days are the controller's");

/* Append the indexes of an IDX list ("0-1,3") to buf as "0,1,3".
 * -1 on anything else ("N/A", bad ranges, too many).
 */
static int add_indexes (const char *p, size_t n, char *buf, size_t size)
{
    const char *end = p + n;

    while (p < end) {
        long lo, hi;
        if (parse_num (&p, &lo) < 0)
            return -1;
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            if (parse_num (&p, &hi) < 0 || hi < lo || hi - lo > 1024)
                return -1;
        }
        if (p > end || (p < end && *p != ','))
            return -1;
        if (p < end)
            p++;
        for (long i = lo; i <= hi; i++) {
            size_t len = strlen (buf);
            int w = snprintf (buf + len, size - len, "%s%ld", len ? "," : "",
                              i);
            if (w < 0 || (size_t)w >= size - len)
                return -1;
        }
    }
    return 0;
}

/* The GPUs of one GRES= value ("gpu:a100:2(IDX:0-1),mps:100(0)"):
 * 0 with buf ("" for none), -1 when it does not say which.
 */
static int gres_gpus (const char *v, char *buf, size_t size)
{
    buf[0] = '\0';
    while (*v) {
        int depth = 0;
        size_t n = 0;
        /* one entry: up to a ',' outside parentheses */
        while (v[n] && (depth || v[n] != ',')) {
            if (v[n] == '(')
                depth++;
            else if (v[n] == ')' && depth)
                depth--;
            n++;
        }
        if (n >= 4 && !strncmp (v, "gpu", 3) && (v[3] == ':' || v[3] == '(')) {
            const char *idx = strstr (v, "(IDX:");
            const char *close;
            if (!idx || idx >= v + n || !(close = strchr (idx, ')'))
                || close >= v + n
                || add_indexes (idx + 5, (size_t)(close - idx - 5), buf, size)
                       < 0)
                return -1;
        }
        v += n;
        if (*v == ',')
            v++;
    }
    return 0;
}

json_t *tr_jobstate_parse_detail (const char *text)
{
    json_t *pairs = json_array ();
    const char *line = text;

    while (pairs && line && *line) {
        const char *eol = strchr (line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen (line);
        char buf[4096], gpus[1024], *save = NULL, *tok, *nodes = NULL;
        const char *gres = NULL;
        int rc = -1;
        const char *p = line;

        while (*p == ' ')
            p++;
        if (len < sizeof (buf) && !strncmp (p, "Nodes=", 6)) {
            memcpy (buf, line, len);
            buf[len] = '\0';
            for (tok = strtok_r (buf, " ", &save); tok;
                 tok = strtok_r (NULL, " ", &save)) {
                if (!strncmp (tok, "Nodes=", 6) && !nodes)
                    nodes = tok + 6;
                else if (!strncmp (tok, "GRES=", 5))
                    gres = tok + 5;
            }
            if (nodes && *nodes && gres) {
                rc = gres_gpus (gres, gpus, sizeof (gpus));
                if (json_array_append_new (
                        pairs, json_pack ("[s,o]", nodes,
                                          rc == 0 ? json_string (gpus)
                                                  : json_null ()))
                    < 0) {
                    json_decref (pairs);
                    pairs = NULL;
                }
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    if (!pairs)
        errno = ENOMEM;
    return pairs;
}

/* The value of the one line "   KEY=VALUE" of text, or NULL when no line
 * or more than one has it (a second is the job's own text: its name or
 * comment with a newline).
 */
static json_t *detail_value (const char *text, const char *key)
{
    size_t klen = strlen (key);
    const char *line = text, *found = NULL;
    size_t flen = 0;

    while (line && *line) {
        const char *eol = strchr (line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen (line);
        const char *p = line;

        while (*p == ' ' && p < line + len)
            p++;
        if ((size_t)(line + len - p) > klen && !strncmp (p, key, klen)
            && p[klen] == '=') {
            if (found)
                return NULL;
            found = p + klen + 1;
            flen = (size_t)(line + len - found);
        }
        line = eol ? eol + 1 : NULL;
    }
    if (!found || flen == 0 || flen > TR_JOBSTATE_TEXT
        || (flen == 6 && !strncmp (found, "(null)", 6)))
        return NULL;
    return json_stringn (found, flen);
}

/* Nextflow's job name for a task name: "nf-" and the name with
 * ' ', '/', ':', '@', '*', '?', '=', tab, newline and carriage return
 * made '_', cut at 256 characters (its Slurm executor's getJobNameFor
 * and sanitizeJobName).
 */
static void nextflow_job_name (const char *task, char *buf, size_t size)
{
    size_t n = 0;

    for (const char *p = "nf-"; *p && n + 1 < size; p++)
        buf[n++] = *p;
    for (const char *p = task; *p && n + 1 < size && n < 256; p++)
        buf[n++] = strchr (" /:@*?=\t\n\r", *p) ? '_' : *p;
    buf[n] = '\0';
}

bool tr_jobstate_nextflow_task (const char *script,
                                const char *job_name,
                                char *buf,
                                size_t size)
{
    const char *line = script;
    char name[TR_JOBSTATE_TEXT + 1], made[TR_JOBSTATE_TEXT + 64];

    for (int i = 0; line && *line && i < 100; i++) {
        const char *eol = strchr (line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen (line);

        if (len > 12 && !strncmp (line, "### name: '", 11)
            && line[len - 1] == '\'' && len - 12 < sizeof (name)) {
            memcpy (name, line + 11, len - 12);
            name[len - 12] = '\0';
            nextflow_job_name (name, made, sizeof (made));
            /* only the name the job itself was named after */
            if (!job_name || strcmp (made, job_name)
                || strlen (name) >= size)
                return false;
            snprintf (buf, size, "%s", name);
            return true;
        }
        line = eol ? eol + 1 : NULL;
    }
    return false;
}

json_t *tr_jobstate_parse_paths (const char *text)
{
    static const struct {
        const char *line, *key;
    } keys[] = { { "Command", "command" }, { "WorkDir", "work_dir" } };
    json_t *o = json_object ();

    for (size_t i = 0; o && text && i < sizeof (keys) / sizeof (keys[0]);
         i++) {
        json_t *v = detail_value (text, keys[i].line);

        if (v && json_object_set_new (o, keys[i].key, v) < 0) {
            json_decref (o);
            o = NULL;
        }
    }
    if (!o)
        errno = ENOMEM;
    return o;
}

/* Does one hostlist item ("n[01-04,7]x", "n3") name node?  One bracket
 * at most; anything fancier names nothing.
 */
static bool item_has (const char *item, size_t n, const char *node)
{
    const char *open = memchr (item, '[', n), *close, *r;
    size_t pre, post, nlen = strlen (node), dlen;
    const char *digits;
    long v;
    char *end;

    if (!open)
        return n == nlen && !strncmp (item, node, n);
    if (!(close = memchr (open, ']', n - (size_t)(open - item)))
        || memchr (close, '[', n - (size_t)(close - item)))
        return false;
    pre = (size_t)(open - item);
    post = n - (size_t)(close - item) - 1;
    if (nlen <= pre + post || strncmp (node, item, pre)
        || strncmp (node + nlen - post, close + 1, post))
        return false;
    digits = node + pre;
    dlen = nlen - pre - post;
    if (strspn (digits, "0123456789") < dlen)
        return false;
    errno = 0;
    v = strtol (digits, &end, 10);
    if (errno || end != digits + dlen)
        return false;
    for (r = open + 1; r < close;) {
        const char *q = r;
        long lo, hi;
        size_t width;
        bool padded;
        while (q < close && *q >= '0' && *q <= '9')
            q++;
        width = (size_t)(q - r);
        padded = width > 1 && *r == '0';
        if (!width || parse_num (&r, &lo) < 0)
            return false;
        hi = lo;
        if (*r == '-') {
            r++;
            if (parse_num (&r, &hi) < 0)
                return false;
        }
        if (r > close || (r < close && *r != ','))
            return false;
        /* "n[01-04]" pads to the width of its bounds; "n[1-10]" does not */
        if (v >= lo && v <= hi
            && (dlen == width || (!padded && digits[0] != '0')))
            return true;
        if (r < close)
            r++;
    }
    return false;
}

bool tr_jobstate_hostlist_has (const char *list, const char *node)
{
    const char *p = list;

    if (!list || !node || !*node)
        return false;
    while (*p) {
        size_t n = 0;
        int depth = 0;
        while (p[n] && (depth || p[n] != ',')) {
            if (p[n] == '[')
                depth++;
            else if (p[n] == ']' && depth)
                depth--;
            n++;
        }
        if (item_has (p, n, node))
            return true;
        p += n;
        if (*p == ',')
            p++;
    }
    return false;
}

int tr_jobstate_node_gpus (json_t *pairs, const char *node, char *buf,
                           size_t size)
{
    const char *found = NULL;
    size_t i;
    json_t *pair;

    json_array_foreach (pairs, i, pair)
    {
        json_t *g = json_array_get (pair, 1);
        if (!tr_jobstate_hostlist_has (
                json_string_value (json_array_get (pair, 0)), node))
            continue;
        /* the controller's own line is always there: another that says
         * something else was written by the job (its name, its paths)
         */
        if (!json_is_string (g)
            || (found && strcmp (found, json_string_value (g))))
            return -1;
        found = json_string_value (g);
    }
    if (!found || strlen (found) >= size)
        return -1;
    snprintf (buf, size, "%s", found);
    return buf[0] ? 1 : 0;
}

/* Start path with argv, stdout on a new non-blocking pipe (*fd), stdin
 * and stderr on /dev/null, and an environment of PATH and SLURM_CONF.
 */
static int spawn (const char *path, char *const argv[], const char *extra,
                  pid_t *pid, int *fd, tr_error_t *error)
{
    char conf[4096];
    char *envp[] = { (char *)"PATH=/usr/bin:/bin", NULL, NULL, NULL };
    const char *sc = getenv ("SLURM_CONF");
    posix_spawn_file_actions_t fa;
    int p[2], rc, k = 1;

    if (sc && *sc
        && (size_t)snprintf (conf, sizeof (conf), "SLURM_CONF=%s", sc)
               < sizeof (conf))
        envp[k++] = conf;
    if (extra)
        envp[k++] = (char *)extra;
    if (pipe2 (p, O_CLOEXEC | O_NONBLOCK) < 0)
        return tr_errprintf (error, "pipe: %s", strerror (errno));
    if ((rc = posix_spawn_file_actions_init (&fa)) != 0)
        goto fail;
    /* dup2 clears FD_CLOEXEC on the copy; the child's stdout blocks */
    if ((rc = posix_spawn_file_actions_addopen (&fa, 0, "/dev/null",
                                                O_RDONLY, 0)) != 0
        || (rc = posix_spawn_file_actions_adddup2 (&fa, p[1], 1)) != 0
        || (rc = posix_spawn_file_actions_addopen (&fa, 2, "/dev/null",
                                                   O_WRONLY, 0)) != 0) {
        posix_spawn_file_actions_destroy (&fa);
        goto fail;
    }
    rc = posix_spawn (pid, path, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy (&fa);
    if (rc != 0)
        goto fail;
    close (p[1]);
    *fd = p[0];
    return 0;
fail:
    close (p[0]);
    close (p[1]);
    errno = rc;
    return tr_errprintf (error, "%s: %s", path, strerror (rc));
}

/* A query of job, nothing started: no pipe, no status yet. */
static tr_jobstate_query_t *query_new (const char *job, tr_error_t *error)
{
    tr_jobstate_query_t *q = calloc (1, sizeof (*q));

    if (!q) {
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    q->fd = -1;
    q->status = -1;
    q->dstatus = -1;
    q->sstatus = -1;
    snprintf (q->job, sizeof (q->job), "%s", job);
    return q;
}

tr_jobstate_query_t *tr_jobstate_query_start (const char *squeue,
                                        const char *job,
                                        tr_error_t *error)
{
    return tr_jobstate_query_start_detail (squeue, NULL, job, error);
}

tr_jobstate_query_t *tr_jobstate_query_start_detail (const char *squeue,
                                                     const char *scontrol,
                                                     const char *job,
                                                     tr_error_t *error)
{
    char jobs[64], format[128];
    char *argv[] = { (char *)squeue, (char *)"--noheader",
                     (char *)"--states=all", jobs, NULL };
    tr_jobstate_query_t *q;
    size_t n = job ? strlen (job) : 0;
    unsigned char rnd[8];

    if (n == 0 || n > 20 || strspn (job, "0123456789") != n) {
        errno = EINVAL;
        tr_errprintf (error, "job id is not a number");
        return NULL;
    }
    snprintf (jobs, sizeof (jobs), "--jobs=%s", job);
    if (!(q = query_new (job, error)))
        return NULL;
    if (scontrol && !(q->scontrol = strdup (scontrol))) {
        free (q);
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    /* Every answer starts with a tag new to this query, which the job
     * cannot know (it is in squeue's environment, which only root reads,
     * not on its command line): a job name holding newlines cannot make
     * an answer of its own (tr_jobstate_parse_tagged).
     */
    if (getrandom (rnd, sizeof (rnd), 0) != (ssize_t)sizeof (rnd)) {
        int e = errno;
        free (q->scontrol);
        free (q);
        errno = e;
        tr_errprintf (error, "getrandom: %s", strerror (e));
        return NULL;
    }
    for (size_t i = 0; i < sizeof (rnd); i++)
        snprintf (q->tag + 2 * i, 3, "%02x", rnd[i]);
    snprintf (format, sizeof (format),
              "SQUEUE_FORMAT=%s|%%T|%%l|%%a|%%P|%%q|%%V|%%S|%%F|%%K|%%A|%%j",
              q->tag);
    if (spawn (squeue, argv, format, &q->pid, &q->fd, error) < 0) {
        int e = errno;
        free (q->scontrol);
        free (q);
        errno = e;
        return NULL;
    }
    return q;
}

int tr_jobstate_query_fd (tr_jobstate_query_t *q)
{
    return q->fd;
}

static void reap (tr_jobstate_query_t *q, int *status)
{
    if (q->pid > 0) {
        while (waitpid (q->pid, status, 0) < 0 && errno == EINTR)
            ;
        q->pid = 0;
    }
}

/* squeue is done: keep its status and start scontrol (if asked for).
 * 1 when there is nothing more to read.
 */
static int next_stage (tr_jobstate_query_t *q)
{
    char *argv[] = { q->scontrol, (char *)"--details", (char *)"show",
                     (char *)"job", q->job, NULL };

    reap (q, &q->status);
    close (q->fd);
    q->fd = -1;
    q->stage = 1;
    q->out[q->len] = '\0';
    /* An array task is asked for as ARRAY_TASK (7_3), as squeue named
     * it: asked by the id the array's last task holds, scontrol answers
     * for every task it still knows, and none of those answers is taken.
     */
    if (q->scontrol && WIFEXITED (q->status) && !WEXITSTATUS (q->status)) {
        struct tr_jobstate js;

        if (tr_jobstate_parse_tagged (q->out, q->tag, q->job, &js, NULL) == 0
            && js.array_task >= 0 && *js.array_job)
            snprintf (q->djob, sizeof (q->djob), "%s_%ld", js.array_job,
                      js.array_task);
    }
    if (*q->djob)
        argv[4] = q->djob;
    if (!q->scontrol || !WIFEXITED (q->status) || WEXITSTATUS (q->status)
        || !(q->detail = malloc (DETAIL_MAX))
        || spawn (q->scontrol, argv, NULL, &q->pid, &q->fd, NULL) < 0)
        return 1;
    return 0;
}

/* The job name on the first line of scontrol's answer ("JobId=N
 * JobName=NAME"), into buf; false when there is none.
 */
static bool detail_job_name (const char *text, char *buf, size_t size)
{
    const char *p = strstr (text, " JobName="), *eol = strchr (text, '\n');
    size_t n;

    if (!p || (eol && p > eol) || strncmp (text, "JobId=", 6))
        return false;
    p += 9;
    n = eol ? (size_t)(eol - p) : strlen (p);
    if (n == 0 || n >= size)
        return false;
    memcpy (buf, p, n);
    buf[n] = '\0';
    return true;
}

/* scontrol is done: keep its status and, for a job named as Nextflow
 * names its tasks, read the head of the job script (the task's name is
 * on its "### name:" line).  1 when there is nothing more to read.
 */
static int script_stage (tr_jobstate_query_t *q)
{
    char *argv[] = { q->scontrol, (char *)"write", (char *)"batch_script",
                     q->job, (char *)"-", NULL };
    char name[TR_JOBSTATE_TEXT + 1];

    reap (q, &q->dstatus);
    close (q->fd);
    q->fd = -1;
    q->stage = 2;
    q->detail[q->dlen] = '\0';
    if (!WIFEXITED (q->dstatus) || WEXITSTATUS (q->dstatus)
        || !detail_job_name (q->detail, name, sizeof (name))
        || strncmp (name, "nf-", 3) || !(q->script = malloc (SCRIPT_MAX))
        || spawn (q->scontrol, argv, NULL, &q->pid, &q->fd, NULL) < 0)
        return 1;
    return 0;
}

int tr_jobstate_query_read (tr_jobstate_query_t *q)
{
    for (;;) {
        char *buf = q->stage == 2 ? q->script : q->stage ? q->detail : q->out;
        size_t *len = q->stage == 2 ? &q->slen : q->stage ? &q->dlen : &q->len;
        size_t cap = q->stage == 2 ? SCRIPT_MAX
                     : q->stage    ? DETAIL_MAX
                                   : sizeof (q->out);
        ssize_t n;

        if (q->fd < 0)
            return 1;
        if (*len >= cap - 1) {
            if (!q->stage) {
                errno = EOVERFLOW;
                return -1;
            }
            /* a detail too long to read is no detail: GPUs unknown; of a
             * script, the head is all that is wanted
             */
            (void)kill (q->pid, SIGKILL);
            reap (q, q->stage == 2 ? &q->sstatus : &q->dstatus);
            if (q->stage == 1)
                q->dstatus = -1;
            else
                q->sstatus = 0;
            close (q->fd);
            q->fd = -1;
            return 1;
        }
        n = read (q->fd, buf + *len, cap - 1 - *len);
        if (n > 0) {
            *len += (size_t)n;
            continue;
        }
        if (n == 0) {
            if (!q->stage) {
                if (next_stage (q) == 1)
                    return 1;
                continue;
            }
            if (q->stage == 1) {
                if (script_stage (q) == 1)
                    return 1;
                continue;
            }
            reap (q, &q->sstatus);
            close (q->fd);
            q->fd = -1;
            return 1;
        }
        if (errno == EINTR)
            continue;
        return errno == EAGAIN ? 0 : -1;
    }
}

int tr_jobstate_query_result (tr_jobstate_query_t *q,
                           struct tr_jobstate *out,
                           tr_error_t *error)
{
    int status = q->status;

    if (!q->stage)
        reap (q, &status);
    q->out[q->len] = '\0';
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        errno = EIO;
        return tr_errprintf (error, "squeue failed (wait status %d)",
                             status);
    }
    if (q->len == 0) {
        errno = ENOENT;
        return tr_errprintf (error, "squeue does not know the job");
    }
    /* an array's id gives a line per task, a het job leader's one per
     * component: the line of the job asked about
     */
    return tr_jobstate_parse_tagged (q->out, q->tag, q->job, out, error);
}

json_t *tr_jobstate_query_nodes (tr_jobstate_query_t *q)
{
    if (!q->detail || q->fd >= 0 || !WIFEXITED (q->dstatus)
        || WEXITSTATUS (q->dstatus) != 0)
        return NULL;
    q->detail[q->dlen] = '\0';
    return tr_jobstate_parse_detail (q->detail);
}

json_t *tr_jobstate_query_paths (tr_jobstate_query_t *q)
{
    char name[TR_JOBSTATE_TEXT + 1], task[TR_JOBSTATE_TEXT + 1];
    json_t *o;

    if (!q->detail || q->fd >= 0 || !WIFEXITED (q->dstatus)
        || WEXITSTATUS (q->dstatus) != 0)
        return NULL;
    q->detail[q->dlen] = '\0';
    if (!(o = tr_jobstate_parse_paths (q->detail)))
        return NULL;
    if (q->script && WIFEXITED (q->sstatus) && WEXITSTATUS (q->sstatus) == 0
        && detail_job_name (q->detail, name, sizeof (name))) {
        q->script[q->slen] = '\0';
        if (tr_jobstate_nextflow_task (q->script, name, task, sizeof (task))
            && json_object_set_new (o, "task_name", json_string (task)) < 0) {
            json_decref (o);
            errno = ENOMEM;
            return NULL;
        }
    }
    return o;
}

/* LSF: who owns a job and where it runs, from `bjobs -w JOB`. */

int tr_jobstate_parse_bjobs (const char *text,
                             const char *job,
                             struct tr_lsfjob *out,
                             tr_error_t *error)
{
    char base[24], line[1024], *tok[6], *save = NULL, *p;
    const char *eol;
    size_t n, k = 0;

    memset (out, 0, sizeof (*out));
    n = job ? strcspn (job, "[") : 0;
    if (n == 0 || n >= sizeof (base)) {
        errno = EINVAL;
        return tr_errprintf (error, "not an LSF job id");
    }
    memcpy (base, job, n);
    base[n] = '\0';
    /* the header, then the job's own line: its first six columns (the
     * job name, which its user chose, comes after them and is not read)
     */
    if (strncmp (text, "JOBID", 5) || !(eol = strchr (text, '\n'))) {
        errno = ENOENT;
        return tr_errprintf (error, "bjobs does not know the job");
    }
    text = eol + 1;
    eol = strchr (text, '\n');
    n = eol ? (size_t)(eol - text) : strlen (text);
    if (n >= sizeof (line)) {
        errno = EINVAL;
        return tr_errprintf (error, "bjobs: a line too long");
    }
    memcpy (line, text, n);
    line[n] = '\0';
    for (p = strtok_r (line, " \t", &save); p && k < 6;
         p = strtok_r (NULL, " \t", &save))
        tok[k++] = p;
    if (k < 3 || strcmp (tok[0], base)) {
        errno = ENOENT;
        return tr_errprintf (error, "bjobs does not know the job");
    }
    if (strlen (tok[1]) >= sizeof (out->user)
        || strlen (tok[2]) >= sizeof (out->stat)) {
        errno = EINVAL;
        return tr_errprintf (error, "bjobs: bad user or status");
    }
    snprintf (out->user, sizeof (out->user), "%s", tok[1]);
    snprintf (out->stat, sizeof (out->stat), "%s", tok[2]);
    /* a job that ran has its execution hosts in the sixth column; a
     * pending one has none (its name would come there)
     */
    out->started = !strcmp (out->stat, "RUN") || !strcmp (out->stat, "USUSP")
                   || !strcmp (out->stat, "SSUSP")
                   || !strcmp (out->stat, "DONE")
                   || !strcmp (out->stat, "EXIT");
    if (out->started && k == 6 && strlen (tok[5]) < sizeof (out->hosts))
        snprintf (out->hosts, sizeof (out->hosts), "%s", tok[5]);
    return 0;
}

bool tr_jobstate_lsf_runs_on (const struct tr_lsfjob *job, const char *host)
{
    char hosts[sizeof (job->hosts)], *h, *save = NULL;
    size_t hl = strcspn (host, ".");

    if (!job->started || !host || !*host)
        return false;
    snprintf (hosts, sizeof (hosts), "%s", job->hosts);
    /* "node1:node2", "4*node1:2*node2", names with their domain or not */
    for (h = strtok_r (hosts, ":", &save); h; h = strtok_r (NULL, ":", &save)) {
        char *star = strchr (h, '*');

        if (star)
            h = star + 1;
        if (strcspn (h, ".") == hl && !strncmp (h, host, hl))
            return true;
    }
    return false;
}

tr_jobstate_query_t *tr_jobstate_query_start_lsf (const char *bjobs,
                                                  const char *job,
                                                  tr_error_t *error)
{
    char *argv[] = { (char *)bjobs, (char *)"-w", NULL, NULL };
    char envdir[4096];
    const char *ed = getenv ("LSF_ENVDIR");
    size_t n = job ? strlen (job) : 0, d = job ? strspn (job, "0123456789") : 0;
    tr_jobstate_query_t *q;

    /* "J" or "J[I]", digits only: nothing else reaches bjobs' argv */
    if (n == 0 || n > 23 || d == 0
        || (d != n
            && (job[d] != '[' || job[n - 1] != ']' || n - d < 3
                || strspn (job + d + 1, "0123456789") != n - d - 2))) {
        errno = EINVAL;
        tr_errprintf (error, "not an LSF job id");
        return NULL;
    }
    if (!(q = query_new (job, error)))
        return NULL;
    argv[2] = q->job;
    if (ed && *ed
        && (size_t)snprintf (envdir, sizeof (envdir), "LSF_ENVDIR=%s", ed)
               >= sizeof (envdir))
        ed = NULL;
    if (spawn (bjobs, argv, ed && *ed ? envdir : NULL, &q->pid, &q->fd,
               error)
        < 0) {
        int e = errno;
        free (q);
        errno = e;
        return NULL;
    }
    return q;
}

int tr_jobstate_query_lsf (tr_jobstate_query_t *q,
                           struct tr_lsfjob *out,
                           tr_error_t *error)
{
    int status = q->status;

    if (!q->stage)
        reap (q, &status);
    q->out[q->len] = '\0';
    if (q->len == 0) {
        errno = ENOENT;
        return tr_errprintf (error, "bjobs does not know the job (wait "
                             "status %d)", status);
    }
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        errno = EIO;
        return tr_errprintf (error, "bjobs failed (wait status %d)", status);
    }
    return tr_jobstate_parse_bjobs (q->out, q->job, out, error);
}

void tr_jobstate_query_destroy (tr_jobstate_query_t *q)
{
    int status;

    if (!q)
        return;
    if (q->pid > 0)
        (void)kill (q->pid, SIGKILL);
    reap (q, &status);
    if (q->fd >= 0)
        close (q->fd);
    free (q->detail);
    free (q->script);
    free (q->scontrol);
    free (q);
}
