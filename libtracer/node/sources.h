/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_SOURCES_H
#define TRACER_SOURCES_H

#include <stdbool.h>

#include "libtracer/conf/conf.h"
#include "libtracer/util/strbuf.h"

/* The evidence sources of a node, as tracerd started now would have them:
 * the kernel log (/dev/kmsg: OOM victims, segfaults and traps, hung
 * tasks, block I/O, NFS and GPU Xid errors), taskstats (every process's
 * exit), pressure (PSI), the eBPF file evidence, GPUs (NVML), the mailer
 * (mail.sendmail, with mail.on_stall).  Each is available, off by the
 * configuration, or unavailable with the reason; one that the service's
 * own sandbox took away (systemd: ProtectKernelLogs= hides /dev/kmsg) is
 * a warning, since the kernel offers it.
 */
enum tr_source_state {
    TR_SOURCE_AVAILABLE,
    TR_SOURCE_OFF,         /* the configuration turns it off */
    TR_SOURCE_UNAVAILABLE, /* this host or kernel does not offer it */
    TR_SOURCE_SANDBOXED,   /* the kernel offers it, the service hides it */
};

struct tr_source {
    const char *name; /* "kernel log /dev/kmsg", ... */
    enum tr_source_state state;
    char why[160]; /* the reason, or what it gives */
};

#define TR_SOURCES_MAX 8

/* Probe every source into out[0..TR_SOURCES_MAX-1]; returns how many. */
int tr_sources_probe (const tr_conf_t *conf, struct tr_source *out);

/* "available", "off", "unavailable", "lost to the service's sandbox". */
const char *tr_sources_word (enum tr_source_state state);

/* One line a source: "evidence: NAME: available (WHY)" and the like. */
int tr_sources_describe (const struct tr_source *s, int n, tr_strbuf_t *sb);

/* Whether this process runs as a systemd service (its cgroup is a
 * ".service" directory, or systemd gave it INVOCATION_ID). */
bool tr_sources_in_service (void);

#endif /* !TRACER_SOURCES_H */
