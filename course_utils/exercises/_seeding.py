"""Deterministic case construction that leaves the caller's random state untouched.

Introduced in ``notebooks/00_start_here.ipynb``.
"""

from __future__ import annotations

import contextlib

__all__ = ["torch_seeded"]


@contextlib.contextmanager
def torch_seeded(seed: int):
    """Seed torch's global generator inside the block and restore its state afterwards.

    Module constructors (``nn.Linear``) draw from the global generator; cases built inside this
    block are the same whatever the notebook drew before.
    """
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
