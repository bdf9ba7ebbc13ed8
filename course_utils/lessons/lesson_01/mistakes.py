"""Lesson 01's entries in the catalogue of known mistakes (:mod:`course_utils.checking.misconceptions`).

One entry per misconception whose section to re-read is in lesson 01; every lesson's checks may name it. Data
only: importing it registers nothing and imports neither torch nor an exercise module.
"""

from __future__ import annotations

from course_utils.checking import patches
from course_utils.checking.model import Misconception

__all__ = ["MISTAKES"]

_SCALE = "01 · Why divide by √d_head"
_SOFTMAX = "01 · From scores to weights: a stable softmax"
_ORDER = "01 · Does attention see the order?"
_SHARED = "01 · Why learned, separate W_q, W_k, W_v"

MISTAKES = (
    Misconception(
        "softmax_wrong_axis",
        "softmax over the wrong axis: each query's weights must sum to 1 over the keys (the scores' last axis, "
        "or the axis asked for)",
        _SOFTMAX,
        "Sum your weights along the axis of the keys: do you get ones? Which axis did your softmax normalise?",
        patches.SOFTMAX_OTHER_AXIS,
    ),
    Misconception(
        "softmax_no_max_shift",
        "exp without subtracting the maximum first: large scores overflow to inf and give NaN",
        _SOFTMAX,
        "Try your code on the scores [1000, 1001]: what is np.exp(1000)? Does softmax change if you subtract the "
        "same number from every score of a row?",
        patches.SOFTMAX_NO_MAX_SHIFT,
    ),
    Misconception(
        "no_scaling",
        "the scores are not divided by sqrt(d_head)",
        _SCALE,
        "Look at your scores before the softmax: are they divided by anything? How large do dot products of "
        "long vectors get?",
        patches.NO_SCALING,
    ),
    Misconception(
        "scaled_by_d_head",
        "the scores are divided by d_head instead of sqrt(d_head)",
        _SCALE,
        "The divisor is a standard deviation. Var(q · k) grows like d_head: how does its standard deviation grow?",
        patches.SCALED_BY_D_HEAD,
    ),
    Misconception(
        "scaled_by_sqrt_d_model",
        "the scores are divided by sqrt(d_model) instead of sqrt(d_head) (the size of one head's query)",
        _SCALE,
        "How many terms does one head's dot product q · k add up: d_model or d_head?",
        patches.SCALED_BY_SQRT_D_MODEL,
    ),
    Misconception(
        "projections_skipped",
        "Q, K and V are X itself: the learned projections W_q, W_k, W_v are never applied",
        "01 · Why learned, separate W_q, W_k, W_v",
        "Where do W_q, W_k and W_v enter your code?",
    ),
    Misconception(
        "projections_transposed",
        "the projections are applied as X @ W.T: with W_q of shape (d_model, d_head), Q = X @ W_q "
        "(nn.Linear stores the transpose, lesson 04)",
        "01 · Why learned, separate W_q, W_k, W_v",
        "W_q has shape (d_model, d_head) and X has shape (seq_len, d_model). Which product gives (seq_len, d_head)?",
    ),
    Misconception(
        "scale_ignores_variance",
        "the divisor ignores the entries' variance: Var(q · k) = d_head * variance**2, not d_head",
        _SCALE,
        "What happens to Var(q · k) if every entry of q and k has variance 4 instead of 1?",
    ),
    Misconception(
        "scale_uses_std",
        "the divisor is sqrt(d_head * variance): each product q_i k_i has variance variance**2, not variance",
        _SCALE,
        "For independent zero-mean q_i and k_i, Var(q_i k_i) = Var(q_i) · Var(k_i). With variance v each, is that "
        "v or v²?",
    ),
    Misconception(
        "equivariance_output_not_permuted",
        "fn(X[perm]) is compared with fn(X): the outputs must be permuted too, fn(X[perm]) == fn(X)[perm]",
        _ORDER,
        "If fn ignores order, fn(X[perm]) holds the same rows as fn(X), but in which order?",
    ),
    Misconception(
        "equivariance_inverse_perm",
        "the outputs are reordered with the inverse permutation: compare fn(X[perm]) with fn(X)[perm]",
        _ORDER,
        "Row r of X[perm] is row perm[r] of X. Which row of fn(X) must row r of fn(X[perm]) equal?",
    ),
    Misconception(
        "global_max_shift",
        "the maximum of the whole array was subtracted, not each slice's: a slice far below it underflows to 0 / 0",
        _SOFTMAX,
        "Which maximum keeps every slice's largest exponent at exactly 0: the whole array's, or the slice's own?",
    ),
    Misconception(
        "keepdims_missing",
        "the sum (or the maximum) lost its axis (no keepdims=True), so it broadcasts against the wrong axis of x",
        _SOFTMAX,
        "What shape does x.sum(axis=axis) have, and how does NumPy line it up with x?",
    ),
    Misconception(
        "transpose_all_axes",
        "K.T reverses every axis of a batched array: transpose only the last two, np.swapaxes(K, -1, -2)",
        "01 · Build it: the scores",
        "What shape does K.T have when K is (2, 5, 4)?",
    ),
    Misconception(
        "output_uses_scores",
        "the output blends V with the scores, not the weights: apply the softmax first, then weights @ V",
        "01 · Build it: attention in one function",
        "Do the rows you multiply V by sum to 1?",
    ),
    Misconception(
        "keys_with_query_projection",
        "the keys were projected with W_q: each token's key comes from its own matrix, K = X @ W_k",
        _SHARED,
        "Which matrix turns a token into its key?",
    ),
    Misconception(
        "equivariance_exact_equality",
        "== (or np.array_equal) on floats: the same sums in another order differ in the last bits; compare with "
        "np.allclose",
        _ORDER,
        "Would two sums of the same numbers, added in a different order, always agree to the last bit?",
    ),
    Misconception(
        "heatmap_read_by_column",
        "a column was read as a query: rows are queries, columns keys, so each query's strongest key is the "
        "largest entry of its row",
        "01 · Look at the weights",
        "Which axis of weights has one entry per query?",
    ),
    Misconception(
        "shared_matrix_equal_norms",
        "every token still prefers itself: with one shared matrix, token i prefers i + 1 only if i + 1's vector is "
        "longer and close enough in direction (Cauchy–Schwarz)",
        _SHARED,
        "With W_q = W_k and both rows of length 1, which is larger: z_i · z_i or z_i · z_(i+1)?",
    ),
    Misconception(
        "shared_matrix_overshoot",
        "the lengths grow too fast: a token's score for a key two steps ahead beats the next one, so it jumps past "
        "its neighbour",
        "01 · Exercise 2 · When can one shared matrix look ahead?",
        "Compare row 0's scores for keys 1 and 2: which wins, and why?",
    ),
)
