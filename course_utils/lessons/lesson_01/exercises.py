"""Lesson 01 · Attention in NumPy: the exercises and predictions of ``notebooks/01_attention_numpy.ipynb``.

The student writes the lesson's main path, in this order: one query by hand (the warm-up), the scores, a stable
softmax, attention, self-attention with projections, a test for order, a heatmap reader; then two transfer
exercises (the scale for any variance, a shared matrix that looks ahead). Each exercise is one block: cases,
reference, correct variants, hand-written buggy versions, ``Exercise``. References that compute a softmax or a
scaled attention go through ``numpy_attention.softmax`` and ``numpy_attention.scaled_dot_product_attention``, so
the catalogue's patches derive the softmax's axis and maximum shift and the scale (no scaling, ``d_head``);
mistakes no patch expresses are declared as buggy versions here. Needs only NumPy.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import numpy_attention
from course_utils.checking import cases
from course_utils.checking.model import AnswerRefused, Case, Exercise, KnownWrong, Prediction
from course_utils.lessons.lesson_01.core import (
    ATTEND,
    ATTENTION_SCORES,
    BY_HAND_NEW_QUERY,
    IS_PERMUTATION_EQUIVARIANT,
    SELF_ATTENTION,
    SOFTMAX_ALONG,
    stable_softmax,
)

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "STRONGEST_KEY",
    "SCORE_SCALE",
    "SHARED_NEXT_TOKEN_MATRIX",
    "next_token_choices",
]


# ---- R6 · 01.strongest_key(weights, query_labels, key_labels) -> list of key labels -------------------------
def _random_weights(rng, q_len, k_len):
    return stable_softmax(2 * rng.standard_normal((q_len, k_len)), axis=-1)  # rows sum to 1


def strongest_key_cases():
    rng = np.random.default_rng(9)
    tokens = ["The", "cat", "sat", "on", "the", "mat"]
    return [
        Case((_random_weights(rng, 3, 5), ["q0", "q1", "q2"], ["k0", "k1", "k2", "k3", "k4"])),
        Case((_random_weights(rng, 4, 6), ["a", "cat", "sat", "down"], tokens), "'The' and 'the' are two keys"),
        Case((_random_weights(rng, 1, 4), ["q"], ["w", "x", "y", "z"]), "one query"),
        Case(
            (np.array([[0.2, 0.8], [0.7, 0.3], [0.1, 0.9], [0.6, 0.4]]), ["q0", "q1", "q2", "q3"], ["k0", "k1"]),
            "more queries than keys",
        ),
        Case(
            (cases.tied_rows(_random_weights(rng, 3, 4)), ["q0", "q1", "q2"], ["k0", "k1", "k2", "k3"]),
            "ties: each row's largest weight appears twice",
        ),
    ]


def strongest_key(weights, query_labels, key_labels):
    return [key_labels[j] for j in np.argmax(weights, axis=-1)]


def strongest_key_loop(weights, query_labels, key_labels):
    labels = []
    for row in weights:
        labels.append(key_labels[int(row.argmax())])
    return labels


def strongest_key_fancy_index(weights, query_labels, key_labels):
    return list(np.array(key_labels, dtype=object)[weights.argmax(axis=1)])


def strongest_key_by_column(weights, query_labels, key_labels):
    return [key_labels[j] for j in np.argmax(weights, axis=0)]  # one entry per key, read down the columns


STRONGEST_KEY = Exercise(
    id="01.strongest_key",
    fresh=lambda q_len, k_len: [
        (
            numpy_attention.softmax(3 * np.random.default_rng(1).normal(size=(q_len, k_len)), axis=-1),
            [f"q{i}" for i in range(q_len)],
            [f"k{j}" for j in range(k_len)],
        )
    ],
    section="01 · Look at the weights",
    make_cases=strongest_key_cases,
    reference=strongest_key,
    variants=(strongest_key_loop, strongest_key_fancy_index),
    buggy={"heatmap_read_by_column": strongest_key_by_column},
    hints=(
        "In weights, which axis has one entry per query?",
        "For each row, find the column with the largest weight, and turn that column index into its key label.",
        "np.argmax(weights, axis=-1) gives one column index per query.",
    ),
)


# ---- T1 · 01.score_scale(d_head, variance) -> float ---------------------------------------------------------
def score_scale(d_head, variance):
    return float(np.sqrt(d_head) * variance)  # std of q·k: sqrt(d_head * variance**2)


def score_scale_from_variance(d_head, variance):
    return math.sqrt(d_head * variance**2)


def score_scale_by_terms(d_head, variance):
    per_product = variance * variance  # Var(q_i k_i) for independent zero-mean q_i, k_i
    return (d_head * per_product) ** 0.5


def score_scale_ignores_variance(d_head, variance):
    return math.sqrt(d_head)


def score_scale_uses_std(d_head, variance):
    return math.sqrt(d_head * variance)


def score_scale_by_d_head(d_head, variance):
    return d_head * variance


SCORE_SCALE = Exercise(
    id="01.score_scale",
    fresh=lambda d_head, variance: [(d_head, variance / 3), (d_head * variance, 1.0)],  # not perfect squares
    section="01 · Exercise 1 · The right scale for any variance",
    make_cases=lambda: [(64, 1.0), (16, 4.0), (100, 0.25), (1, 9.0)],
    reference=score_scale,
    variants=(score_scale_from_variance, score_scale_by_terms),
    buggy={
        "scale_ignores_variance": score_scale_ignores_variance,
        "scale_uses_std": score_scale_uses_std,
        "scaled_by_d_head": score_scale_by_d_head,
    },
    hints=(
        "q · k is a sum of d_head products q_i k_i. What is the variance of one product, for independent zero-mean "
        "q_i and k_i of variance `variance`?",
        "Variances of independent terms add, and for independent zero-mean factors Var(q_i k_i) = Var(q_i) · "
        "Var(k_i). The divisor that gives variance 1 is the standard deviation of the sum.",
        "Var(q · k) = d_head · Var(q_i k_i): work out Var(q_i k_i) for the given variance, then take a square root.",
    ),
)


# ---- T2 · 01.shared_next_token_matrix() -> W (4, d), used as W_q = W_k on one-hot tokens ---------------------
def next_token_choices(make_matrix):
    """Which key tokens 0, 1 and 2 attend to most when ``make_matrix()`` is both W_q and W_k on X = np.eye(4).

    Raises :class:`AnswerRefused` when the matrix is not (4, d) with d >= 2.
    """
    W = make_matrix()
    if W is None:
        raise TypeError("shared_next_token_matrix returned None")  # the engine asks about a missing `return`
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != 4 or W.shape[1] < 2:
        raise AnswerRefused(f"W must have shape (4, d) with d >= 2 (one row per token), and yours has shape {W.shape}.")
    Q = K = np.eye(4) @ W  # (4, d): token i's query and key are both row i of W
    weights = stable_softmax(Q @ K.T / math.sqrt(W.shape[1]), axis=-1)  # (4, 4)
    return tuple(int(j) for j in weights[:3].argmax(axis=-1))


def _spiral(radius, degrees, extra_columns=0):
    i = np.arange(4)[:, None]
    angle = np.deg2rad(degrees) * i  # each row turns a little further ...
    rows = radius**i * np.hstack([np.cos(angle), np.sin(angle)])  # ... and is longer than the one before
    return np.hstack([rows, np.zeros((4, extra_columns))])


def shared_next_token_matrix():
    return _spiral(3.0, 60.0)


def shared_next_token_matrix_wider():
    return _spiral(4.0, 50.0)


def shared_next_token_matrix_3d():
    return _spiral(3.0, 60.0, extra_columns=1)


def shared_matrix_shift():
    return 6.0 * np.eye(4, k=1)  # the lesson's W_q, now for the keys too: rows of equal length


def shared_matrix_too_long():
    return _spiral(5.0, 40.0)


SHARED_NEXT_TOKEN_MATRIX = Exercise(
    id="01.shared_next_token_matrix",
    section="01 · Exercise 2 · When can one shared matrix look ahead?",
    make_cases=lambda: [Case((), "X = np.eye(4), W_q = W_k = your W; tokens 0, 1, 2 must read keys 1, 2, 3")],
    reference=shared_next_token_matrix,
    variants=(shared_next_token_matrix_wider, shared_next_token_matrix_3d),
    buggy={"shared_matrix_equal_norms": shared_matrix_shift, "shared_matrix_overshoot": shared_matrix_too_long},
    hints=(
        "With W_q = W_k = W, token i's score for key j is z_i · z_j, z_i being row i of W. What is its score for "
        "itself, and when can z_i · z_(i+1) be larger?",
        "z_i · z_j <= |z_i| |z_j|: token i can prefer i + 1 only if z_(i+1) is longer than z_i and points close to "
        "it. Make the lengths grow and the directions turn a little from token to token.",
        "Try rows z_i = r**i * (cos(i·θ), sin(i·θ)) and compute row 0's four scores for r = 3, θ = 60°.",
    ),
    driver=next_token_choices,
)

EXERCISES = [
    BY_HAND_NEW_QUERY,
    ATTENTION_SCORES,
    SOFTMAX_ALONG,
    ATTEND,
    SELF_ATTENTION,
    IS_PERMUTATION_EQUIVARIANT,
    STRONGEST_KEY,
    SCORE_SCALE,
    SHARED_NEXT_TOKEN_MATRIX,
]

_SOFTMAX_SECTION = "01 · From scores to weights: a stable softmax"
_SCALE_SECTION = "01 · Why divide by √d_head"

PREDICTIONS = [
    Prediction(
        id="01.naive_softmax_overflow",
        question='What does naive_softmax return for [1000, 1001, 1002]: "weights", "nan", "inf" or "zeros"?',
        kind="choice",
        answer="nan",
        choices=("weights", "nan", "inf", "zeros"),
        section=_SOFTMAX_SECTION,
        known_wrong=(
            KnownWrong("weights", "overflow_unseen", "what the formula means; exp(1000) overflows to inf first"),
            KnownWrong(
                "inf",
                "inf_over_inf",
                "what np.exp(1000) gives; think about what the division that follows does with it",
            ),
            KnownWrong(
                "zeros", "underflow", "what very negative scores give (their exp underflows to 0), not large ones"
            ),
        ),
    ),
    Prediction(
        id="01.naive_softmax_mixed",
        question='And for [1e4, 0, -1e4]: "1, 0, 0", "nan, 0, 0", "nan, nan, nan" or "0, 0, 0"?',
        kind="choice",
        answer="nan, 0, 0",
        choices=("1, 0, 0", "nan, 0, 0", "nan, nan, nan", "0, 0, 0"),
        section=_SOFTMAX_SECTION,
        known_wrong=(
            KnownWrong(
                "1, 0, 0",
                "overflow_unseen",
                "the weights on paper; think about what exp(1e4) is in floating point before anything is divided",
            ),
            KnownWrong(
                "nan, nan, nan", "all_nan", "what happens when every exp overflows; look at each entry's exp on its own"
            ),
        ),
    ),
    Prediction(
        id="01.attend_output_shape",
        question="Q (2, 4, 8), K (2, 6, 8), V (2, 6, 5): what is the shape of attend's output?",
        kind="shape",
        answer=(2, 4, 5),
        section="01 · Build it: attention in one function",
        known_wrong=(
            KnownWrong(
                (2, 6, 5),
                "output_per_key",
                "V's shape: think about whose rows the output has, the queries' or the keys'",
            ),
            KnownWrong((2, 4, 8), "output_as_wide_as_q", "Q's shape: think about what each output row is a blend of"),
            KnownWrong(
                (2, 4, 6), "output_is_weights", "the weights' shape: think about the step that comes after the weights"
            ),
        ),
    ),
    Prediction(
        id="01.attend_weights_shape",
        question="Q (2, 4, 8), K (2, 6, 8), V (2, 6, 5): what is the shape of attend's weights?",
        kind="shape",
        answer=(2, 4, 6),
        section="01 · Build it: attention in one function",
        known_wrong=(
            KnownWrong((2, 6, 4), "scores_transposed", "the transpose: rows are queries, columns keys"),
            KnownWrong(
                (2, 4, 8), "weights_per_feature", "one weight per feature: think about what one weight connects"
            ),
            KnownWrong((2, 4, 5), "weights_as_output", "the output's shape: the weights come before V"),
        ),
    ),
    Prediction(
        id="01.lookup_key2_weight",
        question="The query q = [5, 5] is key 2, [1, 1], scaled by 5: what weight does key 2 get?",
        kind="number",
        answer=1 / 3,
        rtol=0.12,
        section="01 · Attention is a soft dictionary look-up",
        rethink="the three dot products q · k, and what a softmax does with them",
        known_wrong=(
            KnownWrong(
                1,
                "lookup_is_exact",
                "what a dict would give; a dot product rewards length too, and keys 0 and 1 are longer than key 2",
            ),
            KnownWrong(0.5, "half_to_the_match", "a guess that key 2 wins half; compute the three dot products first"),
        ),
    ),
    Prediction(
        id="01.shared_weights_symmetric",
        question='With W_q = W_k the scores are symmetric: are the attention weights symmetric too, "yes" or "no"?',
        kind="choice",
        answer="no",
        choices=("yes", "no"),
        section="01 · Why learned, separate W_q, W_k, W_v",
        known_wrong=(
            KnownWrong(
                "yes", "weights_inherit_symmetry", "true of the scores; look at what each row of weights is divided by"
            ),
        ),
    ),
    Prediction(
        id="01.kv_shuffle_changes",
        question='Queries kept in order, keys and values shuffled together: which outputs change, "none", "all" or '
        '"the shuffled positions"?',
        kind="choice",
        answer="none",
        choices=("none", "all", "the shuffled positions"),
        section="01 · Does attention see the order?",
        known_wrong=(
            KnownWrong(
                "all", "order_matters", "what a model that reads positions would do; look at what travels with each key"
            ),
            KnownWrong(
                "the shuffled positions",
                "order_matters_moved",
                "what would happen if the outputs followed the keys; look at what travels with each key",
            ),
        ),
    ),
    Prediction(
        id="01.score_variance_d64",
        question="q and k have 64 independent entries of mean 0 and variance 1: what is Var(q · k)?",
        kind="number",
        answer=64,
        rtol=0.1,
        section=_SCALE_SECTION,
        rethink="how the variances of independent products add up",
        known_wrong=(
            KnownWrong(
                8,
                "std_not_variance",
                "the standard deviation, not the variance: think about how the variances of independent terms add up",
            ),
            KnownWrong(
                1,
                "variance_after_scaling",
                "the variance after dividing by √d_head; think about the variance before that division",
            ),
            KnownWrong(
                4096,
                "variance_squared",
                "a square too many: think again about how the variances of independent terms add up",
            ),
        ),
    ),
    Prediction(
        id="01.score_variance_scaled",
        question="And Var(q · k / sqrt(d_head)) for d_head = 64?",
        kind="number",
        answer=1,
        rtol=0.1,
        section=_SCALE_SECTION,
        rethink="what dividing a quantity by c does to its variance",
        known_wrong=(
            KnownWrong(
                8,
                "divided_variance_by_std",
                "what dividing the variance itself by √d_head would give; think about what dividing a quantity by c does to its variance",
            ),
            KnownWrong(
                0.125,
                "divided_twice",
                "a division too many: think about what dividing a quantity by c does to its variance",
            ),
            KnownWrong(64, "variance_unscaled", "the variance before dividing"),
        ),
    ),
    Prediction(
        id="01.tutorial_head3_column",
        question="In the row 'cat [0.8, 0.1, 0.0, 0.0, 0.1, 0.0]' over 'The cat sat on the mat', which column "
        "index (0 to 5) holds the 0.8?",
        kind="index",
        answer=0,
        section="01 · Look at the weights",
        rethink="which word each column of the row stands for",
        known_wrong=(
            KnownWrong(
                1,
                "heatmap_read_by_column",
                "the query's own column, 'cat', the tutorial's reading; read the row's numbers again, left to right",
            ),
        ),
    ),
    Prediction(
        id="01.temperature_for_unscaled",
        question="At d_head = 64, switching the division by sqrt(d_head) off gives the same weights as keeping it "
        "with which temperature T?",
        kind="number",
        answer=0.125,
        rtol=0.01,
        section="01 · Explore: d_head and temperature",
        rethink="what the scale does to the scores, and what a temperature does to them",
        known_wrong=(
            KnownWrong(
                8,
                "temperature_inverted",
                "the factor the scores grow by; think about whether a temperature multiplies or divides the scores",
            ),
            KnownWrong(
                64,
                "temperature_is_d_head",
                "d_head itself: think about which power of d_head the scale uses, and what a temperature does with it",
            ),
            KnownWrong(
                0.015625, "temperature_is_one_over_d_head", "1/d_head: think about which power of d_head the scale uses"
            ),
        ),
    ),
]
