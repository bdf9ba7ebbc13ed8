"""course_utils.data: the shipped splits, their checksums, sampling and padding."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from course_utils import data

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def splits():
    return data.load_splits()


def test_vocabulary():
    assert (data.PAD, data.BOS, data.EOS) == (0, 1, 2)
    assert data.VOCAB_SIZE == len(data.TOKENS) == 3 + len(data.SYMBOLS)
    assert data.encode("aj") == [3, 12]
    assert data.decode([1, 3, 12, 2, 5]) == "<bos>aj"
    assert data.decode(data.encode("hello"[:0] + "abc")) == "abc"


def test_encode_decode_reject_bad_input():
    with pytest.raises(ValueError, match="symbols"):
        data.encode("abz")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        data.decode([3, 13])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        data.check_token_ids(torch.tensor([[0, -1]]), "src")


def test_splits_have_the_documented_sizes_and_lengths(splits):
    for name, spec in data.SPLITS.items():
        lo, hi = spec["lengths"]
        lengths = [len(s) for s in splits[name]]
        assert min(lengths) == lo and max(lengths) == hi, name
        if "per_length" in spec:
            assert len(lengths) == (hi - lo + 1) * spec["per_length"]
            assert np.bincount(lengths)[lo:].tolist() == [spec["per_length"]] * (hi - lo + 1)
        else:
            assert len(lengths) == spec["total"]
        assert all(3 <= t < data.VOCAB_SIZE for s in splits[name] for t in s)


def test_no_two_splits_share_a_sequence(splits):
    names = list(splits)
    for i, a in enumerate(names):
        assert len(set(splits[a])) == len(splits[a]), f"{a} holds a duplicate"
        for b in names[i + 1 :]:
            shared = set(splits[a]) & set(splits[b])
            assert not shared, f"{a} and {b} share {len(shared)} sequences"


def test_generator_is_deterministic_and_matches_the_shipped_files(tmp_path):
    digests = data.write_splits(tmp_path)
    assert digests == data.SHA256
    for name in data.SHA256:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes()


def test_readme_lists_the_checksums():
    readme = (DATA / "README.md").read_text()
    for name, digest in data.SHA256.items():
        assert re.search(rf"{digest}\s+.*{re.escape(name)}|{re.escape(name)}.*{digest}", readme), name


def test_checksum_mismatch_names_file_and_both_digests(tmp_path):
    for name in data.SHA256:
        shutil.copy(DATA / name, tmp_path / name)
    path = tmp_path / "reversal_val.txt"
    path.write_bytes(path.read_bytes().replace(b"a", b"b", 1))
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(ValueError) as info:
        data.load_split("val", tmp_path)
    message = str(info.value)
    assert "reversal_val.txt" in message and data.SHA256["reversal_val.txt"] in message and actual in message
    assert len(data.load_split("test", tmp_path)) == 1300  # the untouched files still load


def test_course_data_dir_overrides_the_location(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path))
    assert data.data_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match="reversal_train.txt"):
        data.load_split("train")
    with pytest.raises(ValueError, match="split must be one of"):
        data.load_split("dev")


def test_make_decoder_io_shifts_right_and_appends_eos():
    y = torch.tensor([[5, 4, 3], [7, 6, 0]])
    decoder_input, target = data.make_decoder_io(y, torch.tensor([3, 2]))
    assert decoder_input.tolist() == [[1, 5, 4, 3], [1, 7, 6, 0]]
    assert target.tolist() == [[5, 4, 3, 2], [7, 6, 2, 0]]
    # the decoder never sees the token it must predict: input t+1 is target t
    assert torch.equal(decoder_input[:, 1:][y != 0], target[:, :-1][y != 0])


def test_collate_pads_and_reverses():
    batch = data.collate([data.encode("abc"), data.encode("de")])
    assert batch.src.tolist() == [[3, 4, 5], [6, 7, 0]]
    assert batch.src_lengths.tolist() == [3, 2]
    assert batch.decoder_input.tolist() == [[1, 5, 4, 3], [1, 7, 6, 0]]
    assert batch.target.tolist() == [[5, 4, 3, 2], [7, 6, 2, 0]]
    assert len(batch) == 2 and batch.to("cpu").src.dtype == torch.long


@pytest.mark.parametrize("bad", [[], [[]], [[3, 13]], [[1, 3]]])
def test_collate_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        data.collate(bad)


def test_sampler_is_seeded_respects_lengths_and_never_yields_held_out(splits):
    a = data.RandomBatchSampler(32, 4, 6, seed=3)
    b = data.RandomBatchSampler(32, 4, 6, seed=3)
    first = [a.sample() for _ in range(5)]
    assert first == [b.sample() for _ in range(5)]
    assert first != [data.RandomBatchSampler(32, 4, 6, seed=4).sample() for _ in range(5)]
    held_out = set(splits["val"]) | set(splits["test"]) | set(splits["test_long"])
    # length 4 has only 10**4 sequences and 140 of them are held out: a rejection must happen here
    short = data.RandomBatchSampler(256, 4, 4, seed=0)
    drawn = [s for _ in range(40) for s in short.sample()]
    assert all(len(s) == 4 for s in drawn)
    assert not set(drawn) & held_out
    assert all(4 <= len(s) <= 6 for batch in first for s in batch)


def test_sampler_pool_and_bad_arguments(splits):
    sampler = data.RandomBatchSampler(16, 4, 5, seed=0, pool=splits["train"])
    pool = set(splits["train"])
    assert all(s in pool and 4 <= len(s) <= 5 for s in sampler.sample())
    batch = next(iter(sampler))
    assert isinstance(batch, data.Batch) and len(batch) == 16
    with pytest.raises(ValueError, match="min_len"):
        data.RandomBatchSampler(8, 5, 4)
    with pytest.raises(ValueError, match="batch_size"):
        data.RandomBatchSampler(0)


# ---- labels of tokens and decoder steps --------------------------------------------------------------------------


def test_token_label_names_special_tokens_and_symbols():
    assert [data.token_label(i) for i in range(data.VOCAB_SIZE)] == list(data.TOKENS)
    assert data.token_label(torch.tensor(5)) == "c" and data.token_label(np.int64(12)) == "j"
    assert data.decode([data.BOS, 3, 4, data.EOS, 5]) == "<bos>ab"  # decode labels tokens the same way
    with pytest.raises(ValueError, match="i holds token ids outside the vocabulary"):
        data.token_label(13)
    with pytest.raises(TypeError, match="i must be one token id"):
        data.token_label(True)
    with pytest.raises(TypeError, match="i must be one token id"):
        data.token_label("a")


def test_step_labels_read_the_previous_output_and_drop_padding_after_eos():
    row = torch.tensor([data.encode("cba")[0], *data.encode("ba"), data.EOS, data.PAD, data.PAD])
    read, written = data.step_labels(row)
    assert written == ["c", "b", "a", "<eos>"]
    assert read == ["<bos>", "c", "b", "a"]
    assert data.step_labels(row.tolist()) == (read, written)
    # a row that never wrote EOS keeps every step; an EOS at the first step is one step
    assert data.step_labels([3, 3, 3]) == (["<bos>", "a", "a"], ["a", "a", "a"])
    assert data.step_labels([data.EOS, data.PAD]) == (["<bos>"], ["<eos>"])
    assert data.step_labels([]) == ([], [])


@given(st.lists(st.integers(0, data.VOCAB_SIZE - 1), max_size=12))
def test_step_labels_properties(tokens):
    read, written = data.step_labels(tokens)
    assert len(read) == len(written) <= len(tokens)
    assert read[1:] == written[:-1] and (not read or read[0] == "<bos>")
    assert "<eos>" not in written[:-1]  # nothing is written after the first EOS
    if data.EOS not in tokens:
        assert len(written) == len(tokens)


def test_step_labels_refuses_bad_input():
    with pytest.raises(ValueError, match=r"tokens must be one decoded row \(steps,\)"):
        data.step_labels(torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="tokens must be one decoded row"):
        data.step_labels("abc")
    with pytest.raises(ValueError, match="tokens holds token ids outside the vocabulary"):
        data.step_labels([3, 99])
