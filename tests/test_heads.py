"""Tests for course_utils.heads: per-head measurements, and switching heads off."""

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


def test_switch_off_heads_zeroes_blocks_on_a_copy():
    concat = torch.arange(1.0, 25.0).reshape(1, 2, 12)  # 3 heads of d_head 4
    before = concat.clone()
    out = heads.switch_off_heads(concat, [0, 2], 3)
    torch.testing.assert_close(concat, before)  # the input is not changed
    assert out[..., :4].abs().max() == 0 and out[..., 8:].abs().max() == 0
    torch.testing.assert_close(out[..., 4:8], concat[..., 4:8])
    torch.testing.assert_close(heads.switch_off_heads(concat, [], 3), concat)
    torch.testing.assert_close(heads.switch_off_heads(concat, 1, 3), heads.switch_off_heads(concat, [1], 3))
    with pytest.raises(ValueError, match=r"head 3 is not in range\(num_heads=3\)"):
        heads.switch_off_heads(concat, [3], 3)
    with pytest.raises(ValueError, match="must split into num_heads=5 equal blocks"):
        heads.switch_off_heads(concat, [0], 5)
    with pytest.raises(TypeError, match="heads must be a head index or a list"):
        heads.switch_off_heads(concat, "0", 3)


@settings(max_examples=30, deadline=None)
@given(num_heads=st.integers(1, 6), d_head=st.integers(1, 4), data=st.data())
def test_switch_off_heads_is_a_mask_on_the_head_axis(num_heads, d_head, data):
    off = data.draw(st.lists(st.integers(0, num_heads - 1), max_size=num_heads))
    concat = torch.randn(2, 3, num_heads * d_head, generator=torch.Generator().manual_seed(num_heads * 10 + d_head))
    out = heads.switch_off_heads(concat, off, num_heads).view(2, 3, num_heads, d_head)
    keep = torch.ones(num_heads)
    keep[off] = 0.0
    torch.testing.assert_close(out, concat.view(2, 3, num_heads, d_head) * keep[:, None])


def test_ablate_heads_uses_the_switch_off_it_is_given():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 5, 8)
    seen = []

    def my_switch_off(concat, heads_off, num_heads):
        seen.append((tuple(concat.shape), list(heads_off), num_heads))
        return heads.switch_off_heads(concat, heads_off, num_heads)

    with heads.ablate_heads(mha, [1]):
        expected, _ = mha(x, x, x)
    with heads.ablate_heads(mha, [1], switch_off=my_switch_off):
        got, _ = mha(x, x, x)
    torch.testing.assert_close(got, expected)
    assert seen == [((2, 5, 8), [1], 2)]
    with heads.ablate_heads(mha, 0, switch_off=lambda concat, off, n: concat):  # a switch that does nothing
        torch.testing.assert_close(mha(x, x, x)[0], mha.forward(x, x, x)[0])
    with pytest.raises(TypeError, match="switch_off must be"):
        with heads.ablate_heads(mha, 0, switch_off="zero"):
            pass


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
