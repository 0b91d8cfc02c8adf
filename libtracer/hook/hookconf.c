/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Parsing of hook settings (plugstack.conf arguments) and of the user's
 * --tracer=SPEC.  SPEC arrives from any user and is later placed into a
 * record, mails and HTML, so its grammar is narrow: tag keys are
 * identifiers and values are printable ASCII without separators.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hookconf.h"

/* Copy at most 64 bytes of untrusted text for an error message, with
 * anything but printable ASCII replaced, so nothing a user typed can
 * forge or break a log line.
 */
static const char *shown (char buf[65], const char *s, size_t n)
{
    size_t m = n > 64 ? 64 : n;

    for (size_t i = 0; i < m; i++)
        buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    buf[m] = '\0';
    return buf;
}

void tr_hookconf_init (struct tr_hookconf *conf)
{
    memset (conf, 0, sizeof (*conf));
    conf->enable = TR_ENABLE_OPTIN;
    conf->allow_optout = true;
    conf->trace_extern = true;
    snprintf (conf->socket, sizeof (conf->socket), "%s",
              TR_HOOK_DEFAULT_SOCKET);
    conf->timeout_ms = TR_HOOK_DEFAULT_TIMEOUT_MS;
}

static int parse_bool (const char *v, bool *out)
{
    if (!strcmp (v, "yes") || !strcmp (v, "true") || !strcmp (v, "1"))
        *out = true;
    else if (!strcmp (v, "no") || !strcmp (v, "false") || !strcmp (v, "0"))
        *out = false;
    else
        return -1;
    return 0;
}

bool tr_interval_ok (double s)
{
    return isfinite (s) && s >= TR_INTERVAL_MIN && s <= TR_INTERVAL_MAX;
}

double tr_interval_or (double requested, double dflt)
{
    return tr_interval_ok (requested) ? requested : dflt;
}

/* A plain decimal number of seconds within the interval bounds (strtod
 * alone would also take hex floats, "inf" and "nan").
 */
static int parse_seconds (const char *v, double *out)
{
    char *end;
    double d;

    if (!*v || strspn (v, "0123456789+-.eE") != strlen (v))
        return -1;
    errno = 0;
    d = strtod (v, &end);
    if (errno || end == v || *end || !tr_interval_ok (d))
        return -1;
    *out = d;
    return 0;
}

int tr_hookconf_parse_args (struct tr_hookconf *conf,
                            int ac,
                            char **av,
                            tr_error_t *error)
{
    struct tr_hookconf c = *conf;

    for (int i = 0; i < ac; i++) {
        const char *arg = av[i];
        const char *eq = strchr (arg, '=');
        const char *v;
        size_t klen;

        if (!eq) {
            char b[65];
            errno = EINVAL;
            return tr_errprintf (error, "argument '%s': expected key=value",
                                 shown (b, arg, strlen (arg)));
        }
        klen = (size_t)(eq - arg);
        v = eq + 1;
        if (klen == 6 && !strncmp (arg, "enable", klen)) {
            if (!strcmp (v, "all"))
                c.enable = TR_ENABLE_ALL;
            else if (!strcmp (v, "optin"))
                c.enable = TR_ENABLE_OPTIN;
            else
                goto badval;
        }
        else if (klen == 12 && !strncmp (arg, "allow_optout", klen)) {
            if (parse_bool (v, &c.allow_optout) < 0)
                goto badval;
        }
        else if (klen == 6 && !strncmp (arg, "socket", klen)) {
            int n;
            if (v[0] != '/')
                goto badval;
            n = snprintf (c.socket, sizeof (c.socket), "%s", v);
            if (n < 0 || (size_t)n >= sizeof (c.socket))
                goto badval;
        }
        else if (klen == 7 && !strncmp (arg, "timeout", klen)) {
            char *end;
            long ms;
            errno = 0;
            ms = strtol (v, &end, 10);
            if (errno || end == v || *end || ms < 1 || ms > 30000)
                goto badval;
            c.timeout_ms = (int)ms;
        }
        else if (klen == 6 && !strncmp (arg, "extern", klen)) {
            if (parse_bool (v, &c.trace_extern) < 0)
                goto badval;
        }
        else if (klen == 8 && !strncmp (arg, "interval", klen)) {
            if (parse_seconds (v, &c.interval_s) < 0)
                goto badval;
        }
        else {
            char b[65];
            errno = EINVAL;
            return tr_errprintf (error, "unknown argument '%s'",
                                 shown (b, arg, klen));
        }
        continue;
badval:
        {
            char b[65];
            errno = EINVAL;
            return tr_errprintf (error, "argument '%s': invalid value",
                                 shown (b, arg, strlen (arg)));
        }
    }
    *conf = c;
    return 0;
}

static bool tag_key_ok (const char *s, size_t n)
{
    if (n < 1 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

static bool tag_value_ok (const char *s, size_t n)
{
    if (n > 256)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        /* printable ASCII; no shell or markup specials worth carrying */
        if (c < 0x21 || c > 0x7e || c == '\'' || c == '"' || c == '\\'
            || c == '`' || c == '$' || c == '<' || c == '>' || c == '&'
            || c == ';' || c == '|')
            return false;
    }
    return true;
}

static int add_tag (json_t *tags, const char *item, size_t n,
                    tr_error_t *error)
{
    const char *colon = memchr (item, ':', n);
    char key[65], val[257], b[65];
    size_t klen, vlen;
    json_t *s;

    if (!colon)
        return tr_errprintf (error, "tag '%s': expected KEY:VALUE",
                             shown (b, item, n));
    klen = (size_t)(colon - item);
    vlen = n - klen - 1;
    if (!tag_key_ok (item, klen))
        return tr_errprintf (error,
                             "tag key '%s': use 1-64 of A-Z a-z 0-9 _ . -",
                             shown (b, item, klen));
    if (!tag_value_ok (colon + 1, vlen))
        return tr_errprintf (error,
                             "tag '%s': value must be 0-256 printable "
                             "characters without quotes or shell specials",
                             shown (b, item, klen));
    if (json_object_size (tags) >= 64)
        return tr_errprintf (error, "too many tags (at most 64)");
    memcpy (key, item, klen);
    key[klen] = '\0';
    memcpy (val, colon + 1, vlen);
    val[vlen] = '\0';
    if (!(s = json_string (val)) || json_object_set_new (tags, key, s) < 0)
        return tr_errprintf (error, "out of memory");
    return 0;
}

int tr_spec_parse (const char *spec, struct tr_spec *out, tr_error_t *error)
{
    struct tr_spec r = { .state = -1, .interval_s = 0, .tags = NULL };
    const char *p;
    bool in_tags = false;

    if (!(r.tags = json_object ()))
        return tr_errprintf (error, "out of memory");
    if (!spec || !*spec) {
        r.state = 1;
        goto done;
    }
    if (strlen (spec) > TR_SPEC_MAX) {
        tr_errprintf (error, "specification longer than %d bytes",
                      TR_SPEC_MAX);
        goto fail;
    }
    p = spec;
    while (1) {
        const char *comma = strchr (p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen (p);

        if (n == 2 && !strncmp (p, "on", 2)) {
            r.state = 1;
            in_tags = false;
        }
        else if (n == 3 && !strncmp (p, "off", 3)) {
            r.state = 0;
            in_tags = false;
        }
        else if (n > 9 && !strncmp (p, "interval=", 9)) {
            char buf[32], b[65];
            if (n - 9 >= sizeof (buf)
                || (memcpy (buf, p + 9, n - 9), buf[n - 9] = '\0',
                    parse_seconds (buf, &r.interval_s) < 0)) {
                tr_errprintf (error, "interval: expected seconds in "
                              "[0.1, 3600], got '%s'",
                              shown (b, p + 9, n - 9));
                goto fail;
            }
            in_tags = false;
        }
        else if (n >= 4 && !strncmp (p, "tag=", 4)) {
            if (add_tag (r.tags, p + 4, n - 4, error) < 0)
                goto fail;
            in_tags = true;
        }
        else if (in_tags && n > 0 && memchr (p, ':', n)
                 && !memchr (p, '=', n)) {
            if (add_tag (r.tags, p, n, error) < 0)
                goto fail;
        }
        else {
            char b[65];
            tr_errprintf (error, "unknown item '%s' (expected on, off, "
                          "interval=SECONDS or tag=KEY:VALUE)",
                          shown (b, p, n));
            goto fail;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (r.state < 0)
        r.state = 1;  /* giving settings implies "on" */
done:
    *out = r;
    return 0;
fail:
    json_decref (r.tags);
    errno = EINVAL;
    return -1;
}

void tr_spec_release (struct tr_spec *spec)
{
    if (spec) {
        json_decref (spec->tags);
        spec->tags = NULL;
    }
}

bool tr_spec_enabled (const struct tr_hookconf *conf,
                      const struct tr_spec *spec)
{
    int state = spec ? spec->state : -1;

    if (conf->enable == TR_ENABLE_ALL)
        return !(state == 0 && conf->allow_optout);
    return state == 1;
}
