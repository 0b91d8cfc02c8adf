/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The evidence engine: a record's files, kernel events and stall as
 * labelled text and lines, for every renderer.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "evidence.h"
#include "libtracer/util/json.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/units.h"

static bool has (json_t *o, const char *k)
{
    return json_object_get (o, k) != NULL;
}

/* An evidence entry {"label", "text", "items"} appended to arr. */
static int evidence_add (json_t *arr,
                         const char *lab,
                         const char *text,
                         json_t *items)
{
    json_t *e = json_pack ("{s:s s:s s:o}", "label", lab, "text", text, "items",
                           items ? items : json_array ());

    return e ? json_array_append_new (arr, e) : -1;
}

/* One stalled process p in form, appended to sb. */
static int stalled_line (tr_strbuf_t *sb, json_t *p, tr_evidence_form_t form)
{
    const char *tool, *w, *st;

    if (form == TR_EVIDENCE_VIEW)
        return tr_strbuf_printf (
            sb, "%s[%lld] state %s in %s", tr_json_str_or (p, "tool", ""),
            tr_json_int_or (p, "pid", 0), tr_json_str_or (p, "state", ""),
            has (p, "wchan") ? tr_json_str_or (p, "wchan", "") : "-");
    tool = tr_json_str (p, "tool");
    w = tr_json_str (p, "wchan");
    st = tr_json_str (p, "state");
    if (tr_strbuf_printable (sb, tool ? tool : "?") < 0
        || tr_strbuf_printf (sb, " (pid %lld)  %s  ",
                             tr_json_int_or (p, "pid", 0), st ? st : "?")
               < 0
        || tr_strbuf_printable (sb, w && strcmp (w, "0") ? w : "-") < 0)
        return -1;
    return 0;
}

json_t *tr_evidence_stalled (const json_t *rec, tr_evidence_form_t form)
{
    json_t *pg = json_object_get (rec, "progress"), *p;
    json_t *lines = json_array ();
    tr_strbuf_t sb = TR_STRBUF_INIT;
    size_t i;
    int rc = 0;

    if (!lines)
        goto nomem;
    json_array_foreach (json_object_get (pg, "processes"), i, p)
    {
        tr_strbuf_reset (&sb);
        rc |= stalled_line (&sb, p, form);
        rc |= json_array_append_new (lines, json_string (tr_strbuf_str (&sb)));
    }
    tr_strbuf_free (&sb);
    if (rc)
        goto nomem;
    return lines;
nomem:
    json_decref (lines);
    errno = ENOMEM;
    return NULL;
}

/* Kernel evidence (record "events") and no progress ("progress"). */
static int evidence_kernel (json_t *arr, json_t *rec)
{
    json_t *events = json_object_get (rec, "events"), *e;
    json_t *pg = json_object_get (rec, "progress"), *items;
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char b[32], text[160];
    size_t i;
    int rc = 0;

    if (json_array_size (events) > 0) {
        if (!(items = json_array ()))
            return -1;
        json_array_foreach (events, i, e)
        {
            time_t t = (time_t)(tr_json_num_or (e, "t_unix_ms", 0) / 1000);
            struct tm tm;
            char when[32] = "-";
            if (localtime_r (&t, &tm))
                strftime (when, sizeof (when), "%H:%M:%S", &tm);
            tr_strbuf_reset (&sb);
            rc |=
                tr_strbuf_printf (&sb, "%s %s%s", when,
                                  tr_json_str_or (e, "kind", ""),
                                  !strcmp (tr_json_str_or (e, "scope", ""), "no"
                                                                            "d"
                                                                            "e")
                                      ? " ("
                                        "node-"
                                        "wide)"
                                      : "");
            if (has (e, "tool") || has (e, "pid"))
                rc |= tr_strbuf_printf (&sb, " %s[%lld]",
                                        tr_json_str_or (e, "tool", ""),
                                        tr_json_int_or (e, "pid", 0));
            if (has (e, "rss_bytes"))
                rc |= tr_strbuf_printf (
                    &sb, " RSS %s",
                    tr_units_bytes (b, sizeof (b),
                                    tr_json_num_or (e, "rss_bytes", 0)));
            if (has (e, "device"))
                rc |= tr_strbuf_printf (&sb, " %s",
                                        tr_json_str_or (e, "device", ""));
            rc |=
                tr_strbuf_printf (&sb, ": %s", tr_json_str_or (e, "text", ""));
            rc |= json_array_append_new (items,
                                         json_string (tr_strbuf_str (&sb)));
        }
        snprintf (text, sizeof (text), "%zu from the kernel log",
                  json_array_size (events));
        rc |= evidence_add (arr, "Events", text, items);
    }
    tr_strbuf_free (&sb);
    if (json_is_true (json_object_get (pg, "stalled"))) {
        if (!(items = tr_evidence_stalled (rec, TR_EVIDENCE_VIEW)))
            return -1;
        snprintf (text, sizeof (text), "STALLED for %s (no CPU and no I/O)",
                  tr_units_duration (b, sizeof (b),
                                     tr_json_num_or (pg, "stalled_s", 0)));
        rc |= evidence_add (arr, "Progress", text, items);
    }
    else if (has (pg, "stalled_s")) {
        snprintf (text, sizeof (text), "stalled for %s, then went on",
                  tr_units_duration (b, sizeof (b),
                                     tr_json_num_or (pg, "stalled_s", 0)));
        rc |= evidence_add (arr, "Progress", text, NULL);
    }
    return rc ? -1 : 0;
}

/* The eBPF file evidence: failed opens and I/O errors (the first
 * EVIDENCE_FILES of each), the files most read and written with their
 * share of the step's bytes.
 */
#define EVIDENCE_FILES 4

static int evidence_file_errors (json_t *arr,
                                 json_t *errs,
                                 bool io,
                                 const char *name)
{
    size_t n = json_array_size (errs);
    tr_strbuf_t sb = TR_STRBUF_INIT;
    int rc = 0;

    if (!n)
        return 0;
    for (size_t i = 0; i < n && i < EVIDENCE_FILES; i++) {
        json_t *e = json_array_get (errs, i);
        rc |= tr_strbuf_puts (&sb, i ? "; " : "");
        if (io)
            rc |= tr_strbuf_printf (&sb, "%s ", tr_json_str_or (e, "op", ""));
        rc |= tr_strbuf_printf (&sb, "%s (%s) by %s",
                                has (e, "path") ? tr_json_str_or (e, "path", "")
                                                : "(unknown file)",
                                tr_json_str_or (e, "errno", ""),
                                tr_json_str_or (e, "tool", ""));
        if (tr_json_int_or (e, "count", 0) > 1)
            rc |= tr_strbuf_printf (&sb, " x%lld",
                                    tr_json_int_or (e, "count", 0));
    }
    if (n > EVIDENCE_FILES)
        rc |= tr_strbuf_printf (&sb, ", and %zu more", n - EVIDENCE_FILES);
    rc |= evidence_add (arr, name, tr_strbuf_str (&sb), NULL);
    tr_strbuf_free (&sb);
    return rc ? -1 : 0;
}

static int evidence_file_bytes (json_t *arr,
                                json_t *files,
                                double total,
                                const char *name)
{
    size_t n = json_array_size (files);
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char b[32];
    int rc = 0;

    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get (files, i);
        rc |=
            tr_strbuf_printf (&sb, "%s%s %s", i ? ", " : "",
                              tr_json_str_or (e, "path", ""),
                              tr_units_bytes (b, sizeof (b),
                                              tr_json_num_or (e, "bytes", 0)));
        if (total > 0)
            rc |= tr_strbuf_printf (&sb, " (%.0f%%)",
                                    100.0 * tr_json_num_or (e, "bytes", 0)
                                        / total);
    }
    rc |= evidence_add (arr, name, tr_strbuf_str (&sb), NULL);
    tr_strbuf_free (&sb);
    return rc ? -1 : 0;
}

/* The eBPF file evidence (the record's files member). */
static int evidence_files (json_t *arr, json_t *files)
{
    if (!files || strcmp (tr_json_str_or (files, "source", ""), "ebpf"))
        return 0;
    if (evidence_file_errors (arr, json_object_get (files, "failed_opens"),
                              false, "Failed opens")
            < 0
        || evidence_file_errors (arr, json_object_get (files, "io_errors"),
                                 true, "I/O errors")
               < 0
        || evidence_file_bytes (arr, json_object_get (files, "top_read"),
                                tr_json_num_or (files, "read_bytes", 0),
                                "Most read")
               < 0
        || evidence_file_bytes (arr, json_object_get (files, "top_written"),
                                tr_json_num_or (files, "written_bytes", 0),
                                "Most written")
               < 0)
        return -1;
    return 0;
}

json_t *tr_evidence_record (json_t *rec)
{
    json_t *arr = json_array ();

    if (!arr || evidence_files (arr, json_object_get (rec, "files")) < 0
        || evidence_kernel (arr, rec) < 0) {
        json_decref (arr);
        errno = ENOMEM;
        return NULL;
    }
    return arr;
}
