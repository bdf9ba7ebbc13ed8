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
  test negated, in a function of whole numbers only (elsewhere an ``if`` guards an option, a mask left out);
- a term counted once per position (or per token, per layer) where it is needed once: a product of sizes
  multiplied by another argument of the function;
- a size one smaller or one larger at every use (the prefix without the new token): an argument ``n`` that the
  function counts with (an operand of arithmetic, a ``range`` bound) used as ``n - 1`` or ``n + 1`` everywhere.

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


_PER_SIZE = "the right computation with one of its terms counted once for each of another size where it is needed once"
_SIZE_SHIFT = "the right computation with one of its sizes one {} at every use (a token or a position {}?)"


def _product_terms(tree) -> list:
    """The products that are a whole term of a sum (``2 * a * b`` in ``2 * a * b + c``), outermost only."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for side in (node.left, node.right):
                if isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mult):
                    found.append(side)
    return found


def _per_size_sites(tree) -> list:
    out = []
    params = [a.arg for a in tree.body[0].args.args if a.arg != "self"]
    for term in _product_terms(tree):
        used = {n.id for n in ast.walk(term) if isinstance(n, ast.Name)}
        for p in params:
            if p in used:
                continue
            moved = ast.BinOp(copy.deepcopy(term), ast.Mult(), ast.Name(p, ast.Load()))
            out.append(("count:term_per_size", _PER_SIZE, None, None, (term, moved)))
    return out


def _size_shift_sites(tree) -> list:
    """An argument ``n`` read as ``n - 1`` (and ``n + 1``) at every use: the whole function replaced."""
    out = []
    function = tree.body[0]
    for p in sorted(_counted(function)):
        for op, words in (
            (ast.Sub(), _SIZE_SHIFT.format("smaller", "left out")),
            (ast.Add(), _SIZE_SHIFT.format("larger", "added")),
        ):

            class _Shift(ast.NodeTransformer):
                def visit_Name(self, node, p=p, op=op):
                    if node.id == p and isinstance(node.ctx, ast.Load):
                        return ast.BinOp(ast.Name(p, ast.Load()), op, ast.Constant(1))
                    return node

            new = _Shift().visit(copy.deepcopy(function))
            key = "count:size_minus_one" if isinstance(op, ast.Sub) else "count:size_plus_one"
            out.append((key, words, None, None, (function, new)))
    return out


def _is_count(function) -> bool:
    """A function of whole numbers: no argument is indexed, has an attribute read, or has its length taken."""
    params = {a.arg for a in function.args.args if a.arg != "self"}
    for node in ast.walk(function):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.value, ast.Name):
            if node.value.id in params:
                return False
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id in params for a in node.args):
            if _called(node) in ("len", "shape", "asarray", "array", "tensor"):
                return False
    return True


def _counted(function) -> set:
    """The arguments a function counts with itself: an operand of arithmetic, or the bound of a ``range``."""
    params = {a.arg for a in function.args.args if a.arg != "self"}
    found = set()
    for node in ast.walk(function):
        operands = []
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        elif isinstance(node, ast.Call) and _called(node) == "range":
            operands = list(node.args)
        found |= {o.id for o in operands if isinstance(o, ast.Name) and o.id in params}
    return found


def count_sites(tree) -> list:
    """``[(key, words, misconception, None, (node, new_node))]``: every multiplier, rounding, conversion, condition,
    term and size of a count."""
    return (
        _multiplier_sites(tree)
        + _rounding_sites(tree)
        + _unit_sites(tree)
        + (_condition_sites(tree) + _per_size_sites(tree) + _size_shift_sites(tree) if _is_count(tree.body[0]) else [])
    )
