"""``python -m course_utils.marks``: see :mod:`course_utils.marks.cli`."""

import sys

from course_utils.marks.cli import main

sys.exit(main())
