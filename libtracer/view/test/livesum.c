/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Live summaries (livesum.h): the text of a node's running steps per
 * user, read back whole or not at all, believed only in its place; the
 * store's live files, written, pruned and scanned; and the run view of
 * a run in progress.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <cmocka.h>
#include "libtracer/view/html.h"
#include "libtracer/record/livesum.h"
#include "libtracer/view/runview.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/record/store.h"
#include "rmtree.h"

#define T0_MS 1800000000000.0 /* when the figures were read */

static tr_stepsum_t mk (const char *job, const char *node, double uid)
{
    tr_stepsum_t r;

    tr_stepsum_init (&r);
    r.scheduler = "slurm";
    r.cluster = "c1";
    r.job_id = job;
    r.step_id = "batch";
    r.job_name = "snakejob.align.1.sh";
    r.user = "alice";
    r.uid = uid;
    r.group = "align/batch";
    r.run_id = "r1";
    r.pipeline = "demo";
    r.process = "align";
    r.state = "running";
    r.node = node;
    r.nodes = 1;
    r.req_cores = 2;
    r.req_mem_bytes = 1 << 30;
    r.start_ms = T0_MS - 45000;
    r.elapsed_s = 45;
    r.cpu_s = 60;
    r.mem_peak_bytes = 300 << 20;
    r.read_bytes = 1 << 20;
    r.write_bytes = 2 << 20;
    return r;
}

struct got {
    tr_stepsum_t rows[8];
    int n;
};

static int take (const tr_stepsum_t *row, void *arg)
{
    struct got *g = arg;

    if (g->n == 8)
        return -1;
    g->rows[g->n++] = *row;
    return 0;
}

/* the text of two running steps of uid 1000 on n1 */
static char *two_steps (void)
{
    tr_stepsum_t a = mk ("7", "n1", 1000), b = mk ("8", "n1", 1000);
    const tr_stepsum_t *v[] = { &a, &b };
    char *text = tr_livesum_text (v, 2, "c1", "n1", 1000, T0_MS, 30);

    assert_non_null (text);
    return text;
}

static void test_round_trip (void **state)
{
    tr_strpool_t *pool = tr_strpool_create ();
    char *text = two_steps ();
    struct got g = { .n = 0 };
    tr_error_t error;

    (void)state;
    assert_non_null (strstr (text, "#tracer-live 1\tc1\tn1\t1000\t"));
    assert_non_null (strstr (text, "\n#end\t2\n"));
    /* 10 s later: fresh */
    assert_int_equal (tr_livesum_parse (text, "c1", "n1", 1000, T0_MS + 10000,
                                        pool, take, &g, &error),
                      0);
    assert_int_equal (g.n, 2);
    assert_string_equal (g.rows[0].job_id, "7");
    assert_string_equal (g.rows[1].job_id, "8");
    assert_string_equal (g.rows[0].sig, TR_STEPSUM_SIG_LIVE);
    assert_string_equal (g.rows[0].run_id, "r1");
    assert_string_equal (g.rows[0].state, "running");
    assert_true (g.rows[0].live_ms == T0_MS);
    assert_false (g.rows[0].live_stale);
    assert_true (g.rows[0].cpu_s == 60 && g.rows[0].elapsed_s == 45);
    assert_true (g.rows[0].mem_peak_bytes == 300 << 20);
    free (text);
    /* stale past 3 intervals and the slack, not before */
    text = two_steps ();
    g.n = 0;
    assert_int_equal (
        tr_livesum_parse (text, "c1", "n1", 1000,
                          T0_MS + 1000.0 * (3 * 30 + TR_LIVESUM_SLACK_S), pool,
                          take, &g, &error),
        0);
    assert_false (g.rows[0].live_stale);
    free (text);
    text = two_steps ();
    g.n = 0;
    assert_int_equal (
        tr_livesum_parse (text, "c1", "n1", 1000,
                          T0_MS + 1000.0 * (3 * 30 + TR_LIVESUM_SLACK_S + 1),
                          pool, take, &g, &error),
        0);
    assert_true (g.rows[0].live_stale && g.rows[1].live_stale);
    free (text);
    tr_strpool_destroy (pool);
}

/* parse text (a copy) and expect it refused, fn never called */
static void refused (const char *text,
                     const char *node,
                     unsigned uid,
                     const char *why)
{
    tr_strpool_t *pool = tr_strpool_create ();
    char *copy = strdup (text);
    struct got g = { .n = 0 };
    tr_error_t error;

    assert_int_equal (tr_livesum_parse (copy, "c1", node, uid, T0_MS, pool,
                                        take, &g, &error),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (g.n, 0);
    if (!strstr (error.text, why))
        fail_msg ("'%s' does not say '%s'", error.text, why);
    free (copy);
    tr_strpool_destroy (pool);
}

static char *replace (const char *s, const char *from, const char *to)
{
    const char *p = strstr (s, from);
    size_t n = strlen (s) - strlen (from) + strlen (to) + 1;
    char *out = malloc (n);

    assert_non_null (p);
    snprintf (out, n, "%.*s%s%s", (int)(p - s), s, to, p + strlen (from));
    return out;
}

static void test_refused (void **state)
{
    char *text = two_steps (), *t;
    char *end = strstr (text, "#end");
    tr_stepsum_t a = mk ("7", "n1", 1000);
    const tr_stepsum_t *v[] = { &a };

    (void)state;
    /* a file in another node's place, or another user's */
    refused (text, "n2", 1000, "another node");
    refused (text, "n1", 1001, "another node");
    /* its first line moved to another user: the rows are not theirs */
    t = replace (text, "\tn1\t1000\t", "\tn1\t1001\t");
    refused (t, "n1", 1001, "a row of another");
    free (t);
    /* cut short: no #end, or #end miscounting */
    t = strndup (text, (size_t)(end - text));
    refused (t, "n1", 1000, "cut short");
    free (t);
    t = replace (text, "#end\t2", "#end\t3");
    refused (t, "n1", 1000, "#end does not count");
    free (t);
    /* a row cut in the middle */
    t = strndup (text, (size_t)(end - text) - 20);
    refused (t, "n1", 1000, "");
    free (t);
    refused ("hello\n", "n1", 1000, "not a live summary");
    free (text);
    /* the writer does not put another node's or user's rows in a file */
    assert_null (tr_livesum_text (v, 1, "c1", "n2", 1000, T0_MS, 30));
    assert_int_equal (errno, EINVAL);
    assert_null (tr_livesum_text (v, 1, "c1", "n1", 0, T0_MS, 30));
}

static void test_files (void **state)
{
    tr_stepsum_t r[5] = { mk ("9", "n2", 1000), mk ("7", "n1", 1001),
                          mk ("8", "n1", 1000), mk ("6", "n1", 1000),
                          mk ("5", "n1", NAN) };
    const tr_stepsum_t *v[5] = { &r[0], &r[1], &r[2], &r[3], &r[4] };
    struct tr_livesum_file *f = NULL;
    ssize_t n;

    (void)state;
    r[0].node = "n2";
    n = tr_livesum_files (v, 5, T0_MS, 30, &f);
    /* n1/1000 (2 steps), n1/1001, n2/1000; the step of no uid left out */
    assert_int_equal (n, 3);
    assert_string_equal (f[0].node, "n1");
    assert_int_equal (f[0].uid, 1000);
    assert_non_null (strstr (f[0].text, "\n#end\t2\n"));
    assert_string_equal (f[1].node, "n1");
    assert_int_equal (f[1].uid, 1001);
    assert_string_equal (f[2].node, "n2");
    assert_int_equal (f[2].uid, 1000);
    tr_livesum_files_free (f, (size_t)n);
    /* nothing running: no file (tracerd's pass with no steps left) */
    assert_int_equal (tr_livesum_files (NULL, 0, T0_MS, 30, &f), 0);
    assert_null (f);
}

struct fx {
    char dir[64];
    char root[96];
    tr_store_t *store;
};

static int setup (void **state)
{
    static const struct tr_store_opts o = {
        .file_mode = 0640,
        .dir_mode = 0755,
        .owner_is_job = false,
        .owner_uid = (uid_t)-1,
        .job_access = TR_STORE_ACCESS_NONE,
        .gid = (gid_t)-1,
        .create = true,
    };
    struct fx *f = calloc (1, sizeof (*f));

    snprintf (f->dir, sizeof (f->dir), "/tmp/tracer-live-XXXXXX");
    assert_non_null (mkdtemp (f->dir));
    snprintf (f->root, sizeof (f->root), "%s/store", f->dir);
    assert_non_null (f->store = tr_store_open (f->root, &o, NULL));
    *state = f;
    return 0;
}

static int teardown (void **state)
{
    struct fx *f = *state;

    tr_store_destroy (f->store);
    rmtree (f->dir);
    free (f);
    return 0;
}

struct bads {
    int n;
    char last[512];
};

static void said (const char *path, const char *why, void *arg)
{
    struct bads *b = arg;

    b->n++;
    snprintf (b->last, sizeof (b->last), "%s: %s", path, why);
}

/* both callbacks share one argument in the scan: a pair */
struct both {
    struct got got;
    struct bads bads;
};

static int take2 (const tr_stepsum_t *row, void *arg)
{
    return take (row, &((struct both *)arg)->got);
}

static void said2 (const char *path, const char *why, void *arg)
{
    said (path, why, &((struct both *)arg)->bads);
}

static void scan (struct fx *f, struct both *b, struct tr_livesum_stats *st)
{
    tr_strpool_t *pool = tr_strpool_create ();
    tr_error_t error;

    memset (b, 0, sizeof (*b));
    /* now: files older than a day are not read */
    assert_int_equal (tr_livesum_scan (f->store, "c1", geteuid (), NULL,
                                       1000.0 * (double)time (NULL), pool,
                                       take2, said2, b, st, &error),
                      0);
    /* the rows' strings live in the pool: only counts are kept */
    tr_strpool_destroy (pool);
}

static const char *at (struct fx *f, char *buf, size_t size, const char *rel)
{
    snprintf (buf, size, "%s/%s", f->root, rel);
    return buf;
}

static void test_store (void **state)
{
    struct fx *f = *state;
    char *text = two_steps ();
    struct tr_livesum_stats st;
    struct both b;
    tr_error_t error;
    uid_t keep = 1000;
    char p[512], q[512];
    struct stat sb;

    assert_int_equal (tr_store_put_live (f->store, "c1", "n1", 1000, text,
                                         &error),
                      0);
    assert_int_equal (stat (at (f, p, sizeof (p), "c1/live/n1/1000.tsv"), &sb),
                      0);
    assert_int_equal (sb.st_mode & 07777, 0640);
    /* a place that is no path component is refused */
    assert_int_equal (tr_store_put_live (f->store, "c1", "../x", 1000, text,
                                         &error),
                      -1);
    scan (f, &b, &st);
    assert_int_equal (st.files, 1);
    assert_int_equal (b.got.n, 2);
    assert_int_equal (b.bads.n, 0);
    /* a link in a user's place is not followed; a file others may write
     * is not believed; both are named
     */
    assert_int_equal (symlink ("1000.tsv",
                               at (f, p, sizeof (p), "c1/live/n1/1001.tsv")),
                      0);
    scan (f, &b, &st);
    assert_int_equal (b.got.n, 2);
    assert_int_equal (b.bads.n, 1);
    assert_non_null (strstr (b.bads.last, "c1/live/n1/1001.tsv"));
    assert_int_equal (unlink (p), 0);
    assert_int_equal (chmod (at (f, q, sizeof (q), "c1/live/n1/1000.tsv"),
                             0662),
                      0);
    scan (f, &b, &st);
    assert_int_equal (b.got.n, 0);
    assert_int_equal (b.bads.n, 1);
    assert_non_null (strstr (b.bads.last, "owner or mode"));
    /* rewritten: believed again */
    assert_int_equal (tr_store_put_live (f->store, "c1", "n1", 1000, text,
                                         &error),
                      0);
    scan (f, &b, &st);
    assert_int_equal (b.got.n, 2);
    /* a file copied to another user's name: refused, its rows unseen */
    {
        int fd = open (at (f, p, sizeof (p), "c1/live/n1/1002.tsv"),
                       O_WRONLY | O_CREAT | O_EXCL, 0640);

        assert_true (fd >= 0);
        assert_int_equal (write (fd, text, strlen (text)),
                          (ssize_t)strlen (text));
        close (fd);
    }
    scan (f, &b, &st);
    assert_int_equal (b.got.n, 2);
    assert_int_equal (b.bads.n, 1);
    assert_non_null (strstr (b.bads.last, "1002.tsv: written for another"));
    /* pruning keeps the users still running there, removes the rest */
    assert_int_equal (tr_store_prune_live (f->store, "c1", "n1", &keep, 1,
                                           &error),
                      1);
    assert_int_equal (access (p, F_OK), -1);
    assert_int_equal (access (q, F_OK), 0);
    /* nobody left: the node's directory goes too */
    assert_int_equal (tr_store_prune_live (f->store, "c1", "n1", NULL, 0,
                                           &error),
                      1);
    assert_int_equal (access (at (f, p, sizeof (p), "c1/live/n1"), F_OK), -1);
    assert_int_equal (tr_store_prune_live (f->store, "c1", "n1", NULL, 0,
                                           &error),
                      0);
    scan (f, &b, &st);
    assert_int_equal (st.files, 0);
    assert_int_equal (b.got.n, 0);
    free (text);
}

/* A store without ACLs: the user owns their live summary, and could
 * chmod it and write rows of their own making.  Unsigned, such a file is
 * not believed (unless unsigned ones are allowed); a file of root's
 * (ACLs, or no access for the user) is, signed or not.
 */
static void test_store_owned_by_user (void **state)
{
    struct fx *f = *state;
    char *text = two_steps ();
    struct tr_livesum_trust lax = { NULL, NULL, 0, true };
    struct tr_livesum_stats st;
    struct both b;
    tr_error_t error;
    tr_strpool_t *pool;
    char p[512];

    if (geteuid () != 0) {
        free (text);
        skip ();
    }
    assert_int_equal (tr_store_put_live (f->store, "c1", "n1", 1000, text,
                                         &error),
                      0);
    at (f, p, sizeof (p), "c1/live/n1/1000.tsv");
    scan (f, &b, &st);
    assert_int_equal (b.got.n, 2);
    /* the user's own, as on a store without ACLs */
    assert_int_equal (chown (p, 1000, (gid_t)-1), 0);
    scan (f, &b, &st);
    assert_int_equal (b.got.n, 0);
    assert_int_equal (b.bads.n, 1);
    assert_non_null (strstr (b.bads.last, "c1/live/n1/1000.tsv: unsigned, "
                                          "and its user owns it"));
    /* --allow-unsigned: believed */
    pool = tr_strpool_create ();
    memset (&b, 0, sizeof (b));
    assert_int_equal (tr_livesum_scan (f->store, "c1", geteuid (), &lax,
                                       1000.0 * (double)time (NULL), pool,
                                       take2, said2, &b, &st, &error),
                      0);
    assert_int_equal (b.got.n, 2);
    tr_strpool_destroy (pool);
    /* a signature line that is not the last line, or one no munged
     * wrote: not believed either
     */
    {
        char *bad = malloc (strlen (text) + 128);
        int fd;

        assert_non_null (bad);
        snprintf (bad, strlen (text) + 128, "%s%s\tMUNGE:garbage:\n", text,
                  TR_LIVESUM_SIG);
        assert_int_equal (unlink (p), 0);
        fd = open (p, O_WRONLY | O_CREAT | O_EXCL, 0640);
        assert_true (fd >= 0);
        assert_int_equal (write (fd, bad, strlen (bad)), (ssize_t)strlen (bad));
        close (fd);
        scan (f, &b, &st);
        assert_int_equal (b.got.n, 0);
        assert_int_equal (b.bads.n, 1);
        free (bad);
    }
    free (text);
}

/* A run in progress: its running task with the age of its figures. */
static void test_run_view (void **state)
{
    tr_stepsum_t r[3];
    const tr_stepsum_t *v[3] = { &r[0], &r[1], &r[2] };
    struct tr_run_view_opts o = { NULL, NULL, NULL, T0_MS + 20000 };
    json_t *view, *t, *l;
    tr_error_t error;
    char *buf = NULL;
    size_t len = 0;
    FILE *out;

    (void)state;
    r[0] = mk ("7", "n1", 1000);
    r[0].state = "completed";
    r[0].end_ms = r[0].start_ms + 45000;
    r[1] = mk ("8", "n2", 1000);
    r[1].live_ms = T0_MS;
    r[1].sig = TR_STEPSUM_SIG_LIVE;
    r[2] = mk ("9", "n1", 1000);
    r[2].live_ms = T0_MS - 200000;
    r[2].live_stale = true;
    r[2].stalled_s = 725; /* no CPU or I/O progress for 12 min 5 s */
    assert_non_null (view = tr_run_view (v, 3, "r1", &o, &error));
    assert_int_equal (json_array_size (json_object_get (view, "running")), 2);
    assert_string_equal (json_string_value (
                             json_array_get (json_object_get (view, "running"),
                                             0)),
                         "8");
    t = json_array_get (json_object_get (view, "tasks"), 1);
    assert_string_equal (json_string_value (json_object_get (t, "job_id")),
                         "8");
    assert_non_null (l = json_object_get (t, "live"));
    assert_true (json_number_value (json_object_get (l, "age_s")) == 20);
    assert_false (json_is_true (json_object_get (l, "stale")));
    assert_true (
        json_is_true (json_object_get (json_object_get (view, "run"), "runnin"
                                                                      "g")));
    assert_non_null (out = open_memstream (&buf, &len));
    assert_int_equal (tr_run_view_print (out, view, 80, &error), 0);
    fclose (out);
    /* the age said is of the fresh figures; the stale ones say theirs */
    assert_non_null (strstr (buf, "\nRunning now: 2 tasks (figures at most "
                                  "00:00:20 old)\n"));
    assert_non_null (strstr (buf, "\n  8 (align) on n2: 00:00:45 so far, CPU "
                                  "66.7%, memory 300.0 MiB of 1.0 GiB, I/O"));
    assert_non_null (strstr (buf, "\n  9 (align) on n1: STALE: figures "
                                  "00:03:40 old"));
    /* a stalled task says so and for how long; the others do not */
    assert_non_null (strstr (buf, "STALLED for 00:12:05 (no CPU or I/O "
                                  "progress); 00:00:45 so"));
    assert_true (strstr (buf, "STALLED") > strstr (buf, "\n  9 (align)"));
    l = json_array_get (json_object_get (view, "tasks"), 2);
    assert_true (json_number_value (json_object_get (l, "stalled_s")) == 725);
    assert_null (json_object_get (t, "stalled_s"));
    /* running tasks are not among the slowest, nor advice's evidence */
    assert_int_equal (json_array_size (json_object_get (view, "slowest")), 1);
    assert_non_null (strstr (buf, "from 1 runs)"));
    free (buf);
    /* the page has the table of the running tasks */
    buf = NULL;
    assert_non_null (out = open_memstream (&buf, &len));
    assert_int_equal (tr_html_run_report (out, view, NULL), 0);
    fclose (out);
    assert_non_null (strstr (buf, "<h2>Running now</h2>"));
    assert_non_null (strstr (buf, "<td>8</td><td>align</td><td>n2</td>"));
    assert_non_null (strstr (buf, "(stale)"));
    /* the stalled task says so, as the text does; the other moves */
    assert_non_null (strstr (buf, "<span class=\"state state-warn\">STALLED "
                                  "for 00:12:05</span>"));
    assert_int_equal (strstr (buf, "<td>moving</td>") != NULL, 1);
    free (buf);
    json_decref (view);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_round_trip),
        cmocka_unit_test (test_refused),
        cmocka_unit_test (test_files),
        cmocka_unit_test_setup_teardown (test_store, setup, teardown),
        cmocka_unit_test_setup_teardown (test_store_owned_by_user, setup,
                                         teardown),
        cmocka_unit_test (test_run_view),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
