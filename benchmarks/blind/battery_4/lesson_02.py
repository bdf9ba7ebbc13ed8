"""Blind battery 4, lesson 02: wrong answers a student could give (see README.md)."""

_MASKED_SOFTMAX = """

def masked_softmax(scores, mask):
    mask = torch.as_tensor(mask, dtype=torch.bool)
    filled = scores.masked_fill(~mask, float("-inf"))
    row_max = filled.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(filled - row_max)
    total = e.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, e / total.clamp_min(1e-300), torch.zeros_like(e))
"""


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


_HEAD = "import math\n\nimport torch\nimport torch.nn.functional as F\n"

CASES = [
    # padding_mask
    _case(
        "02-001",
        "02.padding_mask",
        "uses <= instead of <: one padding position too many counted as real",
        "off-by-one",
        _HEAD
        + """

def padding_mask(lengths, max_len, side="right"):
    positions = torch.arange(max_len)
    mask = positions[None, :] <= lengths[:, None]
    if side == "left":
        mask = mask.flip(-1)
    return mask
""",
    ),
    _case(
        "02-002",
        "02.padding_mask",
        "ignores side: always right padding",
        "ignores-option",
        _HEAD
        + """

def padding_mask(lengths, max_len, side="right"):
    return torch.arange(max_len)[None, :] < lengths[:, None]
""",
    ),
    _case(
        "02-003",
        "02.padding_mask",
        "inverted polarity: True at the padding (PyTorch's key_padding_mask convention)",
        "polarity",
        _HEAD
        + """

def padding_mask(lengths, max_len, side="right"):
    positions = torch.arange(max_len)[None, :]
    if side == "left":
        return positions < (max_len - lengths)[:, None]
    return positions >= lengths[:, None]
""",
    ),
    _case(
        "02-004",
        "02.padding_mask",
        "left padding done by flipping the rows of the right mask... along the batch axis",
        "wrong-axis",
        _HEAD
        + """

def padding_mask(lengths, max_len, side="right"):
    mask = torch.arange(max_len)[None, :] < lengths[:, None]
    if side == "left":
        mask = mask.flip(0)
    return mask
""",
    ),
    _case(
        "02-005",
        "02.padding_mask",
        "returns a 0/1 long tensor instead of bool",
        "dtype",
        _HEAD
        + """

def padding_mask(lengths, max_len, side="right"):
    positions = torch.arange(max_len)[None, :]
    if side == "left":
        return (positions >= (max_len - lengths)[:, None]).long()
    return (positions < lengths[:, None]).long()
""",
    ),
    _case(
        "02-006",
        "02.padding_mask",
        "sizes the mask by the longest length instead of max_len",
        "wrong-size",
        _HEAD
        + """

def padding_mask(lengths, max_len, side="right"):
    width = int(lengths.max())
    positions = torch.arange(width)[None, :]
    if side == "left":
        return positions >= (width - lengths)[:, None]
    return positions < lengths[:, None]
""",
    ),
    _case(
        "02-007",
        "02.padding_mask",
        "left side computed with an off-by-one: max_len - length - 1",
        "off-by-one",
        _HEAD
        + """

def padding_mask(lengths, max_len, side="right"):
    positions = torch.arange(max_len)[None, :]
    if side == "left":
        return positions > (max_len - lengths - 1)[:, None] - 1
    return positions < lengths[:, None]
""",
    ),
    # cached_causal_mask
    _case(
        "02-008",
        "02.cached_causal_mask",
        "top-left aligned tril (as is_causal does): queries see too few keys when q_len < k_len",
        "top-left",
        _HEAD
        + """

def cached_causal_mask(q_len, k_len, window=None):
    mask = torch.ones(q_len, k_len).tril().bool()
    if window is not None:
        mask &= ~torch.ones(q_len, k_len).tril(-window).bool()
    return mask
""",
    ),
    _case(
        "02-009",
        "02.cached_causal_mask",
        "strict lower triangle: a query may not read itself",
        "diagonal",
        _HEAD
        + """

def cached_causal_mask(q_len, k_len, window=None):
    i = torch.arange(q_len)[:, None] + (k_len - q_len)
    j = torch.arange(k_len)[None, :]
    mask = j < i
    if window is not None:
        mask &= j > i - window
    return mask
""",
    ),
    _case(
        "02-010",
        "02.cached_causal_mask",
        "window off by one: window + 1 keys, the query not counted",
        "off-by-one",
        _HEAD
        + """

def cached_causal_mask(q_len, k_len, window=None):
    i = torch.arange(q_len)[:, None] + (k_len - q_len)
    j = torch.arange(k_len)[None, :]
    mask = j <= i
    if window is not None:
        mask &= j >= i - window
    return mask
""",
    ),
    _case(
        "02-011",
        "02.cached_causal_mask",
        "triu instead of tril: the future instead of the past",
        "polarity",
        _HEAD
        + """

def cached_causal_mask(q_len, k_len, window=None):
    mask = torch.ones(q_len, k_len, dtype=torch.bool).triu(diagonal=k_len - q_len)
    if window is not None:
        mask &= torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=k_len - q_len + window - 1)
    return mask
""",
    ),
    _case(
        "02-012",
        "02.cached_causal_mask",
        "offset with the wrong sign: tril(q_len - k_len)",
        "offset-sign",
        _HEAD
        + """

def cached_causal_mask(q_len, k_len, window=None):
    mask = torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=q_len - k_len)
    if window is not None:
        mask &= ~torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=q_len - k_len - window)
    return mask
""",
    ),
    _case(
        "02-013",
        "02.cached_causal_mask",
        "ignores the window argument",
        "ignores-option",
        _HEAD
        + """

def cached_causal_mask(q_len, k_len, window=None):
    return torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=k_len - q_len)
""",
    ),
    _case(
        "02-014",
        "02.cached_causal_mask",
        "keeps window // 2 past keys (Longformer's half window) instead of window keys, itself included",
        "window-half",
        _HEAD
        + """

def cached_causal_mask(q_len, k_len, window=None):
    i = torch.arange(q_len)[:, None] + (k_len - q_len)
    j = torch.arange(k_len)[None, :]
    mask = j <= i
    if window is not None:
        mask &= (i - j) <= window // 2
    return mask
""",
    ),
    # masked_softmax
    _case(
        "02-015",
        "02.masked_softmax",
        "fills with -1e9 and a plain softmax: a fully masked row becomes uniform",
        "fill-1e9",
        _HEAD
        + """

def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)
""",
    ),
    _case(
        "02-016",
        "02.masked_softmax",
        "fills with -inf and a plain softmax: a fully masked row becomes nan",
        "fill-inf",
        _HEAD
        + """

def masked_softmax(scores, mask):
    return F.softmax(scores.masked_fill(mask.logical_not(), float("-inf")), dim=-1)
""",
    ),
    _case(
        "02-017",
        "02.masked_softmax",
        "masks after the softmax (multiplies by the mask): rows no longer sum to 1",
        "mask-after-softmax",
        _HEAD
        + """

def masked_softmax(scores, mask):
    return torch.softmax(scores, dim=-1) * mask
""",
    ),
    _case(
        "02-018",
        "02.masked_softmax",
        "fills with 0 instead of -inf: masked keys keep weight exp(0)",
        "fill-zero",
        _HEAD
        + """

def masked_softmax(scores, mask):
    w = torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)
    return w
""",
    ),
    _case(
        "02-019",
        "02.masked_softmax",
        "fills where mask is True (polarity flipped)",
        "polarity",
        _HEAD
        + """

def masked_softmax(scores, mask):
    w = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    return torch.nan_to_num(w, nan=0.0)
""",
    ),
    _case(
        "02-020",
        "02.masked_softmax",
        "-inf fill then nan_to_num: right values, but no max subtraction in a "
        "hand-written exp that overflows for large scores",
        "overflow",
        _HEAD
        + """

def masked_softmax(scores, mask):
    e = torch.exp(scores) * mask
    total = e.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, e / total, torch.zeros_like(e))
""",
    ),
    _case(
        "02-021",
        "02.masked_softmax",
        "renormalizes after multiplying the softmax by the mask, but divides by zero on an empty row (nan)",
        "mask-after-softmax",
        _HEAD
        + """

def masked_softmax(scores, mask):
    w = torch.softmax(scores, dim=-1) * mask
    return w / w.sum(dim=-1, keepdim=True)
""",
    ),
    _case(
        "02-022",
        "02.masked_softmax",
        "masked_fill_ in place on the caller's scores",
        "in-place",
        _HEAD
        + """

def masked_softmax(scores, mask):
    scores.masked_fill_(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return torch.nan_to_num(w, nan=0.0)
""",
    ),
    _case(
        "02-023",
        "02.masked_softmax",
        "softmax over dim=-2 (queries) after a correct fill",
        "wrong-axis",
        _HEAD
        + """

def masked_softmax(scores, mask):
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-2)
    return torch.nan_to_num(w, nan=0.0)
""",
    ),
    _case(
        "02-024",
        "02.masked_softmax",
        "uses float32 finfo.min as the fill for float64 scores: empty rows are uniform, not zeros",
        "fill-finfo",
        _HEAD
        + """

def masked_softmax(scores, mask):
    fill = torch.finfo(torch.float32).min
    return torch.softmax(scores.masked_fill(~mask, fill), dim=-1)
""",
    ),
    # masked_attention
    _case(
        "02-025",
        "02.masked_attention",
        "masks the weights after the softmax instead of the scores",
        "mask-after-softmax",
        _HEAD
        + """

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ value, weights
""",
    ),
    _case(
        "02-026",
        "02.masked_attention",
        "scales by sqrt(k_len) instead of sqrt(d_head)",
        "wrong-scale",
        _HEAD
        + _MASKED_SOFTMAX
        + """

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(key.shape[-2])
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
""",
    ),
    _case(
        "02-027",
        "02.masked_attention",
        "-1e9 fill: fully masked rows average the values instead of giving zeros",
        "fill-1e9",
        _HEAD
        + """

def masked_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights
""",
    ),
    _case(
        "02-028",
        "02.masked_attention",
        "hard-codes key.transpose(1, 2): right for 3-D inputs, wrong for (batch, heads, k_len, d_head)",
        "batch-transpose",
        _HEAD
        + _MASKED_SOFTMAX
        + """

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(1, 2) / math.sqrt(query.shape[-1])
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
""",
    ),
    _case(
        "02-029",
        "02.masked_attention",
        "drops the mask when it is given as a 2-D (q_len, k_len) tensor, "
        "thinking it is a padding mask of the wrong shape",
        "ignores-mask",
        _HEAD
        + _MASKED_SOFTMAX
        + """

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None or mask.dim() == 2:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
""",
    ),
    _case(
        "02-030",
        "02.masked_attention",
        "uses the inverted mask (True = ignore) with masked_fill(mask, ...)",
        "polarity",
        _HEAD
        + _MASKED_SOFTMAX
        + """

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        mask = ~mask
    else:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
""",
    ),
    _case(
        "02-031",
        "02.masked_attention",
        "calls F.scaled_dot_product_attention, whose fully masked rows are nan, and "
        "recomputes the weights with a plain -inf softmax",
        "fill-inf",
        _HEAD
        + """

def masked_attention(query, key, value, mask=None):
    output = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return output, torch.softmax(scores, dim=-1)
""",
    ),
    _case(
        "02-032",
        "02.masked_attention",
        "detaches the weights 'for plotting' before multiplying by the values: no gradient reaches query and key",
        "detach",
        _HEAD
        + _MASKED_SOFTMAX
        + """

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask).detach()
    return weights @ value, weights
""",
    ),
    # decoder_mask
    _case(
        "02-033",
        "02.decoder_mask",
        "combines causal with padding by OR instead of AND",
        "or-not-and",
        _HEAD
        + """

def decoder_mask(lengths, seq_len):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    padding = torch.arange(seq_len)[None, :] < lengths[:, None]
    return (causal[None, None] | padding[:, None, None, :])
""",
    ),
    _case(
        "02-034",
        "02.decoder_mask",
        "padding placed on the query axis instead of the key axis",
        "wrong-axis",
        _HEAD
        + """

def decoder_mask(lengths, seq_len):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    padding = torch.arange(seq_len)[None, :] < lengths[:, None]
    return causal[None, None] & padding[:, None, :, None]
""",
    ),
    _case(
        "02-035",
        "02.decoder_mask",
        "returns (batch, seq_len, seq_len) without the heads axis",
        "missing-axis",
        _HEAD
        + """

def decoder_mask(lengths, seq_len):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    padding = torch.arange(seq_len)[None, :] < lengths[:, None]
    return causal[None] & padding[:, None, :]
""",
    ),
    _case(
        "02-036",
        "02.decoder_mask",
        "forgets the padding: the causal mask only, expanded over the batch",
        "missing-padding",
        _HEAD
        + """

def decoder_mask(lengths, seq_len):
    causal = torch.tril(torch.ones(seq_len, seq_len)).bool()
    return causal.expand(len(lengths), 1, seq_len, seq_len)
""",
    ),
    _case(
        "02-037",
        "02.decoder_mask",
        "triu: the future instead of the past",
        "polarity",
        _HEAD
        + """

def decoder_mask(lengths, seq_len):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).triu()
    padding = torch.arange(seq_len)[None, :] < lengths[:, None]
    return causal[None, None] & padding[:, None, None, :]
""",
    ),
    _case(
        "02-038",
        "02.decoder_mask",
        "masks padding on both queries and keys: padding queries get empty rows "
        "and real queries are unchanged, but the mask differs from the asked one",
        "both-axes",
        _HEAD
        + """

def decoder_mask(lengths, seq_len):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    padding = torch.arange(seq_len)[None, :] < lengths[:, None]
    both = padding[:, :, None] & padding[:, None, :]
    return (causal[None] & both)[:, None]
""",
    ),
    # leaks
    _case(
        "02-039",
        "02.leaks",
        "only tests the split point t = 0 (changes tokens 1..end, looks at output 0)",
        "one-split",
        _HEAD
        + """

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    y = x.clone()
    y[:, 1:] = torch.randn(1, seq_len - 1, 8, dtype=torch.float64)
    return not torch.allclose(attend(x)[:, 0], attend(y)[:, 0])
""",
    ),
    _case(
        "02-040",
        "02.leaks",
        "compares the whole output, including the positions that did change legitimately",
        "whole-output",
        _HEAD
        + """

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        if not torch.allclose(attend(x), attend(y)):
            return True
    return False
""",
    ),
    _case(
        "02-041",
        "02.leaks",
        "allclose with the default tolerance misses a tiny leak",
        "tolerance",
        _HEAD
        + """

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        if not torch.allclose(attend(x)[:, : t + 1], attend(y)[:, : t + 1], atol=1e-4):
            return True
    return False
""",
    ),
    _case(
        "02-042",
        "02.leaks",
        "changes tokens from t on (t included) and checks output t: a causal layer 'leaks'",
        "off-by-one",
        _HEAD
        + """

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    for t in range(seq_len):
        y = x.clone()
        y[:, t:] = torch.randn(1, seq_len - t, 8, dtype=torch.float64)
        if not torch.equal(attend(x)[:, t], attend(y)[:, t]):
            return True
    return False
""",
    ),
    _case(
        "02-043",
        "02.leaks",
        "only checks the last split (t = seq_len - 2): misses a leak at output 0 only",
        "one-split",
        _HEAD
        + """

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    y = x.clone()
    y[:, -1] = torch.randn(1, 8, dtype=torch.float64)
    return not torch.equal(attend(x)[:, :-1], attend(y)[:, :-1])
""",
    ),
    _case(
        "02-044",
        "02.leaks",
        "returns the reversed answer (True when nothing changed)",
        "polarity",
        _HEAD
        + """

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        if not torch.equal(attend(x)[:, : t + 1], attend(y)[:, : t + 1]):
            return False
    return True
""",
    ),
    # predictions
    _pred("02-p01", "02.causal_keys_query2", "thinks a query may not read itself", "pred-mask", [0, 1]),
    _pred("02-p02", "02.causal_keys_query2", "reads the mask as the future (upper triangle)", "pred-mask", [2, 3, 4]),
    _pred("02-p03", "02.causal_true_count", "strict lower triangle: 10", "pred-mask", 10),
    _pred("02-p04", "02.fill_1e9_weights", "thinks -1e9 everywhere still gives zeros", "pred-fill", "zeros"),
    _pred("02-p05", "02.fill_1e9_weights", "thinks it overflows to nan", "pred-fill", "nan"),
    _pred("02-p06", "02.fill_inf_weights", "thinks exp(-inf) = 0 everywhere gives zeros", "pred-fill", "zeros"),
    _pred("02-p07", "02.fill_inf_weights", "thinks it behaves like -1e9", "pred-fill", "uniform"),
    _pred("02-p08", "02.nan_grad_entries", "the loss ignores sequence 1, so no NaN reaches W.grad", "pred-nan-grad", 0),
    _pred("02-p09", "02.padding_as_2d", "expects a shape error", "pred-broadcast", "error"),
    _pred("02-p10", "02.padding_as_2d", "trusts broadcasting to do the right thing", "pred-broadcast", "right"),
    _pred(
        "02-p11",
        "02.padding_as_2d_one_query",
        "expects the usual broadcast to keep the shape",
        "pred-broadcast",
        "right shape, wrong values",
    ),
    _pred("02-p12", "02.is_causal_keys", "assumes is_causal aligns bottom-right for cached keys", "pred-causal", 5),
    _pred("02-p13", "02.leak_count_masked", "thinks the mask stops every change", "pred-leak", 0),
    _pred("02-p14", "02.leak_count_open", "thinks only the replaced tokens' outputs change", "pred-leak", 2),
    _pred(
        "02-p15",
        "02.residual_empty_row",
        "thinks an all-zero attention output zeroes the position",
        "pred-residual",
        "zeros",
    ),
    _pred(
        "02-p16",
        "02.residual_empty_row_1e9",
        "thinks -1e9 behaves like the safe softmax",
        "pred-residual",
        "the token unchanged",
    ),
    _pred(
        "02-p17",
        "02.float_mask_from_bool",
        "thinks a 0.0 entry in a float mask blocks the key",
        "pred-convention",
        "weight 0",
    ),
    _pred(
        "02-p18",
        "02.ignore_mask_as_allowed",
        "thinks the function knows PyTorch's ignore convention",
        "pred-convention",
        "the 3 real tokens",
    ),
]
