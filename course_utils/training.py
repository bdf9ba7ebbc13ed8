"""Lesson-facing names; the code lives in course_utils.reversal.

Kept while lessons 07 and 08 still write ``training.<name>``; each name is the very object of
``course_utils.reversal.training``.
"""

from __future__ import annotations

from course_utils.reversal.training import (
    RECIPES,
    EvalResult,
    TrainConfig,
    TrainResult,
    evaluate,
    leaky_batch,
    make_optimizer,
    recipe,
    sequence_loss,
    teacher_forced_accuracy,
    train,
    train_step,
)

__all__ = [
    "TrainConfig",
    "RECIPES",
    "recipe",
    "TrainResult",
    "EvalResult",
    "sequence_loss",
    "leaky_batch",
    "make_optimizer",
    "train_step",
    "train",
    "evaluate",
    "teacher_forced_accuracy",
]
