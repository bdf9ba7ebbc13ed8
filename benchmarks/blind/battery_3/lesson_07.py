"""Blind battery 3, lesson 07: wrong answers a student could write (see README.md). Never edited to pass."""

from textwrap import dedent

HEAD = (
    "import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence\n\n"
    "from course_utils import data, masks\n\n"
)

ENCODER_INIT = '''
class MyEncoder(nn.Module):
    """Bidirectional GRU over a padded source: src (batch, src_len), src_lengths (batch,)."""

    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=data.PAD)
        self.rnn = nn.GRU(cfg.d_embed, cfg.d_encoder, batch_first=True, bidirectional=True)
'''
ATTENTION_INIT = '''
class MyAdditiveAttention(nn.Module):
    """softmax_j(v · tanh(W_s s + W_h h_j)) over the real source positions, and the context."""

    def __init__(self, d_query, d_key, d_attn):
        super().__init__()
        self.query_proj = nn.Linear(d_query, d_attn, bias=False)  # W_s
        self.key_proj = nn.Linear(d_key, d_attn)  # W_h
        self.score_proj = nn.Linear(d_attn, 1, bias=False)  # v
'''


def _method(init, forward):
    return init + "\n    " + dedent(forward).strip().replace("\n", "\n    ") + "\n"


def _enc(cid, mistake, kind, forward):
    return {
        "id": cid,
        "exercise": "07.encoder",
        "mistake": mistake,
        "kind": kind,
        "source": HEAD + _method(ENCODER_INIT, forward),
    }


def _att(cid, mistake, kind, forward):
    return {
        "id": cid,
        "exercise": "07.additive_attention",
        "mistake": mistake,
        "kind": kind,
        "source": HEAD + _method(ATTENTION_INIT, forward),
    }


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": HEAD + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- 07.my_decoder_io
    _c(
        "07-001",
        "07.my_decoder_io",
        "puts EOS at the end of the padded width instead of after each sequence",
        "eos-position",
        """
    def my_decoder_io(y, lengths):
        batch, max_len = y.shape
        bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
        eos = torch.full((batch, 1), data.EOS, dtype=y.dtype)
        return torch.cat([bos, y], dim=1), torch.cat([y, eos], dim=1)
    """,
    ),
    _c(
        "07-002",
        "07.my_decoder_io",
        "width from lengths.max() + 1 instead of y's own width + 1",
        "wrong-width",
        """
    def my_decoder_io(y, lengths):
        batch = y.shape[0]
        width = int(lengths.max()) + 1
        dec = torch.full((batch, width), data.PAD, dtype=torch.long)
        tgt = torch.full((batch, width), data.PAD, dtype=torch.long)
        for b in range(batch):
            n = int(lengths[b])
            dec[b, 0] = data.BOS
            dec[b, 1 : n + 1] = y[b, :n]
            tgt[b, :n] = y[b, :n]
            tgt[b, n] = data.EOS
        return dec, tgt
    """,
    ),
    _c(
        "07-003",
        "07.my_decoder_io",
        "returns (target, decoder_input)",
        "order",
        """
    def my_decoder_io(y, lengths):
        batch, max_len = y.shape
        dec = torch.full((batch, max_len + 1), data.PAD, dtype=torch.long)
        dec[:, 0] = data.BOS
        dec[:, 1:] = y
        tgt = torch.full((batch, max_len + 1), data.PAD, dtype=torch.long)
        tgt[:, :max_len] = y
        tgt[torch.arange(batch), lengths] = data.EOS
        return tgt, dec
    """,
    ),
    _c(
        "07-004",
        "07.my_decoder_io",
        "EOS written over the last symbol (at lengths - 1)",
        "off-by-one",
        """
    def my_decoder_io(y, lengths):
        batch, max_len = y.shape
        dec = torch.cat([torch.full((batch, 1), data.BOS), y], dim=1)
        tgt = torch.cat([y, torch.full((batch, 1), data.PAD)], dim=1)
        tgt[torch.arange(batch), lengths - 1] = data.EOS
        return dec, tgt
    """,
    ),
    _c(
        "07-005",
        "07.my_decoder_io",
        "forgets BOS: the decoder input is y followed by PAD",
        "missing-bos",
        """
    def my_decoder_io(y, lengths):
        batch, max_len = y.shape
        dec = torch.cat([y, torch.full((batch, 1), data.PAD)], dim=1)
        tgt = dec.clone()
        tgt[torch.arange(batch), lengths] = data.EOS
        return dec, tgt
    """,
    ),
    _c(
        "07-006",
        "07.my_decoder_io",
        "builds float tensors (torch.zeros) for token ids",
        "dtype",
        """
    def my_decoder_io(y, lengths):
        batch, max_len = y.shape
        dec = torch.zeros(batch, max_len + 1)
        tgt = torch.zeros(batch, max_len + 1)
        dec[:, 0] = data.BOS
        dec[:, 1:] = y
        tgt[:, :max_len] = y
        tgt[torch.arange(batch), lengths] = data.EOS
        return dec, tgt
    """,
    ),
    _c(
        "07-007",
        "07.my_decoder_io",
        "writes BOS into y in place by shifting it (y[:, 1:] = y[:, :-1]) before "
        "building the target: the caller's y changes and the target loses its last symbol",
        "in-place",
        """
    def my_decoder_io(y, lengths):
        batch, max_len = y.shape
        tgt = torch.full((batch, max_len + 1), data.PAD, dtype=torch.long)
        dec = torch.full((batch, max_len + 1), data.PAD, dtype=torch.long)
        dec[:, 1:] = y
        dec[:, 0] = data.BOS
        y[:, 1:] = y[:, :-1].clone()
        y[:, 0] = data.BOS
        tgt[:, :max_len] = dec[:, 1:]
        tgt[torch.arange(batch), lengths] = data.EOS
        return dec, tgt
    """,
    ),
    # ---- 07.encoder
    _enc(
        "07-008",
        "no packing: the padding runs through the GRU and the backward direction starts on padding",
        "no-pack",
        """
    def forward(self, src, src_lengths):
        outputs, final = self.rnn(self.embed(src))
        return outputs, final
    """,
    ),
    _enc(
        "07-009",
        "pad_packed_sequence without total_length: a batch that fills no row comes back narrower",
        "total-length",
        """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return out, final
    """,
    ),
    _enc(
        "07-010",
        "keeps enforce_sorted=True (the default): unsorted lengths raise",
        "crash-enforce-sorted",
        """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True)
        out, final = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return out, final
    """,
    ),
    _enc(
        "07-011",
        "returns final as the two directions side by side, (batch, 2 · d_encoder)",
        "final-shape",
        """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return out, torch.cat([final[0], final[1]], dim=-1)
    """,
    ),
    _enc(
        "07-012",
        "takes final from the outputs' last column (padding for shorter rows)",
        "final-from-padding",
        """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        d = out.shape[-1] // 2
        final = torch.stack([out[:, -1, :d], out[:, 0, d:]])
        return out, final
    """,
    ),
    _enc(
        "07-013",
        "returns the final states in the order (backward, forward)",
        "direction-order",
        """
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return out, torch.stack([final[1], final[0]])
    """,
    ),
    _enc(
        "07-014",
        "runs without packing and then zeros the padding: the backward direction still started on the padding",
        "zero-after",
        """
    def forward(self, src, src_lengths):
        out, final = self.rnn(self.embed(src))
        keep = masks.make_padding_mask(src_lengths, src.shape[1])
        return out * keep[:, :, None], final
    """,
    ),
    # ---- 07.additive_attention
    _att(
        "07-015",
        "forgets the tanh",
        "missing-tanh",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        scores = self.score_proj(self.query_proj(s)[:, None, :] + projected_keys).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1)
        return torch.bmm(weights[:, None, :], keys).squeeze(1), weights
    """,
    ),
    _att(
        "07-016",
        "mask polarity reversed (fills the real positions)",
        "polarity",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(key_mask, -1e9)
        weights = scores.softmax(-1)
        return (weights.unsqueeze(-1) * keys).sum(1), weights
    """,
    ),
    _att(
        "07-017",
        "multiplies the weights by the mask after the softmax (no renormalisation)",
        "mask-after-softmax",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        weights = torch.softmax(self.score_proj(energy).squeeze(-1), dim=-1) * key_mask
        return (weights.unsqueeze(-1) * keys).sum(1), weights
    """,
    ),
    _att(
        "07-018",
        "blends the projected keys instead of the encoder outputs",
        "wrong-values",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), projected_keys).squeeze(1)
        return context, weights
    """,
    ),
    _att(
        "07-019",
        "softmax over dim=0 (the batch)",
        "wrong-axis",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(~key_mask, -1e9)
        weights = torch.softmax(scores, dim=0)
        return (weights.unsqueeze(-1) * keys).sum(1), weights
    """,
    ),
    _att(
        "07-020",
        "ignores key_mask: the padding gets weight",
        "ignores-mask",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        weights = torch.softmax(self.score_proj(energy).squeeze(-1), dim=-1)
        return (weights.unsqueeze(-1) * keys).sum(1), weights
    """,
    ),
    _att(
        "07-021",
        "squeeze() without a dim: a batch of one sequence loses its batch axis",
        "squeeze-all",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        scores = self.score_proj(energy).squeeze().masked_fill(~key_mask.squeeze(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = weights @ keys.squeeze() if keys.shape[0] == 1 else (weights.unsqueeze(-1) * keys).sum(1)
        return context, weights
    """,
    ),
    _att(
        "07-022",
        "softmax by hand without the max shift: NaN for scores in the thousands",
        "overflow",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + projected_keys)
        e = torch.exp(self.score_proj(energy).squeeze(-1)) * key_mask
        weights = e / e.sum(-1, keepdim=True)
        return (weights.unsqueeze(-1) * keys).sum(1), weights
    """,
    ),
    _att(
        "07-023",
        "projects the keys again with key_proj and adds projected_keys too (the keys counted twice)",
        "double-proj",
        """
    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + self.key_proj(keys) + projected_keys)
        scores = self.score_proj(energy).squeeze(-1).masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return (weights.unsqueeze(-1) * keys).sum(1), weights
    """,
    ),
    # ---- 07.decoder_step
    _c(
        "07-024",
        "07.decoder_step",
        "attends with the old state (before the GRU cell)",
        "stale-query",
        """
    def my_decoder_step(model, state, tokens):
        context, weights = model.attention(state["s"], state["keys"], state["key_mask"], state["projected_keys"])
        s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
        logits = model.out_proj(torch.cat([s, context], dim=-1))
        return logits, {**state, "s": s, "context": context}, weights
    """,
    ),
    _c(
        "07-025",
        "07.decoder_step",
        "projects [s; previous context] instead of this step's context",
        "stale-context",
        """
    def my_decoder_step(model, state, tokens):
        s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
        context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
        logits = model.out_proj(torch.cat([s, state["context"]], dim=-1))
        return logits, {**state, "s": s, "context": context}, weights
    """,
    ),
    _c(
        "07-026",
        "07.decoder_step",
        "updates the caller's state dictionary in place",
        "in-place",
        """
    def my_decoder_step(model, state, tokens):
        state["s"] = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
        state["context"], weights = model.attention(state["s"], state["keys"], state["key_mask"], state["projected_keys"])
        logits = model.out_proj(torch.cat([state["s"], state["context"]], dim=-1))
        return logits, state, weights
    """,
    ),
    _c(
        "07-027",
        "07.decoder_step",
        "GRU cell input in the order [context; embedding]",
        "concat-order",
        """
    def my_decoder_step(model, state, tokens):
        s = model.cell(torch.cat([state["context"], model.embed(tokens)], dim=-1), state["s"])
        context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
        logits = model.out_proj(torch.cat([s, context], dim=-1))
        new_state = dict(state)
        new_state.update(s=s, context=context)
        return logits, new_state, weights
    """,
    ),
    _c(
        "07-028",
        "07.decoder_step",
        "out_proj input in the order [context; s]",
        "concat-order",
        """
    def my_decoder_step(model, state, tokens):
        s = model.cell(torch.cat([model.embed(tokens), state["context"]], -1), state["s"])
        context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
        logits = model.out_proj(torch.cat([context, s], -1))
        return logits, dict(state, s=s, context=context), weights
    """,
    ),
    _c(
        "07-029",
        "07.decoder_step",
        "detaches the new state before storing it ('to save memory'): no gradient flows back through earlier steps",
        "cuts-grad",
        """
    def my_decoder_step(model, state, tokens):
        s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
        context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
        logits = model.out_proj(torch.cat([s, context], dim=-1))
        return logits, {**state, "s": s.detach(), "context": context.detach()}, weights
    """,
    ),
    _c(
        "07-030",
        "07.decoder_step",
        "runs the attention under torch.no_grad() (the weights are 'only for the "
        "plots'): the context carries no gradient",
        "cuts-grad",
        """
    def my_decoder_step(model, state, tokens):
        s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
        with torch.no_grad():
            context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
        logits = model.out_proj(torch.cat([s, context], dim=-1))
        return logits, {**state, "s": s, "context": context}, weights
    """,
    ),
    # ---- 07.greedy_decode
    _c(
        "07-031",
        "07.greedy_decode",
        "keeps writing after EOS (no PAD)",
        "no-pad-after-eos",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = logits.argmax(-1)
            out.append(tokens)
            if (torch.stack(out, 1) == data.EOS).any(1).all():
                break
        return torch.stack(out, dim=1)
    """,
    ),
    _c(
        "07-032",
        "07.greedy_decode",
        "stops as soon as any row writes EOS",
        "any-not-all",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            nxt = torch.where(done, torch.full_like(tokens, data.PAD), logits.argmax(-1))
            out.append(nxt)
            done |= nxt == data.EOS
            tokens = nxt
            if done.any():
                break
        return torch.stack(out, dim=1)
    """,
    ),
    _c(
        "07-033",
        "07.greedy_decode",
        "feeds BOS at every step instead of its own previous output",
        "no-feedback",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        state = model.init_state(src, src_lengths)
        bos = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, bos)
            nxt = logits.argmax(-1).masked_fill(done, data.PAD)
            out.append(nxt)
            done = done | (nxt == data.EOS)
            if done.all():
                break
        return torch.stack(out, 1)
    """,
    ),
    _c(
        "07-034",
        "07.greedy_decode",
        "puts BOS in the returned tokens as column 0",
        "includes-bos",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        state = model.init_state(src, src_lengths)
        seq = [torch.full((src.shape[0],), data.BOS, dtype=torch.long)]
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, seq[-1])
            nxt = logits.argmax(-1).masked_fill(done, data.PAD)
            seq.append(nxt)
            done |= nxt == data.EOS
            if done.all():
                break
        return torch.stack(seq, 1)
    """,
    ),
    _c(
        "07-035",
        "07.greedy_decode",
        "range(max_steps - 1): one step too few",
        "off-by-one",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps - 1):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = logits.argmax(-1).masked_fill(done, data.PAD)
            out.append(tokens)
            done |= tokens == data.EOS
            if done.all():
                break
        return torch.stack(out, 1)
    """,
    ),
    _c(
        "07-036",
        "07.greedy_decode",
        "updates 'finished' before writing PAD, so the EOS itself is replaced by PAD",
        "eos-dropped",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = logits.argmax(-1)
            done |= tokens == data.EOS
            tokens = tokens.masked_fill(done, data.PAD)
            out.append(tokens)
            if done.all():
                break
        return torch.stack(out, 1)
    """,
    ),
    _c(
        "07-037",
        "07.greedy_decode",
        "samples from the softmax (torch.multinomial) instead of taking the argmax",
        "sampling",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            logits, state, _ = model.decode_step(state, tokens)
            tokens = torch.multinomial(torch.softmax(logits, -1), 1).squeeze(1).masked_fill(done, data.PAD)
            out.append(tokens)
            done |= tokens == data.EOS
            if done.all():
                break
        return torch.stack(out, 1)
    """,
    ),
    # ---- 07.my_additive_scores
    _c(
        "07-038",
        "07.my_additive_scores",
        "forgets the tanh",
        "missing-tanh",
        """
    def my_additive_scores(s, h, W_s, W_h, v):
        return ((s @ W_s)[:, None, :] + h @ W_h) @ v
    """,
    ),
    _c(
        "07-039",
        "07.my_additive_scores",
        "applies tanh after the dot product with v",
        "tanh-order",
        """
    def my_additive_scores(s, h, W_s, W_h, v):
        return torch.tanh(((s @ W_s).unsqueeze(1) + h @ W_h) @ v)
    """,
    ),
    _c(
        "07-040",
        "07.my_additive_scores",
        "returns softmax weights instead of scores",
        "weights-not-scores",
        """
    def my_additive_scores(s, h, W_s, W_h, v):
        return torch.softmax(torch.tanh((s @ W_s).unsqueeze(1) + h @ W_h) @ v, dim=-1)
    """,
    ),
    _c(
        "07-041",
        "07.my_additive_scores",
        "sums the tanh features instead of the dot product with v",
        "missing-v",
        """
    def my_additive_scores(s, h, W_s, W_h, v):
        return torch.tanh((s @ W_s).unsqueeze(1) + h @ W_h).sum(-1)
    """,
    ),
    _c(
        "07-042",
        "07.my_additive_scores",
        "uses W_s transposed (s @ W_s.T): runs only when W_s is square",
        "transpose",
        """
    def my_additive_scores(s, h, W_s, W_h, v):
        return torch.tanh((s @ W_s.T).unsqueeze(1) + h @ W_h) @ v
    """,
    ),
    # ---- 07.token_accuracy
    _c(
        "07-043",
        "07.token_accuracy",
        "counts the PAD positions too",
        "counts-padding",
        """
    def token_accuracy(logits, target):
        return (logits.argmax(-1) == target).float().mean().item()
    """,
    ),
    _c(
        "07-044",
        "07.token_accuracy",
        "returns a tensor instead of a float",
        "return-type",
        """
    def token_accuracy(logits, target):
        real = target != data.PAD
        return ((logits.argmax(-1) == target) & real).sum() / real.sum()
    """,
    ),
    _c(
        "07-045",
        "07.token_accuracy",
        "averages per-sequence accuracies (short sequences weigh more)",
        "macro-mean",
        """
    def token_accuracy(logits, target):
        real = target != data.PAD
        hit = (logits.argmax(-1) == target) & real
        return (hit.sum(1).float() / real.sum(1).float()).mean().item()
    """,
    ),
    _c(
        "07-046",
        "07.token_accuracy",
        "argmax over dim 1 (the positions)",
        "wrong-axis",
        """
    def token_accuracy(logits, target):
        real = target != data.PAD
        pred = logits.argmax(dim=1)  # (batch, vocab)
        pred = pred[:, : target.shape[1]] if pred.shape[1] >= target.shape[1] else torch.nn.functional.pad(pred, (0, target.shape[1] - pred.shape[1]))
        return float(((pred == target) & real).sum() / real.sum())
    """,
    ),
    _c(
        "07-047",
        "07.token_accuracy",
        "leaves EOS out as well (counts only symbols)",
        "excludes-eos",
        """
    def token_accuracy(logits, target):
        real = target > data.EOS
        return float(((logits.argmax(-1) == target) & real).sum()) / float(real.sum())
    """,
    ),
    # ---- predictions
    _p("07-p01", "07.eos_position", "EOS at the end of the padded width", "eos-position", 4),
    _p("07-p02", "07.eos_position", "EOS on the last symbol", "off-by-one", 2),
    _p("07-p03", "07.concat_score_weights", "any score that contains s depends on s", "softmax-shift", "changed"),
    _p("07-p04", "07.mirror_position", "attends to the same position", "reversal", 4),
    _p("07-p05", "07.mirror_position", "mirror without the -1", "off-by-one", 10),
]
