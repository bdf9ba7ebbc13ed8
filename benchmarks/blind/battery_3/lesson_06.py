"""Blind battery 3, lesson 06: wrong answers a student could write (see README.md). Never edited to pass."""

from textwrap import dedent

NP = "import math\n\nimport numpy as np\n\n"

FLASH_OK = dedent("""
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
        alpha = np.exp(m - m_new)
        p = np.exp(scores - m_new)
        return m_new, alpha * l + p.sum(axis=-1, keepdims=True), alpha * acc + p @ v_tile
""")


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": NP + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _tiled(cid, mistake, kind, body):
    return _c(cid, "06.tiled_attention", mistake, kind, body, pre=FLASH_OK)


def _causal(cid, mistake, kind, body):
    return _c(cid, "06.causal_tiled_attention", mistake, kind, body, pre=FLASH_OK)


CASES = [
    # ---- 06.online_update
    _c(
        "06-001",
        "06.online_update",
        "forgets to rescale the old sum when the maximum rises",
        "no-rescale",
        """
    def online_update(m, l, block):
        m_new = max(m, float(np.max(block)))
        return m_new, l + float(np.exp(block - m_new).sum())
    """,
    ),
    _c(
        "06-002",
        "06.online_update",
        "rescales by exp(m_new - m) (inverted factor)",
        "inverted-rescale",
        """
    def online_update(m, l, block):
        m_new = max(m, float(block.max()))
        scale = math.exp(m_new - m) if l > 0 else 0.0
        return m_new, l * scale + float(np.sum(np.exp(block - m_new)))
    """,
    ),
    _c(
        "06-003",
        "06.online_update",
        "keeps only the block's own maximum, not the running one",
        "block-max",
        """
    def online_update(m, l, block):
        m_block = float(block.max())
        return m_block, l * math.exp(m - m_block) + float(np.exp(block - m_block).sum())
    """,
    ),
    _c(
        "06-004",
        "06.online_update",
        "returns (l, m) in the wrong order",
        "order",
        """
    def online_update(m, l, block):
        m_new = max(m, float(block.max()))
        l_new = l * math.exp(m - m_new) + float(np.exp(block - m_new).sum())
        return l_new, m_new
    """,
    ),
    _c(
        "06-005",
        "06.online_update",
        "adds the block relative to the old maximum: overflows and is relative to the wrong m",
        "old-max",
        """
    def online_update(m, l, block):
        with np.errstate(over="ignore", invalid="ignore"):
            total = l + float(np.exp(block - (m if np.isfinite(m) else block.max())).sum())
        return max(m, float(block.max())), total
    """,
    ),
    _c(
        "06-006",
        "06.online_update",
        "rescales the block's terms instead of the old sum: exp(b - m) with m = -inf gives inf · 0 = NaN",
        "rescale-wrong-term",
        """
    def online_update(m, l, block):
        m_new = max(m, float(block.max()))
        with np.errstate(over="ignore", invalid="ignore"):
            return m_new, l + float((np.exp(block - m) * math.exp(m - m_new)).sum())
    """,
    ),
    _c(
        "06-007",
        "06.online_update",
        "subtracts the maximum from block in place (block -= m_new): the caller's row changes",
        "in-place",
        """
    def online_update(m, l, block):
        m_new = max(m, float(block.max()))
        block -= m_new
        return m_new, l * math.exp(m - m_new) + float(np.exp(block).sum())
    """,
    ),
    # ---- 06.flash_step
    _c(
        "06-008",
        "06.flash_step",
        "forgets to rescale acc",
        "no-rescale",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(-1, keepdims=True))
        p = np.exp(scores - m_new)
        alpha = np.exp(m - m_new)
        return m_new, alpha * l + p.sum(-1, keepdims=True), acc + p @ v_tile
    """,
    ),
    _c(
        "06-009",
        "06.flash_step",
        "forgets to rescale l",
        "no-rescale",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(-1, keepdims=True))
        p = np.exp(scores - m_new)
        alpha = np.exp(m - m_new)
        return m_new, l + p.sum(-1, keepdims=True), alpha * acc + p @ v_tile
    """,
    ),
    _c(
        "06-010",
        "06.flash_step",
        "divides acc by the running sum at every tile (normalises too early)",
        "early-normalise",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(-1, keepdims=True))
        alpha = np.exp(m - m_new)
        p = np.exp(scores - m_new)
        l_new = alpha * l + p.sum(-1, keepdims=True)
        return m_new, l_new, (alpha * acc + p @ v_tile) / l_new
    """,
    ),
    _c(
        "06-011",
        "06.flash_step",
        "computes the new maximum but returns the old m: the next tile is rescaled against the wrong reference",
        "stale-max",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
        alpha = np.exp(m - m_new)
        p = np.exp(scores - m_new)
        return m, alpha * l + p.sum(1, keepdims=True), alpha * acc + p @ v_tile
    """,
    ),
    _c(
        "06-012",
        "06.flash_step",
        "exponentiates the tile with the old maximum but rescales with the new one (exp(scores - m) is inf on the "
        "first tile, where m = -inf)",
        "old-max",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(-1, keepdims=True))
        alpha = np.exp(m - m_new)
        with np.errstate(over="ignore", invalid="ignore"):
            p = np.exp(scores - m)
        return m_new, alpha * l + p.sum(-1, keepdims=True), alpha * acc + p @ v_tile
    """,
    ),
    _c(
        "06-013",
        "06.flash_step",
        "updates m in place (m[:] = ...) before computing the rescale factor, so exp(m - m_new) is always 1",
        "aliasing",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = m
        m_new[:] = np.maximum(m, scores.max(-1, keepdims=True))
        alpha = np.exp(m - m_new)
        p = np.exp(scores - m_new)
        return m_new, alpha * l + p.sum(-1, keepdims=True), alpha * acc + p @ v_tile
    """,
    ),
    _c(
        "06-014",
        "06.flash_step",
        "updates acc and l in place (acc *= alpha ...): the caller's arrays change",
        "in-place",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(-1, keepdims=True))
        alpha = np.exp(m - m_new)
        p = np.exp(scores - m_new)
        l *= alpha
        l += p.sum(-1, keepdims=True)
        acc *= alpha
        acc += p @ v_tile
        return m_new, l, acc
    """,
    ),
    _c(
        "06-015",
        "06.flash_step",
        "rescale factor exp(m_new - m) (inverted)",
        "inverted-rescale",
        """
    def flash_step(m, l, acc, scores, v_tile):
        m_new = np.maximum(m, scores.max(-1, keepdims=True))
        alpha = np.where(np.isfinite(m), np.exp(m_new - np.where(np.isfinite(m), m, 0.0)), 0.0)
        p = np.exp(scores - m_new)
        return m_new, alpha * l + p.sum(-1, keepdims=True), alpha * acc + p @ v_tile
    """,
    ),
    # ---- 06.tiled_attention
    _tiled(
        "06-016",
        "forgets the 1/sqrt(d_head) scale",
        "missing-scale",
        """
    def tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for qs in range(0, len(q), block):
            qb = q[qs : qs + block]
            m = np.full((len(qb), 1), -np.inf)
            l = np.zeros((len(qb), 1))
            acc = np.zeros((len(qb), v.shape[1]))
            for ks in range(0, len(k), block):
                m, l, acc = flash_step(m, l, acc, qb @ k[ks : ks + block].T, v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _tiled(
        "06-017",
        "range(0, q_len - block, block): the last query block is never computed",
        "off-by-one",
        """
    def tiled_attention(q, k, v, block):
        scale = 1 / math.sqrt(q.shape[1])
        out = np.zeros((q.shape[0], v.shape[1]))
        for qs in range(0, q.shape[0] - block, block):
            qb = q[qs : qs + block]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, k.shape[0], block):
                m, l, acc = flash_step(m, l, acc, qb @ k[ks : ks + block].T * scale, v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _tiled(
        "06-018",
        "n // block key blocks: the shorter last key block is dropped",
        "drops-remainder",
        """
    def tiled_attention(q, k, v, block):
        d = q.shape[1]
        out = np.empty((len(q), v.shape[1]))
        for qi in range(math.ceil(len(q) / block)):
            qb = q[qi * block : (qi + 1) * block]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ki in range(max(1, len(k) // block)):
                kb, vb = k[ki * block : (ki + 1) * block], v[ki * block : (ki + 1) * block]
                m, l, acc = flash_step(m, l, acc, qb @ kb.T / math.sqrt(d), vb)
            out[qi * block : (qi + 1) * block] = acc / l
        return out
    """,
    ),
    _tiled(
        "06-019",
        "resets m, l, acc inside the key loop: only the last key block counts",
        "state-reset",
        """
    def tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for qs in range(0, len(q), block):
            qb = q[qs : qs + block]
            for ks in range(0, len(k), block):
                m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
                m, l, acc = flash_step(m, l, acc, qb @ k[ks : ks + block].T / math.sqrt(q.shape[1]), v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _tiled(
        "06-020",
        "walks the key blocks in the outer loop and the query blocks inside, but keeps a single m, l, acc for all "
        "query blocks (FlashAttention-1's loop order without its per-block state)",
        "shared-state",
        """
    def tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        m, l = np.full((block, 1), -np.inf), np.zeros((block, 1))
        acc = np.zeros((block, v.shape[1]))
        for ks in range(0, len(k), block):
            for qs in range(0, len(q), block):
                qb = q[qs : qs + block]
                r = len(qb)
                m[:r], l[:r], acc[:r] = flash_step(m[:r], l[:r], acc[:r], qb @ k[ks : ks + block].T / math.sqrt(q.shape[1]), v[ks : ks + block])
                out[qs : qs + r] = acc[:r] / l[:r]
        return out
    """,
    ),
    _tiled(
        "06-021",
        "loops over the keys up to q_len (assumes q_len == k_len)",
        "square-only",
        """
    def tiled_attention(q, k, v, block):
        n = len(q)
        out = np.zeros((n, v.shape[1]))
        for qs in range(0, n, block):
            qb = q[qs : qs + block]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, n, block):
                kb = k[ks : ks + block]
                if len(kb) == 0:
                    continue
                m, l, acc = flash_step(m, l, acc, qb @ kb.T / math.sqrt(q.shape[1]), v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _tiled(
        "06-022",
        "divides each tile's contribution by its own sum and adds them up (normalises per tile)",
        "early-normalise",
        """
    def tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for qs in range(0, len(q), block):
            qb = q[qs : qs + block]
            total = np.zeros((len(qb), v.shape[1]))
            for ks in range(0, len(k), block):
                m, l, acc = flash_step(np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1])), qb @ k[ks : ks + block].T / math.sqrt(q.shape[1]), v[ks : ks + block])
                total += acc / l
            out[qs : qs + block] = total / math.ceil(len(k) / block)
        return out
    """,
    ),
    _tiled(
        "06-023",
        "scales by sqrt(block) (the tile width) instead of sqrt(d_head)",
        "wrong-scale",
        """
    def tiled_attention(q, k, v, block):
        out = np.zeros((len(q), v.shape[1]))
        for qs in range(0, len(q), block):
            qb = q[qs : qs + block]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, len(k), block):
                m, l, acc = flash_step(m, l, acc, qb @ k[ks : ks + block].T / math.sqrt(block), v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    # ---- 06.weights_bytes
    _c(
        "06-024",
        "06.weights_bytes",
        "forgets the heads",
        "missing-factor",
        """
    def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
        return batch * q_len * k_len * bytes_per_value
    """,
    ),
    _c(
        "06-025",
        "06.weights_bytes",
        "forgets the batch",
        "missing-factor",
        """
    def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
        return heads * q_len * k_len * bytes_per_value
    """,
    ),
    _c(
        "06-026",
        "06.weights_bytes",
        "counts bits (multiplies by 8)",
        "bits",
        """
    def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
        return 8 * batch * heads * q_len * k_len * bytes_per_value
    """,
    ),
    _c(
        "06-027",
        "06.weights_bytes",
        "q_len squared (assumes self-attention)",
        "square-only",
        """
    def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
        return batch * heads * q_len**2 * bytes_per_value
    """,
    ),
    _c(
        "06-028",
        "06.weights_bytes",
        "returns megabytes as a float",
        "units",
        """
    def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
        return batch * heads * q_len * k_len * bytes_per_value / 1e6
    """,
    ),
    # ---- 06.io_bytes
    _c(
        "06-029",
        "06.io_bytes",
        "standard pass: forgets that S is read back (3 n² instead of 4 n²)",
        "missing-transfer",
        """
    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        n, d = seq_len, d_head
        M = sram_bytes // bytes_per_value
        B = 1
        while 4 * (B + 1) * d + (B + 1) ** 2 <= M:
            B += 1
        standard = 4 * n * d + 3 * n * n
        tiled = 2 * n * d + math.ceil(n / B) * 2 * n * d
        return standard * bytes_per_value, tiled * bytes_per_value
    """,
    ),
    _c(
        "06-030",
        "06.io_bytes",
        "tile rows B = M // (4 d): the score tile left out of SRAM",
        "no-score-tile",
        """
    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        n, d = seq_len, d_head
        B = (sram_bytes // bytes_per_value) // (4 * d)
        standard = 4 * n * d + 4 * n * n
        tiled = 2 * n * d + math.ceil(n / B) * 2 * n * d
        return standard * bytes_per_value, tiled * bytes_per_value
    """,
    ),
    _c(
        "06-031",
        "06.io_bytes",
        "n // B query tiles (drops the last partial tile)",
        "floor-not-ceil",
        """
    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        n, d = seq_len, d_head
        M = sram_bytes // bytes_per_value
        B = max(b for b in range(1, n + 1) if 4 * b * d + b * b <= M)
        return (4 * n * d + 4 * n * n) * bytes_per_value, (2 * n * d + (n // B) * 2 * n * d) * bytes_per_value
    """,
    ),
    _c(
        "06-032",
        "06.io_bytes",
        "returns values, not bytes (forgets bytes_per_value)",
        "units",
        """
    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        n, d = seq_len, d_head
        M = sram_bytes // bytes_per_value
        B = 1
        while 4 * (B + 1) * d + (B + 1) ** 2 <= M:
            B += 1
        return 4 * n * d + 4 * n * n, 2 * n * d + math.ceil(n / B) * 2 * n * d
    """,
    ),
    _c(
        "06-033",
        "06.io_bytes",
        "tiled pass reads K and V once in all (as if they stayed on the chip)",
        "kv-once",
        """
    def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
        n, d = seq_len, d_head
        return (4 * n * d + 4 * n * n) * bytes_per_value, 4 * n * d * bytes_per_value
    """,
    ),
    # ---- 06.kv_cache_step
    _c(
        "06-034",
        "06.kv_cache_step",
        "no 1/sqrt(d_head) scale",
        "missing-scale",
        """
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        k_cache = np.vstack([k_cache, x_t @ w_k])
        v_cache = np.vstack([v_cache, x_t @ w_v])
        s = k_cache @ (x_t @ w_q)
        w = np.exp(s - s.max())
        return (w / w.sum()) @ v_cache, k_cache, v_cache
    """,
    ),
    _c(
        "06-035",
        "06.kv_cache_step",
        "attends over the old cache before appending the new key and value (the "
        "token never reads itself; the first step has no key at all)",
        "append-after",
        """
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        q = x_t @ w_q
        if len(k_cache):
            s = k_cache @ q / math.sqrt(len(q))
            w = np.exp(s - s.max())
            out = (w / w.sum()) @ v_cache
        else:
            out = np.zeros(w_v.shape[1])
        return out, np.vstack([k_cache, x_t @ w_k]), np.vstack([v_cache, x_t @ w_v])
    """,
    ),
    _c(
        "06-036",
        "06.kv_cache_step",
        "scales by sqrt(d_model) (x_t's width)",
        "d-model-scale",
        """
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        k_cache = np.concatenate([k_cache, (x_t @ w_k)[None]], axis=0)
        v_cache = np.concatenate([v_cache, (x_t @ w_v)[None]], axis=0)
        s = k_cache @ (x_t @ w_q) / math.sqrt(len(x_t))
        w = np.exp(s - s.max())
        return w @ v_cache / w.sum(), k_cache, v_cache
    """,
    ),
    _c(
        "06-037",
        "06.kv_cache_step",
        "uses w_k for the values (copy-paste)",
        "copy-paste",
        """
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        k_cache = np.vstack([k_cache, x_t @ w_k])
        v_cache = np.vstack([v_cache, x_t @ w_k])
        s = k_cache @ (x_t @ w_q) / math.sqrt(w_q.shape[1])
        p = np.exp(s - s.max())
        return p @ v_cache / p.sum(), k_cache, v_cache
    """,
    ),
    _c(
        "06-038",
        "06.kv_cache_step",
        "returns the output as (1, d_value)",
        "shape",
        """
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        x = x_t[None]  # (1, d_model)
        k_cache = np.vstack([k_cache, x @ w_k])
        v_cache = np.vstack([v_cache, x @ w_v])
        s = (x @ w_q) @ k_cache.T / math.sqrt(w_q.shape[1])  # (1, t + 1)
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v_cache, k_cache, v_cache
    """,
    ),
    _c(
        "06-039",
        "06.kv_cache_step",
        "puts the new key in front of the cache but the new value at the end: keys and values no longer line up",
        "misaligned-cache",
        """
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        k_cache = np.vstack([x_t @ w_k, k_cache])
        v_cache = np.vstack([v_cache, x_t @ w_v])
        s = k_cache @ (x_t @ w_q) / math.sqrt(w_q.shape[1])
        p = np.exp(s - s.max())
        return p @ v_cache / p.sum(), k_cache, v_cache
    """,
    ),
    _c(
        "06-040",
        "06.kv_cache_step",
        "scores as a (t + 1, 1) column and the softmax along axis -1 (size 1): every weight is 1 and the output is "
        "the sum of the values",
        "wrong-axis",
        """
    def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        k_cache = np.vstack([k_cache, x_t @ w_k])
        v_cache = np.vstack([v_cache, x_t @ w_v])
        s = k_cache @ (x_t @ w_q)[:, None] / math.sqrt(w_q.shape[1])  # (t + 1, 1)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        return (w * v_cache).sum(axis=0), k_cache, v_cache
    """,
    ),
    # ---- 06.decode_flops
    _c(
        "06-041",
        "06.decode_flops",
        "with the cache, counts only the attention core (forgets the new token's projections)",
        "missing-projections",
        """
    def decode_flops(prefix_len, d_model, d_head, cached):
        core = 2 * 2 * prefix_len * d_head
        if cached:
            return core
        return core + 3 * 2 * prefix_len * d_model * d_head
    """,
    ),
    _c(
        "06-042",
        "06.decode_flops",
        "without the cache, recomputes the queries of the whole prefix too",
        "extra-queries",
        """
    def decode_flops(prefix_len, d_model, d_head, cached):
        L = prefix_len
        core = 4 * L * d_head
        if cached:
            return 6 * d_model * d_head + core
        return 3 * 2 * L * d_model * d_head + core
    """,
    ),
    _c(
        "06-043",
        "06.decode_flops",
        "a multiply-add counted as 1",
        "flop-factor",
        """
    def decode_flops(prefix_len, d_model, d_head, cached):
        L = prefix_len
        if cached:
            return 3 * d_model * d_head + 2 * L * d_head
        return d_model * d_head + 2 * L * d_model * d_head + 2 * L * d_head
    """,
    ),
    _c(
        "06-044",
        "06.decode_flops",
        "the prefix without the new token (L - 1 keys)",
        "off-by-one",
        """
    def decode_flops(prefix_len, d_model, d_head, cached):
        L = prefix_len - 1
        core = 4 * L * d_head
        if cached:
            return 6 * d_model * d_head + core
        return 2 * d_model * d_head + 4 * L * d_model * d_head + core
    """,
    ),
    # ---- 06.causal_tiled_attention
    _causal(
        "06-045",
        "skips the future tiles but does not mask inside the diagonal tiles",
        "no-inner-mask",
        """
    def causal_tiled_attention(q, k, v, block):
        n = len(q)
        out = np.zeros((n, v.shape[1]))
        for qs in range(0, n, block):
            qb = q[qs : qs + block]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, qs + len(qb), block):
                m, l, acc = flash_step(m, l, acc, qb @ k[ks : ks + block].T / math.sqrt(q.shape[1]), v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _causal(
        "06-046",
        "masks with j < i (strict): a query never reads itself, the first row has no key (NaN)",
        "strict-mask",
        """
    def causal_tiled_attention(q, k, v, block):
        n = len(q)
        out = np.zeros((n, v.shape[1]))
        for qs in range(0, n, block):
            qb = q[qs : qs + block]
            rows = np.arange(qs, qs + len(qb))[:, None]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, qs + len(qb), block):
                cols = np.arange(ks, min(ks + block, n))[None, :]
                s = qb @ k[ks : ks + block].T / math.sqrt(q.shape[1])
                m, l, acc = flash_step(m, l, acc, np.where(cols < rows, s, -np.inf), v[ks : ks + block])
            with np.errstate(invalid="ignore"):
                out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _causal(
        "06-047",
        "fills the future with 0 instead of -inf: future keys keep a weight",
        "fill-zero",
        """
    def causal_tiled_attention(q, k, v, block):
        n = len(q)
        out = np.zeros((n, v.shape[1]))
        for qs in range(0, n, block):
            qb = q[qs : qs + block]
            rows = np.arange(qs, qs + len(qb))[:, None]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, qs + len(qb), block):
                cols = np.arange(ks, min(ks + block, n))[None, :]
                s = qb @ k[ks : ks + block].T / math.sqrt(q.shape[1])
                m, l, acc = flash_step(m, l, acc, np.where(cols <= rows, s, 0.0), v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _causal(
        "06-048",
        "stops the key loop before the diagonal tile (range(0, qs, block)): the first query block has no key at all",
        "off-by-one",
        """
    def causal_tiled_attention(q, k, v, block):
        n = len(q)
        out = np.zeros((n, v.shape[1]))
        for qs in range(0, n, block):
            qb = q[qs : qs + block]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, qs, block):
                m, l, acc = flash_step(m, l, acc, qb @ k[ks : ks + block].T / math.sqrt(q.shape[1]), v[ks : ks + block])
            with np.errstate(invalid="ignore"):
                out[qs : qs + block] = acc / l
        return out
    """,
    ),
    _causal(
        "06-049",
        "aligns the mask with the tile instead of the sequence (compares positions inside the tile: "
        "np.tril of the tile), which is right only on the diagonal tiles",
        "tile-local-mask",
        """
    def causal_tiled_attention(q, k, v, block):
        n = len(q)
        out = np.zeros((n, v.shape[1]))
        for qs in range(0, n, block):
            qb = q[qs : qs + block]
            m, l, acc = np.full((len(qb), 1), -np.inf), np.zeros((len(qb), 1)), np.zeros((len(qb), v.shape[1]))
            for ks in range(0, qs + len(qb), block):
                s = qb @ k[ks : ks + block].T / math.sqrt(q.shape[1])
                s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
                m, l, acc = flash_step(m, l, acc, s, v[ks : ks + block])
            out[qs : qs + block] = acc / l
        return out
    """,
    ),
    # ---- 06.kv_cache_bytes
    _c(
        "06-050",
        "06.kv_cache_bytes",
        "forgets the factor 2 (keys and values)",
        "missing-factor",
        """
    def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
        return batch * layers * heads * d_head * seq_len * bytes_per_value
    """,
    ),
    _c(
        "06-051",
        "06.kv_cache_bytes",
        "forgets the layers",
        "missing-factor",
        """
    def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
        return 2 * batch * heads * d_head * seq_len * bytes_per_value
    """,
    ),
    _c(
        "06-052",
        "06.kv_cache_bytes",
        "forgets the batch",
        "missing-factor",
        """
    def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
        return 2 * layers * heads * d_head * seq_len * bytes_per_value
    """,
    ),
    _c(
        "06-053",
        "06.kv_cache_bytes",
        "counts the cache as growing with seq_len² (like the weights)",
        "quadratic",
        """
    def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
        return 2 * batch * layers * heads * seq_len * seq_len * bytes_per_value
    """,
    ),
    _c(
        "06-054",
        "06.kv_cache_bytes",
        "returns MiB instead of bytes",
        "units",
        """
    def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
        return 2 * batch * layers * heads * d_head * seq_len * bytes_per_value / 2**20
    """,
    ),
    # ---- predictions
    _p("06-p01", "06.core_slope", "linear in n, like the projections", "scaling", 1),
    _p("06-p02", "06.core_slope", "cubic, as for a matrix product", "scaling", 3),
    _p("06-p03", "06.many_heads_time", "same FLOPs, same time", "flops-vs-time", "the same"),
    _p("06-p04", "06.naive_memory_doubling", "memory doubles with n", "scaling", 2),
    _p("06-p05", "06.naive_memory_doubling", "counts n² scores and n² weights as n³", "scaling", 8),
]
