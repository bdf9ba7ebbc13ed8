"""Property tests (hypothesis): what must hold for every shape, mask and input."""

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import attention, efficient, masks
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


# ------------------------------------------------------------------------------------------------
# Every backend against the oracle: shapes with 0 and 1 on every axis, both float dtypes, masks of
# every rank. NumPy's own broadcasting decides acceptance; PyTorch's SDPA decides the values.
# ------------------------------------------------------------------------------------------------

sizes = st.integers(0, 3)
DTYPES = {"float32": (np.float32, 1e-5), "float64": (np.float64, 1e-12)}


@st.composite
def attention_inputs(draw):
    batch = tuple(draw(st.lists(sizes, max_size=2)))
    k_batch = tuple(draw(st.sampled_from([n, 1])) for n in batch)  # keys may broadcast over query batch axes
    q_len, k_len, d_value = draw(sizes), draw(sizes), draw(sizes)
    d_head = draw(st.integers(0, 3))  # 0: refused everywhere (scores divide by sqrt(d_head))
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    scores_shape = (*batch, q_len, k_len)
    mask_shape = None
    if draw(st.booleans()):
        rank = draw(st.integers(0, len(scores_shape) + 1))  # one more than the scores: refused (it would grow them)
        padded = (1,) * (rank - len(scores_shape)) + scores_shape[max(0, len(scores_shape) - rank) :]
        # each mask axis: the scores' size, 1 (broadcast), or sometimes a wrong size
        mask_shape = tuple(draw(st.sampled_from([n, 1, n, 1, 2, 0])) for n in padded)
    return batch, k_batch, q_len, k_len, d_head, d_value, dtype, mask_shape, draw(seeds)


def _run(call):
    try:
        return call(), None
    except (TypeError, ValueError) as err:
        return None, (type(err), str(err))


@settings(max_examples=250, deadline=None)
@given(case=attention_inputs(), q_block=st.integers(1, 4), k_block=st.integers(1, 4))
def test_every_backend_agrees_with_the_oracle(case, q_block, k_block):
    batch, k_batch, q_len, k_len, d_head, d_value, dtype_name, mask_shape, seed = case
    dtype, atol = DTYPES[dtype_name]
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((*batch, q_len, d_head)).astype(dtype)
    k = rng.standard_normal((*k_batch, k_len, d_head)).astype(dtype)
    v = rng.standard_normal((*k_batch, k_len, d_value)).astype(dtype)
    mask = None if mask_shape is None else np.asarray(rng.random(mask_shape) > 0.3)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    tmask = None if mask is None else torch.from_numpy(mask)

    results = {
        "numpy": _run(lambda: na.scaled_dot_product_attention(q, k, v, mask)),
        "torch": _run(lambda: attention.scaled_dot_product_attention(tq, tk, tv, tmask)),
        "naive": _run(lambda: efficient.naive_attention(q, k, v, mask)),
        "tiled": _run(lambda: efficient.tiled_attention(q, k, v, mask, q_block=q_block, k_block=k_block)),
    }
    # same acceptance, same words: every backend raises the same error, or none does
    errors = {name: error for name, (_, error) in results.items()}
    assert len(set(errors.values())) == 1, errors
    scores_shape = (*np.broadcast_shapes(batch, k_batch), q_len, k_len)
    try:
        mask_fits = mask is None or np.broadcast_shapes(mask.shape, scores_shape) == scores_shape
    except ValueError:
        mask_fits = False
    assert (errors["numpy"] is None) == (d_head > 0 and mask_fits), (errors["numpy"], d_head, mask_shape, scores_shape)
    if errors["numpy"] is not None:
        return

    (out_np, w_np), (out_t, w_t) = results["numpy"][0], results["torch"][0]
    outputs = {"numpy": out_np, "torch": out_t.numpy(), "naive": results["naive"][0], "tiled": results["tiled"][0]}
    out_shape = (*np.broadcast_shapes(batch, k_batch), q_len, d_value)
    for name, out in outputs.items():
        assert out.shape == out_shape and out.dtype == dtype, (name, out.shape, out.dtype)
        assert np.isfinite(out).all(), name
    assert w_np.dtype == dtype and w_t.dtype == tq.dtype and w_np.shape == scores_shape
    np.testing.assert_allclose(w_t.numpy(), w_np, atol=atol, rtol=0)

    # the oracle: PyTorch's own SDPA. Rows with no allowed key (fully masked, or k_len = 0) are zeros in
    # every backend of ours; PyTorch may give NaN there, so compare the other rows with it.
    allowed = np.ones(scores_shape, bool) if mask is None else np.broadcast_to(mask, scores_shape)
    has_key = allowed.any(-1)  # (..., q_len)
    attn_mask = None if mask is None else torch.from_numpy(np.array(allowed))
    oracle = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=attn_mask).numpy()
    for name, out in outputs.items():
        np.testing.assert_allclose(out[has_key], oracle[has_key], atol=10 * atol, rtol=0, err_msg=name)
        assert (out[~has_key] == 0).all(), name


@st.composite
def mha_inputs(draw):
    batch, q_len, k_len = draw(sizes), draw(sizes), draw(sizes)
    num_heads, d_head = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["none", "padding", "causal", "full", "heads"]))
    return batch, q_len, k_len, num_heads, d_head, kind, draw(st.sampled_from(sorted(DTYPES))), draw(seeds)


@settings(max_examples=120, deadline=None)
@given(case=mha_inputs())
def test_multi_head_backends_agree_with_torch_multihead_attention(case):
    batch, q_len, k_len, num_heads, d_head, kind, dtype_name, seed = case
    dtype, atol = DTYPES[dtype_name]
    d_model = num_heads * d_head
    rng = np.random.default_rng(seed)
    query = rng.standard_normal((batch, q_len, d_model)).astype(dtype)
    memory = rng.standard_normal((batch, k_len, d_model)).astype(dtype)
    mask = {
        "none": None,
        "padding": (np.arange(k_len) < rng.integers(0, k_len + 1, size=(batch, 1, 1, 1))),  # (batch, 1, 1, k_len)
        "causal": np.tril(np.ones((q_len, k_len), bool), k_len - q_len),  # (q_len, k_len)
        "full": rng.random((batch, 1, q_len, k_len)) > 0.4,
        "heads": rng.random((1, num_heads, q_len, k_len)) > 0.4,
    }[kind]
    torch.manual_seed(seed % 1000)
    oracle = torch.nn.MultiheadAttention(d_model, num_heads, batch_first=True).to(torch.from_numpy(query).dtype).eval()
    ours = attention.MultiHeadAttention.from_torch(oracle).eval()
    W = [p.detach().numpy().T for p in (ours.query_proj.weight, ours.key_proj.weight, ours.value_proj.weight)]
    W_o = ours.out_proj.weight.detach().numpy().T
    tq, tm = torch.from_numpy(query), torch.from_numpy(memory)
    tmask = None if mask is None else torch.from_numpy(np.array(mask))
    with torch.no_grad():
        out, weights = ours(tq, tm, tm, mask=tmask)
        fused, none = ours(tq, tm, tm, mask=tmask, need_weights=False)
    assert none is None and out.dtype == tq.dtype and out.shape == (batch, q_len, d_model)
    assert weights.shape == (batch, num_heads, q_len, k_len)
    torch.testing.assert_close(fused, out, atol=10 * atol, rtol=0)
    # NumPy has no biases: compare the core (before out_proj's bias) through a bias-free copy
    core = out - ours.out_proj.bias.detach()
    np_out, np_w = na.multi_head_attention(query, memory, memory, *W, W_o, num_heads, mask=mask)
    assert np_out.dtype == dtype and np_w.dtype == dtype
    np.testing.assert_allclose(np_out, core.numpy(), atol=10 * atol, rtol=0)
    np.testing.assert_allclose(np_w, weights.numpy(), atol=atol, rtol=0)

    allowed = np.ones((batch, num_heads, q_len, k_len), bool) if mask is None else np.broadcast_to(mask, weights.shape)
    has_key = allowed.any(-1).all(1)  # (batch, q_len): rows where every head has a key
    assert (weights.numpy()[~allowed] == 0).all()
    if batch == 0 or q_len == 0 or k_len == 0:
        return  # nn.MultiheadAttention does not take empty sequences; ours gave the right shapes above
    attn_mask = None if mask is None else torch.from_numpy(~np.array(allowed)).reshape(batch * num_heads, q_len, k_len)
    with torch.no_grad():
        expected, expected_w = oracle(tq, tm, tm, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(out.numpy()[has_key], expected.numpy()[has_key], atol=10 * atol, rtol=0)
    keep = np.broadcast_to(has_key[:, None, :, None], weights.shape)
    np.testing.assert_allclose(weights.numpy()[keep], expected_w.numpy()[keep], atol=atol, rtol=0)


@settings(max_examples=40, deadline=None)
@given(batch=dims, q_len=dims, k_len=dims, seed=seeds)
def test_key_mask_is_the_4d_mask_and_a_2d_padding_mask_is_refused_when_shapes_differ(batch, q_len, k_len, seed):
    """key_mask (batch, k_len) equals mask=(batch, 1, 1, k_len); a (batch, k_len) 2-D mask is refused
    exactly when batch != q_len (when batch == q_len it is also a valid (q_len, k_len) mask)."""
    g = torch.Generator().manual_seed(seed)
    module = attention.MultiHeadAttention(8, 2).double().eval()
    x = torch.randn(batch, q_len, 8, generator=g, dtype=torch.float64)
    y = torch.randn(batch, k_len, 8, generator=g, dtype=torch.float64)
    padding = masks.make_padding_mask(torch.randint(1, k_len + 1, (batch,), generator=g), k_len)  # (batch, k_len)
    with torch.no_grad():
        out, w = module(x, y, y, key_mask=padding)
        same, _ = module(x, y, y, mask=padding[:, None, None, :])
    assert torch.equal(out, same)
    assert (w.masked_select(~padding[:, None, None, :].expand_as(w)) == 0).all()
    try:
        module(x, y, y, mask=padding)
        accepted = True
    except ValueError as err:
        accepted = False
        assert "key_mask=" in str(err)
    assert accepted == (batch == q_len)  # equal shapes: indistinguishable, hence key_mask
