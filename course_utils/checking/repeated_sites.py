"""More steps a student varies, for :mod:`course_utils.checking.mutations`: one mistake made everywhere at once.

A student who holds a misconception makes it at every place the step is taken, not at one: bytes forgotten in
both totals, every role score averaged over the heads, every weight read with its indices swapped. The other
site modules vary one place at a time; here the same variation is made at every place of the function at once:

- the same factor left out of every product that has it (``x * bytes_per_value`` and ``y * bytes_per_value``);
- the same reduction axes replaced in every reduction over them (``axis=(0, 2)`` as ``axis=(1, 2)`` everywhere);
- the last two indices swapped in every subscript with two or more (each weight read as its transpose).

Each site is ``(key, words, misconception, None, (function, new_function))``: the whole function replaced.

Introduced in notebooks/05_inside_the_heads.ipynb and notebooks/06_efficient_attention.ipynb.
"""

from __future__ import annotations

import ast
import copy

__all__ = ["repeated_sites"]

_FACTOR_WORDS = "the right computation with the same factor left out of every product that needs it"
_AXES_WORDS = "the right computation with every reduction over several axes taken over another axis"
_SWAP_WORDS = "the right computation with two indices swapped in every lookup (rows read where columns belong)"


def _is_constant(node) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _is_constant(node.operand)
    return isinstance(node, ast.Constant)


def _replace_all(function, match, make) -> tuple[ast.AST, int]:
    """A copy of ``function`` with every node for which ``match(node)`` holds replaced by ``make(node)``."""
    count = 0

    class _Swap(ast.NodeTransformer):
        def generic_visit(self, node):
            nonlocal count
            node = super().generic_visit(node)
            if match(node):
                count += 1
                return make(node)
            return node

    return _Swap().visit(copy.deepcopy(function)), count


def _factor_sites(function) -> list:
    products = [
        n
        for n in ast.walk(function)
        if isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.Mult)
        and not _is_constant(n.left)
        and not _is_constant(n.right)
    ]
    factors = {}
    for n in products:
        for side in (n.left, n.right):
            factors.setdefault(ast.dump(side), 0)
            factors[ast.dump(side)] += 1
    out = []
    for dumped, times in factors.items():
        if times < 2:
            continue

        def match(n, dumped=dumped):
            return (
                isinstance(n, ast.BinOp)
                and isinstance(n.op, ast.Mult)
                and dumped in (ast.dump(n.left), ast.dump(n.right))
            )

        def make(n, dumped=dumped):
            return n.left if ast.dump(n.right) == dumped else n.right

        new, count = _replace_all(function, match, make)
        if count >= 2:
            out.append(("factor:dropped_everywhere", _FACTOR_WORDS, None, None, (function, new)))
    return out


def _axes_of(node):
    for kw in getattr(node, "keywords", []):
        if kw.arg in ("axis", "dim") and isinstance(kw.value, ast.Tuple):
            axes = [e.value if isinstance(e, ast.Constant) and type(e.value) is int else None for e in kw.value.elts]
            if None not in axes and all(a >= 0 for a in axes):
                return tuple(axes)
    return None


def _axes_sites(function) -> list:
    tuples = {}
    for n in ast.walk(function):
        if isinstance(n, ast.Call) and _axes_of(n) is not None:
            tuples[_axes_of(n)] = tuples.get(_axes_of(n), 0) + 1
    out = []
    for axes, times in tuples.items():
        if times < 2:
            continue
        for k in range(len(axes)):
            for other in (a for a in range(4) if a not in axes):
                new_axes = axes[:k] + (other,) + axes[k + 1 :]

                def match(n, axes=axes):
                    return isinstance(n, ast.Call) and _axes_of(n) == axes

                def make(n, new_axes=new_axes):
                    for kw in n.keywords:
                        if kw.arg in ("axis", "dim"):
                            kw.value = ast.Tuple([ast.Constant(a) for a in new_axes], ast.Load())
                    return n

                new, _ = _replace_all(function, match, make)
                out.append(("axis:tuple_everywhere", _AXES_WORDS, None, None, (function, new)))
    return out


def _swappable(n) -> bool:
    if not (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and isinstance(n.slice, ast.Tuple)):
        return False
    if len(n.slice.elts) < 2:
        return False
    a, b = n.slice.elts[-2:]
    return ast.dump(a) != ast.dump(b) and not any(isinstance(x, ast.Constant) and x.value is Ellipsis for x in (a, b))


def _swap_sites(function) -> list:
    def make(n):
        n.slice.elts[-2], n.slice.elts[-1] = n.slice.elts[-1], n.slice.elts[-2]
        return n

    new, count = _replace_all(function, _swappable, make)
    if count < 2:
        return []
    return [("index:swapped_everywhere", _SWAP_WORDS, None, None, (function, new))]


def repeated_sites(tree) -> list:
    """``[(key, words, misconception, None, (function, new_function))]``: each variation made at every place."""
    function = tree.body[0]
    return _factor_sites(function) + _axes_sites(function) + _swap_sites(function)
