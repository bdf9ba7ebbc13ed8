"""Blind battery, lesson 03 (multi-head attention in NumPy): wrong answers and wrong predictions."""

HEAD = '''import math

import numpy as np
'''

SPLIT = '''

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    d_head = d_model // num_heads
    return x.reshape(batch, length, num_heads, d_head).transpose(0, 2, 1, 3)
'''

MERGE = '''

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * d_head)
'''

ATTN = '''

def attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    weights = e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300)
    return weights @ v, weights
'''

BASE = HEAD + SPLIT + MERGE + ATTN


def _mha(body):
    """A multi_head_attention source on the correct split, merge and attention, with `body` as its body."""
    return BASE + '''

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
''' + body


def _loop(body):
    return HEAD + ATTN + '''

def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
''' + body


CASES = [
    # ---- 03.split_heads -----------------------------------------------------------------------------
    {
        "id": "03-001",
        "exercise": "03.split_heads",
        "mistake": "one reshape straight to (batch, heads, length, d_head): right shape, positions and heads mixed",
        "kind": "reshape_without_transpose",
        "source": HEAD + '''

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, num_heads, length, d_model // num_heads)
''',
    },
    {
        "id": "03-002",
        "exercise": "03.split_heads",
        "mistake": "reshapes to (batch, length, heads, d_head) but forgets the transpose",
        "kind": "missing_transpose",
        "source": HEAD + '''

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, length, num_heads, d_model // num_heads)
''',
    },
    {
        "id": "03-003",
        "exercise": "03.split_heads",
        "mistake": "reshapes to (batch, length, d_head, heads): head h gets the strided features h, h+heads, ... (even/odd)",
        "kind": "head_split_order",
        "source": HEAD + '''

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, length, d_model // num_heads, num_heads).transpose(0, 3, 1, 2)
''',
    },
    {
        "id": "03-004",
        "exercise": "03.split_heads",
        "mistake": "transposes (batch, length, d_model) to (batch, d_model, length) first, then reshapes: features and positions mixed",
        "kind": "reshape_without_transpose",
        "source": HEAD + '''

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.transpose(0, 2, 1).reshape(batch, num_heads, length, d_model // num_heads)
''',
    },
    {
        "id": "03-005",
        "exercise": "03.split_heads",
        "mistake": "np.split along the features, then stacks the pieces on axis 2: (batch, length, heads, d_head)",
        "kind": "missing_transpose",
        "source": HEAD + '''

def split_heads(x, num_heads):
    return np.stack(np.split(x, num_heads, axis=-1), axis=2)
''',
    },
    {
        "id": "03-006",
        "exercise": "03.split_heads",
        "mistake": "returns a Python list of the heads' arrays instead of one array",
        "kind": "wrong_type",
        "source": HEAD + '''

def split_heads(x, num_heads):
    d_head = x.shape[-1] // num_heads
    return [x[..., h * d_head : (h + 1) * d_head] for h in range(num_heads)]
''',
    },
    {
        "id": "03-007",
        "exercise": "03.split_heads",
        "mistake": "computes d_head from x.shape[1] (the length) instead of the last axis",
        "kind": "wrong_axis",
        "source": HEAD + '''

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    d_head = length // num_heads
    return x.reshape(batch, length, num_heads, -1)[..., :d_head].transpose(0, 2, 1, 3)
''',
    },
    {
        "id": "03-008",
        "exercise": "03.split_heads",
        "mistake": "transpose(0, 2, 3, 1) after the reshape: (batch, heads, d_head, length)",
        "kind": "transpose",
        "source": HEAD + '''

def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    return x.reshape(batch, length, num_heads, d_model // num_heads).transpose(0, 2, 3, 1)
''',
    },
    # ---- 03.merge_heads -----------------------------------------------------------------------------
    {
        "id": "03-009",
        "exercise": "03.merge_heads",
        "mistake": "reshapes straight to (batch, length, d_model) without moving the heads axis back",
        "kind": "reshape_without_transpose",
        "source": HEAD + '''

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    return x.reshape(batch, length, heads * d_head)
''',
    },
    {
        "id": "03-010",
        "exercise": "03.merge_heads",
        "mistake": "transpose(0, 2, 3, 1) before the reshape: the heads' features come out interleaved",
        "kind": "head_split_order",
        "source": HEAD + '''

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    return x.transpose(0, 2, 3, 1).reshape(batch, length, heads * d_head)
''',
    },
    {
        "id": "03-011",
        "exercise": "03.merge_heads",
        "mistake": "concatenates the heads along the length axis: (batch, heads * length, d_head)",
        "kind": "wrong_axis",
        "source": HEAD + '''

def merge_heads(x):
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=1)
''',
    },
    {
        "id": "03-012",
        "exercise": "03.merge_heads",
        "mistake": "sums the heads instead of concatenating them: (batch, length, d_head)",
        "kind": "sum_not_concat",
        "source": HEAD + '''

def merge_heads(x):
    return x.sum(axis=1)
''',
    },
    {
        "id": "03-013",
        "exercise": "03.merge_heads",
        "mistake": "concatenates the heads in reverse order (iterates x[:, ::-1])",
        "kind": "head_order",
        "source": HEAD + '''

def merge_heads(x):
    return np.concatenate(list(np.moveaxis(x[:, ::-1], 1, 0)), axis=-1)
''',
    },
    {
        "id": "03-014",
        "exercise": "03.merge_heads",
        "mistake": "swaps the last two axes (d_head, length) before reshaping instead of heads and length",
        "kind": "transpose",
        "source": HEAD + '''

def merge_heads(x):
    batch, heads, length, d_head = x.shape
    return np.swapaxes(x, 2, 3).reshape(batch, length, heads * d_head)
''',
    },
    # ---- 03.multi_head_attention --------------------------------------------------------------------
    {
        "id": "03-015",
        "exercise": "03.multi_head_attention",
        "mistake": "scales the scores by sqrt(d_model) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": BASE + '''

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q = split_heads(query @ W_q, num_heads)
    K = split_heads(key @ W_k, num_heads)
    V = split_heads(value @ W_v, num_heads)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    weights = e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300)
    return merge_heads(weights @ V) @ W_o, weights
''',
    },
    {
        "id": "03-016",
        "exercise": "03.multi_head_attention",
        "mistake": "forgets the output projection W_o: returns the concatenated heads",
        "kind": "missing_projection",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    heads_out, weights = attention(Q, K, V, mask)
    return merge_heads(heads_out), weights
'''),
    },
    {
        "id": "03-017",
        "exercise": "03.multi_head_attention",
        "mistake": "concat @ W_o.T (thinks of W_o as out_features x in_features)",
        "kind": "transpose",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    heads_out, weights = attention(Q, K, V, mask)
    return merge_heads(heads_out) @ W_o.T, weights
'''),
    },
    {
        "id": "03-018",
        "exercise": "03.multi_head_attention",
        "mistake": "never passes the mask on to the attention",
        "kind": "mask_ignored",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    heads_out, weights = attention(Q, K, V)
    return merge_heads(heads_out) @ W_o, weights
'''),
    },
    {
        "id": "03-019",
        "exercise": "03.multi_head_attention",
        "mistake": "mask polarity flipped: passes ~mask (treats True as 'ignore')",
        "kind": "mask_polarity",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    heads_out, weights = attention(Q, K, V, None if mask is None else ~mask)
    return merge_heads(heads_out) @ W_o, weights
'''),
    },
    {
        "id": "03-020",
        "exercise": "03.multi_head_attention",
        "mistake": "returns the weights averaged over the heads (batch, q_len, k_len), like nn.MultiheadAttention's default",
        "kind": "averaged_weights",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    heads_out, weights = attention(Q, K, V, mask)
    return merge_heads(heads_out) @ W_o, weights.mean(axis=1)
'''),
    },
    {
        "id": "03-021",
        "exercise": "03.multi_head_attention",
        "mistake": "splits every input with the query's length (reshape(batch, q_len, ...)): breaks cross-attention",
        "kind": "cross_attention_length",
        "source": BASE + '''

def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    batch, seq_len, d_model = query.shape
    d_head = d_model // num_heads

    def split(x):
        return x.reshape(batch, seq_len, num_heads, d_head).transpose(0, 2, 1, 3)

    heads_out, weights = attention(split(query @ W_q), split(key @ W_k), split(value @ W_v), mask)
    return merge_heads(heads_out) @ W_o, weights
''',
    },
    {
        "id": "03-022",
        "exercise": "03.multi_head_attention",
        "mistake": "merges the heads with a plain reshape, without moving the heads axis back",
        "kind": "reshape_without_transpose",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    heads_out, weights = attention(Q, K, V, mask)
    return heads_out.reshape(query.shape) @ W_o, weights
'''),
    },
    {
        "id": "03-023",
        "exercise": "03.multi_head_attention",
        "mistake": "copy-paste slip: the values are projected with W_k",
        "kind": "copy_paste",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_k)))
    heads_out, weights = attention(Q, K, V, mask)
    return merge_heads(heads_out) @ W_o, weights
'''),
    },
    {
        "id": "03-024",
        "exercise": "03.multi_head_attention",
        "mistake": "splits with one reshape to (batch, heads, length, d_head): heads get mixed positions",
        "kind": "reshape_without_transpose",
        "source": _mha('''    def split(x):
        b, n, d = x.shape
        return x.reshape(b, num_heads, n, d // num_heads)

    heads_out, weights = attention(split(query @ W_q), split(key @ W_k), split(value @ W_v), mask)
    return merge_heads(heads_out) @ W_o, weights
'''),
    },
    {
        "id": "03-025",
        "exercise": "03.multi_head_attention",
        "mistake": "softmax over axis -2 (the queries) inside the heads",
        "kind": "wrong_axis",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e30)
    e = np.exp(scores - scores.max(axis=-2, keepdims=True))
    weights = e / e.sum(axis=-2, keepdims=True)
    return merge_heads(weights @ V) @ W_o, weights
'''),
    },
    {
        "id": "03-026",
        "exercise": "03.multi_head_attention",
        "mistake": "attends over the full d_model once and only splits the output: a single head, whatever num_heads",
        "kind": "single_head",
        "source": _mha('''    out, weights = attention(query @ W_q, key @ W_k, value @ W_v, None if mask is None else mask[:, 0])
    weights = np.repeat(weights[:, None], num_heads, axis=1)
    return out @ W_o, weights
'''),
    },
    {
        "id": "03-027",
        "exercise": "03.multi_head_attention",
        "mistake": "the tutorial's W_o @ concat, 'fixed' with transposes: (W_o @ concat^T)^T = concat @ W_o^T",
        "kind": "transpose",
        "source": _mha('''    Q, K, V = (split_heads(a @ W, num_heads) for a, W in ((query, W_q), (key, W_k), (value, W_v)))
    heads_out, weights = attention(Q, K, V, mask)
    concat = merge_heads(heads_out)
    return np.swapaxes(W_o @ np.swapaxes(concat, -1, -2), -1, -2), weights
'''),
    },
    # ---- 03.multi_head_attention_loop ---------------------------------------------------------------
    {
        "id": "03-028",
        "exercise": "03.multi_head_attention_loop",
        "mistake": "averages the heads' terms (divides the sum by num_heads)",
        "kind": "mean_not_sum",
        "source": _loop('''    d_head = W_q.shape[1] // num_heads
    total = 0.0
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out, _ = attention(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        total = total + out @ W_o[cols, :]
    return total / num_heads
'''),
    },
    {
        "id": "03-029",
        "exercise": "03.multi_head_attention_loop",
        "mistake": "forgets to move the slice with h: every head uses columns 0 .. d_head-1",
        "kind": "loop_index",
        "source": _loop('''    d_head = W_q.shape[1] // num_heads
    total = 0.0
    for h in range(num_heads):
        cols = slice(0, d_head)
        out, _ = attention(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        total = total + out @ W_o[cols, :]
    return total
'''),
    },
    {
        "id": "03-030",
        "exercise": "03.multi_head_attention_loop",
        "mistake": "loops over range(num_heads - 1): the last head is left out",
        "kind": "off_by_one",
        "source": _loop('''    d_head = W_q.shape[1] // num_heads
    total = 0.0
    for h in range(num_heads - 1):
        cols = slice(h * d_head, (h + 1) * d_head)
        out, _ = attention(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        total = total + out @ W_o[cols, :]
    return total
'''),
    },
    {
        "id": "03-031",
        "exercise": "03.multi_head_attention_loop",
        "mistake": "takes columns of W_o (transposed) for each head's term instead of its rows",
        "kind": "transpose",
        "source": _loop('''    d_head = W_q.shape[1] // num_heads
    total = 0.0
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        out, _ = attention(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        total = total + out @ W_o[:, cols].T
    return total
'''),
    },
    {
        "id": "03-032",
        "exercise": "03.multi_head_attention_loop",
        "mistake": "strided column slices W[:, h::num_heads] instead of contiguous blocks",
        "kind": "head_split_order",
        "source": _loop('''    total = 0.0
    for h in range(num_heads):
        cols = slice(h, None, num_heads)
        out, _ = attention(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
        total = total + out @ W_o[cols, :]
    return total
'''),
    },
    {
        "id": "03-033",
        "exercise": "03.multi_head_attention_loop",
        "mistake": "scales each head's scores by sqrt(d_model) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": HEAD + '''

def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d_model = W_q.shape[0]
    d_head = W_q.shape[1] // num_heads
    total = 0.0
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        q, k, v = query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols]
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_model)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        total = total + (e / e.sum(axis=-1, keepdims=True)) @ v @ W_o[cols, :]
    return total
''',
    },
    # ---- 03.count_attention_parameters --------------------------------------------------------------
    {
        "id": "03-034",
        "exercise": "03.count_attention_parameters",
        "mistake": "always 4 * d_model^2 + 4 * d_model: ignores d_head when heads * d_head != d_model",
        "kind": "ignores_argument",
        "source": '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)
''',
    },
    {
        "id": "03-035",
        "exercise": "03.count_attention_parameters",
        "mistake": "leaves out W_o (and its bias), like the tutorial's 3 * 512^2",
        "kind": "missing_projection",
        "source": '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    if d_head is None:
        d_head = d_model // num_heads
    inner = num_heads * d_head
    return 3 * d_model * inner + (3 * inner if bias else 0)
''',
    },
    {
        "id": "03-036",
        "exercise": "03.count_attention_parameters",
        "mistake": "four biases of size d_model each, though W_q, W_k, W_v output num_heads * d_head features",
        "kind": "bias_size",
        "source": '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    if d_head is None:
        d_head = d_model // num_heads
    inner = num_heads * d_head
    return 4 * d_model * inner + (4 * d_model if bias else 0)
''',
    },
    {
        "id": "03-037",
        "exercise": "03.count_attention_parameters",
        "mistake": "d_head = d_model / num_heads with true division: returns a float",
        "kind": "wrong_type",
        "source": '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    if d_head is None:
        d_head = d_model / num_heads
    inner = num_heads * d_head
    return 4 * d_model * inner + (3 * inner + d_model if bias else 0)
''',
    },
    {
        "id": "03-038",
        "exercise": "03.count_attention_parameters",
        "mistake": "counts the four d_model x d_model matrices once per head",
        "kind": "per_head_count",
        "source": '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    per_head = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return num_heads * per_head
''',
    },
    {
        "id": "03-039",
        "exercise": "03.count_attention_parameters",
        "mistake": "forgets the biases entirely, whatever `bias` says",
        "kind": "missing_bias",
        "source": '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    if d_head is None:
        d_head = d_model // num_heads
    return 4 * d_model * num_heads * d_head
''',
    },
    # ---- 03.attention_flops -------------------------------------------------------------------------
    {
        "id": "03-040",
        "exercise": "03.attention_flops",
        "mistake": "counts a multiply-add as 1 FLOP instead of 2",
        "kind": "flop_convention",
        "source": '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = batch * (2 * q_len + 2 * k_len) * d_model * d_model
    core = batch * 2 * q_len * k_len * d_model
    return projections, core
''',
    },
    {
        "id": "03-041",
        "exercise": "03.attention_flops",
        "mistake": "all four projections on q_len positions (self-attention formula): wrong for cross-attention",
        "kind": "cross_attention_length",
        "source": '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = batch * 4 * 2 * q_len * d_model * d_model
    core = batch * 4 * q_len * k_len * d_model
    return projections, core
''',
    },
    {
        "id": "03-042",
        "exercise": "03.attention_flops",
        "mistake": "multiplies the core by num_heads on top of d_model (counts d_model per head instead of d_head)",
        "kind": "per_head_count",
        "source": '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = batch * 2 * (2 * q_len + 2 * k_len) * d_model * d_model
    core = batch * num_heads * 4 * q_len * k_len * d_model
    return projections, core
''',
    },
    {
        "id": "03-043",
        "exercise": "03.attention_flops",
        "mistake": "forgets the batch factor",
        "kind": "missing_factor",
        "source": '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    projections = 2 * (2 * q_len + 2 * k_len) * d_model * d_model
    core = 4 * q_len * k_len * d_model
    return projections, core
''',
    },
    {
        "id": "03-044",
        "exercise": "03.attention_flops",
        "mistake": "counts only the scores in the core, forgetting weights @ values",
        "kind": "missing_term",
        "source": '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    d_head = d_model // num_heads
    projections = batch * 2 * (2 * q_len + 2 * k_len) * d_model * d_model
    core = batch * num_heads * 2 * q_len * d_head * k_len
    return projections, core
''',
    },
    # ---- 03.grouped_query_attention -----------------------------------------------------------------
    {
        "id": "03-045",
        "exercise": "03.grouped_query_attention",
        "mistake": "np.tile instead of np.repeat for the key/value heads: query head h uses kv head h % num_kv_heads, not h // group",
        "kind": "head_grouping",
        "source": BASE + '''

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = split_heads(key @ W_k, num_kv_heads)
    V = split_heads(value @ W_v, num_kv_heads)
    group = num_heads // num_kv_heads
    K, V = np.tile(K, (1, group, 1, 1)), np.tile(V, (1, group, 1, 1))
    out, _ = attention(Q, K, V)
    return merge_heads(out) @ W_o
''',
    },
    {
        "id": "03-046",
        "exercise": "03.grouped_query_attention",
        "mistake": "averages the key/value heads into one and shares it with every query head",
        "kind": "head_grouping",
        "source": BASE + '''

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = split_heads(key @ W_k, num_kv_heads).mean(axis=1, keepdims=True)
    V = split_heads(value @ W_v, num_kv_heads).mean(axis=1, keepdims=True)
    out, _ = attention(Q, K, V)
    return merge_heads(out) @ W_o
''',
    },
    {
        "id": "03-047",
        "exercise": "03.grouped_query_attention",
        "mistake": "scales by sqrt of the key projection's width (num_kv_heads * d_head) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": BASE + '''

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = np.repeat(split_heads(key @ W_k, num_kv_heads), num_heads // num_kv_heads, axis=1)
    V = np.repeat(split_heads(value @ W_v, num_kv_heads), num_heads // num_kv_heads, axis=1)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(W_k.shape[1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return merge_heads((e / e.sum(axis=-1, keepdims=True)) @ V) @ W_o
''',
    },
    {
        "id": "03-048",
        "exercise": "03.grouped_query_attention",
        "mistake": "forgets W_o at the end",
        "kind": "missing_projection",
        "source": BASE + '''

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    Q = split_heads(query @ W_q, num_heads)
    K = np.repeat(split_heads(key @ W_k, num_kv_heads), num_heads // num_kv_heads, axis=1)
    V = np.repeat(split_heads(value @ W_v, num_kv_heads), num_heads // num_kv_heads, axis=1)
    out, _ = attention(Q, K, V)
    return merge_heads(out)
''',
    },
    {
        "id": "03-049",
        "exercise": "03.grouped_query_attention",
        "mistake": "repeats the keys by group but the values with np.tile: keys and values of a query head belong to different kv heads",
        "kind": "head_grouping",
        "source": BASE + '''

def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    group = num_heads // num_kv_heads
    Q = split_heads(query @ W_q, num_heads)
    K = np.repeat(split_heads(key @ W_k, num_kv_heads), group, axis=1)
    V = np.tile(split_heads(value @ W_v, num_kv_heads), (1, group, 1, 1))
    out, _ = attention(Q, K, V)
    return merge_heads(out) @ W_o
''',
    },
    # ---- 03.block_crossover -------------------------------------------------------------------------
    {
        "id": "03-050",
        "exercise": "03.block_crossover",
        "mistake": "forgets the MLP: the attention sublayer's crossover 2 * d_model (4 * d_model causal)",
        "kind": "missing_term",
        "source": '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    return (4 if causal else 2) * d_model
''',
    },
    {
        "id": "03-051",
        "exercise": "03.block_crossover",
        "mistake": "the causal kernel halves the crossover instead of doubling it",
        "kind": "causal_direction",
        "source": '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = (2 + mlp_ratio) * d_model
    return n // 2 if causal else n
''',
    },
    {
        "id": "03-052",
        "exercise": "03.block_crossover",
        "mistake": "counts the MLP as one matrix of width r * d_model (forgets the way back)",
        "kind": "missing_term",
        "source": '''import math


def block_crossover(d_model, mlp_ratio=4, causal=False):
    linear_per_token = 8 * d_model * d_model + 2 * mlp_ratio * d_model * d_model
    core_per_token_squared = (2 if causal else 4) * d_model
    return math.ceil(linear_per_token / core_per_token_squared)
''',
    },
    {
        "id": "03-053",
        "exercise": "03.block_crossover",
        "mistake": "truncates with int() instead of rounding up: one token short when the crossover is not a whole number",
        "kind": "rounding",
        "source": '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = (2 + mlp_ratio) * d_model
    return int(2 * n if causal else n)
''',
    },
    {
        "id": "03-054",
        "exercise": "03.block_crossover",
        "mistake": "ignores causal",
        "kind": "ignores_argument",
        "source": '''import math


def block_crossover(d_model, mlp_ratio=4, causal=False):
    return math.ceil((2 + mlp_ratio) * d_model)
''',
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "03-p01", "prediction": "03.split_shape", "mistake": "stops after the reshape, heads after positions", "kind": "missing_transpose", "value": (2, 5, 2, 4)},
    {"id": "03-p02", "prediction": "03.split_shape", "mistake": "puts d_head before the positions", "kind": "shape_transposed", "value": (2, 2, 4, 5)},
    {"id": "03-p03", "prediction": "03.head1_features", "mistake": "thinks heads take interleaved features", "kind": "head_split_order", "value": "odd ones"},
    {"id": "03-p04", "prediction": "03.head1_features", "mistake": "off by one head", "kind": "off_by_one", "value": "0..3"},
    {"id": "03-p05", "prediction": "03.single_reshape_content", "mistake": "trusts the shape: thinks one reshape gives the right contents", "kind": "reshape_without_transpose", "value": "position 1's features 0..3"},
    {"id": "03-p06", "prediction": "03.single_reshape_content", "mistake": "skips a whole position in memory order", "kind": "reshape_without_transpose", "value": "position 2's features 0..3"},
    {"id": "03-p07", "prediction": "03.parameters_d512", "mistake": "the tutorial's count, no W_o, no biases", "kind": "missing_projection", "value": 786432},
    {"id": "03-p08", "prediction": "03.parameters_d512", "mistake": "four matrices, no biases", "kind": "missing_bias", "value": 1048576},
    {"id": "03-p09", "prediction": "03.parameters_heads", "mistake": "one set of matrices per head", "kind": "per_head_count", "value": "8 times more"},
    {"id": "03-p10", "prediction": "03.parameters_heads", "mistake": "each head is 8 times narrower, so fewer parameters", "kind": "per_head_count", "value": "8 times fewer"},
    {"id": "03-p11", "prediction": "03.crossover_n", "mistake": "n = d_model", "kind": "flop_algebra", "value": 512},
    {"id": "03-p12", "prediction": "03.crossover_n", "mistake": "n = 4 * d_model (counts the core once, projections twice)", "kind": "flop_algebra", "value": 2048},
    {"id": "03-p13", "prediction": "03.cross_output_shape", "mistake": "the output follows the keys' length", "kind": "shape_rows_keys", "value": (2, 6, 8)},
    {"id": "03-p14", "prediction": "03.cross_output_shape", "mistake": "the output keeps d_head features", "kind": "shape_d_head", "value": (2, 3, 4)},
    {"id": "03-p15", "prediction": "03.cross_weights_shape", "mistake": "weights (keys, queries): transposed", "kind": "shape_transposed", "value": (2, 2, 6, 3)},
    {"id": "03-p16", "prediction": "03.cross_weights_shape", "mistake": "forgets the heads axis", "kind": "shape_missing_heads", "value": (2, 3, 6)},
]
