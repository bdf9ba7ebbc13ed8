"""Training steps and modules named by mutations of their reference (issue 26 §2, round 4).

A training step's order, a clip or a loss swapped for its twin, a field of the batch for its sibling, a mask
ignored inside a module: each answer below is a mistake no catalogue entry was written for in that exercise, and
each test fails without ``course_utils/checking/step_sites.py`` (or, for the module, without the class mutants
that vary the course functions its ``forward`` calls).
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap

import torch
import torch.nn.functional as F

from course_utils import attention, data
from course_utils.checking import engine, mutations, preparing, registry
from course_utils.checking.step_sites import step_sites


def _judge(exercise_id, answer):
    return engine.judge(registry.get(exercise_id), answer)


def _loss(model, batch, **kwargs):
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)  # (batch, tgt_len, vocab)
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD, **kwargs
    )


def test_every_call_of_a_step_is_moved_and_dropped_and_the_loss_varied():
    def step(model, optimizer, batch):
        loss = F.mse_loss(model(batch.x), batch.y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    keys = [site[0] for site in step_sites(ast.parse(_source(step)))]
    assert {"call:dropped:zero_grad", "call:moved:zero_grad", "call:moved:step", "clip:added"} <= set(keys)
    assert {"loss:summed", "loss:twin", "sibling:field"} <= set(keys)
    assert keys.count("call:moved:backward") == 2  # before zero_grad, after step


def _source(fn):
    return textwrap.dedent(inspect.getsource(fn))


def test_zero_grad_after_backward_is_named_as_a_call_at_another_point():
    def my_train_step(model, optimizer, batch):
        loss = _loss(model, batch)
        loss.backward()
        optimizer.zero_grad()  # after backward: the step sees zero gradients
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    verdict = _judge("08.my_train_step", my_train_step)
    assert verdict.relation == "mutant:call:moved:zero_grad", verdict.detail
    assert "`zero_grad()` called at another point" in verdict.detail


def test_a_per_entry_clip_and_a_summed_loss_are_named():
    def per_entry(model, optimizer, batch):
        loss = _loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    def summed(model, optimizer, batch):
        loss = _loss(model, batch, reduction="sum")
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    verdict = _judge("08.my_train_step", per_entry)
    assert verdict.relation == "mutant:clip:per_entry", verdict.detail
    verdict = _judge("08.my_train_step", summed)
    assert verdict.relation == "mutant:loss:summed", verdict.detail
    assert "clip_grad_norm_" not in verdict.detail  # the words never quote the reference's code


def test_the_decoder_input_as_target_is_named_by_the_field_used():
    def my_train_step(model, optimizer, batch):
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), batch.decoder_input.reshape(-1), ignore_index=data.PAD
        )
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    verdict = _judge("08.my_train_step", my_train_step)
    assert verdict.relation == "mutant:sibling:field", verdict.detail
    assert "`batch.decoder_input` used where another field of `batch` belongs" in verdict.detail


def test_an_l1_loss_and_an_unasked_clip_in_lesson_04s_step_are_named():
    def l1(model, optimizer, batch):
        query, keys, values, target, _ = batch
        output, _ = model(query, keys, values)
        loss = (output - target).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    def clipped(model, optimizer, batch):
        query, keys, values, target, _ = batch
        output, _ = model(query, keys, values)
        loss = F.mse_loss(output, target)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    assert _judge("04.train_step", l1).relation == "mutant:loss:twin"
    assert _judge("04.train_step", clipped).relation == "mutant:clip:added"


def test_a_class_is_varied_inside_the_course_functions_its_forward_calls():
    """Lesson 04's module calls the course's masked softmax: a fill of 0 there is a mutant of the class."""
    exercise = registry.get("04.multi_head_module")
    codes = preparing.prepare(exercise).codes
    keys = {m.key.rsplit(":", 2)[0] for m in mutations.mutants(exercise.reference, codes)}
    assert "mutant:fill:zero" in keys  # only in attention._masked_softmax, not in the class's own methods
    assert "mutant:fill:zero" not in {m.key.rsplit(":", 2)[0] for m in mutations.mutants(exercise.reference)}


def test_a_module_that_fills_masked_scores_with_zero_is_named():
    class MyMultiHeadAttention(torch.nn.Module):
        def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
            super().__init__()
            self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
            self.query_proj = torch.nn.Linear(d_model, d_model, bias=bias)
            self.key_proj = torch.nn.Linear(d_model, d_model, bias=bias)
            self.value_proj = torch.nn.Linear(d_model, d_model, bias=bias)
            self.out_proj = torch.nn.Linear(d_model, d_model, bias=bias)
            self.dropout = torch.nn.Dropout(dropout)

        def split_heads(self, t):
            batch, length, _ = t.shape
            # (batch, length, d_model) -> (batch, heads, length, d_head)
            return t.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)

        def forward(self, query, key, value, mask=None):
            batch, q_len, _ = query.shape
            q = self.split_heads(self.query_proj(query))  # (batch, heads, q_len, d_head)
            k = self.split_heads(self.key_proj(key))  # (batch, heads, k_len, d_head)
            v = self.split_heads(self.value_proj(value))  # (batch, heads, k_len, d_head)
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (batch, heads, q_len, k_len)
            if mask is not None:
                has_key = mask.any(dim=-1, keepdim=True)
                scores = scores.masked_fill(~mask, 0.0)
                weights = torch.softmax(scores, dim=-1) * has_key
            else:
                weights = torch.softmax(scores, dim=-1)
            weights = self.dropout(weights)
            # (batch, heads, q_len, d_head) -> (batch, q_len, d_model)
            concat = (weights @ v).transpose(1, 2).reshape(batch, q_len, self.d_model)
            return self.out_proj(concat), weights

    verdict = _judge("04.multi_head_module", MyMultiHeadAttention)
    assert verdict.relation == "mutant:fill:zero", verdict.detail


def test_a_layer_left_out_and_keys_and_values_from_another_tensor_are_sites():
    def forward(self, x, memory, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask)[0]
        return self.cross_attn(self.norm2(x), memory, memory)[0]

    sites = step_sites(ast.parse(_source(forward)))
    skipped = [ast.unparse(site[4][1]) for site in sites if site[0] == "layer:skipped"]
    assert skipped == ["x", "x"]  # norm1(x) -> x, norm2(x) -> x
    repeated = {ast.unparse(site[4][1]) for site in sites if site[0] == "input:repeated"}
    assert "self.self_attn(h, x, x, mask=mask)" in repeated  # keys and values from the raw x
    assert "self.cross_attn(self.norm2(x), h, h)" in repeated
    assert not any("mask, mask" in text for text in repeated)  # a mask is no tensor of data


def test_an_encoder_layer_whose_keys_and_values_skip_the_norm_is_named():
    class EncoderLayer(torch.nn.Module):
        def __init__(self, d_model, num_heads, d_ff):
            super().__init__()
            self.norm1 = torch.nn.LayerNorm(d_model)
            self.self_attn = attention.MultiHeadAttention(d_model, num_heads)
            self.norm2 = torch.nn.LayerNorm(d_model)
            nn = torch.nn
            self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

        def forward(self, x, mask):
            h = self.norm1(x)
            x = x + self.self_attn(h, x, x, mask=mask)[0]  # keys and values from the raw x
            return x + self.ffn(self.norm2(x))

    verdict = _judge("08.encoder_layer", EncoderLayer)
    assert verdict.relation == "mutant:input:repeated", verdict.detail


def test_a_torch_function_a_course_module_imports_is_never_varied():
    """A mutant of torch's own code (``pad_packed_sequence``, bound in a lesson module) can crash the process."""
    exercise = registry.get("07.encoder")
    codes = preparing.prepare(exercise).codes
    varied = {m.key.rsplit(":", 2)[1] for m in mutations.mutants(exercise.reference, codes)}
    assert "pad_packed_sequence" not in varied and "pack_padded_sequence" not in varied
    assert varied  # the course's own steps still are


def _positions(num_positions, d_model, *, start=0, pair_index=False, sign=-1.0):
    # (num_positions, 1): positions start, start + 1, ...
    positions = torch.arange(start, num_positions + start, dtype=torch.float32)[:, None]
    exponent = torch.arange(0, d_model // 2, dtype=torch.float32) if pair_index else torch.arange(0, d_model, 2)
    inv_freq = 10000.0 ** (sign * exponent.float() / d_model)  # (d_model / 2,)
    angles = positions * inv_freq  # (num_positions, d_model / 2)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def test_positions_counted_from_one_an_exponent_without_its_step_and_a_lost_sign_are_named():
    def from_one(num_positions, d_model):
        return _positions(num_positions, d_model, start=1)

    def pair_index(num_positions, d_model):
        return _positions(num_positions, d_model, pair_index=True)

    def multiplied(num_positions, d_model):
        return _positions(num_positions, d_model, sign=1.0)

    assert _judge("08.my_positions", from_one).relation in ("mutant:count:from_one", "mutant:positions:from_one")
    assert _judge("08.my_positions", pair_index).relation == "mutant:count:step_left_out"
    assert _judge("08.my_positions", multiplied).relation == "mutant:sign:dropped"


def test_a_softmax_backward_without_a_factor_or_over_another_axis_is_named():
    def no_leading_w(weights, grad_weights):
        return grad_weights - (grad_weights * weights).sum(dim=-1, keepdim=True)

    def plain_row_sum(weights, grad_weights):
        return weights * (grad_weights - grad_weights.sum(dim=-1, keepdim=True))

    def whole_sum(weights, grad_weights):
        return weights * (grad_weights - (grad_weights * weights).sum())

    def first_axis(weights, grad_weights):
        return weights * (grad_weights - (grad_weights * weights).sum(dim=0, keepdim=True))

    assert _judge("04.softmax_backward", no_leading_w).relation in (
        "mutant:factor:term_dropped",
        "mutant:factor:dropped",
    )
    assert _judge("04.softmax_backward", plain_row_sum).relation in (
        "mutant:factor:term_dropped",
        "mutant:factor:dropped",
    )
    assert _judge("04.softmax_backward", whole_sum).relation == "mutant:axis:everything"
    assert _judge("04.softmax_backward", first_axis).relation == "mutant:axis:first"
