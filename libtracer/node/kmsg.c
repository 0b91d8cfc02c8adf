/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
/* Kernel evidence from /dev/kmsg records (kmsg.h).  Pure functions: the
 * daemon reads the records and decides which step an event concerns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmsg.h"

static const char *const kind_names[] = {
    [TR_KMSG_NONE] = NULL,
    [TR_KMSG_OOM_KILL] = "oom-kill",
    [TR_KMSG_SEGFAULT] = "segfault",
    [TR_KMSG_TRAP] = "trap",
    [TR_KMSG_HUNG_TASK] = "hung-task",
    [TR_KMSG_IO_ERROR] = "io-error",
    [TR_KMSG_NFS] = "nfs",
    [TR_KMSG_GPU_XID] = "gpu-xid",
};

const char *tr_kmsg_kind_name (enum tr_kmsg_kind kind)
{
    if ((unsigned)kind >= sizeof (kind_names) / sizeof (kind_names[0]))
        return NULL;
    return kind_names[kind];
}

bool tr_kmsg_kind_nodewide (enum tr_kmsg_kind kind)
{
    return kind == TR_KMSG_IO_ERROR || kind == TR_KMSG_NFS
           || kind == TR_KMSG_GPU_XID;
}

void tr_kmsg_parser_init (tr_kmsg_parser_t *p)
{
    memset (p, 0, sizeof (*p));
}

/* Unsigned decimal at s (at least one digit), its end in *end. */
static bool parse_u64 (const char *s, const char *lim, uint64_t *v,
                       const char **end)
{
    uint64_t x = 0;
    const char *q = s;

    while (q < lim && *q >= '0' && *q <= '9') {
        if (x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*q - '0');
        q++;
    }
    if (q == s)
        return false;
    *v = x;
    if (end)
        *end = q;
    return true;
}

static bool parse_pid (const char *s, const char *lim, pid_t *pid,
                       const char **end)
{
    uint64_t v;

    if (!parse_u64 (s, lim, &v, end) || v == 0 || v > 4194304)
        return false;
    *pid = (pid_t)v;
    return true;
}

/* Copy [s, e) into buf (size bytes), cut, NUL-terminated. */
static void copy_span (char *buf, size_t size, const char *s, const char *e)
{
    size_t n = (size_t)(e - s);

    if (n >= size)
        n = size - 1;
    memcpy (buf, s, n);
    buf[n] = '\0';
}

/* The message escaped: printable ASCII as is, '\\' doubled, every other
 * byte as \xNN, at most TR_KMSG_TEXT_MAX bytes (an escape never cut).
 */
static void escape_span (char *out, size_t size, const char *s,
                         const char *e)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0, max = size - 1;

    for (; s < e; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            if (n + 1 > max)
                break;
            out[n++] = (char)c;
        }
        else if (c == '\\') {
            if (n + 2 > max)
                break;
            out[n++] = '\\';
            out[n++] = '\\';
        }
        else {
            if (n + 4 > max)
                break;
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
}

static void escape_text (char *out, const char *s, const char *e)
{
    escape_span (out, TR_KMSG_TEXT_MAX + 1, s, e);
}

/* The first occurrence of needle in [s, lim), or NULL. */
static const char *find (const char *s, const char *lim, const char *needle)
{
    size_t n = strlen (needle);

    for (; s && s + n <= lim; s++)
        if (!memcmp (s, needle, n))
            return s;
    return NULL;
}

/* The last occurrence of needle in [s, lim), or NULL. */
static const char *find_last (const char *s, const char *lim,
                              const char *needle)
{
    size_t n = strlen (needle);

    if ((size_t)(lim - s) < n)
        return NULL;
    for (size_t k = (size_t)(lim - s) - n + 1; k > 0; k--)
        if (!memcmp (s + k - 1, needle, n))
            return s + k - 1;
    return NULL;
}

static bool starts (const char *s, const char *lim, const char *prefix)
{
    size_t n = strlen (prefix);

    return (size_t)(lim - s) >= n && !memcmp (s, prefix, n);
}

/* "key:NkB" in [s, lim), in bytes; false when absent */
static bool kb_field (const char *s, const char *lim, const char *key,
                      int64_t *bytes)
{
    const char *q = find (s, lim, key);
    uint64_t v;

    if (!q || !parse_u64 (q + strlen (key), lim, &v, NULL)
        || v > (uint64_t)INT64_MAX / 1024)
        return false;
    *bytes = (int64_t)(v * 1024);
    return true;
}

/* "oom-kill:constraint=...,oom_memcg=A,task_memcg=B,task=NAME,pid=N,uid=U":
 * remembered for the "Killed process" line that follows.
 */
static void parse_oom_kill (tr_kmsg_parser_t *p, uint64_t seq,
                            const char *msg, const char *lim)
{
    const char *pidk = find_last (msg, lim, ",pid=");
    const char *taskk, *tmk, *omk, *end;
    pid_t pid;

    p->have_oom = false;
    if (!pidk || !parse_pid (pidk + 5, lim, &pid, &end))
        return;
    tmk = find (msg, pidk, ",task_memcg=");
    taskk = tmk ? find_last (tmk, pidk, ",task=") : find (msg, pidk, ",task=");
    omk = find (msg, tmk ? tmk : pidk, ",oom_memcg=");
    memset (p->oom_task, 0, sizeof (p->oom_task));
    p->oom_memcg[0] = p->oom_task_memcg[0] = '\0';
    if (taskk)
        copy_span (p->oom_task, sizeof (p->oom_task), taskk + 6, pidk);
    if (tmk && taskk && taskk > tmk)
        copy_span (p->oom_task_memcg, sizeof (p->oom_task_memcg), tmk + 12,
                   taskk);
    if (omk)
        copy_span (p->oom_memcg, sizeof (p->oom_memcg), omk + 11,
                   tmk ? tmk : (taskk ? taskk : pidk));
    p->oom_pid = pid;
    p->oom_seq = seq;
    p->have_oom = true;
}

/* "... Killed process N (NAME) total-vm:XkB, anon-rss:XkB, file-rss:XkB,
 * shmem-rss:XkB, UID:U ..."
 */
static int parse_killed (tr_kmsg_parser_t *p, const char *msg,
                         const char *lim, struct tr_kmsg_event *ev)
{
    const char *k = find (msg, lim, "Killed process ");
    const char *end, *close;
    int64_t anon, file, shmem;

    if (!k || !parse_pid (k + 15, lim, &ev->pid, &end)
        || !starts (end, lim, " ("))
        return 0;
    close = find_last (end + 2, lim, ") total-vm:");
    if (!close)
        close = find_last (end + 2, lim, ")");
    if (!close)
        return 0;
    escape_span (ev->tool, sizeof (ev->tool), end + 2, close);
    if (kb_field (close, lim, "anon-rss:", &anon)
        && kb_field (close, lim, "file-rss:", &file)
        && kb_field (close, lim, "shmem-rss:", &shmem))
        ev->rss_bytes = anon + file + shmem;
    if (p->have_oom && p->oom_pid == ev->pid) {
        snprintf (ev->memcg, sizeof (ev->memcg), "%s", p->oom_task_memcg);
        snprintf (ev->oom_memcg, sizeof (ev->oom_memcg), "%s", p->oom_memcg);
    }
    p->have_oom = false;
    ev->kind = TR_KMSG_OOM_KILL;
    return 1;
}

/* The kernel writes "NAME[PID]TAIL" with NAME the task's comm, which the
 * process chooses (prctl PR_SET_NAME): at most TASK_COMM_LEN - 1 bytes,
 * each written as up to four ("\xNN") in the log.  A name may itself
 * hold "x[1234]TAIL" to point at another user's process, but it comes
 * before the kernel's own "[PID]": the kernel's is the last "[PID]TAIL"
 * that opens within the name's longest span of NAME_START.
 */
#define COMM_SPAN (4 * 15)

static bool comm_pid (const char *name_start, const char *lim,
                      const char *tail, struct tr_kmsg_event *ev)
{
    const char *open = NULL;
    pid_t pid = 0;

    for (size_t k = 0; k <= COMM_SPAN && name_start + k < lim; k++) {
        const char *end;
        pid_t v;

        if (name_start[k] == '['
            && parse_pid (name_start + k + 1, lim, &v, &end)
            && starts (end, lim, tail)) {
            open = name_start + k;
            pid = v;
        }
    }
    if (!open)
        return false;
    ev->pid = pid;
    escape_span (ev->tool, sizeof (ev->tool), name_start, open);
    return true;
}

/* "NAME[PID]: segfault at ..." */
static int parse_segfault (const char *msg, const char *lim,
                           struct tr_kmsg_event *ev)
{
    if (!comm_pid (msg, lim, "]: segfault at ", ev))
        return 0;
    ev->kind = TR_KMSG_SEGFAULT;
    return 1;
}

/* "traps: NAME[PID] trap ..." or "traps: NAME[PID] general protection" */
static int parse_trap (const char *msg, const char *lim,
                       struct tr_kmsg_event *ev)
{
    if (!comm_pid (msg + 7, lim, "] ", ev))
        return 0;
    ev->kind = TR_KMSG_TRAP;
    return 1;
}

/* "INFO: task NAME:PID blocked for more than N seconds." */
static int parse_hung (const char *msg, const char *lim,
                       struct tr_kmsg_event *ev)
{
    const char *s = msg + 11;
    const char *b = find (s, lim, " blocked for more than ");
    const char *colon = NULL, *end;

    for (size_t k = b ? (size_t)(b - s) : 0; k > 0; k--)
        if (s[k - 1] == ':') {
            colon = s + k - 1;
            break;
        }
    if (!colon || !parse_pid (colon + 1, b, &ev->pid, &end) || end != b)
        return 0;
    escape_span (ev->tool, sizeof (ev->tool), s, colon);
    ev->kind = TR_KMSG_HUNG_TASK;
    return 1;
}

/* The word after key, up to ',', ' ' or the end, into buf. */
static bool word_after (const char *msg, const char *lim, const char *key,
                        char *buf, size_t size)
{
    const char *q = find (msg, lim, key), *e;

    if (!q)
        return false;
    q += strlen (key);
    for (e = q; e < lim && *e != ',' && *e != ' ' && *e != ':'; e++)
        ;
    if (e == q)
        return false;
    escape_span (buf, size, q, e);
    return true;
}

static int parse_io (const char *msg, const char *lim,
                     struct tr_kmsg_event *ev)
{
    if (find (msg, lim, "I/O error, dev "))
        (void)word_after (msg, lim, "I/O error, dev ", ev->device,
                          sizeof (ev->device));
    else if (find (msg, lim, "Buffer I/O error on dev "))
        (void)word_after (msg, lim, "Buffer I/O error on dev ", ev->device,
                          sizeof (ev->device));
    else if (find (msg, lim, "Buffer I/O error on device "))
        (void)word_after (msg, lim, "Buffer I/O error on device ",
                          ev->device, sizeof (ev->device));
    else
        return 0;
    ev->kind = TR_KMSG_IO_ERROR;
    return 1;
}

/* "nfs: server X not responding, still trying" / ", timed out" */
static int parse_nfs (const char *msg, const char *lim,
                      struct tr_kmsg_event *ev)
{
    const char *s = msg + 12;
    const char *e = find (s, lim, " not responding");

    if (!e || e == s)
        return 0;
    escape_span (ev->device, sizeof (ev->device), s, e);
    ev->kind = TR_KMSG_NFS;
    return 1;
}

/* "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, ..." */
static int parse_xid (const char *msg, const char *lim,
                      struct tr_kmsg_event *ev)
{
    const char *s = msg + 11;
    const char *close = find (s, lim, "): ");
    const char *p, *end;

    if (!close)
        return 0;
    escape_span (ev->device, sizeof (ev->device), s, close);
    if ((p = find (close, lim, ", pid=")) && parse_pid (p + 6, lim, &ev->pid,
                                                       &end)) {
        const char *n = find (end, lim, ", name=");
        if (n) {
            const char *ne = find (n + 7, lim, ", ");
            escape_span (ev->tool, sizeof (ev->tool), n + 7, ne ? ne : lim);
        }
    }
    ev->kind = TR_KMSG_GPU_XID;
    return 1;
}

/* The event with only its place in the log (seq, time) kept. */
static struct tr_kmsg_event *clean (struct tr_kmsg_event *ev)
{
    uint64_t seq = ev->seq, ts = ev->ts_usec;

    memset (ev, 0, sizeof (*ev));
    ev->rss_bytes = -1;
    ev->seq = seq;
    ev->ts_usec = ts;
    return ev;
}

int tr_kmsg_parse (tr_kmsg_parser_t *p, const char *buf, size_t len,
                   struct tr_kmsg_event *ev)
{
    const char *lim = buf + len, *q = buf, *msg, *nl;
    uint64_t pri, seq, ts;
    int rc;

    memset (ev, 0, sizeof (*ev));
    ev->rss_bytes = -1;
    if (!parse_u64 (q, lim, &pri, &q) || q >= lim || *q++ != ','
        || !parse_u64 (q, lim, &seq, &q) || q >= lim || *q++ != ','
        || !parse_u64 (q, lim, &ts, &q) || q >= lim || *q++ != ',') {
        errno = EINVAL;
        return -1;
    }
    msg = memchr (q, ';', (size_t)(lim - q));
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    msg++;
    /* the message ends at its newline; continuation lines follow */
    nl = memchr (msg, '\n', (size_t)(lim - msg));
    if (nl)
        lim = nl;
    /* only the kernel's own lines: facility 0 */
    if ((pri >> 3) != 0)
        return 0;
    ev->seq = seq;
    ev->ts_usec = ts;
    if (starts (msg, lim, "oom-kill:")) {
        parse_oom_kill (p, seq, msg, lim);
        return 0;
    }
    /* A process's name is in some of these lines: a name that holds
     * another kind's words ("Killed process ", "]: segfault at ") must
     * neither make its line another kind nor hide it, so each kind is
     * tried in turn, from a clean event, until one parses. */
    rc = 0;
    if (starts (msg, lim, "traps: "))
        rc = parse_trap (msg, lim, ev);
    if (!rc && find (msg, lim, "]: segfault at "))
        rc = parse_segfault (msg, lim, clean (ev));
    if (!rc && find (msg, lim, "Killed process "))
        rc = parse_killed (p, msg, lim, clean (ev));
    if (!rc && starts (msg, lim, "INFO: task "))
        rc = parse_hung (msg, lim, clean (ev));
    if (!rc && starts (msg, lim, "nfs: server "))
        rc = parse_nfs (msg, lim, clean (ev));
    if (!rc && starts (msg, lim, "NVRM: Xid ("))
        rc = parse_xid (msg, lim, clean (ev));
    if (!rc)
        rc = parse_io (msg, lim, clean (ev));
    if (rc <= 0) {
        memset (ev, 0, sizeof (*ev));
        ev->rss_bytes = -1;
        return 0;
    }
    ev->seq = seq;
    ev->ts_usec = ts;
    escape_text (ev->text, msg, lim);
    return 1;
}

int64_t tr_kmsg_unix_ms (uint64_t ts_usec, int64_t now_unix_ms,
                         uint64_t now_mono_usec)
{
    if (ts_usec > now_mono_usec)
        return now_unix_ms;
    return now_unix_ms - (int64_t)((now_mono_usec - ts_usec) / 1000);
}

bool tr_kmsg_cgroup_within (const char *memcg, const char *dir_rel)
{
    size_t n;

    if (!memcg || !dir_rel)
        return false;
    while (dir_rel[0] == '/' && dir_rel[1] == '/')
        dir_rel++;
    n = strlen (dir_rel);
    while (n > 1 && dir_rel[n - 1] == '/')
        n--;
    if (n == 0 || (n == 1 && dir_rel[0] == '/'))
        return false;
    return !strncmp (memcg, dir_rel, n)
           && (memcg[n] == '\0' || memcg[n] == '/');
}

bool tr_kmsg_concerns (const struct tr_kmsg_event *ev,
                       const struct tr_kmsg_step *st)
{
    if ((ev->memcg[0] || ev->oom_memcg[0])
        && ((st->memory_rel
             && (tr_kmsg_cgroup_within (ev->memcg, st->memory_rel)
                 || tr_kmsg_cgroup_within (ev->oom_memcg, st->memory_rel)))
            || (st->unified_rel
                && (tr_kmsg_cgroup_within (ev->memcg, st->unified_rel)
                    || tr_kmsg_cgroup_within (ev->oom_memcg,
                                              st->unified_rel)))))
        return true;
    if (ev->pid <= 0)
        return false;
    for (size_t i = 0; i < st->npids; i++)
        if (st->pids[i] == ev->pid)
            return true;
    for (size_t i = 0; i < st->ngone; i++)
        if (st->gone[i] == ev->pid)
            return true;
    return false;
}

const char *tr_kmsg_scope (const struct tr_kmsg_event *ev, bool concerns,
                           bool concerns_any)
{
    if (concerns)
        return "step";
    if (!concerns_any && tr_kmsg_kind_nodewide (ev->kind))
        return "node";
    return NULL;
}

json_t *tr_kmsg_event_json (const struct tr_kmsg_event *ev, const char *scope,
                            int64_t t_unix_ms)
{
    const char *kind = tr_kmsg_kind_name (ev->kind);
    json_t *o;

    if (!kind) {
        errno = EINVAL;
        return NULL;
    }
    o = json_pack ("{s:s, s:s, s:I, s:s}", "kind", kind, "scope", scope,
                   "t_unix_ms", (json_int_t)t_unix_ms, "text", ev->text);
    if (!o) {
        errno = ENOMEM;
        return NULL;
    }
    if ((ev->pid > 0
         && json_object_set_new (o, "pid", json_integer (ev->pid)) < 0)
        || (ev->tool[0]
            && json_object_set_new (o, "tool", json_string (ev->tool)) < 0)
        || (ev->rss_bytes >= 0
            && json_object_set_new (o, "rss_bytes",
                                    json_integer (ev->rss_bytes)) < 0)
        || (ev->device[0]
            && json_object_set_new (o, "device", json_string (ev->device))
                   < 0)) {
        json_decref (o);
        errno = ENOMEM;
        return NULL;
    }
    return o;
}

int tr_kmsg_events_add (json_t **events, const struct tr_kmsg_event *ev,
                        const char *scope, int64_t t_unix_ms,
                        unsigned *dropped)
{
    bool node = !strcmp (scope, "node");
    size_t nnode = 0, i;
    json_t *e, *o;

    if (*events) {
        json_array_foreach (*events, i, e) {
            if (!strcmp (json_string_value (json_object_get (e, "scope"))
                             ? json_string_value (json_object_get (e, "scope"))
                             : "",
                         "node"))
                nnode++;
            /* the same kernel line seen twice (a resumed daemon) */
            if (json_integer_value (json_object_get (e, "t_unix_ms"))
                    == t_unix_ms
                && !strcmp (json_string_value (json_object_get (e, "text")),
                            ev->text))
                return 0;
        }
        if (json_array_size (*events) >= TR_KMSG_STEP_EVENTS
            || (node && nnode >= TR_KMSG_STEP_NODE_EVENTS)) {
            if (dropped)
                (*dropped)++;
            return 0;
        }
    }
    if (!(o = tr_kmsg_event_json (ev, scope, t_unix_ms)))
        return -1;
    if (!*events && !(*events = json_array ())) {
        json_decref (o);
        errno = ENOMEM;
        return -1;
    }
    if (json_array_append_new (*events, o) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 1;
}
