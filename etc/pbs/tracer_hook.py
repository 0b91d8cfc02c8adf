# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# PBS hook for tracer: hands the job's events to tracer-prolog(8), which
# does all the work.  Events: execjob_begin and execjob_launch (start),
# execjob_epilogue (the final reading; order below pbs_cgroups' 100, so
# the job cgroup still exists) and execjob_end (ends the job on hosts
# where execjob_epilogue did not run).  It never rejects a job.
#
# A hook's output goes nowhere and the mom log shows only pbs.logmsg, so
# tracer-prolog keeps a log file of its own (LOG).  LOG and CONFIG (its
# --config; None for its default) can be changed here or in the hook's
# configuration file, a JSON object imported with
#   qmgr -c "import hook tracer application/x-config default tracer.json"
# e.g. {"log": "/var/spool/pbs/mom_logs/tracer-prolog.log"}.
import json
import os
import subprocess

import pbs

PROLOG = "@sbindir@/tracer-prolog"
LOG = "@localstatedir@/log/tracer/tracer-prolog.log"
CONFIG = None
EVENTS = {
    pbs.EXECJOB_BEGIN: "begin",
    pbs.EXECJOB_LAUNCH: "launch",
    pbs.EXECJOB_EPILOGUE: "epilogue",
    pbs.EXECJOB_END: "end",
}

e = pbs.event()
try:
    cfg = getattr(pbs, "hook_config_filename", None)
    if cfg:
        with open(cfg) as f:
            site = json.load(f)
        LOG = str(site.get("log", LOG))
        CONFIG = site.get("config", CONFIG)
    j = e.job
    args = [PROLOG, "--log", LOG]
    if CONFIG:
        args += ["--config", str(CONFIG)]
    args += ["pbs-hook", "--event", EVENTS[e.type], "--job", str(j.id),
             "--user", str(j.euser), "--group", str(j.egroup),
             # the node's name in PBS, which may not be the host name
             "--node", str(pbs.get_local_nodename())]
    # exec_host is not set yet at execjob_begin and execjob_launch;
    # exec_vnode is, and says which hosts the job has
    for opt, value in (("--job-name", j.Job_Name), ("--queue", j.queue),
                       ("--account", j.Account_Name),
                       ("--resources", j.Resource_List),
                       ("--exec-host", j.exec_host),
                       ("--exec-vnode", j.exec_vnode),
                       ("--exit-status", j.Exit_status)):
        if value is not None and str(value) != "":
            args += [opt, str(value)]
    if e.type == pbs.EXECJOB_LAUNCH:
        # this hook runs in a child of the job's starter process
        args += ["--pid", str(os.getppid())]
    r = subprocess.run(args, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env={"PATH": "/bin:/usr/bin"}, timeout=25, check=False)
    # what tracer-prolog could not write to its log (the log itself)
    for line in r.stderr.decode("utf-8", "replace").splitlines()[:5]:
        pbs.logmsg(pbs.LOG_WARNING, "tracer: %s" % (line,))
except Exception as ex:  # tracer never stops a job
    pbs.logmsg(pbs.LOG_WARNING, "tracer: %s" % (ex,))
e.accept()
