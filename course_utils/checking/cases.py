"""What a lesson author needs to write cases that no wrong answer passes by accident.

- :func:`torch_seeded`: build modules and tensors from a fixed seed, leaving the notebook's generator alone.
- :func:`distinct_sizes` and :func:`coinciding_axes`: every axis of an input a different size, so a swapped
  or transposed axis cannot pass because two sizes happen to agree.
- :func:`large_scores`: scores in the thousands, so a softmax that does not subtract the maximum overflows.
- :func:`tied_rows`: rows whose largest entry appears twice, so an argmax that keeps the last of equal maxima
  (a reversed argmax, the end of an argsort) differs from NumPy's and PyTorch's first.
- :func:`padded_lengths`: lengths with a row shorter than the batch's longest and a longest row shorter
  than the padded width, so an answer that assumes a full-length row fails.
- :func:`decode_counting_projections`: a driver for a KV-cache step that counts how many positions each
  projection handles per step, and refuses a "cache" that projects the whole prefix again.
- :func:`run_training_steps`: a driver for a training step that starts from stale gradients and includes a
  huge gradient, so a missing ``zero_grad`` or a missing gradient clip shows.
- :func:`run_module`: the driver of a class exercise: build the student's class, load the course module's
  weights with ``strict=True`` (a mismatch is a *wrong* answer that names the keys), run it.
  :func:`load_course_weights` and :func:`state_dict_problem` are its parts, for a driver of your own.

Introduced in notebooks/00_start_here.ipynb (for lesson authors; see CONTRIBUTING.md).
"""

from __future__ import annotations

import contextlib
import math
import re

import numpy as np

from course_utils.checking.model import AnswerRefused

__all__ = [
    "torch_seeded",
    "distinct_sizes",
    "coinciding_axes",
    "large_scores",
    "tied_rows",
    "padded_lengths",
    "Counted",
    "decode_counting_projections",
    "run_training_steps",
    "run_module",
    "load_course_weights",
    "state_dict_problem",
]


@contextlib.contextmanager
def torch_seeded(seed: int):
    """Seed torch's global generator inside the block and restore its state afterwards.

    Module constructors (``nn.Linear``) draw from the global generator; cases built inside this block are
    the same whatever the notebook drew before.
    """
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def distinct_sizes(**sizes) -> tuple:
    """The sizes in the order given, after checking that no two (other than 1) are equal.

    >>> distinct_sizes(batch=2, q_len=3, k_len=5, d_model=8)
    (2, 3, 5, 8)
    """
    seen: dict = {}
    for name, size in sizes.items():
        if size != 1 and size in seen:
            raise ValueError(f"{name} and {seen[size]} are both {size}: give every axis its own size")
        seen[size] = name
    return tuple(sizes.values())


def coinciding_axes(value) -> list:
    """The sizes (other than 1) that two axes of one array share: ``[]`` when every axis is distinct."""
    shape = tuple(getattr(value, "shape", ()))
    sizes = [s for s in shape if s != 1]
    return sorted({s for s in sizes if sizes.count(s) > 1})


def large_scores(shape, seed: int, scale: float = 1000.0) -> np.ndarray:
    """Random scores with one slice shifted up by ``scale`` and the next down by ``scale`` (float64).

    The exponentials of such scores overflow (``np.exp(1000)`` is inf) unless the maximum is subtracted
    first; the right softmax is unchanged by the shift.
    """
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal(shape)
    if len(shape) >= 2:
        scores[..., 0, :] += scale
        scores[..., 1, :] -= scale
    else:
        scores = scores + scale
    return scores


def tied_rows(rows: np.ndarray) -> np.ndarray:
    """A copy of ``rows`` (..., n) whose last entry is raised to the slice's maximum, then renormalised.

    Rows of attention weights (non-negative, summing to 1) stay so. In every slice of more than one entry the
    maximum then appears at least twice, first at an earlier position (a slice whose maximum was last is reversed
    first): ``np.argmax`` (the first maximum) and an answer that takes the last maximum (a reversed argmax, the end
    of an argsort) disagree on every such slice.

    >>> tied_rows(np.array([[0.5, 0.3, 0.2]])).round(3).tolist()
    [[0.385, 0.231, 0.385]]
    """
    rows = np.array(rows, dtype=float, copy=True)
    if rows.ndim == 0 or rows.shape[-1] < 2:
        return rows
    at_end = rows.argmax(axis=-1) == rows.shape[-1] - 1  # (...,)
    rows[at_end] = rows[at_end][..., ::-1]
    rows[..., -1] = rows.max(axis=-1)  # the maximum again, after its first appearance
    total = rows.sum(axis=-1, keepdims=True)
    return rows / np.where(total > 0, total, 1.0)


def padded_lengths(batch: int, max_len: int) -> list[int]:
    """``batch`` distinct lengths in ``[1, max_len - 1]``: no row fills the padded width, rows differ.

    >>> padded_lengths(3, 6)
    [5, 1, 3]
    """
    if not 1 <= batch <= max_len - 1:
        raise ValueError(f"batch must lie in [1, max_len - 1 = {max_len - 1}] but is {batch}")
    longest = max_len - 1
    lengths = [longest]
    if batch > 1:
        lengths.append(1)
    candidates = [v for v in range(2, longest) if v not in lengths]
    middle = sorted(candidates, key=lambda v: abs(v - (longest + 1) / 2))
    lengths.extend(middle[: batch - len(lengths)])
    return lengths


class Counted(np.ndarray):
    """A weight matrix that counts how many positions (rows) it projects, across every view of it."""

    def __new__(cls, array, name: str, counts: dict):
        obj = np.asarray(array).view(cls)
        obj._name = name
        obj._counts = counts
        return obj

    def __array_finalize__(self, obj):
        self._name = getattr(obj, "_name", None)
        self._counts = getattr(obj, "_counts", None)

    def _count(self, other) -> None:
        other = np.asarray(other)
        rows = int(np.prod(other.shape[:-1])) if other.ndim >= 1 else 1
        if self._counts is not None:
            self._counts[self._name] = self._counts.get(self._name, 0) + max(rows, 1)

    @staticmethod
    def _plain(x):
        if isinstance(x, Counted):
            return x.view(np.ndarray)
        if isinstance(x, (list, tuple)):
            return type(x)(Counted._plain(v) for v in x)
        return x

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.matmul and method == "__call__" and len(inputs) == 2:
            a, b = inputs
            if isinstance(b, Counted) and not isinstance(a, Counted):
                b._count(a)
            elif isinstance(a, Counted) and not isinstance(b, Counted):
                a._count(np.swapaxes(np.asarray(b), -1, -2) if np.ndim(b) >= 2 else b)
        plain = tuple(self._plain(x) for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(self._plain(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*plain, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.dot, np.inner, np.tensordot, np.einsum) and len(args) >= 2:
            operands = [a for a in args if isinstance(a, np.ndarray)]
            counted = [a for a in operands if isinstance(a, Counted)]
            others = [a for a in operands if not isinstance(a, Counted)]
            if len(counted) == 1 and others:
                counted[0]._count(others[0])
        return func(*self._plain(args), **{k: self._plain(v) for k, v in kwargs.items()})


def _kept_in_order(before, after, t: int) -> None:
    """A cache that grew by one row must keep the earlier rows first, as they were: the new one goes at the end."""
    for name, old, new in zip(("k_cache", "v_cache"), before, after, strict=True):
        try:
            new = np.asarray(new)
            grew = new.ndim == 2 and old.ndim == 2 and new.shape == (old.shape[0] + 1, old.shape[1])
            moved = grew and old.shape[0] > 0 and not np.allclose(new[:-1], old)
        except Exception:  # noqa: BLE001 - whatever came back, the comparison says what is wrong with it
            return
        if moved:
            raise AnswerRefused(
                f"at step {t + 1} the {name} you return does not start with the {name} you were given: the earlier "
                "rows must stay first, in their order, and the new row go at the end (position t is row t)"
            )


def decode_counting_projections(step, x, w_q, w_k, w_v):
    """Causal self-attention over ``x`` (seq_len, d_model) built from a cached decoding ``step``, one token at a time.

    ``step(x_t, k_cache, v_cache, w_q, w_k, w_v) -> (output, k_cache, v_cache)`` gets the new token and the
    caches so far. The weights count the positions they project: a step that projects more than the new
    token (the whole prefix again) is refused with :class:`~course_utils.checking.AnswerRefused`.
    Returns the outputs stacked, ``(seq_len, d_value)``.
    """
    counts: dict = {}
    weights = [Counted(w, name, counts) for w, name in ((w_q, "w_q"), (w_k, "w_k"), (w_v, "w_v"))]
    k_cache, v_cache = np.zeros((0, w_k.shape[1])), np.zeros((0, w_v.shape[1]))  # empty caches (t = 0)
    outputs = []
    for t, x_t in enumerate(x):
        counts.clear()
        before = (k_cache, v_cache)
        out, k_cache, v_cache = step(x_t, k_cache, v_cache, *weights)
        for name in ("w_k", "w_v", "w_q"):
            if counts.get(name, 0) > 1:
                raise AnswerRefused(
                    f"at step {t + 1} your step projects {counts[name]} positions with {name}; a KV cache "
                    "projects only the new token and reads the earlier keys and values from the cache"
                )
        _kept_in_order(before, (k_cache, v_cache), t)
        outputs.append(np.asarray(out))
    return np.stack(outputs)  # (seq_len, d_value)


def ended_targets(batch: int, tgt_len: int, vocab: int, pad: int, eos: int, first_symbol: int = 3):
    """``(logits (batch, tgt_len, vocab), target (batch, tgt_len))`` as a decoder's real targets are: symbols, one
    EOS after each row's last symbol, then PAD; the logits' argmax right at about 60% of the positions, EOS
    positions included (so an accuracy that leaves EOS out, or counts PAD, comes out different)."""
    import torch

    gen = torch.Generator().manual_seed(batch * 100 + tgt_len * 10 + vocab)
    logits = torch.randn(batch, tgt_len, vocab, generator=gen)
    lengths = [1 + (3 * i + tgt_len) % (tgt_len - 1) for i in range(batch)]  # symbols per row, EOS fits after
    target = torch.randint(first_symbol, vocab, (batch, tgt_len), generator=gen)
    for row, n in enumerate(lengths):
        target[row, n] = eos
        target[row, n + 1 :] = pad
    right = torch.rand(batch, tgt_len, generator=gen) < 0.6  # (batch, tgt_len)
    rows, cols = right.nonzero(as_tuple=True)
    logits[rows, cols, target[rows, cols]] = logits[rows, cols].max(dim=-1).values + 1.0  # the target wins there
    return logits, target


def run_training_steps(step, model, optimizer, batches, *extra):
    """Run a student's training ``step(model, optimizer, batch, *extra) -> loss`` on every batch in turn.

    Use it as the exercise's driver (``driver=cases.run_training_steps``); a case is then
    ``Case((model, optimizer, batches, *extra), "label")``:

    - ``model``: a small ``nn.Module`` built inside :func:`torch_seeded` (every case builds its own; the
      engine deep-copies the case before each run, so the optimizer must be built on *this* model's
      parameters in the same case: ``optimizer = torch.optim.SGD(model.parameters(), lr=0.1)``; a
      deep copy of the pair keeps them linked).
    - ``batches``: a list of whatever ``step`` takes as ``batch`` (e.g. ``(src, tgt)`` tensors); two or
      three steps are enough. Include one batch whose gradient norm is far above the clip threshold
      (inputs or targets scaled by 1e3), so an answer that does not clip moves differently.
    - ``extra``: further arguments passed to every call (a loss function, the clip threshold).

    Before the first step every parameter holds a stale gradient of 0.5 (as after an evaluation pass that
    was never cleared), so an answer that forgets ``optimizer.zero_grad()`` moves differently. The step
    returns the loss (a tensor or a float; ``None`` is recorded as NaN, so a step without ``return`` is
    wrong, not a crash). Returns ``(losses, parameters)``: the loss of each step (a tuple of floats) and
    every parameter after the last step, flattened into one tensor; give the exercise
    ``output_names=("losses", "parameters")`` so messages say which differs, and ``atol``/``rtol`` that
    float32 training noise passes (``1e-5``). The reference is the course's step with the same signature;
    misconceptions ``buggy=`` versions (no ``zero_grad``, no clip, clip after ``step()``) are named by
    what they do to the two outputs.
    """
    import torch

    with torch.no_grad():
        for p in model.parameters():
            p.grad = torch.full_like(p, 0.5)  # stale: left from an earlier backward pass
    losses = []
    for batch in batches:
        loss = step(model, optimizer, batch, *extra)
        losses.append(float(loss) if loss is not None else math.nan)
    with torch.no_grad():
        flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    return tuple(losses), flat


# ---------------------------------------------------------------------------------------------
# class exercises: build the student's class, load the course's weights, run it
# ---------------------------------------------------------------------------------------------

_STATE_DICT_ERROR = "Error(s) in loading state_dict"
_KEYS = re.compile(r'"([^"]+)"')


def _keys_words(keys: list, limit: int = 4) -> str:
    shown = ", ".join(f"`{k}`" for k in keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def _shape_words(text: str) -> str:
    sizes = re.findall(r"\d+", text)
    return "(" + ", ".join(sizes) + (",)" if len(sizes) == 1 else ")")


def state_dict_problem(error, name: str = "your module") -> str | None:
    """The words for a ``load_state_dict`` error (missing, unexpected or mis-shaped keys); None for another error.

    >>> err = RuntimeError('Error(s) in loading state_dict for Enc:\\n\\tUnexpected key(s) in state_dict: "rnn.bias_hh". ')
    >>> state_dict_problem(err, "your Encoder")
    "your Encoder's parameters are not named like the course's, so the course's weights cannot be loaded into it: it has no `rnn.bias_hh`. Name the layers as the stub's docstring does."
    """
    try:
        text = str(error)
    except Exception:  # an exception whose __str__ raises is not torch's
        return None
    if not isinstance(text, str) or _STATE_DICT_ERROR not in text:
        return None
    missing, unexpected, shapes = [], [], []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Missing key(s)"):
            missing += _KEYS.findall(line)
        elif line.startswith("Unexpected key(s)"):
            unexpected += _KEYS.findall(line)
        elif line.startswith("size mismatch for "):
            match = re.match(
                r"size mismatch for (\S+): copying a param with shape (.+?) from checkpoint, "
                r"the shape in current model is (.+?)\.?$",
                line,
            )
            if match:
                key, theirs, yours = match.groups()
                shapes.append(f"`{key}` is {_shape_words(yours)} in yours and {_shape_words(theirs)} in the course's")
    parts = []  # torch's "missing": the student's module wants it, the course's weights lack it; "unexpected": reverse
    if unexpected:
        parts.append(f"it has no {_keys_words(unexpected)}")
    if missing:
        parts.append(f"it has {_keys_words(missing)}, which the course's module has not")
    if missing or unexpected:
        head = (
            f"{name}'s parameters are not named like the course's, so the course's weights cannot be loaded into it: "
        )
        tail = ". Name the layers as the stub's docstring does."
    else:
        head = f"{name}'s parameters have other shapes than the course's: "
        tail = ". Check the sizes you pass to each layer."
    if shapes:
        parts.append("; ".join(shapes[:3]) + (f" (and {len(shapes) - 3} more)" if len(shapes) > 3 else ""))
    if not parts:
        return f"{name} cannot take the course's weights: {' '.join(text.split())[:200]}"
    return head + "; ".join(parts) + tail


def load_course_weights(module, course_module, name: str | None = None) -> None:
    """Load ``course_module``'s weights into the student's ``module`` with ``strict=True``, in its mode.

    A mismatch (missing, unexpected or mis-shaped keys) raises
    :class:`~course_utils.checking.AnswerRefused` naming the keys in words (the check says *wrong*); an
    object that is not a ``torch.nn.Module`` likewise.
    """
    import torch

    name = name or f"your {type(module).__name__}"
    if not isinstance(module, torch.nn.Module):
        raise AnswerRefused(f"{name} is not a torch.nn.Module: the class must subclass nn.Module, as the stub does")
    try:
        module.load_state_dict(course_module.state_dict(), strict=True)
    except RuntimeError as exc:
        words = state_dict_problem(exc, name)
        if words is None:
            raise
        raise AnswerRefused(words) from None
    module.train(course_module.training)


def run_module(cls, course_module, init_args, inputs, method: str = "forward"):
    """The driver of a class exercise: ``cls(*init_args)``, the course's weights loaded strictly, then run on ``inputs``.

    Use it as ``driver=cases.run_module``, with cases ``Case((course_module, init_args, inputs), "label")``:
    ``course_module`` an instance of the course's class built inside :func:`torch_seeded` (its weights are
    the ones both answers run with), ``init_args`` a tuple of constructor arguments, ``inputs`` a tuple of
    ``forward`` arguments (``method`` names another method to call instead). The exercise's reference is
    the course's class with the stub's constructor: ``checks.check`` hands it back when the student's class
    did not pass. The student's module is put in the course module's mode (``train``/``eval``). Returns
    what the method returns.
    """
    module = cls(*init_args)
    load_course_weights(module, course_module, f"your {getattr(cls, '__name__', 'class')}")
    if method == "forward":
        return module(*inputs)  # through nn.Module.__call__, hooks included
    return getattr(module, method)(*inputs)
