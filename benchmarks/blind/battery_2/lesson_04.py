"""Battery 2, lesson 04: wrong answers to the PyTorch multi-head exercises and predictions."""

H = ("import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
     "from course_utils import attention, masks\n\n")

INIT = '''class MyMultiHeadAttention(nn.Module):
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

SPLIT_OK = '''
    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.d_head).transpose(1, 2)
'''

FWD_HEAD = '''
    def forward(self, query, key, value, mask=None):
        b, q_len, _ = query.shape
'''

PROJ = '''        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(value))
'''

SCORES = '''        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
'''

MASK = '''        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = torch.nan_to_num(weights, nan=0.0)
        weights = self.dropout(weights)
'''

MERGE = '''        concat = (weights @ v).transpose(1, 2).reshape(b, q_len, self.d_model)
        return self.out_proj(concat), weights
'''


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _mha(id, mistake, kind, split=SPLIT_OK, proj=PROJ, scores=SCORES, mask=MASK, merge=MERGE):
    return _c(id, "04.multi_head_module", mistake, kind, INIT + split + FWD_HEAD + proj + scores + mask + merge)


CASES = [
    # ---- MyMultiHeadAttention ------------------------------------------------------------------------------------
    _mha("04-001", "merges with .view after .transpose: RuntimeError (view size is not compatible with input "
         "tensor's size and stride)", "view-after-transpose",
         merge='''        concat = (weights @ v).transpose(1, 2).view(b, q_len, self.d_model)
        return self.out_proj(concat), weights
'''),
    _mha("04-002", "merges by reshaping (batch, heads, q_len, d_head) without the transpose", "missing-transpose",
         merge='''        concat = (weights @ v).reshape(b, q_len, self.d_model)
        return self.out_proj(concat), weights
'''),
    _mha("04-003", "splits with one view to (batch, heads, length, d_head)", "single-reshape",
         split='''
    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, self.num_heads, n, self.d_head)
'''),
    _mha("04-004", "splits with view(-1, q_len, heads, d_head) using the QUERY length for keys and values too: "
         "right in self-attention, wrong or crashing when k_len != q_len", "inferred-batch",
         split='''
    def split_heads(self, t):
        return t.reshape(-1, self._len, self.num_heads, self.d_head).transpose(1, 2)
''',
         proj='''        self._len = q_len
''' + PROJ),
    _mha("04-005", "scales by sqrt(d_model) instead of sqrt(d_head)", "wrong-scale",
         scores='''        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
'''),
    _mha("04-006", "softmax over dim=-2 (the queries)", "wrong-axis",
         mask='''        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-2), nan=0.0)
        weights = self.dropout(weights)
'''),
    _mha("04-007", "F.dropout(weights, p) without training=self.training: dropout stays on in eval mode",
         "dropout-in-eval",
         mask='''        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        weights = F.dropout(weights, p=self.dropout.p)
'''),
    _mha("04-008", "masked_fill with -1e9: a fully masked query gets uniform weights", "fill-1e9",
         mask='''        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = self.dropout(torch.softmax(scores, dim=-1))
'''),
    _mha("04-009", "masked_fill(mask, -inf): PyTorch's polarity (True = hide) on the course's mask", "polarity",
         mask='''        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        weights = self.dropout(weights)
'''),
    _mha("04-010", "forgets out_proj", "missing-projection",
         merge='''        concat = (weights @ v).transpose(1, 2).reshape(b, q_len, self.d_model)
        return concat, weights
'''),
    _mha("04-011", "returns the weights averaged over the heads (nn.MultiheadAttention's default)",
         "averaged-weights",
         merge='''        concat = (weights @ v).transpose(1, 2).reshape(b, q_len, self.d_model)
        return self.out_proj(concat), weights.mean(dim=1)
'''),
    _mha("04-012", "projects the keys with query_proj (copy-paste)", "copy-paste",
         proj='''        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.query_proj(key))
        v = self.split_heads(self.value_proj(value))
'''),
    _mha("04-013", "detaches the weights before weights @ v: right values, no gradient reaches query_proj and "
         "key_proj", "detach",
         mask=MASK + '''        weights = weights.detach()
'''),
    _mha("04-014", "-inf fill without handling fully masked rows: nan output for an empty sequence", "fill-inf-nan",
         mask='''        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
'''),
    _mha("04-015", "interleaved split (view(b, n, d_head, heads)) with the standard merge", "interleaved",
         split='''
    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.d_head, self.num_heads).permute(0, 3, 1, 2)
'''),
    _mha("04-016", "hard-codes 4 heads in split_heads (the lesson's example): right only for num_heads == 4",
         "hard-coded",
         split='''
    def split_heads(self, t):
        b, n, d = t.shape
        return t.view(b, n, 4, d // 4).transpose(1, 2)
''',
         merge='''        concat = (weights @ v).transpose(1, 2).reshape(b, q_len, -1)
        return self.out_proj(concat), weights
'''),
    _mha("04-017", "ignores the mask", "ignores-mask",
         mask='''        weights = self.dropout(torch.softmax(scores, dim=-1))
'''),
    _mha("04-018", "uses the key for the values (value_proj(key)): right only in self-attention", "self-only",
         proj='''        q = self.split_heads(self.query_proj(query))
        k = self.split_heads(self.key_proj(key))
        v = self.split_heads(self.value_proj(key))
'''),
    _mha("04-019", "applies dropout to the output instead of the attention weights", "dropout-place",
         mask='''        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
''',
         merge='''        concat = (weights @ v).transpose(1, 2).reshape(b, q_len, self.d_model)
        return self.dropout(self.out_proj(concat)), weights
'''),
    # ---- weights_for_analysis ------------------------------------------------------------------------------------
    _c("04-020", "04.weights_for_analysis", "calls mha.eval() and never puts it back in training mode",
       "mode-not-restored",
       '''def weights_for_analysis(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
'''),
    _c("04-021", "04.weights_for_analysis", "always ends with mha.train(): a module that was in eval mode ends up "
       "in training mode", "mode-not-restored",
       '''def weights_for_analysis(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        _, weights = mha(query, key, value)
    mha.train()
    return weights
'''),
    _c("04-022", "04.weights_for_analysis", "only wraps the call in torch.no_grad(): no_grad does not switch dropout "
       "off", "no-grad-not-eval",
       '''def weights_for_analysis(mha, query, key, value):
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
'''),
    _c("04-023", "04.weights_for_analysis", "fixes the random seed to make dropout 'reproducible' and stays in "
       "training mode: the weights are still dropped and rescaled", "seed-not-eval",
       '''def weights_for_analysis(mha, query, key, value):
    torch.manual_seed(0)
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
'''),
    _c("04-024", "04.weights_for_analysis", "sets every dropout probability to 0 and leaves it there (changes the "
       "module for good)", "mutates-module",
       '''def weights_for_analysis(mha, query, key, value):
    for module in mha.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    if isinstance(getattr(mha, "dropout", None), float):
        mha.dropout = 0.0
    with torch.no_grad():
        _, weights = mha(query, key, value)
    return weights
'''),
    _c("04-025", "04.weights_for_analysis", "reads the mode after switching to eval, so mha.train(mha.training) "
       "restores nothing", "mode-not-restored",
       '''def weights_for_analysis(mha, query, key, value):
    mha.eval()
    with torch.no_grad():
        _, weights = mha(query, key, value)
    mha.train(mha.training)
    return weights
'''),
    _c("04-026", "04.weights_for_analysis", "returns the (output, weights) tuple", "return-arity",
       '''def weights_for_analysis(mha, query, key, value):
    was = mha.training
    mha.eval()
    with torch.no_grad():
        result = mha(query, key, value)
    mha.train(was)
    return result
'''),
    # ---- load_from_torch -----------------------------------------------------------------------------------------
    _c("04-030", "04.load_from_torch", "transposes each block (x @ W habit): right only for symmetric matrices",
       "transpose",
       '''def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3, dim=0)
    b_q, b_k, b_v = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for lin, w, b in ((module.query_proj, w_q, b_q), (module.key_proj, w_k, b_k), (module.value_proj, w_v, b_v)):
            lin.weight.copy_(w.T)
            lin.bias.copy_(b)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight.T)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module
'''),
    _c("04-031", "04.load_from_torch", "takes the packed blocks in the order (k, q, v)", "wrong-order",
       '''def load_from_torch(module, torch_mha):
    w_k, w_q, w_v = torch_mha.in_proj_weight.chunk(3, dim=0)
    b_k, b_q, b_v = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for lin, w, b in ((module.query_proj, w_q, b_q), (module.key_proj, w_k, b_k), (module.value_proj, w_v, b_v)):
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module
'''),
    _c("04-032", "04.load_from_torch", "copies the weights but forgets the biases", "missing-bias",
       '''def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3, dim=0)
    with torch.no_grad():
        module.query_proj.weight.copy_(w_q)
        module.key_proj.weight.copy_(w_k)
        module.value_proj.weight.copy_(w_v)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
    return module
'''),
    _c("04-033", "04.load_from_torch", "forgets out_proj", "missing-projection",
       '''def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3, dim=0)
    b_q, b_k, b_v = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for lin, w, b in ((module.query_proj, w_q, b_q), (module.key_proj, w_k, b_k), (module.value_proj, w_v, b_v)):
            lin.weight.copy_(w)
            lin.bias.copy_(b)
    return module
'''),
    _c("04-034", "04.load_from_torch", "assigns .data = slices of torch_mha's tensors: right values, but the two "
       "modules now share storage (training one changes the other)", "aliasing",
       '''def load_from_torch(module, torch_mha):
    d = module.d_model
    W, B = torch_mha.in_proj_weight, torch_mha.in_proj_bias
    for i, lin in enumerate((module.query_proj, module.key_proj, module.value_proj)):
        lin.weight.data = W.data[i * d:(i + 1) * d]
        lin.bias.data = B.data[i * d:(i + 1) * d]
    module.out_proj.weight.data = torch_mha.out_proj.weight.data
    module.out_proj.bias.data = torch_mha.out_proj.bias.data
    return module
'''),
    _c("04-035", "04.load_from_torch", "forgets to return the module (returns None)", "return-none",
       '''def load_from_torch(module, torch_mha):
    w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3, dim=0)
    b_q, b_k, b_v = torch_mha.in_proj_bias.chunk(3)
    with torch.no_grad():
        for lin, w, b in ((module.query_proj, w_q, b_q), (module.key_proj, w_k, b_k), (module.value_proj, w_v, b_v)):
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
'''),
    _c("04-036", "04.load_from_torch", "slices the packed weight with a hard-coded d_model of 16 (the lesson's "
       "size)", "hard-coded",
       '''def load_from_torch(module, torch_mha):
    d = 16
    W, B = torch_mha.in_proj_weight, torch_mha.in_proj_bias
    with torch.no_grad():
        for i, lin in enumerate((module.query_proj, module.key_proj, module.value_proj)):
            lin.weight.copy_(W[i * d:(i + 1) * d][: lin.weight.shape[0]])
            lin.bias.copy_(B[i * d:(i + 1) * d][: lin.bias.shape[0]])
        module.out_proj.weight.copy_(torch_mha.out_proj.weight)
        module.out_proj.bias.copy_(torch_mha.out_proj.bias)
    return module
'''),
    # ---- torch_cross_attend --------------------------------------------------------------------------------------
    _c("04-040", "04.torch_cross_attend", "passes the course's padding mask (True = real) as key_padding_mask, "
       "whose True means 'ignore'", "polarity",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    real = torch.arange(k_len)[None, :] < encoder_lengths[:, None]
    attn_mask = None
    if causal:
        q_len = decoder_states.shape[1]
        attn_mask = torch.triu(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=1)
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=real, attn_mask=attn_mask)
    return out
'''),
    _c("04-041", "04.torch_cross_attend", "passes the causal mask in the course's polarity (tril, True = may "
       "attend) as attn_mask, where True means 'not allowed'", "polarity",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = None
    if causal:
        q_len = decoder_states.shape[1]
        attn_mask = torch.tril(torch.ones(q_len, k_len, dtype=torch.bool))
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad, attn_mask=attn_mask)
    return out
'''),
    _c("04-042", "04.torch_cross_attend", "forgets the padding: no key_padding_mask", "missing-padding",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    attn_mask = None
    if causal:
        q_len, k_len = decoder_states.shape[1], encoder_states.shape[1]
        attn_mask = torch.triu(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=1)
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, attn_mask=attn_mask)
    return out
'''),
    _c("04-043", "04.torch_cross_attend", "passes the (batch, k_len) padding as attn_mask: broadcasts as (q_len, "
       "k_len) when batch == q_len, wrong sequence's padding per query", "padding-as-2d",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    if causal:
        q_len = decoder_states.shape[1]
        pad = pad | torch.triu(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=1)
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, attn_mask=pad)
    return out
'''),
    _c("04-044", "04.torch_cross_attend", "ignores causal=True", "ignores-arg",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad)
    return out
'''),
    _c("04-045", "04.torch_cross_attend", "causal attn_mask = triu(diagonal=0): also blocks each query's own key "
       "(query 0 sees nothing: nan)", "off-by-one",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = None
    if causal:
        q_len = decoder_states.shape[1]
        attn_mask = torch.triu(torch.ones(q_len, k_len, dtype=torch.bool))
    out, _ = torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad, attn_mask=attn_mask)
    return out
'''),
    _c("04-046", "04.torch_cross_attend", "returns the (output, weights) tuple of nn.MultiheadAttention",
       "return-arity",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = None
    if causal:
        q_len = decoder_states.shape[1]
        attn_mask = torch.triu(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=1)
    return torch_mha(decoder_states, encoder_states, encoder_states, key_padding_mask=pad, attn_mask=attn_mask)
'''),
    _c("04-047", "04.torch_cross_attend", "transposes to (len, batch, d) as in the old PyTorch examples although "
       "the module is batch_first", "batch-first",
       '''def torch_cross_attend(torch_mha, decoder_states, encoder_states, encoder_lengths, causal=False):
    k_len = encoder_states.shape[1]
    pad = torch.arange(k_len)[None, :] >= encoder_lengths[:, None]
    attn_mask = None
    if causal:
        q_len = decoder_states.shape[1]
        attn_mask = torch.triu(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=1)
    q, kv = decoder_states.transpose(0, 1), encoder_states.transpose(0, 1)
    out, _ = torch_mha(q, kv, kv, key_padding_mask=pad, attn_mask=attn_mask)
    return out.transpose(0, 1)
'''),
    # ---- softmax_backward ----------------------------------------------------------------------------------------
    _c("04-050", "04.softmax_backward", "only the diagonal of the Jacobian: w (1 - w) g", "diagonal-only",
       '''def softmax_backward(weights, grad_weights):
    return weights * (1 - weights) * grad_weights
'''),
    _c("04-051", "04.softmax_backward", "sums g * w over dim 0 instead of the last axis", "wrong-axis",
       '''def softmax_backward(weights, grad_weights):
    return weights * (grad_weights - (grad_weights * weights).sum(dim=0, keepdim=True))
'''),
    _c("04-052", "04.softmax_backward", "sum without keepdim: broadcasts along the wrong axis (square only)",
       "keepdims",
       '''def softmax_backward(weights, grad_weights):
    return weights * (grad_weights - (grad_weights * weights).sum(dim=-1))
'''),
    _c("04-053", "04.softmax_backward", "forgets the leading factor w: g - sum(g w)", "missing-term",
       '''def softmax_backward(weights, grad_weights):
    return grad_weights - (grad_weights * weights).sum(dim=-1, keepdim=True)
'''),
    _c("04-054", "04.softmax_backward", "w g - w sum(g): drops the w inside the sum", "missing-term",
       '''def softmax_backward(weights, grad_weights):
    return weights * grad_weights - weights * grad_weights.sum(dim=-1, keepdim=True)
'''),
    _c("04-055", "04.softmax_backward", "multiplies by the full Jacobian matrix diag(w) - w w^T built for the whole "
       "flattened tensor (mixes rows)", "flattened-jacobian",
       '''def softmax_backward(weights, grad_weights):
    w = weights.reshape(-1)
    J = torch.diag(w) - torch.outer(w, w)
    return (J @ grad_weights.reshape(-1)).reshape(weights.shape)
'''),
    _c("04-056", "04.softmax_backward", "returns a NumPy array (.numpy()) for tensor inputs", "wrong-type",
       '''def softmax_backward(weights, grad_weights):
    out = weights * (grad_weights - (grad_weights * weights).sum(dim=-1, keepdim=True))
    return out.detach().numpy()
'''),
    # ---- qk_matrix -----------------------------------------------------------------------------------------------
    _c("04-060", "04.qk_matrix", "W_q.weight @ W_k.weight.T: forgets that nn.Linear stores (out, in)",
       "linear-layout",
       '''def qk_matrix(mha):
    with torch.no_grad():
        return mha.query_proj.weight @ mha.key_proj.weight.T
'''),
    _c("04-061", "04.qk_matrix", "includes the 1/sqrt(d_head) scale", "extra-scale",
       '''def qk_matrix(mha):
    with torch.no_grad():
        return mha.query_proj.weight.T @ mha.key_proj.weight / math.sqrt(mha.d_head)
'''),
    _c("04-062", "04.qk_matrix", "the transpose: rows belong to key features", "transpose",
       '''def qk_matrix(mha):
    with torch.no_grad():
        return mha.key_proj.weight.T @ mha.query_proj.weight
'''),
    _c("04-063", "04.qk_matrix", "averages the heads' matrices instead of summing them", "mean-not-sum",
       '''def qk_matrix(mha):
    with torch.no_grad():
        return mha.query_proj.weight.T @ mha.key_proj.weight / mha.num_heads
'''),
    _c("04-064", "04.qk_matrix", "only head 0's block (right for one head)", "first-head-only",
       '''def qk_matrix(mha):
    dh = mha.d_head
    with torch.no_grad():
        return mha.query_proj.weight[:dh].T @ mha.key_proj.weight[:dh]
'''),
    # ---- train_step ----------------------------------------------------------------------------------------------
    _c("04-070", "04.train_step", "never calls optimizer.zero_grad(): stale gradients are added to the new ones",
       "missing-zero-grad",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    return loss.item()
'''),
    _c("04-071", "04.train_step", "zero_grad() between backward() and step(): the step uses zero gradients",
       "zero-grad-order",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()
'''),
    _c("04-072", "04.train_step", "returns the loss tensor instead of a float", "wrong-type",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    return loss
'''),
    _c("04-073", "04.train_step", "sum of squared errors (reduction='sum') instead of the mean", "wrong-reduction",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target, reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()
'''),
    _c("04-074", "04.train_step", "adds gradient clipping at 1.0 that the exercise does not ask for (changes the "
       "step on the huge-gradient batch)", "unasked-clipping",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    _c("04-075", "04.train_step", "optimizer.step() before loss.backward(): steps with the stale gradients",
       "step-order",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    optimizer.step()
    loss.backward()
    return loss.item()
'''),
    _c("04-076", "04.train_step", "L1 loss instead of mean squared error", "wrong-loss",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    optimizer.zero_grad()
    output, _ = model(query, keys, values)
    loss = (output - target).abs().mean()
    loss.backward()
    optimizer.step()
    return loss.item()
'''),
    _c("04-077", "04.train_step", "zeroes the gradients with model.zero_grad() only after the step and not "
       "before: the first call steps with the stale gradients added", "zero-grad-order",
       '''def train_step(model, optimizer, batch):
    query, keys, values, target, index = batch
    output, _ = model(query, keys, values)
    loss = F.mse_loss(output, target)
    loss.backward()
    optimizer.step()
    model.zero_grad()
    return float(loss)
'''),
    # ---- CausalSelfAttention -------------------------------------------------------------------------------------
    _c("04-080", "04.causal_self_attention", "registers the mask with the default persistent=True: it appears in "
       "the state_dict", "persistent-buffer",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x):
        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    _c("04-081", "04.causal_self_attention", "stores the mask as a frozen nn.Parameter instead of a buffer",
       "parameter-not-buffer",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.causal = nn.Parameter(torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)), requires_grad=False)

    def forward(self, x):
        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    _c("04-082", "04.causal_self_attention", "a plain attribute, not a buffer (does not move with .to(device), not "
       "listed in named_buffers)", "plain-attribute",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.causal = torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))

    def forward(self, x):
        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    _c("04-083", "04.causal_self_attention", "passes the whole (max_len, max_len) mask without slicing it to the "
       "input's length: fails whenever seq_len < max_len", "no-slice",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)), persistent=False)

    def forward(self, x):
        out, _ = self.attn(x, x, x, mask=self.causal)
        return out
'''),
    _c("04-084", "04.causal_self_attention", "registers triu(diagonal=1) (PyTorch's 'blocked' polarity) as the "
       "course's True = may-attend mask", "polarity",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), diagonal=1),
                             persistent=False)

    def forward(self, x):
        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    _c("04-085", "04.causal_self_attention", "returns the (output, weights) tuple", "return-arity",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)), persistent=False)

    def forward(self, x):
        n = x.shape[1]
        return self.attn(x, x, x, mask=self.causal[:n, :n])
'''),
    _c("04-086", "04.causal_self_attention", "names the submodule mha instead of attn: the course's weights no longer "
       "load by name", "wrong-name",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.mha = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)), persistent=False)

    def forward(self, x):
        n = x.shape[1]
        out, _ = self.mha(x, x, x, mask=self.causal[:n, :n])
        return out
'''),
    _c("04-087", "04.causal_self_attention", "builds the buffer with tril(diagonal=-1): no token may read itself, "
       "so position 0 has no key at all", "off-by-one",
       '''class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.attn = attention.MultiHeadAttention(d_model, num_heads)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool), diagonal=-1),
                             persistent=False)

    def forward(self, x):
        n = x.shape[1]
        out, _ = self.attn(x, x, x, mask=self.causal[-n:, -n:])
        return out
'''),
    # ---- alibi_bias ----------------------------------------------------------------------------------------------
    _c("04-090", "04.alibi_bias", "slopes 2^(-8h/H) for h = 0 .. H-1 (counts heads from 0): first slope 1",
       "off-by-one",
       '''def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-8.0 * torch.arange(num_heads) / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf")).float()
'''),
    _c("04-091", "04.alibi_bias", "sign flipped: +m (i - j) rewards distant keys", "sign",
       '''def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf")).float()
'''),
    _c("04-092", "04.alibi_bias", "-m |i - j| everywhere: forgets to hide the future", "missing-causal",
       '''def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    return (-slopes[:, None, None] * (i - j).abs()).float()
'''),
    _c("04-093", "04.alibi_bias", "hides the future with -1e9 instead of -inf", "fill-1e9",
       '''def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, -1e9).float()
'''),
    _c("04-094", "04.alibi_bias", "builds it in float64 (Python floats via torch.tensor) and returns float64",
       "dtype",
       '''def alibi_bias(num_heads, seq_len):
    slopes = torch.tensor([2.0 ** (-8.0 * h / num_heads) for h in range(1, num_heads + 1)], dtype=torch.float64)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf"))
'''),
    _c("04-095", "04.alibi_bias", "slopes 2^(-h): ignores the number of heads (right only for 8 heads)", "ignores-arg",
       '''def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-torch.arange(1, num_heads + 1, dtype=torch.float32))
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (i - j)
    return bias.masked_fill(j > i, float("-inf")).float()
'''),
    _c("04-096", "04.alibi_bias", "uses (j - i) with the mask j > i: the past gets a positive bias that grows with "
       "distance", "sign",
       '''def alibi_bias(num_heads, seq_len):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    bias = -slopes[:, None, None] * (j - i)
    return bias.masked_fill(j > i, float("-inf")).float()
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("04-p01", "04.linear_weight_shape", "thinks the weight is stored (in, out) as in x @ W", "linear-layout",
       (4, 3)),
    _p("04-p02", "04.view_after_transpose", "thinks view works on any tensor with the right number of elements",
       "view-after-transpose", "works"),
    _p("04-p03", "04.same_output", "same parameters means same function, whatever the number of heads",
       "heads", True),
    _p("04-p04", "04.single_weights_shape", "forgets the heads axis of size 1", "shape", (2, 5, 5)),
    _p("04-p05", "04.inferred_batch_outcome", "thinks letting PyTorch infer the batch is always safe",
       "inferred-batch", "right"),
    _p("04-p06", "04.fresh_module_mode", "thinks a new module starts in inference (eval) mode", "mode", "eval"),
    _p("04-p07", "04.gradcheck_wrong_forward", "thinks gradcheck tests whether the forward is the right formula",
       "gradcheck", False),
    _p("04-p08", "04.weight_on_match_before", "expects an untrained layer to already find its own key",
       "untrained", 1.0),
    _p("04-p09", "04.weight_on_match_before", "half the weight on the match", "untrained", 0.5),
]
