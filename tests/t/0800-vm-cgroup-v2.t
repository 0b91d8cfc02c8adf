#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='a cgroup v2 node under systemd: the cluster suite in a guest

tests/vm boots Debian'"'"'s kernel under QEMU with systemd as PID 1 and a
pure cgroup v2 hierarchy, on this machine'"'"'s root, and runs
tests/vm.d/0620-cluster-v2.t there: the real cluster with Slurm'"'"'s
cgroup/v2 plugin, step CPU and peak memory against the workloads'"'"'
getrusage, PSI from the step'"'"'s cgroup, an OOM kill, record modes; and
tests/vm.d/0621-unit-evidence.t: tracerd with its unit'"'"'s sandbox keeps
every evidence source it has when started by hand;
tests/vm.d/0623-cluster-files-fexit.t: the eBPF file evidence as fexit
programs (this kernel allows trampolines) with sampling.ebpf: auto, a
missing input and an EIO read named; and, where
TRACER_TEST_PACKAGES=1 says the Debian packages are installed here
(tools/test-all), tests/vm.d/0622-deb-node.t: tracerd from the packaged
unit, enabled with systemctl, puts the kernel'"'"'s segfault and OOM lines
into the records.
tests/vm itself fails clearly where it cannot run and leaves nothing
running when its guest overruns its time.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

VM=$SHARNESS_TEST_SRCDIR/vm

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "qemu-system-x86_64 (tools/install-deps)" \
    command -v qemu-system-x86_64
require_or_skip "an x86-64 host" test "$(uname -m)" = x86_64

test_expect_success 'without QEMU: a clear error, exit 2' '
    printf "#!/bin/sh\ntrue\n" >noop && chmod +x noop &&
    test_expect_code 2 env QEMU=/nonexistent/qemu "$VM" ./noop 2>err &&
    grep "qemu.*not found" err
'

test_expect_success 'a guest past its time is killed: exit 3, nothing left running' '
    test_expect_code 3 "$VM" --timeout 3 --results late ./noop 2>err &&
    grep "did not finish within 3 s" err &&
    ! pgrep -f "results,mount_tag=results" >/dev/null &&
    ! pgrep -f "path=$PWD/late," >/dev/null
'

# guest: NAME=COUNT for each script the guest runs and its test count
guest="0620-cluster-v2=10 0621-unit-evidence=4 0623-cluster-files-fexit=12
    0624-cluster-outcomes=15"
test "${TRACER_TEST_PACKAGES:-}" != 1 || guest="$guest 0622-deb-node=5"

test_expect_success 'the cluster suite passes on the cgroup v2 guest node' '
    cluster_lock &&
    "$VM" --timeout 1500 --results vmres "$SHARNESS_TEST_SRCDIR/vm.d/run" \
        $(for g in $guest; do echo "${g%=*}.t"; done) >vm.out 2>&1
    rc=$?
    cat vm.out
    for g in $guest; do
        cat "vmres/${g%=*}.out"
    done
    test $rc = 0 &&
    for g in $guest; do
        out=vmres/${g%=*}.out &&
        grep -q "^1\\.\\.${g#*=}$" $out &&
        test "$(grep -c "^ok " $out)" = ${g#*=} &&
        ! grep -q "^not ok" $out &&
        ! grep -qi "^ok .* # skip" $out || return 1
    done
'

test_expect_success 'the guest ran systemd as PID 1 on cgroup2, and powered off' '
    grep -q "systemd" vmres/journal.log &&
    ! pgrep -f "path=$PWD/vmres," >/dev/null
'

test_done
