"""``Claim``: a measured fact a lesson states, the experiments that measure it, and when it holds.

Placeholder written against ``lessons_05_08_shared.md`` §4.2 until the experiments skeleton (branch ``infra58``)
lands on main; at that merge this file is replaced by the skeleton's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Claim"]


@dataclass(frozen=True)
class Claim:
    """A measured fact a lesson states, the experiments that measure it, and when it holds.

    ``measure(seed, run)`` returns a dict of JSON-able values; it calls only the functions in ``uses``, through
    ``run(fn, *args, **kwargs)``. A per-seed claim has ``holds(values) -> bool``; a rate claim has
    ``holds_over(list_of_values) -> bool`` instead.
    """

    name: str
    lesson: str
    text: str
    source: str
    uses: tuple
    measure: Callable
    holds: Callable | None = None
    holds_over: Callable | None = None
    quick: bool = False
    control: bool = False
    builds: tuple = ()
