"""Blind battery 3, lesson 01: wrong answers a student could write (see README.md). Never edited to pass."""

from textwrap import dedent

NP = "import numpy as np\n\n"

# correct versions of earlier cells, put in front of a later exercise that uses them
SCORES_OK = dedent("""
    def attention_scores(Q, K):
        return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
""")
SOFTMAX_OK = dedent("""
    def softmax_along(x, axis=-1):
        z = x - x.max(axis=axis, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=axis, keepdims=True)
""")
ATTEND_OK = (
    SCORES_OK
    + SOFTMAX_OK
    + dedent("""
    def attend(Q, K, V):
        w = softmax_along(attention_scores(Q, K), axis=-1)
        return w @ V, w
""")
)


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": NP + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- 01.by_hand_new_query: q = [2, -1]
    _c(
        "01-001",
        "01.by_hand_new_query",
        "forgot the 1/sqrt(2) scale: softmax of the raw dot products [4, -2, 1]",
        "missing-scale",
        """
    def by_hand_new_query():
        return [0.950, 0.002, 0.047], [9.740, 0.260]
    """,
    ),
    _c(
        "01-002",
        "01.by_hand_new_query",
        "divided by d_head = 2 instead of sqrt(2)",
        "wrong-scale",
        """
    def by_hand_new_query():
        return [0.786, 0.039, 0.175], [8.732, 1.268]
    """,
    ),
    _c(
        "01-003",
        "01.by_hand_new_query",
        "blended the keys instead of the values for the output",
        "keys-as-values",
        """
    def by_hand_new_query():
        return [0.882, 0.013, 0.106], [1.869, 0.131]
    """,
    ),
    _c(
        "01-004",
        "01.by_hand_new_query",
        "returns the two lists in the wrong order (outputs first)",
        "order",
        """
    def by_hand_new_query():
        return [9.345, 0.655], [0.882, 0.013, 0.106]
    """,
    ),
    _c(
        "01-005",
        "01.by_hand_new_query",
        "rounded exp(2.83) to e^3 and exp(0.71) to 2 on paper: weights off by more than the tolerance",
        "arithmetic",
        """
    def by_hand_new_query():
        return [0.893, 0.012, 0.089], [9.376, 0.624]
    """,
    ),
    _c(
        "01-006",
        "01.by_hand_new_query",
        "put the scores, not the weights, in the first list",
        "scores-not-weights",
        """
    def by_hand_new_query():
        return [2.828, -1.414, 0.707], [9.345, 0.655]
    """,
    ),
    # ---- 01.attention_scores
    _c(
        "01-007",
        "01.attention_scores",
        "uses K.T, which reverses every axis, batch axes included",
        "transpose-all",
        """
    def attention_scores(Q, K):
        return Q @ K.T / np.sqrt(Q.shape[-1])
    """,
    ),
    _c(
        "01-008",
        "01.attention_scores",
        "forgets to divide by sqrt(d_head)",
        "missing-scale",
        """
    def attention_scores(Q, K):
        return Q @ np.swapaxes(K, -1, -2)
    """,
    ),
    _c(
        "01-009",
        "01.attention_scores",
        "divides by d_head instead of sqrt(d_head)",
        "wrong-scale",
        """
    def attention_scores(Q, K):
        d_head = Q.shape[-1]
        return Q @ np.swapaxes(K, -1, -2) / d_head
    """,
    ),
    _c(
        "01-010",
        "01.attention_scores",
        "takes d_head from Q.shape[1], which is q_len for a 2-D input... and the query length in general",
        "wrong-dim",
        """
    def attention_scores(Q, K):
        return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[1])
    """,
    ),
    _c(
        "01-011",
        "01.attention_scores",
        "scale by sqrt of the number of keys (k_len) instead of d_head",
        "wrong-dim",
        """
    def attention_scores(Q, K):
        return np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(K.shape[-2])
    """,
    ),
    _c(
        "01-012",
        "01.attention_scores",
        "writes K @ Q^T: the result is (k_len, q_len), rows are keys",
        "transpose",
        """
    def attention_scores(Q, K):
        return K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1])
    """,
    ),
    _c(
        "01-013",
        "01.attention_scores",
        "uses np.dot, which does not batch over leading axes like @ does",
        "np-dot-batch",
        """
    def attention_scores(Q, K):
        return np.dot(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    """,
    ),
    _c(
        "01-014",
        "01.attention_scores",
        "einsum that sums over the batch axis too ('...qd,...kd->qk')",
        "einsum",
        """
    def attention_scores(Q, K):
        return np.einsum("...qd,...kd->qk", Q, K) / np.sqrt(Q.shape[-1])
    """,
    ),
    _c(
        "01-015",
        "01.attention_scores",
        "scales the queries in place (Q /= sqrt(d)) and so changes the caller's array",
        "in-place",
        """
    def attention_scores(Q, K):
        Q /= np.sqrt(Q.shape[-1])
        return Q @ np.swapaxes(K, -1, -2)
    """,
    ),
    _c(
        "01-016",
        "01.attention_scores",
        "multiplies by sqrt(d_head) instead of dividing",
        "wrong-scale",
        """
    def attention_scores(Q, K):
        return Q @ np.swapaxes(K, -1, -2) * np.sqrt(Q.shape[-1])
    """,
    ),
    _c(
        "01-017",
        "01.attention_scores",
        "scales both Q and K by 1/sqrt(d_head): the product is divided by d_head",
        "double-scale",
        """
    def attention_scores(Q, K):
        s = np.sqrt(Q.shape[-1])
        return (Q / s) @ np.swapaxes(K / s, -1, -2)
    """,
    ),
    _c(
        "01-018",
        "01.attention_scores",
        "hard-codes d_head = 2 from the worked example",
        "hard-coded",
        """
    def attention_scores(Q, K):
        return Q @ np.swapaxes(K, -1, -2) / np.sqrt(2)
    """,
    ),
    _c(
        "01-019",
        "01.attention_scores",
        "uses np.transpose(K) (all axes reversed) written as a function call",
        "transpose-all",
        """
    def attention_scores(Q, K):
        d = Q.shape[-1]
        return np.matmul(Q, np.transpose(K)) / d ** 0.5
    """,
    ),
    # ---- 01.softmax_along
    _c(
        "01-020",
        "01.softmax_along",
        "no max subtraction: overflows for scores near 1000",
        "overflow",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-021",
        "01.softmax_along",
        "subtracts the global max of the whole array: a row near -1000 underflows to 0/0 when another row is near 1000",
        "global-max",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x - np.max(x))
        return e / e.sum(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-022",
        "01.softmax_along",
        "ignores the axis argument and always normalises the last axis",
        "ignores-axis",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    """,
    ),
    _c(
        "01-023",
        "01.softmax_along",
        "sums without keepdims: broadcasting divides row i by column sums (only right for 1-D input)",
        "keepdims",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis)
    """,
    ),
    _c(
        "01-024",
        "01.softmax_along",
        "takes the max without keepdims, so the subtraction broadcasts along the wrong axis for 2-D input",
        "keepdims",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x - x.max(axis=axis))
        return e / e.sum(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-025",
        "01.softmax_along",
        "subtracts the mean instead of the max: still overflows when one entry is far above the others",
        "mean-not-max",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x - x.mean(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-026",
        "01.softmax_along",
        "subtracts the min instead of the max",
        "min-not-max",
        """
    def softmax_along(x, axis=-1):
        z = x - np.min(x, axis=axis, keepdims=True)
        return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-027",
        "01.softmax_along",
        "modifies x in place (x -= max), so the caller's scores change",
        "in-place",
        """
    def softmax_along(x, axis=-1):
        x -= x.max(axis=axis, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis=axis, keepdims=True)
        return x
    """,
    ),
    _c(
        "01-028",
        "01.softmax_along",
        "normalises by the max of exp instead of the sum (weights do not sum to 1)",
        "wrong-normaliser",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.max(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-029",
        "01.softmax_along",
        "divides by the plain sum of the scores (no exp), not a softmax",
        "no-exp",
        """
    def softmax_along(x, axis=-1):
        z = x - x.min(axis=axis, keepdims=True) + 1e-9
        return z / z.sum(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-030",
        "01.softmax_along",
        "returns float32 (casts to save memory): loses the 1e-6 agreement on large scores",
        "dtype",
        """
    def softmax_along(x, axis=-1):
        x = np.asarray(x, dtype=np.float32)
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    """,
    ),
    _c(
        "01-031",
        "01.softmax_along",
        "uses the log-sum-exp trick but forgets to add the max back inside the log",
        "logsumexp",
        """
    def softmax_along(x, axis=-1):
        m = x.max(axis=axis, keepdims=True)
        lse = np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
        return np.exp(x - lse)
    """,
    ),
    _c(
        "01-032",
        "01.softmax_along",
        "moves the axis to the end with np.moveaxis but never moves it back",
        "moveaxis",
        """
    def softmax_along(x, axis=-1):
        x = np.moveaxis(x, axis, -1)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    """,
    ),
    _c(
        "01-033",
        "01.softmax_along",
        "loops over the rows of a 2-D array: wrong for axis=0 and for 3-D input",
        "loop-2d-only",
        """
    def softmax_along(x, axis=-1):
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            e = np.exp(x - x.max())
            return e / e.sum()
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            e = np.exp(x[i] - x[i].max())
            out[i] = e / e.sum()
        return out
    """,
    ),
    _c(
        "01-034",
        "01.softmax_along",
        "returns a Python list (tolist) to print it nicely",
        "return-type",
        """
    def softmax_along(x, axis=-1):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return (e / e.sum(axis=axis, keepdims=True)).tolist()
    """,
    ),
    # ---- 01.attend
    _c(
        "01-035",
        "01.attend",
        "softmax over the queries (axis -2) instead of the keys",
        "wrong-axis",
        """
    def attend(Q, K, V):
        w = softmax_along(attention_scores(Q, K), axis=-2)
        return w @ V, w
    """,
        pre=SCORES_OK + SOFTMAX_OK,
    ),
    _c(
        "01-036",
        "01.attend",
        "returns (weights, output) in the wrong order",
        "order",
        """
    def attend(Q, K, V):
        w = softmax_along(attention_scores(Q, K))
        return w, w @ V
    """,
        pre=SCORES_OK + SOFTMAX_OK,
    ),
    _c(
        "01-037",
        "01.attend",
        "forgets the scale in the scores it computes itself",
        "missing-scale",
        """
    def attend(Q, K, V):
        scores = Q @ np.swapaxes(K, -1, -2)
        w = softmax_along(scores, axis=-1)
        return w @ V, w
    """,
        pre=SOFTMAX_OK,
    ),
    _c(
        "01-038",
        "01.attend",
        "multiplies V by the weights' transpose (V^T-style blend): only runs when q_len == "
        "k_len and then mixes the wrong rows",
        "transpose",
        """
    def attend(Q, K, V):
        w = softmax_along(attention_scores(Q, K))
        return np.swapaxes(w, -1, -2) @ V, w
    """,
        pre=SCORES_OK + SOFTMAX_OK,
    ),
    _c(
        "01-039",
        "01.attend",
        "returns the scores instead of the weights as the second item",
        "scores-not-weights",
        """
    def attend(Q, K, V):
        scores = attention_scores(Q, K)
        return softmax_along(scores) @ V, scores
    """,
        pre=SCORES_OK + SOFTMAX_OK,
    ),
    _c(
        "01-040",
        "01.attend",
        "uses K in place of V for the output",
        "keys-as-values",
        """
    def attend(Q, K, V):
        w = softmax_along(attention_scores(Q, K))
        return w @ K, w
    """,
        pre=SCORES_OK + SOFTMAX_OK,
    ),
    _c(
        "01-041",
        "01.attend",
        "uses K.T for the scores (only right for 2-D input)",
        "transpose-all",
        """
    def attend(Q, K, V):
        w = softmax_along(Q @ K.T / np.sqrt(K.shape[-1]))
        return w @ V, w
    """,
        pre=SOFTMAX_OK,
    ),
    _c(
        "01-042",
        "01.attend",
        "applies the scale after the softmax (to the weights)",
        "scale-after-softmax",
        """
    def attend(Q, K, V):
        w = softmax_along(Q @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
        return w @ V, w
    """,
        pre=SOFTMAX_OK,
    ),
    _c(
        "01-043",
        "01.attend",
        "naive softmax without the max shift: NaN on scores in the thousands",
        "overflow",
        """
    def attend(Q, K, V):
        e = np.exp(attention_scores(Q, K))
        w = e / e.sum(-1, keepdims=True)
        return w @ V, w
    """,
        pre=SCORES_OK,
    ),
    _c(
        "01-044",
        "01.attend",
        "elementwise product with V (w * V) instead of a matrix product: runs only when shapes happen to broadcast",
        "elementwise",
        """
    def attend(Q, K, V):
        w = softmax_along(attention_scores(Q, K))
        return (w[..., None] * V[..., None, :, :]).mean(axis=-2), w
    """,
        pre=SCORES_OK + SOFTMAX_OK,
    ),
    # ---- 01.self_attention
    _c(
        "01-045",
        "01.self_attention",
        "uses W_q for the keys too (copy-paste)",
        "copy-paste",
        """
    def self_attention(X, W_q, W_k, W_v):
        return attend(X @ W_q, X @ W_q, X @ W_v)
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "01-046",
        "01.self_attention",
        "projects with the transposed matrices (W @ X-style), right only for square W",
        "transpose",
        """
    def self_attention(X, W_q, W_k, W_v):
        return attend(X @ W_q.T, X @ W_k.T, X @ W_v.T)
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "01-047",
        "01.self_attention",
        "swaps keys and values: attend(Q, V, K)",
        "swap-kv",
        """
    def self_attention(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        return attend(Q, V, K)
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "01-048",
        "01.self_attention",
        "blends the raw tokens X instead of the projected values",
        "no-value-proj",
        """
    def self_attention(X, W_q, W_k, W_v):
        return attend(X @ W_q, X @ W_k, X)
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "01-049",
        "01.self_attention",
        "returns only the output, not (output, weights)",
        "return-arity",
        """
    def self_attention(X, W_q, W_k, W_v):
        out, _ = attend(X @ W_q, X @ W_k, X @ W_v)
        return out
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "01-050",
        "01.self_attention",
        "scales by sqrt(d_model) (X's width) instead of sqrt(d_head)",
        "d-model-scale",
        """
    def self_attention(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
        w = softmax_along(scores)
        return w @ V, w
    """,
        pre=SOFTMAX_OK,
    ),
    _c(
        "01-051",
        "01.self_attention",
        "applies W_v after attention to the blended tokens, but also projects the values first (W_v applied twice)",
        "double-proj",
        """
    def self_attention(X, W_q, W_k, W_v):
        out, w = attend(X @ W_q, X @ W_k, X @ W_v)
        return out @ W_v if W_v.shape[0] == W_v.shape[1] else out, w
    """,
        pre=ATTEND_OK,
    ),
    # ---- 01.is_permutation_equivariant
    _c(
        "01-052",
        "01.is_permutation_equivariant",
        "compares fn(X[perm]) with fn(X) itself, not reordered",
        "no-reorder",
        """
    def is_permutation_equivariant(fn, X, perm):
        return np.allclose(fn(X[perm]), fn(X))
    """,
    ),
    _c(
        "01-053",
        "01.is_permutation_equivariant",
        "applies the inverse permutation to the output (argsort) instead of perm itself",
        "inverse-perm",
        """
    def is_permutation_equivariant(fn, X, perm):
        return np.allclose(fn(X[perm]), fn(X)[np.argsort(perm)])
    """,
    ),
    _c(
        "01-054",
        "01.is_permutation_equivariant",
        "exact equality (==) instead of a tolerance: rounding makes equivariant functions fail",
        "exact-equality",
        """
    def is_permutation_equivariant(fn, X, perm):
        return bool((fn(X[perm]) == fn(X)[perm]).all())
    """,
    ),
    _c(
        "01-055",
        "01.is_permutation_equivariant",
        "compares the outputs as sorted sets of values (np.sort down each column): a function that moves rows "
        "to the wrong places, such as reversing them, passes",
        "set-compare",
        """
    def is_permutation_equivariant(fn, X, perm):
        return np.allclose(np.sort(fn(X[perm]), axis=0), np.sort(fn(X), axis=0))
    """,
    ),
    _c(
        "01-057",
        "01.is_permutation_equivariant",
        "returns a NumPy bool array of per-entry results instead of one True/False",
        "return-type",
        """
    def is_permutation_equivariant(fn, X, perm):
        return np.isclose(fn(X[perm]), fn(X)[perm])
    """,
    ),
    _c(
        "01-058",
        "01.is_permutation_equivariant",
        "shuffles X in place with X[:] = X[perm], so the reference output is computed on the shuffled tokens too",
        "in-place",
        """
    def is_permutation_equivariant(fn, X, perm):
        X[:] = X[perm]
        return np.allclose(fn(X), fn(X)[perm])
    """,
    ),
    # ---- 01.strongest_key
    _c(
        "01-059",
        "01.strongest_key",
        "argmax over the queries (axis 0) instead of over the keys",
        "wrong-axis",
        """
    def strongest_key(weights, query_labels, key_labels):
        return [key_labels[j] for j in np.argmax(weights, axis=0)][: len(query_labels)]
    """,
    ),
    _c(
        "01-060",
        "01.strongest_key",
        "returns the indices, not the labels",
        "return-type",
        """
    def strongest_key(weights, query_labels, key_labels):
        return list(np.argmax(weights, axis=-1))
    """,
    ),
    _c(
        "01-061",
        "01.strongest_key",
        "looks up the label in query_labels instead of key_labels",
        "wrong-labels",
        """
    def strongest_key(weights, query_labels, key_labels):
        return [query_labels[j] for j in weights.argmax(axis=1)]
    """,
    ),
    _c(
        "01-062",
        "01.strongest_key",
        "argmin instead of argmax",
        "argmin",
        """
    def strongest_key(weights, query_labels, key_labels):
        return [key_labels[j] for j in weights.argmin(axis=1)]
    """,
    ),
    _c(
        "01-063",
        "01.strongest_key",
        "takes the last maximum on ties (reversed argmax) instead of NumPy's first",
        "ties",
        """
    def strongest_key(weights, query_labels, key_labels):
        k = weights.shape[1]
        return [key_labels[k - 1 - int(np.argmax(row[::-1]))] for row in weights]
    """,
    ),
    _c(
        "01-064",
        "01.strongest_key",
        "returns a dict query -> key: duplicated query labels collapse",
        "return-type",
        """
    def strongest_key(weights, query_labels, key_labels):
        return {q: key_labels[int(np.argmax(w))] for q, w in zip(query_labels, weights)}
    """,
    ),
    # ---- 01.score_scale
    _c(
        "01-065",
        "01.score_scale",
        "sqrt(d_head) only: ignores the variance",
        "ignores-variance",
        """
    def score_scale(d_head, variance):
        return np.sqrt(d_head)
    """,
    ),
    _c(
        "01-066",
        "01.score_scale",
        "sqrt(d_head * variance): one product q_i k_i has variance variance², not variance",
        "variance-once",
        """
    def score_scale(d_head, variance):
        return np.sqrt(d_head * variance)
    """,
    ),
    _c(
        "01-067",
        "01.score_scale",
        "forgets the square root: divides by the variance d_head·variance²",
        "missing-sqrt",
        """
    def score_scale(d_head, variance):
        return d_head * variance ** 2
    """,
    ),
    _c(
        "01-068",
        "01.score_scale",
        "d_head * sqrt(variance): the square root on the wrong factor",
        "wrong-formula",
        """
    import math

    def score_scale(d_head, variance):
        return d_head * math.sqrt(variance)
    """,
    ),
    _c(
        "01-069",
        "01.score_scale",
        "divides the variance out: sqrt(d_head / variance)",
        "inverted",
        """
    def score_scale(d_head, variance):
        return (d_head / variance) ** 0.5
    """,
    ),
    # ---- 01.shared_next_token_matrix
    _c(
        "01-070",
        "01.shared_next_token_matrix",
        "returns the shift matrix that works for separate W_q, W_k: shared, every token still prefers itself",
        "separate-idea",
        """
    def shared_next_token_matrix():
        return 6.0 * np.eye(4, k=1)
    """,
    ),
    _c(
        "01-071",
        "01.shared_next_token_matrix",
        "rows of equal length pointing along a circle: each token still prefers itself (Cauchy–Schwarz)",
        "equal-lengths",
        """
    def shared_next_token_matrix():
        angles = np.arange(4) * np.pi / 4
        return np.stack([np.cos(angles), np.sin(angles)], axis=1)
    """,
    ),
    _c(
        "01-072",
        "01.shared_next_token_matrix",
        "growing lengths but all rows in the same direction: every token prefers the last (longest) one, not the next",
        "same-direction",
        """
    def shared_next_token_matrix():
        return np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]])
    """,
    ),
    _c(
        "01-073",
        "01.shared_next_token_matrix",
        "identity matrix: every token attends most to itself",
        "identity",
        """
    def shared_next_token_matrix():
        return np.eye(4)
    """,
    ),
    _c(
        "01-074",
        "01.shared_next_token_matrix",
        "returns a (4,) vector (d = 1), against the required d >= 2",
        "shape",
        """
    def shared_next_token_matrix():
        return np.array([1.0, 2.0, 4.0, 8.0])
    """,
    ),
    # ---- predictions
    _p("01-p01", "01.naive_softmax_overflow", "thinks exp only overflows in float32", "overflow", "weights"),
    _p("01-p02", "01.naive_softmax_overflow", "thinks inf/inf gives inf", "overflow", "inf"),
    _p("01-p03", "01.naive_softmax_mixed", "thinks the winner's inf/inf still gives 1", "overflow", "1, 0, 0"),
    _p("01-p04", "01.naive_softmax_mixed", "thinks one overflow poisons the whole row", "overflow", "nan, nan, nan"),
    _p("01-p05", "01.attend_output_shape", "output as wide as d_head, not d_value", "shape", (2, 4, 8)),
    _p("01-p06", "01.attend_weights_shape", "weights (k_len, q_len)", "transpose", (2, 6, 4)),
    _p("01-p07", "01.attend_output_shape", "one output per key", "shape", (2, 6, 5)),
    _p("01-p08", "01.lookup_key2_weight", "a scaled-up query becomes a hard look-up of its key", "lookup", 1.0),
    _p("01-p09", "01.shared_weights_symmetric", "symmetric scores give symmetric weights", "symmetry", "yes"),
    _p(
        "01-p10",
        "01.kv_shuffle_changes",
        "shuffling keys moves the outputs at the shuffled positions",
        "equivariance",
        "the shuffled positions",
    ),
    _p("01-p11", "01.score_variance_d64", "variance grows like sqrt(d_head)", "variance", 8),
    _p(
        "01-p12",
        "01.score_variance_scaled",
        "dividing by sqrt(d_head) divides the variance by sqrt(d_head) only",
        "variance",
        8,
    ),
    _p("01-p13", "01.tutorial_head3_column", "trusts the tutorial's 'self-attention' label", "heatmap-reading", 1),
    _p("01-p14", "01.temperature_for_unscaled", "temperature equals the factor itself", "temperature", 8),
    _p("01-p15", "01.temperature_for_unscaled", "confuses sqrt(d_head) with d_head", "temperature", 1 / 64),
]
