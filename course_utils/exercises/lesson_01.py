"""Lesson 01 · Attention in NumPy: the exercises and predictions of ``notebooks/01_attention_numpy.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The catalogue's patches add the mistakes they fit: the softmax's axis and maximum shift, the scale (through
``numpy_attention.softmax`` and ``numpy_attention.scaled_dot_product_attention``). Needs only NumPy.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import numpy_attention
from course_utils.exercises._model import Case, Exercise, KnownWrong, Prediction
from course_utils.exercises.cases import large_scores

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "SOFTMAX_ALONG",
    "BY_HAND_NEW_QUERY",
    "ATTENTION_WITH_TEMPERATURE",
    "SELF_ATTENTION",
    "SCORE_SCALE",
    "IS_PERMUTATION_EQUIVARIANT",
    "WORKED_Q",
    "WORKED_K",
    "WORKED_V",
]

# the worked example of the lesson: three tokens, d_head = 2
WORKED_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (q_len=3, d_head=2)
WORKED_K = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # (k_len=3, d_head=2)
WORKED_V = np.array([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]])  # (k_len=3, d_value=2)


def _stable_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=axis, keepdims=True)


# ---- 01.softmax_along(x, axis=-1) ----------------------------------------------------------------------------
def softmax_along_cases():
    rng = np.random.default_rng(1)
    return [
        Case((np.array([1.0, 2.0, 3.0]), -1)),
        Case((np.array([[1000.0, 1001.0, 999.0], [-1000.0, -999.0, -998.0]]), -1), "scores in the thousands"),
        Case((np.array([[1e4, 0.0], [0.0, 1e4], [5.0, 5.0]]), 0), "down the columns"),
        Case((100 * rng.standard_normal((2, 3, 4)), 1), "the middle axis, scores in the hundreds"),
    ]


def softmax_along(x, axis=-1):
    return numpy_attention.softmax(x, axis=axis)


def softmax_along_shifted(x, axis=-1):
    exps = np.exp(x - x.max(axis=axis, keepdims=True))  # every exp <= 1: no overflow
    return exps / exps.sum(axis=axis, keepdims=True)


def softmax_along_log_space(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    log_total = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))  # log-sum-exp
    return np.exp(x - log_total)


def softmax_along_moved_axis(x, axis=-1):
    last = np.moveaxis(np.asarray(x, dtype=float), axis, -1)  # the axis to normalise, moved to the end
    out = np.empty_like(last)
    for index in np.ndindex(last.shape[:-1]):
        row = last[index]
        exps = np.exp(row - row.max())
        out[index] = exps / exps.sum()
    return np.moveaxis(out, -1, axis)


SOFTMAX_ALONG = Exercise(
    id="01.softmax_along",
    section="01 · From scores to weights: a stable softmax",
    make_cases=softmax_along_cases,
    reference=softmax_along,
    variants=(softmax_along_shifted, softmax_along_log_space, softmax_along_moved_axis),
    hints=(
        "What does np.exp(1000.0) give? Softmax does not change when the same number is subtracted from every "
        "score of a slice: which number keeps every exponential at most 1?",
        "Subtract the maximum of each slice along `axis` (not the maximum of the whole array), exponentiate, and "
        "divide by the sum along the same axis.",
        "x.max(axis=axis, keepdims=True) keeps the reduced axis with size 1, so that it broadcasts back against x. "
        "The sum needs keepdims=True as well.",
    ),
)


# ---- 01.by_hand_new_query() -> (weights, output), found by hand ---------------------------------------------
def by_hand_new_query():
    out, weights = numpy_attention.scaled_dot_product_attention(np.array([[2.0, -1.0]]), WORKED_K, WORKED_V)
    return weights[0], out[0]


def by_hand_new_query_formula():
    q = np.array([2.0, -1.0])
    scores = WORKED_K @ q / math.sqrt(2)  # (k_len,): one score per key
    weights = np.exp(scores) / np.exp(scores).sum()
    return weights, weights @ WORKED_V  # (k_len,) @ (k_len, d_value) -> (d_value,)


def by_hand_new_query_rounded():
    # worked out on paper, to three decimals
    return np.array([0.882, 0.013, 0.106]), np.array([9.345, 0.655])


BY_HAND_NEW_QUERY = Exercise(
    id="01.by_hand_new_query",
    title="query [2, -1] by hand",
    section="01 · Check it by hand: 3 tokens, d_head = 2",
    make_cases=lambda: [Case((), "the query [2, -1] against the worked example's keys and values")],
    reference=by_hand_new_query,
    variants=(by_hand_new_query_formula, by_hand_new_query_rounded),
    hints=(
        "Scores first: what is the dot product of [2, -1] with each of the three keys, and what do you divide it by?",
        "Each weight is exp(score_j) divided by the sum of the three exp(score). The output is the weighted sum of "
        "the value rows, one number per column of V.",
        "The scores are [4, -2, 1] / sqrt(2). The first key should take most of the weight, so the output lands "
        "close to V[0] = [10, 0].",
    ),
    output_names=("weights", "output"),
    reveal=False,
    atol=5e-3,
    rtol=0.0,
)


# ---- 01.attention_with_temperature(Q, K, V, temperature) -> (output, weights) ------------------------------
def temperature_cases():
    rng = np.random.default_rng(2)
    return [
        Case((WORKED_Q, WORKED_K, WORKED_V, 1.0), "the worked example"),
        Case((WORKED_Q, WORKED_K, WORKED_V, 0.1), "the worked example, a low temperature"),
        Case(
            (rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 6, 8)), rng.standard_normal((2, 6, 3)), 5.0),
            "a batch, a high temperature",
        ),
        Case(
            (large_scores((3, 5), 7), rng.standard_normal((4, 5)), rng.standard_normal((4, 2)), 0.5),
            "queries in the thousands",
        ),
    ]


def attention_with_temperature(Q, K, V, temperature):
    # dividing Q by the temperature divides the scores by it
    return numpy_attention.scaled_dot_product_attention(Q / temperature, K, V)


def temperature_matmul(Q, K, V, temperature):
    d_head = Q.shape[-1]
    # (..., q_len, d_head) @ (..., d_head, k_len) -> (..., q_len, k_len)
    scores = Q @ np.swapaxes(K, -1, -2) / (math.sqrt(d_head) * temperature)
    weights = _stable_softmax(scores, axis=-1)
    return weights @ V, weights  # (..., q_len, k_len) @ (..., k_len, d_value) -> (..., q_len, d_value)


def temperature_einsum(Q, K, V, temperature):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1]) / temperature
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


def temperature_multiplies(Q, K, V, temperature):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]) * temperature  # a / b * T
    weights = _stable_softmax(scores)
    return weights @ V, weights


ATTENTION_WITH_TEMPERATURE = Exercise(
    id="01.attention_with_temperature",
    section="01 · Explore: d_head and temperature",
    make_cases=temperature_cases,
    reference=attention_with_temperature,
    variants=(temperature_matmul, temperature_einsum),
    buggy={"temperature_multiplies": temperature_multiplies},
    hints=(
        "Attention divides the scores by sqrt(d_head). Where does a temperature enter, and should a high "
        "temperature make the weights sharper or flatter?",
        "Divide the scores by sqrt(d_head) and by the temperature, then take the softmax over the keys (the last "
        "axis), then weight the values.",
        "With batch axes transpose only the last two axes of K: np.swapaxes(K, -1, -2), not K.T. Write the "
        "divisor with its parentheses: a / (b * T) is not a / b * T.",
    ),
    output_names=("output", "weights"),
)


# ---- 01.self_attention(X, W_q, W_k, W_v) -> (output, weights) ----------------------------------------------
def self_attention_cases():
    rng = np.random.default_rng(4)
    return [
        # (X, W_q, W_k, W_v): d_model 3, d_head 2, d_value 5
        Case((rng.standard_normal((4, 3)), *(rng.standard_normal((3, n)) for n in (2, 2, 5)))),
        # batch 2, seq_len 5, d_model 4, d_head 3, d_value 6
        Case((rng.standard_normal((2, 5, 4)), *(rng.standard_normal((4, n)) / 2 for n in (3, 3, 6))), "a batch"),
        # d_model 6, d_head 4, d_value 2
        Case((rng.standard_normal((3, 6)), *(rng.standard_normal((6, n)) / 2 for n in (4, 4, 2)))),
        Case(
            (40 * rng.standard_normal((3, 5)), *(5 * rng.standard_normal((5, n)) for n in (2, 2, 4))),
            "scores in the thousands",
        ),
    ]


def self_attention(X, W_q, W_k, W_v):
    # (..., seq_len, d_model) @ (d_model, d_head) -> (..., seq_len, d_head); W_v gives d_value
    return numpy_attention.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def self_attention_steps(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (..., seq_len, d_head), (..., seq_len, d_head), (..., seq_len, d_value)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(W_q.shape[-1])  # (..., seq_len, seq_len)
    weights = _stable_softmax(scores, axis=-1)
    return weights @ V, weights


def self_attention_einsum(X, W_q, W_k, W_v):
    Q = np.einsum("...sm,mh->...sh", X, W_q)
    K = np.einsum("...sm,mh->...sh", X, W_k)
    V = np.einsum("...sm,mv->...sv", X, W_v)
    scores = np.einsum("...qh,...kh->...qk", Q, K) / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


def _attend(Q, K, V, divide_by):
    weights = _stable_softmax(Q @ np.swapaxes(K, -1, -2) / divide_by)  # (..., seq_len, seq_len)
    return weights @ V, weights


def self_attention_projections_skipped(X, W_q, W_k, W_v):
    return _attend(X, X, X, math.sqrt(W_q.shape[-1]))


def self_attention_projections_transposed(X, W_q, W_k, W_v):
    # (..., seq_len, d_model) @ (d_head, d_model): crashes unless the weights are square
    return _attend(X @ W_q.T, X @ W_k.T, X @ W_v.T, math.sqrt(W_q.shape[-1]))


def self_attention_scaled_by_sqrt_d_model(X, W_q, W_k, W_v):
    return _attend(X @ W_q, X @ W_k, X @ W_v, math.sqrt(X.shape[-1]))


SELF_ATTENTION = Exercise(
    id="01.self_attention",
    section="01 · Why learned, separate W_q, W_k, W_v",
    make_cases=self_attention_cases,
    reference=self_attention,
    variants=(self_attention_steps, self_attention_einsum),
    buggy={
        "projections_skipped": self_attention_projections_skipped,
        "projections_transposed": self_attention_projections_transposed,
        "scaled_by_sqrt_d_model": self_attention_scaled_by_sqrt_d_model,
    },
    hints=(
        "Attention needs queries, keys and values. Where do they come from, when all you are given is X and three "
        "matrices?",
        "Project X three times (once with each matrix) to get Q, K and V; then attention on them exactly as in the "
        "lesson, with the scale of one query's size.",
        "X @ W_q is (..., seq_len, d_head), so d_head is W_q.shape[-1], not X.shape[-1]. With batch axes, "
        "transpose only the last two axes of K: np.swapaxes(K, -1, -2).",
    ),
    output_names=("output", "weights"),
)


# ---- 01.score_scale(d_head, variance) -> float ---------------------------------------------------------------
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
    section="01 · Why divide by √d_head",
    make_cases=lambda: [(64, 1.0), (16, 4.0), (100, 0.25), (1, 9.0)],
    reference=score_scale,
    variants=(score_scale_from_variance, score_scale_by_terms),
    buggy={
        "scale_ignores_variance": score_scale_ignores_variance,
        "scale_uses_std": score_scale_uses_std,
        "scaled_by_d_head": score_scale_by_d_head,
    },
    hints=(
        "q · k is a sum of d_head products q_i k_i. What is the variance of one product, when q_i and k_i each have "
        "the given variance?",
        "Variances of independent terms add, and for independent zero-mean factors Var(q_i k_i) = Var(q_i) · "
        "Var(k_i). The divisor that gives variance 1 is the standard deviation of q · k.",
        "Var(q · k) = d_head · Var(q_i k_i): work out Var(q_i k_i) for the given variance, then take a square root.",
    ),
)


# ---- 01.is_permutation_equivariant(fn, X, perm) -> bool ------------------------------------------------------
def attention_without_positions(X):
    """Self-attention of X (seq_len, d_model) with fixed projections: permutation equivariant."""
    d_model = X.shape[-1]
    W_q, W_k, W_v = np.random.default_rng(5).standard_normal((3, d_model, d_model)) / np.sqrt(d_model)
    return numpy_attention.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]


def running_sum(X):
    """Each row is the sum of the rows up to it: depends on the order."""
    return np.cumsum(X, axis=0)


def attention_with_positions(X):
    """Self-attention after adding a different vector to each position: depends on the order."""
    positions = 0.5 * np.arange(len(X))[:, None] * np.ones(X.shape[-1])  # (seq_len, d_model)
    return attention_without_positions(X + positions)


def centred(X):
    """Each row minus the mean row: permutation equivariant."""
    return X - X.mean(axis=0)


def equivariance_cases():
    X = np.random.default_rng(6).standard_normal((5, 4))  # (seq_len, d_model)
    cycle = np.array([1, 2, 0, 4, 3])  # not its own inverse
    swap = np.array([1, 0, 2, 3, 4])  # its own inverse
    return [
        Case((attention_without_positions, X, cycle)),
        Case((running_sum, X, cycle)),
        Case((attention_with_positions, X, cycle)),
        Case((centred, X, cycle)),
        Case((attention_without_positions, X, swap), "a permutation that is its own inverse"),
    ]


def is_permutation_equivariant(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[perm]))


def equivariance_row_by_row(fn, X, perm):
    permuted, original = fn(X[perm]), fn(X)
    return all(np.allclose(permuted[r], original[perm[r]]) for r in range(len(perm)))


def equivariance_undone(fn, X, perm):
    inverse = np.argsort(perm)  # undo the permutation on the output instead
    return bool(np.allclose(fn(X[perm])[inverse], fn(X)))


def equivariance_output_not_permuted(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)))


def equivariance_inverse_perm(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[np.argsort(perm)]))


IS_PERMUTATION_EQUIVARIANT = Exercise(
    id="01.is_permutation_equivariant",
    section="01 · Attention ignores order",
    make_cases=equivariance_cases,
    reference=is_permutation_equivariant,
    variants=(equivariance_row_by_row, equivariance_undone),
    buggy={
        "equivariance_output_not_permuted": equivariance_output_not_permuted,
        "equivariance_inverse_perm": equivariance_inverse_perm,
    },
    hints=(
        "Run fn twice: on X as given and on X[perm]. If fn ignores order, how must the two outputs be related?",
        "Equivariant means that shuffling the input rows shuffles the output rows the same way: the second output "
        "is the first one with its rows reordered by perm.",
        "Compare floats with np.allclose rather than ==, and return a Python bool (bool(...)).",
    ),
)

EXERCISES = [
    SOFTMAX_ALONG,
    BY_HAND_NEW_QUERY,
    ATTENTION_WITH_TEMPERATURE,
    SELF_ATTENTION,
    SCORE_SCALE,
    IS_PERMUTATION_EQUIVARIANT,
]

PREDICTIONS = [
    Prediction(
        id="01.naive_softmax_overflow",
        question="What does naive_softmax return for [1000, 1001, 1002]?",
        kind="choice",
        answer="nan",
        choices=("weights", "nan", "inf", "zeros"),
        section="01 · From scores to weights: a stable softmax",
        known_wrong=(
            KnownWrong("inf", "exp_only", "what np.exp(1000) gives; the division inf / inf that follows is no number"),
            KnownWrong(
                "zeros", "underflow", "what very negative scores give (their exp underflows to 0), not large ones"
            ),
            KnownWrong(
                "weights", "stable_softmax", "what the stable softmax returns; this one exponentiates 1000 first"
            ),
        ),
    ),
    Prediction(
        id="01.score_variance_d64",
        question="q and k have 64 independent entries of mean 0 and variance 1: what is Var(q · k)?",
        kind="number",
        answer=64,
        rtol=0.1,
        section="01 · Why divide by √d_head",
        known_wrong=(
            KnownWrong(8, "std_not_variance", "the standard deviation, √64; the variance is its square"),
            KnownWrong(
                1,
                "variance_after_scaling",
                "the variance after dividing by √d_head; before it, the 64 products' variances add up",
            ),
            KnownWrong(4096, "variance_squared", "64²: the variances of the 64 products add, they do not multiply"),
        ),
    ),
    Prediction(
        id="01.tutorial_head3_column",
        question="In the row 'cat [0.8, 0.1, 0.0, 0.0, 0.1, 0.0]' over 'The cat sat on the mat', which column "
        "index (0 to 5) holds the 0.8?",
        kind="index",
        answer=0,
        section="01 · Look at the weights",
        known_wrong=(
            KnownWrong(1, "query_column", "the query's own column, 'cat': read the row's numbers again, left to right"),
        ),
    ),
]
