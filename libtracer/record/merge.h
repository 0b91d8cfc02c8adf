/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_MERGE_H
#define TRACER_MERGE_H

#include <stdbool.h>

#include <jansson.h>

#include "states.h"

/* Merged views of multi-node steps.  A step that ran on N nodes has N
 * records (one per node, same cluster, job_id and step_id); this module
 * groups records into steps and adds them up into one view per step,
 * keeping every node's own figures beside the totals.
 */

/* Natural order of two strings: runs of decimal digits compare by their
 * numeric value ("node2" < "node10", "trnode1" < "trnode2"), everything
 * else bytewise.  Equal values spelt differently ("07" and "7") are
 * ordered by the fewer leading zeros first, then bytewise, so the order
 * is total and 0 means equal strings.  NULL sorts as "".
 */
int tr_merge_natcmp (const char *a, const char *b);

/* Order of step ids: "batch", "extern", "interactive", then ids starting
 * with a digit ("0", "1", "0+1", "10") in natural order, then any other
 * id in natural order.
 */
int tr_merge_stepcmp (const char *a, const char *b);

/* The job id as sacct writes it (its JobID field) and every view shows
 * it: a Slurm array task as ARRAY_TASK ("7_3", whatever the task's own
 * job_id); PBS and Torque name the subjob in its own id ("7[3].srv") and
 * LSF its element ("209[1]"), so theirs is job_id; a heterogeneous job's
 * component as LEADER+N ("7+1"); else job_id.  array_task_id and
 * het_component are NAN when unknown; NULL strings read as "".  Writes
 * into buf (size bytes, truncated); returns buf.
 */
const char *tr_merge_jobid (char *buf,
                            size_t size,
                            const char *scheduler,
                            const char *job_id,
                            const char *array_job_id,
                            double array_task_id,
                            const char *het_job_id,
                            double het_component);

/* Order of records by identity, the order every view lists them in:
 * cluster (bytewise), the job id as shown (tr_merge_jobid, natural: an
 * array's tasks by index, "5_9" before "5_10"), job_id (natural),
 * step_id (tr_merge_stepcmp), node (natural).
 */
int tr_merge_cmp_identity (json_t *ra, json_t *rb);

/* Cores the scheduler granted a step on one node (a record's request
 * object): request.cpus_on_node, else cpus_per_task * tasks_on_node,
 * else 0 for "unknown".
 */
double tr_merge_request_cores (json_t *request);

/* Group recs (an array of records, normally validated, any mix of
 * clusters, jobs, steps and nodes) into steps by (cluster, job_id,
 * step_id) and merge each.  Records of different steps are never merged.
 * Returns a new reference to an array of step objects, sorted by
 * cluster, job (as shown) and step as tr_merge_cmp_identity sorts their
 * first records (nodes whose records disagree on the array still
 * merge: a step is its cluster, job_id and step_id); the objects
 * share (hold references to) parts of the records.  Returns NULL with
 * errno = EINVAL when recs is not an array of objects, ENOMEM when out
 * of memory.
 *
 * A step object has these members; "opt." ones are left out when no
 * record of the step has the value, never written as 0:
 *
 *   cluster, job_id, step_id   strings, the step's identity
 *   step_name                  opt., the first record that has one
 *   nodes                      distinct node names, natural order
 *   nodes_reported             how many distinct nodes have a record
 *   nodes_expected             opt., the largest request.nodes of the
 *                              step's records (the scheduler's count)
 *   nodes_missing              opt., nodes_expected - nodes_reported
 *                              when that is > 0: a node whose record is
 *                              missing is visible, not merged away
 *   missing_node_indices       opt., the node indices below
 *                              nodes_expected that no record has (only
 *                              when every record has a node_index)
 *   rows                       one object per record, natural node
 *                              order (below)
 *   start_unix_ms              earliest start over the nodes
 *   end_unix_ms                opt., latest end; left out when a node's
 *                              record has no end (a running snapshot)
 *   elapsed_s                  the longest node's elapsed time
 *   cpu        {user_s, system_s, total_s: sums over the nodes;
 *               exact: true when every node's CPU is exact;
 *               source: the nodes' sources, distinct, joined by "; ";
 *               cores (opt.): allocated cores summed over the nodes,
 *               only when every node's are known;
 *               efficiency (opt.): total_s / (elapsed_s * cores), a
 *               fraction (1.0 = every allocated core busy throughout)}
 *   memory     {peak_max_bytes: the largest per-node peak, and
 *               peak_max_node: its node; request_bytes (opt.): that
 *               node's request.mem_bytes (a memory request applies per
 *               node, so the biggest node's peak is what to compare it
 *               with); peak_sum_bytes: the per-node peaks added up (an
 *               upper bound of the step's simultaneous use, the peaks
 *               need not coincide); exact: every node's peak is exact;
 *               source, definition: distinct values joined by "; "}
 *   io         opt., summary.io added up over the nodes that have it:
 *               nodes (opt., how many nodes had device counters; a node
 *               whose io.source is "none" had none, and its zeros are
 *               not added), source, read_bytes, write_bytes, read_ops,
 *               write_ops (each opt.), and proc (opt.) with the sums of
 *               its counters, nodes, source and exact.  Per-device
 *               counters are not merged (a device number names a
 *               different disk on every node).
 *   network    opt., summary.network over the nodes that have it:
 *               nodes, scope ("namespace", "node" or "mixed"),
 *               namespace_nodes, node_scope_nodes, source, and
 *               rx_bytes, tx_bytes, rx_packets, tx_packets summed over
 *               the interfaces of the namespace-scoped nodes only:
 *               node-scoped counters count the whole node's traffic,
 *               shared with other work, and InfiniBand counters are
 *               always node-wide, so neither is added up.
 *   tasks                      tasks over the nodes (outcome.tasks)
 *   task_list                  the nodes' outcome.tasks, concatenated in
 *                              row order
 *   tools                      opt., the nodes' tools merged by name:
 *                              count, cpu_s, read_bytes, write_bytes,
 *                              runq_wait_s summed; peak_rss_bytes max;
 *                              first_start_unix_ms min;
 *                              last_end_unix_ms max; exit_codes and
 *                              signals summed per key; exact only when
 *                              every row was exact; nodes (how many
 *                              nodes ran it).  Largest cpu_s first, then
 *                              by name.  "(other)" rows of several nodes
 *                              merge too, though they sum different
 *                              programs.
 *   state                      the worst state (tr_states_rank)
 *   exit_code                  opt., the largest exit code
 *   signal                     opt., the first non-zero signal in row
 *                              order
 *   complete                   true when every node's record is
 *   exact                      true when every node's CPU and memory are
 *
 * A row:
 *   index        the record's position in recs (for per-record notes)
 *   node, node_index (opt.)
 *   counted      false for a second record of the same node (the same
 *                file given twice, a snapshot beside the final record);
 *                such rows are listed but left out of every total.  The
 *                record kept is the final one, then the complete one,
 *                then the one that ended last, then the first in recs.
 *   state, exit_code (opt.), signal (opt.), complete
 *   elapsed_s    time.elapsed_s, else end - start, else 0
 *   cpu_total_s, cores (opt.), efficiency (opt., as for the step)
 *   mem_peak_bytes, mem_request_bytes (opt.)
 *   tasks
 */
json_t *tr_merge_steps (json_t *recs);

#endif /* !TRACER_MERGE_H */
