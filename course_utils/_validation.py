"""One validation layer for every public helper: types, dtypes, shapes, masks, ranges.

Needs only NumPy and the standard library on purpose: ``numpy_attention`` must not load torch,
so torch is looked up in ``sys.modules`` (a tensor can only exist once torch is imported). The
NumPy and PyTorch backends reject bad input with the same words, and every message names the
argument, what was expected, what came, and what to do, in the course vocabulary
(batch, heads, q_len, k_len, d_head, d_value).

Each public function validates once per call, then computes: these checks are a few tuple
comparisons, cheap enough for training loops.

Introduced in notebooks/01_attention_numpy.ipynb (the errors every lesson shows come from here).
"""

from __future__ import annotations

import math
import numbers
import sys

import numpy as np

__all__ = [
    "describe",
    "is_tensor",
    "as_int",
    "positive_int",
    "nonnegative_int",
    "optional_int",
    "probability",
    "positive_float",
    "boolean",
    "one_of",
    "is_callable",
    "numpy_floats",
    "torch_floats",
    "torch_tensor",
    "integer_tensor",
    "numpy_bool_mask",
    "torch_bool_mask",
    "broadcast_shapes",
    "check_qkv",
    "check_mask_shape",
    "check_heads",
    "check_mha_mask_ndim",
]


def _fmt(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def is_tensor(x) -> bool:
    """True if ``x`` is a ``torch.Tensor`` (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def describe(x) -> str:
    """A short description of what came: type, and shape and dtype for arrays and tensors."""
    if is_tensor(x):
        return f"a torch.Tensor of shape {_fmt(x.shape)} and dtype {x.dtype}"
    if isinstance(x, np.ndarray):
        return f"a numpy.ndarray of shape {_fmt(x.shape)} and dtype {x.dtype}"
    if isinstance(x, (bool, np.bool_)):
        return f"the bool {x!r}"
    if isinstance(x, (numbers.Number, str)):
        return f"the {type(x).__name__} {x!r}"
    if x is None:
        return "None"
    return f"a {type(x).__module__}.{type(x).__qualname__}".replace("builtins.", "")


# ------------------------------------------------------------------------------------ scalars


def as_int(name: str, value, minimum: int = 0) -> int:
    """``value`` as a Python int ``>= minimum``; NumPy integer scalars are accepted, bools and floats are not."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        whole = isinstance(value, (float, np.floating)) and float(value).is_integer()
        hint = f"int({name})" if whole else f"a whole number such as {max(minimum, 1)}"
        raise TypeError(f"{name} must be an int (>= {minimum}) but is {describe(value)}; pass {hint}")
    value = int(value)
    if value < minimum:
        word = "a positive int" if minimum == 1 else "a non-negative int" if minimum == 0 else f"an int >= {minimum}"
        raise ValueError(f"{name} must be {word} but is {value!r}")
    return value


def positive_int(name: str, value) -> int:
    """``value`` as an int ``>= 1`` (sizes, counts, lengths of what must exist)."""
    return as_int(name, value, 1)


def nonnegative_int(name: str, value) -> int:
    """``value`` as an int ``>= 0`` (seeds, warm-up counts, lengths that may be empty)."""
    return as_int(name, value, 0)


def optional_int(name: str, value, minimum: int = 0):
    """``None`` or an int ``>= minimum``."""
    return None if value is None else as_int(name, value, minimum)


def _real(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number but is {describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite but is {value}")
    return value


def probability(name: str, value, high_inclusive: bool = False) -> float:
    """A probability in ``[0, 1)`` (dropout: 1 would drop everything) or ``[0, 1]``."""
    value = _real(name, value)
    if not (0.0 <= value <= 1.0 if high_inclusive else 0.0 <= value < 1.0):
        interval = "[0, 1]" if high_inclusive else "[0, 1)"
        hint = "" if high_inclusive else " (1 would drop every attention weight)"
        raise ValueError(f"{name} must be in {interval}{hint} but is {value}")
    return value


def positive_float(name: str, value, allow_none: bool = False, allow_zero: bool = False):
    """A finite float ``> 0`` (``>= 0`` with ``allow_zero``), or ``None`` if allowed."""
    if value is None and allow_none:
        return None
    value = _real(name, value)
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} but is {value}")
    return value


def boolean(name: str, value) -> bool:
    """``True`` or ``False`` (NumPy bools accepted)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False but is {describe(value)}")
    return bool(value)


def one_of(name: str, value, options) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``options`` (listed in the message)."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)} but is {value!r}")


def is_callable(name: str, value) -> None:
    """Raise ``TypeError`` unless ``value`` can be called."""
    if not callable(value):
        raise TypeError(f"{name} must be a function (something callable) but is {describe(value)}")


# ------------------------------------------------------------------------- arrays and tensors


def numpy_floats(**named) -> list:
    """NumPy-backend inputs as floating arrays of one dtype, in the order given.

    Arrays and nested lists are accepted; integer data becomes floating (lists of ints are common in
    by-hand examples). Torch tensors, booleans and non-numbers are refused. Two floating arrays of
    different dtypes are refused, as PyTorch does: mixing float32 and float64 would silently
    change the result's precision.
    """
    arrays, dtypes = [], {}
    for name, value in named.items():
        if is_tensor(value):
            raise TypeError(
                f"{name} must be a NumPy array (or a list) but is {describe(value)}; the NumPy functions take "
                f"arrays: pass {name}.detach().cpu().numpy(), or use course_utils.attention for tensors"
            )
        try:
            array = np.asarray(value)
        except (ValueError, TypeError) as err:
            raise TypeError(f"{name} must be an array of numbers but is {describe(value)} ({err})") from None
        if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.number) or np.iscomplexobj(array):
            raise TypeError(
                f"{name} must hold real numbers but has dtype {array.dtype} ({describe(value)}); "
                f"convert it with np.asarray({name}, dtype=float)"
            )
        if np.issubdtype(array.dtype, np.floating) and isinstance(value, np.ndarray):
            dtypes[name] = array.dtype
        arrays.append(array)
    if len(set(dtypes.values())) > 1:
        listed = ", ".join(f"{n} {d}" for n, d in dtypes.items())
        raise TypeError(
            f"inputs must share one floating dtype but have {listed}; cast them alike, "
            f"e.g. x.astype(np.{max(dtypes.values(), key=lambda d: d.itemsize)})"
        )
    dtype = next(iter(dtypes.values())) if dtypes else None
    if dtype is None:
        floats = [a.dtype for a in arrays if np.issubdtype(a.dtype, np.floating)]
        dtype = np.result_type(*floats) if floats else np.dtype(np.float64)
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]


def torch_tensor(name: str, value, hint: str = "torch.as_tensor(x)"):
    """Raise ``TypeError`` unless ``value`` is a ``torch.Tensor``; return it."""
    if not is_tensor(value):
        how = "torch.from_numpy(x)" if isinstance(value, np.ndarray) else hint
        raise TypeError(f"{name} must be a torch.Tensor but is {describe(value)}; convert it with {how}")
    return value


def torch_floats(dtype=None, device=None, **named) -> None:
    """Torch-backend inputs: tensors of one floating dtype on one device (``dtype``/``device`` if given)."""
    first = None
    for name, value in named.items():
        torch_tensor(name, value, f"torch.as_tensor({name}, dtype=torch.float32)")
        if not value.dtype.is_floating_point:
            raise TypeError(
                f"{name} must be a floating tensor but has dtype {value.dtype}; convert it with {name}.float()"
            )
        if dtype is not None and value.dtype != dtype:
            raise TypeError(
                f"{name} has dtype {value.dtype} but the module's parameters are {dtype}; "
                f"convert the input ({name}.to({dtype})) or the module (module.to({value.dtype}))"
            )
        if device is not None and value.device != device:
            raise ValueError(
                f"{name} is on {value.device} but the module's parameters are on {device}; move it with {name}.to({device!r})"
            )
        if first is None:
            first = (name, value)
            continue
        if value.dtype != first[1].dtype:
            raise TypeError(
                f"{name} has dtype {value.dtype} but {first[0]} has dtype {first[1].dtype}; inputs must share "
                f"one floating dtype: cast them alike, e.g. {name}.to({first[1].dtype})"
            )
        if value.device != first[1].device:
            raise ValueError(
                f"{name} is on {value.device} but {first[0]} is on {first[1].device}; move them to one device"
            )


def integer_tensor(name: str, value):
    """A ``torch.Tensor`` of an integer dtype (token ids, lengths), or ``TypeError``."""
    torch_tensor(name, value, f"torch.as_tensor({name})")
    if value.dtype.is_floating_point or value.dtype.is_complex or str(value.dtype) == "torch.bool":
        raise TypeError(f"{name} must hold integers but has dtype {value.dtype}; convert it with {name}.long()")
    return value


def numpy_bool_mask(mask, scores_shape: tuple, layout: str, name: str = "mask"):
    """A NumPy boolean mask that broadcasts to ``scores_shape`` (True = may attend), or ``None``."""
    if mask is None:
        return None
    if is_tensor(mask):
        raise TypeError(
            f"{name} must be a NumPy boolean array but is {describe(mask)}; pass {name}.cpu().numpy() "
            "(the NumPy functions take arrays)"
        )
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(
            f"{name} must be boolean (True = may attend) but has dtype {mask.dtype}; "
            "build it with a comparison, e.g. mask = lengths[:, None] > np.arange(k_len)"
        )
    check_mask_shape(mask.shape, scores_shape, layout, name)
    return mask


def torch_bool_mask(mask, scores_shape: tuple, layout: str, device=None, name: str = "mask"):
    """A torch boolean mask that broadcasts to ``scores_shape`` (True = may attend), or ``None``."""
    if mask is None:
        return None
    if not is_tensor(mask):
        how = "torch.from_numpy(mask)" if isinstance(mask, np.ndarray) else "torch.as_tensor(mask, dtype=torch.bool)"
        raise TypeError(
            f"{name} must be a torch.Tensor of dtype torch.bool but is {describe(mask)}; convert it with {how}"
        )
    if str(mask.dtype) != "torch.bool":
        raise TypeError(
            f"{name} must be boolean (True = may attend) but has dtype {mask.dtype}; "
            "a float mask would be *added* to the scores by PyTorch, which is a different contract"
        )
    if device is not None and mask.device != device:
        raise ValueError(
            f"{name} is on {mask.device} but the scores are on {device}; move it with {name}.to(query.device)"
        )
    check_mask_shape(tuple(mask.shape), tuple(scores_shape), layout, name)
    return mask


# --------------------------------------------------------------------------------- shapes


def broadcast_shapes(*shapes) -> tuple | None:
    """Broadcast shapes exactly as NumPy and torch do; ``None`` if they do not broadcast.

    Per axis (aligned from the right, missing axes count as 1): equal sizes stay, a size 1
    stretches to the other size, *including 0* (a size-1 axis against a size-0 axis gives 0).
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(1, ndim + 1):
        size = 1
        for shape in shapes:
            x = int(shape[-i]) if i <= len(shape) else 1
            if x == size or x == 1:
                continue
            if size != 1:
                return None
            size = x
        out.append(size)
    return tuple(reversed(out))


def check_qkv(q_shape: tuple, k_shape: tuple, v_shape: tuple) -> tuple:
    """Check query ``(..., q_len, d_head)``, key ``(..., k_len, d_head)``, value ``(..., k_len, d_value)``.

    Returns the broadcast batch shape ``...`` of the three. Empty ``q_len``, ``k_len``, ``d_value``
    and batch axes are allowed (a query with no key gets a zero output); ``d_head = 0`` is not
    (the scores divide by ``sqrt(d_head)``).
    """
    for name, shape in (("query", q_shape), ("key", k_shape), ("value", v_shape)):
        if len(shape) < 2:
            raise ValueError(f"{name} must have at least 2 dims (..., len, features) but has shape {_fmt(shape)}")
    if q_shape[-1] != k_shape[-1]:
        raise ValueError(
            f"key has d_head {k_shape[-1]} but query has d_head {q_shape[-1]} "
            f"(query {_fmt(q_shape)}, key {_fmt(k_shape)}): queries and keys are compared by a "
            "dot product, so they need the same feature size"
        )
    if q_shape[-1] == 0:
        raise ValueError(
            f"query and key have d_head 0 (query {_fmt(q_shape)}, key {_fmt(k_shape)}): the scores are "
            "divided by sqrt(d_head), so each query and key needs at least one feature"
        )
    if k_shape[-2] != v_shape[-2]:
        raise ValueError(
            f"value has {v_shape[-2]} positions but key has k_len {k_shape[-2]} "
            f"(key {_fmt(k_shape)}, value {_fmt(v_shape)}): every key needs exactly one value"
        )
    for name, shape in (("key", k_shape), ("value", v_shape)):
        if broadcast_shapes(q_shape[:-2], shape[:-2]) is None:
            raise ValueError(
                f"{name} batch dims {_fmt(shape[:-2])} do not broadcast with query batch dims "
                f"{_fmt(q_shape[:-2])} (query {_fmt(q_shape)}, {name} {_fmt(shape)})"
            )
    batch = broadcast_shapes(q_shape[:-2], k_shape[:-2], v_shape[:-2])
    if batch is None:
        raise ValueError(
            f"key batch dims {_fmt(k_shape[:-2])} and value batch dims {_fmt(v_shape[:-2])} do not broadcast "
            f"together (key {_fmt(k_shape)}, value {_fmt(v_shape)})"
        )
    return batch


def check_mask_shape(mask_shape: tuple, scores_shape: tuple, layout: str, name: str = "mask") -> None:
    """Check that a mask broadcasts against the attention scores without changing their shape.

    ``layout`` names the scores' dims for the message, e.g. ``"(batch, heads, q_len, k_len)"``.
    """
    result = broadcast_shapes(tuple(mask_shape), tuple(scores_shape))
    if result is None or tuple(result) != tuple(scores_shape):
        raise ValueError(
            f"{name} of shape {_fmt(mask_shape)} does not broadcast against attention scores of "
            f"shape {_fmt(scores_shape)} {layout}. A causal mask is (q_len, k_len); a key padding "
            "mask is (batch, 1, 1, k_len) for multi-head scores or (batch, 1, k_len) for one head"
        )


def check_heads(d_model: int, num_heads: int) -> int:
    """Return ``d_head = d_model // num_heads``; raise if a size is not a positive int or does not divide."""
    num_heads = positive_int("num_heads", num_heads)
    d_model = positive_int("d_model", d_model)
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model {d_model} is not divisible by num_heads {num_heads}: each head gets "
            f"d_head = d_model // num_heads features, so choose num_heads among the divisors of {d_model}"
        )
    return d_model // num_heads


def check_mha_mask_ndim(mask_shape: tuple) -> None:
    """Multi-head masks are 2-D ``(q_len, k_len)`` or 4-D ``(batch, heads, q_len, k_len)`` (1s allowed).

    A 3-D ``(batch, q_len, k_len)`` mask would line ``batch`` up with the ``heads`` axis and
    silently mask the wrong rows whenever batch == heads, so it is refused.
    """
    if len(mask_shape) == 3:
        raise ValueError(
            f"mask of shape {_fmt(mask_shape)} is 3-D: against scores (batch, heads, q_len, k_len) "
            "its first axis would line up with heads, not batch. Add the heads axis: "
            "mask[:, None] -> (batch, 1, q_len, k_len)"
        )
    if len(mask_shape) not in (2, 4):
        raise ValueError(
            f"mask of shape {_fmt(mask_shape)} must be 2-D (q_len, k_len) or 4-D "
            "(batch, heads, q_len, k_len), with 1 for any axis it shares"
        )
