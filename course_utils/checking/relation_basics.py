"""What every relation finder shares: :class:`Finding`, the sizes of a case as labels (``size_labels``,
``coinciding_sizes``) and the numeric comparisons of a wrong output with the right one.

Moved out of :mod:`course_utils.checking.relation_finders` whole (issue 26 section 5); the shared helpers got public
names (``_names`` is ``parameter_names``, ``_factors`` ``size_factors``, ``_close`` ``all_close``, ``_numeric``
``as_numeric``, ``_same_value`` ``same_value``, ``_item_differs`` ``item_differs``, ``_safe`` ``safe_findings``).
"""

from __future__ import annotations

import inspect
import itertools
import math
from dataclasses import dataclass

import numpy as np

from course_utils.checking.compare import is_array, to_numpy

__all__ = [
    "Finding",
    "size_labels",
    "coinciding_sizes",
    "values_close",
    "axis_word",
]


def values_close(a, b, atol, rtol) -> bool:
    """``a`` and ``b`` (array-likes) of one shape and close as floats; a NaN is never close (the observations'
    comparison of a transformed right output with the student's)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=False))


def axis_word(axis: int, ndim: int) -> str:
    """``axis`` of an ``ndim``-axis array in words, counted from the end (``axis -1``)."""
    return f"axis {axis - ndim}"


@dataclass(frozen=True)
class Finding:
    """One relation: ``key`` must agree across cases for a name; ``words`` complete "your result is ..."."""

    key: str
    words: str
    misconception: str | None = None  # the catalogue entry whose words and nudge explain it, when one does
    single: bool = (
        False  # found on one number (an output of a tuple): no fingerprint when another output is unexplained
    )


# ---------------------------------------------------------------------------------------------
# sizes in scope
# ---------------------------------------------------------------------------------------------


def parameter_names(reference, n: int) -> list[str]:
    try:
        params = [
            p.name
            for p in inspect.signature(reference).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"argument {i + 1}" for i in range(n)]


def size_labels(args, names) -> dict:
    """``{label: size}`` for every size in scope: each axis of each array argument, each int argument, and
    the whole quotients of two of them (``d_model / num_heads``). Sizes 0 and 1 are left out."""
    found: dict = {}
    for name, arg in zip(names, args, strict=False):
        if is_array(arg):
            shape = tuple(arg.shape)
            for axis, size in enumerate(shape):
                found[f"{name}.shape[{axis - len(shape)}]"] = int(size)
        elif isinstance(arg, (int, np.integer)) and not isinstance(arg, (bool, np.bool_)):
            found[name] = int(arg)
    found = {label: size for label, size in found.items() if size > 1}
    for (a, x), (b, y) in itertools.permutations(list(found.items()), 2):
        if x % y == 0 and x // y > 1 and f"{a} / {b}" not in found:
            found[f"{a} / {b}"] = x // y
    return found


def size_factors(labels: dict) -> list:
    """``[(value, label)]``: each size, its inverse, its square root and the inverse of that, then its natural
    log and the inverse of that (an entropy divided by its maximum, ln k)."""
    out = []
    for label, size in labels.items():
        out += [
            (size, label),
            (1 / size, f"1/{label}"),
            (math.sqrt(size), f"√({label})"),
            (1 / math.sqrt(size), f"1/√({label})"),
        ]
    for label, size in labels.items():
        out += [(math.log(size), f"ln({label})"), (1 / math.log(size), f"1/ln({label})")]
    return out


def coinciding_sizes(args, reference) -> list[str]:
    """``["layers=2", "heads=4", ...]``: the whole-number arguments of a case that equal another one, or 2.

    A case whose sizes coincide lets a mistake fit by accident (heads = bytes per value = 4; layers = 2 = the
    key-plus-value factor): every whole number a case hands in should be its own, and never 2.
    """
    names = parameter_names(reference, len(args))
    ints = {
        name: int(arg)
        for name, arg in zip(names, args, strict=False)
        if isinstance(arg, (int, np.integer)) and not isinstance(arg, (bool, np.bool_)) and int(arg) > 1
    }
    values = list(ints.values())
    return [f"{name}={value}" for name, value in ints.items() if value == 2 or values.count(value) > 1]


# ---------------------------------------------------------------------------------------------
# the relations of one case
# ---------------------------------------------------------------------------------------------


def all_close(a, b, atol, rtol) -> bool:
    if a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=False))


def as_numeric(x):
    if isinstance(x, (bool, np.bool_, int, float, np.integer, np.floating)):
        return np.asarray(x)
    if isinstance(x, list) and x and all(isinstance(v, (int, float, np.integer, np.floating)) for v in x):
        return np.asarray(x, dtype=float)  # numbers written out by hand: one array
    if not is_array(x):
        return None
    try:
        return to_numpy(x)
    except Exception:
        return None


def item_differs(e, g, atol, rtol) -> bool:
    """Whether one output of a tuple differs from the right one (numbers by tolerance, anything else by ==)."""
    if as_numeric(e) is not None and as_numeric(g) is not None:
        return not same_value(e, g, atol, rtol)
    try:
        return not bool(e == g)
    except Exception:
        return True


def same_value(e, g, atol, rtol) -> bool:
    a, b = as_numeric(e), as_numeric(g)
    if a is None or b is None or a.shape != b.shape:
        return False
    if a.dtype == bool or b.dtype == bool:
        return bool(np.array_equal(a, b))
    return all_close(a.astype(float), b.astype(float), atol, rtol)


def safe_findings(relation, *args) -> list:
    """The relation's findings; none when it cannot be computed on these outputs (shapes that do not meet)."""
    try:
        with np.errstate(all="ignore"):
            return relation(*args)
    except Exception:
        return []
