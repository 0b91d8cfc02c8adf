/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_GPU_H
#define TRACER_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "libtracer/util/error.h"

/* GPU telemetry through NVIDIA's NVML, loaded at run time.  Nothing is
 * linked against NVML: a node without the library simply has no GPUs.
 * Not thread-safe: one thread owns a tr_gpu_t and its steps.
 */
typedef struct tr_gpu tr_gpu_t;
typedef struct tr_gpu_step tr_gpu_step_t;

/* Load NVML and initialise it.  libpath NULL means the environment
 * variable TRACER_NVML_LIB if set and not empty, else
 * "libnvidia-ml.so.1" from the dynamic linker's search path.
 * Returns a new handle (free with tr_gpu_close), or NULL with errno:
 *   ENOENT   the library is not installed (treat as "no GPUs");
 *   ELIBBAD  it lacks a required NVML function;
 *   ELIBACC  it exists but cannot be loaded;
 *   ENODEV   nvmlInit reports no loaded driver (a node with the driver
 *            package but no GPU);
 *   EACCES, EIO ...  nvmlInit failed otherwise;
 *   ENOMEM.
 * Only ENOENT leaves error empty.
 */
tr_gpu_t *tr_gpu_open (const char *libpath, tr_error_t *error);

/* Shut NVML down and unload it.  Every step made from gpu must have been
 * destroyed first.  NULL is a no-op; errno is preserved.
 */
void tr_gpu_close (tr_gpu_t *gpu);

/* The number of GPUs NVML sees on the node, or -1 with errno. */
int tr_gpu_count (tr_gpu_t *gpu);

/* The driver version string ("535.104.05"), "" when NVML did not say.
 * Owned by gpu.
 */
const char *tr_gpu_driver (tr_gpu_t *gpu);

/* Start tracking the GPUs of one job step.  devices is the allocation as
 * a comma-separated list of NVML device indexes ("0,2") or GPU UUIDs
 * ("GPU-8c1f...", as CUDA_VISIBLE_DEVICES may hold them); NULL means
 * every GPU on the node and "" means none.  Indexes are NVML's (PCI bus
 * order, as Slurm's SLURM_STEP_GPUS/SLURM_JOB_GPUS give them), not the
 * renumbered ordinals a task sees in CUDA_VISIBLE_DEVICES under cgroup
 * device confinement; UUIDs are unambiguous everywhere.
 * With NULL, a GPU that does not answer is left out; a listed one must
 * answer.  gpu must outlive the step.  Returns a new step, or NULL with
 * errno:
 *   EINVAL   an empty entry, an entry that is neither an index nor a
 *            "GPU-" UUID, or a device listed twice;
 *   ENODEV   no GPU with that index or UUID;
 *   ENOTSUP  a MIG device ("MIG-...");
 *   EIO ...  NVML failed on a listed device;
 *   ENOMEM.
 */
tr_gpu_step_t *tr_gpu_step_create (tr_gpu_t *gpu,
                                   const char *devices,
                                   tr_error_t *error);

/* Free a step.  NULL is a no-op; errno is preserved. */
void tr_gpu_step_destroy (tr_gpu_step_t *step);

/* Take one sample of every device of the step: utilisation, memory used,
 * and the GPU memory held by the step's processes (pids, npids; NVML
 * reports host pids).  A query that fails on one device does not stop
 * the others, and a query a device does not support
 * (NVML_ERROR_NOT_SUPPORTED) is not asked again and is not a failure.
 * Returns the number of devices on which some query failed (0 when all
 * answered), with error describing the first failure; or -1 with
 * errno = EINVAL for a NULL step or pids NULL with npids > 0.
 */
int tr_gpu_step_sample (tr_gpu_step_t *step,
                        const pid_t *pids,
                        size_t npids,
                        tr_error_t *error);

/* The latest sample, for the time series: the mean utilisation over the
 * devices whose utilisation was read, and the sum of memory used over the
 * devices whose memory was read (whole devices, not just the step's
 * processes).  Either output may be NULL.  Returns 0, or -1 with
 * errno = ENODATA (outputs untouched) when no device answered either
 * query in the latest sample.
 */
int tr_gpu_step_current (tr_gpu_step_t *step,
                         double *util_pct_mean,
                         uint64_t *mem_used_bytes);

/* The step's summary.gpu object (doc/record-format.md):
 *   {"source": "nvml", "driver", "devices": [{"index", "uuid", "name",
 *    "mem_total_bytes", "mem_used_peak_bytes", "step_mem_peak_bytes",
 *    "util_mean_pct", "util_max_pct", "samples"}]}
 * in allocation order.  "samples" counts the samples in which the device
 * answered at least one query; a measurement that never succeeded is
 * left out rather than reported as 0 ("driver" likewise).
 * Returns a new reference, or NULL with errno = ENOMEM.
 */
json_t *tr_gpu_step_json (tr_gpu_step_t *step);

#endif /* !TRACER_GPU_H */
