"""Re-execute notebooks in place and normalize them, so an unchanged lesson leaves `git diff` empty.

Usage (through the Makefile, which sets OMP_NUM_THREADS=1 and PYTHONHASHSEED=0)::

    make notebooks                                   # every lesson and solution
    .venv/bin/python scripts/run_notebooks.py notebooks/01_attention_numpy.ipynb
    .venv/bin/python scripts/run_notebooks.py --refresh-volatile notebooks/*.ipynb

Normalization:
- cells run top to bottom in a fresh kernel, in the notebook's folder; execution counts 1..n are kept
  (nbval needs them);
- timing metadata (``metadata.execution``) and widget state are dropped;
- widget-view outputs keep only their text fallback (their model ids are random);
- consecutive stream chunks of one cell are merged (a busy kernel splits prints unpredictably);
- cells tagged ``nbval-ignore-output`` (timings, progress bars, version reports) are volatile by
  nature: when a cell's source is unchanged, its previously stored output is kept, so a re-run does
  not churn. ``--refresh-volatile`` stores the new outputs of those cells too.

Prints the wall time of each notebook (the numbers behind the instructor guide's timings).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

VOLATILE_TAG = "nbval-ignore-output"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _volatile(cell) -> bool:
    return VOLATILE_TAG in cell.get("metadata", {}).get("tags", [])


def normalize(nb, previous=None, refresh_volatile: bool = False):
    """Strip volatile metadata from an executed notebook; keep old outputs of unchanged volatile cells."""
    old_outputs = {}
    if previous is not None and not refresh_volatile:
        for cell in previous.cells:
            if cell.cell_type == "code" and _volatile(cell) and cell.get("outputs"):
                old_outputs.setdefault(cell.source, cell.outputs)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        merged = []  # a busy kernel may split one print into several chunks: store one stream output
        for output in cell.outputs:
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
        cell.outputs = merged
        for output in cell.outputs:
            data = output.get("data")
            if data and WIDGET_MIME in data:
                del data[WIDGET_MIME]
            output.get("metadata", {}).pop(WIDGET_MIME, None)
        if _volatile(cell) and cell.source in old_outputs:
            cell.outputs = old_outputs[cell.source]
        for output in cell.outputs:
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
    parser.add_argument("--refresh-volatile", action="store_true", help="also store new outputs of volatile cells")
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
