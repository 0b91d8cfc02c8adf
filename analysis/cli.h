/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What the parts of tracer-report share: the parsed command line, the
 * configuration, and the exit status accumulated while reading records.
 */
#ifndef TRACER_REPORT_CLI_H
#define TRACER_REPORT_CLI_H

#include <stdbool.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/record/query.h"
#include "libtracer/record/sign.h"

enum {
    EXIT_OK = 0,
    EXIT_RUNTIME = 1,
    EXIT_USAGE = 2,
    EXIT_TAMPERED = 3,
    EXIT_UNSIGNED = 4,
    EXIT_FORGED = 5,
};

enum rep_mode {
    MODE_VIEW,          /* -j or record files: the job view */
    MODE_LIST,          /* sacct-style listing */
    MODE_SUMMARY,       /* --summary */
    MODE_RECOMMEND,     /* --recommend */
    MODE_REGRESS,       /* --regressions */
    MODE_WASTE,         /* --waste */
    MODE_FAILURES,      /* --failures */
    MODE_ROWS,          /* --rows: the selected rows, for --merge */
    MODE_REINDEX,       /* --reindex */
    MODE_LIVE,          /* --live */
    MODE_DIGEST,        /* --digest */
    MODE_EXPORT,        /* --export */
    MODE_RUNS,          /* --runs */
    MODE_RUN,           /* --run=ID: the run view */
    MODE_COMPARE,       /* --compare */
};

struct rep {
    tr_conf_t *conf;
    enum rep_mode mode;
    bool admin;             /* may see every user's records */
    bool all_users;         /* -a */
    bool allow_unsigned;
    bool json;
    bool parsable;
    bool noheader;
    bool allocations;           /* -X: job rows only */
    bool noconvert;
    char units;                 /* --units: K, M, G, T, P or 0 */
    bool no_index;
    bool live_rows;          /* --run, --runs: the running steps too */
    bool list_given;        /* -o, -P, -n or --list asked for a listing */
    const char *cluster;
    const char *store_path;
    const char *jobs_arg;
    const char *format;
    const char *sort;
    const char *by;         /* --waste --by, --summary=KEY */
    const char *output;     /* --recommend --output */
    bool html;              /* --html: the job view as an HTML file */
    const char *html_out;   /* its path (-o with --html), NULL: stdout */
    const char *run_id;     /* --run=ID */
    bool digest_print;      /* --digest=print: print, do not send */
    const char *export_format;  /* --export: opendc or opendc-csv */
    const char *export_dir;     /* its directory (-o) */
    bool since_last;            /* --since-last: add to a parquet export */
    unsigned last_n;
    unsigned shard_i, shard_n;
    bool from_given, to_given;
    struct tr_query q;
    char **merge_files;
    int nmerge;
    char **files;           /* record files on the command line */
    int nfiles;
    /* job view */
    json_t *recs;
    json_t *notes;
    int worst;              /* exit status from verification */
    int errors;
    unsigned long rejected; /* records refused while listing */
    unsigned long old_creds; /* records whose credential had expired or
                              * been decoded before */
    bool quiet_bad;          /* bad records counted, not named (the job
                              * view names its own, once) */
    char *compare_a;        /* --compare=A,B: the two run ids */
    char *compare_b;
};

/* The program's name in messages: "tracer-report" unless the program
 * sharing this code sets another (verify.c).
 */
extern const char *rep_prog;

/* One line on stderr per node of cluster whose tracerd counted records
 * lost or spool files moved aside, from the store's node status files
 * (drops.c).  Says nothing where there are none or they cannot be read.
 */
struct tr_store;
void rep_node_drops (struct tr_store *store, const char *cluster);

/* "PROG: " and the message on stderr; returns what fprintf does
 * (verify.c).
 */
int rep_err (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Nothing found: say what on stderr ("PROG: " and the message) and
 * return the exit status, the one rule of tracer-report(1) EXIT STATUS:
 * a job or run named on the command line (-j, --run, --compare) that has
 * no records is an error, EXIT_RUNTIME (as squeue -j and scontrol show
 * job treat an unknown job); a period and filters that select nothing
 * (a listing, --failures, --runs, --recommend, --waste, --export over a
 * period) are an empty answer, EXIT_OK (as sacct's empty listing).
 */
enum rep_none_kind {
    REP_NONE_NAMED,    /* -j JOB, --run=ID, --compare=A,B */
    REP_NONE_SELECTED, /* a period and filters */
};

int rep_none (enum rep_none_kind kind, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Is every job id in the comma-separated list path-safe (the store's
 * rule; empty ones too with allow_empty)?  Says which is not on stderr
 * (verify.c).
 */
bool rep_ids_safe (const char *list, bool allow_empty);

/* Verify the signature of rec, read from path (verify.c).  0: it may be
 * used, *sig says whether it is signed and note how; unsigned records
 * are refused unless keep_unsigned.  1: refused (tampered, forged,
 * unsigned), said on stderr with r->worst raised, why in note.  -1: it
 * cannot be checked (munged unreachable), said on stderr.
 */
int rep_verify (struct rep *r,
                json_t *rec,
                const char *path,
                bool keep_unsigned,
                char *note,
                size_t size,
                const char **sig);

/* Record verification (verify.c): load and verify path; returns the
 * record (new reference) when it may be shown, with a note on its
 * signature in note; else NULL, having said why on stderr and raised
 * r->worst or r->errors.
 */
json_t *rep_load_verified (struct rep *r,
                           const char *path,
                           char *note,
                           size_t size,
                           const char **sig);

/* The records of the jobs of r->jobs_arg (r->q.jobs when it parsed),
 * verified, into r->recs and r->notes (view.c).  EXIT_OK, or
 * EXIT_RUNTIME when the store cannot be opened; a job without records
 * is said on stderr and counted in r->errors.
 */
int rep_load_jobs (struct rep *r);

/* What to request next time for a step (view.c): the recommendation
 * group (recommend.h) from the runs of the step's group by the same user
 * in the last 30 days, this one included; a new reference, or NULL.
 * arg is a struct rep_history, whose rows are collected on the first
 * call; rep_history_free releases them.
 */
struct rep_history {
    struct rep *r;
    tr_rowset_t *set;
    bool tried;
};

struct tr_stepsum;
json_t *rep_advice (const struct tr_stepsum *step, void *arg);
void rep_history_free (struct rep_history *h);

/* The HTML report (html.h) of the records in r->recs, with next-time
 * advice from h, as a new string of *len bytes (view.c); NULL with
 * errno (EINVAL: not the records of one job).
 */
char *rep_html (struct rep *r, struct rep_history *h, size_t *len);

/* Write buf (len bytes, freed here) to -o FILE, replaced atomically,
 * or to standard output for none or "-"; an exit status.
 */
int rep_write_file (struct rep *r, char *buf, size_t len);

/* The job view of -j and of record files (view.c). */
int rep_view (struct rep *r);

/* Rows for listings and analyses (rows.c): the records q selects, from
 * the store through the index or from --merge files; with merge, the
 * nodes of each step merged into one row and q's step filters applied.
 */
int rep_collect (struct rep *r,
                 const struct tr_query *q,
                 bool merge,
                 tr_rowset_t *set);

/* Listing, --rows and --reindex (rows.c). */
int rep_list (struct rep *r, tr_rowset_t *set);
int rep_rows (struct rep *r, tr_rowset_t *set);

/* The recommendation options the configuration and --last give, without
 * prices (analyze.c).
 */
struct tr_recommend_opts;
void rep_recommend_opts (struct rep *r, struct tr_recommend_opts *o);

/* The configured prices, as tr_waste and tr_recommend_groups take them;
 * *parts is the caller's to free (analyze.c).  -1 on ENOMEM.
 */
struct tr_cost;
struct tr_cost_part;
int rep_cost (struct rep *r, struct tr_cost *cost, struct tr_cost_part **parts);

/* --summary, --recommend, --regressions, --waste (analyze.c). */
int rep_analyze (struct rep *r, tr_rowset_t *set);

/* --runs (analyze.c): the pipeline runs of the rows. */
int rep_runs (struct rep *r, tr_rowset_t *set);

/* --run=ID (analyze.c): the run view of r->run_id. */
int rep_run (struct rep *r, tr_rowset_t *set);

/* The diagnosis codes of a row, for the listing column. */
const char *rep_diag_codes (const tr_stepsum_t *row, void *arg);

/* --digest (analyze.c): a digest per user of the rows in set, mailed
 * or printed.
 */
int rep_digest (struct rep *r, tr_rowset_t *set);

/* --export (export.c): the rows' records as simulator traces, or
 * (parquet) the rows themselves as a lake (libtracer/view/lake.h).
 */
int rep_export (struct rep *r, tr_rowset_t *set);

/* --live (live.c). */
int rep_live (struct rep *r);

/* --compare (compare.c): two runs side by side. */
int rep_compare (struct rep *r, tr_rowset_t *set);

/* Raise the exit status to code if that is more serious (verify.c). */
void rep_set_worst (struct rep *r, int code);

#endif /* !TRACER_REPORT_CLI_H */
