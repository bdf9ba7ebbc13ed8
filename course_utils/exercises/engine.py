"""The verdict on one answer: run every case, compare, name the known mistake, refuse delegation.

:func:`judge` is what ``checks.check`` runs. For an :class:`~course_utils.exercises.Exercise` and an answer
it returns a :class:`Verdict`: a status (``passed``, ``wrong``, ``crashed``, ``not_attempted``,
``timed_out``), the misconception it named (or None) and one line for the student, in which every case is
described by its inputs.

How a mistake is named. Each misconception that fits the exercise has a buggy answer: the exercise's
hand-written one (``Exercise.buggy``) or the reference run under the catalogue's patch
(:mod:`course_utils.exercises.patches`), which fits wherever its output differs from the right one. The
outputs are compared cell by cell (a cell is one case, or one named output of one case). A misconception is
named when the answer agrees with its buggy answer on every cell where that buggy answer differs from the
right one; it is named as a partial match ("on case 2 (...) your answer matches ...") when it agrees on
some of them.

How delegation is refused. While the student's own function runs, every public course helper's return
value is recorded (``sys.setprofile``); an answer that is right but whose result a course helper already
returned is refused, whatever the helper's name (``Exercise.allowed`` lists the helpers an exercise means
the answer to call). What a check of another exercise handed back earlier in this kernel (the student's
function or the course's) is a black box: nothing inside it is recorded or forbidden, so lessons build on
earlier regions (:func:`remember_check`, :func:`handed_back_codes`).

The engine never imports a lesson module: it is handed the exercise.

Introduced in notebooks/00_start_here.ipynb.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from course_utils.exercises import compare as comparer
from course_utils.exercises import (
    contract,
    crash_site,
    driven_touches,
    extra_checks,
    integrity,
    mutations,
    patches,
    relations,
    touches,
    traces,
)
from course_utils.exercises import log as check_log
from course_utils.exercises import misconceptions as catalogue
from course_utils.exercises._model import AnswerRefused, Case
from course_utils.exercises.cases import state_dict_problem
from course_utils.exercises.compare import compare, describe, is_array, safe_str, shorten, type_name
from course_utils.exercises.runner import (
    HelperRecorder,
    Probe,
    TimedOut,
    course_defaults,
    hard_stop_after,
    is_stub,
    notebook_state_kept,
    own_codes,
    raises_only_not_implemented,
    seeded,
    stub_methods,
    time_limit,
)

__all__ = [
    "Verdict",
    "Prepared",
    "Fit",
    "judge",
    "prepare",
    "fitting_misconceptions",
    "describe_case",
    "call",
    "crash_signature",
    "helpers_that_compute",
    "remember_check",
    "last_status",
    "handed_back_codes",
    "forget_checks",
    "as_in_a_fresh_kernel",
    "DEFAULT_TIME_LIMIT_S",
]

DEFAULT_TIME_LIMIT_S = 5.0


@dataclass
class Verdict:
    """What a check found: ``status``, the misconception id it named (or None), one line for the student."""

    status: str
    detail: str
    misconception: str | None = None
    helper: str | None = None  # the course helper a refused answer delegated to
    relation: str | None = None  # the relation to the right output that explains every failing case (relations.py)


@dataclass
class Prepared:
    """An exercise's cases, the right outputs, and what its reference called (to skip patches that cannot act)."""

    cases: list
    labels: list
    expected: list
    codes: set = field(default_factory=set)
    names: set = field(default_factory=set)


@dataclass
class Fit:
    """A misconception that fits an exercise: its buggy answer and what that answer gives on each case."""

    id: str
    answer: object
    rows: list  # per case: ("ok", value) or ("raised", exception type)
    source: str  # "declared" or "patch"
    same_as: list = field(default_factory=list)  # derived misconceptions that behave exactly like this one


_PREPARED: dict = {}
_FITS: dict = {}
_LAST_STATUS: dict = {}  # exercise id -> status of its last check in this kernel
_HANDED_BACK: dict = {}  # exercise id -> {id(callable): (callable, ids of its code objects)} that check returned


# ---------------------------------------------------------------------------------------------
# what earlier checks in this kernel said and handed back
# ---------------------------------------------------------------------------------------------


def remember_check(exercise_id: str, status: str, returned) -> None:
    """Record a check's verdict and the callable it handed back (the student's or the course's)."""
    _LAST_STATUS[exercise_id] = status
    kept = _HANDED_BACK.setdefault(exercise_id, {})
    if id(returned) not in kept:
        kept[id(returned)] = (returned, frozenset(id(code) for code in own_codes(returned)))


def last_status(exercise_id: str) -> str | None:
    """The status of the last check of this exercise in this kernel, or None if it was not checked."""
    return _LAST_STATUS.get(exercise_id)


def handed_back_codes(exercise) -> frozenset:
    """Ids of the code objects of every callable that a check of *another* exercise handed back in this kernel.

    The answer may call them freely (06's tiled pass calls the checked ``flash_step``); the exercise's own
    reference is never among them.
    """
    own = own_codes(exercise.reference)
    codes: set = set()
    for exercise_id, kept in _HANDED_BACK.items():
        if exercise_id == exercise.id:
            continue
        for returned, ids in kept.values():
            if returned is not exercise.reference:
                codes |= ids
    return frozenset(codes - {id(code) for code in own})


def forget_checks() -> None:
    """Forget every verdict and handed-back callable (a fresh kernel)."""
    _LAST_STATUS.clear()
    _HANDED_BACK.clear()


@contextlib.contextmanager
def as_in_a_fresh_kernel():
    """Judge as if no check had run in this process (the audit), then restore what earlier checks recorded."""
    saved = dict(_LAST_STATUS), dict(_HANDED_BACK)
    forget_checks()
    try:
        yield
    finally:
        forget_checks()
        _LAST_STATUS.update(saved[0])
        _HANDED_BACK.update(saved[1])


# ---------------------------------------------------------------------------------------------
# cases and the right answers
# ---------------------------------------------------------------------------------------------


def call(exercise, answer, args, *, as_given: bool = False, copies: list | None = None):
    """Run ``answer`` on one case (through the exercise's driver), on a fresh copy of the case.

    With ``as_given`` the modules of the copy are marked as handed in (patches do not act inside them);
    ``copies`` (a list) receives the copy, to see afterwards what the answer changed in place.
    """
    args = copy.deepcopy(args)  # an answer that modifies its input cannot spoil the next one
    if copies is not None:
        copies.append(args)
    with patches.given_suspended(args if as_given else ()):
        if exercise.driver is not None:
            return exercise.driver(answer, *args)
        return answer(*args)


def crash_signature(exc) -> tuple:
    """What makes two crashes the same mistake: the exception type and its words, numbers left out."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    words = re.sub(r"[0-9]+", "", " ".join(text.split()))[:60]
    return type(exc), words


def _touch_recorder(codes: set, names: set):
    def profile(frame, event, arg):
        if patches.running_given():
            return
        if event == "call":
            codes.add(frame.f_code)
        elif event == "c_call":
            names.add(getattr(arg, "__name__", None))

    return profile


def prepare(exercise) -> Prepared:
    """The exercise's cases and right outputs, computed once under the course's own settings."""
    if exercise.id not in _PREPARED:
        cases, labels = [], []
        with course_defaults():
            for item in exercise.make_cases():
                if isinstance(item, Case):
                    cases.append(tuple(item.args))
                    labels.append(item.label)
                else:
                    cases.append(item if isinstance(item, tuple) else (item,))
                    labels.append("")
            codes: set = set()
            names: set = set()
            expected = []
            previous = sys.getprofile()
            sys.setprofile(_touch_recorder(codes, names))
            try:
                for i, args in enumerate(cases):
                    with seeded(i):
                        expected.append(call(exercise, exercise.reference, args, as_given=True))
            finally:
                sys.setprofile(previous)
        _PREPARED[exercise.id] = Prepared(cases, labels, expected, codes, names)
    return _PREPARED[exercise.id]


def _cells(exercise, expected, value):
    """``[(component name, value)]``: one cell per named output, or one for the whole result."""
    names = exercise.output_names
    if names and isinstance(expected, tuple) and len(expected) == len(names):
        if isinstance(value, (tuple, list)) and len(value) == len(names):
            return list(zip(names, value, strict=True))
        return [(name, _UNCOMPARABLE) for name in names]
    return [("result", value)]


class _Uncomparable:
    def __repr__(self):
        return "<not a tuple of the named outputs>"


_UNCOMPARABLE = _Uncomparable()


def _problem(exercise, expected, got, *, reveal=True, equal_nan=False):
    """None if ``got`` is right, else one sentence on the first difference (outputs named as the exercise names them)."""
    names = exercise.output_names
    if names and isinstance(expected, tuple) and len(expected) == len(names):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return f"expected a tuple ({', '.join(names)}) but got {describe(got)}"
        for name, e, g in zip(names, expected, got, strict=True):
            problem = compare(
                e, g, atol=exercise.atol, rtol=exercise.rtol, path=name, equal_nan=equal_nan, reveal=reveal
            )
            if problem:
                return problem
        return None
    return compare(
        expected, got, atol=exercise.atol, rtol=exercise.rtol, path="result", equal_nan=equal_nan, reveal=reveal
    )


def _same(exercise, a, b) -> bool:
    """Two per-cell outcomes behave the same: both values match (NaN equals NaN), or both raised the same type."""
    if a[0] != b[0]:
        return False
    if a[0] == "raised":
        return a[1] == b[1]
    if a[1] is _UNCOMPARABLE or b[1] is _UNCOMPARABLE:
        return False
    with np.errstate(all="ignore"):
        return compare(a[1], b[1], atol=exercise.atol, rtol=exercise.rtol, equal_nan=True) is None


def _row_cells(exercise, expected, row):
    """A case's outcome split into cells: ``{component: ("ok", value) | ("raised", type)}``."""
    if row[0] == "raised":
        return {name: row for name, _ in _cells(exercise, expected, None)}
    return {name: ("ok", value) for name, value in _cells(exercise, expected, row[1])}


# ---------------------------------------------------------------------------------------------
# the misconceptions that fit
# ---------------------------------------------------------------------------------------------


def _outcomes(exercise, answer, prepared):
    rows = []
    with course_defaults():
        for i, args in enumerate(prepared.cases):
            try:
                with seeded(i):
                    rows.append(("ok", call(exercise, answer, args)))
            except Exception as exc:
                rows.append(("raised", crash_signature(exc)))
    return rows


def _touches(patch, prepared) -> bool:
    for target in patch.targets:
        found = patches.resolve(target)
        if found is None:
            continue
        obj = getattr(found[2], "__func__", found[2])
        # a decorated helper (@torch.no_grad(), functools.wraps) is recorded by its own code, not the wrapper's,
        # which every function with that decorator shares
        obj = inspect.unwrap(obj) if callable(obj) else obj
        code = getattr(obj, "__code__", None)
        if code is not None and code in prepared.codes:
            return True
        if code is None and getattr(obj, "__name__", None) in prepared.names:
            return True
    return False


def _rows_differ(exercise, prepared, rows) -> bool:
    for expected, row in zip(prepared.expected, rows, strict=True):
        right = _row_cells(exercise, expected, ("ok", expected))
        got = _row_cells(exercise, expected, row)
        if any(not _same(exercise, right[name], got[name]) for name in right):
            return True
    return False


def _rows_same(exercise, prepared, rows_a, rows_b) -> bool:
    for expected, a, b in zip(prepared.expected, rows_a, rows_b, strict=True):
        cells_a, cells_b = _row_cells(exercise, expected, a), _row_cells(exercise, expected, b)
        if any(not _same(exercise, cells_a[name], cells_b[name]) for name in cells_a):
            return False
    return True


def fitting_misconceptions(exercise) -> list[Fit]:
    """Every misconception that fits the exercise: its declared ones, then the catalogue's patches that change its output.

    A patch whose buggy answer behaves exactly like an earlier fit's on every case is listed in that
    fit's ``same_as`` instead (the declared, more specific one is named).
    """
    if exercise.id in _FITS:
        return _FITS[exercise.id]
    prepared = prepare(exercise)
    fits: list[Fit] = []
    for mid, buggy in exercise.buggy.items():
        catalogue.get(mid)  # a KeyError names a misconception missing from the catalogue
        fits.append(Fit(mid, buggy, _outcomes(exercise, buggy, prepared), "declared"))
    for misconception in catalogue.CATALOGUE:
        patch = misconception.patch
        if patch is None or misconception.id in exercise.buggy or not _touches(patch, prepared):
            continue
        answer = patches.patched(exercise.reference, patch)
        rows = _outcomes(exercise, answer, prepared)
        if not _rows_differ(exercise, prepared, rows):
            continue
        twin = next((f for f in fits if _rows_same(exercise, prepared, f.rows, rows)), None)
        if twin is not None:
            twin.same_as.append(misconception.id)
            continue
        fits.append(Fit(misconception.id, answer, rows, "patch"))
    _FITS[exercise.id] = fits
    return fits


# ---------------------------------------------------------------------------------------------
# describing a case by its inputs
# ---------------------------------------------------------------------------------------------


def _positional_names(fn) -> tuple[list, bool]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [], True
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names, any(p.kind == p.VAR_POSITIONAL for p in params)


def _case_names(exercise, n_args):
    """The case's argument names: the driver's (after the answer) or the reference's; the reference fills a ``*args``."""
    names, open_ended = _positional_names(exercise.driver or exercise.reference)
    if exercise.driver is not None:
        names = names[1:]  # the driver's first parameter is the answer itself
    names = [n for n in names if n != "self"]
    if open_ended or len(names) < n_args:
        answer_names, _ = _positional_names(exercise.reference)
        names += answer_names[len(names) : n_args]
    return (names + [f"arg{i}" for i in range(len(names), n_args)])[:n_args]


def _module_words(module) -> str:
    words = [type(module).__name__]
    details = []
    for attr, label in (("d_model", "d_model"), ("embed_dim", "d_model"), ("num_heads", "heads")):
        value = getattr(module, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and f"{label}=" not in " ".join(details):
            details.append(f"{label}={value}")
    details.append("training" if getattr(module, "training", False) else "eval")
    return f"{words[0]}({', '.join(details)})"


def _value_words(name, value) -> str:
    try:
        if is_array(value):
            shape = tuple(int(s) for s in value.shape)
            integer = str(getattr(value, "dtype", "")).replace("torch.", "").startswith(("int", "uint"))
            if len(shape) == 1 and integer and shape[0] <= 8:
                return f"{name} {[int(v) for v in np.asarray(value.tolist()).reshape(-1)]}"
            if len(shape) == 0:
                return f"{name}={value.item()!r}"
            return f"{name} {shape}"
        if isinstance(value, (bool, int, float, str, np.generic)) or value is None:
            return f"{name}={value!r}"
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(value, torch.nn.Module):
            return f"{name} {_module_words(value)}"
        if callable(value):
            return f"{name}={getattr(value, '__name__', type_name(value))}"
        if isinstance(value, (tuple, list)):
            if 0 < len(value) <= 4 and all(type(v) in (int, float, bool) for v in value):
                return f"{name} {tuple(value)!r}"  # constructor sizes: init_args (3, 5)
            return f"{name} ({len(value)} item{'' if len(value) == 1 else 's'})"
    except Exception:
        pass
    return f"{name} {type_name(value)}"


def describe_case(exercise, index: int) -> str:
    """``"x (2, 3, 5), axis=-1"`` for case ``index`` (0-based), plus its label; empty for a case without inputs."""
    prepared = prepare(exercise)
    args = prepared.cases[index]
    words = ", ".join(_value_words(n, v) for n, v in zip(_case_names(exercise, len(args)), args, strict=True))
    label = prepared.labels[index]
    if label:
        words = f"{words}: {label}" if words else label
    return shorten(words, 160)


def _case(exercise, index: int, n: int) -> str:
    words = describe_case(exercise, index)
    return f"case {index + 1} of {n} ({words})" if words else f"case {index + 1} of {n}"


# ---------------------------------------------------------------------------------------------
# delegation
# ---------------------------------------------------------------------------------------------


def _spec_name(module: str, qualname: str) -> str:
    return f"{module.rsplit('.', 1)[-1]}.{qualname}"


def _allowed(exercise, module: str, qualname: str) -> bool:
    return f"{module}:{qualname}" in exercise.allowed


def _candidates(value):
    yield value
    if isinstance(value, (tuple, list)) and len(value) <= 4:
        yield from value
    if isinstance(value, dict) and len(value) <= 8:  # a helper returning {"previous": ..., "self": ...}
        yield from value.values()


def _could_equal(expected, candidate) -> bool:
    if is_array(expected):
        return is_array(candidate) and tuple(candidate.shape) == tuple(expected.shape)
    if isinstance(expected, (tuple, list)):
        return isinstance(candidate, (tuple, list)) and len(candidate) == len(expected)
    if isinstance(expected, (bool, np.bool_)):
        return isinstance(candidate, (bool, np.bool_))
    if isinstance(expected, (int, float, np.number)):
        return isinstance(candidate, (int, float, np.number)) or (is_array(candidate) and candidate.numel() == 1)
    return candidate is expected


def _delegated_to(exercise, recorder, probe, expected):
    """The course helper whose recorded result is the answer's (or the expected) result, or None."""
    for start, end, result in probe.calls:
        target = expected if exercise.driver is None else result
        for module, qualname, value in recorder.returns[start:end]:
            if _allowed(exercise, module, qualname):
                continue
            for candidate in _candidates(value):
                if candidate is target:
                    return _spec_name(module, qualname)
                if _could_equal(target, candidate) and _problem(exercise, target, candidate) is None:
                    return _spec_name(module, qualname)
    return None


def helpers_that_compute(exercise) -> list[str]:
    """The public course helpers whose result, while the reference runs, already is the case's answer."""
    prepared = prepare(exercise)
    found: list = []
    with course_defaults():
        for i, args in enumerate(prepared.cases):
            recorder = HelperRecorder()
            probe = Probe(exercise.reference, recorder)
            with seeded(i), recorder:
                call(exercise, probe, args)
            name = _delegated_to(exercise, recorder, probe, prepared.expected[i])
            if name and name not in found:
                found.append(name)
    return found


def _forbidden_codes(exercise) -> dict:
    codes = {}
    for spec in exercise.forbidden:
        module_name, _, path = spec.partition(":")
        found = patches.resolve(spec)
        if found is None:
            try:
                __import__(module_name)
            except Exception:
                continue
            found = patches.resolve(spec)
        if found is None:
            continue
        obj = getattr(found[2], "__func__", found[2])
        # a decorated helper (@torch.no_grad(), functools.wraps) is recorded by its own code, not the wrapper's,
        # which every function with that decorator shares
        obj = inspect.unwrap(obj) if callable(obj) else obj
        code = getattr(obj, "__code__", None)
        if code is not None:
            codes[code] = _spec_name(module_name, path.removesuffix(".__init__"))
    return codes


# ---------------------------------------------------------------------------------------------
# the verdict
# ---------------------------------------------------------------------------------------------


def _reread(misconception_id: str) -> str:
    m = catalogue.get(misconception_id)
    return f"{m.name}. Re-read «{m.section}»"


def _where(exercise, prepared, cells, n) -> str:
    """``case 2 of 4 (x (3, 2), axis=0)`` or ``case 1 of 3 (...), its self_mask`` for a set of (case, component)."""
    by_case: dict = {}
    for i, name in sorted(cells):
        by_case.setdefault(i, []).append(name)
    parts = []
    for i, names in by_case.items():
        all_names = [c for c, _ in _cells(exercise, prepared.expected[i], prepared.expected[i])]
        text = _case(exercise, i, n)
        if len(all_names) > 1 and len(names) < len(all_names):
            text += ", its " + " and ".join(names)
        parts.append(text)
    if len(parts) > 2:
        return f"{parts[0]} and {len(parts) - 1} more cases"
    return " and ".join(parts)


def _match(exercise, prepared, student_rows):
    """The best misconception for the cases run: (fit, explained cells, contradicted cells) or None."""
    n_run = len(student_rows)
    wrong = set()
    student_cells = []
    for i, row in enumerate(student_rows):
        expected = prepared.expected[i]
        right = _row_cells(exercise, expected, ("ok", expected))
        got = _row_cells(exercise, expected, row)
        student_cells.append(got)
        wrong |= {(i, name) for name in right if not _same(exercise, right[name], got[name])}
    best = None
    for order, fit in enumerate(fitting_misconceptions(exercise)):
        explained, contradicted = set(), set()
        for i in range(n_run):
            expected = prepared.expected[i]
            right = _row_cells(exercise, expected, ("ok", expected))
            buggy = _row_cells(exercise, expected, fit.rows[i])
            for name in right:
                if _same(exercise, right[name], buggy[name]):
                    continue  # this mistake does not show here
                if _same(exercise, buggy[name], student_cells[i][name]):
                    explained.add((i, name))
                else:
                    contradicted.add((i, name))
        if not explained:
            continue
        score = (len(explained), -len(contradicted), -order)
        if best is None or score > best[0]:
            best = (score, fit, explained, contradicted)
    if best is None:
        return None, wrong
    return best[1:], wrong


def _components(exercise, prepared, i):
    return [c for c, _ in _cells(exercise, prepared.expected[i], prepared.expected[i])]


def _uniform_components(exercise, prepared, cells, n_run):
    """The components S when ``cells`` is exactly S on every case run (S a strict subset), else None."""
    if not cells:
        return None
    names = {c for _, c in cells}
    every = {(i, c) for i in range(n_run) for c in names}
    if cells != every or len(names) >= len(_components(exercise, prepared, 0)):
        return None
    return [c for c in _components(exercise, prepared, 0) if c in names]


def _named(exercise, prepared, student_rows, n):
    """The sentence naming a misconception (full or partial), and its id; ("", None) if none fits."""
    found, wrong = _match(exercise, prepared, student_rows)
    if found is None:
        return "", None
    fit, explained, contradicted = found
    rest = wrong - explained
    if not rest and not contradicted:
        return f"It looks like a known mistake: {_reread(fit.id)}.", fit.id
    n_run = len(student_rows)
    parts = _uniform_components(exercise, prepared, explained, n_run)
    if parts is not None:
        text = f"Your {' and '.join(parts)} matches a known mistake on every case: {_reread(fit.id)}."
        others = _uniform_components(exercise, prepared, contradicted, n_run)
        if others is not None and not rest:
            text += f" Your {' and '.join(others)} does not show it."
    else:
        where = _where(exercise, prepared, explained, n)
        text = f"On {where} your answer matches a known mistake: {_reread(fit.id)}."
        if contradicted and not rest:
            text += f" On {_where(exercise, prepared, contradicted, n)} it does not, so check that part too."
    if rest:
        i = min(i for i, _ in rest)
        text += (
            f" {_where(exercise, prepared, {c for c in rest if c[0] == i}, n).capitalize()} is wrong in another way."
        )
    return text, fit.id


def _stuck_message(exercise, limit):
    def on_stuck(state):
        print(
            f"⌛ {exercise.title}: still running {state.elapsed:.0f} s after its {limit:g} s limit: the answer keeps "
            "catching the stop (a bare `except:` in a loop?). Interrupt the kernel (■); if the cell still does not "
            "finish, restart the kernel.",
            flush=True,
        )

    return on_stuck


def _last_resort(exercise, limit):
    """What the guard process says, and logs, if it must end the kernel: the answer sat in one call too long."""
    message = (
        f"⌛ {exercise.title}: your answer was still running {hard_stop_after(limit):.0f} s after it started (its "
        f"limit is {limit:g} s), inside one long call that Python cannot interrupt (like sum(range(10**10))), so "
        "the check restarted the kernel. Make that call smaller, then run the notebook's cells again from the top."
    )
    try:
        record = json.dumps(
            check_log.build("check", exercise.id, "timed_out", misconception=None, detail=message), ensure_ascii=False
        )
    except Exception:  # the log is never a reason for a check to fail
        record = None
    return message, record, exercise.id


def judge(exercise, answer, *, time_limit_s: float | None = None) -> Verdict:
    """Run ``answer`` on every case of ``exercise``; return the :class:`Verdict`. Never raises for a bad answer.

    A ``BaseException`` the answer raises (``SystemExit``, ``KeyboardInterrupt``) is a crash; the kernel's own
    interrupt (■) still stops the check. What the answer replaced among the functions the check compares with
    is put back (:mod:`course_utils.exercises.integrity`).
    """
    integrity.watch_torch()
    checks_module = sys.modules.get("course_utils.checks")
    if checks_module is not None:
        integrity.watch(checks_module)
    with integrity.interrupts() as interrupted:
        try:
            return _judge(exercise, answer, time_limit_s, interrupted)
        finally:
            integrity.replaced()  # whatever the verdict, the notebook keeps the real functions


def _judge(exercise, answer, time_limit_s, interrupted, _restore=integrity.replaced) -> Verdict:
    # _restore is bound when the engine loads: an answer that rebinds a module's names cannot reach it, and
    # calling it first after each run puts back every watched name (this module's included) before any is read
    name = exercise.title
    limit = time_limit_s if time_limit_s is not None else (exercise.time_limit or DEFAULT_TIME_LIMIT_S)
    hint_call = f'checks.hint("{exercise.id}")'
    if is_stub(answer, exercise.reference):
        return Verdict(
            "not_attempted",
            f"{name}: not attempted yet. Write your code in place of the `...` and run the cell again "
            f"(stuck? {hint_call}).",
        )
    prepared = prepare(exercise)
    n = len(prepared.cases)
    still_stubs = stub_methods(answer) if inspect.isclass(answer) else []
    stubs_note = f" (still the stub: {', '.join(still_stubs)})" if still_stubs else ""
    results: list = []
    first_wrong = None
    delegated = None
    forbidden_codes = _forbidden_codes(exercise)
    opaque = handed_back_codes(exercise)
    last_resort = _last_resort(exercise, limit) if limit and limit > 0 else None
    for i, args in enumerate(prepared.cases):
        recorder = HelperRecorder(forbidden_codes, opaque=opaque)
        probe = Probe(answer, recorder)
        state = None
        copies: list = []
        try:
            with (
                notebook_state_kept(),
                seeded(i),
                np.errstate(all="ignore"),
                recorder,
                touches.forward_watch() as moved,
            ):
                with time_limit(limit, _stuck_message(exercise, limit), last_resort) as state:
                    got = call(exercise, probe, args, copies=copies)
        except TimedOut:
            return Verdict("timed_out", _timed_out(exercise, i, n, limit, state))
        except AnswerRefused as exc:  # the driver's own sentence names what to change
            return Verdict("wrong", f"{name}: on {_case(exercise, i, n)}: {safe_str(exc, 300)}", relation="refused")
        except BaseException as exc:  # sys.exit(), a KeyboardInterrupt the answer raises: a crash too
            _restore()  # what it rebound before raising is put back before anything is read
            if integrity.is_real_interrupt(exc, interrupted):
                raise
            if (
                i == 0
                and raises_only_not_implemented(getattr(answer, "__init__", answer), exc)
                or (i == 0 and raises_only_not_implemented(answer, exc))
            ):
                return Verdict(
                    "not_attempted",
                    f"{name}: not attempted yet. Replace the `raise NotImplementedError` with your code and run the "
                    f"cell again (stuck? {hint_call}).",
                )
            if probe.returned_none:
                return _returned_none(exercise, i, n, stubs_note)
            words = state_dict_problem(exc, f"your {getattr(answer, '__name__', 'module')}")
            if words is not None:  # the course's weights do not fit the student's module: wrong, not a crash
                return Verdict(
                    "wrong", f"{name}: on {_case(exercise, i, n)}: {words}{stubs_note}", relation="weights_do_not_fit"
                )
            return _crashed(exercise, prepared, answer, results, exc, i, n, stubs_note)
        if recorder.called:
            return _forbidden(exercise, recorder.called[0])
        swapped = _restore()  # first: the names read below are the engine's own again
        tampered = _tampered(exercise, recorder, swapped)
        if tampered is not None:
            return tampered
        got = integrity.plain(got)  # judged as its plain data, never by its own __eq__
        if state is not None and state.elapsed > state.seconds:  # it caught the stop, or outran it, and returned
            return Verdict("timed_out", _timed_out(exercise, i, n, limit, state))
        if got is None or probe.returned_none:
            return _returned_none(exercise, i, n, stubs_note)
        results.append(("ok", got))
        with course_defaults():
            problem = _problem(exercise, prepared.expected[i], got, reveal=exercise.reveal)
            kind = _breach_kind(exercise, prepared.expected[i], got) if problem else None
            if problem is None:
                problem, kind = _contract_or_touch(exercise, prepared, i, got, copies, answer)
            if problem is None:
                problem = touches.forward_problem(moved)
                kind = "in_place:module" if problem else None
            if problem is None:
                problem = _raw_return_problem(exercise, prepared, i, probe, answer)
                kind = "contract" if problem else None
            if problem is None:  # an array the driver handed the answer, changed in place (issue 26 §1)
                problem, kind = driven_touches.problem(exercise, prepared.cases[i], i, probe, answer, call)
            if problem is None and delegated is None:
                delegated = _delegated_to(exercise, recorder, probe, prepared.expected[i])
        if problem and first_wrong is None:
            first_wrong = (i, problem, kind)
    if first_wrong is None:
        if delegated:
            return Verdict(
                "wrong",
                f"{name}: your answer gets its result from {delegated}, a course helper that already computes what "
                "this exercise asks you to write. Write it without that helper.",
                helper=delegated,
            )
        further, key = extra_checks.run_all_keyed(
            exercise,
            answer,
            prepared.cases,
            _extra_runner(exercise, answer, limit, interrupted),
            lambda expected, got: _judged(exercise, expected, got),
            lambda path: touches.path_words(
                path, _case_names(exercise, len(prepared.cases[0])), answer, exercise.driver is not None
            ),
            explain=_fresh_explainer(exercise, answer),
        )
        if further is not None:
            return Verdict("wrong", f"{name}: {further}", relation=key)
        return Verdict("passed", f"{name}: all {n} cases passed.")
    i, problem, kind = first_wrong
    with course_defaults():
        sentence, mid = _named(exercise, prepared, results, n)
        sentence, mid, relation = _by_relation(exercise, prepared, answer, results, n, sentence, mid)
    if mid is None and relation is None and kind is not None:
        relation = kind  # the broken promise (type, dtype, an input changed in place) is itself the name
    detail = f"{name}: {_case(exercise, i, n)} is wrong: {problem}."
    if sentence:
        detail = f"{detail} {sentence}"
    return Verdict("wrong", detail + stubs_note, mid, relation=relation)


def _by_relation(exercise, prepared, answer, results, n, sentence, mid):
    """A name only when it explains every failing case (issue 26 §2): the catalogue's, else a relation's.

    Returns ``(sentence, misconception id or None, relation key or None)``. A catalogue match on some cases
    keeps its sentence but names nothing; an output with NaN says where the NaN first appears.
    """
    found, wrong = _match(exercise, prepared, results)
    failing = sorted({i for i, _ in wrong})
    nan_note = ""
    nan_only = bool(failing)
    nan_cases = set()
    for i in failing:
        expected, row = prepared.expected[i], results[i]
        got_nan = row[0] == "ok" and traces.has_nan(row[1]) and not traces.has_nan(expected)
        if got_nan and not nan_note:
            origin = traces.nan_origin(
                lambda i=i: _run_seeded(exercise, answer, prepared.cases[i], i), own_codes(answer)
            )
            nan_note = f" The first NaN appears in {origin}." if origin else ""
        if got_nan and nan_note:
            nan_cases.add(i)  # explained by where its NaN first appears
        nan_only = nan_only and got_nan and traces.all_nan(row[1])
    full = False
    if found is not None:
        fit, explained, contradicted = found
        full = not (wrong - explained) and (
            not contradicted or _uniform_components(exercise, prepared, explained, len(results))
        )  # the same cells fail the same way as under the mistake, NaN included: a fingerprint, not one case
        evidence = {c for c in explained if c[0] not in nan_cases}  # NaN cases are explained by their origin
        rest = {c for c in wrong - explained if c[0] not in nan_cases}
        contradicted = {c for c in contradicted if c[0] not in nan_cases}
        full = full or (bool(evidence) and not rest and not contradicted)
        if full and (wrong - explained) and not (wrong - explained) - {c for c in wrong if c[0] in nan_cases}:
            where = _where(exercise, prepared, {c for c in wrong - explained}, n)
            sentence = f"It looks like a known mistake: {_reread(fit.id)}. On {where} your result has NaN instead."
            mid = fit.id
    if full:  # NaN or not, the same cases fail, the same way, as under the mistake: a fingerprint, not one case
        return sentence + nan_note, mid, None
    if nan_only:  # nothing but NaN, and no mistake fails on exactly these cases: say where the NaN comes from
        return nan_note.strip(), None, None
    triples = [
        relations.Triple(
            _case(exercise, i, n),
            prepared.cases[i],
            prepared.expected[i],
            results[i][1],
            traces.earlier_steps(
                lambda i=i: _run_seeded(exercise, exercise.reference, prepared.cases[i], i, as_given=True),
                own_codes(exercise.reference),
            ),
            i,
        )
        for i in failing
        if results[i][0] == "ok"
    ]
    extra = mutations.finder(
        exercise, lambda fn, args, i: _run_seeded(exercise, fn, args, i, as_given=True), prepared.codes
    )
    explanation = relations.explain(exercise, triples, extra=extra)
    if explanation.named:
        text = explanation.sentence
        if explanation.misconception:
            text += f" It looks like a known mistake: {_reread(explanation.misconception)}."
        return text + nan_note, explanation.misconception, explanation.key
    if sentence:  # a catalogue match on some cases only: said, not named
        return sentence + nan_note, None, None
    return (explanation.sentence + nan_note).strip(), None, None


def _run_seeded(exercise, answer, args, i, *, as_given=False):
    with seeded(i), np.errstate(all="ignore"):
        return call(exercise, answer, args, as_given=as_given)


def _forbidden(exercise, helper) -> Verdict:
    return Verdict(
        "wrong",
        f"{exercise.title}: your answer uses {helper}, which makes this exercise trivial. Write it without that helper.",
        helper=helper,
    )


def _returned_none(exercise, i, n, stubs_note) -> Verdict:
    return Verdict(
        "wrong",
        f"{exercise.title}: on {_case(exercise, i, n)} your function returned None: did you forget `return`?"
        + stubs_note,
        relation="returned_none",
    )


_BACKWARD_CAUSES = frozenset({"in_place_autograd", "graph_cut", "backward_twice"})


def _crashed(exercise, prepared, answer, results, exc, i, n, stubs_note) -> Verdict:
    where = crash_site.crash_words(
        exc,
        answer if not inspect.isclass(answer) else getattr(answer, "__init__", answer),
        own_codes(answer),
        _cells_by_file(),
    )
    found_cause = crash_site.cause(exc)
    if not where and found_cause is not None and found_cause[0] in _BACKWARD_CAUSES:
        where = " (in the backward pass through your answer)"  # autograd raises outside the student's frames
    if isinstance(exc, NotImplementedError) and where:
        detail = (
            f"{exercise.title}: {_case(exercise, i, n)} still reaches a `raise NotImplementedError`{where}; remove it."
        )
    else:
        detail = (
            f"{exercise.title}: {_case(exercise, i, n)} crashed with {type_name(exc)}: {safe_str(exc, 160)}{where}."
        )
    if found_cause is not None and not isinstance(exc, NotImplementedError):
        detail += f" What went wrong: {found_cause[1].rstrip('.')}" + ("" if found_cause[1].endswith("?") else ".")
    rows = [*results, ("raised", crash_signature(exc))]
    with course_defaults():
        found, _ = _match(exercise, prepared, rows)
    mid = None
    if found is not None:
        fit, explained, _contradicted = found
        if (i, _cells(exercise, prepared.expected[i], None)[0][0]) in explained:
            detail += f" A known mistake crashes the same way: {_reread(fit.id)}."
            mid = fit.id
    relation = f"crash:{found_cause[0]}" if found_cause is not None and where else None
    return Verdict("crashed", detail + stubs_note, mid, relation=relation)


def _timed_out(exercise, i, n, limit, state) -> str:
    elapsed = state.elapsed if state is not None else limit
    where = _case(exercise, i, n)
    if state is not None and (state.stuck_reported or state.stops_sent >= 2):
        return (
            f"{exercise.title}: {where} ran for {elapsed:.0f} s and was stopped only then, {limit:g} s being the limit: "
            "it kept catching the stop. Look for a bare `except:` inside a loop."
        )
    if elapsed > limit + max(0.5, 0.1 * limit):  # a Python loop stops within milliseconds; C code only when it returns
        return (
            f"{exercise.title}: {where} ran for {elapsed:.0f} s, far past the {limit:g} s limit, inside one long "
            "library call that cannot be stopped until it returns (like sum(range(10**10))). If a cell hangs like "
            "that, interrupt the kernel (■) or restart it."
        )
    return (
        f"{exercise.title}: {where} ran for more than {limit:g} s and was stopped; look for a loop that never ends "
        "(the kernel is fine)."
    )


# ---------------------------------------------------------------------------------------------
# what an answer is and does besides its values (contract, in-place changes, tampering, more runs)
# ---------------------------------------------------------------------------------------------

_REFERENCE_CHANGES: dict = {}  # exercise id -> per case, the argument paths the course's answer changes itself


def _reference_changes(exercise, prepared, i) -> set:
    found = _REFERENCE_CHANGES.setdefault(exercise.id, {})
    if i not in found:
        copies: list = []
        try:
            with course_defaults(), seeded(i):
                call(exercise, exercise.reference, prepared.cases[i], as_given=True, copies=copies)
            found[i] = touches.changed_paths(prepared.cases[i], copies[0])
        except Exception:
            found[i] = {(k,) for k in range(len(prepared.cases[i]))}  # unknown: name nothing
    return found[i]


def _breach_kind(exercise, expected, got) -> str | None:
    """``"contract"`` when a wrong result also breaks the promise of its type or dtype (its own name), else None."""
    try:
        found = contract.breach(expected, got, declared=exercise.returns, names=exercise.output_names)
    except Exception:
        return None
    return "contract" if found else None


def _contract_or_touch(exercise, prepared, i, got, copies, answer) -> tuple:
    """``(sentence, kind)``: the result's broken promise (type, dtype, device; kind ``"contract"``), or an
    argument changed in place (``"in_place"``); ``(None, None)`` if neither."""
    problem = contract.breach(prepared.expected[i], got, declared=exercise.returns, names=exercise.output_names)
    if problem is not None:
        return problem, "contract"
    if copies:
        problem = touches.in_place_problem(
            prepared.cases[i],
            copies[0],
            _reference_changes(exercise, prepared, i),
            _case_names(exercise, len(prepared.cases[i])),
            answer,
            exercise.driver is not None,
        )
    return problem, ("in_place" if problem else None)


_RAW_RETURNS: dict = {}  # exercise id -> per case, what the course's function itself returned on its first call


def _raw_return_problem(exercise, prepared, i, probe, answer) -> str | None:
    """A driven function that returns another kind of value than the course's does on each call (a tensor where
    the course's returns a number): the driver may convert it, the lesson's own cells do not."""
    if exercise.driver is None or inspect.isclass(answer) or not probe.calls:
        return None
    found = _RAW_RETURNS.setdefault(exercise.id, {})
    if i not in found:
        recorder = Probe(exercise.reference)
        try:
            with course_defaults(), seeded(i), np.errstate(all="ignore"):
                call(exercise, recorder, prepared.cases[i], as_given=True)
            found[i] = recorder.calls[0][2] if recorder.calls else None
        except Exception:
            found[i] = None
    raw = found[i]
    if not isinstance(raw, (bool, int, float)):  # only a number's promise: the kinds a driver converts silently
        return None
    problem = contract.breach(raw, probe.calls[0][2])
    return problem.replace("result:", "what each call of your function returns:", 1) if problem else None


def _fresh_explainer(exercise, answer):
    """``explain(args, expected, got, seed) -> (sentence, key) or None``: a failing fresh case named by its relation
    to the right output (:func:`course_utils.exercises.relations.explain`, mutations included)."""

    def explain(args, expected, got, seed):
        with course_defaults():
            triple = relations.Triple(
                "the fresh case",
                args,
                expected,
                got,
                traces.earlier_steps(
                    lambda: _run_seeded(exercise, exercise.reference, args, seed, as_given=True),
                    own_codes(exercise.reference),
                ),
                seed,
            )
            extra = mutations.finder(
                exercise, lambda fn, a, s: _run_seeded(exercise, fn, a, s, as_given=True), prepare(exercise).codes
            )
            found = relations.explain(exercise, [triple], extra=extra)
        if not found.named:
            return None
        text = found.sentence
        if found.misconception:
            text += f" It looks like a known mistake: {_reread(found.misconception)}."
        return text, found.key

    return explain


def _judged(exercise, expected, got) -> str | None:
    """The comparison and the return contract, as the fixed cases judge them (for the checks after them)."""
    with course_defaults():
        problem = _problem(exercise, expected, got, reveal=exercise.reveal)
    return problem or contract.breach(expected, got, declared=exercise.returns, names=exercise.output_names)


def _tampered(exercise, recorder, swapped) -> Verdict | None:
    """A refusal when the answer replaced a function the check compares with, or switched off its watcher."""
    if swapped:
        shown = ", ".join(f"`{s}`" for s in swapped[:3]) + (f" and {len(swapped) - 3} more" if len(swapped) > 3 else "")
        return Verdict(
            "wrong",
            f"{exercise.title}: your answer replaced {shown}, which the check itself compares with (put back now). "
            "Compute your result without changing NumPy's, torch's or the course's functions.",
        )
    if recorder.switched_off:
        return Verdict(
            "wrong",
            f"{exercise.title}: your answer switched off the check's watcher ({recorder.switched_off}). Remove that "
            "line: the check needs to see which helpers your function calls.",
        )
    return None


def _cells_by_file() -> dict:
    """The file of each function an earlier check handed back (a notebook cell) -> that exercise's title."""
    found = {}
    for exercise_id, kept in _HANDED_BACK.items():
        for returned, _ids in kept.values():
            for code in own_codes(returned):
                found.setdefault(code.co_filename, exercise_id)
    return found


def _extra_runner(exercise, answer, limit, interrupted):
    """``run(answer_or_reference, args, seed)`` for the checks after the cases: the same limits and protections."""
    forbidden_codes = _forbidden_codes(exercise)
    opaque = handed_back_codes(exercise)
    last_resort = _last_resort(exercise, limit) if limit and limit > 0 else None
    restore = _restore_at_load

    def run(fn, args, seed, *, fn_is_answer=True, copies=None):
        if not fn_is_answer:
            with course_defaults(), seeded(seed):
                return ("ok", call(exercise, fn, args, as_given=True, copies=copies))
        recorder = HelperRecorder(forbidden_codes, opaque=opaque)
        probe = Probe(fn, recorder)
        try:
            with notebook_state_kept(), seeded(seed), np.errstate(all="ignore"), recorder:
                with time_limit(limit, _stuck_message(exercise, limit), last_resort):
                    got = call(exercise, probe, args, copies=copies)
        except TimedOut:
            return ("timed_out", None)
        except AnswerRefused as exc:
            return ("refused", exc)
        except BaseException as exc:
            if integrity.is_real_interrupt(exc, interrupted):
                raise
            return ("raised", exc)
        if restore() or recorder.switched_off:
            return ("tampered", None)
        return ("ok", integrity.plain(got))

    return run


_restore_at_load = integrity.replaced
for _module in (comparer, contract, crash_site, extra_checks, integrity, touches, sys.modules[__name__]):
    integrity.watch(_module)
for _name in ("runner", "gradients", "constraints", *extra_checks.WATCHED):
    integrity.watch(sys.modules[f"course_utils.exercises.{_name}"])
