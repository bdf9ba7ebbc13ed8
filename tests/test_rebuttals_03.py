"""What lesson 03 no longer says to students about the widely copied tutorials, asserted for instructors.

Lesson 03 keeps two of the tutorials' mistakes on the student's path (``W_O @ concat_out`` and the count
``3 · 512²``). The other rebuttals moved to the instructor guide ("03 · Multi-head attention in NumPy", *Seed
rebuttals for instructors*) and the seed map in ``notebooks/README.md``; the facts they state are checked here.
Seeds: ``/work/shared/seeds/003_*`` (the NumPy multi-head example) and ``002_*`` (the multi-head notes).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from course_utils import attention, numpy_attention
from course_utils.lessons.lesson_03 import core
from course_utils.lessons.lesson_03 import exercises as lesson_03

# The output seed 003 prints for np.random.seed(0) and np.random.rand inputs and weights (4 tokens, 8 features).
TUTORIAL_OUTPUT = np.array(
    [
        [9.19301463, 10.44328382, 9.2244454, 8.05737673, 10.98670376, 9.43520132, 10.65160547, 9.78990228],
        [9.10985062, 10.36255368, 9.14890231, 7.99563435, 10.88414448, 9.35370385, 10.56035521, 9.70807359],
        [9.21809014, 10.45357218, 9.24102286, 8.0718153, 11.01227309, 9.45719822, 10.66877882, 9.80798268],
        [9.05051238, 10.29643008, 9.09708768, 7.94442927, 10.80930673, 9.29190295, 10.48942527, 9.64204537],
    ]
)


def _tutorial_draw():
    legacy = np.random.RandomState(0)  # the stream of the tutorial's np.random.seed(0)
    x = legacy.rand(1, 4, 8)  # (batch, seq_len, d_model), all entries in [0, 1)
    weights = [legacy.rand(8, 8) for _ in range(4)]  # W_q, W_k, W_v, W_o, drawn in that order
    return x, weights


def test_the_tutorial_output_is_reproduced_to_every_printed_digit():
    """'The actual numerical values may vary due to random initialization' is false: the seed fixes every draw."""
    x, weights = _tutorial_draw()
    output, _ = numpy_attention.multi_head_attention(x, x, x, *weights, num_heads=2)
    assert np.abs(output[0] - TUTORIAL_OUTPUT).max() < 1e-8
    again, _ = numpy_attention.multi_head_attention(*([_tutorial_draw()[0]] * 3), *_tutorial_draw()[1], num_heads=2)
    assert np.array_equal(output, again)  # the same seed, the same numbers, every time


def test_with_uniform_weights_every_query_of_a_head_picks_the_same_key():
    x, weights = _tutorial_draw()
    _, w = numpy_attention.multi_head_attention(x, x, x, *weights, num_heads=2)  # (1, heads, 4, 4)
    for h in range(2):
        favourite = w[0, h].argmax(axis=-1)  # each query's strongest key
        assert np.all(favourite == favourite[0]), h
    assert w[0, 0, :, 2].min() > 0.75  # head 0: every query puts more than 3/4 of its weight on key 2


def _row_spread(w):
    """Largest |row - mean row| over a (..., q_len, k_len) weight array: 0 means every query attends alike."""
    return float(np.abs(w - w.mean(axis=-2, keepdims=True)).max())


def test_uniform_weights_make_rows_alike_over_twenty_draws():
    """Every one of 20 U[0, 1) draws spreads its rows less than every one of 20 draws with std 1/sqrt(d_model)."""
    uniform, scaled = [], []
    for s in range(20):
        draw = np.random.default_rng(s)
        x_u, w_u = draw.random((1, 4, 8)), [draw.random((8, 8)) for _ in range(4)]
        uniform.append(_row_spread(numpy_attention.multi_head_attention(x_u, x_u, x_u, *w_u, 2)[1]))
        x_n, w_n = draw.normal(size=(1, 4, 8)), [draw.normal(0, 1 / np.sqrt(8), (8, 8)) for _ in range(4)]
        scaled.append(_row_spread(numpy_attention.multi_head_attention(x_n, x_n, x_n, *w_n, 2)[1]))
    assert max(uniform) < min(scaled)


@pytest.mark.parametrize("heads", [1, 8])
def test_the_tutorial_count_of_three_matrices_leaves_out_w_o_and_the_biases(heads):
    """Seed 002: '3 × 512² = 786K params (same!)'. Same for any heads: right. 786,432: wrong."""
    d_model = 512
    ours = sum(p.numel() for p in attention.MultiHeadAttention(d_model, heads).parameters())
    torch_count = sum(p.numel() for p in nn.MultiheadAttention(d_model, heads, batch_first=True).parameters())
    assert ours == torch_count == core.count_layer_parameters(d_model, heads) == 1_050_624
    assert 3 * d_model**2 == 786_432 != ours
    assert ours - 3 * d_model**2 == d_model**2 + 4 * d_model  # W_o's matrix and the four biases


def test_the_projections_cost_grows_with_the_length_not_only_with_d_model_squared():
    """Seed 002 writes the projections' time as O(d_model²); they run on every token: O(n·d_model²)."""
    proj_n, _ = lesson_03.attention_flops(1, 128, 128, 64, 4)
    proj_2n, _ = lesson_03.attention_flops(1, 256, 256, 64, 4)
    assert proj_2n == 2 * proj_n == 2 * 8 * 128 * 64**2


def test_more_heads_same_matmul_flops_but_more_scores():
    """Seed 002's 'same time as single-head': the matmul FLOPs are the same, the score entries are heads times more."""
    one = lesson_03.attention_flops(1, 64, 64, 64, 1)
    eight = lesson_03.attention_flops(1, 64, 64, 64, 8)
    assert one == eight
    x = np.random.default_rng(0).normal(size=(1, 64, 64))
    weights = [np.eye(64)] * 4
    _, w1 = numpy_attention.multi_head_attention(x, x, x, *weights, num_heads=1)
    _, w8 = numpy_attention.multi_head_attention(x, x, x, *weights, num_heads=8)
    assert w8.size == 8 * w1.size


def test_the_flop_reference_is_the_measured_count_of_a_real_layer():
    """The check's expected FLOPs come from PyTorch's FLOP counter on the course's layer, not from a formula."""
    from torch.utils.flop_counter import FlopCounterMode

    batch, q_len, k_len, d_model, heads = 2, 3, 5, 16, 4
    with torch.no_grad():
        mha = attention.MultiHeadAttention(d_model, heads).eval()  # real numbers, on the CPU
        query, memory = torch.randn(batch, q_len, d_model), torch.randn(batch, k_len, d_model)
        with FlopCounterMode(display=False) as counter:
            mha(query, memory, memory)
    counts = {str(op): flops for op, flops in counter.get_flop_counts()["Global"].items()}
    measured = (counts.get("aten.addmm", 0) + counts.get("aten.mm", 0), counts["aten.bmm"])
    assert lesson_03.attention_flops(batch, q_len, k_len, d_model, heads) == measured  # the meta device agrees
    assert measured == lesson_03.flops_formula(batch, q_len, k_len, d_model, heads)


def test_the_tutorial_configurations_have_whole_heads():
    """Seed 002's configuration table: d_k = d_model / heads holds for all four (the papers' sizes)."""
    configs = {"BERT-base": (768, 12, 64), "BERT-large": (1024, 16, 64), "GPT-2 small": (768, 12, 64)}
    configs["GPT-3 175B"] = (12288, 96, 128)
    for name, (d_model, heads, d_head) in configs.items():
        assert d_model % heads == 0 and d_model // heads == d_head, name


def test_w_o_on_the_left_fails_unless_seq_len_equals_d_model():
    """Seed 002: 'output = W_O @ concat_out'. With one token per row it only runs when seq_len == d_model."""
    rng = np.random.default_rng(0)
    w_o = rng.normal(size=(8, 8))
    with pytest.raises(ValueError):
        w_o @ rng.normal(size=(2, 5, 8))
    square = rng.normal(size=(2, 8, 8))
    assert (w_o @ square).shape == square.shape  # runs, and mixes positions instead of features
    assert not np.allclose(w_o @ square, square @ w_o)
