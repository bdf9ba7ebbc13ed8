"""More steps a student varies, for :mod:`course_utils.checking.mutations`: functions swapped for their twin.

Each site is ``(key, words, misconception, path, replacement)`` as in ``mutations``; ``path`` is None and
``replacement`` is ``(node, new_node)``. The kinds here:

- a reduction swapped for its opposite or its sibling: ``argmax`` for ``argmin``, ``max`` for ``min``,
  ``sum`` for ``mean`` (and the reverse);
- a transpose left out: ``x.transpose(...)``, ``np.swapaxes(x, ...)``, ``x.T``, ``x.mT`` used as ``x``.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import ast
import copy

__all__ = ["twin_sites"]

_TWINS = {
    "argmax": (
        "argmin",
        "the right computation with the smallest entry taken where the largest is asked (or the reverse)",
    ),
    "argmin": (
        "argmax",
        "the right computation with the largest entry taken where the smallest is asked (or the reverse)",
    ),
    "max": ("min", "the right computation with a minimum where a maximum is asked (or the reverse)"),
    "min": ("max", "the right computation with a maximum where a minimum is asked (or the reverse)"),
    "amax": ("amin", "the right computation with a minimum where a maximum is asked (or the reverse)"),
    "sum": ("mean", "the right computation with an average where a sum is asked"),
    "mean": ("sum", "the right computation with a sum where an average is asked"),
}
_TRANSPOSES = {"transpose", "swapaxes", "swapdims", "permute"}
_MODULES = {"np", "numpy", "torch"}


def _called(node) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _transposed_operand(node):
    """The array a transpose is applied to, or None when ``node`` is no transpose."""
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT") and isinstance(node.ctx, ast.Load):
        return node.value
    if isinstance(node, ast.Call) and _called(node) in _TRANSPOSES and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        if isinstance(owner, ast.Name) and owner.id in _MODULES:
            return node.args[0] if node.args else None  # np.swapaxes(x, -1, -2)
        return owner  # x.transpose(-2, -1)
    return None


def twin_sites(tree) -> list:
    """``[(key, words, misconception, None, (node, new_node))]`` for every twin swap and transpose left out."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _called(node) in _TWINS:
            twin, words = _TWINS[_called(node)]
            changed = copy.deepcopy(node)
            changed.func.attr = twin
            out.append((f"twin:{_called(node)}", words, None, None, (node, changed)))
        operand = _transposed_operand(node)
        if operand is not None:
            words = "the right computation with a transpose left out (the axes kept in their order)"
            out.append(("transpose:dropped", words, None, None, (node, copy.deepcopy(operand))))
    return out
