"""Shared by the tests of course_utils.reversal: a padded batch of three sequences."""

import pytest

from course_utils import data


@pytest.fixture(scope="module")
def batch():
    return data.collate([data.encode("abcdefg"), data.encode("hij"), data.encode("jihgfedcba")])
