# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A private munged with a throwaway key, for signing tests that need no
# Slurm (after MUNGE's own tests/sharness.d/03-munged.sh).  It runs as the
# invoking user (root needs --force) and is stopped when the script ends.

_tr_munged_trap=

_tr_munged_atexit ()
{
    munged_stop >/dev/null 2>&1 || true
}

# munged_start: start munged and set MUNGE_SOCKET (also exported as
# TRACER_MUNGE_SOCKET) and MUNGE_KEY.
munged_start ()
{
    MUNGE_DIR=$SHARNESS_TRASH_DIRECTORY/munged
    mkdir -p "$MUNGE_DIR" && chmod 0755 "$MUNGE_DIR" || return 1
    MUNGE_KEY=$MUNGE_DIR/munge.key
    MUNGE_SOCKET=$MUNGE_DIR/munge.sock
    # A unix socket path has at most 107 bytes.
    if test ${#MUNGE_SOCKET} -gt 100; then
        _tr_md_tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracer-munged.XXXXXX") || return 1
        chmod 0755 "$_tr_md_tmp"
        MUNGE_SOCKET=$_tr_md_tmp/munge.sock
        echo "$_tr_md_tmp" >"$MUNGE_DIR/tmpdir"
    fi
    (umask 077 && head -c 1024 /dev/urandom >"$MUNGE_KEY") || return 1
    chmod 0400 "$MUNGE_KEY"
    if test -z "$_tr_munged_trap"; then
        _tr_munged_trap=t
        tr_atexit _tr_munged_atexit
    fi
    # Close sharness's descriptors (3-6) and any others inherited, so
    # that the daemon cannot hold the test harness's pipe open.
    /usr/sbin/munged --foreground --force \
        --socket="$MUNGE_SOCKET" --key-file="$MUNGE_KEY" \
        --pid-file="$MUNGE_DIR/munged.pid.munged" \
        --seed-file="$MUNGE_DIR/munged.seed" \
        --log-file="$MUNGE_DIR/munged.log" \
        </dev/null >>"$MUNGE_DIR/munged.out" 2>&1 \
        3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
    echo $! >"$MUNGE_DIR/munged.pid"
    export MUNGE_SOCKET MUNGE_KEY
    TRACER_MUNGE_SOCKET=$MUNGE_SOCKET
    export TRACER_MUNGE_SOCKET
    wait_for 'munge -n --socket="$MUNGE_SOCKET" >/dev/null 2>&1' 10 || {
        cat "$MUNGE_DIR/munged.out" >&2
        return 1
    }
}

# munged_stop: stop it (idempotent).
munged_stop ()
{
    test -f "$MUNGE_DIR/munged.pid" || return 0
    _tr_md_pid=$(cat "$MUNGE_DIR/munged.pid")
    kill -TERM "$_tr_md_pid" 2>/dev/null &&
        wait_for '! tr_pid_running "$_tr_md_pid"' 10
    kill -KILL "$_tr_md_pid" 2>/dev/null
    rm -f "$MUNGE_DIR/munged.pid"
    if test -f "$MUNGE_DIR/tmpdir"; then
        _tr_md_tmp=$(cat "$MUNGE_DIR/tmpdir")
        rm -f "$_tr_md_tmp/munge.sock"
        rmdir "$_tr_md_tmp" 2>/dev/null
        rm -f "$MUNGE_DIR/tmpdir"
    fi
    return 0
}
