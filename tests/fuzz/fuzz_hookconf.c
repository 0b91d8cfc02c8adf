/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The scheduler hook's option parsers (hookconf.h), which run inside
 * slurmstepd: plugstack.conf arguments, and --tracer=SPEC, which any
 * user types.  The input is split into argument words at NUL and
 * newline bytes for tr_hookconf_parse_args, and given whole (up to its
 * first NUL) to tr_spec_parse.  Beyond the sanitizers, the results must
 * keep the bounds hookconf.h promises, and a failure must leave its
 * output as it was.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "libtracer/util/error.h"
#include "libtracer/hook/hookconf.h"
#include "fuzz.h"

/* plugstack.conf lines are short; more words than this are not tried */
#define MAX_WORDS 64

static bool interval_ok (double s)
{
    return s == 0 || (s >= 0.1 && s <= 3600);
}

static bool conf_ok (const struct tr_hookconf *c)
{
    return (c->enable == TR_ENABLE_OPTIN || c->enable == TR_ENABLE_ALL)
           && memchr (c->socket, '\0', sizeof (c->socket))
           && c->socket[0] == '/' && c->timeout_ms >= 1
           && c->timeout_ms <= 30000 && interval_ok (c->interval_s);
}

/* Tags as the record, mails and HTML expect them (hookconf.c). */
static bool tags_ok (json_t *tags)
{
    const char *key;
    json_t *v;

    if (!json_is_object (tags) || json_object_size (tags) > 64)
        return false;
    json_object_foreach (tags, key, v)
    {
        const char *s = json_string_value (v);
        size_t klen = strlen (key);

        if (!s || klen < 1 || klen > 64 || strlen (s) > 256)
            return false;
        for (; *s; s++)
            if (*s < 0x21 || *s > 0x7e)
                return false;
    }
    return true;
}

static void fuzz_args (char *words, size_t len)
{
    struct tr_hookconf conf, before;
    char *av[MAX_WORDS];
    tr_error_t err;
    int ac = 0;
    size_t start = 0;

    /* words[len] is '\0': every word ends at a NUL or a newline */
    for (size_t i = 0; i <= len && ac < MAX_WORDS; i++) {
        if (words[i] == '\n' || words[i] == '\0') {
            words[i] = '\0';
            if (i > start)
                av[ac++] = words + start;
            start = i + 1;
        }
    }
    tr_hookconf_init (&conf);
    memcpy (&before, &conf, sizeof (before)); /* padding too */
    memset (&err, 0, sizeof (err));
    if (tr_hookconf_parse_args (&conf, ac, av, &err) < 0) {
        if (err.text[0] == '\0' || !memchr (err.text, '\0', sizeof (err.text))
            || memcmp (&conf, &before, sizeof (conf)) != 0)
            abort ();
        return;
    }
    if (!conf_ok (&conf))
        abort ();
}

static void fuzz_spec (const char *spec)
{
    struct tr_spec spec_out, before;
    struct tr_hookconf conf;
    tr_error_t err;

    memset (&spec_out, 0x5a, sizeof (spec_out));
    memcpy (&before, &spec_out, sizeof (before));
    memset (&err, 0, sizeof (err));
    if (tr_spec_parse (spec, &spec_out, &err) < 0) {
        if (err.text[0] == '\0'
            || memcmp (&spec_out, &before, sizeof (spec_out)) != 0)
            abort ();
        return;
    }
    if (spec_out.state < 0 || spec_out.state > 1
        || !interval_ok (spec_out.interval_s) || !tags_ok (spec_out.tags))
        abort ();
    tr_hookconf_init (&conf);
    (void)tr_spec_enabled (&conf, &spec_out);
    tr_spec_release (&spec_out);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *text;

    if (!(text = fuzz_text (data, size)))
        return 0;
    fuzz_spec (text);
    fuzz_args (text, size);
    free (text);
    return 0;
}
