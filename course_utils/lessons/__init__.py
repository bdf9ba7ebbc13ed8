"""The course's content, one folder per lesson: ``lesson_NN/exercises.py`` and ``lesson_NN/experiments.py``.

The map::

    course_utils/lessons/
    ├── claims.py              all_claims(), lesson_modules(), the experiments' import rule
    ├── lesson_00/exercises.py lesson 00's exercises and predictions (read by course_utils.checking.registry)
    ├── lesson_01/exercises.py, experiments.py
    └── ...  lesson_08/

- ``exercises.py``: each exercise is one block (its cases, reference, correct variants, hand-written buggy
  versions, hints, then ``Exercise(...)``); the lesson's ``Prediction(...)``\\ s follow; ``EXERCISES`` and
  ``PREDICTIONS`` list them in the order the lesson asks them. The engine that checks them is
  :mod:`course_utils.checking`.
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
