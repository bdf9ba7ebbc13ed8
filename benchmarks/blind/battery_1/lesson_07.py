"""Blind battery, lesson 07 (GRU seq2seq with attention): wrong answers and wrong predictions."""

HEAD = '''import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from course_utils import data, masks
'''

ENCODER_INIT = '''

class MyEncoder(nn.Module):
    """Bidirectional GRU over a padded source: src (batch, src_len), src_lengths (batch,)."""

    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=data.PAD)
        self.rnn = nn.GRU(cfg.d_embed, cfg.d_encoder, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
'''

ATTENTION_INIT = '''

class MyAdditiveAttention(nn.Module):
    """softmax_j(v · tanh(W_s s + W_h h_j)) over the real source positions, and the context."""

    def __init__(self, d_query, d_key, d_attn):
        super().__init__()
        self.query_proj = nn.Linear(d_query, d_attn, bias=False)  # W_s
        self.key_proj = nn.Linear(d_key, d_attn)  # W_h
        self.score_proj = nn.Linear(d_attn, 1, bias=False)  # v

    def forward(self, s, keys, key_mask, projected_keys):
'''


def _io(body):
    return HEAD + '''

def my_decoder_io(y, lengths):
''' + body


def _encoder(body):
    return HEAD + ENCODER_INIT + body


def _attention(body):
    return HEAD + ATTENTION_INIT + body


def _step(body):
    return HEAD + '''

def my_decoder_step(model, state, tokens):
''' + body


def _greedy(body):
    return HEAD + '''

def my_greedy_decode(model, src, src_lengths, max_steps):
    batch = src.shape[0]
''' + body


def _scores(body):
    return HEAD + '''

def my_additive_scores(s, h, W_s, W_h, v):
''' + body


def _accuracy(body):
    return HEAD + '''

def token_accuracy(logits, target):
''' + body


GOOD_IO_START = '''    batch, max_len = y.shape
    decoder_input = torch.full((batch, max_len + 1), data.PAD, dtype=y.dtype)
    target = torch.full((batch, max_len + 1), data.PAD, dtype=y.dtype)
'''

CASES = [
    # ---- 07.my_decoder_io ---------------------------------------------------------------------------
    {
        "id": "07-001",
        "exercise": "07.my_decoder_io",
        "mistake": "appends EOS in the last column for every row (torch.cat([y, EOS])): after the padding of short rows",
        "kind": "eos_position",
        "source": _io('''    batch = y.shape[0]
    bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
    eos = torch.full((batch, 1), data.EOS, dtype=y.dtype)
    return torch.cat([bos, y], dim=1), torch.cat([y, eos], dim=1)
'''),
    },
    {
        "id": "07-002",
        "exercise": "07.my_decoder_io",
        "mistake": "returns (target, decoder_input) in the wrong order",
        "kind": "return_order",
        "source": _io(GOOD_IO_START + '''    decoder_input[:, 0] = data.BOS
    decoder_input[:, 1:] = y
    target[:, :max_len] = y
    target[torch.arange(batch), lengths] = data.EOS
    return target, decoder_input
'''),
    },
    {
        "id": "07-003",
        "exercise": "07.my_decoder_io",
        "mistake": "width max(lengths) + 1 instead of the padded width + 1: narrower when no row fills y",
        "kind": "width",
        "source": _io('''    batch = y.shape[0]
    width = int(lengths.max()) + 1
    decoder_input = torch.full((batch, width), data.PAD, dtype=y.dtype)
    target = torch.full((batch, width), data.PAD, dtype=y.dtype)
    decoder_input[:, 0] = data.BOS
    decoder_input[:, 1:] = y[:, : width - 1]
    target[:, : width - 1] = y[:, : width - 1]
    target[torch.arange(batch), lengths] = data.EOS
    return decoder_input, target
'''),
    },
    {
        "id": "07-004",
        "exercise": "07.my_decoder_io",
        "mistake": "EOS written at lengths - 1: it overwrites the last real symbol (off by one)",
        "kind": "off_by_one",
        "source": _io(GOOD_IO_START + '''    decoder_input[:, 0] = data.BOS
    decoder_input[:, 1:] = y
    target[:, :max_len] = y
    target[torch.arange(batch), lengths - 1] = data.EOS
    return decoder_input, target
'''),
    },
    {
        "id": "07-005",
        "exercise": "07.my_decoder_io",
        "mistake": "the tutorial's leak: the decoder input is the target itself (no BOS, no shift)",
        "kind": "teacher_forcing_leak",
        "source": _io(GOOD_IO_START + '''    target[:, :max_len] = y
    target[torch.arange(batch), lengths] = data.EOS
    return target.clone(), target
'''),
    },
    {
        "id": "07-006",
        "exercise": "07.my_decoder_io",
        "mistake": "pads the target with -100 (cross_entropy's ignore_index) instead of PAD",
        "kind": "pad_value",
        "source": _io('''    batch, max_len = y.shape
    decoder_input = torch.full((batch, max_len + 1), data.PAD, dtype=y.dtype)
    target = torch.full((batch, max_len + 1), -100, dtype=y.dtype)
    decoder_input[:, 0] = data.BOS
    decoder_input[:, 1:] = y
    for b in range(batch):
        n = int(lengths[b])
        target[b, :n] = y[b, :n]
        target[b, n] = data.EOS
    return decoder_input, target
'''),
    },
    {
        "id": "07-007",
        "exercise": "07.my_decoder_io",
        "mistake": "puts EOS at the end of the decoder input too (BOS + y + EOS, cut to the width)",
        "kind": "eos_position",
        "source": _io(GOOD_IO_START + '''    decoder_input[:, 0] = data.BOS
    decoder_input[:, 1:] = y
    decoder_input[torch.arange(batch), lengths] = data.EOS
    target[:, :max_len] = y
    target[torch.arange(batch), lengths] = data.EOS
    return decoder_input, target
'''),
    },
    # ---- 07.encoder ---------------------------------------------------------------------------------
    {
        "id": "07-008",
        "exercise": "07.encoder",
        "mistake": "runs the GRU on the padded batch without packing: the backward direction starts at the padding",
        "kind": "no_packing",
        "source": _encoder('''        outputs, final = self.rnn(self.embed(src))
        mask = (torch.arange(src.shape[1])[None, :] < src_lengths[:, None]).unsqueeze(-1)
        return outputs * mask, final
'''),
    },
    {
        "id": "07-009",
        "exercise": "07.encoder",
        "mistake": "pad_packed_sequence without total_length: outputs come back narrower when no row fills the width",
        "kind": "total_length",
        "source": _encoder('''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True)
        return outputs, final
'''),
    },
    {
        "id": "07-010",
        "exercise": "07.encoder",
        "mistake": "pack_padded_sequence with the default enforce_sorted=True: fails on a batch not sorted by length",
        "kind": "enforce_sorted",
        "source": _encoder('''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, final
'''),
    },
    {
        "id": "07-011",
        "exercise": "07.encoder",
        "mistake": "sums the two directions instead of concatenating them: (batch, src_len, d_encoder)",
        "kind": "sum_not_concat",
        "source": _encoder('''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        half = outputs.shape[-1] // 2
        return outputs[..., :half] + outputs[..., half:], final
'''),
    },
    {
        "id": "07-012",
        "exercise": "07.encoder",
        "mistake": "takes 'final' from the outputs' last column and first column: the last column is padding for short rows",
        "kind": "final_from_outputs",
        "source": _encoder('''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=src.shape[1])
        half = outputs.shape[-1] // 2
        final = torch.stack([outputs[:, -1, :half], outputs[:, 0, half:]])
        return outputs, final
'''),
    },
    {
        "id": "07-013",
        "exercise": "07.encoder",
        "mistake": "returns final reshaped to (batch, 2 * d_encoder) instead of (2, batch, d_encoder)",
        "kind": "shape",
        "source": _encoder('''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, torch.cat([final[0], final[1]], dim=-1)
'''),
    },
    # ---- 07.additive_attention ----------------------------------------------------------------------
    {
        "id": "07-014",
        "exercise": "07.additive_attention",
        "mistake": "never applies key_mask: padding positions get weight",
        "kind": "mask_ignored",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    },
    {
        "id": "07-015",
        "exercise": "07.additive_attention",
        "mistake": "masks after the softmax (weights * key_mask): rows no longer sum to 1",
        "kind": "mask_after_softmax",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        weights = torch.softmax(scores, dim=-1) * key_mask
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    },
    {
        "id": "07-016",
        "exercise": "07.additive_attention",
        "mistake": "the context blends the projected keys (d_attn wide) instead of the encoder outputs",
        "kind": "wrong_operand",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1)
        return (weights[:, :, None] * projected_keys).sum(dim=1), weights
'''),
    },
    {
        "id": "07-017",
        "exercise": "07.additive_attention",
        "mistake": "no tanh: v · (W_s s + W_h h_j), so the query term is the same for every key and cancels in the softmax",
        "kind": "missing_nonlinearity",
        "source": _attention('''        scores = self.score_proj(self.query_proj(s)[:, None, :] + projected_keys).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    },
    {
        "id": "07-018",
        "exercise": "07.additive_attention",
        "mistake": ".squeeze() without a dim: with a batch of one the batch axis disappears too",
        "kind": "squeeze",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze()
        weights = torch.softmax(scores.masked_fill(~key_mask.squeeze(), float("-inf")), dim=-1)
        context = weights @ keys.squeeze() if keys.shape[0] == 1 else (weights[:, :, None] * keys).sum(dim=1)
        return context, weights
'''),
    },
    {
        "id": "07-019",
        "exercise": "07.additive_attention",
        "mistake": "mask polarity flipped: masked_fill(key_mask, -inf) hides the real positions",
        "kind": "mask_polarity",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        weights = torch.nan_to_num(torch.softmax(scores.masked_fill(key_mask, float("-inf")), dim=-1))
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    },
    {
        "id": "07-020",
        "exercise": "07.additive_attention",
        "mistake": "a hand-written softmax exp(e) / sum exp(e) without the max shift: overflows on scores in the thousands",
        "kind": "no_max_shift",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        e = torch.exp(scores) * key_mask
        weights = e / e.sum(dim=-1, keepdim=True)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    },
    {
        "id": "07-021",
        "exercise": "07.additive_attention",
        "mistake": "returns (weights, context) in the wrong order",
        "kind": "return_order",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1)
        return weights, (weights[:, :, None] * keys).sum(dim=1)
'''),
    },
    {
        "id": "07-022",
        "exercise": "07.additive_attention",
        "mistake": "softmax over dim 0 (the batch) instead of the source positions",
        "kind": "wrong_axis",
        "source": _attention('''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~key_mask, -1e9), dim=0)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    },
    # ---- 07.decoder_step ----------------------------------------------------------------------------
    {
        "id": "07-023",
        "exercise": "07.decoder_step",
        "mistake": "attends with the old state s (before the GRUCell) instead of the new one",
        "kind": "stale_query",
        "source": _step('''    context, weights = model.attention(state["s"], state["keys"], state["key_mask"], state["projected_keys"])
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    },
    {
        "id": "07-024",
        "exercise": "07.decoder_step",
        "mistake": "the cell's input as [context; embedding] instead of [embedding; context]",
        "kind": "concat_order",
        "source": _step('''    s = model.cell(torch.cat([state["context"], model.embed(tokens)], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    },
    {
        "id": "07-025",
        "exercise": "07.decoder_step",
        "mistake": "out_proj reads [context; s] instead of [s; context]",
        "kind": "concat_order",
        "source": _step('''    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([context, s], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    },
    {
        "id": "07-026",
        "exercise": "07.decoder_step",
        "mistake": "updates the caller's state dictionary in place and returns it",
        "kind": "in_place",
        "source": _step('''    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    state["s"], state["context"] = s, context
    return model.out_proj(torch.cat([s, context], dim=-1)), state, weights
'''),
    },
    {
        "id": "07-027",
        "exercise": "07.decoder_step",
        "mistake": "forgets to put the new context in the returned state: the next step reads the old context",
        "kind": "state_not_updated",
        "source": _step('''    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s}, weights
'''),
    },
    {
        "id": "07-028",
        "exercise": "07.decoder_step",
        "mistake": "detaches the new state ('truncated backprop'): no gradient flows from later steps into earlier ones",
        "kind": "cuts_gradient",
        "source": _step('''    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"].detach())
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    },
    {
        "id": "07-029",
        "exercise": "07.decoder_step",
        "mistake": "returns log-probabilities (log_softmax of the logits) instead of the logits",
        "kind": "wrong_quantity",
        "source": _step('''    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return torch.log_softmax(logits, dim=-1), {**state, "s": s, "context": context}, weights
'''),
    },
    {
        "id": "07-030",
        "exercise": "07.decoder_step",
        "mistake": "calls model.cell(x) without the state: every step starts the GRU from zeros",
        "kind": "state_not_passed",
        "source": _step('''    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1))
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    },
    # ---- 07.greedy_decode ---------------------------------------------------------------------------
    {
        "id": "07-031",
        "exercise": "07.greedy_decode",
        "mistake": "never writes PAD after a row's EOS: finished rows keep writing their argmax",
        "kind": "no_pad_after_eos",
        "source": _greedy('''    state = model.init_state(src, src_lengths)
    tokens = torch.full((batch,), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1)
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "07-032",
        "exercise": "07.greedy_decode",
        "mistake": "stops as soon as ANY row has written EOS",
        "kind": "early_stop",
        "source": _greedy('''    state = model.init_state(src, src_lengths)
    tokens = torch.full((batch,), data.BOS, dtype=torch.long)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1)
        out.append(tokens)
        if (tokens == data.EOS).any():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "07-033",
        "exercise": "07.greedy_decode",
        "mistake": "feeds BOS at every step instead of the previous output",
        "kind": "no_feedback",
        "source": _greedy('''    state = model.init_state(src, src_lengths)
    bos = torch.full((batch,), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, bos)
        tokens = torch.where(done, torch.full_like(bos, data.PAD), logits.argmax(dim=-1))
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "07-034",
        "exercise": "07.greedy_decode",
        "mistake": "loop over range(max_steps - 1): one step short (off by one)",
        "kind": "off_by_one",
        "source": _greedy('''    state = model.init_state(src, src_lengths)
    tokens = torch.full((batch,), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps - 1):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = torch.where(done, torch.full_like(tokens, data.PAD), logits.argmax(dim=-1))
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "07-035",
        "exercise": "07.greedy_decode",
        "mistake": "marks a row done before writing: the EOS itself is replaced by PAD",
        "kind": "eos_position",
        "source": _greedy('''    state = model.init_state(src, src_lengths)
    tokens = torch.full((batch,), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = logits.argmax(dim=-1)
        done |= tokens == data.EOS
        out.append(torch.where(done, torch.full_like(tokens, data.PAD), tokens))
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "07-036",
        "exercise": "07.greedy_decode",
        "mistake": "returns BOS as the first column of the output",
        "kind": "includes_bos",
        "source": _greedy('''    state = model.init_state(src, src_lengths)
    tokens = torch.full((batch,), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = [tokens]
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        tokens = torch.where(done, torch.full_like(tokens, data.PAD), logits.argmax(dim=-1))
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "07-037",
        "exercise": "07.greedy_decode",
        "mistake": "samples from the softmax (torch.multinomial) instead of taking the argmax",
        "kind": "sampling",
        "source": _greedy('''    state = model.init_state(src, src_lengths)
    tokens = torch.full((batch,), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits, state, _ = model.decode_step(state, tokens)
        sampled = torch.multinomial(torch.softmax(logits, dim=-1), 1).squeeze(-1)
        tokens = torch.where(done, torch.full_like(sampled, data.PAD), sampled)
        out.append(tokens)
        done |= tokens == data.EOS
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    # ---- 07.my_additive_scores ----------------------------------------------------------------------
    {
        "id": "07-038",
        "exercise": "07.my_additive_scores",
        "mistake": "no tanh: v · (s W_s + h_j W_h)",
        "kind": "missing_nonlinearity",
        "source": _scores('''    return ((s @ W_s)[:, None, :] + h @ W_h) @ v
'''),
    },
    {
        "id": "07-039",
        "exercise": "07.my_additive_scores",
        "mistake": "applies tanh to each part separately: v · (tanh(s W_s) + tanh(h_j W_h))",
        "kind": "misplaced_nonlinearity",
        "source": _scores('''    return (torch.tanh(s @ W_s)[:, None, :] + torch.tanh(h @ W_h)) @ v
'''),
    },
    {
        "id": "07-040",
        "exercise": "07.my_additive_scores",
        "mistake": "returns the softmax of the scores (the weights) instead of the scores",
        "kind": "wrong_quantity",
        "source": _scores('''    scores = torch.tanh((s @ W_s)[:, None, :] + h @ W_h) @ v
    return torch.softmax(scores, dim=-1)
'''),
    },
    {
        "id": "07-041",
        "exercise": "07.my_additive_scores",
        "mistake": "keeps a trailing axis: (batch, k_len, 1) from @ v[:, None]",
        "kind": "shape",
        "source": _scores('''    return torch.tanh((s @ W_s)[:, None, :] + h @ W_h) @ v[:, None]
'''),
    },
    # ---- 07.token_accuracy --------------------------------------------------------------------------
    {
        "id": "07-042",
        "exercise": "07.token_accuracy",
        "mistake": "averages over every position, PAD included",
        "kind": "counts_padding",
        "source": _accuracy('''    return float((logits.argmax(dim=-1) == target).float().mean())
'''),
    },
    {
        "id": "07-043",
        "exercise": "07.token_accuracy",
        "mistake": "returns a 0-d tensor instead of a Python float",
        "kind": "wrong_type",
        "source": _accuracy('''    real = target != data.PAD
    return ((logits.argmax(dim=-1) == target) & real).sum() / real.sum()
'''),
    },
    {
        "id": "07-044",
        "exercise": "07.token_accuracy",
        "mistake": "mean of per-sequence accuracies instead of the share of all real positions",
        "kind": "mean_of_means",
        "source": _accuracy('''    real = target != data.PAD
    hits = ((logits.argmax(dim=-1) == target) & real).sum(dim=1).float()
    return float((hits / real.sum(dim=1)).mean())
'''),
    },
    {
        "id": "07-045",
        "exercise": "07.token_accuracy",
        "mistake": "leaves the EOS positions out as well (counts symbols only)",
        "kind": "excludes_eos",
        "source": _accuracy('''    real = target > data.EOS
    return float(((logits.argmax(dim=-1) == target) & real).sum() / real.sum())
'''),
    },
    {
        "id": "07-046",
        "exercise": "07.token_accuracy",
        "mistake": "shifts by one as in language-model code (logits[:, :-1] against target[:, 1:]), though logits and target are already aligned",
        "kind": "shift",
        "source": _accuracy('''    predicted = logits[:, :-1].argmax(dim=-1)
    wanted = target[:, 1:]
    real = wanted != data.PAD
    return float(((predicted == wanted) & real).sum() / real.sum())
'''),
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "07-p01", "prediction": "07.eos_position", "mistake": "EOS in the last column, after the padding", "kind": "eos_position", "value": 4},
    {"id": "07-p02", "prediction": "07.eos_position", "mistake": "on the last symbol's position", "kind": "off_by_one", "value": 2},
    {"id": "07-p03", "prediction": "07.concat_score_weights", "mistake": "any score that reads s must react to s", "kind": "missing_nonlinearity", "value": "changed"},
    {"id": "07-p04", "prediction": "07.mirror_position", "mistake": "step t reads position t (copying, not reversing)", "kind": "mirror", "value": 3},
    {"id": "07-p05", "prediction": "07.mirror_position", "mistake": "n - t instead of n - 1 - t", "kind": "off_by_one", "value": 11},
]
