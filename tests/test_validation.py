"""The validation layer (``course_utils._validation``) and the failures of issue 11, one test each."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import _validation as validate
from course_utils import attention, efficient, heads, masks
from course_utils import numpy_attention as na
from course_utils.reversal import transformer

shapes = st.lists(st.integers(0, 3), max_size=4).map(tuple)


# ------------------------------------------------------------------------------- broadcasting


@settings(max_examples=300, deadline=None)
@given(a=shapes, b=shapes, c=shapes)
def test_broadcast_shapes_is_numpys_including_size_zero(a, b, c):
    try:
        expected = np.broadcast_shapes(a, b, c)
    except ValueError:
        expected = None
    assert validate.broadcast_shapes(a, b, c) == expected
    try:
        torch_result = tuple(torch.broadcast_shapes(a, b, c))
    except RuntimeError:
        torch_result = None
    assert torch_result == expected  # NumPy and torch agree, so one rule serves both backends


def test_size_one_against_size_zero_is_zero():
    assert validate.broadcast_shapes((1, 3), (0, 3)) == (0, 3)
    assert validate.broadcast_shapes((0,), (1,)) == (0,)
    assert validate.broadcast_shapes((2,), (0,)) is None


def test_mask_with_an_empty_axis_no_longer_empties_the_output_silently():
    q = np.ones((1, 3, 4))
    mask = np.ones((0, 3, 3), dtype=bool)  # batch 0 against scores batch 1: would shrink the output to nothing
    with pytest.raises(ValueError, match=r"mask of shape \(0, 3, 3\) does not broadcast"):
        na.scaled_dot_product_attention(q, q, q, mask)
    with pytest.raises(ValueError, match=r"mask of shape \(0, 3, 3\) does not broadcast"):
        attention.scaled_dot_product_attention(*(torch.from_numpy(q),) * 3, torch.from_numpy(mask))


# ------------------------------------------------------------------------------------ scalars


@pytest.mark.parametrize("value", [3, np.int64(3), np.int32(3), np.uint8(3)])
def test_numpy_integers_are_ints(value):
    assert validate.positive_int("n", value) == 3 and type(validate.positive_int("n", value)) is int


@pytest.mark.parametrize(
    ("value", "error", "fragment"),
    [
        (True, TypeError, "n must be an int"),
        (np.bool_(True), TypeError, "n must be an int"),
        (3.0, TypeError, r"n must be an int \(>= 1\) but is the float 3\.0; pass int\(n\)"),
        ("3", TypeError, "n must be an int"),
        (0, ValueError, "n must be a positive int but is 0"),
    ],
)
def test_bad_sizes(value, error, fragment):
    with pytest.raises(error, match=fragment):
        validate.positive_int("n", value)


@pytest.mark.parametrize(
    ("value", "error"),
    [(1.0, ValueError), (-0.1, ValueError), (1.5, ValueError), (np.nan, ValueError), (True, TypeError)],
)
def test_dropout_probability_range(value, error):
    with pytest.raises(error, match="p must be"):
        validate.probability("p", value)
    assert validate.probability("p", np.float32(0.25)) == 0.25


def test_validation_needs_no_torch():
    code = "import sys, course_utils._validation; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------- the examples


def test_fused_path_refuses_dropout_one_instead_of_returning_the_bias():
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        attention.MultiHeadAttention(8, 2, dropout=1.0)
    module = attention.MultiHeadAttention(8, 2, dropout=0.5)
    module.dropout = 1.0  # set after construction: refused at the next call, on both paths
    x = torch.ones(1, 3, 8)
    for need_weights in (True, False):
        with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
            module(x, x, x, need_weights=need_weights)


@pytest.mark.parametrize(
    "kwargs",
    [{"d_model": 0, "num_heads": 1}, {"d_model": 8, "num_heads": True}, {"d_model": 8, "num_heads": 2, "dropout": 1.5}],
)
def test_module_silent_garbage_refused(kwargs):
    with pytest.raises((TypeError, ValueError), match="d_model|num_heads|dropout"):
        attention.MultiHeadAttention(**kwargs)


def test_numpy_integer_sizes_accepted_everywhere():
    module = attention.MultiHeadAttention(np.int64(8), np.int64(2))
    assert module.d_head == 4 and type(module.d_model) is int
    assert masks.make_causal_mask(np.int64(3)).shape == (3, 3)
    assert masks.make_padding_mask(torch.tensor([1, 2]), np.int64(3)).shape == (2, 3)
    assert na.split_heads(np.ones((1, 2, 8)), np.int64(2)).shape == (1, 2, 2, 4)
    assert efficient.mha_param_count(np.int64(8), np.int64(2)) == 4 * 64 + 32
    assert heads.max_entropy(np.int64(4)) == pytest.approx(np.log(4))
    assert transformer.sinusoidal_positions(np.int64(3), np.int64(4)).shape == (3, 4)


def test_padding_mask_max_len_must_be_an_int():
    with pytest.raises(TypeError, match="max_len must be an int"):
        masks.make_padding_mask(torch.tensor([1, 2]), 3.5)
    assert masks.make_padding_mask([], None).shape == (0, 0)
    assert masks.make_padding_mask(np.array([0, 2]), 2).tolist() == [[False, False], [True, True]]


def test_valid_padding_mask_accepted_with_no_queries():
    module = attention.MultiHeadAttention(8, 2).eval()
    query, memory = torch.ones(2, 0, 8), torch.ones(2, 5, 8)
    mask = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([5, 3]), 5))  # (2, 1, 1, 5)
    for need_weights in (True, False):
        out, _ = module(query, memory, memory, mask=mask, need_weights=need_weights)
        assert out.shape == (2, 0, 8)


def test_combine_masks_names_a_numpy_mask_as_such():
    with pytest.raises(
        TypeError,
        match=r"mask 1 must be a torch\.Tensor but is a numpy\.ndarray of shape \(2, 2\) and dtype bool; convert it with torch\.from_numpy",
    ):
        masks.combine_masks(torch.ones(2, 2, dtype=torch.bool), np.ones((2, 2), dtype=bool))


def test_arrays_to_torch_functions_name_the_argument():
    q = np.ones((2, 3, 4), dtype=np.float32)
    with pytest.raises(TypeError, match=r"query must be a torch\.Tensor .* torch\.from_numpy"):
        attention.scaled_dot_product_attention(q, q, q)
    with pytest.raises(TypeError, match=r"query must be a torch\.Tensor"):
        attention.MultiHeadAttention(4, 2)([[1.0] * 4], q, q)
    t = torch.ones(2, 3, 4)
    with pytest.raises(TypeError, match="value has dtype torch.float64 but query has dtype torch.float32"):
        attention.scaled_dot_product_attention(t, t, t.double())


@pytest.mark.parametrize("backend", ["numpy", "torch", "naive", "tiled"])
def test_d_head_zero_is_refused_not_nan(backend):
    q = np.ones((3, 0))
    v = np.ones((3, 2))
    call = {
        "numpy": lambda: na.scaled_dot_product_attention(q, q, v),
        "torch": lambda: attention.scaled_dot_product_attention(
            torch.from_numpy(q), torch.from_numpy(q), torch.from_numpy(v)
        ),
        "naive": lambda: efficient.naive_attention(q, q, v),
        "tiled": lambda: efficient.tiled_attention(q, q, v),
    }[backend]
    with pytest.raises(ValueError, match="d_head 0"):
        call()


def test_numpy_multi_head_refuses_batch_broadcasting_as_torch_does():
    rng = np.random.default_rng(0)
    query, memory = rng.normal(size=(1, 3, 8)), rng.normal(size=(2, 4, 8))
    W = [rng.normal(size=(8, 8)) for _ in range(4)]
    with pytest.raises(ValueError, match="query batch 1 differs from key batch 2") as numpy_error:
        na.multi_head_attention(query, memory, memory, *W, num_heads=2)
    module = attention.MultiHeadAttention(8, 2, bias=False).double()
    with pytest.raises(ValueError, match="query batch 1 differs from key batch 2") as torch_error:
        module(torch.from_numpy(query), torch.from_numpy(memory), torch.from_numpy(memory))
    assert str(numpy_error.value) == str(torch_error.value)
    oracle = torch.nn.MultiheadAttention(8, 2, batch_first=True).double()
    with pytest.raises((AssertionError, RuntimeError)):  # PyTorch's own module refuses it too
        oracle(torch.from_numpy(query), torch.from_numpy(memory), torch.from_numpy(memory))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_preserved_by_every_numpy_function(dtype):
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=s).astype(dtype) for s in [(2, 3, 4), (2, 5, 4), (2, 5, 2)])
    W = [rng.normal(size=(4, 4)).astype(dtype) for _ in range(4)]
    results = {
        "softmax": na.softmax(q),
        "sdpa": na.scaled_dot_product_attention(q, k, v)[0],
        "sdpa weights": na.scaled_dot_product_attention(q, k, v)[1],
        "split": na.split_heads(q, 2),
        "merge": na.merge_heads(q[None]),
        "mha": na.multi_head_attention(q, k, k, *W, num_heads=2)[0],
        "naive": efficient.naive_attention(q, k, v),
        "tiled": efficient.tiled_attention(q, k, v, q_block=2, k_block=2),
        "online_softmax": efficient.online_softmax(q),
        "online m": efficient.online_softmax_stats(q)[0],
    }
    assert {name: r.dtype for name, r in results.items()} == dict.fromkeys(results, np.dtype(dtype))


def test_integer_lists_still_work_by_hand():
    out, w = na.scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[1, 2], [3, 4]])
    assert out.dtype == np.float64 and w.shape == (1, 2)
