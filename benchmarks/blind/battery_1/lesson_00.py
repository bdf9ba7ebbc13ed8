"""Blind battery, lesson 00: wrong answers to 00.dot_scores and the prediction 00.scores_shape."""

CASES = [
    {
        "id": "00-001",
        "exercise": "00.dot_scores",
        "mistake": "multiplies k by q transposed, so the table is (k_len, q_len): rows are keys, not queries",
        "kind": "transpose",
        "source": '''import numpy as np


def dot_scores(q, k):
    return k @ q.T
''',
    },
    {
        "id": "00-002",
        "exercise": "00.dot_scores",
        "mistake": "uses q @ k without transposing k; only runs when d == k_len, and then multiplies the wrong entries",
        "kind": "transpose",
        "source": '''import numpy as np


def dot_scores(q, k):
    return q @ k
''',
    },
    {
        "id": "00-003",
        "exercise": "00.dot_scores",
        "mistake": "element-wise product summed over the last axis: only the diagonal q[i] . k[i], needs q_len == k_len",
        "kind": "elementwise",
        "source": '''import numpy as np


def dot_scores(q, k):
    return (q * k).sum(axis=-1)
''',
    },
    {
        "id": "00-004",
        "exercise": "00.dot_scores",
        "mistake": "divides by sqrt(d) already (the scaled scores of lesson 01), but the exercise asks for plain dot products",
        "kind": "extra_scale",
        "source": '''import numpy as np


def dot_scores(q, k):
    return q @ k.T / np.sqrt(q.shape[-1])
''',
    },
    {
        "id": "00-005",
        "exercise": "00.dot_scores",
        "mistake": "computes the table with loops and returns a nested Python list instead of an array",
        "kind": "wrong_type",
        "source": '''import numpy as np


def dot_scores(q, k):
    table = []
    for i in range(len(q)):
        row = []
        for j in range(len(k)):
            row.append(float(np.dot(q[i], k[j])))
        table.append(row)
    return table
''',
    },
    {
        "id": "00-006",
        "exercise": "00.dot_scores",
        "mistake": "outer product of the row sums: sum(q[i]) * sum(k[j]) is not q[i] . k[j]",
        "kind": "wrong_formula",
        "source": '''import numpy as np


def dot_scores(q, k):
    return np.outer(q.sum(axis=1), k.sum(axis=1))
''',
    },
    {
        "id": "00-007",
        "exercise": "00.dot_scores",
        "mistake": "loops over the queries but the inner loop stops one key early (range(len(k) - 1)), the last column stays 0",
        "kind": "off_by_one",
        "source": '''import numpy as np


def dot_scores(q, k):
    out = np.zeros((len(q), len(k)))
    for i in range(len(q)):
        for j in range(len(k) - 1):
            out[i, j] = q[i] @ k[j]
    return out
''',
    },
    {
        "id": "00-008",
        "exercise": "00.dot_scores",
        "mistake": "uses cosine similarity (normalizes q and k rows) instead of the raw dot product",
        "kind": "wrong_formula",
        "source": '''import numpy as np


def dot_scores(q, k):
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    kn = k / np.linalg.norm(k, axis=1, keepdims=True)
    return qn @ kn.T
''',
    },
    {
        "id": "00-009",
        "exercise": "00.dot_scores",
        "mistake": "np.dot(q, k.T) then .T 'to get rows as queries', which flips it back to (k_len, q_len)",
        "kind": "transpose",
        "source": '''import numpy as np


def dot_scores(q, k):
    return np.dot(q, k.T).T
''',
    },
    {
        "id": "00-010",
        "exercise": "00.dot_scores",
        "mistake": "builds the result with np.zeros((len(q), len(q))), assuming q_len == k_len; wrong shape when they differ",
        "kind": "square_only",
        "source": '''import numpy as np


def dot_scores(q, k):
    out = np.zeros((len(q), len(q)))
    for i in range(len(q)):
        for j in range(min(len(q), len(k))):
            out[i, j] = q[i] @ k[j]
    return out
''',
    },
    {"id": "00-p01", "prediction": "00.scores_shape", "mistake": "keeps the shared size d and drops k_len", "kind": "shape_keeps_d", "value": (5, 8)},
    {"id": "00-p02", "prediction": "00.scores_shape", "mistake": "rows are keys, columns queries (transposed)", "kind": "shape_transposed", "value": (7, 5)},
    {"id": "00-p03", "prediction": "00.scores_shape", "mistake": "thinks the product keeps every axis, like broadcasting", "kind": "shape_keeps_d", "value": (5, 7, 8)},
]
