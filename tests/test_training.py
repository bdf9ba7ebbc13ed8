"""course_utils.training: loss, metrics, the seed's leak, and the training loop."""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F

from course_utils import data, env, seq2seq, training


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

    def init_state(self, src, src_lengths):
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
    factors = [training._lr_factor(i, cfg) for i in range(101)]
    assert factors[0] == pytest.approx(0.1) and factors[9] == 1.0 and factors[100] == 0.0
    assert all(a >= b for a, b in zip(factors[9:], factors[10:], strict=False))  # decays monotonically
    assert training._lr_factor(55, cfg) == pytest.approx(0.5)


def _tiny_run(**overrides):
    env.set_seed(0)
    model = seq2seq.build_model("gru", d_embed=8, d_encoder=8, d_hidden=8)
    cfg = training.TrainConfig(steps=6, batch_size=8, max_len=6, eval_every=3, eval_gate=0.0, **overrides)
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
    assert result_a.seconds_to_target is None


def test_train_stops_at_target_and_at_time_budget():
    _, result = _tiny_run(target_exact=0.0)
    assert result.stopped_because == "target" and result.steps == 3 and result.reached_target
    assert result.seconds_to_target == result.history[-1][1]
    _, result = _tiny_run(target_exact=None, time_budget_s=0.0)
    assert result.stopped_because == "time_budget" and result.steps == 1 and len(result.history) == 1


def test_train_rejects_bad_config():
    with pytest.raises(ValueError, match="steps"):
        training.train(seq2seq.build_model("gru"), training.TrainConfig(steps=0), progress=False)


def _course_imports(module_name: str) -> set[str]:
    """Every course_utils module that ``module_name`` imports, directly or through others."""
    import ast
    import importlib

    seen, todo = set(), [module_name]
    while todo:
        name = todo.pop()
        tree = ast.parse(open(importlib.import_module(name).__file__).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("course_utils"):
                found = (
                    [node.module] if node.module != "course_utils" else [f"course_utils.{a.name}" for a in node.names]
                )
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names if a.name.startswith("course_utils")]
            else:
                continue
            for dep in found:
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
    return seen


def test_training_never_imports_plotting():
    deps = _course_imports("course_utils.training")
    assert {"course_utils.seq2seq", "course_utils.data"} <= deps  # the walk does find imports ...
    assert "course_utils.plotting" not in deps  # ... and plotting is not among them


# ------------------------------------------------------------------------------------ slow


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gru_attention", "transformer"])
def test_attention_models_reach_99_percent_exact(kind):
    env.set_seed(0)
    model = seq2seq.build_model(kind)
    result = training.train(model, training.recipe(kind), progress=False)
    assert result.reached_target
    test = training.evaluate(model, data.load_split("test"))
    assert test.exact_accuracy >= 0.99, test.exact_accuracy


@pytest.mark.slow
def test_the_seed_leak_looks_perfect_teacher_forced_and_fails_free_running():
    env.set_seed(0)
    model = seq2seq.build_model("gru")
    training.train(model, training.recipe("gru", steps=60, leak=True), progress=False)
    test = data.load_split("test")[::10]
    assert training.teacher_forced_accuracy(model, test, leak=True) > 0.95
    free = training.evaluate(model, test)
    assert free.exact_accuracy < 0.02 and free.token_accuracy < 0.3


def test_our_adam_matches_torch_adam():
    torch.manual_seed(0)
    ours_model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    torch_model = copy.deepcopy(ours_model)
    ours = training.Adam(ours_model.parameters(), lr=0.01, betas=(0.8, 0.99))
    reference = torch.optim.Adam(torch_model.parameters(), lr=0.01, betas=(0.8, 0.99))
    for step in range(20):
        x = torch.randn(4, 5)
        for model, opt in ((ours_model, ours), (torch_model, reference)):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
        lr = 0.01 * (1 - step / 20)
        for group in reference.param_groups:
            group["lr"] = lr
        ours.step(lr=lr)
        reference.step()
    for a, b in zip(ours_model.parameters(), torch_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)


def test_train_step_is_the_step_train_takes():
    """train_step(model, optimizer, batch) updates the weights exactly as train's first step does."""
    cfg = training.recipe("gru_attention", steps=1, warmup_steps=0, cosine_decay=False, target_exact=None)
    env.set_seed(0)
    by_train = seq2seq.build_model("gru_attention")
    by_step = copy.deepcopy(by_train)
    result = training.train(by_train, cfg, val=[], progress=False)
    batch = next(data.RandomBatchSampler(cfg.batch_size, cfg.min_len, cfg.max_len, seed=cfg.seed))
    by_step.train()
    loss = training.train_step(by_step, training.Adam(by_step.parameters(), lr=cfg.lr), batch)
    assert loss == pytest.approx(result.losses[0], rel=1e-6)
    for (name, a), b in zip(by_train.state_dict().items(), by_step.state_dict().values(), strict=True):
        assert torch.allclose(a, b, atol=1e-6), name
    with pytest.raises(TypeError, match="optimizer"):
        training.train_step(by_step, object(), batch)
    with pytest.raises(TypeError, match="batch"):
        training.train_step(by_step, training.Adam(by_step.parameters(), lr=1e-3), (batch.src,))
