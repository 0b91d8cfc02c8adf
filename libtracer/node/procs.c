/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The per-step process table.  Two sources feed it: scans of the step's
 * current pids under /proc (stat, status, io, schedstat; cmdline and exe
 * once per process), and taskstats exit events (taskstats.c), which give
 * exact final counters and reveal processes that lived between two scans.
 * Processes are keyed by (pid, start time), so a reused pid is a new
 * process.  Rows are grouped by tool name (tools.c): the executable's
 * base name, or for a program the rule table names from its arguments
 * (samtools, python, java, env...) the subcommand or script it runs, read
 * from /proc/PID/cmdline once per process and program.
 *
 * Counting each process's own usage once.  /proc/PID/stat utime+stime are
 * the thread group's own CPU (cutime/cstime, which hold reaped children,
 * are not used), and taskstats records are per thread and never include
 * children.  /proc/PID/io, however, includes the I/O of every child the
 * process reaped (wait_task_zombie() adds the child's totals to the
 * parent's signal->ioac; FACTS.md 1.7, 3.4).  The rule: a process's own
 * I/O is its /proc reading minus the inclusive final I/O of each child
 * seen to end while it was the parent (child_io), clamped at zero, or its
 * summed exit records when larger.  A child's I/O is subtracted only from
 * readings taken after its end (child_pending until then): when parent
 * and child both end between two readings, the parent's last reading
 * predates the reap and holds none of it.  A child's inclusive I/O is its
 * own plus every child credited to it.  Summing own I/O over all
 * processes then counts every byte once.  Where the parent never absorbs
 * a child (it ignores SIGCHLD, or dies first) the subtraction undercounts
 * that parent in sampled mode only; exit records need no subtraction.
 * Readings only grow, so every final value is the larger of the sampled
 * and the exit value (exit I/O is rounded down to 1 KiB by the kernel).
 *
 * Bounded memory: entries exist for live processes and for the last
 * ENDED_MAX ended ones (kept so that a late exit event can make them
 * exact and their children can be attributed); older ones are folded
 * into per-tool sums.  At most TOOLS_HARD_MAX names are tracked, the rest
 * go to "(other)".  Exit events that cannot be attributed yet are held in
 * a small window (PENDING_MAX, PENDING_AGE_MS): in "sh -c 'a | b'" both
 * children exit before the shell whose parent makes them the step's.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libtracer/util/fsroot.h"
#include "libtracer/conf/conf.h"
#include "execs.h"
#include "procs.h"
#include "psi.h"
#include "libtracer/util/strbuf.h"
#include "libtracer/util/tools.h"

#define ENDED_MAX 512        /* ended processes kept as entries */
#define PENDING_MAX 128      /* unattributed exit events held */
#define PENDING_AGE_MS 30000 /* ... for at most this long */
#define ADOPT_AFTER 4        /* held events of one parent before it is probed */
#define NOT_MEMBER_MAX 16    /* parents found not to be the step's ... */
#define NOT_MEMBER_MS 1000   /* ... remembered this long */

#define TOOLS_HARD_MAX 1024  /* distinct names tracked */
#define EXEMAP_MAX 1024      /* executable (dev, inode) -> tool */
#define ROOTS_MAX 4096
#define START_TOL_MS 2000    /* start times from /proc and taskstats */
#define PF_EXITING_FLAG 0x4  /* /proc/PID/stat flags: in do_exit */
#define CMDLINE_READ_MAX 8192
#define THREADS_READ_MAX 1024
#define NAME_MAX_BYTES 255
#define ARGV_MAX 256         /* arguments looked at to name a tool */
#define COMM_BYTES 64
#define OTHER_NAME "(other)"
#define EXCLUDED_MAX 64      /* excluded processes and their children */

/* The window of exits no table could attribute yet: a ring of at most
 * PENDING_MAX events, none older than PENDING_AGE_MS, made on first use
 * (most tables never hold one).  The events are held as the kernel
 * dated them; a table shifts its copy when it applies one.
 */
struct tr_exit_window {
    struct tr_exit *ev;
    /* ev[i].ppid, packed: every table asks about every unknown exit,
     * and scanning whole events each time is most of that cost
     */
    pid_t ppid[PENDING_MAX];
    size_t head, count;
};

/* Sorted-by-insertion small map: exit code or signal -> count. */
struct kv {
    int key;
    uint64_t n;
};

struct codemap {
    struct kv *v;
    size_t n, cap;
};

struct tool {
    char *name;
    char *cmdline;          /* first seen, redacted; NULL until known */
    bool overflow;          /* the catch-all past TOOLS_HARD_MAX */
    int hnext;              /* name hash chain */
    uint64_t count;         /* processes, folded or not */
    int64_t first_start_ms; /* 0 = unknown */
    struct codemap codes, sigs;
    /* sums of the processes folded out of the table */
    uint64_t f_cpu_us, f_peak, f_runq_ns, f_inexact;
    struct tr_proc_io f_io;
    int64_t f_last_end_ms;
};

/* Processes of one tool that ended below a process: its reaped children
 * and theirs (see reaped_gap_us).
 */
struct ends {
    int tool;
    uint64_t n;
};

/* Step-wide sums of the entries' own usage (I/O, run-queue, memory and
 * I/O delays).
 */
struct sums {
    struct tr_proc_io io;
    uint64_t runq_ns, memd_ns, iod_ns;
};

struct proc {
    struct proc *hnext;         /* pid hash chain */
    struct proc *lprev, *lnext; /* live list */
    size_t slot;                /* ring slot while ended */
    pid_t pid, ppid;
    int tool;
    bool live, scanned, exact, have_status, credited;
    bool reaped; /* a child was credited to it since its last reading */
    bool cpu_tick;              /* an exit record's CPU was tick-sampled */
    int status;
    char comm[COMM_BYTES];
    /* the comm it gave itself after its exec (prctl PR_SET_NAME), or "":
     * it is named from its executable and arguments, not from this
     */
    char renamed[16];
    uint64_t exe_dev, exe_ino; /* its executable at the last scan, or 0 */
    uint64_t start_ticks; /* /proc starttime; 0 if never scanned */
    int64_t start_ms, end_ms;
    /* the last scan that saw it and that read its io; the first scan
     * whose readings come after its end
     */
    uint64_t seen_gen, io_gen, end_gen;
    /* sampled: CPU us, VmHWM bytes, run delay ns, I/O incl. children */
    uint64_t s_cpu_us, s_hwm, s_runq_ns;
    uint64_t s_user_us;         /* the user part of s_cpu_us */
    uint64_t s_rss;             /* resident pages at the last reading */
    struct tr_proc_io s_io;
    /* summed over the exit records of its threads */
    uint64_t x_cpu_us, x_hwm, x_runq_ns, x_memd_ns, x_iod_ns;
    uint64_t x_user_us;         /* the user part of x_cpu_us */
    /* CPU of the children it had reaped at its latest reading (cutime +
     * cstime, us; cut_user_us its user part); the inclusive CPU of its
     * children in the table, credited to it as they end; what it
     * credited to its parent
     */
    uint64_t cut_us, cut_user_us, kids_us, cpu_credit;
    /* the processes that ended below it, by tool: its children credited
     * to it, and theirs (NULL until the first)
     */
    struct ends *below;
    size_t nbelow, below_cap;
    struct tr_proc_io x_io;
    /* inclusive I/O of reaped children, subtracted from the readings;
     * children credited since the last reading; what was credited to the
     * parent
     */
    struct tr_proc_io child_io, child_pending, credit;
    /* what it adds to the tr_procs sums as of its last change */
    struct sums contrib;
};

/* A process that is not the step's although it runs below one of its
 * processes (tr_procs_exclude), or one it started.  Its exit records
 * add up here (its own CPU and that of its children) and go, at its
 * end, to the step's process that reaps it: that one's cutime holds
 * them, and must not read as children the table missed.
 */
struct excluded {
    pid_t pid;
    int64_t start_ms;
    uint64_t cpu_us;
    bool ended;
};

/* prog: for a program named from its arguments (tools.c), its name and
 * tool -1: an exit of such a process seen only as an exit event is named
 * from the program and the event's comm.
 */
struct exemap {
    uint64_t dev, ino;
    int tool;
    char *prog;
};

/* Compiled redaction patterns, shared by every process table made with
 * the same list: tracerd makes one table per step, and each compiled
 * copy of the default list costs about 70 KiB.
 */
struct redact_set {
    struct redact_set *next;
    unsigned refs;
    size_t n;
    char **pat; /* copies: the caller's list may be freed (reload) */
    regex_t *re;
};

static struct redact_set *redact_sets;
static pthread_mutex_t redact_lock = PTHREAD_MUTEX_INITIALIZER;

/* A failing exit (non-zero status or a signal), with the chain of its
 * parents as the table knew them at the exit, nearest first.
 */
#define FAILS_MAX 16
#define CHAIN_MAX 8
struct failure {
    pid_t pid;
    int tool;
    char renamed[16]; /* the comm it gave itself (struct proc), or "" */
    char comm[COMM_BYTES]; /* the kernel's name of it at its end */
    int status;
    int64_t end_ms;
    size_t nchain;
    struct {
        pid_t pid;
        int tool; /* -1: not in the table */
    } chain[CHAIN_MAX];
};

struct tr_procs {
    size_t cmdline_max, tools_max;
    struct redact_set *rs;
    regex_t *re; /* rs->re */
    size_t nre;
    long hz;
    int64_t boot_ms;
    int64_t clock_boot_ms; /* wall clock less boot clock when boot_ms was set */

    struct proc **hash;
    size_t hsize, hcount;
    struct proc *live;
    size_t nlive;
    struct proc **ring;
    size_t rhead, rcount;
    /* the exits not attributed yet: the table's own window, or one
     * shared with the other tables of a daemon (opts.exit_window)
     */
    tr_exit_window_t *win;
    bool win_shared;
    const tr_execs_t *execs; /* what processes were at their exec, or NULL */
    tr_procs_member_f member; /* is a live process the step's? */
    void *member_arg;
    struct {
        pid_t pid;
        int64_t until_ms;
    } not_member[NOT_MEMBER_MAX];
    size_t nm_next;

    struct tool *tools;
    size_t ntools, tcap;
    int thash[256];
    int overflow;
    struct exemap *exe;
    size_t nexe, exe_cap;
    /* the site's tool rules (copies) */
    char **site_sub, **site_interp;
    struct tr_tools_site site;

    pid_t *roots;
    size_t nroots, rootcap;
    uint64_t gen, nseen, lost;
    uint64_t dropped; /* events not held for want of memory */
    struct excluded excl[EXCLUDED_MAX];
    size_t nexcl;
    uint64_t excluded_us; /* their CPU, credited to the step's processes */
    /* the processes the caller reaped itself, and their whole CPU
     * (tr_procs_set_reaped)
     */
    pid_t *reaped_pids;
    size_t nreaped;
    uint64_t reaped_us, reaped_user_us;
    size_t rr;     /* where the next budgeted scan's turn starts */
    bool scanning; /* within tr_procs_scan */
    /* step-wide sums of folded processes */
    uint64_t f_memd_ns, f_iod_ns, f_inexact;
    /* CPU of folded processes: total and user part (us), and how many
     * of them ended without an exact CPU figure
     */
    uint64_t f_cpu_us, f_user_us, f_cpu_inexact;
    /* the contrib of every entry not folded yet, kept as entries change,
     * so that a sample's sums cost nothing per process
     */
    struct sums entry_sums;
    /* the first failing exits, in the order they were applied (made on
     * the first: most steps have none)
     */
    struct failure *fails;
    size_t nfails;
};

/* The members of struct tr_proc_io, to loop over them. */
static const size_t io_off[] = {
    offsetof (struct tr_proc_io, rchar),
    offsetof (struct tr_proc_io, wchar),
    offsetof (struct tr_proc_io, syscr),
    offsetof (struct tr_proc_io, syscw),
    offsetof (struct tr_proc_io, read_bytes),
    offsetof (struct tr_proc_io, write_bytes),
    offsetof (struct tr_proc_io, cancelled_write_bytes),
};
#define IO_N (sizeof (io_off) / sizeof (io_off[0]))
#define IOF(io, i) (*(uint64_t *)((char *)(io) + io_off[i]))

static uint64_t max_u64 (uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static void io_add (struct tr_proc_io *a, const struct tr_proc_io *b)
{
    for (size_t i = 0; i < IO_N; i++)
        IOF (a, i) += IOF (b, i);
}

/* A process's own usage (see the top of the file). */
static uint64_t own_cpu_us (const struct proc *p)
{
    return max_u64 (p->s_cpu_us, p->x_cpu_us);
}

/* CPU of reaped children that only the parent's readings show.  Mostly
 * the end of every child's run, which its exit record predates: the
 * kernel's record (taskstats_exit) takes the thread's run time as the
 * scheduler last updated it (se.sum_exec_runtime, brought up to date at
 * a tick, a context switch or a read of the thread's own CPU clock, so
 * up to one tick old), and is sent before do_exit() frees the address
 * space, files and the rest.  The parent's cutime + cstime holds the
 * child's whole run (wait_task_zombie() adds it after the last
 * switch).  Measured on a 250 Hz kernel: /bin/true 1.19 ms, its record
 * 0.23 ms; a 10 ms CPU loop 2.6 ms more than its record; a process that
 * touched 64 MiB 2.4 ms more; about 0.25 ms for one that read its own
 * CPU clock just before exiting.  Also: children that ended before the
 * table knew their parent, whose exit records it could not attribute
 * then and that may have left the window of held events since (a busy
 * node), and the ends of children whose own parent ended unread.
 */
static uint64_t reaped_gap_us (const struct proc *p)
{
    /* against every child it is credited with, whenever it ended: a
     * child reaped after the reading makes the gap smaller, never counts
     * a child twice
     */
    return p->cut_us > p->kids_us ? p->cut_us - p->kids_us : 0;
}

/* The tools of the processes that ended below p, each with its number
 * of ends: the processes its gap (reaped_gap_us) belongs to.
 */
static void below_add (struct proc *p, int tool, uint64_t n)
{
    size_t i;

    if (tool < 0 || n == 0)
        return;
    for (i = 0; i < p->nbelow; i++)
        if (p->below[i].tool == tool) {
            p->below[i].n += n;
            return;
        }
    if (p->nbelow == p->below_cap) {
        size_t cap = p->below_cap ? 2 * p->below_cap : 2;
        struct ends *v = realloc (p->below, cap * sizeof (*v));
        /* out of memory: these ends do not share the gap (it goes to
         * the others, or to p's own row)
         */
        if (!v)
            return;
        p->below = v;
        p->below_cap = cap;
    }
    p->below[p->nbelow++] = (struct ends){ tool, n };
}

/* Share p's reaped gap among the tools of the processes that ended
 * below it, equally per process: the gap is the ends of their runs, one
 * per process, each of about the same size (a tick at most, and the
 * freeing of its memory).  A gap with no process known below it (every
 * child unseen) stays with p's own tool.  fn (tool, us, arg) is called
 * for each share.
 */
static void gap_share (const struct proc *p,
                       void (*fn) (int tool, uint64_t us, void *arg),
                       void *arg)
{
    uint64_t gap = reaped_gap_us (p), n = 0, given = 0;

    if (gap == 0)
        return;
    for (size_t i = 0; i < p->nbelow; i++)
        n += p->below[i].n;
    if (n == 0) {
        if (p->tool >= 0)
            fn (p->tool, gap, arg);
        return;
    }
    for (size_t i = 0; i < p->nbelow; i++) {
        uint64_t us = i + 1 == p->nbelow
                          ? gap - given
                          : (uint64_t)((long double)gap * p->below[i].n / n);
        given += us;
        fn (p->below[i].tool, us, arg);
    }
}

/* The user part of reaped_gap_us(), in the ratio of cutime to cstime. */
static uint64_t reaped_gap_user_us (const struct proc *p)
{
    uint64_t gap = reaped_gap_us (p);

    if (!p->cut_us)
        return 0;
    return (uint64_t)((long double)gap * p->cut_user_us / p->cut_us);
}

/* The user part of own_cpu_us(), from the same source. */
static uint64_t own_user_us (const struct proc *p)
{
    return p->x_cpu_us >= p->s_cpu_us ? p->x_user_us : p->s_user_us;
}

/* Its CPU figure is exact: its exit was seen and every exit record
 * carried the scheduler's run time, not the tick split.
 */
static bool cpu_exact (const struct proc *p)
{
    return p->exact && !p->cpu_tick;
}

static uint64_t own_runq_ns (const struct proc *p)
{
    return max_u64 (p->s_runq_ns, p->x_runq_ns);
}

static uint64_t own_hwm (const struct proc *p)
{
    return max_u64 (p->s_hwm, p->x_hwm);
}

static void own_io (const struct proc *p, struct tr_proc_io *out)
{
    for (size_t i = 0; i < IO_N; i++) {
        uint64_t s = IOF (&p->s_io, i), c = IOF (&p->child_io, i);
        IOF (out, i) = max_u64 (IOF (&p->x_io, i), s > c ? s - c : 0);
    }
}

static void sums_add (struct sums *a, const struct sums *b)
{
    io_add (&a->io, &b->io);
    a->runq_ns += b->runq_ns;
    a->memd_ns += b->memd_ns;
    a->iod_ns += b->iod_ns;
}

/* Unsigned: a - b + c is exact even when a - b wraps. */
static void sums_sub (struct sums *a, const struct sums *b)
{
    for (size_t i = 0; i < IO_N; i++)
        IOF (&a->io, i) -= IOF (&b->io, i);
    a->runq_ns -= b->runq_ns;
    a->memd_ns -= b->memd_ns;
    a->iod_ns -= b->iod_ns;
}

static void proc_sums (const struct proc *p, struct sums *s)
{
    own_io (p, &s->io);
    s->runq_ns = own_runq_ns (p);
    s->memd_ns = p->x_memd_ns;
    s->iod_ns = p->x_iod_ns;
}

/* Bring p's share of P->entry_sums up to date: called after every change
 * to the figures proc_sums() reads (a reading, an exit record, a child's
 * credit).
 */
static void proc_touch (tr_procs_t *P, struct proc *p)
{
    sums_sub (&P->entry_sums, &p->contrib);
    proc_sums (p, &p->contrib);
    sums_add (&P->entry_sums, &p->contrib);
}

static void incl_io (const struct proc *p, struct tr_proc_io *out)
{
    own_io (p, out);
    io_add (out, &p->child_io);
    io_add (out, &p->child_pending);
}

static int64_t realtime_ms (clockid_t clock)
{
    struct timespec ts;

    clock_gettime (clock, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read a small file (fsroot already applied) into buf, NUL-terminated.
 * Returns its length or -1.
 */
static ssize_t read_file (const char *path, char *buf, size_t size)
{
    ssize_t n;
    int fd, saved;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return -1;
    n = tr_fsroot_read_fd (fd, buf, size);
    saved = errno;
    close (fd);
    errno = saved;
    return n;
}

/* Replace what JSON cannot carry (invalid UTF-8) and what a report should
 * not print (control characters) by '?', in place.
 */
static void sanitize (char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t left = strlen (s), n;
    uint32_t cp;

    for (; left; p += n, left -= n)
        if (!(n = tr_utf8_char (p, left, &cp)) || cp < 0x20 || cp == 0x7f) {
            *p = '?';
            n = 1;
        }
}

/* Cut s (valid UTF-8) to at most max bytes on a character boundary,
 * ending in "..." when something was cut and there is room for it.
 */
static void truncate_utf8 (char *s, size_t max)
{
    size_t len = strlen (s), cut;

    if (len <= max)
        return;
    cut = max >= 16 ? max - 3 : max;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    if (max >= 16) {
        memcpy (s + cut, "...", 4);
        return;
    }
    s[cut] = '\0';
}

/* Apply one pattern.  Where it has parenthesized parts, the last part
 * that matched is the secret ("password=(...)" keeps "password="); else
 * the whole match is.  Each non-empty secret becomes "***".
 */
static int redact_one (const regex_t *re, tr_strbuf_t *out, const char *in)
{
    const char *p = in;
    regmatch_t m[10];
    size_t nsub = re->re_nsub < 9 ? re->re_nsub : 9;
    int flags = 0;

    tr_strbuf_reset (out);
    if (tr_strbuf_puts (out, "") < 0)
        return -1;
    while (*p && regexec (re, p, nsub + 1, m, flags) == 0) {
        regmatch_t s = m[0];
        for (size_t i = nsub; i >= 1; i--)
            if (m[i].rm_so >= 0) {
                s = m[i];
                break;
            }
        if (m[0].rm_eo == m[0].rm_so) {
            /* an empty match redacts nothing: step over one byte */
            if (tr_strbuf_append (out, p, (size_t)m[0].rm_so + 1) < 0)
                return -1;
            p += m[0].rm_so + 1;
        }
        else {
            if (tr_strbuf_append (out, p, (size_t)s.rm_so) < 0
                || (s.rm_eo > s.rm_so && tr_strbuf_puts (out, "***") < 0)
                || tr_strbuf_append (out, p + s.rm_eo,
                                     (size_t)(m[0].rm_eo - s.rm_eo)) < 0)
                return -1;
            p += m[0].rm_eo;
        }
        flags = REG_NOTBOL;
    }
    return tr_strbuf_puts (out, p);
}

/* The displayable command line of raw /proc/PID/cmdline bytes: arguments
 * joined by spaces, sanitized, redacted, truncated.  Returns NULL for an
 * empty command line (kernel threads, zombies) or on ENOMEM.
 */
static char *cmdline_render (tr_procs_t *P, char *raw, size_t len)
{
    tr_strbuf_t a = TR_STRBUF_INIT, b = TR_STRBUF_INIT;
    char *res;

    for (size_t i = 0; i < len; i++)
        if (raw[i] == '\0')
            raw[i] = ' ';
    while (len > 0 && raw[len - 1] == ' ')
        len--;
    raw[len] = '\0';
    if (len == 0)
        return NULL;
    sanitize (raw);
    if (tr_strbuf_puts (&a, raw) < 0)
        goto nomem;
    for (size_t i = 0; i < P->nre; i++) {
        tr_strbuf_t t;
        if (redact_one (&P->re[i], &b, tr_strbuf_str (&a)) < 0)
            goto nomem;
        t = a;
        a = b;
        b = t;
    }
    if (!(res = tr_strbuf_steal (&a)))
        goto nomem;
    tr_strbuf_free (&b);
    truncate_utf8 (res, P->cmdline_max);
    return res;
nomem:
    tr_strbuf_free (&a);
    tr_strbuf_free (&b);
    return NULL;
}

/* tools */

static unsigned name_hash (const char *s)
{
    uint32_t h = 2166136261u;

    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h & 255;
}

static int tool_new (tr_procs_t *P, const char *name, bool overflow)
{
    struct tool *t;
    unsigned h = name_hash (name);

    if (P->ntools == P->tcap) {
        size_t nc = P->tcap ? P->tcap * 2 : 16;
        void *n = realloc (P->tools, nc * sizeof (*P->tools));
        if (!n)
            return -1;
        P->tools = n;
        P->tcap = nc;
    }
    t = &P->tools[P->ntools];
    memset (t, 0, sizeof (*t));
    if (!(t->name = strdup (name)))
        return -1;
    t->overflow = overflow;
    t->hnext = overflow ? -1 : P->thash[h];
    if (!overflow)
        P->thash[h] = (int)P->ntools;
    return (int)P->ntools++;
}

/* The tool for a name (sanitized, not empty), created when new.  Returns
 * its index, or -1 with errno = ENOMEM.
 */
static int tool_get (tr_procs_t *P, const char *name)
{
    for (int i = P->thash[name_hash (name)]; i >= 0; i = P->tools[i].hnext)
        if (!strcmp (P->tools[i].name, name))
            return i;
    if (P->ntools >= TOOLS_HARD_MAX) {
        if (P->overflow < 0)
            P->overflow = tool_new (P, OTHER_NAME, true);
        return P->overflow;
    }
    return tool_new (P, name, false);
}

/* The tool of an executable, or -1; *prog (may be NULL) gets the program
 * name of one named from its arguments (tool -1 then).
 */
static int exe_find (tr_procs_t *P, uint64_t dev, uint64_t ino,
                     const char **prog)
{
    if (prog)
        *prog = NULL;
    for (size_t i = 0; i < P->nexe; i++)
        if (P->exe[i].ino == ino && P->exe[i].dev == dev) {
            if (prog)
                *prog = P->exe[i].prog;
            return P->exe[i].tool;
        }
    return -1;
}

static void exe_add (tr_procs_t *P, uint64_t dev, uint64_t ino, int tool,
                     const char *prog)
{
    if (ino == 0 || P->nexe >= EXEMAP_MAX)
        return;
    for (size_t i = 0; i < P->nexe; i++)
        if (P->exe[i].ino == ino && P->exe[i].dev == dev)
            return;
    if (P->nexe == P->exe_cap) {
        /* grown as executables come: most steps run a handful */
        size_t cap = P->exe_cap ? P->exe_cap * 2 : 8;
        struct exemap *n = realloc (P->exe, cap * sizeof (*n));
        if (!n)
            return; /* a cache: doing without is fine */
        P->exe = n;
        P->exe_cap = cap;
    }
    P->exe[P->nexe].prog = NULL;
    if (prog && !(P->exe[P->nexe].prog = strdup (prog)))
        return;
    P->exe[P->nexe].dev = dev;
    P->exe[P->nexe].ino = ino;
    P->exe[P->nexe].tool = prog ? -1 : tool;
    P->nexe++;
}

static int codemap_add (struct codemap *m, int key, uint64_t n)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].key == key) {
            m->v[i].n += n;
            return 0;
        }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4;
        void *v = realloc (m->v, nc * sizeof (*m->v));
        if (!v)
            return -1;
        m->v = v;
        m->cap = nc;
    }
    m->v[m->n].key = key;
    m->v[m->n].n = n;
    m->n++;
    return 0;
}

static void tool_assign (tr_procs_t *P, struct proc *p, int tool)
{
    struct tool *t;

    if (p->tool == tool)
        return;
    if (p->tool >= 0)
        P->tools[p->tool].count--;
    p->tool = tool;
    t = &P->tools[tool];
    t->count++;
    if (p->start_ms > 0 && (!t->first_start_ms || p->start_ms
                                                      < t->first_start_ms))
        t->first_start_ms = p->start_ms;
}

/* process entries */

static size_t pid_slot (tr_procs_t *P, pid_t pid)
{
    return ((size_t)pid * 2654435761u) & (P->hsize - 1);
}

static int hash_grow (tr_procs_t *P)
{
    size_t nsize = P->hsize * 2;
    struct proc **nh = calloc (nsize, sizeof (*nh));
    struct proc **old = P->hash;
    size_t osize = P->hsize;

    if (!nh)
        return -1;
    P->hash = nh;
    P->hsize = nsize;
    for (size_t i = 0; i < osize; i++) {
        struct proc *p = old[i], *next;
        for (; p; p = next) {
            size_t s = pid_slot (P, p->pid);
            next = p->hnext;
            p->hnext = nh[s];
            nh[s] = p;
        }
    }
    free (old);
    return 0;
}

static void hash_remove (tr_procs_t *P, struct proc *p)
{
    struct proc **pp = &P->hash[pid_slot (P, p->pid)];

    while (*pp && *pp != p)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = p->hnext;
        P->hcount--;
    }
}

static struct proc *find_live (tr_procs_t *P, pid_t pid)
{
    for (struct proc *p = P->hash[pid_slot (P, pid)]; p; p = p->hnext)
        if (p->pid == pid && p->live)
            return p;
    return NULL;
}

static int64_t diff_ms (int64_t a, int64_t b)
{
    return a > b ? a - b : b - a;
}

/* The entry of process (pid, started at start_ms), live or ended. */
static struct proc *find_proc (tr_procs_t *P, pid_t pid, int64_t start_ms)
{
    struct proc *best = NULL;

    for (struct proc *p = P->hash[pid_slot (P, pid)]; p; p = p->hnext) {
        if (p->pid != pid || diff_ms (p->start_ms, start_ms) > START_TOL_MS)
            continue;
        if (p->live)
            return p;
        if (!best || diff_ms (p->start_ms, start_ms)
                         < diff_ms (best->start_ms, start_ms))
            best = p;
    }
    return best;
}

static bool is_root (tr_procs_t *P, pid_t pid)
{
    for (size_t i = 0; i < P->nroots; i++)
        if (P->roots[i] == pid)
            return true;
    return false;
}

/* Whether pid, as the parent of a process started at child_start_ms, is
 * a process of the step: an entry alive at that time, or a root pid of
 * which no entry tells otherwise.
 */
static bool is_parent (tr_procs_t *P, pid_t pid, int64_t child_start_ms)
{
    bool any = false;

    if (pid <= 0)
        return false;
    for (struct proc *p = P->hash[pid_slot (P, pid)]; p; p = p->hnext) {
        if (p->pid != pid)
            continue;
        any = true;
        if (p->start_ms <= child_start_ms + START_TOL_MS
            && (p->live || p->end_ms + START_TOL_MS >= child_start_ms))
            return true;
    }
    return !any && is_root (P, pid);
}

static struct proc *proc_new (tr_procs_t *P, pid_t pid, int64_t start_ms)
{
    struct proc *p;
    size_t s;

    if (P->hcount >= P->hsize && hash_grow (P) < 0)
        return NULL;
    if (!(p = calloc (1, sizeof (*p))))
        return NULL;
    p->pid = pid;
    p->tool = -1;
    p->start_ms = start_ms;
    p->live = true;
    s = pid_slot (P, pid);
    p->hnext = P->hash[s];
    P->hash[s] = p;
    P->hcount++;
    p->lnext = P->live;
    if (P->live)
        P->live->lprev = p;
    P->live = p;
    P->nlive++;
    P->nseen++;
    return p;
}

static void live_unlink (tr_procs_t *P, struct proc *p)
{
    if (p->lprev)
        p->lprev->lnext = p->lnext;
    else
        P->live = p->lnext;
    if (p->lnext)
        p->lnext->lprev = p->lprev;
    p->lprev = p->lnext = NULL;
    P->nlive--;
}

static void fold_gap (int tool, uint64_t us, void *arg)
{
    tr_procs_t *P = arg;

    P->tools[tool].f_cpu_us += us;
}

/* Fold an ended entry into its tool's sums and free it. */
static void fold (tr_procs_t *P, struct proc *p)
{
    struct tool *t = &P->tools[p->tool];
    struct tr_proc_io io;

    t->f_cpu_us += own_cpu_us (p);
    t->f_runq_ns += own_runq_ns (p);
    t->f_peak = max_u64 (t->f_peak, own_hwm (p));
    own_io (p, &io);
    io_add (&t->f_io, &io);
    if (p->end_ms > t->f_last_end_ms)
        t->f_last_end_ms = p->end_ms;
    if (!cpu_exact (p))
        t->f_inexact++;
    if (!p->exact)
        P->f_inexact++;
    gap_share (p, fold_gap, P);
    P->f_cpu_us += own_cpu_us (p) + reaped_gap_us (p);
    P->f_user_us += own_user_us (p) + reaped_gap_user_us (p);
    if (!cpu_exact (p))
        P->f_cpu_inexact++;
    P->f_memd_ns += p->x_memd_ns;
    P->f_iod_ns += p->x_iod_ns;
    sums_sub (&P->entry_sums, &p->contrib);
    hash_remove (P, p);
    free (p->below);
    free (p);
}

/* A process's CPU with that of the children it reaped, as its parent's
 * cutime + cstime will hold it.
 */
static uint64_t incl_cpu_us (const struct proc *p)
{
    return own_cpu_us (p) + p->kids_us + reaped_gap_us (p);
}

/* Credit a child's inclusive CPU to its parent (the growth since the
 * last credit).
 */
static void credit_cpu (struct proc *par, struct proc *c)
{
    uint64_t incl = incl_cpu_us (c);

    if (incl <= c->cpu_credit)
        return;
    par->kids_us += incl - c->cpu_credit;
    c->cpu_credit = incl;
}

/* Credit a child's inclusive I/O to its parent, or the growth since the
 * last credit when the child's readings changed (a late exit event).  A
 * parent reading taken after the child's end holds it (a scan finds a
 * child ended when it is gone, so reaped, before the scan); otherwise it
 * is held until the parent's next reading.
 */
static void credit_parent (tr_procs_t *P, struct proc *c)
{
    struct tr_proc_io incl, *dst;
    struct proc *par = NULL;

    for (struct proc *p = P->hash[pid_slot (P, c->ppid)]; p; p = p->hnext)
        if (p->pid == c->ppid && p != c
            && p->start_ms <= c->start_ms + START_TOL_MS
            && (p->live || p->end_ms + START_TOL_MS >= c->end_ms)) {
            par = p;
            break;
        }
    if (!par)
        return;
    if (!c->credited) {
        /* c and the processes that ended below it */
        below_add (par, c->tool, 1);
        for (size_t i = 0; i < c->nbelow; i++)
            below_add (par, c->below[i].tool, c->below[i].n);
    }
    credit_cpu (par, c);
    if (par->live)
        par->reaped = true;
    incl_io (c, &incl);
    dst = par->io_gen >= c->end_gen ? &par->child_io : &par->child_pending;
    for (size_t i = 0; i < IO_N; i++) {
        uint64_t now = IOF (&incl, i), was = IOF (&c->credit, i);
        if (now > was)
            IOF (dst, i) += now - was;
    }
    c->credit = incl;
    c->credited = true;
    proc_touch (P, par);
}

/* A live process ended (scan or exit event). */
static void proc_end (tr_procs_t *P, struct proc *p, int64_t end_ms)
{
    size_t slot;

    live_unlink (P, p);
    p->live = false;
    p->end_ms = end_ms;
    /* a scan sees an end before its readings; an exit event, before the
     * next scan's
     */
    p->end_gen = P->scanning ? P->gen : P->gen + 1;
    credit_parent (P, p);
    if (P->rcount == ENDED_MAX) {
        struct proc *old = P->ring[P->rhead];
        if (old)
            fold (P, old);
        P->ring[P->rhead] = NULL;
        P->rhead = (P->rhead + 1) % ENDED_MAX;
        P->rcount--;
    }
    slot = (P->rhead + P->rcount) % ENDED_MAX;
    P->ring[slot] = p;
    p->slot = slot;
    P->rcount++;
}

/* An ended (not exact) entry seen running again: the caller's pid list
 * had missed it.  It becomes live; its ring slot is left empty.
 */
static void proc_revive (tr_procs_t *P, struct proc *p)
{
    P->ring[p->slot] = NULL;
    p->live = true;
    p->end_ms = 0;
    p->lprev = NULL;
    p->lnext = P->live;
    if (P->live)
        P->live->lprev = p;
    P->live = p;
    P->nlive++;
}

/* The entry of the parent ppid of a process started at child_start_ms,
 * or NULL.
 */
static struct proc *find_parent (tr_procs_t *P, pid_t ppid,
                                 int64_t child_start_ms)
{
    struct proc *best = NULL;

    if (ppid <= 0)
        return NULL;
    for (struct proc *q = P->hash[pid_slot (P, ppid)]; q; q = q->hnext) {
        if (q->pid != ppid || q->start_ms > child_start_ms + START_TOL_MS)
            continue;
        if (q->live)
            return q;
        if (q->end_ms + START_TOL_MS >= child_start_ms
            && (!best || q->start_ms > best->start_ms))
            best = q;
    }
    return best;
}

/* Keep a failing exit (the first FAILS_MAX) with its parent chain. */
static void record_failure (tr_procs_t *P, struct proc *p, int status,
                            int64_t end_ms)
{
    struct failure *f;
    pid_t ppid = p->ppid;
    int64_t start = p->start_ms;

    if ((WIFEXITED (status) && WEXITSTATUS (status) == 0)
        || (!WIFEXITED (status) && !WIFSIGNALED (status))
        || P->nfails >= FAILS_MAX)
        return;
    if (!P->fails && !(P->fails = calloc (FAILS_MAX, sizeof (*P->fails))))
        return; /* no culprit is named: the step's exit still says */
    f = &P->fails[P->nfails++];
    memset (f, 0, sizeof (*f));
    f->pid = p->pid;
    f->tool = p->tool;
    memcpy (f->renamed, p->renamed, sizeof (f->renamed));
    memcpy (f->comm, p->comm, sizeof (f->comm));
    f->comm[sizeof (f->comm) - 1] = '\0';
    f->status = status;
    f->end_ms = end_ms;
    if (is_root (P, p->pid))
        return; /* a task: the chain ends here */
    while (f->nchain < CHAIN_MAX && ppid > 0) {
        struct proc *q = find_parent (P, ppid, start);
        f->chain[f->nchain].pid = ppid;
        f->chain[f->nchain].tool = q ? q->tool : -1;
        f->nchain++;
        if (!q || is_root (P, ppid))
            break;
        ppid = q->ppid;
        start = q->start_ms;
    }
}

static void record_status (tr_procs_t *P, struct proc *p, int status)
{
    struct tool *t = &P->tools[p->tool];

    p->status = status;
    p->have_status = true;
    /* a failed insert loses one count in a map, not the process */
    if (WIFEXITED (status))
        (void)codemap_add (&t->codes, WEXITSTATUS (status), 1);
    else if (WIFSIGNALED (status))
        (void)codemap_add (&t->sigs, WTERMSIG (status), 1);
}

/* /proc reading */

struct pstat {
    char comm[COMM_BYTES];
    char state;
    pid_t ppid;
    uint64_t flags; /* PF_* */
    uint64_t utime, stime, start_ticks;
    uint64_t nthreads, rss;
    uint64_t cutime, cstime; /* reaped children's */
};

/* Parse /proc/PID/stat.  The comm field may hold spaces and ')', so the
 * fields are counted from the last ')'.
 */
static int parse_stat (char *buf, struct pstat *st)
{
    char *open = strchr (buf, '('), *close = strrchr (buf, ')'), *p, *end;
    uint64_t v[21];
    size_t len;
    int i;

    if (!open || !close || close < open || close[1] != ' ')
        return -1;
    len = (size_t)(close - open - 1);
    if (len >= sizeof (st->comm))
        len = sizeof (st->comm) - 1;
    memcpy (st->comm, open + 1, len);
    st->comm[len] = '\0';
    sanitize (st->comm);
    /* field 3 is the state letter; fields 4..24 are numbers */
    p = close + 2;
    if (!*p || *p == ' ')
        return -1;
    st->state = *p++;
    for (i = 0; i < 21; i++) {
        long long sv;
        errno = 0;
        sv = strtoll (p, &end, 10);
        if (errno || end == p)
            return -1;
        /* tpgid, priority and nice may be negative; the pid, counters
         * and sizes kept below never are, and a negative one would wrap
         * to a huge unsigned figure
         */
        if (sv < 0
            && (i == 0 || i == 10 || i == 11 || i == 16 || i == 18 || i == 20))
            return -1;
        v[i] = (uint64_t)sv;
        p = end;
    }
    st->ppid = (pid_t)v[0];      /* field 4 */
    st->flags = v[5];            /* field 9 */
    st->utime = v[10];           /* field 14 */
    st->stime = v[11];           /* field 15 */
    /* fields 16, 17 (clock_t, signed): a negative one counts as 0 */
    st->cutime = (int64_t)v[12] < 0 ? 0 : v[12];
    st->cstime = (int64_t)v[13] < 0 ? 0 : v[13];
    st->nthreads = v[16];        /* field 20 */
    st->start_ticks = v[18];     /* field 22 */
    st->rss = v[20];             /* field 24, pages */
    return 0;
}

static int read_stat (const char *base, size_t blen, char *path,
                      struct pstat *st)
{
    char buf[1024];

    memcpy (path, base, blen);
    memcpy (path + blen, "/stat", 6);
    if (read_file (path, buf, sizeof (buf)) <= 0)
        return -1;
    return parse_stat (buf, st);
}

/* An unsigned decimal at p after blanks, as strtoull reads one, but
 * without the sign strtoull also takes ("-1" would read as 2^64 - 1).
 * Returns 0 with *endp after it, or -1.
 */
static int parse_count (const char *p, char **endp, uint64_t *value)
{
    unsigned long long v;

    while (*p == ' ' || *p == '\t')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    v = strtoull (p, endp, 10);
    if (errno)
        return -1;
    *value = (uint64_t)v;
    return 0;
}

/* The value of "key" in a "key: value" or "key value" file, or -1. */
static int find_key (const char *buf, const char *key, uint64_t *value)
{
    size_t klen = strlen (key);
    const char *p = buf;

    while (p && *p) {
        if (!strncmp (p, key, klen)) {
            char *end;
            return parse_count (p + klen, &end, value);
        }
        if ((p = strchr (p, '\n')))
            p++;
    }
    return -1;
}

static void read_status (struct proc *p, const char *base, size_t blen,
                         char *path)
{
    char buf[4096];
    uint64_t kb;

    memcpy (path, base, blen);
    memcpy (path + blen, "/status", 8);
    if (read_file (path, buf, sizeof (buf)) > 0
        && find_key (buf, "VmHWM:", &kb) == 0)
        p->s_hwm = max_u64 (p->s_hwm, kb * 1024);
}

/* Returns whether the file was read. */
static bool read_io (struct proc *p, const char *base, size_t blen, char *path)
{
    static const char *const keys[IO_N] = {
        "rchar:",  "wchar:",       "syscr:",
        "syscw:",  "read_bytes:",  "write_bytes:",
        "cancelled_write_bytes:",
    };
    char buf[1024];
    uint64_t v[IO_N];

    memcpy (path, base, blen);
    memcpy (path + blen, "/io", 4);
    /* Unreadable (another user's process without ptrace access) or empty:
     * the last readings stand.
     */
    if (read_file (path, buf, sizeof (buf)) <= 0)
        return false;
    for (size_t i = 0; i < IO_N; i++)
        if (find_key (buf, keys[i], &v[i]) < 0)
            return false;
    for (size_t i = 0; i < IO_N; i++)
        IOF (&p->s_io, i) = max_u64 (IOF (&p->s_io, i), v[i]);
    return true;
}

/* run_delay, the second field of a schedstat file, or -1. */
static int schedstat_delay (const char *path, uint64_t *ns)
{
    char buf[128], *p, *end;

    uint64_t on_cpu;

    if (read_file (path, buf, sizeof (buf)) <= 0)
        return -1;
    if (parse_count (buf, &p, &on_cpu) < 0)
        return -1;
    return parse_count (p, &end, ns);
}

/* /proc/PID/schedstat is the main thread's alone; a process with more
 * threads sums task/TID/schedstat.  Exited threads' waits are gone from
 * /proc, so the sampled sum is a lower bound (exit records complete it).
 */
static void read_runq (struct proc *p, uint64_t nthreads, const char *base,
                       size_t blen, char *path)
{
    uint64_t sum = 0, ns;
    DIR *d = NULL;

    if (nthreads > 1) {
        memcpy (path, base, blen);
        memcpy (path + blen, "/task", 6);
        d = opendir (path);
    }
    if (d) {
        struct dirent *de;
        size_t n = 0;
        while ((de = readdir (d)) && n < THREADS_READ_MAX) {
            if (de->d_name[0] < '0' || de->d_name[0] > '9')
                continue;
            if (snprintf (path + blen, PATH_MAX - blen, "/task/%s/schedstat",
                          de->d_name)
                    >= (int)(PATH_MAX - blen)
                || schedstat_delay (path, &ns) < 0)
                continue;
            sum += ns;
            n++;
        }
        closedir (d);
    }
    else {
        memcpy (path, base, blen);
        memcpy (path + blen, "/schedstat", 11);
        if (schedstat_delay (path, &ns) == 0)
            sum = ns;
    }
    p->s_runq_ns = max_u64 (p->s_runq_ns, sum);
}

/* The arguments of a raw /proc/PID/cmdline (NUL-separated, len bytes,
 * raw[len] readable) into argv (at most ARGV_MAX).  Returns their count.
 */
static size_t split_argv (char *raw, size_t len, const char **argv)
{
    size_t n = 0;

    raw[len] = '\0';
    for (size_t i = 0; i < len && n < ARGV_MAX; n++) {
        argv[n] = raw + i;
        i += strlen (raw + i) + 1;
    }
    return n;
}

/* The tool name of a program (sanitized, not empty) given the process's
 * comm and arguments (argv NULL: unknown), by the rule table, into name
 * (NAME_MAX_BYTES + 1).
 */
static void rule_name (tr_procs_t *P, const char *prog, const char *comm,
                       const char *const *argv, size_t argc, char *name)
{
    tr_tools_name (&P->site, prog, comm, argv, argc, name, NAME_MAX_BYTES + 1);
    sanitize (name); /* a program name cut in two */
    if (!name[0])
        snprintf (name, NAME_MAX_BYTES + 1, "?");
}

/* The tool of a program, as rule_name names it.  Returns the tool or -1
 * (ENOMEM).
 */
static int tool_named (tr_procs_t *P, const char *prog, const char *comm,
                       const char *const *argv, size_t argc)
{
    char name[NAME_MAX_BYTES + 1];

    rule_name (P, prog, comm, argv, argc, name);
    return tool_get (P, name);
}

/* The executable of the process at base (blen bytes; path is scratch of
 * PATH_MAX): its base name (" (deleted)" taken off) into link, which
 * *bn then points into (NULL: unknown), and its (dev, inode) into *sb
 * (false: unknown).
 */
static bool read_exe (const char *base, size_t blen, char *path,
                      char link[PATH_MAX], const char **bn, struct stat *sb)
{
    const char *del = " (deleted)";
    size_t dl = strlen (del);
    ssize_t n;

    *bn = NULL;
    memcpy (path, base, blen);
    memcpy (path + blen, "/exe", 5);
    if ((n = readlink (path, link, PATH_MAX - 1)) <= 0)
        return false;
    link[n] = '\0';
    if ((size_t)n > dl && !strcmp (link + n - dl, del))
        link[n - dl] = '\0';
    *bn = strrchr (link, '/') ? strrchr (link, '/') + 1 : link;
    return stat (path, sb) == 0;
}

/* How the process at base (path: scratch) is named: prog gets its
 * program (the executable's base name, else comm; sanitized), name its
 * tool by the rule table (for a program the table names from its
 * arguments, from its command line, which is then left in *raw,
 * malloc'd, *got bytes; else *raw is NULL), *dev and *ino its
 * executable (0: unknown).  Returns whether the table names prog from
 * its arguments.
 */
static bool name_process (tr_procs_t *P, const char *comm, const char *base,
                          size_t blen, char *path, char *prog, char *name,
                          char **raw, ssize_t *got, uint64_t *dev,
                          uint64_t *ino)
{
    char link[PATH_MAX];
    const char *bn, *src;
    struct stat sb;
    size_t len;
    bool ruled;

    *raw = NULL;
    *got = -1;
    if (read_exe (base, blen, path, link, &bn, &sb)) {
        *dev = (uint64_t)sb.st_dev;
        *ino = (uint64_t)sb.st_ino;
    }
    else
        *dev = *ino = 0;
    src = bn && *bn ? bn : comm;
    len = strnlen (src, NAME_MAX_BYTES);
    memcpy (prog, src, len);
    prog[len] = '\0';
    sanitize (prog); /* also a character cut in two */
    if (!prog[0])
        snprintf (prog, NAME_MAX_BYTES + 1, "?");
    if (!(ruled = tr_tools_ruled (&P->site, prog))) {
        snprintf (name, NAME_MAX_BYTES + 1, "%s", prog);
        return false;
    }
    /* the command line is read once: for the name and the tool's row */
    if ((*raw = malloc (CMDLINE_READ_MAX + 1))) {
        memcpy (path + blen, "/cmdline", 9);
        *got = read_file (path, *raw, CMDLINE_READ_MAX);
    }
    {
        const char *argv[ARGV_MAX];
        size_t argc = *got > 0 ? split_argv (*raw, (size_t)*got, argv) : 0;
        rule_name (P, prog, comm, argc ? argv : NULL, argc, name);
    }
    return true;
}

/* Name a process (name_process) and, for a tool without one yet, keep
 * its command line.  Returns the tool or -1 (ENOMEM).
 */
static int read_identity (tr_procs_t *P, const char *comm, const char *base,
                          size_t blen, char *path, uint64_t *dev,
                          uint64_t *ino)
{
    char prog[NAME_MAX_BYTES + 1], name[NAME_MAX_BYTES + 1];
    char *raw;
    ssize_t got;
    bool ruled = name_process (P, comm, base, blen, path, prog, name, &raw,
                               &got, dev, ino);
    int tool = tool_get (P, name);

    if (tool < 0) {
        free (raw);
        return -1;
    }
    if (*ino)
        exe_add (P, *dev, *ino, tool, ruled ? prog : NULL);
    if (!P->tools[tool].cmdline && !P->tools[tool].overflow) {
        if (!raw && (raw = malloc (CMDLINE_READ_MAX + 1))) {
            memcpy (path + blen, "/cmdline", 9);
            got = read_file (path, raw, CMDLINE_READ_MAX);
        }
        if (raw && got > 0)
            P->tools[tool].cmdline = cmdline_render (P, raw, (size_t)got);
    }
    free (raw);
    return tool;
}

/* What the process of an exit event was at its exec (execs.h), or
 * NULL: the same process (pid and start), not known to run another
 * executable.  Executables are compared only on one device: on an
 * overlay file system (a container's root, a diskless node's) stat()
 * gives the overlay's device and inode, the kernel's exit record the
 * layer's.
 */
static const struct tr_exec_id *exec_of (tr_procs_t *P,
                                         const struct tr_exit *ev)
{
    const struct tr_exec_id *x;

    if (!P->execs
        || !(x = tr_execs_find (P->execs, ev->tgid, ev->group_start_unix_ms)))
        return NULL;
    if (ev->exe_ino && x->exe_ino && x->exe_dev == ev->exe_dev
        && x->exe_ino != ev->exe_ino)
        return NULL;
    return x;
}

/* The tool of a process known from its exit event: its executable's (a
 * program named from its arguments: by the rule table from the program
 * and the event's comm), else the comm's.  name is the sanitized comm.
 * Returns the tool, or -1 (ENOMEM; errno 0: no name).
 */
static int exit_tool (tr_procs_t *P, const struct tr_exit *ev,
                      const char *name)
{
    const struct tr_exec_id *x = exec_of (P, ev);
    const char *prog = NULL;
    int tool;

    /* as it was at its exec: its executable and arguments */
    if (x) {
        char n[NAME_MAX_BYTES + 1];
        snprintf (n, sizeof (n), "%s", x->tool);
        sanitize (n);
        return tool_get (P, n[0] ? n : "?");
    }
    tool = ev->exe_ino ? exe_find (P, ev->exe_dev, ev->exe_ino, &prog) : -1;
    if (tool >= 0)
        return tool;
    if (prog)
        return tool_named (P, prog, name, NULL, 0);
    if (!name[0]) {
        errno = 0;
        return -1;
    }
    /* a comm alone names itself: without arguments no rule adds a word */
    return tool_get (P, name);
}

static void boot_time (tr_procs_t *P)
{
    char path[PATH_MAX], buf[8192];
    uint64_t btime;

    if (tr_fsroot ()[0] && tr_fsroot_path (path, sizeof (path), "/proc/stat")
                               == 0
        && read_file (path, buf, sizeof (buf)) > 0) {
        const char *l = strstr (buf, "\nbtime ");
        char *end;
        /* seconds since the epoch, never more than int64 ms can hold */
        if (l && parse_count (l + 7, &end, &btime) == 0
            && btime < (uint64_t)INT64_MAX / 1000) {
            P->boot_ms = (int64_t)btime * 1000;
            return;
        }
    }
    /* /proc/stat's btime is whole seconds; the clocks give milliseconds */
    P->boot_ms = realtime_ms (CLOCK_REALTIME) - realtime_ms (CLOCK_BOOTTIME);
}

/* Fix the time base once: the boot time against which start ticks are
 * read, and where the wall clock stood against the boot clock then.
 */
static void time_base (tr_procs_t *P)
{
    if (P->boot_ms != 0)
        return;
    boot_time (P);
    P->clock_boot_ms
        = realtime_ms (CLOCK_REALTIME) - realtime_ms (CLOCK_BOOTTIME);
}

/* How far the wall clock has been stepped since the time base was fixed,
 * taken the other way: add it to a wall-clock time of now to put it on
 * the base of the start times.  NTP's slewing moves the boot clock with
 * the wall clock, so only a step (ntpd steps above 0.128 s, or a date
 * set by hand) shows here; without this, a process that ends after a
 * step back would end before it started.  Differences of less than
 * 0.1 s are rounding.
 */
#define CLOCK_STEP_MS 100

static int64_t clock_shift (tr_procs_t *P)
{
    int64_t d;

    if (P->boot_ms == 0)
        return 0;
    d = P->clock_boot_ms
        - (realtime_ms (CLOCK_REALTIME) - realtime_ms (CLOCK_BOOTTIME));
    return d > -CLOCK_STEP_MS && d < CLOCK_STEP_MS ? 0 : d;
}

static int64_t ticks_ms (tr_procs_t *P, uint64_t ticks)
{
    return P->boot_ms + (int64_t)(ticks * 1000 / (uint64_t)P->hz);
}

static int resolve_pending (tr_procs_t *P);

/* Read one pid.  Returns 1 if read, 0 if gone, -1 on ENOMEM. */
static int scan_one (tr_procs_t *P, pid_t pid, int64_t now_ms, bool *created)
{
    char base[PATH_MAX], path[PATH_MAX], rel[64];
    struct pstat st;
    struct proc *p;
    size_t blen;
    int64_t start_ms;

    snprintf (rel, sizeof (rel), "/proc/%ld", (long)pid);
    if (tr_fsroot_path (base, sizeof (base), rel) < 0)
        return 0;
    blen = strlen (base);
    if (blen + 64 >= sizeof (base) || read_stat (base, blen, path, &st) < 0)
        return 0; /* vanished, or not a process */
    /* A zombie has ended: its exit record or the end of scans covers it.
     * So has one in do_exit that is not a zombie yet: the kernel sends
     * its exit record first (taskstats_exit, then exit_notify), and on
     * a busy node the record can be counted before the task turns Z.
     * (A leader that exited before its threads shows Z with threads.)
     */
    if ((st.state == 'Z' || st.state == 'X' || (st.flags & PF_EXITING_FLAG))
        && st.nthreads <= 1)
        return 0;
    start_ms = ticks_ms (P, st.start_ticks);
    if ((p = find_live (P, pid))) {
        bool same = p->scanned
                        ? p->start_ticks == st.start_ticks
                        : diff_ms (p->start_ms, start_ms) <= START_TOL_MS;
        if (!same) {
            proc_end (P, p, now_ms); /* the pid was reused */
            p = NULL;
        }
    }
    if (!p) {
        for (struct proc *q = P->hash[pid_slot (P, pid)]; q; q = q->hnext) {
            if (q->pid != pid
                || (q->scanned ? q->start_ticks != st.start_ticks
                               : diff_ms (q->start_ms, start_ms)
                                     > START_TOL_MS))
                continue;
            /* Its exit record is in: it is on its way out (a leader
             * whose last threads are still being released), not a new
             * process to count again.
             */
            if (q->exact)
                return 0;
            if (q->scanned) {
                proc_revive (P, q);
                p = q;
                break;
            }
        }
    }
    if (!p || !p->scanned || strcmp (p->comm, st.comm)) {
        /* new, known only from exit records so far, or exec'd since
         * (the kernel sets comm from the new program's name)
         */
        uint64_t dev, ino;
        int tool = read_identity (P, st.comm, base, blen, path, &dev, &ino);
        if (tool < 0)
            return -1;
        if (!p) {
            if (!(p = proc_new (P, pid, start_ms)))
                return -1;
            *created = true;
        }
        p->exe_dev = dev;
        p->exe_ino = ino;
        tool_assign (P, p, tool);
        p->scanned = true;
        p->start_ticks = st.start_ticks;
        p->start_ms = start_ms;
        memcpy (p->comm, st.comm, sizeof (p->comm));
    }
    p->ppid = st.ppid;
    p->seen_gen = P->gen;
    p->s_rss = st.rss;
    p->reaped = false;
    {
        /* the children it has reaped by now */
        uint64_t cut = (st.cutime + st.cstime) * 1000000 / (uint64_t)P->hz;
        if (cut >= p->cut_us) {
            p->cut_us = cut;
            p->cut_user_us = st.cutime * 1000000 / (uint64_t)P->hz;
        }
    }
    {
        /* the reading only grows; its user part goes with it */
        uint64_t cpu = (st.utime + st.stime) * 1000000 / (uint64_t)P->hz;
        if (cpu >= p->s_cpu_us) {
            p->s_cpu_us = cpu;
            p->s_user_us = st.utime * 1000000 / (uint64_t)P->hz;
        }
    }
    read_status (p, base, blen, path);
    if (read_io (p, base, blen, path)) {
        /* children that ended before this reading are in it */
        p->io_gen = P->gen;
        io_add (&p->child_io, &p->child_pending);
        memset (&p->child_pending, 0, sizeof (p->child_pending));
    }
    read_runq (p, st.nthreads, base, blen, path);
    proc_touch (P, p);
    return 1;
}

/* Read pids[] (all, or the new ones and `budget` known ones), end the
 * live processes not among them, and copy the pids still running to
 * alive[] (which may be pids itself).
 */
static int scan_list (tr_procs_t *P,
                      const pid_t *pids,
                      size_t n,
                      size_t budget,
                      int64_t now_ms,
                      pid_t *alive,
                      size_t *nalive)
{
    struct proc *p, *next;
    bool created = false;
    size_t first = n ? P->rr % n : 0, keep = 0;
    int count = 0;

    if (!P || (n && !pids)) {
        errno = EINVAL;
        return -1;
    }
    time_base (P);
    now_ms += clock_shift (P);
    P->gen++;
    P->scanning = true;
    for (size_t i = 0; i < n; i++) {
        pid_t pid = pids[i];
        int rc;

        /* between their turns, known processes count as running: an
         * exit event or their next reading ends them
         */
        if (budget && (i + n - first) % n >= budget
            && (p = find_live (P, pid)) && p->scanned) {
            p->seen_gen = P->gen;
            if (alive)
                alive[keep++] = pid;
            continue;
        }
        if ((rc = scan_one (P, pid, now_ms, &created)) < 0) {
            P->scanning = false;
            errno = ENOMEM;
            return -1;
        }
        if (rc > 0 && alive)
            alive[keep++] = pid;
        count += rc;
    }
    P->rr = first + budget;
    if (nalive)
        *nalive = keep;
    for (p = P->live; p; p = next) {
        next = p->lnext;
        if (p->seen_gen != P->gen)
            proc_end (P, p, now_ms);
    }
    P->scanning = false;
    if (created && P->win->count && resolve_pending (P) < 0)
        return -1;
    return count;
}

int tr_procs_scan (tr_procs_t *P,
                   const pid_t *pids,
                   size_t n,
                   int64_t now_ms)
{
    return scan_list (P, pids, n, 0, now_ms, NULL, NULL);
}

/* The same list as last time: read only this turn's pids, end those
 * found gone and drop them from the list.  No pass over every process.
 */
static int scan_turn (tr_procs_t *P,
                      pid_t *pids,
                      size_t *n,
                      size_t budget,
                      int64_t now_ms)
{
    size_t first = P->rr % *n, gone = 0, keep = 0;
    bool created = false;
    int count = 0;

    time_base (P);
    now_ms += clock_shift (P);
    P->scanning = true;
    for (size_t j = 0; j < budget && j < *n; j++) {
        size_t i = (first + j) % *n;
        struct proc *p;
        int rc = scan_one (P, pids[i], now_ms, &created);
        if (rc < 0) {
            P->scanning = false;
            errno = ENOMEM;
            return -1;
        }
        if (rc == 0) {
            if ((p = find_live (P, pids[i])))
                proc_end (P, p, now_ms);
            pids[i] = 0;
            gone++;
        }
        count += rc;
    }
    P->scanning = false;
    P->rr = first + budget;
    if (gone) {
        for (size_t i = 0; i < *n; i++)
            if (pids[i] > 0)
                pids[keep++] = pids[i];
        *n = keep;
    }
    if (created && P->win->count && resolve_pending (P) < 0)
        return -1;
    return count;
}

int tr_procs_scan_some (tr_procs_t *P,
                        pid_t *pids,
                        size_t *n,
                        size_t budget,
                        bool same,
                        int64_t now_ms)
{
    if (!P || !n || (*n && !pids)) {
        errno = EINVAL;
        return -1;
    }
    if (budget && same && *n && P->gen > 0)
        return scan_turn (P, pids, n, budget, now_ms);
    return scan_list (P, pids, *n, budget, now_ms, pids, n);
}

int tr_procs_read_reapers (tr_procs_t *P, int64_t now_ms)
{
    pid_t *pids;
    size_t n = 0;
    bool created = false;
    int count = 0;

    if (!P) {
        errno = EINVAL;
        return -1;
    }
    /* the parents of the roots too (a scheduler's step daemon): a
     * root's exit record may not have been offered yet when the root
     * has been reaped and the final reading is taken; and every process
     * that has reaped the table's, in case more records are on the way
     */
    for (size_t i = 0; i < P->nroots; i++)
        for (struct proc *r = P->hash[pid_slot (P, P->roots[i])]; r;
             r = r->hnext) {
            struct proc *par;
            if (r->pid == P->roots[i] && r->ppid > 0
                && (par = find_live (P, r->ppid)))
                par->reaped = true;
        }
    for (struct proc *p = P->live; p; p = p->lnext) {
        if (p->nbelow)
            p->reaped = true;
        if (p->reaped && p->scanned)
            n++;
    }
    if (n == 0)
        return 0;
    if (!(pids = malloc (n * sizeof (*pids)))) {
        errno = ENOMEM;
        return -1;
    }
    n = 0;
    for (struct proc *p = P->live; p; p = p->lnext)
        if (p->reaped && p->scanned)
            pids[n++] = p->pid;
    time_base (P);
    now_ms += clock_shift (P);
    P->scanning = true;
    for (size_t i = 0; i < n; i++) {
        struct proc *p;
        int rc = scan_one (P, pids[i], now_ms, &created);
        if (rc < 0) {
            P->scanning = false;
            free (pids);
            errno = ENOMEM;
            return -1;
        }
        if (rc == 0 && (p = find_live (P, pids[i])))
            proc_end (P, p, now_ms);
        count += rc;
    }
    P->scanning = false;
    free (pids);
    if (created && P->win->count && resolve_pending (P) < 0)
        return -1;
    return count;
}

int tr_procs_set_reaped (tr_procs_t *P,
                         const pid_t *pids,
                         size_t n,
                         uint64_t cpu_us,
                         uint64_t user_us)
{
    pid_t *copy = NULL;

    if (!P || (n && !pids) || user_us > cpu_us) {
        errno = EINVAL;
        return -1;
    }
    if (n && !(copy = malloc (n * sizeof (*copy)))) {
        errno = ENOMEM;
        return -1;
    }
    if (n)
        memcpy (copy, pids, n * sizeof (*copy));
    free (P->reaped_pids);
    P->reaped_pids = copy;
    P->nreaped = n;
    P->reaped_us = cpu_us;
    P->reaped_user_us = user_us;
    return 0;
}

uint64_t tr_procs_rss (tr_procs_t *P)
{
    long page = sysconf (_SC_PAGESIZE);
    uint64_t pages = 0;

    for (const struct proc *p = P->live; p; p = p->lnext)
        pages += p->s_rss;
    return pages * (uint64_t)(page > 0 ? page : 4096);
}

/* exit events */

/* The exit record's command name into name (sizeof (ev->comm) bytes),
 * NUL-terminated whatever the kernel sent and sanitized like a name read
 * from /proc.
 */
static void exit_comm (const struct tr_exit *ev, char *name)
{
    memcpy (name, ev->comm, sizeof (ev->comm));
    name[sizeof (ev->comm) - 1] = '\0';
    sanitize (name);
}

/* The excluded entry of pid: the process itself (start within the
 * tolerance) or, with parent, one alive when a child started then.
 */
static struct excluded *excluded_find (tr_procs_t *P, pid_t pid,
                                       int64_t start_ms, bool parent)
{
    for (size_t i = 0; i < P->nexcl; i++) {
        struct excluded *x = &P->excl[i];
        if (x->pid != pid)
            continue;
        if (parent ? !x->ended && x->start_ms <= start_ms + START_TOL_MS
                   : diff_ms (x->start_ms, start_ms) <= START_TOL_MS)
            return x;
    }
    return NULL;
}

/* A thread's exit record of an excluded process or of a child of one:
 * never the step's.  Returns true when it was one.
 */
static bool exclude_exit (tr_procs_t *P, const struct tr_exit *ev, pid_t tgid)
{
    int64_t start = ev->group_start_unix_ms;
    struct excluded *x = excluded_find (P, tgid, start, false), *up;
    struct proc *par;

    if (!x) {
        if (ev->ppid <= 1 || !excluded_find (P, ev->ppid, start, true)
            || P->nexcl == EXCLUDED_MAX)
            return false;
        x = &P->excl[P->nexcl++];
        *x = (struct excluded){ tgid, start, 0, false };
    }
    if (ev->aggr == TR_EXIT_TGID || x->ended)
        return true;
    x->cpu_us += ev->utime_us + ev->stime_us;
    if (!ev->group_exit)
        return true;
    x->ended = true;
    if ((up = excluded_find (P, ev->ppid, start, true)))
        up->cpu_us += x->cpu_us;
    else if ((par = find_live (P, ev->ppid))) {
        par->kids_us += x->cpu_us;
        P->excluded_us += x->cpu_us;
    }
    return true;
}

int tr_procs_exclude (tr_procs_t *P, pid_t pid)
{
    char base[PATH_MAX], path[PATH_MAX], rel[64];
    struct pstat st;
    size_t blen;

    if (!P || pid <= 1) {
        errno = EINVAL;
        return -1;
    }
    snprintf (rel, sizeof (rel), "/proc/%ld", (long)pid);
    if (tr_fsroot_path (base, sizeof (base), rel) < 0)
        return -1;
    blen = strlen (base);
    if (blen + 64 >= sizeof (base) || read_stat (base, blen, path, &st) < 0) {
        errno = ESRCH;
        return -1;
    }
    time_base (P);
    if (excluded_find (P, pid, ticks_ms (P, st.start_ticks), false))
        return 0;
    if (P->nexcl == EXCLUDED_MAX) {
        errno = ENOSPC;
        return -1;
    }
    P->excl[P->nexcl++] = (struct excluded){
        pid, ticks_ms (P, st.start_ticks), 0, false
    };
    return 0;
}

uint64_t tr_procs_excluded_us (tr_procs_t *P)
{
    return P ? P->excluded_us : 0;
}

/* Apply a thread's exit record.  Returns 1 (the step's), 0 (not), or -1
 * (ENOMEM); *created tells whether a process became known.
 */
static int exit_apply (tr_procs_t *P, const struct tr_exit *ev,
                       bool *created)
{
    pid_t tgid = ev->tgid > 0 ? ev->tgid : ev->pid;
    int64_t start = ev->group_start_unix_ms;
    struct proc *p;

    if (P->nexcl && exclude_exit (P, ev, tgid))
        return 1;
    p = find_proc (P, tgid, start);
    /* An exit's start is rebuilt from taskstats' whole-second btime and
     * the time it was received, so it can miss a scanned entry's start
     * by more than START_TOL_MS.  A live entry of the pid that started
     * before this process ended is this process all the same: a pid
     * holds one process at a time, and one that reused it would have
     * started after this one ended.
     */
    if (!p && (p = find_live (P, tgid))
        && !(p->start_ms + START_TOL_MS < ev->end_unix_ms
             && diff_ms (p->start_ms, start) <= 3 * START_TOL_MS))
        p = NULL;
    if (ev->aggr == TR_EXIT_TGID)
        return p ? 1 : 0;
    if (!p) {
        char name[sizeof (ev->comm)];
        struct proc *other;
        int tool = -1;

        if (!is_parent (P, ev->ppid, start) && !is_root (P, tgid))
            return 0;
        exit_comm (ev, name);
        if (!name[0])
            snprintf (name, sizeof (name), "?");
        if ((tool = exit_tool (P, ev, name)) < 0)
            return -1;
        other = find_live (P, tgid);
        if (!(p = proc_new (P, tgid, start)))
            return -1;
        p->ppid = ev->ppid;
        tool_assign (P, p, tool);
        snprintf (p->comm, sizeof (p->comm), "%s", name);
        /* A live entry of the same pid is a later process (the pid was
         * reused): this one is over already, whatever the record says.
         */
        if (other)
            proc_end (P, p, ev->end_unix_ms);
        *created = true;
    }
    else if (!p->exact && ev->comm[0]
             && strncmp (p->comm, ev->comm, sizeof (p->comm) - 1) != 0) {
        /* exec'd after the last scan (a task is first seen before it
         * execs): the program that ended is the one the event names
         */
        char name[sizeof (ev->comm)];
        int tool;

        exit_comm (ev, name);
        if ((tool = exit_tool (P, ev, name)) < 0 && errno != 0)
            return -1;
        if (tool >= 0) {
            tool_assign (P, p, tool);
            snprintf (p->comm, sizeof (p->comm), "%s", name);
        }
    }
    if (p->exact)
        return 1; /* the process already ended: a duplicate */
    p->ppid = ev->ppid;
    p->x_cpu_us += ev->utime_us + ev->stime_us;
    p->x_user_us += ev->utime_us;
    if (!ev->cpu_exact)
        p->cpu_tick = true;
    p->x_hwm = max_u64 (p->x_hwm, ev->hiwater_rss_bytes);
    io_add (&p->x_io, &ev->io);
    if (ev->delays) {
        p->x_runq_ns += ev->cpu_delay_ns;
        p->x_memd_ns += ev->swapin_delay_ns + ev->freepages_delay_ns
                        + ev->thrashing_delay_ns;
        p->x_iod_ns += ev->blkio_delay_ns;
    }
    proc_touch (P, p);
    if (ev->group_exit) {
        const struct tr_exec_id *x = exec_of (P, ev);
        /* the name it gave itself, said beside the one it is blamed by */
        if (x)
            snprintf (p->renamed, sizeof (p->renamed), "%s", x->renamed);
        p->exact = true;
        record_status (P, p, ev->exit_status);
        record_failure (P, p, ev->exit_status, ev->end_unix_ms);
        if (p->live)
            proc_end (P, p, ev->end_unix_ms);
        else {
            /* ended by a scan first: the exit record is the better end */
            p->end_ms = ev->end_unix_ms;
            credit_parent (P, p);
        }
    }
    return 1;
}

tr_exit_window_t *tr_exit_window_create (void)
{
    return calloc (1, sizeof (tr_exit_window_t));
}

void tr_exit_window_destroy (tr_exit_window_t *w)
{
    if (w) {
        free (w->ev);
        free (w);
    }
}

int tr_exit_window_add (tr_exit_window_t *w, const struct tr_exit *ev)
{
    if (!w || !ev || ev->aggr != TR_EXIT_PID) {
        errno = EINVAL;
        return -1;
    }
    if (!w->ev && !(w->ev = calloc (PENDING_MAX, sizeof (*w->ev)))) {
        errno = ENOMEM;
        return -1;
    }
    while (w->count > 0
           && (w->count == PENDING_MAX
               || w->ev[w->head].end_unix_ms + PENDING_AGE_MS
                      < ev->end_unix_ms)) {
        w->head = (w->head + 1) % PENDING_MAX;
        w->count--;
    }
    w->ev[(w->head + w->count) % PENDING_MAX] = *ev;
    w->ppid[(w->head + w->count) % PENDING_MAX] = ev->ppid;
    w->count++;
    return 0;
}

size_t tr_exit_window_count (const tr_exit_window_t *w)
{
    return w ? w->count : 0;
}

/* ev as this table dates it: the kernel dates the record by the wall
 * clock of its exit, which may have been stepped since the table began.
 */
static void shift_event (tr_procs_t *P, const struct tr_exit *ev,
                         struct tr_exit *out)
{
    int64_t shift = clock_shift (P);

    *out = *ev;
    if (shift != 0) {
        out->start_unix_ms += shift;
        out->group_start_unix_ms += shift;
        out->end_unix_ms += shift;
    }
}

/* An exit whose parent the table does not know yet.  A process that
 * started after the last scan and forks many short children (a build
 * tool, a shell loop, a workflow engine) sees them all end before the
 * next scan finds it: more than the pending window holds.  Once the
 * window holds ADOPT_AFTER events of one parent, ask the step whether
 * that parent, alive since it is still forking, is the step's (its
 * cgroup); if so, read it now, so that its children attribute as they
 * come.  A parent found not to be the step's is remembered for
 * NOT_MEMBER_MS: a fork loop of another job costs one look a second,
 * and sparse exits elsewhere on the node none.
 */
static bool adopt_parent (tr_procs_t *P, const struct tr_exit *ev,
                          bool *created)
{
    const tr_exit_window_t *w = P->win;
    pid_t ppid = ev->ppid;
    int64_t now = ev->end_unix_ms;
    size_t same = 0;
    bool made = false;

    if (!P->member || ppid <= 1)
        return false;
    /* a parent known not to be the step's first: that is every exit of
     * another job's fork loop, and the short list costs less than the
     * window
     */
    for (size_t i = 0; i < NOT_MEMBER_MAX; i++)
        if (P->not_member[i].pid == ppid && P->not_member[i].until_ms > now)
            return false;
    for (size_t i = 0; i < w->count && same + 1 < ADOPT_AFTER; i++)
        if (w->ppid[(w->head + i) % PENDING_MAX] == ppid)
            same++;
    if (same + 1 < ADOPT_AFTER)
        return false;
    if (P->member (ppid, P->member_arg) != 1) {
        P->not_member[P->nm_next].pid = ppid;
        P->not_member[P->nm_next].until_ms = now + NOT_MEMBER_MS;
        P->nm_next = (P->nm_next + 1) % NOT_MEMBER_MAX;
        return false;
    }
    time_base (P);
    if (scan_one (P, ppid, now, &made) <= 0)
        return false;
    if (made)
        *created = true;
    return true;
}

/* Attribute held events whose parent (or process) became known, until
 * nothing changes: a chain sh -> sh -> cmd resolves from the top down.
 * Held events keep their order, so a process's thread records come
 * before its last one; the ones this table takes leave the window.
 */
static int resolve_pending (tr_procs_t *P)
{
    tr_exit_window_t *w = P->win;
    bool changed = true;

    while (changed && w->count) {
        size_t keep = 0, n = w->count;
        changed = false;
        for (size_t i = 0; i < n; i++) {
            struct tr_exit *ev = &w->ev[(w->head + i) % PENDING_MAX], mine;
            bool created = false;
            int rc;
            shift_event (P, ev, &mine);
            if ((rc = exit_apply (P, &mine, &created)) < 0)
                return -1;
            if (rc == 1) {
                changed = true;
                continue;
            }
            /* compact in place: the kept ones move down in order */
            if (keep != i) {
                w->ev[(w->head + keep) % PENDING_MAX] = *ev;
                w->ppid[(w->head + keep) % PENDING_MAX] = ev->ppid;
            }
            keep++;
        }
        w->count = keep;
    }
    return 0;
}

int tr_procs_exit (tr_procs_t *P, const struct tr_exit *event)
{
    struct tr_exit ev;
    bool created = false;
    int rc;

    if (!P || !event) {
        errno = EINVAL;
        return -1;
    }
    shift_event (P, event, &ev);
    if ((rc = exit_apply (P, &ev, &created)) < 0
        || (rc == 0 && ev.aggr == TR_EXIT_PID
            && adopt_parent (P, &ev, &created)
            && (rc = exit_apply (P, &ev, &created)) < 0)) {
        errno = ENOMEM;
        return -1;
    }
    /* held in the table's own window; a shared one's owner holds what
     * no table took
     */
    if (rc == 0 && ev.aggr == TR_EXIT_PID && !P->win_shared
        && tr_exit_window_add (P->win, event) < 0 && errno == ENOMEM)
        P->dropped++; /* counted with the events the listener lost */
    if (created && P->win->count && resolve_pending (P) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return rc;
}

int tr_procs_identify (tr_procs_t *P, pid_t pid, struct tr_procs_ident *id)
{
    char base[PATH_MAX], path[PATH_MAX], rel[64];
    char prog[NAME_MAX_BYTES + 1], name[NAME_MAX_BYTES + 1];
    struct pstat st;
    char *raw;
    ssize_t got;
    size_t blen;

    if (!P || !id || pid <= 0) {
        errno = EINVAL;
        return -1;
    }
    snprintf (rel, sizeof (rel), "/proc/%ld", (long)pid);
    if (tr_fsroot_path (base, sizeof (base), rel) < 0)
        return 0;
    blen = strlen (base);
    if (blen + 64 >= sizeof (base) || read_stat (base, blen, path, &st) < 0)
        return 0; /* gone already */
    /* ending already: its arguments are gone, and its comm is what it
     * made of it; its exit record is all there is
     */
    if (st.state == 'Z' || st.state == 'X' || (st.flags & PF_EXITING_FLAG))
        return 0;
    time_base (P);
    memset (id, 0, sizeof (*id));
    id->start_ms = ticks_ms (P, st.start_ticks);
    if (name_process (P, st.comm, base, blen, path, prog, name, &raw, &got,
                      &id->exe_dev, &id->exe_ino)
        && got <= 0) {
        free (raw); /* named from its arguments, and they could not be read */
        return 0;
    }
    free (raw);
    snprintf (id->tool, sizeof (id->tool), "%s", name);
    /* it may have ended while it was read: a later pid's files */
    if (read_stat (base, blen, path, &st) < 0
        || ticks_ms (P, st.start_ticks) != id->start_ms)
        return 0;
    return 1;
}

void tr_procs_add_root (tr_procs_t *P, pid_t pid)
{
    if (!P || pid <= 0 || is_root (P, pid))
        return;
    if (P->nroots == P->rootcap) {
        size_t nc = P->rootcap ? P->rootcap * 2 : 8;
        void *n;
        if (nc > ROOTS_MAX
            || !(n = realloc (P->roots, nc * sizeof (*P->roots))))
            return; /* still attributed through a scan */
        P->roots = n;
        P->rootcap = nc;
    }
    P->roots[P->nroots++] = pid;
    if (P->win->count)
        (void)resolve_pending (P);
}

void tr_procs_set_member (tr_procs_t *P, tr_procs_member_f fn, void *arg)
{
    if (!P)
        return;
    P->member = fn;
    P->member_arg = arg;
}

void tr_procs_set_lost (tr_procs_t *P, uint64_t lost)
{
    if (P)
        P->lost = lost;
}

/* create, destroy */

static void redact_free (struct redact_set *rs, size_t ncompiled)
{
    for (size_t i = 0; i < ncompiled; i++)
        regfree (&rs->re[i]);
    for (size_t i = 0; rs->pat && i < rs->n; i++)
        free (rs->pat[i]);
    free (rs->pat);
    free (rs->re);
    free (rs);
}

static bool redact_same (const struct redact_set *rs, const char *const *pat)
{
    size_t i;

    for (i = 0; i < rs->n && pat[i]; i++)
        if (strcmp (rs->pat[i], pat[i]))
            return false;
    return i == rs->n && !pat[i];
}

static struct redact_set *redact_compile (const char *const *pat,
                                          tr_error_t *error)
{
    struct redact_set *rs;
    size_t n = 0;

    while (pat[n])
        n++;
    if (!(rs = calloc (1, sizeof (*rs)))
        || (n && (!(rs->pat = calloc (n, sizeof (*rs->pat)))
                  || !(rs->re = calloc (n, sizeof (*rs->re)))))) {
        if (rs)
            redact_free (rs, 0);
        errno = ENOMEM;
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    rs->n = n;
    for (size_t i = 0; i < n; i++)
        if (!(rs->pat[i] = strdup (pat[i]))) {
            redact_free (rs, 0);
            errno = ENOMEM;
            tr_errprintf (error, "out of memory");
            return NULL;
        }
    for (size_t i = 0; i < n; i++) {
        char msg[128];
        int rc = regcomp (&rs->re[i], pat[i], REG_EXTENDED | REG_ICASE);
        if (rc != 0) {
            regerror (rc, NULL, msg, sizeof (msg));
            tr_errprintf (error, "redact pattern '%s': %s", pat[i], msg);
            redact_free (rs, i);
            errno = rc == REG_ESPACE ? ENOMEM : EINVAL;
            return NULL;
        }
    }
    rs->refs = 1;
    return rs;
}

/* The compiled set for pat: shared when one with the same patterns is
 * in use (regexec does not change a compiled pattern).
 */
static struct redact_set *redact_get (const char *const *pat,
                                      tr_error_t *error)
{
    struct redact_set *rs;

    pthread_mutex_lock (&redact_lock);
    for (rs = redact_sets; rs; rs = rs->next)
        if (redact_same (rs, pat)) {
            rs->refs++;
            pthread_mutex_unlock (&redact_lock);
            return rs;
        }
    if ((rs = redact_compile (pat, error))) {
        rs->next = redact_sets;
        redact_sets = rs;
    }
    pthread_mutex_unlock (&redact_lock);
    return rs;
}

static void redact_put (struct redact_set *rs)
{
    struct redact_set **pp;

    if (!rs)
        return;
    pthread_mutex_lock (&redact_lock);
    if (--rs->refs == 0) {
        for (pp = &redact_sets; *pp && *pp != rs; pp = &(*pp)->next)
            ;
        if (*pp)
            *pp = rs->next;
        redact_free (rs, rs->n);
    }
    pthread_mutex_unlock (&redact_lock);
}

static void list_free (char **l)
{
    for (size_t i = 0; l && l[i]; i++)
        free (l[i]);
    free (l);
}

/* A copy of a NULL-terminated list of strings, or NULL (ENOMEM). */
static char **list_copy (const char *const *l)
{
    size_t n = 0;
    char **c;

    while (l[n])
        n++;
    if (!(c = calloc (n + 1, sizeof (*c))))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!(c[i] = strdup (l[i]))) {
            list_free (c);
            return NULL;
        }
    return c;
}

tr_procs_t *tr_procs_create (const struct tr_procs_opts *opts,
                             tr_error_t *error)
{
    const char *const *pat = tr_conf_redact_default;
    tr_procs_t *P;

    if (opts && opts->cmdline_max > TR_PROCS_CMDLINE_MAX) {
        errno = EINVAL;
        tr_errprintf (error, "cmdline_max: %zu is more than %d bytes",
                      opts->cmdline_max, TR_PROCS_CMDLINE_MAX);
        return NULL;
    }
    if (opts && opts->tools_max > TR_PROCS_TOOLS_MAX) {
        errno = EINVAL;
        tr_errprintf (error, "tools_max: %zu is more than %d rows",
                      opts->tools_max, TR_PROCS_TOOLS_MAX);
        return NULL;
    }
    if (!(P = calloc (1, sizeof (*P))))
        goto nomem;
    P->cmdline_max = opts && opts->cmdline_max ? opts->cmdline_max
                                               : TR_PROCS_CMDLINE_DEFAULT;
    P->tools_max = opts && opts->tools_max ? opts->tools_max
                                           : TR_PROCS_TOOLS_DEFAULT;
    P->overflow = -1;
    memset (P->thash, -1, sizeof (P->thash));
    if ((P->hz = sysconf (_SC_CLK_TCK)) <= 0)
        P->hz = 100;
    P->hsize = 256;
    P->win_shared = opts && opts->exit_window;
    P->execs = opts ? opts->exit_names : NULL;
    P->win = P->win_shared ? opts->exit_window : tr_exit_window_create ();
    if (!P->win || !(P->hash = calloc (P->hsize, sizeof (*P->hash)))
        || !(P->ring = calloc (ENDED_MAX, sizeof (*P->ring))))
        goto nomem;
    if (opts && opts->redact)
        pat = opts->redact;
    if (!(P->rs = redact_get (pat, error))) {
        tr_procs_destroy (P);
        return NULL;
    }
    P->re = P->rs->re;
    P->nre = P->rs->n;
    if ((opts && opts->tool_subcommands
         && !(P->site_sub = list_copy (opts->tool_subcommands)))
        || (opts && opts->tool_interpreters
            && !(P->site_interp = list_copy (opts->tool_interpreters))))
        goto nomem;
    P->site.subcommands = (const char *const *)P->site_sub;
    P->site.interpreters = (const char *const *)P->site_interp;
    return P;
nomem:
    tr_procs_destroy (P);
    errno = ENOMEM;
    tr_errprintf (error, "out of memory");
    return NULL;
}

void tr_procs_destroy (tr_procs_t *P)
{
    int saved = errno;

    if (!P)
        return;
    for (size_t i = 0; P->hash && i < P->hsize; i++) {
        struct proc *p = P->hash[i], *next;
        for (; p; p = next) {
            next = p->hnext;
            free (p->below);
            free (p);
        }
    }
    for (size_t i = 0; i < P->ntools; i++) {
        free (P->tools[i].name);
        free (P->tools[i].cmdline);
        free (P->tools[i].codes.v);
        free (P->tools[i].sigs.v);
    }
    redact_put (P->rs);
    list_free (P->site_sub);
    list_free (P->site_interp);
    for (size_t i = 0; P->exe && i < P->nexe; i++)
        free (P->exe[i].prog);
    free (P->hash);
    free (P->ring);
    if (!P->win_shared)
        tr_exit_window_destroy (P->win);
    free (P->fails);
    free (P->reaped_pids);
    free (P->tools);
    free (P->exe);
    free (P->roots);
    free (P);
    errno = saved;
}

/* outputs */

/* Totals of one row. */
struct agg {
    uint64_t count, cpu_us, peak, runq_ns, inexact;
    struct tr_proc_io io;
    int64_t first_start_ms, last_end_ms;
};

static void agg_proc (struct agg *a, const struct proc *p)
{
    struct tr_proc_io io;

    a->cpu_us += own_cpu_us (p);
    a->runq_ns += own_runq_ns (p);
    a->peak = max_u64 (a->peak, own_hwm (p));
    own_io (p, &io);
    io_add (&a->io, &io);
    if (!p->live && p->end_ms > a->last_end_ms)
        a->last_end_ms = p->end_ms;
    if (!cpu_exact (p))
        a->inexact++;
}

static void agg_merge (struct agg *a, const struct agg *b)
{
    a->count += b->count;
    a->cpu_us += b->cpu_us;
    a->runq_ns += b->runq_ns;
    a->inexact += b->inexact;
    a->peak = max_u64 (a->peak, b->peak);
    io_add (&a->io, &b->io);
    if (b->first_start_ms
        && (!a->first_start_ms || b->first_start_ms < a->first_start_ms))
        a->first_start_ms = b->first_start_ms;
    if (b->last_end_ms > a->last_end_ms)
        a->last_end_ms = b->last_end_ms;
}

/* Call fn for every entry (live, and ended not yet folded). */
static void each_proc (tr_procs_t *P,
                       void (*fn) (tr_procs_t *, const struct proc *, void *),
                       void *arg)
{
    for (struct proc *p = P->live; p; p = p->lnext)
        fn (P, p, arg);
    for (size_t i = 0; i < P->rcount; i++) {
        struct proc *p = P->ring[(P->rhead + i) % ENDED_MAX];
        if (p)
            fn (P, p, arg);
    }
}

static void agg_gap (int tool, uint64_t us, void *arg)
{
    struct agg *a = arg;

    a[tool].cpu_us += us;
}

static void agg_tool_cb (tr_procs_t *P, const struct proc *p, void *arg)
{
    struct agg *a = arg;

    (void)P;
    agg_proc (&a[p->tool], p);
    gap_share (p, agg_gap, a);
}

/* The caller as the reaper of the processes it said it reaped
 * (tr_procs_set_reaped): an entry of its own, for reaped_gap_us() and
 * gap_share(), made of the ended entries of those pids that no process
 * of the table reaped.  False when there is none.  The caller frees
 * top->below.
 */
static bool caller_top (tr_procs_t *P, struct proc *top)
{
    memset (top, 0, sizeof (*top));
    top->tool = -1;
    top->cut_us = P->reaped_us;
    for (size_t i = 0; i < P->nreaped; i++) {
        struct proc *c = NULL;
        for (struct proc *p = P->hash[pid_slot (P, P->reaped_pids[i])]; p;
             p = p->hnext)
            if (p->pid == P->reaped_pids[i] && !p->live
                && (!c || p->start_ms > c->start_ms))
                c = p;
        if (!c || c->credited)
            continue;
        top->kids_us += incl_cpu_us (c);
        below_add (top, c->tool, 1);
        for (size_t j = 0; j < c->nbelow; j++)
            below_add (top, c->below[j].tool, c->below[j].n);
    }
    if (top->nbelow == 0) {
        free (top->below);
        top->below = NULL;
        return false;
    }
    return true;
}

/* Per-tool totals, folded and live; caller frees. */
static struct agg *tool_aggs (tr_procs_t *P)
{
    struct agg *a = calloc (P->ntools ? P->ntools : 1, sizeof (*a));
    struct proc top;

    if (!a)
        return NULL;
    for (size_t i = 0; i < P->ntools; i++) {
        const struct tool *t = &P->tools[i];
        a[i].count = t->count;
        a[i].cpu_us = t->f_cpu_us;
        a[i].peak = t->f_peak;
        a[i].runq_ns = t->f_runq_ns;
        a[i].io = t->f_io;
        a[i].inexact = t->f_inexact;
        a[i].first_start_ms = t->first_start_ms;
        a[i].last_end_ms = t->f_last_end_ms;
    }
    each_proc (P, agg_tool_cb, a);
    if (caller_top (P, &top)) {
        gap_share (&top, agg_gap, a);
        free (top.below);
    }
    return a;
}

static json_t *codes_json (const struct codemap *const *maps, size_t n)
{
    json_t *o = json_object ();

    for (size_t m = 0; o && m < n; m++)
        for (size_t i = 0; i < maps[m]->n; i++) {
            char key[16];
            json_t *old;
            uint64_t v = maps[m]->v[i].n;
            snprintf (key, sizeof (key), "%d", maps[m]->v[i].key);
            if ((old = json_object_get (o, key)))
                v += (uint64_t)json_integer_value (old);
            if (json_object_set_new (o, key, json_integer ((json_int_t)v))
                < 0) {
                json_decref (o);
                return NULL;
            }
        }
    return o;
}

static int set_new (json_t *o, const char *key, json_t *v)
{
    return v ? json_object_set_new (o, key, v) : -1;
}

/* A counter as a record integer (signed 64 bits, >= 0): /proc text is
 * not trusted to stay in range ("VmHWM: -1 kB" reads as 2^64 - 1).
 */
static json_t *json_count (uint64_t v)
{
    return json_integer (v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *row_json (const char *name,
                         const char *cmdline,
                         const struct agg *a,
                         json_t *codes,
                         json_t *sigs)
{
    json_t *o = json_object ();

    if (!o || set_new (o, "name", json_string (name)) < 0
        || set_new (o, "count", json_count (a->count)) < 0
        || set_new (o, "cpu_s", json_real ((double)a->cpu_us / 1e6)) < 0
        || set_new (o, "peak_rss_bytes", json_count (a->peak)) < 0
        || set_new (o, "read_bytes", json_count (a->io.read_bytes)) < 0
        || set_new (o, "write_bytes", json_count (a->io.write_bytes)) < 0
        || set_new (o, "runq_wait_s", json_real ((double)a->runq_ns / 1e9))
               < 0
        || (a->first_start_ms > 0
            && set_new (o, "first_start_unix_ms",
                        json_integer ((json_int_t)a->first_start_ms))
                   < 0)
        || (a->last_end_ms > 0
            && set_new (o, "last_end_unix_ms",
                        json_integer ((json_int_t)a->last_end_ms))
                   < 0)
        || set_new (o, "exit_codes", codes) < 0
        || set_new (o, "signals", sigs) < 0
        || (cmdline && set_new (o, "cmdline", json_string (cmdline)) < 0)
        || set_new (o, "exact", json_boolean (a->inexact == 0)) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

struct order {
    size_t i;
    const struct agg *a;
    const char *name;
};

static int order_cmp (const void *x, const void *y)
{
    const struct order *a = x, *b = y;

    if (a->a->cpu_us != b->a->cpu_us)
        return a->a->cpu_us > b->a->cpu_us ? -1 : 1;
    if (a->a->count != b->a->count)
        return a->a->count > b->a->count ? -1 : 1;
    return strcmp (a->name, b->name);
}

static bool fail_signalled (const struct failure *f)
{
    return WIFSIGNALED (f->status);
}

/* Whether pid is among the parents of failure f. */
static bool in_chain (const struct failure *f, pid_t pid)
{
    for (size_t i = 0; i < f->nchain; i++)
        if (f->chain[i].pid == pid)
            return true;
    return false;
}

static const char *tool_name (tr_procs_t *P, int tool)
{
    return tool >= 0 && (size_t)tool < P->ntools && P->tools[tool].name
               ? P->tools[tool].name
               : "?";
}

/* A SIGPIPE death: its reader had gone (a pipe's writer). */
static bool fail_sigpipe (const struct failure *f)
{
    return WIFSIGNALED (f->status) && WTERMSIG (f->status) == SIGPIPE;
}

int tr_procs_culprit (tr_procs_t *P, size_t *collateral)
{
    int best = -1;

    if (!P)
        return -1;
    for (size_t i = 0; i < P->nfails; i++) {
        const struct failure *f = &P->fails[i];
        bool ancestor = false, reader = false;

        /* the parent of a failure that ended no later is collateral */
        for (size_t j = 0; j < P->nfails && !ancestor; j++)
            ancestor = j != i && P->fails[j].end_ms <= f->end_ms
                       && in_chain (&P->fails[j], f->pid);
        if (ancestor)
            continue;
        /* so is a writer killed by SIGPIPE after another process failed:
         * in "producer | consumer" the consumer's failure closed the
         * pipe, and the step's status is the consumer's
         */
        for (size_t j = 0; j < P->nfails && fail_sigpipe (f) && !reader; j++)
            reader = j != i && !fail_sigpipe (&P->fails[j])
                     && P->fails[j].end_ms <= f->end_ms;
        if (reader)
            continue;
        if (best < 0 || f->end_ms < P->fails[best].end_ms
            || (f->end_ms == P->fails[best].end_ms && fail_signalled (f)
                && !fail_signalled (&P->fails[best])))
            best = (int)i;
    }
    if (best >= 0 && collateral) {
        *collateral = 0;
        for (size_t j = 0; j < P->nfails; j++)
            if ((int)j != best
                && (in_chain (&P->fails[best], P->fails[j].pid)
                    || fail_sigpipe (&P->fails[j]))
                && P->fails[j].end_ms >= P->fails[best].end_ms)
                (*collateral)++;
    }
    return best;
}

json_t *tr_procs_culprit_json (tr_procs_t *P, int64_t step_end_ms)
{
    size_t collateral = 0;
    int i = tr_procs_culprit (P, &collateral);
    const struct failure *f;
    json_t *o, *chain;
    double at_s;

    if (i < 0)
        return NULL;
    f = &P->fails[i];
    at_s = step_end_ms > f->end_ms ? (double)(step_end_ms - f->end_ms) / 1e3
                                   : 0.0;
    if (!(chain = json_array ()))
        return NULL;
    for (size_t k = 0; k < f->nchain; k++) {
        int tool = f->chain[k].tool;
        struct proc *q;
        /* the parent's name as the table knows it now: a task is first
         * seen before it execs, and its own exit names the program; or a
         * parent the table learnt of after the exit
         */
        if ((q = find_parent (P, f->chain[k].pid, f->end_ms)))
            tool = q->tool;
        if (json_array_append_new (chain,
                                   json_pack ("{s:s s:i}", "tool",
                                              tool_name (P, tool), "pid",
                                              (int)f->chain[k].pid))
            < 0) {
            json_decref (chain);
            return NULL;
        }
    }
    if (!(o = json_pack ("{s:s s:i s:b s:f s:o s:I}", "tool",
                         tool_name (P, f->tool), "pid", (int)f->pid,
                         "core_dumped",
                         WIFSIGNALED (f->status) && WCOREDUMP (f->status),
                         "at_s", at_s, "chain", chain, "collateral",
                         (json_int_t)collateral)))
        return NULL;
    /* the kernel's name, as the file evidence names the tool, where it
     * differs from the table's (an interpreter's script, python3.11 run
     * as python3)
     */
    if (f->comm[0] && strcmp (f->comm, tool_name (P, f->tool))) {
        char comm[sizeof (f->comm)];
        memcpy (comm, f->comm, sizeof (comm));
        sanitize (comm);
        if (json_object_set_new (o, "comm", json_string (comm)) < 0) {
            json_decref (o);
            return NULL;
        }
    }
    if (f->renamed[0]) {
        char alias[sizeof (f->renamed)];
        memcpy (alias, f->renamed, sizeof (alias));
        sanitize (alias);
        if (json_object_set_new (o, "calls_itself", json_string (alias)) < 0) {
            json_decref (o);
            return NULL;
        }
    }
    if (json_object_set_new (o,
                             WIFSIGNALED (f->status) ? "signal" : "exit_code",
                             json_integer (WIFSIGNALED (f->status)
                                               ? WTERMSIG (f->status)
                                               : WEXITSTATUS (f->status)))
        < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

json_t *tr_procs_tools_json (tr_procs_t *P)
{
    struct agg *a = NULL, other;
    struct order *ord = NULL;
    const struct codemap **ocodes = NULL, **osigs = NULL;
    size_t n = 0, nother = 0;
    json_t *arr = NULL, *row;

    if (!P) {
        errno = EINVAL;
        return NULL;
    }
    if (!(arr = json_array ()) || !(a = tool_aggs (P))
        || !(ord = calloc (P->ntools + 1, sizeof (*ord)))
        || !(ocodes = calloc (P->ntools + 1, sizeof (*ocodes)))
        || !(osigs = calloc (P->ntools + 1, sizeof (*osigs))))
        goto nomem;
    memset (&other, 0, sizeof (other));
    for (size_t i = 0; i < P->ntools; i++) {
        if (a[i].count == 0)
            continue;
        if (P->tools[i].overflow) {
            agg_merge (&other, &a[i]);
            ocodes[nother] = &P->tools[i].codes;
            osigs[nother++] = &P->tools[i].sigs;
            continue;
        }
        ord[n].i = i;
        ord[n].a = &a[i];
        ord[n++].name = P->tools[i].name;
    }
    qsort (ord, n, sizeof (*ord), order_cmp);
    for (size_t k = 0; k < n; k++) {
        const struct tool *t = &P->tools[ord[k].i];
        const struct codemap *c = &t->codes, *s = &t->sigs;
        if (k >= P->tools_max) {
            agg_merge (&other, ord[k].a);
            ocodes[nother] = c;
            osigs[nother++] = s;
            continue;
        }
        if (!(row = row_json (t->name, t->cmdline, ord[k].a,
                              codes_json (&c, 1), codes_json (&s, 1)))
            || json_array_append_new (arr, row) < 0)
            goto nomem;
    }
    if (other.count > 0
        && (!(row = row_json (OTHER_NAME, NULL, &other,
                              codes_json (ocodes, nother),
                              codes_json (osigs, nother)))
            || json_array_append_new (arr, row) < 0))
        goto nomem;
    free (a);
    free (ord);
    free (ocodes);
    free (osigs);
    return arr;
nomem:
    json_decref (arr);
    free (a);
    free (ord);
    free (ocodes);
    free (osigs);
    errno = ENOMEM;
    return NULL;
}

static void inexact_cb (tr_procs_t *P, const struct proc *p, void *arg)
{
    (void)P;
    if (!p->exact)
        (*(uint64_t *)arg)++;
}

bool tr_procs_complete (tr_procs_t *P)
{
    uint64_t inexact = 0;

    if (!P || P->lost || P->dropped || P->nlive)
        return false;
    each_proc (P, inexact_cb, &inexact);
    return inexact == 0 && P->f_inexact == 0;
}

json_t *tr_procs_json (tr_procs_t *P, const char *source)
{
    bool ts;

    if (!P) {
        errno = EINVAL;
        return NULL;
    }
    source = source ? source : "proc";
    ts = !strcmp (source, "taskstats");
    return json_pack ("{s:I s:s s:b s:I}", "count", (json_int_t)P->nseen,
                      "source", source, "complete",
                      ts && tr_procs_complete (P), "lost",
                      (json_int_t)(P->lost + P->dropped));
}

struct cpu_sum {
    uint64_t total_us, user_us, inexact;
};

static void cpu_cb (tr_procs_t *P, const struct proc *p, void *arg)
{
    struct cpu_sum *c = arg;

    (void)P;
    c->total_us += own_cpu_us (p) + reaped_gap_us (p);
    c->user_us += own_user_us (p) + reaped_gap_user_us (p);
    /* a live process counts with its last reading */
    if (!p->live && !cpu_exact (p))
        c->inexact++;
}

bool tr_procs_cpu (tr_procs_t *P, uint64_t *total_us, uint64_t *user_us)
{
    struct cpu_sum c = { 0, 0, 0 };
    struct proc top;

    if (!P) {
        *total_us = *user_us = 0;
        return false;
    }
    c.total_us = P->f_cpu_us;
    c.user_us = P->f_user_us;
    c.inexact = P->f_cpu_inexact;
    each_proc (P, cpu_cb, &c);
    if (caller_top (P, &top)) {
        uint64_t gap = reaped_gap_us (&top);
        c.total_us += gap;
        if (gap) /* then reaped_us > 0 */
            c.user_us += (uint64_t)((long double)gap * P->reaped_user_us
                                    / P->reaped_us);
        free (top.below);
    }
    *total_us = c.total_us;
    *user_us = c.user_us;
    return c.inexact == 0 && !P->lost && !P->dropped;
}

static void sums_cb (tr_procs_t *P, const struct proc *p, void *arg)
{
    struct sums own;

    (void)P;
    proc_sums (p, &own);
    sums_add (arg, &own);
}

static void step_sums (tr_procs_t *P, struct sums *s)
{
    memset (s, 0, sizeof (*s));
    for (size_t i = 0; i < P->ntools; i++) {
        io_add (&s->io, &P->tools[i].f_io);
        s->runq_ns += P->tools[i].f_runq_ns;
    }
    s->memd_ns = P->f_memd_ns;
    s->iod_ns = P->f_iod_ns;
    sums_add (s, &P->entry_sums);
}

int tr_procs_check (tr_procs_t *P)
{
    struct sums all = { 0 };

    if (!P) {
        errno = EINVAL;
        return -1;
    }
    each_proc (P, sums_cb, &all);
    if (memcmp (&P->entry_sums, &all, sizeof (all)) != 0) {
        errno = EDOM;
        return -1;
    }
    return 0;
}

void tr_procs_io (tr_procs_t *P, struct tr_proc_io *out)
{
    struct sums s;

    if (!P) {
        memset (out, 0, sizeof (*out));
        return;
    }
    step_sums (P, &s);
    *out = s.io;
}

double tr_procs_runq_wait_s (tr_procs_t *P)
{
    struct sums s;

    if (!P)
        return 0;
    step_sums (P, &s);
    return (double)s.runq_ns / 1e9;
}

void tr_procs_delays (tr_procs_t *P, uint64_t delay_ns[3])
{
    struct sums s;

    memset (delay_ns, 0, 3 * sizeof (*delay_ns));
    if (!P)
        return;
    step_sums (P, &s);
    delay_ns[TR_PSI_CPU] = s.runq_ns;
    delay_ns[TR_PSI_MEMORY] = s.memd_ns;
    delay_ns[TR_PSI_IO] = s.iod_ns;
}

size_t tr_procs_count_live (tr_procs_t *P)
{
    return P ? P->nlive : 0;
}

uint64_t tr_procs_count (tr_procs_t *P)
{
    return P ? P->nseen : 0;
}

bool tr_procs_has_pid (tr_procs_t *P, pid_t pid)
{
    if (!P || pid <= 0 || !P->hash)
        return false;
    for (struct proc *p = P->hash[pid_slot (P, pid)]; p; p = p->hnext)
        if (p->pid == pid)
            return true;
    return false;
}
