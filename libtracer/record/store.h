/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_STORE_H
#define TRACER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/util/error.h"

/* The record store: a directory tree on shared storage (or the node-local
 * spool, which uses the same layout).  Layout, relative to the root:
 *
 *   <cluster>/jobs/<bucket>/<job_id>/<step_id>.<node>.json
 *   <cluster>/days/<YYYY-MM-DD>/<job_id>@<step_id>@<node>  (empty markers)
 *   <cluster>/index/<YYYY-MM-DD>/...          (summary index, index.h)
 *   <cluster>/nodes/<node>.json   (tracerd's drop counters, see below)
 *
 * <bucket> is 3 hex digits of a hash of the job id, so lookup by job id
 * is O(1) and no directory grows past a few thousand entries.  The day
 * markers, one per record and keyed by the record's end time (UTC), make
 * a time-window scan proportional to the window; because every new
 * record creates a marker, a day directory's mtime changes whenever a
 * record lands on that day, which is what lets the summary index tell
 * with one stat that a day is unchanged.  '@' is not path-safe, so it
 * cannot occur in an id and separates the parts safely.  A marker name
 * that would exceed NAME_MAX is "<job_id>@<16 hex digits>" (a hash of the
 * record's file name) instead, and stores written before per-record
 * markers have one marker per job, named "<job_id>": readers take the
 * job id from the name up to the first '@' and, for these two forms,
 * list the job's directory.
 * Writers never append to shared files and never lock: each record is
 * one file written to a temporary name, fsync'ed and renamed into place,
 * so concurrent writers from many nodes on NFS or Lustre are safe, and a
 * re-delivered record replaces itself (its marker exists already).
 * Nothing is opened through a symlink.
 */
typedef struct tr_store tr_store_t;

/* How the job's user (identity.uid) reads their records. */
enum tr_store_access {
    /* With owner_is_job: the record is chowned to the job's user, with
     * no write permission (an owner may chmod and rewrite it: readers
     * notice, tr_store_in_place and the index's file identities).
     */
    TR_STORE_ACCESS_OWNER = 0,
    /* The record stays its writer's (owner_is_job) or owner_uid's, and a
     * POSIX ACL entry (user:<uid>:r) lets the job's user read it: nobody
     * but the writer can alter it.  Where the store does not support
     * ACLs (EOPNOTSUPP: NFSv4, some FUSE), as TR_STORE_ACCESS_OWNER.
     */
    TR_STORE_ACCESS_ACL = 1,
    /* Nothing for the job's user: owner and group only. */
    TR_STORE_ACCESS_NONE = 2,
};

struct tr_store_opts {
    mode_t file_mode;     /* record file mode, e.g. 0640 */
    mode_t dir_mode;      /* directories created, e.g. 0755 */
    bool owner_is_job;    /* the job's user (identity.uid) reads records */
    uid_t owner_uid;      /* else this owner; (uid_t)-1 = leave as is */
    gid_t gid;            /* group; (gid_t)-1 = leave as is */
    bool create;          /* create the root if missing */
    enum tr_store_access job_access; /* see above; 0: OWNER */
    /* Never replace a record of another uid (identity.uid): a put whose
     * place holds one writes the new record aside (tr_store_put).
     */
    bool keep_others;
};

/* The options for writing the shared store as the configuration says
 * (store.file_mode, store.dir_mode, store.owner, store.group,
 * store.job_access), with create and keep_others set.
 */
struct tr_store_opts tr_store_opts_from_conf (const tr_conf_t *conf);

/* Whether root is a store a daemon may write: an existing directory (a
 * missing one is most often a shared file system not mounted, which
 * the daemon would otherwise fill on the local disk), not writable by
 * every user (who could then create, move or remove what is at its
 * top).  Returns 0, or -1 with errno (ENOENT, ENOTDIR, EPERM) and error
 * text that says what to do.
 */
int tr_store_check_root (const char *root, tr_error_t *error);

/* Open (and, with opts->create, create) a store at root.  opts may be
 * NULL for read-only use.  Returns NULL with errno and error text.
 * The root itself may be reached through a symlink (it is the
 * administrator's choice); nothing below it is.  Missing parents of the
 * root are created too, with opts->dir_mode.
 */
tr_store_t *tr_store_open (const char *root,
                           const struct tr_store_opts *opts,
                           tr_error_t *error);
void tr_store_destroy (tr_store_t *store);

/* The root path.  Borrowed. */
const char *tr_store_root (tr_store_t *store);

/* The root directory's descriptor, for *at() lookups below it (with
 * O_NOFOLLOW, as the store itself does).  Borrowed: valid until
 * tr_store_destroy.  -1 with errno = EINVAL for a NULL store.
 */
int tr_store_rootfd (tr_store_t *store);

/* The hash that picks a job's bucket (bucket = hash & 0xfff): FNV-1a,
 * 32 bit, of the job id.  Fixed forever, because it is in the layout;
 * also what splits a store into shards (hash % n), so that with n a
 * divisor of 4096 a shard is a set of whole buckets.
 */
uint32_t tr_store_job_hash (const char *job_id);

/* Format the path of the record (cluster, job_id, step_id, node),
 * relative to the root, into buf.  Returns 0, or -1 with errno = EINVAL
 * (an id not path-safe) or ENAMETOOLONG (buf too small).
 */
int tr_store_record_path (char *buf,
                          size_t size,
                          const char *cluster,
                          const char *job_id,
                          const char *step_id,
                          const char *node);

/* The record's path relative to the root, computed from its identity
 * (cluster, job_id, step_id, node), which must be path-safe.  Caller
 * must free() the result.  NULL with errno = EINVAL if unsafe.
 */
char *tr_store_relpath (json_t *rec);

/* Does rec's identity (cluster, job_id, step_id, node) put it at
 * relpath (relative to the root)?  The signature covers the record, not
 * the place it lies in: a validly signed record copied, moved or
 * rewritten over another's place is not the record of that place, and
 * every reader must check this.  When it is not, and why is not NULL,
 * why says what the record claims to be ("the record is job J's (step
 * S, node N, cluster C), not in its place in the store").
 */
bool tr_store_in_place (json_t *rec,
                        const char *relpath,
                        char *why,
                        size_t size);

/* Write a record (serialized with tr_record_dumps) atomically to its
 * place, then its day marker (created once: a re-delivery leaves it).  Returns 0, or -1 with errno preserved
 * (ENOSPC, EROFS, EACCES, ...) and the reason in error; on failure no
 * partial file is left in place.
 * EINVAL: an identity member is not path-safe, the time or (with
 * owner_is_job) identity.uid is missing or invalid; these are checked
 * before anything is created.  EBADF: the store was opened without opts.
 * The day marker is written after the record; if that fails, -1 is
 * returned with the record in place, and a retry of the whole put
 * replaces the record (no duplicate) and completes the marker.
 */
int tr_store_put (tr_store_t *store, json_t *rec, tr_error_t *error);

/* With opts->keep_others, a put whose place holds a record of another
 * uid (a job id reused, or a record made to collide with another user's)
 * leaves that record alone and writes the new one aside, where no
 * listing counts it and an administrator finds it:
 *
 *   <cluster>/refused/<job_id>/<step_id>.<node>.uid<uid>.json
 *
 * and returns 1 (the record is kept, not lost, and no retry is due).
 */
#define TR_STORE_REFUSED "refused"

/* Does the store hold a record of job_id in cluster whose identity.uid
 * is not uid (records that cannot be read or parsed count as another
 * uid's)?  1 yes, 0 no (or no records), -1 with errno and error.
 */
int tr_store_job_has_other_uid (tr_store_t *store,
                                const char *cluster,
                                const char *job_id,
                                uid_t uid,
                                tr_error_t *error);

/* Call fn with the absolute path of every record of job_id in cluster
 * (any step and node).  Returns the number of records, or -1 with errno
 * (ENOENT if the job has no records).  A non-zero return from fn stops
 * the walk and is returned.
 * Records are visited in file-name order.  Only regular files named
 * "*.json" count: names starting with '.' (temporaries being written),
 * symlinks and other file types are skipped.  ELOOP or ENOTDIR when a
 * directory on the way is a symlink; EINVAL for an unsafe cluster or id.
 */
typedef int (*tr_store_each_f) (const char *path, void *arg);
int tr_store_foreach_job (tr_store_t *store,
                          const char *cluster,
                          const char *job_id,
                          tr_store_each_f fn,
                          void *arg,
                          tr_error_t *error);

/* Call fn for every record of jobs with a day marker in [from, to]
 * (UTC days, inclusive).  Returns the number of records or -1.
 * Jobs are visited day by day, in job-id (string) order within a day,
 * each job once even when it has several markers (one per record, on one
 * or several days, and per-job markers of older stores); each job's
 * records as for tr_store_foreach_job (all of them, including steps that
 * ended outside the window).  Markers of jobs without records are
 * skipped.  EINVAL if from > to.
 */
int tr_store_foreach_window (tr_store_t *store,
                             const char *cluster,
                             time_t from,
                             time_t to,
                             tr_store_each_f fn,
                             void *arg,
                             tr_error_t *error);

/* Call fn for every record in the store (used to drain the spool).
 * Temporary files are skipped.  Returns the number of records or -1.
 * The walk is in name order at every level and skips anything that is
 * not a directory (or record file) where the layout expects one.
 */
int tr_store_foreach_all (tr_store_t *store,
                          tr_store_each_f fn,
                          void *arg,
                          tr_error_t *error);

/* Clean a spool after forwarding: remove the day markers of jobs that
 * have no record left (no job directory, or no "*.json" in it), then
 * every day, job and bucket directory left empty (<cluster>, its jobs/
 * and days/ stay).  Only empty directories are removed (rmdir) and only
 * marker files are unlinked; nothing is reached through a symlink.  A
 * directory whose mtime is less than grace seconds old is left for a
 * later round (0: no grace), but for a day directory this pass has just
 * emptied of its markers.  A concurrent tr_store_put is safe: a
 * directory it is filling is not empty, one it has just made is within
 * the grace, and one removed between the put's opening and its use of
 * it is made again, new (the put retries on ENOENT), so a put loses
 * each directory of its path at most once to a prune.  A marker may so
 * be removed just as a record of its job is re-put: in a spool nothing
 * reads markers (the forwarder walks jobs/), so this is meant for a
 * spool, not for the shared store.  Files moved aside ("*.bad") keep
 * their job directory.  Returns the number of entries removed, or -1
 * with errno (EBADF: opened read-only).
 */
int tr_store_prune (tr_store_t *store, unsigned int grace,
                    tr_error_t *error);

/* The grace tracerd gives a spool's directories (seconds). */
#define TR_STORE_PRUNE_GRACE 60

/* A forwarder that has just taken the last record out of a job's
 * directory removes it now, and its bucket if that is left empty (no
 * grace: a put that loses it makes it again).  Returns the number of
 * directories removed (0: not empty, or absent), or -1 with errno.
 */
int tr_store_prune_job (tr_store_t *store,
                        const char *cluster,
                        const char *job_id,
                        tr_error_t *error);

/* Per-node counters that tracerd keeps in the store, one small JSON
 * object per node at <cluster>/nodes/<node>.json (mode 0644: counts
 * only, no job data), replaced atomically.  See tracerd(8) for the
 * members.  EINVAL for an unsafe cluster or node name.
 */
int tr_store_put_node_status (tr_store_t *store,
                              const char *cluster,
                              const char *node,
                              json_t *status,
                              tr_error_t *error);

/* Every node's status object of cluster, in node-name order, each with
 * "node" set from its file name; unreadable files are skipped.  An empty
 * array where there is none.  NULL with errno on failure.
 */
json_t *tr_store_node_status (tr_store_t *store,
                              const char *cluster,
                              tr_error_t *error);

/* How many records of cluster were set aside under
 * <cluster>/refused/ (a put that would have replaced another uid's
 * record): 0 or more, or -1 with errno where that directory cannot be
 * read (EACCES for a user who is no admin).
 */
long tr_store_refused_count (tr_store_t *store, const char *cluster);

/* Live summaries (livesum.h): put the text of uid's running steps on
 * node at <cluster>/live/<node>/<uid>.tsv, replaced atomically without
 * fsync (losing one costs only freshness), owned and readable as a
 * record of uid's is.  -1 with errno and error.
 */
int tr_store_put_live (tr_store_t *store,
                       const char *cluster,
                       const char *node,
                       uid_t uid,
                       const char *text,
                       tr_error_t *error);

/* Remove the live summaries of node whose uid is not in keep[0..n):
 * the users with no step running there any more.  A node with none
 * left loses its directory.  Returns how many were removed, or -1 with
 * errno and error.
 */
int tr_store_prune_live (tr_store_t *store,
                         const char *cluster,
                         const char *node,
                         const uid_t *keep,
                         size_t n,
                         tr_error_t *error);

/* Directory helpers of the store's layout, shared with the summary
 * index (index.c), which lives in the same tree under the same rules.
 */

/* Open relpath below dirfd, one component at a time, never following a
 * symlink; ".." is refused (EINVAL).  ELOOP or ENOTDIR means something
 * other than a directory sits where the layout expects one.
 */
int tr_store_open_below (int dirfd, const char *relpath);

/* The UTC day ("YYYY-MM-DD") of a time in seconds, into buf (at least
 * 11 bytes).  -1 with EOVERFLOW.
 */
int tr_store_format_day (time_t t, char *buf, size_t size);

/* Is s a day directory's name, "YYYY-MM-DD" in digits? */
bool tr_store_is_day_name (const char *s);

/* List the entries of directory fd (not consumed) whose name want
 * accepts and whose type is type (DT_DIR or DT_REG, from d_type or,
 * where that is DT_UNKNOWN, fstatat without following; DT_UNKNOWN: any
 * type, not checked), sorted by name.  The caller frees the names with
 * tr_store_free_names.  -1 with errno (ENOMEM, readdir's).
 */
typedef bool (*tr_store_name_f) (const char *name, void *arg);
int tr_store_list (int fd,
                   tr_store_name_f want,
                   void *arg,
                   unsigned char type,
                   char ***namesp,
                   size_t *np);

/* Free a listing; errno is kept. */
void tr_store_free_names (char **names, size_t n);

#endif /* !TRACER_STORE_H */
