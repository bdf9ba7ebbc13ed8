"""Blind battery, lesson 04 (multi-head attention in PyTorch): wrong answers and wrong predictions."""

HEAD = '''import math

import torch
import torch.nn.functional as F
from torch import nn

from course_utils import attention, masks
'''

INIT = '''

class MyMultiHeadAttention(nn.Module):
    """Multi-head attention: query (batch, q_len, d_model), key and value (batch, k_len, d_model)."""

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} is not divisible by num_heads {num_heads}")
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.query_proj = nn.Linear(d_model, d_model, bias=bias)
        self.key_proj = nn.Linear(d_model, d_model, bias=bias)
        self.value_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)
'''

GOOD_SPLIT = '''
    def split_heads(self, t):
        batch, length, _ = t.shape
        return t.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)
'''

GOOD_FORWARD = '''
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
'''


def _module(split=GOOD_SPLIT, forward=GOOD_FORWARD):
    return HEAD + INIT + split + forward


def _forward(middle, merge="out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)",
             final="return self.out_proj(out), weights"):
    """A forward whose lines between the splits and the merge are `middle` (already indented)."""
    return f'''
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
{middle}
        {merge}
        {final}
'''


STANDARD_MIDDLE = '''        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))'''


def _train(body):
    return HEAD + '''

def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
''' + body


def _alibi(body):
    return HEAD + '''

def alibi_bias(num_heads, seq_len):
''' + body


def _causal_layer(init_body, forward_body):
    return HEAD + '''

class CausalSelfAttention(nn.Module):
    """Causal self-attention: (batch, seq_len, d_model) -> (batch, seq_len, d_model), for seq_len <= max_len."""

    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
''' + init_body + '''
    def forward(self, x):
''' + forward_body


CASES = [
    # ---- 04.multi_head_module -----------------------------------------------------------------------
    {
        "id": "04-001",
        "exercise": "04.multi_head_module",
        "mistake": "split_heads views straight to (batch, heads, length, d_head) without the transpose: heads get mixed positions",
        "kind": "reshape_without_transpose",
        "source": _module(split='''
    def split_heads(self, t):
        batch, length, _ = t.shape
        return t.view(batch, self.num_heads, length, self.d_head)
'''),
    },
    {
        "id": "04-002",
        "exercise": "04.multi_head_module",
        "mistake": "merges with .view after .transpose: RuntimeError, the tensor is not contiguous",
        "kind": "view_after_transpose",
        "source": _module(forward=_forward(STANDARD_MIDDLE, merge="out = (weights @ v).transpose(1, 2).view(batch, q_len, self.d_model)")),
    },
    {
        "id": "04-003",
        "exercise": "04.multi_head_module",
        "mistake": "merges with a plain reshape of (batch, heads, q_len, d_head), no transpose back",
        "kind": "reshape_without_transpose",
        "source": _module(forward=_forward(STANDARD_MIDDLE, merge="out = (weights @ v).reshape(batch, q_len, self.d_model)")),
    },
    {
        "id": "04-004",
        "exercise": "04.multi_head_module",
        "mistake": "scales the scores by sqrt(d_model) instead of sqrt(d_head)",
        "kind": "wrong_scale",
        "source": _module(forward=_forward(STANDARD_MIDDLE.replace("math.sqrt(self.d_head)", "math.sqrt(self.d_model)"))),
    },
    {
        "id": "04-005",
        "exercise": "04.multi_head_module",
        "mistake": "F.dropout(weights, p) without training=self.training: dropout stays on in eval mode",
        "kind": "dropout_in_eval",
        "source": _module(forward=_forward('''        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = F.dropout(torch.softmax(scores, dim=-1), p=self.dropout.p)''')),
    },
    {
        "id": "04-006",
        "exercise": "04.multi_head_module",
        "mistake": "split_heads uses a length stored from the query (the tutorials' seq_len = query.size(1)): crashes in cross-attention",
        "kind": "cross_attention_length",
        "source": HEAD + INIT + '''
    def split_heads(self, t):
        return t.view(t.shape[0], self.seq_len, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        self.seq_len = q_len
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
''',
    },
    {
        "id": "04-007",
        "exercise": "04.multi_head_module",
        "mistake": "the 'fix' view(-1, length, heads, d_head) with the query's length: infers a wrong batch, mixes sequences",
        "kind": "inferred_batch",
        "source": HEAD + INIT + '''
    def split_heads(self, t):
        return t.reshape(-1, self.q_len, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        self.q_len = q_len
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
''',
    },
    {
        "id": "04-008",
        "exercise": "04.multi_head_module",
        "mistake": "mask polarity flipped: masked_fill(mask, -inf) hides the allowed keys",
        "kind": "mask_polarity",
        "source": _module(forward=_forward(STANDARD_MIDDLE.replace("masked_fill(~mask", "masked_fill(mask"))),
    },
    {
        "id": "04-009",
        "exercise": "04.multi_head_module",
        "mistake": "forgets out_proj: returns the merged heads",
        "kind": "missing_projection",
        "source": _module(forward=_forward(STANDARD_MIDDLE, final="return out, weights")),
    },
    {
        "id": "04-010",
        "exercise": "04.multi_head_module",
        "mistake": "applies the mask after the softmax (weights * mask): rows no longer sum to 1",
        "kind": "mask_after_softmax",
        "source": _module(forward=_forward('''        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask
        weights = self.dropout(weights)''')),
    },
    {
        "id": "04-011",
        "exercise": "04.multi_head_module",
        "mistake": "returns the weights averaged over the heads, like nn.MultiheadAttention",
        "kind": "averaged_weights",
        "source": _module(forward=_forward(STANDARD_MIDDLE, final="return self.out_proj(out), weights.mean(dim=1)")),
    },
    {
        "id": "04-012",
        "exercise": "04.multi_head_module",
        "mistake": "a hand-written softmax exp(s) / sum exp(s) with no max shift: overflows on scores in the thousands",
        "kind": "no_max_shift",
        "source": _module(forward=_forward('''        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        e = torch.exp(scores)
        if mask is not None:
            e = e.masked_fill(~mask, 0.0)
        weights = self.dropout(e / e.sum(dim=-1, keepdim=True))''')),
    },
    {
        "id": "04-013",
        "exercise": "04.multi_head_module",
        "mistake": "softmax over dim=-2 (the queries)",
        "kind": "wrong_axis",
        "source": _module(forward=_forward(STANDARD_MIDDLE.replace("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)"))),
    },
    {
        "id": "04-014",
        "exercise": "04.multi_head_module",
        "mistake": "copy-paste slip: keys projected with value_proj",
        "kind": "copy_paste",
        "source": _module(forward=_forward(STANDARD_MIDDLE).replace(
            "k = self.split_heads(self.key_proj(key))", "k = self.split_heads(self.value_proj(key))")),
    },
    {
        "id": "04-015",
        "exercise": "04.multi_head_module",
        "mistake": "dropout applied to the scores before the softmax instead of to the weights",
        "kind": "dropout_placement",
        "source": _module(forward=_forward('''        scores = self.dropout(q @ k.transpose(-2, -1) / math.sqrt(self.d_head))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)''')),
    },
    {
        "id": "04-016",
        "exercise": "04.multi_head_module",
        "mistake": "split_heads reshapes to (batch, length, d_head, heads): each head gets strided features",
        "kind": "head_split_order",
        "source": _module(split='''
    def split_heads(self, t):
        batch, length, _ = t.shape
        return t.reshape(batch, length, self.d_head, self.num_heads).permute(0, 3, 1, 2)
'''),
    },
    {
        "id": "04-017",
        "exercise": "04.multi_head_module",
        "mistake": "fills masked scores with 0 instead of -inf",
        "kind": "fill_zero",
        "source": _module(forward=_forward(STANDARD_MIDDLE.replace('float("-inf")', "0.0"))),
    },
    # ---- 04.weights_for_analysis --------------------------------------------------------------------
    {
        "id": "04-018",
        "exercise": "04.weights_for_analysis",
        "mistake": "switches to eval mode but never back: a module in training is left in eval mode",
        "kind": "mode_not_restored",
        "source": HEAD + '''

def weights_for_analysis(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
''',
    },
    {
        "id": "04-019",
        "exercise": "04.weights_for_analysis",
        "mistake": "always calls mha.train() afterwards: a module that was in eval mode ends in training mode",
        "kind": "mode_not_restored",
        "source": HEAD + '''

def weights_for_analysis(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        _, weights = mha(query, key, value)
    mha.train()
    return weights
''',
    },
    {
        "id": "04-020",
        "exercise": "04.weights_for_analysis",
        "mistake": "uses torch.no_grad() only, thinking it switches dropout off: dropout still acts in training mode",
        "kind": "dropout_in_eval",
        "source": HEAD + '''

def weights_for_analysis(mha, query, key, value):
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
''',
    },
    {
        "id": "04-021",
        "exercise": "04.weights_for_analysis",
        "mistake": "averages 20 calls in the current mode to 'wash out' dropout: only approximately the weights without dropout",
        "kind": "dropout_in_eval",
        "source": HEAD + '''

def weights_for_analysis(mha, query, key, value):
    with torch.no_grad():
        runs = [mha(query, key, value)[1] for _ in range(20)]
    return torch.stack(runs).mean(dim=0)
''',
    },
    {
        "id": "04-022",
        "exercise": "04.weights_for_analysis",
        "mistake": "returns the weights averaged over the heads (batch, q_len, k_len)",
        "kind": "averaged_weights",
        "source": HEAD + '''

def weights_for_analysis(mha, query, key, value):
    was_training = mha.training
    mha.eval()
    with torch.no_grad():
        _, weights = mha(query, key, value)
    mha.train(was_training)
    return weights.mean(dim=1)
''',
    },
    # ---- 04.load_from_torch -------------------------------------------------------------------------
    {
        "id": "04-023",
        "exercise": "04.load_from_torch",
        "mistake": "transposes each block of in_proj_weight (it is already nn.Linear's (out, in) layout)",
        "kind": "transpose",
        "source": HEAD + '''

def load_from_torch(module, torch_mha):
    d = module.d_model
    w, b = torch_mha.in_proj_weight, torch_mha.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((module.query_proj, module.key_proj, module.value_proj)):
            layer.weight.copy_(w[i * d : (i + 1) * d].T)
            layer.bias.copy_(b[i * d : (i + 1) * d])
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module
''',
    },
    {
        "id": "04-024",
        "exercise": "04.load_from_torch",
        "mistake": "unpacks the blocks in the order query, value, key",
        "kind": "packing_order",
        "source": HEAD + '''

def load_from_torch(module, torch_mha):
    w_q, w_v, w_k = torch_mha.in_proj_weight.chunk(3)
    b_q, b_v, b_k = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        module.query_proj.weight.copy_(w_q)
        module.query_proj.bias.copy_(b_q)
        module.key_proj.weight.copy_(w_k)
        module.key_proj.bias.copy_(b_k)
        module.value_proj.weight.copy_(w_v)
        module.value_proj.bias.copy_(b_v)
        module.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
    return module
''',
    },
    {
        "id": "04-025",
        "exercise": "04.load_from_torch",
        "mistake": "copies the weights but forgets the in_proj biases",
        "kind": "missing_bias",
        "source": HEAD + '''

def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3)
    with torch.no_grad():
        module.query_proj.weight.copy_(w_q)
        module.key_proj.weight.copy_(w_k)
        module.value_proj.weight.copy_(w_v)
        module.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
    return module
''',
    },
    {
        "id": "04-026",
        "exercise": "04.load_from_torch",
        "mistake": "forgets out_proj",
        "kind": "missing_projection",
        "source": HEAD + '''

def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for layer, w, b in ((module.query_proj, w_q, b_q), (module.key_proj, w_k, b_k), (module.value_proj, w_v, b_v)):
            layer.weight.copy_(w)
            layer.bias.copy_(b)
    return module
''',
    },
    {
        "id": "04-027",
        "exercise": "04.load_from_torch",
        "mistake": "copies everything right but forgets to return the module (returns None)",
        "kind": "missing_return",
        "source": HEAD + '''

def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for layer, w, b in ((module.query_proj, w_q, b_q), (module.key_proj, w_k, b_k), (module.value_proj, w_v, b_v)):
            layer.weight.copy_(w)
            layer.bias.copy_(b)
        module.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
''',
    },
    {
        "id": "04-028",
        "exercise": "04.load_from_torch",
        "mistake": "out_proj copied transposed, 'like the NumPy W_o'",
        "kind": "transpose",
        "source": HEAD + '''

def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for layer, w, b in ((module.query_proj, w_q, b_q), (module.key_proj, w_k, b_k), (module.value_proj, w_v, b_v)):
            layer.weight.copy_(w)
            layer.bias.copy_(b)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight.T)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module
''',
    },
    # ---- 04.torch_cross_attend ----------------------------------------------------------------------
    {
        "id": "04-029",
        "exercise": "04.torch_cross_attend",
        "mistake": "passes the course's padding mask (True = real key) as key_padding_mask, which means True = ignore",
        "kind": "mask_polarity",
        "source": HEAD + '''

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    real = torch.arange(k_len)[None, :] < encoder_lengths[:, None]
    attn_mask = None
    if causal:
        attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu(1)
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=real, attn_mask=attn_mask)
    return out
''',
    },
    {
        "id": "04-030",
        "exercise": "04.torch_cross_attend",
        "mistake": "gives the causal attn_mask in the course's convention (tril, True = may attend): PyTorch reads it as 'not allowed'",
        "kind": "mask_polarity",
        "source": HEAD + '''

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = None
    if causal:
        attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).tril()
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)
    return out
''',
    },
    {
        "id": "04-031",
        "exercise": "04.torch_cross_attend",
        "mistake": "ignores causal=True: a decoder's self-attention reads the future",
        "kind": "ignores_argument",
        "source": HEAD + '''

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore)
    return out
''',
    },
    {
        "id": "04-032",
        "exercise": "04.torch_cross_attend",
        "mistake": "returns the (output, weights) tuple instead of the output",
        "kind": "return_arity",
        "source": HEAD + '''

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = None
    if causal:
        attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu(1)
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)
''',
    },
    {
        "id": "04-033",
        "exercise": "04.torch_cross_attend",
        "mistake": "passes the padding as a 3-D attn_mask (batch * heads, q_len, k_len) built with .repeat (head-major) instead of repeat_interleave (batch-major): sequences get each other's padding",
        "kind": "mask_shape",
        "source": HEAD + '''

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    batch, q_len, _ = decoder_states.shape
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, None, :] >= encoder_lengths[:, None, None]
    ignore = ignore.expand(batch, q_len, k_len)
    if causal:
        ignore = ignore | torch.ones(q_len, k_len, dtype=torch.bool).triu(1)
    attn_mask = ignore.repeat(torch_mha.num_heads, 1, 1)
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, attn_mask=attn_mask)
    return out
''',
    },
    {
        "id": "04-034",
        "exercise": "04.torch_cross_attend",
        "mistake": "causal mask triu(0): also forbids the diagonal, so query 0 has no key at all",
        "kind": "diagonal_offset",
        "source": HEAD + '''

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = None
    if causal:
        attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu()
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)
    return out
''',
    },
    {
        "id": "04-035",
        "exercise": "04.torch_cross_attend",
        "mistake": "off by one: ignores the last real key (positions >= length - 1)",
        "kind": "off_by_one",
        "source": HEAD + '''

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= (encoder_lengths[:, None] - 1)
    attn_mask = None
    if causal:
        attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu(1)
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)
    return out
''',
    },
    # ---- 04.softmax_backward ------------------------------------------------------------------------
    {
        "id": "04-036",
        "exercise": "04.softmax_backward",
        "mistake": "keeps only the diagonal of the Jacobian: g * w * (1 - w)",
        "kind": "diagonal_jacobian",
        "source": HEAD + '''

def softmax_backward(weights, grad_weights):
    return grad_weights * weights * (1 - weights)
''',
    },
    {
        "id": "04-037",
        "exercise": "04.softmax_backward",
        "mistake": "sums g * w over the whole tensor instead of each row",
        "kind": "global_sum",
        "source": HEAD + '''

def softmax_backward(weights, grad_weights):
    return weights * (grad_weights - (grad_weights * weights).sum())
''',
    },
    {
        "id": "04-038",
        "exercise": "04.softmax_backward",
        "mistake": "subtracts the plain row sum of g instead of the w-weighted sum",
        "kind": "wrong_formula",
        "source": HEAD + '''

def softmax_backward(weights, grad_weights):
    return weights * (grad_weights - grad_weights.sum(dim=-1, keepdim=True))
''',
    },
    {
        "id": "04-039",
        "exercise": "04.softmax_backward",
        "mistake": "sign flipped: w * (sum(g w) - g)",
        "kind": "sign",
        "source": HEAD + '''

def softmax_backward(weights, grad_weights):
    return weights * ((grad_weights * weights).sum(dim=-1, keepdim=True) - grad_weights)
''',
    },
    {
        "id": "04-040",
        "exercise": "04.softmax_backward",
        "mistake": "sums over dim 0 instead of the last axis",
        "kind": "wrong_axis",
        "source": HEAD + '''

def softmax_backward(weights, grad_weights):
    return weights * (grad_weights - (grad_weights * weights).sum(dim=0, keepdim=True))
''',
    },
    {
        "id": "04-041",
        "exercise": "04.softmax_backward",
        "mistake": "returns g * w, the chain rule of exp alone, forgetting the normalization",
        "kind": "wrong_formula",
        "source": HEAD + '''

def softmax_backward(weights, grad_weights):
    return grad_weights * weights
''',
    },
    {
        "id": "04-042",
        "exercise": "04.softmax_backward",
        "mistake": "builds the Jacobian as w w^T - diag(w) (the sign of both terms flipped)",
        "kind": "sign",
        "source": HEAD + '''

def softmax_backward(weights, grad_weights):
    jacobian = weights.unsqueeze(-1) * weights.unsqueeze(-2) - torch.diag_embed(weights)
    return (jacobian @ grad_weights.unsqueeze(-1)).squeeze(-1)
''',
    },
    # ---- 04.qk_matrix -------------------------------------------------------------------------------
    {
        "id": "04-043",
        "exercise": "04.qk_matrix",
        "mistake": "query_proj.weight @ key_proj.weight.T: forgets that nn.Linear stores (out, in)",
        "kind": "transpose",
        "source": HEAD + '''

def qk_matrix(mha):
    with torch.no_grad():
        return mha.query_proj.weight @ mha.key_proj.weight.T
''',
    },
    {
        "id": "04-044",
        "exercise": "04.qk_matrix",
        "mistake": "returns the transpose (row i belongs to key feature i)",
        "kind": "transpose",
        "source": HEAD + '''

def qk_matrix(mha):
    with torch.no_grad():
        return mha.key_proj.weight.T @ mha.query_proj.weight
''',
    },
    {
        "id": "04-045",
        "exercise": "04.qk_matrix",
        "mistake": "divides by sqrt(d_head) although the docstring leaves the scale out",
        "kind": "extra_scale",
        "source": HEAD + '''

def qk_matrix(mha):
    d_head = mha.query_proj.weight.shape[0] // mha.num_heads
    with torch.no_grad():
        return mha.query_proj.weight.T @ mha.key_proj.weight / math.sqrt(d_head)
''',
    },
    {
        "id": "04-046",
        "exercise": "04.qk_matrix",
        "mistake": "only head 0's slice (W_q,0 W_k,0^T), not the sum over the heads",
        "kind": "single_head",
        "source": HEAD + '''

def qk_matrix(mha):
    d_head = mha.query_proj.weight.shape[0] // mha.num_heads
    with torch.no_grad():
        w_q = mha.query_proj.weight[:d_head]
        w_k = mha.key_proj.weight[:d_head]
        return w_q.T @ w_k
''',
    },
    {
        "id": "04-047",
        "exercise": "04.qk_matrix",
        "mistake": "averages the heads' matrices instead of summing them",
        "kind": "mean_not_sum",
        "source": HEAD + '''

def qk_matrix(mha):
    heads = mha.num_heads
    d_head = mha.query_proj.weight.shape[0] // heads
    with torch.no_grad():
        total = 0
        for h in range(heads):
            rows = slice(h * d_head, (h + 1) * d_head)
            total = total + mha.query_proj.weight[rows].T @ mha.key_proj.weight[rows]
        return total / heads
''',
    },
    # ---- 04.train_step ------------------------------------------------------------------------------
    {
        "id": "04-048",
        "exercise": "04.train_step",
        "mistake": "never calls zero_grad: stale gradients are added to the new ones",
        "kind": "stale_gradients",
        "source": _train('''    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "04-049",
        "exercise": "04.train_step",
        "mistake": "zero_grad between backward() and step(): the step sees no gradient",
        "kind": "zero_grad_order",
        "source": _train('''    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "04-050",
        "exercise": "04.train_step",
        "mistake": "returns the loss tensor instead of a float",
        "kind": "wrong_type",
        "source": _train('''    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    return loss
'''),
    },
    {
        "id": "04-051",
        "exercise": "04.train_step",
        "mistake": "sum of squared errors (reduction='sum') instead of the mean",
        "kind": "loss_reduction",
        "source": _train('''    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target, reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "04-052",
        "exercise": "04.train_step",
        "mistake": "calls optimizer.step() before loss.backward(): steps on the stale gradients",
        "kind": "zero_grad_order",
        "source": _train('''    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    optimizer.step()
    loss.backward()
    return loss.item()
'''),
    },
    {
        "id": "04-053",
        "exercise": "04.train_step",
        "mistake": "clips the gradient norm at 1.0, which the task does not ask for (changes the huge-gradient step)",
        "kind": "unasked_clipping",
        "source": _train('''    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "04-054",
        "exercise": "04.train_step",
        "mistake": "squeezes the output's query axis: (batch, d) against target (batch, 1, d) broadcasts to (batch, batch, d)",
        "kind": "broadcast_loss",
        "source": _train('''    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = ((output.squeeze(1) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "04-055",
        "exercise": "04.train_step",
        "mistake": "returns the loss recomputed after the step instead of the loss the step was taken on",
        "kind": "wrong_value",
        "source": _train('''    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        output, _ = model(query, keys, values)
        return F.mse_loss(output, target).item()
'''),
    },
    # ---- 04.causal_self_attention -------------------------------------------------------------------
    {
        "id": "04-056",
        "exercise": "04.causal_self_attention",
        "mistake": "registers the mask with the default persistent=True: it ends up in the state_dict",
        "kind": "buffer_persistent",
        "source": _causal_layer('''        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril())
''', '''        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    },
    {
        "id": "04-057",
        "exercise": "04.causal_self_attention",
        "mistake": "keeps the mask as a plain attribute, not a buffer (does not move with .to(device))",
        "kind": "not_a_buffer",
        "source": _causal_layer('''        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.causal = torch.ones(max_len, max_len, dtype=torch.bool).tril()
''', '''        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    },
    {
        "id": "04-058",
        "exercise": "04.causal_self_attention",
        "mistake": "triu instead of tril for the buffer",
        "kind": "triangle",
        "source": _causal_layer('''        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).triu(), persistent=False)
''', '''        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    },
    {
        "id": "04-059",
        "exercise": "04.causal_self_attention",
        "mistake": "returns the (output, weights) tuple from forward",
        "kind": "return_arity",
        "source": _causal_layer('''        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril(), persistent=False)
''', '''        n = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:n, :n])
'''),
    },
    {
        "id": "04-060",
        "exercise": "04.causal_self_attention",
        "mistake": "names the buffer 'mask' instead of 'causal'",
        "kind": "wrong_name",
        "source": _causal_layer('''        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("mask", torch.ones(max_len, max_len, dtype=torch.bool).tril(), persistent=False)
''', '''        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.mask[:n, :n])
        return out
'''),
    },
    {
        "id": "04-061",
        "exercise": "04.causal_self_attention",
        "mistake": "slices the buffer as causal[:n] only (n rows, max_len columns): wrong mask width for n < max_len",
        "kind": "off_by_slice",
        "source": _causal_layer('''        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril(), persistent=False)
''', '''        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n])
        return out
'''),
    },
    # ---- 04.alibi_bias ------------------------------------------------------------------------------
    {
        "id": "04-062",
        "exercise": "04.alibi_bias",
        "mistake": "counts heads from 0: slopes 2^(-8h/H) for h = 0 .. H-1 (the first head gets slope 1)",
        "kind": "off_by_one",
        "source": _alibi('''    h = torch.arange(num_heads, dtype=torch.float32)
    slopes = 2.0 ** (-8.0 * h / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j).float()
    return bias.masked_fill(j > i, float("-inf"))
'''),
    },
    {
        "id": "04-063",
        "exercise": "04.alibi_bias",
        "mistake": "sign flipped: older keys get a bonus +m (i - j)",
        "kind": "sign",
        "source": _alibi('''    h = torch.arange(1, num_heads + 1, dtype=torch.float32)
    slopes = 2.0 ** (-8.0 * h / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = slopes[:, None, None] * (i - j).float()
    return bias.masked_fill(j > i, float("-inf"))
'''),
    },
    {
        "id": "04-064",
        "exercise": "04.alibi_bias",
        "mistake": "forgets the causal part: -m |i - j| for every key",
        "kind": "not_causal",
        "source": _alibi('''    h = torch.arange(1, num_heads + 1, dtype=torch.float32)
    slopes = 2.0 ** (-8.0 * h / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return -slopes[:, None, None] * (i - j).abs().float()
'''),
    },
    {
        "id": "04-065",
        "exercise": "04.alibi_bias",
        "mistake": "fills the future with -1e9 instead of -inf",
        "kind": "fill_1e9",
        "source": _alibi('''    h = torch.arange(1, num_heads + 1, dtype=torch.float32)
    slopes = 2.0 ** (-8.0 * h / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j).float()
    return bias.masked_fill(j > i, -1e9)
'''),
    },
    {
        "id": "04-066",
        "exercise": "04.alibi_bias",
        "mistake": "builds the bias in float64 (math and torch.tensor of Python floats with dtype=float64)",
        "kind": "dtype",
        "source": _alibi('''    slopes = torch.tensor([2.0 ** (-8.0 * h / num_heads) for h in range(1, num_heads + 1)], dtype=torch.float64)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf"))
'''),
    },
    {
        "id": "04-067",
        "exercise": "04.alibi_bias",
        "mistake": "slopes 2^(-8/h) instead of 2^(-8h/H)",
        "kind": "wrong_formula",
        "source": _alibi('''    h = torch.arange(1, num_heads + 1, dtype=torch.float32)
    slopes = 2.0 ** (-8.0 / h)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j).float()
    return bias.masked_fill(j > i, float("-inf"))
'''),
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "04-p01", "prediction": "04.linear_weight_shape", "mistake": "(in, out), as in x @ W", "kind": "linear_layout", "value": (4, 3)},
    {"id": "04-p02", "prediction": "04.view_after_transpose", "mistake": "thinks view works on any tensor of the right size", "kind": "view_after_transpose", "value": "works"},
    {"id": "04-p03", "prediction": "04.same_output", "mistake": "same parameters, so same output", "kind": "heads_change_softmax", "value": True},
    {"id": "04-p04", "prediction": "04.single_weights_shape", "mistake": "one head drops the heads axis", "kind": "shape_missing_heads", "value": (2, 5, 5)},
    {"id": "04-p05", "prediction": "04.single_weights_shape", "mistake": "keeps 4 heads from the other module", "kind": "shape", "value": (2, 4, 5, 5)},
    {"id": "04-p06", "prediction": "04.inferred_batch_outcome", "mistake": "expects the view to crash", "kind": "inferred_batch", "value": "error"},
    {"id": "04-p07", "prediction": "04.inferred_batch_outcome", "mistake": "thinks -1 infers the right batch", "kind": "inferred_batch", "value": "right"},
    {"id": "04-p08", "prediction": "04.fresh_module_mode", "mistake": "thinks modules start in eval mode", "kind": "module_mode", "value": "eval"},
    {"id": "04-p09", "prediction": "04.gradcheck_wrong_forward", "mistake": "thinks gradcheck verifies the forward computes attention", "kind": "gradcheck_scope", "value": False},
    {"id": "04-p10", "prediction": "04.weight_on_match_before", "mistake": "a query is a noisy copy of its key, so it already matches it well", "kind": "untrained_weights", "value": 0.9},
    {"id": "04-p11", "prediction": "04.weight_on_match_before", "mistake": "random projections give nothing: weight 0", "kind": "untrained_weights", "value": 0.0},
]
