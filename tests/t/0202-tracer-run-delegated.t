#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-run without root: a cgroup of its own in a delegated cgroup2 subtree, else the process tree

Root makes a cgroup2 directory and hands it to the tracertest user the way
systemd Delegate=yes does (the directory, cgroup.procs, cgroup.threads and
cgroup.subtree_control chowned), moves a shell into it and runs tracer-run
there as that user.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
RUN=$B/collector/tracer-run
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

if ! test_have_prereq ROOT || ! test_have_prereq TRACERTEST; then
    skip_all='needs root and the tracertest user'
    test_done
fi

# The cgroup2 mount: /sys/fs/cgroup on a pure cgroup2 host, often
# /sys/fs/cgroup/unified on a hybrid one.  The file system type follows
# the " - " separator of a mountinfo line.
CG2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") {
                 if ($(i + 1) == "cgroup2") { print $5; exit }
                 break } }' /proc/self/mountinfo)
require_or_skip "a cgroup2 mount" test -n "$CG2"
DELEG=$CG2/tracer-test.$$
NODELEG=$CG2/tracer-test.$$.root

# Remove the test's directories, tracer-run's leftovers first, whatever
# happened.
tr_atexit 'for d in "$DELEG"/tracer-run.* "$DELEG" "$NODELEG"; do
               test -d "$d" && rmdir "$d"; done'

# in_cgroup DIR CMD...: run CMD as tracertest from a shell moved into DIR.
in_cgroup ()
{
    sh -c 'echo $$ >"$1/cgroup.procs" && shift &&
           exec setpriv --reuid=tracertest --regid=tracertest --init-groups "$@"' \
        sh "$@"
}

test_expect_success 'setup: a subtree delegated to tracertest, one not' '
    mkdir "$DELEG" "$NODELEG" &&
    chown tracertest "$DELEG" "$DELEG/cgroup.procs" "$DELEG/cgroup.threads" \
        "$DELEG/cgroup.subtree_control" &&
    mkdir out &&
    chown tracertest out
'

test_expect_success 'delegated: the command gets a cgroup2 directory of its own' '
    in_cgroup "$DELEG" $RUN --no-sign -o out/d.json -- $BURN cpu=2,mem=64M \
        >d.out 2>d.err &&
    test_debug "cat d.err" &&
    ! grep -q "process tree" d.err &&
    $REPORT --allow-unsigned --json out/d.json >d.json &&
    test "$(jq -r ".[0].cgroup.attach" d.json)" = cgroup2-delegated &&
    test "$(jq -r ".[0].cgroup.version" d.json)" = v2 &&
    jq -r ".[0].cgroup.paths.unified" d.json >dir &&
    grep -qx "${DELEG#$CG2}/tracer-run\.[0-9]*" dir
'

test_expect_success 'delegated: CPU seconds exact, within 5% of the command own view' '
    test "$(jq -r ".[0].summary.cpu.source" d.json)" = cgroup-v2:cpu.stat &&
    test "$(jq -r ".[0].summary.cpu.exact" d.json)" = true &&
    within "$(jq ".[0].summary.cpu.total_s" d.json)" "$(jq .cpu_s d.out)" 5
'

test_expect_success 'delegated: pressure from the directory itself, not a mirror' '
    test "$(jq -r ".[0].summary.pressure.source" d.json)" = cgroup2 &&
    test "$(jq -r ".[0].summary.pressure.exact" d.json)" = true
'

# The test leaves the subtree's cgroup.subtree_control empty, so no
# memory controller counts for the command: memory comes from its
# processes.
test_expect_success 'delegated: memory is labelled with where it came from' '
    jq -r ".[0].summary.memory.source" d.json >memsrc &&
    test_debug "cat memsrc" &&
    grep -Eqx "proc:stat rss sum \(cgroup processes, sampled\)|getrusage:ru_maxrss \(largest single process\)" memsrc &&
    test "$(jq -r ".[0].summary.memory.exact" d.json)" = false &&
    test "$(jq ".[0].summary.memory.peak_bytes" d.json)" -ge 67108864
'

test_expect_success 'delegated: the directory tracer-run made is gone afterwards' '
    test ! -e "$(cat dir)" &&
    ! ls -d "$DELEG"/tracer-run.* 2>/dev/null
'

test_expect_success 'delegated: a directory still in use is left, with a message' '
    in_cgroup "$DELEG" $RUN --no-sign -o out/l.json -- \
        sh -c "sleep 2 >/dev/null 2>&1 &" 2>l.err &&
    test_debug "cat l.err" &&
    left=$CG2$(jq -r .cgroup.paths.unified out/l.json) &&
    grep -q "^tracer-run: cannot remove $left: Device or resource busy" l.err &&
    test -d "$left" &&
    wait_for "grep -qx \"populated 0\" \"$left/cgroup.events\"" 10 &&
    rmdir "$left"
'

test_expect_success 'delegated but --no-cgroup: the process tree, labelled' '
    in_cgroup "$DELEG" $RUN -q --no-sign --no-cgroup -o out/n.json -- true &&
    test "$(jq -r .cgroup.attach out/n.json)" = process-tree
'

test_expect_success 'delegated, no directory may be made: the process tree, with a note' '
    echo 0 >"$DELEG/cgroup.max.descendants" &&
    test_when_finished "echo max >\"$DELEG/cgroup.max.descendants\"" &&
    in_cgroup "$DELEG" $RUN --no-sign -o out/m.json -- $BURN cpu=0.5 \
        >m.out 2>m.err &&
    test_debug "cat m.err" &&
    grep -q "^tracer-run: mkdir $DELEG/tracer-run\.[0-9]*: .*; following the process tree$" m.err &&
    test "$(jq -r .cgroup.attach out/m.json)" = process-tree &&
    test "$(jq -r .summary.cpu.source out/m.json)" = getrusage:RUSAGE_CHILDREN &&
    within "$(jq .summary.cpu.total_s out/m.json)" "$(jq .cpu_s m.out)" 5
'

test_expect_success 'not delegated: the process tree, with a note that says why' '
    in_cgroup "$NODELEG" $RUN --no-sign -o out/t.json -- $BURN cpu=0.5 \
        >t.out 2>t.err &&
    test_debug "cat t.err" &&
    grep -q "^tracer-run: cgroup2 directory $NODELEG is not delegated to uid $(id -u tracertest); following the process tree$" t.err &&
    test "$(jq -r .cgroup.attach out/t.json)" = process-tree &&
    test "$(jq -r ".cgroup | has(\"paths\")" out/t.json)" = false &&
    test "$(jq -r .summary.cpu.source out/t.json)" = getrusage:RUSAGE_CHILDREN &&
    test "$(jq -r ".summary.pressure.source // \"none\"" out/t.json)" != cgroup2 &&
    within "$(jq .summary.cpu.total_s out/t.json)" "$(jq .cpu_s t.out)" 5 &&
    test -z "$(ls -d "$NODELEG"/*/ 2>/dev/null)"
'

test_done
