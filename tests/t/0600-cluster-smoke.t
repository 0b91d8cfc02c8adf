#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='the private test cluster runs jobs in cgroups and stops cleanly

Brings up tests/cluster without the tracer plugin and tracerd, so that a
failure here is a problem of the test environment, not of tracer.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "cgroup v1 memory controller at /sys/fs/cgroup/memory" \
    test -d /sys/fs/cgroup/memory

# Field 2 of a /proc/PID/cgroup line is the controller list.
memory_cgroup ()
{
    sed -n 's/^[0-9]*:memory://p' "$1"
}

test_expect_success 'cluster comes up' '
    start=$(date +%s) &&
    cluster_up --no-plugin --no-tracerd &&
    echo "cluster up in $(( $(date +%s) - start )) s" &&
    test -n "$TRACER_NODENAME" &&
    test -f "$SLURM_CONF"
'

test_expect_success 'status reports every daemon running' '
    cluster_status >status.out &&
    grep "munged *running" status.out &&
    grep "slurmctld *running" status.out &&
    grep "slurmd *running" status.out
'

test_expect_success 'the node is idle' '
    sinfo -h -n "$TRACER_NODENAME" -o %t >state.out &&
    echo idle >expect &&
    test_cmp expect state.out
'

test_expect_success 'srun runs a task' '
    srun -n1 true
'

test_expect_success 'srun --mem puts the task in its memory cgroup' '
    srun -n1 --mem=100M sh -c "echo \$SLURM_JOB_ID; cat /proc/self/cgroup" \
        >srun.out &&
    jobid=$(head -n1 srun.out) &&
    memory_cgroup srun.out >memcg.out &&
    echo "/slurm_$TRACER_NODENAME/uid_0/job_$jobid/step_0/task_0" >expect &&
    test_cmp expect memcg.out
'

# task/cgroup sets the limit on the job and step dirs; task_N (created by
# jobacct_gather/cgroup for accounting) has none of its own.
test_expect_success 'ConstrainRAMSpace applies the --mem limit to the step' '
	cat >memlimit.sh <<-\EOF &&
	cg=$(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup)
	cat "/sys/fs/cgroup/memory${cg%/task_*}/memory.limit_in_bytes"
	EOF
    srun -n1 --mem=100M sh ./memlimit.sh >limit.out &&
    echo 104857600 >expect &&
    test_cmp expect limit.out
'

test_expect_success 'an sbatch job completes' '
    jobid=$(sbatch --parsable -o batch.out --wrap "echo batch \$SLURM_JOB_ID") &&
    state=$(wait_job "$jobid" 60) &&
    test "$state" = COMPLETED &&
    echo "batch $jobid" >expect &&
    test_cmp expect batch.out
'

# The unprivileged user must reach slurm.conf and the munge socket.
if test_have_prereq TRACERTEST &&
   runuser -u tracertest -- test -r "$SLURM_CONF" 2>/dev/null &&
   runuser -u tracertest -- test -w "$TRACER_MUNGE_SOCKET" 2>/dev/null
then
    test_set_prereq USER_JOBS
fi

test_expect_success USER_JOBS 'srun works as an unprivileged user' '
    uid=$(id -u tracertest) &&
    runuser -u tracertest -- srun -n1 --chdir=/tmp \
        sh -c "id -u; echo \$SLURM_JOB_ID; cat /proc/self/cgroup" \
        >user.out &&
    test "$(sed -n 1p user.out)" = "$uid" &&
    jobid=$(sed -n 2p user.out) &&
    memory_cgroup user.out >memcg.out &&
    echo "/slurm_$TRACER_NODENAME/uid_$uid/job_$jobid/step_0/task_0" \
        >expect &&
    test_cmp expect memcg.out
'

test_expect_success 'a running job is cancelled by cluster down' '
    jobid=$(sbatch --parsable -o /dev/null --wrap "sleep 300") &&
    wait_for "test \"\$(job_state $jobid)\" = RUNNING" 30 &&
    cat "$TRACER_CLUSTER_DIR"/run/munged.pid \
        "$TRACER_CLUSTER_DIR"/run/slurmctld.pid \
        "$TRACER_CLUSTER_DIR"/run/slurmd.pid >pids &&
    test $(wc -l <pids) -eq 3 &&
    ls -d /sys/fs/cgroup/*/slurm_"$TRACER_NODENAME" >cgdirs &&
    test -s cgdirs &&
    cluster_down
'

test_expect_success 'no daemon is left running' '
    for pid in $(cat pids); do
        ! tr_pid_running "$pid" || { echo "pid $pid alive" >&2; false; }
    done
'

test_expect_success 'no slurm_<node> cgroup dir is left' '
    for d in $(cat cgdirs); do
        ! test -d "$d" || { echo "left: $d" >&2; false; }
    done &&
    ! ls -d /sys/fs/cgroup/*/slurm_"$TRACER_NODENAME" 2>/dev/null
'

test_expect_success 'cluster down again is a no-op' '
    cluster_down &&
    ! cluster_status
'

test_done
