"""A module handed back that shares its weights' memory with another argument: training one changes the other.

``lin.weight.data = other.weight.data[:d]`` gives the right values and passes every comparison, but the two
modules now read and write the same storage: an optimizer step on one moves the other. After the fixed cases
pass, :func:`shared_problem` runs the first case again for the course's answer and the student's, and names a
parameter or buffer of a module (one the answer returns, or one it was handed) whose memory lies inside a
tensor of another argument, where the course's answer leaves them apart.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import sys

__all__ = ["modules_in", "storages", "shared_with", "shared_problem"]


def modules_in(value, limit=4, depth=0):
    """Every ``nn.Module`` in ``value``, looking into tuples, lists and dicts down to ``limit`` levels."""
    torch = sys.modules.get("torch")
    if torch is None or depth > limit:
        return
    if isinstance(value, torch.nn.Module):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from modules_in(item, limit, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from modules_in(item, limit, depth + 1)


def _tensors(value, depth=0):
    """Every tensor reachable from ``value``: itself, inside containers, a module's parameters and buffers."""
    torch = sys.modules.get("torch")
    if torch is None or depth > 4:
        return
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, torch.nn.Module):
        yield from value.parameters()
        yield from value.buffers()
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item, depth + 1)


def storages(value) -> set:
    """The data pointers of the storages of every tensor reachable from ``value``."""
    found = set()
    for t in _tensors(value):
        try:
            if t.numel():
                found.add(t.untyped_storage().data_ptr())
        except Exception:
            continue
    return found


def shared_with(result, args) -> dict:
    """``{parameter name: argument index}``: each weight of a module (in ``result``, or an argument itself) whose
    storage belongs to another argument in ``args`` (the argument that *is* that module does not count)."""
    found = {}
    holders = [(None, m) for m in modules_in(result)] + [(k, a) for k, a in enumerate(args) if any(modules_in(a))]
    for k_own, value in holders:
        for module in modules_in(value):
            by_arg = [(k, storages(a)) for k, a in enumerate(args) if k != k_own and a is not module]
            for name, t in (*module.named_parameters(), *module.named_buffers()):
                try:
                    ptr = t.untyped_storage().data_ptr() if t.numel() else None
                except Exception:
                    continue
                for k, ptrs in by_arg:
                    if ptr is not None and ptr in ptrs:
                        found.setdefault(name, k)
    return found


def shared_problem(exercise, answer, cases, run, say_argument) -> str | None:
    """None unless a module the answer hands back shares a weight's memory with an argument (the course's not)."""
    torch = sys.modules.get("torch")
    if torch is None or not cases:
        return None
    args = cases[0]
    if not isinstance(args, tuple) or not any(True for _ in modules_in(args)):
        return None
    copies: list = []
    status, expected = run(exercise.reference, args, 0, fn_is_answer=False, copies=copies)
    if status != "ok" or not copies:
        return None
    theirs = shared_with(expected, copies[0])
    copies = []
    status, got = run(answer, args, 0, copies=copies)
    if status != "ok" or not copies:
        return None
    mine = {name: k for name, k in shared_with(got, copies[0]).items() if theirs.get(name) != k}
    if not mine:
        return None
    name, k = next(iter(mine.items()))
    more = f" (and {len(mine) - 1} more)" if len(mine) > 1 else ""
    return (
        f"on case 1, after your function the module's `{name}`{more} shares its memory with the argument "
        f"`{say_argument((k,))}`: training one would change the other. Copy the values in (`.copy_(...)` under "
        "`torch.no_grad()`, or `.clone()`) instead of assigning the other tensor (or its `.data`)"
    )
