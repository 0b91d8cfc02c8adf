/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's exit intake: process exits from the kernel (taskstats,
 * libtracer/node/taskstats.h), queued and offered to the active steps in
 * slices, and the kernel filter that keeps other jobs' exits out.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libtracer/node/sampler.h"
#include "libtracer/node/taskstats.h"
#include "libtracer/record/when.h"

#include "tracerd.h"

/* The kernel filter on process exits (tr_taskstats_filter_cgroups):
 * while every active step has a cgroup directory that holds all its
 * processes (filter_dir: its cgroup2 directory, else its v1 cpuacct or
 * memory one), the kernel drops every other exit before it is queued,
 * so other jobs' exits cost tracerd nothing.  A step without one (a
 * process tree or set), more than TR_TASKSTATS_FILTER_MAX directories,
 * or a refusal (no BPF, no kernel BTF for the v1 walk): no filter, every
 * exit delivered.  Widened before a new step's task is released (the
 * step_start reply), narrowed once a retired step's exits were drained;
 * with no step left the last filter stays (the next step sets its own
 * before its reply).
 */
static struct {
    bool on;       /* a filter is attached */
    bool said_off; /* "every exit delivered" logged since */
    char *dirs[TR_TASKSTATS_FILTER_MAX]; /* its directories, sorted */
    size_t n;
    bool refused;      /* the kernel refused it: said once */
    bool held;         /* tracerd_steps_resume: not all steps are back yet */
    uint64_t received; /* exit events delivered so far */
} xf;

uint64_t tracerd_exits_received (void)
{
    return xf.received;
}

static int cmp_dir (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

static void exit_filter_clear (void)
{
    for (size_t i = 0; i < xf.n; i++)
        free (xf.dirs[i]);
    xf.n = 0;
}

/* Remove the filter: every exit delivered again. */
static void exit_filter_off (const char *why)
{
    tr_error_t error;

    if (!xf.on) {
        if (!xf.said_off)
            tracerd_log (LOG_INFO,
                         "process exits: every exit on the node "
                         "delivered (%s)",
                         why);
        xf.said_off = true;
        return;
    }
    if (tr_taskstats_filter_cgroups (d.taskstats, NULL, 0, &error) < 0) {
        tracerd_log (LOG_ERR,
                     "process exits: %s; the filter stays, exits "
                     "outside the steps' directories are dropped",
                     tr_error_str (&error));
        return;
    }
    exit_filter_clear ();
    xf.on = false;
    xf.said_off = true;
    tracerd_log (LOG_INFO,
                 "process exits: every exit on the node delivered "
                 "(%s)",
                 why);
}

/* The directory whose exits a step needs: its cgroup2 one while every
 * task of it is known to be there, else the v1 one the scheduler put
 * every task in; NULL with why set when it has none.
 */
static const char *filter_dir (struct active *a, char *why, size_t size)
{
    const char *dir = tr_step_cgroup2_dir (a->step);

    if (dir && !a->unfiltered)
        return dir;
    if ((dir = tr_step_cgroup1_dir (a->step)))
        return dir;
    if (a->unfiltered)
        snprintf (why, size,
                  "step %s may have processes outside its "
                  "cgroup2 directory",
                  a->key);
    else
        snprintf (why, size, "step %s has no cgroup directory of its own",
                  a->key);
    return NULL;
}

void tracerd_exits_filter (void)
{
    const char *dirs[TR_TASKSTATS_FILTER_MAX];
    char why[700];
    size_t n = 0, k = 0;
    tr_error_t error;

    tracerd_evidence_sync ();
    if (!d.taskstats || xf.held || d.nsteps == 0)
        return;
    why[0] = '\0';
    for (int i = 0; i < d.nsteps && !why[0]; i++) {
        const char *dir = filter_dir (&d.steps[i], why, sizeof (why));
        if (!dir)
            break;
        else if (access (dir, F_OK) < 0 && errno == ENOENT)
            continue; /* removed, so empty: no exit of it is to come */
        else if (n == TR_TASKSTATS_FILTER_MAX)
            snprintf (why, sizeof (why),
                      "more than %d step cgroup "
                      "directories",
                      TR_TASKSTATS_FILTER_MAX);
        else
            dirs[n++] = dir;
    }
    if (why[0]) {
        exit_filter_off (why);
        return;
    }
    if (n == 0)
        return; /* as with no step */
    qsort (dirs, n, sizeof (dirs[0]), cmp_dir);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp (dirs[k - 1], dirs[i]))
            dirs[k++] = dirs[i];
    n = k;
    if (xf.on && n == xf.n) {
        size_t i = 0;
        while (i < n && !strcmp (dirs[i], xf.dirs[i]))
            i++;
        if (i == n)
            return;
    }
    if (tr_taskstats_filter_cgroups (d.taskstats, dirs, n, &error) < 0) {
        /* the old filter is still attached: it may not cover this step */
        tracerd_log (xf.refused ? LOG_DEBUG : LOG_WARNING,
                     "process exits: "
                     "kernel filter refused (%s); every exit on the node is "
                     "delivered",
                     tr_error_str (&error));
        xf.refused = true;
        exit_filter_off ("the kernel refused the filter");
        return;
    }
    tracerd_log (xf.on ? LOG_DEBUG : LOG_INFO,
                 "process exits: only those in "
                 "the steps' %zu cgroup directories delivered (kernel "
                 "filter)",
                 n);
    xf.on = true;
    xf.said_off = false;
    exit_filter_clear ();
    for (size_t i = 0; i < n; i++) {
        if (!(xf.dirs[i] = strdup (dirs[i]))) {
            /* not remembered: the next update loads it again */
            exit_filter_clear ();
            break;
        }
        xf.n = i + 1;
    }
}

/* Offer each process exit to the active steps; the first that knows
 * the process (or its parent) takes it.
 */
static void offer_exit (const struct tr_exit *ev)
{
    static bool said;

    xf.received++;
    for (int i = 0; i < d.nsteps; i++)
        if (tr_step_exit_event (d.steps[i].step, ev) == 1)
            return;
    /* no step knows it yet: held once, for the step whose scan finds
     * its parent next; one that cannot be held is lost to whichever
     * step it was, so every step counts it lost
     */
    if (d.exit_window && ev->aggr == TR_EXIT_PID
        && tr_exit_window_add (d.exit_window, ev) < 0) {
        if (!said)
            tracerd_log (LOG_WARNING, "process exits: no memory to hold "
                                      "one no step knows yet; counted as "
                                      "lost");
        said = true;
        for (int i = 0; i < d.nsteps; i++)
            tr_step_exits_lost (d.steps[i].step, 1);
    }
}

/* Exits read from the kernel wait here, in their order, until they are
 * offered: reading a batch is cheap, offering it to thousands of steps
 * is not, so the poll loop offers them in slices of at most
 * EXIT_SLICE_S and serves clients between slices.  The socket is read
 * again once fewer than EXIT_QUEUE_READ wait; beyond that the kernel
 * holds them (its overruns are counted as lost, as before).
 */
#define EXIT_SLICE_S 0.02
#define EXIT_QUEUE_READ 8192
#define EXIT_QUEUE_KEEP 1024 /* entries kept allocated once empty */

static struct {
    struct tr_exit *ev;
    size_t head, n, cap; /* waiting: ev[head .. n-1] */
} xq;

static void offer_queued (double budget);

static void on_exit_event (const struct tr_exit *ev, void *arg)
{
    (void)arg;
    if (xq.n == xq.cap && xq.head > 0) {
        memmove (xq.ev, xq.ev + xq.head, (xq.n - xq.head) * sizeof (*xq.ev));
        xq.n -= xq.head;
        xq.head = 0;
    }
    if (xq.n == xq.cap) {
        size_t cap = xq.cap ? xq.cap * 2 : 256;
        struct tr_exit *n = realloc (xq.ev, cap * sizeof (*n));
        if (!n) {
            /* no room: the waiting ones first, in order, then this one */
            offer_queued (-1);
            offer_exit (ev);
            return;
        }
        xq.ev = n;
        xq.cap = cap;
    }
    xq.ev[xq.n++] = *ev;
}

/* Offer waiting exits for at most budget seconds (all of them when
 * budget < 0).
 */
static void offer_queued (double budget)
{
    double t0 = budget >= 0 ? tr_when_monotonic () : 0;

    while (xq.head < xq.n) {
        if (budget >= 0 && tr_when_monotonic () - t0 >= budget)
            return;
        offer_exit (&xq.ev[xq.head++]);
    }
    xq.head = xq.n = 0;
    if (xq.cap > EXIT_QUEUE_KEEP) {
        free (xq.ev);
        xq.ev = NULL;
        xq.cap = 0;
    }
}

bool tracerd_exits_waiting (void)
{
    return xq.head < xq.n;
}

/* Read what the kernel reported into the queue.  Events lost to an
 * overrun could have been any step's: every running step is told.
 */
static uint64_t exits_lost; /* tr_taskstats_lost already passed on */

static void read_exits (void)
{
    uint64_t lost;

    (void)tr_taskstats_read (d.taskstats, on_exit_event, NULL);
    if ((lost = tr_taskstats_lost (d.taskstats)) > exits_lost) {
        tracerd_log (LOG_WARNING,
                     "%llu process exit events lost (receive "
                     "buffer overrun); the running steps' process tables are "
                     "marked incomplete",
                     (unsigned long long)(lost - exits_lost));
        for (int i = 0; i < d.nsteps; i++)
            tr_step_exits_lost (d.steps[i].step, lost - exits_lost);
        exits_lost = lost;
    }
}

/* Whether a process that just exec'd is in one of the steps' cgroups:
 * only those are remembered (tr_execs_note_exec).
 */
static int exec_wanted (pid_t pid, void *arg)
{
    struct tr_cgroup_paths pc;

    (void)arg;
    if (d.nsteps == 0 || tr_step_pid_cgroups (pid, &pc) < 0)
        return d.nsteps == 0 ? 0 : -1;
    for (int i = 0; i < d.nsteps; i++)
        if (tr_step_cgroup_holds (d.steps[i].step, &pc))
            return 1;
    return 0;
}

/* What each process of the steps was at its exec (execs.h), so that one
 * known only from its exit is named from its executable and arguments,
 * not from the comm it may have given itself.  Root only; without it a
 * short process is named from its comm, as before.
 */
void tracerd_execs_open (void)
{
    struct tr_execs_opts o = {
        .tool_subcommands = (const char *const *)d.conf->tool_subcommands,
        .tool_interpreters = (const char *const *)d.conf->tool_interpreters,
        .wanted = exec_wanted,
    };
    tr_error_t error;

    if (!d.taskstats)
        return; /* no exit records to name */
    if ((d.execs = tr_execs_open (&o, &error)))
        tracerd_log (LOG_INFO, "process execs: followed through the "
                               "process connector");
    else
        tracerd_log (LOG_WARNING,
                     "process execs: %s; a process shorter than an "
                     "interval is named from its comm",
                     tr_error_str (&error));
}

void tracerd_execs_close (void)
{
    tr_execs_close (d.execs);
    d.execs = NULL;
}

int tracerd_execs_fd (double now, double *wake)
{
    return tr_execs_poll_fd (d.execs, now, wake);
}

/* Take the exec events that came: always before exits are offered, as
 * a process's exec comes before its exit.
 */
void tracerd_execs_read (void)
{
    static uint64_t said;
    uint64_t lost;

    if (!d.execs)
        return;
    if (tr_execs_read (d.execs) < 0)
        tracerd_log (LOG_DEBUG, "process execs: %s", strerror (errno));
    if ((lost = tr_execs_lost (d.execs)) > said) {
        tracerd_log (LOG_WARNING, "process execs: the kernel dropped events "
                                  "(receive "
                                  "buffer overrun); processes that exec'd then "
                                  "are "
                                  "named from their comm");
        said = lost;
    }
}

/* Take every process exit the kernel reported so far: before a step's
 * final reading, all its exits must have been offered.
 */
void tracerd_exits_drain (void)
{
    if (!d.taskstats)
        return;
    tracerd_execs_read ();
    read_exits ();
    offer_queued (-1);
}

/* The poll loop's share: read when the queue is short, then offer for
 * at most EXIT_SLICE_S.
 */
void tracerd_exits_slice (bool readable)
{
    if (!d.taskstats)
        return;
    tracerd_execs_read ();
    if (readable && xq.n - xq.head < EXIT_QUEUE_READ)
        read_exits ();
    offer_queued (EXIT_SLICE_S);
}

void tracerd_exits_hold (bool held)
{
    xf.held = held;
}

/* Exits are read in batches (tr_taskstats_poll_fd); while some wait,
 * they are offered in slices, and clients are served in between.
 */
int tracerd_exits_poll_fd (double now, double *wake)
{
    int fd = tr_taskstats_poll_fd (d.taskstats, now, wake);

    if (tracerd_exits_waiting ()) {
        *wake = now;
        if (xq.n - xq.head >= EXIT_QUEUE_READ)
            fd = -1;
    }
    return fd;
}
