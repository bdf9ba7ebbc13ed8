"""Portable stored outputs (issue 18): what nbval compares, what it may skip, and that the sanitizer hides no words.

- Every cell that nbval does not compare (tag `nbval-ignore-output` or `nbval-skip`, or the comment markers
  `# NBVAL_IGNORE_OUTPUT` / `# NBVAL_SKIP`) carries its reason in `metadata["course"]["ignore_output_reason"]`;
  one test per such cell lists them, and a notebook with a reasonless one fails.
- tests/nbval_sanitize.cfg replaces numbers (with their unit) and nothing else, in every stored output.
- A stale label next to a volatile number fails nbval: a copy of a real lesson, cut after the first cell whose
  output the sanitizer changes, with one word of that output changed, is run through nbval in a subprocess
  (an unchanged copy is the control, and must pass).
- scripts/run_notebooks.py keeps stored outputs that nbval would accept, and stores the others.
- scripts/nbval_portable.py (`make test-portable`) offers the kernel settings this CPU can run.

The runs under each kernel setting themselves are `make test-portable` (CI runs it; about 2 minutes a setting).
"""

import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import hygiene
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = hygiene.notebook_paths(REPO)
SANITIZE_FILE = REPO / "tests" / "nbval_sanitize.cfg"
REASON_KEY = ("course", "ignore_output_reason")  # metadata["course"]["ignore_output_reason"]
HIDING_TAGS = {"nbval-ignore-output", "nbval-skip"}
HIDING_COMMENTS = re.compile(r"^\s*#+\s*(NBVAL_IGNORE_OUTPUT|NBVAL_SKIP|PYTEST_VALIDATE_IGNORE_OUTPUT)\s*$", re.M)
MIN_REASON_WORDS = 4


def _load_script(name):
    spec = importlib.util.spec_from_file_location(f"course_scripts_{name}", REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run_notebooks = _load_script("run_notebooks")
nbval_portable = _load_script("nbval_portable")
PATTERNS = run_notebooks.sanitize_patterns(SANITIZE_FILE)


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _reason(cell) -> str:
    return str(cell.get("metadata", {}).get(REASON_KEY[0], {}).get(REASON_KEY[1], "")).strip()


def hidden_cells(nb: dict) -> list[tuple[int, str]]:
    """(cell index, how nbval is told to skip it) for every code cell whose output nbval does not compare."""
    found = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        hows = sorted(HIDING_TAGS & set(cell.get("metadata", {}).get("tags", [])))
        hows += HIDING_COMMENTS.findall(_source(cell))
        if hows:
            found.append((index, ", ".join(hows)))
    return found


def reason_problems(nb: dict) -> list[str]:
    """Hidden cells without a reason, and reasons left on cells that are not hidden (stale metadata)."""
    problems = []
    hidden = dict(hidden_cells(nb))
    for index, cell in enumerate(nb["cells"]):
        reason = _reason(cell)
        if index in hidden and len(reason.split()) < MIN_REASON_WORDS:
            problems.append(
                f"cell {index} ({hidden[index]}): no metadata.{'.'.join(REASON_KEY)} (at least "
                f"{MIN_REASON_WORDS} words: why is its whole output volatile?); got {reason!r}"
            )
        if reason and index not in hidden:
            problems.append(f"cell {index}: has metadata.{'.'.join(REASON_KEY)} but nbval compares it: drop the reason")
    return problems


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


IGNORED = [(path, index, how) for path in NOTEBOOKS for index, how in hidden_cells(_read(path))]


@pytest.mark.parametrize(("path", "index", "how"), IGNORED, ids=[f"{p.stem}-cell{i}" for p, i, _ in IGNORED] or None)
def test_ignored_cell_has_a_reason(path, index, how):
    """One test per cell that nbval does not compare: `pytest -v -k ignored_cell` lists them with their reasons."""
    cell = _read(path)["cells"][index]
    reason = _reason(cell)
    assert len(reason.split()) >= MIN_REASON_WORDS, f"{path.name} cell {index} ({how}): reason {reason!r}"
    assert "nbval-skip" not in how and "SKIP" not in how, f"{path.name} cell {index}: skipped cells are not run at all"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_hidden_cell_without_a_reason(path):
    problems = reason_problems(_read(path))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def _scratch(*cells) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return json.loads(nbformat.writes(nb))


def test_reason_checker_catches_reasonless_and_stale():
    nb = _scratch("print(1)", "# NBVAL_IGNORE_OUTPUT\nprint(2)", "print(3)", "print(4)")
    nb["cells"][0]["metadata"]["tags"] = ["nbval-ignore-output"]
    nb["cells"][2]["metadata"]["course"] = {"ignore_output_reason": "a progress bar redraws itself every step"}
    nb["cells"][3]["metadata"]["tags"] = ["nbval-ignore-output"]
    nb["cells"][3]["metadata"]["course"] = {"ignore_output_reason": "volatile"}  # too short to say why
    problems = reason_problems(nb)
    assert [p.split(" ")[1] for p in problems] == ["0", "1", "2:", "3"], problems
    assert [i for i, _ in hidden_cells(nb)] == [0, 1, 3]
    for i in (0, 1, 3):
        nb["cells"][i]["metadata"]["course"] = {"ignore_output_reason": "the progress bar redraws itself per step"}
    nb["cells"][2]["metadata"].pop("course")
    assert reason_problems(nb) == []


# ---- the sanitizer ----------------------------------------------------------------------------------

# (stored text, what nbval compares). Every pattern of tests/nbval_sanitize.cfg has an example here.
VOLATILE_EXAMPLES = [
    ("three Linears: 9.99 ms | fused: 8.27 ms | ratio ≈1.1", "three Linears: TIME | fused: TIME | ratio ≈NUM"),
    ("per token: 98 µs with the cache, 494 µs without", "per token: TIME with the cache, TIME without"),
    ("≈500 steps in 8.0 s, stopped: target, last loss ≈0.0039", " ≈NUM steps in TIME, stopped: target, last loss ≈NUM"),
    (
        "n =  1024: naive    25.7 MB | tiled  1.19 MB | ratio ≈21.7",
        "n =  1024: naive MEMORY | tiled MEMORY | ratio ≈NUM",
    ),
    ("max |tiled - naive| ≈1.3e-15", "max |tiled - naive| ≈NUM"),
    ("measured n ≈>2048, counted 1,024", "measured n ≈NUM, counted 1,024"),
    ("exact ≈0.9977, token ≈-12.5%", "exact ≈NUM, token ≈NUM%"),
    ("   512      6.70 ms     16.19 ms", "   512 TIME TIME"),  # right-aligned columns: the width may change
    ("   0      ≈0.09     ≈1.00", "   0 ≈NUM ≈NUM"),
    ("12.3 it/s", " RATE"),
    ("<Model object at 0x7f3a2b1c9d10>", "<Model object at 0xADDRESS>"),
]
STABLE_EXAMPLES = [  # compared exactly: numbers not marked volatile, "≈ " with a space, counts next to words
    "checked: N(0, 1/d_model) weights keep Var(Q) ≈ 1",
    "Transformer, 1300 test sequences of 4-16: token accuracy 0.9996",
    "budget: 300 steps | 4 heads | 16 sin/cos pairs | shape (2, 4, 5, 5)",
    "1 layer x 8 heads: 1,050,624 parameters",
]


@pytest.mark.parametrize(("text", "expected"), VOLATILE_EXAMPLES)
def test_sanitizer_blanks_volatile_numbers(text, expected):
    assert run_notebooks.sanitize(text, PATTERNS) == expected


@pytest.mark.parametrize("text", STABLE_EXAMPLES)
def test_sanitizer_leaves_stable_text(text):
    assert run_notebooks.sanitize(text, PATTERNS) == text


def test_every_pattern_has_an_example():
    used = {regex.pattern for regex, _ in PATTERNS if any(regex.search(text) for text, _ in VOLATILE_EXAMPLES)}
    assert used == {regex.pattern for regex, _ in PATTERNS}


UNIT = re.compile(r"\s?(ns|µs|us|ms|s|sec|seconds|min|it/s|s/it|B|KB|KiB|MB|MiB|GB|GiB)$")
NUMBER = re.compile(r"≈?[<>]?-?\d+(,\d{3})*(\.\d+)?(e[-+]?\d+)?")


def _stored_texts(path: Path):
    """(cell index, text) for every text a reader sees in a stored output: stream text, text/* data, an error."""
    for index, cell in enumerate(_read(path)["cells"]):
        for output in cell.get("outputs", []):
            if "text" in output:
                yield index, run_notebooks.as_text(output["text"])
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/"):
                    yield index, run_notebooks.as_text(value)
            if output.get("output_type") == "error":
                yield index, f"{output.get('ename', '')}: {output.get('evalue', '')}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_sanitizer_replaces_only_numbers(path):
    """In every stored output, each stretch the sanitizer replaces is a number, a unit or an address: no word."""
    problems = []
    for index, text in _stored_texts(path):
        for regex, _ in PATTERNS:
            for match in regex.finditer(text):
                found = match.group(0)
                if found.strip().startswith("0x"):
                    continue
                if not NUMBER.fullmatch(UNIT.sub("", found.strip())):
                    problems.append(f"cell {index}: {regex.pattern!r} replaces {found!r}")
        for match in re.finditer(r"≈(?![<>]?-?\d| )\S*", text):
            problems.append(f"cell {index}: {match.group(0)!r} is marked volatile but is not a number")
    assert not problems, "\n".join(problems)


# ---- a stale label fails nbval ----------------------------------------------------------------------------


def _first_sanitized_cell(path: Path):
    """(index, stale text) of the first code cell with a stream output that the sanitizer changes: one word
    before its first volatile number replaced, the way 04's timing cell kept "one fused Linear:" after the code
    had changed to "fused:". None when the notebook has no such cell."""
    for index, cell in enumerate(_read(path)["cells"]):
        for output in cell.get("outputs", []):
            if output.get("output_type") != "stream":
                continue
            text = "".join(output["text"])
            for regex, _ in PATTERNS:
                match = regex.search(text)
                words = list(re.finditer(r"[A-Za-z]{3,}", text[: match.start()])) if match else []
                if words:
                    word = words[-1]
                    return index, text[: word.start()] + "stale " + text[word.start() :]
    return None


def _cheapest_candidate():
    """The lesson whose first sanitized cell comes earliest (fewest code cells to run), and that cell."""
    best = None
    for path in NOTEBOOKS:
        found = _first_sanitized_cell(path)
        if found is None:
            continue
        cost = sum(c["cell_type"] == "code" for c in _read(path)["cells"][: found[0] + 1])
        if best is None or cost < best[0]:
            best = (cost, path, *found)
    return best


def _nbval(paths: list[Path], cwd: Path) -> dict[str, dict[str, bool]]:
    """Run nbval (the Makefile's flags) on `paths`; {notebook stem: {test name: passed}}."""
    junit, ini = cwd / "junit.xml", cwd / "pytest.ini"
    ini.write_text("[pytest]\n")  # not the repository's configuration (its testpaths and options)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    cmd = [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
           str(SANITIZE_FILE), "--nbval-cell-timeout=300", "-p", "no:randomly", "-p", "no:cacheprovider",
           "-q", "--rootdir", str(cwd), "-c", str(ini), f"--junitxml={junit}", *map(str, paths)]  # fmt: skip
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert junit.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    results: dict[str, dict[str, bool]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        stem = next(p.stem for p in paths if p.stem in case.get("classname", "") + case.get("file", ""))
        ok = case.find("failure") is None and case.find("error") is None
        results.setdefault(stem, {})[case.get("name")] = ok
    return results


def test_a_stale_label_fails_nbval(tmp_path):
    """A copy of a real lesson, cut after its first cell with a volatile number, one label word changed: nbval fails
    on that cell. The same copy unchanged passes (so the failure is the label, nothing else)."""
    best = _cheapest_candidate()
    assert best is not None, "no lesson prints a volatile number: nothing to prove"
    _, path, index, stale_text = best
    nb = _read(path)
    nb["cells"] = nb["cells"][: index + 1]
    control = tmp_path / f"control_{path.stem}.ipynb"
    control.write_text(json.dumps(nb), encoding="utf-8")
    stale_nb = copy.deepcopy(nb)
    stream = next(o for o in stale_nb["cells"][index]["outputs"] if o.get("output_type") == "stream")
    stream["text"] = stale_text
    stale = tmp_path / f"stale_{path.stem}.ipynb"
    stale.write_text(json.dumps(stale_nb), encoding="utf-8")

    results = _nbval([control, stale], tmp_path)
    assert results[control.stem] and all(results[control.stem].values()), (path.name, results[control.stem])
    failed = [name for name, ok in results[stale.stem].items() if not ok]
    code_number = sum(c["cell_type"] == "code" for c in nb["cells"]) - 1  # nbval counts code cells from 0
    assert failed == [f"Cell {code_number}"], (path.name, index, failed)


# ---- scripts/run_notebooks.py keeps what nbval would accept ------------------------------------------------


def _run(*cells):
    """A notebook of code cells, each given as (stdout text, figure bytes or None, source)."""
    nb = nbformat.v4.new_notebook()
    for i, (text, figure, source) in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source, execution_count=i + 1)
        cell.id = f"c{i:03d}"
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        if figure is not None:
            data = {"image/png": figure, "text/plain": "<Figure>"}
            cell.outputs.append(nbformat.v4.new_output("display_data", data=data))
        nb.cells.append(cell)
    return nb


def _png(shift=0.0, size=8) -> str:
    """A small grey-ramp PNG, base64; `shift` (of 255) brightens every pixel."""
    import base64
    import io

    import matplotlib.image
    import numpy as np

    ramp = np.linspace(0.2, 0.6, size * size).reshape(size, size) + shift / 255
    buffer = io.BytesIO()
    matplotlib.image.imsave(buffer, np.dstack([ramp] * 3), format="png")
    return base64.b64encode(buffer.getvalue()).decode()


OLD, NEW = ("step ≈1.0\n", None, "step()"), ("step ≈2.0\n", None, "step()")  # equal under the sanitizer
NORMALIZE_CASES = {  # name: (stored run, new run, stored outputs kept?)
    "only volatile digits moved": (
        _run(OLD, ("loss ≈0.0111 in 9.9 s\n", "AAAA", "train()")),
        _run(NEW, ("loss ≈0.0109 in 1.7 s\n", "AAAA", "train()")),
        True,
    ),
    "a label changed": (
        _run(OLD, ("fused: 9.9 ms\n", None, "t()")),
        _run(NEW, ("one fused: 9.9 ms\n", None, "t()")),
        False,
    ),
    "an unmarked number moved": (
        _run(OLD, ("exact 0.9977\n", None, "e()")),
        _run(NEW, ("exact 0.9962\n", None, "e()")),
        False,
    ),
    "a figure moved by 3 of 255 per pixel (a trained heat map on another CPU)": (
        _run(OLD, ("loss ≈0.01\n", _png(), "p()")),
        _run(NEW, ("loss ≈0.02\n", _png(shift=3), "p()")),
        True,
    ),
    "a figure changed visibly": (
        _run(OLD, ("loss ≈0.01\n", _png(), "p()")),
        _run(NEW, ("loss ≈0.01\n", _png(shift=40), "p()")),
        False,
    ),
    "a figure changed size": (
        _run(OLD, ("loss ≈0.01\n", _png(), "p()")),
        _run(NEW, ("loss ≈0.01\n", _png(size=9), "p()")),
        False,
    ),
    "a figure is not a PNG": (
        _run(OLD, ("loss ≈0.01\n", "AAAA", "p()")),
        _run(NEW, ("loss ≈0.01\n", "BBBB", "p()")),
        False,
    ),
    "a source changed": (
        _run(OLD, ("loss ≈0.01\n", None, "p(1)")),
        _run(NEW, ("loss ≈0.01\n", None, "p(2)")),
        False,
    ),
}


@pytest.mark.parametrize("case", list(NORMALIZE_CASES))
def test_run_notebooks_keeps_a_run_that_nbval_accepts(case):
    """Kept: every stored output. Not kept: every new output, the unchanged first cell's too (one run, never a mix)."""
    stored, new, kept = NORMALIZE_CASES[case]
    expected = copy.deepcopy(stored if kept else new)
    result = run_notebooks.normalize(copy.deepcopy(new), previous=stored, patterns=PATTERNS)
    assert [c.outputs for c in result.cells] == [c.outputs for c in expected.cells]
    refreshed = run_notebooks.normalize(copy.deepcopy(new), previous=stored, refresh_volatile=True, patterns=PATTERNS)
    assert [c.outputs for c in refreshed.cells] == [c.outputs for c in new.cells]


# ---- scripts/nbval_portable.py (make test-portable) --------------------------------------------------------


@pytest.mark.parametrize(
    ("torch_level", "runnable"),
    [
        ("AVX512", {"default", "avx2", "avx512", "numpy-baseline"}),
        ("AVX2", {"default", "avx2", "numpy-baseline"}),
        ("DEFAULT", {"default", "numpy-baseline"}),
    ],
)
def test_portable_settings_follow_the_cpu(torch_level, runnable):
    envs = nbval_portable.settings_env({"torch": torch_level, "numpy_found": ["X86_V3"]}, machine="x86_64")
    assert {name for name, env in envs.items() if env is not None} == runnable
    assert envs["numpy-baseline"] == {"NPY_DISABLE_CPU_FEATURES": "X86_V3", "OPENBLAS_CORETYPE": "Nehalem"}


def test_numpy_accepts_the_features_it_is_told_to_disable():
    """NumPy refuses a feature name it does not know (or a baseline one): the setting must start a Python."""
    env_vars = nbval_portable.settings_env(nbval_portable.probe())["numpy-baseline"]
    code = "from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f\n"
    code += "print([n for n in d if f.get(n)])"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env_vars}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"  # every optional SIMD target off


def test_ci_and_make_run_the_portable_settings():
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^test-portable:", makefile, re.M)
    assert "--nbval-lax" not in makefile  # lax mode compares no output at all
    assert "make test-portable" in (REPO / ".ci" / "run").read_text()


def test_portable_report_names_the_failing_cells(tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite><testcase classname="notebooks.04_multi_head_pytorch.ipynb" name="Cell 40">'
        '<failure message="Cell outputs differ"/></testcase>'
        '<testcase classname="notebooks.01_attention_numpy.ipynb" name="Cell 1"/>'
        '<testcase classname="notebooks.00_start_here.ipynb" name="Cell 2"><skipped/></testcase>'
        "</testsuite></testsuites>"
    )
    assert nbval_portable.results(junit) == (1, ["04_multi_head_pytorch::Cell 40"])


def test_figure_tolerance_is_what_the_cases_exercise():
    assert _png() != _png(shift=3)  # different bytes, the same picture
    assert run_notebooks.same_figure(_png(), _png(shift=3)) and not run_notebooks.same_figure(_png(), _png(shift=40))
