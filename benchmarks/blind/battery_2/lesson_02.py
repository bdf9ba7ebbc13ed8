"""Battery 2, lesson 02: wrong answers to the masking exercises and predictions."""

H = "import math\n\nimport numpy as np\nimport torch\nimport torch.nn.functional as F\n\n"

MASKED_SOFTMAX = '''def masked_softmax(scores, mask):
    filled = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(filled, dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


'''

PADDING = '''def padding_mask(lengths, max_len):
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


'''


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- padding_mask --------------------------------------------------------------------------------------------
    _c("02-001", "02.padding_mask", "compares arange(max_len) with lengths without adding axes: broadcasts only "
       "when batch == max_len, and then gives the transposed mask", "square-only",
       '''def padding_mask(lengths, max_len):
    return torch.arange(max_len) < lengths
'''),
    _c("02-002", "02.padding_mask", "uses <= : one padding position too many counted as real", "off-by-one",
       '''def padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] <= lengths[:, None]
'''),
    _c("02-003", "02.padding_mask", "returns 0/1 integers (.long()) instead of a bool tensor", "dtype",
       '''def padding_mask(lengths, max_len):
    return (torch.arange(max_len)[None, :] < lengths[:, None]).long()
'''),
    _c("02-004", "02.padding_mask", "PyTorch's key_padding_mask polarity: True at the padding", "polarity",
       '''def padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] >= lengths[:, None]
'''),
    _c("02-005", "02.padding_mask", "pads to lengths.max() instead of max_len: too narrow when no sequence fills "
       "the width", "ignores-arg",
       '''def padding_mask(lengths, max_len):
    width = int(lengths.max())
    return torch.arange(width)[None, :] < lengths[:, None]
'''),
    _c("02-006", "02.padding_mask", "builds a nested Python list of bools and returns it", "wrong-type",
       '''def padding_mask(lengths, max_len):
    return [[j < int(n) for j in range(max_len)] for n in lengths]
'''),
    _c("02-007", "02.padding_mask", "float mask 1.0/0.0 (torch.ones then zero the padding)", "dtype",
       '''def padding_mask(lengths, max_len):
    mask = torch.ones(len(lengths), max_len)
    for b, n in enumerate(lengths.tolist()):
        mask[b, n:] = 0
    return mask
'''),
    # ---- causal_mask ---------------------------------------------------------------------------------------------
    _c("02-010", "02.causal_mask", "torch.triu instead of torch.tril: each query may read itself and the future, "
       "not the past", "triu-tril",
       '''def causal_mask(seq_len):
    return torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool))
'''),
    _c("02-011", "02.causal_mask", "tril(diagonal=-1): strictly lower, a token may not read itself (row 0 empty)",
       "off-by-one",
       '''def causal_mask(seq_len):
    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=-1)
'''),
    _c("02-012", "02.causal_mask", "the 'forbidden' mask triu(diagonal=1) (PyTorch attn_mask convention, True = "
       "blocked)", "polarity",
       '''def causal_mask(seq_len):
    return torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
'''),
    _c("02-013", "02.causal_mask", "additive float mask (0 allowed, -inf future) instead of bool", "dtype",
       '''def causal_mask(seq_len):
    return torch.triu(torch.full((seq_len, seq_len), float("-inf")), diagonal=1)
'''),
    _c("02-014", "02.causal_mask", "returns the float 0/1 matrix torch.tril(torch.ones(n, n))", "dtype",
       '''def causal_mask(seq_len):
    return torch.tril(torch.ones(seq_len, seq_len))
'''),
    _c("02-015", "02.causal_mask", "NumPy np.tril(...).astype(bool): an ndarray, not a tensor", "wrong-type",
       '''def causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len))).astype(bool)
'''),
    _c("02-016", "02.causal_mask", "tril(diagonal=1): lets each query read the next token too", "off-by-one",
       '''def causal_mask(seq_len):
    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
'''),
    _c("02-017", "02.causal_mask", "compares j <= i with i along columns and j along rows: the transposed mask",
       "transpose",
       '''def causal_mask(seq_len):
    i = torch.arange(seq_len)
    return i[:, None] <= i[None, :]
'''),
    # ---- masked_softmax ------------------------------------------------------------------------------------------
    _c("02-020", "02.masked_softmax", "masked_fill(~mask, -1e9) then softmax: a fully masked row becomes uniform, "
       "not zeros", "fill-1e9",
       '''def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)
'''),
    _c("02-021", "02.masked_softmax", "masked_fill(~mask, -inf) then softmax: a fully masked row becomes nan",
       "fill-inf-nan",
       '''def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
'''),
    _c("02-022", "02.masked_softmax", "softmax first, then multiplies by the mask: the rows no longer sum to 1",
       "mask-after-softmax",
       '''def masked_softmax(scores, mask):
    return torch.softmax(scores, dim=-1) * mask
'''),
    _c("02-023", "02.masked_softmax", "softmax, mask, renormalize: right for partly masked rows, 0/0 = nan for a "
       "fully masked one (and underflow when a masked score is huge)", "mask-after-softmax",
       '''def masked_softmax(scores, mask):
    w = torch.softmax(scores, dim=-1) * mask
    return w / w.sum(dim=-1, keepdim=True)
'''),
    _c("02-024", "02.masked_softmax", "mask polarity flipped: fills where mask is True", "polarity",
       '''def masked_softmax(scores, mask):
    w = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    return torch.nan_to_num(w, nan=0.0)
'''),
    _c("02-025", "02.masked_softmax", "fills the forbidden scores with 0 instead of -inf: they still get weight",
       "fill-zero",
       '''def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)
'''),
    _c("02-026", "02.masked_softmax", "multiplies the scores by the mask before the softmax (forbidden keys get "
       "exp(0))", "multiply-mask",
       '''def masked_softmax(scores, mask):
    return torch.softmax(scores * mask, dim=-1)
'''),
    _c("02-027", "02.masked_softmax", "masked_fill_ in place: right weights, but the caller's scores now hold -inf",
       "in-place",
       '''def masked_softmax(scores, mask):
    scores.masked_fill_(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
'''),
    _c("02-028", "02.masked_softmax", "hand-written stable softmax whose max includes the masked scores: a huge "
       "masked score underflows the allowed ones to 0/0", "max-includes-masked",
       '''def masked_softmax(scores, mask):
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
    s = e.sum(dim=-1, keepdim=True)
    return torch.where(s > 0, e / s, torch.zeros_like(e))
'''),
    _c("02-029", "02.masked_softmax", "softmax over dim=-2 (the queries)", "wrong-axis",
       '''def masked_softmax(scores, mask):
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-2)
    return torch.nan_to_num(w, nan=0.0)
'''),
    _c("02-030", "02.masked_softmax", "computes under torch.no_grad() to 'avoid nan gradients': right values, no "
       "gradient flows to the scores", "no-grad",
       '''def masked_softmax(scores, mask):
    with torch.no_grad():
        w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        return torch.nan_to_num(w, nan=0.0)
'''),
    _c("02-031", "02.masked_softmax", "adds log(mask) (0 or -inf) then softmax: same nan on fully masked rows",
       "fill-inf-nan",
       '''def masked_softmax(scores, mask):
    return torch.softmax(scores + torch.log(mask.to(scores.dtype)), dim=-1)
'''),
    _c("02-032", "02.masked_softmax", "gives a fully masked row uniform weights 1/k_len (the 'attend to "
       "everything' convention) instead of zeros", "empty-row-uniform",
       '''def masked_softmax(scores, mask):
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.where(torch.isnan(w), torch.full_like(w, 1.0 / scores.shape[-1]), w)
'''),
    _c("02-033", "02.masked_softmax", "sets nan to 0 with an in-place index assignment on the softmax output after "
       "detaching it", "detach",
       '''def masked_softmax(scores, mask):
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).detach()
    w[torch.isnan(w)] = 0.0
    return w
'''),
    # ---- masked_attention ----------------------------------------------------------------------------------------
    _c("02-040", "02.masked_attention", "fills with -1e9: a fully masked query gets the mean of the values instead "
       "of zeros", "fill-1e9",
       '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
'''),
    _c("02-041", "02.masked_attention", "fills with -inf and a plain softmax: nan for a fully masked query",
       "fill-inf-nan",
       '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
'''),
    _c("02-042", "02.masked_attention", "masks after the softmax without renormalizing", "mask-after-softmax",
       '''def masked_attention(query, key, value, mask=None):
    weights = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights
'''),
    _c("02-043", "02.masked_attention", "mask polarity flipped (fills where True)", "polarity",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        weights = masked_softmax(scores, ~mask)
    else:
        weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
'''),
    _c("02-044", "02.masked_attention", "no 1/sqrt(d_head) scaling", "missing-scale",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
'''),
    _c("02-045", "02.masked_attention", "'if mask:' on a tensor: raises 'Boolean value of Tensor with more than one "
       "value is ambiguous'", "crash",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask:
        weights = masked_softmax(scores, mask)
    else:
        weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
'''),
    _c("02-046", "02.masked_attention", "detaches the weights before multiplying the values (no gradient to the "
       "query and key)", "detach",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask).detach()
    return weights @ value, weights
'''),
    _c("02-047", "02.masked_attention", "scales by sqrt(d_value) (value.shape[-1])", "wrong-scale",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.shape[-1])
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
'''),
    _c("02-048", "02.masked_attention", "key.transpose(1, 2): right for 3-D inputs, wrong axes for 4-D (batch, "
       "heads, len, d) inputs", "transpose",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(1, 2) / math.sqrt(query.shape[-1])
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
'''),
    _c("02-049", "02.masked_attention", "divides the query in place (query /= sqrt(d)): changes the caller's tensor "
       "(and fails on a leaf that requires grad)", "in-place",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    query /= math.sqrt(query.shape[-1])
    scores = query @ key.transpose(-2, -1)
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
'''),
    _c("02-050", "02.masked_attention", "fully masked rows set to zero in the weights but the output computed from "
       "the -1e9 weights (uniform average of the values)", "inconsistent",
       '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    out = weights @ value
    if mask is not None:
        weights = weights * mask.any(dim=-1, keepdim=True)
    return out, weights
'''),
    _c("02-051", "02.masked_attention", "softmax over the queries (dim=-2)", "wrong-axis",
       '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-2), nan=0.0)
    return weights @ value, weights
'''),
    _c("02-052", "02.masked_attention", "unsqueezes the mask for the heads (mask.unsqueeze(1)) whatever its shape: "
       "a (q_len, k_len) or (batch, 1, 1, k_len) mask lands on the wrong axes", "broadcast",
       MASKED_SOFTMAX + '''def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    else:
        mask = mask.unsqueeze(1)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
'''),
    # ---- decoder_mask --------------------------------------------------------------------------------------------
    _c("02-060", "02.decoder_mask", "applies the padding to the queries (rows) instead of the keys (columns)",
       "rows-not-cols",
       PADDING + '''def decoder_mask(lengths, seq_len):
    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return padding_mask(lengths, seq_len)[:, None, :, None] & causal
'''),
    _c("02-061", "02.decoder_mask", "returns (batch, seq_len, seq_len): no axis for the heads", "shape",
       PADDING + '''def decoder_mask(lengths, seq_len):
    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return padding_mask(lengths, seq_len)[:, None, :] & causal
'''),
    _c("02-062", "02.decoder_mask", "combines causal and padding with OR instead of AND", "or-not-and",
       PADDING + '''def decoder_mask(lengths, seq_len):
    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return padding_mask(lengths, seq_len)[:, None, None, :] | causal
'''),
    _c("02-063", "02.decoder_mask", "masks padded queries too (pad[:, :, None] & pad[:, None, :]): padded rows "
       "become fully masked although they may read real keys", "both-sides",
       PADDING + '''def decoder_mask(lengths, seq_len):
    pad = padding_mask(lengths, seq_len)
    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return (pad[:, :, None] & pad[:, None, :] & causal)[:, None]
'''),
    _c("02-064", "02.decoder_mask", "forgets the padding: only the causal mask, broadcast to the batch",
       "missing-padding",
       '''def decoder_mask(lengths, seq_len):
    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return causal.expand(len(lengths), 1, seq_len, seq_len)
'''),
    _c("02-065", "02.decoder_mask", "puts the head axis first: (1, batch, seq_len, seq_len)", "shape",
       PADDING + '''def decoder_mask(lengths, seq_len):
    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return (padding_mask(lengths, seq_len)[:, None, :] & causal).unsqueeze(0)
'''),
    _c("02-066", "02.decoder_mask", "causal part built with triu (future allowed)", "triu-tril",
       PADDING + '''def decoder_mask(lengths, seq_len):
    causal = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return padding_mask(lengths, seq_len)[:, None, None, :] & causal
'''),
    _c("02-067", "02.decoder_mask", "padding with <= (one pad key allowed)", "off-by-one",
       '''def decoder_mask(lengths, seq_len):
    pad = torch.arange(seq_len)[None, :] <= lengths[:, None]
    causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return pad[:, None, None, :] & causal
'''),
    # ---- leaks ---------------------------------------------------------------------------------------------------
    _c("02-070", "02.leaks", "compares every output position, including the changed tokens' own outputs: always "
       "True", "compares-changed",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    base = attend(x)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1:] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        if not torch.allclose(attend(y), base):
            return True
    return False
'''),
    _c("02-071", "02.leaks", "changes token t itself as well as the later ones: output t always moves, so always "
       "True", "off-by-one",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    base = attend(x)
    for t in range(seq_len):
        y = x.clone()
        y[:, t:] = torch.randn(1, seq_len - t, 8, dtype=torch.float64)
        if not torch.allclose(attend(y)[:, : t + 1], base[:, : t + 1]):
            return True
    return False
'''),
    _c("02-072", "02.leaks", "changes only token t + 1 and compares only output t: misses a layer in which an "
       "output reads a token two or more steps ahead", "partial-perturbation",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    base = attend(x)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1] = torch.randn(8, dtype=torch.float64)
        if not torch.allclose(attend(y)[:, t], base[:, t]):
            return True
    return False
'''),
    _c("02-073", "02.leaks", "tolerance atol=1e-2: a small leak goes unnoticed", "loose-tolerance",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    base = attend(x)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1:] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        if not torch.allclose(attend(y)[:, : t + 1], base[:, : t + 1], atol=1e-2):
            return True
    return False
'''),
    _c("02-074", "02.leaks", "only tests t = 0 (is the first output affected by the rest?)", "partial-check",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    y = x.clone()
    y[:, 1:] = torch.randn(1, seq_len - 1, 8, dtype=torch.float64)
    return not torch.allclose(attend(y)[:, 0], attend(x)[:, 0])
'''),
    _c("02-075", "02.leaks", "returns the opposite: True when the outputs do NOT change", "polarity",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    base = attend(x)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1:] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        if not torch.allclose(attend(y)[:, : t + 1], base[:, : t + 1]):
            return False
    return True
'''),
    _c("02-076", "02.leaks", "returns a 0-d bool tensor instead of a Python bool", "wrong-type",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    base = attend(x)
    found = torch.tensor(False)
    for t in range(seq_len - 1):
        y = x.clone()
        y[:, t + 1:] = torch.randn(1, seq_len - t - 1, 8, dtype=torch.float64)
        found = found | ~torch.isclose(attend(y)[:, : t + 1], base[:, : t + 1]).all()
    return found
'''),
    _c("02-077", "02.leaks", "perturbs only the last token and looks at all earlier outputs: misses a leak from a "
       "middle token to the one before it", "partial-perturbation",
       '''def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    y = x.clone()
    y[:, -1] = torch.randn(8, dtype=torch.float64)
    return not torch.allclose(attend(y)[:, :-1], attend(x)[:, :-1])
'''),
    # ---- sliding_window_mask -------------------------------------------------------------------------------------
    _c("02-080", "02.sliding_window_mask", "0 <= i - j <= window: window + 1 keys", "off-by-one",
       '''def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (j <= i) & (i - j <= window)
'''),
    _c("02-081", "02.sliding_window_mask", "|i - j| < window: symmetric band, reads the future", "symmetric",
       '''def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (i - j).abs() < window
'''),
    _c("02-082", "02.sliding_window_mask", "tril & triu(diagonal=-window): the band is one key too wide",
       "off-by-one",
       '''def sliding_window_mask(seq_len, window):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    return torch.tril(ones) & torch.triu(ones, diagonal=-window)
'''),
    _c("02-083", "02.sliding_window_mask", "excludes the query itself: keys i - window .. i - 1", "excludes-self",
       '''def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (j < i) & (i - j <= window)
'''),
    _c("02-084", "02.sliding_window_mask", "window band built with triu/tril swapped: the window looks forward",
       "triu-tril",
       '''def sliding_window_mask(seq_len, window):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    return torch.triu(ones) & torch.tril(ones, diagonal=window - 1)
'''),
    _c("02-085", "02.sliding_window_mask", "int 0/1 mask instead of bool", "dtype",
       '''def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return ((j <= i) & (i - j < window)).int()
'''),
    # ---- cached_causal_mask --------------------------------------------------------------------------------------
    _c("02-090", "02.cached_causal_mask", "top-left aligned tril(ones(q_len, k_len)) (what is_causal does): query i "
       "treated as position i", "top-left",
       '''def cached_causal_mask(q_len, k_len):
    return torch.tril(torch.ones(q_len, k_len, dtype=torch.bool))
'''),
    _c("02-091", "02.cached_causal_mask", "offset k_len - q_len - 1: each query may not read itself", "off-by-one",
       '''def cached_causal_mask(q_len, k_len):
    return torch.tril(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=k_len - q_len - 1)
'''),
    _c("02-092", "02.cached_causal_mask", "offset with the sign flipped (q_len - k_len)", "sign",
       '''def cached_causal_mask(q_len, k_len):
    return torch.tril(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=q_len - k_len)
'''),
    _c("02-093", "02.cached_causal_mask", "takes the FIRST q_len rows of the full causal mask instead of the last",
       "first-rows",
       '''def cached_causal_mask(q_len, k_len):
    return torch.tril(torch.ones(k_len, k_len, dtype=torch.bool))[:q_len]
'''),
    _c("02-094", "02.cached_causal_mask", "offset k_len - q_len + 1: each query reads one future key", "off-by-one",
       '''def cached_causal_mask(q_len, k_len):
    i = torch.arange(q_len)[:, None]
    j = torch.arange(k_len)[None, :]
    return j <= i + (k_len - q_len) + 1
'''),
    _c("02-095", "02.cached_causal_mask", "a single decoding query gets all keys, several queries the top-left "
       "tril: right only for q_len == 1 or q_len == k_len", "special-case",
       '''def cached_causal_mask(q_len, k_len):
    if q_len == 1:
        return torch.ones(1, k_len, dtype=torch.bool)
    return torch.tril(torch.ones(q_len, k_len, dtype=torch.bool))
'''),
    # ---- left_padding_mask ---------------------------------------------------------------------------------------
    _c("02-100", "02.left_padding_mask", "right padding (the first `length` positions True)", "right-not-left",
       '''def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] < lengths[:, None]
'''),
    _c("02-101", "02.left_padding_mask", "position > max_len - length: one real token lost", "off-by-one",
       '''def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] > (max_len - lengths)[:, None]
'''),
    _c("02-102", "02.left_padding_mask", "position >= length (confuses the number of pads with the length)",
       "pads-vs-length",
       '''def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] >= lengths[:, None]
'''),
    _c("02-103", "02.left_padding_mask", "uses lengths.max() as the padded width", "ignores-arg",
       '''def left_padding_mask(lengths, max_len):
    width = int(lengths.max())
    return torch.arange(width)[None, :] >= (width - lengths)[:, None]
'''),
    _c("02-104", "02.left_padding_mask", "True at the padding (polarity flipped)", "polarity",
       '''def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] < (max_len - lengths)[:, None]
'''),
    _c("02-105", "02.left_padding_mask", "flips the right-padding mask along the batch axis instead of the position "
       "axis", "wrong-axis",
       '''def left_padding_mask(lengths, max_len):
    right = torch.arange(max_len)[None, :] < lengths[:, None]
    return right.flip(0)
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("02-p01", "02.causal_keys_query2", "excludes the query itself", "off-by-one", [0, 1]),
    _p("02-p02", "02.causal_keys_query2", "reads the mask as 'the future keys'", "polarity", [2, 3, 4]),
    _p("02-p03", "02.causal_true_count", "counts the strictly lower triangle", "off-by-one", 10),
    _p("02-p04", "02.causal_true_count", "thinks half of the 25 entries", "count", 12),
    _p("02-p05", "02.fill_1e9_weights", "thinks -1e9 behaves like masking and leaves nothing", "fill-1e9", "zeros"),
    _p("02-p06", "02.fill_1e9_weights", "confuses -1e9 with -inf", "fill-1e9", "nan"),
    _p("02-p07", "02.fill_inf_weights", "thinks softmax of all -inf is all zeros", "fill-inf-nan", "zeros"),
    _p("02-p08", "02.fill_inf_weights", "thinks softmax treats equal -inf scores like equal finite ones",
       "fill-inf-nan", "uniform"),
    _p("02-p09", "02.nan_grad_entries", "the loss ignores sequence 1, so no nan reaches W.grad", "nan-grad", 0),
    _p("02-p10", "02.nan_grad_entries", "thinks only the entries touching the empty sequence's rows go nan",
       "nan-grad", 16),
    _p("02-p11", "02.padding_as_2d", "thinks any broadcastable mask is right", "broadcast", "right"),
    _p("02-p12", "02.padding_as_2d_one_query", "expects a shape error from broadcasting", "broadcast", "error"),
    _p("02-p13", "02.is_causal_keys", "assumes is_causal aligns the queries to the end (bottom-right)",
       "top-left", 5),
    _p("02-p14", "02.is_causal_keys", "thinks the causal flag is ignored when q_len < k_len", "top-left", 7),
    _p("02-p15", "02.leak_count_masked", "thinks the causal mask keeps every output fixed", "causal", 0),
    _p("02-p16", "02.leak_count_open", "thinks only the changed positions' outputs move without a mask", "causal", 2),
]
