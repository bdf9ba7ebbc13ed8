"""What no answer can switch off: the functions the check compares with, the delegation watcher, the stop.

The check compares an answer's result with NumPy's, torch's and its own functions. An answer runs in the
student's kernel, so it could replace them (``np.allclose = lambda *a, **k: True``), switch off the profiler
that watches delegation (``sys.setprofile(None)``), or return an object that lies about itself (an ndarray
subclass whose ``__eq__`` says yes). This module makes each of these a named refusal or harmless:

- :func:`watch` records, when the engine loads, every public function of the namespaces the comparison
  reads (``numpy``, ``math``, the comparer, the engine, ``checks``; ``torch`` on the first check that finds it
  loaded). :func:`replaced` lists those an answer changed and puts the originals back, so the comparison that
  follows is made with the captured functions.
- :func:`plain` turns what an answer returned into plain data (ndarray and tensor subclasses become
  ``np.ndarray`` / ``torch.Tensor`` views of the same values; float and int subclasses their values), so the
  comparison never asks the answer's own objects.
- :func:`interrupts` tells the kernel's interrupt (the ■ button, a real ``SIGINT``) from a
  ``KeyboardInterrupt`` the answer raised itself: the first stops the check, the second is a crash.

Needs only NumPy and the standard library; torch is looked up in ``sys.modules``, never imported.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading
from types import ModuleType

import numpy as np

__all__ = [
    "watch",
    "watch_torch",
    "replaced",
    "plain",
    "interrupts",
    "Interrupts",
    "is_real_interrupt",
    "WATCHED",
    "TORCH_COMPARISONS",
    "TENSOR_METHODS",
]

WATCHED: dict = {}
"""``"np.allclose"`` -> (namespace, attribute, the original object), captured when the engine loads."""

_ABSENT = object()  # a watched name the namespace does not define itself
_SHORT = {"numpy": "np", "torch": "torch", "math": "math"}


def _short(module_name: str) -> str:
    return _SHORT.get(module_name, module_name.rsplit(".", 1)[-1])


def watch(namespace, *, only_public: bool = False, names=None) -> None:
    """Capture every function of ``namespace`` (a module or class; only ``names`` when given), to find later
    which of them an answer replaced."""
    name = getattr(namespace, "__name__", "namespace")
    for attribute, value in list(vars(namespace).items()):
        if names is not None:
            if attribute not in names:
                continue
        elif attribute.startswith("__") or (only_public and attribute.startswith("_")):
            continue
        if isinstance(value, ModuleType) or not callable(value):
            continue
        WATCHED.setdefault(f"{_short(name)}.{attribute}", (namespace, attribute, value))
    for attribute in names or ():
        if attribute not in vars(namespace):  # inherited from C: setting it on the class would override it
            WATCHED.setdefault(f"{_short(name)}.{attribute}", (namespace, attribute, _ABSENT))


TORCH_COMPARISONS = ("allclose", "isclose", "equal", "eq", "ne", "isnan", "nan_to_num", "is_tensor", "from_numpy")
"""torch's functions a comparison reads (torch rebinds others itself on import, e.g. ``manual_seed``)."""
TENSOR_METHODS = ("__eq__", "__ne__", "__bool__", "allclose", "equal", "detach", "cpu", "numpy", "double", "tolist")
"""``torch.Tensor``'s methods a comparison reads."""


def watch_torch() -> None:
    """Capture torch's comparisons the first time a check finds torch loaded (the engine never imports it)."""
    torch = sys.modules.get("torch")
    if torch is not None and "torch.allclose" not in WATCHED:
        watch(torch, names=TORCH_COMPARISONS)
        watch(torch.Tensor, names=TENSOR_METHODS)


watch(np, only_public=True)
watch(math)


def replaced() -> list[str]:
    """The watched functions an answer replaced, e.g. ``["np.isclose"]``; each is put back before returning."""
    found = []
    for label, (namespace, attribute, original) in WATCHED.items():
        current = vars(namespace).get(attribute, _ABSENT)
        if current is not original:
            found.append(label)
            with contextlib.suppress(Exception):
                if original is _ABSENT:
                    delattr(namespace, attribute)
                else:
                    setattr(namespace, attribute, original)
    return found


# ---------------------------------------------------------------------------------------------
# plain data
# ---------------------------------------------------------------------------------------------

_NUMPY_SCALARS = (np.generic,)


def _plain_tensor(value, torch):
    if type(value) is torch.Tensor:
        return value
    try:
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.as_subclass(value, torch.Tensor)  # the same values and graph, a plain tensor
    except Exception:
        return value


def plain(value, depth: int = 0):
    """``value`` with every array, tensor and number as plain data; plain objects are returned as they are.

    An ndarray subclass becomes an ``np.ndarray`` view of its data (a masked array stays a masked array of plain
    data and mask), a tensor subclass a ``torch.Tensor`` alias, a float or int subclass its value; tuples, lists
    and dicts are rebuilt only when something inside them changed.
    """
    if depth > 20:
        return value
    kind = type(value)
    if kind in (np.ndarray, float, int, bool, str, type(None)) or isinstance(value, _NUMPY_SCALARS):
        return value
    if isinstance(value, np.ma.MaskedArray):
        data = np.ndarray.view(np.ma.getdata(value), np.ndarray)
        mask = np.ndarray.view(np.ma.getmaskarray(value), np.ndarray)
        return np.ma.MaskedArray(data.copy(), mask=mask.copy())
    if isinstance(value, np.ndarray):
        return np.ndarray.view(value, np.ndarray)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return _plain_tensor(value, torch)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, (tuple, list)):
        items = [
            plain(v, depth + 1) for v in (tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value))
        ]
        if kind in (tuple, list) and all(a is b for a, b in zip(items, value, strict=False)):
            return value
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        items = {k: plain(v, depth + 1) for k, v in dict.items(value)}
        if kind is dict and all(items[k] is dict.__getitem__(value, k) for k in items):
            return value
        return items
    return value


# ---------------------------------------------------------------------------------------------
# the kernel's interrupt, told apart from a KeyboardInterrupt the answer raises
# ---------------------------------------------------------------------------------------------


class Interrupts:
    """Whether a real ``SIGINT`` arrived while the block ran."""

    def __init__(self):
        self.real = False


@contextlib.contextmanager
def interrupts():
    """Install a ``SIGINT`` handler that notes a real interrupt, then does what the notebook's handler does."""
    state = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    try:
        previous = signal.getsignal(signal.SIGINT)
    except (ValueError, OSError):
        yield state
        return

    def on_interrupt(signum, frame):
        if previous is signal.SIG_IGN:
            return  # the notebook ignores interrupts: so does the check
        state.real = True
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, on_interrupt)
    except (ValueError, OSError):
        yield state
        return
    try:
        yield state
    finally:
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)


def is_real_interrupt(exc: BaseException, state: Interrupts | None) -> bool:
    """A ``KeyboardInterrupt`` that the kernel's interrupt caused (it stops the check), not one the answer raised."""
    return isinstance(exc, KeyboardInterrupt) and state is not None and state.real
