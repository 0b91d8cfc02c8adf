/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's rooms, private to the daemon: the context they share (the
 * configuration, the sources and the active steps) and what each room
 * offers the others.  tracerd.c holds main and reads as the outline;
 * each room keeps its own state and names what it exports
 * tracerd_<room>_<verb>.
 */
#ifndef TRACER_TRACERD_H
#define TRACER_TRACERD_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/node/execs.h"
#include "libtracer/node/gpu.h"
#include "libtracer/node/sampler.h"
#include "libtracer/node/taskstats.h"
#include "libtracer/record/store.h"
#include "libtracer/util/error.h"

#define MAX_STEPS 4096
/* squeue queries in flight at a time (sched.c) */
#define MAX_QUERIES 32
/* clients served at a time (server.c) */
#define MAX_CONNS 128

struct active {
    char key[600];
    tr_step_t *step;
    double next;           /* monotonic time of its next sample */
    double saved;          /* monotonic time its state was last saved */
    double snapped;        /* monotonic time of its last live snapshot */
    double created;        /* monotonic time it was created or resumed */
    bool seen;             /* its cgroup or a process was found alive */
    bool conditional;      /* recorded only if its job has another step */
    int gone;              /* consecutive checks that found neither */
    bool by_starter;       /* registered by an unprivileged job starter */
    uid_t starter_uid;     /* ... running as this user */
    bool unfiltered;       /* a task of it is outside its cgroup2 directory */
    uint64_t exits_before; /* exit events received before it started */
    bool stall_mailed;     /* its user was told it stalled (mail.on_stall) */
};

/* The daemon's context: what more than one room reads.  Each room keeps
 * the rest of its state to itself.
 */
struct tracerd {
    tr_conf_t *conf;
    int listen_fd;                 /* the hooks' socket (server.c) */
    int state_fd;                  /* <state_dir>/steps: saved steps */
    int live_fd;                   /* <state_dir>/live: snapshots */
    tr_store_t *spool;             /* node-local records (forward.c) */
    tr_taskstats_t *taskstats;     /* process exits (exits.c), or NULL */
    tr_exit_window_t *exit_window; /* exits no step took yet (exits.c) */
    tr_execs_t *execs; /* what processes were at their exec, or NULL */
    tr_gpu_t *gpu;     /* NVML, or NULL */
    struct active steps[MAX_STEPS];
    int nsteps;
};

extern struct tracerd d;

/* tracerd.c: logging and the directories of root's configuration. */

void tracerd_log (int pri, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Open (creating what is missing, with mode) a directory named by root's
 * configuration.  Returns a descriptor, or -1 with errno and error set.
 */
int tracerd_open_dir (const char *dir, mode_t mode, tr_error_t *error);

/* steps.c: the step table and the steps' saved state (state_dir). */

/* "cluster/job/step/node" of an identity into buf; -1 if it lacks one
 * or buf is too small.
 */
int tracerd_steps_key (json_t *id, char *buf, size_t size);
/* The same for a step a job starter registered: "~UID" added, so that
 * two users' starters naming one job id are two steps, and neither can
 * end, add to or take the place of the other's (tracerd_sched_vouch
 * keeps only the job owner's record).
 */
int tracerd_steps_key_as (json_t *id,
                          const uid_t *starter,
                          char *buf,
                          size_t size);
struct active *tracerd_steps_find (const char *key);
/* Index a step whose key was just set (d.steps[] holds it). */
void tracerd_steps_index (struct active *a);
/* Forget a step (its state file and snapshot stay). */
void tracerd_steps_drop (struct active *a);
/* Save a step's readings to the state dir. */
void tracerd_steps_save (struct active *a);
/* Give a step the configuration's detail options; gpus is the step's
 * request.gpus.
 */
void tracerd_steps_configure (tr_step_t *step, const char *key, json_t *gpus);
/* A step's end: its final record, then nothing of it is kept. */
void tracerd_steps_retire (struct active *a);
/* Whether a job had an unconditional step here; and note one that has. */
bool tracerd_steps_traced (json_t *id);
void tracerd_steps_note_traced (json_t *id);
/* sampling.psi_mirror, and a step's mirror directory name. */
bool tracerd_steps_mirror_wanted (void);
void tracerd_steps_mirror_name (const char *key, char *buf, size_t size);
/* Open <state_dir>, its steps/ and live/. */
void tracerd_steps_open_state (void);
/* Resume the steps a previous tracerd left in the state dir. */
void tracerd_steps_resume (void);
/* The loop's share: sample what is due (returns when the next is due),
 * retire ended steps, trim memory, sweep mirror directories.
 */
double tracerd_steps_sample (double now);
void tracerd_steps_reap (double now);
void tracerd_steps_trim (double now);
void tracerd_steps_sweep (double now);

/* sched.c: what the scheduler (squeue, scontrol) says of jobs. */

/* A Slurm step's cluster name. */
const char *tracerd_sched_cluster (void);
/* Set an identity's cluster where the daemon decides it. */
void tracerd_sched_default_cluster (json_t *id);
/* A new step: give it what the controller said of its job, or ask. */
void tracerd_sched_describe (tr_step_t *step, const char *key, json_t *id);
/* A step's final record: true when the record waits for the scheduler's
 * answer (the query took the reference), false when the caller writes
 * it.
 */
bool tracerd_sched_hold (tr_step_t *step, json_t *rec, bool signalled);
/* daemon.job_starters: a starter's word is not the scheduler's.
 * tracerd_sched_ask_owner asks bjobs who owns the LSF job a starter's
 * new step names; tracerd_sched_vouch takes a starter's final record:
 * 0, the job is the step's uid's, running here (the caller goes on);
 * 1, taken (held for bjobs' answer, then kept or dropped, or dropped
 * now: the log says why).  tracerd_sched_vouched: a step root
 * registered, or one whose job LSF says is its uid's.
 * tracerd_sched_lsf_other_owner: LSF said the job is another uid's.
 */
void tracerd_sched_ask_owner (const struct active *a);
int tracerd_sched_vouch (struct active *a, json_t *rec);
bool tracerd_sched_vouched (const struct active *a);
bool tracerd_sched_lsf_other_owner (const char *job, uid_t uid);
/* The queries' descriptors into pfd (MAX_QUERIES at most), next lowered
 * to their deadlines; returns how many.  tracerd_sched_poll takes the
 * same pfd after poll.
 */
int tracerd_sched_fds (struct pollfd *pfd, double *next);
void tracerd_sched_poll (struct pollfd *pfd, double now);
/* At stop: the held records are written as their tasks show them. */
void tracerd_sched_stop (void);

/* forward.c: the spool, the records that wait for it, and the forwarder
 * that copies the spool to the store.
 */

int tracerd_forward_open (void);
/* At start: the pending dir, the drop counters, and the records a
 * previous tracerd could not spool.
 */
void tracerd_forward_resume (void);
/* Sign, check and spool a final record; takes the reference. */
void tracerd_forward_record (const char *key, json_t *rec);
/* The forwarder's pipe (or -1), next lowered to when it is slow. */
int tracerd_forward_fd (double *next);
void tracerd_forward_reap (double now);
void tracerd_forward_retry (double now);
void tracerd_forward_live_pass (double now);
void tracerd_forward_spool (double now);
/* Lower next to when forwarding, the pending records or the live pass
 * are due.
 */
void tracerd_forward_next (double now, double *next);
void tracerd_forward_stop (void);

/* exits.c: process exits from the kernel (taskstats) and its filter. */

uint64_t tracerd_exits_received (void);
/* Set the kernel filter to the active steps' directories. */
void tracerd_exits_filter (void);
/* Hold the filter as it is (while steps are resumed), or release it. */
void tracerd_exits_hold (bool held);
/* Offer every exit the kernel reported so far. */
void tracerd_exits_drain (void);
/* The loop's share: the descriptor to poll (wake lowered while exits
 * wait), and a slice of offering.
 */
int tracerd_exits_poll_fd (double now, double *wake);
bool tracerd_exits_waiting (void);
void tracerd_exits_slice (bool readable);
/* The steps' processes at their exec (the process connector). */
void tracerd_execs_open (void);
void tracerd_execs_close (void);
int tracerd_execs_fd (double now, double *wake);
void tracerd_execs_read (void);

/* evidence.c: the kernel log (/dev/kmsg) and eBPF file evidence. */

void tracerd_evidence_open (void);
void tracerd_evidence_reload (void);
void tracerd_evidence_close (void);
/* Follow the active steps' cgroup directories. */
void tracerd_evidence_sync (void);
/* The record's files member of step a. */
void tracerd_evidence_attach (struct active *a, json_t *rec);
/* Before a step's record: the kernel's lines so far, offered. */
void tracerd_evidence_settle (void);
/* The kernel log's descriptor (or -1), wake lowered for held lines. */
int tracerd_evidence_fd (double *wake);
void tracerd_evidence_read (void);
/* Offer held lines again when due or when clients were served. */
void tracerd_evidence_retry (bool clients);

/* server.c: the socket the hooks' requests come to. */

int tracerd_server_open (void);
/* Close connections past their deadline; returns the earliest left (or
 * later).
 */
double tracerd_server_expire (double now, double later);
/* The connections' descriptors into pfd (MAX_CONNS at most); returns
 * how many.  Connection i is served by tracerd_server_serve (i).
 */
int tracerd_server_fds (struct pollfd *pfd);
void tracerd_server_serve (int i);
void tracerd_server_accept (double now);
void tracerd_server_close (void);

/* textfile.c: the running steps for node_exporter (daemon.textfile_dir). */

struct tr_openmetrics_step;
/* Whether the live pass must run for the textfile: one is configured,
 * or a file is left to remove.
 */
bool tracerd_textfile_due (void);
/* The file with these steps (none: a file without samples); removes the
 * file of a directory the configuration no longer names.
 */
void tracerd_textfile_write (const struct tr_openmetrics_step *steps, size_t n);
/* At stop: the file removed. */
void tracerd_textfile_stop (void);

/* notice.c: mail to users whose step stalled (mail.on_stall). */

void tracerd_notice_stall (struct active *a);
void tracerd_notice_reap (void);
void tracerd_notice_stop (void);

#endif /* !TRACER_TRACERD_H */
