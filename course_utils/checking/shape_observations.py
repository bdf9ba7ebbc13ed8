"""What a wrong output's shape does, observed against the right one (a part of
:mod:`course_utils.checking.observations`, which calls these for every exercise at once):

- :func:`repeated_size_one`: the right values repeated along an axis that must keep size 1 (an ``expand`` to a
  fixed number of heads where an axis of size 1 broadcasts);
- :func:`size_from_values`: an axis whose size is the largest value of a 1-D count per item (``lengths.max()``
  where a given width is asked);
- :func:`paired_items`: one to three axes more, the right values on the diagonal of pairs of them (every batch
  item paired with every other, as ``np.dot`` does on stacked arrays).

Each takes the right output ``e`` and the student's ``g`` as NumPy arrays and returns ``(key, words)`` pairs;
``words`` complete "your result is ...".

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import itertools

import numpy as np

from course_utils.checking.relation_basics import axis_word, values_close

__all__ = ["repeated_size_one", "size_from_values", "paired_items"]


def repeated_size_one(e, g, atol=1e-6, rtol=1e-5) -> list:
    """``g`` is ``e`` repeated along axes where ``e`` has size 1 (an ``expand`` or ``repeat`` to a fixed size where
    an axis of size 1 must stay, so that it broadcasts)."""
    if e.ndim != g.ndim or e.shape == g.shape:
        return []
    grown = [a for a in range(e.ndim) if e.shape[a] != g.shape[a]]
    if any(e.shape[a] != 1 for a in grown):
        return []
    if not values_close(np.broadcast_to(e, g.shape), g, atol, rtol):
        return []
    where = " and ".join(axis_word(a, e.ndim) for a in grown)
    return [
        (
            "shape:repeated_size_one_axis",
            f"the right values repeated along {where}, which must keep size 1: an axis of size 1 broadcasts "
            "against any size, a fixed size fits one use only",
        )
    ]


def size_from_values(e, g, arrays=()) -> list:
    """``g`` has the right number of axes, but where a size differs from the right one it is the largest value
    of a 1-D integer argument, one count per item (a width taken from ``lengths.max()`` where a given width is
    asked); never of a 2-D one (token ids), whose largest value says nothing about a size."""
    if e.ndim != g.ndim or e.shape == g.shape:
        return []
    differ = [a for a in range(e.ndim) if e.shape[a] != g.shape[a]]
    for name, a in arrays:
        if a.dtype.kind not in "iu" or a.ndim != 1 or a.size == 0 or a.min() < 0:
            continue  # one count per item (lengths), not data such as token ids whose largest is a coincidence
        largest = int(a.max())
        if all(g.shape[axis] == largest for axis in differ):
            where = " and ".join(axis_word(axis, e.ndim) for axis in differ)
            return [
                (
                    "shape:size_from_largest_value",
                    f"of another shape than asked: {where} {'has' if len(differ) == 1 else 'have'} the size of the "
                    f"largest value in `{name}`, a size read off the data where the size asked for is given",
                )
            ]
    return []


def _diagonals(g, extra: int):
    """Every array made from ``g`` by taking ``extra`` diagonals over pairs of axes of the same size (the diagonal
    axis where the first of the two was)."""
    if extra == 0:
        yield g
        return
    for a, b in itertools.combinations(range(g.ndim), 2):
        if g.shape[a] != g.shape[b] or g.shape[a] < 2:
            continue
        if any(np.allclose(g, np.take(g, [0], axis=axis)) for axis in (a, b)):
            continue  # the same values along one of them: copies, not items paired
        yield from _diagonals(np.moveaxis(np.diagonal(g, axis1=a, axis2=b), -1, a), extra - 1)


def paired_items(e, g, atol=1e-6, rtol=1e-5) -> list:
    """``g`` has one to three axes more than ``e``, and ``e`` is its diagonal over pairs of axes of the same size:
    every item of one input met every item of the other along axes where only matching items belong
    (``np.dot`` on stacked arrays pairs every batch item with every other)."""
    extra = g.ndim - e.ndim
    if not 1 <= extra <= 3 or g.size <= e.size or g.ndim > 8:
        return []
    for diagonal in _diagonals(g, extra):
        if diagonal.shape == e.shape and values_close(diagonal, e, atol, rtol):
            return [
                (
                    "extra_axis:items_paired",
                    "the right values only where two of its axes hold the same index: every item of one input met "
                    "every item of the other where only matching items belong (a product that does not keep the "
                    "batch axes in step, like `np.dot` on stacked arrays)",
                )
            ]
    return []
