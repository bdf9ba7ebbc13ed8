"""Battery 2, lesson 01: wrong answers to the NumPy attention exercises and predictions."""

H = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n\n"

SOFTMAX = '''def softmax_along(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


'''


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- by_hand_new_query -------------------------------------------------------------------------------------
    _c("01-001", "01.by_hand_new_query", "forgot to divide the dot products [4, -2, 1] by sqrt(2) before the softmax",
       "missing-scale",
       '''def by_hand_new_query():
    return [0.950, 0.002, 0.047], [9.740, 0.260]
'''),
    _c("01-002", "01.by_hand_new_query", "divided the dot products by d_head = 2 instead of sqrt(2)", "wrong-scale",
       '''def by_hand_new_query():
    return [0.786, 0.039, 0.175], [8.732, 1.268]
'''),
    _c("01-003", "01.by_hand_new_query", "right weights, but multiplied the weights by V's columns in the wrong order "
       "(wrote the output coordinates swapped)", "transpose",
       '''def by_hand_new_query():
    return [0.882, 0.013, 0.106], [0.655, 9.345]
'''),
    _c("01-004", "01.by_hand_new_query", "normalized the scaled scores by their sum instead of a softmax (no exp)",
       "no-exp",
       '''def by_hand_new_query():
    s = [2.828, -1.414, 0.707]
    t = sum(s)
    w = [x / t for x in s]
    return [round(x, 3) for x in w], [round(10 * w[0] + 5 * w[2], 3), round(10 * w[1] + 5 * w[2], 3)]
'''),
    # ---- attention_scores ----------------------------------------------------------------------------------------
    _c("01-010", "01.attention_scores", "no 1/sqrt(d_head) scaling at all", "missing-scale",
       '''def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2)
'''),
    _c("01-011", "01.attention_scores", "divides by d_head instead of sqrt(d_head)", "wrong-scale",
       '''def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
'''),
    _c("01-012", "01.attention_scores", "scales by sqrt(Q.shape[1]): d_head for 2-D inputs, but q_len once a batch "
       "axis is in front", "wrong-scale",
       '''def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[1])
'''),
    _c("01-013", "01.attention_scores", "uses K.T, which reverses ALL axes of a batched K (right for 2-D inputs only; "
       "batched inputs crash or mix the batch)", "transpose",
       '''def attention_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])
'''),
    _c("01-014", "01.attention_scores", "scales by sqrt of the number of keys (K.shape[-2]) instead of d_head", "wrong-scale",
       '''def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
'''),
    _c("01-015", "01.attention_scores", "einsum with output indices swapped: (..., k_len, q_len)", "transpose",
       '''def attention_scores(Q, K):
    return np.einsum("...qd,...kd->...kq", Q, K) / np.sqrt(Q.shape[-1])
'''),
    _c("01-016", "01.attention_scores", "scales Q in place (Q /= ...): right scores, but the caller's Q is changed",
       "in-place",
       '''def attention_scores(Q, K):
    Q /= np.sqrt(Q.shape[-1])
    return Q @ np.swapaxes(K, -1, -2)
'''),
    _c("01-017", "01.attention_scores", "multiplies by sqrt(d_head) instead of dividing", "wrong-scale",
       '''def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(Q.shape[-1])
'''),
    _c("01-018", "01.attention_scores", "casts to float32 to be 'like PyTorch': float32 result for float64 inputs",
       "dtype",
       '''def attention_scores(Q, K):
    Q = Q.astype(np.float32)
    K = K.astype(np.float32)
    return Q @ np.swapaxes(K, -1, -2) / np.float32(np.sqrt(Q.shape[-1]))
'''),
    _c("01-019", "01.attention_scores", "transposes with K.transpose(0, 2, 1): only works for exactly one batch axis",
       "transpose",
       '''def attention_scores(Q, K):
    return Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
'''),
    # ---- softmax_along -------------------------------------------------------------------------------------------
    _c("01-020", "01.softmax_along", "naive exp(x) / sum(exp(x)) without subtracting the max: overflows to nan",
       "overflow",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-021", "01.softmax_along", "subtracts the GLOBAL max of x, not each slice's max: a slice far below the "
       "largest one underflows to 0/0 = nan", "global-max",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-022", "01.softmax_along", "ignores the axis argument and always normalizes the last axis", "ignores-axis",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
    _c("01-023", "01.softmax_along", "sum without keepdims: broadcasts the row sums along the wrong axis (wrong "
       "values on square inputs, crash on others)", "keepdims",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis)
'''),
    _c("01-024", "01.softmax_along", "max without keepdims: subtracts the slice maxima along the wrong axis (on a "
       "square input it runs, and overflow comes back for large slices)", "keepdims",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-025", "01.softmax_along", "subtracts the max in place (x -= ...): right weights, but the caller's array is "
       "modified", "in-place",
       '''def softmax_along(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x
'''),
    _c("01-026", "01.softmax_along", "returns torch's F.softmax: a torch.Tensor, not a NumPy array", "wrong-type",
       '''def softmax_along(x, axis=-1):
    return F.softmax(torch.as_tensor(x), dim=axis)
'''),
    _c("01-027", "01.softmax_along", "returns the LOG-softmax (x - max - log sum exp): negative numbers that do not "
       "sum to 1", "log-softmax",
       '''def softmax_along(x, axis=-1):
    z = x - np.max(x, axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
'''),
    _c("01-028", "01.softmax_along", "shifts the numerator by the max but divides by the sum of the UNshifted "
       "exponentials: overflow in the denominator", "overflow",
       '''def softmax_along(x, axis=-1):
    return np.exp(x - np.max(x, axis=axis, keepdims=True)) / np.exp(x).sum(axis=axis, keepdims=True)
'''),
    _c("01-029", "01.softmax_along", "clips the scores to [-500, 500] to avoid overflow: large scores that differ "
       "become equal, so the weights are wrong", "clipping",
       '''def softmax_along(x, axis=-1):
    x = np.clip(x, -500, 500)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-030", "01.softmax_along", "subtracts the slice MINIMUM instead of the maximum", "min-not-max",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x - np.min(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-031", "01.softmax_along", "casts to float32 for speed: float32 weights for float64 inputs", "dtype",
       '''def softmax_along(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-032", "01.softmax_along", "divides by the max instead of subtracting it (exp(x / max)): not the softmax",
       "wrong-shift",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x / np.max(np.abs(x), axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-033", "01.softmax_along", "hard-codes axis=0 in the max (copied from a column-wise example) and axis in "
       "the sum: overflow returns when the slices differ in scale", "wrong-axis",
       '''def softmax_along(x, axis=-1):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    _c("01-034", "01.softmax_along", "uses Python's math on a list (loop over the last axis) and returns a list; "
       "ignores axis", "wrong-type",
       '''import math


def softmax_along(x, axis=-1):
    x = np.asarray(x)
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for row in rows:
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        out.append([v / s for v in e])
    return out
'''),
    # ---- attend --------------------------------------------------------------------------------------------------
    _c("01-040", "01.attend", "softmax over the queries (axis -2) instead of the keys", "wrong-axis",
       SOFTMAX + '''def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_along(scores, axis=-2)
    return weights @ V, weights
'''),
    _c("01-041", "01.attend", "no 1/sqrt(d_head) scaling", "missing-scale",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2), axis=-1)
    return weights @ V, weights
'''),
    _c("01-042", "01.attend", "returns (weights, output) in the wrong order", "return-order",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1)
    return weights, weights @ V
'''),
    _c("01-043", "01.attend", "scales by sqrt(d_value) = sqrt(V.shape[-1]): right only when d_value == d_head",
       "wrong-scale",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1]), axis=-1)
    return weights @ V, weights
'''),
    _c("01-044", "01.attend", "returns the scaled scores (before the softmax) as the weights", "scores-as-weights",
       SOFTMAX + '''def attend(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    return softmax_along(scores) @ V, scores
'''),
    _c("01-045", "01.attend", "multiplies the weights by K instead of V (right only in self-attention with V = K)",
       "wrong-operand",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ K, weights
'''),
    _c("01-046", "01.attend", "naive softmax without max subtraction: nan for large scores", "overflow",
       '''def attend(Q, K, V):
    e = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''),
    _c("01-047", "01.attend", "transposes the weights before multiplying by V (weights^T @ V): only runs when "
       "q_len == k_len, and mixes the queries", "transpose",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return np.swapaxes(weights, -1, -2) @ V, weights
'''),
    _c("01-048", "01.attend", "scales by sqrt(k_len) instead of sqrt(d_head)", "wrong-scale",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2]))
    return weights @ V, weights
'''),
    _c("01-049", "01.attend", "softmax with the global max of the scores (not per row): one batch element with "
       "large scores makes the other rows 0/0", "global-max",
       '''def attend(Q, K, V):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(s - s.max())
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''),
    _c("01-050", "01.attend", "runs it through torch (F.softmax) and returns torch tensors instead of arrays",
       "wrong-type",
       '''def attend(Q, K, V):
    Q, K, V = (torch.as_tensor(t) for t in (Q, K, V))
    weights = F.softmax(Q @ K.transpose(-1, -2) / Q.shape[-1] ** 0.5, dim=-1)
    return weights @ V, weights
'''),
    _c("01-051", "01.attend", "multiplies by sqrt(d_head) instead of dividing", "wrong-scale",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) * np.sqrt(Q.shape[-1]))
    return weights @ V, weights
'''),
    _c("01-052", "01.attend", "uses K.T: right for 2-D inputs, wrong/crash for batched ones", "transpose",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ K.T / np.sqrt(Q.shape[-1]))
    return weights @ V, weights
'''),
    _c("01-053", "01.attend", "scales Q in place before the product: right output, but the caller's Q is divided "
       "by sqrt(d_head)", "in-place",
       SOFTMAX + '''def attend(Q, K, V):
    Q /= np.sqrt(Q.shape[-1])
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2))
    return weights @ V, weights
'''),
    _c("01-054", "01.attend", "returns only the output, not (output, weights)", "return-arity",
       SOFTMAX + '''def attend(Q, K, V):
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ V
'''),
    # ---- self_attention ------------------------------------------------------------------------------------------
    _c("01-060", "01.self_attention", "projects the keys with W_q (copy-paste): K = X @ W_q", "copy-paste",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_q, X @ W_v
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ V, weights
'''),
    _c("01-061", "01.self_attention", "uses X itself as the values (forgets W_v)", "missing-projection",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K = X @ W_q, X @ W_k
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ X, weights
'''),
    _c("01-062", "01.self_attention", "scales by sqrt(d_model) (X's width) instead of sqrt(d_head)", "wrong-scale",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1]))
    return weights @ V, weights
'''),
    _c("01-063", "01.self_attention", "multiplies by the transposed matrices (X @ W.T, PyTorch's Linear habit): runs "
       "only when d_model == d_head, and then computes with the wrong matrix", "transpose",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ V, weights
'''),
    _c("01-064", "01.self_attention", "softmax along axis 0 (thinking of a 2-D score matrix 'down the columns')",
       "wrong-axis",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=0)
    return weights @ V, weights
'''),
    _c("01-065", "01.self_attention", "scores K Q^T instead of Q K^T (weights transposed: keys as rows)", "transpose",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax_along(K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ V, weights
'''),
    _c("01-066", "01.self_attention", "scales by sqrt(d_value) (W_v's width) instead of d_head", "wrong-scale",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(W_v.shape[-1]))
    return weights @ V, weights
'''),
    _c("01-067", "01.self_attention", "returns only the output", "return-arity",
       SOFTMAX + '''def self_attention(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax_along(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ V
'''),
    # ---- is_permutation_equivariant -------------------------------------------------------------------------------
    _c("01-070", "01.is_permutation_equivariant", "compares fn(X[perm]) with fn(X), unpermuted: tests invariance, "
       "not equivariance", "invariance-not-equivariance",
       '''def is_permutation_equivariant(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)))
'''),
    _c("01-071", "01.is_permutation_equivariant", "exact equality (np.array_equal): rounding differences make an "
       "equivariant fn fail", "exact-compare",
       '''def is_permutation_equivariant(fn, X, perm):
    return bool(np.array_equal(fn(X[perm]), fn(X)[perm]))
'''),
    _c("01-072", "01.is_permutation_equivariant", "applies the inverse permutation to the output (argsort(perm)): "
       "right for swaps and other self-inverse perms only", "inverse-perm",
       '''def is_permutation_equivariant(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[np.argsort(perm)]))
'''),
    _c("01-073", "01.is_permutation_equivariant", "permutes the columns (features) instead of the rows", "wrong-axis",
       '''def is_permutation_equivariant(fn, X, perm):
    try:
        return bool(np.allclose(fn(X[:, perm]), fn(X)[:, perm]))
    except Exception:
        return False
'''),
    _c("01-074", "01.is_permutation_equivariant", "tolerance far too loose (atol=0.1): a function that reads the "
       "order only slightly passes", "loose-tolerance",
       '''def is_permutation_equivariant(fn, X, perm):
    return bool(np.allclose(fn(X[perm]), fn(X)[perm], atol=0.1))
'''),
    _c("01-075", "01.is_permutation_equivariant", "only compares the shapes of the two outputs", "shape-only",
       '''def is_permutation_equivariant(fn, X, perm):
    return fn(X[perm]).shape == fn(X)[perm].shape
'''),
    _c("01-076", "01.is_permutation_equivariant", "compares the sorted outputs (row sets), which ignores which row "
       "goes where", "set-compare",
       '''def is_permutation_equivariant(fn, X, perm):
    a = np.sort(fn(X[perm]), axis=0)
    b = np.sort(fn(X), axis=0)
    return bool(np.allclose(a, b))
'''),
    # ---- strongest_key -------------------------------------------------------------------------------------------
    _c("01-080", "01.strongest_key", "argmax over axis 0 (reads columns as queries), one label per key",
       "wrong-axis",
       '''def strongest_key(weights, query_labels, key_labels):
    return [key_labels[j] for j in np.argmax(weights, axis=0)]
'''),
    _c("01-081", "01.strongest_key", "returns the key indices, not their labels", "index-not-label",
       '''def strongest_key(weights, query_labels, key_labels):
    return [int(j) for j in np.argmax(weights, axis=1)]
'''),
    _c("01-082", "01.strongest_key", "returns a NumPy array of labels instead of a list", "wrong-type",
       '''def strongest_key(weights, query_labels, key_labels):
    return np.array(key_labels)[np.argmax(weights, axis=1)]
'''),
    _c("01-083", "01.strongest_key", "returns a dict {query label: key label}: duplicate query labels collapse",
       "wrong-type",
       '''def strongest_key(weights, query_labels, key_labels):
    return {q: key_labels[int(np.argmax(row))] for q, row in zip(query_labels, weights)}
'''),
    _c("01-084", "01.strongest_key", "argmin instead of argmax", "argmin",
       '''def strongest_key(weights, query_labels, key_labels):
    return [key_labels[j] for j in np.argmin(weights, axis=1)]
'''),
    _c("01-085", "01.strongest_key", "indexes query_labels with the argmax (labels of the wrong side; right only "
       "when query and key labels coincide, as in self-attention)", "wrong-labels",
       '''def strongest_key(weights, query_labels, key_labels):
    return [query_labels[j] for j in np.argmax(weights, axis=-1)]
'''),
    # ---- score_scale ---------------------------------------------------------------------------------------------
    _c("01-090", "01.score_scale", "returns sqrt(d_head), ignoring the variance", "ignores-variance",
       '''def score_scale(d_head, variance):
    return np.sqrt(d_head)
'''),
    _c("01-091", "01.score_scale", "sqrt(d_head * variance): treats Var(q_i k_i) as variance instead of variance^2",
       "variance-not-squared",
       '''def score_scale(d_head, variance):
    return (d_head * variance) ** 0.5
'''),
    _c("01-092", "01.score_scale", "returns the variance d_head * variance^2 instead of its square root", "var-not-std",
       '''def score_scale(d_head, variance):
    return d_head * variance ** 2
'''),
    _c("01-093", "01.score_scale", "sqrt(d_head) / variance: divides where it should multiply", "inverted",
       '''def score_scale(d_head, variance):
    return d_head ** 0.5 / variance
'''),
    _c("01-094", "01.score_scale", "sqrt(d_head) * variance^2", "wrong-power",
       '''def score_scale(d_head, variance):
    return d_head ** 0.5 * variance ** 2
'''),
    _c("01-095", "01.score_scale", "rounds the divisor to an int", "rounding",
       '''def score_scale(d_head, variance):
    return int(round(variance * d_head ** 0.5))
'''),
    # ---- shared_next_token_matrix --------------------------------------------------------------------------------
    _c("01-100", "01.shared_next_token_matrix", "the identity: each token then attends most to itself", "self",
       '''def shared_next_token_matrix():
    return np.eye(4)
'''),
    _c("01-101", "01.shared_next_token_matrix", "the shift matrix np.eye(4, k=1): X W W^T X^T is still diagonal, "
       "so each token attends to itself (token 3 uniformly)", "shift-matrix",
       '''def shared_next_token_matrix():
    return np.eye(4, k=1)
'''),
    _c("01-102", "01.shared_next_token_matrix", "rows of increasing length in one direction (arange): every token "
       "attends most to token 3, not to the next", "longest-wins",
       '''def shared_next_token_matrix():
    return np.arange(8, dtype=float).reshape(4, 2)
'''),
    _c("01-103", "01.shared_next_token_matrix", "arrows 60 degrees apart but lengths growing by 1.5 per step (needs "
       "more than 2): each token still attends to itself", "too-short",
       '''def shared_next_token_matrix():
    a = np.deg2rad(60) * np.arange(4)
    r = 1.5 ** np.arange(4)
    return np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
'''),
    _c("01-104", "01.shared_next_token_matrix", "a working construction returned transposed, shape (2, 4)",
       "transpose",
       '''def shared_next_token_matrix():
    a = np.deg2rad(60) * np.arange(4)
    r = 3.0 ** np.arange(4)
    return np.stack([r * np.cos(a), r * np.sin(a)], axis=0)
'''),
    _c("01-105", "01.shared_next_token_matrix", "a single column (d = 1) with growing entries: violates d >= 2 and "
       "every token attends to token 3", "too-narrow",
       '''def shared_next_token_matrix():
    return np.array([[1.0], [2.0], [3.0], [4.0]])
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("01-p01", "01.naive_softmax_overflow", "thinks exp(1000) is just a big number and the ratio still works",
       "overflow", "weights"),
    _p("01-p02", "01.naive_softmax_overflow", "stops at the overflow of exp and forgets inf / inf", "overflow", "inf"),
    _p("01-p03", "01.naive_softmax_mixed", "assumes softmax saturates gracefully to one-hot", "overflow", "1, 0, 0"),
    _p("01-p04", "01.naive_softmax_mixed", "thinks one inf contaminates the whole row", "overflow", "nan, nan, nan"),
    _p("01-p05", "01.attend_output_shape", "output takes d_head (8) instead of d_value", "shape", (2, 4, 8)),
    _p("01-p06", "01.attend_output_shape", "output follows the keys' length", "shape", (2, 6, 5)),
    _p("01-p07", "01.attend_weights_shape", "weights (k_len, q_len): keys as rows", "transpose", (2, 6, 4)),
    _p("01-p08", "01.attend_weights_shape", "forgets the batch axis", "shape", (4, 6)),
    _p("01-p09", "01.lookup_key2_weight", "thinks a query along key 2 picks key 2 alone, ignoring that keys 0 and 1 "
       "score the same", "dot-is-cosine", 1.0),
    _p("01-p10", "01.lookup_key2_weight", "thinks scaling the query by 5 sharpens onto key 2", "dot-is-cosine", 0.9),
    _p("01-p11", "01.shared_weights_symmetric", "symmetric scores give symmetric weights (the row-wise softmax "
       "breaks the symmetry)", "symmetry", "yes"),
    _p("01-p12", "01.kv_shuffle_changes", "thinks the shuffled keys move the outputs of those positions",
       "order", "the shuffled positions"),
    _p("01-p13", "01.kv_shuffle_changes", "thinks every output depends on the key order", "order", "all"),
    _p("01-p14", "01.score_variance_d64", "confuses standard deviation and variance", "var-not-std", 8),
    _p("01-p15", "01.score_variance_d64", "thinks the product of unit-variance entries keeps variance 1",
       "variance", 1),
    _p("01-p16", "01.score_variance_scaled", "divides the variance by sqrt(d) instead of d", "var-not-std", 8),
    _p("01-p17", "01.tutorial_head3_column", "believes the tutorial's comment: the row of 'cat' peaks at 'cat'",
       "tutorial", 1),
    _p("01-p18", "01.temperature_for_unscaled", "thinks the temperature is the missing divisor sqrt(64)",
       "inverted", 8),
    _p("01-p19", "01.temperature_for_unscaled", "uses d_head instead of sqrt(d_head)", "wrong-scale", 64),
]
