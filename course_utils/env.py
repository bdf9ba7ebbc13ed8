"""Reproducibility and environment helpers.

Introduced in ``notebooks/00_start_here.ipynb``.
"""

from __future__ import annotations

import os
import platform
import random
import sys
import warnings

import numpy as np

from course_utils import _validation as validate

__all__ = [
    "set_seed",
    "get_device",
    "available_devices",
    "print_versions",
    "versions",
    "check_environment",
    "torch_version_warning",
    "PINNED_TORCH",
]

PINNED_TORCH = "2.13.0"
"""The torch version of ``requirements.txt`` (``tests/test_env.py`` asserts they agree)."""

MIN_PYTHON = (3, 11)


def set_seed(seed: int = 0) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and CUDA).

    Returns nothing (so a Setup cell shows no output); code that prefers a local generator
    makes its own with ``np.random.default_rng(seed)``.

    Introduced in notebooks/00_start_here.ipynb.
    """
    seed = validate.nonnegative_int("seed", seed)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - lessons that use the legacy global API are reproducible too
    import torch

    torch.manual_seed(seed)  # also seeds every CUDA device


def get_device(prefer: str | None = None):
    """The torch device to use: ``COURSE_DEVICE`` or ``prefer`` if given, else CUDA when present, else CPU.

    A GPU is used when present and never required. Set ``COURSE_DEVICE=cpu`` to force the CPU
    (the stored notebook outputs come from the CPU).

    A device that does not exist here (a typo such as ``"cdua"``, ``"mps"`` without Apple's GPU,
    ``"cuda:3"`` on a one-GPU machine) is refused with a ``ValueError`` that lists what is available.

    Introduced in notebooks/00_start_here.ipynb.
    """
    import torch

    if prefer is not None and not isinstance(prefer, (str, torch.device)):
        raise TypeError(
            f"prefer must be a device name such as 'cpu' or a torch.device but is {validate.describe(prefer)}"
        )
    name, choice = ("prefer", prefer) if prefer else ("COURSE_DEVICE", os.environ.get("COURSE_DEVICE"))
    if choice:
        return _available_device(name, choice)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def available_devices() -> list[str]:
    """The device names torch can use on this machine, e.g. ``["cpu"]`` or ``["cpu", "cuda", "cuda:0"]``.

    Introduced in notebooks/00_start_here.ipynb.
    """
    import torch

    names = ["cpu"]
    if torch.cuda.is_available():
        names += ["cuda"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps")
    return names


def _available_device(name: str, choice):
    import torch

    available = available_devices()
    try:
        device = torch.device(choice)
    except (RuntimeError, ValueError, TypeError):
        raise ValueError(
            f"{name}={str(choice)!r} is not a device name torch knows; available here: {available}"
        ) from None
    if str(device) not in available and device.type not in available:
        raise ValueError(f"{name}={str(choice)!r} was asked for but is not available here; available here: {available}")
    if device.type == "cuda" and device.index is not None and str(device) not in available:
        raise ValueError(f"{name}={str(choice)!r} was asked for but is not available here; available here: {available}")
    return device


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


def torch_version_warning(version: str, pinned: str = PINNED_TORCH) -> str | None:
    """None when ``version`` is the pinned torch (a local build tag such as ``+cpu`` ignored), else the warning text.

    Introduced in notebooks/00_start_here.ipynb.

    Examples
    --------
    >>> torch_version_warning("2.13.0+cpu") is None
    True
    >>> "make lab" in torch_version_warning("2.12.1+cpu")
    True
    """
    if not isinstance(version, str):
        raise TypeError(f"version must be a version string such as '2.13.0+cpu' but is {validate.describe(version)}")
    if version.split("+")[0] == pinned:
        return None
    return (
        f"torch {version} is not the pinned {pinned}: the lessons run, but some stored outputs may differ from "
        "yours (printed digits, and what F.scaled_dot_product_attention returns for a row with every key masked, "
        "lesson 02). `make lab` installs the pinned version."
    )


def check_environment(course_version: str) -> str:
    """Check that this environment is the one the lessons were written for; print and return one line.

    Raises ``RuntimeError`` (naming ``make lab``) when Python is older than 3.11 or when ``course_utils`` is not
    ``course_version``, the version the notebook was written against. Another torch version only warns
    (``UserWarning``): the lessons run, a few stored outputs may differ. Prints and returns
    ``"environment OK; lessons will run on: cpu"`` (or ``"a GPU (cuda)"``).

    Introduced in notebooks/00_start_here.ipynb.
    """
    import torch

    import course_utils

    if not isinstance(course_version, str):
        raise TypeError(
            f"course_version must be a version string such as '0.1.0' but is {validate.describe(course_version)}"
        )
    if sys.version_info < MIN_PYTHON:
        found = ".".join(str(n) for n in sys.version_info[:3])
        raise RuntimeError(
            f"the course needs Python {'.'.join(map(str, MIN_PYTHON))} or newer and this kernel runs {found}: "
            "run `make lab` from the course folder (it makes .venv with the right Python)"
        )
    if course_utils.__version__ != course_version:
        raise RuntimeError(
            f"course_utils {course_utils.__version__} does not match the notebooks ({course_version}): run `make lab` "
            "again from the course folder (it reinstalls course_utils), then restart the kernel"
        )
    warning = torch_version_warning(torch.__version__)
    if warning is not None:
        warnings.warn(warning, UserWarning, stacklevel=2)
    device = get_device()
    line = f"environment OK; lessons will run on: {'cpu' if device.type == 'cpu' else f'a GPU ({device.type})'}"
    print(line)
    return line
