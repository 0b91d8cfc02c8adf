/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The Parquet lake of step summaries (lake.h).  The columns are made
 * from tr_stepsum_fields, so a field added there is exported with the
 * value the listing shows; the cost columns come from tr_waste_row.
 * Incremental exports keep, per day, the record paths each part holds:
 * a day's state is read only when that day has rows to add, so a cron
 * job over the last few days reads a few state files, whatever the
 * lake's age.  Writes are atomic renames in order (part, then state);
 * the lock (flock) keeps two exports from numbering the same part.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lake.h"
#include "parquet.h"
#include "libtracer/record/store.h"
#include "libtracer/util/path.h"
#include "libtracer/util/strbuf.h"

#define STATE_DIR "_tracer-export"
#define STATE_HEADER "#tracer-lake 1"
#define MAX_PARTS 9999

/* Fields the lake leaves out: a node's own core-hours, which the cost
 * columns (the step's, shared) replace, so that a row never holds two
 * different "allocated core-hours".
 */
static bool field_left_out (const tr_field_t *f)
{
    return !strcmp (f->name, "allocch") || !strcmp (f->name, "usedch");
}

static const char *const cost_names[4][3] = {
    { "core_hours_allocated", "core_hours_used", "core_hours_wasted" },
    { "gib_hours_allocated", "gib_hours_used", "gib_hours_wasted" },
    { "gpu_hours_allocated", "gpu_hours_used", "gpu_hours_wasted" },
    { "cost_allocated", "cost_used", "cost_wasted" },
};

struct tr_lake {
    int dirfd;
    int statefd; /* DIR/_tracer-export */
    int lockfd;
    mode_t file_mode;
    mode_t dir_mode;
    /* columns */
    struct tr_parquet_column *cols;
    const tr_field_t **fields; /* per column, NULL past the fields */
    size_t ncols, nfields;
    struct tr_parquet_value *vals;
    char (*sbuf)[256]; /* per field, for derived strings */
    char *created_by;
    /* the day begun */
    char day[16];
    bool in_day;
    int dayfd;
    char **done; /* sorted paths already exported */
    size_t ndone;
    tr_strbuf_t state; /* the day's state file as read */
    unsigned next_part;
    tr_parquet_t *pq;
    tr_strbuf_t paths; /* "\t" + path + "\n" per row added */
    size_t rows_written, files_written;
};

int tr_lake_day (const tr_stepsum_t *row, char *buf, size_t size)
{
    double ms = isfinite (row->end_ms) ? row->end_ms : row->start_ms;

    if (!isfinite (ms) || ms < 0) {
        errno = EINVAL;
        return -1;
    }
    return tr_store_format_day ((time_t)(ms / 1000), buf, size);
}

static void free_done (tr_lake_t *l)
{
    free (l->done);
    l->done = NULL;
    l->ndone = 0;
}

void tr_lake_destroy (tr_lake_t *l)
{
    int saved = errno;

    if (!l)
        return;
    if (l->dayfd >= 0)
        close (l->dayfd);
    if (l->statefd >= 0)
        close (l->statefd);
    if (l->lockfd >= 0)
        close (l->lockfd); /* releases the lock */
    if (l->dirfd >= 0)
        close (l->dirfd);
    free_done (l);
    tr_strbuf_free (&l->state);
    tr_strbuf_free (&l->paths);
    tr_parquet_destroy (l->pq);
    free (l->cols);
    free (l->fields);
    free (l->vals);
    free (l->sbuf);
    free (l->created_by);
    free (l);
    errno = saved;
}

static int make_columns (tr_lake_t *l, tr_error_t *error)
{
    size_t n = 0, k = 0;

    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++)
        n += !field_left_out (f);
    l->nfields = n;
    l->ncols = n + 1 + 12;
    if (!(l->cols = calloc (l->ncols, sizeof (*l->cols)))
        || !(l->fields = calloc (l->ncols, sizeof (*l->fields)))
        || !(l->vals = calloc (l->ncols, sizeof (*l->vals)))
        || !(l->sbuf = calloc (n, sizeof (*l->sbuf)))) {
        errno = ENOMEM;
        return tr_errprintf (error, "out of memory");
    }
    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++) {
        struct tr_parquet_column *c = &l->cols[k];

        if (field_left_out (f))
            continue;
        l->fields[k++] = f;
        c->name = f->name;
        c->optional = true;
        switch (f->kind) {
        case TR_FIELD_STR:
            c->type = TR_PARQUET_STRING;
            break;
        case TR_FIELD_COUNT:
            c->type = TR_PARQUET_INT64;
            break;
        case TR_FIELD_TIME:
            c->type = TR_PARQUET_TIMESTAMP_MS;
            break;
        default:
            c->type = TR_PARQUET_DOUBLE;
            break;
        }
    }
    /* "" is no finding, not unknown: the diagnosis is always there */
    l->cols[k++] =
        (struct tr_parquet_column){ "diagnosis", TR_PARQUET_STRING, false };
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            l->cols[k++] =
                (struct tr_parquet_column){ cost_names[i][j], TR_PARQUET_DOUBLE,
                                            true };
    return 0;
}

/* Open (creating) directory name below dirfd. */
static int open_subdir (int dirfd,
                        const char *name,
                        mode_t mode,
                        tr_error_t *error)
{
    int fd;

    if (mkdirat (dirfd, name, mode) < 0 && errno != EEXIST)
        return tr_errprintf (error, "%s: %s", name, strerror (errno));
    if ((fd = openat (dirfd, name,
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        < 0)
        return tr_errprintf (error, "%s: %s", name,
                             errno == ENOTDIR ? "not a directory"
                                              : strerror (errno));
    return fd;
}

/* Read the whole of dirfd/name into sb; 1 when it does not exist. */
static int read_file (int dirfd,
                      const char *name,
                      tr_strbuf_t *sb,
                      tr_error_t *error)
{
    char buf[65536];
    ssize_t n;
    int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    sb->len = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        return tr_errprintf (error, "%s: %s", name, strerror (errno));
    }
    while ((n = read (fd, buf, sizeof (buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            tr_errprintf (error, "%s: %s", name, strerror (errno));
            close (fd);
            return -1;
        }
        if (tr_strbuf_append (sb, buf, (size_t)n) < 0) {
            close (fd);
            return tr_errprintf (error, "out of memory");
        }
    }
    close (fd);
    return 0;
}

int tr_lake_last (const char *dir, time_t *t, tr_error_t *error)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char path[4096], *end;
    long long v;
    int rc;

    if (snprintf (path, sizeof (path), "%s/" STATE_DIR "/last", dir)
        >= (int)sizeof (path)) {
        errno = ENAMETOOLONG;
        return tr_errprintf (error, "%s: path too long", dir);
    }
    if ((rc = read_file (AT_FDCWD, path, &sb, error)) != 0) {
        tr_strbuf_free (&sb);
        /* no DIR, no state directory, no last export: none */
        return rc < 0 && errno == ENOTDIR ? 1 : rc;
    }
    errno = 0;
    v = sb.buf ? strtoll (sb.buf, &end, 10) : 0;
    if (!sb.buf || errno || end == sb.buf || (*end && *end != '\n') || v < 0) {
        tr_strbuf_free (&sb);
        errno = EINVAL;
        return tr_errprintf (error, "%s: not a time", path);
    }
    tr_strbuf_free (&sb);
    *t = (time_t)v;
    return 0;
}

tr_lake_t *tr_lake_open (const char *dir,
                         bool add,
                         const char *created_by,
                         mode_t file_mode,
                         mode_t dir_mode,
                         tr_error_t *error)
{
    tr_lake_t *l = calloc (1, sizeof (*l));
    struct stat st;

    if (!l) {
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    l->dirfd = l->statefd = l->lockfd = l->dayfd = -1;
    l->file_mode = file_mode;
    l->dir_mode = dir_mode;
    if (created_by && !(l->created_by = strdup (created_by))) {
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        goto fail;
    }
    if (make_columns (l, error) < 0)
        goto fail;
    if (mkdir (dir, dir_mode) < 0 && errno != EEXIST) {
        tr_errprintf (error, "%s: %s", dir, strerror (errno));
        goto fail;
    }
    if ((l->dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        tr_errprintf (error, "%s: %s", dir,
                      errno == ENOTDIR ? "not a directory" : strerror (errno));
        goto fail;
    }
    if (!add && fstatat (l->dirfd, STATE_DIR, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        errno = EEXIST;
        tr_errprintf (error,
                      "%s holds an export already: add to it with "
                      "--since-last, or choose another directory",
                      dir);
        goto fail;
    }
    if ((l->statefd = open_subdir (l->dirfd, STATE_DIR, dir_mode, error)) < 0)
        goto fail;
    if ((l->lockfd =
             openat (l->statefd, "lock",
                     O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, file_mode))
        < 0) {
        tr_errprintf (error, "%s/" STATE_DIR "/lock: %s", dir,
                      strerror (errno));
        goto fail;
    }
    if (flock (l->lockfd, LOCK_EX | LOCK_NB) < 0) {
        if (errno == EWOULDBLOCK)
            tr_errprintf (error, "%s: another export into it is running", dir);
        else
            tr_errprintf (error, "%s/" STATE_DIR "/lock: %s", dir,
                          strerror (errno));
        goto fail;
    }
    return l;
fail:
    tr_lake_destroy (l);
    return NULL;
}

static int cmp_str (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

static bool is_part_name (const char *name, unsigned *num)
{
    unsigned n = 0;
    const char *p = name + 5;

    if (strncmp (name, "part-", 5))
        return false;
    for (int i = 0; i < 4; i++, p++) {
        if (*p < '0' || *p > '9')
            return false;
        n = n * 10 + (unsigned)(*p - '0');
    }
    if (strcmp (p, ".parquet"))
        return false;
    *num = n;
    return true;
}

static bool want_part (const char *name, void *arg)
{
    unsigned n;

    (void)arg;
    return is_part_name (name, &n);
}

/* Parse the day's state (l->state, modified in place): every path into
 * l->done, the highest part named into *maxp.
 */
static int parse_state (tr_lake_t *l, unsigned *maxp, tr_error_t *error)
{
    char *p = l->state.buf, *nl;
    size_t cap = 0;

    *maxp = 0;
    if (!p || strncmp (p, STATE_HEADER "\n", strlen (STATE_HEADER) + 1)) {
        errno = EINVAL;
        return tr_errprintf (error, STATE_DIR "/days/%s: not a state file",
                             l->day);
    }
    p += strlen (STATE_HEADER) + 1;
    for (; *p; p = nl + 1) {
        char *tab;
        unsigned n;

        if (!(nl = strchr (p, '\n')) || !(tab = memchr (p, '\t', nl - p))) {
            errno = EINVAL;
            return tr_errprintf (error, STATE_DIR "/days/%s: a line cut short",
                                 l->day);
        }
        *tab = *nl = '\0';
        if (!is_part_name (p, &n)) {
            errno = EINVAL;
            return tr_errprintf (error, STATE_DIR "/days/%s: '%s' is no part",
                                 l->day, p);
        }
        if (n > *maxp)
            *maxp = n;
        if (l->ndone == cap) {
            char **v;

            cap = cap ? 2 * cap : 1024;
            if (!(v = realloc (l->done, cap * sizeof (*v)))) {
                errno = ENOMEM;
                return tr_errprintf (error, "out of memory");
            }
            l->done = v;
        }
        l->done[l->ndone++] = tab + 1;
    }
    if (l->ndone > 1)
        qsort (l->done, l->ndone, sizeof (*l->done), cmp_str);
    return 0;
}

/* Is part name named in the state as read (before parse_state cut it)? */
static bool state_names (const tr_strbuf_t *raw, const char *name)
{
    size_t n = strlen (name);

    for (const char *p = raw->buf; p && (p = strstr (p, name)); p += n)
        if ((p == raw->buf || p[-1] == '\n') && p[n] == '\t')
            return true;
    return false;
}

int tr_lake_begin_day (tr_lake_t *l, const char *day, tr_error_t *error)
{
    char name[64], statename[64];
    char **parts = NULL;
    size_t nparts = 0;
    unsigned maxp = 0;
    tr_strbuf_t raw = TR_STRBUF_INIT;
    int rc;

    if (l->in_day) {
        errno = EINVAL;
        return tr_errprintf (error, "day %s not ended", l->day);
    }
    if (!tr_store_is_day_name (day)) {
        errno = EINVAL;
        return tr_errprintf (error, "'%s' is not a day", day);
    }
    snprintf (l->day, sizeof (l->day), "%s", day);
    snprintf (name, sizeof (name), "day=%s", day);
    snprintf (statename, sizeof (statename), "days/%s", day);
    free_done (l);
    if ((rc = read_file (l->statefd, statename, &l->state, error)) < 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return -1;
        rc = 1;
    }
    if (rc == 0) {
        if (tr_strbuf_append (&raw, l->state.buf, l->state.len) < 0) {
            errno = ENOMEM;
            return tr_errprintf (error, "out of memory");
        }
        if (parse_state (l, &maxp, error) < 0)
            goto fail;
    }
    if ((l->dayfd = open_subdir (l->dirfd, name, l->dir_mode, error)) < 0)
        goto fail;
    /* parts no state names: an export stopped before its state landed */
    if (tr_store_list (l->dayfd, want_part, NULL, DT_REG, &parts, &nparts)
        < 0) {
        tr_errprintf (error, "%s: %s", name, strerror (errno));
        goto fail;
    }
    for (size_t i = 0; i < nparts; i++) {
        unsigned n;

        if (rc == 0 && state_names (&raw, parts[i]))
            continue;
        if (unlinkat (l->dayfd, parts[i], 0) < 0 && errno != ENOENT) {
            tr_errprintf (error, "%s/%s: %s", name, parts[i], strerror (errno));
            goto fail;
        }
        /* never reuse its number: a reader may still hold it open */
        if (is_part_name (parts[i], &n) && n > maxp)
            maxp = n;
    }
    tr_store_free_names (parts, nparts);
    parts = NULL;
    tr_strbuf_free (&raw);
    l->next_part = rc == 0 || nparts > 0 ? maxp + 1 : 0;
    l->in_day = true;
    l->paths.len = 0;
    return 0;
fail:
    tr_store_free_names (parts, nparts);
    tr_strbuf_free (&raw);
    if (l->dayfd >= 0)
        close (l->dayfd);
    l->dayfd = -1;
    free_done (l);
    return -1;
}

bool tr_lake_exported (const tr_lake_t *l, const char *path)
{
    return l->in_day && l->ndone
           && bsearch (&path, l->done, l->ndone, sizeof (*l->done), cmp_str);
}

static void set_num (struct tr_parquet_value *v,
                     tr_parquet_type_t type,
                     double d)
{
    v->null = !isfinite (d);
    if (v->null)
        return;
    if (type == TR_PARQUET_DOUBLE)
        v->v.d = d;
    else
        v->v.i64 = (int64_t)llround (d);
}

int tr_lake_add (tr_lake_t *l, const struct tr_lake_row *r, tr_error_t *error)
{
    char day[16];
    const char *path = r->row->path;
    size_t k = 0;

    if (!l->in_day || tr_lake_day (r->row, day, sizeof (day)) < 0
        || strcmp (day, l->day)) {
        errno = EINVAL;
        return tr_errprintf (error, "%s: not a row of day %s", path, l->day);
    }
    if (!*path || strpbrk (path, "\t\n")) {
        errno = EINVAL;
        return tr_errprintf (error, "'%s': not a record path", path);
    }
    if (!l->pq) {
        if (!(l->pq = tr_parquet_create ("steps", l->cols, l->ncols,
                                         l->created_by, error)))
            return -1;
    }
    for (; k < l->nfields; k++) {
        const tr_field_t *f = l->fields[k];
        struct tr_parquet_value *v = &l->vals[k];

        if (f->kind == TR_FIELD_STR) {
            const char *s =
                tr_stepsum_str (r->row, f, l->sbuf[k], sizeof (l->sbuf[0]));

            v->null = !*s;
            v->v.str.s = s;
            v->v.str.len = strlen (s);
        }
        else
            set_num (v, l->cols[k].type, tr_stepsum_num (r->row, f));
    }
    l->vals[k].null = false;
    l->vals[k].v.str.s = r->diagnosis ? r->diagnosis : "";
    l->vals[k].v.str.len = strlen (l->vals[k].v.str.s);
    k++;
    for (int j = 0; j < 3; j++) {
        set_num (&l->vals[k + j], TR_PARQUET_DOUBLE, r->cost.core[j]);
        set_num (&l->vals[k + 3 + j], TR_PARQUET_DOUBLE, r->cost.mem[j]);
        set_num (&l->vals[k + 6 + j], TR_PARQUET_DOUBLE, r->cost.gpu[j]);
        set_num (&l->vals[k + 9 + j], TR_PARQUET_DOUBLE, r->cost.money[j]);
    }
    if (tr_strbuf_append (&l->paths, "\t", 1) < 0
        || tr_strbuf_append (&l->paths, path, strlen (path)) < 0
        || tr_strbuf_append (&l->paths, "\n", 1) < 0) {
        errno = ENOMEM;
        return tr_errprintf (error, "out of memory");
    }
    if (tr_parquet_add_row (l->pq, l->vals, error) < 0) {
        /* the row is not in the table: nor its path in the state */
        size_t n = strlen (path) + 2;
        l->paths.len -= n;
        l->paths.buf[l->paths.len] = '\0';
        return -1;
    }
    return 0;
}

int tr_lake_end_day (tr_lake_t *l, const char *currency, tr_error_t *error)
{
    char part[32], dayname[64], statename[64];
    tr_strbuf_t state = TR_STRBUF_INIT, old = TR_STRBUF_INIT;
    void *buf = NULL;
    size_t len, rows;
    int rc = -1;

    if (!l->in_day) {
        errno = EINVAL;
        return tr_errprintf (error, "no day begun");
    }
    rows = l->pq ? tr_parquet_rows (l->pq) : 0;
    if (rows == 0) {
        rc = 0;
        goto out;
    }
    if (l->next_part > MAX_PARTS) {
        errno = EOVERFLOW;
        tr_errprintf (error, "day=%s holds %d parts already", l->day,
                      MAX_PARTS);
        goto out;
    }
    snprintf (part, sizeof (part), "part-%04u.parquet", l->next_part);
    snprintf (dayname, sizeof (dayname), "day=%s", l->day);
    snprintf (statename, sizeof (statename), "days/%s", l->day);
    if (tr_parquet_set_meta (l->pq, "tracer.export", "steps", error) < 0
        || tr_parquet_set_meta (l->pq, "tracer.day", l->day, error) < 0
        || (currency && *currency
            && tr_parquet_set_meta (l->pq, "tracer.currency", currency, error)
                   < 0))
        goto out;
    if (!(buf = tr_parquet_finish (l->pq, &len, error)))
        goto out;
    if (tr_path_write_atomic (l->dayfd, part, buf, len, l->file_mode, (uid_t)-1,
                              (gid_t)-1, error)
        < 0) {
        tr_errprintf (error, "%s/%s: %s", dayname, part, strerror (errno));
        goto out;
    }
    /* the state: its lines as they were, then this part's */
    if (read_file (l->statefd, statename, &old, NULL) < 0 && errno != ENOENT)
        old.len = 0;
    if (old.len == 0 && tr_strbuf_printf (&state, "%s\n", STATE_HEADER) < 0)
        goto nomem;
    if (old.len && tr_strbuf_append (&state, old.buf, old.len) < 0)
        goto nomem;
    for (const char *p = l->paths.buf, *nl; p && *p; p = nl + 1) {
        nl = strchr (p, '\n');
        if (tr_strbuf_append (&state, part, strlen (part)) < 0
            || tr_strbuf_append (&state, p, (size_t)(nl - p + 1)) < 0)
            goto nomem;
    }
    if (mkdirat (l->statefd, "days", l->dir_mode) < 0 && errno != EEXIST) {
        tr_errprintf (error, STATE_DIR "/days: %s", strerror (errno));
        goto undo;
    }
    {
        int fd = openat (l->statefd, "days",
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0) {
            tr_errprintf (error, STATE_DIR "/days: %s", strerror (errno));
            goto undo;
        }
        if (tr_path_write_atomic (fd, l->day, state.buf, state.len,
                                  l->file_mode, (uid_t)-1, (gid_t)-1, error)
            < 0) {
            tr_errprintf (error, STATE_DIR "/days/%s: %s", l->day,
                          strerror (errno));
            close (fd);
            goto undo;
        }
        close (fd);
    }
    l->rows_written += rows;
    l->files_written++;
    rc = 0;
    goto out;
nomem:
    errno = ENOMEM;
    tr_errprintf (error, "out of memory");
undo:
    /* the part without its state would be removed by the next export;
     * removed now, the lake is as it was
     */
    {
        int saved = errno;
        (void)unlinkat (l->dayfd, part, 0);
        errno = saved;
    }
out:
    free (buf);
    tr_strbuf_free (&state);
    tr_strbuf_free (&old);
    tr_parquet_destroy (l->pq);
    l->pq = NULL;
    l->paths.len = 0;
    if (l->dayfd >= 0)
        close (l->dayfd);
    l->dayfd = -1;
    free_done (l);
    l->in_day = false;
    return rc;
}

int tr_lake_finish (tr_lake_t *l, time_t t, tr_error_t *error)
{
    char buf[32];
    int n = snprintf (buf, sizeof (buf), "%lld\n", (long long)t);

    if (tr_path_write_atomic (l->statefd, "last", buf, (size_t)n, l->file_mode,
                              (uid_t)-1, (gid_t)-1, error)
        < 0)
        return tr_errprintf (error, STATE_DIR "/last: %s", strerror (errno));
    return 0;
}

size_t tr_lake_rows_written (const tr_lake_t *l)
{
    return l ? l->rows_written : 0;
}

size_t tr_lake_files_written (const tr_lake_t *l)
{
    return l ? l->files_written : 0;
}
