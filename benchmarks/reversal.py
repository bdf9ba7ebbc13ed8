"""Sequence reversal: GRU without attention vs GRU with additive attention vs Transformer.

Each model trains from the same seed on fresh random batches (lengths 4-16) for at most the same
wall-clock budget (and its recipe's steps), stopping early where its recipe says so. Then it decodes the
held-out test sets free-running (greedy, its own predictions fed back) and we report token and
exact-sequence accuracy per length bucket, 17-20 being longer than any training sequence.

Usage (see benchmarks/README.md)::

    OMP_NUM_THREADS=1 python benchmarks/reversal.py            # the table
    OMP_NUM_THREADS=1 python benchmarks/reversal.py --json     # the same results as JSON
    OMP_NUM_THREADS=1 python benchmarks/reversal.py --train-max-len 12   # length generalization
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

from course_utils import data, env
from course_utils.reversal import checkpoints, training

MODELS = ("gru", "gru_attention", "transformer")


def run(
    kind: str,
    budget_s: float,
    train_max_len: int,
    seed: int,
    model_config: dict | None = None,
    recipe_overrides: dict | None = None,
) -> dict:
    """Train one model within ``budget_s`` seconds and evaluate it; return one JSON-ready row.

    ``recipe_overrides`` change the model's public recipe (``training.recipe(kind)``), e.g. the longer run that
    randomized positions need (``checkpoints.PRETRAINED["transformer_short_rpe"]``).
    """
    overrides = {**(recipe_overrides or {}), "time_budget_s": budget_s, "max_len": train_max_len, "seed": seed}
    cfg = training.recipe(kind, **overrides)
    env.set_seed(seed)
    model = checkpoints.build_model(kind, **(model_config or {}))
    result = training.train(model, cfg, progress=False)
    first_99 = next((seconds for _, seconds, exact in result.history if exact >= 0.99), None)
    # one free-running pass over every held-out length (test: 4-16, test_long: 17-20), then buckets of it
    held_out = training.evaluate(model, data.load_split("test") + data.load_split("test_long"))
    token, exact, _ = held_out.bucket(4, 16)  # the test split alone
    _, exact_in, _ = held_out.bucket(cfg.min_len, min(cfg.max_len, 16))  # test lengths inside the training range
    buckets = {}
    for lo, hi in data.LENGTH_BUCKETS:
        b_token, b_exact, count = held_out.bucket(lo, hi)
        buckets[f"{lo}-{hi}"] = {
            "token_accuracy": round(b_token, 4),
            "exact_accuracy": round(b_exact, 4),
            "count": count,
        }
    return {
        "model": kind + ("_rpe" if (model_config or {}).get("random_positions") else ""),
        "params": checkpoints.count_parameters(model),
        "train_lengths": f"{cfg.min_len}-{cfg.max_len}",
        "train_steps": result.steps,
        "train_seconds": round(result.seconds, 2),
        "seconds_to_99": None if first_99 is None else round(first_99, 2),
        "stopped_because": result.stopped_because,
        "token_accuracy": round(token, 4),  # held-out test set, lengths 4-16
        "exact_accuracy": round(exact, 4),
        "exact_in_distribution": round(exact_in, 4),  # test lengths within the training lengths
        "buckets": buckets,
    }


def print_table(rows: list[dict]) -> None:
    names = list(rows[0]["buckets"])
    header = [
        "model",
        "params",
        "trained on",
        "steps",
        "train s",
        "s to 99%",
        "token acc",
        "exact acc",
        "exact in-dist",
    ]
    header += [f"exact {name}" for name in names] + [f"token {name}" for name in names]
    lines = [header]
    for row in rows:
        line = [row["model"], f"{row['params']:,}", row["train_lengths"], str(row["train_steps"])]
        line += [f"{row['train_seconds']:.1f}", "-" if row["seconds_to_99"] is None else f"{row['seconds_to_99']:.1f}"]
        line += [f"{row['token_accuracy']:.4f}", f"{row['exact_accuracy']:.4f}", f"{row['exact_in_distribution']:.4f}"]
        line += [f"{row['buckets'][n]['exact_accuracy']:.3f}" for n in names]
        line += [f"{row['buckets'][n]['token_accuracy']:.3f}" for n in names]
        lines.append(line)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for i, line in enumerate(lines):
        print(" | ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)))
        if i == 0:
            print("-|-".join("-" * w for w in widths))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    parser.add_argument("--budget", type=float, default=30.0, help="most training seconds per model (default 30)")
    parser.add_argument("--train-max-len", type=int, default=16, help="longest training sequence (default 16)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument(
        "--rpe",
        action="store_true",
        help="also train a Transformer with randomized positions, with the recipe of the shipped transformer_short_rpe",
    )
    parser.add_argument(
        "--rpe-budget", type=float, default=600.0, help="most training seconds of the --rpe model (default 600)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("warning: set OMP_NUM_THREADS=1; the README's numbers use one thread", file=sys.stderr)
    torch.set_num_threads(1)
    jobs = [(kind, None, None, args.budget) for kind in args.models]
    if args.rpe:
        _, rpe_config, rpe_recipe = checkpoints.PRETRAINED["transformer_short_rpe"]
        rpe_recipe = {k: v for k, v in rpe_recipe.items() if k != "max_len"}  # --train-max-len decides
        jobs.append(("transformer", rpe_config, rpe_recipe, args.rpe_budget))
    rows = [run(kind, budget, args.train_max_len, args.seed, config, recipe) for kind, config, recipe, budget in jobs]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(
            f"device: {env.get_device()}, torch threads: {torch.get_num_threads()}, budget: {args.budget:g} s per model"
            + (f", {args.rpe_budget:g} s for the randomized-position model" if args.rpe else "")
        )
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
