#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='every step of a job, job arrays, and 100 back-to-back steps without leaks'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# records JOB N: wait until job JOB has N step records (in rec.json)
records ()
{
    wait_for "$REPORT -j $1 --json >rec.json 2>/dev/null &&
              test \$(jq length rec.json) -ge $2" "${3:-60}" &&
    test "$(jq length rec.json)" = "$2"
}

# The store's records whose identity matches the jq condition COND.
store_select ()
{
    find "$TRACER_CLUSTER_DIR/store" -name "*.json" -type f \
        -exec jq -c "select($1) | .identity" {} + 2>/dev/null
}

tracerd_pid () { cat "$TRACER_CLUSTER_DIR/run/tracerd.pid"; }
nfds () { ls "/proc/$(tracerd_pid)/fd" | wc -l; }

# MailProg's path goes into slurm.conf, which cannot quote the space in
# the trash directory's name.
MAILDIR=$(mktemp -d /tmp/tracer-mail.XXXXXX) &&
tr_atexit "rm -rf '$MAILDIR'"

test_expect_success 'start a real cluster, opt-in mode, with a MailProg' '
    printf "#!/bin/sh\nenv >\"%s/mail.\$\$.env\"\n" "$MAILDIR" \
        >"$MAILDIR/mailprog" &&
    chmod 755 "$MAILDIR" "$MAILDIR/mailprog" &&
    cluster_up --plugstack-args "enable=optin" \
        --slurm-conf MailProg="$MAILDIR/mailprog"
'

test_expect_success 'the job tracer settings reach MailProg as SPANK_TRACER*' '
    sbatch --tracer=tag=run:m1 --mail-type=END --mail-user=root \
        --parsable --wrap true >m.out &&
    test "$(wait_job $(cat m.out))" = COMPLETED &&
    wait_for "grep -l SLURM_JOB_ID=$(cat m.out) \"$MAILDIR\"/mail.*.env >mail.file" 30 &&
    grep -qx "SPANK_TRACER=on" $(cat mail.file) &&
    grep -qx "SPANK_TRACER_SPEC=tag=run:m1" $(cat mail.file)
'

test_expect_success 'an sbatch job with three srun steps: batch + three step records' '
    sbatch --tracer=tag=pipeline:three --parsable --wrap \
        "srun $BURN cpu=0.3; srun $BURN cpu=0.3; srun $BURN cpu=0.3" >sb.out &&
    job=$(cat sb.out) &&
    test "$(wait_job $job)" = COMPLETED &&
    records $job 4 &&
    jq -r ".[].identity.step_id" rec.json | sort >steps &&
    printf "0\n1\n2\nbatch\n" >expect &&
    test_cmp expect steps &&
    test "$(jq -r "[.[].tags.pipeline] | unique | .[]" rec.json)" = three
'

# The job view of that real four-step job, as a person reads it on a
# pipe: 80 columns, the job's figures (the listing's job row) once above
# its steps, what they share said once, none of Slurm's own processes
# among the tools.
test_expect_success 'the view of a four-step job: 80 columns, one header, no slurmstepd' '
    job=$(cat sb.out) &&
    (unset COLUMNS; $REPORT -j $job >view.out 2>view.err) &&
    test_must_be_empty view.err &&
    test "$(grep -c "^  Step " view.out)" = 4 &&
    test "$(awk "{ if (length(\$0) > w) w = length(\$0) } END { print w }" view.out)" -le 80 &&
    test "$(grep -c "Memory means:" view.out)" = 1 &&
    ! grep "^    Tools:" view.out | grep -q slurmstepd &&
    $REPORT -j $job -P -o jobid,state,cpueff,memeff >row.out &&
    IFS="|" read -r id state cpueff memeff <<-EOF &&
	$(grep "^$job|" row.out)
	EOF
    test "$state" = COMPLETED &&
    test "$(grep -c "^  State: " view.out)" = 1 &&
    grep "^  State: *COMPLETED (exit code 0:0)$" view.out &&
    if test -n "$cpueff"; then
        grep "^  CPU efficiency: $(printf "%.1f%%" "$cpueff") of " view.out
    fi &&
    if test -n "$memeff"; then
        grep "^  Memory: .* ($(printf "%.1f%%" "$memeff"))$" view.out
    fi
'

test_expect_success 'a 5-task job array: five jobs with array ids' '
    sbatch --tracer --parsable --array=1-5 --wrap "$BURN cpu=0.1" >arr.out &&
    arr=$(cut -d";" -f1 arr.out) &&
    wait_for "test \$(store_select \".identity.array_job_id == \\\"$arr\\\"\" | wc -l) -ge 5" 90 &&
    store_select ".identity.array_job_id == \"$arr\"" >ids &&
    test "$(wc -l <ids)" = 5 &&
    jq -r .array_task_id ids | sort -n >tasks &&
    printf "1\n2\n3\n4\n5\n" >expect &&
    test_cmp expect tasks &&
    test "$(jq -r .job_id ids | sort -u | wc -l)" = 5 &&
    test "$(jq -r .step_id ids | sort -u)" = batch
'

test_expect_success '-j of the array shows every task, as sacct does' '
    arr=$(cut -d";" -f1 arr.out) &&
    $REPORT -j "$arr" -P -n -o JobID,State >arr.list &&
    for t in 1 2 3 4 5; do
        printf "%s_%s|COMPLETED\n%s_%s.batch|COMPLETED\n" $arr $t $arr $t
    done | sort >expect &&
    sort arr.list >got &&
    test_cmp expect got &&
    $REPORT -j "$arr" >arr.view &&
    test "$(grep -o "${arr}_[0-9]*" arr.view | sort -u | wc -l)" = 5 &&
    $REPORT -j "${arr}_3" -P -n -o JobID >one.list &&
    printf "%s_3\n%s_3.batch\n" $arr $arr >expect &&
    test_cmp expect one.list
'

test_expect_success 'sbatch --tracer (no SPEC) traces the srun steps inside the job' '
    sbatch --tracer --parsable --wrap "srun $BURN cpu=0.1" >plain.out &&
    job=$(cat plain.out) &&
    test "$(wait_job $job)" = COMPLETED &&
    records $job 2 &&
    ! grep -q "tracer" slurm-$job.out
'

test_expect_success '100 back-to-back steps leave no processes, fds, cgroups or state' '
    fds_before=$(nfds) &&
    sbatch --tracer --parsable --wrap \
        "for i in \$(seq 100); do srun true || exit 1; done" >loop.out &&
    job=$(cat loop.out) &&
    test "$(wait_job $job 300)" = COMPLETED &&
    records $job 101 120 &&
    test "$(jq "[.[] | select(.outcome.state == \"completed\")] | length" rec.json)" = 101 &&
    test "$(nfds)" = "$fds_before" &&
    test -z "$(ls "$TRACER_CLUSTER_DIR/run/tracer/steps")" &&
    test -z "$(ls "$TRACER_CLUSTER_DIR/run/tracer/live" 2>/dev/null)" &&
    ! pgrep -f "slurmstepd: \[$job\\." >/dev/null &&
    test -z "$(find /sys/fs/cgroup/memory/slurm_$TRACER_NODENAME /sys/fs/cgroup/cpu,cpuacct/slurm_$TRACER_NODENAME \
        -type d -name "job_$job" 2>/dev/null)"
'

test_expect_success 'stop the cluster' '
    cluster_down
'
test_done
