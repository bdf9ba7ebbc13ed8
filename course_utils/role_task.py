"""Lesson 05's toy task: sequences of coloured shapes, a one-layer model whose heads specialize, and its explorer.

Introduced in ``notebooks/05_inside_the_heads.ipynb``. The measurements of heads (entropy, similarity, role
scores, switching heads off) stay in :mod:`course_utils.heads`; this module holds the task they are tried on.

The toy task (:func:`make_role_task`) asks three questions at every position of a sequence of coloured shapes:
*what colour is the previous token*, *what colour is the first token*, and *what colour is the other token with
my shape*. Each answer needs a different attention pattern, so a one-layer model (:class:`RoleModel`, built on
:class:`course_utils.attention.MultiHeadAttention`) trained for a few seconds on CPU (:func:`train_role_model`)
ends up with a previous-token head, a first-token head and a matching head.

The explorer adapter (:func:`parse_role_sequence`, :func:`role_model_snapshot`, :func:`explore_role_model`) runs
the model on a typed sequence (``"Ar Bg Ab Bk"``: shape letter, colour letter) for the generic
:class:`course_utils.explorer.AttentionExplorer`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from course_utils import _validation as validate
from course_utils import explorer
from course_utils.attention import MultiHeadAttention

__all__ = [
    "TARGETS",
    "IGNORE_INDEX",
    "SHAPE_NAMES",
    "COLOUR_NAMES",
    "RoleTask",
    "make_role_task",
    "token_labels",
    "RoleModelConfig",
    "RoleModel",
    "train_role_model",
    "role_accuracy",
    "parse_role_sequence",
    "role_model_snapshot",
    "explore_role_model",
]

TARGETS = ("previous", "first", "matching")  # the three questions, one read-out each
IGNORE_INDEX = -100  # a target that does not exist (the previous token of position 0)
SHAPE_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # shape s is written SHAPE_NAMES[s]
COLOUR_NAMES = "rgbykmcw"  # colour c is written COLOUR_NAMES[c]


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
        f"{SHAPE_NAMES[int(s) % 26]}{COLOUR_NAMES[int(c) % len(COLOUR_NAMES)]}"
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


# --------------------------------------------------------------------------------------------
# The explorer on the role model
# --------------------------------------------------------------------------------------------


def parse_role_sequence(text: str, config: RoleModelConfig) -> list[int]:
    """``"Ar Bg Ab"`` -> token ids of the role task: shape letter then colour letter, separated by spaces.

    Introduced in notebooks/05_inside_the_heads.ipynb (the explorer).
    """
    if not isinstance(config, RoleModelConfig):
        raise TypeError(f"config must be a RoleModelConfig (model.config) but is {validate.describe(config)}")
    if not isinstance(text, str):
        raise TypeError(f"sequence must be a string like 'Ar Bg Ab' but is {type(text).__name__}")
    words = text.split()
    shapes, colours = SHAPE_NAMES[: config.num_shapes], COLOUR_NAMES[: config.num_colours]
    if not 1 <= len(words) <= config.seq_len:
        raise ValueError(f"sequence must hold 1 to {config.seq_len} tokens but holds {len(words)}")
    ids = []
    for word in words:
        if len(word) != 2 or word[0] not in shapes or word[1] not in colours:
            raise ValueError(
                f"sequence token {word!r} is not a shape in {shapes!r} followed by a colour in {colours!r} (e.g. 'Ar')"
            )
        ids.append(shapes.index(word[0]) * config.num_colours + colours.index(word[1]))
    return ids


def role_model_snapshot(model: RoleModel, text: str) -> explorer.Snapshot:
    """Run a :class:`RoleModel` on ``text`` (e.g. ``"Ar Bg Ab Bk"``) for the explorer.

    One view, ``"self-attention"``: weights ``(1, heads, seq_len, seq_len)`` as the model returns them, no mask;
    each query's output is its three predicted colours (previous, first, matching).

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    if not isinstance(model, RoleModel):
        raise TypeError(f"model must be a RoleModel but is {validate.describe(model)}")
    ids = parse_role_sequence(text, model.config)
    labels = text.split()
    with torch.no_grad():
        logits, weights = model(torch.tensor([ids]))  # weights: (1, heads, seq_len, seq_len)
    predicted = {name: logits[name][0].argmax(-1).tolist() for name in TARGETS}  # name -> seq_len colour ids
    outputs = [" ".join(f"{name} {COLOUR_NAMES[predicted[name][i]]}" for name in TARGETS) for i in range(len(ids))]
    view = explorer.AttentionView(
        "self-attention", labels, labels, weights.double().numpy(), np.ones((len(ids),) * 2), outputs
    )
    per_position = " ".join("".join(COLOUR_NAMES[predicted[name][i]] for name in TARGETS) for i in range(len(ids)))
    output_text = f"colours (previous, first, matching) {per_position}"
    return explorer.Snapshot("RoleModel", " ".join(labels), output_text, {view.name: view})


def explore_role_model(
    model: RoleModel, task: RoleTask | None = None, num_examples: int = 6
) -> explorer.AttentionExplorer:
    """The explorer on a trained :class:`RoleModel`, its examples the first sequences of a role task.

    Introduced in notebooks/05_inside_the_heads.ipynb.
    """
    if not isinstance(model, RoleModel):
        raise TypeError(f"model must be a RoleModel but is {validate.describe(model)}")
    num_examples = validate.positive_int("num_examples", num_examples)
    if task is None:
        cfg = model.config
        task = make_role_task(num_examples, cfg.seq_len, cfg.num_shapes, cfg.num_colours, seed=123)
    n = min(num_examples, task.tokens.shape[0])
    examples = [" ".join(token_labels(task, i)) for i in range(n)]
    return explorer.AttentionExplorer(
        lambda text: role_model_snapshot(model, text), examples, "Attention explorer: the role model's heads"
    )
