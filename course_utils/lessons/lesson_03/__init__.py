"""Lesson 03's content: notebooks/03_*.ipynb's exercises and predictions (``exercises.py``).

Importing this package imports nothing: the registry (:mod:`course_utils.checking.registry`) loads
``exercises.py`` by the id's prefix, and :func:`course_utils.lessons.claims.all_claims` loads ``experiments.py``.
"""
