"""The fixed cases again at extreme magnitudes: an answer that is stable only on ordinary numbers is found.

A softmax without its maximum, a running maximum started at 0 or at a finite stand-in for ``-inf``, one
maximum for a whole tile, a softmax taken before the mask: each is right while the scores are near 0 and
wrong (0/0, underflow, overflow) when they are in the thousands, far below 0, or when a forbidden score is
the largest. After the fixed cases pass, :func:`extreme_problem` runs the cases again with their float
inputs transformed (:data:`TRANSFORMS`: scaled by 1/1000, where a loose tolerance hides a real
difference; scaled by 1000; shifted by -100000; where a case holds a bool mask
that broadcasts against a float input, that input's forbidden entries raised by 10000), the course's answer
and the student's alike, and compares them wherever the course's result is finite. A case holding a module
(a model, an optimizer) is left out: its weights are not inputs.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import copy
import sys

import numpy as np

__all__ = ["TRANSFORMS", "transformed", "extreme_problem", "MAX_ENTRIES", "EXTREME_CASES"]

MAX_ENTRIES = 200_000
"""A case whose float inputs hold more entries than this is not run again (a whole data set)."""
EXTREME_CASES = 4
"""How many cases (the first ones) are run again at extreme magnitudes."""


def _is_float(x) -> bool:
    torch = sys.modules.get("torch")
    if isinstance(x, np.ndarray):
        return x.dtype.kind == "f"
    return torch is not None and isinstance(x, torch.Tensor) and x.is_floating_point()


def _is_bool(x) -> bool:
    torch = sys.modules.get("torch")
    if isinstance(x, np.ndarray):
        return x.dtype == bool
    return torch is not None and isinstance(x, torch.Tensor) and x.dtype == torch.bool


def _holds_module(value, depth=0) -> bool:
    torch = sys.modules.get("torch")
    if torch is None or depth > 4:
        return False
    if isinstance(value, (torch.nn.Module, torch.optim.Optimizer)):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_module(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_holds_module(v, depth + 1) for v in value.values())
    return False


def _scaled(x, args):
    return x * 1000.0


def _tiny(x, args):
    return x * 0.001


def _shifted(x, args):
    return x - 100000.0


def _forbidden_raised(x, args):
    """``x`` with the entries a bool mask of the case forbids (False) raised by 10000; None when no mask fits."""
    torch = sys.modules.get("torch")
    for mask in args:
        if not _is_bool(mask) or mask.ndim == 0 or mask.all():
            continue
        try:
            if np.broadcast_shapes(tuple(mask.shape), tuple(x.shape)) != tuple(x.shape):
                continue
        except ValueError:
            continue
        if isinstance(x, np.ndarray) and isinstance(mask, np.ndarray):
            return np.where(mask, x, x + 10000.0)
        if torch is not None and isinstance(x, torch.Tensor) and isinstance(mask, torch.Tensor):
            return torch.where(mask, x, x + 10000.0)
    return None


_STABLE = (
    "Ordinary numbers hide this: subtract the largest allowed score of each row before the exponential, start a "
    "running maximum at -inf, and keep forbidden scores out of every maximum and sum"
)
_TOLERANCE = (
    "Ordinary numbers hide this: a tolerance (an `atol`, a threshold) larger than the differences that matter "
    "lets a real difference pass; keep the default tolerance, or one relative to the values"
)
TRANSFORMS = (
    ("its float inputs scaled by 1/1000 (small differences: a loose tolerance hides them)", _tiny, _TOLERANCE),
    ("its float inputs scaled by 1000 (scores in the thousands)", _scaled, _STABLE),
    ("its float inputs shifted by -100000 (every score far below 0)", _shifted, _STABLE),
    ("the entries its mask forbids raised by 10000 (a forbidden score the largest)", _forbidden_raised, _STABLE),
)
"""``(words, transform(x, args), what to look for)``, tried in this order."""


def transformed(args, how):
    """A copy of ``args`` with ``how(x, args)`` applied to each float array or tensor argument (top level), or None
    when it changes nothing."""
    out, changed = list(copy.deepcopy(args)), False
    for i, x in enumerate(out):
        if _is_float(x) and x.ndim >= 1:
            new = how(x, args)
            if new is not None:
                out[i], changed = new, True
    return tuple(out) if changed else None


def _finite(value, depth=0) -> bool:
    torch = sys.modules.get("torch")
    if depth > 4:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isfinite(value))
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        return bool(np.isfinite(value).all())
    if torch is not None and isinstance(value, torch.Tensor) and value.is_floating_point():
        return bool(torch.isfinite(value.detach()).all())
    if isinstance(value, (tuple, list)):
        return all(_finite(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(_finite(v, depth + 1) for v in value.values())
    return True


def _small(args) -> bool:
    total = 0
    for x in args:
        if _is_float(x):
            total += int(x.size if isinstance(x, np.ndarray) else x.numel())
    return 0 < total <= MAX_ENTRIES


def extreme_problem(exercise, answer, cases, run, problem) -> str | None:
    """None when the answer agrees with the course's on every case at the extreme magnitudes the course's own
    answer handles (its result finite)."""
    for words, how, look_for in TRANSFORMS:
        for i, args in enumerate(cases[:EXTREME_CASES]):
            if not isinstance(args, tuple) or _holds_module(args) or not _small(args):
                continue
            other = transformed(args, how)
            if other is None:
                continue
            status, expected = run(exercise.reference, other, i, fn_is_answer=False)
            if status != "ok" or expected is None or not _finite(expected):
                continue
            status, got = run(answer, other, i)
            where = f"on case {i + 1} with {words}"
            if status != "ok":
                return (
                    f"{where}, your answer did not run ({status.replace('_', ' ')}) where the course's does. "
                    "A stable computation subtracts the largest score before the exponential"
                )
            found = problem(expected, got) if got is not None else "your function returned None"
            if found:
                return f"{where}, your answer is wrong: {found}. {look_for}"
    return None
