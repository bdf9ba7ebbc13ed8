"""Lessons 05 and 06: no case hands in two whole-number sizes that coincide, or a 2 (issue 26 §2).

A case with heads = bytes per value = 4, or layers = 2 (the key-plus-value factor), lets a count that forgets one
size and doubles another fit by accident, and a mistake be named from a coincidence. ``06.io_bytes`` keeps its
cases: their labels are the sizes the lesson's text works through (d = 2, one byte per value), and so does
``06.online_update``'s first case (the lesson's example, blocks of 2).
"""

from __future__ import annotations

import inspect

import pytest

from course_utils.checking import naming, preparing, registry, relation_basics

KEPT = {"06.io_bytes"}
LESSON_EXAMPLES = {("06.online_update", 0)}


def _names_from(exercise, n):
    """A function whose parameters are the case's argument names (the driver's after the answer, if it has one)."""
    names = naming.case_arg_names(exercise, n)

    def sizes(*args):
        return None

    sizes.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    )
    return sizes


def _exercises():
    return [ex for lesson in ("05", "06") for ex in registry.for_lesson(lesson) if ex.id not in KEPT]


@pytest.mark.parametrize("exercise", _exercises(), ids=lambda ex: ex.id)
def test_no_case_of_lessons_05_and_06_has_sizes_that_coincide(exercise):
    for i, args in enumerate(preparing.prepare(exercise).cases):
        if (exercise.id, i) in LESSON_EXAMPLES:
            continue
        assert relation_basics.coinciding_sizes(args, _names_from(exercise, len(args))) == [], (
            f"{exercise.id} case {i + 1}"
        )
