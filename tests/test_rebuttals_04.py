"""What lesson 04 no longer says to students about the widely copied tutorials, asserted for instructors.

Lesson 04 keeps one tutorial bug on the student's path (keys split with the query's length, and its tempting fix).
The other rebuttals moved to the instructor guide ("04 · Multi-head attention in PyTorch", *Seed rebuttals for
instructors*) and to the seed map in notebooks/README.md; each is asserted here so that those pages cite a test,
not a memory. The tutorials' classes are re-typed below with only what each claim needs.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from course_utils import attention


def _count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


class TutorialSingleHead(nn.Module):
    """Seed 001's SingleHeadAttention: query, key and value projections, no output projection."""

    def __init__(self, input_dim, output_dim, dropout_rate=0.1):
        super().__init__()
        self.query_proj = nn.Linear(input_dim, output_dim)
        self.key_proj = nn.Linear(input_dim, output_dim)
        self.value_proj = nn.Linear(input_dim, output_dim)
        self.scale = math.sqrt(output_dim)
        self.dropout = nn.Dropout(dropout_rate)


class TutorialMultiHead(nn.Module):
    """Seed 001's MultiHeadAttention's layers, under its comment "All projections are combined into one for efficiency"."""

    def __init__(self, input_dim, head_dim, num_heads, dropout_rate=0.1):
        super().__init__()
        self.query_proj = nn.Linear(input_dim, num_heads * head_dim)
        self.key_proj = nn.Linear(input_dim, num_heads * head_dim)
        self.value_proj = nn.Linear(input_dim, num_heads * head_dim)
        self.output_proj = nn.Linear(num_heads * head_dim, input_dim)
        self.dropout = nn.Dropout(dropout_rate)


def test_the_single_head_class_without_an_output_projection_has_fewer_parameters():
    """Seed 001 compares a single-head class with 3 Linears to a multi-head class with 4: 816 vs 1,088 at d_model 16."""
    for d_model, single, multi in ((16, 816, 1088), (8, 216, 288)):  # 8: the tutorial's own embedding_dim
        assert _count(TutorialSingleHead(d_model, d_model)) == 3 * (d_model**2 + d_model) == single
        assert _count(TutorialMultiHead(d_model, d_model // 2, 2)) == 4 * (d_model**2 + d_model) == multi
        # with the output projection (the course's module), one head and many have the same parameters
        assert _count(attention.MultiHeadAttention(d_model, 1)) == _count(attention.MultiHeadAttention(d_model, 4))
        assert _count(attention.MultiHeadAttention(d_model, 1)) - single == d_model**2 + d_model  # out_proj


def test_combined_into_one_is_false_for_its_own_three_linears():
    """Seed 001's comment says the projections are combined into one; its code builds three separate Linears."""
    layer = TutorialMultiHead(8, 4, 2)
    linears = [m for m in layer.modules() if isinstance(m, nn.Linear)]
    assert len(linears) == 4 and all(m.out_features == 8 for m in linears[:3])  # no (3 · d_model)-wide projection
    # what combining would be: nn.MultiheadAttention's packed in_proj_weight, one (3·d_model, d_model) matrix
    packed = nn.MultiheadAttention(8, 2, batch_first=True)
    assert tuple(packed.in_proj_weight.shape) == (24, 8)


def test_one_versus_eight_heads_with_other_parameters_and_dropout_mixes_three_effects():
    """Seed 000 compares MultiHeadAttention(64, num_heads=1) with (64, num_heads=8): each built with its own
    random parameters, dropout 0.1, in training mode. Each of the three differences alone changes the output."""
    torch.manual_seed(42)
    x = torch.randn(1, 8, 64)
    single = attention.MultiHeadAttention(64, 1, dropout=0.1)
    other_single = attention.MultiHeadAttention(64, 1, dropout=0.1)  # other random parameters, same head count
    assert single.training  # as the tutorial runs them: dropout active
    with torch.no_grad():
        first, _ = single(x, x, x)
        second, _ = single(x, x, x)  # the same module, the same input: dropout alone
        assert not torch.equal(first, second)
        single.eval()
        other_single.eval()
        # other parameters alone
        assert (single(x, x, x)[0] - other_single(x, x, x)[0]).norm() > 0.1
        # the number of heads alone (what lesson 04 shows: identical parameters, eval mode)
        eight = attention.MultiHeadAttention(64, 8).eval()
        eight.load_state_dict(single.state_dict())
        assert (single(x, x, x)[0] - eight(x, x, x)[0]).norm() > 0.1


def test_weights_analysed_without_eval_are_not_the_attention_weights():
    """Seeds 000 and 001 build with dropout 0.1 and plot or measure the weights without .eval()."""
    torch.manual_seed(42)
    x = torch.randn(1, 6, 64)
    mha = attention.MultiHeadAttention(64, 4, dropout=0.1)
    with torch.no_grad():
        _, training_weights = mha(x, x, x)
        _, eval_weights = mha.eval()(x, x, x)
    row_sums = training_weights.sum(dim=-1)
    assert not torch.allclose(row_sums, torch.ones_like(row_sums))  # rows no longer sum to 1
    assert (training_weights == 0).any()  # some weights dropped
    torch.testing.assert_close(eval_weights.sum(dim=-1), torch.ones_like(row_sums))
