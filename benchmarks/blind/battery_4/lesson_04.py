"""Blind battery 4, lesson 04: wrong answers a student could give (see README.md)."""

_HEAD = "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n"

_INIT = """

class MyMultiHeadAttention(nn.Module):
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
"""

_SPLIT = """
    def split_heads(self, t):
        batch, length, _ = t.shape
        # (batch, length, d_model) -> (batch, heads, length, d_head)
        return t.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)
"""

_SOFTMAX = """

def _masked_softmax(scores, mask):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(filled, dim=-1)
    return torch.nan_to_num(weights, nan=0.0)
"""

_FORWARD = """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (batch, heads, q_len, k_len)
        weights = self.dropout(_masked_softmax(scores, mask))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
"""


def _mha(split, forward):
    return _HEAD + _SOFTMAX + _INIT + split + forward


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


_RIGHT_MHA = _mha(_SPLIT, _FORWARD)

CASES = [
    # multi_head_module
    _case(
        "04-001",
        "04.multi_head_module",
        "merges the heads with .view after transpose: RuntimeError on the non-contiguous tensor",
        "view-after-transpose",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q, k, v = (self.split_heads(p(t)) for p, t in
                   ((self.query_proj, query), (self.key_proj, key), (self.value_proj, value)))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask))
        out = (weights @ v).transpose(1, 2).view(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-002",
        "04.multi_head_module",
        "split_heads views straight to (batch, heads, length, d_head) without the transpose",
        "reshape-no-transpose",
        _mha(
            """
    def split_heads(self, t):
        batch, length, _ = t.shape
        return t.reshape(batch, self.num_heads, length, self.d_head)
""",
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask))
        out = (weights @ v).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-003",
        "04.multi_head_module",
        "split_heads uses the module's last query length for every tensor "
        "(the tutorials' seq_len): wrong for cross-attention",
        "query-length",
        _mha(
            """
    def split_heads(self, t):
        length = getattr(self, "_q_len", t.shape[1])
        return t.reshape(t.shape[0], length, self.num_heads, self.d_head).transpose(1, 2)
""",
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        self._q_len = q_len
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        del self._q_len
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-004",
        "04.multi_head_module",
        "scales by sqrt(d_model)",
        "wrong-scale",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_model), mask))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-005",
        "04.multi_head_module",
        "applies dropout to the output instead of the attention weights",
        "dropout-place",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.dropout(self.out_proj(out)), weights
""",
        ),
    ),
    _case(
        "04-006",
        "04.multi_head_module",
        "calls F.dropout with training=True: dropout also in eval mode",
        "dropout-eval",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        weights = F.dropout(weights, p=self.dropout.p, training=True)
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-007",
        "04.multi_head_module",
        "masked_fill with -1e9: a query with no allowed key averages the values",
        "fill-1e9",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = self.dropout(scores.softmax(dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-008",
        "04.multi_head_module",
        "returns the weights averaged over the heads",
        "averaged-weights",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights.mean(dim=1)
""",
        ),
    ),
    _case(
        "04-009",
        "04.multi_head_module",
        "forgets out_proj",
        "missing-projection",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask))
        return (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model), weights
""",
        ),
    ),
    _case(
        "04-010",
        "04.multi_head_module",
        "projects key and value with the query's projection (self-attention habit)",
        "copy-paste",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.query_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-011",
        "04.multi_head_module",
        "softmax over dim=1 (the heads) instead of the keys",
        "wrong-axis",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.nan_to_num(F.softmax(scores, dim=1)))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-012",
        "04.multi_head_module",
        "uses torch.exp without the max (overflow) and computes the scores in float16 'to be fast'",
        "overflow",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        e = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(self.d_head))
        if mask is not None:
            e = e * mask
        weights = self.dropout(e / e.sum(dim=-1, keepdim=True))
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-013",
        "04.multi_head_module",
        "merges the heads in the wrong order: transpose(2, 3) then reshape (features interleaved)",
        "interleaved",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask))
        out = (weights @ v).permute(0, 2, 3, 1).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    _case(
        "04-014",
        "04.multi_head_module",
        "returns weights detached with .detach() 'to save memory': the output gets no gradient through the weights",
        "detach",
        _mha(
            _SPLIT,
            """
    def forward(self, query, key, value, mask=None):
        batch, q_len, _ = query.shape
        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
        weights = self.dropout(_masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)).detach()
        out = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
        return self.out_proj(out), weights
""",
        ),
    ),
    # weights_for_analysis
    _case(
        "04-015",
        "04.weights_for_analysis",
        "calls mha.eval() and leaves the module in eval mode",
        "mode-not-restored",
        _HEAD
        + """

def weights_for_analysis(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
""",
    ),
    _case(
        "04-016",
        "04.weights_for_analysis",
        "uses torch.no_grad() and thinks that turns dropout off",
        "no-grad-not-eval",
        _HEAD
        + """

def weights_for_analysis(mha, query, key, value):
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
""",
    ),
    _case(
        "04-017",
        "04.weights_for_analysis",
        "restores with mha.train() unconditionally: a module in eval mode ends in training mode",
        "mode-not-restored",
        _HEAD
        + """

def weights_for_analysis(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        weights = mha(query, key, value)[1]
    mha.train()
    return weights
""",
    ),
    _case(
        "04-018",
        "04.weights_for_analysis",
        "sets mha.training = False on the outer module only: the Dropout submodule stays in training mode",
        "shallow-mode",
        _HEAD
        + """

def weights_for_analysis(mha, query, key, value):
    was = mha.training
    mha.training = False
    with torch.no_grad():
        _, weights = mha(query, key, value)
    mha.training = was
    return weights
""",
    ),
    _case(
        "04-019",
        "04.weights_for_analysis",
        "rescales the dropped weights by (1 - p) instead of switching dropout off: the zeroed entries stay zero",
        "undo-dropout",
        _HEAD
        + """

def weights_for_analysis(mha, query, key, value):
    with torch.no_grad():
        _, weights = mha(query, key, value)
    if mha.training:
        weights = weights * (1 - mha.dropout.p)
    return weights
""",
    ),
    _case(
        "04-020",
        "04.weights_for_analysis",
        "sets the dropout probability to 0 and forgets to restore it",
        "changes-module",
        _HEAD
        + """

def weights_for_analysis(mha, query, key, value):
    mha.dropout.p = 0.0
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
""",
    ),
    # load_from_torch
    _case(
        "04-021",
        "04.load_from_torch",
        "splits in_proj_weight in the wrong order (k, q, v)",
        "wrong-order",
        _HEAD
        + """

def load_from_torch(module, torch_mha):
    k_w, q_w, v_w = torch_mha.in_proj_weight.chunk(3)
    k_b, q_b, v_b = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for layer, w, b in ((module.query_proj, q_w, q_b), (module.key_proj, k_w, k_b), (module.value_proj, v_w, v_b)):
            layer.weight.copy_(w)
            layer.bias.copy_(b)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module
""",
    ),
    _case(
        "04-022",
        "04.load_from_torch",
        "transposes the weights when copying (thinks nn.Linear stores (in, out))",
        "transpose",
        _HEAD
        + """

def load_from_torch(module, torch_mha):
    d = module.d_model
    W = torch_mha.in_proj_weight
    b = torch_mha.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((module.query_proj, module.key_proj, module.value_proj)):
            layer.weight.copy_(W[i * d : (i + 1) * d].T)
            layer.bias.copy_(b[i * d : (i + 1) * d])
        module.out_proj.weight.copy_(torch_mha.out_proj.weight.T)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module
""",
    ),
    _case(
        "04-023",
        "04.load_from_torch",
        "forgets the biases",
        "missing-bias",
        _HEAD
        + """

def load_from_torch(module, torch_mha):
    q, k, v = torch_mha.in_proj_weight.chunk(3, dim=0)
    with torch.no_grad():
        module.query_proj.weight.copy_(q)
        module.key_proj.weight.copy_(k)
        module.value_proj.weight.copy_(v)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
    return module
""",
    ),
    _case(
        "04-024",
        "04.load_from_torch",
        "assigns the slices as new Parameters sharing memory with torch_mha: training one trains the other",
        "shared-storage",
        _HEAD
        + """

def load_from_torch(module, torch_mha):
    q, k, v = torch_mha.in_proj_weight.chunk(3)
    qb, kb, vb = torch_mha.in_proj_bias.chunk(3)
    module.query_proj.weight, module.query_proj.bias = nn.Parameter(q), nn.Parameter(qb)
    module.key_proj.weight, module.key_proj.bias = nn.Parameter(k), nn.Parameter(kb)
    module.value_proj.weight, module.value_proj.bias = nn.Parameter(v), nn.Parameter(vb)
    module.out_proj.weight = torch_mha.out_proj.weight
    module.out_proj.bias = torch_mha.out_proj.bias
    return module
""",
    ),
    _case(
        "04-025",
        "04.load_from_torch",
        "chunks along dim=1 instead of dim=0",
        "wrong-axis",
        _HEAD
        + """

def load_from_torch(module, torch_mha):
    d = torch_mha.embed_dim
    W = torch_mha.in_proj_weight.reshape(d, 3, d).transpose(0, 1)
    b = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for i, layer in enumerate((module.query_proj, module.key_proj, module.value_proj)):
            layer.weight.copy_(W[i])
            layer.bias.copy_(b[i])
        module.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
    return module
""",
    ),
    _case(
        "04-026",
        "04.load_from_torch",
        "forgets the output projection",
        "missing-projection",
        _HEAD
        + """

def load_from_torch(module, torch_mha):
    ws, bs = torch_mha.in_proj_weight.chunk(3), torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for layer, w, b in zip((module.query_proj, module.key_proj, module.value_proj), ws, bs):
            layer.weight.copy_(w)
            layer.bias.copy_(b)
    return module
""",
    ),
    # torch_cross_attend
    _case(
        "04-027",
        "04.torch_cross_attend",
        "passes the True = real padding mask as key_padding_mask (whose True = ignore)",
        "polarity",
        _HEAD
        + """

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    real = torch.arange(k_len)[None, :] < encoder_lengths[:, None]
    attn_mask = None
    if causal:
        attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu(1)
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=real, attn_mask=attn_mask)
    return out
""",
    ),
    _case(
        "04-028",
        "04.torch_cross_attend",
        "causal attn_mask given as tril (True = may attend), but PyTorch's bool attn_mask means True = not allowed",
        "polarity",
        _HEAD
        + """

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).tril() if causal else None
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)[0]
""",
    ),
    _case(
        "04-029",
        "04.torch_cross_attend",
        "ignores causal=True",
        "ignores-option",
        _HEAD
        + """

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore)
    return out
""",
    ),
    _case(
        "04-030",
        "04.torch_cross_attend",
        "returns the (output, weights) tuple instead of the output",
        "wrong-type",
        _HEAD
        + """

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu(1) if causal else None
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)
""",
    ),
    _case(
        "04-031",
        "04.torch_cross_attend",
        "causal mask with triu() (diagonal 0): a query may not read itself",
        "diagonal",
        _HEAD
        + """

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu() if causal else None
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)
    return out
""",
    ),
    _case(
        "04-032",
        "04.torch_cross_attend",
        "wraps the call in torch.no_grad(): no gradient reaches the inputs or the module",
        "no-grad",
        _HEAD
        + """

def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    ignore = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = torch.ones(decoder_states.shape[1], k_len, dtype=torch.bool).triu(1) if causal else None
    with torch.no_grad():
        out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=ignore, attn_mask=attn_mask)
    return out
""",
    ),
    # softmax_backward
    _case(
        "04-033",
        "04.softmax_backward",
        "returns w * g (forgets the subtraction of the weighted mean)",
        "missing-term",
        _HEAD
        + """

def softmax_backward(weights, grad_weights):
    return weights * grad_weights
""",
    ),
    _case(
        "04-034",
        "04.softmax_backward",
        "sums w * g over the wrong axis (dim=0)",
        "wrong-axis",
        _HEAD
        + """

def softmax_backward(weights, grad_weights):
    dot = (weights * grad_weights).sum(dim=0, keepdim=True)
    return weights * (grad_weights - dot)
""",
    ),
    _case(
        "04-035",
        "04.softmax_backward",
        "uses the diagonal of the Jacobian only: w (1 - w) g",
        "diagonal-jacobian",
        _HEAD
        + """

def softmax_backward(weights, grad_weights):
    return weights * (1 - weights) * grad_weights
""",
    ),
    _case(
        "04-036",
        "04.softmax_backward",
        "subtracts the plain sum of g instead of the weighted sum sum_j w_j g_j",
        "missing-weight",
        _HEAD
        + """

def softmax_backward(weights, grad_weights):
    return weights * (grad_weights - grad_weights.sum(dim=-1, keepdim=True))
""",
    ),
    _case(
        "04-037",
        "04.softmax_backward",
        "uses autograd on a softmax of log(weights) with .detach() in the middle: returns zeros",
        "detach",
        _HEAD
        + """

def softmax_backward(weights, grad_weights):
    x = weights.detach().log().requires_grad_(True)
    w = torch.softmax(x, dim=-1).detach().requires_grad_(True)
    (w * grad_weights).sum().backward()
    return x.grad if x.grad is not None else torch.zeros_like(weights)
""",
    ),
    # qk_matrix
    _case(
        "04-038",
        "04.qk_matrix",
        "query_proj.weight @ key_proj.weight.T: the (out, in) layout "
        "forgotten, a product over the input features instead of the heads' features",
        "linear-layout",
        _HEAD
        + """

def qk_matrix(mha):
    return mha.query_proj.weight @ mha.key_proj.weight.T
""",
    ),
    _case(
        "04-039",
        "04.qk_matrix",
        "the transpose of M (key features on the rows)",
        "transpose",
        _HEAD
        + """

def qk_matrix(mha):
    return mha.key_proj.weight.T @ mha.query_proj.weight
""",
    ),
    _case(
        "04-040",
        "04.qk_matrix",
        "includes the 1/sqrt(d_head) scale",
        "extra-scale",
        _HEAD
        + """

def qk_matrix(mha):
    d_head = mha.query_proj.weight.shape[0] // mha.num_heads
    return mha.query_proj.weight.T @ mha.key_proj.weight / math.sqrt(d_head)
""",
    ),
    _case(
        "04-041",
        "04.qk_matrix",
        "uses only the first head's block",
        "one-head",
        _HEAD
        + """

def qk_matrix(mha):
    d_head = mha.query_proj.weight.shape[0] // mha.num_heads
    Wq = mha.query_proj.weight[:d_head]
    Wk = mha.key_proj.weight[:d_head]
    return Wq.T @ Wk
""",
    ),
    _case(
        "04-042",
        "04.qk_matrix",
        "returns a NumPy array via .detach().numpy() instead of a tensor",
        "wrong-type",
        _HEAD
        + """

def qk_matrix(mha):
    return (mha.query_proj.weight.T @ mha.key_proj.weight).detach().numpy()
""",
    ),
    # train_step
    _case(
        "04-043",
        "04.train_step",
        "forgets optimizer.zero_grad(): stale gradients are added",
        "missing-zero-grad",
        _HEAD
        + """

def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    _case(
        "04-044",
        "04.train_step",
        "calls zero_grad between backward and step: the step uses no gradient",
        "zero-grad-order",
        _HEAD
        + """

def train_step(model, optimizer, batch):
    query, keys, values, target, _ = batch
    output, _ = model(query, keys, values)
    loss = ((output - target) ** 2).mean()
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return float(loss)
""",
    ),
    _case(
        "04-045",
        "04.train_step",
        "forgets optimizer.step()",
        "missing-step",
        _HEAD
        + """

def train_step(model, optimizer, batch):
    query, keys, values, target, _ = batch
    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    return loss.item()
""",
    ),
    _case(
        "04-046",
        "04.train_step",
        "returns the loss tensor instead of a float",
        "wrong-type",
        _HEAD
        + """

def train_step(model, optimizer, batch):
    query, keys, values, target, _ = batch
    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    return loss
""",
    ),
    _case(
        "04-047",
        "04.train_step",
        "sum of squared errors instead of the mean",
        "sum-not-mean",
        _HEAD
        + """

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
    _case(
        "04-048",
        "04.train_step",
        "runs the forward under torch.no_grad(); backward then fails, so "
        "requires_grad_() is added to the loss: no gradient reaches the parameters",
        "cut-graph",
        _HEAD
        + """

def train_step(model, optimizer, batch):
    query, keys, values, target, _ = batch
    optimizer.zero_grad()
    with torch.no_grad():
        output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target).requires_grad_()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    _case(
        "04-049",
        "04.train_step",
        "puts the model in eval mode for the step and leaves it there",
        "mode-change",
        _HEAD
        + """

def train_step(model, optimizer, batch):
    query, keys, values, target, _ = batch
    model.eval()
    optimizer.zero_grad()
    loss = F.mse_loss(model(query, keys, values)[0], target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    # causal_self_attention
    _case(
        "04-050",
        "04.causal_self_attention",
        "registers the mask as a persistent buffer: it ends up in the state_dict",
        "persistent-buffer",
        _HEAD
        + """
from course_utils import attention


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril())

    def forward(self, x):
        n = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:n, :n])[0]
""",
    ),
    _case(
        "04-051",
        "04.causal_self_attention",
        "keeps the mask as a plain attribute, not a buffer",
        "not-buffer",
        _HEAD
        + """
from course_utils import attention


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.causal = torch.tril(torch.ones(max_len, max_len)).bool()

    def forward(self, x):
        n = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:n, :n])[0]
""",
    ),
    _case(
        "04-052",
        "04.causal_self_attention",
        "slices the mask [:n] (rows only): wrong shape unless n == max_len",
        "slice",
        _HEAD
        + """
from course_utils import attention


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril(), persistent=False)

    def forward(self, x):
        out, _ = self.attn(x, x, x, mask=self.causal[: x.shape[1]])
        return out
""",
    ),
    _case(
        "04-053",
        "04.causal_self_attention",
        "float mask of 0/1 registered, used as is: the course module wants bool",
        "dtype",
        _HEAD
        + """
from course_utils import attention


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len).tril(), persistent=False)

    def forward(self, x):
        n = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:n, :n].bool())[0]
""",
    ),
    _case(
        "04-054",
        "04.causal_self_attention",
        "upper triangle (triu) registered: the future instead of the past",
        "polarity",
        _HEAD
        + """
from course_utils import attention


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).triu(), persistent=False)

    def forward(self, x):
        n = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:n, :n])[0]
""",
    ),
    _case(
        "04-055",
        "04.causal_self_attention",
        "returns the (output, weights) tuple",
        "wrong-type",
        _HEAD
        + """
from course_utils import attention


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.ones(max_len, max_len, dtype=torch.bool).tril(), persistent=False)

    def forward(self, x):
        n = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:n, :n])
""",
    ),
    # alibi_bias
    _case(
        "04-056",
        "04.alibi_bias",
        "slopes counted from h = 0: m_h = 2^(-8h/H), so head 0 gets slope 1 and every slope is one step too large",
        "off-by-one",
        _HEAD
        + """

def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-8.0 * torch.arange(num_heads) / num_heads)  # (heads,)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf")).float()
""",
    ),
    _case(
        "04-057",
        "04.alibi_bias",
        "uses (j - i): raises the score of far keys instead of lowering it",
        "sign",
        _HEAD
        + """

def alibi_bias(num_heads, seq_len):
    h = torch.arange(1, num_heads + 1)
    slopes = 2.0 ** (-8.0 * h / num_heads)
    pos = torch.arange(seq_len)
    bias = -slopes[:, None, None] * (pos[None, :] - pos[:, None])
    return bias.masked_fill(pos[None, :] > pos[:, None], float("-inf")).to(torch.float32)
""",
    ),
    _case(
        "04-058",
        "04.alibi_bias",
        "forgets the -inf on the future",
        "missing-causal",
        _HEAD
        + """

def alibi_bias(num_heads, seq_len):
    slopes = torch.tensor([2 ** (-8 * (h + 1) / num_heads) for h in range(num_heads)])
    pos = torch.arange(seq_len)
    dist = (pos[:, None] - pos[None, :]).abs()
    return (-slopes[:, None, None] * dist).float()
""",
    ),
    _case(
        "04-059",
        "04.alibi_bias",
        "returns float64 (torch.tensor of Python floats times double slopes)",
        "dtype",
        _HEAD
        + """

def alibi_bias(num_heads, seq_len):
    slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / num_heads) for h in range(num_heads)], dtype=torch.float64)
    pos = torch.arange(seq_len, dtype=torch.float64)
    bias = -slopes[:, None, None] * (pos[:, None] - pos[None, :])
    return bias.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
""",
    ),
    _case(
        "04-060",
        "04.alibi_bias",
        "slopes 2^(-h/H) (forgets the factor 8)",
        "wrong-slope",
        _HEAD
        + """

def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-torch.arange(1, num_heads + 1) / num_heads)
    pos = torch.arange(seq_len)
    bias = -slopes[:, None, None] * (pos[:, None] - pos[None, :])
    return bias.masked_fill(pos[None, :] > pos[:, None], float("-inf")).float()
""",
    ),
    # predictions
    _pred("04-p01", "04.linear_weight_shape", "thinks nn.Linear stores (in, out)", "pred-shape", (4, 3)),
    _pred(
        "04-p02", "04.view_after_transpose", "thinks view works on any tensor of the right size", "pred-view", "works"
    ),
    _pred("04-p03", "04.same_output", "same parameters -> same output", "pred-heads", True),
    _pred("04-p04", "04.single_weights_shape", "drops the heads axis for one head", "pred-shape", (2, 5, 5)),
    _pred("04-p05", "04.inferred_batch_outcome", "expects PyTorch to refuse a wrong batch", "pred-view", "error"),
    _pred("04-p06", "04.inferred_batch_outcome", "trusts -1 to infer the batch correctly", "pred-view", "right"),
    _pred("04-p07", "04.fresh_module_mode", "thinks a new module starts in eval mode", "pred-mode", "eval"),
    _pred(
        "04-p08",
        "04.gradcheck_wrong_forward",
        "thinks gradcheck tests correctness of the forward",
        "pred-gradcheck",
        False,
    ),
    _pred(
        "04-p09", "04.weight_on_match_before", "thinks an untrained layer already finds the match", "pred-number", 0.9
    ),
]
