"""Blind battery 4, lesson 01: wrong answers a student could give (see README.md)."""

_SOFTMAX = """

def softmax_along(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""

_ATTEND = (
    _SOFTMAX
    + """

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores, axis=-1)
    return weights @ V, weights
"""
)


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # by_hand_new_query: right is weights [0.882, 0.013, 0.106], output [9.345, 0.655]
    _case(
        "01-001",
        "01.by_hand_new_query",
        "forgets to divide the scores by sqrt(2) before exp",
        "missing-scale",
        """def by_hand_new_query():
    return [0.950, 0.002, 0.047], [9.740, 0.260]
""",
    ),
    _case(
        "01-002",
        "01.by_hand_new_query",
        "divides by d_head = 2 instead of sqrt(2)",
        "wrong-scale",
        """def by_hand_new_query():
    return [0.786, 0.039, 0.175], [8.732, 1.268]
""",
    ),
    _case(
        "01-003",
        "01.by_hand_new_query",
        "averages the keys instead of the values for the output (w @ K)",
        "keys-as-values",
        """def by_hand_new_query():
    return [0.882, 0.013, 0.106], [1.869, 0.131]
""",
    ),
    _case(
        "01-004",
        "01.by_hand_new_query",
        "writes the raw scores 4, -2, 1 as the weights (no softmax)",
        "no-softmax",
        """def by_hand_new_query():
    return [4.0, -2.0, 1.0], [45.0, -15.0]
""",
    ),
    _case(
        "01-005",
        "01.by_hand_new_query",
        "normalizes the scaled scores by their sum instead of exponentiating",
        "no-exp",
        """def by_hand_new_query():
    s = [4 / 2 ** 0.5, -2 / 2 ** 0.5, 1 / 2 ** 0.5]
    w = [x / sum(s) for x in s]
    return [round(x, 3) for x in w], [round(10 * w[0] + 5 * w[2], 3), round(10 * w[1] + 5 * w[2], 3)]
""",
    ),
    # attention_scores
    _case(
        "01-006",
        "01.attention_scores",
        "divides by d_head instead of sqrt(d_head)",
        "wrong-scale",
        """import numpy as np


def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
""",
    ),
    _case(
        "01-007",
        "01.attention_scores",
        "K.T reverses every axis, so batched inputs break (right only for 2-D)",
        "batch-transpose",
        """import numpy as np


def attention_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])
""",
    ),
    _case(
        "01-008",
        "01.attention_scores",
        "takes d_head from the number of keys (K.shape[-2]), right only when k_len == d_head",
        "square-only",
        """import numpy as np


def attention_scores(Q, K):
    d_head = K.shape[-2]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_head)
""",
    ),
    _case(
        "01-009",
        "01.attention_scores",
        "forgets the 1/sqrt(d_head) scale",
        "missing-scale",
        """import numpy as np


def attention_scores(Q, K):
    return np.matmul(Q, np.swapaxes(K, -2, -1))
""",
    ),
    _case(
        "01-010",
        "01.attention_scores",
        "einsum with keys before queries: (..., k_len, q_len)",
        "transpose",
        """import numpy as np


def attention_scores(Q, K):
    return np.einsum("...qd,...kd->...kq", Q, K) / np.sqrt(Q.shape[-1])
""",
    ),
    _case(
        "01-011",
        "01.attention_scores",
        "hard-codes sqrt(64) from the paper",
        "hard-coded",
        """import numpy as np


def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / 8.0
""",
    ),
    _case(
        "01-012",
        "01.attention_scores",
        "scales in place with /= on Q, modifying the caller's array",
        "in-place",
        """import numpy as np


def attention_scores(Q, K):
    Q /= np.sqrt(Q.shape[-1])
    return Q @ np.swapaxes(K, -1, -2)
""",
    ),
    _case(
        "01-013",
        "01.attention_scores",
        "multiplies by sqrt(d_head) instead of dividing",
        "wrong-scale",
        """import numpy as np


def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(Q.shape[-1])
""",
    ),
    # softmax_along
    _case(
        "01-014",
        "01.softmax_along",
        "subtracts the global max of the whole array, not the max of each slice: "
        "slices far below the global max underflow to 0/0",
        "global-max",
        """import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    _case(
        "01-015",
        "01.softmax_along",
        "no max subtraction: overflows to nan for scores around 1000",
        "overflow",
        """import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
""",
    ),
    _case(
        "01-016",
        "01.softmax_along",
        "ignores the axis argument and always normalizes the last axis",
        "ignores-axis",
        """import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
    ),
    _case(
        "01-017",
        "01.softmax_along",
        "sums without keepdims: broadcasting divides along the wrong axis "
        "(right only for square inputs, crashes otherwise)",
        "keepdims",
        """import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)
""",
    ),
    _case(
        "01-018",
        "01.softmax_along",
        "subtracts the min instead of the max: overflows for wide-ranged slices",
        "min-not-max",
        """import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    _case(
        "01-019",
        "01.softmax_along",
        "subtracts the max in place, so the caller's scores change",
        "in-place",
        """import numpy as np


def softmax_along(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x
""",
    ),
    _case(
        "01-020",
        "01.softmax_along",
        "normalizes by the sum over the whole array instead of along the axis",
        "global-sum",
        """import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
""",
    ),
    _case(
        "01-021",
        "01.softmax_along",
        "clips scores to [-50, 50] 'to avoid overflow': large score gaps are squashed",
        "clip",
        """import numpy as np


def softmax_along(x, axis=-1):
    e = np.exp(np.clip(x, -50, 50))
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    _case(
        "01-022",
        "01.softmax_along",
        "uses the max of axis 0 whatever the axis (copied from a column softmax)",
        "wrong-axis",
        """import numpy as np


def softmax_along(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    _case(
        "01-023",
        "01.softmax_along",
        "log-softmax returned instead of softmax (takes the log at the end)",
        "log-softmax",
        """import numpy as np


def softmax_along(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
""",
    ),
    _case(
        "01-024",
        "01.softmax_along",
        "converts to float32 first: precision is lost and the dtype changes",
        "dtype",
        """import numpy as np


def softmax_along(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    # attend
    _case(
        "01-025",
        "01.attend",
        "softmax over the queries (axis=-2) instead of the keys",
        "wrong-axis",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores, axis=-2)
    return weights @ V, weights
""",
    ),
    _case(
        "01-026",
        "01.attend",
        "returns (weights, output) in the wrong order",
        "return-order",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights, weights @ V
""",
    ),
    _case(
        "01-027",
        "01.attend",
        "returns the scores (pre-softmax) as the weights",
        "scores-as-weights",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    return softmax_along(scores) @ V, scores
""",
    ),
    _case(
        "01-028",
        "01.attend",
        "scales by sqrt of V's width d_value instead of d_head",
        "wrong-scale",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1]))
    return weights @ V, weights
""",
    ),
    _case(
        "01-029",
        "01.attend",
        "multiplies V by the weights' transpose: V.T-style product, right only when q_len == k_len",
        "transpose",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return np.swapaxes(weights, -1, -2) @ V, weights
""",
    ),
    _case(
        "01-030",
        "01.attend",
        "naive softmax without the max: nan on large scores",
        "overflow",
        """import numpy as np


def attend(Q, K, V):
    e = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
""",
    ),
    _case(
        "01-031",
        "01.attend",
        "uses K.T, which breaks on batched inputs",
        "batch-transpose",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    weights = softmax_along(Q @ K.T / np.sqrt(Q.shape[-1]))
    return weights @ V, weights
""",
    ),
    _case(
        "01-032",
        "01.attend",
        "uses the keys as values (weights @ K)",
        "keys-as-values",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ K, weights
""",
    ),
    _case(
        "01-033",
        "01.attend",
        "applies the scale after the softmax (to the weights), not to the scores",
        "scale-after-softmax",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    return weights @ V, weights
""",
    ),
    _case(
        "01-034",
        "01.attend",
        "elementwise product and sum for the output instead of a matrix product: right only for one query",
        "elementwise",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    output = (weights[..., :, :, None] * V[..., None, :, :]).sum(axis=-3)
    return output, weights
""",
    ),
    # self_attention
    _case(
        "01-035",
        "01.self_attention",
        "uses W_q for the keys too (copy-paste)",
        "copy-paste",
        """import numpy as np
"""
        + _ATTEND
        + """

def self_attention(X, W_q, W_k, W_v):
    return attend(X @ W_q, X @ W_q, X @ W_v)
""",
    ),
    _case(
        "01-036",
        "01.self_attention",
        "projects with the transposed matrices (W.T @ X.T): right only for square W",
        "transpose",
        """import numpy as np
"""
        + _ATTEND
        + """

def self_attention(X, W_q, W_k, W_v):
    Q = np.swapaxes(W_q.T @ np.swapaxes(X, -1, -2), -1, -2)
    K = np.swapaxes(W_k.T @ np.swapaxes(X, -1, -2), -1, -2)
    V = X @ W_v.T
    return attend(Q, K, V)
""",
    ),
    _case(
        "01-037",
        "01.self_attention",
        "forgets to project the values: attends over X itself",
        "missing-projection",
        """import numpy as np
"""
        + _ATTEND
        + """

def self_attention(X, W_q, W_k, W_v):
    return attend(X @ W_q, X @ W_k, X)
""",
    ),
    _case(
        "01-038",
        "01.self_attention",
        "swaps queries and keys, giving the transposed weights",
        "swap-qk",
        """import numpy as np
"""
        + _ATTEND
        + """

def self_attention(X, W_q, W_k, W_v):
    return attend(X @ W_k, X @ W_q, X @ W_v)
""",
    ),
    _case(
        "01-039",
        "01.self_attention",
        "scales by sqrt(d_model) (X's width) instead of sqrt(d_head)",
        "wrong-scale",
        """import numpy as np
"""
        + _SOFTMAX
        + """

def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1]))
    return weights @ V, weights
""",
    ),
    _case(
        "01-040",
        "01.self_attention",
        "adds X back to the output (a residual the exercise does not ask for)",
        "extra-residual",
        """import numpy as np
"""
        + _ATTEND
        + """

def self_attention(X, W_q, W_k, W_v):
    out, w = attend(X @ W_q, X @ W_k, X @ W_v)
    return out + X[..., : out.shape[-1]], w
""",
    ),
    # is_permutation_equivariant
    _case(
        "01-041",
        "01.is_permutation_equivariant",
        "compares fn(X[perm]) with fn(X) itself, not with fn(X)[perm]",
        "no-reorder",
        """import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)))
""",
    ),
    _case(
        "01-042",
        "01.is_permutation_equivariant",
        "uses exact equality (==): floating-point rounding makes it False",
        "exact-float",
        """import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return bool((fn(X[perm]) == fn(X)[perm]).all())
""",
    ),
    _case(
        "01-043",
        "01.is_permutation_equivariant",
        "applies the inverse permutation on one side",
        "inverse-perm",
        """import numpy as np


def is_permutation_equivariant(fn, X, perm):
    inverse = np.argsort(perm)
    return bool(np.allclose(fn(X[perm]), fn(X)[inverse]))
""",
    ),
    _case(
        "01-044",
        "01.is_permutation_equivariant",
        "checks only the first output row: a function that breaks equivariance elsewhere passes",
        "partial-compare",
        """import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return bool(np.allclose(fn(X[perm])[0], fn(X)[perm][0]))
""",
    ),
    _case(
        "01-045",
        "01.is_permutation_equivariant",
        "compares sorted outputs: any function that keeps the multiset of values passes",
        "sorted-compare",
        """import numpy as np


def is_permutation_equivariant(fn, X, perm):
    a = np.sort(fn(X[perm]), axis=None)
    b = np.sort(fn(X), axis=None)
    return bool(np.allclose(a, b))
""",
    ),
    _case(
        "01-046",
        "01.is_permutation_equivariant",
        "returns the numpy bool array of allclose per row (not one bool)",
        "wrong-type",
        """import numpy as np


def is_permutation_equivariant(fn, X, perm):
    return np.isclose(fn(X[perm]), fn(X)[perm]).all(axis=-1)
""",
    ),
    # strongest_key
    _case(
        "01-047",
        "01.strongest_key",
        "argmax over axis 0 (the queries) instead of the keys",
        "wrong-axis",
        """import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return [key_labels[j] for j in np.argmax(weights, axis=0)]
""",
    ),
    _case(
        "01-048",
        "01.strongest_key",
        "looks the label up in query_labels instead of key_labels",
        "wrong-labels",
        """import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return [query_labels[j] for j in np.argmax(weights, axis=-1)]
""",
    ),
    _case(
        "01-049",
        "01.strongest_key",
        "returns the indices of the keys, not their labels",
        "indices-not-labels",
        """import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return [int(j) for j in np.asarray(weights).argmax(axis=1)]
""",
    ),
    _case(
        "01-050",
        "01.strongest_key",
        "argmin instead of argmax",
        "argmin",
        """import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return [key_labels[j] for j in np.argmin(weights, axis=-1)]
""",
    ),
    _case(
        "01-051",
        "01.strongest_key",
        "returns a dict query label -> key label; repeated query labels collapse",
        "wrong-type",
        """import numpy as np


def strongest_key(weights, query_labels, key_labels):
    return {q: key_labels[int(np.argmax(row))] for q, row in zip(query_labels, weights)}
""",
    ),
    _case(
        "01-052",
        "01.strongest_key",
        "skips the query's own key (assumes self-attention 'does not count')",
        "skip-self",
        """import numpy as np


def strongest_key(weights, query_labels, key_labels):
    w = np.array(weights, dtype=float)
    n = min(w.shape)
    w[np.arange(n), np.arange(n)] = -np.inf
    return [key_labels[j] for j in w.argmax(axis=-1)]
""",
    ),
    # score_scale
    _case(
        "01-053",
        "01.score_scale",
        "ignores the variance: returns sqrt(d_head)",
        "ignores-variance",
        """import math


def score_scale(d_head, variance):
    return math.sqrt(d_head)
""",
    ),
    _case(
        "01-054",
        "01.score_scale",
        "multiplies sqrt(d_head) by the standard deviation sqrt(variance) instead of by the variance: "
        "Var(q·k) = d_head * variance**2",
        "std-not-variance",
        """import math


def score_scale(d_head, variance):
    return math.sqrt(d_head) * math.sqrt(variance)
""",
    ),
    _case(
        "01-055",
        "01.score_scale",
        "returns the variance of q·k (d_head * variance**2), not its square root",
        "variance-not-std",
        """def score_scale(d_head, variance):
    return d_head * variance**2
""",
    ),
    _case(
        "01-056",
        "01.score_scale",
        "thinks Var(q·k) = d_head * variance (one factor of the variance)",
        "one-variance",
        """import math


def score_scale(d_head, variance):
    return math.sqrt(d_head * variance)
""",
    ),
    _case(
        "01-057",
        "01.score_scale",
        "returns the reciprocal (a multiplier) instead of the divisor",
        "reciprocal",
        """import math


def score_scale(d_head, variance):
    return 1.0 / (math.sqrt(d_head) * variance)
""",
    ),
    # shared_next_token_matrix
    _case(
        "01-058",
        "01.shared_next_token_matrix",
        "the identity: every token attends most to itself",
        "identity",
        """import numpy as np


def shared_next_token_matrix():
    return np.eye(4)
""",
    ),
    _case(
        "01-059",
        "01.shared_next_token_matrix",
        "a shift matrix (next token) as if W_q and W_k could differ: "
        "with W shared, the scores are X W W^T X^T and the shift cancels",
        "shift-matrix",
        """import numpy as np


def shared_next_token_matrix():
    return np.roll(np.eye(4), 1, axis=1)
""",
    ),
    _case(
        "01-060",
        "01.shared_next_token_matrix",
        "rows of equal length pointing in rotating directions: a token never beats its own dot product with itself",
        "equal-lengths",
        """import numpy as np


def shared_next_token_matrix():
    angles = np.array([0.0, 0.5, 1.0, 1.5])
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)
""",
    ),
    _case(
        "01-061",
        "01.shared_next_token_matrix",
        "one column only (d = 1) with growing lengths, the exercise asks d >= 2",
        "too-narrow",
        """import numpy as np


def shared_next_token_matrix():
    return np.array([[1.0], [2.0], [3.0], [4.0]])
""",
    ),
    _case(
        "01-062",
        "01.shared_next_token_matrix",
        "lengths decreasing instead of increasing: each token prefers the one before it",
        "reversed-order",
        """import numpy as np


def shared_next_token_matrix():
    return np.array([[4.0, 0.0], [3.0, 0.5], [2.0, 1.0], [1.0, 1.5]])
""",
    ),
    # predictions
    _pred(
        "01-p01",
        "01.naive_softmax_overflow",
        "believes exp(1000) saturates to a big number and softmax still works",
        "pred-overflow",
        "weights",
    ),
    _pred("01-p02", "01.naive_softmax_overflow", "thinks exp overflow gives inf as the result", "pred-overflow", "inf"),
    _pred("01-p03", "01.naive_softmax_mixed", "expects the large entry to win cleanly", "pred-overflow", "1, 0, 0"),
    _pred(
        "01-p04",
        "01.naive_softmax_mixed",
        "expects every entry to be nan once one overflows",
        "pred-overflow",
        "nan, nan, nan",
    ),
    _pred("01-p05", "01.attend_output_shape", "thinks the output has the keys' length", "pred-shape", (2, 6, 5)),
    _pred("01-p06", "01.attend_weights_shape", "puts keys before queries", "pred-shape", (2, 6, 4)),
    _pred(
        "01-p07",
        "01.lookup_key2_weight",
        "thinks pointing exactly at key 2 gives it all the weight",
        "pred-number",
        1.0,
    ),
    _pred("01-p08", "01.shared_weights_symmetric", "symmetric scores -> symmetric weights", "pred-symmetry", "yes"),
    _pred(
        "01-p09",
        "01.kv_shuffle_changes",
        "thinks the shuffled positions change",
        "pred-equivariance",
        "the shuffled positions",
    ),
    _pred("01-p10", "01.score_variance_d64", "thinks the sum of products keeps variance 1", "pred-variance", 1.0),
    _pred(
        "01-p11",
        "01.score_variance_d64",
        "takes the standard deviation sqrt(64) for the variance",
        "pred-variance",
        8.0,
    ),
    _pred(
        "01-p12", "01.score_variance_scaled", "divides the variance by sqrt(64) only once: 64 / 8", "pred-variance", 8.0
    ),
    _pred(
        "01-p13",
        "01.tutorial_head3_column",
        "believes the tutorial's comment: 'cat' on itself, column 1",
        "pred-tutorial",
        1,
    ),
    _pred(
        "01-p14",
        "01.temperature_for_unscaled",
        "thinks dropping the division multiplies T by sqrt(64)",
        "pred-temperature",
        8.0,
    ),
    _pred("01-p15", "01.temperature_for_unscaled", "thinks the temperature is 1/d_head", "pred-temperature", 1 / 64),
]
