"""Lesson 05 · Inside the heads: the exercises of ``notebooks/05_inside_the_heads.ipynb``.

Each exercise is one block, in the lesson's order: cases, reference, correct variants, hand-written buggy versions,
``Exercise``. The predictions come last. Every region is on the main path: the lesson measures the heads with the
functions the student wrote (``row_entropy``, ``role_scores``, ``matching_score``), switches heads off with their
``switch_off`` and ``ablation_table``, and feeds the toy model the input their ``model_input`` builds.
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils import heads, role_task
from course_utils.checking import cases
from course_utils.checking.model import Case, Exercise, KnownWrong, Prediction
from course_utils.lessons.lesson_05.core import (
    MATCHING_SCORE,
    MODEL_INPUT,
    ROLE_SCORES,
    ROW_ENTROPY,
    SECTION_ABLATION,
    SECTION_ENTROPY,
    SECTION_LAYERS,
    SECTION_SELF,
    SECTION_TASK,
    SWITCH_OFF,
)

__all__ = [
    "EXERCISES",
    "PREDICTIONS",
    "ABLATION_TABLE",
]


# ---- 05.ablation_table(model, task) -> (heads, questions) ------------------------------------------------------
def ablation_cases():
    config = role_task.RoleModelConfig(seq_len=8, num_shapes=8, num_colours=4, d_model=24, num_heads=3)
    built = []
    for seed in (55, 56):
        with cases.torch_seeded(seed):
            model = role_task.RoleModel(config).eval()
            with torch.no_grad():  # larger attention weights than the default initialization: heads matter
                for layer in (model.attention.query_proj, model.attention.key_proj, model.attention.value_proj):
                    layer.weight.mul_(4.0)
        built.append(model)
    return [
        Case((built[0], role_task.make_role_task(40, seq_len=8, seed=55)), "an untrained 3-head model, 40 sequences"),
        Case((built[1], role_task.make_role_task(24, seq_len=6, seed=56)), "another, on 24 sequences of 6 tokens"),
    ]


def ablation_table(model, task):
    full = role_task.role_accuracy(model, task)
    table = np.zeros((model.config.num_heads, len(role_task.TARGETS)))
    for h in range(model.config.num_heads):
        with heads.ablate_heads(model.attention, h):
            without = role_task.role_accuracy(model, task)
        table[h] = [full[name] - without[name] for name in role_task.TARGETS]
    return table


def ablation_rows(model, task):
    full = role_task.role_accuracy(model, task)
    rows = []
    for h in range(model.attention.num_heads):
        with heads.ablate_heads(model.attention, [h]):
            without = role_task.role_accuracy(model, task)
        rows.append([full[q] - without[q] for q in role_task.TARGETS])
    return np.array(rows)


def ablation_arrays(model, task):
    def accuracies(off):
        with heads.ablate_heads(model.attention, off):
            return np.array(list(role_task.role_accuracy(model, task).values()))  # in TARGETS order

    full = accuracies([])
    return np.stack([full - accuracies(h) for h in range(model.config.num_heads)])


def ablation_sign_flipped(model, task):
    return -ablation_table(model, task)


def ablation_accuracy_left(model, task):
    full = np.array([role_task.role_accuracy(model, task)[q] for q in role_task.TARGETS])
    return full - ablation_table(model, task)


def ablation_all_but_one(model, task):
    full = role_task.role_accuracy(model, task)
    num_heads = model.config.num_heads
    table = np.zeros((num_heads, len(role_task.TARGETS)))
    for h in range(num_heads):
        with heads.ablate_heads(model.attention, [o for o in range(num_heads) if o != h]):
            without = role_task.role_accuracy(model, task)
        table[h] = [full[q] - without[q] for q in role_task.TARGETS]
    return table


ABLATION_TABLE = Exercise(
    id="05.ablation_table",
    section=SECTION_ABLATION,
    make_cases=ablation_cases,
    reference=ablation_table,
    variants=(ablation_rows, ablation_arrays),
    buggy={
        "ablation_sign_flipped": ablation_sign_flipped,
        "ablation_accuracy_not_drop": ablation_accuracy_left,
        "ablation_all_but_one": ablation_all_but_one,
    },
    hints=(
        "What do you measure with every head on, and what with head h off? Which of the two is larger when head h "
        "did a job?",
        "Measure role_task.role_accuracy once with all heads, then once per head inside heads.ablate_heads (your "
        "switch_off is its switch_off=); row h holds the accuracy lost on each question, in role_task.TARGETS "
        "order.",
        "Row h is [full[q] - without[q] for q in role_task.TARGETS]; stack the rows into a (heads, 3) array.",
    ),
    noun="ablation table",
    forbidden=("course_utils.lessons.lesson_05.experiments:course_ablation_table",),
    time_limit=10.0,
)

EXERCISES = [ROW_ENTROPY, SWITCH_OFF, ROLE_SCORES, MODEL_INPUT, MATCHING_SCORE, ABLATION_TABLE]


# ---- predictions ------------------------------------------------------------------------------------------------
PREDICTIONS = [
    Prediction(
        id="05.focused_below_1_5",
        question='A head counts as "focused" when its entropy is below 1.5. Over 4 keys, which rows does that call '
        'focused: "all", "some" or "none"?',
        kind="choice",
        answer="all",
        choices=("all", "some", "none"),
        section=SECTION_ENTROPY,
        known_wrong=(
            KnownWrong(
                "some",
                "entropy_threshold_without_k_len",
                "what it would be over many keys: think about the largest entropy a row over 4 keys can have",
            ),
            KnownWrong("none", None, "the opposite: think about the entropy of the most spread-out row over 4 keys"),
        ),
    ),
    Prediction(
        id="05.same_self_head",
        question="Build the same untrained layer 8 times, changing only its initialization seed: is the most "
        '"self-attentive" head the same head every time? (True or False)',
        kind="choice",
        answer=False,
        choices=(True, False),
        section=SECTION_SELF,
        known_wrong=(
            KnownWrong(
                True,
                "untrained_heads_have_roles",
                "what you would see if the head's pattern came from the input; in an untrained layer it comes from "
                "the random weights, which a new seed redraws",
            ),
        ),
    ),
    Prediction(
        id="05.previous_key",
        question="Query 5 of 12: which key holds the answer to 'what colour is the token before me'?",
        kind="index",
        answer=4,
        section=SECTION_TASK,
        rethink="which position comes just before the query",
        known_wrong=(
            KnownWrong(6, "next_token_diagonal", "the next token: think about which position comes just before"),
        ),
    ),
    Prediction(
        id="05.first_key",
        question="Query 5 of 12: which key holds the answer to 'what colour is the first token'?",
        kind="index",
        answer=0,
        section=SECTION_TASK,
        rethink="where Python's positions start",
        known_wrong=(KnownWrong(1, None, "counting from 1: think about where Python's positions start"),),
    ),
    Prediction(
        id="05.matching_key",
        question="Query 5 of 12 has shape C; the other C sits at position 9: which key holds the answer to 'what "
        "colour is the other token with my shape'?",
        kind="index",
        answer=9,
        section=SECTION_TASK,
        rethink="where the other token with the query's shape sits",
        known_wrong=(
            KnownWrong(5, "matching_includes_self", "the query itself; the question asks for the *other* token"),
        ),
    ),
    Prediction(
        id="05.role_heads_off",
        question="Switch off every head scoring above 0.5 on 'previous'. Its accuracy, now near 1: \"about the "
        'same", "near chance" (0.25, 4 colours) or "about 0"?',
        kind="choice",
        answer="near chance",
        choices=("about the same", "near chance", "about 0"),
        section=SECTION_ABLATION,
        known_wrong=(
            KnownWrong(
                "about the same",
                "heatmap_is_not_use",
                "what you would see if the model did not use that head; it does: no other head carries the colour "
                "of the previous token",
            ),
            KnownWrong(
                "about 0",
                None,
                "worse than guessing: think about what a read-out still does without that head's information",
            ),
        ),
    ),
    Prediction(
        id="05.deep_over_wide",
        question="d_model = 512: how many times the attention parameters of 1 layer with 8 heads do 8 layers with "
        "1 head each hold?",
        kind="number",
        answer=8,
        rtol=0.1,
        section=SECTION_LAYERS,
        rethink="how the parameters of one layer depend on its number of heads",
        known_wrong=(
            KnownWrong(
                1,
                "heads_as_layers",
                "what you would get if each head had its own projections; the heads share one layer's four "
                "projections, and each extra layer brings four more",
            ),
            KnownWrong(64, None, "heads times layers; the number of heads per layer does not change its parameters"),
        ),
    ),
]
