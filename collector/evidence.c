/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's kernel evidence for records: the files the steps' processes
 * opened, read and wrote (eBPF, libtracer/node/bpffiles.h), and the
 * kernel log's lines about them (/dev/kmsg, libtracer/node/kmsg.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/node/bpffiles.h"
#include "libtracer/node/kmsg.h"
#include "libtracer/node/sampler.h"
#include "libtracer/record/when.h"

#include "tracerd.h"

/* File evidence from eBPF (sampling.ebpf, libtracer/node/bpffiles.h): each
 * step with a cgroup directory of its own is followed from before its
 * task is released (tracerd_evidence_sync, with the exit filter) to its record.
 */
static struct {
    tr_files_t *files; /* NULL: none, for the reason in why */
    char why[300];
} fe;

static void files_open (void)
{
    tr_error_t error = { 0 };

    if (d.conf->ebpf == TR_EBPF_OFF) {
        snprintf (fe.why, sizeof (fe.why), "turned off (sampling.ebpf: false)");
        tracerd_log (LOG_INFO, "file evidence: %s", fe.why);
        return;
    }
    if (!(fe.files = tr_files_open (d.conf->ebpf == TR_EBPF_ON, &error))) {
        snprintf (fe.why, sizeof (fe.why), "%s", error.text);
        tracerd_log (d.conf->ebpf == TR_EBPF_ON ? LOG_WARNING : LOG_INFO,
                     "file evidence: none in records (%s)", fe.why);
        return;
    }
    tracerd_log (LOG_INFO,
                 "file evidence: eBPF program loaded (%s: failed "
                 "opens, I/O errors, bytes per file of the steps' cgroups)",
                 tr_files_how (fe.files));
}

/* Follow each active step's cgroup directories; forget the others. */
void tracerd_evidence_sync (void)
{
    const char *keys[MAX_STEPS];
    size_t n = 0;

    if (!fe.files)
        return;
    for (int i = 0; i < d.nsteps; i++) {
        struct active *a = &d.steps[i];
        const char *dirs[] = { tr_step_cgroup2_dir (a->step),
                               tr_step_cgroup1_dir (a->step) };
        tr_error_t error = { 0 };

        keys[n++] = a->key;
        if (tr_files_watching (fe.files, a->key))
            continue;
        if (tr_files_watch (fe.files, a->key, dirs, 2, &error) < 0)
            tracerd_log (LOG_DEBUG, "step %s: no file evidence: %s", a->key,
                         error.text);
    }
    tr_files_retain (fe.files, keys, n);
}

/* The record's files member of step a. */
void tracerd_evidence_attach (struct active *a, json_t *rec)
{
    tr_error_t error = { 0 };
    json_t *m = NULL;

    if (fe.files && !(m = tr_files_step (fe.files, a->key, &error))
        && errno == ENOENT)
        m = tr_files_none ("the step has no cgroup directory of its own");
    else if (!fe.files)
        m = tr_files_none (fe.why);
    if (m)
        (void)json_object_set_new (rec, "files", m);
}

/* Kernel evidence: the kernel log (/dev/kmsg), read without blocking
 * from the poll loop, from its end at the start (only new lines), at
 * most KMSG_PER_WAKE records per wake.  A line about a process that is
 * no step's yet (its exit not offered yet) waits KMSG_HOLD_S for it.
 */
#define KMSG_PER_WAKE 64
#define KMSG_HOLD_S 3.0
#define KMSG_HELD_MAX 16
#define KMSG_RECENT_S 30.0
#define KMSG_RETRY_S 0.25

static struct {
    int fd;
    tr_kmsg_parser_t parser;
    uint64_t overwritten; /* records lost before tracerd read them */
    uint64_t attached, foreign;
    struct {
        struct tr_kmsg_event ev;
        int64_t t_unix_ms;
        double until;
    } held[KMSG_HELD_MAX];
    int nheld;
    double next_retry; /* held lines are offered again from then */
} kmsg = { .fd = -1 };

static void kmsg_open (void)
{
    if (kmsg.fd >= 0 || !d.conf->kernel_log)
        return;
    tr_kmsg_parser_init (&kmsg.parser);
    kmsg.fd = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (kmsg.fd < 0 || lseek (kmsg.fd, 0, SEEK_END) < 0) {
        tracerd_log (LOG_WARNING,
                     "kernel log /dev/kmsg unavailable (%s): no "
                     "kernel evidence (OOM kills, segfaults, I/O errors) in "
                     "records",
                     strerror (errno));
        if (kmsg.fd >= 0)
            close (kmsg.fd);
        kmsg.fd = -1;
        return;
    }
    tracerd_log (LOG_INFO, "reading kernel evidence from /dev/kmsg");
}

static void kmsg_close (void)
{
    if (kmsg.fd >= 0)
        close (kmsg.fd);
    kmsg.fd = -1;
    kmsg.nheld = 0;
}

/* Give ev to the steps it concerns (scope "step"); a node-wide kind that
 * concerns none goes to every running step (scope "node").  Returns
 * false when it concerns no step.
 */
static bool kmsg_offer (const struct tr_kmsg_event *ev, int64_t t_unix_ms)
{
    bool any = false;

    for (int i = 0; i < d.nsteps; i++) {
        tr_step_t *step = d.steps[i].step;
        /* also a step whose final reading is taken: its record is
         * built next (tracerd_steps_retire)
         */
        if (!tr_step_kmsg_concerns (step, ev, KMSG_RECENT_S))
            continue;
        any = true;
        if (tr_step_kmsg_add (step, ev, tr_kmsg_scope (ev, true, true),
                              t_unix_ms)
            > 0)
            tracerd_log (LOG_INFO, "step %s: kernel: %s", d.steps[i].key,
                         ev->text);
    }
    if (any || !tr_kmsg_scope (ev, false, false))
        return any;
    for (int i = 0; i < d.nsteps; i++)
        if (!tr_step_finished (d.steps[i].step))
            (void)tr_step_kmsg_add (d.steps[i].step, ev,
                                    tr_kmsg_scope (ev, false, false),
                                    t_unix_ms);
    return true;
}

/* Lines that waited for their process's exit: offered again, dropped
 * once their time is up (a process of no step: never attached).
 */
static void kmsg_retry (double now)
{
    int k = 0;

    for (int i = 0; i < kmsg.nheld; i++) {
        if (kmsg_offer (&kmsg.held[i].ev, kmsg.held[i].t_unix_ms))
            kmsg.attached++;
        else if (now < kmsg.held[i].until)
            kmsg.held[k++] = kmsg.held[i];
        else {
            kmsg.foreign++;
            tracerd_log (LOG_DEBUG, "kernel: of no step: %s",
                         kmsg.held[i].ev.text);
        }
    }
    kmsg.nheld = k;
}

void tracerd_evidence_read (void)
{
    char buf[TR_KMSG_LINE_MAX];
    struct tr_kmsg_event ev;
    struct timespec rt, mono;

    for (int n = 0; kmsg.fd >= 0 && n < KMSG_PER_WAKE; n++) {
        ssize_t len = read (kmsg.fd, buf, sizeof (buf));
        int64_t t;
        if (len < 0 && errno == EPIPE) {
            /* overwritten before we read them: count and go on */
            if (kmsg.overwritten++ % 100 == 0)
                tracerd_log (LOG_NOTICE,
                             "kernel log: lines overwritten before "
                             "tracerd read them (%llu times so far)",
                             (unsigned long long)kmsg.overwritten);
            continue;
        }
        if (len < 0 && errno == EINTR)
            continue;
        if (len < 0 && errno == EINVAL) {
            /* a record longer than the buffer (older kernels do not
             * move past it): skip to the end rather than spin
             */
            kmsg.overwritten++;
            (void)lseek (kmsg.fd, 0, SEEK_END);
            return;
        }
        if (len < 0) {
            if (errno != EAGAIN)
                tracerd_log (LOG_WARNING, "kernel log: %s", strerror (errno));
            return;
        }
        if (len == 0
            || tr_kmsg_parse (&kmsg.parser, buf, (size_t)len, &ev) <= 0)
            continue;
        clock_gettime (CLOCK_REALTIME, &rt);
        clock_gettime (CLOCK_MONOTONIC, &mono);
        t = tr_kmsg_unix_ms (ev.ts_usec,
                             (int64_t)rt.tv_sec * 1000 + rt.tv_nsec / 1000000,
                             (uint64_t)mono.tv_sec * 1000000
                                 + (uint64_t)mono.tv_nsec / 1000);
        if (kmsg_offer (&ev, t))
            kmsg.attached++;
        else if (ev.pid > 0 && kmsg.nheld < KMSG_HELD_MAX) {
            kmsg.held[kmsg.nheld].ev = ev;
            kmsg.held[kmsg.nheld].t_unix_ms = t;
            kmsg.held[kmsg.nheld].until = tr_when_monotonic () + KMSG_HOLD_S;
            kmsg.nheld++;
            tracerd_log (LOG_DEBUG, "kernel: waiting for its process: %s",
                         ev.text);
        }
        else
            kmsg.foreign++;
    }
}

/* Before a step's record: the kernel's lines logged so far are read,
 * and those that waited for their process's exit (offered by now) are
 * offered again.
 */
void tracerd_evidence_settle (void)
{
    if (kmsg.fd >= 0)
        tracerd_evidence_read ();
    if (kmsg.nheld > 0)
        kmsg_retry (tr_when_monotonic ());
}

void tracerd_evidence_open (void)
{
    files_open ();
    kmsg_open ();
}

/* kernel_log may have been turned on or off */
void tracerd_evidence_reload (void)
{
    if (!d.conf->kernel_log)
        kmsg_close ();
    else
        kmsg_open ();
}

void tracerd_evidence_close (void)
{
    tr_files_close (fe.files);
    kmsg_close ();
}

int tracerd_evidence_fd (double *wake)
{
    if (kmsg.nheld > 0 && *wake > kmsg.next_retry)
        *wake = kmsg.next_retry;
    return kmsg.fd;
}

/* Lines that wait for their process: its exit may be queued (at most
 * every KMSG_RETRY_S, and before a step's end is heard).
 */
void tracerd_evidence_retry (bool clients)
{
    if (kmsg.nheld > 0
        && (tr_when_monotonic () >= kmsg.next_retry || clients)) {
        tracerd_exits_drain ();
        kmsg_retry (tr_when_monotonic ());
        kmsg.next_retry = tr_when_monotonic () + KMSG_RETRY_S;
    }
}
