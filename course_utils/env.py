"""Reproducibility and environment helpers.

Introduced in ``notebooks/00_start_here.ipynb``.
"""

from __future__ import annotations

import os
import platform
import random

import numpy as np

__all__ = ["set_seed", "get_device", "print_versions", "versions"]


def set_seed(seed: int = 0) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and CUDA).

    Returns nothing (so a Setup cell shows no output); code that prefers a local generator
    makes its own with ``np.random.default_rng(seed)``.

    Introduced in notebooks/00_start_here.ipynb.
    """
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int but is {seed!r}")
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - lessons that use the legacy global API are reproducible too
    import torch

    torch.manual_seed(seed)  # also seeds every CUDA device


def get_device(prefer: str | None = None):
    """The torch device to use: ``COURSE_DEVICE`` or ``prefer`` if given, else CUDA when present, else CPU.

    A GPU is used when present and never required. Set ``COURSE_DEVICE=cpu`` to force the CPU
    (the stored notebook outputs come from the CPU).

    Introduced in notebooks/00_start_here.ipynb.
    """
    import torch

    choice = prefer or os.environ.get("COURSE_DEVICE")
    if choice:
        device = torch.device(choice)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {choice!r} was asked for but CUDA is not available here")
        return device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def versions() -> dict:
    """Versions of Python and the course's packages, as a dict of strings."""
    import matplotlib
    import torch

    import course_utils

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "matplotlib": matplotlib.__version__,
        "course_utils": course_utils.__version__,
    }


def print_versions() -> None:
    """Print the versions, the device and the thread count (a volatile report: tag the cell for nbval).

    Introduced in notebooks/00_start_here.ipynb.
    """
    import torch

    for name, version in versions().items():
        print(f"{name:>13}: {version}")
    print(f"{'device':>13}: {get_device()}")
    print(f"{'torch threads':>13}: {torch.get_num_threads()}")
