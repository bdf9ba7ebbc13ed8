"""Instant feedback for exercises, and assertions with teaching-quality messages.

Introduced in ``notebooks/00_start_here.ipynb``. A lesson's check cell is one line::

    checks.check("01.softmax_along", softmax_along)

The cases, the reference answer, the misconceptions the exercise can show and the helpers an
answer must not call all live in :mod:`course_utils.exercises`; the check cell shows no solution.
The check prints one line and returns None, whatever the answer does: *not attempted yet* (the
untouched stub), *passed*, *wrong* (the first differing case and entry; a known misconception by
name, with the section to re-read; a forgotten ``return``; a call to the very helper under test),
*crashed* (the exception and the student's own line) or *timed out*.

If the environment variable ``COURSE_CHECK_LOG`` names a file, every :func:`check` appends one
JSON line to it: ``{"exercise", "lesson", "status", "misconception", "detail"}``.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import math
import os
import signal
import sys
import threading
import traceback
from pathlib import Path

import numpy as np

from course_utils import exercises as _registry
from course_utils import misconceptions as _misconceptions

__all__ = [
    "check",
    "demonstrate",
    "hint",
    "predict",
    "check_exercise",
    "assert_shape",
    "assert_close",
    "compare",
    "TIME_LIMIT_S",
]

TIME_LIMIT_S = 5.0
"""Seconds one call of a student's function may run before it is stopped."""

_MAX_MESSAGE = 400
_PACKAGE_DIR = str(Path(__file__).resolve().parent)


# ---------------------------------------------------------------------------------------------
# Describing and comparing values: never raises, whatever comes in.
# ---------------------------------------------------------------------------------------------


def _truncate(text: str, limit: int = _MAX_MESSAGE) -> str:
    text = " ".join(str(text).split())  # one line
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _safe_repr(x, limit: int = 80) -> str:
    try:
        text = repr(x)
    except Exception:  # an object whose __repr__ raises still gets a name
        return f"<unprintable {_type_name(x)}>"
    return _truncate(text, limit)


def _safe_str(x, limit: int = 200) -> str:
    try:
        return _truncate(str(x), limit)
    except Exception:
        return f"<unprintable {_type_name(x)}>"


def _type_name(x) -> str:
    try:
        return type(x).__name__
    except Exception:
        return "object"


def _is_tensor(x) -> bool:
    try:
        return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "shape")
    except Exception:
        return False


def _to_numpy(x):
    """An ndarray from an array, a tensor of any dtype or layout, or a nested sequence."""
    if _is_tensor(x):
        t = x.detach()
        if getattr(t, "is_sparse", False) or str(getattr(t, "layout", "")).startswith("torch.sparse"):
            t = t.to_dense()
        if t.is_complex():
            return t.cpu().resolve_conj().numpy()
        if t.dtype.is_floating_point and t.dtype not in (_torch_dtype("float32"), _torch_dtype("float64")):
            t = t.double()  # bfloat16, float16, float8: NumPy cannot hold all of them
        return t.cpu().numpy()
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x)


def _torch_dtype(name):
    torch = sys.modules.get("torch")
    return getattr(torch, name, None) if torch is not None else None


def _describe(x) -> str:
    try:
        if _is_tensor(x):
            return f"a tensor of shape {tuple(x.shape)} and dtype {str(x.dtype).replace('torch.', '')}"
        if isinstance(x, np.ndarray):
            return f"an array of shape {x.shape} and dtype {x.dtype}"
        if isinstance(x, (tuple, list)):
            return f"a {_type_name(x)} of {len(x)} items"
        if x is None or isinstance(x, (bool, int, float, complex, str, np.generic)):
            return f"{_type_name(x)} {_safe_repr(x, 40)}"
    except Exception:
        pass
    return f"a {_type_name(x)}"


def _fmt(value) -> str:
    try:
        if isinstance(value, (bool, np.bool_)):
            return str(bool(value))
        if isinstance(value, (int, np.integer)):
            return str(int(value))
        if isinstance(value, (float, np.floating)):
            return f"{float(value):.4g}"
        if isinstance(value, (complex, np.complexfloating)):
            return f"{complex(value):.4g}"
    except Exception:
        pass
    return _safe_repr(value, 40)


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _compare(expected, got, atol, rtol, path, equal_nan, reveal):
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            return f"{path}: expected a {type(expected).__name__} of {len(expected)} items but got {_describe(got)}"
        if len(got) != len(expected):
            return f"{path}: expected {len(expected)} items but got {len(got)}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            problem = _compare(e, g, atol, rtol, f"{path}[{i}]", equal_nan, reveal)
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return f"{path}: expected a dict with keys {sorted(map(str, expected))} but got {_describe(got)}"
        for key in expected:
            problem = _compare(expected[key], got[key], atol, rtol, f"{path}[{key!r}]", equal_nan, reveal)
            if problem:
                return problem
        return None
    if _is_tensor(expected) or isinstance(expected, np.ndarray):
        return _compare_arrays(expected, got, atol, rtol, path, equal_nan, reveal)
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(got, (bool, np.bool_)) or bool(got) != bool(expected):
            shown = _fmt(expected) if reveal else "another value"
            return (
                f"{path}: expected {shown} but got {_fmt(got) if isinstance(got, (bool, np.bool_)) else _describe(got)}"
            )
        return None
    if _is_number(expected):
        if (_is_tensor(got) or isinstance(got, np.ndarray)) and not isinstance(got, bool):
            if int(np.prod(tuple(got.shape))) != 1:
                return f"{path}: expected a number but got {_describe(got)}"
            got = _to_numpy(got).reshape(-1)[0].item()
        if not _is_number(got):
            return f"{path}: expected a number but got {_describe(got)}"
        e, g = float(expected), float(got)
        if math.isnan(g) or math.isnan(e):
            if equal_nan and math.isnan(g) and math.isnan(e):
                return None
            return f"{path}: got NaN" if math.isnan(g) else f"{path}: expected NaN but got {_fmt(g)}"
        if not math.isclose(g, e, rel_tol=rtol, abs_tol=atol):
            if reveal and float(e).is_integer() and float(g).is_integer() and max(abs(e), abs(g)) < 2**53:
                return f"{path}: expected {int(e):,} but got {int(g):,}"
            if reveal:
                return f"{path}: expected {_fmt(e)} but got {_fmt(g)}"
            return f"{path}: off by {_fmt(abs(g - e))} (too {'high' if g > e else 'low'})"
        return None
    if expected is None:
        return None if got is None else f"{path}: expected None but got {_describe(got)}"
    if isinstance(expected, str):
        return None if got == expected else f"{path}: expected {expected!r} but got {_describe(got)}"
    same = expected == got
    if not isinstance(same, (bool, np.bool_)):
        same = bool(np.all(same))
    return None if same else f"{path}: expected {_safe_repr(expected)} but got {_describe(got)}"


def _compare_arrays(expected, got, atol, rtol, path, equal_nan, reveal):
    if not (_is_tensor(got) or isinstance(got, (np.ndarray, list, tuple, float, int, np.generic))):
        return f"{path}: expected {_describe(expected)} but got {_describe(got)}"
    if _is_tensor(expected) and not _is_tensor(got):
        return f"{path}: expected a torch.Tensor but got {_describe(got)}"
    exp = _to_numpy(expected)
    try:
        act = _to_numpy(got)
    except Exception:
        return f"{path}: expected {_describe(expected)} but got {_describe(got)}, which is not a regular array"
    if act.dtype == object:
        return f"{path}: expected {_describe(expected)} but got {_describe(got)}, which is not a regular array"
    if exp.shape != act.shape:
        return f"{path}: expected shape {tuple(exp.shape)} but got shape {tuple(act.shape)}"
    if exp.dtype == np.bool_ or act.dtype == np.bool_:
        if exp.dtype != act.dtype:
            got_dtype = str(got.dtype).replace("torch.", "") if _is_tensor(got) else act.dtype
            return f"{path}: expected dtype bool but got dtype {got_dtype}"
        bad = np.argwhere(exp != act)
    else:
        if not (np.issubdtype(act.dtype, np.number) and np.issubdtype(exp.dtype, np.number)):
            return f"{path}: expected numbers but got dtype {act.dtype}"
        if np.issubdtype(act.dtype, np.complexfloating) and not np.issubdtype(exp.dtype, np.complexfloating):
            return f"{path}: expected real numbers but got complex dtype {act.dtype}"
        e = exp.astype(np.complex128 if np.iscomplexobj(exp) else np.float64)
        a = act.astype(np.complex128 if np.iscomplexobj(act) else np.float64)
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        if not equal_nan and nan_a.any() and not nan_e.any():
            where = tuple(int(i) for i in np.argwhere(nan_a)[0])
            return f"{path}: contains NaN, first at index {where}"
        close = np.isclose(a, e, atol=atol, rtol=rtol, equal_nan=equal_nan)
        bad = np.argwhere(~close)
    if len(bad):
        idx = tuple(int(i) for i in bad[0])
        where = f"{len(bad)} of {exp.size} entries differ; first at index {idx}"
        if reveal or exp.dtype == np.bool_:
            return f"{path}: {where}: expected {_fmt(exp[idx])}, got {_fmt(act[idx])}"
        try:
            off = float(abs(act[idx] - exp[idx]))
            direction = "too high" if act[idx] > exp[idx] else "too low"
            return f"{path}: {where}: off by {_fmt(off)} ({direction})"
        except Exception:
            return f"{path}: {where}"
    return None


def compare(
    expected, got, *, atol: float = 1e-6, rtol: float = 1e-5, path: str = "result", equal_nan=False, reveal=True
):
    """Return ``None`` if ``got`` matches ``expected``, else a one-line explanation. Never raises.

    Handles NumPy arrays, torch tensors of any dtype (bfloat16, complex, sparse), tuples/lists of
    them, dicts, numbers and booleans. Floats are compared with
    ``abs(got - expected) <= atol + rtol * abs(expected)``; NaN never matches unless ``equal_nan``.
    Whatever ``got`` is (a generator, a ragged list, an object whose ``__repr__`` or ``__eq__``
    raises), the answer is a short message, never an exception. With ``reveal=False`` a wrong
    entry is described by how far off it is, not by the expected value.

    Introduced in notebooks/00_start_here.ipynb.
    """
    try:
        problem = _compare(expected, got, atol, rtol, path, equal_nan, reveal)
    except RecursionError:
        problem = f"{path}: got {_describe(got)}, nested too deeply to compare"
    except Exception as exc:  # whatever the answer is, explain instead of raising
        problem = f"{path}: expected {_describe(expected)} but got {_describe(got)} ({_type_name(exc)} comparing them)"
    return None if problem is None else _truncate(problem)


# ---------------------------------------------------------------------------------------------
# Running a student's function: time limit, forbidden helpers, where it crashed.
# ---------------------------------------------------------------------------------------------


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
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
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


# ---------------------------------------------------------------------------------------------
# The check.
# ---------------------------------------------------------------------------------------------

_EXPECTED_CACHE: dict = {}


def _cases_and_expected(exercise):
    if exercise.id not in _EXPECTED_CACHE:
        cases = [c if isinstance(c, tuple) else (c,) for c in exercise.make_cases()]
        expected = []
        for i, args in enumerate(cases):
            with _preserved_random_state(i):
                expected.append(_call(exercise, exercise.reference, args))
        _EXPECTED_CACHE[exercise.id] = (cases, expected)
    return _EXPECTED_CACHE[exercise.id]


def _call(exercise, fn, args):
    args = copy.deepcopy(args)  # a function that modifies its input cannot spoil the next one
    if exercise.driver is not None and fn is not exercise.reference:
        return exercise.driver(fn, *args)
    return fn(*args)


def _first_problem(exercise, expected, got, *, reveal=True, equal_nan=False):
    atol, rtol = exercise.atol, exercise.rtol
    if exercise.output_names and isinstance(expected, tuple) and len(expected) == len(exercise.output_names):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            names = ", ".join(exercise.output_names)
            return f"expected a tuple ({names}) but got {_describe(got)}"
        for name, e, g in zip(exercise.output_names, expected, got, strict=True):
            problem = compare(e, g, atol=atol, rtol=rtol, path=name, equal_nan=equal_nan, reveal=reveal)
            if problem:
                return problem
        return None
    return compare(expected, got, atol=atol, rtol=rtol, path="result", equal_nan=equal_nan, reveal=reveal)


def _crash_signature(exc):
    """What makes two crashes the same mistake: the exception type and the start of its message."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    return type(exc), text[:80]


def _misconception_outputs(exercise, cases):
    """For each declared misconception: a list of ("ok", value) or ("raised", exception type) per case."""
    key = ("bugs", exercise.id)
    if key not in _EXPECTED_CACHE:
        outputs = {}
        for mid, buggy in exercise.misconceptions.items():
            rows = []
            for i, args in enumerate(cases):
                try:
                    with _preserved_random_state(i), np.errstate(all="ignore"):
                        rows.append(("ok", _call(exercise, buggy, args)))
                except Exception as exc:
                    rows.append(("raised", _crash_signature(exc)))
            outputs[mid] = rows
        _EXPECTED_CACHE[key] = outputs
    return _EXPECTED_CACHE[key]


def _matching_misconception(exercise, cases, results):
    """The first declared misconception whose buggy reference behaves like the student on every case run."""
    for mid, rows in _misconception_outputs(exercise, cases).items():
        ok = True
        for (kind, value), (s_kind, s_value) in zip(rows, results, strict=False):
            if kind != s_kind:
                ok = False
            elif kind == "raised":
                ok = s_value == value
            else:
                ok = _first_problem(exercise, value, s_value, equal_nan=True) is None
            if not ok:
                break
        if ok:
            return _misconceptions.get(mid)
    return None


def _log(exercise, status, misconception, detail) -> None:
    target = os.environ.get("COURSE_CHECK_LOG")
    if not target:
        return
    record = {
        "exercise": exercise.id,
        "lesson": exercise.lesson,
        "status": status,
        "misconception": misconception,
        "detail": detail,
    }
    line = json.dumps(record, ensure_ascii=False) + "\n"
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(line)  # one write of the whole line
            f.flush()
    except OSError as exc:
        print(f"(could not append to COURSE_CHECK_LOG={target!r}: {exc})")


_ICONS = {"passed": "✅", "wrong": "❌", "crashed": "💥", "not_attempted": "⏳", "timed_out": "⌛"}


def _verdict(exercise, student_fn, time_limit):
    """Run every case; return (status, misconception id or None, detail)."""
    name = exercise.title
    cases, expected = _cases_and_expected(exercise)
    n = len(cases)
    probe = _Probe(student_fn)
    calls: list = []
    results = []  # per case: ("ok", value) or ("raised", exception type), for misconception matching
    first_wrong = None
    for i, args in enumerate(cases, start=1):
        try:
            with _preserved_random_state(i - 1), _guard(exercise.forbidden, student_fn, calls):
                with np.errstate(all="ignore"), _time_limit(time_limit):
                    got = _call(exercise, probe, args)
        except _TimedOut:
            return (
                "timed_out",
                None,
                (
                    f"{name}: case {i} of {n} ran for more than {time_limit:g} s and was stopped; "
                    "look for a loop that never ends (the kernel is fine)."
                ),
            )
        except (Exception, SystemExit) as exc:  # sys.exit() in an answer is a crash too
            if i == 1 and _is_untouched_stub(student_fn, exc):
                return (
                    "not_attempted",
                    None,
                    (
                        f"{name}: not attempted yet. Replace the `raise NotImplementedError` with your code and run "
                        f'the cell again. Stuck? checks.hint("{exercise.id}")'
                    ),
                )
            if probe.returned_none:
                return "wrong", None, f"{name}: case {i} of {n}: your function returned None: did you forget `return`?"
            results.append(("raised", _crash_signature(exc)))
            found = _matching_misconception(exercise, cases, results)
            where = _student_line(exc, student_fn)
            if isinstance(exc, NotImplementedError) and where:
                message = f"{name}: case {i} of {n} still reaches a `raise NotImplementedError`{where}; remove it."
            else:
                message = f"{name}: case {i} of {n} crashed with {_type_name(exc)}: {_safe_str(exc)}{where}"
            if found:
                message += f" This looks like a known mistake: {found.name}. Re-read «{found.section}»."
            return "crashed", found.id if found else None, message
        if calls:
            helper = calls[0]
            return (
                "wrong",
                None,
                (
                    f"{name}: your answer calls {helper}, which does the work this exercise asks you to write. "
                    "Write it without that helper."
                ),
            )
        if got is None or probe.returned_none:
            return "wrong", None, f"{name}: case {i} of {n}: your function returned None: did you forget `return`?"
        results.append(("ok", got))
        if first_wrong is None:
            problem = _first_problem(exercise, expected[i - 1], got, reveal=exercise.reveal)
            if problem:
                first_wrong = (i, problem)
    if first_wrong is None:
        return "passed", None, f"{name}: all {n} cases passed."
    i, problem = first_wrong
    found = _matching_misconception(exercise, cases, results)
    if found:
        return (
            "wrong",
            found.id,
            (
                f"{name}: case {i} of {n} is wrong, and every case matches a known mistake: {found.name}. "
                f"Re-read «{found.section}». ({problem})"
            ),
        )
    return "wrong", None, f"{name}: case {i} of {n} is wrong. {problem}"


def check(exercise_id, student_fn, *, strict: bool = False, time_limit: float | None = None) -> None:
    """Check a student's answer to one exercise and print one line. Returns None.

    Parameters
    ----------
    exercise_id : str
        ``"NN.name"``, a key of ``course_utils.exercises.EXERCISES``.
    student_fn : callable
        The student's function, called like the lesson's stub.
    strict : bool
        If True (solutions notebooks and tests), anything but a pass raises ``AssertionError``
        (and nothing else).
    time_limit : float, optional
        Seconds per call before the answer is stopped (default :data:`TIME_LIMIT_S`). Where
        signals are unavailable (Windows, a thread other than the main one) there is no limit.

    The line says one of: *not attempted yet* (the untouched stub), *passed*, *wrong* (the first
    differing case and entry; a known misconception by name with the section to re-read; a
    ``None`` result; a call to the helper under test), *crashed* (the exception and the line of
    the student's code) or *timed out*. With ``COURSE_CHECK_LOG`` set, one JSON line is appended.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> def dot_scores(q, k):
    ...     return q @ k.T
    >>> check("00.dot_scores", dot_scores)
    ✅ dot_scores: all 2 cases passed.
    """
    detail, status = _run_check(exercise_id, student_fn, time_limit, log=True)
    if strict and status != "passed":
        raise AssertionError(detail)
    return None


def demonstrate(exercise_id, answer, *, time_limit: float | None = None) -> None:
    """Show the message a check gives for ``answer``, without recording it. Returns None.

    Lesson 00 uses it to show deliberately wrong answers; it is :func:`check` without the
    ``COURSE_CHECK_LOG`` line (a demonstration is not the student's attempt) and without ``strict``.

    Introduced in notebooks/00_start_here.ipynb.
    """
    _run_check(exercise_id, answer, time_limit, log=False)


def _run_check(exercise_id, student_fn, time_limit, *, log: bool):
    exercise = _registry.get(exercise_id)
    if not callable(student_fn):
        raise TypeError(
            f"student_fn must be the function you wrote (a callable) but is {_type_name(student_fn)}; "
            f"pass the function itself: checks.check({exercise_id!r}, {exercise.function})"
        )
    limit = TIME_LIMIT_S if time_limit is None else float(time_limit)
    status, misconception, detail = _verdict(exercise, student_fn, limit)
    detail = _truncate(detail, 600)
    print(f"{_ICONS[status]} {detail}")
    if log:
        _log(exercise, status, misconception, detail)
    return detail, status


# ---------------------------------------------------------------------------------------------
# Hints and predictions.
# ---------------------------------------------------------------------------------------------

_HINTS_SHOWN: dict = {}


def hint(exercise_id, level: int | None = None) -> None:
    """Print the next hint for an exercise (or hint ``level``, counting from 1), as plain text.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> hint("00.dot_scores", level=1)
    Hint 1 of 2 for dot_scores: Entry [i, j] compares query i with key j: one row per query, one column per key.
    """
    exercise = _registry.get(exercise_id)
    total = len(exercise.hints)
    if level is None:
        level = min(_HINTS_SHOWN.get(exercise_id, 0) + 1, total)
    elif isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"level must be an int from 1 to {total} but is {_type_name(level)}")
    elif not 1 <= level <= total:
        raise ValueError(f"level must be from 1 to {total} but is {level}")
    _HINTS_SHOWN[exercise_id] = max(_HINTS_SHOWN.get(exercise_id, 0), level)
    more = " (that was the last one; the solutions notebook has the answer)" if level == total else ""
    print(f"Hint {level} of {total} for {exercise.title}: {exercise.hints[level - 1]}{more}")


def _as_shape(value):
    if _is_tensor(value) or isinstance(value, np.ndarray):
        return tuple(int(s) for s in value.shape)
    if isinstance(value, (tuple, list)) and all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in value
    ):
        return tuple(int(s) for s in value)
    return None


def predict(prediction_id, value) -> None:
    """Compare a written prediction with the right answer and say how far off it was. Returns None.

    ``value`` is what the student wrote before running the cell that reveals the answer; the
    untouched ``...`` asks them to write it first. Nothing is logged.

    Introduced in notebooks/00_start_here.ipynb.
    """
    p = _registry.get_prediction(prediction_id)
    if value is Ellipsis:
        print(f"✍️ Write your prediction first (replace the `...`), then run this cell: {p.question}")
        return None
    answer = p.value()
    if p.kind == "shape":
        shape = _as_shape(value)
        if shape is None:
            print(f"❓ A shape is a tuple of ints, like (2, 3); you wrote {_describe(value)}.")
        elif shape == tuple(answer):
            print(f"✅ Right: {shape}.")
        elif len(shape) != len(answer):
            print(f"❌ Not quite: the answer has {len(answer)} axes and yours has {len(shape)}. Run the next cell.")
        else:
            wrong = sum(a != b for a, b in zip(shape, answer, strict=True))
            print(f"❌ Not quite: {wrong} of {len(answer)} axes are off. Run the next cell and see why.")
    elif p.kind == "number":
        if not _is_number(value):
            print(f"❓ This prediction is a number; you wrote {_describe(value)}.")
        elif math.isclose(float(value), float(answer), rel_tol=p.rtol, abs_tol=1e-12):
            print(f"✅ Right: {_fmt(answer) if isinstance(answer, float) else f'{answer:,}'}.")
        else:
            off = float(value) - float(answer)
            share = f" ({abs(off) / abs(float(answer)):.0%} too {'high' if off > 0 else 'low'})" if answer else ""
            print(
                f"❌ Off by {_fmt(abs(off)) if not float(off).is_integer() else f'{int(abs(off)):,}'}{share}. Run the next cell."
            )
    else:
        if isinstance(value, str):
            value = value.strip().lower()  # "NaN " is "nan"
        matches = [c for c in p.choices if type(c) is type(value) and c == value]
        if not matches:
            print(f"❓ Choose one of {', '.join(_safe_repr(c) for c in p.choices)}; you wrote {_describe(value)}.")
        elif matches[0] == answer:
            print(f"✅ Right: {_safe_repr(answer)}.")
        else:
            print("❌ Not this one. Run the next cell and see what happens.")
    return None


# ---------------------------------------------------------------------------------------------
# The older interface, and assertions used by the lessons' own cells.
# ---------------------------------------------------------------------------------------------


def check_exercise(student_fn, reference_fn, cases, *, name: str, strict: bool = False, atol=1e-6, rtol=1e-5) -> None:
    """Deprecated: compare ``student_fn`` with ``reference_fn`` on ``cases``; use :func:`check`.

    Kept for notebooks written before the exercise registry. Prints one line, returns None.

    Introduced in notebooks/00_start_here.ipynb.
    """
    from course_utils.exercises._model import Exercise

    if not cases:
        raise ValueError("cases must hold at least one tuple of arguments")
    frozen = [c if isinstance(c, tuple) else (c,) for c in cases]
    exercise = Exercise(
        id=f"xx.{name}", title=name, section="", function=name, make_cases=lambda: frozen,
        reference=reference_fn, atol=atol, rtol=rtol,
    )  # fmt: skip
    _EXPECTED_CACHE.pop(exercise.id, None)
    status, _, detail = _verdict(exercise, student_fn, TIME_LIMIT_S)
    _EXPECTED_CACHE.pop(exercise.id, None)
    print(f"{_ICONS[status]} {detail}")
    if strict and status != "passed":
        raise AssertionError(detail)
    return None


def assert_shape(x, expected, name: str = "x"):
    """Assert that ``x`` has shape ``expected`` (``None`` matches any size); return ``x``.

    >>> assert_shape(np.zeros((2, 3)), (2, None), name="weights").shape
    (2, 3)

    Introduced in notebooks/00_start_here.ipynb.
    """
    shape = tuple(x.shape)
    expected = tuple(expected)
    ok = len(shape) == len(expected) and all(e is None or e == s for s, e in zip(shape, expected, strict=False))
    if not ok:
        pretty = "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"
        raise AssertionError(f"{name} has shape {shape} but expected {pretty}")
    return x


def assert_close(actual, expected, *, name: str = "actual", atol: float = 1e-6, rtol: float = 1e-5) -> None:
    """Assert that two arrays/tensors/numbers match, with a message naming the first mismatch.

    Introduced in notebooks/00_start_here.ipynb.
    """
    problem = compare(expected, actual, atol=atol, rtol=rtol, path=name)
    if problem:
        raise AssertionError(problem)
