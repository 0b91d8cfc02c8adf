#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-run, tracerd and tracer-report under valgrind: no memory errors, no definite or indirect leaks

Each program runs under memcheck on real work: tracer-run traces small
commands that succeed, fail and are killed; a private tracerd follows
steps in a cgroup and as a process tree, keeps one across a restart with
taskstats on, and writes their records; tracer-report reads those
records, the fixture records and a truncated one, in every mode that
works on a single node.  Each run has its own valgrind log; every log
must show no error and no definitely or indirectly lost block.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
RUN=$B/collector/tracer-run
TRACERD=$B/collector/tracerd
REPORT=$B/analysis/tracer-report
NOTIFY=$B/tests/notify
FIX=$TRACER_SRCDIR/tests/fixtures/records
CG=/sys/fs/cgroup
HOST=$(hostname)

# A minute of valgrind: run with --long-tests (TEST_LONG=t), as
# tools/test-all does.  A sanitizer build cannot run under valgrind.
if test -z "$TEST_LONG"; then
    skip_all="valgrind tests run with --long-tests (TEST_LONG=t)"
    test_done
fi
if grep -q "^SANITIZE_CFLAGS = -fsanitize" "$B/Makefile" 2>/dev/null; then
    skip_all="a sanitizer build: valgrind cannot run it"
    test_done
fi
require_or_skip "valgrind" test_have_prereq VALGRIND
require_or_skip "jq" command -v jq

# Leaks count as errors only when definite or indirect: what a program
# still points to at exit (the hwloc topology libtracer loads once per
# process and keeps) is not lost.  Forked children that exec are not
# followed.
VG="valgrind --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99
    --trace-children=no --num-callers=30"
test -f "$SHARNESS_TEST_SRCDIR/valgrind.supp" &&
    VG="$VG --suppressions=$SHARNESS_TEST_SRCDIR/valgrind.supp"

# vg NAME CMD [ARGS...]: run CMD under valgrind, its log(s) in
# vg-NAME.PID.log (one per process: tracer-run's child logs until its exec).
vg ()
{
    _vg_name=$1
    shift
    $VG --log-file="vg-$_vg_name.%p.log" "$@"
}

# vg_clean NAME: the logs of vg NAME are clean.  The program's own log
# (its parent is not another logged process) ended with a summary of no
# errors; no log, a forked child's included, holds an error or a definite
# or indirect leak (each comes with a stack: "at 0x...").
vg_clean ()
{
    _vgc_main=0
    for _vgc_f in vg-"$1".*.log; do
        test -f "$_vgc_f" || {
            echo "no valgrind log vg-$1.*.log" >&2
            return 1
        }
        _vgc_pp=$(sed -n 's/^==[0-9]*== Parent PID: \([0-9]*\)$/\1/p' "$_vgc_f")
        test -f "vg-$1.$_vgc_pp.log" && continue
        _vgc_main=$((_vgc_main + 1))
        grep -q "== ERROR SUMMARY: 0 errors from 0 contexts" "$_vgc_f" || {
            echo "$_vgc_f: no clean error summary" >&2
            cat "$_vgc_f" >&2
            return 1
        }
    done
    test "$_vgc_main" = 1 || {
        echo "vg-$1: $_vgc_main top-level logs, expected 1" >&2
        return 1
    }
    if grep -E "ERROR SUMMARY: [1-9]|(definitely|indirectly) lost: [1-9]|^==[0-9]+== +(at|by) 0x" \
            vg-"$1".*.log >&2
    then
        cat vg-"$1".*.log >&2
        return 1
    fi
}

# step_start JOB ATTACH [PID]: what a prologue sends; task_exit JOB: the
# last task's exit (both from tests/sharness.d/40-tracerd.sh); step_end
# JOB OUTCOME: an epilogue's last word.
step_start () { pbs_step_start "$1" "$2" "${3:-0}" 0.5; }
task_exit () { pbs_task_exit "$1"; }
step_end ()
{
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"step_end\",
        \"identity\":{\"scheduler\":\"pbs\",\"job_id\":\"$1\",
          \"step_id\":\"batch\",\"node\":\"$HOST\",\"uid\":0,
          \"job_name\":\"vgjob\",\"account\":\"acct1\"},
        \"outcome\":$2}"
}

# wait_rec JOB: wait for the job's record in the store, copied to JOB.json
wait_rec ()
{
    wait_for "test -f store/default/jobs/*/$1/batch.$HOST.json" 60 &&
    cp store/default/jobs/*/"$1"/batch."$HOST".json "$1.json"
}

# vg_tracerd_start NAME: private_tracerd_start (sharness.d/40-tracerd.sh)
# under valgrind, which needs far longer to open the socket, and to load
# the eBPF file evidence (libbpf reads the kernel's BTF) before it
# answers: wait for its "started" line.
vg_tracerd_start ()
{
    _sock=$(sed -n 's/^  socket: "\(.*\)"$/\1/p' tracer.yaml)
    _started=$(grep -c " started: socket " tracerd.log 2>/dev/null)
    { $VG --log-file="vg-$1.%p.log" "$TRACERD" -c "$PWD/tracer.yaml" -f \
          >"$1.out" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & } &&
    echo $! >tracerd.pid &&
    wait_for "test -S \"$_sock\"" 60 &&
    wait_for "test \$(grep -c \" started: socket \" tracerd.log) \
        -gt ${_started:-0}" 60
}

# vg_tracerd_stop: SIGTERM, and tracerd (valgrind) must exit 0, its leak
# check done.
vg_tracerd_stop ()
{
    _pid=$(cat tracerd.pid) &&
    kill -TERM "$_pid" &&
    wait "$_pid" &&
    rm -f tracerd.pid
}

# Records are signed by a private munged when one starts, as a site's
# are, so that signing and checking run under valgrind too.
test_expect_success 'setup: a directory for the sockets' '
    sock=$(mktemp -d /tmp/tr0210.XXXXXX) &&
    echo "$sock" >sockdir
'
tr_atexit 'rm -rf "$(cat sockdir)"'
batch_signing
test_expect_success 'setup: the configuration' '
    private_conf "$sock" <<-EOF &&
	sampling.interval: 0.5
	sampling.snapshot_interval: 1
	$signing
	EOF
    TRACER_CONF=$PWD/tracer.yaml && export TRACER_CONF &&
    TRACER_SOCKET=$sock/tracerd.sock && export TRACER_SOCKET &&
    sed "s/^  taskstats: false$/  taskstats: true/" tracer.yaml >ts.yaml &&
    grep -q "^  taskstats: true$" ts.yaml
'
# what a failed test left behind: a tracerd, a step's process, its cgroup
tr_atexit 'test -f tracerd.pid && kill "$(cat tracerd.pid)" 2>/dev/null
           test -f kept.pid && kill "$(cat kept.pid)" 2>/dev/null
           rmdir "$CG/memory/tracer-vg.$$" "$CG/cpuacct/tracer-vg.$$" \
               2>/dev/null; :'

# --- tracer-run --------------------------------------------------------------

test_expect_success ROOT 'tracer-run: a command in its own cgroup, taskstats on, clean, record readable' '
    vg run-ok "$RUN" -c "$PWD/ts.yaml" -q -o run-ok.json -- \
        sh -c "dd if=/dev/zero of=/dev/null bs=1M count=50 2>/dev/null; sleep 1" &&
    vg_clean run-ok &&
    $REPORT $UNSIGNED --json run-ok.json >run-ok.view.json &&
    test "$(jq -r ".[0].outcome.state" run-ok.view.json)" = completed &&
    test "$(jq -r ".[0].cgroup.attach" run-ok.view.json)" != process-tree
'

test_expect_success ROOT 'tracer-run: exit 3 is passed on and recorded, clean' '
    test_expect_code 3 vg run-fail "$RUN" -c "$PWD/ts.yaml" -q \
        -o run-fail.json -- sh -c "exit 3" &&
    vg_clean run-fail &&
    $REPORT $UNSIGNED --json run-fail.json >run-fail.view.json &&
    test "$(jq -r ".[0].outcome.state" run-fail.view.json)" = failed &&
    test "$(jq ".[0].outcome.exit_code" run-fail.view.json)" = 3
'

test_expect_success ROOT 'tracer-run: a command killed by SIGKILL gives 137, clean' '
    test_expect_code 137 vg run-kill "$RUN" -c "$PWD/ts.yaml" -q -o run-kill.json -- \
        sh -c "kill -KILL \$\$" &&
    vg_clean run-kill &&
    $REPORT $UNSIGNED --json run-kill.json >run-kill.view.json &&
    test "$(jq ".[0].outcome.signal" run-kill.view.json)" = 9
'

test_expect_success ROOT 'tracer-run: SIGTERM reaches the command, 143, clean' '
    { $VG --log-file=vg-run-term.%p.log \
          "$RUN" -c "$PWD/ts.yaml" -q -o run-term.json -- sleep 60 & } &&
    pid=$! &&
    wait_for "test \"\$(ps -o comm= --ppid $pid)\" = sleep" 60 &&
    kill -TERM $pid &&
    test_expect_code 143 wait $pid &&
    vg_clean run-term &&
    $REPORT $UNSIGNED --json run-term.json >run-term.view.json &&
    test "$(jq ".[0].outcome.signal" run-term.view.json)" = 15
'

test_expect_success ROOT 'tracer-run: a process tree, no cgroup, taskstats off, to the store' '
    vg run-tree "$RUN" -q --no-cgroup --store -i 0.2 -t vg:tree -- \
        sh -c "sleep 0.5 & sleep 0.5 & wait" &&
    vg_clean run-tree &&
    find store/default/jobs -name "*.json" >run-tree.list &&
    test $(wc -l <run-tree.list) = 1 &&
    $REPORT $UNSIGNED --json "$(cat run-tree.list)" >run-tree.view.json &&
    test "$(jq -r ".[0].cgroup.attach" run-tree.view.json)" = process-tree &&
    test "$(jq -r ".[0].tags.vg" run-tree.view.json)" = tree
'

test_expect_success ROOT 'tracer-run: a command that is not there gives 127, clean' '
    test_expect_code 127 vg run-missing "$RUN" -c "$PWD/ts.yaml" -q -o run-missing.json -- \
        ./no-such-command 2>err &&
    grep -q "No such file or directory" err &&
    vg_clean run-missing
'

# --- tracerd -----------------------------------------------------------------

test_expect_success ROOT 'tracerd: starts under valgrind and answers' '
    vg_tracerd_start tracerd1 &&
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"ping\"}"
'

test_expect_success ROOT 'tracerd: a step in its own cgroup, sampled, ended by its last task' '
    test_when_finished "rmdir $CG/memory/tracer-vg.$$ $CG/cpuacct/tracer-vg.$$" &&
    mkdir "$CG/memory/tracer-vg.$$" "$CG/cpuacct/tracer-vg.$$" &&
    step_start 21 "{\"cgroup\":\"/tracer-vg.$$\"}" &&
    sh -c "echo \$\$ >$CG/memory/tracer-vg.$$/cgroup.procs &&
           echo \$\$ >$CG/cpuacct/tracer-vg.$$/cgroup.procs &&
           dd if=/dev/zero of=/dev/null bs=1M count=50 2>/dev/null &&
           sleep 3" &&
    task_exit 21 &&
    wait_rec 21 &&
    test "$(jq -r .cgroup.paths.memory 21.json)" = /tracer-vg.$$ &&
    test "$(jq -r .outcome.state 21.json)" = completed &&
    $REPORT $UNSIGNED 21.json >21.view &&
    grep -q "^Job 21" 21.view
'

test_expect_success ROOT 'tracerd: a process-tree step, seen live, ended by step_end' '
    sh -c "sleep 0.5; dd if=/dev/zero of=/dev/null bs=1M count=20 2>/dev/null; sleep 3" &
    wp=$! &&
    step_start 22 "{\"tree\":true}" $wp &&
    wait_for "ls st/live/*@22@batch@$HOST.json" 30 &&
    vg report-live "$REPORT" --live >live.out &&
    vg_clean report-live &&
    grep -q "^22  *batch " live.out &&
    wait $wp &&
    step_end 22 "{\"state\":\"failed\",\"exit_code\":3}" &&
    wait_rec 22 &&
    test "$(jq -r .cgroup.attach 22.json)" = process-tree &&
    test "$(jq -r .outcome.state 22.json)" = failed &&
    test "$(jq -r .identity.job_name 22.json)" = vgjob
'

test_expect_success ROOT 'tracerd: requests it must refuse are refused' '
    test_expect_code 1 step_start 29 "{\"cgroup\":\"/no/such/job\"}" >r1 &&
    grep -q "exists in no mounted hierarchy" r1 &&
    test_expect_code 1 step_start 29 "{\"env\":\"1BAD\"}" >r2 &&
    test_expect_code 1 task_exit 29 >r3 &&
    grep -q "unknown step" r3 &&
    test_expect_code 1 "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"nosuch\"}" >r4 &&
    grep -q "unknown op" r4 &&
    test_expect_code 2 "$NOTIFY" "$TRACER_SOCKET" "[1]" &&
    grep -q "bad message: malformed message: not an object" tracerd.log &&
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"ping\"}"
'

test_expect_success ROOT 'tracerd: two steps running at SIGTERM are kept in its state' '
    { sh -c "echo \$\$ >kept.pid; exec sleep 30" & } &&
    wait_for "test -s kept.pid" 10 &&
    step_start 23 "{\"tree\":true}" "$(cat kept.pid)" &&
    { sleep 5 & } &&
    gone=$! &&
    step_start 24 "{\"tree\":true}" $gone &&
    sleep 1 &&
    vg_tracerd_stop &&
    grep -q "tracerd stopping (2 active steps kept" tracerd.log &&
    wait $gone &&
    test $(ls st/steps | wc -l) = 2
'

test_expect_success ROOT 'tracerd ran clean: no errors, no definite or indirect leaks' '
    vg_clean tracerd1
'

test_expect_success ROOT 'tracerd with taskstats: resumes one step, records the ended one, a new step' '
    printf "{\"not\": \"a state\"\n" >st/steps/garbage.json &&
    sed -i "s/^  taskstats: false$/  taskstats: true/" tracer.yaml &&
    vg_tracerd_start tracerd2 &&
    wait_log tracerd.log "state garbage.json unreadable; removed" &&
    grep -q "step default/23/batch/$HOST resumed" tracerd.log &&
    wait_rec 24 &&
    test "$(jq -r .outcome.state 24.json)" = incomplete &&
    { sh -c "i=0; while [ \$i -lt 10 ]; do sleep 0.1 & i=\$((i+1)); done
             wait; sleep 2" & } &&
    wp=$! &&
    step_start 25 "{\"tree\":true}" $wp &&
    wait $wp &&
    task_exit 25 &&
    wait_rec 25 &&
    test "$(jq -r .summary.processes.source 25.json)" = taskstats &&
    kill "$(cat kept.pid)" &&
    task_exit 23 &&
    wait_rec 23 &&
    vg_tracerd_stop &&
    grep -q "tracerd stopping (0 active steps kept" tracerd.log &&
    vg_clean tracerd2
'

# The spool refuses records (its cluster directory is a file): the record
# waits in memory and in st/pending, survives a stop, and is spooled and
# forwarded once the spool takes it again.
test_expect_success ROOT 'tracerd: a record the spool refuses waits, survives a stop, is written later, clean' '
    rm -rf spool/default && echo blocked >spool/default &&
    vg_tracerd_start tracerd3 &&
    { sleep 1 & } && wp=$! &&
    step_start 26 "{\"tree\":true}" $wp &&
    wait $wp &&
    task_exit 26 &&
    wait_log tracerd.log "step default/26/batch/$HOST: spool write failed" &&
    ls st/pending | grep -q "@26@" &&
    vg_tracerd_stop &&
    vg_tracerd_start tracerd4 &&
    wait_log tracerd.log "records wait in .*/pending" &&
    rm spool/default &&
    wait_rec 26 &&
    wait_for "! ls st/pending | grep -q json" 30 &&
    vg_tracerd_stop &&
    vg_clean tracerd3 &&
    vg_clean tracerd4
'

# --- tracer-report -----------------------------------------------------------

test_expect_success 'tracer-report: each fixture record, detailed and as JSON' '
    for f in "$FIX"/*.json; do
        n=fix-$(basename "$f" .json) &&
        vg "$n" "$REPORT" --allow-unsigned "$f" >"$n.view" &&
        vg_clean "$n" &&
        test -s "$n.view" &&
        vg "$n-json" "$REPORT" --allow-unsigned --json "$f" >"$n.json" &&
        vg_clean "$n-json" &&
        test "$(jq length "$n.json")" = 1 || return 1
    done
'

test_expect_success 'tracer-report: all fixture records in one run' '
    vg fix-all "$REPORT" --allow-unsigned "$FIX"/*.json >fix-all.out &&
    vg_clean fix-all &&
    test $(grep -c "^Job " fix-all.out) -ge 1 &&
    vg fix-all-json "$REPORT" --allow-unsigned --json "$FIX"/*.json \
        >fix-all.json &&
    vg_clean fix-all-json &&
    test "$(jq length fix-all.json)" = $(ls "$FIX"/*.json | wc -l)
'

test_expect_success 'tracer-report --export: OpenDC tables, Parquet and CSV' '
    "$B/tests/storeput" exstore "$SHARNESS_TEST_SRCDIR/fixtures/export"/*.json &&
    (TRACER_CONF= && export TRACER_CONF &&
     vg export-pq "$REPORT" --store=exstore -M vm -a --allow-unsigned \
         -S 2026-11-01 --export=opendc -o ex-pq 2>ex.err) &&
    vg_clean export-pq &&
    test -s ex-pq/tasks.parquet && test -s ex-pq/fragments.parquet &&
    (TRACER_CONF= && export TRACER_CONF &&
     vg export-csv "$REPORT" --store=exstore -M vm -a --allow-unsigned \
         -S 2026-11-01 --export=opendc-csv -o ex-csv 2>ex.err) &&
    vg_clean export-csv &&
    test $(wc -l <ex-csv/tasks.csv) = 7
'

test_expect_success 'tracer-report --compare, --regressions --by=run, --export=nextflow-trace' '
    for k in 1 2; do
        jq ".identity.job_id = \"80$k\" |
            .tags = {run: \"V$k\", pipeline: \"p\", process: \"align\"} |
            .cgroup.paths.unified = \"/slurm/job_80$k/step_batch\"" \
            "$SHARNESS_TEST_SRCDIR/fixtures/export/100.batch.n1.json" \
            >v$k.json || return 1
    done &&
    "$B/tests/storeput" runstore v1.json v2.json &&
    (TRACER_CONF= && export TRACER_CONF &&
     vg rep-compare "$REPORT" --store=runstore -M vm -a --allow-unsigned \
         --compare=V1,V2 >cmp.out &&
     vg rep-compare-json "$REPORT" --store=runstore -M vm -a \
         --allow-unsigned --compare=V1,V2 --json >cmp.json &&
     vg rep-compare-bad "$REPORT" --store=runstore -M vm -a \
         --allow-unsigned --compare=V1,V9 2>cmp.err;
     test $? = 1 &&
     vg rep-run-regress "$REPORT" --store=runstore -M vm -a \
         --allow-unsigned --regressions --by=run >/dev/null &&
     vg rep-nftrace "$REPORT" --store=runstore -M vm -a --allow-unsigned \
         --run=V1 --export=nextflow-trace -o nf 2>nf.err) &&
    vg_clean rep-compare && vg_clean rep-compare-json &&
    vg_clean rep-compare-bad && vg_clean rep-run-regress &&
    vg_clean rep-nftrace &&
    grep -q "^No change beyond noise" cmp.out &&
    jq -e ".processes | length == 1" cmp.json &&
    grep -q "no run V9" cmp.err &&
    test $(wc -l <nf/trace.txt) = 2
'

test_expect_success 'tracer-report --failures and a failed step'"'"'s cause' '
    jq ".identity.job_id = \"803\" | .outcome.state = \"failed\" |
        .outcome.exit_code = 1 | .outcome.culprit = {tool: \"samtools\",
        pid: 42, signal: 11, core_dumped: false, at_s: 0.5,
        chain: [{tool: \"sh\", pid: 41}], collateral: 1}" v1.json >v3.json &&
    "$B/tests/storeput" runstore v3.json &&
    (TRACER_CONF= && export TRACER_CONF &&
     vg rep-failures "$REPORT" --store=runstore -M vm -a --allow-unsigned \
         -S 2000-01-01 --failures >fail.out &&
     vg rep-failures-json "$REPORT" --store=runstore -M vm -a \
         --allow-unsigned -S 2000-01-01 --failures --json >fail.json &&
     vg rep-cause-view "$REPORT" --allow-unsigned v3.json >v3.view) &&
    vg_clean rep-failures && vg_clean rep-failures-json &&
    vg_clean rep-cause-view &&
    grep -q "^  tool-crash  *1$" fail.out &&
    jq -e ".by_tool[0].name == \"samtools\"" fail.json &&
    grep -q "Cause: *tool-crash: samtools (pid 42) killed by SIGSEGV" v3.view
'

test_expect_success ROOT 'tracer-report: the tracer-run records, detailed' '
    vg rep-run "$REPORT" $UNSIGNED run-ok.json run-fail.json run-kill.json \
        run-term.json >rep-run.out &&
    vg_clean rep-run &&
    test $(grep -c "^Job " rep-run.out) -ge 1
'

test_expect_success ROOT 'tracer-report: the store, listed, filtered and as JSON' '
    vg rep-list "$REPORT" $UNSIGNED -S now-2days >rep-list.out &&
    vg_clean rep-list &&
    grep -q "^21\.batch " rep-list.out &&
    grep -q "^25\.batch " rep-list.out &&
    vg rep-parsable "$REPORT" $UNSIGNED -S now-2days -s F -P -n \
        --sort=-elapsed >rep-parsable.out &&
    vg_clean rep-parsable &&
    grep -q "^22\.batch|" rep-parsable.out &&
    vg rep-jobs "$REPORT" $UNSIGNED -j 21,22,23 --json >rep-jobs.json &&
    vg_clean rep-jobs &&
    test "$(jq length rep-jobs.json)" = 3 &&
    vg rep-job "$REPORT" $UNSIGNED -j 22 >rep-job.out &&
    vg_clean rep-job &&
    grep -q "^Job 22 \"vgjob\"" rep-job.out &&
    if test -z "$UNSIGNED"; then grep -q "signature valid" rep-job.out; fi
'

test_expect_success ROOT 'tracer-report: summaries, recommendations, waste, regressions' '
    vg rep-summary "$REPORT" $UNSIGNED -S now-2days --summary=name >/dev/null &&
    vg_clean rep-summary &&
    vg rep-recommend "$REPORT" $UNSIGNED -S now-2days --recommend \
        --output=json >rep-recommend.json &&
    vg_clean rep-recommend &&
    jq . rep-recommend.json >/dev/null &&
    vg rep-waste "$REPORT" $UNSIGNED -S now-2days --waste --by=user \
        >rep-waste.out &&
    vg_clean rep-waste &&
    grep -q "^root " rep-waste.out &&
    vg rep-regress "$REPORT" $UNSIGNED -S now-2days --regressions >/dev/null &&
    vg_clean rep-regress
'

test_expect_success ROOT 'tracer-report: HTML view, digest, index, rows and merge' '
    vg rep-html "$REPORT" $UNSIGNED -j 21 --html -o 21.html &&
    vg_clean rep-html &&
    grep -q "<html" 21.html &&
    vg rep-digest "$REPORT" $UNSIGNED --digest=print -S now-2days \
        >digest.out &&
    vg_clean rep-digest &&
    grep -q "^Subject: tracer digest for root" digest.out &&
    vg rep-reindex "$REPORT" $UNSIGNED --reindex >/dev/null &&
    vg_clean rep-reindex &&
    vg rep-rows "$REPORT" $UNSIGNED -S now-2days --rows >rows.txt &&
    vg_clean rep-rows &&
    vg rep-merge "$REPORT" --merge rows.txt >/dev/null &&
    vg_clean rep-merge
'

test_expect_success 'tracer-report: a truncated record exits 1, names the file, clean' '
    head -c 300 "$FIX/basic.json" >trunc.json &&
    test_expect_code 1 vg rep-trunc "$REPORT" --allow-unsigned trunc.json \
        2>trunc.err &&
    grep -q "^tracer-report: trunc.json:[0-9]*:[0-9]*: invalid JSON" trunc.err &&
    vg_clean rep-trunc
'

test_expect_success 'tracer-report: an unsigned record without --allow-unsigned exits 4, clean' '
    jq "del(.signature)" "$FIX/basic.json" >unsigned.json &&
    test_expect_code 4 vg rep-unsigned "$REPORT" unsigned.json 2>unsigned.err &&
    grep -q unsigned unsigned.err &&
    vg_clean rep-unsigned
'

test_done
