"""Lesson 01's first exercises, the core computation: by hand, the scores, a stable softmax, attention in one
function, self-attention with learned projections and its permutation equivariance (``01.by_hand_new_query``,
``01.attention_scores``, ``01.softmax_along``, ``01.attend``, ``01.self_attention``, ``01.is_permutation_equivariant``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``. ``_stable_softmax`` is now ``stable_softmax``.
"""

from __future__ import annotations

import math

import numpy as np

from course_utils import numpy_attention
from course_utils.checking.cases import large_scores
from course_utils.checking.model import Case, Exercise

__all__ = [
    "BY_HAND_NEW_QUERY",
    "ATTENTION_SCORES",
    "SOFTMAX_ALONG",
    "ATTEND",
    "SELF_ATTENTION",
    "IS_PERMUTATION_EQUIVARIANT",
    "WORKED_Q",
    "WORKED_K",
    "WORKED_V",
    "softmax_global_max",
]

# the worked example of the lesson: three tokens, d_head = 2
WORKED_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (q_len=3, d_head=2)
WORKED_K = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # (k_len=3, d_head=2)
WORKED_V = np.array([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]])  # (k_len=3, d_value=2)


def stable_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=axis, keepdims=True)


# ---- W · 01.by_hand_new_query() -> (weights, output), found on paper ---------------------------------------
_NEW_QUERY = np.array([2.0, -1.0])


def _by_hand(divide_by):
    scores = WORKED_K @ _NEW_QUERY / divide_by  # (k_len,): one score per key
    weights = np.exp(scores) / np.exp(scores).sum()
    return weights, weights @ WORKED_V  # (k_len,) @ (k_len, d_value) -> (d_value,)


def by_hand_new_query():
    return _by_hand(math.sqrt(2))


def by_hand_new_query_rounded():
    return [0.882, 0.013, 0.106], [9.345, 0.655]  # worked out on paper, to three decimals


def by_hand_new_query_pure_python():
    exps = [math.exp(s / math.sqrt(2)) for s in (4.0, -2.0, 1.0)]  # [2, -1] against [2, 0], [0, 2], [1, 1]
    weights = [e / sum(exps) for e in exps]
    output = [sum(w * v[c] for w, v in zip(weights, ([10, 0], [0, 10], [5, 5]), strict=True)) for c in (0, 1)]
    return weights, output


def by_hand_new_query_unscaled():
    return _by_hand(1.0)


def by_hand_new_query_by_d_head():
    return _by_hand(2.0)


BY_HAND_NEW_QUERY = Exercise(
    id="01.by_hand_new_query",
    title="query [2, -1] by hand",
    section="01 · Check it by hand: 3 tokens, d_head = 2",
    make_cases=lambda: [Case((), "the query [2, -1] against the worked example's keys and values")],
    reference=by_hand_new_query,
    variants=(by_hand_new_query_rounded, by_hand_new_query_pure_python),
    buggy={"no_scaling": by_hand_new_query_unscaled, "scaled_by_d_head": by_hand_new_query_by_d_head},
    hints=(
        "What are the three dot products of the query with the worked example's three keys, and what do you divide "
        "them by?",
        "Weights: exp(s_j) over the sum of the three exps; a negative score just gets a small weight. Output: each "
        "weight times its value row, added up, one number per column of V.",
        "The scores are [4, -2, 1] / sqrt(2) = [2.828, -1.414, 0.707]. Which key should win clearly, and so which value "
        "row should the output lie close to?",
    ),
    output_names=("weights", "output"),
    returns="array_like",  # found on paper: lists of numbers are as right as arrays
    reveal=False,
    atol=5e-3,
    rtol=0.0,
)


# ---- R1 · 01.attention_scores(Q, K) -> (..., q_len, k_len) --------------------------------------------------
def attention_scores_cases():
    rng = np.random.default_rng(11)
    return [
        Case((rng.standard_normal((3, 4)), rng.standard_normal((5, 4)))),
        Case((rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 5, 6))), "a batch of 2 sequences"),
        Case(
            (rng.standard_normal((2, 3, 4, 6)), rng.standard_normal((2, 3, 5, 6))),
            "two leading batch axes",
        ),
        Case((rng.standard_normal((1, 7)), rng.standard_normal((2, 7))), "one query"),
        Case((WORKED_Q, WORKED_K), "the worked example"),
    ]


def attention_scores(Q, K):
    d_head = Q.shape[-1]
    # (..., q_len, d_head) @ (..., d_head, k_len) -> (..., q_len, k_len)
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_head)


def attention_scores_einsum(Q, K):
    return np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])


def attention_scores_moveaxis(Q, K):
    return np.matmul(Q, np.moveaxis(K, -1, -2)) * Q.shape[-1] ** -0.5


def attention_scores_unscaled(Q, K):
    return Q @ np.swapaxes(K, -1, -2)


def attention_scores_by_d_head(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]


def attention_scores_keys_as_rows(Q, K):
    return K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1])  # (..., k_len, q_len)


def attention_scores_all_axes_transposed(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])  # K.T reverses every axis: a crash on batched inputs


ATTENTION_SCORES = Exercise(
    id="01.attention_scores",
    fresh=lambda batch, q_len, k_len, d_head: [
        (
            np.random.default_rng(1).normal(size=(batch, q_len, d_head)),
            np.random.default_rng(2).normal(size=(batch, k_len, d_head)),
        )
    ],
    section="01 · Build it: the scores",
    make_cases=attention_scores_cases,
    reference=attention_scores,
    variants=(attention_scores_einsum, attention_scores_moveaxis),
    buggy={
        "no_scaling": attention_scores_unscaled,
        "scaled_by_d_head": attention_scores_by_d_head,
        "scores_transposed": attention_scores_keys_as_rows,
        "transpose_all_axes": attention_scores_all_axes_transposed,
    },
    hints=(
        "Which axis of K must its d_head features move to, so that one matrix product pairs every query with every "
        "key?",
        "Transpose only the last two axes of K (the batch axes stay where they are), multiply, and divide by the "
        "square root of the length of one query vector.",
        "np.swapaxes(K, -1, -2) has shape (..., d_head, k_len); Q.shape[-1] is d_head.",
    ),
)


# ---- R2 · 01.softmax_along(x, axis=-1) ----------------------------------------------------------------------
def softmax_along_cases():
    rng = np.random.default_rng(1)
    return [
        Case((np.array([1.0, 2.0, 3.0]), -1)),
        Case((np.array([[1000.0, 1001.0, 999.0], [-1000.0, -999.0, -998.0]]), -1), "two rows far apart"),
        Case((np.array([[1e4, 0.0], [0.0, 1e4], [5.0, 5.0]]), 0), "down the columns"),
        Case((100 * rng.standard_normal((2, 3, 4)), 1), "the middle axis, scores in the hundreds"),
        Case((large_scores((3, 4, 5), 2), -1), "scores in the thousands"),
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


def softmax_global_max(x, axis=-1):
    """The whole array's maximum subtracted, not each slice's: a slice far below it gives 0 / 0 (the bug zoo's)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(under="ignore", invalid="ignore"):
        exps = np.exp(x - x.max())
        return exps / exps.sum(axis=axis, keepdims=True)


def softmax_along_without_keepdims(x, axis=-1):
    exps = np.exp(x - x.max(axis=axis, keepdims=True))
    return exps / exps.sum(axis=axis)  # (..., ) without the axis: lines up with the wrong axis of exps


SOFTMAX_ALONG = Exercise(
    id="01.softmax_along",
    fresh=lambda batch, rows, cols: [
        (100 * np.random.default_rng(1).normal(size=(batch, rows, cols)), 1),
        (np.random.default_rng(2).normal(size=(batch, rows, cols)), -1),
    ],
    section="01 · From scores to weights: a stable softmax",
    make_cases=softmax_along_cases,
    reference=softmax_along,
    variants=(softmax_along_shifted, softmax_along_log_space, softmax_along_moved_axis),
    buggy={"global_max_shift": softmax_global_max, "keepdims_missing": softmax_along_without_keepdims},
    misconceptions=("softmax_wrong_axis", "softmax_no_max_shift"),
    hints=(
        "What can you subtract from every score of a slice without changing its softmax, so that no exp overflows?",
        "Subtract each slice's own maximum along `axis` (not the whole array's) and keep the reduced axis, "
        "keepdims=True, so that it broadcasts back against x.",
        "x.max(axis=axis, keepdims=True) has size 1 along axis. With the whole array's maximum, the row "
        "[-1000, -999] would become [-2001, -2000] and both exps underflow to 0. Sum the exps along the same axis, "
        "again with keepdims.",
    ),
)


# ---- R3 · 01.attend(Q, K, V) -> (output, weights) -----------------------------------------------------------
def attend_cases():
    rng = np.random.default_rng(3)
    return [
        Case((WORKED_Q, WORKED_K, WORKED_V), "the worked example"),
        Case(
            (rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 5, 6)), rng.standard_normal((2, 5, 3))),
            "a batch of 2 sequences",
        ),
        Case(
            (100 * rng.standard_normal((3, 4)), 100 * rng.standard_normal((6, 4)), rng.standard_normal((6, 2))),
            "scores in the thousands",
        ),
        Case(
            (rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 7))),
            "two leading batch axes",
        ),
    ]


def attend(Q, K, V):
    return numpy_attention.scaled_dot_product_attention(Q, K, V)


def attend_inline(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (..., q_len, k_len)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights  # (..., q_len, k_len) @ (..., k_len, d_value) -> (..., q_len, d_value)


def attend_einsum(Q, K, V):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(Q.shape[-1])
    weights = stable_softmax(scores, axis=-1)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


def attend_output_from_scores(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    return scores @ V, stable_softmax(scores, axis=-1)  # the scores, not the weights, blend the values


def attend_all_axes_transposed(Q, K, V):
    weights = stable_softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)  # K.T: a crash on batched inputs
    return weights @ V, weights


ATTEND = Exercise(
    id="01.attend",
    fresh=lambda q_len, k_len, d_head, d_value: [
        (
            np.random.default_rng(1).normal(size=(q_len, d_head)),
            np.random.default_rng(2).normal(size=(k_len, d_head)),
            np.random.default_rng(3).normal(size=(k_len, d_value)),
        )
    ],
    section="01 · Build it: attention in one function",
    make_cases=attend_cases,
    reference=attend,
    variants=(attend_inline, attend_einsum),
    buggy={"output_uses_scores": attend_output_from_scores, "transpose_all_axes": attend_all_axes_transposed},
    misconceptions=("softmax_wrong_axis", "softmax_no_max_shift", "no_scaling", "scaled_by_d_head"),
    hints=(
        "Along which axis must each query's weights sum to 1, and what do the weights then multiply?",
        "The weights are the softmax of the scores over the keys (the last axis); each output row is a weighted "
        "average of V's rows, which for all queries at once is one matrix product.",
        "weights has shape (..., q_len, k_len) and V (..., k_len, d_value): what is the shape of weights @ V?",
    ),
    output_names=("output", "weights"),
)


# ---- R4 · 01.self_attention(X, W_q, W_k, W_v) -> (output, weights) ------------------------------------------
def self_attention_cases():
    rng = np.random.default_rng(4)
    return [
        # (X, W_q, W_k, W_v): seq_len 4, d_model 5, d_head 3, d_value 2
        Case((rng.standard_normal((4, 5)), *(rng.standard_normal((5, n)) for n in (3, 3, 2)))),
        # batch 2, seq_len 6, d_model 5, d_head 3, d_value 4
        Case((rng.standard_normal((2, 6, 5)), *(rng.standard_normal((5, n)) / 2 for n in (3, 3, 4))), "a batch"),
        # seq_len 3, d_model 7, d_head 2, d_value 5
        Case(
            (30 * rng.standard_normal((3, 7)), *(rng.standard_normal((7, n)) for n in (2, 2, 5))),
            "scores in the thousands",
        ),
        # seq_len 3, d_model 6, d_head 4, d_value 2
        Case((rng.standard_normal((3, 6)), *(rng.standard_normal((6, n)) / 2 for n in (4, 4, 2)))),
    ]


def self_attention(X, W_q, W_k, W_v):
    # (..., seq_len, d_model) @ (d_model, d_head) -> (..., seq_len, d_head); W_v gives d_value
    return numpy_attention.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def self_attention_steps(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (..., seq_len, d_head), (..., seq_len, d_head), (..., seq_len, d_value)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(W_q.shape[-1])  # (..., seq_len, seq_len)
    weights = stable_softmax(scores, axis=-1)
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
    weights = stable_softmax(Q @ np.swapaxes(K, -1, -2) / divide_by)  # (..., seq_len, seq_len)
    return weights @ V, weights


def self_attention_projections_skipped(X, W_q, W_k, W_v):
    return _attend(X, X, X, math.sqrt(X.shape[-1]))  # attend(X, X, X): no projection at all


def self_attention_projections_transposed(X, W_q, W_k, W_v):
    # (..., seq_len, d_model) @ (d_head, d_model): crashes unless the weights are square
    return _attend(X @ W_q.T, X @ W_k.T, X @ W_v.T, math.sqrt(W_q.shape[-1]))


def self_attention_scaled_by_sqrt_d_model(X, W_q, W_k, W_v):
    return _attend(X @ W_q, X @ W_k, X @ W_v, math.sqrt(X.shape[-1]))


def self_attention_keys_from_w_q(X, W_q, W_k, W_v):
    return _attend(X @ W_q, X @ W_q, X @ W_v, math.sqrt(W_q.shape[-1]))  # the keys made with W_q


SELF_ATTENTION = Exercise(
    id="01.self_attention",
    fresh=lambda seq_len, d_model, d_head, d_value: [
        (
            np.random.default_rng(1).normal(size=(seq_len, d_model)),
            # a generator per matrix: W_q, W_k and W_v differ even where their sizes agree
            *(
                np.random.default_rng(s).normal(size=(d_model, n)) / 2
                for s, n in ((2, d_head), (3, d_head), (4, d_value))
            ),
        )
    ],
    section="01 · Why learned, separate W_q, W_k, W_v",
    make_cases=self_attention_cases,
    reference=self_attention,
    variants=(self_attention_steps, self_attention_einsum),
    buggy={
        "projections_skipped": self_attention_projections_skipped,
        "projections_transposed": self_attention_projections_transposed,
        "scaled_by_sqrt_d_model": self_attention_scaled_by_sqrt_d_model,
        "keys_with_query_projection": self_attention_keys_from_w_q,
    },
    misconceptions=("softmax_wrong_axis", "softmax_no_max_shift", "no_scaling", "scaled_by_d_head"),
    hints=(
        "In self-attention, where do the queries, the keys and the values come from, and which matrix makes each?",
        "Project X three times, Q = X W_q, K = X W_k, V = X W_v, then attend with them; the scale is the width of a "
        "query, d_head, which your attend reads from Q.",
        "X @ W_q has shape (..., seq_len, d_head); your attend(Q, K, V) does the rest.",
    ),
    output_names=("output", "weights"),
)


# ---- R5 · 01.is_permutation_equivariant(fn, X, perm) -> bool ------------------------------------------------
def attention_without_positions(X):
    """Self-attention of X (seq_len, d_model) with fixed projections: permutation equivariant."""
    d_model = X.shape[-1]
    W_q, W_k, W_v = np.random.default_rng(5).standard_normal((3, d_model, d_model)) / np.sqrt(d_model)
    return _attend(X @ W_q, X @ W_k, X @ W_v, math.sqrt(d_model))[0]


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


def widened(X):
    """Each row through one (d_model, 5) matrix, d_out != d_model: permutation equivariant."""
    return X @ np.random.default_rng(8).standard_normal((X.shape[-1], 5))


def sorted_rows(X):
    """Each column sorted: the output ignores the input's order entirely (invariant, so not equivariant)."""
    return np.sort(X, axis=0)


def equivariance_cases():
    X = np.random.default_rng(6).standard_normal((5, 4))  # (seq_len, d_model)
    X_narrow = np.random.default_rng(7).standard_normal((5, 3))  # (seq_len, d_model=3)
    cycle = np.array([1, 2, 0, 4, 3])  # not its own inverse
    swap = np.array([1, 0, 2, 3, 4])  # its own inverse
    return [
        Case((attention_without_positions, X, cycle)),
        Case((running_sum, X, cycle)),
        Case((attention_with_positions, X, cycle)),
        Case((centred, X, cycle)),
        Case((attention_without_positions, X, swap), "a permutation that is its own inverse"),
        Case((widened, X_narrow, cycle), "5 outputs per token from 3 inputs"),
        Case((sorted_rows, X, cycle), "sorting ignores the order of the input"),
    ]


def is_permutation_equivariant(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[perm]))


def equivariance_undone(fn, X, perm):
    inverse = np.argsort(perm)  # undo the permutation on the other side instead
    return bool(np.allclose(fn(X[perm])[inverse], fn(X)))


def equivariance_largest_difference(fn, X, perm):
    return float(np.abs(fn(X[perm]) - fn(X)[perm]).max()) < 1e-9


def equivariance_row_by_row(fn, X, perm):
    permuted, original = fn(X[perm]), fn(X)
    return all(np.allclose(permuted[r], original[perm[r]]) for r in range(len(perm)))


def equivariance_output_not_permuted(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)))


def equivariance_inverse_perm(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[np.argsort(perm)]))


def equivariance_exact_equality(fn, X, perm):
    return bool(np.array_equal(fn(X[perm]), fn(X)[perm]))


IS_PERMUTATION_EQUIVARIANT = Exercise(
    id="01.is_permutation_equivariant",
    fresh=lambda seq_len, d_model: [
        (fn, np.random.default_rng(1).standard_normal((seq_len, d_model)), np.roll(np.arange(seq_len), 1))
        for fn in (attention_without_positions, running_sum, attention_with_positions, centred, sorted_rows)
    ],
    section="01 · Does attention see the order?",
    make_cases=equivariance_cases,
    reference=is_permutation_equivariant,
    variants=(equivariance_undone, equivariance_largest_difference, equivariance_row_by_row),
    buggy={
        "equivariance_output_not_permuted": equivariance_output_not_permuted,
        "equivariance_inverse_perm": equivariance_inverse_perm,
        "equivariance_exact_equality": equivariance_exact_equality,
    },
    hints=(
        "Run fn twice, once on X and once on X[perm]. If fn ignores order, how must the second output relate to "
        "the first?",
        "Equivariant means that fn(X[perm]) equals fn(X) with its rows reordered by the same perm; compare the two "
        "arrays of floats with a tolerance and return a bool.",
        "fn(X)[perm] reorders the rows of the first output; np.allclose(a, b) compares with a tolerance.",
    ),
)
