"""Every test starts as in a fresh kernel: no earlier check's verdict or handed-back function carries over."""

import pytest

from course_utils.exercises import engine


@pytest.fixture(autouse=True)
def _fresh_check_state():
    engine.forget_checks()
    yield
    engine.forget_checks()
