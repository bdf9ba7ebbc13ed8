"""Deprecated alias of :mod:`course_utils.grading.report` (the class report page), kept for ``hub/``.

Import ``from course_utils.grading import report`` instead; this module goes when nothing imports it.
"""

from course_utils.grading.report import STATUS_STYLE, render_html

__all__ = ["STATUS_STYLE", "render_html"]
