/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Unit tests for GPU telemetry, against the NVML stand-in built from
 * tests/fixtures/nvml/fake-nvml.c (its state file format is described
 * there): loading and its failures, device selection by index and UUID,
 * sample statistics, the step's own GPU memory, failing and lost GPUs,
 * process lists that need a bigger buffer or use the 32-byte layout, the
 * fallback to the _v2 process call, and summary.gpu inside a record that
 * tr_record_validate accepts.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <cmocka.h>

#include "libtracer/node/gpu.h"
#include "libtracer/record/record.h"

#define FIXTURE TEST_BUILDDIR "/.libs/libnvidia-ml-fixture.so"
#define FIXTURE_NOV3 TEST_BUILDDIR "/.libs/libnvidia-ml-nov3.so"

#define GIB 1073741824ULL

/* Three GPUs; the tests append processes, failures and changes. */
#define BASE_STATE                                                \
    "driver 535.104.05\n"                                         \
    "device 0 uuid=GPU-1111 name=FakeGPU mem_total=85899345920 "  \
    "mem_used=0 util=0\n"                                         \
    "device 1 uuid=GPU-2222 name=FakeGPU mem_total=85899345920 "  \
    "mem_used=0 util=0\n"                                         \
    "device 2 uuid=GPU-3333 name=OtherGPU mem_total=42949672960 " \
    "mem_used=0 util=0\n"

static char state_path[] = "/tmp/tracer-test-gpu.XXXXXX";

/* The fixture, held open by the test so that its init counter survives
 * tr_gpu_close's dlclose.
 */
static void *fixture_dl;
static int (*fixture_init_count) (void);

/* Replace the fixture's state: BASE_STATE (when base) plus fmt. */
static void state (bool base, const char *fmt, ...)
{
    va_list ap;
    FILE *fp = fopen (state_path, "w");

    assert_non_null (fp);
    if (base)
        assert_true (fputs (BASE_STATE, fp) >= 0);
    va_start (ap, fmt);
    assert_true (vfprintf (fp, fmt, ap) >= 0);
    va_end (ap);
    assert_int_equal (fclose (fp), 0);
}

static int group_setup (void **unused)
{
    int fd = mkstemp (state_path);
    void *sym;

    if (fd < 0)
        return -1;
    close (fd);
    if (setenv ("TRACER_FAKE_NVML", state_path, 1) < 0)
        return -1;
    if (!(fixture_dl = dlopen (FIXTURE, RTLD_NOW | RTLD_LOCAL))) {
        fprintf (stderr, "# %s\n", dlerror ());
        return -1;
    }
    if (!(sym = dlsym (fixture_dl, "fake_nvml_init_count")))
        return -1;
    memcpy (&fixture_init_count, &sym, sizeof (sym));
    return 0;
}

static int group_teardown (void **unused)
{
    if (fixture_dl)
        dlclose (fixture_dl);
    unlink (state_path);
    return 0;
}

static tr_gpu_t *open_fixture (const char *path)
{
    tr_error_t err = { .text = "" };
    tr_gpu_t *gpu = tr_gpu_open (path, &err);

    if (!gpu)
        fail_msg ("tr_gpu_open: %s", err.text);
    return gpu;
}

static tr_gpu_step_t *step_create (tr_gpu_t *gpu, const char *devices)
{
    tr_error_t err = { .text = "" };
    tr_gpu_step_t *step = tr_gpu_step_create (gpu, devices, &err);

    if (!step)
        fail_msg ("tr_gpu_step_create %s: %s", devices ? devices : "(all)",
                  err.text);
    return step;
}

static int sample (tr_gpu_step_t *step, const pid_t *pids, size_t npids)
{
    tr_error_t err = { .text = "" };
    int rc = tr_gpu_step_sample (step, pids, npids, &err);

    if (rc != 0)
        fail_msg ("tr_gpu_step_sample: %d: %s", rc, err.text);
    return rc;
}

/* Device i of the step's summary.gpu; *obj must be json_decref'ed. */
static json_t *device_json (tr_gpu_step_t *step, size_t i, json_t **obj)
{
    json_t *dev;

    *obj = tr_gpu_step_json (step);
    assert_non_null (*obj);
    dev = json_array_get (json_object_get (*obj, "devices"), i);
    assert_non_null (dev);
    return dev;
}

static json_int_t get_int (json_t *obj, const char *key)
{
    json_t *v = json_object_get (obj, key);

    if (!json_is_integer (v))
        fail_msg ("%s: not an integer", key);
    return json_integer_value (v);
}

static double get_real (json_t *obj, const char *key)
{
    json_t *v = json_object_get (obj, key);

    if (!json_is_real (v))
        fail_msg ("%s: not a real", key);
    return json_real_value (v);
}

/* The "index" members of summary.gpu.devices, as "0,2". */
static void indexes (tr_gpu_step_t *step, char *buf, size_t size)
{
    json_t *obj = tr_gpu_step_json (step);
    json_t *dev;
    size_t i, off = 0;

    assert_non_null (obj);
    buf[0] = '\0';
    json_array_foreach (json_object_get (obj, "devices"), i, dev)
    {
        int n = snprintf (buf + off, size - off, "%s%lld", i ? "," : "",
                          (long long)get_int (dev, "index"));
        assert_true (n > 0 && (size_t)n < size - off);
        off += (size_t)n;
    }
    json_decref (obj);
}

static void test_open_absent (void **unused)
{
    static const char *const paths[] = {
        "/nonexistent/libnvidia-ml.so.1",
        "libnvidia-ml-absent.so.1",
    };
    tr_error_t err;
    size_t i;

    for (i = 0; i < sizeof (paths) / sizeof (paths[0]); i++) {
        memset (&err, 0, sizeof (err));
        errno = 0;
        assert_null (tr_gpu_open (paths[i], &err));
        assert_int_equal (errno, ENOENT);
        assert_string_equal (err.text, "");
    }
    /* The environment names the library when the caller does not. */
    assert_int_equal (setenv ("TRACER_NVML_LIB", paths[0], 1), 0);
    errno = 0;
    assert_null (tr_gpu_open (NULL, NULL));
    assert_int_equal (errno, ENOENT);
    assert_int_equal (unsetenv ("TRACER_NVML_LIB"), 0);
}

static void test_open_not_nvml (void **unused)
{
    tr_error_t err = { .text = "" };

    /* Loads, but is no NVML. */
    errno = 0;
    assert_null (tr_gpu_open ("libc.so.6", &err));
    assert_int_equal (errno, ELIBBAD);
    assert_non_null (strstr (err.text, "no symbol nvmlInit_v2"));

    /* Exists, but does not load. */
    memset (&err, 0, sizeof (err));
    errno = 0;
    assert_null (tr_gpu_open (TEST_SRCDIR "/fixtures/nvml/fake-nvml.c", &err));
    assert_int_equal (errno, ELIBACC);
    assert_non_null (strstr (err.text, "fake-nvml.c"));
}

static void test_open_init_fails (void **unused)
{
    static const struct {
        int rc;
        int want_errno;
        const char *want_text;
    } cases[] = {
        { 9, ENODEV, "nvmlInit_v2: Driver Not Loaded" },
        { 4, EACCES, "nvmlInit_v2: Insufficient Permissions" },
        { 999, EIO, "nvmlInit_v2: Unknown Error" },
    };
    tr_error_t err;
    size_t i;

    for (i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        state (true, "fail nvmlInit_v2 rc=%d\n", cases[i].rc);
        memset (&err, 0, sizeof (err));
        errno = 0;
        assert_null (tr_gpu_open (FIXTURE, &err));
        assert_int_equal (errno, cases[i].want_errno);
        assert_non_null (strstr (err.text, cases[i].want_text));
        assert_int_equal (fixture_init_count (), 0);
    }
}

static void test_open_close (void **unused)
{
    tr_gpu_t *gpu;

    state (true, "");
    assert_int_equal (setenv ("TRACER_NVML_LIB", FIXTURE, 1), 0);
    gpu = open_fixture (NULL);
    assert_int_equal (unsetenv ("TRACER_NVML_LIB"), 0);
    assert_int_equal (fixture_init_count (), 1);
    assert_int_equal (tr_gpu_count (gpu), 3);
    assert_string_equal (tr_gpu_driver (gpu), "535.104.05");
    errno = 42;
    tr_gpu_close (gpu);
    assert_int_equal (errno, 42);
    assert_int_equal (fixture_init_count (), 0);
    tr_gpu_close (NULL);
    tr_gpu_step_destroy (NULL);
    assert_int_equal (errno, 42);
}

static void test_select (void **unused)
{
    static const struct {
        const char *devices;
        const char *want; /* indexes, or NULL for an error */
        int want_errno;
    } cases[] = {
        { NULL, "0,1,2", 0 },
        { "0,2", "0,2", 0 },
        { "2,0", "2,0", 0 },
        { "GPU-2222", "1", 0 },
        { "GPU-3333, 0", "2,0", 0 },
        { " 1 ", "1", 0 },
        { "", "", 0 },
        { "3", NULL, ENODEV },
        { "99999999999999999999999", NULL, ENODEV },
        { "GPU-9999", NULL, ENODEV },
        { "GPU-222", NULL, ENODEV },
        { "0,0", NULL, EINVAL },
        { "1,GPU-2222", NULL, EINVAL },
        { ",1", NULL, EINVAL },
        { "0,", NULL, EINVAL },
        { "0,,1", NULL, EINVAL },
        { "-1", NULL, EINVAL },
        { "gpu0", NULL, EINVAL },
        { "MIG-5f6c7d8e", NULL, ENOTSUP },
    };
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    tr_error_t err;
    char buf[64];
    size_t i;

    state (true, "");
    gpu = open_fixture (FIXTURE);
    for (i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        memset (&err, 0, sizeof (err));
        errno = 0;
        step = tr_gpu_step_create (gpu, cases[i].devices, &err);
        if (!cases[i].want) {
            if (step)
                fail_msg ("'%s' accepted", cases[i].devices);
            assert_int_equal (errno, cases[i].want_errno);
            assert_true (strlen (err.text) > 0);
            continue;
        }
        if (!step)
            fail_msg ("'%s': %s", cases[i].devices, err.text);
        indexes (step, buf, sizeof (buf));
        assert_string_equal (buf, cases[i].want);
        tr_gpu_step_destroy (step);
    }
    tr_gpu_close (gpu);
}

/* A lost GPU is left out of "every GPU", but fails an explicit list. */
static void test_select_lost (void **unused)
{
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    tr_error_t err = { .text = "" };
    char buf[64];

    state (true, "");
    gpu = open_fixture (FIXTURE);
    state (true, "fail * device=1 rc=15\n");
    step = step_create (gpu, NULL);
    indexes (step, buf, sizeof (buf));
    assert_string_equal (buf, "0,2");
    tr_gpu_step_destroy (step);

    errno = 0;
    assert_null (tr_gpu_step_create (gpu, "1", &err));
    assert_int_equal (errno, EIO);
    assert_string_equal (err.text, "GPU 1: nvmlDeviceGetHandleByIndex_v2: GPU "
                                   "is lost");

    errno = 0;
    assert_null (tr_gpu_step_create (gpu, "GPU-2222", &err));
    assert_int_equal (errno, ENODEV);
    tr_gpu_close (gpu);
}

static void test_samples (void **unused)
{
    static const struct {
        unsigned int util;
        unsigned long long mem;
    } samples[] = {
        { 10, 1 * GIB },
        { 50, 3 * GIB },
        { 30, 2 * GIB },
    };
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    json_t *obj, *dev;
    double util;
    uint64_t mem;
    size_t i;

    state (true, "");
    gpu = open_fixture (FIXTURE);
    step = step_create (gpu, "1");

    /* Nothing measured yet: no numbers rather than zeros. */
    errno = 0;
    assert_int_equal (tr_gpu_step_current (step, &util, &mem), -1);
    assert_int_equal (errno, ENODATA);
    dev = device_json (step, 0, &obj);
    assert_int_equal (get_int (dev, "index"), 1);
    assert_string_equal (json_string_value (json_object_get (dev, "uuid")),
                         "GPU-2222");
    assert_string_equal (json_string_value (json_object_get (dev, "name")),
                         "FakeGPU");
    assert_int_equal (get_int (dev, "mem_total_bytes"), 85899345920LL);
    assert_int_equal (get_int (dev, "samples"), 0);
    assert_null (json_object_get (dev, "util_mean_pct"));
    assert_null (json_object_get (dev, "mem_used_peak_bytes"));
    json_decref (obj);

    for (i = 0; i < sizeof (samples) / sizeof (samples[0]); i++) {
        state (true,
               "device 1 uuid=GPU-2222 name=FakeGPU mem_total=85899345920 "
               "mem_used=%llu util=%u\n",
               samples[i].mem, samples[i].util);
        sample (step, NULL, 0);
        assert_int_equal (tr_gpu_step_current (step, &util, &mem), 0);
        assert_true (util == (double)samples[i].util);
        assert_true (mem == samples[i].mem);
    }
    dev = device_json (step, 0, &obj);
    assert_int_equal (get_int (dev, "samples"), 3);
    assert_true (get_real (dev, "util_mean_pct") == 30.0);
    assert_true (get_real (dev, "util_max_pct") == 50.0);
    assert_int_equal (get_int (dev, "mem_used_peak_bytes"), 3 * GIB);
    json_decref (obj);
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

/* The time-series view of a step with several GPUs, and NULL outputs. */
static void test_current_devices (void **unused)
{
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    double util;
    uint64_t mem;

    state (true, "");
    gpu = open_fixture (FIXTURE);
    step = step_create (gpu, "0,2");
    state (false,
           "device 0 uuid=GPU-1111 mem_total=100 mem_used=%llu util=20\n"
           "device 2 uuid=GPU-3333 mem_total=100 mem_used=%llu util=70\n",
           2 * GIB, 5 * GIB);
    sample (step, NULL, 0);
    assert_int_equal (tr_gpu_step_current (step, &util, &mem), 0);
    assert_true (util == 45.0);
    assert_true (mem == 7 * GIB);
    assert_int_equal (tr_gpu_step_current (step, NULL, NULL), 0);
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

static void test_step_memory (void **unused)
{
    static const pid_t pids[] = { 100, 200, 300 };
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    json_t *obj, *dev;

    state (true, "");
    gpu = open_fixture (FIXTURE);
    step = step_create (gpu, "0,1,2");

    /* 150 and 400 belong to someone else; 300's size is unknown. */
    state (true,
           "process 0 pid=100 used=%llu\n"
           "process 0 pid=150 used=%llu\n"
           "process 0 pid=200 used=%llu\n"
           "process 1 pid=300 used=18446744073709551615\n"
           "process 1 pid=400 used=%llu\n",
           1 * GIB, 8 * GIB, 2 * GIB, 1 * GIB);
    sample (step, pids, 3);
    /* 200 has exited: the peak stays. */
    state (true,
           "process 0 pid=100 used=%llu\n"
           "process 0 pid=150 used=%llu\n",
           1 * GIB, 8 * GIB);
    sample (step, pids, 3);

    dev = device_json (step, 0, &obj);
    assert_int_equal (get_int (dev, "step_mem_peak_bytes"), 3 * GIB);
    dev = json_array_get (json_object_get (obj, "devices"), 1);
    assert_int_equal (get_int (dev, "step_mem_peak_bytes"), 0);
    dev = json_array_get (json_object_get (obj, "devices"), 2);
    assert_int_equal (get_int (dev, "step_mem_peak_bytes"), 0);
    json_decref (obj);

    /* Bad arguments. */
    errno = 0;
    assert_int_equal (tr_gpu_step_sample (step, NULL, 2, NULL), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (tr_gpu_step_sample (NULL, pids, 3, NULL), -1);
    assert_int_equal (errno, EINVAL);
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

/* One GPU failing, or lost, does not stop the others. */
static void test_failing_gpu (void **unused)
{
    static const pid_t pids[] = { 100 };
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    tr_error_t err = { .text = "" };
    json_t *obj, *dev;
    double util;
    uint64_t mem;

    state (true, "");
    gpu = open_fixture (FIXTURE);
    step = step_create (gpu, NULL);

    state (false, "device 0 uuid=GPU-1111 mem_total=100 mem_used=10 util=40\n"
                  "device 1 uuid=GPU-2222 mem_total=100 mem_used=20 util=50\n"
                  "device 2 uuid=GPU-3333 mem_total=100 mem_used=30 util=60\n"
                  "process 2 pid=100 used=7\n"
                  "fail * device=1 rc=15\n");
    assert_int_equal (tr_gpu_step_sample (step, pids, 1, &err), 1);
    assert_string_equal (err.text, "GPU 1 (GPU-2222): "
                                   "nvmlDeviceGetUtilizationRates:"
                                   " GPU is lost");
    assert_int_equal (tr_gpu_step_current (step, &util, &mem), 0);
    assert_true (util == 50.0);
    assert_true (mem == 40);

    /* Memory fails on 0, which still reports utilisation. */
    state (false, "device 0 uuid=GPU-1111 mem_total=100 mem_used=90 util=80\n"
                  "device 1 uuid=GPU-2222 mem_total=100 mem_used=20 util=50\n"
                  "device 2 uuid=GPU-3333 mem_total=100 mem_used=30 util=60\n"
                  "fail nvmlDeviceGetMemoryInfo device=0 rc=999\n");
    memset (&err, 0, sizeof (err));
    assert_int_equal (tr_gpu_step_sample (step, pids, 1, &err), 1);
    assert_string_equal (err.text, "GPU 0 (GPU-1111): nvmlDeviceGetMemoryInfo:"
                                   " Unknown Error");

    dev = device_json (step, 0, &obj);
    assert_int_equal (get_int (dev, "samples"), 2);
    assert_true (get_real (dev, "util_mean_pct") == 60.0);
    assert_int_equal (get_int (dev, "mem_used_peak_bytes"), 10);
    dev = json_array_get (json_object_get (obj, "devices"), 1);
    assert_int_equal (get_int (dev, "samples"), 1);
    assert_true (get_real (dev, "util_max_pct") == 50.0);
    dev = json_array_get (json_object_get (obj, "devices"), 2);
    assert_int_equal (get_int (dev, "samples"), 2);
    assert_int_equal (get_int (dev, "step_mem_peak_bytes"), 7);
    json_decref (obj);

    /* Two failing: both counted, the first one described. */
    state (true, "fail * device=1 rc=15\n"
                 "fail nvmlDeviceGetMemoryInfo device=2 rc=999\n");
    memset (&err, 0, sizeof (err));
    assert_int_equal (tr_gpu_step_sample (step, pids, 1, &err), 2);
    assert_string_equal (err.text, "GPU 1 (GPU-2222): "
                                   "nvmlDeviceGetUtilizationRates:"
                                   " GPU is lost");
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

/* Unsupported queries, and a forbidden process list, are switched off
 * rather than failing every sample.
 */
static void test_not_supported (void **unused)
{
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    json_t *obj, *dev;

    state (true, "");
    gpu = open_fixture (FIXTURE);
    step = step_create (gpu, "0");
    state (true, "fail nvmlDeviceGetUtilizationRates rc=3\n"
                 "fail nvmlDeviceGetComputeRunningProcesses_v3 rc=4\n");
    sample (step, NULL, 0);
    state (true, "");
    sample (step, NULL, 0);
    dev = device_json (step, 0, &obj);
    assert_int_equal (get_int (dev, "samples"), 2);
    assert_null (json_object_get (dev, "util_mean_pct"));
    assert_null (json_object_get (dev, "util_max_pct"));
    assert_null (json_object_get (dev, "step_mem_peak_bytes"));
    assert_int_equal (get_int (dev, "mem_used_peak_bytes"), 0);
    json_decref (obj);
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

/* Process lists longer than the first buffer, in both entry layouts of
 * _v3, and the bound on the buffer.
 */
static void test_process_lists (void **unused)
{
    static const pid_t pids[] = { 1000, 1099, 1299, 5000 };
    static const int strides[] = { 24, 32 };
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    tr_error_t err = { .text = "" };
    json_t *obj, *dev;
    size_t i;

    state (true, "");
    gpu = open_fixture (FIXTURE);
    for (i = 0; i < sizeof (strides) / sizeof (strides[0]); i++) {
        step = step_create (gpu, "0");
        /* Two entries are enough to tell the layouts apart... */
        state (true,
               "v3_stride %d\n"
               "process 0 pid=5000 used=%llu\n"
               "process 0 pid=6000 used=%llu\n",
               strides[i], 2 * GIB, 4 * GIB);
        sample (step, pids, 4);
        dev = device_json (step, 0, &obj);
        assert_int_equal (get_int (dev, "step_mem_peak_bytes"), 2 * GIB);
        json_decref (obj);

        /* ... and 301 need a bigger buffer than the first. */
        state (true,
               "v3_stride %d\n"
               "process 0 pid=1000 used=%llu repeat=300\n"
               "process 0 pid=5000 used=%llu\n",
               strides[i], 1 * GIB, 7 * GIB);
        sample (step, pids, 4);
        dev = device_json (step, 0, &obj);
        assert_int_equal (get_int (dev, "step_mem_peak_bytes"), 10 * GIB);
        json_decref (obj);
        tr_gpu_step_destroy (step);
    }

    /* Past the bound: the process list fails, the rest is sampled. */
    step = step_create (gpu, "0");
    state (true, "process 0 pid=1000 used=1 repeat=5000\n");
    assert_int_equal (tr_gpu_step_sample (step, pids, 4, &err), 1);
    assert_string_equal (err.text, "GPU 0 (GPU-1111): "
                                   "nvmlDeviceGetComputeRunningProcesses_v3:"
                                   " Insufficient Size");
    dev = device_json (step, 0, &obj);
    assert_int_equal (get_int (dev, "samples"), 1);
    assert_null (json_object_get (dev, "step_mem_peak_bytes"));
    json_decref (obj);
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

/* A driver without _v3 is asked through _v2. */
static void test_v2_fallback (void **unused)
{
    static const pid_t pids[] = { 100, 300 };
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    tr_error_t err = { .text = "" };
    json_t *obj, *dev;

    state (true, "");
    gpu = open_fixture (FIXTURE_NOV3);
    step = step_create (gpu, "0");
    state (true,
           "process 0 pid=100 used=%llu\n"
           "process 0 pid=200 used=%llu\n"
           "process 0 pid=300 used=%llu\n",
           1 * GIB, 2 * GIB, 4 * GIB);
    sample (step, pids, 2);
    dev = device_json (step, 0, &obj);
    assert_int_equal (get_int (dev, "step_mem_peak_bytes"), 5 * GIB);
    json_decref (obj);

    /* Failures name the call actually made. */
    state (true, "fail nvmlDeviceGetComputeRunningProcesses_v2 rc=999\n");
    assert_int_equal (tr_gpu_step_sample (step, pids, 2, &err), 1);
    assert_non_null (strstr (err.text, "_v2: Unknown Error"));
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

/* Set a member of obj, failing the test on error. */
static void set (json_t *obj, const char *key, json_t *value)
{
    assert_non_null (value);
    assert_int_equal (json_object_set_new (obj, key, value), 0);
}

/* The smallest record tr_record_validate accepts. */
static json_t *make_record (void)
{
    json_t *rec = tr_record_create ("final");

    assert_non_null (rec);
    set (rec, "identity",
         json_pack ("{s:s, s:s, s:s, s:s, s:s, s:I}", "scheduler", "slurm",
                    "cluster", "hpc1", "job_id", "4242", "step_id", "0", "node",
                    "node-01", "uid", (json_int_t)1000));
    set (rec, "host", json_pack ("{s:s}", "hostname", "node-01"));
    set (rec, "cgroup", json_pack ("{s:s}", "attach", "cgroup"));
    set (rec, "time",
         json_pack ("{s:I, s:I}", "start_unix_ms", (json_int_t)1767225600000LL,
                    "end_unix_ms", (json_int_t)1767225700000LL));
    set (rec, "summary",
         json_pack ("{s:i, s:{s:f, s:f, s:f, s:s, s:b},"
                    " s:{s:I, s:s, s:b, s:s}}",
                    "samples", 2, "cpu", "user_s", 1.0, "system_s", 0.5,
                    "total_s", 1.5, "source", "cgroup-v1:cpuacct.usage",
                    "exact", 1, "memory", "peak_bytes", (json_int_t)4096,
                    "source", "cgroup-v1:memory.max_usage_in_bytes", "exact", 1,
                    "definition", "cgroup-charged"));
    set (rec, "series",
         json_pack ("{s:f, s:[], s:{}}", "interval_s", 5.0, "t_s", "metrics"));
    set (rec, "collector",
         json_pack ("{s:s, s:s}", "name", "tracerd", "version", "0.1.0"));
    return rec;
}

/* summary.gpu has exactly the schema's members and types, and a record
 * carrying it validates.
 */
static void test_json_record (void **unused)
{
    static const char *const device_keys[] = {
        "index",
        "uuid",
        "name",
        "mem_total_bytes",
        "mem_used_peak_bytes",
        "step_mem_peak_bytes",
        "util_mean_pct",
        "util_max_pct",
        "samples",
    };
    static const pid_t pids[] = { 100 };
    tr_gpu_t *gpu;
    tr_gpu_step_t *step;
    tr_error_t err = { .text = "" };
    json_t *obj, *dev, *rec;
    size_t i;

    state (true, "device 2 uuid=GPU-3333 name=Fake\x01GPU "
                 "mem_total=42949672960 "
                 "mem_used=1024 util=101\n"
                 "process 2 pid=100 used=512\n");
    gpu = open_fixture (FIXTURE);
    step = step_create (gpu, "GPU-3333,GPU-1111");
    sample (step, pids, 1);

    obj = tr_gpu_step_json (step);
    assert_non_null (obj);
    assert_int_equal (json_object_size (obj), 3);
    assert_string_equal (json_string_value (json_object_get (obj, "source")),
                         "nvml");
    assert_string_equal (json_string_value (json_object_get (obj, "driver")),
                         "535.104.05");
    assert_int_equal (json_array_size (json_object_get (obj, "devices")), 2);
    dev = json_array_get (json_object_get (obj, "devices"), 0);
    assert_int_equal (json_object_size (dev),
                      sizeof (device_keys) / sizeof (device_keys[0]));
    for (i = 0; i < sizeof (device_keys) / sizeof (device_keys[0]); i++)
        assert_non_null (json_object_get (dev, device_keys[i]));
    /* Driver strings are made printable; percentages stay percentages. */
    assert_string_equal (json_string_value (json_object_get (dev, "name")),
                         "Fake?GPU");
    assert_true (get_real (dev, "util_max_pct") == 100.0);

    rec = make_record ();
    assert_int_equal (tr_record_validate (rec, &err), 0);
    set (json_object_get (rec, "summary"), "gpu", obj);
    if (tr_record_validate (rec, &err) < 0)
        fail_msg ("tr_record_validate: %s", err.text);
    json_decref (rec);
    tr_gpu_step_destroy (step);
    tr_gpu_close (gpu);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_open_absent),
        cmocka_unit_test (test_open_not_nvml),
        cmocka_unit_test (test_open_init_fails),
        cmocka_unit_test (test_open_close),
        cmocka_unit_test (test_select),
        cmocka_unit_test (test_select_lost),
        cmocka_unit_test (test_samples),
        cmocka_unit_test (test_current_devices),
        cmocka_unit_test (test_step_memory),
        cmocka_unit_test (test_failing_gpu),
        cmocka_unit_test (test_not_supported),
        cmocka_unit_test (test_process_lists),
        cmocka_unit_test (test_v2_fallback),
        cmocka_unit_test (test_json_record),
    };

    return cmocka_run_group_tests (tests, group_setup, group_teardown);
}
