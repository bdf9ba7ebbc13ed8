"""The right computation on a case whose arguments were varied the way a student misreads them.

:mod:`course_utils.checking.mutations` varies the *steps* of the course's answer; this module varies its
*inputs*, for every exercise at once: a square weight matrix transposed (``W_o.T`` for ``W_o``: the
``nn.Linear`` habit of ``out_features x in_features``), so an answer that reads a matrix's rows where its
columns belong is named by the argument it misreads; and two arguments of one shape swapped (``W_k`` used
for the queries and ``W_q`` for the keys). A variant is a finding on a case when the course's
answer on the varied case differs from the right output there and equals the student's.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np

from course_utils.checking.compare import compare, is_array
from course_utils.checking.relation_basics import Finding, parameter_names

__all__ = ["finder", "combined", "MAX_VARIANTS"]

MAX_VARIANTS = 12
"""At most this many varied cases per failing case (square matrices transposed first, then pairs swapped)."""


def _transposed(value):
    """``value`` with its two axes swapped, for a square 2-D float array or tensor; None otherwise."""
    if not is_array(value) or len(tuple(value.shape)) != 2:
        return None
    rows, cols = tuple(value.shape)
    if rows != cols or rows < 2:
        return None
    if isinstance(value, np.ndarray):
        return value.T.copy() if value.dtype.kind == "f" else None
    if not getattr(value, "is_floating_point", lambda: False)():
        return None
    return value.detach().transpose(0, 1).clone().requires_grad_(value.requires_grad)


def _variants(exercise, args) -> list:
    """``[(key, words, varied args)]`` for one case."""
    names = parameter_names(exercise.reference, len(args))
    out = []
    for i, (name, value) in enumerate(zip(names, args, strict=False)):
        flipped = _transposed(value)
        if flipped is None:
            continue
        varied = tuple(flipped if j == i else a for j, a in enumerate(args))
        words = f"the right computation with `{name}` transposed: its rows read where its columns belong"
        out.append((f"argument:transposed:{name}", words, varied))
        if len(out) >= MAX_VARIANTS:
            return out
    shaped = [(i, n, v) for i, (n, v) in enumerate(zip(names, args, strict=False)) if _float_array(v)]
    for (i, a, x), (j, b, y) in itertools.combinations(shaped, 2):
        if tuple(x.shape) != tuple(y.shape) or x is y:
            continue
        varied = tuple(y if k == i else x if k == j else v for k, v in enumerate(args))
        words = f"the right computation with `{a}` and `{b}` swapped: each used where the other belongs"
        out.append((f"argument:swapped:{a},{b}", words, varied))
        if len(out) >= MAX_VARIANTS:
            break
    return out


def _float_array(value) -> bool:
    if not is_array(value) or len(tuple(value.shape)) == 0:
        return False
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind is not None:
        return kind == "f"
    return bool(getattr(value, "is_floating_point", lambda: False)())


def finder(exercise, run):
    """``extra(triple) -> [Finding]`` for :func:`course_utils.checking.relations.explain`.

    ``run(answer, args, seed)`` runs an answer on a case as the check does (driver, seed, copies).
    """

    def extra(triple):
        found = []
        tol = {"atol": exercise.atol, "rtol": exercise.rtol}
        for key, words, varied in _variants(exercise, tuple(triple.args)):
            try:
                with np.errstate(all="ignore"):
                    out = run(exercise.reference, varied, triple.seed)
            except Exception:  # the course's answer does not take the varied case: no finding
                continue
            if compare(triple.expected, out, equal_nan=True, **tol) is None:
                continue  # this argument, varied, changes nothing here (a symmetric matrix)
            if compare(out, triple.got, equal_nan=False, **tol) is not None:
                continue
            found.append(Finding(key, words))
        return found

    return extra


def combined(*finders):
    """One ``extra(triple)`` that lists the findings of each of ``finders`` in turn (a failing one adds none)."""

    def extra(triple):
        found = []
        for find in finders:
            with contextlib.suppress(Exception):
                found += list(find(triple))
        return found

    return extra
