#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='programs report configuration mistakes as file:line:column and exit 2'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
S=${TRACER_SRCDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}

test_expect_success 'the shipped tracer.yaml is valid' '
    $B/collector/tracerd --check-config -c $S/etc/tracer.yaml >out &&
    grep -q ": OK" out
'
test_expect_success 'an unknown key is located exactly' '
    printf "sampling:\n  intervall: 2\n" >bad.yaml &&
    test_expect_code 2 $B/collector/tracerd --check-config -c bad.yaml 2>err &&
    grep -q "^tracerd: bad.yaml:2:3: unknown key .intervall." err
'
test_expect_success 'a value out of range is located exactly' '
    printf "sampling:\n  interval: 0.01\n" >range.yaml &&
    test_expect_code 2 $B/collector/tracerd --check-config -c range.yaml 2>err &&
    grep -q "^tracerd: range.yaml:2:13: " err &&
    grep -q "out of range" err
'
test_expect_success 'tracer-report and tracer-run use the same checks' '
    test_expect_code 2 $B/analysis/tracer-report -c bad.yaml x.json 2>err &&
    grep -q "bad.yaml:2:3: unknown key" err &&
    test_expect_code 2 $B/collector/tracer-run -c bad.yaml -- true 2>err &&
    grep -q "bad.yaml:2:3: unknown key" err
'
test_expect_success 'an explicitly named missing file is an error' '
    test_expect_code 2 $B/collector/tracerd --check-config -c nosuch.yaml 2>err &&
    grep -q "nosuch.yaml" err
'
test_expect_success 'TRACER_CONF names the file' '
    TRACER_CONF=$PWD/bad.yaml test_expect_code 2 $B/collector/tracerd --check-config 2>err &&
    grep -q "bad.yaml:2:3" err
'

# tracerd runs as root and its file says whom to serve and whose
# signatures to trust: it must be root's alone.  The users' programs
# read their own files and do not ask.
test "$(id -u)" = 0 && test_set_prereq ROOT
test_expect_success 'a configuration tracerd would run on' '
    mkdir -p run &&
    {
        printf "store:\n  path: \"%s/run/store\"\n" "$PWD" &&
        printf "spool:\n  path: \"%s/run/spool\"\n" "$PWD" &&
        printf "daemon:\n  socket: \"%s/run/s.sock\"\n" "$PWD" &&
        printf "  state_dir: \"%s/run/st\"\n" "$PWD" &&
        printf "  log: \"%s/run/d.log\"\n" "$PWD"
    } >daemon.yaml &&
    chmod 644 daemon.yaml &&
    $B/collector/tracerd --check-config -c "$PWD/daemon.yaml" >out &&
    grep -q ": OK" out
'
test_expect_success ROOT 'tracerd refuses a world-writable configuration file' '
    cp daemon.yaml ww.yaml && chmod 666 ww.yaml &&
    test_expect_code 2 $B/collector/tracerd --check-config -c "$PWD/ww.yaml" \
        >out 2>err &&
    test_must_be_empty out &&
    echo "tracerd: $PWD/ww.yaml: insecure: $PWD/ww.yaml: writable by others" \
        >expect &&
    test_cmp expect err &&
    test_expect_code 2 timeout 20 $B/collector/tracerd -c "$PWD/ww.yaml" -f \
        2>err &&
    test_cmp expect err &&
    ! test -e run/s.sock &&
    ! test -e run/d.log &&
    ! test -e run/spool
'
test_expect_success ROOT 'tracerd refuses a group-writable configuration file' '
    cp daemon.yaml gw.yaml && chmod 664 gw.yaml &&
    test_expect_code 2 timeout 20 $B/collector/tracerd -c "$PWD/gw.yaml" -f \
        2>err &&
    echo "tracerd: $PWD/gw.yaml: insecure: $PWD/gw.yaml: writable by group" \
        >expect &&
    test_cmp expect err &&
    ! test -e run/s.sock
'
test_expect_success ROOT 'tracerd refuses a configuration file root does not own' '
    cp daemon.yaml nobody.yaml && chmod 644 nobody.yaml &&
    chown 65534 nobody.yaml &&
    test_expect_code 2 timeout 20 $B/collector/tracerd -c "$PWD/nobody.yaml" \
        -f 2>err &&
    printf "%s\n" "tracerd: $PWD/nobody.yaml: insecure: $PWD/nobody.yaml: owned by uid 65534, not root" \
        >expect &&
    test_cmp expect err &&
    ! test -e run/s.sock
'
test_expect_success ROOT 'tracerd refuses a file in a directory others may write' '
    mkdir open && chmod 777 open && cp daemon.yaml open/t.yaml &&
    chmod 644 open/t.yaml &&
    test_expect_code 2 $B/collector/tracerd --check-config \
        -c "$PWD/open/t.yaml" 2>err &&
    echo "tracerd: $PWD/open/t.yaml: insecure: $PWD/open: writable by others" \
        >expect &&
    test_cmp expect err
'
# poll CMD: up to 20 s, every 0.1 s
poll () {
    _n=200
    until eval "$1"; do
        _n=$((_n - 1))
        test $_n -gt 0 || return 1
        sleep 0.1
    done
}
test_expect_success ROOT 'a running tracerd keeps its configuration when the file turns insecure' '
    cp daemon.yaml live.yaml && chmod 644 live.yaml &&
    { $B/collector/tracerd -c "$PWD/live.yaml" -f >tracerd.out 2>&1 \
          3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & } &&
    echo $! >tracerd.pid &&
    test_when_finished "kill \$(cat tracerd.pid) 2>/dev/null; true" &&
    poll "test -S run/s.sock" &&
    chmod 666 live.yaml &&
    kill -HUP "$(cat tracerd.pid)" &&
    poll "grep -q \"reload failed\" run/d.log" &&
    grep -q "$PWD/live.yaml: insecure: $PWD/live.yaml: writable by others" \
        run/d.log &&
    kill -0 "$(cat tracerd.pid)" &&
    test -S run/s.sock &&
    chmod 644 live.yaml &&
    kill -HUP "$(cat tracerd.pid)" &&
    poll "grep -q \"configuration reloaded\" run/d.log" &&
    kill "$(cat tracerd.pid)" &&
    poll "! kill -0 $(cat tracerd.pid) 2>/dev/null"
'
test_expect_success ROOT 'tracer-report and tracer-run still read a file of their user' '
    test_expect_code 0 $B/analysis/tracer-report -c "$PWD/ww.yaml" \
        --allow-unsigned "$S/tests/fixtures/records/collector-slurm-v2.json" \
        >out 2>err &&
    grep -q "^Job 42" out &&
    ! grep -q insecure err &&
    test_expect_code 0 $B/collector/tracer-run -c "$PWD/ww.yaml" --no-sign -q \
        -o "$PWD/rec.json" -- true 2>err &&
    test -f rec.json &&
    ! grep -q insecure err
'
test_done
