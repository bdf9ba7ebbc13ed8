"""Blind battery 4, lesson 03: wrong answers a student could give (see README.md)."""

_NP = "import math\n\nimport numpy as np\n"

_SPLIT = """

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    # (batch, length, d_model) -> (batch, length, heads, d_head) -> (batch, heads, length, d_head)
    return x.reshape(batch, length, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)
"""

_MERGE = """

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    # (batch, heads, length, d_head) -> (batch, length, heads, d_head) -> (batch, length, d_model)
    return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * d_head)
"""

_ATT = """

def _attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights @ V, weights
"""

_PARTS = _SPLIT + _MERGE + _ATT


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # split_heads
    _case(
        "03-001",
        "03.split_heads",
        "one reshape straight to (batch, heads, length, d_head), no transpose",
        "reshape-no-transpose",
        _NP
        + """

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, num_heads, length, d_model // num_heads)
""",
    ),
    _case(
        "03-002",
        "03.split_heads",
        "reshapes to (batch, length, d_head, heads): head h takes every heads-th feature",
        "interleaved",
        _NP
        + """

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, length, d_model // num_heads, num_heads).transpose(0, 3, 1, 2)
""",
    ),
    _case(
        "03-003",
        "03.split_heads",
        "transposes the wrong pair of axes: (batch, length, heads, d_head) -> (batch, heads, d_head, length)",
        "wrong-transpose",
        _NP
        + """

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, length, num_heads, -1).transpose(0, 2, 3, 1)
""",
    ),
    _case(
        "03-004",
        "03.split_heads",
        "hard-codes the length from the first call (5): breaks on other lengths",
        "hard-coded",
        _NP
        + """

def split_heads(x, num_heads):
    batch, d_model = x.shape[0], x.shape[-1]
    return x.reshape(batch, 5, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)
""",
    ),
    _case(
        "03-005",
        "03.split_heads",
        "swaps heads and d_head in the reshape (and the transpose keeps the wrong order): "
        "(batch, d_head, length, heads), right shape only when d_model = heads**2",
        "square-only",
        _NP
        + """

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, length, d_model // num_heads, num_heads).transpose(0, 2, 1, 3)
""",
    ),
    _case(
        "03-006",
        "03.split_heads",
        "np.split along the features, then stacks on axis 2: (batch, length, heads, d_head)",
        "wrong-stack-axis",
        _NP
        + """

def split_heads(x, num_heads):
    return np.stack(np.split(x, num_heads, axis=-1), axis=2)
""",
    ),
    _case(
        "03-007",
        "03.split_heads",
        "returns a list of per-head arrays instead of one array",
        "wrong-type",
        _NP
        + """

def split_heads(x, num_heads):
    return [part for part in np.split(x, num_heads, axis=-1)]
""",
    ),
    # merge_heads
    _case(
        "03-008",
        "03.merge_heads",
        "reshapes straight to (batch, length, d_model) without moving the heads axis",
        "reshape-no-transpose",
        _NP
        + """

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    return x.reshape(batch, length, heads * d_head)
""",
    ),
    _case(
        "03-009",
        "03.merge_heads",
        "transposes to (batch, length, d_head, heads) before the reshape: features interleaved",
        "interleaved",
        _NP
        + """

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    return x.transpose(0, 2, 3, 1).reshape(batch, length, heads * d_head)
""",
    ),
    _case(
        "03-010",
        "03.merge_heads",
        "concatenates the heads along the length axis",
        "wrong-concat-axis",
        _NP
        + """

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    out = np.concatenate([x[:, h] for h in range(heads)], axis=1)
    return out.reshape(batch, length, heads * d_head)
""",
    ),
    _case(
        "03-011",
        "03.merge_heads",
        "sums the heads instead of concatenating them",
        "sum-heads",
        _NP
        + """

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    return np.tile(x.sum(axis=1), (1, 1, heads))
""",
    ),
    _case(
        "03-012",
        "03.merge_heads",
        "concatenates the heads in reverse order",
        "reverse-order",
        _NP
        + """

def merge_heads(x):
    return np.concatenate([x[:, h] for h in reversed(range(x.shape[1]))], axis=-1)
""",
    ),
    # multi_head_attention
    _case(
        "03-013",
        "03.multi_head_attention",
        "scales by sqrt(d_model) instead of sqrt(d_head)",
        "wrong-scale",
        _NP
        + _SPLIT
        + _MERGE
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    d_model = query.shape[-1]
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_model)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return merge_heads(weights @ V) @ W_o, weights
""",
    ),
    _case(
        "03-014",
        "03.multi_head_attention",
        "forgets the output projection W_o",
        "missing-projection",
        _NP
        + _PARTS
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
    out, weights = _attention(Q, K, V, mask)
    return merge_heads(out), weights
""",
    ),
    _case(
        "03-015",
        "03.multi_head_attention",
        "splits the keys and values with the query's length (the tutorials' "
        "reshape(batch, -1, ...) with q_len): wrong for cross-attention",
        "query-length",
        _NP
        + _MERGE
        + _ATT
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    batch, q_len, d_model = query.shape
    d_head = d_model // num_heads

    def split(t):
        return t.reshape(batch, q_len, num_heads, -1).transpose(0, 2, 1, 3)

    Q, K, V = split(query @ W_q), split(key @ W_k), split(value @ W_v)
    out, weights = _attention(Q, K, V, mask)
    return merge_heads(out) @ W_o, weights
""",
    ),
    _case(
        "03-016",
        "03.multi_head_attention",
        "projects the value with W_k (copy-paste)",
        "copy-paste",
        _NP
        + _PARTS
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_k))
    out, weights = _attention(Q, K, V, mask)
    return merge_heads(out) @ W_o, weights
""",
    ),
    _case(
        "03-017",
        "03.multi_head_attention",
        "applies W_o to each head's output before merging (W_o[:d_head] for every head)",
        "wo-per-head",
        _NP
        + _PARTS
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
    out, weights = _attention(Q, K, V, mask)
    d_head = out.shape[-1]
    return (out @ W_o[:d_head]).sum(axis=1), weights
""",
    ),
    _case(
        "03-018",
        "03.multi_head_attention",
        "ignores the mask",
        "ignores-mask",
        _NP
        + _PARTS
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
    out, weights = _attention(Q, K, V)
    return merge_heads(out) @ W_o, weights
""",
    ),
    _case(
        "03-019",
        "03.multi_head_attention",
        "returns the weights averaged over the heads (as nn.MultiheadAttention)",
        "averaged-weights",
        _NP
        + _PARTS
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
    out, weights = _attention(Q, K, V, mask)
    return merge_heads(out) @ W_o, weights.mean(axis=1)
""",
    ),
    _case(
        "03-020",
        "03.multi_head_attention",
        "merges with a plain reshape (no transpose back)",
        "reshape-no-transpose",
        _NP
        + _SPLIT
        + _ATT
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
    out, weights = _attention(Q, K, V, mask)
    return out.reshape(query.shape[0], query.shape[1], -1) @ W_o, weights
""",
    ),
    _case(
        "03-021",
        "03.multi_head_attention",
        "multiplies by the transposed weight matrices (W.T), as with nn.Linear's storage",
        "transpose",
        _NP
        + _PARTS
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q.T, key @ W_k.T, value @ W_v.T))
    out, weights = _attention(Q, K, V, mask)
    return merge_heads(out) @ W_o.T, weights
""",
    ),
    _case(
        "03-022",
        "03.multi_head_attention",
        "-1e9 fill: a query with no allowed key averages the values",
        "fill-1e9",
        _NP
        + _SPLIT
        + _MERGE
        + """

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return merge_heads(weights @ V) @ W_o, weights
""",
    ),
    # multi_head_attention_loop
    _case(
        "03-023",
        "03.multi_head_attention_loop",
        "uses the whole W_o for each head's output and averages: needs the row block h of W_o",
        "wo-block",
        _NP
        + _ATT
        + """

def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[1] // num_heads
    total = 0
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out, _ = _attention(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        padded = np.zeros(out.shape[:-1] + (W_o.shape[0],))
        padded[..., cols] = out
        total = total + padded @ W_o / num_heads
    return total
""",
    ),
    _case(
        "03-024",
        "03.multi_head_attention_loop",
        "slices rows of W_q instead of columns",
        "wrong-slice",
        _NP
        + _ATT
        + """

def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_model = W_q.shape[0]
    d_head = d_model // num_heads
    total = 0
    for h in range(num_heads):
        rows = slice(h * d_head, (h + 1) * d_head)
        out, _ = _attention(query @ W_q.T[:, rows], key @ W_k.T[:, rows], value @ W_v[:, rows])
        total = total + out @ W_o[rows]
    return total
""",
    ),
    _case(
        "03-025",
        "03.multi_head_attention_loop",
        "loop bound range(num_heads - 1): the last head is missing",
        "off-by-one",
        _NP
        + _ATT
        + """

def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[1] // num_heads
    total = np.zeros(query.shape[:-1] + (W_o.shape[1],))
    for h in range(num_heads - 1):
        cols = slice(h * d_head, (h + 1) * d_head)
        out, _ = _attention(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        total += out @ W_o[cols]
    return total
""",
    ),
    _case(
        "03-026",
        "03.multi_head_attention_loop",
        "scales each head by sqrt(d_model) instead of sqrt(d_head)",
        "wrong-scale",
        _NP
        + """

def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_model = W_q.shape[0]
    d_head = d_model // num_heads
    total = 0.0
    for h in range(num_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        scores = (query @ W_q[:, c]) @ np.swapaxes(key @ W_k[:, c], -1, -2) / np.sqrt(d_model)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        total = total + (w @ (value @ W_v[:, c])) @ W_o[c]
    return total
""",
    ),
    _case(
        "03-027",
        "03.multi_head_attention_loop",
        "returns the list of per-head outputs (d_head wide) without W_o",
        "wrong-type",
        _NP
        + _ATT
        + """

def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_head = W_q.shape[1] // num_heads
    outs = []
    for h in range(num_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        outs.append(_attention(query @ W_q[:, c], key @ W_k[:, c], value @ W_v[:, c])[0])
    return np.concatenate(outs, axis=-1)
""",
    ),
    # count_attention_parameters
    _case(
        "03-028",
        "03.count_attention_parameters",
        "forgets the biases when bias=True",
        "missing-bias",
        """

def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    inner = num_heads * (d_head or d_model // num_heads)
    return 4 * d_model * inner
""",
    ),
    _case(
        "03-029",
        "03.count_attention_parameters",
        "counts each bias as d_model wide, also for the inner projections (wrong when num_heads * d_head != d_model)",
        "bias-width",
        """

def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_head if d_head is not None else d_model // num_heads
    inner = num_heads * d_head
    return 4 * d_model * inner + (4 * d_model if bias else 0)
""",
    ),
    _case(
        "03-030",
        "03.count_attention_parameters",
        "counts one (d_model, d_head) matrix per head for Q, K, V and forgets W_o",
        "missing-wo",
        """

def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_head or d_model // num_heads
    per_head = 3 * d_model * d_head + (3 * d_head if bias else 0)
    return num_heads * per_head
""",
    ),
    _case(
        "03-031",
        "03.count_attention_parameters",
        "ignores d_head and always uses d_model x d_model matrices",
        "ignores-option",
        """

def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)
""",
    ),
    _case(
        "03-032",
        "03.count_attention_parameters",
        "multiplies the count by num_heads (thinks every head has full d_model x d_model matrices)",
        "times-heads",
        """

def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_head or d_model // num_heads
    one = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return one * num_heads if d_head * num_heads == d_model else 4 * d_model * num_heads * d_head
""",
    ),
    _case(
        "03-033",
        "03.count_attention_parameters",
        "counts three biases (forgets W_o's)",
        "missing-bias",
        """

def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    inner = num_heads * (d_head if d_head else d_model // num_heads)
    return 4 * d_model * inner + (3 * inner if bias else 0)
""",
    ),
    # attention_flops
    _case(
        "03-034",
        "03.attention_flops",
        "counts a multiply-add as 1 FLOP",
        "half-flops",
        """

def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = batch * (2 * q_len + 2 * k_len) * d_model * d_model
    core = 2 * batch * q_len * k_len * d_model
    return projections, core
""",
    ),
    _case(
        "03-035",
        "03.attention_flops",
        "uses q_len for the key and value projections (self-attention only)",
        "query-length",
        """

def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = 4 * 2 * batch * q_len * d_model * d_model
    core = 4 * batch * q_len * k_len * d_model
    return projections, core
""",
    ),
    _case(
        "03-036",
        "03.attention_flops",
        "counts the core per head with d_model (multiplies by num_heads)",
        "times-heads",
        """

def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = 2 * batch * (2 * q_len + 2 * k_len) * d_model * d_model
    core = num_heads * 4 * batch * q_len * k_len * d_model
    return projections, core
""",
    ),
    _case(
        "03-037",
        "03.attention_flops",
        "forgets weights @ values in the core (scores only)",
        "missing-term",
        """

def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = 2 * batch * (2 * q_len + 2 * k_len) * d_model**2
    core = 2 * batch * q_len * k_len * d_model
    return projections, core
""",
    ),
    _case(
        "03-038",
        "03.attention_flops",
        "forgets the output projection",
        "missing-term",
        """

def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = 2 * batch * (q_len + 2 * k_len) * d_model**2
    core = 4 * batch * q_len * k_len * d_model
    return projections, core
""",
    ),
    _case(
        "03-039",
        "03.attention_flops",
        "returns (core, projections) in the wrong order",
        "return-order",
        """

def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = 2 * batch * (2 * q_len + 2 * k_len) * d_model**2
    core = 4 * batch * q_len * k_len * d_model
    return core, projections
""",
    ),
    # grouped_query_attention
    _case(
        "03-040",
        "03.grouped_query_attention",
        "maps query head h to kv head h % num_kv_heads (interleaved, np.tile) instead of h // group",
        "group-map",
        _NP
        + _SPLIT
        + _MERGE
        + _ATT
        + """

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = split_heads(key @ W_k, num_kv_heads)
    V = split_heads(value @ W_v, num_kv_heads)
    reps = num_heads // num_kv_heads
    K, V = np.tile(K, (1, reps, 1, 1)), np.tile(V, (1, reps, 1, 1))
    out, _ = _attention(Q, K, V)
    return merge_heads(out) @ W_o
""",
    ),
    _case(
        "03-041",
        "03.grouped_query_attention",
        "np.repeat on the feature axis before splitting: repeats each feature, not each kv head",
        "wrong-split",
        _NP
        + _SPLIT
        + _MERGE
        + _ATT
        + """

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = split_heads(np.repeat(key @ W_k, num_heads // num_kv_heads, axis=-1), num_heads)
    V = split_heads(np.repeat(value @ W_v, num_heads // num_kv_heads, axis=-1), num_heads)
    out, _ = _attention(Q, K, V)
    return merge_heads(out) @ W_o
""",
    ),
    _case(
        "03-042",
        "03.grouped_query_attention",
        "scales by sqrt(d_model) instead of sqrt(d_head)",
        "wrong-scale",
        _NP
        + _SPLIT
        + _MERGE
        + """

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = np.repeat(split_heads(key @ W_k, num_kv_heads), num_heads // num_kv_heads, axis=1)
    V = np.repeat(split_heads(value @ W_v, num_kv_heads), num_heads // num_kv_heads, axis=1)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(query.shape[-1])
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return merge_heads((e / e.sum(-1, keepdims=True)) @ V) @ W_o
""",
    ),
    _case(
        "03-043",
        "03.grouped_query_attention",
        "uses only the first kv head for every query head",
        "one-kv-head",
        _NP
        + _SPLIT
        + _MERGE
        + _ATT
        + """

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = split_heads(key @ W_k, num_kv_heads)[:, :1]
    V = split_heads(value @ W_v, num_kv_heads)[:, :1]
    out, _ = _attention(Q, K, V)
    return merge_heads(out) @ W_o
""",
    ),
    _case(
        "03-044",
        "03.grouped_query_attention",
        "computes d_head from W_k's width divided by num_heads: the scale uses the wrong d_head (kv heads are fewer)",
        "wrong-scale",
        _NP
        + _SPLIT
        + _MERGE
        + """

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    d_head = W_k.shape[1] // num_heads
    group = num_heads // num_kv_heads
    Q = split_heads(query @ W_q, num_heads)
    K = np.repeat(split_heads(key @ W_k, num_kv_heads), group, axis=1)
    V = np.repeat(split_heads(value @ W_v, num_kv_heads), group, axis=1)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_head)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return merge_heads((e / e.sum(-1, keepdims=True)) @ V) @ W_o
""",
    ),
    # block_crossover
    _case(
        "03-045",
        "03.block_crossover",
        "forgets the MLP: compares the core with the attention projections only",
        "missing-mlp",
        """

def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = 2 * d_model
    return 2 * n if causal else n
""",
    ),
    _case(
        "03-046",
        "03.block_crossover",
        "counts the MLP as one matrix (2 n d r d) instead of two",
        "missing-term",
        """

def block_crossover(d_model, mlp_ratio=4, causal=False):
    linear_per_n = 8 * d_model**2 + 2 * mlp_ratio * d_model**2
    core_per_n2 = (2 if causal else 4) * d_model
    return math.ceil(linear_per_n / core_per_n2)
""".replace("\n\ndef", "import math\n\n\ndef", 1),
    ),
    _case(
        "03-047",
        "03.block_crossover",
        "hard-codes the ratio 4: ignores mlp_ratio",
        "ignores-option",
        """

def block_crossover(d_model, mlp_ratio=4, causal=False):
    return (12 if causal else 6) * d_model
""",
    ),
    _case(
        "03-048",
        "03.block_crossover",
        "returns a float from the division",
        "wrong-type",
        """

def block_crossover(d_model, mlp_ratio=4, causal=False):
    linear = 8 * d_model**2 + 4 * mlp_ratio * d_model**2
    core = (2 if causal else 4) * d_model
    return linear / core
""",
    ),
    _case(
        "03-049",
        "03.block_crossover",
        "uses > instead of >= when searching n: one too many",
        "off-by-one",
        """

def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = 1
    while True:
        core = (2 if causal else 4) * n * n * d_model
        linear = (8 + 4 * mlp_ratio) * n * d_model**2
        if core > linear:
            return n
        n += 1
""",
    ),
    _case(
        "03-050",
        "03.block_crossover",
        "causal halves the crossover instead of doubling it (halves the linear part)",
        "causal-direction",
        """

def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = (2 + mlp_ratio) * d_model
    return n // 2 if causal else n
""",
    ),
    # predictions
    _pred("03-p01", "03.split_shape", "puts length before heads", "pred-shape", (2, 5, 2, 4)),
    _pred("03-p02", "03.head1_features", "thinks heads interleave the features", "pred-split", "odd ones"),
    _pred(
        "03-p03", "03.single_reshape_content", "trusts the single reshape", "pred-reshape", "position 1's features 0..3"
    ),
    _pred("03-p04", "03.parameters_d512", "forgets the biases: 4 * 512**2", "pred-count", 1048576),
    _pred("03-p05", "03.parameters_d512", "counts only Q, K, V with biases", "pred-count", 3 * 512 * 512 + 3 * 512),
    _pred("03-p06", "03.parameters_heads", "thinks each head has its own full matrices", "pred-count", "8 times more"),
    _pred("03-p07", "03.parameters_heads", "thinks the matrices are split, so fewer", "pred-count", "8 times fewer"),
    _pred("03-p08", "03.crossover_n", "thinks the crossover is at n = d_model", "pred-crossover", 512),
    _pred("03-p09", "03.crossover_n", "thinks the crossover is at n = d_head = 64", "pred-crossover", 64),
    _pred("03-p10", "03.cross_output_shape", "thinks the output follows the keys' length", "pred-shape", (2, 6, 8)),
    _pred("03-p11", "03.cross_weights_shape", "forgets the heads axis", "pred-shape", (2, 3, 6)),
]
