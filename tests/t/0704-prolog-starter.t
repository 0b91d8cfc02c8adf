#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-prolog lsf-starter: LSF JOB_STARTER as the job user

LSF runs a queue'"'"'s JOB_STARTER as the job'"'"'s user, with the job'"'"'s
environment, as "/bin/sh -c \"STARTER COMMAND\"".  With daemon.job_starters
tracerd hears such a starter for its own process tree only, as its own
uid; without it the job still runs, untraced.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

batch_preamble

# start_tracerd STARTERS: a tracerd that hears job starters or not
start_tracerd ()
{
    private_conf "$sock" <<-EOF &&
	daemon.job_starters: $1
	sampling.interval: 0.2
	signing.enabled: false
	EOF
    private_tracerd_start
}

stop_tracerd ()
{
    private_tracerd_stop &&
    rm -f "$sock/tracerd.sock"
}

# starter JOBID CMD...: the JOB_STARTER line as LSF runs it, as the user
starter ()
{
    job=$1 && shift &&
    (cd /tmp && runuser -u tracertest -- env -i \
        PATH=/bin:/usr/bin HOME=/tmp USER=tracertest LSFUSER=tracertest \
        LSB_JOBID="$job" LSB_BATCH_JID="$job" LSB_JOBINDEX=0 \
        LSB_JOBNAME=starter-test LSB_QUEUE=normal \
        LSB_MCPU_HOSTS="$(hostname -s) 1" \
        TRACER_CONF="$TRASH/tracer.yaml" \
        /bin/sh -c "'$P' --log '$TRASH/prolog.log' lsf-starter $*")
}

test_expect_success 'setup' '
    TRASH=$PWD &&
    sock=$(mktemp -d /tmp/tr0704.XXXXXX) &&
    chmod 755 "$sock" "$PWD" &&
    echo "$sock" >sockdir &&
    touch prolog.log && chmod 666 prolog.log
'
tr_atexit 'test -f tracerd.pid && kill "$(cat tracerd.pid)" 2>/dev/null;
           rm -rf "$(cat sockdir)"'

test_expect_success 'job_starters off: the job runs untraced, with its status' '
    start_tracerd false &&
    test "$(stat -c %a "$sock/tracerd.sock")" = 600 &&
    test_expect_code 5 starter 700 "sh -c \"echo ran; exit 5\"" >out &&
    grep -qx ran out &&
    grep -q "lsf-starter: job 700: tracerd at .*: connect .*Permission denied" \
        prolog.log &&
    stop_tracerd &&
    ! test -e spool/default/jobs/*/700
'

test_expect_success 'job_starters on: the job is traced as the user' '
    start_tracerd true &&
    test "$(stat -c %a "$sock/tracerd.sock")" = 666 &&
    starter 701 "$BURN cpu=0.8" >burn.out &&
    wait_for "ls store/default/jobs/*/701/0.*.json" 20 &&
    rec=$(ls store/default/jobs/*/701/0.*.json) &&
    jq -e ".identity.scheduler == \"lsf\" and .identity.uid == $(id -u tracertest)
           and .identity.user == \"tracertest\" and .identity.partition == \"normal\"
           and .request.cpus_on_node == 1 and .outcome.state == \"completed\"
           and .outcome.exit_code == 0 and .cgroup.attach == \"process-tree\"" \
        "$rec" &&
    within "$(jq .summary.cpu.total_s "$rec")" "$(jq .cpu_s burn.out)" 10
'

test_expect_success 'the record reads like any other' '
    TRACER_CONF=$PWD/tracer.yaml $REPORT --allow-unsigned -j 701 >view &&
    grep -q "701" view &&
    grep -qi "lsf" view
'

test_expect_success 'a failing command: its status, and the record says so' '
    test_expect_code 3 starter 702 "sh -c \"exit 3\"" &&
    wait_for "ls store/default/jobs/*/702/0.*.json" 20 &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3" \
        store/default/jobs/*/702/0.*.json
'

test_expect_success 'a signal sent to the starter reaches the job' '
    (starter 703 "sh -c \"trap \\\"echo got-term; exit 7\\\" TERM; sleep 30 & wait\"" \
        >sig.out; echo $? >sig.rc) &
    wait_for "grep -q \"job 703: tracerd follows\" prolog.log" 20 &&
    pid=$(sed -n "s/.*tracer-prolog\[\([0-9]*\)\]: lsf-starter: job 703: tracerd follows.*/\1/p" prolog.log) &&
    kill -TERM "$pid" &&
    wait_for "test -s sig.rc" 20 &&
    test "$(cat sig.rc)" = 7 &&
    grep -qx got-term sig.out
'

test_expect_success 'a user cannot speak for another user, pid or job' '
    # LSFUSER=root is the job environment talking: the record says who
    # the kernel says ran it
    (cd /tmp && runuser -u tracertest -- env -i PATH=/bin:/usr/bin \
        LSFUSER=root LSB_JOBID=704 TRACER_CONF="$TRASH/tracer.yaml" \
        "$P" lsf-starter true) &&
    wait_for "ls store/default/jobs/*/704/0.*.json" 20 &&
    jq -e ".identity.uid == $(id -u tracertest) and .identity.user == \"tracertest\"" \
        store/default/jobs/*/704/0.*.json &&
    # the daemon hears nothing else from an unprivileged peer: a pbs-hook
    # start as the user is refused
    runuser -u tracertest -- env -i PATH=/bin:/usr/bin \
        TRACER_CONF="$TRASH/tracer.yaml" "$P" --log "$TRASH/prolog.log" \
        pbs-hook --event begin --job 705.srv --user tracertest \
        --group tracertest &&
    grep -q "job 705.srv: tracerd at .*: permission denied" prolog.log &&
    grep -q "a job starter may only speak for an LSF job" tracerd.log
'

# starter_as USER CONF JOBID CMD...: the JOB_STARTER as USER, with the
# configuration file CONF (the job environment names it)
starter_as ()
{
    u=$1 && c=$2 && job=$3 && shift 3 &&
    (cd /tmp && runuser -u "$u" -- env -i \
        PATH=/bin:/usr/bin HOME=/tmp USER="$u" LSFUSER="$u" \
        LSB_JOBID="$job" LSB_BATCH_JID="$job" LSB_JOBINDEX=0 \
        LSB_JOBNAME=starter-test LSB_QUEUE=normal \
        LSB_MCPU_HOSTS="$(hostname -s) 1" TRACER_CONF="$c" \
        /bin/sh -c "'$P' --log '$TRASH/prolog.log' lsf-starter $*")
}

# A starter (as the user, any program) names a cluster and a node: the
# step is this daemon'"'"'s cluster'"'"'s and this node'"'"'s all the same.
test_expect_success 'a starter names no other cluster or node: the record is the daemon'"'"'s' '
    id="{\"scheduler\":\"lsf\",\"cluster\":\"victim\",\"job_id\":\"711\",\"step_id\":\"0\",\"node\":\"elsewhere\"}" &&
    # forge.sh NOTIFY SOCKET IDENTITY: a start of its own process tree
    cat >forge.sh <<-\EOF &&
	#!/bin/sh
	exec "$1" "$2" "{\"op\":\"step_start\",\"pid\":$$,\"identity\":$3,\"request\":{},\"attach\":{\"tree\":true},\"tags\":{},\"task_id\":0}"
	EOF
    chmod 755 forge.sh &&
    runuser -u tracertest -- ./forge.sh "$B/tests/notify" "$sock/tracerd.sock" "$id" &&
    runuser -u tracertest -- "$B/tests/notify" "$sock/tracerd.sock" \
        "{\"op\":\"step_end\",\"identity\":$id}" &&
    wait_for "ls store/default/jobs/*/711/0.$(hostname -s).json" 20 &&
    jq -e ".identity.cluster == \"default\" and .identity.node == \"$(hostname -s)\"
           and .identity.uid == $(id -u tracertest)" store/default/jobs/*/711/0.*.json &&
    ! test -e store/victim
'

# Job 709 ran here as root; a starter of tracertest names it: the job
# runs, and its record never takes the place of root'"'"'s.
test_expect_success 'a starter cannot replace another user'"'"'s record in the store' '
    jq ".identity.job_id = \"709\" | .identity.uid = 0 | .identity.user = \"root\"" \
        store/default/jobs/*/701/0.*.json >709.json &&
    "$B/tests/storeput" store 709.json &&
    rec=$(ls store/default/jobs/*/709/0.$(hostname -s).json) &&
    cp "$rec" 709.saved &&
    starter_as tracertest "$TRASH/tracer.yaml" 709 "sh -c \"echo ran\"" >out &&
    grep -qx ran out &&
    aside=store/default/refused/709/0.$(hostname -s).uid$(id -u tracertest).json &&
    wait_for "test -f $aside" 20 &&
    cmp "$rec" 709.saved &&
    jq -e ".identity.uid == $(id -u tracertest)" "$aside" &&
    test "$(ls store/default/jobs/*/709/)" = "0.$(hostname -s).json" &&
    TRACER_CONF=$PWD/tracer.yaml $REPORT --allow-unsigned -a >l.out 2>l.err &&
    grep -q "^tracer-report: 1 record set aside under default/refused/ " l.err
'

test_expect_success TRACERTEST2 'a starter cannot speak for a job another user runs here' '
    (starter_as tracertest2 "$TRASH/tracer.yaml" 710 "sleep 3" >bg.out
     echo $? >bg.rc) &
    wait_for "grep -q \"lsf-starter: job 710: tracerd follows\" prolog.log" 20 &&
    starter_as tracertest "$TRASH/tracer.yaml" 710 "sh -c \"echo ran\"" >out &&
    grep -qx ran out &&
    grep -q "uid $(id -u tracertest): job starter refused (the job is another user.s)" \
        tracerd.log &&
    wait_for "test -s bg.rc" 20 &&
    test "$(cat bg.rc)" = 0 &&
    wait_for "ls store/default/jobs/*/710/0.*.json" 20 &&
    jq -e ".identity.uid == $(id -u tracertest2)" store/default/jobs/*/710/0.*.json &&
    ! test -e store/default/refused/710
'

# hook USER JOB EVENT: tracer-prolog pbs-hook as USER, as a PBS hook
# would run it had the site made it run as that user
hook ()
{
    runuser -u "$1" -- env -i PATH=/bin:/usr/bin \
        TRACER_CONF="$TRASH/tracer.yaml" "$P" --log "$TRASH/prolog.log" \
        pbs-hook --event "$3" --job "$2" --user tracertest --group tracertest
}

test_expect_success 'daemon.notify_users: a listed user speaks for any job' '
    stop_tracerd &&
    private_conf "$sock" <<-EOF &&
	daemon.job_starters: false
	daemon.notify_users: [root, tracertest]
	sampling.interval: 0.2
	signing.enabled: false
	EOF
    private_tracerd_start &&
    test "$(stat -c %a "$sock/tracerd.sock")" = 666 &&
    hook tracertest 706.srv begin &&
    grep -q "pbs-hook: job 706.srv: tracerd follows it on " prolog.log &&
    hook tracertest 706.srv end &&
    grep -q "pbs-hook: job 706.srv: ended on " prolog.log &&
    wait_for "ls store/default/jobs/*/706.srv/0.*.json" 20 &&
    jq -e ".identity.scheduler == \"pbs\" and .identity.job_id == \"706.srv\"" \
        store/default/jobs/*/706.srv/0.*.json &&
    ! grep -q "refused connection from uid $(id -u tracertest)" tracerd.log
'

test_expect_success 'daemon.notify_users: a user not listed is refused' '
    stop_tracerd &&
    private_conf "$sock" <<-EOF &&
	daemon.job_starters: false
	daemon.notify_users: [root, nobody]
	sampling.interval: 0.2
	signing.enabled: false
	EOF
    private_tracerd_start &&
    test "$(stat -c %a "$sock/tracerd.sock")" = 666 &&
    hook tracertest 707.srv begin &&
    # the daemon closes on a peer it does not hear: the hook sees the
    # connection reset (or a broken pipe) and the job is not followed
    grep -q "pbs-hook: job 707.srv: tracerd at $sock/tracerd.sock: " \
        prolog.log &&
    grep -q "refused connection from uid $(id -u tracertest)" tracerd.log &&
    ! grep -q "pbs-hook: job 707.srv: tracerd follows" prolog.log &&
    ! ls -d store/default/jobs/*/707.srv 2>/dev/null
'

test_done
