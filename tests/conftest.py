"""Every test starts as in a fresh kernel: no earlier check's verdict, handed-back function or prediction try carries over."""

import pytest

from course_utils.checking import handed_back, tries


@pytest.fixture(autouse=True)
def _fresh_check_state():
    handed_back.forget_checks()
    tries.forget()
    yield
    handed_back.forget_checks()
    tries.forget()
