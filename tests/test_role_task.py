"""Tests for course_utils.role_task: lesson 05's toy task, its model, its training and its explorer adapter."""

import re
import time

import numpy as np
import pytest
import torch

from course_utils import explorer, heads, role_task


@pytest.fixture(scope="module")
def role_model():
    model, _ = role_task.train_role_model(steps=40, seed=0)
    return model


def test_role_task_is_consistent():
    task = role_task.make_role_task(50, seq_len=10, num_shapes=8, num_colours=4, seed=3)
    assert task.tokens.shape == (50, 10)
    torch.testing.assert_close(task.tokens, task.shapes * 4 + task.colours)
    counts = torch.nn.functional.one_hot(task.shapes, 8).sum(1)  # (batch, num_shapes)
    assert set(counts.unique().tolist()) == {0, 2}  # every shape present occurs exactly twice
    assert (task.targets["previous"][:, 0] == role_task.IGNORE_INDEX).all()
    torch.testing.assert_close(task.targets["previous"][:, 1:], task.colours[:, :-1])
    torch.testing.assert_close(task.targets["first"], task.colours[:, :1].expand(-1, 10))
    for b in range(5):
        for i in range(10):
            j = [j for j in range(10) if j != i and task.shapes[b, j] == task.shapes[b, i]]
            assert len(j) == 1 and task.targets["matching"][b, i] == task.colours[b, j[0]]
    again = role_task.make_role_task(50, seq_len=10, num_shapes=8, num_colours=4, seed=3)
    torch.testing.assert_close(again.tokens, task.tokens)
    assert role_task.token_labels(task, 0)[0] == "ABCDEFGH"[task.shapes[0, 0]] + "rgby"[task.colours[0, 0]]


def test_untrained_heads_do_not_specialise():
    torch.manual_seed(0)
    model = role_task.RoleModel().eval()
    task = role_task.make_role_task(256, seed=1)
    with torch.no_grad():
        _, w = model(task.tokens)
    scores = heads.head_role_scores(w, task.shapes)
    for role, values in scores.items():
        assert values.max() < 0.3, (role, values)
    assert heads.head_entropy(w).min() > 0.8 * heads.max_entropy(w.shape[-1])


def test_training_is_deterministic():
    _, a = role_task.train_role_model(steps=5, seed=7)
    _, b = role_task.train_role_model(steps=5, seed=7)
    assert a == b


def _check_specialised(seed):
    model, losses = role_task.train_role_model(seed=seed)
    task = role_task.make_role_task(512, seed=12345)
    accuracy = role_task.role_accuracy(model, task)
    assert min(accuracy.values()) > 0.95, accuracy
    with torch.no_grad():
        _, w = model(task.tokens)
    scores = heads.head_role_scores(w, task.shapes)
    best = {role: int(np.argmax(scores[role])) for role in role_task.TARGETS}
    assert len(set(best.values())) == 3, (best, scores)  # three different heads
    for role, head in best.items():
        assert scores[role][head] > 0.75, (role, scores[role])
    # causal check: the heads that score > 0.5 on a role are necessary (switching them off drops that
    # answer towards chance, 1 / num_colours) and sufficient (switching off all others keeps it)
    all_heads = set(range(model.config.num_heads))
    for role in role_task.TARGETS:
        role_heads = [h for h in all_heads if scores[role][h] > 0.5]
        with heads.ablate_heads(model.attention, role_heads):
            without = role_task.role_accuracy(model, task)
        with heads.ablate_heads(model.attention, sorted(all_heads - set(role_heads))):
            only = role_task.role_accuracy(model, task)
        assert without[role] < 0.5, (role, role_heads, without)
        assert only[role] > 0.9, (role, role_heads, only)
    return losses


def test_trained_toy_model_heads_take_distinct_roles():
    start = time.perf_counter()
    losses = _check_specialised(seed=0)
    assert losses[-1] < 0.05 * losses[0]
    assert time.perf_counter() - start < 30  # about 2 s on one idle CPU thread


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7])
def test_trained_toy_model_specialises_for_other_seeds(seed):
    _check_specialised(seed)


# ---- the explorer on the role model ------------------------------------------------------------------------------


def test_role_model_weights_are_the_models(role_model):
    task = role_task.make_role_task(1, seed=5)
    text = " ".join(role_task.token_labels(task, 0))
    assert role_task.parse_role_sequence(text, role_model.config) == task.tokens[0].tolist()
    snap = role_task.role_model_snapshot(role_model, text)
    _, weights = role_model(task.tokens)
    np.testing.assert_array_equal(snap.views["self-attention"].weights[0], weights[0].detach().double().numpy())
    assert snap.views["self-attention"].query_outputs[0].startswith("previous ")
    assert snap.views["self-attention"].query_reads is None  # not a decoder: buttons name the token


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "1 to 12 tokens"), ("Ar Zq", "token 'Zq' is not a shape"), (" ".join(["Ar"] * 13), "holds 13")],
)
def test_bad_role_sequences_are_named(role_model, text, message):
    with pytest.raises(ValueError, match=message):
        role_task.parse_role_sequence(text, role_model.config)


def test_role_model_explorer_and_static_fallback(role_model):
    ex = role_task.explore_role_model(role_model, num_examples=3)
    assert isinstance(ex, explorer.AttentionExplorer)
    assert len(ex._picker.options) == 3 and list(ex.snapshot.views) == ["self-attention"]
    ex._queries.children[5].click()
    assert ex.table_html.count('data-query="5"') == 1
    assert ex._queries.children[5].description.startswith("5: ")
    assert "→ outputs previous" in ex._queries.children[5].tooltip
    bundle = ex._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/png", "application/vnd.jupyter.widget-view+json"}
    assert bundle["image/png"].startswith("iVBORw0KGgo")  # base64 of the PNG signature
    assert bundle["text/plain"].startswith("AttentionExplorer: RoleModel on ")
    assert not re.search(r"\d\.\d", bundle["text/plain"])  # no floats: stable under nbval
    assert bundle["text/plain"] == role_task.explore_role_model(role_model, num_examples=3).summary()


def test_role_explorer_refuses_other_models():
    with pytest.raises(TypeError, match="model must be a RoleModel"):
        role_task.explore_role_model(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="config must be a RoleModelConfig"):
        role_task.parse_role_sequence("Ar", {"seq_len": 12})


def test_heads_measure_the_role_model_without_knowing_it(role_model):
    task = role_task.make_role_task(8, seed=2)
    with torch.no_grad():
        _, w = role_model(task.tokens)
    assert heads.head_role_scores(w, task.shapes)["matching"].shape == (role_model.config.num_heads,)
    assert not hasattr(heads, "make_role_task") and not hasattr(heads, "RoleModel")  # moved, not re-exported
