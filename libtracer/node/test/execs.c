/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What processes were at their exec: the kernel's process connector
 * against real processes (root only; the test machine runs as root, so
 * a listener that cannot open is a failure, not a skip), and the
 * process table naming a process known only from its exit record by it.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include "libtracer/node/execs.h"
#include "libtracer/node/procs.h"
#include "libtracer/node/taskstats.h"

static int64_t now_ms (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A script "#!/bin/sh" named align.sh that runs body; its path. */
static char *script (const char *body)
{
    static char path[64];
    char dir[48];
    FILE *f;

    snprintf (dir, sizeof (dir), "/tmp/tracer-execs.%d", (int)getpid ());
    (void)mkdir (dir, 0700);
    snprintf (path, sizeof (path), "%s/align.sh", dir);
    assert_non_null (f = fopen (path, "w"));
    fprintf (f, "#!/bin/sh\n%s\n", body);
    assert_int_equal (fclose (f), 0);
    assert_int_equal (chmod (path, 0700), 0);
    return path;
}

static void script_done (const char *path)
{
    char dir[64];

    unlink (path);
    snprintf (dir, sizeof (dir), "/tmp/tracer-execs.%d", (int)getpid ());
    rmdir (dir);
}

static pid_t run (const char *path)
{
    pid_t pid = fork ();

    assert_true (pid >= 0);
    if (pid == 0) {
        execl (path, path, (char *)NULL);
        _exit (127);
    }
    return pid;
}

/* Read the listener until pred holds (at most 5 s). */
static bool wait_for (tr_execs_t *e, bool (*pred) (tr_execs_t *, pid_t),
                      pid_t pid)
{
    /* up to 30 s: a busy machine (the suite runs two tests at a time)
     * may keep a child's shell from its next line for seconds
     */
    for (int i = 0; i < 600; i++) {
        struct pollfd p = { .fd = tr_execs_fd (e), .events = POLLIN };
        (void)poll (&p, 1, 50);
        assert_true (tr_execs_read (e) >= 0);
        if (pred (e, pid))
            return true;
    }
    return false;
}

/* When the child of a test was started: what tr_execs_find matches its
 * start against (now would be seconds later on a busy machine)
 */
static int64_t child_ms;

static bool known_as_script (tr_execs_t *e, pid_t pid)
{
    const struct tr_exec_id *x = tr_execs_find (e, pid, child_ms);
    return x && !strcmp (x->tool, "align.sh");
}

static bool renamed (tr_execs_t *e, pid_t pid)
{
    const struct tr_exec_id *x = tr_execs_find (e, pid, child_ms);
    return x && x->renamed[0];
}

static int only (pid_t pid, void *arg)
{
    return pid == *(pid_t *)arg;
}

/* The connector's exec event: the script is named from its arguments
 * (the shell runs align.sh), its executable is the shell's; its start
 * matches within the 2 s an exit record's start is rounded to.
 */
static void test_exec_event (void **state)
{
    char *path = script ("sleep 3");
    pid_t child = 0;
    struct tr_execs_opts o = { .wanted = only, .wanted_arg = &child };
    tr_error_t error;
    tr_execs_t *e = tr_execs_open (&o, &error);
    const struct tr_exec_id *x;
    struct stat sb;
    int st;

    (void)state;
    if (!e)
        fail_msg ("process connector: %s", error.text);
    child_ms = now_ms ();
    child = run (path);
    assert_true (wait_for (e, known_as_script, child));
    x = tr_execs_find (e, child, child_ms);
    assert_non_null (x);
    assert_int_equal (x->pid, child);
    assert_string_equal (x->renamed, "");
    assert_int_equal (stat ("/bin/sh", &sb), 0);
    assert_true (x->exe_ino == (uint64_t)sb.st_ino);
    assert_true (x->exe_dev == (uint64_t)sb.st_dev);
    /* another process of the same pid, a minute later, is not it */
    assert_null (tr_execs_find (e, child, child_ms + 60000));
    assert_null (tr_execs_find (e, child + 100000, child_ms));
    kill (child, SIGKILL);
    waitpid (child, &st, 0);
    tr_execs_close (e);
    script_done (path);
}

/* A process that renames itself after its exec (prctl PR_SET_NAME, or
 * a write to /proc/PID/comm: the kernel says both) keeps the name its
 * exec gave it, the new comm beside; one not wanted is not kept.
 */
static void test_rename_event (void **state)
{
    char *path = script ("printf samtools >/proc/$$/comm\nsleep 3");
    pid_t child = 0, nobody = -1;
    struct tr_execs_opts o = { .wanted = only, .wanted_arg = &child };
    struct tr_execs_opts none = { .wanted = only, .wanted_arg = &nobody };
    tr_error_t error;
    tr_execs_t *e = tr_execs_open (&o, &error), *n = tr_execs_open (&none, &error);
    const struct tr_exec_id *x;
    int st;

    (void)state;
    if (!e || !n)
        fail_msg ("process connector: %s", error.text);
    child_ms = now_ms ();
    child = run (path);
    assert_true (wait_for (e, renamed, child));
    x = tr_execs_find (e, child, child_ms);
    assert_string_equal (x->tool, "align.sh");
    assert_string_equal (x->renamed, "samtools");
    /* a thread naming itself is not the process renaming itself */
    tr_execs_note_comm (e, child + 1, child, "worker-1");
    assert_string_equal (tr_execs_find (e, child, child_ms)->renamed,
                         "samtools");
    assert_true (tr_execs_read (n) >= 0);
    assert_null (tr_execs_find (n, child, child_ms));
    kill (child, SIGKILL);
    waitpid (child, &st, 0);
    tr_execs_close (e);
    tr_execs_close (n);
    script_done (path);
}

/* A message to the listener's socket from another process (any user
 * may send one to a netlink port) is not the kernel's: a forged comm
 * change does not mark a process renamed.
 */
static void test_forged_event (void **state)
{
    char *path = script ("sleep 3");
    pid_t child = 0;
    struct tr_execs_opts o = { .wanted = only, .wanted_arg = &child };
    tr_error_t error;
    tr_execs_t *e = tr_execs_open (&o, &error);
    struct sockaddr_nl me, to = { .nl_family = AF_NETLINK };
    socklen_t len = sizeof (me);
    struct {
        struct nlmsghdr nl;
        struct cn_msg cn;
        struct proc_event ev;
    } __attribute__ ((packed)) msg;
    int fd, st;

    (void)state;
    if (!e)
        fail_msg ("process connector: %s", error.text);
    child_ms = now_ms ();
    child = run (path);
    assert_true (wait_for (e, known_as_script, child));
    assert_int_equal (getsockname (tr_execs_fd (e), (struct sockaddr *)&me,
                                   &len),
                      0);
    to.nl_pid = me.nl_pid;
    memset (&msg, 0, sizeof (msg));
    msg.nl.nlmsg_len = sizeof (msg);
    msg.nl.nlmsg_type = NLMSG_DONE;
    msg.cn.id.idx = CN_IDX_PROC;
    msg.cn.id.val = CN_VAL_PROC;
    msg.cn.len = sizeof (msg.ev);
    msg.ev.what = PROC_EVENT_COMM;
    msg.ev.event_data.comm.process_pid = child;
    msg.ev.event_data.comm.process_tgid = child;
    memcpy (msg.ev.event_data.comm.comm, "forged", 7);
    assert_true ((fd = socket (AF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR))
                 >= 0);
    assert_int_equal (sendto (fd, &msg, sizeof (msg), 0,
                              (struct sockaddr *)&to, sizeof (to)),
                      (ssize_t)sizeof (msg));
    close (fd);
    usleep (100000);
    assert_true (tr_execs_read (e) >= 0);
    assert_string_equal (tr_execs_find (e, child, child_ms)->renamed, "");
    kill (child, SIGKILL);
    waitpid (child, &st, 0);
    tr_execs_close (e);
    script_done (path);
}

/* The process table names a process known only from its exit record
 * (comm "samtools", the name it gave itself) by what it was at its
 * exec, and its culprit entry says what it called itself.
 */
static void test_table_names_from_exec (void **state)
{
    char *path = script ("sleep 0.3\nprintf samtools >/proc/$$/comm\n"
                         "kill -SEGV $$");
    tr_execs_t *e;
    tr_procs_t *p;
    struct tr_procs_opts po;
    struct tr_exit ev;
    tr_error_t error;
    json_t *c, *tools;
    int64_t start = now_ms ();
    pid_t child = 0;
    /* only the child: on a busy machine (the suite runs two tests at a
     * time) other execs would push its entry out of the ring
     */
    struct tr_execs_opts o = { .wanted = only, .wanted_arg = &child };
    int st;

    (void)state;
    if (!(e = tr_execs_open (&o, &error)))
        fail_msg ("process connector: %s", error.text);
    memset (&po, 0, sizeof (po));
    po.exit_names = e;
    assert_non_null (p = tr_procs_create (&po, NULL));
    tr_procs_add_root (p, getpid ());
    child_ms = now_ms ();
    child = run (path);
    assert_true (wait_for (e, renamed, child));
    assert_int_equal (waitpid (child, &st, 0), child);
    assert_true (WIFSIGNALED (st) && WTERMSIG (st) == SIGSEGV);
    (void)tr_execs_read (e);

    memset (&ev, 0, sizeof (ev));
    ev.aggr = TR_EXIT_PID;
    ev.version = 13;
    ev.pid = ev.tgid = child;
    ev.ppid = getpid ();
    snprintf (ev.comm, sizeof (ev.comm), "samtools");
    ev.group_exit = true;
    ev.signaled = true;
    ev.exit_status = st;
    ev.start_unix_ms = ev.group_start_unix_ms = start;
    ev.end_unix_ms = now_ms ();
    ev.cpu_exact = true;
    assert_int_equal (tr_procs_exit (p, &ev), 1);

    assert_non_null (c = tr_procs_culprit_json (p, now_ms ()));
    assert_string_equal (json_string_value (json_object_get (c, "tool")),
                         "align.sh");
    assert_string_equal (
        json_string_value (json_object_get (c, "calls_itself")), "samtools");
    json_decref (c);
    assert_non_null (tools = tr_procs_tools_json (p));
    for (size_t i = 0; i < json_array_size (tools); i++)
        assert_string_not_equal (
            json_string_value (
                json_object_get (json_array_get (tools, i), "name")),
            "samtools");
    json_decref (tools);

    /* an exit record of another executable on the same device is not
     * that exec's process (it exec'd again unseen); on another device
     * (an overlay's layer, as the kernel names it) it may be
     */
    {
        const struct tr_exec_id *x = tr_execs_find (e, child, start);
        struct tr_exit other = ev;
        const char *want[2] = { "samtools", "align.sh" };
        assert_non_null (x);
        for (int k = 0; k < 2; k++) {
            tr_procs_t *q = tr_procs_create (&po, NULL);
            assert_non_null (q);
            tr_procs_add_root (q, getpid ());
            other.exe_dev = x->exe_dev + (uint64_t)k;
            other.exe_ino = x->exe_ino + 1;
            assert_int_equal (tr_procs_exit (q, &other), 1);
            assert_non_null (c = tr_procs_culprit_json (q, now_ms ()));
            assert_string_equal (
                json_string_value (json_object_get (c, "tool")), want[k]);
            json_decref (c);
            tr_procs_destroy (q);
        }
    }

    /* without what the exec said, the comm is all there is */
    tr_procs_destroy (p);
    assert_non_null (p = tr_procs_create (NULL, NULL));
    tr_procs_add_root (p, getpid ());
    assert_int_equal (tr_procs_exit (p, &ev), 1);
    assert_non_null (c = tr_procs_culprit_json (p, now_ms ()));
    assert_string_equal (json_string_value (json_object_get (c, "tool")),
                         "samtools");
    assert_null (json_object_get (c, "calls_itself"));
    json_decref (c);
    tr_procs_destroy (p);
    tr_execs_close (e);
    script_done (path);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_exec_event),
        cmocka_unit_test (test_rename_event),
        cmocka_unit_test (test_forged_event),
        cmocka_unit_test (test_table_names_from_exec),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
