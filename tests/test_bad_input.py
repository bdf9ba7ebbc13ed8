"""Bad input gets a clear error naming the argument and the shapes, never a deep trace or garbage."""

import numpy as np
import pytest
import torch

from course_utils import attention, masks
from course_utils import numpy_attention as na


def test_numpy_d_head_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"key has d_head 8 but query has d_head 4 \(query \(3, 4\), key \(5, 8\)\)"):
        na.scaled_dot_product_attention(np.ones((3, 4)), np.ones((5, 8)), np.ones((5, 2)))


def test_value_length_mismatch():
    with pytest.raises(ValueError, match=r"value has 4 positions but key has k_len 5"):
        attention.scaled_dot_product_attention(torch.ones(3, 4), torch.ones(5, 4), torch.ones(4, 2))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_non_boolean_mask_is_type_error(backend):
    q = np.ones((2, 3, 4))
    if backend == "numpy":
        with pytest.raises(TypeError, match="mask must be boolean"):
            na.scaled_dot_product_attention(q, q, q, mask=np.ones((3, 3)))
    else:
        t = torch.from_numpy(q)
        with pytest.raises(TypeError, match="mask must be boolean"):
            attention.scaled_dot_product_attention(t, t, t, mask=torch.ones(3, 3))
        with pytest.raises(TypeError, match="mask must be boolean"):
            attention.MultiHeadAttention(4, 2)(t.float(), t.float(), t.float(), mask=torch.ones(3, 3))


def test_mask_that_does_not_broadcast():
    q = torch.ones(2, 3, 4)
    with pytest.raises(
        ValueError, match=r"mask of shape \(4, 3\) does not broadcast against attention scores of shape \(2, 3, 3\)"
    ):
        attention.scaled_dot_product_attention(q, q, q, mask=torch.ones(4, 3, dtype=torch.bool))


def test_mask_that_would_grow_the_scores_is_refused():
    q = np.ones((3, 4))
    with pytest.raises(ValueError, match="does not broadcast"):
        na.scaled_dot_product_attention(q, q, q, mask=np.ones((2, 3, 3), dtype=bool))


def test_three_d_mask_refused_by_multi_head():
    module = attention.MultiHeadAttention(8, 2)
    x = torch.ones(2, 3, 8)
    with pytest.raises(ValueError, match=r"mask\[:, None\]"):
        module(x, x, x, mask=torch.ones(2, 3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask\[:, None\]"):
        W = np.eye(8, dtype=np.float32)
        na.multi_head_attention(x.numpy(), x.numpy(), x.numpy(), W, W, W, W, 2, mask=np.ones((2, 3, 3), dtype=bool))


def test_heads_must_divide_d_model():
    with pytest.raises(ValueError, match="d_model 10 is not divisible by num_heads 3"):
        attention.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="d_model 10 is not divisible by num_heads 4"):
        na.split_heads(np.ones((1, 2, 10)), 4)


def test_module_input_shapes():
    module = attention.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"query must be \(batch, seq_len, d_model=8\) but has shape \(2, 3, 6\)"):
        module(torch.ones(2, 3, 6), torch.ones(2, 3, 8), torch.ones(2, 3, 8))
    with pytest.raises(ValueError, match=r"key \(2, 4, 8\) and value \(2, 5, 8\) must share"):
        module(torch.ones(2, 3, 8), torch.ones(2, 4, 8), torch.ones(2, 5, 8))


def test_numpy_mha_weight_shape():
    x = np.ones((1, 2, 4))
    with pytest.raises(ValueError, match=r"W_k must be \(d_model, d_model\) = \(4, 4\) but has shape \(4, 3\)"):
        na.multi_head_attention(x, x, x, np.eye(4), np.ones((4, 3)), np.eye(4), np.eye(4), 2)


def test_mask_helpers_bad_input():
    with pytest.raises(ValueError, match="k_len 2 is shorter than q_len 3"):
        masks.make_causal_mask(3, 2)
    with pytest.raises(ValueError, match=r"lengths must lie in \[0, max_len=3\]"):
        masks.make_padding_mask(torch.tensor([1, 5]), 3)
    with pytest.raises(TypeError, match="lengths must be integers"):
        masks.make_padding_mask(torch.tensor([1.0, 2.0]), 3)
    with pytest.raises(ValueError, match="do not broadcast together"):
        masks.combine_masks(torch.ones(2, 3, dtype=torch.bool), torch.ones(4, 3, dtype=torch.bool))


def test_dropout_p_range():
    t = torch.ones(2, 2)
    with pytest.raises(ValueError, match="dropout_p must be in"):
        attention.scaled_dot_product_attention(t, t, t, dropout_p=1.5)
