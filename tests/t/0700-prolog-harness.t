#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='sched-emu runs prologues, epilogues, hooks and pre/post-exec as the schedulers do

The scheduler emulation the tracer-prolog tests rely on, checked with
scripts and a hook that dump what they are given, as they were on a real
OpenPBS: argv, environment, uid, working directory, umask, descriptors,
sessions and parents, order, exit-code rules, alarms and cgroups.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

batch_preamble
require_or_skip "the system python3 (PBS hooks)" test -x /usr/bin/python3
test -d /sys/fs/cgroup/memory && test -d /sys/fs/cgroup/cpuacct &&
    test -d /sys/fs/cgroup/cpuset && test -d /sys/fs/cgroup/freezer &&
    test_set_prereq CGV1

UHOME=$(getent passwd tracertest | cut -d: -f6)

# ev EVENT FIELD [N]: FIELD of the Nth (0) event named EVENT in out.json
ev ()
{
    jq -r --arg e "$1" "[.events[] | select(.event == \$e)][${3:-0}].$2" \
        out.json
}

# hooks_of EVENT: the hooks (site and built-in) that ran for EVENT, in order
hooks_of ()
{
    jq -r --arg e "$1" '[.events[] | select(.event == $e) | .hook] | join(",")' \
        out.json
}

# val FILE KEY: the value of the line KEY=VALUE in a dump
val ()
{
    sed -n "s/^$2=//p" "$1" | head -1
}

# envblock FILE: the environment a dump recorded
envblock ()
{
    sed -n '/^--- env$/,/^--- end env$/p' "$1" | sed '1d;$d'
}

# write_dump FILE: a prologue/epilogue/pre/post that dumps what it is given
# into logs/<name>-<first argument>.log, like the one run on OpenPBS.
# Absolute paths: LSF runs it with PATH="/bin /usr/bin /sbin /usr/sbin".
write_dump ()
{
    cat >"$1" <<-EOF &&
	#!/bin/sh
	FDS=";\$(cd /proc/\$\$/fd && for f in *; do printf '%s=%s;' "\$f" "\$(/bin/readlink "\$f")"; done)"
	LOG='$PWD/logs'/\$(/usr/bin/basename "\$0")-\$1.log
	{
	    echo "pid=\$\$"
	    echo "ppid=\$PPID"
	    echo "uid=\$(/usr/bin/id -u)"
	    echo "gid=\$(/usr/bin/id -g)"
	    echo "sid=\$(/bin/ps -o sid= -p \$\$ | /usr/bin/tr -d ' ')"
	    echo "pgid=\$(/bin/ps -o pgid= -p \$\$ | /usr/bin/tr -d ' ')"
	    echo "parent_sid=\$(/bin/ps -o sid= -p \$PPID | /usr/bin/tr -d ' ')"
	    echo "grandparent=\$(/bin/ps -o ppid= -p \$PPID | /usr/bin/tr -d ' ')"
	    echo "argc=\$#"
	    i=0; for a in "\$0" "\$@"; do echo "argv\$i=\$a"; i=\$((i+1)); done
	    echo "--- env"; /usr/bin/env | /usr/bin/sort; echo "--- end env"
	    echo "cwd=\$(pwd)"
	    echo "umask=\$(umask)"
	    echo "fds=\$FDS"
	    echo "--- cgroup"; /bin/cat /proc/self/cgroup
	} >"\$LOG" 2>&1
	echo "\$(/usr/bin/basename "\$0") stdout line for \$1"
	echo "\$(/usr/bin/basename "\$0") stderr line for \$1" >&2
	if test -f '$PWD/logs/hang'; then
	    /bin/sleep 1000 & echo \$! >'$PWD/logs/bg.pid'
	    /bin/sleep 1000
	fi
	test -f '$PWD/logs/exitcode' && exit \$(/bin/cat '$PWD/logs/exitcode')
	exit 0
	EOF
    chmod 0700 "$1"
}

test_expect_success 'setup: dump scripts in mom_priv, a job that dumps too' '
    mkdir -p logs pbs/mom_priv torque/mom_priv hooks &&
    write_dump pbs/mom_priv/prologue &&
    write_dump pbs/mom_priv/epilogue &&
    write_dump torque/mom_priv/prologue &&
    write_dump torque/mom_priv/epilogue &&
    chmod 0500 torque/mom_priv/prologue torque/mom_priv/epilogue &&
    write_dump lsfdump && chmod 0755 lsfdump &&
    cat >job.sh <<-\EOF &&
	echo "JOB pid=$$ ppid=$PPID sid=$(ps -o sid= -p $$ | tr -d " ") uid=$(id -u) gid=$(id -g)"
	echo "JOB cwd=$(pwd) umask=$(umask)"
	env | sort | sed "s/^/JOBENV /"
	sed "s/^/JOBCG /" /proc/self/cgroup
	exit ${JOB_EXIT:-0}
	EOF
    chmod 0755 job.sh
'
tr_atexit 'for d in /sys/fs/cgroup/*/pbs_jobs.service/jobid/70??.* \
               /sys/fs/cgroup/*/torque/70??.*/R0.t0 \
               /sys/fs/cgroup/*/torque/70??.* \
               /sys/fs/cgroup/*/lsf/tr0700/job.*; do
               test -d "$d" && rmdir "$d"; done 2>/dev/null
           for d in /sys/fs/cgroup/*/pbs_jobs.service/jobid \
               /sys/fs/cgroup/*/pbs_jobs.service /sys/fs/cgroup/*/torque \
               /sys/fs/cgroup/*/lsf/tr0700 /sys/fs/cgroup/*/lsf; do
               test -d "$d" && rmdir "$d"; done 2>/dev/null; :'

# --- OpenPBS: classic prologue and epilogue -------------------------------

test_expect_success 'pbs: the job runs between prologue and epilogue' '
    "$EMU" pbs --job 7001.$HOST --user tracertest --queue workq \
        --account acct1 --name dumpjob \
        --resources ncpus=2,mem=200mb,walltime=00:05:00 \
        --mom-priv pbs/mom_priv -- /bin/sh "$PWD/job.sh" >out.json &&
    test "$(jq -r .result out.json)" = ran &&
    test "$(jq -r ".events | map(.event) | join(\",\")" out.json)" = \
        prologue,epilogue &&
    test "$(jq .job.exit_status out.json)" = 0 &&
    jq -e "(.events[0].end <= .job.start) and (.job.start <= .job.end)
           and (.job.end <= .events[1].start)" out.json
'

test_expect_success 'pbs prologue: argv, uid, environment, cwd, umask' '
    P=logs/prologue-7001.$HOST.log &&
    test "$(val $P argc)" = 3 &&
    test "$(val $P argv0)" = "$PWD/pbs/mom_priv/prologue" &&
    test "$(val $P argv1)" = 7001.$HOST &&
    test "$(val $P argv2)" = tracertest &&
    test "$(val $P argv3)" = tracertest &&
    test "$(val $P uid)" = 0 && test "$(val $P gid)" = 0 &&
    printf "PATH=/bin:/usr/bin\nPBS_JOBDIR=%s\nPWD=%s\n" \
        "$UHOME" "$PWD/pbs/mom_priv" >expect &&
    envblock $P >actual &&
    test_cmp expect actual &&
    test "$(val $P cwd)" = "$PWD/pbs/mom_priv" &&
    test "$(val $P umask)" = 0077
'

test_expect_success 'pbs prologue: descriptors, its own session, the starter as parent' '
    P=logs/prologue-7001.$HOST.log &&
    fds=$(val $P fds) &&
    case "$fds" in *";0=/dev/null;"*) ;; *) false ;; esac &&
    case "$fds" in *";1=$PWD/pbs/spool/7001.$HOST.OU;"*) ;; *) false ;; esac &&
    case "$fds" in *";2=$PWD/pbs/spool/7001.$HOST.ER;"*) ;; *) false ;; esac &&
    case "$fds" in *";3=$PWD/pbs/mom_logs/sched-emu;"*) ;; *) false ;; esac &&
    case "$fds" in *";17=pipe:"*) ;; *) false ;; esac &&
    test "$(val $P sid)" = "$(val $P pid)" &&
    test "$(val $P pgid)" = "$(val $P pid)" &&
    test "$(val $P ppid)" = "$(jq .job.pid out.json)" &&
    test "$(val $P ppid)" = "$(jq .job.session out.json)" &&
    test "$(val $P grandparent)" = "$(jq .mom_pid out.json)"
'

test_expect_success 'pbs job: the starter is the session leader, runs as the user' '
    OU=pbs/spool/7001.$HOST.OU &&
    test "$(jq .job.session out.json)" = "$(jq .job.pid out.json)" &&
    grep -q "^JOB pid=.* sid=$(jq .job.pid out.json) uid=$UID_T gid=" $OU &&
    grep -q "^JOB cwd=$UHOME umask=0077$" $OU &&
    grep -qx "JOBENV PBS_JOBID=7001.$HOST" $OU &&
    grep -qx "JOBENV PBS_JOBNAME=dumpjob" $OU &&
    grep -qx "JOBENV PBS_QUEUE=workq" $OU &&
    grep -qx "JOBENV PBS_O_WORKDIR=$UHOME" $OU &&
    grep -qx "JOBENV HOME=$UHOME" $OU &&
    grep -qx "JOBENV USER=tracertest" $OU &&
    grep -qx "JOBENV LOGNAME=tracertest" $OU &&
    grep -qx "JOBENV PBS_ENVIRONMENT=PBS_BATCH" $OU &&
    grep -qx "JOBENV PBS_NODEFILE=$PWD/pbs/aux/7001.$HOST" $OU &&
    grep -qx "$HOST" pbs/aux/7001.$HOST
'

test_expect_success 'pbs: prologue, job and epilogue output in the spool files, in order' '
    grep -v "^JOB" pbs/spool/7001.$HOST.OU >ou &&
    printf "%s\n" "prologue stdout line for 7001.$HOST" \
        "epilogue stdout line for 7001.$HOST" >expect &&
    test_cmp expect ou &&
    printf "%s\n" "prologue stderr line for 7001.$HOST" \
        "epilogue stderr line for 7001.$HOST" >expect &&
    test_cmp expect pbs/spool/7001.$HOST.ER &&
    test "$(stat -c %U pbs/spool/7001.$HOST.OU)" = tracertest
'

test_expect_success 'pbs epilogue: the 10 arguments, cwd home, umask 022' '
    E=logs/epilogue-7001.$HOST.log &&
    test "$(val $E argc)" = 10 &&
    test "$(val $E argv1)" = 7001.$HOST &&
    test "$(val $E argv2)" = tracertest &&
    test "$(val $E argv3)" = tracertest &&
    test "$(val $E argv4)" = dumpjob &&
    test "$(val $E argv5)" = "$(jq .job.session out.json)" &&
    test "$(val $E argv6)" = mem=200mb,ncpus=2,place=free,walltime=00:05:00 &&
    used="^cpupercent=[0-9]+,cput=[0-9:]{8},mem=[0-9]+kb,ncpus=2,vmem=0kb" &&
    val $E argv7 | grep -Eq "$used,walltime=00:00:0[0-9]$" &&
    test "$(val $E argv8)" = workq &&
    test "$(val $E argv9)" = acct1 &&
    test "$(val $E argv10)" = 0 &&
    printf "PATH=/bin:/usr/bin\nPBS_JOBDIR=%s\nPWD=%s\n" "$UHOME" "$UHOME" \
        >expect &&
    envblock $E >actual &&
    test_cmp expect actual &&
    test "$(val $E cwd)" = "$UHOME" &&
    test "$(val $E umask)" = 0022 &&
    test "$(val $E uid)" = 0
'

test_expect_success 'pbs epilogue: own session, parent a fresh mom child in the mom'"'"'s session' '
    E=logs/epilogue-7001.$HOST.log &&
    test "$(val $E sid)" = "$(val $E pid)" &&
    test "$(val $E ppid)" != "$(jq .job.pid out.json)" &&
    test "$(val $E ppid)" != "$(jq .mom_pid out.json)" &&
    test "$(val $E grandparent)" = "$(jq .mom_pid out.json)" &&
    test "$(val $E parent_sid)" = "$(ps -o sid= -p $$ | tr -d " ")" &&
    fds=$(val $E fds) &&
    case "$fds" in *";1=$PWD/pbs/spool/7001.$HOST.OU;"*) ;; *) false ;; esac
'

test_expect_success 'pbs: no account is "null", a signal is 256+N' '
    "$EMU" pbs --job 7002.$HOST --user tracertest --mom-priv pbs/mom_priv \
        --resources ncpus=1 -- "kill -USR1 \$\$" >out.json &&
    E=logs/epilogue-7002.$HOST.log &&
    test "$(val $E argv9)" = null &&
    test "$(val $E argv10)" = $((256 + 10)) &&
    test "$(val $E argv6)" = ncpus=1,place=free &&
    test "$(jq .job.exit_status out.json)" = 266
'

test_expect_success 'pbs: a job exits 3, the epilogue is told 3' '
    "$EMU" pbs --job 7003.$HOST --user tracertest \
        --mom-priv pbs/mom_priv -- /bin/sh -c "exit 3" >out.json &&
    test "$(val logs/epilogue-7003.$HOST.log argv10)" = 3 &&
    test "$(jq .job.wait_status out.json)" = 768
'

test_expect_success 'pbs: prologue exit 1 aborts; the epilogue runs with session 0 and -2' '
    echo 1 >logs/exitcode &&
    test_when_finished "rm -f logs/exitcode" &&
    "$EMU" pbs --job 7004.$HOST --user tracertest --mom-priv pbs/mom_priv \
        -- /bin/sh -c "echo JOB RAN" >out.json &&
    test "$(jq -r .result out.json)" = aborted &&
    test "$(jq .job.ran out.json)" = false &&
    ! grep -q "JOB RAN" pbs/spool/7004.$HOST.OU &&
    grep -q "^Could not run prolog: .*exit: 1" pbs/spool/7004.$HOST.ER &&
    test "$(val logs/epilogue-7004.$HOST.log argv5)" = 0 &&
    test "$(val logs/epilogue-7004.$HOST.log argv10)" = -2
'

test_expect_success 'pbs: prologue exit 2 requeues (-3), once' '
    echo 2 >logs/exitcode &&
    test_when_finished "rm -f logs/exitcode" &&
    "$EMU" pbs --job 7005.$HOST --user tracertest --mom-priv pbs/mom_priv \
        -- /bin/sh -c "echo JOB RAN" >out.json &&
    test "$(jq -r .result out.json)" = requeued &&
    ! grep -q "JOB RAN" pbs/spool/7005.$HOST.OU &&
    test "$(jq "[.events[] | select(.event == \"prologue\")] | length" out.json)" = 1 &&
    test "$(val logs/epilogue-7005.$HOST.log argv10)" = -3
'

test_expect_success 'pbs: the alarm kills a hanging prologue and its process group' '
    touch logs/hang &&
    test_when_finished "rm -f logs/hang logs/bg.pid" &&
    "$EMU" pbs --job 7006.$HOST --user tracertest --mom-priv pbs/mom_priv \
        --prologue-timeout 1 -- /bin/sh -c "echo JOB RAN" >out.json &&
    test "$(ev prologue timed_out)" = true &&
    test "$(ev prologue exit)" = -4 &&
    test "$(jq -r .result out.json)" = requeued &&
    ! grep -q "JOB RAN" pbs/spool/7006.$HOST.OU &&
    bg=$(cat logs/bg.pid) &&
    wait_for "! tr_pid_running $bg" 10 &&
    grep -q "prologue: alarm after 1.0 s, process group" \
        pbs/mom_logs/sched-emu
'

test_expect_success 'pbs: a prologue writable by the group is refused and the job requeued' '
    chmod 0720 pbs/mom_priv/prologue &&
    test_when_finished "chmod 0700 pbs/mom_priv/prologue" &&
    "$EMU" pbs --job 7007.$HOST --user tracertest --mom-priv pbs/mom_priv \
        -- /bin/sh -c "echo JOB RAN" >out.json &&
    test "$(ev prologue skipped)" = "Permission Error" &&
    test "$(ev prologue exit)" = -1 &&
    test "$(jq -r .result out.json)" = requeued &&
    ! test -e logs/prologue-7007.$HOST.log &&
    grep -q "Permission Error" pbs/mom_logs/sched-emu
'

test_expect_success 'pbs: so is one not owned by root' '
    chown tracertest pbs/mom_priv/prologue &&
    test_when_finished "chown root pbs/mom_priv/prologue" &&
    "$EMU" pbs --job 7008.$HOST --user tracertest --mom-priv pbs/mom_priv \
        -- /bin/true >out.json &&
    test "$(ev prologue skipped)" = "Permission Error" &&
    ! test -e logs/prologue-7008.$HOST.log
'

test_expect_success 'pbs: a symbolic link counts as its target (stat), argv[0] is the link' '
    mv pbs/mom_priv/prologue real-prologue &&
    ln -s "$PWD/real-prologue" pbs/mom_priv/prologue &&
    test_when_finished "rm pbs/mom_priv/prologue && mv real-prologue pbs/mom_priv/prologue" &&
    "$EMU" pbs --job 7009.$HOST --user tracertest --mom-priv pbs/mom_priv \
        -- /bin/true >out.json &&
    test "$(jq -r .result out.json)" = ran &&
    test "$(val logs/prologue-7009.$HOST.log argv0)" = "$PWD/pbs/mom_priv/prologue"
'

test_expect_success 'pbs: no prologue, no epilogue: the job just runs' '
    mkdir -p empty/mom_priv &&
    "$EMU" pbs --job 7010.$HOST --user tracertest --mom-priv empty/mom_priv \
        -- /bin/sh -c "echo JOB RAN" >out.json &&
    test "$(ev prologue skipped)" = absent &&
    test "$(ev epilogue skipped)" = absent &&
    grep -qx "JOB RAN" empty/spool/7010.$HOST.OU
'

test_expect_success 'pbs: --kill-after: qdel gives 256+15, walltime -29, mem -27' '
    for r in user:271 walltime:-29 mem:-27; do
        "$EMU" pbs --job 7011.$HOST --user tracertest \
            --mom-priv empty/mom_priv --kill-after 0.5 \
            --kill-reason ${r%%:*} -- /bin/sleep 100 >out.json &&
        test "$(jq .job.exit_status out.json)" = ${r#*:} &&
        test "$(jq -r .job.killed out.json)" = ${r%%:*} || return 1
    done
'

test_expect_success 'pbs: what the job left in its session is killed at its end' '
    "$EMU" pbs --job 7012.$HOST --user tracertest --mom-priv empty/mom_priv \
        -- /bin/sh -c "/bin/sleep 1000 & echo \$! >&2" >out.json &&
    bg=$(cat empty/spool/7012.$HOST.ER) &&
    test "$(jq .job.leftovers_killed out.json)" -ge 1 &&
    wait_for "! tr_pid_running $bg" 10
'

test_expect_success 'pbs: --qstat writes a qstat that describes the running job' '
    "$EMU" pbs --job 7013.$HOST --user tracertest --queue workq \
        --account acct1 --name qjob \
        --resources ncpus=2,mem=200mb,walltime=00:05:00 \
        --mom-priv empty/mom_priv --qstat "$PWD/qstat" -- /bin/true \
        >out.json &&
    ./qstat -f -F json 7013.$HOST >q.json &&
    jq -e ".Jobs[\"7013.$HOST\"] | .Job_Name == \"qjob\"
           and .queue == \"workq\" and .Account_Name == \"acct1\"
           and .euser == \"tracertest\" and .job_state == \"R\"
           and .Resource_List.ncpus == 2 and .Resource_List.mem == \"200mb\"
           and .Resource_List.walltime == \"00:05:00\"
           and .exec_host == \"$HOST/0*2\"" q.json &&
    ./qstat -f 7013 | grep -q "^    Resource_List.mem = 200mb$" &&
    test_expect_code 153 ./qstat -f -F json 99.$HOST 2>err &&
    grep -q "Unknown Job Id 99.$HOST" err &&
    test $(wc -l <qstat.log) = 3
'

# --- OpenPBS hooks ----------------------------------------------------------

# write_hook NAME EVENTS: a hook that dumps what it sees into
# logs/hook-NAME-<event type>.log, and its sidecar.
write_hook ()
{
    cat >hooks/$1.py <<-EOF &&
	import json, os, sys, pbs
	e = pbs.event()
	j = e.job
	with open('$PWD/logs/hook-%s-%d.log' % (e.hook_name, e.type), 'w') as f:
	    f.write('name=%s\n' % __name__)
	    f.write('begin=%d launch=%d epilogue=%d end=%d\n' % (pbs.EXECJOB_BEGIN,
	            pbs.EXECJOB_LAUNCH, pbs.EXECJOB_EPILOGUE, pbs.EXECJOB_END))
	    f.write('pid=%d\nppid=%d\nuid=%d\ncwd=%s\n' % (os.getpid(),
	            os.getppid(), os.getuid(), os.getcwd()))
	    f.write('argv=%s\nexecutable=%s\n' % (json.dumps(sys.argv),
	            sys.executable))
	    f.write('requestor=%s\n' % e.requestor)
	    f.write('job=%s %s %s %s %s %s\n' % (j.id, j.euser, j.egroup,
	            j.Job_Name, j.queue, j.Account_Name))
	    f.write('Resource_List=%s\n' % j.Resource_List)
	    mem = j.Resource_List['mem']
	    f.write('ncpus=%d mem=%s walltime=%d\n' % (j.Resource_List['ncpus'],
	            mem if mem is None else int(mem), j.Resource_List['walltime']))
	    f.write('session_id=%s\nExit_status=%s\n' % (j.session_id,
	            j.Exit_status))
	    f.write('resources_used=%s\n' % j.resources_used)
	    f.write('environ=%s\n' % ' '.join('%s=%s' % kv
	                                       for kv in sorted(os.environ.items())))
	    f.write('parent_cgroup=%s\n' % open('/proc/%d/cgroup'
	            % os.getppid()).read().replace('\n', ' '))
	    if os.path.exists('$PWD/logs/limit-%s' % e.hook_name):
	        cg = '/sys/fs/cgroup/memory/pbs_jobs.service/jobid/' + j.id
	        f.write('limit=%s\n' % open(cg + '/memory.limit_in_bytes').read().strip())
	pbs.logmsg(pbs.LOG_DEBUG, 'dumped %s' % e.type)
	if os.path.exists('$PWD/logs/reject-%s-%d' % (e.hook_name, e.type)):
	    e.reject('refused by %s' % e.hook_name)
	if os.path.exists('$PWD/logs/raise-%s' % e.hook_name):
	    raise ValueError('broken hook')
	if os.path.exists('$PWD/logs/hang-%s' % e.hook_name):
	    import time
	    time.sleep(1000)
	e.accept()
	EOF
    echo "$2" >hooks/$1.py.events
}

test_expect_success 'hooks: events in order, around the classic prologue' '
    write_hook early "execjob_begin,execjob_launch,execjob_epilogue,execjob_end order=50" &&
    "$EMU" pbs --job 7020.$HOST --user tracertest --account acct1 \
        --name hjob --resources ncpus=2,mem=200mb,walltime=00:05:00 \
        --mom-priv pbs/mom_priv --hook hooks/early.py -- /bin/sh -c "exit 4" \
        >out.json &&
    test "$(jq -r "[.events[] | .event + \"/\" + .kind] | join(\",\")" out.json)" = \
        execjob_begin/hook,prologue/script,execjob_launch/hook,execjob_epilogue/hook,epilogue/script,execjob_end/hook &&
    test "$(ev epilogue skipped)" = "hook early subscribes to execjob_epilogue" &&
    ! test -e logs/epilogue-7020.$HOST.log &&
    test -e logs/prologue-7020.$HOST.log &&
    jq -e "[.events[] | select(.kind == \"hook\") | .accepted] | all" out.json
'

test_expect_success 'hooks: as root, argv [""], in hooks/tmp, with 3 variables' '
    for t in 64 2048 256 512; do
        H=logs/hook-early-$t.log &&
        test "$(val $H name)" = builtins &&
        test "$(val $H uid)" = 0 &&
        test "$(val $H argv)" = "[\"\"]" &&
        test "$(val $H executable)" = /usr/bin/python3 &&
        test "$(val $H cwd)" = "$PWD/pbs/mom_priv/hooks/tmp" &&
        test "$(val $H environ)" = \
            "LC_CTYPE=C.UTF-8 PATH=/bin:/usr/bin PBS_CONF_FILE=/etc/pbs.conf" &&
        test "$(val $H requestor)" = pbs_mom &&
        test "$(val $H job)" = "7020.$HOST tracertest tracertest hjob workq acct1" &&
        test "$(val $H Resource_List)" = ncpus=2,mem=200mb,walltime=00:05:00 &&
        test "$(val $H ncpus)" = "2 mem=209715200 walltime=300" || return 1
    done &&
    test "$(val logs/hook-early-64.log begin)" = \
        "64 launch=2048 epilogue=256 end=512" &&
    ls pbs/mom_priv/hooks/tmp >tmpfiles && test_must_be_empty tmpfiles
'

test_expect_success 'hooks: begin and end run from the mom, launch from the starter' '
    mom=$(jq .mom_pid out.json) && starter=$(jq .job.pid out.json) &&
    test "$(val logs/hook-early-64.log ppid)" = $mom &&
    test "$(val logs/hook-early-512.log ppid)" = $mom &&
    test "$(val logs/hook-early-2048.log ppid)" = $starter &&
    test "$(ev execjob_launch ppid)" = $starter &&
    e=$(val logs/hook-early-256.log ppid) &&
    test $e != $mom && test $e != $starter &&
    test "$(ev execjob_epilogue ppid)" = $e
'

test_expect_success 'hooks: session_id from launch on, Exit_status and resources_used at the end' '
    test "$(val logs/hook-early-64.log session_id)" = None &&
    test "$(val logs/hook-early-2048.log session_id)" = "$(jq .job.session out.json)" &&
    test "$(val logs/hook-early-512.log session_id)" = "$(jq .job.session out.json)" &&
    test "$(val logs/hook-early-2048.log Exit_status)" = None &&
    test "$(val logs/hook-early-256.log Exit_status)" = 4 &&
    test "$(val logs/hook-early-512.log Exit_status)" = 4 &&
    test "$(val logs/hook-early-64.log resources_used)" = None &&
    val logs/hook-early-512.log resources_used | grep -q "^cpupercent=.*,walltime=" &&
    test "$(jq -r "[.events[] | select(.kind == \"hook\")][0].logs[0][1]" out.json)" = "dumped 64" &&
    grep -q "hook early execjob_begin: \[7\] dumped 64" pbs/mom_logs/sched-emu
'

test_expect_success 'hooks: an execjob_prologue hook replaces mom_priv/prologue' '
    write_hook pro "execjob_prologue order=1" &&
    "$EMU" pbs --job 7021.$HOST --user tracertest --mom-priv pbs/mom_priv \
        --resources ncpus=1,mem=1mb,walltime=60 --hook hooks/pro.py \
        -- /bin/true >out.json &&
    test "$(ev prologue skipped)" = "hook pro subscribes to execjob_prologue" &&
    ! test -e logs/prologue-7021.$HOST.log &&
    test "$(val logs/hook-pro-128.log ppid)" = "$(jq .job.pid out.json)" &&
    test -e logs/epilogue-7021.$HOST.log
'

test_expect_success 'hooks: a rejected execjob_begin: the job does not run, later hooks neither' '
    write_hook late "execjob_begin,execjob_end order=60" &&
    touch logs/reject-early-64 &&
    test_when_finished "rm -f logs/reject-early-64" &&
    rm -f logs/hook-late-64.log &&
    "$EMU" pbs --job 7022.$HOST --user tracertest --mom-priv pbs/mom_priv \
        --hook hooks/early.py --hook hooks/late.py \
        -- /bin/sh -c "echo JOB RAN" >out.json &&
    test "$(jq -r .result out.json)" = rejected &&
    test "$(ev execjob_begin reject_msg)" = "refused by early" &&
    ! test -e logs/hook-late-64.log &&
    ! grep -q "JOB RAN" pbs/spool/7022.$HOST.OU &&
    test "$(ev execjob_end hook 1)" = late
'

test_expect_success 'hooks: one that raises is rejected, one that hangs is killed at its alarm' '
    touch logs/raise-early &&
    test_when_finished "rm -f logs/raise-early" &&
    "$EMU" pbs --job 7023.$HOST --user tracertest --mom-priv pbs/mom_priv \
        --hook hooks/early.py -- /bin/true >out.json &&
    rm logs/raise-early &&
    test "$(jq -r .result out.json)" = rejected &&
    ev execjob_begin exception | grep -q "ValueError: broken hook" &&
    write_hook slow "execjob_begin order=1 alarm=1" &&
    touch logs/hang-slow &&
    test_when_finished "rm -f logs/hang-slow" &&
    "$EMU" pbs --job 7024.$HOST --user tracertest --mom-priv pbs/mom_priv \
        --hook hooks/slow.py -- /bin/true >out.json &&
    test "$(ev execjob_begin timed_out)" = true &&
    test "$(ev execjob_begin reject_msg)" = "hook alarm" &&
    test "$(jq -r .result out.json)" = rejected
'

test_expect_success 'hooks: a hook without its events file is refused' '
    echo "import pbs" >hooks/bare.py &&
    test_expect_code 1 "$EMU" pbs --job 7025.$HOST --user tracertest \
        --mom-priv pbs/mom_priv --hook hooks/bare.py -- /bin/true 2>err &&
    grep -q "bare.py.events" err
'

# --- pbs_cgroups --------------------------------------------------------------

test_expect_success CGV1 'pbs_cgroups: the job in pbs_jobs.service/jobid/JOB, the prologue not' '
    touch logs/limit-late &&
    test_when_finished "rm -f logs/limit-late" &&
    write_hook early "execjob_begin,execjob_launch,execjob_epilogue,execjob_end order=50" &&
    write_hook late "execjob_begin,execjob_launch,execjob_end order=150" &&
    "$EMU" pbs --job 7030.$HOST --user tracertest \
        --resources ncpus=1,mem=200mb,walltime=00:05:00 \
        --mom-priv pbs/mom_priv --cgroup pbs_cgroups \
        --hook hooks/early.py --hook hooks/late.py \
        -- /bin/sh "$PWD/job.sh" >out.json &&
    OU=pbs/spool/7030.$HOST.OU &&
    for c in memory cpuacct cpuset; do
        grep -q "^JOBCG [0-9]*:$c:/pbs_jobs.service/jobid/7030.$HOST$" $OU &&
        ! grep -q ":$c:/pbs_jobs" logs/prologue-7030.$HOST.log || return 1
    done &&
    test "$(val logs/hook-late-64.log limit)" = 209715200 &&
    test "$(jq -r ".cgroups[2]" out.json)" = \
        /sys/fs/cgroup/memory/pbs_jobs.service/jobid/7030.$HOST
'

test_expect_success CGV1 'pbs_cgroups: order 100; a launch hook below it sees the starter outside' '
    test "$(hooks_of execjob_launch)" = early,pbs_cgroups,late &&
    val logs/hook-early-2048.log parent_cgroup >early &&
    ! grep -q pbs_jobs early &&
    val logs/hook-late-2048.log parent_cgroup >late &&
    grep -q ":memory:/pbs_jobs.service/jobid/7030.$HOST " late &&
    test "$(ev execjob_epilogue hook 1)" = pbs_cgroups &&
    test "$(ev epilogue skipped)" = "hook early subscribes to execjob_epilogue"
'

test_expect_success CGV1 'pbs_cgroups alone suppresses mom_priv/epilogue; all removed' '
    "$EMU" pbs --job 7031.$HOST --user tracertest \
        --resources ncpus=1,mem=100mb --mom-priv pbs/mom_priv \
        --cgroup pbs_cgroups -- /bin/true >out.json &&
    test "$(ev epilogue skipped)" = \
        "hook pbs_cgroups subscribes to execjob_epilogue" &&
    test -e logs/prologue-7031.$HOST.log &&
    ! test -e logs/epilogue-7031.$HOST.log &&
    test "$(ev execjob_epilogue removed)" = true &&
    for c in memory cpuacct cpuset; do
        ! test -e /sys/fs/cgroup/$c/pbs_jobs.service/jobid/7031.$HOST &&
        ! test -e /sys/fs/cgroup/$c/pbs_jobs.service/jobid/7030.$HOST ||
        return 1
    done
'

# --- Torque ---------------------------------------------------------------------

test_expect_success 'torque: prologue and epilogue arguments (Torque 6), environment' '
    "$EMU" torque --job 7040.$HOST --user tracertest --queue batch \
        --account acct1 --name tjob \
        --resources neednodes=1:ppn=2,nodes=1:ppn=2,walltime=00:05:00,mem=200mb \
        --mom-priv torque/mom_priv -- /bin/sh "$PWD/job.sh" >out.json &&
    test "$(jq -r .result out.json)" = ran &&
    P=logs/prologue-7040.$HOST.log && E=logs/epilogue-7040.$HOST.log &&
    test "$(val $P argc)" = 9 &&
    test "$(val $P argv4)" = tjob &&
    test "$(val $P argv5)" = neednodes=1:ppn=2,nodes=1:ppn=2,walltime=00:05:00,mem=200mb &&
    test "$(val $P argv6)" = batch &&
    test "$(val $P argv7)" = acct1 &&
    test "$(val $P argv8)" = "$PWD/torque/mom_priv/jobs/7040.$HOST.SC" &&
    test "$(val $P argv9)" = $HOST &&
    test "$(val $E argc)" = 11 &&
    test "$(val $E argv5)" = "$(jq .job.session out.json)" &&
    val $E argv7 | grep -q "^cput=.*,mem=[0-9]*kb,vmem=0kb,walltime=" &&
    test "$(val $E argv10)" = 0 &&
    test "$(val $E argv11)" = "$PWD/torque/mom_priv/jobs/7040.$HOST.SC" &&
    for f in $P $E; do
        envblock $f >env &&
        grep -qx "PBS_JOBID=7040.$HOST" env &&
        grep -qx "PBS_NODEFILE=$PWD/torque/aux/7040.$HOST" env &&
        grep -qx "PBS_MSHOST=$HOST" env &&
        grep -qx "PBS_NUM_NODES=1" env &&
        grep -qx "PBS_NUM_PPN=2" env &&
        grep -qx "PBS_NP=2" env &&
        grep -qx "PBS_O_WORKDIR=$UHOME" env &&
        test "$(val $f uid)" = 0 &&
        test "$(val $f cwd)" = "$PWD/torque/mom_priv" || return 1
    done &&
    test "$(val $P ppid)" = "$(jq .job.pid out.json)" &&
    grep -qx "JOBENV PBS_JOBID=7040.$HOST" torque/spool/7040.$HOST.OU
'

test_expect_success 'torque 4: no script path, no host list' '
    "$EMU" torque --job 7041.$HOST --user tracertest \
        --mom-priv torque/mom_priv --torque-version 4 -- /bin/true \
        >out.json &&
    test "$(val logs/prologue-7041.$HOST.log argc)" = 7 &&
    test "$(val logs/epilogue-7041.$HOST.log argc)" = 10 &&
    test "$(val logs/epilogue-7041.$HOST.log argv9)" = ""
'

test_expect_success 'torque: Permission Error for a prologue others may write' '
    chmod 0502 torque/mom_priv/prologue &&
    test_when_finished "chmod 0500 torque/mom_priv/prologue" &&
    "$EMU" torque --job 7042.$HOST --user tracertest \
        --mom-priv torque/mom_priv -- /bin/true >out.json &&
    test "$(ev prologue skipped)" = "Permission Error" &&
    test "$(jq -r .result out.json)" = requeued
'

test_expect_success CGV1 'torque cgroups: the job in torque/JOB/R0.t0, removed after' '
    "$EMU" torque --job 7043.$HOST --user tracertest \
        --resources nodes=1:ppn=1,mem=100mb --mom-priv torque/mom_priv \
        --cgroup torque -- /bin/sh "$PWD/job.sh" >out.json &&
    OU=torque/spool/7043.$HOST.OU &&
    for c in memory cpuacct cpuset; do
        grep -q "^JOBCG [0-9]*:$c:/torque/7043.$HOST/R0.t0$" $OU &&
        ! grep -q ":$c:/torque" logs/prologue-7043.$HOST.log &&
        ! test -e /sys/fs/cgroup/$c/torque/7043.$HOST || return 1
    done &&
    test "$(ev cgroup_attach attached)" = "$(jq .job.pid out.json)"
'

# --- LSF --------------------------------------------------------------------------

test_expect_success 'lsf: pre-exec and post-exec as root in /tmp, LSF PATH, /dev/null' '
    "$EMU" lsf --job 7050 --cluster tr0700 --user tracertest --name ljob \
        --queue normal --ncpus 2 --mem 200 --project proj1 \
        --pre "\"$PWD/lsfdump\" pre" --post "\"$PWD/lsfdump\" post" \
        --spool lsfspool -- /bin/sh -c "exit 3" >out.json &&
    test "$(jq -r .result out.json)" = ran &&
    test "$(jq -r ".events | map(.event) | join(\",\")" out.json)" = \
        pre_exec,post_exec &&
    jq -e "(.events[0].end <= .job.start) and (.job.end <= .events[1].start)" \
        out.json &&
    for n in pre post; do
        f=logs/lsfdump-$n.log &&
        test "$(val $f uid)" = 0 &&
        test "$(val $f cwd)" = /tmp &&
        test "$(val $f umask)" = 0022 &&
        test "$(val $f argv1)" = $n &&
        fds=$(val $f fds) &&
        case "$fds" in *";0=/dev/null;"*) ;; *) false ;; esac &&
        case "$fds" in *";1=/dev/null;"*) ;; *) false ;; esac &&
        case "$fds" in *";2=/dev/null;"*) ;; *) false ;; esac &&
        envblock $f >env &&
        grep -qx "PATH=/bin /usr/bin /sbin /usr/sbin" env &&
        grep -qx "LSB_JOBID=7050" env &&
        grep -qx "LSB_JOBINDEX=0" env &&
        grep -qx "LSB_BATCH_JID=7050" env &&
        grep -qx "LSB_JOBNAME=ljob" env &&
        grep -qx "LSB_QUEUE=normal" env &&
        grep -qx "LSB_MCPU_HOSTS=$HOST 2" env &&
        grep -qx "LSB_HOSTS=$HOST $HOST" env &&
        grep -qx "LSB_DJOB_NUMPROC=2" env &&
        rr="select\[type == local\] order\[r15s:pg\]" &&
        grep -qx "LSB_EFFECTIVE_RSRCREQ=$rr rusage\[mem=200.00\] span\[hosts=1\]" env &&
        grep -qx "LSFUSER=tracertest" env &&
        grep -qx "USER=tracertest" env &&
        grep -qx "LSB_PROJECT_NAME=proj1" env || return 1
    done &&
    ! envblock logs/lsfdump-pre.log | grep -q LSB_JOBEXIT_STAT &&
    envblock logs/lsfdump-post.log | grep -qx "LSB_JOBEXIT_STAT=768" &&
    ! envblock logs/lsfdump-post.log | grep -q LSB_JOBEXIT_INFO
'

test_expect_success 'lsf: the job as the user in its own session, with the job environment' '
    "$EMU" lsf --job 7051 --cluster tr0700 --user tracertest \
        --spool lsfspool -- /bin/sh "$PWD/job.sh" >out.json &&
    OU=lsfspool/7051.out &&
    grep -q "sid=$(jq .job.session out.json) uid=$UID_T " $OU &&
    grep -qx "JOBENV LSB_BATCH_JID=7051" $OU &&
    grep -qx "JOBENV LSB_JOBID=7051" $OU &&
    grep -qx "JOBENV PATH=/bin:/usr/bin" $OU
'

test_expect_success 'lsf: pre-exec exit 1 sends the job back: no job, no post-exec' '
    echo 1 >logs/exitcode &&
    test_when_finished "rm -f logs/exitcode" &&
    rm -f logs/lsfdump-post.log &&
    "$EMU" lsf --job 7052 --cluster tr0700 --user tracertest \
        --pre "\"$PWD/lsfdump\" pre" --post "\"$PWD/lsfdump\" post" \
        --spool lsfspool -- /bin/sh -c "echo JOB RAN" >out.json &&
    test "$(jq -r .result out.json)" = requeued &&
    test "$(jq .job.ran out.json)" = false &&
    ! test -e logs/lsfdump-post.log &&
    ! grep -q "JOB RAN" lsfspool/7052.out 2>/dev/null
'

test_expect_success 'lsf: a killed job: bkill'"'"'s SIGINT first, the post-exec gets it and LSB_JOBEXIT_INFO' '
    "$EMU" lsf --job 7053 --cluster tr0700 --user tracertest \
        --post "\"$PWD/lsfdump\" post" --kill-after 0.5 \
        --spool lsfspool -- /bin/sleep 100 >out.json &&
    envblock logs/lsfdump-post.log >env &&
    grep -qx "LSB_JOBEXIT_STAT=2" env &&
    grep -qx "LSB_JOBEXIT_INFO=SIGNAL -14 SIG_TERM_USER" env
'

test_expect_success CGV1 'lsf cgroups: an array element in lsf/CLUSTER/job.ID[IDX].N.EPOCH' '
    "$EMU" lsf --job 7054 --index 3 --cluster tr0700 --user tracertest \
        --mem 100 --pre "\"$PWD/lsfdump\" pre" --cgroup v1 \
        --spool lsfspool -- /bin/sh "$PWD/job.sh" >out.json &&
    test "$(jq -r .job_id out.json)" = "7054[3]" &&
    OU="lsfspool/7054[3].out" &&
    for c in memory cpuacct freezer; do
        grep -q "^JOBCG [0-9]*:$c:/lsf/tr0700/job\.7054\[3\]\.[0-9]*\.[0-9]*$" "$OU" &&
        ! grep -q ":$c:/lsf/" logs/lsfdump-pre.log || return 1
    done &&
    envblock logs/lsfdump-pre.log >env &&
    grep -qx "LSB_BATCH_JID=7054\[3\]" env &&
    grep -qx "LSB_JOBID=7054" env &&
    grep -qx "LSB_JOBINDEX=3" env &&
    ! ls -d /sys/fs/cgroup/memory/lsf/tr0700/job.* 2>/dev/null
'

# --- OpenLava's sbatchd (--family openlava) -------------------------------------

GID_T=$(id -g tracertest)

test_expect_success 'lsf openlava: queue pre/post-exec as the user, OpenLava'"'"'s variables, no LSB_BATCH_JID' '
    chmod 1777 logs &&
    rm -f logs/lsfdump-pre.log logs/lsfdump-post.log &&
    "$EMU" lsf --family openlava --job 7060 --cluster tr0700 \
        --user tracertest --ncpus 2 --rsrc "rusage[mem=100]" --cwd "$PWD" \
        --pre "\"$PWD/lsfdump\" pre" --post "\"$PWD/lsfdump\" post" \
        --spool lsfspool -- /bin/sh "$PWD/job.sh" >out.json &&
    test "$(jq -r .result out.json)" = ran &&
    jpid=$(jq .job.pid out.json) &&
    for n in pre post; do
        f=logs/lsfdump-$n.log &&
        test "$(val $f uid)" = $UID_T &&
        test "$(val $f gid)" = $GID_T &&
        envblock $f >env &&
        grep -qx "PATH=/bin:/usr/bin:/sbin:/usr/sbin" env &&
        grep -qx "LSB_JOBID=7060" env &&
        ! grep -q "^LSB_BATCH_JID=" env &&
        ! grep -q "^LSB_DJOB_NUMPROC=" env &&
        grep -qx "LSB_EFFECTIVE_RSRCREQ=rusage\[mem=100\]" env &&
        grep -qx "LSB_HOSTS=$HOST $HOST" env &&
        grep -q "^LSF_SERVERDIR=/" env &&
        grep -qx "LS_SUBCWD=$PWD" env &&
        grep -qx "LSB_JOBFILENAME=$(jq -r .files.jobfile out.json)" env &&
        grep -qx "LS_JOBPID=$jpid" env &&
        ! grep -q "^LSB_JOBEXIT_INFO=" env || return 1
    done &&
    envblock logs/lsfdump-pre.log | grep -qx "LS_EXEC_T=START" &&
    envblock logs/lsfdump-post.log | grep -qx "LS_EXEC_T=END" &&
    envblock logs/lsfdump-post.log | grep -qx "LSB_JOBEXIT_STAT=0" &&
    # PRE_EXEC ("/bin/sh -c CMDLINE"): a child of the job'"'"'s top
    # process, in its process group
    test "$(val logs/lsfdump-pre.log grandparent)" = $jpid &&
    test "$(val logs/lsfdump-pre.log pgid)" = $jpid &&
    # the job has no session of its own: sbatchd'"'"'s
    test "$(jq .job.session out.json)" != $jpid &&
    test "$(jq .job.pgid out.json)" = $jpid &&
    # POST_EXEC: below a forked sbatchd in a session of its own
    post_sbd=$(val logs/lsfdump-post.log grandparent) &&
    test "$(val logs/lsfdump-post.log sid)" = $post_sbd &&
    test "$post_sbd" != "$(jq .mom_pid out.json)" &&
    # the job file runs as "/bin/sh JOBFILE", the job'"'"'s top process
    OU=lsfspool/7060.out &&
    grep -q "^JOB pid=[0-9]* ppid=$jpid sid=$(jq .job.session out.json) uid=$UID_T " $OU &&
    grep -qx "JOB cwd=$PWD umask=0022" $OU &&
    grep -qx "JOBENV LSB_JOBID=7060" $OU &&
    ! grep -q "^JOBENV LSB_BATCH_JID=" $OU
'

test_expect_success 'lsf openlava: PRE_POST_EXEC_USER=root keeps the user'"'"'s gid and groups' '
    rm -f logs/lsfdump-pre.log logs/lsfdump-post.log &&
    "$EMU" lsf --family openlava --job 7061 --cluster tr0700 \
        --user tracertest --pre-post-user root \
        --pre "\"$PWD/lsfdump\" pre" --post "\"$PWD/lsfdump\" post" \
        --spool lsfspool -- /bin/true >out.json &&
    for n in pre post; do
        test "$(val logs/lsfdump-$n.log uid)" = 0 &&
        test "$(val logs/lsfdump-$n.log gid)" = $GID_T || return 1
    done &&
    ! envblock logs/lsfdump-post.log | grep -q "^LSB_EFFECTIVE_RSRCREQ="
'

test_expect_success 'lsf openlava: JOB_STARTER is the job file'"'"'s line, run by /bin/sh JOBFILE as the user' '
    "$EMU" lsf --family openlava --job 7062 --cluster tr0700 \
        --user tracertest --cwd "$PWD" --starter "/usr/bin/env STARTED=1" \
        --spool lsfspool -- /bin/sh "$PWD/job.sh" >out.json &&
    jf=$(jq -r .files.jobfile out.json) &&
    test "$(cat "$jf")" = "/usr/bin/env STARTED=1 /bin/sh '"'"'$PWD/job.sh'"'"'" &&
    OU=lsfspool/7062.out &&
    grep -qx "JOBENV STARTED=1" $OU &&
    grep -qx "JOBENV LSB_JOB_STARTER=/usr/bin/env STARTED=1" $OU &&
    grep -qx "JOB cwd=$PWD umask=0022" $OU &&
    grep -q "^JOB pid=.* uid=$UID_T " $OU
'

test_expect_success 'lsf openlava: bkill'"'"'s SIGINT, no LSB_JOBEXIT_INFO; a requeued job gets LSB_JOBPEND' '
    rm -f logs/lsfdump-pre.log logs/lsfdump-post.log &&
    "$EMU" lsf --family openlava --job 7063 --cluster tr0700 \
        --user tracertest --post "\"$PWD/lsfdump\" post" --kill-after 0.5 \
        --spool lsfspool -- /bin/sleep 100 >out.json &&
    envblock logs/lsfdump-post.log >env &&
    grep -Eqx "LSB_JOBEXIT_STAT=(2|33280)" env &&
    ! grep -q "^LSB_JOBEXIT_INFO=" env &&
    ! grep -q "^LSB_JOBPEND=" env &&
    rm -f logs/lsfdump-post.log &&
    "$EMU" lsf --family openlava --job 7064 --cluster tr0700 \
        --user tracertest --post "\"$PWD/lsfdump\" post" --kill-after 0.5 \
        --kill-reason requeue --spool lsfspool -- /bin/sleep 100 >out.json &&
    envblock logs/lsfdump-post.log | grep -qx "LSB_JOBPEND=1"
'

test_expect_success 'usage errors exit 2, not being root is refused' '
    test_expect_code 2 "$EMU" pbs --user tracertest -- true 2>err &&
    grep -q "required: --job" err &&
    test_expect_code 2 "$EMU" nosuch 2>err &&
    test_expect_code 2 runuser -u tracertest -- "$EMU" lsf --job 1 \
        --cluster c --user tracertest --spool /tmp -- true 2>err &&
    grep -q "must run as root" err
'

test_done
