/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The sampling engine.  Exact totals come from the step cgroup's
 * cumulative counters: CPU from cpuacct.usage{,_user,_sys} (v1, ns) or
 * cpu.stat (v2, us), peak memory from memory.max_usage_in_bytes (v1) or
 * memory.peak (v2, kernel >= 5.19; else the sampled maximum, flagged as
 * sampled).  A cgroup counts from its creation, so a reading at the last
 * task's exit covers the whole step however short it was.  Samples feed
 * a bounded series: when TR_SERIES_MAX points are full, neighbours merge
 * in pairs (min, mean, max kept), so a 7-day step stays small.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/util/fsroot.h"
#include "kmsg.h"
#include "libtracer/util/log.h"
#include "progress.h"
#include "libtracer/record/record.h"
#include "libtracer/record/states.h"
#include "detail.h"
#include "sampler.h"
#include "series.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/record/when.h"



enum attach_mode { ATTACH_NONE, ATTACH_CGROUP, ATTACH_TREE };

/* The step cgroup's counter files, kept open and reread with pread
 * (fsroot.h): a reading costs no open, no close and no allocation.
 */
enum cgdir { D_CPUACCT, D_MEMORY, D_UNIFIED, D_NONE };

enum kfile {
    K_CPUACCT_USAGE,
    K_CPUACCT_USER,
    K_CPUACCT_SYS,
    K_CPUACCT_STAT,
    K_MEM_USAGE,
    K_MEM_MAX_USAGE,
    K_MEM_LIMIT,
    K_MEM_STAT,
    K_MEM_FAILCNT,
    K_MEM_OOM,
    K_CPU_STAT,
    K_MEM_CURRENT,
    K_MEM_PEAK,
    K_MEM_MAX,
    K_MEM_MAX_PARENT,
    K_MEM_STAT2,
    K_MEM_SWAP,
    K_MEM_EVENTS,
    K_LOADAVG,
    K_COUNT,
};

static const struct {
    enum cgdir dir;
    const char *file;
} kfiles[K_COUNT] = {
    [K_CPUACCT_USAGE] = { D_CPUACCT, "cpuacct.usage" },
    [K_CPUACCT_USER] = { D_CPUACCT, "cpuacct.usage_user" },
    [K_CPUACCT_SYS] = { D_CPUACCT, "cpuacct.usage_sys" },
    [K_CPUACCT_STAT] = { D_CPUACCT, "cpuacct.stat" },
    [K_MEM_USAGE] = { D_MEMORY, "memory.usage_in_bytes" },
    [K_MEM_MAX_USAGE] = { D_MEMORY, "memory.max_usage_in_bytes" },
    [K_MEM_LIMIT] = { D_MEMORY, "memory.limit_in_bytes" },
    [K_MEM_STAT] = { D_MEMORY, "memory.stat" },
    [K_MEM_FAILCNT] = { D_MEMORY, "memory.failcnt" },
    [K_MEM_OOM] = { D_MEMORY, "memory.oom_control" },
    [K_CPU_STAT] = { D_UNIFIED, "cpu.stat" },
    [K_MEM_CURRENT] = { D_UNIFIED, "memory.current" },
    [K_MEM_PEAK] = { D_UNIFIED, "memory.peak" },
    [K_MEM_MAX] = { D_UNIFIED, "memory.max" },
    /* Slurm's v2 step limit, above the step's tasks (.../step_S/user) */
    [K_MEM_MAX_PARENT] = { D_UNIFIED, "../memory.max" },
    [K_MEM_STAT2] = { D_UNIFIED, "memory.stat" },
    [K_MEM_SWAP] = { D_UNIFIED, "memory.swap.current" },
    [K_MEM_EVENTS] = { D_UNIFIED, "memory.events" },
    /* its last field is the newest pid of the node */
    [K_LOADAVG] = { D_NONE, "/proc/loadavg" },
};

/* Slurm's task_N directories below a v1 step, whose memory.oom_control
 * counts only their own kills.
 */
#define TASK_DIRS_MAX 64

struct taskdir {
    char name[24];
    struct tr_kept oom;
};

/* The step's process list is read again (cgroup.procs of the step and
 * of its subdirectories) only when the node has made a process since the
 * last time, and then at most every PROCS_PER_REFRESH listed processes
 * samples: at 1,000 processes cgroup.procs alone costs more than all the
 * counters.  A list that grew at its last reading is read again at the
 * next sample whatever its length: the step is still making processes
 * (10,000 take seconds to start), and waiting 30 samples would leave
 * its process count short for as long.  Processes made in between are
 * found at the next refresh; their exits, and those of shorter ones,
 * come from taskstats.
 */
#define PROCS_PER_REFRESH 32
#define REFRESH_EVERY_MAX 30

/* memory.stat is the dearest counter file by far (about 10 us on a v1
 * node, as much as the other dozen together) and feeds only the summary's
 * breakdown of the current memory (anon, file, shmem, swap), not a series
 * or a peak: it is read at the first sample, every STAT_EVERY samples and
 * at the final reading.
 */
#define STAT_EVERY 10

/* Whether a process (pid, start time) carries the match variable: its
 * environment is fixed at exec, so one read per process is enough.
 */
struct envmemo {
    pid_t pid;
    unsigned long long start;
    bool match;
};

struct task {
    int task_id;
    pid_t pid;
    bool exited;
    int wait_status;
};

struct tr_step {
    json_t *identity, *request, *tags;
    char collector[32];
    double interval_s;

    enum attach_mode mode;
    struct tr_cgroup_paths cg;
    pid_t tree_root;
    struct tr_proc_match match;  /* process-set members besides the tree */
    struct {
        pid_t pid;
        unsigned long long start;
    } excl[TR_STEP_EXCLUDE_MAX]; /* never members (tr_step_exclude) */
    int nexcl;
    struct envmemo *memo;        /* environ verdicts, sorted by pid */
    size_t nmemo;
    /* members whose cgroup was looked at for match.cgroup_name (each
     * process once), and the job cgroup once one is found
     */
    struct {
        pid_t pid;
        unsigned long long start;
    } cg_tried[32];
    unsigned ncg_tried;
    bool cg_found;
    struct tr_cgroup_paths *cg_job; /* made while one is looked for */
    json_t *outcome_hint;        /* the scheduler's end word, or NULL */
    /* kernel evidence (kmsg.h): the record's events, and the processes
     * of the step that ended lately (a kernel line may come after)
     */
    json_t *events;
    unsigned events_dropped;
    struct {
        pid_t pid;
        double mono;
    } gone[64];
    unsigned ngone;
    /* no progress (progress.h): the tracker, its threshold, and what
     * the processes were blocked in at the last reading without progress
     */
    struct tr_progress progress;
    double stall_after_s;
    json_t *stall_procs;

    struct task *tasks;
    int ntasks, nexited, tasks_cap;

    int64_t start_ms, end_ms;
    double start_mono, last_mono;
    bool finished;
    bool finishing;         /* the final reading is being taken */
    bool restored;          /* carried over a daemon restart: the process
                             * table holds only what was seen since */
    long samples;

    /* latest readings */
    double cpu_user_s, cpu_sys_s, cpu_total_s;
    const char *cpu_source;
    bool cpu_exact, have_cpu;
    uint64_t mem_current, mem_peak, mem_peak_sampled, mem_limit;
    const char *mem_source;
    bool mem_exact, have_mem;
    /* detail; -1 = not available on this host */
    int64_t mem_anon, mem_file, mem_shmem, mem_swap;
    int64_t failcnt, oom_events, oom_kills;
    double last_cpu_total;

    struct rusage children;
    bool have_children;

    char incomplete[256];   /* why the end was not observed, or "" */
    char lost[256];         /* why the totals stop early (the step's
                             * cgroup vanished while it ran), or "" */
    double lost_mono;       /* when that was seen */
    bool ended;             /* the hook said the step ended (tr_step_end) */
    bool followed;          /* a process of the step was seen, or its
                             * cgroup followed: without one, nothing was
                             * measured (states.h tr_states_unfollowed) */

    struct tr_series cpu_series, mem_series;

    tr_detail_t *detail;
    pid_t *pids;            /* the step's processes at the last reading */
    size_t npids, pids_cap;

    struct tr_kept kept[K_COUNT];
    struct taskdir taskdirs[TASK_DIRS_MAX];
    size_t ntaskdirs;
    bool taskdirs_more;     /* more than TASK_DIRS_MAX: read by path */
    uint64_t last_pid;      /* the node's newest pid at the last refresh */
    bool grew;              /* that refresh found more processes */
    long refresh_sample;    /* the sample of the last refresh, or -1 */
};

static int64_t now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The wall-clock time of the step's end: its start plus the time the
 * monotonic clock has counted since.  The wall clock may be stepped
 * (an NTP correction, an administrator's date) while a step runs; a
 * step back would give an end before the start and a negative elapsed
 * time, which no record may hold.
 */
static int64_t end_now_ms (const tr_step_t *step)
{
    double elapsed = tr_when_monotonic () - step->start_mono;

    return step->start_ms
           + (elapsed > 0 ? (int64_t)(elapsed * 1000.0 + 0.5) : 0);
}

tr_step_t *tr_step_create (json_t *identity,
                           json_t *request,
                           json_t *tags,
                           const char *collector,
                           double interval_s)
{
    tr_step_t *step;

    if (!(step = calloc (1, sizeof (*step))))
        return NULL;
    step->identity = json_deep_copy (identity);
    step->request = request ? json_deep_copy (request) : json_object ();
    step->tags = tags ? json_deep_copy (tags) : json_object ();
    step->detail = tr_detail_create (NULL, NULL);
    if (!step->identity || !step->request || !step->tags || !step->detail) {
        tr_step_destroy (step);
        errno = ENOMEM;
        return NULL;
    }
    snprintf (step->collector, sizeof (step->collector), "%s", collector);
    step->interval_s = interval_s > 0 ? interval_s : 1.0;
    step->start_ms = now_ms ();
    step->start_mono = step->last_mono = tr_when_monotonic ();
    for (int i = 0; i < K_COUNT; i++)
        step->kept[i] = (struct tr_kept)TR_KEPT_INIT;
    step->refresh_sample = -1;
    step->cpu_source = "none";
    step->mem_source = "none";
    step->mem_anon = step->mem_file = step->mem_shmem = step->mem_swap = -1;
    step->failcnt = step->oom_events = step->oom_kills = -1;
    tr_series_init (&step->cpu_series);
    tr_series_init (&step->mem_series);
    return step;
}

static void close_taskdirs (tr_step_t *step)
{
    for (size_t i = 0; i < step->ntaskdirs; i++)
        tr_kept_close (&step->taskdirs[i].oom);
    step->ntaskdirs = 0;
    step->taskdirs_more = false;
}

/* Let go of the step's cgroup files: a kept descriptor holds a removed
 * cgroup in the kernel.
 */
static void close_kept (tr_step_t *step)
{
    for (int i = 0; i < K_COUNT; i++)
        tr_kept_close (&step->kept[i]);
    close_taskdirs (step);
    step->refresh_sample = -1;
    if (step->detail)
        tr_detail_close (step->detail);
}

void tr_step_destroy (tr_step_t *step)
{
    int saved = errno;

    if (step) {
        json_decref (step->identity);
        json_decref (step->request);
        json_decref (step->tags);
        json_decref (step->outcome_hint);
        json_decref (step->events);
        json_decref (step->stall_procs);
        close_kept (step);
        tr_detail_destroy (step->detail);
        tr_series_free (&step->cpu_series);
        tr_series_free (&step->mem_series);
        free (step->pids);
        free (step->tasks);
        free (step->memo);
        free (step->cg_job);
        free (step);
    }
    errno = saved;
}

int tr_step_configure (tr_step_t *step,
                       const struct tr_detail_opts *opts,
                       tr_error_t *error)
{
    tr_detail_t *d;
    json_t *carry;

    if (!(d = tr_detail_create (opts, error)))
        return -1;
    /* a resumed step is configured after its restore: carry over */
    if (step->mode == ATTACH_CGROUP)
        tr_detail_set_cgroup (d, &step->cg, step->cg.unified[0] != 0);
    if ((carry = tr_detail_save (step->detail))) {
        tr_detail_restore (d, carry);
        json_decref (carry);
    }
    if (step->ntasks > 0)
        tr_detail_set_task (d, step->tasks[0].pid);
    tr_detail_destroy (step->detail);
    step->detail = d;
    return 0;
}

int tr_step_exit_event (tr_step_t *step, const struct tr_exit *ev)
{
    int rc = tr_detail_exit (step->detail, ev);

    /* a process of the step that ended: a kernel line may follow */
    if (rc == 1 && ev->tgid > 0) {
        unsigned n = sizeof (step->gone) / sizeof (step->gone[0]);
        step->gone[step->ngone % n].pid = ev->tgid;
        step->gone[step->ngone % n].mono = tr_when_monotonic ();
        step->ngone++;
    }
    return rc;
}

void tr_step_exits_lost (tr_step_t *step, uint64_t n)
{
    tr_detail_exits_lost (step->detail, n);
}

static int add_task (tr_step_t *step, int task_id, pid_t pid)
{
    for (int i = 0; i < step->ntasks; i++)
        if (step->tasks[i].task_id == task_id) {
            step->tasks[i].pid = pid;
            return 0;
        }
    if (step->ntasks == step->tasks_cap) {
        int cap = step->tasks_cap ? step->tasks_cap * 2 : 8;
        struct task *t;
        if (cap > 65536) {
            errno = E2BIG;
            return -1;
        }
        if (!(t = realloc (step->tasks, (size_t)cap * sizeof (*t))))
            return -1;
        step->tasks = t;
        step->tasks_cap = cap;
    }
    step->tasks[step->ntasks++] = (struct task){ .task_id = task_id,
                                                 .pid = pid };
    return 0;
}

/* How the host mounts cgroups. */
static const char *cgroup_mode (void)
{
    char buf[PATH_MAX];
    bool v1 = tr_cgroup_mountpoint ("memory", buf, sizeof (buf)) == 0
              || tr_cgroup_mountpoint ("cpuacct", buf, sizeof (buf)) == 0;
    bool v2 = tr_cgroup_mountpoint (NULL, buf, sizeof (buf)) == 0;

    return v1 && v2 ? "hybrid" : v1 ? "v1" : v2 ? "v2" : "none";
}

/* A directory is usable for step counters unless it is a hierarchy root
 * (whole-machine numbers would be silently wrong).
 */
static bool step_dir_ok (const char *dir, const char *ctrl)
{
    char mnt[PATH_MAX];

    if (!dir[0])
        return false;
    if (tr_cgroup_mountpoint (ctrl, mnt, sizeof (mnt)) == 0
        && !strcmp (mnt, dir))
        return false;
    return true;
}

int tr_step_attach_paths (tr_step_t *step,
                          const struct tr_cgroup_paths *paths,
                          tr_error_t *error)
{
    struct tr_cgroup_paths p = *paths;

    if (!step_dir_ok (p.memory, "memory"))
        p.memory[0] = '\0';
    if (!step_dir_ok (p.cpuacct, "cpuacct"))
        p.cpuacct[0] = '\0';
    if (!step_dir_ok (p.unified, NULL))
        p.unified[0] = '\0';
    /* On a hybrid host the cgroup2 tree holds whole daemons (slurmd's
     * unit, with every step under it) unless tracer gave the step a
     * directory of its own (the mirror, or tracer-run's directory in a
     * delegated subtree): only then do its files describe the step.
     */
    if (!strcmp (cgroup_mode (), "hybrid") && !p.unified_is_mirror
        && !p.unified_delegated)
        p.unified[0] = '\0';
    if (!p.memory[0] && !p.cpuacct[0] && !p.unified[0]) {
        errno = ENOENT;
        return tr_errprintf (error, "no step cgroup found");
    }
    close_kept (step);
    step->cg = p;
    step->mode = ATTACH_CGROUP;
    step->followed = true;
    tr_detail_set_cgroup (step->detail, &step->cg, step->cg.unified[0] != 0);
    return 0;
}

int tr_step_attach_pid (tr_step_t *step,
                        pid_t pid,
                        int task_id,
                        tr_error_t *error)
{
    if (step->mode == ATTACH_NONE) {
        struct tr_cgroup_paths p;
        if (tr_cgroup_resolve_pid (pid, true, &p, error) < 0)
            return -1;
        if (tr_step_attach_paths (step, &p, error) < 0)
            return tr_errprintf (error, "pid %d: no step cgroup found in "
                                 "/proc/%d/cgroup", (int)pid, (int)pid);
    }
    if (add_task (step, task_id, pid) < 0)
        return tr_errprintf (error, "adding task: %s", strerror (errno));
    tr_detail_set_task (step->detail, pid);
    return 0;
}

int tr_step_add_task (tr_step_t *step, int task_id, pid_t pid)
{
    if (add_task (step, task_id, pid) < 0)
        return -1;
    tr_detail_set_task (step->detail, pid);
    return 0;
}

int tr_step_attach_tree (tr_step_t *step, pid_t root)
{
    step->mode = ATTACH_TREE;
    step->tree_root = root;
    tr_detail_set_cgroup (step->detail, NULL, false);
    if (add_task (step, 0, root) < 0)
        return -1;
    tr_detail_set_task (step->detail, root);
    return 0;
}

/* One NAME=VALUE entry of len bytes. */
static bool env_entry_valid (const char *env, size_t len)
{
    const char *eq = memchr (env, '=', len);

    if (!eq || eq == env)
        return false;
    for (const char *p = env; p < eq; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')
              || (p > env && *p >= '0' && *p <= '9')))
            return false;
    return true;
}

/* NAME=VALUE entries separated by newlines, none empty, at most
 * ENV_ENTRIES_MAX.
 */
#define ENV_ENTRIES_MAX 8
static bool env_valid (const char *env)
{
    size_t n = 0;

    if (strlen (env) >= TR_MATCH_ENV_MAX)
        return false;
    for (const char *p = env;; n++) {
        size_t len = strcspn (p, "\n");
        if (n == ENV_ENTRIES_MAX || !env_entry_valid (p, len))
            return false;
        if (!p[len])
            return true;
        p += len + 1;
    }
}

int tr_step_attach_match (tr_step_t *step,
                          const struct tr_proc_match *match,
                          tr_error_t *error)
{
    if (match->env[0] && !env_valid (match->env)) {
        errno = EINVAL;
        return tr_errprintf (error, "environment match '%s' is not "
                             "NAME=VALUE", match->env);
    }
    if (match->session < 0 || (!match->session && !match->env[0])) {
        errno = EINVAL;
        return tr_errprintf (error, "process match needs a session or "
                             "an environment variable");
    }
    step->mode = ATTACH_TREE;
    step->match = *match;
    tr_detail_set_cgroup (step->detail, NULL, false);
    return 0;
}

/* Read CPU totals (seconds) from the step cgroup. */
static const char *kdir (const tr_step_t *step, enum kfile f)
{
    switch (kfiles[f].dir) {
    case D_CPUACCT:
        return step->cg.cpuacct;
    case D_MEMORY:
        return step->cg.memory;
    case D_UNIFIED:
        return step->cg.unified;
    case D_NONE:
        break;
    }
    return NULL;
}

/* The text of a kept file in buf, or -1 with errno. */
static int kread (tr_step_t *step, enum kfile f, char *buf, size_t size)
{
    const char *dir = kdir (step, f);

    if (dir && !dir[0]) {
        errno = ENOENT;
        return -1;
    }
    return tr_kept_read (&step->kept[f], dir, kfiles[f].file, buf, size) < 0
               ? -1
               : 0;
}

/* A Slurm v2 step attached at its tasks' directory, ".../step_S/user". */
static bool slurm_v2_tasks (const tr_step_t *step)
{
    const char *u = step->cg.unified, *slash = strrchr (u, '/');
    size_t n;

    if (!slash || strcmp (slash + 1, "user"))
        return false;
    n = (size_t)(slash - u);
    while (n > 0 && u[n - 1] != '/')
        n--;
    return !strncmp (u + n, "step_", 5);
}

static int kread_u64 (tr_step_t *step, enum kfile f, uint64_t *value)
{
    char buf[64];

    return kread (step, f, buf, sizeof (buf)) < 0
               ? -1
               : tr_cgroup_parse_u64 (buf, value);
}

/* keys[i] of a "key value" file into values[i] (left alone if absent);
 * the number found, or -1.
 */
static int kread_keys (tr_step_t *step,
                       enum kfile f,
                       const char *const *keys,
                       int64_t *values,
                       size_t n)
{
    char buf[8192];

    return kread (step, f, buf, sizeof (buf)) < 0
               ? -1
               : tr_cgroup_parse_keys (buf, keys, values, n);
}

/* The total is the scheduler's exact run time (cpuacct.usage, ns;
 * cpu.stat usage_usec), while the kernel's user/system split is counted
 * by the tick (cpuacct.usage_user/_sys and cpuacct.stat come from the
 * tick-sampled cpustat since Linux 4.x, and read apart from the total;
 * cpu.stat's user_usec/system_usec are adjusted to usage_usec on recent
 * kernels only): on a shared or virtual CPU the two sides differ by
 * several percent.  Keep the total and split it in the ratio of the
 * kernel's user and system figures (all user when they are both 0), so
 * that user + system = total in every record.
 */
static void split_total (tr_step_t *step, uint64_t total_ns, uint64_t user,
                         uint64_t sys)
{
    uint64_t user_ns = total_ns;

    if (user + sys > 0)
        user_ns = (uint64_t)((long double)total_ns * user
                             / ((long double)user + sys));
    if (user_ns > total_ns)
        user_ns = total_ns;
    step->cpu_total_s = (double)total_ns / 1e9;
    step->cpu_user_s = (double)user_ns / 1e9;
    step->cpu_sys_s = (double)(total_ns - user_ns) / 1e9;
}

static int read_cpu_cgroup (tr_step_t *step)
{
    uint64_t total, user, sys;

    if (kread_u64 (step, K_CPUACCT_USAGE, &total) == 0) {
        step->cpu_total_s = (double)total / 1e9;
        if (kread_u64 (step, K_CPUACCT_USER, &user) == 0
            && kread_u64 (step, K_CPUACCT_SYS, &sys) == 0)
            split_total (step, total, user, sys);
        else {
            static const char *const keys[] = { "user", "system" };
            int64_t v[2] = { -1, -1 };
            /* USER_HZ ticks */
            if (kread_keys (step, K_CPUACCT_STAT, keys, v, 2) == 2
                && v[0] >= 0 && v[1] >= 0)
                split_total (step, total, (uint64_t)v[0], (uint64_t)v[1]);
        }
        step->cpu_source = "cgroup-v1:cpuacct.usage";
        step->cpu_exact = true;
        step->have_cpu = true;
        return 0;
    }
    {
        static const char *const keys[] = { "usage_usec", "user_usec",
                                            "system_usec" };
        int64_t v[3] = { -1, -1, -1 };
        if (kread_keys (step, K_CPU_STAT, keys, v, 3) >= 0 && v[0] >= 0) {
            step->cpu_total_s = (double)v[0] / 1e6;
            if (v[1] >= 0 && v[2] >= 0)
                split_total (step, (uint64_t)v[0] * 1000, (uint64_t)v[1],
                             (uint64_t)v[2]);
            step->cpu_source = "cgroup-v2:cpu.stat";
            step->cpu_exact = true;
            step->have_cpu = true;
            return 0;
        }
    }
    return -1;
}

static void note_peak (tr_step_t *step, uint64_t current)
{
    if (current > step->mem_peak_sampled)
        step->mem_peak_sampled = current;
}

static int64_t oom_kill_of (const char *text)
{
    uint64_t v;

    return tr_cgroup_parse_key (text, "oom_kill", &v) == 0 ? (int64_t)v : -1;
}

/* The task_N directories of a v1 step, listed again at each refresh of
 * the process list (a new task directory comes with new processes).
 */
static void list_taskdirs (tr_step_t *step)
{
    char path[PATH_MAX];
    DIR *d;
    struct dirent *de;

    close_taskdirs (step);
    if (tr_fsroot_path (path, sizeof (path), step->cg.memory) < 0
        || !(d = opendir (path)))
        return;
    while ((de = readdir (d))) {
        struct taskdir *t;
        if (strncmp (de->d_name, "task_", 5) != 0)
            continue;
        if (step->ntaskdirs == TASK_DIRS_MAX
            || strlen (de->d_name) >= sizeof (t->name)) {
            step->taskdirs_more = true;
            continue;
        }
        t = &step->taskdirs[step->ntaskdirs++];
        snprintf (t->name, sizeof (t->name), "%s", de->d_name);
        t->oom = (struct tr_kept)TR_KEPT_INIT;
    }
    closedir (d);
}

/* Kills in the task directories beyond the kept ones, by path. */
static int64_t more_oom_kills (tr_step_t *step)
{
    char path[PATH_MAX], sub[PATH_MAX], buf[512];
    int64_t total = 0, n;
    DIR *d;
    struct dirent *de;

    if (tr_fsroot_path (path, sizeof (path), step->cg.memory) < 0
        || !(d = opendir (path)))
        return 0;
    while ((de = readdir (d))) {
        bool kept = false;
        struct tr_kept k = TR_KEPT_INIT;
        if (strncmp (de->d_name, "task_", 5) != 0)
            continue;
        for (size_t i = 0; i < step->ntaskdirs && !kept; i++)
            kept = !strcmp (step->taskdirs[i].name, de->d_name);
        if (kept
            || snprintf (sub, sizeof (sub), "%s/%s", step->cg.memory,
                         de->d_name) >= (int)sizeof (sub))
            continue;
        if (tr_kept_read (&k, sub, "memory.oom_control", buf, sizeof (buf))
                >= 0
            && (n = oom_kill_of (buf)) > 0)
            total += n;
        tr_kept_close (&k);
    }
    closedir (d);
    return total;
}

/* v1 memory.oom_control's oom_kill counts only kills in that very
 * directory, and Slurm puts tasks in task_N below the step: sum them.
 */
static int64_t v1_oom_kills (tr_step_t *step)
{
    char buf[512];
    int64_t total, n;

    if (kread (step, K_MEM_OOM, buf, sizeof (buf)) < 0
        || (total = oom_kill_of (buf)) < 0)
        return -1;
    for (size_t i = 0; i < step->ntaskdirs; i++) {
        char sub[PATH_MAX];
        struct taskdir *t = &step->taskdirs[i];
        if (snprintf (sub, sizeof (sub), "%s/%s", step->cg.memory, t->name)
                < (int)sizeof (sub)
            && tr_kept_read (&t->oom, sub, "memory.oom_control", buf,
                             sizeof (buf)) >= 0
            && (n = oom_kill_of (buf)) > 0)
            total += n;
    }
    if (step->taskdirs_more)
        total += more_oom_kills (step);
    return total;
}

static bool stat_due (const tr_step_t *step)
{
    return step->finishing || step->samples % STAT_EVERY == 0;
}

static int read_mem_cgroup (tr_step_t *step)
{
    uint64_t v;

    if (kread_u64 (step, K_MEM_USAGE, &v) == 0) {
        step->mem_current = v;
        note_peak (step, v);
        if (kread_u64 (step, K_MEM_MAX_USAGE, &v) == 0) {
            step->mem_peak = v;
            step->mem_exact = true;
            step->mem_source = "cgroup-v1:memory.max_usage_in_bytes";
        }
        else {
            step->mem_peak = step->mem_peak_sampled;
            step->mem_exact = false;
            step->mem_source = "cgroup-v1:memory.usage_in_bytes (sampled)";
        }
        if (kread_u64 (step, K_MEM_LIMIT, &v) == 0)
            step->mem_limit = v;
        if (stat_due (step)) {
            /* one read of memory.stat for all four */
            static const char *const keys[] = {
                "total_rss", "total_cache", "total_shmem", "total_swap",
            };
            int64_t v4[4] = { -1, -1, -1, -1 };
            (void)kread_keys (step, K_MEM_STAT, keys, v4, 4);
            step->mem_anon = v4[0];
            step->mem_file = v4[1];
            step->mem_shmem = v4[2];
            step->mem_swap = v4[3];
        }
        if (kread_u64 (step, K_MEM_FAILCNT, &v) == 0)
            step->failcnt = (int64_t)v;
        step->oom_kills = v1_oom_kills (step);
        step->have_mem = true;
        return 0;
    }
    if (step->cg.unified_has_memory
        && kread_u64 (step, K_MEM_CURRENT, &v) == 0) {
        step->mem_current = v;
        note_peak (step, v);
        if (kread_u64 (step, K_MEM_PEAK, &v) == 0) {
            step->mem_peak = v;
            step->mem_exact = true;
            step->mem_source = "cgroup-v2:memory.peak";
        }
        else {
            step->mem_peak = step->mem_peak_sampled;
            step->mem_exact = false;
            step->mem_source = "cgroup-v2:memory.current (sampled)";
        }
        if (kread_u64 (step, K_MEM_MAX, &v) == 0
            && (v != UINT64_MAX || !slurm_v2_tasks (step)
                || kread_u64 (step, K_MEM_MAX_PARENT, &v) == 0))
            step->mem_limit = v;
        if (stat_due (step)) {
            static const char *const keys[] = { "anon", "file", "shmem" };
            int64_t v3[3] = { -1, -1, -1 };
            (void)kread_keys (step, K_MEM_STAT2, keys, v3, 3);
            step->mem_anon = v3[0];
            step->mem_file = v3[1];
            step->mem_shmem = v3[2];
        }
        if (kread_u64 (step, K_MEM_SWAP, &v) == 0)
            step->mem_swap = (int64_t)v;
        {
            static const char *const keys[] = { "oom", "oom_kill" };
            int64_t v2[2] = { -1, -1 };
            (void)kread_keys (step, K_MEM_EVENTS, keys, v2, 2);
            step->oom_events = v2[0];
            step->oom_kills = v2[1];
        }
        step->have_mem = true;
        return 0;
    }
    return -1;
}

static void remember_pid (tr_step_t *step, pid_t pid)
{
    if (step->npids == step->pids_cap) {
        size_t nc = step->pids_cap ? step->pids_cap * 2 : 64;
        pid_t *a = realloc (step->pids, nc * sizeof (*a));
        if (!a)
            return;  /* the detail misses a process; the totals do not */
        step->pids = a;
        step->pids_cap = nc;
    }
    step->pids[step->npids++] = pid;
}

/* The processes of a cgroup directory and of its subdirectories (Slurm's
 * task_N below the step): cgroup.procs lists only a directory's own.
 */
static void collect_cgroup_pids (tr_step_t *step, const char *dir, int depth)
{
    char path[PATH_MAX], full[PATH_MAX];
    FILE *f;
    DIR *d;
    struct dirent *de;
    long pid;

    if (snprintf (path, sizeof (path), "%s/cgroup.procs", dir)
            >= (int)sizeof (path)
        || tr_fsroot_path (full, sizeof (full), path) < 0)
        return;
    if ((f = fopen (full, "re"))) {
        while (fscanf (f, "%ld", &pid) == 1)
            if (pid > 0)
                remember_pid (step, (pid_t)pid);
        fclose (f);
    }
    if (depth >= 3 || tr_fsroot_path (full, sizeof (full), dir) < 0
        || !(d = opendir (full)))
        return;
    while ((de = readdir (d))) {
        char sub[PATH_MAX];
        if (de->d_name[0] == '.' || de->d_type != DT_DIR
            || snprintf (sub, sizeof (sub), "%s/%s", dir, de->d_name)
                   >= (int)sizeof (sub))
            continue;
        collect_cgroup_pids (step, sub, depth + 1);
    }
    closedir (d);
}

/* A step cgroup without the memory controller (a delegated cgroup2
 * directory whose parent enables none, or a hybrid host's unified tree):
 * the sum of its processes' resident sets at their last readings.
 */
static void read_mem_pids (tr_step_t *step)
{
    uint64_t total = tr_detail_rss (step->detail);

    step->mem_current = total;
    note_peak (step, total);
    step->mem_peak = step->mem_peak_sampled;
    step->mem_exact = false;
    step->mem_source = "proc:stat rss sum (cgroup processes, sampled)";
    step->have_mem = true;
}

/* Whether to read the step's process list again now: on the first
 * reading, and afterwards when the node's newest pid has changed, no
 * more often than every npids / PROCS_PER_REFRESH readings.
 */
static bool refresh_due (tr_step_t *step)
{
    char buf[128], *p;
    uint64_t last = 0;
    bool known = false;
    long every = (long)(step->npids / PROCS_PER_REFRESH) + 1;

    if (kread (step, K_LOADAVG, buf, sizeof (buf)) == 0
        && (p = strrchr (buf, ' '))) {
        size_t len = strspn (p + 1, "0123456789");
        known = tr_parse_u64 (p + 1, len, &last) == 0;
    }
    if (step->refresh_sample >= 0) {
        if (known && last == step->last_pid)
            return false;
        if (!step->grew
            && step->samples - step->refresh_sample
                   < (every > REFRESH_EVERY_MAX ? REFRESH_EVERY_MAX : every))
            return false;
    }
    /* read before the list, so that a process made during it is
     * looked for next time
     */
    step->last_pid = known ? last : 0;
    step->refresh_sample = step->samples;
    return true;
}

static const char *step_dir (const tr_step_t *step)
{
    return step->cg.memory[0]    ? step->cg.memory
           : step->cg.cpuacct[0] ? step->cg.cpuacct
                                 : step->cg.unified;
}

/* Whether /proc/PID/environ holds every entry of env (NAME=VALUE lines)
 * exactly.  Streamed: an environment may be megabytes long.
 */
static bool environ_has (long pid, const char *env);

bool tr_step_environ_has (pid_t pid, const char *env)
{
    return pid > 0 && env_valid (env) && environ_has (pid, env);
}

static bool environ_has (long pid, const char *env)
{
    char path[PATH_MAX], buf[4096];
    const char *want[ENV_ENTRIES_MAX];
    size_t wlen[ENV_ENTRIES_MAX], nwant = 0, k = 0;
    bool ok[ENV_ENTRIES_MAX], found[ENV_ENTRIES_MAX];
    size_t nfound = 0;
    ssize_t n;
    int fd;

    for (const char *p = env; nwant < ENV_ENTRIES_MAX;) {
        want[nwant] = p;
        wlen[nwant] = strcspn (p, "\n");
        ok[nwant] = true;
        found[nwant] = false;
        p += wlen[nwant++];
        if (!*p++)
            break;
    }
    if (snprintf (path, sizeof (path), "%s/proc/%ld/environ", tr_fsroot (),
                  pid) >= (int)sizeof (path)
        || (fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    while (nfound < nwant && (n = read (fd, buf, sizeof (buf))) > 0) {
        for (ssize_t i = 0; i < n && nfound < nwant; i++) {
            for (size_t j = 0; j < nwant; j++) {
                if (buf[i] == '\0') {
                    if (!found[j] && ok[j] && k == wlen[j]) {
                        found[j] = true;
                        nfound++;
                    }
                    ok[j] = true;
                }
                else
                    ok[j] = ok[j] && k < wlen[j] && buf[i] == want[j][k];
            }
            k = buf[i] == '\0' ? 0 : k + 1;
        }
    }
    close (fd);
    return nfound == nwant;
}

static int memo_cmp (const void *a, const void *b)
{
    const struct envmemo *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The environment verdict for a process, from the previous reading's
 * memo when the same process (pid and start time) was seen.
 */
static bool env_member (const tr_step_t *step,
                        long pid,
                        unsigned long long start)
{
    struct envmemo key = { .pid = (pid_t)pid }, *m;

    if (step->memo
        && (m = bsearch (&key, step->memo, step->nmemo, sizeof (*m),
                         memo_cmp))
        && m->start == start)
        return m->match;
    return environ_has (pid, step->match.env);
}

static bool is_root (const tr_step_t *step, pid_t pid)
{
    if (pid == step->tree_root && pid > 0)
        return true;
    for (int i = 0; i < step->ntasks; i++)
        if (step->tasks[i].pid == pid && !step->tasks[i].exited)
            return true;
    return false;
}

struct pinfo {
    pid_t pid, ppid, sid;
    unsigned long long start;
    unsigned long long user, sys; /* ticks, reaped children's included */
    uint64_t rss;
    bool in, env, out;
};

/* The start time (field 22 of /proc/PID/stat), 0 when pid is gone. */
static unsigned long long proc_start (pid_t pid)
{
    char path[PATH_MAX], buf[1024], *p;
    unsigned long long start = 0;
    FILE *f;

    snprintf (path, sizeof (path), "%s/proc/%d/stat", tr_fsroot (), (int)pid);
    if (!(f = fopen (path, "re")))
        return 0;
    p = fgets (buf, sizeof (buf), f);
    fclose (f);
    if (!p || !(p = strrchr (buf, ')'))
        || sscanf (p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u "
                   "%*u %*d %*d %*d %*d %*d %*d %llu", &start) != 1)
        return 0;
    return start;
}

int tr_step_exclude (tr_step_t *step, pid_t pid)
{
    unsigned long long start;

    if (!step || pid <= 1 || !(start = proc_start (pid))) {
        errno = pid <= 1 || !step ? EINVAL : ESRCH;
        return -1;
    }
    for (int i = 0; i < step->nexcl; i++)
        if (step->excl[i].pid == pid && step->excl[i].start == start)
            return 0;
    if (step->nexcl == TR_STEP_EXCLUDE_MAX) {
        errno = ENOSPC;
        return -1;
    }
    step->excl[step->nexcl].pid = pid;
    step->excl[step->nexcl++].start = start;
    /* nor are its exits (the process table's CPU, tree_cpu) */
    (void)tr_detail_exclude (step->detail, pid);
    return 0;
}

/* Take the excluded processes and their descendants out of ps. */
static void drop_excluded (const tr_step_t *step, struct pinfo *ps, size_t n)
{
    bool any = false, changed = true;

    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < step->nexcl; k++)
            if (ps[i].pid == step->excl[k].pid
                && ps[i].start == step->excl[k].start)
                ps[i].out = any = true;
    while (any && changed) {
        changed = false;
        for (size_t i = 0; i < n; i++) {
            if (ps[i].out)
                continue;
            for (size_t j = 0; j < n; j++)
                if (ps[j].out && ps[i].ppid == ps[j].pid) {
                    ps[i].out = changed = true;
                    break;
                }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (ps[i].out)
            ps[i].in = false;
}

/* Look for the job's own cgroup (a batch system's, named after the job)
 * through the set's first members: each process once, a few per
 * reading, so a job without one costs next to nothing.
 */
static void find_job_cgroup (tr_step_t *step, const struct pinfo *ps, size_t n)
{
    int tries = 0;

    for (size_t i = 0; i < n && tries < 4 && !step->cg_found; i++) {
        bool tried = false;
        if (!ps[i].in)
            continue;
        for (unsigned k = 0; k < step->ncg_tried && k < 32 && !tried; k++)
            tried = step->cg_tried[k].pid == ps[i].pid
                    && step->cg_tried[k].start == ps[i].start;
        if (tried)
            continue;
        tries++;
        step->cg_tried[step->ncg_tried % 32].pid = ps[i].pid;
        step->cg_tried[step->ncg_tried % 32].start = ps[i].start;
        step->ncg_tried++;
        if (!step->cg_job
            && !(step->cg_job = malloc (sizeof (*step->cg_job))))
            return; /* looked for again at the next reading */
        if (tr_cgroup_job_paths (ps[i].pid, step->match.cgroup_name,
                                 step->cg_job, NULL) == 1)
            step->cg_found = true;
    }
}

/* Process-set mode: walk /proc for the roots, the matched processes and
 * all their descendants.  CPU is utime+stime+cutime+cstime over the set
 * (reaped children are carried by their parents), memory the sum of
 * resident sets: both sampled.
 */
static int read_tree (tr_step_t *step)
{
    char path[PATH_MAX];
    DIR *d;
    struct dirent *de;
    struct pinfo *ps = NULL;
    struct envmemo *memo = NULL;
    size_t n = 0, cap = 0, nmemo = 0;
    long hz = sysconf (_SC_CLK_TCK), page = sysconf (_SC_PAGESIZE);
    unsigned long long total_user = 0, total_sys = 0;
    uint64_t total_rss = 0;
    bool changed = true;

    if (tr_fsroot_path (path, sizeof (path), "/proc") < 0
        || !(d = opendir (path)))
        return -1;
    while ((de = readdir (d))) {
        char buf[1024], *p;
        FILE *f;
        long ppid, sid, nthreads;
        long long ut, st, start, cut, cst, rssp;
        char state;
        char *end;
        long pid = strtol (de->d_name, &end, 10);

        if (*end || pid <= 0)
            continue;
        snprintf (path, sizeof (path), "%s/proc/%ld/stat", tr_fsroot (), pid);
        if (!(f = fopen (path, "re")))
            continue;
        p = fgets (buf, sizeof (buf), f);
        fclose (f);
        /* comm may contain spaces and parens: parse after the last ')' */
        if (!p || !(p = strrchr (buf, ')')))
            continue;
        /* signed conversions: %llu would take "-1" as 2^64 - 1, and no
         * figure kept here is ever negative
         */
        if (sscanf (p + 2, "%c %ld %*d %ld %*d %*d %*u %*u %*u %*u %*u "
                    "%lld %lld %lld %lld %*d %*d %ld %*d %lld %*u %lld",
                    &state, &ppid, &sid, &ut, &st, &cut, &cst, &nthreads,
                    &start, &rssp) != 10
            || ppid < 0 || sid < 0 || ut < 0 || st < 0 || cut < 0
            || cst < 0 || nthreads < 0 || start < 0 || rssp < 0)
            continue;
        /* zombies have ended (their figures are in the max so far) */
        if ((state == 'Z' || state == 'X') && nthreads <= 1)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            void *a = realloc (ps, nc * sizeof (*ps));
            if (!a)
                break;
            ps = a;
            cap = nc;
        }
        ps[n] = (struct pinfo){
            .pid = (pid_t)pid,
            .ppid = (pid_t)ppid,
            .sid = (pid_t)sid,
            .start = (unsigned long long)start,
            .user = (unsigned long long)ut + (unsigned long long)cut,
            .sys = (unsigned long long)st + (unsigned long long)cst,
            .rss = (uint64_t)rssp * (uint64_t)page,
        };
        ps[n].in = is_root (step, ps[n].pid)
                   || (step->match.session > 0
                       && ps[n].sid == step->match.session);
        /* kernel threads (children of kthreadd) have no environment */
        if (step->match.env[0] && pid != 2 && ppid != 2) {
            ps[n].env = env_member (step, pid, start);
            ps[n].in = ps[n].in || ps[n].env;
        }
        n++;
    }
    closedir (d);
    if (step->nexcl)
        drop_excluded (step, ps, n);
    /* descendants: repeat until no new member (depth is small) */
    while (changed) {
        changed = false;
        for (size_t i = 0; i < n; i++) {
            if (ps[i].in || ps[i].out)
                continue;
            for (size_t j = 0; j < n; j++)
                if (ps[j].in && ps[i].ppid == ps[j].pid) {
                    ps[i].in = changed = true;
                    break;
                }
        }
    }
    /* a process moves into the job cgroup after it is first seen (PBS's
     * starter, at pbs_cgroups' execjob_launch): look again now and then
     */
    if (step->samples % 10 == 0)
        step->ncg_tried = 0;
    if (step->match.cgroup_name[0] && !step->cg_found)
        find_job_cgroup (step, ps, n);
    if (step->match.env[0] && n && (memo = calloc (n, sizeof (*memo)))) {
        for (size_t i = 0; i < n; i++)
            if (ps[i].pid != 2 && ps[i].ppid != 2)
                memo[nmemo++] = (struct envmemo){ ps[i].pid, ps[i].start,
                                                  ps[i].env };
        qsort (memo, nmemo, sizeof (*memo), memo_cmp);
    }
    if (memo || !step->match.env[0]) {
        free (step->memo);
        step->memo = memo;
        step->nmemo = nmemo;
    }
    step->npids = 0;
    for (size_t i = 0; i < n; i++)
        if (ps[i].in) {
            step->followed = true;
            total_user += ps[i].user;
            total_sys += ps[i].sys;
            total_rss += ps[i].rss;
            remember_pid (step, ps[i].pid);
        }
    free (ps);
    /* the set shrinks as processes end: keep the largest reading, its
     * user and system parts with it
     */
    if ((double)(total_user + total_sys) / (double)hz > step->cpu_total_s) {
        step->cpu_total_s = (double)(total_user + total_sys) / (double)hz;
        step->cpu_user_s = (double)total_user / (double)hz;
        step->cpu_sys_s = (double)total_sys / (double)hz;
    }
    /* no process met yet: nothing is known, which is not 0 */
    if (!step->followed)
        return 0;
    step->cpu_source = "proc:stat (process tree, sampled)";
    step->cpu_exact = false;
    step->have_cpu = true;
    step->mem_current = total_rss;
    note_peak (step, total_rss);
    step->mem_peak = step->mem_peak_sampled;
    step->mem_exact = false;
    step->mem_source = "proc:stat rss sum (process tree, sampled)";
    step->have_mem = true;
    return 0;
}

int tr_step_sample (tr_step_t *step, tr_error_t *error)
{
    return tr_step_sample_at (step, tr_when_monotonic (), error);
}

static void progress_reading (tr_step_t *step, double t);

int tr_step_sample_at (tr_step_t *step, double t, tr_error_t *error)
{
    double prev_cpu = step->cpu_total_s, dt = t - step->last_mono;
    bool mem_from_pids = false;
    /* the process list is the one the last reading left */
    bool same = step->mode == ATTACH_CGROUP;
    int ok = 0;

    if (step->finished)
        return 0;
    /* a member sits in the job's own cgroup: its counters cover the
     * whole job from its start, so follow them from now on
     */
    if (step->mode == ATTACH_TREE && step->cg_found) {
        step->cg_found = false;
        if (tr_step_attach_paths (step, step->cg_job, NULL) == 0)
            tr_log (LOG_INFO, "job cgroup %s found; following it",
                    step->cg_job->memory[0]    ? step->cg_job->memory
                    : step->cg_job->cpuacct[0] ? step->cg_job->cpuacct
                                               : step->cg_job->unified);
        free (step->cg_job);
        step->cg_job = NULL;
    }
    if (step->mode == ATTACH_CGROUP) {
        if (read_cpu_cgroup (step) == 0)
            ok++;
        if (read_mem_cgroup (step) == 0)
            ok++;
        else
            mem_from_pids = true;
    }
    else if (step->mode == ATTACH_TREE) {
        if (read_tree (step) == 0)
            ok++;
    }
    if (!ok) {
        int saved = errno;

        /* the cgroup went away under a running step (moved out and
         * removed early): what was read stands, but it is not the whole
         * step, and the record must say so
         */
        if (step->mode == ATTACH_CGROUP && !step->lost[0]) {
            step->lost_mono = t;
            snprintf (step->lost, sizeof (step->lost),
                      "the step's cgroup could not be read from %.1f s after "
                      "the start (%s): totals cover only the time before",
                      t - step->start_mono, strerror (saved));
        }
        errno = saved;
        return tr_errprintf (error, "no counters readable: %s",
                             strerror (saved));
    }
    if (step->mode == ATTACH_CGROUP && refresh_due (step)) {
        size_t before = step->npids;
        step->npids = 0;
        collect_cgroup_pids (step, step_dir (step), 0);
        step->grew = step->npids > before;
        if (step->cg.memory[0])
            list_taskdirs (step);
        same = false;
    }
    tr_detail_sample (step->detail, step->pids, &step->npids, same,
                      step->samples > 0 ? step->last_mono - step->start_mono
                                        : 0,
                      step->samples > 0 ? dt : 0);
    if (mem_from_pids)
        read_mem_pids (step);
    step->samples++;
    if (step->samples > 1 && dt > 0) {
        double cores = (step->cpu_total_s - prev_cpu) / dt;
        tr_series_add (&step->cpu_series, step->last_mono - step->start_mono,
                    cores < 0 ? 0 : cores);
    }
    tr_series_add (&step->mem_series, t - step->start_mono,
                (double)step->mem_current);
    step->last_mono = t;
    progress_reading (step, t);
    return 0;
}

int tr_step_task_exit (tr_step_t *step,
                       int task_id,
                       pid_t pid,
                       int wait_status)
{
    for (int i = 0; i < step->ntasks; i++) {
        struct task *t = &step->tasks[i];
        if (t->task_id == task_id) {
            if (!t->exited)
                step->nexited++;
            t->exited = true;
            t->wait_status = wait_status;
            if (pid > 0)
                t->pid = pid;
            return 0;
        }
    }
    if (add_task (step, task_id, pid) < 0)
        return -1;
    step->tasks[step->ntasks - 1].exited = true;
    step->tasks[step->ntasks - 1].wait_status = wait_status;
    step->nexited++;
    return 0;
}

int tr_step_set_outcome (tr_step_t *step, json_t *hint)
{
    static const char *const states[] = {
        "completed", "failed", "cancelled", "timeout", "oom", NULL,
    };
    const char *state = json_string_value (json_object_get (hint, "state"));
    json_t *copy;
    bool known = false;

    for (int i = 0; state && states[i]; i++)
        known = known || !strcmp (state, states[i]);
    if (!json_is_object (hint) || !known
        || json_object_size (hint) > 4
        || (json_object_get (hint, "exit_code")
            && !json_is_integer (json_object_get (hint, "exit_code")))
        || (json_object_get (hint, "signal")
            && !json_is_integer (json_object_get (hint, "signal")))
        || (json_object_get (hint, "reason")
            && !json_is_string (json_object_get (hint, "reason")))) {
        errno = EINVAL;
        return -1;
    }
    if (!(copy = json_pack ("{s:s}", "state", state))
        || (json_object_get (hint, "exit_code")
            && json_object_set (copy, "exit_code",
                                json_object_get (hint, "exit_code")) < 0)
        || (json_object_get (hint, "signal")
            && json_object_set (copy, "signal",
                                json_object_get (hint, "signal")) < 0)
        || (json_object_get (hint, "reason")
            && json_object_set (copy, "reason",
                                json_object_get (hint, "reason")) < 0)) {
        json_decref (copy);
        errno = ENOMEM;
        return -1;
    }
    json_decref (step->outcome_hint);
    step->outcome_hint = copy;
    return 0;
}

int tr_step_watch_cgroup (tr_step_t *step, const char *name)
{
    if (!name || strchr (name, '/')
        || snprintf (step->match.cgroup_name, sizeof (step->match.cgroup_name),
                     "%s", name) >= (int)sizeof (step->match.cgroup_name)) {
        step->match.cgroup_name[0] = '\0';
        errno = EINVAL;
        return -1;
    }
    return 0;
}

size_t tr_step_npids (const tr_step_t *step)
{
    return step->npids;
}

bool tr_step_in_cgroup (const tr_step_t *step)
{
    return step->mode == ATTACH_CGROUP;
}

const char *tr_step_cgroup2_dir (const tr_step_t *step)
{
    return step->mode == ATTACH_CGROUP && step->cg.unified[0]
               ? step->cg.unified
               : NULL;
}

const char *tr_step_cgroup1_dir (const tr_step_t *step)
{
    if (step->mode != ATTACH_CGROUP)
        return NULL;
    if (step->cg.cpuacct[0])
        return step->cg.cpuacct;
    return step->cg.memory[0] ? step->cg.memory : NULL;
}

bool tr_step_attached (const tr_step_t *step)
{
    return step->mode != ATTACH_NONE;
}

int tr_step_ntasks (tr_step_t *step)
{
    return step->ntasks;
}

int tr_step_nexited (tr_step_t *step)
{
    return step->nexited;
}

bool tr_step_finished (tr_step_t *step)
{
    return step->finished;
}

int tr_step_finish (tr_step_t *step, tr_error_t *error)
{
    int rc = 0;

    if (step->finished)
        return 0;
    step->finishing = true;
    /* the process table's live figures as of the end (tree_cpu) */
    if (step->mode == ATTACH_TREE)
        tr_detail_read_all (step->detail);
    /* and the reapers' cutime: the ends of their children's runs, which
     * the exit records miss, for the tool table
     */
    tr_detail_read_reapers (step->detail);
    rc = tr_step_sample (step, error);
    /* the scheduler removes a step's cgroup as the step ends, often
     * before its end reaches us: a cgroup gone at this last sample, or
     * within two intervals of the end, is the end, not a loss
     */
    if (step->lost[0]
        && tr_when_monotonic () - step->lost_mono
               <= (2 * step->interval_s > 2.0 ? 2 * step->interval_s : 2.0))
        step->lost[0] = '\0';
    step->end_ms = end_now_ms (step);
    step->finished = true;
    close_kept (step);
    return rc;
}

void tr_step_set_children_rusage (tr_step_t *step, const struct rusage *ru)
{
    pid_t pids[64];
    size_t n = 0;
    uint64_t user = (uint64_t)ru->ru_utime.tv_sec * 1000000
                    + (uint64_t)ru->ru_utime.tv_usec;
    uint64_t sys = (uint64_t)ru->ru_stime.tv_sec * 1000000
                   + (uint64_t)ru->ru_stime.tv_usec;

    step->children = *ru;
    step->have_children = true;
    /* the tasks are the children it reaped: the tool table has the ends
     * of their runs from it
     */
    for (int i = 0; i < step->ntasks && n < 64; i++)
        if (step->tasks[i].pid > 0 && step->tasks[i].exited)
            pids[n++] = step->tasks[i].pid;
    (void)tr_detail_set_reaped (step->detail, pids, n, user + sys, user);
    step->followed = true;
}

json_t *tr_step_identity (tr_step_t *step)
{
    return step->identity;
}

json_t *tr_step_request (tr_step_t *step)
{
    return step->request;
}

double tr_step_interval (tr_step_t *step)
{
    return step->interval_s;
}

const char *tr_step_id_str (tr_step_t *step, const char *key)
{
    return json_string_value (json_object_get (step->identity, key));
}


static json_t *host_json (void)
{
    struct utsname u;
    struct sysinfo si;
    char host[256];

    if (gethostname (host, sizeof (host)) < 0)
        snprintf (host, sizeof (host), "unknown");
    host[sizeof (host) - 1] = '\0';
    if (uname (&u) < 0)
        snprintf (u.release, sizeof (u.release), "unknown");
    if (sysinfo (&si) < 0)
        memset (&si, 0, sizeof (si));
    return json_pack ("{s:s s:s s:I s:I s:s}", "hostname", host, "kernel",
                      u.release, "cpus_online",
                      (json_int_t)sysconf (_SC_NPROCESSORS_ONLN),
                      "mem_total_bytes",
                      (json_int_t)si.totalram * (json_int_t)si.mem_unit,
                      "cgroup_mode", cgroup_mode ());
}

/* A cgroup directory as /proc/PID/cgroup names it: relative to the
 * hierarchy's mount point.
 */
static json_t *hierarchy_path (const char *dir, const char *ctrl)
{
    char mnt[PATH_MAX];
    size_t len;

    if (tr_cgroup_mountpoint (ctrl, mnt, sizeof (mnt)) == 0
        && (len = strlen (mnt)) && !strncmp (dir, mnt, len)
        && dir[len] == '/')
        return json_string (dir + len);
    return json_string (dir);
}

static json_t *cgroup_json (const tr_step_t *step)
{
    json_t *paths;

    if (step->mode != ATTACH_CGROUP) {
        json_t *o = json_pack ("{s:s}", "attach", "process-tree"), *m;
        if (o && (step->match.session > 0 || step->match.env[0])) {
            if (!(m = json_object ())
                || json_object_set_new (o, "match", m) < 0
                || (step->match.session > 0
                    && json_object_set_new (m, "session",
                                            json_integer (step->match.session))
                           < 0)
                || (step->match.env[0]
                    && json_object_set_new (m, "env",
                                            json_string (step->match.env))
                           < 0)) {
                json_decref (o);
                return NULL;
            }
        }
        return o;
    }
    if (!(paths = json_object ()))
        return NULL;
    if ((step->cg.memory[0]
         && json_object_set_new (paths, "memory",
                                 hierarchy_path (step->cg.memory, "memory"))
               < 0)
        || (step->cg.cpuacct[0]
            && json_object_set_new (paths, "cpuacct",
                                    hierarchy_path (step->cg.cpuacct,
                                                    "cpuacct"))
                   < 0)
        || (step->cg.unified[0]
            && json_object_set_new (paths, "unified",
                                    hierarchy_path (step->cg.unified, NULL))
                   < 0)) {
        json_decref (paths);
        return NULL;
    }
    return json_pack ("{s:s s:s s:o}", "attach",
                      step->cg.unified_delegated ? "cgroup2-delegated"
                                                 : "cgroup",
                      "version",
                      (step->cg.memory[0] || step->cg.cpuacct[0]) ? "v1"
                                                                  : "v2",
                      "paths", paths);
}

/* Outcome from the tasks' wait statuses.  Scheduler-specific states
 * (cancelled, timeout) are refined by the hooks that know them.
 */
static json_t *outcome_json (const tr_step_t *step, bool final)
{
    json_t *tasks = json_array (), *o;
    int exit_code = 0, sig = 0;
    bool all_exited = true;
    /* the scheduler's word, unless the collector lost track */
    json_t *hint = final && !step->incomplete[0] && step->followed
                       ? step->outcome_hint
                       : NULL;
    /* a step none of whose processes was ever seen was not measured */
    bool unfollowed = final && !step->incomplete[0] && !step->followed;

    if (!tasks)
        return NULL;
    for (int i = 0; i < step->ntasks; i++) {
        const struct task *t = &step->tasks[i];
        json_t *tj = json_pack ("{s:i s:i}", "task_id", t->task_id, "pid",
                                (int)t->pid);
        if (!tj || json_array_append_new (tasks, tj) < 0)
            goto nomem;
        if (!t->exited) {
            all_exited = false;
            continue;
        }
        if (json_object_set_new (tj, "wait_status",
                                 json_integer (t->wait_status)) < 0)
            goto nomem;
        if (WIFEXITED (t->wait_status)) {
            int ec = WEXITSTATUS (t->wait_status);
            if (json_object_set_new (tj, "exit_code", json_integer (ec)) < 0)
                goto nomem;
            if (ec > exit_code)
                exit_code = ec;
        }
        else if (WIFSIGNALED (t->wait_status)) {
            int s = WTERMSIG (t->wait_status);
            if (json_object_set_new (tj, "signal", json_integer (s)) < 0)
                goto nomem;
            if (!sig)
                sig = s;
        }
    }
    {
        const char *state;
        if (!final)
            state = "running";
        else if (step->incomplete[0] || unfollowed)
            state = "incomplete";
        else if (sig == SIGKILL && step->oom_kills > 0)
            state = "oom";
        else if (step->ntasks == 0 && step->ended)
            state = "completed";
        else if (step->ntasks == 0 || !all_exited)
            state = "unknown";
        else if (sig || exit_code)
            state = "failed";
        else
            state = "completed";
        if (hint && strcmp (state, "oom"))
            state = json_string_value (json_object_get (hint, "state"));
        o = json_pack ("{s:s s:b s:o}", "state", state, "complete",
                       final && !step->incomplete[0] && !step->lost[0]
                           && !unfollowed
                           && ((all_exited && step->ntasks > 0)
                               || ((step->ntasks == 0 || hint)
                                   && step->ended)),
                       "tasks", tasks);
        tasks = NULL;
        if (o && hint) {
            /* the scheduler's exit code, signal and reason */
            const char *k;
            json_t *v;
            json_object_foreach (hint, k, v)
            {
                if (strcmp (k, "state")
                    && json_object_set (o, k, v) < 0) {
                    json_decref (o);
                    return NULL;
                }
            }
            return o;
        }
        /* nothing measured, but the scheduler's exit code stands */
        if (o && unfollowed && step->outcome_hint
            && ((json_is_integer (json_object_get (step->outcome_hint,
                                                   "exit_code"))
                 && json_object_set (o, "exit_code",
                                     json_object_get (step->outcome_hint,
                                                      "exit_code"))
                        < 0)
                || (json_is_integer (json_object_get (step->outcome_hint,
                                                      "signal"))
                    && json_object_set (o, "signal",
                                        json_object_get (step->outcome_hint,
                                                         "signal"))
                           < 0))) {
            json_decref (o);
            return NULL;
        }
        if (o && (step->incomplete[0] || step->lost[0] || unfollowed)
            && json_object_set_new (o, "reason",
                                    json_string (step->incomplete[0]
                                                     ? step->incomplete
                                                 : unfollowed
                                                     ? TR_STATES_UNFOLLOWED
                                                     : step->lost))
                   < 0) {
            json_decref (o);
            return NULL;
        }
        if (o && final && all_exited && step->ntasks > 0
            && !step->incomplete[0] && !unfollowed
            && (json_object_set_new (o, "exit_code",
                                     json_integer (exit_code)) < 0
                || (sig && json_object_set_new (o, "signal",
                                                json_integer (sig)) < 0))) {
            json_decref (o);
            return NULL;
        }
        return o;
    }
nomem:
    json_decref (tasks);
    return NULL;
}

/* Whether memory comes from a cgroup's own counters. */
static bool mem_from_cgroup (const tr_step_t *step)
{
    return !strncmp (step->mem_source, "cgroup-", 7);
}

/* A process tree's CPU: the readings of the tree miss whatever ran after
 * the last one (a job that ends right after CPU-heavy work) and the
 * processes that ended between two readings with their parent, while
 * the process table has every process's own CPU, exact for the ended
 * ones from their exit records (taskstats: the scheduler's run time).
 * Both undercount when they miss something, so the larger is kept; the
 * table's sum is exact when exit events were on from the step's start,
 * none was lost, every ended process has an exact exit record, the live
 * ones were read at the end, and it covers the readings.  user and
 * system come with the total they belong to.
 */
static void tree_cpu (const tr_step_t *step,
                      double *user,
                      double *sys,
                      double *total,
                      const char **source,
                      bool *exact)
{
    uint64_t total_us = 0, user_us = 0;
    bool table_exact = tr_detail_cpu (step->detail, &total_us, &user_us);
    double t = (double)total_us / 1e6;
    uint64_t read_us = (uint64_t)llround (*total * 1e6);
    uint64_t excl_us = tr_detail_excluded_us (step->detail);

    table_exact = table_exact && step->finished && !step->restored
                  && !step->lost[0];
    /* the readings hold the excluded processes that the step's
     * processes reaped (their cutime), the table does not
     */
    read_us = read_us > excl_us ? read_us - excl_us : 0;
    /* compared in microseconds: the readings are in clock ticks */
    if (total_us == 0 || total_us < read_us
        || (total_us == read_us && !table_exact))
        return;
    *total = t;
    *user = (double)user_us / 1e6;
    *sys = (double)(total_us - user_us) / 1e6;
    *source = "taskstats:exit records + proc:stat (process tree)";
    *exact = table_exact;
}

/* The summary of a step none of whose processes was seen: the figures
 * are unknown, so they are left out, and the sources say "none"
 * (doc/record-format.md).
 */
static json_t *unfollowed_summary_json (const tr_step_t *step)
{
    return json_pack ("{s:I s:{s:s s:b} s:{s:s s:b s:s}}", "samples",
                      (json_int_t)step->samples, "cpu", "source", "none",
                      "exact", 0, "memory", "source", "none", "exact", 0,
                      "definition", "nothing measured: no process of the "
                      "step was found");
}

static json_t *summary_json (const tr_step_t *step)
{
    double user = step->cpu_user_s, sys = step->cpu_sys_s;
    double total = step->cpu_total_s;
    const char *cpu_source = step->cpu_source;
    /* totals that stop early are not exact */
    bool cpu_exact = step->cpu_exact && !step->lost[0];
    uint64_t peak = step->mem_peak;
    const char *mem_source = step->mem_source;
    const char *definition;
    json_t *mem;

    if (step->mode == ATTACH_CGROUP && mem_from_cgroup (step))
        definition = "cgroup-charged: anonymous memory, page cache and "
                     "kernel memory charged to the step cgroup";
    else if (step->mode == ATTACH_CGROUP)
        definition = "resident set size of the step cgroup's processes "
                     "(RSS, shared pages counted in each process)";
    else
        definition = "resident set size of the process tree (RSS, shared "
                     "pages counted in each process)";
    if (step->mode == ATTACH_TREE && !step->have_children)
        tree_cpu (step, &user, &sys, &total, &cpu_source, &cpu_exact);
    if (step->have_children) {
        /* reaped descendants: exact CPU for a process tree; for memory,
         * the largest single RSS where it beats a sampled sum
         */
        const struct rusage *ru = &step->children;
        if (step->mode == ATTACH_TREE) {
            user = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6;
            sys = (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
            total = user + sys;
            cpu_source = "getrusage:RUSAGE_CHILDREN";
            cpu_exact = true;
        }
        if (!mem_from_cgroup (step)
            && (uint64_t)ru->ru_maxrss * 1024 > peak) {
            peak = (uint64_t)ru->ru_maxrss * 1024;
            mem_source = "getrusage:ru_maxrss (largest single process)";
            definition = "peak resident set size of the largest single "
                         "process (getrusage ru_maxrss)";
        }
    }
    mem = json_pack ("{s:I s:I s:s s:b s:s}", "peak_bytes", (json_int_t)peak,
                     "current_bytes", (json_int_t)step->mem_current, "source",
                     mem_source, "exact", step->mem_exact && !step->lost[0],
                     "definition",
                     definition);
    if (mem && step->mem_limit && step->mem_limit < (uint64_t)INT64_MAX / 2
        && json_object_set_new (mem, "limit_bytes",
                                json_integer ((json_int_t)step->mem_limit))
               < 0) {
        json_decref (mem);
        return NULL;
    }
    if (!mem)
        return NULL;
    {
        const struct {
            const char *name;
            int64_t v;
        } detail[] = {
            { "anon_bytes", step->mem_anon },
            { "file_bytes", step->mem_file },
            { "shmem_bytes", step->mem_shmem },
            { "swap_bytes", step->mem_swap },
            { "failcnt", step->failcnt },
            { "oom_events", step->oom_events },
            { "oom_kill_events", step->oom_kills },
        };
        for (size_t i = 0; i < sizeof (detail) / sizeof (detail[0]); i++)
            if (detail[i].v >= 0
                && json_object_set_new (mem, detail[i].name,
                                        json_integer (detail[i].v)) < 0) {
                json_decref (mem);
                return NULL;
            }
    }
    return json_pack ("{s:I s:{s:f s:f s:f s:s s:b} s:o}", "samples",
                      (json_int_t)step->samples, "cpu", "user_s", user,
                      "system_s", sys, "total_s", total, "source", cpu_source,
                      "exact", cpu_exact, "memory", mem);
}

/* Cut every array of the series to the shortest one, so each metric's
 * min/mean/max has exactly one value per t_s entry.
 */
static void trim_series (json_t *series, json_t *metrics)
{
    json_t *t = json_object_get (series, "t_s"), *m, *arr;
    size_t n = json_array_size (t);
    const char *name, *k;

    json_object_foreach (metrics, name, m) {
        json_object_foreach (m, k, arr) {
            if (json_array_size (arr) < n)
                n = json_array_size (arr);
        }
    }
    while (json_array_size (t) > n)
        json_array_remove (t, json_array_size (t) - 1);
    json_object_foreach (metrics, name, m) {
        json_object_foreach (m, k, arr) {
            while (json_array_size (arr) > n)
                json_array_remove (arr, json_array_size (arr) - 1);
        }
    }
}

/* The record; without its series when with_series is false (a
 * snapshot writes them as text).
 */
static int kernel_members (tr_step_t *step, json_t *rec);

static json_t *record_json (tr_step_t *step, const char *kind, bool with_series)
{
    bool final = !strcmp (kind, "final");
    json_t *rec, *metrics, *series = NULL;
    int64_t end = step->finished ? step->end_ms : end_now_ms (step);

    if (!(rec = tr_record_create (kind)))
        return NULL;
    if (!with_series) {
        json_object_del (rec, "series");
        goto no_series;
    }
    if (!(metrics = json_object ()))
        goto nomem;
    if (json_object_set_new (metrics, "cpu_cores",
                             tr_series_json (&step->cpu_series)) < 0
        || json_object_set_new (metrics, "mem_bytes",
                                tr_series_json (&step->mem_series)) < 0) {
        json_decref (metrics);
        goto nomem;
    }
    /* the cpu series starts one sample later than memory: align on the
     * shorter one so every metric array matches t_s in length.
     */
    if (tr_detail_record_series (step->detail, metrics) < 0) {
        json_decref (metrics);
        goto nomem;
    }
    series = json_pack ("{s:f s:o s:o}", "interval_s", step->interval_s,
                        "t_s", tr_series_times (&step->mem_series), "metrics",
                        metrics);
    if (!series)
        goto nomem;
    trim_series (series, metrics);
    if (json_object_set_new (rec, "series", series) < 0)
        goto nomem;
no_series:
    if (json_object_set_new (rec, "identity", json_deep_copy (step->identity))
            < 0
        || json_object_set_new (rec, "request", json_deep_copy (step->request))
               < 0
        || json_object_set_new (rec, "tags", json_deep_copy (step->tags)) < 0
        || json_object_set_new (rec, "host", host_json ()) < 0
        || json_object_set_new (rec, "cgroup", cgroup_json (step)) < 0
        || json_object_set_new (rec, "summary", step->followed ? summary_json (step)
                                                : unfollowed_summary_json (step)) < 0
        || json_object_set_new (rec, "outcome", outcome_json (step, final))
               < 0
        || json_object_set_new (rec, "collector",
                                json_pack ("{s:s s:s s:f}", "name",
                                           step->collector, "version",
                                           TRACER_VERSION, "interval_s",
                                           step->interval_s)) < 0)
        goto nomem;
    {
        json_t *t = json_pack ("{s:I}", "start_unix_ms",
                               (json_int_t)step->start_ms);
        if (!t)
            goto nomem;
        if (final
            && (json_object_set_new (t, "end_unix_ms", json_integer (end)) < 0
                || json_object_set_new (
                       t, "elapsed_s",
                       json_real ((double)(end - step->start_ms) / 1000.0))
                       < 0)) {
            json_decref (t);
            goto nomem;
        }
        if (json_object_set_new (rec, "time", t) < 0)
            goto nomem;
    }
    if (tr_detail_record (step->detail, rec) < 0
        || kernel_members (step, rec) < 0)
        goto nomem;
    if (!step->followed) {
        /* nothing measured: no series, I/O, network, GPU or pressure
         * figure either (unknown, not 0)
         */
        json_t *sum = json_object_get (rec, "summary");
        json_t *ser = json_object_get (rec, "series");
        if (ser
            && (json_object_set_new (ser, "t_s", json_array ()) < 0
                || json_object_set_new (ser, "metrics", json_object ()) < 0))
            goto nomem;
        json_object_del (sum, "io");
        json_object_del (sum, "network");
        json_object_del (sum, "gpu");
        json_object_del (sum, "pressure");
    }
    if (final) {
        /* a step that did not complete: the process that failed first */
        json_t *oc = json_object_get (rec, "outcome");
        const char *state = json_string_value (json_object_get (oc, "state"));
        json_t *culprit;
        if (state && strcmp (state, "completed")
            && (culprit = tr_detail_culprit (step->detail, end))
            && json_object_set_new (oc, "culprit", culprit) < 0)
            goto nomem;
    }
    return rec;
nomem:
    json_decref (rec);
    errno = ENOMEM;
    return NULL;
}

json_t *tr_step_record (tr_step_t *step, const char *kind)
{
    return record_json (step, kind, true);
}

json_t *tr_step_live_record (tr_step_t *step)
{
    return record_json (step, "snapshot", false);
}

char *tr_step_snapshot_text (tr_step_t *step)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    json_t *rec;
    char *head, iv[32];
    size_t len, n = tr_detail_series_points (step->detail);
    int saved;

    /* every array as long as the shortest, as trim_series cuts them */
    if (step->mem_series.n < n)
        n = step->mem_series.n;
    if (step->cpu_series.n < n)
        n = step->cpu_series.n;
    if (tr_series_real15 (iv, sizeof (iv), step->interval_s) < 0)
        return NULL;
    if (!(rec = record_json (step, "snapshot", false)))
        return NULL;
    head = json_dumps (rec, JSON_COMPACT | JSON_REAL_PRECISION (15));
    json_decref (rec);
    if (!head) {
        errno = ENOMEM;
        return NULL;
    }
    /* the record always has members: "{...}" with its "}" cut off */
    len = strlen (head);
    if (len < 3 || head[len - 1] != '}') {
        free (head);
        errno = EPROTO;
        return NULL;
    }
    if (tr_strbuf_append (&sb, head, len - 1) < 0
        || tr_strbuf_printf (&sb, ",\"series\":{\"interval_s\":%s,\"t_s\":", iv)
               < 0
        || tr_series_times_text (&sb, &step->mem_series, n) < 0
        || tr_strbuf_puts (&sb, ",\"metrics\":{\"cpu_cores\":") < 0
        || tr_series_text (&sb, &step->cpu_series, n) < 0
        || tr_strbuf_puts (&sb, ",\"mem_bytes\":") < 0
        || tr_series_text (&sb, &step->mem_series, n) < 0
        || tr_detail_series_text (step->detail, &sb, n) < 0
        || tr_strbuf_puts (&sb, "}}}") < 0) {
        saved = errno;
        free (head);
        tr_strbuf_free (&sb);
        errno = saved;
        return NULL;
    }
    free (head);
    return tr_strbuf_steal (&sb);
}

/* Sources are string literals; a restored step points back at them. */
static const char *const known_sources[] = {
    "none",
    "cgroup-v1:cpuacct.usage",
    "cgroup-v2:cpu.stat",
    "cgroup-v1:memory.max_usage_in_bytes",
    "cgroup-v1:memory.usage_in_bytes (sampled)",
    "cgroup-v2:memory.peak",
    "cgroup-v2:memory.current (sampled)",
    "proc:stat (process tree, sampled)",
    "proc:stat rss sum (process tree, sampled)",
    "proc:stat rss sum (cgroup processes, sampled)",
};

static const char *known_source (const char *s)
{
    for (size_t i = 0; s && i < sizeof (known_sources) / sizeof (*known_sources);
         i++)
        if (!strcmp (s, known_sources[i]))
            return known_sources[i];
    return "none";
}

json_t *tr_step_save (tr_step_t *step)
{
    json_t *tasks = json_array (), *st;

    if (!tasks)
        return NULL;
    for (int i = 0; i < step->ntasks; i++) {
        const struct task *t = &step->tasks[i];
        if (json_array_append_new (tasks,
                                   json_pack ("{s:i s:i s:b s:i}", "task_id",
                                              t->task_id, "pid", (int)t->pid,
                                              "exited", t->exited,
                                              "wait_status", t->wait_status))
            < 0) {
            json_decref (tasks);
            return NULL;
        }
    }
    st = json_pack ("{s:O s:O s:O s:s s:f s:s s:{s:s s:s s:s s:b} s:i"
                    " s:o s:I s:I s:f s:f s:f s:s s:b s:b s:I s:I s:I s:I"
                    " s:s s:b s:b}",
                    "identity", step->identity, "request", step->request,
                    "tags", step->tags, "collector", step->collector,
                    "interval_s", step->interval_s, "mode",
                    step->mode == ATTACH_CGROUP  ? "cgroup"
                    : step->mode == ATTACH_TREE ? "tree"
                                                : "none",
                    "cgroup", "memory", step->cg.memory, "cpuacct",
                    step->cg.cpuacct, "unified", step->cg.unified,
                    "unified_has_memory", step->cg.unified_has_memory,
                    "tree_root", (int)step->tree_root, "tasks", tasks,
                    "start_unix_ms", (json_int_t)step->start_ms, "samples",
                    (json_int_t)step->samples, "cpu_user_s", step->cpu_user_s,
                    "cpu_system_s", step->cpu_sys_s, "cpu_total_s",
                    step->cpu_total_s, "cpu_source", step->cpu_source,
                    "cpu_exact", step->cpu_exact, "have_cpu", step->have_cpu,
                    "mem_current", (json_int_t)step->mem_current, "mem_peak",
                    (json_int_t)step->mem_peak, "mem_peak_sampled",
                    (json_int_t)step->mem_peak_sampled, "mem_limit",
                    (json_int_t)(step->mem_limit > (uint64_t)INT64_MAX
                                     ? 0
                                     : step->mem_limit),
                    "mem_source", step->mem_source, "mem_exact",
                    step->mem_exact, "have_mem", step->have_mem);
    if (st
        && (json_object_set_new (st, "unified_is_mirror",
                                 json_boolean (step->cg.unified_is_mirror))
                < 0
            || json_object_set_new (st, "match",
                                    json_pack ("{s:i s:s s:s}", "session",
                                               (int)step->match.session,
                                               "env", step->match.env,
                                               "cgroup_name",
                                               step->match.cgroup_name))
                   < 0
            || json_object_set_new (st, "unified_delegated",
                                    json_boolean (step->cg.unified_delegated))
                   < 0
            || json_object_set_new (st, "followed",
                                    json_boolean (step->followed))
                   < 0
            || json_object_set_new (st, "detail",
                                    tr_detail_save (step->detail)) < 0
            || (step->lost[0]
                && json_object_set_new (st, "lost", json_string (step->lost))
                       < 0)
            || (step->events
                && json_object_set (st, "events", step->events) < 0))) {
        json_decref (st);
        return NULL;
    }
    return st;
}

tr_step_t *tr_step_restore (json_t *st, tr_error_t *error)
{
    json_t *identity, *request, *tags, *tasks, *t;
    const char *collector, *mode, *mem, *cpu, *uni, *cpu_src, *mem_src;
    double interval, user, sys, total;
    json_int_t start, samples, cur, peak, peak_s, limit;
    int64_t now;
    int root, umem, cpu_exact, have_cpu, mem_exact, have_mem;
    json_error_t jerr;
    tr_step_t *step;
    size_t i;

    if (json_unpack_ex (st, &jerr, 0,
                        "{s:o s:o s:o s:s s:F s:s s:{s:s s:s s:s s:b} s:i"
                        " s:o s:I s:I s:F s:F s:F s:s s:b s:b s:I s:I s:I"
                        " s:I s:s s:b s:b}",
                        "identity", &identity, "request", &request, "tags",
                        &tags, "collector", &collector, "interval_s",
                        &interval, "mode", &mode, "cgroup", "memory", &mem,
                        "cpuacct", &cpu, "unified", &uni,
                        "unified_has_memory", &umem, "tree_root", &root,
                        "tasks", &tasks, "start_unix_ms", &start, "samples",
                        &samples, "cpu_user_s", &user, "cpu_system_s", &sys,
                        "cpu_total_s", &total, "cpu_source", &cpu_src,
                        "cpu_exact", &cpu_exact, "have_cpu", &have_cpu,
                        "mem_current", &cur, "mem_peak", &peak,
                        "mem_peak_sampled", &peak_s, "mem_limit", &limit,
                        "mem_source", &mem_src, "mem_exact", &mem_exact,
                        "have_mem", &have_mem) < 0
        || !json_is_array (tasks)) {
        errno = EINVAL;
        tr_errprintf (error, "step state: %s", jerr.text);
        return NULL;
    }
    if (!(step = tr_step_create (identity, request, tags, collector,
                                 interval)))
        return NULL;
    if (!strcmp (mode, "cgroup")) {
        step->mode = ATTACH_CGROUP;
    step->followed = true;
        snprintf (step->cg.memory, sizeof (step->cg.memory), "%s", mem);
        snprintf (step->cg.cpuacct, sizeof (step->cg.cpuacct), "%s", cpu);
        snprintf (step->cg.unified, sizeof (step->cg.unified), "%s", uni);
        step->cg.unified_has_memory = umem;
        step->cg.unified_is_mirror
            = json_is_true (json_object_get (st, "unified_is_mirror"));
        step->cg.unified_delegated
            = json_is_true (json_object_get (st, "unified_delegated"));
        tr_detail_set_cgroup (step->detail, &step->cg, uni[0] != 0);
    }
    else if (!strcmp (mode, "tree")) {
        const char *env = "", *cgn = "";
        int sid = 0;
        step->mode = ATTACH_TREE;
        step->tree_root = (pid_t)root;
        (void)json_unpack (json_object_get (st, "match"), "{s?i s?s s?s}",
                           "session", &sid, "env", &env, "cgroup_name", &cgn);
        step->match.session = sid > 0 ? (pid_t)sid : 0;
        if (env_valid (env))
            snprintf (step->match.env, sizeof (step->match.env), "%s", env);
        if (!strchr (cgn, '/'))
            snprintf (step->match.cgroup_name,
                      sizeof (step->match.cgroup_name), "%s", cgn);
    }
    json_array_foreach (tasks, i, t) {
        int id = 0, pid = 0, exited = 0, ws = 0;
        if (json_unpack (t, "{s:i s:i s:b s:i}", "task_id", &id, "pid", &pid,
                         "exited", &exited, "wait_status", &ws) < 0
            || add_task (step, id, (pid_t)pid) < 0) {
            tr_step_destroy (step);
            errno = EINVAL;
            tr_errprintf (error, "step state: bad task entry");
            return NULL;
        }
        if (exited)
            tr_step_task_exit (step, id, (pid_t)pid, ws);
    }
    /* time continues from the original start; across a restart only the
     * wall clock knows how long ago that was (never less than nothing)
     */
    now = now_ms ();
    step->start_ms = start;
    step->start_mono = tr_when_monotonic ()
                       - (now > start ? (double)(now - start) / 1000.0 : 0.0);
    step->last_mono = tr_when_monotonic ();
    step->samples = samples;
    step->cpu_user_s = user;
    step->cpu_sys_s = sys;
    step->cpu_total_s = total;
    step->cpu_source = known_source (cpu_src);
    step->cpu_exact = cpu_exact;
    step->restored = true;
    step->have_cpu = have_cpu;
    step->mem_current = (uint64_t)cur;
    step->mem_peak = (uint64_t)peak;
    step->mem_peak_sampled = (uint64_t)peak_s;
    step->mem_limit = (uint64_t)limit;
    step->mem_source = known_source (mem_src);
    step->mem_exact = mem_exact;
    if (json_is_string (json_object_get (st, "lost")))
        snprintf (step->lost, sizeof (step->lost), "%s",
                  json_string_value (json_object_get (st, "lost")));
    step->have_mem = have_mem;
    /* a state from before "followed" was kept: take it as followed */
    if (json_is_boolean (json_object_get (st, "followed")))
        step->followed = step->followed
                         || json_is_true (json_object_get (st, "followed"));
    else
        step->followed = true;
    if (json_is_object (json_object_get (st, "detail")))
        tr_detail_restore (step->detail, json_object_get (st, "detail"));
    if (step->ntasks > 0)
        tr_detail_set_task (step->detail, step->tasks[0].pid);
    /* kernel evidence seen before the restart (root's own state file) */
    if (json_is_array (json_object_get (st, "events"))
        && json_array_size (json_object_get (st, "events"))
               <= TR_KMSG_STEP_EVENTS)
        step->events = json_deep_copy (json_object_get (st, "events"));
    return step;
}

bool tr_step_alive (tr_step_t *step)
{
    char path[PATH_MAX + 32];
    const char *dir;

    if (step->mode == ATTACH_TREE) {
        for (int i = 0; i < step->ntasks; i++) {
            snprintf (path, sizeof (path), "%s/proc/%d", tr_fsroot (),
                      (int)step->tasks[i].pid);
            if (!step->tasks[i].exited && access (path, F_OK) == 0)
                return true;
        }
        /* a matched set lives while any member does */
        if (step->match.session > 0 || step->match.env[0])
            return read_tree (step) == 0 && step->npids > 0;
        return false;
    }
    dir = step->cg.memory[0]    ? step->cg.memory
          : step->cg.cpuacct[0] ? step->cg.cpuacct
                                : step->cg.unified;
    if (!dir[0])
        return false;
    snprintf (path, sizeof (path), "%s%s", tr_fsroot (), dir);
    return access (path, F_OK) == 0;
}

int tr_step_end (tr_step_t *step, tr_error_t *error)
{
    step->ended = true;
    return tr_step_finish (step, error);
}

void tr_step_mark_incomplete (tr_step_t *step, const char *reason)
{
    snprintf (step->incomplete, sizeof (step->incomplete), "%s", reason);
    if (!step->finished) {
        step->end_ms = end_now_ms (step);
        step->finished = true;
    }
}

/* Kernel evidence and no progress (kmsg.h, progress.h). */

/* A reading for the no-progress tracker: the step's CPU and its
 * processes' I/O.  The final reading (processes being killed at the end)
 * is not one: the stall stands as the last regular reading saw it.
 */
static void progress_reading (tr_step_t *step, double t)
{
    struct tr_proc_io io;
    char procdir[PATH_MAX];
    json_t *procs;

    if (step->stall_after_s <= 0 || step->finishing || !step->have_cpu)
        return;
    tr_detail_proc_io (step->detail, &io);
    if (!tr_progress_feed (&step->progress, t, now_ms (), step->cpu_total_s,
                           io.rchar + io.wchar + io.read_bytes
                               + io.write_bytes,
                           step->stall_after_s)) {
        json_decref (step->stall_procs);
        step->stall_procs = NULL;
        return;
    }
    /* what the processes are blocked in, once the stretch is a stall */
    if (!tr_progress_stalled (&step->progress, step->stall_after_s)
        || tr_fsroot_path (procdir, sizeof (procdir), "/proc") < 0)
        return;
    if ((procs = tr_progress_procs (procdir, step->pids, step->npids))) {
        json_t *p;
        size_t i;

        /* a launcher waits for work that runs in another step or on
         * other nodes: that work is judged by its own step
         */
        json_array_foreach (procs, i, p)
            if (tr_progress_launcher (
                    json_string_value (json_object_get (p, "tool")))) {
                json_decref (procs);
                tr_step_progress_touch (step, t, now_ms ());
                return;
            }
        json_decref (step->stall_procs);
        step->stall_procs = procs;
    }
}

void tr_step_set_stall_after (tr_step_t *step, double seconds)
{
    const char *id = json_string_value (
        json_object_get (step->identity, "step_id"));

    step->stall_after_s = seconds > 0 && tr_progress_applies (id) ? seconds
                                                                  : 0;
}

bool tr_step_last_progress (tr_step_t *step, double *t_mono,
                            int64_t *t_unix_ms)
{
    if (step->stall_after_s <= 0 || !step->progress.have)
        return false;
    *t_mono = step->progress.moved_mono;
    *t_unix_ms = step->progress.moved_unix_ms;
    return true;
}

void tr_step_progress_touch (tr_step_t *step, double t_mono,
                             int64_t t_unix_ms)
{
    tr_progress_touch (&step->progress, t_mono, t_unix_ms);
    if (!tr_progress_stalled (&step->progress, step->stall_after_s)) {
        json_decref (step->stall_procs);
        step->stall_procs = NULL;
    }
}

bool tr_step_stalled (tr_step_t *step, double *idle_s)
{
    if (idle_s)
        *idle_s = tr_progress_idle_s (&step->progress);
    return tr_progress_stalled (&step->progress, step->stall_after_s);
}

static int kernel_members (tr_step_t *step, json_t *rec)
{
    json_t *p;

    if (step->events && json_array_size (step->events) > 0
        && json_object_set (rec, "events", step->events) < 0)
        return -1;
    p = tr_progress_json (&step->progress, step->stall_after_s,
                          step->stall_procs);
    if (p && json_object_set_new (rec, "progress", p) < 0)
        return -1;
    return 0;
}

/* The cgroup directory dir (absolute, under the hierarchy mounted at
 * mount) relative to that hierarchy's root, as the kernel names it.
 */
static const char *rel_dir (const char *dir, const char *controller,
                            char *buf, size_t size)
{
    char mnt[PATH_MAX];
    size_t n;

    if (!dir[0] || tr_cgroup_mountpoint (controller, mnt, sizeof (mnt)) < 0)
        return NULL;
    n = strlen (mnt);
    if (strncmp (dir, mnt, n) || (dir[n] != '/' && dir[n] != '\0'))
        return NULL;
    snprintf (buf, size, "%s", dir[n] ? dir + n : "/");
    return buf;
}

bool tr_step_cgroup_holds (const tr_step_t *step,
                           const struct tr_cgroup_paths *pc)
{
    return (step->cg.memory[0] && pc->memory[0]
            && tr_kmsg_cgroup_within (pc->memory, step->cg.memory))
           || (step->cg.unified[0] && pc->unified[0]
               && !step->cg.unified_is_mirror
               && tr_kmsg_cgroup_within (pc->unified, step->cg.unified));
}

int tr_step_pid_cgroups (pid_t pid, struct tr_cgroup_paths *pc)
{
    char path[64], *text;
    int rc;

    snprintf (path, sizeof (path), "/proc/%d/cgroup", (int)pid);
    if (!(text = tr_fsroot_read_text (path, 64 * 1024)))
        return -1;
    rc = tr_cgroup_parse (text, false, pc, NULL);
    free (text);
    return rc;
}

/* Whether the live process pid sits in the step's cgroup. */
static bool pid_in_cgroup (tr_step_t *step, pid_t pid)
{
    struct tr_cgroup_paths pc;

    return tr_step_pid_cgroups (pid, &pc) == 0
           && tr_step_cgroup_holds (step, &pc);
}

bool tr_step_kmsg_concerns (tr_step_t *step, const struct tr_kmsg_event *ev,
                            double recent_s)
{
    char mem[PATH_MAX], uni[PATH_MAX];
    double now = tr_when_monotonic ();
    unsigned n = sizeof (step->gone) / sizeof (step->gone[0]);
    pid_t gone[sizeof (step->gone) / sizeof (step->gone[0])];
    struct tr_kmsg_step st = {
        .pids = step->pids,
        .npids = step->npids,
        .gone = gone,
    };

    if (ev->memcg[0] || ev->oom_memcg[0]) {
        st.memory_rel = rel_dir (step->cg.memory, "memory", mem, sizeof (mem));
        if (!step->cg.unified_is_mirror)
            st.unified_rel =
                rel_dir (step->cg.unified, NULL, uni, sizeof (uni));
    }
    for (unsigned i = 0; i < n && i < step->ngone; i++)
        if (now - step->gone[i].mono <= recent_s)
            gone[st.ngone++] = step->gone[i].pid;
    /* a cgroup namespace may name the victim's path otherwise than this
     * host's mount does: then its pid decides
     */
    if (tr_kmsg_concerns (ev, &st))
        return true;
    return ev->pid > 0
           && (tr_detail_has_pid (step->detail, ev->pid)
               || (step->mode == ATTACH_CGROUP
                   && pid_in_cgroup (step, ev->pid)));
}

int tr_step_kmsg_add (tr_step_t *step, const struct tr_kmsg_event *ev,
                      const char *scope, int64_t t_unix_ms)
{
    return tr_kmsg_events_add (&step->events, ev, scope, t_unix_ms,
                               &step->events_dropped);
}
