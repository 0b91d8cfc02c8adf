/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for record format v1: skeleton, validation (a table of
 * mutations of one full record, each with its exact message), parsing
 * limits, loading without following symlinks or blocking on FIFOs, the
 * canonical serialization, a golden record file, and an allocation
 * failure sweep.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/record/record.h"
#include "libtracer/util/strbuf.h"

#define FIXTURES TEST_SRCDIR "/fixtures/records"

/* Set a member of obj, failing the test on error. */
static void set (json_t *obj, const char *key, json_t *value)
{
    assert_non_null (value);
    assert_int_equal (json_object_set_new (obj, key, value), 0);
}

/* A record with every member, optional ones included, and reals that
 * do not survive a round trip through a naive printf ("%g").
 */
static json_t *make_record (void)
{
    json_t *rec = tr_record_create ("final");
    json_t *v;

    assert_non_null (rec);
    set (rec, "identity",
         json_pack ("{s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:i,"
                    " s:s, s:I, s:I, s:s, s:s, s:s}",
                    "scheduler", "slurm", "cluster", "hpc1", "job_id", "4242",
                    "array_job_id", "4240", "array_task_id", 2, "step_id", "0",
                    "step_name", "bwa", "job_name",
                    "align \xc3\xa9"
                    "chantillon",
                    "node", "node-01", "node_index", 0, "user", "alice", "uid",
                    (json_int_t)1000, "gid", (json_int_t)1000, "account",
                    "genomics", "partition", "cpu", "qos", "normal"));
    set (rec, "request",
         json_pack ("{s:i, s:i, s:i, s:i, s:i, s:s, s:I, s:I, s:s}", "nodes", 1,
                    "tasks", 4, "tasks_on_node", 4, "cpus_per_task", 2,
                    "cpus_on_node", 8, "cores", "0-3,8-11", "mem_bytes",
                    (json_int_t)8589934592LL, "time_limit_s", (json_int_t)3600,
                    "gpus", "gpu:a100:1"));
    set (rec, "host",
         json_pack ("{s:s, s:s, s:i, s:I, s:s}", "hostname",
                    "node-01.example.org", "kernel", "6.1.0-18-amd64",
                    "cpus_online", 16, "mem_total_bytes",
                    (json_int_t)68719476736LL, "cgroup_mode", "hybrid"));
    set (rec, "cgroup",
         json_pack ("{s:s, s:s, s:{s:s, s:s}}", "attach", "cgroup", "version",
                    "v1", "paths", "memory", "/slurm/uid_1000/job_4242/step_0",
                    "cpu,cpuacct", "/slurm/uid_1000/job_4242/step_0"));
    set (rec, "time",
         json_pack ("{s:I, s:I, s:f}", "start_unix_ms",
                    (json_int_t)1767225600000LL, "end_unix_ms",
                    (json_int_t)1767225723456LL, "elapsed_s", 123.456));
    set (rec, "summary",
         json_pack ("{s:i, s:{s:f, s:f, s:f, s:s, s:b},"
                    " s:{s:I, s:I, s:I, s:s, s:b, s:s}, s:f}",
                    "samples", 25, "cpu", "user_s", 0.1, "system_s", 1e-7,
                    "total_s", 123456.789, "source", "cgroup-v1:cpuacct.usage",
                    "exact", 1, "memory", "peak_bytes",
                    (json_int_t)1073741824LL, "current_bytes", (json_int_t)0,
                    "limit_bytes", (json_int_t)8589934592LL, "source",
                    "cgroup-v1:memory.max_usage_in_bytes", "exact", 1,
                    "definition",
                    "cgroup-charged: anonymous + page cache + kernel memory"
                    " charged to the step cgroup",
                    "x_psi_some_avg10", 0.25));
    set (rec, "tools",
         json_pack ("[{s:s, s:i, s:f, s:I, s:I, s:I, s:I, s:I,"
                    " s:{s:i, s:i}}, {s:s, s:i}]",
                    "name", "bwa", "count", 3, "cpu_s", 98.5, "peak_rss_bytes",
                    (json_int_t)734003200, "read_bytes", (json_int_t)1048576,
                    "write_bytes", (json_int_t)4096, "first_start_unix_ms",
                    (json_int_t)1767225600100LL, "last_end_unix_ms",
                    (json_int_t)1767225723000LL, "exit_codes", "0", 2, "1", 1,
                    "name", "samtools", "count", 1));
    set (rec, "series",
         json_pack ("{s:f, s:[f, f, f], s:{s:{s:[f, f, f], s:[f, f, f],"
                    " s:[i, i, i]}}}",
                    "interval_s", 5.0, "t_s", 0.0, 5.0, 10.0, "metrics",
                    "cpu_cores", "min", 0.0, 1.5, 3.25, "mean", 0.5, 2.0, 3.5,
                    "max", 1, 3, 4));
    set (rec, "tags", json_pack ("{s:s, s:s}", "project", "p-17", "run", "3"));
    set (rec, "outcome",
         json_pack ("{s:s, s:b, s:i, s:i, s:s, s:[{s:i, s:i, s:i, s:i,"
                    " s:i, s:b}, {s:i, s:i}]}",
                    "state", "completed", "complete", 1, "exit_code", 0,
                    "signal", 0, "reason", "all tasks exited", "tasks",
                    "task_id", 0, "pid", 31337, "wait_status", 0, "exit_code",
                    0, "signal", 0, "oom_killed", 0, "task_id", 1, "pid",
                    31338));
    set (rec, "collector",
         json_pack ("{s:s, s:s, s:f}", "name", "tracerd", "version", "0.1.0",
                    "interval_s", 5.0));
    v = json_pack ("{s:s, s:s, s:s}", "scheme", "munge-sha256", "digest",
                   "0123456789abcdef0123456789abcdef"
                   "0123456789abcdef0123456789abcdef",
                   "credential", "MUNGE:AwQFAACtest:");
    set (rec, "signature", v);
    return rec;
}

/* The tests' error-text check: errno, message, and nothing else. */
static void assert_error (int rc,
                          int want_errno,
                          const tr_error_t *err,
                          const char *want)
{
    assert_int_equal (rc, -1);
    assert_int_equal (errno, want_errno);
    assert_string_equal (err->text, want);
}

static void test_id_is_safe (void **state)
{
    static const struct {
        const char *id;
        bool safe;
    } cases[] = {
        { "4242", true },
        { "4240_[1-3]", true },
        { "0+1", true },
        { "batch", true },
        { "node-01.example", true },
        { "a_b", true },
        { "", false },
        { ".", false },
        { "..", false },
        { ".hidden", false },
        { "../x", false },
        { "a/b", false },
        { "a b", false },
        { "a\nb", false },
        { "caf\xc3\xa9", false },
        { "$HOME", false },
    };
    char long_id[130];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        if (tr_record_id_is_safe (cases[i].id) != cases[i].safe)
            fail_msg ("id '%s': expected %s", cases[i].id,
                      cases[i].safe ? "safe" : "unsafe");
    }
    assert_false (tr_record_id_is_safe (NULL));
    memset (long_id, 'a', sizeof (long_id));
    long_id[128] = '\0';
    assert_true (tr_record_id_is_safe (long_id));
    long_id[128] = 'a';
    long_id[129] = '\0';
    assert_false (tr_record_id_is_safe (long_id));
}

static void test_create (void **state)
{
    static const char *const sections[] = {
        "identity", "request", "host", "cgroup",  "time",      "summary",
        "tools",    "series",  "tags", "outcome", "collector",
    };
    tr_error_t err;
    json_t *rec;
    size_t i;

    (void)state;
    rec = tr_record_create ("snapshot");
    assert_non_null (rec);
    assert_string_equal (tr_record_get_str (rec, NULL, "format"), "tracer-"
                                                                  "record");
    assert_int_equal (json_integer_value (json_object_get (rec, "version")), 1);
    assert_string_equal (tr_record_get_str (rec, NULL, "kind"), "snapshot");
    for (i = 0; i < sizeof (sections) / sizeof (sections[0]); i++)
        assert_non_null (json_object_get (rec, sections[i]));
    assert_null (json_object_get (rec, "signature"));
    /* Sections with no required member are valid from the start. */
    assert_int_equal (tr_record_validate_section ("request",
                                                  json_object_get (rec, "reques"
                                                                        "t"),
                                                  NULL),
                      0);
    assert_int_equal (tr_record_validate_section ("tags",
                                                  json_object_get (rec, "tags"),
                                                  NULL),
                      0);
    assert_int_equal (tr_record_validate_section ("tools",
                                                  json_object_get (rec, "tool"
                                                                        "s"),
                                                  NULL),
                      0);
    assert_int_equal (tr_record_validate_section ("outcome",
                                                  json_object_get (rec, "outcom"
                                                                        "e"),
                                                  NULL),
                      0);
    /* The skeleton as a whole is not a record until it is filled. */
    errno = 0;
    assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                  "identity.scheduler: missing required member");
    json_decref (rec);

    errno = 0;
    assert_null (tr_record_create ("partial"));
    assert_int_equal (errno, EINVAL);
    assert_null (tr_record_create (NULL));
}

static void test_valid_record (void **state)
{
    static const char *const sections[] = {
        "identity", "request", "tags",   "host",    "cgroup",    "time",
        "summary",  "tools",   "series", "outcome", "collector", "signature",
    };
    tr_error_t err;
    json_t *rec = make_record ();
    size_t i;

    (void)state;
    if (tr_record_validate (rec, &err) < 0)
        fail_msg ("valid record refused: %s", err.text);
    for (i = 0; i < sizeof (sections) / sizeof (sections[0]); i++) {
        if (tr_record_validate_section (sections[i],
                                        json_object_get (rec, sections[i]),
                                        &err)
            < 0)
            fail_msg ("section %s refused: %s", sections[i], err.text);
    }
    assert_error (tr_record_validate_section ("bogus", rec, &err), EINVAL, &err,
                  "unknown section 'bogus'");
    assert_error (tr_record_validate_section ("format", rec, &err), EINVAL,
                  &err, "unknown section 'format'");
    assert_error (tr_record_validate_section ("identity",
                                              json_object_get (rec, "tags"),
                                              &err),
                  EINVAL, &err, "identity.scheduler: missing required member");

    /* Sections validate on their own, with the section name as path. */
    assert_error (tr_record_validate_section ("tags",
                                              json_object_get (rec, "kind"),
                                              &err),
                  EINVAL, &err, "tags: expected an object");
    assert_error (tr_record_validate_section ("tags", NULL, &err), EINVAL, &err,
                  "tags: missing");

    assert_string_equal (tr_record_get_str (rec, "identity", "job_id"), "4242");
    assert_null (tr_record_get_str (rec, "identity", "uid"));
    assert_null (tr_record_get_str (rec, "nosuch", "job_id"));
    assert_null (tr_record_get_str (NULL, "identity", "job_id"));

    /* A snapshot needs no end time, a final record does. */
    assert_int_equal (json_object_del (json_object_get (rec, "time"), "end_"
                                                                      "unix_"
                                                                      "ms"),
                      0);
    assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                  "time.end_unix_ms: required when kind is 'final'");
    set (rec, "kind", json_string ("snapshot"));
    assert_int_equal (tr_record_validate (rec, &err), 0);

    /* Integers are accepted where numbers are expected. */
    set (json_object_get (json_object_get (rec, "summary"), "cpu"), "user_s",
         json_integer (7));
    assert_int_equal (tr_record_validate (rec, &err), 0);

    /* The signature is optional. */
    assert_int_equal (json_object_del (rec, "signature"), 0);
    assert_int_equal (tr_record_validate (rec, &err), 0);

    /* Each attach mode with the hierarchy it implies. */
    set (rec, "cgroup",
         json_pack ("{s:s, s:s, s:{s:s}}", "attach", "cgroup2-delegated",
                    "version", "v2", "paths", "unified",
                    "/user.slice/user-1000.slice/tracer-run.77"));
    if (tr_record_validate (rec, &err) < 0)
        fail_msg ("delegated cgroup2 refused: %s", err.text);
    set (rec, "cgroup", json_pack ("{s:s}", "attach", "process-tree"));
    if (tr_record_validate (rec, &err) < 0)
        fail_msg ("process tree refused: %s", err.text);
    json_decref (rec);
}

/* Follow "a.b[2].c" to the member named by the last component and
 * replace it (value != NULL, stolen) or delete it.
 */
static void mutate (json_t *rec, const char *path, json_t *value)
{
    const char *p = path;
    json_t *cur = rec;

    for (;;) {
        char name[128] = "";
        long idx = -1;

        if (*p == '[') {
            char *end;
            idx = strtol (p + 1, &end, 10);
            assert_true (*end == ']');
            p = end + 1;
        }
        else {
            size_t n = strcspn (p, ".[");
            assert_true (n > 0 && n < sizeof (name));
            memcpy (name, p, n);
            name[n] = '\0';
            p += n;
        }
        if (*p == '.')
            p++;
        if (*p == '\0') {
            if (idx >= 0 && value)
                assert_int_equal (json_array_set_new (cur, (size_t)idx, value),
                                  0);
            else if (idx >= 0)
                assert_int_equal (json_array_remove (cur, (size_t)idx), 0);
            else if (value)
                assert_int_equal (json_object_set_new (cur, name, value), 0);
            else if (json_object_del (cur, name) < 0)
                fail_msg ("%s: nothing to delete", path);
            return;
        }
        cur = idx >= 0 ? json_array_get (cur, (size_t)idx)
                       : json_object_get (cur, name);
        if (!cur)
            fail_msg ("%s: no such member", path);
    }
}

/* Every required member, deleted in turn. */
static void test_missing_members (void **state)
{
    static const char *const required[] = {
        "format",
        "version",
        "kind",
        "identity",
        "request",
        "host",
        "cgroup",
        "time",
        "summary",
        "tools",
        "series",
        "tags",
        "outcome",
        "collector",
        "identity.scheduler",
        "identity.cluster",
        "identity.job_id",
        "identity.step_id",
        "identity.node",
        "identity.uid",
        "host.hostname",
        "cgroup.attach",
        "time.start_unix_ms",
        "summary.samples",
        "summary.cpu",
        "summary.memory",
        "summary.cpu.user_s",
        "summary.cpu.system_s",
        "summary.cpu.total_s",
        "summary.cpu.source",
        "summary.cpu.exact",
        "summary.memory.peak_bytes",
        "summary.memory.source",
        "summary.memory.exact",
        "summary.memory.definition",
        "tools[0].name",
        "tools[0].count",
        "series.interval_s",
        "series.t_s",
        "series.metrics",
        "series.metrics.cpu_cores.min",
        "series.metrics.cpu_cores.mean",
        "series.metrics.cpu_cores.max",
        "outcome.state",
        "outcome.complete",
        "outcome.tasks",
        "outcome.tasks[1].task_id",
        "outcome.tasks[1].pid",
        "collector.name",
        "collector.version",
        "signature.scheme",
        "signature.digest",
        "signature.credential",
    };
    char want[256];
    tr_error_t err;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof (required) / sizeof (required[0]); i++) {
        json_t *rec = make_record ();

        mutate (rec, required[i], NULL);
        snprintf (want, sizeof (want), "%s: missing required member",
                  required[i]);
        errno = 0;
        if (tr_record_validate (rec, &err) == 0)
            fail_msg ("%s: deleting it was accepted", required[i]);
        assert_int_equal (errno, EINVAL);
        if (strcmp (err.text, want) != 0)
            fail_msg ("%s: got '%s'", required[i], err.text);
        json_decref (rec);
    }
}

/* Each case replaces one member with a value (JSON text; NULL deletes)
 * and expects exactly this message.
 */
static const struct mutation {
    const char *path;
    const char *value;
    const char *expect;
} mutations[] = {
    /* top level */
    { "format", "\"other-record\"", "format: expected 'tracer-record'" },
    { "format", "1", "format: expected a string" },
    { "version", "2", "version: unsupported version 2 (expected 1)" },
    { "version", "\"1\"", "version: expected an integer" },
    { "version", "1.0", "version: expected an integer" },
    { "kind", "\"partial\"", "kind: unknown value 'partial'" },
    { "identity", "[]", "identity: expected an object" },
    { "tools", "{}", "tools: expected an array" },
    { "extra", "1", "extra: unknown member" },
    { "x_extra", "1", "x_extra: unknown member" },
    /* identity */
    { "identity.scheduler", "\"sge\"",
      "identity.scheduler: unknown value 'sge'" },
    { "identity.job_id", "4242", "identity.job_id: expected a string" },
    { "identity.job_id", "\"../x\"",
      "identity.job_id: unsafe identifier '../x'" },
    { "identity.job_id", "\"a/b\"",
      "identity.job_id: unsafe identifier 'a/b'" },
    { "identity.job_id", "\".hidden\"",
      "identity.job_id: unsafe identifier '.hidden'" },
    { "identity.job_id", "\"\"", "identity.job_id: unsafe identifier ''" },
    { "identity.job_id", "\"a\\u001b[31mb\"",
      "identity.job_id: unsafe identifier 'a?[31mb'" },
    { "identity.cluster", "\"..\"",
      "identity.cluster: unsafe identifier '..'" },
    { "identity.step_id", "\"0/1\"",
      "identity.step_id: unsafe identifier '0/1'" },
    { "identity.node", "\"node 1\"",
      "identity.node: unsafe identifier 'node 1'" },
    { "identity.array_task_id", "-1", "identity.array_task_id: must be >= 0" },
    { "identity.uid", "-1", "identity.uid: must be >= 0" },
    { "identity.uid", "4294967296", "identity.uid: must be <= 4294967295" },
    { "identity.uid", "\"1000\"", "identity.uid: expected an integer" },
    { "identity.gid", "4294967296", "identity.gid: must be <= 4294967295" },
    { "identity.user", "null", "identity.user: expected a string" },
    { "identity.shell", "\"bash\"", "identity.shell: unknown member" },
    /* request */
    { "request.tasks", "-4", "request.tasks: must be >= 0" },
    { "request.mem_bytes", "1.5", "request.mem_bytes: expected an integer" },
    { "request.cores", "\"0-3;8\"",
      "request.cores: expected a cpu list like '0-3,8'" },
    { "request.gres", "\"gpu\"", "request.gres: unknown member" },
    /* host, cgroup, time */
    { "host.hostname", "true", "host.hostname: expected a string" },
    { "host.cgroup_mode", "\"v3\"", "host.cgroup_mode: unknown value 'v3'" },
    { "host.cpus_online", "-1", "host.cpus_online: must be >= 0" },
    { "cgroup.attach", "\"ptrace\"", "cgroup.attach: unknown value 'ptrace'" },
    { "cgroup.attach", "\"cgroup2-delegated\"",
      "cgroup.version: must be 'v2' with attach 'cgroup2-delegated'" },
    { "cgroup.attach", "\"process-tree\"",
      "cgroup.version: not allowed with attach 'process-tree'" },
    { "cgroup", "{\"attach\": \"cgroup2-delegated\", \"paths\":"
                " {\"memory\": \"/tracer-run.7\"}}",
      "cgroup.paths: only 'unified' with attach 'cgroup2-delegated'" },
    { "cgroup", "{\"attach\": \"process-tree\", \"paths\": {}}",
      "cgroup.paths: not allowed with attach 'process-tree'" },
    { "cgroup.version", "\"v2.1\"", "cgroup.version: unknown value 'v2.1'" },
    { "cgroup.paths", "[]", "cgroup.paths: expected an object" },
    { "cgroup.paths.memory", "\"slurm/job_1\"",
      "cgroup.paths.memory: expected an absolute path" },
    { "cgroup.paths.memory", "1", "cgroup.paths.memory: expected a string" },
    { "cgroup.paths.a b", "\"/x\"", "cgroup.paths: invalid key 'a b'" },
    { "time.start_unix_ms", "-5", "time.start_unix_ms: must be >= 0" },
    { "time.end_unix_ms", "1767225599999",
      "time.end_unix_ms: must be >= time.start_unix_ms" },
    { "time.elapsed_s", "-0.5", "time.elapsed_s: must be >= 0" },
    { "time.elapsed_s", "\"2m\"", "time.elapsed_s: expected a number" },
    /* summary */
    { "summary.samples", "-1", "summary.samples: must be >= 0" },
    { "summary.cpu.user_s", "-0.1", "summary.cpu.user_s: must be >= 0" },
    { "summary.cpu.total_s", "null", "summary.cpu.total_s: expected a number" },
    { "summary.cpu.exact", "1", "summary.cpu.exact: expected a boolean" },
    { "summary.cpu.x_other", "1", "summary.cpu.x_other: unknown member" },
    { "summary.memory.peak_bytes", "1e9",
      "summary.memory.peak_bytes: expected an integer" },
    { "summary.memory.limit_bytes", "-1",
      "summary.memory.limit_bytes: must be >= 0" },
    { "summary.memory.rss", "1", "summary.memory.rss: unknown member" },
    { "summary.disk", "{}", "summary.disk: unknown member" },
    { "summary.gpu", "{}", "summary.gpu.source: missing required member" },
    { "summary.gpu", "{\"source\": \"dcgm\", \"devices\": []}",
      "summary.gpu.source: unknown value 'dcgm'" },
    { "summary.gpu",
      "{\"source\": \"nvml\", \"devices\": [{\"index\": -1}]}",
      "summary.gpu.devices[0].index: must be >= 0" },
    { "summary.pressure", "{\"source\": \"cgroup2\", \"exact\": true,"
      " \"cpu\": {\"some_s\": -1}}",
      "summary.pressure.cpu.some_s: must be >= 0" },
    { "summary.pressure", "{\"source\": \"psi\", \"exact\": true}",
      "summary.pressure.source: unknown value 'psi'" },
    { "summary.io", "{\"source\": \"io.stat\", \"devices\": [{}]}",
      "summary.io.devices[0].device: missing required member" },
    { "summary.io", "{\"source\": \"none\", \"proc\": {\"source\":"
      " \"proc\", \"exact\": false, \"rchar\": 1.5}}",
      "summary.io.proc.rchar: expected an integer" },
    { "summary.network", "{\"scope\": \"job\", \"source\":"
      " \"proc-net-dev\"}",
      "summary.network.scope: unknown value 'job'" },
    { "summary.network", "{\"scope\": \"node\", \"source\":"
      " \"proc-net-dev\", \"infiniband\": [{\"device\": \"mlx5_0\"}]}",
      "summary.network.infiniband[0].port: missing required member" },
    { "summary.processes", "{\"count\": 3, \"source\": \"ebpf\","
      " \"complete\": true}",
      "summary.processes.source: unknown value 'ebpf'" },
    { "summary.cpu.cores", "\"0-3;5\"",
      "summary.cpu.cores: expected a cpu list like '0-3,8'" },
    { "summary.cpu.runq_source", "\"perf\"",
      "summary.cpu.runq_source: unknown value 'perf'" },
    { "host.topology", "{\"source\": \"hwloc\", \"bound\": {\"gpus\":"
      " 1}}",
      "host.topology.bound.gpus: unknown member" },
    /* tools */
    { "tools[0]", "\"bwa\"", "tools[0]: expected an object" },
    { "tools[1].count", "0", "tools[1].count: must be >= 1" },
    { "tools[1].name", "[]", "tools[1].name: expected a string" },
    { "tools[0].cpu_s", "-1", "tools[0].cpu_s: must be >= 0" },
    { "tools[0].signals", "{\"9\": -1}", "tools[0].signals.9: must be >= 0" },
    { "tools[0].exact", "\"yes\"", "tools[0].exact: expected a boolean" },
    { "tools[0].exit_codes.0", "\"two\"",
      "tools[0].exit_codes.0: expected an integer" },
    { "tools[0].exit_codes.0", "-2", "tools[0].exit_codes.0: must be >= 0" },
    { "tools[0].exit_codes.a/b", "1",
      "tools[0].exit_codes: invalid key 'a/b'" },
    { "tools[0].argv", "[]", "tools[0].argv: unknown member" },
    /* series */
    { "series.interval_s", "0", "series.interval_s: must be > 0" },
    { "series.t_s", "[0, 5]",
      "series.metrics.cpu_cores.min: expected 2 entries (as many as t_s), "
      "got 3" },
    { "series.t_s[1]", "\"5\"", "series.t_s[1]: expected a number" },
    { "series.metrics.cpu_cores.max", "[1, 2]",
      "series.metrics.cpu_cores.max: expected 3 entries (as many as t_s), "
      "got 2" },
    { "series.metrics.cpu_cores.mean[2]", "null",
      "series.metrics.cpu_cores.mean[2]: expected a number" },
    { "series.metrics.cpu_cores.p50", "[1, 2, 3]",
      "series.metrics.cpu_cores.p50: unknown member" },
    { "series.metrics.cpu cores", "{}",
      "series.metrics: invalid key 'cpu cores'" },
    { "series.metrics.mem", "[]", "series.metrics.mem: expected an object" },
    /* tags */
    { "tags.project", "17", "tags.project: expected a string" },
    { "tags.a/b", "\"x\"", "tags: invalid key 'a/b'" },
    { "tags", "[]", "tags: expected an object" },
    /* outcome */
    { "outcome.state", "\"zz\"", "outcome.state: unknown value 'zz'" },
    { "outcome.complete", "\"yes\"", "outcome.complete: expected a boolean" },
    { "outcome.signal", "-9", "outcome.signal: must be >= 0" },
    { "outcome.tasks[0].task_id", "-1",
      "outcome.tasks[0].task_id: must be >= 0" },
    { "outcome.tasks[0].oom_killed", "0",
      "outcome.tasks[0].oom_killed: expected a boolean" },
    { "outcome.tasks[1].rusage", "{}",
      "outcome.tasks[1].rusage: unknown member" },
    { "outcome.culprit", "{\"pid\": 1}",
      "outcome.culprit.tool: missing required member" },
    { "outcome.culprit", "{\"tool\": \"x\", \"pid\": 1, \"signal\": -1}",
      "outcome.culprit.signal: must be >= 0" },
    { "outcome.culprit", "{\"tool\": \"x\", \"pid\": 1, \"at_s\": -0.5}",
      "outcome.culprit.at_s: must be >= 0" },
    { "outcome.culprit",
      "{\"tool\": \"x\", \"pid\": 1, \"chain\": [{\"tool\": \"sh\"}]}",
      "outcome.culprit.chain[0].pid: missing required member" },
    { "outcome.culprit", "{\"tool\": \"x\", \"pid\": 1, \"why\": 1}",
      "outcome.culprit.why: unknown member" },
    /* collector */
    { "collector.interval_s", "0", "collector.interval_s: must be > 0" },
    { "collector.version", "1", "collector.version: expected a string" },
    /* signature */
    { "signature.scheme", "\"gpg\"", "signature.scheme: unknown value 'gpg'" },
    { "signature.digest",
      "\"0123456789ABCDEF0123456789ABCDEF"
      "0123456789ABCDEF0123456789ABCDEF\"",
      "signature.digest: expected 64 lowercase hex digits" },
    { "signature.digest", "\"abc\"",
      "signature.digest: expected 64 lowercase hex digits" },
    { "signature.credential", "\"AwQFAA:\"",
      "signature.credential: expected a MUNGE credential" },
    { "signature.reason", "\"x\"", "signature.reason: unknown member" },
    { "signature.scheme", "\"none\"",
      "signature.reason: missing required member" },
    { "signature",
      "{\"scheme\": \"none\", \"reason\": \"x\", \"digest\": \"y\"}",
      "signature.digest: unknown member" },
};

/* outcome.culprit, as tracerd writes it, is accepted. */
static void test_culprit_valid (void **state)
{
    json_t *rec = make_record ();
    tr_error_t err;

    (void)state;
    set (json_object_get (rec, "outcome"), "culprit",
         json_pack ("{s:s s:i s:i s:b s:f s:[{s:s s:i} {s:s s:i}] s:i}",
                    "tool", "samtools", "pid", 4242, "signal", 11,
                    "core_dumped", 0, "at_s", 0.8, "chain", "tool", "sh",
                    "pid", 4241, "tool", "bash", "pid", 4240, "collateral",
                    2));
    if (tr_record_validate (rec, &err) != 0)
        fail_msg ("refused: %s", err.text);
    json_decref (rec);
}

static void test_mutations (void **state)
{
    tr_error_t err;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof (mutations) / sizeof (mutations[0]); i++) {
        const struct mutation *m = &mutations[i];
        json_t *rec = make_record ();
        json_t *value = NULL;

        if (m->value) {
            json_error_t jerr;
            value = json_loads (m->value, JSON_DECODE_ANY, &jerr);
            if (!value)
                fail_msg ("case %zu: bad test value: %s", i, jerr.text);
        }
        mutate (rec, m->path, value);
        errno = 0;
        if (tr_record_validate (rec, &err) == 0)
            fail_msg ("case %zu (%s): accepted", i, m->path);
        assert_int_equal (errno, EINVAL);
        if (strcmp (err.text, m->expect) != 0)
            fail_msg ("case %zu (%s):\n  want '%s'\n  got  '%s'", i, m->path,
                      m->expect, err.text);
        json_decref (rec);
    }
}

/* Bounds on strings, arrays and maps: the largest value passes, one more
 * fails.  Built in code because the values are long.
 */
static void test_bounds (void **state)
{
    static const struct {
        const char *section;
        const char *key;
        size_t max;
    } strings[] = {
        { "identity", "job_name", 512 },  { "identity", "step_name", 512 },
        { "identity", "user", 64 },       { "identity", "account", 128 },
        { "identity", "partition", 128 }, { "identity", "qos", 128 },
        { "host", "hostname", 255 },      { "tags", "project", 256 },
    };
    char buf[1100];
    char want[256];
    tr_error_t err;
    json_t *rec, *arr, *obj;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof (strings) / sizeof (strings[0]); i++) {
        rec = make_record ();
        memset (buf, 'x', strings[i].max + 1);
        buf[strings[i].max] = '\0';
        set (json_object_get (rec, strings[i].section), strings[i].key,
             json_string (buf));
        if (tr_record_validate (rec, &err) < 0)
            fail_msg ("%s.%s at its bound: %s", strings[i].section,
                      strings[i].key, err.text);
        buf[strings[i].max] = 'x';
        buf[strings[i].max + 1] = '\0';
        set (json_object_get (rec, strings[i].section), strings[i].key,
             json_string (buf));
        snprintf (want, sizeof (want), "%s.%s: longer than %zu bytes",
                  strings[i].section, strings[i].key, strings[i].max);
        assert_error (tr_record_validate (rec, &err), EINVAL, &err, want);
        json_decref (rec);
    }

    /* Strings with no stated bound still have one. */
    rec = make_record ();
    {
        char *big = malloc (4098);
        assert_non_null (big);
        memset (big, 'a', 4097);
        big[4097] = '\0';
        set (json_object_get (rec, "outcome"), "reason", json_string (big));
        assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                      "outcome.reason: longer than 1024 bytes");
        set (json_object_get (rec, "outcome"), "reason", json_string ("ok"));
        big[0] = '/';
        set (json_object_get (json_object_get (rec, "cgroup"), "paths"),
             "memory", json_string (big));
        assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                      "cgroup.paths.memory: longer than 4096 bytes");
        free (big);
    }
    json_decref (rec);

    /* A NUL byte inside a string (possible only in memory). */
    rec = make_record ();
    set (json_object_get (rec, "identity"), "job_name",
         json_stringn ("a\0b", 3));
    assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                  "identity.job_name: contains a NUL byte");
    json_decref (rec);

    /* tags: 64 entries, keys up to 64 bytes. */
    rec = make_record ();
    obj = json_object_get (rec, "tags");
    for (i = json_object_size (obj); i < 64; i++) {
        snprintf (buf, sizeof (buf), "k%zu", i);
        set (obj, buf, json_string ("v"));
    }
    assert_int_equal (tr_record_validate (rec, &err), 0);
    set (obj, "one-more", json_string ("v"));
    assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                  "tags: more than 64 entries");
    json_object_clear (obj);
    memset (buf, 'k', 64);
    buf[64] = '\0';
    set (obj, buf, json_string ("v"));
    assert_int_equal (tr_record_validate (rec, &err), 0);
    json_object_clear (obj);
    buf[64] = 'k';
    buf[65] = '\0';
    set (obj, buf, json_string ("v"));
    snprintf (want, sizeof (want), "tags: invalid key '%.40s...'", buf);
    assert_error (tr_record_validate (rec, &err), EINVAL, &err, want);
    json_decref (rec);

    /* tools: 4096 entries. */
    rec = make_record ();
    arr = json_object_get (rec, "tools");
    json_array_clear (arr);
    for (i = 0; i < 4096; i++)
        assert_int_equal (json_array_append_new (arr, json_pack ("{s:s, s:i}",
                                                                 "name", "t",
                                                                 "count", 1)),
                          0);
    assert_int_equal (tr_record_validate (rec, &err), 0);
    assert_int_equal (json_array_append_new (arr,
                                             json_pack ("{s:s, s:i}", "name",
                                                        "t", "count", 1)),
                      0);
    assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                  "tools: more than 4096 entries");
    json_decref (rec);

    /* series: 1000 points, all arrays the same length. */
    rec = make_record ();
    obj = json_object_get (rec, "series");
    {
        json_t *t = json_array ();
        json_t *m = json_pack ("{s:[], s:[], s:[]}", "min", "mean", "max");
        json_t *metrics = json_object ();

        for (i = 0; i < 1001; i++) {
            assert_int_equal (json_array_append_new (t, json_real (i * 5.0)),
                              0);
            assert_int_equal (json_array_append_new (json_object_get (m, "min"),
                                                     json_real (0)),
                              0);
            assert_int_equal (json_array_append_new (json_object_get (m, "mea"
                                                                         "n"),
                                                     json_real (0)),
                              0);
            assert_int_equal (json_array_append_new (json_object_get (m, "max"),
                                                     json_real (0)),
                              0);
        }
        set (metrics, "cpu_cores", m);
        set (obj, "t_s", t);
        set (obj, "metrics", metrics);
        assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                      "series.t_s: more than 1000 entries");
        assert_int_equal (json_array_remove (t, 0), 0);
        assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                      "series.metrics.cpu_cores.min: more than 1000 entries");
        assert_int_equal (json_array_remove (json_object_get (m, "min"), 0), 0);
        assert_int_equal (json_array_remove (json_object_get (m, "mean"), 0),
                          0);
        assert_int_equal (json_array_remove (json_object_get (m, "max"), 0), 0);
        assert_int_equal (tr_record_validate (rec, &err), 0);
    }
    json_decref (rec);
}

/* A valid record whose summary holds an x_ extension nested so that the
 * deepest container sits at 'depth' (the record itself is depth 1).
 */
static json_t *make_deep (int depth)
{
    json_t *rec = make_record ();
    json_t *v = json_array ();
    int d;

    /* record(1) > summary(2) > x_deep(3) > ... */
    for (d = 3; d < depth; d++) {
        json_t *outer = json_array ();
        assert_int_equal (json_array_append_new (outer, v), 0);
        v = outer;
    }
    set (json_object_get (rec, "summary"), "x_deep", v);
    return rec;
}

static void test_depth (void **state)
{
    tr_error_t err;
    json_t *rec, *back;
    char *text;

    (void)state;
    rec = make_deep (16);
    assert_int_equal (tr_record_validate (rec, &err), 0);
    text = tr_record_dumps (rec);
    assert_non_null (text);
    back = tr_record_parse (text, strlen (text), &err);
    if (!back)
        fail_msg ("depth 16 refused: %s", err.text);
    json_decref (back);
    free (text);
    json_decref (rec);

    rec = make_deep (17);
    assert_error (tr_record_validate (rec, &err), EINVAL, &err,
                  "record: nested deeper than 16 levels");
    text = tr_record_dumps (rec);
    assert_non_null (text);
    errno = 0;
    assert_null (tr_record_parse (text, strlen (text), &err));
    assert_int_equal (errno, EINVAL);
    assert_string_equal (err.text, "record: nested deeper than 16 levels");
    free (text);
    json_decref (rec);

    /* Far deeper than ours, within jansson's own limit: {"a":[[...]]}. */
    {
        static const size_t n = 1000;
        char *deep = malloc (2 * n + 8);

        assert_non_null (deep);
        memcpy (deep, "{\"a\":", 5);
        memset (deep + 5, '[', n);
        memset (deep + 5 + n, ']', n);
        memcpy (deep + 5 + 2 * n, "}", 2);
        errno = 0;
        assert_null (tr_record_parse (deep, strlen (deep), &err));
        assert_int_equal (errno, EINVAL);
        assert_string_equal (err.text, "record: nested deeper than 16 levels");
        free (deep);
    }
}

/* Parse errors on text: each with errno and exact message. */
static void test_parse_errors (void **state)
{
    static const struct {
        const char *text;
        int err;
        const char *expect;
        int line;
        int column;
    } cases[] = {
        { "", EINVAL,
          "invalid JSON at line 1, column 0: '[' or '{' expected "
          "near end of file",
          1, 0 },
        { "42", EINVAL,
          "invalid JSON at line 1, column 2: '[' or '{' "
          "expected near '42'",
          1, 2 },
        { "[1, 2]", EINVAL, "record: expected an object", 0, 0 },
        { "{\"format\": 1,\n \"format\": 2}", EINVAL,
          "invalid JSON at line 2, column 9: duplicate object key near "
          "'\"format\"'",
          2, 9 },
        { "{} x", EINVAL,
          "invalid JSON at line 1, column 4: end of file "
          "expected near 'x'",
          1, 4 },
        { "{\"a\": \"\xff\"}", EINVAL,
          "invalid JSON at line 1, column 7: "
          "unable to decode byte 0xff near '\"'",
          1, 7 },
        { "{\"a\": \"\\u0000\"}", EINVAL,
          "invalid JSON at line 1, column 14: "
          "\\u0000 is not allowed without "
          "JSON_ALLOW_NUL near '\"\\u0000\"'",
          1, 14 },
        { "{}", EINVAL, "format: missing required member", 0, 0 },
    };
    tr_error_t err;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        errno = 0;
        if (tr_record_parse (cases[i].text, strlen (cases[i].text), &err))
            fail_msg ("case %zu accepted", i);
        assert_int_equal (errno, cases[i].err);
        if (strcmp (err.text, cases[i].expect) != 0)
            fail_msg ("case %zu:\n  want '%s'\n  got  '%s'", i, cases[i].expect,
                      err.text);
        assert_int_equal (err.line, cases[i].line);
        assert_int_equal (err.column, cases[i].column);
    }
    errno = 0;
    assert_null (tr_record_parse (NULL, 0, &err));
    assert_int_equal (errno, EINVAL);
}

static void test_parse_trailing_and_utf8 (void **state)
{
    json_t *rec = make_record ();
    tr_error_t err;
    char *text, *p;
    size_t len;

    (void)state;
    text = tr_record_dumps (rec);
    assert_non_null (text);
    len = strlen (text);
    /* Trailing whitespace is fine, trailing garbage is not. */
    json_decref (tr_record_parse (text, len, &err));
    text = realloc (text, len + 3);
    assert_non_null (text);
    memcpy (text + len, "{}", 3);
    errno = 0;
    assert_null (tr_record_parse (text, len + 2, &err));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (err.text, "end of file expected near '{'"));
    assert_true (err.line > 1);

    /* The escaped e-acute is \u00e9 in the file; raw invalid bytes in a
     * string are refused.
     */
    text[len] = '\0';
    p = strstr (text, "align \\u00E9chantillon");
    assert_non_null (p);
    p[6] = (char)0xc3;
    p[7] = (char)0x28;
    errno = 0;
    assert_null (tr_record_parse (text, len, &err));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (err.text, "unable to decode byte 0xc3"));
    free (text);
    json_decref (rec);
}

static void test_parse_size (void **state)
{
    size_t big = TR_RECORD_MAX_BYTES + 1;
    tr_error_t err;
    char *buf;

    (void)state;
    buf = malloc (big);
    assert_non_null (buf);
    memset (buf, ' ', big);
    buf[0] = '{';
    buf[big - 1] = '}';
    errno = 0;
    assert_null (tr_record_parse (buf, big, &err));
    assert_int_equal (errno, EFBIG);
    assert_string_equal (err.text, "record is larger than 4194304 bytes");
    /* At the bound it is parsed (and fails only on content). */
    buf[big - 2] = '}';
    errno = 0;
    assert_null (tr_record_parse (buf, big - 1, &err));
    assert_int_equal (errno, EINVAL);
    assert_string_equal (err.text, "format: missing required member");
    free (buf);
}

/* canonical(parse(dumps(r))) == canonical(r), for reals too. */
static void test_roundtrip (void **state)
{
    json_t *rec = make_record ();
    json_t *back;
    tr_error_t err;
    char *text, *canon, *canon2, *text2;

    (void)state;
    text = tr_record_dumps (rec);
    canon = tr_record_canonical (rec);
    assert_non_null (text);
    assert_non_null (canon);
    assert_true (text[strlen (text) - 1] == '\n');
    assert_non_null (strstr (text, "\n \"cgroup\": {\n  \"attach\""));
    back = tr_record_parse (text, strlen (text), &err);
    if (!back)
        fail_msg ("round trip refused: %s", err.text);
    canon2 = tr_record_canonical (back);
    assert_non_null (canon2);
    assert_string_equal (canon, canon2);
    text2 = tr_record_dumps (back);
    assert_string_equal (text, text2);
    assert_true (json_equal (rec, back));
    /* The reals survive bit for bit. */
    assert_true (
        json_real_value (json_object_get (
            json_object_get (json_object_get (back, "summary"), "cpu"), "system"
                                                                        "_s"))
        == 1e-7);
    assert_true (
        json_real_value (json_object_get (
            json_object_get (json_object_get (back, "summary"), "cpu"), "total_"
                                                                        "s"))
        == 123456.789);
    free (text);
    free (text2);
    free (canon);
    free (canon2);
    json_decref (back);
    json_decref (rec);
}

/* The line of text that starts with prefix (at a line start), without
 * its newline; NULL if none.  Caller frees.
 */
static char *line_of (const char *text, const char *prefix)
{
    const char *p = text, *end;

    while (p && strncmp (p, prefix, strlen (prefix)))
        if ((p = strchr (p, '\n')))
            p++;
    if (!p)
        return NULL;
    end = strchr (p, '\n');
    return strndup (p, end ? (size_t)(end - p) : strlen (p));
}

/* Reals print in 15 digits when all of them read back from 15 (after
 * tr_record_round_reals), in 17 otherwise; the series member is on one
 * line; a string imitating that line changes nothing; either way the
 * file parses back to the same canonical form.
 */
/* Strings a user controls are made safe to print: control characters,
 * C1, line separators and bidirectional overrides become escapes, bytes
 * that are not UTF-8 too; everything else, keys and numbers stay.
 */
static void test_printable (void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        { "plain résumé 日本 😀", "plain résumé 日本 😀" },
        { "a\nb", "a\\nb" },
        { "tab\there\r", "tab\\there\\r" },
        { "\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07" },
        { "del\x7f", "del\\x7f" },
        { "c1\xc2\x9b" "31m", "c1\\u009b31m" },
        { "nbsp\xc2\xa0ok", "nbsp\xc2\xa0ok" },
        { "ls\xe2\x80\xa8x", "ls\\u2028x" },
        { "rlo\xe2\x80\xae" "cod.exe", "rlo\\u202ecod.exe" },
        { "iso\xe2\x81\xa6x\xe2\x81\xa9", "iso\\u2066x\\u2069" },
        { "bad\xff\xc3", "bad\\xff\\xc3" },
        { "over\xc0\xaf", "over\\xc0\\xaf" },
        { "", "" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        tr_strbuf_t sb = TR_STRBUF_INIT;
        bool same = !strcmp (cases[i].in, cases[i].out);

        assert_int_equal (tr_strbuf_printable (&sb, cases[i].in), 0);
        if (strcmp (tr_strbuf_str (&sb), cases[i].out))
            fail_msg ("case %zu: got '%s', want '%s'", i, tr_strbuf_str (&sb),
                      cases[i].out);
        assert_int_equal (tr_text_is_printable (cases[i].in), same);
        tr_strbuf_free (&sb);
    }
    {
        json_t *rec = json_pack ("{s:s s:[s,i,{s:s}] s:f}", "job_name",
                                 "x\nINJECTED", "tools", "ok", 3, "cmdline",
                                 "a\x1b[0m", "n", 1.5);
        json_t *key = json_object ();

        assert_non_null (rec);
        assert_int_equal (json_object_set_new (key, "k\n", json_string ("v")),
                          0);
        assert_int_equal (json_object_set_new (rec, "keys", key), 0);
        assert_int_equal (tr_record_printable (rec), 0);
        assert_string_equal (
            json_string_value (json_object_get (rec, "job_name")),
            "x\\nINJECTED");
        assert_string_equal (
            json_string_value (json_array_get (json_object_get (rec, "tools"),
                                               0)),
            "ok");
        assert_string_equal (
            json_string_value (json_object_get (
                json_array_get (json_object_get (rec, "tools"), 2), "cmdline")),
            "a\\x1b[0m");
        assert_int_equal (json_integer_value (json_array_get (
                              json_object_get (rec, "tools"), 1)),
                          3);
        /* keys are the schema's, and stay */
        assert_non_null (json_object_get (key, "k\n"));
        json_decref (rec);
    }
}

static void test_short_reals (void **state)
{
    json_t *rec = make_record (), *back, *deep;
    tr_error_t err;
    char *text, *canon, *canon2, *line;

    (void)state;
    assert_int_equal (json_object_set_new (
                          json_object_get (rec, "series"), "t_s",
                          json_pack ("[f,f]", 0.0, 1.0 / 3)),
                      0);
    assert_int_equal (
        json_object_set_new (json_object_get (rec, "series"), "metrics",
                             json_pack ("{s:{s:[f,f],s:[f,f],s:[f,f]}}",
                                        "cpu_cores", "min", 0.1 + 0.2, 1.5,
                                        "mean", 0.3, 2.0, "max", 0.4, 2.5)),
        0);
    assert_int_equal (
        json_object_set_new (json_object_get (rec, "identity"), "job_name",
                             json_string ("x\n \"series\": \"@series@\"")),
        0);

    /* 1/3 and 0.1 + 0.2 need 17 digits: everything prints in 17 */
    assert_non_null (text = tr_record_dumps (rec));
    assert_non_null (strstr (text, "0.33333333333333331"));
    assert_non_null (strstr (text, "0.30000000000000004"));
    assert_non_null (back = tr_record_parse (text, strlen (text), &err));
    assert_non_null (canon = tr_record_canonical (rec));
    assert_non_null (canon2 = tr_record_canonical (back));
    assert_string_equal (canon, canon2);
    assert_true (json_equal (rec, back));
    free (text);
    free (canon);
    free (canon2);
    json_decref (back);

    /* rounded: 15 digits, the same doubles back */
    assert_int_equal (tr_record_round_reals (rec), 0);
    assert_non_null (text = tr_record_dumps (rec));
    assert_null (strstr (text, "0.33333333333333331"));
    assert_non_null (strstr (text, "0.333333333333333"));
    assert_non_null (strstr (text, "[0.3,1.5]"));
    assert_non_null (back = tr_record_parse (text, strlen (text), &err));
    assert_non_null (canon = tr_record_canonical (rec));
    assert_non_null (canon2 = tr_record_canonical (back));
    assert_string_equal (canon, canon2);
    assert_true (json_equal (rec, back));
    /* the series is one line; the look-alike string stays a string */
    assert_non_null (line = line_of (text, " \"series\": {"));
    assert_non_null (strstr (line, "\"t_s\":[0.0,0.333333333333333]}"));
    free (line);
    assert_string_equal (
        json_string_value (
            json_object_get (json_object_get (back, "identity"), "job_name")),
        "x\n \"series\": \"@series@\"");
    free (text);
    free (canon);
    free (canon2);
    json_decref (back);

    /* rounding is idempotent */
    assert_non_null (canon = tr_record_canonical (rec));
    assert_int_equal (tr_record_round_reals (rec), 0);
    assert_non_null (canon2 = tr_record_canonical (rec));
    assert_string_equal (canon, canon2);
    free (canon);
    free (canon2);

    /* too deep to walk: refused, and the file still reads back */
    deep = json_real (1.0 / 7);
    for (int i = 0; i < 40; i++)
        deep = json_pack ("[o]", deep);
    assert_int_equal (json_object_set_new (json_object_get (rec, "summary"),
                                           "x_deep", deep),
                      0);
    errno = 0;
    assert_int_equal (tr_record_round_reals (rec), -1);
    assert_int_equal (errno, ELOOP);
    assert_non_null (text = tr_record_dumps (rec));
    assert_non_null (strstr (text, "0.14285714285714285"));
    /* (a reader refuses such a record; jansson reads it back as it was) */
    assert_non_null (back = json_loads (text, 0, NULL));
    assert_true (json_equal (rec, back));
    free (text);
    json_decref (back);

    /* a record without a series prints without one */
    assert_int_equal (json_object_del (rec, "series"), 0);
    assert_non_null (text = tr_record_dumps (rec));
    assert_null (strstr (text, "\n \"series\""));
    free (text);
    json_decref (rec);
}

static bool starts_with (const char *s, const char *prefix)
{
    return strncmp (s, prefix, strlen (prefix)) == 0;
}

static void test_canonical (void **state)
{
    json_t *rec = make_record ();
    json_t *reordered;
    char *canon, *canon2, *dumped;
    const char *key;
    json_t *v;

    (void)state;
    canon = tr_record_canonical (rec);
    assert_non_null (canon);
    /* Compact, sorted, ASCII, no signature. */
    assert_true (starts_with (canon, "{\"cgroup\":{\"attach\":\"cgroup\","
                                     "\"paths\":{\"cpu,cpuacct\":"));
    assert_null (strchr (canon, '\n'));
    assert_null (strstr (canon, "\": "));
    assert_null (strstr (canon, "\", "));
    assert_null (strstr (canon, "signature"));
    assert_non_null (strstr (canon, "\"job_name\":\"align "
                                    "\\u00E9chantillon\""));
    assert_non_null (strstr (canon, "\"user_s\":0.10000000000000001"));
    dumped = tr_record_dumps (rec);
    assert_non_null (strstr (dumped, "\"signature\": {"));

    /* The signature does not change it; any other member does; the
     * order members were added in does not.
     */
    assert_int_equal (json_object_del (rec, "signature"), 0);
    canon2 = tr_record_canonical (rec);
    assert_string_equal (canon, canon2);
    free (canon2);

    reordered = json_object ();
    assert_non_null (reordered);
    {
        const char *keys[64];
        size_t n = 0, i;
        json_object_foreach (rec, key, v) keys[n++] = key;
        for (i = n; i-- > 0;)
            set (reordered, keys[i],
                 json_incref (json_object_get (rec, keys[i])));
    }
    canon2 = tr_record_canonical (reordered);
    assert_string_equal (canon, canon2);
    free (canon2);
    json_decref (reordered);

    set (json_object_get (rec, "tags"), "run", json_string ("4"));
    canon2 = tr_record_canonical (rec);
    assert_string_not_equal (canon, canon2);
    free (canon2);

    errno = 0;
    assert_null (tr_record_canonical (NULL));
    assert_int_equal (errno, EINVAL);
    v = json_array ();
    assert_null (tr_record_dumps (v));
    json_decref (v);
    free (canon);
    free (dumped);
    json_decref (rec);
}

static char *read_text (const char *path)
{
    FILE *f = fopen (path, "r");
    char *buf;
    long n;

    if (!f)
        return NULL;
    assert_int_equal (fseek (f, 0, SEEK_END), 0);
    n = ftell (f);
    assert_true (n >= 0);
    rewind (f);
    buf = malloc ((size_t)n + 1);
    assert_non_null (buf);
    assert_int_equal (fread (buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose (f);
    return buf;
}

static void write_text (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");

    assert_non_null (f);
    assert_int_equal (fputs (text, f) >= 0, 1);
    assert_int_equal (fclose (f), 0);
}

/* The golden file: a hand-written record and its canonical form.  With
 * TRACER_UPDATE_EXPECTED=1 the expected file is rewritten.
 */
static void test_golden (void **state)
{
    const char *update = getenv ("TRACER_UPDATE_EXPECTED");
    const char *expected_path = FIXTURES "/basic.canonical";
    tr_error_t err;
    json_t *rec;
    char *canon, *expected, *line;
    size_t len;

    (void)state;
    rec = tr_record_load (FIXTURES "/basic.json", &err);
    if (!rec)
        fail_msg ("%s", tr_error_str (&err));
    canon = tr_record_canonical (rec);
    assert_non_null (canon);
    len = strlen (canon);
    line = malloc (len + 2);
    assert_non_null (line);
    memcpy (line, canon, len);
    memcpy (line + len, "\n", 2);
    if (update && !strcmp (update, "1"))
        write_text (expected_path, line);
    expected = read_text (expected_path);
    if (!expected)
        fail_msg ("%s missing (run with TRACER_UPDATE_EXPECTED=1)",
                  expected_path);
    assert_string_equal (line, expected);
    free (expected);
    free (line);
    free (canon);
    json_decref (rec);
}

static char tmpdir[64];

static int setup_tmpdir (void **state)
{
    (void)state;
    snprintf (tmpdir, sizeof (tmpdir), "/tmp/test_record.XXXXXX");
    return mkdtemp (tmpdir) ? 0 : -1;
}

static int teardown_tmpdir (void **state)
{
    static const char *const names[] = {
        "rec.json", "link.json",    "fifo", "bad.json",
        "big.json", "invalid.json", "dir",
    };
    char path[128];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof (names) / sizeof (names[0]); i++) {
        snprintf (path, sizeof (path), "%s/%s", tmpdir, names[i]);
        if (unlink (path) < 0)
            (void)rmdir (path);
    }
    return rmdir (tmpdir);
}

static void tmp_path (char *buf, size_t size, const char *name)
{
    snprintf (buf, size, "%s/%s", tmpdir, name);
}

static void test_load (void **state)
{
    char path[128], link[128], fifo[128], bad[128], big[128], dir[128];
    char invalid_path[128], want[256];
    json_t *rec = make_record (), *back;
    tr_error_t err;
    char *text;
    int fd;

    (void)state;
    tmp_path (path, sizeof (path), "rec.json");
    text = tr_record_dumps (rec);
    write_text (path, text);
    back = tr_record_load (path, &err);
    if (!back)
        fail_msg ("%s", tr_error_str (&err));
    assert_true (json_equal (rec, back));
    json_decref (back);

    /* A symlink to a good record is refused. */
    tmp_path (link, sizeof (link), "link.json");
    assert_int_equal (symlink (path, link), 0);
    errno = 0;
    assert_null (tr_record_load (link, &err));
    assert_int_equal (errno, ELOOP);
    assert_string_equal (err.file, link);
    assert_string_equal (err.text, "is a symbolic link");

    /* A FIFO with no writer: refused at once, not waited on.  The alarm
     * turns a hang into a failure.
     */
    tmp_path (fifo, sizeof (fifo), "fifo");
    assert_int_equal (mkfifo (fifo, 0600), 0);
    alarm (10);
    errno = 0;
    assert_null (tr_record_load (fifo, &err));
    alarm (0);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (err.text, "not a regular file");
    snprintf (want, sizeof (want), "%s: not a regular file", fifo);
    assert_string_equal (tr_error_str (&err), want);

    tmp_path (dir, sizeof (dir), "dir");
    assert_int_equal (mkdir (dir, 0700), 0);
    errno = 0;
    assert_null (tr_record_load (dir, &err));
    assert_int_equal (errno, EISDIR);
    assert_string_equal (err.text, "not a regular file");

    /* Syntax errors carry file, line and column. */
    tmp_path (bad, sizeof (bad), "bad.json");
    write_text (bad, "{\n  \"format\": \"tracer-record\",\n  \"version\" "
                     "1\n}\n");
    errno = 0;
    assert_null (tr_record_load (bad, &err));
    assert_int_equal (errno, EINVAL);
    assert_string_equal (err.file, bad);
    assert_int_equal (err.line, 3);
    assert_int_equal (err.column, 13);
    snprintf (want, sizeof (want),
              "%s:3:13: invalid JSON: ':' expected near '1'", bad);
    assert_string_equal (tr_error_str (&err), want);

    /* Schema errors carry the file. */
    tmp_path (invalid_path, sizeof (invalid_path), "invalid.json");
    mutate (rec, "identity.job_id", json_string ("../../etc"));
    free (text);
    text = tr_record_dumps (rec);
    write_text (invalid_path, text);
    errno = 0;
    assert_null (tr_record_load (invalid_path, &err));
    assert_int_equal (errno, EINVAL);
    snprintf (want, sizeof (want),
              "%s: identity.job_id: unsafe identifier '../../etc'",
              invalid_path);
    assert_string_equal (tr_error_str (&err), want);

    /* Too big, judged by size before reading. */
    tmp_path (big, sizeof (big), "big.json");
    fd = open (big, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true (fd >= 0);
    assert_int_equal (ftruncate (fd, TR_RECORD_MAX_BYTES + 1), 0);
    close (fd);
    errno = 0;
    assert_null (tr_record_load (big, &err));
    assert_int_equal (errno, EFBIG);
    assert_string_equal (err.text, "record is larger than 4194304 bytes");

    errno = 0;
    tmp_path (path, sizeof (path), "absent.json");
    assert_null (tr_record_load (path, &err));
    assert_int_equal (errno, ENOENT);
    assert_string_equal (err.file, path);

    free (text);
    json_decref (rec);
}

/* Allocation failure sweep (jansson test_chaos.c): fail the Nth jansson
 * allocation for every N until the operation succeeds; every failure
 * must be a clean NULL with errno = ENOMEM and leak nothing.
 */
static int chaos_countdown = -1;

static void *chaos_malloc (size_t size)
{
    if (chaos_countdown == 0)
        return NULL;
    if (chaos_countdown > 0)
        chaos_countdown--;
    return malloc (size);
}

static void chaos_free (void *p)
{
    free (p);
}

static void test_oom_sweep (void **state)
{
    json_t *rec = make_record ();
    char *text = tr_record_dumps (rec);
    tr_error_t err;
    int n, failures;
    bool done;

    (void)state;
    assert_non_null (text);
    json_set_alloc_funcs (chaos_malloc, chaos_free);

    for (n = 0, done = false, failures = 0; !done && n < 100000; n++) {
        json_t *r;
        chaos_countdown = n;
        errno = 0;
        r = tr_record_parse (text, strlen (text), &err);
        if (r) {
            done = true;
            json_decref (r);
        }
        else {
            /* jansson sometimes reports a failed allocation inside the
             * parser as a syntax error; either way it must be clean.
             */
            failures++;
            assert_true (errno == ENOMEM || errno == EINVAL);
        }
    }
    assert_true (done);
    assert_true (failures > 10);

    for (n = 0, done = false; !done && n < 1000; n++) {
        json_t *r;
        chaos_countdown = n;
        errno = 0;
        if ((r = tr_record_create ("final"))) {
            done = true;
            json_decref (r);
        }
        else
            assert_int_equal (errno, ENOMEM);
    }
    assert_true (done);

    for (n = 0, done = false; !done && n < 1000; n++) {
        char *s;
        chaos_countdown = n;
        errno = 0;
        if ((s = tr_record_canonical (rec))) {
            done = true;
            free (s);
        }
        else
            assert_int_equal (errno, ENOMEM);
    }
    assert_true (done);

    chaos_countdown = -1;
    json_set_alloc_funcs (malloc, free);
    free (text);
    json_decref (rec);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_id_is_safe),
        cmocka_unit_test (test_create),
        cmocka_unit_test (test_valid_record),
        cmocka_unit_test (test_missing_members),
        cmocka_unit_test (test_mutations),
        cmocka_unit_test (test_culprit_valid),
        cmocka_unit_test (test_bounds),
        cmocka_unit_test (test_depth),
        cmocka_unit_test (test_parse_errors),
        cmocka_unit_test (test_parse_trailing_and_utf8),
        cmocka_unit_test (test_parse_size),
        cmocka_unit_test (test_roundtrip),
        cmocka_unit_test (test_short_reals),
        cmocka_unit_test (test_printable),
        cmocka_unit_test (test_canonical),
        cmocka_unit_test (test_golden),
        cmocka_unit_test_setup_teardown (test_load, setup_tmpdir,
                                         teardown_tmpdir),
        cmocka_unit_test (test_oom_sweep),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
