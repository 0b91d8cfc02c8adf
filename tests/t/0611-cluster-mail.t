#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='tracer-mail as MailProg, with a real MTA

slurmctld runs tracer-mail (MailProg) for jobs submitted with
--mail-type=END,FAIL; exim (Debian'\''s default MTA, local delivery)
delivers to /var/mail.  A completed, a failed and an OOM-killed job each
get a summary with the HTML report attached, and every view of each says
the same of it (tests/views-agree); a job whose records never
come still gets Slurm'\''s notification, saying so; a Began mail passes
through; with mail.summary: actionable a job with nothing to act on gets
the plain notification; tracer-report --digest mails a digest; a job
named with a line break, ESC and a right-to-left override (by the
unprivileged user) gets its mail, those shown as escapes, no header
added.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
PARTS="python3 $SHARNESS_TEST_SRCDIR/mail-parts"
MBOX=/var/mail/tracertest

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "the test user tracertest (tools/install-deps)" \
    test_have_prereq TRACERTEST
require_or_skip "an MTA providing /usr/sbin/sendmail (tools/install-deps)" \
    test -x /usr/sbin/sendmail
require_or_skip "python3 (tools/install-deps)" command -v python3

# submit ARGS...: sbatch as tracertest with mail to tracertest; the job
# id is left in job.
submit ()
{
    job=$(runuser -u tracertest -- sbatch --parsable --chdir="$(cat jobs.dir)" \
        --mail-user=tracertest "$@") && test -n "$job"
}

# mail_for JOB [N] [TIMEOUT]: wait until N (1) messages about JOB are in
# the mailbox; their parts are m.JOB.K.{headers,text,html,attach-*}.
mail_for ()
{
    wait_for "test \$($PARTS $MBOX $1 m.$1) -ge ${2:-1}" "${3:-90}"
}

test_expect_success 'start the cluster with MailProg=tracer-mail' '
    cluster_up --mail --mail-conf summary=always --mail-conf wait=20s \
        --mail-conf settle=2s --sampling psi_mirror=true &&
    grep "^MailProg=$TRACER_CLUSTER_ROOT/bin/tracer-mail" \
        "$TRACER_CLUSTER_DIR/etc/slurm.conf" &&
    : >$MBOX && chown tracertest:mail $MBOX && chmod 0660 $MBOX &&
    jobs=$(mktemp -d /tmp/tracer-mail-jobs.XXXXXX) &&
    chown tracertest "$jobs" && chmod 0755 "$jobs" &&
    echo "$jobs" >jobs.dir &&
    printf "#!/bin/sh\nperl -e %s\n" \
        "'\''my \$x = \"a\" x (60 * 1048576); my \$t = time + 4; 1 while time < \$t;'\''" \
        >"$jobs/ok.sh" &&
    printf "#!/bin/sh\nsleep 2\nexit 3\n" >"$jobs/fail.sh" &&
    printf "#!/bin/sh\nperl -e %s\n" \
        "'\''my @a; push @a, \"a\" x 1048576 for 1 .. 400; sleep 1'\''" \
        >"$jobs/oom.sh" &&
    chmod 0755 "$jobs"/*.sh
'

test_expect_success 'a completed job: the summary, with the report attached; no time limit is UNLIMITED' '
    jobs=$(cat jobs.dir) &&
    submit --tracer=tag=run:xv-1,pipeline:xv -c 2 --mem=400M \
        --mail-type=END,FAIL "$jobs/ok.sh" &&
    echo $job >xv.ok &&
    mail_for $job &&
    cat m.$job.1.text &&
    grep "^Subject: Slurm Job_id=$job Name=ok.sh Ended, Run time .*, COMPLETED, ExitCode 0$" \
        m.$job.1.headers &&
    grep "^X-Tracer-Job: $job$" m.$job.1.headers &&
    grep "^Content-Structure: multipart/mixed multipart/alternative text/plain text/html text/html$" \
        m.$job.1.headers &&
    grep "^Job $job (ok.sh) ended: COMPLETED, exit code 0:0$" m.$job.1.text &&
    grep "^  Cores  *2 " m.$job.1.text &&
    grep "^  Memory  *400.0 MiB  *[0-9.]* MiB  *[0-9]*%$" m.$job.1.text &&
    grep "^  batch  *COMPLETED " m.$job.1.text &&
    grep "^  Time  *UNLIMITED  *00:00:0[0-9]" m.$job.1.text &&
    ! grep "365-00:00:00" m.$job.1.text m.$job.1.html &&
    grep "^Next time" m.$job.1.text &&
    grep -e "--mem=" m.$job.1.text &&
    grep "attached (job-$job.html)" m.$job.1.text &&
    grep "id=\"usage\"" m.$job.1.html &&
    test -s m.$job.1.attach-job-$job.html &&
    grep "<figure class=\"chart\" data-metric=\"cpu\"" m.$job.1.attach-job-$job.html &&
    ! grep "<script" m.$job.1.html m.$job.1.attach-job-$job.html
'

test_expect_success 'a failed job: the summary says it failed, and why' '
    jobs=$(cat jobs.dir) &&
    submit --tracer=tag=run:xv-1,pipeline:xv --mem=200M \
        --mail-type=END,FAIL "$jobs/fail.sh" &&
    echo $job >xv.fail &&
    mail_for $job &&
    cat m.$job.1.text &&
    grep "^Subject: Slurm Job_id=$job Name=fail.sh Failed, Run time .*, FAILED, ExitCode 3$" \
        m.$job.1.headers &&
    grep "^Job $job (fail.sh) failed: FAILED, exit code 3:0$" m.$job.1.text &&
    grep "^  batch  *FAILED " m.$job.1.text &&
    grep "\[critical\] failed" m.$job.1.text &&
    grep -A1 "^Why it failed:$" m.$job.1.text |
        grep "^  batch  *tool-error: .* (pid [0-9]*) exited 3"
'

test_expect_success 'an OOM-killed job: the summary says so, OUT_OF_MEMORY, and asks for more memory' '
    jobs=$(cat jobs.dir) &&
    submit --tracer=tag=run:xv-1,pipeline:xv --mem=150M \
        --mail-type=END,FAIL "$jobs/oom.sh" &&
    echo $job >xv.oom &&
    mail_for $job &&
    cat m.$job.1.text &&
    grep "^Subject: Slurm Job_id=$job Name=oom.sh Failed, .*OUT_OF_MEMORY" \
        m.$job.1.headers &&
    # Slurm'"'"'s ExitCode 0 as sacct writes the job'"'"'s (doc/sacct.md)
    grep "failed: OUT_OF_MEMORY, exit code 0:125$" m.$job.1.text &&
    grep "^  batch  *OUT_OF_MEMORY .* 100%$" m.$job.1.text &&
    grep -A1 "^Why it failed:$" m.$job.1.text |
        grep "^  batch  *oom: the OOM killer killed" &&
    grep "\[critical\] out of memory: the OOM killer ended 1 process" \
        m.$job.1.text &&
    mem=$(grep "^  batch  *--cpus-per-task" m.$job.1.text |
          grep -o -e "--mem=[0-9]*[MG]" | sed "s/--mem=//") &&
    case $mem in
    *G) mib=$(( ${mem%G} * 1024 )) ;;
    *) mib=${mem%M} ;;
    esac &&
    test -n "$mem" && test "$mib" -gt 150 &&
    # one --mem, with one reason, in the diagnosis and next time, in 80
    # columns
    test "$(grep -o -e "--mem=[0-9]*[MG]" m.$job.1.text | sort -u)" = \
        "--mem=$mem" &&
    grep -q "a lower bound of its need" m.$job.1.text &&
    test "$(awk "{ if (length(\$0) > w) w = length(\$0) } END { print w }" \
            m.$job.1.text)" -le 80
'

# One step, one answer: the listing, the job
# view (text, JSON, HTML), the mail (text and HTML), --recommend and the
# run view say the same of one step.
test_expect_success 'every view of each job says the same: state, exit code, cause, tools, next request' '
    bad= &&
    for k in ok fail oom; do
        python3 "$SHARNESS_TEST_SRCDIR/views-agree" "$REPORT" \
            "$(cat xv.$k)" batch xv-1 . >agree.$k || bad="$bad $k"
        cat agree.$k
    done &&
    test -z "$bad" &&
    grep -c "^ok" agree.oom >count &&
    test $(cat count) -ge 20
'

test_expect_success 'records that never come: Slurm'\''s notification, saying so' '
    jobs=$(cat jobs.dir) &&
    tracerd_stop &&
    test_when_finished "tracerd_start" &&
    submit --tracer --mail-type=END,FAIL --wrap "sleep 1" &&
    test "$(wait_job $job)" = COMPLETED &&
    mail_for $job 1 120 &&
    cat m.$job.1.text &&
    grep "^Subject: Slurm Job_id=$job Name=wrap Ended, Run time .*, COMPLETED, ExitCode 0$" \
        m.$job.1.headers &&
    grep "^Content-Structure: text/plain$" m.$job.1.headers &&
    grep "no usage records of job $job arrived within 20 s" m.$job.1.text &&
    grep "job $job: no records within 20 s" "$TRACER_CLUSTER_DIR/log/slurmctld.log"
'

test_expect_success 'a Began mail passes through untouched' '
    submit --tracer --mail-type=BEGIN --wrap "sleep 1" &&
    mail_for $job &&
    grep "^Subject: Slurm Job_id=$job Name=wrap Began, Queued time " \
        m.$job.1.headers &&
    grep "^Content-Structure: text/plain$" m.$job.1.headers &&
    test ! -s m.$job.1.text
'

test_expect_success 'mail.summary: actionable: nothing to act on gets the plain notification' '
    cp "$TRACER_CONF" conf.saved &&
    test_when_finished "cp conf.saved \"\$TRACER_CONF\"" &&
    sed "s/summary: \"always\"/summary: \"actionable\"/" conf.saved >"$TRACER_CONF" &&
    grep "summary: \"actionable\"" "$TRACER_CONF" &&
    submit --tracer --mail-type=END,FAIL --wrap "sleep 1" &&
    mail_for $job &&
    grep "^Content-Structure: text/plain$" m.$job.1.headers &&
    test ! -s m.$job.1.text &&
    jobs=$(cat jobs.dir) &&
    submit --tracer --mem=200M --mail-type=END,FAIL "$jobs/fail.sh" &&
    fjob=$job &&
    mail_for $fjob &&
    grep "^Job $fjob (fail.sh) failed" m.$fjob.1.text
'

test_expect_success 'an array job: one summary of every task' '
    submit --tracer --array=1-2 --mail-type=END --wrap "sleep 2" &&
    mail_for $job &&
    cat m.$job.1.text &&
    grep "^Subject: Slurm Array Summary Job_id=${job}_\* ($job) Name=wrap Ended, " \
        m.$job.1.headers &&
    grep "^Array job ${job}_\* (wrap) ended: COMPLETED" m.$job.1.text &&
    test $(grep -c "^  [0-9]*\.batch  *COMPLETED " m.$job.1.text) = 2 &&
    grep "Each task has its own HTML report" m.$job.1.text
'

test_expect_success 'tracer-report --digest mails each user a digest' '
    $REPORT --digest=print -S now-1hour >digest.out 2>digest.err &&
    cat digest.err digest.out &&
    grep "^Subject: tracer digest for tracertest$" digest.out &&
    grep "completed, [1-9][0-9]* failed, [1-9][0-9]* OUT_OF_MEMORY" digest.out &&
    grep "^  [0-9]*\.batch  OUT_OF_MEMORY " digest.out &&
    $REPORT --digest -S now-1hour 2>digest.err &&
    grep "1 digest sent" digest.err &&
    wait_for "grep -q \"^Subject: tracer digest for tracertest\" $MBOX" 30 &&
    grep -A40 "^Subject: tracer digest for tracertest" $MBOX |
        grep "Steps that did not complete"
'

# bytes no part of a mail may hold raw: ESC, RIGHT-TO-LEFT OVERRIDE,
# LEFT-TO-RIGHT ISOLATE, C1 CSI
raw_controls ()
{
    LC_ALL=C grep -l -e "$(printf "\033")" -e "$(printf "\342\200\256")" \
        -e "$(printf "\342\201\246")" -e "$(printf "\302\233")" "$@"
}

test_expect_success 'a job name with a line break, ESC and a right-to-left override: the mail arrives, neutralised' '
    name=$(printf "evil\nBcc: root\033[2J\342\200\256txt.exe") &&
    submit --tracer -J "$name" --mail-type=END,FAIL --wrap "sleep 1" &&
    mail_for $job &&
    cat m.$job.1.headers m.$job.1.text &&
    cat >want.name <<-\EOF &&
	Name=evil\nBcc: root\x1b[2J\u202etxt.exe Ended, Run time
	EOF
    grep -F "Subject: Slurm Job_id=$job $(cat want.name) " m.$job.1.headers &&
    test $(grep -c "^Subject:" m.$job.1.headers) = 2 &&
    ! grep -i "^Bcc:" m.$job.1.headers &&
    grep "^To: tracertest" m.$job.1.headers &&
    grep "^X-Tracer-Job: $job$" m.$job.1.headers &&
    grep "^Content-Structure: multipart/mixed multipart/alternative text/plain text/html text/html$" \
        m.$job.1.headers &&
    # the record holds the name as tracerd cut it (controls made "?",
    # flagged in identity.truncated); the mail escapes what is left
    grep -F "(evil?Bcc: root?[2J\u202etxt.exe) ended: COMPLETED" \
        m.$job.1.text &&
    grep -F "Slurm Job_id=$job Name=evil\nBcc: root\x1b[2J\u202etxt.exe" \
        m.$job.1.text &&
    grep -F "evil?Bcc: root?[2J\u202etxt.exe" m.$job.1.html &&
    grep -F "evil\nBcc: root\x1b[2J\u202etxt.exe" m.$job.1.html &&
    test_must_fail raw_controls m.$job.1.* &&
    ! grep -i "^Bcc:" $MBOX
'

test_expect_success 'remove the job scripts' '
    rm -rf "$(cat jobs.dir)"
'

test_done
