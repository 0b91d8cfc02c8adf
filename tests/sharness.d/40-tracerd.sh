# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A tracerd of the test's own, outside the test cluster: its store,
# spool, state and log in the trash directory.

# private_conf SOCKDIR: write ./tracer.yaml for it, with the socket in
# SOCKDIR (unix socket names are limited to 108 bytes, trash directory
# paths are long).  Further settings come on standard input, one
# "section.key: value" a line (e.g. "daemon.job_starters: true").
private_conf ()
{
    {
        printf 'store.path: "%s/store"\n' "$PWD"
        printf 'spool.path: "%s/spool"\n' "$PWD"
        printf 'daemon.socket: "%s/tracerd.sock"\n' "$1"
        printf 'daemon.state_dir: "%s/st"\n' "$PWD"
        printf 'daemon.log: "%s/tracerd.log"\n' "$PWD"
        printf 'sampling.taskstats: false\n'
        cat
    } | awk '
        /^[a-z_]+\.[a-z_]+:/ {
            dot = index($0, ".")
            sec = substr($0, 1, dot - 1)
            if (!(sec in seen)) { seen[sec] = 1; order[n++] = sec }
            body[sec] = body[sec] "  " substr($0, dot + 1) "\n"
        }
        END { for (i = 0; i < n; i++) printf "%s:\n%s", order[i], body[order[i]] }
    ' >tracer.yaml
}

# private_tracerd_start: start it on ./tracer.yaml and wait for its socket.
private_tracerd_start ()
{
    _sock=$(sed -n 's/^  socket: "\(.*\)"$/\1/p' tracer.yaml)
    # not sharness's descriptors: a daemon holding them open would keep
    # a reader of the test's output waiting
    { "${TRACER_BUILDDIR:-$SHARNESS_BUILD_DIRECTORY}/collector/tracerd" \
          -c "$PWD/tracer.yaml" -f >tracerd.out 2>&1 \
          3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & } &&
    echo $! >tracerd.pid &&
    wait_for "test -S \"$_sock\"" 20
}

# private_tracerd_stop: stop it and wait until it is gone.
private_tracerd_stop ()
{
    test -f tracerd.pid || return 0
    kill "$(cat tracerd.pid)" 2>/dev/null
    wait_for "! tr_pid_running $(cat tracerd.pid)" 20 &&
    rm -f tracerd.pid
}

# pbs_step_start JOB ATTACH [PID] [INTERVAL]: tell the tracerd at
# $TRACER_SOCKET (through $NOTIFY, tests/notify) that the batch step of
# PBS job JOB started as root on this host, attached as ATTACH (a JSON
# object: {"cgroup": ...}, {"env": ...}, {"tree": true}...), its first
# task PID (default 0), sampled every INTERVAL s (default 0.2).
pbs_step_start ()
{
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"step_start\",
        \"identity\":{\"scheduler\":\"pbs\",\"job_id\":\"$1\",
          \"step_id\":\"batch\",\"node\":\"$(hostname)\",\"uid\":0,
          \"user\":\"root\"},
        \"task_id\":0, \"pid\":${3:-0}, \"interval_s\":${4:-0.2},
        \"attach\":$2}"
}

# pbs_task_exit JOB: its only task ended with status 0, the last one.
pbs_task_exit ()
{
    "$NOTIFY" "$TRACER_SOCKET" "{\"op\":\"task_exit\",
        \"identity\":{\"scheduler\":\"pbs\",\"job_id\":\"$1\",
          \"step_id\":\"batch\",\"node\":\"$(hostname)\",\"uid\":0},
        \"task_id\":0, \"pid\":0, \"wait_status\":0, \"last\":true}"
}

# exit_filter_check: with tracerd's kernel filter on process exits, a
# traced step forks 200 /bin/true and waits while this shell runs 1,000
# outside it.  The record counts the step's 200, exactly, none lost, and
# tracerd received at least 200 and fewer than 1,000 exit events while
# the step ran.  Needs a work/ directory the job may write (the caller
# runs `: >work/go` in test_when_finished); leaves the job id in job.
exit_filter_check ()
{
    rm -f work/go work/forked &&
    { srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; i=0; \
          while [ \$i -lt 200 ]; do /bin/true; i=\$((i+1)); done; \
          : >work/forked; while [ ! -e work/go ]; do sleep 0.5; done" \
          2>out200.err & } &&
    wait_for "test -e work/forked" 60 &&
    wait_log "$(tracerd_log)" "process exits: only those in the steps. [0-9]* cgroup directories delivered (kernel filter)" &&
    i=0 && while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done &&
    : >work/go &&
    wait &&
    job=$(sed -n "s/^JOB=//p" out200.err) &&
    wait_record $job &&
    test "$(jq ".[0].tools[] | select(.name == \"true\") | .count" rec.json)" = 200 &&
    test "$(jq ".[0].tools[] | select(.name == \"true\") | .exact" rec.json)" = true &&
    test "$(jq ".[0].summary.processes.lost" rec.json)" = 0 &&
    wait_log "$(tracerd_log)" "step [^ ]*/$job/0/[^ ]*: [0-9]* process exit events received" &&
    got=$(sed -n "s|.*step [^ ]*/$job/0/[^ ]*: \([0-9]*\) process exit events received.*|\1|p" \
          "$(tracerd_log)" | tail -1) &&
    echo "exit events received while the step ran: $got" &&
    test "$got" -ge 200 && test "$got" -lt 1000
}
