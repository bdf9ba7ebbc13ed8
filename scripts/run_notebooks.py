"""Re-execute notebooks in place and normalize them, so an unchanged lesson leaves `git diff` empty.

Usage (through the Makefile, which sets OMP_NUM_THREADS=1 and PYTHONHASHSEED=0)::

    make notebooks                                   # every lesson
    .venv/bin/python scripts/run_notebooks.py notebooks/01_attention_numpy.ipynb
    .venv/bin/python scripts/run_notebooks.py --refresh-volatile notebooks/*.ipynb

Normalization:
- cells run top to bottom in a fresh kernel, in the notebook's folder; execution counts 1..n are kept
  (nbval needs them);
- timing metadata (``metadata.execution``) and widget state are dropped;
- widget-view outputs keep only their text fallback (their model ids are random);
- consecutive stream chunks of one cell are merged (a busy kernel splits prints unpredictably);
- a notebook whose new outputs equal the stored ones under nbval's sanitizer (tests/nbval_sanitize.cfg: times,
  memory sizes, numbers printed as "≈0.998"), cell for cell, with figures that look the same (no pixel off by
  more than FIGURE_TOLERANCE of 255), keeps its stored outputs, so re-running an unchanged lesson leaves
  ``git diff`` empty; otherwise the whole new run is stored (never a mix of two runs, whose numbers and figures
  would disagree). So a lesson whose figures show timings (06) is stored afresh by every run, and one whose
  figures show a model trained in the notebook (07, 08) by a run on another CPU kernel.
  ``--refresh-volatile`` always stores the new run.

Prints the wall time of each notebook (the numbers behind the instructor guide's timings).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SANITIZE_FILE = Path(__file__).resolve().parents[1] / "tests" / "nbval_sanitize.cfg"
# What nbval never compares in an output (its skip list); figures are compared here, byte for byte.
UNCOMPARED = {"metadata", "traceback", "prompt_number", "output_type", "name", "execution_count", WIDGET_MIME}
FIGURE_MIMES = ("image/png", "image/jpeg", "image/svg+xml")
FIGURE_TOLERANCE = 8  # of 255 per pixel channel: below what the eye tells apart
SANITIZE_PAIR = re.compile(r"^regex: (.*)$\n^replace: (.*)$", re.MULTILINE)  # nbval's own parsing


def sanitize_patterns(path: Path = SANITIZE_FILE) -> list[tuple[re.Pattern, str]]:
    """The (regex, replacement) pairs of an nbval sanitize file, in order, parsed as nbval parses them."""
    text = Path(path).read_text(encoding="utf-8")
    return [(re.compile(regex), replace) for regex, replace in SANITIZE_PAIR.findall(text)]


def sanitize(text: str, patterns) -> str:
    for regex, replace in patterns:
        text = regex.sub(replace, text)
    return text


def comparable(outputs, patterns) -> list:
    """A cell's outputs as nbval compares them: sanitized text per key, volatile keys dropped (figures kept whole)."""
    seen = []
    for output in outputs:
        if output.get("output_type") == "stream":  # nbval keys a stream by its name: stdout and stderr differ
            seen.append({output["name"]: sanitize(as_text(output["text"]), patterns)})
            continue
        item = {}
        for key, value in output.items():
            if key in UNCOMPARED:
                continue
            if key == "data":
                for mime, content in value.items():
                    if mime not in UNCOMPARED:
                        item[mime] = content if mime in FIGURE_MIMES else sanitize(as_text(content), patterns)
            else:
                item[key] = sanitize(as_text(value), patterns)
        seen.append(item)
    return seen


def same_figure(a: str, b: str, tolerance: int = FIGURE_TOLERANCE) -> bool:
    """Two base64 PNGs of the same size whose pixels differ by at most `tolerance` of 255: the same picture to the
    eye (a trained model's heat map on another CPU differs by 1-5 of 255; a moved curve by far more)."""
    if a == b:
        return True
    import base64
    import io

    import matplotlib.image
    import numpy as np

    try:
        x, y = (matplotlib.image.imread(io.BytesIO(base64.b64decode(as_text(v))), format="png") for v in (a, b))
    except (ValueError, OSError, SyntaxError):
        return False
    if x.shape != y.shape:
        return False
    return float(np.abs(x.astype(float) - y.astype(float)).max()) * 255 <= tolerance


def _same_outputs(old, new, patterns) -> bool:
    a, b = comparable(old, patterns), comparable(new, patterns)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x.keys() != y.keys():
            return False
        for key in x:
            same = same_figure(x[key], y[key]) if key == "image/png" else x[key] == y[key]
            if not same:
                return False
    return True


def as_text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _merge_streams(outputs) -> list:
    merged = []  # a busy kernel may split one print into several chunks: store one stream output
    for output in outputs:
        previous_out = merged[-1] if merged else None
        if (
            output.get("output_type") == "stream"
            and previous_out is not None
            and previous_out.get("output_type") == "stream"
            and previous_out["name"] == output["name"]
        ):
            previous_out["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def same_run(previous, nb, patterns) -> bool:
    """True when nbval would accept `nb`'s outputs against `previous`'s and every figure looks the same: the same
    code cells (ids and sources), outputs equal under the sanitizer, PNGs equal within FIGURE_TOLERANCE."""
    old = [cell for cell in previous.cells if cell.cell_type == "code"]
    new = [cell for cell in nb.cells if cell.cell_type == "code"]
    return len(old) == len(new) and all(
        (a.get("id"), a.source) == (b.get("id"), b.source) and _same_outputs(a.outputs, b.outputs, patterns)
        for a, b in zip(old, new, strict=True)
    )


def normalize(nb, previous=None, refresh_volatile: bool = False, patterns=None):
    """Strip volatile metadata from an executed notebook; keep the stored outputs when nbval would accept the new run.

    `previous` is the notebook as stored before the run. If every code cell's new outputs equal the stored ones under
    `patterns` (default: tests/nbval_sanitize.cfg) and figures are unchanged, the stored outputs are kept, all of
    them; otherwise the new run is stored, all of it. Either way the stored notebook is one run, so its numbers agree.
    """
    patterns = sanitize_patterns() if patterns is None else patterns
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        cell.outputs = _merge_streams(cell.outputs)
        for output in cell.outputs:
            data = output.get("data")
            if data and WIDGET_MIME in data:
                del data[WIDGET_MIME]
            output.get("metadata", {}).pop(WIDGET_MIME, None)
    if previous is not None and not refresh_volatile and same_run(previous, nb, patterns):
        old = [cell for cell in previous.cells if cell.cell_type == "code"]
        for cell, stored in zip((c for c in nb.cells if c.cell_type == "code"), old, strict=True):
            cell.outputs = stored.outputs
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if "execution_count" in output:
                output["execution_count"] = cell.execution_count
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("papermill", None)
    return nb


def run(path: Path, refresh_volatile: bool = False, timeout: int = 600) -> float:
    previous = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent.resolve())}},
        record_timing=False,
        store_widget_state=True,  # interact() output widgets need it in nbclient; normalize() drops the state
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    normalize(nb, previous, refresh_volatile)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument(
        "--refresh-volatile",
        action="store_true",
        help="store the new run even when nbval would accept it against the stored outputs",
    )
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    parser.add_argument("--markdown", action="store_true", help="end with a markdown table of run times")
    args = parser.parse_args(argv)
    for var, value in (("OMP_NUM_THREADS", "1"), ("PYTHONHASHSEED", "0")):
        if os.environ.get(var) != value:
            print(f"warning: {var} is {os.environ.get(var)!r}, not {value!r}; stored outputs may not match nbval runs")
    failed, times = [], []
    for path in args.paths:
        try:
            seconds = run(path, args.refresh_volatile, args.timeout)
        except CellExecutionError as exc:
            print(f"FAILED {path}:\n{exc}", file=sys.stderr)
            failed.append(path)
            continue
        print(f"{seconds:6.1f} s  {path}")
        times.append((path, seconds))
    if args.markdown and times:
        print("\n| notebook | seconds (1 CPU thread) |\n|---|---|")
        for path, seconds in times:
            print(f"| `{path}` | {seconds:.0f} |")
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(map(str, failed))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
