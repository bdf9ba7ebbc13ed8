"""Lesson 07's exercises beyond the generic tests: the holes the read-through found stay closed.

- a ``pad_packed_sequence`` without ``total_length`` is named (a case has no full-length row);
- a class that runs the course's encoder or attention, and a step that calls the course's decode step, are refused;
- a greedy decoder decorated with ``@torch.no_grad()`` passes (greedy_decode's wrapper is shared by every no_grad
  function, so it is refused by value, not by code object), one that never stops early passes too, and one that
  feeds back the wrong position's argmax is named;
- the experiments' budget is the attention recipe's.
"""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from course_utils import data
from course_utils.checking import engine, handed_back
from course_utils.lessons.lesson_07 import exercises as L
from course_utils.lessons.lesson_07 import experiments as E
from course_utils.lessons.lesson_07 import parts
from course_utils.reversal import decoding, rnn, training


def _judge(exercise, answer):
    with handed_back.as_in_a_fresh_kernel():
        return engine.judge(exercise, answer)


def test_encoder_without_total_length_is_named():
    class Encoder(parts.MyEncoder):
        def forward(self, src, src_lengths):
            packed = pack_padded_sequence(self.embed(src), src_lengths, batch_first=True, enforce_sorted=False)
            outputs, final = self.rnn(packed)
            outputs, _ = pad_packed_sequence(outputs, batch_first=True)
            return outputs, final

    verdict = _judge(parts.MY_ENCODER, Encoder)
    assert verdict.status == "wrong" and verdict.misconception == "pad_packed_without_total_length"
    assert "no row fills the padded width" in verdict.detail


def test_a_class_that_runs_the_course_encoder_or_attention_is_refused():
    class Encoder(parts.MyEncoder):
        def forward(self, src, src_lengths):
            return rnn.GRUEncoder.forward(self, src, src_lengths)

    class Attention(parts.MyAdditiveAttention):
        def forward(self, s, keys, key_mask, projected_keys):
            return rnn.AdditiveAttention.forward(self, s, keys, key_mask, projected_keys)

    for exercise, answer in ((parts.MY_ENCODER, Encoder), (parts.MY_ADDITIVE_ATTENTION, Attention)):
        verdict = _judge(exercise, answer)
        assert verdict.status == "wrong" and "course's version" in verdict.detail, verdict.detail
    assert _judge(parts.MY_ENCODER, parts.EncoderRowByRow).status == "passed"  # the switch-off is undone afterwards


def test_a_step_that_calls_the_course_step_is_refused():
    def step(model, state, tokens):
        return model.decode_step(state, tokens)

    assert _judge(L.MY_DECODER_STEP, step).status == "wrong"


def test_greedy_decoders_written_either_way_pass_and_the_wrong_position_is_named():
    @torch.no_grad()
    def decorated(model, src, src_lengths, max_steps):
        return L.greedy_all_steps(model, src, src_lengths, max_steps)

    assert _judge(L.MY_GREEDY_DECODE, decorated).status == "passed"
    assert _judge(L.MY_GREEDY_DECODE, L.greedy_all_steps).status == "passed"  # no early stop: PAD to max_steps
    verdict = _judge(L.MY_GREEDY_DECODE, L.greedy_first_position)
    assert verdict.misconception == "greedy_step_first_position"

    def calls_course(model, src, src_lengths, max_steps):
        return decoding.greedy_decode(model, src, src_lengths, max_steps=max_steps)

    assert _judge(L.MY_GREEDY_DECODE, calls_course).status == "wrong"


def test_a_forbidden_helper_under_no_grad_is_refused_by_its_own_code():
    """greedy_decode is wrapped by @torch.no_grad(): the engine records the helper's code, not the wrapper's, so a
    student's own @torch.no_grad() function passes and one that calls the helper is refused as delegation."""
    assert "course_utils.reversal.decoding:greedy_decode" in L.MY_GREEDY_DECODE.forbidden

    @torch.no_grad()
    def calls_course(model, src, src_lengths, max_steps):
        return decoding.greedy_decode(model, src, src_lengths, max_steps=max_steps)

    verdict = _judge(L.MY_GREEDY_DECODE, calls_course)
    assert verdict.status == "wrong" and "greedy_decode" in verdict.detail, verdict.detail

    @torch.no_grad()
    def own(model, src, src_lengths, max_steps):
        return L.greedy_all_steps(model, src, src_lengths, max_steps)

    assert _judge(L.MY_GREEDY_DECODE, own).status == "passed"


def test_token_accuracy_counting_padding_is_named():
    verdict = _judge(L.TOKEN_ACCURACY, L.token_accuracy_counts_padding)
    assert verdict.misconception == "accuracy_counts_padding"


def test_the_experiments_budget_is_the_attention_recipes():
    assert E.BUDGET == training.recipe("gru_attention").steps
    attention = training.RECIPES["gru_attention"]
    assert (attention["lr"], attention["warmup_steps"]) != (
        training.RECIPES["gru"]["lr"],
        training.RECIPES["gru"]["warmup_steps"],
    )
    assert {c.name for c in E.CLAIMS if c.control} == {"07.same_recipe_control"}


def test_greedy_cases_use_valid_batches():
    for case in L.greedy_cases():
        _, src, lengths, max_steps = case.args
        decoding.check_source(src, lengths)
        assert max_steps >= 1 and int((src == data.PAD).sum()) == int(src.numel() - lengths.sum())
