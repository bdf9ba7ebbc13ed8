"""Lesson 05's head-role claims, re-measured over several training seeds.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/head_roles.py            # 8 seeds, about 45 s
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/head_roles.py --json     # one JSON object
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/head_roles.py --seeds 3  # fewer seeds

For each training seed, :func:`course_utils.role_task.train_role_model` trains the one-layer, 4-head
toy of ``notebooks/05_inside_the_heads.ipynb`` (300 steps), and the lesson's measurements are
repeated on 512 new sequences (the lesson's test set). Two claims are tested on every seed:

- ``roles``: every question is answered with accuracy > 0.95, the strongest head per role is a
  different head for each of the three roles, each with role score > 0.75, and the three role heads
  are nearly orthogonal (pairwise similarity < 0.3) and focused (entropy < 0.25 ln 12). The lesson
  asserts this.
- ``ablation``: switching off the heads that score > 0.5 on a role drops that answer's accuracy below
  0.5 and keeps the other two above 0.9. The lesson asserts this.
- ``cheap_head``: at least one head can be switched off alone (:func:`course_utils.heads.ablate_heads`)
  at a cost below 0.05 accuracy on every question. The lesson states it as a rate over training seeds.
- ``spare_copies``: the fourth, spare head is a near-copy of a role head (largest similarity to
  another head > 0.9). The lesson states that it does on some training seeds and not on others.

``--json`` also lists each claim as ``{"claim", "lesson", "seeds", "held"}`` (the format of issue 13's
claims table). The output gives, per seed, the largest similarity of the spare head to any other head and the
spare head's entropy (maximum ``ln 12``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course_utils.lessons.lesson_05 import experiments as lesson_05  # noqa: E402


def measure_seed(seed: int) -> dict:
    """Train the lesson's toy with one seed and return its role measurements: the lesson's own experiments
    (``lessons.lesson_05.experiments.train_roles``, ``head_roles`` and ``ablation``) with the course's functions."""
    run = lesson_05.train_roles(seed)
    roles = lesson_05.head_roles(run)
    switched = lesson_05.ablation(run, roles)
    row = {"seed": seed} | run.measured | roles["measured"] | switched["measured"]
    row["spare_heads"] = roles["spare"]
    row["spare_copies"] = bool(row["spare_max_similarity"] > 0.9)
    return row


CLAIMS = (
    ("roles_held", "a previous-token, a first-token and a matching head, distinct, focused and orthogonal"),
    ("ablation_held", "switching off a role's heads removes that answer and keeps the others"),
    ("cheap_head", "some head can be switched off alone at a cost below 0.05"),
    ("spare_copies", "the spare head is a near-copy of a role head (similarity > 0.9)"),
)


def claims(rows: list[dict]) -> list[dict]:
    """Each claim of lesson 05 as ``{"claim", "lesson", "seeds", "held"}``: held = seeds on which it held."""
    key = {"cheap_head": lambda r: bool(r["cheap_heads"])}
    return [
        {
            "claim": text,
            "lesson": "05",
            "seeds": len(rows),
            "held": sum(bool(key.get(name, lambda r, n=name: r[n])(r)) for r in rows),
        }
        for name, text in CLAIMS
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8, help="number of training seeds, 0 .. N-1 (default 8)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1 but is {args.seeds}")
    start = time.perf_counter()
    rows = [measure_seed(seed) for seed in range(args.seeds)]
    summary = {
        "seeds": args.seeds,
        "roles_held": sum(r["roles_held"] for r in rows),
        "spare_copies": sum(r["spare_copies"] for r in rows),
        "cheap_head": sum(bool(r["cheap_heads"]) for r in rows),
        "ablation_held": sum(r["ablation_held"] for r in rows),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "seconds": round(time.perf_counter() - start, 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "claims": claims(rows), "per_seed": rows}))
        return 0
    print(f"{'seed':>4} {'min acc':>8} {'roles':>6} {'spare':>6} {'spare max sim':>14} {'spare entropy':>14} cheap")
    for r in rows:
        print(
            f"{r['seed']:>4} {r['min_accuracy']:>8.3f} {r['roles_held']!s:>6} {r['spare_copies']!s:>6} "
            f"{r['spare_max_similarity']:>14.2f} {r['spare_entropy'] if r['spare_entropy'] is not None else '-':>14} {r['cheap_heads']}"
        )
    print(
        f"three distinct role heads: {summary['roles_held']} of {args.seeds} seeds; "
        f"ablation removes exactly its role: {summary['ablation_held']} of {args.seeds}; "
        f"spare head a near-copy (similarity > 0.9): {summary['spare_copies']} of {args.seeds}; "
        f"a head cheap to switch off: {summary['cheap_head']} of {args.seeds} "
        f"(OMP_NUM_THREADS={summary['omp_num_threads']}, {summary['seconds']} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
