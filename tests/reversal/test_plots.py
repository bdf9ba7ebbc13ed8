"""course_utils.reversal.plots: the reversal lessons' line plots tell their lines apart without colour (issue 14).

Every pair of lines must differ in marker or dash pattern, so the figure still reads when printed in
grey or seen with a colour-vision deficiency.
"""

import matplotlib

matplotlib.use("Agg")

from itertools import combinations  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_utils import plotting  # noqa: E402
from course_utils.reversal import plots  # noqa: E402


def _dash(line) -> tuple:
    """A line's dash pattern as drawn: ``get_linestyle()`` alone calls every custom pattern "--"."""
    offset, pattern = line._unscaled_dash_pattern
    return (line.get_linestyle(), float(offset), None if pattern is None else tuple(float(p) for p in pattern))


def _look(line) -> tuple:
    return (line.get_marker(), _dash(line))


def assert_lines_differ_without_colour(ax) -> None:
    """Fail if the Axes has a line without a marker or two lines with the same marker and dash pattern."""
    lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert lines, "the plot has no labelled lines"
    for line in lines:
        assert line.get_marker() not in (None, "None", "", " "), f"line {line.get_label()!r} has no marker"
    for a, b in combinations(lines, 2):
        assert _look(a) != _look(b), (
            f"lines {a.get_label()!r} and {b.get_label()!r} share marker {a.get_marker()!r} and dash "
            f"pattern {_dash(a)}: in grey they differ by colour only"
        )


def _eval(scale: float):
    return SimpleNamespace(by_length={n: (scale, scale / n, 10) for n in range(4, 13)})


def _train(start: float):
    return SimpleNamespace(losses=[start / (step + 1) for step in range(200)])


@pytest.mark.parametrize("count", [2, 3, len(plotting.LINE_STYLES)])
def test_accuracy_by_length_lines_differ_by_marker_or_dash(count):
    results = {f"model {i}": _eval(1.0 - 0.1 * i) for i in range(count)}
    ax = plots.plot_accuracy_by_length(results, train_max_len=10)
    try:
        assert_lines_differ_without_colour(ax)
        dashes = {_dash(line) for line in ax.get_lines()}
        assert len(dashes) == count, f"{count} lines but only {len(dashes)} dash patterns"
    finally:
        plt.close(ax.figure)


def test_the_check_catches_lines_told_apart_by_colour_only():
    """The helper above fails on the old style: same marker, all solid (and on lines with no marker)."""
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], marker="o", label="a")
    ax.plot([0, 1], [1, 0], marker="o", label="b")
    with pytest.raises(AssertionError, match="share marker"):
        assert_lines_differ_without_colour(ax)
    ax.clear()
    ax.plot([0, 1], [0, 1], label="plain")
    with pytest.raises(AssertionError, match="has no marker"):
        assert_lines_differ_without_colour(ax)
    ax.clear()
    # two custom dash patterns that get_linestyle() both reports as "--" still count as different
    ax.plot([0, 1], [0, 1], marker="o", linestyle=(0, (8, 2)), label="long dashes")
    ax.plot([0, 1], [1, 0], marker="o", linestyle=(0, (1, 1)), label="dots")
    assert_lines_differ_without_colour(ax)
    plt.close(fig)
