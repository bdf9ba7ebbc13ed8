"""course_utils.seq2seq: shapes, masks, the additive score, greedy decoding, checkpoints."""

from __future__ import annotations

import hashlib

import pytest
import torch

from course_utils import data, env, seq2seq

KINDS = ["gru", "gru_attention", "transformer"]


def small(kind: str, **config):
    env.set_seed(0)
    return seq2seq.build_model(kind, **config).eval()


@pytest.fixture(scope="module")
def batch():
    return data.collate([data.encode("abcdefg"), data.encode("hij"), data.encode("jihgfedcba")])


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


@torch.no_grad()
def test_additive_score_depends_on_the_decoder_state():
    torch.manual_seed(0)
    attention = seq2seq.AdditiveAttention(d_query=8, d_key=6, d_attn=5)
    keys = torch.randn(1, 7, 6) * 3
    key_mask = torch.ones(1, 7, dtype=torch.bool)
    _, w1 = attention(torch.randn(1, 8) * 3, keys, key_mask)
    _, w2 = attention(torch.randn(1, 8) * 3, keys, key_mask)
    assert float((w1 - w2).abs().max()) > 0.05  # the tanh lets the state change *where* it looks


@torch.no_grad()
def test_seed_concat_score_ignores_the_decoder_state():
    torch.manual_seed(0)
    linear = torch.nn.Linear(8 + 6, 1)
    h = torch.randn(2, 7, 6)
    s1, s2 = torch.randn(2, 8), torch.randn(2, 8) * 5
    scores1 = seq2seq.concat_linear_scores(s1, h, linear.weight, linear.bias)
    scores2 = seq2seq.concat_linear_scores(s2, h, linear.weight, linear.bias)
    assert not torch.allclose(scores1, scores2)  # the scores move ...
    torch.testing.assert_close(torch.softmax(scores1, -1), torch.softmax(scores2, -1))  # ... the weights do not
    both = torch.cat([s1[:, None].expand(-1, 7, -1), h], dim=-1)  # the helper equals nn.Linear on [s; h_j]
    torch.testing.assert_close(scores1, linear(both).squeeze(-1))


def test_additive_scores_match_a_loop():
    torch.manual_seed(0)
    query_part, key_part, v = torch.randn(2, 4), torch.randn(2, 3, 4), torch.randn(4)
    expected = torch.tensor(
        [[float(v @ torch.tanh(query_part[b] + key_part[b, j])) for j in range(3)] for b in range(2)]
    )
    torch.testing.assert_close(seq2seq.additive_scores(query_part, key_part, v), expected)


def test_sinusoidal_positions():
    pe = seq2seq.sinusoidal_positions(50, 8)
    assert pe.shape == (50, 8)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 4))
    assert float(pe[7, 0]) == pytest.approx(torch.sin(torch.tensor(7.0)).item())
    assert float(pe.abs().max()) <= 1.0
    with pytest.raises(ValueError, match="even"):
        seq2seq.sinusoidal_positions(5, 7)


def test_decoder_masks():
    self_mask, cross_mask = seq2seq.make_decoder_masks(torch.tensor([2, 3]), src_len=3, tgt_len=4)
    assert self_mask.shape == (1, 1, 4, 4) and cross_mask.shape == (2, 1, 1, 3)
    assert self_mask[0, 0].int().tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    assert cross_mask[:, 0, 0].int().tolist() == [[1, 1, 0], [1, 1, 1]]


def test_without_positional_encoding_the_transformer_ignores_source_order(batch):
    model = small("transformer", positional_encoding=False)
    perm = torch.tensor([3, 0, 6, 1, 5, 2, 4])
    src = batch.src[:1, :7]
    shuffled = src[:, perm]
    a = model(src, torch.tensor([7]), batch.decoder_input[:1, :8])
    b = model(shuffled, torch.tensor([7]), batch.decoder_input[:1, :8])
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)  # a bag of tokens: it cannot know which is last
    with_pe = small("transformer")
    assert not torch.allclose(
        with_pe(src, torch.tensor([7]), batch.decoder_input[:1, :8]),
        with_pe(shuffled, torch.tensor([7]), batch.decoder_input[:1, :8]),
    )


def test_randomized_positions_are_sorted_distinct_and_repeatable_in_eval():
    model = small("transformer", random_positions=20)
    lengths = torch.tensor([5, 20, 3])
    picks = model._random_positions(lengths, 20, torch.Generator().manual_seed(0))
    for row, n in zip(picks, lengths.tolist(), strict=True):
        real = row[:n]
        assert real.unique().numel() == n and torch.equal(real, real.sort().values) and int(real.max()) < 20
    assert picks[1].tolist() == list(range(20))  # a full-length sequence gets every position, in order
    batch = data.collate([data.encode("abcdefghij")])
    a = model(batch.src, batch.src_lengths, batch.decoder_input)
    b = model(batch.src, batch.src_lengths, batch.decoder_input)
    torch.testing.assert_close(a, b)  # eval mode draws with a fixed seed
    model.train()
    torch.manual_seed(1)
    c = model(batch.src, batch.src_lengths, batch.decoder_input)
    assert not torch.allclose(a, c)  # training mode draws fresh positions
    with pytest.raises(ValueError, match="random_positions"):
        model._random_positions(torch.tensor([21]), 21, None)


def test_scaled_embeddings_multiply_by_sqrt_d_model():
    plain, scaled = small("transformer", positional_encoding=False), small("transformer", scale_embeddings=True)
    tokens = torch.tensor([[3, 4]])
    x = scaled._embed(scaled.src_embed, tokens, torch.zeros(1, 2, 32))
    torch.testing.assert_close(x, plain.src_embed(tokens) * 32**0.5)


class _Scripted(torch.nn.Module):
    """A fake model that emits a fixed token sequence per row, to test greedy_decode's bookkeeping."""

    def __init__(self, script):
        super().__init__()
        self.script = torch.tensor(script)
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    def init_state(self, src, src_lengths):
        return {"t": 0, "seen": []}

    def decode_step(self, state, tokens):
        state["seen"].append(tokens.clone())
        logits = torch.full((self.script.shape[0], data.VOCAB_SIZE), -1.0)
        logits[torch.arange(self.script.shape[0]), self.script[:, state["t"]]] = 1.0
        return logits, {"t": state["t"] + 1, "seen": state["seen"]}, None


def test_greedy_decode_feeds_predictions_and_stops_at_eos():
    model = _Scripted([[5, 2, 7, 7, 7], [6, 8, 9, 2, 7], [3, 3, 3, 3, 3]])
    src = torch.full((3, 3), 3)
    out = seq2seq.greedy_decode(model, src, torch.tensor([3, 3, 3]), max_len=5)
    assert out.tolist() == [[5, 2, 0, 0, 0], [6, 8, 9, 2, 0], [3, 3, 3, 3, 3]]
    model2 = _Scripted([[5, 2, 7], [6, 2, 7]])
    out2 = seq2seq.greedy_decode(model2, torch.full((2, 3), 3), torch.tensor([3, 3]), max_len=3)
    assert out2.tolist() == [[5, 2], [6, 2]]  # every row done: stops early


def test_greedy_decode_feeds_back_its_own_predictions():
    model = _Scripted([[5, 6, 2]])
    seen = []
    original = model.decode_step

    def spy(state, tokens):
        seen.append(tokens.tolist())
        return original(state, tokens)

    model.decode_step = spy
    seq2seq.greedy_decode(model, torch.full((1, 2), 3), torch.tensor([2]), max_len=3)
    assert seen == [[data.BOS], [5], [6]]


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_decode_shapes_and_attention(kind, batch):
    model = small(kind)
    out, weights = seq2seq.greedy_decode(model, batch.src, batch.src_lengths, max_len=6, return_attention=True)
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
        seq2seq.greedy_decode(small("gru_attention"), src, lengths)


def test_forward_rejects_out_of_vocab_decoder_input(batch):
    bad = batch.decoder_input.clone()
    bad[0, 0] = data.VOCAB_SIZE
    with pytest.raises(ValueError, match="decoder_input"):
        small("transformer")(batch.src, batch.src_lengths, bad)


def test_build_model_and_checkpoint_round_trip(tmp_path, batch):
    with pytest.raises(ValueError, match="kind must be one of"):
        seq2seq.build_model("lstm")
    model = small("transformer", positional_encoding=False)
    digest = seq2seq.save_checkpoint(model, tmp_path / "tiny.pt")
    assert len(digest) == 64
    loaded = seq2seq.load_pretrained("tiny", directory=tmp_path)
    assert loaded.config == model.config and not loaded.training
    torch.testing.assert_close(
        loaded(batch.src, batch.src_lengths, batch.decoder_input),
        model(batch.src, batch.src_lengths, batch.decoder_input),
    )
    payload = torch.load(tmp_path / "tiny.pt", weights_only=True)
    assert set(payload) == {"kind", "config", "state_dict"}
    with pytest.raises(FileNotFoundError, match="write-checkpoints"):
        seq2seq.load_pretrained("missing", directory=tmp_path)


@pytest.mark.parametrize("name", sorted(seq2seq.PRETRAINED))
def test_shipped_checkpoints_load_and_are_small(name):
    path = data.data_dir() / "checkpoints" / f"{name}.pt"
    assert path.stat().st_size < 1_000_000
    model = seq2seq.load_pretrained(name)
    kind, config, _ = seq2seq.PRETRAINED[name]
    assert type(model) is type(seq2seq.build_model(kind, **config)) and not model.training
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"{digest}  checkpoints/{name}.pt" in (data.data_dir() / "README.md").read_text()
