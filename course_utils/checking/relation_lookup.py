"""Two relations of an output's layout to the right one: positions where labels are asked, and every pair of
batch items where each item is asked.

- :func:`positions_findings`: a list of whole numbers where the right output is a list of labels, and each
  number is the position of the right label in one of the case's lists (``key_labels``): the indices were
  returned and never turned into labels.
- :func:`batch_pairs_findings`: an output with one axis more than the right one, in which two axes of the
  batch's size pair every batch item of one input with every batch item of the other (``np.dot`` on stacked
  arrays, an ``einsum`` without the shared batch letter); the right output is its diagonal.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking.relation_basics import Finding, all_close

__all__ = ["positions_findings", "batch_pairs_findings"]


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
