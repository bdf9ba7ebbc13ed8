"""Blind battery, lesson 01 (attention in NumPy): wrong answers and wrong predictions."""

SOFTMAX = '''

def softmax_along(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
'''

SCORES = '''

def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
'''

ATTEND = SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores, axis=-1)
    return weights @ V, weights
'''

CASES = [
    # ---- 01.by_hand_new_query ----------------------------------------------------------------------
    {
        "id": "01-001",
        "exercise": "01.by_hand_new_query",
        "mistake": "forgot to divide the dot products [4, -2, 1] by sqrt(2) before the softmax",
        "kind": "missing_scale",
        "source": '''def by_hand_new_query():
    return [0.950, 0.002, 0.047], [9.740, 0.260]
''',
    },
    {
        "id": "01-002",
        "exercise": "01.by_hand_new_query",
        "mistake": "divided the dot products by d_head = 2 instead of sqrt(2)",
        "kind": "wrong_scale",
        "source": '''def by_hand_new_query():
    return [0.786, 0.039, 0.175], [8.732, 1.268]
''',
    },
    {
        "id": "01-003",
        "exercise": "01.by_hand_new_query",
        "mistake": "right weights, but the two output coordinates written in the wrong order",
        "kind": "swapped_outputs",
        "source": '''def by_hand_new_query():
    return [0.882, 0.013, 0.106], [0.655, 9.345]
''',
    },
    {
        "id": "01-004",
        "exercise": "01.by_hand_new_query",
        "mistake": "wrote the scaled scores (before the softmax) as the weights, and blended the values with them",
        "kind": "scores_not_weights",
        "source": '''def by_hand_new_query():
    return [2.828, -1.414, 0.707], [31.820, -10.607]
''',
    },
    # ---- 01.attention_scores ------------------------------------------------------------------------
    {
        "id": "01-005",
        "exercise": "01.attention_scores",
        "mistake": "forgot the division by sqrt(d_head): plain dot products",
        "kind": "missing_scale",
        "source": '''import numpy as np


def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2)
''',
    },
    {
        "id": "01-006",
        "exercise": "01.attention_scores",
        "mistake": "divides by d_head instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": '''import numpy as np


def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
''',
    },
    {
        "id": "01-007",
        "exercise": "01.attention_scores",
        "mistake": "uses K.T, which reverses every axis of a batched K (crashes or mixes batch and feature axes)",
        "kind": "batched_transpose",
        "source": '''import numpy as np


def attention_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])
''',
    },
    {
        "id": "01-008",
        "exercise": "01.attention_scores",
        "mistake": "takes d_head from K.shape[-2], which is k_len, not the feature size",
        "kind": "wrong_scale",
        "source": '''import numpy as np


def attention_scores(Q, K):
    d_head = K.shape[-2]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_head)
''',
    },
    {
        "id": "01-009",
        "exercise": "01.attention_scores",
        "mistake": "multiplies by sqrt(d_head) instead of dividing",
        "kind": "wrong_scale",
        "source": '''import numpy as np


def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(Q.shape[-1])
''',
    },
    {
        "id": "01-010",
        "exercise": "01.attention_scores",
        "mistake": "hard-codes K.transpose(0, 2, 1): only right for exactly one batch axis, crashes on 2-D inputs",
        "kind": "hardcoded_ndim",
        "source": '''import numpy as np


def attention_scores(Q, K):
    if K.ndim == 2:
        return Q @ K.T / np.sqrt(Q.shape[-1])
    return Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
''',
    },
    {
        "id": "01-011",
        "exercise": "01.attention_scores",
        "mistake": "einsum with the output indices swapped: returns (..., k_len, q_len)",
        "kind": "transpose",
        "source": '''import numpy as np


def attention_scores(Q, K):
    return np.einsum("...qd,...kd->...kq", Q, K) / np.sqrt(Q.shape[-1])
''',
    },
    {
        "id": "01-012",
        "exercise": "01.attention_scores",
        "mistake": "uses np.dot, which on batched arrays pairs every batch of Q with every batch of K (wrong shape)",
        "kind": "np_dot_batched",
        "source": '''import numpy as np


def attention_scores(Q, K):
    return np.dot(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
''',
    },
    {
        "id": "01-013",
        "exercise": "01.attention_scores",
        "mistake": "casts to float32 'to save memory', losing precision against float64 inputs",
        "kind": "dtype",
        "source": '''import numpy as np


def attention_scores(Q, K):
    Q32, K32 = Q.astype(np.float32), K.astype(np.float32)
    return Q32 @ np.swapaxes(K32, -1, -2) / np.float32(np.sqrt(Q.shape[-1]))
''',
    },
    {
        "id": "01-014",
        "exercise": "01.attention_scores",
        "mistake": "swaps the first two axes of K instead of the last two (np.swapaxes(K, 0, 1))",
        "kind": "batched_transpose",
        "source": '''import numpy as np


def attention_scores(Q, K):
    return Q @ np.swapaxes(K, 0, 1) / np.sqrt(Q.shape[-1])
''',
    },
    # ---- 01.softmax_along ---------------------------------------------------------------------------
    {
        "id": "01-015",
        "exercise": "01.softmax_along",
        "mistake": "the textbook formula with no maximum subtracted: overflows to nan for scores near 1000",
        "kind": "no_max_shift",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
''',
    },
    {
        "id": "01-016",
        "exercise": "01.softmax_along",
        "mistake": "subtracts the whole array's maximum, so a slice far below it underflows to 0/0",
        "kind": "global_max",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)
''',
    },
    {
        "id": "01-017",
        "exercise": "01.softmax_along",
        "mistake": "takes the max along axis without keepdims, so it broadcasts against the wrong axis",
        "kind": "keepdims",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
''',
    },
    {
        "id": "01-018",
        "exercise": "01.softmax_along",
        "mistake": "sums without keepdims: the division broadcasts the row sums along the wrong axis",
        "kind": "keepdims",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)
''',
    },
    {
        "id": "01-019",
        "exercise": "01.softmax_along",
        "mistake": "ignores the axis argument and always normalizes the last axis",
        "kind": "wrong_axis",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    },
    {
        "id": "01-020",
        "exercise": "01.softmax_along",
        "mistake": "subtracts the minimum instead of the maximum: exponents become large and overflow",
        "kind": "min_shift",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
''',
    },
    {
        "id": "01-021",
        "exercise": "01.softmax_along",
        "mistake": "shifts in place with -=, which changes the caller's array (and fails on integer arrays)",
        "kind": "in_place",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x
''',
    },
    {
        "id": "01-022",
        "exercise": "01.softmax_along",
        "mistake": "max shift right, but divides by the sum of the whole array instead of each slice's sum",
        "kind": "global_sum",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
''',
    },
    {
        "id": "01-023",
        "exercise": "01.softmax_along",
        "mistake": "clips the scores to [-700, 700] to avoid overflow instead of shifting: rows above 700 become flat",
        "kind": "clip_instead_of_shift",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    x = np.clip(x, -700, 700)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
''',
    },
    {
        "id": "01-024",
        "exercise": "01.softmax_along",
        "mistake": "uses torch.softmax and returns a torch tensor where a NumPy array is expected",
        "kind": "wrong_type",
        "source": '''import numpy as np
import torch


def softmax_along(x, axis=-1):
    return torch.softmax(torch.as_tensor(x), dim=axis)
''',
    },
    {
        "id": "01-025",
        "exercise": "01.softmax_along",
        "mistake": "divides by the slice's maximum exp instead of the sum: the largest weight is 1, rows do not sum to 1",
        "kind": "wrong_normalizer",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.max(axis=axis, keepdims=True)
''',
    },
    {
        "id": "01-026",
        "exercise": "01.softmax_along",
        "mistake": "moves the axis to the end to normalize it but forgets to move it back (wrong layout for axis != -1)",
        "kind": "wrong_axis",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    x = np.moveaxis(x, axis, -1)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    },
    {
        "id": "01-027",
        "exercise": "01.softmax_along",
        "mistake": "works in float32 'like a model would', so results on float64 inputs lose precision",
        "kind": "dtype",
        "source": '''import numpy as np


def softmax_along(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
''',
    },
    # ---- 01.attend ----------------------------------------------------------------------------------
    {
        "id": "01-028",
        "exercise": "01.attend",
        "mistake": "softmax over axis -2 (the queries) instead of the keys: columns sum to 1",
        "kind": "wrong_axis",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores, axis=-2)
    return weights @ V, weights
''',
    },
    {
        "id": "01-029",
        "exercise": "01.attend",
        "mistake": "forgot the 1/sqrt(d_head) scale",
        "kind": "missing_scale",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2)
    weights = softmax_along(scores)
    return weights @ V, weights
''',
    },
    {
        "id": "01-030",
        "exercise": "01.attend",
        "mistake": "scales by sqrt(d_value) (V's width) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1])
    weights = softmax_along(scores)
    return weights @ V, weights
''',
    },
    {
        "id": "01-031",
        "exercise": "01.attend",
        "mistake": "returns (weights, output) in the wrong order",
        "kind": "return_order",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores)
    return weights, weights @ V
''',
    },
    {
        "id": "01-032",
        "exercise": "01.attend",
        "mistake": "blends the keys instead of the values (weights @ K)",
        "kind": "wrong_operand",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores)
    return weights @ K, weights
''',
    },
    {
        "id": "01-033",
        "exercise": "01.attend",
        "mistake": "uses the textbook softmax with no max shift: nan for large scores",
        "kind": "no_max_shift",
        "source": '''import numpy as np


def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores)
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
''',
    },
    {
        "id": "01-034",
        "exercise": "01.attend",
        "mistake": "uses K.T, which breaks with batch axes",
        "kind": "batched_transpose",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores)
    return weights @ V, weights
''',
    },
    {
        "id": "01-035",
        "exercise": "01.attend",
        "mistake": "multiplies the raw scores (before the softmax) by V for the output; the weights it returns are right",
        "kind": "scores_not_weights",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores)
    return scores @ V, weights
''',
    },
    {
        "id": "01-036",
        "exercise": "01.attend",
        "mistake": "divides by sqrt(d_head) twice: once in the scores, again before the softmax",
        "kind": "wrong_scale",
        "source": '''import numpy as np
''' + SOFTMAX + SCORES + '''

def attend(Q, K, V):
    scores = attention_scores(Q, K) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores)
    return weights @ V, weights
''',
    },
    {
        "id": "01-037",
        "exercise": "01.attend",
        "mistake": "takes d_head as Q.shape[1], which is q_len for unbatched input and the wrong axis with batches",
        "kind": "wrong_scale",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    d_head = Q.shape[1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_head)
    weights = softmax_along(scores)
    return weights @ V, weights
''',
    },
    {
        "id": "01-038",
        "exercise": "01.attend",
        "mistake": "returns only the output, forgetting the weights",
        "kind": "return_arity",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores)
    return weights @ V
''',
    },
    {
        "id": "01-039",
        "exercise": "01.attend",
        "mistake": "uses element-wise * between weights and V instead of a matrix product (only runs for square cases)",
        "kind": "elementwise",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores)
    out = (weights[..., :, :, None] * V[..., None, :, :]).sum(axis=-3)
    return out, weights
''',
    },
    # ---- 01.self_attention --------------------------------------------------------------------------
    {
        "id": "01-040",
        "exercise": "01.self_attention",
        "mistake": "forgets W_v and blends the raw tokens X as values",
        "kind": "missing_projection",
        "source": '''import numpy as np
''' + ATTEND + '''

def self_attention(X, W_q, W_k, W_v):
    return attend(X @ W_q, X @ W_k, X)
''',
    },
    {
        "id": "01-041",
        "exercise": "01.self_attention",
        "mistake": "copy-paste slip: keys projected with W_q instead of W_k",
        "kind": "copy_paste",
        "source": '''import numpy as np
''' + ATTEND + '''

def self_attention(X, W_q, W_k, W_v):
    Q = X @ W_q
    K = X @ W_q
    V = X @ W_v
    return attend(Q, K, V)
''',
    },
    {
        "id": "01-042",
        "exercise": "01.self_attention",
        "mistake": "scales the scores by sqrt(d_model) (X's width) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    weights = softmax_along(scores)
    return weights @ V, weights
''',
    },
    {
        "id": "01-043",
        "exercise": "01.self_attention",
        "mistake": "projects the keys with W_k transposed (X @ W_k.T): right only when W_k is square and symmetric",
        "kind": "transpose",
        "source": '''import numpy as np
''' + ATTEND + '''

def self_attention(X, W_q, W_k, W_v):
    return attend(X @ W_q, X @ W_k.T, X @ W_v)
''',
    },
    {
        "id": "01-044",
        "exercise": "01.self_attention",
        "mistake": "scales by sqrt(W_v.shape[1]) (d_value) instead of d_head",
        "kind": "wrong_scale",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_v.shape[1])
    weights = softmax_along(scores)
    return weights @ V, weights
''',
    },
    {
        "id": "01-045",
        "exercise": "01.self_attention",
        "mistake": "passes the projections to attend in the wrong order (K, Q, V): weights are transposed",
        "kind": "argument_order",
        "source": '''import numpy as np
''' + ATTEND + '''

def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return attend(K, Q, V)
''',
    },
    {
        "id": "01-046",
        "exercise": "01.self_attention",
        "mistake": "transposes the projected keys with .T, which reverses the batch axes too (crashes or mixes sequences)",
        "kind": "batched_transpose",
        "source": '''import numpy as np
''' + SOFTMAX + '''

def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax_along(Q @ K.T / np.sqrt(Q.shape[-1]))
    return weights @ V, weights
''',
    },
    # ---- 01.is_permutation_equivariant --------------------------------------------------------------
    {
        "id": "01-047",
        "exercise": "01.is_permutation_equivariant",
        "mistake": "compares fn(X[perm]) with fn(X), forgetting to reorder fn's output",
        "kind": "missing_permute",
        "source": '''import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return np.allclose(fn(X[perm]), fn(X))
''',
    },
    {
        "id": "01-048",
        "exercise": "01.is_permutation_equivariant",
        "mistake": "exact equality (np.array_equal) on floats: rounding differences make equivariant functions fail",
        "kind": "float_equality",
        "source": '''import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return np.array_equal(fn(X[perm]), fn(X)[perm])
''',
    },
    {
        "id": "01-049",
        "exercise": "01.is_permutation_equivariant",
        "mistake": "reorders the output by the inverse permutation (argsort) instead of perm",
        "kind": "inverse_permutation",
        "source": '''import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return np.allclose(fn(X[perm]), fn(X)[np.argsort(perm)])
''',
    },
    {
        "id": "01-050",
        "exercise": "01.is_permutation_equivariant",
        "mistake": "compares only the sums of the outputs: any reordering of rows passes, equivariant or not",
        "kind": "too_lenient",
        "source": '''import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return bool(np.isclose(fn(X[perm]).sum(), fn(X).sum()))
''',
    },
    {
        "id": "01-051",
        "exercise": "01.is_permutation_equivariant",
        "mistake": "tolerance far too loose (atol=0.5): order-dependent functions with small effects pass",
        "kind": "too_lenient",
        "source": '''import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return np.allclose(fn(X[perm]), fn(X)[perm], atol=0.5)
''',
    },
    {
        "id": "01-052",
        "exercise": "01.is_permutation_equivariant",
        "mistake": "checks that the output does not change at all (invariance) instead of moving with the rows",
        "kind": "invariance_not_equivariance",
        "source": '''import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return np.allclose(np.sort(fn(X[perm]), axis=None), np.sort(fn(X), axis=None))
''',
    },
    # ---- 01.strongest_key ---------------------------------------------------------------------------
    {
        "id": "01-053",
        "exercise": "01.strongest_key",
        "mistake": "argmax over axis 0 (down the columns): for each key, the query that reads it most",
        "kind": "wrong_axis",
        "source": '''import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return [key_labels[i] for i in np.argmax(weights, axis=0)]
''',
    },
    {
        "id": "01-054",
        "exercise": "01.strongest_key",
        "mistake": "returns the column indices, not the key labels",
        "kind": "wrong_type",
        "source": '''import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return list(np.argmax(weights, axis=-1))
''',
    },
    {
        "id": "01-055",
        "exercise": "01.strongest_key",
        "mistake": "returns a NumPy array of labels instead of a list",
        "kind": "wrong_type",
        "source": '''import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return np.array(key_labels)[np.argmax(weights, axis=-1)]
''',
    },
    {
        "id": "01-056",
        "exercise": "01.strongest_key",
        "mistake": "takes the last index of argsort, which on a tie picks the last tied key, not the first",
        "kind": "tie_break",
        "source": '''import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return [key_labels[np.argsort(row, kind="stable")[-1]] for row in weights]
''',
    },
    {
        "id": "01-057",
        "exercise": "01.strongest_key",
        "mistake": "labels the answer with the query labels (mixes up rows and columns)",
        "kind": "row_column_confusion",
        "source": '''import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return [query_labels[min(j, len(query_labels) - 1)] for j in np.argmax(weights, axis=-1)]
''',
    },
    # ---- 01.score_scale -----------------------------------------------------------------------------
    {
        "id": "01-058",
        "exercise": "01.score_scale",
        "mistake": "sqrt(d_head * variance): takes Var(q_i k_i) as the variance instead of its square",
        "kind": "variance_algebra",
        "source": '''import math


def score_scale(d_head, variance):
    return math.sqrt(d_head * variance)
''',
    },
    {
        "id": "01-059",
        "exercise": "01.score_scale",
        "mistake": "keeps the lesson's sqrt(d_head) and ignores the variance",
        "kind": "ignores_argument",
        "source": '''import math


def score_scale(d_head, variance):
    return math.sqrt(d_head)
''',
    },
    {
        "id": "01-060",
        "exercise": "01.score_scale",
        "mistake": "returns the variance of q . k (d_head * variance^2) instead of its standard deviation",
        "kind": "variance_not_std",
        "source": '''def score_scale(d_head, variance):
    return d_head * variance**2
''',
    },
    {
        "id": "01-061",
        "exercise": "01.score_scale",
        "mistake": "divides by the variance instead of multiplying: sqrt(d_head) / variance",
        "kind": "variance_algebra",
        "source": '''import math


def score_scale(d_head, variance):
    return math.sqrt(d_head) / variance
''',
    },
    # ---- 01.shared_next_token_matrix ----------------------------------------------------------------
    {
        "id": "01-062",
        "exercise": "01.shared_next_token_matrix",
        "mistake": "reuses the lesson's shift matrix, which only works with separate W_q and W_k; shared, each token prefers itself",
        "kind": "shared_matrix_symmetry",
        "source": '''import numpy as np


def shared_next_token_matrix():
    return 6.0 * np.eye(4, k=1)
''',
    },
    {
        "id": "01-063",
        "exercise": "01.shared_next_token_matrix",
        "mistake": "rows that grow in length along one direction: every token then prefers the longest token 3",
        "kind": "shared_matrix_symmetry",
        "source": '''import numpy as np


def shared_next_token_matrix():
    return np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]])
''',
    },
    {
        "id": "01-064",
        "exercise": "01.shared_next_token_matrix",
        "mistake": "rows that turn but keep length 1: equal lengths, so every token attends most to itself",
        "kind": "shared_matrix_symmetry",
        "source": '''import numpy as np


def shared_next_token_matrix():
    angles = np.deg2rad([0.0, 30.0, 60.0, 90.0])
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)
''',
    },
    {
        "id": "01-065",
        "exercise": "01.shared_next_token_matrix",
        "mistake": "returns a (4, 1) matrix of growing lengths: d must be >= 2, and in one dimension the longest token wins",
        "kind": "shape",
        "source": '''import numpy as np


def shared_next_token_matrix():
    return np.array([[1.0], [2.0], [3.0], [4.0]])
''',
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "01-p01", "prediction": "01.naive_softmax_overflow", "mistake": "thinks exp overflow gives inf weights", "kind": "overflow_inf", "value": "inf"},
    {"id": "01-p02", "prediction": "01.naive_softmax_overflow", "mistake": "thinks the formula is fine for any input", "kind": "no_overflow", "value": "weights"},
    {"id": "01-p03", "prediction": "01.naive_softmax_mixed", "mistake": "thinks the winner still gets weight 1", "kind": "no_overflow", "value": "1, 0, 0"},
    {"id": "01-p04", "prediction": "01.naive_softmax_mixed", "mistake": "thinks one overflow spoils every entry", "kind": "nan_everywhere", "value": "nan, nan, nan"},
    {"id": "01-p05", "prediction": "01.attend_output_shape", "mistake": "output as wide as d_head instead of d_value", "kind": "shape_d_head", "value": (2, 4, 8)},
    {"id": "01-p06", "prediction": "01.attend_output_shape", "mistake": "one output row per key instead of per query", "kind": "shape_rows_keys", "value": (2, 6, 5)},
    {"id": "01-p07", "prediction": "01.attend_weights_shape", "mistake": "weights (batch, k_len, q_len): transposed", "kind": "shape_transposed", "value": (2, 6, 4)},
    {"id": "01-p08", "prediction": "01.attend_weights_shape", "mistake": "weights as wide as d_head", "kind": "shape_d_head", "value": (2, 4, 8)},
    {"id": "01-p09", "prediction": "01.lookup_key2_weight", "mistake": "a long query along key 2 turns the blend into a hard look-up", "kind": "hard_lookup", "value": 1.0},
    {"id": "01-p10", "prediction": "01.lookup_key2_weight", "mistake": "key 2 is shortest, so it gets (almost) nothing", "kind": "length_wins", "value": 0.0},
    {"id": "01-p11", "prediction": "01.shared_weights_symmetric", "mistake": "symmetric scores give symmetric weights", "kind": "symmetric_weights", "value": "yes"},
    {"id": "01-p12", "prediction": "01.kv_shuffle_changes", "mistake": "shuffling the tokens changes every output", "kind": "order_matters", "value": "all"},
    {"id": "01-p13", "prediction": "01.kv_shuffle_changes", "mistake": "the shuffled positions change, like the equivariance test", "kind": "order_matters", "value": "the shuffled positions"},
    {"id": "01-p14", "prediction": "01.score_variance_d64", "mistake": "gives the standard deviation sqrt(64)", "kind": "std_not_variance", "value": 8},
    {"id": "01-p15", "prediction": "01.score_variance_d64", "mistake": "thinks a sum of unit-variance terms keeps variance 1", "kind": "variance_algebra", "value": 1},
    {"id": "01-p16", "prediction": "01.score_variance_scaled", "mistake": "divides the variance by sqrt(d_head) instead of d_head", "kind": "variance_algebra", "value": 8},
    {"id": "01-p17", "prediction": "01.score_variance_scaled", "mistake": "divides the variance 1 by 8 again", "kind": "variance_algebra", "value": 0.125},
    {"id": "01-p18", "prediction": "01.tutorial_head3_column", "mistake": "trusts the comment 'strong self-attention': cat's own column", "kind": "heatmap_reading", "value": 1},
    {"id": "01-p19", "prediction": "01.temperature_for_unscaled", "mistake": "T = sqrt(d_head) (the factor, not its inverse)", "kind": "inverse", "value": 8},
    {"id": "01-p20", "prediction": "01.temperature_for_unscaled", "mistake": "T = 1/d_head instead of 1/sqrt(d_head)", "kind": "sqrt_forgotten", "value": 1 / 64},
]
