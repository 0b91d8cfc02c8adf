# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sharness helpers around tests/cluster, the private Slurm cluster: one
# node, or several with "cluster_up --nodes N", each in its own network,
# UTS and mount namespace.  A script calls cluster_up once (root only); the
# cluster lives in "$SHARNESS_TRASH_DIRECTORY/cluster" and is always
# stopped when the script ends, passed, failed or interrupted, unless
# TRACER_CLUSTER_KEEP=1 (then "tests/cluster down DIR" stops it by hand).
# On failure the last lines of every daemon log go to stderr, i.e. into
# the test's .log file.
#
# After cluster_up the environment of DIR/env is exported: SLURM_CONF,
# TRACER_CONF, TRACER_SOCKET, TRACER_MUNGE_SOCKET, TRACER_STORE,
# TRACER_NODENAME, TRACER_CLUSTER_NODES, TRACER_CLUSTER_DIR (logs are in
# $TRACER_CLUSTER_DIR/log).  With several nodes TRACER_CLUSTER_NODES lists
# them (tr<test number>-1 ...), TRACER_NODENAME is the first, and
# TRACER_CONF and TRACER_SOCKET are the first node's tracerd's.

TRACER_CLUSTER=$SHARNESS_TEST_SRCDIR/cluster

_tr_cluster_trap=

_tr_cluster_atexit ()
{
    test -f "$TRACER_CLUSTER_DIR/cluster.info" || return 0
    if test "${TR_EXIT_STATUS:-0}" != 0 || test "${test_failure:-0}" != 0
    then
        echo "# cluster logs ($TRACER_CLUSTER_DIR/log):" >&2
        "$TRACER_CLUSTER" logs "$TRACER_CLUSTER_DIR" 40 >&2
    fi
    if test -n "${TRACER_CLUSTER_KEEP:-}"; then
        echo "# TRACER_CLUSTER_KEEP: cluster left running in" \
             "$TRACER_CLUSTER_DIR" >&2
        return 0
    fi
    "$TRACER_CLUSTER" -q down "$TRACER_CLUSTER_DIR"
}

# cluster_lock: where TRACER_CLUSTER_LOCK names a file (tools/test-all
# runs the suite two tests at a time), wait until no other test holds it,
# and hold it until this script ends: one cluster (or guest node) at a
# time, while the tests without one run beside it.  A process of its own
# holds the lock while this script lives, so that no daemon the script
# starts inherits it.
cluster_lock ()
{
    test -n "${TRACER_CLUSTER_LOCK:-}" || return 0
    test -z "${_tr_cluster_locked:-}" || return 0
    _tr_lock_ready=$SHARNESS_TRASH_DIRECTORY/.cluster-lock-held
    rm -f "$_tr_lock_ready"
    # started from a subshell: not a job of this shell, so that a test's
    # own "wait" never waits for it
    (flock "$TRACER_CLUSTER_LOCK" sh -c '
        : >"$1"
        while kill -0 "$2" 2>/dev/null; do sleep 1; done' \
        sh "$_tr_lock_ready" $$ </dev/null >/dev/null 2>&1 &)
    while ! test -e "$_tr_lock_ready"; do sleep 1; done
    _tr_cluster_locked=t
}

# cluster_up [tests/cluster up options]
# Start the cluster and export its environment.  The default node name is
# tr<test number> (the nodes are tr<test number>-K with --nodes);
# --nodename overrides it.
cluster_up ()
{
    cluster_lock || return 1
    TRACER_CLUSTER_DIR=$SHARNESS_TRASH_DIRECTORY/cluster
    export TRACER_CLUSTER_DIR
    if test -z "$_tr_cluster_trap"; then
        _tr_cluster_trap=t
        tr_atexit _tr_cluster_atexit
    fi
    # Node names must differ between clusters running at the same time
    # (they name the cgroup dirs slurm_<node>): tr<test number>.
    _tr_cluster_node=tr$(printf '%s' "${this_test%%-*}" | tr -cd 'A-Za-z0-9')
    "$TRACER_CLUSTER" up "$TRACER_CLUSTER_DIR" \
        --nodename "$_tr_cluster_node" "$@" >&3 || return 1
    . "$TRACER_CLUSTER_DIR/env"
}

# cluster_down: stop the cluster now (idempotent).
cluster_down ()
{
    "$TRACER_CLUSTER" down "$TRACER_CLUSTER_DIR" >&3
}

cluster_status ()
{
    "$TRACER_CLUSTER" status "$TRACER_CLUSTER_DIR"
}

# cluster_logs [N]: the last N (30) lines of every daemon log, to stdout.
cluster_logs ()
{
    "$TRACER_CLUSTER" logs "$TRACER_CLUSTER_DIR" "${1:-30}"
}

# tracerd_start [NODE] / tracerd_stop [NODE]: (re)start or stop the
# tracerd of NODE (default: of every node); start waits for its socket.
tracerd_start ()
{
    "$TRACER_CLUSTER" tracerd-start "$TRACER_CLUSTER_DIR" ${1+"$1"} >&3
}

tracerd_stop ()
{
    "$TRACER_CLUSTER" tracerd-stop "$TRACER_CLUSTER_DIR" ${1+"$1"} >&3
}

# tracerd_kill: SIGKILL the (single node's) tracerd and wait until it
# is gone: kill returns before the signal is acted on, and until then
# the daemon still accepts connections.
tracerd_kill ()
{
    _tr_kpid=$(cat "$TRACER_CLUSTER_DIR/run/tracerd.pid") &&
    kill -KILL "$_tr_kpid" &&
    wait_for "! tr_pid_running $_tr_kpid" 10
}

# cluster_node K: the name of node K (from 1).
cluster_node ()
{
    printf '%s\n' "$TRACER_CLUSTER_NODES" | awk -v k="$1" '{ print $k }'
}

# tracerd_log [NODE]: the path of NODE's (default: the first node's)
# tracerd log.
tracerd_log ()
{
    case $TRACER_CLUSTER_NODES in
        *" "*)
            echo "$TRACER_CLUSTER_DIR/log/tracerd.${1:-$TRACER_NODENAME}.log"
            ;;
        *) echo "$TRACER_CLUSTER_DIR/log/tracerd.log" ;;
    esac
}

# node_exec NODE CMD...: run CMD in NODE's namespaces (several nodes only).
node_exec ()
{
    _tr_ne_node=$1
    shift
    "$TRACER_CLUSTER" node-exec "$TRACER_CLUSTER_DIR" "$_tr_ne_node" -- "$@"
}

# slurmd_restart: needed after changing plugstack.conf for job_prolog or
# job_epilog (slurmd decides at start whether to run them); restarts every
# node's slurmd.
slurmd_restart ()
{
    "$TRACER_CLUSTER" slurmd-restart "$TRACER_CLUSTER_DIR" >&3
}

# job_state JOBID: JobState from scontrol (kept for MinJobAge seconds;
# there is no accounting database, so no sacct).
job_state ()
{
    scontrol -o show job "$1" 2>/dev/null |
        sed -n 's/.* JobState=\([^ ]*\) .*/\1/p'
}

# wait_job JOBID [TIMEOUT]: wait until the job has finished (any final
# state); print that state.
wait_job ()
{
    _tr_wj_id=$1
    wait_for 'case $(job_state "$_tr_wj_id") in
                  PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|"") false ;;
              esac' "${2:-60}" || return 1
    job_state "$_tr_wj_id"
}

# job_cgroup_dir JOBID: the name Slurm's cgroup/v2 gives the job's
# directory: job_<id> up to Slurm 25.11 and with CgroupJobIdPaths=yes,
# else (26.05 and later) the job's SLUID, as scontrol -d shows it.
job_cgroup_dir ()
{
    _tr_sluid=$(scontrol -d -o show job "$1" 2>/dev/null |
        sed -n 's/.* SLUID=\(s[0-9A-Z]\{13\}\)\( .*\)\{0,1\}$/\1/p')
    if test -n "$_tr_sluid" &&
       ! grep -qix "CgroupJobIdPaths=yes" "$TRACER_CLUSTER_DIR/etc/cgroup.conf"
    then
        echo "$_tr_sluid"
    else
        echo "job_$1"
    fi
}
