"""Attention figures: one heatmap, a grid over heads, and a presentation style for class.

Introduced in ``notebooks/01_attention_numpy.ipynb``. Functions return the Axes or Figure and
never call ``plt.show()``.

Colour, for every reader: weights are drawn with a sequential single-hue colormap (``"Blues"``:
lightness alone encodes the value, so the heatmap reads the same in grey and under colour-vision
deficiencies), and lines get a colour, a marker and a dash pattern each (``LINE_STYLES``: the
Okabe-Ito colour-blind-safe palette), so two lines never differ by colour alone.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "LINE_STYLES",
    "WEIGHTS_CMAP",
    "line_style",
    "line_style_cycler",
    "plot_attention",
    "plot_attention_heads",
    "text_colour_on",
    "use_accessible_style",
    "use_presentation_style",
]


def _pyplot():
    """matplotlib.pyplot, imported on first use: importing this module does not load matplotlib."""
    import matplotlib.pyplot as plt

    return plt


WEIGHTS_CMAP = "Blues"  # sequential, single hue: darker = more weight, in colour, in grey and for CVD readers
# Okabe & Ito's colour-blind-safe palette, each colour paired with its own marker and dash pattern.
LINE_STYLES: tuple[dict, ...] = (
    {"color": "#0072B2", "marker": "o", "linestyle": "-"},  # blue
    {"color": "#E69F00", "marker": "s", "linestyle": "--"},  # orange
    {"color": "#009E73", "marker": "^", "linestyle": "-."},  # bluish green
    {"color": "#CC79A7", "marker": "D", "linestyle": ":"},  # reddish purple
    {"color": "#56B4E9", "marker": "v", "linestyle": (0, (5, 1, 1, 1, 1, 1))},  # sky blue
    {"color": "#D55E00", "marker": "P", "linestyle": (0, (1, 1))},  # vermillion
    {"color": "#000000", "marker": "X", "linestyle": (0, (8, 2))},  # black
)

_DEFAULT_RC: dict = {}
_PRESENTATION_RC = {
    "font.size": 15,
    "axes.titlesize": 17,
    "axes.labelsize": 15,
    "xtick.labelsize": 13,
    "ytick.labelsize": 13,
    "legend.fontsize": 13,
    "figure.figsize": (9.0, 6.0),
    "figure.dpi": 110,
    "lines.linewidth": 2.5,
}


def line_style(index: int) -> dict:
    """Keyword arguments (color, marker, linestyle) for the `index`-th line of a plot.

    Use it where a plot sets its own styles, e.g. ``ax.plot(x, y, **plotting.line_style(1))``;
    the styles repeat after ``len(LINE_STYLES)`` lines.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"index must be an int, got {type(index).__name__}")
    return dict(LINE_STYLES[int(index) % len(LINE_STYLES)])


def line_style_cycler():
    """A matplotlib cycler over ``LINE_STYLES`` (colour, marker and dash pattern change together).

    Introduced in notebooks/00_start_here.ipynb.
    """
    from cycler import cycler

    return cycler(**{key: [style[key] for style in LINE_STYLES] for key in ("color", "marker", "linestyle")})


def use_accessible_style(enabled: bool = True) -> None:
    """Make every new line plot tell its lines apart by marker and dash as well as colour.

    Sets ``axes.prop_cycle`` to ``line_style_cycler()`` and ``image.cmap`` to ``WEIGHTS_CMAP``;
    ``enabled=False`` restores matplotlib's values from before the first call.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not _ACCESSIBLE_DEFAULT_RC:
        _ACCESSIBLE_DEFAULT_RC.update({key: _pyplot().rcParams[key] for key in ("axes.prop_cycle", "image.cmap")})
    if enabled:
        _pyplot().rcParams.update({"axes.prop_cycle": line_style_cycler(), "image.cmap": WEIGHTS_CMAP})
    else:
        _pyplot().rcParams.update(_ACCESSIBLE_DEFAULT_RC)


_ACCESSIBLE_DEFAULT_RC: dict = {}


def _relative_luminance(rgb) -> float:
    """WCAG 2 relative luminance of an sRGB colour with channels in [0, 1]."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def text_colour_on(rgba) -> str:
    """ "black" or "white", whichever has the higher WCAG contrast ratio on the background `rgba`.

    Introduced in notebooks/01_attention_numpy.ipynb (the numbers written in heatmap cells).
    """
    luminance = _relative_luminance(rgba)
    on_black = (luminance + 0.05) / 0.05
    on_white = 1.05 / (luminance + 0.05)
    return "black" if on_black >= on_white else "white"


def _as_matrix(weights, name: str, ndim: int) -> np.ndarray:
    if hasattr(weights, "detach"):
        weights = weights.detach().cpu().numpy()
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != ndim:
        layout = "(q_len, k_len)" if ndim == 2 else "(heads, q_len, k_len)"
        raise ValueError(f"{name} must be {layout} but has shape {weights.shape}")
    return weights


def _check_labels(labels, size: int, name: str):
    if labels is None:
        return [str(i) for i in range(size)]
    labels = [str(label) for label in labels]
    if len(labels) != size:
        raise ValueError(f"{name} has {len(labels)} labels but the weights have {size} positions on that axis")
    return labels


def plot_attention(
    weights,
    query_labels=None,
    key_labels=None,
    *,
    ax=None,
    title: str | None = "Attention weights",
    annotate: bool | None = None,
    cmap: str = WEIGHTS_CMAP,
    vmax: float | None = 1.0,
    colorbar: bool = True,
):
    """Heatmap of one attention matrix: rows are queries (attending from), columns keys (attended to).

    Parameters
    ----------
    weights : array or Tensor (q_len, k_len)
    query_labels, key_labels : sequences of str, optional (default: positions)
    ax : matplotlib Axes, optional
    annotate : bool, optional. Write each weight in its cell (default: when both sides are <= 10)
    cmap : str. Keep the default single-hue ``WEIGHTS_CMAP`` for weights (a diverging or rainbow map
        would suggest a midpoint or an order of hues that weights do not have)
    vmax : float or None. Top of the colour scale; 1.0 keeps heatmaps comparable, None autoscales.

    Returns
    -------
    matplotlib Axes

    Introduced in notebooks/01_attention_numpy.ipynb.
    """
    weights = _as_matrix(weights, "weights", 2)
    q_len, k_len = weights.shape
    query_labels = _check_labels(query_labels, q_len, "query_labels")
    key_labels = _check_labels(key_labels, k_len, "key_labels")
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(1.0 + 0.55 * max(k_len, 4), 0.8 + 0.5 * max(q_len, 4)))
    image = ax.imshow(weights, cmap=cmap, vmin=0.0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(k_len), key_labels, rotation=90 if max(map(len, key_labels)) > 3 else 0)
    ax.set_yticks(range(q_len), query_labels)
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending from)")
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = q_len <= 10 and k_len <= 10
    if annotate:
        for i in range(q_len):
            for j in range(k_len):
                colour = text_colour_on(image.cmap(image.norm(weights[i, j])))
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center", fontsize=8, color=colour)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="weight")
    return ax


def plot_attention_heads(weights, query_labels=None, key_labels=None, *, ncols: int = 4, title: str | None = None):
    """Grid of heatmaps, one per head, on a shared colour scale.

    Parameters
    ----------
    weights : array or Tensor (heads, q_len, k_len)
    ncols : int, heads per row

    Returns
    -------
    matplotlib Figure

    Introduced in notebooks/03_multi_head_numpy.ipynb.
    """
    weights = _as_matrix(weights, "weights", 3)
    heads, q_len, k_len = weights.shape
    ncols = max(1, min(ncols, heads))
    nrows = -(-heads // ncols)
    fig, axes = _pyplot().subplots(
        nrows, ncols, figsize=(0.3 + ncols * (0.9 + 0.3 * k_len), 0.5 + nrows * (0.9 + 0.28 * q_len)), squeeze=False
    )
    for h, ax in enumerate(axes.flat):
        if h >= heads:
            ax.axis("off")
            continue
        plot_attention(
            weights[h],
            query_labels,
            key_labels,
            ax=ax,
            title=f"head {h}",
            annotate=q_len <= 6 and k_len <= 6,
            colorbar=False,
        )
        if h % ncols:
            ax.set_ylabel("")
        if h < heads - ncols:
            ax.set_xlabel("")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def use_presentation_style(enabled: bool = True) -> None:
    """Larger fonts, lines and figures for projecting in class; ``enabled=False`` restores the defaults.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not _DEFAULT_RC:
        _DEFAULT_RC.update({key: _pyplot().rcParams[key] for key in _PRESENTATION_RC})
    _pyplot().rcParams.update(_PRESENTATION_RC if enabled else _DEFAULT_RC)
