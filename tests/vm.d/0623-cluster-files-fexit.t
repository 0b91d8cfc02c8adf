#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run by t/0800-vm-cgroup-v2.t inside the guest node of tests/vm, whose
# kernel (Debian's 6.1) allows BPF trampolines: t/0615-cluster-files.t
# as deployed there, with sampling.ebpf: auto throughout and the fexit
# programs a must.  A missing input and an EIO read are named in their
# records, with their causes (input-missing, io-error), from the fexit
# programs on a cgroup v2 node.
: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
    echo "1..0 # SKIP not the guest node of tests/vm (no pure cgroup v2)"
    exit 0
fi
TRACER_TEST_EXPECT_FEXIT=1 TRACER_TEST_EBPF=auto
export TRACER_TEST_EXPECT_FEXIT TRACER_TEST_EBPF
exec sh "$SHARNESS_TEST_SRCDIR/t/0615-cluster-files.t" "$@"
