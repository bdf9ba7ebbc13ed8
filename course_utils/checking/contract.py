"""What an answer promises to return: inferred from the course's own result on each case, checked on the answer's.

A right value is not enough: a lesson goes on with what the function returns, so a list where an array is
promised, a tensor where NumPy's array is, float32 where float64 is, a ``(1,)`` array where a number is, an index where a
label (a str) is, or a
tensor that still requires grad where a number is, breaks a later cell (or trains nothing). :func:`promise`
reads the promise off the reference's result (type, dtype, device; a tuple's or a dict's items one by one);
:func:`breach` says, in one sentence, what was promised and what came back, or None.

An exercise where several types are right declares it as data, ``Exercise(returns=...)``: ``"any"`` (nothing
checked), ``"number"`` (any real number, also a one-element array), ``"array_like"`` (an array of any dtype,
or nested lists of numbers); a tuple of these gives each item of a tuple result its own (``"inferred"``
keeps the inferred promise for that item).

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import sys

import numpy as np

from course_utils.checking.compare import describe, is_tensor, type_name

__all__ = ["promise", "breach"]


def _is_real_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def promise(expected, declared=None):
    """The promise the reference's result makes, as data: ``("float",)``, ``("array", "float64")``, ``("tuple", [...])``."""
    if declared not in (None, "inferred") and not isinstance(declared, tuple):
        return ("declared", declared)
    if isinstance(expected, (bool, np.bool_)):
        return ("bool",)
    if isinstance(expected, (int, np.integer)):
        return ("int",)
    if isinstance(expected, str):
        return ("str",)
    if isinstance(expected, (float, np.floating)):
        return ("float",)
    if isinstance(expected, np.ndarray):
        return ("array", str(expected.dtype))
    if is_tensor(expected):
        return ("tensor", str(expected.dtype).replace("torch.", ""), str(expected.device))
    if isinstance(expected, (tuple, list)):
        items = declared if isinstance(declared, tuple) and len(declared) == len(expected) else (None,) * len(expected)
        return (type(expected).__name__, [promise(e, d) for e, d in zip(expected, items, strict=True)])
    if isinstance(expected, dict):
        return ("dict", {k: promise(v) for k, v in expected.items()})
    return ("unchecked",)


def _came(got) -> str:
    """What came back, in words, with what matters for a promise (a tensor's grad, an array's shape)."""
    if is_tensor(got):
        words = describe(got)
        if getattr(got, "requires_grad", False):
            words += " that still requires grad"
        return words
    if isinstance(got, np.ndarray):
        return describe(got)
    if isinstance(got, (tuple, list)):
        return f"a {type_name(got)}"
    return describe(got)


def _breach(promised, got, path) -> str | None:
    kind = promised[0]
    if kind == "unchecked":
        return None
    if kind == "declared":
        word = promised[1]
        if word == "any":
            return None
        if word == "number":
            if _is_real_number(got) or (isinstance(got, np.ndarray) and got.size == 1):
                return None
            return f"{path}: must be a number but your function returned {_came(got)}"
        if word == "array_like":
            if isinstance(got, (np.ndarray, list, tuple)):
                return None
            return f"{path}: must be an array (or a list of numbers) but your function returned {_came(got)}"
        return None
    if kind in ("float", "int"):
        fits = _is_real_number(got) and (kind == "float" or isinstance(got, (int, np.integer)))
        if fits:
            return None
        what = "a number (a float)" if kind == "float" else "a whole number (an int)"
        hint = " (a tensor keeps its graph alive; a number is what the lesson goes on with)" if is_tensor(got) else ""
        return f"{path}: must be {what}, as the course's is, but your function returned {_came(got)}{hint}"
    if kind == "str":
        if isinstance(got, str):
            return None
        return f"{path}: must be a str (a label or a name), as the course's is, but your function returned {_came(got)}"
    if kind == "bool":
        if isinstance(got, (bool, np.bool_)):
            return None
        return f"{path}: must be True or False, as the course's is, but your function returned {_came(got)}"
    if kind == "array":
        if not isinstance(got, np.ndarray):
            return f"{path}: must be a NumPy array, as the course's is, but your function returned {_came(got)}"
        if str(got.dtype) != promised[1]:
            return (
                f"{path}: must hold {promised[1]} values, as the course's does, but your array holds {got.dtype} "
                "(the lesson's later cells expect the same dtype)"
            )
        return None
    if kind == "tensor":
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(got, torch.Tensor):
            return f"{path}: must be a torch tensor, as the course's is, but your function returned {_came(got)}"
        dtype = str(got.dtype).replace("torch.", "")
        if dtype != promised[1]:
            return f"{path}: must be a {promised[1]} tensor, as the course's is, but yours is {dtype}"
        if str(got.device) != promised[2]:
            return f"{path}: must be on device {promised[2]}, as the course's is, but yours is on {got.device}"
        return None
    if kind in ("tuple", "list"):
        if not isinstance(got, (tuple, list)):
            return f"{path}: must be a {kind}, as the course's is, but your function returned {_came(got)}"
        if len(got) != len(promised[1]):
            return None  # the comparison says how many items
        for i, (item, value) in enumerate(zip(promised[1], got, strict=True)):
            problem = _breach(item, value, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if kind == "dict":
        if not isinstance(got, dict):
            return f"{path}: must be a dict, as the course's is, but your function returned {_came(got)}"
        for key, item in promised[1].items():
            if key in got:
                problem = _breach(item, got[key], f"{path}[{key!r}]")
                if problem:
                    return problem
        return None
    return None


def breach(expected, got, *, declared=None, names=()) -> str | None:
    """None when ``got`` keeps the promise of ``expected`` (the reference's result), else one sentence.

    ``declared`` is ``Exercise.returns``; ``names`` the exercise's ``output_names`` (a tuple's items are then
    called by their names).
    """
    promised = promise(expected, declared)
    try:
        if names and promised[0] in ("tuple", "list") and len(names) == len(promised[1]):
            if isinstance(got, (tuple, list)) and len(got) == len(names):
                for name, item, value in zip(names, promised[1], got, strict=True):
                    problem = _breach(item, value, name)
                    if problem:
                        return problem
                return None
        return _breach(promised, got, "result")
    except Exception:  # whatever the answer is, the contract never raises
        return None
