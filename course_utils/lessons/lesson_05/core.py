"""Lesson 05's first exercises: a row's entropy, switching heads off, the heads' roles, the model's input and the
matching score (``05.row_entropy``, ``05.switch_off``, ``05.role_scores``, ``05.model_input``, ``05.matching_score``).

Moved out of ``exercises.py`` whole (issue 26 section 5): one block per exercise, as there; ``exercises.py`` lists
them in ``EXERCISES``. The section titles both modules use got public names (``_S_ENTROPY`` is ``SECTION_ENTROPY``, ...).
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import heads, role_task
from course_utils.checking import cases
from course_utils.checking.model import Case, Exercise

__all__ = [
    "ROW_ENTROPY",
    "SWITCH_OFF",
    "ROLE_SCORES",
    "MODEL_INPUT",
    "MATCHING_SCORE",
]

SECTION_ENTROPY = "05 · Entropy: how spread out is a head?"
SECTION_CONCAT = "05 · Concatenation and the output projection"
SECTION_ROLES = "05 · Which head does what? Role scores"
SECTION_TASK = "05 · A trained model: a task with three questions"
SECTION_POSITIONS = "05 · Where is each token? Learned position embeddings"
SECTION_TRAINED = "05 · Which head does what, after training?"
SECTION_ABLATION = "05 · Switching heads off: is the role real?"
SECTION_SELF = '05 · Does the same head look "self-attentive" for every seed?'
SECTION_LAYERS = "05 · Multi-head versus multi-layer"


# ---- 05.row_entropy(row) -> float ------------------------------------------------------------------------------
def entropy_cases():
    return [
        Case((np.array([0.0, 1.0, 0.0]),), "one-hot: 0"),
        Case((np.full(8, 1 / 8),), "uniform: ln 8"),
        Case((np.array([0.5, 0.5, 0.0, 0.0]),), "two keys and two zeros: ln 2"),
        Case((np.array([0.7, 0.2, 0.1]),)),
    ]


def row_entropy(row):
    return float(heads.attention_entropy(row))


def entropy_nonzero(row):
    nonzero = row[row > 0]  # 0 · ln 0 = 0: leave the zeros out
    return float(-(nonzero * np.log(nonzero)).sum())


def entropy_where(row):
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(row > 0, row * np.log(row), 0.0)
    return float(-terms.sum())


def entropy_loop(row):
    total = 0.0
    for w in row:
        if w > 0:
            total -= w * np.log(w)
    return float(total)


def entropy_zero_terms(row):
    row = np.asarray(row, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(-(row * np.log(row)).sum())


def entropy_in_bits(row):
    nonzero = row[row > 0]
    return float(-(nonzero * np.log2(nonzero)).sum())


def entropy_no_minus(row):
    nonzero = row[row > 0]
    return float((nonzero * np.log(nonzero)).sum())


ROW_ENTROPY = Exercise(
    id="05.row_entropy",
    fresh=lambda k_len: [np.exp(x) / np.exp(x).sum() for x in [np.random.default_rng(1).normal(size=k_len)]],
    section=SECTION_ENTROPY,
    make_cases=entropy_cases,
    reference=row_entropy,
    variants=(entropy_nonzero, entropy_where, entropy_loop),
    buggy={
        "entropy_zero_terms": entropy_zero_terms,
        "entropy_in_bits": entropy_in_bits,
        "entropy_no_minus": entropy_no_minus,
    },
    hints=(
        "Entropy is -sum of w · ln w over the keys. What should a one-hot row give, and what does NumPy give for "
        "0 * np.log(0)?",
        "The term w · ln w tends to 0 as w goes to 0, so zero weights contribute nothing: leave them out of the sum "
        "(in nats: the natural logarithm).",
        "A boolean index keeps the non-zero weights; sum their w · ln w, change the sign, and return a float.",
    ),
)


# ---- 05.switch_off(concat, heads_off, num_heads) -> Tensor -----------------------------------------------------
def switch_off_cases():
    gen = torch.Generator().manual_seed(50)
    return [
        Case((torch.randn(2, 3, 8, generator=gen), [1], 4), "4 heads of d_head 2, head 1 off"),
        Case((torch.randn(3, 5, 12, generator=gen), [0, 2], 3), "3 heads of d_head 4, heads 0 and 2 off"),
        Case((torch.randn(2, 7, 6, generator=gen), [], 3), "no head off: nothing changes"),
        Case((torch.randn(1, 4, 10, generator=gen), [4], 5), "the last of 5 heads off"),
    ]


def switch_off_driver(answer, concat, heads_off, num_heads):
    """The answer's result, and the concatenation it was handed as it is after the call (it must not change)."""
    given = concat.clone()
    result = answer(given, list(heads_off), num_heads)
    return result, given


def switch_off(concat, heads_off, num_heads):
    return heads.switch_off_heads(concat, heads_off, num_heads)


def switch_off_slices(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = concat.clone()
    for h in heads_off:
        out[..., h * d_head : (h + 1) * d_head] = 0.0  # head h's block of features
    return out


def switch_off_mask(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    keep = torch.ones(num_heads)
    keep[list(heads_off)] = 0.0
    return concat * keep.repeat_interleave(d_head)  # (d_model,) 1 or 0 per feature, broadcast over batch, q_len


def switch_off_view(concat, heads_off, num_heads):
    *lead, d_model = concat.shape
    split = concat.reshape(*lead, num_heads, d_model // num_heads).clone()  # (..., heads, d_head)
    split[..., list(heads_off), :] = 0.0
    return split.reshape(*lead, d_model)


def switch_off_in_place(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    for h in heads_off:
        concat[..., h * d_head : (h + 1) * d_head] = 0.0
    return concat


def switch_off_interleaved(concat, heads_off, num_heads):
    out = concat.clone()
    for h in heads_off:
        out[..., h::num_heads] = 0.0  # every num_heads-th feature: not where head h's features are
    return out


def switch_off_kept(concat, heads_off, num_heads):
    d_head = concat.shape[-1] // num_heads
    out = torch.zeros_like(concat)
    for h in heads_off:
        out[..., h * d_head : (h + 1) * d_head] = concat[..., h * d_head : (h + 1) * d_head]
    return out


SWITCH_OFF = Exercise(
    id="05.switch_off",
    section=SECTION_CONCAT,
    make_cases=switch_off_cases,
    reference=switch_off,
    variants=(switch_off_slices, switch_off_mask, switch_off_view),
    driver=switch_off_driver,
    output_names=("result", "concat after the call"),
    buggy={
        "switch_off_in_place": switch_off_in_place,
        "heads_interleaved": switch_off_interleaved,
        "switch_off_kept_listed": switch_off_kept,
    },
    hints=(
        "Which features of the concatenation did head h write? Count them from the left, d_head at a time.",
        "Head h owns one contiguous block of d_head = d_model // num_heads features; switching it off sets that "
        "block to 0 and leaves every other feature as it was, in a copy.",
        "Clone concat first, then for each listed head assign 0.0 to its block of the last axis with a slice "
        "(the ... index keeps every leading axis).",
    ),
    noun="switch-off",
)


# ---- 05.role_scores(weights) -> (previous, first, self) --------------------------------------------------------
def role_cases():
    rng = np.random.default_rng(5)
    seq_len = 6
    previous = np.eye(seq_len, k=-1)  # query i -> key i - 1
    previous[0, 0] = 1.0  # query 0 has no previous token: let it look at itself
    first = np.zeros((seq_len, seq_len))
    first[:, 0] = 1.0
    patterns = np.stack([previous, first, np.eye(seq_len), np.full((seq_len, seq_len), 1 / seq_len)])
    return [
        Case((patterns[None],), "one sequence: a previous-token, a first-token, a self and a uniform head"),
        Case((rng.dirichlet(np.ones(7), size=(2, 3, 7)),), "2 sequences, 3 heads, 7 tokens, random weights"),
        Case((rng.dirichlet(np.full(5, 0.3), size=(4, 2, 5)),), "4 sequences, 2 heads, 5 tokens, peaked weights"),
    ]


def role_scores(weights):
    scores = heads.head_role_scores(weights)
    return scores["previous"], scores["first"], scores["self"]


def role_scores_index(weights):
    w = np.asarray(weights, dtype=float)  # (batch, heads, seq_len, seq_len)
    i = np.arange(1, w.shape[-1])  # the queries that have a previous token
    previous = w[:, :, i, i - 1].mean(axis=(0, 2))
    first = w[:, :, 1:, 0].mean(axis=(0, 2))
    j = np.arange(w.shape[-1])
    self_score = w[:, :, j, j].mean(axis=(0, 2))
    return previous, first, self_score


def role_scores_diagonal(weights):
    w = np.asarray(weights, dtype=float)
    previous = np.diagonal(w, offset=-1, axis1=2, axis2=3).mean(axis=(0, 2))  # (batch, heads, seq_len - 1)
    self_score = np.diagonal(w, axis1=2, axis2=3).mean(axis=(0, 2))
    first = w[..., 1:, 0].mean(axis=(0, 2))
    return previous, first, self_score


def role_scores_loop(weights):
    w = np.asarray(weights, dtype=float)
    batch, num_heads, seq_len, _ = w.shape
    previous, first, self_score = np.zeros(num_heads), np.zeros(num_heads), np.zeros(num_heads)
    for h in range(num_heads):
        previous[h] = np.mean([w[b, h, i, i - 1] for b in range(batch) for i in range(1, seq_len)])
        first[h] = np.mean([w[b, h, i, 0] for b in range(batch) for i in range(1, seq_len)])
        self_score[h] = np.mean([w[b, h, i, i] for b in range(batch) for i in range(seq_len)])
    return previous, first, self_score


def role_scores_next_diagonal(weights):
    previous, first, self_score = role_scores_index(weights)
    w = np.asarray(weights, dtype=float)
    i = np.arange(w.shape[-1] - 1)
    return w[:, :, i, i + 1].mean(axis=(0, 2)), first, self_score


def role_scores_first_with_query_0(weights):
    previous, _, self_score = role_scores_index(weights)
    return previous, np.asarray(weights, dtype=float)[..., 0].mean(axis=(0, 2)), self_score


ROLE_SCORES = Exercise(
    id="05.role_scores",
    section=SECTION_ROLES,
    make_cases=role_cases,
    reference=role_scores,
    variants=(role_scores_index, role_scores_diagonal, role_scores_loop),
    output_names=("previous", "first", "self"),
    forbidden=("course_utils.heads:head_role_scores", "course_utils.lessons.lesson_05.experiments:course_role_scores"),
    buggy={
        "next_token_diagonal": role_scores_next_diagonal,
        "first_score_counts_query_0": role_scores_first_with_query_0,
    },
    hints=(
        "For query i, which key is the previous token, which the first, which the query itself? Which queries "
        "have a previous token, and for which query are 'first' and 'self' the same key?",
        "Each score is one entry per (sequence, head, query), averaged over the sequences and the queries: "
        "previous over i = 1 .. seq_len - 1 of weights[..., i, i - 1], first over the same queries of key 0, self "
        "over every query of key i.",
        "Integer arrays index a diagonal: with i = np.arange(1, seq_len), weights[:, :, i, i - 1] is "
        "(batch, heads, seq_len - 1); .mean(axis=(0, 2)) leaves one number per head.",
    ),
    noun="role scores",
)


# ---- 05.model_input(model, tokens) -> (batch, seq_len, d_model) --------------------------------------------------
def input_cases():
    config = role_task.RoleModelConfig(seq_len=12, num_shapes=8, num_colours=4, d_model=20, num_heads=4)
    with cases.torch_seeded(51):
        model = role_task.RoleModel(config)
    task = role_task.make_role_task(3, seq_len=8, seed=51)  # 8 of the model's 12 positions
    return [
        Case((model, task.tokens), "3 sequences of 8 tokens (the model has 12 positions)"),
        Case((model, torch.tensor([[5, 9, 5, 14, 5]])), "the same token three times"),
        Case((model, role_task.make_role_task(2, seq_len=12, seed=52).tokens), "every position"),
    ]


def model_input(model, tokens):
    positions = torch.arange(tokens.shape[1])
    return model.token_embedding(tokens) + model.position_embedding(positions)


def model_input_broadcast(model, tokens):
    batch, seq_len = tokens.shape
    positions = torch.arange(seq_len).expand(batch, seq_len)  # (batch, seq_len): 0 .. seq_len - 1 per sequence
    return model.token_embedding(tokens) + model.position_embedding(positions)


def model_input_weights(model, tokens):
    seq_len = tokens.shape[1]
    # (batch, seq_len, d_model) + (seq_len, d_model): the first seq_len rows of the position table
    return model.token_embedding.weight[tokens] + model.position_embedding.weight[:seq_len]


def model_input_no_positions(model, tokens):
    return model.token_embedding(tokens)


def model_input_whole_table(model, tokens):
    return model.token_embedding(tokens) + model.position_embedding.weight.mean(dim=0)


MODEL_INPUT = Exercise(
    id="05.model_input",
    section=SECTION_POSITIONS,
    make_cases=input_cases,
    reference=model_input,
    variants=(model_input_broadcast, model_input_weights),
    buggy={"positions_missing": model_input_no_positions, "positions_averaged": model_input_whole_table},
    hints=(
        "Two tokens with the same id at positions 0 and 2: what would make their inputs differ?",
        "The input of position p is the token's embedding plus row p of model.position_embedding, for "
        "p = 0 .. seq_len - 1 (seq_len of these tokens, which may be fewer than the model's positions).",
        "torch.arange(seq_len) gives the positions; model.position_embedding(positions) is (seq_len, d_model) and "
        "broadcasts over the batch when added to model.token_embedding(tokens).",
    ),
    noun="model input",
)


# ---- 05.matching_score(weights, shapes) -> (heads,) ------------------------------------------------------------
def matching_cases():
    rng = np.random.default_rng(53)
    small = role_task.make_role_task(3, seq_len=8, seed=53)
    other = role_task.make_role_task(2, seq_len=6, seed=54)
    twin = (small.shapes[0][:, None] == small.shapes[0][None, :]).double() - torch.eye(8, dtype=torch.float64)

    def partly_matching(task, heads, share, concentration):
        """Random rows with `share[h]` of head h's weight moved onto the twin: scores far from the uniform 1/seq_len
        (an untrained layer's, which the lesson prints above), and different per head."""
        shapes = task.shapes.numpy()
        batch, seq_len = shapes.shape
        on_twin = (shapes[:, :, None] == shapes[:, None, :]) & ~np.eye(seq_len, dtype=bool)  # (batch, q, k)
        noise = rng.dirichlet(np.full(seq_len, concentration), size=(batch, heads, seq_len))
        mix = np.asarray(share)[None, :, None, None]  # (1, heads, 1, 1)
        return mix * on_twin[:, None] + (1 - mix) * noise  # (batch, heads, seq_len, seq_len), rows sum to 1

    return [
        Case((partly_matching(small, 2, (0.55, 0.3), 1.0), small.shapes), "3 sequences, 2 heads, 8 tokens, random"),
        Case((np.stack([twin.numpy(), np.eye(8)])[None], small.shapes[:1]), "a matching head and a self head"),
        Case(
            (torch.tensor(partly_matching(other, 5, (0.9, 0.7, 0.45, 0.25, 0.05), 0.4)), other.shapes),
            "a tensor: 5 heads",
        ),
    ]


def matching_score(weights, shapes):
    return heads.head_role_scores(weights, match_ids=shapes)["matching"]


def matching_mask(weights, shapes):
    w = np.asarray(weights, dtype=float)  # (batch, heads, seq_len, seq_len)
    s = np.asarray(shapes)  # (batch, seq_len)
    same = (s[:, :, None] == s[:, None, :]) & ~np.eye(s.shape[1], dtype=bool)  # (batch, q, k): the twin, not me
    return (w * same[:, None]).sum(axis=-1).mean(axis=(0, 2))  # weight on the twin, per (batch, head, query)


def matching_gather(weights, shapes):
    w = torch.as_tensor(np.asarray(weights, dtype=float))
    s = torch.as_tensor(np.asarray(shapes))
    seq_len = s.shape[1]
    twin = ((s[:, :, None] == s[:, None, :]) & ~torch.eye(seq_len, dtype=torch.bool)).int().argmax(-1)  # (b, q)
    index = twin[:, None, :, None].expand(-1, w.shape[1], -1, 1)  # (batch, heads, q, 1)
    return torch.gather(w, -1, index)[..., 0].mean(dim=(0, 2)).numpy()


def matching_loop(weights, shapes):
    w, s = np.asarray(weights, dtype=float), np.asarray(shapes)
    batch, num_heads, seq_len, _ = w.shape
    score = np.zeros(num_heads)
    for b in range(batch):
        for i in range(seq_len):
            j = next(j for j in range(seq_len) if j != i and s[b, j] == s[b, i])  # the twin of token i
            score += w[b, :, i, j]
    return score / (batch * seq_len)


def matching_includes_self(weights, shapes):
    w, s = np.asarray(weights, dtype=float), np.asarray(shapes)
    same = s[:, :, None] == s[:, None, :]  # the query's own position counts too
    return (w * same[:, None]).sum(axis=-1).mean(axis=(0, 2))


MATCHING_SCORE = Exercise(
    id="05.matching_score",
    section=SECTION_TRAINED,
    make_cases=matching_cases,
    reference=matching_score,
    variants=(matching_mask, matching_gather, matching_loop),
    buggy={"matching_includes_self": matching_includes_self},
    forbidden=("course_utils.heads:head_role_scores",),
    hints=(
        "For query i of sequence b, which key holds the other token with its shape? How would you mark it for "
        "every (query, key) pair at once?",
        "A (batch, seq_len, seq_len) boolean array is True where the shapes of query i and key j agree and j is "
        "not i; the score is the weight on those keys, averaged over sequences and queries, one number per head.",
        "shapes[:, :, None] == shapes[:, None, :] compares every pair; remove the diagonal with ~np.eye(...); "
        "insert a heads axis with [:, None] to multiply it with the weights, sum over the keys, then average.",
    ),
    noun="matching score",
)
