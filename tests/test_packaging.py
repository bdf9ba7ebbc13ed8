"""`pip install -e .` alone gives a working package: every third-party import of course_utils is a declared dependency."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# not imported by name in the package, but needed at run time: the grader starts `python3` kernels
RUN_TIME = {"ipykernel"}


def _imports() -> dict[str, set[str]]:
    """Top-level module -> the files of course_utils that import it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for path in (REPO / "course_utils").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(REPO)))
    return found


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {re.split(r"[<>=!~ \[;]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in project["dependencies"]}


def test_every_third_party_import_is_a_declared_dependency():
    declared = _declared()
    distributions = packages_distributions()
    missing = {}
    for module, files in sorted(_imports().items()):
        if module in sys.stdlib_module_names or module in ("course_utils", "__future__"):
            continue
        owners = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not owners & declared and not any(_requires(d, declared) for d in owners):
            missing[module] = sorted(files)
    assert not missing, f"imported by course_utils but not in pyproject.toml's dependencies: {missing}"
    assert RUN_TIME <= declared


def _requires(distribution: str, declared: set[str]) -> bool:
    """True if a module's distribution comes with a declared one (cycler with matplotlib)."""
    from importlib.metadata import PackageNotFoundError, requires

    for parent in declared:
        try:
            needs = requires(parent) or []
        except PackageNotFoundError:
            continue
        if any(re.split(r"[<>=!~ \[;(]", n, maxsplit=1)[0].lower().replace("_", "-") == distribution for n in needs):
            return True
    return False
