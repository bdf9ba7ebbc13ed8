"""Blind battery 3, lesson 08: wrong answers a student could write (see README.md). Never edited to pass."""

from textwrap import dedent

HEAD = (
    "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
    "from course_utils import attention, data, masks\n\n"
)

ENC_INIT = """
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
"""
DEC_INIT = """
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(d_model), nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.cross_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
"""


def _cls(name, init, forward):
    body = dedent(init).strip().replace("\n", "\n    ") + "\n\n    " + dedent(forward).strip().replace("\n", "\n    ")
    return f"class {name}(nn.Module):\n    {body}\n"


def _enc(cid, mistake, kind, forward, init=ENC_INIT):
    return {
        "id": cid,
        "exercise": "08.encoder_layer",
        "mistake": mistake,
        "kind": kind,
        "source": HEAD + _cls("EncoderLayer", init, forward),
    }


def _dec(cid, mistake, kind, forward, init=DEC_INIT):
    return {
        "id": cid,
        "exercise": "08.decoder_layer",
        "mistake": mistake,
        "kind": kind,
        "source": HEAD + _cls("DecoderLayer", init, forward),
    }


def _c(cid, exercise, mistake, kind, body, pre=""):
    return {"id": cid, "exercise": exercise, "mistake": mistake, "kind": kind, "source": HEAD + pre + dedent(body)}


def _p(cid, prediction, mistake, kind, value):
    return {"id": cid, "prediction": prediction, "mistake": mistake, "kind": kind, "value": value}


CASES = [
    # ---- 08.my_positions
    _c(
        "08-001",
        "08.my_positions",
        "frequency exponent i / d_model instead of 2i / d_model",
        "exponent",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
        i = torch.arange(d_model // 2, dtype=torch.float32)
        angle = pos / 10000 ** (i / d_model)
        pe = torch.zeros(num_positions, d_model)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
        return pe
    """,
    ),
    _c(
        "08-002",
        "08.my_positions",
        "cos in the even columns and sin in the odd ones",
        "sin-cos-swap",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(num_positions).float().unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe = torch.zeros(num_positions, d_model)
        pe[:, 0::2] = torch.cos(pos * div)
        pe[:, 1::2] = torch.sin(pos * div)
        return pe
    """,
    ),
    _c(
        "08-003",
        "08.my_positions",
        "sin in the first half of the columns, cos in the second (concatenated, not interleaved)",
        "concat-not-interleave",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
        freq = 10000 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
        return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1)
    """,
    ),
    _c(
        "08-004",
        "08.my_positions",
        "builds it in float64 and returns float64",
        "dtype",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(num_positions, dtype=torch.float64)[:, None]
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
        angle = pos / torch.pow(10000.0, two_i / d_model)
        pe = torch.empty(num_positions, d_model, dtype=torch.float64)
        pe[:, 0::2] = angle.sin()
        pe[:, 1::2] = angle.cos()
        return pe
    """,
    ),
    _c(
        "08-005",
        "08.my_positions",
        "gives every column its own frequency 10000^(j / d_model) (j the column)",
        "per-column-frequency",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
        j = torch.arange(d_model, dtype=torch.float32)
        angle = pos / 10000 ** (j / d_model)
        return torch.where(j.long() % 2 == 0, torch.sin(angle), torch.cos(angle))
    """,
    ),
    _c(
        "08-006",
        "08.my_positions",
        "multiplies by 10000^(2i/d) instead of dividing",
        "inverted-frequency",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
        scale = 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
        pe = torch.zeros(num_positions, d_model)
        pe[:, ::2] = torch.sin(pos * scale)
        pe[:, 1::2] = torch.cos(pos * scale)
        return pe
    """,
    ),
    _c(
        "08-007",
        "08.my_positions",
        "positions counted from 1",
        "off-by-one",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(1, num_positions + 1, dtype=torch.float32)[:, None]
        div = 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
        pe = torch.zeros(num_positions, d_model)
        pe[:, 0::2] = torch.sin(pos / div)
        pe[:, 1::2] = torch.cos(pos / div)
        return pe
    """,
    ),
    _c(
        "08-008",
        "08.my_positions",
        "returns (d_model, num_positions)",
        "transpose",
        """
    def my_positions(num_positions, d_model):
        pos = torch.arange(num_positions, dtype=torch.float32)[:, None]
        div = 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
        pe = torch.zeros(num_positions, d_model)
        pe[:, 0::2] = torch.sin(pos / div)
        pe[:, 1::2] = torch.cos(pos / div)
        return pe.T
    """,
    ),
    # ---- 08.my_decoder_masks
    _c(
        "08-009",
        "08.my_decoder_masks",
        "cross mask on the query axis: (batch, 1, src_len, 1)",
        "wrong-axis",
        """
    def my_decoder_masks(src_lengths, src_len, tgt_len):
        self_mask = masks.make_causal_mask(tgt_len)[None, None]
        real = masks.make_padding_mask(src_lengths, src_len)
        return self_mask, real[:, None, :, None]
    """,
    ),
    _c(
        "08-010",
        "08.my_decoder_masks",
        "self mask from triu (the future)",
        "triu",
        """
    def my_decoder_masks(src_lengths, src_len, tgt_len):
        self_mask = torch.triu(torch.ones(tgt_len, tgt_len, dtype=torch.bool))[None, None]
        cross = torch.arange(src_len)[None, :] < src_lengths[:, None]
        return self_mask, cross[:, None, None, :]
    """,
    ),
    _c(
        "08-011",
        "08.my_decoder_masks",
        "cross mask True at the padding (PyTorch's key_padding_mask convention)",
        "polarity",
        """
    def my_decoder_masks(src_lengths, src_len, tgt_len):
        self_mask = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool)).view(1, 1, tgt_len, tgt_len)
        pad = torch.arange(src_len)[None, :] >= src_lengths[:, None]
        return self_mask, pad.view(-1, 1, 1, src_len)
    """,
    ),
    _c(
        "08-012",
        "08.my_decoder_masks",
        "leaves the cross mask 2-D, (batch, src_len)",
        "missing-axes",
        """
    def my_decoder_masks(src_lengths, src_len, tgt_len):
        return masks.make_causal_mask(tgt_len)[None, None], masks.make_padding_mask(src_lengths, src_len)
    """,
    ),
    _c(
        "08-013",
        "08.my_decoder_masks",
        "returns (cross_mask, self_mask)",
        "order",
        """
    def my_decoder_masks(src_lengths, src_len, tgt_len):
        self_mask = masks.make_causal_mask(tgt_len)[None, None]
        cross_mask = masks.padding_to_attention_mask(masks.make_padding_mask(src_lengths, src_len))
        return cross_mask, self_mask
    """,
    ),
    _c(
        "08-014",
        "08.my_decoder_masks",
        "cross mask as wide as the decoder (tgt_len) instead of the source",
        "wrong-width",
        """
    def my_decoder_masks(src_lengths, src_len, tgt_len):
        self_mask = masks.make_causal_mask(tgt_len)[None, None]
        cross = torch.arange(tgt_len)[None, :] < src_lengths[:, None]
        return self_mask, cross[:, None, None, :]
    """,
    ),
    _c(
        "08-015",
        "08.my_decoder_masks",
        "self mask with diagonal=-1: a step may not read its own input",
        "off-by-one",
        """
    def my_decoder_masks(src_lengths, src_len, tgt_len):
        self_mask = torch.tril(torch.ones(tgt_len, tgt_len), diagonal=-1).bool()[None, None]
        cross = (torch.arange(src_len)[None, :] < src_lengths[:, None])[:, None, None, :]
        return self_mask, cross
    """,
    ),
    # ---- 08.encoder_layer
    _enc(
        "08-016",
        "post-norm (LayerNorm after the residual sum), not the pre-norm the docstring asks for",
        "post-norm",
        """
    def forward(self, x, mask):
        x = self.norm1(x + self.self_attn(x, x, x, mask=mask, need_weights=False)[0])
        return self.norm2(x + self.ffn(x))
    """,
    ),
    _enc(
        "08-017",
        "forgets the residual around the attention",
        "missing-residual",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
    """,
    ),
    _enc(
        "08-018",
        "forgets the residual around the feed-forward network",
        "missing-residual",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return self.ffn(self.norm2(x))
    """,
    ),
    _enc(
        "08-019",
        "adds the normalised input as the residual (h + attention(h))",
        "residual-from-norm",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = h + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        h = self.norm2(x)
        return h + self.ffn(h)
    """,
    ),
    _enc(
        "08-020",
        "normalises the queries only: keys and values are the raw x",
        "norm-queries-only",
        """
    def forward(self, x, mask):
        x = x + self.self_attn(self.norm1(x), x, x, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
    """,
    ),
    _enc(
        "08-021",
        "ignores the padding mask",
        "ignores-mask",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
    """,
    ),
    _enc(
        "08-022",
        "GELU instead of ReLU in the feed-forward network",
        "activation",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        lin1, _, lin2 = self.ffn
        return x + lin2(F.gelu(lin1(self.norm2(x))))
    """,
    ),
    _enc(
        "08-023",
        "adds dropout with F.dropout(p=0.1) and no training flag: it also drops in eval mode",
        "dropout-in-eval",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + F.dropout(self.self_attn(h, h, h, mask=mask, need_weights=False)[0], p=0.1)
        return x + F.dropout(self.ffn(self.norm2(x)), p=0.1)
    """,
    ),
    _enc(
        "08-024",
        "returns (x, weights) like the decoder layer",
        "return-type",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        out, weights = self.self_attn(h, h, h, mask=mask)
        x = x + out
        return x + self.ffn(self.norm2(x)), weights
    """,
    ),
    _enc(
        "08-025",
        "names the feed-forward network 'feed_forward': the course's weights do not load by name",
        "names",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.feed_forward(self.norm2(x))
    """,
        init="""
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
    """,
    ),
    _enc(
        "08-026",
        "uses norm1 for both sub-layers (norm2 built but never used)",
        "reused-norm",
        """
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm1(x))
    """,
    ),
    # ---- 08.decoder_layer
    _dec(
        "08-027",
        "cross-attention reads the decoder's own states instead of memory",
        "cross-from-self",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        h = self.norm2(x)
        out, weights = self.cross_attn(h, h, h, mask=self_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-028",
        "normalises memory again with norm2 (it is already normalised by the encoder)",
        "double-norm",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        m = self.norm2(memory)
        out, weights = self.cross_attn(self.norm2(x), m, m, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-029",
        "no causal mask in the self-attention",
        "ignores-mask",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-030",
        "returns the self-attention's weights instead of the cross-attention's",
        "wrong-weights",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        out, weights = self.self_attn(h, h, h, mask=self_mask, need_weights=need_weights)
        x = x + out
        x = x + self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=False)[0]
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-031",
        "always returns the weights, even when need_weights is False",
        "ignores-arg",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-032",
        "forgets the residual around the cross-attention",
        "missing-residual",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        x, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights)
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-033",
        "detaches memory before the cross-attention: no gradient reaches the encoder",
        "cuts-grad",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        memory = memory.detach()
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-034",
        "post-norm in all three sub-layers",
        "post-norm",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        x = self.norm1(x + self.self_attn(x, x, x, mask=self_mask, need_weights=False)[0])
        out, weights = self.cross_attn(x, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = self.norm2(x + out)
        return self.norm3(x + self.ffn(x)), weights
    """,
    ),
    _dec(
        "08-035",
        "cross-attention queries from the un-normalised x",
        "missing-norm",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        out, weights = self.cross_attn(x, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    _dec(
        "08-036",
        "adds the self-attention output in place (x += ...): the caller's x changes",
        "in-place",
        """
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x += self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights
    """,
    ),
    # ---- 08.my_train_step
    _c(
        "08-037",
        "08.my_train_step",
        "no ignore_index: the PAD targets count in the loss",
        "counts-padding",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "08-038",
        "08.my_train_step",
        "clips before backward (clips the stale gradients, not the new ones)",
        "clip-order",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=data.PAD)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        loss.backward()
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "08-039",
        "08.my_train_step",
        "clips after optimizer.step(): the step already used the unclipped gradient",
        "clip-order",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=data.PAD)
        loss.backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        return loss.item()
    """,
    ),
    _c(
        "08-040",
        "08.my_train_step",
        "forgets zero_grad: the stale gradients are added and clipped with the new",
        "no-zero-grad",
        """
    def my_train_step(model, optimizer, batch):
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=data.PAD)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "08-041",
        "08.my_train_step",
        "clip_grad_value_ (each entry to [-1, 1]) instead of the total norm",
        "clip-value",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=data.PAD)
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "08-042",
        "08.my_train_step",
        "trains against the decoder input instead of the target (no shift)",
        "wrong-target",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.decoder_input.flatten(), ignore_index=data.PAD)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "08-043",
        "08.my_train_step",
        "returns the loss tensor",
        "return-type",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.transpose(1, 2), batch.target, ignore_index=data.PAD)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss
    """,
    ),
    _c(
        "08-044",
        "08.my_train_step",
        "sums the loss over the tokens (reduction='sum')",
        "loss-reduction",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=data.PAD, reduction="sum")
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()
    """,
    ),
    _c(
        "08-045",
        "08.my_train_step",
        "clips at max_norm=5 (a value from another tutorial)",
        "wrong-constant",
        """
    def my_train_step(model, optimizer, batch):
        optimizer.zero_grad()
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=data.PAD)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        return loss.item()
    """,
    ),
    # ---- 08.my_greedy_decode
    _c(
        "08-046",
        "08.my_greedy_decode",
        "takes the argmax of the first step's logits every time (logits[:, 0])",
        "wrong-step",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        dec = torch.full((src.shape[0], 1), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, 0].argmax(-1).masked_fill(done, data.PAD)
            out.append(nxt)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], dim=1)
            if done.all():
                break
        return torch.stack(out, 1)
    """,
    ),
    _c(
        "08-047",
        "08.my_greedy_decode",
        "keeps writing after EOS (no PAD)",
        "no-pad-after-eos",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        dec = torch.full((src.shape[0], 1), data.BOS, dtype=torch.long)
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(-1)
            dec = torch.cat([dec, nxt.unsqueeze(1)], dim=1)
            if (dec == data.EOS).any(dim=1).all():
                break
        return dec[:, 1:]
    """,
    ),
    _c(
        "08-048",
        "08.my_greedy_decode",
        "stops when the first row writes EOS",
        "any-not-all",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        dec = torch.full((src.shape[0], 1), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(-1).masked_fill(done, data.PAD)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], 1)
            if done.any():
                break
        return dec[:, 1:]
    """,
    ),
    _c(
        "08-049",
        "08.my_greedy_decode",
        "returns the decoder input, BOS included",
        "includes-bos",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        dec = torch.full((src.shape[0], 1), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(-1).masked_fill(done, data.PAD)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], 1)
            if done.all():
                break
        return dec
    """,
    ),
    _c(
        "08-050",
        "08.my_greedy_decode",
        "range(max_steps - 1): one step too few",
        "off-by-one",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        dec = torch.full((src.shape[0], 1), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_steps - 1):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(-1).masked_fill(done, data.PAD)
            done |= nxt == data.EOS
            dec = torch.cat([dec, nxt[:, None]], 1)
            if done.all():
                break
        return dec[:, 1:]
    """,
    ),
    _c(
        "08-051",
        "08.my_greedy_decode",
        "marks a row finished before writing, so its EOS is replaced by PAD",
        "eos-dropped",
        """
    def my_greedy_decode(model, src, src_lengths, max_steps):
        dec = torch.full((src.shape[0], 1), data.BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_steps):
            nxt = model(src, src_lengths, dec)[:, -1].argmax(-1)
            done = done | (nxt == data.EOS)
            nxt = torch.where(done, torch.full_like(nxt, data.PAD), nxt)
            dec = torch.cat([dec, nxt[:, None]], 1)
            if done.all():
                break
        return dec[:, 1:]
    """,
    ),
    # ---- 08.transformer_parameters
    _c(
        "08-052",
        "08.transformer_parameters",
        "forgets the LayerNorms",
        "missing-norms",
        """
    def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
        attn = 4 * d_model * d_model + 4 * d_model
        ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
        return 2 * vocab * d_model + num_layers * (attn + ffn) + num_layers * (2 * attn + ffn) + d_model * vocab + vocab
    """,
    ),
    _c(
        "08-053",
        "08.transformer_parameters",
        "one parameter vector per LayerNorm (forgets its bias)",
        "norm-size",
        """
    def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
        attn = 4 * (d_model * d_model + d_model)
        ffn = 2 * d_model * d_ff + d_ff + d_model
        enc = 2 * d_model + attn + ffn
        dec = 3 * d_model + 2 * attn + ffn
        return 2 * vocab * d_model + num_layers * (enc + dec) + 2 * d_model + d_model * vocab + vocab
    """,
    ),
    _c(
        "08-054",
        "08.transformer_parameters",
        "decoder layers with one attention (forgets the cross-attention)",
        "missing-cross",
        """
    def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
        attn = 4 * (d_model * d_model + d_model)
        ffn = 2 * d_model * d_ff + d_ff + d_model
        enc = 4 * d_model + attn + ffn
        dec = 6 * d_model + attn + ffn
        return 2 * vocab * d_model + num_layers * (enc + dec) + 4 * d_model + d_model * vocab + vocab
    """,
    ),
    _c(
        "08-055",
        "08.transformer_parameters",
        "attention parameters multiplied by the number of heads",
        "per-head-matrices",
        """
    def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
        attn = num_heads * 4 * (d_model * d_model + d_model)
        ffn = 2 * d_model * d_ff + d_ff + d_model
        enc = 4 * d_model + attn + ffn
        dec = 6 * d_model + 2 * attn + ffn
        return 2 * vocab * d_model + num_layers * (enc + dec) + 4 * d_model + d_model * vocab + vocab
    """,
    ),
    _c(
        "08-056",
        "08.transformer_parameters",
        "one shared embedding table",
        "shared-embedding",
        """
    def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
        attn = 4 * (d_model * d_model + d_model)
        ffn = 2 * d_model * d_ff + d_ff + d_model
        enc = 4 * d_model + attn + ffn
        dec = 6 * d_model + 2 * attn + ffn
        return vocab * d_model + num_layers * (enc + dec) + 4 * d_model + d_model * vocab + vocab
    """,
    ),
    _c(
        "08-057",
        "08.transformer_parameters",
        "forgets the out_proj bias",
        "missing-bias",
        """
    def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
        attn = 4 * (d_model * d_model + d_model)
        ffn = 2 * d_model * d_ff + d_ff + d_model
        enc = 4 * d_model + attn + ffn
        dec = 6 * d_model + 2 * attn + ffn
        return 2 * vocab * d_model + num_layers * (enc + dec) + 4 * d_model + d_model * vocab
    """,
    ),
    _c(
        "08-058",
        "08.transformer_parameters",
        "forgets the two final LayerNorms",
        "missing-norms",
        """
    def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
        attn = 4 * (d_model * d_model + d_model)
        ffn = 2 * d_model * d_ff + d_ff + d_model
        enc = 4 * d_model + attn + ffn
        dec = 6 * d_model + 2 * attn + ffn
        return 2 * vocab * d_model + num_layers * (enc + dec) + d_model * vocab + vocab
    """,
    ),
    # ---- 08.teacher_forced_token_accuracy
    _c(
        "08-059",
        "08.teacher_forced_token_accuracy",
        "counts the PAD positions",
        "counts-padding",
        """
    def teacher_forced_token_accuracy(model, batch):
        model.eval()
        with torch.no_grad():
            logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        return (logits.argmax(-1) == batch.target).float().mean().item()
    """,
    ),
    _c(
        "08-060",
        "08.teacher_forced_token_accuracy",
        "compares with the decoder input (off by one step)",
        "wrong-target",
        """
    def teacher_forced_token_accuracy(model, batch):
        model.eval()
        with torch.no_grad():
            pred = model(batch.src, batch.src_lengths, batch.decoder_input).argmax(-1)
        real = batch.target != data.PAD
        return float(((pred == batch.decoder_input) & real).sum() / real.sum())
    """,
    ),
    _c(
        "08-061",
        "08.teacher_forced_token_accuracy",
        "returns a 0-d tensor",
        "return-type",
        """
    def teacher_forced_token_accuracy(model, batch):
        model.eval()
        with torch.no_grad():
            pred = model(batch.src, batch.src_lengths, batch.decoder_input).argmax(-1)
        real = batch.target != data.PAD
        return ((pred == batch.target) & real).sum() / real.sum()
    """,
    ),
    _c(
        "08-062",
        "08.teacher_forced_token_accuracy",
        "argmax over dim 1 (the steps)",
        "wrong-axis",
        """
    def teacher_forced_token_accuracy(model, batch):
        model.eval()
        with torch.no_grad():
            logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        pred = logits.argmax(dim=1)[:, : batch.target.shape[1]]
        real = batch.target[:, : pred.shape[1]] != data.PAD
        return float(((pred == batch.target[:, : pred.shape[1]]) & real).sum()) / float(real.sum())
    """,
    ),
    _c(
        "08-063",
        "08.teacher_forced_token_accuracy",
        "averages the per-sequence accuracies (short sequences weigh as much as long ones)",
        "macro-mean",
        """
    def teacher_forced_token_accuracy(model, batch):
        model.eval()
        with torch.no_grad():
            pred = model(batch.src, batch.src_lengths, batch.decoder_input).argmax(-1)
        real = batch.target != data.PAD
        per_row = ((pred == batch.target) & real).sum(1).float() / real.sum(1).float()
        return per_row.mean().item()
    """,
    ),
    # ---- predictions
    _p("08-p01", "08.layernorm_scaled_row", "thinks a row ten times larger stays ten times larger", "layernorm", False),
    _p("08-p02", "08.later_inputs_move", "thinks every step reads every input", "causal", {0, 1, 2, 3, 4, 5, 6, 7}),
    _p("08-p03", "08.later_inputs_move", "thinks step 4 only reads inputs before it", "off-by-one", {5, 6, 7}),
    _p("08-p04", "08.clipped_norm", "thinks clipping leaves a norm above the limit", "clipping", 50.0),
    _p("08-p05", "08.clipped_norm", "divides by the norm twice", "clipping", 0.02),
    _p("08-p06", "08.shuffled_source", "thinks the encoder sees the order anyway", "positions", "completely"),
    _p("08-p07", "08.long_run_enough", "thinks a longer run fixes length generalisation", "extrapolation", True),
]
