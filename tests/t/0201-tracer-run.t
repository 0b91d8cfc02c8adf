#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-run measures a command exactly, forwards signals and exits with its status'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
RUN=$B/collector/tracer-run
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

test_expect_success 'root: the demo runs in its own cgroup with exact totals' '
    $RUN -q --no-sign --demo -o demo.json >workload.out &&
    $REPORT --allow-unsigned --json demo.json >recs.json &&
    test "$(jq -r ".[0].summary.cpu.source" recs.json)" = "cgroup-v1:cpuacct.usage" &&
    test "$(jq -r ".[0].summary.memory.exact" recs.json)" = true &&
    test "$(jq -r ".[0].outcome.state" recs.json)" = completed &&
    within "$(jq ".[0].summary.cpu.total_s" recs.json)" \
        "$(jq .cpu_s workload.out)" 5
'

test_expect_success 'CPU seconds and peak memory within 5% of the workload own view' '
    $RUN -q --no-sign -o burn.json -- $BURN cpu=2,mem=300M >burn.out &&
    $REPORT --allow-unsigned --json burn.json >b.json &&
    within "$(jq ".[0].summary.cpu.total_s" b.json)" "$(jq .cpu_s burn.out)" 5 &&
    within "$(jq ".[0].summary.memory.peak_bytes" b.json)" \
        "$(jq .maxrss_bytes burn.out)" 5
'

test_expect_success 'the cgroups tracer-run made are gone afterwards' '
    jq -r ".[0].cgroup.paths[]" b.json >paths &&
    test -s paths &&
    while read -r dir; do
        test ! -e "$dir" || return 1
    done <paths
'

test_expect_success 'process-tree mode: exact CPU from getrusage' '
    $RUN -q --no-sign --no-cgroup -o tree.json -- $BURN cpu=1,mem=50M,children=3,child_cpu=0.2 >tree.out &&
    $REPORT --allow-unsigned --json tree.json >t.json &&
    test "$(jq -r ".[0].cgroup.attach" t.json)" = process-tree &&
    test "$(jq -r ".[0].summary.cpu.source" t.json)" = "getrusage:RUSAGE_CHILDREN" &&
    within "$(jq ".[0].summary.cpu.total_s" t.json)" "$(jq .cpu_s tree.out)" 5
'

test_expect_success 'exit status is the command status' '
    test_expect_code 7 $RUN -q --no-sign -o e.json -- sh -c "exit 7" &&
    $REPORT --allow-unsigned --json e.json >e2.json &&
    test "$(jq -r ".[0].outcome.state" e2.json)" = failed &&
    test "$(jq ".[0].outcome.exit_code" e2.json)" = 7
'

test_expect_success 'a command killed by a signal gives 128+N' '
    test_expect_code 137 $RUN -q --no-sign -o k.json -- sh -c "kill -KILL \$\$" &&
    $REPORT --allow-unsigned --json k.json >k2.json &&
    test "$(jq ".[0].outcome.signal" k2.json)" = 9
'

test_expect_success 'a missing command gives 127' '
    test_expect_code 127 $RUN -q --no-sign -o m.json -- ./no-such-command 2>err &&
    grep -q "No such file or directory" err
'

test_expect_success 'SIGTERM to tracer-run reaches the command and is recorded' '
    $RUN -q --no-sign -o s.json -- sleep 60 &
    pid=$! &&
    sleep 1 &&
    kill -TERM $pid &&
    test_expect_code 143 wait $pid &&
    $REPORT --allow-unsigned --json s.json >s2.json &&
    test "$(jq ".[0].outcome.signal" s2.json)" = 15
'

test_expect_success 'tags given on the command line are in the record' '
    $RUN -q --no-sign -t pipeline:rnaseq -t sample:S1 -o tag.json -- true &&
    $REPORT --allow-unsigned --json tag.json >tag2.json &&
    test "$(jq -r ".[0].tags.pipeline" tag2.json)" = rnaseq &&
    test "$(jq -r ".[0].tags.sample" tag2.json)" = S1
'

test_expect_success 'the record file is private to its owner' '
    test "$(stat -c %a demo.json)" = 600
'

test_expect_success 'an unsigned record is refused unless asked for' '
    test_expect_code 4 $REPORT demo.json 2>err &&
    grep -q "unsigned" err
'
test_done
