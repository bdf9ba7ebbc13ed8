"""Lesson 04's training run over several seeds: does one attention layer learn to retrieve?

A thin table over the lesson's own experiment, ``course_utils.lessons.lesson_04.experiments.train_retriever(seed)``
(the task is ``course_utils.retrieval``): each example holds 8 random keys and 8 random values (d_model = 16)
and a query that is a noisy copy of one key; the target is that key's value. One
``attention.MultiHeadAttention(16, 1)`` is trained with Adam (lr 3e-2, 300 steps of 64 examples, MSE). For each
seed: on 512 held-out examples, the attention weight on the matching key and the MSE before and after training;
how diagonal ``W_q W_k^T`` is (mean diagonal / mean |off-diagonal|) before and after; how much its largest
entry grew. ``benchmarks/claims.py --only 04.`` checks the lesson's thresholds on the same runs.

Usage (see benchmarks/README.md)::

    OMP_NUM_THREADS=1 python benchmarks/retrieval.py              # 10 seeds, the table
    OMP_NUM_THREADS=1 python benchmarks/retrieval.py --seeds 5    # fewer seeds
"""

from __future__ import annotations

import argparse
import time

import torch

from course_utils.lessons.lesson_04 import experiments as lesson_04


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0 .. N-1 (default 10)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    torch.set_num_threads(1)
    print(f"{'seed':>4} | {'weight on match':>17} | {'test MSE':>15} | {'diag/offdiag':>14} | {'growth':>6} | {'s':>5}")
    print(f"{'':>4} | {'before':>8} {'after':>8} | {'before':>7} {'after':>7} | {'before':>6} {'after':>7} |")
    rows = []
    for seed in range(args.seeds):
        start = time.perf_counter()
        m = lesson_04.train_retriever(seed).measured
        seconds = time.perf_counter() - start
        rows.append(m)
        print(
            f"{seed:4d} | {m['before']:8.3f} {m['after']:8.3f} | {m['mse_before']:7.3f} {m['mse_after']:7.3f} | "
            f"{m['dominance_before']:6.2f} {m['dominance_after']:7.2f} | {m['growth']:5.1f}x | {seconds:5.2f}"
        )
    print(
        f"over {args.seeds} seeds: weight on the matching key before <= {max(r['before'] for r in rows):.3f}, "
        f"after >= {min(r['after'] for r in rows):.3f}; diag/offdiag before <= "
        f"{max(r['dominance_before'] for r in rows):.2f}, after >= {min(r['dominance_after'] for r in rows):.3g}; "
        f"largest entry grew {min(r['growth'] for r in rows):.0f}x to {max(r['growth'] for r in rows):.0f}x"
    )


if __name__ == "__main__":
    main()
