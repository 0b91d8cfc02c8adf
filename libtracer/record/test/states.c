/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for the state words: every state maps to its sacct word,
 * abbreviation, rank, mark and Nextflow status as states.h documents;
 * the scheduler's words map to outcome states the record format
 * defines; a node failure is NODE_FAIL from the record to every name;
 * the one OOM question.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <jansson.h>

#include "libtracer/record/cause.h"
#include "libtracer/record/record.h"
#include "libtracer/record/states.h"

static const struct {
    const char *state, *sacct, *abbrev;
    int rank;
    bool failed;
    char mark;
    const char *nextflow;
} table[] = {
    { "completed", "COMPLETED", "CD", 0, false, '=', "COMPLETED" },
    { "running", "RUNNING", "R", 1, false, '>', "RUNNING" },
    { "unknown", "UNKNOWN", "UN", 2, false, '?', "-" },
    { "failed", "FAILED", "F", 3, true, 'F', "FAILED" },
    { "cancelled", "CANCELLED", "CA", 4, true, 'C', "ABORTED" },
    { "timeout", "TIMEOUT", "TO", 5, true, 'T', "FAILED" },
    { "oom", "OUT_OF_MEMORY", "OOM", 6, true, 'M', "FAILED" },
    { "incomplete", "INCOMPLETE", "IN", 7, false, '?', "-" },
    { "NODE_FAIL", "NODE_FAIL", "NF", 7, true, 'N', "FAILED" },
    { "BOOT_FAIL", "BOOT_FAIL", "BF", 7, true, 'N', "FAILED" },
};

#define N (sizeof (table) / sizeof (table[0]))

static void test_words (void **state)
{
    (void)state;
    for (size_t i = 0; i < N; i++) {
        char lower[32];
        size_t k;

        assert_string_equal (tr_states_sacct (table[i].state, 0),
                             table[i].sacct);
        /* both spellings rank, fail, mark and read alike */
        assert_int_equal (tr_states_rank (table[i].state), table[i].rank);
        assert_int_equal (tr_states_rank (table[i].sacct), table[i].rank);
        assert_int_equal (tr_states_failed (table[i].state), table[i].failed);
        assert_int_equal (tr_states_failed (table[i].sacct), table[i].failed);
        assert_int_equal (tr_states_mark (table[i].state), table[i].mark);
        assert_int_equal (tr_states_mark (table[i].sacct), table[i].mark);
        assert_string_equal (tr_states_nextflow (table[i].state),
                             table[i].nextflow);
        assert_string_equal (tr_states_nextflow (table[i].sacct),
                             table[i].nextflow);
        /* -s: the abbreviation, the sacct word and the state, any case */
        assert_string_equal (tr_states_parse (table[i].abbrev), table[i].state);
        assert_string_equal (tr_states_parse (table[i].sacct), table[i].state);
        assert_string_equal (tr_states_parse (table[i].state), table[i].state);
        for (k = 0; table[i].abbrev[k] && k < sizeof (lower) - 1; k++)
            lower[k] = (char)(table[i].abbrev[k] | 0x20);
        lower[k] = '\0';
        assert_string_equal (tr_states_parse (lower), table[i].state);
        /* the name every view shows: the state, OUT_OF_MEMORY for oom */
        assert_string_equal (tr_states_name (table[i].state, NAN),
                             strcmp (table[i].state, "oom") ? table[i].state
                                                            : "OUT_OF_MEMORY");
    }
    /* distinct ranks, best first, up to incomplete */
    for (size_t i = 1; i < 8; i++)
        assert_true (tr_states_rank (table[i - 1].state)
                     < tr_states_rank (table[i].state));
    assert_int_equal (tr_states_rank ("bogus"), 2);
    assert_int_equal (tr_states_rank (NULL), 2);
    assert_int_equal (tr_states_mark ("bogus"), '?');
    assert_string_equal (tr_states_nextflow ("bogus"), "-");
    assert_null (tr_states_parse ("XX"));
    assert_null (tr_states_parse ("PD"));
    assert_null (tr_states_parse (NULL));
    assert_string_equal (tr_states_sacct ("bogus", 0), "UNKNOWN");
    assert_string_equal (tr_states_sacct ("", 0), "");
    assert_string_equal (tr_states_sacct (NULL, 0), "");
    assert_string_equal (tr_states_name (NULL, 0), "");
    /* a failed step the OOM killer killed a process of */
    assert_string_equal (tr_states_sacct ("failed", 2), "OUT_OF_MEMORY");
    assert_string_equal (tr_states_name ("failed", 1), "OUT_OF_MEMORY");
    assert_string_equal (tr_states_name ("failed", NAN), "failed");
    assert_string_equal (tr_states_name ("timeout", 1), "timeout");
}

/* Every scheduler word maps to a state the record format defines. */
static void test_outcome (void **state)
{
    static const struct {
        const char *sched, *outcome;
    } map[] = {
        { "TIMEOUT", "timeout" },      { "DEADLINE", "timeout" },
        { "CANCELLED", "cancelled" },  { "PREEMPTED", "cancelled" },
        { "REVOKED", "cancelled" },    { "NODE_FAIL", "incomplete" },
        { "BOOT_FAIL", "incomplete" }, { "RUNNING", NULL },
        { "COMPLETING", NULL },        { "COMPLETED", NULL },
        { "PENDING", NULL },           { "REQUEUED", NULL },
        { "SUSPENDED", NULL },         { "FAILED", NULL },
        { "OUT_OF_MEMORY", NULL },     { "node_fail", NULL },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (map) / sizeof (map[0]); i++) {
        const char *o = tr_states_outcome (map[i].sched);
        if (!map[i].outcome) {
            assert_null (o);
            continue;
        }
        assert_non_null (o);
        assert_string_equal (o, map[i].outcome);
    }
    assert_null (tr_states_outcome (NULL));
}

static json_t *rec_of (const char *json)
{
    json_error_t e;
    json_t *rec = json_loads (json, 0, &e);

    assert_non_null (rec);
    return rec;
}

/* A node failure: the record says "incomplete" (record-format.md), the
 * step's state is NODE_FAIL, every name says NODE_FAIL, -s NF selects
 * it, the cause is node-failure.  So does an older collector's cancel.
 */
static void test_node_fail (void **state)
{
    static const char *const recs[] = {
        "{\"outcome\": {\"state\": \"incomplete\", \"reason\": \"the "
        "scheduler reports the job NODE_FAIL\"}}",
        "{\"outcome\": {\"state\": \"cancelled\", \"reason\": \"the "
        "scheduler reports the job NODE_FAIL\"}}",
    };
    const char *out = tr_states_outcome ("NODE_FAIL");
    const char *const *ok = tr_states_record;
    bool defined = false;

    (void)state;
    for (size_t i = 0; ok[i]; i++)
        defined |= !strcmp (ok[i], out);
    assert_true (defined);
    for (size_t i = 0; i < sizeof (recs) / sizeof (recs[0]); i++) {
        json_t *rec = rec_of (recs[i]);
        const char *s = tr_states_of (rec);

        assert_string_equal (s, "NODE_FAIL");
        assert_string_equal (tr_states_name (s, 0), "NODE_FAIL");
        assert_string_equal (tr_states_sacct (s, 0), "NODE_FAIL");
        assert_string_equal (tr_states_parse ("NF"), s);
        assert_true (tr_states_failed (s));
        assert_int_equal (tr_cause_of (rec, NULL, 0), TR_CAUSE_NODE_FAILURE);
        json_decref (rec);
    }
    /* incomplete for another reason stays INCOMPLETE */
    json_t *rec = rec_of ("{\"outcome\": {\"state\": \"incomplete\", "
                          "\"reason\": \"ended while tracerd was not "
                          "running\"}}");
    assert_string_equal (tr_states_of (rec), "incomplete");
    assert_string_equal (tr_states_sacct (tr_states_of (rec), 0), "INCOMPLETE");
    assert_int_equal (tr_cause_of (rec, NULL, 0), TR_CAUSE_NODE_FAILURE);
    json_decref (rec);
    rec = rec_of ("{\"outcome\": {\"state\": \"incomplete\", \"reason\": "
                  "\"the scheduler reports the job BOOT_FAIL\"}}");
    assert_string_equal (tr_states_sacct (tr_states_of (rec), 0), "BOOT_FAIL");
    json_decref (rec);
}

/* The OOM question: each sign alone makes a failed record "oom", and
 * the cause agrees.
 */
static void test_oom (void **state)
{
    static const struct {
        const char *json;
        double kills;
    } recs[] = {
        { "{\"outcome\": {\"state\": \"failed\"}, \"summary\": {\"memory\": "
          "{\"oom_kill_events\": 2}}}",
          2 },
        { "{\"outcome\": {\"state\": \"failed\"}, \"summary\": "
          "{\"x_oom_kill_events\": 1}}",
          1 },
        { "{\"outcome\": {\"state\": \"failed\", \"tasks\": [{\"task_id\": 0, "
          "\"pid\": 5, \"oom_killed\": true}]}, \"summary\": {\"memory\": "
          "{\"oom_kill_events\": 0}}}",
          1 },
        { "{\"outcome\": {\"state\": \"failed\"}, \"events\": [{\"kind\": "
          "\"oom-kill\", \"scope\": \"step\", \"tool\": \"sort\"}]}",
          1 },
    };
    json_t *rec;

    (void)state;
    for (size_t i = 0; i < sizeof (recs) / sizeof (recs[0]); i++) {
        rec = rec_of (recs[i].json);
        assert_true (tr_states_oom_kills (rec) == recs[i].kills);
        assert_string_equal (tr_states_of (rec), "oom");
        assert_int_equal (tr_cause_of (rec, NULL, 0), TR_CAUSE_OOM);
        json_decref (rec);
    }
    /* a node-wide event is not the step's */
    rec = rec_of ("{\"outcome\": {\"state\": \"failed\"}, \"events\": "
                  "[{\"kind\": \"oom-kill\", \"scope\": \"node\"}]}");
    assert_true (tr_states_oom_kills (rec) == 0);
    assert_string_equal (tr_states_of (rec), "failed");
    json_decref (rec);
    assert_true (tr_states_oom ("oom", 0));
    assert_true (tr_states_oom ("OUT_OF_MEMORY", NAN));
    assert_true (tr_states_oom ("completed", 1));
    assert_false (tr_states_oom ("failed", 0));
    assert_false (tr_states_oom ("failed", NAN));
    assert_false (tr_states_oom (NULL, NAN));
}

/* A final record that followed no process is incomplete, whatever its
 * outcome says: the new collector's (summary.cpu.source "none") and an
 * older one's (a process tree of no process).  A snapshot is not.
 */
static void test_unfollowed (void **state)
{
    static const char *const cases[][2] = {
        { "{\"kind\": \"final\", \"outcome\": {\"state\": \"completed\"}, "
          "\"summary\": {\"cpu\": {\"source\": \"none\"}}}",
          "incomplete" },
        { "{\"kind\": \"final\", \"outcome\": {\"state\": \"completed\"}, "
          "\"cgroup\": {\"attach\": \"process-tree\"}, \"summary\": "
          "{\"processes\": {\"count\": 0}}}",
          "incomplete" },
        { "{\"kind\": \"final\", \"outcome\": {\"state\": \"completed\"}, "
          "\"cgroup\": {\"attach\": \"process-tree\"}, \"summary\": "
          "{\"processes\": {\"count\": 2}}}",
          "completed" },
        { "{\"kind\": \"final\", \"outcome\": {\"state\": \"completed\"}, "
          "\"cgroup\": {\"attach\": \"cgroup\"}, \"summary\": "
          "{\"processes\": {\"count\": 0}}}",
          "completed" },
        { "{\"kind\": \"snapshot\", \"outcome\": {\"state\": \"running\"}, "
          "\"summary\": {\"cpu\": {\"source\": \"none\"}}}",
          "running" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        json_t *rec = rec_of (cases[i][0]);
        assert_string_equal (tr_states_of (rec), cases[i][1]);
        assert_int_equal (tr_states_unfollowed (rec),
                          !strcmp (cases[i][1], "incomplete"));
        json_decref (rec);
    }
}

/* bkill is CANCELLED however the LSF family tells it: IBM LSF's
 * LSB_JOBEXIT_INFO, or OpenLava's bare wait status of bkill's signals.
 */
static void test_lsf (void **state)
{
    const char *why;

    (void)state;
    assert_string_equal (tr_states_lsf (9, "SIGNAL -14 SIG_TERM_USER", &why),
                         "cancelled");
    assert_null (why);
    assert_string_equal (tr_states_lsf (15, "SIGNAL -25 SIG_TERM_RUNLIMIT",
                                        NULL),
                         "timeout");
    assert_string_equal (tr_states_lsf (130 << 8, "", &why), "cancelled");
    assert_non_null (strstr (why, "SIGINT"));
    assert_string_equal (tr_states_lsf (SIGINT, NULL, &why), "cancelled");
    assert_string_equal (tr_states_lsf (SIGTERM, "", &why), "cancelled");
    assert_non_null (strstr (why, "SIGTERM"));
    assert_string_equal (tr_states_lsf (SIGKILL, "", &why), "failed");
    assert_null (why);
    assert_string_equal (tr_states_lsf (0, "", &why), "completed");
    assert_string_equal (tr_states_lsf (3 << 8, "", &why), "failed");
}

static void test_phrase (void **state)
{
    (void)state;
    assert_string_equal (tr_states_phrase ("timeout"), "timed out");
    assert_string_equal (tr_states_phrase ("TIMEOUT"), "timed out");
    assert_string_equal (tr_states_phrase ("oom"), "killed for lack of memory");
    assert_string_equal (tr_states_phrase ("NODE_FAIL"), "lost to a node "
                                                         "failure");
    assert_null (tr_states_phrase ("nonsense"));
    assert_null (tr_states_phrase (NULL));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_words),     cmocka_unit_test (test_outcome),
        cmocka_unit_test (test_node_fail), cmocka_unit_test (test_oom),
        cmocka_unit_test (test_phrase),    cmocka_unit_test (test_unfollowed),
        cmocka_unit_test (test_lsf),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
