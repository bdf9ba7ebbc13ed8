"""Figures for the reversal lessons: accuracy against source length.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb``. Functions return the Axes and never call
``plt.show()``. Nothing in ``course_utils`` imports this module; only the notebooks do. Every line gets its own colour,
marker and dash pattern (``plotting.line_style``), so the lines stay apart in grey and for readers
with colour-vision deficiencies (issue 14).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from course_utils import plotting

__all__ = ["plot_accuracy_by_length"]

_METRICS = {"exact": (1, "exact-sequence accuracy"), "token": (0, "token accuracy")}


def plot_accuracy_by_length(
    results: dict, *, metric: str = "exact", train_max_len: int | None = None, ax=None, title: str | None = None
):
    """Accuracy against source length, one line per model (the shape of Bahdanau et al. 2015, Figure 2).

    Parameters
    ----------
    results : dict name -> object with ``by_length`` ``{n: (token_accuracy, exact_accuracy, count)}``
        (a ``course_utils.reversal.training.EvalResult``, or several merged with ``{**a.by_length, **b.by_length}``
        wrapped in any object with that attribute).
    metric : "exact" or "token"
    train_max_len : int, optional. Shades the lengths longer than any training sequence.

    Returns
    -------
    matplotlib Axes

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {sorted(_METRICS)} but is {metric!r}")
    if not results:
        raise ValueError("results is empty: give at least one model's by_length table")
    index, label = _METRICS[metric]
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 4.0))
    lengths_seen = []
    for i, (name, result) in enumerate(results.items()):
        by_length = result.by_length
        lengths = sorted(by_length)
        lengths_seen += lengths
        values = [by_length[n][index] for n in lengths]
        ax.plot(lengths, values, label=name, **plotting.line_style(i))
    if train_max_len is not None and max(lengths_seen) > train_max_len:
        ax.axvspan(train_max_len + 0.5, max(lengths_seen) + 0.5, color="0.9", zorder=0)
        ax.text(train_max_len + 0.7, 0.03, "longer than\nany training\nsequence", fontsize=8, va="bottom")
    ax.set_xlabel("source length n")
    ax.set_ylabel(label)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xticks(np.arange(min(lengths_seen), max(lengths_seen) + 1, 2))
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    ax.set_title(title or f"{label.capitalize()} against length (free-running, test set)")
    return ax
