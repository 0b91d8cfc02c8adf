/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_SAMPLER_H
#define TRACER_SAMPLER_H
#endif
