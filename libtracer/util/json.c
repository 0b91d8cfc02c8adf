/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <math.h>

#include "json.h"

static json_t *member (const json_t *o, const char *k)
{
    return json_object_get (o, k);
}

const char *tr_json_str (const json_t *o, const char *k)
{
    return json_string_value (member (o, k));
}

const char *tr_json_str_or (const json_t *o, const char *k, const char *dflt)
{
    const char *s = json_string_value (member (o, k));

    return s ? s : dflt;
}

double tr_json_num (const json_t *o, const char *k)
{
    return tr_json_num_or (o, k, NAN);
}

double tr_json_num_or (const json_t *o, const char *k, double dflt)
{
    json_t *v = member (o, k);

    return json_is_number (v) ? json_number_value (v) : dflt;
}

bool tr_json_int (const json_t *o, const char *k, json_int_t *v)
{
    json_t *j = member (o, k);

    if (!json_is_integer (j))
        return false;
    if (v)
        *v = json_integer_value (j);
    return true;
}

json_int_t tr_json_int_or (const json_t *o, const char *k, json_int_t dflt)
{
    json_int_t v = dflt;

    (void)tr_json_int (o, k, &v);
    return v;
}

int tr_json_set_num (json_t *o, const char *k, double v)
{
    json_t *j;

    if (!isfinite (v))
        return 0;
    if (v == floor (v) && fabs (v) < 9007199254740992.0)
        j = json_integer ((json_int_t)v);
    else
        j = json_real (v);
    return json_object_set_new (o, k, j);
}
