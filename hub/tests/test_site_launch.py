"""The website's JupyterHub launch button: on when a build names a hub, the same link as ``make pull-link``."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from publish_student_edition import pull_link  # noqa: E402

HUB = "https://hub.example.edu"
EDITION = "https://github.com/example-university/attention-course"


def test_lesson_pages_launch_on_the_hub_and_other_pages_do_not(tmp_path):
    env = {**os.environ, "COURSE_JUPYTERHUB_URL": HUB, "COURSE_EDITION_REPO": EDITION}
    out, stage = tmp_path / "site", tmp_path / "build" / "site_src"
    command = [sys.executable, str(REPO / "scripts" / "build_site.py"), "--out", str(out), "--stage", str(stage)]
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=600)
    lessons = sorted((out / "notebooks").glob("[0-9][0-9]_*.html"))
    assert lessons
    for page in lessons:
        links = {html.unescape(u) for u in re.findall(r'href="([^"]*git-pull[^"]*)"', page.read_text(encoding="utf-8"))}
        assert links == {pull_link(HUB, EDITION, lesson=page.name[:2])}, (page.name, links)
    others = [out / "index.html", out / "docs" / "instructor_guide.html"]
    assert all(page.is_file() for page in others)
    for page in others:  # the student edition holds the lessons only
        assert "git-pull" not in page.read_text(encoding="utf-8"), page.name
