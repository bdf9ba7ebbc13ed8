"""The right output with dropout applied: some entries zeroed, every other one scaled up by the same factor.

A module left in training mode (or put there: ``train(not training)`` toggles an evaluation module into
training), or a dropout applied where none belongs, gives the right values times ``1 / (1 - p)`` where dropout
kept them and 0 where it dropped them. :func:`dropout_findings` names that relation on one case; the key is
``dropout`` so that it must hold on every failing case to be named.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking.relation_basics import Finding

__all__ = ["dropout_findings", "MIN_DROPPED"]

MIN_DROPPED = 2
"""At least this many entries must be dropped (zero in yours, not in the right one) for the relation to hold."""


def dropout_findings(e: np.ndarray, g: np.ndarray, atol: float, rtol: float) -> list:
    """``[Finding("dropout", ...)]`` when ``g`` is ``e`` with entries zeroed and the rest times one factor > 1."""
    if e.shape != g.shape or e.size < 4:
        return []
    nonzero = np.abs(e) > atol
    dropped = nonzero & (g == 0)
    kept = nonzero & (g != 0)
    if dropped.sum() < MIN_DROPPED or kept.sum() < MIN_DROPPED:
        return []
    if np.any(np.abs(g[~nonzero]) > atol):
        return []  # where the right output is 0, dropout keeps it 0
    ratios = g[kept] / e[kept]
    scale = float(np.median(ratios))
    if not np.isfinite(scale) or scale <= 1 + 1e-6:
        return []
    if not np.allclose(g[kept], e[kept] * scale, atol=atol, rtol=max(rtol, 1e-5)):
        return []
    p = 1 - 1 / scale
    words = (
        f"the right values with dropout applied: {int(dropped.sum())} of {int(nonzero.sum())} entries zeroed and "
        f"the others scaled up by the same factor (a dropout rate of about {p:.2g}): is a module in training mode "
        "where it should evaluate, or dropout applied where none belongs?"
    )
    return [Finding("dropout", words)]
