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
  asked), read from the reference's local variables while it runs (:func:`course_utils.checking.traces.earlier_steps`);
- and, from :mod:`course_utils.checking.mutations`, the reference with one step varied.

:func:`explain` names a relation only when the same one (same key: the same formula of sizes, the same axis)
explains *every* failing case given to it, whatever their origin (fixed or fresh cases); one that explains
some cases is said as "case 2 looks like ...", and so is a constant factor of no size in scope found on a
single failing case, where it can be a coincidence; a NaN is explained by where it first appears in the
student's code (:func:`course_utils.checking.traces.nan_origin`), never matched to a mistake.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from course_utils.checking import misconceptions as catalogue
from course_utils.checking.relation_finders import findings, is_one_bit

__all__ = [
    "Explanation",
    "Triple",
    "explain",
    "is_generic",
    "GENERIC",
]


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
    one_bit = bool(triples) and all(is_one_bit(t.expected) for t in triples)  # any mutant that flips it "matches"
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
        specific = [k for k in common if not is_generic(k) and not _weak(k)]
        weak = [k for k in common if not is_generic(k) and k not in specific]
        key = (specific or weak or common)[0]
        finding = next(f for f in per_case[0] if f.key == key)
        if key.split(":")[-1] in ("factor", "temperature") and is_generic(key) and len(triples) < 2:  # a coincidence?
            return Explanation(
                f"{triples[0].label.capitalize()} looks like {finding.words}; with one failing case that may be "
                "a coincidence."
            )
        where = "On every failing case" if len(triples) > 1 else "On the failing case"
        known = finding.misconception if finding.misconception in _known_ids() else None  # words only for entries
        return Explanation(f"{where} your result is {finding.words}.", key, known, True)
    for triple, found in zip(triples, per_case, strict=True):
        if found:
            return Explanation(
                f"{triple.label.capitalize()} looks like {found[0].words}; the other failing cases do not."
            )
    return Explanation("")


GENERIC = ("factor", "temperature", "per_slice")
"""Relations that say only "another constant" (for the whole output or for each slice): named after every other."""


def is_generic(key: str) -> bool:
    """``factor`` or ``output:factor`` (an output of a tuple), not ``factor:1/batch`` (a size in scope)."""
    return key.split(":")[-1] in GENERIC and (key in GENERIC or key.rsplit(":", 1)[0].count(":") == 0)


_WEAK = ("weight_sums:", "region:", "scrambled", "rescaled_rows_and_columns", "shift_per_slice:", "zeros:", "masks:")
"""Observations that say what an output does rather than which step made it: named after every specific
relation and every mutation (a key is ``name:...`` or, for an output of a tuple, ``output:name:...``)."""


def _weak(key: str) -> bool:
    return any(key.startswith(w) or f":{w}" in key for w in _WEAK)


def _known_ids() -> frozenset:
    """The catalogue's ids: a finding's misconception outside it is no name (its words still are)."""
    return frozenset(m.id for m in catalogue.CATALOGUE)
