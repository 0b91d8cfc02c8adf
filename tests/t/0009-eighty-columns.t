#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='every human view fits an 80-column terminal

A store made from a fixture record (tests/fixtures/export), as t/0405
makes it: three runs of a pipeline, one step OOM-killed, one that exited
3, and another user.  At COLUMNS=80 no line of the listing, the job view,
--recommend, --waste (each --by), --summary, --regressions, --failures,
--runs, --run, --compare, --digest=print or of any program'"'"'s --help
and --helpformat is over 80 characters (UTF-8 characters, not bytes).
Machine formats (JSON, CSV, parquet, -P) are exempt.  tracer-mail'"'"'s
summary needs a job'"'"'s signed records and slurmctld'"'"'s environment:
its text is checked by the mail unit test (libtracer/view/test/mail.c)
and t/0611, not here.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
FIX=$S/tests/fixtures/export/100.batch.n1.json

require_or_skip "jq" command -v jq
require_or_skip "perl" command -v perl

report ()
{
    TRACER_CONF= TZ=UTC COLUMNS=80 "$B/analysis/tracer-report" \
        --store=store -M vm --allow-unsigned -S 2026-11-01 -E 2026-11-03 "$@"
}

# fits FILE...: no line over 80 characters (each one over is shown)
fits ()
{
    perl -CSD -ne 'chomp; if (length > 80) { print "$ARGV: ", length,
        ": $_\n"; $bad = 1 } END { exit $bad }' "$@"
}

# rec JOBID RUN PROCESS ELAPSED CPU START [UID USER [STATE [EXIT]]]
rec ()
{
    jq --arg id "$1" --arg run "$2" --arg proc "$3" --argjson el "$4" \
        --argjson cpu "$5" --argjson st "$6" --argjson uid "${7:-2001}" \
        --arg user "${8:-alice}" --arg state "${9:-completed}" \
        --argjson ex "${10:-0}" '
        .identity.job_id = $id | .identity.job_name = $proc |
        .identity.uid = $uid | .identity.user = $user |
        .tags = {run: $run, pipeline: "proj", process: $proc} |
        .time.start_unix_ms = 1793577600000 + $st * 1000 |
        .time.elapsed_s = $el |
        .time.end_unix_ms = 1793577600000 + $st * 1000 + ($el * 1000 | floor) |
        .summary.cpu.total_s = $cpu | .summary.cpu.user_s = $cpu |
        .outcome.state = $state | .outcome.exit_code = $ex |
        .tools[0].cpu_s = $cpu |
        .cgroup.paths.unified = "/slurm/job_\($id)/step_batch"' \
        "$FIX" >recs/$1.batch.n1.json
}

test_expect_success 'a store of three runs, with failures and two users' '
    mkdir recs &&
    rec 201 R1 align 60 54 0 && rec 202 R1 align 62 55 0 &&
    rec 203 R1 align 58 52 0 && rec 204 R1 sort 20 18 70 &&
    rec 205 R1 sort 21 19 70 &&
    rec 301 R2 align 61 55 3600 && rec 302 R2 align 59 53 3600 &&
    rec 303 R2 align 63 56 3600 && rec 304 R2 sort 21 19 3670 &&
    rec 305 R2 sort 20 18 3670 &&
    rec 401 R3 align 60 54 7200 && rec 402 R3 align 61 55 7200 &&
    rec 403 R3 align 59 53 7200 && rec 404 R3 sort 41 37 7270 &&
    rec 405 R3 sort 40 36 7270 2001 alice oom 0 &&
    rec 406 R3 report 2 1 7320 2001 alice failed 3 &&
    rec 501 R1 align 600 540 0 2002 bob &&
    "$B/tests/storeput" store recs/*.json &&
    test $(find store -name "*.json" | wc -l) = 17
'

# view NAME ARGS...: tracer-report ARGS into NAME.out, which must not be
# empty, and fit
view ()
{
    name=$1 && shift &&
    report "$@" >"$name.out" 2>"$name.err" &&
    test -s "$name.out" &&
    fits "$name.out" "$name.err"
}

test_expect_success 'the listing, the job view and --recommend' '
    view list -u 2001 &&
    view list-all -a &&
    view job -u 2001 -j 405 &&
    view job-failed -u 2001 -j 406 &&
    view recommend -u 2001 --recommend
'

for by in user account partition step tool group pipeline; do
    test_expect_success "--waste --by=$by" '
        view waste-$by -a --waste --by=$by
    '
done

test_expect_success '--summary (each kind), --regressions, --failures' '
    view summary -u 2001 --summary=group &&
    view summary-name -u 2001 --summary=name &&
    report -u 2001 --summary >summary-array.out &&
    fits summary-array.out &&
    report -u 2001 --regressions >regressions.out &&
    fits regressions.out &&
    report -u 2001 --regressions --by=run >regressions-run.out &&
    fits regressions-run.out &&
    view failures -a --failures
'

test_expect_success '--runs, --run, --compare, --digest=print' '
    view runs -u 2001 --runs &&
    view run -u 2001 --run=R3 &&
    view compare -u 2001 --compare=R1,R3 &&
    view digest -a --digest=print
'

test_expect_success 'every program'"'"'s --help, and --helpformat' '
    for p in analysis/tracer-report collector/tracer-run collector/tracerd \
             analysis/tracer-mail prolog/tracer-prolog; do
        COLUMNS=80 "$B/$p" --help >help.out 2>&1 &&
        test -s help.out &&
        fits help.out || return 1
    done &&
    COLUMNS=80 "$B/analysis/tracer-report" --helpformat >fields.out &&
    COLUMNS=80 "$B/analysis/tracer-report" --helpformat --runs >rfields.out &&
    fits fields.out rfields.out &&
    grep -q "^                          on a step row\$" fields.out
'

test_done
