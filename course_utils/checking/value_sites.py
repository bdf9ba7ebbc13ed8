"""More steps a student varies, for :mod:`course_utils.checking.mutations`: which values go where.

Measuring heads, building a model's input, reading one weight out of a table: the mistakes there are a value
read from the wrong place, the same in every exercise that takes the step:

- two indices of a subscript swapped (a key read as a query: ``w[..., j, i]`` for ``w[..., i, j]``);
- a reduction over several axes taken over another one of them (the heads averaged where the sequences are);
- positions counted from 1, or from the end (``arange(n)`` as ``arange(1, n + 1)`` or reversed);
- an argument of a call replaced by an argument of the function (the token ids looked up in the position table);
- a sum of two computed terms taken as their product;
- a triangle's offset left out (``tril(x, qs - ks)`` as ``tril(x, 0)``: positions counted inside a tile);
- masked entries filled with 0 where ``-inf`` belongs (a masked key keeps a weight).

Each site is ``(key, words, misconception, path, replacement)`` as in ``mutations``; ``path`` is None and
``replacement`` is ``(node, new_node)``. The words say what the answer does, never the reference's code.

Introduced in notebooks/05_inside_the_heads.ipynb (the head measures are named through it).
"""

from __future__ import annotations

import ast
import copy

__all__ = ["value_sites"]

_SWAP_WORDS = "the right computation with two indices swapped (a row read where a column belongs, or the reverse)"
_AXES_WORDS = "the right computation with its reduction over several axes taken over another axis"
_FROM_ONE_WORDS = "the right computation with positions counted from 1 instead of 0"
_REVERSED_WORDS = "the right computation with positions counted from the end"
_ARGUMENT_WORDS = "the right computation with one of your function's arguments passed where another value belongs"
_PRODUCT_WORDS = "the right computation with a product where a sum belongs"


def _called(node) -> str:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return node.func.id if isinstance(node.func, ast.Name) else ""


def _is_constant(node) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _is_constant(node.operand)
    return isinstance(node, ast.Constant)


def _index_swap_sites(tree) -> list:
    """``x[..., a, b]`` as ``x[..., b, a]`` when ``a`` and ``b`` differ (the last two items of a tuple index)."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)):
            continue
        if not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) < 2:
            continue
        a, b = node.slice.elts[-2:]
        if ast.dump(a) == ast.dump(b) or any(isinstance(x, ast.Constant) and x.value is Ellipsis for x in (a, b)):
            continue
        moved = copy.deepcopy(node)
        moved.slice.elts[-2], moved.slice.elts[-1] = copy.deepcopy(b), copy.deepcopy(a)
        out.append(("index:swapped", _SWAP_WORDS, None, None, (node, moved)))
    return out


def _axes_sites(tree) -> list:
    """``axis=(0, 2)`` with one axis replaced by another axis below 4 that the tuple does not hold."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg not in ("axis", "dim") or not isinstance(kw.value, ast.Tuple):
                continue
            axes = [e.value if isinstance(e, ast.Constant) and type(e.value) is int else None for e in kw.value.elts]
            if None in axes or any(a < 0 for a in axes):
                continue
            for k in range(len(axes)):
                for other in range(4):
                    if other in axes:
                        continue
                    moved = copy.deepcopy(node)
                    target = next(w for w in moved.keywords if w.arg == kw.arg)
                    target.value.elts[k] = ast.Constant(other)
                    out.append(("axis:tuple", _AXES_WORDS, None, None, (node, moved)))
    return out


def _position_sites(tree) -> list:
    """``arange(n)`` counted from 1 (``arange(1, n + 1)``) and from the end (``arange(n - 1, -1, -1)``)."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) == "arange" and len(node.args) == 1):
            continue
        n = node.args[0]
        from_one = copy.deepcopy(node)
        from_one.args = [ast.Constant(1), ast.BinOp(copy.deepcopy(n), ast.Add(), ast.Constant(1))]
        out.append(("positions:from_one", _FROM_ONE_WORDS, None, None, (node, from_one)))
        backwards = copy.deepcopy(node)
        backwards.args = [
            ast.BinOp(copy.deepcopy(n), ast.Sub(), ast.Constant(1)),
            ast.UnaryOp(ast.USub(), ast.Constant(1)),
            ast.UnaryOp(ast.USub(), ast.Constant(1)),
        ]
        out.append(("positions:reversed", _REVERSED_WORDS, None, None, (node, backwards)))
    return out


def _argument_sites(tree) -> list:
    """A call's single argument, a name of the function's own, replaced by each argument of the function."""
    out = []
    function = tree.body[0]
    params = [a.arg for a in function.args.args if a.arg != "self"]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
            continue
        arg = node.args[0]
        if not isinstance(arg, ast.Name) or arg.id in params:
            continue  # an argument passed on as it came is the course's own choice
        for p in params:
            moved = copy.deepcopy(node)
            moved.args = [ast.Name(p, ast.Load())]
            out.append(("argument:other", _ARGUMENT_WORDS, None, None, (node, moved)))
    return out


def _product_sites(tree) -> list:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if _is_constant(node.left) or _is_constant(node.right):
                continue
            out.append(
                ("sum:product", _PRODUCT_WORDS, None, None, (node, ast.BinOp(node.left, ast.Mult(), node.right)))
            )
    return out


_OFFSET_WORDS = (
    "the right computation with its triangle's offset left out (positions counted from the tile's own corner, "
    "not along the whole sequence)"
)
_ZERO_FILL_WORDS = "the right computation with masked entries set to 0 where -inf belongs (a masked key keeps a weight)"
_TRIANGLES = ("tril", "triu")


def _offset_sites(tree) -> list:
    """``tril(x, k)`` / ``triu(x, k)`` with a computed ``k`` (not a constant) as ``k = 0``."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) in _TRIANGLES):
            continue
        for kw in node.keywords:
            if kw.arg in ("k", "diagonal") and not _is_constant(kw.value):
                moved = copy.deepcopy(node)
                next(w for w in moved.keywords if w.arg == kw.arg).value = ast.Constant(0)
                out.append(("diagonal:offset_dropped", _OFFSET_WORDS, None, None, (node, moved)))
        if len(node.args) == 2 and not _is_constant(node.args[1]):
            moved = copy.deepcopy(node)
            moved.args[1] = ast.Constant(0)
            out.append(("diagonal:offset_dropped", _OFFSET_WORDS, None, None, (node, moved)))
    return out


def _is_minus_inf(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        return (isinstance(inner, ast.Attribute) and inner.attr == "inf") or (
            isinstance(inner, ast.Call) and _called(inner) == "float" and bool(inner.args)
        )
    if isinstance(node, ast.Call) and _called(node) == "float" and node.args:
        arg = node.args[0]
        return isinstance(arg, ast.Constant) and str(arg.value).strip().lower() == "-inf"
    return False


def _fills(tree) -> list:
    """The ``-inf`` a mask fills in: an argument of ``where`` / ``masked_fill``, or assigned to ``x[mask]``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) in ("where", "masked_fill", "masked_fill_"):
            found += [a for a in node.args if _is_minus_inf(a)]
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) and _is_minus_inf(node.value):
            found.append(node.value)
    return found


def _zero_fill_sites(tree) -> list:
    """Every ``-inf`` a mask fills in (``-np.inf``, ``float("-inf")``) as 0; a running maximum's start is no fill."""
    return [("fill:zero", _ZERO_FILL_WORDS, None, None, (node, ast.Constant(0.0))) for node in _fills(tree)]


def value_sites(tree) -> list:
    """``[(key, words, misconception, None, (node, new_node))]``: indices, axes, positions, arguments, sums."""
    return (
        _index_swap_sites(tree)
        + _axes_sites(tree)
        + _position_sites(tree)
        + _argument_sites(tree)
        + _product_sites(tree)
        + _offset_sites(tree)
        + _zero_fill_sites(tree)
    )
