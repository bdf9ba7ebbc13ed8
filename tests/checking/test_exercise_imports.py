"""The exercise system's import rules: one way, no cycles, no private names across modules.

Read from the source (ast), not by importing: a lesson's exercises import ``model``, ``cases``, the course's own
modules and earlier lessons' exercises, never the engine (a lesson's ``mistakes.py`` may import ``patches``); the
engine never imports a lesson module (it is handed the exercise); ``checks`` is the only module lessons call; no module imports another's private names; the
import graph of ``course_utils.checking.registry`` and ``course_utils.checks`` has no cycle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "course_utils"
CHECKING = PACKAGE / "checking"
LESSONS = PACKAGE / "lessons"
CONTENT = sorted(LESSONS.glob("lesson_[0-9][0-9]/exercises.py")) + sorted(LESSONS.glob("lesson_[0-9][0-9]/mistakes.py"))
FILES = sorted(CHECKING.glob("*.py")) + CONTENT + [PACKAGE / "checks.py"]
LESSON = re.compile(r"^lesson_\d\d$")
ENGINE = {"engine", "runner", "compare", "patches", "misconceptions", "predictions", "hints", "log", "audit"}


def _short(module: str) -> str:
    """``lesson_02`` for a lesson's content (``course_utils.lessons.lesson_02.exercises``, ``...mistakes``)."""
    parts = module.split(".")
    content = parts[-1] in ("exercises", "mistakes") and len(parts) > 2 and LESSON.match(parts[-2])
    return parts[-2] if content else parts[-1]


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, str | None, int]]:
    """(module, name or None, line) of every import in the file, at any depth (function-level ones too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, alias.name, node.lineno) for alias in node.names]
    return found


def _targets(module: str, name: str | None) -> list[str]:
    """The course modules an import statement loads: ``from course_utils.checking.registry import engine`` -> engine."""
    if not module.startswith("course_utils"):
        return []
    if name is not None and (PACKAGE.parent / (module.replace(".", "/") + f"/{name}.py")).exists():
        return [f"{module}.{name}"]
    return [module]


def _graph() -> dict:
    graph = {}
    for path in FILES:
        graph[_module_name(path)] = {t for m, n, _ in _imports(path) for t in _targets(m, n)}
    return graph


def test_no_private_name_is_imported_across_modules():
    offenders = []
    for path in FILES:
        for module, name, line in _imports(path):
            if not module.startswith("course_utils"):
                continue
            private_module = any(p.startswith("_") for p in module.split("."))
            if (name and name.startswith("_")) or private_module:
                offenders.append(f"{path.name}:{line} imports {module}:{name}")
        source = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\b(engine|runner|patches|compare|hints|log|check_log|hint_book)\._[a-z]\w*", source):
            offenders.append(f"{path.name} uses {match.group(0)}")
    assert not offenders, offenders


def test_lesson_modules_never_import_the_engine_and_the_engine_never_imports_a_lesson():
    graph = _graph()
    for module, targets in graph.items():
        short = _short(module)
        if LESSON.match(short):
            # a catalogue entry carries its patch: a lesson's mistakes.py may import patches, nothing else of the engine
            allowed = {"patches"} if module.endswith(".mistakes") else set()
            engine_imports = [t for t in targets if _short(t) in (ENGINE - allowed) | {"checks"}]
            assert not engine_imports, f"{module} imports the engine: {engine_imports}"
            later = [t for t in targets if LESSON.match(_short(t)) and _short(t) >= short]
            assert not later, f"{module} imports a lesson module that is not earlier: {later}"
        if short in ENGINE - {"audit"}:
            lessons = [t for t in targets if LESSON.match(_short(t)) or t == "course_utils.checking.registry"]
            assert not lessons, f"{module} imports a lesson module or the registry: {lessons}"


def test_the_import_graph_has_no_cycle():
    graph = _graph()
    visiting, done = set(), set()

    def visit(node, trail):
        if node in done:
            return
        assert node not in visiting, "import cycle: " + " -> ".join([*trail, node])
        visiting.add(node)
        for target in sorted(graph.get(node, ())):
            if target in graph and target != node:
                visit(target, [*trail, node])
        visiting.discard(node)
        done.add(node)

    for node in sorted(graph):
        visit(node, [])


def test_the_registry_finds_lessons_by_their_module_alone():
    from course_utils.checking import registry

    on_disk = sorted(p.parent.name[-2:] for p in LESSONS.glob("lesson_[0-9][0-9]/exercises.py"))
    assert registry.lessons() == on_disk
    for lesson in on_disk:
        assert all(e.id.startswith(f"{lesson}.") for e in registry.for_lesson(lesson))
