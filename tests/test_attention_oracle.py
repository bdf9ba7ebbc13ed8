"""Oracle tests: our attention against PyTorch's own implementations, in float64 with tight tolerances."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course_utils import attention, masks
from course_utils import numpy_attention as na

ATOL = 1e-12


def _qkv(batch=2, heads=3, q_len=4, k_len=6, d_head=8, d_value=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, q_len, d_head, generator=g, dtype=torch.float64)
    k = torch.randn(batch, heads, k_len, d_head, generator=g, dtype=torch.float64)
    v = torch.randn(batch, heads, k_len, d_value, generator=g, dtype=torch.float64)
    return q, k, v


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "random"])
def test_sdpa_matches_torch_sdpa(mask_kind):
    q, k, v = _qkv()
    if mask_kind == "none":
        mask = None
    elif mask_kind == "causal":
        mask = masks.make_causal_mask(4, 6)
    elif mask_kind == "padding":
        mask = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([3, 6]), 6))
    else:
        mask = torch.rand(2, 3, 4, 6, generator=torch.Generator().manual_seed(1)) > 0.3
        mask[0, 1, 2] = False  # one fully masked query row
    out, weights = attention.scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)
    assert weights.shape == (2, 3, 4, 6)


def test_fully_masked_row_is_zero_in_ours_and_in_torch_sdpa():
    q, k, v = _qkv()
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[2] = False
    out, weights = attention.scaled_dot_product_attention(q, k, v, mask)
    assert torch.equal(weights[..., 2, :], torch.zeros_like(weights[..., 2, :]))
    assert torch.equal(out[..., 2, :], torch.zeros_like(out[..., 2, :]))
    torch_out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.equal(torch_out[..., 2, :], torch.zeros_like(torch_out[..., 2, :]))


def test_fully_masked_row_has_finite_zero_gradient():
    q, k, v = (t.requires_grad_() for t in _qkv())
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[1] = False
    out, _ = attention.scaled_dot_product_attention(q, k, v, mask)
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert torch.equal(q.grad[..., 1, :], torch.zeros_like(q.grad[..., 1, :]))


def test_numpy_matches_torch():
    q, k, v = _qkv(seed=3)
    mask = masks.make_causal_mask(4, 6)
    out_t, w_t = attention.scaled_dot_product_attention(q, k, v, mask)
    out_n, w_n = na.scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy(), mask.numpy())
    np.testing.assert_allclose(out_n, out_t.numpy(), atol=ATOL, rtol=0)
    np.testing.assert_allclose(w_n, w_t.numpy(), atol=ATOL, rtol=0)


def _torch_mha(d_model=16, heads=4, bias=True, seed=0):
    torch.manual_seed(seed)
    module = torch.nn.MultiheadAttention(d_model, heads, bias=bias, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # non-zero biases so that a wrong bias copy cannot pass
        if bias:
            module.in_proj_bias.normal_()
            module.out_proj.bias.normal_()
    return module.eval()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("q_len,k_len", [(5, 5), (3, 7), (7, 2)])
def test_mha_matches_torch_multihead_attention(bias, q_len, k_len):
    theirs = _torch_mha(bias=bias)
    ours = attention.MultiHeadAttention.from_torch(theirs).eval()
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, q_len, 16, generator=g, dtype=torch.float64)
    y = torch.randn(2, k_len, 16, generator=g, dtype=torch.float64)
    expected, expected_w = theirs(x, y, y, need_weights=True, average_attn_weights=False)
    out, weights = ours(x, y, y)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(weights, expected_w, atol=ATOL, rtol=0)
    fused, none = ours(x, y, y, need_weights=False)
    assert none is None
    torch.testing.assert_close(fused, expected, atol=ATOL, rtol=0)


def test_mha_key_padding_matches_torch_with_inverted_convention():
    theirs = _torch_mha()
    ours = attention.MultiHeadAttention.from_torch(theirs).eval()
    x = torch.randn(3, 6, 16, dtype=torch.float64)
    padding = masks.make_padding_mask(torch.tensor([6, 4, 2]), 6)  # True = real token
    expected, _ = theirs(x, x, x, key_padding_mask=masks.to_key_padding_mask(padding))
    out, _ = ours(x, x, x, mask=masks.padding_to_attention_mask(padding))
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("q_len,k_len", [(3, 3), (4, 6), (2, 5)])
def test_mha_key_mask_argument_matches_torch(need_weights, q_len, k_len):
    """Our key_mask (True = real key) is nn.MultiheadAttention's key_padding_mask=~mask, batch == q_len included."""
    theirs = _torch_mha()
    ours = attention.MultiHeadAttention.from_torch(theirs).eval()
    g = torch.Generator().manual_seed(3)
    x = torch.randn(3, q_len, 16, generator=g, dtype=torch.float64)  # batch 3: equal to q_len in the first case
    y = torch.randn(3, k_len, 16, generator=g, dtype=torch.float64)
    padding = masks.make_padding_mask(torch.tensor([k_len, 1, k_len - 1]), k_len)  # (batch, k_len)
    expected, _ = theirs(x, y, y, key_padding_mask=~padding)
    out, weights = ours(x, y, y, key_mask=padding, need_weights=need_weights)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)
    if need_weights:
        assert (weights[1, :, :, 1:] == 0).all()  # the length-1 sequence: no weight on its padding


def test_mha_key_padding_and_causal_mask_combine_like_torch():
    theirs = _torch_mha()
    ours = attention.MultiHeadAttention.from_torch(theirs).eval()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    padding = masks.make_padding_mask(torch.tensor([5, 3]), 5)
    causal = masks.make_causal_mask(5)
    expected, _ = theirs(x, x, x, key_padding_mask=~padding, attn_mask=~causal)
    out, _ = ours(x, x, x, mask=causal, key_mask=padding)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)
    same, _ = ours(x, x, x, mask=masks.combine_masks(causal, masks.padding_to_attention_mask(padding)))
    torch.testing.assert_close(out, same, atol=0, rtol=0)


def test_padding_mask_as_2d_mask_is_silently_wrong_only_when_batch_equals_q_len():
    """The bug key_mask exists for: (batch, k_len) read as (q_len, k_len)."""
    module = attention.MultiHeadAttention(8, 2).double().eval()
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 3, 8, generator=g, dtype=torch.float64)  # batch == q_len == k_len == 3
    padding = masks.make_padding_mask(torch.tensor([3, 1, 2]), 3)
    right, w_right = module(x, x, x, key_mask=padding)
    wrong, w_wrong = module(x, x, x, mask=padding)  # accepted: the shapes cannot tell the layouts apart
    assert (right - wrong).abs().max() > 0.1
    assert (w_right[1, :, :, 1:] == 0).all() and (w_wrong[1, :, 0, 1:] > 0).all()  # padding attended
    y = torch.randn(2, 3, 8, generator=g, dtype=torch.float64)  # batch 2 != q_len 3: refused
    with pytest.raises(ValueError, match="Pass padding as key_mask=padding_mask"):
        module(y, y, y, mask=masks.make_padding_mask(torch.tensor([3, 1]), 3))


def test_key_padding_mask_is_refused_with_the_name_to_use():
    """PyTorch's name means the opposite (True = ignore): the course's module refuses it and names key_mask=."""
    module = attention.MultiHeadAttention(8, 2).double().eval()
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    padding = masks.make_padding_mask(torch.tensor([3, 2]), 3)
    for kwargs in ({"key_padding_mask": padding}, {"key_padding_mask": ~padding, "key_mask": padding}):
        with pytest.raises(TypeError, match="MultiHeadAttention takes key_mask=") as err:
            module(x, x, x, **kwargs)
        assert str(err.value) == attention.KEY_PADDING_MASK_MESSAGE
        assert "True means ignore" in str(err.value)
    out, _ = module(x, x, x, key_padding_mask=None)  # None (the default) is not a mask: accepted
    assert out.shape == x.shape


def test_mha_causal_matches_torch():
    theirs = _torch_mha()
    ours = attention.MultiHeadAttention.from_torch(theirs).eval()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    causal = masks.make_causal_mask(5)
    expected, _ = theirs(x, x, x, attn_mask=~causal)  # torch: True = not allowed
    out, _ = ours(x, x, x, mask=causal)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)


def test_numpy_mha_matches_torch_module():
    theirs = _torch_mha(bias=False)
    ours = attention.MultiHeadAttention.from_torch(theirs).eval()
    x = torch.randn(2, 4, 16, dtype=torch.float64)
    y = torch.randn(2, 6, 16, dtype=torch.float64)
    expected, expected_w = ours(x, y, y)
    # nn.Linear computes x @ W.T, our NumPy function computes x @ W
    Ws = [p.weight.detach().numpy().T for p in (ours.query_proj, ours.key_proj, ours.value_proj, ours.out_proj)]
    out, weights = na.multi_head_attention(x.numpy(), y.numpy(), y.numpy(), *Ws, num_heads=4)
    np.testing.assert_allclose(out, expected.detach().numpy(), atol=ATOL, rtol=0)
    np.testing.assert_allclose(weights, expected_w.detach().numpy(), atol=ATOL, rtol=0)


def test_gradcheck_float64():
    torch.manual_seed(0)
    module = attention.MultiHeadAttention(8, 2).double()
    x = torch.randn(1, 3, 8, dtype=torch.float64, requires_grad=True)
    y = torch.randn(1, 4, 8, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True, False, True]] * 3)
    assert torch.autograd.gradcheck(lambda a, b: module(a, b, b, mask=mask)[0], (x, y))


def test_dropout_only_in_training():
    torch.manual_seed(0)
    module = attention.MultiHeadAttention(16, 4, dropout=0.5)
    x = torch.randn(2, 5, 16)
    _, train_w = module(x, x, x)
    assert not torch.allclose(train_w.sum(-1), torch.ones(2, 4, 5))
    module.eval()
    _, eval_w = module(x, x, x)
    torch.testing.assert_close(eval_w.sum(-1), torch.ones(2, 4, 5))


def test_from_torch_rejects_seq_first():
    with pytest.raises(ValueError, match="batch_first=True"):
        attention.MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2))
