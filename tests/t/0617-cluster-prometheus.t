#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='Prometheus through node_exporter'"'"'s textfile collector (daemon.textfile_dir)

A real cluster runs real jobs of two users; tracerd writes its textfile,
Debian'"'"'s prometheus-node-exporter serves it and Debian'"'"'s prometheus
scrapes it every second, both on loopback with data of their own.
Through the HTTP API: the series exist while the jobs run, with the
labels of their records and no other user'"'"'s steps; their last values
agree with the records; they vanish once the jobs end; and every query
of the Grafana dashboard runs.'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
BURN=$B/tests/burn
DASH=$TRACER_SRCDIR/etc/tracer-grafana.json
PROMETHEUS=/usr/bin/prometheus
NODE_EXPORTER=/usr/bin/prometheus-node-exporter

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "prometheus and prometheus-node-exporter (tools/install-deps)" \
    test -x $PROMETHEUS -a -x $NODE_EXPORTER
require_or_skip "curl and jq" command -v curl jq

# The unprivileged user's job runs beside root's where it can.
if test_have_prereq TRACERTEST &&
   runuser -u tracertest -- test -x "$BURN" 2>/dev/null
then
    test_set_prereq USER_JOBS
fi

free_port ()
{
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# promq EXPR: an instant query; the answer in q.json, which must be a
# success.
promq ()
{
    curl -sS --max-time 10 --data-urlencode "query=$1" \
        "http://127.0.0.1:$(cat pport)/api/v1/query" >q.json &&
    jq -e ".status == \"success\"" q.json >/dev/null
}

# series EXPR: how many series the instant query EXPR gives.
series ()
{
    promq "$1" && jq ".data.result | length" q.json
}

# value EXPR: the one value of EXPR.
value ()
{
    promq "$1" && jq -e ".data.result | length == 1" q.json >/dev/null &&
    jq -r ".data.result[0].value[1]" q.json
}

# The workload: 2 CPU seconds and 32 MiB, then idle until the test
# says stop, so that the last figures written are the step's totals.
job_script ()
{
    printf '%s cpu=2,mem=32M,write=4M >/dev/null; ' "$BURN"
    printf 'for i in $(seq 300); do test -e %s && break; sleep 1; done\n' "$1"
}

kill_started ()
{
    for f in "$tmp/prometheus.pid" "$tmp/node_exporter.pid"; do
        test -f "$f" && kill "$(cat "$f")" 2>/dev/null
    done
    rm -rf "$tmp"
}

# store.live_interval is 30 s as deployed; 5 s, the least it may be,
# keeps the test under two minutes (every check waits for a write or
# two).
test_expect_success 'a cluster whose tracerd writes a textfile every 5 s' '
    cluster_up --plugstack-args "enable=optin" --store live_interval=5 &&
    tmp=$(mktemp -d /tmp/tr0617.XXXXXX) && echo "$tmp" >tmpdir &&
    chmod 755 "$tmp" && # the user'"'"'s job looks for its stop file there
    tr_atexit kill_started &&
    mkdir "$tmp/textfile" "$tmp/prometheus" &&
    echo "$tmp/textfile" >tfdir &&
    conf=$TRACER_CLUSTER_DIR/etc/tracer.yaml &&
    sed -i "s|^daemon:\$|daemon:\n  textfile_dir: \"$tmp/textfile\"|" "$conf" &&
    grep -x "  textfile_dir: \"$tmp/textfile\"" "$conf" &&
    tracerd_stop && tracerd_start &&
    wait_for "test -f \"$tmp/textfile/tracer.prom\"" 20 &&
    test "$(cat "$tmp/textfile/tracer.prom")" = "# EOF"
'

test_expect_success 'node_exporter serves the directory, Prometheus scrapes it every second' '
    tmp=$(cat tmpdir) &&
    free_port >nport && free_port >pport &&
    { $NODE_EXPORTER --web.listen-address=127.0.0.1:$(cat nport) \
          --collector.disable-defaults --collector.textfile \
          --collector.textfile.directory="$tmp/textfile" \
          >"$tmp/node_exporter.log" 2>&1 \
          3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
      echo $! >"$tmp/node_exporter.pid"; } &&
    cat >"$tmp/prometheus.yml" <<-EOF &&
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	scrape_configs:
	  - job_name: node
	    static_configs:
	      - targets: ["127.0.0.1:$(cat nport)"]
	EOF
    { $PROMETHEUS --config.file="$tmp/prometheus.yml" \
          --storage.tsdb.path="$tmp/prometheus" \
          --web.listen-address=127.0.0.1:$(cat pport) \
          >"$tmp/prometheus.log" 2>&1 \
          3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
      echo $! >"$tmp/prometheus.pid"; } &&
    wait_for "curl -sf http://127.0.0.1:$(cat pport)/-/ready >/dev/null" 60 &&
    wait_for "test \"\$(value \"up{job=\\\"node\\\"}\")\" = 1" 30 &&
    test "$(value node_textfile_scrape_error)" = 0
'

test_expect_success 'jobs of root and of another user run' '
    tmp=$(cat tmpdir) &&
    sbatch --parsable --tracer=tag=run:prom-root --mem=64M -o /dev/null \
        --chdir=/tmp --wrap "$(job_script "$tmp/stop.root")" >rjob &&
    if test_have_prereq USER_JOBS; then
        runuser -u tracertest -- sbatch --parsable --tracer=tag=run:prom-user \
            --mem=96M -o /dev/null --chdir=/tmp \
            --wrap "$(job_script "$tmp/stop.user")" >ujob
    fi &&
    rjob=$(cat rjob) &&
    wait_for "test \"\$(series \"tracer_step_cpu_seconds_total{job_id=\\\"$rjob\\\",step_id=\\\"batch\\\"}\")\" = 1" 60 &&
    { ! test -f ujob ||
      wait_for "test \"\$(series \"tracer_step_cpu_seconds_total{job_id=\\\"$(cat ujob)\\\",step_id=\\\"batch\\\"}\")\" = 1" 60; }
'

test_expect_success 'the file is 0644, whole, the only one there, and parsed without error' '
    tf=$(cat tfdir) &&
    test "$(stat -c "%U %a" "$tf/tracer.prom")" = "root 644" &&
    test "$(ls -A "$tf")" = tracer.prom &&
    test "$(tail -n 1 "$tf/tracer.prom")" = "# EOF" &&
    echo "textfile: $(wc -c <"$tf/tracer.prom") bytes," \
        "$(grep -vc "^#" "$tf/tracer.prom") samples" &&
    test "$(value node_textfile_scrape_error)" = 0 &&
    promtool check metrics <"$tf/tracer.prom" >lint.out 2>&1 ||
    { cat lint.out; false; }
'

# The jobs name their runs with their own tags (--tracer=tag=run:...):
# the job's choice, so no run, pipeline or process label comes of it
# (Prometheus drops a label whose value is empty).
test_expect_success 'while they run: each step has the labels of the scheduler and its own user' '
    rjob=$(cat rjob) &&
    promq "tracer_step_start_time_seconds{job_id=\"$rjob\"}" &&
    cp q.json rstart.json &&
    jq -e --arg c "$TRACER_CLUSTER_NAME" --arg n "$TRACER_NODENAME" "
        [.data.result[].metric] | length >= 1
        and all(.cluster == \$c and .node == \$n and .user == \"root\"
                and .partition != null and (.run // \"\") == \"\"
                and (.pipeline // \"\") == \"\"
                and .job == \"node\")
        and (map(.step_id) | index(\"batch\") != null)" rstart.json &&
    part=$(scontrol -o show job $rjob | sed -n "s/.* Partition=\([^ ]*\) .*/\1/p") &&
    jq -e --arg p "$part" "all(.data.result[].metric; .partition == \$p)" rstart.json &&
    test "$(value "tracer_step_memory_requested_bytes{job_id=\"$rjob\",step_id=\"batch\"}")" = 67108864 &&
    test "$(value "tracer_step_stalled_seconds{job_id=\"$rjob\",step_id=\"batch\"}")" = 0 &&
    promq "tracer_step_memory_current_bytes{job_id=\"$rjob\",step_id=\"batch\"}" &&
    jq -e ".data.result | length == 1" q.json
'

test_expect_success USER_JOBS 'no user'"'"'s labels carry another user'"'"'s steps' '
    rjob=$(cat rjob) && ujob=$(cat ujob) &&
    promq "tracer_step_start_time_seconds{job_id=\"$ujob\"}" &&
    jq -e "[.data.result[].metric] | length >= 1
           and all(.user == \"tracertest\" and (.run // \"\") == \"\")" q.json &&
    test "$(value "tracer_step_memory_requested_bytes{job_id=\"$ujob\",step_id=\"batch\"}")" = 100663296 &&
    # every series: the user its job has in the scheduler
    promq "tracer_step_start_time_seconds" &&
    jq -r ".data.result[].metric | \"\(.job_id) \(.user)\"" q.json | sort -u >owners &&
    while read j u; do
        test "$(scontrol -o show job "$j" | sed -n "s/.* UserId=\([^(]*\)(.*/\1/p")" = "$u" ||
        { echo "job $j labelled $u"; false; } || return 1
    done <owners &&
    test "$(series "tracer_step_start_time_seconds{user=\"tracertest\",job_id=\"$rjob\"}")" = 0 &&
    test "$(series "tracer_step_start_time_seconds{user=\"root\",job_id=\"$ujob\"}")" = 0
'

test_expect_success 'every query of the Grafana dashboard runs on these series' '
    jq -r "[.panels[] | .targets[]?.expr] + [.templating.list[] |
            select(.type == \"query\") | .query.query] | .[]" "$DASH" >exprs &&
    test "$(wc -l <exprs)" -gt 20 &&
    sed -e "s/\\\$__rate_interval/30s/g" \
        -e "s/label_values(\(.*\), *\([a-z_]*\))\$/count by (\2) (\1)/" \
        -e "s/\\\$[a-z_]*/.*/g" exprs >queries &&
    ! grep -q "\\\$" queries &&
    while read -r e; do
        promq "$e" || { echo "refused: $e"; cat q.json; false; } || return 1
    done <queries &&
    test "$(value "count(tracer_step_start_time_seconds{job_id=\"$(cat rjob)\"})")" -ge 1
'

# last EXPR: the last value of a series that has ended.
last ()
{
    value "last_over_time($1[10m])"
}

# burnt JOB: the batch step of JOB has 1.9 CPU seconds or more.
burnt ()
{
    _v=$(value "tracer_step_cpu_seconds_total{job_id=\"$1\",step_id=\"batch\"}") &&
    awk -v v="$_v" "BEGIN { exit !(v >= 1.9) }"
}

# batch_record JOB: the record of JOB's batch step, in batch.json.
batch_record ()
{
    "$B/analysis/tracer-report" -j "$1" --json >rec.json 2>/dev/null &&
    jq -e "[.[] | select(.identity.step_id == \"batch\")][0]" rec.json \
        >batch.json
}

test_expect_success 'after the burn: the last figures written agree with the records' '
    tmp=$(cat tmpdir) && rjob=$(cat rjob) &&
    sel="job_id=\"$rjob\",step_id=\"batch\"" &&
    # the burn is over once 2 CPU seconds are in; one more write after it
    wait_for "burnt $rjob" 60 &&
    m0=$(value "node_textfile_mtime_seconds") &&
    wait_for "test \"\$(value node_textfile_mtime_seconds)\" != \"$m0\"" 20 &&
    sleep 2 &&
    touch "$tmp/stop.root" "$tmp/stop.user" &&
    wait_job $rjob >/dev/null &&
    wait_for "batch_record $rjob" 60 &&
    R=$(jq .summary.cpu.total_s batch.json) &&
    P=$(last "tracer_step_cpu_seconds_total{$sel}") &&
    echo "CPU: record $R, last sample $P" &&
    # within the step'"'"'s use in one interval, which was idle
    awk -v r="$R" -v p="$P" "BEGIN { exit !(p <= r + 0.001 && r - p <= 0.5) }" &&
    R=$(jq .summary.memory.peak_bytes batch.json) &&
    P=$(last "tracer_step_memory_peak_bytes{$sel}") &&
    echo "memory peak: record $R, last sample $P" &&
    awk -v r="$R" -v p="$P" "BEGIN { exit !(p <= r && r - p <= 1048576 && p >= 33554432) }" &&
    test "$(last "tracer_step_memory_requested_bytes{$sel}")" = "$(jq .request.mem_bytes batch.json)" &&
    start=$(jq .time.start_unix_ms batch.json) &&
    awk -v s="$start" -v p="$(last "tracer_step_start_time_seconds{$sel}")" \
        "BEGIN { d = s / 1000 - p; exit !(d < 0.001 && d > -0.001) }" &&
    # storage bytes as the listing decides them (device or process
    # counters)
    R=$("$B/analysis/tracer-report" -j $rjob -P --noconvert -n \
            -o JobID,writebytes | sed -n "s/^$rjob\.batch|//p") &&
    P=$(last "tracer_step_write_bytes_total{$sel}") &&
    echo "written: record $R, last sample $P" &&
    test "$P" = "$R"
'

test_expect_success 'after the jobs: their series are gone, from the file and from Prometheus' '
    tf=$(cat tfdir) && rjob=$(cat rjob) &&
    { ! test -f ujob || wait_job $(cat ujob) >/dev/null; } &&
    wait_for "! grep -q \"job_id=\\\"$rjob\\\"\" \"$tf/tracer.prom\"" 30 &&
    { ! test -f ujob || ! grep -q "job_id=\"$(cat ujob)\"" "$tf/tracer.prom"; } &&
    wait_for "test \"\$(series \"tracer_step_start_time_seconds\")\" = 0" 30 &&
    test "$(series "{__name__=~\"tracer_.*\"}")" = 0 &&
    test "$(cat "$tf/tracer.prom")" = "# EOF"
'

test_expect_success 'tracerd removes the file when it stops' '
    tf=$(cat tfdir) &&
    tracerd_stop &&
    ! test -e "$tf/tracer.prom" &&
    tracerd_start &&
    wait_for "test -f \"$tf/tracer.prom\"" 20
'

test_expect_success 'stop the cluster' '
    cluster_down
'
test_done
