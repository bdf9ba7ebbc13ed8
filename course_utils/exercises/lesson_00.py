"""Lesson 00 · Start here: the exercise and the prediction of ``notebooks/00_start_here.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The catalogue's patches add every other known mistake that fits (see ``course_utils.exercises``).
"""

from __future__ import annotations

import numpy as np

from course_utils.exercises._model import Case, Exercise, KnownWrong, Prediction

__all__ = ["EXERCISES", "PREDICTIONS", "DOT_SCORES"]


# ---- 00.dot_scores(q, k) -> (q_len, k_len) ---------------------------------------------------------------------
def dot_scores_cases():
    rng = np.random.default_rng(0)
    return [
        Case((rng.standard_normal((3, 2)), rng.standard_normal((4, 2)))),  # q (q_len=3, d=2), k (k_len=4, d=2)
        Case((rng.standard_normal((2, 3)), rng.standard_normal((5, 3)))),
        Case((rng.standard_normal((1, 4)), rng.standard_normal((6, 4))), "a single query"),
    ]


def dot_scores(q, k):
    return q @ k.T  # (q_len, d) @ (d, k_len) -> (q_len, k_len)


def dot_scores_einsum(q, k):
    return np.einsum("id,jd->ij", q, k)  # sum over the feature axis d


def dot_scores_loop(q, k):
    scores = np.zeros((len(q), len(k)))
    for i in range(len(q)):
        for j in range(len(k)):
            scores[i, j] = np.dot(q[i], k[j])
    return scores


def dot_scores_broadcast(q, k):
    return (q[:, None, :] * k[None, :, :]).sum(axis=-1)  # (q_len, 1, d) * (1, k_len, d) -> (q_len, k_len, d)


def dot_scores_transposed(q, k):
    return k @ q.T  # (k_len, q_len): keys as rows


DOT_SCORES = Exercise(
    id="00.dot_scores",
    section="00 · Exercise 1 · dot-product scores",
    make_cases=dot_scores_cases,
    reference=dot_scores,
    variants=(dot_scores_einsum, dot_scores_loop, dot_scores_broadcast),
    buggy={"scores_transposed": dot_scores_transposed},
    hints=(
        "Entry [i, j] compares query i with key j. What shape must the result have, and which operation compares "
        "two vectors?",
        "Every row of q against every row of k, by a dot product, is one matrix product, once one of the two is "
        "turned so that the feature sizes d meet in the middle.",
        "(q_len, d) @ (d, k_len) -> (q_len, k_len): which of q and k must be transposed to have shape (d, ...)?",
    ),
)

EXERCISES = [DOT_SCORES]

PREDICTIONS = [
    Prediction(
        id="00.scores_shape",
        question="For q of shape (5, 8) and k of shape (7, 8), what is the shape of dot_scores(q, k)?",
        kind="shape",
        answer=(5, 7),
        section="00 · Exercise 2 · shapes first",
        known_wrong=(
            KnownWrong((7, 5), "scores_transposed", "the transpose: one row per query (5), one column per key (7)"),
            KnownWrong((5, 8), "kept_feature_axis", "q's own shape: the dot product sums the feature axis away"),
            KnownWrong((8, 8), "feature_by_feature", "features by features: entry [i, j] compares query i with key j"),
        ),
    ),
]
