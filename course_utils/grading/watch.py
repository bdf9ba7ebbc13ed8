"""The grader's watch over one sandbox, from outside it: the memory of all its processes together.

:class:`MemoryWatch` finds every process descended from the sandbox's first process (bubblewrap; the notebook's
processes are its descendants whatever they do, ``setsid`` and double forks included, since orphans are adopted by
the sandbox's own PID 1) through ``/proc``, sums their resident memory every :data:`PERIOD_S` seconds and, past
the limit, kills them all. What the notebook wrote into the sandbox's memory-backed file systems (``/tmp``,
``/dev/shm``, its folder, ...: tmpfs, whose pages are in no process's resident memory) counts too: the watch reads
their use from outside, through ``/proc/PID/root/MOUNT`` of a process of the sandbox. This is the fallback the issue asks for where cgroup v2 is not delegated to the grader
(this course's machines have cgroup v1): a sampling watcher, so a notebook can exceed the limit for up to one period
(each process is also held to the limit by its address-space rlimit). Shared pages count once per process, so the
sum is an upper bound. Linux only: elsewhere the watch does nothing and the report says so.
"""

from __future__ import annotations

import os
import signal
import threading

__all__ = ["PERIOD_S", "MemoryWatch", "descendants", "resident_bytes", "tmpfs_bytes"]

PERIOD_S = 0.1
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _children(pid: int) -> list[int]:
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found += [int(p) for p in handle.read().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (through ``/proc/PID/task/TID/children``)."""
    seen, todo = [], [pid]
    while todo and len(seen) < 100_000:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        todo += _children(current)
    return seen


def tmpfs_bytes(pid: int, mounts) -> int:
    """Bytes used in these file systems of ``pid``'s mount namespace (``/proc/PID/root/MOUNT``), ``mounts`` being
    ``(path, size)``: a file system larger than ``size`` is not the sandbox's tmpfs (a sandbox still starting sees
    the host's) and does not count."""
    total = 0
    for mount, size in mounts:
        try:
            info = os.statvfs(f"/proc/{pid}/root{mount}")
        except OSError:
            continue
        if info.f_blocks * info.f_frsize <= size:
            total += (info.f_blocks - info.f_bfree) * info.f_frsize
    return total


def resident_bytes(pids) -> int:
    """The resident memory of these processes, summed (``/proc/PID/statm``)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
                total += int(handle.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


class MemoryWatch(threading.Thread):
    """Kill every process below ``pid`` once their resident memory together (and what the sandbox holds in
    ``mounts``, its tmpfs file systems as ``(path, size)``) passes ``limit`` bytes."""

    def __init__(self, pid: int, limit: int, mounts=()):
        super().__init__(daemon=True)
        self.pid, self.limit, self.mounts = pid, limit, tuple(mounts)
        self.exceeded, self.most = False, 0
        self.done = threading.Event()
        self.active = os.path.isdir(f"/proc/{os.getpid()}/task")
        self.start()

    def run(self) -> None:
        while self.active and not self.done.wait(PERIOD_S):
            pids = descendants(self.pid)
            used = resident_bytes(pids) + (tmpfs_bytes(pids[-1], self.mounts) if len(pids) > 1 else 0)
            self.most = max(self.most, used)
            if used > self.limit:
                self.exceeded = True
                for pid in reversed(pids):  # the deepest first; the sandbox's own process last
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                return

    def stop(self) -> None:
        self.done.set()
