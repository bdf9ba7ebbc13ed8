"""The sequence-reversal task: vocabulary, shipped splits, fresh random batches, padding.

Introduced in ``notebooks/07_seq2seq_rnn_attention.ipynb``.

A source ``x`` is a random string over ten symbols (``a`` .. ``j``); its target ``y`` is ``x``
reversed. Token ids: ``PAD = 0``, ``BOS = 1``, ``EOS = 2``, symbols ``3 .. 12`` (``vocab = 13``).

Teacher forcing done right (a :class:`Batch` holds all four tensors)::

    src           = x                  (batch, src_len)   PAD after each sequence
    decoder_input = BOS + y            (batch, tgt_len)   tgt_len = src_len + 1
    target        = y + EOS            (batch, tgt_len)   PAD positions are ignored by the loss

so at step ``t`` the decoder sees ``y[:t]`` and must predict ``y[t]`` (or EOS): never the token it
must predict. The shipped splits live in ``data/`` (``reversal_{train,val,test,test_long}.txt``, one
sequence per line); :func:`load_split` checks each file's SHA-256 against :data:`SHA256`, and
``python -m course_utils.data --write data`` regenerates them bit-identically.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from course_utils import _validation as validate

__all__ = [
    "PAD",
    "BOS",
    "EOS",
    "SYMBOLS",
    "TOKENS",
    "VOCAB_SIZE",
    "SPLITS",
    "SHA256",
    "LENGTH_BUCKETS",
    "Batch",
    "data_dir",
    "encode",
    "decode",
    "token_label",
    "step_labels",
    "check_token_ids",
    "generate_splits",
    "write_splits",
    "load_split",
    "load_splits",
    "make_decoder_io",
    "collate",
    "RandomBatchSampler",
]

PAD, BOS, EOS = 0, 1, 2
SYMBOLS = "abcdefghij"
TOKENS = ("<pad>", "<bos>", "<eos>", *SYMBOLS)
VOCAB_SIZE = len(TOKENS)  # 13
_FIRST_SYMBOL = 3

GENERATOR_SEED = 20_240_507  # the one seed behind every shipped split
# name -> (lengths, sequences per length or None, total when lengths are drawn uniformly)
SPLITS = {
    "test_long": {"lengths": (17, 20), "per_length": 100},  # longer than any training sequence
    "test": {"lengths": (4, 16), "per_length": 100},  # 1300 held-out sequences
    "val": {"lengths": (4, 16), "per_length": 40},  # 520, for early stopping
    "train": {"lengths": (4, 16), "total": 8000},  # a fixed pool; training normally samples fresh batches
}
# Expected SHA-256 of each shipped file (also listed in data/README.md).
SHA256 = {
    "reversal_train.txt": "9b7d8ba28ea9204610255ac56cdbf1be4fe163c8c01c25be66108ca3dc105ee3",
    "reversal_val.txt": "33c46d4ea85775e37ae8e22d893d40f5ba146a3b713d90f4b3a2e379cf1331bc",
    "reversal_test.txt": "60559c23a3c2f35f3a341d8c658d7f7716d352ac2b80f17fe886d03330c8f6e1",
    "reversal_test_long.txt": "68204fc45ba80a1ec0cc4141b888619d8c7fe8757a9e90a69a9d186184d49bc1",
}
# Buckets for per-length reports: short, medium, long (all seen in training), longer than training.
LENGTH_BUCKETS = ((4, 8), (9, 12), (13, 16), (17, 20))


def data_dir() -> Path:
    """The ``data/`` folder: ``$COURSE_DATA_DIR`` if set, else ``data/`` next to ``course_utils/``."""
    override = os.environ.get("COURSE_DATA_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1] / "data"


def _directory(directory):
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a folder path such as 'data' but is {validate.describe(directory)}")
    return directory


def _file_name(split: str) -> str:
    if not isinstance(split, str) or split not in SPLITS:
        raise ValueError(f"split must be one of {sorted(SPLITS)} but is {split!r}")
    return f"reversal_{split}.txt"


def encode(text: str) -> list[int]:
    """``"abc" -> [3, 4, 5]``: symbols to token ids (no BOS/EOS added).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str over the symbols {SYMBOLS!r} but is {validate.describe(text)}")
    bad = sorted(set(text) - set(SYMBOLS))
    if bad:
        raise ValueError(f"text may only use the symbols {SYMBOLS!r} but contains {bad}")
    return [_FIRST_SYMBOL + SYMBOLS.index(ch) for ch in text]


def decode(ids, *, stop_at_eos: bool = True) -> str:
    """Token ids to a readable string: symbols as letters, PAD skipped, stops at EOS (``"<bos>"`` kept).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    stop_at_eos = validate.boolean("stop_at_eos", stop_at_eos)
    if isinstance(ids, torch.Tensor):
        ids = ids.tolist()
    if isinstance(ids, (str, bytes)) or np.ndim(np.asarray(ids, dtype=object)) != 1:
        raise ValueError(f"ids must be a 1-D sequence of token ids but is {validate.describe(ids)}")
    check_token_ids(ids, "ids")
    out = []
    for i in ids:
        if i == EOS and stop_at_eos:
            break
        if i == PAD:
            continue
        out.append(token_label(i))
    return "".join(out)


def token_label(i: int) -> str:
    """``'<pad>'``, ``'<bos>'``, ``'<eos>'`` or the symbol (``'a'`` .. ``'j'``) of token id ``i``.

    The label of one token in a heatmap or the explorer: ``token_label(data.BOS) == '<bos>'``, ``token_label(3) == 'a'``.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if isinstance(i, torch.Tensor) and i.dim() == 0:
        i = i.item()
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"i must be one token id (an int in [0, {VOCAB_SIZE})) but is {validate.describe(i)}")
    check_token_ids([int(i)], "i")
    return TOKENS[i] if i < _FIRST_SYMBOL else SYMBOLS[i - _FIRST_SYMBOL]


def step_labels(tokens) -> tuple[list[str], list[str]]:
    """What each decoder step reads and writes, for one decoded row ``tokens`` (steps,) ending in EOS (then PAD).

    ``written[t]`` is the label of the token written at step t; ``read[t]`` is ``'<bos>'`` for t = 0, else the
    token written at t - 1 (the decoder reads its own previous output). PAD after the first EOS is dropped (a
    batched greedy decode pads finished rows); a row without EOS keeps every step. Decoder heatmaps label their
    rows with ``written``; the keys of decoder self-attention with ``read``.

    >>> step_labels([5, 4, 3, EOS, PAD])
    (['<bos>', 'c', 'b', 'a'], ['c', 'b', 'a', '<eos>'])

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if isinstance(tokens, torch.Tensor):
        if tokens.dim() != 1:
            raise ValueError(f"tokens must be one decoded row (steps,) but has shape {tuple(tokens.shape)}")
        tokens = tokens.tolist()
    if isinstance(tokens, (str, bytes)) or np.ndim(np.asarray(tokens, dtype=object)) != 1:
        raise ValueError(f"tokens must be one decoded row (steps,) of token ids but is {validate.describe(tokens)}")
    tokens = list(tokens)
    check_token_ids(tokens, "tokens")
    if EOS in tokens:
        tokens = tokens[: tokens.index(EOS) + 1]
    written = [token_label(i) for i in tokens]
    return ["<bos>", *written[:-1]][: len(written)], written


def check_token_ids(ids, name: str = "ids") -> None:
    """Raise ``ValueError`` naming ``name`` if any id lies outside ``[0, VOCAB_SIZE)`` (or is not an integer).

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be the argument's name (a str) but is {validate.describe(name)}")
    if isinstance(ids, torch.Tensor):
        if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise ValueError(f"{name} must hold integer token ids but has dtype {ids.dtype}")
        bad = (ids < 0) | (ids >= VOCAB_SIZE)
        if bool(bad.any()):
            raise ValueError(
                f"{name} holds token ids outside the vocabulary [0, {VOCAB_SIZE}): {sorted(set(ids[bad].tolist()))[:5]}"
            )
        return
    flat = np.ravel(np.asarray(ids, dtype=object)).tolist()
    bad = [i for i in flat if isinstance(i, bool) or not (isinstance(i, (int, np.integer)) and 0 <= i < VOCAB_SIZE)]
    if bad:
        raise ValueError(f"{name} holds token ids outside the vocabulary [0, {VOCAB_SIZE}): {bad[:5]}")


# --------------------------------------------------------------------------------------- splits


def _draw(rng: np.random.Generator, length: int, seen: set) -> tuple[int, ...]:
    while True:
        seq = tuple(int(s) for s in rng.integers(_FIRST_SYMBOL, VOCAB_SIZE, size=length))
        if seq not in seen:
            seen.add(seq)
            return seq


def generate_splits(seed: int = GENERATOR_SEED) -> dict[str, list[tuple[int, ...]]]:
    """Draw every split from one ``np.random.default_rng(seed)``; no sequence appears twice anywhere.

    Splits are drawn in the order of :data:`SPLITS` (held-out ones first), so ``train`` never
    contains a test or validation sequence. Returns ``{split: [token-id tuples]}``.
    """
    rng = np.random.default_rng(validate.nonnegative_int("seed", seed))
    seen: set = set()
    splits = {}
    for name, spec in SPLITS.items():
        lo, hi = spec["lengths"]
        if "per_length" in spec:
            lengths = [n for n in range(lo, hi + 1) for _ in range(spec["per_length"])]
        else:
            lengths = rng.integers(lo, hi + 1, size=spec["total"]).tolist()
        splits[name] = [_draw(rng, n, seen) for n in lengths]
    return splits


def _serialize(sequences) -> bytes:
    return "".join(decode(seq) + "\n" for seq in sequences).encode("ascii")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_splits(directory, seed: int = GENERATOR_SEED) -> dict[str, str]:
    """Write ``reversal_<split>.txt`` files into ``directory``; return ``{file name: SHA-256}``."""
    directory = Path(_directory(directory))
    directory.mkdir(parents=True, exist_ok=True)
    digests = {}
    for name, sequences in generate_splits(seed).items():
        data = _serialize(sequences)
        (directory / _file_name(name)).write_bytes(data)
        digests[_file_name(name)] = _sha256(data)
    return digests


def load_split(split: str, directory=None) -> list[tuple[int, ...]]:
    """Load one shipped split as a list of token-id tuples, after checking its SHA-256.

    Parameters
    ----------
    split : {"train", "val", "test", "test_long"}
    directory : path, optional (default :func:`data_dir`)

    Raises
    ------
    ValueError
        If the file's digest differs from :data:`SHA256`; the message names the file and both digests.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    name = _file_name(split)
    path = Path(_directory(directory)) if directory is not None else data_dir()
    path = path / name
    if not path.is_file():
        what = "is not a file" if os.path.lexists(path) else "is missing"
        raise FileNotFoundError(f"{path} {what}; rebuild it with `python -m course_utils.data --write data`")
    data = path.read_bytes()
    digest = _sha256(data)
    if digest != SHA256[name]:
        raise ValueError(
            f"checksum mismatch for {name}: expected SHA-256 {SHA256[name]} but the file has {digest}; "
            "rebuild it with `python -m course_utils.data --write data`"
        )
    return [tuple(encode(line)) for line in data.decode("ascii").splitlines()]


def load_splits(directory=None) -> dict[str, list[tuple[int, ...]]]:
    """All four splits, checked: ``{"train": [...], "val": [...], "test": [...], "test_long": [...]}``."""
    return {name: load_split(name, directory) for name in SPLITS}


# ------------------------------------------------------------------------------------ batching


@dataclass
class Batch:
    """A padded batch for teacher forcing.

    Attributes
    ----------
    src : LongTensor (batch, src_len)            x, PAD after each sequence
    src_lengths : LongTensor (batch,)            real length of each x
    decoder_input : LongTensor (batch, tgt_len)  BOS + y, PAD after (tgt_len = src_len + 1)
    target : LongTensor (batch, tgt_len)         y + EOS, PAD after (PAD is ignored by the loss)
    """

    src: torch.Tensor
    src_lengths: torch.Tensor
    decoder_input: torch.Tensor
    target: torch.Tensor

    def __post_init__(self):
        for name in ("src", "src_lengths", "decoder_input", "target"):
            validate.integer_tensor(f"Batch.{name}", getattr(self, name))
        batch = self.src.shape[0] if self.src.dim() == 2 else None
        if (
            batch is None
            or self.src_lengths.shape != (batch,)
            or self.decoder_input.dim() != 2
            or self.decoder_input.shape != self.target.shape
            or self.target.shape[0] != batch
        ):
            raise ValueError(
                "Batch needs src (batch, src_len), src_lengths (batch,), decoder_input and target (batch, tgt_len) but "
                f"got {tuple(self.src.shape)}, {tuple(self.src_lengths.shape)}, {tuple(self.decoder_input.shape)}, "
                f"{tuple(self.target.shape)}; build batches with collate(sources)"
            )

    def to(self, device) -> Batch:
        return Batch(*(t.to(device) for t in (self.src, self.src_lengths, self.decoder_input, self.target)))

    def __len__(self) -> int:
        return self.src.shape[0]


def make_decoder_io(y: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-forcing pair from padded targets: ``decoder_input = BOS + y``, ``target = y + EOS``.

    Parameters
    ----------
    y : LongTensor (batch, max_len)   the reversed sequences, PAD after each
    lengths : LongTensor (batch,)     real lengths

    Returns
    -------
    decoder_input, target : LongTensor (batch, max_len + 1), PAD after each sequence

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.

    Examples
    --------
    >>> inp, tgt = make_decoder_io(torch.tensor([[5, 4, 0]]), torch.tensor([2]))
    >>> inp.tolist(), tgt.tolist()
    ([[1, 5, 4, 0]], [[5, 4, 2, 0]])
    """
    validate.integer_tensor("y", y)
    validate.integer_tensor("lengths", lengths)
    if y.dim() != 2 or lengths.shape != (y.shape[0],):
        raise ValueError(
            f"y must be (batch, max_len) and lengths (batch,) but are {tuple(y.shape)}, {tuple(lengths.shape)}"
        )
    if lengths.numel() and (int(lengths.min()) < 0 or int(lengths.max()) > y.shape[1]):
        raise ValueError(f"lengths must lie in [0, max_len={y.shape[1]}] but are {lengths.tolist()}")
    batch = y.shape[0]
    bos = torch.full((batch, 1), BOS, dtype=y.dtype, device=y.device)
    pad = torch.full((batch, 1), PAD, dtype=y.dtype, device=y.device)
    decoder_input = torch.cat([bos, y], dim=1)  # (batch, 1) + (batch, max_len) -> (batch, max_len + 1)
    target = torch.cat([y, pad], dim=1)  # (batch, max_len) + (batch, 1) -> (batch, max_len + 1)
    target = target.scatter(1, lengths[:, None], EOS)  # EOS right after the last real token
    return decoder_input, target


def _sequences(sources):
    for i, s in enumerate(sources):
        if isinstance(s, (str, bytes)) or not hasattr(s, "__iter__"):
            raise TypeError(
                f"sources[{i}] must be a sequence of token ids (use encode({s!r})) but is {validate.describe(s)}"
            )
        yield s


def collate(sources) -> Batch:
    """Pad a list of token-id sequences ``x`` into a :class:`Batch` (targets are the reversals).

    Raises ``ValueError`` on an empty list, an empty sequence, or an id outside the symbols.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """
    if isinstance(sources, (str, bytes)) or not hasattr(sources, "__iter__"):
        raise TypeError(
            f"sources must be a list of token-id sequences (e.g. [encode('abc')]) but is {validate.describe(sources)}"
        )
    sources = [list(s.tolist() if isinstance(s, torch.Tensor) else s) for s in _sequences(sources)]
    for i, s in enumerate(sources):
        if not all(isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_)) for t in s):
            raise TypeError(f"sources[{i}] must hold integer token ids but is {s[:5]}")
    if not sources:
        raise ValueError("sources is empty: a batch needs at least one sequence")
    if any(len(s) == 0 for s in sources):
        raise ValueError("sources holds an empty sequence; every x needs at least one symbol")
    lengths = np.array([len(s) for s in sources])
    max_len = int(lengths.max())
    src = np.full((len(sources), max_len), PAD, dtype=np.int64)
    y = np.full((len(sources), max_len), PAD, dtype=np.int64)
    for i, s in enumerate(sources):
        src[i, : len(s)] = s
        y[i, : len(s)] = s[::-1]
    real = np.arange(max_len)[None, :] < lengths[:, None]  # (batch, max_len)
    if ((src[real] < _FIRST_SYMBOL) | (src[real] >= VOCAB_SIZE)).any():
        bad = sorted({int(i) for i in src[real] if not _FIRST_SYMBOL <= i < VOCAB_SIZE})
        raise ValueError(f"sources may hold only symbol ids {_FIRST_SYMBOL}..{VOCAB_SIZE - 1} but holds {bad}")
    lengths = torch.from_numpy(lengths)
    decoder_input, target = make_decoder_io(torch.from_numpy(y), lengths)
    return Batch(torch.from_numpy(src), lengths, decoder_input, target)


class RandomBatchSampler:
    """Fresh random batches for training: uniform lengths in ``[min_len, max_len]``, uniform symbols.

    Sequences of the held-out splits (``val``, ``test``, ``test_long`` by default) are never produced,
    so a test sequence is never trained on, even when short ones repeat.

    Parameters
    ----------
    batch_size : int
    min_len, max_len : int
    seed : int   the ``np.random.default_rng`` seed: the same seed gives the same batches
    exclude : iterable of token-id tuples, optional (default: every held-out split)
    pool : list of token-id tuples, optional
        If given, draw sequences from this fixed pool (e.g. ``load_split("train")``) instead.

    Introduced in notebooks/07_seq2seq_rnn_attention.ipynb.
    """

    def __init__(self, batch_size: int, min_len: int = 4, max_len: int = 16, seed: int = 0, exclude=None, pool=None):
        batch_size = validate.positive_int("batch_size", batch_size)
        min_len, max_len = validate.positive_int("min_len", min_len), validate.positive_int("max_len", max_len)
        seed = validate.nonnegative_int("seed", seed)
        if not 1 <= min_len <= max_len:
            raise ValueError(f"need 1 <= min_len <= max_len but min_len={min_len}, max_len={max_len}")
        self.batch_size, self.min_len, self.max_len = batch_size, min_len, max_len
        self.rng = np.random.default_rng(seed)
        if exclude is None and pool is None:
            exclude = [s for name in ("val", "test", "test_long") for s in load_split(name)]
        self.exclude = set(map(tuple, exclude or ()))
        self.pool = None
        if pool is not None:
            self.pool = [tuple(s) for s in pool if min_len <= len(s) <= max_len]
            if not self.pool:
                raise ValueError(f"pool has no sequence with length in [{min_len}, {max_len}]")

    def sample(self) -> list[tuple[int, ...]]:
        """One batch of sources ``x`` as token-id tuples."""
        if self.pool is not None:
            return [self.pool[i] for i in self.rng.integers(0, len(self.pool), size=self.batch_size)]
        lengths = self.rng.integers(self.min_len, self.max_len + 1, size=self.batch_size)
        symbols = self.rng.integers(_FIRST_SYMBOL, VOCAB_SIZE, size=(self.batch_size, self.max_len))
        out = []
        for row, n in zip(symbols.tolist(), lengths.tolist(), strict=True):
            seq = tuple(row[:n])
            while seq in self.exclude:  # a held-out sequence: draw this one again
                seq = tuple(self.rng.integers(_FIRST_SYMBOL, VOCAB_SIZE, size=n).tolist())
            out.append(seq)
        return out

    def __iter__(self):
        return self

    def __next__(self) -> Batch:
        return collate(self.sample())


# ------------------------------------------------------------------------------------------ CLI


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate (or verify) the reversal splits in data/.")
    parser.add_argument("--write", type=Path, metavar="DIR", help="write the splits into DIR (e.g. data)")
    parser.add_argument("--check", type=Path, metavar="DIR", help="verify the splits in DIR against SHA256")
    args = parser.parse_args(argv)
    if args.write is None and args.check is None:
        parser.error("give --write DIR or --check DIR")
    status = 0
    if args.write is not None:
        for name, digest in write_splits(args.write).items():
            same = "ok" if digest == SHA256[name] else f"DIFFERS from expected {SHA256[name]}"
            print(f"{digest}  {name}  ({same})")
            status |= digest != SHA256[name]
    if args.check is not None:
        failed = 0
        for split in SPLITS:  # one line per file, whatever is wrong with it: never a traceback
            try:
                load_split(split, args.check)
            except (OSError, ValueError) as exc:  # missing, not a file, unreadable, changed, not text
                failed += 1
                reason = str(exc)
                if "--write" not in reason:
                    reason += "; rebuild it with `python -m course_utils.data --write data`"
                print(f"BAD {_file_name(split)}: {reason}")
            else:
                print(f"ok  {_file_name(split)}")
        if failed:
            print(f"error: {failed} of {len(SPLITS)} files in {args.check} failed the check", file=sys.stderr)
            status = 1
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
