/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for libtracer/util/path.c: directory creation that refuses
 * symlinks, atomic replacement that never leaves a partial or temporary
 * file, bounded reads that cannot hang on a FIFO, and the MUNGE-style
 * permission check.  Ownership tests need root, which the test suite
 * runs as; without it the binary skips as a whole.  The writer's
 * temporary names come from getrandom(), defined here so that a test
 * can know them in advance and plant links at them (see fake_random).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "libtracer/util/path.h"
#include "plant.h"
#include "rmtree.h"

/* While fake_random holds values, getrandom() hands them out in turn,
 * so the temporary names the writer tries are known in advance; then
 * the real one.  The definition here takes the place of the C
 * library's for the writer linked into this binary.
 */
static uint64_t fake_random[16];
static size_t fake_random_n, fake_random_next;

ssize_t getrandom (void *buf, size_t len, unsigned int flags)
{
    if (fake_random_next < fake_random_n && len == sizeof (uint64_t)) {
        memcpy (buf, &fake_random[fake_random_next++], len);
        return (ssize_t)len;
    }
    return (ssize_t)syscall (SYS_getrandom, buf, len, flags);
}

/* Per-test scratch directory under /tmp. */
struct fixture {
    char dir[64];
    int dirfd;
};

static int setup (void **state)
{
    struct fixture *f = calloc (1, sizeof (*f));

    if (!f)
        return -1;
    snprintf (f->dir, sizeof (f->dir), "/tmp/tracer-path-XXXXXX");
    if (!mkdtemp (f->dir)) {
        free (f);
        return -1;
    }
    f->dirfd = open (f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    *state = f;
    return f->dirfd < 0 ? -1 : 0;
}

static int teardown (void **state)
{
    struct fixture *f = *state;

    close (f->dirfd);
    rmtree (f->dir);
    free (f);
    return 0;
}

/* dir/rel into buf (tests use short names; truncation fails the test). */
static const char *at (const struct fixture *f,
                       char *buf,
                       size_t size,
                       const char *fmt,
                       ...) __attribute__ ((format (printf, 4, 5)));
static const char *at (const struct fixture *f,
                       char *buf,
                       size_t size,
                       const char *fmt,
                       ...)
{
    char rel[256];
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (rel, sizeof (rel), fmt, ap);
    va_end (ap);
    assert_true (n >= 0 && (size_t)n < sizeof (rel));
    n = snprintf (buf, size, "%s/%s", f->dir, rel);
    assert_true (n >= 0 && (size_t)n < size);
    return buf;
}

static void write_file (const char *path, const char *content)
{
    FILE *fp = fopen (path, "w");

    assert_non_null (fp);
    assert_int_equal (fputs (content, fp) >= 0, 1);
    assert_int_equal (fclose (fp), 0);
}

static void assert_content (const char *path, const char *expect)
{
    char buf[4096];
    FILE *fp = fopen (path, "r");
    size_t n;

    assert_non_null (fp);
    n = fread (buf, 1, sizeof (buf) - 1, fp);
    fclose (fp);
    buf[n] = '\0';
    assert_int_equal (n, strlen (expect));
    assert_memory_equal (buf, expect, n);
}

static mode_t mode_of (const char *path)
{
    struct stat st;

    assert_int_equal (lstat (path, &st), 0);
    return st.st_mode & 07777;
}

static bool exists (const char *path)
{
    struct stat st;

    return lstat (path, &st) == 0;
}

/* Number of entries in dir whose name contains needle ("" = all). */
static int count_entries (const char *dir, const char *needle)
{
    DIR *d = opendir (dir);
    struct dirent *de;
    int n = 0;

    assert_non_null (d);
    while ((de = readdir (d))) {
        if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
        if (strstr (de->d_name, needle))
            n++;
    }
    closedir (d);
    return n;
}

/* A log file whose directory and parents are missing: they are made
 * (0755) and the file opened for appending; a path that cannot be made
 * says why.
 */
static void test_open_log (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX], d[PATH_MAX];
    tr_error_t e = { 0 };
    struct stat st;
    int fd;

    fd = tr_path_open_log (at (f, p, sizeof (p), "usr/local/var/log/t.log"),
                           0600, &e);
    assert_true (fd >= 0);
    assert_int_equal (write (fd, "x\n", 2), 2);
    close (fd);
    assert_int_equal (stat (p, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0600);
    assert_int_equal (stat (at (f, d, sizeof (d), "usr/local"), &st), 0);
    assert_int_equal (st.st_mode & 07777, 0755);
    /* appended to, not truncated */
    assert_true ((fd = tr_path_open_log (p, 0600, &e)) >= 0);
    assert_int_equal (write (fd, "y\n", 2), 2);
    close (fd);
    assert_int_equal (stat (p, &st), 0);
    assert_int_equal (st.st_size, 4);
    /* a file where a directory should be */
    fd = tr_path_open_log (at (f, d, sizeof (d), "usr/local/var/log/t.log/x"),
                           0600, &e);
    assert_int_equal (fd, -1);
    assert_non_null (strstr (e.text, "t.log"));
}

static void test_mkdir_p_mode_ignores_umask (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    const struct {
        mode_t umask;
        mode_t mode;
        const char *leaf;
    } cases[] = {
        { 077, 0755, "a/b/c" },
        { 000, 0750, "x/y" },
        { 022, 0777, "w" },
        { 077, 01777, "s/t" },
    };

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        mode_t old = umask (cases[i].umask);
        tr_error_t e = { 0 };
        int fd = tr_path_mkdir_p (at (f, p, sizeof (p), "%s", cases[i].leaf),
                                  cases[i].mode, &e);
        umask (old);
        assert_true (fd >= 0);
        close (fd);
        /* Every component created, each with exactly the mode. */
        char *copy = strdup (cases[i].leaf);
        assert_non_null (copy);
        for (char *s = copy;; s++) {
            char c = *s;
            if (c != '/' && c != '\0')
                continue;
            *s = '\0';
            assert_int_equal (mode_of (at (f, p, sizeof (p), "%s", copy)),
                              cases[i].mode);
            *s = c;
            if (c == '\0')
                break;
        }
        free (copy);
    }

    /* An existing directory is accepted and keeps its own mode. */
    int fd = tr_path_mkdir_p (at (f, p, sizeof (p), "a/b"), 0700, NULL);
    assert_true (fd >= 0);
    close (fd);
    assert_int_equal (mode_of (p), 0755);

    /* Relative to a directory fd; "." and empty components are skipped. */
    fd = tr_path_mkdirat_p (f->dirfd, "./r//s/", 0711, NULL);
    assert_true (fd >= 0);
    close (fd);
    assert_int_equal (mode_of (at (f, p, sizeof (p), "r/s")), 0711);

    /* The returned fd is the final directory itself. */
    fd = tr_path_mkdirat_p (f->dirfd, "a/b/c", 0755, NULL);
    assert_true (fd >= 0);
    assert_int_equal (mkdirat (fd, "inside", 0700), 0);
    close (fd);
    assert_true (exists (at (f, p, sizeof (p), "a/b/c/inside")));
}

static void test_mkdir_p_refuses_symlinks (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    char target[PATH_MAX];
    tr_error_t e = { 0 };
    int fd;

    assert_int_equal (mkdir (at (f, target, sizeof (target), "target"), 0755),
                      0);
    assert_int_equal (symlink (target, at (f, p, sizeof (p), "link")), 0);
    write_file (at (f, p, sizeof (p), "file"), "x");

    /* Symlink in the middle: nothing may be created through it. */
    fd = tr_path_mkdir_p (at (f, p, sizeof (p), "link/sub/deeper"), 0755, &e);
    assert_int_equal (fd, -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);
    assert_non_null (strstr (e.text, "link"));
    assert_null (strstr (e.text, "link/sub"));
    assert_int_equal (count_entries (target, ""), 0);

    /* Symlink as the final component. */
    fd = tr_path_mkdirat_p (f->dirfd, "link", 0755, &e);
    assert_int_equal (fd, -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);

    /* A regular file where a directory should be. */
    fd = tr_path_mkdirat_p (f->dirfd, "file/sub", 0755, &e);
    assert_int_equal (fd, -1);
    assert_int_equal (errno, ENOTDIR);
    assert_non_null (strstr (e.text, "file"));

    /* ".." would leave the trusted directory. */
    fd = tr_path_mkdirat_p (f->dirfd, "a/../../escape", 0755, &e);
    assert_int_equal (fd, -1);
    assert_int_equal (errno, EINVAL);
    assert_false (exists ("/tmp/escape"));
    assert_false (exists (at (f, p, sizeof (p), "a")));
}

static void test_write_atomic_content_owner_mode (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    struct stat st;
    const char one[] = "{\"first\": 1}\n";
    const char two[] = "{\"second\": 22222}\n";

    assert_int_equal (tr_path_write_atomic (f->dirfd, "rec.json", one,
                                            strlen (one), 0640, 65534, 65534,
                                            NULL),
                      0);
    assert_int_equal (stat (at (f, p, sizeof (p), "rec.json"), &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_mode & 07777, 0640);
    assert_int_equal (st.st_uid, 65534);
    assert_int_equal (st.st_gid, 65534);
    assert_content (p, one);

    /* Replace: new content, mode and owner; no second entry. */
    assert_int_equal (tr_path_write_atomic (f->dirfd, "rec.json", two,
                                            strlen (two), 0604, (uid_t)-1,
                                            (gid_t)-1, NULL),
                      0);
    assert_int_equal (stat (p, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0604);
    assert_int_equal (st.st_uid, 0);
    assert_int_equal (st.st_gid, 0);
    assert_content (p, two);
    assert_int_equal (count_entries (f->dir, ""), 1);
    assert_int_equal (count_entries (f->dir, ".tmp."), 0);

    /* Empty content is a valid file. */
    assert_int_equal (tr_path_write_atomic (f->dirfd, "empty", "", 0, 0600,
                                            (uid_t)-1, (gid_t)-1, NULL),
                      0);
    assert_content (at (f, p, sizeof (p), "empty"), "");
}

static void test_write_atomic_bad_names (void **state)
{
    struct fixture *f = *state;
    const char *names[] = { "", ".", "..", "a/b", "../escape", NULL };

    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++) {
        tr_error_t e = { 0 };
        errno = 0;
        assert_int_equal (tr_path_write_atomic (f->dirfd, names[i], "x", 1,
                                                0600, (uid_t)-1, (gid_t)-1, &e),
                          -1);
        assert_int_equal (errno, EINVAL);
        assert_true (e.text[0] != '\0');
    }
    assert_int_equal (count_entries (f->dir, ""), 0);
}

/* RLIMIT_FSIZE makes write() fail with EFBIG part-way through, standing
 * in for ENOSPC/EDQUOT on a full shared file system.
 */
static void test_write_atomic_failure_keeps_old (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    char big[8192];
    struct rlimit old;
    struct rlimit lim;
    tr_error_t e = { 0 };
    const char prev[] = "previous content\n";
    void (*oldsig) (int);
    int rc;
    int saved;

    memset (big, 'x', sizeof (big));
    at (f, p, sizeof (p), "rec.json");
    write_file (p, prev);

    assert_int_equal (getrlimit (RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 100;
    oldsig = signal (SIGXFSZ, SIG_IGN);
    assert_int_equal (setrlimit (RLIMIT_FSIZE, &lim), 0);
    rc = tr_path_write_atomic (f->dirfd, "rec.json", big, sizeof (big), 0644,
                               (uid_t)-1, (gid_t)-1, &e);
    saved = errno;
    assert_int_equal (setrlimit (RLIMIT_FSIZE, &old), 0);
    signal (SIGXFSZ, oldsig);

    assert_int_equal (rc, -1);
    assert_int_equal (saved, EFBIG);
    assert_content (p, prev);
    assert_int_equal (count_entries (f->dir, ".tmp."), 0);
    assert_int_equal (count_entries (f->dir, ""), 1);
    /* The message names the step, the file and the cause. */
    assert_int_equal (strncmp (e.text, "write ", 6), 0);
    assert_non_null (strstr (e.text, f->dir));
    assert_non_null (strstr (e.text, "/rec.json: "));
    assert_non_null (strstr (e.text, strerror (EFBIG)));
}

static void test_write_atomic_replaces_symlink (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    char victim[PATH_MAX];
    struct stat st;
    int sub;

    /* A symlink planted at the record's name, pointing at a file the
     * writer must not touch, is replaced, not written through.
     */
    write_file (at (f, victim, sizeof (victim), "victim"), "secret\n");
    assert_int_equal (mkdir (at (f, p, sizeof (p), "sub"), 0755), 0);
    assert_int_equal (symlink ("../victim",
                               at (f, p, sizeof (p), "sub/rec.json")),
                      0);
    sub = openat (f->dirfd, "sub", O_RDONLY | O_DIRECTORY);
    assert_true (sub >= 0);
    assert_int_equal (tr_path_write_atomic (sub, "rec.json", "new\n", 4, 0644,
                                            (uid_t)-1, (gid_t)-1, NULL),
                      0);
    close (sub);
    assert_content (victim, "secret\n");
    assert_int_equal (lstat (p, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_content (p, "new\n");
}

/* The non-durable variant: the same content, mode, owner and link
 * rules, no temporary left, bad names refused.
 */
static void test_replace (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX], victim[PATH_MAX];
    struct stat st;
    tr_error_t e = { 0 };

    write_file (at (f, victim, sizeof (victim), "victim"), "secret\n");
    assert_int_equal (symlink ("victim", at (f, p, sizeof (p), "state")), 0);
    assert_int_equal (tr_path_replace (f->dirfd, "state", "one\n", 4, 0600,
                                       65534, 65534, NULL),
                      0);
    assert_content (victim, "secret\n");
    assert_int_equal (lstat (p, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_mode & 07777, 0600);
    assert_int_equal (st.st_uid, 65534);
    assert_content (p, "one\n");
    assert_int_equal (tr_path_replace (f->dirfd, "state", "two\n", 4, 0640,
                                       (uid_t)-1, (gid_t)-1, NULL),
                      0);
    assert_content (p, "two\n");
    assert_int_equal (count_entries (f->dir, ".tmp."), 0);
    assert_int_equal (tr_path_replace (f->dirfd, "a/b", "x", 1, 0600,
                                       (uid_t)-1, (gid_t)-1, &e),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (e.text, "invalid file name"));
}

static void alarm_handler (int sig)
{
    (void)sig;
    /* Reaching this means an open() or read() blocked. */
    static const char msg[] = "read_file blocked on a FIFO\n";
    if (write (STDERR_FILENO, msg, sizeof (msg) - 1) < 0)
        _exit (2);
    _exit (1);
}

static void test_read_file (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    char big[200];
    size_t len = 12345;
    tr_error_t e = { 0 };
    char *s;

    write_file (at (f, p, sizeof (p), "ok"), "hello\n");
    s = tr_path_read_file (f->dirfd, "ok", 100, &len, NULL);
    assert_non_null (s);
    assert_int_equal (len, 6);
    assert_string_equal (s, "hello\n");
    free (s);

    /* Exactly max is fine; one byte over is EFBIG. */
    memset (big, 'y', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    write_file (at (f, p, sizeof (p), "big"), big);
    s = tr_path_read_file (f->dirfd, "big", sizeof (big) - 1, &len, NULL);
    assert_non_null (s);
    assert_int_equal (len, sizeof (big) - 1);
    assert_int_equal (strlen (s), len);
    free (s);
    len = 12345;
    s = tr_path_read_file (f->dirfd, "big", sizeof (big) - 2, &len, &e);
    assert_null (s);
    assert_int_equal (errno, EFBIG);
    assert_int_equal (len, 12345);
    assert_non_null (strstr (e.text, "big"));

    /* Absolute path with AT_FDCWD, and an empty file. */
    write_file (at (f, p, sizeof (p), "empty"), "");
    s = tr_path_read_file (AT_FDCWD, p, 10, &len, NULL);
    assert_non_null (s);
    assert_int_equal (len, 0);
    assert_string_equal (s, "");
    free (s);

    /* A symlink, even to a readable file, is refused. */
    assert_int_equal (symlink ("ok", at (f, p, sizeof (p), "link")), 0);
    s = tr_path_read_file (f->dirfd, "link", 100, &len, NULL);
    assert_null (s);
    assert_int_equal (errno, ELOOP);

    /* A FIFO with no writer must fail at once, not block. */
    assert_int_equal (mkfifo (at (f, p, sizeof (p), "fifo"), 0600), 0);
    signal (SIGALRM, alarm_handler);
    alarm (10);
    s = tr_path_read_file (f->dirfd, "fifo", 100, &len, &e);
    alarm (0);
    signal (SIGALRM, SIG_DFL);
    assert_null (s);
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (e.text, "not a regular file"));

    s = tr_path_read_file (f->dirfd, ".", 100, &len, NULL);
    assert_null (s);
    assert_int_equal (errno, EISDIR);

    s = tr_path_read_file (f->dirfd, "missing", 100, &len, NULL);
    assert_null (s);
    assert_int_equal (errno, ENOENT);
}

static void test_is_secure (void **state)
{
    struct fixture *f = *state;
    char p[PATH_MAX];
    const struct {
        const char *rel; /* NULL: the fixture dir itself */
        uid_t owner;
        int expect;
        const char *names; /* substring of the message, relative */
    } cases[] = {
        { NULL, 0, 1, NULL },
        { "safe", 0, 1, NULL },
        { "safe/file", 0, 1, NULL },
        { "open", 0, 0, "open: writable by others" },
        { "open/inner", 0, 0, "open: writable by others" },
        { "group", 0, 0, "group: writable by group" },
        { "sticky", 0, 1, NULL },
        { "sticky/inner", 0, 1, NULL },
        { "nobody", 0, 0, "nobody: owned by uid 65534" },
        { "nobody", 65534, 1, NULL },
        { "nobody", 1000, 0, "nobody: owned by uid 65534" },
        { "gwfile", 0, 0, "gwfile: writable by group" },
        { "stickyfile", 0, 0, "stickyfile: writable by others" },
        { "final-link", 0, 0, "final-link: is a symbolic link" },
        /* A symlink in a parent is resolved, then the target checked. */
        { "parent-link/file", 0, 1, NULL },
        { "bad-parent-link/inner", 0, 0, "open: writable by others" },
    };
    struct {
        const char *rel;
        mode_t mode;
        bool dir;
    } tree[] = {
        { "safe", 0755, true },         { "safe/file", 0644, false },
        { "open", 0777, true },         { "open/inner", 0755, true },
        { "group", 0775, true },        { "sticky", 01777, true },
        { "sticky/inner", 0700, true }, { "nobody", 0755, true },
        { "gwfile", 0664, false },      { "stickyfile", 01666, false },
    };
    tr_error_t e;

    for (size_t i = 0; i < sizeof (tree) / sizeof (tree[0]); i++) {
        at (f, p, sizeof (p), "%s", tree[i].rel);
        if (tree[i].dir)
            assert_int_equal (mkdir (p, 0700), 0);
        else
            write_file (p, "x");
        assert_int_equal (chmod (p, tree[i].mode), 0);
    }
    assert_int_equal (chown (at (f, p, sizeof (p), "nobody"), 65534, 65534), 0);
    assert_int_equal (symlink ("safe/file",
                               at (f, p, sizeof (p), "final-link")),
                      0);
    assert_int_equal (symlink ("safe", at (f, p, sizeof (p), "parent-link")),
                      0);
    assert_int_equal (symlink ("open",
                               at (f, p, sizeof (p), "bad-parent-link")),
                      0);

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const char *path =
            cases[i].rel ? at (f, p, sizeof (p), "%s", cases[i].rel) : f->dir;
        memset (&e, 0, sizeof (e));
        int rc = tr_path_is_secure (path, cases[i].owner, &e);
        if (rc != cases[i].expect)
            fail_msg ("%s: got %d, expected %d (%s)", path, rc, cases[i].expect,
                      e.text);
        if (cases[i].names) {
            char want[PATH_MAX];
            /* Messages name the offending component by full path. */
            at (f, want, sizeof (want), "%s", cases[i].names);
            if (!strstr (e.text, want))
                fail_msg ("%s: message '%s' lacks '%s'", path, e.text, want);
        }
    }

    /* The shared /tmp is sticky, so it is acceptable. */
    assert_int_equal (tr_path_is_secure ("/tmp", 0, NULL), 1);
    assert_int_equal (tr_path_is_secure ("/", 0, NULL), 1);

    /* Lookup failures are -1, not "insecure". */
    memset (&e, 0, sizeof (e));
    assert_int_equal (tr_path_is_secure (at (f, p, sizeof (p), "missing"), 0,
                                         &e),
                      -1);
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (e.text, "missing"));
    assert_int_equal (tr_path_is_secure ("", 0, NULL), -1);
    assert_int_equal (errno, EINVAL);
}

static void assert_victim (const char *path,
                           const char *content,
                           mode_t mode,
                           nlink_t nlink)
{
    struct stat st;

    assert_int_equal (lstat (path, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_mode & 07777, mode);
    assert_int_equal (st.st_uid, 0);
    assert_int_equal (st.st_nlink, nlink);
    assert_content (path, content);
}

/* The entry at path is the writer's own: a regular file with content,
 * one link, not the victim's inode.
 */
static void assert_own_file (const char *path,
                             const char *content,
                             const struct stat *victim)
{
    struct stat st;

    assert_int_equal (lstat (path, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_nlink, 1);
    assert_true (st.st_ino != victim->st_ino);
    assert_content (path, content);
}

/* A user who may write in the directory root writes to plants symlinks
 * and hard links to root's file at the names root will write (the
 * file, its temporaries, a directory on the way).  Root's writes
 * replace or refuse them; the victim keeps its content, mode and owner,
 * and gains no link.
 */
static void test_user_plants (void **state)
{
    struct fixture *f = *state;
    char victim[PATH_MAX], p[PATH_MAX], secret[PATH_MAX];
    struct plant plants[] = {
        { false, victim, "", 0 },  /* u/rec.json */
        { true, victim, "", 0 }, /* u/state */
        { false, victim, "", 0 },  /* rec.json's 1st temporary */
        { true, victim, "", 0 }, /* rec.json's 2nd temporary */
        { false, secret, "", 0 },  /* u/sub, a directory's name */
    };
    const size_t np = sizeof (plants) / sizeof (plants[0]);
    struct stat vst, st;
    tr_error_t e = { 0 };
    long pid = (long)getpid ();
    int ufd, fd;

    if (geteuid () != 0) {
        print_message ("# test_user_plants: not root, nothing planted\n");
        return;
    }
    /* the user reaches the victim, cannot write it, owns u/ */
    assert_int_equal (chmod (f->dir, 0755), 0);
    write_file (at (f, victim, sizeof (victim), "victim"), "secret\n");
    assert_int_equal (chmod (victim, 0644), 0);
    assert_int_equal (mkdir (at (f, secret, sizeof (secret), "secret"), 0700),
                      0);
    assert_int_equal (mkdir (at (f, p, sizeof (p), "u"), 0755), 0);
    assert_int_equal (chown (p, NOBODY, NOBODY), 0);
    at (f, plants[0].name, PATH_MAX, "u/rec.json");
    at (f, plants[1].name, PATH_MAX, "u/state");
    at (f, plants[2].name, PATH_MAX, "u/.rec.json.tmp.%ld.%016llx", pid,
        0x1111111111111111ULL);
    at (f, plants[3].name, PATH_MAX, "u/.rec.json.tmp.%ld.%016llx", pid,
        0x2222222222222222ULL);
    at (f, plants[4].name, PATH_MAX, "u/sub");
    plant_as_nobody (plants, np);
    settle_hardlinks (plants, np);
    assert_int_equal (stat (victim, &vst), 0);
    assert_victim (victim, "secret\n", 0644, 3);
    assert_true ((ufd = open (at (f, p, sizeof (p), "u"),
                              O_RDONLY | O_DIRECTORY | O_CLOEXEC))
                 >= 0);

    /* The record over the symlink, through two planted temporaries: the
     * writer's O_EXCL refuses both and takes the third name.
     */
    fake_random[0] = 0x1111111111111111ULL;
    fake_random[1] = 0x2222222222222222ULL;
    fake_random[2] = 0x3333333333333333ULL;
    fake_random_n = 3;
    fake_random_next = 0;
    assert_int_equal (tr_path_write_atomic (ufd, "rec.json", "new\n", 4, 0640,
                                            0, 0, &e),
                      0);
    fake_random_n = 0;
    assert_int_equal (fake_random_next, 3);
    assert_own_file (plants[0].name, "new\n", &vst);
    assert_int_equal (lstat (plants[2].name, &st), 0);
    assert_true (S_ISLNK (st.st_mode));
    assert_int_equal (lstat (plants[3].name, &st), 0);
    assert_int_equal (st.st_ino, vst.st_ino);
    assert_victim (victim, "secret\n", 0644, 3);

    /* The state over the hard link: replaced, never written through; the
     * victim loses the planted name only.
     */
    assert_int_equal (tr_path_replace (ufd, "state", "mine\n", 5, 0600, 0, 0,
                                       &e),
                      0);
    assert_own_file (plants[1].name, "mine\n", &vst);
    assert_victim (victim, "secret\n", 0644, 2);

    /* Every temporary name taken: the write is refused, nothing written
     * anywhere and the old file kept.
     */
    for (size_t i = 0; i < 8; i++) {
        fake_random[i] = 0x1111111111111111ULL;
        fake_random[i + 8] = 0;
    }
    fake_random_n = 8;
    fake_random_next = 0;
    assert_int_equal (tr_path_write_atomic (ufd, "rec.json", "newer\n", 6, 0640,
                                            0, 0, &e),
                      -1);
    fake_random_n = 0;
    assert_int_equal (errno, EEXIST);
    assert_non_null (strstr (e.text, "create temporary for "));
    assert_own_file (plants[0].name, "new\n", &vst);
    assert_victim (victim, "secret\n", 0644, 2);

    /* A directory created through the user's symlink: refused. */
    fd = tr_path_mkdirat_p (ufd, "sub/job", 0755, &e);
    assert_int_equal (fd, -1);
    assert_true (errno == ELOOP || errno == ENOTDIR);
    assert_int_equal (count_entries (secret, ""), 0);
    assert_int_equal (mode_of (secret), 0700);

    /* Reading the state back cannot be led to the victim either. */
    assert_int_equal (unlink (plants[1].name), 0);
    assert_int_equal (symlink (victim, plants[1].name), 0);
    assert_null (tr_path_read_file (ufd, "state", 100, NULL, NULL));
    assert_int_equal (errno, ELOOP);
    close (ufd);
    assert_victim (victim, "secret\n", 0644, 2);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_open_log, setup, teardown),
        cmocka_unit_test_setup_teardown (test_mkdir_p_mode_ignores_umask, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_mkdir_p_refuses_symlinks, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_write_atomic_content_owner_mode,
                                         setup, teardown),
        cmocka_unit_test_setup_teardown (test_write_atomic_bad_names, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_write_atomic_failure_keeps_old,
                                         setup, teardown),
        cmocka_unit_test_setup_teardown (test_write_atomic_replaces_symlink,
                                         setup, teardown),
        cmocka_unit_test_setup_teardown (test_replace, setup, teardown),
        cmocka_unit_test_setup_teardown (test_read_file, setup, teardown),
        cmocka_unit_test_setup_teardown (test_is_secure, setup, teardown),
        cmocka_unit_test_setup_teardown (test_user_plants, setup, teardown),
    };

    /* Owner and is_secure checks chown to 65534; that needs root. */
    if (geteuid () != 0) {
        printf ("1..0 # SKIP needs root (chown)\n");
        return 0;
    }
    return cmocka_run_group_tests (tests, NULL, NULL);
}
