#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-prolog under OpenPBS: prologue, epilogue or hook, pbs_cgroups or not

tests/sched-emu plays pbs_mom for one job at a time: it runs tracer-prolog
as mom_priv/prologue and mom_priv/epilogue (two-line wrappers, and the
program itself under those names) or through the hook shim
etc/pbs/tracer_hook.py, around a real burn job run as tracertest, with no
cgroup or with the job in pbs_cgroups'"'"' /pbs_jobs.service/jobid/JOB.
A private tracerd writes the records; they must validate and read like a
Slurm job'"'"'s.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

batch_preamble
require_or_skip "the system python3 (PBS hooks)" test -x /usr/bin/python3
require_or_skip "tracer-prolog built ($P)" test -x "$P"
test -d /sys/fs/cgroup/memory && test -d /sys/fs/cgroup/cpuacct &&
    test -d /sys/fs/cgroup/cpuset && test_set_prereq CGV1

# pbsjob N MOM_PRIV [sched-emu options] -- CMD...: job N.$HOST as pbs_mom
# runs it, with the request every check below expects; out.json says what
# happened, qstat answers for it.
pbsjob ()
{
    _n=$1 && _mp=$2 && shift 2 &&
    "$EMU" pbs --job "$_n.$HOST" --user tracertest --queue workq \
        --account acct1 --name burnjob \
        --resources ncpus=2,mem=200mb,walltime=00:05:00 \
        --mom-priv "$_mp" --qstat "$PWD/qstat" "$@" >out.json
}

# hooks_of EVENT: the hooks (site and built-in) that ran for EVENT, in order
hooks_of ()
{
    jq -r --arg e "$1" '[.events[] | select(.event == $e) | .hook] | join(",")' \
        out.json
}

# Records are signed by a private munged when one starts, as a site's are.
test_expect_success 'setup: a private munged' '
    TRASH=$PWD &&
    sock=$(mktemp -d /tmp/tr0701.XXXXXX) &&
    echo "$sock" >sockdir
'
tr_atexit 'rm -rf "$(cat sockdir)"'
batch_signing
test -z "$UNSIGNED" && test_set_prereq SIGNED

test_expect_success 'setup: tracerd on a private configuration' '
    private_conf "$sock" <<-EOF &&
	sampling.interval: 0.2
	$signing
	prolog.qstat: "$PWD/qstat"
	EOF
    TRACER_CONF=$PWD/tracer.yaml && export TRACER_CONF &&
    private_tracerd_start
'
tr_atexit 'test -f tracerd.pid && kill "$(cat tracerd.pid)" 2>/dev/null
           for c in memory cpuacct cpuset; do
               rmdir /sys/fs/cgroup/$c/pbs_jobs.service/jobid/71??.* \
                   /sys/fs/cgroup/$c/pbs_jobs.service/jobid \
                   /sys/fs/cgroup/$c/pbs_jobs.service; done 2>/dev/null; :'

# A root-only file whose first line must never show anywhere.
test_expect_success 'setup: wrappers in mom_priv, the hook shim' '
    echo "SECRET-0701-first-line: 1" >secret.conf && chmod 0600 secret.conf &&
    mkdir -p classic/mom_priv argv0/mom_priv hooked/mom_priv hooks bin &&
    for m in prologue epilogue; do
        # PBS_CONF_FILE: where a site keeps pbs.conf elsewhere
        printf "#!/bin/sh\nPBS_CONF_FILE=\"%s\" exec \"%s\" -c \"%s\" --log \"%s\" pbs-%s \"\$@\"\n" \
            "$PWD/pbs.conf" "$P" "$PWD/tracer.yaml" "$PWD/prolog.log" $m \
            >classic/mom_priv/$m &&
        # tracer-prolog itself as mom_priv/prologue: the name sets the
        # mode; bash exec -a keeps argv[0].  As root it reads the
        # compiled default configuration (batch_default_conf), never
        # the file TRACER_CONF names
        printf "#!/bin/bash\nTRACER_CONF=\"%s\" exec -a \"\$0\" \"%s\" \"\$@\"\n" \
            "$PWD/secret.conf" "$P" >argv0/mom_priv/$m || return 1
    done &&
    chmod 0700 classic/mom_priv/* argv0/mom_priv/* &&
    printf "#!/bin/sh\nexec \"%s\" -c \"%s\" \"\$@\"\n" \
        "$P" "$PWD/tracer.yaml" >bin/tracer-prolog &&
    chmod 0755 bin/tracer-prolog &&
    # the hook names tracer-prolog'"'"'s log file: in a directory whose
    # parent does not exist yet either (/usr/local/var/log/tracer on a
    # Debian host)
    HOOKLOG=$PWD/hooklogs/var/log/tracer-prolog.log &&
    sed -e "s|@sbindir@/tracer-prolog|$PWD/bin/tracer-prolog|" \
        -e "s|^LOG = .*|LOG = \"$HOOKLOG\"|" "$SHIM" >hooks/tracer.py &&
    grep -q "^PROLOG = \"$PWD/bin/tracer-prolog\"$" hooks/tracer.py &&
    echo "execjob_begin,execjob_launch,execjob_epilogue,execjob_end order=50" \
        >hooks/tracer.py.events
'

# --- classic prologue and epilogue, no cgroup ------------------------------

test_expect_success 'classic: the job runs, prologue and epilogue exit 0' '
    pbsjob 7101 classic/mom_priv -- "$BURN" cpu=3,mem=64M &&
    test "$(jq -r .result out.json)" = ran &&
    test "$(jq .job.exit_status out.json)" = 0 &&
    jq -e "[.events[] | .exit == 0 and .timed_out == false] | all" out.json &&
    grep -q "^{\"cpu_s\"" classic/spool/7101.$HOST.OU &&
    test_must_be_empty classic/spool/7101.$HOST.ER &&
    grep -q "pbs-prologue: job 7101.$HOST: tracerd follows it on $HOST$" \
        prolog.log &&
    grep -q "pbs-epilogue: job 7101.$HOST: ended on $HOST$" prolog.log &&
    grep -qx -- "-f -F json 7101.$HOST" qstat.log
'

test_expect_success 'classic: one record, found through PBS_JOBID, as the job ran' '
    batch_wait_record 7101.$HOST &&
    batch_check_record pbs 7101.$HOST acct1 workq 300 classic/spool/7101.$HOST.OU &&
    jq -e ".cgroup.attach == \"process-tree\"
           and .cgroup.match.env == \"PBS_JOBID=7101.$HOST\"" rec.json &&
    test $(find store -name "0.$HOST.json" -path "*/7101.$HOST/*" | wc -l) = 1
'

test_expect_success 'classic: the prologue names the job'"'"'s session, the starter'"'"'s' '
    test "$(jq .cgroup.match.session rec.json)" = "$(jq .job.session out.json)"
'

test_expect_success 'tracer-report shows it like a Slurm job' '
    COLUMNS=1000 $REPORT $UNSIGNED -j 7101.$HOST >view &&
    grep -q "^Job 7101.$HOST \"burnjob\"" view &&
    grep -q "^Job 7101.$HOST \"burnjob\" on cluster .* (pbs)$" view &&
    grep -q "^  User/Group: *tracertest/.* (uid $UID_T.*), account acct1, partition workq$" view &&
    grep -q "Step 0 on $HOST: COMPLETED, exit code 0:0" view &&
    grep -q "CPU time:" view &&
    grep -q "Memory peak: .* of 200.0 MiB requested" view &&
    if test -z "$UNSIGNED"; then grep -q "signature valid" view; fi &&
    $REPORT $UNSIGNED -j 7101.$HOST --json >list.json &&
    test "$(jq length list.json)" = 1 &&
    test "$(jq -r ".[0].identity.job_id" list.json)" = 7101.$HOST
'

# Advice for a PBS job is in PBS's words, and what it says is what a
# PBS job gets: its "-l" resources given to the emulated job come back
# as the job's request, as tracer's PBS prologue reads them.
test_expect_success 'the job view advises -l select=... in PBS words; the advice runs as a PBS job' '
    COLUMNS=1000 $REPORT $UNSIGNED -j 7101.$HOST >view &&
    grep "Next time:" view >next &&
    grep -Eq "Next time: +-l select=1:ncpus=[0-9]+:mem=[0-9]+[mg]b -l walltime=[0-9]{2}:[0-9]{2}:[0-9]{2} \(" next &&
    ! grep -q -- "--cpus-per-task\|--mem\|--time" next &&
    $REPORT $UNSIGNED -u tracertest -S now-1day --name burnjob --recommend \
        --output=pbs >rec.pbs &&
    grep -Eqx "#PBS -l select=1:ncpus=[0-9]+:mem=[0-9]+[mg]b" rec.pbs &&
    grep -Eqx "#PBS -l walltime=[0-9]{2}:[0-9]{2}:[0-9]{2}" rec.pbs &&
    res=$(sed -n "s/^#PBS -l //p" rec.pbs | paste -sd, -) &&
    ncpus=$(echo "$res" | sed "s/.*ncpus=\([0-9]*\).*/\1/") &&
    $REPORT $UNSIGNED -u tracertest -S now-1day --name burnjob --recommend \
        --json >rec.json.pbs &&
    pbsjob 7150 classic/mom_priv --resources "$res" -- "$BURN" cpu=1,mem=16M &&
    test "$(jq -r .result out.json)" = ran &&
    batch_wait_record 7150.$HOST &&
    jq -e --argjson c "$ncpus" --slurpfile r rec.json.pbs "
        .request.cpus_on_node == \$c
        and .request.mem_bytes == \$r[0].groups[0].mem.recommend
        and .request.time_limit_s == \$r[0].groups[0].time.recommend" rec.json
'

test_expect_success 'classic: a job that exits 3 is failed, exit code 3' '
    pbsjob 7102 classic/mom_priv -- /bin/sh -c "exit 3" &&
    test "$(jq .job.exit_status out.json)" = 3 &&
    batch_wait_record 7102.$HOST &&
    $REPORT $UNSIGNED rec.json >/dev/null &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3" rec.json &&
    $REPORT $UNSIGNED -j 7102.$HOST | grep -q "^  Step 0 on .*: FAILED, exit code 3:0$"
'

test_expect_success 'classic: no qstat: the epilogue'"'"'s arguments name the job' '
    rm -f qstat &&
    "$EMU" pbs --job 7103.$HOST --user tracertest --queue workq \
        --account acct1 --name burnjob \
        --resources ncpus=2,mem=200mb,walltime=00:05:00 \
        --mom-priv classic/mom_priv -- "$BURN" cpu=0.3 >out.json &&
    ! grep -q "7103" qstat.log &&
    batch_wait_record 7103.$HOST &&
    jq -e ".identity.job_name == \"burnjob\" and .identity.partition == \"workq\"
           and .identity.account == \"acct1\"
           and .request.mem_bytes == 209715200" rec.json
'

test_expect_success 'classic: the walltime kill (-29) is a timeout, the mem kill (-27) oom' '
    pbsjob 7104 classic/mom_priv --kill-after 1 --kill-reason walltime \
        -- /bin/sleep 100 &&
    test "$(jq .job.exit_status out.json)" = -29 &&
    batch_wait_record 7104.$HOST &&
    jq -e ".outcome.state == \"timeout\"" rec.json &&
    pbsjob 7105 classic/mom_priv --kill-after 1 --kill-reason mem \
        -- /bin/sleep 100 &&
    batch_wait_record 7105.$HOST &&
    jq -e ".outcome.state == \"oom\"" rec.json
'

test_expect_success UNSHARE 'argv[0] form: tracer-prolog installed as prologue and epilogue' '
    batch_default_conf tracer.yaml "$EMU" pbs --job 7106.$HOST \
        --user tracertest --queue workq --account acct1 --name burnjob \
        --resources ncpus=2,mem=200mb,walltime=00:05:00 \
        --mom-priv argv0/mom_priv --qstat "$PWD/qstat" \
        -- "$BURN" cpu=3,mem=64M >out.json &&
    jq -e "[.events[] | .exit == 0] | all" out.json &&
    test "$(jq -r ".events[0].path" out.json)" = "$PWD/argv0/mom_priv/prologue" &&
    batch_wait_record 7106.$HOST &&
    batch_check_record pbs 7106.$HOST acct1 workq 300 argv0/spool/7106.$HOST.OU
'

# The root-only file TRACER_CONF named was not read: the record above came
# through the default configuration, and nothing of the file shows.
test_expect_success UNSHARE 'argv[0] form, as root: TRACER_CONF is not read, nothing of the file it names shows' '
    ! grep -rs "SECRET-0701" argv0 out.json store tracerd.log
'

# --- the hook shim, no cgroup -------------------------------------------------

test_expect_success 'hook: begin, launch, epilogue and end reach tracer-prolog' '
    pbsjob 7107 hooked/mom_priv --hook hooks/tracer.py -- "$BURN" cpu=3,mem=64M &&
    test "$(jq -r "[.events[] | select(.kind == \"hook\") | .event] | join(\",\")" out.json)" = \
        execjob_begin,execjob_launch,execjob_epilogue,execjob_end &&
    jq -e "[.events[] | select(.kind == \"hook\")
            | .accepted and .timed_out == false] | all" out.json &&
    test $(grep -c "pbs-hook: job 7107.$HOST: tracerd follows it on $HOST$" "$HOOKLOG") = 2 &&
    # execjob_epilogue ends it, execjob_end finds it ended: one line
    test $(grep -c "pbs-hook: job 7107.$HOST: ended on $HOST$" "$HOOKLOG") = 1
'

# A hook'"'"'s output goes nowhere and, without syslogd, nothing would show
# what tracer-prolog did: the hook gives it a log file, by default under
# /var/log/tracer, its directory made when missing.
test_expect_success 'hook: tracer-prolog writes the log file the hook names' '
    test "$(stat -c %a "$HOOKLOG")" = 600 &&
    grep -q "^LOG = \"/.*/log/tracer/tracer-prolog.log\"$" "$B/etc/tracer_hook.py" &&
    test "$(jq "[.events[] | select(.kind == \"hook\") | .logs[]] | length" out.json)" = 0
'

test_expect_success 'hook: the record, with the starter as the job'"'"'s task' '
    batch_wait_record 7107.$HOST &&
    batch_check_record pbs 7107.$HOST acct1 workq 300 hooked/spool/7107.$HOST.OU &&
    test "$(jq -r .cgroup.attach rec.json)" = process-tree &&
    test "$(jq ".outcome.tasks[0].pid" rec.json)" = "$(jq .job.pid out.json)"
'

# exec_host is not set at execjob_begin and execjob_launch on a real mom,
# and Resource_List has no nodect there: exec_vnode says, from the start
# (tracerd'"'"'s saved state of the running step holds what the start said;
# an end that never comes leaves the record with it).
test_expect_success 'hook: request.nodes and CPUs from exec_vnode, at the start' '
    jq -e ".request.nodes == 1 and .request.cpus_on_node == 2" rec.json &&
    { pbsjob 7150 hooked/mom_priv --hook hooks/tracer.py -- /bin/sleep 2 &&
      touch 7150.done & } &&
    wait_for "grep -qlF \"\\\"7150.$HOST\\\"\" st/steps/*" 20 &&
    f=$(grep -lF "\"7150.$HOST\"" st/steps/*) &&
    jq -e ".request.nodes == 1 and .request.cpus_on_node == 2" "$f" &&
    wait_for "test -f 7150.done" 30
'

# The prologue (and the qstat it runs) runs below the job'"'"'s starter,
# the launch hook'"'"'s pbs_python (and tracer-prolog) in its session:
# none of them is the job'"'"'s.  (The emulator'"'"'s hooks run in
# sched-emu, a python script, which the tool table names by the script.)
test_expect_success 'tracer'"'"'s own prologue, qstat and pbs_python are not the job'"'"'s tools' '
    for j in 7101 7107; do
        f=$(find store/default/jobs -name 0.$HOST.json | grep -F "/$j.$HOST/0.") &&
        jq -r ".tools[].name" "$f" >tools.$j &&
        grep -qx burn tools.$j &&
        ! grep -E "^(tracer-prolog|python3.*|qstat|pbs_python|sched-emu|tracer\.py)$" tools.$j ||
        return 1
    done
'

test_expect_success 'hook: a job that exits 3 is failed, exit code 3' '
    pbsjob 7108 hooked/mom_priv --hook hooks/tracer.py -- /bin/sh -c "exit 3" &&
    batch_wait_record 7108.$HOST &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3" rec.json
'

# --- the node's name in PBS, array subjobs ----------------------------------

# nodewait JOB NODE: the job's record on NODE, copied to rec.json
nodewait ()
{
    wait_for "find store/default/jobs -name 0.$2.json | grep -qF \"/$1/0.\"" 30 &&
    cp "$(find store/default/jobs -name 0.$2.json | grep -F "/$1/0.")" rec.json
}

# PBS_MOM_NODE_NAME names the node otherwise than the host: exec_host,
# qstat and the hooks'"'"' pbs.get_local_nodename() say pbsnode0701.
test_expect_success 'classic: the record is on the node PBS names (PBS_MOM_NODE_NAME in pbs.conf)' '
    printf "PBS_EXEC=/opt/pbs\nPBS_MOM_NODE_NAME=pbsnode0701\n" >pbs.conf &&
    test_when_finished "rm -f pbs.conf" &&
    pbsjob 7130 classic/mom_priv --node pbsnode0701 -- "$BURN" cpu=0.3 &&
    grep -q "pbs-prologue: job 7130.$HOST: tracerd follows it on pbsnode0701$" prolog.log &&
    nodewait 7130.$HOST pbsnode0701 &&
    jq -e ".identity.node == \"pbsnode0701\" and .request.nodes == 1
           and .request.cpus_on_node == 2" rec.json &&
    ! find store/default/jobs -name "0.$HOST.json" | grep -qF "/7130.$HOST/" &&
    $REPORT $UNSIGNED -j 7130.$HOST >view &&
    grep -q "Step 0 on pbsnode0701: COMPLETED" view
'

test_expect_success 'hook: the record is on the node PBS names (pbs.get_local_nodename)' '
    pbsjob 7131 hooked/mom_priv --node pbsnode0701 --hook hooks/tracer.py \
        -- "$BURN" cpu=0.3 &&
    nodewait 7131.$HOST pbsnode0701 &&
    jq -e ".identity.node == \"pbsnode0701\" and .request.nodes == 1
           and .request.cpus_on_node == 2
           and .outcome.state == \"completed\"" rec.json
'

# PBS names a subjob 7140[2].srv (qstat -t), its array 7140[].srv; qstat
# takes them with or without the server.
test_expect_success 'array subjob: listed as 7140[2].HOST, and -j finds it by that id, 7140[2] or 7140[]' '
    pbsjob "7140[2]" classic/mom_priv -- "$BURN" cpu=0.3 &&
    batch_wait_record "7140[2].$HOST" &&
    jq -e ".identity.array_job_id == \"7140[].$HOST\"
           and .identity.array_task_id == 2" rec.json &&
    $REPORT $UNSIGNED -u tracertest -P -o jobid >list &&
    grep -F "7140[2].$HOST" list &&
    ! grep -F "7140[].$HOST" list &&
    for sel in "7140[2].$HOST" "7140[2]" "7140[]" "7140[].$HOST"; do
        $REPORT $UNSIGNED -j "$sel" >view &&
        grep -qF "Job 7140[2].$HOST" view || return 1
    done &&
    ! $REPORT $UNSIGNED -j "7140[3]" >view 2>err &&
    ! grep -qF "Job 7140" view
'

# --- pbs_cgroups -----------------------------------------------------------------

test_expect_success CGV1 'pbs_cgroups and the hook: the record follows the job cgroup' '
    pbsjob 7110 hooked/mom_priv --cgroup pbs_cgroups --hook hooks/tracer.py \
        -- "$BURN" cpu=1,mem=64M &&
    test "$(hooks_of execjob_epilogue)" = tracer,pbs_cgroups &&
    batch_wait_record 7110.$HOST &&
    batch_check_record pbs 7110.$HOST acct1 workq 300 hooked/spool/7110.$HOST.OU &&
    jq -e ".cgroup.attach == \"cgroup\" and .cgroup.version == \"v1\"
           and .cgroup.paths.memory == \"/pbs_jobs.service/jobid/7110.$HOST\"
           and .cgroup.paths.cpuacct == \"/pbs_jobs.service/jobid/7110.$HOST\"
           and .summary.cpu.exact == true
           and .summary.memory.limit_bytes == 209715200" rec.json &&
    ! test -e /sys/fs/cgroup/memory/pbs_jobs.service/jobid/7110.$HOST
'

test_expect_success CGV1 'pbs_cgroups and the hook: exit 3' '
    pbsjob 7111 hooked/mom_priv --cgroup pbs_cgroups --hook hooks/tracer.py \
        -- /bin/sh -c "$BURN cpu=0.3; exit 3" &&
    batch_wait_record 7111.$HOST &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3
           and .cgroup.attach == \"cgroup\"" rec.json
'

# With pbs_cgroups (it subscribes to execjob_epilogue) pbs_mom does not
# run mom_priv/epilogue, so tracerd never hears the end: it must notice
# that the cgroup and processes are gone and write an incomplete record.
test_expect_success CGV1 'pbs_cgroups and classic scripts: no epilogue, an incomplete record' '
    pbsjob 7112 classic/mom_priv --cgroup pbs_cgroups -- "$BURN" cpu=1,mem=64M &&
    test "$(jq -r "[.events[] | select(.event == \"epilogue\")][0].skipped" out.json)" = \
        "hook pbs_cgroups subscribes to execjob_epilogue" &&
    ! grep -q "pbs-epilogue: job 7112" prolog.log &&
    batch_wait_record 7112.$HOST 60 &&
    $REPORT $UNSIGNED rec.json >/dev/null &&
    jq -e ".outcome.complete == false and .cgroup.attach == \"cgroup\"
           and .cgroup.paths.memory == \"/pbs_jobs.service/jobid/7112.$HOST\"" \
        rec.json
'

# --- records that are not what they claim ---------------------------------------

# tracertest reaches the private munged too, as any user reaches a
# site's: a record it signs is signed, but not by a trusted signer.
test_expect_success SIGNED 'a record signed by a user is forged: tracer-report exits 5' '
    mkdir -p user && chown tracertest user &&
    (cd user && runuser -u tracertest -- env -i PATH=/bin:/usr/bin \
        "$B/collector/tracer-run" -c "$TRASH/tracer.yaml" -q \
        -o "$TRASH/user/plain.json" -- true) &&
    # tracer-run leaves a user'"'"'s own record unsigned; the user signs
    # it with their own credential, hoping it passes for tracerd'"'"'s
    test "$(jq -r .signature.scheme user/plain.json)" = none &&
    runuser -u tracertest -- "$B/tests/signrec" "$MUNGE_SOCKET" \
        "$TRASH/user/plain.json" "$TRASH/user/forged.json" &&
    test "$(jq -r .signature.scheme user/forged.json)" = munge-sha256 &&
    job=$(jq -r .identity.job_id user/forged.json) &&
    "$B/tests/storeput" store user/forged.json &&
    test_when_finished "rm -rf store/default/jobs/*/$job" &&
    test_expect_code 5 $REPORT -j "$job" >out 2>err &&
    grep -q "/$job/0.$HOST.json: REJECTED: signature is forged: signed by uid $UID_T, which is not a trusted signer$" err &&
    ! grep -q "modified after signing" err &&
    ! grep -q "^Job " out &&
    # another job'"'"'s view is not told of it, nor failed by it; a
    # listing names it
    $REPORT -j 7101.$HOST >out 2>err &&
    grep -q "^Job 7101.$HOST" out &&
    ! grep -q "REJECTED" err &&
    test_must_fail $REPORT -a >l.out 2>l.err &&
    grep -q "/$job/0.$HOST.json: REJECTED: signature is forged" l.err
'

# A valid record of job 7101 copied over job 7102'"'"'s: its signature
# holds (it covers the record, not where it lies), so the store place
# must be checked against the identity.
test_expect_success SIGNED 'a signed record replayed into another job'"'"'s place: exit 3' '
    dst=$(find store/default/jobs -name 0.$HOST.json | grep -F "/7102.$HOST/0.") &&
    src=$(find store/default/jobs -name 0.$HOST.json | grep -F "/7101.$HOST/0.") &&
    cp -p "$dst" 7102.saved &&
    test_when_finished "cp -p 7102.saved \"$dst\"" &&
    $REPORT -j 7102.$HOST >/dev/null &&
    cp -p "$src" "$dst" &&
    $REPORT "$dst" >/dev/null &&
    test_expect_code 3 $REPORT -j 7102.$HOST >out 2>err &&
    grep -q "^tracer-report: $PWD/$dst: REJECTED: the record is job 7101.$HOST'"'"'s (step 0, node $HOST, cluster default), not in its place in the store (copied or moved here)$" err &&
    ! grep -q "modified after signing" err &&
    ! grep -q "^Job " out &&
    test_expect_code 3 $REPORT -j 7102.$HOST --json >out &&
    test "$(jq length out)" = 0
'

test_expect_success 'setup: restore job 7102'"'"'s record' '
    $REPORT $UNSIGNED -j 7102.$HOST >/dev/null
'

# munged stops while tracerd runs: the job is still recorded, unsigned
# and saying why; nothing signs it later.
test_expect_success SIGNED 'munged stopped: the record is written unsigned, saying why' '
    munged_stop &&
    pbsjob 7120 classic/mom_priv -- "$BURN" cpu=0.3 &&
    test "$(jq .job.exit_status out.json)" = 0 &&
    batch_wait_record 7120.$HOST &&
    jq -e ".signature.scheme == \"none\"
           and (.signature.reason | startswith(\"munge: \"))
           and .outcome.state == \"completed\"" rec.json &&
    grep -q "7120.*record left unsigned: munge: " tracerd.log
'

test_expect_success SIGNED 'munged stopped: tracer-report exits 4 on that record' '
    test_expect_code 4 $REPORT -j 7120.$HOST >out 2>err &&
    cat err &&
    grep -q "unsigned" err &&
    # why, as a user reads it (tr_sign_reason_str): the socket tried
    grep -q "munged was not running (no answer on .*): start munged" err &&
    ! grep -q "modified after signing" err &&
    $REPORT --allow-unsigned -j 7120.$HOST >out &&
    grep -q "^Job 7120.$HOST" out
'

test_expect_success SIGNED 'munged back: the next job is signed again' '
    munged_start &&
    private_conf "$sock" <<-EOF &&
	sampling.interval: 0.2
	signing.enabled: true
	signing.munge_socket: "$MUNGE_SOCKET"
	prolog.qstat: "$PWD/qstat"
	EOF
    kill -HUP "$(cat tracerd.pid)" &&
    wait_for "grep -q \"configuration reloaded\" tracerd.log" 10 &&
    pbsjob 7121 classic/mom_priv -- "$BURN" cpu=0.3 &&
    batch_wait_record 7121.$HOST &&
    test "$(jq -r .signature.scheme rec.json)" = munge-sha256 &&
    # munged_start made a new key: the records signed before no longer
    # verify, so this one is checked alone
    $REPORT rec.json >out &&
    grep -q "signature valid" out
'

# --- exact CPU without a cgroup, at the default settings ---------------------

# No cgroup: the job is a process set sampled every second (the
# default), and the last second of a job that ends right after its
# CPU-heavy part falls between two readings: only the process exits
# (taskstats, on by default) have it.  burn prints its own getrusage
# (SELF + CHILDREN) as the job's truth.  Besides burn the job's session
# runs its shell, whose row in the tool table is added to burn's own, and
# tracer's own prologue (tracer-prolog, qstat; the hook's python), which
# is not the job's, in the tool table or in its CPU, exit events or not.
# burn's row must match its own.
# exact_cpu OUT: the record in rec.json agrees with burn's line in OUT.
exact_cpu ()
{
    _own=$(grep "^{\"cpu_s\"" "$1" | jq .cpu_s) &&
    _rest=$(jq "[.tools[] | select(.name != \"burn\") | .cpu_s] | add // 0" \
        rec.json) &&
    jq -e ".cgroup.attach == \"process-tree\"
           and (.summary.cpu.exact or .summary.processes.lost > 0)
           and .summary.cpu.user_s + .summary.cpu.system_s
               <= .summary.cpu.total_s + 1e-6
           and ([.tools[] | .exact] | all or .summary.processes.lost > 0)
           and ([.tools[].name | select(test(\"^(tracer-prolog|qstat|python3.*|pbs_python|sched-emu|tracer[.]py)$\"))]
                | length == 0)" \
        rec.json &&
    within "$(jq ".tools[] | select(.name == \"burn\") | .cpu_s" rec.json)" \
        "$_own" 1 &&
    within "$(jq .summary.cpu.total_s rec.json)" \
        "$(awk -v a="$_own" -v b="$_rest" "BEGIN { print a + b }")" 1
}

test_expect_success 'setup: tracerd at the default interval, process exits on' '
    private_tracerd_stop &&
    private_conf "$sock" <<-EOF &&
	signing.enabled: false
	prolog.qstat: "$PWD/qstat"
	EOF
    sed "s/^  taskstats: false$/  taskstats: true/" tracer.yaml >t.yaml &&
    mv t.yaml tracer.yaml &&
    ! grep -q "interval\|taskstats: false" tracer.yaml &&
    private_tracerd_start
'

test_expect_success 'no cgroup: 2 CPUs busy to the last second, CPU within 1%' '
    pbsjob 7160 classic/mom_priv -- "$BURN" cpu=3,threads=2 &&
    batch_wait_record 7160.$HOST &&
    exact_cpu classic/spool/7160.$HOST.OU
'

test_expect_success 'no cgroup: a 1-second job, CPU within 1%' '
    pbsjob 7161 classic/mom_priv -- "$BURN" cpu=1 &&
    batch_wait_record 7161.$HOST &&
    exact_cpu classic/spool/7161.$HOST.OU
'

test_expect_success 'no cgroup, the hook: a 1-second job, CPU within 1%' '
    pbsjob 7162 hooked/mom_priv --hook hooks/tracer.py -- "$BURN" cpu=1 &&
    batch_wait_record 7162.$HOST &&
    exact_cpu hooked/spool/7162.$HOST.OU
'

test_expect_success 'no cgroup or tracerd state is left behind' '
    ! ls -d /sys/fs/cgroup/*/pbs_jobs.service/jobid/71??.$HOST 2>/dev/null &&
    wait_for "test -z \"\$(ls st/steps)\"" 20
'

test_done
