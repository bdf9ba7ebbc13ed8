"""More steps a student varies, for :mod:`course_utils.checking.mutations`: the order of a function's calls, a call
left out or added, a loss or a clip swapped for its twin, a mask ignored, a field of an argument for its sibling.

Each site is ``(key, words, misconception, path, replacement)`` as in ``mutations``. The kinds here:

- a call made at another point, or left out: each statement that is a bare call (``optimizer.zero_grad()``,
  ``loss.backward()``) or an ``if`` around such calls, moved among the other such statements of its block, or
  dropped (a training step's order: ``zero_grad`` after ``backward``, ``step`` before it, no ``zero_grad``);
- a gradient clip swapped for the per-entry clip, clipped at another norm, or added where none is asked;
- a loss summed where its mean is asked, smoothed (``label_smoothing``), or its square swapped for an absolute
  value (``mse_loss`` for ``l1_loss`` and the reverse);
- a mask argument ignored (the function run as if it were ``None``), masked entries filled with 0;
- a field of an argument used where another field of the same argument belongs (``batch.decoder_input`` for
  ``batch.target``): a copy-paste slip.

So a training step's mistakes are recognised in every exercise that takes a step, from its reference, with no
per-exercise list.

Introduced in notebooks/04_multi_head_pytorch.ipynb (the training step is checked through it).
"""

from __future__ import annotations

import ast
import copy

__all__ = ["step_sites", "CLIP_NORMS"]

CLIP_NORMS = (0.5, 2.0, 5.0, 10.0)
"""The other norms a clip is tried at (common choices in tutorials); the words never say which."""

_LOSSES = {"cross_entropy", "mse_loss", "l1_loss", "nll_loss", "smooth_l1_loss", "binary_cross_entropy"}
_LOSS_TWINS = {"mse_loss": "l1_loss", "l1_loss": "mse_loss"}
_CLIP_KEYWORDS = ("max_norm", "grad_clip", "clip", "clip_norm", "max_grad_norm")


def _called(node) -> str:
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _is_effect(stmt) -> bool:
    """A statement that only acts: a bare call, or an ``if`` (no ``else``) whose body is bare calls."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return True
    return isinstance(stmt, ast.If) and not stmt.orelse and all(_is_effect(s) for s in stmt.body)


def _effect_name(stmt) -> str:
    if isinstance(stmt, ast.If):
        return _effect_name(stmt.body[0])
    return _called(stmt.value)


def _blocks(tree):
    """Every statement list of the function (its body, the bodies of its loops and branches) with its owner."""
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            value = getattr(node, field, None)
            if (
                isinstance(value, list)
                and value
                and isinstance(value[0], ast.stmt)
                and not isinstance(node, ast.Module)
            ):
                yield node, field, value


def _order_sites(tree) -> list:
    """Each bare call moved to the place of another one in its block, and each one left out."""
    out = []
    for owner, field, body in _blocks(tree):
        slots = [i for i, stmt in enumerate(body) if _is_effect(stmt)]
        for i in slots:
            name = _effect_name(body[i])
            if not name:
                continue
            dropped = [s for k, s in enumerate(body) if k != i] or [ast.Pass()]
            words = f"the right computation without its call to `{name}()`"
            out.append((f"call:dropped:{name}", words, None, (owner, field), dropped))
            for j in slots:
                if j == i:
                    continue
                moved = [s for k, s in enumerate(body) if k != i]
                moved.insert(j, body[i])
                words = f"the right computation with `{name}()` called at another point (before or after the call it must follow)"
                out.append((f"call:moved:{name}", words, None, (owner, field), moved))
    return out


def _clip_sites(tree) -> list:
    out = []
    params = [a.arg for a in tree.body[0].args.args]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _called(node) == "clip_grad_norm_" and isinstance(node.func, ast.Attribute):
            changed = copy.deepcopy(node)
            changed.func.attr = "clip_grad_value_"
            changed.keywords = [k for k in changed.keywords if k.arg not in ("norm_type", "max_norm")]
            limit = [k.value for k in node.keywords if k.arg == "max_norm"]
            changed.args = changed.args[:1] + ([copy.deepcopy(limit[0])] if limit else changed.args[1:2])
            words = "the right computation with each entry of the gradient clipped where its total norm is to be"
            out.append(("clip:per_entry", words, None, None, (node, changed)))
        for k, keyword in enumerate(node.keywords):
            if keyword.arg in _CLIP_KEYWORDS and isinstance(keyword.value, ast.Constant):
                for other in CLIP_NORMS:
                    if other == keyword.value.value:
                        continue
                    changed = copy.deepcopy(node)
                    changed.keywords[k].value = ast.Constant(other)
                    words = "the right computation with the gradient clipped at another norm"
                    out.append(("clip:other_norm", words, None, None, (node, changed)))
    if "model" in params:
        clip = ast.parse("__import__('torch').nn.utils.clip_grad_norm_(model.parameters(), 1.0)").body[0]
        for owner, field, body in _blocks(tree):
            for i, stmt in enumerate(body):
                if _is_effect(stmt) and _effect_name(stmt) == "step":
                    added = body[:i] + [clip] + body[i:]
                    words = "the right computation with the gradient clipped before the step, which is not asked"
                    out.append(("clip:added", words, None, (owner, field), added))
    return out


def _loss_sites(tree) -> list:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) in _LOSSES:
            changed = copy.deepcopy(node)
            changed.keywords = [k for k in changed.keywords if k.arg != "reduction"]
            changed.keywords.append(ast.keyword("reduction", ast.Constant("sum")))
            words = "the right computation with the loss summed over its entries where their mean is asked"
            out.append(("loss:summed", words, None, None, (node, changed)))
            if _called(node) == "cross_entropy":
                smoothed = copy.deepcopy(node)
                smoothed.keywords.append(ast.keyword("label_smoothing", ast.Constant(0.1)))
                words = "the right computation with the loss smoothed (label smoothing), which is not asked"
                out.append(("loss:smoothed", words, None, None, (node, smoothed)))
            twin = _LOSS_TWINS.get(_called(node))
            if twin and isinstance(node.func, ast.Attribute):
                swapped = copy.deepcopy(node)
                swapped.func.attr = twin
                words = "the right computation with another loss: absolute errors for squared ones, or the reverse"
                out.append(("loss:twin", words, None, None, (node, swapped)))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            if isinstance(node.right, ast.Constant) and node.right.value == 2:
                absolute = ast.Call(ast.Name("abs", ast.Load()), [copy.deepcopy(node.left)], [])
                words = "the right computation with absolute errors where squared errors are asked"
                out.append(("loss:twin", words, None, None, (node, absolute)))
    return out


def _mask_sites(tree) -> list:
    out = []
    function = tree.body[0]
    for arg in function.args.args:
        if "mask" not in arg.arg:
            continue
        start = (
            1
            if function.body
            and isinstance(function.body[0], ast.Expr)
            and isinstance(function.body[0].value, ast.Constant)
            else 0
        )
        ignore = ast.parse(f"{arg.arg} = None").body[0]
        body = function.body[:start] + [ignore] + function.body[start:]
        words = "the right computation with the mask ignored (every key attended)"
        out.append(("mask:ignored", words, "mask_ignored", (function, "body"), body))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "masked_fill" and len(node.args) == 2:
            value = node.args[1]
            negative = isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub)
            if negative or (isinstance(value, ast.Call) and _called(value) == "float"):
                changed = copy.deepcopy(node)
                changed.args[1] = ast.Constant(0.0)
                words = "the right computation with masked entries filled with 0, which still gives them weight"
                out.append(("fill:zero", words, None, None, (node, changed)))
    return out


def _field_sites(tree) -> list:
    """``arg.a`` used where ``arg.b`` belongs, for two fields of one argument (not ``self``)."""
    out = []
    params = {a.arg for a in tree.body[0].args.args} - {"self"}
    fields: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in params:
            if isinstance(node.ctx, ast.Load):
                fields.setdefault(node.value.id, set()).add(node.attr)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            continue
        siblings = sorted(fields.get(node.value.id, set()) - {node.attr})
        for other in siblings if len(siblings) < 6 else []:
            changed = copy.deepcopy(node)
            changed.attr = other
            owner = node.value.id
            words = f"the right computation with `{owner}.{other}` used where another field of `{owner}` belongs"
            out.append(("sibling:field", words, None, None, (node, changed)))
    return out


def _layer_sites(tree) -> list:
    """A layer left out (``self.norm2(x)`` used as ``x``), and the inputs a call repeats (an attention's keys and
    values) read from another tensor in scope."""
    out = []
    function = tree.body[0]
    scope = [a.arg for a in function.args.args if a.arg != "self" and "mask" not in a.arg]
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in scope:
            scope.append(node.id)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            if len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
                words = "the right computation with one layer left out (its input passed on unchanged)"
                out.append(("layer:skipped", words, None, None, (node, copy.deepcopy(node.args[0]))))
        names = [a.id if isinstance(a, ast.Name) else None for a in node.args]
        for name in {n for n in names if n and names.count(n) >= 2}:
            places = [i for i, n in enumerate(names) if n == name]
            for other in scope:
                if other == name:
                    continue
                for keep_first in (False, True):
                    changed = copy.deepcopy(node)
                    for i in places[1:] if keep_first else places:
                        changed.args[i] = ast.Name(other, ast.Load())
                    words = "the right computation with the inputs a call repeats (keys and values) read from another tensor"
                    out.append(("input:repeated", words, None, None, (node, changed)))
    return out


def _is_infinite(node) -> bool:
    text = ast.unparse(node)
    return "inf" in text or "1e" in text


def _count_sites(tree) -> list:
    """A count started at 1 (``arange(1, n + 1)``), every k-th index taken as the index itself (``arange(0, d, 2)``
    as ``arange(d // 2)``) or doubled again, a sign left out (``10000 ** x`` for ``10000 ** -x``), a whole-number
    factor left out (``2 * d_model`` as ``d_model``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "arange" and node.args and not node.keywords[1:]:
            args = node.args
            if len(args) == 1 or (len(args) == 2 and isinstance(args[0], ast.Constant) and args[0].value == 0):
                stop = args[-1]
                changed = copy.deepcopy(node)
                changed.args = [ast.Constant(1), ast.BinOp(copy.deepcopy(stop), ast.Add(), ast.Constant(1))]
                words = "the right computation with positions counted from 1 where they start at 0"
                out.append(("count:from_one", words, None, None, (node, changed)))
            if len(args) == 3 and isinstance(args[2], ast.Constant) and args[2].value not in (0, 1):
                step = args[2].value
                changed = copy.deepcopy(node)
                changed.args = [ast.BinOp(copy.deepcopy(args[1]), ast.FloorDiv(), ast.Constant(step))]
                words = "the right computation with an index that counts one by one where it must count in steps"
                out.append(("count:step_left_out", words, None, None, (node, changed)))
                doubled = ast.BinOp(copy.deepcopy(node), ast.Mult(), ast.Constant(step))
                words = "the right computation with an index that already counts in steps multiplied by the step again"
                out.append(("count:step_twice", words, None, None, (node, doubled)))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if not isinstance(node.operand, ast.Constant) and not _is_infinite(node.operand):
                words = (
                    "the right computation with a sign left out (a product where a division belongs, or a power's sign)"
                )
                out.append(("sign:dropped", words, None, None, (node, copy.deepcopy(node.operand))))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for const, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(const, ast.Constant) and isinstance(const.value, int) and const.value >= 2:
                    words = "the right computation with a whole-number factor left out (one counted where there are several)"
                    out.append(("factor:dropped", words, None, None, (node, copy.deepcopy(other))))
    return out


def _reduction_sites(tree) -> list:
    """A factor of a product of two computed terms left out (``w * (g - s)`` as ``g - s``), a reduction over the
    last axis taken over the first axis or over everything (``.sum(dim=-1, keepdim=True)`` as ``.sum()``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            if not isinstance(node.left, ast.Constant) and not isinstance(node.right, ast.Constant):
                words = "the right computation with one factor of a product left out"
                out.append(("factor:term_dropped", words, None, None, (node, copy.deepcopy(node.left))))
                out.append(("factor:term_dropped", words, None, None, (node, copy.deepcopy(node.right))))
        if isinstance(node, ast.Call) and _called(node) in ("sum", "mean") and isinstance(node.func, ast.Attribute):
            axes = [k for k in node.keywords if k.arg in ("dim", "axis")]
            last = axes and isinstance(axes[0].value, ast.UnaryOp) and ast.unparse(axes[0].value) == "-1"
            if last and not node.args:
                changed = copy.deepcopy(node)
                changed.keywords = []
                words = f"the right computation with its {_called(node)} over the whole array instead of each row"
                out.append(("axis:everything", words, None, None, (node, changed)))
                first = copy.deepcopy(node)
                for k in first.keywords:
                    if k.arg in ("dim", "axis"):
                        k.value = ast.Constant(0)
                words = f"the right computation with its {_called(node)} over the first axis instead of the last"
                out.append(("axis:first", words, None, None, (node, first)))
    return out


def step_sites(tree) -> list:
    """``[(key, words, misconception, path, replacement)]`` for every order, clip, loss, mask, field and layer site."""
    return (
        _order_sites(tree)
        + _clip_sites(tree)
        + _loss_sites(tree)
        + _mask_sites(tree)
        + _field_sites(tree)
        + _layer_sites(tree)
        + _count_sites(tree)
        + _reduction_sites(tree)
    )
