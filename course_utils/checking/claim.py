"""``Claim``: a measured fact a lesson states, the experiments that measure it, and when it holds.

Also :class:`Memo`, the cache ``run(fn, *args, **kwargs)`` that ``benchmarks/claims.py`` hands to every
``Claim.measure``: the same call on the same arguments runs once per seed, so claims that read one trained model
train it once. Experiments themselves never cache (a lesson that re-runs a cell re-runs the experiment).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LESSONS", "Claim", "Memo"]

LESSONS = ("00", "01", "02", "03", "04", "05", "06", "07", "08", "guide")
_NAME = re.compile(r"^(\d\d|guide)\.[a-z0-9_]+$")


def _callables(field: str, value, name: str) -> tuple:
    if callable(value) or not isinstance(value, (tuple, list)):
        raise TypeError(f"Claim {name!r}: {field} must be a tuple of functions but is {type(value).__name__}")
    for fn in value:
        if not callable(fn):
            raise TypeError(f"Claim {name!r}: every entry of {field} must be a function but one is {fn!r}")
    return tuple(value)


@dataclass(frozen=True)
class Claim:
    """A measured fact a lesson states, the experiments that measure it, and when it holds.

    measure(seed, run) -> dict of JSON-able values; it may call only the functions in `uses`, through
    `run(fn, *args, **kwargs)` (the runner's memo: the same call on the same seed runs once per process).
    A per-seed claim has `holds(values) -> bool`; a rate claim (a statement about how often something
    happens over seeds) has `holds_over(list_of_values) -> bool` instead and is reported as one result
    for the whole seed set.

    Introduced for benchmarks/claims.py (lessons 05-08, and 01 and 04); the lessons call the experiments in
    `uses`, never a claim.
    """

    name: str  # "07.leak": lesson prefix + short id
    lesson: str  # "00".."08" or "guide"
    text: str  # the statement, in the lesson's (or guide's) words
    source: str  # the lesson heading (or guide section) that states it
    uses: tuple  # experiment functions of course_utils.lessons.lesson_NN.experiments
    measure: Callable
    holds: Callable | None = None
    holds_over: Callable | None = None
    quick: bool = False  # no seq2seq training (claims.py --quick)
    control: bool = False  # a control the lesson itself does not run (claims only)
    deterministic: bool = False  # the measurement does not depend on the seed (a byte count, a FLOP count):
    #                              benchmarks/claims.py measures it once and reports "deterministic (1 run)"
    builds: tuple = ()  # functions that rebuild an artifact the lesson loads instead of training
    #                     (08: checkpoints.train_pretrained, which the checkpoint CLI also calls)

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"Claim name must look like '07.leak' (lesson, dot, snake_case id) but is {self.name!r}")
        if self.lesson not in LESSONS:
            raise ValueError(f"Claim {self.name!r}: lesson must be one of {LESSONS} but is {self.lesson!r}")
        prefix = self.name.split(".", 1)[0]
        if self.lesson != "guide" and prefix != self.lesson:
            raise ValueError(f"Claim {self.name!r}: its name must start with its lesson {self.lesson!r}")
        for field in ("text", "source"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field).strip():
                raise ValueError(f"Claim {self.name!r}: {field} must be a non-empty string")
        object.__setattr__(self, "uses", _callables("uses", self.uses, self.name))
        object.__setattr__(self, "builds", _callables("builds", self.builds, self.name))
        if not self.uses:
            raise ValueError(f"Claim {self.name!r}: uses must name at least one experiment function")
        if not callable(self.measure):
            raise TypeError(f"Claim {self.name!r}: measure must be a function (seed, run) -> dict")
        if (self.holds is None) == (self.holds_over is None):
            raise ValueError(
                f"Claim {self.name!r} needs exactly one of holds (a per-seed claim) and holds_over (a rate claim)"
            )
        predicate = self.holds if self.holds is not None else self.holds_over
        if not callable(predicate):
            raise TypeError(f"Claim {self.name!r}: holds / holds_over must be a function")
        for field in ("quick", "control", "deterministic"):
            if not isinstance(getattr(self, field), bool):
                raise TypeError(f"Claim {self.name!r}: {field} must be True or False")
        if self.deterministic and self.holds_over is not None:
            raise ValueError(
                f"Claim {self.name!r}: a deterministic claim is measured once, so it cannot be a rate claim"
            )

    @property
    def over_seeds(self) -> bool:
        """True for a rate claim: judged once over every seed run (``holds_over``), not seed by seed."""
        return self.holds_over is not None

    @property
    def allowed(self) -> tuple:
        """The functions ``measure`` may pass to ``run``: ``uses`` then ``builds``."""
        return self.uses + self.builds


def _key(value):
    """A hashable stand-in for an argument: containers by content, other unhashable objects by identity."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _key(v)) for k, v in value.items())))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(v) for v in value)))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


class Memo:
    """``run(fn, *args, **kwargs)``: call ``fn`` once per distinct arguments, then return the stored result.

    Keyed by ``(fn, args, sorted kwargs)``; unhashable arguments (a model, a list) count by identity or content.
    :meth:`restricted` gives a claim the same cache but refuses functions outside its ``uses`` and ``builds``.
    :meth:`clear` forgets everything (the runner clears between seeds).
    """

    def __init__(self):
        self._store: dict = {}
        self._kept: list = []  # the arguments of every stored call: their ids stay unique while stored
        self.calls = 0  # functions actually run (cache misses)

    def __call__(self, fn, *args, **kwargs):
        if not callable(fn):
            raise TypeError(f"run(fn, ...) needs a function first but got {fn!r}")
        key = (fn, _key(args), _key(kwargs))
        if key not in self._store:
            self.calls += 1
            self._store[key] = fn(*args, **kwargs)
            self._kept.append((args, kwargs))
        return self._store[key]

    def __len__(self) -> int:
        return len(self._store)

    def clear(self) -> None:
        self._store.clear()
        self._kept.clear()

    def restricted(self, claim: Claim):
        """The memo as ``claim.measure`` may use it: only the functions in ``claim.uses`` and ``claim.builds``."""
        allowed = claim.allowed

        def run(fn, *args, **kwargs):
            if not any(fn is a for a in allowed):
                names = ", ".join(getattr(a, "__qualname__", repr(a)) for a in allowed)
                raise ValueError(
                    f"claim {claim.name!r} measures with {getattr(fn, '__qualname__', fn)!r}, which is not in its "
                    f"uses or builds ({names})"
                )
            return self(fn, *args, **kwargs)

        return run
