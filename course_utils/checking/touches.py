"""What an answer touches: an input it changed in place, named by the answer's own parameter name.

Every case runs on a deep copy of its inputs (:func:`course_utils.checking.engine.call`); afterwards the
copy is compared with the case as it was. ``x -= x.max(axis=-1, keepdims=True)`` passes every value check
and silently rewrites the lesson's own variable; here it is named. What the course's own answer changes
(a training step moves its model and its optimizer) is expected, and never named.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import contextlib
import inspect
import sys

import numpy as np

__all__ = [
    "Setting",
    "settings_changed",
    "changed",
    "changed_paths",
    "in_place_problem",
    "path_words",
    "forward_watch",
    "forward_problem",
]


def _tensor_equal(a, b, torch) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    with torch.no_grad():
        a, b = a.detach(), b.detach()
        if a.is_floating_point() or a.is_complex():
            return bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0))) and bool(
                torch.equal(torch.isnan(a), torch.isnan(b))
            )
        return bool(torch.equal(a, b))


class Setting(str):
    """The path of a module's setting (``dropout.p``, ``training``), not of a weight: named differently."""


_PLAIN = (bool, int, float, str, type(None))


def settings_changed(before, after) -> list:
    """``[Setting("dropout.p")]``: the plain settings (numbers, flags; not the mode, ``training``, which an
    exercise that promises it compares itself) of a module and its submodules that differ between two copies."""
    found = []
    theirs = dict(after.named_modules())
    for name, sub in before.named_modules():
        other = theirs.get(name)
        if other is None:
            continue
        for key, value in vars(sub).items():
            if key.startswith("_") or key == "training" or not isinstance(value, _PLAIN):
                continue  # the mode: an exercise whose promise includes it compares it itself
            now = vars(other).get(key, value)
            if isinstance(now, _PLAIN) and now != value and not (value != value and now != now):  # NaN stays NaN
                found.append(Setting(f"{name}.{key}" if name else key))
    return found


def changed(before, after, depth: int = 0) -> list:
    """The paths (tuples of keys and indices) where ``after`` differs from ``before``; ``[()]`` for the whole."""
    if depth > 12:
        return []
    torch = sys.modules.get("torch")
    try:
        if isinstance(before, np.ndarray):
            if not isinstance(after, np.ndarray) or before.shape != after.shape or before.dtype != after.dtype:
                return [()]
            b, a = np.ndarray.view(before, np.ndarray), np.ndarray.view(after, np.ndarray)
            if b.dtype.kind in "fc":
                return [] if np.array_equal(b, a, equal_nan=True) else [()]
            return [] if np.array_equal(b, a) else [()]
        if torch is not None and isinstance(before, torch.Tensor):
            if not isinstance(after, torch.Tensor) or not _tensor_equal(before, after, torch):
                return [()]
            return []
        if torch is not None and isinstance(before, torch.nn.Module):
            if not isinstance(after, torch.nn.Module):
                return [()]
            mine, theirs = before.state_dict(), after.state_dict()
            if set(mine) != set(theirs):
                return [()]
            found = [(name,) for name in mine if not _tensor_equal(mine[name], theirs[name], torch)]
            return found + [(name,) for name in settings_changed(before, after)]
        if isinstance(before, (tuple, list)):
            if not isinstance(after, (tuple, list)) or len(before) != len(after):
                return [()]
            found = []
            for i, (b, a) in enumerate(zip(before, after, strict=True)):
                found += [(i, *p) for p in changed(b, a, depth + 1)]
            return found
        if isinstance(before, dict):
            if not isinstance(after, dict) or set(before) != set(after):
                return [()]
            found = []
            for key in before:
                found += [(key, *p) for p in changed(before[key], after[key], depth + 1)]
            return found
    except Exception:
        return []
    return []


def changed_paths(case_args, copies) -> set:
    """The paths of the case's arguments that the run on ``copies`` changed: ``{(arg index, *inside)}``."""
    found = set()
    for i, (before, after) in enumerate(zip(case_args, copies, strict=False)):
        found |= {(i, *p) for p in changed(before, after)}
    return found


def _parameter_names(answer) -> list:
    fn = answer
    if inspect.isclass(answer):
        fn = getattr(answer, "forward", None) or answer
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"]


def path_words(path, case_names, answer, driven: bool) -> str:
    """``scores`` or ``inputs[0]`` (the answer's own name for it where it can be told) for a changed path."""
    index, *inside = path
    if not driven:
        names = _parameter_names(answer)
        head = names[index] if index < len(names) else (case_names[index] if index < len(case_names) else f"arg{index}")
    else:
        head = case_names[index] if index < len(case_names) else f"arg{index}"
        if head == "inputs" and inside and isinstance(inside[0], int) and inspect.isclass(answer):
            names = _parameter_names(answer)
            if inside[0] < len(names):
                head, inside = names[inside[0]], inside[1:]
    return head + "".join(
        f".{p}" if isinstance(p, Setting) or (isinstance(p, str) and driven) else f"[{p!r}]" for p in inside
    )


def in_place_problem(case_args, copies, expected_changes: set, case_names, answer, driven: bool) -> str | None:
    """The sentence naming an argument the answer changed in place (and the course's answer does not), or None."""
    moved = sorted(changed_paths(case_args, copies) - expected_changes, key=str)
    # a path inside one the course's answer changes anyway (a model a training step moves) is not news
    moved = [p for p in moved if not any(p[: len(e)] == e for e in expected_changes)]
    if not moved:
        return None
    words = path_words(moved[0], case_names, answer, driven)
    if isinstance(moved[0][-1], Setting):
        return (
            f"your function changed `{words}` of a module it was handed and left it changed: the lesson's module "
            "behaves differently afterwards. Put back every setting you change (or work on a copy)"
        )
    if driven and len(moved[0]) > 1 and not isinstance(moved[0][-1], int):
        return (
            f"your code changed `{words}` in place, a parameter of a module it was handed: every later call would see "
            "the changed weights"
        )
    return f"your function changed its argument `{words}` in place: the lesson's own variable would change too"


@contextlib.contextmanager
def forward_watch():
    """Note every parameter an outermost module's forward pass changes in place: yields ``[(class, name)]``.

    Compared at the end of each forward pass itself, so an optimizer step after it (a training step) is not a
    change; buffers (running statistics) may change.
    """
    moved: list = []
    torch = sys.modules.get("torch")
    if torch is None:
        yield moved
        return
    active: list = []

    def before(module, inputs):
        if active:
            active.append(None)  # an inner module: its outermost one is compared
            return
        with torch.no_grad():
            active.append((module, {n: p.detach().clone() for n, p in module.named_parameters()}))

    def after(module, inputs, output):
        if not active:
            return
        entry = active.pop()
        if entry is None or entry[0] is not module:
            return
        now = dict(module.named_parameters())
        for name, before_value in entry[1].items():
            if name in now and not _tensor_equal(before_value, now[name], torch):
                moved.append((type(module).__name__, name))
                break

    hooks = torch.nn.modules.module
    handles = [hooks.register_module_forward_pre_hook(before), hooks.register_module_forward_hook(after)]
    try:
        yield moved
    finally:
        for handle in handles:
            handle.remove()


def forward_problem(moved) -> str | None:
    """The sentence naming a parameter a forward pass changed in place, or None."""
    if not moved:
        return None
    cls, name = moved[0]
    return (
        f"your {cls} changed its own `{name}` in place while it ran forward: every call would change the model. "
        "A forward pass reads the weights, it never writes them"
    )
