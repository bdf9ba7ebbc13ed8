"""What lessons call: checks that give the lesson its function back, predictions, hints, and assertions.

Introduced in ``notebooks/00_start_here.ipynb``. After the code the student writes::

    softmax_along = checks.check("01.softmax_along", softmax_along)

The check prints one line and returns the function the lesson goes on with: the student's when it passed,
the course's (:attr:`Exercise.reference`) when not, so the rest of the lesson runs either way. The line
says *not attempted yet* (the untouched ``...`` stub), *passed*, *wrong* (the first differing case,
described by its inputs; a known misconception by name with the section to re-read, also when it shows on
some cases only; a forgotten ``return``; a course helper that already computes the answer), *crashed*
(the exception and the student's own line) or *timed out*.

``checks.predict("NN.name", prediction)`` judges a written prediction (a known wrong idea is named; the first
answer counts, and another before the reveal gets no new verdict); ``checks.reveal("NN.name")`` in the cell
that shows the answer recalls what the student predicted;
``checks.hint("NN.name")`` gives the next hint (the first one reacts to the last check); no hint shows the whole
solution, and ``checks.solution("NN.name")`` is the student's explicit choice to see the course's. Every check,
prediction, hint and solution shown is logged (:mod:`course_utils.checking.log`). ``checks.report("07.encoder", ...)``
says which of several regions a model now runs, the student's or the course's;
``checks.buggy("NN.name", "misconception_id")`` is the buggy answer the check names a mistake by, for a
lesson cell that demonstrates the bug (the named ones live in :mod:`course_utils.bugs`). The cases, references, misconceptions
and hints live in :mod:`course_utils.checking.registry`; the check cell shows no solution.
"""

from __future__ import annotations

from course_utils.checking import engine, handed_back, naming, patches, recorded, registry, time_limits, tries
from course_utils.checking import hints as hint_book
from course_utils.checking import log as check_log
from course_utils.checking import misconceptions as catalogue
from course_utils.checking.compare import compare, safe_repr, type_name
from course_utils.checking.predictions import judge_prediction

__all__ = [
    "check",
    "demonstrate",
    "hint",
    "solution",
    "predict",
    "reveal",
    "report",
    "buggy",
    "assert_shape",
    "assert_close",
    "compare",
    "TIME_LIMIT_S",
]

TIME_LIMIT_S = 5.0
"""Seconds one case of a student's answer may run before it is stopped (an exercise may allow more)."""


def _icon(status: str) -> str:
    return registry.STATUSES[status].icon


def _run(exercise_id, answer, time_limit, *, demonstration: bool):
    exercise = registry.get(exercise_id)
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
        verdict = recorded.guarded(lambda: engine.judge(exercise, answer, time_limit_s=limit), engine.Verdict)
    return exercise, verdict


def check(exercise_id, fn, *, strict: bool = False, time_limit: float | None = None):
    """Check a student's answer to one exercise, print one line, and return the function to go on with.

    Parameters
    ----------
    exercise_id : str
        ``"NN.name"``, an exercise of ``course_utils.lessons.lesson_NN.exercises``.
    fn : callable
        The student's function (or class), called like the lesson's stub.
    strict : bool
        If True (instructor editions and tests), anything but a pass raises ``AssertionError``.
    time_limit : float, optional
        Seconds per case before the answer is stopped (default :data:`TIME_LIMIT_S`, or the exercise's
        own when it is longer). An answer that catches the stop is stopped again and again; one long
        call into C is stopped when it returns, and the message says so. One that nothing in the kernel
        can stop (a call into C that runs for minutes) ends the kernel 20 s past the limit (at least the
        limit again): the check log gets the verdict, and the next check of that exercise says why.

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
    notice = time_limits.stopped_notice(exercise_id) if isinstance(exercise_id, str) else None
    if notice:  # the check's guard ended the last kernel on this exercise: say why, once
        print(notice, flush=True)
    exercise, verdict = _run(exercise_id, fn, time_limit, demonstration=False)
    line = f"{_icon(verdict.status)} {verdict.detail}"
    if verdict.status != "passed":
        if not line.rstrip().endswith((".", "!", "?")):
            line = line.rstrip() + "."  # a detail without a full stop still ends its sentence
        line += f" The lesson goes on with the course's version of {exercise.function}."
    print(line)
    returned = fn if verdict.status == "passed" else exercise.reference
    handed_back.remember_check(exercise.id, verdict.status, returned)
    hint_book.remember_verdict(exercise.id, verdict.status, verdict.misconception, verdict.detail)
    fields = {"relation": verdict.relation} if getattr(verdict, "relation", None) else {}
    check_log.write(
        check_log.build(
            "check", exercise.id, verdict.status, misconception=verdict.misconception, detail=verdict.detail, **fields
        )
    )
    if strict and verdict.status != "passed":
        raise AssertionError(verdict.detail)
    return recorded.handed(exercise, returned)  # a lesson being recorded for the published edition (issue 29)


def _listed(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def report(*exercise_ids, subject: str = "This model") -> dict:
    """Print one line saying which of these regions now run the student's code and which the course's.

    Read from the last check of each exercise in this kernel: a region runs the student's code when its
    last check passed (``checks.check`` handed the student's function back), the course's otherwise. The
    line has no numbers that vary, so a lesson's stored output is the same on every machine::

        This model runs your encoder and your additive attention, and the course's decoder step (yours has
        not passed yet: checks.check("07.decoder_step", ...)).

    Parameters
    ----------
    *exercise_ids : str
        The regions the model is made of, ``"NN.name"``, in the order to name them.
    subject : str
        What runs them, the start of the sentence (default ``"This model"``).

    Returns
    -------
    dict
        Exercise id -> True when the student's code runs, False when the course's does.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if not exercise_ids:
        raise TypeError("report needs at least one exercise id, like checks.report('07.encoder', '07.decoder_step')")
    if not isinstance(subject, str) or not subject.strip():
        raise TypeError(f"subject must be a non-empty string but is {safe_repr(subject)}")
    found = {}
    for exercise_id in exercise_ids:
        exercise = registry.get(exercise_id)
        found[exercise.id] = (exercise, handed_back.last_status(exercise.id))
    yours = [f"your {ex.noun}" for ex, status in found.values() if status == "passed"]
    course = []
    for ex, status in found.values():
        if status == "passed":
            continue
        if status is None:
            why = f'its check has not run in this kernel: run the cell with checks.check("{ex.id}", ...)'
        elif status == "not_attempted":
            why = f'yours is not written yet: checks.check("{ex.id}", ...)'
        else:
            why = f'yours has not passed yet: checks.check("{ex.id}", ...)'
        course.append(f"the course's {ex.noun} ({why})")
    if not course:
        line = f"{subject} runs {_listed(yours)}: all of it is your code."
    elif not yours:
        line = f"{subject} runs {_listed(course)}."
    else:
        line = f"{subject} runs {_listed(yours)}, and {_listed(course)}."
    print(line)
    return {eid: status == "passed" for eid, (_, status) in found.items()}


def buggy(exercise_id, misconception_id):
    """The buggy answer the check of ``exercise_id`` names ``misconception_id`` by, to demonstrate the bug.

    It is called like the exercise's function (the student's signature) and behaves as someone holding the
    misconception would write it: the exercise's hand-written ``buggy`` version, or the course's answer
    run under the catalogue's patch. The lesson shows the bug without typing its code (which would give the
    right code away). A misconception that does not fit the exercise is a ``ValueError`` naming those that do.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> import numpy as np
    >>> transposed = buggy("00.dot_scores", "scores_transposed")
    >>> transposed(np.ones((2, 3)), np.ones((4, 3))).shape
    (4, 2)
    """
    exercise = registry.get(exercise_id)
    if not isinstance(misconception_id, str):
        raise TypeError(
            f"misconception_id must be a string like 'softmax_wrong_axis' but is {type_name(misconception_id)}"
        )
    fits = naming.fitting_misconceptions(exercise)
    for fit in fits:
        if misconception_id == fit.id or misconception_id in fit.same_as:
            if misconception_id == fit.id:
                return fit.answer
            # a patch that behaves exactly like this fit: its own patched reference
            return patches.patched(exercise.reference, catalogue.get(misconception_id).patch)
    names = ", ".join(sorted({f.id for f in fits} | {m for f in fits for m in f.same_as})) or "none"
    raise ValueError(f"misconception_id {misconception_id!r} does not fit {exercise.id}; the ones that fit: {names}")


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
    exercise = registry.get(exercise_id)
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


def solution(exercise_id) -> None:
    """Show the course's solution to one exercise, at the student's explicit request, and log it. Returns None.

    Hints stop at showing a step; this is the step after them, and the student's choice: it prints one line saying
    the request is logged, then the instructor edition's code for the exercise (its solution region filled in; the
    checker's reference where the notebooks are not there), and writes a ``"solution"`` record to the check log,
    which the class report and the marks read.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> solution("00.dot_scores")  # doctest: +ELLIPSIS
    📖 The course's solution for dot_scores, ... This is logged: your check log records that you asked for it.
    ...
    """
    if not isinstance(exercise_id, str):
        raise TypeError(f'exercise_id must be a string like "02.padding_mask" but is {type_name(exercise_id)}')
    exercise = registry.get(exercise_id)
    code, source = hint_book.solution_text(exercise)
    print(
        f"📖 The course's solution for {exercise.title}, from {source}. This is logged: your check log records that "
        "you asked for it."
    )
    print(code)
    check_log.write(check_log.build("solution", exercise.id, "shown", detail=f"solution shown, from {source}"))


def predict(prediction_id, value) -> None:
    """Judge a written prediction and print one line; a known wrong idea is named. Returns None.

    ``value`` is what the student wrote before running the cell that reveals the answer; the untouched
    ``...`` asks them to write it first. Any value is answered in words (a huge int, NaN, a string). The
    first answer counts: it is logged with ``first_try: true`` and ``correct``; another answer before the
    reveal (:func:`reveal`, or another cell run in between) gets no new verdict.

    Introduced in notebooks/00_start_here.ipynb.
    """
    prediction = registry.get_prediction(prediction_id)
    verdict = judge_prediction(prediction, value)
    now = tries.attempt(prediction.id, value, verdict)
    message = tries.held_message(now.first) if now.held else verdict.message
    print(message)
    fields = {}
    if verdict.status != "not_answered":
        fields = {"first_try": now.first_try, "correct": verdict.status == "right"}
        if now.held:
            fields["held"] = True  # judged for the log only: the student was told to wait for the reveal
    record = check_log.build(
        "predict",
        prediction.id,
        verdict.status,
        prediction=safe_repr(value, 200),
        known_wrong=verdict.known_wrong,
        detail=message,
        **fields,
    )
    check_log.write(record)
    return None


def reveal(prediction_id) -> None:
    """In the cell that reveals a prediction's answer: remind the student what they predicted first. Returns None.

    After it, a new prediction is judged again (and logged with ``first_try: false``).

    Introduced in notebooks/00_start_here.ipynb.
    """
    prediction = registry.get_prediction(prediction_id)
    print(tries.reveal(prediction.id))
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
