/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A small reader of the kernel's own type information (BTF, as
 * /sys/kernel/btf/vmlinux gives it): where a member sits in a struct and
 * what an enumerator is worth, so that a BPF program can read kernel
 * structures of the running kernel without compiling against them.
 */
#ifndef TRACER_BTF_H
#define TRACER_BTF_H

#include <stddef.h>
#include <stdint.h>

#include "libtracer/util/error.h"

typedef struct tr_btf tr_btf_t;

/* Parse a BTF blob (copied).  NULL with error text and errno EINVAL when
 * it is not BTF or is cut short, ENOMEM when out of memory.
 */
tr_btf_t *tr_btf_parse (const void *data, size_t size, tr_error_t *error);

/* Read and parse a file (at most 64 MiB); errno as open()/read() or as
 * tr_btf_parse.
 */
tr_btf_t *tr_btf_load (const char *path, tr_error_t *error);

void tr_btf_free (tr_btf_t *btf);

/* The byte offset of member 'member' of struct or union 'type', looking
 * into anonymous struct and union members too; its size in bytes (when
 * size is not NULL: the resolved type's size, 8 for a pointer, 0 for a
 * flexible array), and for an array member the element count (nelems,
 * when not NULL; 0 otherwise).  Returns 0, or -1 with errno ENOENT (no
 * such struct or member) or EINVAL (a bit field).
 */
int tr_btf_member (const tr_btf_t *btf,
                   const char *type,
                   const char *member,
                   size_t *offset,
                   size_t *size,
                   uint32_t *nelems);

/* The value of enumerator 'name' of enum 'type'.  Returns 0, or -1 with
 * errno ENOENT.
 */
int tr_btf_enum_value (const tr_btf_t *btf,
                       const char *type,
                       const char *name,
                       int64_t *value);

#endif
