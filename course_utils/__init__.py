"""course_utils: the tested helpers behind the attention course.

Import modules by name so the origin of every helper stays visible in a lesson::

    from course_utils import numpy_attention, masks, attention, checks, env, plotting

Nothing is imported here: ``import course_utils`` has no side effects and does not load torch.
"""

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "numpy_attention",
    "masks",
    "attention",
    "checks",
    "env",
    "plotting",
    "diagrams",
    "efficient",
    "timing",
    "heads",
    "role_task",
    "data",
    "reversal",
    "checking",
    "lessons",
    "explorer",
    "grading",
    "retrieval",
]
