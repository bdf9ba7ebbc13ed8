"""One tensor passed for two inputs, made two: an answer that reads the wrong one is found.

Self-attention passes the same tensor as key and value, and a driver that runs a module as cross-attention
may hand ``(query, key_value, key_value)``: an answer that computes the values from ``key`` is then right on
every case. After the fixed cases pass, :func:`distinct_problem` runs the first cases again with the second
of two identical inputs of the module's forward (the same tensor object, or the same values) replaced by a
different tensor of the same shape and dtype, for the course's answer and the student's alike, and compares.
Only the outermost module's forward is changed (a layer's own ``self_attn(h, h, h)`` stays self-attention).

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import contextlib
import inspect
import sys

__all__ = ["split_duplicates", "distinct_problem", "DISTINCT_CASES"]

DISTINCT_CASES = 2
"""How many cases (the first ones) run again with their duplicated inputs made distinct."""


def _other(t, torch):
    """A tensor of ``t``'s shape and dtype with other values (fixed: the same for the course's answer and yours)."""
    generator = torch.Generator().manual_seed(1234)
    noise = torch.randn(t.shape, generator=generator, dtype=torch.float64).to(dtype=t.dtype, device=t.device)
    with torch.no_grad():
        scale = float(t.detach().double().std()) if t.numel() > 1 else 1.0
    return (t.detach() * 0.5 + noise * (scale if scale > 0 else 1.0)).requires_grad_(t.requires_grad)


def _same(a, b, torch) -> bool:
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype or a.data_ptr() == 0:
        return False
    with torch.no_grad():
        return bool(torch.equal(a.detach(), b.detach()))


@contextlib.contextmanager
def split_duplicates():
    """While active, the outermost module's forward gets its second copy of a duplicated float input replaced.

    Yields a list that receives ``(module class name, [parameter names], (first, second))`` for each change.
    """
    done: list = []
    torch = sys.modules.get("torch")
    if torch is None:
        yield done
        return
    depth = [0]

    def before(module, inputs):
        depth[0] += 1
        if depth[0] > 1 or not isinstance(inputs, tuple):
            return None
        try:
            return _split(module, inputs)
        except Exception:  # a tensor without values (the meta device), anything odd: leave the inputs alone
            return None

    def _split(module, inputs):
        tensors = [
            (i, x)
            for i, x in enumerate(inputs)
            if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() and x.device.type != "meta"
        ]
        # the latest pair first: of (x, x, x) the value is made distinct from the key, the query kept
        pairs = [(a, b) for a in range(len(tensors)) for b in range(a + 1, len(tensors))]
        for a, b in sorted(pairs, key=lambda p: (-p[0], -p[1])):
            (i, x), (j, y) = tensors[a], tensors[b]
            if _same(x, y, torch):
                changed = list(inputs)
                changed[j] = _other(y, torch)
                done.append((type(module).__name__, _names(module), (i, j)))
                return tuple(changed)
        return None

    def after(module, inputs, output):
        depth[0] -= 1

    hooks = torch.nn.modules.module
    handles = [hooks.register_module_forward_pre_hook(before), hooks.register_module_forward_hook(after)]
    try:
        yield done
    finally:
        for handle in handles:
            handle.remove()


def _names(module) -> list:
    try:
        params = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _said(names, index) -> str:
    return names[index] if index < len(names) else f"input {index + 1}"


def distinct_problem(exercise, answer, cases, run, problem) -> str | None:
    """None when the answer agrees with the course's with each duplicated module input made distinct."""
    if sys.modules.get("torch") is None:
        return None
    for i, args in enumerate(cases[:DISTINCT_CASES]):
        with split_duplicates() as done:
            status, expected = run(exercise.reference, args, i, fn_is_answer=False)
        if status != "ok" or not done or expected is None:
            continue
        _, names, (first, second) = done[0]
        with split_duplicates():
            status, got = run(answer, args, i)
        where = (
            f"with `{_said(names, second)}` a different tensor from `{_said(names, first)}` (case {i + 1} passes the "
            "same tensor for both)"
        )
        if status != "ok":
            return f"{where}, your answer did not run ({status.replace('_', ' ')})"
        found = problem(expected, got) if got is not None else "your function returned None"
        if found:
            return (
                f"{where}, your answer is wrong: {found}. Is `{_said(names, second)}` used where it belongs, and "
                f"`{_said(names, first)}` only there?"
            )
    return None
