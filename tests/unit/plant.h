/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Links an unprivileged user plants where root writes, for the tests of
 * the writers that must not follow them (test_path, test_store).
 * Include after <cmocka.h>; the caller runs as root.
 */
#ifndef TRACER_TEST_PLANT_H
#define TRACER_TEST_PLANT_H

#define NOBODY 65534

/* A symlink (or, with hard, a hard link) at name to target, both
 * absolute.
 */
struct plant {
    bool hard;
    const char *target;
    char name[PATH_MAX];
    int err; /* 0, or the errno of the attempt */
};

/* Make the plants as uid and gid 65534 in a child (setgroups, setgid,
 * then setuid: the order that leaves no privilege behind), each one's
 * errno coming back through a pipe.
 */
static void plant_as_nobody (struct plant *plants, size_t n)
{
    int fds[2], status;
    pid_t pid;

    assert_int_equal (pipe (fds), 0);
    assert_true ((pid = fork ()) >= 0);
    if (pid == 0) {
        close (fds[0]);
        if (setgroups (0, NULL) < 0 || setgid (NOBODY) < 0
            || setuid (NOBODY) < 0 || getuid () != NOBODY || setuid (0) == 0)
            _exit (3);
        for (size_t i = 0; i < n; i++) {
            int rc = plants[i].hard ? link (plants[i].target, plants[i].name)
                                    : symlink (plants[i].target,
                                               plants[i].name);
            int err = rc < 0 ? errno : 0;
            if (write (fds[1], &err, sizeof (err)) != (ssize_t)sizeof (err))
                _exit (4);
        }
        _exit (0);
    }
    close (fds[1]);
    for (size_t i = 0; i < n; i++)
        assert_int_equal (read (fds[0], &plants[i].err, sizeof (int)),
                          sizeof (int));
    close (fds[0]);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    assert_int_equal (WEXITSTATUS (status), 0);
}

/* Check the user's hard links.  With fs.protected_hardlinks on, the
 * kernel refuses a link to root's file (EPERM); root then makes it, as
 * a link made while the setting was off or to a file the user once
 * owned would be: root's writer must still meet it safely.
 */
static void settle_hardlinks (struct plant *plants, size_t n)
{
    FILE *fp = fopen ("/proc/sys/fs/protected_hardlinks", "r");
    int c = fp ? fgetc (fp) : EOF;

    if (fp)
        fclose (fp);
    for (size_t i = 0; i < n; i++) {
        if (!plants[i].hard) {
            assert_int_equal (plants[i].err, 0);
            continue;
        }
        if (c == '1')
            assert_int_equal (plants[i].err, EPERM);
        else if (c == '0')
            assert_int_equal (plants[i].err, 0);
        if (plants[i].err != 0) {
            assert_int_equal (link (plants[i].target, plants[i].name), 0);
            print_message ("# %s: the kernel refused the user's hard link "
                           "(fs.protected_hardlinks); made by root\n",
                           plants[i].name);
        }
    }
}

#endif /* !TRACER_TEST_PLANT_H */
