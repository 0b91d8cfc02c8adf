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

# The cgroup disappears under a running step: the processes move out and
# the directories go (an epilogue that cleaned up early, or a scheduler
# bug).  tracerd must carry on, still write the record, and answer.
pbs_gone=/pbs_jobs.service/jobid/13.t$T
test_expect_success 'a cgroup removed while the step runs: a record, tracerd unharmed' '
    mkdir -p "$CG/memory$pbs_gone" "$CG/cpuacct$pbs_gone" &&
    start 13.t$T "{\"cgroup\":\"$pbs_gone\"}" &&
    sh -c "echo \$\$ >$CG/memory$pbs_gone/cgroup.procs &&
           echo \$\$ >$CG/cpuacct$pbs_gone/cgroup.procs &&
           exec $BURN cpu=5" >b13.out &
    burn=$! &&
    wait_for "grep -qx $burn $CG/cpuacct$pbs_gone/cgroup.procs" 10 &&
    sleep 1.5 &&
    echo $burn >"$CG/memory/cgroup.procs" &&
    echo $burn >"$CG/cpuacct/cgroup.procs" &&
    rmdir "$CG/memory$pbs_gone" "$CG/cpuacct$pbs_gone" &&
    wait $burn &&
    end 13.t$T &&
    wait_record 13.t$T &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = completed &&
    test "$(jq ".[0].outcome.complete" rec.json)" = false &&
    jq -r ".[0].outcome.reason" rec.json |
        grep -q "cgroup could not be read from [0-9.]* s after the start" &&
    test "$(jq ".[0].summary.cpu.exact" rec.json)" = false &&
    jq -e ".[0].summary.cpu.total_s > 0.5" rec.json &&
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"ping\"}" &&
    ! grep -q "13.t$T.*\(assert\|abort\)" "$(tracerd_log)"
'

# Names a user controls (the job name here) with a newline and terminal
# escapes: no log line may start with the injected text, and no escape
# byte may reach tracerd's log or tracer-report's output.  The record
# holds the name with each control character made "?" and says so
# (identity.truncated).
test_expect_success 'hostile job names reach neither the log nor the terminal raw' '
    sleep 1 &
    esc=$(awk "BEGIN { printf \"%c\", 27 }") &&
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"step_start\",
        \"identity\":{\"scheduler\":\"pbs\",\"job_id\":\"14.t$T\",
          \"step_id\":\"batch\",\"node\":\"$(hostname)\",\"uid\":0,
          \"user\":\"root\",
          \"job_name\":\"x\\nINJECTED tracerd: fake\\u001b[2J\\u001b]0;t\\u0007\"},
        \"task_id\":0, \"pid\":$!, \"interval_s\":0.2,
        \"attach\":{\"tree\":true}}" &&
    wait $! &&
    end 14.t$T &&
    wait_record 14.t$T &&
    test "$(jq -r ".[0].identity.job_name" rec.json)" = "x?INJECTED tracerd: fake?[2J?]0;t?" &&
    test "$(jq -c ".[0].identity.truncated" rec.json)" = "[\"job_name\"]" &&
    ! grep -q "^INJECTED" "$(tracerd_log)" &&
    ! grep -q "$esc" "$(tracerd_log)" &&
    "$B/analysis/tracer-report" -j 14.t$T >view.out &&
    grep -q "INJECTED" view.out &&
    ! grep -q "^INJECTED" view.out &&
    ! grep -q "$esc" view.out &&
    "$B/analysis/tracer-report" -a -S now-1hour -o jobid,jobname%60 \
        >list.out &&
    ! grep -q "$esc" list.out &&
    ! grep -q "^INJECTED" list.out
'

# 1,000 steps, each started and ended through the socket as fast as
# notify can send them (the rate is printed, not asserted): every step
# gets its record, and tracerd keeps no descriptor per finished step.
test_expect_success '1,000 steps in a burst: 1,000 records, no descriptor leaked' '
    sleep 300 &
    keep=$! &&
    test_when_finished "kill $keep 2>/dev/null || :" &&
    tpid=$(cat "$TRACER_CLUSTER_DIR/run/tracerd.pid") &&
    fds=$(ls /proc/$tpid/fd | wc -l) &&
    t0=$(date +%s.%N) &&
    i=0 &&
    while test $i -lt 1000; do
        start b$i.t$T "{\"tree\":true}" $keep >burst.out &&
        end b$i.t$T >>burst.out ||
        { echo "step b$i.t$T:" >&2; cat burst.out >&2; return 1; }
        i=$((i + 1))
    done &&
    t1=$(date +%s.%N) &&
    awk -v a="$t0" -v b="$t1" "BEGIN { printf \"1000 steps in %.1f s: %.0f per minute\n\", b - a, 60000 / (b - a) }" &&
    # the job directory by its whole name: * in a glob spans slashes, and
    # "*/b*.t$T/*" also took an earlier job that lies under a hash
    # bucket whose name starts with b (jobs/b87/7.t$T)
    wait_for "test \$(find \"$TRACER_STORE\" -name \"batch.*.json\" | grep -c \"/b[0-9][0-9]*\\.t$T/batch\\.\") = 1000" 120 &&
    kill $keep &&
    { wait_for "test \$(ls /proc/$tpid/fd | wc -l) -le $fds" 20 ||
      { echo "tracerd had $fds descriptors before, now:" >&2;
        ls -l /proc/$tpid/fd >&2; false; }; } &&
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"ping\"}"
'

test_expect_success 'no step state is left behind' '
    test -z "$(ls "$TRACER_CLUSTER_DIR/run/tracer/steps")"
'

test_expect_success 'stop the cluster' '
    cluster_down
'
test_done
