"""Lesson 07 · Sequence to sequence with RNNs and attention: the exercises of ``notebooks/07_seq2seq_rnn_attention.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The lesson builds the model it trains from these regions: the teacher-forcing inputs (``07.my_decoder_io``), the
encoder (``07.encoder``), the additive attention (``07.additive_attention``), one decoder step
(``07.decoder_step``) and greedy decoding (``07.greedy_decode``). The class exercises load the course module's
weights into the student's class (``cases.run_module``) and compare outputs.
"""

from __future__ import annotations

import contextlib

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from course_utils import data
from course_utils.exercises._model import AnswerRefused, Case, Exercise, Prediction
from course_utils.exercises.cases import ended_targets, load_course_weights, torch_seeded
from course_utils.reversal import checkpoints, decoding, rnn

# Not `from torch import nn` (as lesson 04): CPython 3.11 compiles `nn.GRU(...)` on a name imported in the same file as
# LOAD_ATTR, and on one imported in another cell (the lesson's Setup) as LOAD_METHOD. Assigned like this, the
# reference classes' __init__ compile to the same code as the stubs' (the engine compares them).
nn = torch.nn

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "MY_DECODER_IO",
    "MY_ENCODER",
    "MY_ADDITIVE_ATTENTION",
    "MY_DECODER_STEP",
    "MY_GREEDY_DECODE",
    "MY_ADDITIVE_SCORES",
    "TOKEN_ACCURACY",
    "MyEncoder",
    "MyAdditiveAttention",
]


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


_SMALL = rnn.GRUConfig(vocab=data.VOCAB_SIZE, d_embed=5, d_encoder=3, d_hidden=7, d_attn=4)


def _src(lengths, src_len, seed):
    """A padded source batch (batch, src_len) of random symbols, PAD after each row's length."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(3, data.VOCAB_SIZE, (len(lengths), src_len), generator=gen)
    lengths = torch.tensor(lengths)
    return src.masked_fill(torch.arange(src_len)[None, :] >= lengths[:, None], data.PAD), lengths


def encoder_cases():
    with torch_seeded(70):
        course = rnn.GRUEncoder(_SMALL)
    return [
        Case((course, (_SMALL,), _src([6, 2, 4], 6, 1)), "three rows, the first fills the padded width"),
        Case((course, (_SMALL,), _src([5, 3], 7, 2)), "no row fills the padded width"),
        Case((course, (_SMALL,), _src([4], 4, 3)), "one row, no padding"),
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


# ---- 07.decoder_step(model, state, tokens) -> (logits, state, weights) ------------------------------------------
def decoder_step_cases():
    cases = []
    for seed, lengths, src_len, tokens, label in (
        (74, [5, 2, 3], 5, [data.BOS] * 3, "the first step: BOS, no context yet"),
        (75, [3, 1], 4, [7, 12], "a later step: the state and context of the step before, no row fills the width"),
    ):
        with torch_seeded(seed), torch.no_grad():
            model = rnn.AttentionGRUSeq2Seq(_SMALL).eval()
            src, src_lengths = _src(lengths, src_len, seed)
            state = model.init_state(src, src_lengths)
            if tokens[0] != data.BOS:
                _, state, _ = rnn.attention_decoder_step(model, state, torch.full((len(lengths),), data.BOS))
        cases.append(Case((model, state, torch.tensor(tokens)), label))
    return cases


def run_decoder_step(step, model, state, tokens):
    """The step's logits, its new state's ``s`` and ``context``, and its weights (batch, src_len)."""
    out = step(model, state, tokens)
    if out is None:
        return None
    if not isinstance(out, tuple) or len(out) != 3:
        raise AnswerRefused("the step must return three things: (logits, the new state, weights)")
    logits, new_state, weights = out
    if not isinstance(new_state, dict) or not {"s", "context"} <= set(new_state):
        raise AnswerRefused("the new state must be a dict like the one you were given, with its s and context replaced")
    return logits, new_state["s"], new_state["context"], weights


def my_decoder_step(model, state, tokens):
    return rnn.attention_decoder_step(model, state, tokens)


def decoder_step_by_parts(model, state, tokens):
    x = torch.cat([model.embed(tokens), state["context"]], dim=1)
    s = model.cell(x, state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    logits = model.out_proj(torch.cat([s, context], dim=1))
    new_state = dict(state)
    new_state.update(s=s, context=context)
    return logits, new_state, weights


def decoder_step_gru_by_hand(model, state, tokens):
    cell = model.cell
    x = torch.cat([model.embed(tokens), state["context"]], dim=-1)
    s = rnn.gru_step(x, state["s"], cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    return model.out_proj(torch.cat([s, context], dim=-1)), {**state, "s": s, "context": context}, weights


def decoder_step_attends_with_old_state(model, state, tokens):
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(state["s"], state["keys"], state["key_mask"], state["projected_keys"])
    return model.out_proj(torch.cat([s, context], dim=-1)), {**state, "s": s, "context": context}, weights


def decoder_step_state_not_updated(model, state, tokens):
    s = model.cell(torch.cat([model.embed(tokens), state["context"]], dim=-1), state["s"])
    context, weights = model.attention(s, state["keys"], state["key_mask"], state["projected_keys"])
    return model.out_proj(torch.cat([s, context], dim=-1)), state, weights


MY_DECODER_STEP = Exercise(
    id="07.decoder_step",
    function="my_decoder_step",
    section="07 · 3 · One decoder step",
    make_cases=decoder_step_cases,
    reference=my_decoder_step,
    variants=(decoder_step_by_parts, decoder_step_gru_by_hand),
    driver=run_decoder_step,
    buggy={
        "decoder_attends_with_old_state": decoder_step_attends_with_old_state,
        "decoder_state_not_updated": decoder_step_state_not_updated,
    },
    allowed=("course_utils.reversal.rnn:AdditiveAttention.forward",),
    forbidden=(
        "course_utils.reversal.rnn:attention_decoder_step",
        "course_utils.reversal.rnn:AttentionGRUSeq2Seq.decode_step",
        "course_utils.reversal.rnn:AttentionGRUSeq2Seq._step",
    ),
    output_names=("logits", "new s", "new context", "weights"),
    noun="decoder step",
    atol=1e-5,
    hints=(
        "Three moves: read, attend, combine. Which state is the query of the attention: the one you were given, or "
        "the one the cell just returned?",
        "The cell reads [embed(tokens); the previous context] and the previous s; the attention takes the new s with "
        "the state's keys, key_mask and projected_keys; out_proj reads [new s; new context].",
        "torch.cat([model.embed(tokens), state['context']], dim=-1) is the cell's input; return the logits, "
        "{**state, 's': s, 'context': context} and the weights.",
    ),
)


# ---- 07.greedy_decode(model, src, src_lengths, max_steps) -> tokens (batch, steps) ------------------------------
def greedy_cases():
    model = checkpoints.load_pretrained("gru_attention")
    return [
        Case((model, *_src([5, 2, 8], 8, 11), 10), "three rows that end at different steps"),
        Case(
            (model, *_src([6, 3], 7, 12), 5),
            "max_steps stops the decoding before the rows end; no row fills the padded width",
        ),
        Case((model, *_src([4], 4, 13), 6), "one row"),
    ]


def run_greedy(decode, model, src, src_lengths, max_steps):
    """The tokens, padded with PAD to max_steps (a decoder may stop once every row has emitted EOS)."""
    tokens = decode(model, src, src_lengths, max_steps)
    if tokens is None:
        return None
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[0] != src.shape[0]:
        raise AnswerRefused(f"the decoder must return a tensor of tokens (batch={src.shape[0]}, steps)")
    if tokens.shape[1] > max_steps:
        raise AnswerRefused(f"the decoder returned {tokens.shape[1]} steps, more than max_steps={max_steps}")
    return torch.nn.functional.pad(tokens.long(), (0, max_steps - tokens.shape[1]), value=data.PAD)


def my_greedy_decode(model, src, src_lengths, max_steps):
    return decoding.greedy_decode(model, src, src_lengths, max_steps=max_steps)


def greedy_all_steps(model, src, src_lengths, max_steps):
    with torch.inference_mode():
        state = model.init_state(src, src_lengths)
        tokens = torch.full((src.shape[0],), data.BOS)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_steps):  # every step, no early stop: PAD once a row is done
            logits, state, _ = model.decode_step(state, tokens)
            tokens = torch.where(finished, torch.tensor(data.PAD), logits.argmax(dim=-1))
            out.append(tokens)
            finished |= tokens == data.EOS
    return torch.stack(out, dim=1)


def greedy_rerun_prefix(model, src, src_lengths, max_steps):
    prefix = torch.full((src.shape[0], 1), data.BOS)
    for _ in range(max_steps):  # no cache: the whole prefix again at every step
        logits = model(src, src_lengths, prefix).detach()  # (batch, steps so far, vocab)
        prefix = torch.cat([prefix, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    out = prefix[:, 1:]
    seen_eos = (out == data.EOS).long().cumsum(dim=1) - (out == data.EOS).long()
    return out.masked_fill(seen_eos > 0, data.PAD)


def _greedy(model, src, src_lengths, max_steps, *, feed_back=True, pad_after_eos=True, position=None):
    prefix = torch.full((src.shape[0], 1), data.BOS)
    state = model.init_state(src, src_lengths)
    tokens = prefix[:, 0]
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    out = []
    with torch.no_grad():
        for _ in range(max_steps):
            if position is None:
                logits, state, _ = model.decode_step(state, tokens if feed_back else prefix[:, 0])
            else:
                logits = model(src, src_lengths, prefix)[:, position]
            tokens = logits.argmax(dim=-1)
            if pad_after_eos:
                tokens = tokens.masked_fill(done, data.PAD)
            out.append(tokens)
            prefix = torch.cat([prefix, tokens[:, None]], dim=1)
            done = done | (tokens == data.EOS)
            if bool(done.all()):
                break
    return torch.stack(out, dim=1)


def greedy_not_fed_back(model, src, src_lengths, max_steps):
    return _greedy(model, src, src_lengths, max_steps, feed_back=False)


def greedy_first_position(model, src, src_lengths, max_steps):
    return _greedy(model, src, src_lengths, max_steps, position=0)


def greedy_no_pad_after_eos(model, src, src_lengths, max_steps):
    return _greedy(model, src, src_lengths, max_steps, pad_after_eos=False)


MY_GREEDY_DECODE = Exercise(
    id="07.greedy_decode",
    function="my_greedy_decode",
    section="07 · 5 · Greedy decoding",
    make_cases=greedy_cases,
    reference=my_greedy_decode,
    variants=(greedy_all_steps, greedy_rerun_prefix),
    driver=run_greedy,
    buggy={
        "greedy_step_not_fed_back": greedy_not_fed_back,
        "greedy_step_first_position": greedy_first_position,
        "greedy_step_no_pad_after_eos": greedy_no_pad_after_eos,
    },
    forbidden=("course_utils.reversal.decoding:greedy_decode",),  # recorded by its own code, not no_grad's wrapper
    noun="greedy decoding",
    time_limit=10,
    hints=(
        "What does the decoder read at step 0, and at step 1? Where does the token it reads at step 1 come from "
        "when no target is given?",
        "Start from model.init_state and a column of BOS; at every step call model.decode_step, take the argmax of "
        "the logits over the vocabulary, keep it, and feed it back as the next step's tokens. A row that has "
        "written EOS writes PAD from then on; stop once every row is done, or after max_steps.",
        "Keep a (batch,) bool tensor `done`; tokens = logits.argmax(dim=-1).masked_fill(done, data.PAD); "
        "done |= tokens == data.EOS; torch.stack the steps along dim=1. Wrap it in torch.no_grad().",
    ),
)


# ---- 07.my_additive_scores(s, h, W_s, W_h, v) -> (batch, k_len) --------------------------------------------
def additive_cases():
    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    return [
        Case((randn(1, 4), randn(1, 3, 6), randn(4, 2), randn(6, 2), randn(2))),
        Case((randn(3, 8), randn(3, 5, 7), randn(8, 4), randn(7, 4), randn(4))),
    ]


def my_additive_scores(s, h, W_s, W_h, v):
    return rnn.additive_scores(s @ W_s, h @ W_h, v)


def additive_broadcast(s, h, W_s, W_h, v):
    # (batch, 1, d_attn) + (batch, k_len, d_attn) -> (batch, k_len, d_attn) -> (batch, k_len)
    return torch.tanh((s @ W_s)[:, None, :] + h @ W_h) @ v


def additive_einsum(s, h, W_s, W_h, v):
    query = torch.einsum("bd,da->ba", s, W_s)
    keys = torch.einsum("bkd,da->bka", h, W_h)
    return torch.einsum("bka,a->bk", torch.tanh(query.unsqueeze(1) + keys), v)


def additive_scores_no_tanh(s, h, W_s, W_h, v):
    return ((s @ W_s)[:, None, :] + h @ W_h) @ v


MY_ADDITIVE_SCORES = Exercise(
    id="07.my_additive_scores",
    fresh=lambda batch, src_len, d_query, d_key, d_attn: [
        (
            torch.randn(batch, d_query),
            torch.randn(batch, src_len, d_key),
            torch.randn(d_query, d_attn),
            torch.randn(d_key, d_attn),
            torch.randn(d_attn),
        )
    ],
    section="07 · Additive attention",
    make_cases=additive_cases,
    reference=my_additive_scores,
    variants=(additive_broadcast, additive_einsum),
    buggy={"additive_no_tanh": additive_scores_no_tanh},
    hints=(
        "The score of key j is v · tanh(s W_s + h_j W_h). Which part is the same for every key, and which changes "
        "with j? What shape does each part have?",
        "Project both sides (s @ W_s is (batch, d_attn), h @ W_h is (batch, k_len, d_attn)), add the query part to "
        "every key part, apply tanh, then take the dot product with v.",
        "Give the query part a length axis, (s @ W_s)[:, None, :], so it broadcasts over the keys; multiplying a "
        "(batch, k_len, d_attn) tensor by v of shape (d_attn,) gives (batch, k_len).",
    ),
    atol=1e-5,
)


# ---- 07.token_accuracy(logits, target) -> float ------------------------------------------------------------------
def accuracy_cases():
    gen = torch.Generator().manual_seed(76)

    def case(lengths, tgt_len, vocab, label):
        logits = torch.randn(len(lengths), tgt_len, vocab, generator=gen)
        target = logits.argmax(dim=-1)  # right everywhere ...
        wrong = torch.rand(target.shape, generator=gen) < 0.4
        target = torch.where(wrong, (target + 1) % vocab, target)  # ... except about 40% of the positions
        target = target.clamp(min=3)  # symbols only, then PAD after each row's length
        real = torch.arange(tgt_len)[None, :] < torch.tensor(lengths)[:, None]
        return Case((logits, target.masked_fill(~real, data.PAD)), label)

    return [
        case([5, 2, 4], 5, 13, "three rows, the first fills the padded width"),
        case([3, 1], 6, 13, "no row fills the padded width"),
        case([4], 4, 13, "one row, no padding"),
    ]


def token_accuracy(logits, target):
    real = target != data.PAD  # (batch, tgt_len)
    return ((logits.argmax(dim=-1) == target) & real).sum().item() / real.sum().item()


def token_accuracy_masked_mean(logits, target):
    real = target != data.PAD
    return (logits.argmax(-1)[real] == target[real]).float().mean().item()


def token_accuracy_loop(logits, target):
    hits = total = 0
    for b in range(target.shape[0]):
        for t in range(target.shape[1]):
            if int(target[b, t]) != data.PAD:
                total += 1
                hits += int(int(logits[b, t].argmax()) == int(target[b, t]))
    return hits / total


def token_accuracy_counts_padding(logits, target):
    return (logits.argmax(dim=-1) == target).float().mean().item()  # PAD positions counted too


TOKEN_ACCURACY = Exercise(
    id="07.token_accuracy",
    function="token_accuracy",
    section="07 · Teacher-forced against free-running",
    make_cases=accuracy_cases,
    reference=token_accuracy,
    fresh=lambda batch, tgt_len, vocab: [ended_targets(batch, tgt_len, vocab + 3, data.PAD, data.EOS)],
    variants=(token_accuracy_masked_mean, token_accuracy_loop),
    buggy={"accuracy_counts_padding": token_accuracy_counts_padding},
    atol=1e-6,
    hints=(
        "Which positions of target does the loss score, and which does it ignore? Accuracy must count the same ones.",
        "The prediction at each position is the argmax over the vocabulary; count the real (non-PAD) positions where "
        "it equals the target, and divide by the number of real positions.",
        "real = target != data.PAD is (batch, tgt_len); logits.argmax(dim=-1) is (batch, tgt_len) too; combine the "
        "two with & before summing, and return a Python float (.item()).",
    ),
)


EXERCISES = [
    MY_DECODER_IO,
    MY_ENCODER,
    MY_ADDITIVE_ATTENTION,
    MY_DECODER_STEP,
    MY_GREEDY_DECODE,
    MY_ADDITIVE_SCORES,
    TOKEN_ACCURACY,
]

PREDICTIONS = [
    Prediction(
        id="07.eos_position",
        question="In the padded batch of 'abcd' and 'hij', at which position (0-based) of the target of 'hij' is EOS?",
        kind="index",
        answer=3,
        section="07 · Teacher forcing, done right",
        rethink="where the end marker goes after the last symbol",
        known_wrong={
            4: ("eos_after_padding", "the last column, which is padding: think about where 'hij''s last symbol sits"),
            2: (None, "the position of a symbol: think about where the end marker goes"),
        },
    ),
    Prediction(
        id="07.concat_score_weights",
        question="With the score Linear([s; h_j]), when the decoder state s changes, do the attention weights change? "
        '("changed" or "unchanged")',
        kind="choice",
        answer="unchanged",
        choices=("changed", "unchanged"),
        section="07 · A widely copied score: `Linear([s; h_j])`",
        known_wrong={"changed": ("additive_no_tanh", "what a score needs; this one adds w_s · s to every key alike")},
    ),
    Prediction(
        id="07.mirror_position",
        question="A source of length 14: which source position (0-based) should output step 4 attend to?",
        kind="index",
        answer=9,
        section="07 · What the attention looks at",
        rethink="which source position step 0 reads when the output is the source reversed",
        known_wrong={
            4: (None, "the step's own position: that would copy the source, not reverse it"),
            10: (None, "n - t: check it on step 0: which position must it read?"),
        },
    ),
]
