"""Lesson 07's first exercises, the attention GRU part by part: the decoder's input and target, the encoder and the
additive attention (``07.my_decoder_io``, ``07.encoder``, ``07.additive_attention``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``. ``_SMALL`` and ``_src`` are now ``SMALL_CONFIG`` and ``padded_source``.
"""

from __future__ import annotations

import contextlib

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from course_utils import data
from course_utils.checking.cases import load_course_weights, torch_seeded
from course_utils.checking.model import AnswerRefused, Case, Exercise
from course_utils.reversal import rnn

__all__ = [
    "MY_DECODER_IO",
    "MY_ENCODER",
    "MY_ADDITIVE_ATTENTION",
    "MyEncoder",
    "MyAdditiveAttention",
]

# Not `from torch import nn` (as lesson 04): CPython 3.11 compiles `nn.GRU(...)` on a name imported in the same file as
# LOAD_ATTR, and on one imported in another cell (the lesson's Setup) as LOAD_METHOD. Assigned like this, the
# reference classes' __init__ compile to the same code as the stubs' (the engine compares them).
nn = torch.nn


# ---- 07.my_decoder_io(y, lengths) -> (decoder_input, target) ------------------------------------------------
def decoder_io_cases():
    return [
        Case((torch.tensor([[5, 4, 3]]), torch.tensor([3]))),
        Case(
            (torch.tensor([[5, 4, 3, 0], [7, 6, 0, 0], [8, 0, 0, 0]]), torch.tensor([3, 2, 1])),
            "no row fills the padded width",
        ),
        Case((torch.tensor([[12, 11, 10, 9, 8, 7]]), torch.tensor([6]))),
        Case((torch.tensor([[9, 8, 7, 6, 5], [4, 3, 0, 0, 0]]), torch.tensor([5, 2]))),
    ]


def my_decoder_io(y, lengths):
    return data.make_decoder_io(y, lengths)


def decoder_io_scatter(y, lengths):
    batch = y.shape[0]
    bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
    pad = torch.full((batch, 1), data.PAD, dtype=y.dtype)
    decoder_input = torch.cat([bos, y], dim=1)  # (batch, max_len + 1): shifted right by one
    target = torch.cat([y, pad], dim=1).scatter(1, lengths[:, None], data.EOS)  # EOS right after the last token
    return decoder_input, target


def decoder_io_loop(y, lengths):
    batch, max_len = y.shape
    decoder_input = torch.full((batch, max_len + 1), data.PAD, dtype=y.dtype)
    target = torch.full((batch, max_len + 1), data.PAD, dtype=y.dtype)
    for b, n in enumerate(lengths.tolist()):
        decoder_input[b, 0] = data.BOS
        decoder_input[b, 1 : n + 1] = y[b, :n]
        target[b, :n] = y[b, :n]
        target[b, n] = data.EOS
    return decoder_input, target


def _y_with_eos(y, lengths):
    pad = torch.full((y.shape[0], 1), data.PAD, dtype=y.dtype)
    return torch.cat([y, pad], dim=1).scatter(1, lengths[:, None], data.EOS)  # (batch, max_len + 1)


def decoder_io_fed_target(y, lengths):
    target = _y_with_eos(y, lengths)
    return target.clone(), target


def decoder_io_eos_after_padding(y, lengths):
    batch = y.shape[0]
    bos = torch.full((batch, 1), data.BOS, dtype=y.dtype)
    eos = torch.full((batch, 1), data.EOS, dtype=y.dtype)
    return torch.cat([bos, y], dim=1), torch.cat([y, eos], dim=1)


MY_DECODER_IO = Exercise(
    id="07.my_decoder_io",
    section="07 · Teacher forcing, done right",
    make_cases=decoder_io_cases,
    reference=my_decoder_io,
    variants=(decoder_io_scatter, decoder_io_loop),
    buggy={"decoder_fed_target": decoder_io_fed_target, "eos_after_padding": decoder_io_eos_after_padding},
    hints=(
        "At step t the decoder must predict target[t]. Which token may it see at step t, so that it never reads "
        "the answer it is asked for?",
        "decoder_input is BOS followed by y (shifted right by one); target is y followed by EOS, with the EOS right "
        "after each sequence's last real token, not after its padding.",
        "Both are one column longer than y. A column of BOS concatenated in front gives the input; for the target, "
        "append a PAD column, then write EOS at column lengths[b] of row b (a loop, or scatter).",
    ),
    output_names=("decoder_input", "target"),
)


# ---- 07.encoder: the class MyEncoder (forward) ------------------------------------------------------------------
class MyEncoder(nn.Module):
    """Bidirectional GRU over a padded source: src (batch, src_len), src_lengths (batch,)."""

    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_embed, padding_idx=data.PAD)
        self.rnn = nn.GRU(cfg.d_embed, cfg.d_encoder, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        """(outputs (batch, src_len, 2 * d_encoder), zeros at padding; final (2, batch, d_encoder))."""
        embedded = self.embed(src)  # (batch, src_len, d_embed)
        packed = pack_padded_sequence(embedded, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)  # final: (2, batch, d_encoder), forward then backward direction
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, final


@contextlib.contextmanager
def _refusing(*targets):
    """While the block runs, each ``(owner, attribute)`` of the course raises AnswerRefused when called.

    The engine cannot see a call the student's *module* makes after it was built (inside ``run_module``), so the
    course's own encoder and attention are switched off while the student's class runs.
    """
    saved = []
    try:
        for owner, attr in targets:
            saved.append((owner, attr, vars(owner)[attr]))

            def refuse(*args, _name=f"rnn.{owner.__name__}.{attr}", **kwargs):
                raise AnswerRefused(
                    f"your class calls {_name}, the course's version of what this exercise asks you to write: "
                    "write it yourself"
                )

            setattr(owner, attr, refuse)
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


def run_encoder(cls, course_module, init_args, inputs):
    """``cases.run_module`` with the course's ``GRUEncoder.forward`` refused while the student's class runs."""
    with _refusing((rnn.GRUEncoder, "forward")):
        return _run_module(cls, course_module, init_args, inputs)


def run_attention(cls, course_module, init_args, inputs):
    """``cases.run_module`` with the course's ``AdditiveAttention`` refused while the student's class runs."""
    with _refusing((rnn.AdditiveAttention, "forward"), (rnn.AdditiveAttention, "_attend")):
        return _run_module(cls, course_module, init_args, inputs)


def _run_module(cls, course_module, init_args, inputs):
    """``cases.run_module``, except that a "class" that builds None (a function without ``return``) gives None."""
    module = cls(*init_args)
    if module is None:
        return None
    load_course_weights(module, course_module, f"your {getattr(cls, '__name__', 'class')}")
    return module(*inputs)


SMALL_CONFIG = rnn.GRUConfig(vocab=data.VOCAB_SIZE, d_embed=5, d_encoder=3, d_hidden=7, d_attn=4)


def padded_source(lengths, src_len, seed):
    """A padded source batch (batch, src_len) of random symbols, PAD after each row's length."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(3, data.VOCAB_SIZE, (len(lengths), src_len), generator=gen)
    lengths = torch.tensor(lengths)
    return src.masked_fill(torch.arange(src_len)[None, :] >= lengths[:, None], data.PAD), lengths


def encoder_cases():
    with torch_seeded(70):
        course = rnn.GRUEncoder(SMALL_CONFIG)
    return [
        Case((course, (SMALL_CONFIG,), padded_source([6, 2, 4], 6, 1)), "three rows, the first fills the padded width"),
        Case((course, (SMALL_CONFIG,), padded_source([5, 3], 7, 2)), "no row fills the padded width"),
        Case((course, (SMALL_CONFIG,), padded_source([4], 4, 3)), "one row, no padding"),
    ]


class EncoderSortedByHand(MyEncoder):
    """Correct: sort by length, pack with enforce_sorted=True, undo the sort; pad by hand."""

    def forward(self, src, src_lengths):
        order = torch.argsort(src_lengths, descending=True)
        packed = pack_padded_sequence(self.embed(src[order]), src_lengths[order].cpu(), batch_first=True)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True)
        unsort = torch.argsort(order)
        outputs = outputs[unsort]
        missing = src.shape[1] - outputs.shape[1]
        if missing:
            outputs = torch.cat([outputs, outputs.new_zeros(outputs.shape[0], missing, outputs.shape[2])], dim=1)
        return outputs, final[:, unsort]


class EncoderRowByRow(MyEncoder):
    """Correct: every sequence on its own, cut at its length (no packing), then padded with zeros."""

    def forward(self, src, src_lengths):
        batch, src_len = src.shape
        outputs = torch.zeros(batch, src_len, 2 * self.rnn.hidden_size)
        finals = []
        for b, n in enumerate(src_lengths.tolist()):
            out, final = self.rnn(self.embed(src[b : b + 1, :n]))  # (1, n, 2 * d_encoder), (2, 1, d_encoder)
            outputs[b, :n] = out[0]
            finals.append(final)
        return outputs, torch.cat(finals, dim=1)


class EncoderWithoutTotalLength(MyEncoder):
    def forward(self, src, src_lengths):
        packed = pack_padded_sequence(self.embed(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True)  # as long as the longest row only
        return outputs, final


class EncoderNotPacked(MyEncoder):
    def forward(self, src, src_lengths):
        return self.rnn(self.embed(src))  # the backward direction starts in the padding


MY_ENCODER = Exercise(
    id="07.encoder",
    function="MyEncoder",
    section="07 · 1 · The encoder",
    make_cases=encoder_cases,
    reference=MyEncoder,
    variants=(EncoderSortedByHand, EncoderRowByRow),
    driver=run_encoder,
    buggy={
        "pad_packed_without_total_length": EncoderWithoutTotalLength,
        "encoder_not_packed": EncoderNotPacked,
    },
    forbidden=("course_utils.reversal.rnn:GRUEncoder.__init__",),  # its forward is refused by run_encoder
    output_names=("outputs", "final"),
    noun="encoder",
    atol=1e-5,
    hints=(
        "A padded row ends in PAD tokens. What would the backward direction read first if the GRU saw the padding, "
        "and how do you tell the GRU where each row really ends?",
        "Embed, pack with each row's length (pack_padded_sequence), run the GRU, then unpack with "
        "pad_packed_sequence. The outputs must be as wide as the batch's src_len, even when no row is that long.",
        "pack_padded_sequence(embedded, src_lengths.cpu(), batch_first=True, enforce_sorted=False); the GRU returns "
        "(packed outputs, final); pad_packed_sequence takes total_length= to pad back to a given width.",
    ),
)


# ---- 07.additive_attention: the class MyAdditiveAttention (forward) ---------------------------------------------
class MyAdditiveAttention(nn.Module):
    """softmax_j(v · tanh(W_s s + W_h h_j)) over the real source positions, and the context."""

    def __init__(self, d_query, d_key, d_attn):
        super().__init__()
        self.query_proj = nn.Linear(d_query, d_attn, bias=False)  # W_s
        self.key_proj = nn.Linear(d_key, d_attn)  # W_h
        self.score_proj = nn.Linear(d_attn, 1, bias=False)  # v

    def forward(self, s, keys, key_mask, projected_keys):
        """s (batch, d_query), keys (batch, src_len, d_key), key_mask (batch, src_len) True = real, projected_keys =
        key_proj(keys) (batch, src_len, d_attn). Returns (context (batch, d_key), weights (batch, src_len))."""
        query_part = self.query_proj(s)  # (batch, d_attn)
        hidden = torch.tanh(query_part[:, None, :] + projected_keys)  # (batch, src_len, d_attn)
        scores = self.score_proj(hidden).squeeze(-1)  # (batch, src_len)
        scores = scores.masked_fill(~key_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # over the source positions
        context = (weights[:, None, :] @ keys).squeeze(1)  # (batch, 1, src_len) @ (batch, src_len, d_key)
        return context, weights


def attention_cases():
    def case(seed, lengths, src_len, sizes, label, v_scale=1.0):
        d_query, d_key, d_attn = sizes
        with torch_seeded(seed), torch.no_grad():
            course = rnn.AdditiveAttention(d_query, d_key, d_attn)
            course.score_proj.weight.mul_(v_scale)
            s = torch.randn(len(lengths), d_query)
            keys = torch.randn(len(lengths), src_len, d_key)
            key_mask = torch.arange(src_len)[None, :] < torch.tensor(lengths)[:, None]
            projected = course.key_proj(keys)
        return Case((course, sizes, (s, keys, key_mask, projected)), label)

    return [
        case(71, [6, 2, 4], 6, (5, 7, 4), "three rows, the first fills the padded width"),
        case(72, [3, 1], 5, (2, 6, 3), "no row fills the padded width"),
        case(73, [4, 3], 4, (3, 5, 6), "scores in the thousands", v_scale=400.0),
    ]


def _attend(module, s, keys, key_mask, projected_keys, *, tanh=True, dim=-1, mask=True, values=None):
    hidden = module.query_proj(s)[:, None, :] + projected_keys
    scores = module.score_proj(torch.tanh(hidden) if tanh else hidden).squeeze(-1)
    if mask:
        scores = scores.masked_fill(~key_mask, float("-inf"))
    weights = torch.softmax(scores, dim=dim)
    context = (weights[:, None, :] @ (keys if values is None else values)).squeeze(1)
    return context, weights


class AttentionEinsum(MyAdditiveAttention):
    """Correct: the key projection recomputed, einsum, torch.where for the mask, a shifted exp by hand."""

    def forward(self, s, keys, key_mask, projected_keys):
        energy = torch.tanh(self.query_proj(s).unsqueeze(1) + self.key_proj(keys))  # (batch, src_len, d_attn)
        scores = torch.einsum("bka,a->bk", energy, self.score_proj.weight[0])
        scores = torch.where(key_mask, scores, torch.tensor(float("-inf")))
        e = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
        weights = e / e.sum(dim=1, keepdim=True)
        return torch.einsum("bk,bkd->bd", weights, keys), weights


class AttentionLoop(MyAdditiveAttention):
    """Correct: one row at a time, only its real keys."""

    def forward(self, s, keys, key_mask, projected_keys):
        contexts, all_weights = [], []
        for b in range(s.shape[0]):
            n = int(key_mask[b].sum())
            scores = self.score_proj(torch.tanh(self.query_proj(s[b]) + projected_keys[b, :n]))[:, 0]  # (n,)
            w = torch.softmax(scores, dim=0)
            contexts.append(w @ keys[b, :n])
            all_weights.append(torch.cat([w, w.new_zeros(keys.shape[1] - n)]))
        return torch.stack(contexts), torch.stack(all_weights)


def _buggy_attention(name, **change):
    def forward(self, s, keys, key_mask, projected_keys):
        values = self.key_proj(keys) if change.get("projected_values") else None
        kw = {k: v for k, v in change.items() if k != "projected_values"}
        return _attend(self, s, keys, key_mask, projected_keys, values=values, **kw)

    return type(name, (MyAdditiveAttention,), {"forward": forward, "__module__": __name__})


MY_ADDITIVE_ATTENTION = Exercise(
    id="07.additive_attention",
    fresh=lambda batch, src_len, d_query, d_key, d_attn: [
        (  # row i has src_len - i real keys (cycling), so a batch of one fills the width
            (course := rnn.AdditiveAttention(d_query, d_key, d_attn)),
            (d_query, d_key, d_attn),
            (torch.randn(batch, d_query), keys := torch.randn(batch, src_len, d_key))
            + (torch.arange(src_len)[None, :] < torch.tensor([src_len - i % src_len for i in range(batch)])[:, None],)
            + (course.key_proj(keys).detach(),),
        )
    ],
    function="MyAdditiveAttention",
    section="07 · 2 · The additive attention",
    make_cases=attention_cases,
    reference=MyAdditiveAttention,
    variants=(AttentionEinsum, AttentionLoop),
    driver=run_attention,
    buggy={
        "additive_no_tanh": _buggy_attention("AttentionNoTanh", tanh=False),
        "attention_softmax_over_batch": _buggy_attention("AttentionSoftmaxOverBatch", dim=0),
        "attention_padding_not_masked": _buggy_attention("AttentionPaddingNotMasked", mask=False),
        "attention_context_from_projected_keys": _buggy_attention("AttentionProjectedValues", projected_values=True),
    },
    forbidden=("course_utils.reversal.rnn:AdditiveAttention.__init__",),  # forward: refused by run_attention
    output_names=("context", "weights"),
    noun="additive attention",
    atol=1e-5,
    hints=(
        "Four moves: a score per source position, padding hidden, weights that sum to 1, a context. Which part of "
        "the score is the same for every key, and which changes with j?",
        "Scores v · tanh(W_s s + W_h h_j): query_proj(s) added to every row of projected_keys, tanh, then score_proj; "
        "-inf where key_mask is False; a softmax over the source positions; the weighted sum of the keys "
        "themselves (they are also the values).",
        "query_proj(s)[:, None, :] is (batch, 1, d_attn) and broadcasts over projected_keys (batch, src_len, "
        "d_attn); score_proj gives (batch, src_len, 1): squeeze the last axis. For the context, (batch, 1, src_len) "
        "@ (batch, src_len, d_key) gives (batch, 1, d_key).",
    ),
)
