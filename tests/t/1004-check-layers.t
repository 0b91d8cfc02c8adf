#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='The layers of libtracer/: no include against them

tools/check-layers reads every include of the libraries and the
front-ends (doc/hacking.md): a library uses only the ones below it, the
daemon no judge or view code, the report tools no node-side code, the
SPANK plugin only hook and util.  The tree passes; a copy with one
include against the layers, one unspelled cross-library include, or one
include of the daemon into the views fails, naming the file and line.'

: "${TRACER_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TRACER_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${SHARNESS_TEST_SRCDIR:=$TRACER_SRCDIR/tests}"
export TRACER_SRCDIR TRACER_BUILDDIR SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

check="$TRACER_SRCDIR/tools/check-layers"

test_expect_success 'the tree holds to its layers' '
    "$check" "$TRACER_SRCDIR" >out 2>&1 || { cat out; false; } &&
    test_must_be_empty out
'

# A copy of the sources the check reads, and one change to it.
copy_tree ()
{
    rm -rf tree && mkdir tree &&
    (cd "$TRACER_SRCDIR" &&
        tar cf - libtracer collector analysis prolog spank) |
    (cd tree && tar xf -)
}

plant ()
{
    # plant FILE LINE: add LINE after the file's config.h include
    sed -i "/#include \"config.h\"/a $2" "tree/$1"
}

test_expect_success 'a library that includes a higher one fails' '
    copy_tree &&
    plant libtracer/record/store.c "#include \"libtracer/view/html.h\"" &&
    test_must_fail "$check" tree >out &&
    grep "^libtracer/record/store.c:[0-9]*: includes libtracer/view/html.h: record may not use libtracer/view" out &&
    test "$(wc -l <out)" -eq 1
'

test_expect_success 'the daemon that includes view code fails' '
    copy_tree &&
    plant collector/tracerd.c "#include \"libtracer/view/report.h\"" &&
    test_must_fail "$check" tree >out &&
    grep "^collector/tracerd.c:[0-9]*: .*may not use libtracer/view" out
'

test_expect_success 'the report tools that include node code fail' '
    copy_tree &&
    plant analysis/rows.c "#include \"libtracer/node/procs.h\"" &&
    test_must_fail "$check" tree >out &&
    grep "^analysis/rows.c:[0-9]*: .*may not use libtracer/node" out
'

test_expect_success 'the SPANK plugin that includes more than hook and util fails' '
    copy_tree &&
    plant spank/spank_tracer.c "#include \"libtracer/record/record.h\"" &&
    test_must_fail "$check" tree >out &&
    grep "^spank/spank_tracer.c:[0-9]*: .*may not use libtracer/record" out
'

test_expect_success 'a bare include of another library fails' '
    copy_tree &&
    plant libtracer/judge/diagnose.c "#include \"record.h\"" &&
    test_must_fail "$check" tree >out &&
    grep "^libtracer/judge/diagnose.c:[0-9]*: includes \"record.h\", which is not in libtracer/judge/" out
'

test_expect_success 'an include of the old flat library fails' '
    copy_tree &&
    plant analysis/view.c "#include \"libtracer/record.h\"" &&
    test_must_fail "$check" tree >out &&
    grep "^analysis/view.c:[0-9]*: includes libtracer/record.h: name its library" out
'

test_done
