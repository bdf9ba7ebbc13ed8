"""Why a NaN appears in a wrong answer's output, said in words: the operation that made it, and from what.

:mod:`course_utils.checking.naming` says *where* the first NaN appears (``traces.nan_origin``); this module
says *what made it*, by running the student's answer once more on a failing case and watching every
operation: NumPy with floating-point errors raised (the first overflow or invalid operation stops it), torch
through a :class:`torch.overrides.TorchFunctionMode` that looks at each result. A NaN is then explained by
its cause, never matched to a mistake that makes NaNs:

- ``exp_overflow``: an exponential overflowed to infinity before the NaN (infinity / infinity, or minus it);
- ``softmax_all_masked``: a softmax over a slice whose every score is minus infinity (every key masked);
- ``masked_row_shifted``: minus infinity minus minus infinity (such a slice shifted by its own maximum);
- ``normalised_all_zero``: a slice of zeros divided by its own sum (every exponential underflowed, or every key
  masked).

:func:`named` names the cause only when every failing case has a NaN and the same cause explains each.

Introduced in notebooks/01_attention_numpy.ipynb (a softmax that overflows) and notebooks/02_masking.ipynb
(a fully masked row).
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from course_utils.checking import traces
from course_utils.checking.preparing import call
from course_utils.checking.runner import seeded

__all__ = [
    "CAUSES",
    "cause_of",
    "numpy_cause",
    "watch_torch",
    "named",
]

CAUSES = {
    "exp_overflow": (
        "an exponential overflowed to infinity (exp of a number above about 709, or 88 in float32), and "
        "infinity divided by infinity is NaN: what was subtracted before exp left some exponents far above 0"
    ),
    "softmax_all_masked": (
        "a softmax over a slice whose every score is minus infinity (every key masked): each exponential is 0, "
        "and 0 / 0 is NaN, so a fully masked row must be dealt with (its weights are all 0)"
    ),
    "masked_row_shifted": (
        "minus infinity minus minus infinity is NaN: a slice whose every score is minus infinity (every key "
        "masked) was shifted by its own maximum"
    ),
    "normalised_all_zero": (
        "a slice whose entries are all 0 was divided by its own sum, and 0 / 0 is NaN: every exponential of it "
        "underflowed to 0 (it was shifted by far more than its own maximum) or every key of it is masked"
    ),
}
"""Each cause's words: they complete "What made it: ..."."""


def numpy_cause(message: str) -> str | None:
    """The cause behind NumPy's first floating-point error (``"overflow encountered in exp"``), or None."""
    if "overflow" in message and "exp" in message:
        return "exp_overflow"
    if "invalid value" in message and "subtract" in message:
        return "masked_row_shifted"
    if "invalid value" in message and "divide" in message:
        return "normalised_all_zero"
    return None


def _tensors(value) -> list:
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    if isinstance(value, torch.Tensor):
        return [value] if value.is_floating_point() else []
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def watch_torch():
    """A context whose value is a list that receives the cause of the first NaN torch makes (or stays empty)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return contextlib.nullcontext([])
    from torch.overrides import TorchFunctionMode

    class _Watch(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.found: list = []
            self.overflowed = False

        def __enter__(self):
            super().__enter__()
            return self.found

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if self.found:
                return out
            with torch.no_grad():
                ins = _tensors(args) + _tensors(kwargs or {})
                outs = _tensors(out)
                name = getattr(func, "__name__", str(func)).strip("_").lower()
                if not outs or not ins or "empty" in name or any(bool(torch.isnan(t).any()) for t in ins):
                    return out  # memory not yet written (torch.empty, a module's weights before init) is no NaN made
                in_inf = any(bool(torch.isinf(t).any()) for t in ins)
                if not in_inf and "exp" in name and any(bool(torch.isinf(t).any()) for t in outs):
                    self.overflowed = True
                if any(bool(torch.isnan(t).any()) for t in outs):
                    self.found.append(self._cause(name, ins))
            return out

        def _cause(self, name, ins):
            if self.overflowed:
                return "exp_overflow"
            has_neg_inf = any(bool(torch.isneginf(t).any()) for t in ins)
            if "softmax" in name and has_neg_inf:
                return "softmax_all_masked"
            if name in ("sub", "rsub", "sub_") and has_neg_inf:
                return "masked_row_shifted"
            if "div" in name and not any(bool(torch.isinf(t).any()) for t in ins):
                return "normalised_all_zero"
            return None

    return _Watch()


def cause_of(exercise, answer, args, seed) -> str | None:
    """The cause (a key of :data:`CAUSES`) of the first NaN the answer makes on one case, or None if unknown."""
    try:
        with (
            seeded(seed),
            np.errstate(over="raise", invalid="raise", divide="ignore", under="ignore"),
            watch_torch() as found,
        ):
            call(exercise, answer, args)
    except FloatingPointError as exc:
        return numpy_cause(str(exc))
    except Exception:
        return None
    return found[0] if found else None


def named(exercise, answer, prepared, failing, results, nan_note):
    """``(sentence, None, "nan:<cause>")`` when every failing case's output has a NaN that one cause explains on
    each (the cause found by running the case again), else None. ``nan_note`` says where the first NaN appears."""
    if not failing:
        return None
    causes = set()
    for i in failing:
        expected, row = prepared.expected[i], results[i]
        if not (row[0] == "ok" and traces.has_nan(row[1]) and not traces.has_nan(expected)):
            return None
        causes.add(cause_of(exercise, answer, prepared.cases[i], i))
        if len(causes) > 1 or None in causes:
            return None
    (found,) = causes
    where = "every failing case" if len(failing) > 1 else "the failing case"
    sentence = f"Your result has NaN on {where}.{nan_note} What made it: {CAUSES[found]}."
    if all(_only_in_gradients(exercise, results[i][1]) for i in failing):
        sentence += (
            " Your forward result has no NaN: it was made on the way and replaced, but the backward pass still goes "
            "through it."
        )
    return sentence, None, f"nan:{found}"


def _only_in_gradients(exercise, got) -> bool:
    """Whether the NaN of a tuple result is only in the outputs named as gradients."""
    names = getattr(exercise, "output_names", ()) or ()
    if not isinstance(got, (tuple, list)) or len(names) != len(got):
        return False
    grads = [traces.has_nan(item) for name, item in zip(names, got, strict=True) if "grad" in str(name).lower()]
    others = [traces.has_nan(item) for name, item in zip(names, got, strict=True) if "grad" not in str(name).lower()]
    return any(grads) and others and not any(others)
