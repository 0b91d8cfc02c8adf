/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The node's evidence sources, probed as tracerd opens them (sources.h),
 * for tracerd --check-config and tracerd's start-up log.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "execs.h"
#include "gpu.h"
#include "sources.h"
#include "taskstats.h"

bool tr_sources_in_service (void)
{
    char buf[4096];
    ssize_t n;
    int fd;

    if (getenv ("INVOCATION_ID") && *getenv ("INVOCATION_ID"))
        return true;
    if ((fd = open ("/proc/self/cgroup", O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read (fd, buf, sizeof (buf) - 1);
    close (fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strstr (buf, ".service\n") != NULL;
}

static void set (struct tr_source *s,
                 const char *name,
                 enum tr_source_state state,
                 const char *fmt,
                 ...) __attribute__ ((format (printf, 4, 5)));

static void set (struct tr_source *s,
                 const char *name,
                 enum tr_source_state state,
                 const char *fmt,
                 ...)
{
    va_list ap;

    s->name = name;
    s->state = state;
    va_start (ap, fmt);
    vsnprintf (s->why, sizeof (s->why), fmt, ap);
    va_end (ap);
}

/* /dev/kmsg as tracerd opens it.  Under systemd, ProtectKernelLogs=
 * takes the device node away (ENOENT, or ENXIO where a private /dev
 * keeps a node without its driver) and CAP_SYSLOG (EPERM).
 */
static void kernel_log (const tr_conf_t *conf, struct tr_source *s)
{
    static const char *const name = "kernel log /dev/kmsg";
    int fd;

    if (!conf->kernel_log) {
        set (s, name, TR_SOURCE_OFF, "sampling.kernel_log: false");
        return;
    }
    fd = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        close (fd);
        set (s, name, TR_SOURCE_AVAILABLE,
             "OOM victims, segfaults and traps, hung tasks, I/O, NFS and "
             "GPU errors");
        return;
    }
    if ((errno == ENOENT || errno == ENXIO || errno == EPERM || errno == EACCES)
        && tr_sources_in_service ())
        set (s, name, TR_SOURCE_SANDBOXED,
             "%s: hidden by the service's sandbox (systemd "
             "ProtectKernelLogs=yes): no kernel evidence in records",
             strerror (errno));
    else
        set (s, name, TR_SOURCE_UNAVAILABLE,
             "%s: no kernel evidence in records", strerror (errno));
}

static void taskstats (const tr_conf_t *conf, struct tr_source *s)
{
    static const char *const name = "taskstats";
    tr_taskstats_t *ts;
    tr_error_t error;

    memset (&error, 0, sizeof (error));
    if (!conf->taskstats) {
        set (s, name, TR_SOURCE_OFF, "sampling.taskstats: false");
        return;
    }
    if (!(ts = tr_taskstats_open (&error))) {
        set (s, name, TR_SOURCE_UNAVAILABLE,
             "%s: processes that end between samples are not counted",
             tr_error_str (&error));
        return;
    }
    tr_taskstats_close (ts);
    set (s, name, TR_SOURCE_AVAILABLE, "every process's exit, exactly");
}

/* The kernel's process connector, as tracerd opens it (execs.h). */
static void execs (const tr_conf_t *conf, struct tr_source *s)
{
    static const char *const name = "process execs (process connector)";
    tr_execs_t *e;
    tr_error_t error;

    memset (&error, 0, sizeof (error));
    if (!conf->taskstats) {
        set (s, name, TR_SOURCE_OFF,
             "sampling.taskstats: false (no exits to name)");
        return;
    }
    if (!(e = tr_execs_open (NULL, &error))) {
        set (s, name, TR_SOURCE_UNAVAILABLE,
             "%s: a process that ends between samples is named from the "
             "comm it chose",
             tr_error_str (&error));
        return;
    }
    tr_execs_close (e);
    set (s, name, TR_SOURCE_AVAILABLE,
         "every process named from its executable and arguments");
}

static void pressure (struct tr_source *s)
{
    static const char *const name = "pressure (PSI)";

    if (access ("/proc/pressure/cpu", R_OK) == 0)
        set (s, name, TR_SOURCE_AVAILABLE, "CPU, memory and I/O stall");
    else
        set (s, name, TR_SOURCE_UNAVAILABLE,
             "/proc/pressure: %s (kernel without PSI, or psi=0)",
             strerror (errno));
}

static void files (const tr_conf_t *conf, struct tr_source *s)
{
    static const char *const name = "file evidence (eBPF)";

#ifdef HAVE_EBPF
    if (conf->ebpf == TR_EBPF_OFF)
        set (s, name, TR_SOURCE_OFF, "sampling.ebpf: false");
    else if (access ("/sys/kernel/btf/vmlinux", R_OK) < 0)
        set (s, name, TR_SOURCE_UNAVAILABLE,
             "/sys/kernel/btf/vmlinux: %s: no failed opens or I/O errors "
             "per file",
             strerror (errno));
    else
        set (s, name, TR_SOURCE_AVAILABLE,
             "built in; whether the kernel loads its programs is logged "
             "at start");
#else
    (void)conf;
    set (s, name, TR_SOURCE_UNAVAILABLE,
         "not built in (configure --enable-ebpf)");
#endif
}

static void gpus (const tr_conf_t *conf, struct tr_source *s)
{
    static const char *const name = "GPUs (NVML)";
    tr_gpu_t *gpu;
    tr_error_t error;

    if (!conf->gpu) {
        set (s, name, TR_SOURCE_OFF, "sampling.gpu: false");
        return;
    }
    memset (&error, 0, sizeof (error));
    if (!(gpu = tr_gpu_open (conf->nvml_library, &error))) {
        if (errno == ENOENT)
            set (s, name, TR_SOURCE_UNAVAILABLE,
                 "no NVML library: no GPU figures");
        else
            set (s, name, TR_SOURCE_UNAVAILABLE, "%s", tr_error_str (&error));
        return;
    }
    tr_gpu_close (gpu);
    set (s, name, TR_SOURCE_AVAILABLE, "per-process GPU use");
}

static void mailer (const tr_conf_t *conf, struct tr_source *s)
{
    static const char *const name = "stall mail";
    const char *p = conf->mail.sendmail;

    if (!conf->mail.on_stall)
        set (s, name, TR_SOURCE_OFF, "mail.on_stall: false");
    else if (!p || access (p, X_OK) < 0)
        set (s, name, TR_SOURCE_UNAVAILABLE, "mail.sendmail %s: cannot run it",
             p ? p : "(none)");
    else
        set (s, name, TR_SOURCE_AVAILABLE, "through %s", p);
}

int tr_sources_probe (const tr_conf_t *conf, struct tr_source *out)
{
    int n = 0;

    kernel_log (conf, &out[n++]);
    taskstats (conf, &out[n++]);
    execs (conf, &out[n++]);
    pressure (&out[n++]);
    files (conf, &out[n++]);
    gpus (conf, &out[n++]);
    mailer (conf, &out[n++]);
    return n;
}

const char *tr_sources_word (enum tr_source_state state)
{
    static const char *const words[] = {
        [TR_SOURCE_AVAILABLE] = "available",
        [TR_SOURCE_OFF] = "off",
        [TR_SOURCE_UNAVAILABLE] = "unavailable",
        [TR_SOURCE_SANDBOXED] = "lost to the service's sandbox",
    };

    return (unsigned)state < sizeof (words) / sizeof (words[0]) ? words[state]
                                                                : "?";
}

int tr_sources_describe (const struct tr_source *s, int n, tr_strbuf_t *sb)
{
    for (int i = 0; i < n; i++)
        if (tr_strbuf_printf (sb, "evidence: %s: %s%s (%s)\n", s[i].name,
                              s[i].state == TR_SOURCE_SANDBOXED ? "WARNING: "
                                                                : "",
                              tr_sources_word (s[i].state), s[i].why)
            < 0)
            return -1;
    return 0;
}
