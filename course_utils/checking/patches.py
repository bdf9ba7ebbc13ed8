"""Patches: the course's primitives as someone who holds a misconception believes they work.

A :class:`Patch` replaces a few functions for the duration of a ``with patch.applied(args):`` block
(``torch.tril`` keeps the upper triangle; every softmax runs over another axis; ``make_padding_mask`` says
True at the padding). The engine runs an exercise's reference inside the block: the result is the answer
of a student who holds the misconception, derived for *every* exercise whose computation goes through the
patched functions, not only the exercises that declare the mistake. The catalogue
(:mod:`course_utils.checking.misconceptions`) attaches one patch to a misconception.

Rules a patch follows:

- It patches the lowest level that carries the idea (``torch.tril``, not ``masks.make_causal_mask``, which
  calls it), so nothing is patched twice on one path.
- It never acts inside what the case hands in: a module passed as an argument (and its submodules) and a
  function passed as an argument run unpatched. The student writes the exercise's computation, not the
  layer they are given (a greedy decoder does not re-implement the model's softmax).
- Only modules already imported are patched; a target that does not exist is skipped.

Importing this module imports neither torch nor the course's attention modules.

Introduced in notebooks/00_start_here.ipynb (the checks name mistakes through it).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Replacement",
    "Patch",
    "patched",
    "resolve",
    "running_given",
    "given_suspended",
    "SOFTMAX_OTHER_AXIS",
    "SOFTMAX_NO_MAX_SHIFT",
    "NO_SCALING",
    "SCALED_BY_D_HEAD",
    "SCALED_BY_SQRT_D_MODEL",
    "TRIU_FOR_TRIL",
    "TRIL_WITHOUT_DIAGONAL",
    "MASK_INVERTED",
    "PADDING_OFF_BY_ONE",
    "PADDING_MASK_3D",
    "PADDING_AS_2D_MASK",
    "SPLIT_WITHOUT_TRANSPOSE",
    "NO_OUTPUT_PROJECTION",
    "DROPOUT_IN_EVAL",
]

_state = {"suspended": 0}  # > 0 while code runs inside something the case handed in


def _patching() -> bool:
    return _state["suspended"] == 0


def running_given() -> bool:
    """True while code runs inside something a case handed in (patches do not act there)."""
    return _state["suspended"] > 0


@contextlib.contextmanager
def given_suspended(given=()):
    """Mark the modules in ``given`` (and their submodules) as handed in, without patching anything."""
    restore = _suspend_given(given)
    try:
        yield
    finally:
        for owner, attr, original, had_own in reversed(restore):
            if had_own:
                setattr(owner, attr, original)
            else:
                owner.__dict__.pop(attr, None)


@contextlib.contextmanager
def _suspended():
    _state["suspended"] += 1
    try:
        yield
    finally:
        _state["suspended"] -= 1


@dataclass(frozen=True)
class Replacement:
    """``target`` (``"module:attr.path"``) is replaced by ``make(original)`` while a patch is applied."""

    target: str
    make: Callable[[Callable], Callable]


def resolve(target: str):
    """``"module:attr.path"`` -> (owner, attribute name, current value); None if the module is not imported.

    A module nobody imported cannot be on the reference's path, so it is never imported here.
    """
    module_name, _, path = target.partition(":")
    module = sys.modules.get(module_name)
    if module is None:
        return None
    owner = module
    parts = path.split(".")
    try:
        for part in parts[:-1]:
            owner = getattr(owner, part)
        return owner, parts[-1], getattr(owner, parts[-1])
    except AttributeError:
        return None


class Patch:
    """A named set of :class:`Replacement`\\ s, applied together.

    Examples
    --------
    >>> import numpy as np
    >>> with TRIU_FOR_TRIL.applied():
    ...     np.tril(np.ones((2, 2))).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """

    def __init__(self, name: str, *replacements: Replacement):
        self.name = name
        self.replacements = tuple(replacements)

    def __repr__(self) -> str:
        return f"Patch({self.name!r})"

    @property
    def targets(self) -> tuple:
        return tuple(r.target for r in self.replacements)

    @contextlib.contextmanager
    def applied(self, given=()):
        """Patch the targets; inside the modules and functions of ``given`` nothing is patched."""
        restore = []
        try:
            for replacement in self.replacements:
                found = resolve(replacement.target)
                if found is None:
                    continue
                owner, attr, original = found
                had_own = attr in vars(owner)
                restore.append((owner, attr, original, had_own))
                setattr(owner, attr, _guarded(original, replacement.make(original)))
            restore.extend(_suspend_given(given))
            yield
        finally:
            for owner, attr, original, had_own in reversed(restore):
                if had_own:
                    setattr(owner, attr, original)
                elif isinstance(owner, type) or type(owner).__name__ == "module":
                    with contextlib.suppress(AttributeError):
                        delattr(owner, attr)
                else:  # a module instance's own forward
                    owner.__dict__.pop(attr, None)


def _guarded(original, replacement):
    def call(*args, **kwargs):
        if _patching():
            return replacement(*args, **kwargs)
        return original(*args, **kwargs)

    call.__name__ = getattr(original, "__name__", "patched")
    call.__doc__ = getattr(original, "__doc__", None)
    return call


def _own_methods(module, torch):
    """The methods a module's own classes define (``forward``, ``decode_step``, ...), not ``nn.Module``'s."""
    names = []
    for cls in type(module).__mro__:
        if cls is torch.nn.Module or cls is object:
            break
        for name, value in vars(cls).items():
            if not name.startswith("__") and inspect.isfunction(value) and name not in names:
                names.append(name)
    return names


def _suspend_given(given):
    """Make every module in ``given`` (and its submodules) run unpatched; returns what to restore."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    restore = []
    seen = set()
    for arg in given:
        if not isinstance(arg, torch.nn.Module):
            continue
        for module in arg.modules():
            if id(module) in seen:
                continue
            seen.add(id(module))
            for name in _own_methods(module, torch):
                had_own = name in vars(module)
                bound = getattr(module, name)

                def method(*args, _bound=bound, **kwargs):
                    with _suspended():
                        return _bound(*args, **kwargs)

                module.__dict__[name] = method
                restore.append((module, name, bound, had_own))
    return restore


def _suspending(fn):
    if not callable(fn) or isinstance(fn, type) or _is_module(fn):
        return fn

    def given(*args, **kwargs):
        with _suspended():
            return fn(*args, **kwargs)

    given.__name__ = getattr(fn, "__name__", "given")
    return given


def _is_module(x) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.nn.Module)


def patched(reference, patch: Patch):
    """The answer of someone who holds ``patch``'s misconception: ``reference`` run under the patch.

    Functions passed as arguments run unpatched (they are the case's, not the answer's).
    """

    def answer(*args):
        with patch.applied(given=args):
            return reference(*(_suspending(a) for a in args))

    answer.__name__ = f"{getattr(reference, '__name__', 'reference')}_{patch.name}"
    answer.__qualname__ = answer.__name__
    return answer


# ---------------------------------------------------------------------------------------------
# the patches
# ---------------------------------------------------------------------------------------------


def _other_axis(ndim: int, axis: int) -> int:
    """The axis a confused answer uses instead of ``axis``: the last one, or the one before it."""
    axis = axis % ndim
    return ndim - 2 if axis == ndim - 1 else ndim - 1


def _numpy_softmax_other_axis(original):
    def softmax(x, axis=-1):
        ndim = np.ndim(x)
        return original(x, axis=_other_axis(ndim, axis) if ndim >= 2 else axis)

    return softmax


def _torch_softmax_other_dim(original):
    def softmax(input, dim=None, *args, **kwargs):
        if dim is not None and input.dim() >= 2:
            dim = _other_axis(input.dim(), dim)
        return original(input, dim, *args, **kwargs)

    return softmax


def _numpy_softmax_unshifted(original):
    def softmax(x, axis=-1):
        x = np.asarray(x, dtype=np.result_type(np.asarray(x).dtype, np.float32))
        with np.errstate(all="ignore"):
            exps = np.exp(x)  # no max subtracted: large scores overflow to inf, inf / inf = NaN
            return exps / exps.sum(axis=axis, keepdims=True)

    return softmax


def _torch_softmax_unshifted(original):
    def softmax(input, dim=None, *args, **kwargs):
        exps = input.exp()  # no max subtracted: large scores overflow to inf, inf / inf = NaN
        return exps / exps.sum(dim=dim, keepdim=True)

    return softmax


def _scale_numpy_sdpa(factor):
    def make(original):
        def scaled_dot_product_attention(q, k, v, mask=None):
            q = np.asarray(q)
            return original(q * factor(q.shape[-1], None), k, v, mask)

        return scaled_dot_product_attention

    return make


def _scale_numpy_mha(factor):
    def make(original):
        def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
            W_q = np.asarray(W_q)
            d_model = W_q.shape[0]
            W_q = W_q * factor(d_model // int(num_heads), d_model)
            return original(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=mask)

        return multi_head_attention

    return make


def _scale_torch_sdpa(factor):
    def make(original):
        def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
            return original(query * factor(query.shape[-1], None), key, value, mask, dropout_p)

        return scaled_dot_product_attention

    return make


def _scale_torch_mha(factor):
    def make(original):
        def forward(self, query, key, value, *args, **kwargs):
            import torch

            proj = self.query_proj
            f = factor(self.d_head, self.d_model)
            saved = [p.detach().clone() for p in proj.parameters()]
            with torch.no_grad():
                for p in proj.parameters():
                    p.mul_(f)  # queries, and so the scores, scaled by f
            try:
                return original(self, query, key, value, *args, **kwargs)
            finally:
                with torch.no_grad():
                    for p, s in zip(proj.parameters(), saved, strict=True):
                        p.copy_(s)

        return forward

    return make


def _scale_patch(name, factor, single_head=True):
    replacements = [
        Replacement("course_utils.numpy_attention:multi_head_attention", _scale_numpy_mha(factor)),
        Replacement("course_utils.attention:MultiHeadAttention.forward", _scale_torch_mha(factor)),
    ]
    if single_head:
        replacements += [
            Replacement("course_utils.numpy_attention:scaled_dot_product_attention", _scale_numpy_sdpa(factor)),
            Replacement("course_utils.attention:scaled_dot_product_attention", _scale_torch_sdpa(factor)),
        ]
    return Patch(name, *replacements)


def _torch_triangle(other_name, shift):
    def make(original):
        def triangle(input, diagonal=0, *args, **kwargs):
            import torch

            other = original if other_name == "tril" else torch.triu  # original: tril itself is patched
            return other(input, diagonal + shift, *args, **kwargs)

        return triangle

    return make


def _tensor_triangle(other_name, shift):
    def make(original):
        def triangle(self, diagonal=0):
            import torch

            other = original if other_name == "tril" else torch.Tensor.triu
            return other(self, diagonal + shift)

        return triangle

    return make


def _numpy_triangle(other_name, shift):
    def make(original):
        def triangle(m, k=0):
            other = original if other_name == "tril" else np.triu
            return other(m, k + shift)

        return triangle

    return make


def _inverted(original):
    def inverted(*args, **kwargs):
        return ~original(*args, **kwargs)

    return inverted


def _combined_with_or(original):
    def combine_masks(*masks):
        result = masks[0]
        for mask in masks[1:]:
            result = result | mask  # True = ignore: ignore a key when either mask says so
        return result

    return combine_masks


def _padding_with_equal(original):
    def make_padding_mask(lengths, max_len=None):
        import torch

        lengths = torch.as_tensor(lengths)
        max_len = int(lengths.max()) if max_len is None else max_len
        return torch.arange(max_len)[None, :] <= lengths[:, None]  # j <= length: one position too many

    return make_padding_mask


def _padding_3d(original):
    def padding_to_attention_mask(padding_mask):
        return padding_mask[:, None, :]  # (batch, 1, k_len): 3-D, lines up with the heads axis

    return padding_to_attention_mask


def _padding_2d(original):
    def padding_to_attention_mask(padding_mask):
        return padding_mask  # (batch, k_len), read as (q_len, k_len)

    return padding_to_attention_mask


def _key_padding_as_mask(original):
    def forward(self, query, key, value, mask=None, need_weights=True, key_padding_mask=None):
        if key_padding_mask is not None and mask is None:
            return original(self, query, key, value, mask=key_padding_mask, need_weights=need_weights)
        return original(
            self, query, key, value, mask=mask, need_weights=need_weights, key_padding_mask=key_padding_mask
        )

    return forward


def _split_single_reshape(original):
    def split_heads(x, num_heads):
        batch, seq_len, d_model = np.shape(x)
        return np.asarray(x).reshape(batch, int(num_heads), seq_len, d_model // int(num_heads))

    return split_heads


def _numpy_mha_without_w_o(original):
    def multi_head_attention(query, key, value, W_q, W_k, W_v, W_o, num_heads, mask=None):
        identity = np.eye(np.shape(W_o)[0], dtype=np.asarray(W_o).dtype)
        return original(query, key, value, W_q, W_k, W_v, identity, num_heads, mask=mask)

    return multi_head_attention


def _torch_mha_without_out_proj(original):
    def forward(self, *args, **kwargs):
        from torch import nn

        out_proj = self._modules["out_proj"]
        self._modules["out_proj"] = nn.Identity()  # the concatenated heads, never mixed
        try:
            return original(self, *args, **kwargs)
        finally:
            self._modules["out_proj"] = out_proj

    return forward


def _torch_mha_dropout_always(original):
    def forward(self, *args, **kwargs):
        training = self.training
        object.__setattr__(self, "training", True)  # dropout on the weights whatever the mode
        try:
            return original(self, *args, **kwargs)
        finally:
            object.__setattr__(self, "training", training)

    return forward


SOFTMAX_OTHER_AXIS = Patch(
    "softmax_other_axis",
    Replacement("course_utils.numpy_attention:softmax", _numpy_softmax_other_axis),
    Replacement("torch:softmax", _torch_softmax_other_dim),
    Replacement("torch:Tensor.softmax", _torch_softmax_other_dim),
)
SOFTMAX_NO_MAX_SHIFT = Patch(
    "softmax_no_max_shift",
    Replacement("course_utils.numpy_attention:softmax", _numpy_softmax_unshifted),
    Replacement("torch:softmax", _torch_softmax_unshifted),
    Replacement("torch:Tensor.softmax", _torch_softmax_unshifted),
)
NO_SCALING = _scale_patch("no_scaling", lambda d_head, d_model: math.sqrt(d_head))
SCALED_BY_D_HEAD = _scale_patch("scaled_by_d_head", lambda d_head, d_model: 1 / math.sqrt(d_head))
SCALED_BY_SQRT_D_MODEL = _scale_patch(
    "scaled_by_sqrt_d_model", lambda d_head, d_model: math.sqrt(d_head / d_model), single_head=False
)
TRIU_FOR_TRIL = Patch(
    "triu_for_tril",
    Replacement("torch:tril", _torch_triangle("triu", 0)),
    Replacement("torch:Tensor.tril", _tensor_triangle("triu", 0)),
    Replacement("numpy:tril", _numpy_triangle("triu", 0)),
)
TRIL_WITHOUT_DIAGONAL = Patch(
    "tril_without_diagonal",
    Replacement("torch:tril", _torch_triangle("tril", -1)),
    Replacement("torch:Tensor.tril", _tensor_triangle("tril", -1)),
    Replacement("numpy:tril", _numpy_triangle("tril", -1)),
)
MASK_INVERTED = Patch(
    "mask_inverted",
    Replacement("course_utils.masks:make_causal_mask", _inverted),
    Replacement("course_utils.masks:make_padding_mask", _inverted),
    Replacement("course_utils.masks:combine_masks", _combined_with_or),
)
PADDING_OFF_BY_ONE = Patch(
    "padding_off_by_one", Replacement("course_utils.masks:make_padding_mask", _padding_with_equal)
)
PADDING_MASK_3D = Patch("padding_mask_3d", Replacement("course_utils.masks:padding_to_attention_mask", _padding_3d))
PADDING_AS_2D_MASK = Patch(
    "padding_as_2d_mask",
    Replacement("course_utils.masks:padding_to_attention_mask", _padding_2d),
    Replacement("course_utils.attention:MultiHeadAttention.forward", _key_padding_as_mask),
)
SPLIT_WITHOUT_TRANSPOSE = Patch(
    "split_without_transpose", Replacement("course_utils.numpy_attention:split_heads", _split_single_reshape)
)
NO_OUTPUT_PROJECTION = Patch(
    "no_output_projection",
    Replacement("course_utils.numpy_attention:multi_head_attention", _numpy_mha_without_w_o),
    Replacement("course_utils.attention:MultiHeadAttention.forward", _torch_mha_without_out_proj),
)
DROPOUT_IN_EVAL = Patch(
    "dropout_in_eval", Replacement("course_utils.attention:MultiHeadAttention.forward", _torch_mha_dropout_always)
)
