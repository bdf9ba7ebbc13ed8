"""Blind battery 3, lesson 02: wrong answers a student could write (see README.md). Never edited to pass.

No case for 02.causal_mask (being folded into 02.cached_causal_mask).
"""

from textwrap import dedent

TORCH = "import math\n\nimport torch\nimport torch.nn.functional as F\n\n"

MASKED_SOFTMAX_OK = dedent("""
    def masked_softmax(scores, mask):
        scores = scores.masked_fill(~mask, float("-inf"))
        row_max = scores.amax(dim=-1, keepdim=True)
        row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
        e = torch.exp(scores - row_max)
        total = e.sum(dim=-1, keepdim=True)
        return e / torch.where(total > 0, total, torch.ones_like(total))
""")
PADDING_OK = dedent("""
    def padding_mask(lengths, max_len, side="right"):
        positions = torch.arange(max_len, device=lengths.device)
        if side == "left":
            return positions[None, :] >= max_len - lengths[:, None]
        return positions[None, :] < lengths[:, None]
""")
CAUSAL_OK = dedent("""
    def causal_mask(seq_len):
        return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
""")


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": TORCH + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- 02.padding_mask
    _c(
        "02-001",
        "02.padding_mask",
        "ignores side: always pads on the right",
        "ignores-arg",
        """
    def padding_mask(lengths, max_len, side="right"):
        return torch.arange(max_len)[None, :] < lengths[:, None]
    """,
    ),
    _c(
        "02-002",
        "02.padding_mask",
        "left padding off by one: > instead of >= (one real token too few)",
        "off-by-one",
        """
    def padding_mask(lengths, max_len, side="right"):
        pos = torch.arange(max_len)[None, :]
        if side == "left":
            return pos > max_len - lengths[:, None]
        return pos < lengths[:, None]
    """,
    ),
    _c(
        "02-003",
        "02.padding_mask",
        "<= instead of <: one padding position counted as real",
        "off-by-one",
        """
    def padding_mask(lengths, max_len, side="right"):
        pos = torch.arange(max_len).unsqueeze(0)
        if side == "left":
            return pos >= max_len - lengths.unsqueeze(1)
        return pos <= lengths.unsqueeze(1)
    """,
    ),
    _c(
        "02-004",
        "02.padding_mask",
        "inverted polarity: True at the padding (PyTorch's key_padding_mask convention)",
        "polarity",
        """
    def padding_mask(lengths, max_len, side="right"):
        pos = torch.arange(max_len)[None, :]
        if side == "left":
            return pos < max_len - lengths[:, None]
        return pos >= lengths[:, None]
    """,
    ),
    _c(
        "02-005",
        "02.padding_mask",
        "returns a 0/1 long tensor instead of bool",
        "dtype",
        """
    def padding_mask(lengths, max_len, side="right"):
        pos = torch.arange(max_len)[None, :]
        if side == "left":
            return (pos >= max_len - lengths[:, None]).long()
        return (pos < lengths[:, None]).long()
    """,
    ),
    _c(
        "02-006",
        "02.padding_mask",
        "width from lengths.max() instead of max_len",
        "wrong-width",
        """
    def padding_mask(lengths, max_len, side="right"):
        width = int(lengths.max())
        pos = torch.arange(width)[None, :]
        if side == "left":
            return pos >= width - lengths[:, None]
        return pos < lengths[:, None]
    """,
    ),
    _c(
        "02-007",
        "02.padding_mask",
        "builds a list of lists in a loop and returns it without making a tensor",
        "return-type",
        """
    def padding_mask(lengths, max_len, side="right"):
        rows = []
        for n in lengths.tolist():
            row = [True] * n + [False] * (max_len - n)
            rows.append(row[::-1] if side == "left" else row)
        return rows
    """,
    ),
    _c(
        "02-008",
        "02.padding_mask",
        "left padding: flips the batch order (flip(0)) instead of the positions",
        "wrong-flip",
        """
    def padding_mask(lengths, max_len, side="right"):
        right = torch.arange(max_len)[None, :] < lengths[:, None]
        return right.flip(0) if side == "left" else right
    """,
    ),
    _c(
        "02-009",
        "02.padding_mask",
        "left padding computed by changing lengths in place (lengths.neg_().add_), which changes the caller's tensor",
        "in-place",
        """
    def padding_mask(lengths, max_len, side="right"):
        pos = torch.arange(max_len)[None, :]
        if side == "left":
            start = lengths.neg_().add_(max_len)
            return pos >= start[:, None]
        return pos < lengths[:, None]
    """,
    ),
    _c(
        "02-010",
        "02.padding_mask",
        "returns a NumPy array",
        "return-type",
        """
    import numpy as np

    def padding_mask(lengths, max_len, side="right"):
        pos = np.arange(max_len)[None, :]
        n = lengths.numpy()[:, None]
        return pos >= max_len - n if side == "left" else pos < n
    """,
    ),
    _c(
        "02-011",
        "02.padding_mask",
        "left padding as the first lengths[b] positions shifted by one (uses max_len - lengths - 1)",
        "off-by-one",
        """
    def padding_mask(lengths, max_len, side="right"):
        idx = torch.arange(max_len).expand(len(lengths), max_len)
        if side == "left":
            return idx >= (max_len - lengths - 1).unsqueeze(-1)
        return idx < lengths.unsqueeze(-1)
    """,
    ),
    # ---- 02.masked_softmax
    _c(
        "02-012",
        "02.masked_softmax",
        "fills with -1e9 then a plain softmax: a row with no allowed key becomes uniform, not zeros",
        "fill-1e9",
        """
    def masked_softmax(scores, mask):
        return torch.softmax(scores.masked_fill(mask == 0, -1e9), dim=-1)
    """,
    ),
    _c(
        "02-013",
        "02.masked_softmax",
        "fills with -inf then a plain softmax: NaN rows for empty sequences",
        "fill-inf",
        """
    def masked_softmax(scores, mask):
        return F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    """,
    ),
    _c(
        "02-014",
        "02.masked_softmax",
        "adds a float bias (0 allowed, -inf forbidden), softmax, then nan_to_num: the forward pass gives zeros but "
        "the NaN of an empty row flows back through the addition into the gradient",
        "nan-grad",
        """
    def masked_softmax(scores, mask):
        bias = torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores + bias, dim=-1), nan=0.0)
    """,
    ),
    _c(
        "02-015",
        "02.masked_softmax",
        "additive -1e9 bias, written as scores + (~mask) * -1e9: an empty row gets uniform weights",
        "fill-1e9",
        """
    def masked_softmax(scores, mask):
        return torch.softmax(scores + (~mask).to(scores.dtype) * -1e9, dim=-1)
    """,
    ),
    _c(
        "02-016",
        "02.masked_softmax",
        "softmax first, then multiply by the mask: rows no longer sum to 1",
        "mask-after-softmax",
        """
    def masked_softmax(scores, mask):
        return torch.softmax(scores, dim=-1) * mask
    """,
    ),
    _c(
        "02-017",
        "02.masked_softmax",
        "softmax, mask, renormalise: empty rows divide 0 by 0 (NaN)",
        "mask-after-softmax",
        """
    def masked_softmax(scores, mask):
        w = torch.softmax(scores, dim=-1) * mask
        return w / w.sum(dim=-1, keepdim=True)
    """,
    ),
    _c(
        "02-018",
        "02.masked_softmax",
        "softmax, mask, renormalise with an epsilon: when a forbidden key has the "
        "largest score (scores in the thousands) the allowed weights underflow and the row comes out 0",
        "mask-after-softmax",
        """
    def masked_softmax(scores, mask):
        w = F.softmax(scores, dim=-1) * mask.to(scores.dtype)
        return w / (w.sum(dim=-1, keepdim=True) + 1e-9)
    """,
    ),
    _c(
        "02-019",
        "02.masked_softmax",
        "fills forbidden scores with 0 instead of -inf: forbidden keys still get weight",
        "fill-zero",
        """
    def masked_softmax(scores, mask):
        return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)
    """,
    ),
    _c(
        "02-020",
        "02.masked_softmax",
        "mask polarity reversed: fills where mask is True",
        "polarity",
        """
    def masked_softmax(scores, mask):
        scores = scores.masked_fill(mask, float("-inf"))
        m = scores.amax(-1, keepdim=True)
        m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        e = (scores - m).exp()
        s = e.sum(-1, keepdim=True)
        return e / s.clamp_min(1e-30)
    """,
    ),
    _c(
        "02-021",
        "02.masked_softmax",
        "adds the bool mask as a float (1 at allowed keys, 0 elsewhere) instead of -inf at forbidden keys",
        "float-mask",
        """
    def masked_softmax(scores, mask):
        return torch.softmax(scores + mask.float(), dim=-1)
    """,
    ),
    _c(
        "02-022",
        "02.masked_softmax",
        "adds log(mask): -inf at forbidden keys, then a plain softmax (NaN rows)",
        "log-mask",
        """
    def masked_softmax(scores, mask):
        return torch.softmax(scores + torch.log(mask.to(scores.dtype)), dim=-1)
    """,
    ),
    _c(
        "02-023",
        "02.masked_softmax",
        "softmax over dim=-2 (the queries)",
        "wrong-axis",
        """
    def masked_softmax(scores, mask):
        scores = scores.masked_fill(~mask, -1e30)
        w = torch.softmax(scores, dim=-2) * mask
        return w
    """,
    ),
    _c(
        "02-024",
        "02.masked_softmax",
        "right values, but masked_fill_ in place: the caller's scores are overwritten with -inf",
        "in-place",
        """
    def masked_softmax(scores, mask):
        scores.masked_fill_(~mask, float("-inf"))
        m = scores.amax(dim=-1, keepdim=True).clamp_min(-1e30)
        e = torch.exp(scores - m)
        d = e.sum(dim=-1, keepdim=True)
        return e / torch.where(d == 0, torch.ones_like(d), d)
    """,
    ),
    _c(
        "02-025",
        "02.masked_softmax",
        "right forward, but .detach() on the result cuts the gradient to the scores",
        "cuts-grad",
        """
    def masked_softmax(scores, mask):
        s = scores.masked_fill(~mask, float("-inf"))
        m = s.amax(-1, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        e = torch.exp(s - m)
        total = e.sum(-1, keepdim=True)
        return (e / torch.where(total > 0, total, torch.ones_like(total))).detach()
    """,
    ),
    _c(
        "02-026",
        "02.masked_softmax",
        "computes the weights under torch.no_grad() 'to avoid NaN in backward': no gradient at all",
        "cuts-grad",
        """
    def masked_softmax(scores, mask):
        with torch.no_grad():
            w = torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)
            w = w * mask.any(dim=-1, keepdim=True)
        return w
    """,
    ),
    _c(
        "02-027",
        "02.masked_softmax",
        "goes through NumPy to reuse lesson 01's softmax: the result is a NumPy array and the graph is lost",
        "numpy-roundtrip",
        """
    import numpy as np

    def masked_softmax(scores, mask):
        s = np.where(mask.numpy(), scores.detach().numpy(), -np.inf)
        m = np.max(s, axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        e = np.exp(s - m)
        total = e.sum(-1, keepdims=True)
        return e / np.where(total > 0, total, 1.0)
    """,
    ),
    _c(
        "02-028",
        "02.masked_softmax",
        "subtracts the max of the unmasked scores and multiplies by the mask: a large "
        "forbidden score makes every allowed weight underflow to 0",
        "max-over-all",
        """
    def masked_softmax(scores, mask):
        e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
        total = e.sum(dim=-1, keepdim=True)
        return e / total.clamp(min=1e-12)
    """,
    ),
    _c(
        "02-029",
        "02.masked_softmax",
        "uses 1 - mask to invert a bool mask (TypeError in PyTorch)",
        "crash-bool-sub",
        """
    def masked_softmax(scores, mask):
        return torch.softmax(scores.masked_fill((1 - mask).bool(), -1e9), dim=-1)
    """,
    ),
    _c(
        "02-030",
        "02.masked_softmax",
        "subtracts the max of the whole tensor and masks by multiplying: a row far below the largest score "
        "underflows to all zeros",
        "global-max",
        """
    def masked_softmax(scores, mask):
        e = torch.exp(scores - scores.max()) * mask
        return e / e.sum(-1, keepdim=True).clamp_min(1e-300)
    """,
    ),
    # ---- 02.masked_attention
    _c(
        "02-031",
        "02.masked_attention",
        "key.transpose(1, 2): right for 3-D tensors only, swaps heads and length in 4-D",
        "transpose-fixed-dims",
        """
    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(1, 2) / math.sqrt(query.shape[-1])
        if mask is not None:
            return masked_softmax(scores, mask) @ value, masked_softmax(scores, mask)
        w = torch.softmax(scores, dim=-1)
        return w @ value, w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-032",
        "02.masked_attention",
        "does not handle mask=None (~None raises)",
        "crash-none",
        """
    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        w = masked_softmax(scores, mask)
        return w @ value, w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-033",
        "02.masked_attention",
        "scales by sqrt(k_len) instead of sqrt(d_head)",
        "wrong-dim",
        """
    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / math.sqrt(key.shape[-2])
        if mask is None:
            mask = torch.ones_like(scores, dtype=torch.bool)
        w = masked_softmax(scores, mask)
        return w @ value, w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-034",
        "02.masked_attention",
        "forgets the 1/sqrt(d_head) scale",
        "missing-scale",
        """
    def masked_attention(query, key, value, mask=None):
        scores = torch.matmul(query, key.transpose(-2, -1))
        if mask is not None:
            w = masked_softmax(scores, mask)
        else:
            w = scores.softmax(-1)
        return torch.matmul(w, value), w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-035",
        "02.masked_attention",
        "-1e9 fill with a plain softmax (the widely copied tutorial's line): empty rows average all values",
        "fill-1e9",
        """
    def masked_attention(query, key, value, mask=None):
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        return torch.matmul(p_attn, value), p_attn
    """,
    ),
    _c(
        "02-036",
        "02.masked_attention",
        "scales by sqrt of the value width (d_value) instead of d_head",
        "wrong-dim",
        """
    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / value.shape[-1] ** 0.5
        w = masked_softmax(scores, mask if mask is not None else torch.ones((), dtype=torch.bool))
        return w @ value, w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-037",
        "02.masked_attention",
        "masks the weights after a plain softmax (multiply by the mask), no renormalisation",
        "mask-after-softmax",
        """
    def masked_attention(query, key, value, mask=None):
        w = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)
        if mask is not None:
            w = w * mask
        return w @ value, w
    """,
    ),
    _c(
        "02-038",
        "02.masked_attention",
        "output from F.scaled_dot_product_attention, but the returned weights are a "
        "plain softmax that ignores the mask",
        "weights-unmasked",
        """
    def masked_attention(query, key, value, mask=None):
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
        w = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)
        return out, w
    """,
    ),
    _c(
        "02-039",
        "02.masked_attention",
        "mask polarity reversed (masked_fill where the mask is True)",
        "polarity",
        """
    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
        if mask is not None:
            w = masked_softmax(scores, ~mask)
        else:
            w = torch.softmax(scores, -1)
        return w @ value, w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-040",
        "02.masked_attention",
        "detaches the weights before multiplying by the values: no gradient reaches the queries and keys",
        "cuts-grad",
        """
    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
        w = masked_softmax(scores, mask) if mask is not None else torch.softmax(scores, -1)
        w = w.detach()
        return w @ value, w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-041",
        "02.masked_attention",
        "casts the inputs to float32 ('the default dtype'): float64 inputs come back as float32 and lose precision",
        "dtype",
        """
    def masked_attention(query, key, value, mask=None):
        query, key, value = query.float(), key.float(), value.float()
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
        w = masked_softmax(scores, mask) if mask is not None else torch.softmax(scores, -1)
        return w @ value, w
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    _c(
        "02-042",
        "02.masked_attention",
        "returns (weights, output)",
        "order",
        """
    def masked_attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
        w = masked_softmax(scores, mask) if mask is not None else torch.softmax(scores, -1)
        return w, w @ value
    """,
        pre=MASKED_SOFTMAX_OK,
    ),
    # ---- 02.decoder_mask
    _c(
        "02-043",
        "02.decoder_mask",
        "(batch, seq_len, seq_len) without the head axis: broadcasting lines the batch up with the heads",
        "missing-head-axis",
        """
    def decoder_mask(lengths, seq_len):
        return padding_mask(lengths, seq_len)[:, None, :] & causal_mask(seq_len)[None]
    """,
        pre=PADDING_OK + CAUSAL_OK,
    ),
    _c(
        "02-044",
        "02.decoder_mask",
        "puts the padding on the query axis ([:, None, :, None]) instead of the key axis",
        "wrong-axis",
        """
    def decoder_mask(lengths, seq_len):
        pad = padding_mask(lengths, seq_len)
        return pad[:, None, :, None] & causal_mask(seq_len)
    """,
        pre=PADDING_OK + CAUSAL_OK,
    ),
    _c(
        "02-045",
        "02.decoder_mask",
        "combines with | instead of &: a query may read the future real tokens",
        "or-not-and",
        """
    def decoder_mask(lengths, seq_len):
        return padding_mask(lengths, seq_len)[:, None, None, :] | causal_mask(seq_len)
    """,
        pre=PADDING_OK + CAUSAL_OK,
    ),
    _c(
        "02-046",
        "02.decoder_mask",
        "causal part from triu: the future instead of the past",
        "triu",
        """
    def decoder_mask(lengths, seq_len):
        causal = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool))
        return padding_mask(lengths, seq_len)[:, None, None, :] & causal
    """,
        pre=PADDING_OK,
    ),
    _c(
        "02-047",
        "02.decoder_mask",
        "tril with diagonal=-1: a query may not read itself",
        "off-by-one",
        """
    def decoder_mask(lengths, seq_len):
        causal = torch.tril(torch.ones(seq_len, seq_len), diagonal=-1).bool()
        return padding_mask(lengths, seq_len).unsqueeze(1).unsqueeze(2) & causal
    """,
        pre=PADDING_OK,
    ),
    _c(
        "02-048",
        "02.decoder_mask",
        "expands to 8 heads (.expand(-1, 8, -1, -1)) instead of size 1",
        "fixed-heads",
        """
    def decoder_mask(lengths, seq_len):
        m = padding_mask(lengths, seq_len)[:, None, None, :] & causal_mask(seq_len)
        return m.expand(-1, 8, -1, -1)
    """,
        pre=PADDING_OK + CAUSAL_OK,
    ),
    _c(
        "02-049",
        "02.decoder_mask",
        "returns a float 0/1 mask",
        "dtype",
        """
    def decoder_mask(lengths, seq_len):
        pad = padding_mask(lengths, seq_len).float()[:, None, None, :]
        return pad * causal_mask(seq_len).float()
    """,
        pre=PADDING_OK + CAUSAL_OK,
    ),
    _c(
        "02-050",
        "02.decoder_mask",
        "takes the width from lengths.max() instead of seq_len",
        "wrong-width",
        """
    def decoder_mask(lengths, seq_len):
        n = int(lengths.max())
        return padding_mask(lengths, n)[:, None, None, :] & causal_mask(n)
    """,
        pre=PADDING_OK + CAUSAL_OK,
    ),
    _c(
        "02-051",
        "02.decoder_mask",
        "puts the batch axis second: (1, batch, seq_len, seq_len)",
        "axis-order",
        """
    def decoder_mask(lengths, seq_len):
        return (padding_mask(lengths, seq_len)[:, None, :] & causal_mask(seq_len)).unsqueeze(0)
    """,
        pre=PADDING_OK + CAUSAL_OK,
    ),
    # ---- 02.leaks
    _c(
        "02-052",
        "02.leaks",
        "tests only one split point (the middle)",
        "one-split",
        """
    def leaks(attend, seq_len):
        t = seq_len // 2
        x = torch.randn(1, seq_len, 8, dtype=torch.float64)
        y = x.clone()
        y[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        return not torch.allclose(attend(x)[:, : t + 1], attend(y)[:, : t + 1])
    """,
    ),
    _c(
        "02-053",
        "02.leaks",
        "compares with a loose tolerance (atol=1e-4): a tiny leak goes unnoticed",
        "loose-tolerance",
        """
    def leaks(attend, seq_len):
        for t in range(seq_len - 1):
            x = torch.randn(1, seq_len, 8, dtype=torch.float64)
            y = x.clone()
            y[:, t + 1 :] = torch.randn_like(y[:, t + 1 :])
            if not torch.allclose(attend(x)[:, : t + 1], attend(y)[:, : t + 1], atol=1e-4):
                return True
        return False
    """,
    ),
    _c(
        "02-054",
        "02.leaks",
        "looks at the outputs after t (which may change) instead of those up to t",
        "inverted-slice",
        """
    def leaks(attend, seq_len):
        for t in range(seq_len - 1):
            x = torch.randn(1, seq_len, 8, dtype=torch.float64)
            y = x.clone()
            y[:, t + 1 :] += 1.0
            if not torch.allclose(attend(x)[:, t + 1 :], attend(y)[:, t + 1 :]):
                return True
        return False
    """,
    ),
    _c(
        "02-055",
        "02.leaks",
        "changes tokens from t on (t included), so every causal layer looks leaky",
        "off-by-one",
        """
    def leaks(attend, seq_len):
        for t in range(seq_len):
            x = torch.randn(1, seq_len, 8, dtype=torch.float64)
            y = x.clone()
            y[:, t:] = torch.randn_like(y[:, t:])
            if not torch.equal(attend(x)[:, : t + 1], attend(y)[:, : t + 1]):
                return True
        return False
    """,
    ),
    _c(
        "02-056",
        "02.leaks",
        "changes only the last token: a layer where output 0 reads token 1 passes",
        "last-token-only",
        """
    def leaks(attend, seq_len):
        x = torch.randn(1, seq_len, 8, dtype=torch.float64)
        y = x.clone()
        y[:, -1] = torch.randn(8, dtype=torch.float64)
        return not torch.allclose(attend(x)[:, :-1], attend(y)[:, :-1], rtol=0, atol=1e-12)
    """,
    ),
    _c(
        "02-057",
        "02.leaks",
        "aliasing: y = x (no clone) and then edits y, so both runs see the same changed tokens and nothing ever leaks",
        "aliasing",
        """
    def leaks(attend, seq_len):
        for t in range(seq_len - 1):
            x = torch.randn(1, seq_len, 8, dtype=torch.float64)
            y = x
            y[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
            if not torch.allclose(attend(x)[:, : t + 1], attend(y)[:, : t + 1], rtol=0, atol=0):
                return True
        return False
    """,
    ),
    _c(
        "02-058",
        "02.leaks",
        "returns True when no output changes (the answer inverted)",
        "inverted",
        """
    def leaks(attend, seq_len):
        for t in range(seq_len - 1):
            x = torch.randn(1, seq_len, 8, dtype=torch.float64)
            y = x.clone()
            y[:, t + 1 :] = torch.randn_like(y[:, t + 1 :])
            if not torch.allclose(attend(x)[:, : t + 1], attend(y)[:, : t + 1], rtol=0, atol=0):
                return False
        return True
    """,
    ),
    _c(
        "02-059",
        "02.leaks",
        "also demands that output t changes when token t changes: a layer that masks too much is called leaky",
        "too-much-mask",
        """
    def leaks(attend, seq_len):
        for t in range(seq_len - 1):
            x = torch.randn(1, seq_len, 8, dtype=torch.float64)
            y = x.clone()
            y[:, t + 1 :] = torch.randn_like(y[:, t + 1 :])
            if not torch.equal(attend(x)[:, : t + 1], attend(y)[:, : t + 1]):
                return True
            z = x.clone()
            z[:, t] += 1.0
            if torch.equal(attend(x)[:, t], attend(z)[:, t]):
                return True
        return False
    """,
    ),
    _c(
        "02-060",
        "02.leaks",
        "loop starts at t = 1: the split after token 0 is never tested",
        "off-by-one",
        """
    def leaks(attend, seq_len):
        for t in range(1, seq_len - 1):
            x = torch.randn(1, seq_len, 8, dtype=torch.float64)
            y = x.clone()
            y[:, t + 1 :] = torch.randn_like(y[:, t + 1 :])
            if (attend(x)[:, : t + 1] - attend(y)[:, : t + 1]).abs().max() > 0:
                return True
        return False
    """,
    ),
    # ---- 02.cached_causal_mask
    _c(
        "02-061",
        "02.cached_causal_mask",
        "top-left alignment (tril of (q_len, k_len)): right when q_len == k_len, but cached queries see too few keys",
        "top-left",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        mask = torch.tril(torch.ones(q_len, k_len, dtype=torch.bool))
        if window is not None:
            mask &= ~torch.tril(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=-window)
        return mask
    """,
    ),
    _c(
        "02-062",
        "02.cached_causal_mask",
        "offset with the wrong sign (diagonal = q_len - k_len)",
        "offset-sign",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        i = torch.arange(q_len)[:, None]
        j = torch.arange(k_len)[None, :]
        pos = i - (k_len - q_len)
        mask = j <= pos
        if window is not None:
            mask &= j > pos - window
        return mask
    """,
    ),
    _c(
        "02-063",
        "02.cached_causal_mask",
        "window off by one (j >= pos - window): window + 1 keys per query",
        "window-off-by-one",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        pos = torch.arange(q_len)[:, None] + (k_len - q_len)
        j = torch.arange(k_len)[None, :]
        mask = j <= pos
        if window is not None:
            mask = mask & (j >= pos - window)
        return mask
    """,
    ),
    _c(
        "02-064",
        "02.cached_causal_mask",
        "window as a distance |i - j| < window without the causal part: reads the future when a window is given",
        "symmetric-window",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        pos = torch.arange(k_len - q_len, k_len)[:, None]
        j = torch.arange(k_len)[None, :]
        if window is not None:
            return (pos - j).abs() < window
        return j <= pos
    """,
    ),
    _c(
        "02-065",
        "02.cached_causal_mask",
        "tril with diagonal = k_len - q_len - 1: no query reads itself",
        "off-by-one",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        ones = torch.ones(q_len, k_len, dtype=torch.bool)
        mask = torch.tril(ones, diagonal=k_len - q_len - 1)
        if window is not None:
            mask &= torch.triu(ones, diagonal=k_len - q_len - window)
        return mask
    """,
    ),
    _c(
        "02-066",
        "02.cached_causal_mask",
        "triu instead of tril: every query reads the future",
        "triu",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        mask = torch.triu(torch.ones(q_len, k_len), diagonal=k_len - q_len).bool()
        if window is not None:
            mask &= torch.tril(torch.ones(q_len, k_len), diagonal=k_len - q_len + window - 1).bool()
        return mask
    """,
    ),
    _c(
        "02-067",
        "02.cached_causal_mask",
        "returns a float 0/1 tensor",
        "dtype",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        mask = torch.tril(torch.ones(q_len, k_len), diagonal=k_len - q_len)
        if window is not None:
            mask = mask * torch.triu(torch.ones(q_len, k_len), diagonal=k_len - q_len - window + 1)
        return mask
    """,
    ),
    _c(
        "02-068",
        "02.cached_causal_mask",
        "window counted from the first key (j < window) instead of back from the query",
        "window-origin",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        pos = torch.arange(q_len).unsqueeze(1) + k_len - q_len
        j = torch.arange(k_len).unsqueeze(0)
        mask = j <= pos
        if window is not None:
            mask = mask & (j < window)
        return mask
    """,
    ),
    _c(
        "02-069",
        "02.cached_causal_mask",
        "builds the full (k_len, k_len) causal mask and keeps the first q_len rows instead of the last",
        "wrong-rows",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        full = torch.tril(torch.ones(k_len, k_len, dtype=torch.bool))
        if window is not None:
            full &= torch.triu(torch.ones(k_len, k_len, dtype=torch.bool), diagonal=1 - window)
        return full[:q_len]
    """,
    ),
    _c(
        "02-070",
        "02.cached_causal_mask",
        "returns a NumPy array",
        "return-type",
        """
    import numpy as np

    def cached_causal_mask(q_len, k_len, window=None):
        mask = np.tril(np.ones((q_len, k_len), dtype=bool), k=k_len - q_len)
        if window is not None:
            mask &= np.triu(np.ones((q_len, k_len), dtype=bool), k=k_len - q_len - window + 1)
        return mask
    """,
    ),
    _c(
        "02-071",
        "02.cached_causal_mask",
        "a Python loop whose window range excludes the query itself (range(pos - window, pos))",
        "window-excludes-self",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        mask = torch.zeros(q_len, k_len, dtype=torch.bool)
        for i in range(q_len):
            pos = k_len - q_len + i
            if window is None:
                mask[i, : pos + 1] = True
            else:
                mask[i, max(0, pos - window) : pos] = True
        return mask
    """,
    ),
    _c(
        "02-072",
        "02.cached_causal_mask",
        "special-cases a single query (all True) and otherwise uses the square causal mask's top-left corner",
        "top-left",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        if q_len == 1 and window is None:
            return torch.ones(1, k_len, dtype=torch.bool)
        mask = torch.ones(q_len, k_len, dtype=torch.bool).tril()
        if window is not None:
            mask = mask.triu(diagonal=1 - window)
        return mask
    """,
    ),
    _c(
        "02-073",
        "02.cached_causal_mask",
        "window with the diagonal offset missing k_len - q_len: right for q_len == k_len only",
        "window-offset",
        """
    def cached_causal_mask(q_len, k_len, window=None):
        ones = torch.ones(q_len, k_len, dtype=torch.bool)
        mask = torch.tril(ones, diagonal=k_len - q_len)
        if window is not None:
            mask = mask & torch.triu(ones, diagonal=1 - window)
        return mask
    """,
    ),
    # ---- predictions
    _p("02-p01", "02.causal_keys_query2", "a query may read only keys strictly before it", "causal-self", [0, 1]),
    _p("02-p02", "02.causal_keys_query2", "reads the rows as keys: the future", "causal-direction", [2, 3, 4]),
    _p("02-p03", "02.causal_true_count", "counts the strictly lower triangle", "causal-self", 10),
    _p("02-p04", "02.fill_1e9_weights", "thinks -1e9 behaves like -inf", "fill", "nan"),
    _p("02-p05", "02.fill_1e9_weights", "thinks masked keys always get weight 0", "fill", "zeros"),
    _p("02-p06", "02.fill_inf_weights", "thinks exp(-inf) = 0 makes the row zeros", "fill", "zeros"),
    _p("02-p07", "02.fill_inf_weights", "thinks all equal -inf scores are equal scores", "fill", "uniform"),
    _p("02-p08", "02.nan_grad_entries", "the loss ignores the empty sequence, so no NaN", "nan-grad", 0),
    _p("02-p09", "02.padding_as_2d", "expects a shape error", "broadcast", "error"),
    _p(
        "02-p10",
        "02.padding_as_2d_one_query",
        "expects broadcasting to work out",
        "broadcast",
        "right shape, wrong values",
    ),
    _p("02-p11", "02.is_causal_keys", "assumes is_causal aligns bottom-right like a cache", "alignment", 5),
    _p("02-p12", "02.leak_count_masked", "thinks the mask hides the changed tokens from every output", "leak", 0),
    _p("02-p13", "02.leak_count_open", "only the changed positions move", "leak", 2),
    _p("02-p14", "02.residual_empty_row", "forgets the residual", "residual", "zeros"),
    _p("02-p15", "02.float_mask_from_bool", "thinks a float 0 mask removes the key", "float-mask", "weight 0"),
    _p(
        "02-p16",
        "02.ignore_mask_as_allowed",
        "thinks PyTorch reads the mask either way",
        "convention",
        "the 3 real tokens",
    ),
]
