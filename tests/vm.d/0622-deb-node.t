#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='a node installed from the packages keeps its kernel evidence

Run by t/0800-vm-cgroup-v2.t inside the guest node of tests/vm while the
tracer and slurm-tracer-plugin packages are installed on the host
(tools/test-all installs them; the guest runs on the host'"'"'s root).
tracerd is started as a site starts it, "systemctl enable --now
tracerd", from the packaged unit with every sandboxing setting it has,
reading /etc/tracer/tracer.yaml (pointed at the test cluster'"'"'s store
and socket).  The cluster loads the packaged plugin from Slurm'"'"'s
PluginDir.  A tool that segfaults and a process the kernel OOM-kills
both carry the kernel'"'"'s own lines in their records.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

UNIT=/lib/systemd/system/tracerd.service
REPORT=/usr/bin/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "systemd as PID 1 (tests/vm)" \
    test "$(cat /proc/1/comm)" = systemd
# packaged PKG...: every PKG is installed
packaged ()
{
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" | grep -q " installed$" || return 1
    done
}
require_or_skip "the tracer packages installed (tools/test-all)" \
    packaged tracer slurm-tracer-plugin
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

# The unit has PrivateTmp=yes: everything the service reads or writes
# (the cluster's store, socket and munge socket) must lie outside /tmp,
# short aliases included.
case $SHARNESS_TRASH_DIRECTORY in
/tmp/* | /var/tmp/*)
    skip_all="the test directory is under /tmp, which the unit hides"
    test_done ;;
esac
TRACER_CLUSTER_ALIAS_BASE=/srv
export TRACER_CLUSTER_ALIAS_BASE

# A real segfault (not a signal sent by kill, which the kernel does not
# log): perl reads a C string at address 8.
SEGV='perl -e "my \$x = unpack(q(p), pack(q(Q), 8))"'

SBATCH_MEM_PER_NODE=200 SLURM_MEM_PER_NODE=200
export SBATCH_MEM_PER_NODE SLURM_MEM_PER_NODE

test_expect_success 'the cluster with the packaged plugin, tracerd from its unit' '
    cluster_up --plugin tracer.so --no-tracerd &&
    ! grep -Eq "^(root|alias_dir)=/tmp/" "$TRACER_CLUSTER_DIR/cluster.info" &&
    cp "$TRACER_CLUSTER_DIR/etc/tracer.yaml" /etc/tracer/tracer.yaml &&
    systemctl enable --now tracerd &&
    tr_atexit "systemctl disable --now tracerd" &&
    wait_for "test -S \"$TRACER_CLUSTER_ROOT/run/tracerd.sock\"" 30 &&
    test "$(systemctl show -p FragmentPath --value tracerd)" = $UNIT &&
    pid=$(systemctl show -p MainPID --value tracerd) &&
    test "$(readlink /proc/$pid/exe)" = /usr/sbin/tracerd &&
    grep -q "^ProtectSystem=full" $UNIT
'

test_expect_success 'the unit'"'"'s tracerd reads the kernel log' '
    wait_for "grep -q \"reading kernel evidence from /dev/kmsg\" \
        \"$TRACER_CLUSTER_DIR/log/tracerd.log\"" 30 &&
    ! grep -E "kmsg unavailable|lost to the service" \
        "$TRACER_CLUSTER_DIR/log/tracerd.log"
'

test_expect_success 'a segfaulting tool: the kernel line is in the record' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; $SEGV; exit 0" 2>s.err &&
    job=$(sed -n "s/^JOB=//p" s.err) &&
    wait_record $job &&
    jq ".[0].events" rec.json &&
    jq -e "[.[0].events[] | select(.kind == \"segfault\" and
        .scope == \"step\" and .tool == \"perl\")] | length == 1" rec.json &&
    $REPORT -j $job >s.view &&
    cat s.view &&
    grep -qi "segfault" s.view
'

test_expect_success 'an OOM kill: the kernel names the victim in the record' '
    test_must_fail srun --tracer --mem=100M sh -c \
        "echo JOB=\$SLURM_JOB_ID >&2; perl -e \"\\\$x = q(a) x (400 * 1024 * 1024); sleep 5\" &
         v=\$!; echo VICTIM=\$v >&2; wait \$v" 2>oom.err &&
    job=$(sed -n "s/^JOB=//p" oom.err) &&
    victim=$(sed -n "s/^VICTIM=//p" oom.err) &&
    wait_record $job &&
    jq ".[0].events" rec.json &&
    jq -e "[.[0].events[] | select(.kind == \"oom-kill\" and
        .pid == $victim)] | length == 1" rec.json &&
    $REPORT -j $job >oom.view &&
    cat oom.view &&
    grep -q "OUT_OF_MEMORY" oom.view
'

test_expect_success 'stop the unit and the cluster' '
    systemctl disable --now tracerd &&
    ! systemctl is-active -q tracerd &&
    cluster_down
'

test_done
