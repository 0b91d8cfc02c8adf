#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-prolog lsf-starter: LSF JOB_STARTER as the job user

LSF runs a queue'"'"'s JOB_STARTER as the job'"'"'s user, with the job'"'"'s
environment, as "/bin/sh -c \"STARTER COMMAND\"".  With daemon.job_starters
tracerd hears such a starter for its own process tree only, as its own
uid, and keeps its record only where LSF (bjobs) says the job is that
user'"'"'s and runs on this host; without it the job still runs,
untraced.  No LSF runs here: bjobs is a stand-in that answers as
"bjobs -w" does from the jobs each test submits.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

batch_preamble

# start_tracerd STARTERS: a tracerd that hears job starters or not,
# asking the bjobs stand-in who owns their jobs
start_tracerd ()
{
    private_conf "$sock" <<-EOF &&
	daemon.job_starters: $1
	daemon.bjobs: "$TRASH/bjobs"
	sampling.interval: 0.2
	signing.enabled: false
	EOF
    private_tracerd_start
}

# submit JOBID USER [STAT [HOSTS]]: LSF knows the job (the stand-in's
# table), by default running on this host
submit ()
{
    echo "$1 $2 ${3:-RUN} ${4:-1*$(hostname -s)}" >>"$TRASH/lsf-jobs"
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

# bjobs -w JOB as LSF prints it, for the jobs in lsf-jobs ("ID USER
# STAT HOSTS" lines); "Job <ID> is not found" (exit 255) for the others
test_expect_success 'setup' '
    TRASH=$PWD &&
    sock=$(mktemp -d /tmp/tr0704.XXXXXX) &&
    chmod 755 "$sock" "$PWD" &&
    echo "$sock" >sockdir &&
    touch prolog.log lsf-jobs && chmod 666 prolog.log &&
    cat >bjobs <<-EOF &&
	#!/bin/sh
	test "\$1" = -w || exit 2
	id=\${2%%[*}
	line=\$(grep "^\$id " "$TRASH/lsf-jobs" | tail -n 1)
	test -n "\$line" || { echo "Job <\$2> is not found" >&2; exit 255; }
	set -- \$line
	echo "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME"
	echo "\$1 \$2 \$3 normal login1 \$4 starter-test Nov 28 10:00"
	EOF
    chmod 755 bjobs &&
    submit 42 tracertest && ./bjobs -w 42 >b.out &&
    test "$(sed -n 2p b.out | cut -d" " -f1-3)" = "42 tracertest RUN" &&
    test_expect_code 255 ./bjobs -w 43
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
    submit 701 tracertest &&
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

# The JOB_STARTER as each LSF family runs it (tests/sched-emu): IBM LSF
# 10.1 as /bin/sh -c "STARTER COMMAND", OpenLava as the job file's line
# "STARTER COMMAND" run by /bin/sh JOBFILE; both as the user, with the
# job's environment (which names the test's configuration).
for FAM in lsf10 openlava
do
case $FAM in lsf10) N=781 ;; openlava) N=782 ;; esac
test_expect_success "job starter under $FAM: the record, CPU as the job's own, not a tool" '
    submit $N tracertest &&
    "$EMU" lsf --family $FAM --job $N --cluster tr0704 --user tracertest \
        --name starter-test \
        --starter "'"'"'$P'"'"' --log '"'"'$TRASH/prolog.log'"'"' lsf-starter" \
        --job-env TRACER_CONF="$TRASH/tracer.yaml" --spool lsfspool \
        -- "$BURN" cpu=0.8 >out.json &&
    test "$(jq -r .result out.json)" = ran &&
    test "$(jq .job.exit_status out.json)" = 0 &&
    wait_for "ls store/default/jobs/*/$N/0.*.json" 20 &&
    rec=$(ls store/default/jobs/*/$N/0.*.json) &&
    jq -e ".identity.user == \"tracertest\" and .outcome.state == \"completed\"
           and .outcome.complete == true" "$rec" &&
    grep "^{\"cpu_s\"" lsfspool/$N.out >burn.out &&
    within "$(jq .summary.cpu.total_s "$rec")" "$(jq .cpu_s burn.out)" 10 &&
    TRACER_CONF=$PWD/tracer.yaml $REPORT --allow-unsigned -j $N >view &&
    grep -q "Tools:.*burn" view &&
    ! grep -A2 "Tools:" view | grep -q tracer-prolog
'
done

test_expect_success 'a failing command: its status, and the record says so' '
    submit 702 tracertest &&
    test_expect_code 3 starter 702 "sh -c \"exit 3\"" &&
    wait_for "ls store/default/jobs/*/702/0.*.json" 20 &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3" \
        store/default/jobs/*/702/0.*.json
'

test_expect_success 'a signal sent to the starter reaches the job' '
    submit 703 tracertest &&
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
    submit 704 tracertest &&
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
    submit 711 tracertest &&
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
    submit 709 root &&
    starter_as tracertest "$TRASH/tracer.yaml" 709 "sh -c \"echo ran\"" >out &&
    grep -qx ran out &&
    wait_for "grep -q \"/709/0/[^ ]*: record not kept: LSF says job 709 is uid 0.s\" tracerd.log ||
              grep -q \"uid $(id -u tracertest): job starter refused (the job is another user.s)\" tracerd.log" 20 &&
    cmp "$rec" 709.saved &&
    test "$(ls store/default/jobs/*/709/)" = "0.$(hostname -s).json" &&
    ! test -e store/default/refused/709
'

test_expect_success TRACERTEST2 'a starter cannot speak for a job another user runs here' '
    submit 710 tracertest2 &&
    (starter_as tracertest2 "$TRASH/tracer.yaml" 710 "sleep 3" >bg.out
     echo $? >bg.rc) &
    wait_for "grep -q \"lsf-starter: job 710: tracerd follows\" prolog.log" 20 &&
    starter_as tracertest "$TRASH/tracer.yaml" 710 "sh -c \"echo ran\"" >out &&
    grep -qx ran out &&
    wait_for "test -s bg.rc" 20 &&
    test "$(cat bg.rc)" = 0 &&
    wait_for "ls store/default/jobs/*/710/0.*.json" 20 &&
    wait_for "grep -q \"/710/0/[^ ]*~$(id -u tracertest): record not kept: LSF says job 710 is uid $(id -u tracertest2).s\" tracerd.log ||
              grep -q \"uid $(id -u tracertest): job starter refused (the job is another user.s)\" tracerd.log" 20 &&
    test "$(ls store/default/jobs/*/710/ | wc -l)" = 1 &&
    jq -e ".identity.uid == $(id -u tracertest2)" store/default/jobs/*/710/0.*.json &&
    ! test -e store/default/refused/710
'

# A user runs a starter naming job 720 before LSF has it: the first to
# claim a job id is not its owner.  Then another user'"'"'s real job 720
# runs here while the squatter still runs: its record is kept, the
# squatter'"'"'s is not, nothing is set aside, and root sees the owner'"'"'s.
test_expect_success TRACERTEST2 'a job id squatted before the job exists: the real owner keeps the record' '
    (starter_as tracertest "$TRASH/tracer.yaml" 720 "sleep 4" >sq.out
     echo $? >sq.rc) &
    wait_for "grep -q \"lsf-starter: job 720: tracerd follows\" prolog.log" 20 &&
    submit 720 tracertest2 &&
    starter_as tracertest2 "$TRASH/tracer.yaml" 720 "sh -c \"echo real\"" >real.out &&
    grep -qx real real.out &&
    grep -q "lsf-starter: job 720: tracerd follows" prolog.log &&
    wait_for "ls store/default/jobs/*/720/0.*.json" 20 &&
    wait_for "test -s sq.rc" 20 &&
    wait_for "grep -q \"/720/0/[^ ]*~$(id -u tracertest): record not kept: LSF says job 720 is uid $(id -u tracertest2).s\" tracerd.log" 20 &&
    test "$(ls store/default/jobs/*/720/ | wc -l)" = 1 &&
    jq -e ".identity.uid == $(id -u tracertest2)" store/default/jobs/*/720/0.*.json &&
    ! test -e store/default/refused/720 &&
    TRACER_CONF=$PWD/tracer.yaml $REPORT --allow-unsigned -j 720 -o JobID,User -P -n >j.out &&
    grep -qx "720|tracertest2" j.out &&
    ! grep -q "|tracertest$" j.out
'

# A raw step_start and step_end as one user, naming another user'"'"'s job
# and a new step id: no step of the first user inside the second'"'"'s job.
test_expect_success TRACERTEST2 'a step added to another user'"'"'s job is not recorded' '
    submit 721 tracertest2 &&
    id="{\"scheduler\":\"lsf\",\"job_id\":\"721\",\"step_id\":\"5\"}" &&
    runuser -u tracertest -- ./forge.sh "$B/tests/notify" "$sock/tracerd.sock" "$id" &&
    runuser -u tracertest -- "$B/tests/notify" "$sock/tracerd.sock" \
        "{\"op\":\"step_end\",\"identity\":$id}" &&
    wait_for "grep -q \"/721/5/[^ ]*~$(id -u tracertest): record not kept: LSF says job 721 is uid $(id -u tracertest2).s\" tracerd.log" 20 &&
    ! ls -d store/default/jobs/*/721 2>/dev/null &&
    ! test -e store/default/refused/721
'

test_expect_success 'a job LSF runs on another host, or does not know: not recorded here' '
    submit 722 tracertest RUN "2*elsewhere1:1*elsewhere2" &&
    starter 722 "sh -c \"echo ran\"" >out &&
    grep -qx ran out &&
    starter 723 "sh -c \"echo ran\"" >out &&
    grep -qx ran out &&
    wait_for "grep -q \"/722/0/[^ ]*: record not kept: LSF does not show job 722 running here\" tracerd.log" 20 &&
    grep -q "job 722: LSF says it is tracertest.s, RUN on 2\*elsewhere1:1\*elsewhere2, not here" tracerd.log &&
    wait_for "grep -q \"/723/0/[^ ]*: record not kept: bjobs does not know the job.*: its owner is not known\" tracerd.log" 20 &&
    ! ls -d store/default/jobs/*/722 store/default/jobs/*/723 2>/dev/null
'

test_expect_success 'no bjobs: starters'"'"' steps are not recorded, and the log says why' '
    stop_tracerd &&
    private_conf "$sock" <<-EOF &&
	daemon.job_starters: true
	daemon.bjobs: "$TRASH/no-such-bjobs"
	sampling.interval: 0.2
	signing.enabled: false
	EOF
    private_tracerd_start &&
    submit 724 tracertest &&
    starter 724 "sh -c \"echo ran\"" >out &&
    grep -qx ran out &&
    wait_for "grep -q \"/724/0/[^ ]*: record not kept: bjobs (daemon.bjobs) cannot be run: its owner is not known\" tracerd.log" 20 &&
    grep -q "job 724: bjobs (daemon.bjobs) cannot be run; its job starters. steps will not be recorded" tracerd.log &&
    ! ls -d store/default/jobs/*/724 2>/dev/null
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
