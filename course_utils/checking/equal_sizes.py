"""The fresh cases again with every feature size equal: square weight matrices, as in most real models.

Fresh sizes are drawn so that no two axes agree (:func:`course_utils.checking.extra_checks.draw_sizes`): an
answer that swaps two axes cannot pass by accident. The opposite accident exists too: an answer that does
something extra only when a weight matrix is square (``W_v`` applied again after the attention, written
``out @ W_v`` "when the shapes allow") is right on every case whose weights are all rectangular. So the fresh
cases of an exercise with two or more feature sizes (parameters of ``Exercise.fresh`` named ``d_*``: ``d_model``,
``d_head``, ``d_value``, ``d_ff`` ...) run once more with all of them equal to the first one drawn; the other
sizes (lengths, batch, heads) stay as drawn.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import inspect

from course_utils.checking.model import Case
from course_utils.checking.runner import course_defaults, seeded

__all__ = ["feature_names", "equal_feature_runs", "EQUAL_WORDS"]

EQUAL_WORDS = "with every feature size equal (square weight matrices)"
"""How a failing run is described, after its sizes."""

_MADE: dict = {}  # exercise id -> [(sizes, cases, words)]


def feature_names(fresh) -> list:
    """The parameters of a fresh builder that are feature sizes (``d_*``), in order."""
    try:
        params = inspect.signature(fresh).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.name.startswith("d_")]


def equal_feature_runs(exercise, drawn: dict, seed: int) -> list:
    """``[(sizes, [args tuples], words)]``: the fresh cases with every ``d_*`` size equal; ``[]`` when there are
    fewer than two feature sizes or the builder refuses equal sizes. ``drawn`` is the fresh sizes as drawn;
    ``seed`` the fresh cases' seed. Cached per exercise."""
    fresh = getattr(exercise, "fresh", None)
    if fresh is None:
        return []
    if exercise.id not in _MADE:
        names = feature_names(fresh)
        runs = []
        if len(names) >= 2 and all(n in drawn for n in names):
            sizes = {**drawn, **{n: drawn[names[0]] for n in names}}
            try:
                with course_defaults(), seeded(seed):
                    made = fresh(**sizes)
                cases = [tuple(c.args) if isinstance(c, Case) else (c if isinstance(c, tuple) else (c,)) for c in made]
                runs.append((sizes, cases, EQUAL_WORDS))
            except Exception:  # a builder that needs distinct sizes: nothing to run
                runs = []
        _MADE[exercise.id] = runs
    return _MADE[exercise.id]
