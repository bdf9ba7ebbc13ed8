"""Build, save and load the reversal models: the one module that names the concrete classes.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb``.

- :func:`build_model` ``("gru" | "gru_attention" | "transformer", **config_fields)``;
- :data:`PRETRAINED`: the shipped checkpoints in ``data/checkpoints/`` and how each was trained
  (``Pretrained(kind, model, recipe)``), and :func:`train_pretrained`, which trains one of them again;
- :func:`save_checkpoint` / :func:`load_pretrained`: ``{"kind", "config", "state_dict"}`` files whose SHA-256,
  kind and config are recorded in ``MANIFEST.json`` and checked before unpickling (``weights_only=True``).

``python -m course_utils.reversal.checkpoints --write-checkpoints data/checkpoints`` retrains and writes them.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from course_utils import _manifest, env
from course_utils import _validation as validate
from course_utils.data import data_dir
from course_utils.reversal import training
from course_utils.reversal.rnn import AttentionGRUSeq2Seq, GRUConfig, GRUSeq2Seq
from course_utils.reversal.transformer import TransformerConfig, TransformerSeq2Seq

__all__ = [
    "build_model",
    "count_parameters",
    "Pretrained",
    "PRETRAINED",
    "train_pretrained",
    "save_checkpoint",
    "load_pretrained",
]


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module but is {validate.describe(model)}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# ---------------------------------------------------------------------- building and loading


# kind -> (model class, config class); the class -> kind map is derived from it
_MODELS = {
    "gru": (GRUSeq2Seq, GRUConfig),
    "gru_attention": (AttentionGRUSeq2Seq, GRUConfig),
    "transformer": (TransformerSeq2Seq, TransformerConfig),
}
_KIND = {model_cls: kind for kind, (model_cls, _) in _MODELS.items()}


def build_model(kind: str, **config) -> nn.Module:
    """``build_model("gru" | "gru_attention" | "transformer", **config_fields)``: a fresh model.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    validate.one_of("kind", kind, _MODELS)
    model_cls, config_cls = _MODELS[kind]
    fields = {f.name for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(config) - fields)
    if unknown:
        raise TypeError(f"{config_cls.__name__} has no field {unknown[0]!r}; its fields are {sorted(fields)}")
    return model_cls(config_cls(**config))


class Pretrained(NamedTuple):
    """How a shipped checkpoint was made: ``build_model(kind, **model)``, trained with ``training.recipe(kind, **recipe)``.

    Introduced in notebooks/08_transformer_reversal.ipynb (``PRETRAINED[name].recipe``).
    """

    kind: str  # "gru", "gru_attention" or "transformer"
    model: dict  # config fields that differ from the defaults
    recipe: dict  # TrainConfig fields that differ from the kind's recipe


# The shipped checkpoints in data/checkpoints/: name -> Pretrained(kind, model config, training recipe overrides).
# "_short" models train on lengths 4-12 only (lesson 08's length-generalization experiment).
PRETRAINED = {
    "gru": Pretrained("gru", {}, {}),
    "gru_attention": Pretrained("gru_attention", {}, {}),
    "transformer": Pretrained("transformer", {}, {}),
    "gru_attention_short": Pretrained("gru_attention", {}, {"max_len": 12}),
    "transformer_short": Pretrained("transformer", {}, {"max_len": 12}),
    # randomized positions need a longer run to fit lengths 4-12 (>= 98% exact): 4,000 steps of 256 sequences
    "transformer_short_rpe": Pretrained(
        "transformer",
        {"random_positions": 64},
        {"max_len": 12, "steps": 4000, "lr": 1.5e-2, "warmup_steps": 100, "batch_size": 256},
    ),
    # the control for transformer_short_rpe: plain positions, the same run, every one of its steps
    "transformer_short_long": Pretrained(
        "transformer",
        {},
        {"max_len": 12, "steps": 4000, "lr": 1.5e-2, "warmup_steps": 100, "batch_size": 256, "target_exact": None},
    ),
}


def train_pretrained(name: str, seed: int = 0):
    """Train the model of a shipped checkpoint again: ``(model, TrainResult)``, the model in eval mode.

    ``env.set_seed(seed)``, then ``build_model`` with ``PRETRAINED[name]``'s config, trained with its recipe and
    batches seeded by ``seed`` (``training.recipe(kind, **recipe, seed=seed)``). Seed 0 is how the shipped file was
    made: ``python -m course_utils.reversal.checkpoints --write-checkpoints DIR`` calls this. Other seeds are the
    same experiment run again (``benchmarks/claims.py``).

    Introduced in notebooks/08_transformer_reversal.ipynb.
    """
    validate.one_of("name", name, PRETRAINED)
    seed = validate.nonnegative_int("seed", seed)
    kind, model_config, overrides = PRETRAINED[name]
    env.set_seed(seed)
    model = build_model(kind, **model_config)
    result = training.train(model, training.recipe(kind, **{**overrides, "seed": seed}), progress=False)
    return model, result


def _kind_of(model) -> str:
    if type(model) not in _KIND:
        raise TypeError(
            f"model must be one of {sorted(c.__name__ for c in _KIND)} (built by build_model) but is "
            f"{validate.describe(model)}"
        )
    return _KIND[type(model)]


def save_checkpoint(model: nn.Module, path) -> str:
    """Save ``{"kind", "config", "state_dict"}`` (plain types and tensors only); return its SHA-256.

    The file's digest, size, kind and config are recorded in ``MANIFEST.json`` in the same folder,
    which :func:`load_pretrained` checks before unpickling. ``path`` must end in ``<name>.pt``.
    """
    kind = _kind_of(model)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path such as 'data/checkpoints/gru.pt' but is {validate.describe(path)}")
    path = Path(path)
    if path.suffix != ".pt":
        raise ValueError(f"path must end in .pt (load_pretrained looks for <name>.pt) but is {str(path)!r}")
    _manifest.checkpoint_path(path.parent, path.stem)  # a name load_pretrained accepts
    config = dataclasses.asdict(model.config)
    payload = {"kind": kind, "config": config, "state_dict": model.state_dict()}
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(payload, path)  # to the path itself: torch names the archive's folder after the file
    data = path.read_bytes()
    digest = _manifest.sha256_hex(data)
    entry = {"file": path.name, "sha256": digest, "bytes": len(data), "kind": kind, "config": config}
    _manifest.record(path.parent, path.stem, entry)
    return digest


def _expected(name: str, entry: dict) -> tuple[str, dict]:
    """The kind and full config a checkpoint called ``name`` must hold: ``PRETRAINED``'s, else the manifest's."""
    if name in PRETRAINED:
        kind, overrides, _ = PRETRAINED[name]
        return kind, dataclasses.asdict(_MODELS[kind][1](**overrides))
    return entry.get("kind"), entry.get("config")


def load_pretrained(name: str, directory=None, device=None) -> nn.Module:
    """Load a shipped checkpoint (``data/checkpoints/<name>.pt``) in eval mode, verified.

    In this order, each failure a ``ValueError`` (``FileNotFoundError`` for a missing file) naming the file:

    1. ``name`` is a plain name (``"../outside"`` is refused) of a file inside the folder;
    2. the file's SHA-256 equals the one in the folder's ``MANIFEST.json`` (both digests are named),
       checked *before* anything is unpickled;
    3. ``torch.load(weights_only=True)`` reads it (no code runs), and it holds ``{"kind", "config",
       "state_dict"}``, not a bare state dict;
    4. kind and config are those of ``name`` (``PRETRAINED``, or the manifest for your own checkpoints);
    5. the state dict fits that architecture exactly.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if directory is not None and not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a folder path or None but is {validate.describe(directory)}")
    folder = Path(directory) if directory is not None else data_dir() / "checkpoints"
    available = sorted(p.stem for p in folder.glob("*.pt")) if folder.is_dir() else []
    path = _manifest.checkpoint_path(folder, name, available)
    if not path.is_file():
        raise FileNotFoundError(
            f"no checkpoint {path.name} in {folder} (available: {available}); "
            "write them with `python -m course_utils.reversal.checkpoints --write-checkpoints data/checkpoints`"
        )
    entry = _manifest.read_manifest(folder).get(name)
    if entry is None:
        raise ValueError(
            f"{path.name} in {folder} is not listed in {_manifest.MANIFEST_NAME}, so its SHA-256 cannot be checked "
            "and it is not loaded; save checkpoints with checkpoints.save_checkpoint(model, path), which records them"
        )
    data = path.read_bytes()  # hash and unpickle the very same bytes
    _manifest.verify_bytes(path, data, entry)
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as err:  # any unpickling failure (EOFError, RuntimeError, UnpicklingError): name the file
        raise ValueError(f"{path.name} could not be read as a checkpoint ({type(err).__name__}: {err})") from None
    if not isinstance(payload, dict) or not {"kind", "config", "state_dict"} <= set(payload):
        bare = isinstance(payload, dict) and all(isinstance(v, torch.Tensor) for v in payload.values())
        what = "a bare state_dict (parameter name -> tensor)" if bare else f"a {type(payload).__name__}"
        raise ValueError(
            f"{path.name} holds {what}, not {{'kind', 'config', 'state_dict'}}: the model it belongs to is unknown. "
            "Save models with checkpoints.save_checkpoint(model, path)"
        )
    kind, config = payload["kind"], payload["config"]
    want_kind, want_config = _expected(name, entry)
    if kind != want_kind or kind != entry.get("kind"):
        raise ValueError(f"{path.name} holds a {kind!r} model but {name!r} is a {want_kind!r} checkpoint")
    if config != want_config or config != entry.get("config"):
        diff = sorted(k for k in set(config) | set(want_config or {}) if config.get(k) != (want_config or {}).get(k))
        raise ValueError(f"{path.name} holds a {kind!r} config that differs from {name!r}'s in {diff}")
    try:
        model = build_model(kind, **config)
        model.load_state_dict(payload["state_dict"])
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"{path.name}: its weights do not fit a {kind!r} model with its config ({err})") from None
    target = torch.device("cpu") if device is None else env.get_device(device)
    return model.to(target).eval()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train the reversal models and write their checkpoints.")
    parser.add_argument("--write-checkpoints", type=Path, metavar="DIR", required=True)
    parser.add_argument("--only", nargs="*", choices=sorted(PRETRAINED), help="train only these")
    args = parser.parse_args(argv)
    for name in args.only or PRETRAINED:
        model, result = train_pretrained(name)
        digest = save_checkpoint(model, args.write_checkpoints / f"{name}.pt")
        print(f"{digest}  {name}.pt  ({result.steps} steps, validation exact {result.val_exact:.4g})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
