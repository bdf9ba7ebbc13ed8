"""Shared by the tests of course_utils.reversal: a freshly built model, the same one every call."""

from course_utils import env
from course_utils.reversal import checkpoints


def small(kind: str, **config):
    """``checkpoints.build_model(kind, **config)`` after ``env.set_seed(0)``, in eval mode."""
    env.set_seed(0)
    return checkpoints.build_model(kind, **config).eval()
