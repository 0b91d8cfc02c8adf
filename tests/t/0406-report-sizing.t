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

test_done
