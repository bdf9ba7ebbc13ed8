"""Deprecated: the bug zoo's old home. Use :mod:`course_utils.bugs` (``from course_utils import bugs``).

Today's lesson 04 (cell 63) and tests/test_grade.py import ``softmax_along_wrong_axis`` and
``forward_softmax_wrong_axis`` from here; every name of the bug zoo also resolves here, so
``from course_utils import misconceptions as bugs`` (as the phase-2 plans write it) works too. This module
goes away once lesson 04 and the grader's test stop importing it. The catalogue of mistakes is
:mod:`course_utils.checking.misconceptions`.
"""

from __future__ import annotations

from course_utils import bugs

__all__ = ["forward_softmax_wrong_axis", "softmax_along_wrong_axis"]  # noqa: F822 (resolved by __getattr__)


def __getattr__(name: str):
    if name in bugs.ZOO:
        return getattr(bugs, name)
    raise AttributeError(f"module 'course_utils.misconceptions' has no attribute {name!r}; see course_utils.bugs")
