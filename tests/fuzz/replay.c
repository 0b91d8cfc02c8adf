/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Replays fuzz inputs through one harness without libFuzzer, so that the
 * seed corpus and the inputs that once crashed run in every "make check"
 * with the ordinary compiler (and under ASan or valgrind when the build
 * uses them).  Each argument is a file or a directory (its files and
 * those of its subdirectories, one level down, in name order); with no
 * argument, corpus/NAME and regressions/NAME under FUZZ_DIR are replayed.
 * Output is TAP.  An input that crashes the harness kills this program,
 * which the TAP driver reports as a failure.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#error "FUZZ_NAME (the harness: record, conf, ...) must be defined"
#endif
#ifndef FUZZ_DIR
#define FUZZ_DIR TEST_SRCDIR "/fuzz"
#endif

static int count;
static int failed;

static void fail (const char *path, const char *why)
{
    printf ("not ok %d - %s: %s\n", ++count, path, why);
    failed = 1;
}

/* The whole file in a buffer of exactly its size, as libFuzzer passes
 * it, so that ASan sees any read past the end.
 */
static unsigned char *slurp (const char *path, size_t *len)
{
    unsigned char *buf = NULL;
    struct stat st;
    size_t got = 0;
    int fd;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        return NULL;
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
        goto error;
    if (!(buf = malloc (st.st_size > 0 ? (size_t)st.st_size : 1)))
        goto error;
    while (got < (size_t)st.st_size) {
        ssize_t n = read (fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto error;
        got += (size_t)n;
    }
    close (fd);
    *len = got;
    return buf;
error:
    if (errno == 0)
        errno = EIO;
    free (buf);
    close (fd);
    return NULL;
}

static void replay_file (const char *path)
{
    unsigned char *buf;
    size_t len = 0;

    errno = 0;
    if (!(buf = slurp (path, &len))) {
        fail (path, strerror (errno));
        return;
    }
    (void)LLVMFuzzerTestOneInput (buf, len);
    free (buf);
    printf ("ok %d - %s\n", ++count, path);
    fflush (stdout);
}

static int visible (const struct dirent *de)
{
    return de->d_name[0] != '.';
}

static void replay_path (const char *path, int depth)
{
    struct dirent **list;
    struct stat st;
    int n;

    if (stat (path, &st) < 0) {
        fail (path, strerror (errno));
        return;
    }
    if (!S_ISDIR (st.st_mode)) {
        replay_file (path);
        return;
    }
    if (depth > 1)
        return;
    if ((n = scandir (path, &list, visible, alphasort)) < 0) {
        fail (path, strerror (errno));
        return;
    }
    for (int i = 0; i < n; i++) {
        char sub[4096];
        int len = snprintf (sub, sizeof (sub), "%s/%s", path, list[i]->d_name);
        if (len < 0 || (size_t)len >= sizeof (sub))
            fail (list[i]->d_name, "path too long");
        else
            replay_path (sub, depth + 1);
        free (list[i]);
    }
    free (list);
}

int main (int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            replay_path (argv[i], 0);
    }
    else {
        replay_path (FUZZ_DIR "/corpus/" FUZZ_NAME, 0);
        replay_path (FUZZ_DIR "/regressions/" FUZZ_NAME, 0);
    }
    if (count == 0)
        fail (argc > 1 ? argv[1] : FUZZ_DIR, "no inputs");
    printf ("1..%d\n", count);
    return failed;
}
