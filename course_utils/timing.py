"""Small, honest timing helpers shared by lesson 06 and ``benchmarks/attention.py``.

Introduced in ``notebooks/06_what_attention_costs.ipynb``.

Wall-clock times on a shared machine are noisy: take the *median* (what a user waits) or the *minimum*
(the steadiest estimate of the code's own cost) of several repeats after a
warm-up call (the first call pays for lazy initialization and cold caches), and report the
thread count next to the number.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from course_utils import _validation as validate

__all__ = ["median_time", "min_time", "loglog_slope", "thread_info"]


_CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _times(fn, args, kwargs, repeats, warmup, clock) -> list[float]:
    validate.is_callable("fn", fn)
    validate.one_of("clock", clock, _CLOCKS)
    now = _CLOCKS[clock]
    repeats = validate.positive_int("repeats", repeats)
    warmup = validate.nonnegative_int("warmup", warmup)
    for _ in range(warmup):
        fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        start = now()
        fn(*args, **kwargs)
        times.append(now() - start)
    return times


def median_time(fn, *args, repeats: int = 5, warmup: int = 1, clock: str = "wall", **kwargs) -> float:
    """Median seconds of ``fn(*args, **kwargs)`` over ``repeats`` calls, after ``warmup`` calls.

    Works for NumPy and PyTorch on CPU (PyTorch CPU ops are synchronous). Wrap torch calls in
    ``torch.inference_mode()`` yourself if autograd should not record them.

    ``clock="wall"`` (default) measures elapsed time (``time.perf_counter``); ``clock="cpu"``
    measures the CPU time of this process, all its threads together (``time.process_time``): other
    programs cannot inflate it, and with one thread on an idle machine it equals the wall time.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> median_time(sum, range(10), repeats=3) >= 0
    True
    """
    return statistics.median(_times(fn, args, kwargs, repeats, warmup, clock))


def min_time(fn, *args, repeats: int = 5, warmup: int = 1, clock: str = "wall", **kwargs) -> float:
    """Fastest seconds of ``fn(*args, **kwargs)`` over ``repeats`` calls, after ``warmup`` calls.

    Other processes can only make a call slower, never faster, so on a busy machine the minimum
    is the steadiest estimate of what the code itself costs (the median says what a user waits).
    ``clock`` is ``"wall"`` or ``"cpu"``, as in :func:`median_time`.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> min_time(sum, range(10), repeats=3) >= 0
    True
    """
    return min(_times(fn, args, kwargs, repeats, warmup, clock))


def loglog_slope(sizes, values) -> float:
    """Least-squares slope of ``log(values)`` against ``log(sizes)``: the exponent ``p`` in ``value ~ size**p``.

    A slope near 2 means doubling the size quadruples the value (quadratic); near 1, linear.

    Introduced in notebooks/06_what_attention_costs.ipynb.

    Examples
    --------
    >>> round(loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]), 6)
    2.0
    """
    (sizes,), (values,) = validate.numpy_floats(sizes=sizes), validate.numpy_floats(values=values)
    sizes, values = sizes.astype(float), values.astype(float)
    if sizes.shape != values.shape or sizes.ndim != 1 or sizes.size < 2:
        raise ValueError(
            f"sizes and values must be 1-D with the same length >= 2 but have shapes {sizes.shape} and {values.shape}"
        )
    if not (np.isfinite(sizes).all() and np.isfinite(values).all()):
        raise ValueError(f"sizes and values must be finite but are {sizes.tolist()} and {values.tolist()}")
    if np.any(sizes <= 0) or np.any(values <= 0):
        raise ValueError("sizes and values must be positive to take logarithms")
    if np.unique(sizes).size < 2:
        raise ValueError(f"sizes must hold at least two different values to fit a slope but are {sizes.tolist()}")
    slope, _ = np.polyfit(np.log(sizes), np.log(values), 1)
    return float(slope)


def thread_info() -> str:
    """One line naming the thread settings timings depend on, e.g. ``"OMP_NUM_THREADS=1, torch threads=1"``.

    Introduced in notebooks/06_what_attention_costs.ipynb.
    """
    import torch

    omp = os.environ.get("OMP_NUM_THREADS", "unset")
    return f"OMP_NUM_THREADS={omp}, torch threads={torch.get_num_threads()}"
