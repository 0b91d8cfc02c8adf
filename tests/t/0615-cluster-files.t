#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='file evidence from eBPF in step records (files)

A real cluster whose tracerd loads the eBPF file evidence (where the
kernel allows it): a step whose tool opens a missing file names the
path, ENOENT and the tool; a read from a FUSE file system that returns
EIO is an I/O error of the tool; failed opens of a process outside the
step never attach; a missing input is one a tool acted on (sort checking
it with stat), never the probes of an interpreter or the dynamic loader;
with sampling.ebpf false the record says why it has none and keeps every
other figure.

On a node whose kernel allows BPF trampolines (the guest of tests/vm,
tests/vm.d/0623-cluster-files-fexit.t) TRACER_TEST_EXPECT_FEXIT=1 makes
the fexit programs a must, and TRACER_TEST_EBPF=auto keeps the default
setting for every test of the evidence.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM

SBATCH_MEM_PER_NODE=200 SLURM_MEM_PER_NODE=200
export SBATCH_MEM_PER_NODE SLURM_MEM_PER_NODE

# step0 JQ: JQ applied to the record of step 0 in rec.json
step0 ()
{
    jq -r ".[] | select(.identity.step_id == \"0\") | $1" rec.json
}

# run_step CMD: srun --tracer sh -c CMD; sets job; waits for its record
run_step ()
{
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; $1" 2>s.err &&
    job=$(sed -n "s/^JOB=//p" s.err) &&
    test -n "$job" &&
    wait_for "wait_record $job && test -n \"\$(step0 .files.source)\"" 60
}

# expect_fexit: where the kernel allows trampolines, tracerd must have
# loaded the fexit programs
expect_fexit ()
{
    test "${TRACER_TEST_EXPECT_FEXIT:-0}" != 1 ||
    grep "file evidence: eBPF program loaded (fexit" "$(tracerd_log)" || {
        grep "file evidence" "$(tracerd_log)"
        false
    }
}

# fail_step CMD: as run_step, for a step that fails
fail_step ()
{
    test_must_fail srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; $1" \
        2>s.err &&
    job=$(sed -n "s/^JOB=//p" s.err) &&
    test -n "$job" &&
    wait_for "wait_record $job && test -n \"\$(step0 .files.source)\"" 60
}

# As deployed (sampling.ebpf: auto) tracerd loads the programs only as
# fexit programs, which only the traced functions pay for; a kernel that
# refuses them (one in lockdown, as this one) would need the system-call
# tracepoint, which every system call pays for (about 2 times slower
# system-call-heavy jobs, doc/performance.md): then the record says why
# it has none and how to turn it on.
test_expect_success 'as deployed (sampling.ebpf: auto): eBPF loaded as fexit, or the record says why not and how to have it' '
    cluster_up --sampling ebpf=auto &&
    wait_log "$(tracerd_log)" "file evidence: " &&
    expect_fexit &&
    if grep -q "file evidence: eBPF program loaded (fexit" "$(tracerd_log)"
    then
        test_set_prereq EBPF_AUTO &&
        run_step "cat /nonexistent/ref.fa || true" &&
        test "$(step0 .files.source)" = ebpf
    else
        grep "file evidence: none in records" "$(tracerd_log)" &&
        run_step "cat /nonexistent/ref.fa || true" &&
        test "$(step0 .files.source)" = none &&
        step0 .files.reason >why.out &&
        grep -q "sampling.ebpf: true uses it anyway" why.out
    fi
'

mode=${TRACER_TEST_EBPF:-true}
test_expect_success "sampling.ebpf: $mode: tracerd loads it wherever the kernel allows, else the record says why" '
    conf=$TRACER_CLUSTER_DIR/etc/tracer.yaml &&
    sed -i "s/^  ebpf: auto$/  ebpf: $mode/" "$conf" &&
    grep -x "  ebpf: $mode" "$conf" &&
    tracerd_stop && : >"$(tracerd_log)" && tracerd_start &&
    wait_log "$(tracerd_log)" "file evidence: " &&
    expect_fexit &&
    if grep -q "file evidence: eBPF program loaded" "$(tracerd_log)"
    then
        test_set_prereq EBPF
    else
        grep "file evidence: none in records" "$(tracerd_log)" &&
        run_step "cat /nonexistent/ref.fa || true" &&
        test "$(step0 .files.source)" = none &&
        test -n "$(step0 .files.reason)" &&
        cp rec.json on.json
    fi
'

test_expect_success EBPF 'a missing input: the path, ENOENT and the tool' '
    run_step "cat /nonexistent/ref.fa || true" &&
    step0 ".files.source" >src.out &&
    echo ebpf >expect &&
    test_cmp expect src.out &&
    step0 ".files.failed_opens[] | select(.path == \"/nonexistent/ref.fa\")
        | \"\(.errno) \(.tool) \(.count)\"" >fo.out &&
    echo "ENOENT cat 1" >expect &&
    test_cmp expect fo.out &&
    cp rec.json on.json &&
    COLUMNS=400 "$REPORT" -j "$job" >view.out &&
    grep "Failed opens: *.*/nonexistent/ref.fa (ENOENT) by cat" view.out
'

test_expect_success EBPF 'failed opens of a process outside the step never attach' '
    ( while :; do cat /nonexistent/outside.fa 2>/dev/null; sleep 0.05;
      done ) &
    opid=$! &&
    test_when_finished "kill $opid" &&
    run_step "sleep 1; cat /nonexistent/inside.fa || true; sleep 0.5" &&
    step0 ".files.failed_opens[].path" >paths.out &&
    grep -x /nonexistent/inside.fa paths.out &&
    ! grep outside paths.out
'

test_expect_success EBPF 'a read that fails with EIO: op read, EIO, the tool' '
    mkdir eio &&
    { "$B/tests/eiofs" "$PWD/eio" -f -s -o allow_other 2>eiofs.err & } &&
    tr_atexit "umount -l \"$PWD/eio\" 2>/dev/null" &&
    wait_for "test -f eio/good" 20 &&
    run_step "cat \"$PWD/eio/bad\" || true;
        head -c 4096 \"$PWD/eio/good\" >/dev/null" &&
    step0 ".files.io_errors[] | \"\(.op) \(.errno) \(.tool) \(.path)\"" \
        >io.out &&
    echo "read EIO cat $PWD/eio/bad" >expect &&
    test_cmp expect io.out &&
    step0 ".files.top_read[] | select(.path == \"$PWD/eio/good\") | .bytes" \
        >good.out &&
    echo 4096 >expect &&
    test_cmp expect good.out
'

test_expect_success EBPF 'a step failing on a missing input: cause input-missing, the path' '
    fail_step "cat /nonexistent/ref.fa" &&
    COLUMNS=400 "$REPORT" -j "$job" >view.out &&
    grep "Cause: *input-missing: cat could not open /nonexistent/ref.fa (ENOENT)" \
        view.out
'

# A missing input is one a tool acted on: the last lookup it made before
# it ended.  Lookups that a successful one of the same name elsewhere
# follows (the dynamic loader's search path, an interpreter's start-up,
# a PATH walk) are probes, and a tool that carried on past a failed
# lookup did not act on it, whatever the path.
test_expect_success EBPF 'a missing input checked by stat (sort): input-missing, the path' '
    fail_step "sort /nonexistent/in-$$.txt >/dev/null" &&
    step0 ".files.failed_opens[] | select(.path == \"/nonexistent/in-$$.txt\")
        | \"\(.call) \(.errno) \(.tool) \(.acted)\"" >st.out &&
    echo "stat ENOENT sort 1" >expect &&
    test_cmp expect st.out &&
    COLUMNS=400 "$REPORT" -j "$job" >view.out &&
    grep "Cause: *input-missing: sort could not find /nonexistent/in-$$.txt (ENOENT)" \
        view.out
'

test_expect_success EBPF 'a failing Python tool is not input-missing: its start-up probes are not inputs' '
    fail_step "/usr/bin/python3 -c \"import argparse, csv, json;
        raise ValueError(1)\"" &&
    step0 "[.files.failed_opens[] | select(.tool == \"python3\")
        | .acted] | \"\(length) \(map(select(. == 0)) | length)\"" >py.out &&
    read n zero <py.out &&
    test "$n" -gt 0 && test "$zero" = "$n" &&
    step0 .outcome.culprit.tool | grep "^python3" &&
    test "$(step0 .cause.class)" = tool-error
'

test_expect_success EBPF 'a Python tool failing on a missing input: input-missing, the path' '
    fail_step "/usr/bin/python3 -c \"open(\\\"/nonexistent/py-$$.csv\\\")\"" &&
    step0 ".files.failed_opens[0] | \"\(.path) \(.call) \(.acted)\"" \
        >pm.out &&
    echo "/nonexistent/py-$$.csv open 1" >expect &&
    test_cmp expect pm.out &&
    test "$(step0 .cause.class)" = input-missing &&
    step0 .cause.text | grep "^python3[.0-9]* could not open /nonexistent/py-$$.csv (ENOENT); python3"
'

test_expect_success EBPF 'a tool built with an RPATH that fails for another reason is not input-missing' '
    mkdir -p rpath/lib &&
    printf "%s\n" "#include <math.h>" "#include <stdio.h>" \
        "int main (int c, char **v) { (void)v;" \
        "  fprintf (stderr, \"bad option %g\\n\", sqrt ((double)c));" \
        "  return 3; }" >rpath/tool.c &&
    cc -o rpath/rtool rpath/tool.c -Wl,-rpath,"$PWD/rpath/lib" \
        -Wl,--disable-new-dtags -lm &&
    fail_step "\"$PWD/rpath/rtool\"" &&
    step0 ".files.failed_opens[] | select(.tool == \"rtool\") | .path" \
        >rp.out &&
    grep "^$PWD/rpath/lib/" rp.out &&
    test "$(step0 "[.files.failed_opens[] | select(.tool == \"rtool\")
        | select(.acted == 0)] | length")" = "$(wc -l <rp.out)" &&
    test "$(step0 .cause.class)" = tool-error
'

test_expect_success EBPF 'a step failing on an EIO read: cause io-error, the file' '
    fail_step "cat \"$PWD/eio/bad\"" &&
    COLUMNS=400 "$REPORT" -j "$job" >view.out &&
    grep "Cause: *io-error: read of $PWD/eio/bad failed with EIO in cat" \
        view.out
'

# the record's members and figures, without files: what eBPF must not
# change
figures ()
{
    jq -r ".[] | select(.identity.step_id == \"0\") | del(.files) |
        [paths(scalars) | map(tostring) | join(\".\")] | .[]" "$1" |
        grep -v -e "^tools\." -e "^series\." -e "^summary\.tasks" |
        sed "s/\.[0-9][0-9]*\././g" | sort -u
}

test_expect_success 'sampling.ebpf false: source none, the reason, the rest kept' '
    conf=$TRACER_CLUSTER_DIR/etc/tracer.yaml &&
    sed -i "s/^  ebpf: $mode$/  ebpf: false/" "$conf" &&
    grep -x "  ebpf: false" "$conf" &&
    tracerd_stop && tracerd_start &&
    run_step "cat /nonexistent/ref.fa || true" &&
    step0 ".files | \"\(.source): \(.reason)\"" >off.out &&
    echo "none: turned off (sampling.ebpf: false)" >expect &&
    test_cmp expect off.out &&
    test "$(step0 ".files | keys | length")" = 2 &&
    figures on.json >on.fig &&
    figures rec.json >off.fig &&
    test_cmp on.fig off.fig
'

test_done
