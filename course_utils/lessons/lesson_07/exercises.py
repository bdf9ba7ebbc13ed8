"""Lesson 07 · Sequence to sequence with RNNs and attention: the exercises of ``notebooks/07_seq2seq_rnn_attention.ipynb``.

Each exercise is one block: cases, reference, correct variants, hand-written buggy versions, ``Exercise``.
The lesson builds the model it trains from these regions: the teacher-forcing inputs (``07.my_decoder_io``), the
encoder (``07.encoder``), the additive attention (``07.additive_attention``), one decoder step
(``07.decoder_step``) and greedy decoding (``07.greedy_decode``). The class exercises load the course module's
weights into the student's class (``cases.run_module``) and compare outputs.
"""

from __future__ import annotations

import torch

from course_utils import data
from course_utils.checking.cases import ended_targets, torch_seeded
from course_utils.checking.model import AnswerRefused, Case, Exercise, Prediction
from course_utils.lessons.lesson_07.parts import (
    MY_ADDITIVE_ATTENTION,
    MY_DECODER_IO,
    MY_ENCODER,
    SMALL_CONFIG,
    padded_source,
)
from course_utils.reversal import checkpoints, decoding, rnn

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "MY_DECODER_STEP",
    "MY_GREEDY_DECODE",
    "MY_ADDITIVE_SCORES",
    "TOKEN_ACCURACY",
]


# ---- 07.decoder_step(model, state, tokens) -> (logits, state, weights) ------------------------------------------
def decoder_step_cases():
    cases = []
    for seed, lengths, src_len, tokens, label in (
        (74, [5, 2, 3], 5, [data.BOS] * 3, "the first step: BOS, no context yet"),
        (75, [3, 1], 4, [7, 12], "a later step: the state and context of the step before, no row fills the width"),
    ):
        with torch_seeded(seed), torch.no_grad():
            model = rnn.AttentionGRUSeq2Seq(SMALL_CONFIG).eval()
            src, src_lengths = padded_source(lengths, src_len, seed)
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
        Case((model, *padded_source([5, 2, 8], 8, 11), 10), "three rows that end at different steps"),
        Case(
            (model, *padded_source([6, 3], 7, 12), 5),
            "max_steps stops the decoding before the rows end; no row fills the padded width",
        ),
        Case((model, *padded_source([4], 4, 13), 6), "one row"),
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
