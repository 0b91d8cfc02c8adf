/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for the per-step diagnosis: every rule fires on a row just
 * past its threshold and stays quiet on one just short of it (a table of
 * changes to a healthy row), the exact texts users read (failure causes,
 * the I/O-bound advice, OOM sizing), the order of findings, the summary
 * line and code list, thresholds taken from tracer.yaml, and allocation
 * failures.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/record/stepsum.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define HOUR 3600.0

/* A healthy one-node step of an hour: 4 cores 75% busy, 3G of 4G, a
 * little pressure, no idle stretch worth a word.  It diagnoses as "ok".
 */
static void healthy (tr_stepsum_t *r)
{
    tr_stepsum_init (r);
    r->state = "completed";
    r->group = "align";
    r->complete = 1;
    r->exact = 1;
    r->exit_code = 0;
    r->nodes = 1;
    r->elapsed_s = HOUR;
    r->start_ms = 1.7e12;
    r->end_ms = 1.7e12 + HOUR * 1000;
    r->time_limit_s = 2 * HOUR;
    r->req_cores = 4;
    r->cpu_s = 0.75 * 4 * HOUR;
    r->cpu_peak_cores = 3.5;
    r->node_cpu_max_s = r->cpu_s;
    r->node_cpu_min_s = r->cpu_s;
    r->throttled_s = 0;
    r->req_mem_bytes = 4 * GIB;
    r->mem_limit_bytes = 4 * GIB;
    r->mem_peak_bytes = 3 * GIB;
    r->swap_bytes = 0;
    r->oom_kills = 0;
    r->psi_cpu_some_s = 0.01 * HOUR;
    r->psi_mem_some_s = 0;
    r->psi_io_some_s = 0.01 * HOUR;
    r->read_bytes = GIB;
    r->write_bytes = GIB;
    r->idle_s = 60;
    r->idle_longest_s = 30;
    r->gpus_used = 0;
}

/* Find the finding with this code, or NULL. */
static json_t *finding (json_t *findings, const char *code)
{
    size_t i;
    json_t *f;

    json_array_foreach (findings, i, f)
    {
        const char *c = json_string_value (json_object_get (f, "code"));
        if (c && !strcmp (c, code))
            return f;
    }
    return NULL;
}

static const char *text_of (json_t *findings, const char *code)
{
    json_t *f = finding (findings, code);

    return f ? json_string_value (json_object_get (f, "text")) : NULL;
}

static double evidence (json_t *findings, const char *code, const char *name)
{
    json_t *f = finding (findings, code);
    json_t *v = json_object_get (json_object_get (f, "evidence"), name);

    return v ? json_number_value (v) : NAN;
}

static char *codes_of (json_t *findings)
{
    static char buf[256];

    assert_true (tr_diag_codes (findings, buf, sizeof (buf)) > 0);
    return buf;
}

/* One finding's shape: every member, of the right type. */
static void check_shape (json_t *f)
{
    const char *sev = json_string_value (json_object_get (f, "severity"));
    const char *key;
    json_t *v;

    assert_true (json_is_string (json_object_get (f, "code")));
    assert_true (json_is_string (json_object_get (f, "text")));
    assert_true (strlen (json_string_value (json_object_get (f, "text"))) > 5);
    assert_non_null (sev);
    assert_true (!strcmp (sev, "info") || !strcmp (sev, "warning")
                 || !strcmp (sev, "critical"));
    assert_true (json_is_object (json_object_get (f, "evidence")));
    json_object_foreach (json_object_get (f, "evidence"), key, v)
    {
        assert_true (json_is_number (v));
    }
    assert_int_equal (json_object_size (f), 4);
}

static json_t *diagnose (const tr_stepsum_t *r)
{
    json_t *findings = tr_diagnose (r, NULL);
    size_t i;
    json_t *f;

    assert_non_null (findings);
    assert_true (json_array_size (findings) > 0);
    json_array_foreach (findings, i, f)
    {
        check_shape (f);
    }
    return findings;
}

static void test_healthy_is_ok (void **state)
{
    tr_stepsum_t r;
    json_t *findings;

    (void)state;
    healthy (&r);
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "ok");
    assert_string_equal (text_of (findings, "ok"), "no problem found: CPU "
                                                   "efficiency 75%, peak "
                                                   "memory "
                                                   "3.0G of 4.0G requested");
    assert_int_equal (tr_diag_worst (findings), TR_DIAG_INFO);
    json_decref (findings);
}

/* Changes to the healthy row.  A member is named by its offset; the
 * list ends at offset 0 (a string member, never changed here).
 */
struct change {
    size_t off;
    double v;
};

#define SET(member, value)                       \
    {                                            \
        offsetof (tr_stepsum_t, member), (value) \
    }

struct rule_case {
    const char *name;
    const char *state; /* NULL: "completed" */
    struct change set[6];
    const char *code;
    bool fires;
    const char *severity; /* when it fires */
};

/* clang-format off */
static const struct rule_case rule_cases[] = {
    /* failed */
    { "failed: exit code", "failed", { SET (exit_code, 1) },
      "failed", true, "critical" },
    { "failed: cancelled", "cancelled", { SET (signal, 15) },
      "failed", true, "critical" },
    { "failed: timeout", "timeout", { SET (signal, 15) },
      "failed", true, "critical" },
    { "failed: oom", "oom", { SET (oom_kills, 1) },
      "failed", true, "critical" },
    { "failed near miss: incomplete is not failed", "incomplete",
      { SET (complete, 0) }, "failed", false, NULL },
    { "failed near miss: running", "running", { SET (complete, 0) },
      "failed", false, NULL },

    /* oom */
    { "oom: state", "oom", { SET (signal, 9) }, "oom", true, "critical" },
    { "oom: a process killed, step completed", NULL,
      { SET (oom_kills, 1) }, "oom", true, "warning" },
    { "oom near miss: peak at the limit, no kill", NULL,
      { SET (mem_peak_bytes, 4 * GIB) }, "oom", false, NULL },

    /* memory pressure */
    { "mem-pressure: PSI", NULL, { SET (psi_mem_some_s, 0.11 * HOUR) },
      "mem-pressure", true, "warning" },
    { "mem-pressure near miss: PSI at the threshold", NULL,
      { SET (psi_mem_some_s, 0.1 * HOUR) }, "mem-pressure", false, NULL },
    { "mem-pressure: swap", NULL, { SET (swap_bytes, 4096) },
      "mem-pressure", true, "warning" },
    { "mem-pressure: peak near the limit", NULL,
      { SET (mem_peak_bytes, 0.95 * 4 * GIB) }, "mem-pressure", true,
      "warning" },
    { "mem-pressure near miss: peak at 94%", NULL,
      { SET (mem_peak_bytes, 0.94 * 4 * GIB) }, "mem-pressure", false, NULL },
    { "mem-pressure: peak near the request without a limit", NULL,
      { SET (mem_limit_bytes, NAN), SET (mem_peak_bytes, 3.9 * GIB) },
      "mem-pressure", true, "warning" },
    { "mem-pressure near miss: an OOM kill says it instead", NULL,
      { SET (oom_kills, 1), SET (swap_bytes, 4096) }, "mem-pressure", false,
      NULL },

    /* cpu-bound */
    { "cpu-bound: efficiency", NULL, { SET (cpu_s, 0.9 * 4 * HOUR) },
      "cpu-bound", true, "info" },
    { "cpu-bound near miss: efficiency 89%", NULL,
      { SET (cpu_s, 0.89 * 4 * HOUR) }, "cpu-bound", false, NULL },
    { "cpu-bound: CPU pressure", NULL,
      { SET (psi_cpu_some_s, 0.2 * HOUR) }, "cpu-bound", true, "info" },
    { "cpu-bound near miss: CPU pressure 19%", NULL,
      { SET (psi_cpu_some_s, 0.19 * HOUR) }, "cpu-bound", false, NULL },
    { "not cpu-bound: CPU pressure, but the cores mostly idle", NULL,
      { SET (psi_cpu_some_s, 0.3 * HOUR), SET (cpu_s, 0.1 * 4 * HOUR) },
      "cpu-bound", false, NULL },

    /* io-bound */
    { "io-bound", NULL,
      { SET (psi_io_some_s, 0.2 * HOUR), SET (cpu_s, 0.4 * 4 * HOUR) },
      "io-bound", true, "warning" },
    { "io-bound near miss: I/O pressure 19%", NULL,
      { SET (psi_io_some_s, 0.19 * HOUR), SET (cpu_s, 0.4 * 4 * HOUR) },
      "io-bound", false, NULL },
    { "io-bound near miss: CPUs half busy", NULL,
      { SET (psi_io_some_s, 0.6 * HOUR), SET (cpu_s, 0.5 * 4 * HOUR) },
      "io-bound", false, NULL },
    { "io-bound near miss: PSI unknown", NULL,
      { SET (psi_io_some_s, NAN), SET (cpu_s, 0.1 * 4 * HOUR) },
      "io-bound", false, NULL },

    /* over-allocated CPU */
    { "over-cpu", NULL,
      { SET (cpu_s, 0.4 * 4 * HOUR), SET (psi_cpu_some_s, 0.04 * HOUR) },
      "over-cpu", true, "warning" },
    { "over-cpu near miss: CPU pressure 5%", NULL,
      { SET (cpu_s, 0.4 * 4 * HOUR), SET (psi_cpu_some_s, 0.05 * HOUR) },
      "over-cpu", false, NULL },
    { "over-cpu near miss: efficiency 50%", NULL,
      { SET (cpu_s, 0.5 * 4 * HOUR) }, "over-cpu", false, NULL },
    { "over-cpu near miss: I/O-bound instead", NULL,
      { SET (cpu_s, 0.4 * 4 * HOUR), SET (psi_io_some_s, 0.3 * HOUR) },
      "over-cpu", false, NULL },
    { "over-cpu near miss: one core", NULL,
      { SET (req_cores, 1), SET (cpu_s, 0.2 * HOUR) }, "over-cpu", false,
      NULL },

    /* over-allocated memory */
    { "over-mem", NULL, { SET (mem_peak_bytes, 1.99 * GIB) },
      "over-mem", true, "warning" },
    { "over-mem near miss: peak at half", NULL,
      { SET (mem_peak_bytes, 2 * GIB) }, "over-mem", false, NULL },
    { "over-mem: timed out", "timeout", { SET (mem_peak_bytes, GIB) },
      "over-mem", true, "warning" },
    { "over-mem near miss: failed before its peak", "failed",
      { SET (exit_code, 1), SET (mem_peak_bytes, 0.1 * GIB) }, "over-mem",
      false, NULL },
    { "over-mem near miss: still running", "running",
      { SET (complete, 0), SET (mem_peak_bytes, 0.1 * GIB) }, "over-mem",
      false, NULL },
    { "over-mem near miss: request at the floor", NULL,
      { SET (req_mem_bytes, GIB), SET (mem_limit_bytes, GIB),
        SET (mem_peak_bytes, 0.05 * GIB) }, "over-mem", false, NULL },

    /* idle */
    { "idle", NULL, { SET (idle_s, 0.51 * HOUR) }, "idle", true, "warning" },
    { "idle near miss: half the time", NULL, { SET (idle_s, 0.5 * HOUR) },
      "idle", false, NULL },
    { "idle near miss: under a minute", NULL,
      { SET (elapsed_s, 59), SET (idle_s, 59), SET (cpu_s, 0.75 * 4 * 59) },
      "idle", false, NULL },

    /* stalled */
    { "stalled", NULL, { SET (idle_longest_s, 600) }, "stalled", true,
      "warning" },
    { "stalled near miss", NULL, { SET (idle_longest_s, 599) }, "stalled",
      false, NULL },

    /* throttled */
    { "throttled", NULL, { SET (throttled_s, 0.06 * HOUR) }, "throttled",
      true, "warning" },
    { "throttled near miss", NULL, { SET (throttled_s, 0.05 * HOUR) },
      "throttled", false, NULL },
    { "throttled near miss: summed over two nodes", NULL,
      { SET (nodes, 2), SET (req_cores, 8), SET (cpu_s, 0.75 * 8 * HOUR),
        SET (throttled_s, 0.08 * HOUR) }, "throttled", false, NULL },

    /* imbalanced */
    { "imbalanced", NULL,
      { SET (nodes, 2), SET (node_cpu_min_s, 499), SET (node_cpu_max_s, 1000) },
      "imbalanced", true, "warning" },
    { "imbalanced near miss: half", NULL,
      { SET (nodes, 2), SET (node_cpu_min_s, 500), SET (node_cpu_max_s, 1000) },
      "imbalanced", false, NULL },
    { "imbalanced near miss: one node", NULL,
      { SET (node_cpu_min_s, 1), SET (node_cpu_max_s, 1000) },
      "imbalanced", false, NULL },

    /* short */
    { "short", NULL, { SET (elapsed_s, 9.9), SET (cpu_s, 0.1) }, "short",
      true, "info" },
    { "short near miss", NULL, { SET (elapsed_s, 10), SET (cpu_s, 30) },
      "short", false, NULL },
    { "short hides efficiency", NULL,
      { SET (elapsed_s, 5), SET (cpu_s, 0.1), SET (idle_s, 5),
        SET (mem_peak_bytes, 0.01 * GIB) }, "over-cpu", false, NULL },
    { "short keeps failures", "failed",
      { SET (elapsed_s, 1), SET (exit_code, 127) }, "failed", true,
      "critical" },

    /* GPU idle */
    { "gpu-idle", NULL, { SET (gpus_used, 2), SET (gpu_util_mean_pct, 9.9) },
      "gpu-idle", true, "warning" },
    { "gpu-idle near miss", NULL,
      { SET (gpus_used, 2), SET (gpu_util_mean_pct, 10) }, "gpu-idle",
      false, NULL },
    { "gpu-idle near miss: no GPU", NULL,
      { SET (gpus_used, 0), SET (gpu_util_mean_pct, 0) }, "gpu-idle", false,
      NULL },

    /* data caveats */
    { "incomplete", NULL, { SET (complete, 0) }, "incomplete", true,
      "info" },
    { "sampled", NULL, { SET (exact, 0) }, "incomplete", true, "info" },
    { "incomplete near miss: both unknown", NULL,
      { SET (complete, NAN), SET (exact, NAN) }, "incomplete", false, NULL },

    /* ok */
    { "ok beside a caveat", NULL, { SET (exact, 0) }, "ok", true, "info" },
    { "ok near miss: any other finding", NULL,
      { SET (idle_longest_s, 600) }, "ok", false, NULL },
};
/* clang-format on */

static void apply (tr_stepsum_t *r, const struct rule_case *c)
{
    healthy (r);
    if (c->state)
        r->state = c->state;
    for (size_t i = 0; i < sizeof (c->set) / sizeof (c->set[0]); i++) {
        if (c->set[i].off == 0)
            break;
        *(double *)(void *)((char *)r + c->set[i].off) = c->set[i].v;
    }
}

static void test_rules (void **state)
{
    int bad = 0;

    (void)state;
    for (size_t i = 0; i < sizeof (rule_cases) / sizeof (rule_cases[0]); i++) {
        const struct rule_case *c = &rule_cases[i];
        tr_stepsum_t r;
        json_t *findings, *f;

        apply (&r, c);
        findings = diagnose (&r);
        f = finding (findings, c->code);
        if (c->fires && !f) {
            fprintf (stderr, "# %s: no %s finding, got %s\n", c->name, c->code,
                     codes_of (findings));
            bad++;
        }
        else if (!c->fires && f) {
            fprintf (stderr, "# %s: unexpected %s: %s\n", c->name, c->code,
                     json_string_value (json_object_get (f, "text")));
            bad++;
        }
        else if (f
                 && strcmp (json_string_value (json_object_get (f, "severity")),
                            c->severity)) {
            fprintf (stderr, "# %s: severity %s, want %s\n", c->name,
                     json_string_value (json_object_get (f, "severity")),
                     c->severity);
            bad++;
        }
        json_decref (findings);
    }
    assert_int_equal (bad, 0);
}

/* The I/O-bound finding must steer away from more cores and towards
 * storage, with the volume moved.
 */
static void test_io_bound_text (void **state)
{
    tr_stepsum_t r;
    json_t *findings;
    const char *text;

    (void)state;
    healthy (&r);
    r.cpu_s = 0.22 * 4 * HOUR;
    r.psi_io_some_s = 0.45 * HOUR;
    r.psi_io_full_s = 0.3 * HOUR; /* PSI: io.pressure has "full" */
    r.read_bytes = 120 * GIB;
    r.write_bytes = 30 * GIB;
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "io-bound");
    text = text_of (findings, "io-bound");
    assert_string_equal (text, "I/O-bound: tasks waited for I/O 45% of the "
                               "time "
                               "while the CPUs were 22% busy (read 120G, wrote "
                               "30G); more cores will not help: work in "
                               "node-local "
                               "scratch ($TMPDIR), stage the input there "
                               "first, or "
                               "use another file system or node type");
    assert_non_null (strstr (text, "more cores will not help"));
    assert_true (evidence (findings, "io-bound", "psiio") == 0.45);
    assert_true (evidence (findings, "io-bound", "readbytes") == 120 * GIB);
    assert_true (evidence (findings, "io-bound", "cpueff") == 0.22);
    json_decref (findings);

    /* Volume unknown: the advice stands without it. */
    healthy (&r);
    r.cpu_s = 0.1 * 4 * HOUR;
    r.psi_io_some_s = 0.3 * HOUR;
    r.read_bytes = NAN;
    r.write_bytes = NAN;
    findings = diagnose (&r);
    text = text_of (findings, "io-bound");
    assert_non_null (text);
    assert_null (strstr (text, "read "));
    assert_non_null (strstr (text, "more cores will not help"));
    assert_true (isnan (evidence (findings, "io-bound", "readbytes")));
    json_decref (findings);
}

struct text_case {
    const char *name;
    const char *state;
    struct change set[6];
    const char *reason;
    const char *code;
    const char *text;
};

/* clang-format off */
static const struct text_case text_cases[] = {
    { "exit code", "failed", { SET (exit_code, 2) }, "", "failed",
      "failed: exit code 2" },
    { "signal", "failed", { SET (signal, 9) }, "", "failed",
      "failed: killed by SIGKILL" },
    { "signal without a name", "failed", { SET (signal, 40) }, "", "failed",
      "failed: killed by signal 40" },
    { "shell's 128+N", "failed", { SET (exit_code, 137) }, "", "failed",
      "failed: exit code 137 (128+9: a process was killed by SIGKILL)" },
    { "time limit", "timeout", { SET (signal, 15), SET (exit_code, 0) }, "",
      "failed", "timed out: reached its 2:00:00 time limit, killed by "
      "SIGTERM" },
    { "time limit unknown", "timeout",
      { SET (time_limit_s, NAN), SET (signal, 15) }, "", "failed",
      "timed out: ran out of time, killed by SIGTERM" },
    { "a day's time limit", "timeout",
      { SET (time_limit_s, 86400 + 3600), SET (elapsed_s, 90000) }, "",
      "failed", "timed out: reached its 1-01:00:00 time limit" },
    { "failed at the time limit", "failed",
      { SET (elapsed_s, 2 * HOUR), SET (signal, 9) }, "", "failed",
      "failed: ran for its whole 2:00:00 time limit, killed by SIGKILL" },
    { "cancelled with the scheduler's reason", "cancelled",
      { SET (signal, 15) }, "the scheduler reports the job CANCELLED by 1000",
      "failed", "cancelled: killed by SIGTERM (the scheduler reports the job "
      "CANCELLED by 1000)" },
    { "reason only", "failed", { SET (exit_code, NAN) }, "node lost",
      "failed", "failed: node lost" },
    { "oom state", "oom", { SET (signal, 9), SET (oom_kills, 2) }, "",
      "failed", "killed for lack of memory: killed by SIGKILL" },
    { "failed after an OOM kill", "failed",
      { SET (exit_code, 1), SET (oom_kills, 1) }, "", "failed",
      "failed: exit code 1, 1 process killed by the OOM killer" },
    { "reason with control characters", "failed", { SET (exit_code, 1) },
      "line\none\ttab", "failed", "failed: exit code 1 (line one tab)" },
    { "reason cut at 120 bytes", "failed", { SET (exit_code, NAN) },
      "0123456789012345678901234567890123456789012345678901234567890123456789"
      "01234567890123456789012345678901234567890123456789abcdef",
      "failed", "failed: "
      "0123456789012345678901234567890123456789012345678901234567890123456789"
      "01234567890123456789012345678901234567890123456789..." },
    { "OOM sizing", "oom",
      { SET (oom_kills, 2), SET (signal, 9), SET (mem_peak_bytes, 3.93 * GIB) },
      "", "oom", "out of memory: the OOM killer ended 2 processes; the peak "
      "of 3.9G reached 98% of the 4.0G limit; request more memory: "
      "--mem=8G (a one-run estimate): 2x the 4G it was killed at, a lower "
      "bound of its need (no growth rate known; 1 OOM in a row)" },
    { "OOM without a limit or request", "oom",
      { SET (oom_kills, 1), SET (mem_limit_bytes, NAN),
        SET (req_mem_bytes, NAN), SET (mem_peak_bytes, 700 * 1048576.0) },
      "", "oom", "out of memory: the OOM killer ended 1 process at a peak of "
      "700M; request more memory: --mem=1536M (a one-run estimate): 2x the "
      "700M it was killed at, a lower bound of its need (no growth rate "
      "known; 1 OOM in a row), rounded up" },
    { "OOM survived", NULL, { SET (oom_kills, 1) }, "", "oom",
      "out of memory: the OOM killer ended 1 process but the step completed; "
      "the peak of 3.0G reached 75% of the 4.0G limit; request more memory: "
      "--mem=5G (a one-run estimate)" },
    { "memory pressure", NULL,
      { SET (psi_mem_some_s, 0.25 * HOUR), SET (swap_bytes, 512 * 1048576.0),
        SET (mem_peak_bytes, 3.9 * GIB) }, "", "mem-pressure",
      "memory pressure: tasks waited for memory 25% of the time, 512M "
      "swapped out, the peak of 3.9G reached 98% of the 4.0G limit; the step "
      "is slowed by reclaim and close to an OOM kill: request more memory: "
      "--mem=5G (a one-run estimate)" },
    { "over-cpu", NULL,
      { SET (req_cores, 16), SET (cpu_s, 1.8 * HOUR),
        SET (cpu_peak_cores, 3.2) }, "", "over-cpu",
      "over-allocated CPU: 11% efficiency, 1.8 of 16 cores busy on average, "
      "at most 3.2 at once; --cpus-per-task=2 would do (a one-run estimate)" },
    { "over-cpu in bursts", NULL,
      { SET (req_cores, 16), SET (cpu_s, 1.8 * HOUR),
        SET (cpu_peak_cores, 16) }, "", "over-cpu",
      "over-allocated CPU: 11% efficiency, 1.8 of 16 cores busy on average, "
      "at most 16.0 at once; --cpus-per-task=2 would do (a one-run estimate)" },
    { "one thread on two cores of a loaded node", NULL,
      { SET (req_cores, 2), SET (cpu_s, 0.66 * HOUR),
        SET (psi_cpu_some_s, 0.3 * HOUR), SET (cpu_peak_cores, 1.0) }, "",
      "over-cpu", "over-allocated CPU: 33% efficiency, 0.7 of 2 cores busy "
      "on average, at most 1.0 at once; --cpus-per-task=1 would do (a one-run "
      "estimate)" },
    { "single-threaded and CPU-bound", NULL,
      { SET (req_cores, 1), SET (cpu_s, 0.99 * HOUR),
        SET (psi_cpu_some_s, 0.3 * HOUR), SET (cpu_peak_cores, 1.0) }, "",
      "cpu-bound", "CPU-bound: the CPUs were 99% busy and tasks waited for "
      "one 30% of the time, at most 1.0 core busy at once; one thread at a "
      "time: more cores will not help" },
    { "waiting for other work on the node", NULL,
      { SET (cpu_s, 0.6 * 4 * HOUR), SET (psi_cpu_some_s, 0.4 * HOUR),
        SET (cpu_peak_cores, 2.6) }, "", "cpu-bound",
      "CPU-bound: tasks waited for a CPU 40% of the time, at most 2.6 cores "
      "busy at once; the wait was for other work on the node, not for the "
      "step's own threads: more cores will not help" },
    { "throttled by its own quota", NULL,
      { SET (cpu_s, 0.95 * 4 * HOUR), SET (throttled_s, 0.12 * HOUR),
        SET (cpu_peak_cores, 3.0) }, "", "cpu-bound",
      "CPU-bound: the CPUs were 95% busy, at most 3.0 cores busy at once; its "
      "own threads outran its CPU quota: more cores may help" },
    { "over-cpu on two nodes", NULL,
      { SET (nodes, 2), SET (req_cores, 32), SET (cpu_s, 4 * HOUR),
        SET (cpu_peak_cores, 2.5), SET (node_cpu_min_s, 2 * HOUR),
        SET (node_cpu_max_s, 2 * HOUR) }, "", "over-cpu",
      "over-allocated CPU: 12% efficiency, 4.0 of 32 cores busy on average, "
      "at most 2.5 at once on a node; --cpus-per-task=2 would do (a one-run "
      "estimate)" },
    { "over-mem", NULL,
      { SET (req_mem_bytes, 32 * GIB), SET (mem_limit_bytes, 32 * GIB),
        SET (mem_peak_bytes, 1.2 * GIB) }, "", "over-mem",
      "over-allocated memory: the peak of 1.2G is 4% of the 32G requested; "
      "--mem=1536M would do (a one-run estimate)" },
    { "idle", NULL, { SET (idle_s, 0.7 * HOUR) }, "", "idle",
      "idle 70% of the time (0:42:00 of 1:00:00 without CPU use or storage "
      "I/O): check what it waits for (input from elsewhere, other jobs, the "
      "network, an interactive session left open)" },
    { "stalled", NULL, { SET (idle_longest_s, 1500) }, "", "stalled",
      "stalled for 0:25:00 at a stretch without CPU use or storage I/O: look "
      "for a hang, a lock or a wait on a remote service" },
    { "throttled", NULL, { SET (throttled_s, 0.12 * HOUR) }, "", "throttled",
      "throttled 12% of the time by its CPU quota: it ran more busy threads "
      "than its cores; match the thread count (OMP_NUM_THREADS, a tool's "
      "--threads) to --cpus-per-task, or request more cores" },
    { "imbalanced", NULL,
      { SET (nodes, 4), SET (node_cpu_min_s, 600),
        SET (node_cpu_max_s, 4800) }, "", "imbalanced",
      "imbalanced across 4 nodes: the idlest node used 12% of the busiest "
      "node's CPU time (0:10:00 vs 1:20:00); spread the work evenly or use "
      "fewer nodes" },
    { "GPU idle", NULL, { SET (gpus_used, 1), SET (gpu_util_mean_pct, 3) },
      "", "gpu-idle", "GPU idle: 1 GPU averaged 3% utilisation; check that "
      "the program uses it (a GPU build, CUDA_VISIBLE_DEVICES) or run it "
      "without GPUs" },
    { "CPU-bound", NULL,
      { SET (cpu_s, 0.97 * 4 * HOUR), SET (psi_cpu_some_s, 0.3 * HOUR) }, "",
      "cpu-bound", "CPU-bound: the CPUs were 97% busy and tasks waited for "
      "one 30% of the time, at most 3.5 cores busy at once; its own threads "
      "kept all 4 cores busy: more cores may help" },
    { "CPU-bound by pressure", NULL,
      { SET (cpu_s, 0.6 * 4 * HOUR), SET (psi_cpu_some_s, 0.4 * HOUR) }, "",
      "cpu-bound", "CPU-bound: tasks waited for a CPU 40% of the time, at "
      "most 3.5 cores busy at once; its own threads wanted all 4 cores but "
      "other work on the node took them: keep 4 cores, a less loaded node "
      "would help" },
    /* A loaded node: two threads of its own each got under half a core,
     * so at most 1.0 busy at once, but running plus waiting in the run
     * queue they were 2.0 threads wanting a CPU on two cores: its own
     * demand, not others' load.
     */
    { "two threads squeezed by other work", NULL,
      { SET (req_cores, 2), SET (cpu_s, 0.8 * HOUR),
        SET (runq_wait_s, 1.2 * HOUR), SET (psi_cpu_some_s, 0.7 * HOUR),
        SET (cpu_peak_cores, 1.0) }, "", "cpu-bound",
      "CPU-bound: tasks waited for a CPU 70% of the time, at most 1.0 core "
      "busy at once, 2.0 threads wanting one on average; its own threads "
      "wanted all 2 cores but other work on the node took them: keep 2 "
      "cores, a less loaded node would help" },
    { "one thread squeezed by other work", NULL,
      { SET (req_cores, 2), SET (cpu_s, 0.5 * HOUR),
        SET (runq_wait_s, 0.5 * HOUR), SET (psi_cpu_some_s, 0.5 * HOUR),
        SET (cpu_peak_cores, 0.7) }, "", "over-cpu",
      "over-allocated CPU: 25% efficiency, 0.5 of 2 cores busy on average, "
      "at most 0.7 at once, 1.0 thread wanting one on average; "
      "--cpus-per-task=1 would do (a one-run estimate)" },
    { "short", NULL, { SET (elapsed_s, 4), SET (cpu_s, 2) }, "", "short",
      "short step (4s): its efficiency figures are not reliable at this "
      "length" },
    { "incomplete with its reason", "incomplete", { SET (complete, 0) },
      "tracerd restarted", "incomplete",
      "incomplete record (tracerd restarted): totals may be short" },
    { "running and sampled", "running",
      { SET (complete, 0), SET (exact, 0) }, "", "incomplete",
      "still running: the figures so far; CPU and memory were sampled, not "
      "exact: brief peaks may be missed" },
};
/* clang-format on */

static void test_texts (void **state)
{
    int bad = 0;

    (void)state;
    for (size_t i = 0; i < sizeof (text_cases) / sizeof (text_cases[0]); i++) {
        const struct text_case *c = &text_cases[i];
        struct rule_case rc = { .name = c->name, .state = c->state };
        tr_stepsum_t r;
        json_t *findings;
        const char *text;

        memcpy (rc.set, c->set, sizeof (rc.set));
        apply (&r, &rc);
        r.reason = c->reason;
        findings = diagnose (&r);
        text = text_of (findings, c->code);
        if (!text || strcmp (text, c->text)) {
            fprintf (stderr, "# %s:\n#   got  '%s'\n#   want '%s'\n", c->name,
                     text ? text : "(no finding)", c->text);
            bad++;
        }
        json_decref (findings);
    }
    assert_int_equal (bad, 0);
}

/* The sizes a diagnosis names are the view's advice (tr_recommend_groups
 * over the step's group, the "Next time" line) when it is given: the
 * same text, labelled with the runs it came from; and the one-run
 * estimate is the same engine over the row alone.
 */
static void test_advised (void **state)
{
    tr_stepsum_t runs[3];
    const tr_stepsum_t *rows[3];
    struct tr_recommend_opts o;
    json_t *recs, *g, *findings, *one;
    const char *text, *next;
    char want[128];

    (void)state;
    for (int i = 0; i < 3; i++) {
        healthy (&runs[i]);
        runs[i].req_mem_bytes = runs[i].mem_limit_bytes = 32 * GIB;
        runs[i].mem_peak_bytes = (1.0 + 0.4 * i) * GIB; /* 1.0, 1.4, 1.8G */
        runs[i].end_ms += i * 1000;
        rows[i] = &runs[i];
    }
    tr_recommend_opts_default (&o);
    recs = tr_recommend_groups (rows, 3, &o, NULL);
    assert_non_null (recs);
    g = json_array_get (json_object_get (recs, "groups"), 0);
    next = json_string_value (json_object_get (json_object_get (g, "mem"),
                                               "text"));
    assert_non_null (next);
    /* the first run, viewed with its group's advice */
    findings = tr_diagnose_advised (&runs[0], NULL, g);
    text = text_of (findings, "over-mem");
    assert_non_null (text);
    snprintf (want, sizeof (want), "; --mem=%s would do (from 3 runs)", next);
    assert_non_null (strstr (text, want));
    assert_true (evidence (findings, "over-mem", "suggestedmem")
                 == json_number_value (json_object_get (
                     json_object_get (g, "mem"), "recommend")));
    json_decref (findings);
    /* alone: the engine over this run only */
    recs = (json_decref (recs), tr_recommend_groups (rows, 1, &o, NULL));
    one = json_array_get (json_object_get (recs, "groups"), 0);
    findings = tr_diagnose (&runs[0], NULL);
    text = text_of (findings, "over-mem");
    snprintf (want, sizeof (want), "; --mem=%s would do (a one-run "
              "estimate)", json_string_value (json_object_get (
                  json_object_get (one, "mem"), "text")));
    assert_non_null (text);
    assert_non_null (strstr (text, want));
    json_decref (findings);
    json_decref (recs);
}

/* Most severe first, rule order within a severity. */
static void test_order (void **state)
{
    tr_stepsum_t r;
    json_t *findings;

    (void)state;
    healthy (&r);
    r.complete = 0;             /* incomplete: info */
    r.cpu_s = 0.95 * 4 * HOUR;  /* cpu-bound: info */
    r.throttled_s = 0.5 * HOUR; /* throttled: warning */
    r.idle_longest_s = 900;     /* stalled: warning */
    r.state = "failed";         /* failed: critical */
    r.exit_code = 3;
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "failed,stalled,throttled,cpu-"
                                              "bound,incomplete");
    assert_int_equal (tr_diag_worst (findings), TR_DIAG_CRITICAL);
    json_decref (findings);

    /* An OOM-killed I/O-bound step: both critical findings lead. */
    healthy (&r);
    r.state = "oom";
    r.oom_kills = 1;
    r.cpu_s = 0.1 * 4 * HOUR;
    r.psi_io_some_s = 0.5 * HOUR;
    r.idle_s = 0.6 * HOUR;
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "failed,oom,io-bound,idle");
    json_decref (findings);

    /* A completed step whose child was OOM-killed: a warning, in rule
     * order among the warnings.
     */
    healthy (&r);
    r.oom_kills = 1;
    r.throttled_s = 0.5 * HOUR;
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "oom,throttled");
    assert_int_equal (tr_diag_worst (findings), TR_DIAG_WARNING);
    json_decref (findings);
}

/* Unknown numbers fire nothing; an all-unknown row is "ok". */
static void test_unknown (void **state)
{
    tr_stepsum_t r;
    json_t *findings;

    (void)state;
    tr_stepsum_init (&r);
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "ok");
    assert_string_equal (text_of (findings, "ok"), "no problem found");
    assert_int_equal (json_object_size (
                          json_object_get (json_array_get (findings, 0), "evide"
                                                                         "nc"
                                                                         "e")),
                      0);
    json_decref (findings);

    errno = 0;
    assert_null (tr_diagnose (NULL, NULL));
    assert_int_equal (errno, EINVAL);
}

static void test_line (void **state)
{
    tr_stepsum_t r;
    json_t *findings;
    char buf[1024], small[40];

    (void)state;
    /* Information only when nothing is wrong. */
    healthy (&r);
    r.exact = 0;
    findings = diagnose (&r);
    assert_string_equal (tr_diag_line (findings, buf, sizeof (buf)),
                         "no problem found: CPU efficiency 75%, peak memory "
                         "3.0G of 4.0G requested; CPU and memory were "
                         "sampled, not exact: brief peaks may be missed");
    json_decref (findings);

    /* Warnings hide the informational findings. */
    healthy (&r);
    r.cpu_s = 0.95 * 4 * HOUR;
    r.idle_longest_s = 1200;
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "stalled,cpu-bound");
    assert_string_equal (tr_diag_line (findings, buf, sizeof (buf)),
                         text_of (findings, "stalled"));
    json_decref (findings);

    /* Three findings, then the codes of the rest. */
    healthy (&r);
    r.state = "failed";
    r.exit_code = 1;
    r.idle_longest_s = 1200;
    r.idle_s = 0.8 * HOUR;
    r.throttled_s = 0.5 * HOUR;
    r.cpu_s = 0.2 * 4 * HOUR;
    r.gpus_used = 1;
    r.gpu_util_mean_pct = 1;
    findings = diagnose (&r);
    assert_string_equal (codes_of (findings), "failed,stalled,over-cpu,idle,"
                                              "throttled,gpu-idle");
    tr_diag_line (findings, buf, sizeof (buf));
    assert_true (
        !strncmp (buf, "failed: exit code 1; stalled for 0:20:00", 40));
    assert_non_null (strstr (buf, "; over-allocated CPU: "));
    assert_null (strstr (buf, "idle 80%"));
    assert_true (strlen (buf) > 40);
    {
        const char *more = " (+3 more: idle,throttled,gpu-idle)";
        assert_true (strlen (buf) > strlen (more));
        assert_string_equal (buf + strlen (buf) - strlen (more), more);
    }

    /* Cut to the buffer with "...". */
    assert_ptr_equal (tr_diag_line (findings, small, sizeof (small)), small);
    assert_int_equal (strlen (small), sizeof (small) - 1);
    assert_string_equal (small, "failed: exit code 1; stalled for 0:2...");
    assert_string_equal (tr_diag_line (findings, small, 4), "...");
    assert_string_equal (tr_diag_line (findings, small, 2), "");

    errno = 0;
    assert_null (tr_diag_line (NULL, buf, sizeof (buf)));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (tr_diag_line (findings, NULL, 10));
    assert_int_equal (errno, EINVAL);
    json_decref (findings);
}

/* A cut never splits a UTF-8 character of a reason. */
static void test_line_utf8 (void **state)
{
    tr_stepsum_t r;
    json_t *findings;
    char buf[16];

    (void)state;
    healthy (&r);
    r.state = "failed";
    r.exit_code = NAN;
    r.reason = "n\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4";
    findings = diagnose (&r);
    assert_string_equal (text_of (findings, "failed"), "failed: "
                                                       "n\xc3\xa4\xc3\xa4\xc3"
                                                       "\xa4\xc3\xa4\xc3\xa4"
                                                       "\xc3\xa4");
    /* 15 bytes of text fit: "failed: n" + 1.5 characters -> cut before
     * the half character.
     */
    tr_diag_line (findings, buf, sizeof (buf));
    assert_string_equal (buf, "failed: n\xc3\xa4...");
    json_decref (findings);
}

static void test_codes (void **state)
{
    tr_stepsum_t r;
    json_t *findings;
    char buf[64];

    (void)state;
    healthy (&r);
    r.cpu_s = 0.1 * 4 * HOUR;
    r.psi_io_some_s = 0.5 * HOUR;
    r.mem_peak_bytes = 0.5 * GIB;
    findings = diagnose (&r);
    assert_int_equal (tr_diag_codes (findings, buf, sizeof (buf)), 2);
    assert_string_equal (buf, "io-bound,over-mem");
    /* Exactly enough room, then one byte short. */
    assert_int_equal (tr_diag_codes (findings, buf, 18), 2);
    errno = 0;
    assert_int_equal (tr_diag_codes (findings, buf, 17), -1);
    assert_int_equal (errno, ERANGE);
    assert_string_equal (buf, "io-bound");
    errno = 0;
    assert_int_equal (tr_diag_codes (findings, buf, 0), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_diag_codes (NULL, buf, sizeof (buf)), -1);
    assert_int_equal (errno, EINVAL);
    json_decref (findings);

    errno = 0;
    assert_int_equal (tr_diag_worst (NULL), -1);
    assert_int_equal (errno, EINVAL);
}

/* tr_diag_defaults and tracer.yaml's defaults are the same numbers. */
static void test_defaults_match_conf (void **state)
{
    struct tr_diag_thresholds t;
    tr_conf_t *conf = tr_conf_create ();

    (void)state;
    assert_non_null (conf);
    memset (&t, 0xff, sizeof (t));
    tr_diag_defaults (&t);
    assert_memory_equal (&t, &conf->diagnosis, sizeof (t));
    assert_true (t.io_pressure == 0.2);
    assert_true (t.mem_min_request == GIB);
    assert_true (t.stalled_after == 600);
    tr_conf_destroy (conf);
}

/* Thresholds from the configuration file change the verdicts. */
static void test_thresholds_from_conf (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;
    tr_stepsum_t r;
    json_t *findings;

    (void)state;
    assert_non_null (conf);
    healthy (&r);
    r.cpu_s = 0.3 * 4 * HOUR;
    r.psi_io_some_s = 0.3 * HOUR;
    r.elapsed_s = HOUR;
    r.idle_longest_s = 400;

    findings = tr_diagnose (&r, &conf->diagnosis);
    assert_non_null (findings);
    assert_string_equal (codes_of (findings), "io-bound");
    json_decref (findings);

    assert_int_equal (tr_conf_load_string (conf, "tracer.yaml",
                                           "report:\n"
                                           "  diagnosis:\n"
                                           "    io_pressure: 0.5\n"
                                           "    stalled_after: 5min\n",
                                           &error),
                      0);
    findings = tr_diagnose (&r, &conf->diagnosis);
    assert_non_null (findings);
    assert_string_equal (codes_of (findings), "stalled,over-cpu");
    json_decref (findings);

    /* A short_step of two hours leaves only the short-step note. */
    assert_int_equal (tr_conf_load_string (conf, "tracer.yaml",
                                           "report:\n"
                                           "  diagnosis:\n"
                                           "    short_step: 2h\n",
                                           &error),
                      0);
    findings = tr_diagnose (&r, &conf->diagnosis);
    assert_non_null (findings);
    assert_string_equal (codes_of (findings), "short");
    json_decref (findings);
    tr_conf_destroy (conf);
}

/* Allocation failures: jansson's allocations fail from the Nth on, for
 * every N until a diagnosis goes through; each failure is a clean NULL
 * with ENOMEM and leaks nothing (valgrind, ASan).
 */
static int fail_after = -1;

static void *failing_malloc (size_t size)
{
    if (fail_after == 0)
        return NULL;
    if (fail_after > 0)
        fail_after--;
    return malloc (size);
}

static void test_nomem (void **state)
{
    tr_stepsum_t r;
    int n, failures = 0;

    (void)state;
    healthy (&r);
    r.state = "failed";
    r.exit_code = 1;
    r.complete = 0;
    r.cpu_s = 0.1 * 4 * HOUR;
    r.psi_io_some_s = 0.5 * HOUR;
    r.mem_peak_bytes = 0.5 * GIB;
    r.idle_longest_s = 900;
    json_set_alloc_funcs (failing_malloc, free);
    for (n = 0; n < 1000; n++) {
        json_t *findings;
        fail_after = n;
        errno = 0;
        findings = tr_diagnose (&r, NULL);
        fail_after = -1;
        if (findings) {
            assert_string_equal (codes_of (findings), "failed,io-bound,stalled,"
                                                      "incomplete");
            json_decref (findings);
            break;
        }
        assert_int_equal (errno, ENOMEM);
        failures++;
    }
    json_set_alloc_funcs (malloc, free);
    assert_true (n < 1000);
    assert_true (failures > 20);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_healthy_is_ok),
        cmocka_unit_test (test_rules),
        cmocka_unit_test (test_io_bound_text),
        cmocka_unit_test (test_texts),
        cmocka_unit_test (test_advised),
        cmocka_unit_test (test_order),
        cmocka_unit_test (test_unknown),
        cmocka_unit_test (test_line),
        cmocka_unit_test (test_line_utf8),
        cmocka_unit_test (test_codes),
        cmocka_unit_test (test_defaults_match_conf),
        cmocka_unit_test (test_thresholds_from_conf),
        cmocka_unit_test (test_nomem),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
