"""Two relations of an output's layout to the right one: positions where labels are asked, and every pair of
batch items where each item is asked.

- :func:`positions_findings`: a list of whole numbers where the right output is a list of labels, and each
  number is the position of the right label in one of the case's lists (``key_labels``): the indices were
  returned and never turned into labels.
- :func:`batch_pairs_findings`: an output with one axis more than the right one, in which two axes of the
  batch's size pair every batch item of one input with every batch item of the other (``np.dot`` on stacked
  arrays, an ``einsum`` without the shared batch letter); the right output is its diagonal.
- :func:`cropped_findings`: an output smaller than the right one on some axes that holds its leading block
  (a width taken from the longest sequence instead of the padded width asked for).
- :func:`repeated_findings`: an output larger on axes where the right one has size 1, holding it repeated
  there (``expand`` to a number of heads where one head is asked, to broadcast later).

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking.relation_basics import Finding, all_close

__all__ = ["positions_findings", "batch_pairs_findings", "cropped_findings", "repeated_findings"]


def _whole(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def positions_findings(expected, got, args, names) -> list:
    """``positions:<name>`` when ``got`` lists the positions in argument ``<name>`` of the labels ``expected`` lists."""
    if not isinstance(expected, list) or not isinstance(got, (list, tuple, np.ndarray)):
        return []
    items = list(np.asarray(got).tolist()) if isinstance(got, np.ndarray) else list(got)
    if not expected or len(items) != len(expected) or not all(_whole(v) for v in items):
        return []
    if any(_whole(v) for v in expected):
        return []  # the right output holds numbers too: positions would be no mistake of kind
    for name, arg in zip(names, args, strict=False):
        if not isinstance(arg, (list, tuple)) or not arg:
            continue
        if all(0 <= int(i) < len(arg) and arg[int(i)] == want for i, want in zip(items, expected, strict=True)):
            words = f"the positions of the right labels in `{name}`, where the labels themselves are asked"
            return [Finding(f"positions:{name}", words)]
    return []


def batch_pairs_findings(e: np.ndarray, g: np.ndarray, atol: float, rtol: float) -> list:
    """``batch_pairs`` when ``g`` pairs every batch index of one input with every batch index of the other.

    For a right output ``(*batch, q, k)`` that is ``np.dot``'s layout ``(*batch, q, *batch, k)``; the right
    output is what it holds where the two batch indices agree.
    """
    batch = e.shape[:-2]
    if e.ndim < 3 or g.shape != batch + e.shape[-2:-1] + batch + e.shape[-1:]:
        return []
    for index in np.ndindex(*batch):
        mine = g[index + (slice(None),) + index]  # (q, k): the item paired with itself
        if not all_close(np.asarray(mine, dtype=float), np.asarray(e[index], dtype=float), atol, rtol):
            return []
    words = (
        f"of shape {g.shape} where {e.shape} is asked: every item of the batch paired with every other "
        f"(np.dot on stacked arrays pairs them all); the right result is only the pairs of an item with itself"
    )
    return [Finding("batch_pairs", words)]


def _axes_words(axes, ndim) -> str:
    return ", ".join(str(a - ndim) for a in axes)


def _same(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    if a.dtype == bool or b.dtype == bool:
        return bool(np.array_equal(a, b))
    return all_close(a.astype(float), b.astype(float), atol, rtol)


def cropped_findings(e: np.ndarray, g: np.ndarray, atol: float, rtol: float) -> list:
    """``cropped:<axes>`` when ``g`` is the leading (or the trailing) block of ``e``, smaller on those axes."""
    if e.ndim != g.ndim or e.ndim == 0 or e.shape == g.shape or g.size == 0:
        return []
    if any(a > b for a, b in zip(g.shape, e.shape, strict=True)):
        return []
    leading = e[tuple(slice(0, n) for n in g.shape)]
    trailing = e[tuple(slice(m - n, m) for n, m in zip(g.shape, e.shape, strict=True))]
    if not (_same(leading, g, atol, rtol) or _same(trailing, g, atol, rtol)):
        return []
    axes = [a for a in range(e.ndim) if g.shape[a] < e.shape[a]]
    words = (
        f"the right one cut short: of shape {g.shape} where {e.shape} is asked (axis {_axes_words(axes, e.ndim)}), "
        "with the right values as far as it goes: its size is taken from something other than what the case asks"
    )
    return [Finding(f"cropped:{_axes_words(axes, e.ndim)}", words)]


def repeated_findings(e: np.ndarray, g: np.ndarray, atol: float, rtol: float) -> list:
    """``repeated:<axes>`` when ``g`` is ``e`` repeated along axes where ``e`` has size 1."""
    if e.ndim != g.ndim or e.shape == g.shape:
        return []
    axes = [a for a in range(e.ndim) if g.shape[a] != e.shape[a]]
    if any(e.shape[a] != 1 for a in axes):
        return []
    if not _same(np.broadcast_to(e, g.shape), g, atol, rtol):
        return []
    sizes = " and ".join(f"{g.shape[a]} times along axis {a - e.ndim}" for a in axes)
    words = (
        f"the right one repeated {sizes}, of shape {g.shape} where {e.shape} is asked: the right one keeps that "
        "axis at size 1, to broadcast against whatever it meets"
    )
    return [Finding(f"repeated:{_axes_words(axes, e.ndim)}", words)]
