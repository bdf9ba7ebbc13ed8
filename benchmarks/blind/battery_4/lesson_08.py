"""Blind battery 4, lesson 08: wrong answers a student could give (see README.md)."""

_HEAD = (
    "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
    "from course_utils import attention, data\n"
)

_ENC_INIT = """

class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
"""

_DEC_INIT = """

class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.cross_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
"""


def _case(cid, exercise, mistake, kind, source):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": source}


def _pred(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _dec(body):
    return _HEAD + _DEC_INIT + "\n    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):\n" + body


def _greedy(body):
    return _HEAD + "\n\ndef my_greedy_decode(model, src, src_lengths, max_steps):\n" + body


def _train(body):
    return _HEAD + "\n\ndef my_train_step(model, optimizer, batch):\n" + body


CASES = [
    # my_positions
    _case(
        "08-001",
        "08.my_positions",
        "uses the column index j in the exponent for both columns of a pair "
        "(10000^(j / d_model) instead of 10000^(2i / d_model))",
        "exponent-index",
        _HEAD
        + """

def my_positions(num_positions, d_model):
    p = torch.arange(num_positions, dtype=torch.float32)[:, None]
    j = torch.arange(d_model, dtype=torch.float32)[None, :]
    angle = p / 10000 ** (j / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angle[:, 0::2])
    pe[:, 1::2] = torch.cos(angle[:, 1::2])
    return pe
""",
    ),
    _case(
        "08-002",
        "08.my_positions",
        "sin in the odd columns, cos in the even ones",
        "sin-cos-swap",
        _HEAD
        + """

def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions).float().unsqueeze(1)
    div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.cos(pos * div)
    pe[:, 1::2] = torch.sin(pos * div)
    return pe
""",
    ),
    _case(
        "08-003",
        "08.my_positions",
        "sines in the first half, cosines in the second (concatenated, not interleaved)",
        "concat-halves",
        _HEAD
        + """

def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
    freq = 10000 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1)
""",
    ),
    _case(
        "08-004",
        "08.my_positions",
        "returns float64 (arange of Python floats in double precision)",
        "dtype",
        _HEAD
        + """

def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d_model, 2, dtype=torch.float64)
    pe = torch.zeros(num_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos / 10000 ** (i2 / d_model))
    pe[:, 1::2] = torch.cos(pos / 10000 ** (i2 / d_model))
    return pe
""",
    ),
    _case(
        "08-005",
        "08.my_positions",
        "multiplies by 10000^(2i/d) instead of dividing",
        "sign",
        _HEAD
        + """

def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
    i2 = torch.arange(0, d_model, 2, dtype=torch.float32)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(pos * 10000 ** (i2 / d_model))
    pe[:, 1::2] = torch.cos(pos * 10000 ** (i2 / d_model))
    return pe
""",
    ),
    _case(
        "08-006",
        "08.my_positions",
        "positions start at 1 instead of 0",
        "off-by-one",
        _HEAD
        + """

def my_positions(num_positions, d_model):
    pos = torch.arange(1, num_positions + 1, dtype=torch.float32)[:, None]
    i2 = torch.arange(0, d_model, 2, dtype=torch.float32)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(pos / 10000 ** (i2 / d_model))
    pe[:, 1::2] = torch.cos(pos / 10000 ** (i2 / d_model))
    return pe
""",
    ),
    # my_decoder_masks
    _case(
        "08-007",
        "08.my_decoder_masks",
        "causal mask with triu: the future instead of the past",
        "polarity",
        _HEAD
        + """

def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).triu()[None, None]
    cross_mask = (torch.arange(src_len)[None, :] < src_lengths[:, None])[:, None, None, :]
    return self_mask, cross_mask
""",
    ),
    _case(
        "08-008",
        "08.my_decoder_masks",
        "returns the masks without the broadcast axes: (tgt_len, tgt_len) and (batch, src_len)",
        "missing-axis",
        _HEAD
        + """

def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))
    cross_mask = torch.arange(src_len)[None, :] < src_lengths[:, None]
    return self_mask, cross_mask
""",
    ),
    _case(
        "08-009",
        "08.my_decoder_masks",
        "cross mask with <=: one padding position counted as real",
        "off-by-one",
        _HEAD
        + """

def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril().view(1, 1, tgt_len, tgt_len)
    cross_mask = (torch.arange(src_len).view(1, -1) <= src_lengths.view(-1, 1)).view(-1, 1, 1, src_len)
    return self_mask, cross_mask
""",
    ),
    _case(
        "08-010",
        "08.my_decoder_masks",
        "returns (cross_mask, self_mask)",
        "return-order",
        _HEAD
        + """

def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()[None, None]
    cross_mask = (torch.arange(src_len)[None, :] < src_lengths[:, None])[:, None, None, :]
    return cross_mask, self_mask
""",
    ),
    _case(
        "08-011",
        "08.my_decoder_masks",
        "cross mask in PyTorch's convention (True = padding)",
        "polarity",
        _HEAD
        + """

def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()[None, None]
    cross_mask = (torch.arange(src_len)[None, :] >= src_lengths[:, None])[:, None, None, :]
    return self_mask, cross_mask
""",
    ),
    _case(
        "08-012",
        "08.my_decoder_masks",
        "puts the cross mask on the query axis: (batch, 1, src_len, 1)",
        "wrong-axis",
        _HEAD
        + """

def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()[None, None]
    cross_mask = (torch.arange(src_len)[None, :] < src_lengths[:, None])[:, None, :, None]
    return self_mask, cross_mask
""",
    ),
    # encoder_layer
    _case(
        "08-013",
        "08.encoder_layer",
        "post-norm: x = LN(x + attn(x)) instead of the pre-norm the docstring asks",
        "post-norm",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, x, mask):
        x = self.norm1(x + self.self_attn(x, x, x, mask=mask)[0])
        return self.norm2(x + self.ffn(x))
""",
    ),
    _case(
        "08-014",
        "08.encoder_layer",
        "forgets the residual around the attention",
        "missing-residual",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = self.self_attn(h, h, h, mask=mask)[0]
        return x + self.ffn(self.norm2(x))
""",
    ),
    _case(
        "08-015",
        "08.encoder_layer",
        "normalizes the residual stream itself (x = LN(x), then x + attn(x))",
        "norm-residual",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, x, mask):
        x = self.norm1(x)
        x = x + self.self_attn(x, x, x, mask=mask)[0]
        x = self.norm2(x)
        return x + self.ffn(x)
""",
    ),
    _case(
        "08-016",
        "08.encoder_layer",
        "ignores the padding mask",
        "ignores-mask",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h)[0]
        return x + self.ffn(self.norm2(x))
""",
    ),
    _case(
        "08-017",
        "08.encoder_layer",
        "uses norm1 before the feed-forward too (norm2 unused)",
        "wrong-norm",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask)[0]
        return x + self.ffn(self.norm1(x))
""",
    ),
    _case(
        "08-018",
        "08.encoder_layer",
        "normalizes the query only; keys and values read the raw x",
        "partial-norm",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, x, mask):
        x = x + self.self_attn(self.norm1(x), x, x, mask=mask)[0]
        return x + self.ffn(self.norm2(x))
""",
    ),
    _case(
        "08-019",
        "08.encoder_layer",
        "updates x in place with += on the input tensor: the caller's x changes",
        "in-place",
        _HEAD
        + _ENC_INIT
        + """
    def forward(self, x, mask):
        h = self.norm1(x)
        x += self.self_attn(h, h, h, mask=mask)[0]
        x += self.ffn(self.norm2(x))
        return x
""",
    ),
    # decoder_layer
    _case(
        "08-020",
        "08.decoder_layer",
        "the cross-attention reads the decoder's own states (keys and values = x) instead of the encoder memory",
        "no-memory",
        _dec("""        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask)[0]
        h = self.norm2(x)
        out, weights = self.cross_attn(h, h, h, mask=self_mask)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, (weights if need_weights else None)
"""),
    ),
    _case(
        "08-021",
        "08.decoder_layer",
        "no causal mask in the self-attention",
        "ignores-mask",
        _dec("""        h = self.norm1(x)
        x = x + self.self_attn(h, h, h)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, (weights if need_weights else None)
"""),
    ),
    _case(
        "08-022",
        "08.decoder_layer",
        "returns the self-attention weights instead of the cross-attention's",
        "wrong-weights",
        _dec("""        h = self.norm1(x)
        out, self_weights = self.self_attn(h, h, h, mask=self_mask)
        x = x + out
        h = self.norm2(x)
        x = x + self.cross_attn(h, memory, memory, mask=cross_mask)[0]
        x = x + self.ffn(self.norm3(x))
        return x, (self_weights if need_weights else None)
"""),
    ),
    _case(
        "08-023",
        "08.decoder_layer",
        "normalizes the memory with norm2 as well",
        "norm-memory",
        _dec("""        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask)[0]
        mem = self.norm2(memory)
        out, weights = self.cross_attn(self.norm2(x), mem, mem, mask=cross_mask)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, (weights if need_weights else None)
"""),
    ),
    _case(
        "08-024",
        "08.decoder_layer",
        "always returns the weights, also when need_weights is False",
        "ignores-option",
        _dec("""        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
"""),
    ),
    _case(
        "08-025",
        "08.decoder_layer",
        "passes the cross mask to the self-attention and the causal mask to the "
        "cross-attention (broadcasts when tgt_len == src_len)",
        "swapped-masks",
        _dec("""        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=cross_mask)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=self_mask)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, (weights if need_weights else None)
"""),
    ),
    _case(
        "08-026",
        "08.decoder_layer",
        "forgets the residual around the cross-attention",
        "missing-residual",
        _dec("""        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask)[0]
        x, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask)
        x = x + self.ffn(self.norm3(x))
        return x, (weights if need_weights else None)
"""),
    ),
    _case(
        "08-027",
        "08.decoder_layer",
        "runs the cross-attention under torch.no_grad() when need_weights is True "
        "('the weights are only for plots'): no gradient through it",
        "no-grad",
        _dec("""        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask)[0]
        if need_weights:
            with torch.no_grad():
                out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask)
        else:
            out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask)
            weights = None
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
"""),
    ),
    # my_train_step
    _case(
        "08-028",
        "08.my_train_step",
        "cross-entropy over every position, PAD included (no ignore_index)",
        "includes-pad",
        _train("""    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
"""),
    ),
    _case(
        "08-029",
        "08.my_train_step",
        "clips before backward (clips the stale gradients, not the new ones)",
        "clip-order",
        _train("""    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    loss.backward()
    optimizer.step()
    return loss.item()
"""),
    ),
    _case(
        "08-030",
        "08.my_train_step",
        "forgets zero_grad: the stale gradients are added",
        "missing-zero-grad",
        _train("""    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    return float(loss)
"""),
    ),
    _case(
        "08-031",
        "08.my_train_step",
        "zero_grad between clipping and step: the step sees no gradient",
        "zero-grad-order",
        _train("""    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()
"""),
    ),
    _case(
        "08-032",
        "08.my_train_step",
        "clip_grad_value_ (each entry at 1) instead of the total norm",
        "clip-value",
        _train("""    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
"""),
    ),
    _case(
        "08-033",
        "08.my_train_step",
        "no gradient clipping",
        "missing-clip",
        _train("""    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD)
    loss.backward()
    optimizer.step()
    return loss.item()
"""),
    ),
    _case(
        "08-034",
        "08.my_train_step",
        "sums the loss over the tokens (reduction='sum')",
        "sum-not-mean",
        _train("""    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD, reduction="sum")
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
"""),
    ),
    _case(
        "08-035",
        "08.my_train_step",
        "feeds the target as the decoder input (the shift forgotten)",
        "no-shift",
        _train("""    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.target)
    loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
"""),
    ),
    _case(
        "08-036",
        "08.my_train_step",
        "forgets optimizer.step()",
        "missing-step",
        _train("""    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    return loss.item()
"""),
    ),
    # my_greedy_decode
    _case(
        "08-037",
        "08.my_greedy_decode",
        "takes the argmax of the FIRST step's logits every time",
        "wrong-step",
        _greedy("""    batch = src.shape[0]
    decoder_input = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits = model(src, src_lengths, decoder_input)
        nxt = logits[:, 0].argmax(-1).masked_fill(done, data.PAD)
        out.append(nxt)
        done |= nxt == data.EOS
        decoder_input = torch.cat([decoder_input, nxt[:, None]], dim=1)
        if done.all():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    _case(
        "08-038",
        "08.my_greedy_decode",
        "no PAD after a row's EOS",
        "no-pad-after-eos",
        _greedy("""    batch = src.shape[0]
    decoder_input = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    for _ in range(max_steps):
        nxt = model(src, src_lengths, decoder_input)[:, -1].argmax(-1)
        decoder_input = torch.cat([decoder_input, nxt[:, None]], dim=1)
        done |= nxt == data.EOS
        if done.all():
            break
    return decoder_input[:, 1:]
"""),
    ),
    _case(
        "08-039",
        "08.my_greedy_decode",
        "returns the decoder input, BOS included",
        "includes-bos",
        _greedy("""    batch = src.shape[0]
    tokens = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    for _ in range(max_steps):
        nxt = model(src, src_lengths, tokens)[:, -1].argmax(-1).masked_fill(done, data.PAD)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == data.EOS
        if done.all():
            break
    return tokens
"""),
    ),
    _case(
        "08-040",
        "08.my_greedy_decode",
        "stops when the first row emits EOS",
        "stop-any",
        _greedy("""    batch = src.shape[0]
    tokens = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    for _ in range(max_steps):
        nxt = model(src, src_lengths, tokens)[:, -1].argmax(-1).masked_fill(done, data.PAD)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == data.EOS
        if done.any():
            break
    return tokens[:, 1:]
"""),
    ),
    _case(
        "08-041",
        "08.my_greedy_decode",
        "feeds back the argmax over the whole logits sequence each step "
        "(replaces the decoder input with all the step argmaxes: BOS lost)",
        "rebuild-input",
        _greedy("""    batch = src.shape[0]
    tokens = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        preds = model(src, src_lengths, tokens).argmax(-1)  # (batch, steps so far)
        nxt = preds[:, -1].masked_fill(done, data.PAD)
        out.append(nxt)
        done |= nxt == data.EOS
        tokens = torch.cat([preds[:, :1], preds], dim=1)
        if done.all():
            break
    return torch.stack(out, dim=1)
"""),
    ),
    # transformer_parameters
    _case(
        "08-042",
        "08.transformer_parameters",
        "forgets the LayerNorms (2 d_model each)",
        "missing-term",
        """

def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * d_model * d_model + 4 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + ffn
    dec = 2 * attn + ffn
    return 2 * vocab * d_model + num_layers * (enc + dec) + d_model * vocab + vocab
""",
    ),
    _case(
        "08-043",
        "08.transformer_parameters",
        "forgets the cross-attention of the decoder layers",
        "missing-term",
        """

def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * d_model * d_model + 4 * d_model
    ffn = 2 * d_model * d_ff + d_ff + d_model
    enc = attn + ffn + 2 * 2 * d_model
    dec = attn + ffn + 3 * 2 * d_model
    return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * 2 * d_model + d_model * vocab + vocab
""",
    ),
    _case(
        "08-044",
        "08.transformer_parameters",
        "forgets out_proj's bias",
        "missing-bias",
        """

def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ffn = 2 * d_model * d_ff + d_ff + d_model
    enc = attn + ffn + 4 * d_model
    dec = 2 * attn + ffn + 6 * d_model
    return 2 * vocab * d_model + num_layers * (enc + dec) + 4 * d_model + d_model * vocab
""",
    ),
    _case(
        "08-045",
        "08.transformer_parameters",
        "multiplies the attention matrices by num_heads",
        "times-heads",
        """

def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = num_heads * 4 * d_model * d_model + 4 * d_model
    ffn = 2 * d_model * d_ff + d_ff + d_model
    enc = attn + ffn + 4 * d_model
    dec = 2 * attn + ffn + 6 * d_model
    return 2 * vocab * d_model + num_layers * (enc + dec) + 4 * d_model + d_model * vocab + vocab
""",
    ),
    _case(
        "08-046",
        "08.transformer_parameters",
        "counts one embedding table (thinks source and target share it)",
        "missing-term",
        """

def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ffn = 2 * d_model * d_ff + d_ff + d_model
    enc = attn + ffn + 4 * d_model
    dec = 2 * attn + ffn + 6 * d_model
    return vocab * d_model + num_layers * (enc + dec) + 4 * d_model + d_model * vocab + vocab
""",
    ),
    _case(
        "08-047",
        "08.transformer_parameters",
        "counts each LayerNorm as d_model (weight only)",
        "layernorm-bias",
        """

def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ffn = 2 * d_model * d_ff + d_ff + d_model
    enc = attn + ffn + 2 * d_model
    dec = 2 * attn + ffn + 3 * d_model
    return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * d_model + d_model * vocab + vocab
""",
    ),
    # teacher_forced_token_accuracy
    _case(
        "08-048",
        "08.teacher_forced_token_accuracy",
        "counts the PAD positions too",
        "includes-pad",
        _HEAD
        + """

def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    return (logits.argmax(-1) == batch.target).float().mean().item()
""",
    ),
    _case(
        "08-049",
        "08.teacher_forced_token_accuracy",
        "compares with the decoder input instead of the target",
        "wrong-reference",
        _HEAD
        + """

def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != data.PAD
    return ((logits.argmax(-1) == batch.decoder_input) & real).sum().item() / real.sum().item()
""",
    ),
    _case(
        "08-050",
        "08.teacher_forced_token_accuracy",
        "returns a tensor instead of a float",
        "wrong-type",
        _HEAD
        + """

def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != data.PAD
    return ((logits.argmax(-1) == batch.target) & real).sum() / real.sum()
""",
    ),
    _case(
        "08-051",
        "08.teacher_forced_token_accuracy",
        "averages per-row accuracies (each sequence weighs the same)",
        "mean-of-means",
        _HEAD
        + """

def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != data.PAD
    hits = (logits.argmax(-1) == batch.target) & real
    return (hits.sum(1) / real.sum(1)).mean().item()
""",
    ),
    # predictions
    _pred(
        "08-p01",
        "08.layernorm_scaled_row",
        "thinks a 10x larger row gives a 10x larger output",
        "pred-layernorm",
        False,
    ),
    _pred("08-p02", "08.later_inputs_move", "thinks only the changed step moves", "pred-causal", {4}),
    _pred("08-p03", "08.later_inputs_move", "forgets the causal mask: every step moves", "pred-causal", set(range(8))),
    _pred("08-p04", "08.clipped_norm", "thinks clipping only applies below 1 and leaves 50", "pred-clip", 50.0),
    _pred("08-p05", "08.clipped_norm", "divides by the norm twice: 1 / 50", "pred-clip", 0.02),
    _pred(
        "08-p06",
        "08.decoder_self_attention",
        "thinks cross-attention is the diffuse one",
        "pred-spread",
        "cross-attention",
    ),
    _pred(
        "08-p07",
        "08.shuffled_source",
        "thinks a shuffled source changes everything, positions or not",
        "pred-equivariance",
        "completely",
    ),
    _pred("08-p08", "08.shuffled_source", "expects a small change", "pred-equivariance", "a little"),
    _pred(
        "08-p09",
        "08.length_14",
        "thinks attention-only models generalize to longer inputs",
        "pred-length",
        "transformer",
    ),
    _pred("08-p10", "08.long_run_enough", "thinks a longer run fixes length generalization", "pred-length", True),
]
