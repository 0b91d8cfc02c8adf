/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
/* The cause engine: one class per failed step, from its record (cause.h,
 * doc/diagnosis.md).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cause.h"
#include "states.h"
#include "libtracer/util/units.h"
#include "libtracer/util/json.h"

static const char *const names[] = {
    "",           "oom",          "stalled",  "timeout",
    "cancelled",  "node-failure", "io-error", "input-missing",
    "tool-crash", "tool-error",   "unknown",
};

const char *tr_cause_name (tr_cause_t cause)
{
    if ((int)cause < 0 || (size_t)cause >= sizeof (names) / sizeof (names[0]))
        return "";
    return names[cause];
}

bool tr_cause_blames_tool (tr_cause_t cause)
{
    switch (cause) {
    case TR_CAUSE_NONE:
    case TR_CAUSE_STALLED:
    case TR_CAUSE_TIMEOUT:
    case TR_CAUSE_CANCELLED:
    case TR_CAUSE_NODE_FAILURE:
        return false;
    default:
        return true;
    }
}

tr_cause_t tr_cause_from_name (const char *name)
{
    for (size_t i = 1; name && i < sizeof (names) / sizeof (names[0]); i++)
        if (!strcmp (name, names[i]))
            return (tr_cause_t)i;
    return TR_CAUSE_NONE;
}

const char *tr_cause_signal_name (int sig)
{
    static const char *const sn[] = {
        NULL,      "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",    "SIGTRAP",
        "SIGABRT", "SIGBUS",  "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV",
        "SIGUSR2", "SIGPIPE", "SIGALRM",   "SIGTERM", "SIGSTKFLT", "SIGCHLD",
        "SIGCONT", "SIGSTOP", "SIGTSTP",   "SIGTTIN", "SIGTTOU",   "SIGURG",
        "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",  "SIGIO",
        "SIGPWR",  "SIGSYS",
    };

    if (sig > 0 && sig < (int)(sizeof (sn) / sizeof (sn[0])))
        return sn[sig];
    return NULL;
}

/* A signal that says the program itself crashed. */
static bool crash_signal (int sig)
{
    switch (sig) {
    case 4:  /* SIGILL */
    case 5:  /* SIGTRAP */
    case 6:  /* SIGABRT */
    case 7:  /* SIGBUS */
    case 8:  /* SIGFPE */
    case 11: /* SIGSEGV */
    case 31: /* SIGSYS */
        return true;
    default:
        return false;
    }
}

/* The evidence line */

struct text {
    char *buf;
    size_t size, len;
};

static void put (struct text *t, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void put (struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!t->buf || t->len + 1 >= t->size)
        return;
    va_start (ap, fmt);
    n = vsnprintf (t->buf + t->len, t->size - t->len, fmt, ap);
    va_end (ap);
    if (n < 0)
        t->buf[t->len] = '\0';
    else if ((size_t)n >= t->size - t->len)
        t->len = t->size - 1;
    else
        t->len += (size_t)n;
}

/* Text from the record (a job's names, paths, the kernel's words): at
 * most max bytes, control characters blanked.
 */
static void put_safe (struct text *t, const char *s, size_t max)
{
    if (!s)
        s = "?";
    for (size_t i = 0; s[i] && i < max && t->buf && t->len + 1 < t->size; i++) {
        unsigned char c = (unsigned char)s[i];
        t->buf[t->len++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
        t->buf[t->len] = '\0';
    }
}

static void put_bytes (struct text *t, double b)
{
    char buf[32];

    put (t, "%s", tr_units_bytes (buf, sizeof (buf), b));
}

static void put_seconds (struct text *t, double s)
{
    char buf[48];

    put (t, "%s", tr_units_duration_words (buf, sizeof (buf), s));
}

/* Reading the record */

static bool eq (const char *a, const char *b)
{
    return a && b && !strcmp (a, b);
}

/* The first element of events of one of the kinds (NULL-terminated)
 * and, when step_only, of the step's scope.
 */
static json_t *event_of (json_t *rec, const char *const *kinds, bool step_only)
{
    json_t *ev;
    size_t i;

    json_array_foreach (json_object_get (rec, "events"), i, ev)
    {
        const char *kind = tr_json_str (ev, "kind");
        if (step_only && !eq (tr_json_str (ev, "scope"), "step"))
            continue;
        for (size_t k = 0; kind && kinds[k]; k++)
            if (!strcmp (kind, kinds[k]))
                return ev;
    }
    return NULL;
}

static void put_event (struct text *t, json_t *ev)
{
    if (eq (tr_json_str (ev, "scope"), "node"))
        put (t, "node-wide ");
    put (t, "kernel ");
    put_safe (t, tr_json_str (ev, "kind") ? tr_json_str (ev, "kind") : "event",
              32);
    if (tr_json_str (ev, "tool")) {
        put (t, " of ");
        put_safe (t, tr_json_str (ev, "tool"), 64);
        if (!isnan (tr_json_num (ev, "pid")))
            put (t, " (pid %.0f)", tr_json_num (ev, "pid"));
    }
    if (tr_json_str (ev, "device")) {
        put (t, " on ");
        put_safe (t, tr_json_str (ev, "device"), 64);
    }
    if (tr_json_str (ev, "text")) {
        put (t, ": ");
        put_safe (t, tr_json_str (ev, "text"), 160);
    }
}

/* The culprit, its end and its chain. */
static void put_culprit (struct text *t, json_t *c)
{
    json_t *chain = json_object_get (c, "chain"), *p;
    double sig = tr_json_num (c, "signal"), code = tr_json_num (c, "exit_code");
    double at = tr_json_num (c, "at_s"), coll = tr_json_num (c, "collateral");
    size_t i;

    put_safe (t, tr_json_str (c, "tool"), 64);
    if (!isnan (tr_json_num (c, "pid")))
        put (t, " (pid %.0f)", tr_json_num (c, "pid"));
    /* the name it gave itself is its own word: said, never blamed */
    if (tr_json_str (c, "calls_itself")) {
        put (t, ", calling itself ");
        put_safe (t, tr_json_str (c, "calls_itself"), 16);
        put (t, ",");
    }
    if (!isnan (sig)) {
        const char *name = tr_cause_signal_name ((int)sig);
        if (name)
            put (t, " killed by %s", name);
        else
            put (t, " killed by signal %.0f", sig);
        if (json_is_true (json_object_get (c, "core_dumped")))
            put (t, " (core dumped)");
    }
    else if (!isnan (code))
        put (t, " exited %.0f", code);
    if (!isnan (at)) {
        put (t, ", ");
        put_seconds (t, at);
        put (t, " before the end");
    }
    json_array_foreach (chain, i, p)
    {
        if (i >= 4) {
            put (t, " < ...");
            break;
        }
        put (t, i ? " < " : ", under ");
        put_safe (t, tr_json_str (p, "tool"), 32);
        if (!isnan (tr_json_num (p, "pid")))
            put (t, " %.0f", tr_json_num (p, "pid"));
    }
    if (coll > 0)
        put (t, "; %.0f collateral failure%s after it", coll,
             coll == 1 ? "" : "s");
}

static bool errno_missing (const char *e)
{
    return eq (e, "ENOENT") || eq (e, "EACCES") || eq (e, "ENOTDIR");
}

/* Whether a process acted on failed lookup v: it was the last failed
 * lookup of a process that ended soon after, and no successful lookup of
 * the same name elsewhere followed it ("acted", counted in the kernel).
 * An entry without the count (a record from before it was kept, or
 * fixtures) is taken as acted on.
 */
static bool acted_on (json_t *v)
{
    json_t *a = json_object_get (v, "acted");

    return !a || tr_json_num (v, "acted") > 0;
}

static tr_cause_t decide (json_t *rec, struct text *t)
{
    json_t *oc = json_object_get (rec, "outcome");
    json_t *summary = json_object_get (rec, "summary");
    json_t *mem = json_object_get (summary, "memory");
    json_t *culprit = json_object_get (oc, "culprit");
    json_t *progress = json_object_get (rec, "progress");
    json_t *files = json_object_get (rec, "files");
    const char *state = tr_json_str (oc, "state"),
               *reason = tr_json_str (oc, "reason");
    double code = tr_json_num (oc, "exit_code"), sig = tr_json_num (oc, "signa"
                                                                        "l");
    double csig = tr_json_num (culprit, "signal"),
           ccode = tr_json_num (culprit, "exit_code");
    json_t *v;
    size_t i;

    if (!state || eq (state, "completed") || eq (state, "running"))
        return TR_CAUSE_NONE;

    /* 1. oom */
    {
        static const char *const k[] = { "oom-kill", NULL };
        json_t *ev = event_of (rec, k, true);
        /* the text counts what the kernel counted */
        double kills = tr_json_num (mem, "oom_kill_events");
        if (isnan (kills)) /* an older record's member */
            kills = tr_json_num (summary, "x_oom_kill_events");
        if (tr_states_oom (state, tr_states_oom_kills (rec))) {
            if (ev && tr_json_str (ev, "tool")) {
                put (t, "the OOM killer killed ");
                put_safe (t, tr_json_str (ev, "tool"), 64);
                if (!isnan (tr_json_num (ev, "pid")))
                    put (t, " (pid %.0f)", tr_json_num (ev, "pid"));
                if (!isnan (tr_json_num (ev, "rss_bytes"))) {
                    put (t, " at ");
                    put_bytes (t, tr_json_num (ev, "rss_bytes"));
                    put (t, " resident");
                }
            }
            else if (kills > 0)
                put (t, "the OOM killer killed %.0f process%s of the step",
                     kills, kills == 1 ? "" : "es");
            else
                put (t, "the OOM killer killed a process of the step");
            if (!isnan (tr_json_num (mem, "peak_bytes"))
                && !isnan (tr_json_num (mem, "limit_bytes"))) {
                put (t, "; memory peak ");
                put_bytes (t, tr_json_num (mem, "peak_bytes"));
                put (t, " of a ");
                put_bytes (t, tr_json_num (mem, "limit_bytes"));
                put (t, " limit");
            }
            return TR_CAUSE_OOM;
        }
    }

    /* 2. stalled */
    if (json_is_true (json_object_get (progress, "stalled"))) {
        json_t *procs = json_object_get (progress, "processes");
        put (t, "no CPU or I/O progress");
        if (!isnan (tr_json_num (progress, "stalled_s"))) {
            put (t, " for ");
            put_seconds (t, tr_json_num (progress, "stalled_s"));
        }
        put (t, " at the end");
        json_array_foreach (procs, i, v)
        {
            if (i >= 3) {
                put (t, ", ...");
                break;
            }
            put (t, i ? ", " : "; ");
            put_safe (t, tr_json_str (v, "tool"), 32);
            if (!isnan (tr_json_num (v, "pid")))
                put (t, " (pid %.0f)", tr_json_num (v, "pid"));
            if (tr_json_str (v, "wchan")) {
                put (t, " blocked in ");
                put_safe (t, tr_json_str (v, "wchan"), 32);
            }
            else if (tr_json_str (v, "state")) {
                put (t, " state ");
                put_safe (t, tr_json_str (v, "state"), 4);
            }
        }
        if (eq (state, "timeout"))
            put (t, "; then killed at its time limit");
        else if (eq (state, "cancelled"))
            put (t, "; then cancelled");
        return TR_CAUSE_STALLED;
    }

    /* 3. timeout */
    if (eq (state, "timeout")) {
        double limit = tr_json_num (json_object_get (rec, "request"), "time_"
                                                                      "limit_"
                                                                      "s");
        put (t, "reached its time limit");
        if (limit > 0) {
            put (t, " of ");
            put_seconds (t, limit);
        }
        if (reason) {
            put (t, " (");
            put_safe (t, reason, 120);
            put (t, ")");
        }
        return TR_CAUSE_TIMEOUT;
    }

    /* 5 before 4: an older collector recorded the scheduler's node
     * failure as a cancel (tr_states_of)
     */
    /* a record that followed no process: nothing was measured, which
     * says nothing of the node
     */
    if (tr_states_unfollowed (rec)) {
        put (t, TR_STATES_UNFOLLOWED);
        return TR_CAUSE_UNKNOWN;
    }
    if (eq (state, "incomplete")
        || (eq (state, "cancelled") && tr_states_node_failure (reason))) {
        put (t, tr_states_node_failure (reason) ? "the node failed"
                                                : "the record is incomplete");
        if (reason) {
            put (t, ": ");
            put_safe (t, reason, 200);
        }
        return TR_CAUSE_NODE_FAILURE;
    }

    /* 4. cancelled */
    if (eq (state, "cancelled")) {
        if (reason)
            put_safe (t, reason, 200);
        else
            put (t, "the job or step was cancelled");
        return TR_CAUSE_CANCELLED;
    }

    /* 6. io-error */
    {
        static const char *const k[] = { "io-error", "nfs", NULL };
        json_t *ioe = json_array_get (json_object_get (files, "io_errors"), 0);
        json_t *ev = event_of (rec, k, false);
        if (ioe) {
            put_safe (t,
                      tr_json_str (ioe, "op") ? tr_json_str (ioe, "op") : "I/O",
                      8);
            if (tr_json_str (ioe, "path")) {
                put (t, " of ");
                put_safe (t, tr_json_str (ioe, "path"), 160);
            }
            put (t, " failed with ");
            put_safe (t, tr_json_str (ioe, "errno"), 16);
            if (tr_json_str (ioe, "tool")) {
                put (t, " in ");
                put_safe (t, tr_json_str (ioe, "tool"), 64);
            }
            if (tr_json_num (ioe, "count") > 1)
                put (t, " (%.0f times)", tr_json_num (ioe, "count"));
            return TR_CAUSE_IO_ERROR;
        }
        if (ev) {
            put_event (t, ev);
            return TR_CAUSE_IO_ERROR;
        }
    }

    /* 7. input-missing: a failed lookup by the culprit's tool that a
     * process acted on (it was the last it made: see acted_on), and an
     * exit code that says it mattered
     */
    /* A culprit killed by a signal did not act on a failed lookup (a
     * crash is the kernel's word, and comes next): only one that exited
     * with a code, or, with no culprit, a step that failed.
     */
    if (culprit ? ccode > 0 : (code > 0 || sig > 0)) {
        const char *tool = tr_json_str (culprit, "tool");
        const char *comm = tr_json_str (culprit, "comm");
        json_t *hit = NULL;
        json_array_foreach (json_object_get (files, "failed_opens"), i, v)
        {
            const char *by = tr_json_str (v, "tool");
            if (errno_missing (tr_json_str (v, "errno")) && acted_on (v)
                && (!tool || eq (tool, by) || (comm && eq (comm, by)))) {
                hit = v;
                break;
            }
        }
        if (hit) {
            const char *call = tr_json_str (hit, "call");
            const char *by = tr_json_str (hit, "tool");
            /* the culprit's name where the evidence is its comm: one
             * name for one process (python3.11, not python3)
             */
            if (tool && comm && by && eq (comm, by) && !eq (tool, by))
                by = tool;
            put_safe (t, by ? by : "a process", 64);
            put (t, eq (call, "stat")     ? " could not find "
                    : eq (call, "access") ? " could not access "
                                          : " could not open ");
            put_safe (t, tr_json_str (hit, "path"), 160);
            put (t, " (");
            put_safe (t, tr_json_str (hit, "errno"), 16);
            if (tr_json_num (hit, "count") > 1)
                put (t, ", %.0f times", tr_json_num (hit, "count"));
            put (t, ")");
            if (culprit) {
                put (t, "; ");
                put_culprit (t, culprit);
            }
            return TR_CAUSE_INPUT_MISSING;
        }
    }

    /* 8. tool-crash */
    if (culprit && !isnan (csig) && crash_signal ((int)csig)) {
        put_culprit (t, culprit);
        return TR_CAUSE_TOOL_CRASH;
    }
    {
        static const char *const k[] = { "segfault", "trap", NULL };
        json_t *ev = event_of (rec, k, true);
        if (ev) {
            put_event (t, ev);
            return TR_CAUSE_TOOL_CRASH;
        }
    }
    if (!culprit && sig > 0 && crash_signal ((int)sig)) {
        put (t, "a task was killed by %s", tr_cause_signal_name ((int)sig));
        return TR_CAUSE_TOOL_CRASH;
    }

    /* 9. tool-error */
    if (culprit && (ccode > 0 || csig > 0)) {
        put_culprit (t, culprit);
        return TR_CAUSE_TOOL_ERROR;
    }
    if (code > 0 || sig > 0) {
        if (code > 0)
            put (t, "the step exited %.0f", code);
        if (sig > 0) {
            const char *name = tr_cause_signal_name ((int)sig);
            put (t, "%sa task was killed by ", code > 0 ? "; " : "");
            if (name)
                put (t, "%s", name);
            else
                put (t, "signal %.0f", sig);
        }
        put (t, " (no process exit was observed)");
        return TR_CAUSE_TOOL_ERROR;
    }

    /* 10. unknown */
    put (t, "%s with no evidence of why", state);
    if (reason) {
        put (t, " (");
        put_safe (t, reason, 200);
        put (t, ")");
    }
    return TR_CAUSE_UNKNOWN;
}

tr_cause_t tr_cause_of (json_t *rec, char *text, size_t size)
{
    struct text t = { text, size, 0 };

    if (text && size)
        text[0] = '\0';
    if (!text || !size)
        t.buf = NULL;
    return rec ? decide (rec, &t) : TR_CAUSE_NONE;
}

json_t *tr_cause_json (json_t *rec)
{
    char text[TR_CAUSE_TEXT_MAX];
    tr_cause_t cause = tr_cause_of (rec, text, sizeof (text));
    json_t *o;

    errno = 0;
    if (cause == TR_CAUSE_NONE)
        return NULL;
    if (!(o = json_pack ("{s:s s:s}", "class", tr_cause_name (cause), "text",
                         text)))
        errno = ENOMEM;
    return o;
}
