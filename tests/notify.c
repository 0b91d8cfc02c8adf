/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Test helper: send one protocol message (JSON text) to tracerd the way
 * a scheduler hook does, print the reply, exit 0 when the daemon
 * answered {"ok":true}, 1 when it refused, 2 on a usage or I/O error.
 *
 *   notify SOCKET '{"op":"step_start", ...}'
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "libtracer/hook/proto.h"

int main (int argc, char **argv)
{
    json_t *msg, *reply = NULL;
    json_error_t jerr;
    tr_error_t error;
    int rc;

    if (argc != 3) {
        fprintf (stderr, "Usage: notify SOCKET JSON\n");
        return 2;
    }
    if (!(msg = json_loads (argv[2], 0, &jerr))) {
        fprintf (stderr, "notify: bad JSON: %s\n", jerr.text);
        return 2;
    }
    rc = tr_proto_request (argv[1], msg, 5000, &reply, &error);
    json_decref (msg);
    if (!reply) {
        fprintf (stderr, "notify: %s\n", error.text);
        return 2;
    }
    json_dumpf (reply, stdout, JSON_COMPACT);
    putchar ('\n');
    json_decref (reply);
    return rc == 0 ? 0 : 1;
}
