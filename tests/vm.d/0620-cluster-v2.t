#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='the real cluster on a cgroup v2 node under systemd

Run by t/0800-vm-cgroup-v2.t inside the guest node of tests/vm: a pure
cgroup v2 hierarchy, systemd as PID 1, Slurm'"'"'s cgroup/v2 plugin (the
slurmstepds in <node>_slurmstepd.scope, tasks in job_J/step_S/user/task_N;
from Slurm 26.05 slurmstepd.scope, and the SLUID of the job for job_J).
Step CPU within 0.1 % and peak memory within 1 % of what the workload'"'"'s
own getrusage says, PSI from the step'"'"'s own cgroup, an OOM kill counted
from memory.events with its victim named, and records readable by their
user only.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "a pure cgroup v2 host (tests/vm)" \
    test "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs
require_or_skip "systemd as PID 1 (tests/vm)" \
    test "$(cat /proc/1/comm)" = systemd
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "the test user tracertest (tools/install-deps)" \
    test_have_prereq TRACERTEST

test_expect_success 'start the cluster with Slurm'"'"'s cgroup/v2 plugin' '
    cluster_up --plugstack-args "enable=optin" &&
    grep -q "^CgroupPlugin=cgroup/v2" "$TRACER_CLUSTER_DIR/etc/cgroup.conf" &&
    mkdir -m 1777 work
'

test_expect_success 'a step of an unprivileged user is in the v2 step cgroup' '
    runuser -u tracertest -- srun --tracer sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; cat /proc/self/cgroup" >cg.out 2>cg.err &&
    job=$(sed -n "s/^JOB=//p" cg.err) &&
    jdir=$(job_cgroup_dir $job) &&
    echo "job directory: $jdir" &&
    grep -Eq "^0::/system.slice/([^/]*_)?slurmstepd.scope/$jdir/step_0/user/task_0$" cg.out &&
    wait_record $job &&
    test "$(jq -r ".[0].identity.user" rec.json)" = tracertest
'

# The truth: the workload's getrusage of itself and of its children,
# reaped (their exit included); the parent does nothing else.  Under
# emulation a host that preempts the guest charges that time to whatever
# the guest runs, also to the parent's own exit after it measured itself
# (milliseconds): 16 s of work keeps that far below 0.1 %.
test_expect_success 'CPU within 0.1 % of the workload'"'"'s getrusage (its tasks only, not slurmstepd)' '
    runuser -u tracertest -- srun --tracer -c2 sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec $B/tests/burn children=2,child_cpu=8" \
        >burn.out 2>burn.err &&
    job=$(sed -n "s/^JOB=//p" burn.err) &&
    wait_record $job &&
    jq -c ".[0].summary.cpu, .[0].tools[]" rec.json && cat burn.out &&
    test "$(jq -r ".[0].summary.cpu.exact" rec.json)" = true &&
    test "$(jq -r ".[0].summary.cpu.source" rec.json)" = cgroup-v2:cpu.stat &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" "$(jq .cpu_s burn.out)" 0.1 &&
    ! jq -r ".[0].tools[].name" rec.json | grep -q slurmstepd
'

# Two tasks, each with two children: the step's CPU is the sum of both
# tasks' own getrusage; each task's end is in the record.  Under
# emulation a step of two tasks was charged 0.10 to 0.13 % more than
# its tasks' getrusage (10.7 ms of 8.3 s, 17.8 of 16.3, 33 of 32.4: it
# grows with the work, so it is no start or exit), where one task of
# two children is within 0.05 %: 0.2 % here, well inside "exact" (1 %).
test_expect_success 'a step of two tasks: CPU within 0.2 % of both tasks'"'"' getrusage, both tasks ended' '
    runuser -u tracertest -- srun --tracer -n2 -c1 sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec $B/tests/burn children=2,child_cpu=8" \
        >mt.out 2>mt.err &&
    job=$(sed -n "s/^JOB=//p" mt.err | head -n 1) &&
    wait_record $job &&
    cat mt.out && jq -c ".[0].summary.cpu, .[0].outcome" rec.json &&
    test "$(grep -c cpu_s mt.out)" = 2 &&
    test "$(jq -r ".[0].request.tasks" rec.json)" = 2 &&
    test "$(jq -r "[.[0].outcome.tasks[].task_id] | sort | join(\" \")" \
        rec.json)" = "0 1" &&
    test "$(jq -r ".[0].outcome.complete" rec.json)" = true &&
    test "$(jq -r ".[0].summary.cpu.exact" rec.json)" = true &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" \
        "$(jq -s "map(.cpu_s) | add" mt.out)" 0.2
'

# Exits outside the steps are dropped in the kernel (a socket filter on
# the taskstats listener), here on cgroup2 by walking the exiting task's
# default cgroup: 6.1's socket filters have no cgroup-id helpers.
test_expect_success 'the exit filter runs in the kernel on cgroup v2' '
    grep "process exits: " "$(tracerd_log)" &&
    grep -q "process exits: only those in the steps'"'"' [0-9]* cgroup directories delivered (kernel filter)" \
        "$(tracerd_log)" &&
    ! grep -q "kernel filter refused" "$(tracerd_log)"
'

test_expect_success 'PSI from the step'"'"'s own cgroup' '
    jq -e ".[0].summary.pressure.source == \"cgroup2\" and
           .[0].summary.pressure.exact == true and
           .[0].summary.pressure.cpu.some_s != null and
           .[0].summary.pressure.memory.some_s != null and
           .[0].summary.pressure.io.some_s != null and
           (.[0].summary.x_pressure_unknown // [] | length) == 0" rec.json
'

test_expect_success 'peak memory within 1 % of the workload'"'"'s getrusage; the limit is Slurm'"'"'s' '
    runuser -u tracertest -- srun --tracer --mem=800M sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec $B/tests/burn mem=400M,hold=1" \
        >mem.out 2>mem.err &&
    job=$(sed -n "s/^JOB=//p" mem.err) &&
    wait_record $job &&
    jq ".[0].summary.memory" rec.json &&
    test "$(jq -r ".[0].summary.memory.source" rec.json)" = cgroup-v2:memory.peak &&
    within "$(jq ".[0].summary.memory.peak_bytes" rec.json)" \
        "$(jq .maxrss_bytes mem.out)" 1 &&
    test "$(jq ".[0].summary.memory.limit_bytes" rec.json)" = $((800 * 1048576))
'

test_expect_success 'an OOM kill is counted from memory.events and its victim named' '
    test_must_fail runuser -u tracertest -- srun --tracer --mem=100M sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; perl -e \"\\\$x = q(a) x (400 * 1024 * 1024); sleep 5\" &
         v=\$!; echo VICTIM=\$v >&2; wait \$v" 2>oom.err &&
    job=$(sed -n "s/^JOB=//p" oom.err) &&
    victim=$(sed -n "s/^VICTIM=//p" oom.err) &&
    wait_record $job &&
    jq -e ".[0].summary.memory.oom_kill_events >= 1" rec.json &&
    $REPORT -j $job >oom.list &&
    cat oom.list &&
    grep -q "OUT_OF_MEMORY" oom.list &&
    jq ".[0].events" rec.json &&
    jq -e ".[0].events[]? | select(.kind == \"oom-kill\") | .pid == $victim" rec.json
'

# live_has JOB / run_has RUN JOB: as the job's user, tracer-report --live
# lists JOB; --run=RUN (from the store's live summaries) has it running
live_has ()
{
    runuser -u tracertest -- "$REPORT" --live >live.out 2>live.err &&
    grep -q "^$1 " live.out
}
run_has ()
{
    runuser -u tracertest -- "$REPORT" --run="$1" --json >lrun.json 2>lrun.err &&
    jq -e ".running == [\"$2\"]" lrun.json >/dev/null
}

# While a step runs: its snapshot (from its first reading) for --live,
# and the store'"'"'s live summary (store.live_interval, 30 s as
# deployed), signed, for --run.
test_expect_success 'a running step: --live and --run as its user, from its v2 cgroup' '
    runuser -u tracertest -- sbatch --parsable --tracer=tag=run:v2live-1 \
        --mem=64M -o /dev/null --chdir=/tmp --wrap "sleep 90" >ljob &&
    ljob=$(cat ljob) &&
    test_when_finished "scancel $ljob" &&
    wait_for "live_has $ljob" 30 &&
    cat live.out &&
    ! grep -q STALE live.out &&
    wait_for "run_has v2live-1 $ljob" 60 &&
    jq -c ".tasks[0].live" lrun.json &&
    jq -e ".tasks[] | select(.job_id == \"$ljob\") | .state == \"RUNNING\"
           and .live.stale == false" lrun.json
'

test_expect_success 'a record is readable by its user and admins only' '
    f=$(find "$TRACER_STORE" -name "*.json" -path "*/$job/*" | head -1) &&
    test -n "$f" &&
    test "$(stat -c %a "$f")" = 640 -o "$(stat -c %a "$f")" = 600 &&
    ! runuser -u nobody -- cat "$f" >/dev/null 2>&1
'

test_done
