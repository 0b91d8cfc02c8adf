#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='a real Snakemake workflow on a real cluster, resized by tracer

A Snakemake workflow of three rules and 12 jobs runs on the test cluster,
each job a Slurm job through "sbatch --tracer" (Snakemake'"'"'s cluster
mode, as Debian'"'"'s Snakemake 7 offers it): two rules ask 2 CPUs, 1G
and an hour but use one core briefly and little memory, the third checks
10 samples and fails on one.  Run twice alone and once under
tracer-run --pipeline, each run is listed once with its counts and the
run view names the failed task and its cause.  tracer-report
--recommend --output=snakemake writes a profile that this Snakemake
accepts; rerun with it, every job completes with the smaller allocation.
--compare finds no change between two of the runs, and flags the rule
of a run made slow on purpose.  A driver script of 50 sbatch jobs
(arrays among them) is one run of 50 jobs, and jobs shaped as
Nextflow'"'"'s Slurm executor submits them are one run by process.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "snakemake (tools/install-deps)" command -v snakemake

# count_words and sort_words hold about 30 MB and keep one core busy for
# 2 s; check runs once per sample (wildcards) and fails on sample s3.
cat >Snakefile <<'EOF'
SAMPLES = ["s%d" % i for i in range(1, 11)]

rule all:
    input: "sorted.txt", expand("checked/{s}.txt", s=SAMPLES)

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

rule check:
    output: "checked/{s}.txt"
    resources: cpus_per_task=1, mem_mb=100, runtime=10
    shell: "if test {wildcards.s} = s3; then echo sample {wildcards.s}: truncated input >&2; exit 1; fi; echo ok >{output}"
EOF

# Snakemake 7 looks at its cluster jobs every 10 s, every second where
# CI=true (executors/__init__.py, sleep()): set for snakemake only.
#
# smk LOG NJOBS [snakemake options and targets]: run the workflow, every
# rule a Slurm job through sbatch --tracer, and wait for the records of
# the NJOBS jobs it submitted (their ids in jobs); snakemake's exit
# status, or 100 for another number of jobs or a record missing.
smk ()
{
    _log=$1 && _n=$2 && shift 2 &&
    _rc=0 &&
    { CI=true snakemake --forceall --jobs 12 --latency-wait 30 "$@" --cluster \
        "sbatch --tracer --parsable -o slurm-%j.out -c {resources.cpus_per_task} --mem={resources.mem_mb} -t {resources.runtime}" \
        >"$_log" 2>&1 || _rc=$?; } &&
    sed -n "s/.*with external jobid '\([0-9]*\)'.*/\1/p" "$_log" >jobs &&
    test $(wc -l <jobs) = $_n || { cat "$_log" >&2; return 100; }
    for _j in $(cat jobs); do
        wait_record "$_j" || return 100
    done &&
    return $_rc
}

# smk_all LOG: the whole workflow, 12 jobs, 1 failing (s3): snakemake
# runs the others (--keep-going) and exits 1
smk_all ()
{
    _rc=0 && smk "$1" 12 --keep-going || _rc=$? &&
    test $_rc = 1 || { cat "$1" >&2; return 1; }
}

test_expect_success 'start the cluster' '
    cluster_up
'

test_expect_success 'the workflow runs twice, each rule a traced Slurm job; check fails on s3 only' '
    for i in 1 2; do
        smk_all run$i.log || return 1
        cp jobs jobs.run$i &&
        for j in $(cat jobs); do
            wait_record $j &&
            if jq -e ".[] | select(.identity.step_id == \"batch\")
                   | .identity.job_name | test(\"^snakejob[.]check[.]\")" \
                rec.json >/dev/null; then
                jq -e ".[] | select(.identity.step_id == \"batch\")
                       | .request.cpus_on_node == 1
                         and .request.mem_bytes == 104857600" rec.json
            else
                jq -e ".[] | select(.identity.step_id == \"batch\")
                       | .request.cpus_on_node == 2
                         and .request.mem_bytes == 1073741824
                         and .outcome.state == \"completed\"
                         and (.identity.job_name
                              | test(\"^snakejob[.](count|sort)_words[.]\"))" \
                    rec.json
            fi || return 1
        done &&
        grep -q "^Error executing rule check on cluster" run$i.log &&
        test $(grep -c "^Error executing rule" run$i.log) = 1 || return 1
    done &&
    test -s sorted.txt &&
    test -s checked/s2.txt &&
    ! test -e checked/s3.txt
'

# The same workflow under tracer-run --pipeline: the jobs, submitted with
# a --tracer option of their own, take the run from TRACER_RUN_ID; the
# driver'"'"'s record goes into the store (--store), signed, a job of
# the run.
test_expect_success 'the workflow under tracer-run --pipeline wf: the driver and its 12 jobs are run wf-...' '
    _rc=0 &&
    CI=true "$B/collector/tracer-run" -q --store --pipeline wf \
        -- snakemake --forceall --jobs 12 --latency-wait 30 --keep-going \
        --cluster "sbatch --tracer --parsable -o slurm-%j.out -c {resources.cpus_per_task} --mem={resources.mem_mb} -t {resources.runtime}" \
        >run3.log 2>&1 || _rc=$? &&
    test $_rc = 1 &&
    sed -n "s/.*with external jobid '"'"'\([0-9]*\)'"'"'.*/\1/p" run3.log >jobs.run3 &&
    test $(wc -l <jobs.run3) = 12 &&
    for j in $(cat jobs.run3); do
        wait_record $j &&
        jq -e "all(.[]; .tags.pipeline == \"wf\"
                        and (.tags.run | test(\"^wf-[0-9]{8}-\")))" \
            rec.json || return 1
    done &&
    jq -r ".[0].tags.run" rec.json >wf-run &&
    $REPORT -a -P -n -o jobidraw,jobname,state,run,pipeline \
        --tag run=$(cat wf-run) >wf-steps.out &&
    cat wf-steps.out &&
    grep -q "^run[.][0-9.]*||FAILED|$(cat wf-run)|wf\$" wf-steps.out
'

# Each Snakemake invocation writes its job scripts into a directory of its
# own, .snakemake/tmp.XXXXXXXX, which the controller shows as the job'"'"'s
# Command=: each invocation is one run, without any wrapper.  Under
# tracer-run the run is the wrapper'"'"'s, with the same 12 jobs and 1
# failed: the driver (which failed, as snakemake exits 1 when a job
# failed) spans the run but is no job of it.
test_expect_success 'each of the 3 Snakemake invocations is one run: 12 jobs, 1 failed, the wrapped one too' '
    pipe=$(basename "$PWD" | sed "s/[^A-Za-z0-9._+@-]/_/g") &&
    $REPORT --runs -a -P -o run,pipeline,jobs,failed >runs.out &&
    cat runs.out &&
    grep "^snakemake-" runs.out >smk.runs &&
    test $(wc -l <smk.runs) = 2 &&
    test $(cut -d"|" -f1 smk.runs | sort -u | wc -l) = 2 &&
    test $(grep -c "^snakemake-[0-9a-f]\{8\}|$pipe|12|1\$" smk.runs) = 2 &&
    test $(grep -c "^$(cat wf-run)|" runs.out) = 1 &&
    grep -qx "$(cat wf-run)|wf|12|1" runs.out &&
    $REPORT --runs -a --json >runs.json &&
    jq -e --arg r "$(cat wf-run)" ".runs[] | select(.run == \$r)
        | .driver.state == \"FAILED\" and .jobs == 12" runs.json &&
    test $(wc -l <runs.out) = 4 &&
    $REPORT -a -P -X -o jobid,run,process -S now-1hour >steps.out &&
    for r in count_words sort_words check; do
        grep -q "|snakemake-[0-9a-f]\{8\}|$r\$" steps.out &&
        grep -q "|wf-[0-9-]*-[0-9a-f]*|$r\$" steps.out || return 1
    done
'

# The failed task: Snakemake'"'"'s log names its Snakemake job number (the
# N of snakejob.check.N.sh), its wildcards and its Slurm job id; the run
# view names the same job, rule, job name and cause.
for i in 1 3; do
    test_expect_success "the run view of run $i names the failed check on s3 and its cause; tasks per rule" '
        log=run'$i'.log &&
        line=$(grep "^Error executing rule check on cluster" $log) &&
        n=$(echo "$line" | sed -n "s/.*(jobid: \([0-9]*\), external: \([0-9]*\),.*/\1/p") &&
        j=$(echo "$line" | sed -n "s/.*(jobid: \([0-9]*\), external: \([0-9]*\),.*/\2/p") &&
        test -n "$n" && test -n "$j" &&
        grep -A8 "^rule check:\$" $log | grep -A3 "^    jobid: $n\$" |
            grep -q "^    wildcards: s=s3\$" &&
        grep -q "sample s3: truncated input" slurm-$j.out &&
        r=$($REPORT -a -P -n -X -o run -j $j) &&
        $REPORT -a --run=$r >view'$i'.txt &&
        cat view'$i'.txt &&
        grep -q "^Jobs: 12 (steps: [0-9]*), failed: 1\$" view'$i'.txt &&
        grep -qx "check: 10 tasks, 1 failed: FAILED (exit 1) x1" view'$i'.txt &&
        grep -qx "count_words: 1 task, 0 failed" view'$i'.txt &&
        grep -qx "sort_words: 1 task, 0 failed" view'$i'.txt &&
        sed -n "/^Failed tasks:\$/,\$p" view'$i'.txt >failed'$i'.txt &&
        grep -q "^  $j (check) snakejob[.]check[.]$n[.]sh: FAILED (exit 1) on " \
            failed'$i'.txt &&
        $REPORT -a --run=$r --json >view'$i'.json &&
        jq -e --arg j $j --arg n "snakejob.check.$n.sh" "
            ([.tasks[] | select(.outcome)] | length) == (if \"'$i'\" == \"3\" then 2 else 1 end)
            and (.tasks[] | select(.job_id == \$j)
                 | .process == \"check\" and .job_name == \$n
                   and .outcome == \"FAILED (exit 1)\" and .state == \"FAILED\"
                   and .cause == \"tool-error\")
            and ([.processes[] | select(.process == \"check\")][0]
                 | .tasks == 10 and .failed == 1
                   and .causes == {\"FAILED (exit 1)\": 1})
            and ([.processes[] | select(.process == \"count_words\"
                                        or .process == \"sort_words\")
                  | .tasks] == [1, 1])" view'$i'.json
    '
done

test_expect_success 'the driver under tracer-run is the task of process driver in its run, failed (exit 1)' '
    $REPORT -a --run=$(cat wf-run) >view-wf.txt &&
    grep -qx "driver: 1 task, 1 failed: FAILED (exit 1) x1" view-wf.txt &&
    grep -q "^  run[.][0-9.]* (driver) no name: FAILED (exit 1) on " \
        view-wf.txt
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
    smk rerun.log 2 --profile ./profile sorted.txt &&
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
    smk slow.log 2 sorted.txt --config sort_busy=6 &&
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
# that its jobs are not in the recommendations above.  50 jobs as --runs
# counts them (each array task a job, as sacct lists them): 40 plain
# jobs and 2 arrays of 5 tasks, 40 + 2 x 5 = 50.
cat >driver.sh <<'EOF'
#!/bin/sh
echo "$TRACER_RUN_ID" >run-id
# the last with a --tracer option of its own, which TRACER_OPTS does not
# reach: the run comes from TRACER_RUN_ID and TRACER_PIPELINE
i=1
while test $i -le 40; do
    o=
    test $i = 40 && o=--tracer=interval=2
    sbatch --parsable -o /dev/null $o --wrap true || exit 1
    i=$((i + 1))
done >drv-jobs
for a in 1 2; do
    sbatch --parsable -o /dev/null --array=1-5 --wrap true || exit 1
done >drv-arrays
EOF
chmod +x driver.sh

# wait_runs PATTERN: wait (up to 2 minutes) until a line of
# "--runs -a -P -n -o run,pipeline,jobs,failed" matches PATTERN (grep -x)
wait_runs ()
{
    _i=0
    while [ $_i -lt 120 ]; do
        $REPORT --runs -a -P -n -o run,pipeline,jobs,failed >runs.now &&
            grep -qx "$1" runs.now && return 0
        sleep 1
        _i=$((_i + 1))
    done
    cat runs.now >&2
    return 1
}

test_expect_success 'a driver under tracer-run --pipeline: its 40 jobs and 2 arrays of 5 are one run of 50 jobs' '
    "$B/collector/tracer-run" -q --no-sign -o driver.json --pipeline drv \
        -- ./driver.sh &&
    run=$(cat run-id) &&
    expr "$run" : "drv-[0-9]\{8\}-" &&
    test "$(jq -r .tags.run driver.json)" = "$run" &&
    test "$(jq -r .tags.pipeline driver.json)" = drv &&
    test $(wc -l <drv-jobs) = 40 &&
    test $(wc -l <drv-arrays) = 2 &&
    wait_runs "$run|drv|50|0" &&
    $REPORT --runs -a -P -o run,pipeline,jobs,failed >drv.out &&
    cat drv.out &&
    test $(grep -c "^$run|" drv.out) = 1 &&
    grep -qx "$run|drv|50|0" drv.out &&
    for j in $(tail -n 1 drv-jobs) $(sed -n "s/\$/_5/p" drv-arrays); do
        $REPORT -a -P -n -X -o run,pipeline -j $j >drv-one.out &&
        grep -qx "$run|drv" drv-one.out || return 1
    done &&
    $REPORT --runs -a --json >drv.json &&
    jq -e ".runs[] | select(.run == \"$run\") | .jobs == 50 and .failed_jobs == 0
           and .core_hours.allocated > 0 and .running == false" drv.json &&
    $REPORT --runs -a >drv.txt &&
    cat drv.txt &&
    head -1 drv.txt | grep -q "^Run  *Start  *Elapsed  *Jobs Failed Waste%\$" &&
    grep -q "^$run  *[0-9-]*T[0-9:]*  *[0-9:]*  *50  *0  *[0-9.]*\$" drv.txt &&
    test $(awk "{ if (length(\$0) > 80) print }" drv.txt | wc -l) = 0
'

# Jobs as Nextflow'"'"'s Slurm executor submits them (nextflow-io/nextflow,
# executor/SlurmExecutor.groovy and AbstractGridExecutor.groovy): each
# task in its work directory WORK/xx/<30 hex digits>, the job script
# .command.run with its options as #SBATCH lines (-J, -o .command.log,
# --no-requeue, --signal; clusterOptions "--tracer" among them),
# submitted as "sbatch .command.run" from that directory.  The job name
# is "nf-" and the task name with " / : @ * ? = tab newline" made "_":
# task NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN (KO REP1) is job
# nf-NFCORE_RNASEQ_RNASEQ_ALIGN_STAR_STAR_ALIGN_(KO_REP1).  Nextflow'"'"'s
# trace names the process NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN, and
# so does tracer: tracerd reads the task'"'"'s name from the "### name:"
# line of the job script the controller keeps, where the job name agrees
# with it (doc/runs.md).
nf_task ()
{
    _h=$(printf "%s" "$1" | md5sum | cut -c1-32) &&
    _d=$PWD/rnaseq/work/$(echo $_h | cut -c1-2)/$(echo $_h | cut -c3-32) &&
    mkdir -p "$_d" &&
    _n=nf-$(printf "%s" "$1" | tr " /:@*?=" "_______") &&
    cat >"$_d/.command.run" <<EOF &&
#!/bin/bash
#SBATCH -J $_n
#SBATCH -o "$_d/.command.log"
#SBATCH --no-requeue
#SBATCH --signal B:USR2@30
#SBATCH --tracer
### ---
### name: '$1'
### ...
echo \$SLURM_JOB_NAME >.command.out
EOF
    (cd "$_d" && sbatch --parsable .command.run) >>nf-jobs
}

test_expect_success 'Nextflow-shaped jobs of a nested-subworkflow pipeline are one run, by process' '
    : >nf-jobs &&
    for s in WT_REP1 WT_REP2 "KO REP1"; do
        nf_task "NFCORE_RNASEQ:RNASEQ:FASTQC ($s)" &&
        nf_task "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN ($s)" &&
        nf_task "NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:BAM_SORT_STATS_SAMTOOLS:SAMTOOLS_SORT ($s)" ||
        return 1
    done &&
    nf_task "NFCORE_RNASEQ:RNASEQ:MULTIQC" &&
    test $(wc -l <nf-jobs) = 10 &&
    wait_runs "nextflow-[0-9a-f]\{8\}|rnaseq|10|0" &&
    $REPORT --runs -a -P -n -o run,pipeline,jobs,failed >nf-runs.out &&
    test $(grep -c "^nextflow-" nf-runs.out) = 1 &&
    r=$(grep "^nextflow-" nf-runs.out | cut -d"|" -f1) &&
    j=$(sed -n 8p nf-jobs) &&
    wait_record $j &&
    jq -e ".[] | select(.identity.step_id == \"batch\") | .identity
           | .job_name == \"nf-NFCORE_RNASEQ_RNASEQ_ALIGN_STAR_STAR_ALIGN_(KO_REP1)\"
             and (.work_dir | startswith(\"$PWD/rnaseq/work/\"))
             and (.work_dir | test(\"/work/[0-9a-f]{2}/[0-9a-f]{30}\$\"))
             and .task_name == \"NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN (KO REP1)\"" \
        rec.json &&
    $REPORT -a --run=$r --json >nf-view.json &&
    jq -e "([.processes[] | [.process, .tasks, .failed]] | sort) == [
        [\"NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:BAM_SORT_STATS_SAMTOOLS:SAMTOOLS_SORT\", 3, 0],
        [\"NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN\", 3, 0],
        [\"NFCORE_RNASEQ:RNASEQ:FASTQC\", 3, 0],
        [\"NFCORE_RNASEQ:RNASEQ:MULTIQC\", 1, 0]]
        and .run.pipeline == \"rnaseq\"" nf-view.json &&
    $REPORT -a --run=$r >nf-view.txt &&
    cat nf-view.txt &&
    grep -qx "NFCORE_RNASEQ:RNASEQ:FASTQC: 3 tasks, 0 failed" nf-view.txt
'

# The script names the task only where the job name is Nextflow'"'"'s name
# of that task: a script claiming another name is not believed.
test_expect_success 'a job script whose task name disagrees with its job name: the job name'"'"'s process' '
    _d=$PWD/other/work/ab/0123456789abcdef0123456789abcd &&
    mkdir -p "$_d" &&
    printf "%s\n" "#!/bin/bash" "#SBATCH -J nf-ALIGN_(s1)" "#SBATCH --tracer" \
        "### name: '"'"'EVIL:WORKFLOW:NAME (s1)'"'"'" "true" >"$_d/.command.run" &&
    j=$(cd "$_d" && sbatch --parsable .command.run) &&
    wait_record $j &&
    jq -e "all(.[]; .identity | has(\"task_name\") | not)" rec.json &&
    $REPORT -a -P -n -X -o jobidraw,process -j $j >other.out &&
    grep -qx "$j|ALIGN" other.out
'

test_done
