"""What runs inside a function: the arrays its local variables hold, and where a NaN first appears.

:func:`earlier_steps` reads the reference's intermediate results (its ``scores`` before its ``weights``) so
that :mod:`course_utils.checking.relations` can say "your result is what the computation holds at an
earlier step"; :func:`nan_origin` says where a NaN first appears in the student's own code, which is how a
NaN result is explained (never by matching it to a mistake that makes NaNs).

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import contextlib
import linecache
import sys

import numpy as np

from course_utils.checking import recorded
from course_utils.checking.compare import is_array, to_numpy

__all__ = ["earlier_steps", "nan_origin", "has_nan", "all_nan", "has_overflow", "overflow_key", "OVERFLOW_WORDS"]

OVERFLOW_WORDS = "overflowed to inf"
"""The words :func:`nan_origin` adds when a value of the student's own became +inf before the first NaN."""


def _plain(value) -> bool:
    """A list or tuple of plain numbers (one array written out), not a tuple of outputs."""
    return all(isinstance(item, (int, float, bool)) for item in value)


def _snapshot(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if is_array(value):
        with contextlib.suppress(Exception):
            return value.detach().clone()
    return None


@contextlib.contextmanager
def _tracing(codes, on_line):
    previous = sys.gettrace()

    def local(frame, event, arg):
        if event in ("line", "return"):
            on_line(frame, event, arg)
        return local

    def global_(frame, event, arg):
        if frame.f_code in codes:
            return local
        return None

    sys.settrace(global_)
    try:
        yield
    finally:
        sys.settrace(previous)


def earlier_steps(run, codes) -> tuple:
    """``((name, value), ...)``: the last array each local variable held while ``run()`` ran, in the frames
    of the code objects ``codes`` (the reference's), in the order the names first appeared."""
    return recorded.steps(run, lambda: _earlier_steps(run, codes))


def _earlier_steps(run, codes) -> tuple:
    seen: dict = {}

    def on_line(frame, event, returned):
        for name, value in frame.f_locals.items():
            if is_array(value):
                snap = _snapshot(value)
                if snap is not None:
                    seen[name] = snap

    with contextlib.suppress(Exception), _tracing(set(codes), on_line):
        run()
    return tuple(seen.items())


def has_nan(value) -> bool:
    """True for an array or tensor with a NaN in it (or a tuple or list with one such item)."""
    if isinstance(value, (tuple, list)) and not _plain(value):
        return any(has_nan(item) for item in value)
    try:
        a = to_numpy(value) if is_array(value) else np.asarray(value)
        return a.dtype.kind in "fc" and bool(np.isnan(a).any())
    except Exception:
        return False


def all_nan(value) -> bool:
    """True for an array or tensor (or number) that is NaN everywhere (every item of a tuple or list)."""
    if isinstance(value, (tuple, list)) and not _plain(value):
        return bool(value) and all(all_nan(item) for item in value)
    try:
        a = to_numpy(value) if is_array(value) else np.asarray(value)
        return a.dtype.kind in "fc" and a.size > 0 and bool(np.isnan(a).all())
    except Exception:
        return False


def has_overflow(value) -> bool:
    """True for an array or tensor with a +inf in it: a value too large for its dtype (``exp`` of 1000)."""
    try:
        a = to_numpy(value) if is_array(value) else None
        return a is not None and a.dtype.kind == "f" and bool(np.isposinf(a).any())
    except Exception:
        return False


def overflow_key(note: str, every_case: bool) -> str | None:
    """``"nan:overflow"`` when the NaN note says a value overflowed first and NaN explains every failing case."""
    return "nan:overflow" if every_case and OVERFLOW_WORDS in note else None


def nan_origin(run, codes, given=()) -> str:
    """Where a NaN first appears while ``run()`` runs the student's code (``codes``): "`weights`, after your
    line 4: `...`", or "" when no local variable of that code ever holds one. When one of its own values became
    +inf before (an ``exp`` of a score in the thousands), that is said too: inf / inf and inf - inf are NaN."""
    found: list = []
    overflow: list = []
    last_line: dict = {}
    params: dict = {}  # frame -> {name: id(value)} of what it was handed: a NaN handed in is not the answer's
    skip = {id(a) for a in given}

    def on_line(frame, event, returned):
        if found:
            return
        handed = params.setdefault(id(frame), {name: id(v) for name, v in frame.f_locals.items()})
        done = frame.f_lineno if event == "return" else last_line.get(id(frame))
        last_line[id(frame)] = frame.f_lineno
        if done is None:
            return
        for name, value in frame.f_locals.items():
            if id(value) in skip or handed.get(name) == id(value):
                continue
            if is_array(value) and has_nan(value):
                line = linecache.getline(frame.f_code.co_filename, done).strip()
                found.append(f"`{name}`, after your line {done}" + (f": `{line[:80]}`" if line else ""))
                if overflow:
                    found[-1] += (
                        f"; before it, `{overflow[0][0]}` {OVERFLOW_WORDS} after your line {overflow[0][1]} (a value "
                        "too large for its dtype, as exp of a score in the thousands is), and inf / inf is NaN"
                    )
                return
            if not overflow and is_array(value) and has_overflow(value):
                overflow.append((name, done))
        if event == "return" and has_nan(returned):
            line = linecache.getline(frame.f_code.co_filename, done).strip()
            found.append(f"what your line {done} returns" + (f": `{line[:80]}`" if line else ""))

    with contextlib.suppress(Exception), _tracing(set(codes), on_line):
        run()
    return found[0] if found else ""
