# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Helpers for the PBS, Torque and LSF module tests (t/070x): records
# signed as a site's are, waiting for a job's record, and the checks
# every emulated job's record must pass.

# batch_preamble: what every batch-module test starts with: $B (build
# tree), $P (tracer-prolog), $REPORT, $BURN, $EMU (the scheduler
# emulator), $SHIM (the PBS hook), $HOST and $UID_T (the tracertest user);
# skips the whole script without root, the tracertest user or jq.
batch_preamble ()
{
    B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
    P=$B/prolog/tracer-prolog
    REPORT=$B/analysis/tracer-report
    BURN=$B/tests/burn
    EMU=$SHARNESS_TEST_SRCDIR/sched-emu
    SHIM=$TRACER_SRCDIR/etc/pbs/tracer_hook.py
    if ! test_have_prereq ROOT || ! test_have_prereq TRACERTEST; then
        skip_all='needs root and the tracertest user'
        test_done
    fi
    require_or_skip "jq" command -v jq
    HOST=$(hostname -s)
    UID_T=$(id -u tracertest)
    unshare -m true 2>/dev/null && test_set_prereq UNSHARE
}

# batch_signing: start a private munged when one can run and set
# $signing (private_conf lines) and $UNSIGNED (tracer-report's option
# for records left unsigned) to match.
batch_signing ()
{
    if munged_start >/dev/null 2>&1; then
        signing="signing.enabled: true
signing.munge_socket: \"$MUNGE_SOCKET\""
        UNSIGNED=
    else
        signing="signing.enabled: false"
        UNSIGNED=--allow-unsigned
    fi
}

# batch_wait_record JOB [SECONDS]: wait for the job's record in the store,
# copied to rec.json (found with fixed strings: an array task's id has
# brackets)
batch_wait_record ()
{
    _host=$(hostname -s)
    wait_for "find store/default/jobs -name 0.$_host.json | grep -qF \"/$1/0.\"" \
        ${2:-30} &&
    cp "$(find store/default/jobs -name 0.$_host.json | grep -F "/$1/0.")" \
        rec.json
}

# batch_check_record SCHEDULER JOB ACCOUNT PARTITION TIME_LIMIT OUT: the
# record validates and tells who ran what with which request; CPU time is burn's
# own (in the job's output file OUT) within 10%, the memory peak at least
# burn's 64 MiB.  A job followed without a cgroup is sampled (every 0.2 s
# here) and loses up to one interval at its end: those jobs burn 3 s.
batch_check_record ()
{
    "${TRACER_BUILDDIR:-$SHARNESS_BUILD_DIRECTORY}/analysis/tracer-report" \
        $UNSIGNED rec.json >/dev/null &&
    jq -e --arg s "$1" --arg j "$2" --arg a "$3" --arg p "$4" \
        --argjson t "$5" --arg h "$(hostname -s)" \
        --argjson uid "$(id -u tracertest)" '
        .identity.scheduler == $s and .identity.job_id == $j
        and .identity.step_id == "0" and .identity.node == $h
        and .identity.user == "tracertest" and .identity.uid == $uid
        and .identity.job_name == "burnjob"
        and .identity.partition == $p and .identity.account == $a
        and .request.cpus_on_node == 2 and .request.mem_bytes == 209715200
        and .request.time_limit_s == $t
        and .summary.memory.peak_bytes >= 67108864
        and .outcome.state == "completed" and .outcome.exit_code == 0
        and .outcome.complete == true' rec.json &&
    within "$(jq .summary.cpu.total_s rec.json)" \
        "$(grep "^{\"cpu_s\"" "$6" | jq .cpu_s)" 10
}

# batch_default_conf CONF CMD...: run CMD (as root) with CONF at the
# compiled default configuration path that tracer-prolog --help names,
# in a private mount namespace: as root tracer-prolog reads no other
# file unless --config says so, whatever TRACER_CONF holds.  The
# directory is made if missing (make install would) and a private tmpfs
# is mounted on it, so nothing of the host's changes.
batch_default_conf ()
{
    _conf=$1 && shift &&
    _def=$("$P" --help |
        sed -n 's/^ *(default \(\/.*\);$/\1/p') &&
    test -n "$_def" &&
    mkdir -p "$(dirname "$_def")" &&
    unshare -m --propagation private sh -c '
        def=$1 conf=$2 && shift 2 &&
        mount -t tmpfs -o mode=0755 tracer-test "$(dirname "$def")" &&
        cp "$conf" "$def" && chmod 0644 "$def" && exec "$@"' \
        sh "$_def" "$_conf" "$@"
}
