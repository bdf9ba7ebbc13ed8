"""Blind battery 3, lesson 00: wrong answers a student could write (see README.md). Never edited to pass."""

NP = "import numpy as np\n\n"

CASES = [
    {
        "id": "00-001",
        "exercise": "00.dot_scores",
        "mistake": "multiplies keys by queries (k @ q.T): the table comes out (k_len, q_len), one row per key",
        "kind": "transpose",
        "source": NP + "def dot_scores(q, k):\n    return k @ q.T\n",
    },
    {
        "id": "00-002",
        "exercise": "00.dot_scores",
        "mistake": "forgets to transpose the keys and uses np.dot(q, k.T) only when shapes look square; here writes "
        "q @ k, which works only when d == k_len",
        "kind": "missing-transpose",
        "source": NP + "def dot_scores(q, k):\n    return np.dot(q, k)\n",
    },
    {
        "id": "00-003",
        "exercise": "00.dot_scores",
        "mistake": "scales by sqrt(d) as in attention, though the exercise asks for the plain dot products",
        "kind": "extra-scale",
        "source": NP + "def dot_scores(q, k):\n    return q @ k.T / np.sqrt(q.shape[-1])\n",
    },
    {
        "id": "00-004",
        "exercise": "00.dot_scores",
        "mistake": "builds the table with nested loops but returns a list of lists instead of an array",
        "kind": "return-type",
        "source": NP
        + "def dot_scores(q, k):\n"
        + "    table = []\n"
        + "    for qi in q:\n"
        + "        table.append([float(np.dot(qi, kj)) for kj in k])\n"
        + "    return table\n",
    },
    {
        "id": "00-005",
        "exercise": "00.dot_scores",
        "mistake": "uses np.einsum with the output indices swapped ('id,jd->ji'): rows are keys",
        "kind": "transpose",
        "source": NP + "def dot_scores(q, k):\n    return np.einsum('id,jd->ji', q, k)\n",
    },
    {
        "id": "00-006",
        "exercise": "00.dot_scores",
        "mistake": "normalises the vectors first (cosine similarity) instead of the raw dot product",
        "kind": "wrong-formula",
        "source": NP
        + "def dot_scores(q, k):\n"
        + "    qn = q / np.linalg.norm(q, axis=-1, keepdims=True)\n"
        + "    kn = k / np.linalg.norm(k, axis=-1, keepdims=True)\n"
        + "    return qn @ kn.T\n",
    },
    {
        "id": "00-007",
        "exercise": "00.dot_scores",
        "mistake": "loops over range(len(q)) for both axes, so the table is square (q_len, q_len) and misses keys "
        "when k_len > q_len (crashes when k_len < q_len)",
        "kind": "square-only",
        "source": NP
        + "def dot_scores(q, k):\n"
        + "    n = len(q)\n"
        + "    out = np.zeros((n, n))\n"
        + "    for i in range(n):\n"
        + "        for j in range(n):\n"
        + "            out[i, j] = q[i] @ k[j]\n"
        + "    return out\n",
    },
    {
        "id": "00-p01",
        "prediction": "00.scores_shape",
        "mistake": "keys as rows (k_len, q_len)",
        "kind": "transpose",
        "value": (7, 5),
    },
    {
        "id": "00-p02",
        "prediction": "00.scores_shape",
        "mistake": "keeps the shared feature axis, as for an elementwise product",
        "kind": "shape-keeps-d",
        "value": (5, 7, 8),
    },
    {
        "id": "00-p03",
        "prediction": "00.scores_shape",
        "mistake": "thinks the product of (5, 8) and (8, 7) keeps the inner size",
        "kind": "shape-keeps-d",
        "value": (5, 8),
    },
]
