/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_TOPOLOGY_H
#define TRACER_TOPOLOGY_H

#include <jansson.h>

#include "libtracer/util/error.h"

/* Highest CPU number a cpu list may name (kernel NR_CPUS is at most
 * 8192); larger numbers are malformed input, not a reason to allocate.
 */
#define TR_CPULIST_MAX_CPU 65535

/* Build host.topology from the node's hwloc topology:
 *     {"source": "hwloc", "sockets", "cores", "pus", "numa_nodes",
 *      "mem_bytes", "cpu_mhz",
 *      "bound": {"cores", "pus", "sockets", "numa_nodes"}}
 * The topology is loaded on first use and kept for the life of the
 * process (hwloc honours HWLOC_XMLFILE, HWLOC_FSROOT and
 * HWLOC_SYNTHETIC).  Disallowed CPUs are included: this describes the
 * node, not the caller's cpuset.  cpu_mhz is the nominal maximum
 * frequency from the fsroot's
 * /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq (kHz), else the
 * first "cpu MHz" line of /proc/cpuinfo, else left out.  "bound" counts
 * the PUs in cpulist (kernel list syntax, "0-3,8") and the cores,
 * sockets and NUMA nodes holding at least one of them; cpulist NULL
 * leaves "bound" out.  Thread-safe.  Returns a new reference, or NULL
 * with errno (EINVAL: malformed cpulist; ENOMEM; or hwloc's errno when
 * the topology cannot be loaded) and error set.
 */
json_t *tr_topology_json (const char *cpulist, tr_error_t *error);

/* Drop the cached topology, so the next tr_topology_json loads it again
 * (after a CPU hotplug, or a test changing HWLOC_XMLFILE).  Thread-safe.
 */
void tr_topology_reset (void);

/* Count the distinct CPUs of a kernel cpu list ("0-3,8"; an empty list,
 * as an empty cpuset.cpus reads, is 0; one trailing newline is allowed).
 * Returns the count, or -1 with errno = EINVAL for a malformed list
 * (reversed range, empty element, sign, blank, CPU number above
 * TR_CPULIST_MAX_CPU) or ENOMEM.
 */
int tr_cpulist_count (const char *list);

#endif /* !TRACER_TOPOLOGY_H */
