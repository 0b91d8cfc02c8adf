/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report: what job steps used, from tracer records, for users and
 * admins, the way sacct lists jobs.  -j shows jobs in full (view.c);
 * filters give a listing (rows.c); --summary, --recommend,
 * --regressions and --waste analyse many runs (analyze.c); --live shows
 * the steps running on this node (live.c).  This file parses the
 * command line and decides which.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/record/runid.h"
#include "libtracer/view/lake.h"
#include "libtracer/view/report.h"
#include "cli.h"

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: tracer-report [OPTIONS] -j JOBID[,JOBID...]\n"
             "       tracer-report [OPTIONS] RECORD-FILE...\n"
             "       tracer-report [FILTERS] [-o FIELDS] [-P] [-n] [--json]\n"
             "       tracer-report [FILTERS] --summary[=array|group|name] | "
             "--recommend |\n"
             "                     --regressions | --waste [--by=KEY]\n"
             "       tracer-report [FILTERS] --failures [-P] [--json]\n"
             "       tracer-report [FILTERS] --runs [-o FIELDS] [-P] [--json]\n"
             "       tracer-report [FILTERS] --run=ID "
             "[--json | --html [-o FILE]]\n"
             "       tracer-report [FILTERS] --compare=RUN1,RUN2 [-P] [--json]\n"
             "       tracer-report --live [-j JOBID[,JOBID...]]\n"
             "       tracer-report -j JOBID --html [-o FILE]\n"
             "       tracer-report --digest[=send|print] [FILTERS]\n"
             "       tracer-report --export=opendc|opendc-csv -o DIR "
             "[FILTERS]\n"
             "       tracer-report --run=ID --export=nextflow-trace -o DIR\n"
             "       tracer-report --export=parquet [--since-last] -o DIR "
             "[FILTERS]\n"
             "Show what job steps used, from tracer records.\n\n"
             "Selection (a listing without -j shows steps since midnight):\n"
             "  -j, --jobs=LIST       jobs: N, N_T, N_[1-5,7], N_*, N+C\n"
             "  -u, --user=LIST       users (names or uids)\n"
             "  -a, --allusers        every user's steps (admins; root's "
             "default)\n"
             "  -A, --account=LIST    accounts\n"
             "  -p, --partition=LIST  partitions\n"
             "  -s, --state=LIST      CD, F, CA, TO, OOM, R, NF (or long "
             "names)\n"
             "  -S, --starttime=TIME  steps running at or after TIME (sacct's "
             "forms,\n"
             "                        e.g. 2026-11-01, now-7days, 08:00)\n"
             "  -E, --endtime=TIME    steps running at or before TIME\n"
             "      --name=LIST       job names or step groups\n"
             "      --tag=KEY=VALUE   records with this tag (repeatable)\n"
             "      --run=ID          with --export, --compare or an "
             "analysis: only the\n"
             "                        steps of pipeline run ID (alone: the "
             "run view)\n"
             "Output:\n"
             "  -o, --format=LIST     fields, FIELD[%%WIDTH],... "
             "(--helpformat)\n"
             "  -e, --helpformat      list the fields and exit\n"
             "  -P, --parsable2       '|' between fields, no padding\n"
             "  -n, --noheader        no header line\n"
             "  -X, --allocations     job rows only, not their steps\n"
             "  -b, --brief           JobID, State and ExitCode only\n"
             "      --units=[KMGTP]   sizes in that unit\n"
             "      --noconvert       sizes in bytes\n"
             "      --sort=LIST       sort by fields, '-FIELD' descending\n"
             "  -l, --list            a listing even with -j\n"
             "      --json            JSON (see tracer-report(1))\n"
             "      --html            the job view as one HTML file with "
             "charts (-o FILE);\n"
             "                        with --run=ID the run view\n"
             "      --export=FORMAT   the steps as simulator traces in "
             "directory -o DIR:\n"
             "                        opendc (Parquet) or opendc-csv; "
             "nextflow-trace:\n"
             "                        --run=ID's tasks as Nextflow's "
             "DIR/trace.txt;\n"
             "                        parquet: the step summaries, a "
             "row per step and\n"
             "                        node, in DIR/day=YYYY-MM-DD/"
             "part-NNNN.parquet\n"
             "      --since-last      with --export=parquet: add only "
             "what DIR lacks\n"
             "                        (default -S: the day before the "
             "last export)\n"
             "Analyses over many runs:\n"
             "      --summary[=KEY]   per array job (default), step group or "
             "job name\n"
             "      --recommend       what to request next time, per step "
             "group\n"
             "      --output=FORM     table, sbatch, pbs, lsf, nextflow, "
             "snakemake (7, 8),\n"
             "                        snakemake8 or json\n"
             "      --last=N          the newest N runs of each group\n"
             "      --regressions     runs that drifted from their history\n"
             "      --waste           allocated against used, and cost\n"
             "      --failures        failed steps by cause, tool, group, "
             "node and user\n"
             "                        (a week unless -S), and nodes where "
             "a group fails\n"
             "      --by=KEY          user, account, partition, step, tool, "
             "group or\n"
             "                        pipeline;\n"
             "                        --regressions --by=run: pipeline "
             "runs\n"
             "      --runs            pipeline runs: jobs, failures, "
             "core-hours, cost\n"
             "                        (-o FIELDS: --helpformat --runs)\n"
             "      --run=ID          the run view: the run's processes, "
             "timeline and\n"
             "                        slowest tasks\n"
             "      --compare=A,B     two runs of a pipeline side by side, "
             "per process,\n"
             "                        changes flagged as --regressions does\n"
             "      --digest[=HOW]    mail each user a digest of the period "
             "(default\n"
             "                        -S now-7days); print: print them "
             "instead\n"
             "Scale:\n"
             "      --rows            print the selected summaries (for "
             "--merge)\n"
             "      --shard=I/N       only jobs in shard I of N (0-based)\n"
             "      --merge FILE...   read summaries from --rows files, not "
             "the store\n"
             "      --reindex         bring the summary index up to date "
             "(admins)\n"
             "      --no-index        read every record, not the index\n"
             "Sources:\n"
             "      --live            list the steps running on this node\n"
             "  -M, --cluster=NAME    cluster (default: cluster.name from "
             "the config)\n"
             "      --store=DIR       read the store at DIR\n"
             "  -c, --config=FILE     configuration file\n"
             "                        (default %s)\n"
             "      --allow-unsigned  use unsigned records (marked as such)\n"
             "  -h, --help            show this help and exit\n"
             "  -V, --version         show the version and exit\n\n"
             "Exit status: 0 ok (a period that selects nothing too), 1 "
             "runtime error or a\njob or run named (-j, --run, --compare) "
             "without records, 2 usage or\nconfiguration "
             "error, 3 a record was modified after signing, 4 a record\nis "
             "unsigned, 5 a signature is forged.\n"
             "With --live: 0 also when no step runs, 1 a snapshot could not "
             "be read.\nWith --digest: 1 also when a digest could not be "
             "sent.\n",
             tr_conf_default_path ());
}

enum {
    OPT_STORE = 256,
    OPT_UNSIGNED,
    OPT_JSON,
    OPT_LIVE,
    OPT_NAME,
    OPT_TAG,
    OPT_SORT,
    OPT_SUMMARY,
    OPT_RECOMMEND,
    OPT_OUTPUT,
    OPT_LAST,
    OPT_REGRESS,
    OPT_WASTE,
    OPT_FAILURES,
    OPT_BY,
    OPT_ROWS,
    OPT_SHARD,
    OPT_MERGE,
    OPT_REINDEX,
    OPT_NOINDEX,
    OPT_HTML,
    OPT_DIGEST,
    OPT_EXPORT,
    OPT_UNITS,
    OPT_NOCONVERT,
    OPT_RUNS,
    OPT_RUN,
    OPT_COMPARE,
    OPT_SINCE_LAST,
};

static const struct option opts[] = {
    { "jobs", required_argument, NULL, 'j' },
    { "user", required_argument, NULL, 'u' },
    { "allusers", no_argument, NULL, 'a' },
    { "account", required_argument, NULL, 'A' },
    { "partition", required_argument, NULL, 'p' },
    { "state", required_argument, NULL, 's' },
    { "starttime", required_argument, NULL, 'S' },
    { "endtime", required_argument, NULL, 'E' },
    { "name", required_argument, NULL, OPT_NAME },
    { "tag", required_argument, NULL, OPT_TAG },
    { "format", required_argument, NULL, 'o' },
    { "helpformat", no_argument, NULL, 'e' },
    { "parsable2", no_argument, NULL, 'P' },
    { "noheader", no_argument, NULL, 'n' },
    { "allocations", no_argument, NULL, 'X' },
    { "brief", no_argument, NULL, 'b' },
    { "units", required_argument, NULL, OPT_UNITS },
    { "noconvert", no_argument, NULL, OPT_NOCONVERT },
    { "sort", required_argument, NULL, OPT_SORT },
    { "list", no_argument, NULL, 'l' },
    { "json", no_argument, NULL, OPT_JSON },
    { "summary", optional_argument, NULL, OPT_SUMMARY },
    { "recommend", no_argument, NULL, OPT_RECOMMEND },
    { "output", required_argument, NULL, OPT_OUTPUT },
    { "last", required_argument, NULL, OPT_LAST },
    { "regressions", no_argument, NULL, OPT_REGRESS },
    { "waste", no_argument, NULL, OPT_WASTE },
    { "failures", no_argument, NULL, OPT_FAILURES },
    { "by", required_argument, NULL, OPT_BY },
    { "runs", no_argument, NULL, OPT_RUNS },
    { "run", required_argument, NULL, OPT_RUN },
    { "rows", no_argument, NULL, OPT_ROWS },
    { "shard", required_argument, NULL, OPT_SHARD },
    { "merge", no_argument, NULL, OPT_MERGE },
    { "reindex", no_argument, NULL, OPT_REINDEX },
    { "no-index", no_argument, NULL, OPT_NOINDEX },
    { "live", no_argument, NULL, OPT_LIVE },
    { "html", no_argument, NULL, OPT_HTML },
    { "digest", optional_argument, NULL, OPT_DIGEST },
    { "export", required_argument, NULL, OPT_EXPORT },
    { "since-last", no_argument, NULL, OPT_SINCE_LAST },
    { "cluster", required_argument, NULL, 'M' },
    { "store", required_argument, NULL, OPT_STORE },
    { "config", required_argument, NULL, 'c' },
    { "allow-unsigned", no_argument, NULL, OPT_UNSIGNED },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { "compare", required_argument, NULL, OPT_COMPARE },
    { NULL, 0, NULL, 0 },
};

static int bad (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Say what is wrong with the command line; the exit status for it. */
static int bad (const char *fmt, ...)
{
    va_list ap;

    fprintf (stderr, "tracer-report: ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "\n");
    return EXIT_USAGE;
}

static int set_mode (struct rep *r, enum rep_mode mode)
{
    if (r->mode != MODE_VIEW && r->mode != mode)
        return bad ("choose one of --summary, --recommend, --regressions, "
                    "--waste, --failures, --runs, --run, --rows, --reindex, "
                    "--live, "
                    "--digest, --export, --compare");
    r->mode = mode;
    return EXIT_OK;
}

static int parse_uint (const char *s, unsigned max, unsigned *out)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul (s, &end, 10);
    if (errno || end == s || *end || v > max || *s == '-')
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int parse_shard (struct rep *r, char *s)
{
    char *slash = strchr (s, '/');

    if (!slash)
        return -1;
    *slash = '\0';
    if (parse_uint (s, 1000000, &r->shard_i) < 0
        || parse_uint (slash + 1, 1000000, &r->shard_n) < 0
        || r->shard_n == 0 || r->shard_i >= r->shard_n)
        return -1;
    return 0;
}

static int parse_time (struct rep *r, const char *s, bool end)
{
    tr_error_t error;
    time_t t;

    if (tr_when_parse (s, time (NULL), end, &t, &error) < 0) {
        fprintf (stderr, "tracer-report: %s: %s\n", end ? "-E" : "-S",
                 tr_error_str (&error));
        return EXIT_USAGE;
    }
    if (end) {
        r->q.to = t;
        r->to_given = true;
    }
    else {
        r->q.from = t;
        r->from_given = true;
    }
    return EXIT_OK;
}

/* One option; EXIT_OK or an exit status to leave with (-1: exit 0). */
static int parse_opt (struct rep *r, int c, char *arg)
{
    tr_error_t error;

    switch (c) {
    case 'j':
        r->jobs_arg = arg;
        return EXIT_OK;
    case 'u':
        return tr_query_add_list (r->q.users, &r->q.nusers, arg, "--user",
                                  &error) < 0
                   ? bad ("%s", tr_error_str (&error)) : EXIT_OK;
    case 'a':
        r->all_users = true;
        return EXIT_OK;
    case 'A':
        return tr_query_add_list (r->q.accounts, &r->q.naccounts, arg,
                                  "--account", &error) < 0
                   ? bad ("%s", tr_error_str (&error)) : EXIT_OK;
    case 'p':
        return tr_query_add_list (r->q.partitions, &r->q.npartitions, arg,
                                  "--partition", &error) < 0
                   ? bad ("%s", tr_error_str (&error)) : EXIT_OK;
    case 's':
        return tr_query_add_states (&r->q, arg, &error) < 0
                   ? bad ("%s", tr_error_str (&error)) : EXIT_OK;
    case 'S':
    case 'E':
        return parse_time (r, arg, c == 'E');
    case OPT_NAME:
        return tr_query_add_list (r->q.names, &r->q.nnames, arg, "--name",
                                  &error) < 0
                   ? bad ("%s", tr_error_str (&error)) : EXIT_OK;
    case OPT_TAG:
        return tr_query_add_tag (&r->q, arg, &error) < 0
                   ? bad ("%s", tr_error_str (&error)) : EXIT_OK;
    case 'o':
        r->format = arg;
        r->list_given = true;
        return EXIT_OK;
    case 'P':
        r->parsable = r->list_given = true;
        return EXIT_OK;
    case 'n':
        r->noheader = r->list_given = true;
        return EXIT_OK;
    case 'l':
        r->list_given = true;
        return EXIT_OK;
    case 'X':
        r->allocations = r->list_given = true;
        return EXIT_OK;
    case 'b':
        r->format = "JobID,State,ExitCode";
        r->list_given = true;
        return EXIT_OK;
    case OPT_UNITS:
        if (strlen (arg) != 1 || !strchr ("KMGTPkmgtp", *arg))
            return bad ("--units: '%s' is not K, M, G, T or P", arg);
        r->units = (char)toupper ((unsigned char)*arg);
        return EXIT_OK;
    case OPT_NOCONVERT:
        r->noconvert = true;
        return EXIT_OK;
    case OPT_SORT:
        r->sort = arg;
        return EXIT_OK;
    case OPT_JSON:
        r->json = true;
        return EXIT_OK;
    case OPT_SUMMARY:
        r->by = arg ? arg : "array";
        return set_mode (r, MODE_SUMMARY);
    case OPT_RECOMMEND:
        return set_mode (r, MODE_RECOMMEND);
    case OPT_OUTPUT:
        if (strcmp (arg, "table") && strcmp (arg, "sbatch")
            && strcmp (arg, "pbs") && strcmp (arg, "lsf")
            && strcmp (arg, "nextflow") && strcmp (arg, "snakemake")
            && strcmp (arg, "snakemake8") && strcmp (arg, "json"))
            return bad ("--output: '%s' is not table, sbatch, pbs, lsf, "
                        "nextflow, snakemake, snakemake8 or json", arg);
        r->output = arg;
        return EXIT_OK;
    case OPT_LAST:
        return parse_uint (arg, 1000000, &r->last_n) < 0 || !r->last_n
                   ? bad ("--last: '%s' is not a number of runs", arg)
                   : EXIT_OK;
    case OPT_REGRESS:
        return set_mode (r, MODE_REGRESS);
    case OPT_WASTE:
        return set_mode (r, MODE_WASTE);
    case OPT_FAILURES:
        return set_mode (r, MODE_FAILURES);
    case OPT_RUNS:
        return set_mode (r, MODE_RUNS);
    case OPT_RUN:
        if (!tr_run_name_ok (arg))
            return bad ("--run: '%s' is not a run id", arg);
        r->run_id = arg;
        return EXIT_OK;         /* the view or a filter: settle says */
    case OPT_BY:
        r->by = arg;
        return EXIT_OK;
    case OPT_ROWS:
        return set_mode (r, MODE_ROWS);
    case OPT_SHARD:
        return parse_shard (r, arg) < 0
                   ? bad ("--shard: '%s' is not I/N with 0 <= I < N", arg)
                   : EXIT_OK;
    case OPT_MERGE:
        r->nmerge = -1;         /* the operands are --rows files */
        return EXIT_OK;
    case OPT_REINDEX:
        return set_mode (r, MODE_REINDEX);
    case OPT_NOINDEX:
        r->no_index = true;
        return EXIT_OK;
    case OPT_LIVE:
        return set_mode (r, MODE_LIVE);
    case OPT_HTML:
        r->html = true;
        return EXIT_OK;
    case OPT_DIGEST:
        if (arg && strcmp (arg, "send") && strcmp (arg, "print"))
            return bad ("--digest: '%s' is not send or print", arg);
        r->digest_print = arg && !strcmp (arg, "print");
        return set_mode (r, MODE_DIGEST);
    case OPT_EXPORT:
        if (strcmp (arg, "opendc") && strcmp (arg, "opendc-csv")
            && strcmp (arg, "nextflow-trace") && strcmp (arg, "parquet"))
            return bad ("--export: '%s' is not parquet, opendc, opendc-csv "
                        "or nextflow-trace", arg);
        r->export_format = arg;
        return set_mode (r, MODE_EXPORT);
    case OPT_SINCE_LAST:
        r->since_last = true;
        return EXIT_OK;
    case 'M':
        r->cluster = arg;
        return EXIT_OK;
    case OPT_STORE:
        r->store_path = arg;
        return EXIT_OK;
    case OPT_UNSIGNED:
        r->allow_unsigned = true;
        return EXIT_OK;
    case OPT_COMPARE:
        r->compare_a = arg;
        if (!(r->compare_b = strchr (arg, ',')))
            return bad ("--compare needs two runs: --compare=ID1,ID2");
        *r->compare_b++ = '\0';
        if (!tr_run_name_ok (r->compare_a) || !tr_run_name_ok (r->compare_b))
            return bad ("--compare: '%s,%s' is not two run ids ID1,ID2 "
                        "(tracer-report --runs lists them)", r->compare_a,
                        r->compare_b);
        if (!strcmp (r->compare_a, r->compare_b))
            return bad ("--compare: the same run twice (%s)", r->compare_a);
        return set_mode (r, MODE_COMPARE);
    case 'h':
        usage (stdout);
        return -1;
    case 'V':
        printf ("tracer-report %s\n", TRACER_VERSION);
        return -1;
    default:
        return EXIT_USAGE;
    }
}

/* Root, or a member of report.admin_group. */
static bool is_admin (const tr_conf_t *conf)
{
    gid_t groups[1024];
    int n;

    if (geteuid () == 0)
        return true;
    if (!conf->admin_group_set)
        return false;
    if (getegid () == conf->admin_gid)
        return true;
    n = getgroups (1024, groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == conf->admin_gid)
            return true;
    return false;
}

/* What the operands and options ask for, checked for sense. */
static int settle (struct rep *r, int argc, char **argv)
{
    tr_error_t error;

    if (r->nmerge < 0) {
        r->merge_files = argv + optind;
        r->nmerge = argc - optind;
        if (r->nmerge == 0)
            return bad ("--merge needs --rows files");
    }
    else {
        r->files = argv + optind;
        r->nfiles = argc - optind;
    }
    /* --run=ID alone is the run view; with another mode (--export,
     * --compare, an analysis) it selects that run's steps
     */
    if (r->run_id && r->mode == MODE_VIEW)
        r->mode = MODE_RUN;
    else if (r->run_id)
        r->q.run_id = r->run_id;
    if (r->html && r->mode == MODE_RUN) {
        /* -o names the file here too */
        if (r->parsable || r->noheader || r->json)
            return bad ("--html makes the run view a file: drop the "
                        "listing options");
        r->html_out = r->format;
        r->format = NULL;
        r->list_given = false;
    }
    else if (r->mode == MODE_RUN && (r->parsable || r->noheader || r->format))
        return bad ("--run shows the run view: drop the listing options "
                    "(-o, -P, -n)");
    else if (r->html) {
        /* -o names the file here: an HTML report has no columns */
        if (r->mode != MODE_VIEW || r->parsable || r->noheader || r->json)
            return bad ("--html makes the job view a file: drop the "
                        "listing and analysis options");
        if (!r->jobs_arg && !r->nfiles)
            return bad ("--html needs -j JOBID or record files");
        r->html_out = r->format;
        r->format = NULL;
        r->list_given = false;
    }
    if (r->mode == MODE_EXPORT) {
        /* -o names the directory here: an export has no columns */
        if (r->parsable || r->noheader || r->json || r->html)
            return bad ("--export writes files: drop the listing options");
        if (!r->format || !*r->format)
            return bad ("--export needs -o DIR, the directory to write");
        /* the Parquet export is of summaries, which --rows files hold */
        if (r->nmerge && strcmp (r->export_format, "parquet"))
            return bad ("--export reads records, not --rows files");
        if (!strcmp (r->export_format, "nextflow-trace") && !r->q.run_id)
            return bad ("--export=nextflow-trace needs --run=ID: a trace is "
                        "one run's");
        r->export_dir = r->format;
        r->format = NULL;
        r->list_given = false;
    }
    if (r->since_last
        && (r->mode != MODE_EXPORT || strcmp (r->export_format, "parquet")))
        return bad ("--since-last adds to a Parquet export: it needs "
                    "--export=parquet");
    if (r->mode == MODE_LIVE) {
        if (r->nfiles || r->store_path || r->nmerge)
            return bad ("--live reads this node's snapshots, not %s",
                        r->store_path ? "a store" : "record files");
        return EXIT_OK;
    }
    if (r->jobs_arg && !(r->q.jobs = tr_when_jobsel_parse (r->jobs_arg,
                                                           &error))) {
        /* tracer-run's own ids (run.TIME.PID) are no scheduler's: the
         * job view looks them up as they are
         */
        if (r->mode != MODE_VIEW || r->list_given
            || strncmp (r->jobs_arg, "run.", 4)
            || !rep_ids_safe (r->jobs_arg, false))
            return bad ("-j: %s", tr_error_str (&error));
    }
    r->admin = is_admin (r->conf);
    if (r->mode == MODE_VIEW && !r->list_given
        && (r->jobs_arg || r->nfiles) && !r->nmerge) {
        /* a user's -j view shows only their own records (view.c) */
        if (!r->admin) {
            r->q.only_uid = true;
            r->q.uid = getuid ();
        }
        return EXIT_OK;
    }
    if (r->nfiles)
        return bad ("record files are shown with the job view only "
                    "(drop the listing options)");
    if (r->mode == MODE_VIEW)
        r->mode = MODE_LIST;
    /* a bad field is the command line's fault, said before any store is
     * opened
     */
    if (r->mode == MODE_LIST && r->format && !r->json) {
        struct tr_query_format fmt = { .extra_name = "diagnosis",
                                       .extra_width = -20 };

        if (tr_query_format_parse (&fmt, r->format, &error) < 0)
            return bad ("%s", tr_error_str (&error));
    }
    /* a digest covers a week unless told otherwise */
    if (!r->from_given && (r->mode == MODE_DIGEST || r->mode == MODE_FAILURES))
        r->q.from = time (NULL) - 7 * 86400;
    /* --since-last: from the day before the last export into the
     * directory (records forwarded late), or everything the first time
     */
    if (r->since_last && !r->from_given && !r->q.jobs && !r->q.run_id) {
        time_t last;
        int rc = tr_lake_last (r->export_dir, &last, &error);

        if (rc < 0) {
            fprintf (stderr, "tracer-report: %s\n", tr_error_str (&error));
            return EXIT_RUNTIME;
        }
        r->q.from = rc == 0 && last > 86400 ? last - 86400 : 0;
        r->from_given = true;
    }
    /* sacct's default: since midnight, unless jobs were named */
    if (!r->from_given && !r->q.jobs && !r->q.run_id
        && (r->mode == MODE_LIST || r->mode == MODE_EXPORT)) {
        time_t now = time (NULL);
        struct tm tm;

        localtime_r (&now, &tm);
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_isdst = -1;
        r->q.from = mktime (&tm);
    }
    /* as sacct: a period that ends before it starts is a usage error,
     * also when its end is now
     */
    if (r->from_given && r->q.from > (r->to_given ? r->q.to : time (NULL))) {
        char s[32], e[32];
        time_t end = r->to_given ? r->q.to : time (NULL);
        struct tm tm;

        strftime (s, sizeof (s), "%Y-%m-%dT%H:%M:%S",
                  localtime_r (&r->q.from, &tm));
        strftime (e, sizeof (e), "%Y-%m-%dT%H:%M:%S", localtime_r (&end, &tm));
        return bad ("-S %s is after the end of the period (%s %s)", s,
                    r->to_given ? "-E" : "now,", e);
    }
    /* an admin's digest run (cron) covers every user unless -u says */
    if (r->mode == MODE_DIGEST && r->admin && !r->q.nusers)
        r->all_users = true;
    if (r->mode == MODE_REINDEX && !r->admin)
        return bad ("--reindex writes the index of every user's records: "
                    "root and report.admin_group only");
    /* sacct shows the caller's own jobs unless asked for more, and
     * nobody but an admin may ask
     */
    if (!r->admin && (r->all_users || r->q.nusers)) {
        char uid[32];

        bool others = r->all_users;

        snprintf (uid, sizeof (uid), "%u", (unsigned)getuid ());
        for (size_t i = 0; i < r->q.nusers; i++)
            if (strcmp (r->q.users[i], uid))
                others = true;
        if (others)
            fprintf (stderr, "tracer-report: note: only %s's records "
                     "are shown (not an admin)\n", uid);
    }
    /* root, as with sacct, sees every user's without -a */
    if (!r->admin
        || (geteuid () != 0 && !r->all_users && !r->q.nusers
            && !r->q.jobs)) {
        r->q.only_uid = true;
        r->q.uid = getuid ();
    }
    return EXIT_OK;
}

static int run (struct rep *r)
{
    tr_rowset_t *set;
    int rc;

    if (r->mode == MODE_LIVE)
        return rep_live (r);
    if (r->mode == MODE_VIEW)
        return rep_view (r);
    if (!(set = tr_rowset_create ())) {
        fprintf (stderr, "tracer-report: out of memory\n");
        return EXIT_RUNTIME;
    }
    /* a run in progress: its running steps from the live summaries */
    r->live_rows = r->mode == MODE_RUNS || r->mode == MODE_RUN;
    rc = rep_collect (r, &r->q,
                      r->mode != MODE_ROWS && r->mode != MODE_REINDEX
                          && r->mode != MODE_EXPORT,
                      set);
    if (rc == EXIT_OK) {
        if (r->mode == MODE_LIST)
            rc = rep_list (r, set);
        else if (r->mode == MODE_ROWS || r->mode == MODE_REINDEX)
            rc = rep_rows (r, set);
        else if (r->mode == MODE_DIGEST)
            rc = rep_digest (r, set);
        else if (r->mode == MODE_EXPORT)
            rc = rep_export (r, set);
        else if (r->mode == MODE_RUNS)
            rc = rep_runs (r, set);
        else if (r->mode == MODE_RUN)
            rc = rep_run (r, set);
        else if (r->mode == MODE_COMPARE)
            rc = rep_compare (r, set);
        else
            rc = rep_analyze (r, set);
    }
    tr_rowset_destroy (set);
    if (rc == EXIT_OK && r->worst != EXIT_OK)
        rc = r->worst;
    return rc;
}

/* --helpformat: the fields, each help wrapped to the terminal under the
 * help's column ("%-15s %-9s " or, for --runs, "%-15s ").
 */
static int print_fields (bool runs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    int rc;

    if (!f) {
        fprintf (stderr, "tracer-report: out of memory\n");
        return EXIT_RUNTIME;
    }
    if (runs)
        tr_runs_print_fields (f);
    else {
        tr_query_print_fields (f, NULL);
        fprintf (f, "%-15s %-9s %s\n", "diagnosis", "text",
                 "diagnosis codes (see tracer-report(1))");
    }
    rc = fclose (f) != 0
                 || tr_report_wrap_lines (stdout, buf, len,
                                          tr_report_width (STDOUT_FILENO),
                                          runs ? 16 : 26) < 0
             ? EXIT_RUNTIME
             : EXIT_OK;
    free (buf);
    return rc;
}

int main (int argc, char **argv)
{
    struct rep r = { .mode = MODE_VIEW };
    const char *conf_path = tr_conf_default_path ();
    bool conf_explicit = getenv ("TRACER_CONF") && *getenv ("TRACER_CONF");
    bool helpformat = false;
    tr_error_t error;
    int c, rc = EXIT_OK;

    opterr = 0;
    while ((c = getopt_long (argc, argv, ":j:u:aA:p:s:S:E:o:ePnlXbM:c:hV",
                             opts, NULL)) != -1) {
        if (c == '?' || c == ':') {
            /* one line, not the whole help */
            char msg[256];

            fprintf (stderr, "%s\n",
                     tr_error_usage (msg, sizeof (msg), "tracer-report", c,
                                     argv[optind - 1], optopt));
            return EXIT_USAGE;
        }
        if (c == 'c') {
            conf_path = optarg;
            conf_explicit = true;
            continue;
        }
        if (c == 'e') {
            helpformat = true;
            continue;
        }
        if ((rc = parse_opt (&r, c, optarg)) != EXIT_OK)
            return rc < 0 ? EXIT_OK : rc;
    }
    if (helpformat)
        return print_fields (r.mode == MODE_RUNS);
    if (!(r.conf = tr_conf_create ()) || !(r.recs = json_array ())
        || !(r.notes = json_object ())) {
        fprintf (stderr, "tracer-report: out of memory\n");
        return EXIT_RUNTIME;
    }
    if (tr_conf_load (r.conf, conf_path, &error) < 0
        && !(errno == ENOENT && !conf_explicit)) {
        fprintf (stderr, "tracer-report: %s\n", tr_error_str (&error));
        rc = EXIT_USAGE;
    }
    else if ((rc = settle (&r, argc, argv)) == EXIT_OK)
        rc = run (&r);
    tr_when_jobsel_destroy (r.q.jobs);
    json_decref (r.recs);
    json_decref (r.notes);
    tr_conf_destroy (r.conf);
    return rc;
}
