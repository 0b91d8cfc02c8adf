/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_INDEX_H
#define TRACER_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "libtracer/util/error.h"
#include "stepsum.h"
#include "store.h"

/* The summary index: step summaries (tr_stepsum_t rows) of the store's
 * records, kept beside them so that a query over a million records reads
 * a few hundred megabytes of flat text instead of opening, parsing and
 * verifying a million JSON files.  It lives in the store, per day:
 *
 *   <cluster>/index/<YYYY-MM-DD>/seg-<ns>-<host>-<pid>-<n>.tsv
 *
 * and is maintained without locks, like the store: many writers on many
 * nodes of NFS or Lustre, where only rename and O_EXCL create are safe.
 *
 * Segments.  A segment is an immutable file, written to a temporary name
 * (".seg-...tmp", which readers skip), fsync'ed and renamed into place.
 * Its name is unique per writer (host, pid, time in ns, counter) and
 * sorts by the time it was written.  Its lines:
 *
 *   #tracer-stepsum 4<TAB>...     the header (tr_stepsum_tsv_header)
 *   <row>                         one per record (tr_stepsum_to_tsv); the
 *                                 row's path is the record's path
 *                                 relative to the store root
 *   #bad<TAB><path><TAB><reason>  a record that failed to load (corrupt,
 *                                 invalid, bad signature): covered, so it
 *                                 is not retried by every scan
 *   #file<TAB><path><TAB><dev><TAB><ino><TAB><size><TAB><mtime ns><TAB><ctime ns>
 *                                 the identity of the record file the next
 *                                 row or #bad was made from (stat'ed before
 *                                 it was read; none when it changed
 *                                 meanwhile)
 *   #marker<TAB><name>            a per-job or hashed day marker (store.h)
 *                                 whose job's records of the day are in
 *                                 this segment or an older one
 *   #mtime<TAB><ns><TAB><i><TAB><n>  a claim: the day directory had this
 *                                 mtime (ns since the epoch) when the
 *                                 writer stat'ed it, before it listed the
 *                                 markers, and every marker then present
 *                                 in shard i of n (0 0: all) was covered
 *                                 by the day's segments once this one was
 *                                 written
 *   #end<TAB><rows><TAB><bad><TAB><markers><TAB><claims>
 *                                 the last line: counts, so a segment
 *                                 cut short is detected and ignored
 *
 * Rows never start with '#' (their first field, the job id, is
 * path-safe).  The same record may be in several segments (two
 * writers loaded it at once): rows are deduplicated by path, and the
 * newest segment wins.
 *
 * Scan, per day of [from, to] that has a day directory:
 *  1. stat <cluster>/days/<day> (its mtime, M);
 *  2. read every segment of the day, newest first, passing each row not
 *     yet seen (and in the shard) to fn;
 *  3. if a claim of a segment has mtime M (for this shard, for all, or
 *     for every shard of some n) and no segment was ignored, the day is
 *     fresh: one stat and the segments, no listing of the markers;
 *  4. otherwise list the day's markers and load each record no segment
 *     covers through the caller's load function, passing its row to fn;
 *     with opts->write, write what was loaded as a new (delta) segment,
 *     with a claim for the mtime stat'ed before the listing;
 *  5. with opts->write, when the day has more than opts->max_segments
 *     segments, compact: write one segment with the union (deduplicated,
 *     keeping the claims of the newest mtime), then unlink the segments
 *     merged (and temporaries that writers left over an hour ago).  A reader that finds a segment gone (ENOENT) lists the
 *     directory again and reads the segments it has not read yet (the
 *     merged one among them; the rows it passed already are not passed
 *     again), at most 5 times, after which it loads the day's records.
 *
 * Why a claim can be trusted: every new record creates a marker (store.h)
 * and so changes the day directory's mtime.  A marker created in the same
 * timestamp tick as the writer's stat would leave the mtime unchanged
 * (git's "racily clean" problem), so the writer first creates its
 * temporary file, takes the server's time from it, and writes a claim
 * only when the day's mtime is at least 2 seconds older than that.
 * Claims are never written by a scan that skipped a record it could not
 * read.  On NFS, attribute caching delays what a client sees of a day
 * directory by up to the mount's acdirmax (60 s by default), as it does
 * for listings.  Removing records (expiry) must remove their days' index
 * directories too.
 *
 * A record replaced (rename) or rewritten in place creates no marker, so
 * its day stays fresh; but its file's inode or change time changes, and
 * no user can set a change time.  So every row a scan passes on has its
 * file stat'ed (one fstatat, no read) and compared with its #file line:
 * a row without one, or whose file differs, is not passed on (nor any
 * older segment's row of that path: stats->rows_stale); the record is
 * loaded and verified again, and a writer indexes what it is now; so is
 * a #bad record whose file changed (repaired).  A
 * loaded record whose identity does not name its path (tr_store_in_place)
 * is bad.  Every bad record of the scan's shard, loaded now or known from
 * a segment, is passed to opts->bad.
 *
 * Trust and privacy.  Segments hold every user's summaries: they are
 * written with opts->file_mode (0640 by default) and group opts->gid (the
 * administrators' group), and only by callers the front-end allows to
 * write (root, administrators).  A reader uses a segment only if it is a
 * regular file (opened O_NOFOLLOW), owned by root or by the caller's
 * effective uid, and not writable by group or others; otherwise it
 * ignores the segment (stats->segments_ignored) and loads the day's
 * records itself.  A caller who cannot read the index (EACCES) loads the
 * records too, and the load function's EACCES for a record (another
 * user's) skips it silently (stats->skipped).
 *
 * Shards.  With opts->shard_n > 0, only jobs whose tr_store_job_hash ()
 * % shard_n == shard_i are passed to fn and loaded, so n scans (a job
 * array) split a store exactly; a shard's claims make that shard fresh.
 */

/* What a scan may do.  NULL options: read only, every job. */
struct tr_index_opts {
    bool write;            /* write delta segments and compact */
    mode_t file_mode;      /* segments; 0: 0640 */
    mode_t dir_mode;       /* index directories created; 0: 0755 */
    gid_t gid;             /* segments' group; (gid_t)-1: leave */
    unsigned shard_i;      /* this shard, 0 <= shard_i < shard_n */
    unsigned shard_n;      /* shards; 0: all jobs */
    unsigned max_segments; /* compact past this many per day; 0: 8 */
    /* Called with each bad record of the scan's shard (relpath, reason),
     * loaded now (loaded: true) or known from a segment; NULL: not told.
     */
    void (*bad) (const char *relpath,
                 const char *reason,
                 bool loaded,
                 void *arg);
    void *bad_arg;
};

/* What a scan did; zeroed by tr_index_scan first. */
struct tr_index_stats {
    size_t days;       /* day directories in the window */
    size_t days_fresh; /* answered from segments alone */
    size_t segments_read;
    size_t segments_ignored; /* untrusted, unreadable or malformed */
    size_t rows_indexed;     /* rows from segments passed to fn */
    size_t records_loaded;   /* rows loaded from records, passed to fn */
    size_t bad;              /* bad records met (segments or loads) */
    size_t skipped;          /* records the caller may not read */
    size_t segments_written; /* delta and merged segments */
    size_t compactions;
    size_t retries;      /* listings repeated after a vanished one */
    size_t write_errors; /* segments that could not be written */
    size_t rows_stale;   /* rows whose record file changed: reloaded */
};

/* Load and verify the record at abspath (relpath: relative to the store
 * root) into row, which the scan has initialised (tr_stepsum_init) and
 * whose path it sets to relpath afterwards; strings must come from the
 * scan's pool (tr_stepsum_from_record does that).  Return 0 with row
 * filled; 1 for a bad record (unreadable as JSON, invalid, signature
 * bad), with row->reason saying why (a literal or from the pool): it is
 * indexed as bad and not loaded again; or -1 with errno: EACCES or EPERM
 * (another user's record: skipped), ENOENT (gone: skipped), anything
 * else stops the scan.  Policy that differs between readers (whether
 * unsigned records are shown) belongs in row->sig and the caller's
 * filter, not in "bad": the index is shared by every reader.
 */
typedef int (*tr_index_load_f) (const char *abspath,
                                const char *relpath,
                                tr_stepsum_t *row,
                                void *arg);

/* Called with each row; a non-zero return stops the scan.  The row is
 * the scan's: copy what must outlive the call (its strings are in the
 * pool and live as long as it).
 */
typedef int (*tr_index_row_f) (const tr_stepsum_t *row, void *arg);

/* Pass fn the summary of every record of cluster whose day (the UTC day
 * of its end, or of its start while it has none) lies in [from, to],
 * once each, day by day: from the index where it is fresh, else loaded
 * through load (and, with opts->write, indexed).  Strings of the rows
 * are interned in pool.  stats, when not NULL, is zeroed and filled.
 * Returns the number of rows passed to fn, or fn's non-zero return
 * (which stopped the scan), or -1 with errno and error: EINVAL (a bad
 * argument, from > to, shard_i >= shard_n, an unsafe cluster), ENOMEM,
 * an error listing the store, or load's error.  Failing to write a
 * segment is not an error (stats->write_errors): the index is a cache.
 */
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
                   tr_error_t *error);

#endif /* !TRACER_INDEX_H */
