/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_UNITS_H
#define TRACER_UNITS_H

#include <stddef.h>

/* How every view writes a quantity: the one place each form is decided.
 * Each writes into BUF (SIZE bytes) and returns BUF.
 */

/* Bytes as people read them: "512 B", "3.9 GiB" (binary units, one
 * decimal).  The text, HTML, mail and cause views. */
const char *tr_units_bytes (char *buf, size_t size, double bytes);

/* Bytes as a user writes a request: "512B", "3.9G", "12G" (one decimal
 * under 10, binary units).  Advice and findings. */
const char *tr_units_bytes_short (char *buf, size_t size, double bytes);

/* Bytes as sacct lists them: "512", "3.91G", "39.1G", "391G" (three
 * significant figures). */
const char *tr_units_bytes_sacct (char *buf, size_t size, double bytes);

/* Bytes as Slurm writes a TRES memory: in kibibytes (rounded up), then
 * in the largest unit that divides it exactly: "977K", "1536M", "8G". */
const char *tr_units_bytes_exact (char *buf, size_t size, double bytes);

/* A duration as Slurm writes elapsed times and limits: "HH:MM:SS", or
 * "D-HH:MM:SS" from a day; negative durations are 0. */
const char *tr_units_duration (char *buf, size_t size, double seconds);

/* A duration in words: "12.5 s", "3 min 07 s", "2 h 05 min". */
const char *tr_units_duration_words (char *buf, size_t size, double seconds);

#endif /* !TRACER_UNITS_H */
