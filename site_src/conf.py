"""Sphinx configuration of the course website (built by ``make site``; see ``scripts/build_site.py``).

The site is built from the committed, executed notebooks without running them, offline: every asset
(theme, fonts, icons, search index, MathJax) is a local file under ``site/``, so the folder can be
hosted as static files or opened from disk.
"""

from __future__ import annotations

project = "Attention, from NumPy to a trained seq2seq model"
author = "the course authors"
copyright = "the course authors"  # noqa: A001 (Sphinx's name)
language = "en"

extensions = ["myst_nb"]

# The notebooks are committed executed: show their stored outputs, never run them here.
nb_execution_mode = "off"
nb_merge_streams = True
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
html_css_files = ["course.css"]
html_show_sourcelink = False
html_copy_source = True  # the download button offers each lesson's .ipynb
html_last_updated_fmt = None
html_theme_options = {
    # Nothing that reaches outside the site: no repository, launch (Binder/Colab) or edit buttons.
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
