/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A handler-based log sink for library debug output (see log.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "log.h"

static tr_log_f log_fn;
static void *log_arg;

void tr_log_set_handler (tr_log_f fn, void *arg)
{
    log_fn = fn;
    log_arg = arg;
}

void tr_log (int priority, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int saved = errno;

    if (!log_fn)
        return;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    log_fn (priority, buf, log_arg);
    errno = saved;
}
