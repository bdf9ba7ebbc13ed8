"""What a wrong output does, observed against the right one, for mistakes that no catalogue holds.

:mod:`course_utils.checking.relations` asks first whether the student's output is the right one transposed,
scaled by a size in scope, shifted, or what a step of the computation held. The observations here come after
it, for every exercise at once, and each is named only when it holds on every failing case (the same key):

- :func:`elementwise`: a function of the right values, entry by entry (log, exp, abs, square, square root,
  rounded or truncated to whole numbers, clipped at a bound);
- :func:`along_axis`: the softmax or the log-softmax of the right values along one axis (weights where scores
  are asked, log-probabilities where logits are), values whose softmax is the right output (the scores where
  the weights are asked), or the right values plus a different constant per slice;
- :func:`rescaled_rows_and_columns`: the right values divided by one factor per row and one per column, and
  when those factors are the lengths of two arguments' vectors, a cosine similarity;
- :func:`size_one_axes`: the right values with axes of size 1 dropped or added;
- :func:`paired_items`: one axis more, the right values on the diagonal of two of its axes (every batch item
  paired with every other);
- :func:`repeated_size_one`, :func:`size_from_values`: the right values repeated along an axis that must keep
  size 1; an axis whose size is the largest value of an argument (``lengths.max()``);
- :func:`scrambled`: all of the right values, in other positions (a reshape where a transpose belongs, or the
  reverse) or in another shape;
- :func:`folded`: one axis k times narrower (its blocks summed or averaged) or wider (parts side by side where
  their sum is asked);
- :func:`region`: right everywhere except at the first or last position along one axis, or right only on the
  first slice along one axis (the first batch item, the first head);
- :func:`zeros`: right except that entries which must be exactly 0 are not, or that some are 0 which must not be;
- :func:`collapsed`: the mean (or sum) of all the right values in every entry;
- :func:`one_sided`: a mask True at more places than the right one and never fewer, or the reverse;
- :func:`weight_sums`: where the right output is weights (each slice along one axis sums to 1), that the
  student's slices do not sum to 1;
- :func:`normalised_without_exp`: weights that are, slice by slice, a straight-line function of the scores
  (divided by their sum, with no exponential);
- :func:`forbidden_weight`: weight at the keys whose right weight is exactly 0 (the keys a mask forbids).

Each function takes the right output ``e`` and the student's ``g`` as NumPy arrays and returns
``(key, words)`` pairs; ``words`` complete "your result is ...", in what the answer does, never in code.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import itertools

import numpy as np

from course_utils.checking.compare import is_array, to_numpy
from course_utils.checking.relation_basics import axis_word, values_close
from course_utils.checking.shape_observations import paired_items, repeated_size_one, size_from_values
from course_utils.checking.weight_observations import (
    forbidden_weight,
    normalised_axis,
    normalised_without_exp,
    one_sided,
    weight_sums,
)

__all__ = [
    "elementwise",
    "along_axis",
    "rescaled_rows_and_columns",
    "size_one_axes",
    "paired_items",
    "repeated_size_one",
    "size_from_values",
    "scrambled",
    "folded",
    "region",
    "one_sided",
    "weight_sums",
    "normalised_axis",
    "normalised_without_exp",
    "forbidden_weight",
    "zeros",
    "collapsed",
    "zero_gradient",
    "scalar_units",
    "observe",
]


_FUNCTIONS = (
    ("log", "the logarithm of the right values", lambda e: np.log(e) if np.all(e >= 0) and np.any(e > 0) else None),
    ("exp", "the exponential of the right values", np.exp),
    ("abs", "the absolute values of the right ones (the signs lost)", np.abs),
    ("square", "the right values squared", np.square),
    ("sqrt", "the square roots of the right values", lambda e: np.sqrt(e) if np.all(e >= 0) else None),
    ("trunc", "the right values truncated to whole numbers (an integer type, or int(...), on the way)", np.trunc),
    ("round", "the right values rounded to whole numbers", np.round),
)


def elementwise(e, g, atol=1e-6, rtol=1e-5) -> list:
    """``g`` is a function of ``e`` entry by entry: log, exp, abs, square, sqrt, truncated, rounded, clipped.

    >>> elementwise(np.array([0.5, 0.25]), np.log([0.5, 0.25]))[0][0]
    'elementwise:log'
    """
    if e.shape != g.shape or not (np.all(np.isfinite(e)) and np.all(np.isfinite(g))) or values_close(e, g, atol, rtol):
        return []
    out = []
    with np.errstate(all="ignore"):
        for name, words, fn in _FUNCTIONS:
            value = fn(e)
            if value is None:
                continue
            underflow = np.isneginf(value) & (g < -700)  # log(0): an exponent so low that exp() gives 0 exactly
            value = np.where(underflow, g, value)
            if np.all(np.isfinite(value)) and values_close(value, g, atol, rtol):
                out.append((f"elementwise:{name}", words))
    differ = ~np.isclose(e, g, atol=atol, rtol=rtol)
    if differ.any() and not differ.all() and e.size > 2:
        lo, hi = float(g.min()), float(g.max())
        beyond = (e > hi) | (e < lo)
        if values_close(np.clip(e, lo, hi), g, atol, rtol) and np.array_equal(beyond & differ, differ):
            sides = (("below", lo, np.any(e < lo)), ("above", hi, np.any(e > hi)))
            bounds = [f"{side} at {bound:g}" for side, bound, hit in sides if hit]
            out.append(("elementwise:clip", f"the right values clipped {' and '.join(bounds)}"))
    return out


def _softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=axis, keepdims=True)


def along_axis(e, g, atol=1e-6, rtol=1e-5) -> list:
    """``g`` is the softmax or log-softmax of ``e`` along an axis, or ``e`` plus one constant per slice of it."""
    if e.shape != g.shape or e.ndim < 1 or not (np.all(np.isfinite(e)) and np.all(np.isfinite(g))):
        return []
    if values_close(e, g, atol, rtol):
        return []
    out = []
    with np.errstate(all="ignore"):
        for axis in range(e.ndim):
            if e.shape[axis] < 2:
                continue
            where = axis_word(axis, e.ndim)
            if values_close(_softmax(g, axis), e, atol, rtol):
                out.append(
                    (
                        f"before_softmax:{axis - e.ndim}",
                        f"values whose softmax along {where} is the right output: the scores before the softmax",
                    )
                )
                continue
            soft = _softmax(e, axis)
            if values_close(soft, g, atol, rtol):
                out.append((f"softmax_of_right:{axis - e.ndim}", f"the softmax of the right values along {where}"))
                continue
            if values_close(np.log(soft), g, atol, rtol):
                out.append(
                    (
                        f"log_softmax_of_right:{axis - e.ndim}",
                        f"the log-softmax of the right values along {where} (log-probabilities)",
                    )
                )
                continue
            d = g - e
            first = np.take(d, [0], axis=axis)
            if values_close(d, np.broadcast_to(first, d.shape), atol, rtol) and not values_close(
                d, np.full_like(d, d.flat[0]), atol, rtol
            ):
                out.append(
                    (
                        f"shift_per_slice:{axis - e.ndim}",
                        f"the right values plus a different constant for each slice along {where}",
                    )
                )
    return out


def _lengths(x):
    return np.sqrt((x.astype(float) ** 2).sum(axis=-1))


def rescaled_rows_and_columns(e, g, arrays=(), atol=1e-6, rtol=1e-5) -> list:
    """``g[..., i, j] = e[..., i, j] * a[..., i] * b[..., j]`` with neither factor constant: rows and columns
    rescaled; a cosine similarity when ``1 / a`` and ``1 / b`` are the lengths of two arguments' vectors.

    ``arrays`` are the case's array arguments as ``(name, array)``.
    """
    if e.shape != g.shape or e.ndim < 2 or not np.all(np.isfinite(g)) or values_close(e, g, atol, rtol):
        return []
    for (a_name, a), (b_name, b) in itertools.permutations(arrays, 2):
        if a.ndim < 1 or b.ndim < 1 or a.shape[-2:-1] != e.shape[-2:-1] or b.shape[-2:-1] != e.shape[-1:]:
            continue
        with np.errstate(all="ignore"):
            cosine = e / (_lengths(a)[..., :, None] * _lengths(b)[..., None, :])
        if cosine.shape == g.shape and values_close(cosine, g, atol, rtol):
            return [
                (
                    "cosine",
                    f"the right values divided by the lengths of the vectors of `{a_name}` and of `{b_name}`: a "
                    "cosine similarity where the plain dot products are asked",
                )
            ]
    if np.any(np.abs(e) < 1e-12) or np.any(g == 0):
        return []
    ratio = g / e
    rows = ratio[..., :, :1]  # (..., q_len, 1)
    cols = ratio[..., :1, :] / ratio[..., :1, :1]  # (..., 1, k_len)
    if not values_close(rows * cols, ratio, atol, max(rtol, 1e-6)):
        return []
    if values_close(rows, np.broadcast_to(rows[..., :1, :], rows.shape), 1e-9, 1e-6) or values_close(
        cols, np.ones_like(cols), 1e-9, 1e-6
    ):
        return []  # one factor per slice of one axis only: relations says that ("per_slice")
    return [("rescaled_rows_and_columns", "the right values times one factor for each row and another for each column")]


def size_one_axes(e, g, atol=1e-6, rtol=1e-5) -> list:
    """The right values in the right order, with axes of size 1 dropped or added (a shape the docstring promises
    left out, or a ``keepdims`` / ``unsqueeze`` too many)."""
    if e.shape == g.shape or e.size != g.size or np.squeeze(e).shape != np.squeeze(g).shape:
        return []
    if not values_close(np.squeeze(e), np.squeeze(g), atol, rtol):
        return []
    how = "dropped" if g.ndim < e.ndim else "added"
    return [
        (
            f"size_one_axes:{how}",
            f"the right values with axes of size 1 {how}: shape {g.shape} where {e.shape} is asked",
        )
    ]


def scrambled(e, g, atol=1e-6, rtol=1e-5) -> list:
    """All of the right values in other positions: read in another axis order and reshaped, or another shape."""
    if e.size != g.size or e.size < 3 or values_close(e, g, atol, rtol):
        return []
    if not values_close(np.sort(e, axis=None), np.sort(g, axis=None), atol, rtol):
        return []
    if e.shape == g.shape:
        for axis in range(e.ndim):
            if values_close(np.sort(e, axis=axis), g, atol, rtol):
                return [("scrambled", f"the right values sorted along {axis_word(axis, e.ndim)}")]
    if e.ndim <= 5:
        for perm in itertools.permutations(range(e.ndim)):
            if perm == tuple(range(e.ndim)):
                continue
            if values_close(np.transpose(e, perm).reshape(g.shape), g, atol, rtol):
                return [
                    (
                        "scrambled",
                        f"the right values read in the axis order {perm} and reshaped to {g.shape}: a reshape where "
                        "axes must be moved (a transpose), so values land in the wrong places",
                    )
                ]
    if g.ndim <= 5:
        for perm in itertools.permutations(range(g.ndim)):
            if perm == tuple(range(g.ndim)):
                continue
            if np.transpose(g, perm).size == e.size and values_close(
                np.transpose(g, perm).reshape(e.shape), e, atol, rtol
            ):
                return [
                    (
                        "scrambled",
                        f"the right values reshaped (without moving axes) and then read in the axis order {perm}: "
                        "values land in the wrong places",
                    )
                ]
    if e.shape != g.shape:
        return [("scrambled", f"all of the right values, laid out as shape {g.shape} instead of {e.shape}")]
    return [("scrambled", "all of the right values, but in other positions: axes mixed by a reshape or an index")]


def _blocks_combined(x, axis, k):
    """``x`` with ``axis`` cut into ``k`` blocks in a row: (sum of the blocks, mean of the blocks)."""
    moved = np.moveaxis(x, axis, -1)
    cut = moved.reshape(*moved.shape[:-1], k, moved.shape[-1] // k)  # (..., k, size / k)
    return np.moveaxis(cut.sum(axis=-2), -1, axis), np.moveaxis(cut.mean(axis=-2), -1, axis)


def folded(e, g, atol=1e-6, rtol=1e-5) -> list:
    """One axis k times narrower or wider than asked: the blocks summed or averaged where they belong side by side
    (heads merged by a sum), or side by side where their sum is asked (two parts joined instead of added)."""
    if e.ndim != g.ndim or e.ndim < 1:
        return []
    differ = [axis for axis in range(e.ndim) if e.shape[axis] != g.shape[axis]]
    if len(differ) != 1:
        return []
    axis = differ[0]
    wide, narrow, joined = (e, g, False) if e.shape[axis] > g.shape[axis] else (g, e, True)
    if wide.shape[axis] % narrow.shape[axis]:
        return []
    k = wide.shape[axis] // narrow.shape[axis]
    where = axis_word(axis, e.ndim)
    total, mean = _blocks_combined(wide, axis, k)
    if joined and values_close(total, narrow, atol, rtol):
        return [("folded:joined", f"{k} parts side by side along {where} where their sum is asked")]
    if not joined:
        for how, value in (("summed", total), ("averaged", mean)):
            if values_close(value, narrow, atol, rtol):
                return [(f"folded:{how}", f"the right values' {k} blocks along {where} {how}, not side by side")]
    return []


def region(e, g, atol=1e-6, rtol=1e-5) -> list:
    """Right except at the first or last position along one axis, or right only on the first slice of one axis."""
    if e.shape != g.shape or e.ndim < 1:
        return []
    if e.dtype == bool or g.dtype == bool:
        differ = e != g
    else:
        with np.errstate(all="ignore"):
            differ = ~np.isclose(e.astype(float), g.astype(float), atol=atol, rtol=rtol)
    if not differ.any() or differ.all():
        return []
    out = []
    for axis in range(e.ndim):
        n = e.shape[axis]
        if n < 3:
            continue
        where = axis_word(axis, e.ndim)
        hit = np.nonzero(differ.any(axis=tuple(a for a in range(e.ndim) if a != axis)))[0]
        if list(hit) == [n - 1]:
            out.append((f"region:last:{axis - e.ndim}", f"right except at the last position along {where}"))
        elif list(hit) == [0]:
            out.append((f"region:first:{axis - e.ndim}", f"right except at the first position along {where}"))
        elif list(hit) == list(range(1, n)) and np.take(differ, range(1, n), axis=axis).all():
            out.append(
                (
                    f"region:only_first:{axis - e.ndim}",
                    f"right on the first slice along {where} only (the first batch item, head or row?), wrong on "
                    "every other",
                )
            )
    return out


def zeros(e, g, atol=1e-6, rtol=1e-5) -> list:
    """Right everywhere except that entries which must be exactly 0 are not (or entries that must not be 0 are)."""
    if e.shape != g.shape or e.size < 3 or not (np.all(np.isfinite(e)) and np.all(np.isfinite(g))):
        return []
    right_zero, mine_zero = e == 0, g == 0
    with np.errstate(all="ignore"):
        differ = ~np.isclose(e, g, atol=atol, rtol=rtol)
    if right_zero.all() or not differ.any():
        return []
    if np.array_equal(differ & right_zero, differ):
        return [
            (
                "zeros:nonzero",
                f"right except at {int(differ.sum())} of the {int(right_zero.sum())} entries where the right output "
                "is exactly 0: yours are not 0 there",
            )
        ]
    if np.array_equal(differ & mine_zero, differ):
        return [
            ("zeros:extra", f"right except at {int(differ.sum())} entries that are 0 in yours and not in the right one")
        ]
    return []


def zero_gradient(name, e, g, make=lambda key, words: (key, words)) -> list:
    """An output named as a gradient (``"query gradient"``) that is 0 everywhere where the right one is not:
    nothing flows back. ``make(key, words)`` builds each item (a pair by default). A result of zeros that is
    no gradient relates to anything: nothing is said of it."""
    if not (is_array(e) and is_array(g)):
        return []
    e, g = to_numpy(e), to_numpy(g)
    if "grad" not in str(name).lower() or e.shape != g.shape or e.dtype.kind not in "fc" or g.dtype.kind not in "fc":
        return []
    if np.any(g) or not np.any(e) or not np.all(np.isfinite(e)):
        return []
    return [
        make(
            "zeros:no_gradient",
            "0 everywhere: no gradient flows back to that input (a .detach(), torch.no_grad(), .item() or a trip "
            "through NumPy on the way cuts the graph)",
        )
    ]


def collapsed(e, g, atol=1e-6, rtol=1e-5) -> list:
    """One number in every entry, the mean or the sum of all the right values: averaged over every axis."""
    if e.shape != g.shape or e.size < 2 or not np.all(np.isfinite(g)) or np.allclose(e, e.flat[0]):
        return []
    if not values_close(g, np.full_like(g, g.flat[0]), atol, rtol):
        return []
    for how, value in (("mean", e.mean()), ("sum", e.sum())):
        if np.isclose(g.flat[0], value, atol=atol, rtol=rtol):
            return [(f"collapsed:{how}", f"the {how} of all the right values, repeated in every entry")]
    return []


def scalar_units(e, g, rtol=1e-5) -> list:
    """One number a hundred times the right one (a percentage where a fraction is asked), or the reverse."""
    if e.ndim != 0 or g.ndim != 0 or not np.isfinite(e) or not np.isfinite(g) or float(e) == 0:
        return []
    c = float(g) / float(e)
    if np.isclose(c, 100, rtol=rtol, atol=0):
        return [("units:percent", "a hundred times the right one: a percentage where a fraction is asked")]
    if np.isclose(c, 0.01, rtol=rtol, atol=0):
        return [("units:fraction", "the right one divided by 100: a fraction where a percentage is asked")]
    return []


def observe(e, g, arrays=(), atol=1e-6, rtol=1e-5) -> list:
    """Every observation on one case, most specific first, as ``(key, words)`` pairs."""
    if e.dtype == bool or g.dtype == bool:
        if e.shape == g.shape:
            return region(e, g) + one_sided(e, g)
        return size_one_axes(e, g) + repeated_size_one(e, g) + size_from_values(e, g, arrays)
    e, g = e.astype(float), g.astype(float)
    masks = [(name, a) for name, a in arrays if a.dtype == bool]
    arrays = [(name, a) for name, a in arrays if a.dtype != bool]
    out = []
    for fn in (elementwise, along_axis):
        out += fn(e, g, atol, rtol)
    out += rescaled_rows_and_columns(e, g, arrays, atol, rtol)
    out += size_one_axes(e, g, atol, rtol)
    out += paired_items(e, g, atol, rtol)
    out += repeated_size_one(e, g, atol, rtol)
    out += size_from_values(e, g, arrays)
    out += scrambled(e, g, atol, rtol)
    out += folded(e, g, atol, rtol)
    out += region(e, g, atol, rtol)
    out += zeros(e, g, atol, rtol)
    out += collapsed(e, g, atol, rtol)
    out += scalar_units(e, g, max(rtol, 1e-6))
    out += weight_sums(e, g)
    out += normalised_without_exp(e, g, arrays, atol, rtol)
    out += forbidden_weight(e, g, masks, atol)
    return out
