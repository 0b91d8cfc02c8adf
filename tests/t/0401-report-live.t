#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-report --live lists the snapshots of running steps, flags stale ones and names bad files'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
BASIC=$TRACER_SRCDIR/tests/fixtures/records/basic.json

require_or_skip "jq" command -v jq

# snapshot JOB STEP USER UID [AGO_S]: a snapshot of the fixture record as
# tracerd names it, for a step started AGO_S (3600) seconds ago.
snapshot ()
{
    start=$(( $(date +%s) * 1000 - ${5:-3600} * 1000 )) &&
    jq -c --arg j "$1" --arg s "$2" --arg u "$3" --argjson uid "$4" \
        --argjson start "$start" '
        .kind = "snapshot" | del(.signature) |
        .identity.job_id = $j | .identity.step_id = $s |
        .identity.user = $u | .identity.uid = $uid |
        .time = {start_unix_ms: $start} |
        .outcome = {state: "running", complete: false,
                    tasks: [{task_id: 0, pid: 4242}]}' "$BASIC" \
        >"st/live/vm@$1@$2@node1.json"
}

test_expect_success 'setup: a configuration whose state dir is here' '
    sock=$(mktemp -d /tmp/tr0401.XXXXXX) &&
    echo "$sock" >sockdir &&
    private_conf "$sock" <<-EOF &&
	sampling.snapshot_interval: 10
	EOF
    TRACER_CONF=$PWD/tracer.yaml &&
    export TRACER_CONF
'
tr_atexit 'rm -rf "$(cat sockdir)"'

test_expect_success 'no live directory: no steps, exit 0' '
    $REPORT --live >out &&
    grep -q "^No steps running on this node ($PWD/st/live)\.$" out
'

# As root, tracer-report asks tracerd whether it runs; start one.
test_expect_success ROOT 'start tracerd on this configuration' '
    "$B/collector/tracerd" -f >tracerd.out 2>&1 &
    echo $! >tracerd.pid &&
    wait_for "test -S \"$(cat sockdir)/tracerd.sock\"" 20 &&
    test "$(stat -c %a st/live)" = 755 &&
    test "$(stat -c %a st/steps)" = 700
'
tr_atexit 'test -f tracerd.pid && kill "$(cat tracerd.pid)" 2>/dev/null; :'

test_expect_success 'an empty live directory: no steps, exit 0' '
    mkdir -p st/live &&
    $REPORT --live >out 2>err &&
    grep -q "^No steps running on this node" out &&
    test_must_be_empty err
'

test_expect_success 'two running steps are listed in job order' '
    snapshot 25 0 ana 1000 90 &&
    snapshot 24 0 testuser 1000 &&
    COLUMNS=1000 $REPORT --live >out 2>err &&
    test_must_be_empty err &&
    test $(wc -l <out) = 3 &&
    head -1 out | grep -q "^JOB  *STEP  *NAME  *USER  *NODE  *START  *ELAPSED  *CPU  *MEM  *PEAK  *PROCS  *AGE$" &&
    sed -n 2p out | grep -q "^24  *0  *python3  *testuser  *node1 .* 01:00:0[0-2]  *0\.16/2  *0 B  *50\.0 MiB  *-  *[0-9]s$" &&
    sed -n 3p out | grep -q "^25  *0  *python3  *ana  *node1 .* 00:01:3[0-2] " &&
    ! grep -q STALE out
'

test_expect_success '--json: the entries with age, staleness and the record' '
    $REPORT --live --json >out.json &&
    test "$(jq length out.json)" = 2 &&
    test "$(jq -r ".[0].record.identity.job_id" out.json)" = 24 &&
    test "$(jq -r ".[0].record.kind" out.json)" = snapshot &&
    test "$(jq ".[0].stale" out.json)" = false &&
    test "$(jq ".[0].age_s < 10" out.json)" = true &&
    test "$(jq ".[1].record.time.elapsed_s | . >= 90 and . < 93" out.json)" = true &&
    jq -r ".[1].file" out.json | grep -q "/st/live/vm@25@0@node1.json$"
'

test_expect_success '-j with one match shows the detailed view' '
    $REPORT --live -j 25 >out &&
    grep -q "^Job 25" out &&
    grep -q "Step 0 on node1 (python3): RUNNING" out &&
    grep -q "Elapsed: *00:01:3[0-2]" out &&
    grep -q "Record: *live snapshot, [0-9]* s old (not signed" out &&
    ! grep -q "Job 24" out
'

test_expect_success '-j with several jobs, -M and a job that is not there' '
    $REPORT --live -j 24,25 >out &&
    test $(wc -l <out) = 3 &&
    $REPORT --live -M vm >out &&
    test $(wc -l <out) = 3 &&
    $REPORT --live -M elsewhere >out &&
    grep -q "^No matching steps running on this node" out &&
    $REPORT --live -j 99 >out &&
    grep -q "^No matching steps running on this node" out
'

test_expect_success 'a snapshot that stopped changing is flagged, not hidden' '
    touch -d "-5 minutes" st/live/vm@25@0@node1.json &&
    COLUMNS=1000 $REPORT --live >out &&
    test $(wc -l <out) = 3 &&
    grep "^25 " out |
        grep -q "  STALE: daemon not updating: written 30[0-9] s ago, expected every 10 s$" &&
    ! grep "^24 " out | grep -q STALE &&
    # in 80 columns: no START (ELAPSED says it; then no NODE, this
    # node), the note under its row
    COLUMNS=80 $REPORT --live >out80 &&
    cat out80 &&
    test "$(awk "{ if (length(\$0) > w) w = length(\$0) } END { print w }" out80)" -le 80 &&
    head -1 out80 | grep -q "^JOB  *STEP  *NAME  *USER  .*ELAPSED  *CPU  *MEM  *PEAK  *PROCS  *AGE$" &&
    ! grep -q START out80 &&
    grep -A1 "^25 " out80 |
        grep -q "^  STALE: daemon not updating: written 30[0-9] s ago, expected every 10 s$" &&
    test $(wc -l <out80) = 4 &&
    $REPORT --live --json >out.json &&
    test "$(jq ".[1].stale" out.json)" = true
'

test_expect_success 'a malformed snapshot: named on stderr, skipped, exit 1' '
    echo "{\"format\": \"tracer-rec" >st/live/vm@26@0@node1.json &&
    test_expect_code 1 $REPORT --live >out 2>err &&
    grep -q "^tracer-report: $PWD/st/live/vm@26@0@node1.json:" err &&
    test $(grep -c "^2[45] " out) = 2 &&
    $REPORT --live -j 24 >out 2>err &&
    test_must_be_empty err &&
    rm st/live/vm@26@0@node1.json
'

test_expect_success 'a final record or a misnamed file in the live directory is refused' '
    cp "$BASIC" st/live/vm@24@0@node1.json.final.json &&
    test_expect_code 1 $REPORT --live 2>err &&
    grep -q "node1.json.final.json: a final record, not a snapshot" err &&
    rm st/live/vm@24@0@node1.json.final.json &&
    cp st/live/vm@24@0@node1.json st/live/vm@27@0@node1.json &&
    test_expect_code 1 $REPORT --live 2>err &&
    grep -q "vm@27@0@node1.json: the file name does not match" err &&
    rm st/live/vm@27@0@node1.json &&
    $REPORT --live >/dev/null
'

test_expect_success '--live with record files or a store is a usage error' '
    test_expect_code 2 $REPORT --live "$BASIC" 2>err &&
    grep -q "not record files" err &&
    test_expect_code 2 $REPORT --live --store=. 2>err &&
    test_expect_code 2 $REPORT --live -j ../x 2>err &&
    grep -q "is not a valid job id" err
'

# A user reads their own snapshots; another user's are none of theirs.
if test_have_prereq ROOT,TRACERTEST &&
   runuser -u tracertest -- test -r "$TRACER_CONF" 2>/dev/null
then
    test_set_prereq USER_VIEW
fi

test_expect_success USER_VIEW 'a user sees their own steps only, silently' '
    uid=$(id -u tracertest) &&
    snapshot 30 0 tracertest $uid &&
    chown tracertest st/live/vm@30@0@node1.json &&
    chmod 600 st/live/vm@2[45]@0@node1.json &&
    runuser -u tracertest -- $REPORT --live >out 2>err &&
    test_must_be_empty err &&
    test $(wc -l <out) = 2 &&
    grep -q "^30  *0  *python3  *tracertest " out
'

test_expect_success USER_VIEW 'a user cannot pass their file off as another user'"'"'s' '
    snapshot 31 0 ana 1000 &&
    chown tracertest st/live/vm@31@0@node1.json &&
    test_expect_code 1 $REPORT --live >out 2>err &&
    grep -q "vm@31@0@node1.json: owned by uid $(id -u tracertest), not by root or the step.s user (uid 1000)" err &&
    rm st/live/vm@31@0@node1.json st/live/vm@30@0@node1.json
'

test_expect_success ROOT 'tracerd killed: every snapshot is stale' '
    kill -KILL "$(cat tracerd.pid)" &&
    wait_for "! tr_pid_running $(cat tracerd.pid)" 10 &&
    rm tracerd.pid &&
    $REPORT --live >out &&
    test $(grep -c "STALE: tracerd is not running$" out) = 2
'

test_done
