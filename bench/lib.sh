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

# step_hierarchies: where step cgroups go, as Slurm makes them, into the
# array cg_roots: the v1 memory and cpuacct hierarchies where they are
# mounted, else a pure cgroup v2 node's one hierarchy (a cgroup2 mount at
# /sys/fs/cgroup, not the hybrid /sys/fs/cgroup/unified); empty where
# neither is.  cg_kind says which: v1, v2 or nothing.
step_hierarchies ()
{
    local m a u
    cg_roots=()
    cg_kind=
    m=$(v1_mount memory)
    a=$(v1_mount cpuacct)
    if [ -n "$m" ] && [ -n "$a" ]; then
        cg_roots=("$m" "$a")
        cg_kind=v1
    elif u=$(awk '$9 == "cgroup2" && $5 == "/sys/fs/cgroup" { print $5; exit }' \
                 /proc/self/mountinfo) && [ -n "$u" ]; then
        cg_roots=("$u")
        cg_kind=v2
    fi
}

# step_parent_make DIR...: make each parent of step cgroups; on cgroup v2
# with the cpu, memory and io controllers given to its children, as
# Slurm's cgroup/v2 does for a job's steps
step_parent_make ()
{
    local d c
    for d in "$@"; do
        mkdir "$d" || return 1
        if [ "$cg_kind" = v2 ]; then
            for c in cpu memory io; do
                grep -qw "$c" "$d/cgroup.controllers" &&
                    echo "+$c" >"$d/cgroup.subtree_control"
            done
        fi
    done
    return 0
}

# The node name in the messages below.
bench_host=${HOSTNAME:-$(uname -n)}

# start_tracerd TRACERD CONF SOCKET OUT LOG: a private tracerd in the
# background (its pid in tracerd_pid), with none of the caller's
# descriptors but the standard ones, its output in OUT.  Returns once
# SOCKET is up; 1, with OUT and LOG on stderr, when it did not come up.
start_tracerd ()
{
    rm -f "$3"
    "$1" -c "$2" -f >"$4" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
    tracerd_pid=$!
    for _ in $(seq 100); do
        [ -S "$3" ] && return 0
        kill -0 "$tracerd_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -S "$3" ] && return 0
    cat "$4" "$5" >&2 2>/dev/null || true
    return 1
}

# step_start_msg JOB NAME PID: the step_start message the SPANK plugin
# sends for task 0 (pid PID) of step JOB.0 on this node, run by root;
# step_end_msg JOB: the message that ends it
step_start_msg ()
{
    printf '{"op":"step_start","identity":{"scheduler":"slurm",'
    printf '"job_id":"%s","step_id":"0","node":"%s","uid":0,"gid":0,' \
        "$1" "$bench_host"
    printf '"user":"root","job_name":"%s"},"request":{"nodes":1,' "$2"
    printf '"tasks":1,"tasks_on_node":1,"cpus_per_task":1},"tags":{},'
    printf '"task_id":0,"pid":%s}' "$3"
}

step_end_msg ()
{
    printf '{"op":"step_end","identity":{"scheduler":"slurm",'
    printf '"job_id":"%s","step_id":"0","node":"%s","uid":0}}' \
        "$1" "$bench_host"
}
