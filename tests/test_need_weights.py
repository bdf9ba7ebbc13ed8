"""MultiHeadAttention(need_weights=False) (fused kernel) agrees with the default path that builds the weights."""

import pytest
import torch

from course_utils import masks
from course_utils.attention import MultiHeadAttention


def _inputs(seed, batch=3, q_len=5, k_len=7, d_model=16, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    query = torch.randn(batch, q_len, d_model, generator=gen, dtype=dtype)
    key = torch.randn(batch, k_len, d_model, generator=gen, dtype=dtype)
    value = torch.randn(batch, k_len, d_model, generator=gen, dtype=dtype)
    return query, key, value


def _module(seed=0, d_model=16, num_heads=4, dtype=torch.float64):
    torch.manual_seed(seed)
    return MultiHeadAttention(d_model, num_heads).to(dtype).eval()


def _masks(batch, q_len, k_len):
    padding = masks.make_padding_mask(torch.tensor([k_len, 2, 1])[:batch], k_len)  # (batch, k_len)
    fully = torch.ones(batch, 1, q_len, k_len, dtype=torch.bool)
    fully[0, 0, 1] = False  # one query of sequence 0 may attend to nothing
    return {
        "none": None,
        "causal_2d": masks.make_causal_mask(q_len, k_len),
        "padding_4d": masks.padding_to_attention_mask(padding),
        "per_head_4d": torch.rand(batch, 4, q_len, k_len, generator=torch.Generator().manual_seed(1)) > 0.3,
        "fully_masked_row": fully,
    }


@pytest.mark.parametrize("mask_name", ["none", "causal_2d", "padding_4d", "per_head_4d", "fully_masked_row"])
@pytest.mark.parametrize(("q_len", "k_len"), [(5, 5), (4, 7)])
def test_fused_path_matches_weights_path(mask_name, q_len, k_len):
    mha = _module()
    query, key, value = _inputs(0, q_len=q_len, k_len=k_len)
    mask = _masks(3, q_len, k_len)[mask_name]
    expected, weights = mha(query, key, value, mask=mask)
    got, none = mha(query, key, value, mask=mask, need_weights=False)
    assert none is None and weights.shape == (3, 4, q_len, k_len)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-12)


def test_fully_masked_rows_give_the_bias_only_on_both_paths():
    mha = _module()
    query, key, value = _inputs(1, q_len=5, k_len=5)
    mask = torch.ones(3, 1, 5, 5, dtype=torch.bool)
    mask[1, 0, 2] = False
    for need_weights in (True, False):
        out, _ = mha(query, key, value, mask=mask, need_weights=need_weights)
        # a head output of zeros leaves only the output projection's bias
        torch.testing.assert_close(out[1, 2], mha.out_proj.bias, rtol=0, atol=1e-12)


def test_float32_self_attention_and_gradients_agree():
    mha = _module(dtype=torch.float32)
    x = _inputs(2, q_len=6, k_len=6, dtype=torch.float32)[0].requires_grad_(True)
    mask = masks.make_causal_mask(6)
    out_a, _ = mha(x, x, x, mask=mask)
    (grad_a,) = torch.autograd.grad(out_a.square().sum(), x)
    out_b, _ = mha(x, x, x, mask=mask, need_weights=False)
    (grad_b,) = torch.autograd.grad(out_b.square().sum(), x)
    torch.testing.assert_close(out_b, out_a, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(grad_b, grad_a, rtol=1e-4, atol=1e-5)


def test_matches_torch_multihead_attention_without_weights():
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(16, 4, batch_first=True).double().eval()
    ours = MultiHeadAttention.from_torch(theirs).eval()
    query, key, value = _inputs(3, q_len=5, k_len=5)
    padding = masks.make_padding_mask(torch.tensor([5, 3, 4]), 5)
    expected, _ = theirs(query, key, value, key_padding_mask=masks.to_key_padding_mask(padding), need_weights=False)
    got, _ = ours(query, key, value, mask=masks.padding_to_attention_mask(padding), need_weights=False)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-12)
