"""Blind battery, lesson 08 (a Transformer for reversal): wrong answers and wrong predictions."""

HEAD = '''import math

import torch
import torch.nn.functional as F
from torch import nn

from course_utils import attention, data, masks
'''


def _positions(body):
    return HEAD + '''

def my_positions(num_positions, d_model):
''' + body


def _masks(body):
    return HEAD + '''

def my_decoder_masks(src_lengths, src_len, tgt_len):
''' + body


ENC_INIT = '''
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
'''


def _encoder(forward_body, init_body=ENC_INIT):
    return HEAD + '''

class EncoderLayer(nn.Module):
    """Pre-norm encoder layer: x = x + SelfAttention(LN(x)), then x = x + FFN(LN(x))."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
''' + init_body + '''
    def forward(self, x, mask):
''' + forward_body


DEC_INIT = '''
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.cross_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
'''


def _decoder(forward_body, init_body=DEC_INIT):
    return HEAD + '''

class DecoderLayer(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention to the encoder output, feed-forward."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
''' + init_body + '''
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
''' + forward_body


def _train(body):
    return HEAD + '''

def my_train_step(model, optimizer, batch):
''' + body


def _greedy(body):
    return HEAD + '''

def my_greedy_decode(model, src, src_lengths, max_steps):
    batch = src.shape[0]
''' + body


def _count(body):
    return HEAD + '''

def transformer_parameters(vocab, d_model, num_heads, d_ff, num_layers):
''' + body


def _forced(body):
    return HEAD + '''

def teacher_forced_token_accuracy(model, batch):
''' + body


GOOD_DEC_TAIL = '''        h = self.norm2(x)
        out, weights = self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''

GOOD_DEC_HEAD = '''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask, need_weights=False)[0]
'''

GOOD_COUNT_PARTS = '''    attn = 4 * d_model * d_model + 4 * d_model
    norm = 2 * d_model
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
'''

CASES = [
    # ---- 08.my_positions ----------------------------------------------------------------------------
    {
        "id": "08-001",
        "exercise": "08.my_positions",
        "mistake": "exponent i / d_model with i the pair index (forgets the factor 2): frequencies fall twice too slowly",
        "kind": "wrong_formula",
        "source": _positions('''    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    i = torch.arange(d_model // 2, dtype=torch.float32)
    angle = position / 10000 ** (i / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
'''),
    },
    {
        "id": "08-002",
        "exercise": "08.my_positions",
        "mistake": "cos in the even columns and sin in the odd ones",
        "kind": "swapped_columns",
        "source": _positions('''    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    angle = position / 10000 ** (two_i / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.cos(angle)
    pe[:, 1::2] = torch.sin(angle)
    return pe
'''),
    },
    {
        "id": "08-003",
        "exercise": "08.my_positions",
        "mistake": "all sines in the first half and all cosines in the second (concatenated, not interleaved)",
        "kind": "layout",
        "source": _positions('''    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    angle = position / 10000 ** (two_i / d_model)
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)
'''),
    },
    {
        "id": "08-004",
        "exercise": "08.my_positions",
        "mistake": "built in float64 (torch.arange of Python floats with dtype=float64), returned without casting",
        "kind": "dtype",
        "source": _positions('''    position = torch.arange(num_positions, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = position / 10000 ** (two_i / d_model)
    pe = torch.zeros(num_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
'''),
    },
    {
        "id": "08-005",
        "exercise": "08.my_positions",
        "mistake": "positions counted from 1 (arange(1, num_positions + 1))",
        "kind": "off_by_one",
        "source": _positions('''    position = torch.arange(1, num_positions + 1, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    angle = position / 10000 ** (two_i / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
'''),
    },
    {
        "id": "08-006",
        "exercise": "08.my_positions",
        "mistake": "multiplies the position by 10000^(2i/d) instead of dividing",
        "kind": "inverse",
        "source": _positions('''    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)
    angle = position * 10000 ** (two_i / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
'''),
    },
    {
        "id": "08-007",
        "exercise": "08.my_positions",
        "mistake": "uses the column index itself in the exponent (2 * column / d_model) for both columns of a pair",
        "kind": "wrong_formula",
        "source": _positions('''    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    column = torch.arange(d_model, dtype=torch.float32)
    angle = position / 10000 ** (2 * column / d_model)
    pe = torch.where(column.long() % 2 == 0, torch.sin(angle), torch.cos(angle))
    return pe
'''),
    },
    # ---- 08.my_decoder_masks ------------------------------------------------------------------------
    {
        "id": "08-008",
        "exercise": "08.my_decoder_masks",
        "mistake": "self mask from triu: every step reads the future",
        "kind": "triangle",
        "source": _masks('''    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).triu()[None, None]
    cross_mask = (torch.arange(src_len)[None, :] < src_lengths[:, None])[:, None, None, :]
    return self_mask, cross_mask
'''),
    },
    {
        "id": "08-009",
        "exercise": "08.my_decoder_masks",
        "mistake": "cross mask returned as (batch, src_len), without the heads and query axes",
        "kind": "mask_shape",
        "source": _masks('''    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()[None, None]
    cross_mask = torch.arange(src_len)[None, :] < src_lengths[:, None]
    return self_mask, cross_mask
'''),
    },
    {
        "id": "08-010",
        "exercise": "08.my_decoder_masks",
        "mistake": "self mask tril(-1): a step may not read its own input, and step 0 reads nothing",
        "kind": "diagonal_offset",
        "source": _masks('''    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril(-1)[None, None]
    cross_mask = (torch.arange(src_len)[None, :] < src_lengths[:, None])[:, None, None, :]
    return self_mask, cross_mask
'''),
    },
    {
        "id": "08-011",
        "exercise": "08.my_decoder_masks",
        "mistake": "cross mask polarity flipped (True at the padding, PyTorch's key_padding_mask convention)",
        "kind": "mask_polarity",
        "source": _masks('''    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()[None, None]
    cross_mask = (torch.arange(src_len)[None, :] >= src_lengths[:, None])[:, None, None, :]
    return self_mask, cross_mask
'''),
    },
    {
        "id": "08-012",
        "exercise": "08.my_decoder_masks",
        "mistake": "cross mask with <= src_lengths: the first padding position counts as real (off by one)",
        "kind": "off_by_one",
        "source": _masks('''    self_mask = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()[None, None]
    cross_mask = (torch.arange(src_len)[None, :] <= src_lengths[:, None])[:, None, None, :]
    return self_mask, cross_mask
'''),
    },
    {
        "id": "08-013",
        "exercise": "08.my_decoder_masks",
        "mistake": "self mask left 2-D (tgt_len, tgt_len), without the two leading axes the docstring asks for",
        "kind": "mask_shape",
        "source": _masks('''    self_mask = masks.make_causal_mask(tgt_len)
    cross_mask = masks.padding_to_attention_mask(masks.make_padding_mask(src_lengths, src_len))
    return self_mask, cross_mask
'''),
    },
    # ---- 08.encoder_layer ---------------------------------------------------------------------------
    {
        "id": "08-014",
        "exercise": "08.encoder_layer",
        "mistake": "post-norm (LayerNorm after the residual sum) where pre-norm is asked",
        "kind": "post_norm",
        "source": _encoder('''        x = self.norm1(x + self.self_attn(x, x, x, mask=mask, need_weights=False)[0])
        return self.norm2(x + self.ffn(x))
'''),
    },
    {
        "id": "08-015",
        "exercise": "08.encoder_layer",
        "mistake": "adds the residual to the normalized copy (h + attn(h)) instead of to x",
        "kind": "residual_on_normed",
        "source": _encoder('''        h = self.norm1(x)
        x = h + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        h = self.norm2(x)
        return h + self.ffn(h)
'''),
    },
    {
        "id": "08-016",
        "exercise": "08.encoder_layer",
        "mistake": "forgets the residual around the feed-forward network",
        "kind": "missing_residual",
        "source": _encoder('''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return self.ffn(self.norm2(x))
'''),
    },
    {
        "id": "08-017",
        "exercise": "08.encoder_layer",
        "mistake": "never passes the padding mask to the self-attention",
        "kind": "mask_ignored",
        "source": _encoder('''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
'''),
    },
    {
        "id": "08-018",
        "exercise": "08.encoder_layer",
        "mistake": "copy-paste slip: norm1 before the feed-forward too (norm2 defined but unused)",
        "kind": "copy_paste",
        "source": _encoder('''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm1(x))
'''),
    },
    {
        "id": "08-019",
        "exercise": "08.encoder_layer",
        "mistake": "F.dropout(..., 0.1) on the attention output without training=self.training: active in eval mode",
        "kind": "dropout_in_eval",
        "source": _encoder('''        h = self.norm1(x)
        x = x + F.dropout(self.self_attn(h, h, h, mask=mask, need_weights=False)[0], 0.1)
        return x + self.ffn(self.norm2(x))
'''),
    },
    {
        "id": "08-020",
        "exercise": "08.encoder_layer",
        "mistake": "queries from the normalized copy, keys and values from the raw x",
        "kind": "norm_placement",
        "source": _encoder('''        h = self.norm1(x)
        x = x + self.self_attn(h, x, x, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
'''),
    },
    {
        "id": "08-021",
        "exercise": "08.encoder_layer",
        "mistake": "GELU instead of the ReLU the docstring names (same parameter names, different function)",
        "kind": "activation",
        "source": _encoder('''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))
''', init_body=ENC_INIT.replace("nn.ReLU()", "nn.GELU()")),
    },
    {
        "id": "08-022",
        "exercise": "08.encoder_layer",
        "mistake": "residual added in place (x += ...): the caller's input tensor is changed",
        "kind": "in_place",
        "source": _encoder('''        h = self.norm1(x)
        x += self.self_attn(h, h, h, mask=mask, need_weights=False)[0]
        x += self.ffn(self.norm2(x))
        return x
'''),
    },
    # ---- 08.decoder_layer ---------------------------------------------------------------------------
    {
        "id": "08-023",
        "exercise": "08.decoder_layer",
        "mistake": "never passes self_mask: the decoder's self-attention reads later steps",
        "kind": "mask_ignored",
        "source": _decoder('''        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
''' + GOOD_DEC_TAIL),
    },
    {
        "id": "08-024",
        "exercise": "08.decoder_layer",
        "mistake": "cross-attention takes its keys and values from the decoder (h) instead of memory",
        "kind": "wrong_operand",
        "source": _decoder(GOOD_DEC_HEAD + '''        h = self.norm2(x)
        out, weights = self.cross_attn(h, h, h, mask=self_mask, need_weights=need_weights)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    },
    {
        "id": "08-025",
        "exercise": "08.decoder_layer",
        "mistake": "normalizes memory again with norm2 before the cross-attention (memory is already normalized by the encoder)",
        "kind": "norm_placement",
        "source": _decoder(GOOD_DEC_HEAD + '''        h = self.norm2(x)
        m = self.norm2(memory)
        out, weights = self.cross_attn(h, m, m, mask=cross_mask, need_weights=need_weights)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    },
    {
        "id": "08-026",
        "exercise": "08.decoder_layer",
        "mistake": "always returns the weights, even when need_weights is False",
        "kind": "ignores_argument",
        "source": _decoder(GOOD_DEC_HEAD + '''        h = self.norm2(x)
        out, weights = self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=True)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    },
    {
        "id": "08-027",
        "exercise": "08.decoder_layer",
        "mistake": "returns the self-attention's weights instead of the cross-attention's",
        "kind": "wrong_weights",
        "source": _decoder('''        h = self.norm1(x)
        out, weights = self.self_attn(h, h, h, mask=self_mask, need_weights=need_weights)
        x = x + out
        h = self.norm2(x)
        x = x + self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=False)[0]
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    },
    {
        "id": "08-028",
        "exercise": "08.decoder_layer",
        "mistake": "no residual around the cross-attention (x = cross_attn(...))",
        "kind": "missing_residual",
        "source": _decoder(GOOD_DEC_HEAD + '''        h = self.norm2(x)
        x, weights = self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    },
    {
        "id": "08-029",
        "exercise": "08.decoder_layer",
        "mistake": "post-norm: LayerNorm after each residual sum",
        "kind": "post_norm",
        "source": _decoder('''        x = self.norm1(x + self.self_attn(x, x, x, mask=self_mask, need_weights=False)[0])
        out, weights = self.cross_attn(x, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = self.norm2(x + out)
        return self.norm3(x + self.ffn(x)), weights
'''),
    },
    {
        "id": "08-030",
        "exercise": "08.decoder_layer",
        "mistake": "copy-paste slip: the feed-forward reads norm2(x) instead of norm3(x)",
        "kind": "copy_paste",
        "source": _decoder(GOOD_DEC_HEAD + '''        h = self.norm2(x)
        out, weights = self.cross_attn(h, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        x = x + self.ffn(self.norm2(x))
        return x, weights
'''),
    },
    {
        "id": "08-031",
        "exercise": "08.decoder_layer",
        "mistake": "cross-attention without cross_mask: the decoder reads the source padding",
        "kind": "mask_ignored",
        "source": _decoder(GOOD_DEC_HEAD + '''        h = self.norm2(x)
        out, weights = self.cross_attn(h, memory, memory, need_weights=need_weights)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    },
    {
        "id": "08-032",
        "exercise": "08.decoder_layer",
        "mistake": "the queries of the cross-attention are the un-normalized x (norm2 applied to nothing)",
        "kind": "norm_placement",
        "source": _decoder(GOOD_DEC_HEAD + '''        out, weights = self.cross_attn(x, memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        x = x + self.ffn(self.norm3(x))
        return x, weights
'''),
    },
    # ---- 08.my_train_step ---------------------------------------------------------------------------
    {
        "id": "08-033",
        "exercise": "08.my_train_step",
        "mistake": "cross-entropy without ignore_index=PAD: padded targets count in the loss",
        "kind": "counts_padding",
        "source": _train('''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "08-034",
        "exercise": "08.my_train_step",
        "mistake": "never clears the old gradients (no zero_grad)",
        "kind": "stale_gradients",
        "source": _train('''    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "08-035",
        "exercise": "08.my_train_step",
        "mistake": "clips after optimizer.step(): the step used the unclipped gradient",
        "kind": "clip_order",
        "source": _train('''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    return loss.item()
'''),
    },
    {
        "id": "08-036",
        "exercise": "08.my_train_step",
        "mistake": "forgets the gradient clipping",
        "kind": "missing_clip",
        "source": _train('''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "08-037",
        "exercise": "08.my_train_step",
        "mistake": "clip_grad_value_(..., 1.0) (clips each entry) instead of clipping the total norm",
        "kind": "wrong_clip",
        "source": _train('''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "08-038",
        "exercise": "08.my_train_step",
        "mistake": "zero_grad after backward and before clipping: the step sees zero gradients",
        "kind": "zero_grad_order",
        "source": _train('''    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    optimizer.zero_grad()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "08-039",
        "exercise": "08.my_train_step",
        "mistake": "adds label smoothing 0.1, which the task does not ask for",
        "kind": "unasked_change",
        "source": _train('''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD,
                           label_smoothing=0.1)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    },
    {
        "id": "08-040",
        "exercise": "08.my_train_step",
        "mistake": "returns the loss tensor instead of a float",
        "kind": "wrong_type",
        "source": _train('''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss
'''),
    },
    {
        "id": "08-041",
        "exercise": "08.my_train_step",
        "mistake": "trains on decoder_input as the target (the lesson 07 leak: predicts the token it reads)",
        "kind": "teacher_forcing_leak",
        "source": _train('''    optimizer.zero_grad()
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.decoder_input.reshape(-1), ignore_index=data.PAD)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
'''),
    },
    # ---- 08.my_greedy_decode ------------------------------------------------------------------------
    {
        "id": "08-042",
        "exercise": "08.my_greedy_decode",
        "mistake": "takes the argmax of the FIRST step's logits (logits[:, 0]) instead of the last",
        "kind": "wrong_step",
        "source": _greedy('''    decoder_input = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits = model(src, src_lengths, decoder_input)
        nxt = torch.where(done, torch.full((batch,), data.PAD), logits[:, 0].argmax(dim=-1))
        out.append(nxt)
        done |= nxt == data.EOS
        decoder_input = torch.cat([decoder_input, nxt[:, None]], dim=1)
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "08-043",
        "exercise": "08.my_greedy_decode",
        "mistake": "feeds only the last token instead of the whole prefix (RNN habit): the Transformer forgets its history",
        "kind": "no_prefix",
        "source": _greedy('''    tokens = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits = model(src, src_lengths, tokens)
        nxt = torch.where(done, torch.full((batch,), data.PAD), logits[:, -1].argmax(dim=-1))
        out.append(nxt)
        done |= nxt == data.EOS
        tokens = nxt[:, None]
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "08-044",
        "exercise": "08.my_greedy_decode",
        "mistake": "never writes PAD after a row's EOS",
        "kind": "no_pad_after_eos",
        "source": _greedy('''    decoder_input = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps):
        logits = model(src, src_lengths, decoder_input)
        nxt = logits[:, -1].argmax(dim=-1)
        out.append(nxt)
        done |= nxt == data.EOS
        decoder_input = torch.cat([decoder_input, nxt[:, None]], dim=1)
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "08-045",
        "exercise": "08.my_greedy_decode",
        "mistake": "returns the decoder input, BOS included, instead of the outputs",
        "kind": "includes_bos",
        "source": _greedy('''    decoder_input = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    for _ in range(max_steps):
        logits = model(src, src_lengths, decoder_input)
        nxt = torch.where(done, torch.full((batch,), data.PAD), logits[:, -1].argmax(dim=-1))
        done |= nxt == data.EOS
        decoder_input = torch.cat([decoder_input, nxt[:, None]], dim=1)
        if done.all():
            break
    return decoder_input
'''),
    },
    {
        "id": "08-046",
        "exercise": "08.my_greedy_decode",
        "mistake": "stops as soon as any row has emitted EOS",
        "kind": "early_stop",
        "source": _greedy('''    decoder_input = torch.full((batch, 1), data.BOS, dtype=torch.long)
    out = []
    for _ in range(max_steps):
        logits = model(src, src_lengths, decoder_input)
        nxt = logits[:, -1].argmax(dim=-1)
        out.append(nxt)
        decoder_input = torch.cat([decoder_input, nxt[:, None]], dim=1)
        if (nxt == data.EOS).any():
            break
    return torch.stack(out, dim=1)
'''),
    },
    {
        "id": "08-047",
        "exercise": "08.my_greedy_decode",
        "mistake": "runs range(max_steps - 1): one step short",
        "kind": "off_by_one",
        "source": _greedy('''    decoder_input = torch.full((batch, 1), data.BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    out = []
    for _ in range(max_steps - 1):
        logits = model(src, src_lengths, decoder_input)
        nxt = torch.where(done, torch.full((batch,), data.PAD), logits[:, -1].argmax(dim=-1))
        out.append(nxt)
        done |= nxt == data.EOS
        decoder_input = torch.cat([decoder_input, nxt[:, None]], dim=1)
        if done.all():
            break
    return torch.stack(out, dim=1)
'''),
    },
    # ---- 08.transformer_parameters ------------------------------------------------------------------
    {
        "id": "08-048",
        "exercise": "08.transformer_parameters",
        "mistake": "forgets the LayerNorms (their weight and bias)",
        "kind": "missing_term",
        "source": _count(GOOD_COUNT_PARTS + '''    encoder = attn + ffn
    decoder = 2 * attn + ffn
    return 2 * vocab * d_model + num_layers * (encoder + decoder) + d_model * vocab + vocab
'''),
    },
    {
        "id": "08-049",
        "exercise": "08.transformer_parameters",
        "mistake": "one attention block per decoder layer (forgets the cross-attention)",
        "kind": "missing_term",
        "source": _count(GOOD_COUNT_PARTS + '''    encoder = attn + ffn + 2 * norm
    decoder = attn + ffn + 3 * norm
    return 2 * vocab * d_model + num_layers * (encoder + decoder) + 2 * norm + d_model * vocab + vocab
'''),
    },
    {
        "id": "08-050",
        "exercise": "08.transformer_parameters",
        "mistake": "one shared embedding table instead of two",
        "kind": "missing_term",
        "source": _count(GOOD_COUNT_PARTS + '''    encoder = attn + ffn + 2 * norm
    decoder = 2 * attn + ffn + 3 * norm
    return vocab * d_model + num_layers * (encoder + decoder) + 2 * norm + d_model * vocab + vocab
'''),
    },
    {
        "id": "08-051",
        "exercise": "08.transformer_parameters",
        "mistake": "counts the attention matrices once per head",
        "kind": "per_head_count",
        "source": _count(GOOD_COUNT_PARTS.replace("attn = 4", "attn = num_heads * 4") + '''    encoder = attn + ffn + 2 * norm
    decoder = 2 * attn + ffn + 3 * norm
    return 2 * vocab * d_model + num_layers * (encoder + decoder) + 2 * norm + d_model * vocab + vocab
'''),
    },
    {
        "id": "08-052",
        "exercise": "08.transformer_parameters",
        "mistake": "forgets the biases of the attention projections and of out_proj",
        "kind": "missing_bias",
        "source": _count(GOOD_COUNT_PARTS.replace(" + 4 * d_model", "") + '''    encoder = attn + ffn + 2 * norm
    decoder = 2 * attn + ffn + 3 * norm
    return 2 * vocab * d_model + num_layers * (encoder + decoder) + 2 * norm + d_model * vocab
'''),
    },
    {
        "id": "08-053",
        "exercise": "08.transformer_parameters",
        "mistake": "forgets the two final LayerNorms (encoder_norm, decoder_norm)",
        "kind": "missing_term",
        "source": _count(GOOD_COUNT_PARTS + '''    encoder = attn + ffn + 2 * norm
    decoder = 2 * attn + ffn + 3 * norm
    return 2 * vocab * d_model + num_layers * (encoder + decoder) + d_model * vocab + vocab
'''),
    },
    # ---- 08.teacher_forced_token_accuracy -----------------------------------------------------------
    {
        "id": "08-054",
        "exercise": "08.teacher_forced_token_accuracy",
        "mistake": "averages over every target position, PAD included",
        "kind": "counts_padding",
        "source": _forced('''    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    return float((logits.argmax(dim=-1) == batch.target).float().mean())
'''),
    },
    {
        "id": "08-055",
        "exercise": "08.teacher_forced_token_accuracy",
        "mistake": "returns a 0-d tensor instead of a float",
        "kind": "wrong_type",
        "source": _forced('''    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != data.PAD
    return ((logits.argmax(dim=-1) == batch.target) & real).sum() / real.sum()
'''),
    },
    {
        "id": "08-056",
        "exercise": "08.teacher_forced_token_accuracy",
        "mistake": "compares the predictions with decoder_input instead of target",
        "kind": "teacher_forcing_leak",
        "source": _forced('''    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.decoder_input != data.PAD
    return float(((logits.argmax(dim=-1) == batch.decoder_input) & real).sum() / real.sum())
'''),
    },
    {
        "id": "08-057",
        "exercise": "08.teacher_forced_token_accuracy",
        "mistake": "mean of per-sequence accuracies instead of the share of all real tokens",
        "kind": "mean_of_means",
        "source": _forced('''    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    real = batch.target != data.PAD
    hits = ((logits.argmax(dim=-1) == batch.target) & real).sum(dim=1).float()
    return float((hits / real.sum(dim=1)).mean())
'''),
    },
    {
        "id": "08-058",
        "exercise": "08.teacher_forced_token_accuracy",
        "mistake": "decodes free-running (feeds its own argmax) instead of feeding the true decoder input",
        "kind": "free_running",
        "source": _forced('''    model.eval()
    tokens = batch.decoder_input[:, :1]
    with torch.no_grad():
        for _ in range(batch.target.shape[1]):
            logits = model(batch.src, batch.src_lengths, tokens)
            tokens = torch.cat([tokens, logits[:, -1:].argmax(dim=-1)], dim=1)
    predicted = tokens[:, 1:]
    real = batch.target != data.PAD
    return float(((predicted == batch.target) & real).sum() / real.sum())
'''),
    },
    # ---- predictions ---------------------------------------------------------------------------------
    {"id": "08-p01", "prediction": "08.layernorm_scaled_row", "mistake": "a row ten times larger stays ten times larger", "kind": "layernorm", "value": False},
    {"id": "08-p02", "prediction": "08.later_inputs_move", "mistake": "every step moves: attention sees the whole sequence", "kind": "causal", "value": {0, 1, 2, 3, 4, 5, 6, 7}},
    {"id": "08-p03", "prediction": "08.later_inputs_move", "mistake": "step 4 reads only earlier inputs, so only 5 and later move", "kind": "diagonal_offset", "value": {5, 6, 7}},
    {"id": "08-p04", "prediction": "08.clipped_norm", "mistake": "clipping caps each entry at 1, so the norm becomes sqrt(2)", "kind": "clip_semantics", "value": 1.4142},
    {"id": "08-p05", "prediction": "08.clipped_norm", "mistake": "clip_grad_norm_ only reports the norm, it does not change it", "kind": "clip_semantics", "value": 50.0},
    {"id": "08-p06", "prediction": "08.decoder_self_attention", "mistake": "cross-attention looks wide because the source is longer", "kind": "attention_spread", "value": "cross-attention"},
    {"id": "08-p07", "prediction": "08.shuffled_source", "mistake": "shuffling the input must change the output completely", "kind": "order_matters", "value": "completely"},
    {"id": "08-p08", "prediction": "08.shuffled_source", "mistake": "the decoder's own positions give it some order", "kind": "order_matters", "value": "a little"},
    {"id": "08-p09", "prediction": "08.length_14", "mistake": "the Transformer generalizes better because it sees all positions at once", "kind": "length_generalization", "value": "transformer"},
    {"id": "08-p10", "prediction": "08.long_run_enough", "mistake": "more training fixes length generalization", "kind": "length_generalization", "value": True},
]
