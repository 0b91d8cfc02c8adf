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
# check_config NAME YAML EXPECTED: --check-config on NAME.yaml (YAML, as
# printf writes it) exits 2 and says exactly EXPECTED, the file's name
# in front.
check_config () {
    printf "$2" >"$1.yaml" &&
    test_expect_code 2 $B/collector/tracerd --check-config -c "$1.yaml" \
        >out 2>err &&
    test_must_be_empty out &&
    printf "%s\n" "tracerd: $1.yaml:$3" >expect &&
    test_cmp expect err
}
test_expect_success 'record files that others or the group may write are refused' '
    check_config fm666 "store:\n  file_mode: 0666\n" \
        "2:14: store.file_mode: '\''0666'\'' lets others write; record files may have at most 0644 (no write for group or others, no execute, setuid, setgid or sticky bit)" &&
    check_config fm664 "store:\n  file_mode: \"664\"\n" \
        "2:14: store.file_mode: '\''664'\'' lets the group write; record files may have at most 0644 (no write for group or others, no execute, setuid, setgid or sticky bit)"
'
test_expect_success 'record files with the setuid, setgid or execute bits are refused' '
    check_config fm4755 "store:\n  file_mode: 04755\n" \
        "2:14: store.file_mode: '\''04755'\'' sets the setuid bit; record files may have at most 0644 (no write for group or others, no execute, setuid, setgid or sticky bit)" &&
    check_config fm2640 "store: {file_mode: 02640}\n" \
        "1:20: store.file_mode: '\''02640'\'' sets the setgid bit; record files may have at most 0644 (no write for group or others, no execute, setuid, setgid or sticky bit)" &&
    check_config fm750 "store:\n  file_mode: 0750\n" \
        "2:14: store.file_mode: '\''0750'\'' makes records executable; record files may have at most 0644 (no write for group or others, no execute, setuid, setgid or sticky bit)"
'
test_expect_success 'store directories others may write are refused, sticky or not' '
    check_config dm777 "store:\n  dir_mode: 0777\n" \
        "2:13: store.dir_mode: '\''0777'\'' lets others write; store directories may have at most 02755, or 03775 for a group that writes records" &&
    check_config dm1777 "store:\n  dir_mode: 1777\n" \
        "2:13: store.dir_mode: '\''1777'\'' lets others write; store directories may have at most 02755, or 03775 for a group that writes records" &&
    check_config dm775 "store:\n  dir_mode: 0775\n" \
        "2:13: store.dir_mode: '\''0775'\'' lets the group write without the sticky bit; store directories may have at most 02755, or 03775 for a group that writes records" &&
    check_config dm4755 "store:\n  dir_mode: 04755\n" \
        "2:13: store.dir_mode: '\''04755'\'' sets the setuid bit; store directories may have at most 02755, or 03775 for a group that writes records"
'
test_expect_success 'safe modes pass: 0644 files, setgid or group-sticky directories' '
    printf "store:\n  file_mode: 0644\n  dir_mode: 02755\n" >modes.yaml &&
    $B/collector/tracerd --check-config -c modes.yaml >out &&
    grep -q ": OK" out &&
    printf "store:\n  file_mode: 0440\n  dir_mode: 03775\n" >modes.yaml &&
    $B/collector/tracerd --check-config -c modes.yaml >out &&
    grep -q ": OK" out
'
test_expect_success 'a socket path longer than a unix socket holds is refused' '
    long=/run/tracer/$(printf "%091d" 0).sock &&
    test ${#long} = 108 &&
    check_config sock108 "daemon:\n  socket: $long\n" \
        "2:11: daemon.socket: path is 108 bytes long; a unix socket path holds at most 107" &&
    check_config msock108 "signing:\n  munge_socket: \"$long\"\n" \
        "2:17: signing.munge_socket: path is 108 bytes long; a unix socket path holds at most 107" &&
    ok=/run/tracer/$(printf "%090d" 0).sock &&
    printf "daemon:\n  socket: %s\n" "$ok" >sock107.yaml &&
    $B/collector/tracerd --check-config -c sock107.yaml >out &&
    grep -q ": OK" out
'
test_expect_success 'intervals out of their bounds are refused' '
    check_config retry "spool:\n  retry_interval: 1e-6\n" \
        "2:19: spool.retry_interval: 1e-6 is out of range [1, 3600]" &&
    check_config retrymax "spool:\n  retry_max: 0.001\n" \
        "2:14: spool.retry_max: 0.001 is out of range [1, 86400]" &&
    check_config snap "sampling:\n  snapshot_interval: 1e-6\n" \
        "2:22: sampling.snapshot_interval: 1e-6 is out of range: 0 (off) or [1, 86400]" &&
    check_config interval "sampling:\n  interval: 1e-6\n" \
        "2:13: sampling.interval: 1e-6 is out of range [0.1, 3600]" &&
    check_config wait "mail:\n  wait: 1h\n" \
        "2:9: mail.wait: 1h is out of range [0, 100]"
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
test_expect_success 'check-config: a store every user may write is refused, a missing one said' '
    mkdir -p open-store safe-store &&
    chmod 0777 open-store && chmod 0755 safe-store &&
    for s in open-store safe-store missing-store; do
        printf "store:\n  path: %s\nspool:\n  path: %s\ndaemon:\n  socket: %s\n  state_dir: %s\n" \
            "$PWD/$s" "$PWD/sp" "$PWD/s.sock" "$PWD/st" >$s.yaml &&
        chmod 600 $s.yaml || return 1
    done &&
    test_expect_code 2 $B/collector/tracerd --check-config -c open-store.yaml \
        2>err &&
    grep -qx "tracerd: open-store.yaml: store.path $PWD/open-store: insecure: writable by every user (mode 0777); make it 0755" err &&
    $B/collector/tracerd --check-config -c safe-store.yaml >out &&
    head -1 out | grep -qx "safe-store.yaml: OK" &&
    ! grep -q "^warning: store" out &&
    $B/collector/tracerd --check-config -c missing-store.yaml >out &&
    grep -qx "warning: store.path $PWD/missing-store: No such file or directory: tracerd would make it at the first record, on whatever is mounted there (create it on the shared file system first)" out
'
test_expect_success 'TRACER_CONF names the file' '
    TRACER_CONF=$PWD/bad.yaml test_expect_code 2 $B/collector/tracerd --check-config 2>err &&
    grep -q "bad.yaml:2:3" err
'

# --check-config says what a host measures of a step's stall and what it
# cannot, and why.  A fixture fsroot stands for a cgroup v1 host with
# delay accounting off (the kernel default since 5.14).
stall_root ()
{
    mkdir -p "$1/proc/self" "$1/proc/sys/kernel" &&
    printf "%s\n" \
        "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory" \
        "31 25 0:27 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct" \
        >"$1/proc/self/mountinfo" &&
    echo "$2" >"$1/proc/sys/kernel/task_delayacct"
}
test_expect_success 'check-config names the stall a v1 host cannot measure, and why' '
    stall_root v1off 0 &&
    printf "sampling:\n  delayacct: off\n" >da-off.yaml &&
    TRACER_FSROOT=$PWD/v1off $B/collector/tracerd --check-config \
        -c da-off.yaml >out &&
    cat out &&
    grep -q ": OK" out &&
    grep -q "^cgroups: cgroup v1$" out &&
    grep -q "^stall: memory and I/O stall unknown: no per-step pressure (a cgroup v1 host) and delay accounting is off (kernel.task_delayacct = 0, sampling.delayacct: off)" out &&
    printf "sampling:\n  taskstats: false\n" >ts-off.yaml &&
    TRACER_FSROOT=$PWD/v1off $B/collector/tracerd --check-config \
        -c ts-off.yaml >out &&
    grep -q "^stall: unknown: .*CPU, memory and I/O stall cannot be measured" out
'
test_expect_success 'check-config: by default tracerd turns delay accounting on where steps have no PSI' '
    TRACER_FSROOT=$PWD/v1off $B/collector/tracerd --check-config \
        -c $S/etc/tracer.yaml >out &&
    grep -q "^stall: delay accounting is off (kernel.task_delayacct = 0): tracerd turns it on at start (sampling.delayacct: auto)" out &&
    stall_root v1on 1 &&
    TRACER_FSROOT=$PWD/v1on $B/collector/tracerd --check-config \
        -c $S/etc/tracer.yaml >out &&
    grep -q "^stall: CPU run-queue, memory and I/O delay .* (kernel.task_delayacct = 1)" out
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
test "$(id -u)" = 0 && id tracertest >/dev/null 2>&1 &&
    test_set_prereq TRACERTEST
# dirs_conf NAME SPOOL STATE: daemon.yaml with the spool and state
# directories elsewhere, as NAME.yaml (root's, 0644)
dirs_conf () {
    sed -e "s|^  path: \"$PWD/run/spool\"|  path: \"$2\"|" \
        -e "s|^  state_dir: .*|  state_dir: \"$3\"|" daemon.yaml >"$1.yaml" &&
    chmod 644 "$1.yaml"
}
test_expect_success ROOT,TRACERTEST 'tracerd refuses a spool inside a directory a user owns' '
    mkdir -p users/home &&
    chown tracertest users/home && chmod 755 users/home &&
    dirs_conf uspool "$PWD/users/home/spool" "$PWD/run/st" &&
    test_expect_code 2 $B/collector/tracerd --check-config \
        -c "$PWD/uspool.yaml" >out 2>err &&
    test_must_be_empty out &&
    echo "tracerd: $PWD/uspool.yaml: spool.path $PWD/users/home/spool: insecure: $PWD/users/home: owned by uid $(id -u tracertest), not root" \
        >expect &&
    test_cmp expect err &&
    test_expect_code 2 timeout 20 $B/collector/tracerd -c "$PWD/uspool.yaml" \
        -f 2>err &&
    test_cmp expect err &&
    ! test -e users/home/spool &&
    ! test -e run/s.sock
'
test_expect_success ROOT,TRACERTEST 'tracerd refuses a state directory below one others may write' '
    mkdir -p open2/deeper && chmod 777 open2 &&
    dirs_conf ustate "$PWD/run/spool" "$PWD/open2/deeper/st" &&
    test_expect_code 2 $B/collector/tracerd --check-config \
        -c "$PWD/ustate.yaml" 2>err &&
    echo "tracerd: $PWD/ustate.yaml: daemon.state_dir $PWD/open2/deeper/st: insecure: $PWD/open2: writable by others" \
        >expect &&
    test_cmp expect err
'
test_expect_success ROOT,TRACERTEST 'tracerd refuses a spool reached through a link a user owns' '
    mkdir -p users/root-spool && chmod 755 users/root-spool &&
    ln -s "$PWD/users/root-spool" users/link &&
    chown -h tracertest users/link &&
    dirs_conf lspool "$PWD/users/link/spool" "$PWD/run/st" &&
    test_expect_code 2 $B/collector/tracerd --check-config \
        -c "$PWD/lspool.yaml" 2>err &&
    echo "tracerd: $PWD/lspool.yaml: spool.path $PWD/users/link/spool: insecure: $PWD/users/link: owned by uid $(id -u tracertest), not root" \
        >expect &&
    test_cmp expect err &&
    chown -h root users/link &&
    $B/collector/tracerd --check-config -c "$PWD/lspool.yaml" >out &&
    grep -q ": OK" out
'
test_expect_success ROOT 'a spool in a sticky directory such as /tmp is accepted' '
    tmp=$(mktemp -d /tmp/tr0101.XXXXXX) &&
    test_when_finished "rm -rf \"$tmp\"" &&
    chmod 755 "$tmp" &&
    dirs_conf tspool "$tmp/spool" "$tmp/st" &&
    $B/collector/tracerd --check-config -c "$PWD/tspool.yaml" >out &&
    grep -q ": OK" out
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
test_expect_success ROOT 'a step_start asking for a microsecond interval is sampled at the configured one' '
    sed "/^daemon:/,\$!b" daemon.yaml >iv.yaml &&
    printf "sampling:\n  interval: 2\n  snapshot_interval: 1\n  taskstats: false\nsigning:\n  enabled: false\n" \
        >>iv.yaml &&
    chmod 644 iv.yaml &&
    { $B/collector/tracerd -c "$PWD/iv.yaml" -f >iv.out 2>&1 \
          3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & } &&
    echo $! >iv.pid &&
    { sleep 60 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & } &&
    echo $! >sleep.pid &&
    test_when_finished "kill \$(cat iv.pid) \$(cat sleep.pid) 2>/dev/null; true" &&
    poll "test -S run/s.sock" &&
    $B/tests/notify "$PWD/run/s.sock" "{\"op\":\"step_start\",
        \"identity\":{\"scheduler\":\"pbs\",\"job_id\":\"91\",
          \"step_id\":\"batch\",\"node\":\"$(hostname)\",\"uid\":0,
          \"user\":\"root\"},
        \"task_id\":0, \"pid\":$(cat sleep.pid), \"interval_s\":1e-6,
        \"attach\":{\"tree\":true}}" &&
    poll "ls run/st/live/*.json >/dev/null 2>&1" &&
    cat run/st/live/*.json | head -c 400 && echo &&
    grep -Eq "\"series\":\\{\"interval_s\":2(\\.0*)?[,}]" run/st/live/*.json
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
