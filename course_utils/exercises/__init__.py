"""The registry of every exercise and prediction in the lessons.

Introduced in ``notebooks/00_start_here.ipynb``. A lesson's check cell is one line,
``checks.check("01.softmax_along", softmax_along)``; everything else lives here: the cases, the
correct reference, the misconceptions the exercise can show (each a buggy reference from
:mod:`course_utils.misconceptions`), the helpers an answer must not call, and the hints.

Importing this package is cheap and does not import torch: cases and references import it when
they are first used.

Examples
--------
>>> from course_utils import exercises
>>> exercises.EXERCISES["01.softmax_along"].lesson
'01'
>>> [e.id for e in exercises.for_lesson("02")][:2]
['02.my_causal_mask', '02.my_padding_mask']
"""

from __future__ import annotations

from course_utils.exercises._model import Exercise, Prediction

__all__ = ["Exercise", "Prediction", "EXERCISES", "PREDICTIONS", "for_lesson", "get", "get_prediction"]


def _build():
    from course_utils.exercises import lesson_07_models, lesson_08_models, lessons_00_04, lessons_05_08

    modules = (lessons_00_04, lessons_05_08, lesson_07_models, lesson_08_models)
    found = [e for module in modules for e in module.EXERCISES]
    found.sort(key=lambda e: e.lesson)  # stable: keeps the position inside each lesson
    predictions = [p for module in modules for p in module.PREDICTIONS]
    return {e.id: e for e in found}, {p.id: p for p in predictions}


EXERCISES: dict[str, Exercise]
PREDICTIONS: dict[str, Prediction]
EXERCISES, PREDICTIONS = _build()


def for_lesson(lesson: str) -> list[Exercise]:
    """The exercises of one lesson (``"01"``), in the order the lesson asks them.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not isinstance(lesson, str):
        raise TypeError(f"lesson must be a two-digit string like '01' but is {type(lesson).__name__}")
    return [e for e in EXERCISES.values() if e.lesson == lesson]


def _closest(name: str, known) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def get(exercise_id) -> Exercise:
    """The exercise with this id; a bad id gets a ``TypeError`` or ``ValueError`` naming it.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise_id must be a string like '01.softmax_along' but is {type(exercise_id).__name__}")
    if exercise_id not in EXERCISES:
        raise ValueError(f"exercise_id {exercise_id!r} is not a known exercise{_closest(exercise_id, EXERCISES)}")
    return EXERCISES[exercise_id]


def get_prediction(prediction_id) -> Prediction:
    """The prediction prompt with this id; a bad id gets a ``TypeError`` or ``ValueError`` naming it.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not isinstance(prediction_id, str):
        raise TypeError(f"prediction_id must be a string like '00.scores_shape' but is {type(prediction_id).__name__}")
    if prediction_id not in PREDICTIONS:
        raise ValueError(
            f"prediction_id {prediction_id!r} is not a known prediction{_closest(prediction_id, PREDICTIONS)}"
        )
    return PREDICTIONS[prediction_id]
