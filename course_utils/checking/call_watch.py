"""What each call of the answer changes in place, when a driver (not the check) hands it its arguments.

An exercise with a driver (``Exercise.driver``) builds arrays and tensors itself and passes them on: the
check's own copy of the case never sees the answer's ``scores.masked_fill_(...)`` or ``acc *= ...``, because
the answer changed the driver's array, not the case. :class:`course_utils.checking.runner.Probe` therefore
takes a :func:`snapshot` of every array and tensor reachable from each call's arguments (inside tuples, lists,
dicts, dataclasses; a module's parameters and buffers) and, when the call returns, :func:`moved` says which of
them the call changed: ``cache[0]``, ``state['s']``. A tensor changed through a view changes its base too, so
it is found by the base. :func:`problem` compares what the answer changed with what the course's own answer
changes on the same case (a training step moves its model: expected), and says the rest in one sentence.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys

import numpy as np

__all__ = ["snapshot", "moved", "call_paths", "problem", "MAX_ELEMENTS", "MAX_CALLS"]

MAX_ELEMENTS = 4_000_000
"""A call whose arguments hold more array entries than this is not watched (a whole training set)."""
MAX_CALLS = 6
"""How many calls of the answer per case are watched (a decoder step runs once per position)."""


def _leaves(value, path, out, depth, seen):
    """``(path, array or tensor)`` for everything reachable from ``value`` that a call could change in place."""
    if depth > 8 or id(value) in seen:
        return
    torch = sys.modules.get("torch")
    if isinstance(value, np.ndarray):
        if value.dtype != object:
            seen.add(id(value))
            out.append((path, value))
        return
    if torch is not None and isinstance(value, torch.Tensor):
        seen.add(id(value))
        out.append((path, value))
        return
    if torch is not None and isinstance(value, torch.nn.Module):
        seen.add(id(value))
        for name, tensor in (*value.named_parameters(), *value.named_buffers()):
            if tensor is not None and id(tensor) not in seen:
                seen.add(id(tensor))
                out.append(((*path, name), tensor))
        return
    if isinstance(value, (tuple, list)):
        seen.add(id(value))
        for i, item in enumerate(value):
            _leaves(item, (*path, i), out, depth + 1, seen)
    elif isinstance(value, dict):
        seen.add(id(value))
        for key, item in list(value.items()):
            _leaves(item, (*path, key), out, depth + 1, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        seen.add(id(value))
        for f in dataclasses.fields(value):
            _leaves(getattr(value, f.name, None), (*path, f.name), out, depth + 1, seen)


def _copy(x):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if x.is_sparse or x.device.type == "meta":
            return None
        with torch.no_grad():
            return x.detach().clone()
    return np.array(x, copy=True)


def snapshot(args, kwargs=None) -> list | None:
    """``[(path, original, copy)]`` for a call's arguments (path: argument index or keyword, then inside); None
    when there is too much to copy."""
    found: list = []
    seen: set = set()
    for i, value in enumerate(args):
        _leaves(value, (i,), found, 0, seen)
    for key, value in (kwargs or {}).items():
        _leaves(value, (key,), found, 0, seen)
    total = 0
    for _, x in found:
        total += int(getattr(x, "size", 0) if isinstance(x, np.ndarray) else x.numel())
        if total > MAX_ELEMENTS:
            return None
    try:
        return [(path, x, _copy(x)) for path, x in found]
    except Exception:
        return None


def _same(original, kept) -> bool:
    torch = sys.modules.get("torch")
    if kept is None:
        return True
    if torch is not None and isinstance(original, torch.Tensor):
        if original.shape != kept.shape or original.dtype != kept.dtype:
            return False
        with torch.no_grad():
            a = original.detach()
            if a.is_floating_point() or a.is_complex():
                return bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(kept, nan=0.0))) and bool(
                    torch.equal(torch.isnan(a), torch.isnan(kept))
                )
            return bool(torch.equal(a, kept))
    if original.shape != kept.shape or original.dtype != kept.dtype:
        return False
    return bool(np.array_equal(original, kept, equal_nan=original.dtype.kind in "fc"))


def moved(snap) -> set:
    """The paths of a :func:`snapshot` whose array or tensor the call changed in place."""
    if not snap:
        return set()
    found = set()
    for path, original, kept in snap:
        try:
            if not _same(original, kept):
                found.add(path)
        except Exception:
            continue
    return found


def call_paths(probe) -> set:
    """Every path any watched call of ``probe`` changed (the union over its calls)."""
    return set().union(*getattr(probe, "touched", [])) if getattr(probe, "touched", None) else set()


def _names(fn) -> list:
    target = fn.__init__ if inspect.isclass(fn) else fn
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"]


def words(path, fn) -> str:
    """``cache[0]``, ``state['s']``, ``model.cell.weight_hh``: a path in the answer's own names."""
    head, *inside = path
    if isinstance(head, int):
        names = _names(fn)
        head = names[head] if head < len(names) else f"argument {head + 1}"
    text = str(head)
    for p in inside:
        text += f".{p}" if isinstance(p, str) and _is_parameter_name(p) else f"[{p!r}]"
    return text


def _is_parameter_name(key: str) -> bool:
    """A module's parameter path (``weight``, ``cell.weight_hh``) reads as an attribute; a dict key as ``['s']``."""
    return key.split(".")[-1].startswith(("weight", "bias", "running_", "num_batches", "in_proj", "out_proj"))


def problem(answer_probe, reference_probe, fn) -> str | None:
    """The sentence naming what the answer's calls changed in place and the course's calls did not, or None.

    ``reference_probe`` ran the course's answer through the same driver on the same case (None: nothing known
    about what it changes, so nothing is named).
    """
    if reference_probe is None:
        return None
    theirs = call_paths(reference_probe)
    mine = sorted(call_paths(answer_probe) - theirs, key=str)
    mine = [p for p in mine if not any(p[: len(t)] == t for t in theirs)]
    if not mine:
        return None
    path = mine[0]
    shown = words(path, fn)
    others = [f"`{words(p, fn)}`" for p in mine[1:4]]
    more = (" (and " + ", ".join(others) + (" ..." if len(mine) > 4 else "") + ")") if others else ""
    if len(path) > 1 and isinstance(path[-1], str) and _is_parameter_name(path[-1]):
        return (
            f"your function changed `{shown}`{more} in place, a weight of a module it was handed: every later call "
            "would see the changed weights"
        )
    return (
        f"your function changed its argument `{shown}`{more} in place: whoever called it (the lesson's own code) "
        "finds its array changed. Write the result to a new array instead (`x = x - m`, `masked_fill` without `_`)"
    )
