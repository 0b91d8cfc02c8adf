/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The summary index (design in index.h): per-day immutable segments of
 * step summary rows beside the store, so that a query reads flat text
 * instead of a million signed JSON records.  No locks anywhere, because
 * the store lives on NFS or Lustre with writers on many nodes: segments
 * appear by rename, vanish only by compaction (readers list again), and
 * a day is known unchanged by comparing its directory's mtime with the
 * one a segment recorded before it listed the day's markers.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "index.h"
#include "libtracer/util/path.h"
#include "record.h"
#include "libtracer/util/strbuf.h"

#define DEFAULT_FILE_MODE 0640
#define DEFAULT_DIR_MODE 0755
#define DEFAULT_MAX_SEGMENTS 8

/* Listings repeated after a segment vanished, before the day's records
 * are loaded instead: a compaction replaces a day's segments once, so
 * more than a few in a row means something else is going on.
 */
#define MAX_RELIST 5

/* A claim needs the day's mtime this much older than the server's clock
 * (see index.h): well above any file system's timestamp granularity and
 * the clock skew of Lustre clients, which stamp times themselves.
 */
#define RACY_NS 2000000000LL

/* Temporaries older than this were left by a writer that died. */
#define STALE_TMP_S 3600

/* Refuse segments larger than this (a day of a very busy cluster is a
 * few hundred MB).
 */
#define SEGMENT_MAX ((off_t)1 << 32)

#define SEG_PREFIX "seg-"
#define SEG_SUFFIX ".tsv"
#define TMP_SUFFIX ".tmp"

/* Keys seen on the day: record paths (rows and bad records) and the
 * names of per-job markers covered.  Open addressing over spans that
 * point into segment buffers or the day's arena, so a day of a million
 * rows costs one table, not a million allocations.
 */
struct key {
    uint64_t h;
    const char *s;
    size_t len;
};

struct keyset {
    struct key *slots;
    size_t n;
    size_t cap; /* power of two, or 0 */
};

/* Owned copies of keys that are not in a segment buffer. */
struct chunk {
    struct chunk *next;
    size_t used;
    size_t size;
    char data[];
};

/* A line of a segment kept for a compaction, without its newline. */
struct span {
    const char *s;
    size_t len;
};

struct claim {
    long long ns;
    unsigned i;
    unsigned n;
};

enum seg_state {
    SEG_USED,      /* read and parsed in full */
    SEG_BROKEN,    /* ours (trusted) but malformed: compaction removes */
    SEG_UNTRUSTED, /* unreadable, foreign or writable by others: left */
};

struct seg {
    char *name;
    char *buf; /* the whole file, NUL-terminated */
    size_t len;
    enum seg_state state;
};

/* The state of one day of the scan. */
struct day {
    char name[16];
    int idxfd;          /* <cluster>/index/<day>, or -1 */
    bool unreadable;    /* the index directory could not be read */
    long long mtime_ns; /* of <cluster>/days/<day>, at the start */
    struct seg *segs;
    size_t nsegs;
    size_t capsegs;
    char **tmps; /* temporaries seen in the index directory */
    size_t ntmps;
    struct span *lines; /* winning lines, for a compaction */
    size_t nlines;
    size_t caplines;
    struct claim *claims;
    size_t nclaims;
    size_t capclaims;
    struct keyset keys;
    struct chunk *arena;
    tr_strbuf_t delta; /* lines loaded now, for the new segment */
    size_t drows;
    size_t dbad;
    size_t dmarkers;
    bool skipped; /* a record could not be read: claim nothing */
    const char **stale; /* rows whose record file changed: load again */
    size_t nstale;
    size_t capstale;
};

/* A record file's identity, as a "#file" line keeps it: a record that is
 * replaced (rename) or rewritten in place (by an owner who may) changes
 * at least its inode or its change time, which nobody can set.
 */
struct fileid {
    unsigned long long dev, ino, size;
    long long mtime_ns, ctime_ns;
};

struct scan {
    tr_store_t *store;
    int rootfd;
    const char *root;
    const char *cluster;
    int daysfd;  /* <cluster>/days */
    int indexfd; /* <cluster>/index, or -1 */
    struct tr_index_opts o;
    tr_index_load_f load;
    void *load_arg;
    tr_index_row_f fn;
    void *arg;
    tr_strpool_t *pool;
    struct tr_index_stats *st;
    tr_error_t *error;
    int count;
    bool stopped;
    int stopval;
    size_t col_job; /* columns of a row line */
    size_t col_path;
    size_t ncols;
    char *hdr; /* the header line, without newline */
    size_t hdrlen;
    char *line; /* scratch copy of a row for parsing */
    size_t linecap;
    tr_stepsum_t row;
    struct day day;
    char host[65];
};

static unsigned int seg_counter;

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

/* Key set */

static struct key *keyset_find (struct keyset *ks,
                                uint64_t h,
                                const char *s,
                                size_t len)
{
    size_t mask = ks->cap - 1;

    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct key *k = &ks->slots[i];
        if (!k->s || (k->h == h && k->len == len && memcmp (k->s, s, len) == 0))
            return k;
    }
}

static bool keyset_has (struct keyset *ks, const char *s, size_t len)
{
    if (ks->n == 0)
        return false;
    return keyset_find (ks, tr_str_hash64 (s, len), s, len)->s != NULL;
}

/* Add a key (s must outlive the set).  1 added, 0 present, -1 ENOMEM. */
static int keyset_add (struct keyset *ks, const char *s, size_t len)
{
    uint64_t h = tr_str_hash64 (s, len);
    struct key *k;

    if ((ks->n + 1) * 2 > ks->cap) {
        size_t ncap = ks->cap ? ks->cap * 2 : 1024;
        struct key *old = ks->slots;
        size_t oldcap = ks->cap;

        if (!(ks->slots = calloc (ncap, sizeof (*ks->slots)))) {
            ks->slots = old;
            errno = ENOMEM;
            return -1;
        }
        ks->cap = ncap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].s)
                *keyset_find (ks, old[i].h, old[i].s, old[i].len) = old[i];
        free (old);
    }
    k = keyset_find (ks, h, s, len);
    if (k->s)
        return 0;
    k->h = h;
    k->s = s;
    k->len = len;
    ks->n++;
    return 1;
}

static void keyset_clear (struct keyset *ks)
{
    if (ks->n > 0)
        memset (ks->slots, 0, ks->cap * sizeof (*ks->slots));
    ks->n = 0;
}

static const char *arena_dup (struct chunk **arena, const char *s, size_t len)
{
    struct chunk *c = *arena;
    char *p;

    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > 65536 ? len + 1 : 65536;
        if (!(c = malloc (sizeof (*c) + size))) {
            errno = ENOMEM;
            return NULL;
        }
        c->size = size;
        c->used = 0;
        c->next = *arena;
        *arena = c;
    }
    p = c->data + c->used;
    memcpy (p, s, len);
    p[len] = '\0';
    c->used += len + 1;
    return p;
}

static void arena_free (struct chunk **arena)
{
    while (*arena) {
        struct chunk *next = (*arena)->next;
        free (*arena);
        *arena = next;
    }
}

/* Small helpers */

static int grow (void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *np = realloc (*p, ncap * size);
    if (!np) {
        errno = ENOMEM;
        return -1;
    }
    *p = np;
    *cap = ncap;
    return 0;
}

static long long ts_ns (const struct timespec *ts)
{
    return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static bool has_suffix (const char *s, const char *suffix)
{
    size_t n = strlen (s);
    size_t m = strlen (suffix);

    return n > m && strcmp (s + n - m, suffix) == 0;
}

enum list_kind {
    LIST_DAYS,     /* directories named YYYY-MM-DD */
    LIST_MARKERS,  /* regular files, not hidden */
    LIST_SEGMENTS, /* seg-*.tsv (any type: the open checks it) */
    LIST_TMPS,     /* .seg-*.tmp */
};

static bool name_of_kind (const char *name, void *arg)
{
    switch (*(enum list_kind *)arg) {
    case LIST_SEGMENTS:
        return strncmp (name, SEG_PREFIX, strlen (SEG_PREFIX)) == 0
               && has_suffix (name, SEG_SUFFIX);
    case LIST_TMPS:
        return name[0] == '.'
               && strncmp (name + 1, SEG_PREFIX, strlen (SEG_PREFIX)) == 0
               && has_suffix (name, TMP_SUFFIX);
    case LIST_DAYS:
        return tr_store_is_day_name (name);
    case LIST_MARKERS:
    default:
        return name[0] != '.';
    }
}

/* List directory fd (not consumed) of one kind, sorted. */
static int list_names (int fd, enum list_kind kind, char ***namesp, size_t *np)
{
    unsigned char type = kind == LIST_DAYS      ? DT_DIR
                         : kind == LIST_MARKERS ? DT_REG
                                                : DT_UNKNOWN;

    return tr_store_list (fd, name_of_kind, &kind, type, namesp, np);
}

static bool in_shard (const struct scan *sc, const char *job, size_t len)
{
    char buf[256];

    if (sc->o.shard_n == 0)
        return true;
    if (len >= sizeof (buf))
        len = sizeof (buf) - 1;
    memcpy (buf, job, len);
    buf[len] = '\0';
    return tr_store_job_hash (buf) % sc->o.shard_n == sc->o.shard_i;
}

/* The job id in a record path "<cluster>/jobs/<bucket>/<job>/<file>". */
static bool path_job (const char *path,
                      size_t len,
                      const char **job,
                      size_t *jlen)
{
    const char *p = path;
    const char *end = path + len;

    for (int i = 0; i < 3; i++) {
        const char *slash = memchr (p, '/', (size_t)(end - p));
        if (!slash)
            return false;
        p = slash + 1;
    }
    const char *slash = memchr (p, '/', (size_t)(end - p));
    if (!slash)
        return false;
    *job = p;
    *jlen = (size_t)(slash - p);
    return true;
}

static void emit (struct scan *sc, const tr_stepsum_t *row)
{
    int rc = sc->fn (row, sc->arg);

    sc->count++;
    if (rc != 0) {
        sc->stopped = true;
        sc->stopval = rc;
    }
}

/* Day state */

static void day_reset (struct day *d)
{
    if (d->idxfd >= 0)
        close (d->idxfd);
    d->idxfd = -1;
    d->unreadable = false;
    for (size_t i = 0; i < d->nsegs; i++) {
        free (d->segs[i].name);
        free (d->segs[i].buf);
    }
    d->nsegs = 0;
    tr_store_free_names (d->tmps, d->ntmps);
    d->tmps = NULL;
    d->ntmps = 0;
    d->nlines = 0;
    d->nclaims = 0;
    keyset_clear (&d->keys);
    arena_free (&d->arena);
    tr_strbuf_reset (&d->delta);
    d->drows = d->dbad = d->dmarkers = 0;
    d->skipped = false;
    d->nstale = 0;
}

static void day_free (struct day *d)
{
    day_reset (d);
    free (d->segs);
    free (d->lines);
    free (d->claims);
    free (d->stale);
    free (d->keys.slots);
    tr_strbuf_free (&d->delta);
}

static int keep_line (struct scan *sc, const char *s, size_t len)
{
    struct day *d = &sc->day;

    if (!sc->o.write)
        return 0;
    if (grow ((void **)&d->lines, &d->caplines, d->nlines, sizeof (*d->lines))
        < 0)
        return -1;
    d->lines[d->nlines].s = s;
    d->lines[d->nlines].len = len;
    d->nlines++;
    return 0;
}

/* Reading segments */

/* Parse an unsigned decimal of a #end or #mtime field. */
static bool parse_ull (const char *s, const char *end, unsigned long long *v)
{
    unsigned long long x = 0;

    if (s == end)
        return false;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || x > (ULLONG_MAX - 9) / 10)
            return false;
        x = x * 10 + (unsigned long long)(*s - '0');
    }
    *v = x;
    return true;
}

/* Split a meta line ("#word\tA\tB...") into at most max fields after the
 * word; returns the number found.
 */
static size_t split_fields (const char *s,
                            size_t len,
                            const char **f,
                            const char **fe,
                            size_t max)
{
    const char *end = s + len;
    const char *p = memchr (s, '\t', len);
    size_t n = 0;

    while (p && n < max) {
        const char *q = memchr (p + 1, '\t', (size_t)(end - p - 1));
        f[n] = p + 1;
        fe[n] = q ? q : end;
        n++;
        p = q;
    }
    return p ? max + 1 : n;
}

static bool starts (const char *s, size_t len, const char *word)
{
    size_t n = strlen (word);
    return len > n && memcmp (s, word, n) == 0 && s[n] == '\t';
}

/* Check a segment's structure before anything of it is used: the header,
 * the #end line last, and its counts.  Returns true if sound.
 */
static bool segment_sound (const struct scan *sc, const char *buf, size_t len)
{
    unsigned long long want[4];
    size_t got[4] = { 0, 0, 0, 0 };
    const char *f[5];
    const char *fe[5];
    const char *last;
    const char *p;

    if (len < sc->hdrlen + 1 || buf[len - 1] != '\n'
        || memcmp (buf, sc->hdr, sc->hdrlen) != 0 || buf[sc->hdrlen] != '\n')
        return false;
    /* The last line. */
    last = buf + len - 1;
    while (last > buf && last[-1] != '\n')
        last--;
    if (last == buf || !starts (last, (size_t)(buf + len - 1 - last), "#end")
        || split_fields (last, (size_t)(buf + len - 1 - last), f, fe, 4) != 4)
        return false;
    for (int i = 0; i < 4; i++)
        if (!parse_ull (f[i], fe[i], &want[i]))
            return false;
    for (p = buf + sc->hdrlen + 1; p < last;) {
        const char *nl = memchr (p, '\n', (size_t)(last - p));
        size_t n = (size_t)(nl - p);

        if (p[0] != '#')
            got[0]++;
        else if (starts (p, n, "#bad"))
            got[1]++;
        else if (starts (p, n, "#marker"))
            got[2]++;
        else if (starts (p, n, "#mtime"))
            got[3]++;
        /* other '#' lines: added by a later version, ignored */
        p = nl + 1;
    }
    for (int i = 0; i < 4; i++)
        if (got[i] != want[i])
            return false;
    return true;
}

/* Open and read a segment.  0: read (trusted), into *seg; 1: ignored
 * (untrusted, unreadable, too big); 2: gone (ENOENT); -1: ENOMEM/EIO.
 */
static int read_segment (struct scan *sc, const char *name, struct seg *seg)
{
    struct day *d = &sc->day;
    struct stat st;
    char *buf;
    size_t len = 0;
    int fd;

    fd =
        openat (d->idxfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 2 : 1;
    /* Only root or we could have written it, and nobody else can have
     * changed it since: anything else may be a planted file.
     */
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
        || (st.st_uid != 0 && st.st_uid != geteuid ())
        || (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size > SEGMENT_MAX) {
        close (fd);
        return 1;
    }
    if (!(buf = malloc ((size_t)st.st_size + 1))) {
        close (fd);
        errno = ENOMEM;
        return -1;
    }
    for (;;) {
        ssize_t n;
        if (len == (size_t)st.st_size) {
            char probe;
            /* Immutable once renamed: more data means it is not a
             * segment we wrote.
             */
            n = read (fd, &probe, 1);
            if (n != 0) {
                free (buf);
                close (fd);
                return n < 0 && errno != EINTR ? -1 : 1;
            }
            break;
        }
        n = read (fd, buf + len, (size_t)st.st_size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int saved = n < 0 ? errno : 0;
            free (buf);
            close (fd);
            if (n == 0)
                return 1; /* shrank: not ours */
            errno = saved;
            return -1;
        }
        len += (size_t)n;
    }
    close (fd);
    buf[len] = '\0';
    seg->buf = buf;
    seg->len = len;
    return 0;
}

/* A row line: its job id and path columns. */
static bool row_columns (const struct scan *sc,
                         const char *s,
                         size_t len,
                         const char **job,
                         size_t *jlen,
                         const char **path,
                         size_t *plen)
{
    const char *end = s + len;
    const char *p = s;
    size_t need = sc->col_job;

    /* The path is the last column: found from the end, so that a row is
     * not walked tab by tab just to key it (the parse walks it once).
     */
    if (sc->col_path == sc->ncols - 1) {
        const char *tab = memrchr (s, '\t', len);
        if (!tab)
            return false;
        *path = tab + 1;
        *plen = (size_t)(end - tab - 1);
    }
    else if (sc->col_path > need)
        need = sc->col_path;
    for (size_t col = 0; col <= need; col++) {
        const char *tab = memchr (p, '\t', (size_t)(end - p));
        const char *fe = tab ? tab : end;

        if (col == sc->col_job) {
            *job = p;
            *jlen = (size_t)(fe - p);
        }
        if (col == sc->col_path) {
            *path = p;
            *plen = (size_t)(fe - p);
        }
        if (!tab && col < need)
            return false;
        p = tab ? tab + 1 : end;
    }
    return *plen > 0;
}

static int parse_row_line (struct scan *sc, const char *s, size_t len)
{
    tr_error_t e;

    if (len + 1 > sc->linecap) {
        size_t ncap = len + 1 > 4096 ? len + 1 : 4096;
        char *nl = realloc (sc->line, ncap);
        if (!nl) {
            errno = ENOMEM;
            return -1;
        }
        sc->line = nl;
        sc->linecap = ncap;
    }
    memcpy (sc->line, s, len);
    sc->line[len] = '\0';
    return tr_stepsum_from_tsv (&sc->row, sc->line, sc->pool, &e);
}

static void fileid_of (const struct stat *st, struct fileid *f)
{
    f->dev = (unsigned long long)st->st_dev;
    f->ino = (unsigned long long)st->st_ino;
    f->size = (unsigned long long)st->st_size;
    f->mtime_ns = ts_ns (&st->st_mtim);
    f->ctime_ns = ts_ns (&st->st_ctim);
}

/* "#file<TAB><path><TAB><dev><TAB><ino><TAB><size><TAB><mtime ns><TAB>
 * <ctime ns>": the identity of the record file the next row was made
 * from.
 */
static bool parse_file_line (const char *s,
                             size_t n,
                             const char **path,
                             size_t *plen,
                             struct fileid *f)
{
    const char *fs[6];
    const char *fe[6];
    unsigned long long v[5];

    if (split_fields (s, n, fs, fe, 6) != 6 || fe[0] == fs[0])
        return false;
    for (int i = 0; i < 5; i++)
        if (!parse_ull (fs[i + 1], fe[i + 1], &v[i]))
            return false;
    if (v[3] > LLONG_MAX || v[4] > LLONG_MAX)
        return false;
    *path = fs[0];
    *plen = (size_t)(fe[0] - fs[0]);
    f->dev = v[0];
    f->ino = v[1];
    f->size = v[2];
    f->mtime_ns = (long long)v[3];
    f->ctime_ns = (long long)v[4];
    return true;
}

/* Is the record at rel still the very file its row was made from (f;
 * NULL: a row of a segment without file identities)?  One stat, no
 * read: a file replaced (another inode) or rewritten in place (another
 * change time, which no user can set) is loaded and verified again.
 */
static bool file_unchanged (const struct scan *sc,
                            const char *rel,
                            size_t len,
                            const struct fileid *f)
{
    char buf[PATH_MAX];
    struct fileid now;
    struct stat st;

    if (!f || len >= sizeof (buf))
        return false;
    memcpy (buf, rel, len);
    buf[len] = '\0';
    if (fstatat (sc->rootfd, buf, &st, AT_SYMLINK_NOFOLLOW) < 0
        || !S_ISREG (st.st_mode))
        return false;
    fileid_of (&st, &now);
    return now.dev == f->dev && now.ino == f->ino && now.size == f->size
           && now.mtime_ns == f->mtime_ns && now.ctime_ns == f->ctime_ns;
}

static int add_stale (struct day *d, const char *path, size_t len)
{
    const char *key;

    if (grow ((void **)&d->stale, &d->capstale, d->nstale, sizeof (*d->stale))
            < 0
        || !(key = arena_dup (&d->arena, path, len)))
        return -1;
    d->stale[d->nstale++] = key;
    return 0;
}

/* Tell the caller of a bad record of its shard (opts->bad). */
static void report_bad (struct scan *sc,
                        const char *path,
                        size_t plen,
                        const char *reason,
                        size_t rlen,
                        bool loaded)
{
    char p[PATH_MAX];
    char r[256];

    if (!sc->o.bad)
        return;
    snprintf (p, sizeof (p), "%.*s", (int)plen, path);
    snprintf (r, sizeof (r), "%.*s", (int)rlen, reason);
    sc->o.bad (p, r, loaded, sc->o.bad_arg);
}

/* Use a sound segment: pass its rows not seen yet, note its bad
 * records, markers and claims.  Returns 0, 1 if a row did not parse
 * (the segment is then broken; what it gave stays given), -1 ENOMEM.
 */
static int use_segment (struct scan *sc, struct seg *seg)
{
    struct day *d = &sc->day;
    const char *end = seg->buf + seg->len;
    const char *p = seg->buf + sc->hdrlen + 1;
    const char *fline = NULL; /* the "#file" line before this row */
    size_t flen = 0;
    const char *fpath = NULL;
    size_t fplen = 0;
    struct fileid fid = { 0, 0, 0, 0, 0 };

    while (p < end && !sc->stopped) {
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        size_t n = (size_t)(nl - p);
        const char *f[4];
        const char *fe[4];
        const char *job = NULL;
        const char *path = NULL;
        size_t jlen = 0;
        size_t plen = 0;
        int rc;

        if (p[0] != '#') {
            if (!row_columns (sc, p, n, &job, &jlen, &path, &plen))
                return 1;
            bool mine = in_shard (sc, job, jlen);
            bool have_id = fline && fplen == plen
                           && memcmp (fpath, path, plen) == 0;
            const char *idline = fline;
            size_t idlen = flen;

            fline = NULL;
            /* Rows of other shards matter only to a compaction, which
             * must not copy a line that does not parse: so a writer
             * parses every row it keeps, a reader only its own.
             */
            if ((!mine && !sc->o.write) || keyset_has (&d->keys, path, plen)) {
                p = nl + 1;
                continue;
            }
            if (parse_row_line (sc, p, n) < 0)
                return errno == ENOMEM ? -1 : 1;
            if (mine
                && !file_unchanged (sc, path, plen, have_id ? &fid : NULL)) {
                /* The record file is not the one indexed: its row (and
                 * older segments' rows of it) are not used; it is loaded
                 * and verified again.
                 */
                if (keyset_add (&d->keys, path, plen) < 0
                    || add_stale (d, path, plen) < 0)
                    return -1;
                sc->st->rows_stale++;
                p = nl + 1;
                continue;
            }
            if (keyset_add (&d->keys, path, plen) < 0
                || (have_id && keep_line (sc, idline, idlen) < 0)
                || keep_line (sc, p, n) < 0)
                return -1;
            if (mine) {
                sc->st->rows_indexed++;
                emit (sc, &sc->row);
            }
        }
        else if (starts (p, n, "#bad")) {
            bool have_id;
            const char *idline = fline;
            size_t idlen = flen;

            fline = NULL;
            if (split_fields (p, n, f, fe, 2) != 2)
                return 1;
            plen = (size_t)(fe[0] - f[0]);
            have_id = idline && fplen == plen && memcmp (fpath, f[0], plen) == 0;
            /* A bad record whose file changed since (repaired, or
             * replaced again) is loaded again; one indexed without its
             * file's identity stays bad.
             */
            if (have_id && !keyset_has (&d->keys, f[0], plen)
                && path_job (f[0], plen, &job, &jlen)
                && in_shard (sc, job, jlen)
                && !file_unchanged (sc, f[0], plen, &fid)) {
                if (keyset_add (&d->keys, f[0], plen) < 0
                    || add_stale (d, f[0], plen) < 0)
                    return -1;
                sc->st->rows_stale++;
                p = nl + 1;
                continue;
            }
            if ((rc = keyset_add (&d->keys, f[0], plen)) < 0
                || (rc == 1 && have_id && keep_line (sc, idline, idlen) < 0)
                || (rc == 1 && keep_line (sc, p, n) < 0))
                return -1;
            if (rc == 1 && path_job (f[0], plen, &job, &jlen)
                && in_shard (sc, job, jlen)) {
                sc->st->bad++;
                report_bad (sc, f[0], plen, f[1], (size_t)(fe[1] - f[1]),
                            false);
            }
        }
        else if (starts (p, n, "#file")) {
            if (!parse_file_line (p, n, &fpath, &fplen, &fid))
                return 1;
            fline = p;
            flen = n;
        }
        else if (starts (p, n, "#marker")) {
            if (split_fields (p, n, f, fe, 1) != 1)
                return 1;
            if ((rc = keyset_add (&d->keys, f[0], (size_t)(fe[0] - f[0]))) < 0
                || (rc == 1 && keep_line (sc, p, n) < 0))
                return -1;
        }
        else if (starts (p, n, "#mtime")) {
            unsigned long long v[3];
            if (split_fields (p, n, f, fe, 3) != 3)
                return 1;
            for (int i = 0; i < 3; i++)
                if (!parse_ull (f[i], fe[i], &v[i]))
                    return 1;
            if (v[0] > LLONG_MAX || v[2] > UINT_MAX
                || (v[2] > 0 ? v[1] >= v[2] : v[1] != 0))
                return 1;
            if (grow ((void **)&d->claims, &d->capclaims, d->nclaims,
                      sizeof (*d->claims))
                < 0)
                return -1;
            d->claims[d->nclaims].ns = (long long)v[0];
            d->claims[d->nclaims].i = (unsigned)v[1];
            d->claims[d->nclaims].n = (unsigned)v[2];
            d->nclaims++;
        }
        p = nl + 1;
    }
    return 0;
}

static bool seg_known (const struct day *d, const char *name)
{
    for (size_t i = 0; i < d->nsegs; i++)
        if (strcmp (d->segs[i].name, name) == 0)
            return true;
    return false;
}

/* Read every segment of the day, newest first, listing the directory
 * again when one vanished under a compaction.  Returns 0 or -1.
 */
static int read_index (struct scan *sc)
{
    struct day *d = &sc->day;

    if (sc->indexfd < 0)
        return 0;
    d->idxfd = openat (sc->indexfd, d->name,
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d->idxfd < 0) {
        if (errno != ENOENT)
            d->unreadable = true;
        return 0;
    }
    for (int listing = 0; listing <= MAX_RELIST; listing++) {
        char **names;
        size_t n;
        bool gone = false;

        if (list_names (d->idxfd, LIST_SEGMENTS, &names, &n) < 0) {
            d->unreadable = true;
            return 0;
        }
        for (size_t j = n; j-- > 0 && !gone && !sc->stopped;) {
            struct seg seg = { NULL, NULL, 0, SEG_USED };
            int rc;

            if (seg_known (d, names[j]))
                continue;
            rc = read_segment (sc, names[j], &seg);
            if (rc == 2) {
                gone = true;
                break;
            }
            if (rc < 0
                || grow ((void **)&d->segs, &d->capsegs, d->nsegs,
                         sizeof (*d->segs))
                       < 0) {
                tr_errprintf (sc->error, "%s/%s/index/%s/%s: %s", sc->root,
                              sc->cluster, d->name, names[j], strerror (errno));
                free (seg.buf);
                tr_store_free_names (names, n);
                return -1;
            }
            seg.name = names[j];
            names[j] = NULL;
            if (rc == 1)
                seg.state = SEG_UNTRUSTED;
            else if (!segment_sound (sc, seg.buf, seg.len))
                seg.state = SEG_BROKEN;
            d->segs[d->nsegs++] = seg;
            if (seg.state == SEG_USED) {
                if ((rc = use_segment (sc, &d->segs[d->nsegs - 1])) < 0) {
                    tr_store_free_names (names, n);
                    return tr_errprintf (sc->error, "index %s: %s", d->name,
                                         strerror (errno));
                }
                if (rc == 1)
                    d->segs[d->nsegs - 1].state = SEG_BROKEN;
            }
            if (d->segs[d->nsegs - 1].state == SEG_USED)
                sc->st->segments_read++;
            else
                sc->st->segments_ignored++;
        }
        tr_store_free_names (names, n);
        if (!gone)
            break;
        if (listing == MAX_RELIST) {
            d->unreadable = true; /* give up on it: load the records */
            break;
        }
        sc->st->retries++;
    }
    return 0;
}

/* Do the claims of the day's segments prove that every marker of this
 * scan's shard present at mtime ns was covered?
 */
static bool claims_prove (const struct scan *sc, long long ns)
{
    const struct day *d = &sc->day;

    for (size_t i = 0; i < d->nclaims; i++) {
        const struct claim *c = &d->claims[i];
        if (c->ns != ns)
            continue;
        if (c->n == 0 || (sc->o.shard_n == c->n && sc->o.shard_i == c->i))
            return true;
        /* Every shard of some n, together. */
        unsigned have = 0;
        for (unsigned k = 0; k < c->n && have == k; k++) {
            for (size_t j = 0; j < d->nclaims; j++) {
                if (d->claims[j].ns == ns && d->claims[j].n == c->n
                    && d->claims[j].i == k) {
                    have++;
                    break;
                }
            }
        }
        if (have == c->n)
            return true;
    }
    return false;
}

/* Is the day unchanged since the index covered it: proven by the claims,
 * and every segment used (an ignored one may hold rows the others lack).
 */
static bool day_fresh (const struct scan *sc)
{
    const struct day *d = &sc->day;

    if (d->unreadable || d->nstale > 0)
        return false;
    for (size_t i = 0; i < d->nsegs; i++)
        if (d->segs[i].state != SEG_USED)
            return false;
    return claims_prove (sc, d->mtime_ns);
}

/* Loading records */

/* The day (UTC) a row belongs to, as the store files it. */
static bool row_in_day (const tr_stepsum_t *row, const char *day)
{
    double ms = isnan (row->end_ms) ? row->start_ms : row->end_ms;
    char buf[16];

    if (isnan (ms) || ms < 0)
        return false;
    return tr_store_format_day ((time_t)(ms / 1000), buf, sizeof (buf)) == 0
           && strcmp (buf, day) == 0;
}

static int append_bad (struct day *d, const char *rel, const char *reason)
{
    char clean[201];
    size_t n = 0;

    if (!reason || !*reason)
        reason = "bad record";
    /* One field of one line: no tabs, newlines or other controls. */
    for (; reason[n] && n < sizeof (clean) - 1; n++)
        clean[n] = (unsigned char)reason[n] < 0x20 ? ' ' : reason[n];
    clean[n] = '\0';
    return tr_strbuf_printf (&d->delta, "#bad\t%s\t%s\n", rel, clean);
}

/* Does the row's identity (cluster, job, step, node) name the place it
 * was found at?  A validly signed record copied or moved over another
 * (by whoever may write there) is not the record of that place.
 */
static bool row_in_place (const tr_stepsum_t *row, const char *rel)
{
    char buf[PATH_MAX];

    return row->cluster && row->job_id && row->step_id && row->node
           && tr_store_record_path (buf, sizeof (buf), row->cluster,
                                    row->job_id, row->step_id, row->node)
                  == 0
           && strcmp (buf, rel) == 0;
}

static int append_file (struct day *d, const char *rel, const struct stat *st)
{
    struct fileid f;

    fileid_of (st, &f);
    return tr_strbuf_printf (&d->delta, "#file\t%s\t%llu\t%llu\t%llu\t%lld\t%lld\n",
                             rel, f.dev, f.ino, f.size, f.mtime_ns,
                             f.ctime_ns);
}

/* Load one record (not covered).  With check_day, a record of another
 * day (listed through a per-job marker) is left to its own day.
 * Returns 0 or -1 (error set).
 */
static int load_one (struct scan *sc, const char *rel, bool check_day)
{
    struct day *d = &sc->day;
    char abs[PATH_MAX];
    char why[PATH_MAX + 128];
    const char *key;
    struct stat before;
    struct stat after;
    bool have_id;
    int n;
    int rc;

    n = snprintf (abs, sizeof (abs), "%s%s%s", sc->root,
                  strcmp (sc->root, "/") == 0 ? "" : "/", rel);
    if (n < 0 || (size_t)n >= sizeof (abs)) {
        errno = ENAMETOOLONG;
        return tr_errprintf (sc->error, "%s/%s: %s", sc->root, rel,
                             strerror (errno));
    }
    /* The file's identity is taken before it is read, and again after:
     * a file that changed meanwhile gets none, so it is read again next
     * time.
     */
    have_id = fstatat (sc->rootfd, rel, &before, AT_SYMLINK_NOFOLLOW) == 0
              && S_ISREG (before.st_mode);
    tr_stepsum_init (&sc->row);
    errno = 0;
    rc = sc->load (abs, rel, &sc->row, sc->load_arg);
    if (rc < 0) {
        if (errno == EACCES || errno == EPERM) {
            sc->st->skipped++;
            d->skipped = true;
            return 0;
        }
        if (errno == ENOENT)
            return 0;
        if (errno == 0)
            errno = EIO;
        return tr_errprintf (sc->error, "%s: %s", abs, strerror (errno));
    }
    if (rc == 0) {
        if (!(sc->row.path = tr_strpool_intern (sc->pool, rel)))
            goto nomem;
        if (check_day && !row_in_day (&sc->row, d->name))
            return 0;
        if (!row_in_place (&sc->row, rel)) {
            snprintf (why, sizeof (why), "the record is job %s's (step %s, "
                      "node %s, cluster %s), not in its place in the store "
                      "(copied or moved here)",
                      sc->row.job_id ? sc->row.job_id : "?",
                      sc->row.step_id ? sc->row.step_id : "?",
                      sc->row.node ? sc->row.node : "?",
                      sc->row.cluster ? sc->row.cluster : "?");
            if (!(sc->row.reason = tr_strpool_intern (sc->pool, why)))
                goto nomem;
            rc = 1;
        }
    }
    have_id = have_id
              && fstatat (sc->rootfd, rel, &after, AT_SYMLINK_NOFOLLOW) == 0
              && after.st_dev == before.st_dev
              && after.st_ino == before.st_ino
              && after.st_size == before.st_size
              && ts_ns (&after.st_mtim) == ts_ns (&before.st_mtim)
              && ts_ns (&after.st_ctim) == ts_ns (&before.st_ctim);
    if (!(key = arena_dup (&d->arena, rel, strlen (rel)))
        || keyset_add (&d->keys, key, strlen (key)) < 0)
        goto nomem;
    if (rc != 0) {
        sc->st->bad++;
        if (sc->o.write
            && ((have_id && append_file (d, rel, &before) < 0)
                || append_bad (d, rel, sc->row.reason) < 0))
            goto nomem;
        d->dbad++;
        report_bad (sc, rel, strlen (rel),
                    sc->row.reason ? sc->row.reason : "bad record",
                    sc->row.reason ? strlen (sc->row.reason) : 10, true);
        return 0;
    }
    if (sc->o.write
        && ((have_id && append_file (d, rel, &before) < 0)
            || tr_stepsum_to_tsv (&d->delta, &sc->row) < 0
            || tr_strbuf_append (&d->delta, "\n", 1) < 0))
        goto nomem;
    d->drows++;
    sc->st->records_loaded++;
    emit (sc, &sc->row);
    return 0;
nomem:
    errno = ENOMEM;
    return tr_errprintf (sc->error, "%s: out of memory", rel);
}

/* Record paths of one job, collected by tr_store_foreach_job. */
struct job_paths {
    char **rel;
    size_t n;
    size_t cap;
    size_t skip; /* strlen of root plus the '/' */
};

static int collect_path (const char *path, void *arg)
{
    struct job_paths *jp = arg;

    if (grow ((void **)&jp->rel, &jp->cap, jp->n, sizeof (*jp->rel)) < 0
        || !(jp->rel[jp->n] = strdup (path + jp->skip))) {
        errno = ENOMEM;
        return -1;
    }
    jp->n++;
    return 0;
}

/* A per-job (older store) or hashed marker: list the job's records and
 * load those of this day not covered yet.
 */
static int load_job (struct scan *sc, const char *marker, size_t jlen)
{
    struct day *d = &sc->day;
    struct job_paths jp = { NULL, 0, 0, 0 };
    char job[256];
    tr_error_t e;
    size_t skipped = sc->st->skipped;
    int rc = 0;
    int n;

    if (keyset_has (&d->keys, marker, strlen (marker)))
        return 0;
    snprintf (job, sizeof (job), "%.*s", (int)jlen, marker);
    jp.skip = strlen (sc->root) + (strcmp (sc->root, "/") == 0 ? 0 : 1);
    n = tr_store_foreach_job (sc->store, sc->cluster, job, collect_path, &jp,
                              &e);
    if (n < 0 && errno != ENOENT) {
        if (errno == EACCES || errno == EPERM) {
            sc->st->skipped++;
            d->skipped = true;
        }
        else if (errno == ENOMEM)
            rc = tr_errprintf (sc->error, "job %s: out of memory", job);
        /* else: a planted symlink or the like, nothing to index */
        goto out;
    }
    for (size_t i = 0; i < jp.n && !sc->stopped && rc == 0; i++)
        if (!keyset_has (&d->keys, jp.rel[i], strlen (jp.rel[i])))
            rc = load_one (sc, jp.rel[i], true);
    if (rc == 0 && !sc->stopped && sc->st->skipped == skipped) {
        const char *key = arena_dup (&d->arena, marker, strlen (marker));
        if (!key || keyset_add (&d->keys, key, strlen (key)) < 0
            || (sc->o.write
                && tr_strbuf_printf (&d->delta, "#marker\t%s\n", marker) < 0))
            rc = tr_errprintf (sc->error, "out of memory");
        d->dmarkers++;
    }
out:
    for (size_t i = 0; i < jp.n; i++)
        free (jp.rel[i]);
    free (jp.rel);
    return rc;
}

/* List the day's markers and load every record not covered. */
static int load_day (struct scan *sc)
{
    struct day *d = &sc->day;
    char **names;
    size_t n;
    int fd;
    int rc = 0;

    fd = openat (sc->daysfd, d->name,
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || list_names (fd, LIST_MARKERS, &names, &n) < 0) {
        close_keep_errno (fd);
        return tr_errprintf (sc->error, "list %s/%s/days/%s: %s", sc->root,
                             sc->cluster, d->name, strerror (errno));
    }
    close (fd);
    for (size_t i = 0; i < n && rc == 0 && !sc->stopped; i++) {
        char *m = names[i];
        char *at1 = strchr (m, '@');
        char *at2 = at1 ? strchr (at1 + 1, '@') : NULL;
        size_t jlen = at1 ? (size_t)(at1 - m) : strlen (m);
        char rel[PATH_MAX];

        if (!in_shard (sc, m, jlen))
            continue;
        if (!at2) {
            rc = load_job (sc, m, jlen);
            continue;
        }
        *at1 = *at2 = '\0';
        if (strchr (at2 + 1, '@')
            || tr_store_record_path (rel, sizeof (rel), sc->cluster, m, at1 + 1,
                                     at2 + 1)
                   < 0)
            continue; /* not a marker this version writes */
        if (!keyset_has (&d->keys, rel, strlen (rel)))
            rc = load_one (sc, rel, false);
    }
    tr_store_free_names (names, n);
    return rc;
}

/* Load again the records whose files changed since they were indexed. */
static int load_stale (struct scan *sc)
{
    struct day *d = &sc->day;
    int rc = 0;

    for (size_t i = 0; i < d->nstale && rc == 0 && !sc->stopped; i++)
        rc = load_one (sc, d->stale[i], false);
    return rc;
}

/* Writing segments */

/* A new temporary in the day's index directory, created before the
 * day's mtime is taken for a claim: its mtime is the server's clock.
 */
struct newseg {
    int fd;
    char tmp[NAME_MAX + 1];
    char name[NAME_MAX + 1];
    long long created_ns;
};

static int newseg_open (struct scan *sc, struct newseg *ns)
{
    struct day *d = &sc->day;
    struct timespec now;
    struct stat st;
    char rel[PATH_MAX];
    int n;

    ns->fd = -1;
    if (d->idxfd < 0) {
        n = snprintf (rel, sizeof (rel), "%s/index/%s", sc->cluster, d->name);
        if (n < 0 || (size_t)n >= sizeof (rel))
            return -1;
        d->idxfd = tr_path_mkdirat_p (sc->rootfd, rel, sc->o.dir_mode, NULL);
        if (d->idxfd < 0)
            return -1;
    }
    clock_gettime (CLOCK_REALTIME, &now);
    n = snprintf (ns->name, sizeof (ns->name),
                  SEG_PREFIX "%019lld-%s-%ld-%u" SEG_SUFFIX, ts_ns (&now),
                  sc->host, (long)getpid (),
                  __atomic_fetch_add (&seg_counter, 1, __ATOMIC_RELAXED));
    if (n < 0 || (size_t)n >= sizeof (ns->name))
        return -1;
    n = snprintf (ns->tmp, sizeof (ns->tmp), ".%s" TMP_SUFFIX, ns->name);
    if (n < 0 || (size_t)n >= sizeof (ns->tmp))
        return -1;
    ns->fd =
        openat (d->idxfd, ns->tmp,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (ns->fd < 0)
        return -1;
    if (fstat (ns->fd, &st) < 0) {
        close_keep_errno (ns->fd);
        unlinkat (d->idxfd, ns->tmp, 0);
        ns->fd = -1;
        return -1;
    }
    ns->created_ns = ts_ns (&st.st_mtim);
    return 0;
}

static void newseg_discard (struct scan *sc, struct newseg *ns)
{
    if (ns->fd >= 0) {
        close_keep_errno (ns->fd);
        unlinkat (sc->day.idxfd, ns->tmp, 0);
        ns->fd = -1;
    }
}

static int write_all (int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write (fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Fill and publish the new segment: the header, the kept lines of the
 * segments read (a compaction), the delta, the claims, the counts.
 */
static int newseg_commit (struct scan *sc,
                          struct newseg *ns,
                          bool merged,
                          const struct claim *claims,
                          size_t nclaims)
{
    struct day *d = &sc->day;
    tr_strbuf_t sb = { 0 };
    size_t rows = d->drows;
    size_t bad = d->dbad;
    size_t markers = d->dmarkers;
    int rc = -1;

    if (tr_strbuf_append (&sb, sc->hdr, sc->hdrlen) < 0
        || tr_strbuf_append (&sb, "\n", 1) < 0)
        goto out;
    if (merged) {
        for (size_t i = 0; i < d->nlines; i++) {
            const struct span *l = &d->lines[i];
            if (tr_strbuf_append (&sb, l->s, l->len) < 0
                || tr_strbuf_append (&sb, "\n", 1) < 0)
                goto out;
            if (l->s[0] != '#')
                rows++;
            else if (starts (l->s, l->len, "#bad"))
                bad++;
            else if (starts (l->s, l->len, "#marker"))
                markers++;
        }
    }
    if (d->delta.len > 0
        && tr_strbuf_append (&sb, tr_strbuf_str (&d->delta), d->delta.len) < 0)
        goto out;
    for (size_t i = 0; i < nclaims; i++)
        if (tr_strbuf_printf (&sb, "#mtime\t%lld\t%u\t%u\n", claims[i].ns,
                              claims[i].i, claims[i].n)
            < 0)
            goto out;
    if (tr_strbuf_printf (&sb, "#end\t%zu\t%zu\t%zu\t%zu\n", rows, bad, markers,
                          nclaims)
        < 0)
        goto out;
    if (write_all (ns->fd, tr_strbuf_str (&sb), sb.len) < 0
        || (sc->o.gid != (gid_t)-1 && fchown (ns->fd, (uid_t)-1, sc->o.gid) < 0)
        || fchmod (ns->fd, sc->o.file_mode) < 0 || fsync (ns->fd) < 0)
        goto out;
    if (close (ns->fd) < 0) {
        ns->fd = -1;
        unlinkat (d->idxfd, ns->tmp, 0);
        goto out;
    }
    ns->fd = -1;
    if (renameat (d->idxfd, ns->tmp, d->idxfd, ns->name) < 0) {
        unlinkat (d->idxfd, ns->tmp, 0);
        goto out;
    }
    sc->st->segments_written++;
    rc = 0;
out:
    if (rc < 0) {
        newseg_discard (sc, ns);
        sc->st->write_errors++;
    }
    tr_strbuf_free (&sb);
    return rc;
}

/* The claims a merged segment keeps: those of the newest mtime (older
 * ones can never match the directory again), each once.
 */
static size_t merged_claims (struct day *d, const struct claim *own)
{
    long long max = own ? own->ns : -1;
    size_t n = 0;

    for (size_t i = 0; i < d->nclaims; i++)
        if (d->claims[i].ns > max)
            max = d->claims[i].ns;
    if (own && own->ns == max) {
        d->claims[d->nclaims] = *own; /* room made by the caller */
        d->nclaims++;
    }
    for (size_t i = 0; i < d->nclaims; i++) {
        bool dup = false;
        if (d->claims[i].ns != max)
            continue;
        for (size_t j = 0; j < n && !dup; j++)
            dup = d->claims[j].i == d->claims[i].i
                  && d->claims[j].n == d->claims[i].n;
        if (!dup)
            d->claims[n++] = d->claims[i];
    }
    return n;
}

/* Merge the day's segments and the delta into one, then remove what was
 * merged (and the broken segments, and temporaries left by dead
 * writers).  Concurrent readers that miss a removed one list again.
 */
static void compact (struct scan *sc,
                     struct newseg *ns,
                     const struct claim *own)
{
    struct day *d = &sc->day;
    size_t nclaims;

    if (grow ((void **)&d->claims, &d->capclaims, d->nclaims + 1,
              sizeof (*d->claims))
        < 0) {
        newseg_discard (sc, ns);
        sc->st->write_errors++;
        return;
    }
    /* A claim may count on rows of a broken segment beyond the point
     * where it broke, which the merge loses: keep only our own, made
     * against what was actually read and loaded now.
     */
    for (size_t i = 0; i < d->nsegs; i++)
        if (d->segs[i].state == SEG_BROKEN)
            d->nclaims = 0;
    nclaims = merged_claims (d, own);
    if (newseg_commit (sc, ns, true, d->claims, nclaims) < 0)
        return;
    sc->st->compactions++;
    for (size_t i = 0; i < d->nsegs; i++)
        if (d->segs[i].state != SEG_UNTRUSTED)
            unlinkat (d->idxfd, d->segs[i].name, 0);
    if (list_names (d->idxfd, LIST_TMPS, &d->tmps, &d->ntmps) < 0)
        return; /* they wait for the next compaction */
    for (size_t i = 0; i < d->ntmps; i++) {
        struct stat st;
        if (fstatat (d->idxfd, d->tmps[i], &st, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISREG (st.st_mode)
            && ts_ns (&st.st_mtim)
                   < ns->created_ns - STALE_TMP_S * 1000000000LL)
            unlinkat (d->idxfd, d->tmps[i], 0);
    }
}

static size_t segs_used (const struct day *d)
{
    size_t n = 0;

    for (size_t i = 0; i < d->nsegs; i++)
        n += d->segs[i].state != SEG_UNTRUSTED;
    return n;
}

/* One day of the window. */
static int scan_day (struct scan *sc, const char *name)
{
    struct day *d = &sc->day;
    struct newseg ns = { -1, "", "", 0 };
    struct claim own = { 0, 0, 0 };
    bool have_claim = false;
    struct stat st;

    day_reset (d);
    snprintf (d->name, sizeof (d->name), "%s", name);
    if (fstatat (sc->daysfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0
        || !S_ISDIR (st.st_mode))
        return 0; /* gone since listed, or not a directory any more */
    d->mtime_ns = ts_ns (&st.st_mtim);
    sc->st->days++;
    if (read_index (sc) < 0)
        return -1;
    if (sc->stopped)
        return 0;
    if (day_fresh (sc)) {
        sc->st->days_fresh++;
        if (sc->o.write && segs_used (d) > sc->o.max_segments) {
            if (newseg_open (sc, &ns) == 0)
                compact (sc, &ns, NULL);
            else
                sc->st->write_errors++;
        }
        return 0;
    }
    if (sc->o.write) {
        if (newseg_open (sc, &ns) < 0)
            sc->st->write_errors++;
        else if (fstatat (sc->daysfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            newseg_discard (sc, &ns);
        else {
            own.ns = ts_ns (&st.st_mtim);
            own.i = sc->o.shard_i;
            own.n = sc->o.shard_n;
            have_claim = ns.created_ns - own.ns >= RACY_NS;
        }
    }
    if (load_day (sc) < 0 || load_stale (sc) < 0) {
        newseg_discard (sc, &ns);
        return -1;
    }
    if (ns.fd < 0)
        return 0;
    if (sc->stopped) {
        newseg_discard (sc, &ns);
        return 0;
    }
    if (d->skipped)
        have_claim = false;
    if (segs_used (d) + 1 > sc->o.max_segments) {
        compact (sc, &ns, have_claim ? &own : NULL);
        return 0;
    }
    /* A claim the segments make already (the day was listed only because
     * a segment was ignored) is not worth a segment of its own.
     */
    if (have_claim && claims_prove (sc, own.ns))
        have_claim = false;
    if (d->drows + d->dbad + d->dmarkers > 0 || have_claim)
        newseg_commit (sc, &ns, false, &own, have_claim ? 1 : 0);
    else
        newseg_discard (sc, &ns);
    return 0;
}

/* Set up the scan: columns, header, host name for segment names. */
static int scan_init (struct scan *sc)
{
    tr_strbuf_t sb = { 0 };
    size_t col = 0;
    bool job = false;
    bool path = false;

    for (const tr_field_t *f = tr_stepsum_fields; f->name; f++) {
        if (f->offset == (size_t)-1)
            continue;
        if (f->offset == offsetof (tr_stepsum_t, job_id)) {
            sc->col_job = col;
            job = true;
        }
        if (f->offset == offsetof (tr_stepsum_t, path)) {
            sc->col_path = col;
            path = true;
        }
        col++;
    }
    sc->ncols = col;
    if (!job || !path) {
        errno = EINVAL;
        return tr_errprintf (sc->error, "index: row format lacks job id or "
                                        "path");
    }
    if (tr_stepsum_tsv_header (&sb) < 0) {
        tr_strbuf_free (&sb);
        errno = ENOMEM;
        return tr_errprintf (sc->error, "out of memory");
    }
    sc->hdrlen = sb.len;
    sc->hdr = tr_strbuf_steal (&sb);
    if (!sc->hdr) {
        errno = ENOMEM;
        return tr_errprintf (sc->error, "out of memory");
    }
    /* Segment names carry the host, so path-safe characters only. */
    if (gethostname (sc->host, sizeof (sc->host) - 1) < 0)
        sc->host[0] = '\0';
    sc->host[sizeof (sc->host) - 1] = '\0';
    for (char *p = sc->host; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
              || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_'))
            *p = '_';
    if (sc->host[0] == '\0')
        snprintf (sc->host, sizeof (sc->host), "host");
    return 0;
}

int tr_index_scan (tr_store_t *store,
                   const char *cluster,
                   time_t from,
                   time_t to,
                   const struct tr_index_opts *opts,
                   tr_index_load_f load,
                   void *load_arg,
                   tr_index_row_f fn,
                   void *arg,
                   tr_strpool_t *pool,
                   struct tr_index_stats *stats,
                   tr_error_t *error)
{
    struct tr_index_stats dummy;
    struct scan sc;
    char from_day[16];
    char to_day[16];
    char rel[PATH_MAX];
    char **days = NULL;
    size_t ndays = 0;
    int rc = 0;

    memset (&sc, 0, sizeof (sc));
    sc.daysfd = sc.indexfd = sc.day.idxfd = -1;
    if (!store || !load || !fn || !pool || from > to
        || (opts && opts->shard_n > 0 && opts->shard_i >= opts->shard_n)
        || (opts && opts->shard_n == 0 && opts->shard_i != 0)) {
        errno = EINVAL;
        return tr_errprintf (error, "index scan: invalid argument");
    }
    if (!cluster || !tr_record_id_is_safe (cluster)) {
        errno = EINVAL;
        return tr_errprintf (error, "cluster name not safe as a path "
                                    "component");
    }
    if (tr_store_format_day (from, from_day, sizeof (from_day)) < 0
        || tr_store_format_day (to, to_day, sizeof (to_day)) < 0)
        return tr_errprintf (error, "time window: %s", strerror (errno));
    sc.store = store;
    sc.rootfd = tr_store_rootfd (store);
    sc.root = tr_store_root (store);
    sc.cluster = cluster;
    if (opts)
        sc.o = *opts;
    if (sc.o.file_mode == 0)
        sc.o.file_mode = DEFAULT_FILE_MODE;
    if (sc.o.dir_mode == 0)
        sc.o.dir_mode = DEFAULT_DIR_MODE;
    if (sc.o.max_segments == 0)
        sc.o.max_segments = DEFAULT_MAX_SEGMENTS;
    if (!opts)
        sc.o.gid = (gid_t)-1;
    sc.load = load;
    sc.load_arg = load_arg;
    sc.fn = fn;
    sc.arg = arg;
    sc.pool = pool;
    sc.st = stats ? stats : &dummy;
    memset (sc.st, 0, sizeof (*sc.st));
    sc.error = error;
    if (scan_init (&sc) < 0)
        goto error;

    snprintf (rel, sizeof (rel), "%s/days", cluster);
    if ((sc.daysfd = tr_store_open_below (sc.rootfd, rel)) < 0) {
        if (errno == ENOENT)
            goto done; /* no records at all */
        tr_errprintf (error, "open %s/%s: %s", sc.root, rel, strerror (errno));
        goto error;
    }
    snprintf (rel, sizeof (rel), "%s/index", cluster);
    sc.indexfd = tr_store_open_below (sc.rootfd, rel); /* may not exist yet */
    if (list_names (sc.daysfd, LIST_DAYS, &days, &ndays) < 0) {
        tr_errprintf (error, "list %s/%s/days: %s", sc.root, cluster,
                      strerror (errno));
        goto error;
    }
    for (size_t i = 0; i < ndays && !sc.stopped; i++) {
        if (strcmp (days[i], from_day) < 0 || strcmp (days[i], to_day) > 0)
            continue;
        if (scan_day (&sc, days[i]) < 0)
            goto error;
        /* The cluster's first segment has just created index/. */
        if (sc.o.write && sc.indexfd < 0)
            sc.indexfd = tr_store_open_below (sc.rootfd, rel);
    }
done:
    rc = sc.stopped ? sc.stopval : sc.count;
    goto out;
error:
    rc = -1;
out : {
    int saved = errno;
    tr_store_free_names (days, ndays);
    day_free (&sc.day);
    if (sc.daysfd >= 0)
        close (sc.daysfd);
    if (sc.indexfd >= 0)
        close (sc.indexfd);
    free (sc.hdr);
    free (sc.line);
    errno = saved;
}
    return rc;
}
