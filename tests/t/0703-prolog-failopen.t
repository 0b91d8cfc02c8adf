#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-prolog fails open: no tracerd, a hung tracerd, a usage error

Every mode, run by tests/sched-emu as PBS, Torque and LSF run it, exits 0
well inside the scheduler'"'"'s own limit when tracerd is not running or
does not answer (prolog.timeout 2), the job runs and its output is
intact, and the log says why; prolog.error_exit changes the exit status.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

batch_preamble
require_or_skip "the system python3 (PBS hooks)" test -x /usr/bin/python3
require_or_skip "tracer-prolog built ($P)" test -x "$P"

# write_conf FILE [prolog keys]: a configuration naming our socket
write_conf ()
{
    cat >"$1" <<-EOF
	store:
	  path: "$PWD/store"
	spool:
	  path: "$PWD/spool"
	daemon:
	  socket: "$sock/tracerd.sock"
	  state_dir: "$PWD/st"
	  log: "$PWD/tracerd.log"
	sampling: {interval: 0.2, taskstats: false}
	signing: {enabled: false}
	prolog:
	  timeout: 2
	$2
	EOF
}

# runall TAG [CONF]: one job per scheduler and way of running tracer-prolog
# (PBS classic, PBS hook, Torque, LSF), job ids 73NN.TAG...; every
# sched-emu result is kept in TAG-<kind>.json and every job burns 0.3 s.
runall ()
{
    _c=${2:-$PWD/tracer.yaml} &&
    for k in pbs hook torque; do
        mkdir -p $1/$k/mom_priv || return 1
    done &&
    for m in prologue epilogue; do
        printf "#!/bin/sh\nexec \"%s\" -c \"%s\" --log \"%s\" pbs-%s \"\$@\"\n" \
            "$P" "$_c" "$PWD/prolog.log" $m >$1/pbs/mom_priv/$m &&
        printf "#!/bin/sh\nexec \"%s\" -c \"%s\" --log \"%s\" torque-%s \"\$@\"\n" \
            "$P" "$_c" "$PWD/prolog.log" $m >$1/torque/mom_priv/$m ||
        return 1
    done &&
    chmod 0700 $1/pbs/mom_priv/* $1/torque/mom_priv/* &&
    printf "#!/bin/sh\nexec \"%s\" -c \"%s\" --log \"%s\" \"\$@\"\n" \
        "$P" "$_c" "$PWD/prolog.log" >$1/tracer-prolog &&
    chmod 0755 $1/tracer-prolog &&
    sed -e "s|@sbindir@/tracer-prolog|$PWD/$1/tracer-prolog|" \
        -e "s|^LOG = .*|LOG = \"$PWD/prolog.log\"|" "$SHIM" >$1/tracer.py &&
    echo "execjob_begin,execjob_launch,execjob_epilogue,execjob_end order=50" \
        >$1/tracer.py.events &&
    "$EMU" pbs --job 7301.$1 --user tracertest --mom-priv $1/pbs/mom_priv \
        --resources ncpus=1,mem=100mb,walltime=00:01:00 \
        -- "$BURN" cpu=0.3 >$1-pbs.json &&
    "$EMU" pbs --job 7302.$1 --user tracertest --mom-priv $1/hook/mom_priv \
        --resources ncpus=1,mem=100mb,walltime=00:01:00 \
        --hook $1/tracer.py -- "$BURN" cpu=0.3 >$1-hook.json &&
    "$EMU" torque --job 7303.$1 --user tracertest \
        --mom-priv $1/torque/mom_priv -- "$BURN" cpu=0.3 >$1-torque.json &&
    _cmd="\"$P\" -c \"$_c\" --log \"$PWD/prolog.log\"" &&
    "$EMU" lsf --job 7304 --cluster tr0703 --user tracertest \
        --pre "$_cmd lsf-pre" --post "$_cmd lsf-post" \
        --pre-timeout 30 --post-timeout 30 --spool $1/lsf \
        -- "$BURN" cpu=0.3 >$1-lsf.json
}

# ran_clean TAG: in all four, every script and hook exited 0 (accepted)
# before the scheduler's alarm, the job ran and exited 0, and its output
# is burn's line alone, its error output empty.
ran_clean ()
{
    for k in pbs hook torque lsf; do
        f=$1-$k.json &&
        jq -e ".result == \"ran\" and .job.exit_status == 0
               and ([.events[] | select(.skipped == null)
                     | .exit == 0 and .timed_out == false
                       and (.kind != \"hook\" or .accepted)] | all)
               and (.events | length) >= 2" $f &&
        out=$(jq -r .files.stdout $f) && err=$(jq -r .files.stderr $f) &&
        test $(wc -l <"$out") = 1 &&
        grep -q "^{\"cpu_s\": 0\.[0-9]*, " "$out" &&
        test_must_be_empty "$err" || return 1
    done
}

test_expect_success 'setup: a configuration for a tracerd that is not there' '
    sock=$(mktemp -d /tmp/tr0703.XXXXXX) &&
    echo "$sock" >sockdir &&
    write_conf tracer.yaml
'
tr_atexit 'test -f tracerd.pid && kill -CONT "$(cat tracerd.pid)" 2>/dev/null &&
           kill "$(cat tracerd.pid)" 2>/dev/null
           rm -rf "$(cat sockdir)"'

test_expect_success 'no tracerd: every mode exits 0 and the jobs run untouched' '
    runall absent &&
    ran_clean absent
'

test_expect_success 'no tracerd: the log says why, for each mode' '
    for m in "pbs-prologue: job 7301.absent" "pbs-epilogue: job 7301.absent" \
             "pbs-hook: job 7302.absent" "torque-prologue: job 7303.absent" \
             "torque-epilogue: job 7303.absent" "lsf-pre: job 7304" \
             "lsf-post: job 7304"; do
        grep -q "$m: tracerd at $sock/tracerd.sock: connect .*: No such file or directory$" \
            prolog.log || return 1
    done &&
    test $(grep -c "pbs-hook: job 7302.absent: tracerd at" prolog.log) = 4
'

test_expect_success 'setup: a tracerd, then stopped (SIGSTOP): it accepts but never answers' '
    { "$B/collector/tracerd" -c "$PWD/tracer.yaml" -f >tracerd.out 2>&1 \
          3>&- 4>&- 5>&- 6>&- & } &&
    echo $! >tracerd.pid &&
    wait_for "test -S \"$sock/tracerd.sock\"" 20 &&
    kill -STOP "$(cat tracerd.pid)"
'

test_expect_success 'hung tracerd: every mode gives up at prolog.timeout, exits 0, the jobs run' '
    runall hung &&
    ran_clean hung
'

test_expect_success 'hung tracerd: the log says why, for each mode' '
    for m in "pbs-prologue: job 7301.hung" "pbs-epilogue: job 7301.hung" \
             "pbs-hook: job 7302.hung" "torque-prologue: job 7303.hung" \
             "torque-epilogue: job 7303.hung" "lsf-pre: job 7304" \
             "lsf-post: job 7304"; do
        grep "$m: tracerd at $sock/tracerd.sock: " prolog.log |
            grep -q "timed out" || return 1
    done
'

test_expect_success 'tracerd resumed: it still works afterwards' '
    kill -CONT "$(cat tracerd.pid)" &&
    "$EMU" pbs --job 7309.$HOST --user tracertest \
        --mom-priv hung/pbs/mom_priv -- "$BURN" cpu=0.3 >resumed.json &&
    grep -q "pbs-epilogue: job 7309.$HOST: ended on $HOST$" prolog.log &&
    kill "$(cat tracerd.pid)" &&
    wait_for "! tr_pid_running $(cat tracerd.pid)" 20 &&
    rm -f tracerd.pid
'

test_expect_success 'a usage error (timeout out of range) still exits 0 and the job runs' '
    mkdir -p bad/mom_priv &&
    printf "#!/bin/sh\nexec \"%s\" -c \"%s\" --log \"%s\" -t 999 pbs-prologue \"\$@\"\n" \
        "$P" "$PWD/tracer.yaml" "$PWD/prolog.log" >bad/mom_priv/prologue &&
    chmod 0700 bad/mom_priv/prologue &&
    "$EMU" pbs --job 7310.$HOST --user tracertest --mom-priv bad/mom_priv \
        -- "$BURN" cpu=0.3 >bad.json &&
    jq -e ".result == \"ran\" and .events[0].exit == 0
           and .job.exit_status == 0" bad.json &&
    grep -q "pbs-prologue: bad usage" prolog.log
'

test_expect_success 'prolog.error_exit 1: the failure is the scheduler'"'"'s to see' '
    write_conf strict.yaml "  error_exit: 1" &&
    mkdir -p strict/mom_priv &&
    printf "#!/bin/sh\nexec \"%s\" -c \"%s\" --log \"%s\" pbs-prologue \"\$@\"\n" \
        "$P" "$PWD/strict.yaml" "$PWD/prolog.log" >strict/mom_priv/prologue &&
    chmod 0700 strict/mom_priv/prologue &&
    "$EMU" pbs --job 7311.$HOST --user tracertest --mom-priv strict/mom_priv \
        -- "$BURN" cpu=0.3 >strict.json &&
    test "$(jq ".events[0].exit" strict.json)" = 1 &&
    test "$(jq -r .result strict.json)" = aborted &&
    _cmd="\"$P\" -c \"$PWD/strict.yaml\" --log \"$PWD/prolog.log\"" &&
    "$EMU" lsf --job 7312 --cluster tr0703 --user tracertest \
        --pre "$_cmd lsf-pre" --spool strict/lsf \
        -- "$BURN" cpu=0.3 >strict-lsf.json &&
    test "$(jq ".events[0].exit" strict-lsf.json)" = 1 &&
    test "$(jq -r .result strict-lsf.json)" = requeued
'

test_done
