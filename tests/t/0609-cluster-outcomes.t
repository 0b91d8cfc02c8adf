#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='how steps end, what they were given, the extern step

A real cluster with PrologFlags=Contain and two (fake) GPUs per node:
scancel mid-step gives "cancelled" and a time limit "timeout" (tracerd
asks squeue, since Slurm tells the node neither), the time limit is in
every record, GPUs bound to a step are in its request, and the extern
step is recorded for traced jobs only.  Each failed step gets its cause:
a tool killed by SIGSEGV under a shell is the culprit (not the shell that
exits 1 after it), a tool that exits 2 under bash is named, the time
limit and the cancel are told apart, in the record, the listing, the job
view and tracer-report --failures; a consumer failing under a producer is
blamed, not the producer that dies of SIGPIPE after it; a node set down
under a running job ends it NODE_FAIL in the listing, -s NF and the job
view.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# Every job asks for little memory: without --mem a job holds the node's.
SBATCH_MEM_PER_NODE=200 SLURM_MEM_PER_NODE=200
export SBATCH_MEM_PER_NODE SLURM_MEM_PER_NODE

# records JOB: the job's records, one line each: step state signal limit
records ()
{
    jq -r ".[] | \"\(.identity.step_id) \(.outcome.state) \
\(.outcome.signal) \(.request.time_limit_s)\"" rec.json | sort
}

test_expect_success 'start the cluster with Contain and two GPUs' '
    cluster_up --gpus 2 --slurm-conf PrologFlags=Contain &&
    test "$(sinfo -h -o %G)" = "gpu:2"
'

# Started first: the time limit (1 minute) runs while the rest goes on.
test_expect_success 'a job that will run out of time is started' '
    sbatch --tracer -t 1 --parsable --wrap "srun sleep 600" >to.out &&
    tojob=$(cat to.out) &&
    wait_for "test \"\$(squeue -h -j $tojob -o %T)\" = RUNNING" 30
'

test_expect_success 'scancel mid-step: the record says cancelled' '
    srun --tracer -t 5 sh -c "echo JOB=\$SLURM_JOB_ID >&2; exec sleep 600" \
        2>c.err &
    wait_for "grep -q ^JOB= c.err" 30 &&
    cjob=$(sed -n "s/^JOB=//p" c.err) &&
    sleep 1 &&
    scancel "$cjob" &&
    wait_for "wait_record $cjob && test \$(jq length rec.json) = 2" 120 &&
    records >c.out &&
    printf "%s\n" "0 cancelled 15 300" "extern completed null 300" >expect &&
    test_cmp expect c.out &&
    test "$(jq -r ".[] | select(.identity.step_id == \"0\") |
        .outcome.reason" rec.json)" = \
        "the scheduler reports the job CANCELLED"
'

# step0 JOB: the record of step 0 of JOB (from rec.json)
step0 ()
{
    jq ".[] | select(.identity.step_id == \"0\")" rec.json
}

test_expect_success 'cancelled: the cause in the listing and the job view' '
    $REPORT -j "$cjob" -o JobID,State,Cause -P -n >cl.out &&
    grep -qx "$cjob.0|CANCELLED|cancelled" cl.out &&
    $REPORT -j "$cjob" >cv.out &&
    grep -q "^    Cause: *cancelled: the scheduler reports the job CANCELLED$" \
        cv.out
'

test_expect_success 'a tool killed by SIGSEGV under a shell is the culprit' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2;
        perl -e \"kill q(SEGV), \\\$\\\$\"; exit 1" 2>s.err;
    sjob=$(sed -n "s/^JOB=//p" s.err) &&
    wait_for "wait_record $sjob && test \$(jq length rec.json) = 2" 60 &&
    step0 >s.json && cat s.json &&
    test "$(jq -r .outcome.state s.json)" = failed &&
    test "$(jq -r .outcome.culprit.tool s.json)" = perl &&
    test "$(jq -r .outcome.culprit.signal s.json)" = 11 &&
    test "$(jq -r ".outcome.culprit.chain | length" s.json)" -ge 1 &&
    # the shell by its executable, or by its comm where it ended before
    # its exec could be read (doc/tools.md: a busy machine)
    shell=$(jq -r ".outcome.culprit.chain[0].tool" s.json) &&
    case $shell in
    sh|"$(basename "$(readlink -f /bin/sh)")") ;;
    *) false ;;
    esac &&
    test "$(jq -r .outcome.culprit.collateral s.json)" -ge 1 &&
    test "$(jq -r .cause.class s.json)" = tool-crash &&
    $REPORT -j "$sjob" -o JobID,State,Cause,Culprit -P -n >sl.out &&
    grep -qx "$sjob.0|FAILED|tool-crash|perl" sl.out &&
    $REPORT -j "$sjob" >sv.out &&
    grep -q "^    Cause: *tool-crash: perl (pid [0-9]*) killed by SIGSEGV" \
        sv.out
'

# A process that names itself after another tool (prctl PR_SET_NAME)
# and crashes within a sampling interval: its exit record says
# "samtools"; tracerd names it from what the process connector saw at
# its exec (python3 running rename.py), and says what it called itself.
test_expect_success 'a tool that calls itself samtools and crashes is blamed as what it ran' '
    cat >rename.py <<-\EOF &&
	import ctypes, os, signal, time
	ctypes.CDLL(None).prctl(15, b"samtools", 0, 0, 0)
	time.sleep(0.3)
	os.kill(os.getpid(), signal.SIGSEGV)
	EOF
    grep -q "process execs: followed" "$(tracerd_log)" &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2;
        /usr/bin/python3 \"$PWD/rename.py\"; exit 1" 2>r.err;
    rjob=$(sed -n "s/^JOB=//p" r.err) &&
    wait_for "wait_record $rjob && test \$(jq length rec.json) = 2" 60 &&
    step0 >r.json && cat r.json &&
    test "$(jq -r .outcome.culprit.tool r.json)" = rename.py &&
    test "$(jq -r .outcome.culprit.calls_itself r.json)" = samtools &&
    test "$(jq -r .outcome.culprit.signal r.json)" = 11 &&
    test "$(jq "[.tools[] | select(.name == \"samtools\")] | length" \
        r.json)" = 0 &&
    $REPORT -j "$rjob" -o JobID,Culprit -P -n >rl.out &&
    grep -qx "$rjob.0|rename.py" rl.out &&
    $REPORT -j "$rjob" >rv.out &&
    grep -q "^    Cause: *tool-crash: rename.py (pid [0-9]*), calling itself samtools," \
        rv.out
'

test_expect_success 'a tool exiting 2 under bash is named: tool-error' '
    srun --tracer bash -c "echo JOB=\$SLURM_JOB_ID >&2;
        ls --no-such-option-$$; exit 3" 2>e2.err;
    xjob=$(sed -n "s/^JOB=//p" e2.err) &&
    wait_for "wait_record $xjob && test \$(jq length rec.json) = 2" 60 &&
    step0 >x.json && cat x.json &&
    test "$(jq -r .outcome.exit_code x.json)" = 3 &&
    test "$(jq -r .outcome.culprit.tool x.json)" = ls &&
    test "$(jq -r .outcome.culprit.exit_code x.json)" = 2 &&
    test "$(jq -r .cause.class x.json)" = tool-error &&
    jq -r .cause.text x.json | grep -q "^ls (pid [0-9]*) exited 2, " &&
    $REPORT -j "$xjob" -o JobID,Cause --json >xl.json &&
    test "$(jq -r "[.steps[] | select(.cause != null) |
        \"\(.cause) \(.culprit)\"] | join(\",\")" xl.json)" = "tool-error ls"
'

# producer | consumer: the consumer fails, the producer then dies of
# SIGPIPE writing to it; the step's exit status is the consumer's, and so
# is the blame.
test_expect_success 'a consumer failing under a producer is the culprit, not the producer' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2;
        yes | sort --no-such-option-$$" 2>pc.err;
    pjob=$(sed -n "s/^JOB=//p" pc.err) &&
    wait_for "wait_record $pjob && test \$(jq length rec.json) = 2" 60 &&
    step0 >p.json &&
    test "$(jq -r .outcome.exit_code p.json)" = 2 &&
    test "$(jq -r .outcome.culprit.tool p.json)" = sort &&
    test "$(jq -r .cause.class p.json)" = tool-error &&
    $REPORT -j "$pjob" -o JobID,Cause,Culprit -P -n >pl.out &&
    grep -qx "$pjob.0|tool-error|sort" pl.out
'

test_expect_success 'a time limit: batch and step records say timeout' '
    wait_for "wait_record $tojob && test \$(jq length rec.json) = 3" 240 &&
    records >t.out &&
    printf "%s\n" "0 timeout 15 60" "batch timeout 15 60" \
        "extern completed null 60" >expect &&
    { test_cmp expect t.out ||
        { grep -E "job $tojob[: ]|/$tojob/" "$(tracerd_log)"; false; }; } &&
    $REPORT -j "$tojob" -o JobID,State,Cause -P -n >tl.out &&
    grep -qx "$tojob|TIMEOUT|timeout" tl.out &&
    grep -qx "$tojob.0|TIMEOUT|timeout" tl.out
'

test_expect_success 'tracer-report --failures sums them by cause and tool' '
    $REPORT --failures -a --json >f.json &&
    cat f.json &&
    for c in cancelled tool-crash tool-error timeout; do
        test "$(jq -r ".by_cause[] | select(.name == \"$c\") | .failed" \
            f.json)" -ge 1 || return 1
    done &&
    test "$(jq -r ".by_tool[] | select(.name == \"perl\") | .failed" \
        f.json)" = 1 &&
    test "$(jq -r ".by_tool[] | select(.name == \"ls\") | .failed" \
        f.json)" = 1 &&
    test "$(jq -r ".by_tool[] | select(.name == \"rename.py\") | .failed" \
        f.json)" = 1 &&
    test "$(jq "[.by_tool[] | select(.name == \"samtools\")] | length" \
        f.json)" = 0 &&
    test "$(jq "[.by_tool[] | select(.name == \"sleep\" or
        .name == \"slurm_script\")] | length" f.json)" = 0 &&
    $REPORT -j "$tojob" -o JobID,Culprit -P -n >tc.out &&
    ! grep -v "|$" tc.out &&
    $REPORT --failures -a >f.out &&
    cat f.out &&
    grep -q "^Failures: [0-9]* of [0-9]* steps" f.out &&
    grep -q "^  tool-crash  *2$" f.out &&
    ! awk "length > 80" f.out | grep . &&
    $REPORT --failures -a -P >f.psv &&
    grep -qx "tool|perl||1||" f.psv
'

test_expect_success 'GPUs bound to a step are in its request' '
    srun --tracer --gres=gpu:2 sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>g.err &&
    gjob=$(sed -n "s/^JOB=//p" g.err) &&
    wait_for "wait_record $gjob && test \$(jq length rec.json) = 2" 60 &&
    test "$(jq -r ".[] | select(.identity.step_id == \"0\") |
        .request.gpus" rec.json)" = "0-1" ||
    test "$(jq -r ".[] | select(.identity.step_id == \"0\") |
        .request.gpus" rec.json)" = "0,1"
'

# Last of the failures: the node goes down under a running job (as
# slurmctld marks a node that stops answering); Slurm ends the job
# NODE_FAIL, and so does every view of it.
test_expect_success 'a node failure: NODE_FAIL in the listing, -s NF finds it, cause node-failure' '
    sbatch --tracer --no-requeue --parsable --wrap "srun sleep 600" >nf.out &&
    nfjob=$(cat nf.out) &&
    wait_for "test \"\$(squeue -h -j $nfjob -o %T)\" = RUNNING" 30 &&
    wait_for "test -n \"\$(squeue -h -s -j $nfjob -o %i | grep \"\\.0\$\")\"" 30 &&
    # tracerd follows the step before the node goes down (a slow node
    # may hear of it later than the controller lists it)
    wait_for "grep -q \"step [^ ]*/$nfjob/0/[^ ]* started\" \"$(tracerd_log)\"" 60 &&
    test_when_finished "scontrol update nodename=$TRACER_NODENAME state=resume 2>/dev/null; :" &&
    scontrol update nodename="$TRACER_NODENAME" state=down \
        reason=tracer-test &&
    wait_for "scontrol -o show job $nfjob | grep -q \" JobState=NODE_FAIL \"" 60 &&
    wait_for "wait_record $nfjob &&
        jq -e \".[] | select(.identity.step_id == \\\"0\\\")\" rec.json" 120 &&
    $REPORT -j "$nfjob" -o JobID,State,Cause -P -n >nfl.out &&
    cat nfl.out &&
    grep -qx "$nfjob.0|NODE_FAIL|node-failure" nfl.out &&
    $REPORT -a -s NF -o JobID -P -n >nfs.out &&
    grep -qx "$nfjob.0" nfs.out &&
    ! grep -v "^$nfjob" nfs.out &&
    $REPORT -j "$nfjob" >nfv.out &&
    grep -q "NODE_FAIL" nfv.out &&
    wait_for "sinfo -h -n $TRACER_NODENAME -o %t | grep -qx idle" 60
'

test_expect_success 'a traced job gets an extern record from its cgroup' '
    sbatch --tracer --parsable --wrap "true" >e.out &&
    ejob=$(cat e.out) &&
    wait_for "wait_record $ejob && test \$(jq length rec.json) = 2" 60 &&
    jq -r ".[] | select(.identity.step_id == \"extern\") |
        \"\(.outcome.state) \(.outcome.complete) \
\(.cgroup.paths.memory // .cgroup.paths.unified)\"" \
        rec.json >ext.out &&
    cat ext.out &&
    grep -q "^completed true /.*/$(job_cgroup_dir $ejob)/step_extern$" ext.out
'

test_expect_success 'an untraced job leaves no extern record' '
    sbatch --parsable --wrap "true" >u.out &&
    ujob=$(cat u.out) &&
    wait_for "grep -q \"step tracertest/$ujob/extern/.*no record\" \
        \"$(tracerd_log)\"" 30 &&
    test_expect_code 1 $REPORT -j "$ujob" 2>err &&
    grep -q "no records" err
'

test_expect_success 'the extern step is not followed with extern=no' '
    pc="$TRACER_CLUSTER_DIR/etc/plugstack.conf" &&
    sed "s/\$/ extern=no/" "$pc" >pc.new && cat pc.new >"$pc" &&
    sbatch --tracer --parsable --wrap "true" >n.out &&
    njob=$(cat n.out) &&
    wait_record "$njob" &&
    sleep 2 &&
    wait_record "$njob" &&
    test "$(jq -r "[.[].identity.step_id] | join(\" \")" rec.json)" = batch
'

test_done
