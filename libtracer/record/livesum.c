/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Live summaries of running steps in the shared store (livesum.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "livesum.h"
#include "record.h"
#include "sign.h"
#include "libtracer/util/strbuf.h"

int tr_livesum_row (tr_stepsum_t *row,
                    json_t *rec,
                    double now_ms,
                    tr_strpool_t *pool)
{
    tr_stepsum_init (row);
    if (tr_stepsum_from_record (row, rec, TR_STEPSUM_SIG_LIVE, "", pool) < 0)
        return -1;
    row->live_ms = now_ms;
    if (isnan (row->elapsed_s) && !isnan (row->start_ms)
        && now_ms >= row->start_ms)
        row->elapsed_s = (now_ms - row->start_ms) / 1000.0;
    return 0;
}

char *tr_livesum_text (const tr_stepsum_t *const *rows,
                       size_t n,
                       const char *cluster,
                       const char *node,
                       uid_t uid,
                       double written_ms,
                       double interval_s)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;

    if (!cluster || !node || (n && !rows) || isnan (written_ms)
        || !(interval_s > 0)) {
        errno = EINVAL;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp (rows[i]->cluster, cluster) || strcmp (rows[i]->node, node)
            || rows[i]->uid != (double)uid) {
            errno = EINVAL;
            return NULL;
        }
    if (tr_strbuf_printf (&sb, "%s\t%s\t%s\t%u\t%.0f\t%.17g\n",
                          TR_LIVESUM_MAGIC, cluster, node, (unsigned)uid,
                          written_ms, interval_s)
            < 0
        || tr_stepsum_tsv_header (&sb) < 0 || tr_strbuf_puts (&sb, "\n") < 0)
        goto nomem;
    for (size_t i = 0; i < n; i++)
        if (tr_stepsum_to_tsv (&sb, rows[i]) < 0
            || tr_strbuf_puts (&sb, "\n") < 0)
            goto nomem;
    if (tr_strbuf_printf (&sb, "#end\t%zu\n", n) < 0)
        goto nomem;
    return tr_strbuf_steal (&sb);
nomem:
    tr_strbuf_free (&sb);
    errno = ENOMEM;
    return NULL;
}

static int cmp_place (const void *pa, const void *pb)
{
    const tr_stepsum_t *x = *(const tr_stepsum_t *const *)pa;
    const tr_stepsum_t *y = *(const tr_stepsum_t *const *)pb;
    int c = strcmp (x->cluster, y->cluster);

    if (!c)
        c = strcmp (x->node, y->node);
    return c ? c : (x->uid > y->uid) - (x->uid < y->uid);
}

static bool placeable (const tr_stepsum_t *r)
{
    return !isnan (r->uid) && r->uid >= 0 && r->uid < (double)(uid_t)-1
           && tr_record_id_is_safe (r->cluster)
           && tr_record_id_is_safe (r->node);
}

void tr_livesum_files_free (struct tr_livesum_file *files, size_t n)
{
    for (size_t i = 0; files && i < n; i++) {
        free (files[i].cluster);
        free (files[i].node);
        free (files[i].text);
    }
    free (files);
}

ssize_t tr_livesum_files (const tr_stepsum_t **rows,
                          size_t n,
                          double written_ms,
                          double interval_s,
                          struct tr_livesum_file **files)
{
    struct tr_livesum_file *v = NULL;
    size_t nv = 0, m = 0;

    *files = NULL;
    /* the placeable rows first, then sorted by place */
    for (size_t i = 0; i < n; i++)
        if (placeable (rows[i])) {
            const tr_stepsum_t *t = rows[m];

            rows[m++] = rows[i];
            rows[i] = t;
        }
    if (m > 1)
        qsort (rows, m, sizeof (*rows), cmp_place);
    if (m && !(v = calloc (m, sizeof (*v))))
        goto nomem;
    for (size_t i = 0, j; i < m; i = j) {
        struct tr_livesum_file *f = &v[nv];

        for (j = i + 1; j < m && !cmp_place (&rows[i], &rows[j]); j++)
            ;
        f->uid = (uid_t)rows[i]->uid;
        nv++;
        if (!(f->cluster = strdup (rows[i]->cluster))
            || !(f->node = strdup (rows[i]->node))
            || !(f->text =
                     tr_livesum_text (rows + i, j - i, f->cluster, f->node,
                                      f->uid, written_ms, interval_s)))
            goto nomem;
    }
    *files = v;
    return (ssize_t)nv;
nomem:
    tr_livesum_files_free (v, nv);
    errno = ENOMEM;
    return -1;
}

/* The next line of *p (its newline cut), or NULL at the end. */
static char *next_line (char **p)
{
    char *line = *p, *nl;

    if (!line || !*line)
        return NULL;
    if ((nl = strchr (line, '\n'))) {
        *nl = '\0';
        *p = nl + 1;
    }
    else
        *p = line + strlen (line);
    return line;
}

/* Split line at tabs into at most max fields; the count. */
static size_t split_tabs (char *line, char **f, size_t max)
{
    size_t n = 0;

    while (n < max) {
        f[n++] = line;
        if (!(line = strchr (line, '\t')))
            break;
        *line++ = '\0';
    }
    return n;
}

static int parse_number (const char *s, double *v)
{
    char *end;

    errno = 0;
    *v = strtod (s, &end);
    return *s && !*end && errno == 0 && isfinite (*v) ? 0 : -1;
}

static int refuse (tr_error_t *error, const char *what)
{
    errno = EINVAL;
    return tr_errprintf (error, "%s", what);
}

int tr_livesum_parse (char *text,
                      const char *cluster,
                      const char *node,
                      uid_t uid,
                      double now_ms,
                      tr_strpool_t *pool,
                      tr_livesum_row_f fn,
                      void *arg,
                      tr_error_t *error)
{
    tr_stepsum_t *rows = NULL;
    size_t n = 0, alloc = 0;
    char *p = text, *line, *f[7];
    char uidtext[32];
    double written, interval, count;
    bool ended = false;
    int rc = -1;

    if (!text || !cluster || !node || !pool || !fn) {
        errno = EINVAL;
        return tr_errprintf (error, "live summary: invalid argument");
    }
    snprintf (uidtext, sizeof (uidtext), "%u", (unsigned)uid);
    /* #tracer-live 1, and the place it was written for */
    if (!(line = next_line (&p)) || split_tabs (line, f, 7) != 6
        || strcmp (f[0], TR_LIVESUM_MAGIC))
        return refuse (error, "not a live summary (first line)");
    if (strcmp (f[1], cluster) || strcmp (f[2], node) || strcmp (f[3], uidtext))
        return refuse (error, "written for another node, cluster or user "
                              "(first line)");
    if (parse_number (f[4], &written) < 0 || parse_number (f[5], &interval) < 0
        || !(interval > 0))
        return refuse (error, "first line: bad time or interval");
    if (!(line = next_line (&p))
        || tr_stepsum_tsv_check_header (line, error) < 0) {
        errno = EINVAL;
        if (!line)
            tr_errprintf (error, "cut short after its first line");
        return -1;
    }
    while ((line = next_line (&p))) {
        tr_stepsum_t row;

        if (ended) {
            rc = refuse (error, "a line after #end");
            goto out;
        }
        if (!strncmp (line, "#end\t", 5)) {
            if (parse_number (line + 5, &count) < 0 || count != (double)n) {
                rc = refuse (error, "#end does not count the rows");
                goto out;
            }
            ended = true;
            continue;
        }
        tr_stepsum_init (&row);
        if (tr_stepsum_from_tsv (&row, line, pool, error) < 0)
            goto out;
        if (strcmp (row.cluster, cluster) || strcmp (row.node, node)
            || row.uid != (double)uid) {
            errno = EINVAL;
            rc = tr_errprintf (error,
                               "job %s: a row of another node, "
                               "cluster or user",
                               row.job_id);
            goto out;
        }
        if (n == alloc) {
            size_t a = alloc ? 2 * alloc : 16;
            tr_stepsum_t *v = realloc (rows, a * sizeof (*v));

            if (!v) {
                errno = ENOMEM;
                tr_errprintf (error, "live summary: out of memory");
                goto out;
            }
            rows = v;
            alloc = a;
        }
        row.sig = tr_strpool_intern (pool, TR_STEPSUM_SIG_LIVE);
        row.live_ms = written;
        row.live_stale =
            now_ms - written > 1000.0
                                   * (TR_LIVESUM_STALE_INTERVALS * interval
                                      + TR_LIVESUM_SLACK_S);
        if (!row.sig) {
            errno = ENOMEM;
            goto out;
        }
        rows[n++] = row;
    }
    if (!ended) {
        rc = refuse (error, "cut short (no #end line)");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (fn (&rows[i], arg) < 0)
            goto out;
    rc = 0;
out:
    free (rows);
    return rc;
}

/* --- Reading the store ------------------------------------------------ */

static bool want_dir (const char *name, void *arg)
{
    (void)arg;
    return tr_record_id_is_safe (name);
}

/* "<uid>.tsv", uid in decimal without a leading zero */
static bool uid_name (const char *name, uid_t *uid)
{
    char *end;
    unsigned long v;

    if (name[0] < '0' || name[0] > '9' || (name[0] == '0' && name[1] != '.'))
        return false;
    errno = 0;
    v = strtoul (name, &end, 10);
    if (errno || strcmp (end, ".tsv") || v >= (unsigned long)(uid_t)-1)
        return false;
    *uid = (uid_t)v;
    return true;
}

static bool want_file (const char *name, void *arg)
{
    uid_t uid;

    (void)arg;
    return uid_name (name, &uid);
}

struct scan {
    tr_store_t *store;
    uid_t writer;
    const struct tr_livesum_trust *trust;
    double now_ms;
    tr_strpool_t *pool;
    tr_livesum_row_f fn;
    tr_livesum_bad_f bad;
    void *arg;
    struct tr_livesum_stats *st;
};

static void said_bad (struct scan *s, const char *rel, const char *why)
{
    s->st->bad++;
    if (s->bad)
        s->bad (rel, why, s->arg);
}

/* Whether the live summary text (len bytes, owned by owner, of uid's
 * steps) is to be believed: its signature line, if any, cut off (len
 * then the signed part's) and verified; without one, only when its user
 * cannot have written it.  why says why not.
 */
static bool believed (struct scan *s,
                      char *text,
                      size_t *len,
                      uid_t owner,
                      uid_t uid,
                      char *why,
                      size_t size)
{
    static const char tag[] = "\n" TR_LIVESUM_SIG "\t";
    char *line = NULL, *p, *cred;
    tr_error_t error;
    tr_sig_status_t st;

    for (p = text; (p = strstr (p, tag)); p++)
        line = p + 1;
    if (!line) {
        if (owner != uid || uid == s->writer || uid == 0
            || s->trust->allow_unsigned)
            return true;
        snprintf (why, size,
                  "unsigned, and its user owns it (a store "
                  "without ACLs): not believed");
        return false;
    }
    cred = line + strlen (TR_LIVESUM_SIG) + 1;
    if (!(p = strchr (cred, '\n')) || p[1] != '\0') {
        snprintf (why, size, "its signature is not its last line");
        return false;
    }
    *p = '\0';
    st = tr_sign_verify_text (text, (size_t)(line - text), cred,
                              s->trust->munge_socket, s->trust->signers,
                              s->trust->n_signers, NULL, &error);
    if (st != TR_SIG_VALID && st != TR_SIG_VALID_OLD) {
        snprintf (why, size, "%s", tr_error_str (&error));
        return false;
    }
    *line = '\0';
    *len = (size_t)(line - text);
    return true;
}

int tr_livesum_sign (char **text, const char *munge_socket, tr_error_t *error)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char *cred = NULL;

    if (!text || !*text) {
        errno = EINVAL;
        return tr_errprintf (error, "live summary: nothing to sign");
    }
    if (tr_sign_text (*text, strlen (*text), munge_socket, &cred, error) < 0)
        return -1;
    if (tr_strbuf_printf (&sb, "%s%s\t%s\n", *text, TR_LIVESUM_SIG, cred) < 0) {
        free (cred);
        tr_strbuf_free (&sb);
        errno = ENOMEM;
        return tr_errprintf (error, "live summary: out of memory");
    }
    free (cred);
    free (*text);
    *text = tr_strbuf_steal (&sb);
    return 0;
}

/* One file: 0 (read, skipped or refused), -1 when fn stopped. */
static int scan_file (struct scan *s,
                      int dirfd,
                      const char *cluster,
                      const char *node,
                      const char *name)
{
    char rel[4096], why[300];
    struct stat st;
    tr_error_t error;
    uid_t uid;
    char *text = NULL;
    size_t len = 0;
    ssize_t got;
    int fd, rc = 0;

    snprintf (rel, sizeof (rel), "%s/live/%s/%s", cluster, node, name);
    if (!uid_name (name, &uid))
        return 0;
    fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        /* another user's (EACCES), or removed since listed */
        if (errno == ELOOP)
            said_bad (s, rel, "a symbolic link (not followed)");
        else if (errno != EACCES && errno != ENOENT)
            said_bad (s, rel, strerror (errno));
        return 0;
    }
    if (fstat (fd, &st) < 0) {
        said_bad (s, rel, strerror (errno));
        goto out;
    }
    if (!S_ISREG (st.st_mode)) {
        said_bad (s, rel, "not a regular file");
        goto out;
    }
    /* only the writer writes a live summary; on a store without ACLs its
     * user may own it, read-only
     */
    if ((st.st_mode & 0022)
        || (st.st_uid != s->writer && st.st_uid != 0 && st.st_uid != uid)) {
        said_bad (s, rel, "not the store writer's file (owner or mode)");
        goto out;
    }
    if (s->now_ms - 1000.0 * (double)st.st_mtime
        > 1000.0 * TR_LIVESUM_IGNORE_S) {
        s->st->old++;
        goto out;
    }
    if (st.st_size < 0 || (uintmax_t)st.st_size > TR_LIVESUM_MAX_BYTES) {
        said_bad (s, rel, "too large");
        goto out;
    }
    if (!(text = malloc ((size_t)st.st_size + 1))) {
        rc = -1;
        errno = ENOMEM;
        goto out;
    }
    while (len < (size_t)st.st_size
           && (got = read (fd, text + len, (size_t)st.st_size - len)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            said_bad (s, rel, strerror (errno));
            goto out;
        }
        len += (size_t)got;
    }
    text[len] = '\0';
    if (strlen (text) != len) {
        said_bad (s, rel, "holds a NUL byte");
        goto out;
    }
    if (!believed (s, text, &len, st.st_uid, uid, why, sizeof (why))) {
        said_bad (s, rel, why);
        goto out;
    }
    error.text[0] = '\0';
    if (tr_livesum_parse (text, cluster, node, uid, s->now_ms, s->pool, s->fn,
                          s->arg, &error)
        < 0) {
        if (errno == ENOMEM || !error.text[0]) {
            rc = -1;
            goto out;
        }
        snprintf (why, sizeof (why), "%s", error.text);
        said_bad (s, rel, why);
        goto out;
    }
    s->st->files++;
out:
    free (text);
    close (fd);
    return rc;
}

static int scan_cluster (struct scan *s, int rootfd, const char *cluster)
{
    char rel[4096];
    char **nodes = NULL, **files = NULL;
    size_t nn = 0, nf = 0;
    int livefd, nodefd, rc = 0;

    snprintf (rel, sizeof (rel), "%s/live", cluster);
    if ((livefd = tr_store_open_below (rootfd, rel)) < 0)
        return errno == ENOENT || errno == EACCES ? 0 : -1;
    if (tr_store_list (livefd, want_dir, NULL, DT_DIR, &nodes, &nn) < 0) {
        close (livefd);
        return -1;
    }
    for (size_t i = 0; i < nn && rc == 0; i++) {
        if ((nodefd = tr_store_open_below (livefd, nodes[i])) < 0)
            continue;
        if (tr_store_list (nodefd, want_file, NULL, DT_UNKNOWN, &files, &nf)
            == 0) {
            for (size_t k = 0; k < nf && rc == 0; k++)
                rc = scan_file (s, nodefd, cluster, nodes[i], files[k]);
            tr_store_free_names (files, nf);
        }
        close (nodefd);
    }
    tr_store_free_names (nodes, nn);
    close (livefd);
    return rc;
}

int tr_livesum_scan (tr_store_t *store,
                     const char *cluster,
                     uid_t writer,
                     const struct tr_livesum_trust *trust,
                     double now_ms,
                     tr_strpool_t *pool,
                     tr_livesum_row_f fn,
                     tr_livesum_bad_f bad,
                     void *arg,
                     struct tr_livesum_stats *stats,
                     tr_error_t *error)
{
    struct tr_livesum_stats none;
    static const struct tr_livesum_trust no_trust = { NULL, NULL, 0, false };
    struct scan s = { store,  writer, trust ? trust : &no_trust,
                      now_ms, pool,   fn,
                      bad,    arg,    stats };
    char **clusters = NULL;
    size_t nc = 0;
    int rootfd, rc = 0;

    if (!stats)
        s.st = &none;
    memset (s.st, 0, sizeof (*s.st));
    if (!store || !pool || !fn) {
        errno = EINVAL;
        return tr_errprintf (error, "live summaries: invalid argument");
    }
    rootfd = tr_store_rootfd (store);
    if (cluster) {
        if (!tr_record_id_is_safe (cluster)) {
            errno = EINVAL;
            return tr_errprintf (error, "cluster '%s': not a safe name",
                                 cluster);
        }
        rc = scan_cluster (&s, rootfd, cluster);
    }
    else if (tr_store_list (rootfd, want_dir, NULL, DT_DIR, &clusters, &nc) < 0)
        rc = -1;
    else {
        for (size_t i = 0; i < nc && rc == 0; i++)
            rc = scan_cluster (&s, rootfd, clusters[i]);
        tr_store_free_names (clusters, nc);
    }
    if (rc < 0)
        return tr_errprintf (error, "%s: live summaries: %s",
                             tr_store_root (store), strerror (errno));
    return 0;
}
