#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='jobs run normally when tracer is broken, and the logs say why'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

test_expect_success 'start a real cluster in cluster-wide mode' '
    cluster_up --plugstack-args "enable=all"
'

test_expect_success 'cluster-wide mode traces a job that did not ask' '
    srun sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>a.err &&
    wait_record $(sed -n "s/^JOB=//p" a.err)
'

test_expect_success '--tracer=off opts out where allowed' '
    srun --tracer=off sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>o.err &&
    job=$(sed -n "s/^JOB=//p" o.err) &&
    sleep 3 &&
    test_expect_code 1 $REPORT -j $job 2>/dev/null
'

test_expect_success 'an invalid --tracer spec stops srun before submission' '
    before=$(squeue -h | wc -l) &&
    test_must_fail srun --tracer="bogus;rm -rf /" true 2>err &&
    grep -q "tracer: --tracer: unknown item .bogus;rm -rf /." err &&
    test "$(squeue -h | wc -l)" = "$before"
'

test_expect_success 'tracerd stopped: the job succeeds and slurmd logs why' '
    tracerd_stop &&
    srun --tracer sh -c "echo ran" >out &&
    test "$(cat out)" = ran &&
    wait_log "$TRACER_CLUSTER_DIR/log/slurmd.log" "tracer: step_start: connect .*tracerd.sock.*; the job runs untraced"
'

test_expect_success 'a batch job succeeds with tracerd stopped (no node drain)' '
    sbatch --tracer --parsable --wait --wrap true >sb.out &&
    test "$(sinfo -h -o %t)" = idle
'

# Has job $1 a record waiting in the spool?
spooled () { find "$TRACER_CLUSTER_DIR/spool" -name "*.json" -path "*/$1/*" | grep -q .; }

test_expect_success 'store full: jobs succeed, the record waits in the spool' '
    tracerd_start &&
    mount -t tmpfs -o size=256k tracer-full "$TRACER_CLUSTER_DIR/store" &&
    { dd if=/dev/zero of="$TRACER_CLUSTER_DIR/store/fill" bs=4k 2>/dev/null || :; } &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>s.err &&
    job=$(sed -n "s/^JOB=//p" s.err) &&
    echo $job >spooled.job &&
    wait_log "$TRACER_CLUSTER_DIR/log/tracerd.log" "No space left on device.*will retry" &&
    spooled $job
'

test_expect_success 'store read-only: still nothing lost' '
    mount -o remount,ro "$TRACER_CLUSTER_DIR/store" &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>r.err &&
    job=$(sed -n "s/^JOB=//p" r.err) &&
    echo $job >>spooled.job &&
    sleep 2 &&
    spooled $job
'

# A node that reboots with records in its spool: tracerd stops and
# starts again (the spool is on local disk and survives); the records
# are still there and are delivered once the store returns.
test_expect_success 'node restart with records in the spool: they stay queued' '
    tracerd_stop &&
    tracerd_start &&
    for job in $(cat spooled.job); do
        spooled $job || return 1
    done
'

test_expect_success 'when the store returns, spooled records are delivered, once' '
    umount "$TRACER_CLUSTER_DIR/store" &&
    for job in $(cat spooled.job); do
        wait_record $job &&
        test "$(jq length rec.json)" = 1 &&
        ! spooled $job ||
        return 1
    done
'

# A store that hangs: a frozen filesystem (fsfreeze) holds every writer
# in the kernel, where no timeout reaches, as a hard NFS mount whose
# server is gone does.  While it is frozen the test itself must not write
# to it (tracer-report may write the index): it looks at the spool only.
STORE=$TRACER_CLUSTER_DIR/store
thaw () { fsfreeze -u "$STORE" 2>/dev/null || :; }

test_expect_success 'store hanging: jobs run, tracerd answers and samples, records wait' '
    test_when_finished thaw &&
    truncate -s 64M store.img && mkfs.ext4 -q -F store.img &&
    mount -o loop store.img "$STORE" &&
    fsfreeze -f "$STORE" &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; sleep 1" 2>h1.err &&
    j1=$(sed -n "s/^JOB=//p" h1.err) && echo $j1 >hung.job &&
    wait_for "spooled $j1" 30 &&
    wait_for "grep -q \"store [^ ]*: forwarding has not finished in [0-9]* s (the store hangs?); records stay in the spool, sampling goes on\" \"$TRACER_CLUSTER_DIR/log/tracerd.log\"" 30 &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; sleep 4; echo ran" >h2.out 2>h2.err &&
    test "$(cat h2.out)" = ran &&
    j2=$(sed -n "s/^JOB=//p" h2.err) && echo $j2 >>hung.job &&
    wait_for "spooled $j2" 30 &&
    grep -q "step [^ ]*/$j2/0/[^ ]*: record written" "$TRACER_CLUSTER_DIR/log/tracerd.log" &&
    timeout 10 "$B/tests/notify" "$TRACER_SOCKET" "{\"op\":\"ping\"}" >ping.out &&
    grep -q "\"ok\": *true" ping.out &&
    spooled $j1 &&
    ! grep -q "answered again" "$TRACER_CLUSTER_DIR/log/tracerd.log"
'

test_expect_success 'the store thawed: both records delivered once, sampled throughout' '
    thaw &&
    for job in $(cat hung.job); do
        wait_record $job &&
        test "$(jq length rec.json)" = 1 &&
        ! spooled $job || return 1
    done &&
    test "$(jq ".[0].summary.samples" rec.json)" -ge 3 &&
    test "$(jq ".[0].outcome.complete" rec.json)" = true &&
    grep -q "store [^ ]* answered again after [0-9]* s" "$TRACER_CLUSTER_DIR/log/tracerd.log" &&
    umount "$STORE"
'

test_expect_success 'tracerd killed mid-step: the job completes normally' '
    srun --tracer sh -c "sleep 3; echo done" >k.out &
    srun_pid=$! &&
    sleep 1.5 &&
    tracerd_kill &&
    wait $srun_pid &&
    test "$(cat k.out)" = done
'

test_expect_success 'a bad plugstack argument disables the plugin, jobs still run' '
    tracerd_start &&
    cp "$TRACER_CLUSTER_DIR/etc/plugstack.conf" plugstack.good &&
    sed "s/enable=all/enable=sometimes/" plugstack.good >"$TRACER_CLUSTER_DIR/etc/plugstack.conf" &&
    srun sh -c "echo ok" >p.out &&
    test "$(cat p.out)" = ok &&
    wait_log "$TRACER_CLUSTER_DIR/log/slurmd.log" "tracer: plugstack.conf: argument .enable=sometimes.: invalid value; tracer is disabled" &&
    cp plugstack.good "$TRACER_CLUSTER_DIR/etc/plugstack.conf"
'

test_expect_success 'stop the cluster' '
    { ! mountpoint -q "$TRACER_CLUSTER_DIR/store" || umount "$TRACER_CLUSTER_DIR/store"; } &&
    cluster_down
'
test_done
