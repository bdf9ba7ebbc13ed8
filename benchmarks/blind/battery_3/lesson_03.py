"""Blind battery 3, lesson 03: wrong answers a student could write (see README.md). Never edited to pass."""

from textwrap import dedent

NP = "import math\n\nimport numpy as np\n\nfrom course_utils import numpy_attention\n\n"

SPLIT_OK = dedent("""
    def split_heads(x, num_heads):
        batch, length, d_model = x.shape
        # (batch, length, d_model) -> (batch, length, heads, d_head) -> (batch, heads, length, d_head)
        return x.reshape(batch, length, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)
""")
MERGE_OK = dedent("""
    def merge_heads(x):
        batch, heads, length, d_head = x.shape
        return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * d_head)
""")
ATTEND_OK = dedent("""
    def attend(Q, K, V, mask=None):
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        m = scores.max(axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        e = np.exp(scores - m)
        total = e.sum(axis=-1, keepdims=True)
        w = e / np.where(total > 0, total, 1.0)
        return w @ V, w
""")


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": NP + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- 03.split_heads
    _c(
        "03-001",
        "03.split_heads",
        "one reshape straight to (batch, heads, length, d_head): mixes positions",
        "single-reshape",
        """
    def split_heads(x, num_heads):
        b, n, d = x.shape
        return x.reshape(b, num_heads, n, d // num_heads)
    """,
    ),
    _c(
        "03-002",
        "03.split_heads",
        "reshapes to (batch, length, d_head, heads): head h gets every heads-th feature "
        "(strided) instead of a contiguous block",
        "strided-heads",
        """
    def split_heads(x, num_heads):
        b, n, d = x.shape
        return x.reshape(b, n, d // num_heads, num_heads).transpose(0, 3, 1, 2)
    """,
    ),
    _c(
        "03-003",
        "03.split_heads",
        "forgets the transpose: returns (batch, length, heads, d_head)",
        "missing-transpose",
        """
    def split_heads(x, num_heads):
        b, n, d = x.shape
        return x.reshape(b, n, num_heads, d // num_heads)
    """,
    ),
    _c(
        "03-004",
        "03.split_heads",
        "transposes with .T-style axes (0, 2, 3, 1): (batch, heads, d_head, length)",
        "wrong-transpose",
        """
    def split_heads(x, num_heads):
        b, n, d = x.shape
        return x.reshape(b, n, num_heads, d // num_heads).transpose(0, 2, 3, 1)
    """,
    ),
    _c(
        "03-005",
        "03.split_heads",
        "hard-codes the length from the queries' 5 positions of the lesson's example",
        "hard-coded",
        """
    def split_heads(x, num_heads):
        batch, d_model = x.shape[0], x.shape[-1]
        return x.reshape(batch, 5, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)
    """,
    ),
    _c(
        "03-006",
        "03.split_heads",
        "np.split into heads along the features and stacks them on axis 2 instead of 1",
        "stack-axis",
        """
    def split_heads(x, num_heads):
        return np.stack(np.split(x, num_heads, axis=-1), axis=2)
    """,
    ),
    _c(
        "03-007",
        "03.split_heads",
        "uses swapaxes(1, 3) after the reshape: d_head and length end up swapped",
        "wrong-transpose",
        """
    def split_heads(x, num_heads):
        b, n, d = x.shape
        return np.swapaxes(x.reshape(b, n, num_heads, d // num_heads), 1, 2).swapaxes(2, 3)
    """,
    ),
    _c(
        "03-008",
        "03.split_heads",
        "d_head = num_heads (confuses the two sizes): right only when d_model = heads²",
        "confused-sizes",
        """
    def split_heads(x, num_heads):
        b, n, d = x.shape
        return x.reshape(b, n, d // num_heads, num_heads).swapaxes(1, 2)
    """,
    ),
    # ---- 03.merge_heads
    _c(
        "03-009",
        "03.merge_heads",
        "reshapes without transposing back: head outputs interleaved with positions",
        "missing-transpose",
        """
    def merge_heads(x):
        b, h, n, d = x.shape
        return x.reshape(b, n, h * d)
    """,
    ),
    _c(
        "03-010",
        "03.merge_heads",
        "concatenates the heads along the length axis instead of the features",
        "concat-axis",
        """
    def merge_heads(x):
        heads = [x[:, h] for h in range(x.shape[1])]
        return np.concatenate(heads, axis=1).reshape(x.shape[0], x.shape[2], -1)
    """,
    ),
    _c(
        "03-011",
        "03.merge_heads",
        "transposes (0, 2, 3, 1) before the reshape: features ordered d_head-major (strided)",
        "wrong-transpose",
        """
    def merge_heads(x):
        b, h, n, d = x.shape
        return x.transpose(0, 2, 3, 1).reshape(b, n, h * d)
    """,
    ),
    _c(
        "03-012",
        "03.merge_heads",
        "averages the heads instead of concatenating them",
        "mean-heads",
        """
    def merge_heads(x):
        return x.mean(axis=1)
    """,
    ),
    _c(
        "03-013",
        "03.merge_heads",
        "concatenates the heads in reverse order",
        "head-order",
        """
    def merge_heads(x):
        return np.concatenate([x[:, h] for h in reversed(range(x.shape[1]))], axis=-1)
    """,
    ),
    # ---- 03.multi_head_attention
    _c(
        "03-014",
        "03.multi_head_attention",
        "forgets the output projection W_o",
        "missing-out-proj",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        Q = split_heads(query @ W_q, num_heads)
        K = split_heads(key @ W_k, num_heads)
        V = split_heads(value @ W_v, num_heads)
        out, w = attend(Q, K, V, mask)
        return merge_heads(out), w
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-015",
        "03.multi_head_attention",
        "scales by sqrt(d_model) instead of sqrt(d_head)",
        "d-model-scale",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        d_model = query.shape[-1]
        Q = split_heads(query @ W_q, num_heads)
        K = split_heads(key @ W_k, num_heads)
        V = split_heads(value @ W_v, num_heads)
        scores = Q @ K.swapaxes(-1, -2) / math.sqrt(d_model)
        if mask is not None:
            scores = np.where(mask, scores, -1e9)
        scores = scores - scores.max(-1, keepdims=True)
        w = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
        return merge_heads(w @ V) @ W_o, w
    """,
        pre=SPLIT_OK + MERGE_OK,
    ),
    _c(
        "03-016",
        "03.multi_head_attention",
        "splits the keys at the query length (cross-attention breaks)",
        "query-length",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        b, n, d = query.shape
        def split(t):
            return t.reshape(b, n, num_heads, d // num_heads).transpose(0, 2, 1, 3)
        out, w = attend(split(query @ W_q), split(key @ W_k), split(value @ W_v), mask)
        return merge_heads(out) @ W_o, w
    """,
        pre=MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-017",
        "03.multi_head_attention",
        "ignores the mask argument",
        "ignores-mask",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
        out, w = attend(Q, K, V)
        return merge_heads(out) @ W_o, w
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-018",
        "03.multi_head_attention",
        "projects after splitting: splits the raw inputs and multiplies each head "
        "by the whole W (shapes only work by broadcasting luck) -- here by each head's diagonal block only",
        "block-diagonal",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        d = query.shape[-1]
        dh = d // num_heads
        def proj(x, W):
            heads = split_heads(x, num_heads)  # (batch, heads, length, d_head)
            blocks = np.stack([W[h * dh:(h + 1) * dh, h * dh:(h + 1) * dh] for h in range(num_heads)])
            return heads @ blocks[None]
        out, w = attend(proj(query, W_q), proj(key, W_k), proj(value, W_v), mask)
        return merge_heads(out) @ W_o, w
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-019",
        "03.multi_head_attention",
        "uses W_o.T for the output projection",
        "transpose",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        Q, K, V = split_heads(query @ W_q, num_heads), split_heads(key @ W_k, num_heads), split_heads(value @ W_v, num_heads)
        out, w = attend(Q, K, V, mask)
        return merge_heads(out) @ W_o.T, w
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-020",
        "03.multi_head_attention",
        "returns the weights averaged over the heads (as nn.MultiheadAttention does by default)",
        "averaged-weights",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        Q, K, V = split_heads(query @ W_q, num_heads), split_heads(key @ W_k, num_heads), split_heads(value @ W_v, num_heads)
        out, w = attend(Q, K, V, mask)
        return merge_heads(out) @ W_o, w.mean(axis=1)
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-021",
        "03.multi_head_attention",
        "mask with -1e9 and a plain softmax: a query with no allowed key gets uniform weights",
        "fill-1e9",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        Q, K, V = split_heads(query @ W_q, num_heads), split_heads(key @ W_k, num_heads), split_heads(value @ W_v, num_heads)
        scores = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -1e9)
        scores = scores - scores.max(axis=-1, keepdims=True)
        w = np.exp(scores)
        w = w / w.sum(axis=-1, keepdims=True)
        return merge_heads(w @ V) @ W_o, w
    """,
        pre=SPLIT_OK + MERGE_OK,
    ),
    _c(
        "03-022",
        "03.multi_head_attention",
        "softmax over axis 1 (the heads) instead of the keys",
        "wrong-axis",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        Q, K, V = (split_heads(t, num_heads) for t in (query @ W_q, key @ W_k, value @ W_v))
        scores = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -1e30)
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        w = e / e.sum(axis=1, keepdims=True)
        if mask is not None:
            w = w * mask
        return merge_heads(w @ V) @ W_o, w
    """,
        pre=SPLIT_OK + MERGE_OK,
    ),
    _c(
        "03-023",
        "03.multi_head_attention",
        "the single-reshape split (positions mixed into heads)",
        "single-reshape",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        def split(t):
            b, n, d = t.shape
            return t.reshape(b, num_heads, n, d // num_heads)
        out, w = attend(split(query @ W_q), split(key @ W_k), split(value @ W_v), mask)
        return merge_heads(out) @ W_o, w
    """,
        pre=MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-024",
        "03.multi_head_attention",
        "uses query for the values (self-attention habit: value @ W_v replaced by query @ W_v)",
        "self-attention-habit",
        """
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        Q, K = split_heads(query @ W_q, num_heads), split_heads(key @ W_k, num_heads)
        V = split_heads(key @ W_v, num_heads)
        out, w = attend(Q, K, V, mask)
        return merge_heads(out) @ W_o, w
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    # ---- 03.multi_head_attention_loop
    _c(
        "03-025",
        "03.multi_head_attention_loop",
        "multiplies every head by the whole W_o and sums: heads counted num_heads times against the wrong rows",
        "whole-w-o",
        """
    def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
        d_head = query.shape[-1] // num_heads
        total = 0
        for h in range(num_heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            out, _ = attend(query @ W_q[:, cols], key @ W_k[:, cols], value @ W_v[:, cols])
            padded = np.zeros(out.shape[:-1] + (W_o.shape[0],))
            padded[..., : d_head] = out
            total = total + padded @ W_o
        return total
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "03-026",
        "03.multi_head_attention_loop",
        "slices W_o by columns instead of rows",
        "w-o-columns",
        """
    def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
        d_head = W_q.shape[1] // num_heads
        total = np.zeros(query.shape[:-1] + (W_o.shape[1],))
        for h in range(num_heads):
            s = slice(h * d_head, (h + 1) * d_head)
            out, _ = attend(query @ W_q[:, s], key @ W_k[:, s], value @ W_v[:, s])
            total += out @ W_o[:, s].T
        return total
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "03-027",
        "03.multi_head_attention_loop",
        "slices the rows of W_q, W_k, W_v instead of their columns",
        "row-slices",
        """
    def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
        d_head = W_q.shape[0] // num_heads
        total = 0.0
        for h in range(num_heads):
            s = slice(h * d_head, (h + 1) * d_head)
            out, _ = attend(query[..., s] @ W_q[s], key[..., s] @ W_k[s], value[..., s] @ W_v[s])
            total = total + out[..., :d_head] @ W_o[s]
        return total
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "03-028",
        "03.multi_head_attention_loop",
        "scales each head by sqrt(d_model) instead of sqrt(d_head)",
        "d-model-scale",
        """
    def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
        d_model = query.shape[-1]
        d_head = d_model // num_heads
        result = 0
        for h in range(num_heads):
            c = slice(h * d_head, (h + 1) * d_head)
            q, k, v = query @ W_q[:, c], key @ W_k[:, c], value @ W_v[:, c]
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_model)
            w = np.exp(s - s.max(-1, keepdims=True))
            w /= w.sum(-1, keepdims=True)
            result = result + (w @ v) @ W_o[c]
        return result
    """,
    ),
    _c(
        "03-029",
        "03.multi_head_attention_loop",
        "averages the heads' terms instead of summing them",
        "mean-heads",
        """
    def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
        d_head = query.shape[-1] // num_heads
        terms = []
        for h in range(num_heads):
            c = slice(h * d_head, (h + 1) * d_head)
            out, _ = attend(query @ W_q[:, c], key @ W_k[:, c], value @ W_v[:, c])
            terms.append(out @ W_o[c, :])
        return np.mean(terms, axis=0)
    """,
        pre=ATTEND_OK,
    ),
    _c(
        "03-030",
        "03.multi_head_attention_loop",
        "loop range(num_heads - 1): the last head is left out",
        "off-by-one",
        """
    def multi_head_attention_loop(query, key, value, W_q, W_k, W_v, W_o, num_heads):
        d_head = query.shape[-1] // num_heads
        total = 0
        for h in range(num_heads - 1):
            c = slice(h * d_head, (h + 1) * d_head)
            out, _ = attend(query @ W_q[:, c], key @ W_k[:, c], value @ W_v[:, c])
            total = total + out @ W_o[c]
        return total
    """,
        pre=ATTEND_OK,
    ),
    # ---- 03.count_attention_parameters
    _c(
        "03-031",
        "03.count_attention_parameters",
        "forgets the biases",
        "missing-bias",
        """
    def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
        d_head = d_head or d_model // num_heads
        return 4 * d_model * num_heads * d_head
    """,
    ),
    _c(
        "03-032",
        "03.count_attention_parameters",
        "bias of W_o counted with num_heads·d_head entries instead of d_model",
        "wrong-bias-size",
        """
    def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
        if d_head is None:
            d_head = d_model // num_heads
        inner = num_heads * d_head
        return 4 * d_model * inner + (4 * inner if bias else 0)
    """,
    ),
    _c(
        "03-033",
        "03.count_attention_parameters",
        "assumes square matrices (4·d_model²) whatever d_head is",
        "square-only",
        """
    def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
        return 4 * d_model * d_model + (4 * d_model if bias else 0)
    """,
    ),
    _c(
        "03-034",
        "03.count_attention_parameters",
        "thinks every head has its own four d_model x d_model matrices: multiplies a one-head layer by num_heads",
        "per-head-matrices",
        """
    def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
        one_head = 4 * d_model * d_model + (4 * d_model if bias else 0)
        return num_heads * one_head
    """,
    ),
    _c(
        "03-035",
        "03.count_attention_parameters",
        "ignores bias=False (always adds the biases)",
        "ignores-arg",
        """
    def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
        d_head = d_head if d_head is not None else d_model // num_heads
        inner = num_heads * d_head
        return 3 * (d_model * inner + inner) + inner * d_model + d_model
    """,
    ),
    _c(
        "03-036",
        "03.count_attention_parameters",
        "returns a float (uses / for d_head)",
        "return-type",
        """
    def count_attention_parameters(d_model, num_heads, d_head=None, bias=True):
        d_head = d_model / num_heads if d_head is None else d_head
        inner = num_heads * d_head
        return 3 * (d_model * inner + inner * bias) + inner * d_model + d_model * bias
    """,
    ),
    # ---- 03.attention_flops
    _c(
        "03-037",
        "03.attention_flops",
        "counts a multiply-add as 1 FLOP",
        "flop-factor",
        """
    def attention_flops(batch, q_len, k_len, d_model, num_heads):
        projections = batch * (2 * q_len + 2 * k_len) * d_model * d_model
        core = batch * 2 * q_len * k_len * d_model
        return projections, core
    """,
    ),
    _c(
        "03-038",
        "03.attention_flops",
        "projects all four at the query length (assumes self-attention)",
        "self-attention-only",
        """
    def attention_flops(batch, q_len, k_len, d_model, num_heads):
        projections = batch * 4 * 2 * q_len * d_model * d_model
        core = batch * 2 * 2 * q_len * k_len * d_model
        return projections, core
    """,
    ),
    _c(
        "03-039",
        "03.attention_flops",
        "core per head uses d_model instead of d_head (times the heads)",
        "core-d-model",
        """
    def attention_flops(batch, q_len, k_len, d_model, num_heads):
        projections = 2 * batch * d_model * d_model * (2 * q_len + 2 * k_len)
        core = num_heads * batch * (2 * q_len * d_model * k_len + 2 * q_len * k_len * d_model)
        return projections, core
    """,
    ),
    _c(
        "03-040",
        "03.attention_flops",
        "counts only the scores in the core, not weights @ values",
        "half-core",
        """
    def attention_flops(batch, q_len, k_len, d_model, num_heads):
        d_head = d_model // num_heads
        projections = 2 * batch * d_model * d_model * 2 * (q_len + k_len)
        core = batch * num_heads * 2 * q_len * d_head * k_len
        return projections, core
    """,
    ),
    _c(
        "03-041",
        "03.attention_flops",
        "returns (core, projections) in the wrong order",
        "order",
        """
    def attention_flops(batch, q_len, k_len, d_model, num_heads):
        projections = 4 * batch * d_model**2 * (q_len + k_len)
        core = 4 * batch * q_len * k_len * d_model
        return core, projections
    """,
    ),
    _c(
        "03-042",
        "03.attention_flops",
        "forgets the batch",
        "missing-batch",
        """
    def attention_flops(batch, q_len, k_len, d_model, num_heads):
        projections = 4 * d_model**2 * (q_len + k_len)
        core = 4 * q_len * k_len * d_model
        return projections, core
    """,
    ),
    # ---- 03.grouped_query_attention
    _c(
        "03-043",
        "03.grouped_query_attention",
        "np.tile the key/value heads (interleaved g0 g1 g0 g1) instead of repeating each (g0 g0 g1 g1)",
        "tile-not-repeat",
        """
    def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
        Q = split_heads(query @ W_q, num_heads)
        K = split_heads(key @ W_k, num_kv_heads)
        V = split_heads(value @ W_v, num_kv_heads)
        group = num_heads // num_kv_heads
        K, V = np.tile(K, (1, group, 1, 1)), np.tile(V, (1, group, 1, 1))
        out, _ = attend(Q, K, V)
        return merge_heads(out) @ W_o
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-044",
        "03.grouped_query_attention",
        "query head h uses kv head h % num_kv_heads",
        "modulo-group",
        """
    def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
        Q = split_heads(query @ W_q, num_heads)
        K = split_heads(key @ W_k, num_kv_heads)
        V = split_heads(value @ W_v, num_kv_heads)
        idx = np.arange(num_heads) % num_kv_heads
        out, _ = attend(Q, K[:, idx], V[:, idx])
        return merge_heads(out) @ W_o
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-045",
        "03.grouped_query_attention",
        "splits the keys into num_heads heads (d_head too small)",
        "kv-head-count",
        """
    def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
        Q = split_heads(query @ W_q, num_heads)
        K = split_heads(key @ W_k, num_heads)
        V = split_heads(value @ W_v, num_heads)
        Kf = np.concatenate([K] * (Q.shape[-1] // K.shape[-1]), axis=-1)
        Vf = np.concatenate([V] * (Q.shape[-1] // V.shape[-1]), axis=-1)
        out, _ = attend(Q, Kf, Vf)
        return merge_heads(out) @ W_o
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    _c(
        "03-046",
        "03.grouped_query_attention",
        "scales by sqrt of the key width num_kv_heads·d_head",
        "wrong-scale",
        """
    def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
        Q = split_heads(query @ W_q, num_heads)
        K = np.repeat(split_heads(key @ W_k, num_kv_heads), num_heads // num_kv_heads, axis=1)
        V = np.repeat(split_heads(value @ W_v, num_kv_heads), num_heads // num_kv_heads, axis=1)
        s = Q @ K.swapaxes(-1, -2) / np.sqrt(W_k.shape[1])
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return merge_heads(w @ V) @ W_o
    """,
        pre=SPLIT_OK + MERGE_OK,
    ),
    _c(
        "03-047",
        "03.grouped_query_attention",
        "returns (output, weights) although only the output is asked for",
        "return-arity",
        """
    def grouped_query_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, num_kv_heads):
        g = num_heads // num_kv_heads
        Q = split_heads(query @ W_q, num_heads)
        K = np.repeat(split_heads(key @ W_k, num_kv_heads), g, axis=1)
        V = np.repeat(split_heads(value @ W_v, num_kv_heads), g, axis=1)
        out, w = attend(Q, K, V)
        return merge_heads(out) @ W_o, w
    """,
        pre=SPLIT_OK + MERGE_OK + ATTEND_OK,
    ),
    # ---- 03.block_crossover
    _c(
        "03-048",
        "03.block_crossover",
        "forgets the MLP: the sublayer's crossover 2·d_model",
        "missing-mlp",
        """
    def block_crossover(d_model, mlp_ratio=4, causal=False):
        n = 2 * d_model
        return 2 * n if causal else n
    """,
    ),
    _c(
        "03-049",
        "03.block_crossover",
        "counts one MLP matrix instead of two",
        "one-mlp-matrix",
        """
    def block_crossover(d_model, mlp_ratio=4, causal=False):
        linear_per_token = 8 * d_model**2 + 2 * mlp_ratio * d_model**2
        core_per_token_pair = 2 * d_model if causal else 4 * d_model
        return math.ceil(linear_per_token / core_per_token_pair)
    """,
    ),
    _c(
        "03-050",
        "03.block_crossover",
        "ignores causal",
        "ignores-arg",
        """
    def block_crossover(d_model, mlp_ratio=4, causal=False):
        return math.ceil((2 + mlp_ratio) * d_model)
    """,
    ),
    _c(
        "03-051",
        "03.block_crossover",
        "causal halves the crossover instead of doubling it",
        "causal-direction",
        """
    def block_crossover(d_model, mlp_ratio=4, causal=False):
        n = (2 + mlp_ratio) * d_model
        return math.ceil(n / 2) if causal else math.ceil(n)
    """,
    ),
    _c(
        "03-052",
        "03.block_crossover",
        "returns a float (no rounding up to a whole number)",
        "return-type",
        """
    def block_crossover(d_model, mlp_ratio=4, causal=False):
        n = (8 + 4 * mlp_ratio) * d_model / 4
        return 2 * n if causal else n
    """,
    ),
    _c(
        "03-053",
        "03.block_crossover",
        "searches n upward but tests core > linear (strict): one token too many when they are equal",
        "off-by-one",
        """
    def block_crossover(d_model, mlp_ratio=4, causal=False):
        n = 1
        while True:
            linear = 8 * n * d_model**2 + 4 * mlp_ratio * n * d_model**2
            core = (2 if causal else 4) * n * n * d_model
            if core > linear:
                return n
            n += 1
    """,
    ),
    # ---- predictions
    _p("03-p01", "03.split_shape", "heads after the length axis", "axis-order", (2, 5, 2, 4)),
    _p("03-p02", "03.head1_features", "heads take every other feature", "strided", "odd ones"),
    _p(
        "03-p03",
        "03.single_reshape_content",
        "a reshape to the right shape puts the right numbers there",
        "single-reshape",
        "position 1's features 0..3",
    ),
    _p("03-p04", "03.parameters_d512", "forgets the biases", "missing-bias", 4 * 512 * 512),
    _p("03-p05", "03.parameters_heads", "each head has its own matrices", "per-head", "8 times more"),
    _p("03-p06", "03.crossover_n", "crossover where n equals d_model", "crossover", 512),
    _p("03-p07", "03.cross_output_shape", "output as long as the keys", "cross-shape", (2, 6, 8)),
    _p("03-p08", "03.cross_weights_shape", "forgets the heads axis", "cross-shape", (2, 3, 6)),
]
