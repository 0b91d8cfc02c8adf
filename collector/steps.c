/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * tracerd's step table: the active steps by key, their sampling, their
 * state saved to <state_dir>/steps (under /run: it survives a restart of
 * tracerd, not of the node) and resumed by the next tracerd, their live
 * snapshots, and their end, when the final record is built.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libtracer/node/cgroup.h"
#include "libtracer/node/sampler.h"
#include "libtracer/util/path.h"
#include "libtracer/record/when.h"

#include "tracerd.h"

/* How often steps are checked for an end nobody notified, and how long
 * a step attached by environment or session may wait for its first
 * process.
 */
#define REAP_CHECK_S 10.0
#define REAP_NEVER_S 600.0

/* How often a running step's readings are saved to the state dir. */
#define STATE_SAVE_S 5.0

/* A step due within this share of its interval is sampled with the ones
 * due now: each sample carries its own time, so nothing is skewed, and
 * the daemon wakes once per interval for all its steps instead of once
 * per step.
 */
#define SAMPLE_SLACK 0.05

int tracerd_steps_key (json_t *id, char *buf, size_t size)
{
    const char *c = json_string_value (json_object_get (id, "cluster"));
    const char *j = json_string_value (json_object_get (id, "job_id"));
    const char *s = json_string_value (json_object_get (id, "step_id"));
    const char *n = json_string_value (json_object_get (id, "node"));
    int len;

    if (!c || !j || !s || !n)
        return -1;
    len = snprintf (buf, size, "%s/%s/%s/%s", c, j, s, n);
    return len < 0 || (size_t)len >= size ? -1 : 0;
}

int tracerd_steps_key_as (json_t *id,
                          const uid_t *starter,
                          char *buf,
                          size_t size)
{
    size_t n;
    int len;

    if (tracerd_steps_key (id, buf, size) < 0)
        return -1;
    if (!starter)
        return 0;
    n = strlen (buf);
    len = snprintf (buf + n, size - n, "~%u", (unsigned)*starter);
    return len < 0 || (size_t)len >= size - n ? -1 : 0;
}

/* Active steps by key: open addressing with linear probing over
 * d.steps' indices (+1; 0 is a free slot), at most half full.  Every
 * request names its step, and a linear search with string compares took
 * milliseconds at thousands of steps.
 */
#define STEP_SLOTS (2 * MAX_STEPS)

static int step_slot[STEP_SLOTS];

/* Memory trims (tracerd_steps_trim) and mirror sweeps (tracerd_steps_sweep) */
static bool trim_due; /* a step was dropped since the last trim */
static double next_trim;
static double next_sweep;

static size_t key_slot (const char *key)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */

    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (size_t)(h & (STEP_SLOTS - 1));
}

/* The slot that holds key, or the free slot where it would go. */
static size_t find_slot (const char *key)
{
    size_t i = key_slot (key);

    while (step_slot[i] && strcmp (d.steps[step_slot[i] - 1].key, key))
        i = (i + 1) & (STEP_SLOTS - 1);
    return i;
}

struct active *tracerd_steps_find (const char *key)
{
    size_t i = find_slot (key);

    return step_slot[i] ? &d.steps[step_slot[i] - 1] : NULL;
}

/* Index a step whose key was just set (d.steps[] holds it). */
void tracerd_steps_index (struct active *a)
{
    size_t i = find_slot (a->key);

    if (!step_slot[i])
        step_slot[i] = (int)(a - d.steps) + 1;
}

/* Remove key's slot, moving later ones of the same run back into it so
 * that no lookup stops short (Knuth's algorithm R).
 */
static void unindex_key (const char *key, int index)
{
    size_t i = find_slot (key), j = i;

    if (!step_slot[i] || step_slot[i] != index + 1)
        return;
    for (;;) {
        size_t h;
        j = (j + 1) & (STEP_SLOTS - 1);
        if (!step_slot[j])
            break;
        h = key_slot (d.steps[step_slot[j] - 1].key);
        if ((i <= j) ? (i < h && h <= j) : (i < h || h <= j))
            continue;
        step_slot[i] = step_slot[j];
        i = j;
    }
    step_slot[i] = 0;
}

void tracerd_steps_drop (struct active *a)
{
    int idx = (int)(a - d.steps), last = d.nsteps - 1;

    unindex_key (a->key, idx);
    if (idx != last) {
        size_t i = find_slot (d.steps[last].key);
        if (step_slot[i] == last + 1)
            step_slot[i] = idx + 1;
    }
    tr_step_destroy (a->step);
    *a = d.steps[--d.nsteps];
    trim_due = true;
}

/* Hand the heap of dropped steps back to the system.  glibc keeps freed
 * memory that lies below memory still in use, so without this a node
 * that once followed 128 steps holds their 25 MiB until tracerd exits.
 * At most once per TRIM_S: a trim walks every free chunk.
 */
#define TRIM_S 10.0

void tracerd_steps_trim (double now)
{
    if (!trim_due || now < next_trim)
        return;
    trim_due = false;
    next_trim = now + TRIM_S;
#ifdef HAVE_MALLOC_TRIM
    (void)malloc_trim (0);
#endif
}

/* The state file of a step: its key with '@' for '/'.  No path-safe
 * identifier contains either, so names cannot collide.
 */
static int state_name (struct active *a, char *buf, size_t size)
{
    int n = snprintf (buf, size, "%s.json", a->key);

    if (n < 0 || (size_t)n >= size)
        return -1;
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '@';
    return 0;
}

/* What the daemon itself knows of a step, beside the step's own state:
 * a restarted daemon that forgot the step was seen alive would record a
 * resumed step as "never found".
 */
static int save_daemon_state (struct active *a, json_t *st)
{
    return json_object_set_new (
        st, "daemon",
        json_pack ("{s:b s:i s:b s:b s:I s:b}", "seen", a->seen, "gone",
                   a->gone, "conditional", a->conditional, "by_starter",
                   a->by_starter, "starter_uid", (json_int_t)a->starter_uid,
                   "stall_mailed", a->stall_mailed));
}

static void restore_daemon_state (struct active *a, json_t *st)
{
    int seen = 0, gone = 0, cond = 0, starter = 0, mailed = 0;
    json_int_t uid = 0;

    if (json_unpack (json_object_get (st, "daemon"),
                     "{s?b s?i s?b s?b s?I s?b}", "seen", &seen, "gone", &gone,
                     "conditional", &cond, "by_starter", &starter,
                     "starter_uid", &uid, "stall_mailed", &mailed)
        < 0)
        return;
    a->stall_mailed = mailed;
    a->seen = seen;
    a->gone = gone >= 0 && gone < 2 ? gone : 0;
    a->conditional = cond;
    a->by_starter = starter;
    a->starter_uid = uid > 0 && uid < (json_int_t)(uid_t)-1 ? (uid_t)uid : 0;
}

void tracerd_steps_save (struct active *a)
{
    char name[600];
    json_t *st;
    char *text = NULL;
    tr_error_t error;

    if (d.state_fd < 0 || state_name (a, name, sizeof (name)) < 0)
        return;
    if (!(st = tr_step_save (a->step)) || save_daemon_state (a, st) < 0
        || !(text = json_dumps (st, JSON_COMPACT))
        || tr_path_replace (d.state_fd, name, text, strlen (text), 0600,
                            (uid_t)-1, (gid_t)-1, &error)
               < 0)
        tracerd_log (LOG_WARNING, "step %s: cannot save state: %s", a->key,
                     text ? tr_error_str (&error) : strerror (errno));
    a->saved = tr_when_monotonic ();
    free (text);
    json_decref (st);
}

static void drop_state (struct active *a)
{
    char name[600];

    if (d.state_fd >= 0 && state_name (a, name, sizeof (name)) == 0
        && unlinkat (d.state_fd, name, 0) < 0 && errno != ENOENT)
        tracerd_log (LOG_WARNING, "step %s: removing state: %s", a->key,
                     strerror (errno));
}

static void finish_step (struct active *a)
{
    json_t *rec, *oc;
    bool signalled;

    if (!(rec = tr_step_record (a->step, "final"))) {
        tracerd_log (LOG_ERR, "step %s: building record: %s", a->key,
                     strerror (errno));
        return;
    }
    tracerd_evidence_attach (a, rec);
    /* A task killed by a signal that is not the OOM killer's: the
     * scheduler knows whether it was a cancel or the time limit.
     */
    oc = json_object_get (rec, "outcome");
    signalled =
        json_object_get (oc, "signal")
        && !strcmp (json_string_value (json_object_get (oc, "state")), "faile"
                                                                       "d");
    /* a job starter's step: only if LSF says the job is its user's */
    if (tracerd_sched_vouch (a, rec))
        return;
    if (tracerd_sched_hold (a->step, rec, signalled))
        return;
    tracerd_forward_record (a->key, rec);
}

/* sampling.psi_mirror: true tries everywhere (and logs where there is
 * no hybrid tree); auto only where the host is hybrid.
 */
bool tracerd_steps_mirror_wanted (void)
{
    return d.conf->psi_mirror == TR_PSI_MIRROR_ON
           || (d.conf->psi_mirror == TR_PSI_MIRROR_AUTO
               && tr_cgroup_host_layout () == TR_CGROUP_HYBRID);
}

/* A step's cgroup2 mirror directory name: its key, '/' made '@'. */
void tracerd_steps_mirror_name (const char *key, char *buf, size_t size)
{
    snprintf (buf, size, "%s", key);
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '@';
}

/* The step's detail options from the configuration.  gpus is the
 * step's request.gpus, which tracerd set from a trusted source or a
 * root hook gave; without it the step follows no GPU (never every GPU
 * of the node: those are other jobs').
 */
void tracerd_steps_configure (tr_step_t *step, const char *key, json_t *gpus)
{
    struct tr_detail_opts opts = {
        .taskstats = d.taskstats != NULL,
        .cmdline_max = (size_t)d.conf->cmdline_max,
        .proc_reads = (size_t)d.conf->proc_reads,
        .redact = d.conf->redact,
        .tool_subcommands = d.conf->tool_subcommands,
        .tool_interpreters = d.conf->tool_interpreters,
        .gpu =
            json_is_string (gpus) && *json_string_value (gpus) ? d.gpu : NULL,
        .gpu_devices = json_string_value (gpus),
        .exit_window = d.exit_window,
        .exit_names = d.execs,
    };
    tr_error_t error;

    if (tr_step_configure (step, &opts, &error) < 0)
        tracerd_log (LOG_WARNING, "step %s: detail not configured: %s", key,
                     tr_error_str (&error));
    tr_step_set_stall_after (step, d.conf->stall_after_s);
}

/* A live snapshot of a running step for "tracer-report --live":
 * <state_dir>/live/<key>.json, replaced atomically.  It belongs to the
 * step's user, mode 0600, in a directory anyone may list: each user can
 * read their own running steps and no one else's.  Root reads them all.
 */
static void write_snapshot (struct active *a)
{
    char name[600];
    char *text = NULL;
    json_int_t uid;
    uid_t owner = (uid_t)-1;
    tr_error_t error;

    a->snapped = tr_when_monotonic ();
    if (d.live_fd < 0 || state_name (a, name, sizeof (name)) < 0)
        return;
    uid =
        json_integer_value (json_object_get (tr_step_identity (a->step), "ui"
                                                                         "d"));
    if (uid > 0 && uid < (json_int_t)(uid_t)-1)
        owner = (uid_t)uid;
    if (!(text = tr_step_snapshot_text (a->step))
        || tr_path_replace (d.live_fd, name, text, strlen (text), 0600, owner,
                            (gid_t)-1, &error)
               < 0)
        tracerd_log (LOG_WARNING, "step %s: cannot write a live snapshot: %s",
                     a->key, text ? tr_error_str (&error) : strerror (errno));
    free (text);
}

static void drop_snapshot (struct active *a)
{
    char name[600];

    if (d.live_fd >= 0 && state_name (a, name, sizeof (name)) == 0)
        (void)unlinkat (d.live_fd, name, 0);
}

/* Jobs that had an unconditional step on this node since tracerd
 * started, oldest overwritten first.  A conditional step (Slurm's extern
 * step, which cannot see the user's --tracer) keeps its record only if
 * its job is here: opted-in jobs get it, opted-out jobs do not.
 */
#define TRACED_JOBS 1024

static struct {
    char key[TRACED_JOBS][300];
    int next;
} traced;

static int job_key (json_t *id, char *buf, size_t size)
{
    const char *c = json_string_value (json_object_get (id, "cluster"));
    const char *j = json_string_value (json_object_get (id, "job_id"));
    int n;

    if (!c || !j)
        return -1;
    n = snprintf (buf, size, "%s/%s", c, j);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

bool tracerd_steps_traced (json_t *id)
{
    char key[300];

    if (job_key (id, key, sizeof (key)) < 0)
        return false;
    for (int i = 0; i < TRACED_JOBS; i++)
        if (!strcmp (traced.key[i], key))
            return true;
    return false;
}

void tracerd_steps_note_traced (json_t *id)
{
    if (tracerd_steps_traced (id)
        || job_key (id, traced.key[traced.next], sizeof (traced.key[0])) < 0)
        return;
    traced.next = (traced.next + 1) % TRACED_JOBS;
}

/* A step's end: its final record, then nothing of it is kept. */
void tracerd_steps_retire (struct active *a)
{
    /* the kernel's lines about its last processes, before its record */
    tracerd_evidence_settle ();
    tracerd_log (LOG_DEBUG,
                 "step %s: %llu process exit events received while "
                 "it ran",
                 a->key,
                 (unsigned long long)(tracerd_exits_received ()
                                      - a->exits_before));
    if (a->conditional && !tracerd_steps_traced (tr_step_identity (a->step)))
        tracerd_log (LOG_DEBUG,
                     "step %s: no other step of its job is traced "
                     "here; no record",
                     a->key);
    else
        finish_step (a);
    drop_state (a);
    drop_snapshot (a);
    tracerd_steps_drop (a);
    tracerd_exits_filter ();
}

/* Remove mirror directories no active step uses (their processes are
 * gone; a step that ended while tracerd was down leaves one too).
 */
void tracerd_steps_sweep (double now)
{
    const char **keep;
    char (*names)[600];
    size_t n = 0;

    if (now < next_sweep)
        return;
    next_sweep = now + 10;
    keep = calloc ((size_t)d.nsteps + 1, sizeof (*keep));
    names = calloc ((size_t)d.nsteps + 1, sizeof (*names));
    if (keep && names) {
        for (int i = 0; i < d.nsteps; i++) {
            tracerd_steps_mirror_name (d.steps[i].key, names[n],
                                       sizeof (names[n]));
            keep[n] = names[n];
            n++;
        }
        (void)tr_cgroup_mirror_sweep (keep, n);
    }
    free (keep);
    free (names);
}

/* Whether a step is followed through its mirror directory. */
static bool mirrored (struct active *a)
{
    const char *dir = tr_step_cgroup2_dir (a->step);
    char name[600], tail[700];
    size_t dl, tl;

    if (!dir)
        return false;
    tracerd_steps_mirror_name (a->key, name, sizeof (name));
    snprintf (tail, sizeof (tail), "/%s/%s", TR_CGROUP_MIRROR_DIR, name);
    dl = strlen (dir);
    tl = strlen (tail);
    return dl >= tl && !strcmp (dir + dl - tl, tail);
}

/* The job a step belongs to, for telling its steps on this node: the
 * leader of a heterogeneous job, else its own job, with its cluster.
 */
static bool same_job (json_t *a, json_t *b)
{
    const char *ja = json_string_value (json_object_get (a, "het_job_id"));
    const char *jb = json_string_value (json_object_get (b, "het_job_id"));
    const char *ca = json_string_value (json_object_get (a, "cluster"));
    const char *cb = json_string_value (json_object_get (b, "cluster"));

    if (!ja)
        ja = json_string_value (json_object_get (a, "job_id"));
    if (!jb)
        jb = json_string_value (json_object_get (b, "job_id"));
    return ja && jb && ca && cb && !strcmp (ja, jb) && !strcmp (ca, cb);
}

/* A step of a job whose other steps here moved is not stalled: a batch
 * script waiting for its srun steps is as busy as they are.  Looked at
 * only once the step's own processes have made no progress for
 * sampling.stall_after.
 */
static void job_progress (struct active *a)
{
    json_t *id;
    double t;
    int64_t ms;

    if (!tr_step_stalled (a->step, NULL))
        return;
    id = tr_step_identity (a->step);
    for (int i = 0; i < d.nsteps; i++) {
        struct active *b = &d.steps[i];

        if (b != a && same_job (id, tr_step_identity (b->step))
            && tr_step_last_progress (b->step, &t, &ms))
            tr_step_progress_touch (a->step, t, ms);
    }
}

/* Sample the steps that are due; return the time of the next one due
 * (at most one daemon interval away, for spool forwarding).  At most
 * SAMPLE_SLICE_S of sampling at a time: with thousands of steps due
 * together, a whole round takes seconds, and clients are served between
 * slices.  A slice cut short returns now, and the next call goes on
 * from the step where it stopped.
 */
#define SAMPLE_SLICE_S 0.02

double tracerd_steps_sample (double now)
{
    static int cursor;
    double next = now + d.conf->interval_s;
    double t0 = tr_when_monotonic ();

    if (cursor >= d.nsteps)
        cursor = 0;
    for (int k = 0; k < d.nsteps; k++) {
        int i = (cursor + k) % d.nsteps;
        struct active *a = &d.steps[i];
        tr_error_t error;
        if (now >= a->next - SAMPLE_SLACK * tr_step_interval (a->step)) {
            if (tr_when_monotonic () - t0 >= SAMPLE_SLICE_S) {
                cursor = i;
                return now;
            }
            if (tr_step_sample (a->step, &error) < 0)
                tracerd_log (LOG_DEBUG, "step %s: %s", a->key, error.text);
            /* a job shorter than the reaper's period is seen here */
            else {
                if (!a->seen && tr_step_npids (a->step) > 0)
                    a->seen = true;
                job_progress (a);
                tracerd_notice_stall (a);
            }
            a->next = now + tr_step_interval (a->step);
            if (now - a->saved >= STATE_SAVE_S)
                tracerd_steps_save (a);
            if (d.conf->snapshot_interval_s > 0
                && now - a->snapped >= d.conf->snapshot_interval_s)
                write_snapshot (a);
        }
        if (a->next < next)
            next = a->next;
    }
    return next;
}

/* A step whose end was never notified (a hook that could not reach
 * tracerd, an epilogue that never ran) must not be followed forever:
 * once its cgroup and processes are gone for two checks in a row, it
 * gets a record marked incomplete with its last readings.
 */
void tracerd_steps_reap (double now)
{
    static double next_check;

    if (now < next_check)
        return;
    next_check = now + REAP_CHECK_S;
    for (int i = d.nsteps - 1; i >= 0; i--) {
        struct active *a = &d.steps[i];
        const char *why = NULL;
        if (tr_step_alive (a->step)) {
            a->seen = true;
            a->gone = 0;
            continue;
        }
        if (a->seen && ++a->gone >= 2)
            why = "the step ended without an end notification; figures "
                  "are from its last reading";
        else if (!a->seen && now - a->created >= REAP_NEVER_S)
            why = "no cgroup or process of the step was ever found";
        if (!why)
            continue;
        tracerd_log (LOG_WARNING, "step %s: %s", a->key, why);
        tr_step_mark_incomplete (a->step, why);
        tracerd_steps_retire (a);
    }
}

/* Resume the steps a previous tracerd left in the state dir.  A step
 * whose cgroup still exists carries on (its counters are cumulative, so
 * nothing is lost); one that ended while no daemon ran gets a record
 * marked incomplete, with its last saved readings.
 */
void tracerd_steps_resume (void)
{
    DIR *dir;
    struct dirent *de;
    int fd;

    if (d.state_fd < 0 || (fd = dup (d.state_fd)) < 0)
        return;
    if (!(dir = fdopendir (fd))) {
        close (fd);
        return;
    }
    tracerd_exits_hold (true); /* every resumed step first */
    while ((de = readdir (dir))) {
        size_t len = strlen (de->d_name), n;
        tr_error_t error;
        json_t *st;
        tr_step_t *step;
        char *text, key[600];
        struct active *a;

        if (de->d_name[0] == '.' || len < 6
            || strcmp (de->d_name + len - 5, ".json") != 0)
            continue;
        text = tr_path_read_file (d.state_fd, de->d_name, 1 << 20, &n, &error);
        st = text ? json_loadb (text, n, 0, NULL) : NULL;
        free (text);
        step = st ? tr_step_restore (st, &error) : NULL;
        if (!step) {
            json_decref (st);
            tracerd_log (LOG_ERR, "state %s unreadable; removed", de->d_name);
            unlinkat (d.state_fd, de->d_name, 0);
            continue;
        }
        if (d.nsteps == MAX_STEPS) {
            json_decref (st);
            tr_step_destroy (step);
            break;
        }
        a = &d.steps[d.nsteps++];
        memset (a, 0, sizeof (*a));
        a->step = step;
        restore_daemon_state (a, st);
        if (tracerd_steps_key_as (tr_step_identity (step),
                                  a->by_starter ? &a->starter_uid : NULL, key,
                                  sizeof (key))
            < 0) {
            json_decref (st);
            tracerd_log (LOG_ERR, "state %s: bad identity; removed",
                         de->d_name);
            unlinkat (d.state_fd, de->d_name, 0);
            tracerd_steps_drop (a);
            continue;
        }
        snprintf (a->key, sizeof (a->key), "%s", key);
        if (tracerd_steps_find (key)) {
            tracerd_log (LOG_ERR, "state %s: step %s already resumed; removed",
                         de->d_name, key);
            unlinkat (d.state_fd, de->d_name, 0);
            a->key[0] = '\0';
            json_decref (st);
            tracerd_steps_drop (a);
            continue;
        }
        tracerd_steps_index (a);
        json_decref (st);
        a->next = tr_when_monotonic ();
        a->saved = tr_when_monotonic ();
        a->snapped = tr_when_monotonic ();
        a->created = tr_when_monotonic ();
        tracerd_steps_configure (step, key,
                                 json_object_get (tr_step_request (step), "gpu"
                                                                          "s"));
        a->unfiltered = mirrored (a); /* were all its tasks moved? */
        if (tr_step_alive (step)) {
            tracerd_log (LOG_NOTICE, "step %s resumed", a->key);
            continue;
        }
        tr_step_mark_incomplete (step, "the step ended while tracerd was "
                                       "not running; figures are from its last "
                                       "saved reading");
        tracerd_log (LOG_WARNING,
                     "step %s ended while tracerd was down; "
                     "recording it as incomplete",
                     a->key);
        tracerd_steps_retire (a);
    }
    closedir (dir);
    tracerd_exits_hold (false);
    tracerd_exits_filter ();
}

/* The state dir: steps/ for the steps' saved state, live/ for their
 * snapshots.  Without it steps do not survive a restart.
 */
void tracerd_steps_open_state (void)
{
    char path[PATH_MAX];
    tr_error_t error;
    int n = snprintf (path, sizeof (path), "%s/steps", d.conf->state_dir);
    /* 0755: users reach live/ through it; steps/ stays root's. */
    int base = tracerd_open_dir (d.conf->state_dir, 0755, &error);

    if (base >= 0) {
        close (base);
        if (n > 0 && (size_t)n < sizeof (path))
            d.state_fd = tracerd_open_dir (path, 0700, &error);
    }
    if (d.state_fd < 0)
        tracerd_log (LOG_ERR,
                     "state dir %s: %s; steps will not survive a "
                     "restart",
                     d.conf->state_dir, tr_error_str (&error));
    n = snprintf (path, sizeof (path), "%s/live", d.conf->state_dir);
    if (d.state_fd >= 0 && n > 0 && (size_t)n < sizeof (path)
        && (d.live_fd = tracerd_open_dir (path, 0755, &error)) < 0)
        tracerd_log (LOG_WARNING, "live snapshots disabled: %s",
                     tr_error_str (&error));
    /* An older tracerd made it 0700: users must be able to list it */
    if (d.live_fd >= 0)
        (void)fchmod (d.live_fd, 0755);
}
