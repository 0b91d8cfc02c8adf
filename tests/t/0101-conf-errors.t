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
test_done
