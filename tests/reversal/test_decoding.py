"""course_utils.reversal.decoding: the model contract and greedy decoding, for every model and a fake one."""

from __future__ import annotations

import pytest
import torch
from _models import small  # tests/reversal/_models.py

from course_utils import data
from course_utils.reversal import checkpoints, decoding, training

KINDS = ["gru", "gru_attention", "transformer"]


@torch.no_grad()
@pytest.mark.parametrize("kind", KINDS)
def test_forward_shapes(kind, batch):
    model = small(kind)
    logits, weights = model(batch.src, batch.src_lengths, batch.decoder_input, return_attention=True)
    assert logits.shape == (3, 11, data.VOCAB_SIZE)
    if kind == "gru":
        assert weights is None
    elif kind == "gru_attention":
        assert weights.shape == (3, 11, 10)
    else:
        assert weights.shape == (3, model.config.num_heads, 11, 10)
    if weights is not None:  # rows sum to 1 and padding gets no weight
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
        assert float(weights[1, ..., 3:].abs().max()) == 0.0


@pytest.mark.parametrize("kind", KINDS)
def test_decoder_cannot_see_the_future(kind, batch):
    model = small(kind)
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    changed = batch.decoder_input.clone()
    changed[:, 4:] = torch.randint(3, data.VOCAB_SIZE, changed[:, 4:].shape, generator=torch.Generator().manual_seed(1))
    logits2 = model(batch.src, batch.src_lengths, changed)
    torch.testing.assert_close(logits[:, :4], logits2[:, :4])
    assert not torch.allclose(logits[:, 4:], logits2[:, 4:])


@pytest.mark.parametrize("kind", KINDS)
def test_source_padding_is_ignored(kind, batch):
    model = small(kind)
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    extra = torch.cat([batch.src, torch.full((3, 4), data.PAD)], dim=1)  # more padding ...
    extra[1, 3:] = 7  # ... and junk after the real tokens of a padded row: both must be invisible
    torch.testing.assert_close(model(extra, batch.src_lengths, batch.decoder_input), logits, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_step_by_step_decoding_matches_teacher_forcing(kind, batch):
    model = small(kind)
    logits = model(batch.src, batch.src_lengths, batch.decoder_input)
    state = model.init_state(batch.src, batch.src_lengths)
    for t in range(batch.decoder_input.shape[1]):
        step_logits, state, _ = model.decode_step(state, batch.decoder_input[:, t])
        torch.testing.assert_close(step_logits, logits[:, t], atol=1e-5, rtol=1e-5)


class _Scripted(torch.nn.Module):
    """A fake model that emits a fixed token sequence per row, to test greedy_decode's bookkeeping."""

    def __init__(self, script):
        super().__init__()
        self.script = torch.tensor(script)
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    def init_state(self, src, src_lengths, max_steps=None):
        return {"t": 0, "seen": []}

    def decode_step(self, state, tokens):
        state["seen"].append(tokens.clone())
        logits = torch.full((self.script.shape[0], data.VOCAB_SIZE), -1.0)
        logits[torch.arange(self.script.shape[0]), self.script[:, state["t"]]] = 1.0
        return logits, {"t": state["t"] + 1, "seen": state["seen"]}, None


def test_greedy_decode_feeds_predictions_and_stops_at_eos():
    model = _Scripted([[5, 2, 7, 7, 7], [6, 8, 9, 2, 7], [3, 3, 3, 3, 3]])
    src = torch.full((3, 3), 3)
    out = decoding.greedy_decode(model, src, torch.tensor([3, 3, 3]), max_steps=5)
    assert out.tolist() == [[5, 2, 0, 0, 0], [6, 8, 9, 2, 0], [3, 3, 3, 3, 3]]
    model2 = _Scripted([[5, 2, 7], [6, 2, 7]])
    out2 = decoding.greedy_decode(model2, torch.full((2, 3), 3), torch.tensor([3, 3]), max_steps=3)
    assert out2.tolist() == [[5, 2], [6, 2]]  # every row done: stops early


def test_greedy_decode_feeds_back_its_own_predictions():
    model = _Scripted([[5, 6, 2]])
    seen = []
    original = model.decode_step

    def spy(state, tokens):
        seen.append(tokens.tolist())
        return original(state, tokens)

    model.decode_step = spy
    decoding.greedy_decode(model, torch.full((1, 2), 3), torch.tensor([2]), max_steps=3)
    assert seen == [[data.BOS], [5], [6]]


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_decode_shapes_and_attention(kind, batch):
    model = small(kind)
    out, weights = decoding.greedy_decode(model, batch.src, batch.src_lengths, max_steps=6, return_attention=True)
    assert out.shape[0] == 3 and 1 <= out.shape[1] <= 6
    if kind == "gru":
        assert weights is None
    elif kind == "gru_attention":
        assert weights.shape == (3, out.shape[1], 10)
    else:
        assert weights.shape == (3, model.config.num_heads, out.shape[1], 10)
    assert model.training is False


@pytest.mark.parametrize(
    "src, lengths, message",
    [
        (torch.zeros(0, 4, dtype=torch.long), torch.zeros(0, dtype=torch.long), "empty"),
        (torch.tensor([[3, 99]]), torch.tensor([2]), "outside the vocabulary"),
        (torch.tensor([[3, -1]]), torch.tensor([2]), "outside the vocabulary"),
        (torch.tensor([3, 4]), torch.tensor([2]), r"\(batch, src_len\)"),
        (torch.tensor([[3, 4]]), torch.tensor([3]), "src_lengths"),
        (torch.tensor([[3.0, 4.0]]), torch.tensor([2]), "integer"),
    ],
)
def test_greedy_decode_rejects_bad_input(src, lengths, message):
    with pytest.raises((ValueError, TypeError), match=message):
        decoding.greedy_decode(small("gru_attention"), src, lengths)


def test_forward_rejects_out_of_vocab_decoder_input(batch):
    bad = batch.decoder_input.clone()
    bad[0, 0] = data.VOCAB_SIZE
    with pytest.raises(ValueError, match="decoder_input"):
        small("transformer")(batch.src, batch.src_lengths, bad)


@pytest.mark.parametrize("kind", KINDS)
def test_every_model_keeps_the_protocol(kind):
    assert isinstance(small(kind), decoding.Seq2Seq)


class _TinyFake:
    """Not an nn.Module: three methods of the contract and nothing else. Emits the source reversed, then EOS."""

    def forward(self, src, src_lengths, decoder_input, return_attention=False):
        raise NotImplementedError  # greedy decoding never calls it

    def init_state(self, src, src_lengths, max_steps=None):
        rows = [x[:n][::-1] + [data.EOS] for x, n in zip(src.tolist(), src_lengths.tolist(), strict=True)]
        width = max(map(len, rows))
        return {"answers": torch.tensor([r + [data.PAD] * (width - len(r)) for r in rows]), "t": 0, "max": max_steps}

    def decode_step(self, state, tokens):
        answers, t = state["answers"], state["t"]
        column = answers[:, t] if t < answers.shape[1] else torch.full((answers.shape[0],), data.PAD)
        weights = torch.zeros(answers.shape[0], answers.shape[1] - 1)  # (batch, src_len)
        return torch.nn.functional.one_hot(column, data.VOCAB_SIZE).float(), {**state, "t": t + 1}, weights


def test_greedy_decode_works_through_the_protocol_for_a_tiny_fake_model():
    fake = _TinyFake()
    assert isinstance(fake, decoding.Seq2Seq)
    batch = data.collate([data.encode("abcd"), data.encode("hij")])
    out, weights = decoding.greedy_decode(fake, batch.src, batch.src_lengths, return_attention=True)
    assert data.decode(out[0]) == "dcba" and data.decode(out[1]) == "jih"
    assert out.shape == (2, 5) and weights.shape == (2, 5, 4)


def test_greedy_decode_passes_max_steps_to_every_model(batch):
    seen = {}
    for kind in KINDS:
        model = small(kind)
        original = model.init_state

        def spy(src, src_lengths, max_steps=None, original=original, kind=kind):
            seen[kind] = max_steps
            return original(src, src_lengths, max_steps=max_steps)

        model.init_state = spy
        decoding.greedy_decode(model, batch.src, batch.src_lengths, max_steps=4)
    assert seen == {kind: 4 for kind in KINDS}


# ------------------------------------------------------------------------------------------- bad input


def test_bad_input_names_the_argument(batch):
    model = small("gru")
    with pytest.raises(TypeError, match="max_steps must be an int"):
        decoding.greedy_decode(model, batch.src, batch.src_lengths, max_steps=3.5)
    with pytest.raises(ValueError, match="max_steps must be a positive"):
        decoding.greedy_decode(model, batch.src, batch.src_lengths, max_steps=0)
    with pytest.raises(TypeError, match="return_attention must be True or False"):
        decoding.greedy_decode(model, batch.src, batch.src_lengths, return_attention=1)
    with pytest.raises(TypeError, match="model must be a reversal model"):
        decoding.greedy_decode(torch.nn.Linear(2, 2), batch.src, batch.src_lengths)
    with pytest.raises(TypeError, match="src must be a torch.Tensor"):
        decoding.check_source(batch.src.numpy(), batch.src_lengths)


# ------------------------------------------------------------------------------------------- mirror_shares


def _one_hot(positions, src_len):
    """(batch, steps) argmax positions -> (batch, steps, src_len) one-hot weights."""
    return torch.nn.functional.one_hot(torch.tensor(positions), src_len).float()


def test_mirror_shares_on_hand_made_weights():
    lengths = torch.tensor([3, 2])
    exact = _one_hot([[2, 1, 0, 0], [1, 0, 0, 0]], 3)  # n - 1 - t on every symbol-writing step; EOS steps anywhere
    assert decoding.mirror_shares(exact, lengths) == {"mirror": 1.0, "mirror_or_next": 1.0}
    # row 0 (n = 3): mirror 2, 1, 0; row 1 (n = 2): mirror 1, 0; the fourth step of row 0 and the last two of
    # row 1 write EOS or padding and do not count: 5 symbol-writing steps in all
    band = _one_hot([[2, 2, 1, 1], [2, 1, 0, 2]], 3)  # on the mirror once (row 0, t = 0), one to the right 4 times
    assert decoding.mirror_shares(band, lengths) == {"mirror": pytest.approx(1 / 5), "mirror_or_next": 1.0}
    off = _one_hot([[0, 0, 2, 2], [0, 1, 1, 1]], 3)  # only row 1, t = 1 is in the band (1 = n - t)
    assert decoding.mirror_shares(off, lengths) == {"mirror": 0.0, "mirror_or_next": pytest.approx(1 / 5)}


def test_mirror_shares_per_head_and_averaged():
    lengths = torch.tensor([3])
    right = _one_hot([[2, 1, 0]], 3)  # (1, steps, src_len)
    wrong = _one_hot([[0, 2, 1]], 3)  # t = 1: 2 = n - t (band), t = 2: 1 = n - t (band), t = 0: 0 (neither)
    heads = torch.stack([right, 0.4 * wrong + 0.6 * right * 0.5 + 0.2 * wrong], dim=1)  # (1, 2 heads, 3, 3)
    per_head = decoding.mirror_shares(heads, lengths, per_head=True)
    assert per_head == {"mirror": [1.0, 0.0], "mirror_or_next": [1.0, pytest.approx(2 / 3)]}
    averaged = decoding.mirror_shares(heads, lengths)  # head 0's one-hot (1.0) outweighs head 1's 0.6
    assert averaged == {"mirror": 1.0, "mirror_or_next": 1.0}
    assert decoding.mirror_shares(right, lengths) == decoding.mirror_shares(right[:, None], lengths)


def test_mirror_shares_of_the_shipped_gru_attention_is_high(batch):
    from course_utils.reversal import checkpoints

    model = checkpoints.load_pretrained("gru_attention")
    _, weights = decoding.greedy_decode(model, batch.src, batch.src_lengths, return_attention=True)
    assert decoding.mirror_shares(weights, batch.src_lengths)["mirror"] >= 0.9


def test_mirror_shares_refuses_bad_input():
    w = torch.ones(2, 3, 4) / 4
    with pytest.raises(ValueError, match=r"weights must be \(batch, steps, src_len\)"):
        decoding.mirror_shares(torch.ones(3, 4), torch.tensor([2, 2, 2]))
    with pytest.raises(ValueError, match=r"src_lengths must be \(batch,\) = \(2,\)"):
        decoding.mirror_shares(w, torch.tensor([2]))
    with pytest.raises(TypeError, match="per_head must be True or False"):
        decoding.mirror_shares(w, torch.tensor([2, 2]), per_head="yes")
    with pytest.raises(ValueError, match="no step writes a symbol"):
        decoding.mirror_shares(w, torch.tensor([0, 0]))


# ------------------------------------------------------------------------------- greedy_decode_one, RecomputePrefix


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_decode_one_is_row_zero_of_the_batched_decode(kind):
    model = checkpoints.load_pretrained(kind)
    src = torch.tensor(data.encode("abcdefg"))
    tokens, weights = decoding.greedy_decode_one(model, src)
    batched, batched_weights = decoding.greedy_decode(model, src[None], torch.tensor([7]), return_attention=True)
    assert torch.equal(tokens, batched[0]) and tokens.dim() == 1
    if kind == "gru":
        assert weights is None and batched_weights is None
    else:
        assert torch.equal(weights, batched_weights[0])
        assert weights.shape == ((8, 7) if kind == "gru_attention" else (4, 8, 7))
    if kind != "gru":  # the shipped attention models reverse it and stop at EOS
        assert data.decode(tokens) == "gfedcba" and int(tokens[-1]) == data.EOS


def test_greedy_decode_one_stops_at_max_steps_before_eos():
    model = checkpoints.load_pretrained("gru_attention")
    tokens, weights = decoding.greedy_decode_one(model, torch.tensor(data.encode("abcdefghij")), max_steps=4)
    assert data.decode(tokens) == "jihg" and tokens.shape == (4,) and weights.shape == (4, 10)
    with pytest.raises(ValueError, match=r"src must be one non-empty sequence \(src_len,\)"):
        decoding.greedy_decode_one(model, torch.tensor([data.encode("abc")]))
    with pytest.raises(TypeError, match="src must be a torch.Tensor"):
        decoding.greedy_decode_one(model, data.encode("abc"))


class _Recompute(decoding.RecomputePrefix, torch.nn.Module):
    """A lesson-style model: forward only; the decoding contract comes from RecomputePrefix."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, src, src_lengths, decoder_input, return_attention=False):
        return self.inner(src, src_lengths, decoder_input, return_attention=return_attention)


@torch.no_grad()
def test_recompute_prefix_decodes_like_the_course_transformer(batch):
    course = checkpoints.load_pretrained("transformer")
    mine = _Recompute(course).eval()
    assert isinstance(mine, decoding.Seq2Seq)
    out, weights = decoding.greedy_decode(mine, batch.src, batch.src_lengths, return_attention=True)
    expected, expected_weights = decoding.greedy_decode(course, batch.src, batch.src_lengths, return_attention=True)
    assert torch.equal(out, expected)
    torch.testing.assert_close(weights, expected_weights)
    # by hand: the first step reads BOS alone
    state = mine.init_state(batch.src, batch.src_lengths)
    logits, state, last = mine.decode_step(state, torch.full((3,), data.BOS))
    assert state["tokens"].shape == (3, 1) and last.shape == (3, course.config.num_heads, 10)
    assert torch.equal(logits.argmax(-1), expected[:, 0])
    assert training.evaluate(mine, batch).exact_accuracy == training.evaluate(course, batch).exact_accuracy


def test_recompute_prefix_passes_no_weights_through_and_checks_the_source(batch):
    class NoWeights(decoding.RecomputePrefix, torch.nn.Module):
        def forward(self, src, src_lengths, decoder_input, return_attention=False):
            logits = torch.zeros(src.shape[0], decoder_input.shape[1], data.VOCAB_SIZE)
            return (logits, None) if return_attention else logits

    state = NoWeights().init_state(batch.src, batch.src_lengths)
    assert NoWeights().decode_step(state, torch.ones(3, dtype=torch.long))[2] is None
    with pytest.raises(ValueError, match="src_lengths must lie in"):
        NoWeights().init_state(batch.src, torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="max_steps must be a positive int"):
        NoWeights().init_state(batch.src, batch.src_lengths, max_steps=0)


def test_public_contract_helpers():
    from course_utils.reversal import rnn

    decoding.check_decoder_input(torch.ones(2, 4, dtype=torch.long), 2)
    with pytest.raises(ValueError, match=r"decoder_input must be \(batch=3, tgt_len\)"):
        decoding.check_decoder_input(torch.ones(2, 4, dtype=torch.long), 3)
    with pytest.raises(ValueError, match="decoder_input holds token ids outside"):
        decoding.check_decoder_input(torch.full((2, 4), 99), 2)
    assert decoding.as_config(None, rnn.GRUConfig) == rnn.GRUConfig()
    cfg = rnn.GRUConfig(d_embed=8)
    assert decoding.as_config(cfg, rnn.GRUConfig) is cfg
    with pytest.raises(TypeError, match="cfg must be a GRUConfig"):
        decoding.as_config({"d_embed": 8}, rnn.GRUConfig)
    with pytest.raises(TypeError, match="config_cls must be a config class"):
        decoding.as_config(None, "GRUConfig")
