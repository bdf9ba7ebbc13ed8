"""Deprecated: the two buggy answers that today's lesson 04 (cell 63) and tests/test_grade.py still import.

The catalogue of mistakes is :mod:`course_utils.exercises.misconceptions`; an exercise's buggy answers are
in its lesson module (:mod:`course_utils.exercises.lesson_04`, ...) or derived from a catalogue patch. This
module goes away once the phase-2 lesson 04 and the grader's test stop importing it.
"""

from __future__ import annotations

from course_utils.exercises import lesson_01, lesson_04, patches

__all__ = ["forward_softmax_wrong_axis", "softmax_along_wrong_axis"]

forward_softmax_wrong_axis = lesson_04.forward_softmax_wrong_axis
"""``forward(mha, query, key, value, mask=None)`` with the softmax over the queries instead of the keys."""

softmax_along_wrong_axis = patches.patched(lesson_01.softmax_along, patches.SOFTMAX_OTHER_AXIS)
"""``softmax_along(x, axis)`` normalising another axis than the one asked for."""
