/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for batch: PBS sizes and durations, Resource_List and
 * Torque resource strings, exec_host, qstat's JSON, the LSF job
 * environment, the outcome from PBS/Torque/LSF exit statuses, the
 * identity, request and messages for tracerd, and running a command with
 * a bound (a script written by the test).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "libtracer/node/batch.h"

static void test_sizes (void **state)
{
    static const struct {
        const char *in;
        long long want; /* -1: refused */
    } t[] = {
        { "100mb", 104857600LL },
        { "100MB", 104857600LL },
        { "1024", 1024 },
        { "7b", 7 },
        { "512kb", 524288 },
        { "2gb", 2147483648LL },
        { "1tb", 1099511627776LL },
        { "1kw", 8192 },
        { "3w", 24 },
        { "", -1 },
        { "mb", -1 },
        { "-5mb", -1 },
        { "10xb", -1 },
        { "10mbb", -1 },
        { "99999999999999pb", -1 },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        long long v = -7;
        int rc = tr_batch_pbs_size (t[i].in, &v);
        if (t[i].want < 0) {
            assert_int_equal (rc, -1);
            assert_int_equal (errno, EINVAL);
            assert_int_equal (v, -7);
        }
        else {
            assert_int_equal (rc, 0);
            assert_int_equal (v, t[i].want);
        }
    }
}

static void test_durations (void **state)
{
    static const struct {
        const char *in;
        long long want;
    } t[] = {
        { "00:02:00", 120 }, { "1:00:00", 3600 }, { "90", 90 },
        { "05:30", 330 },    { "48:00:00", 172800 }, { "00:00:01.6", 2 },
        { "", -1 },          { "1:2:3:4", -1 },  { "ab", -1 },
        { "10:", -1 },       { ":10", -1 },      { "1.5.2", -1 },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        long long v = -7;
        int rc = tr_batch_duration (t[i].in, &v);
        assert_int_equal (rc, t[i].want < 0 ? -1 : 0);
        assert_int_equal (v, t[i].want < 0 ? -7 : t[i].want);
    }
}

static void test_resources (void **state)
{
    static const struct {
        const char *list;
        long long cpus, mem, nodes, wall;
    } t[] = {
        /* the epilogue of PBS-FACTS 2.3 */
        { "mem=100mb,ncpus=2,place=free,walltime=00:02:00", 2, 104857600, -1,
          120 },
        { "ncpus=1,place=pack", 1, -1, -1, -1 },
        /* server-side form with select and nodect */
        { "mem=8gb,ncpus=4,nodect=1,select=1:ncpus=4:mem=8gb", 4,
          8589934592LL, 1, -1 },
        /* two hosts of one kind: per-host figures from the chunk */
        { "mem=16gb,ncpus=8,nodect=2,select=2:ncpus=4:mem=8gb,walltime=1:00:00",
          4, 8589934592LL, 2, 3600 },
        /* chunks of several kinds: nothing per host */
        { "ncpus=6,nodect=2,select=1:ncpus=4+1:ncpus=2", -1, -1, 2, -1 },
        /* Torque */
        { "neednodes=1:ppn=2,nodes=1:ppn=2,walltime=00:05:00,mem=200mb", 2,
          209715200, 1, 300 },
        { "nodes=2:ppn=8,walltime=10:00", 8, -1, 2, 600 },
        /* junk is ignored, not fatal */
        { "mem=lots,ncpus=x,walltime=soon,=,,novalue", -1, -1, -1, -1 },
        { "", -1, -1, -1, -1 },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        struct tr_batch_job job;
        tr_batch_job_init (&job, TR_BATCH_PBS);
        tr_batch_pbs_resources (t[i].list, &job);
        assert_int_equal (job.cpus_on_node, t[i].cpus);
        assert_int_equal (job.mem_bytes, t[i].mem);
        assert_int_equal (job.nodes, t[i].nodes);
        assert_int_equal (job.time_limit_s, t[i].wall);
    }
}

static void test_exec_host (void **state)
{
    struct tr_batch_job job;

    (void)state;
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_pbs_exec_host ("n1/0*2+n2/0*4", "n2", &job);
    assert_int_equal (job.cpus_on_node, 4);
    assert_int_equal (job.nodes, 2);
    /* Torque's one-slot form, and a qualified name */
    tr_batch_job_init (&job, TR_BATCH_TORQUE);
    tr_batch_pbs_exec_host ("n1.example.org/0+n1.example.org/1+n3/0", "n1",
                            &job);
    assert_int_equal (job.cpus_on_node, 2);
    assert_int_equal (job.nodes, 2);
    /* another host's job: nothing for us */
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_pbs_exec_host ("n1/0*2", "n10", &job);
    assert_int_equal (job.cpus_on_node, -1);
}

static void test_exec_vnode (void **state)
{
    struct tr_batch_job job;

    (void)state;
    /* what a real mom's hooks see at execjob_begin, exec_host unset */
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_pbs_exec_vnode ("(pbshost:ncpus=2:mem=204800kb)", "pbshost",
                             &job);
    assert_int_equal (job.nodes, 1);
    assert_int_equal (job.cpus_on_node, 2);
    assert_int_equal (job.mem_bytes, 204800LL * 1024);
    /* two chunks on two hosts, a chunk over two vnodes of one host */
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_pbs_exec_vnode ("(n1[0]:ncpus=1+n1[1]:ncpus=3)+(n2:ncpus=4)",
                             "n1", &job);
    assert_int_equal (job.nodes, 2);
    assert_int_equal (job.cpus_on_node, 4);
    assert_int_equal (job.mem_bytes, -1);
    /* two chunks packed on one host */
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_pbs_exec_vnode ("(n1:ncpus=1)+(n1:ncpus=1)", "n1", &job);
    assert_int_equal (job.nodes, 1);
    assert_int_equal (job.cpus_on_node, 2);
    /* not this host's; n10 is not n1 */
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_pbs_exec_vnode ("(n10:ncpus=2)", "n1", &job);
    assert_int_equal (job.nodes, 1);
    assert_int_equal (job.cpus_on_node, -1);
    /* nothing to say */
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_pbs_exec_vnode ("", "n1", &job);
    tr_batch_pbs_exec_vnode (NULL, "n1", &job);
    assert_int_equal (job.nodes, -1);
}

static void test_pbs_node (void **state)
{
    char dir[] = "/tmp/test_batch.XXXXXX", path[64], name[64];
    FILE *f;

    (void)state;
    assert_non_null (mkdtemp (dir));
    snprintf (path, sizeof (path), "%s/pbs.conf", dir);
    assert_non_null (f = fopen (path, "w"));
    fputs ("PBS_EXEC=/opt/pbs\nPBS_MOM_NODE_NAME=pbshost\n"
           "PBS_START_MOM=1\n", f);
    fclose (f);
    assert_int_equal (chmod (path, 0644), 0);
    assert_int_equal (tr_batch_pbs_node (NULL, path, name, sizeof (name)), 0);
    assert_string_equal (name, "pbshost");
    /* the environment first, as pbs_loadconf has it */
    assert_int_equal (tr_batch_pbs_node ("n7", path, name, sizeof (name)), 0);
    assert_string_equal (name, "n7");
    assert_int_equal (tr_batch_pbs_node ("", path, name, sizeof (name)), 0);
    assert_string_equal (name, "pbshost");
    /* not a name a record may carry */
    assert_int_equal (tr_batch_pbs_node ("../x", path, name, sizeof (name)),
                      -1);
    /* a file others may write is not read */
    assert_int_equal (chmod (path, 0666), 0);
    assert_int_equal (tr_batch_pbs_node (NULL, path, name, sizeof (name)), -1);
    assert_int_equal (errno, EPERM);
    assert_int_equal (chmod (path, 0644), 0);
    /* no such line, no such file */
    assert_non_null (f = fopen (path, "w"));
    fputs ("PBS_EXEC=/opt/pbs\nPBS_MOM_NODE_NAME=\n", f);
    fclose (f);
    assert_int_equal (tr_batch_pbs_node (NULL, path, name, sizeof (name)), -1);
    unlink (path);
    assert_int_equal (tr_batch_pbs_node (NULL, path, name, sizeof (name)), -1);
    rmdir (dir);
}

static void test_conf_trusted (void **state)
{
    char dir[] = "/tmp/test_batch.XXXXXX", path[64];
    tr_error_t error;
    FILE *f;

    (void)state;
    assert_non_null (mkdtemp (dir));
    snprintf (path, sizeof (path), "%s/tracer.yaml", dir);
    assert_non_null (f = fopen (path, "w"));
    fputs ("secret-first-line: 1\n", f);
    fclose (f);
    assert_int_equal (chmod (path, 0600), 0);
    assert_int_equal (tr_batch_conf_trusted (path, geteuid (), &error), 0);
    assert_int_equal (chmod (path, 0620), 0);
    assert_int_equal (tr_batch_conf_trusted (path, geteuid (), &error), -1);
    assert_non_null (strstr (error.text, "writable by others"));
    assert_null (strstr (error.text, "secret"));
    assert_int_equal (chmod (path, 0600), 0);
    /* owned by someone else than root or the caller */
    if (geteuid () == 0) {
        assert_int_equal (chown (path, 4242, 4242), 0);
        assert_int_equal (tr_batch_conf_trusted (path, 0, &error), -1);
        assert_non_null (strstr (error.text, "not owned by root"));
        assert_null (strstr (error.text, "secret"));
    }
    unlink (path);
    /* missing: the loader says so */
    assert_int_equal (tr_batch_conf_trusted (path, geteuid (), &error), 0);
    rmdir (dir);
}

static void test_job_ids (void **state)
{
    struct tr_batch_job job;
    char big[300];

    (void)state;
    tr_batch_job_init (&job, TR_BATCH_PBS);
    assert_int_equal (tr_batch_set_job_id (&job, "7[3].srv"), 0);
    assert_string_equal (job.array_job_id, "7[].srv");
    assert_int_equal (job.array_task_id, 3);
    tr_batch_job_init (&job, TR_BATCH_PBS);
    assert_int_equal (tr_batch_set_job_id (&job, "12.srv"), 0);
    assert_string_equal (job.array_job_id, "");
    assert_int_equal (job.array_task_id, -1);
    assert_int_equal (tr_batch_set_job_id (&job, ""), -1);
    memset (big, '1', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    assert_int_equal (tr_batch_set_job_id (&job, big), -1);
}

static void test_qstat (void **state)
{
    static const char out[]
        = "{\"timestamp\":1700000000,\"pbs_version\":\"23.06.06\","
          "\"pbs_server\":\"pbshost\",\"Jobs\":{\"2.pbshost\":{"
          "\"Job_Name\":\"pe2\",\"Job_Owner\":\"pbsuser@pbshost\","
          "\"job_state\":\"R\",\"queue\":\"workq\","
          "\"Account_Name\":\"myacct\",\"euser\":\"pbsuser\","
          "\"egroup\":\"pbsuser\",\"exec_host\":\"pbshost/0*2\","
          "\"Resource_List\":{\"mem\":\"100mb\",\"ncpus\":2,\"nodect\":1,"
          "\"place\":\"free\",\"select\":\"1:ncpus=2:mem=100mb\","
          "\"walltime\":\"00:02:00\"},\"session_id\":19451}}}";
    struct tr_batch_job job;
    tr_error_t error;

    (void)state;
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_set_job_id (&job, "2.pbshost");
    assert_int_equal (tr_batch_pbs_qstat (out, "pbshost", &job, &error), 0);
    assert_string_equal (job.job_name, "pe2");
    assert_string_equal (job.queue, "workq");
    assert_string_equal (job.account, "myacct");
    assert_string_equal (job.user, "pbsuser");
    assert_int_equal (job.session, 19451);
    assert_int_equal (job.cpus_on_node, 2);
    assert_int_equal (job.mem_bytes, 104857600);
    assert_int_equal (job.time_limit_s, 120);
    assert_int_equal (job.nodes, 1);
    /* not JSON; JSON about another job */
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_set_job_id (&job, "3.pbshost");
    assert_int_equal (tr_batch_pbs_qstat ("qstat: Unknown Job Id", "h", &job,
                                          &error), -1);
    assert_int_equal (tr_batch_pbs_qstat ("{\"Jobs\":{}}", "h", &job, &error),
                      -1);
    assert_non_null (strstr (error.text, "3.pbshost"));
}

struct envtab {
    const char *const *kv; /* NAME, VALUE, ..., NULL */
};

static const char *tab_get (const char *name, void *arg)
{
    const struct envtab *t = arg;
    for (size_t i = 0; t->kv[i]; i += 2)
        if (!strcmp (t->kv[i], name))
            return t->kv[i + 1];
    return NULL;
}

static void test_lsf_env (void **state)
{
    static const char *const kv[] = {
        "LSB_JOBID", "42", "LSB_JOBINDEX", "3",
        "LSB_JOBNAME", "arr[1-4]", "LSB_QUEUE", "normal",
        "LSB_PROJECT_NAME", "proj", "LSFUSER", "alice", "USER", "root",
        "LSB_MCPU_HOSTS", "hostA 4 hostB 2 hostA.x 1",
        "LSB_EFFECTIVE_RSRCREQ",
        "select[type == local] order[r15s:pg] rusage[mem=200.00] "
        "span[hosts=1]",
        "LSB_JOBEXIT_STAT", "768", "LSB_JOBEXIT_INFO", "", NULL,
    };
    static const char *const bad[] = { "LSB_JOBID", "42; rm -rf /", NULL };
    struct envtab t = { kv }, tb = { bad };
    struct tr_batch_job job;
    tr_error_t error;
    char buf[300];
    json_t *o;

    (void)state;
    tr_batch_job_init (&job, TR_BATCH_LSF);
    assert_int_equal (tr_batch_lsf_env (tab_get, &t, "hostA", 1LL << 20, &job,
                                        &error), 0);
    assert_string_equal (job.job_id, "42[3]");
    assert_string_equal (job.array_job_id, "42");
    assert_int_equal (job.array_task_id, 3);
    assert_string_equal (job.user, "alice");
    assert_string_equal (job.account, "proj");
    assert_int_equal (job.cpus_on_node, 5);
    assert_int_equal (job.nodes, 3);
    assert_int_equal (job.mem_bytes, 200LL << 20);
    assert_true (job.have_exit);
    assert_int_equal (tr_batch_env_match (&job, buf, sizeof (buf)), 0);
    assert_string_equal (buf, "LSB_JOBID=42\nLSB_JOBINDEX=3");
    assert_int_equal (tr_batch_cgroup_name (&job, buf, sizeof (buf)), 0);
    assert_string_equal (buf, "job.42[3]");
    /* wait status 768: exit 3 */
    o = tr_batch_outcome (&job);
    assert_string_equal (json_string_value (json_object_get (o, "state")),
                         "failed");
    assert_int_equal (json_integer_value (json_object_get (o, "exit_code")), 3);
    json_decref (o);
    tr_batch_job_init (&job, TR_BATCH_LSF);
    assert_int_equal (tr_batch_lsf_env (tab_get, &tb, "h", 1LL << 20, &job,
                                        &error), -1);
    assert_non_null (strstr (error.text, "LSB_JOBID"));
}

/* What OpenLava's sbatchd sets: no LSB_BATCH_JID, the raw -R text (or
 * none), LSB_HOSTS with one word per slot; a job that is no array
 * element is found by LSB_JOBID alone.
 */
static void test_openlava_env (void **state)
{
    static const char *const kv[] = {
        "LSB_JOBID", "209", "LSB_JOBINDEX", "0", "LSB_QUEUE", "normal",
        "LSFUSER", "alice", "LSB_HOSTS", "hostA hostA hostA hostB",
        "LSB_EFFECTIVE_RSRCREQ", "select[mem>100]", NULL,
    };
    static const char *const arr[] = {
        "LSB_JOBID", "209", "LSB_JOBINDEX", "1", "LSFUSER", "alice",
        "LSB_HOSTS", "hostB", NULL,
    };
    struct envtab t = { kv }, ta = { arr };
    struct tr_batch_job job;
    tr_error_t error;
    char buf[300];

    (void)state;
    tr_batch_job_init (&job, TR_BATCH_LSF);
    assert_int_equal (tr_batch_lsf_env (tab_get, &t, "hostA", 1LL << 20, &job,
                                        &error), 0);
    assert_string_equal (job.job_id, "209");
    assert_int_equal (job.array_task_id, -1);
    assert_int_equal (job.cpus_on_node, 3);
    assert_int_equal (job.nodes, 2);
    assert_int_equal (job.mem_bytes, -1);
    assert_int_equal (tr_batch_env_match (&job, buf, sizeof (buf)), 0);
    assert_string_equal (buf, "LSB_JOBID=209");
    tr_batch_job_init (&job, TR_BATCH_LSF);
    assert_int_equal (tr_batch_lsf_env (tab_get, &ta, "hostB", 1LL << 20,
                                        &job, &error), 0);
    assert_string_equal (job.job_id, "209[1]");
    assert_int_equal (job.cpus_on_node, 1);
    assert_int_equal (tr_batch_env_match (&job, buf, sizeof (buf)), 0);
    assert_string_equal (buf, "LSB_JOBID=209\nLSB_JOBINDEX=1");
}

static void test_outcomes (void **state)
{
    static const struct {
        enum tr_batch_kind kind;
        long long status;
        const char *info;
        const char *state;
        int exit_code, sig; /* -1: absent */
        const char *reason; /* substring, or NULL: no reason */
    } t[] = {
        { TR_BATCH_PBS, 0, "", "completed", 0, -1, NULL },
        { TR_BATCH_PBS, 3, "", "failed", 3, -1, NULL },
        { TR_BATCH_PBS, 271, "", "cancelled", -1, 15, "signal 15" },
        { TR_BATCH_PBS, 267, "", "failed", -1, 11, "signal 11" },
        { TR_BATCH_PBS, -29, "", "timeout", -1, -1, "WALLTIME" },
        { TR_BATCH_PBS, -27, "", "oom", -1, -1, "KILL_MEM" },
        { TR_BATCH_PBS, -2, "", "failed", -1, -1, "FAIL2" },
        { TR_BATCH_PBS, -99, "", "failed", -1, -1, "PBS exit status -99" },
        { TR_BATCH_TORQUE, -11, "", "timeout", -1, -1, "OVERLIMIT_WT" },
        { TR_BATCH_TORQUE, -10, "", "oom", -1, -1, "OVERLIMIT_MEM" },
        { TR_BATCH_LSF, 0, "", "completed", 0, -1, NULL },
        { TR_BATCH_LSF, 9, "SIGNAL -14 SIG_TERM_USER", "cancelled", -1, 9,
          "SIG_TERM_USER" },
        { TR_BATCH_LSF, 15, "SIGNAL -25 SIG_TERM_RUNLIMIT", "timeout", -1,
          15, "RUNLIMIT" },
        { TR_BATCH_LSF, 9, "SIGNAL -22 SIG_TERM_MEMLIMIT", "oom", -1, 9,
          "MEMLIMIT" },
        /* OpenLava: no LSB_JOBEXIT_INFO; bkill's SIGINT, SIGTERM */
        { TR_BATCH_LSF, 130 << 8, "", "cancelled", 130, -1, "SIGINT" },
        { TR_BATCH_LSF, 2, "", "cancelled", -1, 2, "bkill" },
        { TR_BATCH_LSF, 143 << 8, "", "cancelled", 143, -1, "SIGTERM" },
        { TR_BATCH_LSF, 15, "", "cancelled", -1, 15, "SIGTERM" },
        { TR_BATCH_LSF, 9, "", "failed", -1, 9, NULL },
        { TR_BATCH_LSF, 1 << 8, "", "failed", 1, -1, NULL },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        struct tr_batch_job job;
        const char *reason;
        json_t *o, *v;
        tr_batch_job_init (&job, t[i].kind);
        job.have_exit = true;
        job.exit_status = t[i].status;
        snprintf (job.exit_info, sizeof (job.exit_info), "%s", t[i].info);
        assert_non_null (o = tr_batch_outcome (&job));
        assert_string_equal (json_string_value (json_object_get (o, "state")),
                             t[i].state);
        v = json_object_get (o, "exit_code");
        if (t[i].exit_code < 0)
            assert_null (v);
        else
            assert_int_equal (json_integer_value (v), t[i].exit_code);
        v = json_object_get (o, "signal");
        if (t[i].sig < 0)
            assert_null (v);
        else
            assert_int_equal (json_integer_value (v), t[i].sig);
        reason = json_string_value (json_object_get (o, "reason"));
        if (!t[i].reason)
            assert_null (reason);
        else
            assert_non_null (strstr (reason, t[i].reason));
        json_decref (o);
    }
    {
        struct tr_batch_job job;
        tr_batch_job_init (&job, TR_BATCH_PBS);
        assert_null (tr_batch_outcome (&job));
    }
}

static void test_messages (void **state)
{
    struct tr_batch_job job;
    tr_error_t error;
    json_t *m, *id, *at;

    (void)state;
    tr_batch_job_init (&job, TR_BATCH_PBS);
    tr_batch_set_job_id (&job, "7.srv");
    snprintf (job.user, sizeof (job.user), "root");
    snprintf (job.group, sizeof (job.group), "root");
    snprintf (job.account, sizeof (job.account), "null");
    snprintf (job.queue, sizeof (job.queue), "workq");
    job.session = 4242;
    job.cpus_on_node = 2;
    assert_non_null (m = tr_batch_start_msg (&job, "node1", 0, &error));
    assert_string_equal (json_string_value (json_object_get (m, "op")),
                         "step_start");
    id = json_object_get (m, "identity");
    assert_string_equal (json_string_value (json_object_get (id, "scheduler")),
                         "pbs");
    assert_string_equal (json_string_value (json_object_get (id, "step_id")),
                         "0");
    assert_int_equal (json_integer_value (json_object_get (id, "uid")), 0);
    /* PBS's literal "null" is no account */
    assert_null (json_object_get (id, "account"));
    assert_string_equal (json_string_value (json_object_get (id, "partition")),
                         "workq");
    at = json_object_get (m, "attach");
    assert_string_equal (json_string_value (json_object_get (at, "env")),
                         "PBS_JOBID=7.srv");
    assert_string_equal (json_string_value (json_object_get (at,
                                                             "cgroup_name")),
                         "7.srv");
    assert_int_equal (json_integer_value (json_object_get (at, "session")),
                      4242);
    /* our own processes in the job's session */
    assert_null (json_object_get (at, "exclude"));
    assert_int_equal (tr_batch_exclude (m, 4243), 0);
    assert_int_equal (tr_batch_exclude (m, 4244), 0);
    assert_int_equal (tr_batch_exclude (m, 1), -1);
    assert_int_equal (json_array_size (json_object_get (at, "exclude")), 2);
    assert_int_equal (json_integer_value (json_array_get (
                          json_object_get (at, "exclude"), 1)),
                      4244);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (
                                              m, "request"),
                                                           "cpus_on_node")),
                      2);
    json_decref (m);
    job.have_exit = true;
    job.exit_status = 0;
    assert_non_null (m = tr_batch_end_msg (&job, "node1", &error));
    assert_string_equal (json_string_value (json_object_get (
                             json_object_get (m, "outcome"), "state")),
                         "completed");
    json_decref (m);
    /* a user the host does not know: refused with a message */
    snprintf (job.user, sizeof (job.user), "no-such-user-here");
    assert_null (tr_batch_start_msg (&job, "node1", 0, &error));
    assert_non_null (strstr (error.text, "no-such-user-here"));
}

/* A script the test writes, run without a shell by tr_batch_run. */
static char script[64];

static int make_script (const char *body)
{
    FILE *f;
    int fd;

    snprintf (script, sizeof (script), "/tmp/test_batch.XXXXXX");
    if ((fd = mkstemp (script)) < 0 || !(f = fdopen (fd, "w")))
        return -1;
    fprintf (f, "#!/bin/sh\n%s\n", body);
    fclose (f);
    return chmod (script, 0700);
}

static void test_run (void **state)
{
    char out[16];
    char *env[] = { (char *)"PATH=/bin:/usr/bin", NULL };
    char *argv[] = { script, (char *)"a b", NULL };
    tr_error_t error;

    (void)state;
    /* arguments arrive as they are; output is cut to the buffer */
    assert_int_equal (make_script ("printf '%s|%s' \"$1\" \"$PATH\""), 0);
    assert_int_equal (tr_batch_run (argv, env, 5000, out, sizeof (out),
                                    &error), 0);
    assert_string_equal (out, "a b|/bin:/usr/b");
    unlink (script);
    /* a failing command */
    assert_int_equal (make_script ("exit 3"), 0);
    assert_int_equal (tr_batch_run (argv, env, 5000, out, sizeof (out),
                                    &error), -1);
    assert_non_null (strstr (error.text, "failed"));
    unlink (script);
    /* a hanging one is killed at the bound */
    assert_int_equal (make_script ("exec sleep 30"), 0);
    assert_int_equal (tr_batch_run (argv, env, 200, out, sizeof (out),
                                    &error), -1);
    assert_int_equal (errno, ETIMEDOUT);
    unlink (script);
    /* no shell: a relative name is refused */
    argv[0] = (char *)"qstat";
    assert_int_equal (tr_batch_run (argv, env, 200, out, sizeof (out),
                                    &error), -1);
    argv[0] = script;
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_sizes),
        cmocka_unit_test (test_durations),
        cmocka_unit_test (test_resources),
        cmocka_unit_test (test_exec_host),
        cmocka_unit_test (test_exec_vnode),
        cmocka_unit_test (test_pbs_node),
        cmocka_unit_test (test_conf_trusted),
        cmocka_unit_test (test_job_ids),
        cmocka_unit_test (test_qstat),
        cmocka_unit_test (test_lsf_env),
        cmocka_unit_test (test_openlava_env),
        cmocka_unit_test (test_outcomes),
        cmocka_unit_test (test_messages),
        cmocka_unit_test (test_run),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
