"""Running a student's function safely: a time limit, the notebook's random state, forbidden helpers.

The exercise engine (:mod:`course_utils.checks`) calls a student's answer inside these context
managers: :func:`_time_limit` stops a call that runs too long, :func:`_preserved_random_state`
seeds NumPy and torch for one call and then restores the notebook's generators, and :func:`_guard`
records calls to the helpers an answer must not delegate to (and lets them work). After a crash,
:func:`_is_untouched_stub` tells the stub as shipped from a real attempt, and :func:`_student_line`
finds the line of the student's own code in the traceback. Needs only NumPy and the standard
library: torch is looked up in ``sys.modules``, never imported.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
import traceback
from pathlib import Path

import numpy as np

from course_utils._compare import _truncate

__all__ = [
    "_TimedOut",
    "_time_limit",
    "_preserved_random_state",
    "_guard",
    "_Probe",
    "_is_untouched_stub",
    "_student_line",
]

_PACKAGE_DIR = str(Path(__file__).resolve().parent)
# The exercise engine's own files (this one, the comparer and checks), spelled as their frames spell
# them: their frames are never the student's line, nor the helper a crash happened inside.
_ENGINE_FILES = frozenset(
    os.path.join(os.path.dirname(__file__), name) for name in ("_answer_runner.py", "_compare.py", "checks.py")
)


class _TimedOut(BaseException):
    """Raised inside the student's function when its time is up (a BaseException: `except Exception` lets it by)."""


@contextlib.contextmanager
def _time_limit(seconds):
    usable = (
        seconds
        and seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:  # no signals here (Windows, a worker thread): run without a limit
        yield
        return

    def _alarm(signum, frame):
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _preserved_random_state(seed):
    """Seed NumPy's and torch's global generators for one call, then restore the notebook's state."""
    np_state = np.random.get_state()  # noqa: NPY002  (the notebook's global generator, restored below)
    torch = sys.modules.get("torch")
    torch_state = torch.random.get_rng_state() if torch is not None else None
    np.random.seed(seed)  # noqa: NPY002
    if torch is not None:
        torch.manual_seed(seed)
    try:
        yield
    finally:
        np.random.set_state(np_state)  # noqa: NPY002
        if torch is not None:
            torch.random.set_rng_state(torch_state)


def _resolve(spec):
    """``"module:attr.path"`` -> (owner, attribute name, object, readable name)."""
    module_name, _, attr_path = spec.partition(":")
    owner = importlib.import_module(module_name)
    parts = attr_path.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    obj = getattr(owner, parts[-1])
    short = module_name.rsplit(".", 1)[-1] + "." + attr_path.removesuffix(".__init__")
    return owner, parts[-1], obj, short


def _recording(original, short, calls):
    def wrapper(*args, **kwargs):
        if short not in calls:
            calls.append(short)
        return original(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def _guard(forbidden, student_fn, calls):
    """While the block runs, calls to the forbidden helpers are recorded in ``calls`` (and still work)."""
    patches = []  # (namespace setter, restore)
    try:
        for spec in forbidden:
            try:
                owner, attr, original, short = _resolve(spec)
            except Exception:
                continue  # a module that is not installed cannot be delegated to

            wrapper = _recording(original, short, calls)
            setattr(owner, attr, wrapper)
            patches.append((owner, attr, original))
            namespace = getattr(student_fn, "__globals__", None)
            if isinstance(namespace, dict) and not attr.startswith("__"):
                for name, value in list(namespace.items()):
                    if value is original:  # `from module import helper` in the notebook
                        namespace[name] = wrapper
                        patches.append((namespace, name, original))
        yield
    finally:
        for owner, attr, original in reversed(patches):
            if isinstance(owner, dict):
                owner[attr] = original
            else:
                setattr(owner, attr, original)


class _Probe:
    """Wraps the student's function to record whether it ever returned None (for driven exercises)."""

    def __init__(self, fn):
        self.fn = fn
        self.returned_none = False

    def __call__(self, *args, **kwargs):
        result = self.fn(*args, **kwargs)
        if result is None:
            self.returned_none = True
        return result


def _is_untouched_stub(fn, exc) -> bool:
    """The stub as the lesson ships it: its body only raises NotImplementedError."""
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(exc, NotImplementedError):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or frames[-1].filename != code.co_filename or frames[-1].name != code.co_name:
        return False
    return not exc.args and set(code.co_names) <= {"NotImplementedError"}


def _is_library(filename: str) -> bool:
    """Course helpers, installed packages and the standard library: not the student's code."""
    return (
        filename.startswith(_PACKAGE_DIR)
        or "site-packages" in filename
        or filename.startswith((sys.prefix, sys.base_prefix))
    )


def _student_line(exc, fn) -> str:
    """` (your line N: `code`, inside helper)`: the deepest traceback frame in the student's own code.

    The student's code is the function's own file (a notebook cell) or any other file that is not
    a course helper, an installed package or the standard library (another cell, for instance).
    """
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename not in _ENGINE_FILES]
    code = getattr(fn, "__code__", None)
    own_file = code.co_filename if code is not None else None
    mine = [f for f in frames if f.filename == own_file or not _is_library(f.filename)]
    if not mine:
        return ""
    frame = mine[-1]
    text = f" (your line {frame.lineno}"
    if frame.line:
        text += f": `{_truncate(frame.line, 100)}`"
    last = frames[-1]
    if last is not frame:
        text += f", inside {Path(last.filename).stem}.{last.name}"
    return text + ")"
