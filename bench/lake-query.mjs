// Copyright (C) 2026 The tracer authors.
// SPDX-License-Identifier: GPL-2.0-or-later
//
// The centre's question of a Parquet lake of step summaries
// (tracer-report --export=parquet), asked by a reader independent of
// tracer: hyparquet, the version tests/node/package-lock.json pins.  For
// bench/run-lake-scale:
//
//   node lake-query.mjs DIR [FROM-DAY [TO-DAY]]
//
// reads the parts of the days FROM-DAY to TO-DAY (YYYY-MM-DD, both
// included; default every day) under DIR, only the columns it needs
// (account, jobstep and the core-hours), and prints the core-hours by
// account as tracer-report --waste --by=account -P does, largest waste
// first, then TOTAL:
//
//   Account|Steps|Rows|CoreH|CoreHUsed|CoreHWaste
//
// and on standard error one line: files=N rows=R bytes_read=B
// bytes_files=F (B: what was read of the files, F: their size).
//
// hyparquet comes from $TRACER_NODE_MODULES (default
// /usr/local/lib/tracer-tests/node_modules, where tools/install-deps
// puts it).  Exit 1 with a message when a part cannot be read, 2 on
// usage.

import { readdirSync, statSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import path from 'node:path'

const modules = process.env.TRACER_NODE_MODULES ||
  '/usr/local/lib/tracer-tests/node_modules'

function die (msg, code = 1) {
  process.stderr.write(`lake-query: ${msg}\n`)
  process.exit(code)
}

const args = process.argv.slice(2)
if (args.length < 1 || args.length > 3) {
  die('usage: node lake-query.mjs DIR [FROM-DAY [TO-DAY]]', 2)
}
const [dir, from = '0000-00-00', to = '9999-99-99'] = args

let hp
try {
  hp = await import(pathToFileURL(path.join(modules, 'hyparquet', 'src',
    'node.js')).href)
} catch (e) {
  die(`cannot load hyparquet from ${modules}: ${e.message}`)
}

const columns = ['account', 'jobstep', 'core_hours_allocated',
  'core_hours_used', 'core_hours_wasted']
const byAccount = new Map()
let files = 0
let rows = 0
let bytesRead = 0
let bytesFiles = 0

const days = readdirSync(dir)
  .filter(d => /^day=\d{4}-\d{2}-\d{2}$/.test(d))
  .map(d => d.slice(4))
  .filter(d => d >= from && d <= to)
  .sort()
for (const day of days) {
  const ddir = path.join(dir, `day=${day}`)
  for (const name of readdirSync(ddir).filter(f => /^part-\d+\.parquet$/.test(f)).sort()) {
    const file = path.join(ddir, name)
    let buf
    try {
      buf = await hp.asyncBufferFromFile(file)
    } catch (e) {
      die(`${file}: ${e.message}`)
    }
    bytesFiles += statSync(file).size
    // count what the reader really fetches: the footer and the chunks
    // of the columns asked for
    const counted = {
      byteLength: buf.byteLength,
      slice (start, end) {
        bytesRead += (end ?? buf.byteLength) - start
        return buf.slice(start, end)
      }
    }
    let data
    try {
      data = await hp.parquetReadObjects({ file: counted, columns })
    } catch (e) {
      die(`${file}: ${e.message}`)
    }
    files++
    for (const r of data) {
      const key = r.account ?? ''
      let a = byAccount.get(key)
      if (!a) {
        a = { steps: new Set(), rows: 0, alloc: null, used: null, waste: null }
        byAccount.set(key, a)
      }
      a.steps.add(r.jobstep)
      a.rows++
      // null is unknown: it adds nothing, and a sum of nothing is unknown
      for (const [k, c] of [['alloc', 'core_hours_allocated'],
        ['used', 'core_hours_used'], ['waste', 'core_hours_wasted']]) {
        if (r[c] !== null && r[c] !== undefined) a[k] = (a[k] ?? 0) + r[c]
      }
    }
    rows += data.length
  }
}

const fmt = v => (v === null ? '' : v.toFixed(2))
const out = ['Account|Steps|Rows|CoreH|CoreHUsed|CoreHWaste']
const total = { steps: 0, rows: 0, alloc: null, used: null, waste: null }
for (const [key, a] of [...byAccount].sort((x, y) => (y[1].waste ?? 0) - (x[1].waste ?? 0))) {
  out.push([key, a.steps.size, a.rows, fmt(a.alloc), fmt(a.used),
    fmt(a.waste)].join('|'))
  total.steps += a.steps.size
  total.rows += a.rows
  for (const k of ['alloc', 'used', 'waste']) {
    if (a[k] !== null) total[k] = (total[k] ?? 0) + a[k]
  }
}
out.push(['TOTAL', total.steps, total.rows, fmt(total.alloc), fmt(total.used),
  fmt(total.waste)].join('|'))
process.stdout.write(out.join('\n') + '\n')
process.stderr.write(`files=${files} rows=${rows} bytes_read=${bytesRead} ` +
  `bytes_files=${bytesFiles}\n`)
