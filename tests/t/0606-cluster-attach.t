#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracerd attach modes: explicit cgroup, environment, session, tree'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
BURN=$B/tests/burn
NOTIFY=$B/tests/notify
CG=/sys/fs/cgroup

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# start JOB ATTACH [PID]: what a prologue sends; end JOB: an epilogue
# (tests/sharness.d/40-tracerd.sh).
start () { pbs_step_start "$1" "$2" "${3:-0}" 0.2; }
end () { pbs_task_exit "$1"; }
cpu_sum () { jq -s "map(.cpu_s) | add" "$@"; }
burn_tool () { jq ".[0].tools[] | select(.name == \"burn\")" rec.json; }

# Job ids, cgroup and environment names unique to this run, so that
# nothing else on the machine can match them.
T=$$
# PBS's cgroup layout, in every mounted v1 controller that counts
pbs_dir=/pbs_jobs.service/jobid/7.t$T
pbs_cleanup ()
{
    for c in memory cpuacct,cpu cpu,cpuacct cpuacct; do
        [ -d "$CG/$c$pbs_dir" ] && rmdir "$CG/$c$pbs_dir" \
            "$CG/$c/pbs_jobs.service/jobid" "$CG/$c/pbs_jobs.service"
    done
    return 0
}

test_expect_success 'start a real cluster' '
    cluster_up --plugstack-args "enable=optin"
'

test_expect_success 'explicit cgroup (PBS layout): exact CPU and memory' '
    test_when_finished pbs_cleanup &&
    mkdir -p "$CG/memory$pbs_dir" "$CG/cpuacct$pbs_dir" &&
    start 7.t$T "{\"cgroup\":\"$pbs_dir\"}" &&
    sh -c "echo \$\$ >$CG/memory$pbs_dir/cgroup.procs &&
           echo \$\$ >$CG/cpuacct$pbs_dir/cgroup.procs &&
           exec $BURN cpu=1.5,mem=64M" >b7.out &&
    end 7.t$T &&
    wait_record 7.t$T &&
    test "$(jq -r ".[0].identity.scheduler" rec.json)" = pbs &&
    test "$(jq -r ".[0].cgroup.paths.memory" rec.json)" = "$pbs_dir" &&
    jq -r ".[0].summary.cpu.source" rec.json | grep -q cpuacct &&
    test "$(jq ".[0].summary.cpu.exact" rec.json)" = true &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" "$(jq .cpu_s b7.out)" 5 &&
    test "$(jq ".[0].summary.memory.exact" rec.json)" = true &&
    within "$(jq ".[0].summary.memory.peak_bytes" rec.json)" 67108864 10
'

test_expect_success 'environment match follows a process that left its parent' '
    start 8.t$T "{\"env\":\"PBS_JOBID=8.t$T\"}" &&
    env PBS_JOBID=8.t$T sh -c "($BURN cpu=1.5 >o1 &) ; $BURN cpu=1.5 >o2" &&
    wait_for "test -s o1" 20 &&
    PBS_JOBID=other $BURN cpu=0.5 >unrelated.out &&
    end 8.t$T &&
    wait_record 8.t$T &&
    test "$(burn_tool | jq .count)" = 2 &&
    within "$(burn_tool | jq .cpu_s)" "$(cpu_sum o1 o2)" 5
'

test_expect_success 'session match (PBS without cgroups)' '
    setsid sh -c "echo \$\$ >sid; sleep 0.5; $BURN cpu=1 >s1; $BURN cpu=1 >s2" &
    wait_for "test -s sid" 10 &&
    start 9.t$T "{\"session\":$(cat sid)}" &&
    wait_for "test -s s2" 20 &&
    end 9.t$T &&
    wait_record 9.t$T &&
    test "$(burn_tool | jq .count)" = 2 &&
    within "$(burn_tool | jq .cpu_s)" "$(cpu_sum s1 s2)" 5
'

test_expect_success 'process tree from a root pid' '
    sh -c "sleep 0.5; $BURN cpu=1 >t1" &
    start 10.t$T "{\"tree\":true}" $! &&
    wait $! &&
    end 10.t$T &&
    wait_record 10.t$T &&
    test "$(burn_tool | jq .count)" = 1 &&
    within "$(burn_tool | jq .cpu_s)" "$(jq .cpu_s t1)" 5
'

test_expect_success 'bad attach requests are refused with a reason' '
    test_expect_code 1 start 11.t$T "{\"cgroup\":\"/pbs_jobs.service/../x\"}" >r1 &&
    grep -q "not an absolute path" r1 &&
    test_expect_code 1 start 11.t$T "{\"cgroup\":\"/no/such/job\"}" >r2 &&
    grep -q "exists in no mounted hierarchy" r2 &&
    test_expect_code 1 start 11.t$T "{\"env\":\"1BAD\"}" >r3 &&
    grep -q "NAME=VALUE" r3 &&
    test_expect_code 1 start 11.t$T "{\"cgroups\":\"/x\"}" >r4 &&
    grep -q "bad attach" r4 &&
    test_expect_code 1 start 11.t$T "{}" >r5 &&
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"ping\"}"
'

test_expect_success 'a step whose end is never notified is recorded as incomplete' '
    sleep 1 &
    start 12.t$T "{\"tree\":true}" $! &&
    wait $! &&
    wait_for "\"$B/analysis/tracer-report\" -j 12.t$T --json >rec.json 2>/dev/null" 60 &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = incomplete &&
    jq -r ".[0].outcome.reason" rec.json | grep -q "without an end notification"
'

test_expect_success 'no step state is left behind' '
    test -z "$(ls "$TRACER_CLUSTER_DIR/run/tracer/steps")"
'

test_expect_success 'stop the cluster' '
    cluster_down
'
test_done
