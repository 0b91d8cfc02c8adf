/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The HTML report of one job: one self-contained HTML5 file (inline CSS
 * and SVG, no scripts, nothing fetched), because users open it from a
 * mail attachment, often on a phone, where nothing else can be relied
 * on.  Steps are grouped and merged over their nodes by merge.c and
 * summarised by stepsum.c, as for the text job view, so both views agree
 * on every figure.  Every string from a record is hostile until escaped:
 * job, tool and node names, command lines and tags are chosen by users.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "libtracer/judge/aggregate.h"
#include "libtracer/conf/conf.h"
#include "libtracer/judge/diagnose.h"
#include "libtracer/judge/evidence.h"
#include "html.h"
#include "libtracer/record/merge.h"
#include "libtracer/record/states.h"
#include "libtracer/judge/recommend.h"
#include "libtracer/judge/sizing.h"
#include "recommend_print.h"
#include "report.h"
#include "libtracer/record/stepsum.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/json.h"
#include "libtracer/record/when.h"
#include "libtracer/util/units.h"

/* Bounds on the size of the file.  A record holds at most 1000 points
 * per series, so these keep a job of many steps or nodes to a few MB.
 */
#define MAX_STEP_SECTIONS 50 /* steps drawn in full; all are summarised */
#define MAX_NODE_LINES 16    /* nodes drawn in one chart */
#define MAX_TOOLS 20         /* tools in a timeline */
#define MAX_HEADER_NODES 64  /* node names listed in the header */
#define TOOL_NAME_CUT 32     /* bytes of a tool name in the timeline */
#define NPALETTE 8           /* colour classes c0..c7 */
#define AXIS_MAX 1e300       /* the largest top of a value axis */
#define TIME_MAX 1e9         /* seconds: the longest time axis */

/* Chart geometry, in SVG user units.  An SVG scales to the width of its
 * box, text included, so a chart 320 units wide keeps 11-unit text at
 * about 11 px on a 360 px phone and not too large in a desktop's
 * two-column grid.
 */
#define CW 320
#define CH 180
#define PL 36.0 /* plot area: left, right, top, bottom */
#define PR 312.0
#define PT 18.0
#define PB 156.0
#define TL_ROW 38.0 /* timeline row height */
#define TL_TOP 4.0

static const char *unknown = "\xe2\x80\x93"; /* "–": not known */

/* JSON access; NULL-safe like jansson itself. */

static json_t *get (json_t *o, const char *k)
{
    return json_object_get (o, k);
}

static bool known (double v)
{
    return isfinite (v);
}

/* Escaping */

/* The first len bytes of s, escaped (see tr_html_escape): markup
 * characters as entities; what the text views show as escapes (controls,
 * line separators, bidirectional overrides, bytes that are not UTF-8:
 * tr_text_escape_char, the one rule) as the same escapes, but newline
 * and tab, which are white space in HTML.
 */
static void put_esc_n (FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, n;
    char esc[16];

    while (i < len) {
        n = tr_text_escape_char (p + i, len - i, esc, sizeof (esc));
        if (esc[0] && p[i] != '\n' && p[i] != '\t') {
            fputs (esc, out);
            i += n;
            continue;
        }
        switch (p[i]) {
        case '&':
            fputs ("&amp;", out);
            break;
        case '<':
            fputs ("&lt;", out);
            break;
        case '>':
            fputs ("&gt;", out);
            break;
        case '"':
            fputs ("&quot;", out);
            break;
        case '\'':
            fputs ("&#39;", out);
            break;
        default:
            fwrite (p + i, 1, n, out);
        }
        i += n;
    }
}

int tr_html_escape (FILE *out, const char *s)
{
    if (!out || !s) {
        errno = EINVAL;
        return -1;
    }
    put_esc_n (out, s, strlen (s));
    if (ferror (out)) {
        errno = EIO;
        return -1;
    }
    return 0;
}

static void put_esc (FILE *out, const char *s)
{
    if (s)
        put_esc_n (out, s, strlen (s));
}

/* s escaped, cut to at most max bytes on a character boundary with "…"
 * appended, so that a long name cannot push a chart label off its row.
 */
static void put_esc_cut (FILE *out, const char *s, size_t max)
{
    size_t len = strlen (s);

    if (len <= max) {
        put_esc_n (out, s, len);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--;
    put_esc_n (out, s, max);
    fputs ("\xe2\x80\xa6", out);
}

/* Numbers as text; unknown or non-finite values as "–", never "nan". */

enum fmt {
    F_CORES, /* 1.25 */
    F_PCT,   /* a fraction as 12.5% */
    F_SECS,  /* 1.2 s */
    F_DUR,   /* HH:MM:SS */
    F_BYTES, /* 1.5 GiB */
    F_BPS,   /* 1.5 MiB/s */
    F_G,     /* %g */
};

static const char *fmt (char *buf, size_t size, enum fmt f, double v)
{
    char b[32];

    if (!known (v)) {
        snprintf (buf, size, "%s", unknown);
        return buf;
    }
    switch (f) {
    case F_CORES:
        snprintf (buf, size, "%.2f", v);
        break;
    case F_PCT:
        snprintf (buf, size, "%.1f%%", 100.0 * v);
        break;
    case F_SECS:
        snprintf (buf, size, v < 100 ? "%.2f s" : "%.0f s", v);
        break;
    case F_DUR:
        tr_units_duration (buf, size, v);
        break;
    case F_BYTES:
        tr_units_bytes (buf, size, v);
        break;
    case F_BPS:
        snprintf (buf, size, "%s/s", tr_units_bytes (b, sizeof (b), v));
        break;
    case F_G:
        snprintf (buf, size, "%.6g", v);
        break;
    }
    return buf;
}

/* A <time> element: local time for the reader, UTC in the attribute for
 * machines.
 */
static void put_time (FILE *out, double ms)
{
    char iso[32], local[64];
    struct tm tm;
    time_t t;

    if (!known (ms)) {
        fputs (unknown, out);
        return;
    }
    t = (time_t)floor (ms / 1000);
    if (!gmtime_r (&t, &tm)
        || !strftime (iso, sizeof (iso), "%Y-%m-%dT%H:%M:%SZ", &tm)
        || !localtime_r (&t, &tm)
        || !strftime (local, sizeof (local), "%Y-%m-%d %H:%M:%S %z", &tm)) {
        fputs (unknown, out);
        return;
    }
    fprintf (out, "<time datetime=\"%s\">%s</time>", iso, local);
}

/* The style sheet.  Colours come in classes (c0..c7 set --c) so that the
 * SVG and the legends share them and a dark scheme can change them.
 */
static const char css[] =
    ":root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--mut:#57606a;"
    "--grid:#d8dee4;--ok:#1a7f37;--warn:#9a6700;--crit:#cf222e;"
    "--info:#0969da}\n"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;"
    "--mut:#9da7b3;--grid:#30363d;--ok:#3fb950;--warn:#d29922;"
    "--crit:#f85149;--info:#58a6ff}}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0 auto;max-width:64rem;padding:.75rem;color:var(--fg);"
    "background:var(--bg);font:15px/1.45 system-ui,-apple-system,"
    "\"Segoe UI\",Roboto,sans-serif;overflow-wrap:anywhere;"
    "word-break:break-word}\n"
    "h1{font-size:1.35rem;margin:.2rem 0 .6rem}"
    "h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid "
    "var(--grid)}h3{font-size:1rem;margin:1rem 0 .3rem}\n"
    ".kicker,.meta,.note,figcaption,.legend,footer{color:var(--mut)}"
    ".kicker{margin:0;font-size:.85rem}\n"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;"
    "gap:.1rem .8rem;margin:0}dl.facts dt{font-weight:600}"
    "dl.facts dd{margin:0}\n"
    "nav.toc{font-size:.9rem;margin:.8rem 0}nav.toc a{margin-right:.6rem}\n"
    ".scroll{overflow-x:auto;max-width:100%}\n"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums;"
    "margin:.3rem 0;overflow-wrap:normal;word-break:normal}"
    "caption{text-align:left;font-weight:600;padding:.2rem 0}\n"
    "th,td{padding:.2rem .3rem;border-bottom:1px solid var(--grid);"
    "text-align:left;white-space:nowrap;vertical-align:middle}"
    "td.num,th.num{text-align:right}\n"
    "td.max{font-weight:700}td.min{font-style:italic}"
    "table.usage td{white-space:normal}\n"
    ".bar{display:block;min-width:3rem;height:.5rem;margin-top:.2rem;"
    "background:var(--grid);border-radius:.25rem;overflow:hidden}"
    ".bar>span{display:block;height:100%;background:var(--info)}"
    ".bar>span.warn{background:var(--warn)}"
    ".bar>span.over{background:var(--crit)}\n"
    ".state-good{color:var(--ok)}.state-run{color:var(--info)}"
    ".state-warn{color:var(--warn)}.state-bad{color:var(--crit)}"
    ".state{font-weight:600}\n"
    "ul.findings{list-style:none;padding:0;margin:.2rem 0}"
    "ul.findings li{margin:.25rem 0;padding-left:.6rem;"
    "border-left:4px solid var(--info)}"
    ".sev{font-weight:700;text-transform:uppercase;font-size:.8rem;"
    "margin-right:.4rem}"
    "li.sev-critical{border-color:var(--crit)}"
    "li.sev-critical .sev{color:var(--crit)}"
    "li.sev-warning{border-color:var(--warn)}"
    "li.sev-warning .sev{color:var(--warn)}"
    "li.sev-info .sev{color:var(--info)}"
    ".evidence{display:block;font-size:.8rem;color:var(--mut)}\n"
    ".record-evidence dl{display:grid;grid-template-columns:max-content 1fr;"
    "gap:.1rem .8rem;margin:.3rem 0}"
    ".record-evidence dt{font-weight:600}.record-evidence dd{margin:0}"
    ".record-evidence ul{margin:.1rem 0;padding-left:1.2rem;"
    "font-family:ui-monospace,monospace;font-size:.85rem}"
    ".record-evidence h4{margin:.4rem 0 0}\n"
    "pre{overflow-x:auto;background:var(--grid);padding:.4rem .6rem;"
    "border-radius:.3rem}\n"
    ".charts{display:grid;grid-template-columns:repeat(auto-fill,"
    "minmax(min(100%,19rem),1fr));gap:.5rem 1.5rem}\n"
    "figure{margin:.6rem 0;min-width:0}"
    "figcaption{font-size:.85rem}figcaption b{color:var(--fg)}\n"
    "p.empty{border:1px dashed var(--grid);padding:1.2rem;"
    "text-align:center;color:var(--mut)}\n"
    "svg{display:block;width:100%;height:auto;max-width:100%}"
    /* its coordinates are those of one chart: no larger than two */
    "figure.timeline svg{max-width:40rem}"
    "svg text{font-size:11px;fill:var(--mut)}\n"
    "svg .ax{stroke:var(--mut);stroke-width:1}"
    "svg .gr{stroke:var(--grid);stroke-width:.7}\n"
    "svg .ln{fill:none;stroke:var(--c);stroke-width:1.6;"
    "stroke-linejoin:round;stroke-linecap:round}"
    "svg .dot{fill:var(--c)}"
    "svg .band{fill:var(--c);fill-opacity:.22;stroke:none}\n"
    "svg .ref{stroke:var(--fg);stroke-width:1.2;stroke-dasharray:6 4}"
    "svg text.reft{fill:var(--fg)}\n"
    "svg .ls1{stroke-dasharray:6 3}svg .ls2{stroke-dasharray:1.5 3}"
    "svg .ls3{stroke-dasharray:8 3 1.5 3}svg .ls4{stroke-dasharray:12 4}\n"
    "svg .tb{fill:var(--info)}svg .tb.bad{fill:var(--crit)}"
    "svg text.bad{fill:var(--crit);font-weight:700}"
    "svg text.st{font-size:10px}\n"
    ".c0{--c:#0072b2}.c1{--c:#d55e00}.c2{--c:#009e73}.c3{--c:#cc79a7}"
    ".c4{--c:#e69f00}.c5{--c:#56b4e9}.c6{--c:#7b3294}.c7{--c:#6e7781}"
    ".cn{--c:var(--fg)}\n"
    "@media (prefers-color-scheme:dark){.c0{--c:#4ea8e8}.c1{--c:#ff8c4a}"
    ".c2{--c:#3fcf9f}.c6{--c:#b77fd8}.c7{--c:#a0a8b0}}\n"
    "ul.legend{list-style:none;padding:0;margin:.2rem 0;display:flex;"
    "flex-wrap:wrap;gap:.1rem 1rem;font-size:.8rem}"
    "svg.key{display:inline-block;width:1.6rem;height:.6rem;"
    "vertical-align:middle;margin-right:.3rem}\n"
    "footer{margin-top:2rem;border-top:1px solid var(--grid);"
    "font-size:.85rem}\n";

/* Everything the report says about one step, computed before writing. */
struct hstep {
    json_t *step;     /* from tr_merge_steps (borrowed from steps) */
    tr_stepsum_t sum; /* merged over the counted rows */
    json_t *findings; /* tr_diagnose, a new reference */
    json_t *rec;      /* the recommend callback's group, or NULL */
};

struct html {
    FILE *out;
    json_t *recs;
    json_t *notes;
    struct hstep *hs;
    size_t n;
    const char **nodes; /* every node of the job, natural order */
    size_t nnodes;
    double now;
};

/* recs is a non-empty array of records of one cluster and job. */
static bool one_job (json_t *recs)
{
    json_t *id0, *rec;
    size_t i;

    if (!json_is_array (recs) || json_array_size (recs) == 0)
        return false;
    id0 = get (json_array_get (recs, 0), "identity");
    json_array_foreach (recs, i, rec)
    {
        json_t *id = get (rec, "identity");

        if (!json_is_object (rec) || !json_is_string (get (id, "job_id"))
            || strcmp (tr_json_str_or (id, "job_id", ""),
                       tr_json_str_or (id0, "job_id", ""))
            || strcmp (tr_json_str_or (id, "cluster", ""),
                       tr_json_str_or (id0, "cluster", "")))
            return false;
    }
    return true;
}

/* Class of a state for colour; the state's name is always shown too. */
static const char *state_class (const char *state)
{
    int rank = tr_states_rank (state);

    return rank == 0   ? "state-good"
           : rank == 1 ? "state-run"
           : rank == 2 ? "state-warn"
                       : "state-bad";
}

static void put_state (FILE *out, const char *state)
{
    fprintf (out, "<span class=\"state %s\">", state_class (state));
    put_esc (out, tr_states_sacct (state, NAN));
    fputs ("</span>", out);
}

/* "batch", or "0 (python3)" */
static void put_step_title (FILE *out, json_t *step)
{
    fputs ("Step ", out);
    put_esc (out, tr_json_str_or (step, "step_id", ""));
    if (*tr_json_str_or (step, "step_name", "")) {
        fputs (" <span class=\"stepname\">(", out);
        put_esc (out, tr_json_str_or (step, "step_name", ""));
        fputs (")</span>", out);
    }
}

/* The first record of recs with a non-empty identity member k. */
static const char *first_id (json_t *recs, const char *k)
{
    json_t *rec;
    size_t i;

    json_array_foreach (recs, i, rec)
    {
        const char *s = tr_json_str_or (get (rec, "identity"), k, "");
        if (*s)
            return s;
    }
    return "";
}

/* Header */

static int cmp_names (const void *a, const void *b)
{
    return tr_merge_natcmp (*(const char *const *)a, *(const char *const *)b);
}

static void put_fact (FILE *out, const char *dt, const char *dd)
{
    if (!*dd)
        return;
    fprintf (out, "<dt>%s</dt><dd>", dt);
    put_esc (out, dd);
    fputs ("</dd>\n", out);
}

/* Every node of the job once, in natural order, into h->nodes. */
static int job_nodes (struct html *h)
{
    size_t cap = 0, n = 0;
    json_t *v;
    size_t k;

    for (size_t i = 0; i < h->n; i++)
        cap += json_array_size (get (h->hs[i].step, "nodes"));
    if (!(h->nodes = calloc (cap ? cap : 1, sizeof (*h->nodes))))
        return -1;
    for (size_t i = 0; i < h->n; i++)
        json_array_foreach (get (h->hs[i].step, "nodes"), k, v)
        {
            h->nodes[n++] = json_string_value (v) ? json_string_value (v) : "";
        }
    if (n)
        qsort (h->nodes, n, sizeof (*h->nodes), cmp_names);
    for (size_t i = 0; i < n; i++)
        if (!h->nnodes || strcmp (h->nodes[i], h->nodes[h->nnodes - 1]))
            h->nodes[h->nnodes++] = h->nodes[i];
    return 0;
}

static void put_header (struct html *h)
{
    FILE *out = h->out;
    json_t *id = get (json_array_get (h->recs, 0), "identity");
    const char *name = first_id (h->recs, "job_name");
    const char *worst = "";
    double start = NAN, end = NAN, elapsed = NAN;
    bool ended = true;
    char buf[64];

    for (size_t i = 0; i < h->n; i++) {
        json_t *s = h->hs[i].step;
        double st = tr_json_num (s, "start_unix_ms"),
               en = tr_json_num (s, "end_unix_ms");

        if (!*worst
            || tr_states_rank (tr_json_str_or (s, "state", ""))
                   > tr_states_rank (worst))
            worst = tr_json_str_or (s, "state", "");
        if (known (st) && !(start <= st))
            start = st;
        if (!known (en))
            ended = false;
        else if (!(end >= en))
            end = en;
        if (!(elapsed >= tr_json_num (s, "elapsed_s")))
            elapsed = tr_json_num (s, "elapsed_s");
    }
    if (!ended)
        end = NAN;
    else if (known (start) && known (end))
        elapsed = (end - start) / 1000.0;

    fputs ("<header id=\"job\" class=\"job\">\n"
           "<p class=\"kicker\">tracer job report</p>\n<h1>Job ",
           out);
    put_esc (out, tr_json_str_or (id, "job_id", ""));
    if (*name) {
        fputs (" <span class=\"jobname\">", out);
        put_esc (out, name);
        fputs ("</span>", out);
    }
    fputs ("</h1>\n<dl class=\"facts\">\n<dt>State</dt><dd>", out);
    put_state (out, worst);
    fputs ("</dd>\n", out);
    if (*tr_json_str_or (id, "array_job_id", "")) {
        fputs ("<dt>Array</dt><dd>", out);
        const char *arr = tr_json_str_or (id, "array_job_id", "");
        /* Slurm's task 7_3; PBS names the array 7[].srv and LSF 209:
         * "index 3"
         */
        bool slurm_form = strspn (arr, "0123456789") == strlen (arr)
                          && strcmp (tr_json_str_or (id, "scheduler", ""),
                                     "lsf");
        put_esc (out, arr);
        if (json_is_integer (get (id, "array_task_id")))
            fprintf (out, slurm_form ? "_%lld" : ", index %lld",
                     (long long)json_integer_value (get (id, "array_task_id")));
        fputs ("</dd>\n", out);
    }
    {
        char u[32];

        /* as the text view: a name the node could not resolve is its
         * number
         */
        put_fact (out, "User",
                  *first_id (h->recs, "user")
                      ? first_id (h->recs, "user")
                      : tr_stepsum_name_or_id (id, "user", "uid", u,
                                               sizeof (u)));
    }
    put_fact (out, "Account", first_id (h->recs, "account"));
    put_fact (out, "Partition", first_id (h->recs, "partition"));
    put_fact (out, "QOS", first_id (h->recs, "qos"));
    put_fact (out, "Cluster", tr_json_str_or (id, "cluster", ""));
    fputs ("<dt>Start</dt><dd>", out);
    put_time (out, start);
    fputs ("</dd>\n<dt>End</dt><dd>", out);
    if (ended)
        put_time (out, end);
    else
        fputs ("still running", out);
    fprintf (out, "</dd>\n<dt>Elapsed</dt><dd>%s</dd>\n",
             fmt (buf, sizeof (buf), F_DUR, elapsed));
    fprintf (out, "<dt>Steps</dt><dd>%zu</dd>\n<dt>Nodes</dt><dd>", h->n);
    for (size_t i = 0; i < h->nnodes; i++) {
        if (i == MAX_HEADER_NODES) {
            fprintf (out, ", \xe2\x80\xa6 (%zu in all)", h->nnodes);
            break;
        }
        fputs (i ? ", " : "", out);
        put_esc (out, h->nodes[i]);
    }
    fputs ("</dd>\n</dl>\n</header>\n", out);
}

static void put_nav (struct html *h)
{
    FILE *out = h->out;

    fputs ("<nav class=\"toc\"><a href=\"#summary\">Summary</a>"
           "<a href=\"#diagnosis\">Diagnosis</a>"
           "<a href=\"#recommendations\">Next time</a>",
           out);
    for (size_t i = 0; i < h->n && i < MAX_STEP_SECTIONS; i++) {
        const char *sid = tr_json_str_or (h->hs[i].step, "step_id", "");

        fputs ("<a href=\"#step-", out);
        put_esc (out, sid);
        fputs ("\">Step ", out);
        put_esc (out, sid);
        fputs ("</a>", out);
    }
    fputs ("</nav>\n", out);
}

/* Summary: requested against used */

/* "<td>42.0%<bar></td>"; warn_at: the fraction from which the bar is
 * drawn as a warning (0: never).
 */
static void put_share (FILE *out, double frac, double warn_at)
{
    char buf[32];
    double w;

    if (!known (frac) || frac < 0) {
        fprintf (out, "<td class=\"num\">%s</td>", unknown);
        return;
    }
    w = frac > 1 ? 100 : 100 * frac;
    fprintf (out,
             "<td class=\"num\">%s<span class=\"bar\" aria-hidden=\"true\">"
             "<span class=\"%s\" style=\"width:%.1f%%\"></span></span></td>",
             fmt (buf, sizeof (buf), F_PCT, frac),
             frac > 1                         ? "over"
             : warn_at > 0 && frac >= warn_at ? "warn"
                                              : "fill",
             w);
}

static void put_usage (struct html *h, struct hstep *hs)
{
    FILE *out = h->out;
    const tr_stepsum_t *s = &hs->sum;
    json_t *step = hs->step;
    double nodes = tr_json_num (step, "nodes_reported");
    double mem_ref = known (s->req_mem_bytes) && s->req_mem_bytes > 0
                         ? s->req_mem_bytes
                         : s->mem_limit_bytes;
    double cores = s->elapsed_s > 0 ? s->cpu_s / s->elapsed_s : NAN;
    char b1[64], b2[64], ec[64];

    fprintf (out, "<div class=\"scroll\"><table class=\"usage\" "
                  "data-step=\"");
    put_esc (out, tr_json_str_or (step, "step_id", ""));
    fputs ("\">\n<caption>", out);
    put_step_title (out, step);
    fputs (": ", out);
    put_state (out, tr_json_str_or (step, "state", ""));
    /* the exit code as the text view and the listing write it */
    if (*tr_stepsum_exit_of (step, tr_json_str_or (step, "state", ""), ec,
                             sizeof (ec)))
        fprintf (out, ", exit code %s", ec);
    if (nodes > 1)
        fprintf (out, ", %.0f nodes", nodes);
    fputs ("</caption>\n<thead><tr><th>Resource</th><th class=\"num\">"
           "Requested</th><th class=\"num\">Used</th><th class=\"num\">"
           "Share</th></tr></thead>\n<tbody>\n",
           out);

    /* CPU: cores granted on every node against the mean cores busy */
    fprintf (out, "<tr class=\"cpu\"><th>CPUs</th><td class=\"num\">");
    if (known (s->req_cores))
        fprintf (out, "%s core%s", fmt (b1, sizeof (b1), F_G, s->req_cores),
                 s->req_cores == 1 ? "" : "s");
    else
        fputs (unknown, out);
    fprintf (out, "</td><td class=\"num\">%s cores (%s CPU)</td>",
             fmt (b1, sizeof (b1), F_CORES, cores),
             fmt (b2, sizeof (b2), F_SECS, s->cpu_s));
    put_share (out, tr_stepsum_cpu_eff (s), 0);

    /* Memory: a request holds per node, so the largest node's peak is
     * the one to hold against it.
     */
    fprintf (out,
             "</tr>\n<tr class=\"memory\"><th>Memory</th>"
             "<td class=\"num\">%s",
             fmt (b1, sizeof (b1), F_BYTES, s->req_mem_bytes));
    if (nodes > 1)
        fputs (" per node", out);
    if (known (s->mem_limit_bytes) && s->mem_limit_bytes != s->req_mem_bytes)
        fprintf (out, " (limit %s)",
                 fmt (b2, sizeof (b2), F_BYTES, s->mem_limit_bytes));
    fprintf (out, "</td><td class=\"num\">%s peak%s%s</td>",
             fmt (b1, sizeof (b1), F_BYTES, s->mem_peak_bytes),
             nodes > 1 ? " on the largest node" : "",
             json_is_true (get (get (step, "memory"), "exact")) ? ""
                                                                : " (sampled)");
    put_share (out,
               known (mem_ref) && mem_ref > 0 ? s->mem_peak_bytes / mem_ref
                                              : NAN,
               0.9);

    /* Time */
    fprintf (out,
             "</tr>\n<tr class=\"time\"><th>Time</th><td class=\"num\">"
             "%s</td><td class=\"num\">%s</td>",
             s->time_unlimited == 1
                 ? TR_STEPSUM_UNLIMITED
                 : fmt (b1, sizeof (b1), F_DUR, s->time_limit_s),
             fmt (b2, sizeof (b2), F_DUR, s->elapsed_s));
    put_share (out, s->time_limit_s > 0 ? s->elapsed_s / s->time_limit_s : NAN,
               0.9);
    fputs ("</tr>\n", out);

    /* Stall: what the node measured, "unknown" where it could not */
    {
        char stall[160];
        const char *why = NULL;
        size_t k;
        json_t *row;
        /* the first node's reason (rows index the records) */
        json_array_foreach (get (step, "rows"), k, row)
        {
            json_t *rec = json_array_get (
                h->recs, (size_t)json_integer_value (get (row, "index")));
            why =
                tr_json_str_or (get (rec, "summary"), "x_pressure_reason", "");
            if (*why)
                break;
        }
        tr_stepsum_stall_text (s, stall, sizeof (stall));
        fprintf (out, "<tr class=\"stall\"><th>Stalled</th><td "
                      "class=\"num\">%s</td><td class=\"num\"",
                 unknown);
        if (why && *why) {
            fputs (" title=\"", out);
            put_esc (out, why);
            fputs ("\"", out);
        }
        fputs (">", out);
        put_esc (out, stall);
        fprintf (out, "</td><td class=\"num\">%s</td></tr>\n", unknown);
    }

    if (s->gpus_used > 0 || *s->gpus) {
        /* request.gpus is the devices' index list, not a count */
        fputs ("<tr class=\"gpu\"><th>GPUs</th><td class=\"num\">", out);
        if (*s->gpus)
            fputs (strpbrk (s->gpus, ",-") ? "devices " : "device ", out);
        put_esc (out, *s->gpus ? s->gpus : unknown);
        fprintf (out,
                 "</td><td class=\"num\">%s used, %s%% busy"
                 "</td><td class=\"num\">%s</td></tr>\n",
                 fmt (b1, sizeof (b1), F_G, s->gpus_used),
                 fmt (b2, sizeof (b2), F_G, round (s->gpu_util_mean_pct)),
                 unknown);
    }
    fputs ("</tbody>\n</table></div>\n", out);
}

static void put_summary (struct html *h)
{
    fputs ("<section id=\"summary\" class=\"summary\">\n"
           "<h2>Requested and used</h2>\n",
           h->out);
    for (size_t i = 0; i < h->n; i++)
        put_usage (h, &h->hs[i]);
    fputs ("</section>\n", h->out);
}

/* Diagnosis */

/* An evidence value in the unit of the listing field of its name
 * (stepsum.h): "900.0 MiB", not "9.43718e+08".
 */
static const char *evidence_value (char *buf,
                                   size_t size,
                                   const char *name,
                                   json_t *v)
{
    const tr_field_t *f = tr_stepsum_field (name);
    double d = json_is_number (v) ? json_number_value (v) : NAN;
    size_t len = strlen (name);
    tr_field_kind_t kind = TR_FIELD_NUM;

    /* the few evidence names that are not listing fields say their unit
     * at the end: "suggestedmem", "throttledfrac"
     */
    /* a suggested --mem is written as --mem is, so that it reads the
     * same number as the advice ("3584M", not "3.5 GiB")
     */
    if (!strcmp (name, "suggestedmem") && known (d)
        && !tr_recommend_mem_text (buf, size, d))
        return buf;
    if (f)
        kind = f->kind;
    else if (len > 3 && !strcmp (name + len - 3, "mem"))
        kind = TR_FIELD_BYTES;
    else if (len > 4 && !strcmp (name + len - 4, "frac"))
        kind = TR_FIELD_FRACTION;
    switch (kind) {
    case TR_FIELD_BYTES:
        return fmt (buf, size, F_BYTES, d);
    case TR_FIELD_SECONDS:
        return fmt (buf, size, F_DUR, d);
    case TR_FIELD_FRACTION:
        return fmt (buf, size, F_PCT, d);
    default:
        if (known (d))
            snprintf (buf, size, "%.4g", d);
        else
            snprintf (buf, size, "%s", unknown);
        return buf;
    }
}

/* What each record of the step says beyond its figures (files, kernel
 * events, no progress), as the text view says it (tr_evidence_record),
 * under its node when the step ran on several.
 */
static void put_record_evidence (struct html *h, struct hstep *hs)
{
    json_t *rows = get (hs->step, "rows"), *row;
    bool multi = json_array_size (rows) > 1;
    size_t i;

    json_array_foreach (rows, i, row)
    {
        json_t *rec = json_array_get (
            h->recs, (size_t)json_integer_value (get (row, "index")));
        json_t *ev = rec ? tr_evidence_record (rec) : NULL, *e, *it;
        const char *node = tr_json_str_or (get (rec, "identity"), "node", "");
        size_t j, k;

        if (json_array_size (ev) > 0) {
            fputs ("<div class=\"record-evidence\" data-node=\"", h->out);
            put_esc (h->out, node);
            fputs ("\">", h->out);
            if (multi) {
                fputs ("<h4>On ", h->out);
                put_esc (h->out, node);
                fputs ("</h4>", h->out);
            }
            fputs ("<dl>\n", h->out);
            json_array_foreach (ev, j, e)
            {
                json_t *items = get (e, "items");

                fputs ("<dt>", h->out);
                put_esc (h->out, tr_json_str_or (e, "label", ""));
                fputs ("</dt><dd>", h->out);
                put_esc (h->out, tr_json_str_or (e, "text", ""));
                if (json_array_size (items) > 0) {
                    fputs ("<ul>", h->out);
                    json_array_foreach (items, k, it)
                    {
                        fputs ("<li>", h->out);
                        put_esc (h->out, json_string_value (it));
                        fputs ("</li>", h->out);
                    }
                    fputs ("</ul>", h->out);
                }
                fputs ("</dd>\n", h->out);
            }
            fputs ("</dl></div>\n", h->out);
        }
        json_decref (ev);
    }
}

static void put_findings (struct html *h, struct hstep *hs)
{
    FILE *out = h->out;
    json_t *f, *ev, *v;
    const char *k;
    size_t i;

    fputs ("<div class=\"diag\" data-step=\"", out);
    put_esc (out, tr_json_str_or (hs->step, "step_id", ""));
    fputs ("\"><h3>", out);
    put_step_title (out, hs->step);
    fputs ("</h3>\n", out);
    /* the cause of a step that did not complete (cause.h) */
    if (hs->sum.cause && *hs->sum.cause) {
        fputs ("<p class=\"cause\" data-cause=\"", out);
        put_esc (out, hs->sum.cause);
        fputs ("\"><strong>Cause:</strong> ", out);
        put_esc (out, hs->sum.cause);
        if (hs->sum.cause_text && *hs->sum.cause_text) {
            fputs (": ", out);
            put_esc (out, hs->sum.cause_text);
        }
        fputs ("</p>\n", out);
    }
    put_record_evidence (h, hs);
    fputs ("<ul class=\"findings\">\n", out);
    json_array_foreach (hs->findings, i, f)
    {
        const char *sev = tr_json_str_or (f, "severity", "");

        /* the severity is spelt out, not shown by colour alone */
        fputs ("<li class=\"finding sev-", out);
        put_esc (out, sev);
        fputs ("\" data-code=\"", out);
        put_esc (out, tr_json_str_or (f, "code", ""));
        fputs ("\"><span class=\"sev\">", out);
        put_esc (out, sev);
        fputs ("</span>", out);
        put_esc (out, tr_json_str_or (f, "text", ""));
        ev = get (f, "evidence");
        if (json_object_size (ev)) {
            bool first = true;

            fputs ("<span class=\"evidence\">", out);
            json_object_foreach (ev, k, v)
            {
                char buf[32];

                fputs (first ? "" : ", ", out);
                put_esc (out, k);
                fprintf (out, " %s", evidence_value (buf, sizeof (buf), k, v));
                first = false;
            }
            fputs ("</span>", out);
        }
        fputs ("</li>\n", out);
    }
    fputs ("</ul></div>\n", out);
}

static void put_diagnosis (struct html *h)
{
    fputs ("<section id=\"diagnosis\" class=\"diagnosis\">\n"
           "<h2>Diagnosis</h2>\n",
           h->out);
    for (size_t i = 0; i < h->n; i++)
        put_findings (h, &h->hs[i]);
    fputs ("</section>\n", h->out);
}

/* Recommendations */

/* One resource of a recommendation group: this job's own request in
 * the scheduler's spelling (not the group's, which pools other jobs'),
 * the recommendation's text and its basis.
 */
static void put_rec_row (FILE *out, json_t *r, const char *opt, int kind,
                         double req)
{
    char buf[64];

    if (!*tr_json_str_or (r, "text", ""))
        return;
    if (isnan (req))
        snprintf (buf, sizeof (buf), "%s", unknown);
    else if (kind == 0)
        fmt (buf, sizeof (buf), F_G, req);
    else if ((kind == 1 ? tr_recommend_mem_text (buf, sizeof (buf), req)
                        : tr_recommend_time_text (buf, sizeof (buf), req))
             < 0)
        snprintf (buf, sizeof (buf), "%s", unknown);
    fprintf (out,
             "<tr><th><code>%s</code></th><td class=\"num\">%s</td>"
             "<td class=\"num\"><b>",
             opt, buf);
    put_esc (out, tr_json_str_or (r, "text", ""));
    fputs ("</b></td><td>", out);
    put_esc (out, tr_json_str_or (r, "basis", ""));
    fputs ("</td></tr>\n", out);
}

/* This step's own request of resource kind (0 cores per task, 1 memory
 * per node, 2 time limit), NAN when unknown.
 */
static double own_request (const tr_stepsum_t *r, int kind)
{
    double tasks = r->tasks > 0 ? r->tasks : r->nodes > 0 ? r->nodes : 1;

    if (kind == 0)
        return r->req_cpus_per_task > 0 ? r->req_cpus_per_task
               : r->req_cores > 0       ? r->req_cores / tasks
                                        : NAN;
    if (kind == 1)
        return r->req_mem_bytes > 0 ? r->req_mem_bytes : NAN;
    return r->time_limit_s > 0 ? r->time_limit_s : NAN;
}

static void put_rec (struct html *h, struct hstep *hs)
{
    static const struct {
        const char *member, *opt, *pbs, *lsf;
    } res[] = {
        { "cpus", "--cpus-per-task", "ncpus", "-n" },
        { "mem", "--mem", "mem", "rusage[mem]" },
        { "time", "--time", "walltime", "-W" },
    };
    FILE *out = h->out;
    json_t *g = hs->rec, *runs = get (g, "runs"), *note;
    const char *sched = hs->sum.scheduler;
    bool pbs = tr_sizing_form (sched) == TR_SIZING_PBS;
    bool lsf = tr_sizing_form (sched) == TR_SIZING_LSF;
    struct tr_sizing_args args;
    bool any = false;
    size_t i;

    fputs ("<div class=\"rec\" data-step=\"", out);
    put_esc (out, tr_json_str_or (hs->step, "step_id", ""));
    fputs ("\"><h3>", out);
    put_step_title (out, hs->step);
    fputs ("</h3>\n", out);
    for (i = 0; i < 3; i++)
        if (*tr_json_str_or (get (g, res[i].member), "text", ""))
            any = true;
    if (!any) {
        fputs ("<p class=\"none\">Not enough history for a recommendation."
               "</p></div>\n",
               out);
        return;
    }
    fputs ("<div class=\"scroll\"><table class=\"recommend\">\n<thead><tr>"
           "<th>Option</th><th class=\"num\">Now</th><th class=\"num\">"
           "Next time</th><th>Basis</th></tr></thead>\n<tbody>\n",
           out);
    for (i = 0; i < 3; i++)
        put_rec_row (out, get (g, res[i].member),
                     pbs ? res[i].pbs : lsf ? res[i].lsf : res[i].opt, (int)i,
                     own_request (&hs->sum, (int)i));
    fputs ("</tbody></table></div>\n<p class=\"basis\">From ", out);
    fprintf (out, "<span class=\"runs\">%lld run%s</span>",
             (long long)json_integer_value (get (runs, "total")),
             json_integer_value (get (runs, "total")) == 1 ? "" : "s");
    fprintf (out, " (%lld completed) of the step group <q>",
             (long long)json_integer_value (get (runs, "used")));
    put_esc (out, tr_json_str_or (g, "group", ""));
    fputs ("</q>; confidence <span class=\"confidence\">", out);
    put_esc (out, *tr_json_str_or (g, "confidence", "")
                      ? tr_json_str_or (g, "confidence", "")
                      : "low");
    /* the job script lines of the scheduler that ran the step */
    if (tr_sizing_args_advice (&args, sched, g) < 0)
        args.n = 0;
    if (pbs || lsf) {
        char line[256];

        if (tr_sizing_join (line, sizeof (line), &args) < 0)
            line[0] = '\0';
        fprintf (out, "</span>.</p>\n<pre class=\"%s\"><code>%s ",
                 pbs ? "pbs" : "lsf", pbs ? "#PBS" : "#BSUB");
        put_esc (out, line);
        fputs ("\n</code></pre>\n", out);
    }
    else {
        fputs ("</span>.</p>\n<pre class=\"sbatch\"><code>", out);
        for (i = 0; i < args.n; i++) {
            fputs ("#SBATCH ", out);
            put_esc (out, args.arg[i]);
            fputs ("\n", out);
        }
        fputs ("</code></pre>\n", out);
    }
    if (json_array_size (get (g, "notes"))) {
        fputs ("<ul class=\"notes\">\n", out);
        json_array_foreach (get (g, "notes"), i, note)
        {
            fputs ("<li>", out);
            put_esc (out, json_string_value (note));
            fputs ("</li>\n", out);
        }
        fputs ("</ul>\n", out);
    }
    fputs ("</div>\n", out);
}

static void put_recommendations (struct html *h)
{
    fputs ("<section id=\"recommendations\" class=\"recommendations\">\n"
           "<h2>Next time</h2>\n",
           h->out);
    for (size_t i = 0; i < h->n; i++)
        put_rec (h, &h->hs[i]);
    fputs ("</section>\n", h->out);
}

/* Charts */

enum unit {
    U_CORES,
    U_BYTES,
    U_PCT, /* values already in percent */
    U_BPS,
};

/* One line of a chart: a statistic of a series metric. */
struct spec {
    const char *metric;
    const char *stat;  /* "mean" or "max" */
    const char *label; /* in the legend */
    double scale;      /* value multiplier (PSI fractions to percent) */
    int colour;        /* one node: the colour class; several: by node */
    int style;         /* one node: the dash style; several: by spec */
};

/* One set of axes. */
struct panel {
    enum unit unit;
    const char *ylabel; /* above the value axis */
    double floor;       /* the value axis reaches at least this */
    double fixed_max;   /* > 0: the value axis is 0..fixed_max */
    const char *ref;    /* reference line: "allocation", "limit", NULL */
    bool band;          /* min-max band around specs[0] (one node) */
    const struct spec *specs;
    size_t nspecs;
};

struct chart {
    const char *metric; /* data-metric */
    const char *title;
    const char *caption;
    const struct panel *panels;
    size_t npanels;
};

static const struct spec cpu_specs[] = {
    { "cpu_cores", "mean", "cores in use (mean)", 1, 0, 0 },
};
static const struct spec mem_specs[] = {
    { "mem_bytes", "max", "memory (highest in each interval)", 1, 0, 0 },
};
static const struct spec psi_specs[] = {
    { "psi_cpu_some", "mean", "CPU (some)", 100, 0, 0 },
    { "psi_memory_some", "mean", "memory (some)", 100, 1, 0 },
    { "psi_io_some", "mean", "I/O (some)", 100, 2, 0 },
    { "psi_memory_full", "mean", "memory (full)", 100, 1, 1 },
    { "psi_io_full", "mean", "I/O (full)", 100, 2, 1 },
};
static const struct spec io_specs[] = {
    { "io_read_Bps", "mean", "read", 1, 0, 0 },
    { "io_write_Bps", "mean", "written", 1, 1, 0 },
};
static const struct spec net_specs[] = {
    { "net_rx_Bps", "mean", "received", 1, 0, 0 },
    { "net_tx_Bps", "mean", "sent", 1, 1, 0 },
};
static const struct spec gpu_util_specs[] = {
    { "gpu_util_pct", "mean", "GPU utilisation", 1, 0, 0 },
};
static const struct spec gpu_mem_specs[] = {
    { "gpu_mem_bytes", "mean", "GPU memory", 1, 1, 0 },
};

#define NSPEC(a) (sizeof (a) / sizeof ((a)[0]))

static const struct panel cpu_panel[] = {
    { U_CORES, "cores", 1, 0, "allocation", true, cpu_specs,
      NSPEC (cpu_specs) },
};
static const struct panel mem_panel[] = {
    { U_BYTES, "memory", 1048576, 0, "limit", false, mem_specs,
      NSPEC (mem_specs) },
};
static const struct panel psi_panel[] = {
    { U_PCT, "% of time stalled", 1, 0, NULL, false, psi_specs,
      NSPEC (psi_specs) },
};
static const struct panel io_panel[] = {
    { U_BPS, "", 1024, 0, NULL, false, io_specs, NSPEC (io_specs) },
};
static const struct panel net_panel[] = {
    { U_BPS, "", 1024, 0, NULL, false, net_specs, NSPEC (net_specs) },
};
static const struct panel gpu_panels[] = {
    { U_PCT, "GPU busy, %", 1, 100, NULL, false, gpu_util_specs,
      NSPEC (gpu_util_specs) },
    { U_BYTES, "GPU memory", 1048576, 0, NULL, false, gpu_mem_specs,
      NSPEC (gpu_mem_specs) },
};

static const struct chart charts[] = {
    { "cpu", "CPU",
      "Cores in use: the mean of each interval (line) and its lowest to "
      "highest sample (band, one node only); dashed: the cores allocated.",
      cpu_panel, 1 },
    { "memory", "Memory",
      "The highest memory use in each interval; dashed: the limit, else "
      "the request.",
      mem_panel, 1 },
    { "psi", "Pressure",
      "Share of the time some task (some) or every task (full) of the "
      "step waited for CPU, memory or I/O.",
      psi_panel, 1 },
    { "io", "Storage I/O",
      "Bytes per second read from and written to "
      "storage, the mean of each interval.",
      io_panel, 1 },
    { "net", "Network",
      "Bytes per second received and sent, the mean of "
      "each interval.",
      net_panel, 1 },
    { "gpu", "GPU",
      "Utilisation and memory of the step's GPUs, the mean "
      "of each interval.",
      gpu_panels, 2 },
};

/* The nodes of a step drawn in its charts: its counted records, in the
 * step's (natural) node order, each with its start relative to the
 * step's, so every node is drawn on the step's time axis.
 */
struct node {
    json_t *rec;
    const char *name;
    double offset_s;
};

struct sctx {
    FILE *out;
    json_t *step;
    struct node node[MAX_NODE_LINES];
    size_t n;       /* nodes drawn */
    size_t counted; /* counted records (nodes) of the step */
    double start_ms;
    double elapsed_s;
};

static json_t *series_of (json_t *rec, const struct spec *sp, const char *st)
{
    return get (get (get (get (rec, "series"), "metrics"), sp->metric), st);
}

static json_t *times_of (json_t *rec)
{
    return get (get (rec, "series"), "t_s");
}

/* Point i of a series array, scaled; NAN when it is not a finite number. */
static double point (json_t *a, size_t i, double scale)
{
    json_t *v = json_array_get (a, i);
    double d;

    if (!json_is_number (v))
        return NAN;
    d = json_number_value (v) * scale;
    return isfinite (d) ? d : NAN;
}

static bool spec_has_data (struct sctx *c, const struct spec *sp)
{
    for (size_t i = 0; i < c->n; i++)
        if (json_array_size (series_of (c->node[i].rec, sp, sp->stat))
            && json_array_size (times_of (c->node[i].rec)))
            return true;
    return false;
}

static bool panel_has_data (struct sctx *c, const struct panel *p)
{
    for (size_t k = 0; k < p->nspecs; k++)
        if (spec_has_data (c, &p->specs[k]))
            return true;
    return false;
}

/* Reference lines: one per distinct value over the drawn nodes. */
struct refs {
    double v[MAX_NODE_LINES];
    const char *what; /* "allocated", "limit" or "requested" */
    size_t n;
};

static void refs_of (struct sctx *c, const struct panel *p, struct refs *r)
{
    r->n = 0;
    r->what = "";
    if (!p->ref)
        return;
    for (size_t i = 0; i < c->n; i++) {
        json_t *rec = c->node[i].rec;
        double v;
        size_t j;

        if (!strcmp (p->ref, "allocation")) {
            v = tr_merge_request_cores (get (rec, "request"));
            r->what = "allocated";
        }
        else {
            v = tr_json_num (get (get (rec, "summary"), "memory"), "limit_"
                                                                   "bytes");
            r->what = "limit";
            if (!known (v)) {
                v = tr_json_num (get (rec, "request"), "mem_bytes");
                r->what = "requested";
            }
        }
        if (!known (v) || v <= 0)
            continue;
        for (j = 0; j < r->n && r->v[j] != v; j++)
            ;
        if (j == r->n)
            r->v[r->n++] = v;
    }
}

/* A step of 1, 2, 2.5 or 5 times a power of ten at or above raw. */
static double nice (double raw)
{
    double mag, f;

    if (!(raw > 0) || !isfinite (raw))
        return 1;
    mag = pow (10, floor (log10 (raw)));
    f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
}

/* The binary unit a byte axis is labelled in: the largest at or below
 * its top, so ticks read "256, 512, 768" under "MiB" and the labels stay
 * short enough for a phone.
 */
static double byte_unit (double top, const char **name)
{
    static const char *const names[] = {
        "B", "KiB", "MiB", "GiB", "TiB", "PiB"
    };
    double unit = 1;
    int u = 0;

    while (top / unit >= 1024 && u < 5) {
        unit *= 1024;
        u++;
    }
    *name = names[u];
    return unit;
}

/* A step for the time axis that people count in, giving at most maxn
 * intervals.
 */
static double time_step (double xmax, int maxn)
{
    static const double steps[] = { 1,    2,    5,     10,    15,    30,
                                    60,   120,  300,   600,   900,   1800,
                                    3600, 7200, 10800, 21600, 43200, 86400 };

    for (size_t i = 0; i < NSPEC (steps); i++)
        if (xmax / steps[i] <= maxn)
            return steps[i];
    return ceil (xmax / 86400 / maxn) * 86400;
}

/* A value with its unit, for reference lines and legends. */
static const char *axis_label (char *buf, size_t size, enum unit u, double v)
{
    char b[32];

    switch (u) {
    case U_CORES:
        snprintf (buf, size, "%.3g", v);
        break;
    case U_PCT:
        snprintf (buf, size, "%.3g%%", v);
        break;
    case U_BYTES:
        tr_units_bytes (buf, size, v);
        break;
    case U_BPS:
        snprintf (buf, size, "%s/s", tr_units_bytes (b, sizeof (b), v));
        break;
    }
    return buf;
}

/* A reference value with its unit: "4 cores", "8.0 GiB". */
static const char *ref_label (char *buf, size_t size, enum unit u, double v)
{
    if (u == U_CORES)
        snprintf (buf, size, "%.6g core%s", v, v == 1 ? "" : "s");
    else
        axis_label (buf, size, u, v);
    return buf;
}

/* mm:ss from the step's start, or HH:MM:SS for an hour or more. */
static const char *time_label (char *buf, size_t size, double s, bool hours)
{
    long v = lround (s);

    if (hours)
        return tr_units_duration (buf, size, s);
    snprintf (buf, size, "%ld:%02ld", v / 60, v % 60);
    return buf;
}

struct axes {
    double xmax, ymax;
};

static double xpos (const struct axes *a, double t)
{
    double x = PL + t / a->xmax * (PR - PL);

    return x < PL ? PL : x > PR ? PR : x;
}

static double ypos (const struct axes *a, double v)
{
    double y = PB - v / a->ymax * (PB - PT);

    return y < PT ? PT : y > PB ? PB : y;
}

/* The time axis shared by every panel of a step: its elapsed time, or
 * the last point when a series runs past it.
 */
static double step_xmax (struct sctx *c)
{
    double xmax = c->elapsed_s > 0 ? c->elapsed_s : 0;

    for (size_t i = 0; i < c->n; i++) {
        json_t *t = times_of (c->node[i].rec);
        size_t n = json_array_size (t);
        double last = n ? point (t, n - 1, 1) + c->node[i].offset_s : NAN;

        if (known (last) && last > xmax)
            xmax = last;
    }
    return xmax > 0 ? (xmax < TIME_MAX ? xmax : TIME_MAX) : 1;
}

static double panel_ymax (struct sctx *c,
                          const struct panel *p,
                          const struct refs *r)
{
    double top = p->floor;

    if (p->fixed_max > 0)
        return p->fixed_max;
    for (size_t k = 0; k < p->nspecs; k++)
        for (size_t i = 0; i < c->n; i++) {
            const struct spec *sp = &p->specs[k];
            json_t *a = series_of (c->node[i].rec, sp, sp->stat);
            json_t *mx = series_of (c->node[i].rec, sp, "max");
            bool band = p->band && k == 0 && c->n == 1;

            for (size_t j = 0; j < json_array_size (a); j++) {
                double v = point (a, j, sp->scale);
                double m = band ? point (mx, j, sp->scale) : NAN;

                if (known (v) && v > top)
                    top = v;
                if (known (m) && m > top)
                    top = m;
            }
        }
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i] > top)
            top = r->v[i];
    /* an absurd value must not round the axis up to infinity */
    return top < AXIS_MAX ? top : AXIS_MAX;
}

static void put_grid (struct sctx *c,
                      const struct panel *p,
                      struct axes *a,
                      const char *title)
{
    FILE *out = c->out;
    bool bytes = p->unit == U_BYTES || p->unit == U_BPS;
    bool hours = a->xmax >= 3600;
    double xstep = time_step (a->xmax, hours ? 4 : 6);
    const char *uname = "";
    double unit = bytes ? byte_unit (a->ymax, &uname) : 1;
    double ystep = nice (a->ymax / unit / 5) * unit;
    char buf[48];
    int nt;

    /* the axis ends on a tick, so the top gridline is labelled */
    nt = (int)ceil (a->ymax / ystep - 1e-9);
    if (nt < 1)
        nt = 1;
    a->ymax = nt * ystep;
    fprintf (out,
             "<svg class=\"plot\" viewBox=\"0 0 %d %d\" role=\"img\" "
             "aria-label=\"",
             CW, CH);
    put_esc (out, title);
    fprintf (out, "\">\n<text x=\"2\" y=\"11\">%s%s%s%s</text>\n", p->ylabel,
             bytes && *p->ylabel ? ", " : "", uname,
             p->unit == U_BPS ? "/s" : "");
    for (int i = 0; i <= nt; i++) {
        double y = ypos (a, i * ystep);

        fprintf (out,
                 "<line class=\"gr\" x1=\"%.1f\" y1=\"%.1f\" "
                 "x2=\"%.1f\" y2=\"%.1f\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">"
                 "%.4g</text>\n",
                 PL, y, PR, y, PL - 3, y + 4, i * ystep / unit);
    }
    for (int i = 0; i * xstep <= a->xmax + 1e-9; i++) {
        double x = xpos (a, i * xstep);

        fprintf (out,
                 "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" "
                 "x2=\"%.1f\" y2=\"%.1f\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s"
                 "</text>\n",
                 x, PB, x, PB + 4, x, PB + 15, x > PR - 12 ? "end" : "middle",
                 time_label (buf, sizeof (buf), i * xstep, hours));
    }
    fprintf (out,
             "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
             "y2=\"%.1f\"/><line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" "
             "x2=\"%.1f\" y2=\"%.1f\"/>\n",
             PL, PB, PR, PB, PL, PT, PL, PB);
}

/* Attributes naming what an element draws, for readers of the source
 * and for tests.
 */
static void put_series_attrs (FILE *out, const struct spec *sp, const char *n)
{
    fprintf (out, " data-series=\"%s\" data-node=\"", sp->metric);
    put_esc (out, n);
    fputs ("\"", out);
}

/* The min-max band of a node's series: one polygon per run of points
 * where both are known.
 */
static void put_band (struct sctx *c,
                      const struct axes *a,
                      const struct spec *sp,
                      const struct node *nd,
                      int colour)
{
    json_t *t = times_of (nd->rec);
    json_t *lo = series_of (nd->rec, sp, "min");
    json_t *hi = series_of (nd->rec, sp, "max");
    size_t n = json_array_size (t), i = 0, j;

    while (i < n) {
        for (j = i; j < n && known (point (t, j, 1))
                    && known (point (lo, j, sp->scale))
                    && known (point (hi, j, sp->scale));
             j++)
            ;
        if (j - i >= 2) {
            fprintf (c->out, "<polygon class=\"band c%d\"", colour);
            put_series_attrs (c->out, sp, nd->name);
            fputs (" points=\"", c->out);
            for (size_t k = i; k < j; k++)
                fprintf (c->out, "%s%.1f,%.1f", k == i ? "" : " ",
                         xpos (a, point (t, k, 1) + nd->offset_s),
                         ypos (a, point (hi, k, sp->scale)));
            for (size_t k = j; k-- > i;)
                fprintf (c->out, " %.1f,%.1f",
                         xpos (a, point (t, k, 1) + nd->offset_s),
                         ypos (a, point (lo, k, sp->scale)));
            fputs ("\"/>\n", c->out);
        }
        i = j + 1;
    }
}

/* A node's series as lines: a missing or non-finite point breaks the
 * line, and a run of one point is a dot (a polyline of one point draws
 * nothing).
 */
static void put_line (struct sctx *c,
                      const struct axes *a,
                      const struct spec *sp,
                      const struct node *nd,
                      int colour,
                      int style)
{
    json_t *t = times_of (nd->rec);
    json_t *v = series_of (nd->rec, sp, sp->stat);
    size_t n = json_array_size (t), i = 0, j;

    if (json_array_size (v) < n)
        n = json_array_size (v);
    while (i < n) {
        for (j = i; j < n && known (point (t, j, 1))
                    && known (point (v, j, sp->scale));
             j++)
            ;
        if (j - i == 1) {
            fprintf (c->out, "<circle class=\"dot c%d\"", colour);
            put_series_attrs (c->out, sp, nd->name);
            fprintf (c->out, " cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>\n",
                     xpos (a, point (t, i, 1) + nd->offset_s),
                     ypos (a, point (v, i, sp->scale)));
        }
        else if (j - i > 1) {
            fprintf (c->out, "<polyline class=\"ln c%d ls%d\"", colour, style);
            put_series_attrs (c->out, sp, nd->name);
            fputs (" points=\"", c->out);
            for (size_t k = i; k < j; k++)
                fprintf (c->out, "%s%.1f,%.1f", k == i ? "" : " ",
                         xpos (a, point (t, k, 1) + nd->offset_s),
                         ypos (a, point (v, k, sp->scale)));
            fputs ("\"/>\n", c->out);
        }
        i = j + 1;
    }
}

static void put_refs (struct sctx *c,
                      const struct panel *p,
                      const struct axes *a,
                      const struct refs *r)
{
    char buf[48];

    for (size_t i = 0; i < r->n; i++) {
        double y = ypos (a, r->v[i]);

        fprintf (c->out,
                 "<line class=\"ref\" data-ref=\"%s\" x1=\"%.1f\" "
                 "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                 p->ref, PL, y, PR, y);
        /* the label goes below a line at the very top */
        fprintf (c->out,
                 "<text class=\"reft\" x=\"%.1f\" y=\"%.1f\" "
                 "text-anchor=\"end\">%s %s</text>\n",
                 PR - 2, y - PT < 12 ? y + 11 : y - 3, r->what,
                 ref_label (buf, sizeof (buf), p->unit, r->v[i]));
    }
}

static void put_panel (struct sctx *c, const struct panel *p, const char *t)
{
    bool multi = c->n > 1;
    struct refs r;
    struct axes a;

    refs_of (c, p, &r);
    a.xmax = step_xmax (c);
    a.ymax = panel_ymax (c, p, &r);
    put_grid (c, p, &a, t);
    if (p->band && !multi)
        put_band (c, &a, &p->specs[0], &c->node[0], p->specs[0].colour);
    for (size_t k = 0; k < p->nspecs; k++)
        for (size_t i = 0; i < c->n; i++) {
            const struct spec *sp = &p->specs[k];

            put_line (c, &a, sp, &c->node[i],
                      multi ? (int)(i % NPALETTE) : sp->colour,
                      multi ? (int)k : sp->style);
        }
    put_refs (c, p, &a, &r);
    fputs ("</svg>\n", c->out);
}

/* A legend key drawn with the chart's own classes, so it looks exactly
 * like what it stands for.
 */
static void put_key (FILE *out, const char *cls, bool band)
{
    if (band)
        fprintf (out,
                 "<li><svg class=\"key\" viewBox=\"0 0 24 8\" "
                 "aria-hidden=\"true\"><rect class=\"band %s\" "
                 "width=\"24\" height=\"8\"/></svg>",
                 cls);
    else
        fprintf (out,
                 "<li><svg class=\"key\" viewBox=\"0 0 24 8\" "
                 "aria-hidden=\"true\"><line class=\"%s\" x1=\"1\" "
                 "y1=\"4\" x2=\"23\" y2=\"4\"/></svg>",
                 cls);
}

static void put_legend (struct sctx *c, const struct chart *ch)
{
    FILE *out = c->out;
    bool multi = c->n > 1;
    char cls[32], buf[48];

    fputs ("<ul class=\"legend\">\n", out);
    if (multi)
        for (size_t i = 0; i < c->n; i++) {
            snprintf (cls, sizeof (cls), "ln c%zu", i % NPALETTE);
            put_key (out, cls, false);
            put_esc (out, c->node[i].name);
            fputs ("</li>\n", out);
        }
    for (size_t p = 0; p < ch->npanels; p++) {
        const struct panel *pn = &ch->panels[p];
        struct refs r;

        for (size_t k = 0; k < pn->nspecs; k++) {
            const struct spec *sp = &pn->specs[k];

            /* with several nodes colours name nodes; a panel's specs
             * differ by dash, so a lone spec needs no key
             */
            if (!spec_has_data (c, sp) || (multi && pn->nspecs == 1))
                continue;
            if (multi)
                snprintf (cls, sizeof (cls), "ln cn ls%zu", k);
            else
                snprintf (cls, sizeof (cls), "ln c%d ls%d", sp->colour,
                          sp->style);
            put_key (out, cls, false);
            fprintf (out, "%s</li>\n", sp->label);
        }
        if (pn->band && !multi && spec_has_data (c, &pn->specs[0])) {
            snprintf (cls, sizeof (cls), "c%d", pn->specs[0].colour);
            put_key (out, cls, true);
            fputs ("lowest to highest sample</li>\n", out);
        }
        refs_of (c, pn, &r);
        for (size_t i = 0; i < r.n; i++) {
            put_key (out, "ref", false);
            fprintf (out, "%s %s</li>\n", r.what,
                     ref_label (buf, sizeof (buf), pn->unit, r.v[i]));
        }
    }
    if (c->counted > c->n)
        fprintf (out, "<li>%zu more nodes not drawn</li>\n", c->counted - c->n);
    fputs ("</ul>\n", out);
}

static void put_chart (struct sctx *c, const struct chart *ch)
{
    FILE *out = c->out;
    json_t *rec0 = c->node[0].rec;
    bool any = false;
    char buf[32];

    for (size_t p = 0; p < ch->npanels; p++)
        if (panel_has_data (c, &ch->panels[p]))
            any = true;
    fprintf (out,
             "<figure class=\"chart\" data-metric=\"%s\"%s>\n"
             "<figcaption><b>%s.</b> ",
             ch->metric, any ? "" : " data-empty=\"true\"", ch->title);
    if (!any) {
        fprintf (out,
                 "</figcaption>\n<p class=\"empty\">%s: not recorded "
                 "for this step.</p>\n</figure>\n",
                 ch->title);
        return;
    }
    fprintf (out, "%s Intervals of %s s; time from the step's start.",
             ch->caption,
             fmt (buf, sizeof (buf), F_G,
                  tr_json_num (get (rec0, "series"), "interval_s")));
    if (c->n > 1)
        fputs (" One line per node.", out);
    if (!strcmp (ch->metric, "memory")) {
        fputs (" Memory means: ", out);
        put_esc (out, tr_json_str_or (get (get (rec0, "summary"), "memory"),
                                      "definitio"
                                      "n",
                                      ""));
        fputs (".", out);
    }
    if (!strcmp (ch->metric, "net")) {
        for (size_t i = 0; i < c->n; i++)
            if (!strcmp (tr_json_str_or (get (get (c->node[i].rec, "summary"),
                                              "network"),
                                         "scope", ""),
                         "node")) {
                fputs (" Node-wide counters: they include other work on the "
                       "node.",
                       out);
                break;
            }
    }
    fputs ("</figcaption>\n", out);
    for (size_t p = 0; p < ch->npanels; p++)
        if (panel_has_data (c, &ch->panels[p]))
            put_panel (c, &ch->panels[p], ch->title);
    put_legend (c, ch);
    fputs ("</figure>\n", out);
}

/* Per-node table */

enum ncol {
    N_ELAPSED,
    N_CPU,
    N_CORES,
    N_MEM,
    N_READ,
    N_WRITE,
    N_RX,
    N_TX,
    NCOLS,
};

/* Storage bytes of a node: device counters, else the processes' own. */
static double node_io (json_t *rec, const char *k)
{
    json_t *io = get (get (rec, "summary"), "io");
    double v = NAN;

    if (strcmp (tr_json_str_or (io, "source", ""), "none"))
        v = tr_json_num (io, k);
    return known (v) ? v : tr_json_num (get (io, "proc"), k);
}

static double node_net (json_t *rec, const char *k)
{
    json_t *ifs = get (get (get (rec, "summary"), "network"), "interfaces");
    double sum = 0;
    json_t *i;
    size_t n;

    if (!json_is_array (ifs))
        return NAN;
    json_array_foreach (ifs, n, i)
    {
        if (known (tr_json_num (i, k)))
            sum += tr_json_num (i, k);
    }
    return sum;
}

static void node_values (json_t *recs, json_t *row, double v[NCOLS])
{
    json_t *rec = json_array_get (recs, (size_t)tr_json_num (row, "index"));
    double el = tr_json_num (row, "elapsed_s");

    v[N_ELAPSED] = el;
    v[N_CPU] = tr_json_num (row, "cpu_total_s");
    v[N_CORES] = el > 0 ? v[N_CPU] / el : NAN;
    v[N_MEM] = tr_json_num (row, "mem_peak_bytes");
    v[N_READ] = node_io (rec, "read_bytes");
    v[N_WRITE] = node_io (rec, "write_bytes");
    v[N_RX] = node_net (rec, "rx_bytes");
    v[N_TX] = node_net (rec, "tx_bytes");
}

static void put_node_table (struct html *h, json_t *step)
{
    static const enum fmt kind[NCOLS] = { F_DUR,   F_SECS,  F_CORES, F_BYTES,
                                          F_BYTES, F_BYTES, F_BYTES, F_BYTES };
    FILE *out = h->out;
    json_t *rows = get (step, "rows"), *row;
    double lo[NCOLS], hi[NCOLS], v[NCOLS];
    int nk[NCOLS] = { 0 };
    char buf[48], ec[64];
    size_t i;

    for (int k = 0; k < NCOLS; k++)
        lo[k] = hi[k] = NAN;
    json_array_foreach (rows, i, row)
    {
        if (!json_is_true (get (row, "counted")))
            continue;
        node_values (h->recs, row, v);
        for (int k = 0; k < NCOLS; k++)
            if (known (v[k])) {
                lo[k] = nk[k] && lo[k] <= v[k] ? lo[k] : v[k];
                hi[k] = nk[k] && hi[k] >= v[k] ? hi[k] : v[k];
                nk[k]++;
            }
    }
    fputs ("<div class=\"scroll\"><table class=\"nodes\">\n<caption>Per "
           "node (\xe2\x96\xb2 highest, \xe2\x96\xbc lowest)</caption>\n"
           "<thead><tr><th>Node</th><th>State</th><th class=\"num\">Elapsed"
           "</th><th class=\"num\">CPU time</th><th class=\"num\">Mean cores"
           "</th><th class=\"num\">Peak memory</th><th class=\"num\">Read"
           "</th><th class=\"num\">Written</th><th class=\"num\">Received"
           "</th><th class=\"num\">Sent</th></tr></thead>\n<tbody>\n",
           out);
    json_array_foreach (rows, i, row)
    {
        if (!json_is_true (get (row, "counted")))
            continue;
        node_values (h->recs, row, v);
        fputs ("<tr><th>", out);
        put_esc (out, tr_json_str_or (row, "node", ""));
        fputs ("</th><td>", out);
        put_state (out, tr_json_str_or (row, "state", ""));
        if (*tr_stepsum_exit_of (row, tr_json_str_or (row, "state", ""), ec,
                                 sizeof (ec))
            && strcmp (ec, "0:0"))
            fprintf (out, " (exit code %s)", ec);
        fputs ("</td>", out);
        for (int k = 0; k < NCOLS; k++) {
            /* marked only where the nodes differ */
            bool mark = nk[k] > 1 && hi[k] > lo[k] && known (v[k]);
            bool top = mark && v[k] == hi[k], low = mark && v[k] == lo[k];

            fprintf (out, "<td class=\"num%s\">%s%s</td>",
                     top   ? " max"
                     : low ? " min"
                           : "",
                     fmt (buf, sizeof (buf), kind[k], v[k]),
                     top   ? " \xe2\x96\xb2"
                     : low ? " \xe2\x96\xbc"
                           : "");
        }
        fputs ("</tr>\n", out);
    }
    fputs ("</tbody>\n</table></div>\n", out);
}

/* Tools timeline */

/* " · exit 1×3, signal 9×1" for the non-zero exit codes and signals of
 * a tool; false when there are none.
 */
static bool put_bad_exits (FILE *out, json_t *tool, bool write)
{
    static const char *const members[] = { "exit_codes", "signals" };
    static const char *const words[] = { "exit", "signal" };
    bool any = false;
    const char *k;
    json_t *v;

    for (int m = 0; m < 2; m++)
        json_object_foreach (get (tool, members[m]), k, v)
        {
            if ((m == 0 && !strcmp (k, "0")) || json_integer_value (v) <= 0)
                continue;
            if (write) {
                fprintf (out, "%s%s ", any ? ", " : " \xc2\xb7 ", words[m]);
                put_esc (out, k);
                fprintf (out, "\xc3\x97%lld",
                         (long long)json_integer_value (v));
            }
            any = true;
        }
    return any;
}

/* The command line of a tool, from the first node's record that has
 * one (merged tools do not keep it), else its name.
 */
static const char *tool_cmdline (struct sctx *c, const char *name)
{
    json_t *t;
    size_t k;

    for (size_t i = 0; i < c->n; i++)
        json_array_foreach (get (c->node[i].rec, "tools"), k, t)
        {
            if (!strcmp (tr_json_str_or (t, "name", ""), name)
                && *tr_json_str_or (t, "cmdline", ""))
                return tr_json_str_or (t, "cmdline", "");
        }
    return name;
}

static void put_timeline (struct sctx *c)
{
    FILE *out = c->out;
    /* the tools the text view lists: not the scheduler's own processes */
    json_t *tools = tr_stepsum_tools_shown (get (c->step, "tools")), *tl;
    size_t n = json_array_size (tools);
    double xmax = c->elapsed_s > 0 ? c->elapsed_s : 0, height, step;
    struct axes a;
    char b1[32], b2[32];

    if (n > MAX_TOOLS)
        n = MAX_TOOLS;
    fputs ("<figure class=\"timeline\"", out);
    if (n == 0) {
        fputs (" data-empty=\"true\"><figcaption><b>Programs.</b>"
               "</figcaption>\n<p class=\"empty\">Programs: not recorded for "
               "this step.</p>\n</figure>\n",
               out);
        json_decref (tools);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double e = tr_json_num (json_array_get (tools, i), "last_end_unix_ms");

        if (known (e) && (e - c->start_ms) / 1000 > xmax)
            xmax = (e - c->start_ms) / 1000;
    }
    a.xmax = xmax > 0 ? (xmax < TIME_MAX ? xmax : TIME_MAX) : 1;
    height = TL_TOP + n * TL_ROW + 22;
    fprintf (out,
             "><figcaption><b>Programs.</b> When each program ran, from "
             "its first start to its last end, busiest first (at most "
             "%d of %zu), with processes, CPU time and the largest "
             "resident set; non-zero exits are marked.</figcaption>\n"
             "<svg viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\""
             "Programs\">\n",
             MAX_TOOLS, json_array_size (tools), CW, height);
    for (size_t i = 0; i < n; i++) {
        double y0 = TL_TOP + i * TL_ROW;
        double s, e, x0, x1;
        bool bad;

        tl = json_array_get (tools, i);
        bad = put_bad_exits (out, tl, false);
        s = (tr_json_num (tl, "first_start_unix_ms") - c->start_ms) / 1000;
        e = (tr_json_num (tl, "last_end_unix_ms") - c->start_ms) / 1000;
        fputs ("<g class=\"tool\"", out);
        if (bad)
            fputs (" data-exit=\"nonzero\"", out);
        fputs ("><title>", out);
        put_esc (out, tool_cmdline (c, tr_json_str_or (tl, "name", "")));
        fprintf (out, "</title><text x=\"4\" y=\"%.1f\"%s>", y0 + 11,
                 bad ? " class=\"bad\"" : "");
        put_esc_cut (out, tr_json_str_or (tl, "name", ""), TOOL_NAME_CUT);
        fprintf (out, " \xc3\x97%lld",
                 (long long)json_integer_value (get (tl, "count")));
        put_bad_exits (out, tl, true);
        /* the figures on a line of their own, to fit a phone's width */
        fprintf (out,
                 "</text><text class=\"st\" x=\"4\" y=\"%.1f\">%s CPU "
                 "\xc2\xb7 peak %s%s</text>",
                 y0 + 23,
                 fmt (b1, sizeof (b1), F_SECS, tr_json_num (tl, "cpu_s")),
                 fmt (b2, sizeof (b2), F_BYTES,
                      tr_json_num (tl, "peak_rss_bytes")),
                 known (s) && known (e) ? "" : " \xc2\xb7 time not recorded");
        if (known (s) && known (e)) {
            x0 = 4 + (s < 0 ? 0 : s) / a.xmax * (CW - 8);
            x1 = 4 + (e < s ? s : e) / a.xmax * (CW - 8);
            if (x0 > CW - 4)
                x0 = CW - 4;
            if (x1 > CW - 4)
                x1 = CW - 4;
            fprintf (out,
                     "<rect class=\"tb%s\" x=\"%.1f\" y=\"%.1f\" "
                     "width=\"%.1f\" height=\"8\"/>",
                     bad ? " bad" : "", x0, y0 + 27,
                     x1 - x0 < 1.5 ? 1.5 : x1 - x0);
        }
        fputs ("</g>\n", out);
    }
    step = time_step (a.xmax, a.xmax >= 3600 ? 4 : 6);
    fprintf (out,
             "<line class=\"ax\" x1=\"4\" y1=\"%.1f\" x2=\"%d\" "
             "y2=\"%.1f\"/>\n",
             height - 20, CW - 4, height - 20);
    for (int i = 0; i * step <= a.xmax + 1e-9; i++) {
        double x = 4 + i * step / a.xmax * (CW - 8);

        fprintf (out,
                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s"
                 "</text>\n",
                 x, height - 8,
                 i == 0        ? "start"
                 : x > CW - 20 ? "end"
                               : "middle",
                 time_label (b1, sizeof (b1), i * step, a.xmax >= 3600));
    }
    fputs ("</svg>\n</figure>\n", out);
    json_decref (tools);
}

/* Step sections */

static void put_step (struct html *h, struct hstep *hs)
{
    FILE *out = h->out;
    json_t *step = hs->step, *row;
    struct sctx c = { .out = out, .step = step };
    char b1[32], b2[32];
    double span;
    size_t i;

    c.start_ms = tr_json_num (step, "start_unix_ms");
    /* nodes that started late end after the longest node's elapsed
     * time: the axis spans the step from its first start to its end
     */
    c.elapsed_s = tr_json_num (step, "elapsed_s");
    span = (tr_json_num (step, "end_unix_ms") - c.start_ms) / 1000;
    if (known (span) && !(c.elapsed_s >= span))
        c.elapsed_s = span;
    json_array_foreach (get (step, "rows"), i, row)
    {
        json_t *rec = json_array_get (h->recs, (size_t)tr_json_num (row, "inde"
                                                                         "x"));

        if (!json_is_true (get (row, "counted")))
            continue;
        c.counted++;
        if (c.n == MAX_NODE_LINES)
            continue;
        c.node[c.n].rec = rec;
        c.node[c.n].name = tr_json_str_or (row, "node", "");
        c.node[c.n].offset_s =
            (tr_json_num (get (rec, "time"), "start_unix_ms") - c.start_ms)
            / 1000;
        if (!known (c.node[c.n].offset_s))
            c.node[c.n].offset_s = 0;
        c.n++;
    }
    fputs ("<section class=\"step\" id=\"step-", out);
    put_esc (out, tr_json_str_or (step, "step_id", ""));
    fputs ("\" data-step=\"", out);
    put_esc (out, tr_json_str_or (step, "step_id", ""));
    fputs ("\">\n<h2>", out);
    put_step_title (out, step);
    fputs ("</h2>\n<p class=\"meta\">", out);
    put_state (out, tr_json_str_or (step, "state", ""));
    fputs (" \xc2\xb7 started ", out);
    put_time (out, c.start_ms);
    fprintf (out, " \xc2\xb7 elapsed %s \xc2\xb7 %s CPU \xc2\xb7 on ",
             fmt (b1, sizeof (b1), F_DUR, c.elapsed_s),
             fmt (b2, sizeof (b2), F_SECS, hs->sum.cpu_s));
    json_array_foreach (get (step, "nodes"), i, row)
    {
        if (i == MAX_HEADER_NODES) {
            fputs (", \xe2\x80\xa6", out);
            break;
        }
        fputs (i ? ", " : "", out);
        put_esc (out, json_string_value (row));
    }
    if (json_is_integer (get (step, "nodes_missing")))
        fprintf (out, " (no record from %lld of %lld nodes)",
                 (long long)json_integer_value (get (step, "nodes_missing")),
                 (long long)json_integer_value (get (step, "nodes_expected")));
    fputs ("</p>\n<div class=\"charts\">\n", out);
    for (i = 0; i < NSPEC (charts); i++)
        put_chart (&c, &charts[i]);
    fputs ("</div>\n", out);
    if (c.counted > 1)
        put_node_table (h, step);
    put_timeline (&c);
    fputs ("</section>\n", out);
}

static void put_footer (struct html *h)
{
    FILE *out = h->out;
    bool open = false;
    json_t *row;
    size_t k;

    fputs ("<footer id=\"footer\">\n<p>Generated by tracer " PACKAGE_VERSION
           " at ",
           out);
    put_time (out, h->now * 1000);
    fputs (". This file is self-contained: it runs no scripts and loads "
           "nothing from the network.</p>\n",
           out);
    if (h->n > MAX_STEP_SECTIONS)
        fprintf (out,
                 "<p class=\"note\">Charts are shown for the first %d "
                 "of %zu steps.</p>\n",
                 MAX_STEP_SECTIONS, h->n);
    for (size_t i = 0; h->notes && i < h->n; i++)
        json_array_foreach (get (h->hs[i].step, "rows"), k, row)
        {
            char key[32];
            const char *note;

            snprintf (key, sizeof (key), "%lld",
                      (long long)tr_json_num (row, "index"));
            note = json_string_value (get (h->notes, key));
            if (!note || !*note)
                continue;
            if (!open)
                fputs ("<ul class=\"notes\">\n", out);
            open = true;
            fputs ("<li>Record of step ", out);
            put_esc (out, tr_json_str_or (h->hs[i].step, "step_id", ""));
            fputs (" on ", out);
            put_esc (out, tr_json_str_or (row, "node", ""));
            fputs (": ", out);
            put_esc (out, note);
            fputs ("</li>\n", out);
        }
    if (open)
        fputs ("</ul>\n", out);
    fputs ("</footer>\n", out);
}

static void put_document (struct html *h)
{
    FILE *out = h->out;
    json_t *id = get (json_array_get (h->recs, 0), "identity");
    const char *name = first_id (h->recs, "job_name");

    fputs ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
           "<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width,"
           "initial-scale=1\">\n"
           "<meta name=\"generator\" content=\"tracer " PACKAGE_VERSION "\">\n"
           "<title>Job ",
           out);
    put_esc (out, tr_json_str_or (id, "job_id", ""));
    if (*name) {
        fputs (" ", out);
        put_esc (out, name);
    }
    fprintf (out,
             " \xe2\x80\x94 tracer report</title>\n<style>\n%s"
             "</style>\n</head>\n<body>\n",
             css);
    put_header (h);
    put_nav (h);
    fputs ("<main>\n", out);
    put_summary (h);
    put_diagnosis (h);
    put_recommendations (h);
    for (size_t i = 0; i < h->n && i < MAX_STEP_SECTIONS; i++)
        put_step (h, &h->hs[i]);
    fputs ("</main>\n", out);
    put_footer (h);
    fputs ("</body>\n</html>\n", out);
}

int tr_html_job_report (FILE *out,
                        json_t *recs,
                        json_t *notes,
                        const struct tr_html_opts *o)
{
    struct tr_diag_thresholds defaults;
    const struct tr_diag_thresholds *t = o ? o->diag : NULL;
    struct html h = { .out = out, .recs = recs, .notes = notes };
    tr_strpool_t *pool = NULL;
    json_t *steps = NULL;
    int rc = -1, saved;

    if (!out || !one_job (recs)) {
        errno = EINVAL;
        return -1;
    }
    if (!t) {
        tr_diag_defaults (&defaults);
        t = &defaults;
    }
    h.now = o && o->now > 0 ? o->now : (double)time (NULL);
    if (!(pool = tr_strpool_create ()) || !(steps = tr_merge_steps (recs)))
        goto done;
    h.n = json_array_size (steps);
    if (!(h.hs = calloc (h.n ? h.n : 1, sizeof (*h.hs))))
        goto done;
    for (size_t i = 0; i < h.n; i++) {
        struct hstep *hs = &h.hs[i];

        hs->step = json_array_get (steps, i);
        if (tr_report_step_summary (recs, hs->step, pool, &hs->sum) < 0)
            goto done;
        if (o && o->recommend)
            hs->rec = o->recommend (&hs->sum, o->arg);
        if (!(hs->findings = tr_diagnose_advised (&hs->sum, t, hs->rec)))
            goto done;
    }
    if (job_nodes (&h) < 0)
        goto done;
    put_document (&h);
    if (fflush (out) || ferror (out)) {
        errno = EIO;
        goto done;
    }
    rc = 0;
done:
    saved = errno;
    for (size_t i = 0; h.hs && i < h.n; i++) {
        json_decref (h.hs[i].findings);
        json_decref (h.hs[i].rec);
    }
    free (h.hs);
    free (h.nodes);
    json_decref (steps);
    tr_strpool_destroy (pool);
    errno = saved;
    return rc;
}

/* --- The run page (tracer-report --run=ID --html) --------------------- */

static const char run_css[] =
    "svg.gantt{max-width:none}svg .gb{fill:var(--ok)}"
    "svg .gb.run{fill:var(--info)}svg .gb.warn{fill:var(--warn)}"
    "svg .gb.bad{fill:var(--crit)}svg .lane{fill:var(--grid);"
    "fill-opacity:.35}svg .pb{fill:var(--info)}svg .pb.mem{fill:var(--warn)}"
    "svg .pb.over{fill:var(--crit)}\n";

#define G_W 960.0     /* the Gantt's width */
#define G_LABEL 130.0 /* its node labels' column */
#define G_LANE 16.0   /* a lane's height */
#define G_TOP 6.0
#define G_AXIS 28.0
#define P_ROW 34.0 /* a process's row in its chart */

/* A task's lane on the Gantt: its node's row, and a lane within the
 * node where tasks overlap in time.
 */
struct gbar {
    json_t *task;
    size_t node; /* index in nodes */
    size_t lane; /* its lane in the whole chart */
};

struct gnode {
    const char *name;
    size_t first_lane, nlanes;
    double *ends; /* each lane's latest end, ms */
};

static int cmp_gnode (const void *a, const void *b)
{
    return tr_merge_natcmp (((const struct gnode *)a)->name,
                            ((const struct gnode *)b)->name);
}

/* A task's bar by its state in Slurm's words (tr_states_rank): good,
 * running, unknown; a cancel is a warning, every other end is bad.
 */
static const char *gantt_class (const char *state)
{
    int rank = tr_states_rank (state);

    return rank == tr_states_rank ("completed") ? "gb"
           : rank == tr_states_rank ("running") ? "gb run"
           : rank == tr_states_rank ("unknown")
                   || rank == tr_states_rank ("cancelled")
               ? "gb warn"
               : "gb bad";
}

/* The job page's colour classes, for a state in Slurm's words */
static const char *run_state_class (const char *state)
{
    const char *c = gantt_class (state);

    return !strcmp (c, "gb")        ? "state-good"
           : !strcmp (c, "gb run")  ? "state-run"
           : !strcmp (c, "gb warn") ? "state-warn"
                                    : "state-bad";
}

static void put_clock (FILE *out, double ms)
{
    time_t t = (time_t)(ms / 1000.0);
    struct tm tm;
    char buf[32];

    if (known (ms) && localtime_r (&t, &tm)) {
        strftime (buf, sizeof (buf), "%H:%M:%S", &tm);
        fputs (buf, out);
    }
    else
        fputs (unknown, out);
}

static void put_run_cell (FILE *out, json_t *run, const char *field)
{
    char buf[128];

    if (tr_runs_cell (buf, sizeof (buf), run, field) < 0 || !*buf)
        fputs (unknown, out);
    else
        put_esc (out, buf);
}

static void put_run_header (FILE *out, json_t *view)
{
    json_t *run = get (view, "run");
    static const struct {
        const char *label, *field;
    } facts[] = {
        { "Pipeline", "Pipeline" },
        { "User", "User" },
        { "Start", "Start" },
        { "End", "End" },
        { "Elapsed", "Elapsed" },
        { "Jobs", "Jobs" },
        { "Steps", "Steps" },
        { "Failed jobs", "Failed" },
        { "Core-hours used", "UsedCPUh" },
        { "Core-hours allocated", "AllocCPUh" },
        { "Cost", "Cost" },
        { "Waste %", "Waste%" },
    };

    fputs ("<header id=\"run\">\n<p class=\"kicker\">tracer run view</p>\n"
           "<h1>Run ",
           out);
    put_esc (out, tr_json_str_or (run, "run", ""));
    fputs ("</h1>\n<dl class=\"facts\">\n", out);
    for (size_t i = 0; i < sizeof (facts) / sizeof (facts[0]); i++) {
        fputs ("<dt>", out);
        put_esc (out, facts[i].label);
        fputs ("</dt><dd>", out);
        put_run_cell (out, run, facts[i].field);
        if (!strcmp (facts[i].field, "Cost")
            && *tr_json_str_or (view, "currency", "")) {
            fputs (" ", out);
            put_esc (out, tr_json_str_or (view, "currency", ""));
        }
        fputs ("</dd>\n", out);
    }
    fputs ("</dl>\n</header>\n", out);
}

static void put_task_title (FILE *out, json_t *t)
{
    char b1[32], b2[32], b3[32], b4[32];

    fputs ("<title>Job ", out);
    put_esc (out, tr_json_str_or (t, "job_id", ""));
    fputs (" (", out);
    put_esc (out, tr_json_str_or (t, "process", ""));
    fputs (") on ", out);
    put_esc (out, *tr_json_str_or (t, "node", "")
                      ? tr_json_str_or (t, "node", "")
                      : unknown);
    fputs (": ", out);
    put_esc (out, tr_json_str_or (t, "state", ""));
    fprintf (out, ", %s, CPU %s, memory %s of %s",
             fmt (b1, sizeof (b1), F_DUR, tr_json_num (t, "elapsed_s")),
             fmt (b2, sizeof (b2), F_PCT, tr_json_num (t, "cpu_eff")),
             fmt (b3, sizeof (b3), F_BYTES, tr_json_num (t, "mem_peak_bytes")),
             fmt (b4, sizeof (b4), F_BYTES, tr_json_num (t, "req_mem_bytes")));
    if (*tr_json_str_or (t, "diagnosis_text", "")) {
        fputs (". ", out);
        put_esc (out, tr_json_str_or (t, "diagnosis_text", ""));
    }
    fputs ("</title>", out);
}

static void put_gantt (FILE *out,
                       json_t *view,
                       struct gbar *bars,
                       size_t nbars,
                       struct gnode *nodes,
                       size_t nnodes,
                       size_t nlanes,
                       double t0,
                       double t1)
{
    double h = G_TOP + (double)nlanes * G_LANE + G_AXIS;
    double span = t1 > t0 ? t1 - t0 : 1;
    double plot = G_W - G_LABEL - 10;

    (void)view;
    fputs ("<section id=\"timeline\">\n<h2>Timeline</h2>\n", out);
    if (nbars == 0) {
        fputs ("<p class=\"empty\">No task has a known start.</p>\n"
               "</section>\n",
               out);
        return;
    }
    fprintf (out,
             "<figure class=\"gantt\" data-tasks=\"%zu\">\n"
             "<div class=\"scroll\"><svg class=\"gantt\" viewBox=\"0 0 %.0f "
             "%.0f\" width=\"%.0f\" role=\"img\" aria-label=\"Gantt chart of "
             "the run's tasks by node\">\n",
             nbars, G_W, h, G_W);
    for (size_t i = 0; i < nnodes; i++) {
        double y = G_TOP + (double)nodes[i].first_lane * G_LANE;

        if (i % 2 == 0)
            fprintf (out,
                     "<rect class=\"lane\" x=\"0\" y=\"%.1f\" width=\"%.0f\" "
                     "height=\"%.1f\"/>\n",
                     y, G_W, (double)nodes[i].nlanes * G_LANE);
        fprintf (out, "<text x=\"4\" y=\"%.1f\">", y + G_LANE - 2);
        put_esc_cut (out, *nodes[i].name ? nodes[i].name : unknown, 18);
        fputs ("</text>\n", out);
    }
    for (int k = 0; k <= 4; k++) {
        double x = G_LABEL + plot * k / 4.0;
        double yb = G_TOP + (double)nlanes * G_LANE;

        fprintf (out,
                 "<line class=\"gr\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                 "y2=\"%.1f\"/><text x=\"%.1f\" y=\"%.1f\" "
                 "text-anchor=\"%s\">",
                 x, G_TOP, x, yb, x, yb + 16,
                 k == 0   ? "start"
                 : k == 4 ? "end"
                          : "middle");
        put_clock (out, t0 + span * k / 4.0);
        fputs ("</text>\n", out);
    }
    for (size_t i = 0; i < nbars; i++) {
        json_t *t = bars[i].task;
        double s = tr_json_num (t, "start_unix_ms"), e = tr_json_num (t, "end_"
                                                                         "unix_"
                                                                         "ms");
        double x0, x1;

        if (!known (e))
            e = t1;
        x0 = G_LABEL + plot * (s - t0) / span;
        x1 = G_LABEL + plot * (e - t0) / span;
        if (x1 - x0 < 1)
            x1 = x0 + 1;
        fprintf (out, "<rect class=\"%s\" data-job=\"",
                 gantt_class (tr_json_str_or (t, "state", "")));
        put_esc (out, tr_json_str_or (t, "job_id", ""));
        fprintf (out,
                 "\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\">", x0,
                 G_TOP + (double)bars[i].lane * G_LANE + 1, x1 - x0,
                 G_LANE - 2);
        put_task_title (out, t);
        fputs ("</rect>\n", out);
    }
    fputs ("</svg></div>\n<figcaption><b>Every task across the nodes</b>: "
           "a bar per task from its start to its end, a row per node (more "
           "where its tasks overlap); hover a bar for its figures.</figcaption>"
           "\n<ul class=\"legend\"><li><svg class=\"key\" viewBox=\"0 0 16 6\">"
           "<rect class=\"gb\" width=\"16\" height=\"6\"/></svg>completed</li>"
           "<li><svg class=\"key\" viewBox=\"0 0 16 6\"><rect class=\"gb run\" "
           "width=\"16\" height=\"6\"/></svg>running</li><li><svg "
           "class=\"key\" "
           "viewBox=\"0 0 16 6\"><rect class=\"gb warn\" width=\"16\" "
           "height=\"6\"/></svg>cancelled, unknown</li><li><svg class=\"key\" "
           "viewBox=\"0 0 16 6\"><rect class=\"gb bad\" width=\"16\" "
           "height=\"6\"/></svg>failed, timeout, out of memory</li></ul>\n"
           "</figure>\n</section>\n",
           out);
}

/* Bars of one share per process: CPU efficiency, memory peak over the
 * request.
 */
static void put_process_chart (FILE *out, json_t *procs)
{
    size_t n = json_array_size (procs), i;
    double h = 24 + (double)n * P_ROW;
    double x0 = 150, w = 360;
    json_t *p;

    fprintf (out,
             "<figure class=\"chart pchart\" data-metric=\"process\">\n"
             "<svg viewBox=\"0 0 620 %.0f\" role=\"img\" aria-label=\"CPU "
             "efficiency and memory peak over the request, per process\">\n",
             h);
    for (int k = 0; k <= 4; k++)
        fprintf (out,
                 "<line class=\"gr\" x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" "
                 "y2=\"%.1f\"/><text x=\"%.1f\" y=\"11\" "
                 "text-anchor=\"middle\">%d%%</text>\n",
                 x0 + w * k / 4, x0 + w * k / 4, h - 4, x0 + w * k / 4, 25 * k);
    json_array_foreach (procs, i, p)
    {
        double y = 18 + (double)i * P_ROW;
        double v[2] = { tr_json_num (p, "cpu_eff"), tr_json_num (p, "mem_"
                                                                    "eff") };
        static const char *const cls[2] = { "pb", "pb mem" };
        static const char *const what[2] = { "CPU efficiency", "memory peak / "
                                                               "request" };
        char b[32];

        fprintf (out, "<text x=\"4\" y=\"%.1f\">", y + 18);
        put_esc_cut (out,
                     *tr_json_str_or (p, "process", "")
                         ? tr_json_str_or (p, "process", "")
                         : "(no process)",
                     24);
        fputs ("</text>\n", out);
        for (int k = 0; k < 2; k++) {
            double yy = y + 2 + k * 14;

            if (known (v[k])) {
                fprintf (out,
                         "<rect class=\"%s%s\" x=\"%.1f\" y=\"%.1f\" "
                         "width=\"%.2f\" height=\"11\"><title>",
                         cls[k], v[k] > 1 ? " over" : "", x0, yy,
                         w
                             * (v[k] > 1   ? 1
                                : v[k] < 0 ? 0
                                           : v[k]));
                put_esc (out, tr_json_str_or (p, "process", ""));
                fprintf (out, ": %s %s</title></rect>\n", what[k],
                         fmt (b, sizeof (b), F_PCT, v[k]));
            }
            fprintf (out, "<text x=\"%.1f\" y=\"%.1f\">%s %s</text>\n",
                     x0 + w + 6, yy + 10, k ? "mem" : "CPU",
                     fmt (b, sizeof (b), F_PCT, v[k]));
        }
    }
    fputs ("</svg>\n<figcaption><b>Per process</b>: CPU efficiency (blue) "
           "and memory peak over the request (amber; red above 100%), the "
           "means of its tasks.</figcaption>\n</figure>\n",
           out);
}

static void put_process_table (FILE *out, json_t *view)
{
    json_t *procs = get (view, "processes"), *p, *it;
    const char *key;
    size_t i, k;
    char b[64];

    fputs ("<section id=\"processes\">\n<h2>Processes</h2>\n", out);
    put_process_chart (out, procs);
    fputs ("<div class=\"scroll\"><table class=\"processes\">\n"
           "<tr><th>Process</th><th class=\"num\">Tasks</th>"
           "<th class=\"num\">Failed</th><th>Causes</th>"
           "<th class=\"num\">CPU eff.</th><th class=\"num\">Mem eff.</th>"
           "<th class=\"num\">Time eff.</th><th class=\"num\">Core-h used</th>"
           "<th class=\"num\">Share</th><th class=\"num\">Cost</th>"
           "<th class=\"num\">Share</th><th>Bottleneck</th>"
           "<th>Next time</th><th>Tools</th></tr>\n",
           out);
    json_array_foreach (procs, i, p)
    {
        json_t *fig = get (p, "figures");
        bool first = true;

        fputs ("<tr><td>", out);
        put_esc (out, *tr_json_str_or (p, "process", "")
                          ? tr_json_str_or (p, "process", "")
                          : "(no process)");
        fprintf (out,
                 "</td><td class=\"num\">%.0f</td><td class=\"num\">"
                 "%.0f</td><td>",
                 tr_json_num (p, "tasks"), tr_json_num (p, "failed"));
        json_object_foreach (get (p, "causes"), key, it)
        {
            fputs (first ? "" : ", ", out);
            put_esc (out, key);
            fprintf (out, " &times;%lld", (long long)json_integer_value (it));
            first = false;
        }
        fprintf (out, "</td><td class=\"num\">%s</td>",
                 fmt (b, sizeof (b), F_PCT, tr_json_num (p, "cpu_eff")));
        fprintf (out, "<td class=\"num\">%s</td>",
                 fmt (b, sizeof (b), F_PCT, tr_json_num (p, "mem_eff")));
        fprintf (out, "<td class=\"num\">%s</td><td class=\"num\">",
                 fmt (b, sizeof (b), F_PCT, tr_json_num (p, "time_eff")));
        put_run_cell (out, fig, "UsedCPUh");
        fprintf (out, "</td><td class=\"num\">%s</td><td class=\"num\">",
                 fmt (b, sizeof (b), F_PCT,
                      tr_json_num (p, "cpu_share_pct") / 100));
        if (get (fig, "money"))
            put_run_cell (out, fig, "Cost");
        else
            fputs (unknown, out);
        fprintf (out, "</td><td class=\"num\">%s</td><td>",
                 fmt (b, sizeof (b), F_PCT,
                      tr_json_num (p, "cost_share_pct") / 100));
        put_esc (out, get (p, "bottleneck")
                          ? tr_json_str_or (p, "bottleneck", "")
                          : unknown);
        fputs ("</td><td>", out);
        json_array_foreach (get (p, "next_time"), k, it)
        {
            fputs (k ? "<br>" : "", out);
            put_esc (out, tr_json_str_or (it, "group", ""));
            fputs (": <code>", out);
            put_esc (out, *tr_json_str_or (it, "request", "")
                              ? tr_json_str_or (it, "request", "")
                              : "as requested");
            fputs ("</code> (", out);
            put_esc (out, tr_json_str_or (it, "confidence", ""));
            fputs (")", out);
        }
        fputs ("</td><td>", out);
        json_array_foreach (get (p, "tools"), k, it)
        {
            fputs (k ? ", " : "", out);
            put_esc (out, tr_json_str_or (it, "name", ""));
        }
        fputs ("</td></tr>\n", out);
    }
    fputs ("</table></div>\n</section>\n", out);
}

static json_t *run_task (json_t *view, const char *id)
{
    json_t *t;
    size_t i;

    json_array_foreach (get (view, "tasks"), i,
                        t) if (!strcmp (tr_json_str_or (t, "job_id", ""),
                                        id)) return t;
    return NULL;
}

static void put_slowest (FILE *out, json_t *view)
{
    json_t *id;
    size_t i;
    char b[64];

    fputs ("<section id=\"slowest\">\n<h2>Slowest tasks</h2>\n"
           "<div class=\"scroll\"><table class=\"slowest usage\">\n"
           "<tr><th>Job</th><th>Process</th><th class=\"num\">Elapsed</th>"
           "<th>State</th><th>Node</th><th>What held it back</th></tr>\n",
           out);
    json_array_foreach (get (view, "slowest"), i, id)
    {
        json_t *t = run_task (view, json_string_value (id));

        if (!t)
            continue;
        fputs ("<tr><td>", out);
        put_esc (out, tr_json_str_or (t, "job_id", ""));
        fputs ("</td><td>", out);
        put_esc (out, tr_json_str_or (t, "process", ""));
        fprintf (out, "</td><td class=\"num\">%s</td><td>",
                 fmt (b, sizeof (b), F_DUR, tr_json_num (t, "elapsed_s")));
        fprintf (out, "<span class=\"state %s\">",
                 run_state_class (tr_json_str_or (t, "state", "")));
        put_esc (out, tr_json_str_or (t, "state", ""));
        fputs ("</span></td><td>", out);
        put_esc (out, *tr_json_str_or (t, "node", "")
                          ? tr_json_str_or (t, "node", "")
                          : unknown);
        fputs ("</td><td>", out);
        put_esc (out, *tr_json_str_or (t, "diagnosis_text", "")
                          ? tr_json_str_or (t, "diagnosis_text", "")
                          : unknown);
        fputs ("</td></tr>\n", out);
    }
    fputs ("</table></div>\n</section>\n", out);
}

/* The tasks running now with their live figures and their age. */
static void put_running (FILE *out, json_t *view)
{
    json_t *id;
    size_t i;
    char b[64];

    if (json_array_size (get (view, "running")) == 0)
        return;
    fputs ("<section id=\"running\">\n<h2>Running now</h2>\n"
           "<div class=\"scroll\"><table class=\"running usage\">\n"
           "<tr><th>Job</th><th>Process</th><th>Node</th>"
           "<th class=\"num\">Elapsed</th><th class=\"num\">CPU eff.</th>"
           "<th class=\"num\">Memory peak</th><th class=\"num\">Requested"
           "</th><th>Progress</th><th class=\"num\">Figures age</th>"
           "</tr>\n",
           out);
    json_array_foreach (get (view, "running"), i, id)
    {
        json_t *t = run_task (view, json_string_value (id));
        json_t *l = get (t, "live");

        if (!t)
            continue;
        fputs ("<tr><td>", out);
        put_esc (out, tr_json_str_or (t, "job_id", ""));
        fputs ("</td><td>", out);
        put_esc (out, tr_json_str_or (t, "process", ""));
        fputs ("</td><td>", out);
        put_esc (out, *tr_json_str_or (t, "node", "")
                          ? tr_json_str_or (t, "node", "")
                          : unknown);
        fprintf (out, "</td><td class=\"num\">%s</td>",
                 fmt (b, sizeof (b), F_DUR, tr_json_num (t, "elapsed_s")));
        fprintf (out, "<td class=\"num\">%s</td>",
                 fmt (b, sizeof (b), F_PCT, tr_json_num (t, "cpu_eff")));
        fprintf (out, "<td class=\"num\">%s</td>",
                 fmt (b, sizeof (b), F_BYTES,
                      tr_json_num (t, "mem_peak_bytes")));
        fprintf (out, "<td class=\"num\">%s</td>",
                 fmt (b, sizeof (b), F_BYTES,
                      tr_json_num (t, "req_mem_bytes")));
        /* no progress, as the text view says it (a task's stalled_s) */
        if (known (tr_json_num (t, "stalled_s")))
            fprintf (out,
                     "<td><span class=\"state state-warn\">STALLED for "
                     "%s</span></td>",
                     fmt (b, sizeof (b), F_DUR, tr_json_num (t, "stalled_s")));
        else
            fprintf (out, "<td>%s</td>", l ? "moving" : unknown);
        fprintf (out, "<td class=\"num\">%s%s</td></tr>\n",
                 l ? fmt (b, sizeof (b), F_DUR, tr_json_num (l, "age_s"))
                   : unknown,
                 json_is_true (get (l, "stale")) ? " (stale)" : "");
    }
    fputs ("</table></div>\n</section>\n", out);
}

int tr_html_run_report (FILE *out, json_t *view, const struct tr_html_opts *o)
{
    json_t *tasks = get (view, "tasks"), *t;
    struct gbar *bars = NULL;
    struct gnode *nodes = NULL;
    size_t nbars = 0, nnodes = 0, nlanes = 0, i;
    double t0 = NAN, t1 = NAN, now;
    int rc = -1, saved;

    if (!out || !json_is_object (get (view, "run")) || !json_is_array (tasks)
        || !json_is_array (get (view, "processes"))) {
        errno = EINVAL;
        return -1;
    }
    now = o && o->now > 0 ? o->now : (double)time (NULL);
    if (!(bars = calloc (json_array_size (tasks) + 1, sizeof (*bars)))
        || !(nodes = calloc (json_array_size (tasks) + 1, sizeof (*nodes))))
        goto done;
    /* the nodes, and the axis */
    json_array_foreach (tasks, i, t)
    {
        double s = tr_json_num (t, "start_unix_ms"), e = tr_json_num (t, "end_"
                                                                         "unix_"
                                                                         "ms");
        size_t k;

        if (!known (s))
            continue;
        if (!known (t0) || s < t0)
            t0 = s;
        if (!known (e))
            e = now * 1000 > s ? now * 1000 : s;
        if (!known (t1) || e > t1)
            t1 = e;
        for (k = 0; k < nnodes; k++)
            if (!strcmp (nodes[k].name, tr_json_str_or (t, "node", "")))
                break;
        if (k == nnodes)
            nodes[nnodes++].name = tr_json_str_or (t, "node", "");
        bars[nbars].task = t;
        bars[nbars++].node = k;
    }
    if (nnodes > 1) {
        /* natural order of the names; the bars follow their node */
        const char **before = malloc (nnodes * sizeof (*before));

        if (!before)
            goto done;
        for (size_t k = 0; k < nnodes; k++)
            before[k] = nodes[k].name;
        qsort (nodes, nnodes, sizeof (*nodes), cmp_gnode);
        for (size_t b = 0; b < nbars; b++)
            for (size_t k = 0; k < nnodes; k++)
                if (nodes[k].name == before[bars[b].node]) {
                    bars[b].node = k;
                    break;
                }
        free (before);
    }
    /* lanes: tasks by start (tasks are), each in its node's first lane
     * free by then
     */
    for (size_t k = 0; k < nnodes; k++)
        if (!(nodes[k].ends = calloc (nbars + 1, sizeof (double))))
            goto done;
    for (size_t b = 0; b < nbars; b++) {
        struct gnode *g = &nodes[bars[b].node];
        double s = tr_json_num (bars[b].task, "start_unix_ms");
        double e = tr_json_num (bars[b].task, "end_unix_ms");
        size_t l;

        if (!known (e))
            e = t1;
        for (l = 0; l < g->nlanes; l++)
            if (g->ends[l] <= s)
                break;
        if (l == g->nlanes)
            g->nlanes++;
        g->ends[l] = e;
        bars[b].lane = l;
    }
    for (size_t k = 0; k < nnodes; k++) {
        nodes[k].first_lane = nlanes;
        nlanes += nodes[k].nlanes;
    }
    for (size_t b = 0; b < nbars; b++)
        bars[b].lane += nodes[bars[b].node].first_lane;

    fputs ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
           "<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width,"
           "initial-scale=1\">\n"
           "<meta name=\"generator\" content=\"tracer " PACKAGE_VERSION "\">\n"
           "<title>Run ",
           out);
    put_esc (out, tr_json_str_or (get (view, "run"), "run", ""));
    fprintf (out,
             " \xe2\x80\x94 tracer report</title>\n<style>\n%s%s"
             "</style>\n</head>\n<body>\n",
             css, run_css);
    put_run_header (out, view);
    fputs ("<nav class=\"toc\"><a href=\"#timeline\">Timeline</a>"
           "<a href=\"#processes\">Processes</a>"
           "<a href=\"#slowest\">Slowest tasks</a></nav>\n<main>\n",
           out);
    put_running (out, view);
    put_gantt (out, view, bars, nbars, nodes, nnodes, nlanes, t0, t1);
    put_process_table (out, view);
    put_slowest (out, view);
    fputs ("</main>\n<footer id=\"footer\">\n<p>Generated by "
           "tracer " PACKAGE_VERSION " at ",
           out);
    put_time (out, now * 1000);
    fputs (". This file is self-contained: it runs no scripts and loads "
           "nothing from the network.</p>\n</footer>\n</body>\n</html>\n",
           out);
    if (fflush (out) || ferror (out)) {
        errno = EIO;
        goto done;
    }
    rc = 0;
done:
    saved = errno;
    for (size_t k = 0; nodes && k < nnodes; k++)
        free (nodes[k].ends);
    free (nodes);
    free (bars);
    errno = saved;
    return rc;
}
