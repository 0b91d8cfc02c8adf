/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for merge.c, the merged view of a step's per-node records,
 * and for the job view built on it (report.c): natural node order, step
 * order, the worst state, sums and maxima over two and three nodes, a
 * node whose record is missing, steps that must not merge, a single node
 * that reads as before, absent optional members, duplicate records of a
 * node, and an allocation failure sweep.  Fixture records are built from
 * JSON text here, each the smallest valid record plus what the test is
 * about.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/record/merge.h"
#include "libtracer/record/record.h"
#include "libtracer/view/report.h"

#define GiB 1073741824LL

#include "record-fixture.h"
#include "libtracer/record/states.h"

static json_t *rec (const char *overlay)
{
    return rec_with (overlay, true);
}

/* recs from NULL-terminated overlays, in that order. */
static json_t *recs_of (const char *first, ...)
{
    json_t *a = json_array ();
    va_list ap;

    assert_non_null (a);
    va_start (ap, first);
    for (const char *o = first; o; o = va_arg (ap, const char *))
        assert_int_equal (json_array_append_new (a, rec (o)), 0);
    va_end (ap);
    return a;
}

/* The member at a dotted path; numeric parts index arrays ("rows.1"). */
static json_t *at (json_t *o, const char *path)
{
    char buf[256], *save = NULL, *part;

    assert_true (strlen (path) < sizeof (buf));
    memcpy (buf, path, strlen (path) + 1);
    for (part = strtok_r (buf, ".", &save); part && o;
         part = strtok_r (NULL, ".", &save)) {
        if (json_is_array (o)) {
            char *end;
            long i = strtol (part, &end, 10);
            assert_true (*end == '\0' && i >= 0);
            o = json_array_get (o, (size_t)i);
        }
        else
            o = json_object_get (o, part);
    }
    return o;
}

static double dv (json_t *o, const char *path)
{
    json_t *v = at (o, path);

    if (!json_is_number (v))
        fail_msg ("%s: not a number", path);
    return json_number_value (v);
}

static json_int_t iv (json_t *o, const char *path)
{
    json_t *v = at (o, path);

    if (!json_is_integer (v))
        fail_msg ("%s: not an integer", path);
    return json_integer_value (v);
}

static const char *sv (json_t *o, const char *path)
{
    json_t *v = at (o, path);

    if (!json_is_string (v))
        fail_msg ("%s: not a string", path);
    return json_string_value (v);
}

static bool bv (json_t *o, const char *path)
{
    json_t *v = at (o, path);

    if (!json_is_boolean (v))
        fail_msg ("%s: not a boolean", path);
    return json_is_true (v);
}

static void assert_absent (json_t *o, const char *path)
{
    if (at (o, path))
        fail_msg ("%s: present, expected absent", path);
}

static void assert_near (double got, double want)
{
    if (fabs (got - want) > 1e-9 * (fabs (want) + 1))
        fail_msg ("got %.12g, expected %.12g", got, want);
}

static int sign (int v)
{
    return (v > 0) - (v < 0);
}

static void test_natcmp (void **state)
{
    static const struct {
        const char *a, *b;
        int want;
    } cases[] = {
        { "node2", "node10", -1 },
        { "node10", "node2", 1 },
        { "node1", "node1", 0 },
        { "trnode1", "trnode2", -1 },
        { "trnode9", "trnode10", -1 },
        { "node", "node1", -1 },
        { "a", "b", -1 },
        { "", "a", -1 },
        { "x9y", "x10y", -1 },
        { "n10a", "n10b", -1 },
        { "rack2-node10", "rack10-node2", -1 },
        { "n7", "n007", -1 }, /* equal values: fewer zeros first */
        { "n007", "n7", 1 },
        { "n007x", "n7y", -1 }, /* the value decides before the zeros */
        { "n0", "n1", -1 },
        { "99999999999999999999999", "100000000000000000000000", -1 },
        { "123456789012345678901", "123456789012345678902", -1 },
        { "node-b", "node-a", 1 },
        { "10", "9", 1 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        int got = sign (tr_merge_natcmp (cases[i].a, cases[i].b));
        if (got != cases[i].want)
            fail_msg ("natcmp (%s, %s) = %d, expected %d", cases[i].a,
                      cases[i].b, got, cases[i].want);
    }
    assert_int_equal (tr_merge_natcmp (NULL, ""), 0);
    assert_true (tr_merge_natcmp (NULL, "a") < 0);
}

static void test_stepcmp (void **state)
{
    static const char *order[] = { "batch", "extern", "interactive", "0",
                                   "0+1",   "1",      "2",           "10",
                                   "abc",   "abd" };
    size_t n = sizeof (order) / sizeof (order[0]);

    (void)state;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int got = sign (tr_merge_stepcmp (order[i], order[j]));
            int want = i < j ? -1 : i > j;
            if (got != want)
                fail_msg ("stepcmp (%s, %s) = %d, expected %d", order[i],
                          order[j], got, want);
        }
}

static void test_state_rank (void **state)
{
    static const char *order[] = { "completed", "running",   "unknown",
                                   "failed",    "cancelled", "timeout",
                                   "oom",       "incomplete" };

    (void)state;
    for (size_t i = 1; i < sizeof (order) / sizeof (order[0]); i++)
        if (tr_states_rank (order[i - 1]) >= tr_states_rank (order[i]))
            fail_msg ("%s should rank below %s", order[i - 1], order[i]);
    assert_int_equal (tr_states_rank ("bogus"), tr_states_rank ("unkn"
                                                                "ow"
                                                                "n"));
    assert_int_equal (tr_states_rank (NULL), tr_states_rank ("unknow"
                                                             "n"));
}

/* The worst of two nodes' states, and the largest exit code. */
static void test_worst_state (void **state)
{
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        { "completed", "completed", "completed" },
        { "completed", "running", "running" },
        { "running", "unknown", "unknown" },
        { "failed", "unknown", "failed" },
        { "cancelled", "failed", "cancelled" },
        { "timeout", "cancelled", "timeout" },
        { "oom", "timeout", "oom" },
        { "oom", "incomplete", "incomplete" },
        { "completed", "failed", "failed" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        char o1[256], o2[256];
        json_t *recs = json_array (), *steps;

        snprintf (o1, sizeof (o1),
                  "{'identity': {'node': 'n1'}, 'outcome': {'state': '%s',"
                  " 'exit_code': 2}}",
                  cases[i].a);
        snprintf (o2, sizeof (o2),
                  "{'identity': {'node': 'n2'}, 'outcome': {'state': '%s',"
                  " 'exit_code': 1}}",
                  cases[i].b);
        /* not validated: a final record is never "running" */
        json_array_append_new (recs, rec_with (o1, false));
        json_array_append_new (recs, rec_with (o2, false));
        assert_non_null (steps = tr_merge_steps (recs));
        assert_int_equal (json_array_size (steps), 1);
        if (strcmp (sv (steps, "0.state"), cases[i].want))
            fail_msg ("worst of %s and %s: got %s, expected %s", cases[i].a,
                      cases[i].b, sv (steps, "0.state"), cases[i].want);
        assert_int_equal (iv (steps, "0.exit_code"), 2);
        json_decref (steps);
        json_decref (recs);
    }
}

/* node10 first in recs: the merge must still put node2 first. */
static const char *two_node10 =
    "{'identity': {'node': 'node10', 'node_index': 1, 'step_name': 'a.out'},"
    " 'request': {'nodes': 2, 'cpus_per_task': 2, 'tasks_on_node': 2,"
    "  'mem_bytes': 4294967296},"
    " 'time': {'start_unix_ms': 1005000, 'end_unix_ms': 1125000,"
    "  'elapsed_s': 120},"
    " 'summary': {'cpu': {'user_s': 84, 'system_s': 20, 'total_s': 104},"
    "  'memory': {'peak_bytes': 3221225472},"
    "  'io': {'source': 'io.stat', 'read_bytes': 1000, 'write_bytes': 2000},"
    "  'network': {'scope': 'namespace', 'source': 'proc-net-dev',"
    "   'interfaces': [{'name': 'eth0', 'rx_bytes': 1, 'tx_bytes': 2,"
    "    'rx_packets': 1, 'tx_packets': 1}]}},"
    " 'tools': [{'name': 'a.out', 'count': 2, 'cpu_s': 95,"
    "  'peak_rss_bytes': 900, 'exit_codes': {'0': 1, '3': 1}}],"
    " 'outcome': {'state': 'failed', 'exit_code': 3,"
    "  'tasks': [{'task_id': 2, 'pid': 20}, {'task_id': 3, 'pid': 21}]}}";

static const char *two_node2 =
    "{'identity': {'node': 'node2', 'node_index': 0, 'step_name': 'a.out'},"
    " 'request': {'nodes': 2, 'cpus_on_node': 4, 'mem_bytes': 4294967296},"
    " 'summary': {'cpu': {'user_s': 150, 'system_s': 50, 'total_s': 200},"
    "  'memory': {'peak_bytes': 1073741824},"
    "  'io': {'source': 'io.stat', 'read_bytes': 100, 'write_bytes': 200},"
    "  'network': {'scope': 'namespace', 'source': 'proc-net-dev',"
    "   'interfaces': [{'name': 'eth0', 'rx_bytes': 10, 'tx_bytes': 20,"
    "    'rx_packets': 1, 'tx_packets': 1}]}},"
    " 'tools': [{'name': 'a.out', 'count': 2, 'cpu_s': 190,"
    "  'peak_rss_bytes': 500, 'exit_codes': {'0': 2}},"
    "  {'name': 'sh', 'count': 1, 'cpu_s': 1}],"
    " 'outcome': {'state': 'completed', 'exit_code': 0,"
    "  'tasks': [{'task_id': 0, 'pid': 10}, {'task_id': 1, 'pid': 11}]}}";

static void test_two_nodes (void **state)
{
    json_t *recs = recs_of (two_node10, two_node2, NULL);
    json_t *steps = tr_merge_steps (recs), *s;

    (void)state;
    assert_non_null (steps);
    assert_int_equal (json_array_size (steps), 1);
    s = json_array_get (steps, 0);
    assert_string_equal (sv (s, "cluster"), "c1");
    assert_string_equal (sv (s, "job_id"), "77");
    assert_string_equal (sv (s, "step_id"), "0");
    assert_string_equal (sv (s, "step_name"), "a.out");
    assert_string_equal (sv (s, "nodes.0"), "node2");
    assert_string_equal (sv (s, "nodes.1"), "node10");
    assert_int_equal (iv (s, "nodes_reported"), 2);
    assert_int_equal (iv (s, "nodes_expected"), 2);
    assert_absent (s, "nodes_missing");
    assert_absent (s, "missing_node_indices");

    /* time: earliest start, latest end, longest elapsed */
    assert_int_equal (iv (s, "start_unix_ms"), 1000000);
    assert_int_equal (iv (s, "end_unix_ms"), 1125000);
    assert_near (dv (s, "elapsed_s"), 120);

    /* CPU summed, against 4 + 2*2 cores for the longest elapsed */
    assert_near (dv (s, "cpu.user_s"), 234);
    assert_near (dv (s, "cpu.system_s"), 70);
    assert_near (dv (s, "cpu.total_s"), 304);
    assert_near (dv (s, "cpu.cores"), 8);
    assert_near (dv (s, "cpu.efficiency"), 304.0 / (120 * 8));
    assert_true (bv (s, "cpu.exact"));
    assert_string_equal (sv (s, "cpu.source"), "cgroup-v2:cpu.stat");

    /* memory: the biggest node against its request, and the sum */
    assert_int_equal (iv (s, "memory.peak_max_bytes"), 3 * GiB);
    assert_string_equal (sv (s, "memory.peak_max_node"), "node10");
    assert_int_equal (iv (s, "memory.request_bytes"), 4 * GiB);
    assert_int_equal (iv (s, "memory.peak_sum_bytes"), 4 * GiB);
    assert_true (bv (s, "memory.exact"));
    assert_string_equal (sv (s, "memory.definition"), "cgroup-charged");

    /* I/O and the step's own network traffic summed */
    assert_int_equal (iv (s, "io.nodes"), 2);
    assert_int_equal (iv (s, "io.read_bytes"), 1100);
    assert_int_equal (iv (s, "io.write_bytes"), 2200);
    assert_string_equal (sv (s, "io.source"), "io.stat");
    assert_absent (s, "io.read_ops");
    assert_absent (s, "io.proc");
    assert_string_equal (sv (s, "network.scope"), "namespace");
    assert_int_equal (iv (s, "network.namespace_nodes"), 2);
    assert_int_equal (iv (s, "network.node_scope_nodes"), 0);
    assert_int_equal (iv (s, "network.rx_bytes"), 11);
    assert_int_equal (iv (s, "network.tx_bytes"), 22);

    /* tasks and tools */
    assert_int_equal (iv (s, "tasks"), 4);
    assert_int_equal (json_array_size (at (s, "task_list")), 4);
    assert_int_equal (iv (s, "task_list.0.task_id"), 0);
    assert_int_equal (iv (s, "task_list.3.task_id"), 3);
    assert_int_equal (json_array_size (at (s, "tools")), 2);
    assert_string_equal (sv (s, "tools.0.name"), "a.out");
    assert_int_equal (iv (s, "tools.0.count"), 4);
    assert_near (dv (s, "tools.0.cpu_s"), 285);
    assert_int_equal (iv (s, "tools.0.peak_rss_bytes"), 900);
    assert_int_equal (iv (s, "tools.0.nodes"), 2);
    assert_int_equal (iv (s, "tools.0.exit_codes.0"), 3);
    assert_int_equal (iv (s, "tools.0.exit_codes.3"), 1);
    assert_string_equal (sv (s, "tools.1.name"), "sh");
    assert_int_equal (iv (s, "tools.1.nodes"), 1);

    /* outcome */
    assert_string_equal (sv (s, "state"), "failed");
    assert_int_equal (iv (s, "exit_code"), 3);
    assert_absent (s, "signal");
    assert_true (bv (s, "complete"));
    assert_true (bv (s, "exact"));

    /* rows: natural node order, each against its own cores */
    assert_int_equal (json_array_size (at (s, "rows")), 2);
    assert_string_equal (sv (s, "rows.0.node"), "node2");
    assert_int_equal (iv (s, "rows.0.index"), 1);
    assert_true (bv (s, "rows.0.counted"));
    assert_near (dv (s, "rows.0.efficiency"), 200.0 / (100 * 4));
    assert_string_equal (sv (s, "rows.1.node"), "node10");
    assert_int_equal (iv (s, "rows.1.index"), 0);
    assert_int_equal (iv (s, "rows.1.node_index"), 1);
    assert_near (dv (s, "rows.1.cores"), 4);
    assert_near (dv (s, "rows.1.efficiency"), 104.0 / (120 * 4));
    assert_int_equal (iv (s, "rows.1.mem_peak_bytes"), 3 * GiB);
    assert_int_equal (iv (s, "rows.1.mem_request_bytes"), 4 * GiB);
    assert_string_equal (sv (s, "rows.1.state"), "failed");
    assert_int_equal (iv (s, "rows.1.exit_code"), 3);
    assert_int_equal (iv (s, "rows.1.tasks"), 2);

    json_decref (steps);
    json_decref (recs);
}

static const char *three_node3 =
    "{'identity': {'node': 'trnode3', 'node_index': 2},"
    " 'request': {'nodes': 3, 'cpus_on_node': 2, 'mem_bytes': 8589934592},"
    " 'time': {'elapsed_s': 60},"
    " 'summary': {'cpu': {'user_s': 24, 'system_s': 6, 'total_s': 30,"
    "   'exact': false},"
    "  'memory': {'peak_bytes': 3221225472},"
    "  'network': {'scope': 'namespace', 'source': 'proc-net-dev',"
    "   'interfaces': [{'name': 'eth0', 'rx_bytes': 5, 'tx_bytes': 7,"
    "    'rx_packets': 1, 'tx_packets': 1}]}},"
    " 'outcome': {'state': 'oom', 'exit_code': 0, 'signal': 9}}";

static const char *three_node1 =
    "{'identity': {'node': 'trnode1', 'node_index': 0},"
    " 'request': {'nodes': 3, 'cpus_on_node': 2, 'mem_bytes': 8589934592},"
    " 'time': {'elapsed_s': 50},"
    " 'summary': {'cpu': {'user_s': 8, 'system_s': 2, 'total_s': 10},"
    "  'memory': {'peak_bytes': 1073741824},"
    "  'io': {'source': 'none', 'read_bytes': 0, 'write_bytes': 0,"
    "   'proc': {'rchar': 5, 'wchar': 6, 'source': 'proc', 'exact': true}},"
    "  'network': {'scope': 'node', 'source': 'proc-net-dev',"
    "   'interfaces': [{'name': 'eth0', 'rx_bytes': 1000, 'tx_bytes': 1000,"
    "    'rx_packets': 1, 'tx_packets': 1}]}},"
    " 'outcome': {'state': 'timeout', 'exit_code': 1}}";

static const char *three_node2 =
    "{'identity': {'node': 'trnode2', 'node_index': 1},"
    " 'request': {'nodes': 3, 'mem_bytes': 8589934592},"
    " 'time': {'elapsed_s': 70},"
    " 'summary': {'cpu': {'user_s': 16, 'system_s': 4, 'total_s': 20},"
    "  'memory': {'peak_bytes': 2147483648}},"
    " 'outcome': {'state': 'cancelled', 'complete': false, 'exit_code': 137,"
    "  'signal': 15}}";

static void test_three_nodes (void **state)
{
    json_t *recs = recs_of (three_node3, three_node1, three_node2, NULL);
    json_t *steps = tr_merge_steps (recs), *s;

    (void)state;
    assert_non_null (steps);
    assert_int_equal (json_array_size (steps), 1);
    s = json_array_get (steps, 0);
    assert_string_equal (sv (s, "nodes.0"), "trnode1");
    assert_string_equal (sv (s, "nodes.1"), "trnode2");
    assert_string_equal (sv (s, "nodes.2"), "trnode3");
    assert_int_equal (iv (s, "nodes_reported"), 3);
    assert_absent (s, "nodes_missing");
    assert_near (dv (s, "elapsed_s"), 70);
    assert_near (dv (s, "cpu.total_s"), 60);
    assert_near (dv (s, "cpu.user_s"), 48);
    assert_near (dv (s, "cpu.system_s"), 12);
    assert_false (bv (s, "cpu.exact"));
    /* trnode2's cores are unknown: no total, no efficiency */
    assert_absent (s, "cpu.cores");
    assert_absent (s, "cpu.efficiency");
    assert_absent (s, "rows.1.cores");
    assert_absent (s, "rows.1.efficiency");
    assert_near (dv (s, "rows.0.efficiency"), 10.0 / (50 * 2));
    assert_int_equal (iv (s, "memory.peak_max_bytes"), 3 * GiB);
    assert_string_equal (sv (s, "memory.peak_max_node"), "trnode3");
    assert_int_equal (iv (s, "memory.request_bytes"), 8 * GiB);
    assert_int_equal (iv (s, "memory.peak_sum_bytes"), 6 * GiB);
    assert_string_equal (sv (s, "state"), "oom");
    assert_int_equal (iv (s, "exit_code"), 137);
    /* the first non-zero signal in node order: trnode2's */
    assert_int_equal (iv (s, "signal"), 15);
    assert_false (bv (s, "complete"));
    assert_false (bv (s, "exact"));
    /* io.source "none": no device counters; the process counters stay */
    assert_absent (s, "io.nodes");
    assert_absent (s, "io.read_bytes");
    assert_int_equal (iv (s, "io.proc.rchar"), 5);
    assert_int_equal (iv (s, "io.proc.wchar"), 6);
    assert_int_equal (iv (s, "io.proc.nodes"), 1);
    assert_true (bv (s, "io.proc.exact"));
    /* node-scoped counters are not added to the step's own traffic */
    assert_string_equal (sv (s, "network.scope"), "mixed");
    assert_int_equal (iv (s, "network.nodes"), 2);
    assert_int_equal (iv (s, "network.namespace_nodes"), 1);
    assert_int_equal (iv (s, "network.node_scope_nodes"), 1);
    assert_int_equal (iv (s, "network.rx_bytes"), 5);
    assert_int_equal (iv (s, "network.tx_bytes"), 7);
    json_decref (steps);
    json_decref (recs);
}

static void test_missing_node (void **state)
{
    json_t *recs = recs_of ("{'identity': {'node': 'node3', 'node_index': 2},"
                            " 'request': {'nodes': 3}}",
                            "{'identity': {'node': 'node1', 'node_index': 0},"
                            " 'request': {'nodes': 3}}",
                            NULL);
    json_t *steps = tr_merge_steps (recs), *s;

    (void)state;
    assert_non_null (steps);
    s = json_array_get (steps, 0);
    assert_int_equal (iv (s, "nodes_expected"), 3);
    assert_int_equal (iv (s, "nodes_reported"), 2);
    assert_int_equal (iv (s, "nodes_missing"), 1);
    assert_int_equal (json_array_size (at (s, "missing_node_indices")), 1);
    assert_int_equal (iv (s, "missing_node_indices.0"), 1);
    json_decref (steps);

    /* without node indices the count still shows, the list cannot */
    json_object_del (json_object_get (json_array_get (recs, 0), "identity"),
                     "node_index");
    assert_non_null (steps = tr_merge_steps (recs));
    s = json_array_get (steps, 0);
    assert_int_equal (iv (s, "nodes_missing"), 1);
    assert_absent (s, "missing_node_indices");
    json_decref (steps);
    json_decref (recs);
}

/* Records of different steps and jobs stay apart, in step order. */
static void test_steps_not_merged (void **state)
{
    static const struct {
        const char *job, *step;
        double cpu;
    } want[] = {
        { "8", "0", 1 },   { "77", "batch", 2 }, { "77", "extern", 3 },
        { "77", "0", 4 },  { "77", "1", 5 },     { "77", "2", 6 },
        { "77", "10", 7 },
    };
    json_t *recs = recs_of ("{'identity': {'step_id': '10'}, 'summary': "
                            "{'cpu': {'total_s': 7}}}",
                            "{'identity': {'step_id': '1'}, 'summary': {'cpu': "
                            "{'total_s': 5}}}",
                            "{'identity': {'step_id': 'extern'},"
                            " 'summary': {'cpu': {'total_s': 3}}}",
                            "{'identity': {'step_id': '0'}, 'summary': {'cpu': "
                            "{'total_s': 4}}}",
                            "{'identity': {'job_id': '8'}, 'summary': {'cpu': "
                            "{'total_s': 1}}}",
                            "{'identity': {'step_id': '2', 'node': 'node2'},"
                            " 'summary': {'cpu': {'total_s': 6}}}",
                            "{'identity': {'step_id': 'batch'},"
                            " 'summary': {'cpu': {'total_s': 2}}}",
                            NULL);
    json_t *steps = tr_merge_steps (recs), *s;
    size_t i;

    (void)state;
    assert_non_null (steps);
    assert_int_equal (json_array_size (steps), 7);
    json_array_foreach (steps, i, s)
    {
        assert_string_equal (sv (s, "job_id"), want[i].job);
        assert_string_equal (sv (s, "step_id"), want[i].step);
        assert_int_equal (json_array_size (at (s, "rows")), 1);
        assert_int_equal (iv (s, "nodes_reported"), 1);
        assert_near (dv (s, "cpu.total_s"), want[i].cpu);
    }
    json_decref (steps);
    json_decref (recs);
}

/* An array task's steps stay together under its id (7_3) when one of
 * its records lacks the array (an extern step the controller did not
 * describe): tasks 7_1 (job 8), 7_3 (job 10) and 7_5 (job 12).
 */
static void test_array_task_steps_together (void **state)
{
    static const struct {
        const char *job, *step;
    } want[] = {
        { "8", "batch" }, { "10", "batch" }, { "10", "extern" },
        { "10", "0" },    { "12", "batch" },
    };
    json_t *recs = recs_of ("{'identity': {'job_id': '12', 'step_id': 'batch', "
                            "'array_job_id': '7', 'array_task_id': 5}}",
                            "{'identity': {'job_id': '10', 'step_id': "
                            "'extern'}}",
                            "{'identity': {'job_id': '10', 'step_id': '0', "
                            "'array_job_id': '7', 'array_task_id': 3}}",
                            "{'identity': {'job_id': '8', 'step_id': 'batch', "
                            "'array_job_id': '7', 'array_task_id': 1}}",
                            "{'identity': {'job_id': '10', 'step_id': 'batch', "
                            "'array_job_id': '7', 'array_task_id': 3}}",
                            NULL);
    json_t *steps = tr_merge_steps (recs), *s;
    size_t i;

    (void)state;
    assert_non_null (steps);
    assert_int_equal (json_array_size (steps), 5);
    json_array_foreach (steps, i, s)
    {
        assert_string_equal (sv (s, "job_id"), want[i].job);
        assert_string_equal (sv (s, "step_id"), want[i].step);
    }
    json_decref (steps);
    json_decref (recs);
}

static void test_single_node (void **state)
{
    json_t *recs = recs_of ("{'request': {'nodes': 1, 'cpus_on_node': 2, "
                            "'mem_bytes': 1000},"
                            " 'summary': {'cpu': {'user_s': 30, 'system_s': "
                            "10, 'total_s': 40},"
                            "  'memory': {'peak_bytes': 500}},"
                            " 'outcome': {'exit_code': 0, 'tasks': "
                            "[{'task_id': 0, 'pid': 9}]}}",
                            NULL);
    json_t *steps = tr_merge_steps (recs), *s;

    (void)state;
    assert_non_null (steps);
    assert_int_equal (json_array_size (steps), 1);
    s = json_array_get (steps, 0);
    assert_int_equal (iv (s, "nodes_reported"), 1);
    assert_int_equal (iv (s, "nodes_expected"), 1);
    assert_absent (s, "nodes_missing");
    assert_near (dv (s, "elapsed_s"), 100);
    assert_near (dv (s, "cpu.total_s"), 40);
    assert_near (dv (s, "cpu.efficiency"), 40.0 / (100 * 2));
    assert_int_equal (iv (s, "memory.peak_max_bytes"), 500);
    assert_int_equal (iv (s, "memory.peak_sum_bytes"), 500);
    assert_int_equal (iv (s, "memory.request_bytes"), 1000);
    assert_int_equal (iv (s, "tasks"), 1);
    assert_string_equal (sv (s, "state"), "completed");
    assert_int_equal (iv (s, "exit_code"), 0);
    json_decref (steps);
    json_decref (recs);
}

/* What no node reported is absent, not zero; nothing crashes. */
static void test_optional_absent (void **state)
{
    json_t *recs = json_array (), *steps, *s, *r;
    char *text = NULL;
    size_t size = 0;
    FILE *out;

    (void)state;
    r = rec ("{'identity': {'node': 'n1'}}");
    json_object_del (r, "tools");
    json_array_append_new (recs, r);
    /* a running snapshot: no end, no tools member either */
    r = rec_with ("{'kind': 'snapshot', 'identity': {'node': 'n2'},"
                  " 'time': {'elapsed_s': 5},"
                  " 'outcome': {'state': 'running', 'complete': false}}",
                  false);
    json_object_del (json_object_get (r, "time"), "end_unix_ms");
    json_object_del (r, "tools");
    json_object_del (json_object_get (r, "outcome"), "tasks");
    json_array_append_new (recs, r);

    assert_non_null (steps = tr_merge_steps (recs));
    s = json_array_get (steps, 0);
    assert_absent (s, "io");
    assert_absent (s, "network");
    assert_absent (s, "tools");
    assert_absent (s, "exit_code");
    assert_absent (s, "signal");
    assert_absent (s, "end_unix_ms");
    assert_absent (s, "nodes_expected");
    assert_absent (s, "step_name");
    assert_absent (s, "cpu.cores");
    assert_absent (s, "cpu.efficiency");
    assert_absent (s, "memory.request_bytes");
    assert_absent (s, "rows.0.node_index");
    assert_absent (s, "rows.0.mem_request_bytes");
    assert_int_equal (iv (s, "tasks"), 0);
    assert_string_equal (sv (s, "state"), "running");
    assert_false (bv (s, "complete"));
    json_decref (steps);

    /* the view prints none of the lines it has nothing for */
    assert_non_null (out = open_memstream (&text, &size));
    assert_int_equal (tr_report_job_view (out, recs, NULL), 0);
    fclose (out);
    assert_non_null (strstr (text, "Step 0 on 2 nodes: RUNNING\n"));
    assert_non_null (strstr (text, "CPU usage:"));
    assert_null (strstr (text, "CPU efficiency"));
    assert_null (strstr (text, "I/O"));
    assert_null (strstr (text, "Network"));
    assert_null (strstr (text, "Tools"));
    assert_null (strstr (text, "requested"));
    free (text);
    json_decref (recs);
}

/* A node's record given twice (a snapshot beside the final one) counts
 * once: the final one.
 */
static void test_duplicate_node (void **state)
{
    json_t *recs = json_array (), *steps, *s;

    (void)state;
    json_array_append_new (recs, rec_with ("{'kind': 'snapshot',"
                                           " 'summary': {'cpu': {'total_s': "
                                           "5}},"
                                           " 'outcome': {'state': 'running',"
                                           "  'complete': false}}",
                                           false));
    json_array_append_new (recs, rec ("{'summary': {'cpu': {'total_s': 10}}}"));
    json_array_append_new (recs, rec ("{'identity': {'node': 'node2'},"
                                      " 'summary': {'cpu': {'total_s': 20}}}"));
    assert_non_null (steps = tr_merge_steps (recs));
    s = json_array_get (steps, 0);
    assert_int_equal (iv (s, "nodes_reported"), 2);
    assert_int_equal (json_array_size (at (s, "nodes")), 2);
    assert_int_equal (json_array_size (at (s, "rows")), 3);
    assert_int_equal (iv (s, "rows.0.index"), 1);
    assert_true (bv (s, "rows.0.counted"));
    assert_int_equal (iv (s, "rows.1.index"), 0);
    assert_false (bv (s, "rows.1.counted"));
    assert_string_equal (sv (s, "rows.2.node"), "node2");
    assert_near (dv (s, "cpu.total_s"), 30);
    assert_string_equal (sv (s, "state"), "completed");
    assert_true (bv (s, "complete"));
    json_decref (steps);
    json_decref (recs);
}

static void test_invalid (void **state)
{
    json_t *o = json_object (), *a = json_array (), *steps;

    (void)state;
    errno = 0;
    assert_null (tr_merge_steps (NULL));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (tr_merge_steps (o));
    assert_int_equal (errno, EINVAL);
    assert_non_null (steps = tr_merge_steps (a));
    assert_int_equal (json_array_size (steps), 0);
    json_decref (steps);
    json_array_append_new (a, json_integer (1));
    errno = 0;
    assert_null (tr_merge_steps (a));
    assert_int_equal (errno, EINVAL);
    json_decref (a);
    json_decref (o);
}

/* The job view of recs with notes, as a string the caller frees. */
static char *view (json_t *recs, json_t *notes)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    /* wide enough that no line wraps: the layout is checked here,
     * wrapping in test_view_wrap
     */
    struct tr_report_view_opts o = { .width = TR_REPORT_MAX_WIDTH };

    assert_non_null (out);
    assert_int_equal (tr_report_job_view_ex (out, recs, notes, &o), 0);
    assert_int_equal (fclose (out), 0);
    return text;
}

static void assert_has (const char *text, const char *line)
{
    if (!strstr (text, line))
        fail_msg ("expected in the view: \"%s\"\nview:\n%s", line, text);
}

static size_t count (const char *text, const char *s)
{
    size_t n = 0;

    for (const char *p = text; (p = strstr (p, s)); p++)
        n++;
    return n;
}

static void test_view_two_nodes (void **state)
{
    json_t *recs = recs_of (two_node10, two_node2, NULL);
    json_t *notes =
        json_pack ("{s:s s:s}", "0", "NOTE-node10", "1", "NOTE-node2");
    char *text = view (recs, notes);
    const char *n2 = "      Step 0 on node2: COMPLETED, exit code 0:0; "
                     "00:01:40, "
                     "CPU "
                     "200.00 s (50.0% of 4 cores), memory peak 1.0 GiB of 4.0 "
                     "GiB "
                     "(25.0%)\n"
                     "        Record:         NOTE-node2\n";
    const char *n10 = "      Step 0 on node10: FAILED, exit code 3:0; "
                      "00:02:00, "
                      "CPU "
                      "104.00 s (21.7% of 4 cores), memory peak 3.0 GiB of 4.0 "
                      "GiB "
                      "(75.0%)\n"
                      "        Record:         NOTE-node10\n";

    (void)state;
    assert_has (text, "Job 77 on cluster c1 (slurm)\n"
                      "  User/Group:     1000/? (uid 1000)\n");
    assert_has (text, "\n  Step 0 on 2 nodes (a.out): FAILED, exit code 3:0\n"
                      "    Cause:          tool-error: the step exited 3 (no "
                      "process exit was observed)\n");
    assert_has (text, "\n    Nodes:          node2, node10; 2 of 2 nodes "
                      "reported\n");
    assert_has (text, "\n    Elapsed:        00:02:00 (the longest node)\n");
    assert_has (text, "\n    CPU time:       304.00 s (user 234.00 s, system "
                      "70.00 s), all nodes [cgroup-v2:cpu.stat, exact]\n");
    assert_has (text, "\n    CPU efficiency: 31.7% of 8 allocated cores on "
                      "all nodes\n");
    assert_has (text, "\n    Memory peak:    3.0 GiB on node10, the largest "
                      "node, of 4.0 GiB requested per node (75.0%) "
                      "[cgroup-v2:memory.peak, exact]\n");
    assert_has (text, "\n    Memory summed:  4.0 GiB,");
    assert_has (text, "\n    Tasks:          4\n");
    assert_has (text, "\n    Storage I/O:    read 1.1 KiB, written 2.1 KiB "
                      "[io.stat] on 2 of 2 nodes\n");
    assert_has (text, "\n    Network:        received 11 B, sent 22 B in the "
                      "step's own namespace on 2 nodes\n");
    assert_has (text, "\n    Tools:          a.out x4 (285.00 s CPU, peak "
                      "900 B), sh x1 (1.00 s CPU)\n");
    assert_has (text, "\n    Records:        complete on every node; CPU and "
                      "memory exact on every node\n");
    assert_has (text, n2);
    assert_has (text, n10);
    /* natural order: node2 before node10, each note under its own node */
    assert_true (strstr (text, n2) < strstr (text, n10));
    assert_int_equal (count (text, "Record:"), 2);
    assert_int_equal (count (text, "Step 0 on"), 3);
    free (text);
    json_decref (notes);
    json_decref (recs);
}

/* One record reads as it did before steps were merged, with the lines
 * of its summary (tools, idle time, diagnosis) added.
 */
static void test_view_single_node (void **state)
{
    json_t *recs = json_array (), *notes;
    json_error_t jerr;
    json_t *r =
        json_load_file (TEST_SRCDIR "/fixtures/records/basic.json", 0, &jerr);
    char *text;

    (void)state;
    assert_non_null (r);
    json_array_append_new (recs, r);
    notes = json_pack ("{s:s}", "0", "signature valid (uid 0)");
    text = view (recs, notes);
    assert_string_equal (text, "Job 24 \"r\xc3\xa9sum\xc3\xa9-train\" on "
                               "cluster vm (slurm)\n"
                               "  User/Group:     testuser/1000 (uid 1000, gid "
                               "1000), account research, partition debug\n"
                               "  State:          OUT_OF_MEMORY (exit code "
                               "0:125)\n"
                               "  Cores:          2 on 1 node\n"
                               "  CPU efficiency: 1.2% of 8.5 s core-walltime "
                               "(0.1 s CPU)\n"
                               "  Memory:         50.0 MiB peak of 50.0 MiB "
                               "requested (100.0%)\n"
                               "  Time:           00:00:04 of 00:10:00 limit "
                               "(0.7%)\n"
                               "  Step 0 on node1 (python3): OUT_OF_MEMORY, "
                               "exit code 0:125\n"
                               "    Cause:          oom: the OOM killer "
                               "killed 1 process of the step; memory peak "
                               "50.0 MiB of a 50.0 MiB limit\n"
                               "    Elapsed:        00:00:04\n"
                               "    CPU time:       0.10 s (user 0.10 s, "
                               "system "
                               "0.00 s) "
                               "[cgroup-v1:cpuacct.usage, exact]\n"
                               "    CPU efficiency: 1.2% of 2 allocated cores\n"
                               "    Memory peak:    50.0 MiB of 50.0 MiB "
                               "requested (100.0%) "
                               "[cgroup-v1:memory.max_usage_in_bytes, exact]\n"
                               "    Tasks:          1\n"
                               "    Tools:          python3 x1 (0.10 s CPU, "
                               "peak 49.0 MiB)\n"
                               "    Stalled:        unknown (not measured on "
                               "this node)\n"
                               "    Idle:           00:00:02 of 00:00:04 "
                               "(longest stretch 00:00:01)\n"
                               "    Diagnosis:      killed for lack of memory: "
                               "killed by SIGKILL (task 0 killed by the OOM "
                               "killer); out of memory: the OOM killer ended "
                               "1 process; the peak of 50M reached 100% of "
                               "the 50M limit; request more memory: "
                               "--mem=768M (a one-run estimate): at most 16x "
                               "the 50M it was killed at, a lower bound of "
                               "its need; its rise at the kill (21.0 MB/s "
                               "over the 596 s it had left of 600 s, time "
                               "limit) would need more\n"
                               "    Record:         signature valid (uid 0)\n"
                               "\n"
                               "Notes\n"
                               "  Memory means:   cgroup-charged: anonymous + "
                               "page cache + kernel memory charged to the "
                               "step cgroup\n");
    free (text);

    /* a single record of a step that had three nodes says so */
    json_object_set_new (json_object_get (r, "request"), "nodes",
                         json_integer (3));
    text = view (recs, notes);
    assert_has (text, "    Tasks:          1\n"
                      "    Nodes:          node1; 1 of 3 nodes reported, NO "
                      "RECORD from 2 (node index 1, 2)\n"
                      "    Tools:          python3 x1 (0.10 s CPU, peak "
                      "49.0 MiB)\n");
    assert_has (text, "\n    Diagnosis:      killed for lack of memory");
    assert_has (text, "\n    Record:         signature valid (uid 0)\n");
    free (text);
    json_decref (notes);
    json_decref (recs);
}

static void test_view_missing_node (void **state)
{
    json_t *recs = recs_of ("{'identity': {'node': 'node3', 'node_index': 2},"
                            " 'request': {'nodes': 3}}",
                            "{'identity': {'node': 'node1', 'node_index': 0},"
                            " 'request': {'nodes': 3}}",
                            NULL);
    char *text = view (recs, NULL);

    (void)state;
    assert_has (text, "\n  Step 0 on 2 of 3 nodes: COMPLETED\n");
    assert_has (text, "\n    Nodes:          node1, node3; 2 of 3 nodes "
                      "reported, NO RECORD from 1 (node index 1)\n");
    free (text);
    json_decref (recs);
}

/* The job view of recs at width columns (0: the default), as a string
 * the caller frees.
 */
static char *view_at (json_t *recs, int width)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    struct tr_report_view_opts o = { .width = width };

    assert_non_null (out);
    assert_int_equal (tr_report_job_view_ex (out, recs, NULL, &o), 0);
    assert_int_equal (fclose (out), 0);
    return text;
}

/* The widest line of text in columns (a UTF-8 character is one). */
static size_t widest (const char *text)
{
    size_t w = 0, c = 0;

    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            c = 0;
            continue;
        }
        if (((unsigned char)*p & 0xC0) != 0x80 && ++c > w)
            w = c;
    }
    return w;
}

/* The words of text (runs of non-blanks) joined by one space. */
static char *words (const char *text)
{
    char *w = malloc (strlen (text) + 1), *q = w;
    const char *p = text;

    assert_non_null (w);
    while (*p) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (q != w)
            *q++ = ' ';
        while (*p && *p != ' ' && *p != '\n')
            *q++ = *p++;
    }
    *q = '\0';
    return w;
}

/* A job of three steps from one record: batch, 0 and 1. */
static json_t *three_steps (const char *fixture)
{
    const char *ids[] = { "batch", "0", "1" };
    json_t *recs = json_array ();
    json_error_t jerr;

    for (size_t i = 0; i < 3; i++) {
        json_t *r = json_load_file (fixture, 0, &jerr);

        assert_non_null (r);
        json_object_set_new (json_object_get (r, "identity"), "step_id",
                             json_string (ids[i]));
        json_array_append_new (recs, r);
    }
    return recs;
}

/* At 80 columns every line of a multi-step job fits, continuation lines
 * hang under the value column, and no word is broken or lost: the words
 * are those of the unwrapped view.  What applies to every step is said
 * once.
 */
static void test_view_wrap (void **state)
{
    json_t *recs = three_steps (TEST_SRCDIR "/fixtures/records/"
                                            "collector-slurm-v2.json");
    char *narrow = view_at (recs, 0), *wide = view_at (recs, 1000);
    char *wn = words (narrow), *ww = words (wide);

    (void)state;
    assert_true (widest (wide) > 80);
    assert_true (widest (narrow) <= 80);
    assert_string_equal (wn, ww);
    assert_int_equal (count (narrow, "Step "), 3);
    /* the Diagnosis wraps, its next line under its value */
    assert_has (narrow, "\n    Diagnosis:      over-allocated CPU:");
    assert_has (narrow, "\n                    average");
    /* said once, at the end, not per step */
    assert_int_equal (count (narrow, "Memory means:"), 1);
    assert_int_equal (count (narrow, "node-wide"), 1);
    assert_true (strstr (narrow, "\nNotes\n") > strstr (narrow, "Step 1 on"));
    /* every label of a step lines up: the value starts at column 20 */
    assert_has (narrow, "\n    CPU efficiency: 21.4%");
    assert_has (narrow, "\n    Elapsed:        00:00:30");
    free (wn);
    free (ww);
    free (narrow);
    free (wide);
    json_decref (recs);
}

/* Wrapping itself: a word longer than the line is cut, the rest of a
 * line breaks at blanks and hangs under its value; without a label,
 * four columns in.
 */
static void test_wrap (void **state)
{
    const char *in = "  Label:  aaaa bbbb cccc dddd\n"
                     "x12345678901234567890123456789012345678901234\n"
                     "  no label here at all, eeee ffff\n";
    const char *want = "  Label:  aaaa bbbb\n"
                       "          cccc dddd\n"
                       "x1234567890123456789\n"
                       "    0123456789012345\n"
                       "    678901234\n"
                       "  no label here at\n"
                       "      all, eeee ffff\n";
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);

    (void)state;
    assert_non_null (out);
    assert_int_equal (tr_report_wrap (out, in, strlen (in), 20), 0);
    assert_int_equal (fclose (out), 0);
    assert_string_equal (text, want);
    free (text);
}

/* The scheduler's own processes are not the user's tools. */
static void test_view_no_scheduler_tools (void **state)
{
    json_t *recs = json_array ();
    json_error_t jerr;
    json_t *r = json_load_file (TEST_SRCDIR "/fixtures/records/"
                                            "collector-slurm-v1.json",
                                0, &jerr);
    char *text, *tools;

    (void)state;
    assert_non_null (r);
    /* the record has it among its tools */
    assert_non_null (tools = json_dumps (json_object_get (r, "tools"), 0));
    assert_non_null (strstr (tools, "\"slurmstepd\""));
    free (tools);
    json_array_append_new (recs, r);
    text = view_at (recs, 1000);
    assert_has (text, "\n    Tools:          train.py x2 (24.90 s CPU, peak "
                      "341.8 MiB), dd x1 (0.77 s CPU, peak 2.0 MiB)\n");
    assert_null (strstr (text, "slurmstepd"));
    /* its CPU still counts in the step's */
    assert_has (text, "\n    CPU time:       25.67 s");
    free (text);
    json_decref (recs);
}

/* Allocation failure sweep (jansson test_chaos.c): fail the Nth jansson
 * allocation for every N until the merge succeeds; every failure must be
 * a clean NULL with errno = ENOMEM and leak nothing (valgrind, ASan).
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
    json_t *recs = recs_of (two_node10, two_node2, three_node3, three_node1,
                            three_node2, NULL);
    int n, failures = 0;
    bool done = false;

    (void)state;
    /* three_node* share job and step with two_node*: give them a step */
    for (size_t i = 2; i < 5; i++)
        json_object_set_new (json_object_get (json_array_get (recs, i), "identi"
                                                                        "ty"),
                             "step_id", json_string ("1"));
    json_set_alloc_funcs (chaos_malloc, chaos_free);
    for (n = 0; !done && n < 100000; n++) {
        json_t *steps;

        chaos_countdown = n;
        errno = 0;
        if ((steps = tr_merge_steps (recs))) {
            chaos_countdown = -1;
            assert_int_equal (json_array_size (steps), 2);
            done = true;
            json_decref (steps);
        }
        else {
            chaos_countdown = -1;
            assert_int_equal (errno, ENOMEM);
            failures++;
        }
    }
    chaos_countdown = -1;
    json_set_alloc_funcs (malloc, free);
    assert_true (done);
    assert_true (failures > 50);
    json_decref (recs);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_natcmp),
        cmocka_unit_test (test_stepcmp),
        cmocka_unit_test (test_state_rank),
        cmocka_unit_test (test_worst_state),
        cmocka_unit_test (test_two_nodes),
        cmocka_unit_test (test_three_nodes),
        cmocka_unit_test (test_missing_node),
        cmocka_unit_test (test_steps_not_merged),
        cmocka_unit_test (test_array_task_steps_together),
        cmocka_unit_test (test_single_node),
        cmocka_unit_test (test_optional_absent),
        cmocka_unit_test (test_duplicate_node),
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_view_two_nodes),
        cmocka_unit_test (test_view_single_node),
        cmocka_unit_test (test_view_missing_node),
        cmocka_unit_test (test_view_wrap),
        cmocka_unit_test (test_wrap),
        cmocka_unit_test (test_view_no_scheduler_tools),
        cmocka_unit_test (test_oom_sweep),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
