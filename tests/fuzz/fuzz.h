/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What every fuzz harness in this directory shares: the libFuzzer entry
 * point (each harness defines it; tools/fuzz links it with libFuzzer,
 * tests/Makefile.am with replay.c to rerun the corpus and regressions
 * under "make check") and the input size a harness acts on.
 */
#ifndef TRACER_FUZZ_H
#define TRACER_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Larger inputs are ignored: the parsers bound their own input far
 * below what a fuzzer would spend time on, and tools/fuzz passes the
 * same number as -max_len.
 */
#define FUZZ_MAX_LEN (64 * 1024)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The input as a NUL-terminated string, for the parsers that take text;
 * NULL when it is longer than FUZZ_MAX_LEN or memory runs out.  Caller
 * frees.
 */
static inline char *fuzz_text (const uint8_t *data, size_t size)
{
    char *text;

    if (size > FUZZ_MAX_LEN || !(text = malloc (size + 1)))
        return NULL;
    memcpy (text, data, size);
    text[size] = '\0';
    return text;
}

#endif /* !TRACER_FUZZ_H */
