/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Network counters for a step.  cgroups count no network bytes, so what
 * we have is /proc/PID/net/dev, which is per network namespace: for a
 * job in the node's namespace it shows the whole node's traffic, hence
 * the "scope" that goes with every figure.  InfiniBand port counters are
 * node-wide too; their data counters are octets divided by 4 (kernel
 * Documentation/ABI/stable/sysfs-class-infiniband).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "libtracer/util/fsroot.h"
#include "netstat.h"

/* About 130 bytes a line: room for thousands of interfaces. */
#define NET_DEV_MAX_BYTES (1024 * 1024)
#define COUNTER_MAX_BYTES 64

/* net/dev columns: 8 receive counters, then 8 transmit counters. */
#define NET_DEV_COLUMNS 16
#define COL_RX_BYTES 0
#define COL_RX_PACKETS 1
#define COL_TX_BYTES 8
#define COL_TX_PACKETS 9


static bool is_blank (char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Next blank-separated token in [*p, end).  Returns false at the end. */
static bool next_token (const char **p,
                        const char *end,
                        const char **tok,
                        size_t *len)
{
    const char *s = *p;

    while (s < end && is_blank (*s))
        s++;
    *tok = s;
    while (s < end && !is_blank (*s))
        s++;
    *len = (size_t)(s - *tok);
    *p = s;
    return *len > 0;
}

/* The interfaces of one reading of net/dev, parsed on the stack (no
 * allocation per sample) and copied out only when all of it parsed.
 */
struct dev_lines {
    size_t niface;
    bool iface_truncated;
    struct tr_netstat_iface iface[TR_NETSTAT_MAX_IFACES];
};

/* One "name: counters" line.  The name is what precedes the last ':'
 * (counters never contain one), without the padding the kernel adds.
 */
static int parse_dev_line (const char *p,
                           const char *end,
                           const char *colon,
                           struct dev_lines *snap)
{
    struct tr_netstat_iface ifc = { 0 };
    uint64_t col[NET_DEV_COLUMNS];
    const char *name = p, *name_end = colon, *q = colon + 1, *tok;
    size_t len, i;

    while (name < name_end && is_blank (*name))
        name++;
    while (name_end > name && is_blank (name_end[-1]))
        name_end--;
    if (name_end == name || (size_t)(name_end - name) >= sizeof (ifc.name))
        goto invalid;
    memcpy (ifc.name, name, (size_t)(name_end - name));
    for (i = 0; i < NET_DEV_COLUMNS; i++) {
        if (!next_token (&q, end, &tok, &len))
            goto invalid;
        if (tr_parse_u64 (tok, len, &col[i]) < 0)
            return -1;
    }
    ifc.rx_bytes = col[COL_RX_BYTES];
    ifc.rx_packets = col[COL_RX_PACKETS];
    ifc.tx_bytes = col[COL_TX_BYTES];
    ifc.tx_packets = col[COL_TX_PACKETS];
    for (i = 0; i < snap->niface; i++)
        if (!strcmp (snap->iface[i].name, ifc.name))
            goto invalid;
    if (snap->niface == TR_NETSTAT_MAX_IFACES) {
        snap->iface_truncated = true;
        return 0;
    }
    snap->iface[snap->niface++] = ifc;
    return 0;
invalid:
    errno = EINVAL;
    return -1;
}

int tr_netstat_parse_dev (const char *text, struct tr_netstat *out)
{
    struct dev_lines lines, *r = &lines;
    const char *p = text;

    if (!text || !out || !*text) {
        errno = EINVAL;
        return -1;
    }
    r->niface = 0;
    r->iface_truncated = false;
    while (*p) {
        const char *nl = strchr (p, '\n');
        const char *end = nl ? nl : p + strlen (p);
        const char *colon = NULL, *s, *tok;
        size_t len;

        for (s = p; s < end; s++)
            if (*s == ':')
                colon = s;
        if (colon) {
            if (parse_dev_line (p, end, colon, r) < 0)
                return -1;
        }
        /* Without ':' only the two header lines (they hold the '|'
         * column separators) and blank lines are expected.
         */
        else if (!memchr (p, '|', (size_t)(end - p))) {
            s = p;
            if (next_token (&s, end, &tok, &len)) {
                errno = EINVAL;
                return -1;
            }
        }
        p = nl ? nl + 1 : end;
    }
    out->niface = r->niface;
    out->iface_truncated = r->iface_truncated;
    memcpy (out->iface, r->iface, r->niface * sizeof (out->iface[0]));
    memset (out->iface + r->niface, 0,
            (TR_NETSTAT_MAX_IFACES - r->niface) * sizeof (out->iface[0]));
    return 0;
}

int tr_netstat_read_dev (pid_t pid, struct tr_netstat *out)
{
    char path[64];
    char *text;
    int rc, saved;

    snprintf (path, sizeof (path), "/proc/%d/net/dev", (int)pid);
    if (!(text = tr_fsroot_read_text (path, NET_DEV_MAX_BYTES)))
        return -1;
    rc = tr_netstat_parse_dev (text, out);
    saved = errno;
    free (text);
    errno = saved;
    return rc;
}

/* Read one sysfs counter: a number and a newline. */
static int read_counter (const char *dir, const char *name, uint64_t *value)
{
    char path[PATH_MAX];
    const char *tok, *p, *end;
    char *text;
    size_t len;
    int n, rc = -1, saved;

    n = snprintf (path, sizeof (path), "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof (path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!(text = tr_fsroot_read_text (path, COUNTER_MAX_BYTES)))
        return -1;
    p = text;
    end = text + strlen (text);
    if (end > p && end[-1] == '\n')
        end--;
    if (!next_token (&p, end, &tok, &len)) {
        errno = EINVAL;
        goto out;
    }
    if (tr_parse_u64 (tok, len, value) < 0)
        goto out;
    if (next_token (&p, end, &tok, &len)) {
        errno = EINVAL;
        goto out;
    }
    rc = 0;
out:
    saved = errno;
    free (text);
    errno = saved;
    return rc;
}

/* Read a port's four counters.  Returns 1 when the port has none
 * (counters/ or one of the files absent: skipped), 0, or -1 with errno.
 */
static int read_port (const char *device,
                      unsigned port,
                      struct tr_netstat_ib *ib)
{
    char dir[PATH_MAX];
    uint64_t xmit_data, rcv_data, xmit_packets, rcv_packets;
    int n;

    n = snprintf (dir, sizeof (dir),
                  "/sys/class/infiniband/%s/ports/%u/"
                  "counters",
                  device, port);
    if (n < 0 || (size_t)n >= sizeof (dir)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (read_counter (dir, "port_xmit_data", &xmit_data) < 0
        || read_counter (dir, "port_rcv_data", &rcv_data) < 0
        || read_counter (dir, "port_xmit_packets", &xmit_packets) < 0
        || read_counter (dir, "port_rcv_packets", &rcv_packets) < 0)
        return errno == ENOENT ? 1 : -1;
    if (xmit_data > UINT64_MAX / 4 || rcv_data > UINT64_MAX / 4) {
        errno = ERANGE;
        return -1;
    }
    memset (ib, 0, sizeof (*ib));
    snprintf (ib->device, sizeof (ib->device), "%s", device);
    ib->port = port;
    ib->tx_bytes = xmit_data * 4;
    ib->rx_bytes = rcv_data * 4;
    ib->tx_packets = xmit_packets;
    ib->rx_packets = rcv_packets;
    return 0;
}

/* Open fsroot + path as a directory. */
static DIR *open_dir (const char *path)
{
    char full[PATH_MAX];

    if (tr_fsroot_path (full, sizeof (full), path) < 0)
        return NULL;
    return opendir (full);
}

/* Add the ports of one device.  A device without ports/ is skipped. */
static int read_device (const char *device, struct tr_netstat *snap)
{
    char path[PATH_MAX];
    struct dirent *ent;
    DIR *dir;
    int n, rc = 0, saved;

    n = snprintf (path, sizeof (path), "/sys/class/infiniband/%s/ports",
                  device);
    if (n < 0 || (size_t)n >= sizeof (path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!(dir = open_dir (path)))
        return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    while ((ent = readdir (dir))) {
        struct tr_netstat_ib ib;
        uint64_t port;
        int r;

        /* Port directories are numbers; anything else is not a port. */
        if (tr_parse_u64 (ent->d_name, strlen (ent->d_name), &port) < 0
            || port > UINT_MAX)
            continue;
        if ((r = read_port (device, (unsigned)port, &ib)) < 0) {
            rc = -1;
            break;
        }
        if (r > 0)
            continue;
        if (snap->nib == TR_NETSTAT_MAX_IB) {
            snap->ib_truncated = true;
            continue;
        }
        snap->ib[snap->nib++] = ib;
    }
    saved = errno;
    closedir (dir);
    errno = saved;
    return rc;
}

static int cmp_ib (const void *a, const void *b)
{
    const struct tr_netstat_ib *x = a, *y = b;
    int c = strcmp (x->device, y->device);

    if (c)
        return c;
    return x->port < y->port ? -1 : x->port > y->port;
}

int tr_netstat_read_ib (struct tr_netstat *out)
{
    struct tr_netstat *r;
    struct dirent *ent;
    DIR *dir;
    int saved;

    if (!out) {
        errno = EINVAL;
        return -1;
    }
    if (!(r = calloc (1, sizeof (*r)))) {
        errno = ENOMEM;
        return -1;
    }
    if (!(dir = open_dir ("/sys/class/infiniband"))) {
        if (errno != ENOENT)
            goto error;
    }
    else {
        while ((ent = readdir (dir))) {
            if (ent->d_name[0] == '.'
                || strlen (ent->d_name) >= TR_NETSTAT_NAME_MAX)
                continue;
            if (read_device (ent->d_name, r) < 0) {
                saved = errno;
                closedir (dir);
                errno = saved;
                goto error;
            }
        }
        closedir (dir);
    }
    /* readdir order is arbitrary; records should not be. */
    qsort (r->ib, r->nib, sizeof (r->ib[0]), cmp_ib);
    out->nib = r->nib;
    out->ib_truncated = r->ib_truncated;
    memcpy (out->ib, r->ib, sizeof (out->ib));
    free (r);
    return 0;
error:
    saved = errno;
    free (r);
    errno = saved;
    return -1;
}

int tr_netstat_scope (pid_t pid, enum tr_netstat_scope *scope)
{
    char path[64], full[PATH_MAX];
    struct stat self, init;

    if (!scope) {
        errno = EINVAL;
        return -1;
    }
    /* stat() follows the ns symlink to the nsfs inode that names the
     * namespace: equal inodes on the same device, same namespace.
     */
    snprintf (path, sizeof (path), "/proc/%d/ns/net", (int)pid);
    if (tr_fsroot_path (full, sizeof (full), path) < 0
        || stat (full, &self) < 0)
        return -1;
    if (tr_fsroot_path (full, sizeof (full), "/proc/1/ns/net") < 0)
        return -1;
    if (stat (full, &init) < 0) {
        /* hidepid= and some containers hide pid 1 (ENOENT) or refuse
         * it even to root (EACCES): the collector runs in the node's
         * namespace, so its own stands in.
         */
        if (errno != ENOENT && errno != EACCES && errno != EPERM)
            return -1;
        if (tr_fsroot_path (full, sizeof (full), "/proc/self/ns/net") < 0
            || stat (full, &init) < 0)
            return -1;
    }
    if (self.st_dev == init.st_dev && self.st_ino == init.st_ino)
        *scope = TR_NETSTAT_SCOPE_NODE;
    else
        *scope = TR_NETSTAT_SCOPE_NAMESPACE;
    return 0;
}

const char *tr_netstat_scope_str (enum tr_netstat_scope scope)
{
    switch (scope) {
    case TR_NETSTAT_SCOPE_NODE:
        return "node";
    case TR_NETSTAT_SCOPE_NAMESPACE:
        return "namespace";
    }
    return NULL;
}

int tr_netstat_snapshot (pid_t pid, struct tr_netstat *out)
{
    struct tr_netstat *r;
    int saved;

    if (!out) {
        errno = EINVAL;
        return -1;
    }
    if (!(r = calloc (1, sizeof (*r)))) {
        errno = ENOMEM;
        return -1;
    }
    if (tr_netstat_read_dev (pid, r) < 0 || tr_netstat_read_ib (r) < 0) {
        saved = errno;
        free (r);
        errno = saved;
        return -1;
    }
    *out = *r;
    free (r);
    return 0;
}

static uint64_t add_sat (uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void tr_netstat_totals (const struct tr_netstat *snap,
                        bool include_ib,
                        uint64_t *rx_bytes,
                        uint64_t *tx_bytes)
{
    uint64_t rx = 0, tx = 0;
    size_t i;

    for (i = 0; snap && i < snap->niface; i++) {
        if (!strcmp (snap->iface[i].name, "lo"))
            continue;
        rx = add_sat (rx, snap->iface[i].rx_bytes);
        tx = add_sat (tx, snap->iface[i].tx_bytes);
    }
    for (i = 0; snap && include_ib && i < snap->nib; i++) {
        rx = add_sat (rx, snap->ib[i].rx_bytes);
        tx = add_sat (tx, snap->ib[i].tx_bytes);
    }
    if (rx_bytes)
        *rx_bytes = rx;
    if (tx_bytes)
        *tx_bytes = tx;
}

/* A name as a JSON string.  Interface names may hold any byte but '/',
 * ':' and blanks, so anything outside printable ASCII becomes '?' rather
 * than an invalid UTF-8 string.
 */
static json_t *json_name (const char *name)
{
    char buf[TR_NETSTAT_NAME_MAX];
    size_t i;

    for (i = 0; name[i] && i < sizeof (buf) - 1; i++)
        buf[i] = (name[i] >= 0x20 && name[i] < 0x7f) ? name[i] : '?';
    buf[i] = '\0';
    return json_string (buf);
}

/* JSON integers are signed 64-bit; no real counter gets near the top. */
static json_t *json_u64 (uint64_t v)
{
    return json_integer (v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static uint64_t sub_clamped (uint64_t end, uint64_t start)
{
    return end > start ? end - start : 0;
}

/* Set rx/tx bytes and packets, end - start (start may be NULL). */
static int set_deltas (json_t *row,
                       const uint64_t end[4],
                       const uint64_t *start)
{
    static const char *const keys[4] = {
        "rx_bytes",
        "tx_bytes",
        "rx_packets",
        "tx_packets",
    };
    int i;

    for (i = 0; i < 4; i++) {
        uint64_t d = sub_clamped (end[i], start ? start[i] : 0);
        if (json_object_set_new (row, keys[i], json_u64 (d)) < 0)
            return -1;
    }
    return 0;
}

static const struct tr_netstat_iface *find_iface (const struct tr_netstat *s,
                                                  const char *name)
{
    size_t i;

    for (i = 0; s && i < s->niface; i++)
        if (!strcmp (s->iface[i].name, name))
            return &s->iface[i];
    return NULL;
}

static const struct tr_netstat_ib *find_ib (const struct tr_netstat *s,
                                            const char *device,
                                            unsigned port)
{
    size_t i;

    for (i = 0; s && i < s->nib; i++)
        if (!strcmp (s->ib[i].device, device) && s->ib[i].port == port)
            return &s->ib[i];
    return NULL;
}

static int add_interfaces (json_t *arr,
                           const struct tr_netstat *start,
                           const struct tr_netstat *end)
{
    size_t i;

    for (i = 0; i < end->niface; i++) {
        const struct tr_netstat_iface *e = &end->iface[i], *s;
        uint64_t ev[4] = { e->rx_bytes, e->tx_bytes, e->rx_packets,
                           e->tx_packets };
        uint64_t sv[4];
        json_t *row;

        /* Loopback traffic never leaves the node. */
        if (!strcmp (e->name, "lo"))
            continue;
        if ((s = find_iface (start, e->name))) {
            sv[0] = s->rx_bytes;
            sv[1] = s->tx_bytes;
            sv[2] = s->rx_packets;
            sv[3] = s->tx_packets;
        }
        if (!(row = json_object ()) || json_array_append_new (arr, row) < 0
            || json_object_set_new (row, "name", json_name (e->name)) < 0
            || set_deltas (row, ev, s ? sv : NULL) < 0)
            return -1;
    }
    return 0;
}

static int add_ports (json_t *arr,
                      const struct tr_netstat *start,
                      const struct tr_netstat *end)
{
    size_t i;

    for (i = 0; i < end->nib; i++) {
        const struct tr_netstat_ib *e = &end->ib[i], *s;
        uint64_t ev[4] = { e->rx_bytes, e->tx_bytes, e->rx_packets,
                           e->tx_packets };
        uint64_t sv[4];
        json_t *row;

        if ((s = find_ib (start, e->device, e->port))) {
            sv[0] = s->rx_bytes;
            sv[1] = s->tx_bytes;
            sv[2] = s->rx_packets;
            sv[3] = s->tx_packets;
        }
        if (!(row = json_object ()) || json_array_append_new (arr, row) < 0
            || json_object_set_new (row, "device", json_name (e->device)) < 0
            || json_object_set_new (row, "port", json_integer (e->port)) < 0
            || set_deltas (row, ev, s ? sv : NULL) < 0)
            return -1;
    }
    return 0;
}

json_t *tr_netstat_json (enum tr_netstat_scope scope,
                         const struct tr_netstat *start,
                         const struct tr_netstat *end)
{
    const char *scope_str = tr_netstat_scope_str (scope);
    json_t *o, *ifaces, *ports;

    if (!end || !scope_str) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = json_object ())
        || json_object_set_new (o, "scope", json_string (scope_str)) < 0
        || json_object_set_new (o, "source", json_string ("proc-net-dev")) < 0
        || !(ifaces = json_array ())
        || json_object_set_new (o, "interfaces", ifaces) < 0
        || !(ports = json_array ())
        || json_object_set_new (o, "infiniband", ports) < 0
        || add_interfaces (ifaces, start, end) < 0
        || add_ports (ports, start, end) < 0) {
        json_decref (o);
        errno = ENOMEM;
        return NULL;
    }
    return o;
}
