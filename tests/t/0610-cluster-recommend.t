#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='recommendations from many runs, closed loop, in a real cluster

A step that asks for 2 CPUs, 2 GB and an hour but uses one CPU, about
200 MB and about 12 s (longer than a short step, whose efficiency is not
judged) is run 5 times; tracer-report recommends 1 CPU, at most 512 MB and at most 5 minutes, and the step runs again with exactly
that.  A step whose memory grows from run to run until one run is
OOM-killed is recommended more than the limit it died at.  A step that
waits on its disk is diagnosed I/O-bound and is not told to take more
CPUs.  Steps whose memory keeps growing to 1.5x, 3x and 8x the 256M
limit that kills them complete within two reruns of the advice, and the kill
shows as OUT_OF_MEMORY in the view, listing, filter and JSON.  A job
with no time limit is UNLIMITED and is recommended the time it used.  The
listing, its filters and formats read the same records.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# perl holds MB megabytes and keeps one CPU busy for S seconds.
burn ()
{
    echo "my \$x = \"a\" x ($1 * 1048576); my \$t = time + $2; \
1 while time < \$t;"
}

# runjob NAME SRUN-OPTIONS... -- CMD...: run a traced step, wait for its
# record; the job id is left in job.
runjob ()
{
    srun --tracer "$@" 2>run.err
    job=$(sed -n "s/^JOB=//p" run.err | tail -1)
    test -n "$job" && wait_record "$job"
}

test_expect_success 'start the cluster, with PSI for each step' '
    cluster_up --sampling psi_mirror=true
'

test_expect_success 'the same step, 5 runs: 2 CPUs, 2G, 1 h asked; 1 CPU, 200M, 12 s used' '
    for i in 1 2 3 4 5; do
        runjob -J loop -c 2 --mem=2G -t 1:00:00 sh -c \
            "echo JOB=\$SLURM_JOB_ID >&2; exec perl -e '\''$(burn 200 12)'\''" ||
            return 1
        jq -e ".[0].outcome.state == \"completed\"" rec.json || return 1
    done
'

test_expect_success 'the listing shows the 5 runs, parsable, filtered by name' '
    $REPORT -S now-1hour --name loop -X -P -n \
        -o jobidraw,state,reqcpus,reqmem >list.out &&
    test $(wc -l <list.out) = 5 &&
    ! grep -v "^[0-9]*|COMPLETED|2|2147483648$" list.out
'

test_expect_success 'recommendation: 1 CPU, at most 512M, at most 5 minutes' '
    $REPORT -S now-1hour --name loop --recommend --output=sbatch >rec.sbatch &&
    cat rec.sbatch &&
    grep -q "^#SBATCH --cpus-per-task=1$" rec.sbatch &&
    mem=$(sed -n "s/^#SBATCH --mem=//p" rec.sbatch) &&
    case $mem in
    *M) test ${mem%M} -le 512 ;;
    *) false ;;
    esac &&
    t=$(sed -n "s/^#SBATCH --time=//p" rec.sbatch) &&
    secs=$(echo "$t" | awk -F: "{ print \$1 * 3600 + \$2 * 60 + \$3 }") &&
    test "$secs" -le 300 && test "$secs" -ge 12
'

test_expect_success 'the JSON says why: 5 runs, evidence from the quantiles' '
    $REPORT -S now-1hour --name loop --recommend --json >rec.out.json &&
    jq -e ".groups | length == 1" rec.out.json &&
    jq -e ".groups[0].runs.total == 5" rec.out.json &&
    jq -e ".groups[0].mem.at_quantile > 150 * 1048576" rec.out.json &&
    jq -e ".groups[0].time.at_quantile >= 11" rec.out.json &&
    jq -e ".groups[0].savings.core_hours > 0" rec.out.json
'

test_expect_success 'rerun with the recommendation: it succeeds' '
    cpus=$(sed -n "s/^#SBATCH --cpus-per-task=//p" rec.sbatch) &&
    mem=$(sed -n "s/^#SBATCH --mem=//p" rec.sbatch) &&
    t=$(sed -n "s/^#SBATCH --time=//p" rec.sbatch) &&
    runjob -J loop -c "$cpus" --mem="$mem" -t "$t" sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec perl -e '\''$(burn 200 12)'\''" &&
    jq -e ".[0].outcome.state == \"completed\"" rec.json &&
    jq -e ".[0].request.cpus_on_node == 1" rec.json
'

# perl builds its string in a temporary: it holds about twice MB.
test_expect_success 'a step whose memory grows, one run OOM-killed at 400M' '
    for mb in 60 80 100 120; do
        runjob -J grow --mem=400M sh -c \
            "echo JOB=\$SLURM_JOB_ID >&2; exec perl -e '\''$(burn $mb 1)'\''" ||
            return 1
    done &&
    test_might_fail runjob -J grow --mem=400M sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec perl -e '\''$(burn 800 1)'\''" &&
    jq -e ".[0].outcome.state == \"oom\"" rec.json
'

test_expect_success 'the recommendation is above the limit it died at' '
    $REPORT -S now-1hour --name grow --recommend --json >grow.json &&
    jq -e ".groups[0].runs.oom == 1" grow.json &&
    jq -e ".groups[0].mem.recommend > 400 * 1048576" grow.json &&
    jq -e ".groups[0].mem.basis == \"oom\"" grow.json
'

test_expect_success 'the OOM run is listed and diagnosed as such' '
    $REPORT -S now-1hour --name grow -s OOM -P -n -o state,diagnosis \
        >oom.out &&
    test $(wc -l <oom.out) = 2 &&
    grep -qx "OUT_OF_MEMORY|" oom.out &&
    grep -q "^OUT_OF_MEMORY|.*oom" oom.out
'

# growjob NAME MEM NEED: a step that grows 128M a second to NEED (then
# holds it 1 s), run with --mem=MEM and a one-minute limit; state in st.
# The limit that kills it first is 256M, above the 256M floor of the
# advice, so that the floor does not do the work.
growjob ()
{
    test_might_fail runjob -J "$1" --mem="$2" -t 1 sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN mem=$3,grow=128M,hold=1" &&
    st=$(jq -r ".[0].outcome.state" rec.json)
}

# converge NAME NEED: killed at 256M, then rerun with the advice until it
# completes; the reruns it took in reruns.NAME.
converge ()
{
    growjob "$1" 256M "$2" && test "$st" = oom &&
    echo "$job" >oomjob.$1 &&
    $REPORT -S now-1hour --name "$1" --recommend --json >advice.$1.json &&
    n=0 &&
    while test "$st" != completed && test $n -lt 3; do
        n=$((n + 1)) &&
        $REPORT -S now-1hour --name "$1" --recommend --output=sbatch \
            >adv.$1 &&
        mem=$(sed -n "s/^#SBATCH --mem=//p" adv.$1) &&
        echo "$1 rerun $n: --mem=$mem" &&
        growjob "$1" "$mem" "$2" || return 1
    done &&
    echo $n >reruns.$1 &&
    test "$st" = completed && test $n -le 2
}

test_expect_success 'OOM that grows to 1.5x the limit: completes within two reruns' '
    converge oom15 384M
'

test_expect_success 'OOM that grows to 3x the limit: completes within two reruns' '
    converge oom3 768M
'

test_expect_success 'OOM that grows to 8x the limit: completes within two reruns' '
    converge oom8 2G
'

test_expect_success 'the advice after the kill states its evidence' '
    $REPORT -S now-1hour --name oom8 --recommend --json >oom8.json &&
    jq -e ".groups[0].runs.oom == 1 and .groups[0].runs.completed >= 1" \
        oom8.json &&
    $REPORT -S now-1hour --name oom8 -s OOM --json >oom8.list.json &&
    jq -e ".steps | length >= 1" oom8.list.json &&
    jq -e ".steps[0].memrise > 32 * 1048576" oom8.list.json &&
    jq -e ".groups[0].mem.oom_growth_Bps > 32 * 1048576" advice.oom8.json &&
    jq -e ".groups[0].mem.basis == \"oom\"" advice.oom8.json &&
    jq -e "[.groups[0].notes[] | select(startswith(\"after OOM: --mem=\"))]
           | length == 1" advice.oom8.json &&
    # one number with one reason: the note names the --mem and why
    jq -e ".groups[0] | (\"after OOM: --mem=\" + .mem.text + \": \"
           + .mem.reason) as \$n | any(.notes[]; . == \$n)" advice.oom8.json &&
    jq -e ".groups[0].mem.reason | contains(\"the 256M it was killed at\")
           and contains(\"a lower bound of its need\")
           and contains(\"its rise at the kill\")" advice.oom8.json
'

test_expect_success 'an OOM kill is OUT_OF_MEMORY in the view, listing, filter and JSON' '
    job=$(cat oomjob.oom3) &&
    $REPORT -j "$job" >oomv.out &&
    grep "Step 0" oomv.out &&
    grep -q "Step 0 on .*: OUT_OF_MEMORY" oomv.out &&
    ! grep -q "exit code 137" oomv.out &&
    $REPORT -S now-1hour --name oom3 -P -n -o jobid,state >oomv.list &&
    grep -qx "$job\.0|OUT_OF_MEMORY" oomv.list &&
    $REPORT -S now-1hour --name oom3 -s OUT_OF_MEMORY -P -n -o jobid \
        >oomv.filter &&
    grep -qx "$job" oomv.filter &&
    $REPORT -S now-1hour --name oom3 -s oom -P -n -o jobid >oomv.filter2 &&
    test_cmp oomv.filter oomv.filter2 &&
    $REPORT -S now-1hour --name oom3 -s OOM --json >oomv.json &&
    jq -e "[.steps[] | select(.state == \"OUT_OF_MEMORY\")] | length >= 1" \
        oomv.json
'

test_expect_success 'no time limit is UNLIMITED in the record and the listing' '
    runjob -J unl -t UNLIMITED sh -c "echo JOB=\$SLURM_JOB_ID >&2; sleep 2" &&
    jq -e ".[0].request.time_limit == \"UNLIMITED\"" rec.json &&
    jq -e ".[0].request | has(\"time_limit_s\") | not" rec.json &&
    # no --time in a partition without MaxTime: Slurm says 365 days
    runjob -J unl sh -c "echo JOB=\$SLURM_JOB_ID >&2; sleep 2" &&
    jq -e ".[0].request.time_limit == \"UNLIMITED\"" rec.json &&
    test_might_fail runjob -J unlfail sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exit 3" &&
    $REPORT -S now-1hour --name unl -X -P -n -o jobid,timelimit >unl.list &&
    cat unl.list &&
    test $(grep -c "|UNLIMITED$" unl.list) = 2 &&
    $REPORT -S now-1hour --name unl --json >unl.json &&
    jq -e "[.steps[] | select(.timelimit == \"UNLIMITED\")] | length == 2" \
        unl.json
'

test_expect_success 'no time limit is never recommended: used time, else nothing' '
    for fmt in sbatch nextflow snakemake table json; do
        $REPORT -S now-1hour --name unl,unlfail --recommend \
            --output=$fmt >unl.$fmt || return 1
        ! grep -e "365-" -e "365d" -e "525600" -e "31536000" unl.$fmt ||
            return 1
    done &&
    cat unl.sbatch unl.table &&
    sed -n "/^# group unl\//,/^\$/p" unl.sbatch >unl.ok &&
    grep -q "^#SBATCH --time=00:05:00$" unl.ok &&
    sed -n "/^# group unlfail\//,/^\$/p" unl.sbatch >unl.bad &&
    test -s unl.bad && ! grep -q -e "--time" unl.bad &&
    grep -q "UNLIMITED -> 00:05:00" unl.table &&
    jq -e "[.groups[] | select(.time.unlimited)] | length == 2" unl.json
'

test_expect_success 'a step that waits on its disk is I/O-bound, not short of CPUs' '
    mkdir -p io &&
    runjob -J iowait -c 2 --mem=200M sh -c "echo JOB=\$SLURM_JOB_ID >&2; \
        timeout 15 dd if=/dev/zero of=io/f bs=4k count=10000000 \
            oflag=direct,dsync; true" &&
    rm -f io/f &&
    COLUMNS=1000 $REPORT -j "$job" >io.view &&
    cat io.view &&
    grep -q "Diagnosis:.*I/O" io.view &&
    grep -q "more cores will not help" io.view &&
    $REPORT -S now-1hour --name iowait --recommend --json >io.json &&
    jq -e ".groups[0].cpus.recommend <= 2" io.json &&
    $REPORT -S now-1hour --name iowait -P -n -o diagnosis >io.diag &&
    grep -q "io-bound" io.diag &&
    ! grep -q "cpu-bound" io.diag
'

test_expect_success 'rerun the I/O-bound step with its advice: it completes, with fewer cores' '
    cpus=$(jq -r ".groups[0].cpus.text" io.json) &&
    mem=$(jq -r ".groups[0].mem.text" io.json) &&
    t=$(jq -r ".groups[0].time.text" io.json) &&
    echo "advice: -c $cpus --mem=$mem -t $t" &&
    test "$cpus" = 1 &&
    runjob -J iowait -c "$cpus" --mem="$mem" -t "$t" sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; \
        timeout 15 dd if=/dev/zero of=io/f bs=4k count=10000000 \
            oflag=direct,dsync; true" &&
    rm -f io/f &&
    jq -e ".[0].outcome.state == \"completed\"" rec.json &&
    jq -e ".[0].request.cpus_on_node == 1" rec.json
'

test_expect_success 'the job view says what to request next time' '
    COLUMNS=1000 $REPORT -j "$(sed -n 1p list.out | cut -d"|" -f1)" >loop.view &&
    grep -q "Next time:.*--cpus-per-task=1" loop.view
'

# One engine sizes every view: the diagnosis quotes the group's advice,
# the one "Next time" shows, with the runs it came from.
test_expect_success 'the diagnosis names the same --mem as Next time, from the same runs' '
    cat loop.view &&
    dmem=$(sed -n "s/^ *Diagnosis:.*--mem=\([0-9]*[MG]\) would do (from \([0-9]*\) runs).*/\1/p" loop.view) &&
    runs=$(sed -n "s/^ *Diagnosis:.*--mem=[0-9]*[MG] would do (from \([0-9]*\) runs).*/\1/p" loop.view) &&
    nmem=$(sed -n "s/^ *Next time:.*--mem=\([0-9]*[MG]\).*/\1/p" loop.view) &&
    echo "diagnosis --mem=$dmem from $runs runs; next time --mem=$nmem" &&
    test -n "$dmem" && test "$dmem" = "$nmem" &&
    grep -q "Next time:.*($runs runs of " loop.view &&
    $REPORT -j "$(sed -n 1p list.out | cut -d"|" -f1)" --html -o loop.html &&
    grep -q -- "--mem=$dmem would do (from $runs runs)" loop.html &&
    grep -q "^#SBATCH --mem=$dmem$" loop.html
'

# Two busy loops outside the cluster, one on each of the node's two CPUs,
# at a higher priority and in the root CPU cgroup (beside Slurm's,
# whatever cgroup the test runs in), keep both cores loaded: a step of one thread on two cores waits for a
# CPU (pressure) because of them, not because its own threads wanted
# more.
test_expect_success 'a one-thread step on 2 cores of a loaded node is over-allocated, not told to add cores' '
    cpu_root=$(awk "{ for (i = 7; \$i != \"-\"; i++) ; }
        \$(i + 1) == \"cgroup\" && \$NF ~ /(^|,)cpu(,|\$)/ { print \$5; exit }" \
        /proc/self/mountinfo) &&
    { taskset -c 0 nice -n -10 sh -c "while :; do :; done" & } && l1=$! &&
    { taskset -c 1 nice -n -10 sh -c "while :; do :; done" & } && l2=$! &&
    test_when_finished "kill $l1 $l2 2>/dev/null; true" &&
    for p in $l1 $l2; do
        echo $p >"${cpu_root:-/sys/fs/cgroup}/cgroup.procs" || return 1
    done &&
    runjob -J single -c 2 --mem=200M sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec perl -e '\''$(burn 50 12)'\''" &&
    kill $l1 $l2 &&
    COLUMNS=1000 $REPORT -j "$job" >single.view &&
    cat single.view &&
    jq -e ".[0].summary.pressure.cpu.some_s > 0.1 * .[0].time.elapsed_s" rec.json &&
    grep -q "Diagnosis:.*over-allocated CPU.*--cpus-per-task=1 would do" single.view &&
    ! grep -q "more cores may help" single.view &&
    $REPORT -S now-1hour --name single --recommend --json >single.json &&
    jq -e ".groups[0].cpus.recommend == 1" single.json &&
    jq -e ".groups[0].cpus.starved == false" single.json &&
    runjob -J single -c 1 --mem=200M sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; exec perl -e '\''$(burn 50 12)'\''" &&
    jq -e ".[0].outcome.state == \"completed\"" rec.json &&
    jq -e ".[0].request.cpus_on_node == 1" rec.json
'

test_expect_success 'a step whose own two processes keep its 2 cores busy keeps them' '
    runjob -J multi -c 2 --mem=200M sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; \
         perl -e '\''$(burn 20 12)'\'' & perl -e '\''$(burn 20 12)'\''; wait" &&
    COLUMNS=1000 $REPORT -j "$job" >multi.view &&
    cat multi.view &&
    ! grep -q "cpus-per-task=1 would do" multi.view &&
    ! grep -q "one thread at a time" multi.view &&
    $REPORT -S now-1hour --name multi --recommend --json >multi.json &&
    jq -e ".groups[0].cpus.recommend == 2" multi.json &&
    cpus=$(jq -r ".groups[0].cpus.text" multi.json) &&
    mem=$(jq -r ".groups[0].mem.text" multi.json) &&
    runjob -J multi -c "$cpus" --mem="$mem" sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; \
         perl -e '\''$(burn 20 12)'\'' & perl -e '\''$(burn 20 12)'\''; wait" &&
    jq -e ".[0].outcome.state == \"completed\"" rec.json
'

test_expect_success 'listing JSON, waste and summaries read the same steps' '
    $REPORT -S now-1hour --name loop --json >list.json &&
    jq -e ".format == \"tracer-report-steps\" and .version == 1" list.json &&
    jq -e ".steps | length == 6" list.json &&
    $REPORT -S now-1hour --waste --by=group --json >waste.json &&
    jq -e "[.rows[] | select(.key | startswith(\"loop/\"))] | length == 1" \
        waste.json &&
    $REPORT -S now-1hour --summary=group >summary.out &&
    grep -q "loop/" summary.out
'

test_done
