"""The course's content, one folder per lesson: ``lesson_NN/exercises.py`` and ``lesson_NN/experiments.py``.

The map::

    course_utils/lessons/
    ├── claims.py              all_claims(), lesson_modules(), the experiments' import rule
    ├── lesson_00/exercises.py lesson 00's exercises and predictions (read by course_utils.checking.registry)
    ├── lesson_01/exercises.py, mistakes.py, experiments.py
    └── ...  lesson_08/

- ``exercises.py``: each exercise is one block (its cases, reference, correct variants, hand-written buggy
  versions, hints, then ``Exercise(...)``); the lesson's ``Prediction(...)``\\ s follow; ``EXERCISES`` and
  ``PREDICTIONS`` list them in the order the lesson asks them. The engine that checks them is
  :mod:`course_utils.checking`.
- a long lesson's earlier blocks sit in part modules beside ``exercises.py`` (``lesson_01/core.py``, ``lesson_02/core.py``, ``lesson_03/core.py``, ``lesson_04/module.py``, ``lesson_04/parity.py``, ``lesson_05/core.py``, ``lesson_06/tiling.py``, ``lesson_07/parts.py``, ``lesson_08/layers.py``), each block moved
  whole; ``exercises.py`` imports their ``Exercise`` objects into ``EXERCISES``. No module over 600 lines.
- ``mistakes.py``: the lesson's entries in the catalogue of known mistakes (``MISTAKES``, data; read by
  :mod:`course_utils.checking.misconceptions`, and any lesson's check may name them).
- ``experiments.py``: the lesson's experiments and ``CLAIMS`` (see :mod:`course_utils.lessons.claims`). A notebook
  imports it as ``from course_utils.lessons.lesson_07 import experiments as lesson_07``.

Importing this package imports nothing.
"""

__all__ = [
    "claims",
    "lesson_00",
    "lesson_01",
    "lesson_02",
    "lesson_03",
    "lesson_04",
    "lesson_05",
    "lesson_06",
    "lesson_07",
    "lesson_08",
]  # its modules and lesson folders (importing the package imports none of them)
