# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shell functions the bench/run-* scripts share; sourced, not run.

# v1_mount CONTROLLER: where its v1 hierarchy is mounted, from mountinfo
# (cpuacct may be mounted with cpu); nothing when it is not
v1_mount ()
{
    awk -v c="$1" '{
        for (i = 7; $i != "-"; i++) ;
        if ($(i + 1) != "cgroup") next
        n = split($(i + 3), o, ",")
        for (k = 1; k <= n; k++) if (o[k] == c) { print $5; exit }
    }' /proc/self/mountinfo
}
