/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for the configuration module: every error kind with its
 * exact rendered message, valid files and the values they produce, the
 * data-driven suites under tests/data/conf, and the shipped tracer.yaml.
 * A configuration is compared as a flat JSON object ("section.key":
 * value), the same form the expect.json files use.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "libtracer/conf/conf.h"
#include "libtracer/util/error.h"
#include "rmtree.h"

#define DATA_DIR TEST_SRCDIR "/data/conf"
#define SHIPPED_CONF TEST_SRCDIR "/../etc/tracer.yaml"

/* Every key the schema must have, in schema order. */
/* clang-format off */
static const char *const all_keys[] = {
    "cluster.name",
    "store.path",
    "store.file_mode",
    "store.dir_mode",
    "store.owner",
    "store.job_access",
    "store.group",
    "store.live_interval",
    "spool.path",
    "spool.retry_interval",
    "spool.retry_max",
    "spool.pending_max",
    "daemon.socket",
    "daemon.squeue",
    "daemon.state_dir",
    "daemon.log",
    "daemon.log_level",
    "daemon.notify_users",
    "daemon.job_starters",
    "daemon.bjobs",
    "daemon.textfile_dir",
    "sampling.interval",
    "sampling.snapshot_interval",
    "sampling.taskstats",
    "sampling.kernel_log",
    "sampling.stall_after",
    "sampling.psi_mirror",
    "sampling.delayacct",
    "sampling.ebpf",
    "sampling.gpu",
    "sampling.nvml_library",
    "sampling.cmdline_max",
    "sampling.proc_reads",
    "sampling.redact",
    "tools.subcommands",
    "tools.interpreters",
    "signing.enabled",
    "signing.munge_socket",
    "signing.trusted_signers",
    "report.admin_group",
    "report.diagnosis.cpu_bound_efficiency",
    "report.diagnosis.cpu_pressure",
    "report.diagnosis.cpu_pressure_starved",
    "report.diagnosis.low_efficiency",
    "report.diagnosis.io_pressure",
    "report.diagnosis.mem_pressure",
    "report.diagnosis.mem_near_limit",
    "report.diagnosis.swap_min",
    "report.diagnosis.mem_low_fraction",
    "report.diagnosis.mem_min_request",
    "report.diagnosis.idle_fraction",
    "report.diagnosis.idle_min_elapsed",
    "report.diagnosis.stalled_after",
    "report.diagnosis.throttled_fraction",
    "report.diagnosis.imbalance",
    "report.diagnosis.short_step",
    "report.diagnosis.gpu_idle_pct",
    "report.recommend.mem_quantile",
    "report.recommend.mem_headroom",
    "report.recommend.time_quantile",
    "report.recommend.time_margin",
    "report.recommend.cpu_quantile",
    "report.recommend.min_runs",
    "report.recommend.last_runs",
    "report.recommend.mem_min",
    "report.recommend.time_min",
    "report.regression.min_history",
    "report.regression.max_history",
    "report.regression.z",
    "report.regression.ratio",
    "report.cost.core_hour",
    "report.cost.gb_hour",
    "report.cost.gpu_hour",
    "report.cost.currency",
    "report.cost.partitions",
    "mail.sendmail",
    "mail.from",
    "mail.domain",
    "mail.wait",
    "mail.settle",
    "mail.tracing",
    "mail.summary",
    "mail.severity",
    "mail.min_elapsed",
    "mail.attach_report",
    "mail.attach_max",
    "mail.report_url",
    "mail.on_stall",
    "prolog.timeout",
    "prolog.qstat",
    "prolog.error_exit",
    "prolog.lsf_unit_for_limits",
};
/* clang-format on */

#define NKEYS (sizeof (all_keys) / sizeof (all_keys[0]))

/* clang-format off */
static const char *defaults_json =
    "{\"cluster.name\": \"default\","
    " \"store.path\": \"/var/lib/tracer/store\","
    " \"store.file_mode\": \"0640\","
    " \"store.dir_mode\": \"0755\","
    " \"store.owner\": \"job\","
    " \"store.group\": null,"
    " \"store.live_interval\": 30,"
    " \"spool.path\": \"/var/spool/tracer\","
    " \"spool.retry_interval\": 5,"
    " \"spool.retry_max\": 300,"
    " \"spool.pending_max\": 1000,"
    " \"daemon.socket\": \"/run/tracer/tracerd.sock\","
    " \"daemon.squeue\": \"/usr/bin/squeue\","
    " \"daemon.state_dir\": \"/run/tracer\","
    " \"daemon.log\": \"syslog\","
    " \"daemon.log_level\": \"info\","
    " \"daemon.notify_users\": [0],"
    " \"daemon.job_starters\": false,"
    " \"daemon.bjobs\": \"/usr/bin/bjobs\","
    " \"daemon.textfile_dir\": null,"
    " \"sampling.interval\": 1,"
    " \"sampling.snapshot_interval\": 30,"
    " \"sampling.taskstats\": true,"
    " \"sampling.kernel_log\": true,"
    " \"sampling.stall_after\": 300,"
    " \"sampling.psi_mirror\": 2,"
    " \"sampling.delayacct\": 2,"
    " \"sampling.ebpf\": 2,"
    " \"sampling.gpu\": true,"
    " \"sampling.nvml_library\": null,"
    " \"sampling.cmdline_max\": 256,"
    " \"sampling.proc_reads\": 1,"
    " \"sampling.redact\": ["
    "\"(pass(word|wd)?|secret|token|api[_-]?key|access[_-]?key"
    "|private[_-]?key|credentials?)[a-z0-9_-]*[=:]([^ ]+)\","
    " \"--?(pass(word|wd)?|secret|token|api[_-]?key)[a-z0-9_-]* +([^ ]+)\","
    " \"://[^/:@ ]+:([^/@ ]+)@\","
    " \"(akia[0-9a-z]{16})\","
    " \"bearer +([a-z0-9._~+/=-]+)\","
    " \"(gh[pousr]_[a-z0-9]{36,})\","
    " \"(github_pat_[a-z0-9_]{22,})\","
    " \"(glpat-[a-z0-9_-]{20,})\","
    " \"(xox[abprs]-[a-z0-9-]+)\","
    " \"(eyj[a-z0-9_-]+\\\\.[a-z0-9_-]+\\\\.[a-z0-9_-]+)\"],"
    " \"tools.subcommands\": [],"
    " \"tools.interpreters\": [],"
    " \"signing.enabled\": true,"
    " \"signing.munge_socket\": null,"
    " \"signing.trusted_signers\": [0],"
    " \"report.admin_group\": null,"
    " \"report.diagnosis.cpu_bound_efficiency\": 0.9,"
    " \"report.diagnosis.cpu_pressure\": 0.2,"
    " \"report.diagnosis.cpu_pressure_starved\": 0.05,"
    " \"report.diagnosis.low_efficiency\": 0.5,"
    " \"report.diagnosis.io_pressure\": 0.2,"
    " \"report.diagnosis.mem_pressure\": 0.1,"
    " \"report.diagnosis.mem_near_limit\": 0.95,"
    " \"report.diagnosis.swap_min\": 0,"
    " \"report.diagnosis.mem_low_fraction\": 0.5,"
    " \"report.diagnosis.mem_min_request\": 1073741824,"
    " \"report.diagnosis.idle_fraction\": 0.5,"
    " \"report.diagnosis.idle_min_elapsed\": 60,"
    " \"report.diagnosis.stalled_after\": 600,"
    " \"report.diagnosis.throttled_fraction\": 0.05,"
    " \"report.diagnosis.imbalance\": 0.5,"
    " \"report.diagnosis.short_step\": 10,"
    " \"report.diagnosis.gpu_idle_pct\": 10,"
    " \"report.recommend.mem_quantile\": 0.95,"
    " \"report.recommend.mem_headroom\": 0.2,"
    " \"report.recommend.time_quantile\": 0.95,"
    " \"report.recommend.time_margin\": 0.25,"
    " \"report.recommend.cpu_quantile\": 0.9,"
    " \"report.recommend.min_runs\": 3,"
    " \"report.recommend.last_runs\": 0,"
    " \"report.recommend.mem_min\": 268435456,"
    " \"report.recommend.time_min\": 300,"
    " \"report.regression.min_history\": 5,"
    " \"report.regression.max_history\": 30,"
    " \"report.regression.z\": 4,"
    " \"report.regression.ratio\": 1.5,"
    " \"report.cost.core_hour\": 0,"
    " \"report.cost.gb_hour\": 0,"
    " \"report.cost.gpu_hour\": 0,"
    " \"report.cost.currency\": \"\","
    " \"report.cost.partitions\": {},"
    " \"mail.sendmail\": \"/usr/sbin/sendmail\","
    " \"mail.from\": \"\","
    " \"mail.domain\": \"\","
    " \"mail.wait\": 60,"
    " \"mail.settle\": 3,"
    " \"mail.tracing\": \"optin\","
    " \"mail.summary\": \"actionable\","
    " \"mail.severity\": \"warning\","
    " \"mail.min_elapsed\": 0,"
    " \"mail.attach_report\": true,"
    " \"mail.attach_max\": 4194304,"
    " \"mail.report_url\": \"\","
    " \"mail.on_stall\": false,"
    " \"prolog.timeout\": 10,"
    " \"prolog.qstat\": \"/opt/pbs/bin/qstat\","
    " \"prolog.error_exit\": 0,"
    " \"prolog.lsf_unit_for_limits\": \"MB\"}";
/* clang-format on */

static const char *level_name (int level)
{
    switch (level) {
    case LOG_ERR:
        return "error";
    case LOG_WARNING:
        return "warning";
    case LOG_NOTICE:
        return "notice";
    case LOG_INFO:
        return "info";
    case LOG_DEBUG:
        return "debug";
    default:
        return "?";
    }
}

static json_t *uid_array (const uid_t *uids, size_t n)
{
    json_t *a = json_array ();

    assert_non_null (a);
    for (size_t i = 0; i < n; i++)
        assert_int_equal (json_array_append_new (a, json_integer (uids[i])), 0);
    return a;
}

static json_t *pattern_array (char *const *list)
{
    json_t *a;

    assert_non_null (a = json_array ());
    for (size_t i = 0; list && list[i]; i++)
        assert_int_equal (json_array_append_new (a, json_string (list[i])), 0);
    return a;
}

static json_t *str_or_null (const char *s)
{
    return s ? json_string (s) : json_null ();
}

static json_t *mode_str (mode_t mode)
{
    char buf[16];

    snprintf (buf, sizeof (buf), "%04o", (unsigned)mode);
    return json_string (buf);
}

/* report.cost.partitions as {"name": {"core_hour": x, ...}}, prices a
 * partition leaves unset left out.
 */
static json_t *partition_object (const struct tr_conf_cost *cost)
{
    json_t *o = json_object ();

    assert_non_null (o);
    assert_true (cost->n_partitions == 0 || cost->partitions);
    for (size_t i = 0; i < cost->n_partitions; i++) {
        const struct tr_conf_partition_cost *pc = &cost->partitions[i];
        json_t *prices = json_object ();
        assert_non_null (prices);
        if (!isnan (pc->core_hour))
            json_object_set_new (prices, "core_hour",
                                 json_real (pc->core_hour));
        if (!isnan (pc->gb_hour))
            json_object_set_new (prices, "gb_hour", json_real (pc->gb_hour));
        if (!isnan (pc->gpu_hour))
            json_object_set_new (prices, "gpu_hour", json_real (pc->gpu_hour));
        assert_int_equal (json_object_set_new (o, pc->name, prices), 0);
    }
    return o;
}

/* The configuration as a flat object, one member per schema key. */
static json_t *conf_to_json (const tr_conf_t *c)
{
    json_t *o = json_object ();
    struct {
        const char *key;
        json_t *value;
    } m[] = {
        { "cluster.name", str_or_null (c->cluster_name) },
        { "store.path", str_or_null (c->store_path) },
        { "store.file_mode", mode_str (c->store_file_mode) },
        { "store.dir_mode", mode_str (c->store_dir_mode) },
        { "store.owner", c->store_owner_is_job
                             ? json_string ("job")
                             : json_integer (c->store_owner_uid) },
        { "store.job_access", json_integer (c->store_job_access) },
        { "store.group",
          c->store_group_set ? json_integer (c->store_gid) : json_null () },
        { "store.live_interval", json_real (c->store_live_interval_s) },
        { "spool.path", str_or_null (c->spool_path) },
        { "spool.retry_interval", json_real (c->spool_retry_s) },
        { "spool.retry_max", json_real (c->spool_retry_max_s) },
        { "spool.pending_max", json_integer (c->spool_pending_max) },
        { "daemon.socket", str_or_null (c->socket_path) },
        { "daemon.squeue", str_or_null (c->squeue_path) },
        { "daemon.state_dir", str_or_null (c->state_dir) },
        { "daemon.log", str_or_null (c->log_target) },
        { "daemon.log_level", json_string (level_name (c->log_level)) },
        { "daemon.notify_users", uid_array (c->notify_uids, c->n_notify_uids) },
        { "daemon.job_starters", json_boolean (c->job_starters) },
        { "daemon.bjobs", str_or_null (c->bjobs_path) },
        { "daemon.textfile_dir", str_or_null (c->textfile_dir) },
        { "sampling.interval", json_real (c->interval_s) },
        { "sampling.snapshot_interval", json_real (c->snapshot_interval_s) },
        { "sampling.taskstats", json_boolean (c->taskstats) },
        { "sampling.kernel_log", json_boolean (c->kernel_log) },
        { "sampling.stall_after", json_real (c->stall_after_s) },
        { "sampling.psi_mirror", json_integer (c->psi_mirror) },
        { "sampling.delayacct", json_integer (c->delayacct) },
        { "sampling.ebpf", json_integer (c->ebpf) },
        { "sampling.gpu", json_boolean (c->gpu) },
        { "sampling.nvml_library", str_or_null (c->nvml_library) },
        { "sampling.cmdline_max", json_real (c->cmdline_max) },
        { "sampling.proc_reads", json_real (c->proc_reads) },
        { "sampling.redact", pattern_array (c->redact) },
        { "tools.subcommands", pattern_array (c->tool_subcommands) },
        { "tools.interpreters", pattern_array (c->tool_interpreters) },
        { "signing.enabled", json_boolean (c->sign_enabled) },
        { "signing.munge_socket", str_or_null (c->munge_socket) },
        { "signing.trusted_signers",
          uid_array (c->signer_uids, c->n_signer_uids) },
        { "report.admin_group",
          c->admin_group_set ? json_integer (c->admin_gid) : json_null () },
        { "report.diagnosis.cpu_bound_efficiency",
          json_real (c->diagnosis.cpu_bound_efficiency) },
        { "report.diagnosis.cpu_pressure",
          json_real (c->diagnosis.cpu_pressure) },
        { "report.diagnosis.cpu_pressure_starved",
          json_real (c->diagnosis.cpu_pressure_starved) },
        { "report.diagnosis.low_efficiency",
          json_real (c->diagnosis.low_efficiency) },
        { "report.diagnosis.io_pressure",
          json_real (c->diagnosis.io_pressure) },
        { "report.diagnosis.mem_pressure",
          json_real (c->diagnosis.mem_pressure) },
        { "report.diagnosis.mem_near_limit",
          json_real (c->diagnosis.mem_near_limit) },
        { "report.diagnosis.swap_min", json_real (c->diagnosis.swap_min) },
        { "report.diagnosis.mem_low_fraction",
          json_real (c->diagnosis.mem_low_fraction) },
        { "report.diagnosis.mem_min_request",
          json_real (c->diagnosis.mem_min_request) },
        { "report.diagnosis.idle_fraction",
          json_real (c->diagnosis.idle_fraction) },
        { "report.diagnosis.idle_min_elapsed",
          json_real (c->diagnosis.idle_min_elapsed) },
        { "report.diagnosis.stalled_after",
          json_real (c->diagnosis.stalled_after) },
        { "report.diagnosis.throttled_fraction",
          json_real (c->diagnosis.throttled_fraction) },
        { "report.diagnosis.imbalance", json_real (c->diagnosis.imbalance) },
        { "report.diagnosis.short_step", json_real (c->diagnosis.short_step) },
        { "report.diagnosis.gpu_idle_pct",
          json_real (c->diagnosis.gpu_idle_pct) },
        { "report.recommend.mem_quantile",
          json_real (c->recommend.mem_quantile) },
        { "report.recommend.mem_headroom",
          json_real (c->recommend.mem_headroom) },
        { "report.recommend.time_quantile",
          json_real (c->recommend.time_quantile) },
        { "report.recommend.time_margin",
          json_real (c->recommend.time_margin) },
        { "report.recommend.cpu_quantile",
          json_real (c->recommend.cpu_quantile) },
        { "report.recommend.min_runs", json_integer (c->recommend.min_runs) },
        { "report.recommend.last_runs", json_integer (c->recommend.last_runs) },
        { "report.recommend.mem_min", json_real (c->recommend.mem_min) },
        { "report.recommend.time_min", json_real (c->recommend.time_min) },
        { "report.regression.min_history",
          json_integer (c->regression.min_history) },
        { "report.regression.max_history",
          json_integer (c->regression.max_history) },
        { "report.regression.z", json_real (c->regression.z) },
        { "report.regression.ratio", json_real (c->regression.ratio) },
        { "report.cost.core_hour", json_real (c->cost.core_hour) },
        { "report.cost.gb_hour", json_real (c->cost.gb_hour) },
        { "report.cost.gpu_hour", json_real (c->cost.gpu_hour) },
        { "report.cost.currency", str_or_null (c->cost.currency) },
        { "report.cost.partitions", partition_object (&c->cost) },
        { "mail.sendmail", str_or_null (c->mail.sendmail) },
        { "mail.from", str_or_null (c->mail.from) },
        { "mail.domain", str_or_null (c->mail.domain) },
        { "mail.wait", json_real (c->mail.wait_s) },
        { "mail.settle", json_real (c->mail.settle_s) },
        { "mail.tracing",
          json_string (c->mail.tracing == TR_MAIL_TRACING_ALL ? "all"
                                                              : "optin") },
        { "mail.summary",
          json_string (c->mail.summary == TR_MAIL_SUMMARY_ALWAYS ? "always"
                       : c->mail.summary == TR_MAIL_SUMMARY_NEVER
                           ? "never"
                           : "actionable") },
        { "mail.severity",
          json_string (c->mail.severity == 2   ? "critical"
                       : c->mail.severity == 1 ? "warning"
                                               : "info") },
        { "mail.min_elapsed", json_real (c->mail.min_elapsed_s) },
        { "mail.attach_report", json_boolean (c->mail.attach_report) },
        { "mail.attach_max", json_real (c->mail.attach_max_bytes) },
        { "mail.report_url", str_or_null (c->mail.report_url) },
        { "mail.on_stall", json_boolean (c->mail.on_stall) },
        { "prolog.timeout", json_real (c->prolog.timeout_s) },
        { "prolog.qstat", str_or_null (c->prolog.qstat) },
        { "prolog.error_exit", json_integer (c->prolog.error_exit) },
        { "prolog.lsf_unit_for_limits",
          json_string (c->prolog.lsf_unit == 1   ? "KB"
                       : c->prolog.lsf_unit == 2 ? "MB"
                       : c->prolog.lsf_unit == 3 ? "GB"
                       : c->prolog.lsf_unit == 4 ? "TB"
                       : c->prolog.lsf_unit == 5 ? "PB"
                                                 : "EB") },
    };

    assert_non_null (o);
    assert_int_equal (sizeof (m) / sizeof (m[0]), NKEYS);
    for (size_t i = 0; i < sizeof (m) / sizeof (m[0]); i++) {
        assert_non_null (m[i].value);
        assert_int_equal (json_object_set_new (o, m[i].key, m[i].value), 0);
    }
    return o;
}

/* json_equal() tells 5 from 5.0; a config value does not (also inside
 * report.cost.partitions).
 */
static bool values_equal (json_t *a, json_t *b)
{
    const char *key;
    json_t *value;

    if (json_is_number (a) && json_is_number (b))
        return json_number_value (a) == json_number_value (b);
    if (json_is_object (a) && json_is_object (b)) {
        if (json_object_size (a) != json_object_size (b))
            return false;
        json_object_foreach (a, key, value)
        {
            json_t *other = json_object_get (b, key);
            if (!other || !values_equal (value, other))
                return false;
        }
        return true;
    }
    return json_equal (a, b);
}

/* Defaults overlaid with 'expect_text' (a flat object), compared with
 * every key of conf.  Returns the number of mismatches, each reported.
 */
static int compare_conf (const char *name,
                         const tr_conf_t *conf,
                         const char *expect_text)
{
    json_error_t jerr;
    json_t *expect = json_loads (defaults_json, 0, &jerr);
    json_t *over = json_loads (expect_text, 0, &jerr);
    json_t *actual = conf_to_json (conf);
    const char *key;
    json_t *value;
    int bad = 0;

    assert_non_null (expect);
    if (!over) {
        fprintf (stderr, "# %s: bad expected JSON: %s\n", name, jerr.text);
        fail ();
    }
    json_object_foreach (over, key, value)
    {
        if (!json_object_get (expect, key)) {
            fprintf (stderr, "# %s: expect.json has unknown key '%s'\n", name,
                     key);
            bad++;
        }
    }
    assert_int_equal (json_object_update (expect, over), 0);
    json_object_foreach (expect, key, value)
    {
        json_t *got = json_object_get (actual, key);
        if (!got || !values_equal (got, value)) {
            char *w = json_dumps (value, JSON_ENCODE_ANY);
            char *g = got ? json_dumps (got, JSON_ENCODE_ANY) : NULL;
            fprintf (stderr, "# %s: %s: got %s, want %s\n", name, key,
                     g ? g : "(missing)", w ? w : "?");
            free (w);
            free (g);
            bad++;
        }
    }
    json_decref (expect);
    json_decref (over);
    json_decref (actual);
    return bad;
}

static bool conf_equal (const tr_conf_t *a, const tr_conf_t *b)
{
    json_t *ja = conf_to_json (a);
    json_t *jb = conf_to_json (b);
    bool eq = json_equal (ja, jb);

    json_decref (ja);
    json_decref (jb);
    return eq;
}

/* Load 'yaml' as "tracer.yaml" into a fresh conf and check it fails with
 * exactly 'want', EINVAL, and leaves the conf at its defaults.  Returns
 * the number of mismatches.
 */
static int check_error (const char *name,
                        const char *yaml,
                        const char *file,
                        const char *want)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_conf_t *pristine = tr_conf_create ();
    tr_error_t error;
    int bad = 0;
    int rc;

    assert_non_null (conf);
    assert_non_null (pristine);
    tr_error_clear (&error);
    errno = 0;
    rc = tr_conf_load_string (conf, file, yaml, &error);
    if (rc != -1 || errno != EINVAL) {
        fprintf (stderr, "# %s: rc %d errno %d, want -1 and EINVAL\n", name, rc,
                 errno);
        bad++;
    }
    if (strcmp (tr_error_str (&error), want) != 0) {
        fprintf (stderr, "# %s:\n#   got  '%s'\n#   want '%s'\n", name,
                 tr_error_str (&error), want);
        bad++;
    }
    if (!conf_equal (conf, pristine)) {
        fprintf (stderr, "# %s: conf changed by a failed load\n", name);
        bad++;
    }
    tr_conf_destroy (conf);
    tr_conf_destroy (pristine);
    return bad;
}

static int check_valid (const char *name, const char *yaml, const char *expect)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;
    int bad;

    assert_non_null (conf);
    tr_error_clear (&error);
    if (tr_conf_load_string (conf, "tracer.yaml", yaml, &error) < 0) {
        fprintf (stderr, "# %s: unexpected error: %s\n", name,
                 tr_error_str (&error));
        tr_conf_destroy (conf);
        return 1;
    }
    bad = compare_conf (name, conf, expect);
    tr_conf_destroy (conf);
    return bad;
}

struct error_case {
    const char *name;
    const char *yaml;
    const char *want; /* tr_error_str() of the failure */
};

static const struct error_case error_cases[] = {
    /* Unknown names, with and without a suggestion. */
    { "unknown key, typo", "sampling:\n  intervall: 2\n",
      "tracer.yaml:2:3: unknown key 'intervall' in section 'sampling' "
      "(did you mean 'interval'?)" },
    { "unknown key, typo in column 5", "sampling:\n    intervl: 2\n",
      "tracer.yaml:2:5: unknown key 'intervl' in section 'sampling' "
      "(did you mean 'interval'?)" },
    { "unknown key, no suggestion", "sampling:\n  frequency: 2\n",
      "tracer.yaml:2:3: unknown key 'frequency' in section 'sampling'" },
    { "unknown key, other section", "spool:\n  interval: 2\n",
      "tracer.yaml:2:3: unknown key 'interval' in section 'spool' "
      "(did you mean 'sampling.interval'?)" },
    { "unknown key, too short to suggest", "store:\n  pa: /x\n",
      "tracer.yaml:2:3: unknown key 'pa' in section 'store'" },
    { "unknown section, typo", "sampeling:\n  interval: 1\n",
      "tracer.yaml:1:1: unknown section 'sampeling' (did you mean "
      "'sampling'?)" },
    { "unknown section", "metrics: {}\n",
      "tracer.yaml:1:1: unknown section 'metrics'" },
    { "unknown section, dotted key", "cluster: {}\nsampling.interval: 2\n",
      "tracer.yaml:2:1: unknown section 'sampling.interval' (write "
      "'sampling.interval' as key 'interval' under a 'sampling:' section)" },
    { "unknown key, long name shown bounded",
      "cluster:\n  "
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      ": 1\n",
      "tracer.yaml:2:3: unknown key "
      "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' "
      "in section 'cluster'" },

    /* Numbers. */
    { "interval below range", "sampling:\n  interval: 0.01\n",
      "tracer.yaml:2:13: sampling.interval: 0.01 is out of range [0.1, 3600]" },
    { "interval above range", "sampling:\n  interval: 3601\n",
      "tracer.yaml:2:13: sampling.interval: 3601 is out of range [0.1, 3600]" },
    { "interval negative", "sampling: {interval: -1}\n",
      "tracer.yaml:1:22: sampling.interval: -1 is out of range [0.1, 3600]" },
    { "interval not a number", "sampling:\n  interval: fast\n",
      "tracer.yaml:2:13: sampling.interval: expected a number, got 'fast'" },
    { "interval with unit", "sampling:\n  interval: 5s\n",
      "tracer.yaml:2:13: sampling.interval: expected a number, got '5s'" },
    { "interval inf", "sampling:\n  interval: inf\n",
      "tracer.yaml:2:13: sampling.interval: expected a number, got 'inf'" },
    { "interval hex", "sampling:\n  interval: 0x10\n",
      "tracer.yaml:2:13: sampling.interval: expected a number, got '0x10'" },
    { "interval overflow", "sampling:\n  interval: 1e999\n",
      "tracer.yaml:2:13: sampling.interval: expected a number, got '1e999'" },
    { "retry_interval zero", "spool:\n  retry_interval: 0\n",
      "tracer.yaml:2:19: spool.retry_interval: 0 is out of range [1, 3600]" },
    { "retry_interval a microsecond", "spool:\n  retry_interval: 1e-6\n",
      "tracer.yaml:2:19: spool.retry_interval: 1e-6 is out of range [1, "
      "3600]" },
    { "retry_interval above an hour", "spool:\n  retry_interval: 3601\n",
      "tracer.yaml:2:19: spool.retry_interval: 3601 is out of range [1, "
      "3600]" },
    { "retry_max below a second", "spool:\n  retry_max: 0.5\n",
      "tracer.yaml:2:14: spool.retry_max: 0.5 is out of range [1, 86400]" },
    { "retry_max above a day", "spool:\n  retry_max: 86401\n",
      "tracer.yaml:2:14: spool.retry_max: 86401 is out of range [1, 86400]" },
    { "interval a microsecond", "sampling:\n  interval: 1e-6\n",
      "tracer.yaml:2:13: sampling.interval: 1e-6 is out of range [0.1, "
      "3600]" },
    { "snapshot_interval a microsecond",
      "sampling:\n  snapshot_interval: 0.000001\n",
      "tracer.yaml:2:22: sampling.snapshot_interval: 0.000001 is out of "
      "range: 0 (off) or [1, 86400]" },
    { "snapshot_interval above a day",
      "sampling:\n  snapshot_interval: 86401\n",
      "tracer.yaml:2:22: sampling.snapshot_interval: 86401 is out of range: 0 "
      "(off) or [1, 86400]" },
    { "snapshot_interval negative", "sampling:\n  snapshot_interval: -1\n",
      "tracer.yaml:2:22: sampling.snapshot_interval: -1 is out of range: 0 "
      "(off) or [1, 86400]" },
    { "mail.wait beyond Slurm's MailProg limit", "mail:\n  wait: 2min\n",
      "tracer.yaml:2:9: mail.wait: 2min is out of range [0, 100]" },
    { "mail.settle above 30 s", "mail:\n  settle: 31\n",
      "tracer.yaml:2:11: mail.settle: 31 is out of range [0, 30]" },
    { "mail.wait negative", "mail:\n  wait: -1s\n",
      "tracer.yaml:2:9: mail.wait: -1s is out of range [0, 100]" },
    { "prolog.timeout below a second", "prolog:\n  timeout: 0.5\n",
      "tracer.yaml:2:12: prolog.timeout: 0.5 is out of range [1, 25]" },
    { "retry_max below retry_interval",
      "spool:\n  retry_interval: 20\n  retry_max: 10\n",
      "tracer.yaml:3:14: spool.retry_max: 10 is less than "
      "spool.retry_interval (20)" },
    { "retry_interval above default retry_max",
      "spool:\n  retry_interval: 500\n",
      "tracer.yaml:2:19: spool.retry_interval: 500 is greater than "
      "spool.retry_max (300)" },

    /* Paths and names. */
    { "relative store.path", "store:\n  path: var/lib/tracer\n",
      "tracer.yaml:2:9: store.path: must be an absolute path" },
    { "empty store.path", "store:\n  path: \"\"\n",
      "tracer.yaml:2:9: store.path: must be an absolute path" },
    { "control character in path", "spool:\n  path: \"/var/a\\tb\"\n",
      "tracer.yaml:2:9: spool.path: path contains a control character" },
    { "relative munge_socket", "signing:\n  munge_socket: munge.sock\n",
      "tracer.yaml:2:17: signing.munge_socket: must be an absolute path" },
    { "relative state_dir", "daemon:\n  state_dir: run\n",
      "tracer.yaml:2:14: daemon.state_dir: must be an absolute path" },
    { "bad daemon.log", "daemon:\n  log: tracerd.log\n",
      "tracer.yaml:2:8: daemon.log: expected syslog, stderr or an absolute "
      "path, got 'tracerd.log'" },
    { "cluster name with dot-dot", "cluster:\n  name: ../etc\n",
      "tracer.yaml:2:9: cluster.name: '../etc' is not a valid name (1 to 64 "
      "of A-Z a-z 0-9 . _ -, not starting with '.')" },
    { "cluster name with slash", "cluster:\n  name: a/b\n",
      "tracer.yaml:2:9: cluster.name: 'a/b' is not a valid name (1 to 64 "
      "of A-Z a-z 0-9 . _ -, not starting with '.')" },
    { "cluster name empty", "cluster:\n  name: ''\n",
      "tracer.yaml:2:9: cluster.name: '' is not a valid name (1 to 64 "
      "of A-Z a-z 0-9 . _ -, not starting with '.')" },
    { "cluster name too long",
      "cluster:\n  name: "
      "c1234567890123456789012345678901234567890123456789012345678901234\n",
      "tracer.yaml:2:9: cluster.name: "
      "'c123456789012345678901234567890123456789012345678901234567890123...' "
      "is not a valid name (1 to 64 of A-Z a-z 0-9 . _ -, not starting "
      "with '.')" },
    { "cluster name with newline shown safely", "cluster:\n  name: \"a\\nb\"\n",
      "tracer.yaml:2:9: cluster.name: 'a?b' is not a valid name (1 to 64 "
      "of A-Z a-z 0-9 . _ -, not starting with '.')" },

    /* Modes, booleans, enums. */
    { "mode with 9", "store:\n  file_mode: '0999'\n",
      "tracer.yaml:2:14: store.file_mode: '0999' is not an octal mode" },
    { "mode too large", "store:\n  dir_mode: 17777\n",
      "tracer.yaml:2:13: store.dir_mode: '17777' is not an octal mode" },
    { "mode as word", "store:\n  dir_mode: rwx\n",
      "tracer.yaml:2:13: store.dir_mode: 'rwx' is not an octal mode" },
    { "file_mode world-writable", "store:\n  file_mode: 0666\n",
      "tracer.yaml:2:14: store.file_mode: '0666' lets others write; record "
      "files may have at most 0644 (no write for group or others, no "
      "execute, setuid, setgid or sticky bit)" },
    { "file_mode group-writable", "store:\n  file_mode: '0660'\n",
      "tracer.yaml:2:14: store.file_mode: '0660' lets the group write; "
      "record files may have at most 0644 (no write for group or others, no "
      "execute, setuid, setgid or sticky bit)" },
    { "file_mode setuid", "store:\n  file_mode: 04755\n",
      "tracer.yaml:2:14: store.file_mode: '04755' sets the setuid bit; "
      "record files may have at most 0644 (no write for group or others, no "
      "execute, setuid, setgid or sticky bit)" },
    { "file_mode setgid", "store:\n  file_mode: 2640\n",
      "tracer.yaml:2:14: store.file_mode: '2640' sets the setgid bit; record "
      "files may have at most 0644 (no write for group or others, no "
      "execute, setuid, setgid or sticky bit)" },
    { "file_mode sticky", "store:\n  file_mode: 0o1640\n",
      "tracer.yaml:2:14: store.file_mode: '0o1640' sets the sticky bit; "
      "record files may have at most 0644 (no write for group or others, no "
      "execute, setuid, setgid or sticky bit)" },
    { "file_mode executable", "store:\n  file_mode: 0750\n",
      "tracer.yaml:2:14: store.file_mode: '0750' makes records executable; "
      "record files may have at most 0644 (no write for group or others, no "
      "execute, setuid, setgid or sticky bit)" },
    { "dir_mode world-writable", "store:\n  dir_mode: 0777\n",
      "tracer.yaml:2:13: store.dir_mode: '0777' lets others write; store "
      "directories may have at most 02755, or 03775 for a group that writes "
      "records" },
    { "dir_mode world-writable even sticky", "store:\n  dir_mode: 1777\n",
      "tracer.yaml:2:13: store.dir_mode: '1777' lets others write; store "
      "directories may have at most 02755, or 03775 for a group that writes "
      "records" },
    { "dir_mode group-writable", "store:\n  dir_mode: 0775\n",
      "tracer.yaml:2:13: store.dir_mode: '0775' lets the group write without "
      "the sticky bit; store directories may have at most 02755, or 03775 "
      "for a group that writes records" },
    { "dir_mode setuid", "store:\n  dir_mode: 4755\n",
      "tracer.yaml:2:13: store.dir_mode: '4755' sets the setuid bit; store "
      "directories may have at most 02755, or 03775 for a group that writes "
      "records" },
    { "socket path longer than a unix socket takes",
      "daemon:\n  socket: /run/tracer/"
      "01234567890123456789012345678901234567890123456789"
      "01234567890123456789012345678901234567890.sock\n",
      "tracer.yaml:2:11: daemon.socket: path is 108 bytes long; a unix "
      "socket path holds at most 107" },
    { "munge socket longer than a unix socket takes",
      "signing:\n  munge_socket: \"/"
      "0123456789012345678901234567890123456789012345678901234567890123456789"
      "012345678901234567890123456789012345678901\"\n",
      "tracer.yaml:2:17: signing.munge_socket: path is 113 bytes long; a unix "
      "socket path holds at most 107" },
    { "bool maybe", "signing:\n  enabled: maybe\n",
      "tracer.yaml:2:12: signing.enabled: expected true or false, got "
      "'maybe'" },
    { "bool yes (YAML 1.1 only)", "signing:\n  enabled: yes\n",
      "tracer.yaml:2:12: signing.enabled: expected true or false, got 'yes'" },
    { "log level", "daemon:\n  log_level: verbose\n",
      "tracer.yaml:2:14: daemon.log_level: expected one of error, warning, "
      "notice, info, debug, got 'verbose'" },
    { "ebpf on", "sampling:\n  ebpf: on\n",
      "tracer.yaml:2:9: sampling.ebpf: expected one of false, true, auto, "
      "got 'on'" },

    /* Users and groups. */
    { "unknown user in list", "daemon:\n  notify_users: [root, nosuchuser]\n",
      "tracer.yaml:2:24: daemon.notify_users: unknown user 'nosuchuser'" },
    { "unknown user in block list",
      "signing:\n  trusted_signers:\n    - root\n    - nosuchuser\n",
      "tracer.yaml:4:7: signing.trusted_signers: unknown user 'nosuchuser'" },
    { "unknown owner", "store:\n  owner: nosuchuser\n",
      "tracer.yaml:2:10: store.owner: unknown user 'nosuchuser'" },
    { "uid out of range", "store:\n  owner: 4294967295\n",
      "tracer.yaml:2:10: store.owner: '4294967295' is not a valid uid" },
    { "uid overflow", "daemon:\n  notify_users: [99999999999999999999999]\n",
      "tracer.yaml:2:18: daemon.notify_users: '99999999999999999999999' is "
      "not a valid uid" },
    { "unknown group", "store:\n  group: nosuchgroup\n",
      "tracer.yaml:2:10: store.group: unknown group 'nosuchgroup'" },
    { "unknown admin group", "report:\n  admin_group: nosuchgroup\n",
      "tracer.yaml:2:16: report.admin_group: unknown group 'nosuchgroup'" },
    { "gid out of range", "report:\n  admin_group: 4294967295\n",
      "tracer.yaml:2:16: report.admin_group: '4294967295' is not a valid "
      "gid" },
    { "user list given a scalar", "daemon:\n  notify_users: root\n",
      "tracer.yaml:2:17: daemon.notify_users: expected a list of users, got "
      "a scalar" },
    { "user list given a mapping", "daemon:\n  notify_users: {root: 1}\n",
      "tracer.yaml:2:17: daemon.notify_users: expected a list of users, got "
      "a mapping" },
    { "user list nested", "daemon:\n  notify_users: [[root]]\n",
      "tracer.yaml:2:18: daemon.notify_users: expected a user name or uid, "
      "got a sequence" },
    { "user list empty value", "daemon:\n  notify_users:\n",
      "tracer.yaml:2:16: daemon.notify_users: missing value (write [] for an "
      "empty list)" },
    { "user list empty entry", "daemon:\n  notify_users:\n    - root\n    -\n",
      "tracer.yaml:4:6: daemon.notify_users: empty entry in the list" },
    { "bad redaction pattern",
      "sampling:\n  redact:\n    - 'token=(.*)'\n    - 'pass(word'\n",
      "tracer.yaml:4:7: sampling.redact: 'pass(word' is not a valid "
      "extended regular expression: Unmatched ( or \\(" },
    { "redaction not a list", "sampling:\n  redact: 'token=(.*)'\n",
      "tracer.yaml:2:11: sampling.redact: expected a list of regular "
      "expressions, got a scalar" },
    { "redaction entry empty", "sampling:\n  redact: ['a', '']\n",
      "tracer.yaml:2:17: sampling.redact: empty entry in the list" },
    { "tool pattern with a slash",
      "tools:\n  subcommands:\n    - mytool\n    - /usr/bin/x\n",
      "tracer.yaml:4:7: tools.subcommands: '/usr/bin/x' is not a program "
      "name pattern: 1 to 64 of A-Z a-z 0-9 . _ + - and * ? [ ] !" },
    { "tool pattern with a space",
      "tools:\n  interpreters: ['my scheme']\n",
      "tracer.yaml:2:18: tools.interpreters: 'my scheme' is not a program "
      "name pattern: 1 to 64 of A-Z a-z 0-9 . _ + - and * ? [ ] !" },
    { "tool rules not a list", "tools:\n  subcommands: mytool\n",
      "tracer.yaml:2:16: tools.subcommands: expected a list of program "
      "name patterns, got a scalar" },
    { "tool rules entry empty", "tools:\n  subcommands: [a, '']\n",
      "tracer.yaml:2:20: tools.subcommands: empty entry in the list" },
    { "redaction entry a map", "sampling:\n  redact: [{a: b}]\n",
      "tracer.yaml:2:12: sampling.redact: expected a regular expression, "
      "got a mapping" },
    { "cmdline_max too big", "sampling:\n  cmdline_max: 4096\n",
      "tracer.yaml:2:16: sampling.cmdline_max: 4096 is out of range "
      "[0, 1024]" },
    { "no trusted signers", "signing:\n  trusted_signers: []\n",
      "tracer.yaml:2:20: signing.trusted_signers: at least one user is "
      "required" },

    /* Structure. */
    { "missing value", "sampling:\n  interval:\n",
      "tracer.yaml:2:12: sampling.interval: missing value" },
    { "missing value, null", "cluster:\n  name: ~\n",
      "tracer.yaml:2:9: cluster.name: missing value" },
    { "mapping for a scalar key", "sampling:\n  interval: {a: 1}\n",
      "tracer.yaml:2:13: sampling.interval: expected a single value, got a "
      "mapping" },
    { "sequence for a scalar key", "sampling:\n  interval: [1, 2]\n",
      "tracer.yaml:2:13: sampling.interval: expected a single value, got a "
      "sequence" },
    { "scalar for a section", "sampling: 5\n",
      "tracer.yaml:1:11: section 'sampling': expected a mapping of keys, got "
      "a scalar" },
    { "sequence for a section", "store:\n  - path\n",
      "tracer.yaml:2:3: section 'store': expected a mapping of keys, got a "
      "sequence" },
    { "scalar at top level", "hello\n",
      "tracer.yaml:1:1: expected a mapping of sections at the top level, got "
      "a scalar" },
    { "sequence at top level", "- cluster\n",
      "tracer.yaml:1:1: expected a mapping of sections at the top level, got "
      "a sequence" },
    { "sequence as a section name", "? [a]\n: 1\n",
      "tracer.yaml:1:3: expected a section name, got a sequence" },
    { "mapping as a key", "sampling:\n  ? {a: 1}\n  : 2\n",
      "tracer.yaml:2:5: expected a key in section 'sampling', got a mapping" },
    { "duplicate key", "sampling:\n  interval: 1\n  interval: 2\n",
      "tracer.yaml:3:3: duplicate key 'interval' in section 'sampling' "
      "(first at line 2)" },
    { "duplicate section",
      "sampling:\n  interval: 1\nstore: {}\nsampling:\n  interval: 2\n",
      "tracer.yaml:4:1: duplicate section 'sampling' (first at line 1)" },
    { "two documents", "cluster: {}\n---\nstore: {}\n",
      "tracer.yaml:2:1: only one YAML document is allowed" },
    { "anchor", "cluster: &c\n  name: x\n",
      "tracer.yaml:1:10: anchors are not supported" },
    { "alias",
      "daemon:\n  notify_users: &u [root]\nsigning:\n  trusted_signers: *u\n",
      "tracer.yaml:2:17: anchors are not supported" },
    { "alias alone", "signing:\n  trusted_signers: *u\n",
      "tracer.yaml:2:20: aliases are not supported" },
    { "tag", "cluster:\n  name: !!str x\n",
      "tracer.yaml:2:9: tags are not supported" },
    { "NUL in a scalar", "cluster:\n  name: \"a\\0b\"\n",
      "tracer.yaml:2:9: NUL characters are not allowed" },

    /* The report subsections. */
    { "negative quantile", "report:\n  recommend:\n    mem_quantile: -0.5\n",
      "tracer.yaml:3:19: report.recommend.mem_quantile: -0.5 is out of range "
      "[0, 1]" },
    { "quantile above 1", "report:\n  recommend:\n    time_quantile: 1.5\n",
      "tracer.yaml:3:20: report.recommend.time_quantile: 1.5 is out of range "
      "[0, 1]" },
    { "quantile as a word", "report:\n  recommend:\n    cpu_quantile: high\n",
      "tracer.yaml:3:19: report.recommend.cpu_quantile: expected a number, "
      "got 'high'" },
    { "threshold as a list", "report:\n  diagnosis:\n    io_pressure: [0.2]\n",
      "tracer.yaml:3:18: report.diagnosis.io_pressure: expected a single "
      "value, got a sequence" },
    { "threshold as a bool", "report:\n  diagnosis:\n    imbalance: true\n",
      "tracer.yaml:3:16: report.diagnosis.imbalance: expected a number, got "
      "'true'" },
    { "fraction above 1", "report:\n  diagnosis:\n    idle_fraction: 2\n",
      "tracer.yaml:3:20: report.diagnosis.idle_fraction: 2 is out of range "
      "[0, 1]" },
    { "percent above 100", "report:\n  diagnosis:\n    gpu_idle_pct: 101\n",
      "tracer.yaml:3:19: report.diagnosis.gpu_idle_pct: 101 is out of range "
      "[0, 100]" },
    { "count not whole", "report: {recommend: {min_runs: 2.5}}\n",
      "tracer.yaml:1:32: report.recommend.min_runs: expected a whole number, "
      "got '2.5'" },
    { "count zero", "report: {recommend: {min_runs: 0}}\n",
      "tracer.yaml:1:32: report.recommend.min_runs: 0 is out of range "
      "[1, 1000000]" },
    { "last_runs negative", "report: {recommend: {last_runs: -1}}\n",
      "tracer.yaml:1:33: report.recommend.last_runs: -1 is out of range "
      "[0, 1000000]" },
    { "size with a bad unit", "report:\n  recommend:\n    mem_min: 256X\n",
      "tracer.yaml:3:14: report.recommend.mem_min: expected a size (bytes, "
      "or a number with K, M, G, T or P), got '256X'" },
    { "size with a space", "report:\n  recommend:\n    mem_min: 256 M\n",
      "tracer.yaml:3:14: report.recommend.mem_min: expected a size (bytes, "
      "or a number with K, M, G, T or P), got '256 M'" },
    { "negative size", "report:\n  diagnosis:\n    mem_min_request: -1G\n",
      "tracer.yaml:3:22: report.diagnosis.mem_min_request: -1G is out of "
      "range [0, 1P]" },
    { "duration with a space",
      "report:\n  diagnosis:\n    stalled_after: 10 min\n",
      "tracer.yaml:3:20: report.diagnosis.stalled_after: expected a duration "
      "(seconds, or a number with s, min, h or d), got '10 min'" },
    { "duration in weeks", "report:\n  recommend:\n    time_min: 1w\n",
      "tracer.yaml:3:15: report.recommend.time_min: expected a duration "
      "(seconds, or a number with s, min, h or d), got '1w'" },
    { "duration too long", "report:\n  diagnosis:\n    short_step: 400d\n",
      "tracer.yaml:3:17: report.diagnosis.short_step: 400d is out of range "
      "[0, 365d]" },
    { "z zero", "report:\n  regression:\n    z: 0\n",
      "tracer.yaml:3:8: report.regression.z: 0 is out of range (0, 1000]" },
    { "ratio one", "report:\n  regression:\n    ratio: 1\n",
      "tracer.yaml:3:12: report.regression.ratio: 1 is out of range "
      "(1, 1000]" },
    { "min_history above default max_history",
      "report:\n  regression:\n    min_history: 40\n",
      "tracer.yaml:3:18: report.regression.min_history: 40 is greater than "
      "report.regression.max_history (30)" },
    { "max_history below min_history",
      "report:\n  regression:\n    min_history: 10\n    max_history: 8\n",
      "tracer.yaml:4:18: report.regression.max_history: 8 is less than "
      "report.regression.min_history (10)" },
    { "negative price", "report:\n  cost:\n    core_hour: -0.1\n",
      "tracer.yaml:3:16: report.cost.core_hour: -0.1 is out of range "
      "[0, 1000000]" },
    { "currency too long",
      "report:\n  cost:\n    currency: Swiss francs, roughly\n",
      "tracer.yaml:3:15: report.cost.currency: 'Swiss francs, roughly' is "
      "longer than 16 bytes" },
    { "currency with a control character",
      "report:\n  cost:\n    currency: \"EU\\tR\"\n",
      "tracer.yaml:3:15: report.cost.currency: 'EU?R' contains a control "
      "character" },
    { "currency missing", "report:\n  cost:\n    currency:\n",
      "tracer.yaml:3:14: report.cost.currency: missing value" },
    { "unknown key in a subsection, typo",
      "report:\n  diagnosis:\n    io_presure: 0.3\n",
      "tracer.yaml:3:5: unknown key 'io_presure' in section "
      "'report.diagnosis' (did you mean 'io_pressure'?)" },
    { "unknown subsection, typo", "report:\n  diagnosys: {}\n",
      "tracer.yaml:2:3: unknown key 'diagnosys' in section 'report' (did you "
      "mean 'diagnosis'?)" },
    { "subsection key one level up", "report:\n  io_pressure: 0.3\n",
      "tracer.yaml:2:3: unknown key 'io_pressure' in section 'report' (did "
      "you mean 'report.diagnosis.io_pressure'?)" },
    { "dotted key in a section", "report:\n  diagnosis.io_pressure: 0.3\n",
      "tracer.yaml:2:3: unknown key 'diagnosis.io_pressure' in section "
      "'report' (write 'report.diagnosis.io_pressure' as key 'io_pressure' "
      "under 'diagnosis:' in the 'report:' section)" },
    { "dotted subsection key at the top level",
      "report.diagnosis.io_pressure: 0.3\n",
      "tracer.yaml:1:1: unknown section 'report.diagnosis.io_pressure' "
      "(write 'report.diagnosis.io_pressure' as key 'io_pressure' under "
      "'diagnosis:' in the 'report:' section)" },
    { "subsection at the top level", "cost:\n  core_hour: 1\n",
      "tracer.yaml:1:1: unknown section 'cost' (write it as 'cost:' in the "
      "'report:' section)" },
    { "dotted subsection at the top level", "report.regression:\n  z: 3\n",
      "tracer.yaml:1:1: unknown section 'report.regression' (write it as "
      "'regression:' in the 'report:' section)" },
    { "subsection given a scalar", "report:\n  cost: 5\n",
      "tracer.yaml:2:9: section 'report.cost': expected a mapping of keys, "
      "got a scalar" },
    { "duplicate subsection", "report:\n  cost: {}\n  cost: {}\n",
      "tracer.yaml:3:3: duplicate key 'cost' in section 'report' (first at "
      "line 2)" },
    { "duplicate key in a subsection",
      "report:\n  regression:\n    z: 3\n    z: 5\n",
      "tracer.yaml:4:5: duplicate key 'z' in section 'report.regression' "
      "(first at line 3)" },
    { "partitions as a list", "report:\n  cost:\n    partitions: [gpu]\n",
      "tracer.yaml:3:17: report.cost.partitions: expected a mapping of "
      "partition names to prices, got a sequence" },
    { "partitions missing", "report:\n  cost:\n    partitions:\n",
      "tracer.yaml:3:16: report.cost.partitions: missing value (write {} for "
      "no partitions)" },
    { "partition price negative",
      "report:\n  cost:\n    partitions:\n      gpu: {core_hour: -1}\n",
      "tracer.yaml:4:24: report.cost.partitions: partition 'gpu': core_hour: "
      "'-1' is not a price in [0, 1000000]" },
    { "partition price a word",
      "report:\n  cost:\n    partitions:\n      gpu:\n"
      "        gpu_hour: cheap\n",
      "tracer.yaml:5:19: report.cost.partitions: partition 'gpu': gpu_hour: "
      "'cheap' is not a price in [0, 1000000]" },
    { "partition price missing",
      "report:\n  cost:\n    partitions:\n      gpu: {gpu_hour: }\n",
      "tracer.yaml:4:23: report.cost.partitions: partition 'gpu': gpu_hour: "
      "expected a number, got nothing" },
    { "partition unknown price",
      "report:\n  cost:\n    partitions:\n      gpu: {gpu_hours: 2}\n",
      "tracer.yaml:4:13: report.cost.partitions: partition 'gpu': unknown "
      "key 'gpu_hours' (expected core_hour, gb_hour or gpu_hour)" },
    { "partition duplicate price",
      "report:\n  cost:\n    partitions:\n"
      "      gpu: {gpu_hour: 2, gpu_hour: 3}\n",
      "tracer.yaml:4:26: report.cost.partitions: partition 'gpu': duplicate "
      "key 'gpu_hour' (first at line 4)" },
    { "partition twice",
      "report:\n  cost:\n    partitions:\n      gpu: {}\n      gpu: {}\n",
      "tracer.yaml:5:7: report.cost.partitions: duplicate partition 'gpu'" },
    { "partition bad name",
      "report:\n  cost:\n    partitions:\n      ../x: {}\n",
      "tracer.yaml:4:7: report.cost.partitions: '../x' is not a valid "
      "partition name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with "
      "'.')" },
    { "partition without prices",
      "report:\n  cost:\n    partitions:\n      gpu:\n",
      "tracer.yaml:4:11: report.cost.partitions: partition 'gpu': missing "
      "value (write {} for the report.cost prices)" },
    { "partition prices a scalar",
      "report:\n  cost:\n    partitions:\n      gpu: 2\n",
      "tracer.yaml:4:12: report.cost.partitions: partition 'gpu': expected "
      "a mapping of prices, got a scalar" },
    { "partition name a list",
      "report:\n  cost:\n    partitions:\n      ? [a]\n      : {}\n",
      "tracer.yaml:4:9: report.cost.partitions: expected a partition name, "
      "got a sequence" },

    /* YAML syntax, with libyaml's own problem text. */
    { "tab indentation", "sampling:\n\tinterval: 1\n",
      "tracer.yaml:2:1: found character that cannot start any token "
      "(while scanning for the next token started at line 2)" },
    { "unclosed quote", "cluster:\n  name: \"abc\n",
      "tracer.yaml:3:1: found unexpected end of stream (while scanning a "
      "quoted scalar started at line 2)" },
    { "unclosed flow sequence", "daemon:\n  notify_users: [root\n",
      "tracer.yaml:3:1: did not find expected ',' or ']' (while parsing a "
      "flow sequence started at line 2)" },
    { "bad indentation", "sampling:\n  interval: 1\n retry: 2\n",
      "tracer.yaml:3:2: did not find expected key (while parsing a block "
      "mapping started at line 1)" },
    { "invalid UTF-8", "cluster:\n  name: caf\xe9\n",
      "tracer.yaml:2:12: incomplete UTF-8 octet sequence" },
    { "invalid UTF-8 leading octet", "cluster:\n  name: \xff\n",
      "tracer.yaml:2:9: invalid leading UTF-8 octet (byte 0xff)" },
    { "control character", "cluster:\n  name: a\x01\n",
      "tracer.yaml:2:10: control characters are not allowed (byte 0x01)" },
};

static void test_errors (void **state)
{
    int bad = 0;

    (void)state;
    for (size_t i = 0; i < sizeof (error_cases) / sizeof (error_cases[0]);
         i++) {
        const struct error_case *c = &error_cases[i];
        bad += check_error (c->name, c->yaml, "tracer.yaml", c->want);
    }
    assert_int_equal (bad, 0);
}

struct valid_case {
    const char *name;
    const char *yaml;
    const char *expect; /* flat JSON overlaid on the defaults */
};

static const struct valid_case valid_cases[] = {
    { "empty file", "", "{}" },
    { "comments only", "# nothing here\n\n   # still nothing\n", "{}" },
    { "empty document", "---\n", "{}" },
    { "null document", "~\n", "{}" },
    { "empty sections", "cluster:\nsampling:\nsigning: {}\n", "{}" },
    { "no redaction", "sampling:\n  redact: []\n",
      "{\"sampling.redact\": []}" },
    { "own redaction", "sampling:\n  redact:\n    - 'pin=([0-9]+)'\n",
      "{\"sampling.redact\": [\"pin=([0-9]+)\"]}" },
    { "sampling switches",
      "sampling:\n  taskstats: false\n  psi_mirror: true\n  gpu: false\n"
      "  delayacct: off\n  ebpf: false\n"
      "  nvml_library: /opt/nvidia/lib/libnvidia-ml.so.1\n"
      "  snapshot_interval: 0\n  cmdline_max: 0\n",
      "{\"sampling.taskstats\": false, \"sampling.psi_mirror\": 1,"
      " \"sampling.delayacct\": 0, \"sampling.ebpf\": 0,"
      " \"sampling.gpu\": false,"
      " \"sampling.nvml_library\": \"/opt/nvidia/lib/libnvidia-ml.so.1\","
      " \"sampling.snapshot_interval\": 0, \"sampling.cmdline_max\": 0}" },
    { "byte order mark", "\xef\xbb\xbfsampling:\n  interval: 2\n",
      "{\"sampling.interval\": 2}" },
    { "every key",
      "cluster:\n"
      "  name: hpc-1.prod_A\n"
      "store:\n"
      "  path: /shared/tracer\n"
      "  file_mode: 0600\n"
      "  dir_mode: 0700\n"
      "  owner: root\n"
      "  group: root\n"
      "spool:\n"
      "  path: /var/tmp/spool\n"
      "  retry_interval: 1.5\n"
      "  retry_max: 60\n"
      "  pending_max: 20\n"
      "daemon:\n"
      "  socket: /tmp/t.sock\n"
      "  state_dir: /tmp/state\n"
      "  log: /var/log/tracerd.log\n"
      "  log_level: debug\n"
      "  notify_users: [root, 4242]\n"
      "sampling:\n"
      "  interval: 0.25\n"
      "signing:\n"
      "  enabled: false\n"
      "  munge_socket: /run/munge/munge.socket.2\n"
      "  trusted_signers:\n"
      "    - 0\n"
      "    - 4243\n"
      "report:\n"
      "  admin_group: 0\n"
      "  diagnosis:\n"
      "    cpu_bound_efficiency: 0.85\n"
      "    cpu_pressure: 0.3\n"
      "    cpu_pressure_starved: 0.1\n"
      "    low_efficiency: 0.4\n"
      "    io_pressure: 0.25\n"
      "    mem_pressure: 0.15\n"
      "    mem_near_limit: 0.9\n"
      "    swap_min: 64M\n"
      "    mem_low_fraction: 0.3\n"
      "    mem_min_request: 2GiB\n"
      "    idle_fraction: 0.6\n"
      "    idle_min_elapsed: 2min\n"
      "    stalled_after: 1h\n"
      "    throttled_fraction: 0.1\n"
      "    imbalance: 0.7\n"
      "    short_step: 30\n"
      "    gpu_idle_pct: 5\n"
      "  recommend:\n"
      "    mem_quantile: 0.99\n"
      "    mem_headroom: 0.1\n"
      "    time_quantile: 0.9\n"
      "    time_margin: 0.5\n"
      "    cpu_quantile: 0.75\n"
      "    min_runs: 5\n"
      "    last_runs: 100\n"
      "    mem_min: 1G\n"
      "    time_min: 10m\n"
      "  regression:\n"
      "    min_history: 10\n"
      "    max_history: 50\n"
      "    z: 3.5\n"
      "    ratio: 2\n"
      "  cost:\n"
      "    core_hour: 0.02\n"
      "    gb_hour: 0.004\n"
      "    gpu_hour: 1.5\n"
      "    currency: EUR\n"
      "    partitions:\n"
      "      gpu: {core_hour: 0.03, gpu_hour: 2.5}\n"
      "      bigmem:\n"
      "        gb_hour: 0.008\n",
      "{\"cluster.name\": \"hpc-1.prod_A\","
      " \"store.path\": \"/shared/tracer\","
      " \"store.file_mode\": \"0600\","
      " \"store.dir_mode\": \"0700\","
      " \"store.owner\": 0,"
      " \"store.group\": 0,"
      " \"spool.path\": \"/var/tmp/spool\","
      " \"spool.retry_interval\": 1.5,"
      " \"spool.retry_max\": 60,"
      " \"spool.pending_max\": 20,"
      " \"daemon.socket\": \"/tmp/t.sock\","
      " \"daemon.squeue\": \"/usr/bin/squeue\","
      " \"daemon.state_dir\": \"/tmp/state\","
      " \"daemon.log\": \"/var/log/tracerd.log\","
      " \"daemon.log_level\": \"debug\","
      " \"daemon.notify_users\": [0, 4242],"
      " \"sampling.interval\": 0.25,"
      " \"signing.enabled\": false,"
      " \"signing.munge_socket\": \"/run/munge/munge.socket.2\","
      " \"signing.trusted_signers\": [0, 4243],"
      " \"report.admin_group\": 0,"
      " \"report.diagnosis.cpu_bound_efficiency\": 0.85,"
      " \"report.diagnosis.cpu_pressure\": 0.3,"
      " \"report.diagnosis.cpu_pressure_starved\": 0.1,"
      " \"report.diagnosis.low_efficiency\": 0.4,"
      " \"report.diagnosis.io_pressure\": 0.25,"
      " \"report.diagnosis.mem_pressure\": 0.15,"
      " \"report.diagnosis.mem_near_limit\": 0.9,"
      " \"report.diagnosis.swap_min\": 67108864,"
      " \"report.diagnosis.mem_low_fraction\": 0.3,"
      " \"report.diagnosis.mem_min_request\": 2147483648,"
      " \"report.diagnosis.idle_fraction\": 0.6,"
      " \"report.diagnosis.idle_min_elapsed\": 120,"
      " \"report.diagnosis.stalled_after\": 3600,"
      " \"report.diagnosis.throttled_fraction\": 0.1,"
      " \"report.diagnosis.imbalance\": 0.7,"
      " \"report.diagnosis.short_step\": 30,"
      " \"report.diagnosis.gpu_idle_pct\": 5,"
      " \"report.recommend.mem_quantile\": 0.99,"
      " \"report.recommend.mem_headroom\": 0.1,"
      " \"report.recommend.time_quantile\": 0.9,"
      " \"report.recommend.time_margin\": 0.5,"
      " \"report.recommend.cpu_quantile\": 0.75,"
      " \"report.recommend.min_runs\": 5,"
      " \"report.recommend.last_runs\": 100,"
      " \"report.recommend.mem_min\": 1073741824,"
      " \"report.recommend.time_min\": 600,"
      " \"report.regression.min_history\": 10,"
      " \"report.regression.max_history\": 50,"
      " \"report.regression.z\": 3.5,"
      " \"report.regression.ratio\": 2,"
      " \"report.cost.core_hour\": 0.02,"
      " \"report.cost.gb_hour\": 0.004,"
      " \"report.cost.gpu_hour\": 1.5,"
      " \"report.cost.currency\": \"EUR\","
      " \"report.cost.partitions\": {"
      "\"gpu\": {\"core_hour\": 0.03, \"gpu_hour\": 2.5},"
      " \"bigmem\": {\"gb_hour\": 0.008}}}" },
    { "flow style", "{sampling: {interval: 2}, daemon: {log: stderr}}",
      "{\"sampling.interval\": 2, \"daemon.log\": \"stderr\"}" },
    { "mode forms", "store:\n  file_mode: 640\n  dir_mode: \"0o750\"\n",
      "{\"store.file_mode\": \"0640\", \"store.dir_mode\": \"0750\"}" },
    { "mode quoted", "store:\n  file_mode: '0444'\n  dir_mode: 0o2755\n",
      "{\"store.file_mode\": \"0444\", \"store.dir_mode\": \"2755\"}" },
    { "bool FALSE", "signing:\n  enabled: FALSE\n",
      "{\"signing.enabled\": false}" },
    { "bool True", "signing:\n  enabled: True\n",
      "{\"signing.enabled\": true}" },
    { "log level any case", "daemon:\n  log_level: Warning\n",
      "{\"daemon.log_level\": \"warning\"}" },
    { "log levels", "daemon:\n  log_level: error\n",
      "{\"daemon.log_level\": \"error\"}" },
    { "log level notice", "daemon:\n  log_level: notice\n",
      "{\"daemon.log_level\": \"notice\"}" },
    { "interval bounds low", "sampling:\n  interval: 0.1\n",
      "{\"sampling.interval\": 0.1}" },
    { "interval bounds high", "sampling:\n  interval: 3600\n",
      "{\"sampling.interval\": 3600}" },
    { "interval exponent", "sampling:\n  interval: 1e1\n",
      "{\"sampling.interval\": 10}" },
    { "interval quoted", "sampling:\n  interval: \"2.5\"\n",
      "{\"sampling.interval\": 2.5}" },
    { "retry equal", "spool:\n  retry_interval: 7\n  retry_max: 7\n",
      "{\"spool.retry_interval\": 7, \"spool.retry_max\": 7}" },
    { "retry both raised", "spool:\n  retry_max: 900\n  retry_interval: 400\n",
      "{\"spool.retry_interval\": 400, \"spool.retry_max\": 900}" },
    { "notify users always root", "daemon:\n  notify_users: []\n",
      "{\"daemon.notify_users\": [0]}" },
    { "notify users deduplicated",
      "daemon:\n  notify_users: [4000, root, \"0\", 4000, 0]\n",
      "{\"daemon.notify_users\": [0, 4000]}" },
    { "signers by number", "signing:\n  trusted_signers: [4001]\n",
      "{\"signing.trusted_signers\": [4001]}" },
    { "owner job", "store:\n  owner: job\n", "{\"store.owner\": \"job\"}" },
    { "owner by name", "store:\n  owner: root\n", "{\"store.owner\": 0}" },
    { "group by name", "store:\n  group: root\n", "{\"store.group\": 0}" },
    { "group by number", "report:\n  admin_group: 4321\n",
      "{\"report.admin_group\": 4321}" },
    { "optional keys null",
      "store:\n  group:\nsigning:\n  munge_socket: ~\nreport:\n"
      "  admin_group: null\n",
      "{}" },
    { "name 64 chars",
      "cluster:\n  name: "
      "c123456789012345678901234567890123456789012345678901234567890123\n",
      "{\"cluster.name\": "
      "\"c123456789012345678901234567890123456789012345678901234567890123\"}" },
    { "path with spaces and UTF-8", "store:\n  path: \"/srv/tr\xc3\xa4 cer\"\n",
      "{\"store.path\": \"/srv/tr\xc3\xa4 cer\"}" },
    { "daemon log stderr", "daemon:\n  log: stderr\n",
      "{\"daemon.log\": \"stderr\"}" },
    { "explicit document end", "---\ncluster:\n  name: x\n...\n",
      "{\"cluster.name\": \"x\"}" },
    { "empty subsections",
      "report:\n  diagnosis:\n  recommend: {}\n"
      "  regression: ~\n  cost:\n",
      "{}" },
    { "size units",
      "report:\n  diagnosis:\n    swap_min: 1.5K\n    mem_min_request: 3T\n"
      "  recommend:\n    mem_min: 1048576\n",
      "{\"report.diagnosis.swap_min\": 1536,"
      " \"report.diagnosis.mem_min_request\": 3298534883328,"
      " \"report.recommend.mem_min\": 1048576}" },
    { "size units with B", "report: {recommend: {mem_min: 512MB}}",
      "{\"report.recommend.mem_min\": 536870912}" },
    { "duration units",
      "report:\n  diagnosis:\n    short_step: 2.5s\n    stalled_after: 1.5h\n"
      "    idle_min_elapsed: 1d\n  recommend:\n    time_min: 90\n",
      "{\"report.diagnosis.short_step\": 2.5,"
      " \"report.diagnosis.stalled_after\": 5400,"
      " \"report.diagnosis.idle_min_elapsed\": 86400,"
      " \"report.recommend.time_min\": 90}" },
    { "quantile bounds",
      "report: {recommend: {mem_quantile: 0,"
      " time_quantile: 1, cpu_quantile: 0.5}}",
      "{\"report.recommend.mem_quantile\": 0,"
      " \"report.recommend.time_quantile\": 1,"
      " \"report.recommend.cpu_quantile\": 0.5}" },
    { "history equal",
      "report: {regression: {min_history: 7,"
      " max_history: 7}}",
      "{\"report.regression.min_history\": 7,"
      " \"report.regression.max_history\": 7}" },
    { "currency UTF-8 and empty partitions",
      "report:\n  cost:\n    currency: \"\xe2\x82\xac\"\n"
      "    partitions: {}\n",
      "{\"report.cost.currency\": \"\xe2\x82\xac\"}" },
    { "partition without prices of its own",
      "report: {cost: {gpu_hour: 2, partitions: {debug: {}}}}",
      "{\"report.cost.gpu_hour\": 2,"
      " \"report.cost.partitions\": {\"debug\": {}}}" },
};

static void test_valid (void **state)
{
    int bad = 0;

    (void)state;
    for (size_t i = 0; i < sizeof (valid_cases) / sizeof (valid_cases[0]);
         i++) {
        const struct valid_case *c = &valid_cases[i];
        bad += check_valid (c->name, c->yaml, c->expect);
    }
    assert_int_equal (bad, 0);
}

static void test_defaults (void **state)
{
    tr_conf_t *conf = tr_conf_create ();

    (void)state;
    assert_non_null (conf);
    assert_int_equal (compare_conf ("defaults", conf, "{}"), 0);
    /* The JSON view maps levels by name; check the syslog values too. */
    assert_int_equal (conf->log_level, LOG_INFO);
    assert_int_equal (conf->store_file_mode, 0640);
    assert_int_equal (conf->store_dir_mode, 0755);
    tr_conf_destroy (conf);
    tr_conf_destroy (NULL);
}

/* A second file applies on top of the first; optional keys can be unset
 * again with an empty value.
 */
static void test_layering (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;

    (void)state;
    assert_non_null (conf);
    assert_int_equal (tr_conf_load_string (conf, "a.yaml",
                                           "sampling: {interval: 2}\n"
                                           "store: {group: 0}\n"
                                           "signing: {munge_socket: /m}\n",
                                           &error),
                      0);
    assert_int_equal (tr_conf_load_string (conf, "b.yaml",
                                           "cluster: {name: b}\n"
                                           "store: {group: ~}\n"
                                           "signing: {munge_socket: ~}\n",
                                           &error),
                      0);
    assert_int_equal (compare_conf ("layering", conf,
                                    "{\"sampling.interval\": 2,"
                                    " \"cluster.name\": \"b\"}"),
                      0);
    tr_conf_destroy (conf);
}

/* A failed load leaves every field as it was, even keys the bad file
 * set successfully before its error.
 */
static void test_unchanged_on_failure (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_conf_t *before = tr_conf_create ();
    tr_error_t error;
    const char *first = "cluster: {name: one}\n"
                        "daemon: {notify_users: [4000], log: /l}\n"
                        "signing: {munge_socket: /m}\n";

    (void)state;
    assert_non_null (conf);
    assert_non_null (before);
    assert_int_equal (tr_conf_load_string (conf, "a.yaml", first, &error), 0);
    assert_int_equal (tr_conf_load_string (before, "a.yaml", first, &error), 0);
    errno = 0;
    assert_int_equal (tr_conf_load_string (conf, "b.yaml",
                                           "cluster: {name: two}\n"
                                           "daemon: {notify_users: [4001],"
                                           " log: stderr}\n"
                                           "signing: {munge_socket: ~}\n"
                                           "sampling: {interval: 0}\n",
                                           &error),
                      -1);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (tr_error_str (&error), "b.yaml:4:22: "
                                                "sampling.interval: 0 is out "
                                                "of range "
                                                "[0.1, 3600]");
    assert_true (conf_equal (conf, before));
    assert_string_equal (conf->cluster_name, "one");
    assert_string_equal (conf->munge_socket, "/m");
    tr_conf_destroy (conf);
    tr_conf_destroy (before);
}

static void test_bad_arguments (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;

    (void)state;
    assert_non_null (conf);
    errno = 0;
    assert_int_equal (tr_conf_load (NULL, "/x", &error), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_conf_load (conf, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_conf_load_string (conf, "x", NULL, &error), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_conf_foreach_key (NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    /* A NULL error is allowed everywhere. */
    errno = 0;
    assert_int_equal (tr_conf_load_string (conf, "x", "bogus: 1\n", NULL), -1);
    assert_int_equal (errno, EINVAL);
    tr_conf_destroy (conf);
}

static void test_too_large (void **state)
{
    size_t size = 1024 * 1024 + 1;
    char *text = malloc (size + 1);

    (void)state;
    assert_non_null (text);
    /* A comment line per 64 bytes: valid YAML, just too much of it. */
    for (size_t i = 0; i < size; i++)
        text[i] = (i % 64 == 63) ? '\n' : '#';
    text[size] = '\0';
    assert_int_equal (check_error ("too large", text, "big.yaml",
                                   "big.yaml: file is larger than 1048576 "
                                   "bytes"),
                      0);
    /* One byte less is fine. */
    text[size - 1] = '\0';
    assert_int_equal (check_valid ("just under the limit", text, "{}"), 0);
    free (text);
}

static void test_long_list (void **state)
{
    char *text = malloc (8 * 300 + 64);
    size_t len;

    (void)state;
    assert_non_null (text);
    len = (size_t)snprintf (text, 64, "daemon:\n  notify_users: [");
    for (int i = 0; i < 257; i++)
        len += (size_t)snprintf (text + len, 8, "%d, ", 1000 + i);
    snprintf (text + len, 8, "]\n");
    assert_int_equal (check_error ("too many users", text, "tracer.yaml",
                                   "tracer.yaml:2:1554: daemon.notify_users: "
                                   "more than 256 entries"),
                      0);
    free (text);
}

/* 256 partitions are fine, one more is not. */
static void test_long_partitions (void **state)
{
    size_t size = 64 + 300 * 16;
    char *text = malloc (size);
    size_t len;

    (void)state;
    assert_non_null (text);
    len = (size_t)snprintf (text, size, "report:\n  cost:\n    partitions:\n");
    for (int i = 0; i < 256; i++)
        len += (size_t)snprintf (text + len, size - len, "      p%d: {}\n", i);
    {
        tr_conf_t *conf = tr_conf_create ();
        tr_error_t error;
        assert_non_null (conf);
        assert_int_equal (tr_conf_load_string (conf, "tracer.yaml", text,
                                               &error),
                          0);
        assert_int_equal (conf->cost.n_partitions, 256);
        assert_string_equal (conf->cost.partitions[255].name, "p255");
        assert_true (isnan (conf->cost.partitions[255].gpu_hour));
        tr_conf_destroy (conf);
    }
    snprintf (text + len, size - len, "      p256: {}\n");
    assert_int_equal (check_error ("257 partitions", text, "tracer.yaml",
                                   "tracer.yaml:260:7: report.cost.partitions: "
                                   "more than 256 partitions"),
                      0);
    free (text);
}

/* Prices per partition fall back to report.cost price by price; a
 * later file replaces the whole partition table; a failed load keeps
 * the table it had.
 */
static void test_cost_rates (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_conf_t *before;
    tr_error_t error;
    double core, gb, gpu;

    (void)state;
    assert_non_null (conf);
    tr_conf_cost_rates (conf, "gpu", &core, &gb, &gpu);
    assert_true (core == 0 && gb == 0 && gpu == 0);
    assert_string_equal (conf->cost.currency, "");
    assert_int_equal (conf->cost.n_partitions, 0);
    assert_null (conf->cost.partitions);

    tr_error_clear (&error);
    assert_int_equal (tr_conf_load_string (conf, "a.yaml",
                                           "report:\n"
                                           "  cost:\n"
                                           "    core_hour: 0.01\n"
                                           "    gb_hour: 0.002\n"
                                           "    gpu_hour: 1\n"
                                           "    partitions:\n"
                                           "      gpu: {gpu_hour: 3, "
                                           "core_hour: 0}\n"
                                           "      big: {gb_hour: 0.01}\n",
                                           &error),
                      0);
    tr_conf_cost_rates (conf, "gpu", &core, &gb, &gpu);
    assert_true (core == 0 && gb == 0.002 && gpu == 3);
    tr_conf_cost_rates (conf, "big", &core, &gb, &gpu);
    assert_true (core == 0.01 && gb == 0.01 && gpu == 1);
    tr_conf_cost_rates (conf, "other", &core, &gb, &gpu);
    assert_true (core == 0.01 && gb == 0.002 && gpu == 1);
    tr_conf_cost_rates (conf, NULL, &core, NULL, NULL);
    assert_true (core == 0.01);
    /* "Big" is not "big": partition names are compared exactly. */
    tr_conf_cost_rates (conf, "Big", NULL, &gb, NULL);
    assert_true (gb == 0.002);

    /* A failed load leaves the table alone, partitions included. */
    assert_non_null (before = tr_conf_create ());
    assert_int_equal (tr_conf_load_string (before, "a.yaml",
                                           "report:\n"
                                           "  cost:\n"
                                           "    core_hour: 0.01\n"
                                           "    gb_hour: 0.002\n"
                                           "    gpu_hour: 1\n"
                                           "    partitions:\n"
                                           "      gpu: {gpu_hour: 3, "
                                           "core_hour: 0}\n"
                                           "      big: {gb_hour: 0.01}\n",
                                           &error),
                      0);
    assert_int_equal (tr_conf_load_string (conf, "b.yaml",
                                           "report:\n"
                                           "  cost:\n"
                                           "    partitions: {x: {}}\n"
                                           "    currency: \"\\x01\"\n",
                                           &error),
                      -1);
    assert_true (conf_equal (conf, before));
    tr_conf_destroy (before);

    /* A second file's table replaces the first's. */
    assert_int_equal (tr_conf_load_string (conf, "c.yaml",
                                           "report: {cost: {partitions: "
                                           "{debug: {core_hour: 0.5}}}}\n",
                                           &error),
                      0);
    assert_int_equal (compare_conf ("replaced", conf,
                                    "{\"report.cost.core_hour\": 0.01,"
                                    " \"report.cost.gb_hour\": 0.002,"
                                    " \"report.cost.gpu_hour\": 1,"
                                    " \"report.cost.partitions\":"
                                    " {\"debug\": {\"core_hour\": 0.5}}}"),
                      0);
    tr_conf_cost_rates (conf, "gpu", NULL, NULL, &gpu);
    assert_true (gpu == 1);
    tr_conf_destroy (conf);
}

static char *write_temp (const char *content)
{
    char tmpl[] = "/tmp/test_conf.XXXXXX";
    int fd = mkstemp (tmpl);
    size_t len = strlen (content);

    assert_true (fd >= 0);
    assert_int_equal (write (fd, content, len), (ssize_t)len);
    assert_int_equal (close (fd), 0);
    return strdup (tmpl);
}

static void test_load_file (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;
    char *path = write_temp ("sampling:\n  interval: 2\n");
    char *bad = write_temp ("sampling:\n  interval: x\n");
    char link[64], want[256];

    (void)state;
    assert_non_null (conf);
    assert_non_null (path);
    assert_non_null (bad);

    assert_int_equal (tr_conf_load (conf, path, &error), 0);
    assert_true (conf->interval_s == 2);

    /* Errors name the file as given. */
    errno = 0;
    assert_int_equal (tr_conf_load (conf, bad, &error), -1);
    assert_int_equal (errno, EINVAL);
    snprintf (want, sizeof (want),
              "%s:2:13: sampling.interval: expected a number, got 'x'", bad);
    assert_string_equal (tr_error_str (&error), want);
    assert_string_equal (error.file, bad);
    assert_int_equal (error.line, 2);
    assert_int_equal (error.column, 13);
    assert_true (conf->interval_s == 2);

    /* Symlinked configs are followed (sites link /etc files into place). */
    snprintf (link, sizeof (link), "%s.link", path);
    assert_int_equal (symlink (path, link), 0);
    assert_int_equal (tr_conf_load (conf, link, &error), 0);
    unlink (link);

    /* An empty file is all defaults; an oversized one is refused. */
    assert_int_equal (truncate (path, 0), 0);
    assert_int_equal (tr_conf_load (conf, path, &error), 0);
    assert_true (conf->interval_s == 2);
    assert_int_equal (truncate (path, 1024 * 1024 + 1), 0);
    errno = 0;
    assert_int_equal (tr_conf_load (conf, path, &error), -1);
    assert_int_equal (errno, EINVAL);
    snprintf (want, sizeof (want), "%s: file is larger than 1048576 bytes",
              path);
    assert_string_equal (tr_error_str (&error), want);

    unlink (path);
    unlink (bad);
    free (path);
    free (bad);
    tr_conf_destroy (conf);
}

static void test_missing_file (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_conf_t *pristine = tr_conf_create ();
    tr_error_t error;

    (void)state;
    assert_non_null (conf);
    assert_non_null (pristine);
    errno = 0;
    assert_int_equal (tr_conf_load (conf, "/nonexistent/tracer.yaml", &error),
                      -1);
    assert_int_equal (errno, ENOENT);
    assert_string_equal (tr_error_str (&error), "/nonexistent/tracer.yaml: No "
                                                "such file or "
                                                "directory");
    assert_true (conf_equal (conf, pristine));
    tr_conf_destroy (conf);
    tr_conf_destroy (pristine);
}

static void test_not_regular (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;

    (void)state;
    assert_non_null (conf);
    errno = 0;
    assert_int_equal (tr_conf_load (conf, "/tmp", &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (tr_error_str (&error), "/tmp: not a regular file");
    errno = 0;
    assert_int_equal (tr_conf_load (conf, "/dev/null", &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (tr_error_str (&error), "/dev/null: not a regular "
                                                "file");
    tr_conf_destroy (conf);
}

static void test_default_path (void **state)
{
    const char *suffix = "/tracer/tracer.yaml";
    const char *p;

    (void)state;
    assert_int_equal (setenv ("TRACER_CONF", "/opt/t.yaml", 1), 0);
    assert_string_equal (tr_conf_default_path (), "/opt/t.yaml");
    assert_int_equal (setenv ("TRACER_CONF", "", 1), 0);
    p = tr_conf_default_path ();
    assert_true (strlen (p) > strlen (suffix));
    assert_string_equal (p + strlen (p) - strlen (suffix), suffix);
    assert_true (p[0] == '/');
    assert_int_equal (unsetenv ("TRACER_CONF"), 0);
    assert_string_equal (tr_conf_default_path (), p);
}

struct seen {
    int count[NKEYS];
    int unknown;
    int bad_text;
};

static void count_key (const char *key,
                       const char *description,
                       const char *default_text,
                       void *arg)
{
    struct seen *s = arg;

    if (!description || strlen (description) < 10 || !default_text
        || !default_text[0])
        s->bad_text++;
    for (size_t i = 0; i < NKEYS; i++) {
        if (!strcmp (all_keys[i], key)) {
            s->count[i]++;
            return;
        }
    }
    fprintf (stderr, "# unexpected key %s\n", key);
    s->unknown++;
}

static void test_foreach_key (void **state)
{
    struct seen s;

    (void)state;
    memset (&s, 0, sizeof (s));
    assert_int_equal (tr_conf_foreach_key (count_key, &s), 0);
    assert_int_equal (s.unknown, 0);
    assert_int_equal (s.bad_text, 0);
    for (size_t i = 0; i < NKEYS; i++) {
        if (s.count[i] != 1)
            fprintf (stderr, "# %s listed %d times\n", all_keys[i], s.count[i]);
        assert_int_equal (s.count[i], 1);
    }
}

static char *read_text (const char *path)
{
    FILE *f = fopen (path, "r");
    char *buf;
    long size;

    if (!f) {
        fprintf (stderr, "# %s: %s\n", path, strerror (errno));
        fail ();
    }
    assert_int_equal (fseek (f, 0, SEEK_END), 0);
    size = ftell (f);
    assert_true (size >= 0);
    rewind (f);
    buf = malloc ((size_t)size + 1);
    assert_non_null (buf);
    assert_int_equal (fread (buf, 1, (size_t)size, f), (size_t)size);
    buf[size] = '\0';
    fclose (f);
    return buf;
}

/* The shipped file parses to the defaults as shipped, and again with
 * every commented-out setting ("  #key: value", or deeper in a
 * subsection) switched on by deleting its '#': so every key is present
 * and its commented value really is the default.
 */
static void test_shipped_config (void **state)
{
    tr_conf_t *conf = tr_conf_create ();
    tr_error_t error;
    char *text, *p, *q;
    int settings = 0;

    (void)state;
    assert_non_null (conf);
    tr_error_clear (&error);
    if (tr_conf_load (conf, SHIPPED_CONF, &error) < 0)
        fprintf (stderr, "# %s\n", tr_error_str (&error));
    assert_int_equal (compare_conf ("shipped", conf, "{}"), 0);

    text = read_text (SHIPPED_CONF);
    for (p = q = text; *p;) {
        size_t indent = strspn (p, " ");
        bool setting = indent >= 2 && p[indent] == '#' && p[indent + 1] >= 'a'
                       && p[indent + 1] <= 'z';
        char *eol = strchr (p, '\n');
        size_t len = eol ? (size_t)(eol - p) + 1 : strlen (p);

        if (setting) {
            memmove (q, p, indent);
            memmove (q + indent, p + indent + 1, len - indent - 1);
            q += len - 1;
            settings++;
        }
        else {
            memmove (q, p, len);
            q += len;
        }
        p += len;
    }
    *q = '\0';
    assert_int_equal (settings, NKEYS);
    tr_error_clear (&error);
    if (tr_conf_load_string (conf, "tracer.yaml", text, &error) < 0)
        fprintf (stderr, "# uncommented: %s\n", tr_error_str (&error));
    assert_int_equal (error.text[0], '\0');
    assert_int_equal (compare_conf ("shipped, uncommented", conf, "{}"), 0);
    free (text);
    tr_conf_destroy (conf);
}

static int case_filter (const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Run fn on every case directory under DATA_DIR/kind; returns the total
 * of fn's mismatch counts, and the number of cases through *ncases.
 */
static int for_each_case (const char *kind,
                          int (*fn) (const char *dir, const char *name),
                          int *ncases)
{
    char dir[512];
    struct dirent **names;
    int n, bad = 0;

    snprintf (dir, sizeof (dir), "%s/%s", DATA_DIR, kind);
    n = scandir (dir, &names, case_filter, alphasort);
    if (n < 0) {
        fprintf (stderr, "# %s: %s\n", dir, strerror (errno));
        fail ();
    }
    for (int i = 0; i < n; i++) {
        char casedir[1024];
        snprintf (casedir, sizeof (casedir), "%s/%s", dir, names[i]->d_name);
        bad += fn (casedir, names[i]->d_name);
        free (names[i]);
    }
    free (names);
    *ncases = n;
    return bad;
}

static char *read_case_file (const char *dir, const char *file)
{
    char path[1200];

    snprintf (path, sizeof (path), "%s/%s", dir, file);
    return read_text (path);
}

static int run_valid_case (const char *dir, const char *name)
{
    char *yaml = read_case_file (dir, "input.yaml");
    char *expect = read_case_file (dir, "expect.json");
    char label[300];
    int bad;

    snprintf (label, sizeof (label), "valid/%s", name);
    bad = check_valid (label, yaml, expect);
    free (yaml);
    free (expect);
    return bad;
}

static int run_invalid_case (const char *dir, const char *name)
{
    char *yaml = read_case_file (dir, "input.yaml");
    char *want = read_case_file (dir, "error");
    char label[300];
    size_t len = strlen (want);
    int bad;

    while (len > 0 && want[len - 1] == '\n')
        want[--len] = '\0';
    snprintf (label, sizeof (label), "invalid/%s", name);
    bad = check_error (label, yaml, "input.yaml", want);
    free (yaml);
    free (want);
    return bad;
}

static void test_data_valid (void **state)
{
    int n;

    (void)state;
    assert_int_equal (for_each_case ("valid", run_valid_case, &n), 0);
    assert_true (n >= 5);
}

/* A step_start's interval_s is used only within sampling.interval's
 * bounds: 0 (not given), a microsecond, an hour and a second, NaN and
 * infinity fall back to the daemon's own.
 */
static void test_step_interval (void **state)
{
    tr_conf_t *c = tr_conf_create ();
    tr_error_t e;

    (void)state;
    assert_non_null (c);
    assert_int_equal (tr_conf_load_string (c, "t", "sampling: {interval: 2}\n",
                                           &e),
                      0);
    assert_true (tr_conf_step_interval (c, 0) == 2.0);
    assert_true (tr_conf_step_interval (c, 1e-6) == 2.0);
    assert_true (tr_conf_step_interval (c, 0.099) == 2.0);
    assert_true (tr_conf_step_interval (c, -1) == 2.0);
    assert_true (tr_conf_step_interval (c, 3601) == 2.0);
    assert_true (tr_conf_step_interval (c, NAN) == 2.0);
    assert_true (tr_conf_step_interval (c, INFINITY) == 2.0);
    assert_true (tr_conf_step_interval (c, 0.1) == 0.1);
    assert_true (tr_conf_step_interval (c, 0.5) == 0.5);
    assert_true (tr_conf_step_interval (c, 3600) == 3600.0);
    tr_conf_destroy (c);
}

/* snprintf that fails the test rather than truncate. */
static void sf (char *buf, size_t size, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void sf (char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (buf, size, fmt, ap);
    va_end (ap);
    assert_true (n >= 0 && (size_t)n < size);
}

/* check_dirs_case: a conf with spool.path at spool, the rest at the
 * private directory dir; tr_conf_check_dirs's error text or "".
 */
static void check_dirs_case (const char *dir,
                             const char *spool,
                             char *out,
                             size_t size)
{
    tr_conf_t *c = tr_conf_create ();
    char yaml[2048];
    tr_error_t e = { 0 };

    assert_non_null (c);
    sf (yaml, sizeof (yaml),
              "spool: {path: \"%s\"}\n"
              "daemon: {state_dir: \"%s/st\", socket: \"%s/s/d.sock\", "
              "log: \"%s/log/d.log\"}\n",
              spool, dir, dir, dir);
    assert_int_equal (tr_conf_load_string (c, "t", yaml, &e), 0);
    if (tr_conf_check_dirs (c, &e) < 0) {
        assert_int_equal (errno, EPERM);
        sf (out, size, "%s", e.text);
    }
    else
        out[0] = '\0';
    tr_conf_destroy (c);
}

/* The directories root writes in: accepted in root's own tree (existing
 * or not), refused below a directory a user owns, one others may write,
 * through a link a user owns, each message naming the key, the path and
 * the component.
 */
static void test_check_dirs (void **state)
{
    char tmpl[] = "/tmp/test_conf.XXXXXX", *dir, p[600], q[600];
    char got[512], want[1024];

    (void)state;
    if (geteuid () != 0) {
        print_message ("# test_check_dirs: not root, nothing checked\n");
        return;
    }
    assert_non_null (dir = mkdtemp (tmpl));
    assert_int_equal (chmod (dir, 0755), 0);
    sf (p, sizeof (p), "%s/spool", dir);
    check_dirs_case (dir, p, got, sizeof (got));
    assert_string_equal (got, "");

    /* a user's directory */
    sf (p, sizeof (p), "%s/user", dir);
    assert_int_equal (mkdir (p, 0755), 0);
    assert_int_equal (chown (p, 1001, 1001), 0);
    sf (q, sizeof (q), "%s/spool/a", p);
    check_dirs_case (dir, q, got, sizeof (got));
    sf (want, sizeof (want),
              "spool.path %s: insecure: %s: owned by uid 1001, not root", q,
              p);
    assert_string_equal (got, want);

    /* one others may write, without the sticky bit; with it, fine */
    sf (p, sizeof (p), "%s/open", dir);
    assert_int_equal (mkdir (p, 0755), 0);
    assert_int_equal (chmod (p, 0777), 0);
    sf (q, sizeof (q), "%s/spool", p);
    check_dirs_case (dir, q, got, sizeof (got));
    sf (want, sizeof (want),
              "spool.path %s: insecure: %s: writable by others", q, p);
    assert_string_equal (got, want);
    assert_int_equal (chmod (p, 01777), 0);
    check_dirs_case (dir, q, got, sizeof (got));
    assert_string_equal (got, "");
    assert_int_equal (chmod (p, 0775), 0);
    check_dirs_case (dir, q, got, sizeof (got));
    sf (want, sizeof (want),
              "spool.path %s: insecure: %s: writable by group", q, p);
    assert_string_equal (got, want);

    /* the spool itself a user's */
    sf (p, sizeof (p), "%s/spool2", dir);
    assert_int_equal (mkdir (p, 0700), 0);
    assert_int_equal (chown (p, 1001, 1001), 0);
    check_dirs_case (dir, p, got, sizeof (got));
    sf (want, sizeof (want),
              "spool.path %s: insecure: %s: owned by uid 1001, not root", p,
              p);
    assert_string_equal (got, want);

    /* a link a user owns, to root's directory */
    sf (p, sizeof (p), "%s/rootdir", dir);
    assert_int_equal (mkdir (p, 0755), 0);
    sf (q, sizeof (q), "%s/link", dir);
    assert_int_equal (symlink (p, q), 0);
    assert_int_equal (lchown (q, 1001, 1001), 0);
    sf (p, sizeof (p), "%s/spool", q);
    check_dirs_case (dir, p, got, sizeof (got));
    sf (want, sizeof (want),
              "spool.path %s: insecure: %s: owned by uid 1001, not root", p,
              q);
    assert_string_equal (got, want);
    /* root's link to a user's directory */
    assert_int_equal (lchown (q, 0, 0), 0);
    check_dirs_case (dir, p, got, sizeof (got));
    assert_string_equal (got, "");
    sf (p, sizeof (p), "%s/rootdir", dir);
    assert_int_equal (chown (p, 1001, 1001), 0);
    sf (p, sizeof (p), "%s/spool", q);
    check_dirs_case (dir, p, got, sizeof (got));
    sf (want, sizeof (want),
              "spool.path %s: insecure: %s/rootdir: owned by uid 1001, not "
              "root",
              p, dir);
    assert_string_equal (got, want);

    /* the socket's and the log's directories */
    {
        tr_conf_t *c = tr_conf_create ();
        char yaml[2048];
        tr_error_t e = { 0 };

        sf (p, sizeof (p), "%s/user", dir);
        sf (yaml, sizeof (yaml),
                  "spool: {path: \"%s/sp\"}\n"
                  "daemon: {state_dir: \"%s/st\", socket: \"%s/d.sock\"}\n",
                  dir, dir, p);
        assert_int_equal (tr_conf_load_string (c, "t", yaml, &e), 0);
        assert_int_equal (tr_conf_check_dirs (c, &e), -1);
        sf (want, sizeof (want),
                  "daemon.socket %s/d.sock: insecure: %s: owned by uid 1001, "
                  "not root",
                  p, p);
        assert_string_equal (e.text, want);
        sf (yaml, sizeof (yaml),
                  "daemon: {socket: \"%s/d.sock\", log: \"%s/d.log\"}\n", dir,
                  p);
        assert_int_equal (tr_conf_load_string (c, "t", yaml, &e), 0);
        assert_int_equal (tr_conf_check_dirs (c, &e), -1);
        sf (want, sizeof (want),
                  "daemon.log %s/d.log: insecure: %s: owned by uid 1001, not "
                  "root",
                  p, p);
        assert_string_equal (e.text, want);
        tr_conf_destroy (c);
    }
    assert_int_equal (rmtree (dir), 0);
}

static void test_data_invalid (void **state)
{
    int n;

    (void)state;
    assert_int_equal (for_each_case ("invalid", run_invalid_case, &n), 0);
    assert_true (n >= 10);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_defaults),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_valid),
        cmocka_unit_test (test_layering),
        cmocka_unit_test (test_unchanged_on_failure),
        cmocka_unit_test (test_bad_arguments),
        cmocka_unit_test (test_too_large),
        cmocka_unit_test (test_long_list),
        cmocka_unit_test (test_long_partitions),
        cmocka_unit_test (test_cost_rates),
        cmocka_unit_test (test_load_file),
        cmocka_unit_test (test_missing_file),
        cmocka_unit_test (test_not_regular),
        cmocka_unit_test (test_default_path),
        cmocka_unit_test (test_foreach_key),
        cmocka_unit_test (test_shipped_config),
        cmocka_unit_test (test_data_valid),
        cmocka_unit_test (test_data_invalid),
        cmocka_unit_test (test_step_interval),
        cmocka_unit_test (test_check_dirs),
    };

    return cmocka_run_group_tests (tests, NULL, NULL);
}
