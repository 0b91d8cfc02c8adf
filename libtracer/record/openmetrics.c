/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The running steps of a node as a file for node_exporter's textfile
 * collector.  The collector parses the whole file or drops all of it
 * (node_textfile_scrape_error), so every byte here is one the parser
 * takes: families grouped, names from a fixed table, label values
 * escaped and made UTF-8, numbers finite, no timestamps (the collector
 * refuses them).  The figures are the live row's, so that the file says
 * what tracer-report --live and the run view say of the same step.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "libtracer/util/json.h"
#include "libtracer/util/path.h"
#include "openmetrics.h"

enum om_type {
    OM_GAUGE,
    OM_COUNTER,
};

struct om_metric {
    const char *name; /* the samples' name (a counter's ends in _total) */
    enum om_type type;
    const char *help;
    size_t off; /* of the row's member, or (size_t)-1 with get */
    double (*get) (const struct tr_openmetrics_step *s);
};

#define ROW(m) offsetof (tr_stepsum_t, m)
#define NONE ((size_t)-1)

static double mem_current (const struct tr_openmetrics_step *s)
{
    return s->mem_current_bytes;
}

static double stalled (const struct tr_openmetrics_step *s)
{
    return s->stalled_s;
}

static double start_time (const struct tr_openmetrics_step *s)
{
    return s->row->start_ms / 1000.0;
}

static double gpu_util (const struct tr_openmetrics_step *s)
{
    return s->row->gpu_util_mean_pct / 100.0;
}

/* clang-format off */
static const struct om_metric metrics[] = {
    { "tracer_step_start_time_seconds", OM_GAUGE,
      "When the step started, seconds since the epoch", NONE, start_time },
    { "tracer_step_cpu_seconds_total", OM_COUNTER,
      "CPU time the step used on this node (user and system)",
      ROW (cpu_s), NULL },
    { "tracer_step_requested_cpus", OM_GAUGE,
      "Cores the scheduler granted the step on this node",
      ROW (req_cores), NULL },
    { "tracer_step_memory_current_bytes", OM_GAUGE,
      "Memory the step uses now", NONE, mem_current },
    { "tracer_step_memory_peak_bytes", OM_GAUGE,
      "The most memory the step used so far", ROW (mem_peak_bytes), NULL },
    { "tracer_step_memory_requested_bytes", OM_GAUGE,
      "Memory the scheduler granted the step on this node",
      ROW (req_mem_bytes), NULL },
    { "tracer_step_pressure_cpu_some_seconds_total", OM_COUNTER,
      "Time some task of the step waited for a CPU (PSI)",
      ROW (psi_cpu_some_s), NULL },
    { "tracer_step_pressure_memory_some_seconds_total", OM_COUNTER,
      "Time some task of the step was stalled on memory (PSI)",
      ROW (psi_mem_some_s), NULL },
    { "tracer_step_pressure_memory_full_seconds_total", OM_COUNTER,
      "Time all tasks of the step were stalled on memory (PSI)",
      ROW (psi_mem_full_s), NULL },
    { "tracer_step_pressure_io_some_seconds_total", OM_COUNTER,
      "Time some task of the step was stalled on I/O (PSI)",
      ROW (psi_io_some_s), NULL },
    { "tracer_step_pressure_io_full_seconds_total", OM_COUNTER,
      "Time all tasks of the step were stalled on I/O (PSI)",
      ROW (psi_io_full_s), NULL },
    { "tracer_step_read_bytes_total", OM_COUNTER,
      "Bytes the step read from storage", ROW (read_bytes), NULL },
    { "tracer_step_write_bytes_total", OM_COUNTER,
      "Bytes the step wrote to storage", ROW (write_bytes), NULL },
    { "tracer_step_network_receive_bytes_total", OM_COUNTER,
      "Bytes the step received (its own network namespace only)",
      ROW (net_rx_bytes), NULL },
    { "tracer_step_network_transmit_bytes_total", OM_COUNTER,
      "Bytes the step sent (its own network namespace only)",
      ROW (net_tx_bytes), NULL },
    { "tracer_step_gpus", OM_GAUGE,
      "GPUs the step uses on this node", ROW (gpus_used), NULL },
    { "tracer_step_gpu_utilization_ratio", OM_GAUGE,
      "Mean utilisation of the step's GPUs so far, 0 to 1", NONE, gpu_util },
    { "tracer_step_gpu_memory_peak_bytes", OM_GAUGE,
      "The most GPU memory the step's processes used so far",
      ROW (gpu_mem_peak_bytes), NULL },
    { "tracer_step_stalled_seconds", OM_GAUGE,
      "How long the step has made no progress (0: it is making progress)",
      NONE, stalled },
};
/* clang-format on */

#define NMETRICS (sizeof (metrics) / sizeof (metrics[0]))

const char *tr_openmetrics_metric (size_t i)
{
    return i < NMETRICS ? metrics[i].name : NULL;
}

void tr_openmetrics_step (struct tr_openmetrics_step *step,
                          const tr_stepsum_t *row,
                          json_t *rec)
{
    json_t *summary = json_object_get (rec, "summary");
    json_t *progress = json_object_get (rec, "progress");

    step->row = row;
    step->mem_current_bytes =
        tr_json_num (json_object_get (summary, "memory"), "current_bytes");
    /* The row's stall is NAN both when the step is not stalled and when
     * nobody watches it; the record's progress tells the two apart.
     */
    if (!json_is_object (progress))
        step->stalled_s = NAN;
    else if (!isnan (row->stalled_s))
        step->stalled_s = row->stalled_s;
    else
        step->stalled_s =
            json_is_true (json_object_get (progress, "stalled")) ? NAN : 0.0;
}

int tr_openmetrics_label_value (tr_strbuf_t *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t left = strlen ((const char *)p);
    size_t out = 0;

    while (left > 0) {
        uint32_t cp;
        size_t n = tr_utf8_char (p, left, &cp);
        const char *rep = NULL;
        size_t rlen;

        if (n == 0) {
            rep = "?"; /* not UTF-8: the parser would refuse the file */
            n = 1;
        }
        else if (cp == '\\')
            rep = "\\\\";
        else if (cp == '"')
            rep = "\\\"";
        else if (cp == '\n')
            rep = "\\n";
        else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
            rep = "?";
        rlen = rep ? strlen (rep) : n;
        /* the bound counts what the value holds, not its escapes */
        if (out + (rep ? 1 : n) > TR_OPENMETRICS_VALUE_MAX)
            break;
        if (tr_strbuf_append (sb, rep ? rep : (const char *)p, rlen) < 0)
            return -1;
        out += rep ? 1 : n;
        p += n;
        left -= n;
    }
    return 0;
}

/* A finite number as the format writes it: whole numbers exactly (byte
 * counts reach 2^53), others to 15 significant digits, which keeps every
 * digit the record has.
 */
static int put_number (tr_strbuf_t *sb, double v)
{
    if (v == floor (v) && fabs (v) < 9007199254740992.0)
        return tr_strbuf_printf (sb, "%.0f", v);
    return tr_strbuf_printf (sb, "%.15g", v);
}

static int put_labels (tr_strbuf_t *sb, const tr_stepsum_t *row)
{
    static const char *const names[] = { TR_OPENMETRICS_LABELS };
    char tag[8];
    /* a run a user named with a tag (--tracer=tag=run:..., TRACER_OPTS,
     * tracer-run --pipeline: the job's environment) gives no label:
     * labels come from the scheduler and the kernel only
     */
    bool tagged =
        row->tags && tr_stepsum_tag (row->tags, "run", tag, sizeof (tag));
    const char *values[] = {
        row->cluster,
        row->node,
        row->job_id,
        row->step_id,
        row->user,
        row->account,
        row->partition,
        tagged ? "" : row->run_id,
        tagged ? "" : row->pipeline,
        tagged ? "" : row->process,
    };

    _Static_assert(sizeof (names) / sizeof (names[0])
                       == sizeof (values) / sizeof (values[0]),
                   "a value for every label");
    if (tr_strbuf_puts (sb, "{") < 0)
        return -1;
    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
        if (tr_strbuf_printf (sb, "%s%s=\"", i ? "," : "", names[i]) < 0
            || tr_openmetrics_label_value (sb, values[i]) < 0
            || tr_strbuf_puts (sb, "\"") < 0)
            return -1;
    return tr_strbuf_puts (sb, "}");
}

static double value_of (const struct om_metric *m,
                        const struct tr_openmetrics_step *s)
{
    if (m->get)
        return m->get (s);
    return *(const double *)((const char *)s->row + m->off);
}

int tr_openmetrics_text (tr_strbuf_t *sb,
                         const struct tr_openmetrics_step *steps,
                         size_t n)
{
    for (size_t i = 0; i < NMETRICS; i++) {
        const struct om_metric *m = &metrics[i];
        bool head = false;

        for (size_t j = 0; j < n; j++) {
            double v = value_of (m, &steps[j]);

            /* unknown: no sample; a counter never goes below 0 */
            if (!isfinite (v) || (m->type == OM_COUNTER && v < 0))
                continue;
            /* A family is written only with a sample: the textfile
             * collector's parser takes a HELP without samples, but some
             * others do not.
             */
            if (!head
                && (tr_strbuf_printf (sb, "# HELP %s %s.\n", m->name, m->help)
                        < 0
                    || tr_strbuf_printf (sb, "# TYPE %s %s\n", m->name,
                                         m->type == OM_COUNTER ? "counter"
                                                               : "gauge")
                           < 0))
                return -1;
            head = true;
            if (tr_strbuf_puts (sb, m->name) < 0
                || put_labels (sb, steps[j].row) < 0
                || tr_strbuf_puts (sb, " ") < 0 || put_number (sb, v) < 0
                || tr_strbuf_puts (sb, "\n") < 0)
                return -1;
        }
    }
    return tr_strbuf_puts (sb, "# EOF\n");
}

static int open_dir (const char *dir, tr_error_t *error)
{
    int fd;

    if (!dir || dir[0] != '/') {
        errno = EINVAL;
        tr_errprintf (error, "textfile directory: not an absolute path");
        return -1;
    }
    fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        tr_errprintf (error, "%s: %s%s", dir, strerror (errno),
                      errno == ELOOP || errno == ENOTDIR ? " (a symbolic link "
                                                           "is not followed)"
                                                         : "");
    return fd;
}

int tr_openmetrics_write (const char *dir,
                          const char *text,
                          size_t len,
                          tr_error_t *error)
{
    tr_error_t e;
    int fd, rc;

    if ((fd = open_dir (dir, error)) < 0)
        return -1;
    /* No fsync: the file is rewritten every interval, and a power loss
     * that keeps the previous one costs only freshness.
     */
    rc = tr_path_replace (fd, TR_OPENMETRICS_FILE, text, len, 0644, (uid_t)-1,
                          (gid_t)-1, &e);
    if (rc < 0) {
        int saved = errno;
        tr_errprintf (error, "%s/%s: %s", dir, TR_OPENMETRICS_FILE, e.text);
        close (fd);
        errno = saved;
        return -1;
    }
    close (fd);
    return 0;
}

int tr_openmetrics_remove (const char *dir, tr_error_t *error)
{
    int fd, rc;

    if ((fd = open_dir (dir, error)) < 0)
        return errno == ENOENT ? 0 : -1;
    rc = unlinkat (fd, TR_OPENMETRICS_FILE, 0);
    if (rc < 0 && errno == ENOENT)
        rc = 0;
    if (rc < 0) {
        int saved = errno;
        tr_errprintf (error, "%s/%s: %s", dir, TR_OPENMETRICS_FILE,
                      strerror (errno));
        close (fd);
        errno = saved;
        return -1;
    }
    close (fd);
    return 0;
}
