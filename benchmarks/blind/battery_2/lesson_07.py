"""Battery 2, lesson 07: wrong answers to the GRU-with-attention exercises and predictions."""

H = ("import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence\n\n"
     "from course_utils import data, masks\n\n")

ENC_INIT = '''class MyEncoder(nn.Module):
    """Bidirectional GRU over a padded source: src (batch, src_len), src_lengths (batch,)."""

    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=data.PAD)
        self.rnn = nn.GRU(cfg.d_embed, cfg.d_encoder, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
'''

ATT_INIT = '''class MyAdditiveAttention(nn.Module):
    """softmax_j(v . tanh(W_s s + W_h h_j)) over the real source positions, and the context."""

    def __init__(self, d_query, d_key, d_attn):
        super().__init__()
        self.query_proj = nn.Linear(d_query, d_attn, bias=False)
        self.key_proj = nn.Linear(d_key, d_attn)
        self.score_proj = nn.Linear(d_attn, 1, bias=False)

    def forward(self, s, keys, key_mask, projected_keys):
'''


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _enc(id, mistake, kind, body):
    return _c(id, "07.encoder", mistake, kind, ENC_INIT + body)


def _att(id, mistake, kind, body):
    return _c(id, "07.additive_attention", mistake, kind, ATT_INIT + body)


STEP = '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    s = model.cell(torch.cat([emb, state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''


def _gd(id, mistake, kind, body):
    return _c(id, "07.greedy_decode", mistake, kind, body)


CASES = [
    # ---- my_decoder_io -------------------------------------------------------------------------------------------
    _c("07-001", "07.my_decoder_io", "puts EOS in the last column for every row (after the padding of short rows)",
       "eos-position",
       '''def my_decoder_io(y, lengths):
    b, n = y.shape
    bos = torch.full((b, 1), data.BOS, dtype=y.dtype)
    eos = torch.full((b, 1), data.EOS, dtype=y.dtype)
    return torch.cat([bos, y], dim=1), torch.cat([y, eos], dim=1)
'''),
    _c("07-002", "07.my_decoder_io", "returns (target, decoder_input)", "return-order",
       '''def my_decoder_io(y, lengths):
    b, n = y.shape
    dec = torch.full((b, n + 1), data.PAD, dtype=y.dtype)
    dec[:, 0] = data.BOS
    dec[:, 1:] = y
    tgt = torch.full((b, n + 1), data.PAD, dtype=y.dtype)
    tgt[:, :n] = y
    tgt[torch.arange(b), lengths] = data.EOS
    return tgt, dec
'''),
    _c("07-003", "07.my_decoder_io", "writes EOS at lengths - 1, over the last symbol", "off-by-one",
       '''def my_decoder_io(y, lengths):
    b, n = y.shape
    dec = torch.full((b, n + 1), data.PAD, dtype=y.dtype)
    dec[:, 0] = data.BOS
    dec[:, 1:] = y
    tgt = torch.full((b, n + 1), data.PAD, dtype=y.dtype)
    tgt[:, :n] = y
    tgt[torch.arange(b), lengths - 1] = data.EOS
    return dec, tgt
'''),
    _c("07-004", "07.my_decoder_io", "shifts right by dropping y's last column: (batch, max_len), not max_len + 1",
       "shape",
       '''def my_decoder_io(y, lengths):
    b, n = y.shape
    bos = torch.full((b, 1), data.BOS, dtype=y.dtype)
    dec = torch.cat([bos, y[:, :-1]], dim=1)
    tgt = y.clone()
    tgt[torch.arange(b), (lengths).clamp(max=n - 1)] = data.EOS
    return dec, tgt
'''),
    _c("07-005", "07.my_decoder_io", "builds the tensors with torch.zeros (float32) and fills them: float token ids",
       "dtype",
       '''def my_decoder_io(y, lengths):
    b, n = y.shape
    dec = torch.zeros(b, n + 1)
    dec[:, 0] = data.BOS
    dec[:, 1:] = y
    tgt = torch.zeros(b, n + 1)
    tgt[:, :n] = y
    tgt[torch.arange(b), lengths] = data.EOS
    return dec, tgt
'''),
    _c("07-006", "07.my_decoder_io", "puts the BOS at position lengths (after the sequence) instead of position 0",
       "bos-position",
       '''def my_decoder_io(y, lengths):
    b, n = y.shape
    dec = torch.full((b, n + 1), data.PAD, dtype=y.dtype)
    dec[:, :n] = y
    dec[torch.arange(b), lengths] = data.BOS
    tgt = torch.full((b, n + 1), data.PAD, dtype=y.dtype)
    tgt[:, :n] = y
    tgt[torch.arange(b), lengths] = data.EOS
    return dec, tgt
'''),
    # ---- MyEncoder -----------------------------------------------------------------------------------------------
    _enc("07-010", "runs the GRU on the padded batch without packing: padding enters the states and the backward "
         "direction starts at the padding", "no-packing",
         '''        outputs, final = self.rnn(self.embed(src))
        return outputs, final
'''),
    _enc("07-011", "pad_packed_sequence without total_length: narrower output when no sequence fills the width",
         "total-length",
         '''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True)
        return outputs, final
'''),
    _enc("07-012", "packs with the default enforce_sorted=True: RuntimeError on a batch not sorted by length",
         "enforce-sorted",
         '''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, final
'''),
    _enc("07-013", "final taken from the last padded time step of the outputs, split in two directions",
         "final-from-outputs",
         '''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, _ = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        d = outputs.shape[-1] // 2
        last = outputs[:, -1]
        return outputs, torch.stack([last[:, :d], last[:, d:]])
'''),
    _enc("07-014", "returns final as (batch, 2 * d_encoder) by concatenating the two directions", "shape",
         '''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, torch.cat([final[0], final[1]], dim=-1)
'''),
    _enc("07-015", "adds the forward and backward outputs instead of putting them side by side", "sum-directions",
         '''        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        d = outputs.shape[-1] // 2
        return outputs[..., :d] + outputs[..., d:], final
'''),
    _enc("07-016", "no packing but multiplies the outputs by the padding mask: zeros at the padding, yet the "
         "states still read the padding", "mask-not-pack",
         '''        outputs, final = self.rnn(self.embed(src))
        real = (torch.arange(src.shape[1])[None, :] < src_lengths[:, None]).unsqueeze(-1)
        return outputs * real, final
'''),
    # ---- MyAdditiveAttention -------------------------------------------------------------------------------------
    _att("07-020", "forgets the tanh: the score is linear, so the decoder state shifts every key by the same "
         "amount", "missing-tanh",
         '''        scores = self.score_proj(self.query_proj(s)[:, None, :] + projected_keys).squeeze(-1)
        scores = scores.masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    _att("07-021", "masks after the softmax without renormalizing", "mask-after-softmax",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        weights = torch.softmax(scores, dim=-1) * key_mask
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    _att("07-022", "adds query_proj(s) (batch, d_attn) to (batch, src_len, d_attn) without unsqueeze: runs only "
         "when batch == src_len (or 1), and mixes sequences", "square-only",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s) + projected_keys)).squeeze(-1)
        scores = scores.masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    _att("07-023", "the context is the weighted sum of the projected keys (d_attn wide), not of the encoder "
         "outputs", "wrong-operand",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        scores = scores.masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return (weights[:, :, None] * projected_keys).sum(dim=1), weights
'''),
    _att("07-024", "squeeze() without a dim: with batch 1 the batch axis disappears too", "squeeze",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze()
        scores = scores.masked_fill(~key_mask.squeeze(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ keys.squeeze(), weights
'''),
    _att("07-025", "hand-written softmax exp(e) / sum(exp(e)): overflows for scores in the thousands", "overflow",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        e = torch.exp(scores) * key_mask
        weights = e / e.sum(dim=-1, keepdim=True)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    _att("07-026", "averages the weighted keys (mean over positions) instead of summing", "mean-not-sum",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        scores = scores.masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return (weights[:, :, None] * keys).mean(dim=1), weights
'''),
    _att("07-027", "mask polarity flipped (fills where key_mask is True)", "polarity",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        scores = scores.masked_fill(key_mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    _att("07-028", "fills the padded scores with 0 instead of -inf: padding still gets weight", "fill-zero",
         '''        scores = self.score_proj(torch.tanh(self.query_proj(s)[:, None, :] + projected_keys)).squeeze(-1)
        scores = scores * key_mask
        weights = torch.softmax(scores, dim=-1)
        return (weights[:, :, None] * keys).sum(dim=1), weights
'''),
    # ---- my_decoder_step -----------------------------------------------------------------------------------------
    _c("07-030", "07.decoder_step", "attends with the OLD state (before the cell update) as the query",
       "stale-query",
       '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    context, weights = model.attention(state["s"], state["keys"], state["key_mask"], state["projected_keys"])
    s = model.cell(torch.cat([emb, state["context"]], dim=-1), state["s"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    _c("07-031", "07.decoder_step", "out_proj([context; s]) instead of [s; context]", "concat-order",
       '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    s = model.cell(torch.cat([emb, state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([context, s], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    _c("07-032", "07.decoder_step", "cell input [context; embedding] instead of [embedding; context]",
       "concat-order",
       '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    s = model.cell(torch.cat([state["context"], emb], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    _c("07-033", "07.decoder_step", "does not store the new context in the state (next step reads the old one)",
       "state-not-updated",
       '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    s = model.cell(torch.cat([emb, state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s}, weights
'''),
    _c("07-034", "07.decoder_step", "detaches the new state (truncated backprop by accident): right values, no "
       "gradient through time", "detach",
       '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    s = model.cell(torch.cat([emb, state["context"]], dim=-1), state["s"].detach())
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    _c("07-035", "07.decoder_step", "feeds zeros instead of the previous context into the cell (no input "
       "feeding)", "missing-input",
       '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    s = model.cell(torch.cat([emb, torch.zeros_like(state["context"])], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    _c("07-036", "07.decoder_step", "passes an all-True mask to the attention: the padding is attended",
       "ignores-mask",
       '''def my_decoder_step(model, state, tokens):
    emb = model.embed(tokens)
    s = model.cell(torch.cat([emb, state["context"]], dim=-1), state["s"])
    everything = torch.ones_like(state["key_mask"])
    context, weights = model.attention(s, state["keys"], everything, state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=-1))
    return logits, {**state, "s": s, "context": context}, weights
'''),
    # ---- my_greedy_decode ----------------------------------------------------------------------------------------
    _gd("07-040", "keeps writing tokens after a row's EOS (no PAD)", "no-pad-after-eos",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
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
'''),
    _gd("07-041", "stops as soon as ANY row has written EOS", "any-not-all",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = torch.where(done, torch.full_like(tokens, data.PAD), logits.argmax(dim=-1))
            out.append(tokens)
            done |= tokens == data.EOS
            if done.any():
                break
        return torch.stack(out, dim=1)
'''),
    _gd("07-042", "never stops early: always max_steps columns", "no-early-stop",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = torch.where(done, torch.full_like(tokens, data.PAD), logits.argmax(dim=-1))
            out.append(tokens)
            done |= tokens == data.EOS
        return torch.stack(out, dim=1)
'''),
    _gd("07-043", "feeds BOS at every step instead of the previous output", "no-feedback",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
        bos = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
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
    _gd("07-044", "updates 'done' before writing: the EOS itself is replaced by PAD", "off-by-one",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
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
    _gd("07-045", "samples from the softmax (torch.multinomial) instead of taking the argmax", "sampling",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
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
    _gd("07-046", "returns a Python list of per-step tensors", "wrong-type",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = torch.where(done, torch.full_like(tokens, data.PAD), logits.argmax(dim=-1))
            out.append(tokens)
            done |= tokens == data.EOS
            if done.all():
                break
        return out
'''),
    _gd("07-047", "starts from torch.zeros (PAD) instead of BOS", "wrong-start",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    with torch.no_grad():
        state = model.init_state(src, src_lengths)
        tokens = torch.zeros(src.shape[0], dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = torch.where(done, torch.full_like(tokens, data.PAD), logits.argmax(dim=-1))
            out.append(tokens)
            done |= tokens == data.EOS
            if done.all():
                break
        return torch.stack(out, dim=1)
'''),
    # ---- my_additive_scores --------------------------------------------------------------------------------------
    _c("07-050", "07.my_additive_scores", "forgets the tanh", "missing-tanh",
       '''def my_additive_scores(s, h, W_s, W_h, v):
    return ((s @ W_s)[:, None, :] + h @ W_h) @ v
'''),
    _c("07-051", "07.my_additive_scores", "s @ W_s without a key axis: broadcasts only when batch == k_len (or 1)",
       "square-only",
       '''def my_additive_scores(s, h, W_s, W_h, v):
    return torch.tanh(s @ W_s + h @ W_h) @ v
'''),
    _c("07-052", "07.my_additive_scores", "tanh of each part separately: tanh(s W_s) + tanh(h W_h)",
       "tanh-placement",
       '''def my_additive_scores(s, h, W_s, W_h, v):
    return (torch.tanh(s @ W_s)[:, None, :] + torch.tanh(h @ W_h)) @ v
'''),
    _c("07-053", "07.my_additive_scores", "applies v before the tanh: tanh((s W_s + h W_h) . v)", "tanh-placement",
       '''def my_additive_scores(s, h, W_s, W_h, v):
    return torch.tanh(((s @ W_s)[:, None, :] + h @ W_h) @ v)
'''),
    _c("07-054", "07.my_additive_scores", "returns the softmax of the scores (weights) instead of the scores",
       "weights-not-scores",
       '''def my_additive_scores(s, h, W_s, W_h, v):
    return torch.softmax(torch.tanh((s @ W_s)[:, None, :] + h @ W_h) @ v, dim=-1)
'''),
    _c("07-055", "07.my_additive_scores", "multiplies by the transposed matrices (PyTorch's Linear habit): "
       "runs only for square W", "transpose",
       '''def my_additive_scores(s, h, W_s, W_h, v):
    return torch.tanh((s @ W_s.T)[:, None, :] + h @ W_h.T) @ v
'''),
    # ---- token_accuracy ------------------------------------------------------------------------------------------
    _c("07-060", "07.token_accuracy", "counts the PAD positions too", "ignores-padding",
       '''def token_accuracy(logits, target):
    return float((logits.argmax(dim=-1) == target).float().mean())
'''),
    _c("07-061", "07.token_accuracy", "returns a 0-d tensor, not a float", "wrong-type",
       '''def token_accuracy(logits, target):
    real = target != data.PAD
    return (logits.argmax(dim=-1) == target)[real].float().mean()
'''),
    _c("07-062", "07.token_accuracy", "takes the argmax of a softmax over dim 1 (the steps) instead of the logits "
       "over the vocabulary", "wrong-axis",
       '''def token_accuracy(logits, target):
    real = target != data.PAD
    pred = torch.softmax(logits, dim=1).argmax(dim=-1)
    return float((pred == target)[real].float().mean())
'''),
    _c("07-063", "07.token_accuracy", "mean of the per-sequence accuracies (short sequences weigh more)",
       "mean-of-means",
       '''def token_accuracy(logits, target):
    real = target != data.PAD
    hits = ((logits.argmax(dim=-1) == target) & real).sum(dim=1).float()
    return float((hits / real.sum(dim=1).float()).mean())
'''),
    _c("07-064", "07.token_accuracy", "keeps only the symbol positions (target > EOS): the EOS targets are not "
       "counted", "ignores-eos",
       '''def token_accuracy(logits, target):
    real = target > data.EOS
    return float((logits.argmax(dim=-1) == target)[real].float().mean())
'''),
    _c("07-065", "07.token_accuracy", "returns a percentage", "units",
       '''def token_accuracy(logits, target):
    real = target != data.PAD
    return 100.0 * float((logits.argmax(dim=-1) == target)[real].float().mean())
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("07-p01", "07.eos_position", "EOS after the padding, at the padded width", "eos-position", 4),
    _p("07-p02", "07.eos_position", "EOS on the last symbol (length - 1)", "off-by-one", 2),
    _p("07-p03", "07.concat_score_weights", "thinks any score that reads s lets the decoder steer the weights",
       "missing-tanh", "changed"),
    _p("07-p04", "07.mirror_position", "output step t reads source position t", "reversal", 3),
    _p("07-p05", "07.mirror_position", "mirror without the -1: n - t", "off-by-one", 11),
]
