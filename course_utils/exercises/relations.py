"""Mistakes named by what the answer does: the relation between the student's output and the right one.

One engine for every exercise, with no per-exercise list: for each failing case (its arguments, the right
output, the student's), :func:`findings` lists what the student's output *is*, relative to the right one:

- the right values with the axes in another order (transposed, permuted);
- the right values times a constant that is a size of the case (``√(q.shape[-1])``, ``1/num_heads``, ...),
  found from the case's own argument shapes; for weights, the scores multiplied by such a size before the
  softmax;
- weights normalised over another axis;
- a mask inverted, or its diagonal shifted;
- right except where the right output holds one fill value, filled there with another;
- the right values shifted by one (or two) positions along an axis;
- off by exactly one of the arguments (a term added or left out), by the same vector in every row (a bias),
  or by one constant;
- what the course's own computation holds at an earlier step (its ``scores`` where its ``weights`` are
  asked), read from the reference's local variables while it runs (:func:`course_utils.exercises.traces.earlier_steps`);
- and, from :mod:`course_utils.exercises.mutations`, the reference with one step varied.

:func:`explain` names a relation only when the same one (same key: the same formula of sizes, the same axis)
explains *every* failing case given to it, whatever their origin (fixed or fresh cases); one that explains
some cases is said as "case 2 looks like ..."; a NaN is explained by where it first appears in the
student's code (:func:`course_utils.exercises.traces.nan_origin`), never matched to a mistake.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math
from dataclasses import dataclass

import numpy as np

from course_utils.exercises import misconceptions as catalogue
from course_utils.exercises import observations
from course_utils.exercises.compare import is_array, to_numpy

__all__ = [
    "Finding",
    "Explanation",
    "Triple",
    "findings",
    "explain",
    "size_labels",
    "coinciding_sizes",
]


@dataclass(frozen=True)
class Finding:
    """One relation: ``key`` must agree across cases for a name; ``words`` complete "your result is ..."."""

    key: str
    words: str
    misconception: str | None = None  # the catalogue entry whose words and nudge explain it, when one does
    single: bool = (
        False  # found on one number (an output of a tuple): no fingerprint when another output is unexplained
    )


@dataclass(frozen=True)
class Triple:
    """One case as judged: its label (``case 2 of 4 (...)``), arguments, the right output and the student's."""

    label: str
    args: tuple
    expected: object
    got: object
    steps: tuple = ()  # (name, value) of the reference's earlier steps on this case
    seed: int = 0  # the seed the check ran this case under


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found: a sentence, the relation's key and catalogue id, and whether it names."""

    sentence: str
    key: str | None = None
    misconception: str | None = None
    named: bool = False


# ---------------------------------------------------------------------------------------------
# sizes in scope
# ---------------------------------------------------------------------------------------------


def _names(reference, n: int) -> list[str]:
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


def _factors(labels: dict) -> list:
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
    names = _names(reference, len(args))
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


def _close(a, b, atol, rtol) -> bool:
    if a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=False))


def _numeric(x):
    if isinstance(x, (bool, np.bool_, int, float, np.integer, np.floating)):
        return np.asarray(x)
    if not is_array(x):
        return None
    try:
        return to_numpy(x)
    except Exception:
        return None


def _permuted(e, g, atol, rtol) -> list:
    if e.ndim < 2 or e.ndim > 5 or sorted(e.shape) != sorted(g.shape):
        return []
    out = []
    for perm in itertools.permutations(range(e.ndim)):
        if perm == tuple(range(e.ndim)):
            continue
        moved = np.transpose(e, perm)
        if moved.shape == g.shape and _close(moved.astype(float), g.astype(float), atol, rtol):
            swapped_last = perm == (*range(e.ndim - 2), e.ndim - 1, e.ndim - 2)
            if swapped_last:
                out.append(Finding("transposed", "the right one transposed: its last two axes swapped"))
            else:
                out.append(Finding(f"permuted:{perm}", f"the right values with the axes in the order {perm}"))
    return out


def _reordered(e, g, atol, rtol) -> list:
    """The right slices along one axis, in another order (columns swapped, halves exchanged, reversed)."""
    if e.shape != g.shape:
        return []
    out = []
    for axis in range(e.ndim):
        n = e.shape[axis]
        if n < 2 or n > 256:
            continue
        right = [np.take(e, i, axis=axis) for i in range(n)]
        order = []
        for i in range(n):
            mine = np.take(g, i, axis=axis)
            match = [j for j in range(n) if j not in order and _close(right[j], mine, atol, rtol)]
            if not match:
                break
            order.append(match[0])
        if len(order) == n and order != list(range(n)):
            if order == list(range(n))[::-1]:
                words = f"the right values in reverse order along axis {axis - e.ndim}"
            else:
                words = f"the right values with the positions along axis {axis - e.ndim} in another order"
            out.append(Finding(f"reordered:{axis - e.ndim}", words))
    return out


def _triangle(mask) -> tuple | None:
    """``("lower", k)`` when ``mask[..., i, j] == (j - i <= k)`` everywhere, ``("upper", k)`` for ``j - i >= k``."""
    if mask.ndim < 2:
        return None
    rows, cols = mask.shape[-2:]
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    for k in range(-rows, cols + 1):
        if np.array_equal(np.broadcast_to(offset <= k, mask.shape), mask):
            return "lower", k
        if np.array_equal(np.broadcast_to(offset >= k, mask.shape), mask):
            return "upper", k
    return None


def _masks(e, g) -> list:
    out = []
    if e.shape == g.shape and np.array_equal(g, ~e):
        out.append(Finding("inverted", "the right mask inverted: True where it should be False", "mask_inverted"))
    te, tg = _triangle(e), _triangle(g)
    if te and tg and te[0] == tg[0] and te[1] != tg[1]:
        shift = tg[1] - te[1]
        more = "more" if (shift > 0) == (te[0] == "lower") else "fewer"
        words = f"the right mask with its diagonal shifted by {shift:+d} ({abs(shift)} diagonal{'s' if abs(shift) > 1 else ''} {more})"
        mid = "tril_without_diagonal" if te[0] == "lower" and shift == -1 else None
        out.append(Finding(f"diagonal:{shift:+d}", words, mid))
    elif te and tg and te[0] != tg[0]:
        out.append(
            Finding(
                "triangle", "the other triangle: the keys after each query instead of those up to it", "triu_for_tril"
            )
        )
    return out


def _factor(e, g, labels, atol, rtol) -> list:
    finite = np.isfinite(e) & np.isfinite(g)
    if not finite.all() or not np.abs(e).max(initial=0) > 0:
        return []
    c = float((e * g).sum() / (e * e).sum())
    if abs(c) < 1e-6 or not math.isfinite(c) or math.isclose(c, 1.0, rel_tol=1e-4) or not _close(c * e, g, atol, rtol):
        return []
    out = [
        Finding(f"factor:{label}", f"the right one times {label}")
        for value, label in _factors(labels)
        if math.isclose(c, value, rel_tol=1e-4)
    ]
    if e.size < 2:  # one number is always some constant times another: only a size in scope says something
        return out
    if math.isclose(c, -1.0, rel_tol=1e-4):
        out.append(Finding("negated", "the right one negated"))
    out.append(Finding("factor", "the right one times a constant"))
    return out


def _per_slice(e, g, atol, rtol) -> list:
    """The right values times another constant along each slice of one axis: a normalisation left out or wrong."""
    if e.shape != g.shape or e.ndim < 1 or np.any(e == 0) or not np.all(np.isfinite(g)):
        return []
    ratio = g / e
    out = []
    for axis in range(e.ndim):
        if e.shape[axis] < 2:
            continue
        first = np.take(ratio, [0], axis=axis)
        if _close(ratio, np.broadcast_to(first, ratio.shape), 1e-9, max(rtol, 1e-5)) and not np.allclose(ratio, 1):
            words = (
                f"the right values times another constant for each slice along axis {axis - e.ndim}: "
                "a normalisation left out or done differently"
            )
            out.append(Finding("per_slice", words, None))
            break
    return out


def _is_distribution(x, axis) -> bool:
    return bool(np.all(x >= 0) and np.allclose(x.sum(axis=axis), 1.0, atol=1e-5))


def _softmax_relations(e, g, labels) -> list:
    if e.shape != g.shape or e.ndim < 1 or not np.all(np.isfinite(g)) or not _is_distribution(e, -1):
        return []
    out = []
    if not _is_distribution(g, -1):
        for axis in range(e.ndim - 1):
            if e.shape[axis] > 1 and _is_distribution(g, axis):
                out.append(
                    Finding(
                        "normalised_other_axis",
                        f"weights that sum to 1 over axis {axis - e.ndim} instead of over the keys (the last axis)",
                        "softmax_wrong_axis",
                    )
                )
        return out
    if np.any(e <= 0) or np.any(g <= 0):
        return out
    le, lg = np.log(e), np.log(g)
    ce = le - le.mean(axis=-1, keepdims=True)  # log-weights are the scores up to a constant per row
    cg = lg - lg.mean(axis=-1, keepdims=True)
    denom = float((ce * ce).sum())
    if denom <= 1e-12:
        return out
    c = float((ce * cg).sum() / denom)
    if not np.allclose(c * ce, cg, atol=1e-4, rtol=1e-3) or math.isclose(c, 1.0, rel_tol=1e-3):
        return out
    for value, label in _factors(labels):
        if math.isclose(c, value, rel_tol=1e-3):
            mid = "no_scaling" if label.startswith("√") else "scaled_by_d_head" if label.startswith("1/√") else None
            out.append(
                Finding(
                    f"temperature:{label}",
                    f"the right weights with the scores multiplied by {label} before the softmax",
                    mid,
                )
            )
    out.append(Finding("temperature", "the right weights with the scores multiplied by a constant before the softmax"))
    return out


def _fill(e, g) -> list:
    if e.shape != g.shape:
        return []
    with np.errstate(all="ignore"):
        differ = ~((e == g) | (np.isnan(e) & np.isnan(g)) | np.isclose(e, g, atol=1e-6, rtol=1e-5))
    if not differ.any() or differ.all():
        return []
    right, mine = np.unique(e[differ]), np.unique(g[differ])
    if len(right) == 1 and len(mine) == 1:
        r, m = float(right[0]), float(mine[0])
        if not np.any(e[~differ] == r):
            return [
                Finding(f"fill:{m:g}", f"right except where it should be {r:g}: you filled those entries with {m:g}")
            ]
    return []


def _shifted(e, g, atol, rtol) -> list:
    if e.shape != g.shape:
        return []
    out = []
    for axis in range(e.ndim):
        n = e.shape[axis]
        for s in (1, -1, 2, -2):
            if n - abs(s) < 2:
                continue
            src = np.take(e, range(max(0, -s), n - max(0, s)), axis=axis)
            dst = np.take(g, range(max(0, s), n - max(0, -s)), axis=axis)
            if _close(src.astype(float), dst.astype(float), atol, rtol) and not _close(
                src.astype(float), np.take(e, range(max(0, s), n - max(0, -s)), axis=axis).astype(float), atol, rtol
            ):
                words = f"the right values shifted by {abs(s)} position{'s' if abs(s) > 1 else ''} {'forward' if s > 0 else 'back'} along axis {axis - e.ndim}"
                out.append(Finding(f"shift:{axis - e.ndim}:{s}", words))
    return out


def _difference(e, g, args, names, atol, rtol) -> list:
    if e.shape != g.shape or not (np.all(np.isfinite(e)) and np.all(np.isfinite(g))):
        return []
    d = g - e
    out = []
    for name, arg in zip(names, args, strict=False):
        a = _numeric(arg)
        if a is None or a.dtype == bool or a.size < 2:
            continue
        try:
            a = np.broadcast_to(a, d.shape).astype(float)
        except ValueError:
            continue
        if _close(d, a, atol, rtol):
            out.append(
                Finding(f"term:+{name}", f"the right one plus `{name}`: a term added twice or that does not belong")
            )
        elif _close(d, -a, atol, rtol):
            out.append(Finding(f"term:-{name}", f"the right one without `{name}`: a term (a residual?) left out"))
    if out or np.allclose(d, 0, atol=atol):
        return out
    if d.size > 1 and _close(d, np.full_like(d, d.flat[0]), atol, rtol):
        out.append(Finding("offset", "the right one plus one constant"))
    elif (
        d.ndim >= 2
        and d.size > d.shape[-1]
        and _close(d, np.broadcast_to(d.reshape(-1, d.shape[-1])[:1], d.shape), atol, rtol)
    ):
        out.append(Finding("bias", "off by the same vector in every row: a bias added or left out"))
    return out


def _steps(e, g, steps, atol, rtol) -> list:
    out = []
    for name, value in steps:
        v = _numeric(value)
        if v is None or v.shape != g.shape or _close(v.astype(float), e.astype(float), atol, rtol):
            continue
        if v.dtype == bool or g.dtype == bool:
            if np.array_equal(v, g):
                out.append(Finding(f"step:{name}", f"what the computation holds at an earlier step (its `{name}`)"))
        elif _close(v.astype(float), g.astype(float), atol, rtol):
            out.append(Finding(f"step:{name}", f"what the computation holds at an earlier step (its `{name}`)"))
    return out


def findings(exercise, args, expected, got, *, steps=()) -> list[Finding]:
    """Every relation that holds between ``got`` and the right ``expected`` on one case (empty when none).

    A tuple result is looked at output by output (named as the exercise names them).
    """
    if isinstance(expected, tuple):
        names = exercise.output_names if len(exercise.output_names) == len(expected) else ()
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return _safe(_outputs_missing, exercise, expected, got, names)
        out = _safe(_outputs_order, exercise, expected, got, names)
        if out:  # the right outputs, moved: that explains every item
            return out
        atol, rtol = max(exercise.atol, 1e-6), max(exercise.rtol, 1e-5)
        unexplained = False
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            name = names[i] if names else f"result[{i}]"
            if not _item_differs(e, g, atol, rtol):
                continue  # a right output relates to nothing: its axes of size 1 "permuted" are no mistake
            found = findings(exercise, args, e, g, steps=steps)
            unexplained = unexplained or (not found and _item_differs(e, g, atol, rtol))
            single = getattr(_numeric(e), "size", 0) < 2  # one number: a relation on it may be a coincidence
            out += [Finding(f"{name}:{f.key}", f"(your {name}) {f.words}", f.misconception, single) for f in found]
        if unexplained:  # another output wrong in a way nothing explains: one number's relation is no fingerprint
            out = [f for f in out if not f.single]
        return [Finding(f.key, f.words, f.misconception) for f in out]
    e, g = _numeric(expected), _numeric(got)
    if e is None or g is None:
        return []
    atol, rtol = max(exercise.atol, 1e-6), max(exercise.rtol, 1e-5)
    names = _names(exercise.reference, len(args))
    labels = size_labels(args, names)
    if e.ndim == 0 and g.ndim == 0 and not (e.dtype.kind in "fc" or g.dtype.kind in "fc"):
        if e.dtype.kind not in "iu" or g.dtype.kind not in "iu":
            return []
        return _safe(_whole_numbers, int(e), int(g), labels)  # counts: a factor, a term or one off
    if e.shape != g.shape and e.dtype.kind in "biuf" and g.dtype.kind in "biuf":
        return (
            _safe(_permuted, e, g, atol, rtol)
            + _safe(_reshaped, e, g, labels, atol, rtol)
            + _safe(_observed, e, g, args, names, atol, rtol)
        )
    if e.dtype == bool and g.dtype == bool:
        return (
            _safe(_permuted, e, g, atol, rtol)
            + _safe(_masks, e, g)
            + _safe(_shifted, e, g, atol, rtol)
            + _safe(_steps, e, g, steps, atol, rtol)
            + _safe(_observed, e, g, args, names, atol, rtol)
        )
    if e.dtype == bool or g.dtype == bool or e.dtype.kind not in "biuf" or g.dtype.kind not in "biuf":
        return []
    e, g = e.astype(float), g.astype(float)
    if np.isnan(g).any() and not np.isnan(e).any():
        return []  # a NaN is explained by where it first appears, never by a mistake that makes NaNs
    if not np.any(g) and np.any(e):
        return []  # zeros everywhere relate to anything: that is no relation
    factor = _safe(_factor, e, g, labels, atol, rtol)
    return (
        _safe(_permuted, e, g, atol, rtol)
        + _safe(_reordered, e, g, atol, rtol)
        + _safe(_steps, e, g, steps, atol, rtol)
        + _safe(_softmax_relations, e, g, labels)
        + (factor or _safe(_per_slice, e, g, atol, rtol))
        + _safe(_fill, e, g)
        + _safe(_shifted, e, g, atol, rtol)
        + _safe(_difference, e, g, args, names, atol, rtol)
        + _safe(_observed, e, g, args, names, atol, rtol)
    )


def _observed(e, g, args, names, atol, rtol) -> list:
    """What :mod:`course_utils.exercises.observations` sees, after every relation above (those come first)."""
    arrays = []
    for name, arg in zip(names, args, strict=False):
        a = _numeric(arg)
        if a is not None and a.dtype.kind in "iuf" and a.ndim >= 1:
            arrays.append((name, a))
    return [Finding(key, words) for key, words in observations.observe(e, g, arrays, atol, rtol)]


_CONSTANT_FACTORS = (
    (2, "2", "twice the right one: a factor of 2 too many"),
    (0.5, "1/2", "half the right one: a factor of 2 left out"),
    (8, "8", "8 times the right one: bits where bytes are asked?"),
    (1 / 8, "1/8", "the right one divided by 8: bytes where bits are asked?"),
    (1 / 2**20, "1/2**20", "the right one divided by 2**20: MiB where bytes are asked"),
    (1 / 2**30, "1/2**30", "the right one divided by 2**30: GiB where bytes are asked"),
    (1 / 1e6, "1/1e6", "the right one divided by a million: a unit where plain numbers are asked"),
)


def _whole_numbers(e: int, g: int, labels: dict) -> list:
    """Relations of two whole numbers (a count, a size in bytes): a size's factor, a constant factor, a size's term
    added or left out (one size, or the product of two), or one off."""
    if e == g or e == 0:
        return []
    out = []
    c = g / e
    for value, label in _factors(labels):
        if math.isclose(c, value, rel_tol=1e-9):
            out.append(Finding(f"factor:{label}", f"the right one times {label}"))
    for value, label, words in _CONSTANT_FACTORS:
        if math.isclose(c, value, rel_tol=1e-9):
            out.append(Finding(f"factor:{label}", words))
    d = g - e
    if abs(d) == 1:
        out.append(Finding(f"offset:{d:+d}", f"one {'more' if d > 0 else 'less'} than the right one: off by one"))
    terms = dict(labels)
    for (a, x), (b, y) in itertools.combinations_with_replacement(list(labels.items()), 2):
        terms.setdefault(f"{a} · {b}", x * y)
    for label, size in terms.items():
        if abs(d) == size:
            words = "a term" if d < 0 else "an extra term"
            out.append(
                Finding(
                    f"term:{'-' if d < 0 else '+'}{label}",
                    f"the right one {'minus' if d < 0 else 'plus'} {label}: {words} of that size "
                    f"{'left out' if d < 0 else 'that does not belong'}",
                )
            )
    return out


def _reshaped(e, g, labels, atol, rtol) -> list:
    """A result of another shape: an axis reduced (summed or averaged), an extra axis of size 1, or an axis with
    the size of another size in scope."""
    out = []
    if g.ndim == e.ndim - 1:
        for axis in range(e.ndim):
            if np.delete(np.array(e.shape), axis).tolist() != list(g.shape):
                continue
            where = f"axis {axis - e.ndim} (of size {e.shape[axis]})"
            for how, value in (("averaged", e.mean(axis=axis)), ("summed", e.sum(axis=axis))):
                if _close(value.astype(float), g.astype(float), atol, rtol):
                    out.append(Finding(f"reduced:{how}:{axis - e.ndim}", f"the right one {how} over {where}"))
            if e.shape[axis] == 1 and _close(np.squeeze(e, axis).astype(float), g.astype(float), atol, rtol):
                out.append(Finding(f"squeezed:{axis - e.ndim}", f"the right one without its {where}: squeezed"))
        return out
    if g.ndim == e.ndim + 1:
        for axis in range(g.ndim):
            if g.shape[axis] == 1 and _close(np.squeeze(g, axis).astype(float), e.astype(float), atol, rtol):
                out.append(
                    Finding(
                        f"extra_axis:{axis - g.ndim}",
                        f"the right one with an extra axis of size 1 at {axis - g.ndim} (a `keepdims`, "
                        "`[:, None]` or `unsqueeze` left in)",
                    )
                )
        return out
    if g.ndim != e.ndim:
        return out
    differ = [axis for axis in range(e.ndim) if e.shape[axis] != g.shape[axis]]
    if len(differ) != 1:
        return out
    axis = differ[0]
    mine = [label for label, size in labels.items() if size == g.shape[axis]]
    right = [label for label, size in labels.items() if size == e.shape[axis]]
    for m in mine[:6]:
        for r in right[:6]:
            out.append(
                Finding(
                    f"axis_size:{axis - e.ndim}:{m}->{r}",
                    f"of shape {g.shape} where {e.shape} is asked: its axis {axis - e.ndim} has the size of {m} "
                    f"where that of {r} is needed",
                )
            )
    return out


def _outputs_order(exercise, expected, got, names) -> list:
    """The right outputs, handed back in another order."""
    n = len(expected)
    if n < 2:
        return []
    atol, rtol = max(exercise.atol, 1e-6), max(exercise.rtol, 1e-5)
    for perm in itertools.permutations(range(n)):
        moved = [k for k in range(n) if perm[k] != k]
        if not moved:
            continue
        # the outputs moved are right ones in another place; those not moved may differ (gradients computed
        # from the swapped outputs)
        if all(
            _same_value(expected[perm[k]], got[k], atol, rtol) and not _same_value(expected[k], got[k], atol, rtol)
            for k in moved
        ):
            said = [names[perm[k]] if names else f"result[{perm[k]}]" for k in moved]
            return [Finding(f"outputs_order:{perm}", f"the right outputs in another order: ({', '.join(said)})")]
    return []


def _outputs_missing(exercise, expected, got, names) -> list:
    """One of the right outputs alone, where a tuple of them is asked."""
    atol, rtol = max(exercise.atol, 1e-6), max(exercise.rtol, 1e-5)
    for k, item in enumerate(expected):
        if _same_value(item, got, atol, rtol):
            name = names[k] if names else f"result[{k}]"
            return [
                Finding(
                    f"only_output:{k}",
                    f"only the right {name}, where the tuple ({', '.join(names) or 'of all outputs'}) is asked",
                )
            ]
    return []


def _item_differs(e, g, atol, rtol) -> bool:
    """Whether one output of a tuple differs from the right one (numbers by tolerance, anything else by ==)."""
    if _numeric(e) is not None and _numeric(g) is not None:
        return not _same_value(e, g, atol, rtol)
    try:
        return not bool(e == g)
    except Exception:
        return True


def _same_value(e, g, atol, rtol) -> bool:
    a, b = _numeric(e), _numeric(g)
    if a is None or b is None or a.shape != b.shape:
        return False
    if a.dtype == bool or b.dtype == bool:
        return bool(np.array_equal(a, b))
    return _close(a.astype(float), b.astype(float), atol, rtol)


def _safe(relation, *args) -> list:
    """The relation's findings; none when it cannot be computed on these outputs (shapes that do not meet)."""
    try:
        with np.errstate(all="ignore"):
            return relation(*args)
    except Exception:
        return []


# ---------------------------------------------------------------------------------------------
# one relation for every failing case, or "case 2 looks like ..."
# ---------------------------------------------------------------------------------------------


def explain(exercise, triples, *, extra=None) -> Explanation:
    """The relation that explains every failing case of ``triples`` (a list of :class:`Triple`), if one does.

    ``extra(triple) -> list[Finding]`` adds findings of another kind (mutations of the reference). Generic
    keys (``factor``, ``temperature``) name only when no specific one explains every case. Returns an
    :class:`Explanation` whose ``named`` is True only then; otherwise its sentence says which case looks like
    what ("Case 2 of 4 (...) looks like ..."), or is empty.
    """
    per_case = []
    one_bit = bool(triples) and all(_one_bit(t.expected) for t in triples)  # any mutant that flips it "matches"
    for triple in triples:
        found = findings(exercise, triple.args, triple.expected, triple.got, steps=triple.steps)
        if extra is not None and not one_bit:
            with contextlib.suppress(Exception):
                found = found + list(extra(triple))
        per_case.append(found)
    if not per_case:
        return Explanation("")
    common = None
    for found in per_case:
        keys = [f.key for f in found]
        common = keys if common is None else [k for k in common if k in keys]
    if common:
        generic = ("factor", "temperature", "per_slice")
        specific = [k for k in common if k not in generic and not _weak(k)]
        weak = [k for k in common if k not in generic and k not in specific]
        key = (specific or weak or common)[0]
        finding = next(f for f in per_case[0] if f.key == key)
        where = "On every failing case" if len(triples) > 1 else "On the failing case"
        known = finding.misconception if finding.misconception in _known_ids() else None  # words only for entries
        return Explanation(f"{where} your result is {finding.words}.", key, known, True)
    for triple, found in zip(triples, per_case, strict=True):
        if found:
            return Explanation(
                f"{triple.label.capitalize()} looks like {found[0].words}; the other failing cases do not."
            )
    return Explanation("")


_WEAK = ("weight_sums:", "region:", "scrambled", "rescaled_rows_and_columns", "shift_per_slice:", "zeros:")
"""Observations that say what an output does rather than which step made it: named after every specific
relation and every mutation (a key is ``name:...`` or, for an output of a tuple, ``output:name:...``)."""


def _one_bit(x) -> bool:
    """A result that carries a few bits only: True or False, or a few small whole numbers (indices, labels).

    A mutant that gets it wrong the same way is no fingerprint: many steps varied give the same few values.
    """
    items = x if isinstance(x, (tuple, list)) else (x,)
    values = [_numeric(item) for item in items]
    if any(v is None for v in values):
        return False
    if all(v.dtype == bool and v.ndim == 0 for v in values):
        return True
    small = all(v.dtype.kind in "biu" and np.all(np.abs(v.astype(np.int64)) < 16) for v in values)
    return small and sum(v.size for v in values) <= 8


def _weak(key: str) -> bool:
    return any(key.startswith(w) or f":{w}" in key for w in _WEAK)


def _known_ids() -> frozenset:
    """The catalogue's ids: a finding's misconception outside it is no name (its words still are)."""
    return frozenset(m.id for m in catalogue.CATALOGUE)
