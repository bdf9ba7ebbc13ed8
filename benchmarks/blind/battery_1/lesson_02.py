"""Blind battery, lesson 02 (masking): wrong answers and wrong predictions."""

HEAD = '''import math

import numpy as np
import torch
import torch.nn.functional as F
'''

PADDING = '''

def padding_mask(lengths, max_len):
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]
'''

CAUSAL = '''

def causal_mask(seq_len):
    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
'''

MASKED_SOFTMAX = '''

def masked_softmax(scores, mask):
    mask = mask.expand_as(scores)
    filled = scores.masked_fill(~mask, float("-inf"))
    row_max = filled.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(filled - row_max)
    total = e.sum(dim=-1, keepdim=True)
    return e / total.clamp(min=1e-30)
'''


def _masked_attention(weights_line, extra=""):
    """Source of masked_attention whose weights come from `weights_line` (uses the correct masked_softmax)."""
    return HEAD + MASKED_SOFTMAX + extra + f'''

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    {weights_line}
    return weights @ value, weights
'''


CASES = [
    # ---- 02.padding_mask ----------------------------------------------------------------------------
    {
        "id": "02-001",
        "exercise": "02.padding_mask",
        "mistake": "uses <= lengths: one padding position too many is marked real (off by one)",
        "kind": "off_by_one",
        "source": HEAD + '''

def padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] <= lengths[:, None]
''',
    },
    {
        "id": "02-002",
        "exercise": "02.padding_mask",
        "mistake": "polarity flipped: True at the padding (the 'ignore' convention of nn.MultiheadAttention)",
        "kind": "mask_polarity",
        "source": HEAD + '''

def padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] >= lengths[:, None]
''',
    },
    {
        "id": "02-003",
        "exercise": "02.padding_mask",
        "mistake": "returns a 0/1 integer tensor instead of a bool tensor",
        "kind": "wrong_dtype",
        "source": HEAD + '''

def padding_mask(lengths, max_len):
    return (torch.arange(max_len)[None, :] < lengths[:, None]).long()
''',
    },
    {
        "id": "02-004",
        "exercise": "02.padding_mask",
        "mistake": "pads to lengths.max() instead of max_len: wrong width when max_len is larger",
        "kind": "ignores_argument",
        "source": HEAD + '''

def padding_mask(lengths, max_len):
    width = int(lengths.max())
    return torch.arange(width)[None, :] < lengths[:, None]
''',
    },
    {
        "id": "02-005",
        "exercise": "02.padding_mask",
        "mistake": "transposed: (max_len, batch), one row per position",
        "kind": "transpose",
        "source": HEAD + '''

def padding_mask(lengths, max_len):
    return torch.arange(max_len)[:, None] < lengths[None, :]
''',
    },
    {
        "id": "02-006",
        "exercise": "02.padding_mask",
        "mistake": "loop with positions counted from 1 (range(1, max_len + 1)): the last real token is marked padding",
        "kind": "off_by_one",
        "source": HEAD + '''

def padding_mask(lengths, max_len):
    mask = torch.zeros(len(lengths), max_len, dtype=torch.bool)
    for b, length in enumerate(lengths.tolist()):
        for position in range(1, max_len + 1):
            if position < length:
                mask[b, position - 1] = True
    return mask
''',
    },
    {
        "id": "02-007",
        "exercise": "02.padding_mask",
        "mistake": "returns a nested Python list of bools instead of a tensor",
        "kind": "wrong_type",
        "source": HEAD + '''

def padding_mask(lengths, max_len):
    return [[position < int(length) for position in range(max_len)] for length in lengths]
''',
    },
    # ---- 02.causal_mask -----------------------------------------------------------------------------
    {
        "id": "02-008",
        "exercise": "02.causal_mask",
        "mistake": "triu instead of tril: every query may read the future and not the past",
        "kind": "triangle",
        "source": HEAD + '''

def causal_mask(seq_len):
    return torch.ones(seq_len, seq_len, dtype=torch.bool).triu()
''',
    },
    {
        "id": "02-009",
        "exercise": "02.causal_mask",
        "mistake": "tril(diagonal=-1): leaves out the diagonal, so a token may not read itself (query 0 reads nothing)",
        "kind": "diagonal_offset",
        "source": HEAD + '''

def causal_mask(seq_len):
    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril(diagonal=-1)
''',
    },
    {
        "id": "02-010",
        "exercise": "02.causal_mask",
        "mistake": "the 'ignore' convention: triu(1), True on the future (what nn.Transformer's helpers mark)",
        "kind": "mask_polarity",
        "source": HEAD + '''

def causal_mask(seq_len):
    return torch.ones(seq_len, seq_len, dtype=torch.bool).triu(diagonal=1)
''',
    },
    {
        "id": "02-011",
        "exercise": "02.causal_mask",
        "mistake": "returns torch.tril(torch.ones(n, n)), a float tensor of 0/1, not bool",
        "kind": "wrong_dtype",
        "source": HEAD + '''

def causal_mask(seq_len):
    return torch.tril(torch.ones(seq_len, seq_len))
''',
    },
    {
        "id": "02-012",
        "exercise": "02.causal_mask",
        "mistake": "returns np.tril of a NumPy array instead of a torch tensor",
        "kind": "wrong_type",
        "source": HEAD + '''

def causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))
''',
    },
    {
        "id": "02-013",
        "exercise": "02.causal_mask",
        "mistake": "loop with j < i (strict): the diagonal is forbidden",
        "kind": "diagonal_offset",
        "source": HEAD + '''

def causal_mask(seq_len):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        for j in range(seq_len):
            mask[i, j] = j < i
    return mask
''',
    },
    {
        "id": "02-014",
        "exercise": "02.causal_mask",
        "mistake": "compares column and row indices the wrong way round (row >= col on a meshgrid with 'xy' indexing)",
        "kind": "triangle",
        "source": HEAD + '''

def causal_mask(seq_len):
    rows, cols = torch.meshgrid(torch.arange(seq_len), torch.arange(seq_len), indexing="xy")
    return rows >= cols
''',
    },
    # ---- 02.masked_softmax --------------------------------------------------------------------------
    {
        "id": "02-015",
        "exercise": "02.masked_softmax",
        "mistake": "fills with -1e9 then a plain softmax: a fully masked row comes out uniform instead of zeros",
        "kind": "fill_1e9",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)
''',
    },
    {
        "id": "02-016",
        "exercise": "02.masked_softmax",
        "mistake": "fills with -inf then a plain softmax: a fully masked row is NaN",
        "kind": "fill_inf_nan",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
''',
    },
    {
        "id": "02-017",
        "exercise": "02.masked_softmax",
        "mistake": "masks after the softmax (multiplies the weights by the mask): rows no longer sum to 1",
        "kind": "mask_after_softmax",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    return torch.softmax(scores, dim=-1) * mask
''',
    },
    {
        "id": "02-018",
        "exercise": "02.masked_softmax",
        "mistake": "softmax first, then zero the forbidden keys and renormalize: when a forbidden key has a huge score the allowed weights underflow to 0",
        "kind": "mask_after_softmax",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    weights = torch.softmax(scores, dim=-1) * mask
    return weights / (weights.sum(dim=-1, keepdim=True) + 1e-12)
''',
    },
    {
        "id": "02-019",
        "exercise": "02.masked_softmax",
        "mistake": "copies F.softmax(..., dtype=torch.float32) from a mixed-precision codebase: float64 scores come back float32",
        "kind": "dtype",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    filled = scores.masked_fill(~mask, float("-inf"))
    weights = F.softmax(filled, dim=-1, dtype=torch.float32)
    return torch.nan_to_num(weights, nan=0.0)
''',
    },
    {
        "id": "02-020",
        "exercise": "02.masked_softmax",
        "mistake": "-inf fill, softmax, then zeroes the NaN in place (weights[weights != weights] = 0): the backward pass fails, softmax's output was modified",
        "kind": "in_place",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights[weights != weights] = 0.0
    return weights
''',
    },
    {
        "id": "02-021",
        "exercise": "02.masked_softmax",
        "mistake": "fills with torch.finfo(dtype).min: finite, so an empty row is uniform, not zeros",
        "kind": "fill_finfo_min",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)
''',
    },
    {
        "id": "02-022",
        "exercise": "02.masked_softmax",
        "mistake": "mask polarity flipped: fills where the mask is True (treats True as 'ignore')",
        "kind": "mask_polarity",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    filled = scores.masked_fill(mask, float("-inf"))
    e = torch.exp(filled - filled.amax(dim=-1, keepdim=True).clamp(min=-1e30))
    return e / e.sum(dim=-1, keepdim=True).clamp(min=1e-30)
''',
    },
    {
        "id": "02-023",
        "exercise": "02.masked_softmax",
        "mistake": "fills the forbidden scores with 0 instead of -inf: forbidden keys still get weight",
        "kind": "fill_zero",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)
''',
    },
    {
        "id": "02-024",
        "exercise": "02.masked_softmax",
        "mistake": "exp(scores - max over ALL keys) * mask: when a forbidden key has the largest score the allowed keys underflow",
        "kind": "max_includes_masked",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
    return e / e.sum(dim=-1, keepdim=True).clamp(min=1e-12)
''',
    },
    {
        "id": "02-025",
        "exercise": "02.masked_softmax",
        "mistake": "masked_fill_ in place on the caller's scores (changes the input tensor, fails on a leaf that needs grad)",
        "kind": "in_place",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    scores.masked_fill_(~mask, -1e30)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
    return e / e.sum(dim=-1, keepdim=True).clamp(min=1e-30)
''',
    },
    {
        "id": "02-026",
        "exercise": "02.masked_softmax",
        "mistake": "softmax over dim=-2 (the queries) instead of the keys",
        "kind": "wrong_axis",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    mask = mask.expand_as(scores)
    filled = scores.masked_fill(~mask, float("-inf"))
    row_max = filled.amax(dim=-2, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(filled - row_max)
    return e / e.sum(dim=-2, keepdim=True).clamp(min=1e-30)
''',
    },
    {
        "id": "02-027",
        "exercise": "02.masked_softmax",
        "mistake": "computes the weights under torch.no_grad() 'for speed': no gradient flows to the scores",
        "kind": "cuts_gradient",
        "source": HEAD + MASKED_SOFTMAX.replace("def masked_softmax", "def _softmax_impl") + '''

def masked_softmax(scores, mask):
    with torch.no_grad():
        return _softmax_impl(scores, mask)
''',
    },
    {
        "id": "02-028",
        "exercise": "02.masked_softmax",
        "mistake": "adds 1e-9 to every exp before normalizing to avoid 0/0: forbidden keys of an empty row get 1/k_len, others a little too",
        "kind": "epsilon_everywhere",
        "source": HEAD + '''

def masked_softmax(scores, mask):
    filled = scores.masked_fill(~mask, float("-inf"))
    shift = scores.amax(dim=-1, keepdim=True)
    e = torch.exp(filled - shift) + 1e-9
    return e / e.sum(dim=-1, keepdim=True)
''',
    },
    # ---- 02.masked_attention ------------------------------------------------------------------------
    {
        "id": "02-029",
        "exercise": "02.masked_attention",
        "mistake": "applies the mask after the softmax (weights * mask), without renormalizing",
        "kind": "mask_after_softmax",
        "source": _masked_attention(
            "weights = torch.softmax(scores, dim=-1)\n    weights = weights if mask is None else weights * mask"
        ),
    },
    {
        "id": "02-030",
        "exercise": "02.masked_attention",
        "mistake": "forgot the 1/sqrt(d_head) scale",
        "kind": "missing_scale",
        "source": HEAD + MASKED_SOFTMAX + '''

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        weights = masked_softmax(scores, mask)
    return weights @ value, weights
''',
    },
    {
        "id": "02-031",
        "exercise": "02.masked_attention",
        "mistake": "always applies ~mask, so the default mask=None crashes (TypeError on ~None)",
        "kind": "none_mask",
        "source": HEAD + '''

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    filled = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(filled, dim=-1))
    return weights @ value, weights
''',
    },
    {
        "id": "02-032",
        "exercise": "02.masked_attention",
        "mistake": "key.transpose(1, 2): right for 3-D inputs, but on (batch, heads, len, d) it swaps heads and len",
        "kind": "hardcoded_ndim",
        "source": HEAD + MASKED_SOFTMAX + '''

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(1, 2) / math.sqrt(query.shape[-1])
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        weights = masked_softmax(scores, mask)
    return weights @ value, weights
''',
    },
    {
        "id": "02-033",
        "exercise": "02.masked_attention",
        "mistake": "the -1e9 fill of the tutorials: an empty sequence's queries average its padding",
        "kind": "fill_1e9",
        "source": _masked_attention(
            "weights = torch.softmax(scores if mask is None else scores.masked_fill(~mask, -1e9), dim=-1)"
        ),
    },
    {
        "id": "02-034",
        "exercise": "02.masked_attention",
        "mistake": "mask polarity flipped (masked_fill(mask, ...)): attends only to the forbidden keys",
        "kind": "mask_polarity",
        "source": _masked_attention("weights = torch.softmax(scores, dim=-1) if mask is None else masked_softmax(scores, ~mask)"),
    },
    {
        "id": "02-035",
        "exercise": "02.masked_attention",
        "mistake": "scales by sqrt(d_value) (value's width) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": HEAD + MASKED_SOFTMAX + '''

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.shape[-1])
    if mask is None:
        mask = torch.ones(scores.shape, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights @ value, weights
''',
    },
    {
        "id": "02-036",
        "exercise": "02.masked_attention",
        "mistake": "returns the weights detached (.detach()) 'because they are only for plotting': cuts their gradient",
        "kind": "cuts_gradient",
        "source": _masked_attention(
            "weights = (torch.softmax(scores, dim=-1) if mask is None else masked_softmax(scores, mask)).detach()"
        ),
    },
    {
        "id": "02-037",
        "exercise": "02.masked_attention",
        "mistake": "converts to NumPy, reuses lesson 01's code and returns NumPy arrays instead of tensors",
        "kind": "wrong_type",
        "source": HEAD + '''

def masked_attention(query, key, value, mask=None):
    q, k, v = query.detach().numpy(), key.detach().numpy(), value.detach().numpy()
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask.numpy(), scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    weights = e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-30)
    return weights @ v, weights
''',
    },
    {
        "id": "02-038",
        "exercise": "02.masked_attention",
        "mistake": "returns (weights, output) in the wrong order",
        "kind": "return_order",
        "source": HEAD + MASKED_SOFTMAX + '''

def masked_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None:
        mask = torch.ones(scores.shape, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    return weights, weights @ value
''',
    },
    {
        "id": "02-039",
        "exercise": "02.masked_attention",
        "mistake": "-inf fill and a plain softmax: an empty sequence's output is NaN",
        "kind": "fill_inf_nan",
        "source": _masked_attention(
            'weights = torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=-1)'
        ),
    },
    {
        "id": "02-040",
        "exercise": "02.masked_attention",
        "mistake": "adds the bool mask to the scores as if it were an additive float mask (+1 where allowed)",
        "kind": "bool_as_additive",
        "source": _masked_attention("weights = torch.softmax(scores if mask is None else scores + mask, dim=-1)"),
    },
    # ---- 02.decoder_mask ----------------------------------------------------------------------------
    {
        "id": "02-041",
        "exercise": "02.decoder_mask",
        "mistake": "returns (batch, seq_len, seq_len): against 4-D scores the batch axis lines up with the heads",
        "kind": "mask_shape",
        "source": HEAD + PADDING + CAUSAL + '''

def decoder_mask(lengths, seq_len):
    return padding_mask(lengths, seq_len)[:, None, :] & causal_mask(seq_len)
''',
    },
    {
        "id": "02-042",
        "exercise": "02.decoder_mask",
        "mistake": "puts the padding on the query axis ([:, None, :, None]) instead of the key axis",
        "kind": "padding_on_queries",
        "source": HEAD + PADDING + CAUSAL + '''

def decoder_mask(lengths, seq_len):
    return padding_mask(lengths, seq_len)[:, None, :, None] & causal_mask(seq_len)
''',
    },
    {
        "id": "02-043",
        "exercise": "02.decoder_mask",
        "mistake": "combines the two masks with | instead of &: a key is allowed if it is real OR in the past",
        "kind": "or_not_and",
        "source": HEAD + PADDING + CAUSAL + '''

def decoder_mask(lengths, seq_len):
    return padding_mask(lengths, seq_len)[:, None, None, :] | causal_mask(seq_len)
''',
    },
    {
        "id": "02-044",
        "exercise": "02.decoder_mask",
        "mistake": "masks padding queries as well as padding keys: padding rows become fully masked",
        "kind": "padding_on_queries",
        "source": HEAD + PADDING + CAUSAL + '''

def decoder_mask(lengths, seq_len):
    pad = padding_mask(lengths, seq_len)
    return pad[:, None, :, None] & pad[:, None, None, :] & causal_mask(seq_len)
''',
    },
    {
        "id": "02-045",
        "exercise": "02.decoder_mask",
        "mistake": "uses triu for the causal part",
        "kind": "triangle",
        "source": HEAD + PADDING + '''

def decoder_mask(lengths, seq_len):
    future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu()
    return padding_mask(lengths, seq_len)[:, None, None, :] & future
''',
    },
    {
        "id": "02-046",
        "exercise": "02.decoder_mask",
        "mistake": "heads axis in the wrong place: (batch, seq_len, 1, seq_len) via unsqueeze(2)",
        "kind": "mask_shape",
        "source": HEAD + PADDING + CAUSAL + '''

def decoder_mask(lengths, seq_len):
    both = padding_mask(lengths, seq_len)[:, None, :] & causal_mask(seq_len)
    return both.unsqueeze(2)
''',
    },
    {
        "id": "02-047",
        "exercise": "02.decoder_mask",
        "mistake": "builds a float mask (multiplies two float masks) instead of a bool one",
        "kind": "wrong_dtype",
        "source": HEAD + PADDING + CAUSAL + '''

def decoder_mask(lengths, seq_len):
    return padding_mask(lengths, seq_len).float()[:, None, None, :] * causal_mask(seq_len).float()
''',
    },
    # ---- 02.leaks -----------------------------------------------------------------------------------
    {
        "id": "02-048",
        "exercise": "02.leaks",
        "mistake": "compares with torch.allclose (a tolerance): a layer that leaks a tiny amount passes as causal",
        "kind": "tolerance_hides_leak",
        "source": HEAD + '''

def leaks(attend, seq_len):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, seq_len, 8, generator=gen, dtype=torch.float64)
    out = attend(x)
    for t in range(seq_len - 1):
        changed = x.clone()
        changed[:, t + 1 :] = torch.randn(1, seq_len - t - 1, 8, generator=gen, dtype=torch.float64)
        if not torch.allclose(attend(changed)[:, : t + 1], out[:, : t + 1]):
            return True
    return False
''',
    },
    {
        "id": "02-049",
        "exercise": "02.leaks",
        "mistake": "only changes the last token: a layer whose early outputs read a middle token is not caught",
        "kind": "single_split",
        "source": HEAD + '''

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    changed = x.clone()
    changed[:, -1] = torch.randn(8, dtype=torch.float64)
    return not torch.equal(attend(x)[:, :-1], attend(changed)[:, :-1])
''',
    },
    {
        "id": "02-050",
        "exercise": "02.leaks",
        "mistake": "compares the whole output: the changed positions themselves move, so every layer 'leaks'",
        "kind": "compares_everything",
        "source": HEAD + '''

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    changed = x.clone()
    changed[:, seq_len // 2 :] = torch.randn(1, seq_len - seq_len // 2, 8, dtype=torch.float64)
    return not torch.equal(attend(x), attend(changed))
''',
    },
    {
        "id": "02-051",
        "exercise": "02.leaks",
        "mistake": "changes the tokens after t but compares only outputs before t (out[:, :t]): misses a one-token look-ahead",
        "kind": "off_by_one",
        "source": HEAD + '''

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    out = attend(x)
    for t in range(1, seq_len):
        changed = x.clone()
        changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :])
        if not torch.equal(attend(changed)[:, :t], out[:, :t]):
            return True
    return False
''',
    },
    {
        "id": "02-052",
        "exercise": "02.leaks",
        "mistake": "changes tokens from t on (x[:, t:]) and compares outputs up to t: position t's own token changed, so causal layers 'leak'",
        "kind": "off_by_one",
        "source": HEAD + '''

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    out = attend(x)
    for t in range(seq_len - 1):
        changed = x.clone()
        changed[:, t:] = torch.randn_like(changed[:, t:])
        if not torch.equal(attend(changed)[:, : t + 1], out[:, : t + 1]):
            return True
    return False
''',
    },
    {
        "id": "02-053",
        "exercise": "02.leaks",
        "mistake": "tests one split point only (t = seq_len // 2): a leak at position 0 goes unseen",
        "kind": "single_split",
        "source": HEAD + '''

def leaks(attend, seq_len):
    t = seq_len // 2
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :])
    return not torch.equal(attend(x)[:, t], attend(changed)[:, t])
''',
    },
    {
        "id": "02-054",
        "exercise": "02.leaks",
        "mistake": "returns a tensor (torch.equal negated via tensor ops) instead of a Python bool, and checks only the last split",
        "kind": "wrong_type",
        "source": HEAD + '''

def leaks(attend, seq_len):
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    changed = x.clone()
    changed[:, -1] = 0.0
    return (attend(x)[:, :-1] != attend(changed)[:, :-1]).any()
''',
    },
    # ---- 02.sliding_window_mask ---------------------------------------------------------------------
    {
        "id": "02-055",
        "exercise": "02.sliding_window_mask",
        "mistake": "i - j <= window: window + 1 keys per query (off by one)",
        "kind": "off_by_one",
        "source": HEAD + '''

def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (j <= i) & (i - j <= window)
''',
    },
    {
        "id": "02-056",
        "exercise": "02.sliding_window_mask",
        "mistake": "a symmetric band |i - j| < window: forgets the causal part",
        "kind": "not_causal",
        "source": HEAD + '''

def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (i - j).abs() < window
''',
    },
    {
        "id": "02-057",
        "exercise": "02.sliding_window_mask",
        "mistake": "the window points forward (j >= i, j - i < window): the future instead of the past",
        "kind": "triangle",
        "source": HEAD + '''

def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (j >= i) & (j - i < window)
''',
    },
    {
        "id": "02-058",
        "exercise": "02.sliding_window_mask",
        "mistake": "tril() & triu(-window): the diagonals 0 .. -window, one key too many",
        "kind": "off_by_one",
        "source": HEAD + '''

def sliding_window_mask(seq_len, window):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    return ones.tril() & ones.triu(-window)
''',
    },
    {
        "id": "02-059",
        "exercise": "02.sliding_window_mask",
        "mistake": "window keys before the query, not counting itself: query i reads i-window .. i-1",
        "kind": "diagonal_offset",
        "source": HEAD + '''

def sliding_window_mask(seq_len, window):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (j < i) & (i - j <= window)
''',
    },
    # ---- 02.cached_causal_mask ----------------------------------------------------------------------
    {
        "id": "02-060",
        "exercise": "02.cached_causal_mask",
        "mistake": "tril of a (q_len, k_len) block: the top-left alignment of is_causal=True, not bottom-right",
        "kind": "causal_alignment",
        "source": HEAD + '''

def cached_causal_mask(q_len, k_len):
    return torch.ones(q_len, k_len, dtype=torch.bool).tril()
''',
    },
    {
        "id": "02-061",
        "exercise": "02.cached_causal_mask",
        "mistake": "the offset with the wrong sign: tril(q_len - k_len)",
        "kind": "causal_alignment",
        "source": HEAD + '''

def cached_causal_mask(q_len, k_len):
    return torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=q_len - k_len)
''',
    },
    {
        "id": "02-062",
        "exercise": "02.cached_causal_mask",
        "mistake": "offset one too big (k_len - q_len + 1): each query reads one key ahead",
        "kind": "off_by_one",
        "source": HEAD + '''

def cached_causal_mask(q_len, k_len):
    return torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=k_len - q_len + 1)
''',
    },
    {
        "id": "02-063",
        "exercise": "02.cached_causal_mask",
        "mistake": "takes the FIRST q_len rows of the full (k_len, k_len) causal mask instead of the last",
        "kind": "causal_alignment",
        "source": HEAD + '''

def cached_causal_mask(q_len, k_len):
    full = torch.ones(k_len, k_len, dtype=torch.bool).tril()
    return full[:q_len]
''',
    },
    {
        "id": "02-064",
        "exercise": "02.cached_causal_mask",
        "mistake": "all True, 'the cache only holds the past': wrong as soon as q_len > 1",
        "kind": "no_mask",
        "source": HEAD + '''

def cached_causal_mask(q_len, k_len):
    return torch.ones(q_len, k_len, dtype=torch.bool)
''',
    },
    # ---- 02.left_padding_mask -----------------------------------------------------------------------
    {
        "id": "02-065",
        "exercise": "02.left_padding_mask",
        "mistake": "returns the right-padding mask (True at the first `length` positions)",
        "kind": "padding_side",
        "source": HEAD + '''

def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] < lengths[:, None]
''',
    },
    {
        "id": "02-066",
        "exercise": "02.left_padding_mask",
        "mistake": "uses > max_len - length instead of >=: one real token too few (off by one)",
        "kind": "off_by_one",
        "source": HEAD + '''

def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] > (max_len - lengths)[:, None]
''',
    },
    {
        "id": "02-067",
        "exercise": "02.left_padding_mask",
        "mistake": "flips the right-padding mask along dim 0 (the batch) instead of dim 1 (the positions)",
        "kind": "wrong_axis",
        "source": HEAD + '''

def left_padding_mask(lengths, max_len):
    right = torch.arange(max_len)[None, :] < lengths[:, None]
    return right.flip(0)
''',
    },
    {
        "id": "02-068",
        "exercise": "02.left_padding_mask",
        "mistake": "compares positions with the length (arange >= length): True at the padding of a right-padded sequence",
        "kind": "wrong_formula",
        "source": HEAD + '''

def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] >= lengths[:, None]
''',
    },
    {
        "id": "02-069",
        "exercise": "02.left_padding_mask",
        "mistake": "polarity flipped: True at the padding on the left",
        "kind": "mask_polarity",
        "source": HEAD + '''

def left_padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] < (max_len - lengths)[:, None]
''',
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "02-p01", "prediction": "02.causal_keys_query2", "mistake": "leaves out the diagonal: a token does not read itself", "kind": "diagonal_offset", "value": [0, 1]},
    {"id": "02-p02", "prediction": "02.causal_keys_query2", "mistake": "reads the upper triangle (the keys from query 2 on)", "kind": "triangle", "value": [2, 3, 4]},
    {"id": "02-p03", "prediction": "02.causal_true_count", "mistake": "counts the strict lower triangle", "kind": "diagonal_offset", "value": 10},
    {"id": "02-p04", "prediction": "02.causal_true_count", "mistake": "half of the 25 entries, rounded up", "kind": "counting", "value": 13},
    {"id": "02-p05", "prediction": "02.fill_1e9_weights", "mistake": "thinks exp(-1e9) makes every weight 0", "kind": "fill_1e9", "value": "zeros"},
    {"id": "02-p06", "prediction": "02.fill_1e9_weights", "mistake": "thinks -1e9 behaves like -inf", "kind": "fill_1e9", "value": "nan"},
    {"id": "02-p07", "prediction": "02.fill_inf_weights", "mistake": "thinks exp(-inf) = 0 gives zeros", "kind": "fill_inf_nan", "value": "zeros"},
    {"id": "02-p08", "prediction": "02.fill_inf_weights", "mistake": "expects PyTorch to raise on an all -inf row", "kind": "fill_inf_nan", "value": "error"},
    {"id": "02-p09", "prediction": "02.nan_grad_entries", "mistake": "the loss ignores sequence 1, so no NaN reaches W", "kind": "nan_gradient", "value": 0},
    {"id": "02-p10", "prediction": "02.nan_grad_entries", "mistake": "only the entries tied to the empty sequence's rows: a quarter", "kind": "nan_gradient", "value": 16},
    {"id": "02-p11", "prediction": "02.padding_as_2d", "mistake": "expects a shape error", "kind": "mask_shape", "value": "error"},
    {"id": "02-p12", "prediction": "02.padding_as_2d", "mistake": "thinks broadcasting puts the batch axis where it belongs", "kind": "mask_shape", "value": "right"},
    {"id": "02-p13", "prediction": "02.padding_as_2d_one_query", "mistake": "expects a shape error", "kind": "mask_shape", "value": "error"},
    {"id": "02-p14", "prediction": "02.padding_as_2d_one_query", "mistake": "thinks the shape stays right and only the values go wrong", "kind": "mask_shape", "value": "right shape, wrong values"},
    {"id": "02-p15", "prediction": "02.is_causal_keys", "mistake": "assumes is_causal aligns bottom-right (query 0 at position 4)", "kind": "causal_alignment", "value": 5},
    {"id": "02-p16", "prediction": "02.is_causal_keys", "mistake": "query 0 of 3 sees k_len - q_len keys", "kind": "causal_alignment", "value": 4},
    {"id": "02-p17", "prediction": "02.leak_count_masked", "mistake": "thinks a causal mask keeps every output fixed, even of the changed tokens", "kind": "leak_counting", "value": 0},
    {"id": "02-p18", "prediction": "02.leak_count_open", "mistake": "thinks only the changed tokens' outputs move without a mask too", "kind": "leak_counting", "value": 2},
]
