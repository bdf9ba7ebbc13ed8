"""The registry: every exercise and prediction of the lessons by id, loaded lazily from the lesson folders.

``course_utils/lessons/lesson_NN/exercises.py`` defines ``EXERCISES`` and ``PREDICTIONS`` (lists, in the order the
lesson asks them). They are loaded by the id's prefix: ``get("02.padding_mask")`` imports lesson 02's module only.
Adding lesson 09 means adding ``course_utils/lessons/lesson_09/exercises.py``. The package map and the import rules
are in :mod:`course_utils.checking`.

Examples
--------
>>> from course_utils.checking import registry
>>> registry.get("01.softmax_along").lesson
'01'
>>> [e.id for e in registry.for_lesson("02")][:2]
['02.padding_mask', '02.cached_causal_mask']
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from course_utils.checking.model import (
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
_LESSONS = Path(__file__).resolve().parents[1] / "lessons"  # course_utils/lessons/
_ID = re.compile(r"^(\d\d)\.")
_loaded: dict = {}  # lesson -> (exercises by id, predictions by id)


def lessons() -> list[str]:
    """The two-digit lessons that have an exercise module (``lessons/lesson_NN/exercises.py``), in order."""
    found = [
        m.group(1)
        for info in pkgutil.iter_modules([str(_LESSONS)])
        if (m := _MODULE.match(info.name)) and (_LESSONS / info.name / "exercises.py").is_file()
    ]
    return sorted(found)


def _load(lesson: str):
    if lesson not in _loaded:
        module = importlib.import_module(f"course_utils.lessons.lesson_{lesson}.exercises")
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
