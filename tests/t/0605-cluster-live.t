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

# live_row JOB [USER]: tracer-report --live (as USER) lists JOB, every
# column in (a wide terminal: at 80 columns START and NODE may go).
live_row ()
{
    if test -n "$2"; then
        runuser -u "$2" -- env COLUMNS=1000 "$REPORT" --live >live.out \
            2>live.err
    else
        COLUMNS=1000 "$REPORT" --live >live.out 2>live.err
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

# A run in progress, seen from the shared store alone: tracerd writes a
# live summary of each user's running steps on the node there every
# store.live_interval (30 s by default, as deployed), and removes it
# when the user's last step ends.
test_expect_success 'a run in progress: --run shows its running task from the store, figures under a minute old' '
    kuid=$(id -u $kuser) &&
    lfile=$TRACER_STORE/$TRACER_CLUSTER_NAME/live/$TRACER_NODENAME/$kuid.tsv &&
    echo "$lfile" >lfile &&
    stop=/tmp/tracer-live-run.$$ && echo $stop >stopfile && rm -f $stop &&
    runuser -u $kuser -- sbatch --parsable --tracer=tag=run:liverun-1 \
        --mem=64M -o /dev/null --chdir=/tmp --wrap \
        "perl -e \"my \\\$t = time + 2; 1 while time < \\\$t\"; for i in \$(seq 120); do test -e $stop && break; sleep 1; done" \
        >ljob &&
    ljob=$(cat ljob) &&
    wait_for "test -f \"$lfile\"" 60 &&
    test "$(stat -c "%U %a" "$lfile")" = "root 640" &&
    runuser -u $kuser -- "$REPORT" --run=liverun-1 >lrun.out &&
    cat lrun.out &&
    grep -q "^Running now: 1 task (figures at most 00:00:[0-5][0-9] old)\$" lrun.out &&
    grep -q "^  $ljob (.*) on $TRACER_NODENAME: [0-9:]* so far, CPU " lrun.out &&
    grep -q "^Elapsed: unknown (still running)\$" lrun.out &&
    runuser -u $kuser -- "$REPORT" --run=liverun-1 --json >lrun.json &&
    jq -e ".running == [\"$ljob\"] and .run.running == true
           and (.tasks[] | select(.job_id == \"$ljob\")
                | .state == \"RUNNING\" and .node == \"$TRACER_NODENAME\"
                  and .live.age_s <= 60 and .live.stale == false
                  and .req_mem_bytes == 67108864)" lrun.json &&
    runuser -u $kuser -- "$REPORT" --runs -P -o run,jobs,failed >lruns.out &&
    grep -qx "liverun-1|1|0" lruns.out &&
    "$REPORT" -a --run=liverun-1 >lrun-root.out &&
    grep -q "^Running now: 1 task" lrun-root.out
'

test_expect_success USER_JOBS 'the live summary is the user'"'"'s to read, nobody'"'"'s to write, another user'"'"'s not to read' '
    lfile=$(cat lfile) &&
    runuser -u tracertest -- cat "$lfile" >/dev/null &&
    ! runuser -u tracertest -- sh -c "echo x >>\"$lfile\"" &&
    ! runuser -u tracertest -- sh -c "echo x >\"\${0%/*}/0.tsv\"" "$lfile" &&
    ! runuser -u nobody -- cat "$lfile" >/dev/null 2>&1
'

test_expect_success 'the run ended: its live summary leaves the store, the view is made of its records' '
    ljob=$(cat ljob) && lfile=$(cat lfile) &&
    touch $(cat stopfile) &&
    wait_record $ljob &&
    wait_for "! test -e \"$lfile\"" 60 &&
    runuser -u $kuser -- "$REPORT" --run=liverun-1 --json >lend.json &&
    jq -e ".running == [] and .run.running == false
           and (.tasks[] | select(.job_id == \"$ljob\")
                | .state == \"COMPLETED\" and (has(\"live\") | not))" lend.json &&
    runuser -u $kuser -- "$REPORT" --run=liverun-1 >lend.out &&
    ! grep -q "^Running now" lend.out &&
    rm -f $(cat stopfile)
'

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
    grep -A1 "^$kjob " k.out | grep -q "  STALE: tracerd is not running$"
'

test_expect_success USER_JOBS 'the user, who cannot ask tracerd, sees it stale by its age' '
    kjob=$(sed -n "s/^JOB=//p" k.err) &&
    wait_for "live_row $kjob tracertest && grep -q STALE live.out" 10 &&
    grep -A1 "^$kjob " live.out |
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

# A store without ACLs (or store.job_access: owner): the user owns the
# live summary of their steps, and could chmod it and write rows of their
# own making.  tracerd signs it as it signs records, and a summary its
# user owns is believed only with that signature over every byte.
test_expect_success USER_JOBS 'a live summary its user owns (no ACLs) is believed only as tracerd signed it' '
    conf=$TRACER_CLUSTER_DIR/etc/tracer.yaml &&
    sed -i "s/^store:\$/store:\n  job_access: owner/" "$conf" &&
    grep -x "  job_access: owner" "$conf" &&
    tracerd_stop && tracerd_start &&
    nfile=$TRACER_STORE/$TRACER_CLUSTER_NAME/live/$TRACER_NODENAME/$(id -u tracertest).tsv &&
    runuser -u tracertest -- sbatch --parsable --tracer=tag=run:noacl-1 \
        --mem=64M -o /dev/null --chdir=/tmp --wrap "sleep 300" >njob &&
    njob=$(cat njob) &&
    test_when_finished "scancel $njob" &&
    wait_for "test -f \"$nfile\" && grep -qw $njob \"$nfile\"" 60 &&
    test "$(stat -c %U "$nfile")" = tracertest &&
    tail -n 1 "$nfile" | grep -q "^#signature munge-sha256	MUNGE:" &&
    runuser -u tracertest -- "$REPORT" --run=noacl-1 --json >n.json 2>n.err &&
    jq -e ".running == [\"$njob\"]" n.json &&
    test_must_be_empty n.err &&
    # no more writes: what the user leaves there stays
    signed=$(mktemp /tmp/tr0605.XXXXXX) &&
    test_when_finished "rm -f $signed" &&
    cp "$nfile" "$signed" && chmod 644 "$signed" &&
    tracerd_stop &&
    test -f "$nfile" &&
    # rewritten by its user, without the signature: a job that does not
    # exist, running
    runuser -u tracertest -- sh -c "chmod u+w \"\$1\" &&
        sed -e \"/^#signature/d\" -e \"s/\\b$njob\\b/999999/g\" \"\$2\" >\"\$1\"" \
        sh "$nfile" "$signed" &&
    grep -qw 999999 "$nfile" &&
    # (the run has nothing else to show: tracer-report may exit 1)
    { runuser -u tracertest -- "$REPORT" --run=noacl-1 --json >f.json 2>f.err
      test $? -le 1; } &&
    ! grep -q 999999 f.json &&
    # an admin is told why
    { "$REPORT" -a --run=noacl-1 --json >fr.json 2>fr.err; test $? -le 3; } &&
    cat fr.err &&
    ! grep -q 999999 fr.json &&
    grep "REJECTED: live summary: unsigned, and its user owns it" fr.err &&
    runuser -u tracertest -- "$REPORT" --live >f.live 2>/dev/null &&
    ! grep -q "^999999" f.live &&
    # the signature kept, the body changed
    runuser -u tracertest -- sh -c "
        sed -e \"s/\\b$njob\\b/999999/g\" \"\$2\" >\"\$1\"" \
        sh "$nfile" "$signed" &&
    { runuser -u tracertest -- "$REPORT" --run=noacl-1 --json >t.json 2>t.err
      test $? -le 1; } &&
    ! grep -q 999999 t.json &&
    { "$REPORT" -a --run=noacl-1 --json >tr.json 2>tr.err; test $? -le 3; } &&
    cat tr.err &&
    ! grep -q 999999 tr.json &&
    grep "REJECTED: live summary: live summary has been modified after signing" tr.err &&
    # the file as tracerd wrote it: believed (stale, tracerd is stopped)
    runuser -u tracertest -- sh -c "cat \"\$2\" >\"\$1\"" sh "$nfile" "$signed" &&
    runuser -u tracertest -- "$REPORT" --run=noacl-1 --json >s.json 2>s.err &&
    jq -e ".running == [\"$njob\"]" s.json &&
    tracerd_start
'

# ELAPSED is now less the start, however old the last reading is.
test_expect_success 'a running step'"'"'s ELAPSED grows with the wall clock' '
    srun --tracer --mem=64M sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec sleep 60" \
        2>el.err &
    wait_for "grep -q ^JOB= el.err" 20 &&
    ejob=$(sed -n "s/^JOB=//p" el.err) &&
    test_when_finished "scancel $ejob" &&
    wait_for "live_row $ejob" 20 &&
    sleep 8 &&
    live_row $ejob &&
    el=$(grep "^$ejob " live.out | awk "{ print \$7 }") &&
    echo "ELAPSED $el" &&
    secs=$(echo "$el" | awk -F: "{ print \$(NF-2) * 3600 + \$(NF-1) * 60 + \$NF }") &&
    test "$secs" -ge 8
'

test_expect_success 'stop the cluster' '
    cluster_down
'
test_done
