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

import copy
import json
import math
import os

import numpy as np

from course_utils import exercises as _registry
from course_utils import hub_client as _hub_client  # the check log's hub sink (CONTRACT.md); a no-op off a hub
from course_utils import misconceptions as _misconceptions
from course_utils._answer_runner import (
    _guard,
    _is_untouched_stub,
    _preserved_random_state,
    _Probe,
    _student_line,
    _time_limit,
    _TimedOut,
)
from course_utils._compare import (
    _describe,
    _fmt,
    _is_number,
    _is_tensor,
    _safe_repr,
    _safe_str,
    _truncate,
    _type_name,
    compare,
)

__all__ = [
    "check",
    "demonstrate",
    "hint",
    "predict",
    "assert_shape",
    "assert_close",
    "compare",
    "TIME_LIMIT_S",
]

TIME_LIMIT_S = 5.0
"""Seconds one call of a student's function may run before it is stopped."""


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
    record = {
        "exercise": exercise.id,
        "lesson": exercise.lesson,
        "status": status,
        "misconception": misconception,
        "detail": detail,
    }
    _hub_client.send(record)
    target = os.environ.get("COURSE_CHECK_LOG")
    if not target:
        return
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
# Assertions used by the lessons' own cells.
# ---------------------------------------------------------------------------------------------


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
