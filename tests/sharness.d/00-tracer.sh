# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Common sharness helpers for tracer's integration tests: where the source
# and build trees are, prerequisites, polling, and the skip-or-fail rule for
# missing prerequisites.  Sourced by sharness from sharness.d/ (POSIX sh).
#
# Test scripts live in tests/t/ but sharness looks for sharness.d/ next to
# SHARNESS_TEST_SRCDIR, so every script starts with:
#
#   test_description='...'
#   : "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
#   export SHARNESS_TEST_SRCDIR
#   . "${SHARNESS:-/usr/share/sharness/sharness.sh}"

# The Makefile exports both; by hand (cd tests && ./t/NNNN-x.t -v) the
# build is assumed to be in-tree.
: "${TRACER_SRCDIR:=$(cd "$SHARNESS_TEST_SRCDIR/.." && pwd)}"
: "${TRACER_BUILDDIR:=$TRACER_SRCDIR}"
export TRACER_SRCDIR TRACER_BUILDDIR

# Run the tools from the build tree.
PATH=$TRACER_BUILDDIR/collector:$TRACER_BUILDDIR/analysis:$PATH
export PATH

test "$(id -u)" = 0 && test_set_prereq ROOT
id -u tracertest >/dev/null 2>&1 && test_set_prereq TRACERTEST
# A second user and the admin group (no members) of tools/install-deps.
id -u tracertest2 >/dev/null 2>&1 && getent group traceradm >/dev/null 2>&1 &&
    test_set_prereq TRACERTEST2
test -x /usr/sbin/slurmctld && test -x /usr/sbin/slurmd &&
    test -x /usr/sbin/munged && test_set_prereq SLURM
command -v valgrind >/dev/null 2>&1 && test_set_prereq VALGRIND
# hyparquet, the independent Parquet reader (tools/install-deps), and
# read_parquet FILE: the file as JSON (tests/node/read-parquet.mjs).
: "${TRACER_NODE_MODULES:=/usr/local/lib/tracer-tests/node_modules}"
export TRACER_NODE_MODULES
command -v node >/dev/null 2>&1 &&
    test -f "$TRACER_NODE_MODULES/hyparquet/src/node.js" &&
    test_set_prereq HYPARQUET
read_parquet ()
{
    node "$TRACER_SRCDIR/tests/node/read-parquet.mjs" "$1"
}

# wait_for CMD [TIMEOUT]
# Evaluate the shell command CMD every 0.1 s until it succeeds; fail after
# TIMEOUT seconds (default 10), saying what was waited for.
wait_for ()
{
    _tr_wf_n=$(( ${2:-10} * 10 ))
    while test "$_tr_wf_n" -gt 0; do
        eval "$1" && return 0
        sleep 0.1
        _tr_wf_n=$((_tr_wf_n - 1))
    done
    eval "$1" && return 0
    echo "wait_for: timed out after ${2:-10} s: $1" >&2
    return 1
}

# require_or_skip DESCRIPTION COMMAND [ARGS...]
# Run COMMAND; when it fails the rest of the script cannot run.  Under CI
# ($CI = true) that is a failure: a failing test names DESCRIPTION.
# Otherwise the whole script is skipped with DESCRIPTION as the reason
# (skip_all; exit 77 would count as an error under tap-driver).
require_or_skip ()
{
    _tr_ros_desc=$1
    shift
    "$@" >/dev/null 2>&1 && return 0
    if test "${CI:-}" = true; then
        say_color error "# prerequisite missing under CI: $_tr_ros_desc"
        test_expect_success "prerequisite: $_tr_ros_desc" 'false'
        test_done
    fi
    if test "$test_count" -gt 0; then
        say_color skip "# skipping the remaining tests: $_tr_ros_desc"
    else
        skip_all="$_tr_ros_desc"
    fi
    test_done
}

# tr_atexit COMMAND
# Run COMMAND when the script ends: passed (from test_done's cleanup list,
# before the trash directory is removed), failed or interrupted (from the
# EXIT trap, which then still ends in sharness's die).  Commands run last
# registered first, once; $TR_EXIT_STATUS is 0 on the passing path.
_tr_atexit_cmds=
_tr_atexit_armed=
_tr_atexit_run ()
{
    TR_EXIT_STATUS=$1
    _tr_atexit_todo=$_tr_atexit_cmds
    _tr_atexit_cmds=
    eval "$_tr_atexit_todo"
    return 0
}
tr_atexit ()
{
    if test -z "$_tr_atexit_armed"; then
        _tr_atexit_armed=t
        cleanup '_tr_atexit_run 0'
        trap '_tr_rc=$?; _tr_atexit_run $_tr_rc; (exit $_tr_rc); die' EXIT
        trap 'exit 129' HUP
        trap 'exit 130' INT
        trap 'exit 143' TERM
    fi
    _tr_atexit_cmds="$1
$_tr_atexit_cmds"
}

# tr_pid_running PID: PID exists and is not a zombie.
tr_pid_running ()
{
    test -r "/proc/$1/stat" || return 1
    case $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) in
        Z*|X*|"") return 1 ;;
    esac
    return 0
}

# TRACER_TESTS_ONLY: the scripts to run ("t/0001-cli-basics.t ..."); any
# other script is skipped whole.  tools/test-all sets it for make
# distcheck, which runs the tests that need no cluster and the cluster
# smoke test from the tarball (automake's TESTS cannot be narrowed from
# the command line in one directory only: every library's unit tests
# run there too).
if test -n "${TRACER_TESTS_ONLY:-}"; then
    case " $TRACER_TESTS_ONLY " in
        *" t/${SHARNESS_TEST_FILE##*/} "*) ;;
        *)
            skip_all="not in TRACER_TESTS_ONLY"
            test_done
            ;;
    esac
fi
