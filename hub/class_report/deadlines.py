"""The course file's deadlines, as the service applies them when a submission arrives.

The service's setting ``course_file`` (``--course-file``, ``$CLASS_REPORT_COURSE_FILE``) names the course file
(``course.toml``, docs/marks.md). For a lesson whose late policy is ``refuse``, a submission received after the due
date (the student's extension and the grace counted) is refused, with a message that says so; under ``penalty``
and ``accept`` late work is kept, and the marks apply the policy when the instructor collects.

The file is read with the course's own reader (``course_utils.marks.course``, standard library only, on the
service's ``PYTHONPATH`` from the same checkout) when the service starts, where a bad file stops it with the
reader's message naming the key, and again whenever the file changes (an extension granted mid-week takes effect
at the next submission); a changed file that is not valid is logged and the last valid one is kept.
"""

from __future__ import annotations

import datetime as dt
import logging
import os

__all__ = ["Deadlines"]

log = logging.getLogger("class_report")


class Deadlines:
    """The due dates and late policies of the course file at ``path``, re-read when it changes."""

    def __init__(self, path: str):
        if not isinstance(path, str | os.PathLike) or not str(path):
            raise TypeError(f"path: expected the course file's path, got {path!r:.80}")
        from course_utils.marks import course as course_file  # the course's reader: one vocabulary, one validation

        self._reader = course_file
        self.path = str(path)
        self._stamp = self._stat()
        self.course = course_file.load(self.path)  # a bad file: CourseFileError naming the key, at start

    def _stat(self):
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def current(self):
        """The course file as it is now (re-read when its time, size or inode changed)."""
        stamp = self._stat()
        if stamp is not None and stamp != self._stamp:
            self._stamp = stamp
            try:
                self.course = self._reader.load(self.path)
                log.info("course file %s re-read", self.path)
            except ValueError as exc:
                log.error("course file %s changed but cannot be used, keeping the last valid one: %s", self.path, exc)
        return self.course

    def refusal(self, student: str, lesson: str, received: dt.datetime) -> str | None:
        """Why a submission of ``lesson`` by ``student`` received at ``received`` is refused, or None (taken)."""
        due = self.current().refused_late(student, lesson, received)
        if due is None:
            return None
        extended = lesson in self.course.extensions.get(student, {})
        whose = "your extended due date" if extended else "its due date"
        return (
            f"lesson {lesson} is closed: {whose} was {due.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC and it was received"
            f" at {received.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC; this lesson takes no late work."
            " Nothing was submitted: ask your instructor (an extension reopens it)"
        )
