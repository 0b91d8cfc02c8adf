/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
/* No progress of a running step (progress.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"

bool tr_progress_feed (struct tr_progress *p, double t_mono, int64_t t_unix_ms,
                       double cpu_s, uint64_t io_bytes, double after_s)
{
    double idle;
    bool moved;

    if (!p->have) {
        memset (p, 0, sizeof (*p));
        p->have = true;
        p->cpu_s = cpu_s;
        p->io_bytes = io_bytes;
        p->last_mono = p->since_mono = p->moved_mono = t_mono;
        p->since_unix_ms = p->moved_unix_ms = t_unix_ms;
        return false;
    }
    /* counters that went back (a restart, a process's counters gone
     * with it) are no progress, and the new values are the base
     */
    moved = cpu_s - p->cpu_s
                > TR_PROGRESS_CPU_RATE * (t_mono - p->since_mono)
                      + TR_PROGRESS_CPU_SLACK_S
            || io_bytes > p->io_bytes;
    p->last_mono = t_mono;
    if (!moved) {
        if (cpu_s < p->cpu_s)
            p->cpu_s = cpu_s;
        if (io_bytes < p->io_bytes)
            p->io_bytes = io_bytes;
        return true;
    }
    /* the stretch that ends here, if it was a stall */
    idle = p->last_mono - p->since_mono;
    if (after_s > 0 && idle >= after_s) {
        p->stall_s = idle;
        p->stall_since_unix_ms = p->since_unix_ms;
    }
    p->cpu_s = cpu_s;
    p->io_bytes = io_bytes;
    p->since_mono = p->moved_mono = t_mono;
    p->since_unix_ms = p->moved_unix_ms = t_unix_ms;
    return false;
}

void tr_progress_touch (struct tr_progress *p, double t_mono,
                        int64_t t_unix_ms)
{
    if (!p->have || !(t_mono > p->since_mono))
        return;
    if (t_mono > p->last_mono) {
        t_unix_ms -= (int64_t)((t_mono - p->last_mono) * 1000.0);
        t_mono = p->last_mono;
    }
    p->since_mono = t_mono;
    p->since_unix_ms = t_unix_ms;
}

bool tr_progress_launcher (const char *tool)
{
    static const char *const launchers[] = {
        "srun",    "mpirun",  "mpiexec", "mpiexec.hydra",
        "orterun", "prterun", NULL,
    };

    for (size_t i = 0; tool && launchers[i]; i++)
        if (!strcmp (tool, launchers[i]))
            return true;
    return false;
}

bool tr_progress_applies (const char *step_id)
{
    return !step_id
           || (strcmp (step_id, "extern") && strcmp (step_id, "interactive"));
}

double tr_progress_idle_s (const struct tr_progress *p)
{
    return p->have ? p->last_mono - p->since_mono : 0;
}

bool tr_progress_stalled (const struct tr_progress *p, double after_s)
{
    return p->have && after_s > 0 && tr_progress_idle_s (p) >= after_s;
}

json_t *tr_progress_json (const struct tr_progress *p, double after_s,
                          json_t *procs)
{
    bool now = tr_progress_stalled (p, after_s);
    json_t *o;

    if (!p->have || after_s <= 0)
        return NULL;
    if (!(o = json_pack ("{s:b}", "stalled", now)))
        return NULL;
    if (now || p->stall_s > 0) {
        if (json_object_set_new (o, "stalled_s",
                                 json_real (now ? tr_progress_idle_s (p)
                                                : p->stall_s)) < 0
            || json_object_set_new (o, "since_unix_ms",
                                    json_integer (now ? p->since_unix_ms
                                                      : p->stall_since_unix_ms))
                   < 0) {
            json_decref (o);
            return NULL;
        }
    }
    if (now && procs && json_array_size (procs) > 0
        && json_object_set (o, "processes", procs) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

int tr_progress_parse_stat (const char *text, char *state, char *comm,
                            size_t size)
{
    const char *open = strchr (text, '('), *close = strrchr (text, ')');
    size_t n;

    if (!open || !close || close < open || close[1] != ' ' || !close[2]
        || close[2] == ' ' || size == 0) {
        errno = EINVAL;
        return -1;
    }
    n = (size_t)(close - open - 1);
    if (n >= size)
        n = size - 1;
    memcpy (comm, open + 1, n);
    comm[n] = '\0';
    state[0] = close[2];
    state[1] = '\0';
    return 0;
}

/* Read a small /proc file into buf; its length, or -1. */
static ssize_t read_small (const char *path, char *buf, size_t size)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read (fd, buf, size - 1);
    close (fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

json_t *tr_progress_proc_json (const char *procdir, pid_t pid)
{
    char path[256], text[1024], state[2], comm[64], printable[64];
    json_t *o;
    size_t j = 0;

    snprintf (path, sizeof (path), "%s/%d/stat", procdir, (int)pid);
    if (read_small (path, text, sizeof (text)) < 0
        || tr_progress_parse_stat (text, state, comm, sizeof (comm)) < 0)
        return NULL;
    /* comm is the process's to choose: printable ASCII only */
    for (const char *c = comm; *c && j + 1 < sizeof (printable); c++)
        printable[j++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
    printable[j] = '\0';
    if (!(o = json_pack ("{s:s, s:i, s:s}", "tool", printable, "pid",
                         (int)pid, "state", state)))
        return NULL;
    snprintf (path, sizeof (path), "%s/%d/wchan", procdir, (int)pid);
    if (read_small (path, text, 128) > 0) {
        size_t k = strcspn (text, "\n");
        bool ok = k > 0;
        text[k] = '\0';
        for (size_t i = 0; i < k; i++)
            ok = ok && ((text[i] >= 'a' && text[i] <= 'z')
                        || (text[i] >= 'A' && text[i] <= 'Z')
                        || (text[i] >= '0' && text[i] <= '9')
                        || text[i] == '_' || text[i] == '.');
        if (ok && json_object_set_new (o, "wchan", json_string (text)) < 0) {
            json_decref (o);
            return NULL;
        }
    }
    return o;
}

json_t *tr_progress_procs (const char *procdir, const pid_t *pids, size_t n)
{
    json_t *a = json_array ();

    for (size_t i = 0; a && i < n && json_array_size (a) < TR_PROGRESS_PROCS_MAX;
         i++) {
        json_t *o = tr_progress_proc_json (procdir, pids[i]);
        if (o && json_array_append_new (a, o) < 0) {
            json_decref (a);
            return NULL;
        }
    }
    return a;
}
