/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * User and group lookups with one growable buffer, as MUNGE's
 * xgetpwnam does.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nss.h"

enum query {
    BY_USER_NAME,
    BY_UID,
    BY_GROUP_NAME,
    BY_GID,
};

/* What one lookup found, copied out of the buffer. */
struct found {
    uid_t uid;
    gid_t gid;
    char *name;
};

/* Map a get*_r result to errno: several "not found" codes exist in the
 * wild (getpwnam_r(3) NOTES).
 */
static int nss_errno (int rc)
{
    if (rc == 0 || rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM)
        return ENOENT;
    return rc;
}

static int lookup (enum query q,
                   const char *name,
                   unsigned long id,
                   bool want_name,
                   struct found *out)
{
    bool user = q == BY_USER_NAME || q == BY_UID;
    long hint = sysconf (user ? _SC_GETPW_R_SIZE_MAX : _SC_GETGR_R_SIZE_MAX);
    size_t size = hint > 0 && hint <= TR_NSS_MAX_BUF ? (size_t)hint : 1024;
    char *buf = NULL;
    int rc;

    for (;;) {
        struct passwd pw, *pwp = NULL;
        struct group gr, *grp = NULL;
        const char *s = NULL;
        char *nb = realloc (buf, size);

        if (!nb) {
            free (buf);
            errno = ENOMEM;
            return -1;
        }
        buf = nb;
        switch (q) {
        case BY_USER_NAME:
            rc = getpwnam_r (name, &pw, buf, size, &pwp);
            break;
        case BY_UID:
            rc = getpwuid_r ((uid_t)id, &pw, buf, size, &pwp);
            break;
        case BY_GROUP_NAME:
            rc = getgrnam_r (name, &gr, buf, size, &grp);
            break;
        default:
            rc = getgrgid_r ((gid_t)id, &gr, buf, size, &grp);
            break;
        }
        if (rc == ERANGE) {
            if (size >= TR_NSS_MAX_BUF)
                break;
            size = size * 2 > TR_NSS_MAX_BUF ? TR_NSS_MAX_BUF : size * 2;
            continue;
        }
        if (rc != 0 || (!pwp && !grp))
            break;
        if (pwp) {
            out->uid = pwp->pw_uid;
            out->gid = pwp->pw_gid;
            s = pwp->pw_name;
        }
        else {
            out->gid = grp->gr_gid;
            s = grp->gr_name;
        }
        out->name = NULL;
        if (want_name && !(out->name = strdup (s ? s : ""))) {
            free (buf);
            errno = ENOMEM;
            return -1;
        }
        free (buf);
        return 0;
    }
    free (buf);
    errno = nss_errno (rc);
    return -1;
}

int tr_nss_user_by_name (const char *name, uid_t *uid, gid_t *gid)
{
    struct found f;

    if (!name) {
        errno = EINVAL;
        return -1;
    }
    if (lookup (BY_USER_NAME, name, 0, false, &f) < 0)
        return -1;
    if (uid)
        *uid = f.uid;
    if (gid)
        *gid = f.gid;
    return 0;
}

int tr_nss_user_by_uid (uid_t uid, char **name, gid_t *gid)
{
    struct found f;

    if (lookup (BY_UID, NULL, uid, name != NULL, &f) < 0)
        return -1;
    if (name)
        *name = f.name;
    if (gid)
        *gid = f.gid;
    return 0;
}

int tr_nss_group_by_name (const char *name, gid_t *gid)
{
    struct found f;

    if (!name) {
        errno = EINVAL;
        return -1;
    }
    if (lookup (BY_GROUP_NAME, name, 0, false, &f) < 0)
        return -1;
    if (gid)
        *gid = f.gid;
    return 0;
}

int tr_nss_group_by_gid (gid_t gid, char **name)
{
    struct found f;

    if (lookup (BY_GID, NULL, gid, name != NULL, &f) < 0)
        return -1;
    if (name)
        *name = f.name;
    return 0;
}
