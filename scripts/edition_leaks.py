"""The leak scanner of the published student edition: every answer of the course found in a published tree (issue 29).

What must never be published is collected from the **repository** (:func:`collect`):

- ``solution``: the body of every ``### BEGIN SOLUTION`` region of every lesson (``notebooks/NN_*.ipynb``);
- ``hidden_test``: every statement of every ``### BEGIN HIDDEN TESTS`` region (the reveal's asserts);
- ``reference``, ``variant``, ``buggy``: the source of every exercise's reference, correct variants and hand-written
  buggy versions (``course_utils.checking.registry``), their body without the ``def`` line and the docstring;
- ``library`` (:func:`from_library`, when asked): the bodies of the library helpers that answer exercises of lessons
  not yet due (``scripts/edition_withhold.py``), so a tree published without the policy is caught too.

Hidden cases: ``make grade`` (``course_utils/grading``) re-runs each submitted notebook with the course's own checks,
on the same cases as the live checks (``Exercise.make_cases`` and the fresh sizes); the course has no hidden cases
today, so there is nothing of that kind to collect (said in ``docs/hub.md``).

Every file of the published tree is then scanned (:func:`scan`): a secret is **leaked** in a file when its
normalized lines appear there in the same order, one after the other (``lines``: comments, blank lines, indentation
and trivial lines such as ``pass``, ``...``, ``return x`` or ``else:`` dropped on both sides), or when a function or
class in a published ``.py`` file or notebook cell has the same body up to the names of its arguments and local
variables (``ast``: a renamed copy). Secrets too short to be told apart from ordinary code (under
:data:`MIN_CHARS` characters, or :data:`MIN_NODES` syntax nodes for the ``ast`` test) are counted, not scanned.

``python scripts/edition_leaks.py TREE`` (with the course's environment: it imports the registry) prints the leaks
by kind and file and exits 1 when there is one; ``--json PATH`` writes them. Used by
``tests/test_published_edition.py`` on ``make publish``'s tree.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import re
import sys
import textwrap
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "KINDS",
    "Leak",
    "MIN_CHARS",
    "MIN_NODES",
    "Secret",
    "body_dump",
    "collect",
    "from_library",
    "from_notebook",
    "from_object",
    "main",
    "normalize",
    "scan",
    "summary",
]

REPO = Path(__file__).resolve().parents[1]
KINDS = ("solution", "hidden_test", "reference", "variant", "buggy", "library")
MIN_CHARS = 16  # normalized characters: `prediction = "uniform"` is an answer; `x = 0` is not a secret
MIN_NODES = 12  # syntax nodes of a body compared by its AST: `return a @ b` is everyone's code
TEXT_SUFFIXES = {".py", ".ipynb", ".md", ".txt", ".json", ".toml", ".yml", ".yaml", ".cfg", ".csv", ".html", ".rst"}
_MARKER = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")
_TRIVIAL = re.compile(
    r"^(pass|\.\.\.|return|return \w+|\w+ = \.\.\.|else:|try:|finally:|except:|[)\]}]+[,:]?|"
    r"raise NotImplementedError(\(.*\))?|\"\"\"|''')$"
)


@dataclass(frozen=True)
class Secret:
    """Something that must not be published: its kind, a readable name, where it comes from, what is looked for."""

    kind: str
    name: str
    origin: str  # the repository file it comes from
    lines: tuple = ()  # normalized lines, in order; () when too short to scan
    dump: str | None = None  # the canonical AST dump of a function's (or class's) body; None when too small


@dataclass(frozen=True)
class Leak:
    """A secret found in a published file: ``how`` is ``lines``, ``ast`` or ``lines+ast``."""

    kind: str
    name: str
    origin: str
    file: str
    how: str


# ------------------------------------------------------------------------------------------------ normalizing


def _strip_comment(line: str) -> str:
    quote = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif line.startswith(quote, i):
                i += len(quote) - 1
                quote = None
        elif line.startswith(('"""', "'''"), i):
            quote = line[i : i + 3]
            i += 2
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i]
        i += 1
    return line


def normalize(text: str) -> list:
    """The lines of ``text`` as the scan compares them: comments, indentation, blank and trivial lines gone."""
    out = []
    for line in text.splitlines():
        line = _strip_comment(line).strip()
        if line and not _TRIVIAL.match(line) and not _MARKER.match(line):
            out.append(re.sub(r"\s+", " ", line))
    return out


def _local_names(node) -> set:
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
            names.add(sub.id)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and sub is not node:
            names.add(sub.name)
    return names


def _body(node) -> list:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            body = body[1:]
    return body


def body_dump(node) -> tuple[str, int]:
    """The canonical dump of a function's or class's body (docstring dropped, local names numbered) and its size."""
    module = ast.parse("\n".join(ast.unparse(s) for s in _body(node)))  # a copy, to rename in
    local = _local_names(node)
    numbered: dict = {}
    for sub in ast.walk(module):
        if isinstance(sub, ast.Name) and sub.id in local:
            sub.id = numbered.setdefault(sub.id, f"v{len(numbered)}")
        elif isinstance(sub, ast.arg) and sub.arg in local:
            sub.arg = numbered.setdefault(sub.arg, f"v{len(numbered)}")
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and sub.name in local:
            sub.name = numbered.setdefault(sub.name, f"v{len(numbered)}")
    size = sum(1 for _ in ast.walk(module))
    return ast.dump(module, annotate_fields=False), size


def _secret(kind, name, origin, text, dump_size=None) -> Secret:
    lines = tuple(normalize(text))
    if sum(len(line) for line in lines) < MIN_CHARS:
        lines = ()
    dump = dump_size[0] if dump_size and dump_size[1] >= MIN_NODES else None
    return Secret(kind, name, origin, lines, dump)


# ------------------------------------------------------------------------------------------------ collecting


def _regions(source: str):
    """(kind, first line, last line, body text) of every solution and hidden-tests region of a cell (1-based lines)."""
    kind, body, start = None, [], 0
    for number, line in enumerate(source.splitlines(), 1):
        match = _MARKER.match(line)
        if match and match.group(1) == "BEGIN":
            kind, body, start = ("solution" if match.group(2) == "SOLUTION" else "hidden_test"), [], number + 1
        elif match and kind is not None:
            yield kind, start, number - 1, "\n".join(body)
            kind = None
        elif kind is not None:
            body.append(line)


def _statements(body: str) -> list:
    """The source of each statement of a region (a multi-line assert is one), or its lines when it does not parse."""
    text = textwrap.dedent(body)
    try:
        statements = ast.parse(text).body
    except SyntaxError:
        return text.splitlines()
    lines = text.splitlines()
    return ["\n".join(lines[s.lineno - 1 : s.end_lineno]) for s in statements]


def _enclosing_def(tree, first: int, last: int):
    """The innermost function whose body (after its docstring) lies within lines first..last, or None."""
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _body(node):
            body = _body(node)
            if first <= body[0].lineno and body[-1].end_lineno <= last and node.lineno < first:
                if found is None or node.lineno > found.lineno:
                    found = node
    return found


def from_notebook(path: Path, origin: str | None = None) -> list:
    """The secrets of one instructor-edition notebook: solution bodies, hidden-test statements (one secret each).

    A solution region that is a function's whole body is also compared by its AST (a renamed copy is found)."""
    path = Path(path)
    origin = origin or path.name
    found = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8")).get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", []))
        try:
            tree = ast.parse("\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            tree = None
        for kind, first, last, body in _regions(source):
            name = f"{path.name} cell {index}"
            if kind == "hidden_test":
                found += [_secret(kind, f"{name}: {part.strip()[:60]}", origin, part) for part in _statements(body)]
                continue
            node = _enclosing_def(tree, first, last)
            found.append(_secret(kind, name, origin, body, body_dump(node) if node is not None else None))
    return [s for s in found if s.lines or s.dump]


def from_object(kind: str, name: str, obj, repo: Path = REPO) -> Secret | None:
    """The secret of a function or class (its body without ``def`` and docstring); None when it has no source."""
    try:
        source = textwrap.dedent(inspect.getsource(obj))
        where = Path(inspect.getsourcefile(obj)).resolve()
    except (OSError, TypeError):
        return None
    origin = str(where.relative_to(repo)) if where.is_relative_to(repo) else where.name
    try:
        node = ast.parse(source).body[0]
    except (SyntaxError, IndexError):  # a lambda inside a larger statement
        return None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return None
    body = _body(node)
    if not body:
        return None
    lines = source.splitlines()[body[0].lineno - 1 : node.end_lineno]
    secret = _secret(kind, name, origin, "\n".join(lines), body_dump(node))
    return secret if secret.lines or secret.dump else None


def from_library(package: Path, items) -> list:
    """The secrets of library helpers that answer exercises (``edition_withhold.Withheld`` items: ``path``,
    ``qualname``, ``name``), read from the package folder ``package`` (the repository's ``course_utils``)."""
    found = []
    for item in items:
        path = Path(package) / item.path
        source = path.read_text(encoding="utf-8")
        node = ast.parse(source)
        for part in item.qualname.split("."):
            node = next(n for n in node.body if getattr(n, "name", None) == part)
        body = _body(node)
        lines = source.splitlines()[body[0].lineno - 1 : node.end_lineno]
        secret = _secret("library", item.name, f"course_utils/{item.path}", "\n".join(lines), body_dump(node))
        if secret.lines or secret.dump:
            found.append(secret)
    return found


def collect(repo: Path = REPO) -> tuple[list, list]:
    """Every secret of the repository ``repo``, and the references, variants and buggy versions not looked for, why.

    Imports ``course_utils`` from ``repo`` (its registry loads every lesson's exercises).
    """
    repo = Path(repo).resolve()
    secrets: list = []
    for notebook in sorted((repo / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        secrets += from_notebook(notebook, f"notebooks/{notebook.name}")
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from course_utils.checking import registry

    unreadable = []
    for exercise in registry.EXERCISES.values():
        items = [("reference", exercise.reference)]
        items += [("variant", v) for v in exercise.variants]
        items += [("buggy", b) for b in exercise.buggy.values()]
        for kind, obj in items:
            name = f"{exercise.id} {kind} {getattr(obj, '__qualname__', repr(obj))}"
            secret = from_object(kind, name, obj, repo)
            if secret is None:
                try:
                    inspect.getsource(obj)
                    unreadable.append(f"{name} (too short to tell from ordinary code)")
                except (OSError, TypeError):
                    unreadable.append(f"{name} (no source: made at run time, e.g. by a factory)")
            elif secret not in secrets:
                secrets.append(secret)
    return secrets, unreadable


# ------------------------------------------------------------------------------------------------ scanning


def _texts(path: Path) -> tuple[str, list]:
    """(all the text of a file, the Python sources in it) ; notebooks: cell sources and text outputs."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".py":
        return text, [text]
    if path.suffix != ".ipynb":
        return text, []
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return text, []
    parts, code = [], []
    for cell in cells:
        source = "".join(cell.get("source", []))
        parts.append(source)
        if cell.get("cell_type") == "code":
            code.append("\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))))
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", [])))
            parts.append("".join(output.get("data", {}).get("text/plain", [])))
    return "\n".join(parts), code


def _dumps(sources: list) -> set:
    found = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and _body(node):
                found.add(body_dump(node)[0])
    return found


def _contains(lines: list, index: dict, wanted: tuple) -> bool:
    return any(lines[p : p + len(wanted)] == list(wanted) for p in index.get(wanted[0], ()))


def scan(tree: Path, secrets: list) -> list:
    """Every (secret, published file) where the secret is found, in the order of the files, then the secrets."""
    tree = Path(tree)
    leaks = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
        text, sources = _texts(path)
        lines = normalize(text)
        index: dict = {}
        for i, line in enumerate(lines):
            index.setdefault(line, []).append(i)
        dumps = _dumps(sources) if sources else set()
        for secret in secrets:
            how = []
            if secret.lines and _contains(lines, index, secret.lines):
                how.append("lines")
            if secret.dump is not None and secret.dump in dumps:
                how.append("ast")
            if how:
                rel = path.relative_to(tree).as_posix()
                leaks.append(Leak(secret.kind, secret.name, secret.origin, rel, "+".join(how)))
    return leaks


def summary(leaks: list) -> str:
    """The leaks by kind, then by kind and file, as text."""
    if not leaks:
        return "no leak: no solution region, hidden test, reference, variant, buggy version or withheld helper\n"
    out = [f"{len(leaks)} leaks"]
    for kind, n in sorted(Counter(leak.kind for leak in leaks).items()):
        out.append(f"  {kind}: {n}")
    out.append("by kind and file:")
    for (kind, file), n in sorted(Counter((leak.kind, leak.file) for leak in leaks).items()):
        out.append(f"  {kind:12} {n:4}  {file}")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path, help="the published tree (publish_student_edition.py build --out TREE)")
    parser.add_argument("--repo", type=Path, default=REPO, help="the course repository the secrets come from")
    parser.add_argument("--json", type=Path, help="write every leak here, one object each")
    parser.add_argument("--list", action="store_true", help="print every leak, not only the counts")
    parser.add_argument("--as-of", help="also look for the library helpers withheld as of then (edition_withhold.py)")
    parser.add_argument("--course-file", type=Path, help="the due dates for --as-of (default: course.toml)")
    args = parser.parse_args(argv)
    if not args.tree.is_dir():
        parser.error(f"tree: expected the published tree's folder but {args.tree} is not a folder")
    secrets, unreadable = collect(args.repo)
    if args.as_of:
        import edition_withhold

        package = args.repo / "course_utils"
        report = edition_withhold.decide(args.repo / "notebooks", package, args.repo, args.as_of, args.course_file)
        secrets += from_library(package, report.withheld)
    leaks = scan(args.tree, secrets)
    print(f"{len(secrets)} secrets collected from {args.repo}; {len(unreadable)} not looked for:")
    for name in unreadable:
        print(f"  {name}")
    sys.stdout.write(summary(leaks))
    if args.list:
        for leak in leaks:
            print(f"  {leak.file}: {leak.kind} {leak.name} ({leak.how})")
    if args.json:
        args.json.write_text(json.dumps([asdict(leak) for leak in leaks], indent=1), encoding="utf-8")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
