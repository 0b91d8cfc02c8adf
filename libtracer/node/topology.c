/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The node's hardware topology for host.topology, and what a step's cpu
 * list covers of it.  Loading a topology reads hundreds of sysfs files,
 * so it is done once per process and shared; tests substitute an XML
 * export with HWLOC_XMLFILE.  The nominal CPU frequency is not in hwloc:
 * cpufreq's cpuinfo_max_freq is the rated maximum, while the "cpu MHz"
 * of /proc/cpuinfo (used when there is no cpufreq, as in most VMs) is a
 * recent reading.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <hwloc.h>

#include "libtracer/util/fsroot.h"
#include "topology.h"

#define CPUFREQ_MAX "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"

/* No CPU runs at a terahertz; a larger figure is garbage. */
#define MHZ_MAX 1000000

static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_topology_t topo; /* guarded by topo_lock */

/* Parse a CPU number at *p (digits only, at most TR_CPULIST_MAX_CPU). */
static int parse_cpu (const char **p, unsigned *cpu)
{
    const char *s = *p;
    unsigned v = 0;

    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (unsigned)(*s - '0');
        if (v > TR_CPULIST_MAX_CPU)
            return -1;
        s++;
    }
    *cpu = v;
    *p = s;
    return 0;
}

/* Parse a kernel cpu list into set (emptied first). */
static int cpulist_parse (const char *list, hwloc_bitmap_t set)
{
    const char *p = list;

    hwloc_bitmap_zero (set);
    if (!list) {
        errno = EINVAL;
        return -1;
    }
    if (*p == '\0' || !strcmp (p, "\n"))
        return 0;
    for (;;) {
        unsigned first, last;

        if (parse_cpu (&p, &first) < 0)
            goto invalid;
        last = first;
        if (*p == '-') {
            p++;
            if (parse_cpu (&p, &last) < 0 || last < first)
                goto invalid;
        }
        if (hwloc_bitmap_set_range (set, first, (int)last) < 0) {
            errno = ENOMEM;
            return -1;
        }
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\n')
            p++;
        if (*p == '\0')
            return 0;
        goto invalid;
    }
invalid:
    errno = EINVAL;
    return -1;
}

int tr_cpulist_count (const char *list)
{
    hwloc_bitmap_t set;
    int n, saved;

    if (!(set = hwloc_bitmap_alloc ())) {
        errno = ENOMEM;
        return -1;
    }
    n = cpulist_parse (list, set) < 0 ? -1 : hwloc_bitmap_weight (set);
    saved = errno;
    hwloc_bitmap_free (set);
    errno = saved;
    return n;
}

/* The nominal maximum frequency in MHz, or 0 when unknown. */
static int cpu_mhz (void)
{
    char path[PATH_MAX], buf[64], *end, *line = NULL;
    size_t cap = 0;
    ssize_t n;
    FILE *f;
    int fd, mhz = 0;

    if (tr_fsroot_path (path, sizeof (path), CPUFREQ_MAX) == 0
        && (fd = open (path, O_RDONLY | O_CLOEXEC)) >= 0) {
        n = read (fd, buf, sizeof (buf) - 1);
        close (fd);
        if (n > 0) {
            unsigned long long khz;

            buf[n] = '\0';
            errno = 0;
            khz = strtoull (buf, &end, 10);
            if (!errno && end != buf && buf[0] >= '0' && buf[0] <= '9'
                && (*end == '\n' || *end == '\0') && khz > 0
                && khz / 1000 < MHZ_MAX)
                return (int)((khz + 500) / 1000);
        }
    }
    if (tr_fsroot_path (path, sizeof (path), "/proc/cpuinfo") < 0
        || !(f = fopen (path, "re")))
        return 0;
    while (getline (&line, &cap, f) > 0) {
        const char *p = line;
        double v;

        if (strncmp (p, "cpu MHz", 7) != 0)
            continue;
        p += 7;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p++ != ':')
            continue;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            break;
        errno = 0;
        v = strtod (p, &end);
        if (!errno && end != p && (*end == '\n' || *end == '\0') && v >= 0.5
            && v < MHZ_MAX)
            mhz = (int)(v + 0.5);
        break;
    }
    free (line);
    fclose (f);
    return mhz;
}

/* Caches and I/O devices are not reported: skip discovering them. */
static int skip_unused (hwloc_topology_t t)
{
    enum hwloc_type_filter_e none = HWLOC_TYPE_FILTER_KEEP_NONE;

    if (hwloc_topology_set_io_types_filter (t, none) < 0
        || hwloc_topology_set_cache_types_filter (t, none) < 0
        || hwloc_topology_set_icache_types_filter (t, none) < 0)
        return -1;
    return 0;
}

/* Load the topology unless cached.  Called with topo_lock held. */
static int load (tr_error_t *error)
{
    unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
    hwloc_topology_t t;
    int saved;

    if (topo)
        return 0;
    if (hwloc_topology_init (&t) < 0)
        return tr_errprintf (error, "hwloc: %s", strerror (errno));
    /* Describe the node, not the cpuset of whoever asks. */
    if (hwloc_topology_set_flags (t, flags) < 0 || skip_unused (t) < 0
        || hwloc_topology_load (t) < 0) {
        saved = errno;
        hwloc_topology_destroy (t);
        errno = saved;
        return tr_errprintf (error, "hwloc: cannot load the topology: %s",
                             strerror (errno));
    }
    topo = t;
    return 0;
}

void tr_topology_reset (void)
{
    pthread_mutex_lock (&topo_lock);
    if (topo) {
        hwloc_topology_destroy (topo);
        topo = NULL;
    }
    pthread_mutex_unlock (&topo_lock);
}

static int count_type (hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type (topo, type);

    return n < 0 ? 0 : n;
}

/* Objects of type whose cpuset meets set. */
static int count_touched (hwloc_obj_type_t type, hwloc_const_bitmap_t set)
{
    hwloc_obj_t obj = NULL;
    int n = 0;

    while ((obj = hwloc_get_next_obj_by_type (topo, type, obj)))
        if (obj->cpuset && hwloc_bitmap_intersects (obj->cpuset, set))
            n++;
    return n;
}

static json_t *bound_json (const char *cpulist, tr_error_t *error)
{
    hwloc_bitmap_t set;
    json_t *o = NULL;
    int cores, pus, sockets, numa, saved;

    if (!(set = hwloc_bitmap_alloc ())) {
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    if (cpulist_parse (cpulist, set) < 0) {
        tr_errprintf (error, "invalid cpu list");
        goto out;
    }
    cores = count_touched (HWLOC_OBJ_CORE, set);
    pus = count_touched (HWLOC_OBJ_PU, set);
    sockets = count_touched (HWLOC_OBJ_PACKAGE, set);
    numa = count_touched (HWLOC_OBJ_NUMANODE, set);
    o = json_pack ("{s:i, s:i, s:i, s:i}", "cores", cores, "pus", pus,
                   "sockets", sockets, "numa_nodes", numa);
    if (!o) {
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
    }
out:
    saved = errno;
    hwloc_bitmap_free (set);
    errno = saved;
    return o;
}

/* Build the object; called with topo_lock held and topo loaded. */
static json_t *build (const char *cpulist, tr_error_t *error)
{
    hwloc_uint64_t mem = hwloc_get_root_obj (topo)->total_memory;
    int sockets = count_type (HWLOC_OBJ_PACKAGE);
    int cores = count_type (HWLOC_OBJ_CORE);
    int pus = count_type (HWLOC_OBJ_PU);
    int numa = count_type (HWLOC_OBJ_NUMANODE);
    json_t *o, *bound;
    int mhz;

    if (mem > INT64_MAX)
        mem = INT64_MAX;
    o = json_pack ("{s:s, s:i, s:i, s:i, s:i, s:I}", "source", "hwloc",
                   "sockets", sockets, "cores", cores, "pus", pus, "numa_nodes",
                   numa, "mem_bytes", (json_int_t)mem);
    if (!o)
        goto nomem;
    if ((mhz = cpu_mhz ()) > 0
        && json_object_set_new (o, "cpu_mhz", json_integer (mhz)) < 0)
        goto nomem;
    if (cpulist) {
        if (!(bound = bound_json (cpulist, error))) {
            int saved = errno;
            json_decref (o);
            errno = saved;
            return NULL;
        }
        if (json_object_set_new (o, "bound", bound) < 0)
            goto nomem;
    }
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    tr_errprintf (error, "out of memory");
    return NULL;
}

json_t *tr_topology_json (const char *cpulist, tr_error_t *error)
{
    json_t *o = NULL;
    int saved;

    pthread_mutex_lock (&topo_lock);
    if (load (error) == 0)
        o = build (cpulist, error);
    saved = errno;
    pthread_mutex_unlock (&topo_lock);
    errno = saved;
    return o;
}
