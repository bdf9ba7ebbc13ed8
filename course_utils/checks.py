"""What lessons call: checks that give the lesson its function back, predictions, hints, and assertions.

Introduced in ``notebooks/00_start_here.ipynb``. After the code the student writes::

    softmax_along = checks.check("01.softmax_along", softmax_along)

The check prints one line and returns the function the lesson goes on with: the student's when it passed,
the course's (:attr:`Exercise.reference`) when not, so the rest of the lesson runs either way. The line
says *not attempted yet* (the untouched ``...`` stub), *passed*, *wrong* (the first differing case,
described by its inputs; a known misconception by name with the section to re-read, also when it shows on
some cases only; a forgotten ``return``; a course helper that already computes the answer), *crashed*
(the exception and the student's own line) or *timed out*.

``checks.predict("NN.name", prediction)`` judges a written prediction (a known wrong idea is named);
``checks.hint("NN.name")`` gives the next hint (the first one reacts to the last check). Every check,
prediction and hint is logged (:mod:`course_utils.exercises.log`). The cases, references, misconceptions
and hints live in :mod:`course_utils.exercises`; the check cell shows no solution.
"""

from __future__ import annotations

from course_utils import exercises
from course_utils.exercises import engine
from course_utils.exercises import hints as hint_book
from course_utils.exercises import log as check_log
from course_utils.exercises.compare import compare, safe_repr, type_name
from course_utils.exercises.predictions import judge_prediction

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
"""Seconds one case of a student's answer may run before it is stopped (an exercise may allow more)."""


def _icon(status: str) -> str:
    return exercises.STATUSES[status].icon


def _run(exercise_id, answer, time_limit, *, demonstration: bool):
    exercise = exercises.get(exercise_id)
    if not callable(answer):
        raise TypeError(
            f"the answer must be the function you wrote (a callable) but is {type_name(answer)}; "
            f"pass the function itself: checks.check({exercise_id!r}, {exercise.function})"
        )
    if answer is exercise.reference and not demonstration:
        verdict = engine.Verdict(
            "not_attempted",
            f"{exercise.title}: this is the course's version, which an earlier check handed back. Run the cell "
            "with your own function first, then this one.",
        )
    else:
        if time_limit is None:
            limit = max(TIME_LIMIT_S, exercise.time_limit or 0.0)
        elif isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0:
            raise ValueError(f"time_limit must be a positive number of seconds but is {time_limit!r}")
        else:
            limit = float(time_limit)
        verdict = engine.judge(exercise, answer, time_limit_s=limit)
    return exercise, verdict


def check(exercise_id, fn, *, strict: bool = False, time_limit: float | None = None):
    """Check a student's answer to one exercise, print one line, and return the function to go on with.

    Parameters
    ----------
    exercise_id : str
        ``"NN.name"``, an exercise of ``course_utils.exercises.lesson_NN``.
    fn : callable
        The student's function (or class), called like the lesson's stub.
    strict : bool
        If True (instructor editions and tests), anything but a pass raises ``AssertionError``.
    time_limit : float, optional
        Seconds per case before the answer is stopped (default :data:`TIME_LIMIT_S`, or the exercise's
        own when it is longer). An answer that catches the stop is stopped again and again; one long
        call into C is stopped when it returns, and the message says so.

    Returns
    -------
    ``fn`` when it passed, else the course's version (the message says so), so the lesson goes on.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> def dot_scores(q, k):
    ...     return q @ k.T
    >>> dot_scores = check("00.dot_scores", dot_scores)
    ✅ dot_scores: all 3 cases passed.
    """
    exercise, verdict = _run(exercise_id, fn, time_limit, demonstration=False)
    line = f"{_icon(verdict.status)} {verdict.detail}"
    if verdict.status != "passed":
        line += f" The lesson goes on with the course's version of {exercise.function}."
    print(line)
    hint_book.remember_verdict(exercise.id, verdict.status, verdict.misconception, verdict.detail)
    check_log.write(
        check_log.build(
            "check", exercise.id, verdict.status, misconception=verdict.misconception, detail=verdict.detail
        )
    )
    if strict and verdict.status != "passed":
        raise AssertionError(verdict.detail)
    return fn if verdict.status == "passed" else exercise.reference


def demonstrate(exercise_id, answer, *, time_limit: float | None = None) -> None:
    """Show the message a check gives for ``answer``, without recording it. Returns None.

    Lesson 00 uses it to show deliberately wrong answers: it is :func:`check` without the log line, without
    the hint reaction and without ``strict``.

    Introduced in notebooks/00_start_here.ipynb.
    """
    _, verdict = _run(exercise_id, answer, time_limit, demonstration=True)
    print(f"{_icon(verdict.status)} {verdict.detail}")


def hint(exercise_id, level: int | None = None) -> None:
    """Print the next hint for an exercise, or hint ``level`` (counting from 1), as plain text.

    Without ``level`` the student gets their next level, and the first hint after a check opens with a
    reaction to it (a named misconception gets its own nudge). With ``level`` (a lesson cell showing a
    hint) that level is shown and the student's hints are not used up.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> hint("00.dot_scores", level=1)  # doctest: +ELLIPSIS
    💡 Hint 1 of 3 for dot_scores: ...
    """
    exercise = exercises.get(exercise_id)
    total = len(exercise.hints)
    if level is None:
        level, text = hint_book.next_hint(exercise)
        explicit = False
    elif isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"level must be an int from 1 to {total} but is {type_name(level)}")
    elif not 1 <= level <= total:
        raise ValueError(f"level must be from 1 to {total} but is {level}")
    else:
        text = hint_book.hint_at(exercise, level)
        explicit = True
    print(text)
    fields = {"level": level, "detail": text.splitlines()[-1]}
    if explicit:
        fields["explicit"] = True
    check_log.write(check_log.build("hint", exercise.id, "shown", **fields))


def predict(prediction_id, value) -> None:
    """Judge a written prediction and print one line; a known wrong idea is named. Returns None.

    ``value`` is what the student wrote before running the cell that reveals the answer; the untouched
    ``...`` asks them to write it first. Any value is answered in words (a huge int, NaN, a string).

    Introduced in notebooks/00_start_here.ipynb.
    """
    prediction = exercises.get_prediction(prediction_id)
    verdict = judge_prediction(prediction, value)
    print(verdict.message)
    record = check_log.build(
        "predict",
        prediction.id,
        verdict.status,
        prediction=safe_repr(value, 200),
        known_wrong=verdict.known_wrong,
        detail=verdict.message,
    )
    check_log.write(record)
    return None


# ---------------------------------------------------------------------------------------------
# Assertions used by the lessons' own cells.
# ---------------------------------------------------------------------------------------------


def assert_shape(x, expected, name: str = "x"):
    """Assert that ``x`` has shape ``expected`` (``None`` matches any size); return ``x``.

    >>> import numpy as np
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
