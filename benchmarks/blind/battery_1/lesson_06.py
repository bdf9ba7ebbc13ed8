"""Blind battery, lesson 06 (what attention costs): wrong answers and wrong predictions."""

HEAD = '''import math

import numpy as np
'''

FLASH_STEP = '''

def flash_step(m, l, acc, scores, v_tile):
    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = l * rescale + p.sum(axis=1, keepdims=True)
    acc_new = acc * rescale + p @ v_tile
    return m_new, l_new, acc_new
'''


def _online(body):
    return HEAD + '''

def online_update(m, l, block):
''' + body


def _flash(body):
    return HEAD + '''

def flash_step(m, l, acc, scores, v_tile):
''' + body


def _tiled(body):
    return HEAD + FLASH_STEP + '''

def tiled_attention(q, k, v, block):
    q_len, d_head = q.shape
    k_len, d_value = v.shape
    out = np.zeros((q_len, d_value))
''' + body


def _kv(body):
    return HEAD + '''

def kv_cache_step(x_t, k_cache, v_cache, w_q, w_k, w_v):
''' + body


def _causal(body):
    return HEAD + FLASH_STEP + '''

def causal_tiled_attention(q, k, v, block):
    n, d_head = q.shape
    out = np.zeros((n, v.shape[1]))
''' + body


GOOD_TILE_LOOP = '''    for qs in range(0, q_len, block):
        q_tile = q[qs : qs + block]
        m = np.full((len(q_tile), 1), -np.inf)
        l = np.zeros((len(q_tile), 1))
        acc = np.zeros((len(q_tile), d_value))
        for ks in range(0, k_len, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            m, l, acc = flash_step(m, l, acc, scores, v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out
'''

CASES = [
    # ---- 06.online_update ---------------------------------------------------------------------------
    {
        "id": "06-001",
        "exercise": "06.online_update",
        "mistake": "updates the maximum but never rescales the old sum by exp(m_old - m_new)",
        "kind": "missing_rescale",
        "source": _online('''    m_new = max(m, float(np.max(block)))
    l_new = l + float(np.exp(block - m_new).sum())
    return m_new, l_new
'''),
    },
    {
        "id": "06-002",
        "exercise": "06.online_update",
        "mistake": "rescales by exp(m_new - m_old), the inverse factor",
        "kind": "inverted_rescale",
        "source": _online('''    m_new = max(m, float(np.max(block)))
    factor = math.exp(m_new - m) if math.isfinite(m) else 0.0
    l_new = l * factor + float(np.exp(block - m_new).sum())
    return m_new, l_new
'''),
    },
    {
        "id": "06-003",
        "exercise": "06.online_update",
        "mistake": "takes the new maximum from the block alone (forgets the running maximum)",
        "kind": "forgets_state",
        "source": _online('''    m_new = float(np.max(block))
    factor = float(np.exp(m - m_new)) if math.isfinite(m) else 0.0
    l_new = l * factor + float(np.exp(block - m_new).sum())
    return m_new, l_new
'''),
    },
    {
        "id": "06-004",
        "exercise": "06.online_update",
        "mistake": "adds the block's exps relative to the OLD maximum, then rescales: the first block gives exp(+inf) and nan",
        "kind": "update_order",
        "source": _online('''    l_new = (l + float(np.exp(block - m).sum())) * math.exp(m - max(m, float(np.max(block))))
    return max(m, float(np.max(block))), l_new
'''),
    },
    {
        "id": "06-005",
        "exercise": "06.online_update",
        "mistake": "no shift at all: l accumulates exp(x) and overflows for scores in the hundreds",
        "kind": "no_max_shift",
        "source": _online('''    m_new = max(m, float(np.max(block)))
    l_new = l + float(np.exp(block).sum())
    return m_new, l_new
'''),
    },
    {
        "id": "06-006",
        "exercise": "06.online_update",
        "mistake": "returns NumPy arrays of shape (1,) instead of two floats",
        "kind": "wrong_type",
        "source": _online('''    m_new = np.maximum(np.array([m]), block.max(keepdims=True))
    l_new = l * np.exp(m - m_new) + np.exp(block - m_new).sum(keepdims=True)
    return m_new, l_new
'''),
    },
    {
        "id": "06-007",
        "exercise": "06.online_update",
        "mistake": "rescales the block's terms instead of the old sum: l + sum(exp(b - m_new)) * exp(m_old - m_new)",
        "kind": "misplaced_rescale",
        "source": _online('''    m_new = max(m, float(np.max(block)))
    factor = math.exp(m - m_new)
    l_new = l + float(np.exp(block - m_new).sum()) * (factor if factor > 0 else 1.0)
    return m_new, l_new
'''),
    },
    # ---- 06.flash_step ------------------------------------------------------------------------------
    {
        "id": "06-008",
        "exercise": "06.flash_step",
        "mistake": "divides acc by the running sum at every tile (normalizes too early)",
        "kind": "normalize_early",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = l * rescale + p.sum(axis=1, keepdims=True)
    acc_new = (acc * rescale + p @ v_tile) / l_new
    return m_new, l_new, acc_new
'''),
    },
    {
        "id": "06-009",
        "exercise": "06.flash_step",
        "mistake": "rescales l but forgets to rescale acc",
        "kind": "missing_rescale",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = l * rescale + p.sum(axis=1, keepdims=True)
    acc_new = acc + p @ v_tile
    return m_new, l_new, acc_new
'''),
    },
    {
        "id": "06-010",
        "exercise": "06.flash_step",
        "mistake": "rescales acc but forgets to rescale l",
        "kind": "missing_rescale",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = l + p.sum(axis=1, keepdims=True)
    acc_new = acc * rescale + p @ v_tile
    return m_new, l_new, acc_new
'''),
    },
    {
        "id": "06-011",
        "exercise": "06.flash_step",
        "mistake": "p.sum() without an axis: adds the whole tile's exps to every row's l",
        "kind": "global_sum",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = l * rescale + p.sum()
    acc_new = acc * rescale + p @ v_tile
    return m_new, l_new, acc_new
'''),
    },
    {
        "id": "06-012",
        "exercise": "06.flash_step",
        "mistake": "l uses the shifted exps but acc adds the unshifted exp(scores) @ v: the two sums are relative to different maxima",
        "kind": "inconsistent_shift",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = l * rescale + p.sum(axis=1, keepdims=True)
    acc_new = acc * rescale + np.exp(scores) @ v_tile
    return m_new, l_new, acc_new
'''),
    },
    {
        "id": "06-013",
        "exercise": "06.flash_step",
        "mistake": "returns acc / l (the normalized output) as the new acc",
        "kind": "normalize_early",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = l * rescale + p.sum(axis=1, keepdims=True)
    return m_new, l_new, (acc * rescale + p @ v_tile) / l_new
'''),
    },
    {
        "id": "06-014",
        "exercise": "06.flash_step",
        "mistake": "the rescale factor inverted: exp(m_new - m_old)",
        "kind": "inverted_rescale",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.where(np.isfinite(m), np.exp(m_new - np.where(np.isfinite(m), m, 0.0)), 0.0)
    p = np.exp(scores - m_new)
    l_new = l * rescale + p.sum(axis=1, keepdims=True)
    acc_new = acc * rescale + p @ v_tile
    return m_new, l_new, acc_new
'''),
    },
    {
        "id": "06-015",
        "exercise": "06.flash_step",
        "mistake": "updates acc in place (acc *= ...; acc += ...): the caller's array changes",
        "kind": "in_place",
        "source": _flash('''    m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l *= rescale
    l += p.sum(axis=1, keepdims=True)
    acc *= rescale
    acc += p @ v_tile
    return m_new, l, acc
'''),
    },
    # ---- 06.tiled_attention -------------------------------------------------------------------------
    {
        "id": "06-016",
        "exercise": "06.tiled_attention",
        "mistake": "forgets the 1/sqrt(d_head) scale on each tile of scores",
        "kind": "missing_scale",
        "source": _tiled(GOOD_TILE_LOOP.replace(" / math.sqrt(d_head)", "")),
    },
    {
        "id": "06-017",
        "exercise": "06.tiled_attention",
        "mistake": "key loop over full tiles only (range(0, k_len - block + 1, block)): drops the last, shorter key tile",
        "kind": "tile_off_by_one",
        "source": _tiled(GOOD_TILE_LOOP.replace("range(0, k_len, block)", "range(0, k_len - block + 1, block)")),
    },
    {
        "id": "06-018",
        "exercise": "06.tiled_attention",
        "mistake": "query loop stops one tile early (range(0, q_len - block, block)): the last query rows stay 0",
        "kind": "tile_off_by_one",
        "source": _tiled(GOOD_TILE_LOOP.replace("range(0, q_len, block)", "range(0, q_len - block, block)")),
    },
    {
        "id": "06-019",
        "exercise": "06.tiled_attention",
        "mistake": "initializes m, l, acc once, outside the query loop: each query block inherits the previous block's state",
        "kind": "state_not_reset",
        "source": _tiled('''    m = np.full((block, 1), -np.inf)
    l = np.zeros((block, 1))
    acc = np.zeros((block, d_value))
    for qs in range(0, q_len, block):
        q_tile = q[qs : qs + block]
        rows = len(q_tile)
        for ks in range(0, k_len, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            m[:rows], l[:rows], acc[:rows] = flash_step(m[:rows], l[:rows], acc[:rows], scores, v[ks : ks + block])
        out[qs : qs + block] = acc[:rows] / l[:rows]
    return out
'''),
    },
    {
        "id": "06-020",
        "exercise": "06.tiled_attention",
        "mistake": "copy-paste slip: the value tile is sliced with the query index (v[qs : qs + block])",
        "kind": "copy_paste",
        "source": _tiled(GOOD_TILE_LOOP.replace("v[ks : ks + block]", "v[qs : qs + block][: len(k[ks : ks + block])]")),
    },
    {
        "id": "06-021",
        "exercise": "06.tiled_attention",
        "mistake": "scales by sqrt(block) (the tile width) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": _tiled(GOOD_TILE_LOOP.replace("math.sqrt(d_head)", "math.sqrt(block)")),
    },
    {
        "id": "06-022",
        "exercise": "06.tiled_attention",
        "mistake": "divides by the running sum inside the key loop and keeps only the last tile's share",
        "kind": "normalize_early",
        "source": _tiled('''    for qs in range(0, q_len, block):
        q_tile = q[qs : qs + block]
        m = np.full((len(q_tile), 1), -np.inf)
        l = np.zeros((len(q_tile), 1))
        acc = np.zeros((len(q_tile), d_value))
        for ks in range(0, k_len, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            m, l, acc = flash_step(m, l, acc, scores, v[ks : ks + block])
            out[qs : qs + block] = acc / l
            acc = np.zeros_like(acc)
    return out
'''),
    },
    # ---- 06.weights_bytes ---------------------------------------------------------------------------
    {
        "id": "06-023",
        "exercise": "06.weights_bytes",
        "mistake": "forgets the heads",
        "kind": "missing_factor",
        "source": '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * q_len * k_len * bytes_per_value
''',
    },
    {
        "id": "06-024",
        "exercise": "06.weights_bytes",
        "mistake": "counts values, not bytes (forgets bytes_per_value)",
        "kind": "missing_factor",
        "source": '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len * k_len
''',
    },
    {
        "id": "06-025",
        "exercise": "06.weights_bytes",
        "mistake": "assumes square weights: q_len * q_len",
        "kind": "square_only",
        "source": '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return batch * heads * q_len * q_len * bytes_per_value
''',
    },
    {
        "id": "06-026",
        "exercise": "06.weights_bytes",
        "mistake": "multiplies by 8 bits per byte: returns bits",
        "kind": "units",
        "source": '''def weights_bytes(batch, heads, q_len, k_len, bytes_per_value):
    return 8 * batch * heads * q_len * k_len * bytes_per_value
''',
    },
    # ---- 06.io_bytes --------------------------------------------------------------------------------
    {
        "id": "06-027",
        "exercise": "06.io_bytes",
        "mistake": "standard pass: counts the scores S once (written) instead of written, read, P written and read (2 n^2 instead of 4 n^2)",
        "kind": "io_count",
        "source": '''import math


def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    standard = (4 * n * d + 2 * n * n) * bytes_per_value
    rows = sram_bytes // (4 * d * bytes_per_value)
    tiled = (2 * n * d + math.ceil(n / rows) * 2 * n * d) * bytes_per_value
    return standard, tiled
''',
    },
    {
        "id": "06-028",
        "exercise": "06.io_bytes",
        "mistake": "number of query tiles n // B (floor): a last, partial tile is not counted",
        "kind": "rounding",
        "source": '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    standard = (4 * n * d + 4 * n * n) * bytes_per_value
    rows = sram_bytes // (4 * d * bytes_per_value)
    tiled = (2 * n * d + (n // rows) * 2 * n * d) * bytes_per_value
    return standard, tiled
''',
    },
    {
        "id": "06-029",
        "exercise": "06.io_bytes",
        "mistake": "tile rows from sram_bytes // (4 * d_head), forgetting the bytes per value",
        "kind": "units",
        "source": '''import math


def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    standard = (4 * n * d + 4 * n * n) * bytes_per_value
    rows = sram_bytes // (4 * d)
    tiled = (2 * n * d + math.ceil(n / rows) * 2 * n * d) * bytes_per_value
    return standard, tiled
''',
    },
    {
        "id": "06-030",
        "exercise": "06.io_bytes",
        "mistake": "counts values, not bytes (forgets bytes_per_value in both totals)",
        "kind": "units",
        "source": '''import math


def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    standard = 4 * n * d + 4 * n * n
    rows = sram_bytes // (4 * d * bytes_per_value)
    tiled = 2 * n * d + math.ceil(n / rows) * 2 * n * d
    return standard, tiled
''',
    },
    {
        "id": "06-031",
        "exercise": "06.io_bytes",
        "mistake": "tiled pass reads K and V once in total, not once per query tile",
        "kind": "io_count",
        "source": '''def io_bytes(seq_len, d_head, sram_bytes, bytes_per_value):
    n, d = seq_len, d_head
    standard = (4 * n * d + 4 * n * n) * bytes_per_value
    tiled = (2 * n * d + 2 * n * d) * bytes_per_value
    return standard, tiled
''',
    },
    # ---- 06.kv_cache_step ---------------------------------------------------------------------------
    {
        "id": "06-032",
        "exercise": "06.kv_cache_step",
        "mistake": "scales the scores by sqrt(d_model) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": _kv('''    q = x_t @ w_q
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    scores = k_cache @ q / math.sqrt(len(x_t))
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return weights @ v_cache, k_cache, v_cache
'''),
    },
    {
        "id": "06-033",
        "exercise": "06.kv_cache_step",
        "mistake": "attends over the cache before appending the new key and value: the token does not see itself (and step 0 has nothing)",
        "kind": "cache_order",
        "source": _kv('''    q = x_t @ w_q
    scores = k_cache @ q / math.sqrt(w_q.shape[1])
    if len(scores):
        weights = np.exp(scores - scores.max())
        output = (weights / weights.sum()) @ v_cache
    else:
        output = np.zeros(w_v.shape[1])
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    return output, k_cache, v_cache
'''),
    },
    {
        "id": "06-034",
        "exercise": "06.kv_cache_step",
        "mistake": "copy-paste slip: appends the new token's key to the value cache too",
        "kind": "copy_paste",
        "source": _kv('''    q = x_t @ w_q
    k_new = x_t @ w_k
    k_cache = np.vstack([k_cache, k_new])
    v_cache = np.vstack([v_cache, k_new[: w_v.shape[1]]])
    scores = k_cache @ q / math.sqrt(w_q.shape[1])
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ v_cache, k_cache, v_cache
'''),
    },
    {
        "id": "06-035",
        "exercise": "06.kv_cache_step",
        "mistake": "prepends the new key (newest first) but appends the new value: keys and values no longer line up",
        "kind": "cache_order",
        "source": _kv('''    q = x_t @ w_q
    k_cache = np.vstack([x_t @ w_k, k_cache])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    scores = k_cache @ q / math.sqrt(w_q.shape[1])
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ v_cache, k_cache, v_cache
'''),
    },
    {
        "id": "06-036",
        "exercise": "06.kv_cache_step",
        "mistake": "attends with the grown caches but returns the old, ungrown ones",
        "kind": "cache_not_returned",
        "source": _kv('''    q = x_t @ w_q
    keys = np.vstack([k_cache, x_t @ w_k])
    values = np.vstack([v_cache, x_t @ w_v])
    scores = keys @ q / math.sqrt(w_q.shape[1])
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ values, k_cache, v_cache
'''),
    },
    {
        "id": "06-037",
        "exercise": "06.kv_cache_step",
        "mistake": "returns the output as a (1, d_value) row instead of (d_value,)",
        "kind": "shape",
        "source": _kv('''    q = (x_t @ w_q)[None, :]
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    scores = q @ k_cache.T / math.sqrt(w_q.shape[1])
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ v_cache, k_cache, v_cache
'''),
    },
    {
        "id": "06-038",
        "exercise": "06.kv_cache_step",
        "mistake": "divides the scores by d_head instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": _kv('''    q = x_t @ w_q
    k_cache = np.vstack([k_cache, x_t @ w_k])
    v_cache = np.vstack([v_cache, x_t @ w_v])
    scores = k_cache @ q / w_q.shape[1]
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ v_cache, k_cache, v_cache
'''),
    },
    # ---- 06.decode_flops ----------------------------------------------------------------------------
    {
        "id": "06-039",
        "exercise": "06.decode_flops",
        "mistake": "with the cache, forgets to project the new token's value (two projections instead of three)",
        "kind": "missing_term",
        "source": '''def decode_flops(prefix_len, d_model, d_head, cached):
    core = 4 * prefix_len * d_head
    if cached:
        return 2 * 2 * d_model * d_head + core
    return 2 * d_model * d_head + 2 * 2 * prefix_len * d_model * d_head + core
''',
    },
    {
        "id": "06-040",
        "exercise": "06.decode_flops",
        "mistake": "without the cache, re-projects the queries of all L positions too (3 projections of L rows)",
        "kind": "extra_term",
        "source": '''def decode_flops(prefix_len, d_model, d_head, cached):
    core = 4 * prefix_len * d_head
    if cached:
        return 3 * 2 * d_model * d_head + core
    return 3 * 2 * prefix_len * d_model * d_head + core
''',
    },
    {
        "id": "06-041",
        "exercise": "06.decode_flops",
        "mistake": "counts a multiply-add as 1 FLOP",
        "kind": "flop_convention",
        "source": '''def decode_flops(prefix_len, d_model, d_head, cached):
    core = 2 * prefix_len * d_head
    if cached:
        return 3 * d_model * d_head + core
    return d_model * d_head + 2 * prefix_len * d_model * d_head + core
''',
    },
    {
        "id": "06-042",
        "exercise": "06.decode_flops",
        "mistake": "core counts only the scores, not the weighted sum of the values",
        "kind": "missing_term",
        "source": '''def decode_flops(prefix_len, d_model, d_head, cached):
    core = 2 * prefix_len * d_head
    if cached:
        return 3 * 2 * d_model * d_head + core
    return 2 * d_model * d_head + 2 * 2 * prefix_len * d_model * d_head + core
''',
    },
    # ---- 06.causal_tiled_attention ------------------------------------------------------------------
    {
        "id": "06-043",
        "exercise": "06.causal_tiled_attention",
        "mistake": "masks j >= i inside the diagonal tile: the diagonal is forbidden, query 0 has no key (nan)",
        "kind": "diagonal_offset",
        "source": _causal('''    for qs in range(0, n, block):
        q_tile = q[qs : qs + block]
        m = np.full((len(q_tile), 1), -np.inf)
        l = np.zeros((len(q_tile), 1))
        acc = np.zeros((len(q_tile), v.shape[1]))
        for ks in range(0, qs + 1, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            i = np.arange(qs, qs + len(q_tile))[:, None]
            j = np.arange(ks, ks + scores.shape[1])[None, :]
            scores = np.where(j >= i, -np.inf, scores)
            m, l, acc = flash_step(m, l, acc, scores, v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out
'''),
    },
    {
        "id": "06-044",
        "exercise": "06.causal_tiled_attention",
        "mistake": "masks with the tile's local indices (j > i within the tile): keys of earlier tiles get masked too",
        "kind": "local_index",
        "source": _causal('''    for qs in range(0, n, block):
        q_tile = q[qs : qs + block]
        m = np.full((len(q_tile), 1), -np.inf)
        l = np.zeros((len(q_tile), 1))
        acc = np.zeros((len(q_tile), v.shape[1]))
        for ks in range(0, qs + 1, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            i = np.arange(len(q_tile))[:, None]
            j = np.arange(scores.shape[1])[None, :]
            scores = np.where(j > i, -np.inf, scores)
            m, l, acc = flash_step(m, l, acc, scores, v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out
'''),
    },
    {
        "id": "06-045",
        "exercise": "06.causal_tiled_attention",
        "mistake": "skips the future tiles but forgets to mask inside the diagonal tile: queries read the keys after them",
        "kind": "missing_mask",
        "source": _causal('''    for qs in range(0, n, block):
        q_tile = q[qs : qs + block]
        m = np.full((len(q_tile), 1), -np.inf)
        l = np.zeros((len(q_tile), 1))
        acc = np.zeros((len(q_tile), v.shape[1]))
        for ks in range(0, qs + 1, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            m, l, acc = flash_step(m, l, acc, scores, v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out
'''),
    },
    {
        "id": "06-046",
        "exercise": "06.causal_tiled_attention",
        "mistake": "stops the key loop before the diagonal tile (range(0, qs, block)): the first block has no key at all",
        "kind": "tile_off_by_one",
        "source": _causal('''    for qs in range(0, n, block):
        q_tile = q[qs : qs + block]
        m = np.full((len(q_tile), 1), -np.inf)
        l = np.zeros((len(q_tile), 1))
        acc = np.zeros((len(q_tile), v.shape[1]))
        for ks in range(0, qs, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            m, l, acc = flash_step(m, l, acc, scores, v[ks : ks + block])
        out[qs : qs + block] = acc / np.maximum(l, 1e-300)
    return out
'''),
    },
    {
        "id": "06-047",
        "exercise": "06.causal_tiled_attention",
        "mistake": "computes every tile, masked correctly: the right output, but the future tiles are computed, which the exercise forbids",
        "kind": "computes_future_tiles",
        "source": _causal('''    for qs in range(0, n, block):
        q_tile = q[qs : qs + block]
        m = np.full((len(q_tile), 1), -np.inf)
        l = np.zeros((len(q_tile), 1))
        acc = np.zeros((len(q_tile), v.shape[1]))
        for ks in range(0, n, block):
            scores = q_tile @ k[ks : ks + block].T / math.sqrt(d_head)
            i = np.arange(qs, qs + len(q_tile))[:, None]
            j = np.arange(ks, ks + scores.shape[1])[None, :]
            scores = np.where(j > i, -1e300, scores)
            m, l, acc = flash_step(m, l, acc, scores, v[ks : ks + block])
        out[qs : qs + block] = acc / l
    return out
'''),
    },
    # ---- 06.kv_cache_bytes --------------------------------------------------------------------------
    {
        "id": "06-048",
        "exercise": "06.kv_cache_bytes",
        "mistake": "counts the keys only (forgets the factor 2 for keys and values)",
        "kind": "missing_factor",
        "source": '''def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return batch * layers * heads * d_head * seq_len * bytes_per_value
''',
    },
    {
        "id": "06-049",
        "exercise": "06.kv_cache_bytes",
        "mistake": "forgets the layers (one layer's cache)",
        "kind": "missing_factor",
        "source": '''def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * heads * d_head * seq_len * bytes_per_value
''',
    },
    {
        "id": "06-050",
        "exercise": "06.kv_cache_bytes",
        "mistake": "returns MiB (divides by 2**20) instead of bytes",
        "kind": "units",
        "source": '''def kv_cache_bytes(batch, layers, heads, d_head, seq_len, bytes_per_value):
    return 2 * batch * layers * heads * d_head * seq_len * bytes_per_value / 2**20
''',
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "06-p01", "prediction": "06.core_slope", "mistake": "the core grows like the projections, linearly", "kind": "scaling", "value": 1},
    {"id": "06-p02", "prediction": "06.core_slope", "mistake": "n queries times n keys times n for the softmax", "kind": "scaling", "value": 3},
    {"id": "06-p03", "prediction": "06.many_heads_time", "mistake": "same FLOPs, same time (the tutorial's claim)", "kind": "flops_not_time", "value": "the same"},
    {"id": "06-p04", "prediction": "06.many_heads_time", "mistake": "smaller heads parallelize better", "kind": "flops_not_time", "value": "faster"},
    {"id": "06-p05", "prediction": "06.naive_memory_doubling", "mistake": "memory doubles with the length", "kind": "scaling", "value": 2},
    {"id": "06-p06", "prediction": "06.naive_memory_doubling", "mistake": "scores and weights both quadratic, so 2 x 4", "kind": "scaling", "value": 8},
]
