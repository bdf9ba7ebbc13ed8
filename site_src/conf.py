"""Sphinx configuration of the course website (built by ``make site``; see ``scripts/build_site.py``).

The site is built from the committed, executed notebooks without running them, offline: every asset
(theme, fonts, icons, search index, MathJax) is a local file under ``site/``, so the folder can be
hosted as static files or opened from disk.
"""

from __future__ import annotations

import os

project = "Attention, from NumPy to a trained seq2seq model"
author = "the course authors"
copyright = "the course authors"  # noqa: A001 (Sphinx's name)
language = "en"

extensions = ["myst_nb"]

# The notebooks are committed executed: show their stored outputs, never run them here.
nb_execution_mode = "off"
nb_merge_streams = True
# Widgets show their text fallback (the stored notebooks keep no widget state): never load the widget
# manager that myst-nb would otherwise fetch from a CDN.
nb_ipywidgets_js: dict = {}
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "conf.py"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# MathJax 3 from a copy inside the site (scripts/build_site.py copies it into _static/mathjax).
mathjax_path = "mathjax/tex-mml-chtml.js"
# MathJax finds its fonts and extensions next to that script, so nothing is fetched from elsewhere.

html_theme = "sphinx_book_theme"
html_title = "Attention course"
html_static_path = ["_static"]
html_show_sourcelink = False
html_copy_source = True  # the download button offers each lesson's .ipynb
html_last_updated_fmt = None
html_theme_options = {
    # Nothing that reaches outside the site: no repository, launch (Binder/Colab) or edit buttons (the JupyterHub
    # launch button below is added only when a build names a hub).
    "use_download_button": True,
    "use_fullscreen_button": True,
    "use_repository_button": False,
    "use_issues_button": False,
    "use_edit_page_button": False,
    "launch_buttons": {},
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
    "show_navbar_depth": 1,
    "toc_title": "On this page",
}

# The JupyterHub launch button (docs/hub.md), off unless the build names a hub and the published student edition:
#   COURSE_JUPYTERHUB_URL=https://hub.example.edu COURSE_EDITION_REPO=https://github.com/ORG/attention-course make site
# Each lesson page then links to nbgitpuller on that hub, which pulls the edition's branch (COURSE_EDITION_BRANCH,
# default "student", made by `make publish`) into the student's home and opens the lesson: the same link as
# `make pull-link`. Other pages (home, instructor guide) get no button (the edition holds the lessons only).
_HUB_URL = os.environ.get("COURSE_JUPYTERHUB_URL", "").strip()
_EDITION_REPO = os.environ.get("COURSE_EDITION_REPO", "").strip()
if _HUB_URL and _EDITION_REPO:
    html_theme_options.update(
        {
            "repository_url": _EDITION_REPO.rstrip("/"),
            "repository_branch": os.environ.get("COURSE_EDITION_BRANCH", "student"),
            "repository_provider": os.environ.get("COURSE_EDITION_PROVIDER", "github"),
            "path_to_docs": "",
            "launch_buttons": {"jupyterhub_url": _HUB_URL, "notebook_interface": "jupyterlab"},
        }
    )


def _launch_lessons_only(app, pagename, templatename, context, doctree) -> None:
    """Keep the launch button on lesson pages: the student edition holds the lessons, not the guide."""
    if pagename.startswith("notebooks/") or "header_buttons" not in context:
        return
    context["header_buttons"] = [b for b in context["header_buttons"] if b.get("label") != "launch-buttons"]


def _label_toctree_toggles(app, pagename, templatename, context, doctree) -> None:
    """Give the sidebar's expand/collapse toggles an accessible name (axe rule summary-name).

    The theme renders each toggle as a <summary> holding only an icon; a screen reader would announce
    it as an unnamed control. Each one is named after the page whose subpages it shows.
    """
    generate = context.get("generate_toctree_html")
    if generate is None or getattr(generate, "labels_toggles", False):
        return

    def generate_labelled(*args, **kwargs):
        html = generate(*args, **kwargs)
        if isinstance(html, str):
            return html
        for summary in html.select("summary"):
            if summary.get_text(strip=True):
                continue
            item = summary.find_parent("li")
            link = item.find("a") if item is not None else None
            name = link.get_text(" ", strip=True) if link is not None else "this section"
            summary["aria-label"] = f"Show or hide the pages of {name}"
        return html

    generate_labelled.labels_toggles = True
    context["generate_toctree_html"] = generate_labelled


def _visit_hidden_cell(self, node) -> None:
    """myst-nb's toggle for a folded cell (a solution region's "Show solution"), named by its visible prompt.

    myst-nb labels every such <summary> "Toggle hidden content", which hides the prompt from a screen
    reader; without that label the summary's name is its visible text ("Show solution" / "Hide solution").
    """
    from html import escape

    self.body.append(f'<details class="admonition hide {" ".join(node["classes"])}">\n<summary>\n')
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n</summary>\n')


def setup(app):
    # after the theme's own html-page-context handlers (priority 500), which define generate_toctree_html
    app.connect("html-page-context", _label_toctree_toggles, priority=900)
    app.connect("html-page-context", _launch_lessons_only, priority=900)  # after the theme's buttons (501)
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(_visit_hidden_cell, depart_HideCellInput))
