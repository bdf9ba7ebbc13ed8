"""Battery 2, lesson 00: wrong answers to 00.dot_scores and the prediction 00.scores_shape."""

H = "import numpy as np\nimport torch\n\n"


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


CASES = [
    _c("00-001", "00.dot_scores", "computes k @ q.T: the (k_len, q_len) transpose, keys as rows", "transpose",
       '''def dot_scores(q, k):
    return k @ q.T
'''),
    _c("00-002", "00.dot_scores", "multiplies elementwise (q * k) and sums over the features: only one score per "
       "position pair i == i, and it crashes as soon as q_len != k_len", "elementwise-not-matmul",
       '''def dot_scores(q, k):
    return (q * k).sum(axis=-1)
'''),
    _c("00-003", "00.dot_scores", "divides by sqrt(d) although the exercise asks for the raw dot products (scaling "
       "belongs to the next lesson)", "extra-scale",
       '''def dot_scores(q, k):
    return q @ k.T / np.sqrt(q.shape[-1])
'''),
    _c("00-004", "00.dot_scores", "reshapes k to (d, k_len) instead of transposing it: right shape, scrambled "
       "values (only right when k has a single row)", "reshape-not-transpose",
       '''def dot_scores(q, k):
    return q @ k.reshape(k.shape[1], k.shape[0])
'''),
    _c("00-005", "00.dot_scores", "returns a nested Python list (.tolist()) instead of an array", "wrong-type",
       '''def dot_scores(q, k):
    return (q @ k.T).tolist()
'''),
    _c("00-006", "00.dot_scores", "double loop that allocates the result as (q_len, q_len): assumes as many keys as "
       "queries (right only when q_len == k_len, IndexError or missing columns otherwise)", "square-only",
       '''def dot_scores(q, k):
    n = q.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = np.dot(q[i], k[j])
    return out
'''),
    _c("00-007", "00.dot_scores", "loop into np.zeros(..., dtype=int): every score is truncated to an integer",
       "dtype",
       '''def dot_scores(q, k):
    out = np.zeros((q.shape[0], k.shape[0]), dtype=int)
    for i in range(q.shape[0]):
        for j in range(k.shape[0]):
            out[i, j] = q[i] @ k[j]
    return out
'''),
    _c("00-008", "00.dot_scores", "computes cosine similarity (normalizes q and k) instead of the plain dot product",
       "normalized",
       '''def dot_scores(q, k):
    qn = q / np.linalg.norm(q, axis=-1, keepdims=True)
    kn = k / np.linalg.norm(k, axis=-1, keepdims=True)
    return qn @ kn.T
'''),
    _c("00-009", "00.dot_scores", "converts to torch and returns a torch.Tensor (float32) where a NumPy array is "
       "expected", "wrong-type",
       '''def dot_scores(q, k):
    return torch.tensor(q, dtype=torch.float32) @ torch.tensor(k, dtype=torch.float32).T
'''),
    _c("00-010", "00.dot_scores", "broadcasts q[:, None, :] * k[None, :, :] and then sums over axis 1 (the keys) "
       "instead of axis -1 (the features): (q_len, d) instead of (q_len, k_len)", "wrong-axis",
       '''def dot_scores(q, k):
    return (q[:, None, :] * k[None, :, :]).sum(axis=1)
'''),
    _c("00-011", "00.dot_scores", "casts to float32 'to save memory': right values to ~1e-7 but the wrong dtype for "
       "float64 inputs", "dtype",
       '''def dot_scores(q, k):
    return q.astype(np.float32) @ k.astype(np.float32).T
'''),
    _c("00-012", "00.dot_scores", "einsum with the output indices swapped ('id,jd->ji')", "transpose",
       '''def dot_scores(q, k):
    return np.einsum("id,jd->ji", q, k)
'''),
    {"id": "00-p01", "prediction": "00.scores_shape", "mistake": "keys as rows: (k_len, q_len)", "kind": "transpose",
     "value": (7, 5)},
    {"id": "00-p02", "prediction": "00.scores_shape", "mistake": "thinks the product keeps the feature axis",
     "kind": "shape", "value": (5, 8)},
    {"id": "00-p03", "prediction": "00.scores_shape", "mistake": "one score per query and key and feature",
     "kind": "shape", "value": (5, 7, 8)},
]
