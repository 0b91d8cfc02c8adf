/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * cgroup discovery and counter files.  A step is found from a task's
 * /proc/PID/cgroup, never by building scheduler paths: Slurm v1 puts tasks
 * in <prefix>/uid_U/job_J/step_S/task_N, v2 in .../job_J/step_S/user/task_N,
 * Slurm 26 names v2 job directories by a SLUID, LSF and PBS use their own
 * trees.  Mount points come from mountinfo, because controllers may be
 * co-mounted ("cpu,cpuacct") or mounted elsewhere than /sys/fs/cgroup.
 * tracer makes cgroup2 directories of its own in two places: the mirror
 * on hybrid hosts (as root), and below a user's cgroup2 directory when
 * that is delegated to the user (tracer-run without root).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

#include "cgroup.h"
#include "libtracer/util/fsroot.h"

static int read_small (const char *path, char *buf, size_t size)
{
    char full[PATH_MAX];
    ssize_t n;
    int fd, saved;

    if (tr_fsroot_path (full, sizeof (full), path) < 0)
        return -1;
    if ((fd = open (full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return -1;
    n = tr_fsroot_read_fd (fd, buf, size);
    saved = errno;
    close (fd);
    errno = saved;
    return (int)n;
}

/* mountinfo fields: id parent maj:min root mountpoint opts... - fstype
 * source superopts.  Mount points escape spaces as \040; cgroup mount
 * points do not contain any in practice, and we refuse ones that do.
 */
static int mountpoint_read (const char *path, const char *controller,
                            char *buf, size_t size)
{
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;

    if (!(f = fopen (path, "re")))
        return -1;
    while (getline (&line, &cap, f) > 0) {
        char *fields[8] = { 0 };
        char *sep, *save = NULL, *tok, *post[3] = { 0 };
        int i = 0;

        if (!(sep = strstr (line, " - ")))
            continue;
        *sep = '\0';
        for (tok = strtok_r (line, " ", &save); tok && i < 8;
             tok = strtok_r (NULL, " ", &save))
            fields[i++] = tok;
        if (i < 5)
            continue;
        save = NULL;
        i = 0;
        for (tok = strtok_r (sep + 3, " \n", &save); tok && i < 3;
             tok = strtok_r (NULL, " \n", &save))
            post[i++] = tok;
        if (i < 3 || strchr (fields[4], '\\'))
            continue;
        if (!controller) {
            if (strcmp (post[0], "cgroup2") != 0)
                continue;
        }
        else {
            /* super options list the controllers: "rw,memory" */
            char *o, *osave = NULL;
            bool found = false;
            if (strcmp (post[0], "cgroup") != 0)
                continue;
            for (o = strtok_r (post[2], ",", &osave); o;
                 o = strtok_r (NULL, ",", &osave))
                if (!strcmp (o, controller))
                    found = true;
            if (!found)
                continue;
        }
        if (snprintf (buf, size, "%s", fields[4]) >= (int)size) {
            errno = ENAMETOOLONG;
            break;
        }
        rc = 0;
        break;
    }
    if (rc < 0 && errno != ENAMETOOLONG)
        errno = ENOENT;
    {
        int saved = errno;
        free (line);
        fclose (f);
        errno = saved;
    }
    return rc;
}

/* Mount points change rarely, and mountinfo is long on some nodes (its
 * reads were a third of tracerd's CPU at 400 steps): answers are kept
 * while a kept descriptor of the real /proc/self/mountinfo does not
 * report a change (poll(): POLLPRI | POLLERR once per change of the
 * mount table).  The descriptor is of the process that opened it: a
 * child (fork) opens its own.  A fixture tree's file (tr_fsroot) is
 * read every time.
 */
#define MNT_KEEP 4 /* cgroup2, memory, cpuacct, one more */

static pthread_mutex_t mnt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int fd; /* 0: not opened yet; -1: not kept */
    pid_t pid; /* the process that opened it */
    char path[PATH_MAX];
    size_t n, next;
    struct {
        char ctrl[32];
        int rc, err;
        char mnt[PATH_MAX];
    } e[MNT_KEEP];
} mnt_kept;

/* With mnt_lock held: whether answers for path may be kept, dropping
 * them when the mount table changed.
 */
static bool mnt_keepable (const char *path)
{
    struct pollfd pfd;
    struct statfs sf;

    if (mnt_kept.fd != 0 && mnt_kept.pid != getpid ()) {
        /* inherited: the parent's table, and maybe its namespace */
        if (mnt_kept.fd > 0)
            close (mnt_kept.fd);
        mnt_kept.fd = 0;
    }
    if (mnt_kept.fd > 0 && strcmp (mnt_kept.path, path) != 0) {
        close (mnt_kept.fd);
        mnt_kept.fd = 0;
    }
    if (mnt_kept.fd < 0 && strcmp (mnt_kept.path, path) != 0)
        mnt_kept.fd = 0;
    if (mnt_kept.fd == 0) {
        int fd = open (path, O_RDONLY | O_CLOEXEC);
        mnt_kept.n = mnt_kept.next = 0;
        mnt_kept.pid = getpid ();
        snprintf (mnt_kept.path, sizeof (mnt_kept.path), "%s", path);
        /* 0 marks "not opened": a descriptor 0 is not kept */
        if (fd > 0 && fstatfs (fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC)
            mnt_kept.fd = fd;
        else {
            if (fd >= 0)
                close (fd);
            mnt_kept.fd = -1;
        }
        return mnt_kept.fd > 0;
    }
    if (mnt_kept.fd < 0)
        return false;
    pfd.fd = mnt_kept.fd;
    pfd.events = POLLPRI;
    pfd.revents = 0;
    if (poll (&pfd, 1, 0) != 0)
        mnt_kept.n = mnt_kept.next = 0; /* changed (or cannot tell) */
    return true;
}

int tr_cgroup_mountpoint (const char *controller, char *buf, size_t size)
{
    char path[PATH_MAX], mnt[PATH_MAX];
    const char *key = controller ? controller : "";
    bool keep;
    int rc, err;

    if (tr_fsroot_path (path, sizeof (path), "/proc/self/mountinfo") < 0)
        return -1;
    pthread_mutex_lock (&mnt_lock);
    keep = mnt_keepable (path) && strlen (key) < sizeof (mnt_kept.e[0].ctrl);
    for (size_t i = 0; keep && i < mnt_kept.n; i++)
        if (!strcmp (mnt_kept.e[i].ctrl, key)) {
            rc = mnt_kept.e[i].rc;
            err = mnt_kept.e[i].err;
            if (rc == 0
                && snprintf (buf, size, "%s", mnt_kept.e[i].mnt) >= (int)size) {
                rc = -1;
                err = ENAMETOOLONG;
            }
            pthread_mutex_unlock (&mnt_lock);
            errno = err;
            return rc;
        }
    rc = mountpoint_read (path, controller, mnt, sizeof (mnt));
    err = errno;
    if (keep && (rc == 0 || err == ENOENT)) {
        size_t i = mnt_kept.n < MNT_KEEP ? mnt_kept.n++ : mnt_kept.next;
        mnt_kept.next = (i + 1) % MNT_KEEP;
        snprintf (mnt_kept.e[i].ctrl, sizeof (mnt_kept.e[i].ctrl), "%s", key);
        mnt_kept.e[i].rc = rc;
        mnt_kept.e[i].err = err;
        snprintf (mnt_kept.e[i].mnt, sizeof (mnt_kept.e[i].mnt), "%s",
                  rc == 0 ? mnt : "");
    }
    pthread_mutex_unlock (&mnt_lock);
    if (rc == 0 && snprintf (buf, size, "%s", mnt) >= (int)size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    errno = err;
    return rc;
}

static bool is_task_component (const char *s)
{
    const char *p;

    if (!strcmp (s, "task_special"))
        return true;
    if (strncmp (s, "task_", 5) != 0 || !s[5])
        return false;
    for (p = s + 5; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* Remove a trailing task component in place: ".../task_N".  On v2 the
 * step's tasks are in ".../step_S/user/task_N" and its slurmstepd beside
 * them in ".../step_S/slurm": the step is ".../step_S/user", so that its
 * counters are its tasks' alone, as Slurm's own accounting and v1's step
 * directory count them (the step's memory limit is read from its parent,
 * where Slurm sets it).
 */
static void strip_task_dir (char *path, bool v2)
{
    char *slash = strrchr (path, '/');

    (void)v2;
    if (!slash || !is_task_component (slash + 1))
        return;
    *slash = '\0';
}

static int join (char *buf, size_t size, const char *mnt, const char *rel)
{
    int n = snprintf (buf, size, "%s%s", mnt, strcmp (rel, "/") ? rel : "");
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static bool controllers_include (const char *dir, const char *ctrl)
{
    char path[PATH_MAX], buf[512], *tok, *save = NULL;

    if (snprintf (path, sizeof (path), "%s/cgroup.controllers", dir)
            >= (int)sizeof (path)
        || read_small (path, buf, sizeof (buf)) < 0)
        return false;
    for (tok = strtok_r (buf, " \n", &save); tok;
         tok = strtok_r (NULL, " \n", &save))
        if (!strcmp (tok, ctrl))
            return true;
    return false;
}

/* Whether a cgroup2 directory (as /proc/PID/cgroup names it) is one of
 * tracer's own mirror directories.
 */
static bool is_mirror (const char *rel)
{
    return !strncmp (rel, "/" TR_CGROUP_MIRROR_DIR "/",
                     strlen (TR_CGROUP_MIRROR_DIR) + 2);
}

static bool rel_ok (const char *rel)
{
    const char *p = rel;

    if (rel[0] != '/' || strlen (rel) >= PATH_MAX / 2 || strchr (rel, '\n'))
        return false;
    while (*p == '/') {
        const char *c = p + 1, *e = strchrnul (c, '/');
        size_t len = (size_t)(e - c);
        if ((len == 0 && *e) || (len == 1 && c[0] == '.')
            || (len == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        p = e;
    }
    return true;
}

/* The directory mnt/rel when it exists (through the fsroot). */
static bool join_existing (char *buf,
                           size_t size,
                           const char *ctrl,
                           const char *rel)
{
    char mnt[PATH_MAX], full[PATH_MAX];
    struct stat sb;

    if (tr_cgroup_mountpoint (ctrl, mnt, sizeof (mnt)) < 0
        || join (buf, size, mnt, rel) < 0
        || tr_fsroot_path (full, sizeof (full), buf) < 0
        || stat (full, &sb) < 0 || !S_ISDIR (sb.st_mode)) {
        buf[0] = '\0';
        return false;
    }
    return true;
}

int tr_cgroup_resolve_path (const char *rel,
                            struct tr_cgroup_paths *out,
                            tr_error_t *error)
{
    struct tr_cgroup_paths r;
    bool any = false;

    memset (&r, 0, sizeof (r));
    if (!rel_ok (rel)) {
        errno = EINVAL;
        return tr_errprintf (error, "cgroup '%s': not an absolute path "
                             "within the hierarchy", rel);
    }
    any |= join_existing (r.memory, sizeof (r.memory), "memory", rel);
    any |= join_existing (r.cpuacct, sizeof (r.cpuacct), "cpuacct", rel);
    if (join_existing (r.unified, sizeof (r.unified), NULL, rel)) {
        any = true;
        r.unified_has_memory = controllers_include (r.unified, "memory");
        r.unified_is_mirror = is_mirror (rel);
    }
    if (!any) {
        errno = ENOENT;
        return tr_errprintf (error, "cgroup '%s' exists in no mounted "
                             "hierarchy", rel);
    }
    *out = r;
    return 0;
}

int tr_cgroup_parse (const char *text,
                     bool strip_task,
                     struct tr_cgroup_paths *out,
                     tr_error_t *error)
{
    struct tr_cgroup_paths r;
    const char *p = text;
    bool saw_v1 = false;

    memset (&r, 0, sizeof (r));
    while (p && *p) {
        const char *nl = strchr (p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen (p);
        char line[PATH_MAX + 64];
        char *c1, *c2, *ctrls, *rel;

        if (len >= sizeof (line)) {
            errno = ENAMETOOLONG;
            return tr_errprintf (error, "cgroup line too long");
        }
        memcpy (line, p, len);
        line[len] = '\0';
        p = nl ? nl + 1 : NULL;
        /* "ID:CONTROLLERS:PATH"; PATH may contain ':' */
        if (!(c1 = strchr (line, ':')) || !(c2 = strchr (c1 + 1, ':')))
            continue;
        *c2 = '\0';
        ctrls = c1 + 1;
        rel = c2 + 1;
        if (rel[0] != '/')
            continue;
        if (!*ctrls) {
            char mnt[PATH_MAX];
            if (tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0) {
                if (strip_task)
                    strip_task_dir (rel, true);
                if (join (r.unified, sizeof (r.unified), mnt, rel) < 0)
                    return tr_errprintf (error, "cgroup path too long");
                r.unified_has_memory = controllers_include (r.unified,
                                                            "memory");
                r.unified_is_mirror = is_mirror (rel);
            }
            continue;
        }
        saw_v1 = true;
        {
            char *save = NULL, *tok;
            for (tok = strtok_r (ctrls, ",", &save); tok;
                 tok = strtok_r (NULL, ",", &save)) {
                char *dst = NULL;
                char mnt[PATH_MAX], relcopy[PATH_MAX];
                size_t dsize = 0;
                if (!strcmp (tok, "memory")) {
                    dst = r.memory;
                    dsize = sizeof (r.memory);
                }
                else if (!strcmp (tok, "cpuacct")) {
                    dst = r.cpuacct;
                    dsize = sizeof (r.cpuacct);
                }
                if (!dst || tr_cgroup_mountpoint (tok, mnt, sizeof (mnt)) < 0)
                    continue;
                snprintf (relcopy, sizeof (relcopy), "%s", rel);
                if (strip_task)
                    strip_task_dir (relcopy, false);
                if (join (dst, dsize, mnt, relcopy) < 0)
                    return tr_errprintf (error, "cgroup path too long");
            }
        }
    }
    /* tracer makes mirror directories on hybrid hosts only */
    if (!saw_v1)
        r.unified_is_mirror = false;
    *out = r;
    return 0;
}

int tr_cgroup_resolve_pid (pid_t pid,
                           bool strip_task,
                           struct tr_cgroup_paths *out,
                           tr_error_t *error)
{
    char path[64], buf[8192];

    snprintf (path, sizeof (path), "/proc/%d/cgroup", (int)pid);
    if (read_small (path, buf, sizeof (buf)) < 0)
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    return tr_cgroup_parse (buf, strip_task, out, error);
}

/* Cut dir after its first component that names the job: equal to name,
 * or name followed by '.' (LSF's job.<id>.<n>.<epoch>).  false, and dir
 * emptied, if there is none.
 */
static bool cut_at_job (char *dir, const char *name)
{
    size_t n = strlen (name);
    char *p = dir;

    while (n && (p = strchr (p, '/'))) {
        char *c = p + 1;
        size_t len = strcspn (c, "/");
        if ((len == n || (len > n && c[n] == '.')) && !strncmp (c, name, n)) {
            c[len] = '\0';
            return true;
        }
        p = c;
    }
    dir[0] = '\0';
    return false;
}

int tr_cgroup_job_paths (pid_t pid,
                         const char *name,
                         struct tr_cgroup_paths *out,
                         tr_error_t *error)
{
    struct tr_cgroup_paths p;
    bool found = false;

    if (!name || !*name || strchr (name, '/')) {
        errno = EINVAL;
        return tr_errprintf (error, "bad job cgroup name");
    }
    if (tr_cgroup_resolve_pid (pid, false, &p, error) < 0)
        return -1;
    found |= cut_at_job (p.memory, name);
    found |= cut_at_job (p.cpuacct, name);
    found |= cut_at_job (p.unified, name);
    p.unified_is_mirror = false;
    p.unified_delegated = false;
    if (found)
        *out = p;
    return found ? 1 : 0;
}

/* Read dir/file (fsroot applied) into buf. */
static int read_cgfile (const char *dir,
                        const char *file,
                        char *buf,
                        size_t size)
{
    char path[PATH_MAX];

    if (snprintf (path, sizeof (path), "%s/%s", dir, file)
        >= (int)sizeof (path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return read_small (path, buf, size);
}

/* The end of a cgroup file's single value: nothing, or one newline. */
static bool value_ends (const char *p)
{
    return *p == '\0' || (*p == '\n' && p[1] == '\0');
}

/* A run of digits at p, as strtoull reads it, with its end in *endp.
 * strtoull alone would take leading blanks and a sign ("-1" reads as
 * 2^64 - 1), which no counter the kernel writes has.
 */
static int parse_digits (const char *p, char **endp, unsigned long long *v)
{
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    *v = strtoull (p, endp, 10);
    return errno ? -1 : 0;
}

int tr_cgroup_parse_u64 (const char *text, uint64_t *value)
{
    char *end;
    unsigned long long v;

    if (!strncmp (text, "max", 3) && value_ends (text + 3)) {
        *value = UINT64_MAX;
        return 0;
    }
    if (parse_digits (text, &end, &v) < 0 || !value_ends (end)) {
        errno = EINVAL;
        return -1;
    }
    *value = (uint64_t)v;
    return 0;
}

int tr_cgroup_parse_keys (const char *text,
                          const char *const *keys,
                          int64_t *values,
                          size_t n)
{
    const char *p;
    int found = 0;

    for (p = text; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL) {
        for (size_t i = 0; i < n; i++) {
            size_t klen = strlen (keys[i]);
            if (!strncmp (p, keys[i], klen) && p[klen] == ' ') {
                char *end;
                unsigned long long v;
                /* the number alone up to the line's end: a sign, a
                 * blank or trailing junk means the line is not one
                 */
                if (parse_digits (p + klen + 1, &end, &v) == 0
                    && (*end == '\n' || *end == '\0') && v <= INT64_MAX) {
                    values[i] = (int64_t)v;
                    found++;
                }
                break;
            }
        }
    }
    return found;
}

int tr_cgroup_parse_key (const char *text, const char *key, uint64_t *value)
{
    int64_t v = -1;

    if (tr_cgroup_parse_keys (text, &key, &v, 1) != 1) {
        errno = ENOENT;
        return -1;
    }
    *value = (uint64_t)v;
    return 0;
}

int tr_cgroup_read_u64 (const char *dir, const char *file, uint64_t *value)
{
    char buf[64];

    if (read_cgfile (dir, file, buf, sizeof (buf)) < 0)
        return -1;
    return tr_cgroup_parse_u64 (buf, value);
}

int tr_cgroup_read_key (const char *dir,
                        const char *file,
                        const char *key,
                        uint64_t *value)
{
    char buf[8192];

    if (read_cgfile (dir, file, buf, sizeof (buf)) < 0)
        return -1;
    return tr_cgroup_parse_key (buf, key, value);
}

int tr_cgroup_read_keys (const char *dir,
                         const char *file,
                         const char *const *keys,
                         int64_t *values,
                         size_t n)
{
    char buf[8192];

    if (read_cgfile (dir, file, buf, sizeof (buf)) < 0)
        return -1;
    return tr_cgroup_parse_keys (buf, keys, values, n);
}

/* The cgroup2 mount on a hybrid host: a cgroup2 tree that is not the
 * only hierarchy (a v1 memory or cpuacct controller is mounted too).
 */
static int hybrid_unified (char *mnt, size_t size)
{
    char v1[PATH_MAX];

    if (tr_cgroup_mountpoint (NULL, mnt, size) < 0)
        return -1;
    if (tr_cgroup_mountpoint ("memory", v1, sizeof (v1)) < 0
        && tr_cgroup_mountpoint ("cpuacct", v1, sizeof (v1)) < 0) {
        errno = ENOTSUP;
        return -1;
    }
    return 0;
}

enum tr_cgroup_layout tr_cgroup_host_layout (void)
{
    char mnt[PATH_MAX];
    bool v2 = tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0;
    bool v1 = tr_cgroup_mountpoint ("memory", mnt, sizeof (mnt)) == 0
              || tr_cgroup_mountpoint ("cpuacct", mnt, sizeof (mnt)) == 0;

    return v1 && v2 ? TR_CGROUP_HYBRID
           : v2     ? TR_CGROUP_V2
           : v1     ? TR_CGROUP_V1
                    : TR_CGROUP_NONE;
}

const char *tr_cgroup_layout_name (enum tr_cgroup_layout layout)
{
    switch (layout) {
    case TR_CGROUP_V1:
        return "cgroup v1";
    case TR_CGROUP_V2:
        return "cgroup v2";
    case TR_CGROUP_HYBRID:
        return "hybrid";
    case TR_CGROUP_NONE:
        break;
    }
    return "none";
}

/* A single path component: no '/', not "." or "..". */
static bool is_component (const char *name)
{
    return name && *name && !strchr (name, '/') && strcmp (name, ".") != 0
           && strcmp (name, "..") != 0;
}

int tr_cgroup_mirror_attach (const char *name,
                             pid_t pid,
                             struct tr_cgroup_paths *paths,
                             tr_error_t *error)
{
    char mnt[PATH_MAX], dir[PATH_MAX], procs[PATH_MAX + 16], buf[32];
    int fd, n;

    if (!is_component (name)) {
        errno = EINVAL;
        return tr_errprintf (error, "invalid mirror name");
    }
    if (hybrid_unified (mnt, sizeof (mnt)) < 0)
        return tr_errprintf (error, "no hybrid cgroup2 tree: %s",
                             strerror (errno));
    if (snprintf (dir, sizeof (dir), "%s/%s", mnt, TR_CGROUP_MIRROR_DIR)
        >= (int)sizeof (dir)) {
        errno = ENAMETOOLONG;
        return tr_errprintf (error, "cgroup path too long");
    }
    if (mkdir (dir, 0755) < 0 && errno != EEXIST)
        return tr_errprintf (error, "mkdir %s: %s", dir, strerror (errno));
    if (snprintf (dir, sizeof (dir), "%s/%s/%s", mnt, TR_CGROUP_MIRROR_DIR,
                  name) >= (int)sizeof (dir)) {
        errno = ENAMETOOLONG;
        return tr_errprintf (error, "cgroup path too long");
    }
    /* A step's later tasks join the directory its first task made. */
    if (mkdir (dir, 0755) < 0 && errno != EEXIST)
        return tr_errprintf (error, "mkdir %s: %s", dir, strerror (errno));
    snprintf (procs, sizeof (procs), "%s/cgroup.procs", dir);
    if ((fd = open (procs, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return tr_errprintf (error, "%s: %s", procs, strerror (errno));
    n = snprintf (buf, sizeof (buf), "%d\n", (int)pid);
    if (write (fd, buf, (size_t)n) != n) {
        int saved = errno;
        close (fd);
        errno = saved;
        return tr_errprintf (error, "moving pid %d into %s: %s", (int)pid,
                             dir, strerror (errno));
    }
    close (fd);
    snprintf (paths->unified, sizeof (paths->unified), "%s", dir);
    paths->unified_has_memory = false;
    paths->unified_is_mirror = true;
    return 0;
}

int tr_cgroup_mirror_sweep (const char *const *keep, size_t n)
{
    char mnt[PATH_MAX], top[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int removed = 0;

    if (hybrid_unified (mnt, sizeof (mnt)) < 0
        || snprintf (top, sizeof (top), "%s/%s", mnt, TR_CGROUP_MIRROR_DIR)
               >= (int)sizeof (top)
        || !(d = opendir (top)))
        return 0;
    while ((de = readdir (d))) {
        char dir[PATH_MAX];
        bool kept = false;

        if (de->d_name[0] == '.' || de->d_type != DT_DIR
            || snprintf (dir, sizeof (dir), "%s/%s", top, de->d_name)
                   >= (int)sizeof (dir))
            continue;
        for (size_t i = 0; i < n && !kept; i++)
            kept = keep[i] && !strcmp (keep[i], de->d_name);
        /* rmdir fails with EBUSY while any process is inside */
        if (!kept && rmdir (dir) == 0)
            removed++;
    }
    closedir (d);
    return removed;
}

/* Whether path (fsroot applied) belongs to uid and its owner may write
 * it.  Returns 0 with *ok set, or -1 with errno.
 */
static int owned_writable (const char *path, uid_t uid, bool *ok)
{
    char full[PATH_MAX];
    struct stat st;

    if (tr_fsroot_path (full, sizeof (full), path) < 0 || stat (full, &st) < 0)
        return -1;
    *ok = st.st_uid == uid && (st.st_mode & S_IWUSR);
    return 0;
}

int tr_cgroup_delegation (pid_t pid,
                          uid_t uid,
                          char *dir,
                          size_t size,
                          tr_error_t *error)
{
    struct tr_cgroup_paths own;
    char procs[PATH_MAX + 16];
    bool ok;

    if (tr_cgroup_resolve_pid (pid, false, &own, error) < 0)
        return -1;
    if (!own.unified[0]) {
        errno = ENOENT;
        return tr_errprintf (error, "pid %d is in no cgroup2 directory",
                             (int)pid);
    }
    if (snprintf (dir, size, "%s", own.unified) >= (int)size) {
        errno = ENAMETOOLONG;
        return tr_errprintf (error, "cgroup path too long");
    }
    /* The kernel lets a user make children where it may write the
     * directory, and move a process where it may write both the
     * target's cgroup.procs and that of the common ancestor: here the
     * caller's own directory.  Ownership is how delegation is granted
     * (cgroup-v2.rst, "Delegation"); a plain access() would answer yes
     * to root for any directory and say nothing about intent.
     */
    if (owned_writable (dir, uid, &ok) < 0)
        return tr_errprintf (error, "%s: %s", dir, strerror (errno));
    if (ok) {
        snprintf (procs, sizeof (procs), "%s/cgroup.procs", dir);
        if (owned_writable (procs, uid, &ok) < 0)
            return tr_errprintf (error, "%s: %s", procs, strerror (errno));
    }
    if (!ok) {
        tr_errprintf (error, "cgroup2 directory %s is not delegated to "
                      "uid %u", dir, (unsigned)uid);
        return 0;
    }
    return 1;
}

int tr_cgroup_delegate_create (const char *name,
                               uid_t uid,
                               struct tr_cgroup_paths *paths,
                               tr_error_t *error)
{
    char own[PATH_MAX], dir[PATH_MAX];
    int rc;

    if (!is_component (name)) {
        errno = EINVAL;
        return tr_errprintf (error, "invalid cgroup name");
    }
    if ((rc = tr_cgroup_delegation (getpid (), uid, own, sizeof (own), error))
        < 0)
        return -1;
    if (rc == 0) {
        errno = EACCES;
        return -1;
    }
    if (snprintf (dir, sizeof (dir), "%s/%s", own, name) >= (int)sizeof (dir)) {
        errno = ENAMETOOLONG;
        return tr_errprintf (error, "cgroup path too long");
    }
    /* A directory of this name was left by an earlier run with the same
     * pid: its cpu.stat and PSI totals are not ours, so start afresh (an
     * empty cgroup can be removed; an inhabited one cannot, and is left).
     */
    if (mkdir (dir, 0755) < 0
        && (errno != EEXIST || rmdir (dir) < 0 || mkdir (dir, 0755) < 0))
        return tr_errprintf (error, "mkdir %s: %s", dir, strerror (errno));
    memset (paths, 0, sizeof (*paths));
    snprintf (paths->unified, sizeof (paths->unified), "%s", dir);
    paths->unified_has_memory = controllers_include (dir, "memory");
    paths->unified_delegated = true;
    return 0;
}
