/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_CONF_H
#define TRACER_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "libtracer/util/error.h"

/* The site configuration, /etc/tracer/tracer.yaml by default (overridden
 * by $TRACER_CONF or an explicit path).  Every key is documented in
 * etc/tracer.yaml and tracer.yaml(5); the schema lives in conf.c and is
 * enumerable with tr_conf_foreach_key() so the docs check can compare.
 *
 * Strings are owned by the conf and freed by tr_conf_destroy().
 */
/* The thresholds of the per-step diagnosis, section report.diagnosis
 * (diagnose.h; every rule is described in doc/diagnosis.md).  Fractions
 * are 0..1 of the step's elapsed time or of a request, bytes are bytes
 * and durations seconds.  tr_diag_defaults() gives the same defaults as
 * tr_conf_create().
 */
struct tr_diag_thresholds {
    double cpu_bound_efficiency; /* report.diagnosis.cpu_bound_efficiency */
    double cpu_pressure;         /* report.diagnosis.cpu_pressure */
    double cpu_pressure_starved; /* report.diagnosis.cpu_pressure_starved */
    double low_efficiency;       /* report.diagnosis.low_efficiency */
    double io_pressure;          /* report.diagnosis.io_pressure */
    double mem_pressure;         /* report.diagnosis.mem_pressure */
    double mem_near_limit;       /* report.diagnosis.mem_near_limit */
    double swap_min;             /* report.diagnosis.swap_min (bytes) */
    double mem_low_fraction;     /* report.diagnosis.mem_low_fraction */
    double mem_min_request;      /* report.diagnosis.mem_min_request */
    double idle_fraction;        /* report.diagnosis.idle_fraction */
    double idle_min_elapsed;     /* report.diagnosis.idle_min_elapsed */
    double stalled_after;        /* report.diagnosis.stalled_after */
    double throttled_fraction;   /* report.diagnosis.throttled_fraction */
    double imbalance;            /* report.diagnosis.imbalance */
    double short_step;           /* report.diagnosis.short_step */
    double gpu_idle_pct;         /* report.diagnosis.gpu_idle_pct */
};

/* How requests are computed from a step group's history, section
 * report.recommend.  Quantiles are 0..1 (type 7, stats.h), headroom and margin
 * fractions added on top (0.2 = 20%).
 */
struct tr_conf_recommend {
    double mem_quantile;  /* report.recommend.mem_quantile */
    double mem_headroom;  /* report.recommend.mem_headroom */
    double time_quantile; /* report.recommend.time_quantile */
    double time_margin;   /* report.recommend.time_margin */
    double cpu_quantile;  /* report.recommend.cpu_quantile */
    int min_runs;         /* report.recommend.min_runs */
    int last_runs;        /* report.recommend.last_runs (0: all) */
    double mem_min;       /* report.recommend.mem_min (bytes) */
    double time_min;      /* report.recommend.time_min (seconds) */
};

/* When a run is slower or bigger than its group's own history, section
 * report.regression.
 */
struct tr_conf_regression {
    int min_history; /* report.regression.min_history */
    int max_history; /* report.regression.max_history */
    double z;        /* report.regression.z (robust z-score, MAD) */
    double ratio;    /* report.regression.ratio (to the median) */
};

/* Prices of one partition; NAN where the partition does not set one
 * (the report.cost rate applies).
 */
struct tr_conf_partition_cost {
    char *name;
    double core_hour;
    double gb_hour;
    double gpu_hour;
};

/* Section report.cost: money per core-hour, GiB-hour of requested memory and
 * GPU-hour (0: no money shown), overridden per partition.
 */
struct tr_conf_cost {
    double core_hour; /* report.cost.core_hour */
    double gb_hour;   /* report.cost.gb_hour */
    double gpu_hour;  /* report.cost.gpu_hour */
    char *currency;   /* report.cost.currency (never NULL once loaded) */
    struct tr_conf_partition_cost *partitions; /* report.cost.partitions */
    size_t n_partitions;
};

/* Section mail: tracer-mail, Slurm's MailProg, and tracer-report
 * --digest.
 */
enum {
    TR_MAIL_SUMMARY_NEVER = 0,  /* always Slurm's own notification */
    TR_MAIL_SUMMARY_ACTIONABLE, /* a summary when there is something to do */
    TR_MAIL_SUMMARY_ALWAYS,     /* a summary whenever records came */
};

enum {
    TR_MAIL_TRACING_OPTIN = 0, /* jobs are traced when they ask */
    TR_MAIL_TRACING_ALL,       /* every job is traced */
};

/* sampling.psi_mirror */
enum {
    TR_PSI_MIRROR_OFF = 0,  /* never */
    TR_PSI_MIRROR_ON = 1,   /* on hybrid hosts; log where there is none */
    TR_PSI_MIRROR_AUTO = 2, /* on hybrid hosts, quietly elsewhere */
};

/* sampling.ebpf */
enum {
    TR_EBPF_OFF = 0,  /* never */
    TR_EBPF_ON = 1,   /* load it; log a refusal as a warning */
    TR_EBPF_AUTO = 2, /* load it where the kernel allows; say once why not */
};

/* sampling.delayacct: kernel.task_delayacct */
enum {
    TR_DELAYACCT_OFF = 0,  /* leave the kernel setting alone */
    TR_DELAYACCT_ON = 1,   /* turn it on */
    TR_DELAYACCT_AUTO = 2, /* turn it on where steps have no cgroup2 PSI */
};

struct tr_conf_mail {
    char *sendmail;          /* mail.sendmail */
    char *from;              /* mail.from ("": the MTA's default) */
    char *domain;            /* mail.domain ("": bare user names) */
    double wait_s;           /* mail.wait */
    double settle_s;         /* mail.settle */
    int tracing;             /* mail.tracing */
    int summary;             /* mail.summary */
    int severity;            /* mail.severity (diagnose.h severities) */
    double min_elapsed_s;    /* mail.min_elapsed */
    bool attach_report;      /* mail.attach_report */
    double attach_max_bytes; /* mail.attach_max */
    char *report_url;        /* mail.report_url ("": none) */
    bool on_stall;           /* mail.on_stall */
};

struct tr_conf_prolog {
    double timeout_s; /* prolog.timeout */
    char *qstat;      /* prolog.qstat */
    int error_exit;   /* prolog.error_exit */
    int lsf_unit;     /* prolog.lsf_unit_for_limits: power of 1024 */
};

typedef struct tr_conf {
    /* cluster: */
    char *cluster_name;        /* cluster.name (default "default") */

    /* store: the shared record store */
    char *store_path;          /* store.path */
    mode_t store_file_mode;    /* store.file_mode (default 0640) */
    mode_t store_dir_mode;     /* store.dir_mode (default 0755) */
    bool store_owner_is_job;   /* store.owner: "job" (default) or a user */
    int store_job_access;      /* store.job_access: TR_STORE_ACCESS_* */
    uid_t store_owner_uid;     /* valid when !store_owner_is_job */
    bool store_group_set;      /* store.group given */
    gid_t store_gid;           /* store.group, resolved */
    double store_live_interval_s; /* store.live_interval (0 = none) */

    /* spool: node-local, root-only */
    char *spool_path;          /* spool.path */
    double spool_retry_s;      /* spool.retry_interval (default 5) */
    double spool_retry_max_s;  /* spool.retry_max (default 300) */
    int spool_pending_max;     /* spool.pending_max (default 1000) */

    /* daemon: tracerd */
    char *socket_path;         /* daemon.socket */
    char *squeue_path;         /* daemon.squeue */
    char *state_dir;           /* daemon.state_dir */
    char *log_target;          /* daemon.log: "syslog", "stderr" or a path */
    int log_level;             /* daemon.log_level as syslog priority */
    uid_t *notify_uids;        /* daemon.notify_users, resolved */
    size_t n_notify_uids;
    bool job_starters;         /* daemon.job_starters (default false) */
    char *bjobs_path;          /* daemon.bjobs */
    char *textfile_dir;        /* daemon.textfile_dir (NULL = none) */

    /* sampling: */
    double interval_s;         /* sampling.interval (0.1 .. 3600, default 1) */
    double snapshot_interval_s; /* sampling.snapshot_interval (0 = none) */
    bool taskstats;            /* sampling.taskstats (default true) */
    bool kernel_log;           /* sampling.kernel_log (default true) */
    double stall_after_s;      /* sampling.stall_after (0 = off, 300) */
    /* sampling.psi_mirror: TR_PSI_MIRROR_* (default auto); non-zero
     * means "mirror where the host is hybrid"
     */
    int psi_mirror;
    int delayacct;             /* sampling.delayacct: TR_DELAYACCT_* */
    int ebpf;                  /* sampling.ebpf: TR_EBPF_* (default auto) */
    bool gpu;                  /* sampling.gpu (default true) */
    char *nvml_library;        /* sampling.nvml_library (NULL = default) */
    double cmdline_max;        /* sampling.cmdline_max (bytes, default 256) */
    double proc_reads;         /* sampling.proc_reads (default 4) */
    char **redact;             /* sampling.redact, NULL-terminated */

    /* tools: naming rules the site adds (tools.h), NULL-terminated or NULL */
    char **tool_subcommands;   /* tools.subcommands */
    char **tool_interpreters;  /* tools.interpreters */

    /* signing: */
    bool sign_enabled;         /* signing.enabled (default true) */
    char *munge_socket;        /* signing.munge_socket (NULL = libmunge default) */
    uid_t *signer_uids;        /* signing.trusted_signers, resolved (default root) */
    size_t n_signer_uids;

    /* report: */
    bool admin_group_set;
    gid_t admin_gid;           /* report.admin_group */
    struct tr_diag_thresholds diagnosis;
    struct tr_conf_recommend recommend;
    struct tr_conf_regression regression;
    struct tr_conf_cost cost;

    struct tr_conf_mail mail;
    struct tr_conf_prolog prolog;
} tr_conf_t;

/* A new configuration holding the built-in defaults.
 * Returns NULL with errno = ENOMEM.  Free with tr_conf_destroy().
 */
/* sampling.redact's default: NULL-terminated extended regular
 * expressions; the last parenthesized part of a match is the secret.
 */
extern const char *const tr_conf_redact_default[];

tr_conf_t *tr_conf_create (void);
void tr_conf_destroy (tr_conf_t *conf);

/* Parse the YAML file at 'path' and apply it on top of conf.  Every key
 * is validated against the schema; unknown keys, wrong types, values out
 * of range, unknown users/groups and YAML syntax errors fail with
 * error->file/line/column set (tr_error_str() renders
 * "file:line:column: message").  On failure conf is unchanged.
 * errno is ENOENT when the file does not exist (callers may treat a
 * missing default file as "use defaults"), EINVAL for a bad file.
 */
int tr_conf_load (tr_conf_t *conf, const char *path, tr_error_t *error);

/* As tr_conf_load(), from a string; 'name' is used as the file name in
 * error locations.
 */
int tr_conf_load_string (tr_conf_t *conf,
                         const char *name,
                         const char *text,
                         tr_error_t *error);

/* The configuration path: $TRACER_CONF if set, else the compiled-in
 * default (SYSCONFDIR/tracer/tracer.yaml).  Borrowed string.
 */
const char *tr_conf_default_path (void);

/* The prices that apply to a partition: its report.cost.partitions
 * entry where it sets one, else the report.cost rate.  partition may be
 * NULL or "".  Any output pointer may be NULL.
 */
void tr_conf_cost_rates (const tr_conf_t *conf,
                         const char *partition,
                         double *core_hour,
                         double *gb_hour,
                         double *gpu_hour);

/* Are the directories tracerd (root) writes in out of every other
 * user's reach: spool.path, daemon.state_dir, and the directories of
 * daemon.socket and of daemon.log (a file)?  Each must be owned by root,
 * and so must every directory above it and every link on the way, none
 * writable by group or others unless sticky (as /tmp), both as named and
 * as the links resolve; where it does not exist yet, the part that does.
 * A user who owns or may write one of them could swap what is below for
 * a link and have root write where they choose.  Returns 0, or -1 with
 * errno EPERM and error "KEY PATH: insecure: COMPONENT: why" (another
 * errno: "KEY PATH: cannot check: ...").
 */
int tr_conf_check_dirs (const tr_conf_t *conf, tr_error_t *error);

/* The interval a step asks for when it is within sampling.interval's
 * bounds (0.1 to 3600 s), else conf->interval_s: 0 means "not asked
 * for", and a step_start message may come from the job's user (a job
 * starter), who must not be able to make the daemon spin.
 */
double tr_conf_step_interval (const tr_conf_t *conf, double requested);

/* Call fn for every key of the schema ("section.key", or
 * "section.subsection.key" for the nested report sections, a one-line
 * description, the default as text).  Returns 0.
 */
typedef void (*tr_conf_key_f) (const char *key,
                               const char *description,
                               const char *default_text,
                               void *arg);
int tr_conf_foreach_key (tr_conf_key_f fn, void *arg);

#endif /* !TRACER_CONF_H */
