"""course_utils.diagrams: the schematic figures draw the lessons' names, return their Axes, never show."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from course_utils import diagrams  # noqa: E402


@pytest.fixture(autouse=True)
def _no_show_and_close(monkeypatch):
    def refuse_show(*args, **kwargs):
        raise AssertionError("a diagram function called plt.show()")

    monkeypatch.setattr(plt, "show", refuse_show)
    yield
    plt.close("all")


def _all_text(ax) -> str:
    return "\n".join(t.get_text() for t in ax.texts) + "\n" + ax.get_title()


def test_qkv_flow_draws_the_names_and_shapes_of_lesson_01():
    ax = diagrams.draw_qkv_flow()
    assert isinstance(ax, Axes)
    assert diagrams.box_labels(ax) == [
        "X",
        "W_q",
        "W_k",
        "W_v",
        "Q",
        "K",
        "V",
        "scores",
        "softmax",
        "weights",
        "output",
    ]
    text = _all_text(ax)
    for shape in (
        "(batch, seq_len, d_model)",
        "(d_model, d_head)",
        "(batch, q_len, d_head)",
        "(batch, k_len, d_head)",
        "(batch, q_len, k_len)",
        "Q K^T / sqrt(d_head)",
    ):
        assert shape in text, shape


def test_qkv_flow_draws_on_the_axes_it_is_given():
    fig, (left, right) = plt.subplots(1, 2)
    assert diagrams.draw_qkv_flow(ax=right) is right
    assert diagrams.box_labels(left) == []  # nothing drawn on the other panel
    assert not right.axison  # a schematic: no ticks, no frame


@pytest.mark.parametrize(("heads", "d_head", "seq_len"), [(1, 1, 1), (2, 3, 4), (4, 2, 3), (8, 6, 6)])
def test_head_split_draws_one_cell_per_number_and_the_shapes_of_each_stage(heads, d_head, seq_len):
    ax = diagrams.draw_head_split(heads=heads, d_head=d_head, seq_len=seq_len)
    assert diagrams.box_labels(ax) == [
        "x",
        "view",
        "transpose(1, 2)",
        "attention per head",
        "concat",
        "out_proj (mixes heads)",
    ]
    # six stages, each showing every one of the seq_len * d_model numbers of one sequence once
    assert len(ax.patches) == 6 * seq_len * heads * d_head
    text = _all_text(ax).replace("\n", " ")
    for shape in ("(batch, seq_len, d_model)", "(batch, seq_len, heads, d_head)", "(batch, heads, seq_len, d_head)"):
        assert shape in text, shape
    assert f"= {heads} * {d_head} = {heads * d_head}" in text


@pytest.mark.parametrize(
    ("api", "names"),
    [
        ("torch", ["view", "transpose(1, 2)", "out_proj (mixes heads)", "concat = transpose(1, 2), then reshape"]),
        (
            "numpy",
            ["reshape", "transpose(0, 2, 1, 3)", "@ W_o (mixes heads)", "concat = transpose(0, 2, 1, 3), then reshape"],
        ),
    ],
)
def test_head_split_labels_its_stages_with_the_names_of_the_api_it_is_drawn_for(api, names):
    """Lesson 03 (NumPy) draws NumPy's calls; a NumPy array's transpose(1, 2) would raise, so the labels must match."""
    ax = diagrams.draw_head_split(heads=2, d_head=2, seq_len=3, api=api)
    labels = diagrams.box_labels(ax)
    assert labels[:3] == ["x", names[0], names[1]]
    assert labels[-1] == names[2]
    assert names[3] in _all_text(ax).replace("\n", " ")
    other = {"torch": "numpy", "numpy": "torch"}[api]
    other_names = diagrams.box_labels(diagrams.draw_head_split(heads=2, d_head=2, seq_len=3, api=other))
    assert names[0] not in other_names and names[1] not in other_names


def test_head_split_numpy_labels_are_calls_numpy_accepts():
    import numpy as np

    x = np.arange(2 * 3 * 4.0).reshape(2, 3, 4)  # (batch, seq_len, d_model), 2 heads of 2
    split = x.reshape(2, 3, 2, 2).transpose(0, 2, 1, 3)  # the labels, as NumPy calls
    assert split.shape == (2, 2, 3, 2)
    with pytest.raises(ValueError):
        x.reshape(2, 3, 2, 2).transpose(1, 2)  # the torch label is not a NumPy call


def test_head_split_colours_one_head_per_colour():
    ax = diagrams.draw_head_split(heads=3, d_head=2, seq_len=1)
    first_stage = [tuple(p.get_facecolor()) for p in ax.patches[:6]]  # x: one token, d_model = 6 cells
    assert first_stage[0] == first_stage[1] != first_stage[2] == first_stage[3] != first_stage[4] == first_stage[5]
    assert len(set(first_stage)) == 3


@pytest.mark.parametrize("heads", [1, 2, 4])
def test_multi_head_block_draws_every_head_when_few(heads):
    ax = diagrams.draw_multi_head_block(heads=heads)
    labels = diagrams.box_labels(ax)
    assert labels[:7] == ["query", "key", "value", "query_proj", "key_proj", "value_proj", "split heads"]
    assert labels[7:-3] == [f"head {h}" for h in range(heads)]
    assert labels[-3:] == ["concat heads", "out_proj", "output"]
    assert f"heads = {heads}" in _all_text(ax)


def test_multi_head_block_elides_the_middle_heads_when_many():
    ax = diagrams.draw_multi_head_block(heads=8)
    heads_drawn = [label for label in diagrams.box_labels(ax) if label.startswith("head ")]
    assert heads_drawn == ["head 0", "head 1", "head 7"]
    assert "..." in _all_text(ax)


def test_module_projection_names_match_the_pytorch_module():
    """The block's projection names are the attributes of course_utils.attention.MultiHeadAttention."""
    from course_utils import attention

    module = attention.MultiHeadAttention(8, 2)
    labels = diagrams.box_labels(diagrams.draw_multi_head_block(heads=2))
    for name in ("query_proj", "key_proj", "value_proj", "out_proj"):
        assert name in labels
        assert hasattr(module, name), name


@pytest.mark.parametrize(
    ("call", "error", "fragment"),
    [
        (lambda: diagrams.draw_qkv_flow(ax="left"), TypeError, "ax must be a matplotlib Axes or None"),
        (lambda: diagrams.draw_head_split(heads=0), ValueError, "heads must be a positive int"),
        (lambda: diagrams.draw_head_split(heads=2.0), TypeError, "heads must be an int"),
        (lambda: diagrams.draw_head_split(heads=9), ValueError, "heads must be at most 8"),
        (lambda: diagrams.draw_head_split(d_head=7), ValueError, "d_head must be at most 6"),
        (lambda: diagrams.draw_head_split(seq_len=0), ValueError, "seq_len must be a positive int"),
        (lambda: diagrams.draw_head_split(api="jax"), ValueError, "api must be 'torch' or 'numpy'"),
        (lambda: diagrams.draw_multi_head_block(heads=True), TypeError, "heads must be an int"),
        (lambda: diagrams.draw_multi_head_block(ax=3), TypeError, "ax must be a matplotlib Axes"),
        (lambda: diagrams.box_labels(None), TypeError, "ax must be a matplotlib Axes"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()
