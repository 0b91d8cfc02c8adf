/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_LIVESUM_H
#define TRACER_LIVESUM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "stepsum.h"
#include "store.h"

/* Live summaries: the steps running now, in the shared store, so that
 * whoever reads the store (tracer-report --run on a login node) sees a
 * run in progress on every node without asking any daemon.
 *
 *     <root>/<cluster>/live/<node>/<uid>.tsv
 *
 * One file per node and user, rewritten by the node's tracerd every
 * store.live_interval seconds while that user has steps running there,
 * and removed once none is left: the store sees at most one write per
 * node and user per interval, however many steps run.  Its lines:
 *
 *     #tracer-live 1 TAB cluster TAB node TAB uid TAB written_ms TAB interval_s
 *     #tracer-stepsum 4 TAB field names      (tr_stepsum_tsv_header)
 *     one tr_stepsum_to_tsv row per running step of that user on that node
 *     #end TAB rows
 *
 * written_ms is when the figures were read (ms since the epoch).  The
 * file belongs to the store's writer and its user reads it as they read
 * their records (store.job_access).  It is not signed: it is a view of
 * running work and never stands in for a record.  A reader believes a
 * file only where its place, its first line and every row agree on the
 * cluster, node and uid, and only if no one but the writer (or that
 * user, on a store without ACLs) may have written it.
 */

#define TR_LIVESUM_MAGIC "#tracer-live 1"
/* The last line of a signed live summary: this, a tab, a MUNGE
 * credential over every byte before the line (tr_sign_text), a newline.
 */
#define TR_LIVESUM_SIG "#signature munge-sha256"

/* A whole file is at most this long; a longer one is refused. */
#define TR_LIVESUM_MAX_BYTES (8u << 20)

/* A live row is stale when its figures are older than this many
 * intervals (plus TR_LIVESUM_SLACK_S for the forwarding): its node's
 * tracerd, or its store writes, stopped.
 */
#define TR_LIVESUM_STALE_INTERVALS 3
#define TR_LIVESUM_SLACK_S 30.0

/* Files older than this are not read at all: left behind by a node
 * that died with steps running.
 */
#define TR_LIVESUM_IGNORE_S 86400.0

/* A running step's row from its live record (tr_step_live_record, or
 * any snapshot): tr_stepsum_from_record, with sig TR_STEPSUM_SIG_LIVE,
 * live_ms now_ms and the elapsed time up to now_ms where the record has
 * none.  0, or -1 with errno = ENOMEM.
 */
int tr_livesum_row (tr_stepsum_t *row,
                    json_t *rec,
                    double now_ms,
                    tr_strpool_t *pool);

/* The text of one live summary: the rows (all of cluster, node and uid)
 * as above.  Returns a malloc'ed string, or NULL with errno (ENOMEM;
 * EINVAL when a row is not of cluster, node and uid).
 */
char *tr_livesum_text (const tr_stepsum_t *const *rows,
                       size_t n,
                       const char *cluster,
                       const char *node,
                       uid_t uid,
                       double written_ms,
                       double interval_s);

/* The live summaries of a node's running steps: rows (reordered)
 * grouped by cluster, node and uid, each group's text made by
 * tr_livesum_text.  Rows without a known uid, or whose cluster or node
 * is not safe as a path component, are left out.  Returns the number of
 * files in *files (malloc'ed, strings copied; free with
 * tr_livesum_files_free), or -1 with errno = ENOMEM.
 */
struct tr_livesum_file {
    char *cluster;
    char *node;
    uid_t uid;
    char *text;
};
ssize_t tr_livesum_files (const tr_stepsum_t **rows,
                          size_t n,
                          double written_ms,
                          double interval_s,
                          struct tr_livesum_file **files);
void tr_livesum_files_free (struct tr_livesum_file *files, size_t n);

/* Sign a live summary's text in place: its signature line appended
 * (TR_LIVESUM_SIG).  Returns 0, or -1 with errno and error (the text
 * unchanged).
 */
int tr_livesum_sign (char **text, const char *munge_socket, tr_error_t *error);

/* Parse a live summary found at <cluster>/live/<node>/<uid>.tsv (text,
 * modified in place) and pass each row to fn, its sig
 * TR_STEPSUM_SIG_LIVE, live_ms the file's written_ms and live_stale
 * set as of now_ms.  The whole file or nothing: -1 with errno = EINVAL
 * (or ENOMEM) and error when any line is wrong or the file is cut
 * short, before fn sees a row.  fn returns 0, or -1 to stop (its errno
 * kept).
 */
typedef int (*tr_livesum_row_f) (const tr_stepsum_t *row, void *arg);
int tr_livesum_parse (char *text,
                      const char *cluster,
                      const char *node,
                      uid_t uid,
                      double now_ms,
                      tr_strpool_t *pool,
                      tr_livesum_row_f fn,
                      void *arg,
                      tr_error_t *error);

struct tr_livesum_stats {
    size_t files; /* read and believed */
    size_t rows;
    size_t bad; /* refused (named through bad) */
    size_t old; /* older than TR_LIVESUM_IGNORE_S, not read */
};

/* Read every live summary of cluster (NULL: every cluster) in store
 * that the caller may read, passing their rows to fn.  A file the
 * caller may not read is skipped silently (another user's); a file that
 * is not to be believed (a link, writable by others, owned by someone
 * other than the store's writer or its uid, wrong in any line) is
 * passed to bad (path relative to the store root, reason) and skipped.
 * writer is the store's writer (root, or store.owner).  -1 with errno
 * and error only when the store cannot be read at all; a store with no
 * live summaries is 0.
 * A file may end in a signature line (TR_LIVESUM_SIG, tr_livesum_sign):
 * it is believed only when the signature is a trusted signer's and
 * covers every byte before it.  An unsigned file is believed only when
 * its user cannot have written it: on a store without ACLs the user owns
 * their file, and could chmod and rewrite it.
 */
/* Who may sign a live summary (as for records: signing.*), and whether
 * an unsigned one that its user owns is believed (--allow-unsigned).
 * NULL: libmunge's default socket, root only, not believed.
 */
struct tr_livesum_trust {
    const char *munge_socket;
    const uid_t *signers; /* n_signers 0: root only */
    size_t n_signers;
    bool allow_unsigned;
};

typedef void (*tr_livesum_bad_f) (const char *path, const char *why, void *arg);
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
                     tr_error_t *error);

#endif /* !TRACER_LIVESUM_H */
