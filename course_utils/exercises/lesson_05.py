"""Lesson 05 · Inside the heads: the exercises of ``notebooks/05_inside_the_heads.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
``05.count_attention_parameters`` asks lesson 03's question again, with lesson 03's reference and mistakes.
"""

from __future__ import annotations

import numpy as np

from course_utils import heads
from course_utils.exercises import lesson_03
from course_utils.exercises._model import Case, Exercise

__all__ = ["EXERCISES", "PREDICTIONS", "ROW_ENTROPY", "PREVIOUS_TOKEN_SCORE", "COUNT_ATTENTION_PARAMETERS"]


# ---- 05.row_entropy(row) -> float ------------------------------------------------------------------------------
def entropy_cases():
    return [
        Case((np.array([0.0, 1.0, 0.0]),), "one-hot: 0"),
        Case((np.full(8, 1 / 8),), "uniform: ln 8"),
        Case((np.array([0.5, 0.5, 0.0, 0.0]),), "two keys and two zeros: ln 2"),
        Case((np.array([0.7, 0.2, 0.1]),)),
    ]


def row_entropy(row):
    return float(heads.attention_entropy(row))


def entropy_nonzero(row):
    nonzero = row[row > 0]  # 0 · ln 0 = 0: leave the zeros out
    return float(-(nonzero * np.log(nonzero)).sum())


def entropy_where(row):
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(row > 0, row * np.log(row), 0.0)
    return float(-terms.sum())


def entropy_loop(row):
    total = 0.0
    for w in row:
        if w > 0:
            total -= w * np.log(w)
    return float(total)


def entropy_zero_terms(row):
    row = np.asarray(row, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(-(row * np.log(row)).sum())


ROW_ENTROPY = Exercise(
    id="05.row_entropy",
    section="05 · Entropy: how spread out is a head?",
    make_cases=entropy_cases,
    reference=row_entropy,
    variants=(entropy_nonzero, entropy_where, entropy_loop),
    buggy={"entropy_zero_terms": entropy_zero_terms},
    hints=(
        "Entropy is -sum of w · ln w over the keys. What should a one-hot row give, and what does NumPy give for "
        "0 * np.log(0)?",
        "The term w · ln w tends to 0 as w goes to 0, so zero weights contribute nothing: leave them out of the sum "
        "(in nats: np.log).",
        "row[row > 0] keeps the non-zero weights; sum their w · ln w, change the sign, and return a float.",
    ),
)


# ---- 05.previous_token_score(weights) -> (heads,) ----------------------------------------------------------
def previous_cases():
    rng = np.random.default_rng(5)
    shift = np.eye(6, k=-1)  # query i -> key i - 1
    shift[0, 0] = 1.0  # query 0 has no previous token: let it look at itself
    random_weights = rng.dirichlet(np.ones(7), size=(3, 7))  # (heads, seq_len, seq_len), rows sum to 1
    return [
        Case((np.stack([shift, np.eye(6), np.full((6, 6), 1 / 6)]),), "a previous-token, a self and a uniform head"),
        Case((random_weights,), "random weights"),
    ]


def previous_token_score(weights):
    return heads.head_role_scores(weights)["previous"]


def previous_fancy_index(weights):
    i = np.arange(1, weights.shape[-1])  # queries 1 .. seq_len - 1
    return weights[:, i, i - 1].mean(axis=-1)  # (heads, seq_len - 1) -> (heads,)


def previous_diagonal(weights):
    return np.diagonal(weights, offset=-1, axis1=1, axis2=2).mean(axis=-1)  # the diagonal below the main one


def previous_loop(weights):
    scores = []
    for head in weights:
        scores.append(np.mean([head[i, i - 1] for i in range(1, len(head))]))
    return np.array(scores)


def previous_token_next_diagonal(weights):
    weights = np.asarray(weights)
    i = np.arange(weights.shape[-1] - 1)
    return weights[:, i, i + 1].mean(axis=-1)


PREVIOUS_TOKEN_SCORE = Exercise(
    id="05.previous_token_score",
    section="05 · Which head does what? Role scores",
    make_cases=previous_cases,
    reference=previous_token_score,
    variants=(previous_fancy_index, previous_diagonal, previous_loop),
    buggy={"next_token_diagonal": previous_token_next_diagonal},
    hints=(
        "For query i, which key is the previous token? Which queries have one?",
        "A head's score is the mean, over queries i = 1 .. seq_len - 1, of the weight query i puts on key i - 1: "
        "one number per head.",
        "Those entries form one diagonal of each (seq_len, seq_len) matrix, just below the main one: index it for "
        "all heads at once, or take it with np.diagonal, then average over the last axis.",
    ),
)


# ---- 05.count_attention_parameters(d_model, num_heads, bias) -> int: lesson 03's question again ---------------
COUNT_ATTENTION_PARAMETERS = Exercise(
    id="05.count_attention_parameters",
    section="03 · Parameters: does the number of heads change them?",
    make_cases=lambda: [
        Case((512, 8, True)),
        Case((512, 1, True), "one head"),
        Case((64, 4, False), "no biases"),
        Case((768, 12, True)),
    ],
    reference=lesson_03.count_attention_parameters,
    variants=(lesson_03.count_parameters_formula, lesson_03.count_parameters_per_projection),
    buggy={
        "params_three_matrices": lesson_03.params_three_matrices,
        "params_ignore_bias_flag": lesson_03.params_ignore_bias_flag,
    },
    forbidden=lesson_03.COUNT_FORBIDDEN,
    hints=(
        "A formula in d_model and bias only: does num_heads change any of the layer's matrices?",
        "query_proj, key_proj, value_proj and out_proj each hold a (d_model, d_model) weight and, with bias=True, a "
        "(d_model,) bias.",
        "A widely copied tutorial counts 3·d_model²: which projection and which vectors does it leave out?",
    ),
)

EXERCISES = [ROW_ENTROPY, PREVIOUS_TOKEN_SCORE, COUNT_ATTENTION_PARAMETERS]
PREDICTIONS: list = []
