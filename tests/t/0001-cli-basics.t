#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='every program answers --help and --version, and refuses bad usage with exit 2'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"/\1/p' "$B/config.h")

for prog in collector/tracerd collector/tracer-run analysis/tracer-report \
    analysis/tracer-mail; do
    name=${prog#*/}
    test_expect_success "$name --help exits 0 and shows usage" "
        $B/$prog --help >out &&
        grep -q '^Usage: $name' out
    "
    test_expect_success "$name --version prints $VERSION" "
        $B/$prog --version >out &&
        test \"\$(cat out)\" = \"$name $VERSION\"
    "
    test_expect_success "$name rejects an unknown option with exit 2, in one line" "
        test_expect_code 2 $B/$prog --no-such-option 2>err &&
        echo \"$name: unknown option '--no-such-option' (see $name --help)\" \
            >expect &&
        test_cmp expect err &&
        test_expect_code 2 $B/$prog -Z 2>err &&
        grep -qx \"$name: unknown option '-Z' (see $name --help)\" err &&
        test_expect_code 2 $B/$prog -c 2>err &&
        grep -qx \"$name: option '-c' needs a value (see $name --help)\" err
    "
done

test_expect_success 'tracer-run without a command exits 2' '
    test_expect_code 2 $B/collector/tracer-run 2>err &&
    grep -q "no command given" err
'
test_expect_success 'tracer-run --interval out of range exits 2' '
    test_expect_code 2 $B/collector/tracer-run -i 0.01 -- true 2>err &&
    grep -q "expected seconds in \[0.1, 3600\]" err
'
test_expect_success 'tracer-report without jobs or files lists; bad filters exit 2' '
    mkdir -p empty-store &&
    TRACER_CONF= $B/analysis/tracer-report --store=empty-store \
        -P -o jobid,state >out &&
    echo "JobID|State" >expect &&
    test_cmp expect out &&
    TRACER_CONF= $B/analysis/tracer-report --store=empty-store -b -P >out &&
    echo "JobID|State|ExitCode" >expect &&
    test_cmp expect out &&
    TRACER_CONF= $B/analysis/tracer-report --store=empty-store \
        -o jobid,MAXRSS,cpueff,TimeEff,reqcpus >out &&
    head -1 out >got &&
    printf "%-12s %10s %7s %7s %8s\n" JobID MaxRSS CPUEff TimeEff ReqCPUS \
        >expect &&
    test_cmp expect got &&
    test_expect_code 2 $B/analysis/tracer-report --store=. --units=X 2>err &&
    grep -qx "tracer-report: --units: .X. is not K, M, G, T or P" err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. -s BOGUS 2>err &&
    grep -q "BOGUS. is not a state" err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. -S yesterdayish \
        2>err &&
    grep -q "yesterdayish" err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. -o nosuch 2>err &&
    grep -q "nosuch. is not a field" err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. -j 12_[3 2>err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. --recommend \
        --waste 2>err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. --output=xml \
        2>err
'
test_expect_success '--recommend with no runs says so on stderr and exits 1' '
    test_expect_code 1 $B/analysis/tracer-report --store=. --recommend \
        --output=snakemake >out 2>err &&
    test_must_be_empty out &&
    grep -q "no runs to recommend from" err
'
test "$(id -u)" = 0 && test_set_prereq ROOT
test_expect_success ROOT '--recommend as root reads every user, as sacct does' '
    test_expect_code 1 $B/analysis/tracer-report --store=. --recommend \
        2>err &&
    grep -q "no runs to recommend from in this period" err &&
    ! grep -q "only your own" err
'
test_expect_success 'tracer-report refuses a job id with a path in it' '
    test_expect_code 2 $B/analysis/tracer-report --store=. -j ../../etc 2>err &&
    grep -q "invalid job id" err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. -j abc 2>err &&
    grep -q "invalid job id .abc.: expected N" err
'
test_done
