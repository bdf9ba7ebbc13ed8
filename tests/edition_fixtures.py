"""A small instructor edition with every kind of region, for the tests of the edition maker, the workspace and the site.

`fixture_lesson()` is a lesson as committed: executed (outputs, execution counts, timing metadata, widget
state), with solution regions in a function body, a nested block, a method body and a class body, a top-level
prediction, hidden asserts in a reveal cell, a cell that is hidden tests only, and a collapsed explanation.
It needs no exercise registry: its first code cell defines a stand-in `checks` with the engine's contract
(`fn = checks.check(id, fn)` returns the answer when it agrees with the course's reference, the reference when
not), so its untouched student edition runs top to bottom in any kernel with NumPy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

SETUP = '''\
import numpy as np

REFERENCES, CASES = {}, {}


class checks:  # a stand-in for course_utils.checks with the same contract
    @staticmethod
    def check(exercise_id, answer):
        """The answer when it agrees with the course's reference on the case, else the reference."""
        case = CASES[exercise_id]
        try:
            passed = bool(np.allclose(case(answer), case(REFERENCES[exercise_id])))
        except Exception:  # an untouched stub returns None or raises
            passed = False
        print(exercise_id, "passed" if passed else "not attempted: the lesson goes on with the course's version")
        return answer if passed else REFERENCES[exercise_id]

    @staticmethod
    def predict(prediction_id, value):
        print(prediction_id, "not answered" if value is ... else f"you predicted {value!r}")'''

REFERENCES = """\
def _reference_softmax(x):
    e = np.exp(np.subtract(x, np.amax(x, axis=-1)[..., None]))
    return e / np.add.reduce(e, axis=-1)[..., None]


class _ReferenceScaler:
    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return np.multiply(x, self.factor)


class _ReferenceCounter:
    count = 0

    def add(self, item):
        del item
        self.count += 1
        return self.count


REFERENCES.update(
    {
        "01.scale_scores": lambda scores, d_head: np.divide(scores, d_head**0.5),
        "01.softmax_rows": _reference_softmax,
        "01.sum_rows": lambda rows: np.add.reduce(np.asarray(rows), axis=0),
        "01.scaler": _ReferenceScaler,
        "01.counter": _ReferenceCounter,
    }
)
CASES.update(
    {
        "01.scale_scores": lambda fn: fn(np.arange(6.0).reshape(2, 3), 4),
        "01.softmax_rows": lambda fn: fn(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 900.0]])),
        "01.sum_rows": lambda fn: fn([np.arange(3.0), np.ones(3)]),
        "01.scaler": lambda cls: cls(3.0)(np.arange(4.0)),
        "01.counter": lambda cls: [cls().add(x) for x in "abc"],
    }
)"""

SCALE = '''\
def scale_scores(scores, d_head):
    """Attention scores divided by sqrt(d_head)."""
    ### BEGIN SOLUTION
    return scores / np.sqrt(d_head)
    ### END SOLUTION


scale_scores = checks.check("01.scale_scores", scale_scores)'''

SOFTMAX = '''\
def softmax_rows(x):
    """Softmax along the last axis: every row sums to 1, even for large scores."""
    ### BEGIN SOLUTION
    shifted = x - x.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)
    ### END SOLUTION


softmax_rows = checks.check("01.softmax_rows", softmax_rows)'''

SUM_ROWS = '''\
def sum_rows(rows):
    """The sum of a list of equal-length rows."""
    total = np.zeros_like(rows[0], dtype=float)
    for row in rows:
        ### BEGIN SOLUTION
        total = total + np.asarray(row, dtype=float)
        total = total * 1.0
        ### END SOLUTION
    return total


sum_rows = checks.check("01.sum_rows", sum_rows)'''

SCALER = '''\
class Scaler:
    """Multiplies its input by a fixed factor."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        """`x` times the factor."""
        ### BEGIN SOLUTION
        result = x * self.factor
        return result + 0.0 * x.sum()
        ### END SOLUTION


Scaler = checks.check("01.scaler", Scaler)'''

COUNTER = '''\
class Counter:
    """Counts the items added to it; `add` returns the count so far."""

    ### BEGIN SOLUTION
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
        return len(self.items)
    ### END SOLUTION


Counter = checks.check("01.counter", Counter)'''

PREDICTION = """\
### BEGIN SOLUTION
prediction = 10
### END SOLUTION
checks.predict("01.causal_count", prediction)"""

REVEAL = """\
mask = np.tril(np.ones((4, 4), dtype=bool))
print(mask.astype(int))
### BEGIN HIDDEN TESTS
assert mask.sum() == 10, "a (4, 4) causal mask keeps 4 + 3 + 2 + 1 entries"
### END HIDDEN TESTS"""

HIDDEN_ONLY = """\
### BEGIN HIDDEN TESTS
assert np.allclose(softmax_rows(np.zeros((2, 3))).sum(axis=-1), 1.0)
### END HIDDEN TESTS"""

USE = """\
weights = softmax_rows(scale_scores(np.array([[1.0, 2.0, 3.0]]), 4))
print(weights.round(3), Scaler(2.0)(np.ones(2)), Counter().add("x"), sum_rows([np.ones(2), np.ones(2)]))"""

# The cells whose ids the tests name.
IDS = {
    "setup": "fx-setup",
    "scale": "fx-scale",
    "softmax": "fx-softmax",
    "sum_rows": "fx-sum-rows",
    "scaler": "fx-scaler",
    "counter": "fx-counter",
    "predict_prompt": "fx-predict-prompt",
    "prediction": "fx-prediction",
    "reveal": "fx-reveal",
    "why": "fx-why",
    "why_text": "fx-why-text",
    "why_more": "fx-why-more",
    "hidden_only": "fx-hidden-only",
    "use": "fx-use",
}
SOLUTIONS = {"scale": SCALE, "softmax": SOFTMAX, "sum_rows": SUM_ROWS, "scaler": SCALER, "counter": COUNTER}


def _code(key: str, source: str, count: int) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, id=IDS.get(key, key), execution_count=count)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"output of {key}\n")]
    cell.metadata["execution"] = {"iopub.execute_input": "2026-11-24T12:00:00Z"}
    return cell


def fixture_lesson(title: str = "01 · A fixture lesson") -> nbformat.NotebookNode:
    """The instructor edition (executed) of a small lesson with every kind of region; see the module docstring."""
    md = nbformat.v4.new_markdown_cell
    cells = [
        md(f"# {title}", id="fx-title", metadata={"slideshow": {"slide_type": "slide"}}),
        _code("setup", SETUP, 1),
        _code("references", REFERENCES, 2),
        md("## Scores and weights", id="fx-scores"),
    ]
    count = 3
    for key, source in SOLUTIONS.items():
        cells.append(_code(key, source, count))
        count += 1
    cells += [
        md("**Predict:** how many entries of a (4, 4) causal mask are True?", id=IDS["predict_prompt"]),
        _code("prediction", PREDICTION, count),
        _code("reveal", REVEAL, count + 1),
        md("### Why: open it once you have predicted", id=IDS["why"], metadata={"tags": ["explanation"]}),
        md("The causal mask keeps the diagonal and everything below it: 4 + 3 + 2 + 1.", id=IDS["why_text"]),
        md(
            "In general a (q_len, k_len) causal mask with q_len == k_len keeps q_len (q_len + 1) / 2.",
            id=IDS["why_more"],
        ),
        _code("hidden_only", HIDDEN_ONLY, count + 2),
        md("## Using your functions", id="fx-using"),
        _code("use", USE, count + 3),
    ]
    cells[1].metadata["tags"] = ["keep-me"]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.validate(nb)
    return nb


def write_site_tree(root: Path, repo: Path) -> Path:
    """A clone-like tree in ``root`` for a one-lesson website: ``repo``'s site_src/ (its conf.py), a home page
    listing the fixture lesson, notebooks/01_fixture.ipynb and a stub guide. Returns root."""
    shutil.copytree(repo / "site_src", root / "site_src")
    (root / "site_src" / "index.md").write_text(
        "# A fixture course\n\n```{toctree}\n:maxdepth: 1\n\nnotebooks/01_fixture\ndocs/instructor_guide\n```\n"
    )
    for folder in ("notebooks", "docs"):
        (root / folder).mkdir()
    nbformat.write(fixture_lesson(), root / "notebooks" / "01_fixture.ipynb")
    (root / "docs" / "instructor_guide.md").write_text("# Instructor guide\n\nNothing here.\n")
    (root / "docs" / "figure_alt_text.json").write_text("{}")
    return root
