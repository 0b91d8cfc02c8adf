/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for proto.c's request stamps: a request says when it was
 * sent and how long its caller waits, tr_proto_request stamps what the
 * caller left out, and tr_proto_stale tells a request read after its
 * caller gave up from a fresh one, at the bound and past it.  The daemon
 * is a thread-free stand-in: a listening socket read after the call.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "libtracer/hook/proto.h"

static json_t *msg_at (double sent, json_int_t timeout_ms)
{
    json_t *m = json_pack ("{s:s s:f s:I}", "op", "ping", "sent_s", sent,
                           "timeout_ms", timeout_ms);

    assert_non_null (m);
    return m;
}

static void test_stale (void **state)
{
    json_t *m;
    double late;

    (void)state;
    /* fresh: 0.5 s old, 1 s allowed */
    m = msg_at (100.0, 1000);
    assert_false (tr_proto_stale (m, 100.5, &late));
    assert_true (late > 0.49 && late < 0.51);
    /* just within, and just past the caller's timeout */
    assert_false (tr_proto_stale (m, 100.999, NULL));
    assert_true (tr_proto_stale (m, 101.001, &late));
    assert_true (late > 1.0);
    /* stopped for 30 s */
    assert_true (tr_proto_stale (m, 130.0, &late));
    json_decref (m);
    /* no stamps (an older hook), a bad timeout: fresh */
    m = json_pack ("{s:s}", "op", "ping");
    assert_false (tr_proto_stale (m, 1e9, &late));
    assert_true (late == 0);
    json_decref (m);
    m = json_pack ("{s:s s:f s:s}", "op", "ping", "sent_s", 1.0,
                   "timeout_ms", "1000");
    assert_false (tr_proto_stale (m, 1e9, NULL));
    json_decref (m);
    m = msg_at (1.0, 0);
    assert_false (tr_proto_stale (m, 1e9, NULL));
    json_decref (m);
}

/* tr_proto_request stamps the message on the clock tr_proto_clock reads,
 * with the caller's timeout, and keeps stamps the caller set.
 */
static void test_request_stamps (void **state)
{
    char dir[] = "/tmp/tr-proto.XXXXXX", path[64];
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    tr_error_t error;
    json_t *m, *got;
    double before, after;
    int lfd, cfd;

    (void)state;
    assert_non_null (mkdtemp (dir));
    snprintf (path, sizeof (path), "%s/s", dir);
    snprintf (sa.sun_path, sizeof (sa.sun_path), "%s", path);
    lfd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    assert_true (lfd >= 0);
    assert_int_equal (bind (lfd, (struct sockaddr *)&sa, sizeof (sa)), 0);
    assert_int_equal (listen (lfd, 4), 0);

    /* no one answers: the request times out, but its message is queued */
    m = json_pack ("{s:s}", "op", "ping");
    before = tr_proto_clock ();
    assert_int_equal (tr_proto_request (path, m, 50, NULL, &error), -1);
    after = tr_proto_clock ();
    assert_true (after - before >= 0.04);
    assert_true ((cfd = accept (lfd, NULL, NULL)) >= 0);
    assert_non_null (got = tr_proto_recv (cfd, &error));
    assert_int_equal (json_integer_value (json_object_get (got, "timeout_ms")),
                      50);
    assert_true (json_number_value (json_object_get (got, "sent_s"))
                 >= before);
    assert_true (json_number_value (json_object_get (got, "sent_s"))
                 <= after);
    /* read now, after its caller gave up: stale */
    assert_true (tr_proto_stale (got, tr_proto_clock (), NULL));
    json_decref (got);
    close (cfd);
    json_decref (m);

    /* stamps the caller set are kept */
    m = json_pack ("{s:s s:f s:i}", "op", "ping", "sent_s", 7.0,
                   "timeout_ms", 3);
    assert_int_equal (tr_proto_request (path, m, 20, NULL, &error), -1);
    assert_true ((cfd = accept (lfd, NULL, NULL)) >= 0);
    assert_non_null (got = tr_proto_recv (cfd, &error));
    assert_true (json_number_value (json_object_get (got, "sent_s")) == 7.0);
    assert_int_equal (json_integer_value (json_object_get (got, "timeout_ms")),
                      3);
    json_decref (got);
    json_decref (m);
    close (cfd);
    close (lfd);
    unlink (path);
    rmdir (dir);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_stale),
        cmocka_unit_test (test_request_stamps),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
