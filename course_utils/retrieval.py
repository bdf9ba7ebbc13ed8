"""Lesson 04's training task: one attention layer learns to retrieve a value by the similarity of its key.

Each example holds ``N_KEYS`` random keys and as many random values (``D_MODEL`` features each) and one
query that is a noisy copy of one of the keys; the target is that key's value. This is lesson 01's soft
dictionary look-up with nothing set by hand: to solve it, a layer has to make each query score highest
against its own key (through ``query_proj`` and ``key_proj``) and pass the value through unchanged
(through ``value_proj`` and ``out_proj``).

The lesson, its exercise ``04.train_step`` and its experiment (``course_utils.lessons.lesson_04.experiments``) all
use this module; it imports nothing from ``course_utils.lessons``.

Introduced in notebooks/04_multi_head_pytorch.ipynb.

Examples
--------
>>> import torch
>>> query, keys, values, target, index = make_batch(torch.Generator().manual_seed(1), 2)
>>> tuple(query.shape), tuple(keys.shape), tuple(target.shape), index.tolist()
((2, 1, 16), (2, 8, 16), (2, 1, 16), [3, 0])
"""

from __future__ import annotations

import torch

from course_utils import _validation as validate

__all__ = [
    "N_KEYS",
    "D_MODEL",
    "NOISE",
    "STEPS",
    "BATCH",
    "LR",
    "make_batch",
    "weight_on_match",
    "diagonal_dominance",
    "train_step",
    "train",
]

N_KEYS, D_MODEL, NOISE, STEPS, BATCH, LR = 8, 16, 0.3, 300, 64, 3e-2
"""Keys per example, features, the query's noise, training steps, examples per step, Adam's learning rate."""


def make_batch(generator: torch.Generator, batch: int, n_keys: int = N_KEYS, noise: float = NOISE):
    """``batch`` examples of the task, drawn from ``generator``.

    Returns ``(query, keys, values, target, index)``: query ``(batch, 1, D_MODEL)`` (a noisy copy of key
    ``index``), keys and values ``(batch, n_keys, D_MODEL)``, target ``(batch, 1, D_MODEL)`` (the value
    of key ``index``) and index ``(batch,)`` (int64).
    """
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator but is {type(generator).__name__}")
    batch = validate.positive_int("batch", batch)
    n_keys = validate.positive_int("n_keys", n_keys)
    noise = validate.positive_float("noise", noise, allow_zero=True)
    keys = torch.randn(batch, n_keys, D_MODEL, generator=generator)  # (batch, k_len, d_model)
    values = torch.randn(batch, n_keys, D_MODEL, generator=generator)  # (batch, k_len, d_model)
    index = torch.randint(n_keys, (batch,), generator=generator)  # (batch,): which key the query copies
    rows = torch.arange(batch)
    noisy = keys[rows, index] + noise * torch.randn(batch, D_MODEL, generator=generator)  # (batch, d_model)
    # query (batch, q_len=1, d_model); target (batch, 1, d_model)
    return noisy[:, None, :], keys, values, values[rows, index][:, None, :], index


def weight_on_match(weights: torch.Tensor, index: torch.Tensor) -> float:
    """Mean attention weight that each example's query puts on the key it copies.

    ``weights`` ``(batch, heads, 1, k_len)`` (a layer's attention weights on a batch of the task),
    ``index`` ``(batch,)``; the mean runs over the examples and the heads. 1 / k_len for uniform weights.
    """
    validate.torch_tensor("weights", weights, "the (batch, heads, 1, k_len) attention weights")
    validate.torch_tensor("index", index, "the (batch,) index that make_batch returns")
    if weights.dim() != 4 or weights.shape[2] != 1:
        raise ValueError(f"weights must be (batch, heads, 1, k_len) but has shape {tuple(weights.shape)}")
    if tuple(index.shape) != (weights.shape[0],):
        raise ValueError(f"index must be (batch,) = ({weights.shape[0]},) but has shape {tuple(index.shape)}")
    on_match = weights[torch.arange(len(index)), :, 0, index]  # (batch, heads)
    return float(on_match.mean())


def diagonal_dominance(m: torch.Tensor) -> float:
    """Mean diagonal entry of the square matrix ``m`` over its mean absolute off-diagonal entry.

    About 0 for a random matrix (the diagonal's mean is as likely negative as positive), large for a
    positive multiple of the identity plus small noise.
    """
    validate.torch_tensor("m", m, "a square (d, d) matrix")
    if m.dim() != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise ValueError(f"m must be a square (d, d) matrix with d >= 2 but has shape {tuple(m.shape)}")
    m = m.detach()
    off_diagonal = m - torch.diag(m.diagonal())
    mean_off = off_diagonal.abs().sum() / (m.numel() - len(m))
    return float(m.diagonal().mean() / mean_off)


def train_step(model, optimizer, batch) -> float:
    """One optimizer step on ``batch = (query, keys, values, target, index)``; returns the loss as a float.

    The loss is the mean squared error between ``model(query, keys, values)``'s output and ``target``.
    Gradients left in ``.grad`` by earlier computations are cleared first.
    """
    if not isinstance(batch, (tuple, list)) or len(batch) != 5:
        raise ValueError(
            "batch must be (query, keys, values, target, index) as make_batch returns it, but is "
            f"{validate.describe(batch)}"
        )
    query, keys, values, target, _ = batch
    output, _ = model(query, keys, values)  # (batch, 1, d_model)
    loss = ((output - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def train(model, optimizer, step=train_step, steps: int = STEPS, batch_size: int = BATCH, seed: int = 0) -> list:
    """Call ``step(model, optimizer, batch)`` on ``steps`` fresh batches of ``batch_size`` (drawn from ``seed``).

    Returns the losses ``step`` returned, one float per step.
    """
    validate.is_callable("step", step)
    steps = validate.positive_int("steps", steps)
    batch_size = validate.positive_int("batch_size", batch_size)
    generator = torch.Generator().manual_seed(seed)
    return [float(step(model, optimizer, make_batch(generator, batch_size))) for _ in range(steps)]
