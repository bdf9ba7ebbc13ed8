"""Battery 2, lesson 03: wrong answers to the NumPy multi-head exercises and predictions."""

H = "import math\n\nimport numpy as np\n\n"

SPLIT = '''def split_heads(x, num_heads):
    b, n, d = x.shape
    return x.reshape(b, n, num_heads, d // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    b, h, n, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, n, h * dh)


def _softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


'''

MASKED = '''def _attend(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    t = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, t, out=np.zeros_like(e), where=t > 0)
    return w @ v, w


'''


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _mha(id, mistake, kind, body):
    return _c(id, "03.multi_head_attention", mistake, kind, SPLIT + MASKED + body)


CASES = [
    # ---- split_heads ---------------------------------------------------------------------------------------------
    _c("03-001", "03.split_heads", "one reshape straight to (batch, heads, length, d_head): right shape, each 'head' "
       "holds consecutive chunks of positions", "single-reshape",
       '''def split_heads(x, num_heads):
    b, n, d = x.shape
    return x.reshape(b, num_heads, n, d // num_heads)
'''),
    _c("03-002", "03.split_heads", "reshapes to (batch, length, heads, d_head) and forgets the transpose",
       "missing-transpose",
       '''def split_heads(x, num_heads):
    b, n, d = x.shape
    return x.reshape(b, n, num_heads, d // num_heads)
'''),
    _c("03-003", "03.split_heads", "reshapes to (batch, length, d_head, heads): head h gets the strided features "
       "h, h + heads, ...", "interleaved",
       '''def split_heads(x, num_heads):
    b, n, d = x.shape
    return x.reshape(b, n, d // num_heads, num_heads).transpose(0, 3, 1, 2)
'''),
    _c("03-004", "03.split_heads", "d_head = x.shape[1] // num_heads: uses the length instead of d_model (right only "
       "when length == d_model)", "square-only",
       '''def split_heads(x, num_heads):
    d_head = x.shape[1] // num_heads
    return x.reshape(x.shape[0], x.shape[1], num_heads, d_head).transpose(0, 2, 1, 3)
'''),
    _c("03-005", "03.split_heads", "np.split + np.stack on axis 0: (heads, batch, length, d_head)", "axis-order",
       '''def split_heads(x, num_heads):
    return np.stack(np.split(x, num_heads, axis=-1), axis=0)
'''),
    _c("03-006", "03.split_heads", "returns a Python list of per-head arrays", "wrong-type",
       '''def split_heads(x, num_heads):
    return [np.ascontiguousarray(h) for h in np.split(x, num_heads, axis=-1)]
'''),
    _c("03-007", "03.split_heads", "swapaxes(1, 3) instead of (1, 2): (batch, d_head, heads, length)", "transpose",
       '''def split_heads(x, num_heads):
    b, n, d = x.shape
    return x.reshape(b, n, num_heads, d // num_heads).swapaxes(1, 3)
'''),
    # ---- merge_heads ---------------------------------------------------------------------------------------------
    _c("03-010", "03.merge_heads", "reshapes (batch, heads, length, d_head) straight to (batch, length, d_model) "
       "without moving the heads axis", "missing-transpose",
       '''def merge_heads(x):
    b, h, n, dh = x.shape
    return x.reshape(b, n, h * dh)
'''),
    _c("03-011", "03.merge_heads", "transpose(0, 2, 3, 1): interleaves the heads' features", "interleaved",
       '''def merge_heads(x):
    b, h, n, dh = x.shape
    return x.transpose(0, 2, 3, 1).reshape(b, n, h * dh)
'''),
    _c("03-012", "03.merge_heads", "sums over the heads instead of concatenating: (batch, length, d_head)",
       "sum-heads",
       '''def merge_heads(x):
    return x.sum(axis=1)
'''),
    _c("03-013", "03.merge_heads", "after the transpose reshapes with x.shape[1] (the number of heads) as the length: "
       "right only when heads == length", "square-only",
       '''def merge_heads(x):
    y = x.transpose(0, 2, 1, 3)
    return y.reshape(x.shape[0], x.shape[1], -1)
'''),
    _c("03-014", "03.merge_heads", "concatenates over list(x) (the batch) instead of the heads", "wrong-axis",
       '''def merge_heads(x):
    return np.concatenate(list(x), axis=-1)
'''),
    _c("03-015", "03.merge_heads", "averages the heads", "sum-heads",
       '''def merge_heads(x):
    return x.mean(axis=1)
'''),
    # ---- multi_head_attention ------------------------------------------------------------------------------------
    _mha("03-020", "scales the scores by sqrt(d_model) instead of sqrt(d_head)", "wrong-scale",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    d = query.shape[-1]
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.nan_to_num(_softmax(s))
    return merge_heads(w @ v) @ W_o, w
'''),
    _mha("03-021", "forgets the output projection W_o", "missing-projection",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    out, w = _attend(q, k, v, mask)
    return merge_heads(out), w
'''),
    _mha("03-022", "splits with one reshape (batch, heads, length, d_head): heads hold chunks of positions",
         "single-reshape",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    def split(x):
        b, n, d = x.shape
        return x.reshape(b, num_heads, n, d // num_heads)
    out, w = _attend(split(query @ W_q), split(key @ W_k), split(value @ W_v), mask)
    b, h, n, dh = out.shape
    return out.reshape(b, n, h * dh) @ W_o, w
'''),
    _mha("03-023", "merges without the transpose (reshape (batch, heads, q_len, d_head) to (batch, q_len, d_model))",
         "missing-transpose",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    out, w = _attend(q, k, v, mask)
    b, h, n, dh = out.shape
    return out.reshape(b, n, h * dh) @ W_o, w
'''),
    _mha("03-024", "mask polarity flipped (True read as 'hide')", "polarity",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    out, w = _attend(q, k, v, None if mask is None else ~mask)
    return merge_heads(out) @ W_o, w
'''),
    _mha("03-025", "fills masked scores with -1e9: a fully masked query gets uniform weights instead of zeros",
         "fill-1e9",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -1e9)
    w = _softmax(s)
    return merge_heads(w @ v) @ W_o, w
'''),
    _mha("03-026", "returns the weights averaged over the heads (batch, q_len, k_len), like PyTorch's default",
         "averaged-weights",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    out, w = _attend(q, k, v, mask)
    return merge_heads(out) @ W_o, w.mean(axis=1)
'''),
    _mha("03-027", "multiplies by W_o.T (right only for a symmetric W_o)", "transpose",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    out, w = _attend(q, k, v, mask)
    return merge_heads(out) @ W_o.T, w
'''),
    _mha("03-028", "projects the values with W_k (copy-paste)", "copy-paste",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_k, num_heads)
    out, w = _attend(q, k, v, mask)
    return merge_heads(out) @ W_o, w
'''),
    _mha("03-029", "splits AND merges with the interleaved layout (features h, h + heads, ...): consistent, but the "
         "heads are not the ones the lesson defines", "interleaved",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    def split(x):
        b, n, d = x.shape
        return x.reshape(b, n, d // num_heads, num_heads).transpose(0, 3, 1, 2)
    out, w = _attend(split(query @ W_q), split(key @ W_k), split(value @ W_v), mask)
    b, h, n, dh = out.shape
    return out.transpose(0, 2, 3, 1).reshape(b, n, h * dh) @ W_o, w
'''),
    _mha("03-030", "softmax over the queries (axis -2)", "wrong-axis",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=-2, keepdims=True))
    w = np.nan_to_num(e / e.sum(axis=-2, keepdims=True))
    return merge_heads(w @ v) @ W_o, w
'''),
    _mha("03-031", "ignores the mask argument entirely", "ignores-mask",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    out, w = _attend(q, k, v)
    return merge_heads(out) @ W_o, w
'''),
    _mha("03-032", "uses the query for the keys and values (self-attention habit): wrong in cross-attention",
         "self-only",
         '''def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(query @ W_k, num_heads)
    v = split_heads(query @ W_v, num_heads)
    out, w = _attend(q, k, v, mask)
    return merge_heads(out) @ W_o, w
'''),
    # ---- multi_head_attention_loop -------------------------------------------------------------------------------
    _c("03-040", "03.multi_head_attention_loop", "averages the heads' terms (divides the sum by num_heads)",
       "mean-not-sum",
       MASKED + '''def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    dh = W_q.shape[1] // num_heads
    out = 0
    for h in range(num_heads):
        sl = slice(h * dh, (h + 1) * dh)
        o, _ = _attend(query @ W_q[:, sl], key @ W_k[:, sl], value @ W_v[:, sl])
        out = out + o @ W_o[sl]
    return out / num_heads
'''),
    _c("03-041", "03.multi_head_attention_loop", "scales each head by sqrt(d_model)", "wrong-scale",
       '''def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    d = W_q.shape[0]
    dh = d // num_heads
    out = 0
    for h in range(num_heads):
        sl = slice(h * dh, (h + 1) * dh)
        s = (query @ W_q[:, sl]) @ np.swapaxes(key @ W_k[:, sl], -1, -2) / math.sqrt(d)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        out = out + (w @ (value @ W_v[:, sl])) @ W_o[sl]
    return out
'''),
    _c("03-042", "03.multi_head_attention_loop", "strided column slices W[:, h::heads] for the projections but "
       "row blocks of W_o", "interleaved",
       MASKED + '''def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    dh = W_q.shape[1] // num_heads
    out = 0
    for h in range(num_heads):
        o, _ = _attend(query @ W_q[:, h::num_heads], key @ W_k[:, h::num_heads], value @ W_v[:, h::num_heads])
        out = out + o @ W_o[h * dh:(h + 1) * dh]
    return out
'''),
    _c("03-043", "03.multi_head_attention_loop", "overwrites instead of accumulating (out = ...): only the last "
       "head's term is returned", "overwrite",
       MASKED + '''def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    dh = W_q.shape[1] // num_heads
    for h in range(num_heads):
        sl = slice(h * dh, (h + 1) * dh)
        o, _ = _attend(query @ W_q[:, sl], key @ W_k[:, sl], value @ W_v[:, sl])
        out = o @ W_o[sl]
    return out
'''),
    _c("03-044", "03.multi_head_attention_loop", "multiplies each head by the whole W_o after zero-padding it to "
       "d_model, but pads at the front of the features", "wrong-offset",
       MASKED + '''def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    dh = W_q.shape[1] // num_heads
    out = 0
    for h in range(num_heads):
        sl = slice(h * dh, (h + 1) * dh)
        o, _ = _attend(query @ W_q[:, sl], key @ W_k[:, sl], value @ W_v[:, sl])
        padded = np.zeros(o.shape[:-1] + (W_o.shape[0],))
        padded[..., :dh] = o
        out = out + padded @ W_o
    return out
'''),
    _c("03-045", "03.multi_head_attention_loop", "uses the same row block W_o[:d_head] for every head",
       "wrong-offset",
       MASKED + '''def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
    dh = W_q.shape[1] // num_heads
    out = 0
    for h in range(num_heads):
        sl = slice(h * dh, (h + 1) * dh)
        o, _ = _attend(query @ W_q[:, sl], key @ W_k[:, sl], value @ W_v[:, sl])
        out = out + o @ W_o[:dh]
    return out
'''),
    # ---- count_attention_parameters ------------------------------------------------------------------------------
    _c("03-050", "03.count_attention_parameters", "4 * (d_model^2 + d_model): ignores d_head", "ignores-arg",
       '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)
'''),
    _c("03-051", "03.count_attention_parameters", "biases counted as 4 * d_model even when heads * d_head != d_model "
       "(W_q, W_k, W_v's biases have heads * d_head entries)", "bias-size",
       '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_model // num_heads if d_head is None else d_head
    inner = num_heads * d_head
    return 4 * d_model * inner + (4 * d_model if bias else 0)
'''),
    _c("03-052", "03.count_attention_parameters", "biases counted as 4 * heads * d_head (W_o's bias has d_model)",
       "bias-size",
       '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_model // num_heads if d_head is None else d_head
    inner = num_heads * d_head
    return 4 * d_model * inner + (4 * inner if bias else 0)
'''),
    _c("03-053", "03.count_attention_parameters", "ignores the bias flag (always adds biases)", "ignores-arg",
       '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_model // num_heads if d_head is None else d_head
    inner = num_heads * d_head
    return 4 * d_model * inner + 3 * inner + d_model
'''),
    _c("03-054", "03.count_attention_parameters", "thinks each head has its own (d_head, d_head) matrices",
       "per-head-square",
       '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_model // num_heads if d_head is None else d_head
    return 4 * num_heads * d_head * d_head + (4 * num_heads * d_head if bias else 0)
'''),
    _c("03-055", "03.count_attention_parameters", "d_head = d_model / num_heads (true division): a float result",
       "dtype",
       '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_model / num_heads if d_head is None else d_head
    inner = num_heads * d_head
    return 4 * d_model * inner + (3 * inner + d_model if bias else 0)
'''),
    _c("03-056", "03.count_attention_parameters", "counts three projections only (forgets W_o)", "missing-projection",
       '''def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
    d_head = d_model // num_heads if d_head is None else d_head
    inner = num_heads * d_head
    return 3 * d_model * inner + (3 * inner if bias else 0)
'''),
    # ---- attention_flops -----------------------------------------------------------------------------------------
    _c("03-060", "03.attention_flops", "counts a multiply-add as 1 FLOP", "flop-convention",
       '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    proj = batch * (2 * q_len + 2 * k_len) * d_model * d_model
    core = batch * 2 * q_len * k_len * d_model
    return proj, core
'''),
    _c("03-061", "03.attention_flops", "all four projections on q_len positions (self-attention habit)", "self-only",
       '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    proj = 2 * batch * 4 * q_len * d_model * d_model
    core = 2 * batch * 2 * q_len * k_len * d_model
    return proj, core
'''),
    _c("03-062", "03.attention_flops", "multiplies the core by num_heads a second time (d_model per head)",
       "heads-twice",
       '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    proj = 2 * batch * (2 * q_len + 2 * k_len) * d_model * d_model
    core = 2 * batch * 2 * q_len * k_len * d_model * num_heads
    return proj, core
'''),
    _c("03-063", "03.attention_flops", "forgets the batch", "missing-batch",
       '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    proj = 2 * (2 * q_len + 2 * k_len) * d_model * d_model
    core = 2 * 2 * q_len * k_len * d_model
    return proj, core
'''),
    _c("03-064", "03.attention_flops", "core counts the scores only, not weights @ values", "missing-term",
       '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    proj = 2 * batch * (2 * q_len + 2 * k_len) * d_model * d_model
    core = 2 * batch * q_len * k_len * d_model
    return proj, core
'''),
    _c("03-065", "03.attention_flops", "returns (core, projections)", "return-order",
       '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    proj = 2 * batch * (2 * q_len + 2 * k_len) * d_model * d_model
    core = 2 * batch * 2 * q_len * k_len * d_model
    return core, proj
'''),
    _c("03-066", "03.attention_flops", "forgets the output projection (three projections)", "missing-projection",
       '''def attention_flops(batch, q_len, k_len, d_model, num_heads):
    proj = 2 * batch * (q_len + 2 * k_len) * d_model * d_model
    core = 2 * batch * 2 * q_len * k_len * d_model
    return proj, core
'''),
    # ---- grouped_query_attention ---------------------------------------------------------------------------------
    _c("03-070", "03.grouped_query_attention", "maps query head h to kv head h % num_kv_heads (np.tile instead of "
       "np.repeat)", "tile-not-repeat",
       SPLIT + MASKED + '''def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_kv_heads)
    v = split_heads(value @ W_v, num_kv_heads)
    g = num_heads // num_kv_heads
    k = np.tile(k, (1, g, 1, 1))
    v = np.tile(v, (1, g, 1, 1))
    out, _ = _attend(q, k, v)
    return merge_heads(out) @ W_o
'''),
    _c("03-071", "03.grouped_query_attention", "scales by sqrt(d_model) instead of sqrt(d_head)", "wrong-scale",
       SPLIT + '''def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    q = split_heads(query @ W_q, num_heads)
    k = np.repeat(split_heads(key @ W_k, num_kv_heads), num_heads // num_kv_heads, axis=1)
    v = np.repeat(split_heads(value @ W_v, num_kv_heads), num_heads // num_kv_heads, axis=1)
    w = _softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(query.shape[-1]))
    return merge_heads(w @ v) @ W_o
'''),
    _c("03-072", "03.grouped_query_attention", "splits the keys and values into num_heads heads like the queries "
       "(d_head too small), no grouping", "no-grouping",
       SPLIT + MASKED + '''def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    q = split_heads(query @ W_q, num_heads)
    k = split_heads(key @ W_k, num_heads)
    v = split_heads(value @ W_v, num_heads)
    out, _ = _attend(q[..., : k.shape[-1]], k, v)
    full = np.repeat(out, q.shape[-1] // k.shape[-1], axis=-1)
    return merge_heads(full) @ W_o
'''),
    _c("03-073", "03.grouped_query_attention", "forgets W_o", "missing-projection",
       SPLIT + MASKED + '''def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    g = num_heads // num_kv_heads
    q = split_heads(query @ W_q, num_heads)
    k = np.repeat(split_heads(key @ W_k, num_kv_heads), g, axis=1)
    v = np.repeat(split_heads(value @ W_v, num_kv_heads), g, axis=1)
    out, _ = _attend(q, k, v)
    return merge_heads(out)
'''),
    _c("03-074", "03.grouped_query_attention", "averages the query heads of each group before attending (one query "
       "per kv head), then repeats the outputs", "group-mean",
       SPLIT + MASKED + '''def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
    g = num_heads // num_kv_heads
    q = split_heads(query @ W_q, num_heads)
    b, h, n, dh = q.shape
    q = q.reshape(b, num_kv_heads, g, n, dh).mean(axis=2)
    k = split_heads(key @ W_k, num_kv_heads)
    v = split_heads(value @ W_v, num_kv_heads)
    out, _ = _attend(q, k, v)
    return merge_heads(np.repeat(out, g, axis=1)) @ W_o
'''),
    # ---- block_crossover -----------------------------------------------------------------------------------------
    _c("03-080", "03.block_crossover", "forgets the MLP: compares the core with the four projections only (2 d)",
       "missing-term",
       '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = 2 * d_model
    return n * 2 if causal else n
'''),
    _c("03-081", "03.block_crossover", "ignores mlp_ratio (hard-codes the lesson's 4)", "ignores-arg",
       '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = (2 + 4) * d_model
    return 2 * n if causal else n
'''),
    _c("03-082", "03.block_crossover", "ignores causal", "ignores-arg",
       '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    return (2 + mlp_ratio) * d_model
'''),
    _c("03-083", "03.block_crossover", "halves n for causal (thinks the kernel doing half the work makes the "
       "crossover come sooner)", "inverted",
       '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = (2 + mlp_ratio) * d_model
    return n // 2 if causal else n
'''),
    _c("03-084", "03.block_crossover", "MLP counted as one matrix d_model x r d_model", "missing-term",
       '''import math


def block_crossover(d_model, mlp_ratio=4, causal=False):
    linear = 8 * d_model ** 2 + 2 * mlp_ratio * d_model ** 2
    core_per_n2 = (2 if causal else 4) * d_model
    return math.ceil(linear / core_per_n2)
'''),
    _c("03-085", "03.block_crossover", "strict inequality (first n with core > linear): one too many", "off-by-one",
       '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    n = (2 + mlp_ratio) * d_model
    return (2 * n if causal else n) + 1
'''),
    _c("03-086", "03.block_crossover", "returns a float from true division", "dtype",
       '''def block_crossover(d_model, mlp_ratio=4, causal=False):
    linear = (8 + 4 * mlp_ratio) * d_model ** 2
    return linear / ((2 if causal else 4) * d_model)
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("03-p01", "03.split_shape", "heads after the positions", "axis-order", (2, 5, 2, 4)),
    _p("03-p02", "03.split_shape", "merges batch and heads", "axis-order", (4, 5, 4)),
    _p("03-p03", "03.head1_features", "thinks heads take alternate features", "interleaved", "odd ones"),
    _p("03-p04", "03.single_reshape_content", "trusts the single reshape", "single-reshape",
       "position 1's features 0..3"),
    _p("03-p05", "03.single_reshape_content", "counts rows of 4 but off by one position", "single-reshape",
       "position 2's features 0..3"),
    _p("03-p06", "03.parameters_d512", "forgets the biases", "missing-bias", 1048576),
    _p("03-p07", "03.parameters_d512", "counts three projections", "missing-projection", 787968),
    _p("03-p08", "03.parameters_heads", "thinks each head has its own full matrices", "per-head", "8 times more"),
    _p("03-p09", "03.parameters_heads", "thinks the heads split the parameters", "per-head", "8 times fewer"),
    _p("03-p10", "03.crossover_n", "n = d_model", "flop-count", 512),
    _p("03-p11", "03.crossover_n", "uses d_head instead of d_model", "flop-count", 128),
    _p("03-p12", "03.cross_output_shape", "output follows the keys' length", "shape", (2, 6, 8)),
    _p("03-p13", "03.cross_weights_shape", "forgets the heads axis", "shape", (2, 3, 6)),
    _p("03-p14", "03.cross_weights_shape", "keys as rows", "transpose", (2, 2, 6, 3)),
]
