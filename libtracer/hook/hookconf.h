/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_HOOKCONF_H
#define TRACER_HOOKCONF_H

#include <stdbool.h>
#include <jansson.h>

#include "libtracer/util/error.h"

/* Settings of a scheduler hook, from plugstack.conf arguments
 * ("key=value" words), and the user's --tracer=SPEC.  Both are untrusted
 * input (SPEC comes from any user): every key is allow-listed and every
 * length bounded.  Depends on jansson only (linked into the SPANK plugin).
 */
enum tr_enable {
    TR_ENABLE_OPTIN = 0,   /* trace only jobs that ask (--tracer) */
    TR_ENABLE_ALL = 1,     /* trace every job (unless opted out) */
};

#define TR_HOOK_DEFAULT_SOCKET "/run/tracer/tracerd.sock"
#define TR_HOOK_DEFAULT_TIMEOUT_MS 1000
#define TR_SPEC_MAX 1024

/* Bounds of a sampling interval in seconds, wherever one is given:
 * sampling.interval, interval= of plugstack.conf and of --tracer=SPEC,
 * tracer-run --interval, and the "interval_s" of a step_start message.
 * Below 0.1 s a step's /proc and cgroup reads would take a core of
 * their own; above an hour a step would have a handful of samples.
 */
#define TR_INTERVAL_MIN 0.1
#define TR_INTERVAL_MAX 3600.0

/* Is s a sampling interval within those bounds (and finite)? */
bool tr_interval_ok (double s);

/* The interval a step is sampled at: requested when it is within the
 * bounds, else dflt (the daemon's own; 0 or a bad value is "not asked
 * for": the one who asked may be the job's user, who must not be able
 * to make the daemon spin).
 */
double tr_interval_or (double requested, double dflt);

struct tr_hookconf {
    enum tr_enable enable;   /* enable=all|optin (default optin) */
    bool allow_optout;       /* allow_optout=yes|no (default yes) */
    char socket[108];        /* socket=PATH (absolute) */
    int timeout_ms;          /* timeout=MS, 1..30000 (default 1000) */
    double interval_s;       /* interval=SECONDS, 0 = daemon default */
    bool trace_extern;       /* extern=yes|no (default yes) */
};

/* Defaults, then apply plugstack arguments av[0..ac-1].  Unknown keys,
 * missing '=' and bad values fail with a message naming the argument.
 */
void tr_hookconf_init (struct tr_hookconf *conf);
int tr_hookconf_parse_args (struct tr_hookconf *conf,
                            int ac,
                            char **av,
                            tr_error_t *error);

/* A parsed --tracer=SPEC: comma-separated items
 *   on | off | interval=SECONDS | tag=KEY:VALUE[,KEY:VALUE...]
 * An empty SPEC (plain --tracer) means "on".
 */
struct tr_spec {
    int state;             /* -1 not given, 0 off, 1 on */
    double interval_s;     /* 0 = not given; else 0.1 .. 3600 */
    json_t *tags;          /* object KEY -> VALUE (new reference) */
};

/* Parse spec (NULL or "" = on).  On success out->tags is a new reference
 * that the caller releases with tr_spec_release().  On failure out is
 * untouched.
 */
int tr_spec_parse (const char *spec, struct tr_spec *out, tr_error_t *error);
void tr_spec_release (struct tr_spec *spec);

/* Whether a job is traced given the site settings and the user's spec. */
bool tr_spec_enabled (const struct tr_hookconf *conf,
                      const struct tr_spec *spec);

#endif /* !TRACER_HOOKCONF_H */
