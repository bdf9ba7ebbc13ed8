"""Battery 2, lesson 06: wrong answers to the cost / online-softmax / tiling / KV-cache exercises and predictions."""

H = "import math\n\nimport numpy as np\n\n"

FLASH = '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    return m_new, l * scale + p.sum(axis=1, keepdims=True), acc * scale + p @ v_tile


'''


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _tiled(id, mistake, kind, body):
    return _c(id, "06.tiled_attention", mistake, kind, FLASH + body)


def _causal(id, mistake, kind, body):
    return _c(id, "06.causal_tiled_attention", mistake, kind, FLASH + body)


CASES = [
    # ---- online_update -------------------------------------------------------------------------------------------
    _c("06-001", "06.online_update", "adds the new terms without rescaling the old sum to the new maximum",
       "missing-rescale",
       '''def online_update(m, l, block):
    m_new = max(m, float(np.max(block)))
    return m_new, l + float(np.sum(np.exp(block - m_new)))
'''),
    _c("06-002", "06.online_update", "rescales the old sum by exp(m_new - m) (sign flipped)", "sign",
       '''def online_update(m, l, block):
    m_new = max(m, float(np.max(block)))
    scale = math.exp(m_new - m) if l > 0 else 0.0
    return m_new, l * scale + float(np.sum(np.exp(block - m_new)))
'''),
    _c("06-003", "06.online_update", "takes the block's maximum as the new maximum, forgetting the running one",
       "forgets-running-max",
       '''def online_update(m, l, block):
    m_new = float(np.max(block))
    scale = math.exp(m - m_new) if l > 0 else 0.0
    return m_new, l * scale + float(np.sum(np.exp(block - m_new)))
'''),
    _c("06-004", "06.online_update", "exponentiates the block against the OLD maximum: exp(+inf) on the first "
       "block, overflow when a block is larger", "stale-max",
       '''def online_update(m, l, block):
    m_new = max(m, float(np.max(block)))
    return m_new, l * math.exp(m - m_new) + float(np.sum(np.exp(block - m)))
'''),
    _c("06-005", "06.online_update", "returns (l, m) in the wrong order", "return-order",
       '''def online_update(m, l, block):
    m_new = max(m, float(np.max(block)))
    return l * math.exp(m - m_new) + float(np.sum(np.exp(block - m_new))), m_new
'''),
    _c("06-006", "06.online_update", "a finite sentinel for the running max (max(m, -5e4, ...), as a CUDA kernel "
       "would with a finite 'inf'): rows whose entries are all below it sum to 0", "finite-sentinel",
       '''def online_update(m, l, block):
    m_new = max(m, float(np.max(block)), -5e4)
    return m_new, l * math.exp(m - m_new) + float(np.sum(np.exp(block - m_new)))
'''),
    _c("06-007", "06.online_update", "np.maximum(m, block): an elementwise array instead of one running max",
       "elementwise-max",
       '''def online_update(m, l, block):
    m_new = np.maximum(m, block)
    return m_new, l * np.exp(m - m_new) + np.exp(block - m_new)
'''),
    # ---- flash_step ----------------------------------------------------------------------------------------------
    _c("06-010", "06.flash_step", "rescales l but not the accumulator", "missing-rescale",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    return m_new, l * scale + p.sum(axis=1, keepdims=True), acc + p @ v_tile
'''),
    _c("06-011", "06.flash_step", "rescales the accumulator but not l", "missing-rescale",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    return m_new, l + p.sum(axis=1, keepdims=True), acc * scale + p @ v_tile
'''),
    _c("06-012", "06.flash_step", "keeps acc normalized (divides by the running sum at every step): the caller's "
       "final division by l then divides twice", "early-normalize",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    l_new = l * scale + p.sum(axis=1, keepdims=True)
    acc_new = (acc * l * scale + p @ v_tile) / l_new
    return m_new, l_new, acc_new
'''),
    _c("06-013", "06.flash_step", "the tile's global maximum scores.max() for every row: right on ordinary scores, "
       "rows far below the others underflow to 0/0", "global-max",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max())
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    return m_new, l * scale + p.sum(axis=1, keepdims=True), acc * scale + p @ v_tile
'''),
    _c("06-014", "06.flash_step", "multiplies the raw scores (not exp) by the values", "no-exp",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    return m_new, l * scale + p.sum(axis=1, keepdims=True), acc * scale + (scores - m_new) @ v_tile
'''),
    _c("06-015", "06.flash_step", "row max without keepdims: (q_block,) broadcasts against (q_block, 1) into a "
       "square matrix", "keepdims",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1))
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    return m_new, l * scale + p.sum(axis=1, keepdims=True), acc * scale + p @ v_tile
'''),
    _c("06-016", "06.flash_step", "scale factor exp(m_new - m) (sign flipped)", "sign",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    p = np.exp(scores - m_new)
    scale = np.where(np.isfinite(m), np.exp(m_new - m), 0.0)
    return m_new, l * scale + p.sum(axis=1, keepdims=True), acc * scale + p @ v_tile
'''),
    _c("06-017", "06.flash_step", "updates m, l and acc in place (m[...] = ..., acc *= ...): right values, but the "
       "caller's arrays are overwritten", "in-place",
       '''def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    p = np.exp(scores - m_new)
    scale = np.exp(m - m_new)
    l *= scale
    l += p.sum(axis=1, keepdims=True)
    acc *= scale
    acc += p @ v_tile
    m[...] = m_new
    return m, l, acc
'''),
    # ---- tiled_attention -----------------------------------------------------------------------------------------
    _tiled("06-020", "forgets the 1/sqrt(d_head) scale on the score tiles", "missing-scale",
           '''def tiled_attention(q, k, v, block):
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, k.shape[0], block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _tiled("06-021", "key loop range(0, k_len - block, block): always drops the last key tile", "off-by-one",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, max(k.shape[0] - block, 1), block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _tiled("06-022", "loops over n // block tiles: a last, shorter tile of queries and keys is skipped "
           "(right only when block divides the lengths)", "off-by-one",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for bi in range(q.shape[0] // block):
        i = bi * block
        qi = q[i:i + block]
        m = np.full((block, 1), -np.inf)
        l = np.zeros((block, 1))
        acc = np.zeros((block, v.shape[1]))
        for bj in range(k.shape[0] // block):
            j = bj * block
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _tiled("06-023", "starts the running max at 0 instead of -inf: fine on ordinary scores, 0/0 when every score "
           "of a row is far below 0", "init",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        m = np.zeros((len(qi), 1))
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, k.shape[0], block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _tiled("06-024", "forgets the final division by l", "missing-normalize",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, k.shape[0], block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + block] = acc
    return out
'''),
    _tiled("06-025", "divides by the running sum inside the key loop (too early): every later tile rescales an "
           "already normalized accumulator", "early-normalize",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, k.shape[0], block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
            acc = acc / l
        out[i:i + block] = acc
    return out
'''),
    _tiled("06-026", "restarts m, l, acc for every key tile and adds the per-tile outputs (each tile normalized "
           "on its own)", "reset-state",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        total = np.zeros((len(qi), v.shape[1]))
        for j in range(0, k.shape[0], block):
            m = np.full((len(qi), 1), -np.inf)
            l = np.zeros((len(qi), 1))
            acc = np.zeros((len(qi), v.shape[1]))
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
            total += acc / l
        out[i:i + block] = total / len(range(0, k.shape[0], block))
    return out
'''),
    _tiled("06-027", "loops the query blocks over k's length (assumes q_len == k_len)", "square-only",
           '''def tiled_attention(q, k, v, block):
    n = k.shape[0]
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qi = q[i:i + block]
        if len(qi) == 0:
            continue
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, n, block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + len(qi)] = acc / l
    return out
'''),
    _tiled("06-028", "scales by sqrt(d_value) (v.shape[1])", "wrong-scale",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(v.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, k.shape[0], block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _tiled("06-029", "pairs query tile i with key tile i only (a block-diagonal pass)", "diagonal-only",
           '''def tiled_attention(q, k, v, block):
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(0, q.shape[0], block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        j = min(i, max(k.shape[0] - 1, 0))
        m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    # ---- weights_bytes -------------------------------------------------------------------------------------------
    _c("06-030", "06.weights_bytes", "forgets the heads", "missing-term",
       '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * q_len * k_len * bytes_per_value
'''),
    _c("06-031", "06.weights_bytes", "q_len * q_len (assumes self-attention)", "square-only",
       '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len * q_len * bytes_per_value
'''),
    _c("06-032", "06.weights_bytes", "counts bits (times 8)", "units",
       '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len * k_len * bytes_per_value * 8
'''),
    _c("06-033", "06.weights_bytes", "returns MiB as a float", "units",
       '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len * k_len * bytes_per_value / 2 ** 20
'''),
    # ---- io_bytes ------------------------------------------------------------------------------------------------
    _c("06-040", "06.io_bytes", "standard pass counts S and P once each (2 n^2 instead of 4 n^2)", "missing-term",
       '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    B = sram_bytes // (4 * d * bytes_per_value)
    tiles = -(-n // B)
    return (4 * n * d + 2 * n * n) * bytes_per_value, (2 * n * d + tiles * 2 * n * d) * bytes_per_value
'''),
    _c("06-041", "06.io_bytes", "number of query tiles n // B (floor): a last partial tile is not counted",
       "off-by-one",
       '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    B = sram_bytes // (4 * d * bytes_per_value)
    tiles = n // B
    return (4 * n * d + 4 * n * n) * bytes_per_value, (2 * n * d + tiles * 2 * n * d) * bytes_per_value
'''),
    _c("06-042", "06.io_bytes", "tile rows B = sram // (4 d): forgets that a value takes bytes_per_value bytes",
       "units",
       '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    B = sram_bytes // (4 * d)
    tiles = -(-n // B)
    return (4 * n * d + 4 * n * n) * bytes_per_value, (2 * n * d + tiles * 2 * n * d) * bytes_per_value
'''),
    _c("06-043", "06.io_bytes", "tiled pass reads K and V once in all (thinks they stay on chip)", "missing-term",
       '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    return (4 * n * d + 4 * n * n) * bytes_per_value, 4 * n * d * bytes_per_value
'''),
    _c("06-044", "06.io_bytes", "counts values, not bytes", "units",
       '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    B = sram_bytes // (4 * d * bytes_per_value)
    tiles = -(-n // B)
    return 4 * n * d + 4 * n * n, 2 * n * d + tiles * 2 * n * d
'''),
    _c("06-045", "06.io_bytes", "returns (tiled, standard)", "return-order",
       '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    B = sram_bytes // (4 * d * bytes_per_value)
    tiles = -(-n // B)
    return (2 * n * d + tiles * 2 * n * d) * bytes_per_value, (4 * n * d + 4 * n * n) * bytes_per_value
'''),
    # ---- kv_cache_step -------------------------------------------------------------------------------------------
    _c("06-050", "06.kv_cache_step", "attends over the old cache only, appending the new key and value afterwards "
       "(the token cannot read itself; the first step has no key)", "append-after",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    q = x_t @ w_q
    if len(k_cache):
        s = k_cache @ q / math.sqrt(q.shape[0])
        w = np.exp(s - s.max())
        out = (w / w.sum()) @ v_cache
    else:
        out = np.zeros(w_v.shape[1])
    return out, np.vstack([k_cache, x_t @ w_k]), np.vstack([v_cache, x_t @ w_v])
'''),
    _c("06-051", "06.kv_cache_step", "forgets the 1/sqrt(d_head) scale", "missing-scale",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    s = k_cache @ (x_t @ w_q)
    w = np.exp(s - s.max())
    return (w / w.sum()) @ v_cache, k_cache, v_cache
'''),
    _c("06-052", "06.kv_cache_step", "scales by sqrt(d_model) (x_t's width)", "wrong-scale",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    s = k_cache @ (x_t @ w_q) / math.sqrt(x_t.shape[0])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ v_cache, k_cache, v_cache
'''),
    _c("06-053", "06.kv_cache_step", "np.append without axis: the caches come back flattened to 1-D",
       "flattened",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k_new, v_new = x_t @ w_k, x_t @ w_v
    keys = np.vstack([k_cache, k_new])
    values = np.vstack([v_cache, v_new])
    s = keys @ (x_t @ w_q) / math.sqrt(w_q.shape[1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ values, np.append(k_cache, k_new), np.append(v_cache, v_new)
'''),
    _c("06-054", "06.kv_cache_step", "puts the new key and value in FRONT of the cache: the output is the same "
       "(attention ignores order) but the cache order is wrong", "prepend",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k_cache = np.vstack([x_t @ w_k, k_cache])
    v_cache = np.vstack([x_t @ w_v, v_cache])
    s = k_cache @ (x_t @ w_q) / math.sqrt(w_q.shape[1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ v_cache, k_cache, v_cache
'''),
    _c("06-055", "06.kv_cache_step", "projects the value with w_k (copy-paste): wrong values, and a crash when d_value != d_head", "copy-paste",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_k])
    s = k_cache @ (x_t @ w_q) / math.sqrt(w_q.shape[1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ v_cache, k_cache, v_cache
'''),
    _c("06-056", "06.kv_cache_step", "naive softmax without the max: overflows for large scores", "overflow",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    w = np.exp(k_cache @ (x_t @ w_q) / math.sqrt(w_q.shape[1]))
    return (w / w.sum()) @ v_cache, k_cache, v_cache
'''),
    _c("06-057", "06.kv_cache_step", "keeps the query as a (1, d_head) row: the output comes back (1, d_value)",
       "shape",
       '''def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    x = x_t[None, :]
    k_cache = np.vstack([k_cache, x @ w_k])
    v_cache = np.vstack([v_cache, x @ w_v])
    s = (x @ w_q) @ k_cache.T / math.sqrt(w_q.shape[1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v_cache, k_cache, v_cache
'''),
    # ---- decode_flops --------------------------------------------------------------------------------------------
    _c("06-060", "06.decode_flops", "counts a multiply-add as 1", "flop-convention",
       '''def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    proj = 3 * d_model * d_head if cached else d_model * d_head + 2 * L * d_model * d_head
    return proj + 2 * L * d_head
'''),
    _c("06-061", "06.decode_flops", "without the cache recomputes the keys and values of the L - 1 earlier tokens "
       "only (forgets the new one)", "off-by-one",
       '''def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    if cached:
        proj = 3 * 2 * d_model * d_head
    else:
        proj = 2 * d_model * d_head + 2 * 2 * (L - 1) * d_model * d_head
    return proj + 4 * L * d_head
'''),
    _c("06-062", "06.decode_flops", "with the cache counts only the new key and value, not the new query",
       "missing-term",
       '''def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    proj = 2 * 2 * d_model * d_head if cached else 2 * d_model * d_head + 4 * L * d_model * d_head
    return proj + 4 * L * d_head
'''),
    _c("06-063", "06.decode_flops", "forgets the weighted sum of the values (scores only)", "missing-term",
       '''def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    proj = 6 * d_model * d_head if cached else 2 * d_model * d_head + 4 * L * d_model * d_head
    return proj + 2 * L * d_head
'''),
    _c("06-064", "06.decode_flops", "the cached and uncached counts swapped", "inverted",
       '''def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    proj = 2 * d_model * d_head + 4 * L * d_model * d_head if cached else 6 * d_model * d_head
    return proj + 4 * L * d_head
'''),
    _c("06-065", "06.decode_flops", "without the cache recomputes the queries of all L positions too (and the "
       "L x L scores)", "full-recompute",
       '''def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    if cached:
        return 6 * d_model * d_head + 4 * L * d_head
    return 6 * L * d_model * d_head + 4 * L * L * d_head
'''),
    # ---- causal_tiled_attention ----------------------------------------------------------------------------------
    _causal("06-070", "skips the future tiles but does not mask inside the diagonal tiles", "missing-mask",
            '''def causal_tiled_attention(q, k, v, block):
    n = q.shape[0]
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, i + len(qi), block):
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _causal("06-071", "masks key j >= query i (strict): a token may not read itself; query 0 gets 0/0", "off-by-one",
            '''def causal_tiled_attention(q, k, v, block):
    n = q.shape[0]
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qi = q[i:i + block]
        rows = np.arange(i, i + len(qi))[:, None]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, i + len(qi), block):
            cols = np.arange(j, min(j + block, n))[None, :]
            s = np.where(cols < rows, qi @ k[j:j + block].T * scale, -np.inf)
            with np.errstate(invalid="ignore"):
                m, l, acc = flash_step(m, l, acc, s, v[j:j + block])
        with np.errstate(invalid="ignore"):
            out[i:i + block] = acc / l
    return out
'''),
    _causal("06-072", "computes every tile and masks the future: right values, but the future tiles it was told "
            "never to compute are computed", "computes-future",
            '''def causal_tiled_attention(q, k, v, block):
    n = q.shape[0]
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qi = q[i:i + block]
        rows = np.arange(i, i + len(qi))[:, None]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, n, block):
            cols = np.arange(j, min(j + block, n))[None, :]
            s = np.where(cols <= rows, qi @ k[j:j + block].T * scale, -np.inf)
            m, l, acc = flash_step(m, l, acc, s, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _causal("06-073", "stops before the diagonal tile (k_start >= q_start: break): each query sees only earlier "
            "blocks, the first block nothing", "skips-diagonal",
            '''def causal_tiled_attention(q, k, v, block):
    n = q.shape[0]
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, n, block):
            if j >= i:
                break
            m, l, acc = flash_step(m, l, acc, qi @ k[j:j + block].T * scale, v[j:j + block])
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i:i + block] = np.nan_to_num(acc / l)
    return out
'''),
    _causal("06-074", "masks with tile-local indices (col_local > row_local) in every tile: right on the diagonal "
            "tiles, but masks visible keys in the earlier tiles", "local-indices",
            '''def causal_tiled_attention(q, k, v, block):
    n = q.shape[0]
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qi = q[i:i + block]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, i + len(qi), block):
            kj = k[j:j + block]
            r = np.arange(len(qi))[:, None]
            c = np.arange(len(kj))[None, :]
            s = np.where(c <= r, qi @ kj.T * scale, -np.inf)
            m, l, acc = flash_step(m, l, acc, s, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    _causal("06-075", "forgets the 1/sqrt(d_head) scale", "missing-scale",
            '''def causal_tiled_attention(q, k, v, block):
    n = q.shape[0]
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qi = q[i:i + block]
        rows = np.arange(i, i + len(qi))[:, None]
        m = np.full((len(qi), 1), -np.inf)
        l = np.zeros((len(qi), 1))
        acc = np.zeros((len(qi), v.shape[1]))
        for j in range(0, i + len(qi), block):
            cols = np.arange(j, min(j + block, n))[None, :]
            s = np.where(cols <= rows, qi @ k[j:j + block].T, -np.inf)
            m, l, acc = flash_step(m, l, acc, s, v[j:j + block])
        out[i:i + block] = acc / l
    return out
'''),
    # ---- kv_cache_bytes ------------------------------------------------------------------------------------------
    _c("06-080", "06.kv_cache_bytes", "counts the keys only (forgets the factor 2 for the values)", "missing-term",
       '''def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return batch * layers * heads * d_head * seq_len * bytes_per_value
'''),
    _c("06-081", "06.kv_cache_bytes", "forgets the layers (one layer's cache)", "missing-term",
       '''def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * heads * d_head * seq_len * bytes_per_value
'''),
    _c("06-082", "06.kv_cache_bytes", "returns GiB as a float", "units",
       '''def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * layers * heads * d_head * seq_len * bytes_per_value / 2 ** 30
'''),
    _c("06-083", "06.kv_cache_bytes", "counts seq_len squared (confuses the cache with the attention weights)",
       "quadratic",
       '''def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * layers * heads * seq_len * seq_len * bytes_per_value
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("06-p01", "06.core_slope", "thinks time grows linearly with n", "complexity", 1),
    _p("06-p02", "06.core_slope", "thinks the core is cubic (matrix multiplication)", "complexity", 3),
    _p("06-p03", "06.many_heads_time", "same FLOPs, so the same time (the tutorial's claim)", "flops-vs-time",
       "the same"),
    _p("06-p04", "06.many_heads_time", "thinks small heads parallelize better on a CPU", "flops-vs-time", "faster"),
    _p("06-p05", "06.naive_memory_doubling", "thinks memory grows linearly", "complexity", 2),
    _p("06-p06", "06.naive_memory_doubling", "scores and weights both, so 2 x 4", "complexity", 8),
]
