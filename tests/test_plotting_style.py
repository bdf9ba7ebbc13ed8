"""Figures readable by everyone: single-hue weight maps, lines told apart without colour (issue 14)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from course_utils import plotting  # noqa: E402


def _luminance(colour) -> float:
    return plotting._relative_luminance(to_rgb(colour))


def _contrast(a: float, b: float) -> float:
    high, low = max(a, b), min(a, b)
    return (high + 0.05) / (low + 0.05)


def test_weights_colormap_is_sequential_and_single_hue():
    """Lightness falls monotonically with the weight and the hue stays put: it reads the same in grey."""
    cmap = matplotlib.colormaps[plotting.WEIGHTS_CMAP]
    samples = cmap(np.linspace(0.0, 1.0, 64))[:, :3]
    luminance = np.array([plotting._relative_luminance(rgb) for rgb in samples])
    assert np.all(np.diff(luminance) < 0), "the weight colormap's lightness is not monotonic"
    assert luminance[0] - luminance[-1] > 0.8, "the weight colormap spans too little lightness"
    hsv = matplotlib.colors.rgb_to_hsv(samples[8:])  # the near-white end has no meaningful hue
    assert np.ptp(hsv[:, 0]) < 0.05, f"the weight colormap changes hue by {np.ptp(hsv[:, 0]):.3f}"


def test_plot_attention_uses_the_single_hue_map_and_readable_numbers():
    weights = np.array([[0.05, 0.95], [0.5, 0.5]])
    ax = plotting.plot_attention(weights, annotate=True)
    image = ax.images[0]
    assert image.cmap.name == plotting.WEIGHTS_CMAP
    for text in ax.texts:
        value = float(text.get_text())
        background = image.cmap(image.norm(value))
        ratio = _contrast(_luminance(text.get_color()), plotting._relative_luminance(background))
        assert ratio >= 4.5, f"the number {value} has contrast {ratio:.2f} on its cell (WCAG AA needs 4.5)"
    plt.close(ax.figure)


@pytest.mark.parametrize("value", np.linspace(0.0, 1.0, 21))
def test_text_colour_on_every_shade_of_the_map_meets_aa(value):
    background = matplotlib.colormaps[plotting.WEIGHTS_CMAP](value)
    text = plotting.text_colour_on(background)
    ratio = _contrast(_luminance(text), plotting._relative_luminance(background))
    assert ratio >= 4.5, f"{text} on Blues({value:.2f}) has contrast {ratio:.2f}"


def test_lines_differ_by_marker_and_dash_not_only_colour():
    styles = plotting.LINE_STYLES
    assert len(styles) >= 6
    markers = [style["marker"] for style in styles]
    dashes = [str(style["linestyle"]) for style in styles]
    assert len(set(markers)) == len(styles), f"repeated markers: {markers}"
    assert len(set(dashes)) == len(styles), f"repeated dash patterns: {dashes}"
    colours = [to_rgb(style["color"]) for style in styles]
    assert len(set(colours)) == len(styles)


def test_line_style_helpers_and_the_accessible_style_round_trip():
    assert plotting.line_style(1) == plotting.LINE_STYLES[1]
    assert plotting.line_style(len(plotting.LINE_STYLES)) == plotting.LINE_STYLES[0]
    with pytest.raises(TypeError, match="index must be an int, got str"):
        plotting.line_style("1")
    before = plt.rcParams["axes.prop_cycle"]
    plotting.use_accessible_style()
    try:
        fig, ax = plt.subplots()
        lines = [ax.plot([0, 1], [i, i + 1])[0] for i in range(3)]
        assert len({line.get_marker() for line in lines}) == 3
        assert len({line.get_linestyle() for line in lines}) == 3
        assert plt.rcParams["image.cmap"] == plotting.WEIGHTS_CMAP
        plt.close(fig)
    finally:
        plotting.use_accessible_style(enabled=False)
    assert plt.rcParams["axes.prop_cycle"] == before
