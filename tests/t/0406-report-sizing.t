#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='one step, one --mem in every view

A store of one step killed for memory (a fixture record), read under a
site configuration whose report.recommend keys differ from the built-in
defaults.  The listing (its diagnosis column and --json), the job view
(its diagnosis and "Next time"), --recommend (--json and sbatch lines)
and the HTML report must advise the same --mem, the site'"'"'s: the views
are compared with each other, and with the same store read without the
configuration, never with a fixed number.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
BASE=$S/tests/fixtures/export/101.batch.n2.json

require_or_skip "jq" command -v jq

# report CONF ARGS...: tracer-report over the store under CONF ("" for
# the built-in defaults)
report ()
{
    conf=$1
    shift
    TRACER_CONF=$conf COLUMNS=1000 "$B/analysis/tracer-report" \
        --store="$PWD/store" -M vm --allow-unsigned -u bob "$@"
}

# the --mem=VALUE a text names, or nothing
mem_of ()
{
    sed -n 's/.*--mem=\([0-9][0-9]*[MG]\).*/\1/p'
}

test_expect_success 'a store of one step killed for memory, and a site configuration' '
    mkdir recs &&
    jq ".identity.job_id = \"301\"
        | .outcome.state = \"oom\"
        | .summary.memory.peak_bytes = .request.mem_bytes" \
        "$BASE" >recs/301.batch.json &&
    "$B/tests/storeput" store recs/*.json &&
    cat >tracer.yaml <<-\EOF
	report:
	  recommend:
	    mem_headroom: 3
	    mem_min: 24G
	    time_margin: 1
	EOF
'

test_expect_success 'the listing --json names a --mem, with its value' '
    report "$PWD/tracer.yaml" -S 2026-01-01 --json >list.json &&
    jq -r ".steps[] | select(.stepid == \"batch\") | .diagnosis[]
           | select(.code == \"oom\") | .text" list.json >list.oom &&
    cat list.oom &&
    lmem=$(mem_of <list.oom) &&
    test -n "$lmem" &&
    jq -e ".steps[] | select(.stepid == \"batch\") | .diagnosis[]
           | select(.code == \"oom\") | .evidence.suggestedmem > 0" list.json &&
    report "$PWD/tracer.yaml" -S 2026-01-01 >list.out &&
    grep -q "^301.batch .*oom" list.out
'

test_expect_success 'the job view advises what the listing advises' '
    report "$PWD/tracer.yaml" -j 301 >view.out &&
    grep -E "Diagnosis|Next time" view.out &&
    lmem=$(mem_of <list.oom) &&
    dmem=$(grep "Diagnosis:" view.out | mem_of) &&
    nmem=$(grep "Next time:" view.out | mem_of) &&
    echo "listing $lmem, diagnosis $dmem, next time $nmem" &&
    test -n "$nmem" &&
    test "$lmem" = "$dmem" &&
    test "$lmem" = "$nmem"
'

test_expect_success '--recommend advises it too, in --json and sbatch lines' '
    report "$PWD/tracer.yaml" -S 2026-01-01 --recommend --json >rec.json &&
    lmem=$(mem_of <list.oom) &&
    test "$(jq -r ".groups[0].mem.text" rec.json)" = "$lmem" &&
    test "$(jq -r ".groups[0].mem.recommend" rec.json)" = \
        "$(jq -r ".steps[] | select(.stepid == \"batch\") | .diagnosis[]
                  | select(.code == \"oom\") | .evidence.suggestedmem" \
              list.json)" &&
    report "$PWD/tracer.yaml" -S 2026-01-01 --recommend --output=sbatch \
        >rec.sbatch &&
    cat rec.sbatch &&
    grep -qx "#SBATCH --mem=$lmem" rec.sbatch &&
    nline=$(sed -n "s/^ *Next time: *\(.*\) (1 run.*/\1/p" view.out) &&
    test "$(sed -n "s/^#SBATCH //p" rec.sbatch | paste -sd" " -)" = "$nline"
'

test_expect_success 'the HTML report advises it too' '
    report "$PWD/tracer.yaml" -j 301 --html -o view.html &&
    lmem=$(mem_of <list.oom) &&
    grep -q "^#SBATCH --mem=$lmem$" view.html &&
    grep -q -- "--mem=$lmem (a one-run estimate)" view.html
'

test_expect_success 'the advice is the site'"'"'s: without it the views agree on another --mem' '
    report "" -S 2026-01-01 --json >def.json &&
    dlist=$(jq -r ".steps[] | select(.stepid == \"batch\") | .diagnosis[]
                   | select(.code == \"oom\") | .text" def.json | mem_of) &&
    report "" -j 301 >def.out &&
    dnext=$(grep "Next time:" def.out | mem_of) &&
    echo "defaults: listing $dlist, next time $dnext; site $(mem_of <list.oom)" &&
    test -n "$dlist" &&
    test "$dlist" = "$dnext" &&
    test "$dlist" != "$(mem_of <list.oom)"
'

# One number with one reason after an OOM kill, in every view: a step
# killed at its 1600M request while its memory still rose 2 MB/s, 20 s
# into a one-minute limit.  Its rise over the 40 s left says 2G; twice
# the limit, rounded up, said 3584M (and the HTML 3.5 GiB), with a note
# that said "projected 2012M".  Every view names one --mem, and the
# reason (the limit at the kill being a lower bound) is the same.
test_expect_success 'an OOM kill while still growing: a store' '
    mkdir grecs &&
    jq ".identity.job_id = \"401\" | .identity.job_name = \"grow\"
        | .outcome.state = \"oom\" | .request.mem_bytes = 1677721600
        | .request.time_limit_s = 60 | .summary.memory.peak_bytes = 1677721600
        | .time.elapsed_s = 20
        | .time.start_unix_ms = (.time.end_unix_ms - 20000)
        | .series.t_s = [0, 10, 20]
        | .series.metrics.mem_bytes = {max: [1637721600, 1657721600, 1677721600],
                                       mean: [1637721600, 1657721600, 1677721600],
                                       min: [1637721600, 1657721600, 1677721600]}
        | .series.metrics.cpu_cores = {max: [1, 1, 1], mean: [1, 1, 1],
                                       min: [1, 1, 1]}" \
        "$BASE" >grecs/401.batch.json &&
    "$B/tests/storeput" gstore grecs/*.json
'

greport ()
{
    TRACER_CONF= COLUMNS=1000 "$B/analysis/tracer-report" \
        --store="$PWD/gstore" -M vm --allow-unsigned -u bob "$@"
}

test_expect_success 'every view names the one --mem, with the one reason' '
    greport -S 2026-01-01 --recommend --json >g.json &&
    mem=$(jq -r ".groups[0].mem.text" g.json) &&
    why=$(jq -r ".groups[0].mem.reason" g.json) &&
    echo "--mem=$mem: $why" &&
    test "$mem" = 2G &&
    case $why in
    "the 1600M it was killed at, a lower bound of its need, plus its rise at the kill"*) ;;
    *) false ;;
    esac &&
    # --recommend: its table and notes, its sbatch lines
    greport -S 2026-01-01 --recommend >g.rec &&
    grep -qx "grow/batch: after OOM: --mem=$mem: $why" g.rec &&
    grep -q "^grow/batch .* 1600M -> $mem " g.rec &&
    greport -S 2026-01-01 --recommend --output=sbatch >g.sb &&
    grep -qx "#SBATCH --mem=$mem" g.sb &&
    # the listing --json: the diagnosis and its evidence
    greport -S 2026-01-01 --json >g.list.json &&
    jq -r ".steps[0].diagnosis[] | select(.code == \"oom\") | .text" \
        g.list.json >g.list.oom &&
    grep -qF -- "--mem=$mem (a one-run estimate): $why" g.list.oom &&
    test "$(jq ".steps[0].diagnosis[] | select(.code == \"oom\")
                | .evidence.suggestedmem" g.list.json)" = \
         "$(jq ".groups[0].mem.recommend" g.json)" &&
    # the job view: its diagnosis and next time
    greport -j 401 >g.view &&
    grep -F -- "--mem=$mem (a one-run estimate): $why" g.view &&
    grep -q "Next time: .*--mem=$mem " g.view &&
    # the HTML: recommendation, notes, script lines, finding and evidence
    greport -j 401 --html -o g.html &&
    grep -q "<b>$mem</b>" g.html &&
    grep -qx "#SBATCH --mem=$mem" g.html &&
    grep -qF "<li>after OOM: --mem=$mem: $why</li>" g.html &&
    grep -qF -- "--mem=$mem (a one-run estimate): $why" g.html &&
    grep -q "suggestedmem $mem<" g.html &&
    # and no other --mem anywhere, nor another rendering of it
    cat g.rec g.sb g.list.oom g.view g.html |
        grep -o -e "--mem=[0-9]*[MG]" | sort -u >g.mems &&
    echo "--mem=$mem" >g.want &&
    test_cmp g.want g.mems &&
    ! grep -q "projected\|GiB</span>" g.html
'

test_done
