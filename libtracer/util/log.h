/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_LOG_H
#define TRACER_LOG_H

#include <stdarg.h>
#include <syslog.h>

/* Library debug/trace output.  Errors are never logged by the library
 * (they are returned); this is only for debug detail.  With no handler
 * installed nothing is written.  Priorities are syslog's LOG_*.
 */
typedef void (*tr_log_f) (int priority, const char *msg, void *arg);

void tr_log_set_handler (tr_log_f fn, void *arg);

void tr_log (int priority, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif /* !TRACER_LOG_H */
