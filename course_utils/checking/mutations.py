"""Mutations of the reference: the buggy versions the engine derives itself, one varied step at a time.

For an exercise's reference, and for every course function it runs through (found from the code objects it
touched), :func:`mutants` rewrites the source once per step that a student can get wrong:

- each axis argument (``axis=``, ``dim=``, and the axes of ``softmax``, ``sum``, ``transpose``, ...);
- each scale: a division or product by a square root left out, or the root left out (``d`` for ``√d``);
- each comparison: ``<`` for ``<=`` (and the reverse), ``==`` for ``!=``;
- each mask operation: a ``~`` left out, a ``masked_fill``'s mask inverted, the branches of a ``where``
  swapped, the fill value ``-inf`` for ``-1e9`` (and the reverse);
- each slice bound and each ``diagonal=`` / ``k=`` of a triangle moved by one;
- each sum of two computed terms with one term left out (a residual, a bias, a second path);
- each use of a layer or an input where a sibling of the same kind fits (``key_proj`` for ``value_proj``,
  ``norm1`` for ``norm2``, ``K`` for ``V``): a copy-paste slip.

A class's methods (a module's ``forward``, its helpers) are varied the same way, each mutant a subclass with
one method rewritten.

So a mistake recognised in one exercise is recognised in every exercise whose computation takes the same
step, with no per-exercise list. A mutant is run exactly like the reference (through the exercise's driver);
:func:`finder` returns the :class:`~course_utils.checking.relations.Finding` s of the mutants whose output
is the student's on a case. The words never quote the reference's code; where the catalogue has the
mistake, its id is attached for the words and the nudge.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import inspect
import sys
import textwrap
from dataclasses import dataclass

import numpy as np

from course_utils.checking import recorded
from course_utils.checking.compare import compare
from course_utils.checking.more_sites import more_sites
from course_utils.checking.mutation_sites import twin_sites
from course_utils.checking.relation_basics import Finding
from course_utils.checking.step_sites import step_sites

__all__ = ["Mutant", "mutants", "finder", "MAX_MUTANTS"]

MAX_MUTANTS = 200
"""At most this many mutants per exercise."""
MAX_PER_FUNCTION = 90
"""At most this many per function or method (its first sites: the older kinds first, then terms and siblings)."""

_AXIS_METHODS = {
    "softmax",
    "log_softmax",
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "argmax",
    "logsumexp",
    "cumsum",
    "any",
    "all",
    "norm",
    "unsqueeze",
    "squeeze",
    "expand_dims",
}
_SWAP_METHODS = {"transpose", "swapaxes"}
_SQRT = {"sqrt"}
_TRIANGLES = {"tril", "triu"}
_JOINS = {"cat", "concatenate", "concat", "hstack", "vstack", "stack"}


@dataclass(frozen=True)
class Mutant:
    """One varied step: ``key`` (kind and site), words completing "your result is ...", a catalogue id."""

    key: str
    words: str
    misconception: str | None
    answer: object  # callable like the reference


def _name(node) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _int_constant(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_constant(node.operand)
        return -inner if inner is not None else None
    return None


def _const(value):
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)


def _other_axes(value) -> list:
    return [v for v in (-1, -2) if v != value][:1] if value in (-1, -2) else [-1]


def _is_sqrt(node) -> bool:
    if isinstance(node, ast.Call) and _name(node.func) in _SQRT:
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant)


def _sqrt_argument(node):
    if isinstance(node, ast.Call):
        return node.args[0] if node.args else None
    return node.left


def _is_fill(node, value) -> bool:
    """``float("-inf")``, ``-float("inf")``, ``-np.inf``, ``-math.inf``, ``-torch.inf`` (value -inf) or ``-1e9``."""
    if value == "inf":
        if isinstance(node, ast.Call) and _name(node.func) == "float" and node.args:
            arg = node.args[0]
            return isinstance(arg, ast.Constant) and str(arg.value).strip().lower() == "-inf"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = node.operand
            if isinstance(inner, ast.Attribute) and inner.attr == "inf":
                return True
            return isinstance(inner, ast.Call) and _name(inner.func) == "float" and bool(inner.args)
        return False
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _is_big(node.operand)


def _is_big(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and node.value >= 1e4


_NEG_INF = ast.parse('float("-inf")', mode="eval").body
_NEG_BIG = ast.parse("-1e9", mode="eval").body


def _stem(name: str) -> str:
    """``key_proj`` -> ``_proj``, ``norm2`` -> ``norm``, ``W_k`` -> ``W_``: what siblings of one kind share."""
    stripped = name.rstrip("0123456789")
    if stripped != name:
        return stripped
    if "_" in name:
        head, _, tail = name.partition("_")
        return f"_{tail}" if len(head) > 1 else f"{head}_"
    return ""


def _sibling_sites(tree) -> list:
    """A layer (``self.<name>``) or an argument used where a sibling of the same kind is: a copy-paste slip."""
    out = []
    owners = {"self"} | {a.arg for a in tree.body[0].args.args}
    attrs = sorted({n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _name(n.value) in owners})
    function = tree.body[0]
    positional = function.args.args
    options = (
        {a.arg for a in positional[len(positional) - len(function.args.defaults) :]}
        if function.args.defaults
        else set()
    )
    # a mask is no data, and an argument with a default is an option (an axis, a window), not a sibling of the data
    params = [a.arg for a in positional if a.arg != "self" and "mask" not in a.arg and a.arg not in options]
    groups: dict = {}
    for name in attrs + params:
        stem = _stem(name)
        if stem:
            groups.setdefault(stem, []).append(name)
    if len(params) >= 2:  # the arguments of one computation are siblings too (Q, K, V; x, memory)
        groups.setdefault("<args>", []).extend(p for p in params if p not in groups.get("<args>", []))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _name(node.value) in owners and isinstance(node.ctx, ast.Load):
            current = node.attr
            kind = "layer"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in params:
            current = node.id
            kind = "input"
        else:
            continue
        for members in groups.values():
            if current not in members:
                continue
            for other in members:
                if other == current:
                    continue
                new = copy.deepcopy(node)
                if kind == "layer":
                    new.attr = other
                else:
                    new.id = other
                words = f"the right computation with one {kind} used where another of the same kind belongs (a copy-paste slip?)"
                out.append((f"sibling:{kind}", words, None, None, (node, new)))
    return out


def _sites(tree) -> list:
    """``[(key, words, misconception, path, replacement)]``: every step of ``tree`` that can be varied."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            method = _name(node.func)
            for kw in node.keywords:
                value = _int_constant(kw.value)
                if kw.arg in ("axis", "dim") and value is not None:
                    for other in _other_axes(value):
                        mid = "softmax_wrong_axis" if method in ("softmax", "log_softmax") else None
                        words = f"the right computation with its {method or 'reduction'} over another axis"
                        out.append((f"axis:{method}", words, mid, (kw, "value"), _const(other)))
                if kw.arg in ("axis", "dim") and isinstance(kw.value, ast.Name):
                    mid = "softmax_wrong_axis" if method in ("softmax", "log_softmax") else None
                    words = f"the right computation with its {method or 'reduction'} over the last axis instead of the one asked"
                    out.append((f"axis:{method}", words, mid, (kw, "value"), _const(-1)))
                if kw.arg in ("diagonal", "k") and method in _TRIANGLES and value is not None:
                    for shift in (-1, 1):
                        mid = "tril_without_diagonal" if method == "tril" and shift == -1 else None
                        words = "the right computation with the triangle's diagonal moved by one"
                        out.append((f"diagonal:{method}:{shift:+d}", words, mid, (kw, "value"), _const(value + shift)))
            if method in _AXIS_METHODS | _SWAP_METHODS and not node.keywords:
                for i, arg in enumerate(node.args):
                    value = _int_constant(arg)
                    if value is None or (method not in _SWAP_METHODS and i > 0) or value not in (-1, -2, 0, 1, 2):
                        continue
                    for other in [v for v in (-1, -2, -3) if v != value][:1]:
                        mid = "softmax_wrong_axis" if method in ("softmax", "log_softmax") else None
                        words = f"the right computation with its {method} over another axis"
                        out.append((f"axis:{method}", words, mid, (node.args, i), _const(other)))
            if method in _TRIANGLES and not node.keywords:
                is_method = isinstance(node.func, ast.Attribute) and _name(node.func.value) not in (
                    "np",
                    "numpy",
                    "torch",
                )
                position = 0 if is_method else 1
                value = _int_constant(node.args[position]) if len(node.args) > position else 0
                if value is not None:
                    for shift in (-1, 1):
                        changed = copy.deepcopy(node)
                        changed.args = list(changed.args[:position]) + [_const(value + shift)]
                        mid = "tril_without_diagonal" if method == "tril" and shift == -1 else None
                        words = "the right computation with the triangle's diagonal moved by one"
                        out.append((f"diagonal:{method}:{shift:+d}", words, mid, None, (node, changed)))
            if method == "masked_fill" and node.args:
                words = "the right computation with the mask's polarity flipped"
                out.append(("mask:masked_fill", words, "mask_inverted", (node.args, 0), _inverted(node.args[0])))
                if isinstance(node.func, ast.Attribute):
                    words = "the right computation with a mask left out (nothing filled)"
                    out.append(("mask:dropped", words, "mask_ignored", None, (node, node.func.value)))
            if method == "where" and len(node.args) == 3:
                swapped = copy.deepcopy(node)
                swapped.args[1], swapped.args[2] = node.args[2], node.args[1]
                words = "the right computation with the two branches of a `where` swapped"
                out.append(("mask:where", words, None, None, (node, swapped)))
                words = "the right computation with a `where` that always takes its first branch"
                out.append(("mask:dropped", words, None, None, (node, node.args[1])))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            words = "the right computation with a mask used the other way round (a `~` left out)"
            out.append(("mask:invert", words, "mask_inverted", None, (node, node.operand)))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)) and _is_sqrt(node.right):
            words = "the right computation without its scale (the division by a square root left out)"
            out.append(("scale:dropped", words, "no_scaling", None, (node, node.left)))
            arg = _sqrt_argument(node.right)
            if arg is not None and isinstance(node.op, ast.Div):
                words = "the right computation divided by a size where its square root is needed"
                out.append(("scale:no_root", words, "scaled_by_d_head", (node, "right"), arg))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            swap = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq}
            new = swap.get(type(node.ops[0]))
            if new is not None:
                changed = copy.deepcopy(node)
                changed.ops = [new()]
                words = "the right computation with a comparison off by one (the boundary included or left out)"
                out.append(("compare", words, None, None, (node, changed)))
        elif isinstance(node, ast.Slice):
            for bound in ("lower", "upper"):
                part = getattr(node, bound)
                if part is None:
                    continue
                for shift in (1, -1):
                    moved = ast.BinOp(copy.deepcopy(part), ast.Add() if shift > 0 else ast.Sub(), ast.Constant(1))
                    words = "the right computation with a slice bound off by one"
                    out.append((f"slice:{bound}", words, None, (node, bound), moved))
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            for i, child in enumerate(value if isinstance(value, list) else [value]):
                for fill, other, words in (
                    ("inf", _NEG_BIG, "masked entries filled with a large finite number where -inf is needed"),
                    ("big", _NEG_INF, "masked entries filled with -inf where a finite number is needed"),
                ):
                    if isinstance(child, ast.AST) and _is_fill(child, fill):
                        path = (value, i) if isinstance(value, list) else (node, field)
                        out.append((f"fill:{fill}", words, None, path, copy.deepcopy(other)))
    return out


def _all_sites(tree) -> list:
    """The older kinds first (axes, scales, comparisons, masks, slices, fills), then terms left out and siblings."""
    out = _sites(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            computed = [side for side in (node.left, node.right) if not isinstance(side, ast.Constant)]
            if len(computed) == 2:
                words = "the right computation with one term of a sum left out (a residual, a bias, a second path)"
                out.append(("term:dropped", words, None, None, (node, node.left)))
                out.append(("term:dropped", words, None, None, (node, node.right)))
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            if not isinstance(node.left, ast.Constant) and not isinstance(node.right, ast.Constant):
                words = "the right computation with a difference taken the other way round (b - a for a - b)"
                out.append(("sub:swapped", words, None, None, (node, ast.BinOp(node.right, ast.Sub(), node.left))))
                words = "the right computation with one term of a difference left out"
                out.append(("term:dropped", words, None, None, (node, node.left)))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            other = ast.Div() if isinstance(node.op, ast.Mult) else ast.Mult()
            words = "the right computation with a product where a division belongs (or the reverse)"
            out.append(("muldiv", words, None, None, (node, ast.BinOp(node.left, other, node.right))))
        if isinstance(node, ast.Call) and _name(node.func) in _JOINS and node.args:
            pieces = node.args[0]
            if isinstance(pieces, (ast.List, ast.Tuple)) and len(pieces.elts) >= 2:
                moved = copy.deepcopy(node)
                moved.args[0].elts = list(reversed(moved.args[0].elts))
                words = "the right computation with the pieces it joins in another order"
                out.append(("join:order", words, None, None, (node, moved)))
        if isinstance(node, ast.Call) and _name(node.func) == "range" and node.args:
            last = len(node.args) - 1 if len(node.args) <= 2 else 1
            for shift in (-1, 1):
                moved = copy.deepcopy(node)
                bound = moved.args[last]
                moved.args[last] = ast.BinOp(bound, ast.Add() if shift > 0 else ast.Sub(), ast.Constant(1))
                words = f"the right computation with a loop one step {'too long' if shift > 0 else 'short'}"
                out.append((f"range:{shift:+d}", words, None, None, (node, moved)))
    params = [a.arg for a in tree.body[0].args.args if a.arg != "self"]
    sizes = [ast.parse(f"{p}.shape[{axis}]", mode="eval").body for p in params for axis in (-1, -2, -3)]
    for node in ast.walk(tree):
        if _is_sqrt(node) and isinstance(node, ast.Call) and node.args:
            for size in sizes:
                if ast.unparse(size) == ast.unparse(node.args[0]):
                    continue
                moved = copy.deepcopy(node)
                moved.args = [copy.deepcopy(size)]
                words = "the right computation scaled by the square root of another size"
                out.append(("scale:other_size", words, None, None, (node, moved)))
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Load, ast.Store)):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for k, item in enumerate(items):
                if isinstance(item, (ast.Slice, ast.Constant)) or (
                    isinstance(item, ast.UnaryOp) and isinstance(item.operand, ast.Constant)
                ):
                    continue
                for shift in (-1, 1):
                    moved = copy.deepcopy(node)
                    shifted = ast.BinOp(copy.deepcopy(item), ast.Add() if shift > 0 else ast.Sub(), ast.Constant(1))
                    if isinstance(moved.slice, ast.Tuple):
                        moved.slice.elts[k] = shifted
                    else:
                        moved.slice = shifted
                    words = "the right computation with an index off by one"
                    out.append(("index:off_by_one", words, None, None, (node, moved)))
    return out + more_sites(tree) + twin_sites(tree) + step_sites(tree) + _sibling_sites(tree)


def _inverted(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return node.operand
    return ast.UnaryOp(ast.Invert(), copy.deepcopy(node))


def _apply(tree, path, replacement):
    """A copy of ``tree`` with one site replaced (``path`` an (owner, field or index) pair or None for a node swap)."""
    if path is None:
        old, new = replacement
        saved = list(_parents(tree, old))
        for owner, field, value in saved:
            if isinstance(value, list):
                value[[id(v) for v in value].index(id(old))] = new
            else:
                setattr(owner, field, new)
        try:
            return ast.unparse(tree)
        finally:
            for owner, field, value in saved:
                if isinstance(value, list):
                    value[[id(v) for v in value].index(id(new))] = old
                else:
                    setattr(owner, field, old)
    owner, where = path
    if isinstance(owner, list):
        old = owner[where]
        owner[where] = replacement
        try:
            return ast.unparse(tree)
        finally:
            owner[where] = old
    old = getattr(owner, where)
    setattr(owner, where, replacement)
    try:
        return ast.unparse(tree)
    finally:
        setattr(owner, where, old)


def _parents(tree, target):
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if value is target or (isinstance(value, list) and any(v is target for v in value)):
                yield node, field, value


def _function_tree(fn):
    if not inspect.isfunction(fn) or fn.__closure__:
        return None
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    tree.body[0].decorator_list = []
    return tree


def _compiled(fn, source):
    namespace = dict(fn.__globals__)
    try:
        exec(compile(source, f"<mutant of {fn.__qualname__}>", "exec"), namespace)
    except Exception:
        return None
    new = namespace.get(fn.__name__)
    if new is None:
        return None
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _course_functions(codes):
    """Course functions (outside the engine) whose code objects are in ``codes``: the steps the reference took."""
    found = []
    seen = set()
    for name, module in list(sys.modules.items()):
        if (
            not name.startswith("course_utils.")
            or name.startswith("course_utils.checking.")
            and not name.split(".")[-1].startswith("lesson_")
        ):
            continue
        for value in list(vars(module).values()):
            own = inspect.isfunction(value) and (value.__module__ or "").startswith("course_utils.")
            if own and value.__code__ in codes and id(value) not in seen:  # not torch's, bound by a course module
                seen.add(id(value))
                found.append(value)
    return found


@contextlib.contextmanager
def _installed(original, replacement):
    """``replacement`` bound wherever a course module binds ``original``, for the block."""
    restore = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("course_utils"):
            continue
        for attr, value in list(vars(module).items()):
            if value is original:
                restore.append((module, attr))
                setattr(module, attr, replacement)
    try:
        yield
    finally:
        for module, attr in restore:
            setattr(module, attr, original)


def _step_answer(reference, original, replacement):
    def answer(*args):
        with _installed(original, replacement):
            return reference(*args)

    return answer


def _method_mutants(reference) -> list[Mutant]:
    """Mutants of a class: a subclass with one method (not ``__init__``) rewritten at one site."""
    out: list[Mutant] = []
    methods: dict = {}
    for cls in reference.__mro__:  # the course's own classes, up to torch's Module
        if cls is object or cls.__module__.startswith(("torch", "builtins")):
            break
        for name, value in vars(cls).items():
            methods.setdefault(name, value)
    for name, value in methods.items():
        if name.startswith("__") or not inspect.isfunction(value) or "super" in value.__code__.co_names:
            continue
        tree = _function_tree(value)
        if tree is None:
            continue
        for n, (key, words, mid, path, replacement) in enumerate(_all_sites(tree)[:MAX_PER_FUNCTION]):
            if len(out) >= MAX_MUTANTS:
                return out
            try:
                source = _apply(tree, path, replacement)
            except Exception:
                continue
            new = _compiled(value, source)
            if new is None:
                continue
            subclass = type(reference.__name__, (reference,), {name: new, "__module__": reference.__module__})
            out.append(Mutant(f"mutant:{key}:{name}:{n}", words, mid, subclass))
    return out


def _class_step(reference, original, replacement):
    """A subclass of ``reference`` whose ``forward`` runs with a course function it calls varied."""

    def forward(self, *args, **kwargs):
        with _installed(original, replacement):
            return reference.forward(self, *args, **kwargs)

    return type(reference.__name__, (reference,), {"forward": forward, "__module__": reference.__module__})


def mutants(reference, touched_codes=()) -> list[Mutant]:
    """The mutants of ``reference`` and of every course function whose code is in ``touched_codes`` (a class's
    too: the course's masked softmax varied inside a module's ``forward`` is the same step varied)."""
    out: list[Mutant] = _method_mutants(reference) if inspect.isclass(reference) else []
    is_class = inspect.isclass(reference)
    if is_class and not callable(getattr(reference, "forward", None)):
        return out
    targets = ([] if is_class else [reference]) + [
        f for f in _course_functions(set(touched_codes)) if f is not reference
    ]
    for fn in targets:
        tree = _function_tree(fn)
        if tree is None:
            continue
        for n, (key, words, mid, path, replacement) in enumerate(_all_sites(tree)[:MAX_PER_FUNCTION]):
            if len(out) >= MAX_MUTANTS:
                return out
            try:
                source = _apply(tree, path, replacement)
            except Exception:
                continue
            new = _compiled(fn, source)
            if new is None:
                continue
            if is_class:
                answer = _class_step(reference, fn, new)
            else:
                answer = new if fn is reference else _step_answer(reference, fn, new)
            out.append(Mutant(f"mutant:{key}:{fn.__name__}:{n}", words, mid, answer))
    return out


def finder(exercise, run, touched_codes=()):
    """``extra(triple) -> [Finding]`` for :func:`course_utils.checking.relations.explain`.

    ``run(answer, args, seed)`` runs an answer on a case as the check does (driver, seed, copies). A mutant is a
    finding on a case when its output differs from the right one there and is the student's.
    """
    cache: dict = {}

    def extra(triple):
        found = []
        if "list" not in cache:
            cache["list"] = recorded.mutant_list(exercise, lambda: mutants(exercise.reference, touched_codes), Mutant)
        for mutant in cache["list"]:
            try:
                with np.errstate(all="ignore"):
                    out = run(mutant.answer, triple.args, triple.seed)
            except Exception:
                continue
            tol = {"atol": exercise.atol, "rtol": exercise.rtol}
            if compare(triple.expected, out, equal_nan=True, **tol) is None:
                continue  # this step, varied, changes nothing here
            if compare(out, triple.got, equal_nan=False, **tol) is not None:
                continue  # a NaN never matches a NaN: it is explained by where it first appears

            key = mutant.key.rsplit(":", 2)[0]  # the kind of step, whichever site: "mutant:axis:softmax"
            found.append(Finding(key, mutant.words, mutant.misconception))
        return found

    return extra
