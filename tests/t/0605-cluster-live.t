#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-report --live in a real cluster: running steps, per-user view, stale after tracerd dies'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# live_row JOB [USER]: tracer-report --live (as USER) lists JOB.
live_row ()
{
    if test -n "$2"; then
        runuser -u "$2" -- "$REPORT" --live >live.out 2>live.err
    else
        "$REPORT" --live >live.out 2>live.err
    fi
    grep -q "^$1 " live.out
}

test_expect_success 'start a cluster that snapshots running steps every second' '
    cluster_up --plugstack-args "enable=optin" --sampling snapshot_interval=1 &&
    live=$TRACER_CLUSTER_DIR/run/tracer/live
'

# --mem: without it a job asks for the whole node's memory, and the
# second job would wait for the first.
test_expect_success 'a running step shows in tracer-report --live as root' '
    srun --tracer --mem=64M sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec sleep 20" \
        2>root.err &
    echo $! >root.pid &&
    wait_for "grep -q ^JOB= root.err" 20 &&
    rjob=$(sed -n "s/^JOB=//p" root.err) &&
    echo $rjob >rjob &&
    wait_for "live_row $rjob" 20 &&
    grep "^$rjob " live.out | grep -q "^$rjob  *0  *[^ ]*  *root  *$TRACER_NODENAME " &&
    ! grep -q STALE live.out &&
    test_must_be_empty live.err &&
    test "$(stat -c %a "$live")" = 755 &&
    test "$(stat -c "%U %a" "$live/tracertest@$rjob@0@$TRACER_NODENAME.json")" = "root 600"
'

test_expect_success '-j shows the detailed view of the running step' '
    "$REPORT" --live -j $(cat rjob) >one.out &&
    grep -q "^Job $(cat rjob)" one.out &&
    grep -q "Step 0 on $TRACER_NODENAME.*: RUNNING" one.out &&
    grep -q "Record: *live snapshot" one.out
'

# The unprivileged user must reach slurm.conf, the munge socket and the
# tracer configuration.
if test_have_prereq TRACERTEST &&
   runuser -u tracertest -- test -r "$SLURM_CONF" 2>/dev/null &&
   runuser -u tracertest -- test -w "$TRACER_MUNGE_SOCKET" 2>/dev/null &&
   runuser -u tracertest -- test -r "$TRACER_CONF" 2>/dev/null
then
    test_set_prereq USER_JOBS
fi

test_expect_success USER_JOBS 'a user sees their own step, owned by them, and not root'"'"'s' '
    runuser -u tracertest -- srun --tracer --mem=64M --chdir=/tmp \
        sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec sleep 10" 2>user.err &
    echo $! >user.pid &&
    wait_for "grep -q ^JOB= user.err" 20 &&
    ujob=$(sed -n "s/^JOB=//p" user.err) &&
    echo $ujob >ujob &&
    wait_for "live_row $ujob tracertest" 20 &&
    grep -q "^$ujob  *0  *[^ ]*  *tracertest  *$TRACER_NODENAME " live.out &&
    test_must_be_empty live.err &&
    ! grep -q "^$(cat rjob) " live.out &&
    test "$(stat -c "%U %a" "$live/tracertest@$ujob@0@$TRACER_NODENAME.json")" = "tracertest 600" &&
    live_row $ujob &&
    grep -q "^$(cat rjob) " live.out
'

test_expect_success 'the snapshots are gone once the steps have ended' '
    wait $(cat root.pid) &&
    { ! test -f user.pid || wait $(cat user.pid); } &&
    wait_for "! ls \"$live\" | grep -q json" 10 &&
    "$REPORT" --live >end.out &&
    grep -q "^No steps running on this node" end.out
'

# The step of the next tests runs as the unprivileged user where it can.
if test_have_prereq USER_JOBS; then
    kuser=tracertest
else
    kuser=root
fi

test_expect_success 'SIGKILL of tracerd: root sees the running step as stale at once' '
    runuser -u $kuser -- srun --tracer --chdir=/tmp \
        sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec sleep 15" 2>k.err &
    echo $! >k.pid &&
    wait_for "grep -q ^JOB= k.err" 20 &&
    kjob=$(sed -n "s/^JOB=//p" k.err) &&
    wait_for "live_row $kjob" 20 &&
    ! grep -q STALE live.out &&
    tracerd_kill &&
    "$REPORT" --live >k.out &&
    grep "^$kjob " k.out | grep -q "  STALE: tracerd is not running$"
'

test_expect_success USER_JOBS 'the user, who cannot ask tracerd, sees it stale by its age' '
    kjob=$(sed -n "s/^JOB=//p" k.err) &&
    wait_for "live_row $kjob tracertest && grep -q STALE live.out" 10 &&
    grep "^$kjob " live.out |
        grep -q "  STALE: daemon not updating: written [0-9]* s ago, expected every 1 s$" &&
    test_must_be_empty live.err
'

test_expect_success 'restarted, tracerd resumes the step and removes its snapshot at the end' '
    tracerd_start &&
    kjob=$(sed -n "s/^JOB=//p" k.err) &&
    wait_for "live_row $kjob && ! grep -q STALE live.out" 20 &&
    wait $(cat k.pid) &&
    wait_for "! ls \"$live\" | grep -q json" 10
'

test_expect_success 'stop the cluster' '
    cluster_down
'
test_done
