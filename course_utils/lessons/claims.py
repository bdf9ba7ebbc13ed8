"""Each lesson's experiments, written once: the lesson runs them on its seed, ``benchmarks/claims.py`` over seeds.

The map::

    course_utils/lessons/
    ├── claims.py                  all_claims(), lesson_modules(), this import rule
    ├── lesson_01/experiments.py   lesson 01's experiments + CLAIMS   (each belongs to lesson NN's owner)
    ├── lesson_04/experiments.py   ...
    ├── lesson_05/ ... lesson_08/
    course_utils/checking/claim.py Claim (a statement, the experiments it reads, when it holds), Memo (the cache)
    benchmarks/claims.py           the runner and its CLI only: no experiment code

- An **experiment** is a module-level function of ``lesson_NN/experiments.py``. Seeded ones take ``seed: int = 0`` (the
  lesson's run is seed 0) and call ``env.set_seed(seed)`` themselves; the others take a model or weights.
  Keyword-only plug-ins that default to the course's functions let the lesson run the experiment with the
  student's checked functions (``step=my_train_step``); claims use the defaults. An experiment returns a small
  frozen dataclass (what the lesson shows, plus ``measured``: a dict of JSON-able numbers rounded with
  ``round(x, 4)``) or such a dict. No caching inside experiments: the runner caches (``claim.Memo``).
- Lessons import a module by the lesson's name:
  ``from course_utils.lessons.lesson_07 import experiments as lesson_07``, then ``lesson_07.train_gru(seed=0)``.

Import rule (``tests/lessons/test_experiments.py`` reads it from the source):

- ``experiments`` imports the lessons' modules (``heads``, ``role_task``, ``efficient``, ``timing``,
  ``attention``, ``reversal.*``, ``data``, ``env``, ...) and ``checking.claim``, never the rest of the checking
  engine, a lesson's ``exercises``, ``checks``, the grader or the hub;
- nothing else in ``course_utils`` imports ``experiments``;
- an ``experiments.py`` never imports another lesson's: a helper two lessons share goes into a lesson
  module of the package (``reversal.decoding.mirror_shares``).

Nothing is imported here at import time: :func:`all_claims` imports the lesson modules when called.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

__all__ = ["LESSON_MODULE", "lesson_modules", "all_claims"]

LESSON_MODULE = re.compile(r"^lesson_(\d\d)$")


def lesson_modules() -> list:
    """Every ``course_utils.lessons.lesson_NN.experiments`` module that exists, imported, in lesson order."""
    here = Path(__file__).resolve().parent  # course_utils/lessons/
    names = sorted(
        info.name
        for info in pkgutil.iter_modules([str(here)])
        if LESSON_MODULE.match(info.name) and (here / info.name / "experiments.py").is_file()
    )
    return [importlib.import_module(f"course_utils.lessons.{name}.experiments") for name in names]


def all_claims() -> list:
    """The ``CLAIMS`` of every lesson module, in lesson order; a name used twice is a ``ValueError``.

    Introduced for benchmarks/claims.py.
    """
    from course_utils.checking.claim import Claim

    claims, seen = [], {}
    for module in lesson_modules():
        lesson = LESSON_MODULE.match(module.__name__.split(".")[-2]).group(1)
        for claim in getattr(module, "CLAIMS", ()):
            if not isinstance(claim, Claim):
                raise TypeError(f"{module.__name__}.CLAIMS holds {claim!r}, not a Claim")
            if claim.lesson not in (lesson, "guide"):
                raise ValueError(
                    f"{module.__name__} registers claim {claim.name!r} of lesson {claim.lesson!r}: a lesson module "
                    f"registers its own lesson's claims (or the guide's)"
                )
            if claim.name in seen:
                raise ValueError(f"claim {claim.name!r} is registered twice ({seen[claim.name]}, {module.__name__})")
            seen[claim.name] = module.__name__
            claims.append(claim)
    return claims
