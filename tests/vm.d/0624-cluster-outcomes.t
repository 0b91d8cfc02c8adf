#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run by t/0800-vm-cgroup-v2.t inside the guest node of tests/vm:
# t/0609-cluster-outcomes.t on a cgroup v2 node under systemd, Slurm's
# cgroup/v2 plugin: batch, extern and srun steps, and one failure of each
# class the scheduler and the processes decide (cancelled, timeout,
# tool-crash, tool-error), with their causes in every view.  (oom is
# 0620's, input-missing and io-error 0623's.)
: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
    echo "1..0 # SKIP not the guest node of tests/vm (no pure cgroup v2)"
    exit 0
fi
exec sh "$SHARNESS_TEST_SRCDIR/t/0609-cluster-outcomes.t" "$@"
