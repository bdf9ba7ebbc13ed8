"""Values as data: what the recorded checks store (JSON and arrays, never a pickle) and the digest of an input.

The published student edition checks answers from recorded data (:mod:`course_utils.checking.recorded`): each
value the course's code returned is stored as JSON, with its arrays and tensors in a ``.npz`` file read with
``allow_pickle=False`` (a pickle is code). :func:`digest` names an input by its content, so a call is found again
by what it was given.

>>> arrays = []
>>> data = encode((1, 2.5, float("nan"), "x"), arrays)
>>> decode(data, arrays)[:2]
(1, 2.5)
>>> digest((np.zeros(2),)) == digest((np.zeros(2),)) != digest((np.ones(2),))
True

Introduced in notebooks/00_start_here.ipynb (the published edition's checks read it).
"""

from __future__ import annotations

import builtins
import hashlib
import importlib
import inspect
import json
import math
import sys

import numpy as np

from course_utils.checking.model import Case

__all__ = ["Unrecordable", "encode", "decode", "digest", "exception_type", "function_name", "resolve"]


class Unrecordable(TypeError):
    """A value the data format cannot hold (a function, a module, an object array); names its type."""


def _torch():
    return sys.modules.get("torch")


def _is_tensor(value) -> bool:
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def _plain_array(value) -> np.ndarray:
    if value.dtype.hasobject:
        raise Unrecordable(f"an array of Python objects (dtype {value.dtype}) cannot be stored as data")
    return np.array(value, copy=True, order="C")  # not ascontiguousarray: it makes a 0-d array 1-d


def encode(value, arrays: list):
    """``value`` as JSON-able data; its arrays are appended to ``arrays`` and named by their index."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and type(value) is int:
        return value
    if isinstance(value, float) and type(value) is float:
        return value if math.isfinite(value) else {"f": repr(value)}
    if isinstance(value, Case):
        return {"C": [encode(a, arrays) for a in value.args], "label": value.label}
    if isinstance(value, tuple) and type(value) is tuple:
        return {"T": [encode(v, arrays) for v in value]}
    if isinstance(value, list) and type(value) is list:
        return {"L": [encode(v, arrays) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = sorted((encode(v, arrays) for v in value), key=lambda d: json.dumps(d, sort_keys=True))
        return {"S" if isinstance(value, set) else "FS": items}
    if isinstance(value, dict) and type(value) is dict:
        return {"D": [[encode(k, arrays), encode(v, arrays)] for k, v in value.items()]}
    if isinstance(value, np.ndarray) and type(value) is np.ndarray:
        arrays.append(_plain_array(value))
        return {"a": len(arrays) - 1}
    if isinstance(value, np.generic):
        arrays.append(_plain_array(np.asarray(value)))
        return {"s": len(arrays) - 1}
    if _is_tensor(value) and type(value) is _torch().Tensor:
        if value.device.type != "cpu" or value.is_sparse:
            raise Unrecordable(f"a {value.device.type} or sparse tensor is not stored as data")
        try:
            array = value.detach().numpy().copy()
        except (TypeError, RuntimeError) as exc:  # bfloat16 and friends have no NumPy dtype
            raise Unrecordable(f"a tensor of dtype {value.dtype} cannot be stored as data") from exc
        arrays.append(_plain_array(array))
        return {"t": len(arrays) - 1, "grad": bool(value.requires_grad)}
    if isinstance(value, type) and issubclass(value, BaseException):
        return {"E": f"{value.__module__}:{value.__qualname__}"}
    if inspect.isfunction(value):
        return {"fn": function_name(value)}
    raise Unrecordable(f"a value of type {type(value).__module__}.{type(value).__qualname__} is not stored as data")


def function_name(fn) -> str:
    """``"module:qualname"`` of a course function a case hands in (an attention function to test), stored by its
    name: it must be importable by that name from a module the published edition keeps (never an exercises
    module, which the data replaces)."""
    module, qualname = getattr(fn, "__module__", "") or "", fn.__qualname__
    if "<" in qualname or not module.startswith("course_utils.") or module.endswith(".exercises"):
        raise Unrecordable(f"the function {module}.{qualname} is not stored as data (only by name, from a kept module)")
    try:
        found = resolve(f"{module}:{qualname}")
    except (ImportError, AttributeError):
        found = None
    if found is not fn:
        raise Unrecordable(f"the function {module}.{qualname} cannot be found again by its name")
    return f"{module}:{qualname}"


def resolve(name: str):
    """The object ``"module:qualname"`` names (an import, then attributes)."""
    module, _, qualname = name.partition(":")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def exception_type(name: str) -> type:
    """The exception class ``"module:qualname"`` names; ``RuntimeError`` when it cannot be found."""
    module, _, qualname = name.partition(":")
    try:
        found = builtins if module == "builtins" else importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return RuntimeError
    return found if isinstance(found, type) and issubclass(found, BaseException) else RuntimeError


def decode(data, arrays):
    """The value :func:`encode` stored; arrays are fresh copies (changing one never changes the record)."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):  # only inside the containers below
        return [decode(v, arrays) for v in data]
    (tag,) = [k for k in data if k != "label" and k != "grad"]
    body = data[tag]
    if tag == "f":
        return float(body)
    if tag == "C":
        return Case([decode(v, arrays) for v in body], data.get("label", ""))
    if tag == "T":
        return tuple(decode(v, arrays) for v in body)
    if tag == "L":
        return [decode(v, arrays) for v in body]
    if tag == "S":
        return {decode(v, arrays) for v in body}
    if tag == "FS":
        return frozenset(decode(v, arrays) for v in body)
    if tag == "D":
        return {decode(k, arrays): decode(v, arrays) for k, v in body}
    if tag == "a":
        return np.array(arrays[body], copy=True)
    if tag == "s":
        return np.asarray(arrays[body])[()]
    if tag == "t":
        import torch

        tensor = torch.from_numpy(np.array(arrays[body], copy=True))
        return tensor.requires_grad_(True) if data.get("grad") else tensor
    if tag == "E":
        return exception_type(body)
    if tag == "fn":
        return resolve(body)
    raise ValueError(f"data: expected a value written by recorded_values.encode but got the tag {tag!r}")


def _feed(h, value) -> None:
    if isinstance(value, np.ndarray) or isinstance(value, np.generic) or _is_tensor(value):
        grad = ""
        if _is_tensor(value):
            grad = f"grad={bool(value.requires_grad)}"
            value = value.detach().cpu().numpy()
        array = np.array(np.asarray(value), order="C")  # a copy; 0-d stays 0-d
        if array.dtype.hasobject:
            raise Unrecordable(f"an array of Python objects (dtype {array.dtype}) has no digest")
        h.update(f"<array {array.dtype.str} {array.shape} {grad}>".encode())
        h.update(array.tobytes())
        return
    if isinstance(value, (tuple, list)):
        h.update(f"<{type(value).__name__} {len(value)} {getattr(value, 'label', '')}>".encode())
        for item in value:
            _feed(h, item)
        return
    if isinstance(value, dict):
        h.update(f"<dict {len(value)}>".encode())
        for k, v in value.items():
            _feed(h, k)
            _feed(h, v)
        return
    if isinstance(value, (set, frozenset)):
        h.update(f"<set {len(value)}>".encode())
        for part in sorted(digest(v) for v in value):
            h.update(part.encode())
        return
    if value is None or isinstance(value, (bool, int, float, str)):
        h.update(f"<{type(value).__name__} {value!r}>".encode())
        return
    if inspect.isfunction(value):
        h.update(f"<function {function_name(value)}>".encode())
        return
    raise Unrecordable(f"a value of type {type(value).__module__}.{type(value).__qualname__} has no digest")


def digest(value) -> str:
    """A sha256 of ``value``'s content (types, dtypes, shapes and bytes): equal inputs, equal digests."""
    h = hashlib.sha256()
    _feed(h, value)
    return h.hexdigest()[:32]
