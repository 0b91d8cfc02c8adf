#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracerd killed and restarted mid-step loses no totals'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
BURN=$B/tests/burn

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

NVML=$B/tests/.libs/libnvidia-ml-fixture.so
test -f "$NVML" && test_set_prereq NVML

# Two fake GPUs (Slurm gres on fake devices, NVML from the test fixture)
# where the fixture is built.
test_expect_success 'start a real cluster, opt-in mode' '
    gpu_args= &&
    if test_have_prereq NVML; then
        state=$(mktemp /tmp/tracer-nvml.XXXXXX) &&
        tr_atexit "rm -f $state" &&
        printf "driver 535.104.05\ndevice 0 uuid=GPU-1111 name=FakeGPU mem_total=85899345920 mem_used=4294967296 util=63\ndevice 1 uuid=GPU-2222 name=FakeGPU mem_total=85899345920 mem_used=4294967296 util=20\n" \
            >"$state" && chmod 0644 "$state" &&
        gpu_args="--gpus 2 --sampling nvml_library=$NVML --daemon-env TRACER_FAKE_NVML=$state"
    fi &&
    cluster_up --plugstack-args "enable=optin" $gpu_args
'

test_expect_success 'SIGKILL and restart mid-step: CPU total within 5% and complete' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN cpu=3" \
        >burn.out 2>burn.err &
    srun_pid=$! &&
    sleep 1.5 &&
    tracerd_kill &&
    tracerd_start &&
    wait $srun_pid &&
    job=$(sed -n "s/^JOB=//p" burn.err) &&
    wait_record $job &&
    grep -q "step .*/$job/0/.* resumed" "$TRACER_CLUSTER_DIR/log/tracerd.log" &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = completed &&
    test "$(jq ".[0].outcome.complete" rec.json)" = true &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" "$(jq .cpu_s burn.out)" 5
'

test_expect_success 'a step that ends while tracerd is down is recorded as incomplete' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN cpu=1.5" \
        >b2.out 2>b2.err &
    srun_pid=$! &&
    sleep 1 &&
    tracerd_kill &&
    wait $srun_pid &&
    tracerd_start &&
    job=$(sed -n "s/^JOB=//p" b2.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = incomplete &&
    test "$(jq ".[0].outcome.complete" rec.json)" = false &&
    jq -r ".[0].outcome.reason" rec.json | grep -q "while tracerd was not running"
'

test_expect_success 'slurmd restarted mid-job: the job and its record are whole' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN cpu=3" \
        >sd.out 2>sd.err &
    srun_pid=$! &&
    wait_for "grep -q ^JOB= sd.err" 20 &&
    sleep 1 &&
    slurmd_restart &&
    wait $srun_pid &&
    job=$(sed -n "s/^JOB=//p" sd.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = completed &&
    test "$(jq ".[0].outcome.complete" rec.json)" = true &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" "$(jq .cpu_s sd.out)" 5
'

test_have_prereq TRACERTEST &&
    runuser -u tracertest -- test -r "$SLURM_CONF" 2>/dev/null &&
    runuser -u tracertest -- test -w "$TRACER_MUNGE_SOCKET" 2>/dev/null &&
    test_set_prereq HOSTILE

test_expect_success NVML,HOSTILE 'a step without GPUs follows none, whatever SLURM_STEP_GPUS says' '
    runuser -u tracertest -- env SLURM_STEP_GPUS=0,1 SLURM_JOB_GPUS=0,1 \
        srun --tracer --chdir=/tmp sh -c "echo JOB=\$SLURM_JOB_ID >&2; sleep 1" \
        2>g0.err &&
    job=$(sed -n "s/^JOB=//p" g0.err) &&
    wait_record $job &&
    test "$(jq ".[0].request.gpus" rec.json)" = null &&
    test "$(jq ".[0].summary.gpu" rec.json)" = null
'

test_expect_success NVML 'a one-GPU step follows its GPU only, also after tracerd is killed and restarted' '
    srun --tracer --gres=gpu:1 sh -c "echo JOB=\$SLURM_JOB_ID >&2;
        echo GPUS=\$SLURM_STEP_GPUS >&2; sleep 4" 2>g1.err &
    srun_pid=$! &&
    wait_for "grep -qs \"gpus\" \"$TRACER_CLUSTER_DIR\"/run/tracer/steps/*.json" 20 &&
    tracerd_kill &&
    tracerd_start &&
    wait $srun_pid &&
    job=$(sed -n "s/^JOB=//p" g1.err) &&
    gpus=$(sed -n "s/^GPUS=//p" g1.err) &&
    test -n "$gpus" &&
    wait_record $job &&
    grep -q "step .*/$job/0/.* resumed" "$TRACER_CLUSTER_DIR/log/tracerd.log" &&
    test "$(jq -r ".[0].request.gpus" rec.json)" = "$gpus" &&
    test "$(jq ".[0].summary.gpu.devices | length" rec.json)" = 1 &&
    test "$(jq ".[0].summary.gpu.devices[0].index" rec.json)" = "$gpus"
'

test_expect_success 'no step state is left behind' '
    test -z "$(ls "$TRACER_CLUSTER_DIR/run/tracer/steps")"
'

test_expect_success 'stop the cluster' '
    cluster_down
'
test_done
