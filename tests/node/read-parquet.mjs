// Copyright (C) 2026 The tracer authors.
// SPDX-License-Identifier: GPL-2.0-or-later
//
// Read a Parquet file with hyparquet, a reader independent of tracer's
// writer, and print it as JSON for t/0402 to compare with what was
// written:
//
//   node read-parquet.mjs FILE
//
// {"num_rows": N, "columns": [{"name", "type" (physical), "repetition",
//  "logical" ("STRING", "TIMESTAMP_MILLIS", ... or null), "converted"
//  (converted_type or null), "utc" (isAdjustedToUTC of a timestamp, else
//  null), "null_count" (summed over the row groups' statistics, or
//  null)}], "row_groups": K, "pages": {COLUMN: [the num_values of each of
//  its data pages, in file order]}, "key_value": {...}, "created_by":
//  "..." or null, "rows": [[...], ...]}
//
// Every value is printed exactly: INT64 and timestamps as the decimal
// string of the raw integer (ms), doubles as JSON numbers except NaN,
// Infinity, -Infinity and -0, which are strings, strings decoded
// strictly (invalid UTF-8 is an error, a BOM is kept).
//
// hyparquet comes from $TRACER_NODE_MODULES (default
// /usr/local/lib/tracer-tests/node_modules, where tools/install-deps puts
// the version pinned in package-lock.json).  Exit 1 with a message when
// the file cannot be read.

import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import path from 'node:path'

const modules = process.env.TRACER_NODE_MODULES ||
  '/usr/local/lib/tracer-tests/node_modules'

function die (msg) {
  process.stderr.write(`read-parquet: ${msg}\n`)
  process.exit(1)
}

if (process.argv.length !== 3) {
  process.stderr.write('Usage: node read-parquet.mjs FILE\n')
  process.exit(2)
}
const file = process.argv[2]

let hp, hpcolumn
try {
  const src = path.join(modules, 'hyparquet', 'src')
  hp = await import(pathToFileURL(path.join(src, 'node.js')).href)
  hpcolumn = await import(pathToFileURL(path.join(src, 'column.js')).href)
} catch (e) {
  die(`cannot load hyparquet from ${modules}: ${e.message}`)
}

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const parsers = {
  // raw milliseconds (a BigInt), not a Date that would lose the integer
  timestampFromMilliseconds: (ms) => ms,
  stringFromBytes: (bytes) => bytes && strict.decode(bytes)
}

function double (v) {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return 'Infinity'
  if (v === -Infinity) return '-Infinity'
  if (Object.is(v, -0)) return '-0'
  return v
}

function cell (v, col) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return v.toString()
  if (col.type === 'DOUBLE' || col.type === 'FLOAT') return double(v)
  if (v instanceof Date) die(`column ${col.name}: got a Date, not the raw value`)
  if (v instanceof Uint8Array) die(`column ${col.name}: got bytes, not a string`)
  return v
}

try {
  const bytes = readFileSync(file)
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
  const meta = hp.parquetMetadata(buf, { parsers })
  const leaves = meta.schema.slice(1)
  const columns = leaves.map((e, i) => {
    let nulls = null
    for (const rg of meta.row_groups) {
      const n = rg.columns[i].meta_data?.statistics?.null_count
      if (n !== undefined) nulls = (nulls ?? 0) + Number(n)
    }
    const lt = e.logical_type
    return {
      name: e.name,
      type: e.type,
      repetition: e.repetition_type,
      logical: lt ? (lt.type === 'TIMESTAMP' ? `TIMESTAMP_${lt.unit}` : lt.type) : null,
      converted: e.converted_type ?? null,
      utc: lt && lt.type === 'TIMESTAMP' ? lt.isAdjustedToUTC : null,
      null_count: nulls
    }
  })
  const keyValue = {}
  for (const kv of meta.key_value_metadata ?? []) keyValue[kv.key] = kv.value ?? null

  // The pages of every column chunk, walked with hyparquet's page header
  // reader: each chunk must be exactly its pages, and the values of its
  // pages must add up to the chunk's.
  const pages = Object.fromEntries(columns.map(c => [c.name, []]))
  const view = new DataView(buf)
  meta.row_groups.forEach((rg, g) => {
    rg.columns.forEach((cc, i) => {
      const md = cc.meta_data
      const start = Number(md.data_page_offset)
      const end = start + Number(md.total_compressed_size)
      const reader = { view, offset: start }
      let values = 0
      while (reader.offset < end) {
        const h = hpcolumn.parquetHeader(reader)
        if (h.type !== 'DATA_PAGE') throw new Error(`row group ${g} column ${i}: a ${h.type} page`)
        reader.offset += h.compressed_page_size
        pages[columns[i].name].push(h.data_page_header.num_values)
        values += h.data_page_header.num_values
      }
      if (reader.offset !== end) throw new Error(`row group ${g} column ${i}: pages overrun the chunk`)
      if (BigInt(values) !== BigInt(md.num_values)) {
        throw new Error(`row group ${g} column ${i}: pages hold ${values} values, the chunk says ${md.num_values}`)
      }
    })
  })

  let rows = []
  if (Number(meta.num_rows) > 0) {
    await hp.parquetRead({
      file: buf,
      metadata: meta,
      parsers,
      rowFormat: 'array',
      onComplete: (r) => { rows = r }
    })
  }
  const out = {
    num_rows: Number(meta.num_rows),
    columns,
    row_groups: meta.row_groups.length,
    pages,
    key_value: keyValue,
    created_by: meta.created_by ?? null,
    rows: rows.map(r => Array.from(r, (v, i) => cell(v, columns[i])))
  }
  process.stdout.write(JSON.stringify(out) + '\n')
} catch (e) {
  die(`${file}: ${e.message}`)
}
