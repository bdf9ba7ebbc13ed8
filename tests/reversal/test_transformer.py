"""course_utils.reversal.transformer: positions, masks, the layers, randomized positions (one shared draw)."""

from __future__ import annotations

import pytest
import torch
from _models import small  # tests/reversal/_models.py

from course_utils import data
from course_utils.reversal import transformer


def test_sinusoidal_positions():
    pe = transformer.sinusoidal_positions(50, 8)
    assert pe.shape == (50, 8)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 4))
    assert float(pe[7, 0]) == pytest.approx(torch.sin(torch.tensor(7.0)).item())
    assert float(pe.abs().max()) <= 1.0
    with pytest.raises(ValueError, match="even"):
        transformer.sinusoidal_positions(5, 7)


def test_decoder_masks():
    self_mask, cross_mask = transformer.make_decoder_masks(torch.tensor([2, 3]), src_len=3, tgt_len=4)
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


def test_scaled_embeddings_multiply_by_sqrt_d_model():
    plain, scaled = small("transformer", positional_encoding=False), small("transformer", scale_embeddings=True)
    tokens = torch.tensor([[3, 4]])
    x = scaled._embed(scaled.src_embed, tokens, torch.zeros(1, 2, dtype=torch.long))
    torch.testing.assert_close(x, plain.src_embed(tokens) * 32**0.5 + scaled.pe[0])


def test_randomized_positions_are_one_sorted_draw_shared_by_encoder_and_decoder():
    model = small("transformer", random_positions=20)
    lengths = torch.tensor([5, 19, 3])
    ids = model.position_ids(lengths, 20)  # (batch, 20)
    for row, n in zip(ids, lengths.tolist(), strict=True):
        drawn = row[: n + 1]  # n source tokens; n + 1 decoder steps (y, then EOS)
        assert drawn.unique().numel() == n + 1 and torch.equal(drawn, drawn.sort().values) and int(drawn.max()) < 20
        assert (row[n + 1 :] == 19).all()  # padding: a valid id that nothing attends to
    assert ids[1].tolist() == list(range(20))  # 19 symbols + 1 = 20 ids: every position, in order
    # fewer columns read a prefix of the same draw (encoder: src_len columns; decoder: tgt_len)
    assert torch.equal(model.position_ids(lengths, 7), ids[:, :7])
    with pytest.raises(ValueError, match="random_positions"):
        model.position_ids(torch.tensor([20]), 21)


def test_decoder_step_t_reads_the_same_offset_as_source_token_t():
    """Ruoss et al. (2023): one draw per sequence; the encoder and the decoder both index into it."""
    model = small("transformer", random_positions=30)
    batch = data.collate([data.encode("abcdefg"), data.encode("hij")])
    seen = []
    original = model._embed

    def spy(table, tokens, ids):
        seen.append(ids[:, : tokens.shape[1]].clone())
        return original(table, tokens, ids)

    model._embed = spy
    with torch.no_grad():
        model(batch.src, batch.src_lengths, batch.decoder_input)
    encoder_ids, decoder_ids = seen
    assert torch.equal(decoder_ids[:, : encoder_ids.shape[1]], encoder_ids)
    assert not torch.equal(encoder_ids[0], torch.arange(7))  # really random (seeded in eval mode)


def test_randomized_positions_repeat_in_eval_and_vary_in_training():
    model = small("transformer", random_positions=20)
    batch = data.collate([data.encode("abcdefghij")])
    a = model(batch.src, batch.src_lengths, batch.decoder_input)
    b = model(batch.src, batch.src_lengths, batch.decoder_input)
    torch.testing.assert_close(a, b)  # eval mode draws with a fixed seed
    model.train()
    torch.manual_seed(1)
    c = model(batch.src, batch.src_lengths, batch.decoder_input)
    assert not torch.allclose(a, c)  # training mode draws fresh positions


def test_layers_are_pre_norm_with_one_residual_path():
    torch.manual_seed(0)
    cfg = transformer.TransformerConfig()
    layer = transformer.EncoderLayer(cfg.d_model, cfg.num_heads, cfg.d_ff).eval()
    x = torch.randn(2, 5, cfg.d_model)
    mask = torch.ones(2, 1, 1, 5, dtype=torch.bool)
    h = layer.norm1(x)
    mid = x + layer.self_attn(h, h, h, mask=mask)[0]
    torch.testing.assert_close(layer(x, mask), mid + layer.ffn(layer.norm2(mid)))
    assert "norm_first" not in {f for f in transformer.TransformerConfig.__dataclass_fields__}


def test_state_dict_keys_are_the_lessons():
    keys = list(small("transformer").state_dict())
    assert keys[:2] == ["src_embed.weight", "tgt_embed.weight"]
    assert "decoder_layers.0.cross_attn.query_proj.weight" in keys and "encoder_layers.0.ffn.0.weight" in keys
    assert "pe" not in keys  # the table is rebuilt, not stored


def test_layers_take_sizes_and_keep_the_shipped_state_dict_keys():
    from course_utils.reversal import checkpoints

    shipped = checkpoints.load_pretrained("transformer").state_dict()
    cfg = transformer.TransformerConfig()
    for prefix, layer in (
        ("encoder_layers.0.", transformer.EncoderLayer(cfg.d_model, cfg.num_heads, cfg.d_ff)),
        ("decoder_layers.0.", transformer.DecoderLayer(cfg.d_model, cfg.num_heads, cfg.d_ff, dropout=0.0)),
    ):
        mine = layer.state_dict()
        theirs = {k[len(prefix) :]: v for k, v in shipped.items() if k.startswith(prefix)}
        assert list(mine) == list(theirs)
        assert all(mine[k].shape == theirs[k].shape for k in mine)
        layer.load_state_dict(theirs)  # strict: a lesson's layer loads the shipped weights
    assert transformer.DecoderLayer(8, 2, 16, dropout=0.1).self_attn.dropout == 0.1


def test_the_model_builds_the_same_layers_from_its_config():
    torch.manual_seed(0)
    model = transformer.TransformerSeq2Seq(transformer.TransformerConfig(num_layers=2, d_ff=48))
    torch.manual_seed(0)
    _ = [torch.nn.Embedding(13, 32) for _ in range(2)]  # the two embedding tables come first
    layer = transformer.EncoderLayer(32, 4, 48)
    for (name, a), b in zip(model.encoder_layers[0].state_dict().items(), layer.state_dict().values(), strict=True):
        assert torch.equal(a, b), name  # same sizes, same order of random draws
    assert len(model.encoder_layers) == len(model.decoder_layers) == 2


# ------------------------------------------------------------------------------------------- bad input


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match=r"TransformerConfig.dropout must be in \[0, 1\)"):
        transformer.TransformerConfig(dropout=1.0)
    with pytest.raises(ValueError, match="not divisible by num_heads 4"):
        transformer.TransformerConfig(d_model=30, num_heads=4)
    with pytest.raises(TypeError, match="cfg must be a TransformerConfig"):
        transformer.TransformerSeq2Seq({"d_model": 8})
    with pytest.raises(ValueError, match="tgt_len must be a positive int"):
        transformer.make_decoder_masks(torch.tensor([3, 2]), 3, 0)
    with pytest.raises(TypeError, match="num_positions must be an int"):
        transformer.sinusoidal_positions(4.0, 4)
    with pytest.raises(ValueError, match="num_positions=64"):
        small("transformer").position_ids(torch.tensor([3]), 65)
    with pytest.raises(ValueError, match="not divisible by num_heads 3"):
        transformer.EncoderLayer(32, 3, 64)
    with pytest.raises(ValueError, match="d_ff must be a positive int"):
        transformer.DecoderLayer(32, 4, 0)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        transformer.DecoderLayer(32, 4, 64, dropout=1.0)
