"""Every empirical claim of lessons 05-08 (and of the instructor guide), re-run over several seeds.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py                  # the table, seeds 0-4
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --json           # a JSON list, one object per claim
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --quick          # the cheap claims only (no seq2seq training)
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --only 07.leak --seeds 0 1
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/claims.py --markdown       # the README's table
    .venv/bin/python benchmarks/claims.py --list                             # the claims' names, lessons and texts

A *claim* is a measured fact a lesson states about training, heads or cost (not a definition, not an
identity that holds by construction). Each has an experiment, run once per seed, and a predicate with the
lesson's own margin (the threshold its assertion uses, or the one its text states). For training claims the
seed sets the model's initialization (``env.set_seed``) and the training batches (``TrainConfig.seed``);
the lesson's own run is seed 0. For timing claims (lesson 06) the seed sets the random inputs and each seed
is one more repetition of the measurement on this machine. Where a lesson gives a reason ("because"), the
experiment includes a control that changes the suspected cause alone.

The models of lessons 07 and 08 train with the package's public recipes (``training.recipe(kind)``, and
``checkpoints.PRETRAINED`` for the models trained on lengths 4-12), so a change of recipe or optimizer moves these
results too: re-run the script after one. ``--json`` prints a list of
``{"claim", "name", "lesson", "source", "seeds", "held", "values"}``: ``seeds`` the seeds run, ``held`` one
boolean per seed, ``values`` the measured numbers per seed. Experiments that several claims share run once
per seed. Torch runs on ``--threads`` threads (default 1) and on the CPU unless ``COURSE_DEVICE`` says
otherwise.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import head_roles  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from course_utils import attention, data, efficient, env, heads, timing  # noqa: E402
from course_utils.reversal import checkpoints, decoding, training  # noqa: E402


@dataclass(frozen=True)
class Claim:
    """One claim: where it is stated, how to measure it for one seed, and when it holds."""

    name: str  # short id, "07.leak"
    lesson: str  # "05" .. "08", or "guide"
    text: str  # the claim, in the lesson's words
    source: str  # the cell or section that states it
    measure: Callable[[int], dict]  # seed -> measured values (JSON-serializable)
    holds: Callable[[dict], bool]  # values -> did the claim hold?
    quick: bool = False  # part of --quick (no seq2seq training)


# --------------------------------------------------------------------------------------------------
# Experiments, one call per seed; several claims read the same one, so each is cached.
# --------------------------------------------------------------------------------------------------


def _r(x: float, digits: int = 4) -> float:
    return round(float(x), digits)


@functools.cache
def _role_test_task():
    return heads.make_role_task(512, seed=12345)  # lesson 05's test set


@functools.cache
def role_model(seed: int) -> dict:
    """Lesson 05's trained toy (heads.train_role_model) with one training seed: head_roles' measurements."""
    return head_roles.measure_seed(seed, _role_test_task())


@functools.cache
def untrained_layer(seed: int) -> dict:
    """Lesson 05's fresh layer on "the cat sat on the mat", embedding and layer drawn from ``seed``."""
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    vocab = {word: i for i, word in enumerate(dict.fromkeys(tokens))}
    token_ids = torch.tensor([[vocab[word] for word in tokens]])  # (batch=1, seq_len=6)
    d_model, num_heads = 32, 4
    env.set_seed(seed)
    x = torch.nn.Embedding(len(vocab), d_model)(token_ids).detach()  # (1, seq_len, d_model)
    mha = attention.MultiHeadAttention(d_model, num_heads).eval()
    with torch.no_grad():
        _, weights = mha(x, x, x)  # (1, heads, seq_len, seq_len)
    entropy = heads.head_entropy(weights)  # (heads,)
    similarity = heads.head_similarity(weights)  # (heads, heads)
    # the lesson's seed loop: 8 initialization seeds on this input; which head is most "self-attentive"?
    most_self, strongest_self = [], 0.0
    for init_seed in range(8):
        torch.manual_seed(1000 * seed + init_seed)
        fresh = attention.MultiHeadAttention(d_model, num_heads).eval()
        with torch.no_grad():
            _, fresh_weights = fresh(x, x, x)
        self_score = heads.head_role_scores(fresh_weights)["self"]  # (heads,)
        most_self.append(int(np.argmax(self_score)))
        strongest_self = max(strongest_self, float(self_score.max()))
    return {
        "max_weight": _r(weights.max()),
        "min_entropy_over_max": _r(entropy.min() / heads.max_entropy(len(tokens))),
        "min_similarity": _r(similarity[~np.eye(num_heads, dtype=bool)].min()),
        "self_heads": sorted(set(most_self)),
        "strongest_self": _r(strongest_self),
        "seq_len": len(tokens),
    }


def _naive_attention(q, k, v):
    # (batch, heads, n, d_head) @ (batch, heads, d_head, n) -> (batch, heads, n, n)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    # (batch, heads, n, n) @ (batch, heads, n, d_head) -> (batch, heads, n, d_head)
    return torch.softmax(scores, dim=-1) @ v


LENGTHS = [128, 256, 512, 1024, 2048]  # lesson 06's timing lengths


@functools.cache
def timing_sweep(seed: int) -> dict:
    """Lesson 06, *Time against sequence length*: naive, SDPA and projections, fastest of 3, CPU time."""
    env.set_seed(seed)
    d_model, num_heads = 256, 4
    mha = attention.MultiHeadAttention(d_model, num_heads).eval()
    projections = (mha.query_proj, mha.key_proj, mha.value_proj, mha.out_proj)
    seconds = {"naive": [], "SDPA": [], "projections": []}
    with torch.inference_mode():
        for n in LENGTHS:
            x = torch.randn(1, n, d_model)
            q, k, v = torch.randn(3, 1, num_heads, n, d_model // num_heads)  # (batch, heads, n, d_head) each
            seconds["naive"].append(timing.min_time(_naive_attention, q, k, v, repeats=3, clock="cpu"))
            seconds["SDPA"].append(timing.min_time(F.scaled_dot_product_attention, q, k, v, repeats=3, clock="cpu"))
            seconds["projections"].append(
                timing.min_time(lambda x=x: [p(x) for p in projections], repeats=3, clock="cpu")
            )
    slopes = {name: _r(timing.loglog_slope(LENGTHS[-3:], values[-3:]), 3) for name, values in seconds.items()}
    ratio = np.array(seconds["SDPA"]) / np.array(seconds["projections"])
    crossover = next((n for n, r in zip(LENGTHS, ratio, strict=True) if r >= 1), None)
    return {
        "slopes": slopes,
        "core_over_projections": [_r(r, 3) for r in ratio],
        "ratio_growth": _r(ratio[-1] / ratio[0], 3),
        "crossover": crossover,
    }


@functools.cache
def crossover_widths(seed: int) -> dict:
    """Lesson 06, *Move the crossover*: first length where SDPA takes as long as the projections."""
    env.set_seed(seed)
    crossovers = {}
    with torch.inference_mode():
        for width in (128, 512):
            layer = attention.MultiHeadAttention(width, 4).eval()
            layer_projections = (layer.query_proj, layer.key_proj, layer.value_proj, layer.out_proj)
            crossovers[width] = None
            for n in LENGTHS:
                x = torch.randn(1, n, width)
                q, k, v = torch.randn(3, 1, 4, n, width // 4)  # (batch, heads, n, d_head) each
                core = timing.min_time(F.scaled_dot_product_attention, q, k, v, repeats=3, clock="cpu")
                proj = timing.min_time(lambda x=x, ps=layer_projections: [p(x) for p in ps], repeats=3, clock="cpu")
                if core >= proj:
                    crossovers[width] = n
                    break
    return {"crossover_128": crossovers[128], "crossover_512": crossovers[512]}


@functools.cache
def heads_timing(seed: int) -> dict:
    """Lesson 06, *Many heads versus one wide head*: n = 512, d_model = 512, 1 / 8 / 64 heads."""
    env.set_seed(seed)
    n, width = 512, 512
    naive = {}
    with torch.inference_mode():
        for h in (1, 8, 64):
            q, k, v = torch.randn(3, 1, h, n, width // h)  # (batch, heads, n, d_head), heads * d_head = 512
            naive[h] = timing.min_time(_naive_attention, q, k, v, repeats=3, clock="cpu")
    return {"naive_ms": {h: _r(t * 1e3, 3) for h, t in naive.items()}, "ratio_64_over_1": _r(naive[64] / naive[1], 3)}


@functools.cache
def heads_timing_parts(seed: int) -> dict:
    """Control for *Many heads versus one wide head*: time each part of the naive core, 1 head against 64.

    The lesson gives two reasons: the softmax handles heads x more scores, and each head's matrix product
    gets thinner. Timing the parts separately tests both: the softmax (64x the scores) and ``weights @ V``
    (the same FLOPs, in 64 thin products).
    """
    env.set_seed(seed)
    n, width = 512, 512
    parts = {}
    with torch.inference_mode():
        for h in (1, 64):
            q, k, v = torch.randn(3, 1, h, n, width // h)  # (batch, heads, n, d_head), heads * d_head = 512
            # (batch, heads, n, d_head) @ (batch, heads, d_head, n) -> (batch, heads, n, n)
            weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
            parts[h] = {
                "softmax": timing.min_time(torch.softmax, q @ k.transpose(-2, -1), -1, repeats=3, clock="cpu"),
                # (batch, heads, n, n) @ (batch, heads, n, d_head) -> (batch, heads, n, d_head)
                "weights_at_v": timing.min_time(torch.matmul, weights, v, repeats=3, clock="cpu"),
            }
    return {
        "softmax_ratio": _r(parts[64]["softmax"] / parts[1]["softmax"], 3),
        "weights_at_v_ratio": _r(parts[64]["weights_at_v"] / parts[1]["weights_at_v"], 3),
    }


@functools.cache
def tiled_timing(seed: int) -> dict:
    """Lesson 06, *The speed claim*: NumPy tiled (256 x 256 tiles) against naive, n = 1024 and 2048."""
    ratios = {}
    for n in (1024, 2048):
        q, k, v = np.random.default_rng(1000 * seed + n).normal(size=(3, n, 64))  # (seq_len, d_head) each
        t_naive = timing.min_time(efficient.naive_attention, q, k, v, repeats=3, clock="cpu")
        t_tiled = timing.min_time(efficient.tiled_attention, q, k, v, q_block=256, k_block=256, repeats=3, clock="cpu")
        ratios[n] = _r(t_tiled / t_naive, 3)
    return {"tiled_over_naive": ratios}


@functools.cache
def tiled_memory(seed: int) -> dict:
    """Lesson 06, *Peak memory*: tracemalloc peak of naive and tiled (128 x 128) NumPy attention."""
    lengths = [256, 512, 1024, 2048]
    peaks = {"naive": [], "tiled": []}
    for n in lengths:
        q, k, v = np.random.default_rng(1000 * seed + n).normal(size=(3, n, 64))
        _, naive_peak = efficient.measure_peak_memory(efficient.naive_attention, q, k, v)
        _, tiled_peak = efficient.measure_peak_memory(efficient.tiled_attention, q, k, v, q_block=128, k_block=128)
        peaks["naive"].append(naive_peak)
        peaks["tiled"].append(tiled_peak)
    return {
        "slope_naive": _r(timing.loglog_slope(lengths, peaks["naive"]), 3),
        "slope_tiled": _r(timing.loglog_slope(lengths, peaks["tiled"]), 3),
        "ratio_2048": _r(peaks["naive"][-1] / peaks["tiled"][-1], 1),
    }


@functools.cache
def kv_cache_timing(seed: int) -> dict:
    """Lesson 06, *Decoding one token at a time*: 512 tokens, d_model 256, d_head 64, with and without cache."""
    rng = np.random.default_rng(seed)
    x_long = rng.normal(size=(512, 256))  # (seq_len, d_model)
    w_long = rng.normal(size=(3, 256, 64)) / 16  # W_q, W_k, W_v: (d_model, d_head) each
    t_with = timing.min_time(efficient.decode_with_cache, x_long, *w_long, repeats=3, clock="cpu")
    t_without = timing.min_time(efficient.decode_without_cache, x_long, *w_long, repeats=3, clock="cpu")
    return {"time_ratio": _r(t_without / t_with, 3)}


# ---- lessons 07 and 08: the reversal models, trained with the package's recipes ------------------


@functools.cache
def _splits() -> dict:
    return data.load_splits()


def _train(kind: str, seed: int, model_config: dict | None = None, **recipe_overrides):
    """Build ``kind`` after ``env.set_seed(seed)`` and train it with its recipe, batches seeded by ``seed``.

    Returns the model, the :class:`training.TrainResult` and the CPU seconds of this process during training
    (one thread: steadier than the wall clock on a shared machine; the speed claims compare these).
    """
    env.set_seed(seed)
    model = checkpoints.build_model(kind, **(model_config or {}))
    cpu_start = time.process_time()
    run = training.train(model, training.recipe(kind, seed=seed, **recipe_overrides), progress=False)
    return model, run, time.process_time() - cpu_start


def _buckets(result) -> dict:
    return {f"{lo}-{hi}": _r(result.bucket(lo, hi)[1]) for lo, hi in data.LENGTH_BUCKETS}


def _mirror_shares(model, per_head: bool) -> dict:
    """Share of symbol-writing test steps whose attention argmax is on n-1-t (and on n-1-t or n-t)."""
    test_batch = data.collate(_splits()["test"])
    _, w_all = decoding.greedy_decode(model, test_batch.src, test_batch.src_lengths, return_attention=True)
    if w_all.dim() == 3:  # (batch, steps, src_len): one head
        w_all = w_all[:, None]  # (batch, 1, steps, src_len)
    steps = torch.arange(w_all.shape[2])
    writes_symbol = steps[None, :] < test_batch.src_lengths[:, None]  # (batch, steps)
    mirror = (test_batch.src_lengths[:, None] - 1 - steps[None, :]).clamp(min=0)  # (batch, steps): n - 1 - t

    def shares(top):
        exact = (top == mirror)[writes_symbol].float().mean().item()
        band = ((top == mirror) | (top == mirror + 1))[writes_symbol].float().mean().item()
        return _r(exact), _r(band)

    out = {"averaged": shares(w_all.mean(1).argmax(-1))}  # heads averaged: (batch, steps)
    if per_head:
        out["per_head"] = [shares(w_all[:, h].argmax(-1)) for h in range(w_all.shape[1])]
    return out


@functools.cache
def gru_same_budget(seed: int) -> dict:
    """Lesson 07: the GRU without attention, trained for the attention model's step budget."""
    budget = training.recipe("gru_attention").steps
    model, run, cpu_seconds = _train("gru", seed, steps=budget)
    result = training.evaluate(model, _splits()["test"] + _splits()["test_long"])
    return {
        "steps": run.steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
    } | {"buckets": _buckets(result)}


@functools.cache
def gru_attention(seed: int) -> dict:
    """Lesson 07: the GRU with additive attention, trained with its recipe."""
    model, run, cpu_seconds = _train("gru_attention", seed)
    result = training.evaluate(model, _splits()["test"] + _splits()["test_long"])
    sample = _splits()["test"][::5]  # lesson 07's pitfall sample
    return {
        "steps": run.steps,
        "budget": training.recipe("gru_attention").steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
        "buckets": _buckets(result),
        "mirror_share": _mirror_shares(model, per_head=False)["averaged"][0],
        "sample_exact": _r(training.evaluate(model, sample).exact_accuracy),
    }


@functools.cache
def leaky_gru(seed: int) -> dict:
    """Lesson 07, pitfall 1: the GRU trained 30 steps with decoder_input = target."""
    env.set_seed(seed)
    model = checkpoints.build_model("gru")
    training.train(model, training.recipe("gru", steps=30, leak=True, seed=seed), val=[], progress=False)
    sample = _splits()["test"][::5]
    free = training.evaluate(model, sample)
    return {
        "teacher_forced": _r(training.teacher_forced_accuracy(model, sample, leak=True)),
        "free_token": _r(free.token_accuracy),
        "free_exact": _r(free.exact_accuracy),
    }


@functools.cache
def transformer(seed: int) -> dict:
    """Lesson 08: the Transformer, trained with its recipe."""
    model, run, cpu_seconds = _train("transformer", seed)
    result = training.evaluate(model, _splits()["test"] + _splits()["test_long"])
    shares = _mirror_shares(model, per_head=True)
    return {
        "steps": run.steps,
        "budget": training.recipe("transformer").steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
        "buckets": _buckets(result),
        "band_averaged": shares["averaged"][1],
        "per_head_exact": [e for e, _ in shares["per_head"]],
        "per_head_band": [b for _, b in shares["per_head"]],
    }


@functools.cache
def no_positions(seed: int) -> dict:
    """Lesson 08, *Ablation*: the Transformer without positional encoding, 100 steps."""
    model, run, cpu_seconds = _train("transformer", seed, {"positional_encoding": False}, steps=100, target_exact=None)
    result = training.evaluate(model, _splits()["test"])
    return {"steps": run.steps, "token": _r(result.token_accuracy), "exact": _r(result.exact_accuracy)}


@functools.cache
def embedding_trap(seed: int) -> dict:
    """Lesson 08, *The embedding-scale trap*, length 8, at most 200 steps; with a control.

    The control keeps the sqrt(d_model) scale and changes only the suspected cause, the size of the
    embeddings against the positions: embeddings initialized N(0, 1/d_model), so that the scaled product
    has unit-variance entries (as tensor2tensor and fairseq initialize them).
    """
    length_8 = [s for s in _splits()["test"] if len(s) == 8]
    out = {}
    for label, config, small_init in (
        ("plain", {}, False),
        ("scaled", {"scale_embeddings": True}, False),
        ("scaled_small_init", {"scale_embeddings": True}, True),
    ):
        env.set_seed(seed)
        model = checkpoints.build_model("transformer", **config)
        if small_init:
            with torch.no_grad():
                for table in (model.src_embed, model.tgt_embed):
                    table.weight.normal_(0.0, model.config.d_model**-0.5)
        run = training.train(
            model, training.recipe("transformer", steps=200, min_len=8, max_len=8, seed=seed), progress=False
        )
        out[label] = {"steps": run.steps, "exact": _r(training.evaluate(model, length_8).exact_accuracy)}
    return out


@functools.cache
def short_models(seed: int) -> dict:
    """Lesson 08, *Beyond the training lengths*: the three models of checkpoints.PRETRAINED trained on 4-12."""
    out = {}
    for name in ("gru_attention_short", "transformer_short", "transformer_short_rpe"):
        kind, model_config, overrides = checkpoints.PRETRAINED[name]
        model, run, cpu_seconds = _train(kind, seed, model_config, **overrides)
        result = training.evaluate(model, _splits()["test"])
        out[name] = {
            "steps": run.steps,
            "exact_4_12": _r(result.bucket(4, 12)[1]),
            "exact_13_16": _r(result.bucket(13, 16)[1]),
            "exact_14_16": _r(result.bucket(14, 16)[1]),
            "exact_14": _r(result.by_length[14][1]),
        }
    return out


@functools.cache
def plain_positions_long_run(seed: int) -> dict:
    """Control for lesson 08's randomized positions: plain sinusoidal positions, same long run as the RPE model."""
    _, _, overrides = checkpoints.PRETRAINED["transformer_short_rpe"]
    # the same recipe without random_positions, and no early stop: every one of its steps, as the RPE model takes
    model, run, _ = _train("transformer", seed, None, **{**overrides, "target_exact": None})
    result = training.evaluate(model, _splits()["test"])
    return {
        "steps": run.steps,
        "exact_4_12": _r(result.bucket(4, 12)[1]),
        "exact_13_16": _r(result.bucket(13, 16)[1]),
    }


@functools.cache
def gru_full_recipe(seed: int) -> dict:
    """Lesson 08, *All three models*: the GRU without attention with its own recipe (500 steps)."""
    model, run, cpu_seconds = _train("gru", seed)
    result = training.evaluate(model, _splits()["test"] + _splits()["test_long"])
    return {
        "steps": run.steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
    }


# --------------------------------------------------------------------------------------------------
# The claims
# --------------------------------------------------------------------------------------------------


def _roles(name: str, key: str, text: str, source: str) -> Claim:
    def measure(seed):
        row = role_model(seed)
        return {k: row[k] for k in ("min_accuracy", "role_head", "role_entropy_max", "spare_max_similarity")} | {
            key: bool(row[key]) if key != "cheap_heads" else row[key]
        }

    return Claim(name, "05", text, source, measure, lambda v: bool(v[key]), quick=True)


CLAIMS: list[Claim] = [
    # ---- 05 --------------------------------------------------------------------------------------
    Claim(
        "05.untrained_uniform",
        "05",
        "an untrained layer is near uniform: largest weight < 4/6, every head's entropy > 0.9 ln 6, "
        "every pair of heads similarity > 0.7",
        "05 An untrained layer / Entropy / Head similarity (asserts)",
        untrained_layer,
        lambda v: v["max_weight"] < 4 / v["seq_len"] and v["min_entropy_over_max"] > 0.9 and v["min_similarity"] > 0.7,
        quick=True,
    ),
    Claim(
        "05.self_head_moves",
        "05",
        "the most 'self-attentive' untrained head moves with the initialization seed (>= 3 different heads "
        "over 8 seeds) and no self score reaches 2/6",
        "05 Which head looks self-attentive depends on the seed (asserts)",
        untrained_layer,
        lambda v: len(v["self_heads"]) >= 3 and v["strongest_self"] < 2 / v["seq_len"],
        quick=True,
    ),
    Claim(
        "05.role_loss",
        "05",
        "300 training steps bring the role model's loss below 0.05 of its first value",
        "05 Real specialization, training cell (asserts)",
        lambda seed: {"loss_ratio": role_model(seed)["loss_ratio"]},
        lambda v: v["loss_ratio"] < 0.05,
        quick=True,
    ),
    _roles(
        "05.roles",
        "roles_held",
        "a trained one-layer toy grows a previous-token, a first-token and a matching head: accuracy > 0.95, "
        "three distinct heads with role score > 0.75, entropy < 0.25 ln 12, pairwise similarity < 0.3",
        "05 Role scores, entropy and similarity cells (assert); Summary",
    ),
    _roles(
        "05.ablation",
        "ablation_held",
        "switching off a role's heads drops that answer below 0.5 and keeps the others above 0.9",
        "05 Switching heads off (asserts); Summary",
    ),
    _roles(
        "05.cheap_head",
        "cheap_heads",
        "some head can be switched off alone at a cost below 0.05 on every question",
        "05 Switching heads off (stated for this seed, rate from benchmarks/head_roles.py)",
    ),
    _roles(
        "05.spare_copies",
        "spare_copies",
        "the spare head is a near-copy of a role head (similarity > 0.9)",
        "05 stated as an observation of one seed, with its rate over seeds; guide 05",
    ),
    # ---- 06 --------------------------------------------------------------------------------------
    Claim(
        "06.slopes",
        "06",
        "time against n over 512-2048: naive core slope in (1.6, 3.0), SDPA in (1.5, 2.6), projections in (0.6, 1.5)",
        "06 Fit the exponent (asserts)",
        lambda seed: {"slopes": timing_sweep(seed)["slopes"]},
        lambda v: (
            1.6 < v["slopes"]["naive"] < 3.0
            and 1.5 < v["slopes"]["SDPA"] < 2.6
            and 0.6 < v["slopes"]["projections"] < 1.5
        ),
        quick=True,
    ),
    Claim(
        "06.crossover",
        "06",
        "the core / projections time ratio grows more than 4x from n = 128 to 2048 and crosses 1 between "
        "n = 256 and 1024 (d_model = 256)",
        "06 Where the core overtakes the projections (asserts)",
        lambda seed: {k: timing_sweep(seed)[k] for k in ("ratio_growth", "crossover", "core_over_projections")},
        lambda v: v["ratio_growth"] > 4 and v["crossover"] is not None and 256 <= v["crossover"] <= 1024,
        quick=True,
    ),
    Claim(
        "06.crossover_moves",
        "06",
        "a wider model crosses later: d_model = 512 crosses after d_model = 128 (or not by n = 2048)",
        "06 Move the crossover (asserts)",
        crossover_widths,
        lambda v: (
            v["crossover_128"] is not None and (v["crossover_512"] is None or v["crossover_512"] > v["crossover_128"])
        ),
        quick=True,
    ),
    Claim(
        "06.many_heads_slower",
        "06",
        "64 heads of d_head 8 take more than 1.5x the time of 1 head of 512 on the naive path (same FLOPs)",
        "06 Many heads versus one wide head (asserts); guide 06",
        heads_timing,
        lambda v: v["ratio_64_over_1"] > 1.5,
        quick=True,
    ),
    Claim(
        "06.many_heads_why",
        "06",
        "control for the reasons given: with 64 heads the softmax (64x the scores) takes more than 10x longer, "
        "and weights @ V (same FLOPs, thinner products) more than 2x longer, than with 1 head",
        "06 markdown after Many heads versus one wide head ('Same FLOPs, different times: ...')",
        heads_timing_parts,
        lambda v: v["softmax_ratio"] > 10 and v["weights_at_v_ratio"] > 2,
        quick=True,
    ),
    Claim(
        "06.naive_slope_above_2",
        "06",
        "the naive core's fitted slope comes out above 2 (above 2.1 here)",
        "06 Fit the exponent ('The naive core often comes out above 2'); guide 06 discussion",
        lambda seed: {"naive_slope": timing_sweep(seed)["slopes"]["naive"]},
        lambda v: v["naive_slope"] > 2.1,
        quick=True,
    ),
    Claim(
        "06.tiled_same_order",
        "06",
        "the NumPy tiled pass takes between 0.25x and 4x the naive pass's time at n = 1024 and 2048",
        "06 The speed claim, on a GPU and on this CPU (asserts)",
        tiled_timing,
        lambda v: all(0.25 < r < 4 for r in v["tiled_over_naive"].values()),
        quick=True,
    ),
    Claim(
        "06.tiled_not_slower",
        "06",
        "on this CPU the tiled pass took between 0.65x and 1.0x the naive pass's time",
        "06 markdown after the tiled timing; guide 06 ('0.65-1.0x')",
        tiled_timing,
        lambda v: all(0.65 <= r <= 1.0 for r in v["tiled_over_naive"].values()),
        quick=True,
    ),
    Claim(
        "06.tiled_memory",
        "06",
        "peak memory: naive slope in (1.7, 2.3), tiled slope < 1.3, naive / tiled >= 10 at n = 2048",
        "06 Peak memory: naive versus tiled (asserts)",
        tiled_memory,
        lambda v: 1.7 < v["slope_naive"] < 2.3 and v["slope_tiled"] < 1.3 and v["ratio_2048"] >= 10,
        quick=True,
    ),
    Claim(
        "06.kv_cache_time",
        "06",
        "decoding 512 tokens with a KV cache takes less than half the time of re-projecting the prefix",
        "06 Decoding one token at a time (asserts)",
        kv_cache_timing,
        lambda v: v["time_ratio"] > 2,
        quick=True,
    ),
    # ---- 07 --------------------------------------------------------------------------------------
    Claim(
        "07.gru_collapses",
        "07",
        "without attention, on the attention model's step budget: exact < 0.6 on 4-16, and < 0.1 on 13-16 where 4-8 is > 0.1",
        "07 Without attention (asserts), Accuracy against length (asserts)",
        gru_same_budget,
        lambda v: v["exact_4_16"] < 0.6 and v["buckets"]["13-16"] < 0.1 < v["buckets"]["4-8"],
    ),
    Claim(
        "07.attention_fits",
        "07",
        "with attention, within its step budget: >= 0.97 exact on 4-16, >= 0.95 on each bucket up to 16, "
        "and more than 0.3 above the model without attention",
        "07 With attention, same budget (asserts); Accuracy against length (asserts)",
        lambda seed: gru_attention(seed) | {"gru_exact_4_16": gru_same_budget(seed)["exact_4_16"]},
        lambda v: (
            v["steps"] <= v["budget"]
            and v["exact_4_16"] >= 0.97
            and all(v["buckets"][b] >= 0.95 for b in ("4-8", "9-12", "13-16"))
            and v["exact_4_16"] > v["gru_exact_4_16"] + 0.3
        ),
    ),
    Claim(
        "07.attention_beyond",
        "07",
        "past the training lengths the attention model degrades (17-20 more than 0.05 below 13-16) but keeps more "
        "than the model without attention",
        "07 Accuracy against length (asserts), markdown after it",
        lambda seed: {
            "attention_17_20": gru_attention(seed)["buckets"]["17-20"],
            "attention_13_16": gru_attention(seed)["buckets"]["13-16"],
            "gru_17_20": gru_same_budget(seed)["buckets"]["17-20"],
        },
        lambda v: v["gru_17_20"] < v["attention_17_20"] < v["attention_13_16"] - 0.05,
    ),
    Claim(
        "07.anti_diagonal",
        "07",
        "the attention argmax sits on the mirrored position n-1-t for >= 0.9 of the symbol-writing test steps",
        "07 What the attention looks at (asserts)",
        lambda seed: {"mirror_share": gru_attention(seed)["mirror_share"]},
        lambda v: v["mirror_share"] >= 0.9,
    ),
    Claim(
        "07.leak",
        "07",
        "trained 30 steps with decoder_input = target: teacher-forced > 0.95, free-running exact < 0.02 and "
        "token < 0.3; the correctly trained attention model >= 0.97 exact free-running",
        "07 Common pitfalls 1 (asserts); guide 07",
        lambda seed: leaky_gru(seed) | {"fixed_exact": gru_attention(seed)["sample_exact"]},
        lambda v: (
            v["teacher_forced"] > 0.95 and v["free_exact"] < 0.02 and v["free_token"] < 0.3 and v["fixed_exact"] >= 0.97
        ),
    ),
    # ---- 08 --------------------------------------------------------------------------------------
    Claim(
        "08.transformer_fits",
        "08",
        "the one-layer Transformer reaches >= 0.99 exact on 4-16 within its recipe's steps",
        "08 Train it (asserts); All three models (asserts)",
        transformer,
        lambda v: v["steps"] <= v["budget"] and v["exact_4_16"] >= 0.99,
    ),
    Claim(
        "08.two_cells_wide",
        "08",
        "cross-attention argmax (heads averaged) on n-1-t or n-t for >= 0.8 of steps, and every head's argmax "
        "often on n-t rather than n-1-t (band share minus exact share > 0.1)",
        "08 Cross-attention heads (asserts) and markdown after it; guide 08",
        lambda seed: {k: transformer(seed)[k] for k in ("band_averaged", "per_head_exact", "per_head_band")},
        lambda v: (
            v["band_averaged"] >= 0.8
            and all(b - e > 0.1 for e, b in zip(v["per_head_exact"], v["per_head_band"], strict=True))
        ),
    ),
    Claim(
        "08.no_positions",
        "08",
        "without positional encoding, 100 training steps leave exact accuracy < 0.05 on the test set",
        "08 Ablation: no positional encoding (asserts)",
        no_positions,
        lambda v: v["exact"] < 0.05,
    ),
    Claim(
        "08.embedding_trap",
        "08",
        "length 8, at most 200 steps: the plain model reaches >= 0.9 exact in fewer steps; x sqrt(d_model) on "
        "N(0, 1) embeddings stays < 0.5",
        "08 The embedding-scale trap (asserts); Common pitfalls",
        embedding_trap,
        lambda v: (
            v["plain"]["exact"] >= 0.9 and v["scaled"]["exact"] < 0.5 and v["plain"]["steps"] < v["scaled"]["steps"]
        ),
    ),
    Claim(
        "08.embedding_trap_control",
        "08",
        "control: the same x sqrt(d_model) with embeddings initialized N(0, 1/d_model) learns like the plain model "
        "(>= 0.99 exact within 200 steps), so the cause is the embeddings' size against the positions",
        "08 The embedding-scale trap ('scale only if you also initialize them small'); objective 3",
        embedding_trap,
        lambda v: v["scaled_small_init"]["exact"] >= 0.99,
    ),
    Claim(
        "08.short_cliff",
        "08",
        "trained on 4-12: all three models >= 0.98 exact there; the Transformer < 0.02 on 14-16 while the GRU with "
        "attention keeps > 0.2 at length 14",
        "08 Beyond the training lengths (asserts); guide 08",
        short_models,
        lambda v: (
            all(v[name]["exact_4_12"] >= 0.98 for name in v)
            and v["transformer_short"]["exact_14_16"] < 0.02
            and v["gru_attention_short"]["exact_14"] > 0.2
        ),
    ),
    Claim(
        "08.rpe_generalizes",
        "08",
        "randomized positions (transformer_short_rpe's recipe: one shared draw, a longer run) fit 4-12 in more steps "
        "than plain positions and keep > 0.5 exact on 13-16, more than 0.4 above plain positions",
        "08 Beyond the training lengths (asserts, 'observed with this checkpoint')",
        short_models,
        lambda v: (
            v["transformer_short_rpe"]["exact_4_12"] >= 0.98
            and v["transformer_short_rpe"]["steps"] > v["transformer_short"]["steps"]
            and v["transformer_short_rpe"]["exact_13_16"] > 0.5
            and v["transformer_short_rpe"]["exact_13_16"] > v["transformer_short"]["exact_13_16"] + 0.4
        ),
    ),
    Claim(
        "08.rpe_control_same_run",
        "08",
        "control for the randomized positions: plain positions trained with the same long run (transformer_short_rpe's "
        "recipe without random_positions, all its steps) fit 4-12 (>= 0.98) and stay < 0.1 exact on 13-16",
        "08 Beyond the training lengths ('its training run also differs'); guide 08",
        plain_positions_long_run,
        lambda v: (
            v["steps"] == checkpoints.PRETRAINED["transformer_short_rpe"][2]["steps"]
            and v["exact_4_12"] >= 0.98
            and v["exact_13_16"] < 0.1
        ),
    ),
    Claim(
        "08.transformer_17_20",
        "08",
        "the Transformer trained on 4-16 fails on most sequences of 17-20 (< 0.5 exact), below the GRU with attention",
        "08 All three models (asserts); Common pitfalls",
        lambda seed: {
            "transformer_17_20": transformer(seed)["buckets"]["17-20"],
            "gru_attention_17_20": gru_attention(seed)["buckets"]["17-20"],
        },
        lambda v: v["transformer_17_20"] < 0.5 and v["transformer_17_20"] < v["gru_attention_17_20"],
    ),
    Claim(
        "08.gru_longer_budget",
        "08",
        "the GRU without attention, trained with its own recipe (no early stop), stays < 0.5 exact on 4-16",
        "08 All three models (asserts)",
        gru_full_recipe,
        lambda v: v["exact_4_16"] < 0.5,
    ),
]


def run_claims(claims: list[Claim], seeds: list[int]) -> list[dict]:
    """Measure every claim on every seed: ``{"claim", "name", "lesson", "source", "seeds", "held", "values"}``."""
    rows = []
    start = time.perf_counter()
    for claim in claims:
        values = [claim.measure(seed) for seed in seeds]
        print(f"[{time.perf_counter() - start:6.0f} s] measured {claim.name}", file=sys.stderr, flush=True)
        rows.append(
            {
                "claim": claim.text,
                "name": claim.name,
                "lesson": claim.lesson,
                "source": claim.source,
                "seeds": list(seeds),
                "held": [bool(claim.holds(v)) for v in values],
                "values": values,
            }
        )
    return rows


def select(only: list[str] | None, quick: bool) -> list[Claim]:
    """The claims to run: those named in ``only`` (a name or a prefix such as "06."), else all (or the quick ones)."""
    claims = [c for c in CLAIMS if not quick or c.quick]
    if only:
        unknown = [o for o in only if not any(c.name == o or c.name.startswith(o) for c in CLAIMS)]
        if unknown:
            raise ValueError(f"no claim named {unknown[0]!r}; names: {', '.join(c.name for c in CLAIMS)}")
        claims = [c for c in claims if any(c.name == o or c.name.startswith(o) for o in only)]
    return claims


def table(rows: list[dict]) -> str:
    """A readable table: name, lesson, seeds held / run, and the claim."""
    lines = [f"{'claim':<30} {'lesson':>6} {'held':>6}  statement", "-" * 100]
    for row in rows:
        held = f"{sum(row['held'])}/{len(row['held'])}"
        mark = (
            ""
            if all(row["held"])
            else "  <-- not on every seed: "
            + ", ".join(str(s) for s, h in zip(row["seeds"], row["held"], strict=True) if not h)
        )
        lines.append(f"{row['name']:<30} {row['lesson']:>6} {held:>6}  {row['claim']}{mark}")
    return "\n".join(lines)


def markdown(rows: list[dict]) -> str:
    """The README's table: claim, lesson, seeds held / seeds run, and the seeds where it did not hold."""
    lines = ["| claim | lesson | held / run | not held on seeds |", "|---|---|---|---|"]
    for row in rows:
        missed = [str(s) for s, h in zip(row["seeds"], row["held"], strict=True) if not h]
        text = row["claim"].replace("|", "\\|")
        lines.append(
            f"| `{row['name']}`: {text} | {row['lesson']} | {sum(row['held'])} / {len(row['held'])} | "
            f"{', '.join(missed) or '-'} |"
        )
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
    args = parser.parse_args(argv)
    if any(s < 0 for s in args.seeds):
        parser.error(f"--seeds must be non-negative but are {args.seeds}")
    if args.threads < 1:
        parser.error(f"--threads must be at least 1 but is {args.threads}")
    try:
        claims = select(args.only, args.quick)
    except ValueError as error:
        parser.error(str(error))
    if args.list:
        for c in claims:
            print(f"{c.name:<30} {c.lesson:>5}  {c.text}  [{c.source}]")
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
        f"\n{sum(all(r['held']) for r in rows)} of {len(rows)} claims held on every seed "
        f"(seeds {' '.join(map(str, args.seeds))}; torch threads {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; {seconds:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
