"""What wrong weights and masks do, observed against the right ones (a part of
:mod:`course_utils.checking.observations`, which calls these for every exercise at once):

- :func:`normalised_axis`: the axis along which the right output holds weights (each slice sums to 1);
- :func:`weight_sums`: weights whose slices along that axis do not sum to 1 (or sum to 1 along another axis);
- :func:`normalised_without_exp`: weights that are, slice by slice, a straight-line function of the scores;
- :func:`forbidden_weight`: weight at keys that a boolean argument (the mask) forbids;
- :func:`one_sided`: a mask True at more places than the right one and never fewer, or the reverse.

Each takes the right output ``e`` and the student's ``g`` as NumPy arrays and returns ``(key, words)`` pairs;
``words`` complete "your result is ...".

Introduced in notebooks/01_attention_numpy.ipynb (weights) and notebooks/02_masking.ipynb (masks).
"""

from __future__ import annotations

import numpy as np

from course_utils.checking.relation_basics import axis_word, values_close

__all__ = ["normalised_axis", "weight_sums", "normalised_without_exp", "forbidden_weight", "one_sided"]


def normalised_axis(e) -> int | None:
    """The axis along which ``e`` holds weights (non-negative, each slice summing to 1, or to 0 where a slice
    is empty), the last one first; None when ``e`` holds no weights."""
    if e.ndim < 1 or not np.all(np.isfinite(e)) or not np.all(e >= 0):
        return None
    for empty_slices in (False, True):  # an axis whose every slice sums to 1 first
        for axis in reversed(range(e.ndim)):
            if e.shape[axis] < 2:
                continue
            sums = e.sum(axis=axis)
            ones = np.isclose(sums, 1.0, atol=1e-6)
            if ones.all() or (empty_slices and ones.any() and np.all(ones | (sums == 0))):
                return axis
    return None


def one_sided(e, g) -> list:
    """Two boolean arrays of one shape (masks) that differ on one side only: ``g`` True wherever ``e`` is and more
    (a mask that lets a query read keys the right one hides), or the reverse (it hides keys the right one allows)."""
    if e.shape != g.shape or e.ndim < 1 or e.size < 2 or e.dtype != bool or g.dtype != bool:
        return []
    extra, missing = bool(np.any(g & ~e)), bool(np.any(e & ~g))
    if extra and not missing:
        return [
            (
                "masks:too_permissive",
                "True wherever the right one is, and at more places: a mask that lets a query read keys the right "
                "one hides (a padding or future key, a window too wide?), never the reverse",
            )
        ]
    if missing and not extra:
        return [
            (
                "masks:too_strict",
                "False wherever the right one is, and at more places: a mask that hides keys the right one lets a "
                "query read (a token itself, the last key of a window?), never the reverse",
            )
        ]
    return []


def weight_sums(e, g) -> list:
    """Where ``e`` is weights along one axis (each slice sums to 1), what ``g``'s slices along it do.

    The key is the same whatever the sums are (one case may scale them all by one number, another by one
    number per slice): the observation is that they are not 1.
    """
    if e.shape != g.shape or not np.all(np.isfinite(g)):
        return []
    axis = normalised_axis(e)
    if axis is None:
        return []
    where = "the keys" if axis == e.ndim - 1 else axis_word(axis, e.ndim)
    if np.any(g < -1e-9):
        return [("weight_sums:negative", "weights with negative entries, where every weight is at least 0")]
    sums, right = g.sum(axis=axis), e.sum(axis=axis)
    if np.allclose(sums, right, atol=1e-5):
        return []
    not_one = (
        "weight_sums:not_normalised",
        f"weights whose sums along {where} are not 1: each slice of weights must sum to 1 (or be all 0 "
        "where every key is masked)",
    )
    for other in reversed(range(g.ndim)):
        if other != axis and g.shape[other] >= 2 and np.allclose(g.sum(axis=other), 1.0, atol=1e-5):
            other_axis = (
                "weight_sums:other_axis",
                f"weights that sum to 1 along {axis_word(other, g.ndim)} instead of along {where}: "
                "normalised over the wrong axis",
            )
            return [other_axis, not_one]  # the second holds too: it names a mix of cases, with its own words
    return [not_one]


def _affine_in(x, y, atol, rtol) -> bool:
    """Every row of ``y`` (rows, n) is ``a * x + b`` of the same row of ``x``, with ``a`` one number per row."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    var = (xc**2).sum(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        slope = np.where(var > 0, (xc * yc).sum(axis=-1, keepdims=True) / var, 0.0)
    return values_close(slope * xc, yc, atol, rtol)


def normalised_without_exp(e, g, arrays=(), atol=1e-6, rtol=1e-5) -> list:
    """Where ``e`` is weights along one axis (of 3 or more keys), ``g`` is, slice by slice, a straight-line
    function of an argument of the same shape (the scores divided by their sum, shifted first or not): the
    scores normalised without the exponential."""
    if e.shape != g.shape or not np.all(np.isfinite(g)):
        return []
    axis = normalised_axis(e)
    if axis is None or e.shape[axis] < 3:
        return []
    rows = lambda a: np.moveaxis(a, axis, -1).reshape(-1, e.shape[axis]).astype(float)  # noqa: E731
    for name, a in arrays:
        if a.shape != e.shape or not np.all(np.isfinite(a)):
            continue
        x = rows(a)
        if _affine_in(x, rows(e), atol, rtol) or not _affine_in(x, rows(g), atol, rtol):
            continue  # the right weights are a straight line of it too (constant slices): nothing to tell apart
        where = "the keys" if axis == e.ndim - 1 else axis_word(axis, e.ndim)
        return [
            (
                "normalised_without_exp",
                f"in each slice along {where}, a straight-line function of `{name}` (its values shifted or scaled, "
                "then divided by their sum): normalised with no exponential first, so the weights do not grow "
                "exponentially with the scores",
            )
        ]
    return []


def forbidden_weight(e, g, arrays=(), atol=1e-6) -> list:
    """Where ``e`` is weights and a boolean argument (a mask, True where a key may be read) broadcasts to its
    shape, ``g`` puts weight on keys that mask forbids (where the right weights are exactly 0)."""
    if e.shape != g.shape or e.size < 3 or not np.all(np.isfinite(g)):
        return []
    if normalised_axis(e) is None:
        return []
    leaked = (e == 0) & (np.abs(g) > atol)
    if not leaked.any():
        return []
    for name, mask in arrays:
        if mask.dtype != bool:
            continue
        try:
            allowed = np.broadcast_to(mask, e.shape)
        except ValueError:
            continue
        if allowed.all() or np.any(~allowed & (e != 0)):
            continue  # not the mask of these weights
        if np.array_equal(leaked & ~allowed, leaked):
            return [
                (
                    "zeros:weight_on_masked_keys",
                    f"weights that are not 0 at keys that `{name}` forbids: a forbidden key still gets weight, "
                    "where its exponential must be exactly 0 (a fill other than minus infinity, the mask "
                    "multiplied or added as a number, or something added after the exponential leaves it one)",
                )
            ]
    return []
