"""course_utils.reversal.training: loss, metrics, the seed's leak, train_step and the training loop."""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F

from course_utils import data, env
from course_utils.reversal import checkpoints, decoding, training


class _Oracle(torch.nn.Module):
    """Reverses perfectly, optionally dropping the last symbol (then its EOS comes one step early)."""

    def __init__(self, drop_last: bool = False):
        super().__init__()
        self.drop_last = drop_last
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    def _answers(self, src, src_lengths):
        rows = []
        for x, n in zip(src.tolist(), src_lengths.tolist(), strict=True):
            y = x[:n][::-1][: n - 1 if self.drop_last else n]
            rows.append(y + [data.EOS])
        width = max(map(len, rows))
        return torch.tensor([r + [data.PAD] * (width - len(r)) for r in rows])

    def init_state(self, src, src_lengths, max_steps=None):
        return {"answers": self._answers(src, src_lengths), "t": 0}

    def decode_step(self, state, tokens):
        answers, t = state["answers"], state["t"]
        column = answers[:, t] if t < answers.shape[1] else torch.full((answers.shape[0],), data.PAD)
        return F.one_hot(column, data.VOCAB_SIZE).float(), {"answers": answers, "t": t + 1}, None

    def forward(self, src, src_lengths, decoder_input):
        answers = self._answers(src, src_lengths)
        answers = F.pad(answers, (0, decoder_input.shape[1] - answers.shape[1]), value=data.PAD)
        return F.one_hot(answers, data.VOCAB_SIZE).float() + 0 * self.anchor


SEQUENCES = [tuple(data.encode(s)) for s in ["abcd", "jihg", "abcdefghij", "aaaaa", "bcbcb"]]


def test_sequence_loss_ignores_padding():
    batch = data.collate([data.encode("abc"), data.encode("d")])
    torch.manual_seed(0)
    logits = torch.randn(2, 4, data.VOCAB_SIZE)
    loss = training.sequence_loss(logits, batch.target)
    real = batch.target != data.PAD
    expected = F.cross_entropy(logits[real], batch.target[real])
    torch.testing.assert_close(loss, expected)
    logits[~real] += 100.0  # anything at PAD positions is irrelevant
    torch.testing.assert_close(training.sequence_loss(logits, batch.target), expected)
    with pytest.raises(ValueError, match="disagree"):
        training.sequence_loss(logits[:, :3], batch.target)


def test_leaky_batch_feeds_the_token_to_predict():
    batch = data.collate([data.encode("abc")])
    leaky = training.leaky_batch(batch)
    assert torch.equal(leaky.decoder_input, batch.target) and torch.equal(leaky.target, batch.target)
    assert batch.decoder_input[0, 0] == data.BOS  # the original is untouched


def test_evaluate_perfect_and_off_by_one_models():
    perfect = training.evaluate(_Oracle(), SEQUENCES)
    assert (perfect.token_accuracy, perfect.exact_accuracy, perfect.count) == (1.0, 1.0, 5)
    assert perfect.by_length == {4: (1.0, 1.0, 2), 5: (1.0, 1.0, 2), 10: (1.0, 1.0, 1)}
    short = training.evaluate(_Oracle(drop_last=True), SEQUENCES, batch_size=2)
    assert short.exact_accuracy == 0.0
    # a length-n answer that stops one symbol early gets n - 1 of its n + 1 tokens right
    expected = sum(len(s) - 1 for s in SEQUENCES) / sum(len(s) + 1 for s in SEQUENCES)
    assert short.token_accuracy == pytest.approx(expected)
    token, exact, count = short.bucket(4, 5)
    assert count == 4 and exact == 0.0 and token == pytest.approx((3 + 3 + 4 + 4) / (5 + 5 + 6 + 6))
    with pytest.raises(ValueError, match="no evaluated sequence"):
        short.bucket(17, 20)


def test_evaluate_accepts_a_batch_and_rejects_bad_input():
    assert training.evaluate(_Oracle(), data.collate(SEQUENCES)).exact_accuracy == 1.0
    with pytest.raises(ValueError, match="empty"):
        training.evaluate(_Oracle(), [])
    with pytest.raises(ValueError, match="symbol ids"):
        training.evaluate(_Oracle(), [(3, 4, 99)])
    with pytest.raises(ValueError, match="empty"):
        training.teacher_forced_accuracy(_Oracle(), [])


def test_teacher_forced_accuracy_of_an_oracle():
    assert training.teacher_forced_accuracy(_Oracle(), SEQUENCES) == 1.0


def test_recipes_and_schedule():
    cfg = training.recipe("transformer", max_len=12)
    assert cfg.max_len == 12 and cfg.lr == training.RECIPES["transformer"]["lr"]
    with pytest.raises(ValueError, match="kind must be one of"):
        training.recipe("lstm")
    cfg = training.TrainConfig(steps=100, warmup_steps=10)
    factors = [training.lr_factor(i, cfg) for i in range(101)]
    assert factors[0] == pytest.approx(0.1) and factors[9] == 1.0 and factors[100] == 0.0
    assert all(a >= b for a, b in zip(factors[9:], factors[10:], strict=False))  # decays monotonically
    assert training.lr_factor(55, cfg) == pytest.approx(0.5)


def _tiny_run(**overrides):
    env.set_seed(0)
    model = checkpoints.build_model("gru", d_embed=8, d_encoder=8, d_hidden=8)
    cfg = training.TrainConfig(steps=6, batch_size=8, max_len=6, eval_every=3, eval_below_loss=1e9, **overrides)
    return model, training.train(model, cfg, val=SEQUENCES[:2], progress=False)


def test_train_is_repeatable_and_records_history():
    model_a, result_a = _tiny_run(target_exact=None)
    model_b, result_b = _tiny_run(target_exact=None)
    assert result_a.steps == 6 and len(result_a.losses) == 6 and result_a.stopped_because == "steps"
    assert result_a.losses == result_b.losses
    assert [h[0] for h in result_a.history] == [3, 6]
    for a, b in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.equal(a, b)
    assert not model_a.training and all(math.isfinite(x) for x in result_a.losses)


def test_train_stops_at_target_and_at_time_budget():
    _, result = _tiny_run(target_exact=0.0)
    assert result.stopped_because == "target" and result.steps == 3 and result.reached_target
    _, result = _tiny_run(target_exact=None, time_budget_s=0.0)
    assert result.stopped_because == "time_budget" and result.steps == 1 and len(result.history) == 1


def test_train_rejects_bad_config():
    with pytest.raises(ValueError, match="steps"):
        training.train(checkpoints.build_model("gru"), training.TrainConfig(steps=0), progress=False)


def test_train_step_is_the_step_train_takes():
    """train_step(model, optimizer, batch) updates the weights exactly as train's first step does."""
    cfg = training.recipe("gru_attention", steps=1, warmup_steps=0, cosine_decay=False, target_exact=None)
    env.set_seed(0)
    by_train = checkpoints.build_model("gru_attention")
    by_step = copy.deepcopy(by_train)
    result = training.train(by_train, cfg, val=[], progress=False)
    batch = next(data.RandomBatchSampler(cfg.batch_size, cfg.min_len, cfg.max_len, seed=cfg.seed))
    by_step.train()
    loss = training.train_step(by_step, torch.optim.Adam(by_step.parameters(), lr=cfg.lr), batch)
    assert loss == pytest.approx(result.losses[0], rel=1e-6)
    for (name, a), b in zip(by_train.state_dict().items(), by_step.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0, msg=name)


def test_make_optimizer_schedules_warmup_then_cosine():
    env.set_seed(0)
    model = checkpoints.build_model("gru", d_embed=8, d_encoder=8, d_hidden=8)
    cfg = training.TrainConfig(steps=40, warmup_steps=10, lr=0.5)
    optimizer, scheduler = training.make_optimizer(model, cfg)
    assert isinstance(optimizer, torch.optim.Adam)
    lrs = []
    for _ in range(41):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert lrs == pytest.approx([0.5 * training.lr_factor(i, cfg) for i in range(41)])
    assert lrs[0] == pytest.approx(0.05) and lrs[9] == pytest.approx(0.5) and lrs[40] == pytest.approx(0.0)


def test_lr_factor_is_public_and_checked():
    cfg = training.TrainConfig(steps=20, warmup_steps=10, cosine_decay=False)
    assert [training.lr_factor(i, cfg) for i in (0, 4, 9, 10, 19, 500)] == pytest.approx([0.1, 0.5, 1, 1, 1, 1])
    cfg = training.recipe("gru_attention")  # 300 steps, warm-up 10: lesson 07's first step runs at lr / 10
    assert training.lr_factor(0, cfg) * cfg.lr == pytest.approx(0.0015)
    assert training.lr_factor(cfg.steps, cfg) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="step must be a non-negative int"):
        training.lr_factor(-1, cfg)
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        training.lr_factor(0, {"lr": 1.0})


def test_train_takes_a_custom_step_and_decoder():
    """step= replaces train_step (the same step gives the same run); decode= replaces greedy_decode in validation."""
    calls = {"step": 0, "decode": 0}

    def my_step(model, optimizer, batch):
        calls["step"] += 1
        return training.train_step(model, optimizer, batch, grad_clip=1.0)

    def my_decode(model, src, src_lengths, max_steps):
        calls["decode"] += 1
        return decoding.greedy_decode(model, src, src_lengths, max_steps=max_steps)

    _, plain = _tiny_run(target_exact=None)
    env.set_seed(0)
    model = checkpoints.build_model("gru", d_embed=8, d_encoder=8, d_hidden=8)
    cfg = training.TrainConfig(steps=6, batch_size=8, max_len=6, eval_every=3, eval_below_loss=1e9, target_exact=None)
    mine = training.train(model, cfg, val=SEQUENCES[:2], progress=False, step=my_step, decode=my_decode)
    assert calls == {"step": 6, "decode": 2}  # one validation decode at step 3 and one at step 6
    assert mine.losses == plain.losses
    assert [(i, v) for i, _, v in mine.history] == [(i, v) for i, _, v in plain.history]


def test_train_refuses_a_step_that_returns_no_loss_and_evaluate_a_bad_decoder():
    env.set_seed(0)
    model = checkpoints.build_model("gru", d_embed=8, d_encoder=8, d_hidden=8)
    cfg = training.TrainConfig(steps=2, batch_size=4, max_len=6, target_exact=None)
    with pytest.raises(TypeError, match="step must return the loss as a float"):
        training.train(model, cfg, val=[], progress=False, step=lambda m, o, b: None)
    with pytest.raises(TypeError, match="step must be a function"):
        training.train(model, cfg, val=[], progress=False, step="train_step")
    seen = []
    tensor_loss = training.train(
        model, cfg, val=[], progress=False, step=lambda m, o, b: (seen.append(1), o.step(), torch.tensor(0.5))[-1]
    )
    assert tensor_loss.losses == [0.5, 0.5] and len(seen) == 2
    oracle = _Oracle()
    assert (
        training.evaluate(
            oracle, SEQUENCES, decode=lambda m, s, l, max_steps: decoding.greedy_decode(m, s, l, max_steps)
        ).exact_accuracy
        == 1.0
    )
    with pytest.raises(ValueError, match=r"decode must return tokens \(batch=5, steps\)"):
        training.evaluate(oracle, SEQUENCES, decode=lambda m, s, l, max_steps: s[0])
    with pytest.raises(ValueError, match="more than max_steps"):
        training.evaluate(
            oracle, SEQUENCES, decode=lambda m, s, l, max_steps: torch.zeros(len(s), max_steps + 1, dtype=torch.long)
        )
    with pytest.raises(TypeError, match="decode must be a function"):
        training.evaluate(oracle, SEQUENCES, decode=3)


def test_validation_set_spreads_over_the_training_lengths():
    val = training._validation_set(training.TrainConfig(val_size=100, min_len=4, max_len=12))
    assert len(val) == 100 and {len(s) for s in val} >= {4, 8, 12} and max(map(len, val)) <= 12


def _imports(module_name: str) -> set[str]:
    """The course_utils modules that ``module_name`` imports directly (parsed, not run)."""
    import ast
    import importlib

    tree = ast.parse(open(importlib.import_module(module_name).__file__).read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("course_utils"):
            if node.module in ("course_utils", "course_utils.reversal"):
                found |= {f"{node.module}.{a.name}" for a in node.names}
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("course_utils")}
    return found


def _closure(module_name: str) -> set[str]:
    seen, todo = set(), [module_name]
    while todo:
        for dep in _imports(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


REVERSAL = ["decoding", "rnn", "transformer", "training", "checkpoints", "plots", "views"]
MODELS_AND_ABOVE = {f"course_utils.reversal.{m}" for m in ("rnn", "transformer", "checkpoints")}


def test_import_graph_points_one_way():
    """training, decoding and views never reach a concrete model or the checkpoints; nothing imports plots or back up."""
    for name in ("training", "decoding", "views"):
        deps = _closure(f"course_utils.reversal.{name}")
        assert "course_utils.data" in deps  # the walk does find imports ...
        assert not deps & MODELS_AND_ABOVE, (name, deps & MODELS_AND_ABOVE)  # ... and no model among them
        assert name == "views" or "course_utils.plotting" not in deps  # the explorer draws its static figure
    for name in REVERSAL:
        deps = _closure(f"course_utils.reversal.{name}")
        assert f"course_utils.reversal.{name}" not in deps, f"{name} is in an import cycle"
        if name != "plots":
            assert "course_utils.reversal.plots" not in deps
        if name != "views":
            assert "course_utils.reversal.views" not in deps
    assert _imports("course_utils.reversal.checkpoints") >= MODELS_AND_ABOVE - {"course_utils.reversal.checkpoints"}


# ------------------------------------------------------------------------------------------- bad input


def test_bad_input_names_the_argument():
    model = checkpoints.build_model("gru", d_embed=8, d_encoder=8, d_hidden=8)
    batch = data.collate([data.encode("abc")])
    with pytest.raises(ValueError, match="TrainConfig.steps must be a positive int"):
        training.TrainConfig(steps=0)
    with pytest.raises(ValueError, match="min_len <= max_len"):
        training.TrainConfig(min_len=9, max_len=4)
    with pytest.raises(TypeError, match="TrainConfig has no field 'step'"):
        training.recipe("gru", step=3)
    with pytest.raises(TypeError, match="optimizer must have step"):
        training.train_step(model, object(), batch)
    with pytest.raises(TypeError, match="batch must be a course_utils.data.Batch"):
        training.train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), (batch.src,))
    with pytest.raises(ValueError, match="grad_clip"):
        training.train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), batch, grad_clip=-1.0)
    with pytest.raises(TypeError, match="model must be a reversal model"):
        training.train("gru")
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        training.make_optimizer(model, {"lr": 0.1})


# ------------------------------------------------------------------------------------ slow


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gru_attention", "transformer"])
def test_attention_models_reach_99_percent_exact(kind):
    env.set_seed(0)
    model = checkpoints.build_model(kind)
    result = training.train(model, training.recipe(kind), progress=False)
    assert result.val_exact >= 0.99 and result.stopped_because in ("target", "steps"), result
    test = training.evaluate(model, data.load_split("test"))
    assert test.exact_accuracy >= 0.993, test.exact_accuracy  # seed 0; seeds 0-4 ranged 0.9915-0.9985


@pytest.mark.slow
def test_the_seed_leak_looks_perfect_teacher_forced_and_fails_free_running():
    env.set_seed(0)
    model = checkpoints.build_model("gru")
    training.train(model, training.recipe("gru", steps=60, leak=True), progress=False)
    test = data.load_split("test")[::10]
    assert training.teacher_forced_accuracy(model, test, leak=True) > 0.95
    free = training.evaluate(model, test)
    assert free.exact_accuracy < 0.02 and free.token_accuracy < 0.3
