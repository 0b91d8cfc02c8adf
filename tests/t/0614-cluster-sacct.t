#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='tracer-report and sacct: the same fields on the same jobs

A real cluster with accounting (a private MariaDB and slurmdbd) and
PrologFlags=Contain.  The unprivileged user runs, with --tracer, a job of
two srun steps, an array of three, a job that exits 3, one that runs out
of time, one killed by the OOM killer and one cancelled.  For every row
sacct prints, tracer-report -a -P -n -o (the same fields) prints the same
JobID, and where sacct shows a value tracer shows the same, but for the
differences doc/sacct.md explains.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "the tracertest user (tools/install-deps)" \
    test_have_prereq TRACERTEST
require_or_skip "slurmdbd, mariadbd and python3 (tools/install-deps)" \
    test -x /usr/sbin/slurmdbd -a -x /usr/sbin/mariadbd -a \
    -n "$(command -v python3)"

# Every job asks for little memory: without --mem a job holds the node's.
SBATCH_MEM_PER_NODE=200 SLURM_MEM_PER_NODE=200
export SBATCH_MEM_PER_NODE SLURM_MEM_PER_NODE

FIELDS=JobID,JobName,User,Group,Account,Partition,State,ExitCode,Elapsed
FIELDS=$FIELDS,Timelimit,AllocCPUS,ReqCPUS,ReqMem,NNodes,NodeList,TotalCPU
FIELDS=$FIELDS,CPUTime,MaxRSS,Submit,Reserved,AllocTRES,ReqTRES,WorkDir

# submit SBATCH-ARGS...: a traced batch job of tracertest's; its id.
submit ()
{
    runuser -u tracertest -- sbatch --tracer --parsable --chdir=/tmp \
        -o /dev/null "$@"
}

# The comparison (rules and reasons: doc/sacct.md).  compare.py FIELDS
# SACCT TRACER WAIT prints one line per difference and fails when there
# is any; WAIT is sacct's JobID|Submit|Start of each job.
cat >compare.py <<'EOF'
import re, sys, time

FIELDS = sys.argv[1].split(",")
KILLWAIT = 5

def rows(path):
    out = {}
    for line in open(path):
        v = line.rstrip("\n").split("|")
        if len(v) != len(FIELDS):
            sys.exit("%s: %d fields, not %d: %r" % (path, len(v), len(FIELDS), line))
        out[v[0]] = dict(zip(FIELDS, v))
    return out

def seconds(t):
    """[D-][HH:]MM:SS[.mmm] as seconds"""
    m = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)", t)
    if not m:
        return None
    d, h, mi, s = m.groups()
    return int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi) * 60 + float(s)

def nbytes(t):
    """sacct's 200M, 3788K, 0 (powers of 1024) as bytes"""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTP]?)[nc]?", t)
    if not m:
        return None
    return float(m.group(1)) * 1024 ** " KMGTP".index(m.group(2) or " ")

def stamp(t):
    return time.mktime(time.strptime(t, "%Y-%m-%dT%H:%M:%S"))

# sacct's Submit and Start of each job (sacct's Reserved counts from the
# time the job became eligible, tracer's queue wait from its submit time)
WAIT = {}
for line in open(sys.argv[4]):
    jobid, submit, start = line.rstrip("\n").split("|")
    WAIT[jobid] = stamp(start) - stamp(submit)

def same(f, s, t, srow):
    """None when tracer's t agrees with sacct's s, else why not"""
    signalled = srow["State"].split()[0] in ("CANCELLED", "TIMEOUT")
    is_job = "." not in srow["JobID"]
    if f == "State":
        s = s.split()[0]            # "CANCELLED by 0"
    if f == "ExitCode" and srow["JobID"].endswith(".extern") and t == "":
        return None                 # tracer does not know: never shown as 0:0
    if f in ("AllocCPUS", "ReqCPUS", "CPUTime") and t == "" and \
            srow["JobID"].endswith(".extern"):
        return None                 # the job row holds the allocation
    if f == "Timelimit" and s == "365-00:00:00" and t == "UNLIMITED":
        return None
    job = sacct.get(srow["JobID"].split(".")[0], {})
    if f == "State" and s == "CANCELLED" and t == "TIMEOUT" and \
            job.get("State") == "TIMEOUT":
        return None                 # tracer names why the step was killed
    if f in ("Submit", "Reserved") and not is_job:
        return None                 # sacct: the step's own submit time
    if f in ("Elapsed", "CPUTime", "TotalCPU", "Reserved"):
        a, b = seconds(s), seconds(t)
        if a is None or b is None:
            return "not a duration"
        if f == "TotalCPU" and signalled:
            # sacct loses what killed tasks used since its last sample
            ok = b >= a - max(0.01 * a, 0.010)
        elif f == "TotalCPU":
            ok = abs(a - b) <= max(0.01 * a, 0.010)
        elif f == "Reserved":
            ok = b == WAIT[srow["JobID"]]   # whole seconds, the controller's
        else:
            n = 1
            if f == "CPUTime":
                n = int(srow["AllocCPUS"] or 1)
            ok = abs(a - b) <= n * (1 + (KILLWAIT if signalled else 0))
        return None if ok else "differs"
    if f == "ReqMem":
        return None if t and nbytes(s) == float(t) else "differs"
    if f in ("AllocTRES", "ReqTRES"):
        if t == "" and srow["JobID"].endswith(".extern"):
            return None             # the job row holds the allocation
        # billing is the controller's weighting, not a resource
        s = ",".join(x for x in s.split(",") if not x.startswith("billing="))
    if f == "MaxRSS":
        a = nbytes(s)
        return None if t and a is not None and float(t) >= a else \
            "below sacct's sampled peak"
    return None if s == t else "differs"

sacct, tracer = rows(sys.argv[2]), rows(sys.argv[3])
bad = 0
for jobid, srow in sacct.items():
    trow = tracer.get(jobid)
    if trow is None:
        print("%s: no row (sacct: %s)" % (jobid, "|".join(srow.values())))
        bad += 1
        continue
    for f in FIELDS:
        if srow[f] == "":
            continue
        why = same(f, srow[f], trow[f], srow)
        if why:
            print("%s %s: sacct %r, tracer %r: %s" % (jobid, f, srow[f], trow[f], why))
            bad += 1
sys.exit(1 if bad else 0)
EOF

# compare_job NAME IDS: sacct's and tracer's rows of the jobs IDS.
compare_job ()
{
    sacct -a -P -n -j "$2" -o "$FIELDS" >"$1.sacct" &&
    sacct -a -P -n -X -j "$2" -o JobID,Submit,Start >"$1.wait" &&
    "$REPORT" -a -P -n -j "$2" -o "$FIELDS" >"$1.tracer" &&
    test -s "$1.sacct" &&
    python3 compare.py "$FIELDS" "$1.sacct" "$1.tracer" "$1.wait"
}

# done_all IDS: sacct has every job (and array element) ended, and
# tracer-report a row for each of sacct's step rows: the comparison then
# sees every record there will be.
done_all ()
{
    sacct -a -P -n -j "$1" -o JobID,State >states &&
    test -s states &&
    ! grep -Eq "\|(PENDING|RUNNING|REQUEUED|RESIZING|SUSPENDED)" states &&
    "$REPORT" -a -P -n -j "$1" -o JobID >have 2>/dev/null &&
    cut -d"|" -f1 states | grep "\." | sort >want.ids &&
    sort have >have.ids &&
    test -z "$(comm -23 want.ids have.ids)"
}

test_expect_success 'start the cluster with accounting' '
    cluster_up --accounting --slurm-conf PrologFlags=Contain &&
    sacctmgr -n -P list user format=user,defaultaccount >users &&
    grep -qx "tracertest|tracer" users
'

test_expect_success 'the jobs run as tracertest' '
    to=$(submit -t 1 --wrap "srun sleep 600") &&
    ms=$(submit --wrap "srun true; srun $BURN cpu=1") &&
    ar=$(submit --array=1-3 --wrap true) &&
    ex=$(submit --wrap "exit 3") &&
    oo=$(submit --mem=50M --wrap "srun $BURN mem=200M") &&
    ca=$(submit --wrap "srun sleep 600") &&
    wait_for "squeue -h -s -j $ca -o %i | grep -qx $ca.0" 60 &&
    scancel "$ca" &&
    echo "$to $ms $ar $ex $oo $ca" >ids &&
    test "$(sacct -n -X -P -j "$ms" -o User)" = tracertest
'

# Ends within 60-90 s: Slurm checks time limits every 30 s.
test_expect_success 'sacct and tracer-report have every job, ended' '
    wait_for "done_all $ms,$ar,$ex,$oo,$ca" 60 &&
    wait_for "done_all $to" 150
'

test_expect_success 'two srun steps: the same rows and values' '
    compare_job multi "$ms" &&
    test "$(grep -c . multi.sacct)" = 5
'

test_expect_success 'an array of three: every element, with its steps' '
    compare_job array "$ar" &&
    test "$(cut -d"|" -f1 array.sacct | grep -c "^${ar}_[123]$")" = 3
'

test_expect_success 'a job that exits 3: FAILED 3:0' '
    compare_job exit "$ex" &&
    grep -q "^$ex|.*|FAILED|3:0|" exit.tracer
'

test_expect_success 'a job over its time limit: TIMEOUT' '
    compare_job timeout "$to" &&
    grep -q "^$to|.*|TIMEOUT|" timeout.tracer
'

test_expect_success 'a step killed by the OOM killer: OUT_OF_MEMORY 0:125, as sacct' '
    compare_job oom "$oo" &&
    grep -q "^$oo\.0|.*|OUT_OF_MEMORY|0:125|" oom.tracer &&
    grep -q "^$oo\.0|.*|OUT_OF_MEMORY|0:125|" oom.sacct &&
    "$REPORT" -a -j "$oo" >oom.view &&
    grep -q "^  Step 0 .*: OUT_OF_MEMORY, exit code 0:125" oom.view &&
    "$REPORT" -a -j "$oo" --html >oom.html &&
    grep -q "OUT_OF_MEMORY</span>, exit code 0:125<" oom.html
'

test_expect_success 'a cancelled job: CANCELLED' '
    compare_job cancel "$ca" &&
    grep -q "^$ca|.*|CANCELLED|" cancel.tracer
'

test_expect_success 'submit time and queue wait come from the controller' '
    "$REPORT" -a -j "$ms" --json >ms.json &&
    jq -e "length == 4 and all(.[]; .time.submit_unix_ms > 0 and
        .time.job_start_unix_ms >= .time.submit_unix_ms)" ms.json &&
    sed -n 1p multi.tracer | cut -d"|" -f1,19,20 >wait.tracer &&
    sed -n 1p multi.sacct | cut -d"|" -f1,19,20 >wait.sacct &&
    grep -q "^$ms|20[0-9-]*T[0-9:]*|[0-9:]*$" wait.tracer &&
    test_cmp wait.sacct wait.tracer
'

test_expect_success 'down stops slurmdbd and MariaDB and removes the database' '
    dbd=$(cat "$TRACER_CLUSTER_DIR/run/slurmdbd.pid") &&
    db=$(cat "$TRACER_CLUSTER_DIR/run/mariadbd.pid") &&
    cluster_down &&
    ! tr_pid_running "$dbd" &&
    ! tr_pid_running "$db" &&
    test ! -e "$TRACER_CLUSTER_DIR/db" &&
    test ! -e "$TRACER_CLUSTER_DIR/run/slurmdbd.pid"
'

test_done
