"""Lesson 08's experiments (``notebooks/08_transformer_reversal.ipynb``) and the claims they back.

Moved as they were from ``benchmarks/claims.py``; the lesson's owner rewrites them into the functions the lesson
calls (``lessons_05_08_shared.md`` §4.5, ``lesson_08.md`` §1.2). The models train with the package's public recipes
(``training.recipe(kind)``, and ``checkpoints.PRETRAINED`` for the models trained on lengths 4-12): the seed sets the
model's initialization (``env.set_seed``) and the training batches (``TrainConfig.seed``); the lesson's own run is
seed 0.
"""

from __future__ import annotations

import time

import torch

from course_utils import data, env
from course_utils.experiments._claim import Claim
from course_utils.reversal import checkpoints, decoding, training


def _r(x: float, digits: int = 4) -> float:
    return round(float(x), digits)


def _train(kind: str, seed: int, model_config: dict | None = None, **recipe_overrides):
    """Build ``kind`` after ``env.set_seed(seed)``, train it with its recipe (batches seeded by ``seed``).

    Returns the model, the TrainResult and the CPU seconds of this process during training.
    """
    env.set_seed(seed)
    model = checkpoints.build_model(kind, **(model_config or {}))
    cpu_start = time.process_time()
    run = training.train(model, training.recipe(kind, seed=seed, **recipe_overrides), progress=False)
    return model, run, time.process_time() - cpu_start


def _buckets(result) -> dict:
    return {f"{lo}-{hi}": _r(result.bucket(lo, hi)[1]) for lo, hi in data.LENGTH_BUCKETS}


def transformer(seed: int = 0) -> dict:
    """The Transformer, trained with its recipe."""
    splits = data.load_splits()
    model, run, cpu_seconds = _train("transformer", seed)
    result = training.evaluate(model, splits["test"] + splits["test_long"])
    test_batch = data.collate(splits["test"])
    _, weights = decoding.greedy_decode(model, test_batch.src, test_batch.src_lengths, return_attention=True)
    averaged = decoding.mirror_shares(weights, test_batch.src_lengths)
    per_head = decoding.mirror_shares(weights, test_batch.src_lengths, per_head=True)
    return {
        "steps": run.steps,
        "budget": training.recipe("transformer").steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
        "buckets": _buckets(result),
        "band_averaged": _r(averaged["mirror_or_next"]),
        "per_head_exact": [_r(x) for x in per_head["mirror"]],
        "per_head_band": [_r(x) for x in per_head["mirror_or_next"]],
    }


def gru_attention(seed: int = 0) -> dict:
    """The GRU with additive attention trained with its recipe (the model lesson 08 compares with)."""
    splits = data.load_splits()
    model, _, _ = _train("gru_attention", seed)
    return {"buckets": _buckets(training.evaluate(model, splits["test"] + splits["test_long"]))}


def no_positions(seed: int = 0) -> dict:
    """Lesson 08, *Ablation*: the Transformer without positional encoding, 100 steps."""
    model, run, cpu_seconds = _train("transformer", seed, {"positional_encoding": False}, steps=100, target_exact=None)
    result = training.evaluate(model, data.load_splits()["test"])
    return {"steps": run.steps, "token": _r(result.token_accuracy), "exact": _r(result.exact_accuracy)}


def embedding_trap(seed: int = 0) -> dict:
    """Lesson 08, *The embedding-scale trap*, length 8, at most 200 steps; with a control.

    The control keeps the sqrt(d_model) scale and changes only the suspected cause, the size of the
    embeddings against the positions: embeddings initialized N(0, 1/d_model), so that the scaled product
    has unit-variance entries (as tensor2tensor and fairseq initialize them).
    """
    length_8 = [s for s in data.load_splits()["test"] if len(s) == 8]
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


def short_models(seed: int = 0) -> dict:
    """Lesson 08, *Beyond the training lengths*: the three models of checkpoints.PRETRAINED trained on 4-12."""
    out = {}
    for name in ("gru_attention_short", "transformer_short", "transformer_short_rpe"):
        kind, model_config, overrides = checkpoints.PRETRAINED[name]
        model, run, cpu_seconds = _train(kind, seed, model_config, **overrides)
        result = training.evaluate(model, data.load_splits()["test"])
        out[name] = {
            "steps": run.steps,
            "exact_4_12": _r(result.bucket(4, 12)[1]),
            "exact_13_16": _r(result.bucket(13, 16)[1]),
            "exact_14_16": _r(result.bucket(14, 16)[1]),
            "exact_14": _r(result.by_length[14][1]),
        }
    return out


def plain_positions_long_run(seed: int = 0) -> dict:
    """Control for lesson 08's randomized positions: plain sinusoidal positions, same long run as the RPE model."""
    _, _, overrides = checkpoints.PRETRAINED["transformer_short_rpe"]
    # the same recipe without random_positions, and no early stop: every one of its steps, as the RPE model takes
    model, run, _ = _train("transformer", seed, None, **{**overrides, "target_exact": None})
    result = training.evaluate(model, data.load_splits()["test"])
    return {
        "steps": run.steps,
        "exact_4_12": _r(result.bucket(4, 12)[1]),
        "exact_13_16": _r(result.bucket(13, 16)[1]),
    }


def gru_full_recipe(seed: int = 0) -> dict:
    """Lesson 08, *All three models*: the GRU without attention with its own recipe (500 steps)."""
    model, run, cpu_seconds = _train("gru", seed)
    result = training.evaluate(model, data.load_splits()["test"] + data.load_splits()["test_long"])
    return {
        "steps": run.steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
    }


CLAIMS: list[Claim] = [
    Claim(
        "08.transformer_fits",
        "08",
        "the one-layer Transformer reaches >= 0.99 exact on 4-16 within its recipe's steps",
        "08 Train it (asserts); All three models (asserts)",
        (transformer,),
        lambda seed, run: run(transformer, seed),
        lambda v: v["steps"] <= v["budget"] and v["exact_4_16"] >= 0.99,
    ),
    Claim(
        "08.two_cells_wide",
        "08",
        "cross-attention argmax (heads averaged) on n-1-t or n-t for >= 0.8 of steps, and every head's argmax "
        "often on n-t rather than n-1-t (band share minus exact share > 0.1)",
        "08 Cross-attention heads (asserts) and markdown after it; guide 08",
        (transformer,),
        lambda seed, run: {k: run(transformer, seed)[k] for k in ("band_averaged", "per_head_exact", "per_head_band")},
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
        (no_positions,),
        lambda seed, run: run(no_positions, seed),
        lambda v: v["exact"] < 0.05,
    ),
    Claim(
        "08.embedding_trap",
        "08",
        "length 8, at most 200 steps: the plain model reaches >= 0.9 exact in fewer steps; x sqrt(d_model) on "
        "N(0, 1) embeddings stays < 0.5",
        "08 The embedding-scale trap (asserts); Common pitfalls",
        (embedding_trap,),
        lambda seed, run: run(embedding_trap, seed),
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
        (embedding_trap,),
        lambda seed, run: run(embedding_trap, seed),
        lambda v: v["scaled_small_init"]["exact"] >= 0.99,
    ),
    Claim(
        "08.short_cliff",
        "08",
        "trained on 4-12: all three models >= 0.98 exact there; the Transformer < 0.02 on 14-16 while the GRU with "
        "attention keeps > 0.2 at length 14",
        "08 Beyond the training lengths (asserts); guide 08",
        (short_models,),
        lambda seed, run: run(short_models, seed),
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
        (short_models,),
        lambda seed, run: run(short_models, seed),
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
        (plain_positions_long_run,),
        lambda seed, run: run(plain_positions_long_run, seed),
        lambda v: (
            v["steps"] == checkpoints.PRETRAINED["transformer_short_rpe"][2]["steps"]
            and v["exact_4_12"] >= 0.98
            and v["exact_13_16"] < 0.1
        ),
        control=True,
    ),
    Claim(
        "08.transformer_17_20",
        "08",
        "the Transformer trained on 4-16 fails on most sequences of 17-20 (< 0.5 exact), below the GRU with attention",
        "08 All three models (asserts); Common pitfalls",
        (
            transformer,
            gru_attention,
        ),
        lambda seed, run: {
            "transformer_17_20": run(transformer, seed)["buckets"]["17-20"],
            "gru_attention_17_20": run(gru_attention, seed)["buckets"]["17-20"],
        },
        lambda v: v["transformer_17_20"] < 0.5 and v["transformer_17_20"] < v["gru_attention_17_20"],
    ),
    Claim(
        "08.gru_longer_budget",
        "08",
        "the GRU without attention, trained with its own recipe (no early stop), stays < 0.5 exact on 4-16",
        "08 All three models (asserts)",
        (gru_full_recipe,),
        lambda seed, run: run(gru_full_recipe, seed),
        lambda v: v["exact_4_16"] < 0.5,
    ),
]
