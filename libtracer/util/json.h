/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_JSON_H
#define TRACER_JSON_H

#include <stdbool.h>
#include <jansson.h>

/* Reading members of JSON objects.  Every getter takes any o (NULL or
 * a non-object reads as having no members, as json_object_get does) and
 * never fails; a member of the wrong type counts as absent.
 */

/* The string o[k], or NULL.  Borrowed from o. */
const char *tr_json_str (const json_t *o, const char *k);

/* The string o[k], or dflt. */
const char *tr_json_str_or (const json_t *o, const char *k, const char *dflt);

/* The number (integer or real) o[k], or NAN. */
double tr_json_num (const json_t *o, const char *k);

/* The number o[k], or dflt. */
double tr_json_num_or (const json_t *o, const char *k, double dflt);

/* Whether o[k] is an integer; when it is, *v (may be NULL) is set to it
 * and otherwise left alone.
 */
bool tr_json_int (const json_t *o, const char *k, json_int_t *v);

/* The integer o[k], or dflt (a real is not an integer). */
json_int_t tr_json_int_or (const json_t *o, const char *k, json_int_t dflt);

/* Writing: o[k] = v, a whole number as a JSON integer (counts and bytes
 * read as such), any other as a real; a value that is not finite
 * (unknown) is left out, never written as 0.  Returns 0, or -1 (out of
 * memory, o not an object).
 */
int tr_json_set_num (json_t *o, const char *k, double v);

#endif /* !TRACER_JSON_H */
