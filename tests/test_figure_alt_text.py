"""Every figure has a text alternative: what it shows and what to notice (issue 14).

A figure is a code cell with an image output, in a lesson (notebooks/). Its alt text lives in
``docs/figure_alt_text.json`` (keyed by notebook file name and cell id) and is written into the cell's
``metadata.mystnb.image.alt`` by ``scripts/apply_alt_text.py``; myst-nb carries it into the website's
``<img alt>``. These tests refuse a figure without one, a data-file entry that matches no figure, and
check that the script really writes what the site build reads.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _script():
    spec = importlib.util.spec_from_file_location("apply_alt_text", REPO / "scripts" / "apply_alt_text.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


alt = _script()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_figure_cell_has_alt_text(path):
    """Fails until `scripts/apply_alt_text.py` has written the texts into the notebooks."""
    nb = nbformat.read(path, as_version=4)
    lacking = []
    for cell in alt.figure_cells(nb):
        text = str(cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")).strip()
        if len(text) < alt.MIN_ALT_CHARS:
            lacking.append(cell.get("id"))
    assert not lacking, (
        f"{path.name}: figure cells without alt text in metadata.mystnb.image.alt: {lacking}; "
        "write it in docs/figure_alt_text.json, then run .venv/bin/python scripts/apply_alt_text.py"
    )


def test_alt_text_file_covers_exactly_the_figures():
    texts = alt.load_alt_text()
    by_name = {path.name: path for path in NOTEBOOKS}
    unknown = sorted(set(texts) - set(by_name))
    assert not unknown, f"docs/figure_alt_text.json names notebooks that do not exist: {unknown}"
    missing, stale, short = [], [], []
    for name, path in by_name.items():
        figure_ids = {cell.get("id") for cell in alt.figure_cells(nbformat.read(path, as_version=4))}
        given = texts.get(name, {})
        missing += [f"{name} {cell_id}" for cell_id in sorted(figure_ids - set(given))]
        stale += [f"{name} {cell_id}" for cell_id in sorted(set(given) - figure_ids)]
        short += [f"{name} {cell_id}" for cell_id, text in given.items() if len(text.strip()) < alt.MIN_ALT_CHARS]
    assert not missing, f"figures with no alt text in docs/figure_alt_text.json: {missing}"
    assert not stale, f"docs/figure_alt_text.json entries that are not figure cells (cell removed or re-made?): {stale}"
    assert not short, f"alt texts too short to say what the figure shows and what to notice: {short}"


def test_every_alt_text_says_what_to_notice():
    """The takeaway is part of the text alternative, not only the description."""
    without = [
        f"{name} {cell_id}"
        for name, cells in alt.load_alt_text().items()
        for cell_id, text in cells.items()
        if "Notice" not in text
    ]
    assert not without, f"alt texts with no 'Notice: ...' takeaway: {without}"


def test_script_writes_the_metadata_myst_nb_reads(tmp_path):
    """On copies: the script writes metadata.mystnb.image.alt, reports nothing missing, and is idempotent."""
    texts = alt.load_alt_text()
    name = next(iter(texts))
    source = next(path for path in NOTEBOOKS if path.name == name)
    copy = tmp_path / name
    shutil.copy(source, copy)
    nb = nbformat.read(copy, as_version=4)
    for cell in nb.cells:  # start from no alt text at all
        cell.metadata.pop("mystnb", None)
    nbformat.write(nb, copy)

    assert alt.main(["--check", str(copy)]) == 0
    assert all("mystnb" not in cell.metadata for cell in nbformat.read(copy, as_version=4).cells), "--check wrote"
    assert alt.main([str(copy)]) == 0
    written = nbformat.read(copy, as_version=4)
    for cell in alt.figure_cells(written):
        assert cell.metadata["mystnb"]["image"]["alt"] == " ".join(texts[name][cell.id].split())
    before = copy.read_bytes()
    assert alt.main([str(copy)]) == 0
    assert copy.read_bytes() == before, "a second run changed the notebook"


def test_script_reports_a_figure_without_alt_text(tmp_path, capsys):
    source = next(path for path in NOTEBOOKS if alt.figure_cells(nbformat.read(path, as_version=4)))
    copy = tmp_path / source.name
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("mystnb", None)
    nbformat.write(nb, copy)
    empty = tmp_path / "alt.json"
    empty.write_text("{}", encoding="utf-8")
    assert alt.main(["--alt-text", str(empty), str(copy)]) == 1
    first_id = alt.figure_cells(nb)[0].id
    assert f"figure cell {first_id} has no alt text" in capsys.readouterr().out
