"""Exercises of lesson 08 in which the student writes a part of the model the lesson trains.

Introduced in ``notebooks/08_*.ipynb``. Kept apart from :mod:`course_utils.exercises.lessons_05_08` so
that each lesson's model exercises live next to their cases, references and misconceptions.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "PREDICTIONS"]

EXERCISES: list = []
PREDICTIONS: list = []
