"""Blind battery 3, lesson 04: wrong answers a student could write (see README.md). Never edited to pass."""

from textwrap import dedent

TORCH = (
    "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
    "from course_utils import attention, masks\n\n"
)

# the lesson's own cell before the module: the course's masked softmax
MSM = dedent("""
    def masked_softmax(scores, mask=None):
        return attention.masked_softmax(scores, mask)
""")

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
SPLIT_OK = """
    def split_heads(self, t):
        batch, length, _ = t.shape
        # (batch, length, d_model) -> (batch, length, heads, d_head) -> (batch, heads, length, d_head)
        return t.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)
"""
FORWARD_OK = """
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        weights = masked_softmax(scores, mask)
        out = self.dropout(weights) @ v
        batch, _, q_len, _ = out.shape
        out = out.transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
"""


def _module(cid, mistake, kind, split=SPLIT_OK, forward=FORWARD_OK):
    source = TORCH + MSM + INIT + dedent(split).replace("\n", "\n    ").rstrip() + "\n"
    source += "    " + dedent(forward).strip().replace("\n", "\n    ") + "\n"
    return {"id": cid, "exercise": "04.multi_head_module", "mistake": mistake, "kind": kind, "source": source}


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": TORCH + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- 04.multi_head_module
    _module(
        "04-001",
        "split_heads without the transpose: heads and positions swapped",
        "missing-transpose",
        split="""
    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.d_head)
    """,
    ),
    _module(
        "04-002",
        "split_heads in one view straight to (batch, heads, length, d_head)",
        "single-reshape",
        split="""
    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, self.num_heads, n, self.d_head)
    """,
    ),
    _module(
        "04-003",
        "merges the heads with .view right after .transpose (RuntimeError: view size is not compatible)",
        "view-after-transpose",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = (self.dropout(weights) @ v).transpose(1, 2).view(query.shape[0], query.shape[1], self.d_model)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-004",
        "merges with reshape but without transposing back",
        "missing-transpose",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = (self.dropout(weights) @ v).reshape(query.shape[0], query.shape[1], self.d_model)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-005",
        "scales by sqrt(d_model) instead of sqrt(d_head)",
        "d-model-scale",
        forward="""
    def forward(self, query, key, value, mask=None):
        q, k, v = (self.split_heads(p(x)) for p, x in ((self.query_proj, query), (self.key_proj, key), (self.value_proj, value)))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_model), mask)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-006",
        "projects the keys from the query (self-attention habit): cross-attention is wrong",
        "self-attention-habit",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(query))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-007",
        "dropout with F.dropout(..., training=True): still drops in eval mode",
        "dropout-in-eval",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        weights = F.dropout(weights, p=self.dropout.p, training=True)
        out = (weights @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-008",
        "-1e9 fill and a plain softmax instead of the masked softmax: a sequence with no real key averages the values",
        "fill-1e9",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-009",
        "mask polarity reversed (passes ~mask)",
        "polarity",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), None if mask is None else ~mask)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-010",
        "forgets out_proj",
        "missing-out-proj",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return (self.dropout(weights) @ v).transpose(1, 2).flatten(2), weights
    """,
    ),
    _module(
        "04-011",
        "returns the weights averaged over the heads (nn.MultiheadAttention's default)",
        "averaged-weights",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights.mean(dim=1)
    """,
    ),
    _module(
        "04-012",
        "detaches the weights before the values: no gradient reaches the query and key projections",
        "cuts-grad",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask).detach()
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-013",
        "hard-codes 4 heads in split_heads (the lesson's example)",
        "hard-coded",
        split="""
    def split_heads(self, t):
        return t.view(t.shape[0], t.shape[1], 4, -1).transpose(1, 2)
    """,
    ),
    _module(
        "04-014",
        "softmax written by hand without the max shift: NaN on scores in the thousands",
        "overflow",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        e = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(self.d_head))
        if mask is not None:
            e = e.masked_fill(~mask, 0.0)
        weights = e / e.sum(dim=-1, keepdim=True).clamp_min(1e-12)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-015",
        "uses value_proj for the keys (copy-paste)",
        "copy-paste",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.value_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    _module(
        "04-016",
        "softmax over the queries (dim=-2)",
        "wrong-axis",
        forward="""
    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        weights = masked_softmax(scores.transpose(-2, -1), None if mask is None else mask.transpose(-2, -1))
        weights = weights.transpose(-2, -1)
        out = (self.dropout(weights) @ v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights
    """,
    ),
    # ---- 04.weights_for_analysis
    _c(
        "04-017",
        "04.weights_for_analysis",
        "switches to eval and never switches back",
        "mode-not-restored",
        """
    def weights_for_analysis(mha, query, key, value):
        mha.eval()
        with torch.no_grad():
            _, weights = mha(query, key, value)
        return weights
    """,
    ),
    _c(
        "04-018",
        "04.weights_for_analysis",
        "always calls mha.train() afterwards: an eval module ends in training mode",
        "mode-not-restored",
        """
    def weights_for_analysis(mha, query, key, value):
        mha.eval()
        with torch.no_grad():
            weights = mha(query, key, value)[1]
        mha.train()
        return weights
    """,
    ),
    _c(
        "04-019",
        "04.weights_for_analysis",
        "thinks torch.no_grad() switches dropout off",
        "no-grad-not-eval",
        """
    def weights_for_analysis(mha, query, key, value):
        with torch.no_grad():
            _, weights = mha(query, key, value)
        return weights
    """,
    ),
    _c(
        "04-020",
        "04.weights_for_analysis",
        "restores the mode from mha.training after eval() has already changed it: a training module stays in eval",
        "mode-not-restored",
        """
    def weights_for_analysis(mha, query, key, value):
        mha.eval()
        with torch.no_grad():
            _, weights = mha(query, key, value)
        mha.train(mha.training)
        return weights
    """,
    ),
    _c(
        "04-021",
        "04.weights_for_analysis",
        "sets the dropout probability to 0 and leaves it there: the module never drops again",
        "mutates-module",
        """
    def weights_for_analysis(mha, query, key, value):
        for module in mha.modules():
            if isinstance(module, nn.Dropout):
                module.p = 0.0
        with torch.no_grad():
            return mha(query, key, value)[1]
    """,
    ),
    _c(
        "04-022",
        "04.weights_for_analysis",
        "toggles the mode (train(not training)) instead of calling eval(): a module already in eval mode is "
        "put in training mode for the call, so dropout is applied",
        "mode-toggle",
        """
    def weights_for_analysis(mha, query, key, value):
        mha.train(not mha.training)
        with torch.no_grad():
            weights = mha(query, key, value)[1]
        mha.train(not mha.training)
        return weights
    """,
    ),
    # ---- 04.load_from_torch
    _c(
        "04-023",
        "04.load_from_torch",
        "splits in_proj_weight along the columns (dim=1)",
        "wrong-chunk-dim",
        """
    def load_from_torch(module, torch_mha):
        d = torch_mha.embed_dim
        with torch.no_grad():
            w = torch_mha.in_proj_weight.reshape(d, 3, d)
            b = torch_mha.in_proj_bias
            for i, proj in enumerate((module.query_proj, module.key_proj, module.value_proj)):
                proj.weight.copy_(w[:, i])
                proj.bias.copy_(b[i * d:(i + 1) * d])
            module.out_proj.weight.copy_(torch_mha.out_proj.weight)
            module.out_proj.bias.copy_(torch_mha.out_proj.bias)
        return module
    """,
    ),
    _c(
        "04-024",
        "04.load_from_torch",
        "copies the transposed weights (thinks nn.Linear stores (in, out))",
        "transpose",
        """
    def load_from_torch(module, torch_mha):
        wq, wk, wv = torch_mha.in_proj_weight.chunk(3, dim=0)
        bq, bk, bv = torch_mha.in_proj_bias.chunk(3)
        with torch.no_grad():
            for proj, w, b in ((module.query_proj, wq, bq), (module.key_proj, wk, bk), (module.value_proj, wv, bv)):
                proj.weight.copy_(w.T)
                proj.bias.copy_(b)
            module.out_proj.weight.copy_(torch_mha.out_proj.weight.T)
            module.out_proj.bias.copy_(torch_mha.out_proj.bias)
        return module
    """,
    ),
    _c(
        "04-025",
        "04.load_from_torch",
        "forgets the biases",
        "missing-bias",
        """
    def load_from_torch(module, torch_mha):
        wq, wk, wv = torch_mha.in_proj_weight.chunk(3)
        with torch.no_grad():
            module.query_proj.weight.copy_(wq)
            module.key_proj.weight.copy_(wk)
            module.value_proj.weight.copy_(wv)
            module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        return module
    """,
    ),
    _c(
        "04-026",
        "04.load_from_torch",
        "assumes the packed order is key, query, value",
        "chunk-order",
        """
    def load_from_torch(module, torch_mha):
        wk, wq, wv = torch_mha.in_proj_weight.chunk(3)
        bk, bq, bv = torch_mha.in_proj_bias.chunk(3)
        with torch.no_grad():
            module.query_proj.weight.copy_(wq); module.query_proj.bias.copy_(bq)
            module.key_proj.weight.copy_(wk); module.key_proj.bias.copy_(bk)
            module.value_proj.weight.copy_(wv); module.value_proj.bias.copy_(bv)
            module.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
        return module
    """,
    ),
    _c(
        "04-027",
        "04.load_from_torch",
        "copies everything but forgets to return the module",
        "no-return",
        """
    def load_from_torch(module, torch_mha):
        ws = torch_mha.in_proj_weight.chunk(3)
        bs = torch_mha.in_proj_bias.chunk(3)
        with torch.no_grad():
            for proj, w, b in zip((module.query_proj, module.key_proj, module.value_proj), ws, bs):
                proj.weight.copy_(w)
                proj.bias.copy_(b)
            module.out_proj.weight.copy_(torch_mha.out_proj.weight)
            module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    """,
    ),
    _c(
        "04-028",
        "04.load_from_torch",
        "copy_ without torch.no_grad(): RuntimeError (a leaf that requires grad used in an in-place operation)",
        "crash-inplace-leaf",
        """
    def load_from_torch(module, torch_mha):
        wq, wk, wv = torch_mha.in_proj_weight.chunk(3)
        bq, bk, bv = torch_mha.in_proj_bias.chunk(3)
        module.query_proj.weight.copy_(wq)
        module.query_proj.bias.copy_(bq)
        module.key_proj.weight.copy_(wk)
        module.key_proj.bias.copy_(bk)
        module.value_proj.weight.copy_(wv)
        module.value_proj.bias.copy_(bv)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
        return module
    """,
    ),
    _c(
        "04-029",
        "04.load_from_torch",
        "forgets out_proj (thinks the in_proj holds all four)",
        "missing-out-proj",
        """
    def load_from_torch(module, torch_mha):
        state = {}
        for name, w, b in zip(("query_proj", "key_proj", "value_proj"), torch_mha.in_proj_weight.chunk(3),
                              torch_mha.in_proj_bias.chunk(3)):
            state[f"{name}.weight"], state[f"{name}.bias"] = w, b
        module.load_state_dict(state, strict=False)
        return module
    """,
    ),
    # ---- 04.torch_cross_attend
    _c(
        "04-030",
        "04.torch_cross_attend",
        "key_padding_mask in the course's convention (True = real): PyTorch ignores the real keys",
        "polarity",
        """
    def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
        keep = masks.make_padding_mask(encoder_lengths, encoder_states.shape[1])
        attn_mask = None
        if causal:
            n = decoder_states.shape[1]
            attn_mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=keep, attn_mask=attn_mask)
        return out
    """,
    ),
    _c(
        "04-031",
        "04.torch_cross_attend",
        "ignores causal",
        "ignores-arg",
        """
    def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
        k_len = encoder_states.shape[1]
        pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
        return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad)[0]
    """,
    ),
    _c(
        "04-032",
        "04.torch_cross_attend",
        "causal attn_mask as tril (True = may attend), the opposite of nn.MultiheadAttention's bool attn_mask",
        "polarity",
        """
    def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
        k_len = encoder_states.shape[1]
        pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
        attn_mask = None
        if causal:
            q_len = decoder_states.shape[1]
            attn_mask = torch.tril(torch.ones(q_len, k_len, dtype=torch.bool))
        return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad, attn_mask=attn_mask)[0]
    """,
    ),
    _c(
        "04-033",
        "04.torch_cross_attend",
        "returns nn.MultiheadAttention's (output, weights) tuple",
        "return-type",
        """
    def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
        pad = torch.arange(encoder_states.shape[1])[None, :] >= encoder_lengths[:, None]
        attn_mask = None
        if causal:
            n = decoder_states.shape[1]
            attn_mask = torch.ones(n, n, dtype=torch.bool).triu(1)
        return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad, attn_mask=attn_mask)
    """,
    ),
    _c(
        "04-034",
        "04.torch_cross_attend",
        "passes the (batch, k_len) padding mask as attn_mask: runs silently when batch == q_len, wrong rows masked",
        "padding-as-attn-mask",
        """
    def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
        pad = torch.arange(encoder_states.shape[1])[None, :] >= encoder_lengths[:, None]
        if causal:
            n = decoder_states.shape[1]
            pad = pad | torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        return torch_mha(decoder_states, encoder_states, encoder_states, attn_mask=pad)[0]
    """,
    ),
    _c(
        "04-035",
        "04.torch_cross_attend",
        "causal mask with triu(diagonal=0): each step may not read itself",
        "off-by-one",
        """
    def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
        pad = torch.arange(encoder_states.shape[1]).unsqueeze(0) >= encoder_lengths.unsqueeze(1)
        attn_mask = None
        if causal:
            n = decoder_states.shape[1]
            attn_mask = torch.triu(torch.ones(n, n, dtype=torch.bool))
        out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad, attn_mask=attn_mask)
        return out
    """,
    ),
    _c(
        "04-036",
        "04.torch_cross_attend",
        "float key_padding_mask (1.0 at padding): PyTorch adds it to the scores instead of removing the keys",
        "float-mask",
        """
    def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
        pad = (torch.arange(encoder_states.shape[1])[None, :] >= encoder_lengths[:, None]).float()
        attn_mask = None
        if causal:
            n = decoder_states.shape[1]
            attn_mask = torch.full((n, n), float("-inf")).triu(1)
        out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad, attn_mask=attn_mask)
        return out
    """,
    ),
    # ---- 04.softmax_backward
    _c(
        "04-037",
        "04.softmax_backward",
        "keeps only the diagonal of the Jacobian: w (1 - w) g",
        "diagonal-only",
        """
    def softmax_backward(weights, grad_weights):
        return weights * (1 - weights) * grad_weights
    """,
    ),
    _c(
        "04-038",
        "04.softmax_backward",
        "subtracts the plain sum of g instead of the weighted sum",
        "missing-w",
        """
    def softmax_backward(weights, grad_weights):
        return weights * (grad_weights - grad_weights.sum(dim=-1, keepdim=True))
    """,
    ),
    _c(
        "04-039",
        "04.softmax_backward",
        "sum without keepdim: right for one row, wrong broadcast for a batch",
        "keepdim",
        """
    def softmax_backward(weights, grad_weights):
        dot = (grad_weights * weights).sum(dim=-1)
        return weights * (grad_weights - dot)
    """,
    ),
    _c(
        "04-040",
        "04.softmax_backward",
        "sums over the first axis instead of the last",
        "wrong-axis",
        """
    def softmax_backward(weights, grad_weights):
        dot = (grad_weights * weights).sum(dim=0, keepdim=True)
        return weights * (grad_weights - dot)
    """,
    ),
    _c(
        "04-041",
        "04.softmax_backward",
        "forgets the leading factor w",
        "missing-w",
        """
    def softmax_backward(weights, grad_weights):
        return grad_weights - (grad_weights * weights).sum(-1, keepdim=True)
    """,
    ),
    _c(
        "04-042",
        "04.softmax_backward",
        "sign flipped",
        "sign",
        """
    def softmax_backward(weights, grad_weights):
        return weights * ((grad_weights * weights).sum(-1, keepdim=True) - grad_weights)
    """,
    ),
    _c(
        "04-043",
        "04.softmax_backward",
        "right formula but computed in place in grad_weights (sub_/mul_), which changes the caller's gradient",
        "in-place",
        """
    def softmax_backward(weights, grad_weights):
        dot = (grad_weights * weights).sum(-1, keepdim=True)
        return grad_weights.sub_(dot).mul_(weights)
    """,
    ),
    _c(
        "04-044",
        "04.softmax_backward",
        "flattens everything into one row and uses the single-row Jacobian diag(w) - w wᵀ: right for one row, "
        "mixes rows of a batch",
        "one-row-only",
        """
    def softmax_backward(weights, grad_weights):
        w = weights.reshape(-1)
        g = grad_weights.reshape(-1)
        jac = torch.diag(w) - torch.outer(w, w)
        return (jac @ g).reshape(weights.shape)
    """,
    ),
    # ---- 04.qk_matrix
    _c(
        "04-045",
        "04.qk_matrix",
        "forgets nn.Linear's (out, in) layout: W_q @ W_kᵀ",
        "layout",
        """
    def qk_matrix(mha):
        return mha.query_proj.weight @ mha.key_proj.weight.T
    """,
    ),
    _c(
        "04-046",
        "04.qk_matrix",
        "rows belong to the key feature (W_kᵀ W_q)",
        "transpose",
        """
    def qk_matrix(mha):
        with torch.no_grad():
            return mha.key_proj.weight.T @ mha.query_proj.weight
    """,
    ),
    _c(
        "04-047",
        "04.qk_matrix",
        "includes the 1/sqrt(d_head) scale the docstring leaves out",
        "extra-scale",
        """
    def qk_matrix(mha):
        return mha.query_proj.weight.T @ mha.key_proj.weight / math.sqrt(mha.d_head)
    """,
    ),
    _c(
        "04-048",
        "04.qk_matrix",
        "reads only head 0's block of the projections",
        "one-head",
        """
    def qk_matrix(mha):
        dh = mha.d_head
        wq = mha.query_proj.weight[:dh]  # (d_head, d_model)
        wk = mha.key_proj.weight[:dh]
        return wq.T @ wk
    """,
    ),
    _c(
        "04-049",
        "04.qk_matrix",
        "averages over the heads (divides by num_heads) instead of summing",
        "mean-heads",
        """
    def qk_matrix(mha):
        return (mha.query_proj.weight.T @ mha.key_proj.weight) / mha.num_heads
    """,
    ),
    _c(
        "04-050",
        "04.qk_matrix",
        "returns a NumPy array",
        "return-type",
        """
    def qk_matrix(mha):
        wq = mha.query_proj.weight.detach().numpy()
        wk = mha.key_proj.weight.detach().numpy()
        return wq.T @ wk
    """,
    ),
    # ---- 04.train_step
    _c(
        "04-051",
        "04.train_step",
        "forgets optimizer.zero_grad(): stale gradients are added in",
        "no-zero-grad",
        """
    def train_step(model, optimizer, batch):
        query, keys, values, target, index = batch
        output, _ = model(query, keys, values)
        loss = F.mse_loss(output, target)
        loss.backward()
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "04-052",
        "04.train_step",
        "zero_grad between backward and step: the step sees no gradient",
        "zero-grad-order",
        """
    def train_step(model, optimizer, batch):
        query, keys, values, target, _ = batch
        output, _ = model(query, keys, values)
        loss = F.mse_loss(output, target)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        return float(loss)
    """,
    ),
    _c(
        "04-053",
        "04.train_step",
        "returns the loss tensor instead of a float",
        "return-type",
        """
    def train_step(model, optimizer, batch):
        query, keys, values, target, _ = batch
        optimizer.zero_grad()
        loss = F.mse_loss(model(query, keys, values)[0], target)
        loss.backward()
        optimizer.step()
        return loss
    """,
    ),
    _c(
        "04-054",
        "04.train_step",
        "optimizer.step() before loss.backward(): steps on the stale gradients",
        "step-order",
        """
    def train_step(model, optimizer, batch):
        query, keys, values, target, _ = batch
        output, _ = model(query, keys, values)
        loss = ((output - target) ** 2).mean()
        optimizer.step()
        optimizer.zero_grad()
        loss.backward()
        return loss.item()
    """,
    ),
    _c(
        "04-055",
        "04.train_step",
        "sums the squared errors (reduction='sum') instead of the mean",
        "loss-reduction",
        """
    def train_step(model, optimizer, batch):
        query, keys, values, target, _ = batch
        optimizer.zero_grad()
        output, _ = model(query, keys, values)
        loss = F.mse_loss(output, target, reduction="sum")
        loss.backward()
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "04-056",
        "04.train_step",
        "L1 loss instead of the mean squared error",
        "wrong-loss",
        """
    def train_step(model, optimizer, batch):
        query, keys, values, target, _ = batch
        optimizer.zero_grad()
        loss = F.l1_loss(model(query, keys, values)[0], target)
        loss.backward()
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "04-057",
        "04.train_step",
        "clears the stale gradients of the output projection only",
        "partial-zero-grad",
        """
    def train_step(model, optimizer, batch):
        query, keys, values, target, _ = batch
        for p in model.out_proj.parameters():
            p.grad = None
        output, _ = model(query, keys, values)
        loss = F.mse_loss(output, target)
        loss.backward()
        optimizer.step()
        return loss.item()
    """,
    ),
    # ---- 04.causal_self_attention
    _c(
        "04-058",
        "04.causal_self_attention",
        "registers the mask with persistent=True: it lands in the state_dict",
        "buffer-persistent",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.attn = attention.MultiHeadAttention(d_model, num_heads)
            self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

        def forward(self, x):
            n = x.shape[1]
            return self.attn(x, x, x, mask=self.causal[:n, :n])[0]
    """,
    ),
    _c(
        "04-059",
        "04.causal_self_attention",
        "keeps the mask as a plain attribute, not a buffer (does not move with .to(device))",
        "not-a-buffer",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.attn = attention.MultiHeadAttention(d_model, num_heads)
            self.causal = torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))

        def forward(self, x):
            n = x.shape[1]
            out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
            return out
    """,
    ),
    _c(
        "04-060",
        "04.causal_self_attention",
        "stores the mask as an nn.Parameter (requires_grad=False): a parameter, handed to the optimizer and saved",
        "parameter-not-buffer",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.attn = attention.MultiHeadAttention(d_model, num_heads)
            self.causal = nn.Parameter(torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)), requires_grad=False)

        def forward(self, x):
            n = x.size(1)
            return self.attn(x, x, x, mask=self.causal[:n, :n])[0]
    """,
    ),
    _c(
        "04-061",
        "04.causal_self_attention",
        "triu instead of tril: every token reads only the future",
        "triu",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.attn = attention.MultiHeadAttention(d_model, num_heads)
            self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).triu(), persistent=False)

        def forward(self, x):
            n = x.size(1)
            return self.attn(x, x, x, mask=self.causal[:n, :n])[0]
    """,
    ),
    _c(
        "04-062",
        "04.causal_self_attention",
        "returns (output, weights) instead of the output",
        "return-type",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.attn = attention.MultiHeadAttention(d_model, num_heads)
            self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len)).bool(), persistent=False)

        def forward(self, x):
            n = x.shape[1]
            return self.attn(x, x, x, mask=self.causal[:n, :n])
    """,
    ),
    _c(
        "04-063",
        "04.causal_self_attention",
        "names the attention module 'mha' instead of 'attn' and the buffer 'mask' instead of 'causal'",
        "names",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.mha = attention.MultiHeadAttention(d_model, num_heads)
            self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)), persistent=False)

        def forward(self, x):
            n = x.shape[1]
            return self.mha(x, x, x, mask=self.mask[:n, :n])[0]
    """,
    ),
    _c(
        "04-064",
        "04.causal_self_attention",
        "builds the mask in forward (no buffer at all)",
        "not-a-buffer",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.attn = attention.MultiHeadAttention(d_model, num_heads)
            self.max_len = max_len

        def forward(self, x):
            n = x.shape[1]
            causal = masks.make_causal_mask(n)
            return self.attn(x, x, x, mask=causal)[0]
    """,
    ),
    _c(
        "04-065",
        "04.causal_self_attention",
        "edits its buffer in place in forward (fill_diagonal_ on a slice of it): the stored mask changes and "
        "the outputs are wrong",
        "in-place-buffer",
        """
    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model, num_heads, max_len):
            super().__init__()
            self.attn = attention.MultiHeadAttention(d_model, num_heads)
            self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)), persistent=False)

        def forward(self, x):
            n = x.shape[1]
            mask = self.causal[:n, :n]
            mask[1:].fill_diagonal_(False)
            return self.attn(x, x, x, mask=mask)[0]
    """,
    ),
    # ---- 04.alibi_bias
    _c(
        "04-066",
        "04.alibi_bias",
        "counts heads from 0: slopes 2^(-8h/H) for h = 0 .. H-1 (head 0 gets slope 1)",
        "off-by-one",
        """
    def alibi_bias(num_heads, seq_len):
        slopes = 2.0 ** (-8.0 * torch.arange(num_heads) / num_heads)
        i = torch.arange(seq_len)[:, None]
        j = torch.arange(seq_len)[None, :]
        bias = -slopes[:, None, None] * (i - j)
        return bias.masked_fill(j > i, float("-inf")).float()
    """,
    ),
    _c(
        "04-067",
        "04.alibi_bias",
        "sign flipped: older keys get a higher score",
        "sign",
        """
    def alibi_bias(num_heads, seq_len):
        slopes = torch.tensor([2 ** (-8 * h / num_heads) for h in range(1, num_heads + 1)])
        dist = torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]
        bias = slopes.view(-1, 1, 1) * dist
        return bias.masked_fill(dist < 0, float("-inf")).to(torch.float32)
    """,
    ),
    _c(
        "04-068",
        "04.alibi_bias",
        "0 instead of -inf for the future (forgets the causal part)",
        "no-causal",
        """
    def alibi_bias(num_heads, seq_len):
        slopes = torch.tensor([2 ** (-8 * h / num_heads) for h in range(1, num_heads + 1)])
        dist = (torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]).clamp(min=0)
        return (-slopes.view(-1, 1, 1) * dist).float()
    """,
    ),
    _c(
        "04-069",
        "04.alibi_bias",
        "returns float64",
        "dtype",
        """
    def alibi_bias(num_heads, seq_len):
        h = torch.arange(1, num_heads + 1, dtype=torch.float64)
        slopes = 2 ** (-8 * h / num_heads)
        i = torch.arange(seq_len, dtype=torch.float64)
        dist = i[:, None] - i[None, :]
        bias = -slopes[:, None, None] * dist
        return bias.masked_fill(dist < 0, float("-inf"))
    """,
    ),
    _c(
        "04-070",
        "04.alibi_bias",
        "slopes 1/2^h, right for 8 heads only",
        "hard-coded",
        """
    def alibi_bias(num_heads, seq_len):
        slopes = torch.tensor([1 / 2**h for h in range(1, num_heads + 1)])
        dist = torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]
        bias = -slopes[:, None, None] * dist
        return bias.masked_fill(dist < 0, float("-inf")).float()
    """,
    ),
    _c(
        "04-071",
        "04.alibi_bias",
        "shape (seq_len, seq_len, num_heads): heads last",
        "axis-order",
        """
    def alibi_bias(num_heads, seq_len):
        slopes = torch.tensor([2 ** (-8 * h / num_heads) for h in range(1, num_heads + 1)])
        dist = (torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]).float()
        bias = -dist[:, :, None] * slopes
        return bias.masked_fill((dist < 0)[:, :, None], float("-inf"))
    """,
    ),
    _c(
        "04-072",
        "04.alibi_bias",
        "-1e9 instead of -inf for the future",
        "fill-1e9",
        """
    def alibi_bias(num_heads, seq_len):
        slopes = torch.tensor([2 ** (-8 * h / num_heads) for h in range(1, num_heads + 1)])
        dist = torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]
        bias = (-slopes[:, None, None] * dist).float()
        return bias.masked_fill(dist < 0, -1e9)
    """,
    ),
    # ---- predictions
    _p("04-p01", "04.linear_weight_shape", "thinks weight is (in, out) like x @ W", "layout", (4, 3)),
    _p("04-p02", "04.view_after_transpose", "view works on any tensor of the right size", "view", "works"),
    _p("04-p03", "04.same_output", "same parameters give the same function whatever the heads", "heads", True),
    _p("04-p04", "04.single_weights_shape", "drops the head axis when there is one head", "shape", (2, 5, 5)),
    _p("04-p05", "04.inferred_batch_outcome", "thinks -1 always infers correctly", "view", "right"),
    _p("04-p06", "04.fresh_module_mode", "thinks a new module starts in eval mode", "mode", "eval"),
    _p("04-p07", "04.gradcheck_wrong_forward", "thinks gradcheck tests the forward pass", "gradcheck", False),
    _p("04-p08", "04.weight_on_match_before", "thinks a fresh layer already finds its key", "untrained", 1.0),
]
