#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='Parquet files from libtracer read back by an independent reader

tests/pqwrite writes the table a JSON spec describes with libtracer'"'"'s
Parquet writer; tests/node/read-parquet.mjs reads it with hyparquet (the
npm package pinned in tests/node/package-lock.json, installed by
tools/install-deps) and prints schema, metadata, layout and every value;
jq compares them with the spec exactly: 64-bit integers as decimal
strings on both sides, doubles bit for bit through one printer, -0, NaN
and the infinities as strings.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
PQWRITE=$B/tests/pqwrite
READER=$TRACER_SRCDIR/tests/node/read-parquet.mjs
# HYPARQUET and TRACER_NODE_MODULES: tests/sharness.d/00-tracer.sh

require_or_skip "jq" command -v jq
require_or_skip "tests/pqwrite (make -C tests pqwrite)" test -x "$PQWRITE"
require_or_skip "node and hyparquet in $TRACER_NODE_MODULES (tools/install-deps installs them)" \
    test_have_prereq HYPARQUET

# The spec's rows as the reader prints them, one row a line: int64 and
# timestamp values as strings (the spec gives big ones as strings already,
# which jq would otherwise round), everything else as it is.
want_rows ()
{
    jq -c '(.columns | map(.type)) as $t |
        (.rows // [])[] |
        [to_entries[] | .key as $i | .value |
         if . == null then null
         elif $t[$i] == "int64" or $t[$i] == "timestamp_ms" then tostring
         else . end]' "$1"
}

# The columns the reader should report for the spec, one a line.
want_columns ()
{
    jq -S -c '(.rows // []) as $rows |
        .columns | to_entries[] | .key as $i | .value |
        {name,
         type: {int32: "INT32", int64: "INT64", double: "DOUBLE",
                boolean: "BOOLEAN", string: "BYTE_ARRAY",
                timestamp_ms: "INT64"}[.type],
         repetition: (if .optional then "OPTIONAL" else "REQUIRED" end),
         logical: {string: "STRING", timestamp_ms: "TIMESTAMP_MILLIS"}[.type],
         converted: {string: "UTF8", timestamp_ms: "TIMESTAMP_MILLIS"}[.type],
         utc: (if .type == "timestamp_ms" then true else null end),
         null_count: (if ($rows | length) == 0 then null
                      else [$rows[] | select(.[$i] == null)] | length end)}' "$1"
}

# check SPEC: write SPEC as SPEC.parquet, read it back into SPEC.out and
# compare everything with the spec.
check ()
{
    "$PQWRITE" "$1" "$1.parquet" &&
    node "$READER" "$1.parquet" >"$1.out" &&
    want_rows "$1" >"$1.want-rows" &&
    jq -c ".rows[]" "$1.out" >"$1.got-rows" &&
    test_cmp "$1.want-rows" "$1.got-rows" &&
    want_columns "$1" >"$1.want-cols" &&
    jq -S -c ".columns[]" "$1.out" >"$1.got-cols" &&
    test_cmp "$1.want-cols" "$1.got-cols" &&
    jq -e --slurpfile out "$1.out" '
        (.rows // [] | length) as $n |
        (.row_group_rows // 1048576) as $g |
        $out[0] as $o |
        $o.num_rows == $n and
        $o.row_groups == (($n + $g - 1) / $g | floor) and
        $o.key_value == (.meta // {}) and
        $o.created_by == .created_by' "$1" >/dev/null
}

test_expect_success 'the installed hyparquet is the version package-lock.json pins' '
    jq -r ".packages[\"node_modules/hyparquet\"].version" \
        "$TRACER_SRCDIR/tests/node/package-lock.json" >want &&
    jq -r .version "$TRACER_NODE_MODULES/hyparquet/package.json" >got &&
    test_cmp want got &&
    test ! -e "$TRACER_SRCDIR/tests/node/node_modules"
'

test_expect_success 'every type, nulls and extreme values' '
    cat >types.json <<-\EOF &&
	{"root": "t", "created_by": "tracer 0402",
	 "columns": [
	  {"name": "i32", "type": "int32"},
	  {"name": "i64", "type": "int64", "optional": true},
	  {"name": "d", "type": "double", "optional": true},
	  {"name": "b", "type": "boolean", "optional": true},
	  {"name": "s", "type": "string", "optional": true},
	  {"name": "ts", "type": "timestamp_ms", "optional": true},
	  {"name": "dr", "type": "double"},
	  {"name": "sr", "type": "string"}],
	 "rows": [
	  [0, "0", 0.1, true, "plain", 1700000000123, 0, "a"],
	  [-2147483648, "-9223372036854775808", 1.7976931348623157e308, false,
	   "h\u00e9llo w\u00f6rld", "-9223372036854775808", -1.7976931348623157e308, ""],
	  [2147483647, "9223372036854775807", 5e-324, null,
	   "\u65e5\u672c\u8a9e \ud83d\ude00", "9223372036854775807", 2.2250738585072014e-308, "\u20ac"],
	  [1, "9007199254740993", "-0", true, "", "0", "-0", "x\u0000y"],
	  [-1, "-9007199254740993", "NaN", false, "\ufeffbom", "-1", "NaN", "z"],
	  [7, null, "Infinity", null, null, null, "Infinity", "\ud800\udc00"],
	  [8, "42", "-Infinity", true, "\u0000", "86400000", "-Infinity", "ok"],
	  [9, -5, null, false, "tab\there", -86400000, 2.225073858507201e-308, "q"],
	  [10, null, 1e-300, null, null, null, 123456789.125, "end"]],
	 "meta": {"k": "v", "caf\u00e9": "cr\u00e8me", "empty": ""}}
	EOF
    check types.json &&
    jq -e ".rows[3][2] == \"-0\" and .rows[2][2] == 5e-324 and .rows[0][5] == \"1700000000123\"" \
        types.json.out >/dev/null
'

test_expect_success 'the comparison itself fails on a wrong value' '
    jq ".rows[1][1] = \"-9223372036854775807\"" types.json >wrong.json &&
    want_rows wrong.json >wrong.want &&
    test_must_fail test_cmp wrong.want types.json.got-rows &&
    jq ".rows[3][2] = 0" types.json >wrong.json &&
    want_rows wrong.json >wrong.want &&
    test_must_fail test_cmp wrong.want types.json.got-rows
'

test_expect_success 'a 100 KB string among short ones' '
    jq -n "{columns: [{name: \"s\", type: \"string\"},
                      {name: \"n\", type: \"int32\", optional: true}],
            rows: [[\"a\", 1], [(\"\u00e9\" * 50000), null],
                   [(\"xyz\" * 40000), 3], [\"\", null]]}" >long.json &&
    check long.json &&
    test "$(jq ".rows[1][0] | length" long.json.out)" = 50000 &&
    test "$(jq ".rows[2][0] | length" long.json.out)" = 120000
'

test_expect_success 'an empty table: schema and metadata, no row groups' '
    cat >empty.json <<-\EOF &&
	{"root": "nothing",
	 "columns": [{"name": "a", "type": "int64"},
	             {"name": "b", "type": "string", "optional": true},
	             {"name": "c", "type": "timestamp_ms", "optional": true}],
	 "rows": [], "meta": {"x": "y"}}
	EOF
    check empty.json &&
    jq -e ".row_groups == 0 and .num_rows == 0 and .rows == [] and .created_by == null" \
        empty.json.out >/dev/null
'

test_expect_success 'many rows in several row groups and pages' '
    jq -n "{columns: [
              {name: \"id\", type: \"int32\"},
              {name: \"big\", type: \"int64\", optional: true},
              {name: \"x\", type: \"double\", optional: true},
              {name: \"flag\", type: \"boolean\"},
              {name: \"name\", type: \"string\", optional: true},
              {name: \"t\", type: \"timestamp_ms\"}],
            rows: [range(0; 2500) as \$i |
              [\$i,
               (if \$i % 7 == 3 then null else (\$i * 3037000493 | tostring) end),
               (if \$i % 5 == 0 then null else \$i / 8 end),
               (\$i % 3 == 0),
               (if \$i % 11 < 2 then null else \"row \(\$i) \u00e9\" end),
               (1700000000000 + \$i * 1000)]],
            row_group_rows: 1000, page_bytes: 256}" >many.json &&
    check many.json &&
    jq -e ".row_groups == 3" many.json.out >/dev/null &&
    # a page ends once its values reach 256 bytes: 64 int32s, 32 int64s,
    # 2048 booleans (so one page a row group); every page in its group
    jq -e "def pages(\$n): [1000, 1000, 500] |
               map([range(0; .)] | [_nwise(\$n) | length]) | add;
           .pages.id == pages(64) and .pages.t == pages(32) and
           .pages.flag == [1000, 1000, 500] and
           (.pages.big | length) > 3 and (.pages.name | length) > 3 and
           (.pages | to_entries | all(.value | add == 2500))" \
        many.json.out >/dev/null
'

test_expect_success 'pqwrite: a bad spec is exit 2 with a message, and no file' '
    while read -r name spec msg; do
        printf "%s\n" "$spec" >"$name.json" &&
        test_expect_code 2 "$PQWRITE" "$name.json" "$name.parquet" 2>err &&
        grep -q -F "$msg" err &&
        test ! -e "$name.parquet" || return 1
    done <<-\EOF
	notjson {"columns":[ pqwrite: notjson.json:
	unknownkey {"columns":[{"name":"a","type":"int32"}],"colour":1} unknown key "colour"
	badtype {"columns":[{"name":"a","type":"int8"}]} unknown type "int8"
	nocols {"rows":[]} "columns" must be an array
	zerocols {"columns":[]} 1 to 1024 columns
	dup {"columns":[{"name":"a","type":"int32"},{"name":"a","type":"string"}]} is defined twice
	dotname {"columns":[{"name":"a.b","type":"int32"}]} may not contain
	shortrow {"columns":[{"name":"a","type":"int32"}],"rows":[[1,2]]} row 1 is not an array of 1 values
	wrongval {"columns":[{"name":"a","type":"int32"}],"rows":[["x"]]} row 1: column
	range32 {"columns":[{"name":"a","type":"int32"}],"rows":[[2147483648]]} not a int32 value
	bad64 {"columns":[{"name":"a","type":"int64"}],"rows":[["12x"]]} not a int64 value
	baddbl {"columns":[{"name":"a","type":"double"}],"rows":[["nan"]]} not a double value
	required {"columns":[{"name":"a","type":"string"}],"rows":[["x"],[null]]} null in a required column
	badlimit {"columns":[{"name":"a","type":"int32"}],"page_bytes":-1} must be non-negative
	badmeta {"columns":[{"name":"a","type":"int32"}],"meta":{"k":1}} meta "k" is not a string
	EOF
'

test_expect_success 'pqwrite: usage and unreadable specs are exit 2, a failed write exit 1' '
    test_expect_code 2 "$PQWRITE" 2>err &&
    grep -q "^Usage: pqwrite SPEC.json OUT.parquet" err &&
    test_expect_code 2 "$PQWRITE" missing.json out.parquet 2>err &&
    grep -q "missing.json" err &&
    test_expect_code 1 "$PQWRITE" types.json no/such/dir/out.parquet 2>err &&
    grep -q "^pqwrite: no/such/dir" err
'

test_done
