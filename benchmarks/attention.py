"""What attention costs on this machine: time, memory and GFLOP/s, measured in one run.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/attention.py           # full table, a few minutes
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/attention.py --quick   # smoke run, small sizes
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/attention.py --json    # one JSON object

Sections:

1. ``course_utils.attention.MultiHeadAttention(need_weights=False)`` (fused kernel) against
   ``torch.nn.MultiheadAttention(batch_first=True, need_weights=False)`` with the same weights
   (``MultiHeadAttention.from_torch``), batch 8, d_model 512, 8 heads, eval mode, inference mode:
   median time and the ratio ours / torch. The two are timed alternately, so load from other
   processes hits both alike.
2. Peak memory of one forward pass of each module at n = 4096, in a fresh subprocess, after a warm-up call
   at n = 64: the process's peak resident size (``VmHWM``, reset just before the call) minus its resident
   size just before the call (Linux only).
3. A naive matmul-softmax-matmul against ``F.scaled_dot_product_attention`` (batch 1, 8 heads, d_head 64).
4. NumPy ``course_utils.efficient.tiled_attention`` against ``naive_attention`` (float64, one head,
   d_head 64): time, ``tracemalloc`` peak memory, and the largest difference of the outputs.
5. GFLOP/s of the fused kernel (``4 * seq_len**2 * d_model`` FLOPs, batch 1, 8 heads of 64) against one
   large square float32 matmul (``2 * n**3`` FLOPs) at the same ``n``, timed alternately.

Targets (issue 4): ratio <= 0.85 at seq_len 1024; our module's peak memory below
``nn.MultiheadAttention``'s at 4096; the fused kernel >= 75% of the matmul's GFLOP/s at 4096; tiled
NumPy attention >= 10x less peak memory than naive at 4096 with the same result.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from course_utils import efficient
from course_utils.attention import MultiHeadAttention
from course_utils.timing import median_time, thread_info

BATCH, D_MODEL, NUM_HEADS = 8, 512, 8
CORE_HEADS, D_HEAD = 8, 64

FULL = {
    "module_lengths": [256, 512, 1024, 2048],
    "module_repeats": 5,
    "memory_length": 4096,
    "sdpa_lengths": [512, 1024, 2048, 4096],
    "numpy_lengths": [512, 1024, 2048, 4096],
    "gflops_length": 4096,
    "repeats": 3,
}
QUICK = {
    "module_lengths": [128, 256],
    "module_repeats": 3,
    "memory_length": 512,
    "sdpa_lengths": [256, 512],
    "numpy_lengths": [256, 512],
    "gflops_length": 1024,
    "repeats": 2,
}


def _modules(seed: int = 0):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(D_MODEL, NUM_HEADS, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(theirs).eval()
    return ours, theirs


CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
SETTINGS = {"clock": "wall"}  # set from --clock in main()


def _interleaved_medians(fns: dict, repeats: int) -> dict:
    """Median seconds of each callable, timing them in turn (a b a b ...) after one warm-up each."""
    now = CLOCK[SETTINGS["clock"]]
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = now()
            fn()
            times[name].append(now() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


@torch.inference_mode()
def bench_modules(lengths, repeats):
    ours, theirs = _modules()
    rows = []
    for seq_len in lengths:
        x = torch.randn(BATCH, seq_len, D_MODEL, generator=torch.Generator().manual_seed(seq_len))
        ours_out, _ = ours(x, x, x, need_weights=False)
        theirs_out, _ = theirs(x, x, x, need_weights=False)
        max_diff = float((ours_out - theirs_out).abs().max())
        medians = _interleaved_medians(
            {
                "ours": lambda x=x: ours(x, x, x, need_weights=False),
                "torch": lambda x=x: theirs(x, x, x, need_weights=False),
            },
            repeats,
        )
        rows.append(
            {
                "seq_len": seq_len,
                "ours_s": medians["ours"],
                "torch_s": medians["torch"],
                "ratio": medians["ours"] / medians["torch"],
                "max_abs_diff": max_diff,
            }
        )
    return rows


def _status_bytes(field: str) -> int:
    """A memory field of /proc/self/status (``VmRSS``: resident now, ``VmHWM``: peak resident), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # reported in kB
    raise RuntimeError(f"{field} not found in /proc/self/status")


@torch.inference_mode()
def _child_peak_memory(which: str, seq_len: int) -> None:
    """Run in a fresh process: one forward pass, print the peak resident growth in bytes as JSON.

    Uses the process's own peak (``VmHWM``), reset to the current size just before the call where the
    kernel allows it (``/proc/self/clear_refs``). Not ``getrusage().ru_maxrss``: on Linux a child
    inherits its parent's peak through fork and exec, which hides a small peak under the parent's.
    """
    ours, theirs = _modules()
    x = torch.randn(BATCH, seq_len, D_MODEL, generator=torch.Generator().manual_seed(seq_len))
    module = ours if which == "ours" else theirs
    small = torch.randn(BATCH, 64, D_MODEL)
    module(small, small, small, need_weights=False)  # warm-up: load the kernels' code pages before measuring
    del small
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak resident size to the current one
    except OSError:
        pass
    before = _status_bytes("VmRSS")
    earlier_peak = _status_bytes("VmHWM")
    out, _ = module(x, x, x, need_weights=False)
    peak = _status_bytes("VmHWM")
    # earlier_peak_excess > 0 means a call peaking below that earlier peak would be under-reported
    report = {"peak_growth_bytes": max(peak - before, 0), "earlier_peak_excess": max(earlier_peak - before, 0)}
    print(json.dumps(report))


def bench_memory(seq_len: int):
    if not os.path.exists("/proc/self/status"):
        return None
    result = {"seq_len": seq_len}
    for which in ("ours", "torch"):
        proc = subprocess.run(
            [sys.executable, __file__, "--child-peak-memory", which, str(seq_len)],
            check=True,
            capture_output=True,
            text=True,
        )
        result[f"{which}_bytes"] = json.loads(proc.stdout.strip().splitlines()[-1])["peak_growth_bytes"]
    result["torch_over_ours"] = result["torch_bytes"] / max(result["ours_bytes"], 1)
    result["scores_bytes"] = BATCH * NUM_HEADS * seq_len * seq_len * 4  # one float32 score matrix
    return result


def _naive_torch(q, k, v):
    # (batch, heads, seq_len, d_head) @ (batch, heads, d_head, seq_len) -> (batch, heads, seq_len, seq_len)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    # (batch, heads, seq_len, seq_len) @ (batch, heads, seq_len, d_head) -> (batch, heads, seq_len, d_head)
    return torch.softmax(scores, dim=-1) @ v


@torch.inference_mode()
def bench_sdpa(lengths, repeats):
    rows = []
    for seq_len in lengths:
        gen = torch.Generator().manual_seed(seq_len)
        q, k, v = torch.randn(3, 1, CORE_HEADS, seq_len, D_HEAD, generator=gen)
        max_diff = float((_naive_torch(q, k, v) - F.scaled_dot_product_attention(q, k, v)).abs().max())
        medians = _interleaved_medians(
            {
                "naive": lambda q=q, k=k, v=v: _naive_torch(q, k, v),
                "sdpa": lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v),
            },
            repeats,
        )
        rows.append(
            {
                "seq_len": seq_len,
                "naive_s": medians["naive"],
                "sdpa_s": medians["sdpa"],
                "sdpa_speedup": medians["naive"] / medians["sdpa"],
                "max_abs_diff": max_diff,
            }
        )
    return rows


def bench_numpy(lengths, repeats, block: int = 128):
    rows = []
    for seq_len in lengths:
        rng = np.random.default_rng(seq_len)
        q, k, v = rng.normal(size=(3, seq_len, D_HEAD))
        naive_out, naive_peak = efficient.measure_peak_memory(efficient.naive_attention, q, k, v)
        tiled_out, tiled_peak = efficient.measure_peak_memory(
            efficient.tiled_attention, q, k, v, q_block=block, k_block=block
        )
        clock = SETTINGS["clock"]
        naive_s = median_time(efficient.naive_attention, q, k, v, repeats=repeats, warmup=0, clock=clock)
        tiled_s = median_time(
            efficient.tiled_attention, q, k, v, q_block=block, k_block=block, repeats=repeats, warmup=0, clock=clock
        )
        rows.append(
            {
                "seq_len": seq_len,
                "naive_s": naive_s,
                "tiled_s": tiled_s,
                "naive_peak_bytes": naive_peak,
                "tiled_peak_bytes": tiled_peak,
                "memory_ratio": naive_peak / tiled_peak,
                "max_abs_diff": float(np.abs(naive_out - tiled_out).max()),
            }
        )
    return rows


@torch.inference_mode()
def bench_gflops(seq_len: int, repeats: int):
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 1, CORE_HEADS, seq_len, D_HEAD, generator=gen)
    a, b = torch.randn(2, seq_len, seq_len, generator=gen)
    medians = _interleaved_medians(
        {"fused": lambda: F.scaled_dot_product_attention(q, k, v), "matmul": lambda: torch.matmul(a, b)}, repeats
    )
    fused_s, matmul_s = medians["fused"], medians["matmul"]
    fused_flops = 4 * seq_len**2 * D_HEAD * CORE_HEADS  # Q K^T and weights @ V
    matmul_flops = 2 * seq_len**3
    fused = fused_flops / fused_s / 1e9
    matmul = matmul_flops / matmul_s / 1e9
    return {"seq_len": seq_len, "fused_gflops": fused, "matmul_gflops": matmul, "fraction": fused / matmul}


def _mb(n_bytes) -> str:
    return f"{n_bytes / 1e6:,.1f} MB"


def print_table(results: dict) -> None:
    print(f"# benchmarks/attention.py  ({results['conditions']})")
    print()
    print(f"## MultiHeadAttention(need_weights=False) vs nn.MultiheadAttention  (batch {BATCH}, d_model {D_MODEL}, ")
    print(f"## {NUM_HEADS} heads, same weights, eval + inference_mode, median of {results['module_repeats']})")
    print(f"{'seq_len':>8} {'ours (s)':>10} {'torch (s)':>10} {'ratio':>7} {'max |diff|':>11}")
    for r in results["mha_vs_torch"]:
        print(
            f"{r['seq_len']:>8} {r['ours_s']:>10.4f} {r['torch_s']:>10.4f} {r['ratio']:>7.3f} {r['max_abs_diff']:>11.2e}"
        )
    mem = results["peak_memory"]
    if mem:
        print()
        print(f"## peak memory of one forward pass, seq_len {mem['seq_len']} (fresh process, peak RSS growth)")
        print(f"{'ours':>8}: {_mb(mem['ours_bytes'])}")
        print(f"{'torch':>8}: {_mb(mem['torch_bytes'])}  ({mem['torch_over_ours']:.1f}x ours; ")
        print(f"{'':>10}one float32 score matrix (batch, heads, seq_len, seq_len) is {_mb(mem['scores_bytes'])})")
    print()
    print(
        f"## naive matmul-softmax-matmul vs F.scaled_dot_product_attention  (batch 1, {CORE_HEADS} heads, d_head {D_HEAD})"
    )
    print(f"{'seq_len':>8} {'naive (s)':>10} {'sdpa (s)':>10} {'speedup':>8} {'max |diff|':>11}")
    for r in results["naive_vs_sdpa"]:
        print(
            f"{r['seq_len']:>8} {r['naive_s']:>10.4f} {r['sdpa_s']:>10.4f} {r['sdpa_speedup']:>8.2f} "
            f"{r['max_abs_diff']:>11.2e}"
        )
    print()
    print(f"## NumPy tiled (FlashAttention-style, 128x128 tiles) vs naive  (float64, one head, d_head {D_HEAD})")
    print(
        f"{'seq_len':>8} {'naive (s)':>10} {'tiled (s)':>10} {'naive peak':>12} {'tiled peak':>12} "
        f"{'mem ratio':>10} {'max |diff|':>11}"
    )
    for r in results["numpy_tiled_vs_naive"]:
        print(
            f"{r['seq_len']:>8} {r['naive_s']:>10.4f} {r['tiled_s']:>10.4f} {_mb(r['naive_peak_bytes']):>12} "
            f"{_mb(r['tiled_peak_bytes']):>12} {r['memory_ratio']:>10.1f} {r['max_abs_diff']:>11.2e}"
        )
    g = results["gflops"]
    print()
    print(f"## GFLOP/s at n = {g['seq_len']}: fused attention kernel vs one square float32 matmul")
    print(f"fused SDPA (batch 1, {CORE_HEADS} heads, d_head {D_HEAD}): {g['fused_gflops']:.1f} GFLOP/s")
    print(
        f"matmul ({g['seq_len']} x {g['seq_len']}) @ ({g['seq_len']} x {g['seq_len']}): {g['matmul_gflops']:.1f} GFLOP/s"
    )
    print(f"fraction: {g['fraction']:.2f}")
    print()
    print("## headline")
    for key in (
        "mha_vs_torch_ratio_1024",
        "peak_memory_torch_over_ours_4096",
        "fused_fraction_of_matmul_4096",
        "tiled_memory_ratio_4096",
    ):
        value = results[key]
        print(f"{key}: {'n/a (--quick)' if value is None else f'{value:.3g}'}")


def _lookup(rows, seq_len, key):
    for r in rows:
        if r["seq_len"] == seq_len:
            return r[key]
    return None


def run(quick: bool) -> dict:
    cfg = QUICK if quick else FULL
    start = time.perf_counter()
    modules = bench_modules(cfg["module_lengths"], cfg["module_repeats"])
    memory = bench_memory(cfg["memory_length"])
    sdpa = bench_sdpa(cfg["sdpa_lengths"], cfg["repeats"])
    numpy_rows = bench_numpy(cfg["numpy_lengths"], cfg["repeats"])
    gflops = bench_gflops(cfg["gflops_length"], cfg["module_repeats"])
    results = {
        "clock": SETTINGS["clock"],
        "conditions": f"{thread_info()}, {SETTINGS['clock']} clock, torch {torch.__version__}, numpy {np.__version__}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs{', QUICK' if quick else ''}",
        "quick": quick,
        "module_repeats": cfg["module_repeats"],
        "mha_vs_torch": modules,
        "peak_memory": memory,
        "naive_vs_sdpa": sdpa,
        "numpy_tiled_vs_naive": numpy_rows,
        "gflops": gflops,
        "mha_vs_torch_ratio_1024": _lookup(modules, 1024, "ratio"),
        "peak_memory_torch_over_ours_4096": memory["torch_over_ours"] if memory and memory["seq_len"] == 4096 else None,
        "fused_fraction_of_matmul_4096": gflops["fraction"] if gflops["seq_len"] == 4096 else None,
        "tiled_memory_ratio_4096": _lookup(numpy_rows, 4096, "memory_ratio"),
    }
    results["wall_s"] = time.perf_counter() - start
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of every section")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCK),
        default="wall",
        help="wall: elapsed time (default); cpu: CPU time of this process, steadier on a busy machine",
    )
    parser.add_argument("--child-peak-memory", nargs=2, metavar=("WHICH", "SEQ_LEN"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_peak_memory:
        which, seq_len = args.child_peak_memory
        _child_peak_memory(which, int(seq_len))
        return 0
    SETTINGS["clock"] = args.clock
    results = run(args.quick)
    if args.json:
        print(json.dumps(results))
    else:
        print_table(results)
        print(f"\n(wall time {results['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
