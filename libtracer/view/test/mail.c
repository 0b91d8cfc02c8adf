/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for mail: what a Slurm notification is about (from
 * slurmctld's MailProg environment and from the real subject forms,
 * hostile values refused), recipient checks, when a summary is worth
 * sending, the text and HTML summaries (HTML escaping of job data), the
 * MIME message (parts, RFC 2047 subject, long lines, header injection),
 * base64, handing a message to a fake sendmail written by the test, and
 * the user digest.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/notify/mail.h"
#include "libtracer/view/mail_summary.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/util/strbuf.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)
#define HOUR 3600.0

/* ---------------------------------------------------------------------
 * Helpers
 */

/* The widest line of s, in bytes. */
static size_t widest_line (const char *s)
{
    size_t w = 0;

    while (*s) {
        size_t n = strcspn (s, "\n");

        w = n > w ? n : w;
        s += n + (s[n] ? 1 : 0);
    }
    return w;
}

static size_t count (const char *hay, const char *needle)
{
    size_t n = 0, len = strlen (needle);

    for (const char *p = hay; (p = strstr (p, needle)); p += len)
        n++;
    return n;
}

/* s as TAP comment lines, for the log of a failing run. */
static void show (const char *s)
{
    for (const char *p = s; *p;) {
        size_t n = strcspn (p, "\n");

        print_message ("# %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

static bool starts_with (const char *s, const char *prefix)
{
    return !strncmp (s, prefix, strlen (prefix));
}

/* A copy of the first line of text that starts with prefix, or NULL. */
static char *line_with (const char *text, const char *prefix)
{
    size_t len = strlen (prefix);

    for (const char *p = text; p && *p;) {
        const char *nl = strchr (p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen (p);

        if (n >= len && !strncmp (p, prefix, len))
            return strndup (p, n);
        p = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* The line of text starting with prefix holds every one of needles
 * (NULL-terminated); fails the test naming what is missing.
 */
static void assert_line_has (const char *text,
                             const char *prefix,
                             const char *const *needles)
{
    char *l = line_with (text, prefix);

    if (!l)
        fail_msg ("no line starting with '%s'", prefix);
    for (size_t i = 0; needles[i]; i++)
        if (!strstr (l, needles[i])) {
            print_error ("line: %s\n", l);
            free (l);
            fail_msg ("'%s' is not in the '%s' line", needles[i], prefix);
        }
    free (l);
}

/* Is s[0..n) well-formed UTF-8 (no cut sequences)? */
static bool utf8_ok (const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < n) {
        size_t k = p[i] < 0x80           ? 0
                   : (p[i] & 0xe0) == 0xc0 ? 1
                   : (p[i] & 0xf0) == 0xe0 ? 2
                   : (p[i] & 0xf8) == 0xf0 ? 3 : 9;

        if (k == 9 || i + k >= n)
            return false;
        for (size_t j = 1; j <= k; j++)
            if ((p[i + j] & 0xc0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

/* Decode base64 (newlines ignored) into a new buffer of *len bytes and a
 * terminating NUL; NULL when in is not base64.
 */
static unsigned char *b64_decode (const char *in, size_t inlen, size_t *len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                              "qrstuvwxyz0123456789+/";
    unsigned char *out = malloc (inlen + 1);
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    size_t n = 0;

    assert_non_null (out);
    for (size_t i = 0; i < inlen; i++) {
        const char *c;

        if (in[i] == '\n')
            continue;
        if (in[i] == '=') {
            pad++;
            continue;
        }
        if (pad || !in[i] || !(c = strchr (tab, in[i]))) {
            free (out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)(c - tab);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    out[n] = '\0';
    *len = n;
    return out;
}

/* The body of the MIME part whose headers end with "hdrs\n\n" in msg,
 * base64-decoded: up to the next "\n--" boundary delimiter.
 */
static unsigned char *part_decoded (const char *msg, const char *hdrs,
                                    size_t *len)
{
    const char *body = strstr (msg, hdrs), *end;

    assert_non_null (body);
    body += strlen (hdrs);
    assert_true (!strncmp (body, "\n\n", 2));
    body += 2;
    end = strstr (body, "\n--");
    assert_non_null (end);
    return b64_decode (body, (size_t)(end - body), len);
}

/* The boundary named in the first "Content-Type: kind; boundary=" */
static char *boundary_of (const char *msg, const char *kind)
{
    char key[128];
    const char *p, *q;

    snprintf (key, sizeof (key), "Content-Type: %s; boundary=\"", kind);
    p = strstr (msg, key);
    assert_non_null (p);
    p += strlen (key);
    q = strchr (p, '"');
    assert_non_null (q);
    return strndup (p, (size_t)(q - p));
}

typedef int (*summary_f) (FILE *out, const struct tr_mail_job *j);

static char *render (summary_f fn, const struct tr_mail_job *j)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    assert_non_null (f);
    assert_int_equal (fn (f, j), 0);
    assert_int_equal (fclose (f), 0);
    assert_int_equal (strlen (buf), len);
    return buf;
}

static json_t *finding (const char *code, const char *sev, const char *text)
{
    json_t *f = json_pack ("{s:s, s:s, s:s}", "code", code, "severity", sev,
                           "text", text);

    assert_non_null (f);
    return f;
}

/* ---------------------------------------------------------------------
 * tr_mail_event_parse
 */

struct ev_case {
    const char *what;
    const char *env[10];
    const char *subject;
    int rc;
    int err;
    const char *job_id;
    const char *select;
    const char *type;
    const char *state;
    const char *name;       /* NULL: not checked */
    const char *run_time;
    const char *cluster;
    long exit_code;
    bool end;
    bool array_summary;
};

#define S_FAILED                                                           \
    "Slurm Job_id=22 Name=effjob Failed, Run time 00:00:01, FAILED, "     \
    "ExitCode 3"
#define S_ENDED                                                            \
    "Slurm Job_id=327 Name=ddt_clone Ended, Run time 00:05:01, "          \
    "COMPLETED, ExitCode 0"
#define S_BEGAN "Slurm Job_id=323 Name=x Began, Queued time 00:00:01"
#define S_TASK                                                             \
    "Slurm Array Task Job_id=5_2 (7) Name=a Ended, Run time 00:00:02, "    \
    "COMPLETED, ExitCode 0"
#define S_SUMMARY                                                          \
    "Slurm Array Summary Job_id=5_* (5) Name=a Ended, Run time "          \
    "00:00:02, COMPLETED, ExitCode 0"

/* A case that names no job: the rest of the row is not looked at. */
#define EV_FAIL                                                            \
    -1, EINVAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, false, false

static void check_event (const struct ev_case *c)
{
    struct tr_mail_event ev;
    tr_error_t error = { 0 };
    int rc;

    print_message ("# %s\n", c->what);
    errno = 0;
    rc = tr_mail_event_parse (&ev, c->subject, (char *const *)c->env,
                              &error);
    assert_int_equal (rc, c->rc);
    if (rc < 0) {
        assert_int_equal (errno, c->err);
        assert_string_equal (ev.job_id, "");
        assert_true (strlen (error.text) > 0);
        return;
    }
    assert_string_equal (ev.job_id, c->job_id);
    assert_string_equal (ev.select, c->select);
    assert_string_equal (ev.type, c->type);
    assert_string_equal (ev.state, c->state);
    if (c->name)
        assert_string_equal (ev.name, c->name);
    assert_string_equal (ev.run_time, c->run_time);
    assert_string_equal (ev.cluster, c->cluster);
    assert_int_equal (ev.exit_code, c->exit_code);
    assert_int_equal (ev.end, c->end);
    assert_int_equal (ev.array_summary, c->array_summary);
}

/* As slurmctld gives it to MailProg (FACTS 6), the subject unused or
 * only filling what the environment lacks.
 */
static void test_event_env (void **state)
{
    static const struct ev_case cases[] = {
        { "Failed, from the environment",
          { "SLURM_JOB_ID=22", "SLURM_JOB_MAIL_TYPE=Failed",
            "SLURM_JOB_STATE=FAILED", "SLURM_JOB_NAME=effjob",
            "SLURM_JOB_RUN_TIME=00:00:01", "SLURM_JOB_EXIT_CODE_MAX=3",
            "SLURM_CLUSTER_NAME=c1", "SLURM_JOB_EXIT_CODE=768" },
          NULL, 0, 0, "22", "22", "Failed", "FAILED", "effjob", "00:00:01",
          "c1", 3, true, false },
        { "Ended",
          { "SLURM_JOB_ID=327", "SLURM_JOB_MAIL_TYPE=Ended",
            "SLURM_JOB_STATE=COMPLETED", "SLURM_JOB_NAME=ddt clone",
            "SLURM_JOB_EXIT_CODE_MAX=0" },
          NULL, 0, 0, "327", "327", "Ended", "COMPLETED", "ddt clone", "",
          "", 0, true, false },
        { "Began is not an end",
          { "SLURM_JOB_ID=323", "SLURM_JOB_MAIL_TYPE=Began",
            "SLURM_JOB_STATE=RUNNING", "SLURM_JOB_QUEUED_TIME=00:00:01" },
          NULL, 0, 0, "323", "323", "Began", "RUNNING", "", "", "", -1,
          false, false },
        { "Requeued is not an end",
          { "SLURM_JOB_ID=9", "SLURM_JOB_MAIL_TYPE=Requeued" },
          NULL, 0, 0, "9", "9", "Requeued", "", "", "", "", -1, false,
          false },
        { "Reached time limit is not an end",
          { "SLURM_JOB_ID=10", "SLURM_JOB_MAIL_TYPE=Reached time limit",
            "SLURM_JOB_STATE=RUNNING" },
          NULL, 0, 0, "10", "10", "Reached time limit", "RUNNING", "", "",
          "", -1, false, false },
        { "the environment wins over the subject",
          { "SLURM_JOB_ID=30", "SLURM_JOB_MAIL_TYPE=Ended",
            "SLURM_JOB_STATE=COMPLETED", "SLURM_JOB_EXIT_CODE_MAX=1" },
          S_FAILED, 0, 0, "30", "30", "Ended", "COMPLETED", NULL,
          "00:00:01", "", 1, true, false },
        { "the subject fills what the environment lacks",
          { "SLURM_JOB_ID=22", "SLURM_CLUSTER_NAME=c1" },
          S_FAILED, 0, 0, "22", "22", "Failed", "FAILED", NULL, "00:00:01",
          "c1", 3, true, false },
        { "exit code not a number",
          { "SLURM_JOB_ID=22", "SLURM_JOB_EXIT_CODE_MAX=3x" },
          NULL, 0, 0, "22", "22", "", "", "", "", "", -1, false, false },
        { "exit code out of range",
          { "SLURM_JOB_ID=22", "SLURM_JOB_EXIT_CODE_MAX=300" },
          NULL, 0, 0, "22", "22", "", "", "", "", "", -1, false, false },
        { "array summary, array id from the environment",
          { "SLURM_JOB_ID=5", "SLURM_ARRAY_JOB_ID=5",
            "SLURM_JOB_MAIL_TYPE=Ended" },
          S_SUMMARY, 0, 0, "5", "5_*", "Ended", "COMPLETED", NULL,
          "00:00:02", "", 0, true, true },
        { "a key that only starts like SLURM_JOB_ID",
          { "SLURM_JOB_IDX=44", "SLURM_JOB_ID_=45" },
          NULL, EV_FAIL },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
        check_event (&cases[i]);
}

/* Run by hand: the real subject forms of Slurm 22.05 (agent.c). */
static void test_event_subject (void **state)
{
    static const struct ev_case cases[] = {
        { "Failed", { NULL }, S_FAILED, 0, 0, "22", "22", "Failed",
          "FAILED", NULL, "00:00:01", "", 3, true, false },
        { "Ended", { NULL }, S_ENDED, 0, 0, "327", "327", "Ended",
          "COMPLETED", NULL, "00:05:01", "", 0, true, false },
        { "Began", { NULL }, S_BEGAN, 0, 0, "323", "323", "Began", "",
          NULL, "", "", -1, false, false },
        { "array task: the raw job id", { NULL }, S_TASK, 0, 0, "7", "7",
          "Ended", "COMPLETED", NULL, "00:00:02", "", 0, true, false },
        { "array summary", { NULL }, S_SUMMARY, 0, 0, "5", "5_*", "Ended",
          "COMPLETED", NULL, "00:00:02", "", 0, true, true },
        { "out of memory", { NULL },
          "Slurm Job_id=40 Name=big Failed, Run time 00:00:09, "
          "OUT_OF_MEMORY, ExitCode 0",
          0, 0, "40", "40", "Failed", "OUT_OF_MEMORY", NULL, "00:00:09",
          "", 0, true, false },
        { "timeout", { NULL },
          "Slurm Job_id=41 Name=slow Failed, Run time 00:01:00, TIMEOUT, "
          "ExitCode 0",
          0, 0, "41", "41", "Failed", "TIMEOUT", NULL, "00:01:00", "", 0,
          true, false },
        { "reached time limit", { NULL },
          "Slurm Job_id=42 Name=x Reached time limit, Run time 00:59:00", 0,
          0, "42", "42", "Reached time limit", "", NULL, "00:59:00", "",
          -1, false, false },
        { "reached 90% of time limit", { NULL },
          "Slurm Job_id=43 Name=x Reached 90% of time limit, Run time "
          "00:54:00",
          0, 0, "43", "43", "Reached 90% of time limit", "", NULL,
          "00:54:00", "", -1, false, false },
        { "garbage", { NULL }, "hello, world", EV_FAIL },
        { "empty subject", { NULL }, "", EV_FAIL },
        { "no subject, no environment", { NULL }, NULL, EV_FAIL },
        { "Job_id= with nothing after it", { NULL },
          "Slurm Job_id= Name=x Ended", EV_FAIL },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
        check_event (&cases[i]);
}

/* Job ids become paths and selections, names go into mail: values that
 * could walk out of the store or break a line are not taken.
 */
static void test_event_hostile (void **state)
{
    static const struct ev_case cases[] = {
        { "job id with ../ in the environment",
          { "SLURM_JOB_ID=../../etc/passwd" }, NULL, EV_FAIL },
        { "job id with ../ after digits", { "SLURM_JOB_ID=22/../23" }, NULL,
          EV_FAIL },
        { "job id with a newline", { "SLURM_JOB_ID=22\n23" }, NULL, EV_FAIL },
        { "job id with ../ in the subject", { NULL },
          "Slurm Job_id=../7 Name=x Ended, Run time 00:00:01, COMPLETED, "
          "ExitCode 0",
          EV_FAIL },
        { "job id with a slash in the subject", { NULL },
          "Slurm Job_id=7/../8 Name=x Ended, Run time 00:00:01, "
          "COMPLETED, ExitCode 0",
          EV_FAIL },
        { "array summary id with ../", { "SLURM_JOB_ID=5",
            "SLURM_ARRAY_JOB_ID=../5" },
          S_SUMMARY, 0, 0, "5", "5", "Ended", "COMPLETED", NULL,
          "00:00:02", "", 0, true, false },
        { "a job id too long to be one",
          { "SLURM_JOB_ID=1234567890123456789012345678901234567890123456789"
            "01234567890123456789" },
          NULL, EV_FAIL },
        { "a name with a newline",
          { "SLURM_JOB_ID=22", "SLURM_JOB_NAME=a\nSubject: b" }, NULL, 0,
          0, "22", "22", "", "", "", "", "", -1, false, false },
        { "a name with an escape sequence",
          { "SLURM_JOB_ID=22", "SLURM_JOB_NAME=\x1b[31mred",
            "SLURM_CLUSTER_NAME=c\r1" },
          NULL, 0, 0, "22", "22", "", "", "", "", "", -1, false, false },
        { "a state with a newline",
          { "SLURM_JOB_ID=22", "SLURM_JOB_STATE=FAILED\nX" }, NULL, 0, 0,
          "22", "22", "", "", "", "", "", -1, false, false },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
        check_event (&cases[i]);
}

/* A job name with " (N" in it is part of the name, not the raw job id
 * of an array task: the subject names job 22.
 */
static void test_event_subject_name_paren (void **state)
{
    struct tr_mail_event ev;

    (void)state;
    assert_int_equal (tr_mail_event_parse (&ev,
                                           "Slurm Job_id=22 Name=run (3) "
                                           "Ended, Run time 00:00:01, "
                                           "COMPLETED, ExitCode 0",
                                           NULL, NULL),
                      0);
    assert_string_equal (ev.job_id, "22");
    assert_string_equal (ev.select, "22");
}

/* sbatch --tracer[=SPEC] reaches MailProg as SPANK job-control env. */
static void test_event_traced (void **state)
{
    static const struct {
        const char *value;  /* NULL: not set */
        bool traced;
    } cases[] = {
        { NULL, false },   { "(null)", true }, { "", true },
        { "mailtest", true }, { "on", true },  { "off", false },
        { "no", false },   { "0", false },     { "false", false },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        char var[128];
        char *env[] = { (char *)"SLURM_JOB_ID=22", var, NULL };
        struct tr_mail_event ev;

        if (cases[i].value)
            snprintf (var, sizeof (var),
                      "SPANK__SLURM_SPANK_OPTION_tracer_tracer=%s",
                      cases[i].value);
        else
            snprintf (var, sizeof (var),
                      "SPANK__SLURM_SPANK_OPTION_probe_tracer=x");
        print_message ("# tracer option %s\n",
                       cases[i].value ? cases[i].value : "unset");
        assert_int_equal (tr_mail_event_parse (&ev, NULL, env, NULL), 0);
        assert_int_equal (ev.traced, cases[i].traced);
    }
}

/* ---------------------------------------------------------------------
 * tr_mail_address_ok
 */

static void test_address_ok (void **state)
{
    static const struct {
        const char *addr;
        bool ok;
    } cases[] = {
        { "alice", true },
        { "alice@example.org", true },
        { "a.b+tag@sub.example.org", true },
        { "x", true },
        { "", false },
        { "-oQ/tmp/x", false },
        { "-f", false },
        { "alice @example.org", false },
        { "alice@example.org ", false },
        { "alice\n@example.org", false },
        { "alice\t@example.org", false },
        { "alice@example.org\r", false },
        { "al\x7f" "ice", false },
        { "j\xc3\xb6rg@example.org", false },
    };
    char big[300];

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        print_message ("# address %zu\n", i);
        assert_int_equal (tr_mail_address_ok (cases[i].addr), cases[i].ok);
    }
    assert_false (tr_mail_address_ok (NULL));
    memset (big, 'a', sizeof (big));
    big[256] = '\0';
    assert_true (tr_mail_address_ok (big));
    big[256] = 'a';
    big[257] = '\0';
    assert_false (tr_mail_address_ok (big));
}

/* ---------------------------------------------------------------------
 * tr_mail_worth
 */

/* One completed one-step job of an hour with the given finding (code
 * NULL: none).
 */
struct worth_case {
    const char *what;
    int summary;
    int severity;
    double min_elapsed_s;
    const char *state;      /* the step's */
    const char *ev_state;   /* Slurm's, "" unknown */
    double elapsed_s;
    const char *code;
    const char *sev;
    bool worth;
    const char *why;        /* a part of the reason */
};

static void test_worth (void **state)
{
    static const struct worth_case cases[] = {
        { "never, even for a failed job", TR_MAIL_SUMMARY_NEVER,
          TR_DIAG_WARNING, 0, "failed", "FAILED", HOUR, NULL, NULL, false,
          "never" },
        { "always, even a good job", TR_MAIL_SUMMARY_ALWAYS,
          TR_DIAG_WARNING, 0, "completed", "COMPLETED", HOUR, NULL, NULL,
          true, "always" },
        { "a failed step", TR_MAIL_SUMMARY_ACTIONABLE, TR_DIAG_CRITICAL, 0,
          "failed", "", HOUR, NULL, NULL, true, "batch ended failed" },
        { "an oom step", TR_MAIL_SUMMARY_ACTIONABLE, TR_DIAG_CRITICAL, 0,
          "oom", "COMPLETED", HOUR, NULL, NULL, true, "ended oom" },
        { "the job ended OUT_OF_MEMORY", TR_MAIL_SUMMARY_ACTIONABLE,
          TR_DIAG_CRITICAL, 0, "completed", "OUT_OF_MEMORY", HOUR, NULL,
          NULL, true, "OUT_OF_MEMORY" },
        { "a warning at severity warning", TR_MAIL_SUMMARY_ACTIONABLE,
          TR_DIAG_WARNING, 0, "completed", "COMPLETED", HOUR, "over-mem",
          "warning", true, "over-mem" },
        { "a warning at severity critical", TR_MAIL_SUMMARY_ACTIONABLE,
          TR_DIAG_CRITICAL, 0, "completed", "COMPLETED", HOUR, "over-mem",
          "warning", false, "nothing" },
        { "a critical finding at severity critical",
          TR_MAIL_SUMMARY_ACTIONABLE, TR_DIAG_CRITICAL, 0, "completed",
          "COMPLETED", HOUR, "io-bound", "critical", true, "io-bound" },
        { "info only", TR_MAIL_SUMMARY_ACTIONABLE, TR_DIAG_WARNING, 0,
          "completed", "COMPLETED", HOUR, "short", "info", false,
          "nothing" },
        { "ok", TR_MAIL_SUMMARY_ACTIONABLE, TR_DIAG_INFO, 0, "completed",
          "COMPLETED", HOUR, "ok", "warning", false, "nothing" },
        { "a cancelled job is no failure", TR_MAIL_SUMMARY_ACTIONABLE,
          TR_DIAG_WARNING, 0, "completed", "CANCELLED", HOUR, NULL, NULL,
          false, "nothing" },
        { "min_elapsed cuts a good short job", TR_MAIL_SUMMARY_ACTIONABLE,
          TR_DIAG_WARNING, 600, "completed", "COMPLETED", 60, "over-mem",
          "warning", false, "min_elapsed" },
        { "min_elapsed keeps a long one", TR_MAIL_SUMMARY_ACTIONABLE,
          TR_DIAG_WARNING, 600, "completed", "COMPLETED", 601, "over-mem",
          "warning", true, "over-mem" },
        { "min_elapsed never cuts a failed step",
          TR_MAIL_SUMMARY_ACTIONABLE, TR_DIAG_WARNING, 600, "failed",
          "FAILED", 60, NULL, NULL, true, "failed" },
        { "min_elapsed never cuts a failed job",
          TR_MAIL_SUMMARY_ACTIONABLE, TR_DIAG_WARNING, 600, "completed",
          "TIMEOUT", 60, NULL, NULL, true, "TIMEOUT" },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const struct worth_case *c = &cases[i];
        struct tr_conf_mail m = { .summary = c->summary,
                                  .severity = c->severity,
                                  .min_elapsed_s = c->min_elapsed_s };
        struct tr_mail_event ev = { .job_id = "22", .exit_code = -1 };
        tr_stepsum_t row;
        json_t *findings = json_array ();
        struct tr_mail_job j = { .ev = &ev, .rows = &row, .n = 1,
                                 .findings = &findings };
        char why[128] = "unset";

        print_message ("# %s\n", c->what);
        snprintf (ev.state, sizeof (ev.state), "%s", c->ev_state);
        tr_stepsum_init (&row);
        row.job_id = "22";
        row.step_id = "batch";
        row.state = c->state;
        row.elapsed_s = c->elapsed_s;
        row.start_ms = 1e12;
        row.end_ms = 1e12 + c->elapsed_s * 1e3;
        row.req_cores = 4;
        row.cpu_s = c->elapsed_s;
        if (c->code)
            json_array_append_new (findings, finding (c->code, c->sev,
                                                      "some text"));
        assert_int_equal (tr_mail_worth (&j, &m, why, sizeof (why)),
                          c->worth);
        print_message ("#   why: %s\n", why);
        assert_non_null (strstr (why, c->why));
        json_decref (findings);
    }
}

static void test_worth_no_rows (void **state)
{
    struct tr_conf_mail m = { .summary = TR_MAIL_SUMMARY_ALWAYS };
    struct tr_mail_job j = { 0 };
    char why[64] = "";

    (void)state;
    assert_false (tr_mail_worth (&j, &m, why, sizeof (why)));
    assert_true (strlen (why) > 0);
}

/* ---------------------------------------------------------------------
 * Summaries
 */

struct job_fx {
    struct tr_mail_event ev;
    tr_stepsum_t rows[2];
    json_t *findings[2];
    json_t *advice[2];
    struct tr_mail_job j;
};

#define ADVICE                                                             \
    "{\"cpus\":{\"text\":\"2\",\"recommend\":2},"                          \
    "\"mem\":{\"text\":\"3G\",\"recommend\":3221225472},"                  \
    "\"time\":{\"text\":\"01:00:00\",\"recommend\":3600},"                 \
    "\"runs\":{\"total\":5},\"confidence\":\"medium\"}"

/* Job 22 failed after an hour: 4 cores (2 busy), 1 GiB asked, 256 MiB
 * peak, a 2-hour limit; batch and extern steps.
 */
static void job_fx_init (struct job_fx *fx, const char *name,
                         const char *text)
{
    const char *env[] = { "SLURM_JOB_ID=22", "SLURM_JOB_MAIL_TYPE=Failed",
                          "SLURM_JOB_STATE=FAILED",
                          "SLURM_JOB_EXIT_CODE_MAX=3", NULL, NULL };
    char namevar[300];

    memset (fx, 0, sizeof (*fx));
    snprintf (namevar, sizeof (namevar), "SLURM_JOB_NAME=%s", name);
    env[4] = namevar;
    assert_int_equal (tr_mail_event_parse (&fx->ev, S_FAILED,
                                           (char *const *)env, NULL),
                      0);
    for (int i = 0; i < 2; i++) {
        tr_stepsum_t *r = &fx->rows[i];

        tr_stepsum_init (r);
        r->cluster = "c1";
        r->job_id = "22";
        r->job_name = name;
        r->user = "alice";
        r->account = "acct";
        r->partition = "part";
        r->node = "n1";
        r->req_cores = 4;
        r->req_mem_bytes = GIB;
        r->mem_limit_bytes = GIB;
        r->time_limit_s = 2 * HOUR;
        r->start_ms = 1.7e12;
        r->end_ms = 1.7e12 + HOUR * 1e3;
        r->elapsed_s = HOUR;
    }
    fx->rows[0].step_id = "batch";
    fx->rows[0].state = "failed";
    fx->rows[0].cause = "tool-crash";
    fx->rows[0].cause_text = "samtools (pid 42) killed by SIGSEGV, 0.1 s "
                             "before the end, under bash 41";
    fx->rows[0].cpu_s = 2 * HOUR;
    fx->rows[0].mem_peak_bytes = 256 * MIB;
    fx->rows[1].step_id = "extern";
    fx->rows[1].state = "completed";
    fx->rows[1].cpu_s = 1;
    fx->rows[1].mem_peak_bytes = MIB;

    fx->findings[0] = json_array ();
    json_array_append_new (fx->findings[0],
                           finding ("failed", "critical",
                                    "Exited with code 3."));
    json_array_append_new (fx->findings[0],
                           finding ("over-mem", "warning", text));
    json_array_append_new (fx->findings[0],
                           finding ("short", "info", "Ran only briefly."));
    fx->findings[1] = json_array ();
    fx->advice[0] = json_loads (ADVICE, 0, NULL);
    fx->advice[1] = json_loads (ADVICE, 0, NULL);   /* never shown */
    assert_non_null (fx->advice[0]);
    assert_non_null (fx->advice[1]);

    fx->j.ev = &fx->ev;
    fx->j.rows = fx->rows;
    fx->j.n = 2;
    fx->j.findings = fx->findings;
    fx->j.advice = fx->advice;
    fx->j.attachment = "tracer-job-22.html";
    fx->j.subject = S_FAILED;
}

static void job_fx_fini (struct job_fx *fx)
{
    for (int i = 0; i < 2; i++) {
        json_decref (fx->findings[i]);
        json_decref (fx->advice[i]);
    }
}

/* A PBS or LSF job's mail advises in its scheduler's words, from the
 * recommended values.
 */
static void test_summary_scheduler (void **state)
{
    static const struct {
        const char *sched, *want;
    } cases[] = {
        { "pbs", "-l select=1:ncpus=2:mem=3gb -l walltime=01:00:00" },
        { "lsf", "-n 2 -R \"rusage[mem=3072MB]\" -W 1:00" },
    };

    (void)state;
    for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
        struct job_fx fx;
        char *s;

        job_fx_init (&fx, "effjob", "Asked for 1.0 GiB, used 256.0 MiB.");
        fx.rows[0].scheduler = cases[c].sched;
        json_object_set_new (json_object_get (fx.advice[0], "cpus"),
                             "recommend", json_integer (2));
        json_object_set_new (json_object_get (fx.advice[0], "mem"),
                             "recommend", json_integer (3221225472));
        json_object_set_new (json_object_get (fx.advice[0], "time"),
                             "recommend", json_integer (3600));
        s = render (tr_mail_summary_text, &fx.j);
        if (!strstr (s, cases[c].want) || strstr (s, "--cpus-per-task"))
            fail_msg ("%s: no %s in\n%s", cases[c].sched, cases[c].want, s);
        free (s);
        s = render (tr_mail_summary_html, &fx.j);
        assert_null (strstr (s, "--mem="));
        assert_non_null (strstr (s, c ? "-n 2 -R &quot;rusage[mem=3072MB]"
                                      : "-l select=1:ncpus=2:mem=3gb"));
        free (s);
        job_fx_fini (&fx);
    }
}

static void test_summary_text (void **state)
{
    struct job_fx fx;
    char *s;

    (void)state;
    job_fx_init (&fx, "effjob", "Asked for 1.0 GiB, used 256.0 MiB.");
    s = render (tr_mail_summary_text, &fx.j);
    show (s);
    assert_true (starts_with (s, "Job 22 (effjob) failed: FAILED, exit code "
                                 "3:0\n"));
    assert_non_null (strstr (s, "User alice, account acct, partition part, "
                                "cluster c1, node n1\n"));

    assert_line_has (s, "  Cores ",
                     (const char *const[]){ " 4 ", " 2.00 ", " 50%", NULL });
    assert_line_has (s, "  Memory ",
                     (const char *const[]){ "1.0 GiB", "256.0 MiB", " 25%",
                                            NULL });
    assert_line_has (s, "  Time ",
                     (const char *const[]){ "02:00:00", "01:00:00", " 50%",
                                            NULL });

    assert_line_has (s, "  batch ",
                     (const char *const[]){ "FAILED", "256.0 MiB", NULL });
    assert_line_has (s, "  extern ", (const char *const[]){ "COMPLETED", NULL });
    /* the failed step's cause with its evidence; none for extern */
    assert_non_null (strstr (s, "\nWhy it failed:\n  batch        tool-crash: "
                                "samtools (pid 42) killed by SIGSEGV, 0.1 s "
                                "before the\n               end, under bash "
                                "41\n\n"));
    /* a mail reader's 80 columns */
    assert_true (widest_line (s) <= 80);

    /* serious findings shown, the info one dropped beside them */
    assert_non_null (strstr (s, "[critical] Exited with code 3."));
    assert_non_null (strstr (s, "[warning] Asked for 1.0 GiB, used 256.0 "
                                "MiB."));
    assert_null (strstr (s, "Ran only briefly."));

    /* advice for batch, none for extern */
    assert_non_null (strstr (s, "--cpus-per-task=2 --mem=3G "
                                "--time=01:00:00   (5 runs, medium\n"
                                "               confidence)"));
    assert_int_equal (count (s, "--mem="), 1);

    assert_non_null (strstr (s, "attached (tracer-job-22.html)"));
    assert_non_null (strstr (s, "tracer-report -j 22 "));
    /* quoted whole, wrapped to 80 columns under itself */
    assert_non_null (strstr (s, "Slurm's notification: Slurm Job_id=22 "
                                "Name=effjob Failed, Run time 00:00:01,\n"
                                "                      FAILED, ExitCode 3\n"));
    free (s);
    job_fx_fini (&fx);
}

static void test_summary_html (void **state)
{
    struct job_fx fx;
    char *s;

    (void)state;
    job_fx_init (&fx, "effjob", "Asked for 1.0 GiB, used 256.0 MiB.");
    fx.j.report_url = "https://reports.example.org/22";
    s = render (tr_mail_summary_html, &fx.j);
    assert_true (!strncmp (s, "<!DOCTYPE html>", 15));
    assert_non_null (strstr (s, "</html>\n"));
    assert_non_null (strstr (s, "Job 22 (effjob) failed: FAILED, exit code "
                                "3:0</h2>"));
    assert_non_null (strstr (s, "User alice"));
    assert_non_null (strstr (s, "1.0 GiB"));
    assert_non_null (strstr (s, "256.0 MiB"));
    assert_non_null (strstr (s, ">25%<"));
    assert_non_null (strstr (s, "Exited with code 3."));
    assert_non_null (strstr (s, "<ul id=\"cause\">\n<li>batch: <strong>"
                                "tool-crash</strong>: samtools (pid 42) killed by SIGSEGV, "
                                "0.1 s before the end, under bash 41</li>\n"
                                "</ul>\n"));
    assert_null (strstr (s, "Ran only briefly."));
    assert_non_null (strstr (s, " --mem=3G"));
    assert_int_equal (count (s, "--mem="), 1);
    assert_non_null (strstr (s, "tracer-job-22.html"));
    assert_non_null (strstr (s, "<a href=\"https://reports.example.org/22"
                                "\">"));
    assert_null (strstr (s, "<style"));
    assert_null (strstr (s, "<script"));
    free (s);
    job_fx_fini (&fx);
}

/* Job names, finding texts, file names, links and the subject are data:
 * in HTML they appear only escaped.
 */
static void test_summary_html_escapes (void **state)
{
    static const char evil[] = "<script>alert(1)</script>";
    struct job_fx fx;
    char *s;

    (void)state;
    job_fx_init (&fx, evil, "\"&'<img src=x onerror=alert(1)>");
    fx.j.attachment = "<b>r.html";
    fx.j.report_url = "https://x/\"><script>alert(2)</script>";
    fx.j.report_note = "<iframe src=//x>";
    fx.j.subject = "Slurm Job_id=22 Name=<script>alert(1)</script> Failed";
    assert_string_equal (fx.ev.name, evil);
    s = render (tr_mail_summary_html, &fx.j);
    assert_null (strcasestr (s, "<script"));
    assert_null (strcasestr (s, "<img"));
    assert_null (strcasestr (s, "<iframe"));
    assert_null (strstr (s, "<b>"));
    assert_non_null (strstr (s, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null (strstr (s, "&quot;&amp;&#39;&lt;img src=x "
                                "onerror=alert(1)&gt;"));
    assert_non_null (strstr (s, "href=\"https://x/&quot;&gt;&lt;script"
                                "&gt;"));
    assert_non_null (strstr (s, "&lt;b&gt;r.html"));
    free (s);

    /* the text summary carries them as they are */
    s = render (tr_mail_summary_text, &fx.j);
    assert_non_null (strstr (s, "Job 22 (<script>alert(1)</script>)"));
    free (s);
    job_fx_fini (&fx);
}

/* ---------------------------------------------------------------------
 * tr_mail_base64
 */

static void test_base64_vectors (void **state)
{
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        /* RFC 4648, section 10 */
        { "", "" },
        { "f", "Zg==\n" },
        { "fo", "Zm8=\n" },
        { "foo", "Zm9v\n" },
        { "foob", "Zm9vYg==\n" },
        { "fooba", "Zm9vYmE=\n" },
        { "foobar", "Zm9vYmFy\n" },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        tr_strbuf_t sb = TR_STRBUF_INIT;

        assert_int_equal (tr_mail_base64 (&sb, cases[i].in,
                                          strlen (cases[i].in)),
                          0);
        assert_string_equal (tr_strbuf_str (&sb), cases[i].out);
        tr_strbuf_free (&sb);
    }
}

static void test_base64_lines (void **state)
{
    static const size_t sizes[] = { 56, 57, 58, 114, 1000, 65537 };

    (void)state;
    for (size_t k = 0; k < sizeof (sizes) / sizeof (sizes[0]); k++) {
        size_t n = sizes[k], got, lines = 0;
        unsigned char *in = malloc (n), *back;
        tr_strbuf_t sb = TR_STRBUF_INIT;
        const char *s;

        assert_non_null (in);
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)(i * 131 + 7);
        assert_int_equal (tr_mail_base64 (&sb, in, n), 0);
        s = tr_strbuf_str (&sb);
        assert_int_equal (sb.len, (n + 2) / 3 * 4 + (n + 56) / 57);
        for (const char *p = s; *p; lines++) {
            size_t len = strcspn (p, "\n");

            assert_int_equal (p[len], '\n');
            if (p[len + 1])
                assert_int_equal (len, 76);
            else
                assert_true (len > 0 && len <= 76);
            p += len + 1;
        }
        assert_int_equal (lines, (n + 56) / 57);
        back = b64_decode (s, sb.len, &got);
        assert_non_null (back);
        assert_int_equal (got, n);
        assert_memory_equal (back, in, n);
        free (back);
        free (in);
        tr_strbuf_free (&sb);
    }
}

/* ---------------------------------------------------------------------
 * tr_mail_compose
 */

static const char *const two_to[] = { "alice@example.org",
                                      "bob@example.org" };

static void test_compose_text (void **state)
{
    static const char want[] =
        "From: tracer@c1.example.org\n"
        "To: alice@example.org, bob@example.org\n"
        "Subject: Job 22 failed\n"
        "Date: Thu, 01 Jan 1970 00:00:00 +0000\n"
        "MIME-Version: 1.0\n"
        "Auto-Submitted: auto-generated\n"
        "X-Tracer-Job: 22\n"
        "Content-Type: text/plain; charset=utf-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        "\n"
        "Hello,\n\n  j\xc3\xb6rg's job\tfailed.\n";
    struct tr_mail_msg m = { .from = "tracer@c1.example.org",
                             .to = two_to,
                             .nto = 2,
                             .subject = "Job 22 failed",
                             .text = "Hello,\n\n  j\xc3\xb6rg's job\tfailed.",
                             .job_id = "22" };
    size_t len = 0;
    char *s;

    (void)state;
    s = tr_mail_compose (&m, 0, &len, NULL);
    assert_non_null (s);
    assert_int_equal (len, strlen (s));
    assert_string_equal (s, want);
    free (s);

    /* no From: when the MTA is to set it; a job id with a line break is
     * left out
     */
    m.from = "";
    m.job_id = "22\nBcc: eve@example.org";
    m.text = "Hello\n";
    s = tr_mail_compose (&m, 0, &len, NULL);
    assert_non_null (s);
    assert_true (!strncmp (s, "To: ", 4));
    assert_null (strstr (s, "From:"));
    assert_null (strstr (s, "Bcc:"));
    assert_true (len > 7 && !strcmp (s + len - 8, "\n\nHello\n"));
    free (s);
}

static void test_compose_alternative (void **state)
{
    static const char html[] = "<!DOCTYPE html><p>Hello, j\xc3\xb6rg</p>\n";
    struct tr_mail_msg m = { .to = two_to,
                             .nto = 1,
                             .subject = "Job 22 failed",
                             .text = "Hello\n",
                             .html = html };
    size_t len, n;
    char *s, *b, delim[160];
    unsigned char *back;

    (void)state;
    s = tr_mail_compose (&m, 1700000000, &len, NULL);
    assert_non_null (s);
    assert_null (strstr (s, "multipart/mixed"));
    b = boundary_of (s, "multipart/alternative");
    snprintf (delim, sizeof (delim), "\n--%s\n", b);
    assert_int_equal (count (s, delim), 2);
    snprintf (delim, sizeof (delim), "\n--%s--\n", b);
    assert_int_equal (count (s, delim), 1);
    assert_true (!strcmp (s + len - strlen (delim), delim));
    assert_non_null (strstr (s, "Content-Type: text/plain; charset=utf-8\n"
                                "Content-Transfer-Encoding: 8bit\n\n"
                                "Hello\n\n--"));
    /* the plain part comes first: clients show the last they can */
    assert_true (strstr (s, "text/plain") < strstr (s, "text/html"));
    back = part_decoded (s, "Content-Type: text/html; charset=utf-8\n"
                            "Content-Transfer-Encoding: base64", &n);
    assert_non_null (back);
    assert_int_equal (n, strlen (html));
    assert_string_equal ((char *)back, html);
    free (back);
    free (b);
    free (s);
}

static void test_compose_attachment (void **state)
{
    static const char report[] = "<html>\0binary\xff\xfe</html>";
    const size_t rlen = sizeof (report) - 1;
    const char *text = "See the attachment.\n";
    struct tr_mail_msg m = { .to = two_to,
                             .nto = 2,
                             .subject = "Job 22",
                             .text = text,
                             .html = "<p>See the attachment.</p>",
                             .attach = report,
                             .attach_len = rlen,
                             .attach_name = "tracer-job-22.html",
                             .attach_type = "text/html" };
    size_t len, n;
    char *s, *outer, *inner, delim[160];
    const char *alt, *att;
    unsigned char *back;

    (void)state;
    s = tr_mail_compose (&m, 1700000000, &len, NULL);
    assert_non_null (s);
    outer = boundary_of (s, "multipart/mixed");
    inner = boundary_of (s, "multipart/alternative");
    assert_string_not_equal (outer, inner);
    /* the alternative is the first part of the mixed one */
    snprintf (delim, sizeof (delim), "\n--%s\nContent-Type: "
              "multipart/alternative;", outer);
    alt = strstr (s, delim);
    assert_non_null (alt);
    snprintf (delim, sizeof (delim), "\n--%s--\n", inner);
    assert_non_null (strstr (alt, delim));
    snprintf (delim, sizeof (delim), "\n--%s\n", outer);
    assert_int_equal (count (s, delim), 2);
    att = strstr (strstr (s, delim) + 1, delim);
    assert_non_null (att);
    assert_true (att > strstr (s, "text/plain"));
    assert_non_null (strstr (att, "name=\"tracer-job-22.html\""));
    assert_non_null (strstr (att, "Content-Disposition: attachment; "
                                  "filename=\"tracer-job-22.html\"\n"));
    assert_non_null (strstr (att, "Content-Transfer-Encoding: base64\n"));
    snprintf (delim, sizeof (delim), "\n--%s--\n", outer);
    assert_true (!strcmp (s + len - strlen (delim), delim));
    back = part_decoded (att, "Content-Transfer-Encoding: base64", &n);
    assert_non_null (back);
    assert_int_equal (n, rlen);
    assert_memory_equal (back, report, rlen);
    free (back);

    /* an attachment without the alternative */
    m.html = NULL;
    free (s);
    free (outer);
    free (inner);
    s = tr_mail_compose (&m, 1700000000, &len, NULL);
    assert_non_null (s);
    assert_null (strstr (s, "multipart/alternative"));
    outer = boundary_of (s, "multipart/mixed");
    snprintf (delim, sizeof (delim), "\n--%s\nContent-Type: text/plain; "
              "charset=utf-8\n", outer);
    assert_non_null (strstr (s, delim));
    assert_non_null (strstr (s, "\n\nSee the attachment.\n\n--"));
    free (outer);
    free (s);
}

/* Non-ASCII subjects become RFC 2047 encoded words, each cut between
 * characters and short enough for a 76-character line.
 */
static const char *const subjects[] = {
    "J\xc3\xb6rg's job 22 \xe2\x80\x94 ended",
    "\xe2\x9c\x93 Job 22: \xc3\xbc\xc3\xb1\xc3\xaf\xc3\xa7\xc3\xb6"
    "d\xc3\xa9 and a tail long enough for several encoded words "
    "\xe2\x9c\x93\xe2\x9c\x93\xe2\x9c\x93\xf0\x9f\x98\x80\xf0\x9f\x98"
    "\x80 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe6\x97\xa5\xe6\x9c\xac"
    "\xe8\xaa\x9e\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
};

static void test_compose_subject_utf8 (void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof (subjects) / sizeof (subjects[0]); k++) {
        struct tr_mail_msg m = { .to = two_to,
                                 .nto = 1,
                                 .subject = subjects[k],
                                 .text = "x\n" };
        tr_strbuf_t got = TR_STRBUF_INIT;
        size_t len, words = 0;
        char *s = tr_mail_compose (&m, 0, &len, NULL);
        const char *p, *hdr_end;

        assert_non_null (s);
        hdr_end = strstr (s, "\n\n");
        assert_non_null (hdr_end);
        /* the header block is 7-bit */
        for (p = s; p < hdr_end; p++)
            assert_true ((unsigned char)*p < 0x80);
        p = strstr (s, "\nSubject:");
        assert_non_null (p);
        p += strlen ("\nSubject:");
        /* " =?UTF-8?B?...?=" words, one a line, folded */
        while (*p == ' ') {
            size_t n = strcspn (p, "\n"), dlen;
            const char *w = p + 1 + strlen ("=?UTF-8?B?");
            unsigned char *d;

            assert_true (!strncmp (p, " =?UTF-8?B?", 11));
            assert_true (!strncmp (p + n - 2, "?=", 2));
            d = b64_decode (w, (size_t)(p + n - 2 - w), &dlen);
            assert_non_null (d);
            assert_true (utf8_ok ((char *)d, dlen));
            tr_strbuf_append (&got, (char *)d, dlen);
            free (d);
            words++;
            p += n + 1;
        }
        assert_true (words >= (k ? 2 : 1));
        assert_string_equal (tr_strbuf_str (&got), subjects[k]);
        tr_strbuf_free (&got);
        free (s);
    }
}

/* RFC 2047, section 2: a header line holding encoded words is at most
 * 76 characters long, the first one ("Subject: =?UTF-8?B?...") too.
 */
static void test_compose_subject_line_length (void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof (subjects) / sizeof (subjects[0]); k++) {
        struct tr_mail_msg m = { .to = two_to,
                                 .nto = 1,
                                 .subject = subjects[k],
                                 .text = "x\n" };
        size_t len, longest = 0;
        char *s = tr_mail_compose (&m, 0, &len, NULL);
        const char *p;

        assert_non_null (s);
        p = strstr (s, "\nSubject:");
        assert_non_null (p);
        p++;
        do {
            size_t n = strcspn (p, "\n");

            print_message ("# %zu: %.*s\n", n, (int)n, p);
            if (n > longest)
                longest = n;
            p += n + 1;
        } while (*p == ' ');
        free (s);
        assert_true (longest <= 76);
    }
}

/* What would put a second header or a second recipient into the
 * message and does not come from the job is refused, and *len is left
 * alone.  (A subject holds the job's name: test_compose_hostile.)
 */
static void test_compose_invalid (void **state)
{
    static const struct {
        const char *what;
        const char *from;
        const char *to;
        size_t nto;
        const char *subject;
        const char *text;
        const char *attach_name;
        const char *attach_type;
    } cases[] = {
        { "no subject", NULL, "a@b", 1, NULL, "t", NULL, NULL },
        { "no text", NULL, "a@b", 1, "Job", NULL, NULL, NULL },
        { "attachment name with LF", NULL, "a@b", 1, "Job", "t",
          "r.html\nX-Evil: 1", "text/html" },
        { "attachment without a name", NULL, "a@b", 1, "Job", "t", NULL,
          "text/html" },
        { "attachment without a type", NULL, "a@b", 1, "Job", "t",
          "r.html", NULL },
        { "recipient that is an option", NULL, "-oQ/tmp/x", 1, "Job", "t",
          NULL, NULL },
        { "recipient with a space", NULL, "a@b c@d", 1, "Job", "t", NULL,
          NULL },
        { "recipient with a line break", NULL, "a@b\nBcc: eve@x", 1, "Job",
          "t", NULL, NULL },
        { "empty recipient", NULL, "", 1, "Job", "t", NULL, NULL },
        { "no recipient", NULL, "a@b", 0, "Job", "t", NULL, NULL },
        { "bad sender", "tracer\n@x", "a@b", 1, "Job", "t", NULL, NULL },
        { "sender that is an option", "-f", "a@b", 1, "Job", "t", NULL,
          NULL },
    };
    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const char *to[] = { cases[i].to };
        bool attach = cases[i].attach_name || cases[i].attach_type;
        struct tr_mail_msg m = { .from = cases[i].from,
                                 .to = to,
                                 .nto = cases[i].nto,
                                 .subject = cases[i].subject,
                                 .text = cases[i].text,
                                 .attach = attach ? "data" : NULL,
                                 .attach_len = attach ? 4 : 0,
                                 .attach_name = cases[i].attach_name,
                                 .attach_type = cases[i].attach_type };
        tr_error_t error = { 0 };
        size_t len = 12345;

        print_message ("# %s\n", cases[i].what);
        errno = 0;
        assert_null (tr_mail_compose (&m, 0, &len, &error));
        assert_int_equal (errno, EINVAL);
        assert_int_equal (len, 12345);
        assert_true (strlen (error.text) > 0);
    }
}

/* The text body, line by line after the header block. */
/* The characters a job's name may smuggle into a mail: line breaks,
 * ESC (terminal control), C1 CSI, bidirectional overrides and isolates,
 * line separators, bytes that are not UTF-8.
 */
static const char *const hostile[] = {
    "\x1b", "\xc2\x9b", "\xe2\x80\xae", "\xe2\x80\xab", "\xe2\x81\xa6",
    "\xe2\x81\xa9", "\xe2\x80\xa8", "\xe2\x80\xa9", "\x07", "\x7f", "\r",
};

static void assert_no_hostile (const char *s, size_t len)
{
    for (size_t k = 0; k < sizeof (hostile) / sizeof (hostile[0]); k++) {
        size_t n = strlen (hostile[k]);

        for (size_t i = 0; i + n <= len; i++)
            if (!memcmp (s + i, hostile[k], n)) {
                print_message ("# raw %zu-byte sequence at %zu\n", n, i);
                fail ();
            }
    }
}

/* The decoded subject: the Subject: line as it is, or its encoded words
 * joined.
 */
static char *subject_of (const char *msg)
{
    tr_strbuf_t got = TR_STRBUF_INIT;
    const char *p = strstr (msg, "\nSubject:");

    assert_non_null (p);
    p += strlen ("\nSubject:");
    if (strncmp (p, " =?UTF-8?B?", 11)) {
        size_t n = strcspn (p, "\n");

        assert_true (*p == ' ');
        tr_strbuf_append (&got, p + 1, n - 1);
        assert_true (p[n + 1] != ' ' && p[n + 1] != '\t');
        return tr_strbuf_steal (&got);
    }
    while (*p == ' ') {
        size_t n = strcspn (p, "\n"), dlen;
        const char *w = p + 1 + strlen ("=?UTF-8?B?");
        unsigned char *d;

        assert_true (!strncmp (p, " =?UTF-8?B?", 11));
        d = b64_decode (w, (size_t)(p + n - 2 - w), &dlen);
        assert_non_null (d);
        tr_strbuf_append (&got, (char *)d, dlen);
        free (d);
        p += n + 1;
    }
    if (!tr_strbuf_str (&got))
        tr_strbuf_puts (&got, "");
    return tr_strbuf_steal (&got);
}

/* A subject holding a job's name with a line break, ESC, a right-to-left
 * override...: the mail is still composed (Slurm's notification must go
 * out), its header block holds no injected header, and every such
 * character is a visible escape in the decoded subject.
 */
static void test_compose_hostile (void **state)
{
    static const struct {
        const char *subject;
        const char *want; /* decoded */
    } cases[] = {
        { "Slurm Job_id=7 Name=a\nBcc: eve@x Ended",
          "Slurm Job_id=7 Name=a\\nBcc: eve@x Ended" },
        { "Job\rBcc: eve@x", "Job\\rBcc: eve@x" },
        { "Job 22\n", "Job 22\\n" },
        { "Job \x1b[2J\x1b]0;pwned\x07 x", "Job \\x1b[2J\\x1b]0;pwned\\x07 x" },
        { "Job \xe2\x80\xae" "lmth.exe", "Job \\u202elmth.exe" },
        { "Job \xe2\x81\xa6x\xe2\x81\xa9 \xc2\x9b" "31m \xe2\x80\xa8y",
          "Job \\u2066x\\u2069 \\u009b31m \\u2028y" },
        { "Job \xff\xfe", "Job \\xff\\xfe" },
        { "J\xc3\xb6rg \xe2\x80\xae" "cba", "J\xc3\xb6rg \\u202e" "cba" },
        /* a name written as an encoded word is shown as typed */
        { "Job =?UTF-8?B?4oCu?= x", "Job =?UTF-8?B?4oCu?= x" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        struct tr_mail_msg m = { .to = two_to,
                                 .nto = 1,
                                 .subject = cases[i].subject,
                                 .text = "x\n",
                                 .job_id = "7" };
        tr_error_t error = { 0 };
        size_t len = 0;
        char *s, *subj;
        const char *end, *line;

        print_message ("# %s\n", cases[i].want);
        s = tr_mail_compose (&m, 0, &len, &error);
        assert_non_null (s);
        assert_int_equal (strlen (s), len);
        assert_no_hostile (s, len);
        end = strstr (s, "\n\n");
        assert_non_null (end);
        /* every header line is a known header or a folded one */
        for (line = s; line < end; line = strchr (line, '\n') + 1) {
            static const char *const known[] = {
                "To: ", "Subject:", " =?UTF-8?B?", "Date: ",
                "MIME-Version: ", "Auto-Submitted: ", "X-Tracer-Job: ",
                "Content-Type: ", "Content-Transfer-Encoding: ",
            };
            bool ok = false;

            for (size_t k = 0; k < sizeof (known) / sizeof (known[0]); k++)
                ok = ok || starts_with (line, known[k]);
            if (!ok)
                print_message ("# header line: %.*s\n",
                               (int)strcspn (line, "\n"), line);
            assert_true (ok);
        }
        assert_int_equal (count (s, "\nSubject:"), 1);
        assert_null (strstr (s, "\nBcc:"));
        subj = subject_of (s);
        assert_string_equal (subj, cases[i].want);
        free (subj);
        free (s);
    }
}

/* The text part and the HTML alternative: line ends and tabs of the text
 * stay, everything else a job could put there is a visible escape; the
 * HTML is escaped as HTML too.
 */
static void test_compose_hostile_parts (void **state)
{
    const char *text = "Job 7 (a\x1b[31mred\xe2\x80\xae" "cba)\n"
                       "\tcol\xc2\x9b" "2\r\nlast\r";
    const char *html = "<p>x\xe2\x80\xae" "y\x1b</p>\n";
    struct tr_mail_msg m = { .to = two_to,
                             .nto = 1,
                             .subject = "Job 7",
                             .text = text,
                             .html = html };
    size_t len, n;
    unsigned char *back;
    char *s;

    (void)state;
    s = tr_mail_compose (&m, 0, &len, NULL);
    assert_non_null (s);
    assert_no_hostile (s, len);
    assert_non_null (strstr (s, "\n\nJob 7 (a\\x1b[31mred\\u202ecba)\n"
                                "\tcol\\u009b2\nlast\\r\n"));
    back = part_decoded (s, "Content-Type: text/html; charset=utf-8\n"
                            "Content-Transfer-Encoding: base64", &n);
    assert_non_null (back);
    assert_string_equal ((char *)back, "<p>x\\u202ey\\x1b</p>\n");
    free (back);
    free (s);
}

/* The summary's HTML shows a job name's overrides and controls as
 * escapes (tr_html_escape alone dropped C0 and C1 but kept U+202E); its
 * text keeps each such string on its line.
 */
static void test_summary_html_hostile (void **state)
{
    struct job_fx fx;
    char *s;

    (void)state;
    job_fx_init (&fx, "evil\xe2\x80\xae" "fdp.exe", "t");
    fx.rows[0].job_name = "x\xe2\x81\xa6y\x1bz";
    fx.rows[0].user = "u\xc2\x9b" "1";
    fx.j.subject = "Slurm Job_id=22 Name=evil\xe2\x80\xae" "fdp.exe Failed";
    s = render (tr_mail_summary_html, &fx.j);
    assert_no_hostile (s, strlen (s));
    assert_non_null (strstr (s, "Job 22 (evil\\u202efdp.exe) failed"));
    assert_non_null (strstr (s, "Name=evil\\u202efdp.exe Failed"));
    assert_non_null (strstr (s, "User u\\u009b1"));
    free (s);

    /* the text: each on its one line */
    fx.rows[0].job_name = "a\nBcc: eve@x";
    fx.ev.name[0] = '\0';
    fx.j.subject = "Slurm Job_id=22 Name=a\nBcc: eve@x Failed";
    s = render (tr_mail_summary_text, &fx.j);
    assert_no_hostile (s, strlen (s));
    assert_true (starts_with (s, "Job 22 (a\\nBcc: eve@x) failed: "));
    assert_non_null (strstr (s, "\nSlurm's notification: Slurm Job_id=22 "
                                "Name=a\\nBcc: eve@x Failed\n"));
    assert_null (strstr (s, "\nBcc:"));
    assert_non_null (strstr (s, "\nUser u\\u009b1, "));
    free (s);
    job_fx_fini (&fx);
}

static const char *body_of (const char *msg)
{
    const char *b = strstr (msg, "\n\n");

    assert_non_null (b);
    return b + 2;
}

/* 8-bit lines stay within RFC 5322's 998 bytes; nothing is lost. */
static void test_compose_long_line (void **state)
{
    char text[2000 + 8];
    struct tr_mail_msg m = { .to = two_to,
                             .nto = 1,
                             .subject = "Job 22",
                             .text = text };
    size_t len, xs = 0, lines = 0;
    char *s;

    (void)state;
    memset (text, 'x', 2000);
    memcpy (text + 2000, "\nend\n", 6);
    s = tr_mail_compose (&m, 0, &len, NULL);
    assert_non_null (s);
    for (const char *p = s; *p; lines++) {
        size_t n = strcspn (p, "\n");

        assert_true (n <= 998);
        p += n + (p[n] == '\n');
    }
    assert_true (lines > 3);
    for (const char *p = body_of (s); *p; p++)
        xs += *p == 'x';
    assert_int_equal (xs, 2000);
    assert_true (!strcmp (s + len - 5, "\nend\n"));
    free (s);
}

/* A long line of multi-byte characters is cut between characters: each
 * line of an 8-bit utf-8 part must be UTF-8 on its own.
 */
static void test_compose_long_line_utf8 (void **state)
{
    static const char euro[] = "\xe2\x82\xac";
    char text[1 + 700 * 3 + 2];
    bool short_lines = true, whole_chars = true;
    struct tr_mail_msg m = { .to = two_to,
                             .nto = 1,
                             .subject = "Job 22",
                             .text = text };
    size_t len;
    char *s;

    (void)state;
    text[0] = 'a';
    for (size_t i = 0; i < 700; i++)
        memcpy (text + 1 + 3 * i, euro, 3);
    memcpy (text + 1 + 700 * 3, "\n", 2);
    s = tr_mail_compose (&m, 0, &len, NULL);
    assert_non_null (s);
    for (const char *p = body_of (s); *p;) {
        size_t n = strcspn (p, "\n");

        short_lines &= n <= 998;
        if (!utf8_ok (p, n)) {
            print_message ("# line of %zu bytes is not UTF-8\n", n);
            whole_chars = false;
        }
        p += n + (p[n] == '\n');
    }
    free (s);
    assert_true (short_lines);
    assert_true (whole_chars);
}

/* Whatever the text holds, the boundaries chosen are not in it. */
static void test_compose_boundary (void **state)
{
    static const char *const texts[] = {
        "--=_tracer_m\n--=_tracer_a\n=_tracer_m0\n",
        "plain\n--\n---\n",
        "",
    };
    (void)state;
    for (size_t i = 0; i < sizeof (texts) / sizeof (texts[0]); i++) {
        struct tr_mail_msg m = { .to = two_to,
                                 .nto = 1,
                                 .subject = "Job 22",
                                 .text = texts[i],
                                 .html = "<p>x</p>",
                                 .attach = "r",
                                 .attach_len = 1,
                                 .attach_name = "r.txt",
                                 .attach_type = "text/plain" };
        size_t len;
        char *s = tr_mail_compose (&m, (time_t)i, &len, NULL);
        char *outer, *inner;

        assert_non_null (s);
        outer = boundary_of (s, "multipart/mixed");
        inner = boundary_of (s, "multipart/alternative");
        assert_true (strlen (outer) > 10 && strlen (outer) <= 70);
        assert_null (strstr (texts[i], outer));
        assert_null (strstr (texts[i], inner));
        assert_null (strstr (outer, inner));
        assert_null (strstr (inner, outer));
        free (outer);
        free (inner);
        free (s);
    }
}

/* ---------------------------------------------------------------------
 * tr_mail_send, with a fake sendmail written by the test
 */

struct send_fx {
    char dir[64];
    char prog[128];     /* records its argv, environment and stdin */
    char args[128];
    char env[128];
    char in[128];
};

static void write_script (const char *path, const char *body)
{
    FILE *f = fopen (path, "w");

    assert_non_null (f);
    fprintf (f, "#!/bin/sh\n%s", body);
    assert_int_equal (fclose (f), 0);
    assert_int_equal (chmod (path, 0700), 0);
}

static int send_setup (void **state)
{
    struct send_fx *fx = calloc (1, sizeof (*fx));
    char body[1024];

    if (!fx)
        return -1;
    snprintf (fx->dir, sizeof (fx->dir), "/tmp/test_mail.XXXXXX");
    if (!mkdtemp (fx->dir)) {
        free (fx);
        return -1;
    }
    snprintf (fx->prog, sizeof (fx->prog), "%s/sendmail", fx->dir);
    snprintf (fx->args, sizeof (fx->args), "%s/args", fx->dir);
    snprintf (fx->env, sizeof (fx->env), "%s/env", fx->dir);
    snprintf (fx->in, sizeof (fx->in), "%s/stdin", fx->dir);
    /* /proc/$$/environ is what execve gave the shell, before the shell
     * adds PWD of its own
     */
    snprintf (body, sizeof (body),
              "printf '%%s\\n' \"$0\" \"$@\" >'%s'\n"
              "tr '\\0' '\\n' </proc/$$/environ >'%s'\n"
              "cat >'%s'\n",
              fx->args, fx->env, fx->in);
    write_script (fx->prog, body);
    *state = fx;
    return 0;
}

static int send_teardown (void **state)
{
    struct send_fx *fx = *state;
    DIR *d = opendir (fx->dir);
    struct dirent *e;
    int rc = 0;

    if (d) {
        while ((e = readdir (d))) {
            char path[512];

            if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
                continue;
            snprintf (path, sizeof (path), "%s/%s", fx->dir, e->d_name);
            unlink (path);
        }
        closedir (d);
    }
    if (rmdir (fx->dir) < 0)
        rc = -1;
    free (fx);
    return rc;
}

static char *slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "r");
    char *buf = NULL;
    size_t cap = 0, n = 0, r;

    assert_non_null (f);
    do {
        if (n + 65536 > cap) {
            cap = (n + 65536) * 2;
            buf = realloc (buf, cap + 1);
            assert_non_null (buf);
        }
        r = fread (buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose (f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static void test_send (void **state)
{
    struct send_fx *fx = *state;
    const size_t big = 1024 * 1024;
    char *msg = malloc (big), *got, want[512];
    const char *to[] = { "alice@example.org", "bob" };
    tr_error_t error = { 0 };
    size_t n;

    assert_non_null (msg);
    for (size_t i = 0; i < big; i++)
        msg[i] = (i % 64 == 63) ? '\n' : (char)('a' + (i * 7) % 26);

    /* with a sender: a megabyte arrives whole on stdin */
    assert_int_equal (tr_mail_send (fx->prog, "tracer@c1", to, 2, msg, big,
                                    30, &error),
                      0);
    got = slurp (fx->args, NULL);
    snprintf (want, sizeof (want),
              "%s\n-i\n-f\ntracer@c1\n--\nalice@example.org\nbob\n",
              fx->prog);
    assert_string_equal (got, want);
    free (got);
    got = slurp (fx->in, &n);
    assert_int_equal (n, big);
    assert_memory_equal (got, msg, big);
    free (got);
    /* the environment is only PATH */
    got = slurp (fx->env, NULL);
    show (got);
    assert_true (!strncmp (got, "PATH=", 5));
    assert_int_equal (count (got, "\n"), 1);
    free (got);

    /* without one (NULL or ""): no -f */
    assert_int_equal (tr_mail_send (fx->prog, NULL, to, 1, "hi\n", 3, 30,
                                    NULL),
                      0);
    got = slurp (fx->args, NULL);
    snprintf (want, sizeof (want), "%s\n-i\n--\nalice@example.org\n",
              fx->prog);
    assert_string_equal (got, want);
    free (got);
    assert_int_equal (tr_mail_send (fx->prog, "", to + 1, 1, "", 0, 30,
                                    NULL),
                      0);
    got = slurp (fx->args, NULL);
    snprintf (want, sizeof (want), "%s\n-i\n--\nbob\n", fx->prog);
    assert_string_equal (got, want);
    free (got);
    got = slurp (fx->in, &n);
    assert_int_equal (n, 0);
    free (got);
    free (msg);
}

static void test_send_exit_status (void **state)
{
    struct send_fx *fx = *state;
    const char *to[] = { "alice" };
    tr_error_t error = { 0 };

    write_script (fx->prog, "cat >/dev/null\nexit 75\n");
    errno = 0;
    assert_int_equal (tr_mail_send (fx->prog, NULL, to, 1, "hi\n", 3, 30,
                                    &error),
                      -1);
    assert_int_equal (errno, EIO);
    assert_non_null (strstr (error.text, "75"));

    /* killed by a signal */
    write_script (fx->prog, "kill -TERM $$\n");
    errno = 0;
    assert_int_equal (tr_mail_send (fx->prog, NULL, to, 1, "hi\n", 3, 30,
                                    NULL),
                      -1);
    assert_int_equal (errno, EIO);
}

static void test_send_timeout (void **state)
{
    struct send_fx *fx = *state;
    const char *to[] = { "alice" };
    tr_error_t error = { 0 };
    char body[256], *pidtext, *end;
    long pid;

    /* exec: the kill reaches the sleep itself, no orphan holds our
     * stderr open
     */
    snprintf (body, sizeof (body), "echo $$ >'%s'\nexec sleep 30\n",
              fx->args);
    write_script (fx->prog, body);
    errno = 0;
    assert_int_equal (tr_mail_send (fx->prog, NULL, to, 1, "hi\n", 3, 1,
                                    &error),
                      -1);
    assert_int_equal (errno, ETIMEDOUT);
    print_message ("# %s\n", error.text);
    /* killed and reaped: no such process left, not even a zombie */
    pidtext = slurp (fx->args, NULL);
    errno = 0;
    pid = strtol (pidtext, &end, 10);
    assert_true (errno == 0 && end != pidtext && *end == '\n' && pid > 1);
    free (pidtext);
    assert_int_equal (kill ((pid_t)pid, 0), -1);
    assert_int_equal (errno, ESRCH);
}

static void test_send_refused (void **state)
{
    struct send_fx *fx = *state;
    const char *good[] = { "alice" };
    const char *bad[] = { "alice", "-oQ/tmp/x" };
    const char *nl[] = { "alice\nbob" };

    errno = 0;
    assert_int_equal (tr_mail_send ("sendmail", NULL, good, 1, "hi\n", 3,
                                    30, NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_mail_send ("./sendmail", NULL, good, 1, "hi\n", 3,
                                    30, NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_mail_send (NULL, NULL, good, 1, "hi\n", 3, 30,
                                    NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_mail_send (fx->prog, NULL, bad, 2, "hi\n", 3, 30,
                                    NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_mail_send (fx->prog, NULL, nl, 1, "hi\n", 3, 30,
                                    NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_mail_send (fx->prog, "-oQ/tmp", good, 1, "hi\n", 3,
                                    30, NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_mail_send (fx->prog, NULL, good, 0, "hi\n", 3, 30,
                                    NULL),
                      -1);
    assert_int_equal (errno, EINVAL);
    /* none of these ran the program */
    assert_int_equal (access (fx->args, F_OK), -1);
    assert_int_equal (errno, ENOENT);
}

/* A program that does not exist fails; errno is what exec said. */
static void test_send_missing_program (void **state)
{
    struct send_fx *fx = *state;
    const char *to[] = { "alice" };
    char path[160];

    snprintf (path, sizeof (path), "%s/no-such-sendmail", fx->dir);
    errno = 0;
    assert_int_equal (tr_mail_send (path, NULL, to, 1, "hi\n", 3, 30, NULL),
                      -1);
    print_message ("# errno %d (%s)\n", errno, strerror (errno));
    assert_int_equal (errno, ENOENT);
}

/* ---------------------------------------------------------------------
 * tr_mail_digest
 */

static void digest_row (tr_stepsum_t *r, const char *job, const char *step,
                        const char *state)
{
    tr_stepsum_init (r);
    r->cluster = "c1";
    r->user = "alice";
    r->job_id = job;
    r->step_id = step;
    r->job_name = "wf";
    r->state = state;
}

static char *digest (const tr_stepsum_t *const *rows, size_t n,
                     time_t from, time_t to)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    assert_non_null (f);
    assert_int_equal (tr_mail_digest (f, "alice", rows, n, NULL, NULL, from,
                                      to),
                      0);
    assert_int_equal (fclose (f), 0);
    return buf;
}

static const time_t jan1 = 1767225600;  /* 2026-01-01 00:00 UTC */

static void test_digest (void **state)
{
    tr_stepsum_t r[4];
    const tr_stepsum_t *rows[] = { &r[0], &r[1], &r[2], &r[3] };
    char *s;

    (void)state;
    digest_row (&r[0], "10", "batch", "completed");
    r[0].req_cores = 4;
    r[0].elapsed_s = HOUR;
    r[0].cpu_s = HOUR;
    /* the extern step holds no work: not in the core-hours */
    digest_row (&r[1], "10", "extern", "completed");
    r[1].req_cores = 4;
    r[1].elapsed_s = HOUR;
    r[1].cpu_s = 0;
    digest_row (&r[2], "11", "batch", "failed");
    r[2].reason = "NonZeroExitCode";
    digest_row (&r[3], "12", "0", "oom");
    s = digest (rows, 4, jan1, jan1 + 7 * 86400);
    show (s);
    /* at 80 columns, a sentence goes on under its label */
    assert_true (starts_with (s, "Your jobs from 2026-01-01 00:00 to "
                                 "2026-01-08 00:00, as tracer recorded "
                                 "them on\n    cluster c1.\n\n"));
    assert_non_null (strstr (s, "User alice: 3 jobs, 4 steps: 2 completed, "
                                "1 failed, 1 OUT_OF_MEMORY, 0 timed\n"
                                "            out, 0 cancelled, 0 other.\n"));
    for (const char *l = s; *l;) {
        size_t n = strcspn (l, "\n");

        assert_true (n <= 80);
        l += n + (l[n] != '\0');
    }
    assert_non_null (strstr (s, "CPU: 4.0 core-hours allocated, 1.0 used "
                                "(25%).\n"));
    assert_non_null (strstr (s, "\nSteps that did not complete:\n"));
    assert_non_null (strstr (s, "  11.batch  FAILED "));
    assert_non_null (strstr (s, "NonZeroExitCode"));
    assert_non_null (strstr (s, "  12.0  OUT_OF_MEMORY "));
    assert_null (strstr (s, "10.batch"));
    assert_null (strstr (s, "10.extern"));
    free (s);

    /* nothing failed: no such list */
    s = digest (rows, 2, jan1, jan1 + 86400);
    assert_non_null (strstr (s, "User alice: 1 job, 2 steps: 2 completed"));
    assert_null (strstr (s, "did not complete"));
    free (s);

    s = digest (NULL, 0, jan1, jan1 + 86400);
    assert_non_null (strstr (s, "User alice: 0 jobs, 0 steps"));
    free (s);
}

/* At most ten failed steps are listed, then a command for the rest
 * that can be pasted into a shell as it is.
 */
static void test_digest_many_failed (void **state)
{
    tr_stepsum_t r[12];
    const tr_stepsum_t *rows[12];
    char ids[12][8];
    char *s, *more;
    bool user, quoted;

    (void)state;
    for (int i = 0; i < 12; i++) {
        snprintf (ids[i], sizeof (ids[i]), "%d", 100 + i);
        digest_row (&r[i], ids[i], "batch", "failed");
        rows[i] = &r[i];
    }
    s = digest (rows, 12, jan1, jan1 + 86400);
    assert_non_null (strstr (s, "  109.batch"));
    assert_null (strstr (s, "  110.batch"));
    more = line_with (s, "  ... and more: ");
    free (s);
    assert_non_null (more);
    show (more);
    user = strstr (more, "tracer-report -u alice") != NULL;
    quoted = strstr (more, "-S '2026-01-01 00:00'") != NULL;
    free (more);
    assert_true (user);
    assert_true (quoted);
}

static int group_setup (void **state)
{
    (void)state;
    /* Date: and the digest's dates in a known zone */
    if (setenv ("TZ", "UTC", 1) < 0)
        return -1;
    tzset ();
    return 0;
}

/* mail.on_stall's notice: job, step, node, how long, what each process
 * is blocked in, that nothing is done and how to cancel; a hostile job
 * name and tool name cannot start a line of their own.
 */
static void test_stall_text (void **state)
{
    char subject[256];
    char *text;
    json_t *rec;

    (void)state;
    rec = json_pack (
        "{s:{s:s s:s s:s s:s s:s s:i s:s}"
        " s:{s:b s:f s:I s:[{s:s s:i s:s s:s} {s:s s:i s:s s:s}]}}",
        "identity", "scheduler", "slurm", "job_id", "4711", "step_id", "0",
        "node", "n1", "job_name", "align\nBcc: root", "uid", 1000, "user",
        "alice", "progress", "stalled", 1, "stalled_s", 312.4,
        "since_unix_ms", (json_int_t)1700000000000LL, "processes", "tool",
        "cat", "pid", 42, "state", "S", "wchan", "anon_pipe_read", "tool",
        "ev\x1b[2Jil", "pid", 43, "state", "D", "wchan", "0");
    assert_non_null (rec);
    text = tr_mail_stall_text (rec, subject, sizeof (subject));
    assert_non_null (text);
    assert_string_equal (subject, "tracer: job 4711 step 0 on n1 has made "
                                  "no progress for 00:05:12");
    assert_non_null (strstr (text, "Job 4711 (align\\nBcc: root), step 0 on "
                                   "node n1, has made no progress for "
                                   "00:05:12"));
    assert_null (strstr (text, "\nBcc:"));
    assert_null (strchr (text, '\x1b'));
    assert_non_null (strstr (text, "\n  cat (pid 42)  S  anon_pipe_read\n"));
    assert_non_null (strstr (text, "\n  ev\\x1b[2Jil (pid 43)  D  -\n"));
    assert_non_null (strstr (text, "Nothing is done to the job"));
    assert_non_null (strstr (text, "cancel it: scancel 4711\n"));
    free (text);

    /* PBS says qdel; no scheduler: no command */
    json_object_set_new (json_object_get (rec, "identity"), "scheduler",
                         json_string ("pbs"));
    text = tr_mail_stall_text (rec, subject, sizeof (subject));
    assert_non_null (strstr (text, "cancel it: qdel 4711\n"));
    free (text);
    json_object_set_new (json_object_get (rec, "identity"), "scheduler",
                         json_string ("none"));
    text = tr_mail_stall_text (rec, subject, sizeof (subject));
    assert_null (strstr (text, "cancel it"));
    free (text);

    /* not stalled (any more): no notice */
    json_object_set_new (json_object_get (rec, "progress"), "stalled",
                         json_false ());
    errno = 0;
    assert_null (tr_mail_stall_text (rec, subject, sizeof (subject)));
    assert_int_equal (errno, EINVAL);
    json_object_del (rec, "progress");
    assert_null (tr_mail_stall_text (rec, subject, sizeof (subject)));
    json_decref (rec);
}

static void test_user_address (void **state)
{
    char buf[64];

    (void)state;
    assert_int_equal (tr_mail_user_address (buf, sizeof (buf), "alice", ""), 0);
    assert_string_equal (buf, "alice");
    assert_int_equal (tr_mail_user_address (buf, sizeof (buf), "alice",
                                            "example.org"), 0);
    assert_string_equal (buf, "alice@example.org");
    assert_int_equal (tr_mail_user_address (buf, sizeof (buf), "bob@site.edu",
                                            "example.org"), 0);
    assert_string_equal (buf, "bob@site.edu");
    errno = 0;
    assert_int_equal (tr_mail_user_address (buf, sizeof (buf), "-oQ", ""), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_mail_user_address (buf, 8, "alice", "example.org"),
                      -1);
    assert_int_equal (errno, ERANGE);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_event_env),
        cmocka_unit_test (test_event_subject),
        cmocka_unit_test (test_event_hostile),
        cmocka_unit_test (test_event_subject_name_paren),
        cmocka_unit_test (test_event_traced),
        cmocka_unit_test (test_address_ok),
        cmocka_unit_test (test_worth),
        cmocka_unit_test (test_worth_no_rows),
        cmocka_unit_test (test_summary_text),
        cmocka_unit_test (test_summary_html),
        cmocka_unit_test (test_summary_scheduler),
        cmocka_unit_test (test_summary_html_escapes),
        cmocka_unit_test (test_base64_vectors),
        cmocka_unit_test (test_base64_lines),
        cmocka_unit_test (test_compose_text),
        cmocka_unit_test (test_compose_alternative),
        cmocka_unit_test (test_compose_attachment),
        cmocka_unit_test (test_compose_subject_utf8),
        cmocka_unit_test (test_compose_subject_line_length),
        cmocka_unit_test (test_compose_invalid),
        cmocka_unit_test (test_compose_hostile),
        cmocka_unit_test (test_compose_hostile_parts),
        cmocka_unit_test (test_summary_html_hostile),
        cmocka_unit_test (test_compose_long_line),
        cmocka_unit_test (test_compose_long_line_utf8),
        cmocka_unit_test (test_compose_boundary),
        cmocka_unit_test_setup_teardown (test_send, send_setup,
                                         send_teardown),
        cmocka_unit_test_setup_teardown (test_send_exit_status, send_setup,
                                         send_teardown),
        cmocka_unit_test_setup_teardown (test_send_timeout, send_setup,
                                         send_teardown),
        cmocka_unit_test_setup_teardown (test_send_refused, send_setup,
                                         send_teardown),
        cmocka_unit_test_setup_teardown (test_send_missing_program,
                                         send_setup, send_teardown),
        cmocka_unit_test (test_digest),
        cmocka_unit_test (test_stall_text),
        cmocka_unit_test (test_user_address),
        cmocka_unit_test (test_digest_many_failed),
    };

    return cmocka_run_group_tests (tests, group_setup, NULL);
}
