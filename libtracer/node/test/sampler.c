/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The cgroup layer and the sampling engine against fixture trees built
 * under a temporary fsroot: a cgroup v1 (hybrid) host with Slurm's task
 * directories, and a pure cgroup v2 host with Slurm's v2 layout, with
 * and without memory.peak (kernels before 5.19, e.g. RHEL 8); and the
 * decision whether a user's own cgroup2 directory is delegated to them,
 * with a step in a directory made there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "libtracer/node/cgroup.h"
#include "libtracer/util/fsroot.h"
#include "libtracer/node/kmsg.h"
#include "libtracer/record/record.h"
#include "libtracer/record/states.h"
#include "libtracer/node/sampler.h"

static char root[PATH_MAX];

/* Write fsroot-relative file path (creating parents) with text. */
static void put (const char *path, const char *text)
{
    char full[PATH_MAX * 2], *p;
    FILE *f;

    snprintf (full, sizeof (full), "%s%s", root, path);
    for (p = full + strlen (root) + 1; (p = strchr (p, '/')); p++) {
        *p = '\0';
        mkdir (full, 0755);
        *p = '/';
    }
    assert_non_null (f = fopen (full, "w"));
    fputs (text, f);
    fclose (f);
}

/* Remove fsroot-relative file path. */
static void rm_fixture (const char *path)
{
    char full[PATH_MAX * 2];

    snprintf (full, sizeof (full), "%s%s", root, path);
    assert_int_equal (unlink (full), 0);
}

static int setup (void **state)
{
    snprintf (root, sizeof (root), "/tmp/tracer-fsroot.XXXXXX");
    if (!mkdtemp (root))
        return -1;
    tr_fsroot_set (root);
    return 0;
}

static int teardown (void **state)
{
    pid_t pid;
    int status = 0;

    tr_fsroot_set (NULL);
    /* remove the tree without a shell */
    if ((pid = fork ()) == 0) {
        execl ("/bin/rm", "rm", "-rf", root, (char *)NULL);
        _exit (127);
    }
    if (pid < 0 || waitpid (pid, &status, 0) < 0 || status != 0)
        return -1;
    return 0;
}

#define V1_MOUNTS                                                        \
    "30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup "      \
    "rw,memory\n"                                                        \
    "31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup " \
    "rw,cpu,cpuacct\n"                                                   \
    "32 25 0:28 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 "   \
    "rw\n"

#define V1_STEP "/sys/fs/cgroup/memory/slurm_n1/uid_1000/job_42/step_0"
#define V1_CPU "/sys/fs/cgroup/cpu,cpuacct/slurm_n1/uid_1000/job_42/step_0"

static void make_v1 (void)
{
    put ("/proc/self/mountinfo", V1_MOUNTS);
    put ("/proc/4242/cgroup",
         "5:memory:/slurm_n1/uid_1000/job_42/step_0/task_1\n"
         "3:cpu,cpuacct:/slurm_n1/uid_1000/job_42/step_0/task_1\n"
         "0::/\n");
    put (V1_STEP "/memory.usage_in_bytes", "1048576\n");
    put (V1_STEP "/memory.max_usage_in_bytes", "314572800\n");
    put (V1_STEP "/memory.limit_in_bytes", "1073741824\n");
    put (V1_STEP "/memory.failcnt", "3\n");
    put (V1_STEP "/memory.stat",
         "cache 10\nrss 20\nshmem 0\ntotal_cache 4096\ntotal_rss 8192\n"
         "total_shmem 1024\ntotal_swap 0\n");
    put (V1_STEP "/memory.oom_control",
         "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    put (V1_STEP "/task_0/memory.oom_control",
         "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    put (V1_STEP "/task_1/memory.oom_control",
         "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    put (V1_CPU "/cpuacct.usage", "2500000000\n");
    put (V1_CPU "/cpuacct.usage_user", "2000000000\n");
    put (V1_CPU "/cpuacct.usage_sys", "500000000\n");
}

static json_t *identity (void)
{
    return json_pack ("{s:s s:s s:s s:s s:s s:i}", "scheduler", "slurm",
                      "cluster", "c1", "job_id", "42", "step_id", "0", "node",
                      "n1", "uid", 1000);
}

static void test_parse_strips_tasks (void **state)
{
    struct tr_cgroup_paths p;

    make_v1 ();
    assert_int_equal (tr_cgroup_resolve_pid (4242, true, &p, NULL), 0);
    assert_string_equal (p.memory, V1_STEP);
    assert_string_equal (p.cpuacct, V1_CPU);
    /* the unified root is no step: the engine refuses it later */
    assert_string_equal (p.unified, "/sys/fs/cgroup/unified");
    assert_int_equal (tr_cgroup_resolve_pid (4242, false, &p, NULL), 0);
    assert_string_equal (p.memory, V1_STEP "/task_1");
}

static void test_parse_keeps_unknown_layouts (void **state)
{
    struct tr_cgroup_paths p;

    make_v1 ();
    /* LSF: nothing to strip, never rebuilt from ids */
    assert_int_equal (tr_cgroup_parse ("4:memory:/lsf/c1/job.42.7.1775289779\n",
                                       true, &p, NULL),
                      0);
    assert_string_equal (p.memory,
                         "/sys/fs/cgroup/memory/lsf/c1/job.42.7.1775289779");
}

static void test_v1_step (void **state)
{
    json_t *id = identity (), *rec, *mem, *cpu;
    tr_step_t *step;
    tr_error_t error;

    make_v1 ();
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, 4242, 1, &error), 0);
    assert_int_equal (tr_step_attach_pid (step, 4243, 0, &error), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    tr_step_task_exit (step, 0, 4243, 0);
    tr_step_task_exit (step, 1, 4242, 9);   /* SIGKILL */
    assert_int_equal (tr_step_finish (step, &error), 0);
    assert_non_null (rec = tr_step_record (step, "final"));
    mem = json_object_get (json_object_get (rec, "summary"), "memory");
    cpu = json_object_get (json_object_get (rec, "summary"), "cpu");
    assert_int_equal (json_integer_value (json_object_get (mem, "peak_bytes")),
                      314572800);
    assert_true (json_is_true (json_object_get (mem, "exact")));
    assert_string_equal (json_string_value (json_object_get (mem, "source")),
                         "cgroup-v1:memory.max_usage_in_bytes");
    assert_int_equal (json_integer_value (json_object_get (mem, "anon_bytes")),
                      8192);
    assert_int_equal (json_integer_value (json_object_get (mem, "file_bytes")),
                      4096);
    assert_int_equal (json_integer_value (json_object_get (mem, "failcnt")), 3);
    /* per-directory oom_kill summed over the task directories */
    assert_int_equal (
        json_integer_value (json_object_get (mem, "oom_kill_events")), 3);
    assert_int_equal (json_integer_value (json_object_get (mem, "limit_bytes")),
                      1073741824);
    assert_true (json_real_value (json_object_get (cpu, "total_s")) == 2.5);
    assert_true (json_real_value (json_object_get (cpu, "user_s")) == 2.0);
    /* killed by SIGKILL with OOM kills in the step: the outcome says so */
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (rec, "outcome"), "state")),
                         "oom");
    assert_int_equal (tr_record_validate (rec, &error), 0);
    json_decref (rec);
    json_decref (id);
    tr_step_destroy (step);
}

#define V2_MOUNTS "27 22 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
#define V2_STEP                                                     \
    "/sys/fs/cgroup/system.slice/n1_slurmstepd.scope/sEKNKTV3WPV500" \
    "/step_0/user"

static void make_v2 (bool with_peak)
{
    put ("/proc/self/mountinfo", V2_MOUNTS);
    /* Slurm 26 names the job directory by a SLUID, not job_<id> */
    put ("/proc/777/cgroup",
         "0::/system.slice/n1_slurmstepd.scope/sEKNKTV3WPV500/step_0/user/"
         "task_0\n");
    put (V2_STEP "/cgroup.controllers", "cpuset cpu io memory pids\n");
    put (V2_STEP "/cpu.stat",
         "usage_usec 4000000\nuser_usec 3000000\nsystem_usec 1000000\n"
         "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
    put (V2_STEP "/memory.current", "2097152\n");
    put (V2_STEP "/memory.max", "max\n");
    put (V2_STEP "/memory.stat", "anon 1048576\nfile 524288\nshmem 4096\n");
    put (V2_STEP "/memory.events",
         "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
    put (V2_STEP "/memory.swap.current", "0\n");
    if (with_peak)
        put (V2_STEP "/memory.peak", "209715200\n");
}

static void check_v2 (bool with_peak)
{
    json_t *id = identity (), *rec, *mem, *cpu;
    tr_step_t *step;
    tr_error_t error;

    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, 777, 0, &error), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    tr_step_task_exit (step, 0, 777, 0);
    assert_int_equal (tr_step_finish (step, &error), 0);
    assert_non_null (rec = tr_step_record (step, "final"));
    mem = json_object_get (json_object_get (rec, "summary"), "memory");
    cpu = json_object_get (json_object_get (rec, "summary"), "cpu");
    assert_string_equal (json_string_value (json_object_get (cpu, "source")),
                         "cgroup-v2:cpu.stat");
    assert_true (json_real_value (json_object_get (cpu, "total_s")) == 4.0);
    if (with_peak) {
        assert_int_equal (
            json_integer_value (json_object_get (mem, "peak_bytes")),
            209715200);
        assert_true (json_is_true (json_object_get (mem, "exact")));
    }
    else {
        /* no memory.peak: the sampled maximum, flagged as sampled */
        assert_int_equal (
            json_integer_value (json_object_get (mem, "peak_bytes")), 2097152);
        assert_true (json_is_false (json_object_get (mem, "exact")));
        assert_string_equal (
            json_string_value (json_object_get (mem, "source")),
            "cgroup-v2:memory.current (sampled)");
    }
    assert_null (json_object_get (mem, "limit_bytes"));   /* "max" */
    assert_int_equal (json_integer_value (json_object_get (mem, "oom_events")),
                      1);
    assert_int_equal (json_integer_value (json_object_get (mem, "anon_bytes")),
                      1048576);
    assert_int_equal (tr_record_validate (rec, &error), 0);
    json_decref (rec);
    json_decref (id);
    tr_step_destroy (step);
}

static void test_v2_step (void **state)
{
    make_v2 (true);
    check_v2 (true);
}

/* The step is its tasks' directory (step_0/user, beside slurmstepd's
 * step_0/slurm): its memory limit is Slurm's, on step_0.
 */
static void test_v2_parent_limit (void **state)
{
    json_t *id = identity (), *rec, *mem;
    tr_step_t *step;
    tr_error_t error;

    (void)state;
    make_v2 (true);
    put (V2_STEP "/../memory.max", "838860800\n");
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, 777, 0, &error), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    tr_step_task_exit (step, 0, 777, 0);
    assert_int_equal (tr_step_finish (step, &error), 0);
    assert_non_null (rec = tr_step_record (step, "final"));
    mem = json_object_get (json_object_get (rec, "summary"), "memory");
    assert_int_equal (json_integer_value (json_object_get (mem, "limit_bytes")),
                      838860800);
    assert_string_equal (
        json_string_value (json_object_get (
            json_object_get (json_object_get (rec, "cgroup"), "paths"),
            "unified")),
        "/system.slice/n1_slurmstepd.scope/sEKNKTV3WPV500/step_0/user");
    json_decref (rec);
    json_decref (id);
    tr_step_destroy (step);
    rm_fixture (V2_STEP "/../memory.max");
}

static void test_v2_no_peak (void **state)
{
    make_v2 (false);
    check_v2 (false);
}

/* The final cpu summary of a one-task step on the fixture set up. */
static json_t *cpu_of (pid_t pid, json_t **rec)
{
    json_t *id = identity ();
    tr_step_t *step;
    tr_error_t error;

    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, pid, 0, &error), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    tr_step_task_exit (step, 0, pid, 0);
    assert_int_equal (tr_step_finish (step, &error), 0);
    assert_non_null (*rec = tr_step_record (step, "final"));
    assert_int_equal (tr_record_validate (*rec, &error), 0);
    json_decref (id);
    tr_step_destroy (step);
    return json_object_get (json_object_get (*rec, "summary"), "cpu");
}

/* user + system = total, in the kernel's user:system ratio, within the
 * microsecond the record's figures are rounded to.
 */
static void check_split (json_t *cpu, double total, double user_share)
{
    double u = json_real_value (json_object_get (cpu, "user_s"));
    double sy = json_real_value (json_object_get (cpu, "system_s"));
    double t = json_real_value (json_object_get (cpu, "total_s"));

    assert_true (t == total);
    assert_true (u + sy <= t + 1e-6);
    assert_true (u + sy >= t - 1e-6);
    assert_true (fabs (u - total * user_share) <= 1e-6);
}

/* The kernel's user/system split is tick-sampled and read apart from the
 * exact total (cgroup v1's cpuacct.usage_user/_sys, cpu.stat on kernels
 * that do not adjust it): 13.33 s + 0.74 s of ticks against 12.49 s of
 * run time.  The record keeps the total and splits it in that ratio.
 */
static void test_cpu_split (void **state)
{
    const double share = 13.33 / (13.33 + 0.74);
    json_t *rec;

    make_v1 ();
    put (V1_CPU "/cpuacct.usage", "12490000000\n");
    put (V1_CPU "/cpuacct.usage_user", "13330000000\n");
    put (V1_CPU "/cpuacct.usage_sys", "740000000\n");
    check_split (cpu_of (4242, &rec), 12.49, share);
    json_decref (rec);
    /* older kernels: cpuacct.stat in USER_HZ ticks only */
    rm_fixture (V1_CPU "/cpuacct.usage_user");
    put (V1_CPU "/cpuacct.stat", "user 1333\nsystem 74\n");
    check_split (cpu_of (4242, &rec), 12.49, share);
    json_decref (rec);

    make_v2 (true);
    put (V2_STEP "/cpu.stat",
         "usage_usec 12490000\nuser_usec 13330000\nsystem_usec 740000\n");
    check_split (cpu_of (777, &rec), 12.49, share);
    json_decref (rec);
    /* no tick yet, some run time: all of it is user time */
    put (V2_STEP "/cpu.stat",
         "usage_usec 1500\nuser_usec 0\nsystem_usec 0\n");
    check_split (cpu_of (777, &rec), 0.0015, 1.0);
    json_decref (rec);
}

static void test_root_cgroup_refused (void **state)
{
    json_t *id = identity ();
    tr_step_t *step;
    tr_error_t error;

    put ("/proc/self/mountinfo", V2_MOUNTS);
    put ("/proc/888/cgroup", "0::/\n");
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    /* whole-machine counters must never pass for a step's */
    assert_int_equal (tr_step_attach_pid (step, 888, 0, &error), -1);
    assert_int_equal (errno, ENOENT);
    json_decref (id);
    tr_step_destroy (step);
}

static void test_vanished_pid (void **state)
{
    json_t *id = identity ();
    tr_step_t *step;
    tr_error_t error;

    put ("/proc/self/mountinfo", V2_MOUNTS);
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, 99999, 0, &error), -1);
    assert_non_null (strstr (error.text, "/proc/99999/cgroup"));
    json_decref (id);
    tr_step_destroy (step);
}

/* Write the step's cgroup.procs with pids 1000 .. 1000+n-1, each with a
 * /proc stat line, and make the node's newest pid move on.
 */
static void put_procs (int n, int newest)
{
    size_t cap = ((size_t)n + 1) * 16, len = 0;
    char *list = calloc (cap, 1), path[64], line[160];

    assert_non_null (list);
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf (list + len, cap - len, "%d\n", 1000 + i);
        snprintf (path, sizeof (path), "/proc/%d/stat", 1000 + i);
        snprintf (line, sizeof (line),
                  "%d (burn) S 1 1 1 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 100 "
                  "1000 10\n",
                  1000 + i);
        put (path, line);
    }
    put (V1_STEP "/cgroup.procs", list);
    snprintf (line, sizeof (line), "0.00 0.00 0.00 1/100 %d\n", newest);
    put ("/proc/loadavg", line);
    free (list);
}

/* Take a sample, which must succeed; the step's process count after it. */
static size_t sampled_npids (tr_step_t *step)
{
    tr_error_t error;

    assert_int_equal (tr_step_sample (step, &error), 0);
    return tr_step_npids (step);
}

/* A step's process list is read again at most every npids / 32 samples
 * while it stays the same length, but at the next sample while it grows.
 */
static void test_growing_list (void **state)
{
    json_t *id = identity ();
    tr_step_t *step;
    tr_error_t error;

    make_v1 ();
    put_procs (40, 5000);
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, 4242, 1, &error), 0);
    assert_int_equal (sampled_npids (step), 40);
    /* growing: each sample reads the list again */
    put_procs (100, 5001);
    assert_int_equal (sampled_npids (step), 100);
    put_procs (150, 5002);
    assert_int_equal (sampled_npids (step), 150);
    /* the same length: read, then left for 150 / 32 + 1 samples */
    put_procs (150, 5003);
    assert_int_equal (sampled_npids (step), 150);
    put_procs (200, 5004);
    for (int i = 0; i < 4; i++)
        assert_int_equal (sampled_npids (step), 150);
    assert_int_equal (sampled_npids (step), 200);
    json_decref (id);
    tr_step_destroy (step);
}

static void test_save_restore (void **state)
{
    json_t *id = identity (), *st, *rec;
    tr_step_t *step, *again;
    tr_error_t error;

    make_v1 ();
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, 4242, 0, &error), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    assert_non_null (st = tr_step_save (step));
    assert_non_null (again = tr_step_restore (st, &error));
    assert_true (tr_step_alive (again));
    tr_step_mark_incomplete (again, "daemon was down");
    assert_non_null (rec = tr_step_record (again, "final"));
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (rec, "outcome"), "state")),
                         "incomplete");
    assert_int_equal (json_integer_value (json_object_get (
                          json_object_get (json_object_get (rec, "summary"),
                                           "memory"),
                          "peak_bytes")),
                      314572800);
    assert_int_equal (tr_record_validate (rec, &error), 0);
    json_object_del (st, "tasks");
    assert_null (tr_step_restore (st, &error));
    assert_int_equal (errno, EINVAL);
    json_decref (rec);
    json_decref (st);
    json_decref (id);
    tr_step_destroy (step);
    tr_step_destroy (again);
}

/* Kernel lines and a step: by the OOM victim's cgroup (the step's, not
 * its job's other step), by a pid of the step, by a live process in its
 * cgroup; a process of another job's cgroup never.  The events are in
 * the record, valid, and survive a daemon restart.
 */
static void test_kernel_events (void **state)
{
    json_t *id = identity (), *st, *rec;
    tr_step_t *step, *again;
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;
    tr_error_t error;
#define OOM_LINE(step)                                                    \
    "6,1,5,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"       \
    "cpuset=/,mems_allowed=0,oom_memcg=/slurm_n1/uid_1000/job_42,"        \
    "task_memcg=/slurm_n1/uid_1000/job_42/step_" step "/task_0,task=perl," \
    "pid=9999,uid=1000\n"
    const char *killed =
        "3,2,6,-;Memory cgroup out of memory: Killed process 9999 (perl) "
        "total-vm:1kB, anon-rss:1024kB, file-rss:0kB, shmem-rss:0kB, "
        "UID:1000\n";
    char line[512];

    (void)state;
    make_v1 ();
    put ("/proc/6000/cgroup",
         "5:memory:/slurm_n1/uid_1000/job_42/step_0/task_0\n0::/\n");
    put ("/proc/7000/cgroup",
         "5:memory:/slurm_n1/uid_1000/job_43/step_0/task_0\n0::/\n");
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_pid (step, 4242, 0, &error), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    tr_kmsg_parser_init (&p);
    /* the step's own cgroup */
    snprintf (line, sizeof (line), "%s", OOM_LINE ("0"));
    assert_int_equal (tr_kmsg_parse (&p, line, strlen (line), &ev), 0);
    assert_int_equal (tr_kmsg_parse (&p, killed, strlen (killed), &ev), 1);
    assert_true (tr_step_kmsg_concerns (step, &ev, 30));
    assert_int_equal (tr_step_kmsg_add (step, &ev, "step", 1050000), 1);
    /* the job's other step */
    snprintf (line, sizeof (line), "%s", OOM_LINE ("1"));
    assert_int_equal (tr_kmsg_parse (&p, line, strlen (line), &ev), 0);
    assert_int_equal (tr_kmsg_parse (&p, killed, strlen (killed), &ev), 1);
    assert_false (tr_step_kmsg_concerns (step, &ev, 30));
    /* pids: a live process in the step's cgroup, one of another job,
     * one that is no process at all
     */
    snprintf (line, sizeof (line), "6,3,7,-;x[6000]: segfault at 0\n");
    assert_int_equal (tr_kmsg_parse (&p, line, strlen (line), &ev), 1);
    assert_true (tr_step_kmsg_concerns (step, &ev, 30));
    snprintf (line, sizeof (line), "6,4,7,-;x[7000]: segfault at 0\n");
    assert_int_equal (tr_kmsg_parse (&p, line, strlen (line), &ev), 1);
    assert_false (tr_step_kmsg_concerns (step, &ev, 30));
    snprintf (line, sizeof (line), "6,5,7,-;x[7001]: segfault at 0\n");
    assert_int_equal (tr_kmsg_parse (&p, line, strlen (line), &ev), 1);
    assert_false (tr_step_kmsg_concerns (step, &ev, 30));
    /* a disk error for every step, node-wide */
    snprintf (line, sizeof (line), "3,6,8,-;I/O error, dev sdb, sector 9\n");
    assert_int_equal (tr_kmsg_parse (&p, line, strlen (line), &ev), 1);
    assert_false (tr_step_kmsg_concerns (step, &ev, 30));
    assert_int_equal (tr_step_kmsg_add (step, &ev, "node", 1060000), 1);
    assert_non_null (st = tr_step_save (step));
    assert_non_null (again = tr_step_restore (st, &error));
    assert_non_null (rec = tr_step_record (again, "snapshot"));
    assert_int_equal (tr_record_validate (rec, &error), 0);
    assert_int_equal (json_array_size (json_object_get (rec, "events")), 2);
    assert_int_equal (json_integer_value (json_object_get (
        json_array_get (json_object_get (rec, "events"), 0), "rss_bytes")),
        1048576);
    assert_string_equal (json_string_value (json_object_get (
        json_array_get (json_object_get (rec, "events"), 1), "scope")),
        "node");
    json_decref (rec);
    json_decref (st);
    json_decref (id);
    tr_step_destroy (step);
    tr_step_destroy (again);
}

/* An explicit cgroup (LSF, PBS) is found in every hierarchy that has it;
 * paths that could leave the hierarchy are refused.
 */
static void test_resolve_path (void **state)
{
    static const char *const bad[] = {
        "slurm_n1", "/slurm_n1/../x", "/slurm_n1/./x", "//x", "/x//y",
        "/..", "/a\nb",
    };
    struct tr_cgroup_paths p;
    tr_error_t error;
    json_t *id = identity (), *rec;
    tr_step_t *step;

    (void)state;
    make_v1 ();
    assert_int_equal (tr_cgroup_resolve_path ("/slurm_n1/uid_1000/job_42/"
                                              "step_0", &p, &error), 0);
    assert_string_equal (p.memory, V1_STEP);
    assert_string_equal (p.cpuacct, V1_CPU);
    assert_string_equal (p.unified, "");
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        assert_int_equal (tr_cgroup_resolve_path (bad[i], &p, &error), -1);
        assert_int_equal (errno, EINVAL);
    }
    assert_int_equal (tr_cgroup_resolve_path ("/lsf/c1/job.9", &p, &error),
                      -1);
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (error.text, "no mounted hierarchy"));
    /* the record names the directories as /proc/PID/cgroup does */
    assert_int_equal (tr_cgroup_resolve_path ("/slurm_n1/uid_1000/job_42/"
                                              "step_0", &p, &error), 0);
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_paths (step, &p, &error), 0);
    /* v1 only: no directory to keep its exits by */
    assert_null (tr_step_cgroup2_dir (step));
    assert_int_equal (tr_step_sample (step, &error), 0);
    assert_non_null (rec = tr_step_record (step, "final"));
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (json_object_get (rec, "cgroup"),
                                              "paths"),
                             "memory")),
                         "/slurm_n1/uid_1000/job_42/step_0");
    assert_int_equal (tr_record_validate (rec, &error), 0);
    json_decref (rec);
    json_decref (id);
    tr_step_destroy (step);
}

/* Process-set matches are checked; lost exit events make the process
 * table incomplete and are counted.
 */
static void test_match_and_lost (void **state)
{
    struct tr_detail_opts opts = { .taskstats = true, .cmdline_max = 64 };
    struct tr_proc_match m;
    json_t *id = identity (), *rec, *procs;
    tr_step_t *step;
    tr_error_t error;

    (void)state;
    make_v1 ();
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    memset (&m, 0, sizeof (m));
    assert_int_equal (tr_step_attach_match (step, &m, &error), -1);
    snprintf (m.env, sizeof (m.env), "1X=2");
    assert_int_equal (tr_step_attach_match (step, &m, &error), -1);
    assert_non_null (strstr (error.text, "NAME=VALUE"));
    snprintf (m.env, sizeof (m.env), "NOEQUALS");
    assert_int_equal (tr_step_attach_match (step, &m, &error), -1);
    assert_false (tr_step_attached (step));
    tr_step_destroy (step);

    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_configure (step, &opts, &error), 0);
    assert_int_equal (tr_step_attach_pid (step, 4242, 0, &error), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    tr_step_exits_lost (step, 2);
    tr_step_exits_lost (step, 1);
    assert_non_null (rec = tr_step_record (step, "final"));
    procs = json_object_get (json_object_get (rec, "summary"), "processes");
    assert_int_equal (json_integer_value (json_object_get (procs, "lost")), 3);
    assert_false (json_is_true (json_object_get (procs, "complete")));
    assert_int_equal (tr_record_validate (rec, &error), 0);
    json_decref (rec);
    json_decref (id);
    tr_step_destroy (step);
}

/* Processes a root prologue or hook names (tracer-prolog, pbs_python)
 * and what they start are not the step's, though in its session; a pid
 * reused by another process is the step's again.
 */
static void put_stat (int pid, int ppid, int sid, int start)
{
    char path[64], line[160];

    snprintf (path, sizeof (path), "/proc/%d/stat", pid);
    snprintf (line, sizeof (line),
              "%d (p) S %d %d %d 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 %d "
              "1000 10\n",
              pid, ppid, sid, sid, start);
    put (path, line);
}

static void test_exclude (void **state)
{
    struct tr_proc_match m;
    json_t *id = identity ();
    tr_step_t *step;
    tr_error_t error;

    (void)state;
    make_v1 ();
    put_stat (2000, 1, 2000, 100);    /* the starter, session leader */
    put_stat (2001, 2000, 2000, 101); /* the hook's pbs_python */
    put_stat (2002, 2001, 2000, 102); /* tracer-prolog, its child */
    put_stat (2003, 2000, 2000, 103); /* the job */
    put ("/proc/loadavg", "0.00 0.00 0.00 1/100 2003\n");
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    memset (&m, 0, sizeof (m));
    m.session = 2000;
    assert_int_equal (tr_step_attach_match (step, &m, &error), 0);
    assert_int_equal (tr_step_exclude (step, 2001), 0);
    assert_int_equal (tr_step_exclude (step, 2001), 0);
    errno = 0;
    assert_int_equal (tr_step_exclude (step, 2999), -1);
    assert_int_equal (errno, ESRCH);
    assert_int_equal (tr_step_exclude (step, 1), -1);
    assert_int_equal (sampled_npids (step), 2);
    /* 2001 ended and its pid went to a new process of the job */
    put_stat (2001, 2000, 2000, 150);
    put ("/proc/2002/stat", "");
    put ("/proc/loadavg", "0.00 0.00 0.00 1/100 2004\n");
    assert_int_equal (sampled_npids (step), 3);
    json_decref (id);
    tr_step_destroy (step);
}

/* A process's environment, NUL-separated entries (/proc/PID/environ). */
static void put_environ (int pid, const char *const entries[])
{
    char path[64], full[PATH_MAX * 2];
    FILE *f;

    snprintf (path, sizeof (path), "/proc/%d/environ", pid);
    put (path, "");
    snprintf (full, sizeof (full), "%s%s", root, path);
    assert_non_null (f = fopen (full, "w"));
    for (size_t i = 0; entries[i]; i++)
        fwrite (entries[i], 1, strlen (entries[i]) + 1, f);
    fclose (f);
}

/* A step none of whose processes was ever found measured nothing: its
 * final record is incomplete with the reason, whatever the scheduler
 * said, and its figures are left out (unknown), never 0.  Once one
 * process is found, the scheduler's word stands.
 */
static void test_unfollowed (void **state)
{
    static const char *const other[] = { "LSB_JOBID=208", "HOME=/", NULL };
    static const char *const job[] = { "LSB_JOBID=209", NULL };
    struct tr_proc_match m;
    json_t *id = identity (), *rec, *oc, *cpu, *mem;
    json_t *hint = json_pack ("{s:s s:i}", "state", "completed", "exit_code",
                              0);
    tr_step_t *step;
    tr_error_t error;

    (void)state;
    make_v1 ();
    put_stat (3000, 1, 3000, 100);
    put_environ (3000, other);
    put ("/proc/loadavg", "0.00 0.00 0.00 1/100 3000\n");
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    memset (&m, 0, sizeof (m));
    snprintf (m.env, sizeof (m.env), "LSB_JOBID=209");
    assert_int_equal (tr_step_attach_match (step, &m, &error), 0);
    assert_int_equal (sampled_npids (step), 0);
    assert_int_equal (tr_step_set_outcome (step, hint), 0);
    assert_int_equal (tr_step_end (step, &error), 0);
    assert_non_null (rec = tr_step_record (step, "final"));
    assert_int_equal (tr_record_validate (rec, &error), 0);
    oc = json_object_get (rec, "outcome");
    assert_string_equal (json_string_value (json_object_get (oc, "state")),
                         "incomplete");
    assert_false (json_is_true (json_object_get (oc, "complete")));
    assert_string_equal (json_string_value (json_object_get (oc, "reason")),
                         TR_STATES_UNFOLLOWED);
    assert_int_equal (json_integer_value (json_object_get (oc, "exit_code")),
                      0);
    cpu = json_object_get (json_object_get (rec, "summary"), "cpu");
    mem = json_object_get (json_object_get (rec, "summary"), "memory");
    assert_null (json_object_get (cpu, "total_s"));
    assert_null (json_object_get (mem, "peak_bytes"));
    assert_string_equal (json_string_value (json_object_get (cpu, "source")),
                         "none");
    assert_int_equal (json_array_size (json_object_get (
                          json_object_get (rec, "series"), "t_s")),
                      0);
    assert_true (tr_states_unfollowed (rec));
    assert_string_equal (tr_states_of (rec), "incomplete");
    json_decref (rec);
    tr_step_destroy (step);

    /* the same, with a process of the job */
    put_stat (3001, 1, 3001, 110);
    put_environ (3001, job);
    put ("/proc/loadavg", "0.00 0.00 0.00 1/100 3001\n");
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    assert_int_equal (tr_step_attach_match (step, &m, &error), 0);
    assert_int_equal (sampled_npids (step), 1);
    assert_int_equal (tr_step_set_outcome (step, hint), 0);
    assert_int_equal (tr_step_end (step, &error), 0);
    assert_non_null (rec = tr_step_record (step, "final"));
    assert_int_equal (tr_record_validate (rec, &error), 0);
    oc = json_object_get (rec, "outcome");
    assert_string_equal (json_string_value (json_object_get (oc, "state")),
                         "completed");
    assert_true (json_is_true (json_object_get (oc, "complete")));
    cpu = json_object_get (json_object_get (rec, "summary"), "cpu");
    assert_non_null (json_object_get (cpu, "total_s"));
    assert_false (tr_states_unfollowed (rec));
    json_decref (rec);
    tr_step_destroy (step);
    json_decref (hint);
    json_decref (id);
}

/* Whether pid's cgroup2 directory is delegated to a uid, over hosts and
 * file ownership.  Fixture files belong to the test's own euid, so "me"
 * is the owner and me + 1 is another user.
 */
static void test_delegation (void **state)
{
    static const char *const v1_only
        = "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
    static const struct {
        const char *mounts;
        const char *cgroup;     /* /proc/500/cgroup, NULL: none */
        const char *dir;        /* the directory the line names */
        bool procs;             /* dir/cgroup.procs exists */
        mode_t procs_mode;
        uid_t uid_offset;       /* asked for me + offset */
        int rc, err;
    } cases[] = {
        /* systemd Delegate=yes on a pure cgroup2 host */
        { V2_MOUNTS, "0::/user.slice/user-1001.slice/user@1001.service/x\n",
          "/sys/fs/cgroup/user.slice/user-1001.slice/user@1001.service/x",
          true, 0644, 0, 1, 0 },
        /* another user's directory */
        { V2_MOUNTS, "0::/user.slice/user-1001.slice/user@1001.service/x\n",
          "/sys/fs/cgroup/user.slice/user-1001.slice/user@1001.service/x",
          true, 0644, 1, 0, 0 },
        /* the directory is ours but cgroup.procs is not writable */
        { V2_MOUNTS, "0::/site/u1001\n", "/sys/fs/cgroup/site/u1001", true,
          0444, 0, 0, 0 },
        /* not a cgroup directory at all */
        { V2_MOUNTS, "0::/site/u1001\n", "/sys/fs/cgroup/site/u1001", false,
          0, 0, -1, ENOENT },
        /* hybrid host: the controller-less cgroup2 tree, v1 lines ignored */
        { V1_MOUNTS, "5:memory:/\n0::/tracer-test.9\n",
          "/sys/fs/cgroup/unified/tracer-test.9", true, 0644, 0, 1, 0 },
        /* cgroup v1 only: nothing to delegate */
        { v1_only, "4:memory:/user/1001\n", NULL, false, 0, 0, -1, ENOENT },
        /* the process is gone */
        { V2_MOUNTS, NULL, NULL, false, 0, 0, -1, ENOENT },
    };
    char dir[PATH_MAX], full[PATH_MAX * 2];
    uid_t me = geteuid ();
    tr_error_t error;

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        int rc;

        teardown (state);
        assert_int_equal (setup (state), 0);
        put ("/proc/self/mountinfo", cases[i].mounts);
        if (cases[i].cgroup)
            put ("/proc/500/cgroup", cases[i].cgroup);
        if (cases[i].dir) {
            char procs[PATH_MAX];
            snprintf (procs, sizeof (procs), "%s/cgroup.%s", cases[i].dir,
                      cases[i].procs ? "procs" : "controllers");
            put (procs, "");
            snprintf (full, sizeof (full), "%s%s", root, procs);
            if (cases[i].procs)
                assert_int_equal (chmod (full, cases[i].procs_mode), 0);
        }
        errno = 0;
        rc = tr_cgroup_delegation (500, me + cases[i].uid_offset, dir,
                                   sizeof (dir), &error);
        if (rc != cases[i].rc)
            fail_msg ("case %zu: got %d, want %d (%s)", i, rc, cases[i].rc,
                      error.text);
        if (rc < 0)
            assert_int_equal (errno, cases[i].err);
        else
            assert_string_equal (dir, cases[i].dir);
        if (rc == 0)
            assert_non_null (strstr (error.text, "is not delegated to uid"));
    }
}

/* A step in a directory tracer-run made in a delegated subtree of a
 * hybrid host's cgroup2 tree: kept although the tree is hybrid, labelled
 * as delegated, CPU and pressure from the directory, memory from its
 * processes (no memory controller there).  Without the delegated flag
 * the same directory is refused, as any non-tracer cgroup2 directory on
 * a hybrid host is.
 */
#define DELEG_DIR "/sys/fs/cgroup/unified/tracer-test.9/tracer-run.55"

static void test_delegated_step (void **state)
{
    static const char *const psi = "some avg10=0.00 avg60=0.00 avg300=0.00 "
                                   "total=250000\n"
                                   "full avg10=0.00 avg60=0.00 avg300=0.00 "
                                   "total=100000\n";
    json_t *id = identity (), *rec, *summary, *cg, *st;
    struct tr_cgroup_paths p;
    tr_step_t *step, *again;
    tr_error_t error;
    long page = sysconf (_SC_PAGESIZE);

    make_v1 ();
    put (DELEG_DIR "/cgroup.controllers", "");
    put (DELEG_DIR "/cgroup.procs", "4242\n");
    put (DELEG_DIR "/cpu.stat",
         "usage_usec 2000000\nuser_usec 1500000\nsystem_usec 500000\n");
    put (DELEG_DIR "/cpu.pressure", psi);
    put (DELEG_DIR "/memory.pressure", psi);
    put (DELEG_DIR "/io.pressure", psi);
    /* rss (field 24) = 2560 pages */
    put ("/proc/4242/stat",
         "4242 (burn x) R 1 4242 4242 0 -1 4194304 100 0 0 0 150 50 0 0 20 "
         "0 1 0 12345 10000000 2560 18446744073709551615\n");

    memset (&p, 0, sizeof (p));
    snprintf (p.unified, sizeof (p.unified), "%s", DELEG_DIR);
    assert_non_null (step = tr_step_create (id, NULL, NULL, "test", 1));
    /* a hybrid host's cgroup2 directory that is not tracer's own holds
     * whole daemons: not the step's
     */
    assert_int_equal (tr_step_attach_paths (step, &p, &error), -1);
    assert_int_equal (errno, ENOENT);
    assert_null (tr_step_cgroup2_dir (step));
    p.unified_delegated = true;
    assert_int_equal (tr_step_attach_paths (step, &p, &error), 0);
    assert_string_equal (tr_step_cgroup2_dir (step), DELEG_DIR);
    assert_int_equal (tr_step_add_task (step, 0, 4242), 0);
    assert_int_equal (tr_step_sample (step, &error), 0);
    tr_step_task_exit (step, 0, 4242, 0);
    assert_int_equal (tr_step_finish (step, &error), 0);
    assert_non_null (rec = tr_step_record (step, "final"));
    if (tr_record_validate (rec, &error) < 0)
        fail_msg ("record refused: %s", error.text);
    cg = json_object_get (rec, "cgroup");
    summary = json_object_get (rec, "summary");
    assert_string_equal (json_string_value (json_object_get (cg, "attach")),
                         "cgroup2-delegated");
    assert_string_equal (json_string_value (json_object_get (cg, "version")),
                         "v2");
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (cg, "paths"), "unified")),
                         "/tracer-test.9/tracer-run.55");
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (summary, "cpu"), "source")),
                         "cgroup-v2:cpu.stat");
    assert_true (json_real_value (json_object_get (
                     json_object_get (summary, "cpu"), "total_s"))
                 == 2.0);
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (summary, "pressure"), "source")),
                         "cgroup2");
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (summary, "memory"), "source")),
                         "proc:stat rss sum (cgroup processes, sampled)");
    assert_int_equal (json_integer_value (json_object_get (
                          json_object_get (summary, "memory"), "peak_bytes")),
                      2560 * page);
    assert_true (json_is_false (
        json_object_get (json_object_get (summary, "memory"), "exact")));
    json_decref (rec);

    /* a resumed step is still labelled as delegated */
    assert_non_null (st = tr_step_save (step));
    assert_non_null (again = tr_step_restore (st, &error));
    assert_non_null (rec = tr_step_record (again, "final"));
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (rec, "cgroup"), "attach")),
                         "cgroup2-delegated");
    assert_string_equal (tr_step_cgroup2_dir (again), DELEG_DIR);
    json_decref (rec);
    json_decref (st);
    json_decref (id);
    tr_step_destroy (again);
    tr_step_destroy (step);
}

/* In a child, in a mount namespace of its own: every cgroup2 mount is
 * taken away, one is mounted on a new directory and taken away again;
 * each lookup must see the table as it is now.  Exit 77: cannot be
 * set up here.
 */
static int mount_change_child (void)
{
    char dir[] = "/tmp/tracer-cg2.XXXXXX", mnt[PATH_MAX];
    int rc = 0;

    if (unshare (CLONE_NEWNS) < 0
        /* source and type are ignored here; named for valgrind */
        || mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0
        || !mkdtemp (dir))
        return 77;
    for (int i = 0;
         i < 16 && tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0; i++) {
        if (umount2 (mnt, MNT_DETACH) < 0)
            return 7; /* a mount point named again after its unmount */
    }
    /* an answer kept over the change would name the old mount again */
    if (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0)
        rc = 2;
    else if (errno != ENOENT)
        rc = 3;
    else if (mount ("none", dir, "cgroup2", 0, NULL) < 0)
        rc = 77;
    else {
        if (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) < 0
            || strcmp (mnt, dir) != 0)
            rc = 4;
        else if (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) < 0
                 || strcmp (mnt, dir) != 0)
            rc = 5; /* asked again, unchanged */
        (void)umount2 (dir, MNT_DETACH);
        if (!rc
            && (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0
                || errno != ENOENT))
            rc = 6;
    }
    rmdir (dir);
    return rc;
}

/* Mount points are kept while the mount table is unchanged: a cgroup2
 * hierarchy mounted or unmounted afterwards is seen at the next lookup,
 * in a child whose parent had looked them up already.
 */
static void test_mountpoint_change (void **state)
{
    char mnt[PATH_MAX];
    pid_t pid;
    int status;

    (void)state;
    tr_fsroot_set (NULL);
    if (geteuid () != 0) {
        skip ();
        return;
    }
    (void)tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)); /* kept here */
    if ((pid = fork ()) == 0)
        _exit (mount_change_child ());
    assert_true (pid > 0);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    if (WEXITSTATUS (status) == 77) {
        skip ();
        return;
    }
    assert_int_equal (WEXITSTATUS (status), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_parse_strips_tasks, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_parse_keeps_unknown_layouts,
                                         setup, teardown),
        cmocka_unit_test_setup_teardown (test_v1_step, setup, teardown),
        cmocka_unit_test_setup_teardown (test_v2_step, setup, teardown),
        cmocka_unit_test_setup_teardown (test_v2_no_peak, setup, teardown),
        cmocka_unit_test_setup_teardown (test_v2_parent_limit, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_cpu_split, setup, teardown),
        cmocka_unit_test_setup_teardown (test_root_cgroup_refused, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_vanished_pid, setup, teardown),
        cmocka_unit_test_setup_teardown (test_save_restore, setup, teardown),
        cmocka_unit_test_setup_teardown (test_kernel_events, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_resolve_path, setup, teardown),
        cmocka_unit_test_setup_teardown (test_match_and_lost, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_delegation, setup, teardown),
        cmocka_unit_test_setup_teardown (test_growing_list, setup, teardown),
        cmocka_unit_test_setup_teardown (test_exclude, setup, teardown),
        cmocka_unit_test_setup_teardown (test_unfollowed, setup, teardown),
        cmocka_unit_test_setup_teardown (test_delegated_step, setup,
                                         teardown),
        cmocka_unit_test (test_mountpoint_change),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
