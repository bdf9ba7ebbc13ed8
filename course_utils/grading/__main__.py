"""``python -m course_utils.grading SUBMISSIONS``: see :func:`course_utils.grading.cli.main`."""

import sys

from course_utils.grading.cli import main

sys.exit(main())
