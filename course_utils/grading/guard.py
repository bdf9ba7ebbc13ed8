"""Text from the sandbox, cut to the student's own: a message that quotes the course's files is left out.

A notebook can read a file of the course (its code, a lesson's solutions) and raise or log its text; the report
must not carry it. :class:`Guard` indexes the course's code (without its string literals: the engine's own
messages are those) and the lessons' cells once per run, as hashes of ``WINDOW``-character stretches taken
every ``STEP`` characters; a message holding a stretch of at least ``WINDOW + STEP - 1`` characters of that
text, which the student's own notebook does not hold, is dropped. Whitespace does not count. Checking a message
costs one hash per character of it (never a search through the course's text).
"""

from __future__ import annotations

import io
import json
import tokenize
from pathlib import Path

from course_utils.grading.records import FOREIGN

__all__ = ["Guard", "squash", "code_without_strings"]


def squash(text: str) -> str:
    """``text`` with every run of whitespace removed (whitespace does not count when comparing)."""
    return "".join(text.split())


def code_without_strings(source: str) -> str:
    """Python source with its string literals and comments blanked: the messages the engine prints are not quotes."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    blank = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.STRING, tokenize.COMMENT) or token.type == getattr(
                tokenize, "FSTRING_MIDDLE", -1
            ):
                (r0, c0), (r1, c1) = token.start, token.end
                blank.append((starts[r0 - 1] + c0, starts[r1 - 1] + c1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    chars = list(source)
    for a, b in blank:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


class Guard:
    """Finds text from the course's files (its code, its lessons) in what a notebook reports."""

    WINDOW, STEP = 32, 8
    MAX_OWN_LOOKUPS = 16  # per message: a stretch found in the course is then looked up in the student's notebook

    def __init__(self, course: Path):
        parts = []
        for path in sorted((course / "course_utils").rglob("*.py")):
            try:
                parts.append(squash(code_without_strings(path.read_text(encoding="utf-8"))))
            except (OSError, UnicodeDecodeError):
                continue
        for path in sorted((course / "notebooks").glob("*.ipynb")):
            try:
                cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            except (OSError, ValueError):
                continue
            for cell in cells:
                source = cell.get("source", "")
                parts.append(squash("".join(source) if isinstance(source, list) else str(source)))
        self.windows = {
            hash(part[start : start + self.WINDOW])
            for part in parts
            for start in range(0, len(part) - self.WINDOW + 1, self.STEP)
        }

    def clean(self, text: str, own: str) -> str:
        """``text``, or :data:`FOREIGN` when it quotes the course and ``own`` (the notebook's code) does not."""
        squashed = squash(text)
        start, lookups = 0, 0
        while start <= len(squashed) - self.WINDOW:
            window = squashed[start : start + self.WINDOW]
            if hash(window) in self.windows:
                lookups += 1
                if lookups > self.MAX_OWN_LOOKUPS or window not in own:
                    return FOREIGN
                start += self.WINDOW  # the student's own text: look further on
                continue
            start += 1
        return text
