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
    test_expect_success "$name --help exits 0 and shows usage, in 80 columns" "
        $B/$prog --help >out &&
        grep -q '^Usage: $name' out &&
        ! awk 'length > 80' out | grep -v '^ *(default /' | grep .
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

# tracer-prolog fails open (a hook never fails a job), so it is not in
# the loop's exit 2 checks; its help fits 80 columns as theirs do (but
# for the configuration's path, which the installation prefix makes)
test_expect_success 'tracer-prolog --help shows usage, in 80 columns' '
    $B/prolog/tracer-prolog --help >out &&
    grep -q "^Usage: tracer-prolog" out &&
    ! awk "length > 80" out | grep -v "^ *(default /" | grep .
'

test_expect_success 'tracer-prolog with an unknown mode says so on stderr, once, and fails open' '
    TRACER_CONF=/dev/null $B/prolog/tracer-prolog --log="$PWD/prolog.log" \
        bogus-mode 2>err &&
    grep -x "tracer-prolog: unknown mode .bogus-mode. (tracer-prolog --help lists them)" err &&
    test "$(grep -c bogus-mode err)" = 1 &&
    grep -q "tracer-prolog\[[0-9]*\]: unknown mode .bogus-mode." prolog.log &&
    ! grep -q "bogus-mode: unknown" prolog.log
'

test_expect_success 'tracer-run without a command exits 2' '
    test_expect_code 2 $B/collector/tracer-run 2>err &&
    grep -q "no command given" err
'
test_expect_success 'tracer-run --interval out of range exits 2' '
    test_expect_code 2 $B/collector/tracer-run -i 0.01 -- true 2>err &&
    grep -q "expected seconds in \[0.1, 3600\]" err
'
test_expect_success 'tracer-report takes sacct.s MaxDiskRead and MaxDiskWrite; refuses MaxVMSize (doc/sacct.md)' '
    mkdir -p empty-store &&
    TRACER_CONF= $B/analysis/tracer-report --store=empty-store \
        -P -o JobID,MaxDiskRead,MaxDiskWrite >out &&
    echo "JobID|MaxDiskRead|MaxDiskWrite" >expect &&
    test_cmp expect out &&
    TRACER_CONF= test_expect_code 2 $B/analysis/tracer-report \
        --store=empty-store -o MaxVMSize 2>err &&
    grep -q "MaxVMSize" err &&
    grep -q "^| MaxVMSize, AveVMSize | none |" "$TRACER_SRCDIR/doc/sacct.md"
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
        2>err &&
    test_expect_code 2 $B/analysis/tracer-report --store=no-such-store \
        -o Foo 2>err &&
    grep -qx "tracer-report: --format: .Foo. is not a field (see --helpformat)" err &&
    mkdir -p other-store/alpha/jobs &&
    TRACER_CONF= test_expect_code 1 $B/analysis/tracer-report \
        --store=other-store -j 1 2>err &&
    grep -q "^tracer-report: job 1: no records in .*other-store (cluster default; it holds cluster alpha: -M alpha)$" err &&
    test_expect_code 1 $B/analysis/tracer-report --store=no-such-store \
        2>err &&
    test "$(grep -o no-such-store err | wc -l)" = 1 &&
    test_expect_code 2 $B/analysis/tracer-report --store=empty-store \
        -S 2030-01-01 2>err &&
    test $(wc -l <err) = 1 &&
    grep -q "^tracer-report: -S 2030-01-01T00:00:00 is after the end of the period (now, " err &&
    test_expect_code 2 $B/analysis/tracer-report --store=empty-store \
        -S 2025-02-01 -E 2025-01-01 2>err &&
    grep -qx "tracer-report: -S 2025-02-01T00:00:00 is after the end of the period (-E 2025-01-01T00:00:00)" err
'
test_expect_success '--recommend with no runs says so on stderr and exits 0' '
    $B/analysis/tracer-report --store=. --recommend \
        --output=snakemake >out 2>err &&
    test_must_be_empty out &&
    grep -q "no runs to recommend from" err
'
test "$(id -u)" = 0 && test_set_prereq ROOT
test_expect_success ROOT '--recommend as root reads every user, as sacct does' '
    $B/analysis/tracer-report --store=. --recommend 2>err &&
    grep -q "no runs to recommend from in this period" err &&
    ! grep -q "only your own" err
'
test_expect_success 'tracer-report refuses a job id with a path in it' '
    test_expect_code 2 $B/analysis/tracer-report --store=. -j ../../etc 2>err &&
    grep -q "invalid job id" err &&
    test_expect_code 2 $B/analysis/tracer-report --store=. -j abc 2>err &&
    grep -q "invalid job id .abc.: expected N" err
'
# The job view a person reads: a job of several steps from a synthetic
# store (bench/gen-store), and the collector's fixture records.
S=${TRACER_SRCDIR:-$B}
id -u tracertest >/dev/null 2>&1 && test_set_prereq TRACERTEST
REC=$S/tests/fixtures/records

# The widest line of a file, in characters.
widest ()
{
    awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$1"
}

test_expect_success 'the job view of a multi-step job fits 80 columns' '
    $B/bench/gen-store -n 30 -u 3 -d 1 gs >/dev/null &&
    printf "store:\n  path: %s/gs\n" "$PWD" >gs.yaml &&
    (unset COLUMNS; $B/analysis/tracer-report -c gs.yaml --allow-unsigned \
        -M bench -j 1000000 >jv.out 2>jv.err) &&
    test_must_be_empty jv.err &&
    test "$(grep -c "^  Step " jv.out)" = 3 &&
    test "$(widest jv.out)" -le 80 &&
    test "$(widest jv.out)" -ge 70 &&
    COLUMNS=bogus $B/analysis/tracer-report -c gs.yaml --allow-unsigned \
        -M bench -j 1000000 >jv.bogus &&
    test_cmp jv.out jv.bogus
'

# The header's state and efficiencies are the listing's job row's.
test_expect_success 'the job header says what the listing'"'"'s job row says' '
    $B/analysis/tracer-report -c gs.yaml --allow-unsigned -M bench \
        -S 2025-12-01 -j 1000000 -P -o jobid,state,cpueff,memeff >row.out &&
    grep "^1000000|" row.out >job.row &&
    IFS="|" read -r id state cpueff memeff <job.row &&
    test "$state" = COMPLETED &&
    grep "^  State: *$state (exit code [0-9]*:[0-9]*)$" jv.out &&
    cpu=$(printf "%.1f%%" "$cpueff") && mem=$(printf "%.1f%%" "$memeff") &&
    grep "^  CPU efficiency: $cpu of .* core-walltime (.* CPU)$" jv.out &&
    grep "^  Memory: .* peak of .* requested ($mem)$" jv.out &&
    grep "^  Cores: *16 on 1 node$" jv.out &&
    grep "^  Time: .* of .* limit (.*%)$" jv.out &&
    test "$(grep -c "^  State:" jv.out)" = 1 &&
    ! grep -q "Queue wait" jv.out
'

# The queue wait is shown where the scheduler said when the job was
# submitted, as the listing's job row has it; never 0 for unknown.
test_expect_success 'the job header'"'"'s queue wait is the listing'"'"'s, when known' '
    sed "s/\"start_unix_ms\": 1767225600000/&, \"submit_unix_ms\": 1767225597000, \"job_start_unix_ms\": 1767225600000/" \
        $REC/collector-slurm-v2.json >qw.json &&
    grep -q submit_unix_ms qw.json &&
    mkdir qwstore && $B/tests/storeput qwstore qw.json &&
    printf "store:\n  path: %s/qwstore\n" "$PWD" >qw.yaml &&
    $B/analysis/tracer-report -c qw.yaml --allow-unsigned -M c1 -j 42 >qw.out &&
    $B/analysis/tracer-report -c qw.yaml --allow-unsigned -M c1 -j 42 \
        -S 2025-12-01 -P -o jobid,queuewait >qw.row &&
    grep -qx "42|00:00:03" qw.row &&
    grep -qx "  Queue wait:     00:00:03" qw.out &&
    $B/analysis/tracer-report --allow-unsigned $REC/collector-slurm-v2.json \
        >noqw.out &&
    grep -q "^  State:" noqw.out &&
    ! grep -q "Queue wait" noqw.out
'

test_expect_success 'COLUMNS=120 gives longer lines, none over 120' '
    COLUMNS=120 $B/analysis/tracer-report -c gs.yaml --allow-unsigned \
        -M bench -j 1000000 >jv120.out &&
    test "$(widest jv120.out)" -gt 80 &&
    test "$(widest jv120.out)" -le 120
'

test_expect_success 'what every step shares is said once, not per step' '
    test "$(grep -c "Memory means:" jv.out)" = 1 &&
    grep -q "^Notes$" jv.out &&
    for f in batch 0 1; do
        sed "s/\"step_id\": \"0\"/\"step_id\": \"$f\"/" \
            $REC/collector-slurm-v2.json >step-$f.json || return 1
    done &&
    (unset COLUMNS; $B/analysis/tracer-report --allow-unsigned \
        step-batch.json step-0.json step-1.json >three.out 2>three.err) &&
    test_must_be_empty three.err &&
    test "$(grep -c "^  Step " three.out)" = 3 &&
    test "$(grep -c "Memory means:" three.out)" = 1 &&
    test "$(grep -c "node-wide" three.out)" = 1 &&
    test "$(widest three.out)" -le 80
'

# The column each "LABEL:" line of a view has its value in, one a line.
value_columns ()
{
    grep "^ *[A-Z][A-Za-z /]*: " "$1" |
        awk "{ i = index(\$0, \":\"); n = match(substr(\$0, i + 1), /[^ ]/);
               print i + n - 1 }" | sort -u
}

test_expect_success 'the labels of a step line up (values at column 20)' '
    grep "^    CPU efficiency: " three.out &&
    grep "^    Elapsed: " three.out &&
    grep "^    [A-Z][A-Za-z /]*: " three.out >labels &&
    value_columns labels >cols &&
    echo 20 >expect &&
    test_cmp expect cols
'

test_expect_success 'the scheduler'"'"'s own processes are not listed as tools' '
    grep -q slurmstepd $REC/collector-slurm-v2.json &&
    grep -q "^    Tools: .*train.py" three.out &&
    ! grep -q slurmstepd three.out
'

# One function says which tools a view shows: the text view, its HTML
# and the listing's tools field leave the same scheduler processes out.
test_expect_success 'every view leaves Slurm'"'"'s slurmstepd-wlm out of the tools' '
    jq ".tools = [{name: \"slurmstepd-wlm\", count: 1, cpu_s: 30,
                   peak_rss_bytes: 9000000}] + .tools" \
        $REC/collector-slurm-v2.json >stepd.json &&
    $B/analysis/tracer-report --allow-unsigned stepd.json >stepd.out &&
    grep -q "^    Tools: .*train.py" stepd.out &&
    ! grep -q slurmstepd stepd.out &&
    $B/analysis/tracer-report --allow-unsigned stepd.json --html >stepd.html &&
    grep -q "train.py" stepd.html &&
    ! grep -q "slurmstepd-wlm" stepd.html &&
    mkdir stepd-store && $B/tests/storeput stepd-store stepd.json &&
    TRACER_CONF= $B/analysis/tracer-report --store=stepd-store -M c1 \
        --allow-unsigned -a -S 2025-01-01 -P -n -o jobid,tools >stepd.list &&
    grep -q "train.py=" stepd.list &&
    ! grep -q slurmstepd stepd.list
'

test_expect_success ROOT,TRACERTEST 'a record file is viewed without a word of a store its reader may not open' '
    mkdir -p priv/store && chmod 700 priv &&
    printf "store:\n  path: %s/priv/store\n" "$PWD" >priv.yaml &&
    chmod 644 priv.yaml step-0.json && chmod o+x . &&
    runuser -u tracertest -- env TRACER_CONF="$PWD/priv.yaml" \
        $B/analysis/tracer-report --allow-unsigned "$PWD/step-0.json" \
        >priv.out 2>priv.err &&
    grep -q "^  Step 0 on n1" priv.out &&
    test_must_be_empty priv.err
'

# A store of recorded fixture records: no cluster is needed for the rule
# on finding nothing, nor for the widths of --recommend.
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
rep ()
{
    TRACER_CONF= "$B/analysis/tracer-report" --store="$PWD/fx" -M vm \
        --allow-unsigned "$@"
}

test_expect_success 'a store of fixture records' '
    mkdir fxrecs &&
    cp "$S"/tests/fixtures/export/*.json fxrecs/ &&
    # one step OOM-killed at 200M while still growing fast: its advice
    # and the reason for it are the longest lines --recommend writes
    jq ".identity.job_id = \"301\" | .identity.job_name = \"grow\"
        | .outcome.state = \"oom\" | .request.mem_bytes = 209715200
        | .request.time_limit_s = 60
        | .summary.memory.peak_bytes = 209715200
        | .series.t_s = [0, 1, 2]
        | .series.metrics.mem_bytes = {max: [0, 80000000, 209715200],
                                       mean: [0, 80000000, 209715200],
                                       min: [0, 80000000, 209715200]}
        | .series.metrics.cpu_cores = {max: [1, 1, 1], mean: [1, 1, 1],
                                       min: [1, 1, 1]}" \
        "$S/tests/fixtures/export/101.batch.n2.json" >fxrecs/301.batch.json &&
    "$B/tests/storeput" fx fxrecs/*.json &&
    rep -a -S 2026-01-01 -P -n -o jobid >fx.jobs &&
    grep -qx 301.batch fx.jobs
'

# One rule, as sacct, squeue and scontrol: a period and filters that
# select nothing are an empty answer (0); a job or run named that has no
# records is an error (1).
test_expect_success 'nothing found: 0 for a selection, 1 for a name' '
    rep -u nobody -S 2026-01-01 >none.list 2>none.err &&
    test_must_be_empty none.err &&
    rep -u nobody -S 2026-01-01 --failures >none.fail &&
    rep -u nobody -S 2026-01-01 --runs >none.runs &&
    rep -u nobody -S 2026-01-01 --recommend >none.rec 2>none.err &&
    test_must_be_empty none.rec &&
    grep -q "no runs to recommend from in this period" none.err &&
    rep -u nobody -S 2026-01-01 --recommend --json >none.rec 2>none.err &&
    test_must_be_empty none.rec &&
    test_expect_code 1 rep -a -j 999 >none.job 2>none.err &&
    grep -q "^tracer-report: job 999: no records in " none.err &&
    test_expect_code 1 rep -a -j 999 --recommend 2>none.err &&
    test_expect_code 1 rep -a -S 2026-01-01 --run=nosuch 2>none.err &&
    grep -q "no run .nosuch." none.err
'

# widest FILE: the width of its widest line
widest ()
{
    awk "{ if (length(\$0) > w) w = length(\$0) } END { print w + 0 }" "$1"
}

test_expect_success '--recommend fits 80 columns; its machine forms are kept' '
    COLUMNS=80 rep -a -S 2026-01-01 --recommend >rec80.out &&
    cat rec80.out &&
    test "$(widest rec80.out)" -le 80 &&
    grep -q "^grow/batch: after OOM: --mem=" rec80.out &&
    COLUMNS=1000 rep -a -S 2026-01-01 --recommend >rec1000.out &&
    test "$(widest rec1000.out)" -gt 80 &&
    grep -q "CORE-H" rec1000.out &&
    # the savings said under the group where the columns do not fit
    ! grep -q "CORE-H" rec80.out &&
    COLUMNS=80 rep -a -S 2026-01-01 --recommend --json >rec80.json &&
    COLUMNS=1000 rep -a -S 2026-01-01 --recommend --json >rec1000.json &&
    test_cmp rec1000.json rec80.json &&
    COLUMNS=80 rep -a -S 2026-01-01 --recommend --output=sbatch >rec80.sb &&
    COLUMNS=1000 rep -a -S 2026-01-01 --recommend --output=sbatch \
        >rec1000.sb &&
    test_cmp rec1000.sb rec80.sb &&
    COLUMNS=80 rep -a -S 2026-01-01 -P >list80.p &&
    COLUMNS=1000 rep -a -S 2026-01-01 -P >list1000.p &&
    test_cmp list1000.p list80.p
'

test_done
