/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Golden records of the sampling engine: for each node layout, a whole
 * fixture node (mountinfo, the step's cgroup files, /proc of its
 * processes, NVML) is built under a temporary fsroot, a step is attached,
 * sampled twice and finished, and its final record is compared with
 * tests/fixtures/records/collector-<case>.json after canonical
 * serialization.  TRACER_UPDATE_EXPECTED=1 rewrites the expected files;
 * every figure in them was checked by hand against the fixture below.
 *
 * Time is the test's: clock_gettime and sysconf are wrapped at link time
 * (-Wl,--wrap, see tests/Makefile.am), so the start and end times, the
 * sample times and every rate are the same on every run, and so are page
 * size and USER_HZ.  What still comes from the machine is normalized
 * before the comparison (see normalize()).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/util/fsroot.h"
#include "libtracer/node/gpu.h"
#include "libtracer/record/record.h"
#include "libtracer/node/sampler.h"
#include "libtracer/node/topology.h"
#include "rmtree.h"

#define EXPECTED TEST_SRCDIR "/fixtures/records"
#define NVML_FIXTURE TEST_BUILDDIR "/.libs/libnvidia-ml-fixture.so"
#define TOPOLOGY_XML TEST_SRCDIR "/fixtures/metrics/topology/2socket-ht.xml"

/* The fixture clock.  The step starts at FAKE_NOW_S (2026-01-01 00:00
 * UTC), samples at +10 s and +20 s and ends at +30 s.  The node booted
 * an hour earlier: /proc/stat btime, from which process start times
 * (in USER_HZ ticks since boot) become wall-clock times.
 */
#define FAKE_NOW_S 1767225600LL
#define FAKE_MONO_S 3600LL
#define FAKE_BTIME_S (FAKE_NOW_S - FAKE_MONO_S)
#define TICKS(s) ((FAKE_MONO_S + (s)) * 100) /* start at step time s */
#define FAKE_PAGE 4096
#define FAKE_HZ 100

static int64_t fake_ms; /* milliseconds since the step's start */

/* How far the wall clock has been stepped (negative: back), on top of
 * fake_ms; the monotonic clocks never are.  clock_back_ms is the step
 * run_case() makes between its two samples.
 */
static int64_t real_step_ms;
static int64_t clock_back_ms;

int __real_clock_gettime (clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime (clockid_t clk, struct timespec *ts);
long __real_sysconf (int name);
long __wrap_sysconf (int name);

int __wrap_clock_gettime (clockid_t clk, struct timespec *ts)
{
    int64_t ms;

    switch (clk) {
    case CLOCK_REALTIME:
        ms = FAKE_NOW_S * 1000 + fake_ms + real_step_ms;
        break;
    case CLOCK_MONOTONIC:
    case CLOCK_BOOTTIME:
        ms = FAKE_MONO_S * 1000 + fake_ms;
        break;
    default:
        return __real_clock_gettime (clk, ts);
    }
    ts->tv_sec = (time_t)(ms / 1000);
    ts->tv_nsec = (long)(ms % 1000) * 1000000;
    return 0;
}

/* Pages and ticks are 4 KiB and 1/100 s in the fixture on every
 * architecture (64 KiB pages exist on arm64 and ppc64le).
 */
long __wrap_sysconf (int name)
{
    if (name == _SC_PAGESIZE)
        return FAKE_PAGE;
    if (name == _SC_CLK_TCK)
        return FAKE_HZ;
    return __real_sysconf (name);
}

static char root[PATH_MAX];
static char nvml_state[PATH_MAX];

/* fixture files */

static void full_path (char *buf, size_t size, const char *path)
{
    int n = snprintf (buf, size, "%s%s", root, path);

    assert_true (n > 0 && (size_t)n < size);
}

static void make_parents (const char *full)
{
    char dir[PATH_MAX], *p;

    snprintf (dir, sizeof (dir), "%s", full);
    for (p = dir + strlen (root) + 1; (p = strchr (p, '/')); p++) {
        *p = '\0';
        if (mkdir (dir, 0755) < 0 && errno != EEXIST)
            fail_msg ("mkdir %s: %s", dir, strerror (errno));
        *p = '/';
    }
}

/* Write len bytes to the fsroot-relative path, making its parents. */
static void put_bytes (const char *path, const char *data, size_t len)
{
    char full[PATH_MAX];
    FILE *f;

    full_path (full, sizeof (full), path);
    make_parents (full);
    if (!(f = fopen (full, "w")))
        fail_msg ("%s: %s", full, strerror (errno));
    assert_int_equal (fwrite (data, 1, len, f), len);
    assert_int_equal (fclose (f), 0);
}

static void put (const char *path, const char *text)
{
    put_bytes (path, text, strlen (text));
}

static void putf (const char *path, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void putf (const char *path, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    assert_true (n >= 0 && (size_t)n < sizeof (text));
    put (path, text);
}

/* A symbolic link at path to target (target as given: absolute targets
 * are taken as they are, as in /proc/PID/exe).
 */
static void put_link (const char *path, const char *target)
{
    char full[PATH_MAX];

    full_path (full, sizeof (full), path);
    make_parents (full);
    (void)unlink (full);
    if (symlink (target, full) < 0)
        fail_msg ("symlink %s: %s", full, strerror (errno));
}

/* Remove a fixture tree, fsroot-relative ("" for the whole root). */
static int rm_tree (const char *path)
{
    char full[PATH_MAX];

    snprintf (full, sizeof (full), "%s%s", root, path);
    if (access (full, F_OK) < 0)
        return 0;
    return rmtree (full);
}

/* processes */

/* One reading of a process's counters. */
struct preading {
    unsigned long long utime, stime; /* ticks */
    unsigned long long rss;          /* pages */
    unsigned long long hwm_kb;       /* VmHWM */
    unsigned long long rchar, wchar, syscr, syscw;
    unsigned long long read_bytes, write_bytes;
    unsigned long long run_delay_ns; /* summed over the threads */
};

struct fproc {
    int pid, ppid, sid;
    const char *comm;         /* /proc/PID/stat */
    const char *exe;          /* /proc/PID/exe target */
    const char *argv;         /* /proc/PID/cmdline, '|' between arguments */
    int threads;              /* > 1: task/TID/schedstat per thread */
    unsigned long long start; /* ticks since boot */
    unsigned present;         /* bit i: present in reading i */
    struct preading r[2];
};

/* The step's processes, shared by the cgroup layouts.  slurmstepd sits
 * in the step cgroup (v1: step_0 itself, v2: step_0/slurm), as Slurm
 * puts it there; tasks 0 and 1 run python; task 0 starts dd between the
 * two readings.  Task 0 has two threads, whose run delays add up.
 * Each reading: utime stime (ticks), rss (pages), VmHWM (kB), rchar
 * wchar syscr syscw read_bytes write_bytes, run delay (ns).
 */
/* clang-format off */
static const struct fproc step_procs[] = {
    { 500, 1, 500, "slurmstepd", "/usr/sbin/slurmstepd",
      "slurmstepd: [42.0]", 4, TICKS (0) - 50, 3,
      { { 3, 1, 1500, 6000, 40000, 9000, 120, 30, 0, 8192, 1000000 },
        { 5, 2, 1600, 6400, 52000, 11000, 160, 40, 0, 12288, 1500000 } } },
    { 601, 500, 601, "python3", "/usr/bin/python3.11",
      "python3|train.py|--epochs|3|--token=s3cr3t", 2, TICKS (0) + 10, 3,
      { { 800, 100, 50000, 210000, 3000000, 1000000, 900, 300, 1048576,
          0, 30000000 },
        { 1750, 200, 80000, 350000, 9000000, 5000000, 2900, 1300, 3145728,
          4194304, 70000000 } } },
    { 602, 500, 602, "python3", "/usr/bin/python3.11",
      "python3|train.py|--epochs|3|--token=s3cr3t", 1, TICKS (0) + 12, 3,
      { { 300, 20, 30000, 150000, 2000000, 500000, 700, 100, 524288, 0,
          20000000 },
        { 500, 40, 40000, 180000, 4000000, 1500000, 1200, 400, 1048576,
          1048576, 45000000 } } },
    { 603, 601, 601, "dd", "/usr/bin/dd",
      "dd|if=/dev/zero|of=ckpt|bs=1M|count=16", 1, TICKS (12), 2,
      { { 0 },
        { 2, 75, 300, 2048, 16781312, 16777216, 20, 16, 0, 16777216,
          500000 } } },
};

/* Task 1's sleep of the vanished-pid case, in the first reading only. */
static const struct fproc sleep_proc = {
    604, 602, 602, "sleep", "/usr/bin/sleep", "sleep|600", 1,
    TICKS (0) + 40, 1,
    { { 1, 0, 200, 900, 1900, 0, 7, 0, 0, 0, 80000 }, { 0 } },
};

/* A process of the node outside the step (the process-tree case). */
static const struct fproc sshd_proc = {
    900, 1, 900, "sshd", "/usr/sbin/sshd", "sshd: alice@pts/0", 1, 100, 3,
    { { 500, 100, 2000, 9000, 1, 1, 1, 1, 0, 0, 1 },
      { 600, 120, 2000, 9000, 1, 1, 1, 1, 0, 0, 1 } },
};
/* clang-format on */

#define NPROCS(a) (sizeof (a) / sizeof ((a)[0]))

/* Write /proc/PID of p as it reads in reading i.  ns is the
 * /proc/PID/ns/net link target (the node's namespace or another).
 */
static void write_proc (const struct fproc *p, int i, const char *ns)
{
    const struct preading *r = &p->r[i];
    char path[128], argv[256];
    size_t len;

    snprintf (path, sizeof (path), "/proc/%d/stat", p->pid);
    putf (path,
          "%d (%s) S %d %d %d 0 -1 4194560 5000 0 10 0 %llu %llu 0 0 20 0 "
          "%d 0 %llu 1200000000 %llu 18446744073709551615 1 1 0 0 0 0 0 "
          "4096 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
          p->pid, p->comm, p->ppid, p->pid, p->sid, r->utime, r->stime,
          p->threads, p->start, r->rss);
    snprintf (path, sizeof (path), "/proc/%d/status", p->pid);
    putf (path,
          "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\n"
          "Pid:\t%d\nPPid:\t%d\nVmPeak:\t 1200000 kB\nVmHWM:\t%8llu kB\n"
          "VmRSS:\t%8llu kB\nThreads:\t%d\nCpus_allowed:\tf\n"
          "Cpus_allowed_list:\t0-3\n",
          p->comm, p->pid, p->pid, p->ppid, r->hwm_kb,
          r->rss * FAKE_PAGE / 1024, p->threads);
    snprintf (path, sizeof (path), "/proc/%d/io", p->pid);
    putf (path,
          "rchar: %llu\nwchar: %llu\nsyscr: %llu\nsyscw: %llu\n"
          "read_bytes: %llu\nwrite_bytes: %llu\ncancelled_write_bytes: 0\n",
          r->rchar, r->wchar, r->syscr, r->syscw, r->read_bytes,
          r->write_bytes);
    /* the main thread's own; with threads, each thread's in task/ */
    snprintf (path, sizeof (path), "/proc/%d/schedstat", p->pid);
    putf (path, "%llu %llu 50\n", r->utime * 10000000ULL,
          p->threads > 1 ? r->run_delay_ns / 2 : r->run_delay_ns);
    if (p->threads > 1) {
        snprintf (path, sizeof (path), "/proc/%d/task/%d/schedstat", p->pid,
                  p->pid);
        putf (path, "1 %llu 5\n", r->run_delay_ns / 2);
        snprintf (path, sizeof (path), "/proc/%d/task/%d/schedstat", p->pid,
                  p->pid + 1000);
        putf (path, "1 %llu 5\n", r->run_delay_ns - r->run_delay_ns / 2);
    }
    len = strlen (p->argv);
    assert_true (len < sizeof (argv));
    for (size_t k = 0; k <= len; k++)
        argv[k] = p->argv[k] == '|' ? '\0' : p->argv[k];
    snprintf (path, sizeof (path), "/proc/%d/cmdline", p->pid);
    put_bytes (path, argv, len + 1);
    snprintf (path, sizeof (path), "/proc/%d/exe", p->pid);
    put_link (path, p->exe);
    snprintf (path, sizeof (path), "/proc/%d/ns/net", p->pid);
    put_link (path, ns);
}

/* The node's network counters as every process of it sees them. */
static void write_net_dev (int pid, int i)
{
    static const unsigned long long eth0[2][4] = {
        { 1000000, 2000, 500000, 1000 }, /* rx bytes, packets; tx */
        { 5000000, 6000, 2500000, 3000 },
    };
    char path[64];

    snprintf (path, sizeof (path), "/proc/%d/net/dev", pid);
    putf (path,
          "Inter-|   Receive                                            "
          "    |  Transmit\n"
          " face |bytes    packets errs drop fifo frame compressed "
          "multicast|bytes    packets errs drop fifo colls carrier "
          "compressed\n"
          "    lo: %llu %llu 0 0 0 0 0 0 %llu %llu 0 0 0 0 0 0\n"
          "  eth0: %llu %llu 0 0 0 0 0 0 %llu %llu 0 0 0 0 0 0\n",
          777000ULL * (unsigned)(i + 1), 70ULL * (unsigned)(i + 1),
          777000ULL * (unsigned)(i + 1), 70ULL * (unsigned)(i + 1), eth0[i][0],
          eth0[i][1], eth0[i][2], eth0[i][3]);
}

/* Reading i of the processes (i == 2: the end, all gone); their network
 * namespace is the file netns (fsroot-relative): "/proc/1/ns/net" for
 * the node's.
 */
static void write_procs (const struct fproc *ps,
                         size_t n,
                         int i,
                         const char *netns)
{
    char ns[PATH_MAX], path[64];

    full_path (ns, sizeof (ns), netns);
    for (size_t k = 0; k < n; k++) {
        snprintf (path, sizeof (path), "/proc/%d", ps[k].pid);
        assert_int_equal (rm_tree (path), 0);
        if (i < 2 && (ps[k].present & (1u << i))) {
            write_proc (&ps[k], i, ns);
            write_net_dev (ps[k].pid, i);
        }
    }
}

/* The node: boot time, pid 1, the cpufreq maximum for host.topology. */
static void write_node (const char *mountinfo)
{
    put ("/proc/self/mountinfo", mountinfo);
    putf ("/proc/stat",
          "cpu  100 0 50 10000 10 0 5 0 0 0\nintr 0\nctxt 1000\n"
          "btime %lld\nprocesses 2000\n",
          FAKE_BTIME_S);
    put ("/proc/1/ns/net", "");
    put ("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "2600000\n");
}

/* cgroup layouts */

#define V1_MOUNTS                                                         \
    "30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime " \
    "shared:9 - cgroup cgroup rw,memory\n"                                \
    "31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,"     \
    "relatime shared:10 - cgroup cgroup rw,cpu,cpuacct\n"                 \
    "32 25 0:28 / /sys/fs/cgroup/blkio rw,nosuid,nodev,noexec,relatime "  \
    "shared:11 - cgroup cgroup rw,blkio\n"
#define UNIFIED_MOUNT                                                      \
    "29 25 0:25 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime " \
    "shared:8 - cgroup2 cgroup2 rw,nsdelegate\n"
#define V2_MOUNTS                                                           \
    "27 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 " \
    "- cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"

#define OOM_CONTROL "oom_kill_disable 0\nunder_oom 0\noom_kill %llu\n"
#define V1_REL "/slurm_n1/uid_1000/job_42/step_0"
#define V1_MEM "/sys/fs/cgroup/memory" V1_REL
#define V1_CPU "/sys/fs/cgroup/cpu,cpuacct" V1_REL
#define MIRROR_REL "/tracer/c1@42@0@n1"
#define MIRROR "/sys/fs/cgroup/unified" MIRROR_REL
#define V2_REL "/system.slice/slurmstepd.scope/job_42/step_0"
#define V2_STEP "/sys/fs/cgroup" V2_REL
#define V2_TASKS V2_STEP "/user"

/* Which pids each directory of the step lists, per reading: slurmstepd's
 * directory (v1 step_0, v2 step_0/slurm) and the two task directories.
 * At the end (reading 2) every list is empty.
 */
struct members {
    const char *stepd[2], *task0[2], *task1[2];
};

static const struct members step_members = {
    { "500\n", "500\n" },
    { "601\n", "601\n603\n" },
    { "602\n", "602\n" },
};

/* The tasks' /proc/PID/cgroup while they run: v1 lines for the
 * controllers (task_N directories) when v1 is set, and the cgroup2 line:
 * Slurm's v2 task directory, the tracer mirror, or the root.
 */
static void write_task_cgroups (int i,
                                const char *v1,
                                const char *v2,
                                const char *mirror)
{
    char text[1024], unified[512];
    int n = 0;

    if (i >= 2)
        return;
    for (int task = 0; task < 2; task++) {
        if (v2)
            snprintf (unified, sizeof (unified), "%s/user/task_%d", v2, task);
        else
            snprintf (unified, sizeof (unified), "%s", mirror ? mirror : "/");
        if (v1)
            n = snprintf (text, sizeof (text),
                          "12:memory:%s/task_%d\n4:cpu,cpuacct:%s/task_%d\n"
                          "3:blkio:/system.slice/slurmd.service\n"
                          "2:freezer:%s\n0::%s\n",
                          v1, task, v1, task, v1, unified);
        else
            n = snprintf (text, sizeof (text), "0::%s\n", unified);
        assert_true (n > 0 && (size_t)n < sizeof (text));
        put (task ? "/proc/602/cgroup" : "/proc/601/cgroup", text);
    }
}

static const char *members_of (const char *const list[2], int i)
{
    return i < 2 ? list[i] : "";
}

/* PSI files, some and full totals (us) per resource and reading. */
static void write_pressure (const char *dir, int c)
{
    static const unsigned long long total[3][2][2] = {
        { { 1500000, 4000000 }, { 200000, 700000 } }, /* cpu */
        { { 10000, 60000 }, { 5000, 30000 } },        /* memory */
        { { 300000, 1300000 }, { 250000, 1000000 } }, /* io */
    };
    static const char *const file[3] = {
        "cpu.pressure",
        "memory.pressure",
        "io.pressure",
    };
    char path[PATH_MAX];

    for (int k = 0; k < 3; k++) {
        snprintf (path, sizeof (path), "%s/%s", dir, file[k]);
        putf (path,
              "some avg10=1.25 avg60=0.80 avg300=0.20 total=%llu\n"
              "full avg10=0.50 avg60=0.30 avg300=0.10 total=%llu\n",
              total[k][0][c], total[k][1][c]);
    }
}

/* Slurm's cgroup v1 step: memory and cpuacct, tasks in task_N, each
 * task directory with its own oom_kill count (task 1 was OOM-killed
 * between the readings).  cpuacct counts the tasks only (slurmstepd
 * stays in the cpuacct root), in ns: 12.2 s then 25.67 s, the tasks'
 * utime+stime.
 */
static void write_v1 (int i, const struct members *m)
{
    static const unsigned long long usage[2] = { 12200000000ULL,
                                                 25670000000ULL };
    static const unsigned long long user[2] = { 11000000000ULL,
                                                22520000000ULL };
    static const unsigned long long sys[2] = { 1200000000ULL, 3150000000ULL };
    static const unsigned long long cur[2] = { 524288000, 786432000 };
    static const unsigned long long max[2] = { 600000000, 943718400 };
    static const unsigned long long rss[2] = { 419430400, 671088640 };
    static const unsigned long long cache[2] = { 104857600, 115343360 };
    static const unsigned long long shmem[2] = { 1048576, 2097152 };
    static const unsigned long long failcnt[2] = { 0, 2 };
    static const unsigned long long oom1[2] = { 0, 1 };
    int c = i < 2 ? i : 1; /* counters stay at the last reading */

    putf (V1_CPU "/cpuacct.usage", "%llu\n", usage[c]);
    putf (V1_CPU "/cpuacct.usage_user", "%llu\n", user[c]);
    putf (V1_CPU "/cpuacct.usage_sys", "%llu\n", sys[c]);
    putf (V1_CPU "/cpuacct.stat", "user %llu\nsystem %llu\n",
          user[c] / 10000000, sys[c] / 10000000);
    put (V1_CPU "/task_0/cgroup.procs", members_of (m->task0, i));
    put (V1_CPU "/task_1/cgroup.procs", members_of (m->task1, i));
    putf (V1_MEM "/memory.usage_in_bytes", "%llu\n", cur[c]);
    putf (V1_MEM "/memory.max_usage_in_bytes", "%llu\n", max[c]);
    put (V1_MEM "/memory.limit_in_bytes", "4294967296\n");
    putf (V1_MEM "/memory.failcnt", "%llu\n", failcnt[c]);
    putf (V1_MEM "/memory.stat",
          "cache 0\nrss 0\nshmem 0\nswap 0\ntotal_cache %llu\n"
          "total_rss %llu\ntotal_rss_huge 0\ntotal_shmem %llu\n"
          "total_swap 0\ntotal_pgmajfault 12\n",
          cache[c], rss[c], shmem[c]);
    put (V1_MEM "/memory.oom_control", "oom_kill_disable 0\nunder_oom "
                                       "0\noom_kill 0\n");
    put (V1_MEM "/task_0/memory.oom_control", "oom_kill_disable 0\nunder_oom "
                                              "0\noom_kill 0\n");
    putf (V1_MEM "/task_1/memory.oom_control",
          "oom_kill_disable 0\nunder_oom 0\noom_kill %llu\n", oom1[c]);
    put (V1_MEM "/cgroup.procs", members_of (m->stepd, i));
    put (V1_MEM "/task_0/cgroup.procs", members_of (m->task0, i));
    put (V1_MEM "/task_1/cgroup.procs", members_of (m->task1, i));
}

/* The tracer mirror directory of a hybrid host: a controller-less
 * cgroup2 directory that the tasks (not slurmstepd) were moved into, with
 * its own cpu.stat and pressure files.
 */
static void write_mirror (int i, const struct members *m)
{
    static const unsigned long long usage[2] = { 12200000, 25670000 };
    static const unsigned long long user[2] = { 11000000, 22520000 };
    static const unsigned long long sys[2] = { 1200000, 3150000 };
    int c = i < 2 ? i : 1;

    put (MIRROR "/cgroup.controllers", "");
    putf (MIRROR "/cgroup.procs", "%s%s", members_of (m->task0, i),
          members_of (m->task1, i));
    putf (MIRROR "/cpu.stat",
          "usage_usec %llu\nuser_usec %llu\n"
          "system_usec %llu\n",
          usage[c], user[c], sys[c]);
    write_pressure (MIRROR, c);
}

/* Slurm's cgroup v2 step: slurmstepd in step_0/slurm, tasks in
 * step_0/user/task_N; all controllers; no memory.peak before Linux 5.19.
 * The step is its tasks' directory, step_0/user: its cpu.stat counts the
 * tasks alone, 12.24 s then 25.74 s, their utime+stime; the step's memory
 * limit is Slurm's, on step_0.
 */
static void write_v2 (int i, const struct members *m, bool peak)
{
    static const unsigned long long usage[2] = { 12240000, 25740000 };
    static const unsigned long long user[2] = { 11030000, 22570000 };
    static const unsigned long long sys[2] = { 1210000, 3170000 };
    static const unsigned long long periods[2] = { 100, 200 };
    static const unsigned long long throttled[2] = { 5, 12 };
    static const unsigned long long throttled_us[2] = { 250000, 600000 };
    static const unsigned long long cur[2] = { 524288000, 786432000 };
    static const unsigned long long max[2] = { 600000000, 943718400 };
    static const unsigned long long anon[2] = { 419430400, 671088640 };
    static const unsigned long long file[2] = { 104857600, 115343360 };
    static const unsigned long long shmem[2] = { 1048576, 2097152 };
    static const unsigned long long high[2] = { 0, 3 };
    /* the sums of the processes' read_bytes and write_bytes */
    static const unsigned long long rbytes[2] = { 1572864, 4194304 };
    static const unsigned long long wbytes[2] = { 8192, 22032384 };
    static const unsigned long long rios[2] = { 40, 100 };
    static const unsigned long long wios[2] = { 2, 300 };
    int c = i < 2 ? i : 1;

    put (V2_STEP "/cgroup.controllers", "cpuset cpu io memory pids\n");
    put (V2_TASKS "/cgroup.controllers", "cpuset cpu io memory pids\n");
    put (V2_TASKS "/cgroup.procs", "");
    putf (V2_TASKS "/cpu.stat",
          "usage_usec %llu\nuser_usec %llu\nsystem_usec %llu\n"
          "core_sched.force_idle_usec 0\nnr_periods %llu\n"
          "nr_throttled %llu\nthrottled_usec %llu\nnr_bursts 0\n"
          "burst_usec 0\n",
          usage[c], user[c], sys[c], periods[c], throttled[c], throttled_us[c]);
    putf (V2_TASKS "/memory.current", "%llu\n", cur[c]);
    if (peak)
        putf (V2_TASKS "/memory.peak", "%llu\n", max[c]);
    /* the step's limit is Slurm's, on step_0; its tasks' has none */
    put (V2_STEP "/memory.max", "8589934592\n");
    put (V2_TASKS "/memory.max", "max\n");
    putf (V2_TASKS "/memory.stat",
          "anon %llu\nfile %llu\nkernel 4194304\nkernel_stack 131072\n"
          "shmem %llu\nfile_mapped 0\nswapcached 0\n",
          anon[c], file[c], shmem[c]);
    putf (V2_TASKS "/memory.events",
          "low 0\nhigh %llu\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
          high[c]);
    put (V2_TASKS "/memory.swap.current", "0\n");
    putf (V2_TASKS "/io.stat",
          "259:0 rbytes=%llu wbytes=%llu rios=%llu wios=%llu dbytes=0 "
          "dios=0\n"
          "8:0 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n",
          rbytes[c], wbytes[c], rios[c], wios[c]);
    write_pressure (V2_TASKS, c);
    put (V2_STEP "/slurm/cgroup.procs", members_of (m->stepd, i));
    put (V2_STEP "/user/cgroup.procs", "");
    put (V2_STEP "/user/task_0/cgroup.procs", members_of (m->task0, i));
    put (V2_STEP "/user/task_1/cgroup.procs", members_of (m->task1, i));
}

/* GPUs through the NVML fixture: devices 0 and 1 are the step's, with
 * its two tasks on them; device 2 and pid 7777 belong to someone else.
 * At the end the step's processes are gone.
 */
static void write_nvml (int i)
{
    static const char *const state[3] = {
        "device 0 uuid=GPU-1111 name=FakeGPU mem_total=85899345920 "
        "mem_used=21474836480 util=50\n"
        "device 1 uuid=GPU-2222 name=FakeGPU mem_total=85899345920 "
        "mem_used=11811160064 util=40\n"
        "process 0 pid=601 used=20401094656\n"
        "process 1 pid=602 used=10737418240\n",
        "device 0 uuid=GPU-1111 name=FakeGPU mem_total=85899345920 "
        "mem_used=32212254720 util=90\n"
        "device 1 uuid=GPU-2222 name=FakeGPU mem_total=85899345920 "
        "mem_used=14495514624 util=70\n"
        "process 0 pid=601 used=31138512896\n"
        "process 1 pid=602 used=12884901888\n",
        "device 0 uuid=GPU-1111 name=FakeGPU mem_total=85899345920 "
        "mem_used=0 util=0\n"
        "device 1 uuid=GPU-2222 name=FakeGPU mem_total=85899345920 "
        "mem_used=1073741824 util=5\n",
    };
    FILE *f = fopen (nvml_state, "w");

    assert_non_null (f);
    fprintf (f, "driver 535.104.05\n%s", state[i]);
    fprintf (f, "device 2 uuid=GPU-3333 name=FakeGPU mem_total=85899345920 "
                "mem_used=4294967296 util=100\n"
                "process 1 pid=7777 used=1073741824\n"
                "process 2 pid=8888 used=4294967296\n");
    assert_int_equal (fclose (f), 0);
}

/* the cases */

static void node_v1 (int i)
{
    if (i == 0)
        write_node (V1_MOUNTS);
    write_procs (step_procs, NPROCS (step_procs), i, "/proc/1/ns/net");
    write_v1 (i, &step_members);
    write_task_cgroups (i, V1_REL, NULL, NULL);
}

static void node_hybrid (int i)
{
    if (i == 0)
        write_node (V1_MOUNTS UNIFIED_MOUNT);
    write_procs (step_procs, NPROCS (step_procs), i, "/proc/1/ns/net");
    write_v1 (i, &step_members);
    write_mirror (i, &step_members);
    write_task_cgroups (i, V1_REL, NULL, MIRROR_REL);
}

static void node_v2 (int i)
{
    if (i == 0)
        write_node (V2_MOUNTS);
    write_procs (step_procs, NPROCS (step_procs), i, "/proc/1/ns/net");
    write_v2 (i, &step_members, true);
    write_task_cgroups (i, NULL, V2_REL, NULL);
    write_nvml (i);
}

static void node_v2_nopeak (int i)
{
    if (i == 0)
        write_node (V2_MOUNTS);
    write_procs (step_procs, NPROCS (step_procs), i, "/proc/1/ns/net");
    write_v2 (i, &step_members, false);
    write_task_cgroups (i, NULL, V2_REL, NULL);
}

/* Vanished pids on the v2 layout: task 0's directory lists 699, which
 * has no /proc entry at all (it ended before it could be read); task 1
 * started sleep 604, still listed in the second reading although its
 * /proc entry is gone by then.  dd never runs here.
 */
static void node_vanished (int i)
{
    static const struct members m = {
        { "500\n", "500\n" },
        { "601\n699\n", "601\n" },
        { "602\n604\n", "602\n604\n" },
    };
    struct fproc ps[4];

    memcpy (ps, step_procs, 3 * sizeof (ps[0]));
    ps[3] = sleep_proc;
    if (i == 0)
        write_node (V2_MOUNTS);
    write_procs (ps, NPROCS (ps), i, "/proc/1/ns/net");
    write_v2 (i, &m, true);
    write_task_cgroups (i, NULL, V2_REL, NULL);
}

/* A process tree without a cgroup (as PBS without pbs_cgroups) in a
 * network namespace of its own: the tasks and their descendants are the
 * step; slurmstepd, their parent, and sshd 900 are not.
 */
static bool hostile_child; /* node_tree adds a child with bad counters */

static void node_tree (int i)
{
    if (i == 0) {
        write_node (V2_MOUNTS);
        put ("/run/netns/job42", "");
    }
    write_procs (step_procs, 1, i, "/proc/1/ns/net");
    write_procs (step_procs + 1, NPROCS (step_procs) - 1, i,
                 "/run/netns/job42");
    write_procs (&sshd_proc, 1, i, "/proc/1/ns/net");
    /* a child of task 0 whose stat line counts negative CPU, children's
     * CPU, start and rss: strtoull and %llu would read "-5" as 2^64 - 5
     */
    if (hostile_child && i < 2)
        put ("/proc/777/stat",
             "777 (evil) S 601 601 601 0 -1 4194560 50 0 0 0 -5 -5 -7 -7 "
             "20 0 1 0 -100 1200000000 -9 18446744073709551615 1 1 0 0 0 "
             "0 0 4096 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    else
        assert_int_equal (rm_tree ("/proc/777"), 0);
}

struct gcase {
    const char *name;      /* collector-<name>.json */
    void (*write) (int i); /* the node at reading i (2: the end) */
    bool tree;             /* attach the tasks' process tree */
    bool gpu;              /* GPUs 0,1 through the NVML fixture */
    int status[2];         /* the tasks' wait statuses */
};

static json_t *identity (void)
{
    return json_pack ("{s:s s:s s:s s:s s:s s:s s:i s:s s:i s:s s:s}",
                      "scheduler", "slurm", "cluster", "c1", "job_id", "42",
                      "step_id", "0", "job_name", "train", "node", "n1",
                      "node_index", 0, "user", "alice", "uid", 1000, "account",
                      "proj1", "partition", "gpu");
}

static json_t *request (bool gpu)
{
    json_t *r =
        json_pack ("{s:i s:i s:i s:i s:s s:I s:i}", "nodes", 1, "tasks", 2,
                   "tasks_on_node", 2, "cpus_per_task", 2, "cores", "0-3",
                   "mem_bytes", (json_int_t)8589934592LL, "time_limit_s", 3600);

    if (r && gpu)
        json_object_set_new (r, "gpus", json_string ("0,1"));
    return r;
}

/* The live snapshot's text (tr_step_snapshot_text, series written
 * without a JSON tree) is the snapshot record, reals to 15 digits.
 */
static void check_snapshot (const struct gcase *c, tr_step_t *step)
{
    json_t *rec = tr_step_record (step, "snapshot"), *snap;
    char *text = tr_step_snapshot_text (step);
    tr_error_t error = { .text = "" };
    json_error_t jerr;

    assert_non_null (rec);
    assert_non_null (text);
    assert_int_equal (tr_record_round_reals (rec), 0);
    if (!(snap = json_loads (text, JSON_REJECT_DUPLICATES, &jerr)))
        fail_msg ("%s: snapshot is not JSON: %s", c->name, jerr.text);
    if (tr_record_validate (snap, &error) < 0)
        fail_msg ("%s: snapshot refused: %s", c->name, error.text);
    assert_true (json_array_size (json_object_get (
                     json_object_get (snap, "series"), "t_s"))
                 > 0);
    if (!json_equal (rec, snap)) {
        char *a = json_dumps (rec, JSON_SORT_KEYS | JSON_COMPACT);
        char *b = json_dumps (snap, JSON_SORT_KEYS | JSON_COMPACT);
        fail_msg ("%s: snapshot text differs from the record:\n%s\n%s",
                  c->name, a, b);
    }
    json_decref (snap);
    json_decref (rec);
    free (text);
}

/* Attach, sample at +10 s and +20 s, end the tasks, finish at +30 s. */
static json_t *run_case (const struct gcase *c)
{
    struct tr_detail_opts opts = { .taskstats = false, .cmdline_max = 256 };
    json_t *id = identity (), *req = request (c->gpu), *rec;
    json_t *tags = json_pack ("{s:s}", "project", "golden");
    tr_gpu_t *gpu = NULL;
    tr_step_t *step;
    tr_error_t error = { .text = "" };

    assert_non_null (id);
    assert_non_null (req);
    assert_non_null (tags);
    fake_ms = 0;
    real_step_ms = 0;
    c->write (0);
    if (c->gpu) {
        if (!(gpu = tr_gpu_open (NVML_FIXTURE, &error)))
            fail_msg ("tr_gpu_open: %s", error.text);
        opts.gpu = gpu;
        opts.gpu_devices = "0,1";
    }
    assert_non_null (step = tr_step_create (id, req, tags, "tracerd", 10));
    if (tr_step_configure (step, &opts, &error) < 0)
        fail_msg ("tr_step_configure: %s", error.text);
    if (c->tree) {
        assert_int_equal (tr_step_attach_tree (step, 601), 0);
        assert_null (tr_step_cgroup2_dir (step)); /* every exit needed */
        assert_int_equal (tr_step_add_task (step, 1, 602), 0);
    }
    else if (tr_step_attach_pid (step, 601, 0, &error) < 0
             || tr_step_attach_pid (step, 602, 1, &error) < 0)
        fail_msg ("attach: %s", error.text);
    fake_ms = 10000;
    if (tr_step_sample (step, &error) < 0)
        fail_msg ("sample 1: %s", error.text);
    real_step_ms = -clock_back_ms;
    c->write (1);
    fake_ms = 20000;
    if (tr_step_sample (step, &error) < 0)
        fail_msg ("sample 2: %s", error.text);
    check_snapshot (c, step);
    c->write (2);
    assert_int_equal (tr_step_task_exit (step, 0, 601, c->status[0]), 0);
    assert_int_equal (tr_step_task_exit (step, 1, 602, c->status[1]), 0);
    fake_ms = 30000;
    if (tr_step_finish (step, &error) < 0)
        fail_msg ("finish: %s", error.text);
    assert_non_null (rec = tr_step_record (step, "final"));
    if (tr_record_validate (rec, &error) < 0)
        fail_msg ("%s: record refused: %s", c->name, error.text);
    tr_step_destroy (step);
    tr_gpu_close (gpu);
    json_decref (id);
    json_decref (req);
    json_decref (tags);
    return rec;
}

/* Replace what comes from the machine running the test, not from the
 * fixture, by fixed values (everything else must match exactly):
 * - host.hostname, host.kernel, host.cpus_online, host.mem_total_bytes:
 *   gethostname(), uname(), sysconf() and sysinfo() of this machine.
 *   host.cgroup_mode comes from the fixture's mountinfo and
 *   host.topology from TOPOLOGY_XML and the fixture's cpufreq, so both
 *   are kept.
 * - collector.version: the package version (git describe).
 * Times need no normalizing: the clock is the test's (see the top).
 */
static void replace (json_t *obj, const char *key, json_t *value)
{
    assert_non_null (obj);
    assert_non_null (json_object_get (obj, key));
    assert_int_equal (json_object_set_new (obj, key, value), 0);
}

static void normalize (json_t *rec)
{
    json_t *host = json_object_get (rec, "host");

    replace (host, "hostname", json_string ("HOSTNAME"));
    replace (host, "kernel", json_string ("KERNEL"));
    replace (host, "cpus_online", json_integer (0));
    replace (host, "mem_total_bytes", json_integer (0));
    replace (json_object_get (rec, "collector"), "version",
             json_string ("VERSION"));
}

static void write_text (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");

    if (!f)
        fail_msg ("%s: %s", path, strerror (errno));
    assert_true (fputs (text, f) >= 0);
    assert_int_equal (fclose (f), 0);
}

/* Compare the canonical serializations of rec and of the expected file;
 * on a difference the record is left in the build directory.
 */
static void check_golden (json_t *rec, const char *name)
{
    const char *update = getenv ("TRACER_UPDATE_EXPECTED");
    char path[PATH_MAX], actual[PATH_MAX];
    char *got, *want, *text;
    tr_error_t error = { .text = "" };
    json_t *expected;
    size_t k = 0;

    normalize (rec);
    if (tr_record_validate (rec, &error) < 0)
        fail_msg ("%s: normalized record refused: %s", name, error.text);
    snprintf (path, sizeof (path), "%s/collector-%s.json", EXPECTED, name);
    snprintf (actual, sizeof (actual), "%s/collector-%s.actual.json",
              TEST_BUILDDIR, name);
    assert_non_null (text = tr_record_dumps (rec));
    if (update && !strcmp (update, "1"))
        write_text (path, text);
    if (!(expected = tr_record_load (path, &error)))
        fail_msg ("%s (run with TRACER_UPDATE_EXPECTED=1 to create it)",
                  error.text);
    assert_non_null (got = tr_record_canonical (rec));
    assert_non_null (want = tr_record_canonical (expected));
    if (strcmp (got, want) != 0) {
        while (got[k] && got[k] == want[k])
            k++;
        write_text (actual, text);
        fail_msg ("%s: the record differs from %s at byte %zu "
                  "(got ...%.60s, want ...%.60s); the record is in %s",
                  name, path, k, got + (k > 20 ? k - 20 : 0),
                  want + (k > 20 ? k - 20 : 0), actual);
    }
    (void)unlink (actual);
    free (got);
    free (want);
    free (text);
    json_decref (expected);
}

static const struct gcase cases[] = {
    /* task 1 was OOM-killed (SIGKILL) */
    { "slurm-v1", node_v1, false, false, { 0, SIGKILL } },
    { "slurm-v2", node_v2, false, true, { 0, 0 } },
    { "slurm-v2-nopeak", node_v2_nopeak, false, false, { 0, 0 } },
    { "hybrid-mirror", node_hybrid, false, false, { 0, 0 } },
    { "vanished", node_vanished, false, false, { 0, 1 << 8 } },
    { "process-tree", node_tree, true, false, { 0, 0 } },
};

static void test_case (void **state)
{
    const struct gcase *c = *state;
    json_t *rec = run_case (c);

    check_golden (rec, c->name);
    json_decref (rec);
}

/* The wall clock stepped back an hour between the two samples (an NTP
 * correction, a hand-set date): the record still validates, its times
 * follow the monotonic clock (30 s elapsed, the end 30 s after the
 * start), and it is the same record as without the step.
 */
static void test_clock_step_back (void **state)
{
    const struct gcase *c = &cases[2];
    json_int_t start, end;
    double elapsed;
    json_t *rec;

    (void)state;
    clock_back_ms = 3600 * 1000;
    rec = run_case (c);
    clock_back_ms = 0;
    assert_int_equal (real_step_ms, -3600 * 1000);
    if (json_unpack (json_object_get (rec, "time"), "{s:I s:I s:F}",
                     "start_unix_ms", &start, "end_unix_ms", &end,
                     "elapsed_s", &elapsed) < 0)
        fail_msg ("time: start_unix_ms, end_unix_ms or elapsed_s missing");
    assert_int_equal (start, FAKE_NOW_S * 1000);
    assert_int_equal (end, FAKE_NOW_S * 1000 + 30000);
    assert_true (elapsed == 30.0);
    check_golden (rec, c->name);
    json_decref (rec);
}

/* A process of the tree whose /proc/PID/stat has negative counters is
 * not read, by the tree walk or the process table: the record is the
 * process-tree case's, figure for figure.
 */
static void test_negative_counters (void **state)
{
    json_t *rec;

    (void)state;
    hostile_child = true;
    rec = run_case (&cases[5]);
    hostile_child = false;
    check_golden (rec, cases[5].name);
    json_decref (rec);
}

static int setup (void **state)
{
    int n;

    (void)state;
    snprintf (root, sizeof (root), "/tmp/tracer-golden.XXXXXX");
    if (!mkdtemp (root))
        return -1;
    n = snprintf (nvml_state, sizeof (nvml_state), "%s/nvml-state", root);
    if (n < 0 || (size_t)n >= sizeof (nvml_state))
        return -1;
    if (setenv ("TRACER_FAKE_NVML", nvml_state, 1) < 0)
        return -1;
    tr_fsroot_set (root);
    return 0;
}

static int teardown (void **state)
{
    (void)state;
    tr_fsroot_set (NULL);
    return rm_tree ("");
}

/* host.topology from an XML export rather than the machine. */
static int group_setup (void **state)
{
    (void)state;
    tr_topology_reset ();
    return setenv ("HWLOC_XMLFILE", TOPOLOGY_XML, 1);
}

static int group_teardown (void **state)
{
    (void)state;
    tr_topology_reset ();
    return 0;
}

#define GOLDEN(i)                                                    \
    {                                                                \
        cases[i].name, test_case, setup, teardown, (void *)&cases[i] \
    }

int main (void)
{
    const struct CMUnitTest tests[] = {
        GOLDEN (0),
        GOLDEN (1),
        GOLDEN (2),
        GOLDEN (3),
        GOLDEN (4),
        GOLDEN (5),
        cmocka_unit_test_setup_teardown (test_clock_step_back, setup, teardown),
        cmocka_unit_test_setup_teardown (test_negative_counters, setup,
                                         teardown),
    };

    return cmocka_run_group_tests (tests, group_setup, group_teardown);
}
