"""Running a student's answer safely: a time limit it cannot escape, the notebook's state left as it was.

The engine (:mod:`course_utils.checking.engine`) calls an answer inside these context managers:

- :func:`time_limit` stops a call that runs too long. A repeating ``SIGALRM`` raises :class:`TimedOut`
  (a ``BaseException``, so ``except Exception`` lets it by), and a watchdog thread injects the same
  exception into the running thread again and again, so an answer that swallows it (a bare
  ``except:`` in a loop), cancels the alarm (``signal.alarm(0)``) or ignores it (``SIG_IGN``) is still
  stopped. One long call into C (``sum(range(10**10))``) cannot be interrupted by anything in the
  process: when it returns, the verdict says how long it ran. If the answer keeps catching the stop,
  the watchdog prints into the cell that the kernel may need a restart. And for an answer that nothing
  inside the process can stop, a small guard process (one per kernel, started with the first check)
  ends the kernel :data:`HARD_STOP_GRACE_S` seconds after the limit, so every check has a verdict in
  bounded time: the guard writes the verdict to the kernel's stderr and the check log, and the
  restarted kernel's next check of that exercise says what happened. Arming and disarming it is
  one write to a pipe per case. ``COURSE_CHECK_HARD_STOP=0`` turns the guard off.
- :func:`seeded` seeds NumPy's and torch's global generators for one call and restores the notebook's.
- :func:`notebook_state_kept` restores torch's default dtype, default device and grad mode, and
  NumPy's error handling, whatever the answer set (``torch.set_default_device("meta")``).
- :func:`course_defaults` computes references and comparisons under the course's own settings
  (float32, CPU, grad on, ``np.errstate(all="ignore")``), whatever the notebook set.
- :class:`HelperRecorder` records, with ``sys.setprofile``, what every public course helper returned
  while the answer ran, so that an answer whose result is a course helper's is found by what it computes.

And for messages: :func:`is_stub` (the untouched ``...`` stub), :func:`stub_methods`,
:func:`raises_only_not_implemented`, :func:`student_line`. Needs only NumPy and the standard library:
torch is looked up in ``sys.modules``, never imported.

Introduced in notebooks/00_start_here.ipynb (the check cells run every answer through it).
"""

from __future__ import annotations

import ast
import contextlib
import dis
import inspect
import os
import sys
import textwrap
import traceback
from pathlib import Path

import numpy as np

from course_utils.checking import call_watch, recorded
from course_utils.checking.compare import shorten

__all__ = [
    "seeded",
    "notebook_state_kept",
    "course_defaults",
    "HelperRecorder",
    "Probe",
    "is_stub",
    "stub_methods",
    "own_codes",
    "raises_only_not_implemented",
    "student_line",
    "PACKAGE_DIR",
    "ENGINE_DIR",
]

PACKAGE_DIR = str(Path(__file__).resolve().parents[1])  # course_utils/
ENGINE_DIR = (
    str(Path(__file__).resolve().parent),  # course_utils/checking/
    # the lessons' exercise content (references, variants, cases): engine-side; their experiments are course modules
    *sorted(
        str(path)
        for path in (Path(PACKAGE_DIR) / "lessons").glob("lesson_[0-9][0-9]/*.py")
        if path.name != "experiments.py"
    ),
)
"""Prefixes (for ``str.startswith``) of the files that are the checker's, not the course's or the student's."""
_CHECKS_FILE = os.path.join(PACKAGE_DIR, "checks.py")
"""Stops sent (2 s of them) that an answer caught before the watchdog tells the student to restart."""
"""Seconds past its limit (at least this, or the limit again if longer) before the guard ends a kernel stuck in one answer."""
"""How long after the guard ended a kernel the next check of that exercise still says why (seconds)."""


# ---------------------------------------------------------------------------------------------
# the notebook's state
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def seeded(seed: int):
    """Seed NumPy's and torch's global generators for one call, then restore the notebook's state."""
    np_state = np.random.get_state()  # noqa: NPY002  (the notebook's global generator, restored below)
    torch = sys.modules.get("torch")
    torch_state = torch.random.get_rng_state() if torch is not None else None
    np.random.seed(seed)  # noqa: NPY002
    if torch is not None:
        torch.manual_seed(seed)
    try:
        yield
    finally:
        np.random.set_state(np_state)  # noqa: NPY002
        torch = sys.modules.get("torch")
        if torch is not None:
            if torch_state is None:  # the answer imported torch: leave its generator as fresh as it was
                torch.manual_seed(torch.initial_seed())
            else:
                torch.random.set_rng_state(torch_state)


def _torch_settings(torch):
    get_device = getattr(torch, "get_default_device", None)
    device = get_device() if get_device is not None else None
    return torch.get_default_dtype(), device, torch.is_grad_enabled()


def _set_torch_settings(torch, settings) -> None:
    dtype, device, grad = settings
    torch.set_default_dtype(dtype)
    if device is not None and hasattr(torch, "set_default_device"):
        # CPU is the default without a device mode; keep it so (a mode slows every op down)
        torch.set_default_device(None if str(device) == "cpu" else device)
    torch.set_grad_enabled(grad)


@contextlib.contextmanager
def notebook_state_kept():
    """Whatever the block sets (torch's default dtype, device, grad mode; NumPy's errors), undo it after."""
    torch = sys.modules.get("torch")
    saved = _torch_settings(torch) if torch is not None else None
    np_errors = np.geterr()
    try:
        yield
    finally:
        np.seterr(**np_errors)
        torch = sys.modules.get("torch")
        if torch is not None and saved is not None:
            with contextlib.suppress(Exception):
                _set_torch_settings(torch, saved)


@contextlib.contextmanager
def course_defaults():
    """The course's own settings for references and comparisons: float32, CPU, grad on, no NumPy errors."""
    with notebook_state_kept(), np.errstate(all="ignore"):
        torch = sys.modules.get("torch")
        if torch is not None:
            _set_torch_settings(torch, (torch.float32, torch.device("cpu"), True))
        yield


# ---------------------------------------------------------------------------------------------
# what the answer called
# ---------------------------------------------------------------------------------------------


def _course_module(filename: str) -> str | None:
    """``course_utils.masks`` for a public course module's file; None for the engine, private modules, others."""
    if not filename.startswith(PACKAGE_DIR) or filename.startswith(ENGINE_DIR) or filename == _CHECKS_FILE:
        return None
    relative = Path(filename).relative_to(PACKAGE_DIR).with_suffix("")
    parts = ["course_utils", *relative.parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if any(part.startswith("_") for part in parts):
        return None
    return ".".join(parts)


class HelperRecorder:
    """Records what public course helpers return, and calls to ``forbidden`` code, while it is ``active``.

    ``returns`` holds ``(module, qualname, value)`` for every public function or method of a public
    ``course_utils`` module (not the exercise engine) that returned while active; ``called`` holds the
    names of forbidden code objects that ran. Install it with ``with recorder:`` around the whole check;
    :class:`Probe` switches ``active`` on only while the student's own function runs.

    ``opaque`` holds the ``id`` of code objects (the functions and methods earlier checks handed back) are black boxes:
    nothing they return, and nothing that runs inside them, is recorded, so an answer that builds on an
    earlier exercise's function is never taken for delegation.
    """

    def __init__(self, forbidden: dict | None = None, limit: int = 20_000, opaque=frozenset()):
        self.forbidden = forbidden or {}  # code object -> readable name
        self.opaque = opaque
        self.returns: list = []
        self.called: list = []
        self.active = False
        self.limit = limit
        self.inside_opaque = 0  # depth of calls into opaque code on the stack
        self._modules: dict = {}
        self._previous = None
        self._trace = None
        self.switched_off = None

    def _module(self, filename):
        if filename not in self._modules:
            self._modules[filename] = _course_module(filename)
        return self._modules[filename]

    def _profile(self, frame, event, arg):
        if not self.active:
            return
        if self.opaque and id(frame.f_code) in self.opaque:
            if event == "call":
                self.inside_opaque += 1
            elif event == "return":
                self.inside_opaque = max(0, self.inside_opaque - 1)
            return
        if self.inside_opaque:
            return
        if event == "call":
            name = self.forbidden.get(frame.f_code)
            if name is not None and name not in self.called:
                self.called.append(name)
        elif event == "return":
            code = frame.f_code
            module = self._module(code.co_filename)
            if module is not None and not code.co_name.startswith("_") and len(self.returns) < self.limit:
                self.returns.append((module, code.co_qualname, arg))

    def __enter__(self):
        self._previous = sys.getprofile()
        self._trace = sys.gettrace()
        self.switched_off = None  # after the block: "sys.setprofile" or "sys.settrace" if the answer changed them
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        if sys.getprofile() != self._profile:
            self.switched_off = "sys.setprofile"
        elif sys.gettrace() is not self._trace:
            self.switched_off = "sys.settrace"
            sys.settrace(self._trace)
        sys.setprofile(self._previous)
        return False


class Probe:
    """Wraps the student's function: switches the recorder on during its calls, keeps what each returned."""

    def __init__(self, fn, recorder: HelperRecorder | None = None):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "answer")  # a driver may name the class it builds
        self.recorder = recorder
        self.returned_none = False
        self.calls: list = []  # (index of the first helper return recorded during the call, end index, result)
        self.touched: list = []  # per watched call, the paths of its arguments it changed in place (call_watch)

    def __call__(self, *args, **kwargs):
        recorder = self.recorder
        start = len(recorder.returns) if recorder is not None else 0
        snap = call_watch.snapshot(args, kwargs) if len(self.touched) < call_watch.MAX_CALLS else None
        if recorder is not None:
            recorder.active = True
            recorder.inside_opaque = 0
        try:
            result = recorded.probed(self.fn, args, kwargs, lambda: self.fn(*args, **kwargs))
        finally:
            if recorder is not None:
                recorder.active = False
        if snap is not None:
            self.touched.append(call_watch.moved(snap))
        if result is None:
            self.returned_none = True
        end = len(recorder.returns) if recorder is not None else 0
        self.calls.append((start, end, result))
        return result


# ---------------------------------------------------------------------------------------------
# reading the answer
# ---------------------------------------------------------------------------------------------

_EMPTY_OPS = {"RESUME", "NOP", "CACHE", "LOAD_CONST", "RETURN_VALUE", "RETURN_CONST", "POP_TOP"}


def _is_super_init(node) -> bool:
    """``super().__init__(...)``: kept outside a class's solution region, it does not count as an attempt."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "__init__"
        and isinstance(node.value.func.value, ast.Call)
        and getattr(node.value.func.value.func, "id", None) == "super"
    )


def _source_says_stub(fn) -> bool | None:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
    body = [stmt for stmt in body if not _is_super_init(stmt)]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is Ellipsis
    )


def _bytecode_says_stub(code) -> bool:
    for instruction in dis.get_instructions(code):
        if instruction.opname not in _EMPTY_OPS:
            return False
        if instruction.opname in ("LOAD_CONST", "RETURN_CONST") and instruction.argval not in (None, Ellipsis):
            return False
    return True


def _function_is_stub(fn) -> bool:
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__name__", "") == "<lambda>":
        return False
    says = _source_says_stub(fn)
    return _bytecode_says_stub(code) if says is None else says


def own_codes(answer) -> set:
    """The code objects of a function, or of every method a class and its bases define (up to ``nn.Module``)."""
    codes = set()
    if inspect.isclass(answer):
        for cls in answer.__mro__:
            if cls is object or f"{cls.__module__}.{cls.__qualname__}" == "torch.nn.modules.module.Module":
                break
            for value in vars(cls).values():
                value = getattr(value, "__func__", value)  # staticmethod, classmethod
                code = getattr(value, "__code__", None)
                if code is not None:
                    codes.add(code)
        return codes
    fn = getattr(answer, "__func__", answer)
    code = getattr(fn, "__code__", None)
    if code is not None:
        codes.add(code)
    return codes


def stub_methods(cls) -> list[str]:
    """The methods a class defines itself whose body is only ``...`` (after a docstring)."""
    return [name for name, value in vars(cls).items() if inspect.isfunction(value) and _function_is_stub(value)]


def _body_consts(code) -> tuple:
    consts = code.co_consts
    if consts and (consts[0] is None or isinstance(consts[0], str)):
        return consts[1:]  # the docstring (or None without one)
    return consts


def _same_code(a, b) -> bool:
    """Two functions with the same instructions, names and constants (docstrings and line numbers aside)."""
    code_a, code_b = getattr(a, "__code__", None), getattr(b, "__code__", None)
    if code_a is None or code_b is None:
        return False
    return (code_a.co_code, code_a.co_names, _body_consts(code_a)) == (
        code_b.co_code,
        code_b.co_names,
        _body_consts(code_b),
    )


def is_stub(answer, reference=None) -> bool:
    """The stub as the student edition ships it: a body that is only ``...`` (optionally after a docstring).

    For a class: every method it defines is such a stub (a class body that is only ``...`` too), except
    methods outside the regions, which the student edition keeps whole: with the exercise's ``reference``
    class given, a method that it defines with the same code counts as given, not as an attempt.
    """
    if inspect.isclass(answer):
        own = {name: value for name, value in vars(answer).items() if inspect.isfunction(value)}
        stubs = [name for name, value in own.items() if _function_is_stub(value)]
        if len(stubs) == len(own):
            return True
        if not stubs or not inspect.isclass(reference):
            return False
        given = vars(reference)
        return all(name in stubs or _same_code(value, given.get(name)) for name, value in own.items())
    return _function_is_stub(answer)


def raises_only_not_implemented(fn, exc) -> bool:
    """The older stub: a body that only raises NotImplementedError (and this is that raise)."""
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(exc, NotImplementedError):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or frames[-1].filename != code.co_filename or frames[-1].name != code.co_name:
        return False
    return not exc.args and set(code.co_names) <= {"NotImplementedError"}


def _is_library(filename: str) -> bool:
    """Course helpers, installed packages and the standard library: not the student's code."""
    return (
        filename.startswith(PACKAGE_DIR)
        or "site-packages" in filename
        or filename.startswith((sys.prefix, sys.base_prefix))
    )


def student_line(exc, fn) -> str:
    """`` (your line N: `code`, inside helper)``: the deepest traceback frame in the student's own code.

    The student's code is the function's own file (a notebook cell) or any other file that is not a
    course helper, an installed package or the standard library (another cell, for instance).
    """
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(ENGINE_DIR) and f.filename != _CHECKS_FILE
    ]
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    own_file = code.co_filename if code is not None else None
    mine = [f for f in frames if f.filename == own_file or not _is_library(f.filename)]
    if not mine:
        return ""
    frame = mine[-1]
    text = f" (your line {frame.lineno}"
    if frame.line:
        text += f": `{shorten(frame.line, 100)}`"
    last = frames[-1]
    if last is not frame:
        text += f", inside {Path(last.filename).stem}.{last.name}"
    return text + ")"
