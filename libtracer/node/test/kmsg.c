/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for the kernel log parser (kmsg.c): every kind of event on
 * fixture records as /dev/kmsg returns them, lines that userspace wrote
 * (another facility) never believed, continuation lines, truncated and
 * malformed records, the cgroup test that decides which step an OOM
 * kill concerns, and the bounds of a step's events.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/node/kmsg.h"
#include "libtracer/record/record.h"

#include "record-fixture.h"

static int kparse (tr_kmsg_parser_t *p, const char *rec,
                  struct tr_kmsg_event *ev)
{
    return tr_kmsg_parse (p, rec, strlen (rec), ev);
}

static void test_oom (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;

    (void)state;
    tr_kmsg_parser_init (&p);
    assert_int_equal (kparse (&p,
        "6,1001,5000000,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
        "cpuset=/,mems_allowed=0,oom_memcg=/slurm_vm/uid_0/job_5/step_0,"
        "task_memcg=/slurm_vm/uid_0/job_5/step_0/task_0,task=perl,pid=4242,"
        "uid=0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "3,1002,5000100,-;Memory cgroup out of memory: Killed process 4242 "
        "(perl) total-vm:210000kB, anon-rss:100000kB, file-rss:2000kB, "
        "shmem-rss:48kB, UID:0 pgtables:400kB oom_score_adj:0\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_OOM_KILL);
    assert_string_equal (tr_kmsg_kind_name (ev.kind), "oom-kill");
    assert_int_equal (ev.pid, 4242);
    assert_string_equal (ev.tool, "perl");
    assert_int_equal (ev.rss_bytes, (100000 + 2000 + 48) * 1024LL);
    assert_string_equal (ev.memcg, "/slurm_vm/uid_0/job_5/step_0/task_0");
    assert_string_equal (ev.oom_memcg, "/slurm_vm/uid_0/job_5/step_0");
    assert_int_equal (ev.seq, 1002);
    assert_int_equal (ev.ts_usec, 5000100);
    assert_non_null (strstr (ev.text, "Killed process 4242 (perl)"));
    /* a global OOM kill, no oom-kill: line before (older kernels) */
    assert_int_equal (kparse (&p,
        "3,1010,6000000,-;Out of memory: Killed process 77 (a) b) "
        "total-vm:10kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB, UID:1000\n",
        &ev), 1);
    assert_int_equal (ev.pid, 77);
    assert_string_equal (ev.tool, "a) b");
    assert_int_equal (ev.rss_bytes, 4096);
    assert_string_equal (ev.memcg, "");
    /* the oom-kill: line of another pid is not joined */
    assert_int_equal (kparse (&p,
        "6,1020,7000000,-;oom-kill:constraint=CONSTRAINT_MEMCG,"
        "oom_memcg=/a,task_memcg=/a/b,task=x,pid=5,uid=0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "3,1021,7000001,-;Memory cgroup out of memory: Killed process 6 (y) "
        "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0\n",
        &ev), 1);
    assert_string_equal (ev.memcg, "");
    /* no RSS figures: unknown, never 0 */
    assert_int_equal (kparse (&p,
        "3,1022,7000002,-;Killed process 8 (z)\n", &ev), 1);
    assert_int_equal (ev.rss_bytes, -1);
}

static void test_segfault_trap (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;

    (void)state;
    tr_kmsg_parser_init (&p);
    assert_int_equal (kparse (&p,
        "6,2001,8000000,-;samtools[31337]: segfault at 0 ip 000055d0 sp "
        "00007ffd error 4 in samtools[55d0+1000] likely on CPU 1 (core 1, "
        "socket 0)\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_SEGFAULT);
    assert_int_equal (ev.pid, 31337);
    assert_string_equal (ev.tool, "samtools");
    assert_int_equal (ev.rss_bytes, -1);
    /* a name with brackets: the pid is the kernel's, before "]: segfault" */
    assert_int_equal (kparse (&p,
        "6,2002,8000000,-;a[1]b[42]: segfault at 8 ip 0 sp 0 error 6\n",
        &ev), 1);
    assert_int_equal (ev.pid, 42);
    assert_string_equal (ev.tool, "a[1]b");
    assert_int_equal (kparse (&p,
        "6,2003,8000001,-;traps: perl[999] trap divide error ip:4011 "
        "sp:7ffc error:0 in perl[400000+1000]\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_TRAP);
    assert_int_equal (ev.pid, 999);
    assert_string_equal (ev.tool, "perl");
    assert_int_equal (kparse (&p,
        "4,2004,8000002,-;traps: bwa[12] general protection fault ip:1 "
        "sp:2 error:0\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_TRAP);
    assert_int_equal (ev.pid, 12);
    assert_string_equal (ev.tool, "bwa");
}

static void test_hung_io_nfs_xid (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;

    (void)state;
    tr_kmsg_parser_init (&p);
    assert_int_equal (kparse (&p,
        "3,3001,9000000,-;INFO: task dd:5150 blocked for more than 120 "
        "seconds.\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_HUNG_TASK);
    assert_int_equal (ev.pid, 5150);
    assert_string_equal (ev.tool, "dd");
    assert_false (tr_kmsg_kind_nodewide (ev.kind));
    /* continuation lines (the device's properties) follow the message */
    assert_int_equal (kparse (&p,
        "3,3002,9000001,-;I/O error, dev sda, sector 2048 op 0x0:(READ) "
        "flags 0x0 phys_seg 1 prio class 2\n SUBSYSTEM=block\n DEVICE=b8:0\n",
        &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_IO_ERROR);
    assert_string_equal (ev.device, "sda");
    assert_int_equal (ev.pid, 0);
    assert_null (strstr (ev.text, "SUBSYSTEM"));
    assert_true (tr_kmsg_kind_nodewide (ev.kind));
    assert_int_equal (kparse (&p,
        "3,3003,9000002,-;blk_update_request: I/O error, dev vdb, sector 8 "
        "op 0x1:(WRITE)\n", &ev), 1);
    assert_string_equal (ev.device, "vdb");
    assert_int_equal (kparse (&p,
        "3,3004,9000003,-;Buffer I/O error on dev sdb1, logical block 0, "
        "async page read\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_IO_ERROR);
    assert_string_equal (ev.device, "sdb1");
    assert_int_equal (kparse (&p,
        "5,3005,9000004,-;nfs: server fs1.example.org not responding, still "
        "trying\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_NFS);
    assert_string_equal (ev.device, "fs1.example.org");
    assert_int_equal (kparse (&p,
        "4,3006,9000005,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, "
        "name=python3, GPU has fallen off the bus.\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_GPU_XID);
    assert_string_equal (ev.device, "PCI:0000:3b:00");
    assert_int_equal (ev.pid, 1234);
    assert_string_equal (ev.tool, "python3");
    assert_int_equal (kparse (&p,
        "4,3007,9000006,-;NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', "
        "name=<unknown>, An uncorrectable double bit error\n", &ev), 1);
    assert_int_equal (ev.pid, 0);
    /* lines of no interest */
    assert_int_equal (kparse (&p,
        "6,3008,9000007,-;eth0: link up\n", &ev), 0);
    assert_int_equal (ev.kind, TR_KMSG_NONE);
}

/* Lines userspace writes to /dev/kmsg carry its facility: never believed,
 * whatever they claim.
 */
static void test_forged (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;
    static const char *const forged[] = {
        /* echo '<14>...' > /dev/kmsg: LOG_USER|LOG_INFO */
        "14,4001,1,-;perl[4242]: segfault at 0 ip 0 sp 0 error 4\n",
        /* plain echo: LOG_USER|LOG_WARNING */
        "12,4002,2,-;Memory cgroup out of memory: Killed process 4242 (perl) "
        "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0\n",
        /* LOG_DAEMON */
        "27,4003,3,-;I/O error, dev sda, sector 1\n",
        "8,4004,4,-;nfs: server x not responding\n",
        "191,4005,5,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=a\n",
    };

    (void)state;
    tr_kmsg_parser_init (&p);
    for (size_t i = 0; i < sizeof (forged) / sizeof (forged[0]); i++)
        assert_int_equal (kparse (&p, forged[i], &ev), 0);
    /* a forged oom-kill: line does not lend its cgroup to a real kill */
    assert_int_equal (kparse (&p,
        "14,4006,6,-;oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/s,"
        "task_memcg=/s/step_0,task=perl,pid=9,uid=0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "3,4007,7,-;Memory cgroup out of memory: Killed process 9 (perl) "
        "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0\n",
        &ev), 1);
    assert_string_equal (ev.memcg, "");
}

/* A process chooses its own name (comm, 15 bytes): one that holds
 * "x[1234] " or another kind's words must not point the kernel's line at
 * another process, nor make it another kind, nor hide it.
 */
static void test_name_forges_pid (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;

    (void)state;
    tr_kmsg_parser_init (&p);
    /* comm "x[1234] " traps as pid 777: the line is pid 777's */
    assert_int_equal (kparse (&p,
        "6,5001,1,-;traps: x[1234] [777] trap int3 ip:401000 sp:7ffc "
        "error:0 in a.out[401000+1000]\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_TRAP);
    assert_int_equal (ev.pid, 777);
    assert_string_equal (ev.tool, "x[1234] ");
    /* the longest name, every byte escaped by the kernel */
    assert_int_equal (kparse (&p,
        "6,5002,2,-;traps: [1][2] trap\\x01\\x02\\x03\\x04\\x05"
        "\\x06[31] trap int3 ip:1 sp:2 error:0\n", &ev), 1);
    assert_int_equal (ev.pid, 31);
    /* comm "y[4321]: segfault at " cannot fit; a shorter forgery loses */
    assert_int_equal (kparse (&p,
        "6,5003,3,-;a[9]: segfault[88]: segfault at 0 ip 0 sp 0 error 4\n",
        &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_SEGFAULT);
    assert_int_equal (ev.pid, 88);
    /* a name made of another kind's words keeps its line's kind */
    assert_int_equal (kparse (&p,
        "6,5004,4,-;traps: Killed process [55] trap int3 ip:1 sp:2 "
        "error:0\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_TRAP);
    assert_int_equal (ev.pid, 55);
    assert_int_equal (kparse (&p,
        "3,5005,5,-;Memory cgroup out of memory: Killed process 66 "
        "(x]: segfault at) total-vm:1kB, anon-rss:4kB, file-rss:0kB, "
        "shmem-rss:0kB, UID:1000\n", &ev), 1);
    assert_int_equal (ev.kind, TR_KMSG_OOM_KILL);
    assert_int_equal (ev.pid, 66);
    assert_int_equal (ev.rss_bytes, 4096);
    /* a hung task named "a:1234" is the kernel's pid after the name */
    assert_int_equal (kparse (&p,
        "3,5006,6,-;INFO: task a:1234:99 blocked for more than 120 "
        "seconds.\n", &ev), 1);
    assert_int_equal (ev.pid, 99);
    /* the oom-kill: line's pid is the one after the name */
    assert_int_equal (kparse (&p,
        "6,5007,7,-;oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/s,"
        "task_memcg=/s/step_0,task=q,pid=1234,pid=44,uid=1000\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "3,5008,8,-;Memory cgroup out of memory: Killed process 44 (q,pid=1234) "
        "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:1000\n",
        &ev), 1);
    assert_int_equal (ev.pid, 44);
    assert_string_equal (ev.memcg, "/s/step_0");
}

static void test_malformed (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;
    static const char *const bad[] = {
        "", "6", "6,1", "6,1,2", "x,1,2,-;a\n", "6,1,2,-", "6,,2,-;a\n",
        "-6,1,2,-;a\n", "99999999999999999999999,1,2,-;a\n",
    };
    /* truncated records: what is there is parsed, nothing invented */
    const char *cut = "6,5001,1,-;samtools[31337]: segfault at 0 ip 0";

    (void)state;
    tr_kmsg_parser_init (&p);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        assert_int_equal (kparse (&p, bad[i], &ev), -1);
        assert_int_equal (errno, EINVAL);
    }
    for (size_t n = 0;
         n < (size_t)(strstr (cut, "]: segfault at ") - cut) + 14; n++) {
        int rc = tr_kmsg_parse (&p, cut, n, &ev);
        assert_true (rc <= 0);
    }
    assert_int_equal (kparse (&p, cut, &ev), 1);
    assert_int_equal (ev.pid, 31337);
    assert_int_equal (kparse (&p,
        "6,5002,1,-;samtools[]: segfault at 0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "6,5003,1,-;samtools[0]: segfault at 0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "6,5004,1,-;INFO: task dd: blocked for more than 1 seconds.\n",
        &ev), 0);
    assert_int_equal (kparse (&p,
        "6,5005,1,-;Killed process x (y)\n", &ev), 0);
}

/* Control characters and bytes that are not ASCII become escapes; the
 * text is cut at TR_KMSG_TEXT_MAX bytes, never in the middle of one.
 */
static void test_text (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;
    char rec[TR_KMSG_LINE_MAX];
    json_t *o;

    (void)state;
    tr_kmsg_parser_init (&p);
    assert_int_equal (kparse (&p,
        "6,6001,1,-;a\x1b[2Jb\\\xff[7]: segfault at 0\n", &ev), 1);
    assert_string_equal (ev.tool, "a\\x1b[2Jb\\\\\\xff");
    assert_null (strchr (ev.text, '\x1b'));
    assert_non_null (o = tr_kmsg_event_json (&ev, "step", 1000));
    assert_string_equal (json_string_value (json_object_get (o, "tool")),
                         "a\\x1b[2Jb\\\\\\xff");
    json_decref (o);
    snprintf (rec, sizeof (rec), "6,6002,1,-;x[8]: segfault at %0400d", 0);
    memset (rec + 40, '\x01', 300);
    assert_int_equal (kparse (&p, rec, &ev), 1);
    assert_true (strlen (ev.text) <= TR_KMSG_TEXT_MAX);
    /* 29 bytes as they are, then 56 whole escapes of 4 bytes */
    assert_int_equal (strlen (ev.text), 29 + 4 * 56);
    assert_string_equal (ev.text + strlen (ev.text) - 4, "\\x01");
}

static void test_cgroup_within (void **state)
{
    (void)state;
    assert_true (tr_kmsg_cgroup_within ("/slurm/job_5/step_0/task_0",
                                        "/slurm/job_5/step_0"));
    assert_true (tr_kmsg_cgroup_within ("/slurm/job_5/step_0",
                                        "/slurm/job_5/step_0/"));
    assert_false (tr_kmsg_cgroup_within ("/slurm/job_5/step_01",
                                         "/slurm/job_5/step_0"));
    assert_false (tr_kmsg_cgroup_within ("/slurm/job_5",
                                         "/slurm/job_5/step_0"));
    assert_false (tr_kmsg_cgroup_within ("/slurm/job_5", "/"));
    assert_false (tr_kmsg_cgroup_within ("/slurm/job_5", ""));
    assert_false (tr_kmsg_cgroup_within ("", "/slurm"));
    assert_false (tr_kmsg_cgroup_within (NULL, "/slurm"));
}

static void test_time (void **state)
{
    (void)state;
    assert_int_equal (tr_kmsg_unix_ms (5000000, 1700000010000LL, 15000000),
                      1700000000000LL);
    /* a line stamped after "now": never in the future */
    assert_int_equal (tr_kmsg_unix_ms (20000000, 1700000010000LL, 15000000),
                      1700000010000LL);
}

static void test_bounds (void **state)
{
    struct tr_kmsg_event ev = { .kind = TR_KMSG_SEGFAULT, .pid = 1,
                                .rss_bytes = -1 };
    json_t *events = NULL;
    unsigned dropped = 0;

    (void)state;
    for (int i = 0; i < 40; i++) {
        snprintf (ev.text, sizeof (ev.text), "x[1]: segfault %d", i);
        (void)tr_kmsg_events_add (&events, &ev, "step", 1000 + i, &dropped);
    }
    assert_int_equal (json_array_size (events), TR_KMSG_STEP_EVENTS);
    assert_int_equal (dropped, 8);
    json_decref (events);
    events = NULL;
    dropped = 0;
    ev.kind = TR_KMSG_IO_ERROR;
    ev.pid = 0;
    snprintf (ev.device, sizeof (ev.device), "sda");
    for (int i = 0; i < 12; i++) {
        snprintf (ev.text, sizeof (ev.text), "I/O error, dev sda %d", i);
        (void)tr_kmsg_events_add (&events, &ev, "node", 1000 + i, &dropped);
    }
    assert_int_equal (json_array_size (events), TR_KMSG_STEP_NODE_EVENTS);
    /* the same line twice is kept once */
    ev.kind = TR_KMSG_SEGFAULT;
    snprintf (ev.text, sizeof (ev.text), "y");
    assert_int_equal (tr_kmsg_events_add (&events, &ev, "step", 5, NULL), 1);
    assert_int_equal (tr_kmsg_events_add (&events, &ev, "step", 5, NULL), 0);
    assert_string_equal (json_string_value (json_object_get (
        json_array_get (events, 0), "scope")), "node");
    assert_null (json_object_get (json_array_get (events, 0), "rss_bytes"));
    assert_null (json_object_get (json_array_get (events, 0), "pid"));
    json_decref (events);
}

/* The record checker takes the events kmsg.c makes and refuses what
 * the schema does not allow.
 */
static void test_record (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;
    json_t *rec = rec_with ("{}", true), *events = NULL, *e;
    tr_error_t err;

    (void)state;
    tr_kmsg_parser_init (&p);
    assert_int_equal (kparse (&p,
        "3,1,5,-;Memory cgroup out of memory: Killed process 4242 (perl) "
        "total-vm:1kB, anon-rss:100kB, file-rss:2kB, shmem-rss:0kB, UID:0\n",
        &ev), 1);
    assert_int_equal (tr_kmsg_events_add (&events, &ev, "step", 1050000,
                                          NULL), 1);
    assert_int_equal (kparse (&p, "3,2,6,-;I/O error, dev sda, sector 1\n",
                              &ev), 1);
    assert_int_equal (tr_kmsg_events_add (&events, &ev, "node", 1060000,
                                          NULL), 1);
    assert_int_equal (json_object_set_new (rec, "events", events), 0);
    if (tr_record_validate (rec, &err) < 0)
        fail_msg ("%s", err.text);
    e = json_array_get (events, 0);
    assert_int_equal (json_integer_value (json_object_get (e, "rss_bytes")),
                      102 * 1024);
    /* a kind, a scope or a member the schema does not know */
    json_object_set_new (e, "kind", json_string ("panic"));
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_object_set_new (e, "kind", json_string ("oom-kill"));
    json_object_set_new (e, "scope", json_string ("job"));
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_object_set_new (e, "scope", json_string ("step"));
    json_object_set_new (e, "extra", json_true ());
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_object_del (e, "extra");
    json_object_set_new (e, "rss_bytes", json_integer (-1));
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_object_set_new (e, "rss_bytes", json_integer (1));
    assert_int_equal (tr_record_validate (rec, &err), 0);
    /* at most 32 */
    while (json_array_size (events) <= 32)
        json_array_append (events, e);
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_object_del (rec, "events");
    /* progress */
    json_object_set_new (rec, "progress", parse (
        "{'stalled': true, 'stalled_s': 725.0, 'since_unix_ms': 1010000,"
        " 'processes': [{'tool': 'cat', 'pid': 77, 'state': 'S',"
        " 'wchan': 'pipe_read'}]}"));
    if (tr_record_validate (rec, &err) < 0)
        fail_msg ("%s", err.text);
    json_object_set_new (json_object_get (rec, "progress"), "stalled_s",
                         json_real (-1));
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_object_set_new (rec, "progress", parse ("{'stalled_s': 1}"));
    assert_int_equal (tr_record_validate (rec, &err), -1);
    json_decref (rec);
}

/* Which step a line concerns: by the OOM victim's cgroup (v1 or v2
 * names), else by a pid of the step, lately ended ones included; a line
 * of another cgroup or process never; node-wide kinds that concern no
 * step go to every step as "node".
 */
static void test_attach (void **state)
{
    tr_kmsg_parser_t p;
    struct tr_kmsg_event ev;
    pid_t pids[] = { 100, 101, 4242 }, gone[] = { 555 };
    struct tr_kmsg_step v1 = {
        .memory_rel = "/slurm_n1/uid_0/job_5/step_0",
        .pids = pids, .npids = 3, .gone = gone, .ngone = 1,
    };
    struct tr_kmsg_step other = {
        .memory_rel = "/slurm_n1/uid_0/job_6/step_0",
        .pids = NULL, .npids = 0,
    };
    struct tr_kmsg_step v2 = {
        .unified_rel = "/system.slice/slurmstepd.scope/job_7/step_0",
    };

    (void)state;
    tr_kmsg_parser_init (&p);
    /* an OOM kill in job 5's step 0 (by cgroup; its pid is unknown) */
    assert_int_equal (kparse (&p,
        "6,1,5,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
        "cpuset=/,mems_allowed=0,oom_memcg=/slurm_n1/uid_0/job_5,"
        "task_memcg=/slurm_n1/uid_0/job_5/step_0/task_0,task=perl,pid=9999,"
        "uid=0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "3,2,6,-;Memory cgroup out of memory: Killed process 9999 (perl) "
        "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0\n",
        &ev), 1);
    assert_true (tr_kmsg_concerns (&ev, &v1));
    assert_false (tr_kmsg_concerns (&ev, &other));
    assert_false (tr_kmsg_concerns (&ev, &v2));
    assert_string_equal (tr_kmsg_scope (&ev, true, true), "step");
    assert_null (tr_kmsg_scope (&ev, false, true));
    assert_null (tr_kmsg_scope (&ev, false, false));
    /* the job's limit hit by its other step: oom_memcg is job 5, not
     * the step; task_memcg is step 1
     */
    assert_int_equal (kparse (&p,
        "6,3,5,-;oom-kill:constraint=CONSTRAINT_MEMCG,"
        "oom_memcg=/slurm_n1/uid_0/job_5,"
        "task_memcg=/slurm_n1/uid_0/job_5/step_1/task_0,task=perl,pid=9998,"
        "uid=0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "3,4,6,-;Memory cgroup out of memory: Killed process 9998 (perl) "
        "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0\n",
        &ev), 1);
    assert_false (tr_kmsg_concerns (&ev, &v1));
    /* cgroup v2 names */
    assert_int_equal (kparse (&p,
        "6,5,5,-;oom-kill:constraint=CONSTRAINT_MEMCG,"
        "oom_memcg=/system.slice/slurmstepd.scope/job_7/step_0,"
        "task_memcg=/system.slice/slurmstepd.scope/job_7/step_0/user/task_0,"
        "task=a,pid=77,uid=0\n", &ev), 0);
    assert_int_equal (kparse (&p,
        "3,6,6,-;Memory cgroup out of memory: Killed process 77 (a) "
        "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0\n",
        &ev), 1);
    assert_true (tr_kmsg_concerns (&ev, &v2));
    assert_false (tr_kmsg_concerns (&ev, &v1));
    /* segfaults: a process of the step, one that ended lately, another */
    assert_int_equal (kparse (&p, "6,7,1,-;x[4242]: segfault at 0\n", &ev),
                      1);
    assert_true (tr_kmsg_concerns (&ev, &v1));
    assert_false (tr_kmsg_concerns (&ev, &other));
    assert_int_equal (kparse (&p, "6,8,1,-;x[555]: segfault at 0\n", &ev), 1);
    assert_true (tr_kmsg_concerns (&ev, &v1));
    assert_int_equal (kparse (&p, "6,9,1,-;x[556]: segfault at 0\n", &ev), 1);
    assert_false (tr_kmsg_concerns (&ev, &v1));
    assert_null (tr_kmsg_scope (&ev, false, false));
    /* a disk error names no process: node-wide, for every step */
    assert_int_equal (kparse (&p, "3,10,1,-;I/O error, dev sda, sector 1\n",
                              &ev), 1);
    assert_false (tr_kmsg_concerns (&ev, &v1));
    assert_string_equal (tr_kmsg_scope (&ev, false, false), "node");
    /* an Xid of a step's process is the step's, not node-wide */
    assert_int_equal (kparse (&p,
        "4,11,1,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=101, name=python\n",
        &ev), 1);
    assert_true (tr_kmsg_concerns (&ev, &v1));
    assert_string_equal (tr_kmsg_scope (&ev, true, true), "step");
    /* a step it does not concern gets nothing when another step has it */
    assert_false (tr_kmsg_concerns (&ev, &other));
    assert_null (tr_kmsg_scope (&ev, false, true));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_oom),
        cmocka_unit_test (test_segfault_trap),
        cmocka_unit_test (test_hung_io_nfs_xid),
        cmocka_unit_test (test_forged),
        cmocka_unit_test (test_name_forges_pid),
        cmocka_unit_test (test_malformed),
        cmocka_unit_test (test_text),
        cmocka_unit_test (test_cgroup_within),
        cmocka_unit_test (test_time),
        cmocka_unit_test (test_bounds),
        cmocka_unit_test (test_record),
        cmocka_unit_test (test_attach),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
