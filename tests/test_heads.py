"""Tests for course_utils.heads: per-head measurements and the toy task where heads specialize."""

import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import heads, numpy_attention
from course_utils.attention import MultiHeadAttention

SEQ_LEN = 6


def _pattern(kind: str, n: int = SEQ_LEN) -> np.ndarray:
    """One-hot attention patterns (n, n): every row sums to 1."""
    w = np.zeros((n, n))
    for i in range(n):
        j = {"previous": max(i - 1, 0), "first": 0, "self": i, "last": n - 1}[kind]
        w[i, j] = 1.0
    return w


def test_entropy_of_one_hot_and_uniform_rows():
    w = np.stack([_pattern("self"), np.full((SEQ_LEN, SEQ_LEN), 1 / SEQ_LEN)])
    entropy = heads.attention_entropy(w)
    assert entropy.shape == (2, SEQ_LEN)
    np.testing.assert_allclose(entropy[0], 0.0, atol=1e-15)
    np.testing.assert_allclose(entropy[1], np.log(SEQ_LEN), rtol=1e-12)
    assert heads.max_entropy(SEQ_LEN) == pytest.approx(np.log(SEQ_LEN))


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k_len=st.integers(1, 20), scale=st.sampled_from([0.1, 1.0, 10.0, 100.0]))
def test_entropy_lies_between_zero_and_ln_k_len(seed, k_len, scale):
    rng = np.random.default_rng(seed)
    w = numpy_attention.softmax(rng.normal(size=(3, 5, k_len)) * scale)
    entropy = heads.attention_entropy(w)
    assert entropy.shape == (3, 5)
    assert np.all(entropy >= -1e-12)
    assert np.all(entropy <= heads.max_entropy(k_len) + 1e-12)


def test_head_entropy_accepts_torch_and_batches():
    w = torch.softmax(torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(0)), dim=-1)
    per_head = heads.head_entropy(w)
    assert per_head.shape == (3,)
    np.testing.assert_allclose(per_head, heads.attention_entropy(w.numpy()).mean(axis=(0, 2)))


def test_entropy_rejects_scores():
    with pytest.raises(ValueError, match="non-negative"):
        heads.attention_entropy(np.array([[-1.0, 2.0]]))


def test_head_similarity_identical_and_disjoint_heads():
    w = np.stack([_pattern("first"), _pattern("first"), _pattern("last")])
    sim = heads.head_similarity(w)
    assert sim.shape == (3, 3)
    np.testing.assert_allclose(sim, sim.T)
    np.testing.assert_allclose(np.diag(sim), 1.0)
    assert sim[0, 1] == pytest.approx(1.0)
    assert sim[0, 2] == pytest.approx(0.0)


def test_role_scores_recognise_patterns():
    w = np.stack([_pattern(kind) for kind in ("previous", "first", "self")])
    w = np.concatenate([w, np.full((1, SEQ_LEN, SEQ_LEN), 1 / SEQ_LEN)])  # head 3: uniform
    ids = np.array([0, 1, 2, 0, 1, 2])
    scores = heads.head_role_scores(w, match_ids=ids)
    assert set(scores) == set(heads.ROLES)
    np.testing.assert_allclose(scores["previous"], [1, 1 / (SEQ_LEN - 1), 0, 1 / SEQ_LEN])
    np.testing.assert_allclose(scores["first"], [1 / (SEQ_LEN - 1), 1, 0, 1 / SEQ_LEN])  # query 1's previous is 0
    np.testing.assert_allclose(scores["self"], [1 / SEQ_LEN, 1 / SEQ_LEN, 1, 1 / SEQ_LEN])
    # twins are 3 apart: the previous-token and self heads never look at a twin; the first-token
    # head does only for query 3 (twin of token 0): 1 of 6 queries
    np.testing.assert_allclose(scores["matching"], [0, 1 / SEQ_LEN, 0, 1 / SEQ_LEN])
    twin = np.zeros((SEQ_LEN, SEQ_LEN))
    twin[np.arange(SEQ_LEN), (np.arange(SEQ_LEN) + 3) % SEQ_LEN] = 1.0
    assert heads.head_role_scores(twin[None], match_ids=ids)["matching"][0] == pytest.approx(1.0)


def test_role_scores_reject_cross_attention_shapes():
    with pytest.raises(ValueError, match="q_len == k_len"):
        heads.head_role_scores(np.ones((2, 3, 4)) / 4)
    with pytest.raises(ValueError, match="match_ids"):
        heads.head_role_scores(np.ones((2, 3, 3)) / 3, match_ids=np.arange(4))


def test_role_task_is_consistent():
    task = heads.make_role_task(50, seq_len=10, num_shapes=8, num_colours=4, seed=3)
    assert task.tokens.shape == (50, 10)
    torch.testing.assert_close(task.tokens, task.shapes * 4 + task.colours)
    counts = torch.nn.functional.one_hot(task.shapes, 8).sum(1)  # (batch, num_shapes)
    assert set(counts.unique().tolist()) == {0, 2}  # every shape present occurs exactly twice
    assert (task.targets["previous"][:, 0] == heads.IGNORE_INDEX).all()
    torch.testing.assert_close(task.targets["previous"][:, 1:], task.colours[:, :-1])
    torch.testing.assert_close(task.targets["first"], task.colours[:, :1].expand(-1, 10))
    for b in range(5):
        for i in range(10):
            j = [j for j in range(10) if j != i and task.shapes[b, j] == task.shapes[b, i]]
            assert len(j) == 1 and task.targets["matching"][b, i] == task.colours[b, j[0]]
    again = heads.make_role_task(50, seq_len=10, num_shapes=8, num_colours=4, seed=3)
    torch.testing.assert_close(again.tokens, task.tokens)
    assert heads.token_labels(task, 0)[0] == "ABCDEFGH"[task.shapes[0, 0]] + "rgby"[task.colours[0, 0]]


def test_ablate_heads_zeroes_their_share_and_cleans_up():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 5, 8)
    full, _ = mha(x, x, x)
    with heads.ablate_heads(mha, [0, 1]):
        none, _ = mha(x, x, x)
    torch.testing.assert_close(none, mha.out_proj.bias.expand_as(none))
    with heads.ablate_heads(mha, 1):
        only0, _ = mha(x, x, x)
    with heads.ablate_heads(mha, 0):
        only1, _ = mha(x, x, x)
    # the output projection is linear: the heads' contributions add up
    torch.testing.assert_close(only0 + only1 - mha.out_proj.bias, full)
    torch.testing.assert_close(mha(x, x, x)[0], full)  # hook removed
    with pytest.raises(ValueError, match="num_heads"):
        with heads.ablate_heads(mha, 2):
            pass


def test_untrained_heads_do_not_specialise():
    torch.manual_seed(0)
    model = heads.RoleModel().eval()
    task = heads.make_role_task(256, seed=1)
    with torch.no_grad():
        _, w = model(task.tokens)
    scores = heads.head_role_scores(w, task.shapes)
    for role, values in scores.items():
        assert values.max() < 0.3, (role, values)
    assert heads.head_entropy(w).min() > 0.8 * heads.max_entropy(w.shape[-1])


def test_training_is_deterministic():
    _, a = heads.train_role_model(steps=5, seed=7)
    _, b = heads.train_role_model(steps=5, seed=7)
    assert a == b


def _check_specialised(seed):
    model, losses = heads.train_role_model(seed=seed)
    task = heads.make_role_task(512, seed=12345)
    accuracy = heads.role_accuracy(model, task)
    assert min(accuracy.values()) > 0.95, accuracy
    with torch.no_grad():
        _, w = model(task.tokens)
    scores = heads.head_role_scores(w, task.shapes)
    best = {role: int(np.argmax(scores[role])) for role in heads.TARGETS}
    assert len(set(best.values())) == 3, (best, scores)  # three different heads
    for role, head in best.items():
        assert scores[role][head] > 0.75, (role, scores[role])
    # causal check: the heads that score > 0.5 on a role are necessary (switching them off drops that
    # answer towards chance, 1 / num_colours) and sufficient (switching off all others keeps it)
    all_heads = set(range(model.config.num_heads))
    for role in heads.TARGETS:
        role_heads = [h for h in all_heads if scores[role][h] > 0.5]
        with heads.ablate_heads(model.attention, role_heads):
            without = heads.role_accuracy(model, task)
        with heads.ablate_heads(model.attention, sorted(all_heads - set(role_heads))):
            only = heads.role_accuracy(model, task)
        assert without[role] < 0.5, (role, role_heads, without)
        assert only[role] > 0.9, (role, role_heads, only)
    return losses


def test_trained_toy_model_heads_take_distinct_roles():
    start = time.perf_counter()
    losses = _check_specialised(seed=0)
    assert losses[-1] < 0.05 * losses[0]
    assert time.perf_counter() - start < 30  # about 2 s on one idle CPU thread


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7])
def test_trained_toy_model_specialises_for_other_seeds(seed):
    _check_specialised(seed)


@pytest.mark.slow
def test_head_roles_benchmark_reports_each_seed():
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "head_roles.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--seeds", "2", "--json"], check=True, capture_output=True, text=True, timeout=300
    )
    result = json.loads(proc.stdout)
    assert [row["seed"] for row in result["per_seed"]] == [0, 1]
    assert result["summary"]["seeds"] == 2
    for key in ("roles_held", "ablation_held", "spare_copies", "cheap_head"):
        assert result["summary"][key] == sum(
            bool(row[key if key != "cheap_head" else "cheap_heads"]) for row in result["per_seed"]
        )
    assert all(0 <= row["spare_max_similarity"] <= 1.0001 for row in result["per_seed"])
    assert [set(c) for c in result["claims"]] == [{"claim", "lesson", "seeds", "held"}] * 4
    assert result["claims"][0]["held"] == result["summary"]["roles_held"] and result["claims"][0]["seeds"] == 2
