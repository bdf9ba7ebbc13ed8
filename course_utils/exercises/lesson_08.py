"""Lesson 08 · A Transformer that reverses sequences: the exercises of ``notebooks/08_transformer_reversal.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
``08.my_decoder_masks`` goes through ``course_utils.masks``, so every mask patch of the catalogue applies to it,
also to one of its two masks alone. ``08.my_greedy_decode`` decodes a whole batch with a trained model (the
model a case hands in runs unpatched), where rows reach EOS at different steps.
"""

from __future__ import annotations

import math

import torch

from course_utils.data import BOS, EOS, PAD
from course_utils.exercises._model import Case, Exercise
from course_utils.reversal import decoding, transformer

__all__ = ["EXERCISES", "PREDICTIONS", "MY_DECODER_MASKS", "MY_POSITIONS", "MY_GREEDY_DECODE"]

_GREEDY = "08 · Greedy decoding, by hand"


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


# ---- 08.my_greedy_decode(model, src, src_lengths, max_len) -> (batch, steps) --------------------------------
def greedy_cases():
    from course_utils import data
    from course_utils.reversal import checkpoints

    model = checkpoints.load_pretrained("transformer")  # trained: rows reach EOS at their own steps
    gru = checkpoints.load_pretrained("gru_attention")
    mixed = data.collate([data.encode(s) for s in ("abcd", "edcba", "ca")])  # src (3, 5)
    wide = torch.cat([mixed.src, torch.full((3, 1), PAD)], dim=1)  # (3, 6): one more column of padding
    return [
        Case((model, wide, mixed.src_lengths, 7), "rows finish at different steps; no row fills the padded width"),
        Case((model, mixed.src, mixed.src_lengths, 3), "max_len binds before any EOS"),
        Case((gru, mixed.src, mixed.src_lengths, mixed.src.shape[1] + 2), "another model, the same contract"),
    ]


def my_greedy_decode(model, src, src_lengths, max_len):
    return decoding.greedy_decode(model, src, src_lengths, max_len)


def _greedy_loop(
    model, src, src_lengths, max_len, *, feed_back=True, pad_after_eos=True, stop_at_first=False, position=-1
):
    """Greedy decoding by re-running ``model`` on the growing prefix, with one mistake switched on."""
    model.eval()
    batch = src.shape[0]
    decoder_input = torch.full((batch, 1), BOS, dtype=torch.long)  # (batch, 1)
    done = torch.zeros(batch, dtype=torch.bool)
    outputs = []
    with torch.no_grad():
        for _ in range(max_len):
            logits = model(src, src_lengths, decoder_input)  # (batch, t, vocab)
            tokens = logits[:, position].argmax(dim=-1)  # (batch,)
            if pad_after_eos:
                tokens = tokens.masked_fill(done, PAD)
            outputs.append(tokens)
            done = done | (tokens == EOS)
            if bool(done.all()) or (stop_at_first and bool(done.any())):
                break
            if feed_back:
                decoder_input = torch.cat([decoder_input, tokens[:, None]], dim=1)  # (batch, t) -> (batch, t + 1)
            else:
                decoder_input = torch.cat([decoder_input, decoder_input[:, -1:]], dim=1)  # never the argmax
    return torch.stack(outputs, dim=1)  # steps x (batch,) -> (batch, steps)


def greedy_prefix_loop(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len)


def greedy_token_lists(model, src, src_lengths, max_len):
    model.eval()
    rows = [[BOS] for _ in range(src.shape[0])]
    finished = [False] * src.shape[0]
    steps = []
    with torch.no_grad():
        while len(steps) < max_len and not all(finished):
            logits = model(src, src_lengths, torch.tensor(rows))  # (batch, t, vocab)
            step = []
            for b in range(len(rows)):
                token = PAD if finished[b] else int(logits[b, -1].argmax())
                finished[b] = finished[b] or token == EOS
                rows[b].append(token)
                step.append(token)
            steps.append(step)
    return torch.tensor(steps, dtype=torch.long).T  # (steps, batch) -> (batch, steps)


def greedy_argmax_not_fed_back(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len, feed_back=False)


def greedy_no_pad_after_eos(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len, pad_after_eos=False)


def greedy_stops_at_first_eos(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len, stop_at_first=True)


def greedy_wrong_position(model, src, src_lengths, max_len):
    return _greedy_loop(model, src, src_lengths, max_len, position=0)


MY_GREEDY_DECODE = Exercise(
    id="08.my_greedy_decode",
    section=_GREEDY,
    make_cases=greedy_cases,
    reference=my_greedy_decode,
    variants=(greedy_prefix_loop, greedy_token_lists),
    buggy={
        "greedy_argmax_not_fed_back": greedy_argmax_not_fed_back,
        "greedy_no_pad_after_eos": greedy_no_pad_after_eos,
        "greedy_stops_at_first_eos": greedy_stops_at_first_eos,
        "greedy_wrong_position": greedy_wrong_position,
    },
    hints=(
        "Every row starts from BOS. After each step, what goes back into the decoder, and when is a row finished? "
        "When is the whole batch finished?",
        "Each step: run the model on the whole prefix, take the argmax of the last position's logits, and append it "
        "to the prefix. A row that has emitted EOS writes PAD from then on; stop when every row is done, or after "
        "max_len steps.",
        "Keep done = torch.zeros(batch, dtype=torch.bool) and update it with tokens == EOS; tokens.masked_fill(done, "
        "PAD) writes PAD in finished rows. Stack the steps along dim=1: (batch, steps).",
    ),
    time_limit=20.0,
)

EXERCISES = [MY_DECODER_MASKS, MY_POSITIONS, MY_GREEDY_DECODE]
PREDICTIONS: list = []
