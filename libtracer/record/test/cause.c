/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for the cause engine: every class, the order in which they
 * are decided (a record that holds the evidence of two classes gets the
 * earlier), the evidence texts, the members other parts of the record
 * write (events, progress, files) fed as hand-made JSON, hostile text
 * blanked, and a short buffer.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/record/cause.h"

struct ccase {
    const char *json;  /* the record (only what the engine reads) */
    const char *cause; /* expected class name, "" for none */
    const char *text;  /* expected text, or a part of it when part */
    int part;
};

#define OC(x) "{\"outcome\": " x
#define CULPRIT_SEGV                                                        \
    "\"culprit\": {\"tool\": \"samtools\", \"pid\": 4242, \"signal\": 11, " \
    "\"core_dumped\": true, \"at_s\": 0.8, \"chain\": [{\"tool\": \"sh\", " \
    "\"pid\": 4241}, {\"tool\": \"bash\", \"pid\": 4240}], "                \
    "\"collateral\": 2}"
#define CULPRIT_EXIT2                                                   \
    "\"culprit\": {\"tool\": \"STAR\", \"pid\": 50, \"exit_code\": 2, " \
    "\"core_dumped\": false, \"at_s\": 0.0, \"chain\": [{\"tool\": "    \
    "\"bash\", \"pid\": 49}], \"collateral\": 1}"

static const struct ccase cases[] = {
    /* no cause */
    { OC ("{\"state\": \"completed\", \"exit_code\": 0}}"), "", "", 0 },
    { OC ("{\"state\": \"running\"}}"), "", "", 0 },
    { "{}", "", "", 0 },
    /* 1. oom */
    { OC ("{\"state\": \"oom\"}}"), "oom",
      "the OOM killer killed a process of the step", 0 },
    { OC ("{\"state\": \"failed\", \"exit_code\": 1}, \"summary\": "
          "{\"memory\": {\"oom_kill_events\": 2, \"peak_bytes\": 1073741824, "
          "\"limit_bytes\": 1073741824}}}"),
      "oom",
      "the OOM killer killed 2 processes of the step; memory peak 1.0 GiB "
      "of a 1.0 GiB limit",
      0 },
    { OC ("{\"state\": \"failed\", \"tasks\": [{\"task_id\": 0, \"pid\": 1, "
          "\"oom_killed\": true}]}}"),
      "oom", "the OOM killer killed a process of the step", 0 },
    { OC ("{\"state\": \"failed\", \"exit_code\": 137, " CULPRIT_EXIT2 "}, "
          "\"events\": [{\"kind\": \"oom-kill\", \"scope\": \"step\", "
          "\"pid\": 7, \"tool\": \"perl\", \"rss_bytes\": 104857600}]}"),
      "oom", "the OOM killer killed perl (pid 7) at 100.0 MiB resident", 0 },
    { OC ("{\"state\": \"failed\", \"exit_code\": 1}, \"summary\": "
          "{\"x_oom_kill_events\": 1}}"),
      "oom", "the OOM killer killed 1 process of the step", 0 },
    /* a node-wide OOM kill is not the step's */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1}, \"events\": "
          "[{\"kind\": \"oom-kill\", \"scope\": \"node\", \"pid\": 7}]}"),
      "tool-error", "the step exited 1", 1 },
    /* 2. stalled: before oom? no: after it; before timeout and cancel */
    { OC ("{\"state\": \"oom\"}, \"progress\": {\"stalled\": true}}"), "oom",
      "", 1 },
    { OC ("{\"state\": \"timeout\"}, \"request\": {\"time_limit_s\": 60}, "
          "\"progress\": {\"stalled\": true, \"stalled_s\": 725, "
          "\"processes\": [{\"tool\": \"cat\", \"pid\": 77, \"state\": "
          "\"S\", \"wchan\": \"pipe_read\"}, {\"tool\": \"sh\", \"pid\": 76, "
          "\"state\": \"S\"}]}}"),
      "stalled",
      "no CPU or I/O progress for 12 min 05 s at the end; cat (pid 77) "
      "blocked in pipe_read, sh (pid 76) state S; then killed at its time "
      "limit",
      0 },
    { OC ("{\"state\": \"cancelled\"}, \"progress\": {\"stalled\": true}}"),
      "stalled", "no CPU or I/O progress at the end; then cancelled", 0 },
    { OC ("{\"state\": \"timeout\"}, \"progress\": {\"stalled\": false}}"),
      "timeout", "reached its time limit", 0 },
    /* 3. timeout, before cancel and the culprit */
    { OC ("{\"state\": \"timeout\", \"signal\": 15, \"reason\": \"the "
          "scheduler reports the job TIMEOUT\", " CULPRIT_SEGV "}, "
          "\"request\": {\"time_limit_s\": 60}}"),
      "timeout",
      "reached its time limit of 1 min 00 s (the scheduler reports the job "
      "TIMEOUT)",
      0 },
    /* 4. cancelled */
    { OC ("{\"state\": \"cancelled\", \"reason\": \"the scheduler reports "
          "the job CANCELLED\"}}"),
      "cancelled", "the scheduler reports the job CANCELLED", 0 },
    { OC ("{\"state\": \"cancelled\"}}"), "cancelled",
      "the job or step was cancelled", 0 },
    /* 5. node-failure */
    { OC ("{\"state\": \"cancelled\", \"reason\": \"the scheduler reports "
          "the job NODE_FAIL\"}}"),
      "node-failure",
      "the node failed: the scheduler reports the job "
      "NODE_FAIL",
      0 },
    { OC ("{\"state\": \"incomplete\", \"reason\": \"the step ended without "
          "an end notification\"}}"),
      "node-failure",
      "the record is incomplete: the step ended without an "
      "end notification",
      0 },
    /* a record that followed no process: nothing measured, no node
     * failure
     */
    { OC ("{\"state\": \"incomplete\", \"reason\": \"no process of the "
          "job was found on this node\", \"exit_code\": 0}, \"summary\": "
          "{\"cpu\": {\"source\": \"none\"}, \"memory\": {\"source\": "
          "\"none\"}}}"),
      "unknown",
      "no process of the job was found on this node: nothing was measured", 0 },
    /* 6. io-error, before input-missing and the culprit's crash */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1, " CULPRIT_SEGV "}, "
          "\"files\": {\"source\": \"ebpf\", \"io_errors\": [{\"op\": "
          "\"write\", \"errno\": \"ENOSPC\", \"tool\": \"cat\", \"count\": 3, "
          "\"path\": \"/mnt/f/x\"}], \"failed_opens\": [{\"path\": \"/a\", "
          "\"errno\": \"ENOENT\", \"tool\": \"samtools\", \"count\": 1}]}}"),
      "io-error", "write of /mnt/f/x failed with ENOSPC in cat (3 times)", 0 },
    { OC ("{\"state\": \"failed\", \"exit_code\": 1}, \"events\": "
          "[{\"kind\": \"nfs\", \"scope\": \"node\", \"device\": \"srv1\", "
          "\"text\": \"nfs: server srv1 not responding\"}]}"),
      "io-error",
      "node-wide kernel nfs on srv1: nfs: server srv1 not responding", 0 },
    /* 7. input-missing: by the culprit's tool, with a non-zero exit */
    { OC ("{\"state\": \"failed\", \"exit_code\": 2, " CULPRIT_EXIT2 "}, "
          "\"files\": {\"source\": \"ebpf\", \"failed_opens\": [{\"path\": "
          "\"/etc/ld.so.preload\", \"errno\": \"ENOENT\", \"tool\": \"bash\", "
          "\"count\": 9}, {\"path\": \"/ref/hg38.fa\", \"errno\": \"ENOENT\", "
          "\"tool\": \"STAR\", \"count\": 3}]}}"),
      "input-missing",
      "STAR could not open /ref/hg38.fa (ENOENT, 3 times); STAR (pid 50) "
      "exited 2, 0.0 s before the end, under bash 49; 1 collateral failure "
      "after it",
      0 },
    /* the kernel's count of processes that acted on each failed lookup:
     * a probe no process ended on (an interpreter's start-up, the
     * loader's search path) is no missing input; a stat that one acted
     * on is
     */
    { OC ("{\"state\": \"failed\", \"exit_code\": 2, " CULPRIT_EXIT2 "}, "
          "\"files\": {\"source\": \"ebpf\", \"failed_opens\": [{\"path\": "
          "\"/usr/bin/pybuilddir.txt\", \"errno\": \"ENOENT\", \"tool\": "
          "\"STAR\", \"count\": 1, \"call\": \"open\", \"acted\": 0}]}}"),
      "tool-error", "STAR (pid 50) exited 2", 1 },
    { OC ("{\"state\": \"failed\", \"exit_code\": 2, " CULPRIT_EXIT2 "}, "
          "\"files\": {\"source\": \"ebpf\", \"failed_opens\": [{\"path\": "
          "\"/in/r1.fq\", \"errno\": \"ENOENT\", \"tool\": \"STAR\", "
          "\"count\": 1, \"call\": \"stat\", \"acted\": 1}, {\"path\": "
          "\"/opt/lib/tls/x86_64/libz.so.1\", \"errno\": \"ENOENT\", "
          "\"tool\": \"STAR\", \"count\": 4, \"call\": \"open\", "
          "\"acted\": 0}]}}"),
      "input-missing", "STAR could not find /in/r1.fq (ENOENT); STAR (pid 50)",
      1 },
    /* a script's culprit is named from its script; the file evidence
     * names the interpreter by the kernel's comm, which the culprit keeps
     */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1, \"culprit\": {\"tool\": "
          "\"align.py\", \"comm\": \"python3\", \"pid\": 7, \"exit_code\": "
          "1, \"core_dumped\": false, \"at_s\": 0.0, \"chain\": [], "
          "\"collateral\": 0}}, \"files\": {\"source\": \"ebpf\", "
          "\"failed_opens\": [{\"path\": \"/in/r1.fq\", \"errno\": "
          "\"ENOENT\", \"tool\": \"python3\", \"count\": 1, \"call\": "
          "\"open\", \"acted\": 1}]}}"),
      "input-missing",
      "align.py could not open /in/r1.fq (ENOENT); align.py "
      "(pid 7)",
      1 },
    /* a culprit that crashed did not act on its failed lookup (perl's
     * start-up stat of an @INC directory, then SIGSEGV): tool-crash
     */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1, " CULPRIT_SEGV "}, "
          "\"files\": {\"source\": \"ebpf\", \"failed_opens\": [{\"path\": "
          "\"/usr/local/lib/site_perl\", \"errno\": \"ENOENT\", \"tool\": "
          "\"samtools\", \"count\": 1, \"call\": \"stat\", \"acted\": 1}]}}"),
      "tool-crash", "samtools (pid 4242) killed by SIGSEGV", 1 },
    /* another tool's failed open: the culprit's exit decides */
    { OC ("{\"state\": \"failed\", \"exit_code\": 2, " CULPRIT_EXIT2 "}, "
          "\"files\": {\"failed_opens\": [{\"path\": \"/x\", \"errno\": "
          "\"ENOENT\", \"tool\": \"bash\", \"count\": 1}]}}"),
      "tool-error", "STAR (pid 50) exited 2", 1 },
    /* an errno that does not say missing */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1}, \"files\": "
          "{\"failed_opens\": [{\"path\": \"/x\", \"errno\": \"EEXIST\", "
          "\"tool\": \"cp\", \"count\": 1}]}}"),
      "tool-error", "the step exited 1", 1 },
    /* no culprit: any tool's */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1}, \"files\": "
          "{\"failed_opens\": [{\"path\": \"/in\", \"errno\": \"EACCES\", "
          "\"tool\": \"cat\", \"count\": 1}]}}"),
      "input-missing", "cat could not open /in (EACCES)", 0 },
    /* a failed open of a step that exited 0 (a cancel aside) is no cause */
    { OC ("{\"state\": \"failed\"}, \"files\": {\"failed_opens\": "
          "[{\"path\": \"/in\", \"errno\": \"ENOENT\", \"tool\": \"cat\", "
          "\"count\": 1}]}}"),
      "unknown", "failed with no evidence of why", 0 },
    /* 8. tool-crash: the culprit, not the shell that exited 1 after it */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1, " CULPRIT_SEGV "}}"),
      "tool-crash",
      "samtools (pid 4242) killed by SIGSEGV (core dumped), 0.8 s before the "
      "end, under sh 4241 < bash 4240; 2 collateral failures after it",
      0 },
    { OC ("{\"state\": \"failed\", \"exit_code\": 139}, \"events\": "
          "[{\"kind\": \"segfault\", \"scope\": \"step\", \"pid\": 9, "
          "\"tool\": \"a.out\", \"text\": \"a.out[9]: segfault at 0\"}]}"),
      "tool-crash", "kernel segfault of a.out (pid 9): a.out[9]: segfault at 0",
      0 },
    { OC ("{\"state\": \"failed\", \"signal\": 6}}"), "tool-crash",
      "a task was killed by SIGABRT", 0 },
    /* 9. tool-error */
    { OC ("{\"state\": \"failed\", \"exit_code\": 2, " CULPRIT_EXIT2 "}}"),
      "tool-error",
      "STAR (pid 50) exited 2, 0.0 s before the end, under bash 49; 1 "
      "collateral failure after it",
      0 },
    { OC ("{\"state\": \"failed\", \"signal\": 9}}"), "tool-error",
      "a task was killed by SIGKILL (no process exit was observed)", 0 },
    { OC ("{\"state\": \"failed\", \"exit_code\": 3}}"), "tool-error",
      "the step exited 3 (no process exit was observed)", 0 },
    /* 10. unknown */
    { OC ("{\"state\": \"unknown\"}}"), "unknown",
      "unknown with no evidence of why", 0 },
    /* hostile text from the job is blanked */
    { OC ("{\"state\": \"failed\", \"exit_code\": 1, \"culprit\": "
          "{\"tool\": \"ev\\nil\\u001b[2J\", \"pid\": 1, \"exit_code\": 1}}}"),
      "tool-error", "ev il [2J (pid 1) exited 1", 0 },
};

static void test_cases (void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const struct ccase *c = &cases[i];
        json_error_t jerr;
        json_t *rec = json_loads (c->json, 0, &jerr);
        char text[TR_CAUSE_TEXT_MAX];
        tr_cause_t k;

        if (!rec)
            fail_msg ("case %zu: bad JSON: %s", i, jerr.text);
        k = tr_cause_of (rec, text, sizeof (text));
        if (strcmp (tr_cause_name (k), c->cause))
            fail_msg ("case %zu: cause '%s', want '%s' (%s)", i,
                      tr_cause_name (k), c->cause, text);
        if (c->part ? !strstr (text, c->text) : strcmp (text, c->text) != 0)
            fail_msg ("case %zu:\n  want '%s'\n  got  '%s'", i, c->text, text);
        json_decref (rec);
    }
}

static void test_names (void **state)
{
    (void)state;
    for (int k = TR_CAUSE_NONE; k <= TR_CAUSE_UNKNOWN; k++)
        assert_int_equal (tr_cause_from_name (tr_cause_name ((tr_cause_t)k)),
                          k);
    assert_int_equal (tr_cause_from_name ("nonsense"), TR_CAUSE_NONE);
    assert_int_equal (tr_cause_from_name (NULL), TR_CAUSE_NONE);
    assert_string_equal (tr_cause_name ((tr_cause_t)99), "");
    assert_string_equal (tr_cause_signal_name (11), "SIGSEGV");
    assert_null (tr_cause_signal_name (64));
    /* what the scheduler ended, or a stall, blames no tool */
    assert_false (tr_cause_blames_tool (TR_CAUSE_TIMEOUT));
    assert_false (tr_cause_blames_tool (TR_CAUSE_CANCELLED));
    assert_false (tr_cause_blames_tool (TR_CAUSE_NODE_FAILURE));
    assert_false (tr_cause_blames_tool (TR_CAUSE_STALLED));
    assert_false (tr_cause_blames_tool (TR_CAUSE_NONE));
    assert_true (tr_cause_blames_tool (TR_CAUSE_TOOL_CRASH));
    assert_true (tr_cause_blames_tool (TR_CAUSE_TOOL_ERROR));
    assert_true (tr_cause_blames_tool (TR_CAUSE_OOM));
    assert_true (tr_cause_blames_tool (TR_CAUSE_INPUT_MISSING));
    assert_true (tr_cause_blames_tool (TR_CAUSE_IO_ERROR));
}

/* A short buffer gets a terminated prefix; NULL text is allowed. */
static void test_short_buffer (void **state)
{
    json_t *rec = json_loads (OC ("{\"state\": \"failed\", \"exit_code\": "
                                  "1, " CULPRIT_SEGV "}}"),
                              0, NULL);
    char text[12];

    (void)state;
    assert_non_null (rec);
    memset (text, 'x', sizeof (text));
    assert_int_equal (tr_cause_of (rec, text, 8), TR_CAUSE_TOOL_CRASH);
    assert_string_equal (text, "samtool");
    assert_int_equal (text[8], 'x');
    assert_int_equal (tr_cause_of (rec, NULL, 0), TR_CAUSE_TOOL_CRASH);
    assert_int_equal (tr_cause_of (NULL, text, sizeof (text)), TR_CAUSE_NONE);
    assert_string_equal (text, "");
    json_decref (rec);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_cases),
        cmocka_unit_test (test_names),
        cmocka_unit_test (test_short_buffer),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
