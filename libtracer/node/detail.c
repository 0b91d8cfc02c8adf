/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Step detail beyond the CPU and memory totals.  Each source is labelled
 * in the record with where it came from and whether it is exact:
 *
 * - pressure: PSI totals of a cgroup2 directory that belongs to the step
 *   alone (a v2 step cgroup, or tracer's mirror directory on a hybrid
 *   host); never the directory of a daemon that holds many steps.
 *   Without one, per-task delay accounting from taskstats.
 * - storage: io.stat of a v2 step cgroup per device, and the
 *   per-process counters of every process (procs.c).
 * - network: /proc/PID/net/dev of a task at the start and at each
 *   reading, with the scope of its namespace; InfiniBand ports.
 * - GPUs through NVML, processes and tools through procs.c, topology
 *   through hwloc.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "detail.h"
#include "libtracer/util/fsroot.h"
#include "iostat.h"
#include "netstat.h"
#include "procs.h"
#include "psi.h"
#include "series.h"
#include "libtracer/util/strbuf.h"
#include "topology.h"
#include "libtracer/record/when.h"

enum {
    S_PSI_CPU_SOME,
    S_PSI_MEM_SOME,
    S_PSI_MEM_FULL,
    S_PSI_IO_SOME,
    S_PSI_IO_FULL,
    S_IO_READ,
    S_IO_WRITE,
    S_NET_RX,
    S_NET_TX,
    S_GPU_UTIL,
    S_GPU_MEM,
    S_NPROCS,
    S_COUNT,
};

static const char *const series_names[S_COUNT] = {
    "psi_cpu_some", "psi_memory_some", "psi_memory_full", "psi_io_some",
    "psi_io_full",  "io_read_Bps",     "io_write_Bps",    "net_rx_Bps",
    "net_tx_Bps",   "gpu_util_pct",    "gpu_mem_bytes",   "nprocs",
};

static const char *const psi_files[TR_PSI_NRES] = {
    "cpu.pressure", "memory.pressure", "io.pressure",
};

/* The step's own files, kept open and reread (fsroot.h, tr_kept). */
enum {
    K_PSI_CPU,
    K_PSI_MEMORY,
    K_PSI_IO,
    K_CPU_STAT,
    K_IO_STAT,
    K_NET_DEV,
    K_COUNT,
};

#define TEXT_MAX (64 * 1024) /* io.stat and net/dev of a big node */

/* A known process is reread at most once in this many samples: its exit
 * comes exact from taskstats, so rereading only keeps live figures
 * fresh, and a small step would otherwise reread all of its processes
 * at every sample.
 */
#define REREAD_SAMPLES 10

/* Interface counters kept at their size: a whole struct tr_netstat is
 * 9 KiB, a step keeps two, and a node has a handful of interfaces.
 */
struct netcopy {
    size_t niface, nib;
    bool iface_truncated, ib_truncated;
    struct tr_netstat_iface *iface;
    struct tr_netstat_ib *ib;
};

struct tr_detail {
    bool taskstats;
    size_t proc_reads;        /* known processes reread per sample */
    size_t reread_credit;     /* rereads owed, in REREAD_SAMPLES-ths */
    bool read_all;            /* the next reading reads every process */
    bool read_reapers;        /* ... and the reapers (tr_procs_read_reapers) */
    struct tr_kept kept[K_COUNT];
    char *text;               /* the shared scratch (below) */
    struct tr_netstat *net_tmp;
    bool ib_checked, have_ib;
    const struct tr_cgroup_paths *cg; /* the caller's (detail.h) */
    bool have_cg, per_step_v2;
    pid_t task;
    char cores[1024];

    bool have_psi;
    struct tr_psi psi[TR_PSI_NRES], psi_prev[TR_PSI_NRES];
    bool delayacct_checked, delayacct_off; /* kernel.task_delayacct */

    bool have_throttle;
    uint64_t nr_throttled, throttled_usec;

    bool have_iostat;
    struct tr_iostat *io_end; /* made for a step with its own io.stat */
    uint64_t io_prev_r, io_prev_w;

    bool have_net, net_started;
    enum tr_netstat_scope scope;
    struct netcopy net_start, net_end;
    uint64_t net_prev_rx, net_prev_tx;

    tr_gpu_step_t *gpu;
    tr_procs_t *procs;
    uint64_t lost;            /* exit events the listener lost */

    struct tr_series series[S_COUNT];
    bool used[S_COUNT];
};

static int64_t now_ms (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* dir is top or a directory below it (Slurm's task_N under its step) */
static bool path_under (const char *dir, const char *top)
{
    size_t n = strlen (top);

    return n > 0 && !strncmp (dir, top, n) && (dir[n] == '\0' || dir[n] == '/');
}

/* Whether a live process is in the step's cgroup, for the process
 * table (tr_procs_set_member): 1, 0, or -1 without a cgroup.  tracer's
 * own cgroup2 mirror is not asked: processes reach it only when tracerd
 * moves them, and their v1 directories say the same.
 */
/* The cgroups of the pid looked up last, shared by every step of this
 * thread: a daemon offers an exit to each of its thousands of steps in
 * turn, and each may ask about the same parent; one read of
 * /proc/PID/cgroup answers them all.  Kept MEMBER_MEMO_S: a process
 * moved meanwhile is seen as a step's a moment later, as when a step
 * asks a moment earlier.  Keyed by the file's path (tr_fsroot applied).
 */
#define MEMBER_MEMO_S 0.1

static _Thread_local struct {
    char path[PATH_MAX];
    int rc;
    double at;
    struct tr_cgroup_paths p;
} member_memo;

static int cgroup_member (pid_t pid, void *arg)
{
    tr_detail_t *d = arg;
    const struct tr_cgroup_paths *p = &member_memo.p;
    char rel[64], path[PATH_MAX];
    double now;
    tr_error_t error;

    if (!d->have_cg)
        return -1;
    snprintf (rel, sizeof (rel), "/proc/%d/cgroup", (int)pid);
    if (tr_fsroot_path (path, sizeof (path), rel) < 0)
        return -1;
    now = tr_when_monotonic ();
    if (strcmp (member_memo.path, path) != 0
        || now - member_memo.at > MEMBER_MEMO_S || now < member_memo.at) {
        snprintf (member_memo.path, sizeof (member_memo.path), "%s", path);
        member_memo.at = now;
        member_memo.rc =
            tr_cgroup_resolve_pid (pid, false, &member_memo.p, &error);
    }
    if (member_memo.rc < 0)
        return -1;
    return path_under (p->memory, d->cg->memory)
           || path_under (p->cpuacct, d->cg->cpuacct)
           || (!d->cg->unified_is_mirror
               && path_under (p->unified, d->cg->unified));
}

/* c = n, sized to it.  Returns 0, or -1 (ENOMEM: c as it was, or
 * with its interfaces and no InfiniBand ports, marked truncated).
 */
static int net_keep (struct netcopy *c, const struct tr_netstat *n)
{
    if (n->niface != c->niface) {
        void *v = NULL;
        if (n->niface
            && !(v = realloc (c->iface, n->niface * sizeof (*c->iface))))
            return -1;
        if (!n->niface)
            free (c->iface);
        c->iface = v;
        c->niface = n->niface;
    }
    if (c->niface)
        memcpy (c->iface, n->iface, c->niface * sizeof (*c->iface));
    c->iface_truncated = n->iface_truncated;
    if (n->nib != c->nib) {
        void *v = NULL;
        if (n->nib && !(v = realloc (c->ib, n->nib * sizeof (*c->ib)))) {
            free (c->ib);
            c->ib = NULL;
            c->nib = 0;
            c->ib_truncated = true;
            return -1;
        }
        if (!n->nib)
            free (c->ib);
        c->ib = v;
        c->nib = n->nib;
    }
    if (c->nib)
        memcpy (c->ib, n->ib, c->nib * sizeof (*c->ib));
    c->ib_truncated = n->ib_truncated;
    return 0;
}

/* n = c (only the counts and the entries in use are written). */
static void net_expand (const struct netcopy *c, struct tr_netstat *n)
{
    n->niface = c->niface;
    n->nib = c->nib;
    n->iface_truncated = c->iface_truncated;
    n->ib_truncated = c->ib_truncated;
    if (c->niface)
        memcpy (n->iface, c->iface, c->niface * sizeof (*c->iface));
    if (c->nib)
        memcpy (n->ib, c->ib, c->nib * sizeof (*c->ib));
}

static void net_free (struct netcopy *c)
{
    free (c->iface);
    free (c->ib);
    memset (c, 0, sizeof (*c));
}

/* What a reading needs only while it is taken (the text of a kept
 * file, a fresh interface table) is one scratch for every detail of the
 * process, not one per step: a daemon follows thousands of steps and
 * reads them one at a time, from one thread (a detail is never read by
 * two threads at once).  Held by each detail, freed with the last.
 */
static struct {
    pthread_mutex_t lock;
    unsigned holders;
    char *text;                 /* TEXT_MAX bytes */
    struct tr_netstat *net_tmp;
} scratch = { PTHREAD_MUTEX_INITIALIZER, 0, NULL, NULL };

static int scratch_hold (tr_detail_t *d)
{
    int rc = 0;

    pthread_mutex_lock (&scratch.lock);
    if (scratch.holders == 0
        && (!(scratch.text = malloc (TEXT_MAX))
            || !(scratch.net_tmp = calloc (1, sizeof (*scratch.net_tmp))))) {
        free (scratch.text);
        scratch.text = NULL;
        rc = -1;
    }
    else {
        scratch.holders++;
        d->text = scratch.text;
        d->net_tmp = scratch.net_tmp;
    }
    pthread_mutex_unlock (&scratch.lock);
    return rc;
}

static void scratch_release (tr_detail_t *d)
{
    if (!d->text)
        return;
    pthread_mutex_lock (&scratch.lock);
    if (--scratch.holders == 0) {
        free (scratch.text);
        free (scratch.net_tmp);
        scratch.text = NULL;
        scratch.net_tmp = NULL;
    }
    pthread_mutex_unlock (&scratch.lock);
    d->text = NULL;
    d->net_tmp = NULL;
}

tr_detail_t *tr_detail_create (const struct tr_detail_opts *opts,
                               tr_error_t *error)
{
    struct tr_procs_opts po;
    tr_detail_t *d;

    if (!(d = calloc (1, sizeof (*d)))
        || scratch_hold (d) < 0) {
        tr_detail_destroy (d);
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    for (int i = 0; i < K_COUNT; i++)
        d->kept[i] = (struct tr_kept)TR_KEPT_INIT;
    d->taskstats = opts && opts->taskstats;
    /* without exit events a process's last reading is all there will
     * be: read every one every time
     */
    d->proc_reads = d->taskstats && opts ? opts->proc_reads : 0;
    memset (&po, 0, sizeof (po));
    po.cmdline_max = opts ? opts->cmdline_max : 256;
    po.exit_window = opts ? opts->exit_window : NULL;
    po.exit_names = opts ? opts->exit_names : NULL;
    po.redact = opts ? (const char *const *)opts->redact : NULL;
    if (opts) {
        po.tool_subcommands = (const char *const *)opts->tool_subcommands;
        po.tool_interpreters = (const char *const *)opts->tool_interpreters;
    }
    if (!(d->procs = tr_procs_create (&po, error))) {
        tr_detail_destroy (d);
        return NULL;
    }
    tr_procs_set_member (d->procs, cgroup_member, d);
    if (opts && opts->gpu) {
        tr_error_t gerr;
        /* a step whose GPUs cannot be resolved still gets its record */
        d->gpu = tr_gpu_step_create (opts->gpu, opts->gpu_devices, &gerr);
    }
    for (int i = 0; i < S_COUNT; i++)
        tr_series_init (&d->series[i]);
    return d;
}

void tr_detail_destroy (tr_detail_t *d)
{
    if (d) {
        int saved = errno;
        tr_detail_close (d);
        tr_procs_destroy (d->procs);
        tr_gpu_step_destroy (d->gpu);
        for (int i = 0; i < S_COUNT; i++)
            tr_series_free (&d->series[i]);
        free (d->io_end);
        net_free (&d->net_start);
        net_free (&d->net_end);
        scratch_release (d);
        free (d);
        errno = saved;
    }
}

void tr_detail_set_cgroup (tr_detail_t *d,
                           const struct tr_cgroup_paths *cg,
                           bool per_step_v2)
{
    for (int i = 0; i < K_COUNT; i++)
        if (i != K_NET_DEV)
            tr_kept_close (&d->kept[i]);
    if (!cg) {
        d->have_cg = false;
        return;
    }
    d->cg = cg;
    d->have_cg = true;
    d->per_step_v2 = per_step_v2 && cg->unified[0];
    /* io.stat counts from the cgroup's creation: no start reading */
    if (d->per_step_v2 && !cg->unified_is_mirror
        && (d->io_end
            || (d->io_end = calloc (1, sizeof (*d->io_end))) != NULL)
        && tr_iostat_read_v2 (cg->unified, d->io_end) == 0)
        d->have_iostat = true;
}

/* "Cpus_allowed_list:\t0-3,8" from /proc/PID/status. */
static void read_cores (pid_t pid, char *buf, size_t size)
{
    char path[64], full[4096], line[1024];
    FILE *f;

    buf[0] = '\0';
    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    if (tr_fsroot_path (full, sizeof (full), path) < 0
        || !(f = fopen (full, "re")))
        return;
    while (fgets (line, sizeof (line), f)) {
        if (!strncmp (line, "Cpus_allowed_list:", 18)) {
            char *v = line + 18;
            v += strspn (v, " \t");
            v[strcspn (v, "\n")] = '\0';
            if (strspn (v, "0123456789,-") == strlen (v) && *v)
                snprintf (buf, size, "%s", v);
            break;
        }
    }
    fclose (f);
}

void tr_detail_set_task (tr_detail_t *d, pid_t pid)
{
    if (d->task > 0 || pid <= 0)
        return;
    d->task = pid;
    tr_procs_add_root (d->procs, pid);
    read_cores (pid, d->cores, sizeof (d->cores));
    if (!d->net_started && tr_netstat_scope (pid, &d->scope) == 0
        && tr_netstat_snapshot (pid, d->net_tmp) == 0
        && net_keep (&d->net_start, d->net_tmp) == 0
        && net_keep (&d->net_end, d->net_tmp) == 0) {
        tr_netstat_totals (d->net_tmp, false, &d->net_prev_rx,
                           &d->net_prev_tx);
        d->have_net = true;
        d->net_started = true;
    }
}

static double rate (uint64_t now, uint64_t *prev, double dt)
{
    double r = now >= *prev ? (double)(now - *prev) / dt : 0;
    *prev = now;
    return r;
}

static void add_point (tr_detail_t *d, int which, double t, double v)
{
    tr_series_add (&d->series[which], t, v);
    d->used[which] = true;
}

static void sample_psi (tr_detail_t *d, double t, double dt)
{
    struct tr_psi now[TR_PSI_NRES];

    if (!d->have_cg || !d->per_step_v2)
        return;
    for (int i = 0; i < TR_PSI_NRES; i++)
        if (tr_kept_read (&d->kept[K_PSI_CPU + i], d->cg->unified,
                          psi_files[i], d->text, TEXT_MAX) < 0
            || tr_psi_parse (d->text, &now[i]) < 0)
            return;
    if (d->have_psi && dt > 0) {
        const struct {
            int series, res;
            bool full;
        } map[] = {
            { S_PSI_CPU_SOME, TR_PSI_CPU, false },
            { S_PSI_MEM_SOME, TR_PSI_MEMORY, false },
            { S_PSI_MEM_FULL, TR_PSI_MEMORY, true },
            { S_PSI_IO_SOME, TR_PSI_IO, false },
            { S_PSI_IO_FULL, TR_PSI_IO, true },
        };
        for (size_t i = 0; i < sizeof (map) / sizeof (map[0]); i++) {
            const struct tr_psi *a = &d->psi_prev[map[i].res];
            const struct tr_psi *b = &now[map[i].res];
            uint64_t x = map[i].full ? a->full_us : a->some_us;
            uint64_t y = map[i].full ? b->full_us : b->some_us;
            double f = y > x ? (double)(y - x) / (dt * 1e6) : 0;
            add_point (d, map[i].series, t, f > 1 ? 1 : f);
        }
    }
    memcpy (d->psi_prev, now, sizeof (now));
    memcpy (d->psi, now, sizeof (now));
    d->have_psi = true;
}

static void sample_cpu_extra (tr_detail_t *d)
{
    static const char *const keys[] = { "nr_throttled", "throttled_usec" };
    int64_t v[2] = { -1, -1 };

    if (d->have_cg && d->per_step_v2
        && tr_kept_read (&d->kept[K_CPU_STAT], d->cg->unified, "cpu.stat",
                         d->text, TEXT_MAX) >= 0
        && tr_cgroup_parse_keys (d->text, keys, v, 2) == 2) {
        d->nr_throttled = (uint64_t)v[0];
        d->throttled_usec = (uint64_t)v[1];
        d->have_throttle = true;
    }
}

static void sample_io (tr_detail_t *d, double t, double dt)
{
    uint64_t r = 0, w = 0;

    if (d->have_iostat) {
        if (tr_kept_read (&d->kept[K_IO_STAT], d->cg->unified, "io.stat",
                          d->text, TEXT_MAX) >= 0
            && tr_iostat_parse_v2 (d->text, d->io_end) == 0)
            tr_iostat_totals (d->io_end, &r, &w);
        else
            return;
    }
    else {
        struct tr_proc_io io;
        tr_procs_io (d->procs, &io);
        r = io.read_bytes;
        w = io.write_bytes;
    }
    if (dt > 0) {
        add_point (d, S_IO_READ, t, rate (r, &d->io_prev_r, dt));
        add_point (d, S_IO_WRITE, t, rate (w, &d->io_prev_w, dt));
    }
    else {
        d->io_prev_r = r;
        d->io_prev_w = w;
    }
}

/* The task's interface counters into net_end, and InfiniBand's when the
 * node has any (looked for once).  A failed reading leaves net_end as it
 * was.
 */
static void read_net (tr_detail_t *d)
{
    char path[64];

    snprintf (path, sizeof (path), "/proc/%d/net/dev", (int)d->task);
    if (tr_kept_read (&d->kept[K_NET_DEV], NULL, path, d->text, TEXT_MAX) < 0
        || tr_netstat_parse_dev (d->text, d->net_tmp) < 0)
        return;
    if (!d->ib_checked) {
        char ib[PATH_MAX];
        d->ib_checked = true;
        d->have_ib = tr_fsroot_path (ib, sizeof (ib), "/sys/class/infiniband")
                         == 0
                     && access (ib, F_OK) == 0;
    }
    d->net_tmp->nib = 0;
    if (d->have_ib && tr_netstat_read_ib (d->net_tmp) < 0)
        return;
    (void)net_keep (&d->net_end, d->net_tmp); /* else as it was */
}

static void sample_net (tr_detail_t *d, double t, double dt)
{
    uint64_t rx, tx;

    if (!d->have_net)
        return;
    /* Once the task is gone (always so at the final reading) its
     * namespace cannot be read: the last reading stands, as in
     * summary.network, and the interval still gets its point, because the
     * record cuts every series to the shortest one.
     */
    read_net (d);
    net_expand (&d->net_end, d->net_tmp);
    tr_netstat_totals (d->net_tmp, false, &rx, &tx);
    if (dt > 0) {
        add_point (d, S_NET_RX, t, rate (rx, &d->net_prev_rx, dt));
        add_point (d, S_NET_TX, t, rate (tx, &d->net_prev_tx, dt));
    }
}

static void sample_gpu (tr_detail_t *d,
                        const pid_t *pids,
                        size_t npids,
                        double t,
                        double dt)
{
    double util;
    uint64_t mem;

    if (!d->gpu || tr_gpu_step_sample (d->gpu, pids, npids, NULL) < 0)
        return;
    if (dt > 0 && tr_gpu_step_current (d->gpu, &util, &mem) == 0) {
        add_point (d, S_GPU_UTIL, t, util);
        add_point (d, S_GPU_MEM, t, (double)mem);
    }
}

void tr_detail_sample (tr_detail_t *d,
                       pid_t *pids,
                       size_t *npids,
                       bool same,
                       double t,
                       double dt)
{
    size_t budget = d->proc_reads, due;
    bool all = d->read_all;

    /* the last reading: every live process's figures as of the end */
    d->read_all = false;
    if (all)
        budget = 0;
    if (budget) {
        d->reread_credit += *npids;
        due = d->reread_credit / REREAD_SAMPLES;
        d->reread_credit -= due * REREAD_SAMPLES;
        if (due < budget)
            budget = due;
        /* a changed list is read for its new processes whatever is due */
        if (budget == 0 && !same)
            budget = 1;
    }
    if (!d->proc_reads || budget > 0 || all)
        (void)tr_procs_scan_some (d->procs, pids, npids, budget, same,
                                  now_ms ());
    if (d->read_reapers) {
        d->read_reapers = false;
        (void)tr_procs_read_reapers (d->procs, now_ms ());
    }
    sample_psi (d, t, dt);
    /* delay accounting off at the start leaves early exits without
     * their I/O and memory delay
     */
    if (!d->delayacct_checked && !d->have_psi && d->taskstats) {
        d->delayacct_checked = true;
        d->delayacct_off = tr_delayacct_state () == 0;
    }
    sample_cpu_extra (d);
    sample_io (d, t, dt);
    sample_net (d, t, dt);
    sample_gpu (d, pids, *npids, t, dt);
    if (dt > 0)
        add_point (d, S_NPROCS, t, (double)*npids);
}

int tr_detail_exclude (tr_detail_t *d, pid_t pid)
{
    return tr_procs_exclude (d->procs, pid);
}

uint64_t tr_detail_excluded_us (tr_detail_t *d)
{
    return tr_procs_excluded_us (d->procs);
}

void tr_detail_read_all (tr_detail_t *d)
{
    d->read_all = true;
}

void tr_detail_read_reapers (tr_detail_t *d)
{
    d->read_reapers = true;
}

int tr_detail_set_reaped (tr_detail_t *d,
                          const pid_t *pids,
                          size_t n,
                          uint64_t cpu_us,
                          uint64_t user_us)
{
    return tr_procs_set_reaped (d->procs, pids, n, cpu_us, user_us);
}

bool tr_detail_cpu (tr_detail_t *d, uint64_t *total_us, uint64_t *user_us)
{
    bool exact = tr_procs_cpu (d->procs, total_us, user_us);

    /* without exit events an ended process keeps its last reading */
    return exact && d->taskstats;
}

void tr_detail_close (tr_detail_t *d)
{
    for (int i = 0; i < K_COUNT; i++)
        tr_kept_close (&d->kept[i]);
}

uint64_t tr_detail_rss (tr_detail_t *d)
{
    return tr_procs_rss (d->procs);
}

int tr_detail_exit (tr_detail_t *d, const struct tr_exit *ev)
{
    return tr_procs_exit (d->procs, ev);
}

json_t *tr_detail_culprit (tr_detail_t *d, int64_t step_end_ms)
{
    return d ? tr_procs_culprit_json (d->procs, step_end_ms) : NULL;
}

void tr_detail_exits_lost (tr_detail_t *d, uint64_t n)
{
    d->lost += n;
    tr_procs_set_lost (d->procs, d->lost);
}

static int set_new (json_t *o, const char *key, json_t *v)
{
    if (!v)
        return -1;
    return json_object_set_new (o, key, v);
}

static int cpu_extra_json (tr_detail_t *d, json_t *cpu)
{
    int n;

    if (d->cores[0]) {
        if (set_new (cpu, "cores", json_string (d->cores)) < 0)
            return -1;
        if ((n = tr_cpulist_count (d->cores)) >= 0
            && set_new (cpu, "ncores", json_integer (n)) < 0)
            return -1;
    }
    if (d->have_throttle
        && (set_new (cpu, "throttled_periods",
                     json_integer ((json_int_t)d->nr_throttled)) < 0
            || set_new (cpu, "throttled_s",
                        json_real ((double)d->throttled_usec / 1e6)) < 0))
        return -1;
    if (set_new (cpu, "runq_wait_s",
                 json_real (tr_procs_runq_wait_s (d->procs))) < 0
        || set_new (cpu, "runq_source",
                    json_string (d->taskstats ? "taskstats" : "schedstat"))
               < 0)
        return -1;
    return 0;
}

/* summary.pressure; *known gets the resources measured (a bit per enum
 * tr_psi_resource) and *why the reason for the others.
 */
static json_t *pressure_json (tr_detail_t *d, unsigned *known,
                              const char **why)
{
    *known = 7u;
    *why = NULL;
    if (d->have_psi)
        return tr_psi_json (d->cg->unified_is_mirror ? "cgroup2-mirror"
                                                    : "cgroup2",
                            true, d->psi);
    if (d->taskstats) {
        uint64_t delay[TR_PSI_NRES];
        /* Without delay accounting the exits' block I/O and memory
         * delays are 0 whatever happened: unknown, not 0.  The run-queue
         * delay is the scheduler's and is kept either way.
         */
        if (tr_delayacct_state () == 0)
            d->delayacct_off = true;
        if (d->delayacct_off) {
            *known = 1u << TR_PSI_CPU;
            *why = "no per-step cgroup2 directory and delay accounting "
                   "off (kernel.task_delayacct = 0)";
        }
        tr_procs_delays (d->procs, delay);
        return tr_psi_delay_json_known (tr_procs_complete (d->procs), delay,
                                        *known);
    }
    *known = 0;
    *why = "no per-step cgroup2 directory and no exit records (taskstats)";
    return NULL;
}

/* summary.network: the counters at the start and at the last reading. */
static json_t *net_json (tr_detail_t *d)
{
    struct tr_netstat *start = malloc (sizeof (*start)), *end = d->net_tmp;
    json_t *o;

    if (!start) {
        errno = ENOMEM;
        return NULL;
    }
    net_expand (&d->net_start, start);
    net_expand (&d->net_end, end);
    o = tr_netstat_json (d->scope, start, end);
    free (start);
    return o;
}

static json_t *io_json (tr_detail_t *d)
{
    struct tr_proc_io io;
    struct tr_iostat *zero;
    json_t *o;

    tr_procs_io (d->procs, &io);
    /* a v2 step cgroup counts from its creation: start from zero */
    if (!(zero = calloc (1, sizeof (*zero))))
        return NULL;
    o = tr_iostat_json (d->have_iostat ? "io.stat" : "none", zero,
                        d->have_iostat ? d->io_end : zero, &io,
                        d->taskstats ? "taskstats" : "proc",
                        tr_procs_complete (d->procs));
    free (zero);
    return o;
}

int tr_detail_record_series (tr_detail_t *d, json_t *metrics)
{
    for (int i = 0; i < S_COUNT; i++) {
        if (!d->used[i])
            continue;
        if (set_new (metrics, series_names[i],
                     tr_series_json (&d->series[i])) < 0) {
            errno = ENOMEM;
            return -1;
        }
    }
    return 0;
}

int tr_detail_series_text (tr_detail_t *d, tr_strbuf_t *sb, size_t n)
{
    for (int i = 0; i < S_COUNT; i++) {
        if (!d->used[i])
            continue;
        if (tr_strbuf_printf (sb, ",\"%s\":", series_names[i]) < 0
            || tr_series_text (sb, &d->series[i], n) < 0)
            return -1;
    }
    return 0;
}

size_t tr_detail_series_points (const tr_detail_t *d)
{
    size_t n = SIZE_MAX;

    for (int i = 0; i < S_COUNT; i++)
        if (d->used[i] && d->series[i].n < n)
            n = d->series[i].n;
    return n;
}

int tr_detail_record (tr_detail_t *d, json_t *rec)
{
    json_t *summary = json_object_get (rec, "summary");
    json_t *cpu = json_object_get (summary, "cpu");
    json_t *host = json_object_get (rec, "host");
    json_t *v;

    if (!summary || !cpu || !host)
        goto nomem;
    if (cpu_extra_json (d, cpu) < 0)
        goto nomem;
    {
        unsigned known;
        const char *why;
        if ((v = pressure_json (d, &known, &why))
            && json_object_set_new (summary, "pressure", v) < 0)
            goto nomem;
        if (tr_psi_set_unknown (summary, known, why) < 0)
            goto nomem;
    }
    if (set_new (summary, "io", io_json (d)) < 0)
        goto nomem;
    if (d->have_net && set_new (summary, "network", net_json (d)) < 0)
        goto nomem;
    if (d->gpu && set_new (summary, "gpu", tr_gpu_step_json (d->gpu)) < 0)
        goto nomem;
    if (set_new (summary, "processes",
                 tr_procs_json (d->procs,
                                d->taskstats ? "taskstats" : "proc"))
        < 0)
        goto nomem;
    if (json_object_set_new (rec, "tools", tr_procs_tools_json (d->procs))
        < 0)
        goto nomem;
    {
        /* topology is a property of the node; a failure leaves it out */
        json_t *topo = tr_topology_json (d->cores[0] ? d->cores : NULL, NULL);
        if (topo && json_object_set_new (host, "topology", topo) < 0)
            goto nomem;
    }
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

json_t *tr_detail_save (tr_detail_t *d)
{
    json_t *o, *ifs;

    if (!(o = json_object ()))
        return NULL;
    if (!d->net_started)
        return o;
    /* the network counters are node-wide and cumulative: keep the start */
    if (!(ifs = json_array ()))
        goto nomem;
    for (size_t i = 0; i < d->net_start.niface; i++) {
        const struct tr_netstat_iface *f = &d->net_start.iface[i];
        if (json_array_append_new (
                ifs, json_pack ("{s:s s:I s:I s:I s:I}", "name", f->name,
                                "rx_bytes", (json_int_t)f->rx_bytes,
                                "rx_packets", (json_int_t)f->rx_packets,
                                "tx_bytes", (json_int_t)f->tx_bytes,
                                "tx_packets", (json_int_t)f->tx_packets))
            < 0) {
            json_decref (ifs);
            goto nomem;
        }
    }
    if (json_object_set_new (o, "net_start", ifs) < 0
        || json_object_set_new (o, "net_scope", json_integer (d->scope)) < 0
        || json_object_set_new (o, "task", json_integer (d->task)) < 0)
        goto nomem;
    return o;
nomem:
    json_decref (o);
    return NULL;
}

int tr_detail_restore (tr_detail_t *d, json_t *state)
{
    json_t *ifs = json_object_get (state, "net_start"), *f;
    size_t i;

    if (!json_is_array (ifs))
        return 0;
    memset (d->net_tmp, 0, sizeof (*d->net_tmp));
    json_array_foreach (ifs, i, f)
    {
        struct tr_netstat_iface *x;
        if (d->net_tmp->niface == TR_NETSTAT_MAX_IFACES)
            break;
        x = &d->net_tmp->iface[d->net_tmp->niface];
        if (!json_is_string (json_object_get (f, "name")))
            continue;
        snprintf (x->name, sizeof (x->name), "%s",
                  json_string_value (json_object_get (f, "name")));
        x->rx_bytes = (uint64_t)json_integer_value (
            json_object_get (f, "rx_bytes"));
        x->rx_packets = (uint64_t)json_integer_value (
            json_object_get (f, "rx_packets"));
        x->tx_bytes = (uint64_t)json_integer_value (
            json_object_get (f, "tx_bytes"));
        x->tx_packets = (uint64_t)json_integer_value (
            json_object_get (f, "tx_packets"));
        d->net_tmp->niface++;
    }
    if (net_keep (&d->net_start, d->net_tmp) < 0
        || net_keep (&d->net_end, d->net_tmp) < 0) {
        errno = ENOMEM;
        return -1;
    }
    d->scope = json_integer_value (json_object_get (state, "net_scope"))
                       == TR_NETSTAT_SCOPE_NAMESPACE
                   ? TR_NETSTAT_SCOPE_NAMESPACE
                   : TR_NETSTAT_SCOPE_NODE;
    d->net_started = true;
    d->have_net = true;
    tr_netstat_totals (d->net_tmp, false, &d->net_prev_rx, &d->net_prev_tx);
    {
        json_int_t task = json_integer_value (json_object_get (state, "task"));
        if (task > 0) {
            d->task = (pid_t)task;
            tr_procs_add_root (d->procs, d->task);
            read_cores (d->task, d->cores, sizeof (d->cores));
        }
    }
    return 0;
}

void tr_detail_proc_io (tr_detail_t *d, struct tr_proc_io *out)
{
    if (!d) {
        memset (out, 0, sizeof (*out));
        return;
    }
    tr_procs_io (d->procs, out);
}

bool tr_detail_has_pid (tr_detail_t *d, pid_t pid)
{
    return d && tr_procs_has_pid (d->procs, pid);
}
