#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='kernel evidence and no progress on the real cluster

tracerd reads the kernel log (/dev/kmsg): the OOM killer'"'"'s victim among
several processes of a step is named with its RSS, a segfault of a
step'"'"'s process is attached to it, while a segfault of a process of no
step and lines that userspace wrote to /dev/kmsg (forged, naming a
step'"'"'s process) are never attached.  A step blocked on a FIFO is
flagged STALLED while it runs and in its record, with what its process
is blocked in, and with mail.on_stall its (unprivileged) user gets one
mail saying so through a real MTA, the job'"'"'s hostile name shown as
escapes; nothing is done to the job.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "/dev/kmsg readable" test -r /dev/kmsg
require_or_skip "the test user tracertest (tools/install-deps)" \
    test_have_prereq TRACERTEST
require_or_skip "an MTA providing /usr/sbin/sendmail (tools/install-deps)" \
    test -x /usr/sbin/sendmail
require_or_skip "python3 (tools/install-deps)" command -v python3

PARTS="python3 $SHARNESS_TEST_SRCDIR/mail-parts"
MBOX=/var/mail/tracertest

SBATCH_MEM_PER_NODE=200 SLURM_MEM_PER_NODE=200
export SBATCH_MEM_PER_NODE SLURM_MEM_PER_NODE

# A real segfault (not a signal sent by kill, which the kernel does not
# log): perl reads a C string at address 8.
SEGV='perl -e "my \$x = unpack(q(p), pack(q(Q), 8))"'

# stall_after is 10 s here instead of the default 5 minutes, so that a
# stall is seen within the test's time; snapshots every second for
# tracer-report --live, live summaries in the store every 5 s (the
# least) for the run view; mail.on_stall on (off by default).
test_expect_success 'start the cluster (stall_after 10 s, snapshots every 1 s, mail.on_stall)' '
    cluster_up --plugstack-args "enable=optin" \
        --sampling stall_after=10 --sampling snapshot_interval=1 \
        --store live_interval=5 --mail-conf on_stall=true &&
    wait_log "$(tracerd_log)" "reading kernel evidence from /dev/kmsg" &&
    : >$MBOX && chown tracertest:mail $MBOX && chmod 0660 $MBOX &&
    jobs=$(mktemp -d /tmp/tracer-0616-jobs.XXXXXX) &&
    chown tracertest "$jobs" && chmod 0755 "$jobs" &&
    echo "$jobs" >jobs.dir
'

test_expect_success 'an OOM kill of one of two processes: the victim and its RSS' '
    test_must_fail srun --tracer --mem=100M sh -c "echo JOB=\$SLURM_JOB_ID >&2
        perl -e \"sleep 2\" &
        perl -e \"\\\$x = q(a) x (400 * 1024 * 1024); sleep 5\" &
        v=\$!; echo VICTIM=\$v >&2; wait \$v" 2>o.err &&
    job=$(sed -n "s/^JOB=//p" o.err) &&
    victim=$(sed -n "s/^VICTIM=//p" o.err) &&
    wait_record $job &&
    jq ".[0].events" rec.json >o.events &&
    test "$(jq "[.[0].events[] | select(.kind == \"oom-kill\")] | length" \
        rec.json)" = 1 &&
    jq -e ".[0].events[] | select(.kind == \"oom-kill\") |
        .scope == \"step\" and .tool == \"perl\" and .pid == $victim and
        .rss_bytes >= 50 * 1048576 and .rss_bytes <= 110 * 1048576" \
        rec.json &&
    $REPORT -j $job >o.view &&
    grep -q "^    Events:" o.view &&
    grep -q "oom-kill perl\[$victim\] RSS" o.view &&
    grep -q "^    Cause: *oom" o.view
'

# foreign_oom: a process of no step, in a memory cgroup of its own
# beside this shell'"'"'s, killed by the OOM killer (v1 memory controller).
foreign_oom ()
{
    _mem=$(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup) &&
    _fd=/sys/fs/cgroup/memory${_mem%/}/tracer-0616-foreign &&
    mkdir "$_fd" &&
    echo 50M >"$_fd/memory.limit_in_bytes" &&
    { sh -c "echo \$\$ >$_fd/cgroup.procs && echo \$\$ >foreign-oom.pid &&
        exec perl -e \"\\\$x = q(a) x (200 * 1024 * 1024)\""; true; } &&
    rmdir "$_fd" &&
    dmesg | grep -q "Killed process $(cat foreign-oom.pid) (perl)"
}

test_expect_success 'a segfault of the step is attached; a foreign one and forged lines are not' '
    rm -f go &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; echo SH=\$\$ >&2
        while ! test -e go; do sleep 0.2; done
        $SEGV; exit 0" 2>s.err &
    wait_for "grep -q ^SH= s.err" 30 &&
    job=$(sed -n "s/^JOB=//p" s.err) &&
    sh=$(sed -n "s/^SH=//p" s.err) &&
    echo "<14>sh[$sh]: segfault at 0 ip 0 sp 0 error 4" >/dev/kmsg &&
    echo "sh[$sh]: segfault at 0 ip 0 sp 0 error 4" >/dev/kmsg &&
    echo "<12>Memory cgroup out of memory: Killed process $sh (sh) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0" >/dev/kmsg &&
    echo "<12>traps: sh[$sh] trap int3 ip:1 sp:2 error:0" >/dev/kmsg &&
    { sh -c "echo \$\$ >foreign.pid; exec $SEGV"; true; } &&
    foreign=$(cat foreign.pid) &&
    dmesg | grep -q "perl\[$foreign\]: segfault at" &&
    foreign_oom &&
    touch go &&
    wait &&
    wait_record $job &&
    test "$(jq ".[0].events | length" rec.json)" = 1 &&
    jq -e ".[0].events[0] | .kind == \"segfault\" and .scope == \"step\"
        and .tool == \"perl\" and .pid != $sh and .pid != $foreign" rec.json
'

# A real kernel trap (int3) of a process that named itself "x[PID] "
# after another user's step process: the kernel writes
# "traps: x[PID] [REAL] trap int3 ...", and only REAL is the kernel's.
FORGE='import ctypes, mmap, sys
open("/proc/self/comm", "w").write("x[%s] " % sys.argv[1])
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(b"\xcc")
ctypes.CFUNCTYPE(None)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()'

test_expect_success 'a trap of a process named after another step'"'"'s pid is not that step'"'"'s' '
    rm -f go2 &&
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2; echo SH=\$\$ >&2
        while ! test -e go2; do sleep 0.2; done; exit 1" 2>t.err &
    wait_for "grep -q ^SH= t.err" 30 &&
    job=$(sed -n "s/^JOB=//p" t.err) &&
    sh=$(sed -n "s/^SH=//p" t.err) &&
    { runuser -u tracertest -- python3 -c "$FORGE" "$sh"; true; } &&
    wait_for "dmesg | grep -qF \"traps: x[$sh] [\"" 10 &&
    touch go2 &&
    { wait; true; } &&
    wait_record $job &&
    test "$(jq "[.[0].events[]? | select(.kind == \"trap\")] | length" \
        rec.json)" = 0 &&
    $REPORT -j $job >t.view &&
    ! grep -q "kernel trap" t.view
'

test_expect_success 'a step blocked on a FIFO is STALLED while it runs (--live, --run), in its record, and its user is mailed once' '
    jobs=$(cat jobs.dir) &&
    runuser -u tracertest -- srun --tracer=tag=run:stall-0616 -t 5 \
        --chdir="$jobs" -J "$(printf "stuck\033[2J\nBcc: root")" \
        sh -c "echo JOB=\$SLURM_JOB_ID >&2
        rm -f fifo.\$\$
        mkfifo fifo.\$\$ || exit 1
        sleep 600 >fifo.\$\$ & exec cat fifo.\$\$" 2>f.err &
    wait_for "grep -q ^JOB= f.err" 30 &&
    job=$(sed -n "s/^JOB=//p" f.err) &&
    wait_for "$REPORT --live -j $job 2>/dev/null | grep -q STALLED" 60 &&
    $REPORT --live -j $job | grep "STALLED for" &&
    wait_for "$REPORT --run=stall-0616 >run.out 2>&1 &&
        grep -q \"^  $job (.*STALLED for\" run.out" 30 &&
    wait_for "test \$($PARTS $MBOX $job m.$job) -ge 1" 60 &&
    cat m.$job.1.headers m.$job.1.text &&
    grep "^Subject: tracer: job $job step 0 on [^ ]* has made no progress for 00:00:[0-9][0-9]$" \
        m.$job.1.headers &&
    grep "^To: tracertest\(@[^ ]*\)\?$" m.$job.1.headers &&
    grep "^X-Tracer-Job: $job$" m.$job.1.headers &&
    ! grep -i "^Bcc:" m.$job.1.headers &&
    # the record made the control characters of the name "?"
    grep "^Job $job (stuck?\[2J?Bcc: root), step 0 on node " m.$job.1.text &&
    ! grep "^Bcc" m.$job.1.text && ! grep "$(printf "\033")" m.$job.1.text &&
    grep "^  cat (pid [0-9]*)  S  .*pipe_read$" m.$job.1.text &&
    grep "^If it is stuck, cancel it: scancel $job$" m.$job.1.text &&
    grep "$job.* stalled: its user is told (tracertest)" "$(tracerd_log)" &&
    # nothing was done to the job: it still runs, stalled
    test "$(squeue -h -j $job -o %T)" = RUNNING &&
    sleep 4 &&
    scancel $job &&
    wait_record $job &&
    jq -e ".[0].progress.stalled == true and .[0].progress.stalled_s >= 10" \
        rec.json &&
    # cat blocks reading the pipe: pipe_read, anon_pipe_read on 6.x
    jq -e "[.[0].progress.processes[] | select(.tool == \"cat\" and
        .state == \"S\" and (.wchan | test(\"pipe_read\")))] | length == 1" \
        rec.json &&
    $REPORT -j $job >f.view &&
    grep -q "STALLED for" f.view &&
    grep -q "^    Cause: *stalled" f.view &&
    # the page says it as the text view does
    $REPORT -j $job --html >f.html &&
    grep -q "<dt>Progress</dt><dd>STALLED for 00:00:[0-9][0-9] (no CPU and no I/O)<ul>.*<li>cat\[[0-9]*\] state S in [a-z_]*pipe_read</li>" f.html &&
    # one notice per step, however long it stayed stalled
    test "$($PARTS $MBOX $job m2.$job)" = 1
'

# A batch script waiting for its srun step uses no CPU and moves no I/O
# of its own: it is as busy as that step (another step of the job here
# moved), and while it waits on an srun client it is never stalled by
# itself: a stalled srun step is that step's stall, not the script's.
test_expect_success 'a batch script waiting for its srun steps is not stalled; a stalled srun step is, alone' '
    jobs=$(cat jobs.dir) &&
    runuser -u tracertest -- sbatch --tracer --parsable -t 5 \
        --chdir="$jobs" --wrap "srun perl -e \"1 while time < \\\$^T + 16\"" \
        >busy.job &&
    job=$(cat busy.job) &&
    wait_for "wait_record $job && test \$(jq length rec.json) = 2" 90 &&
    jq -e ".[] | select(.identity.step_id == \"batch\") |
        .progress.stalled == false and (.progress | has(\"stalled_s\") | not)" \
        rec.json &&
    jq -e ".[] | select(.identity.step_id == \"0\") |
        .progress.stalled == false" rec.json &&
    test "$($PARTS $MBOX $job m.$job)" = 0 &&
    runuser -u tracertest -- sbatch --tracer --parsable -t 5 \
        --chdir="$jobs" --wrap "srun sh -c \"rm -f fifo.\\\$\\\$
            mkfifo fifo.\\\$\\\$ && { sleep 600 >fifo.\\\$\\\$ & exec cat fifo.\\\$\\\$; }\"" \
        >stuck.job &&
    job=$(cat stuck.job) &&
    wait_for "$REPORT --live -j $job 2>/dev/null | grep -q STALLED" 60 &&
    sleep 6 &&
    $REPORT --live -j $job >stuck.live &&
    cat stuck.live &&
    test "$(grep -c STALLED stuck.live)" = 1 &&
    wait_for "test \$($PARTS $MBOX $job m.$job) -ge 1" 30 &&
    scancel $job &&
    wait_for "wait_record $job && test \$(jq length rec.json) = 2" 90 &&
    jq -e ".[] | select(.identity.step_id == \"0\") |
        .progress.stalled == true" rec.json &&
    jq -e ".[] | select(.identity.step_id == \"batch\") |
        .progress.stalled == false" rec.json &&
    test "$($PARTS $MBOX $job m.$job)" = 1 &&
    grep "^Subject: tracer: job $job step 0 on " m.$job.1.headers
'

test_expect_success 'a busy step is not stalled' '
    srun --tracer sh -c "echo JOB=\$SLURM_JOB_ID >&2
        exec perl -e \"1 while time < \\\$^T + 14\"" 2>b.err &&
    job=$(sed -n "s/^JOB=//p" b.err) &&
    wait_record $job &&
    jq -e ".[0].progress.stalled == false" rec.json &&
    jq -e ".[0].progress | has(\"stalled_s\") | not" rec.json
'

test_done
