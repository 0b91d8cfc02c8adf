#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='a real Snakemake workflow on a real cluster, resized by tracer

A two-rule Snakemake workflow whose rules ask 2 CPUs, 1G and an hour but
use one core briefly and little memory runs three times on the test
cluster, each rule a Slurm job through "sbatch --tracer" (Snakemake'"'"'s
cluster mode, as Debian'"'"'s Snakemake 7 offers it).  tracer-report
--recommend --output=snakemake writes a profile that this Snakemake
accepts; rerun with it, every job completes with the smaller allocation.
--compare finds no change between two of the runs, and flags the rule
of a run made slow on purpose.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "snakemake (tools/install-deps)" command -v snakemake

# Each rule holds about 30 MB and keeps one core busy for 2 s.
cat >Snakefile <<'EOF'
rule all:
    input: "sorted.txt"

rule count_words:
    output: "counts.txt"
    resources: cpus_per_task=2, mem_mb=1024, runtime=60
    shell: "perl -e 'my $x = \"a\" x (30 * 1048576); my $t = time + 2; 1 while time < $t;' && echo 3 words >{output}"

rule sort_words:
    input: "counts.txt"
    output: "sorted.txt"
    params: busy=config.get("sort_busy", 2)
    resources: cpus_per_task=2, mem_mb=1024, runtime=60
    shell: "perl -e 'my $x = \"a\" x (30 * 1048576); my $t = time + {params.busy}; 1 while time < $t;' && sort {input} >{output}"
EOF

# smk LOG [snakemake options]: run the workflow, every rule a Slurm job
# through sbatch --tracer, and wait for the records of the jobs it
# submitted (their ids in jobs).
smk ()
{
    _log=$1 && shift &&
    snakemake --forceall --jobs 2 --latency-wait 30 "$@" --cluster \
        "sbatch --tracer --parsable -o slurm-%j.out -c {resources.cpus_per_task} --mem={resources.mem_mb} -t {resources.runtime}" \
        >"$_log" 2>&1 || { cat "$_log" >&2; return 1; }
    sed -n "s/.*with external jobid '\([0-9]*\)'.*/\1/p" "$_log" >jobs &&
    test $(wc -l <jobs) = 2 &&
    for _j in $(cat jobs); do
        wait_record "$_j" || return 1
        jq -e ".[] | select(.identity.step_id == \"batch\")
               | .outcome.state == \"completed\"" rec.json || return 1
    done
}

test_expect_success 'start the cluster' '
    cluster_up
'

test_expect_success 'the workflow runs 3 times, each rule a traced Slurm job asking 2 CPUs and 1G' '
    for i in 1 2 3; do
        smk run$i.log || return 1
        cp jobs jobs.run$i &&
        for j in $(cat jobs); do
            wait_record $j &&
            jq -e ".[] | select(.identity.step_id == \"batch\")
                   | .request.cpus_on_node == 2
                     and .request.mem_bytes == 1073741824
                     and (.identity.job_name | test(\"^snakejob[.](count|sort)_words[.]\"))" \
                rec.json || return 1
        done
    done &&
    test -s sorted.txt
'

# Each Snakemake invocation writes its job scripts into a directory of its
# own, .snakemake/tmp.XXXXXXXX, which the controller shows as the job'"'"'s
# Command=: each invocation is one run, without any wrapper.
test_expect_success 'each of the 3 Snakemake invocations is one run of 2 jobs, named after the workflow directory' '
    pipe=$(basename "$PWD" | sed "s/[^A-Za-z0-9._+@-]/_/g") &&
    $REPORT --runs -a -P -o run,pipeline,jobs,failed >runs.out &&
    cat runs.out &&
    grep "^snakemake-" runs.out >smk.runs &&
    test $(wc -l <smk.runs) = 3 &&
    test $(cut -d"|" -f1 smk.runs | sort -u | wc -l) = 3 &&
    test $(grep -c "^snakemake-[0-9a-f]\{8\}|$pipe|2|0\$" smk.runs) = 3 &&
    $REPORT -a -P -X -o jobid,run,process -S now-1hour >steps.out &&
    grep -q "|snakemake-[0-9a-f]\{8\}|count_words\$" steps.out &&
    grep -q "|snakemake-[0-9a-f]\{8\}|sort_words\$" steps.out
'

test_expect_success 'the recommendation is a Snakemake 7 profile for both rules, 1 CPU and at most 512 MB' '
    mkdir -p profile &&
    $REPORT -S now-1hour --recommend --output=snakemake >profile/config.yaml &&
    cat profile/config.yaml &&
    for r in count_words sort_words; do
        grep -qx "  - \"$r:cpus_per_task=1\"" profile/config.yaml &&
        mb=$(sed -n "s/^  - \"$r:mem_mb=\([0-9]*\)\"$/\1/p" profile/config.yaml) &&
        test "$mb" -le 512 &&
        grep -q "^  - \"$r:runtime=[0-9]*\"$" profile/config.yaml || return 1
    done &&
    ! grep -q "left out" profile/config.yaml
'

# Snakemake 7 reads a profile'"'"'s set-resources like its command line
# (RULE:RESOURCE=VALUE); Snakemake 8'"'"'s mapping is not that.
test_expect_success 'this Snakemake takes the profile; the Snakemake 8 form it refuses' '
    snakemake --profile ./profile -n --forceall --cores 1 >dry.out 2>&1 &&
    grep -q "cpus_per_task=1" dry.out &&
    mkdir -p profile8 &&
    $REPORT -S now-1hour --recommend --output=snakemake8 >profile8/config.yaml &&
    grep -q "^  count_words:$" profile8/config.yaml &&
    test_must_fail snakemake --profile ./profile8 -n --forceall --cores 1 \
        >dry8.out 2>&1 &&
    grep -q "Invalid resource definition" dry8.out
'

test_expect_success 'rerun with the profile: every job completes with the smaller allocation' '
    smk rerun.log --profile ./profile &&
    for j in $(cat jobs); do
        wait_record $j &&
        jq -e ".[] | select(.identity.step_id == \"batch\")
               | .outcome.state == \"completed\"
                 and .request.cpus_on_node == 1
                 and .request.mem_bytes <= 536870912" rec.json || return 1
    done &&
    test -s sorted.txt
'

# run_of JOBSFILE: the run of the first job in JOBSFILE.
run_of ()
{
    $REPORT -a -P -n -X -o run -j "$(head -n 1 "$1")"
}

# Two invocations of the same work differ by noise only; one whose
# sort_words keeps the core busy 3 times as long (--config) is flagged
# on that rule and on nothing else.
test_expect_success '--compare: two runs show no change beyond noise, a slowed rule is flagged on that rule' '
    r1=$(run_of jobs.run1) && r2=$(run_of jobs.run2) &&
    expr "$r1" : "snakemake-" && expr "$r2" : "snakemake-" &&
    $REPORT -a --compare=$r1,$r2 >cmp12.out 2>cmp12.err &&
    cat cmp12.out &&
    test_must_be_empty cmp12.err &&
    grep -q "^No change beyond noise" cmp12.out &&
    smk slow.log --config sort_busy=6 &&
    r4=$(run_of jobs) &&
    $REPORT -a --compare=$r1,$r4 -P >cmp14.out &&
    cat cmp14.out &&
    grep -q "^sort_words|B|1|0|.*|elapsed_s+" cmp14.out &&
    grep -q "^count_words|B|1|0|.*|\$" cmp14.out &&
    $REPORT -a --compare=$r1,$r4 >cmp14.txt &&
    grep -q "^  sort_words: elapsed up" cmp14.txt &&
    ! grep -q "^  count_words" cmp14.txt
'

# The job's own text cannot place it in a run: a job name holding a
# newline and a Command= line of another workflow's directory gives
# scontrol a second Command= line, and the path is then unknown.
test_expect_success 'a job name forging a Command= line: no command in the record, in no run' '
    fake="/home/v/.snakemake/tmp.abcdefgh/snakejob.r.1.sh" &&
    id=$(sbatch --parsable -o /dev/null --tracer \
        -J "$(printf "x\n   Command=%s" "$fake")" --wrap true) &&
    wait_record $id &&
    jq -e "all(.[]; (.identity | has(\"command\") | not)
                    and .identity.work_dir == \"$PWD\")" rec.json &&
    $REPORT -a -P -n -o jobidraw,run -j $id >forged.out &&
    cat forged.out &&
    test -s forged.out &&
    ! grep -v "|\$" forged.out
'

# A driver script under tracer-run --pipeline: the jobs it submits with
# plain sbatch get the run from the environment (TRACER_OPTS).  Last, so
# that its jobs are not in the recommendations above.
cat >driver.sh <<'EOF'
#!/bin/sh
echo "$TRACER_RUN_ID" >run-id
# the last with a --tracer option of its own, which TRACER_OPTS does not
# reach: the run comes from TRACER_RUN_ID and TRACER_PIPELINE
for o in "" "" "" --tracer=interval=2; do
    sbatch --parsable -o /dev/null $o --wrap true || exit 1
done >drv-jobs
sbatch --parsable -o /dev/null --array=1-2 --wrap true >drv-array
EOF
chmod +x driver.sh

test_expect_success 'a driver under tracer-run --pipeline: its 4 jobs and 2 array tasks are one run of 6 jobs' '
    "$B/collector/tracer-run" -q --no-sign -o driver.json --pipeline drv \
        -- ./driver.sh &&
    run=$(cat run-id) &&
    expr "$run" : "drv-[0-9]\{8\}-" &&
    test "$(jq -r .tags.run driver.json)" = "$run" &&
    a=$(cat drv-array) &&
    for j in $(cat drv-jobs) ${a}_1 ${a}_2; do
        wait_record $j &&
        jq -e "all(.[]; .tags.run == \"$run\" and .tags.pipeline == \"drv\")" \
            rec.json || return 1
    done &&
    $REPORT --runs -a -P -o run,pipeline,jobs,failed >drv.out &&
    cat drv.out &&
    test $(grep -c "^$run|" drv.out) = 1 &&
    grep -qx "$run|drv|6|0" drv.out &&
    $REPORT --runs -a --json >drv.json &&
    jq -e ".runs[] | select(.run == \"$run\") | .jobs == 6
           and .core_hours.allocated > 0 and .running == false" drv.json &&
    $REPORT --runs -a >drv.txt &&
    cat drv.txt &&
    head -1 drv.txt | grep -q "^Run  *Start  *Elapsed  *Jobs Failed Waste%\$" &&
    grep -q "^$run  *[0-9-]*T[0-9:]*  *[0-9:]*  *6  *0  *[0-9.]*\$" drv.txt &&
    test $(awk "{ if (length(\$0) > 80) print }" drv.txt | wc -l) = 0
'

test_done
