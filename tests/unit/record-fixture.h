/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Records built in unit tests: the smallest valid record, with an
 * overlay of what a test is about.  Include after <cmocka.h> and
 * "record.h".
 */
#ifndef TRACER_TEST_RECORD_FIXTURE_H
#define TRACER_TEST_RECORD_FIXTURE_H

/* The smallest valid record; overlays add what a test is about.  Single
 * quotes stand for double quotes to keep the text readable.
 */
static const char *base_record =
    "{'format': 'tracer-record', 'version': 1, 'kind': 'final',"
    " 'identity': {'scheduler': 'slurm', 'cluster': 'c1', 'job_id': '77',"
    "  'step_id': '0', 'node': 'node1', 'uid': 1000},"
    " 'request': {},"
    " 'host': {'hostname': 'h'},"
    " 'cgroup': {'attach': 'cgroup', 'version': 'v2'},"
    " 'time': {'start_unix_ms': 1000000, 'end_unix_ms': 1100000,"
    "  'elapsed_s': 100},"
    " 'summary': {'samples': 1,"
    "  'cpu': {'user_s': 0, 'system_s': 0, 'total_s': 0,"
    "   'source': 'cgroup-v2:cpu.stat', 'exact': true},"
    "  'memory': {'peak_bytes': 0, 'source': 'cgroup-v2:memory.peak',"
    "   'exact': true, 'definition': 'cgroup-charged'}},"
    " 'tools': [],"
    " 'series': {'interval_s': 1, 't_s': [], 'metrics': {}},"
    " 'tags': {},"
    " 'outcome': {'state': 'completed', 'complete': true, 'tasks': []},"
    " 'collector': {'name': 'tracerd', 'version': '0.1.0'}}";

/* JSON text with ' for " parsed; fails the test on a syntax error. */
static json_t *parse (const char *text)
{
    char *s = strdup (text);
    json_error_t jerr;
    json_t *o;

    assert_non_null (s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    o = json_loads (s, 0, &jerr);
    if (!o)
        fail_msg ("fixture JSON: %s at %d:%d in %s", jerr.text, jerr.line,
                  jerr.column, s);
    free (s);
    return o;
}

/* base_record with overlay merged in (objects recursively, arrays and
 * values replaced).  With validate, the result must be a valid record.
 */
static json_t *rec_with (const char *overlay, bool validate)
{
    json_t *rec = parse (base_record);
    json_t *over = parse (overlay);
    tr_error_t err;

    assert_int_equal (json_object_update_recursive (rec, over), 0);
    json_decref (over);
    if (validate && tr_record_validate (rec, &err) < 0)
        fail_msg ("fixture record does not validate: %s", err.text);
    return rec;
}

#endif /* !TRACER_TEST_RECORD_FIXTURE_H */
