"""Attention figures: one heatmap, a grid over heads, and a presentation style for class.

Introduced in ``notebooks/01_attention_numpy.ipynb``. Functions return the Axes or Figure and
never call ``plt.show()``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["plot_attention", "plot_attention_heads", "use_presentation_style"]

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
    cmap: str = "Blues",
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
        _, ax = plt.subplots(figsize=(1.0 + 0.55 * max(k_len, 4), 0.8 + 0.5 * max(q_len, 4)))
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
        top = vmax if vmax is not None else weights.max()
        for i in range(q_len):
            for j in range(k_len):
                colour = "white" if weights[i, j] > 0.6 * top else "black"
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
    fig, axes = plt.subplots(
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
        _DEFAULT_RC.update({key: plt.rcParams[key] for key in _PRESENTATION_RC})
    plt.rcParams.update(_PRESENTATION_RC if enabled else _DEFAULT_RC)
