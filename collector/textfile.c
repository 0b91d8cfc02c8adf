/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's textfile: the running steps as metrics in the directory
 * node_exporter's textfile collector reads (daemon.textfile_dir), so
 * that Prometheus scrapes them from node_exporter and no node opens a
 * port of tracer's own.  Written with the live summaries, every
 * store.live_interval (forward.c), by libtracer/record/openmetrics.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libtracer/record/openmetrics.h"

#include "tracerd.h"

static struct {
    char *dir;  /* where the file was last written, NULL when nowhere */
    int failed; /* errno of the failure last logged, 0 when none */
} tf;

/* The file out of the directory it was written to. */
static void drop (void)
{
    tr_error_t error;

    if (!tf.dir)
        return;
    if (tr_openmetrics_remove (tf.dir, &error) < 0)
        tracerd_log (LOG_WARNING, "textfile: %s", tr_error_str (&error));
    free (tf.dir);
    tf.dir = NULL;
}

bool tracerd_textfile_due (void)
{
    return d.conf->textfile_dir || tf.dir;
}

void tracerd_textfile_write (const struct tr_openmetrics_step *steps, size_t n)
{
    const char *dir = d.conf->textfile_dir;
    tr_strbuf_t sb = TR_STRBUF_INIT;
    tr_error_t error;

    /* turned off, or moved, by a reload */
    if (tf.dir && (!dir || strcmp (dir, tf.dir)))
        drop ();
    if (!dir)
        return;
    if (tr_openmetrics_text (&sb, steps, n) < 0) {
        tracerd_log (LOG_WARNING, "textfile: out of memory");
        goto out;
    }
    if (tr_openmetrics_write (dir, sb.buf, sb.len, &error) < 0) {
        /* once, not every interval, until something else goes wrong */
        if (errno != tf.failed)
            tracerd_log (LOG_WARNING,
                         "textfile: %s; the running steps' metrics are not "
                         "written",
                         tr_error_str (&error));
        tf.failed = errno;
        goto out;
    }
    if (tf.failed)
        tracerd_log (LOG_NOTICE, "textfile: %s/%s written again", dir,
                     TR_OPENMETRICS_FILE);
    tf.failed = 0;
    if (!tf.dir && !(tf.dir = strdup (dir)))
        tracerd_log (LOG_WARNING, "textfile: out of memory");
out:
    tr_strbuf_free (&sb);
}

void tracerd_textfile_stop (void)
{
    /* Nobody watches the steps any more: their series end here, and
     * the next tracerd writes them again.
     */
    drop ();
}
