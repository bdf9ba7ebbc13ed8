"""The tools lesson authors build cases with: distinct sizes, large scores, padding, and the counting drivers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course_utils import efficient
from course_utils.checking import cases, engine, preparing
from course_utils.checking.model import AnswerRefused, Case, Exercise
from course_utils.lessons.lesson_06 import exercises as lesson_06


def test_distinct_sizes_refuses_two_axes_of_one_size():
    assert cases.distinct_sizes(batch=2, q_len=3, k_len=5, d_model=8) == (2, 3, 5, 8)
    assert cases.distinct_sizes(batch=1, heads=1, q_len=4) == (1, 1, 4)  # 1 is a broadcast axis, not a size
    with pytest.raises(ValueError, match="q_len and batch are both 3"):
        cases.distinct_sizes(batch=3, q_len=3)
    assert cases.coinciding_axes(np.zeros((2, 3, 3))) == [3] and cases.coinciding_axes(np.zeros((2, 1, 1, 5))) == []


def test_padded_lengths_leave_every_row_short_of_the_width():
    for batch, max_len in ((1, 2), (3, 6), (5, 9)):
        lengths = cases.padded_lengths(batch, max_len)
        assert len(lengths) == batch == len(set(lengths))
        assert max(lengths) < max_len and min(lengths) >= 1
        if batch > 1:
            assert min(lengths) < max(lengths)
    with pytest.raises(ValueError, match="batch must lie in"):
        cases.padded_lengths(6, 6)


def test_large_scores_overflow_a_naive_softmax_only():
    scores = cases.large_scores((2, 3, 4), 0)
    with np.errstate(all="ignore"):
        naive = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    assert np.isnan(naive).any() and np.abs(scores).max() > 900


def test_the_kv_cache_driver_is_causal_attention_with_a_right_step():
    x, w_q, w_k, w_v = preparing.prepare(lesson_06.KV_CACHE_STEP).cases[2]
    out = cases.decode_counting_projections(lesson_06.kv_cache_step, x, w_q, w_k, w_v)
    assert np.allclose(out, efficient.naive_attention(x @ w_q, x @ w_k, x @ w_v, causal=True))


@pytest.mark.parametrize("project", ["matmul", "dot", "einsum", "transposed"])
def test_the_kv_cache_driver_counts_every_way_of_projecting(project):
    def step(x_t, k_cache, v_cache, w_q, w_k, w_v):
        prefix = np.vstack([k_cache @ np.zeros((k_cache.shape[1], x_t.shape[0])), x_t])  # (t + 1, d_model)
        if project == "matmul":
            keys = prefix @ w_k
        elif project == "dot":
            keys = np.dot(prefix, w_k)
        elif project == "einsum":
            keys = np.einsum("td,dh->th", prefix, w_k)
        else:
            keys = (w_k.T @ prefix.T).T
        return lesson_06.kv_cache_step(x_t, keys[:-1], v_cache, w_q, w_k, w_v)

    x, w_q, w_k, w_v = preparing.prepare(lesson_06.KV_CACHE_STEP).cases[1]
    with pytest.raises(AnswerRefused, match="projects 2 positions with w_k"):
        cases.decode_counting_projections(step, x, w_q, w_k, w_v)


# ---- a training-step exercise, as a lesson author would declare it ---------------------------------------------
def _training_cases():
    with cases.torch_seeded(0):
        model = torch.nn.Linear(3, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 3)
        batches = [(x, torch.randn(4, 2)), (x, torch.randn(4, 2)), (x, 1e4 * torch.randn(4, 2))]  # one huge gradient
    return [Case((model, optimizer, batches, 1.0), "stale gradients, then a huge one")]


def _train_step(model, optimizer, batch, max_norm):
    x, y = batch
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()


def _no_zero_grad(model, optimizer, batch, max_norm):
    x, y = batch
    loss = F.mse_loss(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()


def _no_clip(model, optimizer, batch, max_norm):
    x, y = batch
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


TRAIN_STEP = Exercise(
    id="99.train_step",
    section="99 · Training",
    make_cases=_training_cases,
    reference=_train_step,
    hints=("?", "idea", "step"),
    output_names=("losses", "parameters"),
    driver=cases.run_training_steps,
)


def test_the_training_driver_sees_a_missing_zero_grad_and_a_missing_clip():
    assert engine.judge(TRAIN_STEP, _train_step).status == "passed"
    for wrong in (_no_zero_grad, _no_clip):
        verdict = engine.judge(TRAIN_STEP, wrong)
        assert verdict.status == "wrong" and "max_norm=1.0" in verdict.detail, verdict.detail
