/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The record store: one file per (job, step, node) under a hashed job
 * directory, plus one marker file per record under the record's day for
 * time-window scans (layout in store.h).  Root daemons on many nodes
 * write it concurrently over NFS or Lustre, and users' CLIs read it, so:
 * no locks, no appends, every file written by rename, and every lookup
 * below the root made with *at() and O_NOFOLLOW from the root fd taken at
 * open, so a symlink inside the store is never followed.  The root itself
 * may be reached through a symlink an administrator made.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/util/path.h"
#include "record.h"
#include "store.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/json.h"

struct tr_store {
    char *root; /* absolute, no trailing '/' (but "/") */
    int rootfd;
    struct tr_store_opts opts;
    bool writable; /* opened with opts */
    bool no_acl;   /* the store refused an ACL (EOPNOTSUPP) */
};

/* What a directory listing keeps. */
enum list_kind {
    LIST_DIRS,    /* subdirectories (opened later with O_NOFOLLOW) */
    LIST_RECORDS, /* regular files named *.json */
    LIST_MARKERS, /* regular files named like a day marker */
};

/* The path components of a record, borrowed from the record. */
struct ident {
    const char *cluster;
    const char *job_id;
    const char *step_id;
    const char *node;
};

/* State of one walk: the callback and what it has said so far. */
struct walk {
    tr_store_each_f fn;
    void *arg;
    int count;
    int stopval;
    bool stopped;
};

static void close_keep_errno (int fd)
{
    int saved = errno;
    if (fd >= 0)
        close (fd);
    errno = saved;
}

static void unlink_keep_errno (int dirfd, const char *name)
{
    int saved = errno;
    unlinkat (dirfd, name, 0);
    errno = saved;
}

static void free_keep_errno (void *p)
{
    int saved = errno;
    free (p);
    errno = saved;
}

/* FNV-1a, 32 bit: cheap, stable across platforms and releases, which is
 * all a bucket needs (the layout is on disk, so it must never change).
 */
static uint32_t fnv1a32 (const char *s)
{
    uint32_t h = 0x811c9dc5u;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x01000193u;
    }
    return h;
}

static unsigned int bucket_of (const char *job_id)
{
    return fnv1a32 (job_id) & 0xfffu;
}

uint32_t tr_store_job_hash (const char *job_id)
{
    return fnv1a32 (job_id ? job_id : "");
}

static int get_ident (json_t *rec, struct ident *id, tr_error_t *error)
{
    json_t *identity = json_object_get (rec, "identity");
    const struct {
        const char *key;
        const char **dst;
    } fields[] = {
        { "cluster", &id->cluster },
        { "job_id", &id->job_id },
        { "step_id", &id->step_id },
        { "node", &id->node },
    };

    if (!json_is_object (identity)) {
        errno = EINVAL;
        return tr_errprintf (error, "identity: expected an object");
    }
    for (size_t i = 0; i < sizeof (fields) / sizeof (fields[0]); i++) {
        const char *s = tr_json_str (identity, fields[i].key);
        /* These become path components: refuse "..", "/", "" and
         * anything else outside the safe set before touching the disk.
         */
        if (!s || !tr_record_id_is_safe (s)) {
            errno = EINVAL;
            return tr_errprintf (error, "identity.%s: %s", fields[i].key,
                                 s ? "not safe as a path component"
                                   : "expected a string");
        }
        *fields[i].dst = s;
    }
    return 0;
}

/* Format into buf, failing with ENAMETOOLONG on truncation. */
static int fmt_path (char *buf, size_t size, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static int fmt_path (char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (buf, size, fmt, ap);
    va_end (ap);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static int job_relpath (char *buf,
                        size_t size,
                        const char *cluster,
                        const char *job_id)
{
    return fmt_path (buf, size, "%s/jobs/%03x/%s", cluster, bucket_of (job_id),
                     job_id);
}

int tr_store_record_path (char *buf,
                          size_t size,
                          const char *cluster,
                          const char *job_id,
                          const char *step_id,
                          const char *node)
{
    if (!tr_record_id_is_safe (cluster) || !tr_record_id_is_safe (job_id)
        || !tr_record_id_is_safe (step_id) || !tr_record_id_is_safe (node)) {
        errno = EINVAL;
        return -1;
    }
    return fmt_path (buf, size, "%s/jobs/%03x/%s/%s.%s.json", cluster,
                     bucket_of (job_id), job_id, step_id, node);
}

char *tr_store_relpath (json_t *rec)
{
    struct ident id = { NULL, NULL, NULL, NULL };
    char buf[PATH_MAX];
    char *s;

    if (get_ident (rec, &id, NULL) < 0)
        return NULL;
    if (tr_store_record_path (buf, sizeof (buf), id.cluster, id.job_id,
                              id.step_id, id.node)
        < 0)
        return NULL;
    if (!(s = strdup (buf)))
        errno = ENOMEM;
    return s;
}

bool tr_store_in_place (json_t *rec,
                        const char *relpath,
                        char *why,
                        size_t size)
{
    json_t *identity = json_object_get (rec, "identity");
    char *rel = tr_store_relpath (rec);
    bool ok = rel && relpath && strcmp (rel, relpath) == 0;

    free (rel);
    if (!ok && why && size > 0)
        snprintf (why, size,
                  "the record is job %s's (step %s, node %s, cluster %s), "
                  "not in its place in the store (copied or moved here)",
                  tr_json_str_or (identity, "job_id", "?"),
                  tr_json_str_or (identity, "step_id", "?"),
                  tr_json_str_or (identity, "node", "?"),
                  tr_json_str_or (identity, "cluster", "?"));
    return ok;
}

/* Create the root and any missing parents.  The root is configured by
 * the administrator, so symlinks along it are followed; only what is
 * created gets dir_mode.
 */
static int create_root (const char *root, mode_t mode)
{
    char *copy = strdup (root);
    int rc = 0;

    if (!copy) {
        errno = ENOMEM;
        return -1;
    }
    for (char *p = copy + 1;; p++) {
        char saved = *p;
        if (saved != '/' && saved != '\0')
            continue;
        *p = '\0';
        if (mkdir (copy, 0700) == 0) {
            int fd =
                open (copy, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0 || fchmod (fd, mode) < 0) {
                close_keep_errno (fd);
                rc = -1;
            }
            else
                close (fd);
        }
        else if (errno != EEXIST)
            rc = -1;
        *p = saved;
        if (rc < 0 || saved == '\0')
            break;
    }
    free_keep_errno (copy);
    return rc;
}

/* The root as an absolute path without trailing '/', not resolved (so a
 * symlinked root keeps the name the administrator chose).
 */
static char *absolute_root (const char *root)
{
    char buf[PATH_MAX];
    size_t len;

    if (root[0] == '/') {
        if (fmt_path (buf, sizeof (buf), "%s", root) < 0)
            return NULL;
    }
    else {
        char cwd[PATH_MAX];
        if (!getcwd (cwd, sizeof (cwd)))
            return NULL;
        if (fmt_path (buf, sizeof (buf), "%s%s%s", cwd,
                      strcmp (cwd, "/") == 0 ? "" : "/", root)
            < 0)
            return NULL;
    }
    len = strlen (buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    return strdup (buf);
}

struct tr_store_opts tr_store_opts_from_conf (const tr_conf_t *conf)
{
    struct tr_store_opts so = {
        .file_mode = conf->store_file_mode,
        .dir_mode = conf->store_dir_mode,
        .owner_is_job = conf->store_owner_is_job,
        .owner_uid = conf->store_owner_is_job ? (uid_t)-1
                                              : conf->store_owner_uid,
        .gid = conf->store_group_set ? conf->store_gid : (gid_t)-1,
        .create = true,
        .job_access = (enum tr_store_access)conf->store_job_access,
        .keep_others = true,
    };
    return so;
}

int tr_store_check_root (const char *root, tr_error_t *error)
{
    struct stat st;

    if (!root || !*root) {
        errno = EINVAL;
        return tr_errprintf (error, "store.path: empty");
    }
    if (stat (root, &st) < 0) {
        int saved = errno;
        tr_errprintf (error, "store.path %s: %s", root, strerror (saved));
        errno = saved;
        return -1;
    }
    if (!S_ISDIR (st.st_mode)) {
        errno = ENOTDIR;
        return tr_errprintf (error, "store.path %s: not a directory", root);
    }
    if (st.st_mode & S_IWOTH) {
        tr_errprintf (error,
                      "store.path %s: insecure: writable by every user "
                      "(mode %04o); make it 0755",
                      root, (unsigned)(st.st_mode & 07777));
        errno = EPERM;
        return -1;
    }
    return 0;
}

tr_store_t *tr_store_open (const char *root,
                           const struct tr_store_opts *opts,
                           tr_error_t *error)
{
    tr_store_t *store;
    const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;

    if (!root || *root == '\0') {
        errno = EINVAL;
        tr_errprintf (error, "store: empty root path");
        return NULL;
    }
    if (!(store = calloc (1, sizeof (*store)))) {
        tr_errprintf (error, "store %s: out of memory", root);
        return NULL;
    }
    store->rootfd = -1;
    if (!(store->root = absolute_root (root))) {
        if (errno == 0)
            errno = ENOMEM;
        tr_errprintf (error, "store %s: %s", root, strerror (errno));
        goto error;
    }
    if (opts) {
        store->opts = *opts;
        store->writable = true;
    }
    store->rootfd = open (store->root, flags);
    if (store->rootfd < 0 && errno == ENOENT && opts && opts->create) {
        if (create_root (store->root, opts->dir_mode) < 0) {
            tr_errprintf (error, "create store %s: %s", store->root,
                          strerror (errno));
            goto error;
        }
        store->rootfd = open (store->root, flags);
    }
    if (store->rootfd < 0) {
        tr_errprintf (error, "open store %s: %s", store->root,
                      strerror (errno));
        goto error;
    }
    return store;
error:
    tr_store_destroy (store);
    return NULL;
}

void tr_store_destroy (tr_store_t *store)
{
    if (store) {
        int saved = errno;
        if (store->rootfd >= 0)
            close (store->rootfd);
        free (store->root);
        free (store);
        errno = saved;
    }
}

const char *tr_store_root (tr_store_t *store)
{
    return store ? store->root : NULL;
}

int tr_store_rootfd (tr_store_t *store)
{
    if (!store) {
        errno = EINVAL;
        return -1;
    }
    return store->rootfd;
}

int tr_store_format_day (time_t t, char *buf, size_t size)
{
    struct tm tm;

    if (!gmtime_r (&t, &tm)) {
        errno = EOVERFLOW;
        return -1;
    }
    if (strftime (buf, size, "%Y-%m-%d", &tm) != 10) {
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

/* The record's day: its end time, or its start time while it has none
 * (a snapshot of a running step).
 */
static int record_day (json_t *rec, char *buf, size_t size, tr_error_t *error)
{
    json_t *t = json_object_get (rec, "time");
    json_t *v = json_object_get (t, "end_unix_ms");
    const char *key = "time.end_unix_ms";
    json_int_t ms;

    if (!v || json_is_null (v)) {
        v = json_object_get (t, "start_unix_ms");
        key = "time.start_unix_ms";
    }
    if (!json_is_integer (v) || (ms = json_integer_value (v)) < 0) {
        errno = EINVAL;
        return tr_errprintf (error, "%s: expected a non-negative integer", key);
    }
    if (tr_store_format_day ((time_t)(ms / 1000), buf, size) < 0)
        return tr_errprintf (error, "%s: %s", key, strerror (errno));
    return 0;
}

/* The owner and reader of a file of user uid ((uid_t)-1: none known),
 * as record_owner below.
 */
static int owner_of (tr_store_t *store,
                     uid_t uid,
                     uid_t *uidp,
                     uid_t *readerp,
                     tr_error_t *error)
{
    bool valid = uid != (uid_t)-1;

    *uidp = *readerp = (uid_t)-1;
    if (!store->opts.owner_is_job) {
        *uidp = store->opts.owner_uid;
        if (valid && store->opts.job_access == TR_STORE_ACCESS_ACL)
            *readerp = uid;
        return 0;
    }
    if (!valid) {
        errno = EINVAL;
        return tr_errprintf (error, "identity.uid: expected a uid");
    }
    if (store->opts.job_access == TR_STORE_ACCESS_ACL)
        *readerp = uid;
    else if (store->opts.job_access != TR_STORE_ACCESS_NONE)
        *uidp = uid;
    return 0;
}

/* The record's owner and reader: with owner_is_job, the job's user
 * owns it (TR_STORE_ACCESS_OWNER) or reads it through an ACL entry
 * (TR_STORE_ACCESS_ACL: the writer keeps it), or neither; else the
 * configured owner owns it, and with TR_STORE_ACCESS_ACL the job's user
 * (when the record names one) reads it.  (uid_t)-1: none.
 */
static int record_owner (tr_store_t *store,
                         json_t *rec,
                         uid_t *uidp,
                         uid_t *readerp,
                         tr_error_t *error)
{
    json_t *v;
    json_int_t uid;
    bool valid;

    v = json_object_get (json_object_get (rec, "identity"), "uid");
    /* -1 would mean "leave as is" to fchown: never let a record ask. */
    valid = json_is_integer (v) && (uid = json_integer_value (v)) >= 0
            && (uintmax_t)uid < (uintmax_t)(uid_t)-1;
    return owner_of (store, valid ? (uid_t)uid : (uid_t)-1, uidp, readerp,
                     error);
}

/* A POSIX access ACL in the kernel's extended attribute format
 * (linux/posix_acl_xattr.h: a version, then entries sorted by tag and
 * id, little-endian), so that no ACL library is needed.
 */
#define ACL_XATTR "system.posix_acl_access"
#define ACL_XATTR_VERSION 2
#define ACL_TAG_USER_OBJ 0x01
#define ACL_TAG_USER 0x02
#define ACL_TAG_GROUP_OBJ 0x04
#define ACL_TAG_MASK 0x10
#define ACL_TAG_OTHER 0x20
#define ACL_NO_ID 0xffffffffu

static void acl_entry (unsigned char *p, unsigned tag, unsigned perm,
                       uint32_t id)
{
    uint16_t t = htole16 ((uint16_t)tag);
    uint16_t m = htole16 ((uint16_t)perm);
    uint32_t i = htole32 (id);

    memcpy (p, &t, 2);
    memcpy (p + 2, &m, 2);
    memcpy (p + 4, &i, 4);
}

/* Give reader read access to the file fd of mode mode: user::, the
 * reader's entry (r), group::, a mask that lets the reader read (the
 * group class bits the mode shows), other::.
 */
static int set_reader_acl (int fd, mode_t mode, uid_t reader)
{
    unsigned char buf[4 + 5 * 8];
    uint32_t version = htole32 (ACL_XATTR_VERSION);
    unsigned group = (mode >> 3) & 7;

    memcpy (buf, &version, 4);
    acl_entry (buf + 4, ACL_TAG_USER_OBJ, (mode >> 6) & 7, ACL_NO_ID);
    acl_entry (buf + 12, ACL_TAG_USER, 4, (uint32_t)reader);
    acl_entry (buf + 20, ACL_TAG_GROUP_OBJ, group, ACL_NO_ID);
    acl_entry (buf + 28, ACL_TAG_MASK, group | 4, ACL_NO_ID);
    acl_entry (buf + 36, ACL_TAG_OTHER, mode & 7, ACL_NO_ID);
    return fsetxattr (fd, ACL_XATTR, buf, sizeof (buf), 0);
}

/* Let the job's user read the record just renamed into place: an ACL
 * entry, or where the store has none (EOPNOTSUPP), with owner_is_job,
 * the user owns it without write permission.  Until this is done the
 * file is its writer's alone (never readable by anyone it should not
 * be); on failure the caller's retry of the put does it again.
 */
static int grant_reader (tr_store_t *store,
                         int jobfd,
                         const char *name,
                         mode_t mode,
                         uid_t reader,
                         tr_error_t *error)
{
    int fd = openat (jobfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;

    if (fd < 0 || fstat (fd, &st) < 0)
        goto error;
    if (!S_ISREG (st.st_mode)) {
        errno = EINVAL;
        goto error;
    }
    if (!store->no_acl && set_reader_acl (fd, mode, reader) == 0)
        goto done;
    if (!store->no_acl && errno != EOPNOTSUPP && errno != ENOTSUP)
        goto error;
    store->no_acl = true;
    if (store->opts.owner_is_job
        && (fchown (fd, reader, (gid_t)-1) < 0
            || fchmod (fd, mode & ~(mode_t)0222) < 0))
        goto error;
done:
    close (fd);
    return 0;
error:
    tr_errprintf (error, "%s/.../%s: give its user read access: %s",
                  store->root, name, strerror (errno));
    close_keep_errno (fd);
    return -1;
}

/* The day marker's name for a record: "<job_id>@<step_id>@<node>", or,
 * when that exceeds NAME_MAX (ids may be 128 bytes each),
 * "<job_id>@<16 hex digits of FNV-1a 64 of the record's file name>".
 * '@' is outside the path-safe set, so it cannot occur in an id.
 */
static int marker_name (char *buf, size_t size, const struct ident *id)
{
    char file[NAME_MAX + 1];

    if (fmt_path (buf, size, "%s@%s@%s", id->job_id, id->step_id, id->node)
        == 0)
        return 0;
    if (fmt_path (file, sizeof (file), "%s.%s.json", id->step_id, id->node) < 0)
        return -1;
    return fmt_path (buf, size, "%s@%016llx", id->job_id,
                     (unsigned long long)tr_str_hash64 (file, strlen (file)));
}

/* Create the empty day marker for a record.  One marker per record
 * (not per job) means every new record creates an entry, so the day
 * directory's mtime changes whenever a record lands on that day: the
 * summary index relies on that to know a day is unchanged with one stat.
 * O_EXCL means an existing marker (a re-delivery of the same record) is
 * left alone, and a symlink at the name is never followed.  A regular
 * file with more than one link is no marker of ours (markers are made
 * here, with one link): it is another file's name planted where a day
 * directory is writable, and is removed and the marker made afresh, so
 * that the other file is never chowned, chmodded or counted.
 */
static int put_marker (tr_store_t *store,
                       const struct ident *id,
                       const char *day,
                       uid_t uid,
                       tr_error_t *error)
{
    char rel[PATH_MAX];
    char name[NAME_MAX + 1];
    struct stat st;
    int dfd;
    int fd;

    if (fmt_path (rel, sizeof (rel), "%s/days/%s", id->cluster, day) < 0
        || marker_name (name, sizeof (name), id) < 0)
        return tr_errprintf (error, "marker %s: %s", id->job_id,
                             strerror (errno));
    dfd = tr_path_mkdirat_p (store->rootfd, rel, store->opts.dir_mode, error);
    if (dfd < 0)
        return -1;
    for (int tries = 0;; tries++) {
        fd = openat (dfd, name,
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600);
        if (fd >= 0)
            break;
        if (errno != EEXIST)
            goto error;
        if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            goto error;
        if (!S_ISREG (st.st_mode)) {
            errno = EEXIST;
            tr_errprintf (error, "marker %s/%s/%s: not a regular file",
                          store->root, rel, name);
            close_keep_errno (dfd);
            return -1;
        }
        if (st.st_nlink == 1) {
            close (dfd);
            return 0;
        }
        if (tries > 0) {
            errno = EEXIST;
            tr_errprintf (error, "marker %s/%s/%s: a hard link, again",
                          store->root, rel, name);
            close_keep_errno (dfd);
            return -1;
        }
        if (unlinkat (dfd, name, 0) < 0 && errno != ENOENT)
            goto error;
    }
    if ((uid != (uid_t)-1 || store->opts.gid != (gid_t)-1)
        && fchown (fd, uid, store->opts.gid) < 0)
        goto error_unlink;
    if (fchmod (fd, store->opts.file_mode) < 0)
        goto error_unlink;
    if (close (fd) < 0) {
        fd = -1;
        goto error_unlink;
    }
    /* Make the new entry durable, as for the record itself. */
    if (fsync (dfd) < 0 && errno != EINVAL)
        goto error;
    close (dfd);
    return 0;
error_unlink:
    close_keep_errno (fd);
    unlink_keep_errno (dfd, name);
error:
    tr_errprintf (error, "marker %s/%s/%s: %s", store->root, rel, name,
                  strerror (errno));
    close_keep_errno (dfd);
    return -1;
}

/* A record's identity.uid, or -1 when it has none that is a uid. */
static long long rec_uid (json_t *rec)
{
    json_t *v = json_object_get (json_object_get (rec, "identity"), "uid");
    json_int_t uid;

    if (!json_is_integer (v) || (uid = json_integer_value (v)) < 0
        || (uintmax_t)uid >= (uintmax_t)(uid_t)-1)
        return -1;
    return (long long)uid;
}

/* Records are at most this big (a long step's series and tool tables
 * are a few MB).
 */
#define RECORD_MAX ((size_t)256 << 20)

/* The uid of the record at name in dirfd: 0 with *uid (-1: none, or not
 * parsable), 1 when there is no record, -1 with errno.
 */
static int place_uid (int dirfd, const char *name, long long *uid)
{
    size_t len;
    char *text = tr_path_read_file (dirfd, name, RECORD_MAX, &len, NULL);
    json_t *rec;

    if (!text)
        return errno == ENOENT ? 1 : -1;
    rec = json_loadb (text, len, 0, NULL);
    free (text);
    *uid = rec ? rec_uid (rec) : -1;
    json_decref (rec);
    return 0;
}

/* Write a record aside, under <cluster>/refused/<job>/ (tr_store_put). */
static int put_aside (tr_store_t *store,
                      const struct ident *id,
                      long long uid,
                      const char *data,
                      tr_error_t *error)
{
    char rel[PATH_MAX];
    char name[NAME_MAX + 1];
    int fd;
    int rc;

    if (fmt_path (rel, sizeof (rel), "%s/" TR_STORE_REFUSED "/%s",
                  id->cluster, id->job_id)
            < 0
        || fmt_path (name, sizeof (name), "%s.%s.uid%lld.json", id->step_id,
                     id->node, uid)
               < 0)
        return tr_errprintf (error, "store %s: refused record path: %s",
                             store->root, strerror (errno));
    if ((fd = tr_path_mkdirat_p (store->rootfd, rel, store->opts.dir_mode,
                                 error))
        < 0)
        return -1;
    rc = tr_path_write_atomic (fd, name, data, strlen (data),
                               store->opts.file_mode & 0660, (uid_t)-1,
                               store->opts.gid, error);
    close_keep_errno (fd);
    return rc < 0 ? -1 : 1;
}

/* Put the serialized record at name in the job directory jobfd: 0, or 1
 * when its place holds another uid's record and it was set aside
 * (keep_others), or -1 with errno and error.
 */
static int put_file (tr_store_t *store,
                     int jobfd,
                     const char *rel,
                     const char *name,
                     const struct ident *id,
                     json_t *rec,
                     const char *data,
                     mode_t mode,
                     uid_t uid,
                     uid_t reader,
                     tr_error_t *error)
{
    long long mine = rec_uid (rec);
    int rc;

    if (store->opts.keep_others && mine >= 0) {
        long long there = -1;
        int prc = place_uid (jobfd, name, &there);

        if (prc < 0)
            return tr_errprintf (error, "%s/%s/%s: %s", store->root, rel, name,
                                 strerror (errno));
        if (prc == 0 && there >= 0 && there != mine)
            return put_aside (store, id, mine, data, error);
    }
    rc = tr_path_write_atomic (jobfd, name, data, strlen (data), mode, uid,
                               store->opts.gid, error);
    if (rc == 0 && reader != (uid_t)-1)
        rc = grant_reader (store, jobfd, name, mode, reader, error);
    return rc;
}

/* How often a put makes a directory again that a concurrent
 * tr_store_prune removed.  A prune with a grace leaves a directory that
 * changed within it, so a put loses at most the old directories of its
 * path, once each: the one it makes again is new.  The bound is for a
 * prune without grace (a spool nobody writes any more), whose every
 * round can land in the microseconds between a directory's creation
 * and its use.
 */
#define PUT_TRIES 64

int tr_store_put (tr_store_t *store, json_t *rec, tr_error_t *error)
{
    struct ident id = { NULL, NULL, NULL, NULL };
    char rel[PATH_MAX];
    char name[NAME_MAX + 1];
    char day[16];
    uid_t uid = (uid_t)-1;
    uid_t reader = (uid_t)-1;
    mode_t mode;
    char *data;
    int jobfd;
    int rc;

    if (!store || !rec) {
        errno = EINVAL;
        return tr_errprintf (error, "store put: invalid argument");
    }
    if (!store->writable) {
        errno = EBADF;
        return tr_errprintf (error, "store %s: opened read-only", store->root);
    }
    /* Everything that can be refused is checked before the first
     * directory is created, so a bad record leaves no trace.
     */
    if (get_ident (rec, &id, error) < 0
        || record_day (rec, day, sizeof (day), error) < 0
        || record_owner (store, rec, &uid, &reader, error) < 0)
        return -1;
    /* Records are never rewritten in place (a re-delivery replaces the
     * file by rename): one the job's user owns gets no write permission.
     */
    mode = store->opts.file_mode;
    if (store->opts.owner_is_job && uid != (uid_t)-1)
        mode &= ~(mode_t)0222;
    if (job_relpath (rel, sizeof (rel), id.cluster, id.job_id) < 0
        || fmt_path (name, sizeof (name), "%s.%s.json", id.step_id, id.node)
               < 0)
        return tr_errprintf (error, "store %s: record path: %s", store->root,
                             strerror (errno));
    if (!(data = tr_record_dumps (rec))) {
        if (errno == 0)
            errno = ENOMEM;
        return tr_errprintf (error, "%s/%s/%s: cannot serialize record",
                             store->root, rel, name);
    }
    /* ENOENT: tr_store_prune removed an empty directory on the way
     * between its creation and its use; make it again.
     */
    for (int tries = 0;; tries++) {
        jobfd = tr_path_mkdirat_p (store->rootfd, rel, store->opts.dir_mode,
                                   error);
        rc = jobfd < 0 ? -1
                       : put_file (store, jobfd, rel, name, &id, rec, data,
                                   mode, uid, reader, error);
        if (jobfd >= 0)
            close_keep_errno (jobfd);
        if (rc >= 0 || errno != ENOENT || tries == PUT_TRIES)
            break;
    }
    free_keep_errno (data);
    if (rc != 0)
        return rc; /* -1, or 1: set aside, no marker */
    /* A failure here leaves the record in place but unlisted by day; the
     * caller retries the whole put, which replaces the record by rename
     * (no duplicate) and tries the marker again.
     */
    for (int tries = 0;; tries++) {
        rc = put_marker (store, &id, day, uid, error);
        if (rc == 0 || errno != ENOENT || tries == PUT_TRIES)
            return rc;
    }
}

int tr_store_open_below (int dirfd, const char *relpath)
{
    char comp[NAME_MAX + 1];
    const char *p = relpath;
    int cur = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    while (cur >= 0 && *p) {
        size_t n = strcspn (p, "/");
        int next;

        if (n == 0 || n >= sizeof (comp)
            || (n == 2 && p[0] == '.' && p[1] == '.')) {
            close (cur);
            errno = n >= sizeof (comp) ? ENAMETOOLONG : EINVAL;
            return -1;
        }
        memcpy (comp, p, n);
        comp[n] = '\0';
        next =
            openat (cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close_keep_errno (cur);
        cur = next;
        p += n + (p[n] == '/');
    }
    return cur;
}

static bool has_suffix (const char *s, const char *suffix)
{
    size_t n = strlen (s);
    size_t m = strlen (suffix);

    return n > m && strcmp (s + n - m, suffix) == 0;
}

/* A day marker's name: "<job_id>" (one marker per job, as stores
 * written before per-record markers have), "<job_id>@<step_id>@<node>"
 * or "<job_id>@<hash>": at most three '@'-separated parts, each safe.
 */
static bool marker_is_valid (const char *s)
{
    char part[NAME_MAX + 1];
    int nparts = 0;

    for (;;) {
        size_t n = strcspn (s, "@");

        if (n >= sizeof (part) || ++nparts > 3)
            return false;
        memcpy (part, s, n);
        part[n] = '\0';
        if (!tr_record_id_is_safe (part))
            return false;
        if (s[n] == '\0')
            return true;
        s += n + 1;
    }
}

bool tr_store_is_day_name (const char *s)
{
    if (strlen (s) != 10)
        return false;
    for (int i = 0; i < 10; i++) {
        if (i == 4 || i == 7 ? s[i] != '-' : (s[i] < '0' || s[i] > '9'))
            return false;
    }
    return true;
}

static void closedir_keep_errno (DIR *dir)
{
    int saved = errno;
    closedir (dir);
    errno = saved;
}

void tr_store_free_names (char **names, size_t n)
{
    int saved = errno;

    for (size_t i = 0; i < n; i++)
        free (names[i]);
    free (names);
    errno = saved;
}

static int cmp_names (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The entry's type, from d_type or, where the file system leaves it
 * DT_UNKNOWN (some NFS and XFS setups), from fstatat without following:
 * DT_DIR, DT_REG or DT_UNKNOWN for anything else.
 */
static unsigned char entry_type (int fd, const struct dirent *de)
{
    struct stat st;

    if (de->d_type != DT_UNKNOWN)
        return de->d_type;
    if (fstatat (fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return DT_UNKNOWN;
    return S_ISDIR (st.st_mode) ? DT_DIR
           : S_ISREG (st.st_mode) ? DT_REG
                                  : DT_UNKNOWN;
}

int tr_store_list (int fd,
                   tr_store_name_f want,
                   void *arg,
                   unsigned char type,
                   char ***namesp,
                   size_t *np)
{
    DIR *dir;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    size_t cap = 0;
    int dfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (dfd < 0)
        return -1;
    if (!(dir = fdopendir (dfd))) {
        close_keep_errno (dfd);
        return -1;
    }
    for (;;) {
        errno = 0;
        if (!(de = readdir (dir))) {
            if (errno != 0)
                goto error;
            break;
        }
        if (!want (de->d_name, arg)
            || (type != DT_UNKNOWN && entry_type (dirfd (dir), de) != type))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **nn = realloc (names, ncap * sizeof (*names));
            if (!nn)
                goto error;
            names = nn;
            cap = ncap;
        }
        if (!(names[n] = strdup (de->d_name)))
            goto error;
        n++;
    }
    closedir (dir);
    if (n > 1)
        qsort (names, n, sizeof (*names), cmp_names);
    *namesp = names;
    *np = n;
    return 0;
error:
    if (errno == 0)
        errno = ENOMEM;
    closedir_keep_errno (dir);
    tr_store_free_names (names, n);
    return -1;
}

/* Does a name belong in a listing of this kind? */
static bool name_of_kind (const char *name, void *arg)
{
    enum list_kind k = *(enum list_kind *)arg;

    if (name[0] == '.')
        return false; /* ".", "..", and temporaries being written */
    if (k == LIST_RECORDS)
        return has_suffix (name, ".json");
    if (k == LIST_MARKERS)
        return marker_is_valid (name);
    return true;
}

/* List the entries of directory fd (consumed) of one kind, sorted so
 * output is the same on every run.  Caller frees with
 * tr_store_free_names().
 */
static int list_names (int fd, enum list_kind kind, char ***namesp, size_t *np)
{
    int rc = tr_store_list (fd, name_of_kind, &kind,
                            kind == LIST_DIRS ? DT_DIR : DT_REG, namesp, np);

    close_keep_errno (fd);
    return rc;
}

/* Call the walk's function for each record in the job directory jobfd
 * (consumed), named relative to the root as rel.
 */
static int walk_job (tr_store_t *store,
                     int jobfd,
                     const char *rel,
                     struct walk *w,
                     tr_error_t *error)
{
    char path[PATH_MAX];
    char **names;
    size_t n;

    if (list_names (jobfd, LIST_RECORDS, &names, &n) < 0)
        return tr_errprintf (error, "list %s/%s: %s", store->root, rel,
                             strerror (errno));
    for (size_t i = 0; i < n && !w->stopped; i++) {
        int rc;
        if (fmt_path (path, sizeof (path), "%s%s%s/%s", store->root,
                      strcmp (store->root, "/") == 0 ? "" : "/", rel, names[i])
            < 0) {
            tr_errprintf (error, "%s/%s/%s: %s", store->root, rel, names[i],
                          strerror (errno));
            tr_store_free_names (names, n);
            return -1;
        }
        w->count++;
        if ((rc = w->fn (path, w->arg)) != 0) {
            w->stopped = true;
            w->stopval = rc;
        }
    }
    tr_store_free_names (names, n);
    return 0;
}

/* Walk one job by id.  A job with no directory is not an error here:
 * returns 0 and counts nothing.
 */
static int walk_job_id (tr_store_t *store,
                        const char *cluster,
                        const char *job_id,
                        struct walk *w,
                        tr_error_t *error)
{
    char rel[PATH_MAX];
    int fd;

    if (job_relpath (rel, sizeof (rel), cluster, job_id) < 0)
        return tr_errprintf (error, "job %s: %s", job_id, strerror (errno));
    if ((fd = tr_store_open_below (store->rootfd, rel)) < 0) {
        if (errno == ENOENT)
            return 0;
        return tr_errprintf (error, "open %s/%s: %s", store->root, rel,
                             (errno == ELOOP || errno == ENOTDIR)
                                 ? "is a symbolic link or not a directory"
                                 : strerror (errno));
    }
    return walk_job (store, fd, rel, w, error);
}

static int check_ids (const char *cluster,
                      const char *job_id,
                      tr_error_t *error)
{
    if (!cluster || !tr_record_id_is_safe (cluster)) {
        errno = EINVAL;
        return tr_errprintf (error, "cluster name not safe as a path "
                                    "component");
    }
    if (job_id && !tr_record_id_is_safe (job_id)) {
        errno = EINVAL;
        return tr_errprintf (error, "job id not safe as a path component");
    }
    return 0;
}

int tr_store_foreach_job (tr_store_t *store,
                          const char *cluster,
                          const char *job_id,
                          tr_store_each_f fn,
                          void *arg,
                          tr_error_t *error)
{
    struct walk w = { fn, arg, 0, 0, false };

    if (!store || !fn || !job_id) {
        errno = EINVAL;
        return tr_errprintf (error, "store foreach: invalid argument");
    }
    if (check_ids (cluster, job_id, error) < 0)
        return -1;
    if (walk_job_id (store, cluster, job_id, &w, error) < 0)
        return -1;
    if (w.stopped)
        return w.stopval;
    if (w.count == 0) {
        errno = ENOENT;
        return tr_errprintf (error, "%s: no records of job %s", cluster,
                             job_id);
    }
    return w.count;
}

/* A job id seen in the window, with the order it was first seen in. */
struct seen {
    char *job_id;
    size_t seq;
};

static int cmp_seen_id (const void *a, const void *b)
{
    const struct seen *x = a;
    const struct seen *y = b;
    int c = strcmp (x->job_id, y->job_id);

    if (c != 0)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_seen_seq (const void *a, const void *b)
{
    const struct seen *x = a;
    const struct seen *y = b;

    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Collect the job ids of every marker in days [from_day, to_day] into
 * *seenp: day by day, sorted within a day, each id once (a job has a
 * marker per record, and markers on two days when its steps ended on
 * both, but it is listed once).  The id is the marker's name up to its
 * first '@' (all of it for a per-job marker).
 */
static int collect_window (tr_store_t *store,
                           const char *cluster,
                           const char *from_day,
                           const char *to_day,
                           struct seen **seenp,
                           size_t *np,
                           tr_error_t *error)
{
    char rel[PATH_MAX];
    char **days = NULL;
    size_t ndays = 0;
    struct seen *seen = NULL;
    size_t n = 0;
    size_t cap = 0;
    size_t out = 0;
    int fd;

    if (fmt_path (rel, sizeof (rel), "%s/days", cluster) < 0)
        return tr_errprintf (error, "%s: %s", cluster, strerror (errno));
    if ((fd = tr_store_open_below (store->rootfd, rel)) < 0) {
        if (errno == ENOENT)
            goto done;
        return tr_errprintf (error, "open %s/%s: %s", store->root, rel,
                             strerror (errno));
    }
    /* Listing the days that exist, rather than trying every day of the
     * window, keeps a scan of "since 2020" as cheap as the store is
     * sparse.  YYYY-MM-DD names sort like the dates they are.
     */
    if (list_names (fd, LIST_DIRS, &days, &ndays) < 0)
        return tr_errprintf (error, "list %s/%s: %s", store->root, rel,
                             strerror (errno));
    for (size_t d = 0; d < ndays; d++) {
        char **jobs;
        size_t njobs;

        if (!tr_store_is_day_name (days[d]) || strcmp (days[d], from_day) < 0
            || strcmp (days[d], to_day) > 0)
            continue;
        if (fmt_path (rel, sizeof (rel), "%s/days/%s", cluster, days[d]) < 0
            || (fd = tr_store_open_below (store->rootfd, rel)) < 0
            || list_names (fd, LIST_MARKERS, &jobs, &njobs) < 0) {
            tr_errprintf (error, "list %s/%s/days/%s: %s", store->root, cluster,
                          days[d], strerror (errno));
            goto error;
        }
        /* Cut "<job_id>@..." to the job id and sort again: the listing
         * is in marker-name order, where "10050@..." comes before
         * "1005@..." ('0' < '@'), not in job-id order.
         */
        for (size_t j = 0; j < njobs; j++)
            jobs[j][strcspn (jobs[j], "@")] = '\0';
        if (njobs > 1)
            qsort (jobs, njobs, sizeof (*jobs), cmp_names);
        for (size_t j = 0; j < njobs; j++) {
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct seen *ns = realloc (seen, ncap * sizeof (*seen));
                if (!ns) {
                    for (; j < njobs; j++)
                        free (jobs[j]);
                    free (jobs);
                    tr_errprintf (error, "out of memory");
                    goto error;
                }
                seen = ns;
                cap = ncap;
            }
            seen[n].job_id = jobs[j];
            seen[n].seq = n;
            n++;
        }
        free (jobs);
    }
    /* De-duplicate: sort by id, drop all but the first sighting, then
     * restore the order of first sighting.
     */
    if (n > 1) {
        qsort (seen, n, sizeof (*seen), cmp_seen_id);
        for (size_t i = 0; i < n; i++) {
            if (out > 0 && strcmp (seen[out - 1].job_id, seen[i].job_id) == 0)
                free (seen[i].job_id);
            else
                seen[out++] = seen[i];
        }
        qsort (seen, out, sizeof (*seen), cmp_seen_seq);
    }
    else
        out = n;
done:
    tr_store_free_names (days, ndays);
    *seenp = seen;
    *np = out;
    return 0;
error:
    tr_store_free_names (days, ndays);
    for (size_t i = 0; i < n; i++)
        free_keep_errno (seen[i].job_id);
    free_keep_errno (seen);
    return -1;
}

int tr_store_foreach_window (tr_store_t *store,
                             const char *cluster,
                             time_t from,
                             time_t to,
                             tr_store_each_f fn,
                             void *arg,
                             tr_error_t *error)
{
    struct walk w = { fn, arg, 0, 0, false };
    char from_day[16];
    char to_day[16];
    struct seen *seen = NULL;
    size_t n = 0;
    int rc = 0;

    if (!store || !fn || from > to) {
        errno = EINVAL;
        return tr_errprintf (error, "store foreach: invalid argument");
    }
    if (check_ids (cluster, NULL, error) < 0)
        return -1;
    if (tr_store_format_day (from, from_day, sizeof (from_day)) < 0
        || tr_store_format_day (to, to_day, sizeof (to_day)) < 0)
        return tr_errprintf (error, "time window: %s", strerror (errno));
    if (collect_window (store, cluster, from_day, to_day, &seen, &n, error) < 0)
        return -1;
    for (size_t i = 0; i < n && rc == 0 && !w.stopped; i++)
        rc = walk_job_id (store, cluster, seen[i].job_id, &w, error);
    for (size_t i = 0; i < n; i++)
        free_keep_errno (seen[i].job_id);
    free_keep_errno (seen);
    if (rc < 0)
        return -1;
    return w.stopped ? w.stopval : w.count;
}

/* Walk <cluster>/jobs/<bucket>/<job>/ for one cluster directory. */
static int walk_cluster (tr_store_t *store,
                         const char *cluster,
                         struct walk *w,
                         tr_error_t *error)
{
    char rel[PATH_MAX];
    char **buckets;
    size_t nb;
    int fd;
    int rc = 0;

    if (fmt_path (rel, sizeof (rel), "%s/jobs", cluster) < 0)
        return 0;
    if ((fd = tr_store_open_below (store->rootfd, rel)) < 0)
        return 0; /* not a cluster directory: nothing of ours */
    if (list_names (fd, LIST_DIRS, &buckets, &nb) < 0)
        return tr_errprintf (error, "list %s/%s: %s", store->root, rel,
                             strerror (errno));
    for (size_t b = 0; b < nb && rc == 0 && !w->stopped; b++) {
        char **jobs;
        size_t nj;

        if (fmt_path (rel, sizeof (rel), "%s/jobs/%s", cluster, buckets[b]) < 0
            || (fd = tr_store_open_below (store->rootfd, rel)) < 0)
            continue;
        if (list_names (fd, LIST_DIRS, &jobs, &nj) < 0) {
            rc = tr_errprintf (error, "list %s/%s: %s", store->root, rel,
                               strerror (errno));
            break;
        }
        for (size_t j = 0; j < nj && rc == 0 && !w->stopped; j++) {
            if (fmt_path (rel, sizeof (rel), "%s/jobs/%s/%s", cluster,
                          buckets[b], jobs[j])
                    < 0
                || (fd = tr_store_open_below (store->rootfd, rel)) < 0)
                continue; /* replaced by a non-directory since listed */
            rc = walk_job (store, fd, rel, w, error);
        }
        tr_store_free_names (jobs, nj);
    }
    tr_store_free_names (buckets, nb);
    return rc;
}

int tr_store_foreach_all (tr_store_t *store,
                          tr_store_each_f fn,
                          void *arg,
                          tr_error_t *error)
{
    struct walk w = { fn, arg, 0, 0, false };
    char **clusters;
    size_t nc;
    int fd;
    int rc = 0;

    if (!store || !fn) {
        errno = EINVAL;
        return tr_errprintf (error, "store foreach: invalid argument");
    }
    fd = openat (store->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || list_names (fd, LIST_DIRS, &clusters, &nc) < 0)
        return tr_errprintf (error, "list %s: %s", store->root,
                             strerror (errno));
    for (size_t c = 0; c < nc && rc == 0 && !w.stopped; c++)
        rc = walk_cluster (store, clusters[c], &w, error);
    tr_store_free_names (clusters, nc);
    if (rc < 0)
        return -1;
    return w.stopped ? w.stopval : w.count;
}

/* Does job_id of cluster have a record ("*.json") left?  1 yes, 0 no (no
 * job directory, or none in it), -1 with errno.
 */
static int job_has_records (tr_store_t *store,
                            const char *cluster,
                            const char *job_id)
{
    char rel[PATH_MAX];
    char **names;
    size_t n;
    int fd;

    if (!tr_record_id_is_safe (job_id)
        || job_relpath (rel, sizeof (rel), cluster, job_id) < 0) {
        errno = EINVAL;
        return -1;
    }
    if ((fd = tr_store_open_below (store->rootfd, rel)) < 0)
        return errno == ENOENT ? 0 : -1;
    if (list_names (fd, LIST_RECORDS, &names, &n) < 0)
        return -1;
    tr_store_free_names (names, n);
    return n > 0;
}

static const struct timespec no_cutoff = { 0, 0 };

static bool ts_before (const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec
           || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* rmdir name below dirfd if it is empty and has not changed since
 * before cutoff (a realtime instant; none when its tv_sec is 0): 1
 * removed, 0 not (not empty, changed since, gone meanwhile, or not a
 * directory: AT_REMOVEDIR never follows a symlink), -1 with errno
 * otherwise.  A directory's mtime moves when it is made and whenever an
 * entry comes or goes, so one a put has just made, or a forwarder has
 * just emptied, is left for a later round.
 */
static int rmdir_if_empty (int dirfd,
                           const char *name,
                           const struct timespec *cutoff)
{
    struct stat st;

    if (cutoff->tv_sec != 0) {
        if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return errno == ENOENT ? 0 : -1;
        if (!S_ISDIR (st.st_mode) || !ts_before (&st.st_mtim, cutoff))
            return 0;
    }
    if (unlinkat (dirfd, name, AT_REMOVEDIR) == 0)
        return 1;
    if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOENT
        || errno == ENOTDIR || errno == EBUSY)
        return 0;
    return -1;
}

/* Open <cluster>/<sub> (its path in rel) and list its subdirectories:
 * 1 with *dirfd open and the names to free, 0 where it is no cluster
 * directory of ours or absent, -1 with error.
 */
static int list_cluster_sub (tr_store_t *store,
                             const char *cluster,
                             const char *sub,
                             char rel[PATH_MAX],
                             int *dirfd,
                             char ***names,
                             size_t *n,
                             tr_error_t *error)
{
    int fd;

    if (!tr_record_id_is_safe (cluster)
        || fmt_path (rel, PATH_MAX, "%s/%s", cluster, sub) < 0)
        return 0;
    if ((*dirfd = tr_store_open_below (store->rootfd, rel)) < 0)
        return 0;
    fd = dup (*dirfd);
    if (fd < 0 || list_names (fd, LIST_DIRS, names, n) < 0) {
        tr_errprintf (error, "list %s/%s: %s", store->root, rel,
                      strerror (errno));
        close_keep_errno (*dirfd);
        return -1;
    }
    return 1;
}

/* The markers of jobs with no record left, then the day directories
 * left empty, of one cluster.
 */
static int prune_days (tr_store_t *store,
                       const char *cluster,
                       const struct timespec *cutoff,
                       size_t *removed,
                       tr_error_t *error)
{
    char rel[PATH_MAX];
    char **days, **marks;
    size_t nd, nm;
    int daysfd, fd;
    int rc = list_cluster_sub (store, cluster, "days", rel, &daysfd, &days,
                               &nd, error);

    if (rc <= 0)
        return rc;
    rc = 0;
    for (size_t i = 0; i < nd && rc == 0; i++) {
        int dayfd;

        if (!tr_store_is_day_name (days[i]))
            continue;
        dayfd = openat (daysfd, days[i],
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dayfd < 0)
            continue; /* replaced or removed since listed */
        fd = dup (dayfd);
        if (fd < 0 || list_names (fd, LIST_MARKERS, &marks, &nm) < 0) {
            rc = tr_errprintf (error, "list %s/%s/%s: %s", store->root, rel,
                               days[i], strerror (errno));
            close (dayfd);
            break;
        }
        bool emptied = false;

        for (size_t j = 0; j < nm; j++) {
            char job[NAME_MAX + 1];
            size_t n = strcspn (marks[j], "@");

            memcpy (job, marks[j], n);
            job[n] = '\0';
            if (job_has_records (store, cluster, job) != 0)
                continue;
            if (unlinkat (dayfd, marks[j], 0) == 0) {
                (*removed)++;
                emptied = true;
            }
        }
        tr_store_free_names (marks, nm);
        close (dayfd);
        /* one this pass has just emptied goes now: a put that loses it
         * makes it again, new, and the grace keeps that one
         */
        switch (rmdir_if_empty (daysfd, days[i], emptied ? &no_cutoff
                                                         : cutoff)) {
        case 1:
            (*removed)++;
            break;
        case -1:
            rc = tr_errprintf (error, "rmdir %s/%s/%s: %s", store->root,
                               rel, days[i], strerror (errno));
            break;
        }
    }
    tr_store_free_names (days, nd);
    close (daysfd);
    return rc;
}

/* The empty job directories, then the empty bucket directories, of one
 * cluster.
 */
static int prune_jobs (tr_store_t *store,
                       const char *cluster,
                       const struct timespec *cutoff,
                       size_t *removed,
                       tr_error_t *error)
{
    char rel[PATH_MAX];
    char **buckets, **jobs;
    size_t nb, nj;
    int jobsfd, fd;
    int rc = list_cluster_sub (store, cluster, "jobs", rel, &jobsfd,
                               &buckets, &nb, error);

    if (rc <= 0)
        return rc;
    rc = 0;
    for (size_t b = 0; b < nb && rc == 0; b++) {
        int bfd = openat (jobsfd, buckets[b],
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (bfd < 0)
            continue;
        fd = dup (bfd);
        if (fd < 0 || list_names (fd, LIST_DIRS, &jobs, &nj) < 0) {
            rc = tr_errprintf (error, "list %s/%s/%s: %s", store->root, rel,
                               buckets[b], strerror (errno));
            close (bfd);
            break;
        }
        for (size_t j = 0; j < nj && rc == 0; j++) {
            switch (rmdir_if_empty (bfd, jobs[j], cutoff)) {
            case 1:
                (*removed)++;
                break;
            case -1:
                rc = tr_errprintf (error, "rmdir %s/%s/%s/%s: %s",
                                   store->root, rel, buckets[b], jobs[j],
                                   strerror (errno));
                break;
            }
        }
        tr_store_free_names (jobs, nj);
        close (bfd);
        if (rc == 0) {
            switch (rmdir_if_empty (jobsfd, buckets[b], cutoff)) {
            case 1:
                (*removed)++;
                break;
            case -1:
                rc = tr_errprintf (error, "rmdir %s/%s/%s: %s", store->root,
                                   rel, buckets[b], strerror (errno));
                break;
            }
        }
    }
    tr_store_free_names (buckets, nb);
    close (jobsfd);
    return rc;
}

int tr_store_prune (tr_store_t *store, unsigned int grace,
                    tr_error_t *error)
{
    struct timespec cutoff = { 0, 0 };
    char **clusters;
    size_t nc, removed = 0;
    int fd;
    int rc = 0;

    if (!store) {
        errno = EINVAL;
        return tr_errprintf (error, "store prune: invalid argument");
    }
    if (!store->writable) {
        errno = EBADF;
        return tr_errprintf (error, "store %s: opened read-only", store->root);
    }
    if (grace > 0) {
        if (clock_gettime (CLOCK_REALTIME, &cutoff) < 0)
            return tr_errprintf (error, "store prune: clock: %s",
                                 strerror (errno));
        cutoff.tv_sec = cutoff.tv_sec > (time_t)grace
                            ? cutoff.tv_sec - (time_t)grace
                            : 1;
    }
    fd = openat (store->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || list_names (fd, LIST_DIRS, &clusters, &nc) < 0)
        return tr_errprintf (error, "list %s: %s", store->root,
                             strerror (errno));
    for (size_t c = 0; c < nc && rc == 0; c++) {
        rc = prune_days (store, clusters[c], &cutoff, &removed, error);
        if (rc == 0)
            rc = prune_jobs (store, clusters[c], &cutoff, &removed, error);
    }
    tr_store_free_names (clusters, nc);
    if (rc < 0)
        return -1;
    return removed > INT_MAX ? INT_MAX : (int)removed;
}

/* rmdir rel (below the store's root) if it is empty, its parent
 * opened without following a link: 1 removed, 0 not (not empty, or
 * absent), -1 with error.
 */
static int rmdir_below (tr_store_t *store, char *rel, tr_error_t *error)
{
    char *slash = strrchr (rel, '/');
    int fd, rc;

    *slash = '\0';
    fd = tr_store_open_below (store->rootfd, rel);
    *slash = '/';
    if (fd < 0)
        return errno == ENOENT ? 0
                               : tr_errprintf (error, "open %s/%s: %s",
                                               store->root, rel,
                                               strerror (errno));
    rc = rmdir_if_empty (fd, slash + 1, &no_cutoff);
    close_keep_errno (fd);
    if (rc < 0)
        return tr_errprintf (error, "rmdir %s/%s: %s", store->root, rel,
                             strerror (errno));
    return rc;
}

int tr_store_prune_job (tr_store_t *store,
                        const char *cluster,
                        const char *job_id,
                        tr_error_t *error)
{
    char rel[PATH_MAX];
    int rc;

    if (!store || !cluster || !job_id) {
        errno = EINVAL;
        return tr_errprintf (error, "store prune: invalid argument");
    }
    if (!store->writable) {
        errno = EBADF;
        return tr_errprintf (error, "store %s: opened read-only", store->root);
    }
    if (!tr_record_id_is_safe (cluster) || !tr_record_id_is_safe (job_id)
        || job_relpath (rel, sizeof (rel), cluster, job_id) < 0) {
        errno = EINVAL;
        return tr_errprintf (error, "store prune: unsafe job id");
    }
    /* rel is <cluster>/jobs/<bucket>/<job>: the job's directory, then
     * the bucket if that emptied it (it holds other jobs more often
     * than not)
     */
    rc = rmdir_below (store, rel, error);
    if (rc == 1) {
        *strrchr (rel, '/') = '\0';
        rc = rmdir_below (store, rel, error);
        if (rc >= 0)
            rc++;
    }
    return rc;
}

int tr_store_put_node_status (tr_store_t *store,
                              const char *cluster,
                              const char *node,
                              json_t *status,
                              tr_error_t *error)
{
    char rel[PATH_MAX];
    char name[NAME_MAX + 1];
    char *text;
    int dfd, rc;

    if (!store || !json_is_object (status)) {
        errno = EINVAL;
        return tr_errprintf (error, "node status: invalid argument");
    }
    if (!store->writable) {
        errno = EBADF;
        return tr_errprintf (error, "store %s: opened read-only", store->root);
    }
    if (!cluster || !node || !tr_record_id_is_safe (cluster)
        || !tr_record_id_is_safe (node)) {
        errno = EINVAL;
        return tr_errprintf (error, "node status: cluster or node name not "
                                    "safe as a path component");
    }
    if (fmt_path (rel, sizeof (rel), "%s/nodes", cluster) < 0
        || fmt_path (name, sizeof (name), "%s.json", node) < 0)
        return tr_errprintf (error, "node status: %s", strerror (errno));
    if (!(text = json_dumps (status, JSON_COMPACT | JSON_SORT_KEYS))) {
        errno = ENOMEM;
        return tr_errprintf (error, "node status: cannot serialize");
    }
    dfd = tr_path_mkdirat_p (store->rootfd, rel, store->opts.dir_mode, error);
    if (dfd < 0) {
        free_keep_errno (text);
        return -1;
    }
    rc = tr_path_write_atomic (dfd, name, text, strlen (text), 0644,
                               (uid_t)-1, store->opts.gid, error);
    close_keep_errno (dfd);
    free_keep_errno (text);
    return rc;
}

json_t *tr_store_node_status (tr_store_t *store,
                              const char *cluster,
                              tr_error_t *error)
{
    char rel[PATH_MAX];
    char **names;
    size_t n;
    json_t *out;
    int fd;

    if (!store || check_ids (cluster, NULL, error) < 0) {
        errno = EINVAL;
        tr_errprintf (error, "node status: invalid argument");
        return NULL;
    }
    if (!(out = json_array ())) {
        errno = ENOMEM;
        tr_errprintf (error, "node status: out of memory");
        return NULL;
    }
    if (fmt_path (rel, sizeof (rel), "%s/nodes", cluster) < 0
        || (fd = tr_store_open_below (store->rootfd, rel)) < 0) {
        if (errno == ENOENT)
            return out;
        tr_errprintf (error, "open %s/%s/nodes: %s", store->root, cluster,
                      strerror (errno));
        json_decref (out);
        return NULL;
    }
    if (tr_store_list (fd, name_of_kind, &(enum list_kind){ LIST_RECORDS },
                       DT_REG, &names, &n) < 0) {
        tr_errprintf (error, "list %s/%s: %s", store->root, rel,
                      strerror (errno));
        close_keep_errno (fd);
        json_decref (out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len;
        tr_error_t e2;
        char *text = tr_path_read_file (fd, names[i], 65536, &len, &e2);
        json_t *o = text ? json_loadb (text, len, 0, NULL) : NULL;

        free (text);
        if (!json_is_object (o)) {
            json_decref (o);
            continue; /* unreadable: skipped */
        }
        names[i][strlen (names[i]) - 5] = '\0';
        json_object_set_new (o, "node", json_string (names[i]));
        json_array_append_new (out, o);
    }
    tr_store_free_names (names, n);
    close (fd);
    return out;
}

long tr_store_refused_count (tr_store_t *store, const char *cluster)
{
    char rel[PATH_MAX];
    char **jobs, **names;
    size_t njobs, n;
    long count = 0;
    int fd;

    if (!store || check_ids (cluster, NULL, NULL) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (fmt_path (rel, sizeof (rel), "%s/" TR_STORE_REFUSED, cluster) < 0)
        return -1;
    if ((fd = tr_store_open_below (store->rootfd, rel)) < 0)
        return errno == ENOENT ? 0 : -1;
    if (list_names (dup (fd), LIST_DIRS, &jobs, &njobs) < 0) {
        close_keep_errno (fd);
        return -1;
    }
    for (size_t i = 0; i < njobs; i++) {
        int jfd = tr_store_open_below (fd, jobs[i]);
        if (jfd < 0 || list_names (jfd, LIST_RECORDS, &names, &n) < 0)
            continue; /* gone or unreadable meanwhile: not counted */
        count += (long)n;
        tr_store_free_names (names, n);
    }
    tr_store_free_names (jobs, njobs);
    close (fd);
    return count;
}

int tr_store_job_has_other_uid (tr_store_t *store,
                                const char *cluster,
                                const char *job_id,
                                uid_t uid,
                                tr_error_t *error)
{
    char rel[PATH_MAX];
    char **names;
    size_t n;
    int fd;
    int found = 0;

    if (!store || !job_id) {
        errno = EINVAL;
        return tr_errprintf (error, "store: invalid argument");
    }
    if (check_ids (cluster, job_id, error) < 0)
        return -1;
    if (job_relpath (rel, sizeof (rel), cluster, job_id) < 0)
        return tr_errprintf (error, "job %s: %s", job_id, strerror (errno));
    if ((fd = tr_store_open_below (store->rootfd, rel)) < 0) {
        if (errno == ENOENT)
            return 0;
        return tr_errprintf (error, "open %s/%s: %s", store->root, rel,
                             strerror (errno));
    }
    if (list_names (fd, LIST_RECORDS, &names, &n) < 0)
        return tr_errprintf (error, "list %s/%s: %s", store->root, rel,
                             strerror (errno));
    if ((fd = tr_store_open_below (store->rootfd, rel)) < 0) {
        tr_store_free_names (names, n);
        return tr_errprintf (error, "open %s/%s: %s", store->root, rel,
                             strerror (errno));
    }
    for (size_t i = 0; i < n && !found; i++) {
        long long u = -1;
        int rc = place_uid (fd, names[i], &u);
        if (rc == 0 && u != (long long)uid)
            found = 1;
    }
    tr_store_free_names (names, n);
    close (fd);
    return found;
}

/* --- Live summaries -------------------------------------------------- */

static int live_dir (tr_store_t *store,
                     const char *cluster,
                     const char *node,
                     char *rel,
                     size_t size,
                     tr_error_t *error)
{
    if (!store || !cluster || !node || !tr_record_id_is_safe (cluster)
        || !tr_record_id_is_safe (node)) {
        errno = EINVAL;
        return tr_errprintf (error, "live summary: cluster or node name not "
                                    "safe as a path component");
    }
    if (!store->writable) {
        errno = EBADF;
        return tr_errprintf (error, "store %s: opened read-only", store->root);
    }
    if (fmt_path (rel, size, "%s/live/%s", cluster, node) < 0)
        return tr_errprintf (error, "live summary: %s", strerror (errno));
    return 0;
}

int tr_store_put_live (tr_store_t *store,
                       const char *cluster,
                       const char *node,
                       uid_t uid,
                       const char *text,
                       tr_error_t *error)
{
    char rel[PATH_MAX], name[64];
    uid_t owner, reader;
    int dfd, rc;

    if (live_dir (store, cluster, node, rel, sizeof (rel), error) < 0)
        return -1;
    if (!text || uid == (uid_t)-1) {
        errno = EINVAL;
        return tr_errprintf (error, "live summary: invalid argument");
    }
    snprintf (name, sizeof (name), "%u.tsv", (unsigned)uid);
    if (owner_of (store, uid, &owner, &reader, error) < 0)
        return -1;
    dfd = tr_path_mkdirat_p (store->rootfd, rel, store->opts.dir_mode, error);
    if (dfd < 0)
        return -1;
    rc = tr_path_replace (dfd, name, text, strlen (text),
                          store->opts.file_mode, owner, store->opts.gid, error);
    if (rc == 0 && reader != (uid_t)-1)
        rc = grant_reader (store, dfd, name, store->opts.file_mode, reader,
                           error);
    close_keep_errno (dfd);
    return rc;
}

static bool live_name (const char *name, void *arg)
{
    size_t len = strlen (name);

    (void)arg;
    return len > 4 && !strcmp (name + len - 4, ".tsv");
}

int tr_store_prune_live (tr_store_t *store,
                         const char *cluster,
                         const char *node,
                         const uid_t *keep,
                         size_t n,
                         tr_error_t *error)
{
    char rel[PATH_MAX], name[64], **names = NULL;
    size_t nn = 0;
    int dfd, removed = 0;

    if (live_dir (store, cluster, node, rel, sizeof (rel), error) < 0)
        return -1;
    if ((dfd = tr_store_open_below (store->rootfd, rel)) < 0)
        return errno == ENOENT ? 0
                               : tr_errprintf (error, "%s/%s: %s", store->root,
                                               rel, strerror (errno));
    if (tr_store_list (dfd, live_name, NULL, DT_UNKNOWN, &names, &nn) < 0) {
        tr_errprintf (error, "%s/%s: %s", store->root, rel, strerror (errno));
        close_keep_errno (dfd);
        return -1;
    }
    for (size_t i = 0; i < nn; i++) {
        bool kept = false;

        for (size_t k = 0; k < n && !kept; k++) {
            snprintf (name, sizeof (name), "%u.tsv", (unsigned)keep[k]);
            kept = !strcmp (name, names[i]);
        }
        if (kept)
            continue;
        if (unlinkat (dfd, names[i], 0) == 0)
            removed++;
        else if (errno != ENOENT) {
            tr_errprintf (error, "%s/%s/%s: %s", store->root, rel, names[i],
                          strerror (errno));
            tr_store_free_names (names, nn);
            close_keep_errno (dfd);
            return -1;
        }
    }
    tr_store_free_names (names, nn);
    close (dfd);
    if (n == 0) {
        int livefd;

        if (fmt_path (rel, sizeof (rel), "%s/live", cluster) == 0
            && (livefd = tr_store_open_below (store->rootfd, rel)) >= 0) {
            (void)unlinkat (livefd, node, AT_REMOVEDIR);
            close (livefd);
        }
    }
    return removed;
}
