/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_NSS_H
#define TRACER_NSS_H

#include <sys/types.h>

/* User and group lookups through the name service (getpwnam_r(3) and
 * its kin).  Each goes through one buffer that starts at the size
 * sysconf suggests and doubles while the lookup says ERANGE (LDAP groups
 * can be large), up to TR_NSS_MAX_BUF bytes.  Every function returns 0,
 * or -1 with errno ENOENT (no such user or group: the several "not
 * found" codes of getpwnam_r(3) NOTES are all ENOENT), ERANGE (the entry
 * is larger than TR_NSS_MAX_BUF), ENOMEM or the lookup's own error.
 * Outputs are untouched on failure; any output pointer may be NULL.
 */
#define TR_NSS_MAX_BUF (1024 * 1024)

/* The uid and primary gid of the user called name. */
int tr_nss_user_by_name (const char *name, uid_t *uid, gid_t *gid);

/* The name and primary gid of user uid.  Caller must free *name with
 * free().
 */
int tr_nss_user_by_uid (uid_t uid, char **name, gid_t *gid);

/* The gid of the group called name. */
int tr_nss_group_by_name (const char *name, gid_t *gid);

/* The name of group gid.  Caller must free *name with free(). */
int tr_nss_group_by_gid (gid_t gid, char **name);

#endif /* !TRACER_NSS_H */
