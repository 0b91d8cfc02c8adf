/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_BATCH_H
#define TRACER_BATCH_H

/* What PBS (OpenPBS, PBS Pro), Torque and LSF tell their prologues,
 * epilogues, hooks and pre/post-execution commands about a job, turned
 * into the same identity, request and outcome a Slurm step has, and into
 * the hook -> tracerd messages of proto.h.  Everything here is parsing of
 * untrusted text (job names, resource strings, environments): every
 * length is bounded and nothing is ever handed to a shell.
 */

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/util/error.h"

enum tr_batch_kind {
    TR_BATCH_PBS = 0,
    TR_BATCH_TORQUE,
    TR_BATCH_LSF,
};

/* A job as one module invocation sees it.  Strings are "" and numbers
 * -1 when not known.
 */
struct tr_batch_job {
    enum tr_batch_kind kind;
    char job_id[129];
    char array_job_id[129];
    long array_task_id;
    char user[65];
    char group[65];
    char job_name[513];
    char queue[129];
    char account[129];
    long long session;      /* the job's session id (its top shell) */
    long long cpus_on_node; /* CPUs of the job on this host */
    long long nodes;        /* hosts of the job */
    long long mem_bytes;    /* memory granted on this host */
    long long time_limit_s; /* wall-clock limit */
    bool have_exit;
    long long exit_status;  /* PBS/Torque Exit_status, LSF wait status */
    char exit_info[129];    /* LSF LSB_JOBEXIT_INFO */
    bool requeued;          /* LSF LSB_JOBPEND: the job goes back to pending */
};

void tr_batch_job_init (struct tr_batch_job *job, enum tr_batch_kind kind);

/* Set a PBS or Torque job id ("7.srv"; an array subjob "7[3].srv" also
 * gives array_job_id "7[].srv" and array_task_id 3).  -1 with EINVAL if
 * empty or too long.
 */
int tr_batch_set_job_id (struct tr_batch_job *job, const char *id);

/* "pbs", "torque" or "lsf". */
const char *tr_batch_name (enum tr_batch_kind kind);

/* A PBS size ("100mb", "2gb", "512kb", "1024", "4kw"): bytes.  Units
 * b, kb, mb, gb, tb, pb (powers of 1024) and w, kw, ... (8-byte words),
 * case-insensitive; no unit means bytes.  -1 with EINVAL if malformed
 * or out of range.
 */
int tr_batch_pbs_size (const char *s, long long *bytes);

/* A duration "[[HH:]MM:]SS[.frac]" or plain seconds: whole seconds. */
int tr_batch_duration (const char *s, long long *seconds);

/* Fill cpus_on_node, nodes, mem_bytes and time_limit_s (where still
 * unknown) from a resource list: PBS Resource_List ("mem=100mb,ncpus=2,
 * place=free,walltime=00:02:00", "select=2:ncpus=4:mem=8gb") or Torque's
 * ("nodes=1:ppn=2,walltime=00:05:00,mem=200mb").  Unknown resources are
 * ignored; malformed values leave the member unknown.
 */
void tr_batch_pbs_resources (const char *list, struct tr_batch_job *job);

/* CPUs on host in a PBS exec_host ("n1/0*2+n2/0*2", "n1/0+n1/1") and
 * the number of distinct hosts.  Host names compare up to the first '.'.
 */
void tr_batch_pbs_exec_host (const char *exec_host,
                             const char *host,
                             struct tr_batch_job *job);

/* The CPUs and memory on host in a PBS exec_vnode
 * ("(n1:ncpus=2:mem=100kb)+(n2:ncpus=2)", "(n1[0]:ncpus=1+n1[1]:ncpus=1)")
 * and the number of distinct hosts: a vnode "n1[0]" is on host "n1".
 * What exec_vnode does not say is left as it was.
 */
void tr_batch_pbs_exec_vnode (const char *exec_vnode,
                              const char *host,
                              struct tr_batch_job *job);

/* The name PBS gives this host's node, which may differ from the host
 * name: env (PBS_MOM_NODE_NAME from pbs_mom's environment) when set,
 * else PBS_MOM_NODE_NAME in the pbs.conf at conf_path.  The file is read
 * only when it is a regular file owned by root (or by the caller) and
 * writable by its owner alone; nothing of it is ever quoted in an error.
 * 0 with the name in buf; -1 with errno when neither names a node that
 * is a safe record id.
 */
int tr_batch_pbs_node (const char *env,
                       const char *conf_path,
                       char *buf,
                       size_t size);

/* Whether a process running as euid may take its configuration from
 * path: a regular file owned by root (or by euid) and writable by its
 * owner alone.  -1 with error otherwise; the error names the reason,
 * never the file's content.
 */
int tr_batch_conf_trusted (const char *path, uid_t euid, tr_error_t *error);

/* Take what `qstat -f -F json JOBID` printed: Job_Name, queue,
 * Account_Name, euser/egroup, session_id, array index, Resource_List,
 * exec_host.  -1 with error if the text is not qstat's JSON for jobid.
 */
int tr_batch_pbs_qstat (const char *text,
                        const char *host,
                        struct tr_batch_job *job,
                        tr_error_t *error);

/* Read an LSF job environment through get (getenv or a test's lookup):
 * LSB_JOBID, LSB_JOBINDEX, LSB_JOBNAME, LSB_QUEUE, LSB_PROJECT_NAME,
 * LSFUSER/USER, LSB_MCPU_HOSTS (else LSB_HOSTS), LSB_DJOB_NUMPROC,
 * LSB_EFFECTIVE_RSRCREQ (rusage[mem=N], N in units of unit_bytes: LSF's
 * LSF_UNIT_FOR_LIMITS),
 * LSB_JOBEXIT_STAT, LSB_JOBEXIT_INFO, LSB_JOBPEND.  -1 with error when
 * LSB_JOBID is missing or not a job id.
 */
int tr_batch_lsf_env (const char *(*get) (const char *name, void *arg),
                      void *arg,
                      const char *host,
                      long long unit_bytes,
                      struct tr_batch_job *job,
                      tr_error_t *error);

/* The outcome hint an end message carries, from the scheduler's exit
 * status: {"state":..., "exit_code":N, "signal":N, "reason":"..."}.
 * NULL when the job has no exit status.
 */
json_t *tr_batch_outcome (const struct tr_batch_job *job);

/* The NAME=VALUE entries every process of the job carries in its
 * environment, newline-separated (PBS_JOBID=7.srv; LSF, whose every
 * version sets them: LSB_JOBID=42, an array element
 * LSB_JOBID=42 and LSB_JOBINDEX=3), and the cgroup
 * directory name that identifies the job (PBS and Torque: the job id,
 * LSF: job.<id> or job.<id>[<index>]).
 */
int tr_batch_env_match (const struct tr_batch_job *job, char *buf, size_t size);
int tr_batch_cgroup_name (const struct tr_batch_job *job,
                          char *buf,
                          size_t size);

/* The identity and request objects of the job's record on node. */
json_t *tr_batch_identity (const struct tr_batch_job *job, const char *node);
json_t *tr_batch_request (const struct tr_batch_job *job);

/* Messages for tracerd (proto.h).  start: pid is a process of the job
 * (0: none yet; the job is found by its environment, its session and
 * its cgroup).  end: the final word, with the outcome hint.
 */
json_t *tr_batch_start_msg (const struct tr_batch_job *job,
                            const char *node,
                            pid_t pid,
                            tr_error_t *error);
/* Add pid to the start message's attach.exclude (an end message's
 * exclude, which tracerd applies before its final reading): a process of tracer's
 * or the scheduler's own (the prologue itself, a hook's interpreter)
 * that runs in the job's session or below its starter, with all it
 * starts (qstat), and is not the job's.  -1 with errno on a bad message
 * or out of memory.
 */
int tr_batch_exclude (json_t *msg, pid_t pid);

json_t *tr_batch_end_msg (const struct tr_batch_job *job,
                          const char *node,
                          tr_error_t *error);

/* Run argv[0] (an absolute path, no shell) with stdin and stderr on
 * /dev/null and env as its whole environment, and collect at most
 * max - 1 bytes of its standard output into buf (NUL-terminated).  The
 * child is killed when timeout_ms passes.  0 when it exited 0, else -1
 * with error.
 */
int tr_batch_run (char *const argv[],
                  char *const env[],
                  int timeout_ms,
                  char *buf,
                  size_t max,
                  tr_error_t *error);

#endif /* !TRACER_BATCH_H */
