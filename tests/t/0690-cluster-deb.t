#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='the Debian packages, installed, trace a job

Runs only where TRACER_TEST_PACKAGES=1 says that the tracer and
slurm-tracer-plugin packages (debian/) are installed on this machine:
tools/test-all builds them from a clean clone, installs them, runs this
script and purges them again.  It checks that the files lie where
Debian, systemd and Slurm look, that the installed tracerd and the
plugin found in Slurm'"'"'s own PluginDir (plugstack.conf says only
"tracer.so") trace a job of an unprivileged user, that the installed
tracer-report shows it, and what srun and sbatch do with --tracer where
the plugin is not loaded (doc/install.md).'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

if [ "${TRACER_TEST_PACKAGES:-}" != 1 ]; then
    skip_all='the packages are not installed (TRACER_TEST_PACKAGES=1: tools/test-all)'
    test_done
fi
require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "the unprivileged user tracertest" \
    test_have_prereq TRACERTEST

REPORT=/usr/bin/tracer-report

# owner PATH: the package that owns PATH.
owner () { dpkg-query -S "$1" | sed 's/: .*//'; }

test_expect_success 'the programs, configuration and unit belong to the tracer package' '
    for f in /usr/sbin/tracerd /usr/bin/tracer-report /usr/bin/tracer-run \
             /usr/sbin/tracer-mail /usr/sbin/tracer-prolog \
             /etc/tracer/tracer.yaml /lib/systemd/system/tracerd.service \
             /usr/lib/tmpfiles.d/tracer.conf /etc/logrotate.d/tracer \
             /usr/share/bash-completion/completions/tracer-report \
             /usr/share/man/man8/tracerd.8.gz; do
        echo tracer >expect &&
        owner "$f" >actual &&
        test_cmp expect actual || return 1
    done
'

test_expect_success 'the installed programs read /etc/tracer/tracer.yaml' '
    for p in /usr/sbin/tracerd /usr/bin/tracer-report /usr/bin/tracer-run; do
        "$p" --help >help.out &&
        grep -q "(default /etc/tracer/tracer.yaml)" help.out || return 1
    done &&
    grep -q "^ExecStart=/usr/sbin/tracerd -f$" /lib/systemd/system/tracerd.service &&
    /usr/sbin/tracerd --check-config >check.out &&
    echo "/etc/tracer/tracer.yaml: OK" >expect &&
    head -1 check.out >actual &&
    test_cmp expect actual &&
    grep -q "^stall: " check.out
'

test_expect_success 'the plugin lies in Slurm'"'"'s own PluginDir' '
    plugin=$(dpkg-query -L slurm-tracer-plugin | grep "/tracer\.so$") &&
    test -f "$plugin" &&
    dir=${plugin%/tracer.so} &&
    dpkg-query -L slurm-wlm-basic-plugins | grep -qx "$dir/proctrack_cgroup.so" &&
    grep -qx "optional tracer.so" /etc/slurm/plugstack.conf.d/tracer.conf
'

test_expect_success 'tmpfiles.d made the spool and state directories, root only' '
    test "$(stat -c %U:%a /var/spool/tracer)" = root:700 &&
    test "$(stat -c %U:%a /run/tracer)" = root:755
'

test_expect_success 'the installed completion offers tracer-report options and fields' '
    cat >comp.sh <<-\EOF &&
	. /usr/share/bash-completion/completions/tracer-report
	COMP_WORDS=(tracer-report --allus); COMP_CWORD=1; _tracer_report
	printf "%s\n" "${COMPREPLY[@]}"
	COMP_WORDS=(tracer-report -o jobid,cpuef); COMP_CWORD=2; _tracer_report
	printf "%s\n" "${COMPREPLY[@]}"
	COMP_WORDS=(tracerd --che); COMP_CWORD=1; _tracerd
	printf "%s\n" "${COMPREPLY[@]}"
	EOF
    bash comp.sh >comp.out &&
    grep -qx -- --allusers comp.out &&
    grep -q "^jobid,cpueff" comp.out &&
    grep -qx -- --check-config comp.out
'

test_expect_success 'cluster up with the installed tracerd and plugin' '
    cluster_up --plugin tracer.so --tracerd /usr/sbin/tracerd &&
    grep -q "^optional tracer.so socket=" "$TRACER_CLUSTER_DIR/etc/plugstack.conf" &&
    pid=$(cat "$TRACER_CLUSTER_DIR/run/tracerd.pid") &&
    test "$(readlink "/proc/$pid/exe")" = /usr/sbin/tracerd
'

test_expect_success 'an unprivileged job traced through the installed plugin and daemon' '
    runuser -u tracertest -- srun --tracer --chdir=/tmp \
        sh -c "echo \$SLURM_JOB_ID; sleep 1" >job.out &&
    jobid=$(head -n1 job.out) &&
    test -n "$jobid" &&
    echo "$jobid" >jobid &&
    i=0 &&
    until runuser -u tracertest -- $REPORT -j "$jobid" --json >rec.json 2>rec.err
    do
        i=$((i + 1)) && test $i -lt 60 && sleep 0.5 || { cat rec.err; return 1; }
    done &&
    test "$(jq -r ".[0].identity.job_id" rec.json)" = "$jobid" &&
    test "$(jq -r ".[0].identity.uid" rec.json)" = "$(id -u tracertest)" &&
    test "$(jq -r ".[0].signature.scheme" rec.json)" = munge-sha256
'

test_expect_success 'the installed tracer-report -j shows the job' '
    runuser -u tracertest -- $REPORT -j "$(cat jobid)" >view.out &&
    grep -q "^Job $(cat jobid) " view.out &&
    grep -q "^  User/Group: *tracertest/.* (uid $(id -u tracertest)[,)]" view.out &&
    grep -q "signature valid" view.out
'

# What a site sees where a node lacks the plugstack line: the option is
# unknown to srun and sbatch, and the job is not run or not submitted
# (plugstack.conf is read again at every run).
test_expect_success 'without the plugin, srun --tracer and #SBATCH --tracer are refused' '
    cp "$TRACER_CLUSTER_DIR/etc/plugstack.conf" plugstack.saved &&
    : >"$TRACER_CLUSTER_DIR/etc/plugstack.conf" &&
    test_must_fail srun --tracer true 2>srun.err &&
    grep -q "unrecognized option.*tracer" srun.err &&
    printf "#!/bin/sh\n#SBATCH --tracer\ntrue\n" >job.sh &&
    test_must_fail sbatch job.sh 2>sbatch.err &&
    grep -q "unrecognized option.*tracer" sbatch.err &&
    cp plugstack.saved "$TRACER_CLUSTER_DIR/etc/plugstack.conf" &&
    srun --tracer true
'

test_done
