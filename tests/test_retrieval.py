"""Lesson 04's retrieval task (course_utils.retrieval) and its experiment (course_utils.lessons.lesson_04.experiments)."""

from __future__ import annotations

import json

import pytest
import torch

from course_utils import attention, retrieval


def test_batch_shapes_and_the_target_is_the_copied_keys_value():
    query, keys, values, target, index = retrieval.make_batch(torch.Generator().manual_seed(3), 5, n_keys=6)
    assert tuple(query.shape) == (5, 1, retrieval.D_MODEL) and tuple(target.shape) == (5, 1, retrieval.D_MODEL)
    assert tuple(keys.shape) == tuple(values.shape) == (5, 6, retrieval.D_MODEL)
    assert index.dtype == torch.int64 and tuple(index.shape) == (5,) and 0 <= int(index.min()) <= int(index.max()) < 6
    rows = torch.arange(5)
    assert torch.equal(target[:, 0], values[rows, index])
    # the query is the copied key plus noise of standard deviation NOISE: closest to its own key
    assert torch.equal(torch.cdist(query, keys)[:, 0].argmin(dim=-1), index)
    noise = query[:, 0] - keys[rows, index]
    assert 0.1 < float(noise.std()) < 0.6


def test_batches_are_deterministic_and_noise_zero_copies_the_key():
    a = retrieval.make_batch(torch.Generator().manual_seed(1), 4)
    b = retrieval.make_batch(torch.Generator().manual_seed(1), 4)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    query, keys, _, _, index = retrieval.make_batch(torch.Generator().manual_seed(2), 3, noise=0.0)
    assert torch.equal(query[:, 0], keys[torch.arange(3), index])


def test_weight_on_match_reads_the_copied_key_over_examples_and_heads():
    index = torch.tensor([2, 0])
    uniform = torch.full((2, 3, 1, 4), 0.25)
    assert retrieval.weight_on_match(uniform, index) == pytest.approx(0.25)
    one_hot = torch.zeros(2, 1, 1, 4)
    one_hot[0, 0, 0, 2] = 1.0  # example 0 finds its key, example 1 looks elsewhere
    one_hot[1, 0, 0, 3] = 1.0
    assert retrieval.weight_on_match(one_hot, index) == pytest.approx(0.5)


def test_diagonal_dominance_tells_a_multiple_of_the_identity_from_noise():
    gen = torch.Generator().manual_seed(0)
    noise = torch.randn(16, 16, generator=gen)
    assert abs(retrieval.diagonal_dominance(noise)) < 1
    assert retrieval.diagonal_dominance(5 * torch.eye(16) + 0.1 * noise) > 20
    assert retrieval.diagonal_dominance(torch.tensor([[2.0, 1.0], [-1.0, 4.0]])) == pytest.approx(3.0)


def test_train_step_clears_stale_gradients_and_returns_a_float():
    torch.manual_seed(0)
    model = attention.MultiHeadAttention(retrieval.D_MODEL, 1)
    twin = attention.MultiHeadAttention(retrieval.D_MODEL, 1)
    twin.load_state_dict(model.state_dict())
    batch = retrieval.make_batch(torch.Generator().manual_seed(4), 8)
    for p in model.parameters():
        p.grad = torch.full_like(p, 100.0)  # stale
    loss = retrieval.train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), batch)
    loss_twin = retrieval.train_step(twin, torch.optim.SGD(twin.parameters(), lr=0.1), batch)
    assert isinstance(loss, float) and loss == pytest.approx(loss_twin)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), twin.parameters(), strict=True))


def test_train_calls_the_step_on_fresh_batches_of_the_seed():
    seen = []

    def step(model, optimizer, batch):
        seen.append(batch[0].clone())
        return 1.5

    assert retrieval.train(None, None, step=step, steps=3, batch_size=2, seed=7) == [1.5, 1.5, 1.5]
    first = retrieval.make_batch(torch.Generator().manual_seed(7), 2)[0]
    assert torch.equal(seen[0], first) and not torch.equal(seen[0], seen[1])


@pytest.fixture(scope="module")
def run0():
    from course_utils.lessons.lesson_04 import experiments as lesson_04

    return lesson_04.train_retriever(0)  # about 2 s on one thread


def test_the_lessons_run_holds_its_thresholds(run0):
    m = run0.measured
    assert m["before"] < 0.2 and m["after"] > 0.9 and m["last_loss"] < 0.2 * m["first_loss"]
    assert m["dominance_before"] < 1 < 5 < m["dominance_after"] and m["growth"] > 15
    assert len(run0.losses) == retrieval.STEPS and json.loads(json.dumps(m)) == m
    from course_utils.lessons.lesson_04 import experiments as lesson_04

    assert all(claim.holds(m) for claim in lesson_04.CLAIMS)


def test_the_experiment_starts_from_the_untrained_model_and_is_deterministic(run0):
    from course_utils.lessons.lesson_04 import experiments as lesson_04

    untrained, test_batch = lesson_04.untrained_retriever(0)
    assert torch.equal(lesson_04.qk_product(untrained), run0.qk_before)
    assert tuple(test_batch[0].shape) == (lesson_04.TEST_SIZE, 1, retrieval.D_MODEL)
    steps = []

    def counting_step(model, optimizer, batch):
        steps.append(1)
        return retrieval.train_step(model, optimizer, batch)

    again = lesson_04.train_retriever(0, step=counting_step)
    assert len(steps) == retrieval.STEPS and again.measured == run0.measured  # the student's step plugs in
