"""Lesson 07's experiments (``notebooks/07_seq2seq_rnn_attention.ipynb``) and the claims they back.

Moved as they were from ``benchmarks/claims.py``; the lesson's owner rewrites them into the functions the lesson
calls (``lessons_05_08_shared.md`` §4.5, ``lesson_07.md`` §1). The models train with the package's public recipes
(``training.recipe(kind)``): the seed sets the model's initialization (``env.set_seed``) and the training batches
(``TrainConfig.seed``); the lesson's own run is seed 0.
"""

from __future__ import annotations

import time

from course_utils import data, env
from course_utils.experiments._claim import Claim
from course_utils.reversal import checkpoints, decoding, training


def _r(x: float, digits: int = 4) -> float:
    return round(float(x), digits)


def _train(kind: str, seed: int, **recipe_overrides):
    """Build ``kind`` after ``env.set_seed(seed)``, train it with its recipe (batches seeded by ``seed``).

    Returns the model, the TrainResult and the CPU seconds of this process during training.
    """
    env.set_seed(seed)
    model = checkpoints.build_model(kind)
    cpu_start = time.process_time()
    run = training.train(model, training.recipe(kind, seed=seed, **recipe_overrides), progress=False)
    return model, run, time.process_time() - cpu_start


def _buckets(result) -> dict:
    return {f"{lo}-{hi}": _r(result.bucket(lo, hi)[1]) for lo, hi in data.LENGTH_BUCKETS}


def _mirror_share(model, splits) -> float:
    """Share of symbol-writing test steps whose attention argmax is on the mirrored position n-1-t."""
    test_batch = data.collate(splits["test"])
    _, weights = decoding.greedy_decode(model, test_batch.src, test_batch.src_lengths, return_attention=True)
    return _r(decoding.mirror_shares(weights, test_batch.src_lengths)["mirror"])


def gru_same_budget(seed: int = 0) -> dict:
    """The GRU without attention, trained for the attention model's step budget."""
    splits = data.load_splits()
    budget = training.recipe("gru_attention").steps
    model, run, cpu_seconds = _train("gru", seed, steps=budget)
    result = training.evaluate(model, splits["test"] + splits["test_long"])
    return {
        "steps": run.steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
    } | {"buckets": _buckets(result)}


def gru_attention(seed: int = 0) -> dict:
    """The GRU with additive attention, trained with its recipe."""
    splits = data.load_splits()
    model, run, cpu_seconds = _train("gru_attention", seed)
    result = training.evaluate(model, splits["test"] + splits["test_long"])
    sample = splits["test"][::5]  # lesson 07's pitfall sample
    return {
        "steps": run.steps,
        "budget": training.recipe("gru_attention").steps,
        "seconds": _r(run.seconds, 1),
        "cpu_seconds": _r(cpu_seconds, 1),
        "exact_4_16": _r(result.bucket(4, 16)[1]),
        "buckets": _buckets(result),
        "mirror_share": _mirror_share(model, splits),
        "sample_exact": _r(training.evaluate(model, sample).exact_accuracy),
    }


def leaky_gru(seed: int = 0) -> dict:
    """Pitfall 1: the GRU trained 30 steps with decoder_input = target."""
    env.set_seed(seed)
    model = checkpoints.build_model("gru")
    training.train(model, training.recipe("gru", steps=30, leak=True, seed=seed), val=[], progress=False)
    sample = data.load_splits()["test"][::5]
    free = training.evaluate(model, sample)
    return {
        "teacher_forced": _r(training.teacher_forced_accuracy(model, sample, leak=True)),
        "free_token": _r(free.token_accuracy),
        "free_exact": _r(free.exact_accuracy),
    }


CLAIMS: list[Claim] = [
    Claim(
        "07.gru_collapses",
        "07",
        "without attention, on the attention model's step budget: exact < 0.6 on 4-16, and < 0.1 on 13-16 where 4-8 is > 0.1",
        "07 Without attention (asserts), Accuracy against length (asserts)",
        (gru_same_budget,),
        lambda seed, run: run(gru_same_budget, seed),
        lambda v: v["exact_4_16"] < 0.6 and v["buckets"]["13-16"] < 0.1 < v["buckets"]["4-8"],
    ),
    Claim(
        "07.attention_fits",
        "07",
        "with attention, within its step budget: >= 0.97 exact on 4-16, >= 0.95 on each bucket up to 16, "
        "and more than 0.3 above the model without attention",
        "07 With attention, same budget (asserts); Accuracy against length (asserts)",
        (
            gru_attention,
            gru_same_budget,
        ),
        lambda seed, run: run(gru_attention, seed) | {"gru_exact_4_16": run(gru_same_budget, seed)["exact_4_16"]},
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
        (
            gru_attention,
            gru_same_budget,
        ),
        lambda seed, run: {
            "attention_17_20": run(gru_attention, seed)["buckets"]["17-20"],
            "attention_13_16": run(gru_attention, seed)["buckets"]["13-16"],
            "gru_17_20": run(gru_same_budget, seed)["buckets"]["17-20"],
        },
        lambda v: v["gru_17_20"] < v["attention_17_20"] < v["attention_13_16"] - 0.05,
    ),
    Claim(
        "07.anti_diagonal",
        "07",
        "the attention argmax sits on the mirrored position n-1-t for >= 0.9 of the symbol-writing test steps",
        "07 What the attention looks at (asserts)",
        (gru_attention,),
        lambda seed, run: {"mirror_share": run(gru_attention, seed)["mirror_share"]},
        lambda v: v["mirror_share"] >= 0.9,
    ),
    Claim(
        "07.leak",
        "07",
        "trained 30 steps with decoder_input = target: teacher-forced > 0.95, free-running exact < 0.02 and "
        "token < 0.3; the correctly trained attention model >= 0.97 exact free-running",
        "07 Common pitfalls 1 (asserts); guide 07",
        (
            leaky_gru,
            gru_attention,
        ),
        lambda seed, run: run(leaky_gru, seed) | {"fixed_exact": run(gru_attention, seed)["sample_exact"]},
        lambda v: (
            v["teacher_forced"] > 0.95 and v["free_exact"] < 0.02 and v["free_token"] < 0.3 and v["fixed_exact"] >= 0.97
        ),
    ),
]
