"""Blind battery 4, lesson 07: wrong answers a student could give (see README.md)."""

_HEAD = (
    "import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence\n\n"
    "from course_utils import data\n"
)

_ENC_INIT = """

class MyEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=data.PAD)
        self.rnn = nn.GRU(cfg.d_embed, cfg.d_encoder, batch_first=True, bidirectional=True)
"""

_ATT_INIT = """

class MyAdditiveAttention(nn.Module):
    def __init__(self, d_query, d_key, d_attn):
        super().__init__()
        self.query_proj = nn.Linear(d_query, d_attn, bias=False)  # W_s
        self.key_proj = nn.Linear(d_key, d_attn)  # W_h
        self.score_proj = nn.Linear(d_attn, 1, bias=False)  # v
"""


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _greedy(body):
    return _HEAD + "\n\ndef my_greedy_decode(model, src, src_lengths, max_steps):\n" + body


CASES = [
    # my_decoder_io
    _case(
        "07-001",
        "07.my_decoder_io",
        "puts EOS in the last column for every row instead of after each sequence",
        "eos-position",
        _HEAD
        + """

def my_decoder_io(y, lengths):
    batch = y.shape[0]
    bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
    eos = torch.full((batch, 1), data.EOS, dtype=y.dtype)
    return torch.cat([bos, y], dim=1), torch.cat([y, eos], dim=1)
""",
    ),
    _case(
        "07-002",
        "07.my_decoder_io",
        "writes EOS at lengths - 1, overwriting the last real token",
        "off-by-one",
        _HEAD
        + """

def my_decoder_io(y, lengths):
    batch = y.shape[0]
    decoder_input = torch.cat([torch.full((batch, 1), data.BOS, dtype=y.dtype), y], dim=1)
    target = torch.cat([y, torch.full((batch, 1), data.PAD, dtype=y.dtype)], dim=1)
    target[torch.arange(batch), lengths - 1] = data.EOS
    return decoder_input, target
""",
    ),
    _case(
        "07-003",
        "07.my_decoder_io",
        "writes EOS into y in place, then builds both from the changed y",
        "in-place",
        _HEAD
        + """

def my_decoder_io(y, lengths):
    batch = y.shape[0]
    y_pad = torch.cat([y, torch.full((batch, 1), data.PAD, dtype=y.dtype)], dim=1)
    y_pad[torch.arange(batch), lengths] = data.EOS
    y[:] = y_pad[:, :-1]
    decoder_input = torch.cat([torch.full((batch, 1), data.BOS, dtype=y.dtype), y], dim=1)
    return decoder_input, y_pad
""",
    ),
    _case(
        "07-004",
        "07.my_decoder_io",
        "decoder input and target swapped",
        "return-order",
        _HEAD
        + """

def my_decoder_io(y, lengths):
    batch = y.shape[0]
    decoder_input = torch.cat([torch.full((batch, 1), data.BOS, dtype=y.dtype), y], dim=1)
    target = torch.cat([y, torch.full((batch, 1), data.PAD, dtype=y.dtype)], dim=1)
    target[torch.arange(batch), lengths] = data.EOS
    return target, decoder_input
""",
    ),
    _case(
        "07-005",
        "07.my_decoder_io",
        "ends the decoder input with EOS too (BOS + y + EOS, cut to width)",
        "eos-in-input",
        _HEAD
        + """

def my_decoder_io(y, lengths):
    batch = y.shape[0]
    target = torch.cat([y, torch.full((batch, 1), data.PAD, dtype=y.dtype)], dim=1)
    target[torch.arange(batch), lengths] = data.EOS
    decoder_input = torch.cat([torch.full((batch, 1), data.BOS, dtype=y.dtype), target[:, :-1]], dim=1)
    return decoder_input, target
""",
    ),
    _case(
        "07-006",
        "07.my_decoder_io",
        "builds the rows with Python lists and pads to the longest length + 1, "
        "not to max_len + 1 (wrong width when no row fills the padded width)",
        "wrong-width",
        _HEAD
        + """

def my_decoder_io(y, lengths):
    width = int(lengths.max()) + 1
    inputs, targets = [], []
    for row, n in zip(y.tolist(), lengths.tolist()):
        seq = row[:n]
        inputs.append([data.BOS] + seq + [data.PAD] * (width - n - 1))
        targets.append(seq + [data.EOS] + [data.PAD] * (width - n - 1))
    return torch.tensor(inputs), torch.tensor(targets)
""",
    ),
    # encoder
    _case(
        "07-007",
        "07.encoder",
        "no packing: the padding runs through the GRU and the backward direction starts at the padding",
        "no-packing",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, src, src_lengths):
        outputs, final = self.rnn(self.embed(src))
        return outputs, final
""",
    ),
    _case(
        "07-008",
        "07.encoder",
        "pad_packed_sequence without total_length: outputs shorter than src when no row fills the width",
        "total-length",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True)
        return outputs, final
""",
    ),
    _case(
        "07-009",
        "07.encoder",
        "packs with the default enforce_sorted=True: crashes on a batch not sorted by length",
        "crash-sorted",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, final
""",
    ),
    _case(
        "07-010",
        "07.encoder",
        "takes the final states from the last column of the padded outputs",
        "final-from-outputs",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, _ = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        d = outputs.shape[-1] // 2
        final = torch.stack([outputs[:, -1, :d], outputs[:, -1, d:]])
        return outputs, final
""",
    ),
    _case(
        "07-011",
        "07.encoder",
        "returns the final states with the directions swapped (backward first)",
        "direction-order",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, final.flip(0)
""",
    ),
    _case(
        "07-012",
        "07.encoder",
        "packs, but pads the outputs back with a padding_value of -1 (not zeros)",
        "padding-value",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, padding_value=-1.0, total_length=src.shape[1])
        return outputs, final
""",
    ),
    _case(
        "07-013",
        "07.encoder",
        "feeds the embedding through .detach() to 'freeze' it: no gradient reaches the embedding",
        "detach",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, src, src_lengths):
        embedded = self.embed(src).detach()
        packed = pack_padded_sequence(embedded, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, final
""",
    ),
    # additive_attention
    _case(
        "07-014",
        "07.additive_attention",
        "forgets the tanh",
        "missing-tanh",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        scores = self.score_proj(self.query_proj(s)[:, None, :] + projected_keys).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1)
        context = (weights[:, :, None] * keys).sum(dim=1)
        return context, weights
""",
    ),
    _case(
        "07-015",
        "07.additive_attention",
        "ignores key_mask: padding gets weight",
        "ignores-mask",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)  # (batch, src_len, d_attn)
        weights = torch.softmax(self.score_proj(energy).squeeze(-1), dim=-1)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights
""",
    ),
    _case(
        "07-016",
        "07.additive_attention",
        "masks with the polarity flipped (fills where key_mask is True)",
        "polarity",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(key_mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights
""",
    ),
    _case(
        "07-017",
        "07.additive_attention",
        "softmax over dim=0 (the batch)",
        "wrong-axis",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(~key_mask, -1e9)
        weights = torch.softmax(scores, dim=0)
        return (weights.unsqueeze(-1) * keys).sum(1), weights
""",
    ),
    _case(
        "07-018",
        "07.additive_attention",
        "uses .squeeze() without a dim: a batch of one loses its batch axis",
        "squeeze",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze().masked_fill(~key_mask.squeeze(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = (weights.unsqueeze(-1) * keys.squeeze()).sum(-2)
        return context, weights
""",
    ),
    _case(
        "07-019",
        "07.additive_attention",
        "naive exp/sum without the max: overflows on scores in the thousands",
        "overflow",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        e = torch.exp(self.score_proj(energy).squeeze(-1)) * key_mask
        weights = e / e.sum(dim=-1, keepdim=True)
        return (weights.unsqueeze(-1) * keys).sum(1), weights
""",
    ),
    _case(
        "07-020",
        "07.additive_attention",
        "the context is the weighted sum of the projected keys, not of the keys",
        "projected-as-values",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = (weights.unsqueeze(-1) * projected_keys).sum(1)
        return context, weights
""",
    ),
    _case(
        "07-021",
        "07.additive_attention",
        "detaches the weights before the context ('they are only for plots')",
        "detach",
        _HEAD
        + _ATT_INIT
        + """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1).detach()
        return (weights.unsqueeze(-1) * keys).sum(1), weights
""",
    ),
    # decoder_step
    _case(
        "07-022",
        "07.decoder_step",
        "attends with the old state s (before the cell) as the query",
        "old-state",
        _HEAD
        + """

def my_decoder_step(model, state, tokens):
    query = state["s"]
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(query, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
""",
    ),
    _case(
        "07-023",
        "07.decoder_step",
        "concatenates [context; embedding] in the cell input (wrong order)",
        "concat-order",
        _HEAD
        + """

def my_decoder_step(model, state, tokens):
    s = model.cell(torch.cat([state["context"], model.embed(tokens)], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    new_state = dict(state)
    new_state.update(s=s, context=context)
    return logits, new_state, weights
""",
    ),
    _case(
        "07-024",
        "07.decoder_step",
        "projects [context; s] instead of [s; context]",
        "concat-order",
        _HEAD
        + """

def my_decoder_step(model, state, tokens):
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([context, s], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
""",
    ),
    _case(
        "07-025",
        "07.decoder_step",
        "keeps the old context in the new state (only s updated)",
        "stale-context",
        _HEAD
        + """

def my_decoder_step(model, state, tokens):
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s}, weights
""",
    ),
    _case(
        "07-026",
        "07.decoder_step",
        "detaches the new state ('truncated backprop'): no gradient flows from later steps through s",
        "detach",
        _HEAD
        + """

def my_decoder_step(model, state, tokens):
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"].detach())
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
""",
    ),
    _case(
        "07-027",
        "07.decoder_step",
        "feeds the previous step's context into out_proj instead of this step's",
        "stale-context",
        _HEAD
        + """

def my_decoder_step(model, state, tokens):
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, state["context"]], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
""",
    ),
    _case(
        "07-028",
        "07.decoder_step",
        "returns softmax probabilities instead of logits",
        "probs-not-logits",
        _HEAD
        + """

def my_decoder_step(model, state, tokens):
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    probs = torch.softmax(model.out_proj(torch.cat([s, context], dim=-1)), dim=-1)
    return probs, {**state, "s": s, "context": context}, weights
""",
    ),
    # greedy_decode
    _case(
        "07-029",
        "07.greedy_decode",
        "feeds BOS at every step instead of the previous output",
        "teacher-input",
        _greedy("""    state = model.init_state(src, src_lengths)
    batch = src.shape[0]
    bos = torch.full((batch,), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, bos)
        nxt = logits.argmax(dim=-1).masked_fill(done, data.PAD)
        out.append(nxt)
        done |= nxt == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    _case(
        "07-030",
        "07.greedy_decode",
        "no PAD after a row's EOS (keeps writing argmax tokens)",
        "no-pad-after-eos",
        _greedy("""    state = model.init_state(src, src_lengths)
    tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1)
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    _case(
        "07-031",
        "07.greedy_decode",
        "stops as soon as any row emits EOS",
        "stop-any",
        _greedy("""    state = model.init_state(src, src_lengths)
    tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1).masked_fill(done, data.PAD)
        out.append(tokens)
        done |= tokens == data.EOS
        if done.any():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    _case(
        "07-032",
        "07.greedy_decode",
        "range(max_steps - 1): one step short",
        "off-by-one",
        _greedy("""    state = model.init_state(src, src_lengths)
    tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    out = []
    for _ in range(max_steps - 1):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1).masked_fill(done, data.PAD)
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    _case(
        "07-033",
        "07.greedy_decode",
        "puts BOS in the returned tokens as column 0",
        "includes-bos",
        _greedy("""    state = model.init_state(src, src_lengths)
    tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    out = [tokens]
    for _ in range(max_steps - 1):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1).masked_fill(done, data.PAD)
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    _case(
        "07-034",
        "07.greedy_decode",
        "marks a row done before writing its EOS, so the EOS itself becomes PAD",
        "eos-overwritten",
        _greedy("""    state = model.init_state(src, src_lengths)
    tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1)
        done |= tokens == data.EOS
        out.append(tokens.masked_fill(done, data.PAD))
        if done.all():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    # my_additive_scores
    _case(
        "07-035",
        "07.my_additive_scores",
        "forgets the tanh",
        "missing-tanh",
        _HEAD
        + """

def my_additive_scores(s, h, W_s, W_h, v):
    return ((s @ W_s)[:, None, :] + h @ W_h) @ v
""",
    ),
    _case(
        "07-036",
        "07.my_additive_scores",
        "adds s @ W_s without unsqueezing: broadcasts against k_len, right only when batch == 1 or batch == k_len",
        "broadcast",
        _HEAD
        + """

def my_additive_scores(s, h, W_s, W_h, v):
    return torch.tanh(s @ W_s + h @ W_h) @ v
""",
    ),
    _case(
        "07-037",
        "07.my_additive_scores",
        "uses the transposed matrices (W_s.T), as for nn.Linear weights: right only for square W",
        "transpose",
        _HEAD
        + """

def my_additive_scores(s, h, W_s, W_h, v):
    return torch.tanh((s @ W_s.T)[:, None, :] + h @ W_h.T) @ v
""",
    ),
    _case(
        "07-038",
        "07.my_additive_scores",
        "applies the softmax: returns weights, not scores",
        "softmax-applied",
        _HEAD
        + """

def my_additive_scores(s, h, W_s, W_h, v):
    e = torch.tanh((s @ W_s).unsqueeze(1) + h @ W_h) @ v
    return torch.softmax(e, dim=-1)
""",
    ),
    _case(
        "07-039",
        "07.my_additive_scores",
        "tanh applied to each part separately: tanh(s W_s) + tanh(h W_h)",
        "tanh-split",
        _HEAD
        + """

def my_additive_scores(s, h, W_s, W_h, v):
    return (torch.tanh(s @ W_s).unsqueeze(1) + torch.tanh(h @ W_h)) @ v
""",
    ),
    # token_accuracy
    _case(
        "07-040",
        "07.token_accuracy",
        "counts the PAD positions too",
        "includes-pad",
        _HEAD
        + """

def token_accuracy(logits, target):
    return (logits.argmax(dim=-1) == target).float().mean().item()
""",
    ),
    _case(
        "07-041",
        "07.token_accuracy",
        "compares target with the max VALUE of torch.max (index 0 of its result) instead of the argmax index",
        "max-values",
        _HEAD
        + """

def token_accuracy(logits, target):
    real = target != data.PAD
    predicted = logits.max(dim=-1)[0]
    return ((predicted == target) & real).sum().item() / real.sum().item()
""",
    ),
    _case(
        "07-042",
        "07.token_accuracy",
        "averages per-sequence accuracies (each row weighs the same)",
        "mean-of-means",
        _HEAD
        + """

def token_accuracy(logits, target):
    real = target != data.PAD
    hits = (logits.argmax(-1) == target) & real
    return (hits.sum(1).float() / real.sum(1).float()).mean().item()
""",
    ),
    _case(
        "07-043",
        "07.token_accuracy",
        "returns a 0-d tensor instead of a float",
        "wrong-type",
        _HEAD
        + """

def token_accuracy(logits, target):
    real = target != data.PAD
    return ((logits.argmax(-1) == target) & real).sum() / real.sum()
""",
    ),
    _case(
        "07-044",
        "07.token_accuracy",
        "divides by all positions but counts hits only on real ones",
        "wrong-denominator",
        _HEAD
        + """

def token_accuracy(logits, target):
    real = target != data.PAD
    return float(((logits.argmax(-1) == target) & real).sum()) / target.numel()
""",
    ),
    # predictions
    _pred("07-p01", "07.eos_position", "puts EOS at the padded width", "pred-eos", 4),
    _pred("07-p02", "07.eos_position", "puts EOS on the last symbol's index", "pred-eos", 2),
    _pred("07-p03", "07.concat_score_weights", "thinks any score that uses s depends on s", "pred-score", "changed"),
    _pred("07-p04", "07.mirror_position", "thinks step t reads source position t", "pred-mirror", 4),
    _pred("07-p05", "07.mirror_position", "n - t instead of n - 1 - t", "pred-mirror", 10),
]
