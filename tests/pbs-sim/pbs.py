# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
"""A small stand-in for OpenPBS's embedded ``pbs`` hook module.

tests/sched-emu runs a site hook (a Python file) the way pbs_mom does and
puts this directory first on sys.path, so that ``import pbs`` in the hook
gets this module.  It offers the part of the real interface that
execution-host hooks use: pbs.event() with the job's attributes, accept()
and reject(), logmsg(), the event type and log level constants, sizes and
durations.

The emulator hands the event over in a JSON file and gets the verdict
back in another (_sim_run below), so nothing of it shows in the hook's
environment, which pbs_mom fixes to three variables.  As in pbs_mom, the
hook runs as a module named 'builtins' (hooks test __name__ for that),
and accept() and reject() end the hook by raising SystemExit.
"""

import builtins as _builtins
import json as _json
import socket as _socket
import sys as _sys
import traceback as _traceback

# Event types: the HOOK_EVENT_* values of OpenPBS src/include/hook.h.
QUEUEJOB = 0x01
MODIFYJOB = 0x02
RESVSUB = 0x04
MOVEJOB = 0x08
RUNJOB = 0x10
PROVISION = 0x20
EXECJOB_BEGIN = 0x40
EXECJOB_PROLOGUE = 0x80
EXECJOB_EPILOGUE = 0x100
EXECJOB_END = 0x200
EXECJOB_PRETERM = 0x400
EXECJOB_LAUNCH = 0x800
EXECHOST_PERIODIC = 0x1000
EXECHOST_STARTUP = 0x2000
EXECJOB_ATTACH = 0x4000
EXECJOB_RESIZE = 0x20000
EXECJOB_ABORT = 0x40000

# Event classes for logmsg (PBSEVENT_* of OpenPBS src/include/log.h).
EVENT_ERROR = 0x0001
EVENT_SYSTEM = 0x0002
EVENT_ADMIN = 0x0004
EVENT_JOB = 0x0008
EVENT_JOB_USAGE = 0x0010
EVENT_SECURITY = 0x0020
EVENT_SCHED = 0x0040
EVENT_DEBUG = 0x0080
EVENT_DEBUG2 = 0x0100
EVENT_RESV = 0x0200
EVENT_DEBUG3 = 0x0400
EVENT_DEBUG4 = 0x0800
EVENT_FORCE = 0x8000

# Severities for logmsg (syslog levels, as the real module has them).
LOG_ERROR = 3
LOG_WARNING = 4
LOG_NOTICE = 5
LOG_INFO = 6
LOG_DEBUG = 7

_UNITS = {'b': 1, 'kb': 1 << 10, 'mb': 1 << 20, 'gb': 1 << 30,
          'tb': 1 << 40, 'pb': 1 << 50, 'w': 8, 'kw': 8 << 10,
          'mw': 8 << 20, 'gw': 8 << 30}


class size(str):
    """A PBS size ("200mb"); int() gives bytes."""

    def __int__(self):
        s = self.strip().lower()
        for unit in sorted(_UNITS, key=len, reverse=True):
            if s.endswith(unit) and s[:-len(unit)].isdigit():
                return int(s[:-len(unit)]) * _UNITS[unit]
        return int(s)


class duration(int):
    """A PBS duration: an int of seconds that prints as HH:MM:SS."""

    def __new__(cls, value):
        if isinstance(value, str) and ':' in value:
            secs = 0
            for part in value.split(':'):
                secs = secs * 60 + int(part)
            value = secs
        return int.__new__(cls, int(value))

    def __str__(self):
        s = int(self)
        return '%02d:%02d:%02d' % (s // 3600, s % 3600 // 60, s % 60)


def _typed(key, value):
    if key in ('walltime', 'cput', 'soft_walltime'):
        return duration(value)
    if key in ('mem', 'vmem', 'pmem', 'pvmem'):
        return size(value)
    try:
        return int(value)
    except ValueError:
        return value


class _Resources(object):
    """Resource_List or resources_used: ordered key=value pairs."""

    def __init__(self, pairs):
        self._pairs = [[k, v] for k, v in pairs]

    def __str__(self):
        return ','.join('%s=%s' % (k, v) for k, v in self._pairs)

    __repr__ = __str__

    def __getitem__(self, key):
        for k, v in self._pairs:
            if k == key:
                return _typed(k, v)
        return None

    def __setitem__(self, key, value):
        for pair in self._pairs:
            if pair[0] == key:
                pair[1] = str(value)
                return
        self._pairs.append([key, str(value)])

    def __contains__(self, key):
        return any(k == key for k, _ in self._pairs)

    def __iter__(self):
        return iter([k for k, _ in self._pairs])

    def keys(self):
        return [k for k, _ in self._pairs]


class _Job(object):
    """A job as the hook sees it; unset attributes read as None."""

    def __init__(self, attrs):
        for key, value in attrs.items():
            if key in ('Resource_List', 'resources_used') \
                    and value is not None:
                value = _Resources(value)
            object.__setattr__(self, key, value)

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return None

    def in_ms_mom(self):
        return True

    def is_checkpointed(self):
        return False


class _Vnode(object):
    def __init__(self, name):
        self.name = name

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return None


class _Event(object):
    def __init__(self, data):
        self.type = data['type']
        self.hook_name = data.get('hook_name')
        self.hook_type = 'site'
        self.requestor = data.get('requestor', 'pbs_mom')
        self.requestor_host = data.get('requestor_host', 'localhost')
        self.job = _Job(data['job'])
        host = data.get('hostname') or get_local_nodename()
        _STATE['nodename'] = host
        self.vnode_list = {host: _Vnode(host)}
        self.vnode_list_fail = {}
        self.pid = data.get('pid')
        self.progname = data.get('progname')
        self.argv = data.get('argv')
        self.env = data.get('env')
        self.accepted = None

    def accept(self, code=0):
        _STATE['verdict'] = 'accept'
        raise SystemExit(code)

    def reject(self, msg='', code=255):
        _STATE['verdict'] = 'reject'
        _STATE['reject_msg'] = str(msg)
        raise SystemExit(code)


_STATE = {'event': None, 'verdict': None, 'reject_msg': None, 'logs': [],
          'exception': None}


def event():
    """The event the hook is running for."""
    if _STATE['event'] is None:
        raise RuntimeError('pbs.event(): no event (not run by sched-emu)')
    return _STATE['event']


def logmsg(level, msg):
    _STATE['logs'].append([int(level), str(msg)])


def logjobmsg(jobid, msg):
    _STATE['logs'].append([EVENT_JOB, '%s;%s' % (jobid, msg)])


def get_local_nodename():
    """The name PBS gives this node (PBS_MOM_NODE_NAME), which may
    differ from the host name."""
    return _STATE.get('nodename') or _socket.gethostname().split('.')[0]


def _sim_run(hook_path, event_path, result_path):
    """Run the hook at hook_path for the event in event_path and write the
    verdict to result_path.  Called by the emulator's bootstrap, never by
    hooks.  A hook that ends without accept() or reject() is accepted;
    one that raises is rejected, as pbs_mom rejects a failing hook.
    """
    with open(event_path) as f:
        _STATE['event'] = _Event(_json.load(f))
    namespace = {'__name__': 'builtins', '__builtins__': _builtins}
    try:
        with open(hook_path) as f:
            code = compile(f.read(), hook_path, 'exec')
        exec(code, namespace)
    except SystemExit:
        pass
    except BaseException:
        _STATE['exception'] = _traceback.format_exc()
        _STATE['verdict'] = 'reject'
        _sys.stderr.write(_STATE['exception'])
    if _STATE['verdict'] is None:
        _STATE['verdict'] = 'accept'
    result = {'verdict': _STATE['verdict'],
              'reject_msg': _STATE['reject_msg'],
              'logs': _STATE['logs'],
              'exception': _STATE['exception']}
    with open(result_path, 'w') as f:
        _json.dump(result, f)
