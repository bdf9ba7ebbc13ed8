"""Inside the heads: measure what each attention head does, and a toy task where heads specialize.

Introduced in ``notebooks/05_inside_the_heads.ipynb``.

Measurements take attention weights shaped ``(heads, q_len, k_len)`` or
``(batch, heads, q_len, k_len)`` (NumPy arrays or torch tensors) and return NumPy arrays:

- :func:`attention_entropy` / :func:`head_entropy`: how spread out each row is, in nats, between
  0 (all weight on one key) and :func:`max_entropy` ``= ln(k_len)`` (uniform).
- :func:`head_similarity`: cosine similarity between the heads' weight patterns.
- :func:`head_role_scores`: how much weight each head puts on the previous token, the first
  token, the query itself, and keys that match the query's symbol.

The toy task (:func:`make_role_task`) asks three questions at every position of a sequence of
coloured shapes: *what colour is the previous token*, *what colour is the first token*, and
*what colour is the other token with my shape*. Each answer needs a different attention
pattern, so a one-layer model (:class:`RoleModel`, built on
:class:`course_utils.attention.MultiHeadAttention`) trained for a few seconds on CPU
(:func:`train_role_model`) ends up with a previous-token head, a first-token head and a
matching head. :func:`ablate_heads` switches heads off to test what each one is for.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from course_utils import _validation as validate
from course_utils.attention import MultiHeadAttention

__all__ = [
    "attention_entropy",
    "head_entropy",
    "max_entropy",
    "head_similarity",
    "head_role_scores",
    "ROLES",
    "TARGETS",
    "RoleTask",
    "make_role_task",
    "RoleModelConfig",
    "RoleModel",
    "train_role_model",
    "role_accuracy",
    "ablate_heads",
    "token_labels",
]

ROLES = ("previous", "first", "self", "matching")
TARGETS = ("previous", "first", "matching")
IGNORE_INDEX = -100
_SHAPE_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_COLOUR_NAMES = "rgbykmcw"


def _to_numpy(x, name: str = "weights") -> np.ndarray:
    """Weights from a tensor, array or list as float64, refusing non-numbers and NaN."""
    if isinstance(x, torch.Tensor):
        if x.dtype.is_complex or x.dtype == torch.bool:
            raise TypeError(f"{name} must hold real numbers but has dtype {x.dtype}")
        x = x.detach().cpu().double().numpy()
    (w,) = validate.numpy_floats(**{name: x})
    w = w.astype(np.float64)
    if np.isnan(w).any():
        raise ValueError(
            f"{name} holds NaN: attention weights are finite and non-negative (a NaN row means a bug upstream)"
        )
    return w


def _as_weights(weights, name: str = "weights") -> np.ndarray:
    """Weights as a float array (batch, heads, q_len, k_len)."""
    w = _to_numpy(weights)
    if w.ndim == 3:
        w = w[None]  # (heads, q_len, k_len) -> (1, heads, q_len, k_len)
    if w.ndim != 4:
        raise ValueError(
            f"{name} must be (heads, q_len, k_len) or (batch, heads, q_len, k_len) but has shape {tuple(w.shape)}"
        )
    return w


def attention_entropy(weights) -> np.ndarray:
    """Entropy of each row of attention weights, ``-sum_j w_j ln w_j`` in nats (``0 ln 0 = 0``).

    Parameters
    ----------
    weights : array or Tensor (..., q_len, k_len), rows summing to 1

    Returns
    -------
    array (..., q_len): 0 for a one-hot row, ``ln(k_len)`` for a uniform row.

    Introduced in notebooks/05_inside_the_heads.ipynb.

    Examples
    --------
    >>> float(np.round(attention_entropy(np.full((1, 4), 0.25))[0], 4)) == round(float(np.log(4)), 4)
    True
    """
    w = _to_numpy(weights)
    if w.ndim < 1:
        raise ValueError(f"weights must have a k_len axis but has shape {tuple(w.shape)}")
    if np.any(w < 0):
        raise ValueError("weights must be non-negative (post-softmax attention weights, not scores)")
    logs = np.log(w, out=np.zeros_like(w), where=w > 0)
    return -(w * logs).sum(axis=-1)


def max_entropy(k_len: int) -> float:
    """``ln(k_len)``: the entropy of uniform attention over ``k_len`` keys, the largest possible.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    return float(np.log(validate.positive_int("k_len", k_len)))


def head_entropy(weights) -> np.ndarray:
    """Mean row entropy of each head, averaged over batch and queries.

    Parameters
    ----------
    weights : array or Tensor (heads, q_len, k_len) or (batch, heads, q_len, k_len)

    Returns
    -------
    array (heads,), each between 0 and ``max_entropy(k_len)``.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    w = _as_weights(weights)
    return attention_entropy(w).mean(axis=(0, 2))  # (batch, heads, q_len) -> (heads,)


def head_similarity(weights) -> np.ndarray:
    """Cosine similarity between heads' attention patterns, flattened over batch, queries and keys.

    1 means the same pattern (up to scale); since all weights are >= 0 it is never negative, and
    nearly uniform heads score close to 1 (they *are* alike). Heads that look at different keys
    score close to 0.

    Parameters
    ----------
    weights : array or Tensor (heads, q_len, k_len) or (batch, heads, q_len, k_len)

    Returns
    -------
    array (heads, heads), symmetric, ones on the diagonal.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    w = _as_weights(weights)
    heads = w.shape[1]
    # (batch, heads, q_len, k_len) -> (heads, batch, q_len, k_len) -> (heads, batch * q_len * k_len)
    flat = np.moveaxis(w, 1, 0).reshape(heads, -1)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)  # (heads, 1)
    unit = np.divide(flat, norms, out=np.zeros_like(flat), where=norms > 0)
    # (heads, n) @ (n, heads) -> (heads, heads)
    return unit @ unit.T


def head_role_scores(weights, match_ids=None) -> dict:
    """How much weight each head gives to four patterns, averaged over batch and queries.

    - ``previous``: weight on key ``i - 1`` (queries ``i >= 1``).
    - ``first``: weight on key 0 (queries ``i >= 1``, so it is not confused with ``self``).
    - ``self``: weight on key ``i``.
    - ``matching`` (only when ``match_ids`` is given): total weight on the *other* keys ``j != i``
      with ``match_ids[j] == match_ids[i]``, over queries that have at least one such key.

    Each score lies in [0, 1]; uniform attention over ``k_len`` keys scores about ``1 / k_len``.
    Self-attention only (``q_len == k_len``, position ``i`` of the query is position ``i`` of the keys).

    Parameters
    ----------
    weights : array or Tensor (heads, seq_len, seq_len) or (batch, heads, seq_len, seq_len)
    match_ids : int array or Tensor (seq_len,) or (batch, seq_len), optional
        What "matching" compares, e.g. the token ids (or, in the toy task, the shapes).

    Returns
    -------
    dict role -> array (heads,)

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    w = _as_weights(weights)
    batch, heads, q_len, k_len = w.shape
    if q_len != k_len or q_len < 2:
        raise ValueError(f"role scores need self-attention weights with q_len == k_len >= 2 but got {tuple(w.shape)}")
    i = np.arange(q_len)
    scores = {
        "previous": w[:, :, i[1:], i[1:] - 1].mean(axis=(0, 2)),  # (batch, heads, seq_len - 1) -> (heads,)
        "first": w[:, :, 1:, 0].mean(axis=(0, 2)),
        "self": w[:, :, i, i].mean(axis=(0, 2)),
    }
    if match_ids is not None:
        ids = np.asarray(match_ids.detach().cpu() if isinstance(match_ids, torch.Tensor) else match_ids)
        if not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"match_ids must hold integer ids (e.g. the token ids) but has dtype {ids.dtype}")
        if ids.ndim == 1:
            ids = ids[None]
        if ids.ndim != 2 or ids.shape[1] != q_len or ids.shape[0] not in (1, batch):
            raise ValueError(
                f"match_ids must be (seq_len,) or (batch, seq_len) = ({batch}, {q_len}) but has shape {ids.shape}"
            )
        same = (ids[:, :, None] == ids[:, None, :]) & ~np.eye(q_len, dtype=bool)  # (batch, q_len, k_len)
        has_match = np.broadcast_to(same.any(axis=-1), (batch, q_len))  # (batch, q_len)
        on_match = (w * same[:, None]).sum(axis=-1)  # (batch, heads, q_len)
        if not has_match.any():
            raise ValueError("match_ids has no query with a matching key, so 'matching' is undefined")
        scores["matching"] = on_match.transpose(1, 0, 2)[:, has_match].mean(axis=1)  # (heads,)
    return scores


# --------------------------------------------------------------------------------------------
# A toy task whose answers need three different attention patterns
# --------------------------------------------------------------------------------------------


@dataclass
class RoleTask:
    """A batch of the toy task (see :func:`make_role_task`). All tensors are ``(batch, seq_len)``."""

    tokens: torch.Tensor  # token id = shape * num_colours + colour
    shapes: torch.Tensor  # every shape occurs exactly twice in a sequence
    colours: torch.Tensor
    targets: dict  # "previous", "first", "matching" -> colour to predict (IGNORE_INDEX where undefined)

    def __post_init__(self):
        for name in ("tokens", "shapes", "colours"):
            validate.integer_tensor(f"RoleTask.{name}", getattr(self, name))
        if not self.tokens.shape == self.shapes.shape == self.colours.shape or self.tokens.dim() != 2:
            raise ValueError(
                "RoleTask.tokens, shapes and colours must share one (batch, seq_len) shape but have "
                f"{tuple(self.tokens.shape)}, {tuple(self.shapes.shape)}, {tuple(self.colours.shape)}"
            )
        if not isinstance(self.targets, dict) or set(self.targets) != set(TARGETS):
            raise ValueError(f"RoleTask.targets must map each of {TARGETS} to a tensor but is {self.targets!r:.80}")


def make_role_task(
    num_sequences: int, seq_len: int = 12, num_shapes: int = 8, num_colours: int = 4, seed: int = 0
) -> RoleTask:
    """Sequences of coloured shapes; at each position predict three colours.

    A sequence holds ``seq_len // 2`` distinct shapes, each twice, in random order, each token
    with a random colour; token id ``= shape * num_colours + colour``. Targets at position ``i``:

    - ``previous``: the colour of token ``i - 1`` (undefined at ``i = 0``: ``IGNORE_INDEX``).
    - ``first``: the colour of token 0.
    - ``matching``: the colour of the *other* token with the same shape as token ``i``.

    Colours are independent, so no answer can be guessed from the others: the model has to look.

    Introduced in notebooks/05_inside_the_heads.ipynb.

    Examples
    --------
    >>> task = make_role_task(2, seq_len=6, seed=0)
    >>> tuple(task.tokens.shape), sorted(task.targets)
    ((2, 6), ['first', 'matching', 'previous'])
    """
    num_sequences, seq_len = (
        validate.positive_int("num_sequences", num_sequences),
        validate.positive_int("seq_len", seq_len),
    )
    num_shapes, num_colours = (
        validate.positive_int("num_shapes", num_shapes),
        validate.positive_int("num_colours", num_colours),
    )
    seed = validate.nonnegative_int("seed", seed)
    if seq_len % 2 or seq_len < 2:
        raise ValueError(f"seq_len must be even (every shape occurs twice) but is {seq_len}")
    if num_shapes < seq_len // 2:
        raise ValueError(f"num_shapes {num_shapes} is too small for seq_len {seq_len}: need at least {seq_len // 2}")
    gen = torch.Generator().manual_seed(seed)
    half = seq_len // 2
    # pick half distinct shapes per sequence, write each twice, shuffle the positions
    chosen = torch.argsort(torch.rand(num_sequences, num_shapes, generator=gen), dim=1)[:, :half]  # (batch, half)
    doubled = torch.cat([chosen, chosen], dim=1)  # (batch, half) + (batch, half) -> (batch, seq_len)
    order = torch.argsort(torch.rand(num_sequences, seq_len, generator=gen), dim=1)  # (batch, seq_len)
    shapes = torch.gather(doubled, 1, order)  # (batch, seq_len)
    colours = torch.randint(0, num_colours, (num_sequences, seq_len), generator=gen)  # (batch, seq_len)
    previous = torch.full_like(colours, IGNORE_INDEX)
    previous[:, 1:] = colours[:, :-1]
    first = colours[:, :1].expand(-1, seq_len).clone()  # (batch, 1) -> (batch, seq_len)
    twin = (shapes[:, :, None] == shapes[:, None, :]) & ~torch.eye(seq_len, dtype=torch.bool)  # (batch, q, k)
    matching = torch.gather(colours, 1, twin.int().argmax(dim=-1))  # colour at the twin's position
    return RoleTask(
        tokens=shapes * num_colours + colours,
        shapes=shapes,
        colours=colours,
        targets={"previous": previous, "first": first, "matching": matching},
    )


def token_labels(task: RoleTask, index: int = 0) -> list[str]:
    """Readable labels for sequence ``index``: shape letter + colour letter, e.g. ``"Cg"``.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    if not isinstance(task, RoleTask):
        raise TypeError(f"task must be a RoleTask (from make_role_task) but is {validate.describe(task)}")
    index = validate.nonnegative_int("index", index)
    if index >= task.shapes.shape[0]:
        raise ValueError(f"index {index} is out of range: the task holds {task.shapes.shape[0]} sequences")
    return [
        f"{_SHAPE_NAMES[int(s) % 26]}{_COLOUR_NAMES[int(c) % len(_COLOUR_NAMES)]}"
        for s, c in zip(task.shapes[index], task.colours[index], strict=True)
    ]


@dataclass
class RoleModelConfig:
    """Sizes of :class:`RoleModel` (defaults train in about 2 s on one CPU thread)."""

    seq_len: int = 12  # positions (learned position embeddings)
    num_shapes: int = 8
    num_colours: int = 4
    d_model: int = 48  # embedding size
    num_heads: int = 4  # one more head than there are roles: one is spare

    def __post_init__(self):
        for name in ("seq_len", "num_shapes", "num_colours", "d_model", "num_heads"):
            setattr(self, name, validate.positive_int(f"RoleModelConfig.{name}", getattr(self, name)))


class RoleModel(nn.Module):
    """One attention layer and three linear read-outs: ``embed -> x + MultiHeadAttention(x) -> colours``.

    ``forward(tokens)`` takes ``(batch, seq_len)`` token ids and returns ``(logits, weights)``:
    ``logits`` maps each target name to ``(batch, seq_len, num_colours)`` and ``weights`` is
    ``(batch, heads, seq_len, seq_len)``. No mask: every position sees every position.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """

    def __init__(self, config: RoleModelConfig | None = None):
        super().__init__()
        if config is not None and not isinstance(config, RoleModelConfig):
            raise TypeError(f"config must be a RoleModelConfig (or None) but is {validate.describe(config)}")
        self.config = config = config or RoleModelConfig()
        self.token_embedding = nn.Embedding(config.num_shapes * config.num_colours, config.d_model)
        self.position_embedding = nn.Embedding(config.seq_len, config.d_model)
        self.attention = MultiHeadAttention(config.d_model, config.num_heads)
        self.readouts = nn.ModuleDict({name: nn.Linear(config.d_model, config.num_colours) for name in TARGETS})

    def forward(self, tokens: torch.Tensor):
        validate.integer_tensor("tokens", tokens)
        if tokens.dim() != 2 or tokens.shape[1] > self.config.seq_len:
            raise ValueError(
                f"tokens must be (batch, seq_len <= {self.config.seq_len}) but has shape {tuple(tokens.shape)}"
            )
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)  # (batch, seq_len, d_model)
        attended, weights = self.attention(x, x, x)  # (batch, seq_len, d_model), (batch, heads, seq_len, seq_len)
        x = x + attended  # residual: the token's own embedding stays available to the read-outs
        return {name: readout(x) for name, readout in self.readouts.items()}, weights


def _task_loss(logits: dict, task: RoleTask) -> torch.Tensor:
    losses = [
        F.cross_entropy(logits[name].flatten(0, 1), task.targets[name].flatten(), ignore_index=IGNORE_INDEX)
        for name in TARGETS
    ]
    return sum(losses)


def train_role_model(
    config: RoleModelConfig | None = None,
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 5e-3,
    seed: int = 0,
) -> tuple[RoleModel, list[float]]:
    """Train a :class:`RoleModel` on fresh batches of :func:`make_role_task` with Adam.

    Deterministic for a given ``seed`` (and thread count). Returns the model in ``eval()`` mode
    and the loss of every step (the sum of the three cross-entropies).

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    if config is not None and not isinstance(config, RoleModelConfig):
        raise TypeError(f"config must be a RoleModelConfig (or None) but is {validate.describe(config)}")
    config = config or RoleModelConfig()
    steps, batch_size = validate.positive_int("steps", steps), validate.positive_int("batch_size", batch_size)
    lr, seed = validate.positive_float("lr", lr), validate.nonnegative_int("seed", seed)
    torch.manual_seed(seed)
    model = RoleModel(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        task = make_role_task(
            batch_size, config.seq_len, config.num_shapes, config.num_colours, seed=seed * 1_000_003 + step
        )
        logits, _ = model(task.tokens)
        loss = _task_loss(logits, task)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model.eval(), losses


@torch.no_grad()
def role_accuracy(model: RoleModel, task: RoleTask) -> dict:
    """Accuracy of each read-out on ``task`` (positions with ``IGNORE_INDEX`` are skipped).

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    if not isinstance(model, RoleModel):
        raise TypeError(f"model must be a RoleModel but is {validate.describe(model)}")
    if not isinstance(task, RoleTask):
        raise TypeError(f"task must be a RoleTask (from make_role_task) but is {validate.describe(task)}")
    logits, _ = model(task.tokens)
    result = {}
    for name in TARGETS:
        target = task.targets[name]
        keep = target != IGNORE_INDEX
        result[name] = float((logits[name].argmax(-1) == target)[keep].float().mean())
    return result


@contextlib.contextmanager
def ablate_heads(attention: MultiHeadAttention, heads):
    """Switch heads off inside the ``with`` block: their slice of the concatenation is set to 0.

    The output projection sees ``concat (batch, q_len, d_model)`` whose features
    ``h * d_head : (h + 1) * d_head`` come from head ``h``; a forward pre-hook on ``out_proj``
    zeroes those features. The hook is removed on exit.

    Introduced in notebooks/05_inside_the_heads.ipynb.

    Examples
    --------
    >>> mha = MultiHeadAttention(8, 2)
    >>> with ablate_heads(mha, [0]):
    ...     out, _ = mha(torch.ones(1, 3, 8), torch.ones(1, 3, 8), torch.ones(1, 3, 8))
    """
    if not isinstance(attention, MultiHeadAttention):
        raise TypeError(f"attention must be a MultiHeadAttention but is {type(attention).__name__}")
    if isinstance(heads, (int, np.integer)) and not isinstance(heads, (bool, np.bool_)):
        heads = [heads]
    elif not hasattr(heads, "__iter__") or isinstance(heads, str):
        raise TypeError(f"heads must be a head index or a list of them but is {validate.describe(heads)}")
    heads = [validate.nonnegative_int("head", h) if not isinstance(h, (bool, np.bool_)) else h for h in heads]
    for h in heads:
        if isinstance(h, (bool, np.bool_)) or not 0 <= h < attention.num_heads:
            raise ValueError(f"head {h!r} is not in range(num_heads={attention.num_heads})")
    keep = torch.ones(attention.d_model)
    for h in heads:
        keep[h * attention.d_head : (h + 1) * attention.d_head] = 0.0

    def zero_heads(module, inputs):
        (concat,) = inputs
        return (concat * keep.to(concat.device, concat.dtype),)

    handle = attention.out_proj.register_forward_pre_hook(zero_heads)
    try:
        yield attention
    finally:
        handle.remove()
