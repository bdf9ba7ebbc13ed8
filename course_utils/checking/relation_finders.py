"""What a wrong output *is*, relative to the right one: :func:`findings` lists every relation that holds on one
failing case (axes moved, a factor that is a size of the case, another axis normalised, a mask inverted, a fill,
a shift, a term missing, an earlier step, a whole-number relation, a reshape, outputs swapped or missing).

Moved out of :mod:`course_utils.checking.relations` whole (issue 26 section 5); :func:`relations.explain
<course_utils.checking.relations.explain>` decides which of them names the mistake.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from course_utils.checking import observations
from course_utils.checking.relation_basics import (
    Finding,
    all_close,
    as_numeric,
    item_differs,
    parameter_names,
    safe_findings,
    same_value,
    size_factors,
    size_labels,
)
from course_utils.checking.relation_dropout import dropout_findings
from course_utils.checking.relation_lookup import (
    batch_pairs_findings,
    cropped_findings,
    positions_findings,
    repeated_findings,
)

__all__ = [
    "findings",
]


def _permuted(e, g, atol, rtol) -> list:
    if e.ndim < 2 or e.ndim > 5 or sorted(e.shape) != sorted(g.shape):
        return []
    out = []
    for perm in itertools.permutations(range(e.ndim)):
        if perm == tuple(range(e.ndim)):
            continue
        moved = np.transpose(e, perm)
        if moved.shape == g.shape and all_close(moved.astype(float), g.astype(float), atol, rtol):
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
            match = [j for j in range(n) if j not in order and all_close(right[j], mine, atol, rtol)]
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
    if (
        abs(c) < 1e-6
        or not math.isfinite(c)
        or math.isclose(c, 1.0, rel_tol=1e-4)
        or not all_close(c * e, g, atol, rtol)
    ):
        return []
    out = [
        Finding(f"factor:{label}", f"the right one times {label}")
        for value, label in size_factors(labels)
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
        if all_close(ratio, np.broadcast_to(first, ratio.shape), 1e-9, max(rtol, 1e-5)) and not np.allclose(ratio, 1):
            what = "row" if axis == e.ndim - 1 and e.ndim >= 2 else f"slice along axis {axis - e.ndim}"
            words = (
                f"the right values with each {what} multiplied by a constant of its own (the same across the "
                f"{what}, different between them): a normalisation left out or done differently"
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
    for value, label in size_factors(labels):
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
            if all_close(src.astype(float), dst.astype(float), atol, rtol) and not all_close(
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
        a = as_numeric(arg)
        if a is None or a.dtype == bool or a.size < 2:
            continue
        try:
            a = np.broadcast_to(a, d.shape).astype(float)
        except ValueError:
            continue
        if all_close(d, a, atol, rtol):
            out.append(
                Finding(f"term:+{name}", f"the right one plus `{name}`: a term added twice or that does not belong")
            )
        elif all_close(d, -a, atol, rtol):
            out.append(Finding(f"term:-{name}", f"the right one without `{name}`: a term (a residual?) left out"))
    if out or np.allclose(d, 0, atol=atol):
        return out
    if d.size > 1 and all_close(d, np.full_like(d, d.flat[0]), atol, rtol):
        out.append(Finding("offset", "the right one plus one constant"))
    elif (
        d.ndim >= 2
        and d.size > d.shape[-1]
        and all_close(d, np.broadcast_to(d.reshape(-1, d.shape[-1])[:1], d.shape), atol, rtol)
    ):
        out.append(Finding("bias", "off by the same vector in every row: a bias added or left out"))
    return out


def _steps(e, g, steps, atol, rtol) -> list:
    out = []
    for name, value in steps:
        v = as_numeric(value)
        if v is None or v.shape != g.shape or all_close(v.astype(float), e.astype(float), atol, rtol):
            continue
        if v.dtype == bool or g.dtype == bool:
            if np.array_equal(v, g):
                out.append(Finding(f"step:{name}", f"what the computation holds at an earlier step (its `{name}`)"))
        elif all_close(v.astype(float), g.astype(float), atol, rtol):
            out.append(Finding(f"step:{name}", f"what the computation holds at an earlier step (its `{name}`)"))
    return out


def findings(exercise, args, expected, got, *, steps=()) -> list[Finding]:
    """Every relation that holds between ``got`` and the right ``expected`` on one case (empty when none).

    A tuple result is looked at output by output (named as the exercise names them).
    """
    if isinstance(expected, tuple):
        names = exercise.output_names if len(exercise.output_names) == len(expected) else ()
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return safe_findings(_outputs_missing, exercise, expected, got, names)
        out = safe_findings(_outputs_order, exercise, expected, got, names)
        if out:  # the right outputs, moved: that explains every item
            return out
        atol, rtol = max(exercise.atol, 1e-6), max(exercise.rtol, 1e-5)
        unexplained = False
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            name = names[i] if names else f"result[{i}]"
            if not item_differs(e, g, atol, rtol):
                continue  # a right output relates to nothing: its axes of size 1 "permuted" are no mistake
            found = findings(exercise, args, e, g, steps=steps) or observations.zero_gradient(name, e, g, Finding)
            unexplained = unexplained or (not found and item_differs(e, g, atol, rtol))
            single = getattr(as_numeric(e), "size", 0) < 2  # one number: a relation on it may be a coincidence
            out += [Finding(f"{name}:{f.key}", f"(your {name}) {f.words}", f.misconception, single) for f in found]
        if unexplained:  # another output wrong in a way nothing explains: one number's relation is no fingerprint
            out = [f for f in out if not f.single]
        return [Finding(f.key, f.words, f.misconception) for f in out]
    names = parameter_names(exercise.reference, len(args))
    if isinstance(expected, list) and not all(isinstance(v, (int, float, np.number)) for v in expected):
        return safe_findings(positions_findings, expected, got, args, names)  # labels: indices where they belong?
    e, g = as_numeric(expected), as_numeric(got)
    if e is None or g is None:
        return []
    atol, rtol = max(exercise.atol, 1e-6), max(exercise.rtol, 1e-5)
    labels = size_labels(args, names)
    if e.ndim == 0 and g.ndim == 0 and not (e.dtype.kind in "fc" or g.dtype.kind in "fc"):
        if e.dtype.kind not in "iu" or g.dtype.kind not in "iu":
            return []
        return safe_findings(_whole_numbers, int(e), int(g), labels)  # counts: a factor, a term or one off
    if e.shape != g.shape and e.dtype.kind in "biuf" and g.dtype.kind in "biuf":
        return (
            safe_findings(_permuted, e, g, atol, rtol)
            + safe_findings(batch_pairs_findings, e, g, atol, rtol)
            + safe_findings(cropped_findings, e, g, atol, rtol)
            + safe_findings(repeated_findings, e, g, atol, rtol)
            + safe_findings(_reshaped, e, g, labels, atol, rtol)
            + safe_findings(_observed, e, g, args, names, atol, rtol)
        )
    if e.dtype == bool and g.dtype == bool:
        return (
            safe_findings(_permuted, e, g, atol, rtol)
            + safe_findings(_masks, e, g)
            + safe_findings(_shifted, e, g, atol, rtol)
            + safe_findings(_steps, e, g, steps, atol, rtol)
            + safe_findings(_observed, e, g, args, names, atol, rtol)
        )
    if e.dtype == bool or g.dtype == bool or e.dtype.kind not in "biuf" or g.dtype.kind not in "biuf":
        return []
    e, g = e.astype(float), g.astype(float)
    if np.isnan(g).any() and not np.isnan(e).any():
        return []  # a NaN is explained by where it first appears, never by a mistake that makes NaNs
    if not np.any(g) and np.any(e):
        return []  # zeros everywhere relate to anything: that is no relation
    factor = safe_findings(_factor, e, g, labels, atol, rtol)
    return (
        safe_findings(_permuted, e, g, atol, rtol)
        + safe_findings(_reordered, e, g, atol, rtol)
        + safe_findings(_steps, e, g, steps, atol, rtol)
        + safe_findings(_softmax_relations, e, g, labels)
        + (factor or safe_findings(_per_slice, e, g, atol, rtol))
        + safe_findings(_fill, e, g)
        + safe_findings(_shifted, e, g, atol, rtol)
        + safe_findings(_difference, e, g, args, names, atol, rtol)
        + safe_findings(dropout_findings, e, g, atol, rtol)
        + safe_findings(_observed, e, g, args, names, atol, rtol)
    )


def _observed(e, g, args, names, atol, rtol) -> list:
    """What :mod:`course_utils.checking.observations` sees, after every relation above (those come first)."""
    arrays = []
    for name, arg in zip(names, args, strict=False):
        a = as_numeric(arg)
        if a is not None and a.dtype.kind in "biuf" and a.ndim >= 1:
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
    for value, label in size_factors(labels):
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
                if all_close(value.astype(float), g.astype(float), atol, rtol):
                    out.append(Finding(f"reduced:{how}:{axis - e.ndim}", f"the right one {how} over {where}"))
            if e.shape[axis] == 1 and all_close(np.squeeze(e, axis).astype(float), g.astype(float), atol, rtol):
                out.append(Finding(f"squeezed:{axis - e.ndim}", f"the right one without its {where}: squeezed"))
        return out
    if g.ndim == e.ndim + 1:
        for axis in range(g.ndim):
            if g.shape[axis] == 1 and all_close(np.squeeze(g, axis).astype(float), e.astype(float), atol, rtol):
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
            same_value(expected[perm[k]], got[k], atol, rtol) and not same_value(expected[k], got[k], atol, rtol)
            for k in moved
        ):
            said = [names[perm[k]] if names else f"result[{perm[k]}]" for k in moved]
            return [Finding(f"outputs_order:{perm}", f"the right outputs in another order: ({', '.join(said)})")]
    return []


def _outputs_missing(exercise, expected, got, names) -> list:
    """One of the right outputs alone, where a tuple of them is asked."""
    atol, rtol = max(exercise.atol, 1e-6), max(exercise.rtol, 1e-5)
    for k, item in enumerate(expected):
        if same_value(item, got, atol, rtol):
            name = names[k] if names else f"result[{k}]"
            return [
                Finding(
                    f"only_output:{k}",
                    f"only the right {name}, where the tuple ({', '.join(names) or 'of all outputs'}) is asked",
                )
            ]
    return []


def is_one_bit(x) -> bool:
    """A result that carries a few bits only: True or False, or a few small whole numbers (indices, labels).

    A mutant that gets it wrong the same way is no fingerprint: many steps varied give the same few values.
    """
    items = x if isinstance(x, (tuple, list)) else (x,)
    values = [as_numeric(item) for item in items]
    if any(v is None for v in values):
        return False
    if all(v.dtype == bool and v.ndim == 0 for v in values):
        return True
    small = all(v.dtype.kind in "biu" and np.all(np.abs(v.astype(np.int64)) < 16) for v in values)
    return small and sum(v.size for v in values) <= 8
