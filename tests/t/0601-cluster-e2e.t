#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='srun --tracer in a real Slurm cluster gives a signed record with exact totals'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# With the second test user and the admin group, records belong to that
# group and its members may read every user's (the two-user tests below).
ADMIN_ARGS=
test_have_prereq TRACERTEST2 &&
    ADMIN_ARGS="--store group=traceradm --report admin_group=traceradm"

test_expect_success 'start a real cluster (munged, slurmctld, slurmd, tracerd), opt-in mode' '
    cluster_up --plugstack-args "enable=optin" $ADMIN_ARGS
'

test_expect_success 'srun --tracer: 2 CPU-seconds and 300 MB measured within 5%' '
    srun --tracer --mem=1G sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN cpu=2,mem=300M" \
        >burn.out 2>burn.err &&
    job=$(sed -n "s/^JOB=//p" burn.err) &&
    echo $job >job1 &&
    wait_record $job &&
    test "$(jq length rec.json)" = 1 &&
    test "$(jq -r ".[0].identity.scheduler" rec.json)" = slurm &&
    test "$(jq -r ".[0].identity.step_id" rec.json)" = 0 &&
    test "$(jq -r ".[0].identity.cluster" rec.json)" = tracertest &&
    test "$(jq -r ".[0].summary.cpu.source" rec.json)" = cgroup-v1:cpuacct.usage &&
    test "$(jq -r ".[0].summary.memory.source" rec.json)" = cgroup-v1:memory.max_usage_in_bytes &&
    test "$(jq ".[0].request.mem_bytes" rec.json)" = 1073741824 &&
    within "$(jq ".[0].summary.cpu.total_s" rec.json)" "$(jq .cpu_s burn.out)" 5 &&
    within "$(jq ".[0].summary.memory.peak_bytes" rec.json)" \
        "$(jq .maxrss_bytes burn.out)" 5
'

test_expect_success 'the record carries the task exit status and is signed' '
    test "$(jq -r ".[0].outcome.state" rec.json)" = completed &&
    test "$(jq ".[0].outcome.tasks[0].exit_code" rec.json)" = 0 &&
    test "$(jq -r ".[0].signature.scheme" rec.json)" = munge-sha256 &&
    $REPORT -j $(cat job1) >view.out &&
    grep -q "signature valid (uid 0" view.out &&
    grep -q "Memory peak:" view.out
'

test_expect_success 'records in the store belong to their writer (root), mode 0640' '
    f=$(find "$TRACER_CLUSTER_DIR/store" -name "0.$TRACER_NODENAME.json" -path "*/$(cat job1)/*") &&
    test "$(stat -c %a:%u "$f")" = 640:0
'

test_expect_success 'a failing command is recorded with its exit code' '
    test_expect_code 3 srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; exit 3" 2>f.err &&
    job=$(sed -n "s/^JOB=//p" f.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = failed &&
    test "$(jq ".[0].outcome.exit_code" rec.json)" = 3
'

test_expect_success 'an OOM-killed step is recorded as oom, with the kill counted' '
    test_must_fail srun --tracer --mem=50M sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec $BURN mem=200M" 2>o.err &&
    job=$(sed -n "s/^JOB=//p" o.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].outcome.state" rec.json)" = oom &&
    test "$(jq ".[0].outcome.signal" rec.json)" = 9 &&
    test "$(jq ".[0].summary.memory.oom_kill_events" rec.json)" -ge 1 &&
    test "$(jq ".[0].summary.memory.limit_bytes" rec.json)" = 52428800
'

test_expect_success 'a multi-task step gives one record with every task' '
    srun --tracer -n2 sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>m.err &&
    job=$(sed -n "s/^JOB=//p" m.err | head -1) &&
    wait_record $job &&
    test "$(jq ".[0].outcome.tasks | length" rec.json)" = 2
'

test_expect_success 'opt-in mode: a job without --tracer produces no record' '
    srun sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>n.err &&
    job=$(sed -n "s/^JOB=//p" n.err) &&
    sleep 3 &&
    test_expect_code 1 $REPORT -j $job 2>err &&
    grep -q "no records" err &&
    ! grep -q "job_id.*\"$job\"" "$TRACER_CLUSTER_DIR/log/tracerd.log"
'

test_expect_success 'sbatch --tracer traces the batch step' '
    sbatch --tracer --parsable --wrap "$BURN cpu=0.5" >sb.out &&
    job=$(cat sb.out) &&
    wait_record $job &&
    test "$(jq -r ".[0].identity.step_id" rec.json)" = batch
'

test_expect_success 'a tampered record is rejected with exit 3' '
    f=$(find "$TRACER_CLUSTER_DIR/store" -name "0.$TRACER_NODENAME.json" -path "*/$(cat job1)/*") &&
    jq ".summary.cpu.total_s = 0.01" "$f" >tampered.json &&
    test_expect_code 3 $REPORT tampered.json 2>err &&
    grep -q "modified after signing" err
'

test_expect_success 'an unsigned record is rejected with exit 4 and a different message' '
    f=$(find "$TRACER_CLUSTER_DIR/store" -name "0.$TRACER_NODENAME.json" -path "*/$(cat job1)/*") &&
    jq ".signature = {\"scheme\": \"none\", \"reason\": \"test\"}" "$f" >unsigned.json &&
    test_expect_code 4 $REPORT unsigned.json 2>err &&
    grep -q "unsigned" err &&
    ! grep -q "modified after signing" err
'

# Both unprivileged users must reach slurm.conf, the munge socket and the
# tracer configuration.
users_reach ()
{
    for u in tracertest tracertest2; do
        runuser -u $u -- test -r "$SLURM_CONF" 2>/dev/null &&
        runuser -u $u -- test -w "$TRACER_MUNGE_SOCKET" 2>/dev/null &&
        runuser -u $u -- test -r "$TRACER_CONF" 2>/dev/null || return 1
    done
}
test_have_prereq TRACERTEST,TRACERTEST2 && users_reach &&
    test_set_prereq TWO_USERS

# as_admin CMD...: CMD as tracertest with the admin group added, as a
# member of report.admin_group logs in.
as_admin ()
{
    setpriv --reuid=tracertest --regid=tracertest \
        --groups="$(id -G tracertest | tr " " ,),$(getent group traceradm | cut -d: -f3)" "$@"
}

test_expect_success TWO_USERS 'two unprivileged users each run a traced job' '
    for u in tracertest tracertest2; do
        runuser -u $u -- srun --tracer --chdir=/tmp \
            sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>$u.err &&
        sed -n "s/^JOB=//p" $u.err >$u.job &&
        wait_record "$(cat $u.job)" &&
        test "$(jq -r ".[0].identity.user" rec.json)" = $u &&
        f=$(find "$TRACER_CLUSTER_DIR/store" -path "*/$(cat $u.job)/*" -name "0.*.json") &&
        test "$(stat -c "%U:%G %a" "$f")" = "root:traceradm 640" &&
        runuser -u $u -- test -r "$f" || return 1
    done
'

test_expect_success TWO_USERS 'each user lists only their own job' '
    j1=$(cat tracertest.job) && j2=$(cat tracertest2.job) && j0=$(cat job1) &&
    runuser -u tracertest -- $REPORT >u1.out 2>u1.err &&
    grep -q "^$j1\\." u1.out && ! grep -q "^$j2\\." u1.out &&
    ! grep -q "^$j0\\." u1.out && test_must_be_empty u1.err &&
    runuser -u tracertest2 -- $REPORT >u2.out 2>u2.err &&
    grep -q "^$j2\\." u2.out && ! grep -q "^$j1\\." u2.out &&
    ! grep -q "^$j0\\." u2.out && test_must_be_empty u2.err &&
    runuser -u tracertest -- $REPORT -a >ua.out 2>ua.err &&
    grep -q "^$j1\\." ua.out && ! grep -q "^$j2\\." ua.out &&
    grep -q "^tracer-report: note: only $(id -u tracertest).s records are shown (not an admin)$" ua.err &&
    runuser -u tracertest -- $REPORT -u tracertest2 --json >uu.json 2>uu.err &&
    test "$(jq ".steps | length" uu.json)" = 0 &&
    grep -q "not an admin" uu.err
'

test_expect_success TWO_USERS 'a user gets nothing of the other user'"'"'s job' '
    j2=$(cat tracertest2.job) &&
    test_expect_code 1 runuser -u tracertest -- $REPORT -j $j2 >o.out 2>o.err &&
    grep -q "no records" o.err &&
    ! grep -q "tracertest2" o.out &&
    f=$(find "$TRACER_CLUSTER_DIR/store" -path "*/$j2/*" -name "0.*.json") &&
    test_must_fail runuser -u tracertest -- $REPORT "$f" >of.out 2>of.err &&
    grep -q "Permission denied" of.err &&
    test_must_fail runuser -u tracertest -- cat "$f" >/dev/null 2>&1
'

test_expect_success TWO_USERS 'a record a user may read but is not theirs is not shown either' '
    j2=$(cat tracertest2.job) &&
    noadm=$(dirname "$TRACER_CONF")/noadmin.yaml &&
    sed "s/admin_group: traceradm/admin_group: root/" "$TRACER_CONF" >"$noadm" &&
    chmod 644 "$noadm" &&
    f=$(find "$TRACER_CLUSTER_DIR/store" -path "*/$j2/*" -name "0.*.json") &&
    as_admin test -r "$f" &&
    test_expect_code 1 as_admin env TRACER_CONF="$noadm" $REPORT -j $j2 >r.out 2>r.err &&
    grep -q "^tracer-report: job $j2: no records in " r.err &&
    test_must_be_empty r.out &&
    as_admin env TRACER_CONF="$noadm" $REPORT "$f" >rf.out &&
    grep -q "^Job $j2" rf.out
'

test_expect_success TWO_USERS 'a member of report.admin_group sees both users'"'"' jobs, and root'"'"'s' '
    j1=$(cat tracertest.job) && j2=$(cat tracertest2.job) && j0=$(cat job1) &&
    as_admin $REPORT -a >a.out 2>a.err &&
    grep -q "^$j1\\." a.out && grep -q "^$j2\\." a.out && grep -q "^$j0\\." a.out &&
    test_must_be_empty a.err &&
    as_admin $REPORT -j $j2 --json >a2.json &&
    test "$(jq -r ".[0].identity.user" a2.json)" = tracertest2 &&
    as_admin $REPORT -u tracertest2 >au.out &&
    grep -q "^$j2\\." au.out && ! grep -q "^$j1\\." au.out &&
    as_admin $REPORT >own.out &&
    grep -q "^$j1\\." own.out && ! grep -q "^$j2\\." own.out
'

# The hostile user: tracertest, with every SLURM_* variable the plugin
# once read exported before srun/sbatch.  The record holds the
# controller's and the kernel's values, never these.  (srun and sbatch
# take SLURM_JOB_NAME as their -J: there the controller agrees.)
tracertest_reaches ()
{
    runuser -u tracertest -- test -r "$SLURM_CONF" 2>/dev/null &&
    runuser -u tracertest -- test -w "$TRACER_MUNGE_SOCKET" 2>/dev/null
}
test_have_prereq TRACERTEST && tracertest_reaches && test_set_prereq HOSTILE

LONG=$(printf "%0200d" 0 | tr 0 a)
# forged CMD...: CMD as tracertest with a forged job environment
forged ()
{
    runuser -u tracertest -- env SLURM_CLUSTER_NAME=forged \
        SLURM_JOB_ACCOUNT="$LONG" SLURM_JOB_QOS=forgedqos \
        SLURM_JOB_USER=root SLURM_STEP_GPUS=0,1 SLURM_JOB_GPUS=0,1 \
        SLURM_JOB_PARTITION=forgedpart SLURM_JOB_NAME=forgedname "$@"
}

# identity_is_controllers JOB: rec.json's identity and request against
# what the controller said from inside the job (ctl.out: %P|%j|%a|%q|%l)
# and the node's user database.
identity_is_controllers ()
{
    IFS="|" read -r part name acct qos limit <ctl.out &&
    test "$(jq length rec.json)" = 1 &&
    test "$(jq -r ".[0].identity.cluster" rec.json)" = "$TRACER_CLUSTER_NAME" &&
    test "$(jq -r ".[0].identity.user" rec.json)" = "$(id -un tracertest)" &&
    test "$(jq -r ".[0].identity.group" rec.json)" = "$(id -gn tracertest)" &&
    test "$(jq ".[0].identity.uid" rec.json)" = "$(id -u tracertest)" &&
    test "$(jq -r ".[0].identity.partition" rec.json)" = "$part" &&
    test "$(jq -r ".[0].identity.job_name" rec.json)" = "$name" &&
    if test "$acct" = "(null)"; then
        test "$(jq ".[0].identity.account" rec.json)" = null
    else
        test "$(jq -r ".[0].identity.account" rec.json)" = "$acct"
    fi &&
    if test "$qos" = "(null)"; then
        test "$(jq ".[0].identity.qos" rec.json)" = null
    else
        test "$(jq -r ".[0].identity.qos" rec.json)" = "$qos"
    fi &&
    test "$(jq ".[0].identity.truncated" rec.json)" = null &&
    test "$(jq ".[0].request.gpus" rec.json)" = null &&
    test "$(jq ".[0].summary.gpu" rec.json)" = null &&
    test "$(jq -r ".[0].signature.scheme" rec.json)" = munge-sha256 &&
    ! grep -q "forgedqos\|forgedpart\|$LONG" rec.json &&
    ! find "$TRACER_CLUSTER_DIR/store" -path "*/forged/*" | grep -q .
}

test_expect_success HOSTILE 'srun as tracertest: an exported SLURM_* environment forges no identity' '
    forged srun --tracer --chdir=/tmp sh -c "echo JOB=\$SLURM_JOB_ID >&2;
        squeue -h -j \$SLURM_JOB_ID -o \"%P|%j|%a|%q|%l\"" >ctl.out 2>fs.err &&
    job=$(sed -n "s/^JOB=//p" fs.err) &&
    wait_record $job &&
    identity_is_controllers &&
    test "$(jq -r ".[0].identity.step_id" rec.json)" = 0
'

test_expect_success HOSTILE 'sbatch as tracertest: the batch step has the user name, no forged field' '
    forged sbatch --tracer --parsable --chdir=/tmp -o /dev/null --wrap \
        "squeue -h -j \$SLURM_JOB_ID -o \"%P|%j|%a|%q|%l\" >/tmp/tracer-id.\$SLURM_JOB_ID" \
        >fb.out &&
    job=$(cat fb.out) &&
    test "$(wait_job $job)" = COMPLETED &&
    wait_record $job &&
    mv /tmp/tracer-id.$job ctl.out &&
    test "$(jq -r ".[0].identity.step_id" rec.json)" = batch &&
    identity_is_controllers &&
    $REPORT -u tracertest --json >bu.json &&
    jq -e --arg j "$job" ".steps | any(.jobidraw == \$j and .stepid == \"batch\"
        and .user == \"tracertest\")" bu.json
'

test_expect_success HOSTILE 'a 200-byte account from the controller is cut and flagged, the step traced' '
    forged srun --tracer --chdir=/tmp --account="$LONG" -J "two
lines" sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>fa.err &&
    job=$(sed -n "s/^JOB=//p" fa.err) &&
    wait_record $job &&
    test "$(jq -r ".[0].identity.account" rec.json)" = "$(printf "%.128s" "$LONG")" &&
    test "$(jq -r ".[0].identity.job_name" rec.json)" = "two?lines" &&
    test "$(jq -c ".[0].identity.truncated" rec.json)" = "[\"account\",\"job_name\"]" &&
    test "$(jq -r ".[0].identity.user" rec.json)" = tracertest
'

# A name the job renames itself to, with a line that reads as squeue's
# answer for the same job, and a byte that is not UTF-8: the controller's
# account, partition, QOS and time limit still reach the record, and the
# name is kept (its newline and the byte made "?", and flagged).
test_expect_success HOSTILE 'a job name with a forged answer line or a non-UTF-8 byte drops nothing' '
    rn=/tmp/tracer-0601-rename.$$ &&
    cat >$rn.sh <<-\EOF &&
	#!/bin/sh
	scontrol update JobId=$SLURM_JOB_ID JobName="x
	RUNNING|9|evil|evil|evil|N/A|N/A|N/A|N/A|$SLURM_JOB_ID|y"
	squeue -h -j $SLURM_JOB_ID -o %j
	srun --tracer true
	EOF
    chmod 755 $rn.sh &&
    forged sbatch --parsable --chdir=/tmp -t 7 -o $rn.out $rn.sh >fn.out &&
    job=$(cat fn.out) &&
    test "$(wait_job $job)" = COMPLETED &&
    mv $rn.out rename.out && rm -f $rn.sh &&
    cat rename.out &&
    grep -q "^RUNNING|9|evil" rename.out &&
    wait_record $job &&
    jq -c ".[0].identity, .[0].request" rec.json &&
    test "$(jq -r ".[0].identity.job_name" rec.json)" = \
        "x?RUNNING|9|evil|evil|evil|N/A|N/A|N/A|N/A|$job|y" &&
    test "$(jq -r ".[0].identity.partition" rec.json)" = debug &&
    test "$(jq ".[0].request.time_limit_s" rec.json)" = 420 &&
    test "$(jq ".[0].identity.unknown" rec.json)" = null &&
    ! jq -r ".[0].identity | .account, .qos" rec.json | grep -q evil &&
    forged srun --tracer --chdir=/tmp -t 7 -J "$(printf "a\377b")" \
        sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>fu.err &&
    job=$(sed -n "s/^JOB=//p" fu.err) &&
    wait_record $job &&
    jq -c ".[0].identity" rec.json &&
    test "$(jq -r ".[0].identity.job_name" rec.json)" = "a?b" &&
    test "$(jq -r ".[0].identity.partition" rec.json)" = debug &&
    test "$(jq ".[0].request.time_limit_s" rec.json)" = 420 &&
    jq -e ".[0].identity.truncated | index(\"job_name\")" rec.json &&
    test "$(jq ".[0].identity.unknown" rec.json)" = null
'

# The hostile user: tracertest rewrites, replaces, renames, deletes or
# chmods their own record, or puts another of their own signed records
# in its place, to hide a job from the administrators.
test_expect_success TWO_USERS 'a user can neither rewrite, replace, rename, delete nor chmod their record' '
    j1=$(cat tracertest.job) &&
    runuser -u tracertest -- srun --tracer --chdir=/tmp \
        sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>h.err &&
    sed -n "s/^JOB=//p" h.err >other.job &&
    wait_record "$(cat other.job)" &&
    f=$(find "$TRACER_CLUSTER_DIR/store" -path "*/$j1/*" -name "0.*.json") &&
    g=$(find "$TRACER_CLUSTER_DIR/store" -path "*/$(cat other.job)/*" -name "0.*.json") &&
    cp "$f" hostile.saved &&
    runuser -u tracertest -- test -r "$f" &&
    ! runuser -u tracertest2 -- test -r "$f" &&
    test_must_fail runuser -u tracertest -- sh -c "cat \"$g\" >\"$f\"" &&
    test_must_fail runuser -u tracertest -- chmod 644 "$f" &&
    test_must_fail runuser -u tracertest -- mv -f "$g" "$f" &&
    test_must_fail runuser -u tracertest -- mv -f "$f" "$f.x" &&
    test_must_fail runuser -u tracertest -- rm -f "$f" &&
    cmp "$f" hostile.saved &&
    test "$(stat -c "%U %a" "$f")" = "root 640"
'

# Where the store has no POSIX ACLs the user owns their record (read
# only), and may chmod and rewrite it: every reader says so.
test_expect_success TWO_USERS 'where a user owns their record, a rewrite is named by every listing, --waste, --reindex and -j, until repaired' '
    j1=$(cat tracertest.job) && jo=$(cat other.job) &&
    f=$(find "$TRACER_CLUSTER_DIR/store" -path "*/$j1/*" -name "0.*.json") &&
    as_admin $REPORT -a >before.out 2>before.err &&
    grep -q "^$j1\." before.out && test_must_be_empty before.err &&
    chown tracertest "$f" && chmod 440 "$f" &&
    test_when_finished "cat hostile.saved >\"$f\" && chown root \"$f\" && chmod 640 \"$f\"" &&
    g=$(find "$TRACER_CLUSTER_DIR/store" -path "*/$jo/*" -name "0.*.json") &&
    runuser -u tracertest -- sh -c "chmod 640 \"$f\" && cat \"$g\" >\"$f\"" &&
    why="/$j1/0.$TRACER_NODENAME.json: REJECTED: the record is job $jo.s (step 0, node $TRACER_NODENAME, cluster [^)]*), not in its place in the store (copied or moved here)$" &&
    test_expect_code 3 as_admin $REPORT -a >l.out 2>l.err &&
    grep -q "$why" l.err &&
    grep -q "^tracer-report: 1 record of this period could not be used" l.err &&
    ! grep -q "^$j1\." l.out && grep -q "^$jo\." l.out &&
    test_expect_code 3 as_admin $REPORT -a >l2.out 2>l2.err &&
    grep -q "$why" l2.err &&
    test_expect_code 3 as_admin $REPORT -a --waste >w.out 2>w.err &&
    grep -q "$why" w.err &&
    test_expect_code 3 as_admin $REPORT --reindex >ri.out 2>ri.err &&
    grep -q "$why" ri.err &&
    test_expect_code 3 as_admin $REPORT -j $j1 >j.out 2>j.err &&
    grep -q "$why" j.err &&
    test "$(grep -c "REJECTED" j.err)" = 1 &&
    as_admin $REPORT -j $jo >jo.out 2>jo.err &&
    ! grep -q REJECTED jo.err &&
    test "$(wc -l <jo.err)" -le 1 &&
    ! grep -q "Replayed" jo.out &&
    test_expect_code 3 as_admin $REPORT -a --no-index >n.out 2>n.err &&
    grep -q "$why" n.err &&
    # repaired: listed again, nothing said
    cat hostile.saved >"$f" && chown root "$f" && chmod 640 "$f" &&
    as_admin $REPORT -a >after.out 2>after.err &&
    grep -q "^$j1\\." after.out && test_must_be_empty after.err
'

# A step that waits on its disk: three dd writing 4 KiB blocks with
# O_DSYNC (and O_DIRECT: no page cache to fill its memory limit) to the
# local disk for 12 s, a fraction of a core each.  Three, so that on a
# node busy with other work (the other test clusters) some task of the
# step is still waiting on the disk most of the time while the others
# wait for a CPU.  With the
# default configuration the node measures its I/O stall (PSI of the
# step's cgroup2 directory, tracer's mirror directory on a hybrid host,
# per-task delay accounting on a v1 one): it is I/O-bound, and never told
# that more cores may help.
io_writer ()
{
    mkdir -p -m 1777 work &&
    srun --tracer -J "$1" -c 2 --mem=200M sh -c "echo JOB=\$SLURM_JOB_ID >&2; \
        for i in 1 2 3; do \
            timeout 12 dd if=/dev/zero of=work/$1.\$i.f bs=4k \
                count=10000000 oflag=direct,dsync 2>/dev/null & \
        done; wait; true" 2>"$1.err" &&
    rm -f work/$1.*.f &&
    job=$(sed -n "s/^JOB=//p" "$1.err") &&
    wait_record $job &&
    cp rec.json "$1.rec.json" &&
    COLUMNS=1000 $REPORT -j "$job" >"$1.view" &&
    cat "$1.view" &&
    $REPORT -S now-1hour --name "$1" --json >"$1.json" &&
    jq -c ".steps[0].diagnosis" "$1.json"
}

# the job view, the listing's JSON findings: io-bound, no cpu-bound, no
# "more cores may help"
io_bound_checks ()
{
    grep -q "Diagnosis:.*I/O-bound" "$1.view" &&
    grep -q "more cores will not help" "$1.view" &&
    ! grep -q "more cores may help" "$1.view" &&
    jq -e "[.steps[0].diagnosis[].code] | index(\"io-bound\") != null" "$1.json" &&
    jq -e "[.steps[0].diagnosis[].code] | index(\"cpu-bound\") == null" "$1.json" &&
    ! grep -q "Stalled:.*I/O 0.0%" "$1.view"
}

test_expect_success 'default settings: a synchronous writer is I/O-bound, not told to take more cores' '
    io_writer iowait &&
    jq -e ".[0].summary.pressure.io" iowait.rec.json &&
    jq -e ".[0].summary.x_pressure_unknown == null" iowait.rec.json &&
    io_bound_checks iowait
'

# psi_mirror false on a hybrid host leaves steps in v1 directories only,
# as on a v1 host: tracerd turns delay accounting on (delayacct: auto)
# and the block I/O delay of the writer's exit records is the evidence.
test_expect_success 'psi_mirror false: tracerd turns delay accounting on, and the writer is I/O-bound from its block I/O delay' '
    printf "sampling:\n  psi_mirror: false\n" >>"$TRACER_CLUSTER_DIR/etc/tracer.yaml" &&
    tracerd_stop && tracerd_start &&
    wait_log "$(tracerd_log)" "stall: CPU run-queue, memory and I/O delay of the step.s processes from per-task delay accounting (kernel.task_delayacct = 1)" &&
    test "$(cat /proc/sys/kernel/task_delayacct)" = 1 &&
    io_writer iowait2 &&
    test "$(jq -r ".[0].summary.pressure.source" iowait2.rec.json)" = delayacct &&
    jq -e ".[0].summary.x_pressure_unknown == null" iowait2.rec.json &&
    jq -e ".[0].summary.pressure.io.delay_s > 2.4" iowait2.rec.json &&
    io_bound_checks iowait2 &&
    grep -q "waited for block I/O .* (delay accounting)" iowait2.view
'

# With psi_mirror false (the test before) every Slurm step has a cgroup
# directory of its own (cgroup2 on a cgroup2 host, the v1 cpuacct or memory one on
# a hybrid or v1 host): the kernel drops the node's other exits before
# tracerd receives them, and the step's own all arrive.
test_expect_success 'exit filter: 200 short children of a step counted, 1,000 exits outside it not received' '
    test_when_finished ": >work/go" &&
    mkdir -p -m 1777 work &&
    exit_filter_check &&
    ! grep "every exit on the node delivered (step [^ ]*/$job/" "$(tracerd_log)"
'

test_expect_success 'stop the cluster; nothing is left running' '
    cluster_down &&
    ! ls -d /sys/fs/cgroup/memory/slurm_$TRACER_NODENAME 2>/dev/null
'
test_done
