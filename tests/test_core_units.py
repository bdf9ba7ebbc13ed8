"""Unit tests for the small pieces: softmax, masks, env, plotting, package hygiene."""

import importlib
import subprocess
import sys

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from course_utils import env, masks, plotting  # noqa: E402
from course_utils import numpy_attention as na  # noqa: E402


def test_softmax_no_overflow_at_1e4():
    x = np.array([1e4, 1e4, -1e4])
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x) / np.exp(x).sum()  # the naive version overflows: inf / inf
    assert np.isnan(naive).any()
    np.testing.assert_allclose(na.softmax(x), [0.5, 0.5, 0.0], atol=1e-12)


def test_softmax_all_minus_inf_row_is_zero():
    np.testing.assert_array_equal(na.softmax(np.full((2, 3), -np.inf)), np.zeros((2, 3)))


def test_by_hand_example():
    # 3 tokens, d = 2: the example of lesson 01, checked against arithmetic done by hand.
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = np.array([[1.0], [2.0], [3.0]])
    scores = np.array([1.0, 0.0, 1.0]) / np.sqrt(2)
    expected_w = np.exp(scores) / np.exp(scores).sum()
    out, w = na.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(w[0], expected_w, atol=1e-15)
    np.testing.assert_allclose(out[0, 0], expected_w @ [1.0, 2.0, 3.0], atol=1e-15)


def test_causal_mask_values():
    assert masks.make_causal_mask(3).int().tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    # k_len > q_len: queries are the last q_len positions (bottom-right aligned)
    assert masks.make_causal_mask(2, 4).int().tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]


def test_padding_mask_and_conversions():
    pad = masks.make_padding_mask(torch.tensor([2, 3]), 4)
    assert pad.dtype == torch.bool and pad.int().tolist() == [[1, 1, 0, 0], [1, 1, 1, 0]]
    assert masks.padding_to_attention_mask(pad).shape == (2, 1, 1, 4)
    assert torch.equal(masks.to_key_padding_mask(pad), ~pad)
    assert masks.make_padding_mask([3, 1]).shape == (2, 3)


def test_combine_masks():
    causal = masks.make_causal_mask(3)
    pad = masks.padding_to_attention_mask(masks.make_padding_mask(torch.tensor([2, 3]), 3))
    combined = masks.combine_masks(causal, pad)
    assert combined.shape == (2, 1, 3, 3)
    assert combined[0, 0].int().tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 0]]


def test_set_seed_reproducible():
    env.set_seed(7)
    a = (np.random.rand(), torch.rand(1).item())  # noqa: NPY002
    env.set_seed(7)
    b = (np.random.rand(), torch.rand(1).item())  # noqa: NPY002
    assert a == b
    with pytest.raises(ValueError, match="seed"):
        env.set_seed(-1)


def test_get_device(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    assert env.get_device().type in {"cpu", "cuda"}
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert env.get_device() == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(
            ValueError, match=r"prefer='cuda' was asked for but is not available here; available here: \['cpu'"
        ):
            env.get_device("cuda")


def test_print_versions(capsys):
    env.print_versions()
    out = capsys.readouterr().out
    assert "course_utils" in out and "torch" in out and "device" in out


def test_plot_attention_labels_and_no_show():
    w = np.full((2, 3), 1 / 3)
    ax = plotting.plot_attention(w, ["a", "b"], ["x", "y", "z"], title="t")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() == "t"
    plt.close("all")
    with pytest.raises(ValueError, match="key_labels has 2 labels"):
        plotting.plot_attention(w, None, ["x", "y"])
    with pytest.raises(ValueError, match=r"weights must be \(q_len, k_len\)"):
        plotting.plot_attention(np.ones(3))


def test_plot_attention_heads_grid():
    fig = plotting.plot_attention_heads(torch.rand(3, 4, 5), list("abcd"), list("vwxyz"), ncols=2)
    titled = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titled == ["head 0", "head 1", "head 2"]
    plt.close(fig)


def test_presentation_style_roundtrip():
    before = plt.rcParams["font.size"]
    plotting.use_presentation_style()
    assert plt.rcParams["font.size"] > before
    plotting.use_presentation_style(False)
    assert plt.rcParams["font.size"] == before


def test_every_module_has_all_and_importing_the_package_is_light():
    import course_utils

    for name in [n for n in course_utils.__all__ if not n.startswith("__")]:
        module = importlib.import_module(f"course_utils.{name}")
        assert module.__all__, name
        for symbol in module.__all__:
            if name in ("reversal", "checking", "lessons"):  # a sub-package that lists its modules: each must import
                importlib.import_module(f"course_utils.{name}.{symbol}")
            assert hasattr(module, symbol), f"{name}.{symbol}"
    code = "import sys, course_utils, course_utils.numpy_attention; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False", "course_utils and numpy_attention must not import torch"


def test_causal_mask_alignment_matches_torch_lower_right():
    from torch.nn.attention.bias import causal_lower_right

    for q_len, k_len in [(2, 4), (3, 3), (1, 5)]:
        assert torch.equal(masks.make_causal_mask(q_len, k_len), causal_lower_right(q_len, k_len)._materialize().bool())
