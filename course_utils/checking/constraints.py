"""The exercise's own stated constraint, measured: a tile of scores at a time, no future tile, one head's slice.

Some exercises say *how* to compute, not only what: 06's tiled pass never holds more than one tile of scores,
06's causal tiled pass never computes a tile wholly in the future, 03's per-head loop uses one head's slice of
the weights at a time (it never projects every head at once and splits). An answer that computes the right values the other
way passes every value check; here the way is measured, by handing the answer arrays that log every product
they take part in (``@``, ``np.matmul``, ``np.einsum``, ``np.dot``, ``np.tensordot``, ``np.inner``), their
views and copies included, and refused by name. The tiled pass is also measured by memory (``tracemalloc``'s
peak, NumPy's arrays included) on one larger case, so a score matrix built by broadcasting shows too.

An exercise declares its constraint as data, ``Exercise(constraint="one_tile_of_scores")``; the words are
:data:`course_utils.checking.model.CONSTRAINT_WORDS`. What is not a product (a broadcast ``*`` then
``.sum()``, or ``np.asarray`` of the input, which drops the log) is not counted as scores; for the tiled pass the
memory measure still sees it.

Introduced in notebooks/06_efficient_attention.ipynb (the tiled exercises) and 03 (the per-head loop).
"""

from __future__ import annotations

import tracemalloc

import numpy as np

__all__ = ["Logged", "constraint_problem", "logged_args", "products", "peak_bytes", "MEMORY_CASE"]

_PRODUCTS = (np.einsum, np.dot, np.tensordot, np.inner, np.matmul, np.vdot)


def _plain(x):
    if isinstance(x, Logged):
        return np.ndarray.view(x, np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


class Logged(np.ndarray):
    """An input array with a ``role`` that logs ``(role, its shape, the result's shape)`` for every product."""

    def __new__(cls, array, role: str, log: list):
        obj = np.asarray(array).view(cls)
        obj._role = role
        obj._log = log
        return obj

    def __array_finalize__(self, obj):
        self._role = getattr(obj, "_role", None)
        self._log = getattr(obj, "_log", None)

    def _record(self, operands, result) -> None:
        shape = tuple(np.shape(result))
        for operand in operands:
            if isinstance(operand, Logged) and operand._log is not None:
                operand._log.append((operand._role, tuple(operand.shape), shape))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(x) for x in kwargs["out"])
        result = getattr(ufunc, method)(*(_plain(x) for x in inputs), **kwargs)
        if ufunc is np.matmul and method == "__call__":
            self._record(inputs, result)
            return result
        if isinstance(result, np.ndarray) and type(result) is np.ndarray:
            first = next(x for x in inputs if isinstance(x, Logged))
            return Logged(result, first._role, first._log)  # q / sqrt(d) is still the queries
        return result

    def __array_function__(self, func, types, args, kwargs):
        if func in _PRODUCTS:
            operands = [a for a in args if isinstance(a, np.ndarray)]
            result = func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})
            self._record(operands, result)
            return result
        return super().__array_function__(func, types, args, kwargs)


def logged_args(args, roles: dict, log: list) -> tuple:
    """The case's arguments with ``roles`` ({argument index: role}) wrapped as :class:`Logged` arrays."""
    return tuple(
        Logged(a, roles[i], log) if i in roles and isinstance(a, np.ndarray) else a for i, a in enumerate(args)
    )


def products(log, role) -> list:
    """``[(operand shape, result shape)]`` for every product the ``role`` array (or a view, a copy) took part in."""
    return [(shape, result) for r, shape, result in log if r == role]


def _score_entries(log) -> list:
    return [int(np.prod(result[-2:])) if len(result) >= 2 else 1 for _, result in products(log, "keys")]


def _one_tile(exercise, answer, args, seed, run) -> str | None:
    block = int(args[3])
    log: list = []
    status, _ = run(answer, logged_args(args, {0: "queries", 1: "keys"}, log), seed)
    entries = _score_entries(log) if status == "ok" else []
    largest = max(entries, default=0)
    if largest > block * block:
        return (
            f"your tiled pass holds {largest} scores at once, more than one tile of {block} × {block}: the point of "
            "tiling is that the full score matrix (or a whole row of tiles) never exists. Compute one tile of "
            "scores per key block, fold it in, move on"
        )
    return None


MEMORY_CASE = (256, 4, 3, 16)
"""``(seq_len, d_head, d_value, block)`` of the case whose memory a tiled pass is measured on (scores: 512 KiB)."""


def peak_bytes(run, fn, args, seed, is_answer) -> int | None:
    """The most memory (bytes, NumPy's arrays included) held at once while ``fn`` ran on ``args``; None if it failed."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        status, _ = run(fn, args, seed, fn_is_answer=is_answer)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if started:
            tracemalloc.stop()
    return peak if status == "ok" else None


def _memory_case():
    n, d_head, d_value, block = MEMORY_CASE
    rng = np.random.default_rng(0)
    return (rng.normal(size=(n, d_head)), rng.normal(size=(n, d_head)), rng.normal(size=(n, d_value)), block)


def _one_tile_of_memory(exercise, answer, run) -> str | None:
    """The same constraint measured as memory on one larger case: a broadcast product that is no ``@`` shows too."""
    args = _memory_case()
    course = peak_bytes(run, exercise.reference, args, 0, False)
    yours = peak_bytes(run, answer, args, 0, True)
    n, block = args[0].shape[0], args[3]
    allowance = n * n * 8 // 2  # half of the full score matrix in float64
    if course is None or yours is None or yours <= course + allowance:
        return None
    return (
        f"with {n} queries and keys in tiles of {block}, your tiled pass holds {yours // 1024} KiB at once where the "
        f"course's holds {course // 1024} KiB: it builds something the size of the whole score matrix "
        f"({n * n * 8 // 1024} KiB). Compute one tile of scores per key block, fold it in, move on"
    )


def _no_future_tile(exercise, answer, args, seed, run) -> str | None:
    counted = []
    for fn, is_answer in ((exercise.reference, False), (answer, True)):
        log: list = []
        status, _ = run(fn, logged_args(args, {0: "queries", 1: "keys"}, log), seed, fn_is_answer=is_answer)
        if status != "ok":
            return None
        counted.append(sum(_score_entries(log)))
    if counted[1] > counted[0]:
        return (
            f"your causal pass computes {counted[1]} scores where the course's computes {counted[0]}: it computes "
            "tiles that lie wholly in the future and masks them afterwards. Stop the key loop at the query block's "
            "last position"
        )
    return None


def _one_head_slice(exercise, answer, args, seed, run) -> str | None:
    w_q, heads = args[3], int(args[7])
    d_head = w_q.shape[-1] // heads
    log: list = []
    roles = {3: "columns", 4: "columns", 5: "columns"}  # W_o may take the heads concatenated (the lesson's variant)
    status, _ = run(answer, logged_args(args, roles, log), seed)
    if status != "ok":
        return None
    widest = max((shape[-1] for shape, _ in products(log, "columns")), default=0)
    if widest > d_head:
        return (
            f"your loop multiplies by {widest} columns of W_q, W_k or W_v at once, more than one head's {d_head}: "
            "it projects every head together and then splits the result. Use head h's slice of the weights, "
            "W_q[:, h * d_head : (h + 1) * d_head], inside the loop"
        )
    return None


_CHECKS = {
    "one_tile_of_scores": _one_tile,
    "no_future_tile": _no_future_tile,
    "one_head_slice": _one_head_slice,
}


def constraint_problem(exercise, answer, cases, run) -> str | None:
    """None, or the sentence saying how the answer breaks the exercise's own stated constraint (first case that does)."""
    word = getattr(exercise, "constraint", None)
    if word is None:
        return None
    check = _CHECKS[word]
    for i, args in enumerate(cases):
        found = check(exercise, answer, args, i, run)
        if found:
            return f"on case {i + 1}, {found}."
    if word == "one_tile_of_scores":
        found = _one_tile_of_memory(exercise, answer, run)
        if found:
            return f"{found}."
    return None
