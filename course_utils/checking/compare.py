"""The comparer behind every check: one short sentence on how an answer differs, never an exception.

:func:`compare` takes whatever a student's function returned (arrays, masked arrays, tensors of any dtype
or layout, tuples, dicts, numbers, a generator, an object whose ``__repr__`` raises) and returns ``None``
or a one-line explanation of the first difference. The helpers that describe a value in a message
(:func:`describe`, :func:`format_number`, :func:`safe_repr`, :func:`shorten`, ...) live here too. Needs only
NumPy: torch is looked up in ``sys.modules``, never imported.

Introduced in notebooks/00_start_here.ipynb (``checks.compare``).
"""

from __future__ import annotations

import math
import sys

import numpy as np

__all__ = [
    "compare",
    "shorten",
    "safe_repr",
    "safe_str",
    "type_name",
    "is_tensor",
    "is_array",
    "to_numpy",
    "describe",
    "format_number",
    "is_number",
    "MAX_MESSAGE",
]

MAX_MESSAGE = 400


def shorten(text, limit: int = MAX_MESSAGE) -> str:
    """One line of at most ``limit`` characters, cut between words (never mid-word), ending in "…" when cut."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def type_name(x) -> str:
    try:
        return type(x).__name__
    except Exception:
        return "object"


def safe_repr(x, limit: int = 80) -> str:
    """``repr(x)``, shortened; an object whose ``__repr__`` raises still gets a name."""
    try:
        text = repr(x)
    except Exception:
        return f"<unprintable {type_name(x)}>"
    return shorten(text, limit)


def safe_str(x, limit: int = 200) -> str:
    try:
        return shorten(str(x), limit)
    except Exception:
        return f"<unprintable {type_name(x)}>"


def is_tensor(x) -> bool:
    try:
        return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "shape")
    except Exception:
        return False


def is_array(x) -> bool:
    """A NumPy array or a torch tensor."""
    return isinstance(x, np.ndarray) or is_tensor(x)


def _torch_dtype(name):
    torch = sys.modules.get("torch")
    return getattr(torch, name, None) if torch is not None else None


def to_numpy(x):
    """An ndarray from an array, a tensor of any dtype, layout or device, or a nested sequence."""
    if is_tensor(x):
        t = x.detach()
        if getattr(t, "is_sparse", False) or str(getattr(t, "layout", "")).startswith("torch.sparse"):
            t = t.to_dense()
        if str(getattr(t, "device", "cpu")) == "meta":
            raise ValueError("a tensor on the 'meta' device has no values")
        if t.is_complex():
            return t.cpu().resolve_conj().numpy()
        if t.dtype.is_floating_point and t.dtype not in (_torch_dtype("float32"), _torch_dtype("float64")):
            t = t.double()  # bfloat16, float16, float8: NumPy cannot hold all of them
        return t.cpu().numpy()
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x)


def describe(x) -> str:
    """A few words for a value: ``"a tensor of shape (2, 3) and dtype float32"``, ``"int 3"``."""
    try:
        if is_tensor(x):
            return f"a tensor of shape {tuple(x.shape)} and dtype {str(x.dtype).replace('torch.', '')}"
        if isinstance(x, np.ma.MaskedArray):
            return f"a masked array of shape {x.shape} with {int(np.ma.count_masked(x))} masked entries"
        if isinstance(x, np.ndarray):
            return f"an array of shape {x.shape} and dtype {x.dtype}"
        if isinstance(x, (tuple, list)):
            return f"a {type_name(x)} of {len(x)} items"
        if x is None or isinstance(x, (bool, int, float, complex, str, np.generic)):
            return f"{type_name(x)} {safe_repr(x, 40)}"
    except Exception:
        pass
    return f"a {type_name(x)}"


def format_number(value) -> str:
    """A number as a student reads it: ints with thousands separators, floats to 4 significant digits."""
    try:
        if isinstance(value, (bool, np.bool_)):
            return str(bool(value))
        if isinstance(value, (int, np.integer)):
            return f"{int(value):,}"
        if isinstance(value, (float, np.floating)):
            return f"{float(value):.4g}"
        if isinstance(value, (complex, np.complexfloating)):
            return f"{complex(value):.4g}"
    except Exception:
        pass
    return safe_repr(value, 40)


def is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _plain_numbers(x, depth: int = 0) -> bool:
    """A (nested) list or tuple of plain numbers or bools, as a pen-and-paper answer writes an array."""
    if depth > 8 or not isinstance(x, (tuple, list)) or not x:
        return False
    return all(
        _plain_numbers(item, depth + 1)
        if isinstance(item, (tuple, list))
        else isinstance(item, (int, float, np.generic))
        for item in x
    )


def _compare(expected, got, atol, rtol, path, equal_nan, reveal):
    if isinstance(expected, (tuple, list)) and isinstance(got, np.ndarray) and _plain_numbers(expected):
        return _compare_arrays(np.asarray(expected), got, atol, rtol, path, equal_nan, reveal)
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            return f"{path}: expected a {type(expected).__name__} of {len(expected)} items but got {describe(got)}"
        if len(got) != len(expected):
            return f"{path}: expected {len(expected)} items but got {len(got)}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            problem = _compare(e, g, atol, rtol, f"{path}[{i}]", equal_nan, reveal)
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return f"{path}: expected a dict with keys {sorted(map(str, expected))} but got {describe(got)}"
        for key in expected:
            problem = _compare(expected[key], got[key], atol, rtol, f"{path}[{key!r}]", equal_nan, reveal)
            if problem:
                return problem
        return None
    if is_array(expected):
        return _compare_arrays(expected, got, atol, rtol, path, equal_nan, reveal)
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(got, (bool, np.bool_)) or bool(got) != bool(expected):
            shown = format_number(expected) if reveal else "another value"
            said = format_number(got) if isinstance(got, (bool, np.bool_)) else describe(got)
            return f"{path}: expected {shown} but got {said}"
        return None
    if is_number(expected):
        return _compare_numbers(expected, got, atol, rtol, path, equal_nan, reveal)
    if expected is None:
        return None if got is None else f"{path}: expected None but got {describe(got)}"
    if isinstance(expected, str):
        return None if got == expected else f"{path}: expected {expected!r} but got {describe(got)}"
    same = expected == got
    if not isinstance(same, (bool, np.bool_)):
        same = bool(np.all(same))
    return None if same else f"{path}: expected {safe_repr(expected)} but got {describe(got)}"


def _compare_numbers(expected, got, atol, rtol, path, equal_nan, reveal):
    if isinstance(got, np.ma.MaskedArray):
        return f"{path}: expected a number but got {describe(got)}"
    if is_array(got):
        if int(np.prod(tuple(got.shape))) != 1:
            return f"{path}: expected a number but got {describe(got)}"
        got = to_numpy(got).reshape(-1)[0].item()
    if not is_number(got):
        return f"{path}: expected a number but got {describe(got)}"
    try:
        e, g = float(expected), float(got)
    except OverflowError:  # an int beyond float: compare exactly
        if int(got) == int(expected):
            return None
        return f"{path}: expected another number but got {format_number(got)[:40]}"
    if math.isnan(g) or math.isnan(e):
        if equal_nan and math.isnan(g) and math.isnan(e):
            return None
        return f"{path}: got NaN" if math.isnan(g) else f"{path}: expected NaN but got {format_number(g)}"
    if not math.isclose(g, e, rel_tol=rtol, abs_tol=atol):
        if reveal and e.is_integer() and g.is_integer() and max(abs(e), abs(g)) < 2**53:
            return f"{path}: expected {int(e):,} but got {int(g):,}"
        if reveal:
            return f"{path}: expected {format_number(e)} but got {format_number(g)}"
        return f"{path}: off by {format_number(abs(g - e))} (too {'high' if g > e else 'low'})"
    return None


def _masks(expected, got, path):
    """A masked array is compared on its mask first: returns (problem, the entries masked in both, or None)."""
    exp_mask = np.ma.getmaskarray(expected) if isinstance(expected, np.ma.MaskedArray) else None
    got_mask = np.ma.getmaskarray(got) if isinstance(got, np.ma.MaskedArray) else None
    if exp_mask is None and got_mask is None:
        return None, None
    if exp_mask is None:
        if got_mask.any():
            return f"{path}: expected {describe(expected)} but got {describe(got)}; masked entries have no value", None
        return None, None
    if got_mask is None:
        if exp_mask.any():
            return f"{path}: expected {describe(expected)} but got {describe(got)}", None
        return None, None
    if exp_mask.shape != got_mask.shape:
        return None, None  # the shapes differ: said below
    wrong = np.argwhere(exp_mask != got_mask)
    if len(wrong):
        idx = tuple(int(i) for i in wrong[0])
        said = "masked" if exp_mask[idx] else "a value"
        return (
            f"{path}: {len(wrong)} of {exp_mask.size} entries are masked where they should not be, or not where "
            f"they should be; first at index {idx}: expected {said}",
            None,
        )
    return None, exp_mask


def _compare_arrays(expected, got, atol, rtol, path, equal_nan, reveal):
    problem, both_masked = _masks(expected, got, path)
    if problem:
        return problem
    if isinstance(expected, np.ma.MaskedArray) or isinstance(got, np.ma.MaskedArray):
        # a masked entry has no value: compare the data of the entries that have one (masked ones set equal)
        expected, got = np.array(np.ma.getdata(expected)), np.array(np.ma.getdata(got))
        if both_masked is not None and both_masked.any():
            if expected.dtype == object or got.dtype == object:
                return f"{path}: expected {describe(expected)} but got {describe(got)}, which is not a regular array"
            got = got.astype(np.result_type(got.dtype, expected.dtype), copy=True)
            got[both_masked] = expected[both_masked]
    if not (is_tensor(got) or isinstance(got, (np.ndarray, list, tuple, float, int, np.generic))):
        return f"{path}: expected {describe(expected)} but got {describe(got)}"
    if is_tensor(expected) and not is_tensor(got):
        return f"{path}: expected a torch.Tensor but got {describe(got)}"
    exp = to_numpy(expected)
    try:
        act = to_numpy(got)
    except Exception:
        return f"{path}: expected {describe(expected)} but got {describe(got)}, which holds no regular values"
    if act.dtype == object:
        return f"{path}: expected {describe(expected)} but got {describe(got)}, which is not a regular array"
    if exp.shape != act.shape:
        return f"{path}: expected shape {tuple(exp.shape)} but got shape {tuple(act.shape)}"
    if exp.dtype == np.bool_ or act.dtype == np.bool_:
        if exp.dtype != act.dtype:
            got_dtype = str(got.dtype).replace("torch.", "") if is_tensor(got) else act.dtype
            return f"{path}: expected dtype bool but got dtype {got_dtype}"
        bad = np.argwhere(exp != act)
    else:
        if not (np.issubdtype(act.dtype, np.number) and np.issubdtype(exp.dtype, np.number)):
            return f"{path}: expected numbers but got dtype {act.dtype}"
        if np.issubdtype(act.dtype, np.complexfloating) and not np.issubdtype(exp.dtype, np.complexfloating):
            return f"{path}: expected real numbers but got complex dtype {act.dtype}"
        e = exp.astype(np.complex128 if np.iscomplexobj(exp) else np.float64)
        a = act.astype(np.complex128 if np.iscomplexobj(act) else np.float64)
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        if not equal_nan and nan_a.any() and not nan_e.any():
            where = tuple(int(i) for i in np.argwhere(nan_a)[0])
            return f"{path}: contains NaN, first at index {where}"
        close = np.isclose(a, e, atol=atol, rtol=rtol, equal_nan=equal_nan)
        bad = np.argwhere(~close)
    if len(bad):
        idx = tuple(int(i) for i in bad[0])
        where = f"{len(bad)} of {exp.size} entries differ; first at index {idx}"
        if reveal or exp.dtype == np.bool_:
            return f"{path}: {where}: expected {format_number(exp[idx])}, got {format_number(act[idx])}"
        try:
            off = float(abs(act[idx] - exp[idx]))
            direction = "too high" if act[idx] > exp[idx] else "too low"
            return f"{path}: {where}: off by {format_number(off)} ({direction})"
        except Exception:
            return f"{path}: {where}"
    return None


def compare(
    expected, got, *, atol: float = 1e-6, rtol: float = 1e-5, path: str = "result", equal_nan=False, reveal=True
):
    """Return ``None`` if ``got`` matches ``expected``, else a one-line explanation. Never raises.

    Handles NumPy arrays (a masked array is compared on its data *and* its mask: a masked entry has no
    value), torch tensors of any dtype (bfloat16, complex, sparse), tuples/lists of them, dicts,
    numbers (ints of any size) and booleans. Plain (nested) lists of numbers compare like the NumPy array
    they write, in either direction (a pen-and-paper answer returns lists); a tensor is still expected
    where the answer is a tensor. Floats are compared with
    ``abs(got - expected) <= atol + rtol * abs(expected)``; NaN never matches unless ``equal_nan``.
    Whatever ``got`` is (a generator, a ragged list, an object whose ``__repr__`` or ``__eq__``
    raises), the answer is a short message, never an exception. With ``reveal=False`` a wrong
    entry is described by how far off it is, not by the expected value. Run it under
    ``np.errstate(all="ignore")`` semantics whatever the caller set.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> compare(np.arange(3.0), np.arange(3.0)) is None
    True
    >>> compare(np.ones(2), np.ma.masked_all(2))
    'result: expected an array of shape (2,) and dtype float64 but got a masked array of shape (2,) with 2 masked entries; masked entries have no value'
    """
    try:
        with np.errstate(all="ignore"):
            problem = _compare(expected, got, atol, rtol, path, equal_nan, reveal)
    except RecursionError:
        problem = f"{path}: got {describe(got)}, nested too deeply to compare"
    except Exception as exc:  # whatever the answer is, explain instead of raising
        problem = f"{path}: expected {describe(expected)} but got {describe(got)} ({type_name(exc)} comparing them)"
    return None if problem is None else shorten(problem)
