/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_PROTO_H
#define TRACER_PROTO_H

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/util/error.h"

/* The hook -> tracerd protocol: one JSON object per message over a
 * SOCK_SEQPACKET unix socket (message boundaries for free).  Hooks send
 *   {"op":"step_start", "identity":{...}, "request":{...}, "tags":{...},
 *    "task_id":N, "pid":P, "interval_s":S}      (once per task)
 * with, for schedulers that name no task pid's cgroup (LSF, PBS), an
 * optional "attach" member: {"cgroup":"/lsf/cl/job.42"} (as in
 * /proc/PID/cgroup), {"tree":true} (pid and its descendants) or
 * {"session":S, "env":"NAME=VALUE"} (a process set); pid may then be 0.
 * Optional too: "gpus":"0,1" (the GPU indices bound to the step) and
 * "conditional":true (record the step only if another step of its job is
 * traced on the node: Slurm's extern step, which cannot see --tracer).
 *   {"op":"task_exit", "identity":{"cluster":C, "job_id":J,
 *    "step_id":S, "node":N, ...}, "task_id":N, "pid":P, "wait_status":W,
 *    "last":true|false}
 *   {"op":"step_end", "identity":{...}}   (a step with no task exits to
 *    wait for, or whose tasks did not all report: finish it now)
 * An end may carry what a batch system's epilogue knows better than its
 * prologue: identity and request members not yet set, and "outcome":
 * {"state":S, "exit_code":N, "signal":N, "reason":R} from the job's exit
 * status.  With a process set, "attach" may also name "cgroup_name":
 * the job's own cgroup directory ("7.srv", "job.42"), followed instead
 * once a member turns up in it (libtracer/node/batch.h), and "exclude":
 * [PID,...], the sender's own processes in the job's session or below
 * its starter (a PBS prologue, a hook's pbs_python), which with their
 * descendants are never the job's; taken from root only.
 *   {"op":"ping"}
 * and the daemon answers {"ok":true} or {"ok":false,"error":"..."}.
 * The daemon checks the peer with SO_PEERCRED.  Every call is bounded by
 * a timeout so a hung daemon never holds a job.
 *
 * Every request also says when it was sent and how long its caller
 * waits for the answer: "sent_s" (seconds on CLOCK_BOOTTIME, which the
 * daemon on the same host reads too, and which goes on while the host
 * is suspended or a process is stopped) and "timeout_ms".  A daemon that
 * was stopped, swapped out or stuck, and reads a request only after its
 * caller has given up, must not act on it as if it were fresh: the hook
 * went on as if untraced (tr_proto_stale).  A request without them (an
 * older hook) counts as fresh.
 */
#define TR_PROTO_MAX_MSG (64 * 1024)

/* Connect to the daemon socket at path, with send/receive timeouts of
 * timeout_ms.  Returns an fd or -1 with errno and error text.
 */
int tr_proto_connect (const char *path, int timeout_ms, tr_error_t *error);

/* Send msg as one datagram.  Returns 0 or -1. */
int tr_proto_send (int fd, json_t *msg, tr_error_t *error);

/* Receive one message (bounded by TR_PROTO_MAX_MSG).  Returns a new
 * reference, or NULL with errno (EAGAIN on timeout, ECONNRESET on EOF).
 */
json_t *tr_proto_recv (int fd, tr_error_t *error);

/* Now on the clock of "sent_s" (CLOCK_BOOTTIME), in seconds. */
double tr_proto_clock (void);

/* Whether msg was read too late: more than its "timeout_ms" after its
 * "sent_s", at now (tr_proto_clock).  *late (if not NULL) is how long
 * ago it was sent, in seconds (0 when msg does not say).
 */
bool tr_proto_stale (json_t *msg, double now, double *late);

/* Connect, send msg, wait for the reply, close.  msg (an object) gains
 * "sent_s" and "timeout_ms" unless it has them already.  Returns 0 when the
 * daemon answered {"ok":true}; -1 otherwise, with error text.  If reply
 * is not NULL the reply (new reference) is stored there.
 */
int tr_proto_request (const char *path,
                      json_t *msg,
                      int timeout_ms,
                      json_t **reply,
                      tr_error_t *error);

#endif /* !TRACER_PROTO_H */
