"""Write each figure's text alternative from ``docs/figure_alt_text.json`` into the notebooks.

Every code cell with an image output (a figure) needs an alt text saying what the figure shows and
what to notice in it. The texts live in one data file, keyed by notebook file name and cell id (cell
ids are stable across re-execution)::

    {"01_attention_numpy.ipynb": {"962213d1": "Two line plots ... Notice that ..."}}

This script copies each text into the cell's ``metadata.mystnb.image.alt``, where myst-nb reads it
when the course website is built (``make site``), so every ``<img>`` of the site carries it too.
It reports figures that have no alt text and data-file entries that match no figure, and exits with
status 1 if any figure has none.

Usage::

    .venv/bin/python scripts/apply_alt_text.py                 # every notebook in notebooks/
    .venv/bin/python scripts/apply_alt_text.py --check         # report only, write nothing
    .venv/bin/python scripts/apply_alt_text.py path/to/copies/*.ipynb
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat

__all__ = ["ALT_TEXT_FILE", "apply_alt_text", "figure_cells", "load_alt_text", "main"]

REPO = Path(__file__).resolve().parents[1]
ALT_TEXT_FILE = REPO / "docs" / "figure_alt_text.json"
MIN_ALT_CHARS = 40  # a real description plus its takeaway is longer than a caption like "a heatmap"


def figure_cells(nb) -> list:
    """The code cells of `nb` that have at least one image output."""
    return [
        cell
        for cell in nb.cells
        if cell.cell_type == "code"
        and any(any(mime.startswith("image/") for mime in output.get("data", {})) for output in cell.get("outputs", []))
    ]


def load_alt_text(path: Path = ALT_TEXT_FILE) -> dict[str, dict[str, str]]:
    """Read the alt-text data file: {notebook file name: {cell id: alt text}}."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(
            f"alt text file {path} must map notebook names to {{cell id: text}}, got {type(data).__name__}"
        )
    return data


def apply_alt_text(nb, texts: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """Copy `texts` (cell id -> alt text) into the figure cells of `nb`, in place.

    Returns
    -------
    (changed, missing, unused) : lists of cell ids
        changed: figure cells whose alt text was written or replaced; missing: figure cells that
        have no alt text (none in `texts`, none already in the notebook); unused: ids in `texts`
        that are not a figure cell of `nb`.
    """
    changed, missing = [], []
    figure_ids = set()
    for cell in figure_cells(nb):
        cell_id = cell.get("id")
        figure_ids.add(cell_id)
        text = texts.get(cell_id)
        image = cell.metadata.get("mystnb", {}).get("image", {})
        if text is None:
            if len(str(image.get("alt", "")).strip()) < MIN_ALT_CHARS:
                missing.append(cell_id)
            continue
        text = " ".join(text.split())
        if len(text) < MIN_ALT_CHARS:
            missing.append(cell_id)
            continue
        if image.get("alt") != text:
            cell.metadata.setdefault("mystnb", {}).setdefault("image", {})["alt"] = text
            changed.append(cell_id)
    unused = sorted(set(texts) - figure_ids)
    return changed, missing, unused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--alt-text", type=Path, default=ALT_TEXT_FILE, help="the data file (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="report only; write nothing")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((REPO / "notebooks").glob("*.ipynb"))
    all_texts = load_alt_text(args.alt_text)
    problems = 0
    figures = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        figures += len(figure_cells(nb))
        changed, missing, unused = apply_alt_text(nb, all_texts.get(path.name, {}))
        if changed and not args.check:
            nbformat.write(nb, path)
        verb = "would write" if args.check else "wrote"
        if changed:
            print(f"{path.name}: {verb} alt text for {len(changed)} figure(s): {', '.join(changed)}")
        for cell_id in missing:
            print(f"{path.name}: figure cell {cell_id} has no alt text (add it to {args.alt_text.name})")
        for cell_id in unused:
            print(f"{path.name}: {args.alt_text.name} has text for cell {cell_id}, which is not a figure cell")
        problems += len(missing)
    print(f"{figures} figure(s) in {len(paths)} notebook(s); {problems} without alt text")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
