#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-prolog under Torque and LSF, with and without their cgroups

tests/sched-emu plays Torque'"'"'s pbs_mom (prologue and epilogue in
mom_priv, as wrappers and under their own names, Torque 6 and 4
arguments, the job in /torque/JOB/R0.t0 or in no cgroup) and LSF'"'"'s
sbatchd (HOST_PRE_EXEC and HOST_POST_EXEC, the job in
/lsf/CLUSTER/job.ID.N.EPOCH or in no cgroup, an array element) around a
real burn job run as tracertest.  A private tracerd writes the records.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

batch_preamble
require_or_skip "tracer-prolog built ($P)" test -x "$P"
test -d /sys/fs/cgroup/memory && test -d /sys/fs/cgroup/cpuacct &&
    test -d /sys/fs/cgroup/cpuset && test -d /sys/fs/cgroup/freezer &&
    test_set_prereq CGV1

# torquejob N MOM_PRIV [sched-emu options] -- CMD...
torquejob ()
{
    _n=$1 && _mp=$2 && shift 2 &&
    $TQWRAP "$EMU" torque --job "$_n.$HOST" --user tracertest --queue batch \
        --account acct1 --name burnjob \
        --resources neednodes=1:ppn=2,nodes=1:ppn=2,walltime=00:05:00,mem=200mb \
        --mom-priv "$_mp" "$@" >out.json
}

# lsfjob ID [sched-emu options] -- CMD...: with tracer-prolog as the
# pre- and post-exec of the LSF family $FAM (quoted: LSF hands the line
# to /bin/sh -c, and the trash directory's name has a space).  lsf10:
# IBM LSF 10.1's HOST_PRE_EXEC and HOST_POST_EXEC, as root.  openlava:
# the queue's PRE_EXEC and POST_EXEC with PRE_POST_EXEC_USER=root, the
# -R text as OpenLava passes it.
lsfjob ()
{
    _n=$1 && shift &&
    _cmd="'$P' -c '$PWD/tracer.yaml' --log '$PWD/prolog.log'" &&
    if test "$FAM" = openlava
    then
        set -- --pre-post-user root --rsrc "rusage[mem=200]" "$@"
    fi &&
    "$EMU" lsf --family "$FAM" --job "$_n" --cluster tr0702 \
        --user tracertest --queue normal --name burnjob --project proj1 \
        --ncpus 2 --mem 200 \
        --pre "$_cmd lsf-pre" --post "$_cmd lsf-post" \
        --spool lsfspool "$@" >out.json
}

test_expect_success 'setup: a private munged' '
    sock=$(mktemp -d /tmp/tr0702.XXXXXX) &&
    echo "$sock" >sockdir
'
tr_atexit 'rm -rf "$(cat sockdir)"'
batch_signing

test_expect_success 'setup: tracerd on a private configuration' '
    private_conf "$sock" <<-EOF &&
	sampling.interval: 0.2
	$signing
	EOF
    TRACER_CONF=$PWD/tracer.yaml && export TRACER_CONF &&
    private_tracerd_start
'
tr_atexit 'test -f tracerd.pid && kill "$(cat tracerd.pid)" 2>/dev/null
           for c in memory cpuacct cpuset freezer; do
               rmdir /sys/fs/cgroup/$c/torque/72??.*/R0.t0 \
                   /sys/fs/cgroup/$c/torque/72??.* /sys/fs/cgroup/$c/torque \
                   /sys/fs/cgroup/$c/lsf/tr0702/job.* \
                   /sys/fs/cgroup/$c/lsf/tr0702 /sys/fs/cgroup/$c/lsf
           done 2>/dev/null; :'

test_expect_success 'setup: Torque wrappers, and tracer-prolog under Torque'"'"'s names' '
    mkdir -p wrap/mom_priv named/mom_priv &&
    for m in prologue epilogue; do
        printf "#!/bin/sh\nexec \"%s\" -c \"%s\" --log \"%s\" torque-%s \"\$@\"\n" \
            "$P" "$PWD/tracer.yaml" "$PWD/prolog.log" $m >wrap/mom_priv/$m &&
        # the name sets the mode, bash exec -a keeps argv[0]; as root
        # the configuration is the compiled default (batch_default_conf
        # puts it there), never TRACER_CONF
        printf "#!/bin/bash\nexec -a \"\$0\" \"%s\" \"\$@\"\n" \
            "$P" >named/mom_priv/$m || return 1
    done &&
    chmod 0500 wrap/mom_priv/* named/mom_priv/*
'

# --- Torque ----------------------------------------------------------------------

test_expect_success 'torque: prologue and epilogue exit 0, the job runs' '
    torquejob 7201 wrap/mom_priv -- "$BURN" cpu=3,mem=64M &&
    test "$(jq -r .result out.json)" = ran &&
    jq -e "[.events[] | .exit == 0 and .timed_out == false] | all" out.json &&
    grep -q "^{\"cpu_s\"" wrap/spool/7201.$HOST.OU &&
    test_must_be_empty wrap/spool/7201.$HOST.ER &&
    grep -q "torque-prologue: job 7201.$HOST: tracerd follows it on $HOST$" prolog.log &&
    grep -q "torque-epilogue: job 7201.$HOST: ended on $HOST$" prolog.log
'

test_expect_success 'torque: the record, found through PBS_JOBID' '
    batch_wait_record 7201.$HOST &&
    batch_check_record torque 7201.$HOST acct1 batch 300 wrap/spool/7201.$HOST.OU &&
    jq -e ".cgroup.attach == \"process-tree\"
           and .cgroup.match.env == \"PBS_JOBID=7201.$HOST\"" rec.json &&
    COLUMNS=1000 $REPORT $UNSIGNED -j 7201.$HOST >view &&
    grep -q "^Job 7201.$HOST \"burnjob\"" view &&
    grep -q "^Job 7201.$HOST \"burnjob\" on cluster .* (torque)$" view &&
    grep -q "^  User/Group: *tracertest/.* (uid $UID_T.*), account acct1, partition batch$" view &&
    grep -q "Step 0 on $HOST: COMPLETED, exit code 0:0" view
'

test_expect_success 'torque: a job that exits 3 is failed, exit code 3' '
    torquejob 7202 wrap/mom_priv -- /bin/sh -c "exit 3" &&
    batch_wait_record 7202.$HOST &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3" rec.json
'

test_expect_success UNSHARE 'torque 4, under its own names: argument count and environment tell Torque' '
    TQWRAP="batch_default_conf tracer.yaml" torquejob 7203 named/mom_priv --torque-version 4 -- "$BURN" cpu=3,mem=64M &&
    test "$(jq -r "[.events[] | .argv | length | tostring] | join(\",\")" out.json)" = 8,11 &&
    jq -e "[.events[] | .exit == 0] | all" out.json &&
    batch_wait_record 7203.$HOST &&
    batch_check_record torque 7203.$HOST acct1 batch 300 named/spool/7203.$HOST.OU
'

test_expect_success UNSHARE 'torque 6, tracer-prolog as prologue and epilogue' '
    TQWRAP="batch_default_conf tracer.yaml" torquejob 7204 named/mom_priv -- "$BURN" cpu=3,mem=64M &&
    test "$(jq -r "[.events[] | .argv | length | tostring] | join(\",\")" out.json)" = 10,12 &&
    batch_wait_record 7204.$HOST &&
    batch_check_record torque 7204.$HOST acct1 batch 300 named/spool/7204.$HOST.OU
'

test_expect_success CGV1 'torque cgroups: the record follows /torque/JOB' '
    torquejob 7205 wrap/mom_priv --cgroup torque -- "$BURN" cpu=1,mem=64M &&
    batch_wait_record 7205.$HOST &&
    batch_check_record torque 7205.$HOST acct1 batch 300 wrap/spool/7205.$HOST.OU &&
    jq -e ".cgroup.attach == \"cgroup\" and .cgroup.version == \"v1\"
           and .cgroup.paths.memory == \"/torque/7205.$HOST\"
           and .cgroup.paths.cpuacct == \"/torque/7205.$HOST\"
           and .summary.cpu.exact == true
           and .summary.memory.limit_bytes == 209715200" rec.json &&
    ! test -e /sys/fs/cgroup/memory/torque/7205.$HOST
'

test_expect_success CGV1 'torque cgroups: exit 3' '
    torquejob 7206 wrap/mom_priv --cgroup torque \
        -- /bin/sh -c "$BURN cpu=0.3; exit 3" &&
    batch_wait_record 7206.$HOST &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3
           and .cgroup.attach == \"cgroup\"" rec.json
'

# --- LSF ----------------------------------------------------------------------------

for FAM in lsf10 openlava
do
# each family its own job ids: 7250.. and 7350..
case $FAM in lsf10) B=72 ;; openlava) B=73 ;; esac

test_expect_success "lsf $FAM: pre- and post-exec exit 0 around the job" '
    lsfjob ${B}50 -- "$BURN" cpu=3,mem=64M &&
    test "$(jq -r .result out.json)" = ran &&
    test "$(jq -r .family out.json)" = $FAM &&
    test "$(jq -r "[.events[] | .event] | join(\",\")" out.json)" = \
        pre_exec,post_exec &&
    jq -e "[.events[] | .exit == 0 and .timed_out == false] | all" out.json &&
    grep -q "lsf-pre: job ${B}50: tracerd follows it on $HOST$" prolog.log &&
    grep -q "lsf-post: job ${B}50: ended on $HOST$" prolog.log
'

test_expect_success "lsf $FAM: the record, found through LSB_JOBID" '
    batch_wait_record ${B}50 &&
    batch_check_record lsf ${B}50 proj1 normal null lsfspool/${B}50.out &&
    jq -e ".cgroup.attach == \"process-tree\"
           and .cgroup.match.env == \"LSB_JOBID=${B}50\"
           and .summary.processes.count > 0" rec.json &&
    COLUMNS=1000 $REPORT $UNSIGNED -j ${B}50 >view &&
    grep -q "^Job ${B}50 \"burnjob\"" view &&
    grep -q "^Job ${B}50 \"burnjob\" on cluster .* (lsf)$" view &&
    grep -q "^  User/Group: *tracertest/.* (uid $UID_T.*), account proj1, partition normal$" view &&
    grep -q "Step 0 on $HOST: COMPLETED, exit code 0:0" view
'

test_expect_success "lsf $FAM: the job view advises in LSF words (-n, rusage[mem], -W), torque in PBS words" '
    grep "Next time:" view >next &&
    grep -Eq "Next time: +-n [0-9]+ -R \"rusage\[mem=[0-9]+MB\]\"( -W [0-9]+:[0-9]{2})? \(" next &&
    ! grep -q -- "--cpus-per-task\|--mem\|--time" next &&
    COLUMNS=1000 $REPORT $UNSIGNED -j 7201.$HOST >tview &&
    grep -Eq "Next time: +-l select=1:ncpus=[0-9]+:mem=[0-9]+[mg]b( -l walltime=[0-9:]+)? \(" tview &&
    ! grep "Next time:" tview | grep -q -- "--cpus-per-task"
'

test_expect_success "lsf $FAM: LSB_JOBEXIT_STAT of exit 3: failed, exit code 3" '
    lsfjob ${B}51 -- /bin/sh -c "sleep 1; exit 3" &&
    batch_wait_record ${B}51 &&
    jq -e ".outcome.state == \"failed\" and .outcome.exit_code == 3" rec.json
'

# bkill: SIGINT, SIGTERM, SIGKILL.  IBM LSF says SIG_TERM_USER in
# LSB_JOBEXIT_INFO; OpenLava passes only the wait status.
test_expect_success "lsf $FAM: a job bkill ends is cancelled in every view" '
    lsfjob ${B}52 --kill-after 1 -- /bin/sleep 100 &&
    test "$(jq -r .job.killed out.json)" = user &&
    batch_wait_record ${B}52 &&
    jq -e ".outcome.state == \"cancelled\"" rec.json &&
    if test $FAM = openlava
    then
        jq -e ".outcome.reason | test(\"SIGINT\")" rec.json
    else
        jq -e ".outcome.reason | test(\"SIG_TERM_USER\")" rec.json
    fi &&
    $REPORT $UNSIGNED -j ${B}52 >view &&
    grep -q "Step 0 on $HOST: CANCELLED" view || { cat view list; false; } &&
    $REPORT $UNSIGNED -j ${B}52 -P -n -o JobID,State >list &&
    grep -qx "${B}52|CANCELLED" list &&
    grep -qx "${B}52[.]0|CANCELLED" list
'

test_expect_success CGV1 "lsf $FAM cgroups: the record follows /lsf/CLUSTER/job.ID.N.EPOCH" '
    lsfjob ${B}53 --cgroup v1 -- "$BURN" cpu=1,mem=64M &&
    batch_wait_record ${B}53 &&
    batch_check_record lsf ${B}53 proj1 normal null lsfspool/${B}53.out &&
    jq -e ".cgroup.attach == \"cgroup\" and .cgroup.version == \"v1\"
           and (.cgroup.paths.memory | test(\"^/lsf/tr0702/job[.]${B}53[.][0-9]+[.][0-9]+$\"))
           and (.cgroup.paths.cpuacct | test(\"^/lsf/tr0702/job[.]${B}53[.][0-9]+[.][0-9]+$\"))
           and .summary.cpu.exact == true" rec.json &&
    ! ls -d /sys/fs/cgroup/memory/lsf/tr0702/job.${B}53.* 2>/dev/null
'

test_expect_success CGV1 "lsf $FAM cgroups: array element ${B}54[3]" '
    lsfjob ${B}54 --index 3 --cgroup v1 -- "$BURN" cpu=1,mem=64M &&
    test "$(jq -r .job_id out.json)" = "${B}54[3]" &&
    batch_wait_record "${B}54[3]" &&
    batch_check_record lsf "${B}54[3]" proj1 normal null "lsfspool/${B}54[3].out" &&
    jq -e ".identity.array_job_id == \"${B}54\" and .identity.array_task_id == 3
           and (.cgroup.paths.memory | test(\"^/lsf/tr0702/job[.]${B}54[[]3[]][.][0-9]+[.][0-9]+$\"))" \
        rec.json &&
    $REPORT $UNSIGNED -j "${B}54[3]" >view &&
    grep -q "^Job ${B}54\[3\] (element 3 of array ${B}54) \"burnjob\"" view
'

test_expect_success "lsf $FAM: an array element without a cgroup, 209[1] in every view" '
    lsfjob ${B}55 --index 2 -- "$BURN" cpu=3,mem=64M &&
    batch_wait_record "${B}55[2]" &&
    batch_check_record lsf "${B}55[2]" proj1 normal null "lsfspool/${B}55[2].out" &&
    jq -e ".cgroup.match.env == \"LSB_JOBID=${B}55\nLSB_JOBINDEX=2\"" rec.json &&
    $REPORT $UNSIGNED -j "${B}55[2]" -P -n -o JobID,State >list &&
    grep -qx "${B}55\\[2\\]|COMPLETED" list &&
    ! grep -q "${B}55_2" list
'

done

# --- a record that followed no process -------------------------------------------

# A job that tracerd never saw (here: it ended between two readings, a
# tracerd reading every 30 s; on OpenLava before LSB_JOBID keyed LSF
# jobs, every job) measured nothing: its record is incomplete with the
# reason, whatever LSF said, its figures are unknown, never 0, and it is
# in no advice.
test_expect_success 'setup: tracerd reading every 30 s' '
    private_tracerd_stop &&
    private_conf "$sock" <<-EOF &&
	sampling.interval: 30
	$signing
	EOF
    private_tracerd_start
'

for FAM in lsf10 openlava
do
case $FAM in lsf10) B=72 ;; openlava) B=73 ;; esac
test_expect_success "lsf $FAM: a record that followed no process is incomplete, its figures unknown" '
    lsfjob ${B}70 -- /bin/true &&
    batch_wait_record ${B}70 &&
    jq -e ".outcome.state == \"incomplete\" and .outcome.complete == false
           and (.outcome.reason | test(\"no process\"))
           and .outcome.exit_code == 0
           and .summary.cpu.source == \"none\"
           and (.summary.cpu | has(\"total_s\") | not)
           and (.summary.memory | has(\"peak_bytes\") | not)
           and (.summary | has(\"io\") | not)" rec.json &&
    $REPORT $UNSIGNED -j ${B}70 >view &&
    grep -q "Step 0 on $HOST: INCOMPLETE" view &&
    grep -q "CPU time: *unknown" view &&
    ! grep -q "Process I/O" view &&
    ! grep "Stalled" view | grep -q "%" &&
    $REPORT $UNSIGNED -j ${B}70 -P -n -o JobID,State,Complete,TotalCPU >list &&
    grep -q "^${B}70[.]0|INCOMPLETE|0|" list &&
    ! grep -q "|00:00:00$" list
'
done

test_expect_success 'setup: tracerd reading every 0.2 s again' '
    private_tracerd_stop &&
    private_conf "$sock" <<-EOF &&
	sampling.interval: 0.2
	$signing
	EOF
    private_tracerd_start
'

# --- the job's environment names the configuration ----------------------------

# LSF hands HOST_PRE_EXEC the job's environment: a user who exports
# TRACER_CONF before bsub names the file the root pre-exec reads.  As
# root, tracer-prolog reads only --config or the compiled default (here a
# private one, batch_default_conf), says TRACER_CONF was ignored and shows
# nothing of the file, whether a root-only file or /etc/shadow.
test_expect_success UNSHARE 'lsf, as root: TRACER_CONF from the job is ignored, nothing of a root-only file shows' '
    echo "SECRET-0702-first-line: 1" >secret.conf && chmod 0600 secret.conf &&
    _cmd="'"'"'$P'"'"' -v --log '"'"'$PWD/hostile.log'"'"'" &&
    for f in "7260 $PWD/secret.conf" "7262 /etc/shadow"; do
        batch_default_conf tracer.yaml "$EMU" lsf --job ${f%% *} \
            --cluster tr0702 --user tracertest --queue normal \
            --name burnjob --project proj1 --ncpus 2 --mem 200 \
            --pre "$_cmd lsf-pre" --post "$_cmd lsf-post" \
            --spool lsfspool --job-env "TRACER_CONF=${f#* }" \
            -- "$BURN" cpu=0.2 >out.json &&
        test "$(jq -r .result out.json)" = ran || return 1
    done &&
    test $(grep -c "TRACER_CONF ignored: run as root" hostile.log) = 4 &&
    grep -q "lsf-pre: job 7260: tracerd follows it on $HOST$" hostile.log &&
    batch_wait_record 7260 && batch_wait_record 7262 &&
    shadow=$(head -n 1 /etc/shadow | cut -d: -f1-2) &&
    ! grep -rsF -e SECRET-0702 -e "$shadow" hostile.log out.json lsfspool \
        tracerd.log store
'

# Root never takes its configuration from a file another user may write
# (it says where tracerd is and which qstat to run), and does not quote
# it.
test_expect_success 'as root: --config naming a file tracertest owns is not read' '
    mkdir -p user && chown tracertest user &&
    echo "SECRET-0702-user-line: 1" >user/tracer.yaml &&
    chown tracertest user/tracer.yaml && chmod 0600 user/tracer.yaml &&
    "$P" -c user/tracer.yaml --log own.log pbs-epilogue 1.x root root n 0 \
        ncpus=1 x q a 0 &&
    grep -q "user/tracer.yaml: not owned by root (uid $UID_T): not read (going on with the defaults)" own.log &&
    ! grep -q SECRET-0702 own.log
'

# The hostile side itself: as tracertest (a job starter runs as the
# user) TRACER_CONF is honoured, but a root-only file cannot be read and
# nothing of it shows.
test_expect_success 'as tracertest: TRACER_CONF naming a root-only file shows nothing of it' '
    runuser -u tracertest -- env -i PATH=/bin:/usr/bin LSB_JOBID=7261 \
        TRACER_CONF="$PWD/secret.conf" "$P" -v lsf-starter /bin/true \
        >user.out 2>user.err &&
    grep -q "secret.conf: Permission denied" user.err &&
    ! grep -q SECRET-0702 user.out user.err
'

test_expect_success 'no cgroup or tracerd state is left behind' '
    ! ls -d /sys/fs/cgroup/*/torque/72??.$HOST 2>/dev/null &&
    ! ls -d /sys/fs/cgroup/*/lsf/tr0702/job.* 2>/dev/null &&
    wait_for "test -z \"\$(ls st/steps)\"" 20
'

test_done
