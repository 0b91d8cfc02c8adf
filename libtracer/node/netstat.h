/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_NETSTAT_H
#define TRACER_NETSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

/* Entries kept per snapshot; further ones are dropped (truncated). */
#define TR_NETSTAT_MAX_IFACES 64
#define TR_NETSTAT_MAX_IB 32

/* Longest interface or InfiniBand device name kept (IFNAMSIZ is 16,
 * IB_DEVICE_NAME_MAX 64); longer names are malformed input.
 */
#define TR_NETSTAT_NAME_MAX 64

/* Cumulative counters of one interface from /proc/PID/net/dev. */
struct tr_netstat_iface {
    char name[TR_NETSTAT_NAME_MAX];
    uint64_t rx_bytes, rx_packets;
    uint64_t tx_bytes, tx_packets;
};

/* Cumulative counters of one InfiniBand port, bytes already multiplied
 * out of sysfs's 4-byte units.
 */
struct tr_netstat_ib {
    char device[TR_NETSTAT_NAME_MAX];
    unsigned int port;
    uint64_t rx_bytes, rx_packets;
    uint64_t tx_bytes, tx_packets;
};

/* A snapshot of a process's network namespace (interfaces, in the
 * kernel's order) and of the node's InfiniBand ports (sorted by device,
 * then port).
 */
struct tr_netstat {
    size_t niface;
    bool iface_truncated;
    struct tr_netstat_iface iface[TR_NETSTAT_MAX_IFACES];
    size_t nib;
    bool ib_truncated;
    struct tr_netstat_ib ib[TR_NETSTAT_MAX_IB];
};

/* What the interface counters of a process cover. */
enum tr_netstat_scope {
    TR_NETSTAT_SCOPE_NODE = 0,      /* the node's own network namespace */
    TR_NETSTAT_SCOPE_NAMESPACE = 1, /* a namespace of its own */
};

/* Parse /proc/PID/net/dev text into the interface part of out (the IB
 * part is left as it is).  The two header lines (they contain '|') are
 * skipped; each further line is "name: 8 rx counters 8 tx counters".
 * The name ends at the last ':' of the line, so a name containing ':'
 * is kept whole; more than 16 counters are tolerated.  Returns 0, or -1
 * with errno = EINVAL (empty text, a line without ':', an empty or too
 * long name, fewer than 16 counters, a non-numeric counter, a repeated
 * name) or ERANGE (a counter beyond 64 bits); out is untouched on
 * failure.
 */
int tr_netstat_parse_dev (const char *text, struct tr_netstat *out);

/* Read /proc/<pid>/net/dev through the fsroot into the interface part
 * of out.  Returns 0, or -1 with errno from open/read or the parser.
 */
int tr_netstat_read_dev (pid_t pid, struct tr_netstat *out);

/* Read the port counters of every InfiniBand device under the fsroot's
 * /sys/class/infiniband/<dev>/ports/<port>/counters/ (port_xmit_data,
 * port_rcv_data: 4-byte units, multiplied by 4 here; port_xmit_packets,
 * port_rcv_packets) into the IB part of out.  A node without InfiniBand
 * gives 0 ports; ports without counters (port_xmit_data absent) are
 * skipped.  Returns 0, or -1 with errno (EINVAL or ERANGE for a
 * malformed counter, or one too large to multiply by 4); out is
 * untouched on failure.
 */
int tr_netstat_read_ib (struct tr_netstat *out);

/* Decide whether pid shares the node's network namespace: compares the
 * inode of /proc/<pid>/ns/net with that of /proc/1/ns/net (through the
 * fsroot, with stat()).  Where pid 1 is hidden or refused (hidepid=,
 * containers: ENOENT, EACCES, EPERM), the caller's own /proc/self/ns/net
 * stands in for the node's.  Returns 0 with *scope set, or -1 with
 * errno from stat (ENOENT: the process is gone).
 */
int tr_netstat_scope (pid_t pid, enum tr_netstat_scope *scope);

/* "node" or "namespace" (the summary.network "scope" values). */
const char *tr_netstat_scope_str (enum tr_netstat_scope scope);

/* Take a whole snapshot for pid: tr_netstat_read_dev, then
 * tr_netstat_read_ib.  Returns 0 or -1 with errno; out is untouched on
 * failure.
 */
int tr_netstat_snapshot (pid_t pid, struct tr_netstat *out);

/* Sum received and transmitted bytes of a snapshot over its interfaces
 * except "lo" and, with include_ib, its InfiniBand ports (saturating;
 * for rates in series).  IPoIB traffic shows on both an ib* interface
 * and its port, so include_ib counts it twice.  Outputs may be NULL.
 */
void tr_netstat_totals (const struct tr_netstat *snap,
                        bool include_ib,
                        uint64_t *rx_bytes,
                        uint64_t *tx_bytes);

/* Build summary.network from two snapshots:
 *     {"scope": "node"|"namespace", "source": "proc-net-dev",
 *      "interfaces": [{"name", "rx_bytes", "tx_bytes", "rx_packets",
 *                      "tx_packets"}, ...],
 *      "infiniband": [{"device", "port", "rx_bytes", "tx_bytes",
 *                      "rx_packets", "tx_packets"}, ...]}
 * Every interface (but "lo") and port of end is listed with end - start:
 * one only in end counts from 0, a counter that went backwards (an
 * interface re-created) gives 0.  start may be NULL (all from 0).
 * Returns a new reference, or NULL with errno = EINVAL (NULL end or bad
 * scope) or ENOMEM.
 */
json_t *tr_netstat_json (enum tr_netstat_scope scope,
                         const struct tr_netstat *start,
                         const struct tr_netstat *end);

#endif /* !TRACER_NETSTAT_H */
