#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracerd killed and restarted mid-step loses no totals'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
BURN=$B/tests/burn
REPORT=$B/analysis/tracer-report
NOTIFY=$B/tests/notify

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

NVML=$B/libtracer/node/.libs/libnvidia-ml-fixture.so
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

# secs FILE CMD...: run CMD, write its wall time in seconds to FILE,
# and fail as it does.
secs ()
{
    _s_out=$1 && shift &&
    _s0=$(date +%s.%N) &&
    "$@" &&
    awk -v a="$_s0" -v b="$(date +%s.%N)" \
        "BEGIN { printf \"%.2f\\n\", b - a }" >"$_s_out"
}

# The plugin's timeout: the default of plugstack.conf (1 s); 16 tasks on
# the 2 CPUs of the test node (-O: more tasks than CPUs).
TMO=1
test_expect_success 'baseline: 16-task steps with tracerd answering' '
    secs base-b.s srun -O -n16 --tracer sleep 1 &&
    secs base-a.s srun -O -n16 --tracer sh -c "echo up; sleep 4" >/dev/null
'

# A step started with tracerd answering (A) ends while tracerd is
# stopped, and then one (B) starts and ends while it is still stopped.  Each adds at
# most 2 x the plugin timeout (one wait at the start, at most two at the
# end: a task exit, then the final reading), however many tasks; the
# bound allows 1 s of scheduling noise over it.  Before, every task
# waited: 16 s at the start, 16 s at the end.
test_expect_success 'tracerd stopped 30 s during 16-task steps: each adds at most 2 x the plugin timeout' '
    pid=$(cat "$TRACER_CLUSTER_DIR/run/tracerd.pid") &&
    test_when_finished "kill -CONT $pid" &&
    { secs a.s srun -O -n16 --tracer sh -c \
          "echo JOB=\$SLURM_JOB_ID >&2; echo up; sleep 4" >a.out 2>a.err & } &&
    wait_for "test \$(grep -c ^up a.out) -ge 16" 30 &&
    kill -STOP $pid &&
    stopped=$(date +%s) &&
    wait_for "test -s a.s" 60 &&
    secs b.s srun -O -n16 --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; sleep 1" \
        2>b.err &&
    left=$((stopped + 30 - $(date +%s))) &&
    if test $left -gt 0; then sleep $left; fi &&
    kill -CONT $pid &&
    sed -n "s/^JOB=//p" a.err | head -1 >a.job &&
    sed -n "s/^JOB=//p" b.err | head -1 >b.job &&
    for x in a b; do
        added=$(awk -v a="$(cat $x.s)" -v b="$(cat base-$x.s)" \
            "BEGIN { print a - b }") &&
        echo "step $x: $(cat $x.s) s, $(cat base-$x.s) s without the stop: +$added s" &&
        awk -v d="$added" -v t=$TMO "BEGIN { exit !(d <= 2 * t + 1) }" || return 1
    done
'

test_expect_success 'after SIGCONT: no bogus record of either step' '
    log=$TRACER_CLUSTER_DIR/log/tracerd.log &&
    a=$(cat a.job) && b=$(cat b.job) &&
    wait_log "$log" "step_start for .*/$b/0/.* refused: sent .* after its caller" &&
    wait_record $a &&
    test "$(jq ".[0].outcome.complete" rec.json)" = false &&
    jq -r ".[0].outcome.reason" rec.json | grep -Eq "late|end notification" &&
    ! grep -q "step .*/$b/0/.* started" "$log" &&
    ! ls "$TRACER_CLUSTER_DIR/run/tracer/steps" | grep -q "@$b@" &&
    test_expect_code 1 $REPORT -j $b 2>/dev/null
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

# Idle connections of an unprivileged job starter must not starve
# root's requests: before, tracerd read each connection in turn with a
# 1 s timeout, so 200 idle ones held it for minutes.
sock=$(mktemp -d /tmp/tr-idle.XXXXXX) && chmod 755 "$sock"
tr_atexit 'rm -rf "'"$sock"'"; test -f tracerd.pid && kill "$(cat tracerd.pid)" 2>/dev/null; test -f idle.pid && kill "$(cat idle.pid)" 2>/dev/null; test -f kept.pid && kill "$(cat kept.pid)" 2>/dev/null; :'
test_expect_success 'job_starters on: 200 idle connections of tracertest' '
    id tracertest &&
    private_conf "$sock" <<-EOF &&
	daemon.job_starters: true
	EOF
    private_tracerd_start &&
    { runuser -u tracertest -- python3 -c "
import socket, sys, time
held = []
for i in range(200):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except OSError:
        pass
    held.append(s)
print(len(held), flush=True)
time.sleep(60)
" "$sock/tracerd.sock" >idle.out 2>idle.err & echo $! >idle.pid; } &&
    wait_for "test -s idle.out" 20
'

test_expect_success 'root is still answered: ping and a step start' '
    $NOTIFY "$sock/tracerd.sock" "{\"op\":\"ping\"}" &&
    { sleep 600 & echo $! >kept.pid; } &&
    $NOTIFY "$sock/tracerd.sock" "{\"op\":\"step_start\",
        \"identity\":{\"scheduler\":\"pbs\",\"job_id\":\"idle.1\",
          \"step_id\":\"batch\",\"node\":\"$(hostname)\",\"uid\":0,
          \"user\":\"root\"},
        \"task_id\":0, \"pid\":$(cat kept.pid), \"interval_s\":1,
        \"attach\":{\"tree\":true}}" &&
    kill $(cat idle.pid)
'

# What tracerd knew of a step (seen alive, ...) is saved with its state
# and kept by the next tracerd; before, a resumed step was "never seen"
# and, had it then vanished unnoticed, was recorded as never found.
test_expect_success 'a resumed step keeps what was seen' '
    f=$(ls st/steps/*idle.1*.json) &&
    jq -e ".daemon.seen == true" "$f" &&
    kill -KILL $(cat tracerd.pid) &&
    wait_for "! tr_pid_running $(cat tracerd.pid)" 10 &&
    private_tracerd_start &&
    wait_log tracerd.log "step .*idle.1.* resumed" &&
    test_when_finished "kill $(cat kept.pid)" &&
    kill -TERM $(cat tracerd.pid) &&
    wait_for "! tr_pid_running $(cat tracerd.pid)" 20 &&
    jq -e ".daemon.seen == true" "$f"
'
test_done
