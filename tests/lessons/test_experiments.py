"""course_utils.lessons: each experiment written once, run by its lesson and by benchmarks/claims.py.

- a claim's ``uses`` are experiments of ``course_utils.lessons.lesson_NN.experiments`` that its lesson's notebook calls
  (read from the notebook's code cells; a control the lesson does not run is marked ``control=True``);
- a claim's ``measure`` calls experiments only through ``run(fn, ...)``, and only those it declares;
- ``builds`` are the functions the checkpoint CLI calls to write the shipped files;
- ``benchmarks/claims.py`` is a runner: it trains, times and draws nothing itself;
- the import rule of ``course_utils/lessons/claims.py``;
- ``Claim`` refuses a malformed claim; ``Memo`` runs a call once and refuses undeclared functions.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import re
from pathlib import Path

import pytest

from course_utils.checking.claim import Claim, Memo
from course_utils.lessons import claims
from course_utils.lessons.claims import all_claims

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "course_utils"
LESSONS = PACKAGE / "lessons"
EXPERIMENTS = sorted(LESSONS.glob("lesson_[0-9][0-9]/experiments.py"))
NOTEBOOKS = ROOT / "notebooks"
CLAIMS_SCRIPT = ROOT / "benchmarks" / "claims.py"
CLAIMS = all_claims()


# ---- reading the lessons ----------------------------------------------------------------------------------------


def _notebook_paths(lesson: str) -> list[Path]:
    if lesson == "guide":
        return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    return sorted(NOTEBOOKS.glob(f"{lesson}_*.ipynb"))


def _code(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    lines = []
    for cell in cells:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            lines += [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def called_names(lesson: str) -> set[str]:
    """``{"lesson_07.train_gru", ...}``: every ``lesson_NN.fn(...)`` call in the code cells of the lesson."""
    calls = set()
    for path in _notebook_paths(lesson):
        for node in ast.walk(ast.parse(_code(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                base = node.func.value
                if isinstance(base, ast.Name) and claims.LESSON_MODULE.match(base.id):
                    calls.add(f"{base.id}.{node.func.attr}")
    return calls


def _qualified(fn) -> str:
    return f"{fn.__module__.split('.')[-2]}.{fn.__name__}"


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.name for c in CLAIMS])
def test_claim_runs_what_its_lesson_runs(claim):
    calls = called_names(claim.lesson)
    for fn in claim.uses:
        assert fn.__module__.startswith("course_utils.lessons.lesson_"), (claim.name, fn)
        if not claim.control:
            assert _qualified(fn) in calls, (
                f"{claim.name} measures {fn.__name__}, which {claim.lesson}'s notebook never calls"
            )


def test_called_names_reads_calls_only():
    source = 'x = lesson_07.train_gru(seed=0)\nf = lesson_07.exposure_bias\nlesson_08.mirror_band(m)["mirror"]\n'
    names = {
        f"{n.func.value.id}.{n.func.attr}"
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
    }
    assert names == {"lesson_07.train_gru", "lesson_08.mirror_band"}


# ---- the registry ------------------------------------------------------------------------------------------------


def test_every_lesson_module_is_collected_and_claims_are_named_once():
    files = sorted(p.parent.name for p in EXPERIMENTS)
    assert [m.__name__.split(".")[-2] for m in claims.lesson_modules()] == files
    assert {"lesson_05", "lesson_06", "lesson_07", "lesson_08"} <= set(files)
    names = [c.name for c in CLAIMS]
    assert len(names) == len(set(names))
    for module in claims.lesson_modules():
        lesson = module.__name__.split(".")[-2][-2:]
        for claim in module.CLAIMS:
            assert claim.lesson in (lesson, "guide"), claim.name
            for fn in claim.uses:
                assert fn.__module__ == module.__name__, f"{claim.name} uses {fn.__module__}.{fn.__name__}"
                assert getattr(module, fn.__name__) is fn, f"{claim.name}: {fn.__name__} is not module-level"


def test_seeded_experiments_default_to_the_lessons_seed():
    for claim in CLAIMS:
        for fn in claim.uses:
            parameters = inspect.signature(fn).parameters
            if "seed" in parameters:
                assert parameters["seed"].default == 0, f"{_qualified(fn)}: seed must default to 0 (the lesson's run)"


# ---- measure calls only what it declares -------------------------------------------------------------------------


def _module_tree(module) -> ast.Module:
    return ast.parse(Path(module.__file__).read_text(encoding="utf-8"))


def _measure_node(claim, tree: ast.Module):
    """The lambda or def of ``claim.measure`` in its module's source, found by its first line."""
    line = claim.measure.__code__.co_firstlineno
    for node in ast.walk(tree):
        if isinstance(node, (ast.Lambda, ast.FunctionDef)) and node.lineno == line:
            if [a.arg for a in node.args.args] == ["seed", "run"]:
                return node
    raise AssertionError(f"{claim.name}: measure must be a lambda or def (seed, run) in its lesson module")


def _resolve(node, namespace: dict):
    if isinstance(node, ast.Name):
        return namespace.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, namespace)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def measure_violations(claim, module) -> list[str]:
    """What ``claim.measure`` calls other than ``run(<a function in uses or builds>, ...)`` and plain builtins."""
    node = _measure_node(claim, _module_tree(module))
    namespace = vars(module)
    problems = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        if isinstance(call.func, ast.Name) and call.func.id == "run":
            target = _resolve(call.args[0], namespace) if call.args else None
            if not any(target is fn for fn in claim.allowed):
                problems.append(f"run({ast.unparse(call.args[0]) if call.args else ''}) is not in uses or builds")
            continue
        called = _resolve(call.func, namespace)
        if isinstance(call.func, ast.Name) and called is getattr(builtins, call.func.id, None):
            continue  # min, all, sorted, ...
        if called is not None and (inspect.isfunction(called) or inspect.isclass(called) or inspect.ismodule(called)):
            problems.append(f"calls {ast.unparse(call.func)} directly (go through run(...))")
        elif isinstance(call.func, ast.Attribute) and inspect.ismodule(_resolve(call.func.value, namespace)):
            problems.append(f"calls {ast.unparse(call.func)} directly (go through run(...))")
    return problems


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.name)
def test_measure_calls_only_what_it_declares(claim):
    module = inspect.getmodule(claim.uses[0])
    assert not measure_violations(claim, module), (claim.name, measure_violations(claim, module))


def test_measure_checker_catches_a_direct_call_and_an_undeclared_function(tmp_path, monkeypatch):
    source = """
from course_utils.checking.claim import Claim
from course_utils import heads


def a(seed=0):
    return {"x": 1}


def b(seed=0):
    return {"x": 2}


GOOD = Claim("05.good", "05", "t", "s", (a,), lambda seed, run: {"x": max(run(a, seed)["x"], 0)}, holds=bool)
DIRECT = Claim("05.direct", "05", "t", "s", (a,), lambda seed, run: a(seed), holds=bool)
OTHER = Claim("05.other", "05", "t", "s", (a,), lambda seed, run: run(b, seed), holds=bool)
MODULE = Claim("05.module", "05", "t", "s", (a,), lambda seed, run: {"h": heads.max_entropy(4)}, holds=bool)
"""
    path = tmp_path / "fake_lesson.py"
    path.write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    fake = importlib.import_module("fake_lesson")
    assert measure_violations(fake.GOOD, fake) == []
    assert measure_violations(fake.DIRECT, fake) == ["calls a directly (go through run(...))"]
    assert measure_violations(fake.OTHER, fake) == ["run(b) is not in uses or builds"]
    assert measure_violations(fake.MODULE, fake) == ["calls heads.max_entropy directly (go through run(...))"]


# ---- builds, the runner, guide claims ----------------------------------------------------------------------------


def _functions_called_by_checkpoint_cli() -> set[str]:
    tree = ast.parse((PACKAGE / "reversal" / "checkpoints.py").read_text(encoding="utf-8"))
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    return {
        n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        for n in ast.walk(main)
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))
    }


def test_builds_are_what_made_the_shipped_files():
    called = _functions_called_by_checkpoint_cli()
    assert "train_pretrained" in called  # the CLI trains through the function claims may rebuild with
    for claim in CLAIMS:
        for fn in claim.builds:
            assert fn.__module__ == "course_utils.reversal.checkpoints" and fn.__name__ in called, (
                f"{claim.name} rebuilds with {fn.__module__}.{fn.__name__}, which the checkpoint CLI "
                "(python -m course_utils.reversal.checkpoints) does not call: the claim would certify other files"
            )


FORBIDDEN_IN_RUNNER = {
    ("training", "train"),
    ("training", "evaluate"),
    ("timing", "min_time"),
    ("role_task", "train_role_model"),
    ("heads", "train_role_model"),
    ("torch", "randn"),
    ("torch", "manual_seed"),
    ("env", "set_seed"),
    ("checkpoints", "build_model"),
}


def test_claims_script_runs_no_experiment_of_its_own():
    tree = ast.parse(CLAIMS_SCRIPT.read_text(encoding="utf-8"))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in FORBIDDEN_IN_RUNNER or (
                node.value.id in ("np", "numpy") and node.attr == "random"
            ):
                problems.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
            if node.value.id == "sys" and node.attr == "path":
                problems.append(f"line {node.lineno}: sys.path (import the installed package)")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module.startswith("course_utils") and not module.startswith(
                    ("course_utils.lessons", "course_utils.checking.claim")
                ):
                    problems.append(f"line {node.lineno}: imports {module} (claims come from course_utils.lessons)")
                if module.split(".")[0] in {"head_roles", "reversal", "attention", "retrieval", "benchmarks"}:
                    problems.append(f"line {node.lineno}: imports {module}")
    assert not problems, problems


def test_guide_claims_are_controls_or_lesson_experiments():
    every_lesson = called_names("guide")
    for claim in (c for c in CLAIMS if c.lesson == "guide"):
        assert claim.control or all(_qualified(fn) in every_lesson for fn in claim.uses), claim.name


# ---- the import rule ---------------------------------------------------------------------------------------------


def _imported_modules(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
            found.append((node.module, node.lineno))
    return found


def test_nothing_in_the_package_imports_experiments():
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in PACKAGE.rglob("*.py")
        if path not in EXPERIMENTS and path != LESSONS / "claims.py"
        for module, line in _imported_modules(path)
        if module.endswith(".experiments")
        or ".experiments." in module
        or module.startswith("course_utils.lessons.claims")
    ]
    assert not offenders, offenders


NOT_FOR_EXPERIMENTS = ("checks", "grading", "hub_client")


def test_experiments_import_lesson_modules_only_and_never_each_other():
    offenders = []
    for path in EXPERIMENTS:
        for module, line in _imported_modules(path):
            parts = module.split(".")
            if parts[0] == "benchmarks" or module.startswith("head_roles"):
                offenders.append(f"{path.name}:{line} imports {module}")
            if parts[0] != "course_utils" or len(parts) < 2:
                continue
            if parts[1] in NOT_FOR_EXPERIMENTS:
                offenders.append(f"{path.name}:{line} imports {module}")
            if parts[1] == "checking" and ".".join(parts[:3]) != "course_utils.checking.claim" and len(parts) > 2:
                offenders.append(f"{path.name}:{line} imports the checking engine ({module})")
            if parts[1] == "lessons" and len(parts) > 2 and module != "course_utils.lessons.claims":
                offenders.append(f"{path.name}:{line} imports a lesson's content ({module})")
    assert not offenders, offenders


def test_the_import_rule_is_written_where_it_applies():
    doc = claims.__doc__
    for words in ("nothing else in ``course_utils`` imports ``experiments``", "never imports another lesson's"):
        assert words in doc


# ---- Claim and Memo ----------------------------------------------------------------------------------------------


def _fn(seed=0):
    return {"x": seed}


def test_claim_refuses_malformed_claims():
    ok = {"name": "05.x", "lesson": "05", "text": "t", "source": "s", "uses": (_fn,), "measure": lambda s, r: {}}
    Claim(**ok, holds=bool)
    Claim(**ok | {"name": "guide.x", "lesson": "guide"}, holds_over=all)
    Claim(**ok | {"lesson": "guide"}, holds=bool)  # a guide claim named after the lesson it is about
    for change, error, words in [
        ({}, ValueError, "exactly one of holds"),
        ({"holds": bool, "holds_over": all}, ValueError, "exactly one of holds"),
        ({"holds": bool, "name": "leak"}, ValueError, "must look like '07.leak'"),
        ({"holds": bool, "lesson": "09"}, ValueError, "lesson must be one of"),
        ({"holds": bool, "lesson": "06"}, ValueError, "must start with its lesson"),
        ({"holds": bool, "uses": ()}, ValueError, "at least one experiment"),
        ({"holds": bool, "uses": _fn}, TypeError, "uses must be a tuple of functions"),
        ({"holds": bool, "builds": ("gru",)}, TypeError, "every entry of builds must be a function"),
        ({"holds": bool, "measure": 3}, TypeError, "measure must be a function"),
        ({"holds": bool, "text": " "}, ValueError, "text must be a non-empty string"),
        ({"holds": bool, "quick": 1}, TypeError, "quick must be True or False"),
    ]:
        with pytest.raises(error, match=words):
            Claim(**ok | change)


def test_a_rate_claim_is_judged_over_seeds():
    rate = Claim("05.r", "05", "t", "s", (_fn,), lambda seed, run: run(_fn, seed), holds_over=lambda vs: len(vs) > 2)
    per_seed = Claim("05.p", "05", "t", "s", (_fn,), lambda seed, run: run(_fn, seed), holds=lambda v: v["x"] > 0)
    assert rate.over_seeds and not per_seed.over_seeds
    assert rate.allowed == (_fn,)


def test_memo_runs_each_call_once_and_refuses_undeclared_functions():
    calls = []

    def experiment(seed=0, *, width=4, sizes=(1,)):
        calls.append((seed, width, sizes))
        return {"seed": seed}

    def other(seed=0):
        return {}

    memo = Memo()
    claim = Claim("05.m", "05", "t", "s", (experiment,), lambda seed, run: run(experiment, seed), holds=bool)
    run = memo.restricted(claim)
    assert run(experiment, 0) is run(experiment, 0)
    run(experiment, 0, width=8)
    run(experiment, 0, sizes=[1, 2])  # a list argument: keyed by its content
    run(experiment, 0, sizes=[1, 2])
    run(experiment, 1)
    assert calls == [(0, 4, (1,)), (0, 8, (1,)), (0, 4, [1, 2]), (1, 4, (1,))]
    assert len(memo) == 4 and memo.calls == 4
    with pytest.raises(ValueError, match="not in its uses or builds"):
        run(other, 0)
    with pytest.raises(TypeError, match="needs a function first"):
        memo("experiment", 0)
    memo.clear()
    run(experiment, 0)
    assert len(calls) == 5


def test_memo_keys_unhashable_objects_by_identity():
    seen = []

    def measure_model(model):
        seen.append(model)
        return len(seen)

    memo = Memo()
    a, b = {"weights": [1]}, {"weights": [1]}  # equal content: dicts are keyed by content
    assert memo(measure_model, a) == memo(measure_model, b) == 1

    class Unhashable:
        __hash__ = None

    x, y = Unhashable(), Unhashable()
    assert memo(measure_model, x) == 2 and memo(measure_model, x) == 2 and memo(measure_model, y) == 3


def test_claim_names_follow_the_lesson_prefix():
    for claim in CLAIMS:
        assert re.match(r"^(\d\d|guide)\.[a-z0-9_]+$", claim.name), claim.name
        assert claim.lesson == "guide" or claim.name[:2] == claim.lesson
