"""Lesson 08's exercises and experiments beyond what tests/lessons/test_exercises.py checks for every exercise.

- the training-step check names a step without clipping and one without ``zero_grad`` (the students' review found
  both passing the earlier one-Adam-step check);
- the layer checks load the course's weights into the student's class and name post-norm;
- the model of the lesson (the course's ``TransformerSeq2Seq`` with the student's parts) takes the course's weights;
- ``attention_spread`` and ``short_models(load=...)`` measure what the lesson prints.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from course_utils import checks, data
from course_utils.lessons.lesson_08 import exercises as lesson_08
from course_utils.lessons.lesson_08 import experiments as experiments
from course_utils.lessons.lesson_08 import layers
from course_utils.reversal import checkpoints, transformer


def _step(clip: bool, zero_grad: bool):
    def my_train_step(model, optimizer, batch):
        logits = model(batch.src, batch.src_lengths, batch.decoder_input)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=data.PAD)
        if zero_grad:
            optimizer.zero_grad()
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    return my_train_step


def test_a_step_without_clipping_is_named(capsys):
    returned = checks.check("08.my_train_step", _step(clip=False, zero_grad=True))
    out = capsys.readouterr().out
    assert out.startswith("❌") and "the gradient is not clipped before step()" in out
    assert returned is lesson_08.my_train_step  # the lesson goes on with the course's step


def test_a_step_without_zero_grad_is_named(capsys):
    checks.check("08.my_train_step", _step(clip=True, zero_grad=False))
    out = capsys.readouterr().out
    assert out.startswith("❌") and "no optimizer.zero_grad()" in out


def test_a_right_step_passes_and_is_returned(capsys):
    mine = _step(clip=True, zero_grad=True)
    assert checks.check("08.my_train_step", mine) is mine
    assert capsys.readouterr().out.startswith("✅")


def test_a_post_norm_encoder_layer_is_named(capsys):
    checks.check("08.encoder_layer", layers.EncoderLayerPostNorm)
    out = capsys.readouterr().out
    assert out.startswith("❌") and "post-norm" in out and "08 · LayerNorm and pre-norm" in out


def test_run_layer_gives_none_for_a_function_that_returns_nothing():
    case = layers.encoder_layer_cases()[0]
    course, init_args, inputs = case.args
    assert layers.run_layer(lambda *args: None, course, init_args, inputs) is None
    out = layers.run_layer(layers.EncoderLayer, course, init_args, inputs)
    assert torch.equal(out, course(*inputs))


def test_the_lessons_model_with_the_course_parts_equals_the_course_model():
    """MyTransformer as the lesson writes it, with the course's parts (what checks.check hands back)."""

    class MyTransformer(transformer.TransformerSeq2Seq):
        def __init__(self, config):
            super().__init__(config)
            sizes = (config.d_model, config.num_heads, config.d_ff)
            self.encoder_layers = torch.nn.ModuleList([layers.EncoderLayer(*sizes)])
            self.decoder_layers = torch.nn.ModuleList([layers.DecoderLayer(*sizes)])

    torch.manual_seed(0)
    course = checkpoints.build_model("transformer").eval()
    mine = MyTransformer(course.config).eval()
    mine.load_state_dict(course.state_dict(), strict=True)
    batch = data.collate([data.encode("abcdefg"), data.encode("hij")])
    with torch.no_grad():
        assert torch.equal(
            mine(batch.src, batch.src_lengths, batch.decoder_input),
            course(batch.src, batch.src_lengths, batch.decoder_input),
        )


def test_attention_spread_is_a_share_per_view():
    model = checkpoints.load_pretrained("transformer")
    spread = experiments.attention_spread(model, data.load_split("test")[:5])
    assert set(spread) == {"encoder self-attention", "decoder self-attention (causal)", "cross-attention"}
    assert all(0.0 <= share <= 1.0 for share in spread.values())


def test_short_models_evaluates_what_it_is_given():
    loaded = []

    def load(name):
        loaded.append(name)
        return checkpoints.load_pretrained(name)

    out = experiments.short_models(seed=0, load=load)
    assert loaded == list(experiments.SHORT_MODELS) and set(out) == set(experiments.SHORT_MODELS)
    assert all(v["steps"] is None for v in out.values())  # loaded, not trained: no step count
    assert out["transformer_short"]["exact_4_12"] >= 0.98 and out["transformer_short"]["exact_13_16"] < 0.1


# ---- issue 28 §3: a layer that cuts the gradient is the first thing the student sees, and the lesson says so ----


def test_a_layer_that_cuts_the_gradient_is_named_by_its_own_check(capsys):
    class EncoderLayer(layers.EncoderLayer):
        def forward(self, x, mask):
            h = self.norm1(x)
            x = x + self.self_attn(h, h, h, mask=mask, need_weights=False)[0].detach()  # right values, no gradient
            return x + self.ffn(self.norm2(x))

    returned = checks.check("08.encoder_layer", EncoderLayer)
    out = capsys.readouterr().out
    assert out.startswith("❌") and "cuts the gradient" in out and "`self_attn.query_proj.weight`" in out, out
    assert returned is not EncoderLayer  # the lesson goes on with the course's layer


def _markdown_before(path, marker):
    import json
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[2] / path).read_text(encoding="utf-8"))["cells"]
    first = next(i for i, c in enumerate(cells) if marker in "".join(c["source"]) and c["cell_type"] == "code")
    return [" ".join("".join(c["source"]).split()) for c in cells[:first] if c["cell_type"] == "markdown"]


def test_07_and_08_say_what_a_silently_broken_gradient_looks_like_before_they_train():
    for path, marker in (
        ("notebooks/07_seq2seq_rnn_attention.ipynb", "lesson_07.attention_gru("),
        ("notebooks/08_transformer_reversal.ipynb", "lesson_08.transformer("),
    ):
        said = [t for t in _markdown_before(path, marker) if "silently broken gradient" in t]
        assert said, f"{path}: no cell before the training says what a silently broken gradient looks like"
        assert any(".detach()" in t and "no error" in t.replace("without an error", "no error") for t in said), path
