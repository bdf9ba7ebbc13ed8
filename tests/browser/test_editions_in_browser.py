"""The student edition in JupyterLab: an explanation tagged `explanation` opens collapsed, and one click opens it.

scripts/editions.py collapses a tagged markdown heading by writing the cell metadata
`"jp-MarkdownHeadingCollapsed": true`, the key JupyterLab 4's MarkdownCell reads when a notebook opens
(packages/cells). Proved here in JupyterLab 4.6 itself: the fixture lesson's student edition
(tests/edition_fixtures.py, written by scripts/workspace.py) opens with the heading shown, the cell under it
hidden and the next section's heading shown; clicking the heading's "2 cells hidden" button shows them.
The control: the same notebook without the metadata key (its cleared instructor edition) shows the cells
from the start. Screenshots: artifacts/browser/edition_collapsed.png and edition_expanded.png.

And the website: the fixture lesson's page (scripts/build_site.py) shows each solution folded; the toggle is
named "Show solution" for a screen reader, opens on a click to show the solution, and the page passes the
same axe-core audit as the course's pages (tests/browser/test_accessibility.py), closed and open, light and
dark. Screenshots: artifacts/browser/site_show_solution_{light,dark}.png.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from lab_server import LabServer
from site_browser import open_site_page

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


# ---- the website's "Show solution" toggle ---------------------------------------------------------------


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    """The fixture lesson's one-page website (scripts/build_site.py), served on 127.0.0.1."""
    spec = importlib.util.spec_from_file_location("course_scripts_build_site", REPO / "scripts" / "build_site.py")
    build_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_site)
    root = fx.write_site_tree(tmp_path_factory.mktemp("fixture_site"), REPO)
    assert build_site.build_site(root / "site", root / "build" / "site_src", strict=True, repo=root) == 0
    handler = functools.partial(_Quiet, directory=str(root / "site"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _violations(page, axe, options: dict, failing: set) -> list[str]:
    """axe-core's violations that fail the course's audit (by impact or by rule), one line each."""
    found = axe().run(page, options=options).response["violations"]
    return [
        f"[{v['impact']}] {v['id']}: {v['help']} ({len(v['nodes'])} element(s), first {v['nodes'][0]['target']})"
        for v in found
        if v["impact"] in failing or v["id"] in failing
    ]


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_show_solution_opens_the_solution_and_passes_axe(chromium_path, fixture_site, page, mode, screenshot_dir):
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import expect
    from test_accessibility import ALWAYS_FAIL, AXE_OPTIONS, FAIL_IMPACTS

    page.context.add_init_script(f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
    failed = open_site_page(page, fixture_site, "notebooks/01_fixture.html")
    assert not failed, f"requests that failed: {failed}"
    summaries = page.locator("details.hide > summary")
    assert summaries.count() == 6
    toggle = summaries.nth(1)  # softmax_rows
    solution = page.get_by_text("shifted = x - x.max(axis=-1, keepdims=True)")
    expect(toggle).to_have_accessible_name("Show solution")
    assert solution.is_hidden() and page.get_by_text("...  # your code here").first.is_visible()
    serious = _violations(page, Axe, AXE_OPTIONS, FAIL_IMPACTS | ALWAYS_FAIL)
    assert not serious, f"accessibility violations, toggles closed: {serious}"
    toggle.click()
    expect(solution).to_be_visible()
    expect(toggle).to_have_accessible_name("Hide solution")
    toggle.scroll_into_view_if_needed()
    page.wait_for_timeout(600)  # myst-nb fades the opened content in over 0.3 s
    page.screenshot(path=screenshot_dir / f"site_show_solution_{mode}.png")
    serious = _violations(page, Axe, AXE_OPTIONS, FAIL_IMPACTS | ALWAYS_FAIL)
    assert not serious, f"accessibility violations, a toggle open: {serious}"
