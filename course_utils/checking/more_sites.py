"""The site kinds :mod:`course_utils.checking.mutations` adds to its own, in one list (one hook there).

- :mod:`course_utils.checking.state_sites`: running state and loops over tiles;
- :mod:`course_utils.checking.count_sites`: counts and costs;
- :mod:`course_utils.checking.value_sites`: which values go where (indices, axes, positions, arguments);
- :mod:`course_utils.checking.repeated_sites`: one mistake made at every place at once.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

from course_utils.checking.count_sites import count_sites
from course_utils.checking.repeated_sites import repeated_sites
from course_utils.checking.state_sites import state_sites
from course_utils.checking.value_sites import value_sites

__all__ = ["more_sites"]


def more_sites(tree) -> list:
    """``[(key, words, misconception, path, replacement)]`` of every added kind, in the order above."""
    return state_sites(tree) + count_sites(tree) + value_sites(tree) + repeated_sites(tree)
