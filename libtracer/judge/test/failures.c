/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for tracer-report --failures: sums by cause, culprit tool,
 * step group, node and user; extern and running steps left out; a
 * multi-node step counted on each node; the nodes where a group fails
 * while it succeeds elsewhere; text and parsable output.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libtracer/judge/failures.h"

static tr_stepsum_t mk (const char *step,
                        const char *group,
                        const char *node,
                        const char *user,
                        const char *state,
                        const char *cause,
                        const char *culprit)
{
    tr_stepsum_t r;

    tr_stepsum_init (&r);
    r.step_id = step;
    r.group = group;
    r.node = node;
    r.user = user;
    r.state = state;
    r.cause = cause;
    r.culprit = culprit;
    return r;
}

#define NR 10
static void fill (tr_stepsum_t *rows, const tr_stepsum_t **p)
{
    rows[0] = mk ("batch", "align", "n1", "alice", "completed", "", "");
    rows[1] = mk ("batch", "align", "n1", "alice", "completed", "", "");
    rows[2] = mk ("batch", "align", "n3", "bob", "completed", "", "");
    rows[3] = mk ("batch", "align", "n2", "alice", "failed", "tool-crash",
                  "samtools");
    rows[4] =
        mk ("batch", "align", "n2", "bob", "failed", "tool-crash", "samtools");
    rows[5] = mk ("0", "sort", "n1,n2", "bob", "oom", "oom", "");
    rows[6] = mk ("batch", "sort", "n1", "bob", "timeout", "timeout", "sleep");
    /* not counted: the extern step, a running step */
    rows[7] =
        mk ("extern", "align", "n2", "alice", "cancelled", "cancelled", "");
    rows[8] = mk ("batch", "align", "n2", "alice", "running", "", "");
    /* one failure of a group on a node is not enough */
    rows[9] =
        mk ("batch", "sort", "n4", "bob", "failed", "tool-error", "python3");
    for (int i = 0; i < NR; i++)
        p[i] = &rows[i];
}

static json_t *entry (json_t *f, const char *list, const char *name)
{
    json_t *e;
    size_t i;

    json_array_foreach (json_object_get (f, list), i, e)
    {
        if (!strcmp (json_string_value (json_object_get (e, "name")), name))
            return e;
    }
    return NULL;
}

static long long iv (json_t *o, const char *k)
{
    assert_non_null (o);
    return (long long)json_integer_value (json_object_get (o, k));
}

static void test_sums (void **state)
{
    tr_stepsum_t rows[NR];
    const tr_stepsum_t *p[NR];
    tr_error_t error;
    json_t *f, *s;

    (void)state;
    fill (rows, p);
    assert_non_null (f = tr_failures (p, NR, &error));
    assert_int_equal (iv (f, "steps"), 8);
    assert_int_equal (iv (f, "failed"), 5);
    /* most first */
    assert_string_equal (
        json_string_value (json_object_get (
            json_array_get (json_object_get (f, "by_cause"), 0), "name")),
        "tool-crash");
    assert_int_equal (iv (entry (f, "by_cause", "tool-crash"), "failed"), 2);
    assert_int_equal (iv (entry (f, "by_cause", "oom"), "failed"), 1);
    assert_null (entry (f, "by_cause", "cancelled"));
    assert_int_equal (iv (entry (f, "by_tool", "samtools"), "failed"), 2);
    /* the time limit killed sleep: the scheduler's kill blames no tool */
    assert_null (entry (f, "by_tool", "sleep"));
    assert_int_equal (json_array_size (json_object_get (f, "by_tool")), 2);
    assert_int_equal (iv (entry (f, "by_group", "align"), "failed"), 2);
    assert_int_equal (iv (entry (f, "by_group", "align"), "steps"), 5);
    assert_int_equal (iv (entry (f, "by_group", "sort"), "steps"), 3);
    /* the two-node step counts on both */
    assert_int_equal (iv (entry (f, "by_node", "n2"), "failed"), 3);
    assert_int_equal (iv (entry (f, "by_node", "n2"), "steps"), 3);
    assert_int_equal (iv (entry (f, "by_node", "n1"), "failed"), 2);
    assert_int_equal (iv (entry (f, "by_node", "n1"), "steps"), 4);
    assert_null (entry (f, "by_node", "n3"));
    assert_int_equal (iv (entry (f, "by_user", "bob"), "failed"), 4);
    /* align fails twice on n2 and succeeds 3 times on 2 other nodes */
    assert_int_equal (json_array_size (json_object_get (f, "suspects")), 1);
    s = json_array_get (json_object_get (f, "suspects"), 0);
    assert_string_equal (json_string_value (json_object_get (s, "group")), "ali"
                                                                           "g"
                                                                           "n");
    assert_string_equal (json_string_value (json_object_get (s, "node")), "n2");
    assert_int_equal (iv (s, "failed"), 2);
    assert_int_equal (iv (s, "steps"), 2);
    assert_int_equal (iv (s, "ok_elsewhere"), 3);
    assert_int_equal (iv (s, "nodes_ok"), 2);
    json_decref (f);

    errno = 0;
    assert_null (tr_failures (NULL, 1, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (f = tr_failures (NULL, 0, &error));
    assert_int_equal (iv (f, "failed"), 0);
    json_decref (f);
}

static char *render (json_t *f, bool parsable)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);

    assert_non_null (out);
    assert_int_equal (tr_failures_print (out, f, parsable), 0);
    fclose (out);
    return text;
}

static void test_print (void **state)
{
    tr_stepsum_t rows[NR];
    const tr_stepsum_t *p[NR];
    json_t *f;
    char *text, *line, *save = NULL;

    (void)state;
    fill (rows, p);
    assert_non_null (f = tr_failures (p, NR, NULL));
    text = render (f, false);
    assert_non_null (strstr (text, "Failures: 5 of 8 steps (62.5%)\n"));
    assert_non_null (strstr (text, "\nBy cause (doc/diagnosis.md):\n"
                                   "  tool-crash"));
    assert_non_null (strstr (text, "  samtools                                 "
                                   "       2\n"));
    assert_non_null (strstr (text, "  n2                                       "
                                   "       3        3  100.0%\n"));
    assert_non_null (strstr (text, "\nNodes where a step group fails while it "
                                   "succeeds elsewhere:\n"));
    assert_non_null (strstr (text, "  align                            n2      "
                                   "              2      2     3 on 2\n"));
    for (line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save))
        if (strlen (line) > 80)
            fail_msg ("wider than 80 columns: '%s'", line);
    free (text);
    text = render (f, true);
    assert_true (!strncmp (text,
                           "Section|Name|Node|Failed|Steps|OkElsewhere\n"
                           "total|||5|8|\n",
                           56));
    assert_non_null (strstr (text, "\ncause|tool-crash||2||\n"));
    assert_non_null (strstr (text, "\ngroup|align||2|5|\n"));
    assert_non_null (strstr (text, "\nsuspect|align|n2|2|2|3\n"));
    free (text);
    json_decref (f);
    f = json_object ();
    errno = 0;
    assert_int_equal (tr_failures_print (stdout, f, false), -1);
    assert_int_equal (errno, EINVAL);
    json_decref (f);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_sums),
        cmocka_unit_test (test_print),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
