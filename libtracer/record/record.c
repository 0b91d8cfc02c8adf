/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Record format v1 (doc/record-format.md): skeleton, strict validation,
 * parsing and the canonical serialization covered by signatures.  Records
 * are read by root-run tools from a shared store that any node may write,
 * so everything here treats input as hostile: sizes, depth, string lengths
 * and array sizes are bounded, unknown members are errors, and identity
 * strings that become path components are checked to be path-safe.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "libtracer/util/path.h"
#include "record.h"
#include "states.h"
#include "libtracer/util/strbuf.h"

/* Bounds not spelled out per member: any string, and the maps keyed by
 * names (metrics, cgroup controllers, exit codes).  They keep a record
 * that passes validation small enough to hold many of them in memory.
 */
#define STR_MAX_DEFAULT 4096
#define TAGS_MAX 64
#define TAG_KEY_MAX 64
#define TAG_VALUE_MAX 256
#define TOOLS_MAX 4096
#define TASKS_MAX 65536
#define SERIES_MAX 1000
#define METRICS_MAX 64
#define CGROUP_PATHS_MAX 32
#define EXIT_CODES_MAX 256
#define KEY_MAX 64
#define DEVICES_MAX 256

/* Room for a member path such as "series.metrics.<64 bytes>.mean". */
#define PATH_BUF 192

/* Room for a quoted, sanitized excerpt of untrusted text in a message. */
#define QUOTE_MAX 40

enum mtype {
    M_STR,
    M_INT,
    M_NUM,
    M_BOOL,
    M_OBJ,
    M_ARR,
};

enum mflag_b {
    F_REQ = 1,     /* member must be present */
    F_NONNEG = 2,  /* integer or number >= 0 */
    F_POS = 4,     /* integer >= 1, number > 0 */
    F_U32 = 8,     /* integer <= UINT32_MAX (uid, gid) */
    F_SAFE_ID = 16 /* string usable as a store path component */
};

typedef int (*check_f) (json_t *v, const char *path, tr_error_t *error);

struct member {
    const char *name;
    enum mtype type;
    unsigned flags;
    size_t maxlen;             /* strings: bytes; 0 = STR_MAX_DEFAULT */
    const char *const *values; /* strings: allowed values, NULL-ended */
    check_f check;             /* further checks once the type is right */
};

static const char *const scheduler_values[] = {
    "slurm", "pbs", "torque", "lsf", "none", NULL,
};
static const char *const kind_values[] = { "final", "snapshot", NULL };
static const char *const time_limit_values[] = { "UNLIMITED", NULL };
static const char *const cgroup_mode_values[] = {
    "v1", "v2", "hybrid", "none", NULL,
};
static const char *const cgroup_version_values[] = { "v1", "v2", NULL };
static const char *const attach_values[] = {
    "cgroup", "cgroup2-delegated", "process-tree", NULL,
};
static const char *const scheme_values[] = { "munge-sha256", "none", NULL };
static const char *const runq_source_values[] = {
    "taskstats", "schedstat", NULL,
};
static const char *const pressure_source_values[] = {
    "cgroup2", "cgroup2-mirror", "delayacct", "unknown", NULL,
};
static const char *const io_source_values[] = {
    "io.stat", "blkio", "none", NULL,
};
static const char *const proc_source_values[] = { "taskstats", "proc", NULL };
static const char *const net_scope_values[] = { "node", "namespace", NULL };
static const char *const net_source_values[] = { "proc-net-dev", NULL };
static const char *const gpu_source_values[] = { "nvml", NULL };
static const char *const topology_source_values[] = { "hwloc", NULL };

/* Copy at most QUOTE_MAX bytes of untrusted text into buf for an error
 * message, replacing anything but printable ASCII with '?' so that a
 * hostile record cannot put terminal escapes into a log line.
 */
static const char *quote (const char *s, char *buf, size_t size)
{
    size_t i, n = 0;

    for (i = 0; s[i] != '\0' && n + 4 < size; i++) {
        if (i == QUOTE_MAX) {
            memcpy (buf + n, "...", 3);
            n += 3;
            break;
        }
        buf[n++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    }
    buf[n] = '\0';
    return buf;
}

/* Append s to the NUL-terminated buf, truncating: a cut path only
 * shortens a message, so it is never an error.
 */
static void append (char *buf, size_t size, const char *s)
{
    size_t len = strlen (buf);
    size_t n = strlen (s);

    if (len + 1 >= size)
        return;
    if (n > size - len - 1)
        n = size - len - 1;
    memcpy (buf + len, s, n);
    buf[len + n] = '\0';
}

/* Child member path: "identity" + "job_id" -> "identity.job_id". */
static void join (char *buf, size_t size, const char *path, const char *name)
{
    buf[0] = '\0';
    append (buf, size, path);
    if (path[0] != '\0')
        append (buf, size, ".");
    append (buf, size, name);
}

static void join_index (char *buf, size_t size, const char *path, size_t i)
{
    char idx[32];

    (void)snprintf (idx, sizeof (idx), "[%zu]", i);
    buf[0] = '\0';
    append (buf, size, path);
    append (buf, size, idx);
}

static int invalid (tr_error_t *error, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* tr_errprintf with errno = EINVAL, the errno of every schema error. */
static int invalid (tr_error_t *error, const char *fmt, ...)
{
    va_list ap;
    char text[sizeof (error->text)];

    va_start (ap, fmt);
    (void)vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    errno = EINVAL;
    return tr_errprintf (error, "%s", text);
}

bool tr_record_id_is_safe (const char *s)
{
    size_t i;

    if (!s || s[0] == '\0' || s[0] == '.')
        return false;
    for (i = 0; s[i] != '\0'; i++) {
        char c = s[i];
        if (i >= 128)
            return false;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+'
              || c == '[' || c == ']' || c == '-'))
            return false;
    }
    return true;
}

/* Names used as keys of maps (tags, metrics, exit codes, controllers):
 * 1..KEY_MAX bytes of [A-Za-z0-9_.-] plus the characters in 'extra'.
 */
static bool key_is_valid (const char *k, const char *extra)
{
    size_t i;

    if (k[0] == '\0')
        return false;
    for (i = 0; k[i] != '\0'; i++) {
        char c = k[i];
        if (i >= KEY_MAX)
            return false;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'
              || (extra && strchr (extra, c))))
            return false;
    }
    return true;
}

static bool in_values (const char *s, const char *const *values)
{
    for (; *values; values++) {
        if (!strcmp (s, *values))
            return true;
    }
    return false;
}

static int check_string (json_t *v,
                         const char *path,
                         size_t maxlen,
                         tr_error_t *error)
{
    const char *s;
    size_t len;

    if (!json_is_string (v))
        return invalid (error, "%s: expected a string", path);
    s = json_string_value (v);
    len = json_string_length (v);
    /* jansson keeps NUL bytes built in memory; C consumers would see a
     * different (shorter) string than the one that was signed.
     */
    if (strlen (s) != len)
        return invalid (error, "%s: contains a NUL byte", path);
    if (len > (maxlen ? maxlen : STR_MAX_DEFAULT))
        return invalid (error, "%s: longer than %zu bytes", path,
                        maxlen ? maxlen : STR_MAX_DEFAULT);
    return 0;
}

static int check_member (json_t *v,
                         const char *path,
                         const struct member *m,
                         tr_error_t *error)
{
    char q[QUOTE_MAX + 8];

    switch (m->type) {
    case M_STR:
        if (check_string (v, path, m->maxlen, error) < 0)
            return -1;
        if (m->values && !in_values (json_string_value (v), m->values))
            return invalid (error, "%s: unknown value '%s'", path,
                            quote (json_string_value (v), q, sizeof (q)));
        if ((m->flags & F_SAFE_ID)
            && !tr_record_id_is_safe (json_string_value (v)))
            return invalid (error, "%s: unsafe identifier '%s'", path,
                            quote (json_string_value (v), q, sizeof (q)));
        break;
    case M_INT: {
        json_int_t i;
        if (!json_is_integer (v))
            return invalid (error, "%s: expected an integer", path);
        i = json_integer_value (v);
        if ((m->flags & F_NONNEG) && i < 0)
            return invalid (error, "%s: must be >= 0", path);
        if ((m->flags & F_POS) && i < 1)
            return invalid (error, "%s: must be >= 1", path);
        if ((m->flags & F_U32) && i > (json_int_t)UINT32_MAX)
            return invalid (error, "%s: must be <= %lu", path,
                            (unsigned long)UINT32_MAX);
        break;
    }
    case M_NUM: {
        double d;
        /* JSON does not distinguish 1 from 1.0; writers may emit
             * either, so integers are accepted as numbers.
             */
        if (!json_is_number (v))
            return invalid (error, "%s: expected a number", path);
        d = json_number_value (v);
        if ((m->flags & F_NONNEG) && !(d >= 0))
            return invalid (error, "%s: must be >= 0", path);
        if ((m->flags & F_POS) && !(d > 0))
            return invalid (error, "%s: must be > 0", path);
        break;
    }
    case M_BOOL:
        if (!json_is_boolean (v))
            return invalid (error, "%s: expected a boolean", path);
        break;
    case M_OBJ:
        if (!json_is_object (v))
            return invalid (error, "%s: expected an object", path);
        break;
    case M_ARR:
        if (!json_is_array (v))
            return invalid (error, "%s: expected an array", path);
        break;
    }
    if (m->check)
        return m->check (v, path, error);
    return 0;
}

static const struct member *find_member (const struct member *members,
                                         const char *name)
{
    for (; members->name; members++) {
        if (!strcmp (members->name, name))
            return members;
    }
    return NULL;
}

/* Check obj against a member table.  Members are checked in table order
 * (so the first error reported does not depend on key order in the
 * input), then any member not in the table is an error, except names
 * starting with "x_" where allow_x is set.
 */
static int check_object (json_t *obj,
                         const char *path,
                         const struct member *members,
                         bool allow_x,
                         tr_error_t *error)
{
    const struct member *m;
    const char *key;
    json_t *v;
    char sub[PATH_BUF];
    char q[QUOTE_MAX + 8];

    if (!json_is_object (obj))
        return invalid (error, "%s: expected an object",
                        path[0] ? path : "record");
    for (m = members; m->name; m++) {
        join (sub, sizeof (sub), path, m->name);
        if (!(v = json_object_get (obj, m->name))) {
            if (m->flags & F_REQ)
                return invalid (error, "%s: missing required member", sub);
            continue;
        }
        if (check_member (v, sub, m, error) < 0)
            return -1;
    }
    json_object_foreach (obj, key, v)
    {
        if (find_member (members, key))
            continue;
        if (allow_x && !strncmp (key, "x_", 2))
            continue;
        join (sub, sizeof (sub), path, quote (key, q, sizeof (q)));
        return invalid (error, "%s: unknown member", sub);
    }
    return 0;
}

/* Check that an object maps valid names to values of one kind, with at
 * most 'max' entries.  The value check gets the member path.
 */
static int check_map (json_t *obj,
                      const char *path,
                      size_t max,
                      const char *key_extra,
                      const struct member *value,
                      tr_error_t *error)
{
    const char *key;
    json_t *v;
    char sub[PATH_BUF];
    char q[QUOTE_MAX + 8];

    if (json_object_size (obj) > max)
        return invalid (error, "%s: more than %zu entries", path, max);
    json_object_foreach (obj, key, v)
    {
        if (!key_is_valid (key, key_extra))
            return invalid (error, "%s: invalid key '%s'", path,
                            quote (key, q, sizeof (q)));
        join (sub, sizeof (sub), path, key);
        if (check_member (v, sub, value, error) < 0)
            return -1;
    }
    return 0;
}

/* Check every element of an array of objects against a member table. */
static int check_array_of (json_t *arr,
                           const char *path,
                           size_t max,
                           const struct member *elem,
                           tr_error_t *error)
{
    size_t i;
    json_t *v;
    char sub[PATH_BUF];

    if (json_array_size (arr) > max)
        return invalid (error, "%s: more than %zu entries", path, max);
    json_array_foreach (arr, i, v)
    {
        join_index (sub, sizeof (sub), path, i);
        if (check_member (v, sub, elem, error) < 0)
            return -1;
    }
    return 0;
}

/* identity */

/* A list of at most max names of up to maxlen bytes, each once; where
 * allowed is given, each one of those (allowed_text names them).
 */
static int check_name_list (json_t *v,
                            const char *path,
                            size_t max,
                            size_t maxlen,
                            const char *const *allowed,
                            const char *allowed_text,
                            tr_error_t *error)
{
    size_t i, j;
    json_t *e;
    char sub[PATH_BUF];

    if (json_array_size (v) > max)
        return invalid (error, "%s: more than %zu entries", path, max);
    json_array_foreach (v, i, e)
    {
        join_index (sub, sizeof (sub), path, i);
        if (check_string (e, sub, maxlen, error) < 0)
            return -1;
        for (j = 0; allowed && allowed[j]; j++)
            if (!strcmp (json_string_value (e), allowed[j]))
                break;
        if (allowed && !allowed[j])
            return invalid (error, "%s: not %s", sub, allowed_text);
        for (j = 0; j < i; j++)
            if (!strcmp (json_string_value (e),
                         json_string_value (json_array_get (v, j))))
                return invalid (error, "%s: listed twice", sub);
    }
    return 0;
}

/* identity.truncated: names of identity members, each once */
static int check_truncated (json_t *v, const char *path, tr_error_t *error)
{
    return check_name_list (v, path, 32, 64, NULL, NULL, error);
}

/* identity.unknown: what the scheduler could not be asked, each member
 * (account, partition, qos, job_name, time_limit_s) with the reason
 */
static const char *const unknown_names[] = {
    "account", "partition", "qos", "job_name", "time_limit_s", NULL,
};

static int check_unknown (json_t *v, const char *path, tr_error_t *error)
{
    const char *key;
    json_t *why;
    char sub[PATH_BUF];

    json_object_foreach (v, key, why)
    {
        size_t j;
        snprintf (sub, sizeof (sub), "%s.%s", path, key);
        for (j = 0; unknown_names[j] && strcmp (key, unknown_names[j]); j++)
            ;
        if (!unknown_names[j])
            return invalid (error, "%s: not a member the scheduler gives",
                            sub);
        if (check_string (why, sub, 256, error) < 0)
            return -1;
    }
    return 0;
}

static const struct member identity_members[] = {
    { "scheduler", M_STR, F_REQ, 0, scheduler_values, NULL },
    { "cluster", M_STR, F_REQ | F_SAFE_ID, 0, NULL, NULL },
    { "job_id", M_STR, F_REQ | F_SAFE_ID, 0, NULL, NULL },
    { "array_job_id", M_STR, 0, 128, NULL, NULL },
    { "array_task_id", M_INT, F_NONNEG, 0, NULL, NULL },
    { "het_job_id", M_STR, 0, 128, NULL, NULL },
    { "het_component", M_INT, F_NONNEG, 0, NULL, NULL },
    { "step_id", M_STR, F_REQ | F_SAFE_ID, 0, NULL, NULL },
    { "step_name", M_STR, 0, 512, NULL, NULL },
    { "job_name", M_STR, 0, 512, NULL, NULL },
    { "node", M_STR, F_REQ | F_SAFE_ID, 0, NULL, NULL },
    { "node_index", M_INT, F_NONNEG, 0, NULL, NULL },
    { "user", M_STR, 0, 64, NULL, NULL },
    { "uid", M_INT, F_REQ | F_NONNEG | F_U32, 0, NULL, NULL },
    { "group", M_STR, 0, 64, NULL, NULL },
    { "gid", M_INT, F_NONNEG | F_U32, 0, NULL, NULL },
    { "account", M_STR, 0, 128, NULL, NULL },
    { "partition", M_STR, 0, 128, NULL, NULL },
    { "qos", M_STR, 0, 128, NULL, NULL },
    { "command", M_STR, 0, 1024, NULL, NULL },
    { "work_dir", M_STR, 0, 1024, NULL, NULL },
    { "task_name", M_STR, 0, 1024, NULL, NULL },
    { "truncated", M_ARR, 0, 0, NULL, check_truncated },
    { "unknown", M_OBJ, 0, 0, NULL, check_unknown },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_identity (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, identity_members, false, error);
}

/* Note key in identity.truncated, kept sorted and without repeats. */
static int note_truncated (json_t *identity, const char *key)
{
    json_t *list = json_object_get (identity, "truncated");
    size_t i, at;

    if (!json_is_array (list)) {
        if (!(list = json_array ())
            || json_object_set_new (identity, "truncated", list) < 0)
            goto nomem;
    }
    for (at = 0; at < json_array_size (list); at++) {
        const char *s = json_string_value (json_array_get (list, at));
        int c = s ? strcmp (s, key) : -1;
        if (c == 0)
            return 0;
        if (c > 0)
            break;
    }
    if (json_array_size (list) >= 32)
        return 0;
    i = at;
    if (json_array_insert_new (list, i, json_string (key)) < 0)
        goto nomem;
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

int tr_record_clip_identity (json_t *identity)
{
    const struct member *m;
    int changed = 0;

    if (!json_is_object (identity)) {
        errno = EINVAL;
        return -1;
    }
    for (m = identity_members; m->name; m++) {
        json_t *v = json_object_get (identity, m->name);
        const char *s;
        size_t len, keep, i;
        char *buf;
        bool odd = false;

        if (m->type != M_STR || (m->flags & F_SAFE_ID) || m->values
            || !json_is_string (v))
            continue;
        s = json_string_value (v);
        len = json_string_length (v);
        keep = len;
        if (keep > (m->maxlen ? m->maxlen : STR_MAX_DEFAULT)) {
            keep = m->maxlen ? m->maxlen : STR_MAX_DEFAULT;
            /* never cut a UTF-8 sequence: back off its continuation bytes */
            while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
                keep--;
        }
        for (i = 0; i < keep && !odd; i++)
            odd = (unsigned char)s[i] < 0x20 || s[i] == 0x7f;
        if (keep == len && !odd)
            continue;
        if (!(buf = malloc (keep + 1))) {
            errno = ENOMEM;
            return -1;
        }
        for (i = 0; i < keep; i++)
            buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
        buf[keep] = '\0';
        if (json_object_set_new (identity, m->name, json_string (buf)) < 0
            || note_truncated (identity, m->name) < 0) {
            free (buf);
            errno = ENOMEM;
            return -1;
        }
        free (buf);
        changed++;
    }
    return changed;
}

/* request */

/* A cpu list as the kernel prints it ("0-3,8"): digits, ',' and '-'. */
static int check_cpu_list (json_t *v, const char *path, tr_error_t *error)
{
    const char *s = json_string_value (v);

    if (strspn (s, "0123456789,-") != strlen (s))
        return invalid (error, "%s: expected a cpu list like '0-3,8'", path);
    return 0;
}

static const struct member request_members[] = {
    { "nodes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "tasks", M_INT, F_NONNEG, 0, NULL, NULL },
    { "tasks_on_node", M_INT, F_NONNEG, 0, NULL, NULL },
    { "cpus_per_task", M_INT, F_NONNEG, 0, NULL, NULL },
    { "cpus_on_node", M_INT, F_NONNEG, 0, NULL, NULL },
    { "cores", M_STR, 0, 0, NULL, check_cpu_list },
    { "mem_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "time_limit_s", M_INT, F_NONNEG, 0, NULL, NULL },
    { "time_limit", M_STR, 0, 0, time_limit_values, NULL },
    { "gpus", M_STR, 0, 1024, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_request (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, request_members, false, error);
}

/* tags */

static const struct member tag_value = {
    "", M_STR, 0, TAG_VALUE_MAX, NULL, NULL,
};

static int check_tags (json_t *v, const char *path, tr_error_t *error)
{
    return check_map (v, path, TAGS_MAX, NULL, &tag_value, error);
}

/* host */

static const struct member bound_members[] = {
    { "cores", M_INT, F_NONNEG, 0, NULL, NULL },
    { "pus", M_INT, F_NONNEG, 0, NULL, NULL },
    { "sockets", M_INT, F_NONNEG, 0, NULL, NULL },
    { "numa_nodes", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_bound (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, bound_members, false, error);
}

static const struct member topology_members[] = {
    { "source", M_STR, F_REQ, 0, topology_source_values, NULL },
    { "sockets", M_INT, F_NONNEG, 0, NULL, NULL },
    { "cores", M_INT, F_NONNEG, 0, NULL, NULL },
    { "pus", M_INT, F_NONNEG, 0, NULL, NULL },
    { "numa_nodes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "mem_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "cpu_mhz", M_INT, F_NONNEG, 0, NULL, NULL },
    { "bound", M_OBJ, 0, 0, NULL, check_bound },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_topology (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, topology_members, false, error);
}

static const struct member host_members[] = {
    { "hostname", M_STR, F_REQ, 255, NULL, NULL },
    { "topology", M_OBJ, 0, 0, NULL, check_topology },
    { "kernel", M_STR, 0, 256, NULL, NULL },
    { "cpus_online", M_INT, F_NONNEG, 0, NULL, NULL },
    { "mem_total_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "cgroup_mode", M_STR, 0, 0, cgroup_mode_values, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_host (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, host_members, false, error);
}

/* cgroup */

static int check_abspath (json_t *v, const char *path, tr_error_t *error)
{
    if (json_string_value (v)[0] != '/')
        return invalid (error, "%s: expected an absolute path", path);
    return 0;
}

static const struct member cgroup_path_value = {
    "", M_STR, 0, 0, NULL, check_abspath,
};

/* v1 hierarchies are named by their mount options: "cpu,cpuacct",
 * "name=systemd"; hence ',' and '=' in controller keys.
 */
static int check_cgroup_paths (json_t *v, const char *path, tr_error_t *error)
{
    return check_map (v, path, CGROUP_PATHS_MAX, ",=", &cgroup_path_value,
                      error);
}

static const struct member cgroup_match_members[] = {
    { "session", M_INT, F_NONNEG, 0, NULL, NULL },
    { "env", M_STR, 0, 256, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_cgroup_match (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, cgroup_match_members, false, error);
}

static const struct member cgroup_members[] = {
    { "attach", M_STR, F_REQ, 0, attach_values, NULL },
    { "version", M_STR, 0, 0, cgroup_version_values, NULL },
    { "paths", M_OBJ, 0, 0, NULL, check_cgroup_paths },
    { "match", M_OBJ, 0, 0, NULL, check_cgroup_match },
    { NULL, 0, 0, 0, NULL, NULL },
};

/* The attach mode and the hierarchy must agree: a delegated directory is
 * a cgroup2 one, and a followed process tree has no cgroup at all.
 */
static int check_cgroup (json_t *v, const char *path, tr_error_t *error)
{
    const char *attach, *version, *key;
    json_t *paths, *val;

    if (check_object (v, path, cgroup_members, false, error) < 0)
        return -1;
    attach = json_string_value (json_object_get (v, "attach"));
    version = json_string_value (json_object_get (v, "version"));
    paths = json_object_get (v, "paths");
    if (!strcmp (attach, "process-tree")) {
        if (version)
            return invalid (error, "%s.version: not allowed with attach "
                            "'process-tree'", path);
        if (paths)
            return invalid (error, "%s.paths: not allowed with attach "
                            "'process-tree'", path);
    }
    else if (!strcmp (attach, "cgroup2-delegated")) {
        if (version && strcmp (version, "v2") != 0)
            return invalid (error, "%s.version: must be 'v2' with attach "
                            "'cgroup2-delegated'", path);
        json_object_foreach (paths, key, val)
        {
            if (strcmp (key, "unified") != 0)
                return invalid (error, "%s.paths: only 'unified' with attach "
                                "'cgroup2-delegated'", path);
        }
    }
    return 0;
}

/* time */

static const struct member time_members[] = {
    { "start_unix_ms", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "end_unix_ms", M_INT, F_NONNEG, 0, NULL, NULL },
    { "elapsed_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "submit_unix_ms", M_INT, F_NONNEG, 0, NULL, NULL },
    { "job_start_unix_ms", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_time (json_t *v, const char *path, tr_error_t *error)
{
    json_t *end;

    if (check_object (v, path, time_members, false, error) < 0)
        return -1;
    end = json_object_get (v, "end_unix_ms");
    if (end
        && json_integer_value (end)
               < json_integer_value (json_object_get (v, "start_unix_ms")))
        return invalid (error, "%s.end_unix_ms: must be >= %s.start_unix_ms",
                        path, path);
    return 0;
}

/* summary */

static const struct member cpu_members[] = {
    /* the figures are required unless source is "none" (measured_only) */
    { "user_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "system_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "total_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "source", M_STR, F_REQ, 256, NULL, NULL },
    { "exact", M_BOOL, F_REQ, 0, NULL, NULL },
    { "cores", M_STR, 0, 0, NULL, check_cpu_list },
    { "ncores", M_INT, F_NONNEG, 0, NULL, NULL },
    { "throttled_periods", M_INT, F_NONNEG, 0, NULL, NULL },
    { "throttled_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "runq_wait_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "runq_source", M_STR, 0, 0, runq_source_values, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

/* The figures of summary.cpu or summary.memory: present unless the
 * source is "none" (a step none of whose processes was found: nothing
 * was measured, states.h tr_states_unfollowed).
 */
static int measured_only (json_t *v,
                          const char *path,
                          const char *const figures[],
                          tr_error_t *error)
{
    const char *src = json_string_value (json_object_get (v, "source"));

    if (src && !strcmp (src, "none"))
        return 0;
    for (size_t i = 0; figures[i]; i++)
        if (!json_object_get (v, figures[i]))
            return invalid (error, "%s.%s: missing required member", path, figures[i]);
    return 0;
}

static int check_cpu (json_t *v, const char *path, tr_error_t *error)
{
    static const char *const figures[] = { "user_s", "system_s", "total_s",
                                           NULL };

    if (check_object (v, path, cpu_members, false, error) < 0)
        return -1;
    return measured_only (v, path, figures, error);
}

static const struct member memory_members[] = {
    /* required unless source is "none" (measured_only) */
    { "peak_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "current_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "limit_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "anon_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "file_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "shmem_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "swap_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "failcnt", M_INT, F_NONNEG, 0, NULL, NULL },
    { "oom_events", M_INT, F_NONNEG, 0, NULL, NULL },
    { "oom_kill_events", M_INT, F_NONNEG, 0, NULL, NULL },
    { "source", M_STR, F_REQ, 256, NULL, NULL },
    { "exact", M_BOOL, F_REQ, 0, NULL, NULL },
    { "definition", M_STR, F_REQ, 512, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_memory (json_t *v, const char *path, tr_error_t *error)
{
    static const char *const figures[] = { "peak_bytes", NULL };

    if (check_object (v, path, memory_members, false, error) < 0)
        return -1;
    return measured_only (v, path, figures, error);
}

/* pressure: PSI totals, or per-task delay accounting as the fallback */

static const struct member stall_members[] = {
    { "some_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "full_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "delay_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_stall (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, stall_members, false, error);
}

/* x_pressure_unknown: the resources whose stall was not measured, each
 * once (a v1 extension of summary: older readers ignore it)
 */
static int check_stall_unknown (json_t *v, const char *path,
                                tr_error_t *error)
{
    static const char *const names[] = { "cpu", "memory", "io", NULL };

    return check_name_list (v, path, 3, 16, names, "cpu, memory or io",
                            error);
}

static const struct member pressure_members[] = {
    { "source", M_STR, F_REQ, 0, pressure_source_values, NULL },
    { "exact", M_BOOL, F_REQ, 0, NULL, NULL },
    { "cpu", M_OBJ, 0, 0, NULL, check_stall },
    { "memory", M_OBJ, 0, 0, NULL, check_stall },
    { "io", M_OBJ, 0, 0, NULL, check_stall },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_pressure (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, pressure_members, false, error);
}

/* io */

static const struct member io_device_members[] = {
    { "device", M_STR, F_REQ, 32, NULL, NULL },
    { "read_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "write_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "read_ops", M_INT, F_NONNEG, 0, NULL, NULL },
    { "write_ops", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_io_device (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, io_device_members, false, error);
}

static const struct member io_device_elem = {
    "", M_OBJ, 0, 0, NULL, check_io_device,
};

static int check_io_devices (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, DEVICES_MAX, &io_device_elem, error);
}

static const struct member proc_io_members[] = {
    { "source", M_STR, F_REQ, 0, proc_source_values, NULL },
    { "exact", M_BOOL, F_REQ, 0, NULL, NULL },
    { "rchar", M_INT, F_NONNEG, 0, NULL, NULL },
    { "wchar", M_INT, F_NONNEG, 0, NULL, NULL },
    { "syscr", M_INT, F_NONNEG, 0, NULL, NULL },
    { "syscw", M_INT, F_NONNEG, 0, NULL, NULL },
    { "read_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "write_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "cancelled_write_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_proc_io (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, proc_io_members, false, error);
}

static const struct member io_members[] = {
    { "source", M_STR, F_REQ, 0, io_source_values, NULL },
    { "read_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "write_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "read_ops", M_INT, F_NONNEG, 0, NULL, NULL },
    { "write_ops", M_INT, F_NONNEG, 0, NULL, NULL },
    { "devices", M_ARR, 0, 0, NULL, check_io_devices },
    { "proc", M_OBJ, 0, 0, NULL, check_proc_io },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_io (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, io_members, false, error);
}

/* network */

static const struct member iface_members[] = {
    { "name", M_STR, F_REQ, 64, NULL, NULL },
    { "rx_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "tx_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "rx_packets", M_INT, F_NONNEG, 0, NULL, NULL },
    { "tx_packets", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_iface (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, iface_members, false, error);
}

static const struct member iface_elem = { "", M_OBJ, 0, 0, NULL, check_iface };

static int check_ifaces (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, DEVICES_MAX, &iface_elem, error);
}

static const struct member ib_port_members[] = {
    { "device", M_STR, F_REQ, 64, NULL, NULL },
    { "port", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "rx_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "tx_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "rx_packets", M_INT, F_NONNEG, 0, NULL, NULL },
    { "tx_packets", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_ib_port (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, ib_port_members, false, error);
}

static const struct member ib_port_elem = {
    "", M_OBJ, 0, 0, NULL, check_ib_port,
};

static int check_ib_ports (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, DEVICES_MAX, &ib_port_elem, error);
}

static const struct member network_members[] = {
    { "scope", M_STR, F_REQ, 0, net_scope_values, NULL },
    { "source", M_STR, F_REQ, 0, net_source_values, NULL },
    { "interfaces", M_ARR, 0, 0, NULL, check_ifaces },
    { "infiniband", M_ARR, 0, 0, NULL, check_ib_ports },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_network (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, network_members, false, error);
}

/* gpu */

static const struct member gpu_device_members[] = {
    { "index", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "uuid", M_STR, 0, 128, NULL, NULL },
    { "name", M_STR, 0, 128, NULL, NULL },
    { "mem_total_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "mem_used_peak_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "step_mem_peak_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "util_mean_pct", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "util_max_pct", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "samples", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_gpu_device (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, gpu_device_members, false, error);
}

static const struct member gpu_device_elem = {
    "", M_OBJ, 0, 0, NULL, check_gpu_device,
};

static int check_gpu_devices (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, DEVICES_MAX, &gpu_device_elem, error);
}

static const struct member gpu_members[] = {
    { "source", M_STR, F_REQ, 0, gpu_source_values, NULL },
    { "driver", M_STR, 0, 128, NULL, NULL },
    { "devices", M_ARR, F_REQ, 0, NULL, check_gpu_devices },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_gpu (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, gpu_members, false, error);
}

/* processes */

static const struct member processes_members[] = {
    { "count", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "source", M_STR, F_REQ, 0, proc_source_values, NULL },
    { "complete", M_BOOL, F_REQ, 0, NULL, NULL },
    { "lost", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_processes (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, processes_members, false, error);
}

static const struct member summary_members[] = {
    { "samples", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "cpu", M_OBJ, F_REQ, 0, NULL, check_cpu },
    { "memory", M_OBJ, F_REQ, 0, NULL, check_memory },
    { "pressure", M_OBJ, 0, 0, NULL, check_pressure },
    { "io", M_OBJ, 0, 0, NULL, check_io },
    { "network", M_OBJ, 0, 0, NULL, check_network },
    { "gpu", M_OBJ, 0, 0, NULL, check_gpu },
    { "processes", M_OBJ, 0, 0, NULL, check_processes },
    { "x_pressure_unknown", M_ARR, 0, 0, NULL, check_stall_unknown },
    { "x_pressure_reason", M_STR, 0, 256, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

/* The one place with room for extensions: "x_" members, any JSON. */
static int check_summary (json_t *v, const char *path, tr_error_t *error)
{
    json_t *pressure = json_object_get (v, "pressure");
    json_t *e;
    size_t i;

    if (check_object (v, path, summary_members, true, error) < 0)
        return -1;
    /* a stall is measured or unknown, never both */
    json_array_foreach (json_object_get (v, "x_pressure_unknown"), i, e)
    {
        if (json_object_get (pressure, json_string_value (e)))
            return invalid (error,
                            "%s.pressure.%s: both measured and unknown", path,
                            json_string_value (e));
    }
    return 0;
}

/* tools */

static const struct member exit_count_value = {
    "", M_INT, F_NONNEG, 0, NULL, NULL,
};

static int check_exit_codes (json_t *v, const char *path, tr_error_t *error)
{
    return check_map (v, path, EXIT_CODES_MAX, NULL, &exit_count_value, error);
}

static const struct member tool_members[] = {
    { "name", M_STR, F_REQ, 256, NULL, NULL },
    { "count", M_INT, F_REQ | F_POS, 0, NULL, NULL },
    { "cpu_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "peak_rss_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "read_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "write_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "first_start_unix_ms", M_INT, F_NONNEG, 0, NULL, NULL },
    { "last_end_unix_ms", M_INT, F_NONNEG, 0, NULL, NULL },
    { "exit_codes", M_OBJ, 0, 0, NULL, check_exit_codes },
    { "signals", M_OBJ, 0, 0, NULL, check_exit_codes },
    { "runq_wait_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "cmdline", M_STR, 0, 1024, NULL, NULL },
    { "exact", M_BOOL, 0, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_tool (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, tool_members, false, error);
}

static const struct member tool_elem = { "", M_OBJ, 0, 0, NULL, check_tool };

static int check_tools (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, TOOLS_MAX, &tool_elem, error);
}

/* series */

static const struct member sample_elem = { "", M_NUM, 0, 0, NULL, NULL };

static int check_numbers (json_t *arr,
                          const char *path,
                          size_t want,
                          tr_error_t *error)
{
    size_t i;
    json_t *v;
    char sub[PATH_BUF];

    if (!json_is_array (arr))
        return invalid (error, "%s: expected an array", path);
    if (json_array_size (arr) > SERIES_MAX)
        return invalid (error, "%s: more than %d entries", path, SERIES_MAX);
    if (want != (size_t)-1 && json_array_size (arr) != want)
        return invalid (error,
                        "%s: expected %zu entries (as many as t_s), got %zu",
                        path, want, json_array_size (arr));
    json_array_foreach (arr, i, v)
    {
        join_index (sub, sizeof (sub), path, i);
        if (check_member (v, sub, &sample_elem, error) < 0)
            return -1;
    }
    return 0;
}

static const struct member metric_members[] = {
    { "min", M_ARR, F_REQ, 0, NULL, NULL },
    { "mean", M_ARR, F_REQ, 0, NULL, NULL },
    { "max", M_ARR, F_REQ, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static const struct member series_members[] = {
    { "interval_s", M_NUM, F_REQ | F_POS, 0, NULL, NULL },
    { "t_s", M_ARR, F_REQ, 0, NULL, NULL },
    { "metrics", M_OBJ, F_REQ, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_series (json_t *v, const char *path, tr_error_t *error)
{
    char sub[PATH_BUF];
    char msub[PATH_BUF];
    char q[QUOTE_MAX + 8];
    const char *name;
    json_t *metrics, *metric;
    size_t n, i;

    if (check_object (v, path, series_members, false, error) < 0)
        return -1;
    join (sub, sizeof (sub), path, "t_s");
    if (check_numbers (json_object_get (v, "t_s"), sub, (size_t)-1, error) < 0)
        return -1;
    n = json_array_size (json_object_get (v, "t_s"));
    metrics = json_object_get (v, "metrics");
    join (sub, sizeof (sub), path, "metrics");
    if (json_object_size (metrics) > METRICS_MAX)
        return invalid (error, "%s: more than %d entries", sub, METRICS_MAX);
    json_object_foreach (metrics, name, metric)
    {
        if (!key_is_valid (name, NULL))
            return invalid (error, "%s: invalid key '%s'", sub,
                            quote (name, q, sizeof (q)));
        join (msub, sizeof (msub), sub, name);
        if (check_object (metric, msub, metric_members, false, error) < 0)
            return -1;
        for (i = 0; metric_members[i].name; i++) {
            char asub[PATH_BUF];
            const char *stat = metric_members[i].name;

            join (asub, sizeof (asub), msub, stat);
            if (check_numbers (json_object_get (metric, stat), asub, n, error)
                < 0)
                return -1;
        }
    }
    return 0;
}

/* outcome */

static const struct member task_members[] = {
    { "task_id", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "pid", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "wait_status", M_INT, 0, 0, NULL, NULL },
    { "exit_code", M_INT, 0, 0, NULL, NULL },
    { "signal", M_INT, F_NONNEG, 0, NULL, NULL },
    { "oom_killed", M_BOOL, 0, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_task (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, task_members, false, error);
}

static const struct member task_elem = { "", M_OBJ, 0, 0, NULL, check_task };

static int check_tasks (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, TASKS_MAX, &task_elem, error);
}

static const struct member chain_members[] = {
    { "tool", M_STR, F_REQ, 256, NULL, NULL },
    { "pid", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_chain_elem (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, chain_members, false, error);
}

static const struct member chain_elem = { "", M_OBJ, 0, 0, NULL,
                                          check_chain_elem };

static int check_chain (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, 8, &chain_elem, error);
}

static const struct member culprit_members[] = {
    { "tool", M_STR, F_REQ, 256, NULL, NULL },
    { "pid", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "exit_code", M_INT, F_NONNEG, 0, NULL, NULL },
    { "signal", M_INT, F_NONNEG, 0, NULL, NULL },
    { "core_dumped", M_BOOL, 0, 0, NULL, NULL },
    { "at_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "chain", M_ARR, 0, 0, NULL, check_chain },
    { "collateral", M_INT, F_NONNEG, 0, NULL, NULL },
    { "calls_itself", M_STR, 0, 64, NULL, NULL },
    { "comm", M_STR, 0, 64, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_culprit (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, culprit_members, false, error);
}

static const struct member outcome_members[] = {
    { "state", M_STR, F_REQ, 0, tr_states_record, NULL },
    { "complete", M_BOOL, F_REQ, 0, NULL, NULL },
    { "exit_code", M_INT, 0, 0, NULL, NULL },
    { "signal", M_INT, F_NONNEG, 0, NULL, NULL },
    { "reason", M_STR, 0, 1024, NULL, NULL },
    { "tasks", M_ARR, F_REQ, 0, NULL, check_tasks },
    { "culprit", M_OBJ, 0, 0, NULL, check_culprit },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_outcome (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, outcome_members, false, error);
}

/* collector */

static const struct member collector_members[] = {
    { "name", M_STR, F_REQ, 64, NULL, NULL },
    { "version", M_STR, F_REQ, 64, NULL, NULL },
    { "interval_s", M_NUM, F_POS, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_collector (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, collector_members, false, error);
}

/* files (eBPF file evidence) */

static const char *const files_source_values[] = { "ebpf", "none", NULL };
static const char *const files_op_values[] = { "read", "write", NULL };

static const char *const files_call_values[] = { "open", "stat", "access",
                                                 NULL };

static const struct member failed_open_members[] = {
    { "path", M_STR, F_REQ, 1024, NULL, NULL },
    { "errno", M_STR, F_REQ, 32, NULL, NULL },
    { "tool", M_STR, F_REQ, 64, NULL, NULL },
    { "count", M_INT, F_REQ | F_POS, 0, NULL, NULL },
    { "call", M_STR, 0, 0, files_call_values, NULL },
    { "acted", M_INT, F_NONNEG, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static const struct member io_error_members[] = {
    { "op", M_STR, F_REQ, 0, files_op_values, NULL },
    { "errno", M_STR, F_REQ, 32, NULL, NULL },
    { "tool", M_STR, F_REQ, 64, NULL, NULL },
    { "count", M_INT, F_REQ | F_POS, 0, NULL, NULL },
    { "path", M_STR, 0, 1024, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static const struct member file_bytes_members[] = {
    { "path", M_STR, F_REQ, 1024, NULL, NULL },
    { "bytes", M_INT, F_REQ | F_POS, 0, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_failed_open (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, failed_open_members, false, error);
}

static int check_io_error (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, io_error_members, false, error);
}

static int check_file_bytes (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, file_bytes_members, false, error);
}

static const struct member failed_open_elem = { "", M_OBJ, 0, 0, NULL,
                                                check_failed_open };
static const struct member io_error_elem = { "", M_OBJ, 0, 0, NULL,
                                             check_io_error };
static const struct member file_bytes_elem = { "", M_OBJ, 0, 0, NULL,
                                               check_file_bytes };

static int check_failed_opens (json_t *v, const char *path,
                               tr_error_t *error)
{
    return check_array_of (v, path, 16, &failed_open_elem, error);
}

static int check_io_errors (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, 16, &io_error_elem, error);
}

static int check_files_bytes (json_t *v, const char *path,
                              tr_error_t *error)
{
    return check_array_of (v, path, 5, &file_bytes_elem, error);
}

static const struct member files_members[] = {
    { "source", M_STR, F_REQ, 0, files_source_values, NULL },
    { "reason", M_STR, 0, 512, NULL, NULL },
    { "read_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "written_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "failed_opens", M_ARR, 0, 0, NULL, check_failed_opens },
    { "io_errors", M_ARR, 0, 0, NULL, check_io_errors },
    { "top_read", M_ARR, 0, 0, NULL, check_files_bytes },
    { "top_written", M_ARR, 0, 0, NULL, check_files_bytes },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_files (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, files_members, false, error);
}

/* signature */

static int check_digest (json_t *v, const char *path, tr_error_t *error)
{
    const char *s = json_string_value (v);

    if (strlen (s) != 64 || strspn (s, "0123456789abcdef") != 64)
        return invalid (error, "%s: expected 64 lowercase hex digits", path);
    return 0;
}

static int check_credential (json_t *v, const char *path, tr_error_t *error)
{
    if (strncmp (json_string_value (v), "MUNGE:", 6) != 0)
        return invalid (error, "%s: expected a MUNGE credential", path);
    return 0;
}

static const struct member sig_munge_members[] = {
    { "scheme", M_STR, F_REQ, 0, scheme_values, NULL },
    { "digest", M_STR, F_REQ, 64, NULL, check_digest },
    { "credential", M_STR, F_REQ, 0, NULL, check_credential },
    { NULL, 0, 0, 0, NULL, NULL },
};

static const struct member sig_none_members[] = {
    { "scheme", M_STR, F_REQ, 0, scheme_values, NULL },
    { "reason", M_STR, F_REQ, 1024, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static const struct member scheme_member = {
    "scheme", M_STR, F_REQ, 0, scheme_values, NULL,
};

static int check_signature (json_t *v, const char *path, tr_error_t *error)
{
    char sub[PATH_BUF];
    json_t *scheme;

    join (sub, sizeof (sub), path, "scheme");
    if (!(scheme = json_object_get (v, "scheme")))
        return invalid (error, "%s: missing required member", sub);
    if (check_member (scheme, sub, &scheme_member, error) < 0)
        return -1;
    if (!strcmp (json_string_value (scheme), "none"))
        return check_object (v, path, sig_none_members, false, error);
    return check_object (v, path, sig_munge_members, false, error);
}

/* events: kernel evidence (kmsg.c) */

static const char *const event_kind_values[] = {
    "oom-kill", "segfault", "trap", "hung-task", "io-error", "nfs",
    "gpu-xid",  NULL,
};
static const char *const event_scope_values[] = { "step", "node", NULL };

static const struct member event_members[] = {
    { "kind", M_STR, F_REQ, 0, event_kind_values, NULL },
    { "scope", M_STR, F_REQ, 0, event_scope_values, NULL },
    { "t_unix_ms", M_INT, F_REQ | F_NONNEG, 0, NULL, NULL },
    { "pid", M_INT, F_POS, 0, NULL, NULL },
    { "tool", M_STR, 0, 64, NULL, NULL },
    { "rss_bytes", M_INT, F_NONNEG, 0, NULL, NULL },
    { "device", M_STR, 0, 64, NULL, NULL },
    { "text", M_STR, F_REQ, 256, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_event (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, event_members, false, error);
}

static const struct member event_elem = { "", M_OBJ, 0, 0, NULL, check_event };

static int check_events (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, 32, &event_elem, error);
}

/* progress: no progress (progress.c) */

static const struct member stall_proc_members[] = {
    { "tool", M_STR, F_REQ, 64, NULL, NULL },
    { "pid", M_INT, F_REQ | F_POS, 0, NULL, NULL },
    { "state", M_STR, F_REQ, 1, NULL, NULL },
    { "wchan", M_STR, 0, 128, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_stall_proc (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, stall_proc_members, false, error);
}

static const struct member stall_proc_elem = { "", M_OBJ, 0, 0, NULL,
                                               check_stall_proc };

static int check_stall_procs (json_t *v, const char *path, tr_error_t *error)
{
    return check_array_of (v, path, 16, &stall_proc_elem, error);
}

static const struct member progress_members[] = {
    { "stalled", M_BOOL, F_REQ, 0, NULL, NULL },
    { "stalled_s", M_NUM, F_NONNEG, 0, NULL, NULL },
    { "since_unix_ms", M_INT, F_NONNEG, 0, NULL, NULL },
    { "processes", M_ARR, 0, 0, NULL, check_stall_procs },
    { NULL, 0, 0, 0, NULL, NULL },
};

static int check_progress (json_t *v, const char *path, tr_error_t *error)
{
    return check_object (v, path, progress_members, false, error);
}

/* record */

static int check_format (json_t *v, const char *path, tr_error_t *error)
{
    if (strcmp (json_string_value (v), TR_RECORD_FORMAT) != 0)
        return invalid (error, "%s: expected '%s'", path, TR_RECORD_FORMAT);
    return 0;
}

static int check_version (json_t *v, const char *path, tr_error_t *error)
{
    if (json_integer_value (v) != TR_RECORD_VERSION)
        return invalid (error, "%s: unsupported version %lld (expected %d)",
                        path, (long long)json_integer_value (v),
                        TR_RECORD_VERSION);
    return 0;
}

/* The sections come first so that tr_record_validate_section can find
 * them by name; the table order is also the order of error reports.
 */
static const struct member record_members[] = {
    { "format", M_STR, F_REQ, 64, NULL, check_format },
    { "version", M_INT, F_REQ, 0, NULL, check_version },
    { "kind", M_STR, F_REQ, 0, kind_values, NULL },
    { "identity", M_OBJ, F_REQ, 0, NULL, check_identity },
    { "request", M_OBJ, F_REQ, 0, NULL, check_request },
    { "host", M_OBJ, F_REQ, 0, NULL, check_host },
    { "cgroup", M_OBJ, F_REQ, 0, NULL, check_cgroup },
    { "time", M_OBJ, F_REQ, 0, NULL, check_time },
    { "summary", M_OBJ, F_REQ, 0, NULL, check_summary },
    { "tools", M_ARR, F_REQ, 0, NULL, check_tools },
    { "series", M_OBJ, F_REQ, 0, NULL, check_series },
    { "tags", M_OBJ, F_REQ, 0, NULL, check_tags },
    { "outcome", M_OBJ, F_REQ, 0, NULL, check_outcome },
    { "collector", M_OBJ, F_REQ, 0, NULL, check_collector },
    { "signature", M_OBJ, 0, 0, NULL, check_signature },
    { "files", M_OBJ, 0, 0, NULL, check_files },
    { "events", M_ARR, 0, 0, NULL, check_events },
    { "progress", M_OBJ, 0, 0, NULL, check_progress },
    { NULL, 0, 0, 0, NULL, NULL },
};

/* Nesting depth of a container, counting v itself as 1.  The walk stops
 * as soon as the bound is passed, so recursion never goes deeper than
 * TR_RECORD_MAX_DEPTH + 1 whatever jansson accepted.
 */
static bool depth_ok (json_t *v, int depth)
{
    const char *key;
    json_t *child;
    size_t i;

    if (depth > TR_RECORD_MAX_DEPTH)
        return false;
    if (json_is_object (v)) {
        json_object_foreach (v, key, child)
        {
            if (!depth_ok (child, depth + 1))
                return false;
        }
    }
    else if (json_is_array (v)) {
        json_array_foreach (v, i, child)
        {
            if (!depth_ok (child, depth + 1))
                return false;
        }
    }
    return true;
}

int tr_record_validate (json_t *rec, tr_error_t *error)
{
    if (!json_is_object (rec))
        return invalid (error, "record: expected an object");
    if (!depth_ok (rec, 1))
        return invalid (error, "record: nested deeper than %d levels",
                        TR_RECORD_MAX_DEPTH);
    if (check_object (rec, "", record_members, false, error) < 0)
        return -1;
    /* A final record describes a finished step, so it has an end. */
    if (!strcmp (json_string_value (json_object_get (rec, "kind")), "final")
        && !json_object_get (json_object_get (rec, "time"), "end_unix_ms"))
        return invalid (error, "time.end_unix_ms: required when kind is "
                               "'final'");
    return 0;
}

int tr_record_validate_section (const char *section,
                                json_t *obj,
                                tr_error_t *error)
{
    const struct member *m;
    char q[QUOTE_MAX + 8];

    if (!section || !(m = find_member (record_members, section))
        || (m->type != M_OBJ && m->type != M_ARR))
        return invalid (error, "unknown section '%s'",
                        section ? quote (section, q, sizeof (q)) : "(null)");
    if (!obj)
        return invalid (error, "%s: missing", section);
    return check_member (obj, section, m, error);
}

/* Parse, with 'file' (may be NULL) used only to place syntax errors. */
static json_t *parse (const char *buf,
                      size_t len,
                      const char *file,
                      tr_error_t *error)
{
    json_error_t jerr;
    json_t *rec;

    if (!buf) {
        errno = EINVAL;
        tr_errprintf (error, "no input");
        return NULL;
    }
    if (len > TR_RECORD_MAX_BYTES) {
        errno = EFBIG;
        tr_errprintf (error, "record is larger than %d bytes",
                      TR_RECORD_MAX_BYTES);
        return NULL;
    }
    /* Duplicate keys are refused: a signer and a reader that picked
     * different duplicates would disagree about what was signed.
     */
    /* jansson sets the error code byte only when it reports an error. */
    memset (&jerr, 0, sizeof (jerr));
    if (!(rec = json_loadb (buf, len, JSON_REJECT_DUPLICATES, &jerr))) {
        /* jansson leaves the error unset when an allocation fails deep
         * in the parser; that, not the input, is then at fault.
         */
        if (json_error_code (&jerr) == json_error_out_of_memory
            || jerr.text[0] == '\0') {
            errno = ENOMEM;
            tr_errprintf (error, "out of memory");
            return NULL;
        }
        errno = EINVAL;
        if (file)
            tr_errprintf_at (error, file, jerr.line, jerr.column,
                             "invalid JSON: %s", jerr.text);
        else {
            tr_errprintf (error, "invalid JSON at line %d, column %d: %s",
                          jerr.line, jerr.column, jerr.text);
            if (error) {
                error->line = jerr.line;
                error->column = jerr.column;
            }
        }
        return NULL;
    }
    if (tr_record_validate (rec, error) < 0)
        goto error;
    return rec;
error:
    json_decref (rec);
    errno = EINVAL;
    return NULL;
}

json_t *tr_record_parse (const char *buf, size_t len, tr_error_t *error)
{
    return parse (buf, len, NULL, error);
}

/* Re-label an error produced while loading 'path' with the file name. */
static void set_file (tr_error_t *error, const char *path)
{
    if (error)
        (void)snprintf (error->file, sizeof (error->file), "%s", path);
}


/* Replace the text of string v by its escaped form. */
static int printable_string (json_t *v)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    int rc;

    if (tr_strbuf_printable (&sb, json_string_value (v)) < 0)
        return -1;
    rc = json_string_set (v, tr_strbuf_str (&sb));
    tr_strbuf_free (&sb);
    if (rc < 0)
        errno = ENOMEM;
    return rc;
}

json_t *tr_record_load (const char *path, tr_error_t *error)
{
    char *buf;
    size_t len;
    json_t *rec;
    int saved;

    if (!path) {
        errno = EINVAL;
        tr_errprintf (error, "no path");
        return NULL;
    }
    /* No symlinks (the store is writable by others, a link there must not
     * make a root reader open something else), no FIFOs (they would hang
     * the reader), bounded size: tr_path_read_file refuses all three.
     */
    if (!(buf = tr_path_read_file (AT_FDCWD, path, TR_RECORD_MAX_BYTES, &len,
                                   NULL))) {
        if (errno == ELOOP)
            tr_errprintf_at (error, path, 0, 0, "is a symbolic link");
        else if (errno == EFBIG)
            tr_errprintf_at (error, path, 0, 0,
                             "record is larger than %d bytes",
                             TR_RECORD_MAX_BYTES);
        else if (errno == EINVAL || errno == EISDIR)
            tr_errprintf_at (error, path, 0, 0, "not a regular file");
        else
            tr_errprintf_at (error, path, 0, 0, "%s", strerror (errno));
        return NULL;
    }
    rec = parse (buf, len, path, error);
    saved = errno;
    free (buf);
    if (!rec)
        set_file (error, path);
    errno = saved;
    return rec;
}

static int dump_cb (const char *buffer, size_t size, void *data)
{
    return tr_strbuf_append (data, buffer, size);
}

/* Serialize into malloc'ed memory (jansson's own json_dumps allocates
 * with whatever allocator jansson was given; callers here use free()).
 */
static char *dump (json_t *obj, size_t flags, bool newline)
{
    tr_strbuf_t sb = TR_STRBUF_INIT;
    char *s;

    if (json_dump_callback (obj, dump_cb, &sb, flags) < 0
        || (newline && tr_strbuf_append (&sb, "\n", 1) < 0)) {
        tr_strbuf_free (&sb);
        errno = ENOMEM;
        return NULL;
    }
    if (!(s = tr_strbuf_steal (&sb))) {
        tr_strbuf_free (&sb);
        errno = ENOMEM;
    }
    return s;
}

char *tr_record_canonical (json_t *rec)
{
    json_t *copy;
    char *s;
    int saved;

    if (!json_is_object (rec)) {
        errno = EINVAL;
        return NULL;
    }
    /* A shallow copy is enough: only the top-level member is dropped. */
    if (!(copy = json_copy (rec))) {
        errno = ENOMEM;
        return NULL;
    }
    (void)json_object_del (copy, "signature");
    s = dump (copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII, false);
    saved = errno;
    json_decref (copy);
    errno = saved;
    return s;
}

/* Digits that read back as the same double for any decimal (DBL_DIG),
 * and how deep the real walks go (records nest four levels).
 */
#define SHORT_DIGITS 15
#define WALK_DEPTH 32

/* The double that SHORT_DIGITS significant digits of v read back as. */
static double short_real (double v)
{
    char buf[40];

    snprintf (buf, sizeof (buf), "%.*g", SHORT_DIGITS, v);
    return strtod (buf, NULL);
}

/* Walk the reals of v: round them (round), or check that each already
 * reads back from SHORT_DIGITS digits.  1 all short, 0 one is not, -1
 * too deep.
 */
static int walk_reals (json_t *v, bool round, int depth)
{
    const char *key;
    json_t *el;
    size_t i;
    int r;

    if (depth > WALK_DEPTH)
        return -1;
    switch (json_typeof (v)) {
    case JSON_REAL: {
        double x = json_real_value (v), y = short_real (x);
        if (y == x)
            return 1;
        if (round)
            json_real_set (v, y);
        return round ? 1 : 0;
    }
    case JSON_OBJECT:
        json_object_foreach (v, key, el)
        {
            if ((r = walk_reals (el, round, depth + 1)) <= 0)
                return r;
        }
        return 1;
    case JSON_ARRAY:
        json_array_foreach (v, i, el)
        {
            if ((r = walk_reals (el, round, depth + 1)) <= 0)
                return r;
        }
        return 1;
    default:
        return 1;
    }
}

int tr_record_printable (json_t *rec)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_object (rec)) {
        json_object_foreach (rec, key, v)
            if (json_is_string (v) ? !tr_text_is_printable (json_string_value (v))
                                         && printable_string (v) < 0
                                   : tr_record_printable (v) < 0)
                return -1;
    }
    else if (json_is_array (rec)) {
        json_array_foreach (rec, i, v)
            if (json_is_string (v) ? !tr_text_is_printable (json_string_value (v))
                                         && printable_string (v) < 0
                                   : tr_record_printable (v) < 0)
                return -1;
    }
    return 0;
}

int tr_record_round_reals (json_t *rec)
{
    if (walk_reals (rec, true, 0) < 0) {
        errno = ELOOP;
        return -1;
    }
    return 0;
}

/* Stands in for the series while the rest is indented; the top-level
 * line that holds it is the only one indented by one space.
 */
#define SERIES_MARK "@series@"
#define SERIES_LINE "\n \"series\": \"" SERIES_MARK "\""

char *tr_record_dumps (json_t *rec)
{
    size_t prec, flags;
    json_t *series, *copy = NULL;
    char *text = NULL, *line, *body = NULL, *out = NULL;
    tr_strbuf_t sb = TR_STRBUF_INIT;
    int saved;

    if (!json_is_object (rec)) {
        errno = EINVAL;
        return NULL;
    }
    prec = walk_reals (rec, false, 0) == 1 ? JSON_REAL_PRECISION (SHORT_DIGITS)
                                           : 0;
    flags = JSON_SORT_KEYS | JSON_ENSURE_ASCII | prec;
    series = json_object_get (rec, "series");
    if (!series)
        return dump (rec, JSON_INDENT (1) | flags, true);
    if (!(copy = json_copy (rec))
        || json_object_set_new (copy, "series", json_string (SERIES_MARK)) < 0) {
        errno = ENOMEM;
        goto out;
    }
    if (!(text = dump (copy, JSON_INDENT (1) | flags, true))
        || !(body = dump (series, JSON_COMPACT | flags, false)))
        goto out;
    /* a newline in the text is always indentation (newlines inside
     * strings are escaped), so only the top-level member matches
     */
    if (!(line = strstr (text, SERIES_LINE))) {
        errno = EPROTO;
        goto out;
    }
    line += strlen (SERIES_LINE) - strlen (SERIES_MARK) - 2;
    if (tr_strbuf_append (&sb, text, (size_t)(line - text)) < 0
        || tr_strbuf_append (&sb, body, strlen (body)) < 0
        || tr_strbuf_append (&sb, line + strlen (SERIES_MARK) + 2,
                             strlen (line + strlen (SERIES_MARK) + 2))
               < 0
        || !(out = tr_strbuf_steal (&sb)))
        errno = ENOMEM;
out:
    saved = errno;
    tr_strbuf_free (&sb);
    free (text);
    free (body);
    json_decref (copy);
    errno = saved;
    return out;
}

json_t *tr_record_create (const char *kind)
{
    json_t *rec;

    if (!kind || !in_values (kind, kind_values)) {
        errno = EINVAL;
        return NULL;
    }
    rec = json_pack ("{s:s, s:i, s:s,"
                     " s:{}, s:{}, s:{}, s:{}, s:{},"
                     " s:{s:i, s:{}, s:{}}, s:[],"
                     " s:{s:[], s:{}}, s:{},"
                     " s:{s:s, s:b, s:[]}, s:{}}",
                     "format", TR_RECORD_FORMAT, "version", TR_RECORD_VERSION,
                     "kind", kind, "identity", "request", "host", "cgroup",
                     "time", "summary", "samples", 0, "cpu", "memory", "tools",
                     "series", "t_s", "metrics", "tags", "outcome", "state",
                     "unknown", "complete", 0, "tasks", "collector");
    if (!rec)
        errno = ENOMEM;
    return rec;
}

const char *tr_record_get_str (json_t *rec,
                               const char *section,
                               const char *key)
{
    json_t *obj = section ? json_object_get (rec, section) : rec;

    return json_string_value (json_object_get (obj, key));
}
