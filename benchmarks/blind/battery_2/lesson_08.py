"""Battery 2, lesson 08: wrong answers to the Transformer exercises and predictions."""

H = ("import math\n\nimport numpy as np\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
     "from course_utils import attention, data, masks\n\n")

ENC_INIT = '''class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask):
'''

DEC_INIT = '''class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.cross_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
'''

DEC_OK_SELF = '''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
'''

DEC_OK_FFN = '''        x = x + self.ffn(self.norm3(x))
        return x, (weights if need_weights else None)
'''

DEC_OK_CROSS = '''        h = self.norm2(x)
        out, weights = self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
'''

POS = '''def my_positions(num_positions, d_model):
'''

TRAIN_HEAD = '''def my_train_step(model, optimizer, batch):
'''


def _c(id, exercise, mistake, kind, body):
    return {"id": id, "exercise": exercise, "mistake": mistake, "kind": kind, "source": H + body}


def _p(id, prediction, mistake, kind, value):
    return {"id": id, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


def _enc(id, mistake, kind, body):
    return _c(id, "08.encoder_layer", mistake, kind, ENC_INIT + body)


def _dec(id, mistake, kind, self_part=DEC_OK_SELF, cross_part=DEC_OK_CROSS, ffn_part=DEC_OK_FFN):
    return _c(id, "08.decoder_layer", mistake, kind, DEC_INIT + self_part + cross_part + ffn_part)


def _gd(id, mistake, kind, body):
    return _c(id, "08.my_greedy_decode", mistake, kind, body)


def _tp(id, mistake, kind, body):
    return _c(id, "08.transformer_parameters", mistake, kind, body)


CASES = [
    # ---- my_positions --------------------------------------------------------------------------------------------
    _c("08-001", "08.my_positions", "concatenates [sin | cos] halves instead of interleaving even/odd columns",
       "concat-not-interleave",
       '''def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
    freq = 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.cat([torch.sin(pos / freq), torch.cos(pos / freq)], dim=1)
'''),
    _c("08-002", "08.my_positions", "exponent j / d_model with j the column index itself, so each odd column gets "
       "its own frequency instead of sharing its pair's", "pair-frequency",
       '''def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
    j = torch.arange(d_model, dtype=torch.float32)
    angles = pos / 10000.0 ** (j / d_model)
    pe = torch.empty(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe
'''),
    _c("08-003", "08.my_positions", "exponent 2 * (2i) / d_model: arange(0, d, 2) already holds 2i, then doubled "
       "again", "double-2i",
       '''def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
    i = torch.arange(0, d_model, 2, dtype=torch.float32)
    angles = pos / 10000.0 ** (2 * i / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe
'''),
    _c("08-004", "08.my_positions", "builds the table in NumPy float64 and converts with torch.from_numpy: a float64 "
       "tensor", "dtype",
       '''def my_positions(num_positions, d_model):
    pos = np.arange(num_positions)[:, None]
    angles = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((num_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return torch.from_numpy(pe)
'''),
    _c("08-005", "08.my_positions", "cos in the even columns and sin in the odd ones", "swapped",
       '''def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
    angles = pos / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.cos(angles)
    pe[:, 1::2] = torch.sin(angles)
    return pe
'''),
    _c("08-006", "08.my_positions", "positions counted from 1", "off-by-one",
       '''def my_positions(num_positions, d_model):
    pos = torch.arange(1, num_positions + 1, dtype=torch.float32)[:, None]
    angles = pos / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe
'''),
    _c("08-007", "08.my_positions", "multiplies the position by 10000^(2i/d) instead of dividing", "inverted",
       '''def my_positions(num_positions, d_model):
    pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
    angles = pos * 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe
'''),
    _c("08-008", "08.my_positions", "returns the NumPy array", "wrong-type",
       '''def my_positions(num_positions, d_model):
    pos = np.arange(num_positions)[:, None]
    angles = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((num_positions, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
'''),
    # ---- my_decoder_masks ----------------------------------------------------------------------------------------
    _c("08-010", "08.my_decoder_masks", "self mask (tgt_len, tgt_len) without the two leading axes", "shape",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))
    cross = torch.arange(src_len)[None, :] < src_lengths[:, None]
    return self_mask, cross[:, None, None, :]
'''),
    _c("08-011", "08.my_decoder_masks", "cross mask on the query axis: (batch, 1, src_len, 1)", "rows-not-cols",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]
    cross = torch.arange(src_len)[None, :] < src_lengths[:, None]
    return self_mask, cross[:, None, :, None]
'''),
    _c("08-012", "08.my_decoder_masks", "cross mask left as the 2-D (batch, src_len) padding mask", "padding-as-2d",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]
    return self_mask, torch.arange(src_len)[None, :] < src_lengths[:, None]
'''),
    _c("08-013", "08.my_decoder_masks", "self mask with triu (future allowed)", "triu-tril",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.triu(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]
    cross = torch.arange(src_len)[None, :] < src_lengths[:, None]
    return self_mask, cross[:, None, None, :]
'''),
    _c("08-014", "08.my_decoder_masks", "cross mask True at the padding (key_padding_mask polarity)", "polarity",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]
    cross = torch.arange(src_len)[None, :] >= src_lengths[:, None]
    return self_mask, cross[:, None, None, :]
'''),
    _c("08-015", "08.my_decoder_masks", "returns (cross_mask, self_mask)", "return-order",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]
    cross = torch.arange(src_len)[None, :] < src_lengths[:, None]
    return cross[:, None, None, :], self_mask
'''),
    _c("08-016", "08.my_decoder_masks", "cross mask as wide as the target (tgt_len) instead of src_len", "wrong-length",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]
    cross = torch.arange(tgt_len)[None, :] < src_lengths[:, None]
    return self_mask, cross[:, None, None, :]
'''),
    _c("08-017", "08.my_decoder_masks", "self mask tril(diagonal=-1): a step may not read its own input",
       "off-by-one",
       '''def my_decoder_masks(src_lengths, src_len, tgt_len):
    self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool), diagonal=-1)[None, None]
    cross = torch.arange(src_len)[None, :] < src_lengths[:, None]
    return self_mask, cross[:, None, None, :]
'''),
    # ---- EncoderLayer --------------------------------------------------------------------------------------------
    _enc("08-020", "post-norm: x = LN(x + f(x)) instead of x + f(LN(x))", "post-norm",
         '''        x = self.norm1(x + self.self_attn(x, x, x, mask=mask, need_weights=False)[0])
        return self.norm2(x + self.ffn(x))
'''),
    _enc("08-021", "forgets the residual around the attention", "missing-residual",
         '''        h = self.norm1(x)
        x = self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
'''),
    _enc("08-022", "adds the sub-layer to the normalized copy (h + f(h)) instead of to x", "residual-from-norm",
         '''        h = self.norm1(x)
        x = h + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        h = self.norm2(x)
        return h + self.ffn(h)
'''),
    _enc("08-023", "uses norm1 before both sub-layers (norm2 never used)", "wrong-norm",
         '''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm1(x))
'''),
    _enc("08-024", "ignores the padding mask", "ignores-mask",
         '''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
'''),
    _enc("08-025", "keys and values from the un-normalized x, only the query normalized", "partial-norm",
         '''        h = self.norm1(x)
        x = x + self.self_attn(h, x, x, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
'''),
    _enc("08-026", "returns the (x, weights) tuple of the attention's habit", "return-arity",
         '''        h = self.norm1(x)
        out, weights = self.self_attn(h, h, h, mask=mask)
        x = x + out
        return x + self.ffn(self.norm2(x)), weights
'''),
    _enc("08-027", "the FFN reads the output of the attention, not the residual stream: x + FFN(LN(attn))",
         "wrong-input",
         '''        h = self.norm1(x)
        a = self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + a + self.ffn(self.norm2(a))
'''),
    # ---- DecoderLayer --------------------------------------------------------------------------------------------
    _dec("08-030", "cross-attention reads the decoder states instead of the encoder memory", "self-not-cross",
         cross_part='''        h = self.norm2(x)
        out, weights = self.cross_attn(h, h, h, need_weights=need_weights)
        x = x + out
'''),
    _dec("08-031", "normalizes the memory with norm2 as well", "extra-norm",
         cross_part='''        h = self.norm2(x)
        m = self.norm2(memory)
        out, weights = self.cross_attn(h, m, m, mask=cross_mask, need_weights=need_weights)
        x = x + out
'''),
    _dec("08-032", "no causal mask in the self-attention", "ignores-mask",
         self_part='''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
'''),
    _dec("08-033", "returns the self-attention weights instead of the cross-attention ones", "wrong-weights",
         self_part='''        h = self.norm1(x)
        sa, weights = self.self_attn(h, h, h, mask=self_mask)
        x = x + sa
''',
         cross_part='''        h = self.norm2(x)
        x = x + self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=False)[0]
'''),
    _dec("08-034", "cross-attention before self-attention", "order",
         self_part='''        h = self.norm1(x)
        out, weights = self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
''',
         cross_part='''        h = self.norm2(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
'''),
    _dec("08-035", "always returns the weights, even when need_weights is False", "ignores-arg",
         cross_part='''        h = self.norm2(x)
        out, weights = self.cross_attn(h, memory, memory, mask=cross_mask)
        x = x + out
''',
         ffn_part='''        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    _dec("08-036", "forgets the residual around the cross-attention", "missing-residual",
         cross_part='''        h = self.norm2(x)
        x, weights = self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=need_weights)
'''),
    _dec("08-037", "passes the two masks the other way round (only runs when tgt_len == src_len)", "swapped-masks",
         self_part='''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=cross_mask, need_weights=False)[0]
''',
         cross_part='''        h = self.norm2(x)
        out, weights = self.cross_attn(h, memory, memory, mask=self_mask, need_weights=need_weights)
        x = x + out
'''),
    # ---- my_train_step -------------------------------------------------------------------------------------------
    _c("08-040", "08.my_train_step", "cross-entropy without ignore_index: the PAD targets count", "ignores-padding",
       TRAIN_HEAD + '''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    _c("08-041", "08.my_train_step", "clips after optimizer.step(): the step uses the unclipped gradient",
       "clip-order",
       TRAIN_HEAD + '''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    return loss.item()
'''),
    _c("08-042", "08.my_train_step", "never clears the old gradients", "missing-zero-grad",
       TRAIN_HEAD + '''    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    _c("08-043", "08.my_train_step", "clips each gradient value at 1 (clip_grad_value_) instead of the total norm",
       "clip-value",
       TRAIN_HEAD + '''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    _c("08-044", "08.my_train_step", "returns the loss tensor", "wrong-type",
       TRAIN_HEAD + '''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss
'''),
    _c("08-045", "08.my_train_step", "sums the token losses and divides by the batch size (not by the number of "
       "real tokens)", "wrong-reduction",
       TRAIN_HEAD + '''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD,
                           reduction="sum") / batch.src.shape[0]
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    _c("08-046", "08.my_train_step", "feeds the target as the decoder input (the model reads the answer it must "
       "predict)", "teacher-forcing-shift",
       TRAIN_HEAD + '''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.target)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    _c("08-047", "08.my_train_step", "clips at max_norm=5 (a value copied from another project)", "wrong-constant",
       TRAIN_HEAD + '''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    optimizer.step()
    return loss.item()
'''),
    # ---- my_greedy_decode ----------------------------------------------------------------------------------------
    _gd("08-050", "takes the argmax of the FIRST step's logits at every step", "wrong-step",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    b = src.shape[0]
    dec = torch.full((b, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    out = []
    with torch.no_grad():
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, 0].argmax(dim=-1)
            nxt = torch.where(done, torch.full_like(nxt, data.PAD), nxt)
            out.append(nxt)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], dim=1)
            if done.all():
                break
    return torch.stack(out, dim=1)
'''),
    _gd("08-051", "no PAD after EOS", "no-pad-after-eos",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    b = src.shape[0]
    dec = torch.full((b, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    out = []
    with torch.no_grad():
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(dim=-1)
            out.append(nxt)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], dim=1)
            if done.all():
                break
    return torch.stack(out, dim=1)
'''),
    _gd("08-052", "stops when the first row emits EOS", "any-not-all",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    b = src.shape[0]
    dec = torch.full((b, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    out = []
    with torch.no_grad():
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(dim=-1)
            nxt = torch.where(done, torch.full_like(nxt, data.PAD), nxt)
            out.append(nxt)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], dim=1)
            if done.any():
                break
    return torch.stack(out, dim=1)
'''),
    _gd("08-053", "returns the decoder input, BOS included", "includes-bos",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    b = src.shape[0]
    dec = torch.full((b, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    with torch.no_grad():
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(dim=-1)
            nxt = torch.where(done, torch.full_like(nxt, data.PAD), nxt)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], dim=1)
            if done.all():
                break
    return dec
'''),
    _gd("08-054", "never stops before max_steps", "no-early-stop",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    b = src.shape[0]
    dec = torch.full((b, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    out = []
    with torch.no_grad():
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(dim=-1)
            nxt = torch.where(done, torch.full_like(nxt, data.PAD), nxt)
            out.append(nxt)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], dim=1)
    return torch.stack(out, dim=1)
'''),
    _gd("08-055", "one step too few: range(max_steps - 1)", "off-by-one",
        '''def my_greedy_decode(model, src, src_lengths, max_steps):
    b = src.shape[0]
    dec = torch.full((b, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    out = []
    with torch.no_grad():
        for _ in range(max_steps - 1):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(dim=-1)
            nxt = torch.where(done, torch.full_like(nxt, data.PAD), nxt)
            out.append(nxt)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], dim=1)
            if done.all():
                break
    return torch.stack(out, dim=1)
'''),
    # ---- transformer_parameters ----------------------------------------------------------------------------------
    _tp("08-060", "attention projections without biases", "missing-bias",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * d_model * d_model
    ln = 2 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + 2 * ln + ffn
    dec = 2 * attn + 3 * ln + ffn
    return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * ln + d_model * vocab + vocab
'''),
    _tp("08-061", "forgets the LayerNorms", "missing-term",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    return 2 * vocab * d_model + num_layers * (attn + ffn + 2 * attn + ffn) + d_model * vocab + vocab
'''),
    _tp("08-062", "one attention block in the decoder layer (forgets the cross-attention)", "missing-term",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ln = 2 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + 2 * ln + ffn
    dec = attn + 3 * ln + ffn
    return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * ln + d_model * vocab + vocab
'''),
    _tp("08-063", "forgets the two final LayerNorms", "missing-term",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ln = 2 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + 2 * ln + ffn
    dec = 2 * attn + 3 * ln + ffn
    return 2 * vocab * d_model + num_layers * (enc + dec) + d_model * vocab + vocab
'''),
    _tp("08-064", "assumes the source and target embeddings are one shared table", "tied-embeddings",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ln = 2 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + 2 * ln + ffn
    dec = 2 * attn + 3 * ln + ffn
    return vocab * d_model + num_layers * (enc + dec) + 2 * ln + d_model * vocab + vocab
'''),
    _tp("08-065", "LayerNorm counted with its weight only (d_model), not weight and bias", "missing-bias",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ln = d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + 2 * ln + ffn
    dec = 2 * attn + 3 * ln + ffn
    return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * ln + d_model * vocab + vocab
'''),
    _tp("08-066", "multiplies the attention parameters by the number of heads", "per-head",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = num_heads * 4 * (d_model * d_model + d_model)
    ln = 2 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + 2 * ln + ffn
    dec = 2 * attn + 3 * ln + ffn
    return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * ln + d_model * vocab + vocab
'''),
    _tp("08-067", "out_proj without its bias", "missing-bias",
        '''def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
    attn = 4 * (d_model * d_model + d_model)
    ln = 2 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    enc = attn + 2 * ln + ffn
    dec = 2 * attn + 3 * ln + ffn
    return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * ln + d_model * vocab
'''),
    # ---- teacher_forced_token_accuracy ---------------------------------------------------------------------------
    _c("08-070", "08.teacher_forced_token_accuracy", "counts the PAD positions", "ignores-padding",
       '''def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    return float((logits.argmax(dim=-1) == batch.target).float().mean())
'''),
    _c("08-071", "08.teacher_forced_token_accuracy", "returns a 0-d tensor", "wrong-type",
       '''def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != data.PAD
    return (logits.argmax(dim=-1) == batch.target)[real].float().mean()
'''),
    _c("08-072", "08.teacher_forced_token_accuracy", "shifts again as for a language model: compares step t with "
       "target t + 1", "double-shift",
       '''def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    pred, tgt = logits[:, :-1].argmax(dim=-1), batch.target[:, 1:]
    real = tgt != data.PAD
    return float((pred == tgt)[real].float().mean())
'''),
    _c("08-073", "08.teacher_forced_token_accuracy", "compares with the decoder input instead of the target",
       "wrong-target",
       '''def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.decoder_input != data.PAD
    return float((logits.argmax(dim=-1) == batch.decoder_input)[real].float().mean())
'''),
    _c("08-074", "08.teacher_forced_token_accuracy", "mean of the per-sequence accuracies", "mean-of-means",
       '''def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != data.PAD
    hits = ((logits.argmax(dim=-1) == batch.target) & real).sum(dim=1).float()
    return float((hits / real.sum(dim=1).float()).mean())
'''),
    _c("08-075", "08.teacher_forced_token_accuracy", "counts only the symbols (target > EOS), not the EOS steps",
       "ignores-eos",
       '''def teacher_forced_token_accuracy(model, batch):
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target > data.EOS
    return float((logits.argmax(dim=-1) == batch.target)[real].float().mean())
'''),
    # ---- predictions ---------------------------------------------------------------------------------------------
    _p("08-p01", "08.layernorm_scaled_row", "thinks LayerNorm keeps the scale of its input", "layernorm", False),
    _p("08-p02", "08.later_inputs_move", "off by one: thinks the input at step 4 first affects step 5",
       "off-by-one", {5, 6, 7}),
    _p("08-p03", "08.later_inputs_move", "forgets the causal mask: every step moves", "causal", set(range(8))),
    _p("08-p04", "08.clipped_norm", "thinks clipping only applies to single entries", "clipping", 50.0),
    _p("08-p05", "08.clipped_norm", "divides by the norm twice: 1 / 50", "clipping", 0.02),
    _p("08-p06", "08.shuffled_source", "thinks the encoder reads the order anyway", "positional", "completely"),
    _p("08-p07", "08.shuffled_source", "thinks the attention weights carry some order", "positional", "a little"),
    _p("08-p09", "08.decoder_self_attention", "assumes cross-attention, reading a whole source, is the diffuse one",
       "attention-maps", "cross-attention"),
    _p("08-p10", "08.length_14", "assumes the Transformer generalizes to longer inputs better than a GRU",
       "extrapolation", "transformer"),
    _p("08-p08", "08.long_run_enough", "thinks more training steps fix extrapolation", "extrapolation", True),
]
