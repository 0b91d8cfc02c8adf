#!/usr/bin/python3
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# psutil-sampler: the peer that bench/collector-overhead measures tracer
# against.  It samples one step the way a psutil-based job monitor does:
# list the step's pids from its cgroup, read each process's CPU times,
# RSS, I/O counters, thread count and start time through psutil (one
# oneshot() per process, the Process objects kept across samples, name and
# exe read on first sight only), and read the step's totals from its
# cgroup files.  It takes one untimed sample (every pid's first sight, as
# in a monitor that has been running a while), then SAMPLES timed ones in
# a hot loop, and prints its own CPU time per sample (getrusage
# RUSAGE_SELF, user + system, over the loop only: no interpreter start-up
# or import) as one JSON object on stdout.
#
# Usage: psutil-sampler.py [--memory DIR] [--cpuacct DIR] [--unified DIR]
#                          SAMPLES
# Pids come from the v1 memory directory's cgroup.procs, else the
# cgroup2 directory's.  Exit status: 0 done, 1 failure (psutil missing, a
# file unreadable), 2 usage error.

import argparse
import json
import os
import platform
import resource
import sys
import time

try:
    import psutil
except ImportError as e:
    sys.stderr.write("psutil-sampler: cannot import psutil (%s); "
                     "install python3-psutil\n" % e)
    sys.exit(1)

# The step totals a job monitor reads each sample, per hierarchy.
V1_TOTALS = (("cpuacct", "cpuacct.usage"),
             ("memory", "memory.usage_in_bytes"),
             ("memory", "memory.max_usage_in_bytes"),
             ("memory", "memory.stat"))
V2_TOTALS = (("unified", "cpu.stat"),
             ("unified", "memory.current"),
             ("unified", "memory.peak"),
             ("unified", "memory.stat"))


def read_counter(path):
    """A one-number file as int, a key/value file as a dict of ints."""
    with open(path) as f:
        text = f.read()
    words = text.split()
    if len(words) == 1:
        return int(words[0])
    return {k: int(v) for k, v in zip(words[::2], words[1::2])}


def read_pids(path):
    with open(path) as f:
        return [int(line) for line in f if line.strip()]


class Monitor:
    def __init__(self, procs_path, totals):
        self.procs_path = procs_path
        self.totals = totals
        self.procs = {}  # pid -> (psutil.Process, static info)

    def process(self, pid):
        """The cached Process for pid, made on first sight."""
        entry = self.procs.get(pid)
        if entry is None:
            p = psutil.Process(pid)
            with p.oneshot():
                info = {"name": p.name(), "exe": p.exe()}
            entry = self.procs[pid] = (p, info)
        return entry[0]

    def sample(self):
        pids = read_pids(self.procs_path)
        tasks = {}
        for pid in pids:
            try:
                p = self.process(pid)
                with p.oneshot():
                    cpu = p.cpu_times()
                    tasks[pid] = {
                        "user": cpu.user,
                        "system": cpu.system,
                        "rss": p.memory_info().rss,
                        "io": p.io_counters(),
                        "threads": p.num_threads(),
                        "start": p.create_time(),
                    }
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                # gone between the list and the read, as in any monitor
                self.procs.pop(pid, None)
        for pid in set(self.procs) - set(pids):
            del self.procs[pid]
        step = {name: read_counter(path) for name, path in self.totals}
        return tasks, step


def main():
    ap = argparse.ArgumentParser(
        prog="psutil-sampler",
        description="Sample a step's processes with psutil; print CPU "
                    "time per sample as JSON.")
    ap.add_argument("--memory", help="the step's cgroup v1 memory directory")
    ap.add_argument("--cpuacct", help="the step's cgroup v1 cpuacct directory")
    ap.add_argument("--unified", help="the step's cgroup2 directory")
    ap.add_argument("samples", type=int, help="timed samples")
    args = ap.parse_args()
    if args.samples < 1 or not (args.memory or args.unified):
        ap.error("need SAMPLES >= 1 and --memory or --unified")

    dirs = {"memory": args.memory, "cpuacct": args.cpuacct,
            "unified": args.unified}
    spec = V1_TOTALS if args.memory else V2_TOTALS
    # files this kernel lacks are left out, as the minimal reader does
    totals = [(f, os.path.join(dirs[h], f)) for h, f in spec
              if dirs[h] and os.access(os.path.join(dirs[h], f), os.R_OK)]
    mon = Monitor(os.path.join(args.memory or args.unified, "cgroup.procs"),
                  totals)

    try:
        mon.sample()
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        w0 = time.monotonic()
        for _ in range(args.samples):
            tasks, _ = mon.sample()
        w1 = time.monotonic()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
    except OSError as e:
        sys.stderr.write("psutil-sampler: %s\n" % e)
        return 1

    n = args.samples
    user = (r1.ru_utime - r0.ru_utime) * 1e6 / n
    system = (r1.ru_stime - r0.ru_stime) * 1e6 / n
    json.dump({"samples": n,
               "procs": len(tasks),
               "files": [f for f, _ in totals],
               "cpu_us": user + system,
               "user_us": user,
               "sys_us": system,
               "wall_us": (w1 - w0) * 1e6 / n,
               "psutil": psutil.__version__,
               "python": platform.python_version()}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
