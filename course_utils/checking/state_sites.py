"""More steps a student varies, for :mod:`course_utils.checking.mutations`: loops over tiles and running state.

The online softmax, a FlashAttention step and every tiled pass keep a running state (a maximum, a sum, an
accumulator) that is updated tile after tile. The mistakes students make there are steps of that state, and the
same in every exercise that keeps one:

- a factor of a product left out (an old sum or accumulator not rescaled): ``a * b`` used as ``a`` or ``b``;
- a value used before its update where the updated one belongs, or the reverse (the old maximum returned, the
  tile exponentiated against the old maximum, a rescale factor taken against the new maximum twice);
- a rescale factor taken the other way round (``exp(m_new - m)`` for ``exp(m - m_new)``) where the answer guards the
  first step (its infinite factor taken as 0), which the plain swap in ``mutations`` turns into NaN;
- a square-root scale taken of a whole-number argument (the tile size) instead of the size it needs;
- a loop over tiles that stops one tile early, or that covers whole tiles only (a last, shorter tile left out);
- the state started afresh at every step of the inner loop, or once before the outer loop instead of once per
  outer step.

Each site is ``(key, words, misconception, path, replacement)`` as in ``mutations``; ``path`` is None and
``replacement`` is ``(node, new_node)``. The words say what the answer does, never the reference's code.

Introduced in notebooks/06_efficient_attention.ipynb (the tiled exercises are named through it).
"""

from __future__ import annotations

import ast
import copy

__all__ = ["state_sites"]

_FACTOR_WORDS = "the right computation with one factor of a product left out (a rescale or a weight not applied)"
_STALE_WORDS = (
    "the right computation with a running value used before its update where the updated one belongs "
    "(or handed back without its update)"
)
_EARLY_WORDS = "the right computation with an updated running value used where the value before the update belongs"
_SHORT_WORDS = "the right computation with its loop over tiles stopping one tile early"
_WHOLE_WORDS = "the right computation with its loop over whole tiles only: a last, shorter tile is left out"
_RESTART_WORDS = "the right computation with its running state started afresh at every step of the inner loop"
_ONCE_WORDS = "the right computation with its running state started once, not again for every step of the outer loop"


def _is_constant(node) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _is_constant(node.operand)
    return isinstance(node, ast.Constant)


def _factor_sites(tree) -> list:
    """``a * b`` (both computed) used as ``a`` and as ``b``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            if _is_constant(node.left) or _is_constant(node.right):
                continue
            out.append(("factor:dropped", _FACTOR_WORDS, None, None, (node, copy.deepcopy(node.left))))
            out.append(("factor:dropped", _FACTOR_WORDS, None, None, (node, copy.deepcopy(node.right))))
    return out


def _names_in(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _updates(function) -> list:
    """``[(assign statement, new name, old name)]``: ``m_new = f(m, ...)`` where the new name grows the old one."""
    out = []
    for stmt in ast.walk(function):
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            continue
        new = stmt.targets[0].id
        for old in sorted(_names_in(stmt.value)):
            if old != new and new.startswith(old) and len(new) > len(old):
                out.append((stmt, new, old))
    return out


def _after(function, stmt) -> list:
    """The Name loads that run after ``stmt`` in the same function body (by line)."""
    end = getattr(stmt, "end_lineno", stmt.lineno)
    return [
        n
        for n in ast.walk(function)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and getattr(n, "lineno", 0) > end
    ]


def _stale_sites(tree) -> list:
    """Each use of an updated value replaced by the value before the update, and each later use of the old value
    replaced by the updated one."""
    out = []
    function = tree.body[0]
    for stmt, new, old in _updates(function):
        for load in _after(function, stmt):
            if load.id == new:
                out.append(("state:stale", _STALE_WORDS, None, None, (load, ast.Name(old, ast.Load()))))
            elif load.id == old:
                out.append(("state:early", _EARLY_WORDS, None, None, (load, ast.Name(new, ast.Load()))))
    return out


_GUARD = ast.parse("__import__('numpy').nan_to_num(0.0, nan=0.0, posinf=0.0)", mode="eval").body
_SWAP_WORDS = "the right computation with a difference taken the other way round (b - a for a - b)"


def _guarded_swap_sites(tree) -> list:
    """``exp(a - b)`` as ``exp(b - a)``, an infinite or undefined result taken as 0 (a guarded first step)."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) == "exp" and len(node.args) == 1):
            continue
        arg = node.args[0]
        if not (isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub)):
            continue
        if _is_constant(arg.left) or _is_constant(arg.right):
            continue
        swapped = copy.deepcopy(node)
        swapped.args[0] = ast.BinOp(copy.deepcopy(arg.right), ast.Sub(), copy.deepcopy(arg.left))
        guarded = copy.deepcopy(_GUARD)
        guarded.args[0] = swapped
        out.append(("sub:swapped", _SWAP_WORDS, None, None, (node, guarded)))
    return out


_SCALE_WORDS = "the right computation scaled by the square root of another size"


def _scale_argument_sites(tree) -> list:
    """``sqrt(size)`` as ``sqrt(p)`` for each parameter ``p`` the size does not mention (``block`` for ``d_head``)."""
    out = []
    params = [a.arg for a in tree.body[0].args.args if a.arg != "self"]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) == "sqrt" and len(node.args) == 1):
            continue
        mentioned = _names_in(node.args[0])
        for p in params:
            if p in mentioned:
                continue
            moved = copy.deepcopy(node)
            moved.args = [ast.Name(p, ast.Load())]
            out.append(("scale:other_size", _SCALE_WORDS, None, None, (node, moved)))
    return out


def _called(node) -> str:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return node.func.id if isinstance(node.func, ast.Name) else ""


def _range_sites(tree) -> list:
    """``range(start, stop, step)``: one tile early (``stop - step``) and whole tiles only (``stop - step + 1``)."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"):
            continue
        if len(node.args) != 3 or node.keywords or _is_constant(node.args[2]):
            continue
        stop, step = node.args[1], node.args[2]
        short = copy.deepcopy(node)
        short.args[1] = ast.BinOp(copy.deepcopy(stop), ast.Sub(), copy.deepcopy(step))
        out.append(("range:tile_short", _SHORT_WORDS, None, None, (node, short)))
        whole = copy.deepcopy(node)
        whole.args[1] = ast.BinOp(
            ast.BinOp(copy.deepcopy(stop), ast.Sub(), copy.deepcopy(step)), ast.Add(), ast.Constant(1)
        )
        out.append(("range:whole_tiles", _WHOLE_WORDS, None, None, (node, whole)))
    return out


def _assigned(node) -> set:
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
    return found


def _loop_sites(tree) -> list:
    """In a loop holding a loop: the statements that start the state the inner loop updates, moved into the inner
    loop (restarted at every inner step) or before the outer loop (started once)."""
    out = []
    for outer in ast.walk(tree):
        if not isinstance(outer, ast.For):
            continue
        for k, inner in enumerate(outer.body):
            if not isinstance(inner, ast.For):
                continue
            updated = _assigned(ast.Module(body=inner.body, type_ignores=[]))
            starts = [
                j
                for j, stmt in enumerate(outer.body[:k])
                if isinstance(stmt, ast.Assign) and _assigned(stmt) and _assigned(stmt) <= updated
            ]
            if not starts:
                continue
            restarted = copy.deepcopy(outer)
            moved = [restarted.body[j] for j in starts]
            restarted.body = [s for j, s in enumerate(restarted.body) if j not in starts]
            new_inner = restarted.body[k - len(starts)]
            new_inner.body = moved + new_inner.body
            out.append(("loop:state_restarted", _RESTART_WORDS, None, None, (outer, restarted)))
            once = copy.deepcopy(outer)
            hoisted = [once.body[j] for j in starts]
            once.body = [s for j, s in enumerate(once.body) if j not in starts]
            block = ast.If(test=ast.Constant(True), body=hoisted + [once], orelse=[])  # two statements in one's place
            out.append(("loop:state_once", _ONCE_WORDS, None, None, (outer, block)))
    return out


def state_sites(tree) -> list:
    """``[(key, words, misconception, None, (node, new_node))]``: every running-state and tile-loop step."""
    return (
        _factor_sites(tree)
        + _stale_sites(tree)
        + _guarded_swap_sites(tree)
        + _scale_argument_sites(tree)
        + _range_sites(tree)
        + _loop_sites(tree)
    )
