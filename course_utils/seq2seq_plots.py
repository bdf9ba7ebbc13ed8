"""Lesson-facing names; the code lives in course_utils.reversal.

Kept while lessons 07 and 08 still write ``seq2seq_plots.<name>``: ``course_utils.reversal.plots``.
"""

from __future__ import annotations

from course_utils.reversal.plots import plot_accuracy_by_length

__all__ = ["plot_accuracy_by_length"]
