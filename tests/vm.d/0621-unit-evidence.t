#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='tracerd under systemd with its unit'"'"'s sandbox keeps every source

Run by t/0800-vm-cgroup-v2.t inside the guest node of tests/vm (systemd as
PID 1).  tracerd --check-config runs as a transient service with every
sandboxing property of the built etc/tracerd.service, and lists the same
evidence sources as available as it does started by hand; with
ProtectKernelLogs=yes added, the kernel log is reported lost to the
service'"'"'s sandbox, as a warning.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
UNIT=$B/etc/tracerd.service

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "systemd as PID 1 (tests/vm)" \
    test "$(cat /proc/1/comm)" = systemd
require_or_skip "the built unit (make)" test -f "$UNIT"

# The unit has PrivateTmp=yes: what the service runs and reads lives
# outside /tmp (the build tree may be there), in the guest'"'"'s overlay.
W=/srv/tracer-0621
test_expect_success 'a configuration and tracerd outside /tmp' '
    rm -rf $W && mkdir -p $W/store $W/spool &&
    cp "$B/collector/tracerd" $W/tracerd &&
    cat >$W/tracer.yaml <<-EOF &&
	store:
	  path: $W/store
	spool:
	  path: $W/spool
	EOF
    $W/tracerd --check-config -c $W/tracer.yaml >byhand.out &&
    cat byhand.out &&
    grep "^evidence: kernel log /dev/kmsg: available" byhand.out
'

# The unit's [Service] settings that shape the sandbox, as -p options.
unit_props ()
{
    sed -n "/^\[Service\]/,/^\[/p" "$UNIT" |
    grep -E "^(NoNewPrivileges|Protect[A-Za-z]*|Private[A-Za-z]*|Restrict[A-Za-z]*|LockPersonality|SystemCallArchitectures|SystemCallFilter|CapabilityBoundingSet|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths)=" |
    sed "s/^/-p /"
}

test_expect_success 'the unit keeps /dev/kmsg' '
    grep -q "^ProtectKernelLogs=no" "$UNIT" &&
    test -n "$(unit_props)"
'

test_expect_success 'as the unit runs it, every source tracerd has by hand is there' '
    systemd-run --quiet --wait --pipe --collect $(unit_props) \
        $W/tracerd --check-config -c $W/tracer.yaml >unit.out &&
    cat unit.out &&
    ! grep "sandbox" unit.out &&
    grep "^evidence: .*: available" byhand.out | sort >want &&
    grep "^evidence: .*: available" unit.out | sort >got &&
    test_cmp want got
'

test_expect_success 'with ProtectKernelLogs=yes the kernel log is lost, as a warning' '
    systemd-run --quiet --wait --pipe --collect $(unit_props) \
        -p ProtectKernelLogs=yes \
        $W/tracerd --check-config -c $W/tracer.yaml >hidden.out &&
    cat hidden.out &&
    grep "^evidence: kernel log /dev/kmsg: WARNING: lost to the service'"'"'s sandbox" hidden.out
'

test_done
