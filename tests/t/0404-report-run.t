#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-report --run=ID: the run view of a fixture store

A store of records made from a fixture record (tests/fixtures/export),
tagged as a Snakemake run would be: two rules, an OOM-killed task and a
task that exited 3; another user'"'"'s run of the same id; a step in no
run.  The view must show the run'"'"'s figures as --runs lists them, each
process with its failures and their cause, a timeline at 80 columns and
the slowest tasks; --json the same; an unknown run is an error.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
BASE=$S/tests/fixtures/export/101.batch.n2.json
ARTIFACTS=${TRACER_ARTIFACTS:-$B/tests/artifacts}
command -v chromium >/dev/null 2>&1 && test_set_prereq CHROMIUM

# chromium ARGS...: headless, without the sandbox (root), GPU or network
chrome ()
{
    timeout 120 chromium --headless --no-sandbox --disable-gpu \
        --no-first-run --disable-extensions --disable-background-networking \
        --hide-scrollbars --user-data-dir="$PWD/chrome-profile" "$@" \
        2>>chrome.err
}

require_or_skip "jq" command -v jq

report ()
{
    TRACER_CONF= COLUMNS=80 "$B/analysis/tracer-report" --store="$PWD/store" \
        -M vm --allow-unsigned "$@"
}

# mk JOB PROCESS STATE EXIT START ELAPSED CPU UID USER [RUN]: a batch
# step record of a Snakemake-style job, START seconds into the run
mk ()
{
    jq --arg id "$1" --arg p "$2" --arg st "$3" --argjson ex "$4" \
        --argjson s "$5" --argjson e "$6" --argjson c "$7" \
        --argjson uid "$8" --arg u "$9" --arg run "${10-smk-1}" '
        .identity.job_id = $id
        | .identity.job_name = ("snakejob." + $p + "." + $id + ".sh")
        | .identity.uid = $uid | .identity.user = $u
        | .identity.node = ("n" + (($id | tonumber) % 3 | tostring))
        | .outcome.state = $st | .outcome.exit_code = $ex
        | .outcome.tasks[0].exit_code = $ex
        | .time.start_unix_ms = (1793577600000 + $s * 1000)
        | .time.end_unix_ms = (1793577600000 + ($s + $e) * 1000)
        | .time.elapsed_s = $e
        | .summary.cpu.total_s = $c | .summary.cpu.user_s = $c
        | .tools[0].cpu_s = $c
        | .tools[0].name = (if $p == "align" then "bwa" else "samtools" end)
        | .tags = (if $run == "" then {} else {run: $run, pipeline: "demo"}
                   end)' "$BASE" >"recs/$1.batch.json"
}

test_expect_success 'a store of a run' '
    mkdir recs &&
    U=$(id -u tracertest 2>/dev/null || echo 1001) &&
    mk 201 align completed 0 0 100 190 $U tracertest &&
    mk 202 align completed 0 5 120 230 $U tracertest &&
    mk 203 align oom 0 10 60 50 $U tracertest &&
    mk 204 sort completed 0 130 30 20 $U tracertest &&
    mk 205 sort failed 3 135 10 5 $U tracertest &&
    mk 206 align completed 0 0 100 190 2002 bob &&
    mk 207 align completed 0 0 100 190 $U tracertest "" &&
    "$B/tests/storeput" store recs/*.json &&
    test $(find store -name "*.json" | wc -l) = 7
'

test_expect_success 'the run view: header, processes, timeline, slowest, 80 columns' '
    report -u $U --run=smk-1 >view.out &&
    cat view.out &&
    grep -x "Run: smk-1" view.out &&
    grep -x "Pipeline: demo" view.out &&
    grep -x "User: tracertest" view.out &&
    grep -x "Jobs: 5 (steps: 5), failed: 2" view.out &&
    grep -x "align: 3 tasks, 1 failed: OUT_OF_MEMORY x1" view.out &&
    grep -x "sort: 2 tasks, 1 failed: FAILED (exit 3) x1" view.out &&
    grep "^  Tools: bwa (00:07:50 CPU)$" view.out &&
    grep "^  Next time: align/batch: --cpus-per-task=" view.out &&
    grep "^203 align |    MMMM*  *|$" view.out &&
    grep "^205 sort  | *FFFFF *|$" view.out &&
    sed -n "/^Slowest tasks:/{n;p;}" view.out | grep "^  202 (align) 00:02:00 COMPLETED on n1: " &&
    awk "length > 80 { print; bad = 1 } END { exit bad }" view.out
'

test_expect_success 'the header has the figures --runs lists for the run' '
    report -u $U --runs -P -n -o run,start,end,elapsed,jobs,steps,failed,usedcpuh,alloccpuh,waste% >runs.out &&
    test $(wc -l <runs.out) = 1 &&
    IFS="|" read run start end elapsed jobs steps failed used alloc waste <runs.out &&
    grep -x "Start: $start" view.out &&
    grep -x "End: $end" view.out &&
    grep -x "Elapsed: $elapsed" view.out &&
    grep -x "Core-hours: $used used of $alloc allocated" view.out &&
    grep -x "Cost: unknown (no prices), waste $waste% of the core-hours" view.out
'

test_expect_success '--json: the same view as one object' '
    report -u $U --run=smk-1 --json >view.json &&
    jq -e ".run.run == \"smk-1\" and .run.jobs == 5 and .run.failed_jobs == 2
        and ([.processes[].process] == [\"align\", \"sort\"])
        and ([.processes[].tasks] == [3, 2])
        and (.processes[0].causes == {\"OUT_OF_MEMORY\": 1})
        and (.processes[1].causes == {\"FAILED (exit 3)\": 1})
        and ((([.processes[].cpu_share_pct] | add) - 100) | fabs < 1e-6)
        and (.tasks | length) == 5
        and ([.tasks[] | select(.job_id == \"203\") | .state] == [\"OUT_OF_MEMORY\"])
        and .slowest == [\"202\", \"201\", \"203\", \"204\", \"205\"]
        and (.money == null)" view.json
'

test_expect_success 'an unknown run: a clear error, exit 1' '
    test_expect_code 1 report -u $U --run=nosuch >out 2>err &&
    test_must_be_empty out &&
    grep "^tracer-report: no run .nosuch." err &&
    test_expect_code 2 report --run="../x" 2>err &&
    grep "is not a run id" err &&
    test_expect_code 2 report -u $U --run=smk-1 -P 2>err &&
    grep "drop the listing options" err
'

test_expect_success 'an admin naming no user: one id of two users is refused' '
    test_expect_code 1 report -a --run=smk-1 >out 2>err &&
    grep "several users" err
'

test_expect_success ROOT,TRACERTEST 'another user'"'"'s run is not shown to a user' '
    chmod -R a+rX store &&
    runuser -u tracertest -- env TRACER_CONF= "$B/analysis/tracer-report" \
        --store="$PWD/store" -M vm --allow-unsigned --run=smk-1 --json \
        >own.json &&
    jq -e ".run.user == \"tracertest\" and .run.jobs == 5" own.json &&
    test_expect_code 1 runuser -u tracertest -- env TRACER_CONF= \
        "$B/analysis/tracer-report" --store="$PWD/store" -M vm \
        --allow-unsigned -u 2002 --run=smk-1 >out 2>err &&
    grep "no run .smk-1. of yours" err
'

test_expect_success '--html: one self-contained page, a Gantt bar per task' '
    report -u $U --run=smk-1 --html -o run.html &&
    grep -q "^<!DOCTYPE html>" run.html &&
    grep -q "</html>" run.html &&
    ! grep -Eqi "<script|<link|src=|https?://" run.html &&
    test $(grep -o "<rect class=\"gb[a-z ]*\" data-job=" run.html | wc -l) = 5 &&
    grep -q "<rect class=\"gb bad\" data-job=\"203\"" run.html &&
    grep -q "<title>Job 203 (align) on n2: OUT_OF_MEMORY, 00:01:00" run.html &&
    grep -q "FAILED (exit 3) &times;1" run.html &&
    grep -q "id=\"slowest\"" run.html &&
    test_expect_code 2 report -u $U --run=smk-1 --html --json 2>err &&
    grep "drop the listing options" err
'

test_expect_success '--html -o: an unknown run leaves the file as it was' '
    echo old >keep.html &&
    test_expect_code 1 report -u $U --run=nosuch --html -o keep.html &&
    test "$(cat keep.html)" = old
'

# The probe: appended to a copy, it writes what the browser laid out and
# the errors it met into <pre id="probe"> as JSON, which --dump-dom prints.
cat >probe.js <<\EOF
(function () {
  var g = document.querySelector("svg.gantt");
  var r = g ? g.getBoundingClientRect() : null;
  var f = document.querySelector("figure.gantt");
  var out = { errors: window.__errors || [],
              bars: document.querySelectorAll("svg.gantt rect.gb").length,
              titled: document.querySelectorAll("svg.gantt rect.gb > title").length,
              tasks: f ? +f.getAttribute("data-tasks") : -1,
              gantt: r ? { w: Math.round(r.width), h: Math.round(r.height) } : null,
              pbars: document.querySelectorAll("figure.pchart rect").length,
              rows: document.querySelectorAll("table.processes tr").length };
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
EOF

test_expect_success CHROMIUM 'the page in Chromium: no errors, a bar per task, the charts and tables drawn' '
    { printf "<script>window.__errors = [];\n";
      printf "window.onerror = function (m) { window.__errors.push(String(m)); };</script>\n";
      cat run.html; printf "<script>\n"; cat probe.js; printf "</script>\n"; } >probe.html &&
    chrome --window-size=1280,900 --virtual-time-budget=5000 \
        --dump-dom "file://$PWD/probe.html" >dom.html &&
    sed -n "s|.*<pre id=\"probe\">\(.*\)</pre>.*|\1|p" dom.html |
        sed -e "s/&quot;/\"/g" -e "s/&amp;/\&/g" >probe.json &&
    cat probe.json &&
    jq -e ".errors == [] and .bars == 5 and .titled == 5 and .tasks == 5
        and .gantt.w > 500 and .gantt.h > 30 and .pbars == 4 and .rows == 3" \
        probe.json
'

test_expect_success CHROMIUM 'a screenshot of the page is kept as an artifact' '
    chrome --window-size=1280,1400 --screenshot="$PWD/run.png" \
        "file://$PWD/run.html" &&
    test "$(head -c 8 run.png | od -An -tx1 | tr -d " \n")" = \
        89504e470d0a1a0a &&
    test $(wc -c <run.png) -gt 20000 &&
    mkdir -p "$ARTIFACTS" && cp run.png "$ARTIFACTS/0404-run.png" &&
    cp run.html "$ARTIFACTS/0404-run.html"
'

test_done
