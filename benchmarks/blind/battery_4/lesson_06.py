"""Blind battery 4, lesson 06: wrong answers a student could give (see README.md)."""

_NP = "import math\n\nimport numpy as np\n"

_FLASH = """

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))  # (q_block, 1)
    p = np.exp(scores - m_new)  # (q_block, k_block)
    rescale = np.exp(m - m_new)  # (q_block, 1)
    return m_new, l * rescale + p.sum(axis=-1, keepdims=True), acc * rescale + p @ v_tile
"""


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


_TILED_START = """

def tiled_attention(q, k, v, block):
    q_len, d_head = q.shape
    k_len = k.shape[0]
    out = np.zeros((q_len, v.shape[1]))
"""

CASES = [
    # online_update
    _case(
        "06-001",
        "06.online_update",
        "adds the block's terms without rescaling the old sum to the new maximum",
        "no-rescale",
        _NP
        + """

def online_update(m, l, block):
    m_new = max(m, float(np.max(block)))
    return m_new, l + float(np.exp(block - m_new).sum())
""",
    ),
    _case(
        "06-002",
        "06.online_update",
        "rescales the old sum the wrong way: exp(m_new - m)",
        "rescale-direction",
        _NP
        + """

def online_update(m, l, block):
    m_new = max(m, float(np.max(block)))
    factor = math.exp(m_new - m) if l > 0 else 0.0
    return m_new, l * factor + float(np.sum(np.exp(block - m_new)))
""",
    ),
    _case(
        "06-003",
        "06.online_update",
        "adds the block's exp relative to the OLD maximum, then updates m",
        "update-order",
        _NP
        + """

def online_update(m, l, block):
    reference = m if np.isfinite(m) else float(np.max(block))
    l = l + float(np.exp(block - reference).sum())
    m_new = max(m, float(np.max(block)))
    return m_new, l
""",
    ),
    _case(
        "06-004",
        "06.online_update",
        "keeps the maximum of the block only, forgetting the running one",
        "block-max",
        _NP
        + """

def online_update(m, l, block):
    m_block = float(np.max(block))
    return m_block, l * math.exp(m - m_block) + float(np.exp(block - m_block).sum())
""",
    ),
    _case(
        "06-005",
        "06.online_update",
        "returns NumPy 0-d arrays (np.maximum) instead of floats",
        "wrong-type",
        _NP
        + """

def online_update(m, l, block):
    m_new = np.maximum(m, np.max(block, keepdims=True))
    return m_new, l * np.exp(m - m_new) + np.exp(block - m_new).sum(keepdims=True)
""",
    ),
    _case(
        "06-006",
        "06.online_update",
        "no max at all: sums exp(block) (overflows on scores in the hundreds)",
        "overflow",
        _NP
        + """

def online_update(m, l, block):
    with np.errstate(over="ignore"):
        return max(m, float(np.max(block))), l + float(np.exp(block).sum())
""",
    ),
    # flash_step
    _case(
        "06-007",
        "06.flash_step",
        "rescales l but forgets to rescale acc",
        "no-rescale-acc",
        _NP
        + """

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    l = l * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
    return m_new, l, acc + p @ v_tile
""",
    ),
    _case(
        "06-008",
        "06.flash_step",
        "divides acc by l at every step (too early)",
        "divide-early",
        _NP
        + """

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    l_new = l * rescale + p.sum(axis=-1, keepdims=True)
    acc_new = (acc * l * rescale + p @ v_tile) / l_new
    return m_new, l_new, acc_new
""",
    ),
    _case(
        "06-009",
        "06.flash_step",
        "max over the whole tile (all queries) instead of per query row",
        "wrong-axis",
        _NP
        + """

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max())
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    return m_new, l * rescale + p.sum(axis=-1, keepdims=True), acc * rescale + p @ v_tile
""",
    ),
    _case(
        "06-010",
        "06.flash_step",
        "sums p over the queries (axis 0) for l",
        "wrong-axis",
        _NP
        + """

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    return m_new, l * rescale + p.sum(axis=0, keepdims=True).T[: len(l)], acc * rescale + p @ v_tile
""",
    ),
    _case(
        "06-011",
        "06.flash_step",
        "updates acc and l in place (acc *= ..., l *= ...): the caller's arrays change",
        "in-place",
        _NP
        + """

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    rescale = np.exp(m - m_new)
    l *= rescale
    l += p.sum(axis=-1, keepdims=True)
    acc *= rescale
    acc += p @ v_tile
    return m_new, l, acc
""",
    ),
    _case(
        "06-012",
        "06.flash_step",
        "rescales with exp(m_new - m)",
        "rescale-direction",
        _NP
        + """

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    p = np.exp(scores - m_new)
    with np.errstate(invalid="ignore", over="ignore"):
        rescale = np.where(np.isfinite(m), np.exp(m_new - m), 0.0)
    return m_new, l * rescale + p.sum(axis=-1, keepdims=True), acc * rescale + p @ v_tile
""",
    ),
    # tiled_attention
    _case(
        "06-013",
        "06.tiled_attention",
        "key loop range(0, k_len - block, block): the last key tile is skipped",
        "off-by-one-tile",
        _NP
        + _FLASH
        + _TILED_START
        + """
    for i in range(0, q_len, block):
        qb = q[i : i + block]
        m = np.full((len(qb), 1), -np.inf)
        l = np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, k_len - block, block):
            scores = qb @ k[j : j + block].T / math.sqrt(d_head)
            m, l, acc = flash_step(m, l, acc, scores, v[j : j + block])
        out[i : i + block] = acc / l
    return out
""",
    ),
    _case(
        "06-014",
        "06.tiled_attention",
        "forgets the final division by l",
        "no-normalize",
        _NP
        + _FLASH
        + _TILED_START
        + """
    for i in range(0, q_len, block):
        qb = q[i : i + block]
        m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, k_len, block):
            m, l, acc = flash_step(m, l, acc, qb @ k[j : j + block].T / math.sqrt(d_head), v[j : j + block])
        out[i : i + block] = acc
    return out
""",
    ),
    _case(
        "06-015",
        "06.tiled_attention",
        "initializes m, l, acc once, outside the query loop: state leaks between query blocks",
        "state-reset",
        _NP
        + _FLASH
        + _TILED_START
        + """
    m = np.full((block, 1), -np.inf)
    l = np.zeros((block, 1))
    acc = np.zeros((block, v.shape[1]))
    for i in range(0, q_len, block):
        qb = q[i : i + block]
        n = len(qb)
        for j in range(0, k_len, block):
            m[:n], l[:n], acc[:n] = flash_step(m[:n], l[:n], acc[:n], qb @ k[j : j + block].T / math.sqrt(d_head),
                                               v[j : j + block])
        out[i : i + block] = acc[:n] / l[:n]
    return out
""",
    ),
    _case(
        "06-016",
        "06.tiled_attention",
        "resets the state inside the key loop: only the last key tile counts",
        "state-reset",
        _NP
        + _FLASH
        + _TILED_START
        + """
    for i in range(0, q_len, block):
        qb = q[i : i + block]
        for j in range(0, k_len, block):
            m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
            acc = np.zeros((len(qb), v.shape[1]))
            m, l, acc = flash_step(m, l, acc, qb @ k[j : j + block].T / math.sqrt(d_head), v[j : j + block])
        out[i : i + block] = acc / l
    return out
""",
    ),
    _case(
        "06-017",
        "06.tiled_attention",
        "forgets the 1/sqrt(d_head) scale on the tile scores",
        "missing-scale",
        _NP
        + _FLASH
        + _TILED_START
        + """
    for i in range(0, q_len, block):
        qb = q[i : i + block]
        m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, k_len, block):
            m, l, acc = flash_step(m, l, acc, qb @ k[j : j + block].T, v[j : j + block])
        out[i : i + block] = acc / l
    return out
""",
    ),
    _case(
        "06-018",
        "06.tiled_attention",
        "computes the number of tiles as q_len // block: with a shorter last block, the last queries stay 0",
        "floor-division",
        _NP
        + _FLASH
        + _TILED_START
        + """
    for bi in range(q_len // block):
        qb = q[bi * block : (bi + 1) * block]
        m, l = np.full((block, 1), -np.inf), np.zeros((block, 1))
        acc = np.zeros((block, v.shape[1]))
        for bj in range(math.ceil(k_len / block)):
            ks = slice(bj * block, (bj + 1) * block)
            m, l, acc = flash_step(m, l, acc, qb @ k[ks].T / math.sqrt(d_head), v[ks])
        out[bi * block : (bi + 1) * block] = acc / l
    return out
""",
    ),
    _case(
        "06-019",
        "06.tiled_attention",
        "k tile sliced with the query index (k[i:i+block]): only diagonal tiles",
        "wrong-index",
        _NP
        + _FLASH
        + _TILED_START
        + """
    for i in range(0, q_len, block):
        qb = q[i : i + block]
        m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, k_len, block):
            m, l, acc = flash_step(m, l, acc, qb @ k[i : i + block].T / math.sqrt(d_head), v[i : i + block])
        out[i : i + block] = acc / l
    return out
""",
    ),
    # weights_bytes
    _case(
        "06-020",
        "06.weights_bytes",
        "forgets the heads",
        "missing-term",
        """

def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * q_len * k_len * bytes_per_value
""",
    ),
    _case(
        "06-021",
        "06.weights_bytes",
        "multiplies by 8 (bits per byte) as well",
        "bits-bytes",
        """

def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len * k_len * bytes_per_value * 8
""",
    ),
    _case(
        "06-022",
        "06.weights_bytes",
        "counts scores and weights (two tensors)",
        "double-count",
        """

def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return 2 * batch * heads * q_len * k_len * bytes_per_value
""",
    ),
    _case(
        "06-023",
        "06.weights_bytes",
        "assumes a square matrix: q_len * q_len",
        "square-only",
        """

def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len**2 * bytes_per_value
""",
    ),
    # io_bytes
    _case(
        "06-024",
        "06.io_bytes",
        "counts values, forgetting bytes_per_value",
        "missing-bytes",
        _NP
        + """

def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    M = sram_bytes // bytes_per_value
    B = 1
    while 4 * (B + 1) * d + (B + 1) ** 2 <= M:
        B += 1
    standard = 4 * n * d + 4 * n * n
    tiled = 2 * n * d + math.ceil(n / B) * 2 * n * d
    return standard, tiled
""",
    ),
    _case(
        "06-025",
        "06.io_bytes",
        "returns (tiled, standard) in the wrong order",
        "return-order",
        _NP
        + """

def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    M = sram_bytes // bytes_per_value
    B = int((-4 * d + math.sqrt(16 * d * d + 4 * M)) // 2)
    standard = (4 * n * d + 4 * n * n) * bytes_per_value
    tiled = (2 * n * d + math.ceil(n / B) * 2 * n * d) * bytes_per_value
    return tiled, standard
""",
    ),
    _case(
        "06-026",
        "06.io_bytes",
        "sizes the tile from sram_bytes directly (values = bytes): B too large",
        "bytes-as-values",
        _NP
        + """

def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    M = sram_bytes
    B = int((-4 * d + math.sqrt(16 * d * d + 4 * M)) // 2)
    standard = (4 * n * d + 4 * n * n) * bytes_per_value
    tiled = (2 * n * d + math.ceil(n / B) * 2 * n * d) * bytes_per_value
    return standard, tiled
""",
    ),
    _case(
        "06-027",
        "06.io_bytes",
        "standard pass counts only Q, K, V in and O out (forgets S and P round trips)",
        "missing-term",
        _NP
        + """

def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    M = sram_bytes // bytes_per_value
    B = int((-4 * d + math.sqrt(16 * d * d + 4 * M)) // 2)
    standard = 4 * n * d * bytes_per_value
    tiled = (2 * n * d + math.ceil(n / B) * 2 * n * d) * bytes_per_value
    return standard, tiled
""",
    ),
    _case(
        "06-028",
        "06.io_bytes",
        "tiled pass reads K and V once in total (forgets they stream once per query tile)",
        "missing-term",
        _NP
        + """

def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    standard = (4 * n * d + 4 * n * n) * bytes_per_value
    tiled = 4 * n * d * bytes_per_value
    return standard, tiled
""",
    ),
    # kv_cache_step
    _case(
        "06-029",
        "06.kv_cache_step",
        "attends over the old cache before appending the new key and value",
        "append-order",
        _NP
        + """

def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    q, k, v = x_t @ w_q, x_t @ w_k, x_t @ w_v
    keys = k_cache if len(k_cache) else k[None]
    values = v_cache if len(v_cache) else v[None]
    scores = keys @ q / math.sqrt(q.shape[-1])
    w = np.exp(scores - scores.max())
    output = (w / w.sum()) @ values
    return output, np.vstack([k_cache, k[None]]), np.vstack([v_cache, v[None]])
""",
    ),
    _case(
        "06-030",
        "06.kv_cache_step",
        "prepends the new key and value (cache in reverse order)",
        "append-order",
        _NP
        + """

def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    q = x_t @ w_q
    k_cache = np.concatenate([(x_t @ w_k)[None], k_cache], axis=0)
    v_cache = np.concatenate([(x_t @ w_v)[None], v_cache], axis=0)
    scores = k_cache @ q / np.sqrt(q.size)
    w = np.exp(scores - scores.max())
    return (w / w.sum()) @ v_cache, k_cache, v_cache
""",
    ),
    _case(
        "06-031",
        "06.kv_cache_step",
        "scales by sqrt(d_model)",
        "wrong-scale",
        _NP
        + """

def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    q = x_t @ w_q
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    scores = k_cache @ q / math.sqrt(x_t.shape[0])
    w = np.exp(scores - scores.max())
    return (w / w.sum()) @ v_cache, k_cache, v_cache
""",
    ),
    _case(
        "06-032",
        "06.kv_cache_step",
        "returns the output as (1, d_value) (keeps the query's row axis)",
        "wrong-shape",
        _NP
        + """

def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    x = x_t[None, :]  # (1, d_model)
    q = x @ w_q  # (1, d_head)
    k_cache = np.concatenate([k_cache, x @ w_k], axis=0)
    v_cache = np.concatenate([v_cache, x @ w_v], axis=0)
    scores = q @ k_cache.T / math.sqrt(q.shape[-1])  # (1, t + 1)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v_cache, k_cache, v_cache
""",
    ),
    _case(
        "06-033",
        "06.kv_cache_step",
        "caches the query instead of the key",
        "wrong-cache",
        _NP
        + """

def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    q = x_t @ w_q
    k_cache = np.vstack([k_cache, q])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    scores = k_cache @ q / math.sqrt(q.shape[0])
    w = np.exp(scores - scores.max())
    return (w / w.sum()) @ v_cache, k_cache, v_cache
""",
    ),
    _case(
        "06-034",
        "06.kv_cache_step",
        "recomputes the key of the new token only and ignores the cache: attends to itself alone",
        "ignores-cache",
        _NP
        + """

def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
    k, v = x_t @ w_k, x_t @ w_v
    return v, np.vstack([k_cache, k]), np.vstack([v_cache, v])
""",
    ),
    # decode_flops
    _case(
        "06-035",
        "06.decode_flops",
        "counts a multiply-add as 1",
        "half-flops",
        """

def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    core = 2 * L * d_head
    if cached:
        return 3 * d_model * d_head + core
    return d_model * d_head + 2 * L * d_model * d_head + core
""",
    ),
    _case(
        "06-036",
        "06.decode_flops",
        "with the cache still counts the key and value projections of the whole prefix",
        "cache-no-saving",
        """

def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    return 2 * d_model * d_head + 2 * 2 * L * d_model * d_head + 2 * 2 * L * d_head
""",
    ),
    _case(
        "06-037",
        "06.decode_flops",
        "forgets the attention core (scores and weights @ values)",
        "missing-term",
        """

def decode_flops(prefix_len, d_model, d_head, cached):
    if cached:
        return 3 * 2 * d_model * d_head
    return 2 * d_model * d_head + 2 * 2 * prefix_len * d_model * d_head
""",
    ),
    _case(
        "06-038",
        "06.decode_flops",
        "without the cache recomputes an (L, L) attention for every position "
        "(counts the whole causal pass, not one step)",
        "whole-pass",
        """

def decode_flops(prefix_len, d_model, d_head, cached):
    L = prefix_len
    if cached:
        return 3 * 2 * d_model * d_head + 2 * 2 * L * d_head
    return 3 * 2 * L * d_model * d_head + 2 * 2 * L * L * d_head
""",
    ),
    # causal_tiled_attention
    _case(
        "06-039",
        "06.causal_tiled_attention",
        "key tiles range(0, i, block): the diagonal tile is never computed (the first query block reads nothing)",
        "off-by-one-tile",
        _NP
        + _FLASH
        + """

def causal_tiled_attention(q, k, v, block):
    n, d_head = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qb = q[i : i + block]
        m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, i, block):
            m, l, acc = flash_step(m, l, acc, qb @ k[j : j + block].T / math.sqrt(d_head), v[j : j + block])
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i : i + block] = acc / l
    return out
""",
    ),
    _case(
        "06-040",
        "06.causal_tiled_attention",
        "skips the future tiles but does not mask inside the diagonal tile",
        "missing-mask",
        _NP
        + _FLASH
        + """

def causal_tiled_attention(q, k, v, block):
    n, d_head = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qb = q[i : i + block]
        m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, i + block, block):
            m, l, acc = flash_step(m, l, acc, qb @ k[j : j + block].T / math.sqrt(d_head), v[j : j + block])
        out[i : i + block] = acc / l
    return out
""",
    ),
    _case(
        "06-041",
        "06.causal_tiled_attention",
        "masks with j < i inside the tiles (strict): a query never reads itself, query 0 reads nothing",
        "diagonal",
        _NP
        + _FLASH
        + """

def causal_tiled_attention(q, k, v, block):
    n, d_head = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qb = q[i : i + block]
        rows = np.arange(i, i + len(qb))[:, None]
        m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, i + len(qb), block):
            cols = np.arange(j, min(j + block, n))[None, :]
            scores = np.where(cols < rows, qb @ k[j : j + block].T / math.sqrt(d_head), -np.inf)
            with np.errstate(invalid="ignore"):
                m, l, acc = flash_step(m, l, acc, scores, v[j : j + block])
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i : i + block] = acc / l
    return out
""",
    ),
    _case(
        "06-042",
        "06.causal_tiled_attention",
        "masks with the tile-local indices (arange(block) on both axes): "
        "right on the diagonal tiles, wrong on the earlier tiles (masks the past)",
        "tile-local-index",
        _NP
        + _FLASH
        + """

def causal_tiled_attention(q, k, v, block):
    n, d_head = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(0, n, block):
        qb = q[i : i + block]
        m, l = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1))
        acc = np.zeros((len(qb), v.shape[1]))
        for j in range(0, i + len(qb), block):
            kb = k[j : j + block]
            local = np.arange(len(kb))[None, :] <= np.arange(len(qb))[:, None]
            scores = np.where(local, qb @ kb.T / math.sqrt(d_head), -np.inf)
            m, l, acc = flash_step(m, l, acc, scores, v[j : j + block])
        out[i : i + block] = acc / l
    return out
""",
    ),
    # kv_cache_bytes
    _case(
        "06-043",
        "06.kv_cache_bytes",
        "counts the keys only (forgets the values: factor 2)",
        "missing-term",
        """

def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return batch * layers * heads * d_head * seq_len * bytes_per_value
""",
    ),
    _case(
        "06-044",
        "06.kv_cache_bytes",
        "forgets the layers",
        "missing-term",
        """

def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * heads * d_head * seq_len * bytes_per_value
""",
    ),
    _case(
        "06-045",
        "06.kv_cache_bytes",
        "counts seq_len squared (confuses the cache with the weights)",
        "square",
        """

def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * layers * heads * seq_len * seq_len * bytes_per_value
""",
    ),
    _case(
        "06-046",
        "06.kv_cache_bytes",
        "returns megabytes (divides by 2**20) as a float",
        "units",
        """

def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * layers * heads * d_head * seq_len * bytes_per_value / 2**20
""",
    ),
    # predictions
    _pred("06-p01", "06.core_slope", "thinks the time grows linearly with n", "pred-slope", 1.0),
    _pred("06-p02", "06.core_slope", "counts the projections' d squared into the slope", "pred-slope", 3.0),
    _pred("06-p03", "06.many_heads_time", "same FLOPs -> same time (the tutorial's claim)", "pred-timing", "the same"),
    _pred("06-p04", "06.many_heads_time", "thinks smaller heads are faster", "pred-timing", "faster"),
    _pred("06-p05", "06.naive_memory_doubling", "thinks memory doubles with n", "pred-memory", 2.0),
    _pred("06-p06", "06.naive_memory_doubling", "thinks n doubling multiplies n^2 by 8", "pred-memory", 8.0),
]
