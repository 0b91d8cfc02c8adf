#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-report --export: OpenDC traces of a fixture store

A store of known records (tests/fixtures/export: a job of a batch step
and two steps on two nodes, another user'"'"'s job, a record without a CPU
frequency, and a job a month older) is exported with the usual filters.
hyparquet, a Parquet reader independent of tracer'"'"'s writer, reads both
tables back, and every value must equal what tests/data/opendc.jq
computes from the records; the CSV tables are golden files and must hold
the same values.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
FIX=$S/tests/fixtures/export
REF=$S/tests/data/opendc.jq

require_or_skip "hyparquet and node (tools/install-deps)" \
    test_have_prereq HYPARQUET

# export ARGS...: tracer-report on the fixture store, every user's steps.
export_ ()
{
    TRACER_CONF= "$B/analysis/tracer-report" --store=store -M vm \
        --allow-unsigned "$@"
}

# check_tables DIR RECORD...: DIR's Parquet tables hold exactly the tasks
# and fragments opendc.jq computes from the records.
check_tables ()
{
    _dir=$1 && shift &&
    jq -s -f "$REF" "$@" >"$_dir.ref" &&
    read_parquet "$_dir/tasks.parquet" >"$_dir.tasks" &&
    read_parquet "$_dir/fragments.parquet" >"$_dir.frags" &&
    jq -e -n --slurpfile r "$_dir.ref" --slurpfile t "$_dir.tasks" \
        --slurpfile f "$_dir.frags" '
        ($r[0].tasks | length) > 0 and
        $t[0].rows == $r[0].tasks and $f[0].rows == $r[0].fragments and
        $t[0].num_rows == ($r[0].tasks | length) and
        $f[0].num_rows == ($r[0].fragments | length)' >/dev/null ||
    { echo "tables of $_dir differ from $_dir.ref" >&2; return 1; }
}

test_expect_success 'a store of fixture records' '
    "$B/tests/storeput" store "$FIX"/*.json &&
    test $(find store -name "*.json" | wc -l) = 8
'

test_expect_success '--export=opendc: two Parquet tables, every value from the records' '
    export_ -a -S 2026-11-01 --export=opendc -o all 2>err &&
    cat err &&
    test "$(ls all | sort | tr "\n" " ")" = "fragments.parquet tasks.parquet " &&
    grep -q "^tracer-report: 6 tasks, 25 fragments written to all$" err &&
    grep -q "102/batch.n1.json: step 102.batch on n1 left out: no CPU frequency" err &&
    grep -q "1 step left out" err &&
    check_tables all "$FIX"/10[0-2].*.json
'

test_expect_success 'the Parquet schema is what OpenDC'"'"'s reader asks for' '
    jq -c "[.columns[] | [.name, .type, .repetition, .logical]]" \
        all.tasks >schema.out &&
    jq -c "[.columns[] | [.name, .type, .repetition, .logical]]" \
        all.frags >>schema.out &&
	cat >schema.expect <<-\EOF &&
	[["id","INT32","REQUIRED",null],["name","BYTE_ARRAY","OPTIONAL","STRING"],["submission_time","INT64","REQUIRED","TIMESTAMP_MILLIS"],["duration","INT64","REQUIRED",null],["cpu_count","INT32","REQUIRED",null],["cpu_capacity","DOUBLE","REQUIRED",null],["mem_capacity","INT64","REQUIRED",null]]
	[["id","INT32","REQUIRED",null],["duration","INT64","REQUIRED",null],["cpu_count","INT32","REQUIRED",null],["cpu_usage","DOUBLE","REQUIRED",null]]
	EOF
    test_cmp schema.expect schema.out &&
    test "$(jq -r ".columns[2].utc" all.tasks)" = true &&
    test "$(jq -r ".key_value[\"tracer.export\"]" all.tasks)" = opendc &&
    jq -r .created_by all.frags | grep -q "^tracer-report "
'

test_expect_success 'the multi-node, multi-step job: one task per step per node' '
    jq -r ".rows[] | .[1]" all.tasks >names &&
    test "$(grep -c "^100\." names)" = 5 &&
    test "$(jq "[.rows[] | select(.[1] | startswith(\"100.0@\"))] | length" all.tasks)" = 2 &&
    # the fragments of each task add up to its duration
    jq -e -n --slurpfile t all.tasks --slurpfile f all.frags "
        [\$t[0].rows[] | . as \$task
         | ([\$f[0].rows[] | select(.[0] == \$task[0]) | .[1] | tonumber]
            | add) == (\$task[3] | tonumber)] | all" >/dev/null
'

test_expect_success '--export=opendc-csv: golden tables with the same values' '
    export_ -a -S 2026-11-01 --export=opendc-csv -o csv 2>err &&
    test "$(ls csv | sort | tr "\n" " ")" = "fragments.csv tasks.csv " &&
    test_cmp "$FIX/expected/tasks.csv" csv/tasks.csv &&
    test_cmp "$FIX/expected/fragments.csv" csv/fragments.csv &&
    # the same numbers as the Parquet tables (int64 as strings there)
    tail -n +2 csv/tasks.csv | tr -d "\r" |
        jq -R -c "split(\",\") | [(.[0] | tonumber), .[1], .[2], .[3],
            (.[4] | tonumber), (.[5] | tonumber), .[6]]" >csv.rows &&
    jq -c ".rows[]" all.tasks >pq.rows &&
    test_cmp pq.rows csv.rows &&
    tail -n +2 csv/fragments.csv | tr -d "\r" |
        jq -R -c "split(\",\") | [(.[0] | tonumber), .[1], (.[2] | tonumber),
            (.[3] | tonumber)]" >csv.frows &&
    jq -c ".rows[]" all.frags >pq.frows &&
    jq -e -n --slurpfile a csv.frows --slurpfile b pq.frows "\$a == \$b" \
        >/dev/null
'

test_expect_success 'filters: -u, -A, -j, --tag, -S/-E select whole steps' '
    export_ -u bob --export=opendc -o bob -S 2026-11-01 2>/dev/null &&
    check_tables bob "$FIX"/101.*.json &&
    export_ -a -A astro -S 2026-11-01 --export=opendc -o astro 2>/dev/null &&
    check_tables astro "$FIX"/100.*.json &&
    export_ -a -j 100 --export=opendc -o j100 2>/dev/null &&
    check_tables j100 "$FIX"/100.*.json &&
    export_ -a -S 2026-11-01 --tag pipeline=nf-core --export=opendc \
        -o tag 2>/dev/null &&
    check_tables tag "$FIX"/100.*.json &&
    export_ -a -S 2026-10-01 -E 2026-10-05 --export=opendc -o oct \
        2>/dev/null &&
    check_tables oct "$FIX"/90.*.json
'

test_expect_success 'a second export replaces the first whole, leaving nothing else' '
    export_ -a -j 101 --export=opendc -o all 2>/dev/null &&
    check_tables all "$FIX"/101.*.json &&
    test "$(ls -A all | sort | tr "\n" " ")" = "fragments.parquet tasks.parquet "
'

test_expect_success 'nothing selected: exit 1, nothing written' '
    test_expect_code 1 export_ -a -j 4242 --export=opendc -o none 2>err &&
    grep -q "no steps to export; nothing written" err &&
    ! test -e none &&
    test_expect_code 1 export_ -a -j 102 --export=opendc -o none 2>err &&
    grep -q "every selected step was left out" err &&
    ! test -e none
'

test_expect_success 'unsigned records are not exported unless allowed' '
    test_expect_code 1 env TRACER_CONF= "$B/analysis/tracer-report" \
        --store=store -M vm -a -j 100 --export=opendc -o unsigned 2>err &&
    grep -q "5 unsigned records left out" err &&
    ! test -e unsigned
'

# The user must reach the trash directory to read the store.
if test_have_prereq ROOT,TRACERTEST &&
   runuser -u tracertest -- test -r "$FIX/101.batch.n2.json" &&
   runuser -u tracertest -- test -x "$PWD"
then
    test_set_prereq USER_EXPORT
fi

test_expect_success USER_EXPORT 'a user exports their own steps only, even with -a' '
    uid=$(id -u tracertest) &&
    jq ".identity.uid = $uid | .identity.user = \"tracertest\"" \
        "$FIX/101.batch.n2.json" >mine.json &&
    "$B/tests/storeput" store mine.json &&
    chmod 755 . &&
    runuser -u tracertest -- env TRACER_CONF= "$B/analysis/tracer-report" \
        --store=store -M vm --allow-unsigned -a -S 2026-11-01 \
        --export=opendc -o /tmp/tracer-0403-$$ 2>err &&
    check_tables /tmp/tracer-0403-$$ mine.json &&
    test "$(stat -c %U /tmp/tracer-0403-$$/tasks.parquet)" = tracertest &&
    rm -rf /tmp/tracer-0403-$$
'

test_expect_success 'bad usage: exit 2 with the reason' '
    test_expect_code 2 export_ -a --export=arrow -o x 2>err &&
    grep -q "export: .arrow. is not parquet, opendc, opendc-csv or nextflow-trace" err &&
    test_expect_code 2 export_ -a --export=opendc 2>err &&
    grep -q "needs -o DIR" err &&
    test_expect_code 2 export_ -a --export=opendc -o x -P 2>err &&
    grep -q "drop the listing options" err &&
    test_expect_code 2 export_ -a --export=opendc --summary -o x 2>err &&
    grep -q "choose one of" err &&
    ! test -e x
'

test_expect_success 'a directory that cannot be made or is a file: exit 1' '
    : >plain &&
    test_expect_code 1 export_ -a -j 100 --export=opendc -o plain 2>err &&
    grep -q "plain: not a directory" err &&
    test_expect_code 1 export_ -a -j 100 --export=opendc -o no/such/dir \
        2>err &&
    grep -q "no/such/dir: No such file or directory" err
'

test_done
