"""The time limit around an answer: an alarm in the kernel, a guard process past it, and the notice it leaves.

Moved out of :mod:`course_utils.checking.runner` whole (issue 26 section 5); the engine calls an answer inside
:func:`time_limit`.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from course_utils.checking.compare import shorten

__all__ = [
    "TimedOut",
    "TimeLimit",
    "STUCK_AFTER_STOPS",
    "HARD_STOP_GRACE_S",
    "stopped_notice",
    "time_limit",
]


class TimedOut(BaseException):
    """Raised inside the answer when its time is up (a BaseException: ``except Exception`` lets it by)."""


# ---------------------------------------------------------------------------------------------
# the time limit
# ---------------------------------------------------------------------------------------------

_REPEAT_S = 0.05  # after the deadline, stop again every 50 ms until the answer gives up
STUCK_AFTER_STOPS = 40


def _inject(thread_id: int, exc_type) -> None:
    """Raise ``exc_type`` in another thread at its next bytecode check.

    (Never called with NULL to clear a pending one: in CPython 3.11 that leaves the eval breaker set and
    hangs the next ``signal.signal``; the receiving side absorbs a late stop instead.)
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type))


class TimeLimit:
    """The state of one :func:`time_limit` block: when it started, whether the answer was stuck."""

    def __init__(self, seconds: float, on_stuck=None):
        self.seconds = seconds
        self.on_stuck = on_stuck
        self.start = time.monotonic()
        self.done = False
        self.stuck_reported = False
        self.stops_sent = 0
        self.lock = threading.Lock()
        self.finished = threading.Event()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start


def _watchdog(state: TimeLimit, thread_id: int) -> None:
    deadline = state.start + state.seconds
    if state.finished.wait(timeout=max(0.0, deadline - time.monotonic())):
        return
    while True:
        with state.lock:
            if state.done:
                return
            _inject(thread_id, TimedOut)
            state.stops_sent += 1
        # counted in stops actually sent: while one long C call holds the interpreter, this thread cannot run at all
        if not state.stuck_reported and state.stops_sent >= STUCK_AFTER_STOPS:
            state.stuck_reported = True
            if state.on_stuck is not None:
                with contextlib.suppress(Exception):
                    state.on_stuck(state)
        if state.finished.wait(timeout=_REPEAT_S):
            return


HARD_STOP_GRACE_S = 20.0

# The guard: a separate process reads one JSON line per event on stdin. {"arm": seconds, "token": n, "say": text,
# "record": log record or null, "log": path or null, "notice": path} starts a countdown; {"disarm": n} stops it.
# When a countdown runs out, the kernel is stuck where no signal or injected exception reaches it: the guard
# writes the verdict (stderr, the check log, a notice file the next check reads) and kills it. On EOF (the
# kernel ended) it exits.
_GUARD_SCRIPT = r"""
import json, os, queue, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel's interrupt (Jupyter's stop button, shutdown) is not ours
kernel = int(sys.argv[1])
events = queue.Queue()
def read():
    for line in sys.stdin.buffer:
        events.put(line)
    events.put(None)
threading.Thread(target=read, daemon=True).start()
armed = None
while True:
    try:
        line = events.get(timeout=None if armed is None else max(0.0, armed["deadline"] - time.monotonic()))
    except queue.Empty:
        line = b""
    if line is None:
        sys.exit(0)
    if line:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if "arm" in event:
            armed = event
            armed["deadline"] = time.monotonic() + float(event["arm"])
        elif armed is not None and event.get("disarm") == armed.get("token"):
            armed = None
        continue
    if armed is None or time.monotonic() < armed["deadline"]:
        continue
    if hasattr(os, "getppid") and os.getppid() != kernel:
        sys.exit(0)
    try:
        os.write(2, ("\n" + armed["say"] + "\n").encode("utf-8", "replace"))
    except OSError:
        pass
    for path, text in ((armed.get("log"), armed.get("record")), (armed.get("notice"), armed.get("say"))):
        if path and text:
            try:
                with open(path, "a", encoding="utf-8") as f:
                    f.write(text + "\n")
            except OSError:
                pass
    try:
        os.kill(kernel, getattr(signal, "SIGKILL", signal.SIGTERM))
    except OSError:
        pass
    sys.exit(0)
"""


NOTICE_FRESH_S = 900.0


def _notice_path(exercise_id: str) -> str:
    """Where the guard leaves the verdict of a kernel it ended, for this user and exercise."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in str(exercise_id))
    return os.path.join(tempfile.gettempdir(), f"course-check-stopped-{user}-{safe}.txt")


def stopped_notice(exercise_id: str) -> str | None:
    """The verdict the guard left when it ended an earlier kernel on this exercise (read once), or None."""
    path = _notice_path(exercise_id)
    try:
        age = time.time() - os.path.getmtime(path)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read().strip()
        os.remove(path)
    except OSError:
        return None
    if not text or age > NOTICE_FRESH_S:  # an old one is news to nobody: dropped unread
        return None
    last = text.splitlines()[-1]
    return shorten(f"(Last time: {last.lstrip('⌛ ')})", 600)


class _Guard:
    """The kernel's guard process, started on first use; every failure leaves the in-process limit alone."""

    def __init__(self, executable: str | None = None):
        self.executable = executable if executable is not None else sys.executable
        self.process = None
        self.failed = False
        self.token = 0
        self.lock = threading.Lock()

    def _start(self):
        if self.failed or not self.executable or os.environ.get("COURSE_CHECK_HARD_STOP", "1") == "0":
            return None
        if self.process is not None and self.process.poll() is None:
            return self.process
        try:
            self.process = subprocess.Popen(
                [self.executable, "-S", "-E", "-c", _GUARD_SCRIPT, str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                close_fds=True,
                bufsize=0,
            )
            os.set_blocking(self.process.stdin.fileno(), False)  # a check never waits on the guard
        except (OSError, ValueError, subprocess.SubprocessError):
            self.failed = True
            self.process = None
        return self.process

    def _send(self, event: dict) -> bool:
        process = self._start()
        if process is None:
            return False
        line = json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            written = os.write(process.stdin.fileno(), line)
        except (OSError, ValueError):
            written = -1
        if written != len(line):  # it died, or it is not reading: a lost disarm must never end the kernel
            with contextlib.suppress(OSError):
                process.kill()
            self.process = None  # started again next time
            return False
        return True

    def arm(self, seconds: float, say: str, record: str | None, exercise_id: str | None) -> int | None:
        with self.lock:
            self.token += 1
            event = {
                "arm": seconds,
                "token": self.token,
                "say": say,
                "record": record,
                "log": os.environ.get("COURSE_CHECK_LOG") or None,
                "notice": _notice_path(exercise_id) if exercise_id else None,
            }
            return self.token if self._send(event) else None

    def disarm(self, token: int | None) -> None:
        if token is None:
            return
        with self.lock:
            self._send({"disarm": token})


_guard = _Guard()


def hard_stop_after(seconds: float) -> float:
    """Seconds from a case's start after which the guard ends the kernel: the limit plus a generous grace."""
    return seconds + max(HARD_STOP_GRACE_S, seconds)


@contextlib.contextmanager
def time_limit(seconds, on_stuck=None, last_resort=None):
    """Stop the block after ``seconds`` by raising :class:`TimedOut` in it, repeatedly, until it gives up.

    ``on_stuck(state)`` is called (from the watchdog thread) when the block has caught 40 stops, sent every
    50 ms after its deadline, while Python code still ran. ``last_resort`` is ``(message, log record as a
    JSON line or None, exercise id)``: what the guard process says before it ends a kernel that is still in
    the block :func:`hard_stop_after` seconds after it began (one long call into C). ``seconds`` of None or <= 0
    means no limit. Yields a :class:`TimeLimit`; the notebook's own ``SIGALRM`` handler and timer are restored.
    """
    if not seconds or seconds <= 0:
        yield TimeLimit(float("inf"))
        return
    token = _guard.arm(hard_stop_after(float(seconds)), *last_resort) if last_resort is not None else None
    try:
        with _time_limit(seconds, on_stuck) as state:
            yield state
    finally:
        _guard.disarm(token)


@contextlib.contextmanager
def _time_limit(seconds, on_stuck):
    state = TimeLimit(float(seconds), on_stuck)
    thread_id = threading.get_ident()
    use_signal = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    previous_handler = previous_timer = None
    if use_signal:

        def _alarm(signum, frame):
            if not state.done:
                raise TimedOut

        previous_handler = signal.signal(signal.SIGALRM, _alarm)
        previous_timer = signal.setitimer(signal.ITIMER_REAL, state.seconds, _REPEAT_S)
    watchdog = threading.Thread(target=_watchdog, args=(state, thread_id), name="course-check-watchdog", daemon=True)
    watchdog.start()
    try:
        yield state
    finally:
        while True:  # a stop sent just before the answer returned lands here, and is absorbed
            try:
                with state.lock:
                    state.done = True  # from now on the watchdog sends nothing and our handler ignores alarms
                state.finished.set()
                if use_signal:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                for _ in range(3):  # backward jumps: a pending stop or alarm is delivered here
                    pass
                break
            except TimedOut:
                continue
        if use_signal:
            signal.signal(signal.SIGALRM, previous_handler)
            if previous_timer and previous_timer[0] > 0:  # the notebook had a timer running: give it back
                signal.setitimer(signal.ITIMER_REAL, *previous_timer)
        watchdog.join(timeout=1.0)
