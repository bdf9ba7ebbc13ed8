"""The helpers lessons 00-04 gained in issue 28: the course's masked softmax, the block diagram's mask and dropout,
and course imports that do not load matplotlib until a figure is drawn."""

from __future__ import annotations

import subprocess
import sys

import torch

from course_utils import attention, diagrams


def test_masked_softmax_gives_a_row_with_no_key_zeros_and_a_zero_gradient():
    scores = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, False, True], [False, False, False]])
    weights = attention.masked_softmax(scores, mask)  # (2, 3)
    assert torch.equal(weights[1], torch.zeros(3, dtype=torch.float64))
    assert weights[0, 1] == 0 and torch.isclose(weights[0].sum(), torch.tensor(1.0, dtype=torch.float64))
    expected = torch.softmax(torch.tensor([1.0, 3.0], dtype=torch.float64), dim=-1)
    assert torch.allclose(weights[0, [0, 2]], expected)
    (weights * torch.arange(3.0, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(scores.grad).all() and torch.equal(scores.grad[1], torch.zeros(3, dtype=torch.float64))


def test_masked_softmax_without_a_mask_is_the_softmax_and_the_module_uses_it():
    scores = torch.randn(2, 4, 5, generator=torch.Generator().manual_seed(0))
    assert torch.equal(attention.masked_softmax(scores), torch.softmax(scores, dim=-1))
    mha = attention.MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(1))
    no_key = torch.zeros(2, 1, 1, 3, dtype=torch.bool)
    out, weights = mha(x, x, x, mask=no_key)
    assert torch.equal(weights, torch.zeros_like(weights)) and torch.isfinite(out).all()


def test_block_diagram_can_show_the_mask_and_the_dropout():
    plain = diagrams.box_labels(diagrams.draw_multi_head_block(heads=2))
    full_ax = diagrams.draw_multi_head_block(heads=2, mask_and_dropout=True)
    full = diagrams.box_labels(full_ax)
    assert "mask" not in plain and full == [*plain, "mask"]
    text = " ".join(t.get_text() for t in full_ax.texts)
    assert "dropout" in text and "masked softmax" in text


def test_importing_the_course_modules_does_not_load_matplotlib():
    code = (
        "import sys\n"
        "from course_utils import attention, bugs, checks, diagrams, env, masks, numpy_attention, plotting, retrieval\n"
        "from course_utils.lessons.lesson_01 import experiments as lesson_01\n"
        "from course_utils.lessons.lesson_04 import experiments as lesson_04\n"
        "print('matplotlib' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False", "a course module imports matplotlib at import time: import it where used"
