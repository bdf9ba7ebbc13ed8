"""Solutions on the website (scripts/build_site.py, behind `make site`): folded behind "Show solution".

Builds a one-lesson site (the fixture lesson of tests/edition_fixtures.py, the course's own Sphinx
configuration) with the same code `make site` runs, then reads the HTML: every solution region is shown as
the student's stub followed by the complete cell inside a closed <details> whose summary says "Show
solution"; no solution line is outside a toggle; no marker line is anywhere; the stored outputs stay
visible; and the lesson's download is its student edition. (The browser tests render and audit the real
site: tests/browser/test_site.py, test_accessibility.py.)
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import edition_fixtures as fx
import pytest
from bs4 import BeautifulSoup

REPO = Path(__file__).resolve().parents[1]
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
SOLUTION_LINES = {  # one line of each region's solution, as it reads in the instructor edition
    "scale": "return scores / np.sqrt(d_head)",
    "softmax": "shifted = x - x.max(axis=-1, keepdims=True)",
    "sum_rows": "total = total + np.asarray(row, dtype=float)",
    "scaler": "result = x * self.factor",
    "counter": "self.items.append(item)",
    "prediction": "prediction = 10",
}


def _load_build_site():
    spec = importlib.util.spec_from_file_location("course_scripts_build_site", REPO / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


build_site = _load_build_site()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A site built from a clone-like tree holding only the fixture lesson (strict: any Sphinx warning fails)."""
    root = fx.write_site_tree(tmp_path_factory.mktemp("site_repo"), REPO)
    out = root / "site"
    status = build_site.build_site(out, root / "build" / "site_src", strict=True, repo=root)
    assert status == 0, "sphinx-build failed (see its warnings above)"
    return out


@pytest.fixture(scope="module")
def page(site) -> BeautifulSoup:
    return BeautifulSoup((site / "notebooks" / "01_fixture.html").read_text(encoding="utf-8"), "html.parser")


def _toggles(page: BeautifulSoup) -> list:
    return [d for d in page.select("details.hide") if "Show solution" in d.summary.get_text(" ", strip=True)]


def test_each_solution_region_is_folded_behind_a_show_solution_toggle(page):
    toggles = _toggles(page)
    assert len(toggles) == len(SOLUTION_LINES)
    for details, (key, line) in zip(toggles, SOLUTION_LINES.items(), strict=True):
        assert not details.has_attr("open"), f"{key}: the toggle starts open"
        assert line in details.get_text(), f"{key}: the solution is not inside its toggle"
        assert "Hide solution" in details.summary.get_text(" ", strip=True)


def test_no_solution_line_is_visible_outside_a_toggle(page):
    shown = BeautifulSoup(str(page), "html.parser")
    for details in shown.select("details.hide"):
        details.decompose()
    text = shown.get_text()
    assert not [line for line in SOLUTION_LINES.values() if line in text]
    html = str(page)
    assert not [marker for marker in MARKERS if marker in html], "marker lines on the page"


def test_the_stub_comes_first_and_the_stored_outputs_stay_visible(page):
    cells = page.select("div.cell")
    stubs = [i for i, cell in enumerate(cells) if "tag_student-stub" in cell["class"]]
    assert len(stubs) == len(SOLUTION_LINES)
    for i in stubs:
        stub, full = cells[i], cells[i + 1]
        assert not stub.select("details") and not stub.select(".cell_output"), "the stub shows a toggle or output"
        assert full.select("details.hide"), "the cell after a stub is not the folded solution"
    softmax = cells[stubs[1]]
    assert "...  # your code here" in softmax.get_text() and "def softmax_rows(x):" in softmax.get_text()
    assert "prediction = ..." in cells[stubs[-1]].get_text()
    outputs = cells[stubs[1] + 1].select(".cell_output")
    assert outputs and "output of softmax" in outputs[0].get_text(), "the stored output is hidden or gone"
    assert not outputs[0].find_parent("details"), "the output is folded with the solution"


def test_the_lessons_download_is_its_student_edition(site):
    text = (site / "_sources" / "notebooks" / "01_fixture.ipynb").read_text()
    nb = json.loads(text)
    assert "...  # your code here" in text and not [marker for marker in MARKERS if marker in text]
    assert all(cell.get("outputs", []) == [] for cell in nb["cells"])
    assert not [cell for cell in nb["cells"] if cell["id"].endswith("-stub")], "the site's stub cells leaked"


def test_nothing_on_the_page_comes_from_another_machine(page):
    for tag, attribute in (("script", "src"), ("link", "href"), ("img", "src")):
        for element in page.find_all(tag):
            assert not element.get(attribute, "").startswith(("http:", "https:", "//")), element


def test_a_screen_reader_hears_the_prompt(page):
    for details in _toggles(page):
        assert not details.summary.has_attr("aria-label"), "a fixed label hides 'Show solution' from screen readers"
