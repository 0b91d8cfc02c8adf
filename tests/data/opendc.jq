# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The OpenDC tables that tracer-report --export=opendc must write for an
# array of records, computed here from the records alone (doc/export.md
# gives the rules), in the form tests/node/read-parquet.mjs prints rows:
# INT64 values and timestamps as decimal strings.
#   {"tasks": [[id, name, submission_time, duration, cpu_count,
#               cpu_capacity, mem_capacity], ...],
#    "fragments": [[id, duration, cpu_count, cpu_usage], ...]}

def num_or($x): if type == "number" then . else $x end;

def duration_ms:
  if (.time.end_unix_ms | type) == "number"
     and .time.end_unix_ms >= .time.start_unix_ms
  then .time.end_unix_ms - .time.start_unix_ms
  elif (.time.elapsed_s | type) == "number"
  then .time.elapsed_s * 1000 | round
  else 0 end;

def cpus:
  (if (.request | has("cpus_on_node")) then .request.cpus_on_node
   elif (.request | has("cpus_per_task")) and (.request | has("tasks_on_node"))
   then .request.cpus_per_task * .request.tasks_on_node
   else 0 end) as $granted
  | if $granted > 0 then $granted
    elif (.host.topology.bound.pus // 0) > 0 then .host.topology.bound.pus
    elif (.host.cpus_online // 0) > 0 then .host.cpus_online
    else ([.series.metrics.cpu_cores.max[]?] | max // 0 | ceil) end
  | if . < 1 then 1 else round end;

def mem_mib:
  (.summary.memory.peak_bytes
   | num_or(null)) as $peak
  | (if $peak != null and $peak >= 0 then $peak
     else [0, .series.metrics.mem_bytes.max[]?] | max end) as $b
  | $b / 1048576 | ceil;

# [[duration, usage], ...] of a record lasting $dur ms at $mhz
def fragments($dur; $mhz):
  (.series.t_s // []) as $t
  | (.series.metrics.cpu_cores.mean // []) as $m
  | if ($t | length) == 0 or ($m | length) != ($t | length) then
      [[$dur, ((.summary.cpu.total_s | num_or(-1)) as $c
               | if $c >= 0 then $c / ($dur / 1000) else 0 end) * $mhz]]
    else
      reduce range(0; $t | length) as $k ({from: 0, out: []};
        (if $k + 1 < ($t | length) then
           ($t[$k + 1] * 1000) as $n
           | if $n < $dur then $n | round else $dur end
         else $dur end) as $to
        | if $to <= .from then .
          else .out += [[$to - .from, $m[$k] * $mhz]] | .from = $to end)
      | .out
    end;

[ .[]
  | select((.host.topology.cpu_mhz // 0) > 0)
  | . as $r
  | duration_ms as $dur
  | select($dur > 0)
  | { name: "\(.identity.job_id).\(.identity.step_id)@\(.identity.node)",
      start: .time.start_unix_ms, dur: $dur, cpus: cpus,
      mhz: .host.topology.cpu_mhz, mem: mem_mib,
      frags: ($r | fragments($dur; $r.host.topology.cpu_mhz)) } ]
| sort_by(.start, .name)
| to_entries
| { tasks: map((.key + 1) as $id | .value
               | [$id, .name, (.start | tostring), (.dur | tostring), .cpus,
                  .cpus * .mhz, (.mem | tostring)]),
    fragments: [ .[] | (.key + 1) as $id | .value as $v | $v.frags[]
                 | [$id, (.[0] | tostring), $v.cpus, .[1]] ] }
