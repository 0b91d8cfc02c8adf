/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

/* PBS, Torque and LSF job facts for tracer-prolog.
 *
 * The schedulers hand their prologues a handful of strings (argv, an
 * environment, qstat's JSON); this turns them into a record's identity,
 * request and outcome and into tracerd messages.  The PBS exit status
 * codes are OpenPBS's JOB_EXEC_* values (src/include/job.h) and Torque's
 * (src/include/pbs_job.h); LSF's LSB_JOBEXIT_STAT is a wait(2) status.
 */

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "libtracer/record/record.h"
#include "libtracer/record/states.h"
#include "libtracer/record/when.h"
#include "libtracer/util/nss.h"

void tr_batch_job_init (struct tr_batch_job *job, enum tr_batch_kind kind)
{
    memset (job, 0, sizeof (*job));
    job->kind = kind;
    job->array_task_id = -1;
    job->session = -1;
    job->cpus_on_node = -1;
    job->nodes = -1;
    job->mem_bytes = -1;
    job->time_limit_s = -1;
    job->exit_status = -1;
}

const char *tr_batch_name (enum tr_batch_kind kind)
{
    switch (kind) {
    case TR_BATCH_PBS:
        return "pbs";
    case TR_BATCH_TORQUE:
        return "torque";
    case TR_BATCH_LSF:
        return "lsf";
    }
    return "pbs";
}

/* Copy at most size - 1 bytes; true if it all fitted. */
static bool copy (char *dst, size_t size, const char *src)
{
    return (size_t)snprintf (dst, size, "%s", src ? src : "") < size;
}

/* Compare host names up to the first '.' of either. */
static bool same_host (const char *a, size_t alen, const char *b)
{
    size_t an = strcspn (a, ".");
    size_t bn = strcspn (b, ".");

    if (an > alen)
        an = alen;
    return an == bn && !strncmp (a, b, an);
}

int tr_batch_pbs_size (const char *s, long long *bytes)
{
    static const struct {
        const char *unit;
        int shift;
    } units[] = {
        { "", 0 },    { "b", 0 },   { "kb", 10 }, { "mb", 20 },
        { "gb", 30 }, { "tb", 40 }, { "pb", 50 }, { "w", 3 },
        { "kw", 13 }, { "mw", 23 }, { "gw", 33 }, { "tw", 43 },
        { "pw", 53 },
    };
    char unit[4];
    char *end;
    long long v;
    size_t n;

    if (!s || !isdigit ((unsigned char)*s))
        goto bad;
    errno = 0;
    v = strtoll (s, &end, 10);
    if (errno || v < 0)
        goto bad;
    n = strlen (end);
    if (n >= sizeof (unit))
        goto bad;
    for (size_t i = 0; i <= n; i++)
        unit[i] = (char)tolower ((unsigned char)end[i]);
    for (size_t i = 0; i < sizeof (units) / sizeof (units[0]); i++) {
        if (strcmp (unit, units[i].unit))
            continue;
        if (v > (LLONG_MAX >> units[i].shift))
            goto bad;
        *bytes = v << units[i].shift;
        return 0;
    }
bad:
    errno = EINVAL;
    return -1;
}

int tr_batch_duration (const char *s, long long *seconds)
{
    long long parts[3], total = 0;
    int n = 0;
    const char *p = s;
    double frac = 0;

    if (!s || !*s)
        goto bad;
    for (;;) {
        char *end;
        if (!isdigit ((unsigned char)*p) || n == 3)
            goto bad;
        errno = 0;
        parts[n] = strtoll (p, &end, 10);
        if (errno || parts[n] > 100000000LL)
            goto bad;
        n++;
        p = end;
        if (*p == ':') {
            p++;
            continue;
        }
        if (*p == '.') {
            /* fractional seconds, last part only */
            frac = strtod (p, &end);
            if (end == p + 1 || *end)
                goto bad;
            p = end;
        }
        if (*p)
            goto bad;
        break;
    }
    for (int i = 0; i < n; i++)
        total = total * 60 + parts[i];
    *seconds = total + (frac >= 0.5 ? 1 : 0);
    return 0;
bad:
    errno = EINVAL;
    return -1;
}

int tr_batch_set_job_id (struct tr_batch_job *job, const char *id)
{
    const char *lb, *rb;

    if (!id || !*id || !copy (job->job_id, sizeof (job->job_id), id)) {
        errno = EINVAL;
        return -1;
    }
    if ((lb = strchr (id, '[')) && (rb = strchr (lb, ']')) && rb > lb + 1
        && strspn (lb + 1, "0123456789") == (size_t)(rb - lb - 1)
        && rb - lb < 12) {
        job->array_task_id = strtol (lb + 1, NULL, 10);
        snprintf (job->array_job_id, sizeof (job->array_job_id), "%.*s[]%s",
                  (int)(lb - id), id, rb + 1);
    }
    return 0;
}

/* One chunk of a select statement: "2:ncpus=4:mem=8gb". */
static void parse_chunk (const char *chunk,
                         size_t len,
                         long long *count,
                         long long *ncpus,
                         long long *mem)
{
    char buf[256];

    if (len >= sizeof (buf))
        return;
    memcpy (buf, chunk, len);
    buf[len] = '\0';
    *count = 1;
    for (char *item = buf, *next; item; item = next) {
        char *eq;
        if ((next = strchr (item, ':')))
            *next++ = '\0';
        if (isdigit ((unsigned char)*item) && item == buf) {
            char *end;
            long long c = strtoll (item, &end, 10);
            if (!*end && c > 0)
                *count = c;
            continue;
        }
        if (!(eq = strchr (item, '=')))
            continue;
        *eq = '\0';
        if (!strcmp (item, "ncpus") || !strcmp (item, "ppn")) {
            char *end;
            long long c = strtoll (eq + 1, &end, 10);
            if (!*end && c >= 0)
                *ncpus = c;
        }
        else if (!strcmp (item, "mem"))
            (void)tr_batch_pbs_size (eq + 1, mem);
    }
}

void tr_batch_pbs_resources (const char *list, struct tr_batch_job *job)
{
    long long ncpus = -1, mem = -1, wall = -1, nodect = -1;
    long long chunk_n = -1, chunk_cpus = -1, chunk_mem = -1;
    bool one_kind = false;
    const char *p = list;

    while (p && *p) {
        size_t len = strcspn (p, ",");
        const char *eq = memchr (p, '=', len);
        char key[32], val[512];

        if (eq && (size_t)(eq - p) < sizeof (key)
            && len - (size_t)(eq - p) - 1 < sizeof (val)) {
            long long v;
            snprintf (key, sizeof (key), "%.*s", (int)(eq - p), p);
            snprintf (val, sizeof (val), "%.*s", (int)(len - (size_t)(eq - p)
                                                       - 1), eq + 1);
            if (!strcmp (key, "ncpus") && tr_batch_pbs_size (val, &v) == 0)
                ncpus = v;
            else if (!strcmp (key, "mem") && tr_batch_pbs_size (val, &v) == 0)
                mem = v;
            else if (!strcmp (key, "walltime")
                     && tr_batch_duration (val, &v) == 0)
                wall = v;
            else if (!strcmp (key, "nodect")
                     && tr_batch_pbs_size (val, &v) == 0)
                nodect = v;
            else if (!strcmp (key, "select") || !strcmp (key, "nodes")) {
                /* one kind of chunk ("2:ncpus=4") gives per-host
                 * figures; several kinds ("1:ncpus=4+2:ncpus=1") do not
                 */
                long long n = -1, c = -1, m = -1;
                one_kind = !strchr (val, '+');
                parse_chunk (val, strcspn (val, "+"), &n, &c, &m);
                if (one_kind) {
                    chunk_n = n;
                    chunk_cpus = c;
                    chunk_mem = m;
                }
                /* Torque: nodes=2:ppn=4 */
                if (!strcmp (key, "nodes") && one_kind && nodect < 0)
                    nodect = n;
            }
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (job->time_limit_s < 0)
        job->time_limit_s = wall;
    if (job->nodes < 0)
        job->nodes = nodect;
    if (nodect == 1 || (nodect < 0 && chunk_n <= 1)) {
        if (job->cpus_on_node < 0)
            job->cpus_on_node = ncpus >= 0 ? ncpus : chunk_cpus;
        if (job->mem_bytes < 0)
            job->mem_bytes = mem >= 0 ? mem : chunk_mem;
    }
    else if (one_kind) {
        if (job->cpus_on_node < 0)
            job->cpus_on_node = chunk_cpus;
        if (job->mem_bytes < 0)
            job->mem_bytes = chunk_mem;
    }
}

void tr_batch_pbs_exec_host (const char *exec_host,
                             const char *host,
                             struct tr_batch_job *job)
{
    const char *p = exec_host;
    char seen[16][64];
    int nseen = 0;
    long long cpus = 0;
    bool found = false;

    while (p && *p) {
        size_t len = strcspn (p, "+");
        size_t hlen = strcspn (p, "/+");
        const char *star = memchr (p, '*', len);
        long long n = 1;
        bool known = false;

        if (hlen > len)
            hlen = len;
        if (star) {
            char *end;
            n = strtoll (star + 1, &end, 10);
            if (end != p + len || n < 0)
                n = 0;
        }
        if (host && same_host (p, hlen, host)) {
            cpus += n;
            found = true;
        }
        for (int i = 0; i < nseen; i++)
            if (strlen (seen[i]) == hlen && !strncmp (seen[i], p, hlen))
                known = true;
        if (!known && nseen < 16 && hlen < sizeof (seen[0]))
            snprintf (seen[nseen++], sizeof (seen[0]), "%.*s", (int)hlen, p);
        p += len;
        if (*p == '+')
            p++;
    }
    if (found)
        job->cpus_on_node = cpus;
    if (nseen > 0 && nseen < 16)
        job->nodes = nseen;
}

void tr_batch_pbs_exec_vnode (const char *exec_vnode,
                              const char *host,
                              struct tr_batch_job *job)
{
    const char *p = exec_vnode;
    char seen[16][64];
    int nseen = 0;
    long long cpus = 0, mem = 0;
    bool found = false, have_mem = false, too_many = false;

    /* vnodes are separated by '+', inside and between the chunks'
     * parentheses alike: "(a:ncpus=1+b:ncpus=1)+(c:ncpus=2)"
     */
    while (p && *p) {
        size_t len, nlen, hlen;
        bool here, known = false;

        p += strspn (p, "(+)");
        if (!*p)
            break;
        len = strcspn (p, "+)");
        nlen = strcspn (p, ":+)");
        if (nlen > len)
            nlen = len;
        /* vnode "n1[0]" lies on host "n1" */
        hlen = strcspn (p, "[:+)");
        if (hlen > nlen)
            hlen = nlen;
        here = host && hlen > 0 && strlen (host) == hlen
               && !strncmp (p, host, hlen);
        for (const char *q = p + nlen; q < p + len;) {
            size_t ilen = strcspn (q, ":+)");
            char item[64];
            long long v;
            if (ilen < sizeof (item) && here) {
                snprintf (item, sizeof (item), "%.*s", (int)ilen, q);
                if (!strncmp (item, "ncpus=", 6)
                    && tr_batch_pbs_size (item + 6, &v) == 0)
                    cpus += v;
                else if (!strncmp (item, "mem=", 4)
                         && tr_batch_pbs_size (item + 4, &v) == 0
                         && v <= LLONG_MAX - mem) {
                    mem += v;
                    have_mem = true;
                }
            }
            q += ilen;
            if (*q == ':')
                q++;
        }
        if (here)
            found = true;
        for (int i = 0; i < nseen; i++)
            if (strlen (seen[i]) == hlen && !strncmp (seen[i], p, hlen))
                known = true;
        if (!known && hlen > 0) {
            if (nseen < 16 && hlen < sizeof (seen[0]))
                snprintf (seen[nseen++], sizeof (seen[0]), "%.*s", (int)hlen,
                          p);
            else
                too_many = true;
        }
        p += len;
    }
    if (found) {
        job->cpus_on_node = cpus;
        if (have_mem)
            job->mem_bytes = mem;
    }
    if (nseen > 0 && !too_many)
        job->nodes = nseen;
}

int tr_batch_pbs_node (const char *env,
                       const char *conf_path,
                       char *buf,
                       size_t size)
{
    static const char key[] = "PBS_MOM_NODE_NAME=";
    char text[16384], *line, *save = NULL;
    struct stat st;
    ssize_t n;
    size_t len = 0;
    int fd;

    if (!buf || size == 0) {
        errno = EINVAL;
        return -1;
    }
    if (env && *env) {
        if (!copy (buf, size, env) || !tr_record_id_is_safe (buf)) {
            errno = EINVAL;
            return -1;
        }
        return 0;
    }
    if (!conf_path || !*conf_path) {
        errno = ENOENT;
        return -1;
    }
    if ((fd = open (conf_path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
        < 0)
        return -1;
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
        || (st.st_uid != 0 && st.st_uid != geteuid ())
        || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        close (fd);
        errno = EPERM;
        return -1;
    }
    while (len < sizeof (text) - 1) {
        n = read (fd, text + len, sizeof (text) - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close (fd);
    text[len] = '\0';
    /* pbs.conf: KEY=VALUE lines; the last one counts, as in pbs_loadconf */
    buf[0] = '\0';
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        size_t vlen;
        if (strncmp (line, key, sizeof (key) - 1))
            continue;
        line += sizeof (key) - 1;
        vlen = strcspn (line, " \t\r#");
        if (vlen == 0 || vlen >= size)
            continue;
        snprintf (buf, size, "%.*s", (int)vlen, line);
    }
    if (!buf[0] || !tr_record_id_is_safe (buf)) {
        buf[0] = '\0';
        errno = ENOENT;
        return -1;
    }
    return 0;
}

int tr_batch_conf_trusted (const char *path, uid_t euid, tr_error_t *error)
{
    struct stat st;

    if (!path || stat (path, &st) < 0) {
        /* a missing file is the caller's to report */
        return 0;
    }
    if (!S_ISREG (st.st_mode))
        return 0;
    if (st.st_uid != 0 && st.st_uid != euid) {
        errno = EPERM;
        return tr_errprintf (error, "%s: not owned by root (uid %u): not "
                             "read", path, (unsigned)st.st_uid);
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        errno = EPERM;
        return tr_errprintf (error, "%s: writable by others than its owner "
                             "(mode %04o): not read", path,
                             (unsigned)(st.st_mode & 07777));
    }
    return 0;
}

/* A qstat JSON member as text: strings as they are, integers printed. */
static const char *member_text (json_t *obj, const char *key, char *buf,
                                size_t size)
{
    json_t *v = json_object_get (obj, key);

    if (json_is_string (v))
        return json_string_value (v);
    if (json_is_integer (v)) {
        snprintf (buf, size, "%lld", (long long)json_integer_value (v));
        return buf;
    }
    return NULL;
}

int tr_batch_pbs_qstat (const char *text,
                        const char *host,
                        struct tr_batch_job *job,
                        tr_error_t *error)
{
    json_error_t jerr;
    json_t *root, *jobs, *j, *rl;
    const char *s;
    char num[32];

    if (!(root = json_loads (text, JSON_REJECT_DUPLICATES, &jerr))) {
        errno = EINVAL;
        return tr_errprintf (error, "qstat output is not JSON: %s", jerr.text);
    }
    jobs = json_object_get (root, "Jobs");
    if (!(j = json_object_get (jobs, job->job_id))
        && json_object_size (jobs) == 1) {
        /* qstat may print the id with the server's full name */
        void *it = json_object_iter (jobs);
        j = json_object_iter_value (it);
    }
    if (!json_is_object (j)) {
        json_decref (root);
        errno = ENOENT;
        return tr_errprintf (error, "qstat does not show job %s", job->job_id);
    }
    if (!job->job_name[0] && (s = member_text (j, "Job_Name", num, sizeof num)))
        copy (job->job_name, sizeof (job->job_name), s);
    if (!job->queue[0] && (s = member_text (j, "queue", num, sizeof num)))
        copy (job->queue, sizeof (job->queue), s);
    if (!job->account[0]
        && (s = member_text (j, "Account_Name", num, sizeof num)))
        copy (job->account, sizeof (job->account), s);
    if (!job->user[0] && (s = member_text (j, "euser", num, sizeof num)))
        copy (job->user, sizeof (job->user), s);
    if (!job->group[0] && (s = member_text (j, "egroup", num, sizeof num)))
        copy (job->group, sizeof (job->group), s);
    if (job->session < 0
        && (s = member_text (j, "session_id", num, sizeof num))) {
        char *end;
        long long v = strtoll (s, &end, 10);
        if (!*end && v > 0)
            job->session = v;
    }
    if ((s = member_text (j, "exec_host", num, sizeof num)))
        tr_batch_pbs_exec_host (s, host, job);
    if (json_is_object (rl = json_object_get (j, "Resource_List"))) {
        /* back to the "key=value,..." form the epilogue gets */
        char list[2048] = "";
        size_t used = 0;
        const char *key;
        json_t *v;
        json_object_foreach (rl, key, v)
        {
            const char *t = member_text (rl, key, num, sizeof num);
            int w;
            if (!t)
                continue;
            w = snprintf (list + used, sizeof (list) - used, "%s%s=%s",
                          used ? "," : "", key, t);
            if (w < 0 || (size_t)w >= sizeof (list) - used)
                break;
            used += (size_t)w;
        }
        tr_batch_pbs_resources (list, job);
    }
    json_decref (root);
    return 0;
}

int tr_batch_lsf_env (const char *(*get) (const char *name, void *arg),
                      void *arg,
                      const char *host,
                      long long unit_bytes,
                      struct tr_batch_job *job,
                      tr_error_t *error)
{
    const char *id = get ("LSB_JOBID", arg);
    const char *idx = get ("LSB_JOBINDEX", arg);
    const char *s;
    long index = 0;

    if (!id || !*id || strlen (id) > 20 || strspn (id, "0123456789")
                                              != strlen (id)) {
        errno = EINVAL;
        return tr_errprintf (error, "LSB_JOBID is %s", id ? "not a job id"
                                                          : "not set");
    }
    if (idx && *idx) {
        char *end;
        errno = 0;
        index = strtol (idx, &end, 10);
        if (errno || *end || index < 0)
            index = 0;
    }
    if (index > 0) {
        snprintf (job->job_id, sizeof (job->job_id), "%s[%ld]", id, index);
        copy (job->array_job_id, sizeof (job->array_job_id), id);
        job->array_task_id = index;
    }
    else
        copy (job->job_id, sizeof (job->job_id), id);
    copy (job->job_name, sizeof (job->job_name), get ("LSB_JOBNAME", arg));
    copy (job->queue, sizeof (job->queue), get ("LSB_QUEUE", arg));
    copy (job->account, sizeof (job->account), get ("LSB_PROJECT_NAME", arg));
    if (!(s = get ("LSFUSER", arg)) || !*s)
        if (!(s = get ("USER", arg)) || !*s)
            s = get ("LOGNAME", arg);
    copy (job->user, sizeof (job->user), s);
    /* "hostA 4 hostB 2": this host's slots and the number of hosts */
    if ((s = get ("LSB_MCPU_HOSTS", arg)) && *s) {
        long long cpus = 0, nodes = 0;
        bool found = false;
        const char *p = s;
        while (*p) {
            size_t hl, nl;
            char *end;
            long long n;
            p += strspn (p, " ");
            hl = strcspn (p, " ");
            if (!hl)
                break;
            nl = strspn (p + hl, " ");
            n = strtoll (p + hl + nl, &end, 10);
            if (end == p + hl + nl || n < 0)
                break;
            nodes++;
            if (host && same_host (p, hl, host)) {
                cpus += n;
                found = true;
            }
            p = end;
        }
        if (found)
            job->cpus_on_node = cpus;
        if (nodes > 0)
            job->nodes = nodes;
    }
    /* "hostA hostA hostB": one word per slot (every LSF; the only list
     * where LSB_MCPU_HOSTS is missing)
     */
    if (job->cpus_on_node < 0 && (s = get ("LSB_HOSTS", arg)) && *s) {
        long long cpus = 0, nodes = 0;
        const char *p = s, *prev = NULL;
        size_t prevl = 0;
        while (*p) {
            size_t hl;
            p += strspn (p, " ");
            if (!(hl = strcspn (p, " ")))
                break;
            if (host && same_host (p, hl, host))
                cpus++;
            /* LSF lists a host's slots together */
            if (!prev || prevl != hl || strncmp (prev, p, hl))
                nodes++;
            prev = p;
            prevl = hl;
            p += hl;
        }
        if (cpus > 0)
            job->cpus_on_node = cpus;
        if (job->nodes < 0 && nodes > 0)
            job->nodes = nodes;
    }
    if (job->cpus_on_node < 0 && job->nodes <= 1
        && (s = get ("LSB_DJOB_NUMPROC", arg)) && *s) {
        char *end;
        long long n = strtoll (s, &end, 10);
        if (!*end && n > 0)
            job->cpus_on_node = n;
    }
    /* rusage[mem=200.00] in LSF_UNIT_FOR_LIMITS */
    if ((s = get ("LSB_EFFECTIVE_RSRCREQ", arg)) && (s = strstr (s, "rusage["))
        && (s = strstr (s, "mem="))) {
        char *end;
        double v = strtod (s + 4, &end);
        if (end != s + 4 && isfinite (v) && v >= 0 && unit_bytes > 0
            && v * (double)unit_bytes < 9e18)
            job->mem_bytes = (long long)(v * (double)unit_bytes);
    }
    if ((s = get ("LSB_JOBEXIT_STAT", arg)) && *s) {
        char *end;
        long long v = strtoll (s, &end, 10);
        if (!*end && v >= 0) {
            job->have_exit = true;
            job->exit_status = v;
        }
    }
    copy (job->exit_info, sizeof (job->exit_info),
          get ("LSB_JOBEXIT_INFO", arg));
    job->requeued = (s = get ("LSB_JOBPEND", arg)) && *s;
    return 0;
}

static json_t *outcome (const char *state, int code, int sig, const char *why)
{
    json_t *o = json_pack ("{s:s}", "state", state);

    if (o && code >= 0)
        json_object_set_new (o, "exit_code", json_integer (code));
    if (o && sig > 0)
        json_object_set_new (o, "signal", json_integer (sig));
    if (o && why && *why)
        json_object_set_new (o, "reason", json_string (why));
    return o;
}

/* OpenPBS JOB_EXEC_* (negative Exit_status) and Torque's equivalents. */
static json_t *pbs_negative (const struct tr_batch_job *job, long long st)
{
    static const struct {
        int code;
        const char *state, *why;
    } pbs[] = {
        { -1, "failed", "the job could not be started (JOB_EXEC_FAIL1)" },
        { -2, "failed", "the job was not started: the prologue or the "
                        "execution host failed (JOB_EXEC_FAIL2)" },
        { -3, "failed", "the job was not started and was requeued "
                        "(JOB_EXEC_RETRY)" },
        { -24, "failed", "killed by PBS: CPU burst over ncpus "
                         "(JOB_EXEC_KILL_NCPUS_BURST)" },
        { -25, "failed", "killed by PBS: CPU use over ncpus "
                         "(JOB_EXEC_KILL_NCPUS_SUM)" },
        { -26, "oom", "killed by PBS: virtual memory over the limit "
                      "(JOB_EXEC_KILL_VMEM)" },
        { -27, "oom", "killed by PBS: memory over the limit "
                      "(JOB_EXEC_KILL_MEM)" },
        { -28, "failed", "killed by PBS: CPU time over the limit "
                         "(JOB_EXEC_KILL_CPUT)" },
        { -29, "timeout", "killed by PBS: walltime over the limit "
                          "(JOB_EXEC_KILL_WALLTIME)" },
    }, torque[] = {
        { -1, "failed", "the job could not be started (JOB_EXEC_FAIL1)" },
        { -2, "failed", "the job was not started (JOB_EXEC_FAIL2)" },
        { -3, "failed", "the job was not started and was requeued "
                        "(JOB_EXEC_RETRY)" },
        { -10, "oom", "killed by Torque: memory over the limit "
                      "(JOB_EXEC_OVERLIMIT_MEM)" },
        { -11, "timeout", "killed by Torque: walltime over the limit "
                          "(JOB_EXEC_OVERLIMIT_WT)" },
        { -12, "failed", "killed by Torque: CPU time over the limit "
                         "(JOB_EXEC_OVERLIMIT_CPUT)" },
    };
    bool is_torque = job->kind == TR_BATCH_TORQUE;
    size_t n = is_torque ? sizeof (torque) / sizeof (torque[0])
                         : sizeof (pbs) / sizeof (pbs[0]);
    char why[96];

    for (size_t i = 0; i < n; i++) {
        int code = is_torque ? torque[i].code : pbs[i].code;
        if (code == st)
            return outcome (is_torque ? torque[i].state : pbs[i].state, -1, 0,
                            is_torque ? torque[i].why : pbs[i].why);
    }
    snprintf (why, sizeof (why), "%s exit status %lld",
              is_torque ? "Torque" : "PBS", st);
    return outcome ("failed", -1, 0, why);
}

json_t *tr_batch_outcome (const struct tr_batch_job *job)
{
    long long st = job->exit_status;
    char why[192];

    if (!job->have_exit)
        return NULL;
    if (job->kind == TR_BATCH_LSF) {
        const char *info = job->exit_info, *how;
        int code = WIFEXITED ((int)st) ? WEXITSTATUS ((int)st) : -1;
        int sig = WIFSIGNALED ((int)st) ? WTERMSIG ((int)st) : 0;
        const char *state;
        if (st > INT_MAX)
            return outcome ("failed", -1, 0, "LSF exit status out of range");
        /* the one decision (states.h), whatever the LSF family tells */
        state = tr_states_lsf ((int)st, info, &how);
        why[0] = '\0';
        if (info[0] || how || job->requeued)
            snprintf (why, sizeof (why), "%s%s%s%s",
                      info[0] || how ? "LSF: " : "", info[0] ? info : "",
                      !info[0] && how ? how : "",
                      job->requeued
                          ? (info[0] || how ? "; requeued" : "requeued")
                          : "");
        return outcome (state, code, sig, why);
    }
    if (st < 0)
        return pbs_negative (job, st);
    if (st < 256)
        return outcome (st ? "failed" : "completed", (int)st, 0, NULL);
    if (st < 256 + 65) {
        int sig = (int)(st - 256);
        snprintf (why, sizeof (why), "killed by signal %d (exit status "
                  "%lld)", sig, st);
        return outcome (sig == SIGTERM || sig == SIGKILL ? "cancelled"
                                                         : "failed",
                        -1, sig, why);
    }
    snprintf (why, sizeof (why), "%s exit status %lld",
              job->kind == TR_BATCH_TORQUE ? "Torque" : "PBS", st);
    return outcome ("failed", -1, 0, why);
}

int tr_batch_env_match (const struct tr_batch_job *job, char *buf, size_t size)
{
    int n;

    /* what every LSF sets (IBM LSF 10.1 and OpenLava alike; OpenLava
     * never sets LSB_BATCH_JID): an array element also by its index
     */
    if (job->kind == TR_BATCH_LSF)
        n = job->array_task_id > 0
                ? snprintf (buf, size, "LSB_JOBID=%s\nLSB_JOBINDEX=%ld",
                            job->array_job_id, job->array_task_id)
                : snprintf (buf, size, "LSB_JOBID=%s", job->job_id);
    else
        n = snprintf (buf, size, "PBS_JOBID=%s", job->job_id);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int tr_batch_cgroup_name (const struct tr_batch_job *job,
                          char *buf,
                          size_t size)
{
    int n;

    if (job->kind == TR_BATCH_LSF)
        n = job->array_task_id > 0
                ? snprintf (buf, size, "job.%s[%ld]", job->array_job_id,
                            job->array_task_id)
                : snprintf (buf, size, "job.%s", job->job_id);
    else
        n = snprintf (buf, size, "%s", job->job_id);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static int set_str (json_t *o, const char *key, const char *v)
{
    if (!v || !*v)
        return 0;
    return json_object_set_new (o, key, json_string (v));
}

static int set_int (json_t *o, const char *key, long long v)
{
    if (v < 0)
        return 0;
    return json_object_set_new (o, key, json_integer (v));
}

json_t *tr_batch_identity (const struct tr_batch_job *job, const char *node)
{
    uid_t uid;
    gid_t gid, ggid;
    json_t *id;
    const char *account = job->account;

    if (!job->user[0] || tr_nss_user_by_name (job->user, &uid, &gid) < 0) {
        errno = ENOENT;
        return NULL;
    }
    if (!(id = json_pack ("{s:s s:s s:s s:s s:I}", "scheduler",
                          tr_batch_name (job->kind), "job_id", job->job_id,
                          "step_id", "0", "node", node, "uid",
                          (json_int_t)uid)))
        return NULL;
    if (set_str (id, "user", job->user) < 0)
        goto nomem;
    if (job->group[0] && tr_nss_group_by_name (job->group, &ggid) == 0)
        gid = ggid;
    if (set_int (id, "gid", gid) < 0)
        goto nomem;
    /* PBS passes the literal "null" for a job with no account */
    if (job->kind != TR_BATCH_LSF && !strcmp (account, "null"))
        account = "";
    if (set_str (id, "job_name", job->job_name) < 0
        || set_str (id, "account", account) < 0
        || set_str (id, "partition", job->queue) < 0
        || set_str (id, "array_job_id", job->array_job_id) < 0
        || (job->array_task_id >= 0
            && set_int (id, "array_task_id", job->array_task_id) < 0))
        goto nomem;
    return id;
nomem:
    json_decref (id);
    errno = ENOMEM;
    return NULL;
}

json_t *tr_batch_request (const struct tr_batch_job *job)
{
    json_t *r = json_object ();

    if (!r || set_int (r, "nodes", job->nodes) < 0
        || set_int (r, "cpus_on_node", job->cpus_on_node) < 0
        || set_int (r, "mem_bytes", job->mem_bytes) < 0
        || set_int (r, "time_limit_s", job->time_limit_s) < 0) {
        json_decref (r);
        return NULL;
    }
    return r;
}

/* identity + request, or NULL with error. */
static json_t *base_msg (const char *op,
                         const struct tr_batch_job *job,
                         const char *node,
                         tr_error_t *error)
{
    json_t *id, *req, *msg;

    if (!(id = tr_batch_identity (job, node))) {
        if (errno == ENOENT)
            tr_errprintf (error, "job %s: unknown user '%s'", job->job_id,
                          job->user);
        else
            tr_errprintf (error, "out of memory");
        return NULL;
    }
    if (!(req = tr_batch_request (job))) {
        json_decref (id);
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    if (!(msg = json_pack ("{s:s s:o s:o}", "op", op, "identity", id,
                           "request", req)))
        tr_errprintf (error, "out of memory");
    return msg;
}

json_t *tr_batch_start_msg (const struct tr_batch_job *job,
                            const char *node,
                            pid_t pid,
                            tr_error_t *error)
{
    char env[300], cg[160];
    json_t *msg, *attach;

    if (tr_batch_env_match (job, env, sizeof (env)) < 0
        || tr_batch_cgroup_name (job, cg, sizeof (cg)) < 0) {
        tr_errprintf (error, "job id too long");
        return NULL;
    }
    if (!(msg = base_msg ("step_start", job, node, error)))
        return NULL;
    if (!(attach = json_pack ("{s:s s:s}", "env", env, "cgroup_name", cg))
        || (job->session > 0
            && json_object_set_new (attach, "session",
                                    json_integer (job->session)) < 0)
        || json_object_set_new (msg, "attach", attach) < 0
        || json_object_set_new (msg, "tags", json_object ()) < 0
        || json_object_set_new (msg, "task_id", json_integer (0)) < 0
        || json_object_set_new (msg, "pid", json_integer (pid > 0 ? pid : 0))
               < 0) {
        json_decref (msg);
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    return msg;
}

int tr_batch_exclude (json_t *msg, pid_t pid)
{
    const char *op = json_string_value (json_object_get (msg, "op"));
    /* a start names them in its attach, an end beside its outcome */
    json_t *attach = op && !strcmp (op, "step_end")
                         ? msg
                         : json_object_get (msg, "attach");
    json_t *list;

    if (!json_is_object (attach) || pid <= 1) {
        errno = EINVAL;
        return -1;
    }
    if (!(list = json_object_get (attach, "exclude"))) {
        if (json_object_set_new (attach, "exclude", json_array ()) < 0
            || !(list = json_object_get (attach, "exclude"))) {
            errno = ENOMEM;
            return -1;
        }
    }
    if (json_array_append_new (list, json_integer (pid)) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

json_t *tr_batch_end_msg (const struct tr_batch_job *job,
                          const char *node,
                          tr_error_t *error)
{
    json_t *msg, *oc;

    if (!(msg = base_msg ("step_end", job, node, error)))
        return NULL;
    if ((oc = tr_batch_outcome (job))
        && json_object_set_new (msg, "outcome", oc) < 0) {
        json_decref (msg);
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    return msg;
}

int tr_batch_run (char *const argv[],
                  char *const env[],
                  int timeout_ms,
                  char *buf,
                  size_t max,
                  tr_error_t *error)
{
    posix_spawn_file_actions_t fa;
    double deadline = (tr_when_monotonic () * 1e3) + timeout_ms;
    size_t len = 0;
    pid_t pid;
    int p[2], rc, status = 0;
    bool timed_out = false;

    if (max == 0 || !argv[0] || argv[0][0] != '/') {
        errno = EINVAL;
        return tr_errprintf (error, "not an absolute path");
    }
    buf[0] = '\0';
    if (pipe2 (p, O_CLOEXEC) < 0)
        return tr_errprintf (error, "pipe: %s", strerror (errno));
    if ((rc = posix_spawn_file_actions_init (&fa)) != 0) {
        close (p[0]);
        close (p[1]);
        errno = rc;
        return tr_errprintf (error, "spawn: %s", strerror (rc));
    }
    if ((rc = posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY,
                                                0)) != 0
        || (rc = posix_spawn_file_actions_adddup2 (&fa, p[1], 1)) != 0
        || (rc = posix_spawn_file_actions_addopen (&fa, 2, "/dev/null",
                                                   O_WRONLY, 0)) != 0
        || (rc = posix_spawn (&pid, argv[0], &fa, NULL, argv, env)) != 0) {
        posix_spawn_file_actions_destroy (&fa);
        close (p[0]);
        close (p[1]);
        errno = rc;
        return tr_errprintf (error, "%s: %s", argv[0], strerror (rc));
    }
    posix_spawn_file_actions_destroy (&fa);
    close (p[1]);
    for (;;) {
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        double left = deadline - (tr_when_monotonic () * 1e3);
        char chunk[4096];
        ssize_t n;
        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (poll (&pfd, 1, (int)left + 1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (!pfd.revents)
            continue;
        if ((n = read (p[0], chunk, sizeof (chunk))) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (n == 0)
            break;
        /* keep reading past max so the child never blocks on a full
         * pipe; what does not fit is dropped and reported
         */
        if (len < max - 1) {
            size_t take = (size_t)n < max - 1 - len ? (size_t)n : max - 1 - len;
            memcpy (buf + len, chunk, take);
            len += take;
            buf[len] = '\0';
        }
    }
    close (p[0]);
    if (timed_out)
        (void)kill (pid, SIGKILL);
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        errno = ETIMEDOUT;
        return tr_errprintf (error, "%s: no answer within %d ms", argv[0],
                             timeout_ms);
    }
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        errno = EIO;
        return tr_errprintf (error, "%s failed (wait status %d)", argv[0],
                             status);
    }
    return 0;
}
