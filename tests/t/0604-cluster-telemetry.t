#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='known workloads in a real cluster: threads, I/O, short processes, memory pressure'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# jobs write here as whatever user they run as
test_expect_success 'start a cluster whose tracerd mirrors steps into cgroup2' '
    cluster_up --plugstack-args "enable=optin" --sampling psi_mirror=true &&
    mkdir -m 1777 work
'

test_expect_success 'a CPU burner with exactly 2 threads: 2 x its seconds, within 5%' '
    srun --tracer -c2 sh -c "echo JOB=\$SLURM_JOB_ID >&2; \
        exec $B/tests/burn cpu=1.5,threads=2" >thr.out 2>thr.err &&
    job=$(sed -n "s/^JOB=//p" thr.err) &&
    wait_record $job &&
    within "$(jq .cpu_s thr.out)" 3 5 &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" "$(jq .cpu_s thr.out)" 5 &&
    test "$(jq ".[0].summary.cpu.exact" rec.json)" = true &&
    test "$(jq ".[0].tools[] | select(.name == \"burn\") | .count" rec.json)" = 1
'

# The cgroup'"'"'s user/system split is counted by the tick, its total is
# the scheduler'"'"'s run time: user + system must still be the total.
test_expect_success 'the cgroup record: user + system = total, within its microsecond' '
    jq -e ".[0].summary.cpu | .user_s > 0
           and .user_s + .system_s <= .total_s + 1e-6
           and .user_s + .system_s >= .total_s - 1e-6" rec.json
'

test_expect_success 'dd writing 32 MiB with O_DIRECT: write_bytes within 5%' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec dd if=/dev/zero \
        of=work/dd.out bs=1M count=32 oflag=direct" 2>dd.err &&
    job=$(sed -n "s/^JOB=//p" dd.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].summary.io.proc.source" rec.json)" = taskstats &&
    within "$(jq ".[0].summary.io.proc.write_bytes" rec.json)" 33554432 5 &&
    dd_row=$(jq -c ".[0].tools[] | select(.name == \"dd\")" rec.json) &&
    within "$(printf "%s" "$dd_row" | jq .write_bytes)" 33554432 5 &&
    test "$(printf "%s" "$dd_row" | jq -c .exit_codes)" = "{\"0\":1}"
'

test_expect_success '200 children of 50 ms each all appear in the tool table' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; i=0; \
        while [ \$i -lt 200 ]; do sleep 0.05 & i=\$((i+1)); done; wait" \
        2>kids.err &&
    job=$(sed -n "s/^JOB=//p" kids.err) &&
    wait_record $job &&
    test "$(jq ".[0].tools[] | select(.name == \"sleep\") | .count" rec.json)" = 200 &&
    test "$(jq ".[0].tools[] | select(.name == \"sleep\") | .exact" rec.json)" = true &&
    test "$(jq -r ".[0].summary.processes.source" rec.json)" = taskstats &&
    test "$(jq ".[0].summary.processes.count >= 201" rec.json)" = true
'

# The tool table adds up to the step: each process's exit record has
# its run time as the scheduler last updated it (up to a tick old) and
# comes before the kernel frees its memory, so a short process's record
# misses most of it (/bin/true: 0.2 of 1.2 ms).  The reapers' cutime +
# cstime have the whole runs; the rows, summed, are the step's CPU from
# its cgroup within 1 % (they were 10 % short).  Short processes that
# exec, a process whose children never exec, threads, a long one.
test_expect_success 'the tool table CPU adds up to the step CPU within 1%: 400 short processes, forks, threads' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; i=0; \
        while [ \$i -lt 300 ]; do /bin/true; i=\$((i+1)); done; \
        i=0; while [ \$i -lt 100 ]; do dd if=/dev/zero of=/dev/null \
            bs=64k count=2000 status=none; i=\$((i+1)); done; \
        $B/tests/burn children=50,child_cpu=0.02 >/dev/null; \
        $B/tests/burn cpu=2,threads=2 >/dev/null" 2>sum.err &&
    job=$(sed -n "s/^JOB=//p" sum.err) &&
    wait_record $job &&
    jq ".[0] | {cpu: .summary.cpu, processes: .summary.processes,
                tools: [.tools[] | {name, count, cpu_s}],
                sum: ([.tools[].cpu_s] | add)}" rec.json >sum.json &&
    test "$(jq .cpu.exact sum.json)" = true &&
    test "$(jq .processes.lost sum.json)" = 0 &&
    test "$(jq ".tools[] | select(.name == \"true\") | .count" sum.json)" = 300 &&
    test "$(jq ".tools[] | select(.name == \"dd\") | .count" sum.json)" = 100 &&
    test "$(jq ".tools[] | select(.name == \"burn\") | .count" sum.json)" = 52 &&
    within "$(jq .sum sum.json)" "$(jq .cpu.total_s sum.json)" 1 || {
        cat sum.json >&2
        false
    }
'

# Two short runs of one multi-command tool (here a script named
# samtools, 50 ms each, shorter than an interval): each is named from
# its arguments at its exec, not merged into "samtools x2" from the
# comm of its exit record.
test_expect_success 'short processes are named from their arguments: samtools index and samtools flagstat' '
    mkdir -p bin &&
    printf "#!/bin/sh\nsleep 0.05\n" >bin/samtools &&
    chmod 755 bin/samtools &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2;
        \"$PWD/bin/samtools\" index in.bam &&
        \"$PWD/bin/samtools\" flagstat in.bam" 2>st.err &&
    job=$(sed -n "s/^JOB=//p" st.err) &&
    wait_record $job &&
    jq -c "[.[0].tools[] | {name, count}]" rec.json &&
    test "$(jq ".[0].tools[] | select(.name == \"samtools index\") |
        .count" rec.json)" = 1 &&
    test "$(jq ".[0].tools[] | select(.name == \"samtools flagstat\") |
        .count" rec.json)" = 1 &&
    test "$(jq "[.[0].tools[] | select(.name == \"samtools\")] | length" \
        rec.json)" = 0
'

# 10,000 idle children, all alive while the parent burns 3 CPU seconds:
# several samples see all 10,001 processes, then all exit in a burst,
# and taskstats must deliver every exit.  The step's slurmstepd lives in
# its cgroup (v1) and outlives the record, so it is the one process not
# measured at its exit (processes.complete is false for it).
test_expect_success 'a step with 10,000 processes at once: each counted, totals exact' '
    srun --tracer --mem=3G sh -c "echo JOB=\$SLURM_JOB_ID >&2; \
        exec $B/tests/burn alive=10000,cpu=3" >many.out 2>many.err &&
    job=$(sed -n "s/^JOB=//p" many.err) &&
    wait_record $job &&
    jq ".[0] | {processes: .summary.processes, complete: .outcome.complete,
                cpu: .summary.cpu, tools: [.tools[] | {name, count, exact}],
                nprocs: ([.series.metrics.nprocs.max[]] | max)}" \
        rec.json >many.json &&
    test "$(jq .processes.source many.json)" = "\"taskstats\"" &&
    test "$(jq .processes.lost many.json)" = 0 &&
    test "$(jq ".tools[] | select(.name == \"burn\") | .count" many.json)" = 10001 &&
    test "$(jq ".tools[] | select(.name == \"burn\") | .exact" many.json)" = true &&
    test "$(jq "[.tools[] | select(.name | startswith(\"slurmstepd\") | not)] | length" many.json)" = 1 &&
    test "$(jq ".processes.count - ([.tools[].count] | add)" many.json)" = 0 &&
    test "$(jq ".nprocs >= 10000" many.json)" = true &&
    test "$(jq .complete many.json)" = true &&
    test "$(jq .cpu.exact many.json)" = true &&
    within "$(jq .cpu.total_s many.json)" "$(jq .cpu_s many.out)" 5 || {
        cat many.json >&2
        false
    }
'

test_expect_success 'a step squeezed by its memory limit shows memory pressure' '
    srun --tracer --mem=40M sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec dd \
        if=/dev/zero of=work/big.out bs=1M count=300" 2>mem.err &&
    job=$(sed -n "s/^JOB=//p" mem.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].summary.pressure.source" rec.json)" = cgroup2-mirror &&
    test "$(jq ".[0].summary.pressure.exact" rec.json)" = true &&
    test "$(jq ".[0].summary.pressure.memory.some_s > 0" rec.json)" = true &&
    rm -f work/big.out
'

test_expect_success 'the record has topology, cpu placement and network scope' '
    test "$(jq -r ".[0].host.topology.source" rec.json)" = hwloc &&
    test "$(jq ".[0].host.topology.pus > 0" rec.json)" = true &&
    test "$(jq ".[0].summary.cpu.ncores > 0" rec.json)" = true &&
    test "$(jq -r ".[0].summary.network.scope" rec.json)" = node
'

# Every step here has a cgroup2 directory of its own (the mirror): the
# kernel drops the node's other exits before tracerd receives them.
filter_on="only those in the steps' [0-9]* cgroup directories delivered (kernel filter)"
filter_off="every exit on the node delivered (step [^ ]*/77.x$$/batch/[^ ]* has no cgroup directory"
NOTIFY=$B/tests/notify

test_expect_success 'exit filter: 200 short children of a step counted, 1,000 exits outside it not received' '
    test_when_finished ": >work/go" &&
    wait_log "$(tracerd_log)" "$filter_on" &&
    exit_filter_check
'

test_expect_success 'exit filter: a step with no cgroup directory removes it; its exits all arrive' '
    test_when_finished ": >work/go2" &&
    rm -f work/go2 work/held work/fifo &&
    mkfifo work/fifo &&
    { srun --tracer sh -c ": >work/held; \
          while [ ! -e work/go2 ]; do sleep 0.5; done" 2>held.err & } &&
    wait_for "test -e work/held" 60 &&
    n_on=$(grep -c "$filter_on" "$(tracerd_log)") &&
    { sh -c "read x <work/fifo; i=0; \
          while [ \$i -lt 100 ]; do /bin/true; i=\$((i+1)); done" & } &&
    tree=$! &&
    test_when_finished ": >work/go2; kill $tree 2>/dev/null; true" &&
    pbs_step_start 77.x$$ "{\"tree\":true}" $tree &&
    wait_log "$(tracerd_log)" "$filter_off" &&
    echo go >work/fifo &&
    wait $tree &&
    pbs_task_exit 77.x$$ &&
    wait_record 77.x$$ &&
    test "$(jq ".[0].tools[] | select(.name == \"true\") | .count" rec.json)" = 100 &&
    test "$(jq ".[0].tools[] | select(.name == \"true\") | .exact" rec.json)" = true &&
    wait_for "test \$(grep -c \"\$filter_on\" \"\$(tracerd_log)\") -gt $n_on" 20 &&
    : >work/go2 &&
    wait
'

# A restarted tracerd cannot tell whether every task of a mirrored step
# went into the mirror: it filters by the step's v1 directory instead,
# where Slurm put every task.
test_expect_success 'exit filter: a mirrored step resumed by a restarted tracerd is filtered by its v1 directory' '
    test_when_finished ": >work/go3" &&
    rm -f work/go3 work/held3 &&
    { srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; : >work/held3; \
          while [ ! -e work/go3 ]; do sleep 0.5; done; \
          i=0; while [ \$i -lt 50 ]; do /bin/true; i=\$((i+1)); done" \
          2>held3.err & } &&
    wait_for "test -e work/held3" 60 &&
    job=$(sed -n "s/^JOB=//p" held3.err) &&
    tracerd_stop &&
    n_on=$(grep -c "$filter_on" "$(tracerd_log)") &&
    tracerd_start &&
    wait_log "$(tracerd_log)" "step [^ ]*/$job/0/[^ ]* resumed" &&
    wait_for "test \$(grep -c \"\$filter_on\" \"\$(tracerd_log)\") -gt $n_on" 20 &&
    : >work/go3 &&
    wait &&
    wait_record $job &&
    test "$(jq ".[0].tools[] | select(.name == \"true\") | .count" rec.json)" = 50
'

mirror_gone () {
    ! ls -d /sys/fs/cgroup/unified/tracer/*@"$TRACER_NODENAME" 2>/dev/null |
        grep -q .
}

test_expect_success 'the per-step cgroup2 directories are removed afterwards' '
    i=0 &&
    while ! mirror_gone && [ $i -lt 30 ]; do sleep 1; i=$((i+1)); done &&
    mirror_gone
'

test_expect_success 'stop the cluster' '
    cluster_down
'

test_done
