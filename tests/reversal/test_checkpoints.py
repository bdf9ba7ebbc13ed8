"""course_utils.reversal.checkpoints: build, save, load; checkpoints are verified before they are trusted; data files too. Every refusal names the file.

All corruption happens on temporary copies: the shipped files are never modified.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import zipfile

import pytest
import torch
from _models import small  # tests/reversal/_models.py

from course_utils import _manifest, data
from course_utils.reversal import checkpoints

SHIPPED = data.data_dir() / "checkpoints"


@pytest.fixture
def folder(tmp_path):
    """A copy of the shipped checkpoints and their manifest."""
    target = tmp_path / "checkpoints"
    shutil.copytree(SHIPPED, target)
    return target


def _relist(folder, name):
    """Record the file's current bytes in the manifest, as if it had been saved that way (past the digest check)."""
    path = folder / f"{name}.pt"
    entries = _manifest.read_manifest(folder)
    entry = dict(entries.get(name, {"file": path.name, "kind": "gru", "config": {}}))
    raw = path.read_bytes()
    entry.update(sha256=_manifest.sha256_hex(raw), bytes=len(raw))
    _manifest.record(folder, name, entry)


def _tensor_byte_offset(path) -> int:
    """Offset of a byte in the middle of a stored tensor (a zip member ``.../data/N``), not in the pickle or index."""
    with zipfile.ZipFile(path) as archive:
        info = next(i for i in archive.infolist() if re.search(r"/data/\d+$", i.filename) and i.file_size > 64)
        assert info.compress_type == zipfile.ZIP_STORED  # torch stores tensors uncompressed
    raw = path.read_bytes()
    name_len = int.from_bytes(raw[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(raw[info.header_offset + 28 : info.header_offset + 30], "little")
    return info.header_offset + 30 + name_len + extra_len + info.file_size // 2  # local header, then the bytes


def test_manifest_lists_every_shipped_checkpoint_with_its_digest_kind_and_config():
    entries = _manifest.read_manifest(SHIPPED)
    assert sorted(entries) == sorted(checkpoints.PRETRAINED) == sorted(p.stem for p in SHIPPED.glob("*.pt"))
    for name, entry in entries.items():
        raw = (SHIPPED / entry["file"]).read_bytes()
        assert entry["sha256"] == _manifest.sha256_hex(raw) and entry["bytes"] == len(raw), name
        kind, overrides, _ = checkpoints.PRETRAINED[name]
        assert entry["kind"] == kind
        assert entry["config"] == checkpoints._expected(name, entry)[1]


def test_data_readme_lists_the_manifest_digests():
    readme = (data.data_dir() / "README.md").read_text()
    listed = {name: digest for digest, name in re.findall(r"^([0-9a-f]{64})  checkpoints/(\S+)\.pt$", readme, re.M)}
    manifest = {name: entry["sha256"] for name, entry in _manifest.read_manifest(SHIPPED).items()}
    assert listed == manifest, "data/README.md's checkpoint digests differ from data/checkpoints/MANIFEST.json"


def test_every_shipped_checkpoint_loads(folder):
    for name in checkpoints.PRETRAINED:
        model = checkpoints.load_pretrained(name, directory=folder)
        assert not model.training


def test_flipped_byte_inside_a_tensor_is_refused_before_unpickling(folder):
    path = folder / "gru.pt"
    raw = bytearray(path.read_bytes())
    offset = _tensor_byte_offset(path)
    raw[offset] ^= 0x01
    path.write_bytes(bytes(raw))
    expected = _manifest.read_manifest(folder)["gru"]["sha256"]
    with pytest.raises(ValueError, match=r"checksum mismatch for gru\.pt") as info:
        checkpoints.load_pretrained("gru", directory=folder)
    message = str(info.value)
    assert expected in message and _manifest.sha256_hex(bytes(raw)) in message and "not unpickled" in message
    # the same flipped byte would have loaded silently without the digest: torch itself does not notice
    payload = torch.load(io.BytesIO(bytes(raw)), weights_only=True)
    original = torch.load(SHIPPED / "gru.pt", weights_only=True)["state_dict"]
    changed = [k for k, t in payload["state_dict"].items() if not torch.equal(t, original[k])]
    assert len(changed) == 1, changed  # exactly one weight tensor differs, silently


@pytest.mark.parametrize("how", ["truncated", "empty"])
def test_truncated_or_empty_file_is_refused_with_its_name(folder, how):
    path = folder / "transformer.pt"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2] if how == "truncated" else b"")
    with pytest.raises(ValueError, match=r"transformer\.pt.*(truncated|empty)"):
        checkpoints.load_pretrained("transformer", directory=folder)
    _relist(folder, "transformer")  # even when the manifest agrees, the file cannot be read
    with pytest.raises(ValueError, match=r"transformer\.pt could not be read as a checkpoint"):
        checkpoints.load_pretrained("transformer", directory=folder)


def test_bare_state_dict_is_refused_with_its_name(folder):
    path = folder / "gru.pt"
    torch.save(checkpoints.build_model("gru").state_dict(), path)
    with pytest.raises(ValueError, match=r"checksum mismatch for gru\.pt"):
        checkpoints.load_pretrained("gru", directory=folder)
    _relist(folder, "gru")
    with pytest.raises(ValueError, match=r"gru\.pt holds a bare state_dict"):
        checkpoints.load_pretrained("gru", directory=folder)


def test_wrong_model_under_a_name_is_refused(folder):
    shutil.copy(folder / "transformer.pt", folder / "gru.pt")
    _relist(folder, "gru")
    with pytest.raises(ValueError, match=r"gru\.pt holds a 'transformer' model but 'gru' is a 'gru' checkpoint"):
        checkpoints.load_pretrained("gru", directory=folder)


def test_wrong_architecture_is_refused_with_its_name(folder):
    path = folder / "gru.pt"
    payload = torch.load(path, weights_only=True)
    payload["state_dict"] = checkpoints.build_model("gru_attention").state_dict()  # kind and config say "gru"
    torch.save(payload, path)
    _relist(folder, "gru")
    with pytest.raises(ValueError, match=r"gru\.pt: its weights do not fit a 'gru' model"):
        checkpoints.load_pretrained("gru", directory=folder)


def test_changed_config_is_refused_with_its_name(folder):
    path = folder / "transformer.pt"
    payload = torch.load(path, weights_only=True)
    payload["config"]["num_heads"] = 2
    torch.save(payload, path)
    _relist(folder, "transformer")
    with pytest.raises(ValueError, match=r"transformer\.pt holds a 'transformer' config that differs .*num_heads"):
        checkpoints.load_pretrained("transformer", directory=folder)


@pytest.mark.parametrize("name", ["../outside", "checkpoints/gru", "/etc/passwd", "gru.pt", "", ".hidden"])
def test_names_outside_the_folder_are_refused(folder, name):
    (folder.parent / "outside.pt").write_bytes((folder / "gru.pt").read_bytes())
    with pytest.raises(ValueError, match="name must be a plain checkpoint name"):
        checkpoints.load_pretrained(name, directory=folder)


def test_symlink_leaving_the_folder_is_refused(folder):
    (folder.parent / "elsewhere.pt").write_bytes((folder / "gru.pt").read_bytes())
    (folder / "sneaky.pt").symlink_to(folder.parent / "elsewhere.pt")
    with pytest.raises(ValueError, match=r"sneaky\.pt .* points outside the folder"):
        checkpoints.load_pretrained("sneaky", directory=folder)


def test_unlisted_file_is_refused(folder):
    shutil.copy(folder / "gru.pt", folder / "copy.pt")
    with pytest.raises(ValueError, match=r"copy\.pt .* is not listed in MANIFEST\.json"):
        checkpoints.load_pretrained("copy", directory=folder)


def test_missing_manifest_means_nothing_loads(folder):
    (folder / _manifest.MANIFEST_NAME).unlink()
    with pytest.raises(ValueError, match=r"gru\.pt .* is not listed in MANIFEST\.json"):
        checkpoints.load_pretrained("gru", directory=folder)


def test_broken_manifest_is_named(folder):
    (folder / _manifest.MANIFEST_NAME).write_text("{not json")
    with pytest.raises(ValueError, match=r"MANIFEST\.json is not a valid checkpoint manifest"):
        checkpoints.load_pretrained("gru", directory=folder)


def test_save_checkpoint_records_the_manifest_and_round_trips(tmp_path):
    torch.manual_seed(0)
    model = checkpoints.build_model("transformer", num_layers=1, d_model=16, num_heads=2)
    digest = checkpoints.save_checkpoint(model, tmp_path / "mine.pt")
    entry = json.loads((tmp_path / "MANIFEST.json").read_text())["checkpoints"]["mine"]
    assert entry["sha256"] == digest == _manifest.sha256_hex((tmp_path / "mine.pt").read_bytes())
    assert entry["kind"] == "transformer" and entry["config"]["d_model"] == 16
    loaded = checkpoints.load_pretrained("mine", directory=tmp_path)
    for (name, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    # a second save of other weights under the same name replaces the entry, and the old digest no longer loads
    torch.manual_seed(1)
    checkpoints.save_checkpoint(checkpoints.build_model("transformer", d_model=16, num_heads=2), tmp_path / "mine.pt")
    assert json.loads((tmp_path / "MANIFEST.json").read_text())["checkpoints"]["mine"]["sha256"] != digest


def test_data_file_corruption_is_refused_with_its_name(tmp_path):
    for name in data.SHA256:
        shutil.copy(data.data_dir() / name, tmp_path / name)
    path = tmp_path / "reversal_val.txt"
    raw = bytearray(path.read_bytes())
    raw[10] = ord("a") if raw[10] != ord("a") else ord("b")
    path.write_bytes(bytes(raw))
    with pytest.raises(
        ValueError,
        match=rf"checksum mismatch for reversal_val\.txt: expected SHA-256 {data.SHA256['reversal_val.txt']}",
    ):
        data.load_split("val", tmp_path)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"reversal_val\.txt"):
        data.load_split("val", tmp_path)
    assert data.load_split("test", tmp_path) == data.load_split("test")  # the intact copies still load


def test_build_model_and_checkpoint_round_trip(tmp_path, batch):
    with pytest.raises(ValueError, match="kind must be one of"):
        checkpoints.build_model("lstm")
    model = small("transformer", positional_encoding=False)
    digest = checkpoints.save_checkpoint(model, tmp_path / "tiny.pt")
    assert len(digest) == 64
    loaded = checkpoints.load_pretrained("tiny", directory=tmp_path)
    assert loaded.config == model.config and not loaded.training
    torch.testing.assert_close(
        loaded(batch.src, batch.src_lengths, batch.decoder_input),
        model(batch.src, batch.src_lengths, batch.decoder_input),
    )
    payload = torch.load(tmp_path / "tiny.pt", weights_only=True)
    assert set(payload) == {"kind", "config", "state_dict"}
    with pytest.raises(FileNotFoundError, match="write-checkpoints"):
        checkpoints.load_pretrained("missing", directory=tmp_path)


@pytest.mark.parametrize("name", sorted(checkpoints.PRETRAINED))
def test_shipped_checkpoints_load_and_are_small(name):
    path = data.data_dir() / "checkpoints" / f"{name}.pt"
    assert path.stat().st_size < 1_000_000
    model = checkpoints.load_pretrained(name)
    kind, config, _ = checkpoints.PRETRAINED[name]
    assert type(model) is type(checkpoints.build_model(kind, **config)) and not model.training
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"{digest}  checkpoints/{name}.pt" in (data.data_dir() / "README.md").read_text()


def test_kind_map_is_derived_and_configs_are_checked():
    assert {kind: model_cls for model_cls, kind in checkpoints._KIND.items()} == {
        kind: model_cls for kind, (model_cls, _) in checkpoints._MODELS.items()
    }
    with pytest.raises(TypeError, match="GRUConfig has no field 'd_model'"):
        checkpoints.build_model("gru", d_model=8)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        checkpoints.count_parameters("gru")
    with pytest.raises(TypeError, match="model must be one of"):
        checkpoints.save_checkpoint(torch.nn.Linear(2, 2), "x.pt")
    with pytest.raises(ValueError, match="path must end in .pt"):
        checkpoints.save_checkpoint(small("gru"), "model.pth")


def test_rpe_checkpoint_fits_its_training_lengths():
    """The shipped transformer_short_rpe was trained long enough to fit lengths 4-12 (issue 13)."""
    from course_utils.reversal import training

    model = checkpoints.load_pretrained("transformer_short_rpe")
    inside = [s for s in data.load_split("test") if len(s) <= 12]
    assert training.evaluate(model, inside).exact_accuracy >= 0.98


# ---- train_pretrained: the recipe of a shipped file, run again -------------------------------------------------------


def _tiny(monkeypatch):
    tiny = checkpoints.Pretrained("gru_attention", {"d_embed": 8, "d_hidden": 8}, {"steps": 3, "batch_size": 8})
    monkeypatch.setitem(checkpoints.PRETRAINED, "tiny", tiny)
    return tiny


def test_train_pretrained_is_what_the_cli_did_before(monkeypatch):
    """Seed 0 repeats the old CLI's steps exactly: recipe, env.set_seed(cfg.seed), build, train."""
    from course_utils import env
    from course_utils.reversal import training

    kind, config, overrides = _tiny(monkeypatch)
    cfg = training.recipe(kind, **overrides)
    env.set_seed(cfg.seed)
    by_hand = checkpoints.build_model(kind, **config)
    by_hand_run = training.train(by_hand, cfg, progress=False)
    model, run = checkpoints.train_pretrained("tiny")
    assert run.losses == by_hand_run.losses and not model.training
    for (name, a), b in zip(model.state_dict().items(), by_hand.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    other, other_run = checkpoints.train_pretrained("tiny", seed=1)  # another seed: another init and other batches
    assert other_run.losses != run.losses
    assert not torch.equal(other.cell.weight_ih, model.cell.weight_ih)


def test_train_pretrained_refuses_unknown_names_and_the_cli_calls_it(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="name must be one of"):
        checkpoints.train_pretrained("gpt")
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        checkpoints.train_pretrained("gru", seed=-1)
    called = []
    monkeypatch.setattr(checkpoints, "train_pretrained", lambda name: called.append(name) or (small("gru"), _Run()))
    monkeypatch.setattr(checkpoints, "save_checkpoint", lambda model, path: "digest")
    assert checkpoints.main(["--write-checkpoints", str(tmp_path), "--only", "gru", "transformer"]) == 0
    assert called == ["gru", "transformer"]


class _Run:
    steps, val_exact = 1, 1.0


def test_pretrained_entries_are_named_tuples():
    for name, entry in checkpoints.PRETRAINED.items():
        assert isinstance(entry, checkpoints.Pretrained) and entry == (entry.kind, entry.model, entry.recipe), name
    assert checkpoints.PRETRAINED["transformer_short_rpe"].recipe["steps"] == 4000
