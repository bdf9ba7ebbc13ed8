"""Every measured claim of lessons 01 and 04-08 (and the guide's numbers that restate them), re-run over seeds.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py                  # the table, seeds 0-4
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --json           # a JSON list, one object per claim
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --quick          # the cheap claims only (no seq2seq training)
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --only 07.leak --seeds 0 1
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --only 06. --update benchmarks/results/claims.json
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --markdown       # the README's table
    .venv/bin/python benchmarks/claims.py --list                             # the claims' names, lessons and texts

This file is the runner only. The claims and the experiments they measure live in the package,
``course_utils/lessons/lesson_NN/experiments.py`` (``CLAIMS``), next to the functions the lessons themselves call, so a
claim "held on 5 of 5 seeds" certifies the experiment the lesson calls (``tests/lessons/test_experiments.py`` checks it).
It is not always the lesson's own stored run: seed 0 is that run for lessons 01-06 and 08, but lesson 07 trains its
attention model with the student's (or the instructor edition's) own module, which rounds differently from the
course's and ends as a model of the same quality, not the same model.

A *claim* is a measured fact a lesson states. A per-seed claim is measured and judged on every seed; a *rate* claim
("on at least 3 of the seeds") is measured on every seed and judged once over all of them; a *deterministic* claim
(a byte count that no seed changes) is measured once, on the first seed, and reported as "deterministic (1 run)".
Experiments that several claims share run once per seed: each claim's ``measure(seed, run)`` calls them through
``run(fn, *args)``, this runner's memo, which refuses a function the claim does not declare.

``--json`` prints a list of ``{"claim", "name", "lesson", "source", "seeds", "held", "values", "over_seeds",
"deterministic"}``: ``seeds`` the seeds run, ``held`` one boolean per seed (one boolean for the whole set when
``over_seeds``), ``values`` the measured numbers per seed. ``--update FILE`` runs the chosen claims and replaces
their rows in a file saved with ``--json`` (the other rows are kept as they were). Torch runs on ``--threads``
threads (default 1) and on the CPU unless ``COURSE_DEVICE`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

from course_utils.checking.claim import Memo
from course_utils.lessons.claims import all_claims


def run_claims(claims: list, seeds: list[int], memo: Memo | None = None) -> list[dict]:
    """Measure every claim on every seed, seed by seed (the memo is cleared between seeds); judge each claim.

    Returns one row per claim: ``{"claim", "name", "lesson", "source", "seeds", "held", "values", "over_seeds",
    "deterministic"}``; a deterministic claim is measured on the first seed only.
    """
    memo = Memo() if memo is None else memo
    values: dict[str, list] = {claim.name: [] for claim in claims}
    start = time.perf_counter()
    for index, seed in enumerate(seeds):
        memo.clear()
        for claim in claims:
            if claim.deterministic and index > 0:
                continue  # measured once: another seed would give the same bytes
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
                "seeds": list(seeds[:1]) if claim.deterministic else list(seeds),
                "held": held,
                "values": measured,
                "over_seeds": claim.over_seeds,
                "deterministic": claim.deterministic,
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
    """``3/5`` for a per-seed claim; ``held, rate over 5 seeds`` (or ``not held, ...``) for a rate claim;
    ``deterministic (1 run)`` (or ``not held, deterministic (1 run)``) for a claim no seed changes."""
    if row.get("deterministic"):
        return f"{'' if all(row['held']) else 'not held, '}deterministic (1 run)"
    if row["over_seeds"]:
        return f"{'held' if all(row['held']) else 'not held'}, rate over {len(row['seeds'])} seeds"
    return f"{sum(row['held'])}/{len(row['held'])}"


def _missed(row: dict) -> list[str]:
    if row.get("deterministic"):
        return [] if all(row["held"]) else ["the one run"]
    if row["over_seeds"]:
        return [] if all(row["held"]) else ["the rate over all seeds"]
    return [str(s) for s, h in zip(row["seeds"], row["held"], strict=True) if not h]


def table(rows: list[dict]) -> str:
    """A readable table: name, lesson, seeds held / run (or the rate), and the claim."""
    lines = [f"{'claim':<30} {'lesson':>6} {'held':>6}  statement", "-" * 100]
    for row in rows:
        missed = _missed(row)
        whole = row["over_seeds"] or row.get("deterministic")
        mark = f"  <-- not held: {', '.join(missed)}" if missed and whole else ""
        if missed and not whole:
            mark = "  <-- not on every seed: " + ", ".join(missed)
        lines.append(f"{row['name']:<30} {row['lesson']:>6} {held_text(row):>6}  {row['claim']}{mark}")
    return "\n".join(lines)


def markdown(rows: list[dict]) -> str:
    """The README's table: claim, lesson, seeds held / seeds run (or the rate), and the seeds where it did not hold."""
    lines = ["| claim | lesson | held / run | not held on seeds |", "|---|---|---|---|"]
    for row in rows:
        text = row["claim"].replace("|", "\\|")
        plain = not row["over_seeds"] and not row.get("deterministic")
        held = f"{sum(row['held'])} / {len(row['held'])}" if plain else held_text(row)
        lines.append(f"| `{row['name']}`: {text} | {row['lesson']} | {held} | {', '.join(_missed(row)) or '-'} |")
    return "\n".join(lines)


def merge(saved: list[dict], rows: list[dict]) -> list[dict]:
    """``saved`` with each row of ``rows`` in place of the saved row of the same name (new names at the end)."""
    fresh = {row["name"]: row for row in rows}
    merged = [fresh.pop(row["name"], row) for row in saved]
    return merged + list(fresh.values())


def _read_rows(parser, path: str, option: str) -> list[dict]:
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        parser.error(f"{option} must be a file written by --json, but {path!r}: {error}")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "name" in r for r in rows):
        parser.error(f"{option} must be a file written by --json (a list of rows with names), but {path!r} is not")
    return rows


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
        "--update",
        metavar="FILE",
        help="run the chosen claims and replace their rows in FILE (a run saved with --json); keep the other rows",
    )
    parser.add_argument(
        "--from-json", metavar="FILE", help="print the table (or --markdown) of a run saved with --json; run nothing"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        rows = _read_rows(parser, args.from_json, "--from-json")
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
    saved = _read_rows(parser, args.update, "--update") if args.update else None
    os.environ.setdefault("COURSE_DEVICE", "cpu")  # the stored outputs come from the CPU
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    rows = run_claims(claims, args.seeds)
    seconds = time.perf_counter() - start
    if args.update:
        Path(args.update).write_text(json.dumps(merge(saved, rows)) + "\n", encoding="utf-8")
        print(f"replaced {len(rows)} rows in {args.update}", file=sys.stderr)
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
