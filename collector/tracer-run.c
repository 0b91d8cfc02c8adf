/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracer-run: trace one command without a scheduler or daemon.  As root
 * it gives the command its own cgroups (v1 memory+cpuacct, or a cgroup2
 * directory) before exec, so totals and the peak are exact; without root
 * it does the same below the caller's cgroup2 directory when that is
 * delegated to the user, and otherwise follows the process tree.  It
 * forwards signals to the command and exits with its status, like
 * /usr/bin/time.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/node/cgroup.h"
#include "libtracer/node/execs.h"
#include "libtracer/node/gpu.h"
#include "libtracer/hook/hookconf.h"
#include "libtracer/node/taskstats.h"
#include "libtracer/node/bpffiles.h"
#include "libtracer/conf/conf.h"
#include "libtracer/util/nss.h"
#include "libtracer/util/path.h"
#include "libtracer/record/record.h"
#include "libtracer/view/report.h"
#include "libtracer/record/runid.h"
#include "libtracer/node/sampler.h"
#include "libtracer/record/sign.h"
#include "libtracer/record/store.h"
#include "libtracer/record/when.h"
#include "libtracer/node/workload.h"

enum { EXIT_FAIL = 125, EXIT_NOEXEC = 126, EXIT_NOTFOUND = 127 };

static struct {
    tr_conf_t *conf;
    const char *output;
    char default_output[128];
    bool to_store;
    bool no_cgroup;
    bool no_sign;
    bool quiet;
    bool view;
    const char *demo;
    const char *pipeline;       /* --pipeline */
    const char *run_id;         /* --run-id */
    double interval;
    json_t *tags;
    char cg_dirs[3][PATH_MAX];
    int n_cg;
    json_t *id;
    tr_step_t *step;
    tr_taskstats_t *taskstats;
    tr_execs_t *execs; /* what processes were at their exec (root) */
    tr_gpu_t *gpu;
    tr_files_t *files;          /* eBPF file evidence, NULL: none */
    char files_why[300];        /* ... and why none */
    int sfd; /* signalfd of the forwarded signals, -1 when closed */
} o = { .sfd = -1 };

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: tracer-run [OPTIONS] -- COMMAND [ARGS...]\n"
             "       tracer-run [OPTIONS] --demo[=SPEC]\n"
             "Trace one command and write its tracer record.\n\n"
             "  -o, --output=FILE     write the record to FILE\n"
             "                        (default "
             "tracer-COMMAND.DATE-TIME.PID.json)\n"
             "      --store           write the record to the configured "
             "store\n"
             "  -i, --interval=SEC    sampling interval (default from the "
             "config, 1)\n"
             "  -t, --tag=KEY:VALUE   tag the record (repeatable)\n"
             "      --pipeline=NAME   a pipeline run: tag the record and "
             "every job\n"
             "                        submitted beneath it with a new run "
             "id and NAME\n"
             "      --run-id=ID       the run's id (default "
             "NAME-YYYYMMDD-HHMMSS-XXXX)\n"
             "      --no-cgroup       follow the process tree, make no cgroup\n"
             "      --no-sign         do not sign the record\n"
             "      --view            print the tracer-report view at the "
             "end\n"
             "      --demo[=SPEC]     trace the built-in workload\n"
             "                        (%s)\n"
             "  -c, --config=FILE     configuration file\n"
             "                        (default %s)\n"
             "  -q, --quiet           no messages from tracer-run itself\n"
             "  -h, --help            show this help and exit\n"
             "  -V, --version         show the version and exit\n\n"
             "Exit status: the command's (128+N if killed by signal N); "
             "125 tracer-run failed,\n126 COMMAND could not be run, 127 "
             "COMMAND not found.\n",
             TR_WORKLOAD_DEMO, tr_conf_default_path ());
}

static void msg (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static void msg (const char *fmt, ...)
{
    va_list ap;

    if (o.quiet)
        return;
    fprintf (stderr, "tracer-run: ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "\n");
}

/* Not root: a cgroup2 directory of the command's own below the caller's,
 * <own>/tracer-run.<pid>, where that is delegated to the user (systemd's
 * Delegate=yes, or a site's setup).
 */
static int make_delegated (struct tr_cgroup_paths *p)
{
    tr_error_t error;
    char name[64];

    snprintf (name, sizeof (name), "tracer-run.%d", (int)getpid ());
    if (tr_cgroup_delegate_create (name, geteuid (), p, &error) < 0) {
        msg ("%s; following the process tree", tr_error_str (&error));
        return -1;
    }
    snprintf (o.cg_dirs[o.n_cg++], PATH_MAX, "%s", p->unified);
    return 0;
}

/* Make a cgroup for the command under <mount>/tracer/run.<pid>. */
static int make_cgroups (struct tr_cgroup_paths *p)
{
    static const char *ctrls[] = { "memory", "cpuacct" };
    char mnt[PATH_MAX];
    int made = 0;

    memset (p, 0, sizeof (*p));
    if (o.no_cgroup)
        return -1;
    if (geteuid () != 0)
        return make_delegated (p);
    for (int i = 0; i < 2; i++) {
        char *dst = i == 0 ? p->memory : p->cpuacct;
        int fd;
        if (tr_cgroup_mountpoint (ctrls[i], mnt, sizeof (mnt)) < 0)
            continue;
        if (snprintf (dst, PATH_MAX, "%.3900s/tracer/run.%d", mnt,
                      (int)getpid ()) >= PATH_MAX)
            continue;
        if ((fd = tr_path_mkdir_p (dst, 0755, NULL)) < 0) {
            dst[0] = '\0';
            continue;
        }
        close (fd);
        snprintf (o.cg_dirs[o.n_cg++], PATH_MAX, "%s", dst);
        made++;
    }
    if (made && tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0) {
        /* hybrid host: a cgroup2 directory of its own gives pressure
         * (PSI) for the command alone
         */
        int fd;
        int n = snprintf (p->unified, sizeof (p->unified),
                          "%.3900s/" TR_CGROUP_MIRROR_DIR "/run.%d", mnt,
                          (int)getpid ());
        if (n > 0 && (size_t)n < sizeof (p->unified)
            && (fd = tr_path_mkdir_p (p->unified, 0755, NULL)) >= 0) {
            close (fd);
            snprintf (o.cg_dirs[o.n_cg++], PATH_MAX, "%s", p->unified);
            p->unified_is_mirror = true;
        }
        else
            p->unified[0] = '\0';
    }
    else if (!made && tr_cgroup_mountpoint (NULL, mnt, sizeof (mnt)) == 0) {
        /* pure cgroup2: only useful where the memory controller is on */
        int fd;
        int n = snprintf (p->unified, sizeof (p->unified), "%.3900s/tracer/run.%d",
                          mnt, (int)getpid ());
        if (n > 0 && (size_t)n < sizeof (p->unified)
            && (fd = tr_path_mkdir_p (p->unified, 0755, NULL)) >= 0) {
            close (fd);
            snprintf (o.cg_dirs[o.n_cg++], PATH_MAX, "%s", p->unified);
            made++;
        }
        else
            p->unified[0] = '\0';
    }
    return made ? 0 : -1;
}

static int join_cgroups (pid_t pid)
{
    for (int i = 0; i < o.n_cg; i++) {
        char path[PATH_MAX + 16], buf[32];
        int fd, n;
        snprintf (path, sizeof (path), "%s/cgroup.procs", o.cg_dirs[i]);
        if ((fd = open (path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
            return -1;
        n = snprintf (buf, sizeof (buf), "%d\n", (int)pid);
        if (write (fd, buf, (size_t)n) != n) {
            close (fd);
            return -1;
        }
        close (fd);
    }
    return 0;
}

static void on_exit_event (const struct tr_exit *ev, void *arg)
{
    (void)arg;
    (void)tr_step_exit_event (o.step, ev);
}

/* Take the process exits the kernel reported since the last call. */
static void drain_exits (void)
{
    static uint64_t lost_seen;
    uint64_t lost;

    if (!o.taskstats)
        return;
    /* a process's exec comes before its exit */
    if (o.execs)
        (void)tr_execs_read (o.execs);
    (void)tr_taskstats_read (o.taskstats, on_exit_event, NULL);
    if ((lost = tr_taskstats_lost (o.taskstats)) > lost_seen) {
        tr_step_exits_lost (o.step, lost - lost_seen);
        lost_seen = lost;
    }
}

static void remove_cgroups (void)
{
    for (int i = o.n_cg - 1; i >= 0; i--)
        if (rmdir (o.cg_dirs[i]) < 0 && errno != ENOENT)
            msg ("cannot remove %s: %s (processes left behind?)",
                 o.cg_dirs[i], strerror (errno));
}

static json_t *make_identity (char *job_id, size_t size)
{
    char host[256];
    struct timespec ts;
    char *user = NULL, *group = NULL;
    json_t *id;

    if (gethostname (host, sizeof (host)) < 0 || !tr_record_id_is_safe (host))
        snprintf (host, sizeof (host), "localhost");
    host[sizeof (host) - 1] = '\0';
    clock_gettime (CLOCK_REALTIME, &ts);
    snprintf (job_id, size, "run.%lld.%d",
              (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
              (int)getpid ());
    id = json_pack ("{s:s s:s s:s s:s s:s s:I s:I}", "scheduler", "none",
                    "cluster", o.conf->cluster_name, "job_id", job_id,
                    "step_id", "0", "node", host, "uid", (json_int_t)getuid (),
                    "gid", (json_int_t)getgid ());
    if (id && tr_nss_user_by_uid (getuid (), &user, NULL) == 0)
        json_object_set_new (id, "user", json_string (user));
    /* the real gid's name, as tracerd names a job's group; none when it
     * has no name (the views then show the gid)
     */
    if (id && tr_nss_group_by_gid (getgid (), &group) == 0)
        json_object_set_new (id, "group", json_string (group));
    free (user);
    free (group);
    if (id && o.demo)
        json_object_set_new (id, "job_name", json_string ("tracer-run demo"));
    return id;
}

/* The default output name, in the current directory:
 * tracer-<command>.<YYYYmmdd-HHMMSS>.<pid>.json, the command's base name
 * (or "demo") kept to letters, digits and ._-+ (anything else is '_'),
 * the local time it started, and tracer-run's pid, so that runs of the
 * same command list together, in order, and never share a name.
 */
static void make_default_output (const char *command)
{
    const char *base = strrchr (command, '/');
    char cmd[65], when[32] = "0";
    time_t now = time (NULL);
    struct tm tm;
    size_t n = 0;

    for (base = base ? base + 1 : command; *base && n < sizeof (cmd) - 1;
         base++)
        cmd[n++] = isalnum ((unsigned char)*base) || strchr ("._-+", *base)
                       ? *base
                       : '_';
    cmd[n] = '\0';
    if (localtime_r (&now, &tm))
        strftime (when, sizeof (when), "%Y%m%d-%H%M%S", &tm);
    snprintf (o.default_output, sizeof (o.default_output),
              "tracer-%s.%s.%d.json", n ? cmd : "command", when,
              (int)getpid ());
}

/* The directory (into dir) and base name of the record's path. */
static const char *output_dir (const char *path, char *dir, size_t size)
{
    const char *base = strrchr (path, '/');

    if (!base) {
        snprintf (dir, size, ".");
        return path;
    }
    snprintf (dir, size, "%.*s", (int)(base - path), path);
    if (!dir[0])
        snprintf (dir, size, "/");
    return base + 1;
}

/* Before the command runs: can its record be written where it is to go?
 * A command that ran for hours must not lose its record to a typo.
 */
static int check_output (void)
{
    const char *path = o.output ? o.output : o.default_output;
    char dir[PATH_MAX];
    const char *base;
    struct stat sb;
    int dfd, rc = 0;

    if (o.to_store) {
        struct tr_store_opts so = tr_store_opts_from_conf (o.conf);
        tr_error_t error;
        tr_store_t *store = tr_store_open (o.conf->store_path, &so, &error);
        if (!store) {
            msg ("%s; the command was not run", tr_error_str (&error));
            return -1;
        }
        tr_store_destroy (store);
        return 0;
    }
    base = output_dir (path, dir, sizeof (dir));
    if (!*base) {
        msg ("%s: not a file name; the command was not run", path);
        return -1;
    }
    if ((dfd = open (dir, O_DIRECTORY | O_CLOEXEC)) < 0) {
        msg ("%s: %s; the command was not run", dir, strerror (errno));
        return -1;
    }
    if (faccessat (dfd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
        msg ("%s: %s; the command was not run", dir, strerror (errno));
        rc = -1;
    }
    else if (fstatat (dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0
             && !S_ISREG (sb.st_mode)) {
        msg ("%s: not a regular file; the command was not run", path);
        rc = -1;
    }
    close (dfd);
    return rc;
}

static int write_record (json_t *rec, const char *job_id)
{
    tr_error_t error;
    const char *path = o.output ? o.output : o.default_output;
    char *text;
    int rc;

    if (o.to_store) {
        struct tr_store_opts so = tr_store_opts_from_conf (o.conf);
        tr_store_t *store = tr_store_open (o.conf->store_path, &so, &error);
        if (!store || tr_store_put (store, rec, &error) < 0) {
            msg ("store %s: %s", o.conf->store_path, tr_error_str (&error));
            tr_store_destroy (store);
            return -1;
        }
        tr_store_destroy (store);
        msg ("record stored in %s (tracer-report -j %s)", o.conf->store_path,
             job_id);
        return 0;
    }
    if (!(text = tr_record_dumps (rec))) {
        msg ("serializing the record: %s", strerror (errno));
        return -1;
    }
    {
        /* atomic write in the target directory */
        char dir[PATH_MAX];
        const char *base = output_dir (path, dir, sizeof (dir));
        int dfd;
        if ((dfd = open (dir, O_DIRECTORY | O_CLOEXEC)) < 0) {
            msg ("%s: %s", dir, strerror (errno));
            free (text);
            return -1;
        }
        rc = tr_path_write_atomic (dfd, base, text, strlen (text), 0600,
                                   (uid_t)-1, (gid_t)-1, &error);
        close (dfd);
    }
    free (text);
    if (rc < 0) {
        msg ("%s: %s", path, tr_error_str (&error));
        return -1;
    }
    {
        const char *scheme = json_string_value (
            json_object_get (json_object_get (rec, "signature"), "scheme"));
        bool unsigned_rec = !scheme || strcmp (scheme, "none") == 0;
        msg ("record written to %s (see it with: tracer-report%s %s)", path,
             unsigned_rec ? " --allow-unsigned" : "", path);
    }
    return 0;
}

/* Free what main() holds; returns rc so exits are one line. */
static int finish (int rc)
{
    json_decref (o.id);
    json_decref (o.tags);
    tr_step_destroy (o.step);
    tr_execs_close (o.execs);
    tr_taskstats_close (o.taskstats);
    tr_gpu_close (o.gpu);
    tr_files_close (o.files);
    tr_conf_destroy (o.conf);
    if (o.sfd >= 0)
        close (o.sfd);
    return rc;
}

/* The eBPF file evidence (sampling.ebpf) of the command's cgroups. */
static void files_start (bool cgroup_mode)
{
    const char *dirs[] = { tr_step_cgroup2_dir (o.step),
                           tr_step_cgroup1_dir (o.step) };
    tr_error_t error = { 0 };

    if (o.conf->ebpf == TR_EBPF_OFF) {
        snprintf (o.files_why, sizeof (o.files_why),
                  "turned off (sampling.ebpf: false)");
        return;
    }
    if (!cgroup_mode) {
        snprintf (o.files_why, sizeof (o.files_why),
                  "the command has no cgroup of its own");
        return;
    }
    if (!(o.files = tr_files_open (o.conf->ebpf == TR_EBPF_ON, &error))
        || tr_files_watch (o.files, "run", dirs, 2, &error) < 0) {
        snprintf (o.files_why, sizeof (o.files_why), "%s", error.text);
        tr_files_close (o.files);
        o.files = NULL;
        if (o.conf->ebpf == TR_EBPF_ON && !o.quiet)
            msg ("no file evidence: %s", o.files_why);
    }
}

/* The record's files member. */
static json_t *files_member (void)
{
    tr_error_t error = { 0 };
    json_t *m;

    if (o.files && (m = tr_files_step (o.files, "run", &error)))
        return m;
    if (o.files)
        snprintf (o.files_why, sizeof (o.files_why), "%s", error.text);
    return tr_files_none (o.files_why);
}

static int exit_status_of (int status)
{
    if (WIFEXITED (status))
        return WEXITSTATUS (status);
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return EXIT_FAIL;
}

static void add_tag (const char *arg)
{
    const char *colon = strchr (arg, ':');
    char key[65];

    if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof (key)) {
        fprintf (stderr, "tracer-run: --tag: expected KEY:VALUE, got '%s'\n",
                 arg);
        exit (2);
    }
    snprintf (key, sizeof (key), "%.*s", (int)(colon - arg), arg);
    json_object_set_new (o.tags, key, json_string (colon + 1));
}

/* The value of tag key in a TRACER_OPTS text ("tag=run:X,pipeline:Y"),
 * or NULL; into buf.
 */
static const char *opts_tag (const char *opts, const char *key, char *buf,
                             size_t size)
{
    size_t klen = strlen (key);
    const char *p = opts;

    while (p && *p) {
        size_t n = strcspn (p, ",");
        const char *item = p;

        if (n > 4 && !strncmp (item, "tag=", 4))
            item += 4;
        if ((size_t)(p + n - item) > klen && !strncmp (item, key, klen)
            && item[klen] == ':') {
            snprintf (buf, size, "%.*s", (int)(p + n - item - klen - 1),
                      item + klen + 1);
            return buf;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return NULL;
}

/* --pipeline, --run-id: the run id and pipeline name, as tags of the
 * command's record and, through the environment (TRACER_OPTS, which the
 * scheduler passes to the jobs it submits, and TRACER_RUN_ID and
 * TRACER_PIPELINE for scripts and for jobs with a --tracer option of
 * their own), of every job submitted beneath it.  Tags the user set
 * (--tag, TRACER_OPTS) win.  The command's own record is also tagged
 * process:driver, unless --tag gives a process.  0, or -1 having said
 * why.
 */
static int setup_run (void)
{
    const char *env = getenv ("TRACER_OPTS");
    const char *run, *pipeline;
    char envrun[300], envpipe[300], gen[TR_RUN_ID_MAX], opts[TR_SPEC_MAX + 1];
    json_t *t;
    int n;

    if (o.pipeline && !tr_run_name_ok (o.pipeline)) {
        fprintf (stderr, "tracer-run: --pipeline: '%s': use 1-127 of A-Z "
                 "a-z 0-9 . _ - + @, not starting with . or -\n",
                 o.pipeline);
        return -1;
    }
    if (o.run_id && !tr_run_name_ok (o.run_id)) {
        fprintf (stderr, "tracer-run: --run-id: '%s': use 1-127 of A-Z "
                 "a-z 0-9 . _ - + @, not starting with . or -\n", o.run_id);
        return -1;
    }
    if ((t = json_object_get (o.tags, "run")) && json_string_value (t)[0])
        run = json_string_value (t);
    else if (!(run = opts_tag (env, "run", envrun, sizeof (envrun))) || !*run)
        run = o.run_id;
    if ((t = json_object_get (o.tags, "pipeline")))
        pipeline = json_string_value (t);
    else if (!(pipeline = opts_tag (env, "pipeline", envpipe,
                                    sizeof (envpipe))))
        pipeline = o.pipeline;
    if (!run) {
        time_t now = time (NULL);
        struct tm tm;
        unsigned char rnd[2];
        char when[32];

        if (getrandom (rnd, sizeof (rnd), GRND_NONBLOCK) != (ssize_t)2) {
            unsigned v = (unsigned)getpid () ^ (unsigned)now;

            rnd[0] = (unsigned char)v;
            rnd[1] = (unsigned char)(v >> 8);
        }
        localtime_r (&now, &tm);
        strftime (when, sizeof (when), "%Y%m%d-%H%M%S", &tm);
        snprintf (gen, sizeof (gen), "%.90s-%s-%02x%02x",
                  pipeline && *pipeline ? pipeline : "run", when, rnd[0],
                  rnd[1]);
        run = gen;
    }
    /* TRACER_OPTS separates items with ',': a tag value holding one
     * would make the jobs' settings unreadable, and sbatch refuse them
     */
    if (strchr (run, ',') || (pipeline && strchr (pipeline, ','))) {
        fprintf (stderr, "tracer-run: --tag: a run or pipeline tag cannot "
                 "hold ',' (it goes into TRACER_OPTS)\n");
        return -1;
    }
    /* an empty run tag given with --tag is no run tag */
    t = json_object_get (o.tags, "run");
    if (((!t || !json_string_value (t) || strcmp (json_string_value (t), run))
         && json_object_set_new (o.tags, "run", json_string (run)) < 0)
        || (pipeline && !json_object_get (o.tags, "pipeline")
            && json_object_set_new (o.tags, "pipeline",
                                    json_string (pipeline)) < 0)
        /* the driver's own record is the run's process "driver" (the
         * jobs beneath it get no process tag: theirs is their name)
         */
        || (!json_object_get (o.tags, "process")
            && json_object_set_new (o.tags, "process",
                                    json_string ("driver")) < 0))
        return -1;
    /* TRACER_OPTS as it was, and the tags it lacks */
    n = snprintf (opts, sizeof (opts), "%s", env ? env : "");
    if (n >= 0 && !opts_tag (env, "run", envrun, sizeof (envrun))
        && (size_t)n < sizeof (opts))
        n += snprintf (opts + n, sizeof (opts) - (size_t)n, "%stag=run:%s",
                       n ? "," : "", run);
    if (n >= 0 && pipeline
        && !opts_tag (env, "pipeline", envpipe, sizeof (envpipe))
        && (size_t)n < sizeof (opts))
        n += snprintf (opts + n, sizeof (opts) - (size_t)n,
                       "%stag=pipeline:%s", n ? "," : "", pipeline);
    if (n < 0 || (size_t)n >= sizeof (opts)) {
        fprintf (stderr, "tracer-run: TRACER_OPTS would be longer than %d "
                 "bytes\n", TR_SPEC_MAX);
        return -1;
    }
    if (setenv ("TRACER_OPTS", opts, 1) < 0
        || setenv ("TRACER_RUN_ID", run, 1) < 0
        || (pipeline && setenv ("TRACER_PIPELINE", pipeline, 1) < 0))
        return -1;
    msg ("run %s%s%s", run, pipeline ? ", pipeline " : "",
         pipeline ? pipeline : "");
    return 0;
}

int main (int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "store", no_argument, NULL, 'S' },
        { "interval", required_argument, NULL, 'i' },
        { "tag", required_argument, NULL, 't' },
        { "pipeline", required_argument, NULL, 'P' },
        { "run-id", required_argument, NULL, 'R' },
        { "no-cgroup", no_argument, NULL, 'N' },
        { "no-sign", no_argument, NULL, 'U' },
        { "view", no_argument, NULL, 'v' },
        { "demo", optional_argument, NULL, 'D' },
        { "config", required_argument, NULL, 'c' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *conf_path = tr_conf_default_path ();
    bool conf_explicit = getenv ("TRACER_CONF") && *getenv ("TRACER_CONF");
    struct tr_cgroup_paths cg;
    struct tr_workload wl;
    tr_error_t error;
    char job_id[128];
    json_t *rec;
    int c, pfd[2], efd[2], status = 0, rc;
    bool cgroup_mode;
    sigset_t fwd, old;
    double next_sample;
    pid_t pid;

    if (!(o.tags = json_object ()))
        return EXIT_FAIL;
    opterr = 0;
    while ((c = getopt_long (argc, argv, "+:o:i:t:c:qhV", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.output = optarg;
            break;
        case 'S':
            o.to_store = true;
            break;
        case 'i': {
            char *end;
            errno = 0;
            o.interval = strtod (optarg, &end);
            if (errno || *end || o.interval < 0.1 || o.interval > 3600) {
                fprintf (stderr, "tracer-run: --interval: expected seconds "
                         "in [0.1, 3600], got '%s'\n", optarg);
                return 2;
            }
            break;
        }
        case 't':
            add_tag (optarg);
            break;
        case 'P':
            o.pipeline = optarg;
            break;
        case 'R':
            o.run_id = optarg;
            break;
        case 'N':
            o.no_cgroup = true;
            break;
        case 'U':
            o.no_sign = true;
            break;
        case 'v':
            o.view = true;
            break;
        case 'D':
            o.demo = optarg ? optarg : TR_WORKLOAD_DEMO;
            break;
        case 'c':
            conf_path = optarg;
            conf_explicit = true;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            usage (stdout);
            return 0;
        case 'V':
            printf ("tracer-run %s\n", TRACER_VERSION);
            return 0;
        default: {
            char msg[256];

            fprintf (stderr, "%s\n",
                     tr_error_usage (msg, sizeof (msg), "tracer-run", c,
                                     argv[optind - 1], optopt));
            return 2;
        }
        }
    }
    if (!o.demo && optind >= argc) {
        fprintf (stderr, "tracer-run: no command given\n");
        usage (stderr);
        return 2;
    }
    if (o.demo && optind < argc) {
        fprintf (stderr, "tracer-run: --demo takes no command\n");
        return 2;
    }
    if (o.demo && tr_workload_parse (o.demo, &wl, &error) < 0) {
        fprintf (stderr, "tracer-run: --demo: %s\n", error.text);
        return 2;
    }
    if ((o.pipeline || o.run_id) && setup_run () < 0)
        return 2;
    if (tr_record_validate_section ("tags", o.tags, &error) < 0) {
        fprintf (stderr, "tracer-run: --tag: %s\n", error.text);
        return 2;
    }
    if (!(o.conf = tr_conf_create ()))
        return EXIT_FAIL;
    if (tr_conf_load (o.conf, conf_path, &error) < 0
        && !(errno == ENOENT && !conf_explicit)) {
        fprintf (stderr, "tracer-run: %s\n", tr_error_str (&error));
        return finish (2);
    }
    if (o.interval <= 0)
        o.interval = o.conf->interval_s;
    make_default_output (o.demo ? "demo" : argv[optind]);
    if (check_output () < 0)
        return finish (EXIT_FAIL);

    if (!(o.id = make_identity (job_id, sizeof (job_id)))
        || !(o.step = tr_step_create (o.id, NULL, o.tags, "tracer-run",
                                      o.interval))) {
        msg ("out of memory");
        return finish (EXIT_FAIL);
    }
    {
        struct tr_detail_opts dopts = {
            .cmdline_max = (size_t)o.conf->cmdline_max,
            .proc_reads = (size_t)o.conf->proc_reads,
            .redact = o.conf->redact,
            .tool_subcommands = o.conf->tool_subcommands,
            .tool_interpreters = o.conf->tool_interpreters,
        };
        if (o.conf->taskstats && geteuid () == 0
            && !(o.taskstats = tr_taskstats_open (&error)) && !o.quiet)
            msg ("taskstats unavailable (%s): processes shorter than %g s "
                 "may be missed", tr_error_str (&error), o.interval);
        dopts.taskstats = o.taskstats != NULL;
        /* every exec of the machine is read (bounded: the newest 4,096):
         * the command's processes are not told apart before they run
         */
        if (o.taskstats) {
            struct tr_execs_opts eo = {
                .tool_subcommands =
                    (const char *const *)o.conf->tool_subcommands,
                .tool_interpreters =
                    (const char *const *)o.conf->tool_interpreters,
            };
            o.execs = tr_execs_open (&eo, NULL);
            dopts.exit_names = o.execs;
        }
        if (o.conf->gpu)
            o.gpu = tr_gpu_open (o.conf->nvml_library, NULL);
        dopts.gpu = o.gpu;
        if (tr_step_configure (o.step, &dopts, &error) < 0) {
            msg ("%s", tr_error_str (&error));
            return finish (EXIT_FAIL);
        }
    }
    cgroup_mode = make_cgroups (&cg) == 0;

    /* The child waits on pfd until it is in its cgroups; efd (close on
     * exec) carries an exec failure back.
     */
    if (pipe2 (pfd, O_CLOEXEC) < 0 || pipe2 (efd, O_CLOEXEC) < 0) {
        msg ("pipe: %s", strerror (errno));
        return finish (EXIT_FAIL);
    }
    sigemptyset (&fwd);
    for (int s = 1; s < 32; s++)
        if (s == SIGINT || s == SIGTERM || s == SIGHUP || s == SIGQUIT
            || s == SIGUSR1 || s == SIGUSR2 || s == SIGCHLD || s == SIGTSTP
            || s == SIGCONT || s == SIGWINCH)
            sigaddset (&fwd, s);
    sigprocmask (SIG_BLOCK, &fwd, &old);
    /* the signals to forward arrive on o.sfd, so that one poll() waits for
     * them, process exits and the next sample
     */
    if ((o.sfd = signalfd (-1, &fwd, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        msg ("signalfd: %s", strerror (errno));
        return finish (EXIT_FAIL);
    }

    if (o.demo)
        msg ("the demo prints its own account of what it used on standard "
             "output, one JSON line (cpu_s, maxrss_bytes, touched_bytes), "
             "to compare with the record");
    if ((pid = fork ()) < 0) {
        msg ("fork: %s", strerror (errno));
        return finish (EXIT_FAIL);
    }
    if (pid == 0) {
        char go;
        int err;
        sigprocmask (SIG_SETMASK, &old, NULL);
        close (o.sfd);
        close (pfd[1]);
        close (efd[0]);
        if (read (pfd[0], &go, 1) != 1)
            _exit (EXIT_FAIL);
        if (o.demo) {
            prctl (PR_SET_NAME, "tracer-demo", 0, 0, 0);
            _exit (tr_workload_run (&wl, stdout) < 0 ? 1 : 0);
        }
        execvp (argv[optind], argv + optind);
        err = errno;
        if (write (efd[1], &err, sizeof (err)) < 0)
            _exit (EXIT_FAIL);
        _exit (err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
    }
    close (pfd[0]);
    close (efd[1]);
    if (cgroup_mode && join_cgroups (pid) < 0) {
        msg ("cannot join cgroup (%s); following the process tree",
             strerror (errno));
        cgroup_mode = false;
    }
    if (!cgroup_mode || tr_step_attach_paths (o.step, &cg, &error) < 0) {
        tr_step_attach_tree (o.step, pid);
        cgroup_mode = false;
    }
    else
        tr_step_add_task (o.step, 0, pid);
    /* Every process of the command is in its cgroup directories, from
     * before it execs: there the kernel drops the other processes' exit
     * records before they reach the listener (by its cgroup2 directory,
     * else by its v1 cpuacct or memory one).  Where it cannot (no BPF,
     * no kernel BTF for a v1 directory), every exit is offered as before.
     */
    if (cgroup_mode && o.taskstats) {
        const char *dirs[] = { tr_step_cgroup2_dir (o.step)
                                   ? tr_step_cgroup2_dir (o.step)
                                   : tr_step_cgroup1_dir (o.step) };
        if (dirs[0])
            (void)tr_taskstats_filter_cgroups (o.taskstats, dirs, 1, &error);
    }
    files_start (cgroup_mode);
    if (write (pfd[1], "g", 1) != 1) {
        msg ("cannot start the command");
        kill (pid, SIGKILL);
    }
    close (pfd[1]);
    {
        int err = 0;
        if (read (efd[0], &err, sizeof (err)) == (ssize_t)sizeof (err)) {
            waitpid (pid, &status, 0);
            fprintf (stderr, "tracer-run: %s: %s\n", argv[optind],
                     strerror (err));
            remove_cgroups ();
            return finish (err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
        }
        close (efd[0]);
    }

    /* Sample until the command ends; forward signals meanwhile. */
    (void)tr_step_sample (o.step, NULL);
    next_sample = tr_when_monotonic () + o.interval;
    while (1) {
        struct pollfd pw[3] = { { .fd = o.sfd, .events = POLLIN },
                                { .fd = -1, .events = POLLIN },
                                { .fd = -1, .events = POLLIN } };
        struct signalfd_siginfo si;
        double now = tr_when_monotonic (), wake = next_sample;

        /* exits are read in batches (tr_taskstats_poll_fd) */
        pw[1].fd = tr_taskstats_poll_fd (o.taskstats, now, &wake);
        pw[2].fd = tr_execs_poll_fd (o.execs, now, &wake);
        if (poll (pw, 3, tr_when_poll_ms (wake, now)) > 0) {
            if (pw[2].revents & POLLIN)
                (void)tr_execs_read (o.execs);
            while (read (o.sfd, &si, sizeof (si)) == (ssize_t)sizeof (si))
                if (si.ssi_signo != SIGCHLD)
                    kill (pid, (int)si.ssi_signo);
            if (pw[1].revents & POLLIN)
                drain_exits ();
        }
        if (waitpid (pid, &status, WNOHANG) == pid)
            break;
        if ((now = tr_when_monotonic ()) >= next_sample) {
            (void)tr_step_sample (o.step, NULL);
            next_sample += o.interval;
            if (next_sample <= now)
                next_sample = now + o.interval;
        }
    }
    drain_exits ();
    tr_step_task_exit (o.step, 0, pid, status);
    if (tr_step_finish (o.step, &error) < 0 && cgroup_mode)
        msg ("final reading: %s", error.text);
    {
        /* exact CPU without a cgroup; the largest process's peak where
         * no memory controller counts for the command
         */
        struct rusage ru;
        getrusage (RUSAGE_CHILDREN, &ru);
        tr_step_set_children_rusage (o.step, &ru);
    }
    remove_cgroups ();

    rc = exit_status_of (status);
    if (!(rec = tr_step_record (o.step, "final"))) {
        msg ("building the record: %s", strerror (errno));
        return finish (EXIT_FAIL);
    }
    {
        json_t *fm = files_member ();
        if (fm)
            json_object_set_new (rec, "files", fm);
    }
    if (o.no_sign)
        tr_sign_mark_unsigned (rec, "signing disabled (--no-sign)");
    else if (!o.conf->sign_enabled)
        tr_sign_mark_unsigned (rec, "signing disabled by configuration");
    /* a signature proves who wrote a record; only root's are trusted
     * (signing.trusted_signers): a user's own signature would make their
     * own record read as forged, to them first
     */
    else if (geteuid () != 0)
        tr_sign_mark_unsigned (rec, "a user's own record: only root's "
                                    "are signed");
    else if (tr_sign_record (rec, o.conf->munge_socket, &error) < 0) {
        char words[256];

        msg ("record left unsigned: %s",
             tr_sign_reason_str (error.text, words, sizeof (words)));
    }
    if (tr_record_validate (rec, &error) < 0)
        msg ("warning: record does not validate: %s", tr_error_str (&error));
    /* the command's status stands: a record that could not be written
     * after all (a full disk) is said, not made the command's failure
     */
    if (write_record (rec, job_id) < 0)
        msg ("the record is lost; the exit status is the command's");
    if (o.view) {
        struct tr_report_view_opts vo = {
            .width = tr_report_width (STDOUT_FILENO),
        };
        json_t *a = json_array ();

        json_array_append (a, rec);
        printf ("\n");
        tr_report_job_view_ex (stdout, a, NULL, &vo);
        json_decref (a);
    }
    json_decref (rec);
    return finish (rc);
}
