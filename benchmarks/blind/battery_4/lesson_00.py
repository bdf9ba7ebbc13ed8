"""Blind battery 4, lesson 00: wrong answers a student could give (see README.md)."""

CASES = [
    {
        "id": "00-001",
        "exercise": "00.dot_scores",
        "mistake": "multiplies keys by queries (k @ q.T): the result is (k_len, q_len), transposed",
        "kind": "transpose",
        "source": """import numpy as np


def dot_scores(q, k):
    return k @ q.T
""",
    },
    {
        "id": "00-002",
        "exercise": "00.dot_scores",
        "mistake": "divides by sqrt(d) although lesson 00 asks for the plain dot products",
        "kind": "extra-scale",
        "source": """import numpy as np


def dot_scores(q, k):
    return q @ k.T / np.sqrt(q.shape[-1])
""",
    },
    {
        "id": "00-003",
        "exercise": "00.dot_scores",
        "mistake": "forgets to transpose k: q @ k crashes unless d == k_len",
        "kind": "crash-shape",
        "source": """import numpy as np


def dot_scores(q, k):
    return np.matmul(q, k)
""",
    },
    {
        "id": "00-004",
        "exercise": "00.dot_scores",
        "mistake": "double loop over range(len(q)) for both indices: right only when q_len == k_len",
        "kind": "square-only",
        "source": """import numpy as np


def dot_scores(q, k):
    n = len(q)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = np.dot(q[i], k[j])
    return out
""",
    },
    {
        "id": "00-005",
        "exercise": "00.dot_scores",
        "mistake": "einsum with the output indices swapped ('id,jd->ji')",
        "kind": "transpose",
        "source": """import numpy as np


def dot_scores(q, k):
    return np.einsum("id,jd->ji", q, k)
""",
    },
    {
        "id": "00-006",
        "exercise": "00.dot_scores",
        "mistake": "returns a nested Python list built with a comprehension instead of an array",
        "kind": "wrong-type",
        "source": """import numpy as np


def dot_scores(q, k):
    return [[float(np.dot(qi, kj)) for kj in k] for qi in q]
""",
    },
    {
        "id": "00-007",
        "exercise": "00.dot_scores",
        "mistake": "computes q.T @ k, a (d, d) feature-by-feature matrix instead of query-by-key",
        "kind": "wrong-axis",
        "source": """import numpy as np


def dot_scores(q, k):
    return q.T @ k
""",
    },
    {
        "id": "00-008",
        "exercise": "00.dot_scores",
        "mistake": "uses the Euclidean distance between query and key instead of the dot product",
        "kind": "wrong-formula",
        "source": """import numpy as np


def dot_scores(q, k):
    return np.linalg.norm(q[:, None, :] - k[None, :, :], axis=-1)
""",
    },
    {
        "id": "00-009",
        "exercise": "00.dot_scores",
        "mistake": "casts to float32 'to save memory': the scores lose precision and change dtype",
        "kind": "dtype",
        "source": """import numpy as np


def dot_scores(q, k):
    return (q.astype(np.float32) @ k.astype(np.float32).T)
""",
    },
    {
        "id": "00-p01",
        "prediction": "00.scores_shape",
        "mistake": "thinks the keys come first: (k_len, q_len)",
        "kind": "pred-shape",
        "value": (7, 5),
    },
    {
        "id": "00-p02",
        "prediction": "00.scores_shape",
        "mistake": "keeps the feature axis: (q_len, d)",
        "kind": "pred-shape",
        "value": (5, 8),
    },
    {
        "id": "00-p03",
        "prediction": "00.scores_shape",
        "mistake": "thinks every query-key pair keeps its d products: (5, 7, 8)",
        "kind": "pred-shape",
        "value": (5, 7, 8),
    },
]
