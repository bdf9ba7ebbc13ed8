"""More steps a student varies, for :mod:`course_utils.checking.mutations`: counts and costs.

A count of FLOPs, bytes or parameters is a sum of terms, each a size times how many times it is needed (three
projections, two matrices for keys and values, four trips of the scores). The mistakes students make there are
the same in every count:

- a term counted one time too few or too many (a projection, a matrix or a trip left out or added): a whole
  multiplier ``k`` used as ``k - 1`` or ``k + 1``;
- a term counted half as many times as it is needed (the scores written but never read back): ``k`` as ``k / 2``;
- a number of tiles rounded down where a last, partial tile still counts (``ceil`` as ``floor``);
- a conversion by a size left out (values where bytes are asked): ``a // b`` used as ``a``;
- the two cases of a condition swapped (the count with the cache given where it is asked without): an ``if``'s
  test negated.

Each site is ``(key, words, misconception, path, replacement)`` as in ``mutations``; ``path`` is None and
``replacement`` is ``(node, new_node)``. The words say what the answer does, never the reference's code.

Introduced in notebooks/06_efficient_attention.ipynb (the counts of lesson 06 are named through it).
"""

from __future__ import annotations

import ast
import copy

__all__ = ["count_sites", "MAX_MULTIPLIER"]

MAX_MULTIPLIER = 16
"""Whole multipliers up to this are varied (2 projections, 4 trips); larger constants are sizes, not counts."""

_FEWER = "the right computation with one of its terms counted one time too few (a whole multiplier one too small)"
_MORE = "the right computation with one of its terms counted one time too many (a whole multiplier one too large)"
_HALF = "the right computation with one of its terms counted half as many times as it is needed"
_FLOOR = "the right computation with a number of tiles rounded down: a last, partial tile not counted"
_UNIT = "the right computation without one of its divisions by a size (values where bytes are asked, or the reverse?)"
_SWAPPED = "the right computation with the two cases of a condition swapped (an `if` taken the other way round)"


def _multiplier(node):
    if isinstance(node, ast.Constant) and type(node.value) is int and 2 <= node.value <= MAX_MULTIPLIER:
        return node.value
    return None


def _multiplier_sites(tree) -> list:
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        for side in ("left", "right"):
            k = _multiplier(getattr(node, side))
            if k is None:
                continue
            options = [(k - 1, "count:multiplier_minus_one", _FEWER), (k + 1, "count:multiplier_plus_one", _MORE)]
            if k % 2 == 0 and k > 2:
                options.append((k // 2, "count:multiplier_halved", _HALF))
            for value, key, words in options:
                moved = copy.deepcopy(node)
                setattr(moved, side, ast.Constant(value))
                out.append((key, words, None, None, (node, moved)))
    return out


def _called(node) -> str:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return node.func.id if isinstance(node.func, ast.Name) else ""


def _rounding_sites(tree) -> list:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "ceil" and isinstance(node.func, ast.Attribute):
            moved = copy.deepcopy(node)
            moved.func.attr = "floor"
            out.append(("count:floor", _FLOOR, None, None, (node, moved)))
    return out


def _unit_sites(tree) -> list:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and isinstance(node.right, ast.Name):
            out.append(("count:division_left_out", _UNIT, None, None, (node, copy.deepcopy(node.left))))
    return out


def _condition_sites(tree) -> list:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            moved = copy.deepcopy(node)
            moved.test = ast.UnaryOp(ast.Not(), copy.deepcopy(node.test))
            out.append(("count:cases_swapped", _SWAPPED, None, None, (node, moved)))
    return out


def count_sites(tree) -> list:
    """``[(key, words, misconception, None, (node, new_node))]``: every multiplier, rounding, conversion, condition."""
    return _multiplier_sites(tree) + _rounding_sites(tree) + _unit_sites(tree) + _condition_sites(tree)
