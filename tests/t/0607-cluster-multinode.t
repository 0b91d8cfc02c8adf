#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='a two-node test cluster: one record per node of a step

Brings up tests/cluster with --nodes 2: every node has its own network,
UTS and mount namespace, slurmd and tracerd.  A step on both nodes gives
one record per node, each made by that node'"'"'s tracerd, and "down"
leaves no process, namespace, network link or cgroup dir behind, also
after a failed start.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "ip, nsenter and unshare (tools/install-deps)" \
    sh -c 'command -v ip && command -v nsenter && command -v unshare'
IP=$(command -v ip)

# wait_records JOBID N: wait until the store has N records of the job
# (each node's tracerd forwards its own); they are left in rec.json.
wait_records ()
{
    wait_for "wait_record $1 && test \"\$(jq length rec.json)\" = $2" 30
}

# The processes, namespaces and links of the running cluster, to check
# that "down" ends them: pids of every daemon and namespace holder; the
# namespaces of the holders; the links that carry the cluster's alias.
snapshot ()
{
    cat "$TRACER_CLUSTER_DIR"/run/*.pid \
        "$TRACER_CLUSTER_DIR"/nodes/*/*.pid >pids &&
    for p in $(cat "$TRACER_CLUSTER_DIR"/nodes/*/nodens.pid); do
        readlink /proc/$p/ns/net /proc/$p/ns/uts /proc/$p/ns/mnt ||
            return 1
    done >namespaces &&
    br=$("$IP" -o -4 addr show | awk -v a="$subnet.254/24" \
        "\$4 == a { print \$2 }") &&
    test -n "$br" &&
    tag=$(cat "/sys/class/net/$br/ifalias") &&
    echo "$tag" >tag &&
    links_with_tag "$tag" >links
}

# A path as /proc/PID/mountinfo writes it (white space as octal escapes).
mnt_esc ()
{
    printf '%s' "$1" | sed 's/ /\\040/g; s/	/\\011/g'
}

links_with_tag ()
{
    for f in /sys/class/net/*/ifalias; do
        test "$(cat "$f" 2>/dev/null)" = "$1" || continue
        d=${f%/ifalias}
        echo "${d##*/}"
    done
}

# Nothing of the cluster is left: no process of pids, no process in one
# of its namespaces or naming its directory, no link with its alias, no
# slurm_<node> cgroup dir.
nothing_left ()
{
    rc=0
    for pid in $(cat pids); do
        ! tr_pid_running "$pid" || { echo "pid $pid alive" >&2; rc=1; }
    done
    for p in /proc/[0-9]*; do
        for ns in net uts mnt; do
            l=$(readlink "$p/ns/$ns" 2>/dev/null) || continue
            ! grep -qxF "$l" namespaces ||
                { echo "${p#/proc/} in $l" >&2; rc=1; }
        done
        tr -d "\\0" 2>/dev/null <"$p/cmdline" |
            grep -qF -e "$TRACER_CLUSTER_DIR" -e "$TRACER_CLUSTER_ROOT" &&
            { echo "${p#/proc/} names the cluster dir" >&2; rc=1; }
    done
    test -z "$(links_with_tag "$(cat tag)")" ||
        { echo "links left: $(links_with_tag "$(cat tag)")" >&2; rc=1; }
    for n in $TRACER_CLUSTER_NODES; do
        ! ls -d /sys/fs/cgroup/*/slurm_"$n" 2>/dev/null ||
            { echo "cgroup dirs of $n left" >&2; rc=1; }
    done
    ! grep -F " $(mnt_esc "$TRACER_CLUSTER_DIR")/" /proc/self/mountinfo ||
        { echo "mounts left" >&2; rc=1; }
    return $rc
}

test_expect_success 'a two-node cluster comes up in seconds' '
    start=$(date +%s) &&
    cluster_up --nodes 2 --plugstack-args "enable=optin" &&
    echo "cluster up in $(( $(date +%s) - start )) s" &&
    n1=$(cluster_node 1) && n2=$(cluster_node 2) &&
    test -n "$n1" && test -n "$n2" && test "$n1" != "$n2" &&
    subnet=$(scontrol -o show node "$n1" |
        sed -n "s/.* NodeAddr=\(10\.[0-9]*\.[0-9]*\)\.1 .*/\1/p") &&
    test -n "$subnet" &&
    snapshot &&
    test $(wc -l <pids) -eq 8 &&
    test $(wc -l <links) -eq 3
'

test_expect_success 'both nodes are idle' '
    sinfo -h -N -o "%N %t" | sort >states &&
    printf "%s idle\n" "$n1" "$n2" | sort >expect &&
    test_cmp expect states
'

test_expect_success 'status shows every node' '
    cluster_status >status.out &&
    grep "node $n1 ($subnet.1)" status.out &&
    grep "node $n2 ($subnet.2)" status.out &&
    test $(grep -c "slurmd *running" status.out) = 2 &&
    test $(grep -c "tracerd *running" status.out) = 2 &&
    test $(grep -c "namespaces *running" status.out) = 2
'

test_expect_success 'srun -N2 runs on both nodes, each under its own hostname' '
    srun -N2 hostname | sort >hosts &&
    printf "%s\n" "$n1" "$n2" | sort >expect &&
    test_cmp expect hosts
'

# Per node: hostname, network namespace, eth0 address, interface count.
test_expect_success 'each node has its own network namespace and address' '
	cat >netns.sh <<-\EOF &&
	addr=$("$IP" -o -4 addr show dev eth0 | awk "{ print \$4 }")
	echo $(hostname) $(readlink /proc/self/ns/net) $addr \
	    $(grep -c : /proc/net/dev)
	EOF
    IP=$IP srun -N2 sh ./netns.sh >netns.out &&
    cat netns.out &&
    test $(wc -l <netns.out) = 2 &&
    grep -qx "$n1 net:\[[0-9]*\] $subnet.1/24 2" netns.out &&
    grep -qx "$n2 net:\[[0-9]*\] $subnet.2/24 2" netns.out &&
    test $(cut -d" " -f2 netns.out | sort -u | wc -l) = 2 &&
    ! grep -F "$(readlink /proc/self/ns/net)" netns.out
'

test_expect_success 'the node sees its own run dir at the plugin socket path' '
    node_exec "$n1" grep -F " $(mnt_esc "$TRACER_CLUSTER_DIR")/run/node " \
        /proc/self/mountinfo &&
    node_exec "$n2" test -S "$TRACER_CLUSTER_ROOT/run/node/tracerd.sock" &&
    ! test -e "$TRACER_CLUSTER_DIR/run/node/tracerd.sock"
'

test_expect_success 'srun -N2 --tracer: one record per node, CPU within 5%' '
    srun -N2 --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2;
        echo \$SLURMD_NODENAME \$($BURN cpu=1)" >burn.out 2>burn.err &&
    job=$(sed -n "s/^JOB=//p" burn.err | head -n1) &&
    echo "$job" >job1 &&
    wait_records "$job" 2 &&
    jq -r ".[] | \"\(.identity.node) \(.identity.node_index)\"" rec.json |
        sort >nodes.out &&
    printf "%s\n" "$n1 0" "$n2 1" >expect &&
    test_cmp expect nodes.out &&
    for n in $n1 $n2; do
        sed -n "s/^$n //p" burn.out >burn.$n.json &&
        within "$(jq ".[] | select(.identity.node == \"$n\") |
                     .summary.cpu.total_s" rec.json)" \
            "$(jq .cpu_s burn.$n.json)" 5 || return 1
    done
'

test_expect_success 'each record was made by the tracerd of its own node' '
    jq -r ".[] | \"\(.identity.node) \(.host.hostname)\"" rec.json |
        sort >made.out &&
    printf "%s\n" "$n1 $n1" "$n2 $n2" | sort >expect &&
    test_cmp expect made.out &&
    for n in $n1 $n2; do
        grep -q "step tracertest/$job/0/$n: record written" \
            "$(tracerd_log $n)" || return 1
    done &&
    ls "$TRACER_CLUSTER_DIR"/store/tracertest/jobs/*/"$job" >files &&
    printf "%s\n" "0.$n1.json" "0.$n2.json" >expect &&
    test_cmp expect files
'

# tracer-report merges the records: one "Step 0 on 2 nodes" block with
# the totals, then one line per node.
test_expect_success 'tracer-report -j merges the step of both nodes' '
    $REPORT -j "$job" >view.out &&
    cat view.out &&
    grep -q "^  Step 0 on 2 nodes (sh): COMPLETED" view.out &&
    grep -q "Nodes: *$n1, $n2; 2 of 2 nodes" view.out &&
    grep -q "Step 0 on $n1: COMPLETED" view.out &&
    grep -q "Step 0 on $n2: COMPLETED" view.out &&
    total=$(jq "[.[].summary.cpu.total_s] | add" rec.json) &&
    shown=$(sed -n "s/^    CPU time: *\([0-9.]*\) s.*/\1/p" view.out |
        head -n1) &&
    within "$shown" "$total" 1 &&
    test $(grep -c "signature valid" view.out) = 2
'

# The merged view shows what each node's record says beyond its figures,
# as a one-node step does: here a real segfault (perl reads a C string at
# address 8, which the kernel logs) on the second node only.
test_expect_success 'the merged view shows a node'"'"'s kernel evidence under that node' '
    srun -N2 --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2
        if [ \$SLURM_NODEID = 1 ]; then
            perl -e \"sleep 3; my \\\$x = unpack(q(p), pack(q(Q), 8))\"
        fi; true" 2>segv.err &&
    job=$(sed -n "s/^JOB=//p" segv.err | head -n1) &&
    wait_records "$job" 2 &&
    test "$(jq "[.[] | select(.identity.node == \"$n2\") | .events[] |
        select(.kind == \"segfault\" and .tool == \"perl\")] | length" \
        rec.json)" = 1 &&
    test "$(jq "[.[] | select(.identity.node == \"$n1\") | .events // [] |
        .[]] | length" rec.json)" = 0 &&
    $REPORT -j "$job" >segv.view &&
    cat segv.view &&
    grep -q "^  Step 0 on 2 nodes (sh): COMPLETED" segv.view &&
    sed -n "/^    On $n2:\$/,\$p" segv.view >segv.n2 &&
    grep -q "^    Events: *1 from the kernel log" segv.n2 &&
    grep -q "segfault perl\[[0-9]*\]" segv.n2 &&
    ! grep -q "^    On $n1:" segv.view
'

# An srun inside a batch job carries the batch node's SLURMD_NODENAME in
# its environment to every node: each record must still name its own.
test_expect_success 'sbatch -N2 with an inner srun: each node named right' '
    sbatch -N2 --tracer --parsable --wrap "srun true" >sb.out &&
    sbjob=$(cat sb.out) &&
    wait_records "$sbjob" 3 &&
    jq -r ".[] | \"\(.identity.step_id) \(.identity.node)\"" rec.json |
        sort >steps.out &&
    printf "%s\n" "0 $n1" "0 $n2" "batch $n1" >expect &&
    test_cmp expect steps.out
'

# A run in progress on both nodes, seen from the shared store alone:
# each node's tracerd writes its own live summary (store.live_interval,
# 30 s by default), and removes it when the step ends.
test_expect_success 'a run in progress on two nodes: --run shows a running task on each, from the store' '
    stop=$PWD/mn-stop && rm -f "$stop" &&
    for n in $n1 $n2; do
        sbatch --parsable --tracer=tag=run:mn-live -w $n -o /dev/null \
            --wrap "for i in \$(seq 120); do test -e \"$stop\" && break; sleep 1; done" \
            >>mn.jobs || return 1
    done &&
    live=$TRACER_STORE/$TRACER_CLUSTER_NAME/live &&
    wait_for "test -f $live/$n1/0.tsv && test -f $live/$n2/0.tsv" 60 &&
    "$REPORT" --run=mn-live --json >mn.json &&
    jq -e "(.running | length) == 2
           and ([.tasks[] | select(.state == \"RUNNING\") | .node] | sort)
               == ([\"$n1\", \"$n2\"] | sort)
           and all(.tasks[]; .live.age_s <= 60 and .live.stale == false)" \
        mn.json &&
    "$REPORT" --run=mn-live >mn.out &&
    grep -q "^Running now: 2 tasks (figures at most 00:00:[0-5][0-9] old)\$" mn.out &&
    grep -q "^  $(head -1 mn.jobs) (.*) on $n1: " mn.out &&
    grep -q "^  $(tail -1 mn.jobs) (.*) on $n2: " mn.out &&
    touch "$stop" &&
    for j in $(cat mn.jobs); do wait_record $j || return 1; done &&
    wait_for "! test -e $live/$n1/0.tsv && ! test -e $live/$n2/0.tsv" 60 &&
    "$REPORT" --run=mn-live --json >mn-end.json &&
    jq -e ".running == [] and (.tasks | length) == 2
           and all(.tasks[]; .state == \"COMPLETED\")" mn-end.json
'

# The OpenDC export of a job of a batch step and two steps on both
# nodes: one task per step per node, read back by hyparquet, every value
# as tests/data/opendc.jq computes it from the job's records.
test_expect_success HYPARQUET 'a two-node, multi-step job exported for OpenDC and read back' '
    sbatch -N2 --tracer --parsable --wrap "srun -N2 $BURN cpu=1.5 >/dev/null;
        srun -N2 $BURN cpu=1,threads=2 >/dev/null" >ex.out &&
    exjob=$(cat ex.out) &&
    wait_for "wait_records $exjob 5" 120 &&
    $REPORT -j "$exjob" --export=opendc -o opendc 2>ex.err &&
    grep -q "^tracer-report: 5 tasks, [0-9]* fragments written to opendc$" \
        ex.err &&
    jq -f "$TRACER_SRCDIR/tests/data/opendc.jq" rec.json >ex.ref &&
    read_parquet opendc/tasks.parquet >ex.tasks &&
    read_parquet opendc/fragments.parquet >ex.frags &&
    jq -e -n --slurpfile r ex.ref --slurpfile t ex.tasks \
        --slurpfile f ex.frags "
        (\$r[0].tasks | length) == 5 and \$t[0].rows == \$r[0].tasks and
        \$f[0].rows == \$r[0].fragments and
        (\$f[0].rows | length) > 5" >/dev/null &&
    jq -r ".rows[] | .[1]" ex.tasks | sort >names.out &&
    printf "%s\n" "$exjob.0@$n1" "$exjob.0@$n2" "$exjob.1@$n1" \
        "$exjob.1@$n2" "$exjob.batch@$n1" | sort >expect &&
    test_cmp expect names.out
'

# A heterogeneous job: each component is a job of its own (S_JOB_ID),
# and the records name the leader and the component.
test_expect_success 'a heterogeneous job: records name leader and component' '
    # one component on each node (Slurm may put both on one otherwise)
    cat >het.sh <<-EOF &&
	#!/bin/sh
	#SBATCH -N1 -n1 --mem=100M -w $n1
	#SBATCH hetjob
	#SBATCH -N1 -n1 --mem=100M -w $n2
	srun --het-group=0,1 true
	EOF
    sbatch --tracer --parsable het.sh >het.out &&
    lead=$(cut -d";" -f1 het.out | cut -d+ -f1) &&
    wait_for "wait_record $((lead + 1))" 120 &&
    cp rec.json comp1.json &&
    # -j of the leader is the whole het job, as with sacct
    wait_for "wait_record $lead && test \$(jq length rec.json) = 3" 30 &&
    test "$(jq -r ".[].identity.job_id" rec.json | sort -n -u | tr "\n" " ")" \
        = "$lead $((lead + 1)) " &&
    jq "[.[] | select(.identity.job_id == \"$lead\")]" rec.json >lead.json &&
    mv lead.json rec.json &&
    jq -r ".[] | \"\(.identity.step_id) \(.identity.het_job_id) \(.identity.het_component)\"" \
        rec.json | sort >het0.out &&
    printf "%s\n" "0 $lead 0" "batch $lead 0" >expect &&
    test_cmp expect het0.out &&
    jq -r ".[] | \"\(.identity.job_id) \(.identity.step_id) \(.identity.het_job_id) \(.identity.het_component) \(.identity.node)\"" \
        comp1.json >het1.out &&
    node0=$(jq -r ".[0].identity.node" rec.json) &&
    node1=$(jq -r ".[0].identity.node" comp1.json) &&
    echo "$((lead + 1)) 0 $lead 1 $node1" >expect &&
    test_cmp expect het1.out &&
    test "$node0" != "$node1"
'

test_expect_success 'tracerd stopped on one node: the other still records' '
    tracerd_stop "$n2" &&
    ! test -e "$TRACER_CLUSTER_DIR/nodes/$n2/tracerd.pid" &&
    srun -N2 --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2" 2>half.err &&
    job2=$(sed -n "s/^JOB=//p" half.err | head -n1) &&
    wait_records "$job2" 1 &&
    test "$(jq -r ".[0].identity.node" rec.json)" = "$n1" &&
    tracerd_start "$n2" &&
    test -S "$TRACER_CLUSTER_DIR/nodes/$n2/run/tracerd.sock"
'

test_expect_success 'cluster down leaves nothing behind' '
    snapshot &&
    test $(wc -l <pids) -eq 8 &&
    cluster_down &&
    nothing_left
'

test_expect_success 'cluster down again is a no-op' '
    cluster_down &&
    ! cluster_status
'

test_expect_success 'a failed start leaves nothing behind either' '
    test_must_fail env SLURMD=/bin/false "$TRACER_CLUSTER" up \
        "$TRACER_CLUSTER_DIR" --nodename "$_tr_cluster_node" --nodes 2 \
        --timeout 10 >failed.out 2>&1 &&
    grep "start-up failed" failed.out &&
    . "$TRACER_CLUSTER_DIR/env" &&
    test -z "$(links_with_tag "$(cat tag)")" &&
    nothing_left &&
    ! test -e "$TRACER_CLUSTER_DIR/cluster.info"
'

test_done
