"""The lessons' experiments, each written once: the lesson runs it, ``benchmarks/claims.py`` re-runs it over seeds.

Placeholder written against ``lessons_05_08_shared.md`` §4 until the experiments skeleton (branch ``infra58``)
lands on main; at that merge this file is replaced by the skeleton's own. Import rule: modules here import the
course's modules; nothing in ``course_utils`` imports ``experiments``.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["all_claims"]


def all_claims() -> list:
    """Every lesson module's ``CLAIMS``, in lesson order."""
    claims = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("lesson_"):
            claims.extend(importlib.import_module(f"{__name__}.{info.name}").CLAIMS)
    return claims
