#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-report --compare, --regressions --by=run, --run and
the Nextflow trace export, on a generated store

Records made from a fixture (tests/fixtures/export/100.batch.n1.json)
with run, pipeline and process tags: runs R1 and R2 of pipeline proj do
the same work with noise, R3 takes twice as long in its sort rule, and
another user has a run R1 of their own.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
FIX=$S/tests/fixtures/export/100.batch.n1.json

require_or_skip "jq" command -v jq

report ()
{
    TRACER_CONF= TZ=UTC "$B/analysis/tracer-report" --store=store -M vm \
        --allow-unsigned "$@"
}

# rec JOBID RUN PROCESS ELAPSED CPU START [UID USER]: a batch step record
# of run RUN (pipeline proj), START seconds after 2026-11-02T00:00:00Z.
rec ()
{
    jq --arg id "$1" --arg run "$2" --arg proc "$3" --argjson el "$4" \
        --argjson cpu "$5" --argjson st "$6" --argjson uid "${7:-2001}" \
        --arg user "${8:-alice}" '
        .identity.job_id = $id | .identity.job_name = $proc |
        .identity.uid = $uid | .identity.user = $user |
        .tags = {run: $run, pipeline: "proj", process: $proc} |
        .time.start_unix_ms = 1793577600000 + $st * 1000 |
        .time.elapsed_s = $el |
        .time.end_unix_ms = 1793577600000 + $st * 1000 + ($el * 1000 | floor) |
        .summary.cpu.total_s = $cpu | .summary.cpu.user_s = $cpu |
        .tools[0].cpu_s = $cpu |
        .cgroup.paths.unified = "/slurm/job_\($id)/step_batch"' \
        "$FIX" >recs/$1.batch.n1.json
}

test_expect_success 'a store of three runs of a pipeline' '
    mkdir recs &&
    rec 201 R1 align 60 54 0 && rec 202 R1 align 62 55 0 &&
    rec 203 R1 align 58 52 0 && rec 204 R1 sort 20 18 70 &&
    rec 205 R1 sort 21 19 70 &&
    rec 301 R2 align 61 55 3600 && rec 302 R2 align 59 53 3600 &&
    rec 303 R2 align 63 56 3600 && rec 304 R2 sort 21 19 3670 &&
    rec 305 R2 sort 20 18 3670 &&
    rec 401 R3 align 60 54 7200 && rec 402 R3 align 61 55 7200 &&
    rec 403 R3 align 59 53 7200 && rec 404 R3 sort 41 37 7270 &&
    rec 405 R3 sort 40 36 7270 && rec 406 R3 report 2 1 7320 &&
    rec 501 R1 align 600 540 0 2002 bob &&
    "$B/tests/storeput" store recs/*.json &&
    report -u 2001 --runs -P -n -o run,jobs >runs &&
    printf "R1|5\nR2|5\nR3|6\n" >runs.expect &&
    test_cmp runs.expect runs
'

test_expect_success '--compare of two runs of the same work: no change beyond noise' '
    report -u 2001 --compare=R1,R2 >out 2>err &&
    cat out &&
    test_must_be_empty err &&
    grep -q "^A R1: pipeline proj, user alice, start 2026-11-02T00:00:00, 5 tasks, 0 failed$" out &&
    grep -q "^B R2: pipeline proj, user alice, start 2026-11-02T01:00:00, 5 tasks, 0 failed$" out &&
    grep -q "^align            A       3    0 00:01:00 00:03:00 00:02:41" out &&
    grep -q "^No change beyond noise" out &&
    ! grep -q "B\*" out &&
    awk "length > 80 { exit 1 }" out
'

test_expect_success '--compare flags the rule that took twice as long, and only it' '
    report -u 2001 --compare=R1,R3 -P >out &&
    cat out &&
    cat >expect <<-\EOF &&
	Process|Run|Tasks|Failed|ElapsedMedian|ElapsedTotal|CPUTime|PeakMem|IO|Changes
	align|A|3|0|00:01:00|00:03:00|00:02:41|104857600||
	align|B|3|0|00:01:00|00:03:00|00:02:42|104857600||
	report|A||||||||
	report|B|1|0|00:00:02|00:00:02|00:00:01|104857600||
	sort|A|2|0|00:00:21|00:00:41|00:00:37|104857600||
	sort|B|2|0|00:00:41|00:01:21|00:01:13|104857600||elapsed_s+,cpu_s+
	EOF
    test_cmp expect out &&
    report -u 2001 --compare=R1,R3 >text &&
    grep -q "^  sort: elapsed up x1.98 per task" text &&
    grep -q "^report           A   (not in this run)$" text &&
    report -u 2001 --compare=R1,R3 --json >json &&
    jq -e "[.processes[] | select(.changes | length > 0) | .process] == [\"sort\"] and
           ([.processes[] | select(.process == \"report\") | .in] == [\"b\"]) and
           .same_pipeline and .a.run == \"R1\" and .b.tasks == 6" json
'

test_expect_success '--compare: clear usage errors; a run not there is exit 1' '
    test_expect_code 2 report -u 2001 --compare=R1 2>err &&
    test $(wc -l <err) = 1 &&
    grep -q "needs two runs: --compare=ID1,ID2" err &&
    test_expect_code 1 report -u 2001 --compare=R1,R9 2>err &&
    grep -q "no run R9 among the selected steps" err &&
    test_expect_code 2 report -u 2001 --compare=R1,R1 2>err &&
    grep -q "the same run twice" err &&
    test_expect_code 2 report -u 2001 --compare=R1,../x 2>err &&
    grep -q "is not two run ids" err &&
    test_expect_code 2 report -a --compare=R1,R2 2>err &&
    grep -q "run R1 is the run of several users: choose one with -u" err
'

test_expect_success '--compare of runs of two pipelines: said, and compared' '
    jq ".tags.pipeline = \"other\" | .identity.job_id = \"601\" |
        .tags.run = \"O1\"" recs/201.batch.n1.json >recs/601.batch.n1.json &&
    "$B/tests/storeput" store recs/601.batch.n1.json &&
    report -u 2001 --compare=R1,O1 >out 2>err &&
    grep -q "warning: R1 and O1 are runs of different pipelines (proj, other)" err &&
    grep -q "^B O1: pipeline other" out
'

test_expect_success '--regressions --by=run flags the slow run of the pipeline' '
    for k in 1 2 3 4 5 6; do
        rec 7${k}1 H$k align 60 54 $((10000 + k * 3600)) &&
        rec 7${k}2 H$k sort 20 18 $((10070 + k * 3600)) || return 1
    done &&
    rec 781 H8 align 60 54 50000 && rec 782 H8 sort 200 180 50070 &&
    "$B/tests/storeput" store recs/7*.json &&
    report -u 2001 --regressions --by=run --json >regs &&
    jq -e "[.regressions[].job_id] | unique == [\"H8\"]" regs &&
    jq -e "[.regressions[].metric] | index(\"elapsed_s\") != null" regs &&
    report -u 2001 --regressions --by=run >text &&
    grep -q "H8" text
'

test_expect_success '--run with --export or an analysis selects a run; alone it is the run view' '
    report -u 2001 --run=R3 --summary=group --json >sum.json &&
    jq -e "[.groups[].count] | add == 6" sum.json &&
    report -u 2001 --summary=group --run=R3 --json >sum2.json &&
    test_cmp sum.json sum2.json &&
    report -u 2001 --run=R3 --json >view.json &&
    jq -e ".run.run == \"R3\" and .run.jobs == 6" view.json &&
    report -u 2001 --run=R1 --export=opendc-csv -o odc 2>err &&
    grep -q "5 tasks" err &&
    test $(wc -l <odc/tasks.csv) = 6 &&
    ! grep -q "^[0-9]*,501" odc/tasks.csv
'

test_expect_success '--run=ID --export=nextflow-trace writes DIR/trace.txt' '
    report -u 2001 --run=R3 --export=nextflow-trace -o nf 2>err &&
    grep -q "run R3 written to nf/trace.txt" err &&
    test $(wc -l <nf/trace.txt) = 7 &&
    printf "task_id\thash\tnative_id\tname\tstatus\texit\tsubmit\tduration\trealtime\t%%cpu\tpeak_rss\tpeak_vmem\trchar\twchar\tprocess\ttag\tstart\tcomplete\tqueue\tcpus\tmemory\ttime\tread_bytes\twrite_bytes\n" >head.expect &&
    head -n 1 nf/trace.txt >head &&
    test_cmp head.expect head &&
    printf "4\t-\t404\tsort (1)\tCOMPLETED\t0\t2026-11-02 02:01:10.000\t41s\t41s\t90.2%%\t100 MB\t-\t-\t-\tsort\t-\t2026-11-02 02:01:10.000\t2026-11-02 02:01:51.000\tdebug\t1\t4 GB\t1h\t-\t-\n" >row.expect &&
    sed -n 5p nf/trace.txt >row &&
    test_cmp row.expect row
'

test_expect_success 'nextflow-trace: needs --run, writes nothing for an unknown run' '
    test_expect_code 2 report -u 2001 --export=nextflow-trace -o nf2 2>err &&
    grep -q "needs --run=ID" err &&
    test_expect_code 1 report -u 2001 --run=R9 --export=nextflow-trace \
        -o nf2 2>err &&
    grep -q "no steps of run R9" err &&
    ! test -e nf2/trace.txt
'

test_done
