# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# PBS hook for tracer: hands the job's events to tracer-prolog(8), which
# does all the work.  Events: execjob_begin and execjob_launch (start),
# execjob_epilogue (the final reading; order below pbs_cgroups' 100, so
# the job cgroup still exists) and execjob_end (ends the job on hosts
# where execjob_epilogue did not run).  It never rejects a job.
import os
import subprocess

import pbs

PROLOG = "@sbindir@/tracer-prolog"
EVENTS = {
    pbs.EXECJOB_BEGIN: "begin",
    pbs.EXECJOB_LAUNCH: "launch",
    pbs.EXECJOB_EPILOGUE: "epilogue",
    pbs.EXECJOB_END: "end",
}

e = pbs.event()
try:
    j = e.job
    args = [PROLOG, "pbs-hook", "--event", EVENTS[e.type], "--job", str(j.id),
            "--user", str(j.euser), "--group", str(j.egroup)]
    for opt, value in (("--job-name", j.Job_Name), ("--queue", j.queue),
                       ("--account", j.Account_Name),
                       ("--resources", j.Resource_List),
                       ("--exec-host", j.exec_host),
                       ("--exit-status", j.Exit_status)):
        if value is not None and str(value) != "":
            args += [opt, str(value)]
    if e.type == pbs.EXECJOB_LAUNCH:
        # this hook runs in a child of the job's starter process
        args += ["--pid", str(os.getppid())]
    subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={"PATH": "/bin:/usr/bin"},
                   timeout=25, check=False)
except Exception as ex:  # tracer never stops a job
    pbs.logmsg(pbs.LOG_WARNING, "tracer: %s" % (ex,))
e.accept()
