"""Lesson 08's exercises on the model's parts: the decoder's masks (``08.my_decoder_masks``), the positions
(``08.my_positions``), the encoder and decoder layers (``08.encoder_layer``, ``08.decoder_layer``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``. ``_GREEDY`` is now ``GREEDY_SECTION``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from course_utils import attention
from course_utils.checking.cases import run_module, torch_seeded
from course_utils.checking.model import Case, Exercise
from course_utils.reversal import transformer

__all__ = [
    "MY_DECODER_MASKS",
    "MY_POSITIONS",
    "ENCODER_LAYER",
    "run_layer",
    "DECODER_LAYER",
]

# As in lesson_04.py: `nn` assigned, not imported, so a reference's methods compile like the stub's.
nn = torch.nn

GREEDY_SECTION = "08 · Greedy decoding, by hand"


# ---- 08.my_decoder_masks(src_lengths, src_len, tgt_len) -> (self_mask, cross_mask) -----------------------
def decoder_masks_cases():
    return [
        Case((torch.tensor([3, 5]), 5, 4)),
        Case((torch.tensor([1]), 4, 1), "one sequence, one target step"),
        Case((torch.tensor([2, 6, 4]), 6, 7)),
        Case((torch.tensor([4, 1, 2]), 5, 6), "no row fills the padded width"),
    ]


def my_decoder_masks(src_lengths, src_len, tgt_len):
    return transformer.make_decoder_masks(src_lengths, src_len, tgt_len)


def decoder_masks_tril(src_lengths, src_len, tgt_len):
    causal = torch.tril(torch.ones(tgt_len, tgt_len, dtype=torch.bool))  # (tgt_len, tgt_len)
    real = torch.arange(src_len)[None, :] < src_lengths[:, None]  # (batch, src_len)
    return causal[None, None], real[:, None, None, :]  # (1, 1, tgt_len, tgt_len), (batch, 1, 1, src_len)


def decoder_masks_positions(src_lengths, src_len, tgt_len):
    steps = torch.arange(tgt_len)
    self_mask = (steps[None, :] <= steps[:, None]).view(1, 1, tgt_len, tgt_len)
    cross_mask = (torch.arange(src_len) < src_lengths.unsqueeze(-1)).view(len(src_lengths), 1, 1, src_len)
    return self_mask, cross_mask


MY_DECODER_MASKS = Exercise(
    id="08.my_decoder_masks",
    fresh=lambda batch, src_len, tgt_len: [
        (torch.tensor([1 + (3 * i) % src_len for i in range(batch)]), src_len, tgt_len)
    ],
    section="08 · The decoder's masks",
    make_cases=decoder_masks_cases,
    reference=my_decoder_masks,
    variants=(decoder_masks_tril, decoder_masks_positions),
    hints=(
        "The decoder attends twice: over its own inputs, and over the encoder's outputs. What must each of the two "
        "masks hide?",
        "Self-attention: a causal mask over the target steps. Cross-attention: a padding mask over the source "
        "positions, from src_lengths. Both 4-D, so they broadcast against (batch, heads, q_len, k_len) scores.",
        "The causal mask needs no batch: (1, 1, tgt_len, tgt_len). The padding mask has one row per sequence and "
        "is the same for every head and step: (batch, 1, 1, src_len).",
    ),
    output_names=("self_mask", "cross_mask"),
)


# ---- 08.my_positions(num_positions, d_model) -> (num_positions, d_model) -------------------------------------
def my_positions(num_positions, d_model):
    return transformer.sinusoidal_positions(num_positions, d_model)


def positions_vectorized(num_positions, d_model):
    positions = torch.arange(num_positions, dtype=torch.float32)[:, None]  # (num_positions, 1)
    inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)  # (d_model / 2,)
    angles = positions * inv_freq  # (num_positions, d_model / 2)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe


def positions_loop(num_positions, d_model):
    pe = torch.zeros(num_positions, d_model)
    for p in range(num_positions):
        for i in range(0, d_model, 2):
            angle = p / 10000 ** (i / d_model)
            pe[p, i] = math.sin(angle)
            pe[p, i + 1] = math.cos(angle)
    return pe


def _angles(num_positions, d_model):
    positions = torch.arange(num_positions, dtype=torch.float32)[:, None]  # (num_positions, 1)
    inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)  # (d_model / 2,)
    return positions * inv_freq  # (num_positions, d_model / 2)


def positions_sin_cos_swapped(num_positions, d_model):
    angles = _angles(num_positions, d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.cos(angles), torch.sin(angles)
    return pe


def positions_concatenated(num_positions, d_model):
    angles = _angles(num_positions, d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)  # (num_positions, d_model)


MY_POSITIONS = Exercise(
    id="08.my_positions",
    fresh=lambda num_positions, half: [(num_positions, 2 * half)],  # d_model is even
    section="08 · Positions: sinusoidal encodings",
    make_cases=lambda: [(2, 4), (24, 32), (100, 8)],
    reference=my_positions,
    variants=(positions_vectorized, positions_loop),
    buggy={"positions_sin_cos_swapped": positions_sin_cos_swapped, "positions_concatenated": positions_concatenated},
    hints=(
        "Each pair of columns (2i, 2i + 1) holds one frequency. What is the angle of position p at that frequency, "
        "and which function fills each column of the pair?",
        "The angle is p / 10000^(2i / d_model); sines go in the even columns, cosines in the odd ones. One table of "
        "angles, shape (num_positions, d_model / 2), serves both.",
        "A column of positions (num_positions, 1) times a row of frequencies (d_model / 2,) broadcasts to the angle "
        "table; pe[:, 0::2] and pe[:, 1::2] select the even and the odd columns.",
    ),
    atol=1e-5,
)


# ---- 08.encoder_layer: the class EncoderLayer (__init__, forward) ------------------------------------------------
_LAYERS = "08 · The encoder layer"
_DECODER = "08 · The decoder layer"
_MHA_FORWARD = "course_utils.attention:MultiHeadAttention.forward"


def run_layer(cls, course_module, init_args, inputs):
    """``cases.run_module`` for the two layer exercises; a function in place of the class that returns nothing gives
    None (the check then asks about ``return``), as lesson 04's class driver does."""
    if not isinstance(cls, type) and cls(*init_args) is None:
        return None
    return run_module(cls, course_module, init_args, inputs)


class EncoderLayer(transformer.EncoderLayer):
    """The course's encoder layer with the stub's constructor ``(d_model, num_heads, d_ff)``."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)


def _padded_source(batch, src_len, d_model, lengths):
    x = torch.randn(batch, src_len, d_model)  # (batch, src_len, d_model)
    mask = torch.arange(src_len)[None, :] < torch.tensor(lengths)[:, None]  # (batch, src_len)
    return x, mask[:, None, None, :]  # (batch, 1, 1, src_len), True = real token


def encoder_layer_cases():
    cases = []
    with torch_seeded(81):
        for d_model, heads, d_ff, lengths, src_len, label in (
            (8, 2, 12, [5, 1, 3], 6, "three sequences, none fills the padded width"),
            (12, 3, 20, [7, 4], 7, "one row of padding after a full row"),
        ):
            course = transformer.EncoderLayer(d_model, heads, d_ff).eval()
            with torch.no_grad():  # LayerNorms that are not the identity: a missing or misplaced norm shows
                for norm in (course.norm1, course.norm2):
                    norm.weight.uniform_(0.5, 1.5)
                    norm.bias.uniform_(-0.5, 0.5)
            x, mask = _padded_source(len(lengths), src_len, d_model, lengths)
            cases.append(Case((course, (d_model, heads, d_ff), (x, mask)), label))
    return cases


class EncoderLayerKeyMask(EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff):
        nn.Module.__init__(self)
        self.norm1 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask):
        h = self.norm1(x)
        attended, _weights = self.self_attn(h, h, h, key_mask=mask[:, 0, 0, :])  # (batch, src_len) key mask
        x = attended + x
        return self.ffn(self.norm2(x)) + x


class EncoderLayerFunctional(EncoderLayer):
    def __init__(self, d_model, num_heads, d_ff):
        nn.Module.__init__(self)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask):
        for norm, block in ((self.norm1, "attention"), (self.norm2, "ffn")):
            h = F.layer_norm(x, x.shape[-1:], norm.weight, norm.bias, norm.eps)
            x = x + (self.self_attn(h, h, h, mask)[0] if block == "attention" else self.ffn(h))
        return x


class EncoderLayerPostNorm(EncoderLayer):
    def forward(self, x, mask):
        x = self.norm1(x + self.self_attn(x, x, x, mask=mask)[0])  # post-norm: LN(x + f(x))
        return self.norm2(x + self.ffn(x))


class EncoderLayerResidualAfterNorm(EncoderLayer):
    def forward(self, x, mask):
        h = self.norm1(x)
        x = h + self.self_attn(h, h, h, mask=mask)[0]  # the residual starts from LN(x), not from x
        h = self.norm2(x)
        return h + self.ffn(h)


class EncoderLayerNoMask(EncoderLayer):
    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h)[0]  # padding is attended
        return x + self.ffn(self.norm2(x))


ENCODER_LAYER = Exercise(
    id="08.encoder_layer",
    function="EncoderLayer",
    section=_LAYERS,
    make_cases=encoder_layer_cases,
    reference=EncoderLayer,
    variants=(EncoderLayerKeyMask, EncoderLayerFunctional),
    buggy={
        "post_norm": EncoderLayerPostNorm,
        "residual_after_norm": EncoderLayerResidualAfterNorm,
        "encoder_padding_not_masked": EncoderLayerNoMask,
    },
    allowed=(_MHA_FORWARD,),
    driver=run_layer,
    atol=1e-5,
    noun="encoder layer",
    hints=(
        "Two sub-layers, each of the form x = x + f(LayerNorm(x)). What is f in each, and which mask does the "
        "self-attention need?",
        "First x + self_attn(h, h, h, mask=mask)[0] with h = norm1(x), then x + ffn(norm2(x)). The residual adds to "
        "x itself, never to the normalized h.",
        "__init__: norm1 and norm2 are nn.LayerNorm(d_model); self_attn is attention.MultiHeadAttention(d_model, "
        "num_heads); ffn is nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model)).",
    ),
)


# ---- 08.decoder_layer: the class DecoderLayer (__init__, forward) ------------------------------------------------
class DecoderLayer(transformer.DecoderLayer):
    """The course's decoder layer with the stub's constructor ``(d_model, num_heads, d_ff)``."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)


def decoder_layer_cases():
    cases = []
    with torch_seeded(82):
        for d_model, heads, d_ff, lengths, src_len, tgt_len, label in (
            (8, 2, 12, [5, 1, 3], 6, 4, "three sequences; no source row fills the padded width"),
            (12, 3, 20, [7, 4], 7, 8, "more decoder steps than source positions"),
        ):
            course = transformer.DecoderLayer(d_model, heads, d_ff).eval()
            with torch.no_grad():
                for norm in (course.norm1, course.norm2, course.norm3):
                    norm.weight.uniform_(0.5, 1.5)
                    norm.bias.uniform_(-0.5, 0.5)
            memory, _ = _padded_source(len(lengths), src_len, d_model, lengths)
            x = torch.randn(len(lengths), tgt_len, d_model)  # (batch, tgt_len, d_model)
            self_mask, cross_mask = transformer.make_decoder_masks(torch.tensor(lengths), src_len, tgt_len)
            cases.append(Case((course, (d_model, heads, d_ff), (x, memory, self_mask, cross_mask, True)), label))
    return cases


class DecoderLayerLoop(DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff):
        nn.Module.__init__(self)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.cross_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        weights = None
        for norm, kind in ((self.norm1, "self"), (self.norm2, "cross"), (self.norm3, "ffn")):
            h = norm(x)
            if kind == "self":
                x = x + self.self_attn(h, h, h, mask=self_mask)[0]
            elif kind == "cross":
                out, weights = self.cross_attn(h, memory, memory, mask=cross_mask)
                x = x + out
            else:
                x = x + self.ffn(h)
        return x, (weights if need_weights else None)


class DecoderLayerKeyMask(DecoderLayer):
    def __init__(self, d_model, num_heads, d_ff):
        nn.Module.__init__(self)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.cross_attn = attention.MultiHeadAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        steps = x.shape[1]
        causal = torch.ones(steps, steps, dtype=torch.bool).tril()  # (tgt_len, tgt_len)
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=causal)[0]
        key_mask = cross_mask.reshape(cross_mask.shape[0], -1)  # (batch, 1, 1, src_len) -> (batch, src_len)
        out, weights = self.cross_attn(self.norm2(x), memory, memory, key_mask=key_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights


class DecoderLayerPostNorm(DecoderLayer):
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        x = self.norm1(x + self.self_attn(x, x, x, mask=self_mask)[0])
        out, weights = self.cross_attn(x, memory, memory, mask=cross_mask)
        x = self.norm2(x + out)
        return self.norm3(x + self.ffn(x)), (weights if need_weights else None)


class DecoderLayerMemoryNormalized(DecoderLayer):
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=self_mask)[0]
        keys = self.norm2(memory)  # the encoder's output normalized a second time, with the decoder's norm
        out, weights = self.cross_attn(self.norm2(x), keys, keys, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights


class DecoderLayerNotCausal(DecoderLayer):
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h)[0]  # no causal mask: step t reads later inputs
        out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights)
        x = x + out
        return x + self.ffn(self.norm3(x)), weights


class DecoderLayerSelfWeights(DecoderLayer):
    def forward(self, x, memory, self_mask, cross_mask, need_weights=False):
        h = self.norm1(x)
        out, self_weights = self.self_attn(h, h, h, mask=self_mask)
        x = x + out
        out, _ = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask)
        x = x + out
        return x + self.ffn(self.norm3(x)), (self_weights if need_weights else None)  # the wrong attention's weights


DECODER_LAYER = Exercise(
    id="08.decoder_layer",
    function="DecoderLayer",
    section=_DECODER,
    make_cases=decoder_layer_cases,
    reference=DecoderLayer,
    variants=(DecoderLayerLoop, DecoderLayerKeyMask),
    buggy={
        "post_norm": DecoderLayerPostNorm,
        "memory_normalized_again": DecoderLayerMemoryNormalized,
        "decoder_self_attention_not_causal": DecoderLayerNotCausal,
        "decoder_returns_self_weights": DecoderLayerSelfWeights,
    },
    allowed=(_MHA_FORWARD,),
    driver=run_layer,
    output_names=("x", "weights"),
    atol=1e-5,
    noun="decoder layer",
    hints=(
        "Three sub-layers, each x = x + f(LayerNorm(x)). Which one reads the encoder's output, and which mask goes "
        "with each attention?",
        "Causal self-attention on norm1(x) with self_mask; cross-attention with queries norm2(x) and keys and "
        "values memory, with cross_mask; then the feed-forward network on norm3(x). Return the cross-attention's "
        "weights.",
        "out, weights = self.cross_attn(self.norm2(x), memory, memory, mask=cross_mask, need_weights=need_weights); "
        "the modules are built as in the encoder layer, with a third LayerNorm and a second attention.",
    ),
)
