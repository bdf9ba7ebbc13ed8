"""Lesson 05's experiments (``notebooks/05_inside_the_heads.ipynb``) and the claims they back.

Moved as they were from ``benchmarks/claims.py`` and ``benchmarks/head_roles.py`` (the lesson's owner rewrites them
into the functions the lesson calls: ``lessons_05_08_shared.md`` §4, ``lesson_05.md`` §1.4). Only the two rate
claims already follow the plan (§5): ``05.cheap_head_common`` and ``05.spare_head_varies``.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import attention, env, heads, role_task
from course_utils.experiments._claim import Claim

TEST_SEED = 12345  # the lesson's 512 test sequences


def _r(x: float, digits: int = 4) -> float:
    return round(float(x), digits)


def untrained_layer(seed: int = 0) -> dict:
    """Lesson 05's fresh layer on "the cat sat on the mat", embedding and layer drawn from ``seed``.

    Also the lesson's seed loop: 8 initialization seeds on this input, and which head is most "self-attentive".
    """
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


def role_model(seed: int = 0) -> dict:
    """Train lesson 05's toy with one training seed and return its role measurements (was head_roles.measure_seed)."""
    test_task = role_task.make_role_task(512, seed=TEST_SEED)
    model, losses = role_task.train_role_model(seed=seed)
    accuracy = role_task.role_accuracy(model, test_task)
    with torch.no_grad():
        _, weights = model(test_task.tokens)  # (batch, heads, seq_len, seq_len)
    scores = heads.head_role_scores(weights, match_ids=test_task.shapes)
    similarity = heads.head_similarity(weights)  # (heads, heads)
    entropy = heads.head_entropy(weights)  # (heads,)
    role_head = {role: int(np.argmax(scores[role])) for role in role_task.TARGETS}
    distinct = sorted(set(role_head.values()))
    roles_held = (
        min(accuracy.values()) > 0.95
        and len(distinct) == 3
        and all(scores[role][h] > 0.75 for role, h in role_head.items())
        and all(similarity[a, b] < 0.3 for a in distinct for b in distinct if a != b)
        and all(entropy[h] < 0.25 * heads.max_entropy(weights.shape[-1]) for h in distinct)
    )
    num_heads = similarity.shape[0]
    spare = [h for h in range(num_heads) if h not in distinct]
    spare_similarity = (
        max(float(similarity[s, o]) for s in spare for o in range(num_heads) if o != s) if spare else float("nan")
    )
    cheap = []  # heads that can be switched off alone at a cost below 0.05 on every question
    for h in range(num_heads):
        with heads.ablate_heads(model.attention, h):
            ablated = role_task.role_accuracy(model, test_task)
        if all(accuracy[name] - ablated[name] < 0.05 for name in role_task.TARGETS):
            cheap.append(h)
    role_heads = {role: [h for h in range(num_heads) if scores[role][h] > 0.5] for role in role_task.TARGETS}
    ablation_held = True  # switching off a role's heads drops that answer below 0.5 and keeps the others > 0.9
    for role, hs in role_heads.items():
        with heads.ablate_heads(model.attention, hs):
            without = role_task.role_accuracy(model, test_task)
        others = min(without[r] for r in role_task.TARGETS if r != role)
        ablation_held = ablation_held and without[role] < 0.5 and others > 0.9
    return {
        "seed": seed,
        "loss_ratio": round(float(losses[-1] / losses[0]), 4),  # last step's loss / first step's
        "role_entropy_max": round(float(max(entropy[h] for h in distinct)), 4),
        "ablation_held": bool(ablation_held),
        "cheap_heads": cheap,
        "min_accuracy": round(float(min(accuracy.values())), 4),
        "role_head": role_head,
        "roles_held": bool(roles_held),
        "spare_heads": spare,
        "spare_max_similarity": round(spare_similarity, 4),
        "spare_entropy": round(float(np.mean([entropy[s] for s in spare])), 4) if spare else None,
        "spare_copies": bool(spare_similarity > 0.9),
    }


def _roles(name: str, key: str, text: str, source: str) -> Claim:
    def measure(seed, run):
        row = run(role_model, seed)
        return {k: row[k] for k in ("min_accuracy", "role_head", "role_entropy_max", "spare_max_similarity")} | {
            key: bool(row[key])
        }

    return Claim(name, "05", text, source, (role_model,), measure, holds=lambda v: bool(v[key]), quick=True)


def _spare(seed, run):
    return {"spare_max_similarity": run(role_model, seed)["spare_max_similarity"]}


CLAIMS: list[Claim] = [
    Claim(
        "05.untrained_uniform",
        "05",
        "an untrained layer is near uniform: largest weight < 4/6, every head's entropy > 0.9 ln 6, "
        "every pair of heads similarity > 0.7",
        "05 An untrained layer / Entropy / Head similarity (asserts)",
        (untrained_layer,),
        lambda seed, run: run(untrained_layer, seed),
        holds=lambda v: (
            v["max_weight"] < 4 / v["seq_len"] and v["min_entropy_over_max"] > 0.9 and v["min_similarity"] > 0.7
        ),
        quick=True,
    ),
    Claim(
        "05.self_head_moves",
        "05",
        "the most 'self-attentive' untrained head moves with the initialization seed (>= 3 different heads "
        "over 8 seeds) and no self score reaches 2/6",
        "05 Which head looks self-attentive depends on the seed (asserts)",
        (untrained_layer,),
        lambda seed, run: run(untrained_layer, seed),
        holds=lambda v: len(v["self_heads"]) >= 3 and v["strongest_self"] < 2 / v["seq_len"],
        quick=True,
    ),
    Claim(
        "05.role_loss",
        "05",
        "300 training steps bring the role model's loss below 0.05 of its first value",
        "05 Real specialization, training cell (asserts)",
        (role_model,),
        lambda seed, run: {"loss_ratio": run(role_model, seed)["loss_ratio"]},
        holds=lambda v: v["loss_ratio"] < 0.05,
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
    Claim(
        "05.cheap_head_common",
        "05",
        "some head can be switched off alone at a cost below 0.05 on every question, on at least 3 of the seeds run",
        "05 Switching heads off (stated for the lesson's seed only)",
        (role_model,),
        lambda seed, run: {"cheap_heads": run(role_model, seed)["cheap_heads"]},
        holds_over=lambda values: sum(bool(v["cheap_heads"]) for v in values) >= 3,
        quick=True,
    ),
    Claim(
        "05.spare_head_varies",
        "05",
        "the spare head is a near-copy of a role head (similarity > 0.9) on at least one seed and not on at least one",
        "05 stated as an observation of the lesson's seed; guide 05",
        (role_model,),
        _spare,
        holds_over=lambda values: (
            any(v["spare_max_similarity"] > 0.9 for v in values)
            and any(not v["spare_max_similarity"] > 0.9 for v in values)
        ),
        quick=True,
    ),
]
