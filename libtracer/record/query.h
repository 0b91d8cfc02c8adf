/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_QUERY_H
#define TRACER_QUERY_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "libtracer/util/error.h"
#include "stepsum.h"
#include "when.h"

/* Selecting and listing step summaries the way sacct selects and lists
 * jobs: filters, a set of rows merged into steps, sorting, and the
 * --format columns in aligned, parsable or JSON form.
 */

#define TR_QUERY_MAX_LIST 256    /* names in one filter list */
#define TR_QUERY_MAX_TAGS 64

struct tr_query {
    const char *users[TR_QUERY_MAX_LIST];       /* names or numeric uids */
    size_t nusers;
    const char *accounts[TR_QUERY_MAX_LIST];
    size_t naccounts;
    const char *partitions[TR_QUERY_MAX_LIST];
    size_t npartitions;
    const char *states[TR_QUERY_MAX_LIST];      /* step states (states.h) */
    size_t nstates;
    const char *names[TR_QUERY_MAX_LIST];       /* job names or groups */
    size_t nnames;
    const char *tag_keys[TR_QUERY_MAX_TAGS];    /* --tag KEY=VALUE, all */
    const char *tag_values[TR_QUERY_MAX_TAGS];  /* must hold */
    size_t ntags;
    time_t from, to;            /* steps that ran in [from, to]; 0 = open */
    tr_when_jobsel_t *jobs;     /* NULL = any job */
    bool only_uid;              /* a user sees only their own steps */
    uid_t uid;
    const char *run_id;         /* --run: only this run's steps (run_id),
                                 * NULL = any */
};

/* Split a comma-separated list (modified in place) into q's list, with
 * what names the option in errors.  States are given as sacct spells
 * them or as record states (CD/COMPLETED, F/FAILED, CA/CANCELLED,
 * TO/TIMEOUT, OOM/OUT_OF_MEMORY, R/RUNNING, NF/NODE_FAIL, BF/BOOT_FAIL,
 * IN/INCOMPLETE, UN/UNKNOWN; any case) and stored as the step states
 * they select (tr_states_parse: "NF" → "NODE_FAIL", "OOM" → "oom"), so
 * that -s X selects the steps the listing shows as X.
 * -1 with EINVAL (an empty element, too many, a state not known).
 */
int tr_query_add_list (const char **list,
                       size_t *n,
                       char *arg,
                       const char *what,
                       tr_error_t *error);
int tr_query_add_states (struct tr_query *q, char *arg, tr_error_t *error);

/* --tag KEY=VALUE (arg modified in place). */
int tr_query_add_tag (struct tr_query *q, char *arg, tr_error_t *error);

/* Does a record's row pass the filters that hold for every node of a
 * step alike (user, account, partition, name, tags, jobs, run,
 * visibility)?
 */
bool tr_query_match_record (const struct tr_query *q,
                            const tr_stepsum_t *row);

/* Does a merged step pass the rest (state, time window)? */
bool tr_query_match_step (const struct tr_query *q, const tr_stepsum_t *row);

/* A growable set of rows sharing one string pool. */
typedef struct tr_rowset {
    tr_stepsum_t *rows;
    size_t n, alloc;
    tr_strpool_t *pool;
} tr_rowset_t;

tr_rowset_t *tr_rowset_create (void);
void tr_rowset_destroy (tr_rowset_t *set);
int tr_rowset_add (tr_rowset_t *set, const tr_stepsum_t *row);

/* Merge the rows of each step (same cluster, job and step, several
 * nodes) into one row, nodes in natural order; a second row of the
 * same node (the same record read twice) is dropped.  Then drop the
 * steps q rejects (tr_query_match_step; q may be NULL).  -1 on ENOMEM.
 */
int tr_rowset_merge_steps (tr_rowset_t *set, const struct tr_query *q);

/* Sort by a list of fields ("-" before a name for descending), stable.
 * spec is like "end,-elapsed".  -1 with EINVAL for an unknown field.
 */
int tr_rowset_sort (tr_rowset_t *set, const char *spec, tr_error_t *error);

/* The listing's order when none is asked for: by start (tr_rowset_sort
 * "start"), but the tasks of an array (and the components of a
 * heterogeneous job) together, where the first of them started, in id
 * order (tr_stepsum_cmp_id: 5_1, 5_2, ..., 5_9, 5_10).  -1 on ENOMEM
 * (the set is left sorted by start).
 */
int tr_rowset_sort_default (tr_rowset_t *set);

/* sacct's layout: a row for each job (tr_stepsum_job_add) above the
 * rows of its steps, in Slurm's step order (batch, extern, 0, 1, ...);
 * jobs in the order of their first step in the set as sorted.  With
 * only_jobs (sacct -X), the job rows alone.  -1 on ENOMEM (the set is
 * left as it was).
 */
int tr_rowset_add_jobs (tr_rowset_t *set, bool only_jobs);

/* Output columns. */
#define TR_QUERY_MAX_COLUMNS 64

/* A column that is not a row field (e.g. the diagnosis), filled by the
 * caller.
 */
typedef const char *(*tr_query_extra_f) (const tr_stepsum_t *row,
                                         void *arg);

struct tr_query_column {
    const tr_field_t *field;    /* NULL for the extra column */
    const char *title;
    int width;                  /* < 0: left-justified */
};

struct tr_query_format {
    struct tr_query_column cols[TR_QUERY_MAX_COLUMNS];
    size_t ncols;
    const char *extra_name;     /* e.g. "diagnosis", or NULL */
    int extra_width;
    tr_query_extra_f extra;
    void *extra_arg;
    char units;                 /* --units: K, M, G, T, P or 0 */
    bool noconvert;             /* --noconvert: whole bytes */
};

/* Parse a --format list: FIELD[%WIDTH],...; names as in
 * tr_stepsum_fields (any case) or fmt->extra_name.  A negative width
 * left-justifies, as in sacct.  -1 with EINVAL naming the bad item.
 */
int tr_query_format_parse (struct tr_query_format *fmt,
                           const char *spec,
                           tr_error_t *error);

/* Print the rows: aligned columns (values longer than the width are
 * cut with '+' at the end, as sacct does), or with parsable every value
 * whole and '|' between them (sacct --parsable2).  A header line (and
 * with aligned output a line of dashes) unless noheader.
 */
int tr_query_print (FILE *out,
                    const tr_rowset_t *set,
                    const struct tr_query_format *fmt,
                    bool parsable,
                    bool noheader);

/* --helpformat: every field with its description. */
void tr_query_print_fields (FILE *out, const struct tr_query_format *fmt);

#endif /* !TRACER_QUERY_H */
