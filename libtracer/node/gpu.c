/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * GPU telemetry through NVIDIA's NVML.  libnvidia-ml.so.1 comes with the
 * driver, not with the toolkit, so it is dlopen()ed at run time and the
 * few declarations used are copied below: tracer builds and runs on nodes
 * without CUDA, and a node without the library has no GPUs.  NVML's
 * device handles stay valid until nvmlShutdown; its init is reference
 * counted, so several tr_gpu_open calls in one process are fine.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "gpu.h"

/* The NVML ABI, as declared by nvml.h (NVML_API_VERSION 12, checked
 * against the CUDA 12.2 header; these parts have been stable since the
 * 11.x headers).  Functions used, with the versioned symbol each one is:
 *   nvmlInit_v2, nvmlShutdown, nvmlErrorString,
 *   nvmlSystemGetDriverVersion, nvmlDeviceGetCount_v2,
 *   nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID, nvmlDeviceGetName,
 *   nvmlDeviceGetMemoryInfo (nvmlMemory_t, v1),
 *   nvmlDeviceGetUtilizationRates,
 *   nvmlDeviceGetComputeRunningProcesses_v3, falling back to _v2 (both
 *   optional: without them the step's own GPU memory is not reported).
 * nvmlDevice_t is an opaque pointer and nvmlReturn_t an enum (int).
 */
typedef struct nvml_device *nvml_device_t;
typedef int nvml_return_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_UNKNOWN = 999,
};

/* NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE,
 * NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE.
 */
#define NVML_UUID_SIZE 96
#define NVML_NAME_SIZE 96
#define NVML_DRIVER_SIZE 80

/* usedGpuMemory when the driver cannot say (NVML_VALUE_NOT_AVAILABLE). */
#define NVML_MEM_NOT_AVAILABLE ULLONG_MAX

struct nvml_memory { /* nvmlMemory_t */
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct nvml_utilization { /* nvmlUtilization_t */
    unsigned int gpu;
    unsigned int memory;
};

/* nvmlProcessInfo_v2_t, which _v2 always takes.  _v3 takes
 * nvmlProcessInfo_t, and which layout that is depends on the driver,
 * not on the header: R535 drivers write 32-byte entries (this plus
 * usedGpuCcProtectedMemory) where the 12.2 header says 24.  Only pid and
 * usedGpuMemory are read, which both layouts share, and the stride is
 * measured on every call (see proc_stride).
 */
struct nvml_process_info {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};

#define PROC_STRIDE_V2 24
#define PROC_STRIDE_V3 32

_Static_assert(sizeof (struct nvml_process_info) == PROC_STRIDE_V2,
               "nvmlProcessInfo_v2_t is 24 bytes");
_Static_assert(sizeof (void *) == sizeof (void (*) (void)),
               "dlsym results are stored into function pointers");

/* Process lists start at this many entries and grow on
 * NVML_ERROR_INSUFFICIENT_SIZE, at most to PROC_MAX (128 KiB): a GPU
 * hosts a few dozen compute processes at most, even under MPS.
 */
#define PROC_INITIAL 32
#define PROC_MAX 4096
#define PROC_TRIES 4

/* Byte the process buffer is filled with before each call. */
#define PROC_SENTINEL 0xa5

/* More devices than any node has; bounds what a broken library can make
 * us allocate.
 */
#define GPU_MAX_DEVICES 256

struct nvml_api {
    nvml_return_t (*init) (void);
    nvml_return_t (*shutdown) (void);
    const char *(*error_string) (nvml_return_t);
    nvml_return_t (*driver_version) (char *, unsigned int);
    nvml_return_t (*device_count) (unsigned int *);
    nvml_return_t (*handle_by_index) (unsigned int, nvml_device_t *);
    nvml_return_t (*uuid) (nvml_device_t, char *, unsigned int);
    nvml_return_t (*name) (nvml_device_t, char *, unsigned int);
    nvml_return_t (*memory_info) (nvml_device_t, struct nvml_memory *);
    nvml_return_t (*utilization) (nvml_device_t, struct nvml_utilization *);
    nvml_return_t (*processes) (nvml_device_t, unsigned int *, void *);
};

static const struct {
    const char *symbol;
    size_t offset;
} required_symbols[] = {
    { "nvmlInit_v2", offsetof (struct nvml_api, init) },
    { "nvmlShutdown", offsetof (struct nvml_api, shutdown) },
    { "nvmlErrorString", offsetof (struct nvml_api, error_string) },
    { "nvmlSystemGetDriverVersion",
      offsetof (struct nvml_api, driver_version) },
    { "nvmlDeviceGetCount_v2", offsetof (struct nvml_api, device_count) },
    { "nvmlDeviceGetHandleByIndex_v2",
      offsetof (struct nvml_api, handle_by_index) },
    { "nvmlDeviceGetUUID", offsetof (struct nvml_api, uuid) },
    { "nvmlDeviceGetName", offsetof (struct nvml_api, name) },
    { "nvmlDeviceGetMemoryInfo", offsetof (struct nvml_api, memory_info) },
    { "nvmlDeviceGetUtilizationRates",
      offsetof (struct nvml_api, utilization) },
};

/* Newest first. */
static const char *const process_symbols[] = {
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetComputeRunningProcesses_v2",
};

struct tr_gpu {
    void *dl;
    struct nvml_api api;
    const char *processes_symbol; /* NULL: no process list */
    char driver[NVML_DRIVER_SIZE];
};

struct gpu_dev {
    unsigned int index;
    nvml_device_t handle;
    char uuid[NVML_UUID_SIZE];
    char name[NVML_NAME_SIZE];

    /* Queries the device refused as unsupported are not asked again. */
    bool no_util;
    bool no_mem;
    bool no_procs;

    bool have_total;
    bool have_mem;
    bool have_procs;
    uint64_t mem_total;
    uint64_t mem_used_peak;
    uint64_t step_mem_peak;
    uint64_t util_n;
    double util_sum;
    unsigned int util_max;
    uint64_t samples;

    /* The latest sample. */
    bool cur_util_ok;
    bool cur_mem_ok;
    unsigned int cur_util;
    uint64_t cur_mem;
};

struct tr_gpu_step {
    tr_gpu_t *gpu;
    struct gpu_dev *devs;
    size_t ndevs;
    unsigned char *pbuf; /* process list, PROC_STRIDE_V3 bytes an entry */
    unsigned int pcap;   /* entries pbuf holds */
};

static int nvml_errno (nvml_return_t rc)
{
    switch (rc) {
    case NVML_ERROR_INVALID_ARGUMENT:
        return EINVAL;
    case NVML_ERROR_NOT_SUPPORTED:
        return ENOTSUP;
    case NVML_ERROR_NO_PERMISSION:
        return EACCES;
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return ENODEV;
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return ENOBUFS;
    case NVML_ERROR_TIMEOUT:
        return ETIMEDOUT;
    case NVML_ERROR_MEMORY:
        return ENOMEM;
    default:
        return EIO;
    }
}

/* nvmlErrorString, which may not know a code from a newer driver. */
static const char *nvml_str (tr_gpu_t *gpu, nvml_return_t rc)
{
    const char *s = gpu->api.error_string (rc);

    return s ? s : "unknown NVML error";
}

/* Strings from the driver go into JSON: keep them printable ASCII, so
 * that a garbled name can never make the record unencodable.
 */
static void sanitize (char *s, size_t size)
{
    s[size - 1] = '\0';
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            *s = '?';
    }
}

/* glibc reports a library missing from the search path as
 * "NAME: cannot open shared object file: ...", and a missing dependency
 * of a library that was found the same way but under the dependency's
 * name; only the former means "no NVML here".
 */
static bool library_absent (const char *path, const char *msg)
{
    size_t n = strlen (path);

    if (strchr (path, '/'))
        return access (path, F_OK) < 0 && errno == ENOENT;
    return msg && strncmp (msg, path, n) == 0 && msg[n] == ':'
           && strstr (msg + n, "cannot open shared object file");
}

tr_gpu_t *tr_gpu_open (const char *libpath, tr_error_t *error)
{
    tr_gpu_t *gpu;
    const char *path = libpath;
    const char *msg;
    nvml_return_t rc;
    size_t i;
    int e;

    if (!path) {
        /* secure_getenv: should a front-end ever run set-id, the invoking
         * user must not choose the library it loads.
         */
        path = secure_getenv ("TRACER_NVML_LIB");
        if (!path || !*path)
            path = "libnvidia-ml.so.1";
    }
    if (!(gpu = calloc (1, sizeof (*gpu)))) {
        tr_errprintf (error, "out of memory");
        return NULL;
    }
    dlerror ();
    if (!(gpu->dl = dlopen (path, RTLD_NOW | RTLD_LOCAL))) {
        msg = dlerror ();
        if (library_absent (path, msg)) {
            free (gpu);
            errno = ENOENT;
            return NULL;
        }
        tr_errprintf (error, "%s", msg ? msg : path);
        e = ELIBACC;
        goto error;
    }
    for (i = 0; i < sizeof (required_symbols) / sizeof (required_symbols[0]);
         i++) {
        void *sym = dlsym (gpu->dl, required_symbols[i].symbol);

        if (!sym) {
            tr_errprintf (error, "%s: no symbol %s", path,
                          required_symbols[i].symbol);
            e = ELIBBAD;
            goto error;
        }
        /* POSIX guarantees a dlsym result converts to a function
         * pointer; memcpy keeps ISO C's object/function split quiet.
         */
        memcpy ((char *)&gpu->api + required_symbols[i].offset, &sym,
                sizeof (sym));
    }
    for (i = 0; i < sizeof (process_symbols) / sizeof (process_symbols[0]);
         i++) {
        void *sym = dlsym (gpu->dl, process_symbols[i]);

        if (sym) {
            memcpy (&gpu->api.processes, &sym, sizeof (sym));
            gpu->processes_symbol = process_symbols[i];
            break;
        }
    }
    if ((rc = gpu->api.init ()) != NVML_SUCCESS) {
        tr_errprintf (error, "%s: nvmlInit_v2: %s", path, nvml_str (gpu, rc));
        e = nvml_errno (rc);
        goto error;
    }
    if (gpu->api.driver_version (gpu->driver, sizeof (gpu->driver))
        == NVML_SUCCESS)
        sanitize (gpu->driver, sizeof (gpu->driver));
    else
        gpu->driver[0] = '\0';
    return gpu;
error:
    if (gpu->dl)
        dlclose (gpu->dl);
    free (gpu);
    errno = e;
    return NULL;
}

void tr_gpu_close (tr_gpu_t *gpu)
{
    int saved = errno;

    if (gpu) {
        gpu->api.shutdown ();
        dlclose (gpu->dl);
        free (gpu);
    }
    errno = saved;
}

/* The device count, bounded; 0 or -1 with errno. */
static int device_count (tr_gpu_t *gpu, unsigned int *count, tr_error_t *error)
{
    nvml_return_t rc = gpu->api.device_count (count);

    if (rc != NVML_SUCCESS) {
        tr_errprintf (error, "nvmlDeviceGetCount_v2: %s", nvml_str (gpu, rc));
        errno = nvml_errno (rc);
        return -1;
    }
    if (*count > GPU_MAX_DEVICES)
        *count = GPU_MAX_DEVICES;
    return 0;
}

int tr_gpu_count (tr_gpu_t *gpu)
{
    unsigned int count;

    if (!gpu) {
        errno = EINVAL;
        return -1;
    }
    if (device_count (gpu, &count, NULL) < 0)
        return -1;
    return (int)count;
}

const char *tr_gpu_driver (tr_gpu_t *gpu)
{
    return gpu ? gpu->driver : "";
}

/* Fill dev for NVML index 'index': handle, UUID, name, total memory.
 * Only the handle and UUID must succeed; a name is cosmetic and the
 * total is read again by every sample.
 */
static int dev_init (tr_gpu_t *gpu,
                     unsigned int index,
                     struct gpu_dev *dev,
                     tr_error_t *error)
{
    struct nvml_memory mem;
    nvml_return_t rc;

    memset (dev, 0, sizeof (*dev));
    dev->index = index;
    if ((rc = gpu->api.handle_by_index (index, &dev->handle)) != NVML_SUCCESS) {
        tr_errprintf (error, "GPU %u: nvmlDeviceGetHandleByIndex_v2: %s", index,
                      nvml_str (gpu, rc));
        errno = nvml_errno (rc);
        return -1;
    }
    if ((rc = gpu->api.uuid (dev->handle, dev->uuid, sizeof (dev->uuid)))
        != NVML_SUCCESS) {
        tr_errprintf (error, "GPU %u: nvmlDeviceGetUUID: %s", index,
                      nvml_str (gpu, rc));
        errno = nvml_errno (rc);
        return -1;
    }
    sanitize (dev->uuid, sizeof (dev->uuid));
    if (gpu->api.name (dev->handle, dev->name, sizeof (dev->name))
        == NVML_SUCCESS)
        sanitize (dev->name, sizeof (dev->name));
    else
        dev->name[0] = '\0';
    if (gpu->api.memory_info (dev->handle, &mem) == NVML_SUCCESS
        && mem.total > 0) {
        dev->mem_total = mem.total;
        dev->have_total = true;
    }
    return 0;
}

static bool all_digits (const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
    }
    return true;
}

/* The NVML index of the device whose UUID is uuid.  Devices that do not
 * answer cannot match.  Returns 0, or -1 with errno = ENODEV.
 */
static int find_uuid (tr_gpu_t *gpu,
                      unsigned int count,
                      const char *uuid,
                      unsigned int *index)
{
    char buf[NVML_UUID_SIZE];
    nvml_device_t handle;
    unsigned int i;

    for (i = 0; i < count; i++) {
        if (gpu->api.handle_by_index (i, &handle) != NVML_SUCCESS
            || gpu->api.uuid (handle, buf, sizeof (buf)) != NVML_SUCCESS)
            continue;
        buf[sizeof (buf) - 1] = '\0';
        if (strcmp (buf, uuid) == 0) {
            *index = i;
            return 0;
        }
    }
    errno = ENODEV;
    return -1;
}

/* Resolve one entry of the device list to an NVML index. */
static int parse_entry (tr_gpu_t *gpu,
                        unsigned int count,
                        const char *entry,
                        unsigned int *index,
                        tr_error_t *error)
{
    unsigned long v;
    char *end;

    if (!*entry) {
        errno = EINVAL;
        return tr_errprintf (error, "empty entry in GPU list");
    }
    if (all_digits (entry)) {
        errno = 0;
        v = strtoul (entry, &end, 10);
        if (errno != 0 || *end != '\0' || v >= count) {
            errno = ENODEV;
            return tr_errprintf (error, "no GPU with index %s (%u on node)",
                                 entry, count);
        }
        *index = (unsigned int)v;
        return 0;
    }
    if (strncmp (entry, "GPU-", 4) == 0) {
        if (find_uuid (gpu, count, entry, index) < 0)
            return tr_errprintf (error, "no GPU with UUID %s", entry);
        return 0;
    }
    if (strncmp (entry, "MIG-", 4) == 0) {
        errno = ENOTSUP;
        return tr_errprintf (error, "%s: MIG devices are not supported", entry);
    }
    errno = EINVAL;
    return tr_errprintf (error, "'%s' is neither a GPU index nor a UUID",
                         entry);
}

/* Add the devices of a comma-separated list to step->devs. */
static int add_listed (tr_gpu_step_t *step,
                       unsigned int count,
                       const char *devices,
                       tr_error_t *error)
{
    char *copy, *entry, *next, *end;
    unsigned int index = 0;
    size_t i;
    int e;

    if (!*devices)
        return 0;
    if (!(copy = strdup (devices))) {
        tr_errprintf (error, "out of memory");
        return -1;
    }
    for (entry = copy; entry; entry = next) {
        if ((next = strchr (entry, ',')))
            *next++ = '\0';
        while (*entry == ' ' || *entry == '\t')
            entry++;
        end = entry + strlen (entry);
        while (end > entry && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (parse_entry (step->gpu, count, entry, &index, error) < 0)
            goto error;
        for (i = 0; i < step->ndevs; i++) {
            if (step->devs[i].index == index) {
                errno = EINVAL;
                tr_errprintf (error, "GPU %s listed twice", entry);
                goto error;
            }
        }
        /* Distinct indexes below count: the array cannot overflow. */
        if (dev_init (step->gpu, index, &step->devs[step->ndevs], error) < 0)
            goto error;
        step->ndevs++;
    }
    free (copy);
    return 0;
error:
    e = errno;
    free (copy);
    errno = e;
    return -1;
}

tr_gpu_step_t *tr_gpu_step_create (tr_gpu_t *gpu,
                                   const char *devices,
                                   tr_error_t *error)
{
    tr_gpu_step_t *step;
    unsigned int count, i;

    if (!gpu) {
        errno = EINVAL;
        tr_errprintf (error, "no NVML handle");
        return NULL;
    }
    if (device_count (gpu, &count, error) < 0)
        return NULL;
    if (!(step = calloc (1, sizeof (*step)))
        || !(step->devs = calloc (count ? count : 1, sizeof (*step->devs)))) {
        free (step);
        tr_errprintf (error, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    step->gpu = gpu;
    if (devices) {
        if (add_listed (step, count, devices, error) < 0) {
            tr_gpu_step_destroy (step);
            return NULL;
        }
    }
    else {
        /* "Every GPU": one that has fallen off the bus is not the step's
         * to report.
         */
        for (i = 0; i < count; i++) {
            if (dev_init (gpu, i, &step->devs[step->ndevs], NULL) == 0)
                step->ndevs++;
        }
    }
    return step;
}

void tr_gpu_step_destroy (tr_gpu_step_t *step)
{
    int saved = errno;

    if (step) {
        free (step->devs);
        free (step->pbuf);
        free (step);
    }
    errno = saved;
}

/* The entry size the driver wrote (see struct nvml_process_info): the
 * buffer was filled with PROC_SENTINEL, and a 32-byte layout writes past
 * 24 * n, into at least the last entry's gpuInstanceId and
 * computeInstanceId, which are small or 0xFFFFFFFF, never 0xa5a5a5a5.
 * A single entry reads the same either way.
 */
static size_t proc_stride (const unsigned char *buf, unsigned int n)
{
    size_t i;

    if (n < 2)
        return PROC_STRIDE_V2;
    for (i = (size_t)n * PROC_STRIDE_V2; i < (size_t)n * PROC_STRIDE_V3; i++) {
        if (buf[i] != PROC_SENTINEL)
            return PROC_STRIDE_V3;
    }
    return PROC_STRIDE_V2;
}

static bool pid_in (unsigned int pid, const pid_t *pids, size_t npids)
{
    size_t i;

    for (i = 0; i < npids; i++) {
        if (pids[i] > 0 && (unsigned int)pids[i] == pid)
            return true;
    }
    return false;
}

/* Grow the process buffer for 'need' entries (more, since the list can
 * grow again before the next call), at most PROC_MAX.
 */
static nvml_return_t proc_grow (tr_gpu_step_t *step, unsigned int need)
{
    unsigned int want;
    unsigned char *p;

    if (need > PROC_MAX || step->pcap >= PROC_MAX)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    want = step->pcap ? step->pcap * 2 : PROC_INITIAL;
    if (need + need / 2 + 8 > want)
        want = need + need / 2 + 8;
    if (want > PROC_MAX)
        want = PROC_MAX;
    if (!(p = realloc (step->pbuf, (size_t)want * PROC_STRIDE_V3)))
        return NVML_ERROR_MEMORY;
    step->pbuf = p;
    step->pcap = want;
    return NVML_SUCCESS;
}

/* Sum the GPU memory that the processes in pids hold on dev. */
static nvml_return_t proc_memory (tr_gpu_step_t *step,
                                  struct gpu_dev *dev,
                                  const pid_t *pids,
                                  size_t npids,
                                  uint64_t *bytes)
{
    struct nvml_process_info info;
    nvml_return_t rc;
    unsigned int n, i;
    size_t stride;
    uint64_t sum = 0;
    int tries;

    if (!step->pbuf && (rc = proc_grow (step, 0)) != NVML_SUCCESS)
        return rc;
    for (tries = 0; tries < PROC_TRIES; tries++) {
        memset (step->pbuf, PROC_SENTINEL, (size_t)step->pcap * PROC_STRIDE_V3);
        n = step->pcap;
        rc = step->gpu->api.processes (dev->handle, &n, step->pbuf);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            if ((rc = proc_grow (step, n)) != NVML_SUCCESS)
                return rc;
            continue;
        }
        if (rc != NVML_SUCCESS)
            return rc;
        /* The driver was given pcap 24-byte entries' worth at least. */
        if (n > step->pcap)
            return NVML_ERROR_UNKNOWN;
        stride = proc_stride (step->pbuf, n);
        for (i = 0; i < n; i++) {
            memcpy (&info, step->pbuf + (size_t)i * stride, sizeof (info));
            if (info.used_gpu_memory == NVML_MEM_NOT_AVAILABLE
                || !pid_in (info.pid, pids, npids))
                continue;
            sum = info.used_gpu_memory > UINT64_MAX - sum
                      ? UINT64_MAX
                      : sum + info.used_gpu_memory;
        }
        *bytes = sum;
        return NVML_SUCCESS;
    }
    return NVML_ERROR_INSUFFICIENT_SIZE;
}

/* A query's outcome: true when it answered.  Unsupported (and, for the
 * process list, forbidden) queries are switched off instead of failing
 * every sample; the first real failure of the call is kept in *first.
 */
static bool check (nvml_return_t rc,
                   bool *off,
                   bool forbidden_is_off,
                   const char *what,
                   nvml_return_t *first_rc,
                   const char **first_what)
{
    if (rc == NVML_SUCCESS)
        return true;
    if (rc == NVML_ERROR_NOT_SUPPORTED
        || (forbidden_is_off && rc == NVML_ERROR_NO_PERMISSION))
        *off = true;
    else if (*first_rc == NVML_SUCCESS) {
        *first_rc = rc;
        *first_what = what;
    }
    return false;
}

/* Sample one device.  Returns NVML_SUCCESS, or the first failure with
 * *what naming the call.
 */
static nvml_return_t sample_dev (tr_gpu_step_t *step,
                                 struct gpu_dev *dev,
                                 const pid_t *pids,
                                 size_t npids,
                                 const char **what)
{
    struct nvml_api *api = &step->gpu->api;
    struct nvml_utilization util;
    struct nvml_memory mem;
    nvml_return_t first = NVML_SUCCESS;
    uint64_t bytes = 0;
    bool answered = false;

    dev->cur_util_ok = false;
    dev->cur_mem_ok = false;
    if (!dev->no_util
        && check (api->utilization (dev->handle, &util), &dev->no_util, false,
                  "nvmlDeviceGetUtilizationRates", &first, what)) {
        /* A percentage; anything above 100 is a driver glitch. */
        dev->cur_util = util.gpu > 100 ? 100 : util.gpu;
        dev->cur_util_ok = true;
        dev->util_sum += dev->cur_util;
        dev->util_n++;
        if (dev->cur_util > dev->util_max)
            dev->util_max = dev->cur_util;
        answered = true;
    }
    /* A lost GPU fails every call, each possibly slowly: stop here. */
    if (first == NVML_ERROR_GPU_IS_LOST)
        return first;
    if (!dev->no_mem
        && check (api->memory_info (dev->handle, &mem), &dev->no_mem, false,
                  "nvmlDeviceGetMemoryInfo", &first, what)) {
        dev->cur_mem = mem.used;
        dev->cur_mem_ok = true;
        if (!dev->have_mem || mem.used > dev->mem_used_peak)
            dev->mem_used_peak = mem.used;
        dev->have_mem = true;
        if (mem.total > 0) {
            dev->mem_total = mem.total;
            dev->have_total = true;
        }
        answered = true;
    }
    if (first == NVML_ERROR_GPU_IS_LOST)
        return first;
    if (api->processes && !dev->no_procs
        && check (proc_memory (step, dev, pids, npids, &bytes), &dev->no_procs,
                  true, step->gpu->processes_symbol, &first, what)) {
        if (!dev->have_procs || bytes > dev->step_mem_peak)
            dev->step_mem_peak = bytes;
        dev->have_procs = true;
        answered = true;
    }
    if (answered)
        dev->samples++;
    return first;
}

int tr_gpu_step_sample (tr_gpu_step_t *step,
                        const pid_t *pids,
                        size_t npids,
                        tr_error_t *error)
{
    nvml_return_t rc;
    const char *what = NULL;
    int failed = 0;
    size_t i;

    if (!step || (!pids && npids > 0)) {
        errno = EINVAL;
        return -1;
    }
    for (i = 0; i < step->ndevs; i++) {
        struct gpu_dev *dev = &step->devs[i];

        if ((rc = sample_dev (step, dev, pids, npids, &what)) == NVML_SUCCESS)
            continue;
        if (failed++ == 0)
            tr_errprintf (error, "GPU %u (%s): %s: %s", dev->index, dev->uuid,
                          what, nvml_str (step->gpu, rc));
    }
    return failed;
}

int tr_gpu_step_current (tr_gpu_step_t *step,
                         double *util_pct_mean,
                         uint64_t *mem_used_bytes)
{
    double util = 0.0;
    uint64_t mem = 0;
    size_t i, nutil = 0, nmem = 0;

    if (!step) {
        errno = EINVAL;
        return -1;
    }
    for (i = 0; i < step->ndevs; i++) {
        const struct gpu_dev *dev = &step->devs[i];

        if (dev->cur_util_ok) {
            util += dev->cur_util;
            nutil++;
        }
        if (dev->cur_mem_ok) {
            mem = dev->cur_mem > UINT64_MAX - mem ? UINT64_MAX
                                                  : mem + dev->cur_mem;
            nmem++;
        }
    }
    if (nutil == 0 && nmem == 0) {
        errno = ENODATA;
        return -1;
    }
    if (util_pct_mean)
        *util_pct_mean = nutil ? util / (double)nutil : 0.0;
    if (mem_used_bytes)
        *mem_used_bytes = mem;
    return 0;
}

/* json_object_set_new that also fails on a NULL value (and, like it,
 * steals the reference either way).
 */
static int set (json_t *obj, const char *key, json_t *value)
{
    if (!value)
        return -1;
    return json_object_set_new (obj, key, value);
}

static json_t *bytes_json (uint64_t v)
{
    return json_integer (v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *dev_json (const struct gpu_dev *dev)
{
    json_t *o = json_object ();

    if (!o || set (o, "index", json_integer (dev->index)) < 0
        || set (o, "uuid", json_string (dev->uuid)) < 0
        || set (o, "name", json_string (dev->name)) < 0
        || (dev->have_total
            && set (o, "mem_total_bytes", bytes_json (dev->mem_total)) < 0)
        || (dev->have_mem
            && set (o, "mem_used_peak_bytes", bytes_json (dev->mem_used_peak))
                   < 0)
        || (dev->have_procs
            && set (o, "step_mem_peak_bytes", bytes_json (dev->step_mem_peak))
                   < 0)
        || (dev->util_n > 0
            && (set (o, "util_mean_pct",
                     json_real (dev->util_sum / (double)dev->util_n))
                    < 0
                || set (o, "util_max_pct", json_real (dev->util_max)) < 0))
        || set (o, "samples", bytes_json (dev->samples)) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

json_t *tr_gpu_step_json (tr_gpu_step_t *step)
{
    json_t *obj, *devs;
    size_t i;

    if (!step) {
        errno = EINVAL;
        return NULL;
    }
    if (!(obj = json_object ()) || set (obj, "source", json_string ("nvml")) < 0
        || (step->gpu->driver[0]
            && set (obj, "driver", json_string (step->gpu->driver)) < 0)
        || !(devs = json_array ()) || set (obj, "devices", devs) < 0)
        goto nomem;
    for (i = 0; i < step->ndevs; i++) {
        if (json_array_append_new (devs, dev_json (&step->devs[i])) < 0)
            goto nomem;
    }
    return obj;
nomem:
    json_decref (obj);
    errno = ENOMEM;
    return NULL;
}
