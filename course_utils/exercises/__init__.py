"""The exercise system: every exercise and prediction of the lessons, and the engine that checks them.

Lessons never import this package: they call :mod:`course_utils.checks`. The map:

- ``lesson_00.py`` … ``lesson_08.py``: one module per lesson. Each exercise is one block: its cases, its
  reference, its correct variants, its hand-written buggy versions, its hints, then ``Exercise(...)``; the
  lesson's ``Prediction(...)``\\ s follow. A module defines ``EXERCISES`` and ``PREDICTIONS`` (lists, in the
  order the lesson asks them). Loaded lazily by the id's prefix: ``get("02.padding_mask")`` imports
  ``lesson_02`` only. Adding lesson 09 means adding ``lesson_09.py``.
- ``_model.py``: :class:`Exercise`, :class:`Prediction`, :class:`Misconception`, :class:`Case`,
  :class:`KnownWrong`, :data:`STATUSES` (data only).
- ``misconceptions.py``: the catalogue of known mistakes, shared by every lesson (data only).
- ``patches.py``: how the course's primitives behave under a misconception.
- ``engine.py`` (the verdict), ``runner.py`` (time limit, state, what an answer called), ``compare.py``,
  ``predictions.py`` (a prediction's verdict), ``tries.py`` (the first try counts, until the reveal),
  ``hints.py``, ``log.py`` (the check log and its sinks).
- ``relations.py`` (a mistake named by how the answer's output relates to the right one), ``mutations.py``
  (the reference with one step varied), ``traces.py`` (a function's intermediate arrays, where a NaN first
  appears): a name only when one relation explains every failing case.
- What an answer is and does besides its values, each called from ``engine.judge``: ``contract.py`` (the return
  contract, read off the reference's result), ``touches.py`` (inputs and parameters changed in place),
  ``integrity.py`` (the functions the check compares with, the profiler, plain copies of results, the kernel's
  interrupt), ``crash_site.py`` (which of the student's functions crashed, and its cell), ``extra_checks.py``
  (after the fixed cases: fresh sizes, the other mode), ``gradients.py`` (one backward step against the course's),
  ``constraints.py`` (the exercise's own stated constraint, measured).
- ``cases.py``: tools for lesson authors (distinct sizes, large scores, padding, counting drivers).
- ``audit.py``: ``python -m course_utils.exercises.audit [--markdown]``, the per-exercise checker audit.

Import rules (``tests/test_exercise_imports.py`` enforces them): a lesson module imports ``_model``,
``cases``, course modules and earlier lesson modules' public names, never the engine; the engine never
imports a lesson module (it is handed the exercise); no module imports another's private names; there are
no import cycles. Importing this package, the catalogue or the engine does not import torch.

Examples
--------
>>> from course_utils import exercises
>>> exercises.get("01.softmax_along").lesson
'01'
>>> [e.id for e in exercises.for_lesson("02")][:2]
['02.padding_mask', '02.cached_causal_mask']
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
from collections.abc import Iterator, Mapping

from course_utils.exercises._model import (
    CHECK_STATUSES,
    PREDICT_STATUSES,
    STATUSES,
    AnswerRefused,
    Case,
    Exercise,
    KnownWrong,
    Misconception,
    Prediction,
    Status,
)

__all__ = [
    "Exercise",
    "Prediction",
    "Misconception",
    "Case",
    "KnownWrong",
    "Status",
    "STATUSES",
    "CHECK_STATUSES",
    "PREDICT_STATUSES",
    "AnswerRefused",
    "EXERCISES",
    "PREDICTIONS",
    "lessons",
    "for_lesson",
    "predictions_for_lesson",
    "get",
    "get_prediction",
]

_MODULE = re.compile(r"^lesson_(\d\d)$")
_ID = re.compile(r"^(\d\d)\.")
_loaded: dict = {}  # lesson -> (exercises by id, predictions by id)


def lessons() -> list[str]:
    """The two-digit lessons that have an exercise module, in order."""
    found = [m.group(1) for info in pkgutil.iter_modules(__path__) if (m := _MODULE.match(info.name))]
    return sorted(found)


def _load(lesson: str):
    if lesson not in _loaded:
        module = importlib.import_module(f"{__name__}.lesson_{lesson}")
        exercises = {}
        for exercise in module.EXERCISES:
            if exercise.lesson != lesson:
                raise ValueError(f"lesson_{lesson}.py defines {exercise.id}, which belongs to lesson {exercise.lesson}")
            if exercise.id in exercises:
                raise ValueError(f"lesson_{lesson}.py defines {exercise.id} twice")
            exercises[exercise.id] = exercise
        predictions = {}
        for prediction in module.PREDICTIONS:
            if prediction.lesson != lesson:
                raise ValueError(f"lesson_{lesson}.py defines {prediction.id}, which belongs to another lesson")
            predictions[prediction.id] = prediction
        _loaded[lesson] = (exercises, predictions)
    return _loaded[lesson]


class _Registry(Mapping):
    """A read-only id -> item mapping over every lesson module, loaded as needed."""

    def __init__(self, which: int, kind: str):
        self._which = which
        self._kind = kind

    def _all(self) -> dict:
        merged: dict = {}
        for lesson in lessons():
            merged.update(_load(lesson)[self._which])
        return merged

    def __getitem__(self, key):
        match = _ID.match(key) if isinstance(key, str) else None
        if match is None or match.group(1) not in lessons():
            raise KeyError(key)
        return _load(match.group(1))[self._which][key]

    def __iter__(self) -> Iterator:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"<{len(self)} {self._kind} of lessons {', '.join(lessons())}>"


EXERCISES: Mapping = _Registry(0, "exercises")
"""Every exercise by id, in lesson order (lesson modules load on first use)."""
PREDICTIONS: Mapping = _Registry(1, "predictions")
"""Every prediction prompt by id, in lesson order."""


def _check_id(value, what: str, example: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string like {example!r} but is {type(value).__name__}")
    return value


def _unknown(value: str, what: str, registry: Mapping) -> ValueError:
    match = _ID.match(value)
    pool = list(_load(match.group(1))[registry._which]) if match and match.group(1) in lessons() else list(registry)
    close = difflib.get_close_matches(value, pool, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ValueError(f"{what} {value!r} is not a known {registry._kind[:-1]}{hint}")


def get(exercise_id) -> Exercise:
    """The exercise with this id; a bad id gets a ``TypeError`` or ``ValueError`` naming it.

    Introduced in notebooks/00_start_here.ipynb.
    """
    _check_id(exercise_id, "exercise_id", "01.softmax_along")
    try:
        return EXERCISES[exercise_id]
    except KeyError:
        raise _unknown(exercise_id, "exercise_id", EXERCISES) from None


def get_prediction(prediction_id) -> Prediction:
    """The prediction prompt with this id; a bad id gets a ``TypeError`` or ``ValueError`` naming it.

    Introduced in notebooks/00_start_here.ipynb.
    """
    _check_id(prediction_id, "prediction_id", "00.scores_shape")
    try:
        return PREDICTIONS[prediction_id]
    except KeyError:
        raise _unknown(prediction_id, "prediction_id", PREDICTIONS) from None


def for_lesson(lesson) -> list[Exercise]:
    """The exercises of one lesson (``"01"``), in the order the lesson asks them.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not isinstance(lesson, str):
        raise TypeError(f"lesson must be a two-digit string like '01' but is {type(lesson).__name__}")
    return list(_load(lesson)[0].values()) if lesson in lessons() else []


def predictions_for_lesson(lesson) -> list[Prediction]:
    """The prediction prompts of one lesson, in the order the lesson asks them."""
    if not isinstance(lesson, str):
        raise TypeError(f"lesson must be a two-digit string like '01' but is {type(lesson).__name__}")
    return list(_load(lesson)[1].values()) if lesson in lessons() else []
