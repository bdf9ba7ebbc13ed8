"""Instant feedback for exercises, and assertions with teaching-quality messages.

Introduced in ``notebooks/00_start_here.ipynb``. Every lesson's exercises call
:func:`check_exercise`; an unsolved exercise prints "not attempted yet" and never breaks Run All.
"""

from __future__ import annotations

import copy
import math
import traceback

import numpy as np

__all__ = ["check_exercise", "assert_shape", "assert_close", "compare"]

_NOT_ATTEMPTED = "not attempted yet"


def _is_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _to_numpy(x):
    if _is_tensor(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _describe(x) -> str:
    if _is_tensor(x) or isinstance(x, np.ndarray):
        return f"{type(x).__name__} of shape {tuple(x.shape)}"
    return type(x).__name__


def _fmt(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return repr(value)


def compare(expected, got, *, atol: float = 1e-6, rtol: float = 1e-5, path: str = "result") -> str | None:
    """Return ``None`` if ``got`` matches ``expected``, else a one-line explanation.

    Handles NumPy arrays, torch tensors, tuples/lists of them, dicts, numbers and booleans. Floats
    are compared with ``abs(got - expected) <= atol + rtol * abs(expected)``; NaN never matches.
    """
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            return f"{path}: expected a {type(expected).__name__} of {len(expected)} items but got {_describe(got)}"
        if len(got) != len(expected):
            return f"{path}: expected {len(expected)} items but got {len(got)}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            problem = compare(e, g, atol=atol, rtol=rtol, path=f"{path}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return f"{path}: expected a dict with keys {sorted(expected)} but got {_describe(got)}"
        for key in expected:
            problem = compare(expected[key], got[key], atol=atol, rtol=rtol, path=f"{path}[{key!r}]")
            if problem:
                return problem
        return None
    if _is_tensor(expected) or isinstance(expected, np.ndarray):
        if not (_is_tensor(got) or isinstance(got, (np.ndarray, list, tuple, float, int))):
            return f"{path}: expected {_describe(expected)} but got {_describe(got)}"
        if _is_tensor(expected) and not _is_tensor(got):
            return f"{path}: expected a torch.Tensor but got {_describe(got)}"
        exp, act = _to_numpy(expected), _to_numpy(got)
        if exp.shape != act.shape:
            return f"{path}: expected shape {tuple(exp.shape)} but got shape {tuple(act.shape)}"
        if exp.dtype == np.bool_ or act.dtype == np.bool_:
            if exp.dtype != act.dtype:
                return f"{path}: expected dtype {exp.dtype} but got dtype {act.dtype}"
            bad = np.argwhere(exp != act)
        else:
            if np.isnan(act.astype(float)).any() and not np.isnan(exp.astype(float)).any():
                where = tuple(int(i) for i in np.argwhere(np.isnan(act.astype(float)))[0])
                return f"{path}: contains NaN, first at index {where}"
            close = np.isclose(act.astype(float), exp.astype(float), atol=atol, rtol=rtol)
            bad = np.argwhere(~close)
        if len(bad):
            idx = tuple(int(i) for i in bad[0])
            return (
                f"{path}: {len(bad)} of {exp.size} entries differ; first at index {idx}: "
                f"expected {_fmt(exp[idx])}, got {_fmt(act[idx])}"
            )
        return None
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(got, (bool, np.bool_)) or bool(got) != bool(expected):
            return f"{path}: expected {_fmt(expected)} but got {_fmt(got)}"
        return None
    if isinstance(expected, (int, float, np.integer, np.floating)):
        if _is_tensor(got) or isinstance(got, np.ndarray):
            if np.size(got) != 1:
                return f"{path}: expected a number but got {_describe(got)}"
            got = _to_numpy(got).item()
        if not isinstance(got, (int, float, np.integer, np.floating)) or isinstance(got, bool):
            return f"{path}: expected a number ({_fmt(expected)}) but got {_describe(got)}"
        if math.isnan(float(got)):
            return f"{path}: got NaN, expected {_fmt(expected)}"
        if not math.isclose(float(got), float(expected), rel_tol=rtol, abs_tol=atol):
            return f"{path}: expected {_fmt(expected)} but got {_fmt(got)}"
        return None
    if expected != got:
        return f"{path}: expected {expected!r} but got {got!r}"
    return None


def _not_attempted(result) -> bool:
    return result is None or result is Ellipsis


def check_exercise(student_fn, reference_fn, cases, *, name: str, strict: bool = False, atol=1e-6, rtol=1e-5) -> bool:
    """Run ``student_fn`` and ``reference_fn`` on every case and print one friendly line.

    Parameters
    ----------
    student_fn, reference_fn : callables
    cases : list of tuples
        Each tuple holds the positional arguments of one call. Both functions get their own deep
        copy, so a function that modifies its input cannot spoil the other's.
    name : str
        The exercise's name, shown in the message.
    strict : bool
        If True (solutions notebooks and tests), anything but a pass raises ``AssertionError``.

    Returns
    -------
    bool : True when every case passed.

    The line says one of: *not attempted yet* (the stub raised ``NotImplementedError`` or returned
    ``None``/``...``), *wrong* (which case, and expected vs got: the first differing entry, a shape
    or type mismatch, NaN), *crashed* (the exception and the line of the student's code), or *passed*.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not cases:
        raise ValueError("cases must hold at least one tuple of arguments")
    n = len(cases)
    message, passed = None, False
    for i, args in enumerate(cases, start=1):
        if not isinstance(args, tuple):
            args = (args,)
        expected = reference_fn(*copy.deepcopy(args))
        try:
            got = student_fn(*copy.deepcopy(args))
        except NotImplementedError:
            message = (
                f"⏳ {name}: {_NOT_ATTEMPTED} — replace the `raise NotImplementedError` with your code and re-run."
            )
            break
        except Exception as exc:  # a student's bug is reported, not raised
            frames = traceback.extract_tb(exc.__traceback__)
            where = f" (line {frames[-1].lineno}: `{frames[-1].line}`)" if frames and frames[-1].line else ""
            message = f"💥 {name}: case {i} of {n} crashed with {type(exc).__name__}: {exc}{where}"
            break
        if _not_attempted(got):
            if i == 1:
                message = f"⏳ {name}: {_NOT_ATTEMPTED} — the function returns {got!r}; fill in the `...` and re-run."
            else:
                message = f"❌ {name}: case {i} of {n} returned {got!r}"
            break
        problem = compare(expected, got, atol=atol, rtol=rtol)
        if problem:
            message = f"❌ {name}: case {i} of {n} is wrong. {problem}"
            break
    else:
        message, passed = f"✅ {name}: all {n} cases passed.", True
    print(message)
    if strict and not passed:
        raise AssertionError(message)
    return passed


def assert_shape(x, expected, name: str = "x"):
    """Assert that ``x`` has shape ``expected`` (``None`` matches any size); return ``x``.

    >>> assert_shape(np.zeros((2, 3)), (2, None), name="weights").shape
    (2, 3)

    Introduced in notebooks/00_start_here.ipynb.
    """
    shape = tuple(x.shape)
    expected = tuple(expected)
    ok = len(shape) == len(expected) and all(e is None or e == s for s, e in zip(shape, expected, strict=False))
    if not ok:
        pretty = "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"
        raise AssertionError(f"{name} has shape {shape} but expected {pretty}")
    return x


def assert_close(actual, expected, *, name: str = "actual", atol: float = 1e-6, rtol: float = 1e-5) -> None:
    """Assert that two arrays/tensors/numbers match, with a message naming the first mismatch.

    Introduced in notebooks/00_start_here.ipynb.
    """
    problem = compare(expected, actual, atol=atol, rtol=rtol, path=name)
    if problem:
        raise AssertionError(problem)
