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

# The spool itself full (a small tmpfs over it, filled; tracerd holds its
# spool open, so it restarts to see the mount): the record waits in
# tracerd's memory and state dir (run/tracer/pending), survives a restart,
# and is spooled and delivered once when space returns; forwarding then
# leaves no day or job directory behind.  The retries are capped at 2 s.
SPOOL=$TRACER_CLUSTER_DIR/spool
PENDING=$TRACER_CLUSTER_DIR/run/tracer/pending
TRLOG=$TRACER_CLUSTER_DIR/log/tracerd.log
fill_spool () { dd if=/dev/zero of="$SPOOL/fill" bs=4k 2>/dev/null || :; }
pending () { ls "$PENDING" | grep -q "@$1@.*\.json$"; }

test_expect_success 'spool full: the job succeeds, its record waits in the state dir' '
    tracerd_stop &&
    sed -i "/^spool:/a\\  retry_max: 2" "$TRACER_CONF" &&
    mount -t tmpfs -o size=256k,mode=0700 tracer-spool "$SPOOL" &&
    fill_spool &&
    tracerd_start &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; echo ran" >f1.out 2>f1.err &&
    test "$(cat f1.out)" = ran &&
    job=$(sed -n "s/^JOB=//p" f1.err) && echo $job >full.job &&
    wait_log "$TRLOG" "step [^ ]*/$job/0/[^ ]*: spool write failed: .*No space left on device; the record waits in memory and in .*/pending, will retry" &&
    pending $job &&
    ! spooled $job
'

test_expect_success 'tracerd restarted with the spool still full: the record is kept' '
    tracerd_stop &&
    tracerd_start &&
    wait_log "$TRLOG" "records wait in .*/pending" &&
    pending $(cat full.job) &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>f2.err &&
    job=$(sed -n "s/^JOB=//p" f2.err) && echo $job >>full.job &&
    wait_for "pending $job" 20 &&
    test_expect_code 1 $REPORT -j $(sed -n 1p full.job) >/dev/null 2>&1
'

test_expect_success 'space returns: every record delivered once, nothing left behind' '
    rm "$SPOOL/fill" &&
    for job in $(cat full.job); do
        wait_record $job &&
        test "$(jq "[.[] | select(.identity.step_id == \"0\")] | length" rec.json)" = 1 &&
        ! pending $job || return 1
    done &&
    wait_log "$TRLOG" "spool [^ ]* is writable again; no record waits" &&
    wait_for "test -z \"\$(find \"$SPOOL\" -mindepth 3)\"" 20 &&
    test -z "$(ls "$PENDING" | grep "\.json$")"
'

# The state dir full as well (a 1200 KiB tmpfs over run/tracer/pending,
# filled after tracerd made its 1 MiB reserve there): the reserve is
# given up to save the record, and made again once nothing waits.
test_expect_success 'state dir full too: its reserve makes room for the waiting record' '
    tracerd_stop &&
    mount -t tmpfs -o size=1200k,mode=0700 tracer-pending "$PENDING" &&
    fill_spool &&
    tracerd_start &&
    test "$(stat -c %s "$PENDING/reserve")" = 1048576 &&
    { dd if=/dev/zero of="$PENDING/fill" bs=4k 2>/dev/null || :; } &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>f3.err &&
    job=$(sed -n "s/^JOB=//p" f3.err) && echo $job >full3.job &&
    wait_log "$TRLOG" "state dir [^ ]* full: its reserve is given to records waiting for the spool" &&
    wait_for "pending $job" 20 &&
    test "$(stat -c %s "$PENDING/reserve")" = 0
'

test_expect_success 'both spaces back: the record delivered once, the reserve made again' '
    rm "$SPOOL/fill" "$PENDING/fill" &&
    job=$(cat full3.job) &&
    wait_record $job &&
    test "$(jq "[.[] | select(.identity.step_id == \"0\")] | length" rec.json)" = 1 &&
    wait_for "test \"\$(stat -c %s \"$PENDING/reserve\")\" = 1048576" 20 &&
    ! pending $job &&
    tracerd_stop &&
    umount "$PENDING" &&
    tracerd_start
'

test_expect_success 'past spool.pending_max a record is dropped, counted and shown by tracer-report' '
    tracerd_stop &&
    sed -i "/^spool:/a\\  pending_max: 1" "$TRACER_CONF" &&
    fill_spool &&
    tracerd_start &&
    srun --tracer true &&
    srun --tracer true &&
    wait_log "$TRLOG" "record lost: 1 records already wait for the spool (spool.pending_max)" &&
    n=$(grep -c "record lost: " "$TRLOG") &&
    wait_for "$REPORT -a >/dev/null 2>list.err; grep -q \"node [^ ]*: $n records\\? lost since 20\" list.err" 30
'

test_expect_success 'a spool file that is no record is kept aside, counted and shown' '
    tracerd_stop &&
    sed -i "/^  pending_max: 1\$/d; /^  retry_max: 2\$/d" "$TRACER_CONF" &&
    umount "$SPOOL" &&
    mkdir -p "$SPOOL/c/jobs/000/7" &&
    echo "not a record" >"$SPOOL/c/jobs/000/7/0.n.json" &&
    tracerd_start &&
    wait_for "test -f \"$SPOOL/c/jobs/000/7/0.n.json.bad\"" 20 &&
    wait_for "$REPORT -a >/dev/null 2>list.err; grep -q \"node [^ ]*: 1 spool file not readable as a record since 20.*kept there as \\*.bad\" list.err" 30 &&
    grep -q "node [^ ]*: [1-9][0-9]* records\\? lost since" list.err
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
    { ! mountpoint -q "$SPOOL" || umount "$SPOOL"; } &&
    { ! mountpoint -q "$PENDING" || umount "$PENDING"; } &&
    cluster_down
'
test_done
