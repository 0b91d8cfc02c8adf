#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"; export SHARNESS_TEST_SRCDIR
test_description='tracer-run measures a command exactly, forwards signals and exits with its status'

. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
RUN=$B/collector/tracer-run
REPORT=$B/analysis/tracer-report
BURN=$B/tests/burn

test_expect_success 'root: the demo runs in its own cgroup with exact totals' '
    $RUN -q --no-sign --demo -o demo.json >workload.out &&
    $REPORT --allow-unsigned --json demo.json >recs.json &&
    test "$(jq -r ".[0].summary.cpu.source" recs.json)" = "cgroup-v1:cpuacct.usage" &&
    test "$(jq -r ".[0].summary.memory.exact" recs.json)" = true &&
    test "$(jq -r ".[0].outcome.state" recs.json)" = completed &&
    within "$(jq ".[0].summary.cpu.total_s" recs.json)" \
        "$(jq .cpu_s workload.out)" 5
'

test_expect_success 'CPU seconds and peak memory within 5% of the workload own view' '
    $RUN -q --no-sign -o burn.json -- $BURN cpu=2,mem=300M >burn.out &&
    $REPORT --allow-unsigned --json burn.json >b.json &&
    within "$(jq ".[0].summary.cpu.total_s" b.json)" "$(jq .cpu_s burn.out)" 5 &&
    within "$(jq ".[0].summary.memory.peak_bytes" b.json)" \
        "$(jq .maxrss_bytes burn.out)" 5
'

test_expect_success 'the cgroups tracer-run made are gone afterwards' '
    jq -r ".[0].cgroup.paths[]" b.json >paths &&
    test -s paths &&
    while read -r rel; do
        case $rel in /?*) ;; *) return 1 ;; esac &&
        test -z "$(ls -d /sys/fs/cgroup$rel /sys/fs/cgroup/*$rel 2>/dev/null)" ||
            return 1
    done <paths
'

test_expect_success 'process-tree mode: exact CPU from getrusage' '
    $RUN -q --no-sign --no-cgroup -o tree.json -- $BURN cpu=1,mem=50M,children=3,child_cpu=0.2 >tree.out &&
    $REPORT --allow-unsigned --json tree.json >t.json &&
    test "$(jq -r ".[0].cgroup.attach" t.json)" = process-tree &&
    test "$(jq -r ".[0].summary.cpu.source" t.json)" = "getrusage:RUSAGE_CHILDREN" &&
    within "$(jq ".[0].summary.cpu.total_s" t.json)" "$(jq .cpu_s tree.out)" 5
'

test_expect_success 'exit status is the command status' '
    test_expect_code 7 $RUN -q --no-sign -o e.json -- sh -c "exit 7" &&
    $REPORT --allow-unsigned --json e.json >e2.json &&
    test "$(jq -r ".[0].outcome.state" e2.json)" = failed &&
    test "$(jq ".[0].outcome.exit_code" e2.json)" = 7
'

test_expect_success 'a record that cannot go where -o says: the command is not run (125)' '
    test_expect_code 125 $RUN --no-sign -o "$PWD/no-such-dir/x.json" -- \
        sh -c "touch ran" 2>o.err &&
    ! test -e ran &&
    grep -qx "tracer-run: $PWD/no-such-dir: No such file or directory; the command was not run" o.err &&
    mkdir -p adir &&
    test_expect_code 125 $RUN --no-sign -o adir -- sh -c "touch ran" 2>o.err &&
    ! test -e ran &&
    grep -q "adir: not a regular file; the command was not run" o.err
'

test_expect_success 'a command killed by a signal gives 128+N' '
    test_expect_code 137 $RUN -q --no-sign -o k.json -- sh -c "kill -KILL \$\$" &&
    $REPORT --allow-unsigned --json k.json >k2.json &&
    test "$(jq ".[0].outcome.signal" k2.json)" = 9
'

test_expect_success 'a missing command gives 127' '
    test_expect_code 127 $RUN -q --no-sign -o m.json -- ./no-such-command 2>err &&
    grep -q "No such file or directory" err
'

test_expect_success 'SIGTERM to tracer-run reaches the command and is recorded' '
    $RUN -q --no-sign -o s.json -- sleep 60 &
    pid=$! &&
    sleep 1 &&
    kill -TERM $pid &&
    test_expect_code 143 wait $pid &&
    $REPORT --allow-unsigned --json s.json >s2.json &&
    test "$(jq ".[0].outcome.signal" s2.json)" = 15
'

test_expect_success 'tags given on the command line are in the record' '
    $RUN -q --no-sign -t pipeline:rnaseq -t sample:S1 -o tag.json -- true &&
    $REPORT --allow-unsigned --json tag.json >tag2.json &&
    test "$(jq -r ".[0].tags.pipeline" tag2.json)" = rnaseq &&
    test "$(jq -r ".[0].tags.sample" tag2.json)" = S1
'

test_expect_success '--pipeline: the command gets the run in TRACER_OPTS, the record its tags' '
    $RUN -q --no-sign -o pipe.json --pipeline demo -- sh -c env >pipe.env &&
    run=$(sed -n "s/^TRACER_RUN_ID=//p" pipe.env) &&
    expr "$run" : "demo-[0-9]\{8\}-[0-9]\{6\}-[0-9a-f]\{4\}\$" &&
    grep -x "TRACER_OPTS=tag=run:$run,tag=pipeline:demo" pipe.env &&
    grep -x "TRACER_PIPELINE=demo" pipe.env &&
    $REPORT --allow-unsigned --json pipe.json >pipe.rec &&
    test "$(jq -r ".[0].tags.run" pipe.rec)" = "$run" &&
    test "$(jq -r ".[0].tags.pipeline" pipe.rec)" = demo &&
    test "$(jq -r ".[0].tags.process" pipe.rec)" = driver &&
    ! grep "^TRACER_OPTS=.*process" pipe.env
'

test_expect_success '--pipeline: run and pipeline tags set by hand win; other settings stay' '
    TRACER_OPTS=interval=5,tag=run:mine $RUN -q --no-sign -o own.json \
        --pipeline demo -t pipeline:theirs -- sh -c env >own.env &&
    grep -x "TRACER_OPTS=interval=5,tag=run:mine,tag=pipeline:theirs" own.env &&
    grep -x "TRACER_RUN_ID=mine" own.env &&
    $REPORT --allow-unsigned --json own.json >own.rec &&
    test "$(jq -r ".[0].tags.run" own.rec)" = mine &&
    test "$(jq -r ".[0].tags.pipeline" own.rec)" = theirs &&
    $RUN -q --no-sign -o proc.json --pipeline demo -t process:launch -- true &&
    $REPORT --allow-unsigned --json proc.json >proc.rec &&
    test "$(jq -r ".[0].tags.process" proc.rec)" = launch &&
    $RUN -q --no-sign -o id.json --run-id nightly.7 -- sh -c env >id.env &&
    grep -x "TRACER_OPTS=tag=run:nightly.7" id.env &&
    ! grep TRACER_PIPELINE id.env
'

test_expect_success '--pipeline and --run-id refuse names that are not path-safe' '
    test_expect_code 2 $RUN -q --pipeline a/b -- true 2>err &&
    grep -e "--pipeline" err &&
    test_expect_code 2 $RUN -q --run-id "../x" -- true &&
    test_expect_code 2 $RUN -q --run-id "a,tag=x:y" -- true &&
    test_expect_code 2 $RUN -q --pipeline p -t run:a,b -- true 2>err &&
    grep "cannot hold" err
'

test_expect_success 'the record file is private to its owner' '
    test "$(stat -c %a demo.json)" = 600
'

test_expect_success 'an unsigned record is refused unless asked for' '
    test_expect_code 4 $REPORT demo.json 2>err &&
    grep -q "unsigned" err
'

test_expect_success 'a record file read where no store exists: nothing on stderr' '
    printf "store:\n  path: %s/no-store\n" "$PWD" >nostore.yaml &&
    TRACER_CONF=$PWD/nostore.yaml $REPORT --allow-unsigned demo.json \
        >view.out 2>view.err &&
    grep -q "tracer-run demo" view.out &&
    test_must_be_empty view.err
'

test_expect_success 'a store named with --store that is not there is still named' '
    $REPORT --allow-unsigned --store="$PWD/no-store" demo.json \
        >view.out 2>view.err &&
    grep -q "no-store" view.err
'

test_expect_success 'tracer-run says where the record went and how to read it' '
    $RUN --no-sign -- true 2>hint.err &&
    f=$(sed -n "s/^tracer-run: record written to \(tracer-true\.[0-9-]*\.[0-9]*\.json\) (see it with: tracer-report --allow-unsigned \1)\$/\1/p" hint.err) &&
    test -f "$f" &&
    $REPORT --allow-unsigned "$f" >/dev/null
'

test_expect_success 'the demo says what its JSON line is; the line alone is on stdout' '
    $RUN --no-sign --demo=cpu=0.1 -o d2.json >d2.out 2>d2.err &&
    grep -q "^tracer-run: the demo prints its own account of what it used on standard output, one JSON line" d2.err &&
    test "$(wc -l <d2.out)" = 1 &&
    jq -e ".cpu_s > 0 and .maxrss_bytes > 0" d2.out
'

test_expect_success 'default output name: tracer-<command>.<date-time>.<pid>.json' '
    mkdir -p names && (
        cd names &&
        printf "#!/bin/sh\n" >"odd name*" &&
        chmod +x "odd name*" &&
        $RUN -q --no-sign -- sh -c true &&
        $RUN -q --no-sign -- "./odd name*" &&
        $RUN -q --no-sign --demo=cpu=0.1 >/dev/null
    ) &&
    ls names >names.ls &&
    test "$(grep -c "\.json\$" names.ls)" = 3 &&
    grep -qx "tracer-sh\.[0-9]\{8\}-[0-9]\{6\}\.[0-9]*\.json" names.ls &&
    grep -qx "tracer-odd_name_\.[0-9]\{8\}-[0-9]\{6\}\.[0-9]*\.json" names.ls &&
    grep -qx "tracer-demo\.[0-9]\{8\}-[0-9]\{6\}\.[0-9]*\.json" names.ls &&
    for f in names/tracer-*.json; do
        $REPORT --allow-unsigned --json "$f" >/dev/null || return 1
    done
'

# tools/quickstart, the README's first command, on a tree already built
# (QUICKSTART_NO_INSTALL: no apt), as a new user reads it.
QS=$TRACER_SRCDIR/tools/quickstart
printf "store:\n  path: %s/no-store\nsigning:\n  munge_socket: %s/no-munged.sock\n" \
    "$PWD" "$PWD" >qs.yaml

test_expect_success 'quickstart without munged: the unsigned record explained, no raw error' '
    mkdir qs-tmp &&
    QUICKSTART_NO_INSTALL=1 TMPDIR=$PWD/qs-tmp TRACER_CONF=$PWD/qs.yaml \
        TRACER_BUILDDIR=$B "$QS" >qs.out 2>qs.err &&
    test_must_be_empty qs.err &&
    grep -q "^quickstart: the demo.s record is unsigned, as expected without a cluster" qs.out &&
    ! grep -q "Did you start munged\|Socket communication error" qs.out &&
    test "$(grep -c "munged was not running" qs.out)" = 1 &&
    grep -q "^    Record: *UNSIGNED: munged was not running" qs.out &&
    tr -s " \n" " " <qs.out | grep -q "(no answer on $PWD/no-munged.sock): start munged to have records signed" &&
    ! grep -q "^tracer-run:" qs.out &&
    ! grep -q "^{" qs.out &&
    grep -q "^quickstart: the demo counted itself [0-9.]* CPU-seconds and a [0-9]* MiB peak" qs.out &&
    if grep -q "could not give the demo a cgroup" qs.out
    then ! grep -q "page cache" qs.out
    else grep -q "its memory peak also counts the page cache" qs.out
    fi &&
    grep -q "^Job run\.[0-9.]* \"tracer-run demo\"" qs.out
'

test_expect_success 'quickstart keeps the record and its logs in a directory of its own' '
    dir=$(echo "$PWD"/qs-tmp/tracer-quickstart.*) &&
    test -d "$dir" &&
    grep -qx "quickstart: the record is $dir/demo.json (format: doc/record-format.md)" qs.out &&
    grep -qx "quickstart: logs: $dir" qs.out &&
    test -s "$dir/tracer-run.log" &&
    jq -e ".cpu_s > 0" "$dir/demo-own.json" &&
    $REPORT --allow-unsigned --json "$dir/demo.json" >/dev/null &&
    test "$(ls qs-tmp | wc -l)" = 1
'

test_expect_success 'quickstart ends with three commands to try, and they work' '
    dir=$(echo "$PWD"/qs-tmp/tracer-quickstart.*) &&
    sed -n "/^Next, try:/,\$s/^  \(\/.*\)/\1/p" qs.out >next.sh &&
    rm -f "$dir/job.html" &&
    test "$(wc -l <next.sh)" = 3 &&
    grep -q "/analysis/tracer-report --allow-unsigned .*/demo\.json --html -o .*/job\.html\$" next.sh &&
    grep -q "/collector/tracer-run --view -- " next.sh &&
    mkdir next && (
        cd next &&
        TRACER_CONF=$PWD/../qs.yaml sh -e ../next.sh >next.out 2>next.err
    ) &&
    grep -q "<html" "$dir/job.html" &&
    ls next/tracer-sleep.*.json &&
    test "$(grep -c "munge" next/next.err)" = 1 &&
    grep -qx "tracer-run: record left unsigned: munged was not running (no answer on $PWD/no-munged.sock): start munged to have records signed" next/next.err
'

test_expect_success ROOT,TRACERTEST 'quickstart without root: no apt, the process tree, said in words' '
    mkdir qs-user && chmod 1777 qs-user &&
    setpriv --reuid=tracertest --regid=tracertest --init-groups \
        env QUICKSTART_NO_INSTALL=1 "TMPDIR=$PWD/qs-user" \
        "TRACER_CONF=$PWD/qs.yaml" "TRACER_BUILDDIR=$B" "$QS" >qsu.out 2>qsu.err &&
    test_must_be_empty qsu.err &&
    grep -q "^quickstart: tracer-run could not give the demo a cgroup of its own" qsu.out &&
    ! grep -q "page cache" qsu.out &&
    grep -q "^  User/Group: *tracertest/" qsu.out &&
    grep -q "^quickstart: the record is $PWD/qs-user/tracer-quickstart\..*/demo\.json " qsu.out
'

# The group is the real gid's, by name, as tracerd names a job's; a gid
# with no name is shown as its number, never as "?".
test_expect_success 'the record names the real gid'"'"'s group; the view shows it' '
    $RUN -q --no-sign --no-cgroup -o grp.json -- true &&
    want=$(getent group "$(id -g)" | cut -d: -f1) &&
    test -n "$want" &&
    test "$(jq -r .identity.group grp.json)" = "$want" &&
    $REPORT --allow-unsigned grp.json >grp.out &&
    grep "^  User/Group: *$(id -un)/$want (uid $(id -u), gid $(id -g))" grp.out
'

test_expect_success ROOT,TRACERTEST 'another user'"'"'s run: that user'"'"'s group' '
    mkdir grp-user && chmod 1777 grp-user &&
    setpriv --reuid=tracertest --regid=tracertest --init-groups \
        $RUN -q --no-sign --no-cgroup -o grp-user/u.json -- true &&
    test "$(jq -r .identity.group grp-user/u.json)" = tracertest &&
    $REPORT --allow-unsigned grp-user/u.json >grpu.out &&
    grep "^  User/Group: *tracertest/tracertest " grpu.out
'

test_expect_success ROOT 'a gid without a name: no group recorded, the view shows the gid' '
    gid=54321 &&
    while getent group $gid >/dev/null; do gid=$((gid + 1)); done &&
    setpriv --regid=$gid --clear-groups \
        $RUN -q --no-sign --no-cgroup -o nogrp.json -- true &&
    test "$(jq -r ".identity.group // \"none\"" nogrp.json)" = none &&
    $REPORT --allow-unsigned nogrp.json >nogrp.out &&
    grep "^  User/Group: *root/$gid (uid 0, gid $gid)" nogrp.out &&
    ! grep -q "/?" nogrp.out
'

test_expect_success ROOT,TRACERTEST 'quickstart not as root, to install: refused, exit 2' '
    test_expect_code 2 setpriv --reuid=tracertest --regid=tracertest \
        --init-groups "$QS" >qsr.out 2>qsr.err &&
    grep -q "^quickstart: run as root" qsr.err &&
    test_must_be_empty qsr.out
'

test -x /usr/sbin/munged && test_set_prereq MUNGED
test_expect_success MUNGED 'quickstart with a munged: the record is signed, and says so' '
    munged_start &&
    printf "store:\n  path: %s/no-store\nsigning:\n  munge_socket: %s\n" \
        "$PWD" "$MUNGE_SOCKET" >qs-signed.yaml &&
    mkdir qs-signed &&
    QUICKSTART_NO_INSTALL=1 TMPDIR=$PWD/qs-signed TRACER_CONF=$PWD/qs-signed.yaml \
        TRACER_BUILDDIR=$B "$QS" >qss.out 2>qss.err &&
    munged_stop &&
    test_must_be_empty qss.err &&
    grep -q "^quickstart: the demo.s record is signed with MUNGE" qss.out &&
    ! grep -q "unsigned" qss.out &&
    grep -q "^quickstart: the record is " qss.out
'

# A signed record read a second time: munged decoded its credential
# before, and says so in its own words on the record's line, while the
# signature is still valid.
test_expect_success MUNGED 'a record read again reads as a fresh one: a replayed credential is no news' '
    munged_start &&
    printf "store:\n  path: %s/no-store\nsigning:\n  munge_socket: %s\n" \
        "$PWD" "$MUNGE_SOCKET" >signed.yaml &&
    TRACER_CONF=$PWD/signed.yaml $RUN -q -o signed1.json -- true &&
    TRACER_CONF=$PWD/signed.yaml $RUN -q -o signed2.json -- true &&
    TRACER_CONF=$PWD/signed.yaml $REPORT signed1.json signed2.json \
        >first.out 2>first.err &&
    TRACER_CONF=$PWD/signed.yaml $REPORT signed1.json signed2.json \
        >again.out 2>again.err &&
    munged_stop &&
    test_must_be_empty first.err &&
    test_must_be_empty again.err &&
    test "$(grep -c "^    Record: *signature valid (uid 0)$" first.out)" = 2 &&
    test "$(grep -c "^    Record: *signature valid (uid 0)$" again.out)" = 2 &&
    ! grep -q "Replayed" again.out &&
    ! grep -q "^  Signatures:" first.out &&
    ! grep -q "^  Signatures:" again.out
'

# A user's tracer-run where munged runs: the record is the user's own,
# unsigned (a user's signature is trusted by nobody, so a signed one
# read as forged, exit 5, to its own user), and the command tracer-run
# prints to see it works, as does --view.
test_expect_success MUNGED,TRACERTEST 'a user reads their own tracer-run record where munged runs' '
    munged_start &&
    mkdir -p own && chown tracertest own &&
    printf "store:\n  path: %s/no-store\nsigning:\n  munge_socket: %s\n" \
        "$PWD" "$MUNGE_SOCKET" >own/c.yaml &&
    chown tracertest own/c.yaml && chmod 600 own/c.yaml &&
    su tracertest -s /bin/sh -c "cd \"$PWD/own\" &&
        TRACER_CONF=\"$PWD/own/c.yaml\" \"$RUN\" -o r.json -- true" \
        2>own.err &&
    cat own.err &&
    grep -q "^tracer-run: record written to r.json (see it with: tracer-report --allow-unsigned r.json)$" own.err &&
    su tracertest -s /bin/sh -c "cd \"$PWD/own\" &&
        TRACER_CONF=\"$PWD/own/c.yaml\" \"$REPORT\" --allow-unsigned r.json" \
        >own.out 2>own.err2 &&
    grep -q "^    Record: *UNSIGNED: record is unsigned (reason: a user.s own record:" own.out &&
    su tracertest -s /bin/sh -c "cd \"$PWD/own\" &&
        TRACER_CONF=\"$PWD/own/c.yaml\" \"$RUN\" -q --view -o v.json -- true" \
        >own-view.out &&
    munged_stop &&
    grep -q "^    Diagnosis: " own-view.out
'

# The quick start installs what the build needs, nothing of the test
# suite's: no test users or group (an admin then follows doc/install.md's
# groupadd), no cluster, browser, mail or guest.
test_expect_success ROOT 'tools/install-deps --build-only: the build packages only, no users, group or guest' '
    "$TRACER_SRCDIR/tools/install-deps" --build-only --dry-run >bo.out &&
    cat bo.out &&
    grep -qx "install-deps: all 10 packages already installed; apt not run" bo.out &&
    ! grep -q -e "test user" -e "test group" -e "guest" -e "hyparquet" bo.out &&
    "$TRACER_SRCDIR/tools/install-deps" --dry-run >full.out &&
    grep -q "test user .tracertest." full.out &&
    grep -q "tools/install-deps --build-only" "$TRACER_SRCDIR/tools/quickstart"
'

test_expect_success 'apt-get-wait: waits for a package lock another apt holds, and says so' '
    mkdir -p fakeapt &&
    cat >fakeapt/apt-get <<-\EOF &&
	#!/bin/sh
	n=$(cat tries 2>/dev/null || echo 0)
	echo $((n + 1)) >tries
	if test "$n" -lt "$LOCKED_TRIES"; then
	    echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
	    exit 100
	fi
	echo "apt-get $*"
	EOF
	chmod +x fakeapt/apt-get &&
    LOCKED_TRIES=2 PATH="$PWD/fakeapt:$PATH" \
        "$TRACER_SRCDIR/tools/apt-get-wait" update -q >apt.out 2>apt.err &&
    test "$(cat tries)" = 3 &&
    grep -q "^apt-get-wait: waiting (up to 300 s) for another apt or dpkg to release the package lock (held by process 4242 (apt-get))" apt.out &&
    grep -q "^apt-get -o DPkg::Lock::Timeout=5 update -q\$" apt.out &&
    grep -q "^apt-get-wait: the package lock is free again" apt.out &&
    test_must_be_empty apt.err
'

test_expect_success 'apt-get-wait: a lock held too long fails with apt-get status, saying why' '
    rm -f tries &&
    test_expect_code 100 env LOCKED_TRIES=1000 TRACER_APT_LOCK_WAIT=1 \
        "PATH=$PWD/fakeapt:$PATH" \
        "$TRACER_SRCDIR/tools/apt-get-wait" install -y x >apt.out 2>apt.err &&
    grep -q "^apt-get-wait: the package lock is still held after 1 s" apt.out &&
    grep -q "Could not get lock" apt.err
'

# tracer-run without a cgroup, at the default interval and settings: a
# CPU-heavy last second (after three short children) and a 1-second
# command.  The step total, the tool table's sum (exit records) and user
# + system against the command's own getrusage, within 1%.
for w in cpu=2,threads=2,children=3,child_cpu=0.1 cpu=1; do
    test_expect_success ROOT "process-tree mode, default interval: $w within 1%" "
        \$RUN -q --no-sign --no-cgroup -o ex.json -- \$BURN $w >ex.out &&
        own=\$(jq .cpu_s ex.out) &&
        jq -e '.cgroup.attach == \"process-tree\" and .summary.cpu.exact
               and .summary.cpu.user_s + .summary.cpu.system_s
                   <= .summary.cpu.total_s + 1e-6
               and ([.tools[] | .exact] | all)' ex.json &&
        within \"\$(jq .summary.cpu.total_s ex.json)\" \"\$own\" 1 &&
        within \"\$(jq '[.tools[].cpu_s] | add' ex.json)\" \"\$own\" 1
    "
done

# The preferred sources and their fallbacks, each disabled in turn.
kids='i=0; while [ $i -lt 20 ]; do sleep 0.05 & i=$((i+1)); done; wait'

test_expect_success ROOT 'as root: taskstats sees every short child, exactly' '
    $RUN -q --no-sign -o ts.json -- sh -c "$kids" &&
    test "$(jq -r .summary.processes.source ts.json)" = taskstats &&
    test "$(jq .summary.processes.complete ts.json)" = true &&
    test "$(jq ".tools[] | select(.name == \"sleep\") | .count" ts.json)" = 20 &&
    test "$(jq -r .summary.cpu.runq_source ts.json)" = taskstats &&
    test "$(jq -r .summary.io.proc.source ts.json)" = taskstats
'

test_expect_success ROOT 'taskstats disabled: /proc sampling, labelled as such' '
    printf "sampling:\n  taskstats: false\n" >nots.yaml &&
    TRACER_CONF=$PWD/nots.yaml $RUN -q --no-sign -o nots.json -- sh -c "$kids" &&
    test "$(jq -r .summary.processes.source nots.json)" = proc &&
    test "$(jq .summary.processes.complete nots.json)" = false &&
    test "$(jq -r .summary.cpu.runq_source nots.json)" = schedstat &&
    test "$(jq -r .summary.io.proc.source nots.json)" = proc &&
    test "$(jq .summary.io.proc.exact nots.json)" = false
'

test_expect_success ROOT 'hybrid host: its own cgroup2 directory gives PSI' '
    if test -d /sys/fs/cgroup/unified && test -d /sys/fs/cgroup/memory
    then
        $RUN -q --no-sign -o psi.json -- sh -c "$kids" &&
        test "$(jq -r .summary.pressure.source psi.json)" = cgroup2-mirror &&
        test "$(jq .summary.pressure.exact psi.json)" = true &&
        test "$(jq ".series.metrics | has(\"psi_cpu_some\")" psi.json)" = true
    fi
'

test_expect_success 'no cgroup: no PSI claimed, the process tree is labelled' '
    $RUN -q --no-sign --no-cgroup -o tree.json -- sh -c "$kids" &&
    test "$(jq -r .cgroup.attach tree.json)" = process-tree &&
    test "$(jq -r ".summary.pressure.source // \"none\"" tree.json)" != cgroup2 &&
    test "$(jq -r ".summary.pressure.source // \"none\"" tree.json)" != cgroup2-mirror
'

# Tools as users name them: a multi-command tool (a sh script named
# samtools on PATH, called as "samtools sort" and "samtools index") and a
# python script run through "#!/usr/bin/env python3" that touches 64 MiB;
# the text view gives each tool its peak memory.
test_expect_success 'tools are named by subcommand and script, with their peak memory' '
    mkdir -p tbin &&
    printf "#!/bin/sh\ncase \$1 in sort|index) sleep 0.6 ;; *) exit 2 ;; esac\n" \
        >tbin/samtools &&
    cat >tbin/qc.py <<-\EOF &&
	#!/usr/bin/env python3
	import time
	b = bytearray(64 * 1024 * 1024)
	for i in range(0, len(b), 4096):
	    b[i] = 1
	time.sleep(0.6)
	EOF
    chmod +x tbin/samtools tbin/qc.py &&
    PATH=$PWD/tbin:$PATH $RUN -q --no-sign -i 0.1 -o tools.json -- \
        sh -c "samtools sort x.bam && samtools index x.bam && qc.py" &&
    jq -c ".tools[] | {name, count, peak_rss_bytes}" tools.json >tools.rows &&
    test "$(jq ".tools[] | select(.name == \"samtools sort\") | .count" tools.json)" = 1 &&
    test "$(jq ".tools[] | select(.name == \"samtools index\") | .count" tools.json)" = 1 &&
    test "$(jq ".tools[] | select(.name == \"qc.py\") | .count" tools.json)" = 1 &&
    peak=$(jq ".tools[] | select(.name == \"qc.py\") | .peak_rss_bytes" tools.json) &&
    test "$peak" -ge $((64 * 1024 * 1024)) &&
    test "$(jq "[.tools[].name | select(. == \"samtools\" or . == \"env\"
                or startswith(\"python\"))] | length" tools.json)" = 0 &&
    $REPORT --allow-unsigned tools.json >tools.txt 2>/dev/null &&
    mib=$(awk -v b="$peak" "BEGIN { printf \"%.1f MiB\", b / 1048576 }") &&
    grep "^    Tools: " tools.txt >tools.line &&
    grep -F "qc.py x1 (" tools.line | grep -F "s CPU, peak $mib)" || {
        cat tools.rows tools.txt >&2
        false
    }
'

test_expect_success 'a site names its own multi-command tool in tracer.yaml' '
    printf "#!/bin/sh\nsleep 0.4\n" >tbin/mytool &&
    chmod +x tbin/mytool &&
    printf "tools:\n  subcommands: [mytool]\n" >site.yaml &&
    PATH=$PWD/tbin:$PATH TRACER_CONF="$PWD/site.yaml" $RUN -q --no-sign -i 0.1 \
        -o site.json -- mytool build &&
    test "$(jq ".tools[] | select(.name == \"mytool build\") | .count" site.json)" = 1 &&
    printf "tools:\n  subcommands:\n    - mytool\n    - /bin/x\n" >bad.yaml &&
    test_must_fail env TRACER_CONF="$PWD/bad.yaml" $RUN -q --no-sign \
        -o bad.json -- true 2>bad.err &&
    grep -F "bad.yaml:4:7: tools.subcommands: '"'"'/bin/x'"'"' is not a program name pattern" bad.err
'

# The job's arguments are its own data: a subcommand with an escape
# sequence, and one of 10 kB, name the program only.
test_expect_success 'hostile arguments name the program only, the record stays small' '
    printf "#!/bin/sh\nsleep 0.4\n" >tbin/samtools &&
    big=$(head -c 10240 /dev/zero | tr "\\0" a) &&
    esc=$(printf "so\033[2Jrt") &&
    PATH=$PWD/tbin:$PATH $RUN -q --no-sign -i 0.1 -o hostile.json -- \
        sh -c "samtools \"\$1\"; samtools \"\$2\"" sh "$esc" "$big" &&
    test "$(jq ".tools[] | select(.name == \"samtools\") | .count" hostile.json)" = 2 &&
    test "$(jq "[.tools[].name | select(startswith(\"samtools \"))] | length" hostile.json)" = 0 &&
    test "$(jq "[.tools[].cmdline // \"\" | length] | max" hostile.json)" -le 256 &&
    test "$(wc -c <hostile.json)" -lt 65536 &&
    ! grep -q "$(printf "\033")" hostile.json
'

test_expect_success 'secrets on command lines are redacted in the tool table' '
    $RUN -q --no-sign -i 0.2 -o red.json -- \
        sh -c "sleep 1; true --password=hunter2 token=abc123" &&
    jq -r ".tools[].cmdline // empty" red.json >cmdlines &&
    grep -q "password=\*\*\*" cmdlines &&
    ! grep -q hunter2 cmdlines &&
    ! grep -q abc123 cmdlines
'
test_done
