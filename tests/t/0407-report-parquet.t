#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-report --export=parquet: a lake of step summaries

A store of known records (tests/fixtures/export, two of its jobs put in
pipeline runs by their tags) is exported as Parquet files partitioned by
day.  hyparquet, a reader independent of tracer'"'"'s writer, reads every
part back; the totals by account and by pipeline must equal those of
tracer-report --waste (core-, GiB- and GPU-hours and money, with prices
set) and of the listing (CPU time, steps), on the same selection.
--since-last adds only what is new; bad directories fail cleanly.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
FIX=$S/tests/fixtures/export

require_or_skip "hyparquet and node (tools/install-deps)" \
    test_have_prereq HYPARQUET

report ()
{
    TRACER_CONF=$PWD/tracer.yaml "$B/analysis/tracer-report" --store=store \
        -M vm --allow-unsigned -a "$@"
}

# lake_rows DIR: every row of every part of DIR, as objects by column
# name, with the day of the part's directory; one JSON array.
lake_rows ()
{
    for f in $(find "$1" -name "part-*.parquet" | sort); do
        read_parquet "$f" |
        jq -c --arg day "$(basename "$(dirname "$f")")" \
            '[.columns[].name] as $c | .rows[] |
             [$c, .] | transpose | map({(.[0]): .[1]}) | add |
             .day = ($day | ltrimstr("day="))' || return 1
    done | jq -s .
}

# totals BY: the lake's sums by column BY (null as ""), as --waste keys
# them, rounded to 9 decimals so that the order of addition does not
# matter.
totals ()
{
    jq -S -c --arg by "$1" '
        def r: if . == null then null else (. * 1e9 | round) / 1e9 end;
        def s(f): (map(f) | if all(. == null) then null else
                   (map(. // 0) | add) end);
        group_by(.[$by] // "") | map({
            key: (.[0][$by] // ""),
            steps: (map([.cluster, .jobid, .stepid]) | unique | length),
            core: [s(.core_hours_allocated), s(.core_hours_used),
                   s(.core_hours_wasted)] | map(r),
            gib: [s(.gib_hours_allocated), s(.gib_hours_used),
                  s(.gib_hours_wasted)] | map(r),
            gpu: [s(.gpu_hours_allocated), s(.gpu_hours_used),
                  s(.gpu_hours_wasted)] | map(r),
            money: [s(.cost_allocated), s(.cost_used), s(.cost_wasted)]
                   | map(r)}) | sort_by(.key)[]'
}

# waste_totals: tracer-report --waste --json rows the same way.
waste_totals ()
{
    jq -S -c '
        def r: if . == null then null else (. * 1e9 | round) / 1e9 end;
        def h(o): [o.allocated, o.used, o.wasted] | map(r);
        .rows | map({key, steps, core: h(.core_hours), gib: h(.gib_hours),
                     gpu: h(.gpu_hours), money: h(.money)}) |
        sort_by(.key)[]'
}

test_expect_success 'a store of fixture records, two jobs in pipeline runs' '
    mkdir recs &&
    for f in "$FIX"/*.json; do
        case ${f##*/} in
        100.*) jq ".tags = {run: \"r1\", pipeline: \"rnaseq\"}" "$f" ;;
        101.*) jq ".tags = {run: \"r2\", pipeline: \"sarek\"}" "$f" ;;
        *) cat "$f" ;;
        esac >"recs/${f##*/}" || return 1
    done &&
    "$B/tests/storeput" store recs/*.json &&
    cat >tracer.yaml <<-\EOF
	report:
	  cost:
	    core_hour: 0.05
	    gb_hour: 0.01
	    gpu_hour: 2
	    currency: EUR
	EOF
'

test_expect_success '--export=parquet: parts by day, one row per step and node' '
    report -S 2026-10-01 --export=parquet -o lake 2>err &&
    cat err &&
    grep -q "^tracer-report: 8 rows (steps on nodes) in 2 files written to lake$" err &&
    test "$(cd lake && find . -name "*.parquet" | sort | tr "\n" " ")" = \
        "./day=2026-10-03/part-0000.parquet ./day=2026-11-02/part-0000.parquet " &&
    lake_rows lake >rows.json &&
    test "$(jq length rows.json)" = 8 &&
    jq -r ".[] | .path" rows.json | sort >paths &&
    (cd store && find vm/jobs -name "*.json" | sort) >want-paths &&
    test_cmp want-paths paths &&
    jq -e "all(.[]; .day == (.end | tonumber / 1000 | todate | .[0:10]))" \
        rows.json >/dev/null
'

test_expect_success 'unknown is null, never 0; the schema is documented' '
    jq -e "all(.[]; .gpu_hours_allocated == 0) and
           ([.[] | select(.stepid == \"0\")][0] | .psicpu == null and
            .submit == null)" rows.json >/dev/null &&
    read_parquet lake/day=2026-11-02/part-0000.parquet >one.json &&
    jq -e ".key_value[\"tracer.export\"] == \"steps\" and
           .key_value[\"tracer.currency\"] == \"EUR\" and
           (.created_by | startswith(\"tracer-report \"))" one.json >/dev/null &&
    jq -r ".columns[].name" one.json >cols &&
    while read -r c; do
        grep -q "^| \`$c\` " "$S/doc/export.md" ||
        { echo "column $c not in doc/export.md" >&2; return 1; }
    done <cols
'

test_expect_success 'totals by account and by pipeline equal --waste'"'"'s' '
    for by in account pipeline; do
        report -S 2026-10-01 --waste --by=$by --json >waste-$by.json &&
        waste_totals <waste-$by.json >want-$by &&
        totals $by <rows.json >got-$by &&
        test_cmp want-$by got-$by || return 1
    done &&
    test "$(wc -l <want-pipeline)" = 3 &&
    jq -e ".total.money.allocated > 0" waste-account.json >/dev/null
'

test_expect_success 'CPU time and steps by account equal the listing'"'"'s' '
    report -S 2026-10-01 --json >list.json &&
    jq -S -c ".steps | group_by(.account) | map({key: .[0].account,
              steps: length, cpu: (map(.totalcpu) | add * 1e6 | round)})" \
        list.json >want-cpu &&
    jq -S -c "group_by(.account) | map({key: .[0].account,
              steps: (map([.jobid, .stepid]) | unique | length),
              cpu: (map(.totalcpu) | add * 1e6 | round)})" \
        rows.json >got-cpu &&
    test_cmp want-cpu got-cpu &&
    # the diagnosis of each step is the listing'"'"'s
    report -S 2026-10-01 -P -n -o jobid,diagnosis | grep "^[^|]*\." |
        sort >want-diag &&
    jq -r ".[] | [.jobstep, .diagnosis] | join(\"|\")" rows.json |
        sort -u >got-diag &&
    test_cmp want-diag got-diag
'

test_expect_success 'without --since-last a directory holding an export is refused' '
    test_expect_code 1 report -S 2026-10-01 --export=parquet -o lake 2>err &&
    grep -q "lake holds an export already" err &&
    test "$(find lake -name "*.parquet" | wc -l)" = 2
'

test_expect_success '--since-last: nothing new, nothing written' '
    report -S 2026-10-01 --export=parquet --since-last -o lake 2>err &&
    grep -q "0 rows (steps on nodes) in 0 files written to lake; 8 there already" err &&
    test "$(find lake -name "*.parquet" | wc -l)" = 2
'

test_expect_success '--since-last: a new record goes into a new part, once' '
    jq ".identity.job_id = \"103\" | .identity.job_name = \"late\"" \
        recs/101.batch.n2.json >recs/103.batch.n2.json &&
    "$B/tests/storeput" store recs/103.batch.n2.json &&
    report -S 2026-10-01 --export=parquet --since-last -o lake 2>err &&
    grep -q "1 row (steps on nodes) in 1 file written to lake; 8 there already" err &&
    day=$(jq -r ".time.end_unix_ms / 1000 | todate | .[0:10]" recs/103.batch.n2.json) &&
    test -f "lake/day=$day/part-0001.parquet" &&
    lake_rows lake >rows2.json &&
    test "$(jq length rows2.json)" = 9 &&
    test "$(jq "[.[] | .path] | unique | length" rows2.json)" = 9 &&
    report -S 2026-10-01 --export=parquet --since-last -o lake 2>err &&
    grep -q "0 rows .* 9 there already" err &&
    # totals still agree with --waste over the whole lake
    report -S 2026-10-01 --waste --by=account --json | waste_totals >want &&
    totals account <rows2.json >got &&
    test_cmp want got
'

test_expect_success '--since-last without -S starts the day before the last export' '
    rm -rf lake2 &&
    report -S 2026-10-01 --export=parquet -o lake2 2>/dev/null &&
    echo 1793577600 >lake2/_tracer-export/last &&
    report --export=parquet --since-last -o lake2 2>err &&
    grep -q "0 rows .* 8 there already" err &&
    echo 1 >lake2/_tracer-export/last &&
    report --export=parquet --since-last -o lake2 2>err &&
    grep -q "0 rows .* 9 there already" err
'

test_expect_success 'a part no state names (an export cut short) is replaced, not kept' '
    cp "lake/day=$day/part-0001.parquet" "lake/day=$day/part-0002.parquet" &&
    jq ".identity.job_id = \"104\"" recs/101.batch.n2.json >recs/104.batch.n2.json &&
    "$B/tests/storeput" store recs/104.batch.n2.json &&
    report -S 2026-10-01 --export=parquet --since-last -o lake 2>err &&
    grep -q "1 row .* 9 there already" err &&
    ! test -e "lake/day=$day/part-0002.parquet" &&
    test -f "lake/day=$day/part-0003.parquet" &&
    lake_rows lake >rows3.json &&
    test "$(jq length rows3.json)" = 10 &&
    test "$(jq "[.[] | .path] | unique | length" rows3.json)" = 10
'

test_expect_success 'bad usage: exit 2 with the reason, nothing made' '
    test_expect_code 2 report --since-last -o x 2>err &&
    grep -q "since-last adds to a Parquet export" err &&
    test_expect_code 2 report --export=opendc --since-last -o x 2>err &&
    grep -q "needs --export=parquet" err &&
    test_expect_code 2 report --export=parquet 2>err &&
    grep -q "needs -o DIR" err &&
    ! test -e x
'

test_expect_success 'a file, a missing parent or an unwritable DIR: exit 1, no part left' '
    : >plain &&
    test_expect_code 1 report -S 2026-10-01 --export=parquet -o plain 2>err &&
    grep -q "plain: not a directory" err &&
    test_expect_code 1 report -S 2026-10-01 --export=parquet -o no/such/dir \
        2>err &&
    grep -q "no/such/dir: No such file or directory" err &&
    mkdir ro &&
    if test "$(id -u)" = 0
    then
        # root writes through any mode: a read-only file system
        mount -t tmpfs -o ro,size=1m tracer-ro ro &&
        test_when_finished "umount ro" &&
        test_expect_code 1 report -S 2026-10-01 --export=parquet -o ro \
            2>err &&
        grep -q "Read-only file system" err
    else
        chmod 555 ro &&
        test_expect_code 1 report -S 2026-10-01 --export=parquet -o ro \
            2>err &&
        grep -q "Permission denied" err
    fi &&
    test -z "$(find ro -name "*parquet*")"
'

# The day's directory is in the way (a file of that name): the part
# cannot be written, and nothing of that day is kept (the other days'
# parts are whole, each named by its day's state).
test_expect_success 'a write that fails leaves no part and no state' '
    rm -rf lake3 && mkdir lake3 && : >"lake3/day=2026-11-02" &&
    test_expect_code 1 report -S 2026-10-01 --export=parquet -o lake3 2>err &&
    cat err &&
    grep -q "day=2026-11-02" err &&
    test -f "lake3/day=2026-11-02" && ! test -s "lake3/day=2026-11-02" &&
    ! test -e lake3/_tracer-export/days/2026-11-02 &&
    for part in $(cd lake3 && find . -name "*.parquet*"); do
        day=${part#./day=} && day=${day%%/*} &&
        grep -q "${part##*/}" "lake3/_tracer-export/days/$day" || return 1
    done
'

test_done
