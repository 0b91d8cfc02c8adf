#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='srun --tracer in a real Slurm cluster gives a signed record with exact totals'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

test_expect_success 'start a real cluster (munged, slurmctld, slurmd, tracerd), opt-in mode' '
    cluster_up --plugstack-args "enable=optin"
'

test_expect_success 'srun --tracer: 2 CPU-seconds and 300 MB measured within 5%' '
    srun --tracer --mem=1G sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN cpu=2,mem=300M" \
        >burn.out 2>burn.err &&
    job=$(sed -n "s/^JOB=//p" burn.err) &&
    echo $job >job1 &&
    wait_record $job &&
    test "$(jq length rec.json)" = 1 &&
    test "$(jq -r ".[0].identity.scheduler" rec.json)" = slurm &&
    test "$(jq -r ".[0].identity.step_id" rec.json)" = 0 &&
    test "$(jq -r ".[0].identity.cluster" rec.json)" = tracertest &&
    test "$(jq -r ".[0].summary.cpu.source" rec.json)" = cgroup-v1:cpuacct.usage &&
    test "$(jq -r ".[0].summary.memory.source" rec.json)" = cgroup-v1:memory.max_usage_in_bytes &&
    test "$(jq ".[0].request.mem_bytes" rec.json)" = 1073741824 &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" "$(jq .cpu_s burn.out)" 5 &&
    within "$(jq ".[0].summary.memory.peak_bytes" rec.json)" \
        "$(jq .maxrss_bytes burn.out)" 5
'

test_expect_success 'the record carries the task exit status and is signed' '
    test "$(jq -r ".[0].outcome.state" rec.json)" = completed &&
    test "$(jq ".[0].outcome.tasks[0].exit_code" rec.json)" = 0 &&
    test "$(jq -r ".[0].signature.scheme" rec.json)" = munge-sha256 &&
    $REPORT -j $(cat job1) >view.out &&
    grep -q "signature valid (uid 0" view.out &&
    grep -q "Memory peak:" view.out
'

test_expect_success 'records in the store are owned by the job user, mode 0640' '
    f=$(find "$TRACER_CLUSTER_DIR/store" -name "0.$TRACER_NODENAME.json" -path "*/$(cat job1)/*") &&
    test "$(stat -c %a:%u "$f")" = 640:0
'

test_expect_success 'a failing command is recorded with its exit code' '
    test_expect_code 3 srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; exit 3" 2>f.err &&
    job=$(sed -n "s/^JOB=//p" f.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = failed &&
    test "$(jq ".[0].outcome.exit_code" rec.json)" = 3
'

test_expect_success 'an OOM-killed step is recorded as oom, with the kill counted' '
    test_must_fail srun --tracer --mem=50M sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN mem=200M" 2>o.err &&
    job=$(sed -n "s/^JOB=//p" o.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = oom &&
    test "$(jq ".[0].outcome.signal" rec.json)" = 9 &&
    test "$(jq ".[0].summary.memory.oom_kill_events" rec.json)" -ge 1 &&
    test "$(jq ".[0].summary.memory.limit_bytes" rec.json)" = 52428800
'

test_expect_success 'a multi-task step gives one record with every task' '
    srun --tracer -n2 sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>m.err &&
    job=$(sed -n "s/^JOB=//p" m.err | head -1) &&
    wait_record $job &&
    test "$(jq ".[0].outcome.tasks | length" rec.json)" = 2
'

test_expect_success 'opt-in mode: a job without --tracer produces no record' '
    srun sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>n.err &&
    job=$(sed -n "s/^JOB=//p" n.err) &&
    sleep 3 &&
    test_expect_code 1 $REPORT -j $job 2>err &&
    grep -q "no records" err &&
    ! grep -q "job_id.*\"$job\"" "$TRACER_CLUSTER_DIR/log/tracerd.log"
'

test_expect_success 'sbatch --tracer traces the batch step' '
    sbatch --tracer --parsable --wrap "$BURN cpu=0.5" >sb.out &&
    job=$(cat sb.out) &&
    wait_record $job &&
    test "$(jq -r ".[0].identity.step_id" rec.json)" = batch
'

test_expect_success 'a tampered record is rejected with exit 3' '
    f=$(find "$TRACER_CLUSTER_DIR/store" -name "0.$TRACER_NODENAME.json" -path "*/$(cat job1)/*") &&
    jq ".summary.cpu.total_s = 0.01" "$f" >tampered.json &&
    test_expect_code 3 $REPORT tampered.json 2>err &&
    grep -q "modified after signing" err
'

test_expect_success 'an unsigned record is rejected with exit 4 and a different message' '
    f=$(find "$TRACER_CLUSTER_DIR/store" -name "0.$TRACER_NODENAME.json" -path "*/$(cat job1)/*") &&
    jq ".signature = {\"scheme\": \"none\", \"reason\": \"test\"}" "$f" >unsigned.json &&
    test_expect_code 4 $REPORT unsigned.json 2>err &&
    grep -q "unsigned" err &&
    ! grep -q "modified after signing" err
'

test_expect_success 'stop the cluster; nothing is left running' '
    cluster_down &&
    ! ls -d /sys/fs/cgroup/memory/slurm_$TRACER_NODENAME 2>/dev/null
'
test_done
