/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-report's files: a page written to -o FILE, replaced
 * atomically, or to standard output.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libtracer/util/path.h"
#include "cli.h"

int rep_write_file (struct rep *r, char *buf, size_t len)
{
    char dir[4096];
    const char *name = r->html_out, *slash;
    tr_error_t error;
    int dfd, rc;

    if (!name || !strcmp (name, "-")) {
        rc = fwrite (buf, 1, len, stdout) != len || fflush (stdout)
                 ? EXIT_RUNTIME : EXIT_OK;
        free (buf);
        return rc;
    }
    if ((slash = strrchr (name, '/'))) {
        snprintf (dir, sizeof (dir), "%.*s",
                  (int)(slash == name ? 1 : slash - name), name);
        name = slash + 1;
    }
    else
        snprintf (dir, sizeof (dir), ".");
    if ((dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        rep_err ("%s: %s\n", dir, strerror (errno));
        free (buf);
        return EXIT_RUNTIME;
    }
    rc = tr_path_write_atomic (dfd, name, buf, len, 0644, (uid_t)-1,
                               (gid_t)-1, &error);
    if (rc < 0)
        rep_err ("%s: %s\n", r->html_out, tr_error_str (&error));
    close (dfd);
    free (buf);
    return rc < 0 ? EXIT_RUNTIME : EXIT_OK;
}
