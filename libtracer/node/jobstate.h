/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Asking the scheduler what the node-side hooks cannot see, or cannot
 * see from a source the job does not control: a job's time limit,
 * account, partition, QOS and name, and why its tasks were killed
 * (cancelled, time limit).  SPANK plugins get these only from the job's
 * environment, which the job script can change before srun, so tracerd
 * runs squeue for the job, without a shell, asynchronously and bounded,
 * and never for every step: once per job when it starts on the node and
 * once when a step of it ends by a signal.
 */
#ifndef TRACER_JOBSTATE_H
#define TRACER_JOBSTATE_H

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/record/states.h"
#include "libtracer/util/error.h"

/* Longest controller text kept; longer text is cut here and again to
 * the record's own bounds (tr_record_clip_identity), which flags it.
 */
#define TR_JOBSTATE_TEXT 1024

struct tr_jobstate {
    char state[32];       /* squeue's state: RUNNING, TIMEOUT, CANCELLED... */
    long time_limit_s;    /* -1 unknown, TR_JOBSTATE_UNLIMITED unlimited */
    long long submit_ms;  /* when submitted (Unix ms), -1 unknown */
    long long start_ms;   /* when the job started (Unix ms), -1 unknown */
    /* "" when squeue did not say (older output, "(null)": no accounting) */
    char account[TR_JOBSTATE_TEXT];
    char partition[TR_JOBSTATE_TEXT];
    char qos[TR_JOBSTATE_TEXT];
    char array_job[32];   /* %F of an array task, else "" */
    long array_task;      /* %K, -1 when not an array task */
    char job_id[32];      /* %A, the line's own job id ("" if not said) */
    char job_name[TR_JOBSTATE_TEXT];   /* the rest of the line: any text */
};

/* time_limit_s of a job with no time limit: squeue's UNLIMITED or
 * INFINITE, or exactly 365 days, which is what Slurm (22.05) gives a job
 * that asked for no limit in a partition without one (YEAR_MINUTES).
 */
#define TR_JOBSTATE_UNLIMITED (-2L)
#define TR_JOBSTATE_YEAR_S 31536000L

/* Parse the first line of `squeue --format=%T|%l|%a|%P|%q|%V|%S|%F|%K|%A|%j`
 * output.  The fields after the time limit may be missing (then "", and
 * -1 for the submit and start times).  The job
 * name comes last and takes the rest of the line, '|' included, and the
 * lines after it that do not start as an answer does ("STATE|"): a
 * name may hold newlines.
 */
int tr_jobstate_parse_line (const char *line,
                         struct tr_jobstate *out,
                         tr_error_t *error);

/* The line of squeue's whole answer that is job's own: squeue --jobs=N
 * of an array's id lists every task, of a heterogeneous job's leader
 * every component; each line names its own job id (%A).  An answer whose
 * lines name no job id (an older format) gives its first line.  Two
 * lines claiming job (a job name may hold newlines, and with them a
 * line of its own making) is an answer not to be believed: -1 with
 * EPROTO; none: -1 with ENOENT.
 */
int tr_jobstate_parse_answer (const char *text,
                              const char *job,
                              struct tr_jobstate *out,
                              tr_error_t *error);

/* The answer of job in squeue's whole answer when every answer starts
 * with "TAG|" (SQUEUE_FORMAT=TAG|%T|%l|%a|%P|%q|%V|%S|%F|%K|%A|%j, TAG
 * unknown to the job): an answer runs to the next line that starts so,
 * and its job name is all the rest of it (newlines, '|' and any bytes
 * included; its one trailing newline aside), so that no name can make or
 * break an answer.  -1 with EPROTO when the text does not start with
 * the tag or two answers name job, ENOENT when none does.
 */
int tr_jobstate_parse_tagged (const char *text,
                              const char *tag,
                              const char *job,
                              struct tr_jobstate *out,
                              tr_error_t *error);

/* squeue's submit or start time (%V, %S: local time
 * "YYYY-MM-DDTHH:MM:SS") as Unix milliseconds, or -1 when it is not one
 * ("N/A", "Unknown", a pending job's start).
 */
long long tr_jobstate_parse_time (const char *text);

/* Parse a Slurm time limit: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM,
 * D-HH:MM:SS.  UNLIMITED, INFINITE, NOT_SET, INVALID and bad text give -1.
 */
long tr_jobstate_parse_limit (const char *text);

/* The controller's identity fields as a new object: "account",
 * "partition", "qos", "job_name" (each only when known) and
 * "time_limit_s" (when >= 0) or "time_limit": "UNLIMITED" (when
 * TR_JOBSTATE_UNLIMITED), and "submit_unix_ms", "job_start_unix_ms"
 * (when known).  NULL on ENOMEM.
 */
json_t *tr_jobstate_fields (const struct tr_jobstate *job);

/* Copy such fields into a step's identity and request (either may be
 * NULL), replacing what is there, and clip the identity to the record's
 * bounds (tr_record_clip_identity).  Returns 0, or -1 on ENOMEM.
 */
int tr_jobstate_apply_fields (json_t *fields, json_t *identity,
                              json_t *request);

/* The scheduler could not be asked (squeue failed, did not answer, or
 * its answer could not be believed): name every member it would have
 * given that identity (account, partition, qos, job_name) or request
 * (time_limit_s) lacks in identity's "unknown" object, each with why (at
 * most 256 bytes).  Returns 0, or -1 on ENOMEM.
 */
int tr_jobstate_mark_unknown (json_t *identity, json_t *request,
                              const char *why);

/* Copy such fields' "submit_unix_ms" and "job_start_unix_ms" (where
 * present) into a record's "time" object (NULL: nothing).  Returns 0, or
 * -1 on ENOMEM.
 */
int tr_jobstate_apply_time (json_t *fields, json_t *time);

/* Make a step's identity as a node daemon must hold it.  For Slurm
 * ("scheduler": "slurm") every member that only the job environment
 * could have given the hook is removed ("cluster", "user", "group",
 * "account", "partition", "qos", "job_name", "command", "work_dir"),
 * and "cluster" is set to
 * cluster.  For every scheduler, "user" and "group" are resolved from
 * "uid" and "gid" on this node (getpwuid_r, getgrgid_r) where the hook
 * gave none; a uid or gid without a name leaves the member out.  A
 * "truncated" the hook sent is dropped, and the identity is then
 * clipped (tr_record_clip_identity), which sets it afresh.  Returns 0, or -1
 * with errno (EINVAL: not an object; ENOMEM).
 */
int tr_jobstate_trust_identity (json_t *identity, const char *cluster);

/* The ClusterName a slurm.conf sets, in lower case as Slurm uses it,
 * into buf: 0, or -1 with errno (ENOENT: the file cannot be read or
 * sets none; EINVAL: not a path-safe name, tr_record_id_is_safe).
 * "Include" files are not followed.
 */
int tr_jobstate_slurm_cluster (const char *slurm_conf, char *buf,
                               size_t size);

typedef struct tr_jobstate_query tr_jobstate_query_t;

/* Start `squeue --noheader --states=all --jobs=JOB` with
 * SQUEUE_FORMAT=TAG|%T|%l|%a|%P|%q|%V|%S|%F|%K|%A|%j (TAG: 16 random hex
 * digits of this query; tr_jobstate_parse_tagged), stdout on a pipe
 * (O_NONBLOCK), stdin and stderr on /dev/null and an environment of
 * PATH, SQUEUE_FORMAT and, if set in ours, SLURM_CONF.  job must be
 * digits (a Slurm job id); anything else is refused.
 */
tr_jobstate_query_t *tr_jobstate_query_start (const char *squeue,
                                        const char *job,
                                        tr_error_t *error);

/* The pipe to poll for POLLIN. */
int tr_jobstate_query_fd (tr_jobstate_query_t *q);

/* Read what is there: 1 at end of output, 0 if more may come, -1 on
 * error (output too long).
 */
int tr_jobstate_query_read (tr_jobstate_query_t *q);

/* After tr_jobstate_query_read returned 1: reap the child and parse.  0 with
 * *out filled, -1 with error (squeue failed, no such job, bad output).
 */
int tr_jobstate_query_result (tr_jobstate_query_t *q,
                           struct tr_jobstate *out,
                           tr_error_t *error);

/* Like tr_jobstate_query_start, then, once squeue has answered,
 * `scontrol --details show job JOB` (scontrol NULL: not) for the GPUs
 * the job holds on each node (tr_jobstate_query_nodes).
 */
tr_jobstate_query_t *tr_jobstate_query_start_detail (const char *squeue,
                                                     const char *scontrol,
                                                     const char *job,
                                                     tr_error_t *error);

/* After tr_jobstate_query_read returned 1: scontrol's per-node GPUs
 * (tr_jobstate_parse_detail), or NULL when it was not asked, failed or
 * said too much.
 */
json_t *tr_jobstate_query_nodes (tr_jobstate_query_t *q);

/* The per-node lines of `scontrol --details show job` output
 * ("     Nodes=n[1-2] CPU_IDs=0-3 Mem=1000 GRES=gpu:2(IDX:0-1)") as an
 * array of [NODES, GPUS]: GPUS is the Slurm GPU indexes "0,1", "" for
 * none, or null when the line does not say which.  Any text may hold
 * such lines (a job name or path with a newline): see
 * tr_jobstate_node_gpus.  NULL on ENOMEM.
 */
json_t *tr_jobstate_parse_detail (const char *text);

/* The job script's path and the job's working directory from `scontrol
 * --details show job` output, its lines "   Command=PATH" and
 * "   WorkDir=PATH", as a new object with "command" and "work_dir", each
 * only when exactly one line gives it (a second line is the job's own
 * text: a name with a newline), it is not "(null)" and at most
 * TR_JOBSTATE_TEXT bytes.  They name the run a job belongs to
 * (runid.h).  NULL on ENOMEM.
 */
json_t *tr_jobstate_parse_paths (const char *text);

/* The same from a query's scontrol output, and for a job Nextflow named
 * ("nf-..."), its "task_name" from the job script the controller keeps
 * (`scontrol write batch_script JOB -`; tr_jobstate_nextflow_task);
 * NULL when there is none.
 */
json_t *tr_jobstate_query_paths (tr_jobstate_query_t *q);

/* The task name of a Nextflow job script (its "### name: 'NAME'" line
 * among the first 100) into buf, only if job_name is the name
 * Nextflow's Slurm executor makes of it ("nf-" and NAME with ' ', '/',
 * ':', '@', '*', '?', '=', tab and line breaks made '_', at most 256
 * characters): the script and the job name must agree, so that the
 * name says no more than the job does.  False when there is none, they
 * disagree, or it does not fit.
 */
bool tr_jobstate_nextflow_task (const char *script,
                                const char *job_name,
                                char *buf,
                                size_t size);

/* Whether a Slurm hostlist ("n[01-04,7],gpu3") names node.  One bracket
 * per item at most; anything fancier names nothing.
 */
bool tr_jobstate_hostlist_has (const char *list, const char *node);

/* node's GPUs from tr_jobstate_parse_detail's pairs: 1 with the indexes
 * in buf ("0,1"), 0 when it has none (buf ""), -1 when unknown: no line
 * names node, a line does not say which GPUs, or two lines disagree (the
 * controller's line is always there, so a second one that differs is
 * the job's own text).
 */
int tr_jobstate_node_gpus (json_t *pairs, const char *node, char *buf,
                           size_t size);

/* Kill the child if still running, reap it and free. */
/* LSF's word on a job: its owner, its status and where it ran. */
struct tr_lsfjob {
    char user[64];
    char stat[16];   /* RUN, PEND, DONE, EXIT, USUSP, SSUSP, PSUSP, ... */
    char hosts[1024]; /* EXEC_HOST: "node1:node2" or "4*node1:2*node2" */
    bool started;     /* running, suspended or ended: hosts are known */
};

/* Parse `bjobs -w JOB` (job "J" or "J[I]"): its header, then the job's
 * own line, whose first six columns (JOBID USER STAT QUEUE FROM_HOST
 * EXEC_HOST) are read; the job name after them, which the job's user
 * chose, is not.  0, or -1 with errno ENOENT (the job is not known) or
 * EINVAL.
 */
int tr_jobstate_parse_bjobs (const char *text,
                             const char *job,
                             struct tr_lsfjob *out,
                             tr_error_t *error);

/* Whether the job ran (or runs) on host (its short name is compared). */
bool tr_jobstate_lsf_runs_on (const struct tr_lsfjob *job, const char *host);

/* Start `bjobs -w JOB` (JOB "J" or "J[I]", digits only; anything else is
 * refused), as tr_jobstate_query_start starts squeue, with LSF_ENVDIR
 * from our environment; read it with tr_jobstate_query_read, then
 * tr_jobstate_query_lsf.
 */
tr_jobstate_query_t *tr_jobstate_query_start_lsf (const char *bjobs,
                                                  const char *job,
                                                  tr_error_t *error);
int tr_jobstate_query_lsf (tr_jobstate_query_t *q,
                           struct tr_lsfjob *out,
                           tr_error_t *error);

void tr_jobstate_query_destroy (tr_jobstate_query_t *q);

#endif /* !TRACER_JOBSTATE_H */
