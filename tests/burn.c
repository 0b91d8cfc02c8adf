/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * burn SPEC: run a workload with known ground truth (see workload.h) and
 * print its own getrusage view as one JSON line.
 */
#include "config.h"

#include <stdio.h>

#include "libtracer/node/workload.h"

int main (int argc, char **argv)
{
    struct tr_workload w;
    tr_error_t error;

    if (argc != 2) {
        fprintf (stderr, "usage: burn SPEC\n");
        return 2;
    }
    if (tr_workload_parse (argv[1], &w, &error) < 0) {
        fprintf (stderr, "burn: %s\n", error.text);
        return 2;
    }
    return tr_workload_run (&w, stdout) < 0 ? 1 : 0;
}
