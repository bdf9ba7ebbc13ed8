"""Lesson 00 · Start here: the exercise and the prediction of ``notebooks/00_start_here.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The catalogue's patches add every other known mistake that fits (see ``course_utils.checking.registry``).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking.model import Case, Exercise, KnownWrong, Prediction

__all__ = ["EXERCISES", "PREDICTIONS", "DOT_SCORES", "dot_scores_transposed", "dot_scores_elementwise"]


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
    return (q[:, None, :] * k[None, :, :]).sum(axis=-1)  # (q_len, 1, d) * (1, k_len, d) -> (q_len, k_len)


def dot_scores_transposed(q, k):
    """``k @ q.T``: the keys as rows, (k_len, q_len) (the bug zoo's ``dot_scores_transposed``)."""
    return k @ q.T


def dot_scores_elementwise(q, k):
    """``(q * k).sum(-1)``: query i meets key i only; crashes unless q_len == k_len, then returns the diagonal."""
    return (q * k).sum(-1)


DOT_SCORES = Exercise(
    id="00.dot_scores",
    fresh=lambda q_len, k_len, d_head: [
        (np.random.default_rng(1).normal(size=(q_len, d_head)), np.random.default_rng(2).normal(size=(k_len, d_head)))
    ],
    section="00 · Try it: dot-product scores",
    make_cases=dot_scores_cases,
    reference=dot_scores,
    variants=(dot_scores_einsum, dot_scores_loop, dot_scores_broadcast),
    buggy={"scores_transposed": dot_scores_transposed, "elementwise_product": dot_scores_elementwise},
    hints=(
        "Entry [i, j] compares query i with key j. What shape does a table with one row per query and one column "
        "per key have?",
        "A matrix product A @ B takes the dot product of every row of A with every column of B. Which of q and k "
        "must provide the columns?",
        "The keys have to become columns: k.T has shape (d, k_len). What goes on its left?",
    ),
)

EXERCISES = [DOT_SCORES]

PREDICTIONS = [
    Prediction(
        id="00.scores_shape",
        question="For q of shape (5, 8) and k of shape (7, 8), what is the shape of dot_scores(q, k)?",
        kind="shape",
        answer=(5, 7),
        section="00 · Shapes first",
        known_wrong=(
            KnownWrong(
                (7, 5), "scores_transposed", "the transpose: think about which of queries and keys a row belongs to"
            ),
            KnownWrong(
                (5, 8), "kept_feature_axis", "q's own shape: think about what a dot product does to the feature axis"
            ),
            KnownWrong(
                (8, 8), "feature_by_feature", "features by features: think about what one entry of the table compares"
            ),
        ),
    ),
]
