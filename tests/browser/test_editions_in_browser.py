"""The student edition in JupyterLab: an explanation tagged `explanation` opens collapsed, and one click opens it.

scripts/editions.py collapses a tagged markdown heading by writing the cell metadata
`"jp-MarkdownHeadingCollapsed": true`, the key JupyterLab 4's MarkdownCell reads when a notebook opens
(packages/cells). Proved here in JupyterLab 4.6 itself: the fixture lesson's student edition
(tests/edition_fixtures.py, written by scripts/workspace.py) opens with the heading shown, the cell under it
hidden and the next section's heading shown; clicking the heading's "1 cell hidden" button shows the cell.
The control: the same notebook without the metadata key (its cleared instructor edition) shows the cell
from the start. Screenshots: artifacts/browser/edition_collapsed.png and edition_expanded.png.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import nbformat
import pytest
from lab_server import LabServer

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import edition_fixtures as fx  # noqa: E402

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
pytestmark = pytest.mark.browser


def _load_workspace_script():
    spec = importlib.util.spec_from_file_location("course_scripts_workspace", REPO / "scripts" / "workspace.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


workspace = _load_workspace_script()


@pytest.fixture(scope="module")
def edition_lab(chromium_path, tmp_path_factory):
    """A JupyterLab server on a my_work/ holding the fixture's student edition and, as the control, its
    instructor edition with outputs cleared (no collapsed-heading key)."""
    base = tmp_path_factory.mktemp("editions_lab")
    (base / "notebooks").mkdir()
    nbformat.write(fx.fixture_lesson(), base / "notebooks" / "01_fixture.ipynb")
    root = base / workspace.WORKSPACE
    (entry,) = workspace.sync(base / "notebooks", root)
    assert entry.action == "created"
    control = workspace.clear_outputs(nbformat.read(base / "notebooks" / "01_fixture.ipynb", as_version=4))
    nbformat.write(nbformat.from_dict(control), root / "control.ipynb")
    server = LabServer(root, base / "lab_state")
    server.start()
    yield server, root
    server.stop()


def _open(page, lab, name: str):
    page.goto(lab.url(f"lab/tree/{name}", reset=""))
    cells = page.locator(f"{PANEL} .jp-Notebook .jp-Cell")
    cells.first.wait_for(timeout=90_000)
    return cells


def _index(path: Path, cell_id: str) -> int:
    return [cell.id for cell in nbformat.read(path, as_version=4).cells].index(cell_id)


def test_a_tagged_explanation_opens_collapsed_and_one_click_opens_it(edition_lab, page, screenshot_dir):
    lab, root = edition_lab
    path = root / "01_fixture.ipynb"
    why, text, more = _index(path, fx.IDS["why"]), _index(path, fx.IDS["why_text"]), _index(path, fx.IDS["why_more"])
    after = _index(path, "fx-using")
    assert (text, more, after) == (why + 1, why + 2, why + 3), "the fixture's explanation is two cells long"
    cells = _open(page, lab, path.name)
    heading = cells.nth(why)
    heading.wait_for(state="visible")
    page.wait_for_function(
        f"() => document.querySelectorAll('{PANEL} .jp-Notebook .jp-Cell').length >= {after + 1}", timeout=30_000
    )
    page.wait_for_timeout(500)  # the collapse is applied once the headings are parsed
    heading.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "edition_collapsed.png")
    assert "jp-MarkdownHeadingCollapsed" in heading.get_attribute("class")
    assert heading.inner_text().startswith("Why: open it once you have predicted")
    assert "4 + 3 + 2 + 1" not in heading.inner_text()
    assert cells.nth(text).is_hidden() and cells.nth(more).is_hidden(), "the explanation is shown"
    assert cells.nth(after).is_visible(), "the next section's heading is hidden too"
    button = heading.locator(".jp-showHiddenCellsButton")
    assert "2 cells hidden" in button.inner_text()
    button.click()
    cells.nth(more).wait_for(state="visible", timeout=10_000)
    page.screenshot(path=screenshot_dir / "edition_expanded.png")
    assert "4 + 3 + 2 + 1" in cells.nth(text).inner_text()
    assert "q_len (q_len + 1) / 2" in cells.nth(more).inner_text()


def test_without_the_key_the_explanation_is_shown(edition_lab, page):
    lab, root = edition_lab
    path = root / "control.ipynb"
    why, more = _index(path, fx.IDS["why"]), _index(path, fx.IDS["why_more"])
    cells = _open(page, lab, path.name)
    cells.nth(more).wait_for(state="visible", timeout=30_000)
    page.wait_for_timeout(500)
    assert cells.nth(more).is_visible() and cells.nth(why).is_visible()
    assert "jp-MarkdownHeadingCollapsed" not in (cells.nth(why).get_attribute("class") or "")
