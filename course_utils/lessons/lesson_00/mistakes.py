"""Lesson 00's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 00; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]


MISTAKES = (
    Misconception(
        "scores_transposed",
        "the scores are transposed: rows must be queries, columns keys",
        "00 · Try it: dot-product scores",
        "Which axis of your result holds the queries? Entry [i, j] should compare query i with key j.",
    ),
    Misconception(
        "elementwise_product",
        "an elementwise product, (q * k).sum(-1), compares query i with key i only: it crashes when q_len != k_len "
        "and returns only the diagonal when they are equal; every query must meet every key",
        "00 · Try it: dot-product scores",
        "How many numbers should one query produce: one, or one per key?",
    ),
)
