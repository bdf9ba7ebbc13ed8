"""Property tests (hypothesis): what must hold for every shape, mask and input."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import attention, masks
from course_utils import numpy_attention as na

dims = st.integers(min_value=1, max_value=6)
seeds = st.integers(min_value=0, max_value=2**31 - 1)


def _arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


@settings(max_examples=60, deadline=None)
@given(batch=dims, q_len=dims, k_len=dims, d_head=dims, d_value=dims, seed=seeds)
def test_weights_rows_sum_to_one_and_output_shape(batch, q_len, k_len, d_head, d_value, seed):
    q, k, v = _arrays(seed, (batch, q_len, d_head), (batch, k_len, d_head), (batch, k_len, d_value))
    out, w = na.scaled_dot_product_attention(q, k, v)
    assert out.shape == (batch, q_len, d_value)
    assert w.shape == (batch, q_len, k_len)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    assert (w >= 0).all()


@settings(max_examples=60, deadline=None)
@given(q_len=dims, k_len=dims, d_head=dims, seed=seeds)
def test_masked_weights_are_exactly_zero(q_len, k_len, d_head, seed):
    q, k, v = _arrays(seed, (q_len, d_head), (k_len, d_head), (k_len, 3))
    mask = np.random.default_rng(seed + 1).random((q_len, k_len)) > 0.5
    out, w = na.scaled_dot_product_attention(q, k, v, mask)
    assert (w[~mask] == 0).all()
    rows = mask.any(-1)
    np.testing.assert_allclose(w[rows].sum(-1), 1.0, atol=1e-12)
    assert (w[~rows] == 0).all() and (out[~rows] == 0).all()
    assert np.isfinite(out).all()
    out_t, w_t = attention.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), torch.from_numpy(mask)
    )
    np.testing.assert_allclose(w_t.numpy(), w, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seq_len=st.integers(2, 8), t=st.integers(0, 7), seed=seeds)
def test_future_tokens_cannot_change_earlier_outputs(seq_len, t, seed):
    t = t % seq_len
    torch.manual_seed(seed % 1000)
    module = attention.MultiHeadAttention(8, 2).double().eval()
    x = torch.randn(1, seq_len, 8, dtype=torch.float64)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :]) * 10
    causal = masks.make_causal_mask(seq_len)
    out, _ = module(x, x, x, mask=causal)
    out_changed, _ = module(changed, changed, changed, mask=causal)
    assert torch.equal(out[:, : t + 1], out_changed[:, : t + 1])


@settings(max_examples=40, deadline=None)
@given(seq_len=st.integers(2, 8), seed=seeds)
def test_permutation_equivariance_without_positions(seq_len, seed):
    torch.manual_seed(seed % 1000)
    module = attention.MultiHeadAttention(8, 2).double().eval()
    x = torch.randn(2, seq_len, 8, dtype=torch.float64)
    perm = torch.randperm(seq_len)
    out, w = module(x, x, x)
    out_p, w_p = module(x[:, perm], x[:, perm], x[:, perm])
    torch.testing.assert_close(out_p, out[:, perm], atol=1e-12, rtol=0)
    torch.testing.assert_close(w_p, w[:, :, perm][:, :, :, perm], atol=1e-12, rtol=0)


@settings(max_examples=40, deadline=None)
@given(batch=dims, seq_len=dims, heads=st.integers(1, 4), d_head=dims, seed=seeds)
def test_split_merge_roundtrip(batch, seq_len, heads, d_head, seed):
    (x,) = _arrays(seed, (batch, seq_len, heads * d_head))
    split = na.split_heads(x, heads)
    assert split.shape == (batch, heads, seq_len, d_head)
    np.testing.assert_array_equal(split[:, 1 % heads], x[:, :, (1 % heads) * d_head : (1 % heads + 1) * d_head])
    np.testing.assert_array_equal(na.merge_heads(split), x)


@settings(max_examples=40, deadline=None)
@given(shift=st.floats(-1e4, 1e4), seed=seeds)
def test_softmax_shift_invariant_and_stable(shift, seed):
    (x,) = _arrays(seed, (3, 5))
    np.testing.assert_allclose(na.softmax(x + shift), na.softmax(x), atol=1e-9)
    big = na.softmax(np.array([1e4, 1e4 - 1.0, -1e4]))
    assert np.isfinite(big).all() and abs(big.sum() - 1) < 1e-12
