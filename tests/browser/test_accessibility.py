"""An automated accessibility audit of every page of the course website: axe-core through Playwright.

axe-core is the copy bundled with the pinned ``axe-playwright-python``; it runs inside headless
Chromium on each built page (served on 127.0.0.1, network blocked as in every browser test) after
MathJax has typeset it, in the theme's light and dark modes. A page fails on any violation axe rates
critical or serious (missing alt text, unnamed links and buttons, text contrast below WCAG AA, ...)
and, whatever their rating, on the rules this course promises explicitly: heading order, link text,
contrast and image alt.
"""

from __future__ import annotations

import pytest
from site_browser import open_site_page

pytestmark = pytest.mark.browser

FAIL_IMPACTS = {"critical", "serious"}
ALWAYS_FAIL = {"heading-order", "link-name", "color-contrast", "image-alt", "empty-heading", "page-has-heading-one"}
AXE_OPTIONS = {
    "resultTypes": ["violations"],
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]},
}


def _describe(violation: dict) -> str:
    nodes = violation["nodes"]
    where = "; ".join(
        f"{' '.join(map(str, node['target']))}: {node.get('failureSummary', '').splitlines()[-1].strip()}"
        for node in nodes[:3]
    )
    return f"[{violation['impact']}] {violation['id']} ({violation['help']}) on {len(nodes)} element(s): {where}"


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_site_page_passes_axe(site_page, mode, site_server, page):
    from axe_playwright_python.sync_playwright import Axe

    # the theme reads the reader's choice from localStorage before it paints
    page.context.add_init_script(f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
    failed = open_site_page(page, site_server, site_page)
    shown = page.evaluate("document.documentElement.dataset.theme")
    assert shown == mode, f"{site_page}: asked for the {mode} mode, the page shows {shown!r}"
    assert not failed, f"{site_page}: requests that failed: {failed}"
    violations = Axe().run(page, options=AXE_OPTIONS).response["violations"]
    serious = [v for v in violations if v["impact"] in FAIL_IMPACTS or v["id"] in ALWAYS_FAIL]
    assert not serious, f"{site_page} ({mode} mode): accessibility violations:\n" + "\n".join(map(_describe, serious))
