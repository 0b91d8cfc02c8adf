/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for record signing.  The digest tests need nothing; the
 * signature tests run against two private munged daemons started here
 * (each with its own throwaway key and socket, like MUNGE's own test
 * suite), so that a credential from the "wrong" key can be made.  Without
 * munged the binary skips, unless CI=true, where that is a failure.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <munge.h>
#include <cmocka.h>

#include "libtracer/record/record.h"
#include "libtracer/record/sign.h"

#define BASIC_RECORD TEST_SRCDIR "/fixtures/records/basic.json"
#define NOBODY 65534

struct munged {
    char dir[64];
    char socket[128];
    pid_t pid;
};

static const char *munged_path;
static struct munged md_main;  /* the site's munged */
static struct munged md_other; /* a munged with a different key */

static const char *find_munged (void)
{
    static const char *const paths[] = {
        "/usr/sbin/munged",
        "/usr/local/sbin/munged",
        "/sbin/munged",
    };
    size_t i;

    for (i = 0; i < sizeof (paths) / sizeof (paths[0]); i++) {
        if (access (paths[i], X_OK) == 0)
            return paths[i];
    }
    return NULL;
}

static void dir_path (char *buf,
                      size_t size,
                      const struct munged *m,
                      const char *name)
{
    int n = snprintf (buf, size, "%s/%s", m->dir, name);
    assert_true (n > 0 && (size_t)n < size);
}

/* A 1024-byte random key, mode 0400, as munged wants it. */
static int write_key (const char *path)
{
    unsigned char key[1024];
    size_t got = 0;
    int fd;

    if ((fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    while (got < sizeof (key)) {
        ssize_t n = read (fd, key + got, sizeof (key) - got);
        if (n <= 0) {
            close (fd);
            return -1;
        }
        got += (size_t)n;
    }
    close (fd);
    if ((fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400)) < 0)
        return -1;
    if (write (fd, key, sizeof (key)) != (ssize_t)sizeof (key)) {
        close (fd);
        return -1;
    }
    return close (fd);
}

static void print_log (const struct munged *m)
{
    char path[128], line[256];
    FILE *f;

    dir_path (path, sizeof (path), m, "munged.log");
    if (!(f = fopen (path, "r")))
        return;
    while (fgets (line, sizeof (line), f))
        printf ("# munged: %s", line);
    fclose (f);
}

/* munged is up once it answers an encode request. */
static bool munged_answers (const char *socket)
{
    munge_ctx_t ctx = munge_ctx_create ();
    char *cred = NULL;
    munge_err_t e;

    if (!ctx)
        return false;
    e = munge_ctx_set (ctx, MUNGE_OPT_SOCKET, socket);
    if (e == EMUNGE_SUCCESS)
        e = munge_encode (&cred, ctx, NULL, 0);
    free (cred);
    munge_ctx_destroy (ctx);
    return e == EMUNGE_SUCCESS;
}

static int munged_start (struct munged *m)
{
    char key[128], log[128], pidfile[128], seed[128];
    char a_socket[160], a_key[160], a_log[160], a_pid[160], a_seed[160];
    int i;

    snprintf (m->dir, sizeof (m->dir), "/tmp/test_sign.XXXXXX");
    if (!mkdtemp (m->dir))
        return -1;
    /* The signer test connects as nobody. */
    if (chmod (m->dir, 0755) < 0)
        return -1;
    dir_path (m->socket, sizeof (m->socket), m, "munge.sock");
    dir_path (key, sizeof (key), m, "munge.key");
    dir_path (log, sizeof (log), m, "munged.log");
    dir_path (pidfile, sizeof (pidfile), m, "munged.pid");
    dir_path (seed, sizeof (seed), m, "munged.seed");
    if (write_key (key) < 0)
        return -1;
    snprintf (a_socket, sizeof (a_socket), "--socket=%s", m->socket);
    snprintf (a_key, sizeof (a_key), "--key-file=%s", key);
    snprintf (a_log, sizeof (a_log), "--log-file=%s", log);
    snprintf (a_pid, sizeof (a_pid), "--pid-file=%s", pidfile);
    snprintf (a_seed, sizeof (a_seed), "--seed-file=%s", seed);

    if ((m->pid = fork ()) < 0)
        return -1;
    if (m->pid == 0) {
        char *argv[] = {
            (char *)munged_path,
            "--foreground",
            "--force",
            a_socket,
            a_key,
            a_log,
            a_pid,
            a_seed,
            NULL,
        };
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0600);

        /* Foreground munged logs to stderr; keep TAP output clean.  If
         * this test dies, take munged with it.
         */
        if (fd >= 0) {
            (void)dup2 (fd, STDOUT_FILENO);
            (void)dup2 (fd, STDERR_FILENO);
        }
        (void)prctl (PR_SET_PDEATHSIG, SIGTERM);
        execv (munged_path, argv);
        _exit (127);
    }
    for (i = 0; i < 200; i++) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        int status;

        if (waitpid (m->pid, &status, WNOHANG) == m->pid) {
            printf ("# munged exited early (status 0x%x)\n", status);
            print_log (m);
            m->pid = 0;
            return -1;
        }
        if (munged_answers (m->socket))
            return 0;
        nanosleep (&ts, NULL);
    }
    printf ("# munged did not answer on %s\n", m->socket);
    print_log (m);
    return -1;
}

static void munged_stop (struct munged *m)
{
    static const char *const files[] = {
        "munge.sock",  "munge.sock.lock", "munged.pid",
        "munged.seed", "munged.log",      "munge.key",
    };
    char path[128];
    size_t i;

    if (m->pid > 0) {
        (void)kill (m->pid, SIGTERM);
        (void)waitpid (m->pid, NULL, 0);
        m->pid = 0;
    }
    if (m->dir[0] == '\0')
        return;
    for (i = 0; i < sizeof (files) / sizeof (files[0]); i++) {
        dir_path (path, sizeof (path), m, files[i]);
        (void)unlink (path);
    }
    (void)rmdir (m->dir);
    m->dir[0] = '\0';
}

static int group_setup (void **state)
{
    (void)state;
    if (munged_start (&md_main) < 0 || munged_start (&md_other) < 0)
        return -1;
    return 0;
}

static int group_teardown (void **state)
{
    (void)state;
    munged_stop (&md_main);
    munged_stop (&md_other);
    return 0;
}

static json_t *load_basic (void)
{
    tr_error_t err;
    json_t *rec = tr_record_load (BASIC_RECORD, &err);

    if (!rec)
        fail_msg ("%s", tr_error_str (&err));
    return rec;
}

/* Replace the member at "a.b[2].c" with value (stolen). */
static void mutate (json_t *rec, const char *path, json_t *value)
{
    const char *p = path;
    json_t *cur = rec;

    assert_non_null (value);
    for (;;) {
        char name[128] = "";
        long idx = -1;

        if (*p == '[') {
            char *end;
            idx = strtol (p + 1, &end, 10);
            assert_true (*end == ']');
            p = end + 1;
        }
        else {
            size_t n = strcspn (p, ".[");
            assert_true (n > 0 && n < sizeof (name));
            memcpy (name, p, n);
            p += n;
        }
        if (*p == '.')
            p++;
        if (*p == '\0') {
            if (idx >= 0)
                assert_int_equal (json_array_set_new (cur, (size_t)idx, value),
                                  0);
            else
                assert_int_equal (json_object_set_new (cur, name, value), 0);
            return;
        }
        cur = idx >= 0 ? json_array_get (cur, (size_t)idx)
                       : json_object_get (cur, name);
        if (!cur)
            fail_msg ("%s: no such member", path);
    }
}

static const char *sig_str (json_t *rec, const char *key)
{
    return json_string_value (
        json_object_get (json_object_get (rec, "signature"), key));
}

static void test_digest_known_answer (void **state)
{
    json_t *obj = json_pack ("{s:i}", "a", 1);
    char digest[65];

    (void)state;
    /* printf '{"a":1}' | sha256sum */
    assert_int_equal (tr_sign_digest (obj, digest), 0);
    assert_string_equal (digest, "015abd7f5cc57a2dd94b7590f04ad808"
                                 "4273905ee33ec5cebeae62276a97f862");
    json_decref (obj);
    errno = 0;
    assert_int_equal (tr_sign_digest (NULL, digest), -1);
    assert_int_equal (errno, EINVAL);
}

static void test_digest_stable (void **state)
{
    json_t *rec = load_basic ();
    json_t *copy, *reordered, *back;
    char d0[65], d1[65];
    const char *keys[64];
    const char *key;
    json_t *v;
    size_t n = 0, i;
    char *text;

    (void)state;
    assert_int_equal (tr_sign_digest (rec, d0), 0);
    assert_int_equal (strlen (d0), 64);
    assert_int_equal (strspn (d0, "0123456789abcdef"), 64);

    /* Same again, and the signature member is not covered. */
    assert_int_equal (tr_sign_digest (rec, d1), 0);
    assert_string_equal (d0, d1);
    copy = json_deep_copy (rec);
    assert_int_equal (tr_sign_mark_unsigned (copy, "other reason"), 0);
    assert_int_equal (tr_sign_digest (copy, d1), 0);
    assert_string_equal (d0, d1);
    json_decref (copy);

    /* Member order and the file round trip do not matter. */
    reordered = json_object ();
    json_object_foreach (rec, key, v) keys[n++] = key;
    for (i = n; i-- > 0;)
        assert_int_equal (json_object_set (reordered, keys[i],
                                           json_object_get (rec, keys[i])),
                          0);
    assert_int_equal (tr_sign_digest (reordered, d1), 0);
    assert_string_equal (d0, d1);
    json_decref (reordered);

    text = tr_record_dumps (rec);
    assert_non_null (text);
    back = tr_record_parse (text, strlen (text), NULL);
    assert_non_null (back);
    assert_int_equal (tr_sign_digest (back, d1), 0);
    assert_string_equal (d0, d1);
    json_decref (back);
    free (text);
    json_decref (rec);
}

static void test_digest_changes (void **state)
{
    static const struct {
        const char *path;
        const char *value;
    } changes[] = {
        { "kind", "\"snapshot\"" },
        { "identity.job_id", "\"25\"" },
        { "identity.uid", "0" },
        { "summary.cpu.user_s", "0.10000000000000002" },
        { "summary.memory.peak_bytes", "52428801" },
        { "summary.memory.exact", "false" },
        { "tools[0].exit_codes.137", "2" },
        { "series.metrics.cpu_cores.max[1]", "0.6" },
        { "tags.stage", "\"test\"" },
        { "tags.new", "\"x\"" },
        { "outcome.tasks[0].pid", "1" },
        { "time.end_unix_ms", "1767225604251" },
    };
    char seen[sizeof (changes) / sizeof (changes[0]) + 1][65];
    size_t i, j;

    (void)state;
    {
        json_t *rec = load_basic ();
        assert_int_equal (tr_sign_digest (rec, seen[0]), 0);
        json_decref (rec);
    }
    for (i = 0; i < sizeof (changes) / sizeof (changes[0]); i++) {
        json_t *rec = load_basic ();

        mutate (rec, changes[i].path,
                json_loads (changes[i].value, JSON_DECODE_ANY, NULL));
        assert_int_equal (tr_sign_digest (rec, seen[i + 1]), 0);
        for (j = 0; j <= i; j++) {
            if (!strcmp (seen[i + 1], seen[j]))
                fail_msg ("changing %s left digest %zu unchanged",
                          changes[i].path, j);
        }
        json_decref (rec);
    }
}

static const uid_t *self_trusted (size_t *n)
{
    static uid_t self;

    self = geteuid ();
    *n = 1;
    return &self;
}

static void test_sign_verify (void **state)
{
    json_t *rec = load_basic ();
    tr_error_t err;
    char digest[65];
    uid_t signer = (uid_t)-1;
    size_t n;
    const uid_t *trusted = self_trusted (&n);
    char *text;
    json_t *back;

    (void)state;
    if (tr_sign_record (rec, md_main.socket, &err) < 0)
        fail_msg ("sign: %s", err.text);
    assert_string_equal (sig_str (rec, "scheme"), "munge-sha256");
    assert_int_equal (tr_sign_digest (rec, digest), 0);
    assert_string_equal (sig_str (rec, "digest"), digest);
    assert_true (!strncmp (sig_str (rec, "credential"), "MUNGE:", 6));
    assert_null (sig_str (rec, "reason"));
    assert_int_equal (tr_record_validate (rec, &err), 0);

    /* Through the file format, as a reader sees it. */
    text = tr_record_dumps (rec);
    back = tr_record_parse (text, strlen (text), &err);
    assert_non_null (back);
    free (text);

    snprintf (err.text, sizeof (err.text), "stale");
    assert_int_equal (tr_sign_verify (back, md_main.socket, trusted, n, &signer,
                                      &err),
                      TR_SIG_VALID);
    assert_int_equal (signer, geteuid ());
    assert_string_equal (err.text, "");

    /* munged decodes a credential once; later reads are replays, and the
     * record is still authentic.
     */
    signer = (uid_t)-1;
    assert_int_equal (tr_sign_verify (back, md_main.socket, trusted, n, &signer,
                                      &err),
                      TR_SIG_VALID_OLD);
    assert_int_equal (signer, geteuid ());
    /* munge's own words, for whoever must tell why */
    assert_string_equal (err.text, "signature is authentic; its credential was "
                                   "decoded before by this munged (munge: "
                                   "Replayed credential)");
    json_decref (back);
    json_decref (rec);
}

static void test_tampered (void **state)
{
    json_t *rec = load_basic ();
    tr_error_t err;
    size_t n;
    const uid_t *trusted = self_trusted (&n);
    uid_t signer = (uid_t)-1;

    (void)state;
    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    mutate (rec, "summary.cpu.user_s", json_real (0.01));
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, &signer,
                                      &err),
                      TR_SIG_TAMPERED);
    assert_string_equal (err.text, "record has been modified after signing "
                                   "(digest mismatch)");
    assert_int_equal (signer, geteuid ());
    json_decref (rec);

    /* The body is intact but the digest member was rewritten to match a
     * different body: the credential's payload still disagrees.
     */
    rec = load_basic ();
    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    mutate (rec, "signature.digest",
            json_string ("00000000000000000000000000000000"
                         "00000000000000000000000000000000"));
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, NULL,
                                      &err),
                      TR_SIG_TAMPERED);
    assert_string_equal (err.text, "record has been modified after signing "
                                   "(digest mismatch)");
    json_decref (rec);
}

static void test_forged_other_key (void **state)
{
    json_t *rec = load_basic ();
    json_t *other = load_basic ();
    tr_error_t err;
    size_t n;
    const uid_t *trusted = self_trusted (&n);
    uid_t signer = (uid_t)-1;

    (void)state;
    /* Same body, signed by a munged that does not share our key. */
    assert_int_equal (tr_sign_record (other, md_other.socket, &err), 0);
    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    mutate (rec, "signature.credential",
            json_string (sig_str (other, "credential")));
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, &signer,
                                      &err),
                      TR_SIG_FORGED);
    assert_string_equal (err.text, "signature is forged: credential invalid "
                                   "(Invalid credential)");
    assert_int_equal (signer, (uid_t)-1);

    /* A malformed credential never reaches munged's answer. */
    mutate (rec, "signature.credential", json_string ("MUNGE:garbage:"));
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, NULL,
                                      &err),
                      TR_SIG_FORGED);
    assert_true (
        !strncmp (err.text, "signature is forged: credential invalid (", 41));

    /* A malformed signature member. */
    mutate (rec, "signature.digest", json_string ("XYZ"));
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, NULL,
                                      &err),
                      TR_SIG_FORGED);
    assert_string_equal (err.text, "signature is malformed: signature.digest: "
                                   "expected 64 lowercase hex digits");
    json_decref (other);
    json_decref (rec);
}

/* An authentic credential from a trusted uid, minted for something other
 * than this record format.
 */
static void test_forged_foreign_payload (void **state)
{
    json_t *rec = load_basic ();
    munge_ctx_t ctx = munge_ctx_create ();
    tr_error_t err;
    size_t n;
    const uid_t *trusted = self_trusted (&n);
    char *cred = NULL;

    (void)state;
    assert_non_null (ctx);
    assert_int_equal (munge_ctx_set (ctx, MUNGE_OPT_SOCKET, md_main.socket),
                      EMUNGE_SUCCESS);
    assert_int_equal (munge_encode (&cred, ctx, "hello", 5), EMUNGE_SUCCESS);
    munge_ctx_destroy (ctx);
    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    mutate (rec, "signature.credential", json_string (cred));
    free (cred);
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, NULL,
                                      &err),
                      TR_SIG_FORGED);
    assert_string_equal (err.text, "signature is forged: credential does not "
                                   "carry "
                                   "a record digest");
    json_decref (rec);
}

/* A text (a live summary): signed, it verifies; a byte changed is
 * tampered; a record's credential, another key's or none is not a
 * signature of it; an untrusted signer's is forged.
 */
static void test_text (void **state)
{
    static const char text[] = "#tracer-live 1\tc1\tn1\t1001\t1\t30\nrow\n";
    char other_text[sizeof (text)];
    json_t *rec = load_basic ();
    tr_error_t err;
    size_t n;
    const uid_t *trusted = self_trusted (&n);
    char *cred = NULL, *other = NULL;
    uid_t signer = (uid_t)-1;

    (void)state;
    assert_int_equal (tr_sign_text (text, strlen (text), md_main.socket, &cred,
                                    &err),
                      0);
    assert_int_equal (tr_sign_verify_text (text, strlen (text), cred,
                                           md_main.socket, trusted, n, &signer,
                                           &err),
                      TR_SIG_VALID);
    assert_int_equal (signer, geteuid ());
    memcpy (other_text, text, sizeof (text));
    other_text[strlen (text) - 2] = 'x';
    assert_int_equal (tr_sign_verify_text (other_text, strlen (other_text),
                                           cred, md_main.socket, trusted, n,
                                           NULL, &err),
                      TR_SIG_TAMPERED);
    assert_string_equal (err.text, "live summary has been modified after "
                                   "signing (digest mismatch)");
    /* the credential of a record is not one of a live summary */
    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    assert_int_equal (
        tr_sign_verify_text (text, strlen (text),
                             json_string_value (json_object_get (
                                 json_object_get (rec, "signature"),
                                 "credential")),
                             md_main.socket, trusted, n, NULL, &err),
        TR_SIG_FORGED);
    assert_string_equal (err.text, "signature is forged: credential does not "
                                   "carry a live summary digest");
    /* another munged's key */
    assert_int_equal (tr_sign_text (text, strlen (text), md_other.socket,
                                    &other, &err),
                      0);
    assert_int_equal (tr_sign_verify_text (text, strlen (text), other,
                                           md_main.socket, trusted, n, NULL,
                                           &err),
                      TR_SIG_FORGED);
    assert_int_equal (tr_sign_verify_text (text, strlen (text), NULL,
                                           md_main.socket, trusted, n, NULL,
                                           &err),
                      TR_SIG_UNSIGNED);
    /* a signer not trusted (root only, and this is not root) */
    if (geteuid () != 0)
        assert_int_equal (tr_sign_verify_text (text, strlen (text), cred,
                                               md_main.socket, NULL, 0, NULL,
                                               &err),
                          TR_SIG_FORGED);
    else {
        uid_t nobody = NOBODY;
        assert_int_equal (tr_sign_verify_text (text, strlen (text), cred,
                                               md_main.socket, &nobody, 1,
                                               NULL, &err),
                          TR_SIG_FORGED);
    }
    free (cred);
    free (other);
    json_decref (rec);
}

/* munged not running (no socket, or refused) in a user's words, with
 * the socket tried; every other reason as it is.
 */
static void test_reason_str (void **state)
{
    static const struct {
        const char *reason;
        const char *expect;
    } cases[] = {
        { "munge: Socket communication error: Failed to access "
          "\"/run/munge/munge.socket.2\": No such file or directory "
          "(Did you start munged?)",
          "munged was not running (no answer on /run/munge/munge.socket.2): "
          "start munged to have records signed" },
        { "munge: Socket communication error: Failed to connect to "
          "\"/run/munge/munge.socket.2\": Connection refused",
          "munged was not running (no answer on /run/munge/munge.socket.2): "
          "start munged to have records signed" },
        /* munged runs, but this user may not reach it: munge's words */
        { "munge: Socket communication error: Failed to connect to "
          "\"/run/munge/munge.socket.2\": Permission denied",
          "munge: Socket communication error: Failed to connect to "
          "\"/run/munge/munge.socket.2\": Permission denied" },
        { "munge: Socket communication error",
          "munge: Socket communication error" },
        { "munge: Invalid credential", "munge: Invalid credential" },
        { "signing disabled (--no-sign)", "signing disabled (--no-sign)" },
        { NULL, "no reason given" },
    };
    char buf[256], small[8];

    (void)state;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
        assert_string_equal (tr_sign_reason_str (cases[i].reason, buf,
                                                 sizeof (buf)),
                             cases[i].expect);
    /* no room for the words: the reason itself */
    assert_string_equal (tr_sign_reason_str (cases[0].reason, small,
                                             sizeof (small)),
                         cases[0].reason);
}

static void test_unsigned (void **state)
{
    json_t *rec = load_basic ();
    tr_error_t err;

    (void)state;
    /* The fixture is unsigned with a reason that names no socket: as
     * munge said it
     */
    assert_int_equal (tr_sign_verify (rec, md_main.socket, NULL, 0, NULL, &err),
                      TR_SIG_UNSIGNED);
    assert_string_equal (err.text, "record is unsigned (reason: munge: "
                                   "Socket communication error)");

    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    assert_int_equal (tr_sign_mark_unsigned (rec, "signing disabled"), 0);
    assert_string_equal (sig_str (rec, "scheme"), "none");
    assert_null (sig_str (rec, "credential"));
    assert_int_equal (tr_record_validate (rec, &err), 0);
    assert_int_equal (tr_sign_verify (rec, md_main.socket, NULL, 0, NULL, &err),
                      TR_SIG_UNSIGNED);
    assert_string_equal (err.text, "record is unsigned (reason: signing "
                                   "disabled)");

    assert_int_equal (json_object_del (rec, "signature"), 0);
    assert_int_equal (tr_sign_verify (rec, md_main.socket, NULL, 0, NULL, &err),
                      TR_SIG_UNSIGNED);
    assert_string_equal (err.text, "record is unsigned (no signature member)");

    /* A NULL reason, an over-long one cut on a character boundary. */
    assert_int_equal (tr_sign_mark_unsigned (rec, NULL), 0);
    assert_string_equal (sig_str (rec, "reason"), "unspecified");
    {
        char longer[1100];
        memset (longer, 'a', sizeof (longer));
        /* 1023 ASCII bytes, then a 2-byte character across the bound. */
        longer[1023] = (char)0xc3;
        longer[1024] = (char)0xa9;
        longer[1099] = '\0';
        assert_int_equal (tr_sign_mark_unsigned (rec, longer), 0);
        assert_int_equal (strlen (sig_str (rec, "reason")), 1023);
        assert_int_equal (tr_record_validate (rec, &err), 0);
    }
    errno = 0;
    assert_int_equal (tr_sign_mark_unsigned (rec, "bad \xff utf-8"), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (tr_sign_mark_unsigned (NULL, "x"), -1);
    json_decref (rec);
}

static void test_expired (void **state)
{
    json_t *rec = load_basic ();
    struct tr_sign_opts opts = { md_main.socket, 1 };
    struct timespec ts = { 2, 100 * 1000 * 1000 };
    tr_error_t err;
    size_t n;
    const uid_t *trusted = self_trusted (&n);
    uid_t signer = (uid_t)-1;

    (void)state;
    assert_int_equal (tr_sign_record_opts (rec, &opts, &err), 0);
    nanosleep (&ts, NULL);
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, &signer,
                                      &err),
                      TR_SIG_VALID_OLD);
    assert_int_equal (signer, geteuid ());
    assert_string_equal (err.text, "signature is authentic; its credential has "
                                   "expired (munge: Expired credential; normal "
                                   "for a record read after munged's TTL)");

    /* Expired and modified is still tampered. */
    mutate (rec, "tags.stage", json_string ("eval"));
    assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, n, NULL,
                                      &err),
                      TR_SIG_TAMPERED);
    json_decref (rec);
}

/* Sign as another user and return the credential (caller frees).  As
 * root, a child drops to nobody; otherwise we already are not root.
 */
static char *credential_from_other_uid (json_t *rec, uid_t *uid)
{
    tr_error_t err;
    char buf[4096];
    size_t len = 0;
    int fds[2];
    int status;
    pid_t pid;

    if (geteuid () != 0) {
        assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
        *uid = geteuid ();
        return strdup (sig_str (rec, "credential"));
    }
    assert_int_equal (pipe (fds), 0);
    pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        const char *cred;
        size_t left;

        close (fds[0]);
        if (setgroups (0, NULL) < 0 || setgid (NOBODY) < 0
            || setuid (NOBODY) < 0)
            _exit (2);
        if (tr_sign_record (rec, md_main.socket, &err) < 0)
            _exit (3);
        cred = sig_str (rec, "credential");
        left = strlen (cred);
        while (left > 0) {
            ssize_t w = write (fds[1], cred, left);
            if (w <= 0)
                _exit (4);
            cred += w;
            left -= (size_t)w;
        }
        /* This copy of the caller's record dies with the child; free it
         * so that valgrind runs stay clean.
         */
        json_decref (rec);
        _exit (0);
    }
    close (fds[1]);
    for (;;) {
        ssize_t r = read (fds[0], buf + len, sizeof (buf) - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close (fds[0]);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        fail_msg ("signing child failed (status 0x%x)", status);
    buf[len] = '\0';
    *uid = NOBODY;
    return strdup (buf);
}

static void test_untrusted_signer (void **state)
{
    json_t *rec = load_basic ();
    tr_error_t err;
    uid_t other = 0, signer = (uid_t)-1;
    char want[256];
    char *cred;

    (void)state;
    cred = credential_from_other_uid (rec, &other);
    assert_non_null (cred);
    assert_true (other != 0);
    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    mutate (rec, "signature.credential", json_string (cred));
    free (cred);

    /* Default trust: root only. */
    assert_int_equal (tr_sign_verify (rec, md_main.socket, NULL, 0, &signer,
                                      &err),
                      TR_SIG_FORGED);
    assert_int_equal (signer, other);
    snprintf (want, sizeof (want),
              "signature is forged: signed by uid %lu, which is not a "
              "trusted signer",
              (unsigned long)other);
    assert_string_equal (err.text, want);

    /* Trusted explicitly (a replay by now, so valid-old). */
    {
        uid_t trusted[2] = { 0, other };
        assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, 2, NULL,
                                          &err),
                          TR_SIG_VALID_OLD);
        trusted[1] = other + 1;
        assert_int_equal (tr_sign_verify (rec, md_main.socket, trusted, 2, NULL,
                                          &err),
                          TR_SIG_FORGED);
    }
    json_decref (rec);
}

static double now_s (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_unreachable (void **state)
{
    const char *nowhere = "/nonexistent/tracer-test/munge.sock";
    json_t *rec = load_basic ();
    tr_error_t err;
    double t0;

    (void)state;
    t0 = now_s ();
    errno = 0;
    assert_int_equal (tr_sign_record (rec, nowhere, &err), -1);
    assert_int_equal (errno, EIO);
    /* A missing socket (munged restarting) is retried, briefly: a
     * step's end does not wait on a dead munged.
     */
    assert_true (now_s () - t0 >= 0.07);
    assert_true (now_s () - t0 < 2.0);
    assert_string_equal (sig_str (rec, "scheme"), "none");
    assert_non_null (strstr (sig_str (rec, "reason"), "munge"));
    assert_true (!strncmp (sig_str (rec, "reason"),
                           "munge: Socket communication error", 33));
    assert_true (
        !strncmp (err.text, sig_str (rec, "reason"), strlen (err.text) - 3));
    /* The record stays a valid (unsigned) record. */
    assert_int_equal (tr_record_validate (rec, &err), 0);

    /* Verification needs munged too: that is an error, not a verdict. */
    assert_int_equal (tr_sign_record (rec, md_main.socket, &err), 0);
    assert_int_equal (tr_sign_verify (rec, nowhere, NULL, 0, NULL, &err),
                      TR_SIG_ERROR);
    assert_true (!strncmp (err.text,
                           "cannot verify signature: munge: Socket "
                           "communication error",
                           58));
    json_decref (rec);
}

/* munged was running and went away (its socket file is left behind). */
static void test_munged_gone (void **state)
{
    json_t *rec = load_basic ();
    char socket[sizeof (md_other.socket)];
    tr_error_t err;
    double t0;

    (void)state;
    memcpy (socket, md_other.socket, sizeof (socket));
    assert_int_equal (kill (md_other.pid, SIGKILL), 0);
    assert_int_equal (waitpid (md_other.pid, NULL, 0), md_other.pid);
    md_other.pid = 0;
    t0 = now_s ();
    assert_int_equal (tr_sign_record (rec, socket, &err), -1);
    /* libmunge retries a refused connection for about 2 s by itself;
     * signing must not multiply that with retries of its own.
     */
    if (now_s () - t0 > 4.5)
        fail_msg ("signing against a dead munged took %.2f s", now_s () - t0);
    assert_string_equal (sig_str (rec, "scheme"), "none");
    assert_true (!strncmp (sig_str (rec, "reason"), "munge: ", 7));
    json_decref (rec);
}

static void test_status_str (void **state)
{
    (void)state;
    assert_string_equal (tr_sign_status_str (TR_SIG_VALID), "valid");
    assert_string_equal (tr_sign_status_str (TR_SIG_VALID_OLD), "valid-old");
    assert_string_equal (tr_sign_status_str (TR_SIG_UNSIGNED), "unsigned");
    assert_string_equal (tr_sign_status_str (TR_SIG_TAMPERED), "tampered");
    assert_string_equal (tr_sign_status_str (TR_SIG_FORGED), "forged");
    assert_string_equal (tr_sign_status_str (TR_SIG_ERROR), "error");
    assert_string_equal (tr_sign_status_str ((tr_sig_status_t)42), "unknown");
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_digest_known_answer),
        cmocka_unit_test (test_digest_stable),
        cmocka_unit_test (test_digest_changes),
        cmocka_unit_test (test_status_str),
        cmocka_unit_test (test_sign_verify),
        cmocka_unit_test (test_tampered),
        cmocka_unit_test (test_forged_other_key),
        cmocka_unit_test (test_forged_foreign_payload),
        cmocka_unit_test (test_text),
        cmocka_unit_test (test_reason_str),
        cmocka_unit_test (test_unsigned),
        cmocka_unit_test (test_expired),
        cmocka_unit_test (test_untrusted_signer),
        cmocka_unit_test (test_unreachable),
        cmocka_unit_test (test_munged_gone),
    };

    if (!(munged_path = find_munged ())) {
        const char *ci = getenv ("CI");

        if (ci && !strcmp (ci, "true")) {
            printf ("Bail out! munged not found (required when CI=true)\n");
            return 1;
        }
        printf ("1..0 # SKIP munged not found\n");
        return 0;
    }
    return cmocka_run_group_tests (tests, group_setup, group_teardown);
}
