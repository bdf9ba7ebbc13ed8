"""Every empirical claim of the lessons (and of the instructor guide), re-run over several seeds.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py                  # the table, seeds 0-4
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --json           # a JSON list, one object per claim
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --quick          # the cheap claims only (no seq2seq training)
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --only 07.leak --seeds 0 1
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --markdown       # the README's table
    .venv/bin/python benchmarks/claims.py --list                             # the claims' names, lessons and texts

This file is the runner only. The claims and the experiments they measure live in the package,
``course_utils/experiments/lesson_NN.py`` (``CLAIMS``), next to the functions the lessons themselves call, so a
claim "held on 5 of 5 seeds" certifies the lesson's own experiment (``tests/test_experiments.py`` checks it).

A *claim* is a measured fact a lesson states. A per-seed claim is measured and judged on every seed (the lesson's
own run is seed 0); a *rate* claim ("on at least 3 of the seeds") is measured on every seed and judged once over
all of them. Experiments that several claims share run once per seed: each claim's ``measure(seed, run)`` calls
them through ``run(fn, *args)``, this runner's memo, which refuses a function the claim does not declare.

``--json`` prints a list of ``{"claim", "name", "lesson", "source", "seeds", "held", "values", "over_seeds"}``:
``seeds`` the seeds run, ``held`` one boolean per seed (one boolean for the whole set when ``over_seeds``),
``values`` the measured numbers per seed. Torch runs on ``--threads`` threads (default 1) and on the CPU unless
``COURSE_DEVICE`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

from course_utils.experiments import all_claims
from course_utils.experiments._claim import Memo


def run_claims(claims: list, seeds: list[int], memo: Memo | None = None) -> list[dict]:
    """Measure every claim on every seed, seed by seed (the memo is cleared between seeds); judge each claim.

    Returns one row per claim: ``{"claim", "name", "lesson", "source", "seeds", "held", "values", "over_seeds"}``.
    """
    memo = Memo() if memo is None else memo
    values: dict[str, list] = {claim.name: [] for claim in claims}
    start = time.perf_counter()
    for seed in seeds:
        memo.clear()
        for claim in claims:
            values[claim.name].append(claim.measure(seed, memo.restricted(claim)))
            print(
                f"[{time.perf_counter() - start:6.0f} s] seed {seed}: measured {claim.name}",
                file=sys.stderr,
                flush=True,
            )
    memo.clear()
    rows = []
    for claim in claims:
        measured = values[claim.name]
        if claim.over_seeds:
            held = [bool(claim.holds_over(measured))]
        else:
            held = [bool(claim.holds(v)) for v in measured]
        rows.append(
            {
                "claim": claim.text,
                "name": claim.name,
                "lesson": claim.lesson,
                "source": claim.source,
                "seeds": list(seeds),
                "held": held,
                "values": measured,
                "over_seeds": claim.over_seeds,
            }
        )
    return rows


def select(only: list[str] | None, quick: bool, claims: list | None = None) -> list:
    """The claims to run: those named in ``only`` (a name or a prefix such as "06."), else all (or the quick ones)."""
    registered = all_claims() if claims is None else claims
    chosen = [c for c in registered if not quick or c.quick]
    if only:
        unknown = [o for o in only if not any(c.name == o or c.name.startswith(o) for c in registered)]
        if unknown:
            raise ValueError(f"no claim named {unknown[0]!r}; names: {', '.join(c.name for c in registered)}")
        chosen = [c for c in chosen if any(c.name == o or c.name.startswith(o) for o in only)]
    return chosen


def held_text(row: dict) -> str:
    """``3/5`` for a per-seed claim; ``held, rate over 5 seeds`` (or ``not held, ...``) for a rate claim."""
    if row["over_seeds"]:
        return f"{'held' if all(row['held']) else 'not held'}, rate over {len(row['seeds'])} seeds"
    return f"{sum(row['held'])}/{len(row['held'])}"


def _missed(row: dict) -> list[str]:
    if row["over_seeds"]:
        return [] if all(row["held"]) else ["the rate over all seeds"]
    return [str(s) for s, h in zip(row["seeds"], row["held"], strict=True) if not h]


def table(rows: list[dict]) -> str:
    """A readable table: name, lesson, seeds held / run (or the rate), and the claim."""
    lines = [f"{'claim':<30} {'lesson':>6} {'held':>6}  statement", "-" * 100]
    for row in rows:
        missed = _missed(row)
        mark = f"  <-- not held: {', '.join(missed)}" if missed and row["over_seeds"] else ""
        if missed and not row["over_seeds"]:
            mark = "  <-- not on every seed: " + ", ".join(missed)
        lines.append(f"{row['name']:<30} {row['lesson']:>6} {held_text(row):>6}  {row['claim']}{mark}")
    return "\n".join(lines)


def markdown(rows: list[dict]) -> str:
    """The README's table: claim, lesson, seeds held / seeds run (or the rate), and the seeds where it did not hold."""
    lines = ["| claim | lesson | held / run | not held on seeds |", "|---|---|---|---|"]
    for row in rows:
        text = row["claim"].replace("|", "\\|")
        held = held_text(row) if row["over_seeds"] else f"{sum(row['held'])} / {len(row['held'])}"
        lines.append(f"| `{row['name']}`: {text} | {row['lesson']} | {held} | {', '.join(_missed(row)) or '-'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="seeds (default 0 1 2 3 4)")
    parser.add_argument("--only", nargs="+", help="claim names or prefixes (e.g. 07.leak, or 06.)")
    parser.add_argument("--quick", action="store_true", help="only the claims that train no seq2seq model")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    parser.add_argument("--markdown", action="store_true", help="print the README's markdown table")
    parser.add_argument("--list", action="store_true", help="list the claims and exit")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    parser.add_argument(
        "--from-json", metavar="FILE", help="print the table (or --markdown) of a run saved with --json; run nothing"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        try:
            rows = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            parser.error(f"--from-json must be a file written by --json, but {args.from_json!r}: {error}")
        print(markdown(rows) if args.markdown else table(rows))
        print(
            f"\n{sum(all(r['held']) for r in rows)} of {len(rows)} claims held on every seed (rate claims: over the seeds)"
        )
        return 0
    if any(s < 0 for s in args.seeds):
        parser.error(f"--seeds must be non-negative but are {args.seeds}")
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds must not repeat a seed but are {args.seeds}")
    if args.threads < 1:
        parser.error(f"--threads must be at least 1 but is {args.threads}")
    try:
        claims = select(args.only, args.quick)
    except ValueError as error:
        parser.error(str(error))
    if args.list:
        for c in claims:
            kind = " (rate over seeds)" if c.over_seeds else ""
            print(f"{c.name:<30} {c.lesson:>5}  {c.text}{kind}  [{c.source}]")
        return 0
    os.environ.setdefault("COURSE_DEVICE", "cpu")  # the stored outputs come from the CPU
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    rows = run_claims(claims, args.seeds)
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps(rows))
        return 0
    print(markdown(rows) if args.markdown else table(rows))
    print(
        f"\n{sum(all(r['held']) for r in rows)} of {len(rows)} claims held on every seed (rate claims: over the seeds) "
        f"(seeds {' '.join(map(str, args.seeds))}; torch threads {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; {seconds:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
