#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='jobs and steps in id order in every view

A store of records made from a fixture record (tests/fixtures/export): a
Slurm array 5 of tasks 1, 2, 3, 9 and 10, whose own job ids are not in
task order (Slurm gives the array'"'"'s own id, 5, to the task it starts
last) and which started in no order either, one task with three steps;
and a job 4 started among them.  The listing (text, -P, --json), the job
view of -j 5 (text and --json) list the tasks as 5_1, 5_2, 5_3, 5_9,
5_10 (numerically, not by their own ids, start or text), each task'"'"'s
steps in sacct'"'"'s order (batch, extern, 0).'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
BASE=$S/tests/fixtures/export/90.batch.n1.json

require_or_skip "jq" command -v jq

report ()
{
    TRACER_CONF= "$B/analysis/tracer-report" --store="$PWD/store" \
        -M vm --allow-unsigned -a -S 2026-01-01 "$@"
}

# mk RAW TASK STEP START: a record of array 5's task TASK (own id RAW)
# that started START seconds after the base record's start.
mk ()
{
    jq --arg raw "$1" --argjson task "$2" --arg step "$3" \
        --argjson off "$4" '
        .identity.job_id = $raw | .identity.step_id = $step
        | .identity.step_name = $step
        | if $task >= 0 then .identity.array_job_id = "5"
              | .identity.array_task_id = $task else . end
        | .time.start_unix_ms += $off * 1000
        | .time.end_unix_ms += $off * 1000' "$BASE" >"recs/$1.$3.json"
}

test_expect_success 'a store of an array whose tasks ran out of order' '
    mkdir recs &&
    mk 5 3 batch 0 && mk 5 3 0 1 && mk 5 3 extern 2 &&
    mk 9 10 batch 3 && mk 6 1 batch 4 && mk 8 9 batch 5 &&
    mk 7 2 batch 6 && mk 4 -1 batch 1 &&
    "$B/tests/storeput" store recs/*.json &&
    cat >expect.ids <<-\EOF
	5_1
	5_1.batch
	5_2
	5_2.batch
	5_3
	5_3.batch
	5_3.extern
	5_3.0
	5_9
	5_9.batch
	5_10
	5_10.batch
	EOF
    grep -v "^4" expect.ids | grep -v "\." >expect.jobs
'

test_expect_success 'the listing: the tasks in id order, where the first started' '
    report -P -n -o jobid >got.ids &&
    { cat expect.ids && printf "4\n4.batch\n"; } >expect.all &&
    test_cmp expect.all got.ids &&
    report -j 5 -P -n -o jobid >got.j5 &&
    test_cmp expect.ids got.j5 &&
    report -j 5 -n -o jobid >got.text &&
    sed "s/ *$//" got.text >got.text.ids &&
    test_cmp expect.ids got.text.ids
'

test_expect_success 'the listing in JSON: the same order' '
    report --json >list.json &&
    jq -r ".steps[] | .jobstep" list.json >got.json.ids &&
    { grep "\." expect.ids && echo 4.batch; } >expect.steps &&
    test_cmp expect.steps got.json.ids
'

test_expect_success 'the job view of -j 5: the tasks in id order' '
    COLUMNS=80 report -j 5 >view.out &&
    sed -n "s/^Job [0-9]* (array \([0-9_]*\)).*/\1/p" view.out >got.view &&
    test_cmp expect.jobs got.view &&
    report -j 5_3 | grep -o "^  Step [a-z0-9]*" >got.steps &&
    printf "  Step batch\n  Step extern\n  Step 0\n" >expect.steps3 &&
    test_cmp expect.steps3 got.steps
'

test_expect_success 'the job view in JSON: records in id order' '
    report -j 5 --json >view.json &&
    jq -r ".[] | .identity.array_task_id" view.json | uniq >got.tasks &&
    printf "1\n2\n3\n9\n10\n" >expect.tasks &&
    test_cmp expect.tasks got.tasks
'

test_done
