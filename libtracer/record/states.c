/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
/* Job and step state words: the record's, sacct's, the scheduler's, and
 * how bad each is (states.h).
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <sys/wait.h>
#include <jansson.h>

#include "states.h"

static const struct word {
    const char *state;    /* the state rows work on */
    const char *sacct;    /* sacct's word */
    const char *abbrev;   /* sacct -s */
    int rank;             /* tr_states_rank */
    bool failed;          /* tr_states_failed */
    char mark;            /* tr_states_mark */
    const char *nextflow; /* tr_states_nextflow */
    const char *phrase;   /* tr_states_phrase */
} words[] = {
    { "completed", "COMPLETED", "CD", 0, false, '=', "COMPLETED", "completed" },
    { "running", "RUNNING", "R", 1, false, '>', "RUNNING", "is running" },
    { "unknown", "UNKNOWN", "UN", 2, false, '?', "-", "ended unknown" },
    { "failed", "FAILED", "F", 3, true, 'F', "FAILED", "failed" },
    { "cancelled", "CANCELLED", "CA", 4, true, 'C', "ABORTED", "cancelled" },
    { "timeout", "TIMEOUT", "TO", 5, true, 'T', "FAILED", "timed out" },
    { "oom", TR_STATES_OOM, "OOM", 6, true, 'M', "FAILED",
      "killed for lack of memory" },
    { "incomplete", "INCOMPLETE", "IN", 7, false, '?', "-",
      "was not measured to its end" },
    { "NODE_FAIL", "NODE_FAIL", "NF", 7, true, 'N', "FAILED",
      "lost to a node failure" },
    { "BOOT_FAIL", "BOOT_FAIL", "BF", 7, true, 'N', "FAILED",
      "lost to a node that failed to boot" },
};

const char *const tr_states_record[] = {
    "running", "completed",  "failed",  "cancelled", "timeout",
    "oom",     "incomplete", "unknown", NULL,
};

#define NWORDS (sizeof (words) / sizeof (words[0]))
#define UNKNOWN_WORD (&words[2])

/* A state or its sacct word, exactly as spelled; NULL if neither. */
static const struct word *lookup (const char *w)
{
    for (size_t i = 0; w && i < NWORDS; i++)
        if (!strcmp (w, words[i].state) || !strcmp (w, words[i].sacct))
            return &words[i];
    return NULL;
}

int tr_states_rank (const char *word)
{
    const struct word *w = lookup (word);

    return (w ? w : UNKNOWN_WORD)->rank;
}

bool tr_states_failed (const char *word)
{
    const struct word *w = lookup (word);

    return w && w->failed;
}

bool tr_states_oom (const char *state, double oom_kills)
{
    return (state && (!strcmp (state, "oom") || !strcmp (state, TR_STATES_OOM)))
           || oom_kills > 0;
}

static double member (json_t *o, const char *key)
{
    json_t *v = json_object_get (o, key);

    return json_is_number (v) ? json_number_value (v) : NAN;
}

double tr_states_oom_kills (json_t *rec)
{
    json_t *summary = json_object_get (rec, "summary");
    json_t *oc = json_object_get (rec, "outcome");
    double n = member (json_object_get (summary, "memory"), "oom_kill_events");
    double tasks = 0, events = 0;
    json_t *v;
    size_t i;

    if (isnan (n)) /* an older record's member */
        n = member (summary, "x_oom_kill_events");
    if (isnan (n))
        n = 0;
    json_array_foreach (json_object_get (oc, "tasks"), i, v)
    {
        if (json_is_true (json_object_get (v, "oom_killed")))
            tasks++;
    }
    json_array_foreach (json_object_get (rec, "events"), i, v)
    {
        const char *kind = json_string_value (json_object_get (v, "kind"));
        const char *scope = json_string_value (json_object_get (v, "scope"));
        if (kind && scope && !strcmp (kind, "oom-kill")
            && !strcmp (scope, "step"))
            events++;
    }
    return fmax (n, fmax (tasks, events));
}

const char *tr_states_lsf (int wait_status,
                           const char *exit_info,
                           const char **why)
{
    const char *info = exit_info ? exit_info : "";
    int code = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
    int sig = WIFSIGNALED (wait_status) ? WTERMSIG (wait_status) : 0;

    if (why)
        *why = NULL;
    if (strstr (info, "RUNLIMIT"))
        return "timeout";
    if (strstr (info, "MEMLIMIT") || strstr (info, "SWAPLIMIT"))
        return "oom";
    if (strstr (info, "_USER") || strstr (info, "FORCE")
        || strstr (info, "REQUEUE"))
        return "cancelled";
    if (!*info
        && (sig == SIGINT || sig == SIGTERM || code == 128 + SIGINT
            || code == 128 + SIGTERM)) {
        if (why)
            *why = sig == SIGINT || code == 128 + SIGINT
                       ? "ended by SIGINT, the first signal of bkill"
                       : "ended by SIGTERM, the second signal of bkill";
        return "cancelled";
    }
    return code == 0 && !sig ? "completed" : "failed";
}

const char *tr_states_node_failure (const char *reason)
{
    if (reason && strstr (reason, "NODE_FAIL"))
        return "NODE_FAIL";
    if (reason && strstr (reason, "BOOT_FAIL"))
        return "BOOT_FAIL";
    return NULL;
}

bool tr_states_unfollowed (json_t *rec)
{
    json_t *sum = json_object_get (rec, "summary");
    json_t *cpu = json_object_get (sum, "cpu");
    json_t *procs = json_object_get (sum, "processes");
    const char *src = json_string_value (json_object_get (cpu, "source"));
    const char *attach = json_string_value (
        json_object_get (json_object_get (rec, "cgroup"), "attach"));
    const char *kind = json_string_value (json_object_get (rec, "kind"));

    /* a snapshot of a running step may not have met a process yet */
    if (kind && strcmp (kind, "final"))
        return false;
    if (src && !strcmp (src, "none"))
        return true;
    return attach && !strcmp (attach, "process-tree")
           && json_is_integer (json_object_get (procs, "count"))
           && json_integer_value (json_object_get (procs, "count")) == 0;
}

const char *tr_states_of (json_t *rec)
{
    json_t *oc = json_object_get (rec, "outcome");
    const char *state = json_string_value (json_object_get (oc, "state"));
    const char *reason = json_string_value (json_object_get (oc, "reason"));
    const char *nf;

    if (!state)
        return "";
    if (strcmp (state, "running") && tr_states_unfollowed (rec))
        return "incomplete";
    if (!strcmp (state, "failed"))
        return tr_states_oom (state, tr_states_oom_kills (rec)) ? "oom" : state;
    /* an older collector recorded a node failure as a cancel */
    if ((!strcmp (state, "incomplete") || !strcmp (state, "cancelled"))
        && (nf = tr_states_node_failure (reason)))
        return nf;
    return state;
}

const char *tr_states_name (const char *state, double oom_kills)
{
    if (!state)
        return "";
    if (!strcmp (state, "oom")
        || (!strcmp (state, "failed") && tr_states_oom (state, oom_kills)))
        return TR_STATES_OOM;
    return state;
}

const char *tr_states_sacct (const char *state, double oom_kills)
{
    const char *s = tr_states_name (state, oom_kills);
    const struct word *w = lookup (s);

    if (!*s)
        return "";
    return (w ? w : UNKNOWN_WORD)->sacct;
}

const char *tr_states_parse (const char *word)
{
    for (size_t i = 0; word && i < NWORDS; i++)
        if (!strcasecmp (word, words[i].abbrev)
            || !strcasecmp (word, words[i].sacct)
            || !strcasecmp (word, words[i].state))
            return words[i].state;
    return NULL;
}

const char *tr_states_outcome (const char *sched_state)
{
    static const struct {
        const char *sched, *outcome;
    } map[] = {
        { "TIMEOUT", "timeout" },      { "DEADLINE", "timeout" },
        { "CANCELLED", "cancelled" },  { "PREEMPTED", "cancelled" },
        { "REVOKED", "cancelled" },    { "NODE_FAIL", "incomplete" },
        { "BOOT_FAIL", "incomplete" },
    };

    for (size_t i = 0; sched_state && i < sizeof (map) / sizeof (map[0]); i++)
        if (!strcmp (sched_state, map[i].sched))
            return map[i].outcome;
    return NULL;
}

char tr_states_mark (const char *word)
{
    const struct word *w = lookup (word);

    return w ? w->mark : '?';
}

const char *tr_states_nextflow (const char *word)
{
    const struct word *w = lookup (word);

    return w ? w->nextflow : "-";
}

const char *tr_states_phrase (const char *word)
{
    const struct word *w = lookup (word);

    return w ? w->phrase : NULL;
}
