"""Which known mistake a wrong answer makes, and the words that say it: the catalogue's fitting misconceptions,
a case described by its inputs, a relation that explains every failing case.

Moved out of :mod:`course_utils.checking.engine` whole (issue 26 section 5); the helpers the verdict builds on
got public names (``_case`` is ``case_label``, ``_match`` ``best_fit``, ``_named``
``named_sentence``, ...: the map is in the commit message), nothing else changed.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field

import numpy as np

from course_utils.checking import (
    argument_variants,
    fresh_evidence,
    mutations,
    nan_causes,
    patches,
    relations,
    traces,
)
from course_utils.checking import misconceptions as catalogue
from course_utils.checking.compare import compare, describe, is_array, shorten, type_name
from course_utils.checking.preparing import call, crash_signature, prepare
from course_utils.checking.runner import (
    course_defaults,
    own_codes,
    seeded,
)

__all__ = [
    "Fit",
    "fitting_misconceptions",
    "describe_case",
]


@dataclass
class Fit:
    """A misconception that fits an exercise: its buggy answer and what that answer gives on each case."""

    id: str
    answer: object
    rows: list  # per case: ("ok", value) or ("raised", exception type)
    source: str  # "declared" or "patch"
    same_as: list = field(default_factory=list)  # derived misconceptions that behave exactly like this one


_FITS: dict = {}


def output_cells(exercise, expected, value):
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


def output_problem(exercise, expected, got, *, reveal=True, equal_nan=False):
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
        return {name: row for name, _ in output_cells(exercise, expected, None)}
    return {name: ("ok", value) for name, value in output_cells(exercise, expected, row[1])}


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


def case_arg_names(exercise, n_args):
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
    words = ", ".join(_value_words(n, v) for n, v in zip(case_arg_names(exercise, len(args)), args, strict=True))
    label = prepared.labels[index]
    if label:
        words = f"{words}: {label}" if words else label
    return shorten(words, 160)


def case_label(exercise, index: int, n: int) -> str:
    words = describe_case(exercise, index)
    return f"case {index + 1} of {n} ({words})" if words else f"case {index + 1} of {n}"


# ---------------------------------------------------------------------------------------------
# the verdict
# ---------------------------------------------------------------------------------------------


def reread_words(misconception_id: str) -> str:
    m = catalogue.get(misconception_id)
    return f"{m.name}. Re-read «{m.section}»"


def _where(exercise, prepared, cells, n) -> str:
    """``case 2 of 4 (x (3, 2), axis=0)`` or ``case 1 of 3 (...), its self_mask`` for a set of (case, component)."""
    by_case: dict = {}
    for i, name in sorted(cells):
        by_case.setdefault(i, []).append(name)
    parts = []
    for i, names in by_case.items():
        all_names = [c for c, _ in output_cells(exercise, prepared.expected[i], prepared.expected[i])]
        text = case_label(exercise, i, n)
        if len(all_names) > 1 and len(names) < len(all_names):
            text += ", its " + " and ".join(names)
        parts.append(text)
    if len(parts) > 2:
        return f"{parts[0]} and {len(parts) - 1} more cases"
    return " and ".join(parts)


def best_fit(exercise, prepared, student_rows):
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
    return [c for c, _ in output_cells(exercise, prepared.expected[i], prepared.expected[i])]


def _uniform_components(exercise, prepared, cells, n_run):
    """The components S when ``cells`` is exactly S on every case run (S a strict subset), else None."""
    if not cells:
        return None
    names = {c for _, c in cells}
    every = {(i, c) for i in range(n_run) for c in names}
    if cells != every or len(names) >= len(_components(exercise, prepared, 0)):
        return None
    return [c for c in _components(exercise, prepared, 0) if c in names]


def named_sentence(exercise, prepared, student_rows, n):
    """The sentence naming a misconception (full or partial), and its id; ("", None) if none fits."""
    found, wrong = best_fit(exercise, prepared, student_rows)
    if found is None:
        return "", None
    fit, explained, contradicted = found
    rest = wrong - explained
    if not rest and not contradicted:
        return f"It looks like a known mistake: {reread_words(fit.id)}.", fit.id
    n_run = len(student_rows)
    parts = _uniform_components(exercise, prepared, explained, n_run)
    if parts is not None:
        text = f"Your {' and '.join(parts)} matches a known mistake on every case: {reread_words(fit.id)}."
        others = _uniform_components(exercise, prepared, contradicted, n_run)
        if others is not None and not rest:
            text += f" Your {' and '.join(others)} does not show it."
    else:
        where = _where(exercise, prepared, explained, n)
        text = f"On {where} your answer matches a known mistake: {reread_words(fit.id)}."
        if contradicted and not rest:
            text += f" On {_where(exercise, prepared, contradicted, n)} it does not, so check that part too."
    if rest:
        i = min(i for i, _ in rest)
        text += (
            f" {_where(exercise, prepared, {c for c in rest if c[0] == i}, n).capitalize()} is wrong in another way."
        )
    return text, fit.id


def named_by_relation(exercise, prepared, answer, results, n, sentence, mid):
    """A name only when it explains every failing case (issue 26 §2): the catalogue's, else a relation's.

    Returns ``(sentence, misconception id or None, relation key or None)``. A catalogue match on some cases
    keeps its sentence but names nothing; an output with NaN says where the NaN first appears.
    """
    found, wrong = best_fit(exercise, prepared, results)
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
            sentence = f"It looks like a known mistake: {reread_words(fit.id)}. On {where} your result has NaN instead."
            mid = fit.id
    if full:  # NaN or not, the same cases fail, the same way, as under the mistake: a fingerprint, not one case
        return sentence + nan_note, mid, None
    if (nan_named := nan_causes.named(exercise, answer, prepared, failing, results, nan_note)) is not None:
        return nan_named  # a NaN on every failing case, made the same way on each: its cause is the name
    if nan_only:  # nothing but NaN, and no mistake fails on exactly these cases: say where the NaN comes from
        return nan_note.strip(), None, traces.overflow_key(nan_note, True)
    triples = [
        relations.Triple(
            case_label(exercise, i, n),
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
    if len(triples) == 1:  # one failing case is no fingerprint: the fresh case must show the same, when it fails
        triples += fresh_evidence.fresh_triples(
            exercise, answer, lambda e, g: output_problem(exercise, e, g, reveal=False) is not None
        )
    extra = argument_variants.combined(
        mutations.finder(
            exercise, lambda fn, args, i: _run_seeded(exercise, fn, args, i, as_given=True), prepared.codes
        ),
        argument_variants.finder(exercise, lambda fn, args, i: _run_seeded(exercise, fn, args, i, as_given=True)),
    )
    explanation = relations.explain(exercise, triples, extra=extra)
    if explanation.named:
        text = explanation.sentence
        if explanation.misconception:
            text += f" It looks like a known mistake: {reread_words(explanation.misconception)}."
        return text + nan_note, explanation.misconception, explanation.key
    if sentence:  # a catalogue match on some cases only: said, not named
        return sentence + nan_note, None, None
    return (explanation.sentence + nan_note).strip(), None, traces.overflow_key(nan_note, set(failing) == nan_cases)


def _run_seeded(exercise, answer, args, i, *, as_given=False):
    with seeded(i), np.errstate(all="ignore"):
        return call(exercise, answer, args, as_given=as_given)


def fresh_explainer(exercise, answer):
    """``explain(args, expected, got, seed) -> (sentence, key) or None``: a failing fresh case named by its relation
    to the right output (:func:`course_utils.checking.relations.explain`, mutations included)."""

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
            extra = argument_variants.combined(
                mutations.finder(
                    exercise, lambda fn, a, s: _run_seeded(exercise, fn, a, s, as_given=True), prepare(exercise).codes
                ),
                argument_variants.finder(exercise, lambda fn, a, s: _run_seeded(exercise, fn, a, s, as_given=True)),
            )
            found = relations.explain(exercise, [triple], extra=extra)
        if not found.named:
            return None
        text = found.sentence
        if found.misconception:
            text += f" It looks like a known mistake: {reread_words(found.misconception)}."
        return text, found.key

    return explain
