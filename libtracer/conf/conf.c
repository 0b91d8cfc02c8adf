/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The site configuration, tracer.yaml.  One schema table drives the
 * defaults, parsing, validation and the key list that the docs check
 * compares with tracer.yaml(5).  Parsing uses libyaml's event API rather
 * than its document API: the file is a two-level mapping, so anything
 * deeper is rejected the moment it appears and no tree is ever built.
 * A load works on a copy of the configuration and swaps it in only when
 * the whole file is valid, so a bad file never half-applies.  The report
 * section holds subsections (report.diagnosis, ...), one level deeper,
 * and report.cost.partitions is the one key whose value is a mapping.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <yaml.h>

#include "conf.h"
#include "libtracer/util/error.h"
#include "libtracer/util/nss.h"
#include "libtracer/hook/hookconf.h"
#include "libtracer/util/path.h"
#include "libtracer/util/tools.h"

/* A configuration file is a few kilobytes; the bound keeps a wrong path
 * (a log file, a device image) from being slurped into memory.
 */
#define CONF_MAX_SIZE (1024 * 1024)

enum {
    CONF_MAX_LIST = 256,    /* entries in a user or pattern list */
    CONF_MAX_PATTERN = 512, /* bytes of one pattern */
    CONF_MAX_NAME = 64,     /* cluster.name length */
    CONF_SHOW_MAX = 64,     /* bytes of a bad value quoted in a message */
    CONF_SUGGEST_MAX = 2,   /* edit distance for "did you mean" */
    CONF_MAX_TEXT = 16,     /* bytes of a K_TEXT value (a currency) */
    CONF_MAX_KEY = 64,      /* "section.subsection.key" */
};

/* The longest unix socket path: sun_path holds it and its NUL. */
#define CONF_MAX_SOCKET ((int)sizeof (((struct sockaddr_un *)0)->sun_path) - 1)

/* What a K_MODE row gives permission bits to. */
enum mode_kind {
    MODE_ANY = 0,
    MODE_FILE, /* record files: at most 0644 */
    MODE_DIR,  /* store directories: see check_mode() */
};

enum ktype {
    K_NAME,       /* path-safe identifier */
    K_PATH,       /* absolute path */
    K_MODE,       /* octal permission bits */
    K_NUMBER,     /* real number within [min, max] ((min, max] if min_open) */
    K_BOOL,       /* true or false */
    K_ENUM,       /* one of enums[] */
    K_LOG,        /* "syslog", "stderr" or an absolute path */
    K_OWNER,      /* "job" or a user */
    K_GROUP,      /* group name or gid */
    K_USERS,      /* list of user names or uids */
    K_PATTERNS,   /* list of POSIX extended regular expressions */
    K_TEXT,       /* short free text without control characters */
    K_COUNT,      /* whole number within [min, max], stored as int */
    K_BYTES,      /* bytes, optionally with a K, M, G, T or P (1024) unit */
    K_DURATION,   /* seconds, optionally with a s, m, min, h or d unit */
    K_PARTITIONS, /* report.cost.partitions: name -> prices */
};

struct enum_name {
    const char *name;
    int value;
};

struct key {
    const char *section;
    const char *name;
    enum ktype type;
    size_t off;     /* the value in tr_conf_t */
    size_t off_aux; /* K_OWNER: is_job flag, K_GROUP: set flag,
                        K_USERS, K_PARTITIONS: element count */
    bool optional;  /* an empty value unsets it */
    double min;     /* K_NUMBER, K_COUNT, K_BYTES, K_DURATION */
    double max;     /* also K_TEXT and K_PATH: longest value in bytes */
    bool min_open;
    bool zero_off;  /* K_NUMBER: 0 (off) is allowed below min */
    enum mode_kind mode; /* K_MODE */
    bool add_root;                 /* K_USERS: root is always in the list */
    bool nonempty;                 /* K_USERS: an empty list is an error */
    bool globs;                    /* K_PATTERNS: program name patterns
                                      (tools.h), not regular expressions */
    const struct enum_name *enums; /* K_ENUM, NULL-terminated */
    const char *dflt;              /* default as value text; NULL = unset */
    const char *doc_default;       /* default as the docs show it */
    const char *desc;
};

/* clang-format off */
static const struct enum_name log_levels[] = {
    { "error", LOG_ERR },
    { "warning", LOG_WARNING },
    { "notice", LOG_NOTICE },
    { "info", LOG_INFO },
    { "debug", LOG_DEBUG },
    { NULL, 0 },
};
/* clang-format on */

#define F(field) offsetof (tr_conf_t, field)

/* sampling.redact by default: secrets passed as options or assignments,
 * credentials in URLs, and token formats that announce themselves.  The
 * last group of each is what gets replaced.  Kept in step with the
 * shipped tracer.yaml (a unit test checks).
 */
const char *const tr_conf_redact_default[] = {
    "(pass(word|wd)?|secret|token|api[_-]?key|access[_-]?key"
    "|private[_-]?key|credentials?)[a-z0-9_-]*[=:]([^ ]+)",
    "--?(pass(word|wd)?|secret|token|api[_-]?key)[a-z0-9_-]* +([^ ]+)",
    "://[^/:@ ]+:([^/@ ]+)@",
    "(akia[0-9a-z]{16})",
    "bearer +([a-z0-9._~+/=-]+)",
    "(gh[pousr]_[a-z0-9]{36,})",
    "(github_pat_[a-z0-9_]{22,})",
    "(glpat-[a-z0-9_-]{20,})",
    "(xox[abprs]-[a-z0-9-]+)",
    "(eyj[a-z0-9_-]+\\.[a-z0-9_-]+\\.[a-z0-9_-]+)",
    NULL,
};

static const struct enum_name mail_summaries[] = {
    { "never", TR_MAIL_SUMMARY_NEVER },
    { "actionable", TR_MAIL_SUMMARY_ACTIONABLE },
    { "always", TR_MAIL_SUMMARY_ALWAYS },
    { NULL, 0 },
};

static const struct enum_name mail_tracings[] = {
    { "optin", TR_MAIL_TRACING_OPTIN },
    { "all", TR_MAIL_TRACING_ALL },
    { NULL, 0 },
};

/* The values are conf.h's TR_PSI_MIRROR_* and TR_DELAYACCT_*. */
static const struct enum_name psi_mirrors[] = {
    { "false", TR_PSI_MIRROR_OFF },
    { "true", TR_PSI_MIRROR_ON },
    { "auto", TR_PSI_MIRROR_AUTO },
    { NULL, 0 },
};

static const struct enum_name ebpfs[] = {
    { "false", TR_EBPF_OFF },
    { "true", TR_EBPF_ON },
    { "auto", TR_EBPF_AUTO },
    { NULL, 0 },
};

static const struct enum_name delayaccts[] = {
    { "off", TR_DELAYACCT_OFF },
    { "on", TR_DELAYACCT_ON },
    { "auto", TR_DELAYACCT_AUTO },
    { NULL, 0 },
};

/* The values are store.h's TR_STORE_ACCESS_*. */
static const struct enum_name job_accesses[] = {
    { "owner", 0 },
    { "acl", 1 },
    { "none", 2 },
    { NULL, 0 },
};

/* LSF_UNIT_FOR_LIMITS, as the power of 1024 of the unit. */
static const struct enum_name lsf_units[] = {
    { "KB", 1 }, { "MB", 2 }, { "GB", 3 },
    { "TB", 4 }, { "PB", 5 }, { "EB", 6 },
    { NULL, 0 },
};

/* The values are diagnose.h's tr_diag_severity_t. */
static const struct enum_name mail_severities[] = {
    { "info", 0 },
    { "warning", 1 },
    { "critical", 2 },
    { NULL, 0 },
};

static const struct key schema[] = {
    { .section = "cluster",
      .name = "name",
      .type = K_NAME,
      .off = F (cluster_name),
      .dflt = "default",
      .doc_default = "default",
      .desc = "cluster name stored in every record and used as a directory "
              "name in the store" },
    { .section = "store",
      .name = "path",
      .type = K_PATH,
      .off = F (store_path),
      .dflt = "/var/lib/tracer/store",
      .doc_default = "/var/lib/tracer/store",
      .desc = "directory of the shared record store" },
    { .section = "store",
      .name = "file_mode",
      .type = K_MODE,
      .off = F (store_file_mode),
      .mode = MODE_FILE,
      .dflt = "0640",
      .doc_default = "0640",
      .desc = "permission bits (octal) of record files in the store, at "
              "most 0644: no write for group or others, no execute, setuid, "
              "setgid or sticky bit" },
    { .section = "store",
      .name = "dir_mode",
      .type = K_MODE,
      .off = F (store_dir_mode),
      .mode = MODE_DIR,
      .dflt = "0755",
      .doc_default = "0755",
      .desc = "permission bits (octal) of directories in the store: no "
              "write for others, no setuid bit, group write only with the "
              "sticky bit (at most 02755, or 03775)" },
    { .section = "store",
      .name = "owner",
      .type = K_OWNER,
      .off = F (store_owner_uid),
      .off_aux = F (store_owner_is_job),
      .dflt = "job",
      .doc_default = "job",
      .desc = "owner of record files: 'job' for the job's user, or a user "
              "name or uid" },
    { .section = "store",
      .name = "job_access",
      .type = K_ENUM,
      .off = F (store_job_access),
      .enums = job_accesses,
      .dflt = "acl",
      .doc_default = "acl",
      .desc = "how the job's user reads their records: acl (the records "
              "stay the writer's, or store.owner's, and a POSIX ACL entry "
              "lets the job's user read them; where the store has no "
              "ACLs, the user owns them, read-only), owner (the job's "
              "user owns them, read-only; with owner: job) or none (only "
              "their owner and group read them)" },
    { .section = "store",
      .name = "group",
      .type = K_GROUP,
      .off = F (store_gid),
      .off_aux = F (store_group_set),
      .optional = true,
      .doc_default = "unset",
      .desc = "group of record files, a group name or gid (unset: the "
              "writer's group)" },
    { .section = "store",
      .name = "live_interval",
      .type = K_NUMBER,
      .off = F (store_live_interval_s),
      .min = 5,
      .max = 3600,
      .zero_off = true,
      .dflt = "30",
      .doc_default = "30",
      .desc = "seconds between the live summaries of the steps running on "
              "a node that tracerd writes into the store (one file per node "
              "and user, for tracer-report --run and --runs of a run in "
              "progress): 0 (none) or 5 to 3600" },
    { .section = "spool",
      .name = "path",
      .type = K_PATH,
      .off = F (spool_path),
      .dflt = "/var/spool/tracer",
      .doc_default = "/var/spool/tracer",
      .desc = "node-local directory holding records not yet written to "
              "the store" },
    { .section = "spool",
      .name = "retry_interval",
      .type = K_NUMBER,
      .off = F (spool_retry_s),
      .min = 1,
      .max = 3600,
      .dflt = "5",
      .doc_default = "5",
      .desc = "seconds before retrying a spooled record (1 to 3600)" },
    { .section = "spool",
      .name = "retry_max",
      .type = K_NUMBER,
      .off = F (spool_retry_max_s),
      .min = 1,
      .max = 86400,
      .dflt = "300",
      .doc_default = "300",
      .desc = "longest wait in seconds between retries (at least "
              "retry_interval, at most 86400)" },
    { .section = "spool",
      .name = "pending_max",
      .type = K_COUNT,
      .off = F (spool_pending_max),
      .min = 1,
      .max = 1000000,
      .dflt = "1000",
      .doc_default = "1000",
      .desc = "records tracerd keeps in memory while the spool cannot be "
              "written; past it a record is dropped and counted" },
    { .section = "daemon",
      .name = "socket",
      .type = K_PATH,
      .off = F (socket_path),
      .max = CONF_MAX_SOCKET,
      .dflt = "/run/tracer/tracerd.sock",
      .doc_default = "/run/tracer/tracerd.sock",
      .desc = "Unix socket on which tracerd accepts job notifications (at "
              "most 107 bytes)" },
    { .section = "daemon",
      .name = "squeue",
      .type = K_PATH,
      .off = F (squeue_path),
      .dflt = "/usr/bin/squeue",
      .doc_default = "/usr/bin/squeue",
      .desc = "Slurm's squeue, asked for a job's time limit, account, "
              "partition, QOS and name when it starts on the node and for "
              "its state when a step of it is killed by a signal "
              "(cancelled, time limit); scontrol beside it for the job's "
              "GPUs on the node; a path that does not exist turns the "
              "queries off" },
    { .section = "daemon",
      .name = "state_dir",
      .type = K_PATH,
      .off = F (state_dir),
      .dflt = "/run/tracer",
      .doc_default = "/run/tracer",
      .desc = "directory for tracerd's runtime state" },
    { .section = "daemon",
      .name = "log",
      .type = K_LOG,
      .off = F (log_target),
      .dflt = "syslog",
      .doc_default = "syslog",
      .desc = "where tracerd logs: syslog, stderr or an absolute file path" },
    { .section = "daemon",
      .name = "log_level",
      .type = K_ENUM,
      .off = F (log_level),
      .enums = log_levels,
      .dflt = "info",
      .doc_default = "info",
      .desc = "least severe message logged: error, warning, notice, info "
              "or debug" },
    { .section = "daemon",
      .name = "notify_users",
      .type = K_USERS,
      .off = F (notify_uids),
      .off_aux = F (n_notify_uids),
      .add_root = true,
      .dflt = "0",
      .doc_default = "[root]",
      .desc = "users (names or uids) allowed to notify tracerd over its "
              "socket; root always is" },
    { .section = "daemon",
      .name = "job_starters",
      .type = K_BOOL,
      .off = F (job_starters),
      .dflt = "false",
      .doc_default = "false",
      .desc = "hear job starters that run as the job's user (LSF "
              "JOB_STARTER with tracer-prolog lsf-starter): each may "
              "register only its own process tree, as its own uid, for an "
              "LSF job, at most 8 at a time per user; a step's record is "
              "kept only where LSF (daemon.bjobs) says the job is that "
              "user's and runs on this host" },
    { .section = "daemon",
      .name = "bjobs",
      .type = K_PATH,
      .off = F (bjobs_path),
      .dflt = "/usr/bin/bjobs",
      .doc_default = "/usr/bin/bjobs",
      .desc = "LSF's bjobs (its path in LSF_BINDIR), asked who owns the "
              "job a job starter speaks for and where it runs "
              "(daemon.job_starters); where it cannot be run, starters' "
              "steps are not recorded" },
    { .section = "daemon",
      .name = "textfile_dir",
      .type = K_PATH,
      .off = F (textfile_dir),
      .optional = true,
      .doc_default = "unset",
      .desc = "directory of node_exporter's textfile collector "
              "(--collector.textfile.directory), into which tracerd writes "
              "the running steps' metrics for Prometheus every "
              "store.live_interval, as tracer.prom (doc/prometheus.md); "
              "unset: none written" },
    { .section = "sampling",
      .name = "interval",
      .type = K_NUMBER,
      .off = F (interval_s),
      .min = TR_INTERVAL_MIN,
      .max = TR_INTERVAL_MAX,
      .dflt = "1",
      .doc_default = "1",
      .desc = "seconds between samples of a running job (0.1 to 3600)" },
    { .section = "sampling",
      .name = "snapshot_interval",
      .type = K_NUMBER,
      .off = F (snapshot_interval_s),
      .min = 1,
      .max = 86400,
      .zero_off = true,
      .dflt = "30",
      .doc_default = "30",
      .desc = "seconds between live snapshots of each running step for "
              "tracer-report --live: 0 (none) or 1 to 86400" },
    { .section = "sampling",
      .name = "taskstats",
      .type = K_BOOL,
      .off = F (taskstats),
      .dflt = "true",
      .doc_default = "true",
      .desc = "see every process exit through netlink taskstats (root), so "
              "processes shorter than an interval are counted; false: "
              "sample /proc only" },
    { .section = "sampling",
      .name = "kernel_log",
      .type = K_BOOL,
      .off = F (kernel_log),
      .dflt = "true",
      .doc_default = "true",
      .desc = "read the kernel log (/dev/kmsg, root) for kernel evidence "
              "of a step's failure: OOM kills, segfaults, traps, hung "
              "tasks, and node-wide block I/O errors, NFS servers not "
              "responding and GPU Xid errors (the record's events)" },
    { .section = "sampling",
      .name = "stall_after",
      .type = K_DURATION,
      .off = F (stall_after_s),
      .min = 0,
      .max = 31536000,
      .zero_off = true,
      .dflt = "300",
      .doc_default = "5min",
      .desc = "a running step whose processes used no CPU and moved no "
              "I/O for this long is stalled (its live snapshot and record "
              "say so, with what each process is blocked in); 0 turns it "
              "off" },
    { .section = "sampling",
      .name = "psi_mirror",
      .type = K_ENUM,
      .off = F (psi_mirror),
      .enums = psi_mirrors,
      .dflt = "auto",
      .doc_default = "auto",
      .desc = "on hybrid cgroup hosts, move each task into a directory of "
              "its own under the cgroup2 tree (tracer/...) for per-step "
              "pressure and CPU; on systemd hosts this takes job processes "
              "out of slurmd's unit; auto: wherever a hybrid host has the "
              "controller-less cgroup2 tree mounted, true: also log where "
              "it has none, false: never" },
    { .section = "sampling",
      .name = "delayacct",
      .type = K_ENUM,
      .off = F (delayacct),
      .enums = delayaccts,
      .dflt = "auto",
      .doc_default = "auto",
      .desc = "per-task delay accounting (kernel.task_delayacct), the "
              "source of I/O and memory stall where a step has no cgroup2 "
              "directory of its own: auto turns it on (and logs it) on "
              "hosts where steps have none (cgroup v1, or hybrid with "
              "psi_mirror false), on turns it on everywhere, off leaves "
              "the kernel setting alone" },
    { .section = "sampling",
      .name = "ebpf",
      .type = K_ENUM,
      .off = F (ebpf),
      .enums = ebpfs,
      .dflt = "auto",
      .doc_default = "auto",
      .desc = "file evidence from eBPF (the record's files: failed opens, "
              "read and write errors, the files most read and written), "
              "counted in the kernel for the steps' cgroups only: auto "
              "where it loads as fexit programs, which only the traced "
              "functions pay for (root, kernel BTF, built with eBPF, no "
              "lockdown; else the record says why not), true: also through "
              "the system-call tracepoint, which every system call of the "
              "node pays for (about 2 times slower system-call-heavy jobs), "
              "and warn where it does not load, false: never" },
    { .section = "sampling",
      .name = "gpu",
      .type = K_BOOL,
      .off = F (gpu),
      .dflt = "true",
      .doc_default = "true",
      .desc = "read GPU use through NVML when the driver library is "
              "installed" },
    { .section = "sampling",
      .name = "nvml_library",
      .type = K_PATH,
      .off = F (nvml_library),
      .optional = true,
      .doc_default = "unset",
      .desc = "NVML library to load (unset: libnvidia-ml.so.1 from the "
              "library path)" },
    { .section = "sampling",
      .name = "cmdline_max",
      .type = K_NUMBER,
      .off = F (cmdline_max),
      .min = 0,
      .max = 1024,
      .dflt = "256",
      .doc_default = "256",
      .desc = "bytes of a command line kept in the tool table (0: none)" },
    { .section = "sampling",
      .name = "proc_reads",
      .type = K_NUMBER,
      .off = F (proc_reads),
      .min = 0,
      .max = 1000000,
      .dflt = "1",
      .doc_default = "1",
      .desc = "processes of a step whose /proc files are read again at "
              "each sample, in turn (0: all; all without taskstats)" },
    { .section = "sampling",
      .name = "redact",
      .type = K_PATTERNS,
      .off = F (redact),
      .doc_default = "passwords, tokens, keys, URL credentials",
      .desc = "extended regular expressions, matched without regard to "
              "case, of secrets in recorded command lines: the last "
              "parenthesized part of a match (else all of it) becomes ***; "
              "[] redacts nothing" },
    { .section = "tools",
      .name = "subcommands",
      .type = K_PATTERNS,
      .off = F (tool_subcommands),
      .globs = true,
      .doc_default = "[]",
      .desc = "programs (names or shell patterns such as mytool*) named in "
              "the tool table with their first argument, as samtools sort "
              "is, besides the built-in rules (doc/tools.md)" },
    { .section = "tools",
      .name = "interpreters",
      .type = K_PATTERNS,
      .off = F (tool_interpreters),
      .globs = true,
      .doc_default = "[]",
      .desc = "programs (names or shell patterns) named in the tool table by "
              "the script they run, as python is, besides the built-in "
              "rules (doc/tools.md)" },
    { .section = "signing",
      .name = "enabled",
      .type = K_BOOL,
      .off = F (sign_enabled),
      .dflt = "true",
      .doc_default = "true",
      .desc = "sign records with MUNGE and verify signatures when reading" },
    { .section = "signing",
      .name = "munge_socket",
      .type = K_PATH,
      .off = F (munge_socket),
      .max = CONF_MAX_SOCKET,
      .optional = true,
      .doc_default = "unset",
      .desc = "munged socket, at most 107 bytes (unset: the libmunge "
              "default)" },
    { .section = "signing",
      .name = "trusted_signers",
      .type = K_USERS,
      .off = F (signer_uids),
      .off_aux = F (n_signer_uids),
      .nonempty = true,
      .dflt = "0",
      .doc_default = "[root]",
      .desc = "users (names or uids) whose MUNGE credentials are trusted "
              "on records" },
    { .section = "report",
      .name = "admin_group",
      .type = K_GROUP,
      .off = F (admin_gid),
      .off_aux = F (admin_group_set),
      .optional = true,
      .doc_default = "unset",
      .desc = "group (name or gid) whose members may read every user's "
              "records" },
    { .section = "report.diagnosis",
      .name = "cpu_bound_efficiency",
      .type = K_NUMBER,
      .off = F (diagnosis.cpu_bound_efficiency),
      .min = 0,
      .max = 1,
      .dflt = "0.9",
      .doc_default = "0.9",
      .desc = "CPU efficiency (CPU time over allocated core time) at or "
              "above which a step is CPU-bound" },
    { .section = "report.diagnosis",
      .name = "cpu_pressure",
      .type = K_NUMBER,
      .off = F (diagnosis.cpu_pressure),
      .min = 0,
      .max = 1,
      .dflt = "0.2",
      .doc_default = "0.2",
      .desc = "fraction of the time some task waited for a CPU (PSI) at or "
              "above which a step is CPU-bound" },
    { .section = "report.diagnosis",
      .name = "cpu_pressure_starved",
      .type = K_NUMBER,
      .off = F (diagnosis.cpu_pressure_starved),
      .min = 0,
      .max = 1,
      .dflt = "0.05",
      .doc_default = "0.05",
      .desc = "CPU pressure at or above which a step of low CPU efficiency "
              "is short of CPU, not over-allocated" },
    { .section = "report.diagnosis",
      .name = "low_efficiency",
      .type = K_NUMBER,
      .off = F (diagnosis.low_efficiency),
      .min = 0,
      .max = 1,
      .dflt = "0.5",
      .doc_default = "0.5",
      .desc = "CPU efficiency below which a step is over-allocated, or "
              "I/O-bound when it waits on I/O" },
    { .section = "report.diagnosis",
      .name = "io_pressure",
      .type = K_NUMBER,
      .off = F (diagnosis.io_pressure),
      .min = 0,
      .max = 1,
      .dflt = "0.2",
      .doc_default = "0.2",
      .desc = "fraction of the time some task waited for I/O (PSI) at or "
              "above which a step of low CPU efficiency is I/O-bound" },
    { .section = "report.diagnosis",
      .name = "mem_pressure",
      .type = K_NUMBER,
      .off = F (diagnosis.mem_pressure),
      .min = 0,
      .max = 1,
      .dflt = "0.1",
      .doc_default = "0.1",
      .desc = "fraction of the time some task waited for memory (PSI) above "
              "which a step is under memory pressure" },
    { .section = "report.diagnosis",
      .name = "mem_near_limit",
      .type = K_NUMBER,
      .off = F (diagnosis.mem_near_limit),
      .min = 0,
      .max = 1,
      .dflt = "0.95",
      .doc_default = "0.95",
      .desc = "peak memory over the memory limit at or above which a step is "
              "under memory pressure" },
    { .section = "report.diagnosis",
      .name = "swap_min",
      .type = K_BYTES,
      .off = F (diagnosis.swap_min),
      .min = 0,
      .max = 1125899906842624.0,
      .dflt = "0",
      .doc_default = "0",
      .desc = "swap use above which a step is under memory pressure" },
    { .section = "report.diagnosis",
      .name = "mem_low_fraction",
      .type = K_NUMBER,
      .off = F (diagnosis.mem_low_fraction),
      .min = 0,
      .max = 1,
      .dflt = "0.5",
      .doc_default = "0.5",
      .desc = "peak memory over the memory request below which memory is "
              "over-allocated" },
    { .section = "report.diagnosis",
      .name = "mem_min_request",
      .type = K_BYTES,
      .off = F (diagnosis.mem_min_request),
      .min = 0,
      .max = 1125899906842624.0,
      .dflt = "1G",
      .doc_default = "1G",
      .desc = "memory requests up to this size are never called "
              "over-allocated" },
    { .section = "report.diagnosis",
      .name = "idle_fraction",
      .type = K_NUMBER,
      .off = F (diagnosis.idle_fraction),
      .min = 0,
      .max = 1,
      .dflt = "0.5",
      .doc_default = "0.5",
      .desc = "fraction of the time without CPU or storage I/O above which a "
              "step is idle" },
    { .section = "report.diagnosis",
      .name = "idle_min_elapsed",
      .type = K_DURATION,
      .off = F (diagnosis.idle_min_elapsed),
      .min = 0,
      .max = 31536000,
      .dflt = "1min",
      .doc_default = "1min",
      .desc = "shortest step that can be called idle" },
    { .section = "report.diagnosis",
      .name = "stalled_after",
      .type = K_DURATION,
      .off = F (diagnosis.stalled_after),
      .min = 0,
      .max = 31536000,
      .dflt = "10min",
      .doc_default = "10min",
      .desc = "longest stretch without CPU or storage I/O at or above which "
              "a step is stalled" },
    { .section = "report.diagnosis",
      .name = "throttled_fraction",
      .type = K_NUMBER,
      .off = F (diagnosis.throttled_fraction),
      .min = 0,
      .max = 1,
      .dflt = "0.05",
      .doc_default = "0.05",
      .desc = "fraction of the time throttled by the CPU quota above which a "
              "step is throttled" },
    { .section = "report.diagnosis",
      .name = "imbalance",
      .type = K_NUMBER,
      .off = F (diagnosis.imbalance),
      .min = 0,
      .max = 1,
      .dflt = "0.5",
      .doc_default = "0.5",
      .desc = "the idlest node's CPU time over the busiest's below which a "
              "multi-node step is imbalanced" },
    { .section = "report.diagnosis",
      .name = "short_step",
      .type = K_DURATION,
      .off = F (diagnosis.short_step),
      .min = 0,
      .max = 31536000,
      .dflt = "10s",
      .doc_default = "10s",
      .desc = "steps shorter than this are only checked for failures, OOM "
              "kills and missing data" },
    { .section = "report.diagnosis",
      .name = "gpu_idle_pct",
      .type = K_NUMBER,
      .off = F (diagnosis.gpu_idle_pct),
      .min = 0,
      .max = 100,
      .dflt = "10",
      .doc_default = "10",
      .desc = "mean GPU utilisation in percent below which a step's GPUs are "
              "idle" },
    { .section = "report.recommend",
      .name = "mem_quantile",
      .type = K_NUMBER,
      .off = F (recommend.mem_quantile),
      .min = 0,
      .max = 1,
      .dflt = "0.95",
      .doc_default = "0.95",
      .desc = "quantile of a step group's peak memory that the memory "
              "recommendation starts from" },
    { .section = "report.recommend",
      .name = "mem_headroom",
      .type = K_NUMBER,
      .off = F (recommend.mem_headroom),
      .min = 0,
      .max = 10,
      .dflt = "0.2",
      .doc_default = "0.2",
      .desc = "fraction added to the memory quantile (0.2: 20% more)" },
    { .section = "report.recommend",
      .name = "time_quantile",
      .type = K_NUMBER,
      .off = F (recommend.time_quantile),
      .min = 0,
      .max = 1,
      .dflt = "0.95",
      .doc_default = "0.95",
      .desc = "quantile of a step group's elapsed time that the time "
              "recommendation starts from" },
    { .section = "report.recommend",
      .name = "time_margin",
      .type = K_NUMBER,
      .off = F (recommend.time_margin),
      .min = 0,
      .max = 10,
      .dflt = "0.25",
      .doc_default = "0.25",
      .desc = "fraction added to the time quantile (0.25: 25% more)" },
    { .section = "report.recommend",
      .name = "cpu_quantile",
      .type = K_NUMBER,
      .off = F (recommend.cpu_quantile),
      .min = 0,
      .max = 1,
      .dflt = "0.9",
      .doc_default = "0.9",
      .desc = "quantile of a step group's average busy cores that the CPU "
              "recommendation starts from" },
    { .section = "report.recommend",
      .name = "min_runs",
      .type = K_COUNT,
      .off = F (recommend.min_runs),
      .min = 1,
      .max = 1000000,
      .dflt = "3",
      .doc_default = "3",
      .desc = "fewest runs of a step group before anything is recommended "
              "for it" },
    { .section = "report.recommend",
      .name = "last_runs",
      .type = K_COUNT,
      .off = F (recommend.last_runs),
      .min = 0,
      .max = 1000000,
      .dflt = "0",
      .doc_default = "0",
      .desc = "use only the newest this many runs of a step group (0: all)" },
    { .section = "report.recommend",
      .name = "mem_min",
      .type = K_BYTES,
      .off = F (recommend.mem_min),
      .min = 0,
      .max = 1125899906842624.0,
      .dflt = "256M",
      .doc_default = "256M",
      .desc = "smallest memory request recommended" },
    { .section = "report.recommend",
      .name = "time_min",
      .type = K_DURATION,
      .off = F (recommend.time_min),
      .min = 0,
      .max = 31536000,
      .dflt = "5min",
      .doc_default = "5min",
      .desc = "shortest time limit recommended" },
    { .section = "report.regression",
      .name = "min_history",
      .type = K_COUNT,
      .off = F (regression.min_history),
      .min = 2,
      .max = 100000,
      .dflt = "5",
      .doc_default = "5",
      .desc = "earlier runs a step group needs before a run is compared with "
              "them" },
    { .section = "report.regression",
      .name = "max_history",
      .type = K_COUNT,
      .off = F (regression.max_history),
      .min = 2,
      .max = 100000,
      .dflt = "30",
      .doc_default = "30",
      .desc = "newest earlier runs a run is compared with (at least "
              "min_history)" },
    { .section = "report.regression",
      .name = "z",
      .type = K_NUMBER,
      .off = F (regression.z),
      .min = 0,
      .max = 1000,
      .min_open = true,
      .dflt = "4",
      .doc_default = "4",
      .desc = "robust z-score (distance from the history's median in MADs "
              "scaled by 1.4826) beyond which a run is a regression" },
    { .section = "report.regression",
      .name = "ratio",
      .type = K_NUMBER,
      .off = F (regression.ratio),
      .min = 1,
      .max = 1000,
      .min_open = true,
      .dflt = "1.5",
      .doc_default = "1.5",
      .desc = "ratio to the history's median beyond which a run is a "
              "regression" },
    { .section = "report.cost",
      .name = "core_hour",
      .type = K_NUMBER,
      .off = F (cost.core_hour),
      .min = 0,
      .max = 1000000,
      .dflt = "0",
      .doc_default = "0",
      .desc = "price of one allocated core for one hour (0 everywhere: no "
              "money shown)" },
    { .section = "report.cost",
      .name = "gb_hour",
      .type = K_NUMBER,
      .off = F (cost.gb_hour),
      .min = 0,
      .max = 1000000,
      .dflt = "0",
      .doc_default = "0",
      .desc = "price of one GiB of requested memory for one hour" },
    { .section = "report.cost",
      .name = "gpu_hour",
      .type = K_NUMBER,
      .off = F (cost.gpu_hour),
      .min = 0,
      .max = 1000000,
      .dflt = "0",
      .doc_default = "0",
      .desc = "price of one allocated GPU for one hour" },
    { .section = "report.cost",
      .name = "currency",
      .type = K_TEXT,
      .off = F (cost.currency),
      .dflt = "",
      .doc_default = "\"\"",
      .desc = "currency written after amounts of money, e.g. EUR (up to 16 "
              "bytes)" },
    { .section = "report.cost",
      .name = "partitions",
      .type = K_PARTITIONS,
      .off = F (cost.partitions),
      .off_aux = F (cost.n_partitions),
      .doc_default = "{}",
      .desc = "prices per partition, NAME: {core_hour, gb_hour, gpu_hour}; a "
              "price a partition leaves out is the report.cost one (at most "
              "256 partitions)" },
    { .section = "mail",
      .name = "sendmail",
      .type = K_PATH,
      .off = F (mail.sendmail),
      .dflt = "/usr/sbin/sendmail",
      .doc_default = "/usr/sbin/sendmail",
      .desc = "sendmail-compatible program that delivers mail (run with "
              "-i, -f FROM when mail.from is set, and the recipients)" },
    { .section = "mail",
      .name = "from",
      .type = K_TEXT,
      .off = F (mail.from),
      .max = 256,
      .dflt = "",
      .doc_default = "\"\"",
      .desc = "sender address (empty: the MTA's default, the user running "
              "tracer-mail)" },
    { .section = "mail",
      .name = "domain",
      .type = K_TEXT,
      .off = F (mail.domain),
      .max = 256,
      .dflt = "",
      .doc_default = "\"\"",
      .desc = "domain appended to user names that have none in digests "
              "(like Slurm's MailDomain; empty: local delivery)" },
    { .section = "mail",
      .name = "wait",
      .type = K_DURATION,
      .off = F (mail.wait_s),
      .min = 0,
      .max = 100,
      .dflt = "60s",
      .doc_default = "60s",
      .desc = "longest tracer-mail waits for a job's records before it "
              "sends Slurm's own notification (Slurm kills MailProg after "
              "120 s)" },
    { .section = "mail",
      .name = "settle",
      .type = K_DURATION,
      .off = F (mail.settle_s),
      .min = 0,
      .max = 30,
      .dflt = "3s",
      .doc_default = "3s",
      .desc = "how long no new record may arrive before a job's records are "
              "taken as complete" },
    { .section = "mail",
      .name = "tracing",
      .type = K_ENUM,
      .off = F (mail.tracing),
      .enums = mail_tracings,
      .dflt = "optin",
      .doc_default = "optin",
      .desc = "how the plugin is enabled (its enable= argument): optin "
              "waits for records only of jobs submitted with --tracer or "
              "that already have some; all waits for every job" },
    { .section = "mail",
      .name = "summary",
      .type = K_ENUM,
      .off = F (mail.summary),
      .enums = mail_summaries,
      .dflt = "actionable",
      .doc_default = "actionable",
      .desc = "when an end-of-job mail becomes a summary: always, "
              "actionable (the job failed, or a finding reaches "
              "mail.severity) or never" },
    { .section = "mail",
      .name = "severity",
      .type = K_ENUM,
      .off = F (mail.severity),
      .enums = mail_severities,
      .dflt = "warning",
      .doc_default = "warning",
      .desc = "least severe diagnosis finding that makes a job actionable: "
              "info, warning or critical" },
    { .section = "mail",
      .name = "min_elapsed",
      .type = K_DURATION,
      .off = F (mail.min_elapsed_s),
      .min = 0,
      .max = 31536000,
      .dflt = "0",
      .doc_default = "0",
      .desc = "jobs that ended well and ran shorter than this get Slurm's "
              "own notification" },
    { .section = "mail",
      .name = "attach_report",
      .type = K_BOOL,
      .off = F (mail.attach_report),
      .dflt = "true",
      .doc_default = "true",
      .desc = "attach the job's HTML report (tracer-report --html) to "
              "summaries" },
    { .section = "mail",
      .name = "attach_max",
      .type = K_BYTES,
      .off = F (mail.attach_max_bytes),
      .min = 0,
      .max = 67108864,
      .dflt = "4M",
      .doc_default = "4M",
      .desc = "largest HTML report attached; a larger one is left out and "
              "the summary says how to make it" },
    { .section = "mail",
      .name = "report_url",
      .type = K_TEXT,
      .off = F (mail.report_url),
      .max = 256,
      .dflt = "",
      .doc_default = "\"\"",
      .desc = "link to the job's report put in summaries, %j standing for "
              "the job id (empty: no link)" },
    { .section = "mail",
      .name = "on_stall",
      .type = K_BOOL,
      .off = F (mail.on_stall),
      .dflt = "false",
      .doc_default = "false",
      .desc = "tracerd mails a step's user, once per step, when the step "
              "makes no progress for sampling.stall_after, with what its "
              "processes are blocked in; nothing is ever done to the job" },
    { .section = "prolog",
      .name = "timeout",
      .type = K_DURATION,
      .off = F (prolog.timeout_s),
      .min = 1,
      .max = 25,
      .dflt = "10s",
      .doc_default = "10s",
      .desc = "longest a run of tracer-prolog may take, everything included "
              "(OpenPBS kills its prologue after 30 s)" },
    { .section = "prolog",
      .name = "qstat",
      .type = K_PATH,
      .off = F (prolog.qstat),
      .dflt = "/opt/pbs/bin/qstat",
      .doc_default = "/opt/pbs/bin/qstat",
      .desc = "PBS's qstat, asked (qstat -f -F json JOBID) for what the PBS "
              "prologue is not told: job name, queue, account, resources; "
              "a path that does not exist turns the query off" },
    { .section = "prolog",
      .name = "error_exit",
      .type = K_COUNT,
      .off = F (prolog.error_exit),
      .min = 0,
      .max = 255,
      .dflt = "0",
      .doc_default = "0",
      .desc = "exit status of tracer-prolog when it cannot do its work; 0 "
              "never fails or requeues a job because of tracer (PBS aborts "
              "a job on 1 and requeues it on other values, LSF requeues on "
              "any)" },
    { .section = "prolog",
      .name = "lsf_unit_for_limits",
      .type = K_ENUM,
      .off = F (prolog.lsf_unit),
      .enums = lsf_units,
      .dflt = "MB",
      .doc_default = "MB",
      .desc = "LSF's LSF_UNIT_FOR_LIMITS (KB, MB, GB, TB, PB or EB): the "
              "unit of rusage[mem=] in LSB_EFFECTIVE_RSRCREQ" },
};

#undef F

#define NKEYS (sizeof (schema) / sizeof (schema[0]))

/* A dotted name is a subsection, a mapping under its parent's key. */
static const char *const sections[] = {
    "cluster",
    "store",
    "spool",
    "daemon",
    "sampling",
    "tools",
    "signing",
    "report",
    "report.diagnosis",
    "report.recommend",
    "report.regression",
    "report.cost",
    "mail",
    "prolog",
};

#define NSECTIONS (sizeof (sections) / sizeof (sections[0]))

struct parser {
    yaml_parser_t yp;
    bool yp_init;
    const char *name; /* file name in error locations */
    const char *text; /* the input, to locate reader errors */
    size_t len;
    tr_conf_t *conf; /* the working copy */
    tr_error_t *error;
    int errnum;                  /* errno for the caller */
    int section_line[NSECTIONS]; /* 1-based line of each, 0 = not seen */
    int key_line[NKEYS];         /* likewise for keys */
    yaml_mark_t value_mark[NKEYS];
    char shown[CONF_SHOW_MAX + 8];
};

/* Typed views of a schema row's field in a conf. */
#define FIELD(conf, off, type) ((type *)(void *)((char *)(conf) + (off)))

/* Is this a string-valued row (the conf owns a char *)? */
static bool is_string_key (const struct key *k)
{
    return k->type == K_NAME || k->type == K_PATH || k->type == K_LOG
           || k->type == K_TEXT;
}

static void partitions_free (struct tr_conf_partition_cost *list, size_t n)
{
    if (list) {
        for (size_t i = 0; i < n; i++)
            free (list[i].name);
        free (list);
    }
}

static void patterns_free (char **list)
{
    if (list) {
        for (size_t i = 0; list[i]; i++)
            free (list[i]);
        free (list);
    }
}

/* Free everything a conf owns, leaving its pointers NULL. */
static void conf_clear (tr_conf_t *conf)
{
    for (size_t i = 0; i < NKEYS; i++) {
        const struct key *k = &schema[i];
        if (is_string_key (k)) {
            char **sp = FIELD (conf, k->off, char *);
            free (*sp);
            *sp = NULL;
        }
        else if (k->type == K_USERS) {
            uid_t **up = FIELD (conf, k->off, uid_t *);
            free (*up);
            *up = NULL;
            *FIELD (conf, k->off_aux, size_t) = 0;
        }
        else if (k->type == K_PATTERNS) {
            patterns_free (*FIELD (conf, k->off, char **));
            *FIELD (conf, k->off, char **) = NULL;
        }
        else if (k->type == K_PARTITIONS) {
            struct tr_conf_partition_cost **pp =
                FIELD (conf, k->off, struct tr_conf_partition_cost *);
            partitions_free (*pp, *FIELD (conf, k->off_aux, size_t));
            *pp = NULL;
            *FIELD (conf, k->off_aux, size_t) = 0;
        }
    }
}

/* Deep copy src into dst.  On ENOMEM dst holds nothing to free. */
static int conf_copy (tr_conf_t *dst, const tr_conf_t *src)
{
    *dst = *src;
    for (size_t i = 0; i < NKEYS; i++) {
        const struct key *k = &schema[i];
        if (is_string_key (k))
            *FIELD (dst, k->off, char *) = NULL;
        else if (k->type == K_USERS)
            *FIELD (dst, k->off, uid_t *) = NULL;
        else if (k->type == K_PATTERNS)
            *FIELD (dst, k->off, char **) = NULL;
        else if (k->type == K_PARTITIONS) {
            *FIELD (dst, k->off, struct tr_conf_partition_cost *) = NULL;
            *FIELD (dst, k->off_aux, size_t) = 0;
        }
    }
    for (size_t i = 0; i < NKEYS; i++) {
        const struct key *k = &schema[i];
        if (is_string_key (k)) {
            const char *s = *FIELD (src, k->off, char *);
            if (s && !(*FIELD (dst, k->off, char *) = strdup (s)))
                goto nomem;
        }
        else if (k->type == K_USERS) {
            const uid_t *u = *FIELD (src, k->off, uid_t *);
            size_t n = *FIELD (src, k->off_aux, size_t);
            uid_t *copy;
            if (!u || n == 0)
                continue;
            if (!(copy = calloc (n, sizeof (*copy))))
                goto nomem;
            memcpy (copy, u, n * sizeof (*copy));
            *FIELD (dst, k->off, uid_t *) = copy;
        }
        else if (k->type == K_PATTERNS) {
            char **const *sl = FIELD (src, k->off, char **);
            char **copy;
            size_t n = 0;
            if (!*sl)
                continue;
            while ((*sl)[n])
                n++;
            if (!(copy = calloc (n + 1, sizeof (*copy))))
                goto nomem;
            *FIELD (dst, k->off, char **) = copy;
            for (size_t j = 0; j < n; j++) {
                if (!(copy[j] = strdup ((*sl)[j])))
                    goto nomem;
            }
        }
        else if (k->type == K_PARTITIONS) {
            const struct tr_conf_partition_cost *pl =
                *FIELD (src, k->off, struct tr_conf_partition_cost *);
            size_t n = *FIELD (src, k->off_aux, size_t);
            struct tr_conf_partition_cost *copy;
            if (!pl || n == 0)
                continue;
            if (!(copy = calloc (n, sizeof (*copy))))
                goto nomem;
            /* Names NULL until copied, so conf_clear can free a half
             * copy.
             */
            *FIELD (dst, k->off, struct tr_conf_partition_cost *) = copy;
            *FIELD (dst, k->off_aux, size_t) = n;
            for (size_t j = 0; j < n; j++) {
                copy[j] = pl[j];
                if (!(copy[j].name = strdup (pl[j].name)))
                    goto nomem;
            }
        }
    }
    return 0;
nomem:
    conf_clear (dst);
    errno = ENOMEM;
    return -1;
}

/* Copy s into p->shown for quoting in a message: bounded, with control
 * characters replaced, because messages end up in syslog and terminals.
 */
static const char *show (struct parser *p, const char *s)
{
    size_t i;

    for (i = 0; i < CONF_SHOW_MAX && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        p->shown[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (s[i]) {
        memcpy (p->shown + i, "...", 4);
        return p->shown;
    }
    p->shown[i] = '\0';
    return p->shown;
}

static int fail_at (struct parser *p,
                    const yaml_mark_t *m,
                    int errnum,
                    const char *fmt,
                    ...) __attribute__ ((format (printf, 4, 5)));

static int fail_at (struct parser *p,
                    const yaml_mark_t *m,
                    int errnum,
                    const char *fmt,
                    ...)
{
    char buf[sizeof (p->error->text)];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    p->errnum = errnum;
    return tr_errprintf_at (p->error, p->name, m ? (int)m->line + 1 : 0,
                            m ? (int)m->column + 1 : 0, "%s", buf);
}

static int fail_key (struct parser *p,
                     const struct key *k,
                     const yaml_mark_t *m,
                     const char *fmt,
                     ...) __attribute__ ((format (printf, 4, 5)));

/* A value error: "file:line:col: section.key: message". */
static int fail_key (struct parser *p,
                     const struct key *k,
                     const yaml_mark_t *m,
                     const char *fmt,
                     ...)
{
    char buf[sizeof (p->error->text)];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    return fail_at (p, m, EINVAL, "%s.%s: %s", k->section, k->name, buf);
}

static int nomem (struct parser *p)
{
    return fail_at (p, NULL, ENOMEM, "out of memory");
}

/* Levenshtein distance, or SIZE_MAX when a string is too long to be a
 * plausible typo of a schema name.
 */
static size_t edit_distance (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    size_t row[CONF_MAX_NAME + 1];

    if (la > CONF_MAX_NAME || lb > CONF_MAX_NAME)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Is d close enough for a suggestion?  Never suggest a name that shares
 * nothing with what was typed ("ab" -> "cd").
 */
static bool near (size_t d, const char *typed)
{
    return d <= CONF_SUGGEST_MAX && d < strlen (typed);
}

/* The last part of a section's name ("diagnosis" of
 * "report.diagnosis"), and whether the section sits directly in parent
 * (NULL: the top level).
 */
static const char *section_leaf (const char *section, const char *parent)
{
    size_t pl;

    if (!parent)
        return strchr (section, '.') ? NULL : section;
    pl = strlen (parent);
    if (strncmp (section, parent, pl) || section[pl] != '.'
        || strchr (section + pl + 1, '.'))
        return NULL;
    return section + pl + 1;
}

/* The section called name in parent (NULL: a top-level section). */
static int section_index (const char *parent, const char *name)
{
    for (size_t i = 0; i < NSECTIONS; i++) {
        const char *leaf = section_leaf (sections[i], parent);
        if (leaf && !strcmp (leaf, name))
            return (int)i;
    }
    return -1;
}

static int key_index (const char *section, const char *name)
{
    for (size_t i = 0; i < NKEYS; i++) {
        if (!strcmp (schema[i].section, section)
            && !strcmp (schema[i].name, name))
            return (int)i;
    }
    return -1;
}

static const char *event_kind (const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return "scalar";
    case YAML_SEQUENCE_START_EVENT:
        return "sequence";
    case YAML_MAPPING_START_EVENT:
        return "mapping";
    default:
        return "YAML event";
    }
}

/* YAML null: an empty or '~'/'null' plain scalar (YAML 1.2 core schema).
 * A quoted "" is an empty string, not null.
 */
static bool is_null (const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;

    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    return !v[0] || !strcmp (v, "~") || !strcmp (v, "null")
           || !strcmp (v, "Null") || !strcmp (v, "NULL");
}

/* Turn a libyaml failure into an error.  Reader errors (bad UTF-8,
 * control characters) carry a byte offset instead of a mark.
 */
static int yaml_fail (struct parser *p)
{
    yaml_parser_t *yp = &p->yp;
    const char *problem = yp->problem ? yp->problem : "invalid YAML";

    switch (yp->error) {
    case YAML_MEMORY_ERROR:
        return nomem (p);
    case YAML_READER_ERROR: {
        yaml_mark_t m = { 0, 0, 0 };
        size_t end = yp->problem_offset < p->len ? yp->problem_offset : p->len;
        for (size_t i = 0; i < end; i++) {
            unsigned char c = (unsigned char)p->text[i];
            if (c == '\n') {
                m.line++;
                m.column = 0;
            }
            else if ((c & 0xc0) != 0x80)
                m.column++;
        }
        if (yp->problem_value >= 0)
            return fail_at (p, &m, EINVAL, "%s (byte 0x%02x)", problem,
                            (unsigned)yp->problem_value & 0xffu);
        return fail_at (p, &m, EINVAL, "%s", problem);
    }
    default:
        if (yp->context)
            return fail_at (p, &yp->problem_mark, EINVAL,
                            "%s (%s started at line %d)", problem, yp->context,
                            (int)yp->context_mark.line + 1);
        return fail_at (p, &yp->problem_mark, EINVAL, "%s", problem);
    }
}

/* Next event, with the YAML features this format does not use turned
 * into errors: aliases and anchors (a config that refers to itself is
 * hard to read and invites billion-laughs inputs) and explicit tags (all
 * values are read from their text, so a tag would promise something the
 * parser does not do).  On success the caller owns *ev.
 */
static int next_event (struct parser *p, yaml_event_t *ev)
{
    const yaml_char_t *anchor = NULL;
    const yaml_char_t *tag = NULL;

    if (!yaml_parser_parse (&p->yp, ev))
        return yaml_fail (p);
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        fail_at (p, &ev->start_mark, EINVAL, "aliases are not supported");
        goto error;
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
        if (strlen ((const char *)ev->data.scalar.value)
            != ev->data.scalar.length) {
            fail_at (p, &ev->start_mark, EINVAL,
                     "NUL characters are not allowed");
            goto error;
        }
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
        break;
    default:
        break;
    }
    if (anchor) {
        fail_at (p, &ev->start_mark, EINVAL, "anchors are not supported");
        goto error;
    }
    if (tag) {
        fail_at (p, &ev->start_mark, EINVAL, "tags are not supported");
        goto error;
    }
    return 0;
error:
    yaml_event_delete (ev);
    return -1;
}

/* Numeric ids are taken as given (they need not exist in passwd/group,
 * as with chown).  Returns 1 and *idp for a number, 0 for a name, -1
 * for a number out of range.
 */
static int parse_id (const char *s, unsigned long *idp)
{
    unsigned long v;
    char *end;

    if (!s[0] || strspn (s, "0123456789") != strlen (s))
        return 0;
    errno = 0;
    v = strtoul (s, &end, 10);
    /* (uid_t)-1 means "no change" to chown and friends. */
    if (errno || *end || v >= (unsigned long)(uid_t)-1)
        return -1;
    *idp = v;
    return 1;
}

/* Resolve a user name or uid.  Returns 0, or -1 with errno ENOENT (no
 * such user), ERANGE (uid out of range), ENOMEM or a lookup error.
 */
static int resolve_user (const char *s, uid_t *uidp)
{
    unsigned long id;
    int rc;

    if ((rc = parse_id (s, &id)) != 0) {
        if (rc < 0) {
            errno = ERANGE;
            return -1;
        }
        *uidp = (uid_t)id;
        return 0;
    }
    return tr_nss_user_by_name (s, uidp, NULL);
}

static int resolve_group (const char *s, gid_t *gidp)
{
    unsigned long id;
    int rc;

    if ((rc = parse_id (s, &id)) != 0) {
        if (rc < 0) {
            errno = ERANGE;
            return -1;
        }
        *gidp = (gid_t)id;
        return 0;
    }
    return tr_nss_group_by_name (s, gidp);
}

static int user_fail (struct parser *p,
                      const struct key *k,
                      const yaml_mark_t *m,
                      const char *s)
{
    char ebuf[128];

    if (errno == ENOMEM)
        return nomem (p);
    if (errno == ENOENT)
        return fail_key (p, k, m, "unknown user '%s'", show (p, s));
    if (errno == ERANGE)
        return fail_key (p, k, m, "'%s' is not a valid uid", show (p, s));
    return fail_key (p, k, m, "cannot look up user '%s': %s", show (p, s),
                     strerror_r (errno, ebuf, sizeof (ebuf)));
}

static int group_fail (struct parser *p,
                       const struct key *k,
                       const yaml_mark_t *m,
                       const char *s)
{
    char ebuf[128];

    if (errno == ENOMEM)
        return nomem (p);
    if (errno == ENOENT)
        return fail_key (p, k, m, "unknown group '%s'", show (p, s));
    if (errno == ERANGE)
        return fail_key (p, k, m, "'%s' is not a valid gid", show (p, s));
    return fail_key (p, k, m, "cannot look up group '%s': %s", show (p, s),
                     strerror_r (errno, ebuf, sizeof (ebuf)));
}

static bool has_control (const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            return true;
    }
    return false;
}

/* The name ends up as a directory in the shared store, so it must not
 * be able to climb out of it or hide ("..", ".x", "a/b").
 */
static bool valid_name (const char *s)
{
    size_t len = strlen (s);

    if (len < 1 || len > CONF_MAX_NAME || s[0] == '.')
        return false;
    return strspn (s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "abcdefghijklmnopqrstuvwxyz"
                      "0123456789._-")
           == len;
}

static int check_path (struct parser *p,
                       const struct key *k,
                       const yaml_mark_t *m,
                       const char *s)
{
    if (s[0] != '/')
        return fail_key (p, k, m, "must be an absolute path");
    if (strlen (s) >= PATH_MAX)
        return fail_key (p, k, m, "path is longer than %d bytes", PATH_MAX - 1);
    if (has_control (s))
        return fail_key (p, k, m, "path contains a control character");
    /* a unix socket: bind() and connect() would fail on a longer one, at
     * start or, worse, at every job
     */
    if (k->max > 0 && strlen (s) > (size_t)k->max)
        return fail_key (p, k, m,
                         "path is %zu bytes long; a unix socket path holds "
                         "at most %d",
                         strlen (s), (int)k->max);
    return 0;
}

/* Permission bits are always read as octal, whether written 0640, 640,
 * 0o640 or "0640": a decimal reading of 640 is never what was meant.
 */
static int parse_mode (const char *s, mode_t *modep)
{
    unsigned long v;
    char *end;

    if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        s += 2;
    if (!s[0] || strlen (s) > 6 || strspn (s, "01234567") != strlen (s))
        return -1;
    errno = 0;
    v = strtoul (s, &end, 8);
    if (errno || *end || v > 07777)
        return -1;
    *modep = (mode_t)v;
    return 0;
}

/* Permission bits that are safe for what they are given to.  Record
 * files are data, read by their owner and group: no write for group or
 * others, no execute, setuid, setgid or sticky bit (at most 0644).  Store
 * directories: no write for others, ever (a world-writable store lets
 * anyone plant names or fill it); group write only with the sticky bit
 * (so that a group that writes records cannot rename or remove others');
 * no setuid bit (meaningless on a directory, so a typo).  The setgid bit
 * is allowed: new files then inherit the directory's group.
 */
static int check_mode (struct parser *p,
                       const struct key *k,
                       const yaml_mark_t *m,
                       const char *s,
                       mode_t v)
{
    const char *why = NULL;

    if (k->mode == MODE_FILE) {
        if (v & S_ISUID)
            why = "sets the setuid bit";
        else if (v & S_ISGID)
            why = "sets the setgid bit";
        else if (v & S_ISVTX)
            why = "sets the sticky bit";
        else if (v & S_IWOTH)
            why = "lets others write";
        else if (v & S_IWGRP)
            why = "lets the group write";
        else if (v & (S_IXUSR | S_IXGRP | S_IXOTH))
            why = "makes records executable";
        if (why)
            return fail_key (p, k, m,
                             "'%s' %s; record files may have at most 0644 "
                             "(no write for group or others, no execute, "
                             "setuid, setgid or sticky bit)",
                             show (p, s), why);
    }
    else if (k->mode == MODE_DIR) {
        if (v & S_IWOTH)
            why = "lets others write";
        else if (v & S_ISUID)
            why = "sets the setuid bit";
        else if ((v & S_IWGRP) && !(v & S_ISVTX))
            why = "lets the group write without the sticky bit";
        if (why)
            return fail_key (p, k, m,
                             "'%s' %s; store directories may have at most "
                             "02755, or 03775 for a group that writes "
                             "records",
                             show (p, s), why);
    }
    return 0;
}

/* A plain decimal number.  strtod alone would also take "inf", "nan"
 * and hex floats, none of which a reader of the file would expect.
 */
static int parse_number (const char *s, double *vp)
{
    double v;
    char *end;

    if (!s[0] || strspn (s, "0123456789+-.eE") != strlen (s))
        return -1;
    errno = 0;
    v = strtod (s, &end);
    if (errno || *end || !isfinite (v))
        return -1;
    *vp = v;
    return 0;
}

/* A number followed by a unit from units[] (each "suffix", factor),
 * the first being the bare number's.  Units are compared exactly, so
 * "5S" or "1 G" are errors rather than guesses.
 */
struct unit {
    const char *suffix;
    double factor;
};

static int parse_with_unit (const char *s, const struct unit *units, double *vp)
{
    size_t n = strspn (s, "0123456789+-.eE");
    char num[64];
    double v;

    if (n == 0 || n >= sizeof (num))
        return -1;
    memcpy (num, s, n);
    num[n] = '\0';
    if (parse_number (num, &v) < 0)
        return -1;
    for (const struct unit *u = units; u->suffix; u++) {
        if (!strcmp (s + n, u->suffix)) {
            v *= u->factor;
            if (!isfinite (v))
                return -1;
            *vp = v;
            return 0;
        }
    }
    return -1;
}

/* Sizes use binary units, as Slurm's --mem does: 1G is 1024M. */
static const struct unit byte_units[] = {
    { "", 1.0 },
    { "B", 1.0 },
    { "K", 1024.0 },
    { "KB", 1024.0 },
    { "KiB", 1024.0 },
    { "k", 1024.0 },
    { "M", 1048576.0 },
    { "MB", 1048576.0 },
    { "MiB", 1048576.0 },
    { "G", 1073741824.0 },
    { "GB", 1073741824.0 },
    { "GiB", 1073741824.0 },
    { "T", 1099511627776.0 },
    { "TB", 1099511627776.0 },
    { "TiB", 1099511627776.0 },
    { "P", 1125899906842624.0 },
    { "PB", 1125899906842624.0 },
    { "PiB", 1125899906842624.0 },
    { NULL, 0 },
};

/* A bare number stays seconds, as every other duration in the file. */
static const struct unit time_units[] = {
    { "", 1.0 },     { "s", 1.0 },     { "m", 60.0 }, { "min", 60.0 },
    { "h", 3600.0 }, { "d", 86400.0 }, { NULL, 0 },
};

/* A limit as the docs write it: "1G", "10min", else %g. */
static const char *show_limit (const struct key *k,
                               double v,
                               char *buf,
                               size_t size)
{
    static const struct unit bytes[] = {
        { "P", 1125899906842624.0 },
        { "T", 1099511627776.0 },
        { "G", 1073741824.0 },
        { "M", 1048576.0 },
        { "K", 1024.0 },
        { NULL, 0 },
    };
    static const struct unit times[] = {
        { "d", 86400.0 },
        { "h", 3600.0 },
        { "min", 60.0 },
        { NULL, 0 },
    };
    const struct unit *u = NULL;

    if (k->type == K_BYTES)
        u = bytes;
    else if (k->type == K_DURATION)
        u = times;
    for (; v != 0 && u && u->suffix; u++) {
        if (fmod (v, u->factor) == 0) {
            snprintf (buf, size, "%.15g%s", v / u->factor, u->suffix);
            return buf;
        }
    }
    snprintf (buf, size, "%.15g", v);
    return buf;
}

/* YAML 1.2 core schema booleans; yes/no/on/off (YAML 1.1) are not taken,
 * as they are in no YAML library's default schema any more.
 */
static int parse_bool (const char *s, bool *vp)
{
    if (!strcmp (s, "true") || !strcmp (s, "True") || !strcmp (s, "TRUE"))
        *vp = true;
    else if (!strcmp (s, "false") || !strcmp (s, "False")
             || !strcmp (s, "FALSE"))
        *vp = false;
    else
        return -1;
    return 0;
}

static int set_string (struct parser *p, const struct key *k, const char *s)
{
    char **sp = FIELD (p->conf, k->off, char *);
    char *copy = strdup (s);

    if (!copy)
        return nomem (p);
    free (*sp);
    *sp = copy;
    return 0;
}

static int set_enum (struct parser *p,
                     const struct key *k,
                     const yaml_mark_t *m,
                     const char *s)
{
    char names[128] = "";
    size_t len = 0;

    for (const struct enum_name *e = k->enums; e->name; e++) {
        if (!strcasecmp (e->name, s)) {
            *FIELD (p->conf, k->off, int) = e->value;
            return 0;
        }
    }
    for (const struct enum_name *e = k->enums; e->name; e++) {
        int n = snprintf (names + len, sizeof (names) - len, "%s%s",
                          len ? ", " : "", e->name);
        if (n < 0 || (size_t)n >= sizeof (names) - len)
            break;
        len += (size_t)n;
    }
    return fail_key (p, k, m, "expected one of %s, got '%s'", names,
                     show (p, s));
}

/* K_NUMBER, K_COUNT, K_BYTES and K_DURATION: a number, checked against
 * the key's range in the key's own units.
 */
static int set_number (struct parser *p,
                       const struct key *k,
                       const yaml_mark_t *m,
                       const char *s)
{
    char lo[32], hi[32];
    double v;

    switch (k->type) {
    case K_BYTES:
        if (parse_with_unit (s, byte_units, &v) < 0)
            return fail_key (p, k, m,
                             "expected a size (bytes, or a number with K, "
                             "M, G, T or P), got '%s'",
                             show (p, s));
        break;
    case K_DURATION:
        if (parse_with_unit (s, time_units, &v) < 0)
            return fail_key (p, k, m,
                             "expected a duration (seconds, or a number "
                             "with s, min, h or d), got '%s'",
                             show (p, s));
        break;
    case K_COUNT:
        if (parse_number (s, &v) < 0 || v != floor (v))
            return fail_key (p, k, m, "expected a whole number, got '%s'",
                             show (p, s));
        break;
    default:
        if (parse_number (s, &v) < 0)
            return fail_key (p, k, m, "expected a number, got '%s'",
                             show (p, s));
        break;
    }
    if (k->zero_off && v == 0)
        ;
    else if (k->zero_off && (v > k->max || v < k->min))
        return fail_key (p, k, m, "%s is out of range: 0 (off) or [%s, %s]",
                         show (p, s), show_limit (k, k->min, lo, sizeof (lo)),
                         show_limit (k, k->max, hi, sizeof (hi)));
    else if (v > k->max || v < k->min || (k->min_open && v == k->min))
        return fail_key (p, k, m, "%s is out of range %c%s, %s]", show (p, s),
                         k->min_open ? '(' : '[',
                         show_limit (k, k->min, lo, sizeof (lo)),
                         show_limit (k, k->max, hi, sizeof (hi)));
    if (k->type == K_COUNT)
        *FIELD (p->conf, k->off, int) = (int)v;
    else
        *FIELD (p->conf, k->off, double) = v;
    return 0;
}

/* Free text, such as a currency: printed next to numbers, so bounded and
 * free of control characters.
 */
static int set_text (struct parser *p,
                     const struct key *k,
                     const yaml_mark_t *m,
                     const char *s)
{
    int max = k->max > 0 ? (int)k->max : CONF_MAX_TEXT;

    if (strlen (s) > (size_t)max)
        return fail_key (p, k, m, "'%s' is longer than %d bytes", show (p, s),
                         max);
    if (has_control (s))
        return fail_key (p, k, m, "'%s' contains a control character",
                         show (p, s));
    return set_string (p, k, s);
}

/* Set a scalar-valued key from its text.  Null values were handled by
 * the caller.
 */
static int set_scalar (struct parser *p,
                       const struct key *k,
                       const yaml_mark_t *m,
                       const char *s)
{
    switch (k->type) {
    case K_NAME:
        if (!valid_name (s))
            return fail_key (p, k, m,
                             "'%s' is not a valid name (1 to %d of "
                             "A-Z a-z 0-9 . _ -, not starting with '.')",
                             show (p, s), CONF_MAX_NAME);
        return set_string (p, k, s);
    case K_PATH:
        if (check_path (p, k, m, s) < 0)
            return -1;
        return set_string (p, k, s);
    case K_LOG:
        if (strcmp (s, "syslog") && strcmp (s, "stderr") && s[0] != '/')
            return fail_key (p, k, m,
                             "expected syslog, stderr or an absolute "
                             "path, got '%s'",
                             show (p, s));
        if (s[0] == '/' && check_path (p, k, m, s) < 0)
            return -1;
        return set_string (p, k, s);
    case K_MODE: {
        mode_t v;

        if (parse_mode (s, &v) < 0)
            return fail_key (p, k, m, "'%s' is not an octal mode", show (p, s));
        if (check_mode (p, k, m, s, v) < 0)
            return -1;
        *FIELD (p->conf, k->off, mode_t) = v;
        return 0;
    }
    case K_NUMBER:
    case K_COUNT:
    case K_BYTES:
    case K_DURATION:
        return set_number (p, k, m, s);
    case K_TEXT:
        return set_text (p, k, m, s);
    case K_BOOL:
        if (parse_bool (s, FIELD (p->conf, k->off, bool)) < 0)
            return fail_key (p, k, m, "expected true or false, got '%s'",
                             show (p, s));
        return 0;
    case K_ENUM:
        return set_enum (p, k, m, s);
    case K_OWNER:
        if (!strcmp (s, "job")) {
            *FIELD (p->conf, k->off_aux, bool) = true;
            return 0;
        }
        if (resolve_user (s, FIELD (p->conf, k->off, uid_t)) < 0)
            return user_fail (p, k, m, s);
        *FIELD (p->conf, k->off_aux, bool) = false;
        return 0;
    case K_GROUP:
        if (resolve_group (s, FIELD (p->conf, k->off, gid_t)) < 0)
            return group_fail (p, k, m, s);
        *FIELD (p->conf, k->off_aux, bool) = true;
        return 0;
    case K_USERS:
    case K_PATTERNS:
    case K_PARTITIONS:
        break;
    }
    errno = EINVAL;
    return fail_key (p, k, m, "internal error: not a scalar key");
}

/* An empty value: unsets an optional key, else is an error (an empty
 * "key:" is usually a half-edited line).
 */
static int set_null (struct parser *p,
                     const struct key *k,
                     const yaml_mark_t *m)
{
    if (!k->optional)
        return fail_key (p, k, m, "missing value");
    if (is_string_key (k)) {
        char **sp = FIELD (p->conf, k->off, char *);
        free (*sp);
        *sp = NULL;
    }
    else if (k->type == K_GROUP)
        *FIELD (p->conf, k->off_aux, bool) = false;
    return 0;
}

/* Append uid to a list unless present.  The list has room (CONF_MAX_LIST
 * + 1 entries, the +1 for an implied root).
 */
static void list_add (uid_t *list, size_t *n, uid_t uid)
{
    for (size_t i = 0; i < *n; i++) {
        if (list[i] == uid)
            return;
    }
    list[(*n)++] = uid;
}

static void set_list (tr_conf_t *conf,
                      const struct key *k,
                      uid_t *list,
                      size_t n)
{
    uid_t **up = FIELD (conf, k->off, uid_t *);

    free (*up);
    *up = list;
    *FIELD (conf, k->off_aux, size_t) = n;
}

/* A user list; the SEQUENCE_START event was consumed, start is its mark. */
static int parse_users (struct parser *p,
                        const struct key *k,
                        const yaml_mark_t *start)
{
    uid_t *list;
    size_t n = 0, items = 0;
    yaml_event_t ev;

    if (!(list = calloc (CONF_MAX_LIST + 1, sizeof (*list))))
        return nomem (p);
    if (k->add_root)
        list_add (list, &n, 0);
    for (;;) {
        const char *s;
        uid_t uid;

        if (next_event (p, &ev) < 0)
            goto error;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete (&ev);
            break;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            fail_key (p, k, &ev.start_mark,
                      "expected a user name or uid, got a %s",
                      event_kind (&ev));
            goto error_event;
        }
        s = (const char *)ev.data.scalar.value;
        if (is_null (&ev)) {
            fail_key (p, k, &ev.start_mark, "empty entry in the list");
            goto error_event;
        }
        if (++items > CONF_MAX_LIST) {
            fail_key (p, k, &ev.start_mark, "more than %d entries",
                      CONF_MAX_LIST);
            goto error_event;
        }
        if (resolve_user (s, &uid) < 0) {
            user_fail (p, k, &ev.start_mark, s);
            goto error_event;
        }
        list_add (list, &n, uid);
        yaml_event_delete (&ev);
    }
    if (k->nonempty && n == 0) {
        fail_key (p, k, start, "at least one user is required");
        goto error;
    }
    set_list (p->conf, k, list, n);
    return 0;
error_event:
    yaml_event_delete (&ev);
error:
    free (list);
    return -1;
}

/* A pattern list; the SEQUENCE_START event was consumed.  Each entry
 * must compile as a POSIX extended regular expression, so a typo is
 * reported here, at its line and column, not when a job runs.
 */
static int parse_patterns (struct parser *p, const struct key *k)
{
    char **list;
    size_t n = 0;
    yaml_event_t ev;

    if (!(list = calloc (CONF_MAX_LIST + 1, sizeof (*list))))
        return nomem (p);
    for (;;) {
        const char *s;
        regex_t re;
        int rc;

        if (next_event (p, &ev) < 0)
            goto error;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete (&ev);
            break;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            fail_key (p, k, &ev.start_mark,
                      "expected a %s, got a %s",
                      k->globs ? "program name pattern"
                               : "regular expression",
                      event_kind (&ev));
            goto error_event;
        }
        s = (const char *)ev.data.scalar.value;
        if (is_null (&ev) || !*s) {
            fail_key (p, k, &ev.start_mark, "empty entry in the list");
            goto error_event;
        }
        if (n >= CONF_MAX_LIST) {
            fail_key (p, k, &ev.start_mark, "more than %d entries",
                      CONF_MAX_LIST);
            goto error_event;
        }
        if (strlen (s) > CONF_MAX_PATTERN) {
            fail_key (p, k, &ev.start_mark, "pattern longer than %d bytes",
                      CONF_MAX_PATTERN);
            goto error_event;
        }
        if (k->globs && !tr_tools_pattern_ok (s)) {
            fail_key (p, k, &ev.start_mark,
                      "'%s' is not a program name pattern: 1 to 64 of "
                      "A-Z a-z 0-9 . _ + - and * ? [ ] !",
                      show (p, s));
            goto error_event;
        }
        if (!k->globs
            && (rc = regcomp (&re, s, REG_EXTENDED | REG_ICASE)) != 0) {
            char why[128];
            regerror (rc, &re, why, sizeof (why));
            fail_key (p, k, &ev.start_mark,
                      "'%s' is not a valid extended regular expression: %s",
                      show (p, s), why);
            goto error_event;
        }
        if (!k->globs)
            regfree (&re);
        if (!(list[n] = strdup (s))) {
            nomem (p);
            goto error_event;
        }
        n++;
        yaml_event_delete (&ev);
    }
    patterns_free (*FIELD (p->conf, k->off, char **));
    *FIELD (p->conf, k->off, char **) = list;
    return 0;
error_event:
    yaml_event_delete (&ev);
error:
    patterns_free (list);
    return -1;
}

/* The prices of one partition into pc; the value's first event is ev
 * (consumed here).  Each price is a number in the range of the
 * report.cost key of the same name.
 */
static int parse_prices (struct parser *p,
                         const struct key *k,
                         struct tr_conf_partition_cost *pc,
                         yaml_event_t *ev)
{
    static const char *const names[] = { "core_hour", "gb_hour", "gpu_hour" };
    double *slot[] = { &pc->core_hour, &pc->gb_hour, &pc->gpu_hour };
    int line[3] = { 0, 0, 0 };

    if (ev->type == YAML_SCALAR_EVENT && is_null (ev)) {
        fail_key (p, k, &ev->start_mark,
                  "partition '%s': missing value (write {} for the "
                  "report.cost prices)",
                  show (p, pc->name));
        goto error_event;
    }
    if (ev->type != YAML_MAPPING_START_EVENT) {
        fail_key (p, k, &ev->start_mark,
                  "partition '%s': expected a mapping of prices, got a %s",
                  show (p, pc->name), event_kind (ev));
        goto error_event;
    }
    yaml_event_delete (ev);
    for (;;) {
        yaml_event_t val;
        const char *name;
        double v;
        int i;

        if (next_event (p, ev) < 0)
            return -1;
        if (ev->type == YAML_MAPPING_END_EVENT)
            break;
        if (ev->type != YAML_SCALAR_EVENT) {
            fail_key (p, k, &ev->start_mark,
                      "partition '%s': expected a price name, got a %s",
                      show (p, pc->name), event_kind (ev));
            goto error_event;
        }
        name = (const char *)ev->data.scalar.value;
        for (i = 0; i < 3 && strcmp (names[i], name); i++)
            ;
        if (i == 3) {
            fail_key (p, k, &ev->start_mark,
                      "partition '%s': unknown key '%s' (expected "
                      "core_hour, gb_hour or gpu_hour)",
                      pc->name, show (p, name));
            goto error_event;
        }
        if (line[i]) {
            fail_key (p, k, &ev->start_mark,
                      "partition '%s': duplicate key '%s' (first at line "
                      "%d)",
                      pc->name, names[i], line[i]);
            goto error_event;
        }
        line[i] = (int)ev->start_mark.line + 1;
        yaml_event_delete (ev);
        if (next_event (p, &val) < 0)
            return -1;
        if (val.type != YAML_SCALAR_EVENT || is_null (&val)) {
            fail_key (p, k, &val.start_mark,
                      "partition '%s': %s: expected a number, got %s", pc->name,
                      names[i],
                      val.type == YAML_SCALAR_EVENT ? "nothing"
                                                    : event_kind (&val));
            yaml_event_delete (&val);
            return -1;
        }
        if (parse_number ((const char *)val.data.scalar.value, &v) < 0 || v < 0
            || v > 1000000) {
            fail_key (p, k, &val.start_mark,
                      "partition '%s': %s: '%s' is not a price in [0, "
                      "1000000]",
                      pc->name, names[i],
                      show (p, (const char *)val.data.scalar.value));
            yaml_event_delete (&val);
            return -1;
        }
        yaml_event_delete (&val);
        *slot[i] = v;
    }
    yaml_event_delete (ev);
    return 0;
error_event:
    yaml_event_delete (ev);
    return -1;
}

/* report.cost.partitions, a mapping of partition names to prices; the
 * MAPPING_START event was consumed.  The list replaces the previous one
 * only when all of it is valid.
 */
static int parse_partitions (struct parser *p, const struct key *k)
{
    struct tr_conf_partition_cost *list, **lp;
    size_t n = 0;
    yaml_event_t ev;

    if (!(list = calloc (CONF_MAX_LIST, sizeof (*list))))
        return nomem (p);
    for (;;) {
        struct tr_conf_partition_cost *pc;
        const char *name;

        if (next_event (p, &ev) < 0)
            goto error;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete (&ev);
            break;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            fail_key (p, k, &ev.start_mark,
                      "expected a partition name, got a %s", event_kind (&ev));
            goto error_event;
        }
        name = (const char *)ev.data.scalar.value;
        if (!valid_name (name)) {
            fail_key (p, k, &ev.start_mark,
                      "'%s' is not a valid partition name (1 to %d of "
                      "A-Z a-z 0-9 . _ -, not starting with '.')",
                      show (p, name), CONF_MAX_NAME);
            goto error_event;
        }
        for (size_t i = 0; i < n; i++) {
            if (!strcmp (list[i].name, name)) {
                fail_key (p, k, &ev.start_mark, "duplicate partition '%s'",
                          name);
                goto error_event;
            }
        }
        if (n >= CONF_MAX_LIST) {
            fail_key (p, k, &ev.start_mark, "more than %d partitions",
                      CONF_MAX_LIST);
            goto error_event;
        }
        pc = &list[n];
        if (!(pc->name = strdup (name))) {
            nomem (p);
            goto error_event;
        }
        pc->core_hour = pc->gb_hour = pc->gpu_hour = NAN;
        n++;
        yaml_event_delete (&ev);
        if (next_event (p, &ev) < 0)
            goto error;
        if (parse_prices (p, k, pc, &ev) < 0)
            goto error;
    }
    lp = FIELD (p->conf, k->off, struct tr_conf_partition_cost *);
    partitions_free (*lp, *FIELD (p->conf, k->off_aux, size_t));
    if (n == 0) {
        free (list);
        list = NULL;
    }
    *lp = list;
    *FIELD (p->conf, k->off_aux, size_t) = n;
    return 0;
error_event:
    yaml_event_delete (&ev);
error:
    partitions_free (list, n);
    return -1;
}

/* The value of key k, at the next event. */
static int parse_value (struct parser *p, const struct key *k)
{
    yaml_event_t ev;
    int rc;

    if (next_event (p, &ev) < 0)
        return -1;
    p->value_mark[k - schema] = ev.start_mark;
    if (k->type == K_USERS) {
        if (ev.type == YAML_SEQUENCE_START_EVENT)
            rc = parse_users (p, k, &ev.start_mark);
        else if (ev.type == YAML_SCALAR_EVENT && is_null (&ev))
            rc = fail_key (p, k, &ev.start_mark,
                           "missing value (write [] for an empty list)");
        else
            rc = fail_key (p, k, &ev.start_mark,
                           "expected a list of users, got a %s",
                           event_kind (&ev));
    }
    else if (k->type == K_PATTERNS) {
        if (ev.type == YAML_SEQUENCE_START_EVENT)
            rc = parse_patterns (p, k);
        else if (ev.type == YAML_SCALAR_EVENT && is_null (&ev))
            rc = fail_key (p, k, &ev.start_mark,
                           "missing value (write [] for an empty list)");
        else
            rc = fail_key (p, k, &ev.start_mark,
                           "expected a list of %s, got a %s",
                           k->globs ? "program name patterns"
                                    : "regular expressions",
                           event_kind (&ev));
    }
    else if (k->type == K_PARTITIONS) {
        if (ev.type == YAML_MAPPING_START_EVENT)
            rc = parse_partitions (p, k);
        else if (ev.type == YAML_SCALAR_EVENT && is_null (&ev))
            rc = fail_key (p, k, &ev.start_mark,
                           "missing value (write {} for no partitions)");
        else
            rc = fail_key (p, k, &ev.start_mark,
                           "expected a mapping of partition names to "
                           "prices, got a %s",
                           event_kind (&ev));
    }
    else if (ev.type != YAML_SCALAR_EVENT)
        rc = fail_key (p, k, &ev.start_mark,
                       "expected a single value, got a %s", event_kind (&ev));
    else if (is_null (&ev))
        rc = set_null (p, k, &ev.start_mark);
    else
        rc = set_scalar (p, k, &ev.start_mark,
                         (const char *)ev.data.scalar.value);
    yaml_event_delete (&ev);
    return rc;
}

/* The key whose full dotted name is full ("report.cost.gb_hour"). */
static int full_key_index (const char *full)
{
    const char *dot = strrchr (full, '.');
    char section[CONF_MAX_KEY];
    size_t sl;

    if (!dot || (sl = (size_t)(dot - full)) >= sizeof (section))
        return -1;
    memcpy (section, full, sl);
    section[sl] = '\0';
    return key_index (section, dot + 1);
}

/* How to write a key whose dotted name was used as a YAML key: the key
 * under its innermost section, and that section inside its parents.
 */
static int fail_dotted (struct parser *p,
                        const yaml_mark_t *m,
                        const char *head,
                        const struct key *k)
{
    const char *dot = strrchr (k->section, '.');

    if (!dot)
        return fail_at (p, m, EINVAL,
                        "%s (write '%s.%s' as key '%s' under a '%s:' "
                        "section)",
                        head, k->section, k->name, k->name, k->section);
    return fail_at (p, m, EINVAL,
                    "%s (write '%s.%s' as key '%s' under '%s:' in the "
                    "'%.*s:' section)",
                    head, k->section, k->name, k->name, dot + 1,
                    (int)(dot - k->section), k->section);
}

static int unknown_key (struct parser *p,
                        const char *section,
                        const yaml_mark_t *m,
                        const char *name)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    char full[CONF_MAX_KEY * 2];
    int ki, n;

    for (size_t i = 0; i < NKEYS; i++) {
        size_t d;
        if (strcmp (schema[i].section, section))
            continue;
        d = edit_distance (name, schema[i].name);
        if (near (d, name) && d < best_d) {
            best = schema[i].name;
            best_d = d;
        }
    }
    for (size_t i = 0; i < NSECTIONS; i++) {
        const char *leaf = section_leaf (sections[i], section);
        size_t d;
        if (!leaf)
            continue;
        d = edit_distance (name, leaf);
        if (near (d, name) && d < best_d) {
            best = leaf;
            best_d = d;
        }
    }
    if (best)
        return fail_at (p, m, EINVAL,
                        "unknown key '%s' in section '%s' (did you mean "
                        "'%s'?)",
                        show (p, name), section, best);
    /* "diagnosis.io_pressure: 0.3" under report: */
    n = snprintf (full, sizeof (full), "%s.%s", section, name);
    if (n > 0 && (size_t)n < sizeof (full) && strchr (name, '.')
        && (ki = full_key_index (full)) >= 0) {
        char head[CONF_MAX_KEY * 3];
        snprintf (head, sizeof (head), "unknown key '%s' in section '%s'",
                  show (p, name), section);
        return fail_dotted (p, m, head, &schema[ki]);
    }
    /* Right key, wrong section. */
    for (size_t i = 0; i < NKEYS; i++) {
        if (!strcmp (schema[i].name, name))
            return fail_at (p, m, EINVAL,
                            "unknown key '%s' in section '%s' (did you "
                            "mean '%s.%s'?)",
                            show (p, name), section, schema[i].section,
                            schema[i].name);
    }
    return fail_at (p, m, EINVAL, "unknown key '%s' in section '%s'",
                    show (p, name), section);
}

static int unknown_section (struct parser *p,
                            const yaml_mark_t *m,
                            const char *name)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    int ki;

    for (size_t i = 0; i < NSECTIONS; i++) {
        size_t d;
        if (strchr (sections[i], '.'))
            continue;
        d = edit_distance (name, sections[i]);
        if (near (d, name) && d < best_d) {
            best = sections[i];
            best_d = d;
        }
    }
    if (best)
        return fail_at (p, m, EINVAL,
                        "unknown section '%s' (did you mean '%s'?)",
                        show (p, name), best);
    /* "sampling.interval: 2" at the top level: the docs' key notation
     * written literally.
     */
    if ((ki = full_key_index (name)) >= 0) {
        char head[CONF_MAX_KEY * 3];
        snprintf (head, sizeof (head), "unknown section '%s'", show (p, name));
        return fail_dotted (p, m, head, &schema[ki]);
    }
    /* A subsection at the top level, by its full or its own name. */
    for (size_t i = 0; i < NSECTIONS; i++) {
        const char *dot = strrchr (sections[i], '.');
        if (dot && (!strcmp (sections[i], name) || !strcmp (dot + 1, name)))
            return fail_at (p, m, EINVAL,
                            "unknown section '%s' (write it as '%s:' in the "
                            "'%.*s:' section)",
                            show (p, name), dot + 1, (int)(dot - sections[i]),
                            sections[i]);
    }
    return fail_at (p, m, EINVAL, "unknown section '%s'", show (p, name));
}

static int parse_section (struct parser *p, int si);

/* The value of section si, whose name was just read: a mapping of keys,
 * or a null for a section whose keys are all commented out (as in the
 * shipped file once an admin uncomments a section header only).
 */
static int parse_section_value (struct parser *p, int si)
{
    yaml_event_t val;

    if (next_event (p, &val) < 0)
        return -1;
    if (val.type == YAML_MAPPING_START_EVENT) {
        yaml_event_delete (&val);
        return parse_section (p, si);
    }
    if (val.type == YAML_SCALAR_EVENT && is_null (&val)) {
        yaml_event_delete (&val);
        return 0;
    }
    fail_at (p, &val.start_mark, EINVAL,
             "section '%s': expected a mapping of keys, got a %s", sections[si],
             event_kind (&val));
    yaml_event_delete (&val);
    return -1;
}

/* The keys and subsections of section si; its MAPPING_START was
 * consumed.
 */
static int parse_section (struct parser *p, int si)
{
    const char *section = sections[si];

    for (;;) {
        yaml_event_t ev;
        const char *name;
        int ki, sub;

        if (next_event (p, &ev) < 0)
            return -1;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete (&ev);
            return 0;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            fail_at (p, &ev.start_mark, EINVAL,
                     "expected a key in section '%s', got a %s", section,
                     event_kind (&ev));
            goto error;
        }
        name = (const char *)ev.data.scalar.value;
        if ((ki = key_index (section, name)) >= 0) {
            if (p->key_line[ki]) {
                fail_at (p, &ev.start_mark, EINVAL,
                         "duplicate key '%s' in section '%s' (first at line "
                         "%d)",
                         name, section, p->key_line[ki]);
                goto error;
            }
            p->key_line[ki] = (int)ev.start_mark.line + 1;
            yaml_event_delete (&ev);
            if (parse_value (p, &schema[ki]) < 0)
                return -1;
            continue;
        }
        if ((sub = section_index (section, name)) >= 0) {
            if (p->section_line[sub]) {
                fail_at (p, &ev.start_mark, EINVAL,
                         "duplicate key '%s' in section '%s' (first at line "
                         "%d)",
                         name, section, p->section_line[sub]);
                goto error;
            }
            p->section_line[sub] = (int)ev.start_mark.line + 1;
            yaml_event_delete (&ev);
            if (parse_section_value (p, sub) < 0)
                return -1;
            continue;
        }
        unknown_key (p, section, &ev.start_mark, name);
error:
        yaml_event_delete (&ev);
        return -1;
    }
}

/* The sections of the top-level mapping; its MAPPING_START was consumed. */
static int parse_sections (struct parser *p)
{
    for (;;) {
        yaml_event_t ev;
        const char *name;
        int si;

        if (next_event (p, &ev) < 0)
            return -1;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete (&ev);
            return 0;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            fail_at (p, &ev.start_mark, EINVAL,
                     "expected a section name, got a %s", event_kind (&ev));
            goto error;
        }
        name = (const char *)ev.data.scalar.value;
        if ((si = section_index (NULL, name)) < 0) {
            unknown_section (p, &ev.start_mark, name);
            goto error;
        }
        if (p->section_line[si]) {
            fail_at (p, &ev.start_mark, EINVAL,
                     "duplicate section '%s' (first at line %d)", name,
                     p->section_line[si]);
            goto error;
        }
        p->section_line[si] = (int)ev.start_mark.line + 1;
        yaml_event_delete (&ev);
        if (parse_section_value (p, si) < 0)
            return -1;
        continue;
error:
        yaml_event_delete (&ev);
        return -1;
    }
}

/* Expect an event of type t (guaranteed by libyaml's grammar). */
static int expect (struct parser *p, yaml_event_type_t t)
{
    yaml_event_t ev;

    if (next_event (p, &ev) < 0)
        return -1;
    if (ev.type != t) {
        fail_at (p, &ev.start_mark, EINVAL, "unexpected %s", event_kind (&ev));
        yaml_event_delete (&ev);
        return -1;
    }
    yaml_event_delete (&ev);
    return 0;
}

static int parse_stream (struct parser *p)
{
    yaml_event_t ev;

    if (expect (p, YAML_STREAM_START_EVENT) < 0)
        return -1;
    if (next_event (p, &ev) < 0)
        return -1;
    if (ev.type == YAML_STREAM_END_EVENT) {
        /* Nothing but comments: all defaults. */
        yaml_event_delete (&ev);
        return 0;
    }
    yaml_event_delete (&ev); /* DOCUMENT_START */

    if (next_event (p, &ev) < 0)
        return -1;
    if (ev.type == YAML_MAPPING_START_EVENT) {
        yaml_event_delete (&ev);
        if (parse_sections (p) < 0)
            return -1;
    }
    else if (ev.type == YAML_SCALAR_EVENT && is_null (&ev))
        yaml_event_delete (&ev);
    else {
        fail_at (p, &ev.start_mark, EINVAL,
                 "expected a mapping of sections at the top level, got a %s",
                 event_kind (&ev));
        yaml_event_delete (&ev);
        return -1;
    }
    if (expect (p, YAML_DOCUMENT_END_EVENT) < 0)
        return -1;

    if (next_event (p, &ev) < 0)
        return -1;
    if (ev.type != YAML_STREAM_END_EVENT) {
        fail_at (p, &ev.start_mark, EINVAL,
                 "only one YAML document is allowed");
        yaml_event_delete (&ev);
        return -1;
    }
    yaml_event_delete (&ev);
    return 0;
}

/* Rules between keys, checked once the whole file is in.  The error
 * points at whichever of the keys this file set.
 */
static int check_relations (struct parser *p)
{
    const tr_conf_t *c = p->conf;
    int ri = key_index ("spool", "retry_interval");
    int rm = key_index ("spool", "retry_max");
    int tf = key_index ("daemon", "textfile_dir");
    int li = key_index ("store", "live_interval");
    int hmin = key_index ("report.regression", "min_history");
    int hmax = key_index ("report.regression", "max_history");

    if (c->spool_retry_max_s < c->spool_retry_s) {
        if (p->key_line[rm])
            return fail_key (p, &schema[rm], &p->value_mark[rm],
                             "%g is less than spool.retry_interval (%g)",
                             c->spool_retry_max_s, c->spool_retry_s);
        return fail_key (p, &schema[ri], &p->value_mark[ri],
                         "%g is greater than spool.retry_max (%g)",
                         c->spool_retry_s, c->spool_retry_max_s);
    }
    /* the textfile is written with the live summaries */
    if (c->textfile_dir && !(c->store_live_interval_s > 0)) {
        if (p->key_line[tf])
            return fail_key (p, &schema[tf], &p->value_mark[tf],
                             "needs store.live_interval, which is 0: the "
                             "file is written every store.live_interval");
        return fail_key (p, &schema[li], &p->value_mark[li],
                         "0 leaves daemon.textfile_dir unwritten: it is "
                         "written every store.live_interval");
    }
    if (c->regression.max_history < c->regression.min_history) {
        if (p->key_line[hmax])
            return fail_key (p, &schema[hmax], &p->value_mark[hmax],
                             "%d is less than "
                             "report.regression.min_history (%d)",
                             c->regression.max_history,
                             c->regression.min_history);
        return fail_key (p, &schema[hmin], &p->value_mark[hmin],
                         "%d is greater than report.regression.max_history "
                         "(%d)",
                         c->regression.min_history, c->regression.max_history);
    }
    return 0;
}

static int load_buffer (tr_conf_t *conf,
                        const char *name,
                        const char *text,
                        size_t len,
                        tr_error_t *error)
{
    struct parser *p;
    tr_conf_t work;
    int rc = -1;

    if (len > CONF_MAX_SIZE) {
        errno = EINVAL;
        return tr_errprintf_at (error, name, 0, 0,
                                "file is larger than %d bytes", CONF_MAX_SIZE);
    }
    /* The parser state is a few kilobytes: keep it off the stack of
     * whatever thread (slurmstepd's, say) calls us.
     */
    if (!(p = calloc (1, sizeof (*p)))) {
        errno = ENOMEM;
        return tr_errprintf_at (error, name, 0, 0, "out of memory");
    }
    p->name = name;
    p->text = text;
    p->len = len;
    p->error = error;
    p->errnum = EINVAL;
    if (conf_copy (&work, conf) < 0) {
        nomem (p);
        goto out;
    }
    p->conf = &work;
    if (!yaml_parser_initialize (&p->yp)) {
        nomem (p);
        goto out_work;
    }
    p->yp_init = true;
    yaml_parser_set_input_string (&p->yp, (const unsigned char *)text, len);
    yaml_parser_set_encoding (&p->yp, YAML_UTF8_ENCODING);
    if (parse_stream (p) < 0 || check_relations (p) < 0)
        goto out_work;
    conf_clear (conf);
    *conf = work;
    rc = 0;
    goto out;
out_work:
    conf_clear (&work);
out:
    if (p->yp_init)
        yaml_parser_delete (&p->yp);
    if (rc < 0)
        errno = p->errnum;
    free (p);
    return rc;
}

tr_conf_t *tr_conf_create (void)
{
    struct parser p;
    tr_conf_t *conf;

    if (!(conf = calloc (1, sizeof (*conf))))
        return NULL;
    memset (&p, 0, sizeof (p));
    p.name = "defaults";
    p.conf = conf;
    p.errnum = ENOMEM;
    /* Defaults go through the same setters as the file, so a default
     * can never be something the file could not say.
     */
    for (size_t i = 0; i < NKEYS; i++) {
        const struct key *k = &schema[i];
        static const yaml_mark_t none = { 0, 0, 0 };

        if (!k->dflt)
            continue;
        if (k->type == K_USERS) {
            uid_t *list = calloc (1, sizeof (*list));
            uid_t uid;
            if (!list)
                goto error;
            if (resolve_user (k->dflt, &uid) < 0) {
                free (list);
                goto error;
            }
            list[0] = uid;
            set_list (conf, k, list, 1);
        }
        else if (set_scalar (&p, k, &none, k->dflt) < 0)
            goto error;
    }
    /* the one list of strings with a default */
    {
        size_t n = sizeof (tr_conf_redact_default) / sizeof (tr_conf_redact_default[0]);
        if (!(conf->redact = calloc (n, sizeof (char *))))
            goto error;
        for (size_t i = 0; tr_conf_redact_default[i]; i++) {
            if (!(conf->redact[i] = strdup (tr_conf_redact_default[i])))
                goto error;
        }
    }
    return conf;
error:
    tr_conf_destroy (conf);
    errno = ENOMEM;
    return NULL;
}

void tr_conf_destroy (tr_conf_t *conf)
{
    int saved = errno;

    if (conf) {
        conf_clear (conf);
        free (conf);
    }
    errno = saved;
}

int tr_conf_load_string (tr_conf_t *conf,
                         const char *name,
                         const char *text,
                         tr_error_t *error)
{
    if (!conf || !text) {
        errno = EINVAL;
        return tr_errprintf (error, "invalid argument");
    }
    return load_buffer (conf, name ? name : "(string)", text, strlen (text),
                        error);
}

int tr_conf_load (tr_conf_t *conf, const char *path, tr_error_t *error)
{
    char ebuf[128];
    struct stat st;
    char *buf = NULL;
    size_t len = 0, cap;
    int fd, rc, saved;

    if (!conf || !path) {
        errno = EINVAL;
        return tr_errprintf (error, "invalid argument");
    }
    /* Not O_NOFOLLOW: sites symlink /etc files into place.  O_NONBLOCK
     * keeps a FIFO at the path from hanging us before the S_ISREG check.
     */
    fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        goto syserr;
    if (fstat (fd, &st) < 0)
        goto syserr_close;
    if (!S_ISREG (st.st_mode)) {
        close (fd);
        errno = EINVAL;
        return tr_errprintf_at (error, path, 0, 0, "not a regular file");
    }
    if (st.st_size > CONF_MAX_SIZE) {
        close (fd);
        errno = EINVAL;
        return tr_errprintf_at (error, path, 0, 0,
                                "file is larger than %d bytes", CONF_MAX_SIZE);
    }
    /* Size the buffer from fstat, but keep reading to EOF (bounded): a
     * file being rewritten in place can grow under us.
     */
    cap = (size_t)st.st_size + 1;
    if (!(buf = malloc (cap + 1)))
        goto syserr_close;
    for (;;) {
        ssize_t n;
        if (len == cap) {
            char *bigger;
            if (cap > CONF_MAX_SIZE)
                break;
            cap = cap * 2 > CONF_MAX_SIZE ? CONF_MAX_SIZE + 1 : cap * 2;
            if (!(bigger = realloc (buf, cap + 1)))
                goto syserr_close;
            buf = bigger;
        }
        n = read (fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto syserr_close;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close (fd);
    buf[len] = '\0';
    rc = load_buffer (conf, path, buf, len, error);
    free (buf);
    return rc;
syserr_close:
    saved = errno;
    free (buf);
    close (fd);
    errno = saved;
syserr:
    return tr_errprintf_at (error, path, 0, 0, "%s",
                            strerror_r (errno, ebuf, sizeof (ebuf)));
}

const char *tr_conf_default_path (void)
{
    /* secure_getenv: should a front-end ever run set-id, the invoking
     * user must not choose which file grants admin rights.
     */
    const char *env = secure_getenv ("TRACER_CONF");

    if (env && env[0])
        return env;
    return SYSCONFDIR "/tracer/tracer.yaml";
}

void tr_conf_cost_rates (const tr_conf_t *conf,
                         const char *partition,
                         double *core_hour,
                         double *gb_hour,
                         double *gpu_hour)
{
    const struct tr_conf_cost *c = &conf->cost;
    const struct tr_conf_partition_cost *pc = NULL;

    for (size_t i = 0; partition && i < c->n_partitions; i++) {
        if (!strcmp (c->partitions[i].name, partition)) {
            pc = &c->partitions[i];
            break;
        }
    }
    if (core_hour)
        *core_hour =
            pc && !isnan (pc->core_hour) ? pc->core_hour : c->core_hour;
    if (gb_hour)
        *gb_hour = pc && !isnan (pc->gb_hour) ? pc->gb_hour : c->gb_hour;
    if (gpu_hour)
        *gpu_hour = pc && !isnan (pc->gpu_hour) ? pc->gpu_hour : c->gpu_hour;
}

/* One directory or link met on the way to a directory root writes in:
 * as tr_path_is_secure asks of each component, with a link allowed when
 * root owns it (the directory holding it was checked just before).
 */
static int check_dir_component (const char *path, tr_error_t *error)
{
    struct stat st;

    if (lstat (path, &st) < 0)
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    if (st.st_uid != 0) {
        tr_errprintf (error, "%s: owned by uid %lu, not root", path,
                      (unsigned long)st.st_uid);
        errno = EPERM;
        return -1;
    }
    if (S_ISDIR (st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH))
        && !(st.st_mode & S_ISVTX)) {
        tr_errprintf (error, "%s: writable by %s", path,
                      (st.st_mode & S_IWOTH) ? "others" : "group");
        errno = EPERM;
        return -1;
    }
    return 0;
}

/* Is dir (or, when missing, the part of it that exists: root creates
 * the rest) out of every other user's reach?  Each component as named
 * (links included) and each component of what it resolves to.
 */
static int check_dir (const char *dir, tr_error_t *error)
{
    char path[PATH_MAX], *real;
    struct stat st;
    size_t len = strlen (dir);
    int rc;

    if (dir[0] != '/' || len >= sizeof (path)) {
        errno = EINVAL;
        return tr_errprintf (error, "%s: not an absolute path", dir);
    }
    memcpy (path, dir, len + 1);
    /* the part that exists */
    while (len > 1 && stat (path, &st) < 0) {
        char *slash;

        if (errno != ENOENT && errno != ENOTDIR)
            return tr_errprintf (error, "%s: %s", path, strerror (errno));
        slash = strrchr (path, '/');
        len = slash > path ? (size_t)(slash - path) : 1;
        path[len] = '\0';
    }
    /* as named: "/", then each prefix ending before a '/', then all */
    if (check_dir_component ("/", error) < 0)
        return -1;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = '\0';
        rc = check_dir_component (path, error);
        *p = '/';
        if (rc < 0)
            return -1;
    }
    if (path[1] && check_dir_component (path, error) < 0)
        return -1;
    /* as resolved */
    if (!(real = realpath (path, NULL)))
        return tr_errprintf (error, "%s: %s", path, strerror (errno));
    rc = tr_path_is_secure (real, 0, error);
    free (real);
    if (rc == 0)
        errno = EPERM;
    return rc == 1 ? 0 : -1;
}

/* The directory a file path is in ("/" for "/x"). */
static void parent_of (const char *file, char *buf, size_t size)
{
    const char *slash = strrchr (file, '/');
    size_t n = slash && slash > file ? (size_t)(slash - file) : 1;

    snprintf (buf, size, "%.*s", (int)n, file);
}

int tr_conf_check_dirs (const tr_conf_t *conf, tr_error_t *error)
{
    char parent[PATH_MAX];
    struct {
        const char *key;
        const char *path;
        bool file;
    } dirs[] = {
        { "spool.path", conf ? conf->spool_path : NULL, false },
        { "daemon.state_dir", conf ? conf->state_dir : NULL, false },
        { "daemon.socket", conf ? conf->socket_path : NULL, true },
        { "daemon.log", conf ? conf->log_target : NULL, true },
    };

    if (!conf) {
        errno = EINVAL;
        return tr_errprintf (error, "invalid argument");
    }
    for (size_t i = 0; i < sizeof (dirs) / sizeof (dirs[0]); i++) {
        const char *dir = dirs[i].path;
        tr_error_t why;
        int saved;

        /* daemon.log may be syslog or stderr */
        if (!dir || dir[0] != '/')
            continue;
        if (dirs[i].file) {
            parent_of (dir, parent, sizeof (parent));
            dir = parent;
        }
        if (check_dir (dir, &why) < 0) {
            saved = errno;
            tr_errprintf (error, "%s %s: %s: %s", dirs[i].key,
                          dirs[i].path,
                          saved == EPERM ? "insecure" : "cannot check",
                          why.text);
            errno = saved;
            return -1;
        }
    }
    return 0;
}

double tr_conf_step_interval (const tr_conf_t *conf, double requested)
{
    return tr_interval_or (requested, conf->interval_s);
}

int tr_conf_foreach_key (tr_conf_key_f fn, void *arg)
{
    if (!fn) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < NKEYS; i++) {
        char full[CONF_MAX_KEY];
        const struct key *k = &schema[i];

        int n = snprintf (full, sizeof (full), "%s.%s", k->section, k->name);

        if (n < 0 || (size_t)n >= sizeof (full)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fn (full, k->desc, k->doc_default, arg);
    }
    return 0;
}
