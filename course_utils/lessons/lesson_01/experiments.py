"""Lesson 01's experiments: what the score scale does (variance, saturation) and what U[0, 1) weights do.

``notebooks/01_attention_numpy.ipynb`` runs :func:`score_scaling` and :func:`init_setups` once (seed 0, with the
student's checked ``softmax_along`` and ``attend``); ``benchmarks/claims.py`` runs the same functions over seeds
through :data:`CLAIMS`. NumPy only; every number is a float64 mean, portable at three significant digits.

Examples
--------
>>> scaling = score_scaling(seed=0, d_heads=(1, 64), n_queries=200)
>>> scaling.d_heads
(1, 64)
>>> round(scaling.var_scaled[1])
1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from course_utils import numpy_attention
from course_utils.checking.claim import Claim

__all__ = [
    "row_distance",
    "output_cos",
    "ScoreScaling",
    "score_scaling",
    "INIT_SETUPS",
    "INIT_COLUMNS",
    "init_setups",
    "CLAIMS",
]

D_HEADS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
_CHUNK = 250  # queries drawn at a time: keeps the (queries, k_len, d_head) keys under 35 MB at d_head = 1024


def row_distance(weights) -> float:
    """Mean total-variation distance ½ Σ_j |w_ij - w_i'j| over pairs of rows of ``weights`` (q_len, k_len).

    0 when every row is the same, 1 when two rows share no key.
    """
    w = np.asarray(weights, dtype=float)
    i, j = np.triu_indices(len(w), k=1)
    return float(0.5 * np.abs(w[i] - w[j]).sum(axis=-1).mean())


def output_cos(output) -> float:
    """Mean cosine similarity between pairs of rows of ``output`` (seq_len, d_value): 1 = all the same direction."""
    out = np.asarray(output, dtype=float)
    unit = out / np.linalg.norm(out, axis=-1, keepdims=True)
    i, j = np.triu_indices(len(out), k=1)
    return float((unit[i] * unit[j]).sum(axis=-1).mean())


@dataclass(frozen=True)
class ScoreScaling:
    """Per ``d_head``: the variance of ``q · k`` before and after dividing by ``sqrt(d_head)``, and what the softmax
    of a row of ``k_len`` such scores looks like (its mean largest weight, its mean sensitivity ``1 - Σ_j p_j²``),
    unscaled and scaled. ``measured`` holds the same lists rounded to 4 decimals (JSON-able)."""

    d_heads: tuple
    var_raw: tuple
    var_scaled: tuple
    max_weight_unscaled: tuple
    max_weight_scaled: tuple
    sensitivity_unscaled: tuple
    sensitivity_scaled: tuple
    measured: dict


def _sensitivity(p) -> np.ndarray:
    """1 - Σ_j p_j² per row: Σ_j p_j (1 - p_j), how far a row's weights can still move when its scores move."""
    return 1.0 - (p**2).sum(axis=-1)


def score_scaling(
    seed: int = 0, d_heads=D_HEADS, n_queries: int = 2000, k_len: int = 16, *, softmax=numpy_attention.softmax
) -> ScoreScaling:
    """Random unit-variance queries and keys at each ``d_head``: one query against ``k_len`` keys, ``n_queries`` times.

    ``softmax(x, axis=-1)`` normalizes the rows (the lesson passes the student's checked ``softmax_along``).
    """
    rng = np.random.default_rng(seed)
    columns: dict = {name: [] for name in ScoreScaling.__dataclass_fields__ if name not in ("d_heads", "measured")}
    for d in d_heads:
        q = rng.standard_normal((n_queries, d))  # (n_queries, d_head): one query per trial
        raw = np.empty((n_queries, k_len))
        for start in range(0, n_queries, _CHUNK):
            stop = min(start + _CHUNK, n_queries)
            k = rng.standard_normal((stop - start, k_len, d))  # (chunk, k_len, d_head)
            raw[start:stop] = np.einsum("nd,nkd->nk", q[start:stop], k)  # (chunk, k_len): q · k for every key
        scaled = raw / np.sqrt(d)
        p_raw, p_scaled = np.asarray(softmax(raw, axis=-1)), np.asarray(softmax(scaled, axis=-1))
        columns["var_raw"].append(float(raw.var()))
        columns["var_scaled"].append(float(scaled.var()))
        columns["max_weight_unscaled"].append(float(p_raw.max(axis=-1).mean()))
        columns["max_weight_scaled"].append(float(p_scaled.max(axis=-1).mean()))
        columns["sensitivity_unscaled"].append(float(_sensitivity(p_raw).mean()))
        columns["sensitivity_scaled"].append(float(_sensitivity(p_scaled).mean()))
    measured = {"d_heads": list(d_heads)} | {name: [round(v, 4) for v in vs] for name, vs in columns.items()}
    return ScoreScaling(tuple(d_heads), *(tuple(vs) for vs in columns.values()), measured)


def _uniform(gen, shape):
    return gen.random(shape)  # U[0, 1), like np.random.rand


def _normal(gen, shape):
    return gen.standard_normal(shape)


def _scaled_normal(gen, shape):
    return gen.standard_normal(shape) / np.sqrt(shape[0])  # N(0, 1/d_model)


def _centred_uniform(gen, shape):
    return gen.random(shape) - 0.5  # the same U[0, 1) draws, zero mean


INIT_SETUPS = {
    "X ~ U[0,1), W ~ U[0,1)": (_uniform, _uniform),
    "X ~ N(0,1), W ~ U[0,1)": (_normal, _uniform),
    "X ~ N(0,1), W ~ N(0,1/d)": (_normal, _scaled_normal),
    "X ~ U[0,1), W ~ N(0,1/d)": (_uniform, _scaled_normal),
    "X, W ~ U[0,1) - 1/2": (_centred_uniform, _centred_uniform),
}
"""The set-ups of the lesson's table: how the inputs X and the weights W_q, W_k, W_v are drawn (the last is the
control: the first row's draws minus their mean)."""

INIT_COLUMNS = ("row distance", "keys used", "max weight", "Var(Q)", "output cos")
"""The table's columns, each a mean over the draws."""


def init_setups(
    seed: int = 0,
    d_model: int = 64,
    seq_len: int = 8,
    n_draws: int = 20,
    *,
    attend=numpy_attention.scaled_dot_product_attention,
) -> dict[str, dict[str, float]]:
    """Self-attention at initialization for each set-up of :data:`INIT_SETUPS`, averaged over ``n_draws`` draws.

    Draw ``n`` of every set-up uses the generator ``np.random.default_rng(1000 * seed + n)`` (the same random
    stream for every set-up). ``attend(Q, K, V) -> (output, weights)`` is scaled dot-product attention (the lesson
    passes the student's checked ``attend``). Returns ``{set-up: {column: mean}}`` with the columns of
    :data:`INIT_COLUMNS`.
    """
    table = {}
    for name, (draw_x, draw_w) in INIT_SETUPS.items():
        rows = []
        for n in range(n_draws):
            gen = np.random.default_rng(1000 * seed + n)
            X = draw_x(gen, (seq_len, d_model))  # (seq_len, d_model)
            W_q, W_k, W_v = (draw_w(gen, (d_model, d_model)) for _ in range(3))  # each (d_model, d_model)
            Q = X @ W_q  # (seq_len, d_model) @ (d_model, d_model) -> (seq_len, d_model)
            output, weights = attend(Q, X @ W_k, X @ W_v)
            weights = np.asarray(weights)
            keys_used = len(set(weights.argmax(axis=-1).tolist()))  # distinct keys that some row weights most
            rows.append([row_distance(weights), keys_used, weights.max(axis=-1).mean(), Q.var(), output_cos(output)])
        table[name] = {column: float(v) for column, v in zip(INIT_COLUMNS, np.mean(rows, axis=0), strict=True)}
    return table


# ---------------------------------------------------------------------------------------------------------------
# claims: what the lesson states, re-run over seeds by benchmarks/claims.py
# ---------------------------------------------------------------------------------------------------------------
_SCALE = "01 · Why divide by √d_head"
_INIT = "01 · Projection weights: scale 1/√d_model, not U[0, 1)"


def _scaling(seed, run):
    return run(score_scaling, seed).measured


def _variance_holds(m) -> bool:
    raw = all(abs(v / d - 1) < 0.15 for v, d in zip(m["var_raw"], m["d_heads"], strict=True))
    return raw and all(abs(v - 1) < 0.15 for v in m["var_scaled"])


def _saturation_holds(m) -> bool:
    unscaled = m["max_weight_unscaled"]
    return (
        all(b > a for a, b in zip(unscaled, unscaled[1:], strict=False))
        and unscaled[-1] > 0.9
        and max(m["max_weight_scaled"]) < 0.3
        and all(b < a for a, b in zip(m["sensitivity_unscaled"], m["sensitivity_unscaled"][1:], strict=False))
        and m["sensitivity_unscaled"][-1] < 0.25 * m["sensitivity_scaled"][-1]
        and max(m["sensitivity_scaled"]) - min(m["sensitivity_scaled"]) < 0.05
    )


def _init(seed, run):
    table = run(init_setups, seed)
    return {name: {column: round(v, 4) for column, v in row.items()} for name, row in table.items()}


def _uniform_alike_holds(m) -> bool:
    bad, control = m["X ~ U[0,1), W ~ U[0,1)"], m["X, W ~ U[0,1) - 1/2"]
    return (
        bad["row distance"] < 0.02
        and bad["keys used"] < 1.5
        and control["row distance"] > 0.15
        and control["keys used"] > 3
    )


CLAIMS = [
    Claim(
        name="01.score_variance",
        lesson="01",
        text="with independent unit-variance entries, Var(q · k) ≈ d_head, and Var(q · k / sqrt(d_head)) ≈ 1, "
        "within 15% at every d_head from 1 to 1024",
        source=_SCALE,
        uses=(score_scaling,),
        measure=_scaling,
        holds=_variance_holds,
        quick=True,
    ),
    Claim(
        name="01.saturation",
        lesson="01",
        text="without the scale the softmax saturates as d_head grows (mean largest weight rising to above 0.9 at "
        "1024) and its sensitivity 1 - Σ p² falls at every d_head (to below a quarter of the scaled one); with the "
        "scale, the only "
        "change, both stay flat (largest weight below 0.3, sensitivity within 0.05)",
        source=_SCALE,
        uses=(score_scaling,),
        measure=_scaling,
        holds=_saturation_holds,
        quick=True,
    ),
    Claim(
        name="01.uniform_rows_alike",
        lesson="01",
        text="U[0, 1) inputs and weights make every row of weights alike (row distance below 0.02, one key used) "
        "because of their shared positive mean: the same draws minus 1/2 give rows that differ (row distance "
        "above 0.15, more than 3 keys used)",
        source=_INIT,
        uses=(init_setups,),
        measure=_init,
        holds=_uniform_alike_holds,
        quick=True,
    ),
]
